/* lib/builder's own functions, shared by its files (not exported). */
#ifndef GPUENV_BUILD_INT_H
#define GPUENV_BUILD_INT_H

#include "gpuenv/build.h"

/* The environment of a build (spec.c): o->base_env without the variables
 * an isolated build must not inherit (PYTHONPATH, VIRTUAL_ENV, PIP_*...),
 * o->env over it, PATH = path_prefix:venv_bin:PATH, VIRTUAL_ENV when
 * given.  NULL-terminated, in arena.  0 or -ENOMEM. */
int gpuenv_build_envp(gpuenv_arena_t *arena, const gpuenv_build_opts_t *o, const char *venv_bin,
	const char *virtual_env, char ***out);

/* Is name built against o->against (no isolation)? */
bool gpuenv_build_against(const gpuenv_build_opts_t *o, const char *name);

#endif
