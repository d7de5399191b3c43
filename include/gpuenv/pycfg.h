/* gpuenv pycfg: what a Python installation says about itself on disk,
 * read without starting it: a venv's pyvenv.cfg, the version a pyenv shim
 * stands for.  Shared by the probe
 * (lib/hw/pyenv.c) and the installer (lib/install: interpreters, venvs). */
#ifndef GPUENV_PYCFG_H
#define GPUENV_PYCFG_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cap on a pyvenv.cfg gpuenv reads (a real one is a few hundred bytes). */
#define GPUENV_PYCFG_MAX ((size_t)64 << 10)

/* The value of the `key = value` line of pyvenv.cfg text (the key compared
 * without case, the value trimmed), as CPython's site.py reads it; a NULL
 * slice when absent.  The slice points into text. */
GPUENV_API gpuenv_str_t gpuenv_pycfg_get(gpuenv_str_t text, const char *key);

/* The interpreter version a pyvenv.cfg records: `version` (venv:
 * "3.12.1"), else `version_info` (virtualenv: "3.12.1.final.0", uv:
 * "3.12.3"), cut to at most three dotted numbers ("3.12.1"); a NULL slice
 * when neither starts with X.Y.  The slice points into text. */
GPUENV_API gpuenv_str_t gpuenv_pycfg_version(gpuenv_str_t text);

/* The binary a pyenv shim would run.  shim: an interpreter path; it is a
 * shim when it sits in a folder named "shims" and is a script ("#!").  The
 * versions asked for: $PYENV_VERSION, else (when root is not set) the
 * nearest .python-version from the current folder up, else
 * PYENV_ROOT/version, where PYENV_ROOT is $PYENV_ROOT or the shim folder's
 * parent; each may list several ("3.12.1:3.11.7", or lines).  The first
 * whose versions/V/bin/NAME is an executable file wins.  root: a prefix
 * for every read ("" or NULL: none; the probe's --root); the path
 * returned is without it, in arena.  NULL when shim is not a shim
 * (*is_shim false) or stands for no pyenv version ("system", or none has
 * that binary: *is_shim true; the next interpreter on $PATH is the one
 * that runs). */
GPUENV_API const char *gpuenv_pyenv_shim_target(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *root, const char *shim, bool *is_shim);

#ifdef __cplusplus
}
#endif
#endif
