/* Does this machine run a target (include/gpuenv/project.h): the machine
 * completed from the KB, each target judged with its locked build's CUDA
 * (lib/check/fit.c's gpuenv_target_fit), the best one picked. */
#include "gpuenv/project.h"

#include <stdint.h>
#include <string.h>

#include "gpuenv/facts.h"
#include "gpuenv/fit.h"
#include "gpuenv/hw.h"
#include "gpuenv/probe.h"

int gpuenv_project_machine_from_kb(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb, gpuenv_arena_t *arena,
	gpuenv_target_t *t)
{
	gpuenv_target_gpu_t *g = t->ngpus ? gpuenv_arena_calloc(arena, t->ngpus, sizeof(*g)) : NULL;
	if (t->ngpus && !g)
		return gpuenv_oom(ctx, "for the machine's GPUs");
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
		if (mx.ga && mx.ga->cuda.n >= 2 &&
			!(t->driver_cuda = gpuenv_arena_printf(arena, "%u.%u", mx.ga->cuda.part[0],
				  mx.ga->cuda.part[1]).ptr))
			return gpuenv_oom(ctx, "for the machine's driver");
	}
	return 0;
}

int gpuenv_project_machine(gpuenv_project_t *pj, const gpuenv_facts_t *facts, gpuenv_target_t *out)
{
	gpuenv_ctx_t *ctx = pj->ctx;

	if (!facts) {
		gpuenv_probe_opts_t po;
		gpuenv_probe_opts_init(&po);
		/* sysfs and procfs only: the KB gives what NVML would have added */
		po.flags |= GPUENV_PROBE_NO_PYTHON | GPUENV_PROBE_NO_FATBIN | GPUENV_PROBE_NO_LIBS;
		po.hw.flags |= GPUENV_HW_NO_NVML | GPUENV_HW_NO_LIBCUDA;
		po.version = GPUENV_VERSION;
		int r = gpuenv_probe_facts(ctx, &po, &pj->arena, &facts);
		if (r)
			return r;
	}
	if (gpuenv_target_from_facts(ctx, &pj->arena, facts, SIZE_MAX, out) != 0)
		return ctx->err.code;
	return gpuenv_project_machine_from_kb(ctx, pj->kb, &pj->arena, out);
}

const char *gpuenv_project_locked_cuda(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, gpuenv_lock_t *lk,
	const char **lk_path, char *buf, size_t bufsz)
{
	const char *path = gpuenv_project_lock_path(pj, t), *out = NULL;

	memset(lk, 0, sizeof(*lk));
	*lk_path = NULL;
	if (path && gpuenv_project_read_lock(pj->ctx, &pj->arena, path, lk) == 0) {
		out = gpuenv_fit_backend_cuda(lk->target.backend, buf, bufsz);
		*lk_path = path;
	} else {
		memset(lk, 0, sizeof(*lk)); /* no lock yet: judged by the target's driver */
	}
	gpuenv_error_clear(pj->ctx);
	return out;
}

int gpuenv_project_fit(gpuenv_project_t *pj, const gpuenv_target_t *machine, const gpuenv_manifest_target_t *t,
	gpuenv_lock_t *lk, const char **lk_path, gpuenv_fit_t *fit)
{
	char cb[32];
	const char *cuda = gpuenv_project_locked_cuda(pj, t, lk, lk_path, cb, sizeof(cb));
	return gpuenv_target_fit(pj->ctx, &pj->arena, pj->kb, machine, &t->target, cuda, fit);
}

int gpuenv_project_pick(gpuenv_project_t *pj, const gpuenv_target_t *machine, gpuenv_fit_t **fitsp,
	gpuenv_lock_t *lk, const char **lk_path, size_t *best)
{
	gpuenv_fit_t *fits = gpuenv_arena_calloc(&pj->arena, pj->ntargets + 1, sizeof(*fits));

	*best = SIZE_MAX;
	if (!(*fitsp = fits))
		return gpuenv_oom(pj->ctx, "for the targets' fit");
	for (size_t i = 0; i < pj->ntargets; i++) {
		if (gpuenv_project_fit(pj, machine, &pj->targets[i], lk, lk_path, &fits[i]) != 0)
			return pj->ctx->err.code;
		if (fits[i].verdict != GPUENV_KB_NO && (*best == SIZE_MAX || fits[i].score > fits[*best].score))
			*best = i;
	}
	return 0;
}
