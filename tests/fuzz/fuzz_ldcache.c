/* fuzz target: ld.so.cache images (old, new and combined layouts, the
 * extension directory) through gpuenv_ldcache_parse, then lookups over what
 * was parsed. */
#include <stddef.h>
#include <stdint.h>

#include "gpuenv/core.h"
#include "gpuenv/stack.h"

#include "fuzz_alloc.h"

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_ldcache_t cache;

	gpuenv_arena_init(&arena, ctx, (size_t)64 << 20);
	OOM_CALL(o, ctx, gpuenv_ldcache_parse(ctx, &arena, data, size, "fuzz", &cache));
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const hwcaps[] = { "x86-64-v4", "x86-64-v3", "x86-64-v2", NULL };
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_ldcache_t cache;

	gpuenv_ctx_init(&ctx);
	ctx.getenv = NULL;
	gpuenv_arena_init(&arena, &ctx, (size_t)64 << 20);
	if (gpuenv_ldcache_parse(&ctx, &arena, data, size, "fuzz", &cache) == 0) {
		for (size_t i = 0; i < cache.n && i < 8; i++) {
			(void)gpuenv_ldcache_lookup(&cache, cache.entries[i].soname,
				gpuenv_ldcache_flags_for(62, true), hwcaps);
			(void)gpuenv_ldcache_lookup(&cache, cache.entries[i].soname,
				cache.entries[i].flags, NULL);
			(void)gpuenv_ldcache_abi_name(cache.entries[i].flags);
		}
		(void)gpuenv_ldcache_lookup(&cache, gpuenv_str("libc.so.6"), 0x0303, hwcaps);
	}
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
