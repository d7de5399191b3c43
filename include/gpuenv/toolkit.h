/* gpuenv toolkit: the CUDA toolkits installed (lib/hw/toolkit.c).
 * Conventions of every struct (see gpuenv/stack.h): results live in the
 * caller's arena; every gpuenv_str_t is NUL-terminated or GPUENV_STR_NULL
 * (unknown); paths are as seen on the probed machine, without ctx->root. */
#ifndef GPUENV_TOOLKIT_H
#define GPUENV_TOOLKIT_H

#include "gpuenv/stack_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CUDA toolkits ====================================================== */

/* How a toolkit was found (bits). */
enum {
	GPUENV_TK_USR_LOCAL = 1, /* /usr/local/cuda or /usr/local/cuda-X.Y */
	GPUENV_TK_CUDA_HOME = 2, /* $CUDA_HOME */
	GPUENV_TK_CUDA_PATH = 4, /* $CUDA_PATH */
	GPUENV_TK_NVCC_PATH = 8, /* the folder above the first nvcc on $PATH */
	GPUENV_TK_OPT = 16,	 /* /opt/cuda, /usr/lib/cuda (distribution packages) */
};

typedef struct gpuenv_tk_component {
	gpuenv_str_t name;    /* version.json key ("cuda_cudart", "libcublas") or
				 distribution ("nvidia-cuda-runtime") */
	gpuenv_str_t version; /* "13.0.96" */
	int src;	      /* GPUENV_VSRC_VERSION_JSON or _METADATA */
} gpuenv_tk_component_t;

typedef struct gpuenv_toolkit {
	gpuenv_str_t path;     /* the first path it was found under
				  ("/usr/local/cuda") */
	gpuenv_str_t realpath; /* symlinks resolved ("/usr/local/cuda-13.0") */
	size_t naliases;
	gpuenv_str_t *aliases; /* other paths naming the same folder */
	unsigned found_by;     /* GPUENV_TK_* bits */
	/* release: "13.0.2" from version.json, "11.8.89" from version.txt,
	 * "13.0" from cuda.h's CUDA_VERSION; text NULL when unknown */
	gpuenv_stack_version_t version;
	gpuenv_str_t nvcc;	 /* bin/nvcc when present */
	gpuenv_str_t nvcc_version; /* nvcc's component version when known */
	gpuenv_str_t lib_dir;	 /* lib64, targets/<arch>/lib or lib; NULL if none */
	gpuenv_str_t include_dir; /* include or targets/<arch>/include */
	size_t ncomponents;
	gpuenv_tk_component_t *components;
} gpuenv_toolkit_t;

/* Find the CUDA toolkits: /usr/local/cuda*, $CUDA_HOME, $CUDA_PATH, nvcc
 * on $PATH, /opt/cuda, /usr/lib/cuda.  One entry per real folder, in the
 * order above.  Never fails for a missing toolkit (n = 0). */
GPUENV_API int gpuenv_toolkit_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	size_t *n, gpuenv_toolkit_t **out);

/* Inspect one folder as a toolkit (read under ctx->root); -ENOENT when it
 * has neither bin/nvcc nor include/cuda.h nor a version file. */
GPUENV_API int gpuenv_toolkit_inspect(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *dir, gpuenv_toolkit_t *out);

#ifdef __cplusplus
}
#endif
#endif
