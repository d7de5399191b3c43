/* Fuzz target: wheel and sdist file names, tag sets, target specs and
 * ranking against a fixed target.  The input is not NUL-terminated. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gpuenv/wheel.h"

#include "fuzz_alloc.h"

static gpuenv_ctx_t gctx;
static gpuenv_tagset_t *gset;

static void cleanup(void)
{
	gpuenv_tagset_free(gset);
}

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_str_t text = gpuenv_str_n((const char *)data, size);
	gpuenv_wheel_name_t w;
	gpuenv_sdist_name_t sd;
	gpuenv_wheel_target_t t;
	gpuenv_tag_t *tags;
	size_t n;

	gpuenv_arena_init(&arena, ctx, (size_t)64 << 20);
	OOM_CALL(o, ctx, gpuenv_wheel_name_parse(ctx, &arena, text, 0, &w));
	OOM_CALL(o, ctx, gpuenv_sdist_name_parse(ctx, &arena, text, &sd));
	OOM_CALL(o, ctx, gpuenv_tag_parse(ctx, &arena, text, GPUENV_TAG_VALIDATE_ORDER, &n, &tags));
	if (OOM_CALL(o, ctx, gpuenv_wheel_target_parse(ctx, text, &t)) == 0 && t.libc_minor < 200 &&
		t.os_major < 40) {
		gpuenv_tagset_t *set;
		if (OOM_CALL(o, ctx, gpuenv_tagset_build(ctx, &t, &set)) == 0)
			gpuenv_tagset_free(set);
	}
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_str_t text = gpuenv_str_n((const char *)data, size);
	gpuenv_wheel_name_t w;
	gpuenv_sdist_name_t sd;
	gpuenv_wheel_target_t t;
	gpuenv_tag_t *tags;
	size_t n;

	if (!gset) {
		gpuenv_wheel_target_t gt;
		gpuenv_ctx_init(&gctx);
		if (gpuenv_wheel_target_parse(&gctx, gpuenv_str("cp312-manylinux_2_35_x86_64"), &gt) ||
			gpuenv_tagset_build(&gctx, &gt, &gset))
			__builtin_trap();
		atexit(cleanup);
	}
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, (size_t)64 << 20);
	if (gpuenv_wheel_name_parse(&ctx, &arena, text, 0, &w) == 0) {
		long r = gpuenv_tagset_rank_wheel(gset, &w);
		if (r >= (long)gpuenv_tagset_count(gset) || w.ntags == 0 || w.ntags > GPUENV_TAGS_MAX)
			__builtin_trap();
		/* sorted order is stricter: it may only refuse more */
		gpuenv_wheel_name_t w2;
		if (gpuenv_wheel_name_parse(&ctx, &arena, text, GPUENV_TAG_VALIDATE_ORDER, &w2) == 0 &&
			w2.ntags != w.ntags)
			__builtin_trap();
	}
	gpuenv_sdist_name_parse(&ctx, &arena, text, &sd);
	gpuenv_tag_parse(&ctx, &arena, text, GPUENV_TAG_VALIDATE_ORDER, &n, &tags);
	if (gpuenv_wheel_target_parse(&ctx, text, &t) == 0) {
		gpuenv_tagset_t *set;
		/* big glibc/macOS numbers make long lists: keep runs fast */
		if (t.libc_minor < 200 && t.os_major < 40 && gpuenv_tagset_build(&ctx, &t, &set) == 0)
			gpuenv_tagset_free(set);
	}
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
