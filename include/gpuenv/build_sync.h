/* A sync's source builds with the target's hardware (lib/builder/sync_builds.c;
 * docs/build.md, "The target's hardware"): the builder sync hands its sdist
 * and directory entries to, its environment decided by lib/builder/hw.c
 * (CUDA_HOME of the lock's CUDA major, TORCH_CUDA_ARCH_LIST of the target's
 * GPUs, MAX_JOBS of this machine), the toolkit problem kept for the builds
 * that need CUDA, diagnose's reading of a failed build's log. */
#ifndef GPUENV_BUILD_SYNC_H
#define GPUENV_BUILD_SYNC_H

#include "gpuenv/build.h"
#include "gpuenv/build_hw.h"
#include "gpuenv/core.h"
#include "gpuenv/project.h"
#include "gpuenv/sync.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuenv_sync_builds {
	gpuenv_build_hw_t hw; /* what the builds get */
	/* the CUDA part could not be decided (no toolkit that fits, no GPU
	 * architecture): hw is then the CPU-only one, and err says why; the
	 * builds of build-against-env packages are refused with it, the
	 * others run and carry it when they fail */
	bool problem;
	gpuenv_error_t err;
	const char *cuda, *torch; /* the lock's CUDA ("13.0") and torch version */
	char cuda_buf[16];
	gpuenv_builder_t *builder;
} gpuenv_sync_builds_t;

/* Does lk hold a package built from source (an sdist or directory entry
 * with no wheel)?  Only then is the build machine looked at. */
GPUENV_API bool gpuenv_sync_builds_needed(const gpuenv_lock_t *lk);

/* The builder of so's sync for target t of pj, hooked into so->builder,
 * with the target's hardware: facts the machine's toolkits (NULL: this
 * machine's, probed when a build is needed), base_env the environment
 * builds start from.  0, or the error (out of memory, no builder). */
GPUENV_API int gpuenv_sync_builds_new(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t,
	const gpuenv_lock_t *lk, const struct gpuenv_facts *facts, const char *const *base_env,
	gpuenv_sync_opts_t *so, gpuenv_sync_builds_t *out);
GPUENV_API void gpuenv_sync_builds_free(gpuenv_sync_builds_t *b);

/* A plan that builds a build-against-env package while the toolkit
 * problem stands is refused before anything is built (GPUENV_EUNSUPPORTED,
 * the problem in ctx).  0 when it may go on; *builds_any: the plan builds
 * something (b->hw.notes then matter). */
GPUENV_API int gpuenv_sync_builds_check(gpuenv_ctx_t *ctx, const gpuenv_sync_builds_t *b, const gpuenv_manifest_t *m,
	const gpuenv_sync_plan_t *pl, bool *builds_any);

/* What a failed commit's build shows: the build that failed (*req, its
 * result; NULL when the failure was not a build's), and in *text (arena)
 * the toolkit problem the build ran with and diagnose's causes and fixes of
 * its log, one per line ("" none).  0, or -ENOMEM. */
GPUENV_API int gpuenv_sync_builds_explain(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_sync_builds_t *b, const gpuenv_build_req_t **req, const gpuenv_build_result_t **res,
	const char **text);

#ifdef __cplusplus
}
#endif
#endif
