/* Format-preserving TOML edits (gpuenv/toml_edit.h): a span model over the
 * text, and edits as splices checked by the parser.
 *
 * The scanner runs only over text the parser accepted, so it can follow
 * TOML's lexical structure without judging it: strings (four kinds, with
 * escapes and multi-line forms), comments, brackets and braces nested,
 * bare values up to a separator (a date-time's one space included).  It is
 * still bounds-checked everywhere: it never reads past the text.
 */
#include "gpuenv/toml_edit.h"

#include <errno.h>
#include <string.h>

#define EDIT_MAX_NODES 1000000u
#define EDIT_MAX_PATH 1024u

typedef GPUENV_VEC(gpuenv_str_t) strvec_t;
typedef GPUENV_VEC(gpuenv_toml_edit_node_t) nodevec_t;

struct scan {
	gpuenv_toml_edit_t *ed;
	const char *s;
	size_t n;
};

static bool is_ws(char c) { return c == ' ' || c == '\t'; }

static bool at_nl(const struct scan *sc, size_t i)
{
	return i < sc->n && (sc->s[i] == '\n' || (sc->s[i] == '\r' && i + 1 < sc->n && sc->s[i + 1] == '\n'));
}

static size_t skip_ws(const struct scan *sc, size_t i)
{
	while (i < sc->n && is_ws(sc->s[i]))
		i++;
	return i;
}

/* Past the end of the line at i (its newline included). */
static size_t line_end(const struct scan *sc, size_t i)
{
	while (i < sc->n && sc->s[i] != '\n')
		i++;
	return i < sc->n ? i + 1 : i;
}

/* Whitespace, newlines and comments (inside arrays). */
static size_t skip_ws_nl(const struct scan *sc, size_t i)
{
	for (;;) {
		i = skip_ws(sc, i);
		if (i < sc->n && (sc->s[i] == '\n' || sc->s[i] == '\r'))
			i++;
		else if (i < sc->n && sc->s[i] == '#')
			while (i < sc->n && sc->s[i] != '\n')
				i++;
		else
			return i;
	}
}

static bool has3(const struct scan *sc, size_t i, char q)
{
	return i + 2 < sc->n && sc->s[i] == q && sc->s[i + 1] == q && sc->s[i + 2] == q;
}

/* Past the string that starts at i (its opening quote). */
static size_t skip_string(const struct scan *sc, size_t i)
{
	char q = sc->s[i];
	bool basic = q == '"';
	if (has3(sc, i, q)) {
		for (i += 3; i < sc->n; i++) {
			if (basic && sc->s[i] == '\\') {
				i++;
				continue;
			}
			if (has3(sc, i, q)) {
				size_t j = i + 3; /* up to two quotes of the content before the delimiter */
				while (j < sc->n && j < i + 5 && sc->s[j] == q)
					j++;
				return j;
			}
		}
		return sc->n;
	}
	for (i++; i < sc->n && sc->s[i] != q && sc->s[i] != '\n'; i++)
		if (basic && sc->s[i] == '\\')
			i++;
	return i < sc->n ? i + 1 : sc->n;
}

static size_t skip_value(const struct scan *sc, size_t i, unsigned depth);

/* Past a key (dotted, quoted parts); its decoded parts pushed to parts when
 * not NULL. */
static int scan_key(struct scan *sc, size_t *pi, strvec_t *parts);

static size_t skip_inline(const struct scan *sc, size_t i, unsigned depth)
{
	struct scan tmp = *sc;
	for (i++;;) {
		i = skip_ws_nl(sc, i);
		if (i >= sc->n || sc->s[i] == '}')
			return i < sc->n ? i + 1 : i;
		if (sc->s[i] == ',') {
			i++;
			continue;
		}
		size_t k = i;
		if (scan_key(&tmp, &k, NULL) != 0 || k == i)
			return sc->n;
		i = skip_ws(sc, k);
		if (i < sc->n && sc->s[i] == '=')
			i = skip_value(sc, skip_ws(sc, i + 1), depth + 1);
	}
}

static size_t skip_array(const struct scan *sc, size_t i, unsigned depth)
{
	for (i++;;) {
		i = skip_ws_nl(sc, i);
		if (i >= sc->n || sc->s[i] == ']')
			return i < sc->n ? i + 1 : i;
		if (sc->s[i] == ',') {
			i++;
			continue;
		}
		size_t j = skip_value(sc, i, depth + 1);
		if (j == i)
			return sc->n;
		i = j;
	}
}

static size_t skip_value(const struct scan *sc, size_t i, unsigned depth)
{
	if (i >= sc->n || depth > GPUENV_TOML_DEPTH_LIMIT)
		return sc->n;
	switch (sc->s[i]) {
	case '"':
	case '\'':
		return skip_string(sc, i);
	case '[':
		return skip_array(sc, i, depth);
	case '{':
		return skip_inline(sc, i, depth);
	default:
		break;
	}
	size_t j = i;
	while (j < sc->n && !is_ws(sc->s[j]) && !strchr(",]}#\r\n", sc->s[j]))
		j++;
	/* a date and a time with one space between them */
	if (j - i == 10 && sc->s[i + 4] == '-' && j + 3 < sc->n && sc->s[j] == ' ' &&
		gpuenv_is_digit(sc->s[j + 1]) && gpuenv_is_digit(sc->s[j + 2]) && sc->s[j + 3] == ':')
		for (j++; j < sc->n && !is_ws(sc->s[j]) && !strchr(",]}#\r\n", sc->s[j]); j++)
			;
	return j;
}

static void put_utf8(char *out, size_t *o, uint32_t cp)
{
	if (cp < 0x80) {
		out[(*o)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*o)++] = (char)(0xC0 | (cp >> 6));
		out[(*o)++] = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		out[(*o)++] = (char)(0xE0 | (cp >> 12));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[(*o)++] = (char)(0x80 | (cp & 0x3F));
	} else {
		out[(*o)++] = (char)(0xF0 | (cp >> 18));
		out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[(*o)++] = (char)(0x80 | (cp & 0x3F));
	}
}

/* A basic string's content [a, b) with its escapes decoded, in the arena. */
static int decode_basic(gpuenv_toml_edit_t *ed, const char *s, size_t a, size_t b, gpuenv_str_t *out)
{
	char *d = gpuenv_arena_alloc(&ed->arena, b - a + 1);
	size_t o = 0;
	if (!d)
		return gpuenv_oom(ed->ctx, "editing TOML");
	for (size_t i = a; i < b; i++) {
		if (s[i] != '\\' || i + 1 >= b) {
			d[o++] = s[i];
			continue;
		}
		char c = s[++i];
		const char *map = "b\bt\tn\nf\fr\r\"\"\\\\";
		const char *m = strchr(map, c);
		if (c && m && (m - map) % 2 == 0) {
			d[o++] = m[1];
			continue;
		}
		if (c == 'u' || c == 'U') {
			size_t nd = c == 'u' ? 4 : 8;
			uint32_t cp = 0;
			for (size_t k = 0; k < nd && i + 1 < b; k++) {
				int h = gpuenv_hex_digit(s[++i]);
				cp = cp * 16 + (uint32_t)(h < 0 ? 0 : h);
			}
			if (cp > 0x10FFFF)
				cp = 0xFFFD;
			if (o + 4 > b - a) /* "\uXXXX" is 6 bytes: room enough, but be sure */
				return gpuenv_fail(ed->ctx, GPUENV_ESYNTAX, ed->file, 0, 0, "bad escape in a key");
			put_utf8(d, &o, cp);
		}
	}
	d[o] = 0;
	*out = gpuenv_str_n(d, o);
	return 0;
}

static int scan_key(struct scan *sc, size_t *pi, strvec_t *parts)
{
	size_t i = *pi;
	for (;;) {
		i = skip_ws(sc, i);
		if (i >= sc->n)
			break;
		size_t a = i, b;
		gpuenv_str_t part;
		char c = sc->s[i];
		if (c == '"' || c == '\'') {
			i = skip_string(sc, i);
			b = i > a + 1 ? i - 1 : a + 1;
			if (!parts) {
			} else if (c == '"') {
				int r = decode_basic(sc->ed, sc->s, a + 1, b, &part);
				if (r)
					return r;
			} else {
				part = gpuenv_str_n(sc->s + a + 1, b - (a + 1));
			}
		} else {
			while (i < sc->n && (gpuenv_is_alnum(sc->s[i]) || sc->s[i] == '_' || sc->s[i] == '-'))
				i++;
			if (i == a)
				break;
			part = gpuenv_str_n(sc->s + a, i - a);
		}
		if (parts) {
			gpuenv_str_t *p = gpuenv_vec_push(sc->ed->ctx, &sc->ed->arena, parts, EDIT_MAX_PATH, "key parts");
			if (!p)
				return sc->ed->ctx->err.code;
			*p = part;
		}
		size_t j = skip_ws(sc, i);
		if (j < sc->n && sc->s[j] == '.') {
			i = j + 1;
			continue;
		}
		break;
	}
	*pi = i;
	return 0;
}

static gpuenv_toml_edit_node_t *push_node(gpuenv_toml_edit_t *ed, nodevec_t *v)
{
	return gpuenv_vec_push(ed->ctx, &ed->arena, v, EDIT_MAX_NODES, "TOML statements");
}

/* Cut the current text into statements. */
static int scan_all(gpuenv_toml_edit_t *ed)
{
	struct scan sc = { .ed = ed, .s = ed->text.data ? ed->text.data : "", .n = ed->text.len };
	nodevec_t v = { 0 };
	strvec_t head = { 0 };
	uint32_t cur = UINT32_MAX;
	size_t i = 0;

	ed->nl = "\n";
	for (size_t k = 0; k < sc.n; k++)
		if (sc.s[k] == '\n') {
			ed->nl = k > 0 && sc.s[k - 1] == '\r' ? "\r\n" : "\n";
			break;
		}
	while (i < sc.n) {
		gpuenv_toml_edit_node_t *nd = push_node(ed, &v);
		strvec_t parts = { 0 };
		size_t j = skip_ws(&sc, i);
		int r;
		if (!nd)
			return ed->ctx->err.code;
		nd->start = i;
		nd->header = UINT32_MAX;
		if (j >= sc.n || at_nl(&sc, j)) {
			nd->kind = GPUENV_TOML_EDIT_BLANK;
		} else if (sc.s[j] == '#') {
			nd->kind = GPUENV_TOML_EDIT_COMMENT;
		} else if (sc.s[j] == '[') {
			bool aot = j + 1 < sc.n && sc.s[j + 1] == '[';
			nd->kind = aot ? GPUENV_TOML_EDIT_AOT : GPUENV_TOML_EDIT_TABLE;
			j += aot ? 2 : 1;
			if ((r = scan_key(&sc, &j, &parts)) != 0)
				return r;
			nd->path = parts.v;
			nd->npath = (uint32_t)parts.n;
			head = parts;
			cur = (uint32_t)(v.n - 1);
		} else {
			nd->kind = GPUENV_TOML_EDIT_KEYVAL;
			for (size_t k = 0; k < head.n; k++) {
				gpuenv_str_t *p = gpuenv_vec_push(ed->ctx, &ed->arena, &parts, EDIT_MAX_PATH, "key parts");
				if (!p)
					return ed->ctx->err.code;
				*p = head.v[k];
			}
			if ((r = scan_key(&sc, &j, &parts)) != 0)
				return r;
			nd->path = parts.v;
			nd->npath = (uint32_t)parts.n;
			nd->nhead = (uint32_t)head.n;
			nd->header = cur;
			j = skip_ws(&sc, j);
			if (j < sc.n && sc.s[j] == '=')
				j = skip_ws(&sc, j + 1);
			nd->vstart = j;
			nd->vend = j = skip_value(&sc, j, 0);
		}
		/* the rest of the line: a comment, the newline */
		nd->end = j > i ? j : i;
		nd->end = line_end(&sc, nd->end);
		if (nd->end <= i) /* never stall */
			nd->end = sc.n;
		i = nd->end;
	}
	ed->nodes = v.v;
	ed->nnodes = v.n;
	return 0;
}

/* Parse the text and cut it; on a parse error ctx->err has its position. */
static int reload(gpuenv_toml_edit_t *ed)
{
	int r;
	gpuenv_toml_doc_free(&ed->doc);
	gpuenv_arena_free(&ed->arena);
	gpuenv_arena_init(&ed->arena, ed->ctx, 0);
	ed->nodes = NULL;
	ed->nnodes = 0;
	if ((r = gpuenv_toml_doc_init(&ed->doc, ed->ctx, ed->file)) != 0)
		return r;
	if ((r = gpuenv_toml_parse_borrowed(&ed->doc, ed->text.data ? ed->text.data : "", ed->text.len)) != 0)
		return r;
	return scan_all(ed);
}

int gpuenv_toml_edit_open(gpuenv_toml_edit_t *ed, gpuenv_ctx_t *ctx, const char *file, const char *text,
	size_t len)
{
	memset(ed, 0, sizeof(*ed));
	ed->ctx = ctx;
	ed->file = file ? file : "";
	gpuenv_arena_init(&ed->arena, ctx, 0);
	gpuenv_buf_init(&ed->text, ctx, GPUENV_TOML_MAX_SIZE);
	gpuenv_buf_append(&ed->text, text, len);
	gpuenv_buf_putc(&ed->text, 0); /* the parser borrows it: one NUL, then dropped */
	int r = gpuenv_buf_failed(&ed->text);
	if (r)
		return r;
	ed->text.len--;
	if ((r = gpuenv_toml_doc_init(&ed->doc, ctx, ed->file)) != 0)
		return r;
	return reload(ed);
}

void gpuenv_toml_edit_free(gpuenv_toml_edit_t *ed)
{
	if (!ed->ctx)
		return;
	gpuenv_toml_doc_free(&ed->doc);
	gpuenv_arena_free(&ed->arena);
	gpuenv_buf_free(&ed->text);
	ed->nodes = NULL;
	ed->nnodes = 0;
}

int gpuenv_toml_edit_write(const gpuenv_toml_edit_t *ed, gpuenv_buf_t *out)
{
	for (size_t i = 0; i < ed->nnodes; i++)
		gpuenv_buf_append(out, ed->text.data + ed->nodes[i].start, ed->nodes[i].end - ed->nodes[i].start);
	return out->err;
}

static bool path_eq(const gpuenv_str_t *a, size_t na, const char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!gpuenv_str_eq_cstr(a[i], b[i]))
			return false;
	return true;
}

static bool path_prefix(const gpuenv_str_t *a, size_t na, const char *const *b, size_t nb)
{
	return na >= nb && path_eq(a, nb, b, nb);
}

/* Is the statement inside an array of tables' element (its path goes
 * through an array), where a path names no one key? */
static bool through_array(const gpuenv_toml_edit_t *ed, const gpuenv_toml_edit_node_t *nd)
{
	const gpuenv_toml_table_t *t = ed->doc.root;
	for (uint32_t k = 0; k + 1 < nd->npath; k++) {
		const gpuenv_toml_kv_t *kv = gpuenv_toml_find(t, nd->path[k]);
		if (!kv || kv->val.type != GPUENV_TOML_TABLE)
			return true;
		t = kv->val.u.tab;
	}
	return false;
}

const gpuenv_toml_edit_node_t *gpuenv_toml_edit_find(const gpuenv_toml_edit_t *ed, const char *const *path,
	size_t n)
{
	for (size_t i = 0; i < ed->nnodes; i++) {
		const gpuenv_toml_edit_node_t *nd = &ed->nodes[i];
		if (nd->kind == GPUENV_TOML_EDIT_KEYVAL && path_eq(nd->path, nd->npath, path, n) &&
			(nd->header == UINT32_MAX || ed->nodes[nd->header].kind == GPUENV_TOML_EDIT_TABLE) &&
			!through_array(ed, nd))
			return nd;
	}
	return NULL;
}

const gpuenv_toml_edit_node_t *gpuenv_toml_edit_find_table(const gpuenv_toml_edit_t *ed,
	const char *const *path, size_t n)
{
	for (size_t i = 0; i < ed->nnodes; i++)
		if (ed->nodes[i].kind == GPUENV_TOML_EDIT_TABLE && path_eq(ed->nodes[i].path, ed->nodes[i].npath, path, n))
			return &ed->nodes[i];
	return NULL;
}

int gpuenv_toml_edit_elems(gpuenv_toml_edit_t *ed, const gpuenv_toml_edit_node_t *kv, gpuenv_toml_edit_elem_t **out,
	size_t *n)
{
	struct scan sc = { .ed = ed, .s = ed->text.data, .n = kv->vend };
	GPUENV_VEC(gpuenv_toml_edit_elem_t) v = { 0 };
	size_t i = kv->vstart;

	*out = NULL;
	*n = 0;
	if (i >= sc.n || sc.s[i] != '[')
		return gpuenv_fail(ed->ctx, GPUENV_ETYPE, ed->file, 0, 0, "the value is not an array");
	for (i++;;) {
		i = skip_ws_nl(&sc, i);
		if (i >= sc.n || sc.s[i] == ']')
			break;
		if (sc.s[i] == ',') {
			i++;
			continue;
		}
		gpuenv_toml_edit_elem_t *e = gpuenv_vec_push(ed->ctx, &ed->arena, &v, EDIT_MAX_NODES, "array elements");
		if (!e)
			return ed->ctx->err.code;
		e->start = i;
		e->end = i = skip_value(&sc, i, 1);
		if (e->end == e->start)
			break;
	}
	*out = v.v;
	*n = v.n;
	return 0;
}

/* Replace [a, b) with the pieces (NULL-terminated), read the result back;
 * on a parse error the old text is put back and the error kept. */
static int splice(gpuenv_toml_edit_t *ed, size_t a, size_t b, const char *const *pieces)
{
	gpuenv_buf_t nb;
	int r;
	gpuenv_buf_init(&nb, ed->ctx, GPUENV_TOML_MAX_SIZE);
	gpuenv_buf_append(&nb, ed->text.data, a);
	for (size_t i = 0; pieces[i]; i++)
		gpuenv_buf_puts(&nb, pieces[i]);
	gpuenv_buf_append(&nb, ed->text.data + b, ed->text.len - b);
	if ((r = gpuenv_buf_failed(&nb)) != 0) {
		gpuenv_buf_free(&nb);
		return r;
	}
	gpuenv_buf_t old = ed->text;
	ed->text = nb;
	if ((r = reload(ed)) == 0) {
		gpuenv_buf_free(&old);
		return 0;
	}
	/* keep the parser's message, restore the text it was about */
	gpuenv_error_t saved = ed->ctx->err;
	gpuenv_buf_free(&ed->text);
	ed->text = old;
	int r2 = reload(ed);
	if (r2)
		return r2; /* out of memory reading the old text again: that error */
	ed->ctx->err = saved;
	return r;
}

static const gpuenv_toml_edit_node_t *need_key(gpuenv_toml_edit_t *ed, const char *const *path, size_t n)
{
	const gpuenv_toml_edit_node_t *kv = gpuenv_toml_edit_find(ed, path, n);
	if (!kv)
		gpuenv_fail(ed->ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "no key %s%s in the file", n ? path[0] : "",
			n > 1 ? "..." : "");
	return kv;
}

/* The start of the line holding i. */
static size_t line_start(const char *s, size_t i)
{
	while (i > 0 && s[i - 1] != '\n')
		i--;
	return i;
}

static bool only_ws(const char *s, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		if (!is_ws(s[i]))
			return false;
	return true;
}

/* After element end e: past the ',' that follows it (with the whitespace
 * before it), or e when there is none. */
static size_t past_comma(const char *s, size_t e, size_t lim)
{
	size_t i = e;
	while (i < lim && (is_ws(s[i]) || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i < lim && s[i] == ',' ? i + 1 : e;
}

int gpuenv_toml_edit_array_append(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, gpuenv_str_t value)
{
	const gpuenv_toml_edit_node_t *kv = need_key(ed, path, n);
	gpuenv_toml_edit_elem_t *el;
	size_t ne;
	int r;
	if (!kv)
		return GPUENV_ENOTFOUND;
	size_t close = kv->vend - 1; /* the ']' */
	if ((r = gpuenv_toml_edit_elems(ed, kv, &el, &ne)) != 0)
		return r;
	const char *s = ed->text.data;
	char *val = gpuenv_arena_strndup(&ed->arena, value.ptr, value.len);
	if (!val)
		return gpuenv_oom(ed->ctx, "editing TOML");
	bool multi = memchr(s + kv->vstart, '\n', kv->vend - kv->vstart) != NULL;
	if (!ne) {
		if (!multi)
			return splice(ed, kv->vstart + 1, close, (const char *[]){ val, NULL });
		size_t ls = line_start(s, close);
		if (!only_ws(s, ls, close)) /* "[  # comment\n  ]"-like: open a line */
			return splice(ed, close, close, (const char *[]){ ed->nl, "    ", val, ",", ed->nl, NULL });
		return splice(ed, ls, ls, (const char *[]){ "    ", val, ",", ed->nl, NULL });
	}
	gpuenv_toml_edit_elem_t *last = &el[ne - 1];
	size_t comma = past_comma(s, last->end, close);
	bool trailing = comma != last->end;
	size_t ls = line_start(s, close);
	if (multi && only_ws(s, ls, close) && line_start(s, last->start) != ls) {
		/* one element per line: a new line before the ']' line, indented
		 * as the last element */
		size_t els = line_start(s, last->start);
		const char *indent = only_ws(s, els, last->start)
			? gpuenv_arena_strndup(&ed->arena, s + els, last->start - els) : "    ";
		if (!indent)
			return gpuenv_oom(ed->ctx, "editing TOML");
		if (trailing)
			return splice(ed, ls, ls, (const char *[]){ indent, val, ",", ed->nl, NULL });
		/* no trailing comma: the last element gets one, the new one none */
		gpuenv_buf_t nb;
		gpuenv_buf_init(&nb, ed->ctx, GPUENV_TOML_MAX_SIZE);
		gpuenv_buf_append(&nb, s + last->end, ls - last->end);
		gpuenv_buf_puts(&nb, indent);
		gpuenv_buf_puts(&nb, val);
		gpuenv_buf_puts(&nb, ed->nl);
		if ((r = gpuenv_buf_failed(&nb)) != 0) {
			gpuenv_buf_free(&nb);
			return r;
		}
		r = splice(ed, last->end, ls, (const char *[]){ ",", nb.data, NULL });
		gpuenv_buf_free(&nb);
		return r;
	}
	/* one line: ", value" after the last element, before a trailing comma */
	const char *sep = ", ";
	if (ne > 1) {
		size_t c2 = past_comma(s, el[ne - 2].end, last->start);
		if (c2 != el[ne - 2].end && c2 == last->start)
			sep = ",";
	}
	if (trailing)
		return splice(ed, comma, comma, (const char *[]){ sep[1] ? " " : "", val, ",", NULL });
	return splice(ed, last->end, last->end, (const char *[]){ sep, val, NULL });
}

/* The array at path and its elements, element i there: 0 or the error. */
static int array_at(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, size_t i,
	const gpuenv_toml_edit_node_t **kvp, gpuenv_toml_edit_elem_t **el, size_t *ne)
{
	const gpuenv_toml_edit_node_t *kv = need_key(ed, path, n);
	int r;
	if (!(*kvp = kv))
		return GPUENV_ENOTFOUND;
	if ((r = gpuenv_toml_edit_elems(ed, kv, el, ne)) != 0)
		return r;
	if (i >= *ne)
		return gpuenv_fail(ed->ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "no element %zu in the array", i);
	return 0;
}

int gpuenv_toml_edit_array_remove(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, size_t i)
{
	const gpuenv_toml_edit_node_t *kv;
	gpuenv_toml_edit_elem_t *el;
	size_t ne;
	int r;
	if ((r = array_at(ed, path, n, i, &kv, &el, &ne)) != 0)
		return r;
	const char *s = ed->text.data;
	size_t close = kv->vend - 1;
	gpuenv_toml_edit_elem_t *e = &el[i];
	size_t comma = past_comma(s, e->end, close);
	bool trailing = comma != e->end;
	size_t ls = line_start(s, e->start);
	/* the rest of its line after the comma: a comment at most */
	size_t k = comma;
	while (k < close && is_ws(s[k]))
		k++;
	if (k < close && s[k] == '#')
		while (k < close && s[k] != '\n')
			k++;
	bool own_line = only_ws(s, ls, e->start) && k < close && (s[k] == '\n' || s[k] == '\r') && ls > kv->vstart;
	if (own_line) {
		size_t le = s[k] == '\r' ? k + 2 : k + 1;
		if (i == ne - 1 && !trailing && i > 0) {
			/* the previous element's comma was a separator only */
			size_t pc = past_comma(s, el[i - 1].end, e->start);
			char *keep = gpuenv_arena_strndup(&ed->arena, s + pc, ls - pc);
			if (!keep)
				return gpuenv_oom(ed->ctx, "editing TOML");
			return splice(ed, pc - 1, le, (const char *[]){ keep, NULL });
		}
		return splice(ed, ls, le, (const char *[]){ NULL });
	}
	if (i + 1 < ne)
		return splice(ed, e->start, el[i + 1].start, (const char *[]){ NULL });
	if (i > 0)
		return splice(ed, el[i - 1].end, e->end, (const char *[]){ NULL });
	/* the only element: it, its comma and the space up to the ']' */
	size_t b = comma;
	while (b < close && is_ws(s[b]))
		b++;
	return splice(ed, e->start, b == close ? close : comma, (const char *[]){ NULL });
}

int gpuenv_toml_edit_array_set(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, size_t i,
	gpuenv_str_t value)
{
	const gpuenv_toml_edit_node_t *kv;
	gpuenv_toml_edit_elem_t *el;
	size_t ne;
	int r;
	if ((r = array_at(ed, path, n, i, &kv, &el, &ne)) != 0)
		return r;
	char *val = gpuenv_arena_strndup(&ed->arena, value.ptr, value.len);
	if (!val)
		return gpuenv_oom(ed->ctx, "editing TOML");
	return splice(ed, el[i].start, el[i].end, (const char *[]){ val, NULL });
}

/* A line of the dotted key path[from..n): "a.b = value" (value not NULL),
 * or a header "[a.b]" / "[[a.b]]"; in the editor's arena, the file's newline. */
static char *key_line(gpuenv_toml_edit_t *ed, const char *const *path, size_t from, size_t n, const gpuenv_str_t *value,
	const char *open, const char *close)
{
	gpuenv_buf_t b;
	char *out;
	gpuenv_buf_init(&b, ed->ctx, GPUENV_TOML_MAX_SIZE);
	gpuenv_buf_puts(&b, open);
	for (size_t i = from; i < n; i++) {
		if (i > from)
			gpuenv_buf_putc(&b, '.');
		gpuenv_toml_write_key(&b, gpuenv_str(path[i]));
	}
	gpuenv_buf_puts(&b, close);
	if (value)
		gpuenv_buf_append(&b, value->ptr, value->len);
	gpuenv_buf_puts(&b, ed->nl);
	if (gpuenv_buf_failed(&b)) {
		gpuenv_buf_free(&b);
		return NULL;
	}
	out = gpuenv_arena_strndup(&ed->arena, b.data, b.len);
	gpuenv_buf_free(&b);
	if (!out)
		gpuenv_oom(ed->ctx, "editing TOML");
	return out;
}

static char *kv_line(gpuenv_toml_edit_t *ed, const char *const *path, size_t from, size_t n, gpuenv_str_t value)
{
	return key_line(ed, path, from, n, &value, "", " = ");
}

static char *header_line(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, bool aot)
{
	return key_line(ed, path, 0, n, NULL, aot ? "[[" : "[", aot ? "]]" : "]");
}

/* What goes before a new section at the end: a newline when the text lacks
 * its last one, then one blank line (none in an empty file). */
static const char *section_sep(gpuenv_toml_edit_t *ed)
{
	const char *s = ed->text.data;
	size_t n = ed->text.len;
	if (!n)
		return "";
	bool nl_end = s[n - 1] == '\n';
	return gpuenv_arena_printf(&ed->arena, "%s%s", nl_end ? "" : ed->nl, ed->nl).ptr;
}

/* The index of the node after the last key/value of the section headed by
 * node h (UINT32_MAX: the root's section). */
static size_t section_end(const gpuenv_toml_edit_t *ed, uint32_t h)
{
	size_t i = h == UINT32_MAX ? 0 : h + 1, after = i;
	for (; i < ed->nnodes; i++) {
		if (ed->nodes[i].kind == GPUENV_TOML_EDIT_TABLE || ed->nodes[i].kind == GPUENV_TOML_EDIT_AOT)
			break;
		if (ed->nodes[i].kind == GPUENV_TOML_EDIT_KEYVAL)
			after = i + 1;
	}
	return after;
}

static size_t node_pos(const gpuenv_toml_edit_t *ed, size_t i)
{
	return i < ed->nnodes ? ed->nodes[i].start : ed->text.len;
}

int gpuenv_toml_edit_set(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, gpuenv_str_t value)
{
	const gpuenv_toml_edit_node_t *kv = gpuenv_toml_edit_find(ed, path, n);
	char *val, *line;
	if (!n)
		return gpuenv_fail(ed->ctx, GPUENV_EUSAGE, ed->file, 0, 0, "no key to set");
	if (!(val = gpuenv_arena_strndup(&ed->arena, value.ptr, value.len)))
		return gpuenv_oom(ed->ctx, "editing TOML");
	if (kv)
		return splice(ed, kv->vstart, kv->vend, (const char *[]){ val, NULL });
	/* the table: what the parser made of path[0..n-1) */
	const gpuenv_toml_table_t *t = ed->doc.root;
	for (size_t i = 0; i + 1 < n; i++) {
		const gpuenv_toml_value_t *v = gpuenv_toml_get(t, path[i]);
		if (!v)
			break;
		if (v->type != GPUENV_TOML_TABLE || (v->flags & GPUENV_TOML_INLINE))
			return gpuenv_fail(ed->ctx, GPUENV_EUNSUPPORTED, ed->file, v->line, v->col,
				"'%s' is %s, not a table gpuenv can add a key to", path[i],
				v->type == GPUENV_TOML_TABLE ? "an inline table" : gpuenv_toml_type_name(v->type));
		t = v->u.tab;
	}
	const gpuenv_toml_edit_node_t *h = n == 1 ? NULL : gpuenv_toml_edit_find_table(ed, path, n - 1);
	if (n == 1 || h) {
		uint32_t hi = h ? (uint32_t)(h - ed->nodes) : UINT32_MAX;
		if (!(line = kv_line(ed, path, n - 1, n, value)))
			return ed->ctx->err.code;
		size_t at = section_end(ed, hi), pos = node_pos(ed, at);
		/* a section that ends the file without its last newline */
		const char *pre = pos > 0 && ed->text.data[pos - 1] != '\n' ? ed->nl : "";
		return splice(ed, pos, pos, (const char *[]){ pre, line, NULL });
	}
	/* a table made by dotted keys: a dotted line after the last of them */
	for (size_t i = ed->nnodes; i-- > 0;) {
		const gpuenv_toml_edit_node_t *nd = &ed->nodes[i];
		if (nd->kind == GPUENV_TOML_EDIT_KEYVAL && nd->nhead < n - 1 &&
			path_prefix(nd->path, nd->npath, path, n - 1) && nd->npath > n - 1 &&
			(nd->header == UINT32_MAX || ed->nodes[nd->header].kind == GPUENV_TOML_EDIT_TABLE)) {
			if (!(line = kv_line(ed, path, nd->nhead, n, value)))
				return ed->ctx->err.code;
			const char *pre = nd->end > 0 && ed->text.data[nd->end - 1] != '\n' ? ed->nl : "";
			return splice(ed, nd->end, nd->end, (const char *[]){ pre, line, NULL });
		}
	}
	/* a new section at the end */
	const char *sep = section_sep(ed);
	char *hd = header_line(ed, path, n - 1, false);
	if (!sep || !hd || !(line = kv_line(ed, path, n - 1, n, value)))
		return ed->ctx->err.code ? ed->ctx->err.code : gpuenv_oom(ed->ctx, "editing TOML");
	return splice(ed, ed->text.len, ed->text.len, (const char *[]){ sep, hd, line, NULL });
}

/* [a, b) of a header node h and the blank line before it (when there is
 * one). */
static size_t with_blank_before(const gpuenv_toml_edit_t *ed, size_t h)
{
	if (h > 0 && ed->nodes[h - 1].kind == GPUENV_TOML_EDIT_BLANK)
		return ed->nodes[h - 1].start;
	return ed->nodes[h].start;
}

int gpuenv_toml_edit_remove(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, unsigned flags)
{
	const gpuenv_toml_edit_node_t *kv = need_key(ed, path, n);
	if (!kv)
		return GPUENV_ENOTFOUND;
	size_t a = kv->start, b = kv->end;
	if ((flags & GPUENV_TOML_EDIT_PRUNE) && kv->header != UINT32_MAX) {
		uint32_t h = kv->header;
		bool other = false;
		size_t i;
		for (i = h + 1; i < ed->nnodes && ed->nodes[i].kind != GPUENV_TOML_EDIT_TABLE &&
			ed->nodes[i].kind != GPUENV_TOML_EDIT_AOT; i++)
			if (ed->nodes[i].kind == GPUENV_TOML_EDIT_KEYVAL && &ed->nodes[i] != kv)
				other = true;
		if (!other && kv == &ed->nodes[h + 1] && section_end(ed, h) == h + 2)
			a = with_blank_before(ed, h);
	}
	/* a last line without its newline: take the newline before it */
	if (b == ed->text.len && b > 0 && ed->text.data[b - 1] != '\n' && a > 0) {
		a--;
		if (a > 0 && ed->text.data[a - 1] == '\r')
			a--;
	}
	return splice(ed, a, b, (const char *[]){ NULL });
}

size_t gpuenv_toml_edit_aot_count(const gpuenv_toml_edit_t *ed, const char *const *path, size_t n, size_t *elems,
	size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < ed->nnodes; i++)
		if (ed->nodes[i].kind == GPUENV_TOML_EDIT_AOT && path_eq(ed->nodes[i].path, ed->nodes[i].npath, path, n)) {
			if (elems && k < cap)
				elems[k] = i;
			k++;
		}
	return k;
}

int gpuenv_toml_edit_aot_append(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, gpuenv_str_t body)
{
	size_t last = 0, cnt = gpuenv_toml_edit_aot_count(ed, path, n, NULL, 0);
	char *hd = header_line(ed, path, n, true);
	gpuenv_buf_t b;
	int r;
	if (!hd)
		return ed->ctx->err.code;
	gpuenv_buf_init(&b, ed->ctx, GPUENV_TOML_MAX_SIZE);
	for (size_t i = 0; i < body.len; i++) /* the file's newline */
		if (body.ptr[i] == '\n')
			gpuenv_buf_puts(&b, ed->nl);
		else
			gpuenv_buf_putc(&b, body.ptr[i]);
	gpuenv_buf_putc(&b, 0);
	if ((r = gpuenv_buf_failed(&b)) != 0) {
		gpuenv_buf_free(&b);
		return r;
	}
	if (!cnt) {
		const char *sep = section_sep(ed);
		r = sep ? splice(ed, ed->text.len, ed->text.len, (const char *[]){ sep, hd, b.data, NULL })
			: gpuenv_oom(ed->ctx, "editing TOML");
	} else {
		/* the last element's header */
		for (size_t i = 0; i < ed->nnodes; i++)
			if (ed->nodes[i].kind == GPUENV_TOML_EDIT_AOT && path_eq(ed->nodes[i].path, ed->nodes[i].npath, path, n))
				last = i;
		size_t pos = node_pos(ed, section_end(ed, (uint32_t)last));
		const char *pre = pos > 0 && ed->text.data[pos - 1] != '\n' ? ed->nl : "";
		r = splice(ed, pos, pos, (const char *[]){ pre, ed->nl, hd, b.data, NULL });
	}
	gpuenv_buf_free(&b);
	return r;
}

int gpuenv_toml_edit_aot_remove(gpuenv_toml_edit_t *ed, const char *const *path, size_t n, size_t i)
{
	size_t h = 0, k = 0;
	bool found = false;
	for (size_t j = 0; j < ed->nnodes && !found; j++)
		if (ed->nodes[j].kind == GPUENV_TOML_EDIT_AOT && path_eq(ed->nodes[j].path, ed->nodes[j].npath, path, n) &&
			k++ == i)
			h = j, found = true;
	if (!found)
		return gpuenv_fail(ed->ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "no element %zu of [[%s%s]]", i,
			n ? path[0] : "", n > 1 ? "..." : "");
	size_t a = with_blank_before(ed, h), b = node_pos(ed, section_end(ed, (uint32_t)h));
	if (b == ed->text.len && b > 0 && ed->text.data[b - 1] != '\n' && a > 0) {
		a--;
		if (a > 0 && ed->text.data[a - 1] == '\r')
			a--;
	}
	return splice(ed, a, b, (const char *[]){ NULL });
}
