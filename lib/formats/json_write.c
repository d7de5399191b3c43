/* JSON text of a jansson value, written as json_dumps(v, JSON_INDENT(n))
 * writes it, byte for byte, into a buffer (gpuenv/json.h says why). */
#include "gpuenv/json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define JSON_WRITE_MAX_DEPTH 2048

static void indent(gpuenv_buf_t *b, unsigned n, unsigned depth, bool space)
{
	static const char spaces[] = "                                                                ";
	size_t k = (size_t)n * depth;

	if (!n) {
		if (space)
			gpuenv_buf_append(b, " ", 1);
		return;
	}
	gpuenv_buf_append(b, "\n", 1);
	for (; k > sizeof(spaces) - 1; k -= sizeof(spaces) - 1)
		gpuenv_buf_append(b, spaces, sizeof(spaces) - 1);
	gpuenv_buf_append(b, spaces, k);
}

/* A string as jansson writes one: '"', '\\', the C0 controls escaped (the
 * short forms where JSON has one, else \u00XX in capitals), everything else
 * as it is (UTF-8 kept).  -EINVAL for bytes that are not UTF-8, which
 * jansson refuses too. */
static int string(gpuenv_buf_t *b, const char *s, size_t n)
{
	size_t run = 0, i = 0;

	gpuenv_buf_append(b, "\"", 1);
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[8];

		if (c >= 0x80) {
			size_t k = gpuenv_utf8_seq(s + i, n - i);
			if (!k)
				return -EINVAL;
			i += k;
			continue;
		}
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (c < 0x20) {
				snprintf(u, sizeof(u), "\\u%04X", c);
				esc = u;
			}
		}
		if (!esc) {
			i++;
			continue;
		}
		gpuenv_buf_append(b, s + run, i - run);
		gpuenv_buf_append(b, esc, strlen(esc));
		run = ++i;
	}
	gpuenv_buf_append(b, s + run, n - run);
	gpuenv_buf_append(b, "\"", 1);
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

static int value(gpuenv_buf_t *b, const json_t *v, unsigned n, unsigned depth)
{
	char num[32];
	int r;

	if (depth > JSON_WRITE_MAX_DEPTH)
		return -E2BIG;
	switch (json_typeof(v)) {
	case JSON_NULL:
		gpuenv_buf_append(b, "null", 4);
		return 0;
	case JSON_TRUE:
		gpuenv_buf_append(b, "true", 4);
		return 0;
	case JSON_FALSE:
		gpuenv_buf_append(b, "false", 5);
		return 0;
	case JSON_INTEGER:
		r = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		gpuenv_buf_append(b, num, (size_t)r);
		return 0;
	case JSON_REAL:
		real(b, json_real_value(v));
		return 0;
	case JSON_STRING:
		return string(b, json_string_value(v), json_string_length(v));
	case JSON_ARRAY: {
		size_t cnt = json_array_size(v);
		if (!cnt) {
			gpuenv_buf_append(b, "[]", 2);
			return 0;
		}
		gpuenv_buf_append(b, "[", 1);
		indent(b, n, depth + 1, false);
		for (size_t i = 0; i < cnt; i++) {
			if ((r = value(b, json_array_get(v, i), n, depth + 1)) != 0)
				return r;
			if (i + 1 < cnt) {
				gpuenv_buf_append(b, ",", 1);
				indent(b, n, depth + 1, true);
			}
		}
		indent(b, n, depth, false);
		gpuenv_buf_append(b, "]", 1);
		return 0;
	}
	case JSON_OBJECT: {
		void *it = json_object_iter((json_t *)v);
		if (!it) {
			gpuenv_buf_append(b, "{}", 2);
			return 0;
		}
		gpuenv_buf_append(b, "{", 1);
		indent(b, n, depth + 1, false);
		while (it) {
			/* a key may hold NUL (TOML's "\u0000" = ...): by its length */
			if ((r = string(b, json_object_iter_key(it), json_object_iter_key_len(it))) != 0)
				return r;
			gpuenv_buf_append(b, ": ", 2);
			if ((r = value(b, json_object_iter_value(it), n, depth + 1)) != 0)
				return r;
			it = json_object_iter_next((json_t *)v, it);
			if (it) {
				gpuenv_buf_append(b, ",", 1);
				indent(b, n, depth + 1, true);
			}
		}
		indent(b, n, depth, false);
		gpuenv_buf_append(b, "}", 1);
		return 0;
	}
	}
	return -EINVAL;
}

int gpuenv_json_write(gpuenv_buf_t *b, const json_t *v, unsigned indent_n)
{
	int r = v ? value(b, v, indent_n, 0) : -EINVAL;

	if (r == -EINVAL)
		return gpuenv_fail(b->ctx, -EINVAL, NULL, 0, 0, "a JSON value to write holds text that is not UTF-8");
	if (r == -E2BIG)
		return gpuenv_fail(b->ctx, GPUENV_ETOOBIG, NULL, 0, 0, "a JSON value nested more than %d deep",
			JSON_WRITE_MAX_DEPTH);
	return gpuenv_buf_failed(b) ? b->err : 0;
}
