/* RECORD: the CSV list of a wheel's files with their hashes and sizes.
 *
 * Read as Python's csv module (excel dialect) reads what csv.writer wrote:
 * ',' separates, '"' quotes, '""' inside quotes is one '"', quoted fields may
 * hold line breaks, rows end with LF or CRLF.  We are stricter than csv in
 * one place: text after a closing quote is an error, not appended. */
#include "gpuenv/metadata.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int oom(gpuenv_ctx_t *ctx)
{
	return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
}

/* ---- base64, urlsafe alphabet ---- */

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* 1 + the value of each urlsafe base64 character; 0 for anything else */
static const unsigned char b64v1[256] = {
	['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7,
	['H'] = 8, ['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14,
	['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21,
	['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28,
	['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35,
	['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42,
	['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
	['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
	['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['-'] = 63,
	['_'] = 64,
};

int gpuenv_b64url_encode(const unsigned char *p, size_t n, gpuenv_buf_t *out)
{
	char q[4];
	int r;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		size_t k = n - i >= 3 ? 3 : n - i;
		if (k > 1)
			v |= (uint32_t)p[i + 1] << 8;
		if (k > 2)
			v |= p[i + 2];
		q[0] = b64url[(v >> 18) & 63];
		q[1] = b64url[(v >> 12) & 63];
		q[2] = b64url[(v >> 6) & 63];
		q[3] = b64url[v & 63];
		if ((r = gpuenv_buf_append(out, q, k + 1)) != 0)
			return r;
	}
	return 0;
}

bool gpuenv_b64url_decode(gpuenv_str_t s, unsigned char *out, size_t max, size_t *outlen)
{
	const unsigned char *p = (const unsigned char *)s.ptr;
	size_t o = 0, n = s.len, i = 0;

	/* padding is optional, but only at the end and only as much as fits */
	while (n && p[n - 1] == '=')
		n--;
	if (s.len - n > 2 || (s.len != n && s.len % 4) || n % 4 == 1)
		return false;
	if (n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) > max)
		return false;
	for (; i + 4 <= n; i += 4) {
		unsigned a = b64v1[p[i]], b = b64v1[p[i + 1]], c = b64v1[p[i + 2]],
			 d = b64v1[p[i + 3]];
		if (!a || !b || !c || !d)
			return false;
		uint32_t v = (uint32_t)(a - 1) << 18 | (uint32_t)(b - 1) << 12 |
			(uint32_t)(c - 1) << 6 | (d - 1);
		out[o++] = (unsigned char)(v >> 16);
		out[o++] = (unsigned char)(v >> 8);
		out[o++] = (unsigned char)v;
	}
	if (i < n) {
		/* 2 or 3 characters left: 1 or 2 bytes, the spare bits must be zero
		 * (the canonical encoding) */
		uint32_t v = 0;
		size_t left = n - i;
		for (size_t k = 0; k < left; k++) {
			unsigned x = b64v1[p[i + k]];
			if (!x)
				return false;
			v |= (uint32_t)(x - 1) << (18 - 6 * k);
		}
		out[o++] = (unsigned char)(v >> 16);
		if (left == 3)
			out[o++] = (unsigned char)(v >> 8);
		if (v & (left == 2 ? 0xffffu : 0xffu))
			return false;
	}
	*outlen = o;
	return true;
}

/* ---- CSV ---- */

struct csv {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *file;
	gpuenv_str_t text;
	size_t pos;
	unsigned line;
	size_t next[3]; /* cached next ',', LF, CR */
	bool valid[3];
};

/* Position of the next ch at or after from (len when none), cached in slot k. */
static size_t next_of(struct csv *c, int k, char ch, size_t from)
{
	if (c->next[k] < from || !c->valid[k]) {
		const char *q = memchr(c->text.ptr + from, ch, c->text.len - from);
		c->next[k] = q ? (size_t)(q - c->text.ptr) : c->text.len;
		c->valid[k] = true;
	}
	return c->next[k];
}

/* Read one field; *end_row is set when the row ended after it. */
static int csv_field(struct csv *c, gpuenv_str_t *out, bool *end_row)
{
	const char *p = c->text.ptr;
	size_t n = c->text.len, i = c->pos;

	*end_row = false;
	if (i < n && p[i] == '"') {
		size_t start = ++i, quotes = 0;
		unsigned l0 = c->line;
		for (;;) {
			if (i >= n)
				return gpuenv_fail(c->ctx, GPUENV_ESYNTAX, c->file, l0, 0,
					"a quoted field is not closed");
			if (p[i] == '"') {
				if (i + 1 < n && p[i + 1] == '"') {
					quotes++;
					i += 2;
					continue;
				}
				break;
			}
			if (p[i] == '\n')
				c->line++;
			i++;
		}
		size_t len = i - start;
		i++; /* the closing quote */
		if (quotes) {
			char *v = gpuenv_arena_alloc(c->arena, len - quotes + 1);
			size_t o = 0;
			if (!v)
				return oom(c->ctx);
			for (size_t k = start; k < start + len; k++) {
				v[o++] = p[k];
				if (p[k] == '"')
					k++;
			}
			v[o] = '\0';
			*out = gpuenv_str_n(v, o);
		} else {
			*out = gpuenv_str_n(p + start, len);
		}
		if (i < n && p[i] != ',' && p[i] != '\n' && p[i] != '\r')
			return gpuenv_fail(c->ctx, GPUENV_ESYNTAX, c->file, c->line, 0,
				"text after a closing quote");
	} else {
		/* the field ends at the nearest ',', LF or CR: memchr for each,
		 * remembered until passed so the scans stay linear overall */
		size_t start = i;
		i = next_of(c, 0, ',', i);
		size_t lf = next_of(c, 1, '\n', start), cr = next_of(c, 2, '\r', start);
		if (lf < i)
			i = lf;
		if (cr < i)
			i = cr;
		*out = gpuenv_str_n(p + start, i - start);
	}
	if (i < n && p[i] == ',') {
		c->pos = i + 1;
		return 0;
	}
	/* end of row: \n, \r\n, a lone \r, or the end of the text */
	if (i < n && p[i] == '\r')
		i++;
	if (i < n && p[i] == '\n')
		i++;
	c->pos = i;
	*end_row = true;
	return 0;
}

static bool is_lower_alnum(gpuenv_str_t s)
{
	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char ch = s.ptr[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
			return false;
	}
	return true;
}

static size_t digest_size(gpuenv_str_t algo)
{
	if (algo.len == 6 && memcmp(algo.ptr, "sha256", 6) == 0)
		return 32;
	static const struct {
		const char *name;
		size_t len;
	} known[] = { { "md5", 16 }, { "sha1", 20 }, { "sha224", 28 }, { "sha256", 32 },
		{ "sha384", 48 }, { "sha512", 64 }, { "blake2b", 64 }, { "blake2s", 32 },
		{ "sha3_256", 32 }, { "sha3_384", 48 }, { "sha3_512", 64 } };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (gpuenv_str_eq_cstr(algo, known[i].name))
			return known[i].len;
	return 0;
}

int gpuenv_record_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_record_t *out)
{
	struct csv c = { ctx, arena, file ? file : "RECORD", text, 0, 1, { 0 }, { false } };
	size_t cap = 1;
	int r;

	memset(out, 0, sizeof(*out));
	if (text.len > GPUENV_RECORD_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, c.file, 0, 0,
			"%zu bytes, over the %zu-byte limit", text.len, GPUENV_RECORD_MAX);
	/* rows <= line breaks + 1 (a lone CR ends a row too) */
	for (const char *q = text.ptr, *end = text.ptr + text.len;
		(q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++)
		cap++;
	for (const char *q = text.ptr, *end = text.ptr + text.len;
		(q = memchr(q, '\r', (size_t)(end - q))) != NULL; q++)
		cap += q + 1 == end || q[1] != '\n';
	if (cap > GPUENV_RECORD_ROWS_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, c.file, 0, 0, "more than %d rows",
			GPUENV_RECORD_ROWS_MAX);
	out->entries = gpuenv_arena_alloc(arena, cap * sizeof(*out->entries));
	if (!out->entries)
		return oom(ctx);

	while (c.pos < text.len) {
		gpuenv_str_t f[3];
		size_t nf = 0;
		unsigned line = c.line;
		bool end = false;
		size_t row_start = c.pos;

		while (!end) {
			gpuenv_str_t v;
			if ((r = csv_field(&c, &v, &end)) != 0)
				return r;
			if (nf < 3)
				f[nf] = v;
			nf++;
		}
		c.line++;
		/* csv.reader gives [] for a blank line: skip it */
		if (nf == 1 && !f[0].len && text.ptr[row_start] != '"')
			continue;
		if (nf != 3)
			return gpuenv_fail(ctx, GPUENV_ESYNTAX, c.file, line, 0,
				"expected 3 fields (path,hash,size), found %zu", nf);
		gpuenv_record_entry_t *e = &out->entries[out->n++];
		*e = (gpuenv_record_entry_t){ .path = f[0], .line = line };
		if (!f[0].len)
			return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 1, "empty path");
		if (f[1].len) {
			gpuenv_str_t algo, b64 = gpuenv_str_split(f[1], '=', &algo);
			size_t want;
			if (!b64.ptr || !is_lower_alnum(algo))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"hash '%.*s' is not ALGORITHM=DIGEST",
					(int)(f[1].len > 80 ? 80 : f[1].len), f[1].ptr);
			unsigned char dg[GPUENV_DIGEST_MAX], *keep;
			size_t dlen;
			if (!gpuenv_b64url_decode(b64, dg, sizeof(dg), &dlen))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"the %.*s digest is not urlsafe base64 of at most %d bytes",
					(int)(algo.len > 20 ? 20 : algo.len), algo.ptr,
					GPUENV_DIGEST_MAX);
			want = digest_size(algo);
			if (want && dlen != want)
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"a %.*s digest has %zu bytes, not %zu", (int)algo.len, algo.ptr,
					dlen, want);
			keep = gpuenv_arena_alloc(arena, dlen ? dlen : 1);
			if (!keep)
				return oom(ctx);
			memcpy(keep, dg, dlen);
			e->digest = keep;
			e->digest_len = (uint8_t)dlen;
			e->hash_algo = algo;
		}
		if (f[2].len) {
			if (!gpuenv_str_to_u64(f[2], &e->size))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"size '%.*s' is not a number",
					(int)(f[2].len > 40 ? 40 : f[2].len), f[2].ptr);
			e->has_size = true;
		}
	}
	return 0;
}

const gpuenv_record_entry_t *gpuenv_record_find(const gpuenv_record_t *rec, gpuenv_str_t path)
{
	for (size_t i = 0; i < rec->n; i++)
		if (gpuenv_str_eq(rec->entries[i].path, path))
			return &rec->entries[i];
	return NULL;
}

int gpuenv_record_check_path(gpuenv_ctx_t *ctx, gpuenv_str_t path)
{
	const char *why = NULL;
	size_t s = 0;

	if (!path.len)
		why = "is empty";
	else if (path.ptr[0] == '/')
		why = "is absolute";
	else if (memchr(path.ptr, '\\', path.len))
		why = "holds a backslash";
	else if (memchr(path.ptr, '\0', path.len))
		why = "holds a NUL byte";
	else if (path.len >= 2 && path.ptr[1] == ':' &&
		 ((path.ptr[0] >= 'a' && path.ptr[0] <= 'z') ||
			 (path.ptr[0] >= 'A' && path.ptr[0] <= 'Z')))
		why = "starts with a drive letter";
	for (size_t i = 0; !why && i <= path.len; i++) {
		if (i < path.len && path.ptr[i] != '/')
			continue;
		if (i - s == 2 && path.ptr[s] == '.' && path.ptr[s + 1] == '.')
			why = "has a '..' component";
		s = i + 1;
	}
	if (!why)
		return 0;
	return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0, "unsafe path '%.*s': it %s",
		(int)(path.len > 200 ? 200 : path.len), path.ptr, why);
}

/* Entries that cannot carry their own hash. */
static bool hash_exempt(gpuenv_str_t p)
{
	gpuenv_str_t base = p;
	for (size_t i = p.len; i > 0; i--)
		if (p.ptr[i - 1] == '/') {
			base = gpuenv_str_n(p.ptr + i, p.len - i);
			break;
		}
	if (gpuenv_str_endswith(p, ".pyc"))
		return true;
	if (base.ptr == p.ptr || !gpuenv_str_endswith(gpuenv_str_n(p.ptr, p.len - base.len - 1),
					     ".dist-info"))
		return false;
	return gpuenv_str_eq_cstr(base, "RECORD") || gpuenv_str_eq_cstr(base, "RECORD.jws") ||
		gpuenv_str_eq_cstr(base, "RECORD.p7s");
}

static uint64_t path_hash(gpuenv_str_t s)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < s.len; i++) {
		h ^= (unsigned char)s.ptr[i];
		h *= 1099511628211ull;
	}
	return h;
}

int gpuenv_record_validate(gpuenv_ctx_t *ctx, const char *file, const gpuenv_record_t *rec)
{
	size_t cap = 16;
	uint32_t *slots;
	int r = 0;

	file = file ? file : "RECORD";
	while (cap < rec->n * 2)
		cap *= 2;
	slots = gpuenv_calloc(ctx, cap, sizeof(*slots));
	if (!slots)
		return oom(ctx);
	for (size_t k = 0; k < rec->n && !r; k++) {
		const gpuenv_record_entry_t *e = &rec->entries[k];
		if (gpuenv_record_check_path(ctx, e->path)) {
			char msg[sizeof(ctx->err.msg)];
			snprintf(msg, sizeof(msg), "%s", ctx->err.msg);
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1, "%s", msg);
			break;
		}
		/* duplicates through an open-addressing set of row indexes */
		size_t i = (size_t)path_hash(e->path) & (cap - 1);
		while (slots[i]) {
			const gpuenv_record_entry_t *o = &rec->entries[slots[i] - 1];
			if (gpuenv_str_eq(o->path, e->path)) {
				r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1,
					"'%.*s' is listed twice (first on line %u)",
					(int)(e->path.len > 200 ? 200 : e->path.len), e->path.ptr,
					o->line);
				break;
			}
			i = (i + 1) & (cap - 1);
		}
		if (r)
			break;
		slots[i] = (uint32_t)(k + 1);
		if (hash_exempt(e->path))
			continue;
		if (!e->hash_algo.len || !e->has_size)
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1,
				"'%.*s' has no %s", (int)(e->path.len > 200 ? 200 : e->path.len),
				e->path.ptr, e->hash_algo.len ? "size" : "hash");
		else if (!gpuenv_str_eq_cstr(e->hash_algo, "sha256") &&
			 !gpuenv_str_eq_cstr(e->hash_algo, "sha384") &&
			 !gpuenv_str_eq_cstr(e->hash_algo, "sha512"))
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1,
				"'%.*s': hash algorithm %.*s is not allowed (sha256 or stronger)",
				(int)(e->path.len > 200 ? 200 : e->path.len), e->path.ptr,
				(int)e->hash_algo.len, e->hash_algo.ptr);
	}
	gpuenv_free(ctx, slots);
	return r;
}

static int csv_put(gpuenv_buf_t *out, gpuenv_str_t s)
{
	int r;
	bool q = false;

	for (size_t i = 0; i < s.len && !q; i++)
		q = s.ptr[i] == ',' || s.ptr[i] == '"' || s.ptr[i] == '\r' || s.ptr[i] == '\n';
	if (!q)
		return gpuenv_buf_append(out, s.ptr, s.len);
	if ((r = gpuenv_buf_putc(out, '"')) != 0)
		return r;
	for (size_t i = 0; i < s.len; i++) {
		if (s.ptr[i] == '"' && (r = gpuenv_buf_putc(out, '"')) != 0)
			return r;
		if ((r = gpuenv_buf_putc(out, s.ptr[i])) != 0)
			return r;
	}
	return gpuenv_buf_putc(out, '"');
}

int gpuenv_record_format_entry(const gpuenv_record_entry_t *e, gpuenv_buf_t *out)
{
	int r;

	if ((r = csv_put(out, e->path)) != 0 || (r = gpuenv_buf_putc(out, ',')) != 0)
		return r;
	if (e->hash_algo.len) {
		if ((r = gpuenv_buf_append(out, e->hash_algo.ptr, e->hash_algo.len)) != 0 ||
			(r = gpuenv_buf_putc(out, '=')) != 0 ||
			(r = gpuenv_b64url_encode(e->digest, e->digest_len, out)) != 0)
			return r;
	}
	if ((r = gpuenv_buf_putc(out, ',')) != 0)
		return r;
	if (e->has_size && (r = gpuenv_buf_printf(out, "%llu", (unsigned long long)e->size)) != 0)
		return r;
	return gpuenv_buf_putc(out, '\n');
}
