/* JSON text of a jansson value, written as json_dumps(v, JSON_INDENT(n))
 * writes it, byte for byte, into a buffer (gpuenv/json.h says why). */
#include "gpuenv/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#define JSON_WRITE_MAX_DEPTH 2048

static void indent(gpuenv_buf_t *b, unsigned n, unsigned depth, bool space)
{
	static const char nl[] = "\n                                                               ";
	size_t k = (size_t)n * depth + 1;

	if (!n) {
		if (space)
			gpuenv_buf_append(b, " ", 1);
		return;
	}
	if (k <= sizeof(nl) - 1) { /* the newline and the spaces in one append */
		gpuenv_buf_append(b, nl, k);
		return;
	}
	gpuenv_buf_append(b, nl, sizeof(nl) - 1);
	for (k -= sizeof(nl) - 1; k > sizeof(nl) - 2; k -= sizeof(nl) - 2)
		gpuenv_buf_append(b, nl + 1, sizeof(nl) - 2);
	gpuenv_buf_append(b, nl + 1, k);
}

/* What a byte needs in a JSON string: 0 as it is, 1 the start of a UTF-8
 * sequence to check, else the character after the backslash ('u': \u00XX). */
static const unsigned char ESC[256] = {
	['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
	[0x00] = 'u', [0x01] = 'u', [0x02] = 'u', [0x03] = 'u', [0x04] = 'u', [0x05] = 'u',
	[0x06] = 'u', [0x07] = 'u', [0x0b] = 'u', [0x0e] = 'u', [0x0f] = 'u', [0x10] = 'u',
	[0x11] = 'u', [0x12] = 'u', [0x13] = 'u', [0x14] = 'u', [0x15] = 'u', [0x16] = 'u',
	[0x17] = 'u', [0x18] = 'u', [0x19] = 'u', [0x1a] = 'u', [0x1b] = 'u', [0x1c] = 'u',
	[0x1d] = 'u', [0x1e] = 'u', [0x1f] = 'u',
	['"'] = '"', ['\\'] = '\\',
	[0x80 ... 0xff] = 1,
};

/* A string as jansson writes one: '"', '\\', the C0 controls escaped (the
 * short forms where JSON has one, else \u00XX in capitals), everything else
 * as it is (UTF-8 kept).  -EINVAL for bytes that are not UTF-8, which
 * jansson refuses too.  Written straight into room reserved for the worst
 * case (6 bytes a byte), one byte-class lookup a byte. */
static int string(gpuenv_buf_t *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;
	char *o;

	int r = n > (SIZE_MAX - 2) / 6 ? GPUENV_ETOOBIG : gpuenv_buf_reserve(b, 6 * n + 2);

	if (r) { /* sticky, as a failed append is: the writer's end returns it */
		if (!b->err)
			b->err = r;
		return 0;
	}
	o = b->data + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i], e = ESC[c];
		if (!e) {
			*o++ = (char)c;
			i++;
		} else if (e == 1) {
			size_t k = gpuenv_utf8_seq(s + i, n - i);
			if (!k)
				return -EINVAL;
			memcpy(o, s + i, k);
			o += k;
			i += k;
		} else {
			*o++ = '\\';
			*o++ = (char)e;
			if (e == 'u') {
				memcpy(o, "00", 2);
				o[2] = hex[c >> 4];
				o[3] = hex[c & 15];
				o += 4;
			}
			i++;
		}
	}
	*o++ = '"';
	b->len = (size_t)(o - b->data);
	b->data[b->len] = '\0';
	return 0;
}

/* A real as jansson's jsonp_dtostr writes it: %.17g, a ".0" where that
 * reads as an integer, the exponent without '+' and leading zeros. */
static void real(gpuenv_buf_t *b, double d)
{
	char t[64], o[64];
	size_t k = 0;
	int n = snprintf(t, sizeof(t), "%.17g", d);

	if (n < 0 || (size_t)n >= sizeof(t))
		n = 0;
	for (int i = 0; i < n; i++) {
		o[k++] = t[i];
		if (t[i] != 'e')
			continue;
		i++;
		if (t[i] == '-')
			o[k++] = t[i++];
		else if (t[i] == '+')
			i++;
		while (t[i] == '0' && t[i + 1])
			i++;
		while (i < n)
			o[k++] = t[i++];
		break;
	}
	if (!memchr(o, '.', k) && !memchr(o, 'e', k)) {
		o[k++] = '.';
		o[k++] = '0';
	}
	gpuenv_buf_append(b, o, k);
}

/* ---- the emitter: JSON text written as it is produced ------------------ */

void gpuenv_json_out_init(gpuenv_json_out_t *o, gpuenv_buf_t *b, unsigned indent_n)
{
	memset(o, 0, sizeof(*o));
	o->b = b;
	o->indent = indent_n;
}

/* Before a member: nothing for the document's value or a value after its
 * key; else the separator (none before a container's first member). */
static void member(gpuenv_json_out_t *o)
{
	if (o->keyed) {
		o->keyed = false;
		return;
	}
	if (!o->depth)
		return;
	if (!o->empty)
		gpuenv_buf_append(o->b, ",", 1);
	indent(o->b, o->indent, o->depth, !o->empty);
	o->empty = false;
}

void gpuenv_json_out_keyn(gpuenv_json_out_t *o, const char *key, size_t n)
{
	member(o);
	if (string(o->b, key, n) && !o->err)
		o->err = -EINVAL;
	gpuenv_buf_append(o->b, ": ", 2);
	o->keyed = true;
}

void gpuenv_json_out_key(gpuenv_json_out_t *o, const char *key)
{
	gpuenv_json_out_keyn(o, key, strlen(key));
}

void gpuenv_json_out_open(gpuenv_json_out_t *o, char brace)
{
	member(o);
	if (++o->depth > JSON_WRITE_MAX_DEPTH && !o->err)
		o->err = -E2BIG;
	gpuenv_buf_append(o->b, brace == '[' ? "[" : "{", 1);
	o->empty = true;
}

void gpuenv_json_out_close(gpuenv_json_out_t *o, char brace)
{
	o->depth--;
	if (!o->empty)
		indent(o->b, o->indent, o->depth, false);
	gpuenv_buf_append(o->b, brace == ']' ? "]" : "}", 1);
	o->empty = false;
}

void gpuenv_json_out_strn(gpuenv_json_out_t *o, const char *s, size_t n)
{
	member(o);
	if (!s)
		gpuenv_buf_append(o->b, "null", 4);
	else if (string(o->b, s, n) && !o->err)
		o->err = -EINVAL;
}

void gpuenv_json_out_str(gpuenv_json_out_t *o, const char *s)
{
	gpuenv_json_out_strn(o, s, s ? strlen(s) : 0);
}

void gpuenv_json_out_int(gpuenv_json_out_t *o, long long v)
{
	char num[24], *e = num + sizeof(num), *d = e;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do
		*--d = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--d = '-';
	member(o);
	gpuenv_buf_append(o->b, d, (size_t)(e - d));
}

void gpuenv_json_out_real(gpuenv_json_out_t *o, double d)
{
	member(o);
	real(o->b, d);
}

void gpuenv_json_out_bool(gpuenv_json_out_t *o, bool v)
{
	member(o);
	gpuenv_buf_append(o->b, v ? "true" : "false", v ? 4 : 5);
}

void gpuenv_json_out_null(gpuenv_json_out_t *o)
{
	member(o);
	gpuenv_buf_append(o->b, "null", 4);
}

int gpuenv_json_out_end(gpuenv_json_out_t *o)
{
	if (o->err == -EINVAL)
		return gpuenv_fail(o->b->ctx, -EINVAL, NULL, 0, 0, "a JSON value to write holds text that is not UTF-8");
	if (o->err == -E2BIG)
		return gpuenv_fail(o->b->ctx, GPUENV_ETOOBIG, NULL, 0, 0, "a JSON value nested more than %d deep",
			JSON_WRITE_MAX_DEPTH);
	return gpuenv_buf_failed(o->b) ? o->b->err : 0;
}

/* ---- a jansson value through the emitter -------------------------------- */

static void value(gpuenv_json_out_t *o, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		gpuenv_json_out_null(o);
		return;
	case JSON_TRUE:
	case JSON_FALSE:
		gpuenv_json_out_bool(o, json_is_true(v));
		return;
	case JSON_INTEGER:
		gpuenv_json_out_int(o, (long long)json_integer_value(v));
		return;
	case JSON_REAL:
		gpuenv_json_out_real(o, json_real_value(v));
		return;
	case JSON_STRING:
		gpuenv_json_out_strn(o, json_string_value(v), json_string_length(v));
		return;
	case JSON_ARRAY:
		gpuenv_json_out_open(o, '[');
		for (size_t i = 0, cnt = json_array_size(v); i < cnt && !o->err; i++)
			value(o, json_array_get(v, i));
		gpuenv_json_out_close(o, ']');
		return;
	case JSON_OBJECT:
		gpuenv_json_out_open(o, '{');
		/* a key may hold NUL (TOML's "\u0000" = ...): by its length */
		for (void *it = json_object_iter((json_t *)v); it && !o->err;
		     it = json_object_iter_next((json_t *)v, it)) {
			gpuenv_json_out_keyn(o, json_object_iter_key(it), json_object_iter_key_len(it));
			value(o, json_object_iter_value(it));
		}
		gpuenv_json_out_close(o, '}');
		return;
	}
	if (!o->err)
		o->err = -EINVAL;
}

int gpuenv_json_write(gpuenv_buf_t *b, const json_t *v, unsigned indent_n)
{
	gpuenv_json_out_t o;

	gpuenv_json_out_init(&o, b, indent_n);
	if (!v)
		o.err = -EINVAL;
	else
		value(&o, v);
	return gpuenv_json_out_end(&o);
}
