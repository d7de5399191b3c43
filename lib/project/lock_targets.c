/* Locking the project's targets (include/gpuenv/project.h): every target's
 * torch build chosen first (their indexes are sources too), one index
 * client for all, each target resolved by gpuenv_project_lock_target and
 * its lock written only when it changed. */
#include "gpuenv/project.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/fs.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int gpuenv_project_index_open(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_index_source_t *extra, size_t nextra, gpuenv_index_t **ix)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	size_t n = opts->index.nsources;
	gpuenv_index_source_t *src = gpuenv_arena_calloc(&pj->arena, n + nextra + 1, sizeof(*src));
	gpuenv_index_opts_t io = opts->index;

	*ix = NULL;
	if (!src)
		return gpuenv_oom(ctx, "for the index sources");
	if (n)
		memcpy(src, opts->index.sources, n * sizeof(*src));
	for (size_t i = 0; i < nextra; i++)
		src[n++] = extra[i];
	io.sources = src;
	io.nsources = n;
	return gpuenv_index_open(ctx, &io, ix);
}

/* ctx->err as one line of a lock (why the target has no torch build): a
 * file of the project named relative to it, any other by its name alone;
 * a lock travels, the absolute paths of the machine that made it do not. */
static const char *error_for_lock(gpuenv_project_t *pj)
{
	gpuenv_error_t e = pj->ctx->err;
	size_t n = strlen(pj->dir);
	const char *rel = e.file;
	char buf[1024];

	if (n && !strncmp(e.file, pj->dir, n) && e.file[n] == '/')
		rel = e.file + n + 1;
	else if (e.file[0] == '/')
		rel = strrchr(e.file, '/') + 1;
	memmove(e.file, rel, strlen(rel) + 1);
	gpuenv_error_format(&e, buf, sizeof(buf));
	return e.hint[0] ? gpuenv_arena_printf(&pj->arena, "%s; %s", buf, e.hint).ptr
			 : gpuenv_arena_strndup(&pj->arena, buf, strlen(buf));
}

/* The dump of one target's resolution inputs written beside the others. */
static void write_dump(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts, const gpuenv_buf_t *dump,
	const gpuenv_manifest_target_t *t, gpuenv_project_locked_t *r)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	gpuenv_error_t saved = ctx->err;
	char buf[1024];

	r->dump_path = gpuenv_arena_printf(&pj->arena, "%s/scenario.%s.toml", opts->dump_dir, t->name).ptr;
	if (!r->dump_path)
		gpuenv_oom(ctx, "for the dump's path");
	/* DIR is made as `mkdir -p` would; a place it cannot be is an error */
	if (!r->dump_path || gpuenv_fs_mkdirs(ctx, opts->dump_dir, 0755) != 0 ||
		gpuenv_fs_write_atomic(ctx, r->dump_path, dump->data, dump->len, 0644) != 0) {
		gpuenv_error_format(&ctx->err, buf, sizeof(buf));
		r->dump_error = gpuenv_arena_strndup(&pj->arena, buf, strlen(buf));
		if (!r->dump_error)
			r->dump_error = "out of memory";
		r->dump_path = NULL;
	}
	ctx->err = saved;
}

/* The source named url among src[0..n), or SIZE_MAX. */
static size_t source_at(const gpuenv_index_source_t *src, size_t n, const char *url)
{
	for (size_t k = 0; k < n; k++)
		if (src[k].url && url && !strcmp(src[k].url, url))
			return k;
	return SIZE_MAX;
}

/* The name of the source at url: the project's, one added before, or a new
 * explicit source "torch-TAG" appended to extra[*nextra..cap).  NULL: out
 * of memory, or no room left (cap is sized for every target's builds). */
static const char *source_for(gpuenv_project_t *pj, const gpuenv_index_source_t *src, size_t nsrc,
	gpuenv_index_source_t *extra, size_t *nextra, size_t cap, const char *url, const char *tag)
{
	size_t k = source_at(src, nsrc, url);

	if (k != SIZE_MAX)
		return src[k].name;
	if ((k = source_at(extra, *nextra, url)) != SIZE_MAX)
		return extra[k].name;
	if (*nextra >= cap)
		return gpuenv_fail(pj->ctx, GPUENV_ETOOBIG, NULL, 0, 0, "more than %zu torch build sources", cap), NULL;
	extra[*nextra] = (gpuenv_index_source_t){ .url = url, .priority = GPUENV_SOURCE_EXPLICIT,
		.name = gpuenv_arena_printf(&pj->arena, "torch-%s", tag).ptr };
	if (!extra[*nextra].name)
		return gpuenv_oom(pj->ctx, "for the torch builds"), NULL;
	return extra[(*nextra)++].name;
}

/* torch-backend "auto" on a GPU target: a source for each build the
 * choice names (bc->offer_tags) and for cpu (so that a mirror of CPU builds
 * alone is named as one; a GPU target never takes them), appended to
 * extra[*nextra..) unless there; their names into *names, how many into
 * *n.  0 or -ENOMEM. */
static int offer_sources(gpuenv_project_t *pj, const gpuenv_backend_choice_t *bc, const gpuenv_index_source_t *src,
	size_t nsrc, gpuenv_index_source_t *extra, size_t *nextra, size_t cap, const char ***names, size_t *n)
{
	const char **nm = gpuenv_arena_calloc(&pj->arena, bc->noffer_tags + 1, sizeof(*nm));

	*n = 0;
	*names = nm;
	if (!nm)
		return gpuenv_oom(pj->ctx, "for the torch builds");
	for (size_t i = 0; i <= bc->noffer_tags && *nextra < cap; i++) {
		const char *tag = i < bc->noffer_tags ? bc->offer_tags[i] : "cpu";
		const char *url = gpuenv_arena_printf(&pj->arena, "%s/%s/", pj->m.torch_index, tag).ptr;
		if (!url)
			return gpuenv_oom(pj->ctx, "for the torch builds");
		const char *name = source_for(pj, src, nsrc, extra, nextra, cap, url, tag);
		if (!name)
			return pj->ctx->err.code;
		nm[(*n)++] = name;
	}
	return 0;
}

/* One target as gpuenv_project_lock sees it before resolving: its existing
 * lock, what changed in its hardware since, its torch build (and the KB's
 * pick when the locked build is kept) with their sources. */
struct lock_plan {
	gpuenv_lock_t old;	   /* lock_version NULL: none readable */
	const char *change;	   /* gpuenv_project_target_change */
	gpuenv_backend_choice_t bc, pick; /* pick: the KB's, when bc is the lock's */
	bool kept;
	const char *error;	   /* no torch build runs: why */
	const char *source, *pick_source;
	const char **offers;	   /* "auto" on a GPU target: the build indexes asked */
	size_t noffers;
};

/* Lock one target and write its lock; the status it earns (0, 1, 4). */
static int lock_one(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts, gpuenv_index_t *ix,
	const gpuenv_manifest_target_t *t, const struct lock_plan *pl)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const gpuenv_backend_choice_t *bc = pl->error ? NULL : &pl->bc;
	gpuenv_project_lock_req_t rq = { .m = &pj->m, .t = t, .backend = bc, .torch_error = pl->error,
		.torch_source = pl->source, .ix = ix, .kb = pj->kb, .pre = opts->pre,
		.offer_sources = pl->kept ? NULL : pl->offers, .noffers = pl->kept ? 0 : pl->noffers,
		.only_binary = opts->only_binary, .nonly_binary = opts->nonly_binary,
		.no_binary = opts->no_binary, .nno_binary = opts->nno_binary, .sdist_meta = opts->sdist_meta,
		.cache_dir = opts->index.cache_dir, .refresh = opts->index.refresh };
	gpuenv_project_locked_t r = { .t = t, .backend = bc, .torch_error = pl->error,
		.old_lock = pl->old.lock_version != NULL, .target_change = pl->change,
		.old_backend = pl->old.target.backend, .backend_kept = pl->kept,
		.backend_pick = pl->kept ? pl->pick.backend : NULL, .torch_source = bc ? pl->source : NULL };
	const gpuenv_lock_t *oldlk = pl->old.lock_version ? &pl->old : NULL;
	gpuenv_project_lock_out_t out;
	gpuenv_preference_t *pref;
	gpuenv_lock_change_t *chg;
	gpuenv_backend_choice_t locked;
	gpuenv_buf_t dump, old;
	char buf[1024];
	double t0 = now_s();
	int st = 0;

	r.lock_name = gpuenv_project_lock_name(&pj->arena, &pj->m, t);
	r.lock_path = gpuenv_project_lock_path(pj, t);
	if (!r.lock_name || !r.lock_path)
		return gpuenv_oom(ctx, "for the lock's path"), 4;
	if (gpuenv_project_preferences(ctx, &pj->arena, oldlk, &opts->upgrade, pl->change != NULL, &pref,
		    &rq.nprefer) != 0)
		return 4;
	rq.prefer = pref;
	gpuenv_buf_init(&dump, ctx, 256u << 20);
	gpuenv_buf_init(&old, ctx, 64u << 20);
	if (opts->dump_dir)
		rq.dump = &dump;
	r.rc = gpuenv_project_lock_target(ctx, &pj->arena, &rq, &out);
	if (r.rc == GPUENV_ENOSOLUTION && pl->kept) {
		/* the locked torch build kept has no solution now: the KB's
		 * pick, as without a lock (a preference never makes a lock
		 * fail) */
		gpuenv_error_clear(ctx);
		gpuenv_project_lock_out_free(&out);
		dump.len = 0;
		rq.backend = r.backend = &pl->pick;
		rq.torch_source = r.torch_source = pl->pick_source;
		rq.offer_sources = pl->offers;
		rq.noffers = pl->noffers;
		r.backend_kept = false;
		r.backend_pick = NULL;
		r.rc = gpuenv_project_lock_target(ctx, &pj->arena, &rq, &out);
	}
	if (r.rc == 0 && out.locked.backend) {
		locked = out.locked; /* the build the lock holds, and why */
		r.backend = &locked;
		r.warnings = out.warnings;
	}
	if (r.rc == 0 && oldlk) {
		if (gpuenv_project_lock_diff(ctx, &pj->arena, oldlk, &out.lock, &chg, &r.nchanges) != 0)
			r.rc = ctx->err.code;
		r.changes = chg;
	}
	if (opts->dump_dir && dump.len)
		write_dump(pj, opts, &dump, t, &r);
	gpuenv_buf_free(&dump);
	/* an output asked for and not written: the job was not done (4),
	 * whatever the lock's own outcome */
	if (r.dump_error)
		st = 4;
	if (r.rc == GPUENV_ENOSOLUTION) {
		r.status = "no-solution";
		st = st > 1 ? st : 1;
	} else if (r.rc != 0) {
		r.status = "error";
	} else if (gpuenv_fs_read(ctx, r.lock_path, 64u << 20, &old) == 0 && old.len == out.text.len &&
		   !memcmp(old.data, out.text.data, old.len)) {
		r.status = "unchanged";
		gpuenv_fs_clean_tmp(r.lock_path); /* a killed lock's (the write does it too) */
	} else if (opts->dry_run) {
		gpuenv_error_clear(ctx);
		r.status = "outdated";
	} else {
		gpuenv_error_clear(ctx);
		if (gpuenv_fs_write_atomic(ctx, r.lock_path, out.text.data, out.text.len, 0644) != 0) {
			r.status = "error";
			r.rc = ctx->err.code;
		} else {
			r.status = "written";
		}
	}
	if (!strcmp(r.status, "error")) {
		gpuenv_error_format(&ctx->err, buf, sizeof(buf));
		r.error = gpuenv_arena_strndup(&pj->arena, buf, strlen(buf));
		r.hint = gpuenv_arena_strndup(&pj->arena, ctx->err.hint, strlen(ctx->err.hint));
		if (!r.error || !r.hint)
			r.error = "out of memory", r.hint = "";
		/* a build backend that failed on an sdist's metadata is the
		 * answer no, as a failed build is for sync */
		st = r.rc == GPUENV_EBUILD ? 1 : 4;
	}
	r.secs = now_s() - t0;
	r.res = &out.res;
	if (r.rc == 0)
		for (size_t i = 0; i < out.res.npkgs; i++)
			if (!strcmp(out.res.pkgs[i].name, "torch"))
				r.torch = out.res.pkgs[i].cand->version;
	if (opts->done)
		opts->done(opts->ud, &r);
	gpuenv_error_clear(ctx);
	gpuenv_buf_free(&old);
	gpuenv_project_lock_out_free(&out);
	return st;
}

/* The source name of a torch build's index: a source of the project's with
 * that URL, or one added to extra. */
static const char *torch_source(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_backend_choice_t *bc, gpuenv_index_source_t *extra, size_t *nextra, size_t cap)
{
	if (bc->user_pinned)
		return bc->source;
	return source_for(pj, opts->index.sources, opts->index.nsources, extra, nextra, cap, bc->index_url,
		bc->backend);
}

/* The target's existing lock (none readable: pl->old zeroed) and what
 * changed in its hardware since.  0, or -ENOMEM. */
static int plan_old(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, struct lock_plan *pl)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const char *path = gpuenv_project_lock_path(pj, t);

	if (!path)
		return gpuenv_oom(ctx, "for the lock's path");
	if (gpuenv_project_read_lock(ctx, &pj->arena, path, &pl->old) != 0) {
		if (ctx->err.code == -ENOMEM)
			return -ENOMEM;
		/* missing or unreadable: locked as if new (lock --check says
		 * which) */
		gpuenv_error_clear(ctx);
		memset(&pl->old, 0, sizeof(pl->old));
		return 0;
	}
	pl->change = gpuenv_project_target_change(&pj->arena, &pl->old.target, t);
	return 0;
}

/* The locked torch build kept instead of the KB's pick (in pl->bc) when
 * the target's hardware is unchanged, the backend is the KB's to choose
 * ("auto"), no upgrade of torch was asked for, and the locked build still
 * runs on the target.  0, or -ENOMEM. */
static int plan_keep(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_manifest_target_t *t, struct lock_plan *pl)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const char *want = t->torch_backend ? t->torch_backend : pj->m.torch_backend ? pj->m.torch_backend : "auto";
	const char *was = pl->old.target.backend;
	gpuenv_manifest_target_t tk = *t;
	gpuenv_backend_choice_t keep;

	if (!pl->old.lock_version || pl->change || !was || pl->bc.user_pinned || strcmp(want, "auto") ||
		!strcmp(was, pl->bc.backend) || gpuenv_upgrade_has(&opts->upgrade, "torch"))
		return 0;
	tk.torch_backend = was;
	if (gpuenv_manifest_backend(ctx, &pj->arena, &pj->m, &tk, pj->kb, &keep) != 0) {
		if (ctx->err.code == -ENOMEM)
			return -ENOMEM;
		gpuenv_error_clear(ctx); /* it no longer runs: the KB's pick */
		return 0;
	}
	keep.reason = gpuenv_arena_printf(&pj->arena, "%s kept from the lock: the target's GPU and driver are "
		"unchanged (the knowledge base picks %s now; gpuenv lock --upgrade-package torch moves to it)%s%s",
		was, pl->bc.backend, keep.reason ? "\n" : "", keep.reason ? keep.reason : "").ptr;
	if (!keep.reason)
		return gpuenv_oom(ctx, "for the targets");
	pl->pick = pl->bc;
	pl->bc = keep;
	pl->kept = true;
	return 0;
}

int gpuenv_project_lock(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_index_t **ix_out, int *worst)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const gpuenv_index_source_t *src = opts->index.sources;
	size_t nsrc = opts->index.nsources, nextra = 0, cap = npick ? npick : 1;
	/* per target: its build and the KB's pick, then the offered builds and cpu */
	size_t xcap = cap * (pj->kb ? pj->kb->n_torch_variant + 4 : 2);
	struct lock_plan *pl = gpuenv_arena_calloc(&pj->arena, cap, sizeof(*pl));
	gpuenv_index_source_t *extra = gpuenv_arena_calloc(&pj->arena, xcap, sizeof(*extra));
	gpuenv_index_t *ix = NULL;

	*ix_out = NULL;
	*worst = 0;
	if (!pl || !extra)
		return gpuenv_oom(ctx, "for the targets");
	/* every target's torch build first: their indexes are sources too */
	for (size_t i = 0; i < npick; i++) {
		if (plan_old(pj, pick[i], &pl[i]) != 0)
			return ctx->err.code;
		if (gpuenv_manifest_backend(ctx, &pj->arena, &pj->m, pick[i], pj->kb, &pl[i].bc) != 0) {
			if (ctx->err.code == -ENOMEM)
				return ctx->err.code;
			if (!(pl[i].error = error_for_lock(pj)))
				return gpuenv_oom(ctx, "for the targets");
			gpuenv_error_clear(ctx);
			continue;
		}
		if (plan_keep(pj, opts, pick[i], &pl[i]) != 0)
			return ctx->err.code;
		if (!(pl[i].source = torch_source(pj, opts, &pl[i].bc, extra, &nextra, xcap)))
			return ctx->err.code;
		if (pl[i].kept && !(pl[i].pick_source = torch_source(pj, opts, &pl[i].pick, extra, &nextra, xcap)))
			return ctx->err.code;
		/* "auto" (the KB's choice, kept or not): the builds the index is asked for */
		const gpuenv_backend_choice_t *au = pl[i].kept ? &pl[i].pick : &pl[i].bc;
		if (pick[i]->target.ngpus && pj->kb && au->how && !strcmp(au->how, "auto") &&
			offer_sources(pj, au, src, nsrc, extra, &nextra, xcap, &pl[i].offers, &pl[i].noffers) != 0)
			return ctx->err.code;
	}
	if (gpuenv_project_index_open(pj, opts, extra, nextra, &ix) != 0)
		return ctx->err.code;
	for (size_t i = 0; i < npick; i++) {
		int s = lock_one(pj, opts, ix, pick[i], &pl[i]);
		if (s > *worst)
			*worst = s;
	}
	*ix_out = ix;
	return 0;
}
