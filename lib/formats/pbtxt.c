/* Protobuf's text format (gpuenv/pbtxt.h): a recursive-descent reader over
 * a cursor that counts lines and columns.  Each message's fields are
 * gathered in a heap vector while it is read and copied into the arena when
 * its closing brace is reached, so the tree is one arena and the parse
 * allocates nothing per field on the heap that outlives it. */
#include "gpuenv/pbtxt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct cur {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *file;
	const char *p, *end;
	unsigned line, col;
	size_t nfields; /* in the whole file */
};

struct vec {
	gpuenv_pbtxt_field_t *v;
	size_t n, cap;
};

static int err(struct cur *c, unsigned line, unsigned col, const char *hint, const char *fmt, ...)
	GPUENV_PRINTF(5, 6);

static int err(struct cur *c, unsigned line, unsigned col, const char *hint, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	gpuenv_fail(c->ctx, GPUENV_ESYNTAX, c->file, line, col, "%s", msg);
	if (hint)
		gpuenv_hint(c->ctx, "%s", hint);
	return GPUENV_ESYNTAX;
}

static bool is_ident_start(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static bool is_ident(char ch)
{
	return is_ident_start(ch) || (ch >= '0' && ch <= '9');
}

/* A number as protobuf's text format writes one (after any '-'): decimal,
 * octal or hex integers, floats with a fraction and/or an exponent, with an
 * optional f/F suffix on floats and decimals. */
static bool number_ok(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	if (n >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
		for (i = 2; i < n && gpuenv_hex_digit(s[i]) >= 0; i++)
			;
		return i == n && n > 2;
	}
	while (i < n && gpuenv_is_digit(s[i]))
		i++, digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && gpuenv_is_digit(s[i]); i++)
			digits++;
	if (!digits)
		return false;
	if (i < n && (s[i] | 0x20) == 'e') {
		size_t e0;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (e0 = i; i < n && gpuenv_is_digit(s[i]); i++)
			;
		if (i == e0)
			return false;
	}
	if (i < n && (s[i] | 0x20) == 'f')
		i++;
	return i == n;
}

static void advance(struct cur *c, size_t n)
{
	for (size_t i = 0; i < n && c->p < c->end; i++, c->p++) {
		if (*c->p == '\n') {
			c->line++;
			c->col = 1;
		} else if (((unsigned char)*c->p & 0xc0) != 0x80)
			c->col++; /* a column per character, not per UTF-8 byte */
	}
}

/* Whitespace and # comments. */
static void skip_ws(struct cur *c)
{
	while (c->p < c->end) {
		char ch = *c->p;
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v')
			advance(c, 1);
		else if (ch == '#') {
			while (c->p < c->end && *c->p != '\n')
				advance(c, 1);
		} else
			break;
	}
}

/* What the next character looks like, for messages ("'}'", "end of file"). */
static const char *seen(struct cur *c, char *buf, size_t n)
{
	if (c->p >= c->end)
		return "the end of the file";
	unsigned char ch = (unsigned char)*c->p;
	if (ch >= 0x21 && ch < 0x7f)
		snprintf(buf, n, "'%c'", ch);
	else
		snprintf(buf, n, "byte 0x%02x", ch);
	return buf;
}

static int vec_push(struct cur *c, struct vec *v, const gpuenv_pbtxt_field_t *f)
{
	if (c->nfields >= GPUENV_PBTXT_MAX_FIELDS)
		return gpuenv_fail(c->ctx, GPUENV_ETOOBIG, c->file, f->line, f->col,
			"more than %u fields in one file", GPUENV_PBTXT_MAX_FIELDS);
	int rc = gpuenv_array_grow(c->ctx, NULL, &v->v, &v->cap, v->n + 1, sizeof(*v->v),
		GPUENV_PBTXT_MAX_FIELDS, "reading a protobuf text file");
	if (rc)
		return rc;
	v->v[v->n++] = *f;
	c->nfields++;
	return 0;
}

static int utf8_put(char *o, size_t *k, unsigned long cp)
{
	if (cp >= 0xd800 && cp <= 0xdfff)
		return -1;
	if (cp < 0x80)
		o[(*k)++] = (char)cp;
	else if (cp < 0x800) {
		o[(*k)++] = (char)(0xc0 | (cp >> 6));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		o[(*k)++] = (char)(0xe0 | (cp >> 12));
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp <= 0x10ffff) {
		o[(*k)++] = (char)(0xf0 | (cp >> 18));
		o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else
		return -1;
	return 0;
}

/* One quoted string at c->p, decoded and appended to o (room for every
 * byte of the source: a decoded string is never longer). */
static int read_string(struct cur *c, char *o, size_t *k)
{
	char q = *c->p;
	unsigned l0 = c->line, c0 = c->col;

	advance(c, 1);
	for (;;) {
		if (c->p >= c->end || *c->p == '\n')
			return err(c, l0, c0, "close the string with the quote it opened with",
				"a string is not closed before the end of the %s",
				c->p >= c->end ? "file" : "line");
		char ch = *c->p;
		if (ch == q) {
			advance(c, 1);
			return 0;
		}
		if (ch != '\\') {
			o[(*k)++] = ch;
			advance(c, 1);
			continue;
		}
		unsigned el = c->line, ec = c->col;
		advance(c, 1);
		if (c->p >= c->end)
			return err(c, el, ec, NULL, "a backslash at the end of the file");
		ch = *c->p;
		const char *simple = "a\ab\bf\fn\nr\rt\tv\v\\\\''\"\"??";
		const char *s = NULL;
		for (const char *t = simple; *t; t += 2)
			if (*t == ch) {
				s = t;
				break;
			}
		if (s) {
			o[(*k)++] = s[1];
			advance(c, 1);
		} else if (ch >= '0' && ch <= '7') {
			unsigned v = 0;
			for (int i = 0; i < 3 && c->p < c->end && *c->p >= '0' && *c->p <= '7'; i++) {
				v = v * 8 + (unsigned)(*c->p - '0');
				advance(c, 1);
			}
			if (v > 0xff)
				return err(c, el, ec, NULL, "the octal escape \\%o is more than one byte", v);
			o[(*k)++] = (char)v;
		} else if (ch == 'x' || ch == 'X') {
			unsigned v = 0;
			int nd = 0;
			advance(c, 1);
			while (nd < 2 && c->p < c->end && gpuenv_hex_digit(*c->p) >= 0) {
				v = v * 16 + (unsigned)gpuenv_hex_digit(*c->p);
				advance(c, 1);
				nd++;
			}
			if (!nd)
				return err(c, el, ec, NULL, "\\x needs one or two hex digits");
			o[(*k)++] = (char)v;
		} else if (ch == 'u' || ch == 'U') {
			int want = ch == 'u' ? 4 : 8;
			unsigned long v = 0;
			advance(c, 1);
			for (int i = 0; i < want; i++) {
				if (c->p >= c->end || gpuenv_hex_digit(*c->p) < 0)
					return err(c, el, ec, NULL, "\\%c needs %d hex digits", want == 4 ? 'u' : 'U',
						want);
				v = v * 16 + (unsigned long)gpuenv_hex_digit(*c->p);
				advance(c, 1);
			}
			/* \u escapes take as many bytes as their UTF-8 form; the
			 * source spent at least 6, the output at most 4 */
			if (utf8_put(o, k, v) < 0)
				return err(c, el, ec, NULL, "\\%c%0*lx is not a Unicode scalar value",
					want == 4 ? 'u' : 'U', want, v);
		} else {
			char b[16];
			return err(c, el, ec, "escapes: \\n \\t \\\\ \\\" \\' \\NNN (octal) \\xHH \\uHHHH",
				"unknown escape \\%s", seen(c, b, sizeof b) + (*c->p > 0x20 && *c->p < 0x7f));
		}
	}
}

/* A scalar value: strings (adjacent ones joined), numbers, identifiers. */
static int read_scalar(struct cur *c, gpuenv_pbtxt_field_t *f)
{
	char b[16];

	f->vline = c->line;
	f->vcol = c->col;
	if (c->p < c->end && (*c->p == '"' || *c->p == '\'')) {
		/* decoded strings are no longer than their source: room for the
		 * rest of the file is enough for every adjacent piece */
		size_t room = (size_t)(c->end - c->p) + 1, k = 0;
		char *o = gpuenv_arena_alloc(c->arena, room);
		if (!o)
			return gpuenv_oom(c->ctx, "reading a protobuf text file");
		do {
			int r = read_string(c, o, &k);
			if (r)
				return r;
			skip_ws(c);
		} while (c->p < c->end && (*c->p == '"' || *c->p == '\''));
		o[k] = '\0';
		f->kind = GPUENV_PBTXT_STRING;
		f->value = o;
		f->len = k;
		return 0;
	}
	const char *s = c->p;
	if (c->p < c->end && *c->p == '-') {
		advance(c, 1);
		while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '#'))
			skip_ws(c); /* "- 1" and "-inf" are both allowed */
	}
	if (c->p < c->end && (gpuenv_is_digit(*c->p) || (*c->p == '.' && c->p + 1 < c->end && gpuenv_is_digit(c->p[1])))) {
		const char *ns = c->p;
		bool hex = c->end - ns >= 2 && ns[0] == '0' && (ns[1] | 0x20) == 'x';
		while (c->p < c->end) {
			char ch = *c->p;
			if (is_ident(ch) || ch == '.' ||
				((ch == '+' || ch == '-') && !hex && c->p > ns && (c->p[-1] | 0x20) == 'e'))
				advance(c, 1);
			else
				break;
		}
		if (!number_ok(ns, (size_t)(c->p - ns)))
			return err(c, f->vline, f->vcol, "numbers: 12, -1, 0x1F, 017, 1.5, 2e-3, 1.0f",
				"'%.*s' is not a number", (int)(c->p - ns > 40 ? 40 : c->p - ns), ns);
		f->kind = GPUENV_PBTXT_NUMBER;
	} else if (c->p < c->end && is_ident_start(*c->p)) {
		while (c->p < c->end && is_ident(*c->p))
			advance(c, 1);
		f->kind = GPUENV_PBTXT_IDENT;
		if (*s == '-') {
			/* only -inf / -infinity / -nan as signed identifiers */
			size_t n = (size_t)(c->p - s);
			const char *id = s + 1;
			while (*id == ' ' || *id == '\t')
				id++;
			size_t m = n - (size_t)(id - s);
			if (!((m == 3 && !strncasecmp(id, "inf", 3)) || (m == 8 && !strncasecmp(id, "infinity", 8)) ||
				    (m == 3 && !strncasecmp(id, "nan", 3))))
				return err(c, f->vline, f->vcol, NULL, "'-' before an identifier other than inf or nan");
			f->kind = GPUENV_PBTXT_NUMBER;
		}
	} else
		return err(c, f->vline, f->vcol, "a value is a \"string\", a number or an identifier (an enum value)",
			"expected a value after '%s:', found %s", f->name, seen(c, b, sizeof b));
	/* the value's text without spaces between '-' and the number */
	size_t n = (size_t)(c->p - s);
	char *v = gpuenv_arena_alloc(c->arena, n + 1);
	if (!v)
		return gpuenv_oom(c->ctx, "reading a protobuf text file");
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '#') /* a comment between '-' and the number */
			while (i < n && s[i] != '\n')
				i++;
		else if (!(s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			v[k++] = s[i];
	}
	v[k] = '\0';
	f->value = v;
	f->len = k;
	return 0;
}

static int read_message(struct cur *c, char close, unsigned depth, unsigned line, unsigned col,
	const gpuenv_pbtxt_msg_t **out);

static int read_msg_value(struct cur *c, gpuenv_pbtxt_field_t *f, unsigned depth)
{
	char open = *c->p;
	unsigned l = c->line, co = c->col;
	const gpuenv_pbtxt_msg_t *m;

	f->vline = l;
	f->vcol = co;
	advance(c, 1);
	int r = read_message(c, open == '{' ? '}' : '>', depth + 1, l, co, &m);
	if (r)
		return r;
	f->kind = GPUENV_PBTXT_MESSAGE;
	f->msg = m;
	return 0;
}

/* The field name at c->p: an identifier or [extension.name]. */
static int read_name(struct cur *c, gpuenv_pbtxt_field_t *f)
{
	char b[16];
	const char *s = c->p;

	f->line = c->line;
	f->col = c->col;
	if (*c->p == '[') {
		advance(c, 1);
		while (c->p < c->end && *c->p != ']' && *c->p != '\n')
			advance(c, 1);
		if (c->p >= c->end || *c->p != ']')
			return err(c, f->line, f->col, NULL, "an extension name is not closed with ']'");
		advance(c, 1);
	} else if (is_ident_start(*c->p)) {
		while (c->p < c->end && is_ident(*c->p))
			advance(c, 1);
	} else
		return err(c, f->line, f->col, "a field is NAME: VALUE or NAME { ... }; comments start with #",
			"expected a field name, found %s", seen(c, b, sizeof b));
	f->name = gpuenv_arena_strndup(c->arena, s, (size_t)(c->p - s));
	return f->name ? 0 : gpuenv_oom(c->ctx, "reading a protobuf text file");
}

static int read_field(struct cur *c, struct vec *v, unsigned depth)
{
	gpuenv_pbtxt_field_t f = { 0 };
	char b[16];
	bool colon = false;
	int r = read_name(c, &f);

	if (r)
		return r;
	skip_ws(c);
	if (c->p < c->end && *c->p == ':') {
		colon = true;
		advance(c, 1);
		skip_ws(c);
	}
	if (c->p >= c->end)
		return err(c, f.line, f.col, NULL, "the file ends after the field name '%s'", f.name);
	char ch = *c->p;
	if (ch == '{' || ch == '<')
		r = read_msg_value(c, &f, depth);
	else if (ch == '[') {
		/* a list: one field per element */
		unsigned ll = c->line, lc = c->col;
		if (!colon) {
			/* "name [ {..} ]" needs no colon only for messages */
			advance(c, 1);
			skip_ws(c);
			if (c->p < c->end && (is_ident_start(*c->p) || *c->p == '[') &&
				!(c->p + 1 < c->end && (c->p[1] == ',' || c->p[1] == ']'))) {
				/* "dynamic_batching [ preferred_batch_size: ... ]" */
				const char *q = c->p;
				while (q < c->end && is_ident(*q))
					q++;
				while (q < c->end && (*q == ' ' || *q == '\t'))
					q++;
				if (q < c->end && (*q == ':' || *q == '{' || *q == '<'))
					return err(c, f.line, f.col, "a message's fields go between braces: NAME { FIELD: VALUE ... }",
						"'%s [ ... ]' holds fields, not messages: a list holds values or "
						"{ ... } messages; for one message write '%s { ... }'",
						f.name, f.name);
			}
			if (c->p < c->end && *c->p != ']' && *c->p != '{' && *c->p != '<')
				return err(c, f.line, f.col, "write NAME: [1, 2] for a list of values",
					"a list of values after '%s' needs a ':'", f.name);
		} else {
			advance(c, 1);
			skip_ws(c);
		}
		if (c->p < c->end && *c->p == ']') {
			advance(c, 1);
			goto sep; /* an empty list: no field */
		}
		for (;;) {
			gpuenv_pbtxt_field_t e = f;
			if (c->p >= c->end)
				return err(c, ll, lc, "close the list with ']'", "a list is not closed");
			if (*c->p == '{' || *c->p == '<')
				r = read_msg_value(c, &e, depth);
			else
				r = read_scalar(c, &e);
			if (r || (r = vec_push(c, v, &e)))
				return r;
			skip_ws(c);
			if (c->p < c->end && *c->p == ',') {
				advance(c, 1);
				skip_ws(c);
				continue;
			}
			if (c->p < c->end && *c->p == ']') {
				advance(c, 1);
				break;
			}
			if (c->p >= c->end)
				return err(c, ll, lc, "close the list with ']'", "a list is not closed");
			return err(c, c->line, c->col, "separate list elements with ',' and close the list with ']'",
				"expected ',' or ']' in the list of '%s', found %s", f.name, seen(c, b, sizeof b));
		}
		goto sep;
	} else if (!colon)
		return err(c, f.line, f.col, "a field is NAME: VALUE or NAME { ... }",
			"expected ':' or '{' after the field name '%s', found %s", f.name, seen(c, b, sizeof b));
	else
		r = read_scalar(c, &f);
	if (r || (r = vec_push(c, v, &f)))
		return r;
sep:
	skip_ws(c);
	if (c->p < c->end && (*c->p == ';' || *c->p == ','))
		advance(c, 1);
	return 0;
}

static int read_message(struct cur *c, char close, unsigned depth, unsigned line, unsigned col,
	const gpuenv_pbtxt_msg_t **out)
{
	struct vec v = { 0 };
	gpuenv_pbtxt_msg_t *m;
	int r = 0;

	if (depth > GPUENV_PBTXT_MAX_DEPTH)
		return gpuenv_fail(c->ctx, GPUENV_ETOOBIG, c->file, line, col,
			"messages nested more than %d deep", GPUENV_PBTXT_MAX_DEPTH);
	for (;;) {
		skip_ws(c);
		if (c->p >= c->end) {
			if (close) {
				r = err(c, line, col, "every '{' needs its '}'", "'%c' is not closed before the end of the file",
					close == '}' ? '{' : '<');
				goto out;
			}
			break;
		}
		if (close && *c->p == close) {
			advance(c, 1);
			break;
		}
		if (!close && (*c->p == '}' || *c->p == '>')) {
			r = err(c, c->line, c->col, "remove it, or the '{' it was meant to close is missing",
				"'%c' without an opening '%c'", *c->p, *c->p == '}' ? '{' : '<');
			goto out;
		}
		if ((r = read_field(c, &v, depth)))
			goto out;
	}
	m = gpuenv_arena_calloc(c->arena, 1, sizeof *m);
	gpuenv_pbtxt_field_t *fs = v.n ? gpuenv_arena_alloc(c->arena, v.n * sizeof *fs) : NULL;
	if (!m || (v.n && !fs)) {
		r = gpuenv_oom(c->ctx, "reading a protobuf text file");
		goto out;
	}
	if (v.n)
		memcpy(fs, v.v, v.n * sizeof *fs);
	m->fields = fs;
	m->n = v.n;
	m->line = line;
	m->col = col;
	*out = m;
out:
	gpuenv_free(c->ctx, v.v);
	return r;
}

int gpuenv_pbtxt_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file, const char *text, size_t len,
	const gpuenv_pbtxt_msg_t **out)
{
	struct cur c = { ctx, arena, file, text, text + len, 1, 1, 0 };

	*out = NULL;
	if (len > GPUENV_PBTXT_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0, "%zu bytes: more than the %zu a text file may have",
			len, GPUENV_PBTXT_MAX);
	if (memchr(text, '\0', len)) {
		const char *z = memchr(text, '\0', len);
		c.end = z;
		advance(&c, (size_t)(z - text)); /* for the position */
		return err(&c, c.line, c.col, "a config.pbtxt is text: is this the right file?", "a NUL byte in the text");
	}
	return read_message(&c, 0, 0, 1, 1, out);
}

const gpuenv_pbtxt_field_t *gpuenv_pbtxt_nth(const gpuenv_pbtxt_msg_t *m, const char *name, size_t i)
{
	if (!m)
		return NULL;
	for (size_t k = 0; k < m->n; k++)
		if (!strcmp(m->fields[k].name, name) && i-- == 0)
			return &m->fields[k];
	return NULL;
}

const gpuenv_pbtxt_field_t *gpuenv_pbtxt_find(const gpuenv_pbtxt_msg_t *m, const char *name, size_t *count)
{
	const gpuenv_pbtxt_field_t *first = NULL;
	size_t n = 0;

	for (size_t k = 0; m && k < m->n; k++)
		if (!strcmp(m->fields[k].name, name)) {
			if (!first)
				first = &m->fields[k];
			n++;
		}
	if (count)
		*count = n;
	return first;
}

static const char *kind_name(gpuenv_pbtxt_kind_t k)
{
	switch (k) {
	case GPUENV_PBTXT_STRING:
		return "a string";
	case GPUENV_PBTXT_NUMBER:
		return "a number";
	case GPUENV_PBTXT_IDENT:
		return "an identifier";
	case GPUENV_PBTXT_MESSAGE:
		return "a message";
	}
	return "a value";
}

int gpuenv_pbtxt_int(gpuenv_ctx_t *ctx, const char *file, const gpuenv_pbtxt_field_t *f, int64_t *out)
{
	if (f->kind != GPUENV_PBTXT_NUMBER)
		return gpuenv_fail(ctx, GPUENV_ETYPE, file, f->vline, f->vcol, "%s: expected an integer, got %s",
			f->name, kind_name(f->kind));
	const char *s = f->value;
	bool neg = *s == '-';
	int base = 10;
	uint64_t v = 0;

	s += neg;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && s[1])
		base = 8;
	if (!*s)
		goto bad;
	for (; *s; s++) {
		int d = base == 16 ? gpuenv_hex_digit(*s) : (*s >= '0' && *s <= '9' ? *s - '0' : -1);
		if (d < 0 || d >= base)
			goto bad;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			goto range;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if ((!neg && v > (uint64_t)INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1))
		goto range;
	*out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return 0;
bad:
	return gpuenv_fail(ctx, GPUENV_ETYPE, file, f->vline, f->vcol, "%s: expected an integer, got '%s'", f->name,
		f->value);
range:
	return gpuenv_fail(ctx, GPUENV_ETYPE, file, f->vline, f->vcol, "%s: %s does not fit in 64 bits", f->name,
		f->value);
}

int gpuenv_pbtxt_bool(gpuenv_ctx_t *ctx, const char *file, const gpuenv_pbtxt_field_t *f, bool *out)
{
	static const char *const yes[] = { "true", "True", "t", "1" }, *const no[] = { "false", "False", "f", "0" };

	if (f->kind == GPUENV_PBTXT_IDENT || f->kind == GPUENV_PBTXT_NUMBER)
		for (size_t i = 0; i < 4; i++) {
			if (!strcmp(f->value, yes[i])) {
				*out = true;
				return 0;
			}
			if (!strcmp(f->value, no[i])) {
				*out = false;
				return 0;
			}
		}
	return gpuenv_fail(ctx, GPUENV_ETYPE, file, f->vline, f->vcol, "%s: expected true or false, got %s%s%s%s",
		f->name, kind_name(f->kind), f->value ? " '" : "", f->value ? f->value : "", f->value ? "'" : "");
}
