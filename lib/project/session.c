/* The project session (include/gpuenv/project.h): a project opened once,
 * its targets (the declared ones, or the machine a probe describes) and
 * their locks by path. */
#include "gpuenv/project.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/facts.h"
#include "gpuenv/fs.h"

int gpuenv_project_open(gpuenv_ctx_t *ctx, const char *project, const char *kb_dir, const char *torch_index,
	gpuenv_project_t *pj)
{
	struct stat sb;

	memset(pj, 0, sizeof(*pj));
	pj->ctx = ctx;
	gpuenv_arena_init(&pj->arena, ctx, 0);
	if (!project)
		project = ".";
	if (stat(project, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		pj->dir = project;
		pj->path = gpuenv_arena_printf(&pj->arena, "%s/pyproject.toml", project).ptr;
	} else {
		const char *slash = strrchr(project, '/');
		pj->path = project;
		pj->dir = slash ? gpuenv_arena_strndup(&pj->arena, project, (size_t)(slash - project)) : ".";
		if (slash == project)
			pj->dir = "/";
	}
	if (!pj->path || !pj->dir)
		return gpuenv_oom(ctx, "opening the project");
	if (gpuenv_kb_load(ctx, kb_dir, &pj->kb) != 0)
		return ctx->err.code;
	if (gpuenv_manifest_load(ctx, &pj->arena, pj->path, pj->kb, &pj->m) != 0) {
		if (ctx->err.code == -ENOENT)
			gpuenv_hint(ctx, "run in the project's directory or give --project DIR");
		return ctx->err.code;
	}
	if (torch_index)
		pj->m.torch_index = torch_index;
	pj->targets = pj->m.targets;
	pj->ntargets = pj->m.ntargets;
	return 0;
}

int gpuenv_project_add_machine(gpuenv_project_t *pj, const gpuenv_facts_t *facts)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	gpuenv_manifest_target_t *t = gpuenv_arena_calloc(&pj->arena, 1, sizeof(*t));

	if (!t)
		return gpuenv_oom(ctx, "for the probed target");
	if (gpuenv_target_from_facts(ctx, &pj->arena, facts, SIZE_MAX, &t->target) != 0)
		return ctx->err.code;
	/* the wheel platform it supports, as a declared target would say it */
	if (t->target.libc && !strcmp(t->target.libc, "glibc") && t->target.libc_version) {
		unsigned a, b;
		if (sscanf(t->target.libc_version, "%u.%u", &a, &b) == 2 &&
			!(t->platform = gpuenv_arena_printf(&pj->arena, "manylinux_%u_%u_%s", a, b,
				  t->target.machine ? t->target.machine : "x86_64").ptr))
			return gpuenv_oom(ctx, "for the probed target");
	}
	if (!t->platform && t->target.machine &&
		!(t->platform = gpuenv_arena_printf(&pj->arena, "linux_%s", t->target.machine).ptr))
		return gpuenv_oom(ctx, "for the probed target");
	t->name = "auto";
	t->target.name = "auto";
	t->torch_backend = pj->m.torch_backend ? pj->m.torch_backend : "auto";
	if (!t->target.python || !t->target.machine)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "%s declares no [tool.gpuenv.targets] and the "
			"probe found no Python environment on this machine to lock for; declare a target (python, "
			"platform, gpu, driver) or run inside a virtual environment", pj->path);
	pj->targets = t;
	pj->ntargets = 1;
	return 0;
}

void gpuenv_project_close(gpuenv_project_t *pj)
{
	gpuenv_kb_free(pj->kb);
	pj->kb = NULL;
	gpuenv_arena_free(&pj->arena);
}

const gpuenv_manifest_target_t *gpuenv_project_find_target(const gpuenv_project_t *pj, const char *name)
{
	for (size_t i = 0; i < pj->ntargets; i++)
		if (!strcmp(pj->targets[i].name, name))
			return &pj->targets[i];
	return NULL;
}

const char *gpuenv_project_lock_path(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t)
{
	const char *name = gpuenv_project_lock_name(&pj->arena, &pj->m, t);
	return name ? gpuenv_arena_printf(&pj->arena, "%s/%s", pj->dir, name).ptr : NULL;
}

int gpuenv_project_read_lock(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path, gpuenv_lock_t *lk)
{
	gpuenv_buf_t b;
	int r;

	gpuenv_buf_init(&b, ctx, GPUENV_PYLOCK_MAX_SIZE);
	if ((r = gpuenv_fs_read(ctx, path, GPUENV_PYLOCK_MAX_SIZE, &b)) == 0)
		r = gpuenv_pylock_parse(ctx, arena, path, (gpuenv_str_t){ b.data, b.len }, lk);
	gpuenv_buf_free(&b); /* the lock's strings live in the arena */
	return r;
}
