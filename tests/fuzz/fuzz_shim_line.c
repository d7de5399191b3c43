/* Fuzz target: one line of a build's calls file (gpuenv_shim_parse,
 * lib/core/trace.c), as a shim of a parallel build, or a killed one, may
 * leave it.  Besides the sanitizers, invariants abort() on violation:
 *   - a line parsed has a tool name without '/' and not empty, at most
 *     GPUENV_SHIM_MAX_ARGS arguments, a status of at most 383;
 *   - every field lies inside the line's buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/shim.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void inside(const char *buf, size_t n, const char *s)
{
	CHECK(s >= buf && s + strlen(s) <= buf + n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static gpuenv_shim_call_t c;
	char *line = malloc(size + 1);

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (gpuenv_shim_parse(line, size, &c) == 0) {
		CHECK(c.tool && c.tool[0] && !strchr(c.tool, '/'));
		CHECK(c.argc <= GPUENV_SHIM_MAX_ARGS && c.status >= 0 && c.status <= 383);
		inside(line, size, c.tool);
		inside(line, size, c.cwd);
		for (size_t i = 0; i < c.argc; i++)
			inside(line, size, c.argv[i]);
	}
	free(line);
	return 0;
}
