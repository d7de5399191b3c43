/* Fuzz target: docker's config.json (lib/index/oci.c), asked for three
 * registries.  Besides the sanitizers and the allocation failures of
 * fuzz_alloc.h, invariants abort() on violation:
 *   - credentials come as a pair (user and password, or neither);
 *   - every failure leaves an error message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/registry.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static const char *const regs[] = { "nvcr.io", "docker.io", "127.0.0.1:5000" };

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_docker_creds_t c;

	gpuenv_arena_init(&arena, ctx, 0);
	for (size_t i = 0; i < 3; i++)
		OOM_CALL(o, ctx, gpuenv_docker_config_parse(ctx, &arena, "config.json",
					 gpuenv_str_n((const char *)data, size), regs[i], &c));
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_docker_creds_t c;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	for (size_t i = 0; i < 3; i++) {
		r = gpuenv_docker_config_parse(&ctx, &arena, "config.json",
			gpuenv_str_n((const char *)data, size), regs[i], &c);
		if (r == 0)
			CHECK((c.user == NULL) == (c.pass == NULL));
		else
			CHECK(ctx.err.code == r && ctx.err.msg[0]);
	}
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
