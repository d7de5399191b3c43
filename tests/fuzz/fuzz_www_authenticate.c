/* Fuzz target: RFC 7235 challenges of WWW-Authenticate (lib/index/oci.c).
 * Besides the sanitizers and the allocation failures of fuzz_alloc.h,
 * invariants abort() on violation:
 *   - a challenge that reads has a scheme; a Bearer one a non-empty realm;
 *   - no value is longer than the header;
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

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_registry_challenge_t c;

	gpuenv_arena_init(&arena, ctx, 0);
	OOM_CALL(o, ctx, gpuenv_registry_challenge_parse(ctx, &arena,
				 gpuenv_str_n((const char *)data, size), &c));
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_registry_challenge_t c;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	r = gpuenv_registry_challenge_parse(&ctx, &arena, gpuenv_str_n((const char *)data, size), &c);
	if (r == 0) {
		CHECK(c.scheme && c.scheme[0] && strlen(c.scheme) <= size);
		if (c.bearer)
			CHECK(c.realm && c.realm[0]);
		CHECK(!c.realm || strlen(c.realm) <= size);
		CHECK(!c.service || strlen(c.service) <= size);
		CHECK(!c.scope || strlen(c.scope) <= size);
		CHECK(!(c.bearer && c.basic));
	} else
		CHECK(ctx.err.code == r && ctx.err.msg[0]);
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
