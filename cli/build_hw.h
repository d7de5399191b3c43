/* The target's hardware in sync's source builds (cli/build_hw.c over
 * lib/builder/hw.c; docs/build.md, "The target's hardware"). */
#ifndef GPUENV_CLI_BUILD_HW_H
#define GPUENV_CLI_BUILD_HW_H

#include "gpuenv/build_hw.h"
#include "gpuenv/sync.h"
#include "lock_util.h"

struct cli_build_hw {
	gpuenv_build_hw_t hw; /* what the builds get */
	/* the CUDA part could not be decided (no toolkit that fits, no GPU
	 * architecture): hw is then the CPU-only one, and err says why; the
	 * builds of build-against-env packages are refused with it, the
	 * others run and carry it when they fail */
	bool problem;
	gpuenv_error_t err;
	const char *cuda, *torch; /* the lock's CUDA ("13.0") and torch version */
	char cuda_buf[16];
};

/* Decide the builds' hardware for target t and its lock: the toolkits of
 * --facts, else this machine's; the build machine's CPUs and memory.  A
 * lock with no sdist or directory entry gets nothing (hw.nenv 0).  0, or
 * an exit status (reported: out of memory, unreadable facts). */
int cli_build_hw_setup(struct cli *cli, const struct cli_sync_opts *o, struct cli_project *pj,
	const gpuenv_manifest_target_t *t, const gpuenv_lock_t *lk, struct cli_build_hw *out);

/* Is name one of [tool.gpuenv] build-against-env's? */
bool cli_build_hw_against(const gpuenv_manifest_t *m, const char *name);

/* A plan that builds a build-against-env package while the toolkit
 * problem stands is refused before anything is built: true with *st the
 * exit status (1, the problem reported), false when the plan may go on.
 * The notes (a toolkit chosen over $CUDA_HOME, a minor mismatch) are
 * printed on stderr when the plan builds anything. */
bool cli_build_hw_refuse(struct cli *cli, const struct cli_build_hw *h, const gpuenv_manifest_t *m,
	const gpuenv_sync_plan_t *pl, int *st);

/* What a failed build's log shows: the toolkit problem the build ran with,
 * and diagnose's causes and fixes of the log (stderr). */
void cli_build_hw_explain(struct cli *cli, struct cli_project *pj, const struct cli_build_hw *h,
	const char *log);

#endif
