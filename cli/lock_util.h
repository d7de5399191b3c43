/* What the project verbs (lock, tree, and later sync) share: the project
 * opened once, its manifest and its targets (the declared ones, or this
 * machine from the probe when none is declared). */
#ifndef GPUENV_CLI_LOCK_UTIL_H
#define GPUENV_CLI_LOCK_UTIL_H

#include "cli.h"
#include "gpuenv/kb.h"
#include "gpuenv/index.h"
#include "gpuenv/manifest.h"
#include "gpuenv/pylock.h"

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
/* As cli_project_open; CLI_PROJECT_DECLARED: a project that declares no
 * target gets none (ntargets 0) instead of the probed machine. */
#define CLI_PROJECT_DECLARED 1u
int cli_project_open_ex(struct cli *cli, const char *verb, const char *project, const char *facts_path,
	const char *kb_dir, const char *torch_index, unsigned flags, struct cli_project *pj);

/* The target called name, or NULL after a usage error (the declared
 * targets' nearest name suggested) with *st its exit status. */
const gpuenv_manifest_target_t *cli_project_target(struct cli *cli, const struct cli_verb *verb,
	const struct cli_project *pj, const char *name, int *st);

/* ---- the lock verb's machinery, shared with sync (cli/lock.c) ---------- */

#define CLI_LOCK_MAX_SOURCES 64
#define CLI_LOCK_MAX_ARGS 64

struct cli_lock_opts {
	const char *project, *facts_path, *kb_dir, *cache_dir, *index_url, *torch_index, *dump_dir;
	const char *profile; /* --profile FILE (lock, sync): the trace written there */
	const char *targets[CLI_LOCK_MAX_ARGS];
	size_t ntargets;
	const char *source_urls[CLI_LOCK_MAX_ARGS]; /* NAME=URL */
	size_t nsource_urls;
	const char *find_links[CLI_LOCK_MAX_ARGS];
	size_t nfind_links;
	const char *only_binary[CLI_LOCK_MAX_ARGS], *no_binary[CLI_LOCK_MAX_ARGS];
	size_t nonly_binary, nno_binary;
	bool check, offline, pre;
	bool quiet_json; /* --json of another verb: lock prints no JSON of its own */
	unsigned retries, timeout_s;
};

/* The options lock shares with sync and run (getopt rows). */
#define CLI_LOCK_OPTIONS \
	{ "project", required_argument, NULL, 'p' }, \
	{ "offline", no_argument, NULL, 'o' }, \
	{ "index-url", required_argument, NULL, 'i' }, \
	{ "source-url", required_argument, NULL, 's' }, \
	{ "torch-index", required_argument, NULL, 'T' }, \
	{ "find-links", required_argument, NULL, 'f' }, \
	{ "cache-dir", required_argument, NULL, 'C' }, \
	{ "facts", required_argument, NULL, 'F' }, \
	{ "kb-dir", required_argument, NULL, 'k' }, \
	{ "retries", required_argument, NULL, 'r' }, \
	{ "pre", no_argument, NULL, 'P' }, \
	{ "only-binary", required_argument, NULL, 'B' }, \
	{ "no-binary", required_argument, NULL, 'S' }, \
	{ "timeout", required_argument, NULL, 'w' }

/* --profile FILE, for lock and sync (not in CLI_LOCK_OPTIONS: run has none) */
#define CLI_PROFILE_OPTION { "profile", required_argument, NULL, 'X' }
#define CLI_PROFILE_HELP \
	"  --profile FILE     write a Chrome trace of the run to FILE: per package, metadata,\n" \
	"                     download, hash, unpack, link and build spans, and each compiler\n" \
	"                     call of a build (gpuenv profile FILE reads it; docs/profile.md)\n"

/* Start recording (cli->ctx.trace) when path is set: 0 or an exit status. */
int cli_profile_start(struct cli *cli, const char *verb, const char *path);
/* Write the trace to path (atomically) and stop; st is the verb's exit
 * status, returned unless the trace could not be written (then 4). */
int cli_profile_finish(struct cli *cli, const char *path, int st);

/* One of CLI_LOCK_OPTIONS into o: 1 taken, 0 not one of them, -1 a usage
 * error (*exit_st set). */
int cli_lock_opt(struct cli *cli, const struct cli_verb *verb, int c, char *arg, struct cli_lock_opts *o,
	int *exit_st);

/* The index sources: the manifest's with the options' replacements. */
int cli_lock_sources(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	const gpuenv_manifest_t *m, gpuenv_arena_t *arena, gpuenv_index_source_t *src, size_t *n);

/* The index client over those sources and extra ones. */
int cli_lock_index_open(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	struct cli_project *pj, const gpuenv_index_source_t *extra, size_t nextra, gpuenv_index_t **ix);

/* Lock the targets pick[0..npick), writing their locks; *ix_out is the index
 * client used (the caller closes it).  The exit status lock earns. */
int cli_lock_targets(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	struct cli_project *pj, const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_index_t **ix_out);

/* Read and parse the lock at path into lk (its strings in arena).  0, or
 * the error (recorded in ctx: -ENOENT when there is none). */
int cli_lock_read(struct cli *cli, gpuenv_arena_t *arena, const char *path, gpuenv_lock_t *lk);

/* "fresh", "stale", "missing" or "unreadable" for a target's lock at path
 * (*detail: why, or NULL).  lk (may be NULL): a lock read already (its
 * lock_version set) is judged as it is; otherwise the one read is stored
 * there (lock_version NULL when none could be read). */
const char *cli_lock_check_one(struct cli *cli, gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t, const char *path, const char **detail, gpuenv_lock_t *lk);

/* ---- sync, shared with run (cli/sync.c) --------------------------------- */

struct cli_sync_opts {
	const struct cli_verb *verb;
	struct cli_lock_opts lo;
	const char *target, *venv_dir, *python;
	const char *with[CLI_LOCK_MAX_ARGS];
	size_t nwith;
	int link_mode;
	bool dry_run, locked, compile, reinstall, no_wait;
	bool no_install_project; /* the project's own package is left out */
	bool quiet; /* run: only changes are reported, on stderr */
	/* filled while syncing */
	const char *auto_reason, *foreign;
	const char *lk_path; /* the lock read last (pick_target's), by path */
	gpuenv_lock_t lk;
	bool locked_now, created_venv;
};

#define CLI_SYNC_OPTIONS \
	{ "target", required_argument, NULL, 't' }, \
	{ "venv", required_argument, NULL, 'V' }, \
	{ "python", required_argument, NULL, 'y' }, \
	{ "with", required_argument, NULL, 'W' }, \
	{ "locked", no_argument, NULL, 'L' }, \
	{ "compile", no_argument, NULL, 'm' }, \
	{ "reinstall", no_argument, NULL, 'R' }, \
	{ "no-wait", no_argument, NULL, 'N' }, \
	{ "link-mode", required_argument, NULL, 'l' }, \
	{ "no-install-project", no_argument, NULL, 'I' }

int cli_sync_opt(struct cli *cli, int c, char *arg, struct cli_sync_opts *o, int *exit_st);

/* ---- does this machine run a target (cli/sync.c; sync --target auto, labels) ---- */
struct gpuenv_fit;
/* What the probe may leave out, from the KB: a GPU's compute capability by
 * its name, the newest CUDA the driver runs by its version.  0, or an exit
 * status (reported). */
int cli_machine_from_kb(struct cli *cli, const gpuenv_kb_t *kb, gpuenv_arena_t *arena, gpuenv_target_t *t);
/* The CUDA ("12.6") of target t's locked torch build into buf, or NULL when
 * there is no readable lock (then judged by the target's driver); *lk and
 * *lk_path get the lock read (zeroed / NULL when none). */
const char *cli_project_locked_cuda(struct cli *cli, struct cli_project *pj, const gpuenv_manifest_target_t *t,
	gpuenv_lock_t *lk, const char **lk_path, char *buf, size_t bufsz);
/* gpuenv_target_fit of machine against t with its locked build's CUDA: the
 * one judgement of sync --target auto.  0, or -1 with ctx->err set. */
int cli_project_fit(struct cli *cli, struct cli_project *pj, const gpuenv_target_t *machine,
	const gpuenv_manifest_target_t *t, gpuenv_lock_t *lk, const char **lk_path, struct gpuenv_fit *fit);

/* Sync as the options say; *venv_root (malloc'd, caller frees; may stay
 * NULL) is the venv synced.  The exit status. */
int cli_sync_do(struct cli *cli, struct cli_sync_opts *o, const char **venv_root);

/* ctx->err as one line ("file:line:col: message"), with "; hint" when it
 * has one, in arena ("out of memory" when that fails). */
const char *cli_err_text(struct cli *cli, gpuenv_arena_t *arena, bool with_hint);

#endif
