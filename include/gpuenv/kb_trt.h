/* gpuenv kb, TensorRT: the rows of data/kb/tensorrt.toml and the questions
 * `gpuenv trt` and `preflight --engine` ask of them (lib/kb/trt.c).
 *
 * Each answer is one function here, so optimize (which flags to write),
 * --check-command (which flags a line should not use) and the engine check
 * (where an engine runs) never disagree.  Every answer carries the row it
 * came from, so the CLI can cite its source. */
#ifndef GPUENV_KB_TRT_H
#define GPUENV_KB_TRT_H

#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the rows --------------------------------------------------------------- */

typedef struct gpuenv_kb_trt_release {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t tensorrt; /* "8.5": the line from this release on */
	gpuenv_kb_vers_t cuda;
	gpuenv_kb_ver_t cudnn;
	gpuenv_kb_sm_t sm_min;	     /* str.ptr NULL when absent */
	int64_t opset_min, opset_max; /* GPUENV_KB_NONE when absent */
} gpuenv_kb_trt_release_t;

typedef struct gpuenv_kb_trt_precision {
	gpuenv_kb_row_t row;
	gpuenv_str_t precision; /* fp32 tf32 fp16 bf16 fp8 int8 */
	gpuenv_kb_ver_t tensorrt_min, tensorrt_max;
	gpuenv_kb_vers_t cc; /* "7.5", ... */
} gpuenv_kb_trt_precision_t;

typedef struct gpuenv_kb_trt_flag {
	gpuenv_kb_row_t row;
	gpuenv_str_t flag; /* "--workspace" */
	gpuenv_kb_ver_t added, deprecated, removed; /* n == 0 when absent */
	gpuenv_str_t replacement;
} gpuenv_kb_trt_flag_t;

typedef struct gpuenv_kb_trt_hwcompat {
	gpuenv_kb_row_t row;
	gpuenv_str_t level;   /* "ampere-plus", "same-compute-capability" */
	gpuenv_str_t trtexec; /* "ampere+", "sameComputeCapability" */
	gpuenv_kb_ver_t added, cc_min;
	gpuenv_str_t runs_on; /* "cc_min" or "same_cc" */
} gpuenv_kb_trt_hwcompat_t;

typedef struct gpuenv_kb_trt_vcompat {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t tensorrt_min, runtime_min;
} gpuenv_kb_trt_vcompat_t;

/* ---- the questions ------------------------------------------------------------ */

/* What the KB knows of one TensorRT release: each field from the newest
 * [[release]] row of the same major not newer than it that gives it; the
 * row pointers say which (NULL: not known). */
typedef struct gpuenv_kb_trt_info {
	const gpuenv_kb_trt_release_t *line; /* the newest row <= v of v's major */
	const gpuenv_kb_trt_release_t *sm_row, *opset_row, *cuda_row;
	gpuenv_kb_sm_t sm_min;
	int64_t opset_min, opset_max;
} gpuenv_kb_trt_info_t;

/* Fill *out for TensorRT v ("8.5.3.1").  False when the KB knows no row of
 * v's major at or below v (older than the KB, or a major it has not seen). */
GPUENV_API bool gpuenv_kb_trt_info(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *v,
	gpuenv_kb_trt_info_t *out);

/* Where a trtexec flag stands in TensorRT v. */
enum gpuenv_kb_trt_flag_state {
	GPUENV_KB_TRT_FLAG_UNKNOWN = 0, /* no [[flag]] row names it */
	GPUENV_KB_TRT_FLAG_OK,
	GPUENV_KB_TRT_FLAG_NOT_YET,    /* v is older than the release that added it */
	GPUENV_KB_TRT_FLAG_DEPRECATED, /* still accepted */
	GPUENV_KB_TRT_FLAG_REMOVED,
};
/* flag is the option's name ("--workspace", without "=value"); *row the
 * row that answered (NULL when UNKNOWN). */
GPUENV_API int gpuenv_kb_trt_flag(const gpuenv_kb_t *kb, gpuenv_str_t flag,
	const gpuenv_kb_ver_t *v, const gpuenv_kb_trt_flag_t **row);

/* Whether TensorRT v runs precision p fast on a GPU of compute capability
 * cc_major.cc_minor, by the [[precision]] rows: true with *row the row that
 * lists it; false with *row NULL.  v NULL: in any release the KB covers
 * (diagnose, where the log does not say which TensorRT). */
GPUENV_API bool gpuenv_kb_trt_precision(const gpuenv_kb_t *kb, const char *p,
	const gpuenv_kb_ver_t *v, int cc_major, int cc_minor, const gpuenv_kb_trt_precision_t **row);

/* The [[hardware_compat]] row of a level, by its name ("ampere-plus") or its
 * trtexec value ("ampere+"); NULL when none. */
GPUENV_API const gpuenv_kb_trt_hwcompat_t *gpuenv_kb_trt_hwcompat(const gpuenv_kb_t *kb,
	gpuenv_str_t level);

/* The [[version_compat]] row, NULL when the KB has none. */
GPUENV_API const gpuenv_kb_trt_vcompat_t *gpuenv_kb_trt_vcompat(const gpuenv_kb_t *kb);

/* TensorRT v as trtexec's banner writes it: "[TensorRT v8503]" holds 8503
 * (major*1000 + minor*100 + patch up to 8.x) or 100300 (major*10000 +
 * minor*100 + patch from 10.x; libraries.toml's [[version_encoding]]).
 * Fills out (major.minor.patch, str empty); false when n fits neither. */
GPUENV_API bool gpuenv_kb_trt_version_from_int(long long n, gpuenv_kb_ver_t *out);

#ifdef __cplusplus
}
#endif
#endif
