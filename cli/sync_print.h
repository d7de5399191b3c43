/* How a sync's plan and outcome are shown (cli/sync_print.c). */
#ifndef GPUENV_CLI_SYNC_PRINT_H
#define GPUENV_CLI_SYNC_PRINT_H

#include "gpuenv/build.h"
#include "gpuenv/sync.h"
#include "lock_util.h"

/* The cache's progress on stderr: a bar on a terminal, else one line per
 * phase when it ends (gpuenv_cache_progress_t's fn; arg a struct
 * cli_sync_progress). */
struct cli_sync_progress {
	bool tty;
	const char *last_phase;
	size_t last_done;
};
void cli_sync_progress(void *arg, const char *phase, size_t done, size_t n, uint64_t bytes, uint64_t total);

/* The plan: as JSON, or as "  + name version" lines on stdout. */
json_t *cli_sync_plan_json(const gpuenv_sync_plan_t *pl);
void cli_sync_print_plan(const gpuenv_sync_plan_t *pl);

/* The outcome: the summary line (stdout; stderr for run), or sync --json's
 * object. */
void cli_sync_print_done(struct cli *cli, const struct cli_sync_opts *o, const gpuenv_sync_plan_t *pl,
	const gpuenv_sync_result_t *res, const gpuenv_builder_t *builder, const char *lock_path, const char *target,
	const char *root, double secs);
json_t *cli_sync_json(const struct cli_sync_opts *o, const gpuenv_sync_plan_t *pl, const gpuenv_sync_result_t *res,
	const gpuenv_builder_t *builder, const char *lock_path, const char *target, const char *root, double secs);

#endif
