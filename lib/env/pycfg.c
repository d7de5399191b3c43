/* pycfg.c: pyvenv.cfg read as CPython's site.py reads it (gpuenv/pycfg.h). */
#include "gpuenv/pycfg.h"

#include <string.h>

gpuenv_str_t gpuenv_pycfg_get(gpuenv_str_t text, const char *key)
{
	gpuenv_str_t rest = text;

	while (rest.ptr) {
		gpuenv_str_t line;
		rest = gpuenv_str_split(rest, '\n', &line);
		gpuenv_str_t k, v = gpuenv_str_split(line, '=', &k);
		if (!v.ptr)
			continue;
		if (gpuenv_str_ieq(gpuenv_str_trim(k), gpuenv_str(key)))
			return gpuenv_str_trim(v);
	}
	return GPUENV_STR_NULL;
}

gpuenv_str_t gpuenv_pycfg_version(gpuenv_str_t text)
{
	gpuenv_str_t v = gpuenv_pycfg_get(text, "version");

	if (!v.ptr)
		v = gpuenv_pycfg_get(text, "version_info");
	if (!v.ptr)
		return GPUENV_STR_NULL;
	/* up to three numbers: "3.12.1.final.0" -> "3.12.1", "3.13.0rc1" -> "3.13.0" */
	size_t k = 0, parts = 0;
	while (parts < 3 && k < v.len && v.ptr[k] >= '0' && v.ptr[k] <= '9') {
		while (k < v.len && v.ptr[k] >= '0' && v.ptr[k] <= '9')
			k++;
		parts++;
		if (parts < 3 && k + 1 < v.len && v.ptr[k] == '.' && v.ptr[k + 1] >= '0' && v.ptr[k + 1] <= '9')
			k++;
		else
			break;
	}
	return parts >= 2 ? gpuenv_str_n(v.ptr, k) : GPUENV_STR_NULL;
}
