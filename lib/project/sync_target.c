/* Syncing one target's venv (include/gpuenv/project.h): the venv opened or
 * made for an interpreter that fits the lock, and what gpuenv_sync_begin
 * needs of it (its interpreter's wheel tags and marker environment, the
 * lock, the target's direct dependencies). */
#include "gpuenv/project.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "gpuenv/pep508.h"
#include "gpuenv/sync.h"
#include "gpuenv/venv.h"
#include "gpuenv/wheel.h"

int gpuenv_project_venv(gpuenv_project_t *pj, const char *dir, const char *python, bool dry_run,
	const gpuenv_lock_t *lk, gpuenv_venv_t *venv, int *made)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const char *want_xy = lk->target.python;
	char fits[64] = "";
	gpuenv_python_t py;
	int r;

	*made = GPUENV_VENV_OPENED;
	if (!dir && !(dir = gpuenv_arena_printf(&pj->arena, "%s/.venv", pj->dir).ptr))
		return gpuenv_oom(ctx, "for the venv's path");
	if (want_xy) {
		unsigned a = 0, b = 0;
		if (sscanf(want_xy, "%u.%u", &a, &b) == 2)
			snprintf(fits, sizeof(fits), "==%u.%u.*", a, b);
	}
	r = gpuenv_venv_open(ctx, &pj->arena, dir, venv);
	if (r == 0) {
		char have[32];
		snprintf(have, sizeof(have), "%u.%u", venv->python.major, venv->python.minor);
		if (fits[0] && strncmp(have, want_xy, strlen(have)) != 0) {
			gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "%s is a venv of Python %s; target %s is "
				"Python %s", dir, have, lk->target.name ? lk->target.name : "?", want_xy);
			return gpuenv_hint(ctx, "remove it (rm -r %s) and sync again, or give --venv DIR for another "
						"one", dir);
		}
		return 0;
	}
	if (r != GPUENV_ENOTFOUND)
		return r;
	gpuenv_error_clear(ctx);
	if ((r = gpuenv_python_find(ctx, &pj->arena, python ? python : want_xy, fits[0] ? fits : NULL, &py, NULL,
		     NULL)) != 0)
		return r;
	if (dry_run) { /* nothing is made: the plan is against an empty venv */
		memset(venv, 0, sizeof(*venv));
		venv->root = dir;
		venv->python = py;
		*made = GPUENV_VENV_DRY;
		return 0;
	}
	if ((r = gpuenv_venv_create(ctx, &pj->arena, dir, &py, 0, venv)) != 0)
		return r;
	*made = GPUENV_VENV_CREATED;
	return 0;
}

int gpuenv_project_python_views(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_python_t *py,
	gpuenv_tagset_t **tags, gpuenv_marker_env_t *env)
{
	gpuenv_wheel_target_t wt;
	struct utsname u;
	char libc[64] = "";
	char *arch = gpuenv_arena_calloc(arena, 1, sizeof(u.machine));
	char *rel = gpuenv_arena_calloc(arena, 1, sizeof(u.release));

	if (!arch || !rel)
		return gpuenv_oom(ctx, "for the venv's platform");
	if (uname(&u) != 0)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "uname: the machine's platform is unknown");
	memcpy(arch, u.machine, sizeof(u.machine));
	memcpy(rel, u.release, sizeof(u.release));
	memset(&wt, 0, sizeof(wt));
	wt.impl = GPUENV_IMPL_CPYTHON;
	wt.py_major = py->major;
	wt.py_minor = py->minor;
	wt.free_threaded = py->free_threaded;
	wt.os = GPUENV_OS_LINUX;
	snprintf(wt.arch, sizeof(wt.arch), "%s", arch);
#ifdef _CS_GNU_LIBC_VERSION
	if (confstr(_CS_GNU_LIBC_VERSION, libc, sizeof(libc)) > 0)
		(void)sscanf(libc, "glibc %u.%u", &wt.libc_major, &wt.libc_minor);
#endif
	if (gpuenv_tagset_build(ctx, &wt, tags) != 0)
		return ctx->err.code;
	gpuenv_marker_env_default(env);
	env->python_version = gpuenv_arena_printf(arena, "%u.%u", py->major, py->minor).ptr;
	if (!env->python_version)
		return gpuenv_oom(ctx, "for the marker environment");
	env->python_full_version = py->version;
	env->implementation_version = py->version;
	env->platform_machine = arch;
	env->platform_release = rel;
	env->platform_version = "";
	return 0;
}

/* The wheel tags and marker environment of the venv's interpreter here. */
static int venv_views(gpuenv_project_t *pj, const gpuenv_venv_t *venv, const gpuenv_lock_t *lk,
	gpuenv_tagset_t **tags, gpuenv_marker_env_t *env)
{
	int r = gpuenv_project_python_views(pj->ctx, &pj->arena, &venv->python, tags, env);
	if (r)
		return r;
	if (lk->nextras)
		gpuenv_marker_env_set_list(env, "extras", lk->extras);
	if (lk->ngroups)
		gpuenv_marker_env_set_list(env, "dependency_groups", lk->dependency_groups);
	return 0;
}

int gpuenv_project_sync_opts(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, const gpuenv_lock_t *lk,
	const char *lock_path, const gpuenv_venv_t *venv, bool skip_project, gpuenv_tagset_t **tags,
	gpuenv_marker_env_t *env, gpuenv_sync_opts_t *so)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	const gpuenv_dep_t *deps = NULL;
	const char **requested, *slash = strrchr(lock_path, '/');
	size_t ndeps = 0;
	int r;

	*tags = NULL;
	if ((r = venv_views(pj, venv, lk, tags, env)) != 0)
		return r;
	if ((r = gpuenv_manifest_target_deps(ctx, &pj->arena, &pj->m, t, &deps, &ndeps)) != 0)
		return r;
	if (!(requested = gpuenv_arena_calloc(&pj->arena, ndeps ? ndeps : 1, sizeof(*requested))))
		return gpuenv_oom(ctx, "for the sync");
	for (size_t i = 0; i < ndeps; i++)
		requested[i] = deps[i].name;
	memset(so, 0, sizeof(*so));
	*so = (gpuenv_sync_opts_t){ .lock = lk, .lock_path = lock_path,
		.lock_dir = slash ? gpuenv_arena_strndup(&pj->arena, lock_path, (size_t)(slash - lock_path)) : ".",
		.venv = venv, .env = env, .tags = *tags, .requested = requested, .nrequested = ndeps };
	if (!so->lock_dir)
		return gpuenv_oom(ctx, "for the sync");
	if (skip_project && pj->m.name) {
		char norm[256];
		const char **skip = gpuenv_arena_calloc(&pj->arena, 1, sizeof(*skip));
		gpuenv_name_normalize_to(gpuenv_str(pj->m.name), norm, sizeof(norm));
		if (!skip || !(skip[0] = gpuenv_arena_strndup(&pj->arena, norm, strlen(norm))))
			return gpuenv_oom(ctx, "for the sync");
		so->skip = skip;
		so->nskip = 1;
	}
	return 0;
}
