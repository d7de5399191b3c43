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
 * (steps' models and the wiring of their tensors); with the server image
 * and the node: each TensorRT plan's engine record (gpuenv/trt.h) against
 * the image's TensorRT (its KB row) and the node's GPUs, and the image
 * against the node (preflight --image's verdict, gpuenv/doctor.h).  Each
 * finding names the model, the file and line, what Triton would do, and
 * the fix. */
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
	const char *model; /* the model's folder name; NULL: about the repository
			      as a whole (the server image on the node) */
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

struct gpuenv_facts;
struct gpuenv_kb;

/* The knowledge-base files a caller's opts.kb needs (gpuenv/kb.h's load
 * mask): the image's row and preflight's rules, TensorRT's for the plans. */
#define GPUENV_TRITON_KB_FILES                                                                               	(GPUENV_KB_FILE(GPUENV_KB_CUDA) | GPUENV_KB_FILE(GPUENV_KB_TORCH) | GPUENV_KB_FILE(GPUENV_KB_NGC) |   		GPUENV_KB_FILE(GPUENV_KB_GPUS) | GPUENV_KB_FILE(GPUENV_KB_TENSORRT))

typedef struct gpuenv_triton_opts {
	gpuenv_triton_node_t node;
	/* The server image ("nvcr.io/nvidia/tritonserver:24.10-py3"), NULL when
	 * not given: its KB row's TensorRT judges the plans' engine records, and
	 * with facts preflight --image judges it on the node. */
	const char *image;
	/* The node's facts, NULL when not given: the plans' engine records on
	 * its GPUs, and the image on it. */
	const struct gpuenv_facts *facts;
	/* The knowledge base for the image and the engine records; NULL: the
	 * built-in one, loaded when image or facts is given. */
	const struct gpuenv_kb *kb;
} gpuenv_triton_opts_t;

typedef struct gpuenv_triton_report {
	const char *repository;
	gpuenv_triton_model_t *models; /* sorted by name */
	size_t nmodels;
	gpuenv_triton_finding_t *findings; /* the repository's (model NULL) first,
					      then by model, in the order found */
	size_t nfindings;
	size_t errors, warnings;
	const char *image;	     /* opts->image */
	const char *image_tensorrt; /* its TensorRT by the KB; NULL unknown */
} gpuenv_triton_report_t;

/* Check the repository at path.  0 with *out filled (findings may include
 * errors: a model that would fail to load is an answer, not a failure), or
 * an error when the repository itself cannot be read (-ENOENT, -ENOTDIR,
 * -EACCES, -ENOMEM) or the built-in knowledge base cannot be loaded,
 * recorded in ctx.  An image the KB does not know is a finding, not an
 * error.  Everything lives in arena. */
GPUENV_API int gpuenv_triton_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	const gpuenv_triton_opts_t *opts, gpuenv_triton_report_t *out);

/* "error", "warning", "info". */
GPUENV_API const char *gpuenv_triton_severity_name(gpuenv_triton_severity_t s);

#ifdef __cplusplus
}
#endif
#endif
