/* gpuenv stack versions: a version fact and the source it came from, as
 * toolkits, library copies and Python environments report them.
 * Conventions of every struct (see gpuenv/stack.h): results live in the
 * caller's arena; every gpuenv_str_t is NUL-terminated or GPUENV_STR_NULL
 * (unknown); paths are as seen on the probed machine, without ctx->root. */
#ifndef GPUENV_STACK_VERSION_H
#define GPUENV_STACK_VERSION_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== versions and where they came from ================================= */

/* The source of a version: the probe says how it knows, because the sources
 * differ in precision (a soname gives the major only, a header the exact
 * release). */
enum gpuenv_vsrc {
	GPUENV_VSRC_NONE = 0,
	GPUENV_VSRC_FILENAME,	  /* the file's name: libcudnn.so.9.19.0 -> 9.19.0 */
	GPUENV_VSRC_HEADER,	  /* a C header: cudnn_version.h, nccl.h, cublas_api.h,
				     NvInferVersion.h, cuda.h, patchlevel.h */
	GPUENV_VSRC_METADATA,	  /* a Python distribution's METADATA (or its
				     dist-info folder name) */
	GPUENV_VSRC_VERSION_JSON, /* a CUDA toolkit's version.json */
	GPUENV_VSRC_VERSION_TXT,  /* a CUDA toolkit's version.txt */
	GPUENV_VSRC_VERDEF,	  /* an ELF version definition (GNU verdef) */
	GPUENV_VSRC_SONAME,	  /* the soname's number: libcudnn.so.9 -> 9 (major only) */
	GPUENV_VSRC_PYVENV_CFG,	  /* a venv's pyvenv.cfg "version" / "version_info" */
	GPUENV_VSRC_PATH,	  /* a folder or program name: .../versions/3.12.1,
				     python3.12 */
	GPUENV_VSRC_VERSION_PY,	  /* a framework's version module: torch/version.py */
	GPUENV_VSRC_COUNT
};

/* Short stable identifier of a source, for JSON ("filename", "header",
 * "metadata", "version.json", "version.txt", "verdef", "soname",
 * "pyvenv.cfg", "path", "version.py"; "none"). */
GPUENV_API const char *gpuenv_vsrc_name(int src);

/* One piece of version evidence. */
typedef struct gpuenv_stack_version {
	gpuenv_str_t text;   /* "9.19.0", "13.0", "9" */
	int src;	     /* enum gpuenv_vsrc */
	gpuenv_str_t origin; /* what was read: a header or file path, or
				"nvidia-cudnn-cu13 9.19.0.56" for a wheel */
} gpuenv_stack_version_t;

#ifdef __cplusplus
}
#endif
#endif
