/* gpuenv triton: a Triton Inference Server model repository checked the way
 * the server checks it when it loads the models (lib/triton/check.c,
 * docs/triton.md), before any pod is scheduled.
 *
 * Each folder of the repository is a model: its config.pbtxt (protobuf text
 * format, gpuenv/pbtxt.h) read with every position, the backend from
 * `platform` / `backend` or, as Triton does, from the model file's name; the
 * numeric version folders and `version_policy`; the model file of each
 * served version (`default_model_filename`, `cc_model_filenames` for the
 * node's GPUs); `max_batch_size` and each input and output against the ONNX
 * model itself (names, TYPE_* against the element type, dims against the
 * shape with the batch dimension, `reshape`), read by gpuenv/onnx.h;
 * `dynamic_batching`, `instance_group` against the node's GPUs, ensembles
 * (steps' models and the wiring of their tensors).  Each finding names the
 * model, the file and line, what Triton would do, and the fix. */
#ifndef GPUENV_TRITON_H
#define GPUENV_TRITON_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpuenv_triton_severity {
	GPUENV_TRITON_INFO,    /* what Triton fills in or decides by itself */
	GPUENV_TRITON_WARNING, /* loads, but not as the author likely meant */
	GPUENV_TRITON_ERROR,   /* the model would fail to load */
} gpuenv_triton_severity_t;

typedef struct gpuenv_triton_finding {
	const char *model; /* the model's folder name */
	const char *id;	   /* stable handle: "config-syntax", "input-name", ... */
	gpuenv_triton_severity_t severity;
	const char *file;   /* the file it is about (a path under the repository) */
	unsigned line, col; /* 0 when the finding is about the file or folder */
	const char *message;
	const char *fix; /* NULL for INFO findings */
} gpuenv_triton_finding_t;

typedef struct gpuenv_triton_model {
	const char *name;    /* the folder */
	const char *backend; /* "onnxruntime", "tensorrt", ... as decided; NULL unknown */
	const char *platform; /* as written, NULL when not */
	long long max_batch_size; /* -1 when the config could not be read */
	size_t nversions;	  /* numeric version folders */
	bool loads;		  /* no ERROR finding */
} gpuenv_triton_model_t;

/* The node the repository is meant for: its GPUs by index, each one's
 * compute capability ("7.5"); known false: no facts, GPU checks skipped. */
typedef struct gpuenv_triton_node {
	bool known;
	size_t ngpus;
	const char *const *cc; /* ngpus entries; an entry may be NULL (unknown) */
} gpuenv_triton_node_t;

typedef struct gpuenv_triton_opts {
	gpuenv_triton_node_t node;
} gpuenv_triton_opts_t;

typedef struct gpuenv_triton_report {
	const char *repository;
	gpuenv_triton_model_t *models; /* sorted by name */
	size_t nmodels;
	gpuenv_triton_finding_t *findings; /* by model, then in the order found */
	size_t nfindings;
	size_t errors, warnings;
} gpuenv_triton_report_t;

/* Check the repository at path.  0 with *out filled (findings may include
 * errors: a model that would fail to load is an answer, not a failure), or
 * an error when the repository itself cannot be read (-ENOENT, -ENOTDIR,
 * -EACCES, -ENOMEM) recorded in ctx.  Everything lives in arena. */
GPUENV_API int gpuenv_triton_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	const gpuenv_triton_opts_t *opts, gpuenv_triton_report_t *out);

/* "error", "warning", "info". */
GPUENV_API const char *gpuenv_triton_severity_name(gpuenv_triton_severity_t s);

#ifdef __cplusplus
}
#endif
#endif
