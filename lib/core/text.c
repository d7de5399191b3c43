/* Text helpers shared by every module: the one documented way bytes that are
 * not valid text are written (docs/probe-schema.md, "Strings") and the edit
 * distance behind "did you mean". */
#include "gpuenv/core.h"

#include <errno.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the byte at p
 * does not start one: overlong forms, surrogates and code points past
 * U+10FFFF are invalid, as RFC 3629 says. */
size_t gpuenv_utf8_seq(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char c;
	size_t k;
	uint32_t cp;

	if (!n)
		return 0;
	c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, cp = c & 0x07;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		(cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

size_t gpuenv_utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Printable ASCII but the backslash: the bytes almost every string is made
 * of, copied as they are whatever the flags. */
static inline bool plain_ascii(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

bool gpuenv_text_valid(const char *s, size_t n, unsigned flags)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t k;
		if (plain_ascii(c)) {
			i++;
			continue;
		}
		if (c == '\\' || c == 0)
			return false;
		if ((flags & GPUENV_ESC_CONTROL) && ((c < 0x20 && c != '\t') || c == 0x7f))
			return false;
		k = gpuenv_utf8_seq(s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

static const char hexdig[] = "0123456789abcdef";

int gpuenv_text_escape(gpuenv_buf_t *out, const char *s, size_t n, unsigned flags)
{
	size_t run = 0; /* start of the bytes copied as they are */
	int r;

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (plain_ascii(c)) {
			i++;
			continue;
		}
		size_t k = gpuenv_utf8_seq(s + i, n - i);
		bool esc = !k || c == 0 || c == '\\' ||
			((flags & GPUENV_ESC_CONTROL) && ((c < 0x20 && c != '\t') || c == 0x7f));
		if (!esc) {
			i += k;
			continue;
		}
		if (i > run && (r = gpuenv_buf_append(out, s + run, i - run)) < 0)
			return r;
		if (c == '\\') {
			r = gpuenv_buf_append(out, "\\\\", 2);
		} else {
			char x[4] = { '\\', 'x', hexdig[c >> 4], hexdig[c & 15] };
			r = gpuenv_buf_append(out, x, 4);
		}
		if (r < 0)
			return r;
		run = ++i;
	}
	if (n > run && (r = gpuenv_buf_append(out, s + run, n - run)) < 0)
		return r;
	/* an empty result still gets its NUL */
	return gpuenv_buf_reserve(out, 0);
}

int gpuenv_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t gpuenv_text_unescape(char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\\') {
			s[o++] = '\\';
			i++;
		} else if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && gpuenv_hex_digit(s[i + 2]) >= 0 &&
			gpuenv_hex_digit(s[i + 3]) >= 0) {
			s[o++] = (char)(gpuenv_hex_digit(s[i + 2]) << 4 | gpuenv_hex_digit(s[i + 3]));
			i += 3;
		} else {
			s[o++] = s[i];
		}
	}
	if (o < n)
		s[o] = '\0';
	return o;
}

size_t gpuenv_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[GPUENV_EDIT_DISTANCE_MAX + 1], prev;

	if (la > GPUENV_EDIT_DISTANCE_MAX || lb > GPUENV_EDIT_DISTANCE_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j], best = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}
