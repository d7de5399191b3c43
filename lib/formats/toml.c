/* TOML 1.0 parser and document model.
 *
 * One pass over NUL-terminated text (a private copy, or the caller's text
 * with gpuenv_toml_parse_borrowed): strings without escapes are slices of
 * it, everything else is bump-allocated from the document's arena.  Array
 * elements and the keys of inline tables are collected on a scratch stack and
 * copied once into exactly sized blocks; other tables grow by doubling and get
 * a hash index once they hold more than a few keys.  Line and column of every
 * key and value are recorded (columns counted in code points, incrementally,
 * so long lines stay linear; plain byte offsets when the input is ASCII).
 * Most of a parse's cost is the memory of the document itself, so the
 * structures are kept small (24-byte values, 48-byte key/values).
 *
 * TOML's table rules are kept with three flags on each table value:
 * DEFINED (it had a [header]), DOTTED (made or extended by a dotted key) and
 * INLINE (closed for good); see navigate_header and navigate_dotted.
 */
#include "gpuenv/toml.h"

#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#define INDEX_MIN 16 /* tables with more keys than this get a hash index */

struct keypart {
	gpuenv_str_t s;
	uint32_t line, col;
};

static inline uint16_t col16(uint32_t c)
{
	return (uint16_t)(c > GPUENV_TOML_COL_MAX ? GPUENV_TOML_COL_MAX : c);
}

/* Parse-time allocations: a bump pointer over blocks taken from the
 * document's arena, aligned to 8 bytes (the arena aligns every allocation
 * to 16 and is a function call away; small objects dominate a parse).  With
 * bsize 0 every request goes to the arena (the builder functions). */
struct mem {
	gpuenv_arena_t *arena;
	char *bp, *bend;
	size_t bsize;
};

#define MEM_BLOCK_MIN ((size_t)16 << 10)
#define MEM_BLOCK_MAX ((size_t)1 << 20)

static void *mem_alloc_slow(struct mem *m, size_t n)
{
	if (!m->bsize)
		return gpuenv_arena_alloc(m->arena, n);
	size_t sz = m->bsize;
	if (m->bsize < MEM_BLOCK_MAX)
		m->bsize *= 2;
	if (n > sz / 4) /* big ones get their own block */
		return gpuenv_arena_alloc(m->arena, n);
	char *b = gpuenv_arena_alloc(m->arena, sz);
	if (!b)
		return NULL;
	m->bp = b + n;
	m->bend = b + sz;
	return b;
}

static inline void *mem_alloc(struct mem *m, size_t n)
{
	if (n > SIZE_MAX - 8)
		return NULL;
	n = (n + 7) & ~(size_t)7;
	if ((size_t)(m->bend - m->bp) < n)
		return mem_alloc_slow(m, n);
	void *r = m->bp;
	m->bp += n;
	return r;
}

static inline void *mem_calloc(struct mem *m, size_t n)
{
	void *p = mem_alloc(m, n);
	if (p)
		memset(p, 0, n);
	return p;
}

struct parser {
	gpuenv_toml_doc_t *doc;
	gpuenv_ctx_t *ctx;
	const char *base, *p, *end;
	const char *line_start; /* first byte of the current line */
	uint32_t line;
	const char *col_p; /* column cache: col_p is at column col_n */
	uint32_t col_n;
	unsigned max_depth;
	bool ascii; /* the whole input is ASCII: columns are byte offsets */
	gpuenv_toml_table_t *cur; /* table of the current [header] */
	struct keypart *parts;	  /* max_depth + 1 slots */
	unsigned nparts;
	struct mem m;
	/* scratch stack: elements of the arrays and keys of the inline tables
	 * being parsed; each gets an exactly sized copy when it closes */
	void **stack;
	size_t sp, stack_cap;
	gpuenv_toml_table_t *inl; /* innermost open inline table (keys on the stack) */
	size_t inl_base;
	locale_t cloc; /* "C" numeric locale for strtod, made on first use */
};

/* ---- character classes ---- */

enum {
	C_BARE = 1,   /* A-Z a-z 0-9 _ - */
	C_NUMTOK = 2, /* characters of numbers and date/times */
	C_STR = 4,    /* may appear in a basic string as itself */
	C_LIT = 8,    /* may appear in a literal string as itself */
	C_COMMENT = 16,
};

static uint8_t cls[256];

static void init_classes(void)
{
	/* computed on first use; the table is the same every time, so a race
	 * between threads only writes equal bytes */
	if (cls['a'])
		return;
	uint8_t t[256];
	for (int c = 0; c < 256; c++) {
		uint8_t f = 0;
		bool ctrl = (c < 0x20 && c != '\t') || c == 0x7f;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			c == '_' || c == '-')
			f |= C_BARE;
		if ((f & C_BARE) || c == '.' || c == '+' || c == ':')
			f |= C_NUMTOK;
		if (!ctrl && c != '"' && c != '\\')
			f |= C_STR;
		if (!ctrl && c != '\'')
			f |= C_LIT;
		if (!ctrl)
			f |= C_COMMENT;
		t[c] = f;
	}
	memcpy(cls, t, sizeof(t));
}

static inline int hexval(int c)
{
	if (c <= '9')
		return c - '0';
	return (c | 0x20) - 'a' + 10;
}

/* ---- eight bytes at a time ----
 * Exact per-byte tests on a 64-bit word (each flags bit 7 of the bytes that
 * match, with no false positives), used to skip runs of ordinary string
 * bytes and to count UTF-8 continuation bytes for columns. */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
#define LOWS 0x7f7f7f7f7f7f7f7full

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAVE_SWAR 1
#else
#define HAVE_SWAR 0
#endif

static inline uint64_t load8(const char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

static inline uint64_t bytes_eq(uint64_t w, unsigned char c)
{
	uint64_t t = w ^ (ONES * c);
	return ~(((t & LOWS) + LOWS) | t) & HIGHS;
}

/* bytes below 0x20 (controls, tab included) or equal to 0x7f */
static inline uint64_t bytes_ctrl(uint64_t w)
{
	uint64_t lt = ~(((w & LOWS) + ONES * (0x80 - 0x20)) | w) & HIGHS;
	return lt | bytes_eq(w, 0x7f);
}

/* Skip bytes that a basic (quote '"') or literal (quote '\'') string holds
 * as themselves, up to end; stops at the first byte that needs a look. */
static inline const char *skip_plain(const char *q, const char *end, char quote)
{
#if HAVE_SWAR
	while (end - q >= 8) {
		uint64_t w = load8(q);
		uint64_t m = bytes_ctrl(w) | bytes_eq(w, (unsigned char)quote);
		if (quote == '"')
			m |= bytes_eq(w, '\\');
		if (m) {
			q += __builtin_ctzll(m) >> 3;
			if (*q != '\t')
				return q;
			q++;
			continue;
		}
		q += 8;
	}
#endif
	const uint8_t ok = quote == '"' ? C_STR : C_LIT;
	while (cls[(unsigned char)*q] & ok)
		q++;
	return q;
}

static inline uint32_t count_chars(const char *from, const char *to)
{
	uint32_t n = 0;
#if HAVE_SWAR
	while (to - from >= 8) {
		uint64_t w = load8(from);
		/* continuation bytes are 10xxxxxx; the multiply adds up the flags */
		uint64_t m = (w & ~(w << 1) & HIGHS) >> 7;
		n += 8 - (uint32_t)((m * ONES) >> 56);
		from += 8;
	}
#endif
	for (; from < to; from++)
		n += ((unsigned char)*from & 0xc0) != 0x80;
	return n;
}

static uint32_t key_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* Length of the valid UTF-8 prefix of s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF); *ascii says whether s is all ASCII. */
static size_t utf8_check(const char *s, size_t n, bool *ascii)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	*ascii = true;
	while (i < n) {
		/* ASCII runs eight bytes at a time */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		unsigned c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		*ascii = false;
		size_t need;
		unsigned lo = 0x80, hi = 0xbf;
		if (c >= 0xc2 && c <= 0xdf)
			need = 1;
		else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
		} else
			return i;
		if (n - i <= need)
			return i;
		if (p[i + 1] < lo || p[i + 1] > hi)
			return i;
		for (size_t k = 2; k <= need; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return i;
		i += need + 1;
	}
	return n;
}

static size_t utf8_valid(const char *s, size_t n)
{
	bool ascii;
	return utf8_check(s, n, &ascii);
}

/* ---- positions and errors ---- */

/* Line and column of at, counted from the start (for errors on earlier
 * lines, inside multi-line strings). */
static void pos_scan(const struct parser *ps, const char *at, uint32_t *line, uint32_t *col)
{
	const char *ls = ps->base;
	uint32_t l = 1;
	for (const char *q = ps->base; q < at; q++) {
		if (*q == '\n') {
			l++;
			ls = q + 1;
		}
	}
	*line = l;
	*col = 1 + count_chars(ls, at);
}

static void pos_at(struct parser *ps, const char *at, uint32_t *line, uint32_t *col)
{
	if (at > ps->end)
		at = ps->end;
	if (at < ps->line_start) {
		pos_scan(ps, at, line, col);
		return;
	}
	if (ps->ascii) {
		*line = ps->line;
		*col = (uint32_t)(at - ps->line_start) + 1;
		return;
	}
	const char *from = ps->line_start;
	uint32_t n = 1;
	if (ps->col_p >= ps->line_start && ps->col_p <= at) {
		from = ps->col_p;
		n = ps->col_n;
	}
	n += count_chars(from, at);
	ps->col_p = at;
	ps->col_n = n;
	*line = ps->line;
	*col = n;
}

/* for stored positions: the column saturates at GPUENV_TOML_COL_MAX */
static inline void pos_at16(struct parser *ps, const char *at, uint32_t *line, uint16_t *col)
{
	uint32_t c;
	pos_at(ps, at, line, &c);
	*col = col16(c);
}

static int perr(struct parser *ps, const char *at, int code, const char *fmt, ...)
	GPUENV_PRINTF(4, 5);

static int perr(struct parser *ps, const char *at, int code, const char *fmt, ...)
{
	char msg[400];
	uint32_t line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pos_at(ps, at, &line, &col);
	return gpuenv_fail(ps->ctx, code, ps->doc->file, line, col, "%s", msg);
}

/* A short description of the byte at q for messages. */
static const char *describe(struct parser *ps, const char *q, char *buf, size_t n)
{
	unsigned char c = (unsigned char)*q;

	if (q >= ps->end)
		return "end of file";
	if (c == '\n' || (c == '\r' && q[1] == '\n'))
		return "end of line";
	if (c >= 0x20 && c < 0x7f) {
		snprintf(buf, n, "'%c'", c);
		return buf;
	}
	if (c >= 0x80) {
		/* the whole character (input is valid UTF-8 here) */
		size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		snprintf(buf, n, "'%.*s'", (int)len, q);
		return buf;
	}
	snprintf(buf, n, "control character U+%04X", c);
	return buf;
}

static int unexpected(struct parser *ps, const char *q, const char *expected)
{
	char b[32];
	return perr(ps, q, GPUENV_ESYNTAX, "unexpected %s; expected %s",
		describe(ps, q, b, sizeof(b)), expected);
}

/* ---- tables and arrays ---- */

static gpuenv_toml_table_t *table_new(struct mem *m, uint32_t depth)
{
	gpuenv_toml_table_t *t = mem_calloc(m, sizeof(*t));
	if (t)
		t->depth = depth;
	return t;
}

static gpuenv_toml_kv_t *find_h(const gpuenv_toml_table_t *t, const char *key, size_t len)
{
	if (t->index) {
		uint32_t mask = t->index_cap - 1, i = key_hash(key, len) & mask, slot;
		while ((slot = t->index[i]) != 0) {
			gpuenv_toml_kv_t *kv = t->items[slot - 1];
			if (kv->key.len == len && (len == 0 || memcmp(kv->key.ptr, key, len) == 0))
				return kv;
			i = (i + 1) & mask;
		}
		return NULL;
	}
	for (uint32_t i = 0; i < t->len; i++) {
		gpuenv_toml_kv_t *kv = t->items[i];
		if (kv->key.len == len && (len == 0 || memcmp(kv->key.ptr, key, len) == 0))
			return kv;
	}
	return NULL;
}

static void index_put(gpuenv_toml_table_t *t, uint32_t h, uint32_t slot)
{
	uint32_t mask = t->index_cap - 1, i = h & mask;
	while (t->index[i])
		i = (i + 1) & mask;
	t->index[i] = slot;
}

/* Append kv (its key not yet in t).  0 or -ENOMEM. */
static int insert(struct mem *a, gpuenv_toml_table_t *t, gpuenv_toml_kv_t *kv)
{
	if (t->len == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 4;
		if (t->cap > UINT32_MAX / 4)
			return -ENOMEM;
		gpuenv_toml_kv_t **n = mem_alloc(a, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		if (t->len)
			memcpy(n, t->items, t->len * sizeof(*n));
		t->items = n;
		t->cap = ncap;
	}
	t->items[t->len++] = kv;
	if (t->len > INDEX_MIN) {
		if (!t->index || t->len * 2 > t->index_cap) {
			uint32_t ncap = 32;
			while (ncap < t->len * 4)
				ncap *= 2;
			uint32_t *idx = mem_calloc(a, ncap * sizeof(*idx));
			if (!idx) {
				t->len--;
				return -ENOMEM;
			}
			t->index = idx;
			t->index_cap = ncap;
			for (uint32_t i = 0; i < t->len; i++)
				index_put(t, key_hash(t->items[i]->key.ptr, t->items[i]->key.len), i + 1);
		} else {
			index_put(t, key_hash(kv->key.ptr, kv->key.len), t->len);
		}
	}
	return 0;
}

static int push(struct mem *a, gpuenv_toml_array_t *arr, gpuenv_toml_value_t *v)
{
	if (arr->len == arr->cap) {
		if (arr->cap > UINT32_MAX / 4)
			return -ENOMEM;
		uint32_t ncap = arr->cap ? arr->cap * 2 : 4;
		gpuenv_toml_value_t **n = mem_alloc(a, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		if (arr->len)
			memcpy(n, arr->items, arr->len * sizeof(*n));
		arr->items = n;
		arr->cap = ncap;
	}
	arr->items[arr->len++] = v;
	return 0;
}

/* ---- whitespace, newlines, comments ---- */

static inline void skip_ws(struct parser *ps)
{
	const char *p = ps->p;
	while (*p == ' ' || *p == '\t')
		p++;
	ps->p = p;
}

static inline void newline_at(struct parser *ps, const char *after)
{
	ps->line++;
	ps->line_start = after;
}

/* At '#': skip to the end of the line (not past the newline). */
static int skip_comment(struct parser *ps)
{
	const char *p = ps->p + 1;

	for (;;) {
		while (cls[(unsigned char)*p] & C_COMMENT)
			p++;
		if (p >= ps->end || *p == '\n' || (*p == '\r' && p[1] == '\n'))
			break;
		char b[40];
		return perr(ps, p, GPUENV_ESYNTAX, "%s is not allowed in a comment",
			describe(ps, p, b, sizeof(b)));
	}
	ps->p = p;
	return 0;
}

/* Consume one newline if there is one; true when it did. */
static inline bool eat_newline(struct parser *ps)
{
	const char *p = ps->p;
	if (*p == '\n') {
		ps->p = p + 1;
		newline_at(ps, p + 1);
		return true;
	}
	if (*p == '\r' && p[1] == '\n') {
		ps->p = p + 2;
		newline_at(ps, p + 2);
		return true;
	}
	return false;
}

/* Whitespace, newlines and comments (inside arrays). */
static int skip_blank(struct parser *ps)
{
	for (;;) {
		skip_ws(ps);
		if (*ps->p == '#') {
			int r = skip_comment(ps);
			if (r)
				return r;
		}
		if (!eat_newline(ps))
			return 0;
	}
}

/* After a statement: optional whitespace and comment, then a newline or the
 * end of the input. */
static int end_of_line(struct parser *ps, const char *what)
{
	skip_ws(ps);
	if (*ps->p == '#') {
		int r = skip_comment(ps);
		if (r)
			return r;
	}
	if (ps->p >= ps->end || eat_newline(ps))
		return 0;
	char b[64];
	snprintf(b, sizeof(b), "a newline after %s", what);
	return unexpected(ps, ps->p, b);
}

/* ---- strings ---- */

static int utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decode [s, e) of a basic string (escapes; for multi-line strings also
 * line-ending backslashes and CRLF -> LF) into the arena. */
static int decode_basic(struct parser *ps, const char *s, const char *e, bool multi,
	gpuenv_str_t *out)
{
	char *o = mem_alloc(&ps->m, (size_t)(e - s) + 1);
	size_t n = 0;

	if (!o)
		return gpuenv_oom(ps->ctx, "parsing TOML");
	for (const char *q = s; q < e;) {
		char c = *q;
		if (c == '\r' && multi) { /* validated: followed by \n */
			q++;
			continue;
		}
		if (c != '\\') {
			o[n++] = c;
			q++;
			continue;
		}
		const char *esc = q++;
		c = *q;
		switch (c) {
		case 'b': o[n++] = '\b'; q++; break;
		case 't': o[n++] = '\t'; q++; break;
		case 'n': o[n++] = '\n'; q++; break;
		case 'f': o[n++] = '\f'; q++; break;
		case 'r': o[n++] = '\r'; q++; break;
		case '"': o[n++] = '"'; q++; break;
		case '\\': o[n++] = '\\'; q++; break;
		case 'u':
		case 'U': {
			int len = c == 'u' ? 4 : 8;
			uint32_t cp = 0;
			q++;
			for (int i = 0; i < len; i++) {
				if (q + i >= e || !gpuenv_is_xdigit(q[i]))
					return perr(ps, esc, GPUENV_ESYNTAX,
						"\\%c needs %d hex digits", c, len);
				cp = (cp << 4) | (uint32_t)hexval(q[i]);
			}
			if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
				return perr(ps, esc, GPUENV_ESYNTAX,
					"\\%c%.*s is not a Unicode scalar value", c, len, q);
			q += len;
			n += (size_t)utf8_put(o + n, cp);
			break;
		}
		default: {
			/* a line-ending backslash: whitespace, newline, then every
			 * whitespace and newline up to the next character goes */
			const char *w = q;
			while (multi && w < e && (*w == ' ' || *w == '\t'))
				w++;
			if (multi && w < e && (*w == '\n' || *w == '\r')) {
				while (w < e && (*w == ' ' || *w == '\t' || *w == '\n' || *w == '\r'))
					w++;
				q = w;
				break;
			}
			char b[40];
			if (q >= e)
				return perr(ps, esc, GPUENV_ESYNTAX, "unfinished escape sequence");
			return perr(ps, esc, GPUENV_ESYNTAX,
				"invalid escape sequence '\\' followed by %s%s",
				describe(ps, q, b, sizeof(b)),
				c == 'e' || c == 'x' ? " (\\e and \\x are TOML 1.1, not 1.0)" : "");
		}
		}
	}
	o[n] = '\0';
	*out = (gpuenv_str_t){ o, n };
	return 0;
}

static int bad_in_string(struct parser *ps, const char *q, const char *open)
{
	char b[40];

	if (q >= ps->end || *q == '\\')
		return perr(ps, open, GPUENV_ESYNTAX, "unterminated string");
	if (*q == '\n' || *q == '\r')
		return perr(ps, q, GPUENV_ESYNTAX,
			"newline in a single-line string (use \"\"\" for multi-line strings)");
	return perr(ps, q, GPUENV_ESYNTAX, "%s must be escaped in a string",
		describe(ps, q, b, sizeof(b)));
}

/* At '"' (not '"""'). */
static int parse_basic(struct parser *ps, gpuenv_str_t *out)
{
	const char *open = ps->p, *s = open + 1, *q = s;
	bool esc = false;

	for (;;) {
		q = skip_plain(q, ps->end, '"');
		if (*q == '"')
			break;
		if (*q == '\\' && q + 1 < ps->end) {
			esc = true;
			/* skip the escaped character when it could end the string;
			 * anything else is checked by decode_basic */
			q += (q[1] == '"' || q[1] == '\\') ? 2 : 1;
			continue;
		}
		return bad_in_string(ps, q, open);
	}
	ps->p = q + 1;
	if (!esc) {
		*out = (gpuenv_str_t){ s, (size_t)(q - s) };
		return 0;
	}
	return decode_basic(ps, s, q, false, out);
}

/* At "'" (not "'''"). */
static int parse_literal(struct parser *ps, gpuenv_str_t *out)
{
	const char *open = ps->p, *s = open + 1;
	const char *q = skip_plain(s, ps->end, '\'');

	if (*q != '\'')
		return bad_in_string(ps, q, open);
	ps->p = q + 1;
	*out = (gpuenv_str_t){ s, (size_t)(q - s) };
	return 0;
}

/* At '"""' or "'''". */
static int parse_multi(struct parser *ps, gpuenv_str_t *out)
{
	const char *open = ps->p;
	const char quote = *open;
	const char *q = open + 3, *s, *e;
	bool copy = false;

	ps->p = q;
	if (eat_newline(ps)) /* a newline right after the opening is trimmed */
		q = ps->p;
	s = q;
	for (;;) {
		q = skip_plain(q, ps->end, quote);
		char c = *q;
		if (c == quote) {
			if (q[1] == quote && q[2] == quote) {
				/* up to two more quotes belong to the content */
				size_t run = 3;
				while (q[run] == quote)
					run++;
				if (run > 5)
					return perr(ps, q + 5, GPUENV_ESYNTAX,
						"too many quotes at the end of a multi-line string");
				e = q + run - 3;
				ps->p = q + run;
				break;
			}
			q++;
			continue;
		}
		if (c == '\\' && quote == '"' && q + 1 < ps->end) {
			copy = true;
			q += (q[1] == '"' || q[1] == '\\') ? 2 : 1;
			continue;
		}
		if (c == '\n') {
			newline_at(ps, ++q);
			continue;
		}
		if (c == '\r' && q[1] == '\n') {
			copy = true; /* CRLF becomes LF */
			q += 2;
			newline_at(ps, q);
			continue;
		}
		if (q >= ps->end)
			return perr(ps, open, GPUENV_ESYNTAX, "unterminated multi-line string");
		char b[40];
		return perr(ps, q, GPUENV_ESYNTAX, "%s must be escaped in a string",
			describe(ps, q, b, sizeof(b)));
	}
	if (!copy) {
		*out = (gpuenv_str_t){ s, (size_t)(e - s) };
		return 0;
	}
	if (quote == '"')
		return decode_basic(ps, s, e, true, out);
	/* a literal string with CRLF: drop the CRs */
	char *o = mem_alloc(&ps->m, (size_t)(e - s) + 1);
	size_t n = 0;
	if (!o)
		return gpuenv_oom(ps->ctx, "parsing TOML");
	for (const char *k = s; k < e; k++)
		if (*k != '\r')
			o[n++] = *k;
	o[n] = '\0';
	*out = (gpuenv_str_t){ o, n };
	return 0;
}

/* ---- keys ---- */

/* key = simple-key *( ws '.' ws simple-key ), into ps->parts. */
static int parse_key(struct parser *ps)
{
	ps->nparts = 0;
	for (;;) {
		struct keypart kp;
		const char *q = ps->p;
		int r;

		pos_at(ps, q, &kp.line, &kp.col);
		if (cls[(unsigned char)*q] & C_BARE) {
			const char *s = q;
			while (cls[(unsigned char)*q] & C_BARE)
				q++;
			kp.s = (gpuenv_str_t){ s, (size_t)(q - s) };
			ps->p = q;
		} else if (*q == '"') {
			if (q[1] == '"' && q[2] == '"')
				return perr(ps, q, GPUENV_ESYNTAX,
					"a multi-line string cannot be a key");
			if ((r = parse_basic(ps, &kp.s)))
				return r;
		} else if (*q == '\'') {
			if (q[1] == '\'' && q[2] == '\'')
				return perr(ps, q, GPUENV_ESYNTAX,
					"a multi-line string cannot be a key");
			if ((r = parse_literal(ps, &kp.s)))
				return r;
		} else {
			if (ps->nparts)
				return unexpected(ps, q, "a key after '.'");
			return unexpected(ps, q, "a key");
		}
		if (ps->nparts > ps->max_depth)
			return perr(ps, q, GPUENV_ETOOBIG, "key has more than %u parts",
				ps->max_depth);
		ps->parts[ps->nparts++] = kp;
		skip_ws(ps);
		if (*ps->p != '.')
			return 0;
		ps->p++;
		skip_ws(ps);
	}
}

static void key_text(const struct keypart *kp, char *buf, size_t n)
{
	/* keys in messages: at most 60 bytes, control characters as '?' */
	size_t len = kp->s.len > 60 ? 60 : kp->s.len, o = 0;
	for (size_t i = 0; i < len && o + 1 < n; i++) {
		unsigned char c = (unsigned char)kp->s.ptr[i];
		buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (len < kp->s.len && o + 4 < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o < n ? o : n - 1] = '\0';
}

static int stack_push(struct parser *ps, void *p);

/* Add kv to t: the open inline table keeps its keys on the scratch stack
 * (no growing copies for the many small inline tables of a lock file). */
static int tinsert(struct parser *ps, gpuenv_toml_table_t *t, gpuenv_toml_kv_t *kv)
{
	if (t != ps->inl)
		return insert(&ps->m, t, kv) ? gpuenv_oom(ps->ctx, "parsing TOML") : 0;
	int r = stack_push(ps, kv);
	if (r)
		return r;
	t->items = (gpuenv_toml_kv_t **)(ps->stack + ps->inl_base);
	t->len++;
	t->cap = t->len;
	if (t->len > INDEX_MIN && (!t->index || t->len * 2 > t->index_cap)) {
		uint32_t ncap = 32;
		while (ncap < t->len * 4)
			ncap *= 2;
		uint32_t *idx = mem_calloc(&ps->m, ncap * sizeof(*idx));
		if (!idx)
			return gpuenv_oom(ps->ctx, "parsing TOML");
		t->index = idx;
		t->index_cap = ncap;
		for (uint32_t i = 0; i < t->len; i++)
			index_put(t, key_hash(t->items[i]->key.ptr, t->items[i]->key.len), i + 1);
	} else if (t->index) {
		index_put(t, key_hash(kv->key.ptr, kv->key.len), t->len);
	}
	return 0;
}

static gpuenv_toml_kv_t *new_kv(struct parser *ps, const struct keypart *kp)
{
	gpuenv_toml_kv_t *kv = mem_alloc(&ps->m, sizeof(*kv));
	if (!kv)
		return NULL;
	kv->key = kp->s;
	kv->line = kp->line;
	kv->col = col16(kp->col);
	memset(&kv->val, 0, sizeof(kv->val));
	return kv;
}

/* A new table for key part kp in t; *out is the new table. */
static int add_table(struct parser *ps, gpuenv_toml_table_t *t, const struct keypart *kp,
	unsigned flags, gpuenv_toml_table_t **out)
{
	if (t->depth + 1 > ps->max_depth)
		return perr(ps, ps->p, GPUENV_ETOOBIG, "tables nested deeper than %u",
			ps->max_depth);
	gpuenv_toml_kv_t *kv = new_kv(ps, kp);
	gpuenv_toml_table_t *n = table_new(&ps->m, t->depth + 1);
	int r;
	if (!kv || !n)
		return gpuenv_oom(ps->ctx, "parsing TOML");
	if ((r = tinsert(ps, t, kv)))
		return r;
	n->line = kp->line;
	n->col = kp->col;
	kv->val.type = GPUENV_TOML_TABLE;
	kv->val.flags = (uint8_t)flags;
	kv->val.line = kp->line;
	kv->val.col = col16(kp->col);
	kv->val.u.tab = n;
	*out = n;
	return 0;
}

static int redefined(struct parser *ps, const struct keypart *kp, const gpuenv_toml_kv_t *kv,
	const char *what)
{
	char k[80];
	key_text(kp, k, sizeof(k));
	int r = gpuenv_fail(ps->ctx, GPUENV_EDUPLICATE, ps->doc->file, kp->line, kp->col,
		"%s '%s': already defined at line %u as %s", what, k, (unsigned)kv->line,
		kv->val.type == GPUENV_TOML_TABLE ?
			(kv->val.flags & GPUENV_TOML_INLINE ? "an inline table" : "a table") :
		kv->val.type == GPUENV_TOML_ARRAY ?
			(kv->val.flags & GPUENV_TOML_AOT ? "an array of tables" : "an array") :
			gpuenv_toml_type_name(kv->val.type));
	return r;
}

/* [a.b.c] or [[a.b.c]]: walk to (and make) the table the section fills. */
static int navigate_header(struct parser *ps, bool aot, gpuenv_toml_table_t **out)
{
	gpuenv_toml_table_t *t = ps->doc->root;
	struct mem *a = &ps->m;
	int r;

	for (unsigned i = 0; i + 1 < ps->nparts; i++) {
		const struct keypart *kp = &ps->parts[i];
		gpuenv_toml_kv_t *kv = find_h(t, kp->s.ptr, kp->s.len);
		if (!kv) {
			/* implicitly created: it may get its own header later */
			if ((r = add_table(ps, t, kp, 0, &t)))
				return r;
			continue;
		}
		gpuenv_toml_value_t *v = &kv->val;
		if (v->type == GPUENV_TOML_TABLE && !(v->flags & GPUENV_TOML_INLINE)) {
			t = v->u.tab;
		} else if (v->type == GPUENV_TOML_ARRAY && (v->flags & GPUENV_TOML_AOT)) {
			/* [[a]] then [a.b]: b goes into the last a */
			t = v->u.arr->items[v->u.arr->len - 1]->u.tab;
		} else {
			return redefined(ps, kp, kv, "cannot add to");
		}
	}
	const struct keypart *kp = &ps->parts[ps->nparts - 1];
	gpuenv_toml_kv_t *kv = find_h(t, kp->s.ptr, kp->s.len);
	if (!aot) {
		if (!kv)
			return add_table(ps, t, kp, GPUENV_TOML_DEFINED, out);
		gpuenv_toml_value_t *v = &kv->val;
		if (v->type != GPUENV_TOML_TABLE ||
			(v->flags & (GPUENV_TOML_INLINE | GPUENV_TOML_DEFINED | GPUENV_TOML_DOTTED)))
			return redefined(ps, kp, kv, "cannot define table");
		/* made implicitly by an earlier [a.b.c]: now it is defined */
		v->flags |= GPUENV_TOML_DEFINED;
		v->line = kp->line;
		v->col = col16(kp->col);
		v->u.tab->line = kp->line;
		v->u.tab->col = kp->col;
		*out = v->u.tab;
		return 0;
	}
	gpuenv_toml_array_t *arr;
	if (!kv) {
		if (t->depth + 2 > ps->max_depth)
			return perr(ps, ps->p, GPUENV_ETOOBIG, "tables nested deeper than %u",
				ps->max_depth);
		kv = new_kv(ps, kp);
		arr = mem_calloc(a, sizeof(*arr));
		if (!kv || !arr || insert(a, t, kv))
			return gpuenv_oom(ps->ctx, "parsing TOML");
		arr->depth = t->depth + 1;
		kv->val.type = GPUENV_TOML_ARRAY;
		kv->val.flags = GPUENV_TOML_AOT;
		kv->val.line = kp->line;
		kv->val.col = col16(kp->col);
		kv->val.u.arr = arr;
	} else if (kv->val.type == GPUENV_TOML_ARRAY && (kv->val.flags & GPUENV_TOML_AOT)) {
		arr = kv->val.u.arr;
	} else {
		return redefined(ps, kp, kv, "cannot define array of tables");
	}
	gpuenv_toml_value_t *el = mem_calloc(a, sizeof(*el));
	gpuenv_toml_table_t *n = table_new(a, arr->depth + 1);
	if (!el || !n || push(a, arr, el))
		return gpuenv_oom(ps->ctx, "parsing TOML");
	el->type = GPUENV_TOML_TABLE;
	el->flags = GPUENV_TOML_DEFINED;
	el->line = n->line = kp->line;
	el->col = col16(kp->col);
	n->col = kp->col;
	el->u.tab = n;
	*out = n;
	return 0;
}

/* a.b.c = ...: walk from t to the table that gets the last part, making
 * tables for the dotted parts; fails if the last key exists. */
static int navigate_dotted(struct parser *ps, gpuenv_toml_table_t *t, gpuenv_toml_table_t **out)
{
	int r;

	for (unsigned i = 0; i + 1 < ps->nparts; i++) {
		const struct keypart *kp = &ps->parts[i];
		gpuenv_toml_kv_t *kv = find_h(t, kp->s.ptr, kp->s.len);
		if (!kv) {
			if ((r = add_table(ps, t, kp, GPUENV_TOML_DOTTED, &t)))
				return r;
			continue;
		}
		gpuenv_toml_value_t *v = &kv->val;
		/* dotted keys may extend tables they made themselves or tables made
		 * implicitly by a header, never a [defined] or inline one */
		if (v->type != GPUENV_TOML_TABLE ||
			(v->flags & (GPUENV_TOML_INLINE | GPUENV_TOML_DEFINED)))
			return redefined(ps, kp, kv, "cannot add to");
		v->flags |= GPUENV_TOML_DOTTED;
		t = v->u.tab;
	}
	const struct keypart *kp = &ps->parts[ps->nparts - 1];
	gpuenv_toml_kv_t *kv = find_h(t, kp->s.ptr, kp->s.len);
	if (kv)
		return redefined(ps, kp, kv, "duplicate key");
	*out = t;
	return 0;
}

/* ---- numbers and date/times ---- */

static int parse_datetime_tok(struct parser *ps, const char *s, size_t n,
	gpuenv_toml_value_t *v)
{
	gpuenv_toml_datetime_t dt;
	int type = gpuenv_toml_datetime_parse((gpuenv_str_t){ s, n }, &dt);
	if (type < 0)
		return perr(ps, s, GPUENV_ESYNTAX, "invalid date/time '%.*s'",
			(int)(n > 60 ? 60 : n), s);
	v->type = (uint8_t)type;
	v->u.str = (gpuenv_str_t){ s, n };
	return 0;
}

/* digits with single '_' between digits; dig tells which digits */
static const char *scan_digits(const char *q, const char *e, bool (*dig)(int))
{
	if (q >= e || !dig((unsigned char)*q))
		return NULL;
	while (q < e) {
		if (dig((unsigned char)*q))
			q++;
		else if (*q == '_' && q + 1 < e && dig((unsigned char)q[1]))
			q += 2;
		else
			break;
	}
	return q;
}

static bool dig10(int c)
{
	return gpuenv_is_digit(c);
}

static bool dig16(int c)
{
	return gpuenv_is_xdigit(c);
}

static bool dig8(int c)
{
	return c >= '0' && c <= '7';
}

static bool dig2(int c)
{
	return c == '0' || c == '1';
}

static int parse_float_text(struct parser *ps, const char *s, const char *e,
	gpuenv_toml_value_t *v)
{
	char small[128], *buf = small;
	size_t n = 0, len = (size_t)(e - s);

	if (len >= sizeof(small)) {
		buf = mem_alloc(&ps->m, len + 1);
		if (!buf)
			return gpuenv_oom(ps->ctx, "parsing TOML");
	}
	for (const char *q = s; q < e; q++)
		if (*q != '_')
			buf[n++] = *q;
	buf[n] = '\0';
	if (!ps->cloc) {
		ps->cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
		if (!ps->cloc)
			return gpuenv_oom(ps->ctx, "parsing TOML");
	}
	locale_t old = uselocale(ps->cloc);
	char *endp;
	double d = strtod(buf, &endp);
	uselocale(old);
	if (endp != buf + n)
		return perr(ps, s, GPUENV_ESYNTAX, "invalid float");
	v->type = GPUENV_TOML_FLOAT;
	v->u.f = d;
	return 0;
}

/* A number or date/time token [s, e): classify and check it strictly. */
static int parse_number(struct parser *ps, const char *s, const char *e, gpuenv_toml_value_t *v)
{
	const char *q = s;
	size_t len = (size_t)(e - s);
	bool neg = false;

	if (len >= 5 && gpuenv_is_digit(s[0]) && gpuenv_is_digit(s[1]) && gpuenv_is_digit(s[2]) && gpuenv_is_digit(s[3]) &&
		s[4] == '-')
		return parse_datetime_tok(ps, s, len, v);
	if (len >= 3 && gpuenv_is_digit(s[0]) && gpuenv_is_digit(s[1]) && s[2] == ':')
		return parse_datetime_tok(ps, s, len, v);
	if (*q == '+' || *q == '-') {
		neg = *q == '-';
		q++;
	}
	if (e - q == 3 && (memcmp(q, "inf", 3) == 0 || memcmp(q, "nan", 3) == 0)) {
		v->type = GPUENV_TOML_FLOAT;
		if (q[0] == 'i')
			v->u.f = neg ? -__builtin_inf() : __builtin_inf();
		else
			v->u.f = neg ? -__builtin_nan("") : __builtin_nan("");
		return 0;
	}
	if (q == s && e - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'o' || q[1] == 'b')) {
		int base = q[1] == 'x' ? 16 : q[1] == 'o' ? 8 : 2;
		bool (*dig)(int) = base == 16 ? dig16 : base == 8 ? dig8 : dig2;
		const char *d = q + 2, *de = scan_digits(d, e, dig);
		if (!de || de != e)
			return perr(ps, s, GPUENV_ESYNTAX, "invalid %s integer '%.*s'",
				base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary",
				(int)(len > 40 ? 40 : len), s);
		uint64_t acc = 0;
		for (; d < e; d++) {
			if (*d == '_')
				continue;
			unsigned dv = (unsigned)hexval(*d);
			if (acc > ((uint64_t)INT64_MAX - dv) / (unsigned)base)
				return perr(ps, s, GPUENV_ESYNTAX,
					"integer does not fit in 64 bits (max 9223372036854775807)");
			acc = acc * (unsigned)base + dv;
		}
		v->type = GPUENV_TOML_INTEGER;
		v->u.i = (int64_t)acc;
		return 0;
	}
	/* decimal: integer part without leading zeros */
	const char *ie = scan_digits(q, e, dig10);
	if (!ie)
		goto bad;
	if (q[0] == '0' && ie - q > 1)
		return perr(ps, s, GPUENV_ESYNTAX, "leading zeros are not allowed in '%.*s'",
			(int)(len > 40 ? 40 : len), s);
	if (ie == e) {
		uint64_t acc = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		for (const char *d = q; d < e; d++) {
			if (*d == '_')
				continue;
			unsigned dv = (unsigned)(*d - '0');
			if (acc > (lim - dv) / 10)
				return perr(ps, s, GPUENV_ESYNTAX,
					"integer does not fit in 64 bits (%s)",
					neg ? "min -9223372036854775808" : "max 9223372036854775807");
			acc = acc * 10 + dv;
		}
		v->type = GPUENV_TOML_INTEGER;
		v->u.i = neg ? -(int64_t)(acc - 1) - 1 : (int64_t)acc;
		if (acc == 0)
			v->u.i = 0;
		return 0;
	}
	const char *f = ie;
	if (*f == '.') {
		f = scan_digits(f + 1, e, dig10);
		if (!f)
			goto bad;
	}
	if (f < e && (*f == 'e' || *f == 'E')) {
		f++;
		if (f < e && (*f == '+' || *f == '-'))
			f++;
		f = scan_digits(f, e, dig10);
		if (!f)
			goto bad;
	}
	if (f != e)
		goto bad;
	return parse_float_text(ps, s, e, v);
bad:
	return perr(ps, s, GPUENV_ESYNTAX, "invalid number '%.*s'", (int)(len > 40 ? 40 : len), s);
}

/* ---- values ---- */

static int stack_push(struct parser *ps, void *p)
{
	if (ps->sp == ps->stack_cap) {
		size_t ncap = ps->stack_cap ? ps->stack_cap * 2 : 256;
		void *n = gpuenv_realloc(ps->ctx, ps->stack, ncap * sizeof(*ps->stack));
		if (!n)
			return gpuenv_oom(ps->ctx, "parsing TOML");
		ps->stack = n;
		ps->stack_cap = ncap;
		if (ps->inl) /* its keys moved with the stack */
			ps->inl->items = (gpuenv_toml_kv_t **)(ps->stack + ps->inl_base);
	}
	ps->stack[ps->sp++] = p;
	return 0;
}

static int parse_value(struct parser *ps, gpuenv_toml_value_t *v, uint32_t depth);

static int parse_array(struct parser *ps, gpuenv_toml_value_t *v, uint32_t depth)
{
	const char *open = ps->p;
	size_t base = ps->sp;
	int r;

	if (depth > ps->max_depth)
		return perr(ps, open, GPUENV_ETOOBIG, "arrays nested deeper than %u", ps->max_depth);
	ps->p++;
	for (;;) {
		if ((r = skip_blank(ps)))
			return r;
		if (*ps->p == ']')
			break;
		if (ps->p >= ps->end)
			return perr(ps, open, GPUENV_ESYNTAX, "array is not closed with ']'");
		gpuenv_toml_value_t *el = mem_alloc(&ps->m, sizeof(*el));
		if (!el)
			return gpuenv_oom(ps->ctx, "parsing TOML");
		if ((r = parse_value(ps, el, depth + 1)))
			return r;
		if ((r = stack_push(ps, el)))
			return r;
		if ((r = skip_blank(ps)))
			return r;
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == ']')
			break;
		if (ps->p >= ps->end)
			return perr(ps, open, GPUENV_ESYNTAX, "array is not closed with ']'");
		return unexpected(ps, ps->p, "',' or ']' in array");
	}
	ps->p++;
	size_t n = ps->sp - base;
	if (n > UINT32_MAX)
		return perr(ps, open, GPUENV_ETOOBIG, "array too long");
	gpuenv_toml_array_t *arr = mem_alloc(&ps->m, sizeof(*arr));
	if (!arr)
		return gpuenv_oom(ps->ctx, "parsing TOML");
	arr->items = NULL;
	if (n) {
		arr->items = mem_alloc(&ps->m, n * sizeof(*arr->items));
		if (!arr->items)
			return gpuenv_oom(ps->ctx, "parsing TOML");
		memcpy(arr->items, ps->stack + base, n * sizeof(*arr->items));
	}
	arr->len = arr->cap = (uint32_t)n;
	arr->depth = depth;
	ps->sp = base;
	v->type = GPUENV_TOML_ARRAY;
	v->flags = 0;
	v->u.arr = arr;
	return 0;
}

static int parse_keyval(struct parser *ps, gpuenv_toml_table_t *t);

static int inline_body(struct parser *ps, gpuenv_toml_table_t *t, const char *open);

static int parse_inline_table(struct parser *ps, gpuenv_toml_value_t *v, uint32_t depth)
{
	const char *open = ps->p;
	int r;

	if (depth > ps->max_depth)
		return perr(ps, open, GPUENV_ETOOBIG, "tables nested deeper than %u", ps->max_depth);
	gpuenv_toml_table_t *t = table_new(&ps->m, depth);
	if (!t)
		return gpuenv_oom(ps->ctx, "parsing TOML");
	t->line = v->line;
	t->col = v->col;
	v->type = GPUENV_TOML_TABLE;
	v->flags = GPUENV_TOML_INLINE;
	v->u.tab = t;
	ps->p++;
	skip_ws(ps);
	if (*ps->p == '}') {
		ps->p++;
		return 0;
	}
	gpuenv_toml_table_t *outer = ps->inl;
	size_t outer_base = ps->inl_base;
	ps->inl = t;
	ps->inl_base = ps->sp;
	r = inline_body(ps, t, open);
	if (!r) {
		/* closed: its keys get their own exactly sized array */
		gpuenv_toml_kv_t **items = mem_alloc(&ps->m, t->len * sizeof(*items));
		if (!items)
			r = gpuenv_oom(ps->ctx, "parsing TOML");
		else {
			memcpy(items, ps->stack + ps->inl_base, t->len * sizeof(*items));
			t->items = items;
		}
	}
	ps->sp = ps->inl_base;
	ps->inl = outer;
	ps->inl_base = outer_base;
	return r;
}

static int inline_newline(struct parser *ps)
{
	return perr(ps, ps->p, GPUENV_ESYNTAX,
		"inline table must close with '}' on the same line (newlines and comments "
		"inside inline tables are TOML 1.1, not 1.0)");
}

static int inline_body(struct parser *ps, gpuenv_toml_table_t *t, const char *open)
{
	int r;

	for (;;) {
		if (*ps->p == '\n' || *ps->p == '\r' || *ps->p == '#')
			return inline_newline(ps);
		if ((r = parse_keyval(ps, t)))
			return r;
		skip_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			skip_ws(ps);
			if (*ps->p == '}')
				return perr(ps, ps->p, GPUENV_ESYNTAX,
					"trailing comma in inline table (not allowed in TOML 1.0)");
			continue;
		}
		if (*ps->p == '}') {
			ps->p++;
			return 0;
		}
		if (*ps->p == '\n' || *ps->p == '\r' || *ps->p == '#')
			return inline_newline(ps);
		if (ps->p >= ps->end)
			return perr(ps, open, GPUENV_ESYNTAX, "inline table is not closed with '}'");
		return unexpected(ps, ps->p, "',' or '}' in inline table");
	}
}

static int parse_value(struct parser *ps, gpuenv_toml_value_t *v, uint32_t depth)
{
	const char *q = ps->p;
	int r;

	v->flags = 0;
	pos_at16(ps, q, &v->line, &v->col);
	switch (*q) {
	case '"':
		v->type = GPUENV_TOML_STRING;
		if (q[1] == '"' && q[2] == '"')
			return parse_multi(ps, &v->u.str);
		return parse_basic(ps, &v->u.str);
	case '\'':
		v->type = GPUENV_TOML_STRING;
		if (q[1] == '\'' && q[2] == '\'')
			return parse_multi(ps, &v->u.str);
		return parse_literal(ps, &v->u.str);
	case '[':
		return parse_array(ps, v, depth);
	case '{':
		return parse_inline_table(ps, v, depth);
	case 't':
		if (q[1] == 'r' && q[2] == 'u' && q[3] == 'e' && !(cls[(unsigned char)q[4]] & C_BARE)) {
			v->type = GPUENV_TOML_BOOL;
			v->u.b = true;
			ps->p = q + 4;
			return 0;
		}
		break;
	case 'f':
		if (q[1] == 'a' && q[2] == 'l' && q[3] == 's' && q[4] == 'e' &&
			!(cls[(unsigned char)q[5]] & C_BARE)) {
			v->type = GPUENV_TOML_BOOL;
			v->u.b = false;
			ps->p = q + 5;
			return 0;
		}
		break;
	default:
		break;
	}
	if (gpuenv_is_digit(*q) || *q == '+' || *q == '-' || *q == 'i' || *q == 'n') {
		const char *e = q;
		while (cls[(unsigned char)*e] & C_NUMTOK)
			e++;
		/* a date, one space, a time: one offset or local date-time */
		if (e - q == 10 && q[4] == '-' && *e == ' ' && gpuenv_is_digit(e[1]) && gpuenv_is_digit(e[2]) &&
			e[3] == ':') {
			e++;
			while (cls[(unsigned char)*e] & C_NUMTOK)
				e++;
		}
		if ((r = parse_number(ps, q, e, v)))
			return r;
		ps->p = e;
		return 0;
	}
	if (q >= ps->end || *q == '\n' || *q == '\r' || *q == '#')
		return perr(ps, q, GPUENV_ESYNTAX, "expected a value");
	{
		/* a word: say what it is when it is close to something valid */
		const char *e = q;
		while (cls[(unsigned char)*e] & C_BARE)
			e++;
		if (e > q)
			return perr(ps, q, GPUENV_ESYNTAX,
				"invalid value '%.*s' (strings need quotes; booleans are true and false)",
				(int)(e - q > 40 ? 40 : e - q), q);
	}
	return unexpected(ps, q, "a value");
}

/* key = value, added to t (the current section, or an inline table). */
static int parse_keyval(struct parser *ps, gpuenv_toml_table_t *t)
{
	int r;

	if ((r = parse_key(ps)))
		return r;
	if (*ps->p != '=') {
		if (ps->nparts == 1 && ps->p < ps->end && *ps->p != '\n' && *ps->p != '\r' &&
			(cls[(unsigned char)*ps->p] & C_BARE))
			return unexpected(ps, ps->p,
				"'=' after the key (keys with spaces need quotes)");
		return unexpected(ps, ps->p, "'=' after the key");
	}
	if ((r = navigate_dotted(ps, t, &t)))
		return r;
	struct keypart last = ps->parts[ps->nparts - 1];
	ps->p++;
	skip_ws(ps);
	gpuenv_toml_kv_t *kv = new_kv(ps, &last);
	if (!kv)
		return gpuenv_oom(ps->ctx, "parsing TOML");
	if ((r = parse_value(ps, &kv->val, t->depth + 1)))
		return r;
	return tinsert(ps, t, kv);
}

static int parse_header(struct parser *ps)
{
	const char *open = ps->p;
	bool aot = open[1] == '[';
	int r;

	ps->p += aot ? 2 : 1;
	skip_ws(ps);
	if ((r = parse_key(ps)))
		return r;
	if (*ps->p != ']')
		return unexpected(ps, ps->p, aot ? "']]' to close the header" :
			"']' to close the header");
	if (aot && ps->p[1] != ']')
		return unexpected(ps, ps->p + 1, "']]' to close the array of tables header");
	ps->p += aot ? 2 : 1;
	if ((r = navigate_header(ps, aot, &ps->cur)))
		return r;
	return end_of_line(ps, "the table header");
}

static int parse_document(struct parser *ps)
{
	int r;

	if (ps->end - ps->p >= 3 && memcmp(ps->p, "\xef\xbb\xbf", 3) == 0)
		ps->p += 3; /* a UTF-8 byte order mark */
	for (;;) {
		skip_ws(ps);
		char c = *ps->p;
		if (ps->p >= ps->end)
			return 0;
		if (c == '#') {
			if ((r = skip_comment(ps)))
				return r;
		} else if (c == '\n' || c == '\r') {
			/* blank line */
		} else if (c == '[') {
			if ((r = parse_header(ps)))
				return r;
			continue;
		} else {
			if ((r = parse_keyval(ps, ps->cur)))
				return r;
			if ((r = end_of_line(ps, "the value")))
				return r;
			continue;
		}
		if (ps->p < ps->end && !eat_newline(ps)) {
			char b[40];
			return perr(ps, ps->p, GPUENV_ESYNTAX, "%s is not allowed here",
				describe(ps, ps->p, b, sizeof(b)));
		}
	}
}

/* ---- public: documents ---- */

int gpuenv_toml_doc_init(gpuenv_toml_doc_t *doc, gpuenv_ctx_t *ctx, const char *file)
{
	memset(doc, 0, sizeof(*doc));
	doc->ctx = ctx;
	doc->max_size = GPUENV_TOML_MAX_SIZE;
	doc->max_depth = GPUENV_TOML_MAX_DEPTH;
	gpuenv_arena_init(&doc->arena, ctx, 0);
	doc->file = "";
	if (file && *file) {
		doc->file = gpuenv_arena_strndup(&doc->arena, file, strlen(file));
		if (!doc->file) {
			doc->file = "";
			return gpuenv_oom(ctx, "parsing TOML");
		}
	}
	struct mem m = { &doc->arena, NULL, NULL, 0 };
	doc->root = table_new(&m, 0);
	if (!doc->root)
		return gpuenv_oom(ctx, "parsing TOML");
	doc->root->line = doc->root->col = 1;
	return 0;
}

void gpuenv_toml_doc_free(gpuenv_toml_doc_t *doc)
{
	if (!doc)
		return;
	gpuenv_arena_free(&doc->arena);
	doc->root = NULL;
	doc->file = "";
}

/* Parse text[0..len) where text[len] is a NUL byte: every lookahead in the
 * parser stops at a byte that cannot continue what it reads, and the NUL is
 * such a byte, so nothing past it is read. */
static int parse_text(gpuenv_toml_doc_t *doc, const char *text, size_t len)
{
	gpuenv_ctx_t *ctx = doc->ctx;
	struct parser ps;
	int r;

	init_classes();
	memset(&ps, 0, sizeof(ps));
	ps.doc = doc;
	ps.ctx = ctx;
	ps.max_depth = doc->max_depth > GPUENV_TOML_DEPTH_LIMIT ? GPUENV_TOML_DEPTH_LIMIT :
		doc->max_depth < 1 ? 1 : doc->max_depth;
	ps.m = (struct mem){ &doc->arena, NULL, NULL, MEM_BLOCK_MIN };
	ps.parts = gpuenv_arena_alloc(&doc->arena, (ps.max_depth + 1) * sizeof(*ps.parts));
	if (!ps.parts)
		return gpuenv_oom(ctx, "parsing TOML");
	ps.base = ps.p = ps.line_start = ps.col_p = text;
	ps.end = text + len;
	ps.line = 1;
	ps.col_n = 1;
	ps.cur = doc->root;

	size_t ok = utf8_check(text, len, &ps.ascii);
	if (ok < len) {
		const char *bad = text + ok;
		uint32_t line, col;
		pos_scan(&ps, bad, &line, &col);
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, doc->file, line, col,
			"invalid UTF-8 (byte 0x%02X)%s", (unsigned char)*bad,
			ok == 0 && len >= 2 && ((unsigned char)text[0] == 0xff ||
				(unsigned char)text[0] == 0xfe) ?
				": TOML must be UTF-8, this looks like UTF-16" : "");
	}
	r = parse_document(&ps);
	if (r) {
		/* the partial tree may point into the scratch stack: drop it */
		doc->root->items = NULL;
		doc->root->len = doc->root->cap = 0;
		doc->root->index = NULL;
		doc->root->index_cap = 0;
	}
	gpuenv_free(ctx, ps.stack);
	if (ps.cloc)
		freelocale(ps.cloc);
	return r;
}

static int check_doc(gpuenv_toml_doc_t *doc, size_t len)
{
	if (!doc->root)
		return gpuenv_fail(doc->ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"gpuenv_toml_parse: document not initialised");
	if (len > doc->max_size)
		return gpuenv_fail(doc->ctx, GPUENV_ETOOBIG, doc->file, 0, 0,
			"TOML input of %zu bytes is larger than the limit of %zu bytes", len,
			doc->max_size);
	return 0;
}

int gpuenv_toml_parse(gpuenv_toml_doc_t *doc, const char *text, size_t len)
{
	int r = check_doc(doc, len);
	if (r)
		return r;
	char *copy = gpuenv_arena_alloc(&doc->arena, len + 1);
	if (!copy)
		return gpuenv_oom(doc->ctx, "parsing TOML");
	if (len)
		memcpy(copy, text, len);
	copy[len] = '\0';
	return parse_text(doc, copy, len);
}

int gpuenv_toml_parse_borrowed(gpuenv_toml_doc_t *doc, const char *text, size_t len)
{
	int r = check_doc(doc, len);
	if (r)
		return r;
	if (!text || text[len] != '\0')
		return gpuenv_fail(doc->ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"gpuenv_toml_parse_borrowed: text[len] must be a NUL byte");
	return parse_text(doc, text, len);
}

/* ---- public: lookups ---- */

const char *gpuenv_toml_type_name(int type)
{
	switch (type) {
	case GPUENV_TOML_STRING: return "string";
	case GPUENV_TOML_INTEGER: return "integer";
	case GPUENV_TOML_FLOAT: return "float";
	case GPUENV_TOML_BOOL: return "boolean";
	case GPUENV_TOML_DATETIME: return "offset date-time";
	case GPUENV_TOML_DATETIME_LOCAL: return "local date-time";
	case GPUENV_TOML_DATE_LOCAL: return "local date";
	case GPUENV_TOML_TIME_LOCAL: return "local time";
	case GPUENV_TOML_ARRAY: return "array";
	case GPUENV_TOML_TABLE: return "table";
	default: return "unset value";
	}
}

gpuenv_toml_kv_t *gpuenv_toml_find(const gpuenv_toml_table_t *t, gpuenv_str_t key)
{
	if (!t)
		return NULL;
	return find_h(t, key.ptr, key.len);
}

gpuenv_toml_value_t *gpuenv_toml_get(const gpuenv_toml_table_t *t, const char *key)
{
	gpuenv_toml_kv_t *kv = key ? gpuenv_toml_find(t, gpuenv_str(key)) : NULL;
	return kv ? &kv->val : NULL;
}

/* Next part of a key path: bare, "quoted" or 'literal' (no escapes). */
static bool path_part(const char **pp, gpuenv_str_t *out)
{
	const char *p = *pp;

	init_classes();
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '"' || *p == '\'') {
		char q = *p++;
		const char *s = p;
		while (*p && *p != q && *p != '\\')
			p++;
		if (*p != q)
			return false;
		*out = (gpuenv_str_t){ s, (size_t)(p - s) };
		p++;
	} else {
		const char *s = p;
		while (cls[(unsigned char)*p] & C_BARE)
			p++;
		if (p == s)
			return false;
		*out = (gpuenv_str_t){ s, (size_t)(p - s) };
	}
	while (*p == ' ' || *p == '\t')
		p++;
	*pp = p;
	return true;
}

gpuenv_toml_value_t *gpuenv_toml_get_path(const gpuenv_toml_table_t *t, const char *path)
{
	const char *p = path;
	gpuenv_toml_value_t *v = NULL;

	if (!t || !path)
		return NULL;
	for (;;) {
		gpuenv_str_t part;
		if (!path_part(&p, &part))
			return NULL;
		if (v) {
			if (v->type != GPUENV_TOML_TABLE)
				return NULL;
			t = v->u.tab;
		}
		gpuenv_toml_kv_t *kv = gpuenv_toml_find(t, part);
		if (!kv)
			return NULL;
		v = &kv->val;
		if (*p == '\0')
			return v;
		if (*p != '.')
			return NULL;
		p++;
	}
}

int gpuenv_toml_expect(gpuenv_toml_doc_t *doc, const gpuenv_toml_value_t *v, int type,
	const char *what)
{
	if (v->type == type)
		return 0;
	const char *tn = gpuenv_toml_type_name(v->type);
	const char *want = gpuenv_toml_type_name(type);
	bool an_want = want[0] == 'a' || want[0] == 'i' || want[0] == 'o' || want[0] == 'u';
	bool an_got = tn[0] == 'a' || tn[0] == 'i' || tn[0] == 'o' || tn[0] == 'u';
	return gpuenv_fail(doc->ctx, GPUENV_ETYPE, doc->file, v->line, v->col,
		"'%s' must be %s %s, not %s %s", what ? what : "value", an_want ? "an" : "a", want,
		an_got ? "an" : "a", tn);
}

static int get_typed(gpuenv_toml_doc_t *doc, const gpuenv_toml_table_t *t, const char *path,
	int type, gpuenv_toml_value_t **out)
{
	gpuenv_toml_value_t *v = gpuenv_toml_get_path(t, path);
	if (!v)
		return gpuenv_fail(doc->ctx, GPUENV_ENOTFOUND, doc->file, t ? t->line : 0,
			t ? t->col : 0, "missing key '%s'", path ? path : "");
	if (type == GPUENV_TOML_FLOAT && v->type == GPUENV_TOML_INTEGER) {
		*out = v;
		return 0;
	}
	int r = gpuenv_toml_expect(doc, v, type, path);
	if (r)
		return r;
	*out = v;
	return 0;
}

int gpuenv_toml_get_string(gpuenv_toml_doc_t *doc, const gpuenv_toml_table_t *t,
	const char *path, gpuenv_str_t *out)
{
	gpuenv_toml_value_t *v = NULL;
	int r = get_typed(doc, t, path, GPUENV_TOML_STRING, &v);
	if (!r)
		*out = v->u.str;
	return r;
}

int gpuenv_toml_get_integer(gpuenv_toml_doc_t *doc, const gpuenv_toml_table_t *t,
	const char *path, int64_t *out)
{
	gpuenv_toml_value_t *v = NULL;
	int r = get_typed(doc, t, path, GPUENV_TOML_INTEGER, &v);
	if (!r)
		*out = v->u.i;
	return r;
}

int gpuenv_toml_get_float(gpuenv_toml_doc_t *doc, const gpuenv_toml_table_t *t,
	const char *path, double *out)
{
	gpuenv_toml_value_t *v = NULL;
	int r = get_typed(doc, t, path, GPUENV_TOML_FLOAT, &v);
	if (!r)
		*out = v->type == GPUENV_TOML_INTEGER ? (double)v->u.i : v->u.f;
	return r;
}

int gpuenv_toml_get_bool(gpuenv_toml_doc_t *doc, const gpuenv_toml_table_t *t,
	const char *path, bool *out)
{
	gpuenv_toml_value_t *v = NULL;
	int r = get_typed(doc, t, path, GPUENV_TOML_BOOL, &v);
	if (!r)
		*out = v->u.b;
	return r;
}

int gpuenv_toml_get_table(gpuenv_toml_doc_t *doc, const gpuenv_toml_table_t *t,
	const char *path, gpuenv_toml_table_t **out)
{
	gpuenv_toml_value_t *v = NULL;
	int r = get_typed(doc, t, path, GPUENV_TOML_TABLE, &v);
	if (!r)
		*out = v->u.tab;
	return r;
}

int gpuenv_toml_get_array(gpuenv_toml_doc_t *doc, const gpuenv_toml_table_t *t,
	const char *path, gpuenv_toml_array_t **out)
{
	gpuenv_toml_value_t *v = NULL;
	int r = get_typed(doc, t, path, GPUENV_TOML_ARRAY, &v);
	if (!r)
		*out = v->u.arr;
	return r;
}

/* ---- public: date/times ---- */

static bool two(const char *s, int *out)
{
	if (!gpuenv_is_digit(s[0]) || !gpuenv_is_digit(s[1]))
		return false;
	*out = (s[0] - '0') * 10 + (s[1] - '0');
	return true;
}

/* HH:MM:SS(.frac)? at s[0..n); returns bytes used or 0 */
static size_t parse_time(const char *s, size_t n, gpuenv_toml_datetime_t *dt)
{
	if (n < 8 || !two(s, &dt->hour) || s[2] != ':' || !two(s + 3, &dt->minute) ||
		s[5] != ':' || !two(s + 6, &dt->second))
		return 0;
	if (dt->hour > 23 || dt->minute > 59 || dt->second > 60)
		return 0;
	size_t i = 8;
	dt->nanosecond = 0;
	if (i < n && s[i] == '.') {
		size_t d = ++i;
		uint32_t ns = 0;
		while (i < n && gpuenv_is_digit(s[i])) {
			if (i - d < 9)
				ns = ns * 10 + (uint32_t)(s[i] - '0');
			i++;
		}
		if (i == d)
			return 0;
		for (size_t k = i - d; k < 9; k++)
			ns *= 10;
		dt->nanosecond = ns;
	}
	return i;
}

int gpuenv_toml_datetime_parse(gpuenv_str_t text, gpuenv_toml_datetime_t *out)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	gpuenv_toml_datetime_t dt;
	const char *s = text.ptr;
	size_t n = text.len, i;

	memset(&dt, 0, sizeof(dt));
	if (!s)
		return GPUENV_ESYNTAX;
	if (n >= 3 && s[2] == ':') {
		i = parse_time(s, n, &dt);
		if (!i || i != n)
			return GPUENV_ESYNTAX;
		dt.type = GPUENV_TOML_TIME_LOCAL;
		goto done;
	}
	int y1, y2;
	if (n < 10 || !two(s, &y1) || !two(s + 2, &y2) || s[4] != '-' || !two(s + 5, &dt.month) ||
		s[7] != '-' || !two(s + 8, &dt.day))
		return GPUENV_ESYNTAX;
	dt.year = y1 * 100 + y2;
	if (dt.month < 1 || dt.month > 12 || dt.day < 1)
		return GPUENV_ESYNTAX;
	int dim = mdays[dt.month - 1];
	if (dt.month == 2 && dt.year % 4 == 0 && (dt.year % 100 != 0 || dt.year % 400 == 0))
		dim = 29;
	if (dt.day > dim)
		return GPUENV_ESYNTAX;
	if (n == 10) {
		dt.type = GPUENV_TOML_DATE_LOCAL;
		goto done;
	}
	if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
		return GPUENV_ESYNTAX;
	i = parse_time(s + 11, n - 11, &dt);
	if (!i)
		return GPUENV_ESYNTAX;
	i += 11;
	if (i == n) {
		dt.type = GPUENV_TOML_DATETIME_LOCAL;
		goto done;
	}
	if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == n) {
		dt.type = GPUENV_TOML_DATETIME;
		goto done;
	}
	int oh, om;
	if ((s[i] != '+' && s[i] != '-') || n - i != 6 || !two(s + i + 1, &oh) ||
		s[i + 3] != ':' || !two(s + i + 4, &om) || oh > 23 || om > 59)
		return GPUENV_ESYNTAX;
	dt.offset_minutes = (oh * 60 + om) * (s[i] == '-' ? -1 : 1);
	dt.type = GPUENV_TOML_DATETIME;
done:
	if (out)
		*out = dt;
	return dt.type;
}

/* ---- public: building ---- */

static gpuenv_toml_value_t *oom_v(gpuenv_toml_doc_t *doc)
{
	gpuenv_oom(doc->ctx, "parsing TOML");
	return NULL;
}

gpuenv_toml_value_t *gpuenv_toml_table_add(gpuenv_toml_doc_t *doc, gpuenv_toml_table_t *t,
	gpuenv_str_t key)
{
	if (!key.ptr)
		key = GPUENV_STR_LIT("");
	if (utf8_valid(key.ptr, key.len) != key.len) {
		gpuenv_fail(doc->ctx, GPUENV_ESYNTAX, NULL, 0, 0, "key is not valid UTF-8");
		return NULL;
	}
	struct mem m = { &doc->arena, NULL, NULL, 0 };
	if (find_h(t, key.ptr, key.len)) {
		gpuenv_fail(doc->ctx, GPUENV_EDUPLICATE, NULL, 0, 0, "duplicate key '%.*s'",
			(int)(key.len > 60 ? 60 : key.len), key.ptr);
		return NULL;
	}
	gpuenv_toml_kv_t *kv = gpuenv_arena_calloc(&doc->arena, 1, sizeof(*kv));
	if (!kv)
		return oom_v(doc);
	kv->key = gpuenv_arena_str(&doc->arena, key);
	if (!kv->key.ptr || insert(&m, t, kv))
		return oom_v(doc);
	return &kv->val;
}

gpuenv_toml_value_t *gpuenv_toml_array_push(gpuenv_toml_doc_t *doc, gpuenv_toml_array_t *a)
{
	struct mem m = { &doc->arena, NULL, NULL, 0 };
	gpuenv_toml_value_t *v = gpuenv_arena_calloc(&doc->arena, 1, sizeof(*v));
	if (!v || push(&m, a, v))
		return oom_v(doc);
	return v;
}

int gpuenv_toml_set_string(gpuenv_toml_doc_t *doc, gpuenv_toml_value_t *v, gpuenv_str_t s)
{
	if (!s.ptr)
		s = GPUENV_STR_LIT("");
	if (utf8_valid(s.ptr, s.len) != s.len)
		return gpuenv_fail(doc->ctx, GPUENV_ESYNTAX, NULL, 0, 0,
			"string is not valid UTF-8");
	gpuenv_str_t c = gpuenv_arena_str(&doc->arena, s);
	if (!c.ptr)
		return gpuenv_oom(doc->ctx, "parsing TOML");
	v->type = GPUENV_TOML_STRING;
	v->flags = 0;
	v->u.str = c;
	return 0;
}

void gpuenv_toml_set_integer(gpuenv_toml_value_t *v, int64_t i)
{
	v->type = GPUENV_TOML_INTEGER;
	v->flags = 0;
	v->u.i = i;
}

void gpuenv_toml_set_float(gpuenv_toml_value_t *v, double f)
{
	v->type = GPUENV_TOML_FLOAT;
	v->flags = 0;
	v->u.f = f;
}

void gpuenv_toml_set_bool(gpuenv_toml_value_t *v, bool b)
{
	v->type = GPUENV_TOML_BOOL;
	v->flags = 0;
	v->u.b = b;
}

int gpuenv_toml_set_datetime(gpuenv_toml_doc_t *doc, gpuenv_toml_value_t *v, gpuenv_str_t text)
{
	int type = gpuenv_toml_datetime_parse(text, NULL);
	if (type < 0)
		return gpuenv_fail(doc->ctx, GPUENV_ESYNTAX, NULL, 0, 0,
			"invalid TOML date/time '%.*s'", (int)(text.len > 60 ? 60 : text.len),
			text.ptr ? text.ptr : "");
	gpuenv_str_t c = gpuenv_arena_str(&doc->arena, text);
	if (!c.ptr)
		return gpuenv_oom(doc->ctx, "parsing TOML");
	v->type = (uint8_t)type;
	v->flags = 0;
	v->u.str = c;
	return 0;
}

gpuenv_toml_table_t *gpuenv_toml_set_table(gpuenv_toml_doc_t *doc, gpuenv_toml_value_t *v,
	unsigned flags)
{
	struct mem m = { &doc->arena, NULL, NULL, 0 };
	gpuenv_toml_table_t *t = table_new(&m, 0);
	if (!t) {
		oom_v(doc);
		return NULL;
	}
	v->type = GPUENV_TOML_TABLE;
	v->flags = (uint8_t)(flags & (GPUENV_TOML_INLINE | GPUENV_TOML_DOTTED | GPUENV_TOML_DEFINED));
	v->u.tab = t;
	return t;
}

gpuenv_toml_array_t *gpuenv_toml_set_array(gpuenv_toml_doc_t *doc, gpuenv_toml_value_t *v,
	unsigned flags)
{
	gpuenv_toml_array_t *a = gpuenv_arena_calloc(&doc->arena, 1, sizeof(*a));
	if (!a) {
		oom_v(doc);
		return NULL;
	}
	v->type = GPUENV_TOML_ARRAY;
	v->flags = (uint8_t)(flags & GPUENV_TOML_AOT);
	v->u.arr = a;
	return a;
}

int gpuenv_toml_add_string(gpuenv_toml_doc_t *doc, gpuenv_toml_table_t *t, const char *key,
	const char *value)
{
	gpuenv_toml_value_t *v = gpuenv_toml_table_add(doc, t, gpuenv_str(key));
	return v ? gpuenv_toml_set_string(doc, v, gpuenv_str(value)) : doc->ctx->err.code;
}

int gpuenv_toml_add_integer(gpuenv_toml_doc_t *doc, gpuenv_toml_table_t *t, const char *key,
	int64_t value)
{
	gpuenv_toml_value_t *v = gpuenv_toml_table_add(doc, t, gpuenv_str(key));
	if (!v)
		return doc->ctx->err.code;
	gpuenv_toml_set_integer(v, value);
	return 0;
}

int gpuenv_toml_add_bool(gpuenv_toml_doc_t *doc, gpuenv_toml_table_t *t, const char *key,
	bool value)
{
	gpuenv_toml_value_t *v = gpuenv_toml_table_add(doc, t, gpuenv_str(key));
	if (!v)
		return doc->ctx->err.code;
	gpuenv_toml_set_bool(v, value);
	return 0;
}

gpuenv_toml_table_t *gpuenv_toml_add_table(gpuenv_toml_doc_t *doc, gpuenv_toml_table_t *t,
	const char *key, unsigned flags)
{
	gpuenv_toml_value_t *v = gpuenv_toml_table_add(doc, t, gpuenv_str(key));
	return v ? gpuenv_toml_set_table(doc, v, flags) : NULL;
}

gpuenv_toml_array_t *gpuenv_toml_add_array(gpuenv_toml_doc_t *doc, gpuenv_toml_table_t *t,
	const char *key, unsigned flags)
{
	gpuenv_toml_value_t *v = gpuenv_toml_table_add(doc, t, gpuenv_str(key));
	return v ? gpuenv_toml_set_array(doc, v, flags) : NULL;
}

/* ---- equality ---- */


bool gpuenv_toml_table_eq(const gpuenv_toml_table_t *a, const gpuenv_toml_table_t *b)
{
	if (a->len != b->len)
		return false;
	for (uint32_t i = 0; i < a->len; i++) {
		const gpuenv_toml_kv_t *kv = a->items[i];
		const gpuenv_toml_kv_t *o = gpuenv_toml_find(b, kv->key);
		if (!o || !gpuenv_toml_value_eq(&kv->val, &o->val))
			return false;
	}
	return true;
}

bool gpuenv_toml_value_eq(const gpuenv_toml_value_t *a, const gpuenv_toml_value_t *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case GPUENV_TOML_INTEGER:
		return a->u.i == b->u.i;
	case GPUENV_TOML_FLOAT:
		if (isnan(a->u.f))
			return isnan(b->u.f) && !signbit(a->u.f) == !signbit(b->u.f);
		return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
	case GPUENV_TOML_BOOL:
		return a->u.b == b->u.b;
	case GPUENV_TOML_ARRAY:
		if (a->u.arr->len != b->u.arr->len)
			return false;
		for (uint32_t i = 0; i < a->u.arr->len; i++)
			if (!gpuenv_toml_value_eq(a->u.arr->items[i], b->u.arr->items[i]))
				return false;
		return true;
	case GPUENV_TOML_TABLE:
		return gpuenv_toml_table_eq(a->u.tab, b->u.tab);
	default: /* strings and date/times: the same text */
		return gpuenv_str_eq(a->u.str, b->u.str);
	}
}
