/* Fuzz target for the tree manifest reader (gpuenv_wheel_tree_parse; the
 * manifest sits in the user's cache, so it is untrusted input): no crash,
 * no leak; a refusal carries its story; a manifest that parses has sorted,
 * unique, safe paths.  Then once more with an allocation failing. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/install.h"
#include "gpuenv/zip.h"

#include "fuzz_alloc.h"

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_wheel_tree_t t;
	gpuenv_arena_init(&a, ctx, 0);
	OOM_CALL(o, ctx, gpuenv_wheel_tree_parse(ctx, &a, NULL,
				 gpuenv_str_n((const char *)data, size), &t));
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_wheel_tree_t t;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	r = gpuenv_wheel_tree_parse(&ctx, &a, NULL, gpuenv_str_n((const char *)data, size), &t);
	if (r && (ctx.err.code != r || !ctx.err.msg[0]))
		abort();
	if (r == 0) {
		if (!t.name || !t.version || !t.dist_info || !t.wheel_sha256)
			abort();
		for (size_t i = 0; i < t.nfiles; i++) {
			if (gpuenv_zip_check_name(&ctx, NULL, gpuenv_str(t.files[i].path)))
				abort();
			if (i && strcmp(t.files[i - 1].path, t.files[i].path) >= 0)
				abort();
			if (t.files[i].perm != 0644 && t.files[i].perm != 0755)
				abort();
		}
	}
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
