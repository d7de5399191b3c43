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
	if (!r->dump_path || gpuenv_fs_write_atomic(ctx, r->dump_path, dump->data, dump->len, 0644) != 0) {
		gpuenv_error_format(&ctx->err, buf, sizeof(buf));
		r->dump_error = gpuenv_arena_strndup(&pj->arena, buf, strlen(buf));
		if (!r->dump_error)
			r->dump_error = "out of memory";
		r->dump_path = NULL;
	}
	ctx->err = saved;
}

/* Lock one target and write its lock; the status it earns (0, 1, 4). */
static int lock_one(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts, gpuenv_index_t *ix,
	const gpuenv_manifest_target_t *t, const gpuenv_backend_choice_t *bc, const char *torch_error,
	const char *torch_source)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	gpuenv_project_lock_req_t rq = { .m = &pj->m, .t = t, .backend = bc, .torch_error = torch_error,
		.torch_source = torch_source, .ix = ix, .kb = pj->kb, .pre = opts->pre,
		.only_binary = opts->only_binary, .nonly_binary = opts->nonly_binary,
		.no_binary = opts->no_binary, .nno_binary = opts->nno_binary, .sdist_meta = opts->sdist_meta };
	gpuenv_project_locked_t r = { .t = t, .backend = bc, .torch_error = torch_error };
	gpuenv_project_lock_out_t out;
	gpuenv_buf_t dump, old;
	char buf[1024];
	double t0 = now_s();
	int st = 0;

	r.lock_name = gpuenv_project_lock_name(&pj->arena, &pj->m, t);
	r.lock_path = gpuenv_project_lock_path(pj, t);
	if (!r.lock_name || !r.lock_path)
		return gpuenv_oom(ctx, "for the lock's path"), 4;
	gpuenv_buf_init(&dump, ctx, 256u << 20);
	gpuenv_buf_init(&old, ctx, 64u << 20);
	if (opts->dump_dir)
		rq.dump = &dump;
	r.rc = gpuenv_project_lock_target(ctx, &pj->arena, &rq, &out);
	if (opts->dump_dir && dump.len)
		write_dump(pj, opts, &dump, t, &r);
	gpuenv_buf_free(&dump);
	if (r.rc == GPUENV_ENOSOLUTION) {
		r.status = "no-solution";
		st = 1;
	} else if (r.rc != 0) {
		r.status = "error";
	} else if (gpuenv_fs_read(ctx, r.lock_path, 64u << 20, &old) == 0 && old.len == out.text.len &&
		   !memcmp(old.data, out.text.data, old.len)) {
		r.status = "unchanged";
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

int gpuenv_project_lock(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_index_t **ix_out, int *worst)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const gpuenv_index_source_t *src = opts->index.sources;
	size_t nsrc = opts->index.nsources, nextra = 0, cap = npick ? npick : 1;
	gpuenv_backend_choice_t *bc = gpuenv_arena_calloc(&pj->arena, cap, sizeof(*bc));
	const char **terr = gpuenv_arena_calloc(&pj->arena, cap, sizeof(*terr));
	const char **tsrc = gpuenv_arena_calloc(&pj->arena, cap, sizeof(*tsrc));
	gpuenv_index_source_t *extra = gpuenv_arena_calloc(&pj->arena, cap, sizeof(*extra));
	gpuenv_index_t *ix = NULL;
	char buf[1024];

	*ix_out = NULL;
	*worst = 0;
	if (!bc || !terr || !tsrc || !extra)
		return gpuenv_oom(ctx, "for the targets");
	/* every target's torch build first: their indexes are sources too */
	for (size_t i = 0; i < npick; i++) {
		if (gpuenv_manifest_backend(ctx, &pj->arena, &pj->m, pick[i], pj->kb, &bc[i]) != 0) {
			if (ctx->err.code == -ENOMEM)
				return ctx->err.code;
			gpuenv_error_format(&ctx->err, buf, sizeof(buf));
			terr[i] = ctx->err.hint[0] ? gpuenv_arena_printf(&pj->arena, "%s; %s", buf, ctx->err.hint).ptr
						   : gpuenv_arena_strndup(&pj->arena, buf, strlen(buf));
			if (!terr[i])
				return gpuenv_oom(ctx, "for the targets");
			gpuenv_error_clear(ctx);
			continue;
		}
		if (bc[i].user_pinned) {
			tsrc[i] = bc[i].source;
			continue;
		}
		size_t k;
		for (k = 0; k < nsrc + nextra; k++) {
			const gpuenv_index_source_t *x = k < nsrc ? &src[k] : &extra[k - nsrc];
			if (x->url && bc[i].index_url && !strcmp(x->url, bc[i].index_url))
				break;
		}
		if (k == nsrc + nextra) {
			extra[nextra] = (gpuenv_index_source_t){
				.name = gpuenv_arena_printf(&pj->arena, "torch-%s", bc[i].backend).ptr,
				.url = bc[i].index_url, .priority = GPUENV_SOURCE_EXPLICIT };
			if (!extra[nextra++].name)
				return gpuenv_oom(ctx, "for the targets");
		}
		tsrc[i] = k < nsrc ? src[k].name : extra[k - nsrc].name;
	}
	if (gpuenv_project_index_open(pj, opts, extra, nextra, &ix) != 0)
		return ctx->err.code;
	for (size_t i = 0; i < npick; i++) {
		int s = lock_one(pj, opts, ix, pick[i], terr[i] ? NULL : &bc[i], terr[i], tsrc[i]);
		if (s > *worst)
			*worst = s;
	}
	*ix_out = ix;
	return 0;
}
