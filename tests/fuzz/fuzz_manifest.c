/* Fuzz target for the manifest: any bytes as pyproject.toml.  The loader
 * must not crash, leak or fail without an error message that names the
 * file; when it loads, every target's dependencies and torch build are
 * computed (an error there must be recorded too), the inputs hash is 64
 * hex digits, and loading the same bytes again gives the same hash.  Then
 * the same with an allocation failing (fuzz_alloc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"
#include "gpuenv/manifest.h"

#include "fuzz_alloc.h"

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb; /* loaded once: the harness may keep state, the library does not */

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *c, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_manifest_t m;

	gpuenv_arena_init(&a, c, 0);
	if (OOM_CALL(o, c, gpuenv_manifest_parse(c, &a, "fuzz.toml", (const char *)data, size, kb, &m)) == 0)
		for (size_t i = 0; i < m.ntargets && i < 4; i++) {
			const gpuenv_dep_t *d;
			size_t n;
			gpuenv_backend_choice_t bc;
			if (OOM_CALL(o, c, gpuenv_manifest_target_deps(c, &a, &m, &m.targets[i], &d, &n)) == 0)
				OOM_CALL(o, c, gpuenv_manifest_backend(c, &a, &m, &m.targets[i], kb, &bc));
		}
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_manifest_t m, again;

	if (!kb) {
		gpuenv_ctx_init(&ctx);
		if (gpuenv_kb_load(&ctx, NULL, &kb) != 0)
			abort();
	}
	gpuenv_arena_init(&a, &ctx, 0);
	if (gpuenv_manifest_parse(&ctx, &a, "fuzz.toml", (const char *)data, size, kb, &m) != 0) {
		if (!ctx.err.msg[0] || strcmp(ctx.err.file, "fuzz.toml"))
			abort();
	} else {
		if (!m.inputs_hash || strlen(m.inputs_hash) != 64)
			abort();
		if (gpuenv_manifest_parse(&ctx, &a, "fuzz.toml", (const char *)data, size, kb, &again) != 0 ||
			strcmp(m.inputs_hash, again.inputs_hash))
			abort();
		for (size_t i = 0; i < m.ntargets; i++) {
			const gpuenv_dep_t *d;
			size_t n;
			gpuenv_backend_choice_t bc;
			if (gpuenv_manifest_target_deps(&ctx, &a, &m, &m.targets[i], &d, &n) != 0) {
				if (!ctx.err.msg[0])
					abort();
				continue;
			}
			for (size_t k = 1; k < n; k++)
				if (strcmp(d[k - 1].name, d[k].name) > 0)
					abort(); /* sorted by name */
			if (gpuenv_manifest_backend(&ctx, &a, &m, &m.targets[i], kb, &bc) != 0) {
				if (!ctx.err.msg[0])
					abort();
			} else if (!bc.backend || !bc.index_url || !bc.reason ||
				(m.targets[i].target.ngpus && !strcmp(bc.backend, "cpu")))
				abort(); /* a GPU target never gets the CPU build */
		}
	}
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
