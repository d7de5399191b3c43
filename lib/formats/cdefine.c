/* cdefine.c: "#define NAME value" in C headers (cudnn_version.h, nccl.h,
 * cuda.h, patchlevel.h) and version-shaped strings.  Pure functions over
 * bytes (gpuenv/cdefine.h). */
#include "gpuenv/cdefine.h"

#include <string.h>

/* The value of "#define NAME value" (comments cut), or a NULL slice. */
static gpuenv_str_t header_value(const char *text, size_t len, const char *name)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		const char *p = text + i, *end = text + e;
		i = e + 1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p != '#')
			continue;
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(end - p) < 6 || memcmp(p, "define", 6) != 0)
			continue;
		p += 6;
		if (p >= end || (*p != ' ' && *p != '\t'))
			continue;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(end - p) < nl || memcmp(p, name, nl) != 0)
			continue;
		p += nl;
		if (p < end && *p != ' ' && *p != '\t')
			continue; /* a longer name */
		const char *q = p;
		for (; q < end; q++)
			if (q + 1 < end && q[0] == '/' && (q[1] == '*' || q[1] == '/'))
				break;
		return gpuenv_str_trim(gpuenv_str_n(p, (size_t)(q - p)));
	}
	return GPUENV_STR_NULL;
}

bool gpuenv_cdefine_int(const char *text, size_t len, const char *name, long *out)
{
	gpuenv_str_t v = header_value(text, len, name);
	uint64_t n;

	/* "(9)" and "13000U" are how some headers write plain numbers */
	while (v.len && v.ptr[0] == '(' && v.ptr[v.len - 1] == ')')
		v = gpuenv_str_trim(gpuenv_str_n(v.ptr + 1, v.len - 2));
	while (v.len && (v.ptr[v.len - 1] == 'U' || v.ptr[v.len - 1] == 'u' ||
		v.ptr[v.len - 1] == 'L' || v.ptr[v.len - 1] == 'l'))
		v.len--;
	if (!v.ptr || !gpuenv_str_to_u64(v, &n) || n > 0x7fffffff)
		return false;
	*out = (long)n;
	return true;
}

gpuenv_str_t gpuenv_cdefine_str(const char *text, size_t len, const char *name)
{
	gpuenv_str_t v = header_value(text, len, name);

	if (v.len >= 2 && v.ptr[0] == '"' && v.ptr[v.len - 1] == '"')
		return gpuenv_str_n(v.ptr + 1, v.len - 2);
	return GPUENV_STR_NULL;
}

bool gpuenv_dotted_valid(gpuenv_str_t s, bool need_dot)
{
	bool dot = false, digit = false;

	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		if (s.ptr[i] >= '0' && s.ptr[i] <= '9') {
			digit = true;
		} else if (s.ptr[i] == '.' && digit) {
			dot = true;
			digit = false;
		} else {
			return false;
		}
	}
	return digit && (dot || !need_dot);
}
