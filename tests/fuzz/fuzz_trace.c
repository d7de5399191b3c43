/* Fuzz target: the trace reader of `gpuenv profile` (lib/profile/read.c),
 * its summary and its flame chart, with allocation failures injected
 * (fuzz_alloc.h).  Besides the sanitizers, invariants abort() on violation:
 *   - a trace read has spans ordered by thread, then start; each span's
 *     thread exists; depth 0 where a thread's spans begin; dur >= 0;
 *   - the summary counts every span once: the phases' counts plus the
 *     tool calls are the spans;
 *   - the SVG is one document: it starts with "<?xml" and ends "</svg>\n";
 *   - every failure leaves an error message (fuzz_alloc.h checks it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/profile.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_prof_t p;
	gpuenv_prof_summary_t s;
	gpuenv_buf_t svg;

	gpuenv_arena_init(&arena, ctx, 0);
	gpuenv_buf_init(&svg, ctx, (size_t)64 << 20);
	if (OOM_CALL(o, ctx, gpuenv_prof_read(ctx, &arena, "fuzz.json", (const char *)data, size, &p)) != 0)
		goto out;
	for (size_t k = 0; k < p.nspans; k++) {
		const gpuenv_prof_span_t *x = &p.spans[k];
		CHECK(x->thread < p.nthreads && x->dur >= 0 && x->name && x->phase);
		if (k) {
			const gpuenv_prof_span_t *w = &p.spans[k - 1];
			CHECK(w->thread <= x->thread);
			CHECK(w->thread < x->thread || w->ts <= x->ts);
			if (w->thread < x->thread)
				CHECK(x->depth == 0);
		} else
			CHECK(x->depth == 0);
	}
	if (OOM_CALL(o, ctx, gpuenv_prof_summarize(ctx, &arena, &p, &s)) != 0)
		goto out;
	size_t n = s.tool_calls;
	for (size_t k = 0; k < s.nphases; k++)
		n += s.phases[k].count;
	CHECK(n == p.nspans);
	if (OOM_CALL(o, ctx, gpuenv_prof_svg(ctx, &p, "fuzz", &svg)) != 0)
		goto out;
	CHECK(svg.len > 12 && !memcmp(svg.data, "<?xml", 5) && !strcmp(svg.data + svg.len - 7, "</svg>\n"));
out:
	gpuenv_buf_free(&svg);
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_oom(data, size, run);
	return 0;
}
