/* Fuzz target: what a source build reads before and after running Python
 * (lib/builder/spec.c): pyproject.toml's [build-system] and the hook runner's
 * result file.  The input is given to both.  Besides the sanitizers,
 * invariants abort() on violation:
 *   - a [build-system] read has a backend and at least the legacy
 *     requirement when none is declared; every requirement parses as PEP
 *     508; every backend-path entry is relative and has no "..";
 *   - a result is ok with a string or a list, or not ok with one of the
 *     three kinds and a message;
 *   - every refusal carries its story; allocation failures are -ENOMEM
 *     (tests/fuzz/fuzz_alloc.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/build.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void check_bs(gpuenv_ctx_t *ctx, const gpuenv_build_system_t *bs)
{
	gpuenv_arena_t a;
	gpuenv_arena_init(&a, ctx, 0);
	CHECK(bs->backend && bs->backend[0]);
	CHECK(bs->nrequires <= GPUENV_BUILD_MAX_REQUIRES);
	for (size_t i = 0; i < bs->nrequires; i++) {
		gpuenv_requirement_t r;
		int e = gpuenv_requirement_parse(ctx, &a, gpuenv_str(bs->requires[i]), &r);
		CHECK(e == 0 || e == -ENOMEM);
	}
	for (size_t i = 0; i < bs->nbackend_path; i++) {
		const char *p = bs->backend_path[i];
		CHECK(p[0] && p[0] != '/' && strcmp(p, "..") != 0 && strncmp(p, "../", 3) != 0 && !strstr(p, "/../"));
	}
	gpuenv_arena_free(&a);
}

static void run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_build_system_t bs;
	gpuenv_hook_result_t hr;
	gpuenv_str_t text = gpuenv_str_n((const char *)data, size);

	gpuenv_arena_init(&a, ctx, 0);
	if (OOM_CALL(o, ctx, gpuenv_build_system_parse(ctx, &a, "pyproject.toml", text, &bs)) == 0 && !o->t.failures)
		check_bs(ctx, &bs);
	if (OOM_CALL(o, ctx, gpuenv_hook_result_parse(ctx, &a, "result.json", text, &hr)) == 0) {
		if (hr.ok)
			CHECK(hr.str || hr.is_list);
		else
			CHECK(hr.kind && hr.message);
	}
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_oom(data, size, run);
	return 0;
}
