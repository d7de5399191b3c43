/* gpuenv stack: the software half of `gpuenv probe`.
 *
 * CUDA toolkits, every copy of the NVIDIA libraries that matter (cudart,
 * cuBLAS, cuDNN, NCCL, TensorRT, NVRTC, nvJitLink) with its version and where
 * it was found, an emulation of the dynamic loader that says which copy each
 * framework binary would really load, and the Python environments with their
 * distributions and GPU frameworks.
 *
 * Everything is read from disk: no dlopen of heavy libraries, no subprocess,
 * no Python.  ELF files are mmapped and only their headers, dynamic section
 * and dynamic string table are touched; ld.so.cache is parsed directly.
 *
 * The pieces, one header each: gpuenv/stack_version.h (version facts),
 * gpuenv/ldcache.h, gpuenv/loader.h, gpuenv/toolkit.h, gpuenv/pyenv.h (on
 * gpuenv/env.h), gpuenv/libs.h; this header puts them together
 * (gpuenv_stack_probe) and includes them all.
 *
 * Conventions for every struct of these headers:
 *  - all results live in the caller's arena and are freed with it;
 *  - every gpuenv_str_t in a result is NUL-terminated (ptr[len] == '\0'), or
 *    GPUENV_STR_NULL (ptr NULL, len 0) when the fact is unknown;
 *  - paths are as seen on the probed machine: absolute, without ctx->root
 *    (the prefix under which the files were read; "" = the real root);
 *  - environment variables are read through gpuenv_ctx_getenv only.
 * A ctx->root tree is read as if it were "/": its symlinks, absolute ones
 * included, resolve inside it (gpuenv_fs_resolve_in_root), never against
 * the host.  A ctx->root that does not exist is an error.
 */
#ifndef GPUENV_STACK_H
#define GPUENV_STACK_H

#include "gpuenv/core.h"
#include "gpuenv/ldcache.h"
#include "gpuenv/libs.h"
#include "gpuenv/loader.h"
#include "gpuenv/pyenv.h"
#include "gpuenv/stack_version.h"
#include "gpuenv/toolkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== everything together ================================================ */

typedef struct gpuenv_stack_opts {
	const char *python;	/* --python PATH */
	const char *env_dir;	/* --env DIR */
	const char *ldcache;	/* NULL = /etc/ld.so.cache */
	const char *const *hwcaps; /* as gpuenv_loader_opts_t.hwcaps */
	bool no_loader;		/* skip the loader emulation */
	bool alternatives;	/* loader: list shadowed copies (default off) */
	bool no_user_site;
} gpuenv_stack_opts_t;

typedef struct gpuenv_stack {
	size_t ntoolkits;
	gpuenv_toolkit_t *toolkits;
	bool have_ldcache;	/* false: no readable ld.so.cache */
	gpuenv_ldcache_t ldcache;
	gpuenv_str_t ld_library_path; /* $LD_LIBRARY_PATH as seen, or NULL */
	size_t nlibs;
	gpuenv_libcopy_t *libs;	/* by family, then path */
	size_t nenvs;
	gpuenv_pyenv_t *envs;
	size_t nwarnings;
	gpuenv_str_t *warnings; /* non-fatal problems ("file: message") */
} gpuenv_stack_t;

/* The whole software stack: toolkits, ld.so.cache, Python environments
 * (with loader emulation of their framework binaries unless no_loader) and
 * the library copies found in all of those places, in LD_LIBRARY_PATH and in
 * the default folders.  Fails only on a missing ctx->root, an unusable
 * --python / --env, an ld.so.cache named in opts that cannot be read, or out
 * of memory; everything else becomes a warning. */
GPUENV_API int gpuenv_stack_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_stack_opts_t *opts, gpuenv_stack_t *out);

#ifdef __cplusplus
}
#endif
#endif
