/* gpuenv sync: make a venv match a target's lock exactly (docs/install.md).
 * The machinery is shared with `run` (cli/run.c) through cli_sync_do. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/build.h"
#include "gpuenv/build_sync.h"
#include "gpuenv/cache.h"
#include "gpuenv/facts.h"
#include "gpuenv/fit.h"
#include "gpuenv/fs.h"
#include "gpuenv/hw.h"
#include "gpuenv/pep508.h"
#include "gpuenv/probe.h"
#include "gpuenv/project.h"
#include "gpuenv/sync.h"
#include "gpuenv/venv.h"
#include "gpuenv/wheel.h"
#include "lock_util.h"
#include "sync_print.h"

extern char **environ;

/* ---- which target: --target NAME, or the one this machine is ------------ */

static int pick_auto(struct cli *cli, struct cli_sync_opts *o, gpuenv_project_t *pj,
	const gpuenv_target_t *machine, const gpuenv_manifest_target_t **out)
{
	gpuenv_fit_t *fits;
	size_t best;
	if (gpuenv_project_pick(pj, machine, &fits, &o->lk, &o->lk_path, &best) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (best != SIZE_MAX) {
		*out = &pj->targets[best];
		o->auto_reason = fits[best].nreasons ? fits[best].reasons[0] : NULL;
		return 0;
	}
	const char *desc = gpuenv_target_describe(&pj->arena, machine);
	fprintf(stderr, "%s: %s: --target auto: no target of %s runs on this machine (%s):\n", cli->prog,
		o->verb->name, pj->path, desc ? desc : "not described: out of memory");
	for (size_t i = 0; i < pj->ntargets; i++)
		fprintf(stderr, "  %s: %s\n", pj->targets[i].name, fits[i].nreasons ? fits[i].reasons[0] : "no");
	fprintf(stderr, "hint: name one with --target NAME (a build host may sync any target), or declare a "
			"target for this machine in [tool.gpuenv.targets]\n");
	return CLI_EXIT_FAIL;
}

static int pick_target(struct cli *cli, struct cli_sync_opts *o, gpuenv_project_t *pj,
	const gpuenv_manifest_target_t **out)
{
	gpuenv_target_t machine;
	int st;
	bool want_auto = !o->target || !strcmp(o->target, "auto");

	if (!pj->m.ntargets) { /* the probed machine is the project's one target */
		if (!want_auto && strcmp(o->target, pj->targets[0].name) != 0)
			return cli_usage_error(cli, o->verb, "%s: --target %s: %s declares no targets; the only one is "
				"this machine, 'auto'", o->verb->name, o->target, pj->path);
		*out = &pj->targets[0];
		return 0;
	}
	if (!want_auto && !(*out = cli_project_target(cli, o->verb, pj, o->target, &st)))
		return st;
	/* this machine: --facts, or a light probe */
	const gpuenv_facts_t *facts = NULL;
	if (o->lo.facts_path && (st = cli_facts_load(cli, o->verb->name, o->lo.facts_path, NULL, &pj->arena, &facts)))
		return st;
	if (gpuenv_project_machine(pj, facts, &machine) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (want_auto)
		return pick_auto(cli, o, pj, &machine, out);
	/* a named target: say so when this machine is not its hardware */
	gpuenv_fit_t fit;
	if (gpuenv_project_fit(pj, &machine, *out, &o->lk, &o->lk_path, &fit) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (fit.verdict == GPUENV_KB_NO) {
		o->foreign = fit.reasons[0];
		if (!o->quiet && !cli->json)
			fprintf(stderr, "note: this machine is not target %s's hardware (%s): syncing it as a build "
					"host\n", (*out)->name, fit.reasons[0]);
	}
	return 0;
}

/* ---- the lock: fresh, or made first (--locked refuses) ------------------ */

static int ensure_lock(struct cli *cli, struct cli_sync_opts *o, gpuenv_project_t *pj,
	const gpuenv_manifest_target_t *t, gpuenv_index_t **ix, gpuenv_lock_t *lk, const char **lock_path)
{
	const char *name = gpuenv_project_lock_name(&pj->arena, &pj->m, t), *detail;
	const char *path = gpuenv_project_lock_path(pj, t);
	gpuenv_lock_t seen;
	int st;

	memset(&seen, 0, sizeof(seen));
	if (!name || !path)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", o->verb->name);
	if (o->lk_path && !strcmp(o->lk_path, path))
		seen = o->lk; /* read by pick_target */
	int state = gpuenv_project_lock_state(pj, t, path, &seen, &detail);
	*lock_path = path;
	if (state < 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (state == GPUENV_LOCK_FRESH) {
		*lk = seen;
		return 0;
	}
	if (o->locked) {
		fprintf(stderr, "%s: %s: %s is %s%s%s\nhint: run gpuenv lock --target %s, and commit the lock "
				"(--locked refuses to lock)\n", cli->prog, o->verb->name, path, gpuenv_lock_state_name(state),
			detail ? ": " : "", detail ? detail : "", t->name);
		return CLI_EXIT_FAIL;
	}
	if (!o->quiet && !cli->json)
		fprintf(stderr, "%s is %s: locking target %s first\n", name, gpuenv_lock_state_name(state), t->name);
	o->lo.quiet_json = true;
	if ((st = cli_lock_targets(cli, o->verb, &o->lo, pj, &t, 1, ix)) != 0)
		return st;
	o->locked_now = true;
	return gpuenv_project_read_lock(&cli->ctx, &pj->arena, path, lk) ? cli_report(cli, CLI_EXIT_CANNOT) : 0;
}

/* A failed commit: a source build's failure with its log's tail, the
 * toolkit problem it ran with and diagnose's reading of its log (exit 1:
 * the source does not build here), else the error (4). */
static int build_failed(struct cli *cli, gpuenv_project_t *pj, const gpuenv_sync_builds_t *b)
{
	const gpuenv_build_req_t *q;
	const gpuenv_build_result_t *f;
	const char *text;

	if (gpuenv_sync_builds_explain(&cli->ctx, &pj->arena, pj->kb, b, &q, &f, &text) != 0 || !f)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (f->log_tail && *f->log_tail) {
		fprintf(stderr, "--- the end of the build log of %s (%s) ---\n%s", q->name, f->log, f->log_tail);
		if (f->log_tail[strlen(f->log_tail) - 1] != '\n')
			fputc('\n', stderr);
		fprintf(stderr, "---\n");
	}
	fputs(text, stderr);
	return cli_report(cli, CLI_EXIT_FAIL);
}

/* The venv the sync works on: opened or made by the library, the making said. */
static int sync_venv(struct cli *cli, struct cli_sync_opts *o, gpuenv_project_t *pj, const gpuenv_lock_t *lk,
	gpuenv_venv_t *venv, const char **venv_root)
{
	int made;

	if (gpuenv_project_venv(pj, o->venv_dir, o->python, o->dry_run, lk, venv, &made) != 0)
		return cli_report(cli, cli->ctx.err.code == GPUENV_EUNSUPPORTED || cli->ctx.err.code == GPUENV_ENOTFOUND
			? CLI_EXIT_FAIL : CLI_EXIT_CANNOT);
	o->created_venv = made == GPUENV_VENV_CREATED;
	if (made != GPUENV_VENV_OPENED && !o->quiet && !cli->json)
		fprintf(made == GPUENV_VENV_DRY ? stdout : stderr, "%s %s (Python %s, %s)\n",
			made == GPUENV_VENV_DRY ? "would create" : "created", venv->root, venv->python.version,
			venv->python.real ? venv->python.real : venv->python.path);
	if (venv_root && !(*venv_root = strdup(venv->root))) /* outlives the project */
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", o->verb->name);
	return 0;
}

int cli_sync_do(struct cli *cli, struct cli_sync_opts *o, const char **venv_root)
{
	gpuenv_project_t pj;
	const gpuenv_manifest_target_t *t = NULL;
	gpuenv_index_t *ix = NULL;
	gpuenv_cache_t *cache = NULL;
	gpuenv_sync_t *s = NULL;
	gpuenv_sync_builds_t bs = { 0 };
	gpuenv_tagset_t *tags = NULL;
	const gpuenv_facts_t *facts = NULL;
	gpuenv_lock_t lk;
	gpuenv_venv_t venv;
	gpuenv_marker_env_t env;
	gpuenv_sync_opts_t so;
	const char *lock_path = NULL;
	double t0 = cli_now_s();
	int st;

	if ((st = cli_project_open(cli, o->verb->name, o->lo.project, o->lo.facts_path, o->lo.kb_dir,
		     o->lo.torch_index, 0, &pj)) != 0)
		goto out;
	if ((st = pick_target(cli, o, &pj, &t)) != 0)
		goto out;
	for (size_t i = 0; i < o->nwith; i++) {
		size_t k;
		for (k = 0; k < t->ngroups && strcmp(t->groups[k], o->with[i]) != 0; k++)
			;
		if (k == t->ngroups) {
			st = cli_usage_error(cli, o->verb, "%s: --with %s: target %s's lock covers the groups it declares "
				"(%zu: [tool.gpuenv.targets.%s] groups); add %s there and lock again", o->verb->name,
				o->with[i], t->name, t->ngroups, t->name, o->with[i]);
			goto out;
		}
	}
	if ((st = ensure_lock(cli, o, &pj, t, &ix, &lk, &lock_path)) != 0 ||
		(st = sync_venv(cli, o, &pj, &lk, &venv, venv_root)) != 0)
		goto out;
	if (gpuenv_project_sync_opts(&pj, t, &lk, lock_path, &venv, o->no_install_project, &tags, &env, &so) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	so.link_mode = o->link_mode;
	so.compile = o->compile;
	so.reinstall = o->reinstall;
	so.wait = !o->no_wait;
	/* source builds with the target's hardware: --facts describes this
	 * machine's toolkits, else they are probed (only when a build is needed) */
	if (o->lo.facts_path && gpuenv_sync_builds_needed(&lk) &&
		(st = cli_facts_load(cli, o->verb->name, o->lo.facts_path, NULL, &pj.arena, &facts)) != 0)
		goto out;
	if (gpuenv_sync_builds_new(&pj, t, &lk, facts, (const char *const *)environ, &so, &bs) != 0 ||
		gpuenv_sync_begin(&cli->ctx, &pj.arena, &so, &s) != 0) {
		st = cli_report(cli, cli->ctx.err.code == GPUENV_ELOCKED ? CLI_EXIT_FAIL : CLI_EXIT_CANNOT);
		goto out;
	}
	const gpuenv_sync_plan_t *pl = gpuenv_sync_plan(s);
	size_t changes = pl->n - pl->count[GPUENV_SYNC_KEEP];
	if (pl->recovery.recovered && !o->quiet)
		fprintf(stderr, "%s: an interrupted sync was %s\n", venv.root,
			pl->recovery.rolled_forward ? "completed" : "rolled back");
	if (o->dry_run) {
		if (cli->json) {
			json_t *j = json_pack("{s:s, s:s, s:s, s:b, s:o}", "target", t->name, "lock", lock_path, "venv",
				venv.root, "dry_run", 1, "plan", cli_sync_plan_json(pl));
			st = cli_print_json(cli, j) ? CLI_EXIT_CANNOT : CLI_EXIT_OK;
		} else {
			cli_sync_print_plan(pl);
			printf("would install %zu, upgrade %zu, remove %zu; %zu unchanged (target %s, %s)\n",
				pl->count[GPUENV_SYNC_INSTALL], pl->count[GPUENV_SYNC_UPGRADE] + pl->count[GPUENV_SYNC_REINSTALL],
				pl->count[GPUENV_SYNC_REMOVE], pl->count[GPUENV_SYNC_KEEP], t->name, venv.root);
			st = CLI_EXIT_OK;
		}
		goto out;
	}
	gpuenv_sync_result_t res = { 0 };
	if (changes) {
		struct cli_sync_progress ps = { .tty = isatty(STDERR_FILENO) && !o->quiet };
		gpuenv_cache_progress_t cp = { .fn = cli_sync_progress, .arg = &ps };
		gpuenv_project_lock_opts_t lo;
		bool builds_any;
		if (gpuenv_cache_open(&cli->ctx, o->lo.cache_dir, &cache) != 0) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
		if (!ix && ((st = cli_lock_lib_opts(cli, o->verb, &o->lo, &pj, &lo)) != 0 ||
			(gpuenv_project_index_open(&pj, &lo, NULL, 0, &ix) && (st = cli_report(cli, CLI_EXIT_CANNOT)))))
			goto out;
		if (gpuenv_sync_builds_check(&cli->ctx, &bs, &pj.m, pl, &builds_any) != 0) {
			st = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		for (size_t i = 0; builds_any && i < bs.hw.nnotes; i++)
			fprintf(stderr, "note: %s\n", bs.hw.notes[i]);
		/* build-against-env sources: gpuenv_sync_commit installs everything
		 * else first, then builds them against the venv (two rounds) */
		if (gpuenv_sync_commit(s, cache, ix, cli->json || o->quiet || cli->verbose < 0 ? NULL : &cp, &res) != 0) {
			st = build_failed(cli, &pj, &bs);
			goto out;
		}
	}
	double secs = cli_now_s() - t0;
	st = CLI_EXIT_OK;
	if (cli->json && o->json_out)
		st = (*o->json_out = cli_sync_json(o, pl, &res, bs.builder, lock_path, t->name, venv.root, secs))
			? CLI_EXIT_OK : cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory writing the JSON", o->verb->name);
	else if (cli->json)
		st = cli_print_json(cli, cli_sync_json(o, pl, &res, bs.builder, lock_path, t->name, venv.root, secs))
			? CLI_EXIT_CANNOT : CLI_EXIT_OK;
	else
		cli_sync_print_done(cli, o, pl, &res, bs.builder, lock_path, t->name, venv.root, secs);
out:
	gpuenv_sync_end(s);
	gpuenv_sync_builds_free(&bs);
	gpuenv_cache_close(cache);
	gpuenv_index_close(ix);
	gpuenv_tagset_free(tags);
	gpuenv_project_close(&pj);
	return st;
}

static int cli_sync(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = { CLI_LOCK_OPTIONS, CLI_SYNC_OPTIONS,
		{ "dry-run", no_argument, NULL, 'n' }, CLI_PROFILE_OPTION, { NULL, 0, NULL, 0 } };
	struct cli_sync_opts o = { .verb = verb };
	const char *root = NULL;
	int c, st = CLI_EXIT_USAGE, h;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if ((h = cli_sync_opt(cli, c, optarg, &o, &st)) < 0)
			return st;
		if (!h)
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if ((st = cli_profile_start(cli, verb->name, o.lo.profile)) != 0)
		return st;
	st = cli_sync_do(cli, &o, &root);
	free((void *)root);
	return cli_profile_finish(cli, o.lo.profile, st);
}

const struct cli_verb cli_verb_sync = {
	.name = "sync",
	.run = cli_sync,
	.summary = "make a venv match a target's lock exactly (locking first when needed)",
	.usage = "gpuenv sync [--project DIR] [--target NAME|auto] [--venv DIR] [--python P]\n"
		 "                 [--with GROUP]... [--dry-run] [--locked] [--offline] [--refresh]\n"
		 "                 [--reinstall]\n"
		 "                 [--link-mode auto|hardlink|reflink|copy] [--compile] [--no-wait]\n"
		 "                 [--no-install-project]\n"
		 "                 [--profile FILE]\n"
		 "                 [lock's options: --index-url URL ... --cache-dir DIR] [--json]",
	.help = "  --project DIR      the project (its pyproject.toml); default: .\n"
		"  --target NAME      the declared target to sync; auto (the default): the one\n"
		"                     this machine is (its GPUs, driver and platform), or why none\n"
		"                     is; a target of other hardware syncs too (a build host),\n"
		"                     with a note saying so\n"
		"  --venv DIR         the virtual environment (default: PROJECT/.venv), made when\n"
		"                     missing for an interpreter that fits the target's python\n"
		"  --python P         that interpreter: X.Y, a name (python3.12) or a path\n"
		"  --with GROUP       check that the target's lock covers this group (Poetry's\n"
		"                     install --with: a target declares its groups)\n"
		"  --dry-run          print the plan (install / upgrade / remove), change nothing\n"
		"  --locked           refuse to lock: exit 1 when the lock is missing or stale (CI)\n"
		"  --reinstall        reinstall every package, even those already right\n"
		"  --link-mode MODE   how files come from the cache: auto (hardlink, then reflink,\n"
		"                     then copy), hardlink, reflink or copy\n"
		"  --compile          byte-compile the installed .py files (pip's --compile)\n"
		"  --no-wait          exit 1 at once when another gpuenv is changing the venv\n"
		"  --no-install-project  leave the project's own package out (by default it is\n"
		"                     installed editable, PEP 660, when the lock has it)\n"
		"  --offline, --refresh, --index-url, --source-url, --torch-index, --find-links,\n"
		"  --cache-dir, --facts, --kb-dir, --retries, --timeout, --build-timeout, --pre,\n"
		"  --only-binary, --no-binary: as for gpuenv lock (used when the lock is\n"
		"                     made first, and for the downloads)\n"
		CLI_PROFILE_HELP
		"  --json             the plan and the figures as one object on stdout\n"
		"\n"
		"Every change is one transaction: a sync killed at any point is completed or\n"
		"rolled back by the next gpuenv run on the venv; the venv is never a mix\n"
		"(build-against-env packages are a second transaction, after the rest).\n"
		"sdist and directory entries are built into wheels (PEP 517, docs/build.md),\n"
		"each in a build venv gpuenv makes; built wheels are cached by source and\n"
		"build settings, each build's log kept in the cache. Builds get the target's\n"
		"hardware: CUDA_HOME (a toolkit of the lock's CUDA major), TORCH_CUDA_ARCH_LIST\n"
		"(the target's GPUs), MAX_JOBS (this machine's CPUs and memory).\n"
		"exit status: 0 the venv matches the lock, 1 no target fits this machine, the\n"
		"lock is missing or stale with --locked, no interpreter fits, the venv is busy\n"
		"with --no-wait, a source build failed (the log's end and its path are\n"
		"printed, with diagnose's causes and fixes), or no CUDA toolkit fits a\n"
		"build-against-env package, 2 usage, 4 an input could not be read, fetched or\n"
		"installed, or the --profile trace could not be written",
};
