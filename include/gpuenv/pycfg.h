/* gpuenv pycfg: what a Python installation says about itself on disk,
 * read without starting it: a venv's pyvenv.cfg.  Shared by the probe
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

#ifdef __cplusplus
}
#endif
#endif
