/* What the project verbs (lock, tree, and later sync) share: the project
 * opened once, its manifest and its targets (the declared ones, or this
 * machine from the probe when none is declared). */
#ifndef GPUENV_CLI_LOCK_UTIL_H
#define GPUENV_CLI_LOCK_UTIL_H

#include "cli.h"
#include "gpuenv/kb.h"
#include "gpuenv/manifest.h"

struct cli_project {
	gpuenv_arena_t arena;
	gpuenv_kb_t *kb;
	gpuenv_manifest_t m;
	const char *dir;  /* the project directory (locks are written there) */
	const char *path; /* its pyproject.toml */
	const gpuenv_manifest_target_t *targets;
	size_t ntargets;
};

/* Open project (a directory or a pyproject.toml; NULL: "."), load the KB
 * (kb_dir replaces built-in files) and the manifest; with no target
 * declared, build the probed one (facts_path: a snapshot instead of the
 * probe).  torch_index replaces [tool.gpuenv] torch-index.  0, or an exit
 * status (reported); pj is always safe to close. */
int cli_project_open(struct cli *cli, const char *verb, const char *project, const char *facts_path,
	const char *kb_dir, const char *torch_index, struct cli_project *pj);
void cli_project_close(struct cli_project *pj);

/* The target called name, or NULL after a usage error (the declared
 * targets' nearest name suggested) with *st its exit status. */
const gpuenv_manifest_target_t *cli_project_target(struct cli *cli, const struct cli_verb *verb,
	const struct cli_project *pj, const char *name, int *st);

/* ctx->err as one line ("file:line:col: message"), with "; hint" when it
 * has one, in arena ("out of memory" when that fails). */
const char *cli_err_text(struct cli *cli, gpuenv_arena_t *arena, bool with_hint);

#endif
