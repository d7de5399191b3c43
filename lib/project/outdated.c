/* gpuenv outdated (include/gpuenv/project.h, docs/lock.md "Outdated"): for
 * each package of a target's lock, the newest version the sources offer,
 * the newest the project's constraints allow on the target (the version
 * `lock --upgrade` would take: the same resolution, written nowhere), and
 * for torch the knowledge base's verdict on the target of each. */
#include "gpuenv/project.h"

#include <errno.h>
#include <string.h>

#include "gpuenv/wheel.h"

#define OUTDATED_MAX_KBT 16

/* What the upgrade resolution gave one target (gpuenv_project_lock's
 * callback copies it: its strings die with the callback). */
struct od_state {
	gpuenv_project_t *pj;
	gpuenv_outdated_t *out;
	size_t n;
	const gpuenv_manifest_target_t *const *pick;
	const char ***names, ***versions; /* per target: the resolution */
	size_t *nres;
	const char **torch_source;
	bool oom;
};

static const char *dup(gpuenv_arena_t *a, const char *s)
{
	return s ? gpuenv_arena_strndup(a, s, strlen(s)) : NULL;
}

static void od_done(void *ud, const gpuenv_project_locked_t *r)
{
	struct od_state *st = ud;
	gpuenv_arena_t *a = &st->pj->arena;
	size_t i;

	for (i = 0; i < st->n && st->pick[i] != r->t; i++)
		;
	if (i == st->n)
		return;
	gpuenv_outdated_t *o = &st->out[i];
	o->rc = r->rc;
	st->torch_source[i] = r->torch_source;
	if (r->rc == GPUENV_ENOSOLUTION)
		o->detail = dup(a, r->res && r->res->explanation ? r->res->explanation : "no solution");
	else if (r->rc)
		o->detail = dup(a, r->error ? r->error : "the lock could not be made");
	if (r->rc && !o->detail)
		st->oom = true;
	if (r->rc)
		return;
	size_t n = r->res->npkgs;
	const char **nm = gpuenv_arena_calloc(a, n + 1, sizeof(*nm));
	const char **vs = gpuenv_arena_calloc(a, n + 1, sizeof(*vs));
	if (!nm || !vs) {
		st->oom = true;
		return;
	}
	for (size_t k = 0; k < n; k++) {
		nm[k] = dup(a, r->res->pkgs[k].name);
		vs[k] = dup(a, r->res->pkgs[k].cand->version);
		if (!nm[k] || !vs[k])
			st->oom = true;
	}
	st->names[i] = nm;
	st->versions[i] = vs;
	st->nres[i] = n;
}

/* The version of a file on a project page, or false (not a distribution
 * file gpuenv reads). */
static bool file_version(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_index_file_t *f, gpuenv_version_t *v,
	gpuenv_str_t *text)
{
	gpuenv_wheel_name_t wn;
	gpuenv_sdist_name_t sn;
	size_t len = strlen(f->filename);

	if (len > 4 && !strcmp(f->filename + len - 4, ".whl")) {
		if (gpuenv_wheel_name_parse(ctx, a, gpuenv_str(f->filename), 0, &wn) == 0) {
			*v = wn.version;
			*text = wn.version_text;
			return true;
		}
	} else if (gpuenv_sdist_name_parse(ctx, a, gpuenv_str(f->filename), &sn) == 0) {
		*v = sn.version;
		*text = sn.version_text;
		return true;
	}
	gpuenv_error_clear(ctx);
	return false;
}

/* The newest version of pr that is not yanked (and no pre-release unless
 * pre), in a; NULL when none. */
static const char *newest(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_index_project_t *pr, bool pre)
{
	gpuenv_version_t best, v;
	gpuenv_str_t bt = { 0 }, t;
	bool have = false;

	for (size_t i = 0; pr && i < pr->nfiles; i++) {
		const gpuenv_index_file_t *f = &pr->files[i];
		if (f->yanked || !file_version(ctx, a, f, &v, &t))
			continue;
		if (!pre && gpuenv_version_is_prerelease(&v))
			continue;
		if (!have || gpuenv_version_cmp(&v, &best) > 0) {
			best = v;
			bt = t;
			have = true;
		}
	}
	return have ? gpuenv_arena_strndup(a, bt.ptr, bt.len) : NULL;
}

/* The knowledge base's verdict on torch version on target t (enum
 * gpuenv_kb_verdict; GPUENV_KB_UNKNOWN when the KB has no such build), its
 * first reason in *why. */
static int torch_runs(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, const char *version, const char **why)
{
	const gpuenv_kb_torch_variant_t *var = NULL;
	gpuenv_kb_target_t kbt[OUTDATED_MAX_KBT];
	size_t nkbt;
	int verdict = GPUENV_KB_YES;

	*why = NULL;
	if (!pj->kb || !version || gpuenv_kb_torch_lookup(pj->kb, gpuenv_str(version), &var) != 0 || !var) {
		gpuenv_error_clear(pj->ctx);
		*why = "the knowledge base has no such torch build";
		return GPUENV_KB_UNKNOWN;
	}
	nkbt = gpuenv_target_kb(pj->kb, &t->target, kbt, OUTDATED_MAX_KBT);
	if (nkbt > OUTDATED_MAX_KBT)
		nkbt = OUTDATED_MAX_KBT;
	for (size_t i = 0; i < nkbt; i++) {
		gpuenv_kb_torch_verdict_t vd;
		if (gpuenv_kb_torch_check(pj->kb, &kbt[i], var, &pj->arena, &vd) != 0) {
			gpuenv_error_clear(pj->ctx);
			return GPUENV_KB_UNKNOWN;
		}
		if (vd.verdict == GPUENV_KB_NO || (vd.verdict == GPUENV_KB_UNKNOWN && verdict == GPUENV_KB_YES)) {
			verdict = vd.verdict;
			for (size_t k = 0; k < vd.n_reason && !*why; k++)
				if (vd.reason[k].text && vd.reason[k].verdict == vd.verdict)
					*why = vd.reason[k].text;
		}
	}
	return verdict;
}

/* The source a locked name comes from: the torch build's for the torch
 * family, a dependency's own, or NULL (the priority rule). */
static const char *name_source(const gpuenv_project_t *pj, const char *name, const char *torch_source)
{
	if (torch_source && gpuenv_project_torch_routed(name))
		return torch_source;
	for (size_t i = 0; i < pj->m.ndeps; i++)
		if (pj->m.deps[i].source && pj->m.deps[i].name && !strcmp(pj->m.deps[i].name, name))
			return pj->m.deps[i].source;
	return NULL;
}

/* One target's rows from its lock, the upgrade resolution and the pages. */
static int od_rows(gpuenv_project_t *pj, gpuenv_index_t *ix, struct od_state *st, size_t ti, const gpuenv_lock_t *lk)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	gpuenv_arena_t *a = &pj->arena;
	gpuenv_outdated_t *o = &st->out[ti];
	size_t n = 0, np = lk->npackages;
	gpuenv_outdated_pkg_t *rows = gpuenv_arena_calloc(a, np + 1, sizeof(*rows));
	const char **names = gpuenv_arena_calloc(a, np + 1, sizeof(*names));
	const char **only = gpuenv_arena_calloc(a, np + 1, sizeof(*only));
	const gpuenv_index_project_t **pages = gpuenv_arena_calloc(a, np + 1, sizeof(*pages));

	if (!rows || !names || !only || !pages)
		return gpuenv_oom(ctx, "for the outdated packages");
	for (size_t i = 0; i < np; i++) { /* a directory, vcs or archive entry comes from no index */
		const gpuenv_lock_package_t *p = &lk->packages[i];
		if (!p->name || !p->version || p->directory || p->vcs || p->archive ||
			(n && !strcmp(rows[n - 1].name, p->name)))
			continue;
		rows[n] = (gpuenv_outdated_pkg_t){ .name = p->name, .locked = p->version,
			.torch_family = gpuenv_project_torch_routed(p->name), .latest_runs = -1, .allowed_runs = -1 };
		for (size_t k = 0; k < st->nres[ti]; k++)
			if (!strcmp(st->names[ti][k], p->name))
				rows[n].allowed = st->versions[ti][k];
		names[n] = p->name;
		only[n] = name_source(pj, p->name, st->torch_source[ti]);
		n++;
	}
	if (n && gpuenv_index_projects(ix, ctx, names, only, n, pages) != 0)
		return ctx->err.code;
	for (size_t i = 0; i < n; i++) {
		gpuenv_outdated_pkg_t *r = &rows[i];
		gpuenv_version_t lv;
		bool pre = false;
		if (gpuenv_version_parse(ctx, a, gpuenv_str(r->locked), &lv) == 0)
			pre = gpuenv_version_is_prerelease(&lv);
		gpuenv_error_clear(ctx);
		r->latest = newest(ctx, a, pages[i], pre);
		if (!strcmp(r->name, "torch")) {
			r->latest_runs = torch_runs(pj, o->t, r->latest, &r->latest_why);
			r->allowed_runs = torch_runs(pj, o->t, r->allowed, &r->allowed_why);
		}
		if (o->rc == 0 && (!r->allowed || strcmp(r->allowed, r->locked)))
			o->noutdated++;
	}
	o->pkgs = rows;
	o->npkgs = n;
	return 0;
}

int gpuenv_project_outdated(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_outdated_t **outp)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	gpuenv_arena_t *a = &pj->arena;
	size_t cap = npick ? npick : 1;
	gpuenv_outdated_t *out = gpuenv_arena_calloc(a, cap, sizeof(*out));
	gpuenv_lock_t *locks = gpuenv_arena_calloc(a, cap, sizeof(*locks));
	const gpuenv_manifest_target_t **have = gpuenv_arena_calloc(a, cap, sizeof(*have));
	struct od_state st = { .pj = pj, .out = out, .pick = have,
		.names = gpuenv_arena_calloc(a, cap, sizeof(*st.names)),
		.versions = gpuenv_arena_calloc(a, cap, sizeof(*st.versions)),
		.nres = gpuenv_arena_calloc(a, cap, sizeof(*st.nres)),
		.torch_source = gpuenv_arena_calloc(a, cap, sizeof(*st.torch_source)) };
	gpuenv_project_lock_opts_t o = *opts;
	gpuenv_index_t *ix = NULL;
	int worst, rc = 0;

	*outp = NULL;
	if (!out || !locks || !have || !st.names || !st.versions || !st.nres || !st.torch_source)
		return gpuenv_oom(ctx, "for the outdated packages");
	/* the locks there are; a target without one is reported as such */
	for (size_t i = 0; i < npick; i++) {
		const char *path = gpuenv_project_lock_path(pj, pick[i]);
		out[i].t = pick[i];
		out[i].lock_name = gpuenv_project_lock_name(a, &pj->m, pick[i]);
		if (!path || !out[i].lock_name)
			return gpuenv_oom(ctx, "for the lock's path");
		const char *detail;
		int state = gpuenv_project_lock_state(pj, pick[i], path, &locks[i], &detail);
		if (state < 0)
			return state;
		out[i].state = state;
		out[i].detail = detail;
		if (locks[i].lock_version)
			have[st.n++] = pick[i];
	}
	/* the upgrade resolution of the targets that have a lock, written
	 * nowhere: what the constraints allow */
	o.upgrade = (gpuenv_upgrade_t){ .all = true };
	o.dry_run = true;
	o.dump_dir = NULL;
	o.done = od_done;
	o.ud = &st;
	/* od_done finds a target's slot by pick order: map have[] to out[] */
	gpuenv_outdated_t *slots = gpuenv_arena_calloc(a, cap, sizeof(*slots));
	if (!slots)
		return gpuenv_oom(ctx, "for the outdated packages");
	st.out = slots;
	if (st.n && gpuenv_project_lock(pj, &o, have, st.n, &ix, &worst) != 0)
		return ctx->err.code;
	if (st.oom) {
		gpuenv_index_close(ix);
		return gpuenv_oom(ctx, "for the outdated packages");
	}
	for (size_t i = 0, j = 0; i < npick && !rc; i++) {
		if (!locks[i].lock_version)
			continue;
		slots[j].t = out[i].t;
		slots[j].lock_name = out[i].lock_name;
		slots[j].state = out[i].state;
		if (!slots[j].detail) /* the upgrade's failure says more */
			slots[j].detail = out[i].detail;
		rc = od_rows(pj, ix, &st, j, &locks[i]);
		out[i] = slots[j++];
	}
	gpuenv_index_close(ix);
	if (rc)
		return rc;
	*outp = out;
	return 0;
}
