/* Fuzz `gpuenv diagnose`: the input is a log scanned with the embedded
 * signatures, once without facts and once with facts (templates filled
 * from the knowledge base); the KB and the compiled signatures are made
 * once per process. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/diagnose.h"
#include "gpuenv/kb.h"

#include "fuzz_alloc.h"

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb;
static gpuenv_diag_t *diag;
static gpuenv_ctx_t octx;	/* the allocation-failure pass's compiled copy */
static gpuenv_diag_t *odiag;

static void done(void)
{
	gpuenv_diag_free(diag);
	gpuenv_diag_free(odiag);
	gpuenv_kb_free(kb);
}

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *c, const uint8_t *data, size_t size)
{
	gpuenv_diag_result_t res;
	gpuenv_diag_facts_t f;
	gpuenv_arena_t a;
	gpuenv_diag_t *d = odiag;
	/* compiling the signatures costs far more than a scan: one input in
	 * eight compiles them in the pass (diag_new's allocations fail too),
	 * the others scan with the copy compiled once, its context lent the
	 * failing allocator for the pass (both free with free()) */
	bool fresh = size % 8 == 0;
	gpuenv_ctx_t *sc = fresh ? c : &octx;
	gpuenv_allocator_t keep = octx.mem;

	if (fresh && OOM_CALL(o, c, gpuenv_diag_new(c, kb, &d)))
		return;
	octx.mem = c->mem;
	gpuenv_arena_init(&a, c, 0);
	OOM_CALL(o, sc, gpuenv_diag_scan(d, (const char *)data, size, NULL, &a, &res));
	OOM_CALL(o, c, gpuenv_diag_facts_parse(c, (const char *)data, size, "fuzz.json", &a, &f));
	gpuenv_arena_free(&a);
	octx.mem = keep;
	if (fresh)
		gpuenv_diag_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_diag_result_t res;
	gpuenv_diag_facts_t f;
	gpuenv_arena_t a;
	static const char *const cub[] = { "sm_50", "sm_90", "sm_90a", "bogus" };

	if (!kb) {
		gpuenv_ctx_init(&ctx);
		gpuenv_ctx_init(&octx);
		if (gpuenv_kb_load(&ctx, NULL, &kb) || gpuenv_diag_new(&ctx, kb, &diag) ||
			gpuenv_diag_new(&octx, kb, &odiag))
			abort();
		atexit(done);
	}
	if (size > (4 << 20))
		return 0;
	gpuenv_arena_init(&a, &ctx, 0);
	gpuenv_diag_scan(diag, (const char *)data, size, NULL, &a, &res);
	memset(&f, 0, sizeof(f));
	f.gpu = "NVIDIA GeForce RTX 5090";
	f.cc_major = 12;
	f.cc_minor = 0;
	f.gpu_mem = 34190917632ULL;
	f.driver = "535.104.05";
	f.torch = "2.5.1+cu124";
	f.torch_code = true;
	f.torch_cubins = cub;
	f.n_torch_cubins = 4;
	gpuenv_diag_scan(diag, (const char *)data, size, &f, &a, &res);
	/* the facts parser gets the bytes too */
	gpuenv_diag_facts_parse(&ctx, (const char *)data, size, "fuzz.json", &a, &f);
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
