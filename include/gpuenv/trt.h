/* gpuenv trt: TensorRT engines for a target (lib/trt, docs/trt.md).
 *
 *  - the plan: the trtexec command line that builds an ONNX model into an
 *    engine for one GPU with one TensorRT release (`gpuenv trt optimize`),
 *    every flag and refusal from the KB's tensorrt.toml (gpuenv/kb_trt.h);
 *  - a trtexec line someone wrote, judged against a TensorRT release
 *    (`trt optimize --check-command`);
 *  - the engine's record, ENGINE.gpuenv.json (schema gpuenv.engine/1): what
 *    built it, written by `gpuenv trt build`, read by `trt check` and
 *    `preflight --engine`;
 *  - the go / no-go of a record on a node (gpuenv_target_t).
 *
 * The model comes in as gpuenv_trt_model_t, the few things the plan needs
 * (the ONNX reader, gpuenv/onnx.h, fills it in the CLI).  Results live in
 * the caller's arena; the library prints nothing. */
#ifndef GPUENV_TRT_H
#define GPUENV_TRT_H

#include "gpuenv/core.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the model ----------------------------------------------------------------- */

#define GPUENV_TRT_MAX_DIMS 16	/* dims of one input TensorRT profiles take */
#define GPUENV_TRT_MAX_INPUTS 1024

typedef struct gpuenv_trt_input {
	const char *name;
	bool has_shape;	     /* false: rank unknown */
	size_t ndims;
	int64_t dims[GPUENV_TRT_MAX_DIMS]; /* -1: dynamic (symbolic or unknown) */
	const char *dim_names[GPUENV_TRT_MAX_DIMS]; /* the symbol, or NULL */
} gpuenv_trt_input_t;

typedef struct gpuenv_trt_model {
	const char *path;
	int64_t opset; /* of ai.onnx; -1 unknown */
	size_t ninputs;
	const gpuenv_trt_input_t *inputs;
} gpuenv_trt_model_t;

/* True when some dim of the input is dynamic (or its rank unknown). */
GPUENV_API bool gpuenv_trt_input_dynamic(const gpuenv_trt_input_t *in);

/* ---- shapes -------------------------------------------------------------------- */

/* One input's profile: NAME:MIN..OPT..MAX, each DxDx... */
typedef struct gpuenv_trt_shape {
	const char *name;
	size_t ndims;
	int64_t min[GPUENV_TRT_MAX_DIMS], opt[GPUENV_TRT_MAX_DIMS], max[GPUENV_TRT_MAX_DIMS];
	const char *origin; /* "--shapes", "pyproject.toml:31:1", "default" */
} gpuenv_trt_shape_t;

/* Parse "input:1x3x224x224..8x3x224x224..32x3x224x224" (or a single shape
 * "input:8x3x224x224", min = opt = max).  origin names it in errors.
 * GPUENV_ESYNTAX with the column of the fault; min <= opt <= max checked. */
GPUENV_API int gpuenv_trt_shape_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *text,
	const char *origin, gpuenv_trt_shape_t *out);

/* ---- the plan (trt optimize) ----------------------------------------------------- */

enum gpuenv_trt_precision {
	GPUENV_TRT_AUTO = 0, GPUENV_TRT_FP32, GPUENV_TRT_FP16, GPUENV_TRT_BF16, GPUENV_TRT_INT8,
	GPUENV_TRT_FP8,
};
/* "auto", "fp32", ... -> the enum; -1 when none. */
GPUENV_API int gpuenv_trt_precision_parse(const char *s);
GPUENV_API const char *gpuenv_trt_precision_name(int p);

typedef struct gpuenv_trt_plan_req {
	const gpuenv_kb_t *kb;	 /* tensorrt.toml loaded */
	const gpuenv_trt_model_t *model;
	const char *onnx;	 /* the model's path as --onnx= writes it */
	const char *engine;	 /* --saveEngine=; NULL: the model's name + ".plan" */
	const char *tensorrt;	 /* "8.5.3.1" */
	const char *gpu;	 /* "Tesla T4" (for messages) */
	int cc_major, cc_minor;	 /* the target GPU's compute capability */
	const gpuenv_trt_shape_t *shapes; /* given profiles, by input name */
	size_t nshapes;
	int precision;		 /* enum gpuenv_trt_precision */
	bool portable_gpus, portable_tensorrt;
	long long workspace_mib; /* 0: gpuenv's default (said in a note) */
} gpuenv_trt_plan_req_t;

enum gpuenv_trt_note_kind { GPUENV_TRT_NOTE_INFO, GPUENV_TRT_NOTE_WARN };

typedef struct gpuenv_trt_note {
	int kind;
	const char *text;
	const char *source; /* the KB row's "tensorrt.toml:41" and source, or NULL */
	bool blocks; /* a verdict's WARN that alone keeps the engine from loading
			or running there (a precision run slowly does not) */
} gpuenv_trt_note_t;

#define GPUENV_TRT_MAX_NOTES 32
#define GPUENV_TRT_MAX_ARGS 32

typedef struct gpuenv_trt_plan {
	const char *argv[GPUENV_TRT_MAX_ARGS]; /* "trtexec", "--onnx=...", ... */
	size_t argc;
	gpuenv_trt_note_t notes[GPUENV_TRT_MAX_NOTES];
	size_t nnotes;
	/* what the engine will be, for its record */
	const char *precisions[4]; /* "fp16"; none: fp32 (or the model's types) */
	size_t nprecisions;
	const char *hardware_compatibility; /* "none", "ampere+", "same-compute-capability" */
	bool version_compatible;
} gpuenv_trt_plan_t;

/* The trtexec command for req.  0; or, with ctx->err saying why and a hint:
 * GPUENV_ENOTFOUND (a TensorRT release the KB does not know), GPUENV_EUSAGE
 * (a dynamic input with no profile and no default, a --shapes for no input
 * or of the wrong rank), GPUENV_EUNSUPPORTED (refused: a portability or a
 * precision this GPU or TensorRT release does not have, a GPU older than the
 * release supports). */
GPUENV_API int gpuenv_trt_plan(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_trt_plan_req_t *req, gpuenv_trt_plan_t *out);

/* ---- a trtexec line judged (--check-command) ------------------------------------ */

typedef struct gpuenv_trt_cmd_finding {
	const char *arg;     /* as written: "--workspace=4096" */
	int state;	     /* enum gpuenv_kb_trt_flag_state */
	const char *text;    /* what is wrong and what to write instead */
	const char *source;  /* "tensorrt.toml:NN: <source>" or NULL */
} gpuenv_trt_cmd_finding_t;

typedef struct gpuenv_trt_cmd_check {
	gpuenv_trt_cmd_finding_t *findings;
	size_t nfindings;
	size_t nremoved, ndeprecated, nnot_yet, nunknown;
	/* the line with removed / deprecated flags replaced where the KB knows
	 * the replacement ("trtexec ... --memPoolSize=workspace:4096") */
	const char *rewritten;
} gpuenv_trt_cmd_check_t;

/* Split a shell-like line (single and double quotes, backslash-newline
 * continuations) and judge each --flag against TensorRT tensorrt. */
GPUENV_API int gpuenv_trt_check_command(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_kb_t *kb, const char *line, const char *tensorrt, gpuenv_trt_cmd_check_t *out);

/* ---- the engine's record ----------------------------------------------------------- */

#define GPUENV_TRT_RECORD_SCHEMA "gpuenv.engine/1"
#define GPUENV_TRT_RECORD_MAX ((size_t)1 << 20)

typedef struct gpuenv_trt_record {
	const char *tensorrt;		    /* "8.5.3.1" or "8.5.3" (from the banner) */
	const char *gpu;		    /* "NVIDIA GeForce RTX 3090" */
	const char *compute_capability;	    /* "8.6" */
	const char *hardware_compatibility; /* "none", "ampere+", "same-compute-capability" */
	bool version_compatible;
	const char *precisions[8];
	size_t nprecisions;
	const char *onnx_path, *onnx_sha256;
	const char *engine_sha256;
	const char *const *trtexec; /* argv */
	size_t ntrtexec;
	const char *built_at; /* RFC 3339 UTC */
} gpuenv_trt_record_t;

/* The record as its JSON text (2-space indent, keys in the schema's order),
 * in arena. */
GPUENV_API int gpuenv_trt_record_json(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_trt_record_t *r, const char **out);
/* Read a record's text; name for messages.  GPUENV_ESYNTAX (not JSON, at
 * name:line:col), GPUENV_EFORMAT (another schema, a field missing or of the
 * wrong type, a malformed version or compute capability: name and the
 * field), -ENOMEM. */
GPUENV_API int gpuenv_trt_record_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *text,
	size_t len, const char *name, gpuenv_trt_record_t *out);

/* ---- a record on a node (trt check, preflight --engine) --------------------------------- */

typedef struct gpuenv_trt_verdict {
	bool go;
	const char *what;    /* "the engine built for sm_86 with TensorRT 8.5.3" */
	const char *tensorrt; /* the node's TensorRT, or NULL when it has none */
	const char *tensorrt_from; /* "libnvinfer", or the runtime's `from` */
	bool tensorrt_ok;     /* that TensorRT loads the engine */
	size_t nreasons;
	gpuenv_trt_note_t reasons[GPUENV_TRT_MAX_NOTES]; /* WARN: a no-go reason */
	size_t gpu_reasons;   /* reasons[gpu_reasons..] are about the GPUs, those
				 before about TensorRT */
} gpuenv_trt_verdict_t;

/* Judge record r on node t (its GPUs and the TensorRT it would load:
 * t->libs' "nvinfer").  0 with *out filled; -ENOMEM. */
GPUENV_API int gpuenv_trt_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_trt_record_t *r, const gpuenv_target_t *t, gpuenv_trt_verdict_t *out);

/* The same judgement with the TensorRT runtime given: tensorrt ("10.5.0",
 * NULL unknown) as `from` names it in the reasons ("nvcr.io/nvidia/
 * tritonserver:24.10-py3"; NULL: this node's libnvinfer), on the GPUs of t
 * (NULL: not judged).  gpuenv_trt_check is this with t's libnvinfer. */
GPUENV_API int gpuenv_trt_check_runtime(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_trt_record_t *r, const char *tensorrt, const char *from, const gpuenv_target_t *t,
	gpuenv_trt_verdict_t *out);

/* Whether TensorRT tensorrt loads the engine of r (the rule of the checks
 * above: the same major.minor.patch, or a version-compatible engine on a
 * runtime at least as new); false when either version does not parse. */
GPUENV_API bool gpuenv_trt_runtime_loads(const gpuenv_kb_t *kb, const gpuenv_trt_record_t *r,
	const char *tensorrt);

#ifdef __cplusplus
}
#endif
#endif
