/* Fuzz target: image-manifest.json (lib/image/image_manifest.c) and image
 * references.  Besides the sanitizers and the allocation failures of
 * fuzz_alloc.h, invariants abort() on violation:
 *   - a manifest that reads is written, read back and written again to the
 *     same bytes, and the lookup of every entry's ref finds that entry;
 *   - the input read as a reference normalizes to a ref that reads back as
 *     itself;
 *   - every failure leaves an error message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/image_manifest.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_image_manifest_t m;
	gpuenv_image_ref_t ref;
	gpuenv_buf_t b;

	gpuenv_arena_init(&arena, ctx, 0);
	gpuenv_buf_init(&b, ctx, 0);
	if (OOM_CALL(o, ctx, gpuenv_image_manifest_parse(ctx, &arena, "m.json", (const char *)data,
				     size, &m)) == 0)
		OOM_CALL(o, ctx, gpuenv_image_manifest_format(ctx, &m, &b));
	OOM_CALL(o, ctx, gpuenv_image_ref_parse(ctx, &arena, gpuenv_str_n((const char *)data, size), &ref));
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_image_manifest_t m, m2;
	gpuenv_image_ref_t ref, ref2;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	r = gpuenv_image_manifest_parse(&ctx, &arena, "m.json", (const char *)data, size, &m);
	if (r == 0) {
		gpuenv_buf_t a, b;
		gpuenv_buf_init(&a, &ctx, 0);
		gpuenv_buf_init(&b, &ctx, 0);
		CHECK(gpuenv_image_manifest_format(&ctx, &m, &a) == 0);
		CHECK(gpuenv_image_manifest_parse(&ctx, &arena, "a.json", a.data, a.len, &m2) == 0);
		CHECK(gpuenv_image_manifest_format(&ctx, &m2, &b) == 0);
		CHECK(a.len == b.len && !memcmp(a.data, b.data, a.len));
		for (size_t i = 0; i < m.nimages; i++) {
			CHECK(gpuenv_image_manifest_find(&m, m.images[i].ref) == &m.images[i]);
			CHECK(gpuenv_image_digest_valid(gpuenv_str(m.images[i].digest)));
		}
		gpuenv_buf_free(&a);
		gpuenv_buf_free(&b);
	} else
		CHECK(ctx.err.code == r && ctx.err.msg[0]);
	r = gpuenv_image_ref_parse(&ctx, &arena, gpuenv_str_n((const char *)data, size), &ref);
	if (r == 0) {
		CHECK(gpuenv_image_ref_parse(&ctx, &arena, gpuenv_str(ref.ref), &ref2) == 0);
		CHECK(!strcmp(ref.ref, ref2.ref) && !ref2.digest);
	} else
		CHECK(r == GPUENV_EUSAGE && ctx.err.msg[0]);
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
