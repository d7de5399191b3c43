/* Fuzz target: the header parsers (METADATA, WHEEL) and entry_points.txt.
 * The input is (ptr, len), not NUL-terminated. */
#include <stddef.h>
#include <stdint.h>

#include "gpuenv/metadata.h"

#include "fuzz_alloc.h"

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_str_t text = gpuenv_str_n((const char *)data, size);
	gpuenv_metadata_t md;
	gpuenv_wheelfile_t wf;
	gpuenv_entry_points_t ep;

	gpuenv_arena_init(&arena, ctx, (size_t)64 << 20);
	OOM_CALL(o, ctx, gpuenv_metadata_parse(ctx, &arena, NULL, text, GPUENV_METADATA_LENIENT_VERSION, &md));
	OOM_CALL(o, ctx, gpuenv_wheelfile_parse(ctx, &arena, NULL, text, &wf));
	OOM_CALL(o, ctx, gpuenv_entry_points_parse(ctx, &arena, NULL, text, &ep));
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_str_t text = gpuenv_str_n((const char *)data, size);
	gpuenv_metadata_t md;
	gpuenv_wheelfile_t wf;
	gpuenv_entry_points_t ep;
	gpuenv_str_t v[4];

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, (size_t)64 << 20);
	if (gpuenv_metadata_parse(&ctx, &arena, NULL, text, GPUENV_METADATA_LENIENT_VERSION,
		    &md) == 0) {
		/* touch what the parse promised */
		gpuenv_metadata_get_all(&md, "requires-dist", v, 4);
		for (size_t i = 0; i < md.nrequires_dist; i++)
			if (md.requires_dist[i].valid && md.requires_dist[i].req.name.len == 0)
				__builtin_trap();
		if (md.description.len > size)
			__builtin_trap();
	}
	gpuenv_wheelfile_parse(&ctx, &arena, NULL, text, &wf);
	if (gpuenv_entry_points_parse(&ctx, &arena, NULL, text, &ep) == 0)
		for (size_t i = 0; i < ep.n; i++)
			if (!ep.items[i].name.len || (ep.items[i].valid && !ep.items[i].module.len))
				__builtin_trap();
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
