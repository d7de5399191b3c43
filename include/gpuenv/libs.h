/* gpuenv libs: every copy of the NVIDIA libraries that matter, with its
 * version and where it was found (lib/hw/libs.c).
 * Conventions of every struct (see gpuenv/stack.h): results live in the
 * caller's arena; every gpuenv_str_t is NUL-terminated or GPUENV_STR_NULL
 * (unknown); paths are as seen on the probed machine, without ctx->root. */
#ifndef GPUENV_LIBS_H
#define GPUENV_LIBS_H

#include "gpuenv/ldcache.h"
#include "gpuenv/pyenv.h"
#include "gpuenv/toolkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== NVIDIA library copies ============================================== */

enum gpuenv_libfamily {
	GPUENV_LIB_CUDART = 0,
	GPUENV_LIB_CUBLAS,
	GPUENV_LIB_CUBLASLT,
	GPUENV_LIB_CUDNN,     /* libcudnn.so and its parts libcudnn_*.so */
	GPUENV_LIB_NCCL,
	GPUENV_LIB_NVINFER,   /* TensorRT: libnvinfer*.so */
	GPUENV_LIB_NVRTC,     /* libnvrtc.so, libnvrtc-builtins.so */
	GPUENV_LIB_NVJITLINK,
	GPUENV_LIB_COUNT
};
/* "cudart", "cublas", "cublasLt", "cudnn", "nccl", "nvinfer", "nvrtc",
 * "nvJitLink". */
GPUENV_API const char *gpuenv_libfamily_name(int family);
/* The family of a file name ("libcudnn_ops.so.9" -> CUDNN), -1 if none. */
GPUENV_API int gpuenv_libfamily_of(gpuenv_str_t filename);

/* Where a copy was seen (bits). */
enum {
	GPUENV_LIBLOC_LDCACHE = 1,	   /* listed in ld.so.cache */
	GPUENV_LIBLOC_LD_LIBRARY_PATH = 2, /* in a $LD_LIBRARY_PATH folder */
	GPUENV_LIBLOC_TOOLKIT = 4,	   /* in a CUDA toolkit's lib folder */
	GPUENV_LIBLOC_WHEEL = 8,	   /* inside a Python environment */
	GPUENV_LIBLOC_DEFAULT = 16,	   /* in a default system folder */
	GPUENV_LIBLOC_LOADER = 32,	   /* reached by a framework's RPATH/RUNPATH */
};

typedef struct gpuenv_libcopy {
	int family;	     /* enum gpuenv_libfamily */
	gpuenv_str_t path;   /* the file, symlinks (of folders too) resolved */
	gpuenv_str_t name;   /* its file name: "libcudnn.so.9.19.0" */
	gpuenv_str_t soname; /* DT_SONAME ("libcudnn.so.9"); NULL if none/unreadable */
	size_t naliases;
	gpuenv_str_t *aliases; /* other paths reaching the same file (symlinks such
				  as libcudnn.so.9, symlinked folders), sorted */
	unsigned where;	     /* GPUENV_LIBLOC_* bits */
	gpuenv_str_t toolkit; /* toolkit path when inside one, else NULL */
	gpuenv_str_t dist;    /* owning wheel "nvidia-cudnn-cu13" when known */
	gpuenv_str_t site;    /* site folder when inside a Python environment */
	uint64_t size;	      /* bytes */
	/* version evidence, the most precise first (most dotted parts; among
	 * equals: file name, header, wheel METADATA, toolkit version.json /
	 * dist-info, version definition), the soname's major last.  Empty when
	 * nothing is known. */
	size_t nversions;
	gpuenv_stack_version_t *versions;
	size_t nverdefs;
	gpuenv_str_t *verdefs; /* GNU version definitions (soname excluded) */
} gpuenv_libcopy_t;

/* Inventory of library copies alone (used by gpuenv_stack_probe): scans the
 * folders implied by the toolkits, cache, environments, LD_LIBRARY_PATH and
 * default folders.  Any of the inputs may be NULL / 0. */
GPUENV_API int gpuenv_libs_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_toolkit_t *toolkits, size_t ntoolkits, const gpuenv_ldcache_t *cache,
	const gpuenv_pyenv_t *envs, size_t nenvs, size_t *n, gpuenv_libcopy_t **out);

#ifdef __cplusplus
}
#endif
#endif
