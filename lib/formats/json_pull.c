/* A pull parser of JSON text (RFC 8259) over a buffer: one token per call,
 * no tree (gpuenv/json_pull.h says what it accepts and why).  One pass over
 * the bytes; a string is copied only when it has an escape. */
#include "gpuenv/json_pull.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what the next token may be */
enum {
	E_VALUE,	  /* a value: the document's, after ':' or after ',' in an array */
	E_VALUE_OR_CLOSE, /* after '[' */
	E_KEY,		  /* after ',' in an object */
	E_KEY_OR_CLOSE,	  /* after '{' */
	E_COLON,	  /* after a key */
	E_AFTER,	  /* after a value inside a container: ',' or its close */
	E_END,		  /* after the document's value: white space only */
	E_DONE,		  /* GPUENV_JP_END returned */
	E_FAILED,	  /* an error was returned (p->i holds its code) */
};

void gpuenv_jp_init(gpuenv_jp_t *p, gpuenv_ctx_t *ctx, gpuenv_str_t text, const char *file, const char *what)
{
	memset(p, 0, sizeof(*p));
	p->ctx = ctx;
	p->file = file;
	p->what = what;
	p->text = text.ptr ? text : gpuenv_str_n("", 0);
	p->expect = E_VALUE;
	p->hold = SIZE_MAX;
	p->mark_line = p->mark_col = 1;
	/* a string's decoded form is never longer than its text */
	gpuenv_buf_init(&p->buf, ctx, text.len + 64);
}

void gpuenv_jp_free(gpuenv_jp_t *p)
{
	gpuenv_buf_free(&p->buf);
}

/* Bytes given back at a time, and kept before the first. */
#define RELEASE_STEP ((size_t)1 << 20)

void gpuenv_jp_release(gpuenv_jp_t *p, void *text)
{
	p->release = text;
}

void gpuenv_jp_hold(gpuenv_jp_t *p, size_t off)
{
	p->hold = off;
}

void gpuenv_jp_where(const gpuenv_jp_t *p, size_t off, unsigned *line, unsigned *col)
{
	const unsigned char *s = (const unsigned char *)p->text.ptr;
	unsigned l = p->mark_line, c = p->mark_col;

	if (off > p->text.len)
		off = p->text.len;
	if (off < p->mark) { /* released: its lines were not counted */
		*line = *col = 0;
		return;
	}
	for (size_t i = p->mark; i < off; i++) {
		if (s[i] == '\n') {
			l++;
			c = 1;
		} else if ((s[i] & 0xc0) != 0x80) { /* not a continuation byte */
			c++;
		}
	}
	*line = l;
	*col = c;
}

int gpuenv_jp_fail(gpuenv_jp_t *p, int code, size_t off, const char *fmt, ...)
{
	char msg[sizeof(p->ctx->err.msg)];
	unsigned line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gpuenv_jp_where(p, off, &line, &col);
	if (p->what)
		return gpuenv_fail(p->ctx, code, p->file, line, col, "%s: %s", p->what, msg);
	return gpuenv_fail(p->ctx, code, p->file, line, col, "%s", msg);
}

/* An error that ends the parse: every later call returns it. */
static int stop(gpuenv_jp_t *p, int code)
{
	p->expect = E_FAILED;
	p->i = code;
	return code;
}

#define SYNTAX(p, off, ...) stop((p), gpuenv_jp_fail((p), GPUENV_ESYNTAX, (off), __VA_ARGS__))

/* The four hex digits at s[i..i+4) as a number, or -1. */
static long hex4(const char *s, size_t n, size_t i)
{
	long v = 0;

	if (n - i < 4)
		return -1;
	for (size_t k = i; k < i + 4; k++) {
		int d = gpuenv_hex_digit(s[k]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* The string whose '"' is at p->pos, into p->str. */
static int read_string(gpuenv_jp_t *p)
{
	const char *s = p->text.ptr;
	const unsigned char *u = (const unsigned char *)s;
	size_t n = p->text.len, i = p->pos + 1, run = i;
	bool copied = false;

	for (;;) {
		if (i >= n)
			return SYNTAX(p, p->tok, "a string is not closed (the text ends inside it): add the closing '\"'");
		unsigned char c = u[i];
		if (c == '"')
			break;
		if (c < 0x20)
			return SYNTAX(p, i, "a control character (0x%02x) in a string: write it as \\u%04x", c, c);
		if (c < 0x80 && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t k = gpuenv_utf8_seq(s + i, n - i); /* RFC 3629: no overlong form, no surrogate */
			if (!k)
				return SYNTAX(p, i, "a string is not valid UTF-8 (byte 0x%02x)", c);
			i += k;
			continue;
		}
		/* an escape: what came before it goes into the buffer first */
		if (!copied) {
			gpuenv_buf_reset(&p->buf);
			copied = true;
		}
		gpuenv_buf_append(&p->buf, s + run, i - run);
		size_t at = i++;
		if (i >= n)
			return SYNTAX(p, p->tok, "a string is not closed (the text ends inside it): add the closing '\"'");
		char e = s[i++], one = 0;
		switch (e) {
		case '"': case '\\': case '/': one = e; break;
		case 'b': one = '\b'; break;
		case 'f': one = '\f'; break;
		case 'n': one = '\n'; break;
		case 'r': one = '\r'; break;
		case 't': one = '\t'; break;
		case 'u': {
			long cp = hex4(s, n, i), lo;
			char utf[4];
			if (cp < 0)
				return SYNTAX(p, at, "\\u must be followed by four hex digits");
			i += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return SYNTAX(p, at, "\\u%04lX is a low surrogate without a high one before it", cp);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (n - i < 6 || s[i] != '\\' || s[i + 1] != 'u' || (lo = hex4(s, n, i + 2)) < 0xdc00 ||
					lo > 0xdfff)
					return SYNTAX(p, at,
						"\\u%04lX is a high surrogate without a low one (\\uDC00 to \\uDFFF) after it",
						cp);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			}
			if (cp == 0)
				return SYNTAX(p, at, "\\u0000 in a string is not accepted (text cannot hold a NUL)");
			gpuenv_buf_append(&p->buf, utf, gpuenv_utf8_put(utf, (uint32_t)cp));
			break;
		}
		default:
			if (e > 0x20 && e < 0x7f)
				return SYNTAX(p, at, "invalid escape '\\%c' in a string (JSON has \\\" \\\\ \\/ \\b \\f "
					"\\n \\r \\t \\uXXXX)", e);
			return SYNTAX(p, at, "invalid escape in a string: a backslash before byte 0x%02x",
				(unsigned char)e);
		}
		if (one)
			gpuenv_buf_append(&p->buf, &one, 1);
		run = i;
	}
	if (copied) {
		gpuenv_buf_append(&p->buf, s + run, i - run);
		if (gpuenv_buf_failed(&p->buf))
			return stop(p, gpuenv_oom(p->ctx, "decoding a JSON string"));
		p->str = gpuenv_str_n(p->buf.data, p->buf.len);
	} else {
		p->str = gpuenv_str_n(s + p->pos + 1, i - p->pos - 1);
	}
	p->pos = i + 1;
	return 0;
}

/* The number at p->pos (RFC 8259 section 6). */
static int read_number(gpuenv_jp_t *p)
{
	const char *s = p->text.ptr;
	size_t n = p->text.len, i = p->pos, start = i;
	bool neg = false, real = false;

	if (s[i] == '-') {
		neg = true;
		i++;
	}
	if (i >= n || !gpuenv_is_digit(s[i]))
		return SYNTAX(p, i, "a digit must follow '-'");
	if (s[i] == '0')
		i++;
	else
		while (i < n && gpuenv_is_digit(s[i]))
			i++;
	if (i < n && s[i] == '.') {
		real = true;
		if (++i >= n || !gpuenv_is_digit(s[i]))
			return SYNTAX(p, i, "a digit must follow a number's '.'");
		while (i < n && gpuenv_is_digit(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		real = true;
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !gpuenv_is_digit(s[i]))
			return SYNTAX(p, i, "a digit must follow a number's exponent");
		while (i < n && gpuenv_is_digit(s[i]))
			i++;
	}
	p->num = gpuenv_str_n(s + start, i - start);
	p->pos = i;
	if (!real) {
		/* int64_t: magnitude up to 2^63 - 1, or 2^63 when negative */
		uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		for (size_t k = start + neg; k < i; k++) {
			unsigned d = (unsigned)(s[k] - '0');
			if (v > (lim - d) / 10)
				return SYNTAX(p, start, "the integer " GPUENV_STR_FMT " is out of range (64 bits)",
					(int)(p->num.len > 40 ? 40 : p->num.len), p->num.ptr);
			v = v * 10 + d;
		}
		p->i = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
		return GPUENV_JP_INTEGER;
	}
	/* strtod reads the locale's decimal point: give it that one */
	char dp = localeconv()->decimal_point[0];
	gpuenv_buf_reset(&p->buf);
	gpuenv_buf_append(&p->buf, p->num.ptr, p->num.len);
	if (gpuenv_buf_failed(&p->buf))
		return stop(p, gpuenv_oom(p->ctx, "reading a JSON number"));
	if (dp && dp != '.') {
		char *dot = memchr(p->buf.data, '.', p->buf.len);
		if (dot)
			*dot = dp;
	}
	p->d = strtod(p->buf.data, NULL);
	if (isinf(p->d))
		return SYNTAX(p, start, "the number " GPUENV_STR_FMT " is too large for a double",
			(int)(p->num.len > 40 ? 40 : p->num.len), p->num.ptr);
	return GPUENV_JP_REAL;
}

/* Where the token at pos begins for a message: the end of the text, or the byte. */
static int unexpected(gpuenv_jp_t *p, const char *wanted)
{
	const unsigned char *u = (const unsigned char *)p->text.ptr;

	if (p->pos >= p->text.len)
		return SYNTAX(p, p->pos, "the text ends where %s was expected", wanted);
	if (u[p->pos] > 0x20 && u[p->pos] < 0x7f)
		return SYNTAX(p, p->pos, "'%c' where %s was expected", u[p->pos], wanted);
	return SYNTAX(p, p->pos, "byte 0x%02x where %s was expected", u[p->pos], wanted);
}

/* A value is complete: what may follow it. */
static void after_value(gpuenv_jp_t *p)
{
	p->expect = p->depth ? E_AFTER : E_END;
}

static bool in_object(const gpuenv_jp_t *p)
{
	unsigned d = p->depth - 1;

	return p->stack[d / 8] & (1u << (d % 8));
}

static int open_container(gpuenv_jp_t *p, bool object)
{
	unsigned d = p->depth;

	if (d >= GPUENV_JP_MAX_DEPTH)
		return SYNTAX(p, p->pos, "more than %d arrays and objects inside each other", GPUENV_JP_MAX_DEPTH);
	if (object)
		p->stack[d / 8] |= (unsigned char)(1u << (d % 8));
	else
		p->stack[d / 8] &= (unsigned char)~(1u << (d % 8));
	p->depth++;
	p->pos++;
	p->expect = object ? E_KEY_OR_CLOSE : E_VALUE_OR_CLOSE;
	return object ? GPUENV_JP_OBJECT : GPUENV_JP_ARRAY;
}

static int close_container(gpuenv_jp_t *p)
{
	bool object = in_object(p);

	p->depth--;
	p->pos++;
	after_value(p);
	return object ? GPUENV_JP_OBJECT_END : GPUENV_JP_ARRAY_END;
}

static int literal(gpuenv_jp_t *p, const char *word, int tok)
{
	size_t k = strlen(word);

	if (p->text.len - p->pos < k || memcmp(p->text.ptr + p->pos, word, k))
		return unexpected(p, "a value (a string, a number, an object, an array, true, false or null)");
	p->pos += k;
	after_value(p);
	return tok;
}

static int value(gpuenv_jp_t *p)
{
	int r;

	switch (p->pos < p->text.len ? p->text.ptr[p->pos] : 0) {
	case '{':
		return open_container(p, true);
	case '[':
		return open_container(p, false);
	case '"':
		if ((r = read_string(p)))
			return r;
		after_value(p);
		return GPUENV_JP_STRING;
	case 't':
		return literal(p, "true", GPUENV_JP_TRUE);
	case 'f':
		return literal(p, "false", GPUENV_JP_FALSE);
	case 'n':
		return literal(p, "null", GPUENV_JP_NULL);
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		if ((r = read_number(p)) < 0)
			return r;
		after_value(p);
		return r;
	default:
		return unexpected(p, "a value (a string, a number, an object, an array, true, false or null)");
	}
}

/* What the parser has read past, given back (gpuenv_jp_release): the
 * lines counted up to there first, so that messages keep their place. */
static void release_behind(gpuenv_jp_t *p)
{
	size_t to = p->pos < p->hold ? p->pos : p->hold;

	if (to < p->released + RELEASE_STEP)
		return;
	gpuenv_jp_where(p, to, &p->mark_line, &p->mark_col);
	p->mark = to;
	gpuenv_mem_release(p->release, p->text.len, p->released, to);
	p->released = to;
}

int gpuenv_jp_next(gpuenv_jp_t *p)
{
	const char *s = p->text.ptr;
	size_t n = p->text.len;
	int r;

	if (p->release)
		release_behind(p);
	for (;;) {
		while (p->pos < n && (s[p->pos] == ' ' || s[p->pos] == '\n' || s[p->pos] == '\r' || s[p->pos] == '\t'))
			p->pos++;
		p->tok = p->pos;
		char c = p->pos < n ? s[p->pos] : 0;
		switch (p->expect) {
		case E_FAILED:
			return (int)p->i;
		case E_DONE:
			return GPUENV_JP_END;
		case E_END:
			if (p->pos < n)
				return SYNTAX(p, p->pos, "more text after the end of the value");
			p->expect = E_DONE;
			return GPUENV_JP_END;
		case E_AFTER:
			if (p->pos < n && c == ',') {
				p->pos++;
				p->expect = in_object(p) ? E_KEY : E_VALUE;
				continue;
			}
			if (p->pos < n && c == (in_object(p) ? '}' : ']'))
				return close_container(p);
			return unexpected(p, in_object(p) ? "',' or '}'" : "',' or ']'");
		case E_COLON:
			if (p->pos < n && c == ':') {
				p->pos++;
				p->expect = E_VALUE;
				continue;
			}
			return unexpected(p, "':' after a key");
		case E_KEY_OR_CLOSE:
			if (p->pos < n && c == '}')
				return close_container(p);
			/* fall through */
		case E_KEY:
			if (p->pos >= n || c != '"')
				return unexpected(p, p->expect == E_KEY ? "a key (a string) after ','" : "a key (a string) or '}'");
			if ((r = read_string(p)))
				return r;
			p->expect = E_COLON;
			return GPUENV_JP_KEY;
		case E_VALUE_OR_CLOSE:
			if (p->pos < n && c == ']')
				return close_container(p);
			/* fall through */
		default:
			return value(p);
		}
	}
}

int gpuenv_jp_skip(gpuenv_jp_t *p, int tok)
{
	unsigned depth = p->depth;

	if (tok != GPUENV_JP_OBJECT && tok != GPUENV_JP_ARRAY)
		return 0;
	while (p->depth >= depth) {
		int r = gpuenv_jp_next(p);
		if (r < 0)
			return r;
	}
	return 0;
}
