/* gpuenv onnx: what an ONNX model declares, read without loading it.
 *
 * The ModelProto is read by a small protobuf wire-format reader of gpuenv's
 * own (lib/onnx/wire.c; docs/trt.md says why not protobuf-c): the file is
 * mapped read-only and every tensor payload is skipped by its length, so a
 * 2 GB model is inspected by touching a few pages.  Every length is checked
 * against the bytes left, nesting is capped, counts are capped; a damaged or
 * hostile file gives GPUENV_EFORMAT (or GPUENV_ETOOBIG) with "FILE:OFFSET"
 * in ctx->err.file and what is wrong, never a crash.  External data (the
 * `.onnx.data` files the dynamo exporter writes) is resolved relative to the
 * model's folder and checked (inside that folder, present, long enough);
 * the weights themselves are never read.
 *
 * Everything the reader returns lives in the caller's arena (strings copied
 * there, NUL-terminated): the file is unmapped before gpuenv_onnx_inspect
 * returns. */
#ifndef GPUENV_ONNX_H
#define GPUENV_ONNX_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TensorProto.DataType, by the numbers of onnx.proto. */
typedef enum gpuenv_onnx_dtype {
	GPUENV_ONNX_UNDEFINED = 0,
	GPUENV_ONNX_FLOAT = 1,
	GPUENV_ONNX_UINT8 = 2,
	GPUENV_ONNX_INT8 = 3,
	GPUENV_ONNX_UINT16 = 4,
	GPUENV_ONNX_INT16 = 5,
	GPUENV_ONNX_INT32 = 6,
	GPUENV_ONNX_INT64 = 7,
	GPUENV_ONNX_STRING = 8,
	GPUENV_ONNX_BOOL = 9,
	GPUENV_ONNX_FLOAT16 = 10,
	GPUENV_ONNX_DOUBLE = 11,
	GPUENV_ONNX_UINT32 = 12,
	GPUENV_ONNX_UINT64 = 13,
	GPUENV_ONNX_COMPLEX64 = 14,
	GPUENV_ONNX_COMPLEX128 = 15,
	GPUENV_ONNX_BFLOAT16 = 16,
	GPUENV_ONNX_FLOAT8E4M3FN = 17,
	GPUENV_ONNX_FLOAT8E4M3FNUZ = 18,
	GPUENV_ONNX_FLOAT8E5M2 = 19,
	GPUENV_ONNX_FLOAT8E5M2FNUZ = 20,
	GPUENV_ONNX_UINT4 = 21,
	GPUENV_ONNX_INT4 = 22,
	GPUENV_ONNX_FLOAT4E2M1 = 23,
	GPUENV_ONNX_FLOAT8E8M0 = 24,
	GPUENV_ONNX_UINT2 = 25,
	GPUENV_ONNX_INT2 = 26,
	GPUENV_ONNX_DTYPE_COUNT
} gpuenv_onnx_dtype_t;

/* TensorProto's name of a data type ("FLOAT", "FLOAT16", "INT64", ...), or
 * NULL for a number onnx.proto does not name. */
GPUENV_API const char *gpuenv_onnx_dtype_name(int dtype);
/* The data type of a TensorProto name; -1 when none has it. */
GPUENV_API int gpuenv_onnx_dtype_parse(gpuenv_str_t name);
/* Bytes of one element (FLOAT 4, FLOAT16 2, BOOL 1, ...); 0 for STRING,
 * the sub-byte types (INT4, UINT4, FLOAT4E2M1, INT2, UINT2) and unknown
 * numbers. */
GPUENV_API unsigned gpuenv_onnx_dtype_size(int dtype);

/* One dimension of a shape: TensorShapeProto.Dimension's oneof. */
typedef enum gpuenv_onnx_dim_kind {
	GPUENV_ONNX_DIM_UNKNOWN = 0, /* neither dim_value nor dim_param */
	GPUENV_ONNX_DIM_FIXED = 1,   /* dim_value */
	GPUENV_ONNX_DIM_SYMBOLIC = 2, /* dim_param ("batch", "N", "seq") */
} gpuenv_onnx_dim_kind_t;

typedef struct gpuenv_onnx_dim {
	gpuenv_onnx_dim_kind_t kind;
	int64_t value;	    /* DIM_FIXED: the size (as written; may be <= 0) */
	gpuenv_str_t param; /* DIM_SYMBOLIC: the name; else GPUENV_STR_NULL */
} gpuenv_onnx_dim_t;

/* TypeProto's oneof: what a graph input or output is. */
typedef enum gpuenv_onnx_type_kind {
	GPUENV_ONNX_TYPE_NONE = 0,   /* no type given */
	GPUENV_ONNX_TYPE_TENSOR = 1,
	GPUENV_ONNX_TYPE_SPARSE_TENSOR = 2,
	GPUENV_ONNX_TYPE_SEQUENCE = 3,
	GPUENV_ONNX_TYPE_MAP = 4,
	GPUENV_ONNX_TYPE_OPTIONAL = 5,
	GPUENV_ONNX_TYPE_OPAQUE = 6,
} gpuenv_onnx_type_kind_t;

/* The name of a type kind: "tensor", "sparse_tensor", "sequence", "map",
 * "optional", "opaque"; NULL for NONE. */
GPUENV_API const char *gpuenv_onnx_type_kind_name(gpuenv_onnx_type_kind_t kind);

/* A graph input or output (ValueInfoProto). */
typedef struct gpuenv_onnx_value {
	gpuenv_str_t name;
	gpuenv_onnx_type_kind_t kind;
	/* TENSOR and SPARSE_TENSOR: elem_type (GPUENV_ONNX_UNDEFINED when not
	 * given).  SEQUENCE and OPTIONAL: the innermost tensor's elem_type
	 * when the element is a tensor, else UNDEFINED; MAP: the value's. */
	int dtype;
	/* TENSOR and SPARSE_TENSOR: false when the type has no shape at all
	 * (rank unknown); then ndims is 0.  A scalar has a shape of 0 dims. */
	bool has_shape;
	size_t ndims;
	gpuenv_onnx_dim_t *dims;
} gpuenv_onnx_value_t;

/* An opset import: domain ("" is written back as "ai.onnx") and version. */
typedef struct gpuenv_onnx_opset {
	gpuenv_str_t domain; /* "ai.onnx" for the default domain "" */
	int64_t version;
} gpuenv_onnx_opset_t;

/* One operator type and how many nodes use it, subgraphs included. */
typedef struct gpuenv_onnx_op {
	gpuenv_str_t domain; /* "ai.onnx" for the default domain */
	gpuenv_str_t op_type;
	/* "Conv" for ai.onnx, "com.microsoft.FusedConv" otherwise */
	gpuenv_str_t qualified;
	uint64_t count;
} gpuenv_onnx_op_t;

/* One external data file, as the initializers name it. */
typedef struct gpuenv_onnx_extfile {
	gpuenv_str_t location; /* as written in the model ("model.onnx.data") */
	gpuenv_str_t path;     /* resolved: the model's folder + location */
	uint64_t tensors;      /* initializers stored there */
	uint64_t bytes;	       /* sum of their lengths */
	uint64_t end;	       /* the largest offset + length they use */
	uint64_t file_size;    /* the file's size on disk */
} gpuenv_onnx_extfile_t;

typedef struct gpuenv_onnx_model {
	const char *path; /* as given */
	uint64_t file_size;
	int64_t ir_version;
	size_t nopsets;
	gpuenv_onnx_opset_t *opsets; /* in file order */
	gpuenv_str_t producer_name, producer_version; /* "" when not given */
	gpuenv_str_t domain;			      /* ModelProto.domain */
	int64_t model_version;
	gpuenv_str_t graph_name;
	bool has_graph;

	/* graph inputs that are not initializers, in file order */
	size_t ninputs;
	gpuenv_onnx_value_t *inputs;
	size_t noutputs;
	gpuenv_onnx_value_t *outputs;

	/* operators sorted by qualified name; nodes of subgraphs (If, Loop,
	 * Scan: attributes g and graphs) are counted too */
	size_t nops;
	gpuenv_onnx_op_t *ops;
	uint64_t nodes;		 /* nodes of the main graph */
	uint64_t subgraph_nodes; /* nodes inside subgraphs, at any depth */
	uint64_t subgraphs;	 /* subgraphs met */
	uint64_t functions;	 /* ModelProto.functions (model-local functions) */

	/* initializers of the main graph (sparse ones included in the count) */
	uint64_t initializers;
	uint64_t initializer_bytes; /* payload bytes stored in the model file */
	uint64_t external_tensors;  /* initializers with data_location EXTERNAL */
	uint64_t external_bytes;    /* their lengths, summed */
	size_t nextfiles;
	gpuenv_onnx_extfile_t *extfiles; /* in order of first use */
} gpuenv_onnx_model_t;

/* Limits of the reader: beyond them a file is refused (GPUENV_ETOOBIG). */
#define GPUENV_ONNX_MAX_DEPTH 64	 /* nested messages */
#define GPUENV_ONNX_MAX_VALUES 65536	 /* inputs or outputs of a graph */
#define GPUENV_ONNX_MAX_DIMS 1024	 /* dims of one shape */
#define GPUENV_ONNX_MAX_OPSETS 4096	 /* opset imports */
#define GPUENV_ONNX_MAX_OPS 65536	 /* distinct operator types */
#define GPUENV_ONNX_MAX_INITIALIZERS (1u << 22) /* initializers of the main graph */
#define GPUENV_ONNX_MAX_EXTFILES 65536	 /* distinct external data files */
#define GPUENV_ONNX_MAX_STRING 65536	 /* a name, a producer, a dim_param */

/* Read the model at path into *out, in arena.  0, or: -errno when the file
 * cannot be opened or mapped; GPUENV_EFORMAT for a damaged file or external
 * data that is missing, outside the model's folder or too short;
 * GPUENV_ETOOBIG past a limit above; -ENOMEM.  ctx->err holds "PATH:OFFSET"
 * as its file and what is wrong. */
GPUENV_API int gpuenv_onnx_inspect(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_onnx_model_t *out);

/* The same over bytes in memory (the fuzz target, tests).  name is used in
 * messages; dir is the folder external data is resolved against (NULL: any
 * external data is refused as unresolvable). */
GPUENV_API int gpuenv_onnx_inspect_mem(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const void *data, size_t size, const char *name, const char *dir,
	gpuenv_onnx_model_t *out);

/* The version of an opset domain the model imports ("" and "ai.onnx" are
 * the same domain); -1 when it imports none. */
GPUENV_API int64_t gpuenv_onnx_opset_version(const gpuenv_onnx_model_t *m, const char *domain);

/* True for a tensor (or sparse tensor) with a dim that is not fixed
 * (symbolic or unknown) or with no shape at all: an input TensorRT needs a
 * shape profile for.  False for other kinds (sequence, map, ...). */
GPUENV_API bool gpuenv_onnx_value_is_dynamic(const gpuenv_onnx_value_t *v);

#ifdef __cplusplus
}
#endif
#endif
