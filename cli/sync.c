/* gpuenv sync: make a venv match a target's lock exactly (docs/install.md).
 * The machinery is shared with `run` (cli/run.c) through cli_sync_do. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "build_hw.h"
#include "gpuenv/build.h"
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

extern char **environ;

/* ---- which target: --target NAME, or the one this machine is ------------ */

/* What the light probe leaves out, from the KB: a GPU's compute capability
 * by its name, the newest CUDA the driver runs by its version. */
int cli_machine_from_kb(struct cli *cli, const gpuenv_kb_t *kb, gpuenv_arena_t *arena, gpuenv_target_t *t)
{
	gpuenv_target_gpu_t *g = t->ngpus ? gpuenv_arena_calloc(arena, t->ngpus, sizeof(*g)) : NULL;
	if (t->ngpus && !g)
		return cli_report(cli, CLI_EXIT_CANNOT);
	for (size_t i = 0; i < t->ngpus; i++) {
		gpuenv_kb_gpu_match_t m;
		g[i] = t->gpus[i];
		if (g[i].cc_major < 0 && g[i].name && gpuenv_kb_gpu_find(kb, g[i].name, &m, 1) == 1 &&
			m.gpu->cc.n >= 2) {
			g[i].cc_major = (int)m.gpu->cc.part[0];
			g[i].cc_minor = (int)m.gpu->cc.part[1];
		}
	}
	if (t->ngpus)
		t->gpus = g;
	gpuenv_kb_ver_t dv;
	if (!t->driver_cuda && t->driver && gpuenv_kb_ver_parse(gpuenv_str(t->driver), &dv)) {
		gpuenv_kb_driver_max_t mx;
		gpuenv_kb_driver_max_cuda(kb, &dv, &mx);
		if (mx.ga && mx.ga->cuda.n >= 2)
			t->driver_cuda = gpuenv_arena_printf(arena, "%u.%u", mx.ga->cuda.part[0], mx.ga->cuda.part[1]).ptr;
	}
	return 0;
}

/* This machine's hardware: a light probe (GPUs, driver, host), or --facts. */
static int machine_target(struct cli *cli, const struct cli_sync_opts *o, const gpuenv_kb_t *kb,
	gpuenv_arena_t *arena, gpuenv_target_t *out)
{
	const gpuenv_facts_t *facts = NULL;
	int st;
	if (o->lo.facts_path) {
		if ((st = cli_facts_load(cli, o->verb->name, o->lo.facts_path, NULL, arena, &facts)) != 0)
			return st;
	} else {
		gpuenv_probe_opts_t po;
		json_t *doc = NULL;
		gpuenv_probe_opts_init(&po);
		/* sysfs and procfs only: NVML's start alone costs more than a
		 * no-op sync may (the KB gives what it would have added) */
		po.flags |= GPUENV_PROBE_NO_PYTHON | GPUENV_PROBE_NO_FATBIN | GPUENV_PROBE_NO_LIBS;
		po.hw.flags |= GPUENV_HW_NO_NVML | GPUENV_HW_NO_LIBCUDA;
		po.version = GPUENV_VERSION;
		if (gpuenv_probe_facts_json(&cli->ctx, &po, &doc) != 0 || !doc)
			return cli_report(cli, CLI_EXIT_CANNOT);
		int r = gpuenv_facts_decode(&cli->ctx, arena, doc, NULL, &facts);
		cli_json_drop(doc);
		if (r)
			return cli_report(cli, CLI_EXIT_CANNOT);
	}
	if (gpuenv_target_from_facts(&cli->ctx, arena, facts, SIZE_MAX, out) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return cli_machine_from_kb(cli, kb, arena, out);
}

const char *cli_project_locked_cuda(struct cli *cli, struct cli_project *pj, const gpuenv_manifest_target_t *t,
	gpuenv_lock_t *lk, const char **lk_path, char *buf, size_t bufsz)
{
	const char *path = gpuenv_arena_printf(&pj->arena, "%s/%s", pj->dir, gpuenv_project_lock_name(&pj->arena,
		&pj->m, t)).ptr, *out = NULL;
	memset(lk, 0, sizeof(*lk));
	*lk_path = NULL;
	if (path && cli_lock_read(cli, &pj->arena, path, lk) == 0) {
		out = gpuenv_fit_backend_cuda(lk->target.backend, buf, bufsz);
		*lk_path = path;
	} else {
		memset(lk, 0, sizeof(*lk)); /* no lock yet: judged by the target's driver */
	}
	gpuenv_error_clear(&cli->ctx);
	return out;
}

int cli_project_fit(struct cli *cli, struct cli_project *pj, const gpuenv_target_t *machine,
	const gpuenv_manifest_target_t *t, gpuenv_lock_t *lk, const char **lk_path, gpuenv_fit_t *fit)
{
	char cb[32];
	const char *cuda = cli_project_locked_cuda(cli, pj, t, lk, lk_path, cb, sizeof(cb));
	return gpuenv_target_fit(&cli->ctx, &pj->arena, pj->kb, machine, &t->target, cuda, fit) ? -1 : 0;
}

static int pick_auto(struct cli *cli, struct cli_sync_opts *o, struct cli_project *pj,
	const gpuenv_target_t *machine, const gpuenv_manifest_target_t **out)
{
	gpuenv_fit_t *fits = gpuenv_arena_calloc(&pj->arena, pj->ntargets, sizeof(*fits));
	size_t best = SIZE_MAX;
	if (!fits)
		return cli_report(cli, CLI_EXIT_CANNOT);
	for (size_t i = 0; i < pj->ntargets; i++) {
		if (cli_project_fit(cli, pj, machine, &pj->targets[i], &o->lk, &o->lk_path, &fits[i]) != 0)
			return cli_report(cli, CLI_EXIT_CANNOT);
		if (fits[i].verdict != GPUENV_KB_NO && (best == SIZE_MAX || fits[i].score > fits[best].score))
			best = i;
	}
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

static int pick_target(struct cli *cli, struct cli_sync_opts *o, struct cli_project *pj,
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
	if ((st = machine_target(cli, o, pj->kb, &pj->arena, &machine)) != 0)
		return st;
	if (want_auto)
		return pick_auto(cli, o, pj, &machine, out);
	/* a named target: say so when this machine is not its hardware */
	gpuenv_fit_t fit;
	if (cli_project_fit(cli, pj, &machine, *out, &o->lk, &o->lk_path, &fit) != 0)
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

static int ensure_lock(struct cli *cli, struct cli_sync_opts *o, struct cli_project *pj,
	const gpuenv_manifest_target_t *t, gpuenv_index_t **ix, gpuenv_lock_t *lk, const char **lock_path)
{
	const char *name = gpuenv_project_lock_name(&pj->arena, &pj->m, t), *detail;
	const char *path = gpuenv_arena_printf(&pj->arena, "%s/%s", pj->dir, name).ptr;
	gpuenv_lock_t seen;
	memset(&seen, 0, sizeof(seen));
	if (o->lk_path && !strcmp(o->lk_path, path))
		seen = o->lk; /* read by pick_target */
	const char *state = cli_lock_check_one(cli, &pj->arena, &pj->m, t, path, &detail, &seen);
	int st;

	*lock_path = path;
	if (!strcmp(state, "fresh")) {
		*lk = seen;
		return 0;
	}
	if (o->locked) {
		fprintf(stderr, "%s: %s: %s is %s%s%s\nhint: run gpuenv lock --target %s, and commit the lock "
				"(--locked refuses to lock)\n", cli->prog, o->verb->name, path, state,
			detail ? ": " : "", detail ? detail : "", t->name);
		return CLI_EXIT_FAIL;
	}
	if (!o->quiet && !cli->json)
		fprintf(stderr, "%s is %s: locking target %s first\n", name, state, t->name);
	o->lo.quiet_json = true;
	if ((st = cli_lock_targets(cli, o->verb, &o->lo, pj, &t, 1, ix)) != 0)
		return st;
	o->locked_now = true;
	return cli_lock_read(cli, &pj->arena, path, lk) ? cli_report(cli, CLI_EXIT_CANNOT) : 0;
}

/* ---- the venv: opened, or made for an interpreter that fits ------------- */

static int open_venv(struct cli *cli, struct cli_sync_opts *o, struct cli_project *pj, const gpuenv_lock_t *lk,
	gpuenv_venv_t *venv)
{
	const char *dir = o->venv_dir ? o->venv_dir : gpuenv_arena_printf(&pj->arena, "%s/.venv", pj->dir).ptr;
	const char *want_xy = lk->target.python;
	char fits[64] = "";
	gpuenv_python_t py;
	int r;

	if (want_xy) {
		unsigned a = 0, b = 0;
		if (sscanf(want_xy, "%u.%u", &a, &b) == 2)
			snprintf(fits, sizeof(fits), "==%u.%u.*", a, b);
	}
	r = gpuenv_venv_open(&cli->ctx, &pj->arena, dir, venv);
	if (r == 0) {
		char have[32];
		snprintf(have, sizeof(have), "%u.%u", venv->python.major, venv->python.minor);
		if (fits[0] && strncmp(have, want_xy, strlen(have)) != 0) {
			fprintf(stderr, "%s: %s: %s is a venv of Python %s; target %s is Python %s\nhint: remove it "
					"(rm -r %s) and sync again, or give --venv DIR for another one\n", cli->prog,
				o->verb->name, dir, have, lk->target.name ? lk->target.name : "?", want_xy, dir);
			return CLI_EXIT_FAIL;
		}
		return 0;
	}
	if (r != GPUENV_ENOTFOUND)
		return cli_report(cli, CLI_EXIT_CANNOT);
	gpuenv_error_clear(&cli->ctx);
	if (gpuenv_python_find(&cli->ctx, &pj->arena, o->python ? o->python : want_xy, fits[0] ? fits : NULL, &py,
		    NULL, NULL) != 0)
		return cli_report(cli, CLI_EXIT_FAIL);
	if (o->dry_run) { /* nothing is made: the plan is against an empty venv */
		memset(venv, 0, sizeof(*venv));
		venv->root = dir;
		venv->python = py;
		if (!o->quiet && !cli->json)
			printf("would create %s (Python %s, %s)\n", dir, py.version, py.real ? py.real : py.path);
		return 0;
	}
	if (gpuenv_venv_create(&cli->ctx, &pj->arena, dir, &py, 0, venv) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	o->created_venv = true;
	if (!o->quiet && !cli->json)
		fprintf(stderr, "created %s (Python %s, %s)\n", dir, py.version, py.real ? py.real : py.path);
	return 0;
}

/* The wheel tags and marker environment of the venv's interpreter here. */
static int venv_views(struct cli *cli, struct cli_project *pj, const gpuenv_venv_t *venv, const gpuenv_lock_t *lk,
	gpuenv_tagset_t **tags, gpuenv_marker_env_t *env)
{
	gpuenv_wheel_target_t wt;
	struct utsname u;
	char libc[64] = "";
	char *arch = gpuenv_arena_calloc(&pj->arena, 1, sizeof(u.machine));
	char *rel = gpuenv_arena_calloc(&pj->arena, 1, sizeof(u.release));

	if (!arch || !rel || uname(&u) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	memcpy(arch, u.machine, sizeof(u.machine));
	memcpy(rel, u.release, sizeof(u.release));
	memset(&wt, 0, sizeof(wt));
	wt.impl = GPUENV_IMPL_CPYTHON;
	wt.py_major = venv->python.major;
	wt.py_minor = venv->python.minor;
	wt.free_threaded = venv->python.free_threaded;
	wt.os = GPUENV_OS_LINUX;
	snprintf(wt.arch, sizeof(wt.arch), "%s", arch);
#ifdef _CS_GNU_LIBC_VERSION
	if (confstr(_CS_GNU_LIBC_VERSION, libc, sizeof(libc)) > 0)
		(void)sscanf(libc, "glibc %u.%u", &wt.libc_major, &wt.libc_minor);
#endif
	if (gpuenv_tagset_build(&cli->ctx, &wt, tags) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	gpuenv_marker_env_default(env);
	env->python_version = gpuenv_arena_printf(&pj->arena, "%u.%u", venv->python.major, venv->python.minor).ptr;
	env->python_full_version = venv->python.version;
	env->implementation_version = venv->python.version;
	env->platform_machine = arch;
	env->platform_release = rel;
	env->platform_version = "";
	if (lk->nextras)
		gpuenv_marker_env_set_list(env, "extras", lk->extras);
	if (lk->ngroups)
		gpuenv_marker_env_set_list(env, "dependency_groups", lk->dependency_groups);
	return 0;
}

/* ---- progress ---------------------------------------------------------- */

struct progress_state {
	bool tty;
	const char *last_phase;
	size_t last_done;
};

static void progress(void *arg, const char *phase, size_t done, size_t n, uint64_t bytes, uint64_t total)
{
	struct progress_state *ps = arg;
	if (ps->tty) {
		int width = 24, fill = n ? (int)((double)done / (double)n * width) : width;
		fprintf(stderr, "\r\033[K  %-9s [%.*s%*s] %zu/%zu", phase, fill, "########################",
			width - fill, "", done, n);
		if (total)
			fprintf(stderr, "  %.1f/%.1f MB", (double)bytes / 1e6, (double)total / 1e6);
		else if (bytes)
			fprintf(stderr, "  %.1f MB", (double)bytes / 1e6);
		if (done == n)
			fprintf(stderr, "\r\033[K");
		fflush(stderr);
		return;
	}
	/* plain lines: one per phase, when it ends */
	if (done == n && n && (ps->last_phase != phase || ps->last_done != done)) {
		if (bytes)
			fprintf(stderr, "%s: %zu of %zu (%.1f MB)\n", phase, done, n, (double)bytes / 1e6);
		else
			fprintf(stderr, "%s: %zu of %zu\n", phase, done, n);
		ps->last_phase = phase;
		ps->last_done = done;
	}
}

/* ---- the whole sync ---------------------------------------------------- */

static json_t *plan_json(const gpuenv_sync_plan_t *pl)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		const char *src = !a->source ? NULL : a->source->editable ? "editable" : a->source->directory ? "directory"
														   : "sdist";
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?}", "name", a->name, "action",
			gpuenv_sync_op_name(a->op), "installed", a->old_version, "locked", a->new_version, "file",
			a->file ? a->file->name : NULL, "build", src, "build_key", a->build_key));
	}
	return arr;
}

static void print_plan(const gpuenv_sync_plan_t *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		const char *nv = a->new_version ? a->new_version : "(its source tree's version)";
		const char *how = !a->source ? "" : a->source->editable ? " (editable build)" : " (source build)";
		switch (a->op) {
		case GPUENV_SYNC_INSTALL: printf("  + %s %s%s\n", a->name, nv, how); break;
		case GPUENV_SYNC_UPGRADE: printf("  ~ %s %s -> %s%s\n", a->name, a->old_version, nv, how); break;
		case GPUENV_SYNC_REINSTALL: printf("  = %s %s (reinstall)%s\n", a->name, nv, how); break;
		case GPUENV_SYNC_REMOVE: printf("  - %s %s\n", a->name, a->old_version); break;
		default: break;
		}
	}
}

/* A failed commit: a source build's failure with its log's tail, the
 * toolkit problem it ran with and diagnose's reading of its log (exit 1:
 * the source does not build here), else the error (4). */
static int build_failed(struct cli *cli, const gpuenv_builder_t *builder, struct cli_project *pj,
	const struct cli_build_hw *hw)
{
	const gpuenv_build_req_t *q;
	const gpuenv_build_result_t *f = builder ? gpuenv_builder_failure(builder, &q) : NULL;
	if (!f || cli->ctx.err.code != GPUENV_EBUILD)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (f->log_tail && *f->log_tail) {
		fprintf(stderr, "--- the end of the build log of %s (%s) ---\n%s", q->name, f->log, f->log_tail);
		if (f->log_tail[strlen(f->log_tail) - 1] != '\n')
			fputc('\n', stderr);
		fprintf(stderr, "---\n");
	}
	cli_build_hw_explain(cli, pj, hw, f->log);
	return cli_report(cli, CLI_EXIT_FAIL);
}

/* The builds of the sync, for --json. */
static json_t *builds_json(const gpuenv_builder_t *b)
{
	const gpuenv_build_result_t *r;
	const gpuenv_build_req_t *q;
	size_t n = b ? gpuenv_builder_results(b, &r, &q) : 0;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s?, s:s, s:s, s:s, s:b, s:b, s:b, s:s?, s:f}", "name",
			q[i].name, "version", q[i].version, "source", q[i].directory ? "directory" : "sdist", "key",
			r[i].key, "wheel", r[i].wheel, "editable", q[i].editable, "cached", r[i].cached, "isolated",
			r[i].isolated, "log", r[i].log, "seconds", r[i].secs));
	return arr;
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

int cli_sync_do(struct cli *cli, struct cli_sync_opts *o, const char **venv_root)
{
	struct cli_project pj;
	const gpuenv_manifest_target_t *t = NULL;
	gpuenv_index_t *ix = NULL;
	gpuenv_cache_t *cache = NULL;
	gpuenv_sync_t *s = NULL;
	gpuenv_builder_t *builder = NULL;
	gpuenv_tagset_t *tags = NULL;
	gpuenv_lock_t lk;
	gpuenv_venv_t venv;
	gpuenv_marker_env_t env;
	const gpuenv_dep_t *deps = NULL;
	const char *lock_path = NULL;
	const char **requested = NULL;
	size_t ndeps = 0;
	double t0 = cli_now_s();
	int st;

	if ((st = cli_project_open(cli, o->verb->name, o->lo.project, o->lo.facts_path, o->lo.kb_dir,
		     o->lo.torch_index, &pj)) != 0)
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
	if ((st = ensure_lock(cli, o, &pj, t, &ix, &lk, &lock_path)) != 0)
		goto out;
	if ((st = open_venv(cli, o, &pj, &lk, &venv)) != 0)
		goto out;
	if (venv_root && !(*venv_root = strdup(venv.root))) { /* outlives the project */
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", o->verb->name);
		goto out;
	}
	if ((st = venv_views(cli, &pj, &venv, &lk, &tags, &env)) != 0)
		goto out;
	if (gpuenv_manifest_target_deps(&cli->ctx, &pj.arena, &pj.m, t, &deps, &ndeps) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (!(requested = gpuenv_arena_calloc(&pj.arena, ndeps ? ndeps : 1, sizeof(*requested)))) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	for (size_t i = 0; i < ndeps; i++)
		requested[i] = deps[i].name;

	const char *slash = strrchr(lock_path, '/');
	gpuenv_sync_opts_t so = { .lock = &lk, .lock_path = lock_path,
		.lock_dir = slash ? gpuenv_arena_strndup(&pj.arena, lock_path, (size_t)(slash - lock_path)) : ".",
		.venv = &venv, .env = &env, .tags = tags, .requested = requested, .nrequested = ndeps,
		.link_mode = o->link_mode, .compile = o->compile, .reinstall = o->reinstall, .wait = !o->no_wait };
	/* source builds (docs/build.md): for the venv's interpreter, the
	 * packages of [tool.gpuenv] build-against-env against the venv itself */
	/* ... with the target's hardware (cli/build_hw.c): CUDA_HOME and the
	 * rest in env, the toolkit's bin on PATH */
	struct cli_build_hw hw;
	if ((st = cli_build_hw_setup(cli, o, &pj, t, &lk, &hw)) != 0)
		goto out;
	gpuenv_build_opts_t bo = { .python = &venv.python, .tags = tags, .marker_env = &env,
		.base_env = (const char *const *)environ, .against = venv.site ? &venv : NULL,
		.against_names = pj.m.build_against_env, .nagainst = pj.m.nbuild_against_env,
		.env = hw.hw.envp, .nenv = hw.hw.nenv, .path_prefix = hw.hw.path_prepend,
		.cuda_version = hw.hw.cuda_version };
	if (gpuenv_builder_new(&cli->ctx, &bo, &builder) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	gpuenv_builder_sync_hook(builder, &so.builder);
	const char *project_name = NULL;
	if (o->no_install_project && pj.m.name) {
		char norm[256];
		gpuenv_name_normalize_to(gpuenv_str(pj.m.name), norm, sizeof(norm));
		project_name = gpuenv_arena_strndup(&pj.arena, norm, strlen(norm));
		so.skip = &project_name;
		so.nskip = project_name ? 1 : 0;
	}
	if (gpuenv_sync_begin(&cli->ctx, &pj.arena, &so, &s) != 0) {
		st = cli_report(cli, cli->ctx.err.code == GPUENV_ELOCKED ? CLI_EXIT_FAIL : CLI_EXIT_CANNOT);
		goto out;
	}
	const gpuenv_sync_plan_t *pl = gpuenv_sync_plan(s);
	size_t changes = pl->count[GPUENV_SYNC_INSTALL] + pl->count[GPUENV_SYNC_UPGRADE] +
			 pl->count[GPUENV_SYNC_REINSTALL] + pl->count[GPUENV_SYNC_REMOVE];
	size_t nlocked = pl->n - pl->count[GPUENV_SYNC_REMOVE];
	if (pl->recovery.recovered && !o->quiet)
		fprintf(stderr, "%s: an interrupted sync was %s\n", venv.root,
			pl->recovery.rolled_forward ? "completed" : "rolled back");
	if (o->dry_run) {
		if (cli->json) {
			json_t *j = json_pack("{s:s, s:s, s:s, s:b, s:o}", "target", t->name, "lock", lock_path, "venv",
				venv.root, "dry_run", 1, "plan", plan_json(pl));
			st = cli_print_json(cli, j) ? CLI_EXIT_CANNOT : CLI_EXIT_OK;
		} else {
			print_plan(pl);
			printf("would install %zu, upgrade %zu, remove %zu; %zu unchanged (target %s, %s)\n",
				pl->count[GPUENV_SYNC_INSTALL], pl->count[GPUENV_SYNC_UPGRADE] + pl->count[GPUENV_SYNC_REINSTALL],
				pl->count[GPUENV_SYNC_REMOVE], pl->count[GPUENV_SYNC_KEEP], t->name, venv.root);
			st = CLI_EXIT_OK;
		}
		goto out;
	}
	gpuenv_sync_result_t res = { 0 };
	if (changes) {
		struct progress_state ps = { .tty = isatty(STDERR_FILENO) && !o->quiet };
		gpuenv_cache_progress_t cp = { .fn = progress, .arg = &ps };
		if (gpuenv_cache_open(&cli->ctx, o->lo.cache_dir, &cache) != 0) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
		if (!ix && (st = cli_lock_index_open(cli, o->verb, &o->lo, &pj, NULL, 0, &ix)) != 0)
			goto out;
		if (cli_build_hw_refuse(cli, &hw, &pj.m, pl, &st))
			goto out;
		/* build-against-env sources: gpuenv_sync_commit installs everything
		 * else first, then builds them against the venv (two rounds) */
		if (gpuenv_sync_commit(s, cache, ix, cli->json || o->quiet || cli->verbose < 0 ? NULL : &cp, &res) != 0) {
			st = build_failed(cli, builder, &pj, &hw);
			goto out;
		}
	}
	double secs = cli_now_s() - t0;
	if (cli->json) {
		json_t *j = json_pack("{s:s, s:s, s:s, s:s?, s:o, s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I}, s:s, s:f}",
			"target", t->name, "lock", lock_path, "venv", venv.root, "foreign_hardware", o->foreign,
			"plan", plan_json(pl), "counts", "install", (json_int_t)pl->count[GPUENV_SYNC_INSTALL], "upgrade",
			(json_int_t)(pl->count[GPUENV_SYNC_UPGRADE] + pl->count[GPUENV_SYNC_REINSTALL]), "remove",
			(json_int_t)pl->count[GPUENV_SYNC_REMOVE], "keep", (json_int_t)pl->count[GPUENV_SYNC_KEEP],
			"cache", "downloaded", (json_int_t)res.downloaded, "unpacked", (json_int_t)res.unpacked,
			"repaired", (json_int_t)res.repaired, "files", (json_int_t)res.files, "link_mode",
			gpuenv_link_mode_name(res.link_mode_used), "seconds", secs);
		if (j)
			json_object_set_new(j, "phases", json_pack("{s:f, s:f, s:f, s:f}", "build", res.secs_build, "cache",
				res.secs_cache, "stage", res.secs_stage, "commit", res.secs_commit));
		if (j)
			json_object_set_new(j, "builds", builds_json(builder));
		st = cli_print_json(cli, j) ? CLI_EXIT_CANNOT : CLI_EXIT_OK;
		goto out;
	}
	if (!o->quiet || changes) {
		FILE *f = o->quiet ? stderr : stdout;
		if (!changes) {
			fprintf(f, "%zu package%s already match %s (target %s) in %.3f s\n", nlocked, plural(nlocked),
				strrchr(lock_path, '/') ? strrchr(lock_path, '/') + 1 : lock_path, t->name, secs);
		} else {
			if (cli->verbose > 0)
				print_plan(pl);
			size_t nin = pl->count[GPUENV_SYNC_INSTALL], nup = pl->count[GPUENV_SYNC_UPGRADE] +
									   pl->count[GPUENV_SYNC_REINSTALL];
			fprintf(f, "installed %zu package%s", nin + nup, plural(nin + nup));
			if (nup)
				fprintf(f, " (%zu upgraded)", nup);
			if (pl->count[GPUENV_SYNC_REMOVE])
				fprintf(f, ", removed %zu", pl->count[GPUENV_SYNC_REMOVE]);
			fprintf(f, " in %.2f s", secs);
			if (res.downloaded)
				fprintf(f, "; %zu downloaded", res.downloaded);
			if (res.built) {
				const gpuenv_build_result_t *br;
				size_t nb = gpuenv_builder_results(builder, &br, NULL), nc = 0;
				for (size_t i = 0; i < nb; i++)
					nc += br[i].cached;
				fprintf(f, "; %zu built from source", res.built);
				if (nc)
					fprintf(f, " (%zu from the build cache)", nc);
			}
			fprintf(f, " (target %s, %s)\n", t->name, venv.root);
		}
	}
	st = CLI_EXIT_OK;
out:
	gpuenv_sync_end(s);
	gpuenv_builder_free(builder);
	gpuenv_cache_close(cache);
	gpuenv_index_close(ix);
	gpuenv_tagset_free(tags);
	cli_project_close(&pj);
	return st;
}

/* Options of sync (and run) into o: 1 taken, 0 not one, -1 usage error. */
int cli_sync_opt(struct cli *cli, int c, char *arg, struct cli_sync_opts *o, int *exit_st)
{
	int h = cli_lock_opt(cli, o->verb, c, arg, &o->lo, exit_st);
	if (h)
		return h;
	switch (c) {
	case 't': o->target = arg; break;
	case 'V': o->venv_dir = arg; break;
	case 'y': o->python = arg; break;
	case 'W':
		if (o->nwith == CLI_LOCK_MAX_ARGS) {
			*exit_st = cli_usage_error(cli, o->verb, "%s: too many --with options", o->verb->name);
			return -1;
		}
		o->with[o->nwith++] = arg;
		break;
	case 'n': o->dry_run = true; break;
	case 'L': o->locked = true; break;
	case 'm': o->compile = true; break;
	case 'R': o->reinstall = true; break;
	case 'N': o->no_wait = true; break;
	case 'I': o->no_install_project = true; break;
	case 'l':
		if ((o->link_mode = gpuenv_link_mode_parse(arg)) < 0) {
			*exit_st = cli_usage_error(cli, o->verb, "%s: --link-mode wants auto, hardlink, reflink or copy, "
				"not '%s'", o->verb->name, arg);
			return -1;
		}
		break;
	default:
		return 0;
	}
	return 1;
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
		 "                 [--with GROUP]... [--dry-run] [--locked] [--offline] [--reinstall]\n"
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
		"  --offline, --index-url, --source-url, --torch-index, --find-links, --cache-dir,\n"
		"  --facts, --kb-dir, --retries, --timeout, --pre, --only-binary, --no-binary:\n"
		"                     as for gpuenv lock (used when the lock is made first, and\n"
		"                     for the downloads)\n"
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
