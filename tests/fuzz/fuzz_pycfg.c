/* Fuzz target: what a Python installation says on disk, read without
 * starting it: pyvenv.cfg (gpuenv/pycfg.h) and the #define lines of
 * patchlevel.h (gpuenv/cdefine.h).  The input is both.  Besides the
 * sanitizers, invariants abort() on violation:
 *   - every value found lies inside the input and has no surrounding blank;
 *   - a pyvenv.cfg version is two or three dotted numbers, a prefix of the
 *     `version` (else `version_info`) value;
 *   - a #define string lies inside the input, between quotes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/cdefine.h"
#include "gpuenv/pycfg.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void inside(gpuenv_str_t all, gpuenv_str_t v)
{
	if (!v.ptr)
		return;
	CHECK(v.ptr >= all.ptr && v.ptr + v.len <= all.ptr + all.len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_str_t all = gpuenv_str_n((const char *)data, size);
	static const char *const keys[] = { "home", "version", "version_info", "executable", "command",
		"include-system-site-packages", "" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		gpuenv_str_t v = gpuenv_pycfg_get(all, keys[i]);
		inside(all, v);
		if (v.len)
			CHECK(v.ptr[0] != ' ' && v.ptr[0] != '\t' && v.ptr[v.len - 1] != ' ' && v.ptr[v.len - 1] != '\t');
	}
	gpuenv_str_t ver = gpuenv_pycfg_version(all);
	if (ver.ptr) {
		inside(all, ver);
		CHECK(gpuenv_dotted_valid(ver, true));
		size_t dots = 0;
		for (size_t i = 0; i < ver.len; i++)
			dots += ver.ptr[i] == '.';
		CHECK(dots == 1 || dots == 2);
		gpuenv_str_t src = gpuenv_pycfg_get(all, "version");
		if (!src.ptr)
			src = gpuenv_pycfg_get(all, "version_info");
		CHECK(src.ptr == ver.ptr && src.len >= ver.len);
	}
	gpuenv_str_t s = gpuenv_cdefine_str((const char *)data, size, "PY_VERSION");
	if (s.ptr) {
		inside(all, s);
		CHECK(s.ptr > all.ptr && s.ptr[-1] == '"' && s.ptr + s.len < all.ptr + all.len && s.ptr[s.len] == '"');
	}
	long n;
	if (gpuenv_cdefine_int((const char *)data, size, "PY_MINOR_VERSION", &n))
		CHECK(n >= 0 && n <= 0x7fffffff);
	return 0;
}
