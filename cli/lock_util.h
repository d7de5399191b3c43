/* What the project verbs (lock, tree, export, sync, run, labels) share on
 * the command line: the project opened through lib/project (with this
 * machine from the probe when none is declared), a target named with
 * suggestions, lock's and sync's option sets, --profile.  The work itself
 * is the library's (gpuenv/project.h, gpuenv/export.h). */
#ifndef GPUENV_CLI_LOCK_UTIL_H
#define GPUENV_CLI_LOCK_UTIL_H

#include "cli.h"
#include "gpuenv/kb.h"
#include "gpuenv/index.h"
#include "gpuenv/manifest.h"
#include "gpuenv/project.h"
#include "gpuenv/pylock.h"

/* Open the project (gpuenv_project_open) for verb; with no target
 * declared, the probed machine (facts_path: a snapshot instead of the
 * probe) is its one target unless flags has CLI_PROJECT_DECLARED.  0, or an
 * exit status (reported); pj is always safe to close. */
#define CLI_PROJECT_DECLARED 1u
int cli_project_open(struct cli *cli, const char *verb, const char *project, const char *facts_path,
	const char *kb_dir, const char *torch_index, unsigned flags, gpuenv_project_t *pj);

/* The target called name, or NULL after a usage error (the declared
 * targets' nearest name suggested) with *st its exit status. */
const gpuenv_manifest_target_t *cli_project_target(struct cli *cli, const struct cli_verb *verb,
	const gpuenv_project_t *pj, const char *name, int *st);

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
	bool refresh; /* --refresh: every cached index page revalidated */
	bool upgrade; /* --upgrade: nothing kept from the existing locks */
	const char *upgrade_pkgs[CLI_LOCK_MAX_ARGS]; /* --upgrade-package NAME[==VERSION] */
	size_t nupgrade;
	bool quiet_json; /* --json of another verb: lock prints no JSON of its own */
	bool silent;	 /* print nothing of a target locked (add's second lock, which
			    writes the locked versions' bounds); failures still print */
	json_t *json_into; /* --json of another verb (add, remove): each target's
			      object appended to this array, nothing printed */
	unsigned retries, timeout_s;
	unsigned build_timeout_s; /* --build-timeout: each metadata build's hooks; 0: 3600 */
};

/* The options lock shares with sync and run (getopt rows). */
#define CLI_LOCK_OPTIONS \
	{ "project", required_argument, NULL, 'p' }, \
	{ "offline", no_argument, NULL, 'o' }, \
	{ "refresh", no_argument, NULL, 'E' }, \
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
	{ "timeout", required_argument, NULL, 'w' }, \
	{ "build-timeout", required_argument, NULL, 'Z' }

/* The help lines of CLI_LOCK_OPTIONS' index options (lock, outdated). */
#define CLI_LOCK_INDEX_HELP \
	"  --offline          use the HTTP cache only\n" \
	"  --refresh          ask the index again for every page, even those the HTTP\n" \
	"                     cache holds as fresh (Cache-Control: max-age; uv's --refresh),\n" \
	"                     and fetch archives by URL again\n" \
	"  --index-url URL    replace the default index (PyPI), as pip's option does\n" \
	"  --source-url NAME=URL  send a declared source's requests to URL (a mirror)\n" \
	"  --torch-index URL  the torch builds' index root instead of [tool.gpuenv]\n" \
	"                     torch-index (<URL>/<backend>/ per build)\n" \
	"  --find-links DIR   also look for wheels in DIR (a folder or a page of links)\n" \
	"  --cache-dir DIR    the HTTP cache (default $XDG_CACHE_HOME/gpuenv)\n"

/* --profile FILE, for lock and sync (not in CLI_LOCK_OPTIONS: run has none) */
#define CLI_PROFILE_OPTION { "profile", required_argument, NULL, 'X' }
#define CLI_PROFILE_HELP \
	"  --profile FILE     write a Chrome trace of the run to FILE: per package, metadata,\n" \
	"                     download, hash, unpack, link and build spans, and each compiler\n" \
	"                     call of a build (gpuenv profile FILE reads it; docs/profile.md)\n"

/* One of CLI_LOCK_OPTIONS into o: 1 taken, 0 not one of them, -1 a usage
 * error (*exit_st set). */
int cli_lock_opt(struct cli *cli, const struct cli_verb *verb, int c, char *arg, struct cli_lock_opts *o,
	int *exit_st);

/* The index sources: the manifest's with the options' replacements. */
int cli_lock_sources(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	const gpuenv_manifest_t *m, gpuenv_arena_t *arena, gpuenv_index_source_t *src, size_t *n);

/* The library's lock options from o (the sources, the index's settings,
 * pip's format control; no callback).  0, or an exit status (reported). */
int cli_lock_lib_opts(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	gpuenv_project_t *pj, gpuenv_project_lock_opts_t *lo);

/* Lock the targets pick[0..npick) (gpuenv_project_lock), printing each
 * target's outcome; *ix_out is the index client used (the caller closes
 * it).  The exit status lock earns. */
int cli_lock_targets(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	gpuenv_project_t *pj, const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_index_t **ix_out);

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
	json_t **json_out; /* --json of another verb (add, remove): the sync's
			      object stored here (caller's), not printed */
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

/* Sync as the options say; *venv_root (malloc'd, caller frees; may stay
 * NULL) is the venv synced.  The exit status. */
int cli_sync_do(struct cli *cli, struct cli_sync_opts *o, const char **venv_root);

#endif
