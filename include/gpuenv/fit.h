/* gpuenv fit: does this machine run a target?  The one judgement behind
 * `sync --target auto` (which declared target is this machine) and the
 * "this machine is not the target" line of an explicit sync; the fleet
 * labels use it too.
 *
 * A machine fits a target when its CPU architecture and C library run the
 * target's wheels, its visible GPUs are the target's (the same compute
 * capability on every one; a CPU target fits any machine) and its driver
 * runs the CUDA of the target's locked torch build (gpuenv/kb.h's driver
 * rule), or, without a lock, a CUDA at least as new as the target's
 * driver runs. */
#ifndef GPUENV_FIT_H
#define GPUENV_FIT_H

#include "gpuenv/core.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_FIT_MAX_REASONS 8

typedef struct gpuenv_fit {
	int verdict; /* enum gpuenv_kb_verdict: YES, NO, UNKNOWN */
	/* how closely it fits, for choosing among several targets: 3 the
	 * target names this machine's GPU, 2 its compute capability only, 1 a
	 * CPU target; 0 when it does not fit */
	int score;
	size_t nreasons;
	const char *reasons[GPUENV_FIT_MAX_REASONS]; /* sentences, in arena; the
							failing ones first */
} gpuenv_fit_t;

/* Judge machine (probed) against want (declared).  cuda_build: the CUDA
 * "12.6" of the locked torch build (gpuenv_fit_backend_cuda), or NULL.
 * 0, or -ENOMEM (recorded). */
GPUENV_API int gpuenv_target_fit(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_target_t *machine, const gpuenv_target_t *want, const char *cuda_build,
	gpuenv_fit_t *out);

/* "cu126" -> "12.6", "cu130" -> "13.0" into buf; NULL for "cpu", "rocm6.2"
 * or anything else (NULL backend too): gpuenv_kb_cuda_of_tag's answer, for
 * the callers that still hold a C string (cli/sync.c, cli/build_hw.c); new
 * code asks gpuenv_kb_cuda_of_tag. */
GPUENV_API const char *gpuenv_fit_backend_cuda(const char *backend, char *buf, size_t bufsz);

/* One line describing a machine for messages: "NVIDIA H200 (sm 9.0), driver
 * 580.95.05, x86_64" / "no NVIDIA GPU, x86_64", in arena; NULL when memory
 * runs out. */
GPUENV_API const char *gpuenv_target_describe(gpuenv_arena_t *arena, const gpuenv_target_t *t);

#ifdef __cplusplus
}
#endif
#endif
