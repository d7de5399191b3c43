/* A sync's source builds with the target's hardware (include/gpuenv/build_sync.h). */
#include "gpuenv/build_sync.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/diagnose.h"
#include "gpuenv/fit.h"

bool gpuenv_sync_builds_needed(const gpuenv_lock_t *lk)
{
	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		if (!p->nwheels && (p->sdist || p->directory || p->vcs ||
					   (p->archive && !gpuenv_lock_file_is_wheel(p->archive))))
			return true;
	}
	return false;
}

/* The builds' hardware for target t and its lock (b->hw; nothing when the
 * lock builds nothing: a no-op sync stays cheap). */
static int decide_hw(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, const gpuenv_lock_t *lk,
	const gpuenv_facts_t *facts, gpuenv_sync_builds_t *b)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	gpuenv_build_hw_opts_t ho;

	if (!gpuenv_sync_builds_needed(lk))
		return 0;
	/* the given facts describe this machine, its toolkits included; else
	 * this machine's own (sync's light probe leaves them out) */
	if (!facts && gpuenv_build_hw_toolkits(ctx, &pj->arena, &facts) != 0)
		return ctx->err.code;
	b->cuda = gpuenv_fit_backend_cuda(lk->target.backend, b->cuda_buf, sizeof(b->cuda_buf));
	for (size_t i = 0; i < lk->npackages; i++)
		if (strcmp(lk->packages[i].name, "torch") == 0)
			b->torch = lk->packages[i].version;
	memset(&ho, 0, sizeof(ho));
	ho.facts = facts;
	ho.targets = &t->target;
	ho.ntargets = 1;
	ho.cuda = b->cuda;
	ho.kb = pj->kb;
	gpuenv_build_host_probe(ctx, &ho.host);
	if (gpuenv_build_hw(ctx, &pj->arena, &ho, &b->hw) == 0)
		return 0;
	if (ctx->err.code == -ENOMEM)
		return ctx->err.code;
	b->problem = true;
	b->err = ctx->err;
	gpuenv_error_clear(ctx);
	ho.cuda = NULL;
	return gpuenv_build_hw(ctx, &pj->arena, &ho, &b->hw);
}

int gpuenv_sync_builds_new(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, const gpuenv_lock_t *lk,
	const gpuenv_facts_t *facts, const char *const *base_env, gpuenv_sync_opts_t *so, gpuenv_sync_builds_t *b)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const gpuenv_venv_t *venv = so->venv;
	int r;

	memset(b, 0, sizeof(*b));
	if ((r = decide_hw(pj, t, lk, facts, b)) != 0)
		return r;
	/* source builds (docs/build.md): for the venv's interpreter, the
	 * packages of [tool.gpuenv] build-against-env against the venv itself,
	 * with the target's hardware: CUDA_HOME and the rest in env, the
	 * toolkit's bin on PATH */
	gpuenv_build_opts_t bo = { .python = &venv->python, .tags = so->tags, .marker_env = so->env,
		.base_env = base_env, .against = venv->site ? venv : NULL, .against_names = pj->m.build_against_env,
		.nagainst = pj->m.nbuild_against_env, .env = b->hw.envp, .nenv = b->hw.nenv,
		.path_prefix = b->hw.path_prepend, .cuda_version = b->hw.cuda_version };
	if ((r = gpuenv_builder_new(ctx, &bo, &b->builder)) != 0)
		return r;
	gpuenv_builder_sync_hook(b->builder, &so->builder);
	return 0;
}

void gpuenv_sync_builds_free(gpuenv_sync_builds_t *b)
{
	gpuenv_builder_free(b->builder);
	b->builder = NULL;
}

static bool against(const gpuenv_manifest_t *m, const char *name)
{
	for (size_t i = 0; i < m->nbuild_against_env; i++)
		if (strcmp(m->build_against_env[i], name) == 0)
			return true;
	return false;
}

int gpuenv_sync_builds_check(gpuenv_ctx_t *ctx, const gpuenv_sync_builds_t *b, const gpuenv_manifest_t *m,
	const gpuenv_sync_plan_t *pl, bool *builds_any)
{
	*builds_any = false;
	for (size_t i = 0; i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		if (!a->source || !(a->op == GPUENV_SYNC_INSTALL || a->op == GPUENV_SYNC_UPGRADE ||
					   a->op == GPUENV_SYNC_REINSTALL))
			continue;
		*builds_any = true;
		if (b->problem && against(m, a->name)) {
			/* built against the environment because its build uses
			 * torch's CUDA: no point in starting it */
			ctx->err = b->err;
			snprintf(ctx->err.msg, sizeof(ctx->err.msg), "%.64s (build-against-env, built with the "
				"target's CUDA): %.380s", a->name, b->err.msg);
			return ctx->err.code ? ctx->err.code : GPUENV_EUNSUPPORTED;
		}
	}
	return 0;
}

int gpuenv_sync_builds_explain(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_sync_builds_t *b, const gpuenv_build_req_t **req, const gpuenv_build_result_t **res,
	const char **text)
{
	gpuenv_diag_facts_t df;
	gpuenv_buf_t o;
	const char *diag = NULL;
	int r = 0;

	*text = "";
	*res = b->builder && ctx->err.code == GPUENV_EBUILD ? gpuenv_builder_failure(b->builder, req) : NULL;
	if (!*res)
		return 0;
	gpuenv_buf_init(&o, ctx, 1u << 20);
	if (b->problem) {
		char msg[sizeof(b->err.msg) + 64];
		gpuenv_error_format(&b->err, msg, sizeof(msg));
		r |= gpuenv_buf_printf(&o, "note: the build ran without CUDA_HOME or TORCH_CUDA_ARCH_LIST: %s\n", msg);
		if (b->err.hint[0])
			r |= gpuenv_buf_printf(&o, "hint: %s\n", b->err.hint);
	}
	memset(&df, 0, sizeof(df));
	df.cc_major = df.cc_minor = -1;
	df.torch = b->torch;
	df.torch_cuda = b->cuda;
	gpuenv_error_t keep = ctx->err; /* the build's own error is reported after */
	if ((*res)->log && gpuenv_build_hw_explain(ctx, arena, kb, (*res)->log, &df, &diag) == 0 && diag) {
		r |= gpuenv_buf_printf(&o, "diagnose (%s):\n", (*res)->log);
		for (const char *p = diag; *p;) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			r |= gpuenv_buf_printf(&o, "  %.*s\n", (int)n, p);
			p += n + (e != NULL);
		}
	}
	ctx->err = keep;
	if (!r && o.data)
		*text = gpuenv_arena_strndup(arena, o.data, o.len);
	gpuenv_buf_free(&o);
	if (r || !*text) {
		*text = "";
		return -ENOMEM;
	}
	return 0;
}
