/* Fuzz target: the base image of a Dockerfile's final stage
 * (lib/formats/dockerfile.c), as `preflight --dockerfile` reads it.  Besides
 * the sanitizers, invariants abort() on violation:
 *   - a success names an image that is not empty and not "scratch", a FROM
 *     line inside the text, at least one stage;
 *   - every failure leaves an error message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/dockerfile.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_dockerfile_base_t b;
	unsigned lines = 1;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	r = gpuenv_dockerfile_base(&ctx, &arena, "Dockerfile", (const char *)data, size, &b);
	if (r == 0) {
		CHECK(b.image && b.image[0] && strcmp(b.image, "scratch") != 0);
		CHECK(b.line >= 1 && b.line <= lines && b.stages >= 1);
	} else
		CHECK(ctx.err.msg[0]);
	gpuenv_arena_free(&arena);
	return 0;
}
