/* PEP 503 project names: normalization and validity (core metadata's Name). */
#include "gpuenv/pep440.h"

static inline bool is_sep(unsigned char c)
{
	return c == '-' || c == '_' || c == '.';
}

/* The one PEP 503 normalization: every module that compares project names
 * (the wheel-name and requirement parsers, the environment reader, the
 * probe, doctor) calls this, so they agree on every input. */
size_t gpuenv_name_normalize_to(gpuenv_str_t name, char *out, size_t outsz)
{
	size_t n = 0;

	for (size_t i = 0; i < name.len;) {
		unsigned char c = (unsigned char)name.ptr[i];
		if (n + 1 >= outsz)
			return SIZE_MAX;
		if (is_sep(c)) {
			while (i < name.len && is_sep((unsigned char)name.ptr[i]))
				i++;
			out[n++] = '-';
			continue;
		}
		out[n++] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
		i++;
	}
	if (!outsz)
		return SIZE_MAX;
	out[n] = '\0';
	return n;
}

int gpuenv_name_normalize(gpuenv_str_t name, gpuenv_buf_t *out)
{
	size_t need = 0;
	int r;

	/* the exact length first, so a capped buffer fails only when the
	 * normalized name itself does not fit */
	for (size_t i = 0; i < name.len; i++)
		need += !(is_sep((unsigned char)name.ptr[i]) && i &&
			is_sep((unsigned char)name.ptr[i - 1]));
	if ((r = gpuenv_buf_reserve(out, need)))
		return r;
	gpuenv_name_normalize_to(name, out->data + out->len, need + 1);
	out->len += need;
	return 0;
}

bool gpuenv_name_is_valid(gpuenv_str_t name)
{
	/* ^([a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$, any case */
	if (!name.len || !gpuenv_is_alnum((unsigned char)name.ptr[0]) ||
		!gpuenv_is_alnum((unsigned char)name.ptr[name.len - 1]))
		return false;
	for (size_t i = 1; i + 1 < name.len; i++)
		if (!gpuenv_is_alnum((unsigned char)name.ptr[i]) && !is_sep((unsigned char)name.ptr[i]))
			return false;
	return true;
}

bool gpuenv_name_is_normalized(gpuenv_str_t name)
{
	if (!name.len)
		return false;
	for (size_t i = 0; i < name.len; i++) {
		unsigned char c = (unsigned char)name.ptr[i];
		if (c == '-') {
			/* not first, not last, not doubled */
			if (i == 0 || i + 1 == name.len || name.ptr[i + 1] == '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) {
			return false;
		}
	}
	return true;
}
