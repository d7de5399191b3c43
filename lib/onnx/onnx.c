/* gpuenv onnx: the ModelProto read over the wire reader (gpuenv/onnx.h).
 *
 * Field numbers are onnx.proto's (https://github.com/onnx/onnx, onnx/onnx.proto).
 * As protobuf parsers do, a field whose number is unknown, or whose wire
 * type is not the one its declaration has, is skipped; a singular message
 * met twice is merged (its repeated fields append).  What is read is copied
 * into the caller's arena; the mapping is gone when gpuenv_onnx_inspect
 * returns. */
#include "gpuenv/onnx.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "wire.h"

/* ---- data types ----------------------------------------------------------- */

static const struct {
	const char *name;
	unsigned size;
} dtypes[GPUENV_ONNX_DTYPE_COUNT] = {
	[GPUENV_ONNX_UNDEFINED] = { "UNDEFINED", 0 },
	[GPUENV_ONNX_FLOAT] = { "FLOAT", 4 },
	[GPUENV_ONNX_UINT8] = { "UINT8", 1 },
	[GPUENV_ONNX_INT8] = { "INT8", 1 },
	[GPUENV_ONNX_UINT16] = { "UINT16", 2 },
	[GPUENV_ONNX_INT16] = { "INT16", 2 },
	[GPUENV_ONNX_INT32] = { "INT32", 4 },
	[GPUENV_ONNX_INT64] = { "INT64", 8 },
	[GPUENV_ONNX_STRING] = { "STRING", 0 },
	[GPUENV_ONNX_BOOL] = { "BOOL", 1 },
	[GPUENV_ONNX_FLOAT16] = { "FLOAT16", 2 },
	[GPUENV_ONNX_DOUBLE] = { "DOUBLE", 8 },
	[GPUENV_ONNX_UINT32] = { "UINT32", 4 },
	[GPUENV_ONNX_UINT64] = { "UINT64", 8 },
	[GPUENV_ONNX_COMPLEX64] = { "COMPLEX64", 8 },
	[GPUENV_ONNX_COMPLEX128] = { "COMPLEX128", 16 },
	[GPUENV_ONNX_BFLOAT16] = { "BFLOAT16", 2 },
	[GPUENV_ONNX_FLOAT8E4M3FN] = { "FLOAT8E4M3FN", 1 },
	[GPUENV_ONNX_FLOAT8E4M3FNUZ] = { "FLOAT8E4M3FNUZ", 1 },
	[GPUENV_ONNX_FLOAT8E5M2] = { "FLOAT8E5M2", 1 },
	[GPUENV_ONNX_FLOAT8E5M2FNUZ] = { "FLOAT8E5M2FNUZ", 1 },
	[GPUENV_ONNX_UINT4] = { "UINT4", 0 },
	[GPUENV_ONNX_INT4] = { "INT4", 0 },
	[GPUENV_ONNX_FLOAT4E2M1] = { "FLOAT4E2M1", 0 },
	[GPUENV_ONNX_FLOAT8E8M0] = { "FLOAT8E8M0", 1 },
	[GPUENV_ONNX_UINT2] = { "UINT2", 0 },
	[GPUENV_ONNX_INT2] = { "INT2", 0 },
};

const char *gpuenv_onnx_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < GPUENV_ONNX_DTYPE_COUNT ? dtypes[dtype].name : NULL;
}

int gpuenv_onnx_dtype_parse(gpuenv_str_t name)
{
	for (int i = 0; i < GPUENV_ONNX_DTYPE_COUNT; i++)
		if (gpuenv_str_eq_cstr(name, dtypes[i].name))
			return i;
	return -1;
}

unsigned gpuenv_onnx_dtype_size(int dtype)
{
	return dtype >= 0 && dtype < GPUENV_ONNX_DTYPE_COUNT ? dtypes[dtype].size : 0;
}

const char *gpuenv_onnx_type_kind_name(gpuenv_onnx_type_kind_t kind)
{
	static const char *const names[] = { NULL, "tensor", "sparse_tensor", "sequence", "map",
		"optional", "opaque" };
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}

int64_t gpuenv_onnx_opset_version(const gpuenv_onnx_model_t *m, const char *domain)
{
	const char *want = domain && *domain ? domain : "ai.onnx";

	/* the last import of a domain wins, as onnx's checker reads them */
	for (size_t i = m->nopsets; i-- > 0;)
		if (gpuenv_str_eq_cstr(m->opsets[i].domain, want))
			return m->opsets[i].version;
	return -1;
}

bool gpuenv_onnx_value_is_dynamic(const gpuenv_onnx_value_t *v)
{
	if (v->kind != GPUENV_ONNX_TYPE_TENSOR && v->kind != GPUENV_ONNX_TYPE_SPARSE_TENSOR)
		return false;
	if (!v->has_shape)
		return true;
	for (size_t i = 0; i < v->ndims; i++)
		if (v->dims[i].kind != GPUENV_ONNX_DIM_FIXED)
			return true;
	return false;
}

/* ---- the reader's state ------------------------------------------------------ */

/* onnx.proto's field numbers, by message */
enum { MODEL_IR_VERSION = 1, MODEL_PRODUCER_NAME = 2, MODEL_PRODUCER_VERSION = 3, MODEL_DOMAIN = 4,
	MODEL_MODEL_VERSION = 5, MODEL_GRAPH = 7, MODEL_OPSET_IMPORT = 8, MODEL_FUNCTIONS = 25 };
enum { OPSET_DOMAIN = 1, OPSET_VERSION = 2 };
enum { GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12,
	GRAPH_SPARSE_INITIALIZER = 15 };
enum { NODE_OP_TYPE = 4, NODE_ATTRIBUTE = 5, NODE_DOMAIN = 7 };
enum { ATTR_T = 5, ATTR_G = 6, ATTR_TENSORS = 10, ATTR_GRAPHS = 11, ATTR_SPARSE_TENSOR = 22,
	ATTR_SPARSE_TENSORS = 23 };
enum { VALUE_NAME = 1, VALUE_TYPE = 2 };
enum { TYPE_TENSOR = 1, TYPE_SEQUENCE = 4, TYPE_MAP = 5, TYPE_OPAQUE = 7, TYPE_SPARSE_TENSOR = 8,
	TYPE_OPTIONAL = 9 };
enum { TTYPE_ELEM_TYPE = 1, TTYPE_SHAPE = 2 };		/* Tensor and SparseTensor */
enum { SEQ_ELEM_TYPE = 1 };				/* Sequence and Optional */
enum { MAP_VALUE_TYPE = 2 };
enum { SHAPE_DIM = 1 };
enum { DIM_VALUE = 1, DIM_PARAM = 2 };
enum { TENSOR_DATA_TYPE = 2, TENSOR_FLOAT_DATA = 4, TENSOR_INT32_DATA = 5, TENSOR_STRING_DATA = 6,
	TENSOR_INT64_DATA = 7, TENSOR_NAME = 8, TENSOR_RAW_DATA = 9, TENSOR_DOUBLE_DATA = 10,
	TENSOR_UINT64_DATA = 11, TENSOR_EXTERNAL_DATA = 13, TENSOR_DATA_LOCATION = 14 };
enum { SPARSE_VALUES = 1, SPARSE_INDICES = 2 };
enum { ENTRY_KEY = 1, ENTRY_VALUE = 2 };
enum { LOCATION_EXTERNAL = 1 };

/* all dims of all shapes, together: what a hostile file can make us hold */
#define MAX_TOTAL_DIMS (1u << 20)

struct rd {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *name; /* for messages */
	const char *dir;  /* external data's folder; NULL: refused */
	char *dir_real;	  /* realpath(dir), made at the first external tensor */
	gpuenv_onnx_model_t *m;
	unsigned depth;
	size_t total_dims;
	size_t cap_opsets, cap_inputs, cap_outputs, cap_ops, cap_extfiles;
	gpuenv_strmap_t inits;	/* names of the main graph's initializers (slices of the file) */
	gpuenv_strmap_t opmap;	/* qualified operator name -> index + 1 */
	gpuenv_strmap_t extmap; /* external location -> index + 1 */
	gpuenv_buf_t key;	/* scratch for qualified names */
};

static int bad(struct rd *r, int code, size_t off, const char *fmt, ...) GPUENV_PRINTF(4, 5);

/* "FILE:OFFSET" as the error's file, and what is wrong */
static int bad(struct rd *r, int code, size_t off, const char *fmt, ...)
{
	char where[256], msg[512];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%zu", r->name, off);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(r->ctx, code, where, 0, 0, "%s", msg);
}

/* the end of a message: 0, or the wire reader's error */
static int wire_end(struct rd *r, const onnx_wire_t *w, const char *msg)
{
	if (!w->err)
		return 0;
	return bad(r, GPUENV_EFORMAT, w->err_off, "%s: %s", msg, w->err);
}

static int enter(struct rd *r, const onnx_wire_field_t *f, const char *msg)
{
	if (++r->depth > GPUENV_ONNX_MAX_DEPTH)
		return bad(r, GPUENV_ETOOBIG, f->tag_off,
			"%s nested more than %d messages deep", msg, GPUENV_ONNX_MAX_DEPTH);
	return 0;
}

/* Grow the arena array *arr (elem bytes each) to hold n + 1; max entries. */
static int grow(struct rd *r, void **arr, size_t *cap, size_t n, size_t elem, size_t max,
	size_t off, const char *what)
{
	void *p;
	size_t nc;

	if (n < *cap)
		return 0;
	if (n >= max)
		return bad(r, GPUENV_ETOOBIG, off, "more than %zu %s: refused", max, what);
	nc = *cap ? *cap * 2 : 8;
	if (nc > max)
		nc = max;
	p = gpuenv_arena_alloc(r->arena, nc * elem);
	if (!p)
		return gpuenv_oom(r->ctx, what);
	if (n)
		memcpy(p, *arr, n * elem);
	*arr = p;
	*cap = nc;
	return 0;
}

/* A string field as a slice of the file, its length checked.  It is copied
 * into the arena once its message is read (own()): a name repeated a
 * million times in one message costs one copy, not a million. */
static int name_of(struct rd *r, const onnx_wire_t *w, const onnx_wire_field_t *f, gpuenv_str_t *out)
{
	if (f->len > GPUENV_ONNX_MAX_STRING)
		return bad(r, GPUENV_ETOOBIG, f->off, "a name of %zu bytes (more than %d): refused",
			f->len, GPUENV_ONNX_MAX_STRING);
	*out = gpuenv_str_n(onnx_wire_bytes(w, f), f->len);
	return 0;
}

/* s copied into the arena (NUL-terminated); NULL stays NULL */
static int own(struct rd *r, gpuenv_str_t *s)
{
	if (!s->ptr)
		return 0;
	*s = gpuenv_arena_str(r->arena, *s);
	return s->ptr ? 0 : gpuenv_oom(r->ctx, "reading an ONNX model");
}

static gpuenv_str_t slice(const onnx_wire_t *w, const onnx_wire_field_t *f)
{
	return gpuenv_str_n(onnx_wire_bytes(w, f), f->len);
}

/* ---- types and shapes ---------------------------------------------------------- */

static int read_type(struct rd *r, onnx_wire_t w, gpuenv_onnx_value_t *v, bool keep_shape);

static int read_dim(struct rd *r, onnx_wire_t w, gpuenv_onnx_dim_t *d)
{
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		if (f.num == DIM_VALUE && f.wire == ONNX_WIRE_VARINT) {
			d->kind = GPUENV_ONNX_DIM_FIXED;
			d->value = (int64_t)f.u;
			d->param = GPUENV_STR_NULL;
		} else if (f.num == DIM_PARAM && f.wire == ONNX_WIRE_LEN) {
			if ((e = name_of(r, &w, &f, &d->param)))
				return e;
			d->kind = GPUENV_ONNX_DIM_SYMBOLIC;
			d->value = 0;
		}
	}
	if ((e = wire_end(r, &w, "TensorShapeProto.Dimension")))
		return e;
	return own(r, &d->param);
}

static int read_shape(struct rd *r, onnx_wire_t w, gpuenv_onnx_value_t *v, bool keep)
{
	onnx_wire_field_t f;
	size_t cap = v->ndims; /* a merged shape: the array is exactly full */
	int e;

	v->has_shape = true;
	while (onnx_wire_next(&w, &f)) {
		if (f.num != SHAPE_DIM || f.wire != ONNX_WIRE_LEN)
			continue;
		if (!keep) {
			/* an element type's shape (in a sequence): checked, not kept */
			gpuenv_onnx_dim_t d = { 0 };
			if ((e = enter(r, &f, "TensorShapeProto.Dimension")) ||
				(e = read_dim(r, onnx_wire_sub(&w, &f), &d)))
				return e;
			r->depth--;
			continue;
		}
		if (r->total_dims >= MAX_TOTAL_DIMS)
			return bad(r, GPUENV_ETOOBIG, f.tag_off,
				"more than %u dims in all shapes: refused", MAX_TOTAL_DIMS);
		if ((e = grow(r, (void **)&v->dims, &cap, v->ndims, sizeof(*v->dims),
			     GPUENV_ONNX_MAX_DIMS, f.tag_off, "dims in one shape")))
			return e;
		gpuenv_onnx_dim_t *d = &v->dims[v->ndims];
		memset(d, 0, sizeof(*d));
		if ((e = enter(r, &f, "TensorShapeProto.Dimension")) ||
			(e = read_dim(r, onnx_wire_sub(&w, &f), d)))
			return e;
		r->depth--;
		v->ndims++;
		r->total_dims++;
	}
	return wire_end(r, &w, "TensorShapeProto");
}

/* TypeProto.Tensor and TypeProto.SparseTensor */
static int read_tensor_type(struct rd *r, onnx_wire_t w, gpuenv_onnx_value_t *v, bool keep)
{
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		if (f.num == TTYPE_ELEM_TYPE && f.wire == ONNX_WIRE_VARINT) {
			v->dtype = (int32_t)(uint32_t)f.u;
		} else if (f.num == TTYPE_SHAPE && f.wire == ONNX_WIRE_LEN) {
			if ((e = enter(r, &f, "TensorShapeProto")) ||
				(e = read_shape(r, onnx_wire_sub(&w, &f), v, keep)))
				return e;
			r->depth--;
		}
	}
	return wire_end(r, &w, "TypeProto.Tensor");
}

/* Sequence, Optional (field 1) and Map (field 2): the element's type gives
 * the dtype; its shape is not kept. */
static int read_inner(struct rd *r, onnx_wire_t w, gpuenv_onnx_value_t *v, uint32_t num,
	const char *msg)
{
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		if (f.num != num || f.wire != ONNX_WIRE_LEN)
			continue;
		gpuenv_onnx_value_t inner = { 0 };
		if ((e = enter(r, &f, "TypeProto")) ||
			(e = read_type(r, onnx_wire_sub(&w, &f), &inner, false)))
			return e;
		r->depth--;
		v->dtype = inner.dtype;
	}
	return wire_end(r, &w, msg);
}

static int read_type(struct rd *r, onnx_wire_t w, gpuenv_onnx_value_t *v, bool keep)
{
	onnx_wire_field_t f;
	int e = 0;

	while (onnx_wire_next(&w, &f)) {
		gpuenv_onnx_type_kind_t k;
		switch (f.num) {
		case TYPE_TENSOR: k = GPUENV_ONNX_TYPE_TENSOR; break;
		case TYPE_SPARSE_TENSOR: k = GPUENV_ONNX_TYPE_SPARSE_TENSOR; break;
		case TYPE_SEQUENCE: k = GPUENV_ONNX_TYPE_SEQUENCE; break;
		case TYPE_MAP: k = GPUENV_ONNX_TYPE_MAP; break;
		case TYPE_OPTIONAL: k = GPUENV_ONNX_TYPE_OPTIONAL; break;
		case TYPE_OPAQUE: k = GPUENV_ONNX_TYPE_OPAQUE; break;
		default: continue;
		}
		if (f.wire != ONNX_WIRE_LEN)
			continue;
		if (k != v->kind) {
			/* the oneof changes: what the other member said is gone */
			v->kind = k;
			v->dtype = 0;
			v->has_shape = false;
			v->ndims = 0;
			v->dims = NULL;
		}
		if ((e = enter(r, &f, "TypeProto")))
			return e;
		onnx_wire_t s = onnx_wire_sub(&w, &f);
		switch (k) {
		case GPUENV_ONNX_TYPE_TENSOR:
		case GPUENV_ONNX_TYPE_SPARSE_TENSOR:
			e = read_tensor_type(r, s, v, keep);
			break;
		case GPUENV_ONNX_TYPE_SEQUENCE:
			e = read_inner(r, s, v, SEQ_ELEM_TYPE, "TypeProto.Sequence");
			break;
		case GPUENV_ONNX_TYPE_OPTIONAL:
			e = read_inner(r, s, v, SEQ_ELEM_TYPE, "TypeProto.Optional");
			break;
		case GPUENV_ONNX_TYPE_MAP:
			e = read_inner(r, s, v, MAP_VALUE_TYPE, "TypeProto.Map");
			break;
		default: /* opaque: a domain and a name, nothing to check */
			break;
		}
		if (e)
			return e;
		r->depth--;
	}
	return wire_end(r, &w, "TypeProto");
}

static int read_value(struct rd *r, onnx_wire_t w, gpuenv_onnx_value_t *v)
{
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		if (f.num == VALUE_NAME && f.wire == ONNX_WIRE_LEN) {
			if ((e = name_of(r, &w, &f, &v->name)))
				return e;
		} else if (f.num == VALUE_TYPE && f.wire == ONNX_WIRE_LEN) {
			if ((e = enter(r, &f, "TypeProto")) ||
				(e = read_type(r, onnx_wire_sub(&w, &f), v, true)))
				return e;
			r->depth--;
		}
	}
	if ((e = wire_end(r, &w, "ValueInfoProto")))
		return e;
	if (!v->name.ptr)
		v->name = GPUENV_STR_LIT("");
	return own(r, &v->name);
}

/* ---- tensors and external data ----------------------------------------------- */

static bool parse_u64(gpuenv_str_t s, uint64_t *out)
{
	return gpuenv_str_to_u64(s, out);
}

/* location as onnx resolves it: relative, inside the model's folder */
static int ext_resolve(struct rd *r, size_t off, gpuenv_str_t loc, gpuenv_str_t tname,
	gpuenv_onnx_extfile_t *x)
{
	char path[PATH_MAX], real[PATH_MAX];
	gpuenv_str_t rest = loc, comp;
	struct stat st;
	size_t dl;

	if (!r->dir)
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "' has external data, "
			"and a model read from memory has no folder to find it in", GPUENV_STR_ARG(tname));
	if (!loc.len || memchr(loc.ptr, '\0', loc.len))
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data "
			"without a location", GPUENV_STR_ARG(tname));
	if (loc.ptr[0] == '/')
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data at "
			"the absolute path '" GPUENV_STR_FMT "': onnx only reads it from the model's folder",
			GPUENV_STR_ARG(tname), GPUENV_STR_ARG(loc));
	while (rest.ptr) {
		rest = gpuenv_str_split(rest, '/', &comp);
		if (gpuenv_str_eq_cstr(comp, ".."))
			return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data "
				"location '" GPUENV_STR_FMT "' leaves the model's folder (..)",
				GPUENV_STR_ARG(tname), GPUENV_STR_ARG(loc));
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/" GPUENV_STR_FMT, r->dir,
		    GPUENV_STR_ARG(loc)) >= sizeof(path))
		return bad(r, GPUENV_ETOOBIG, off, "external data path too long");
	if (!r->dir_real) {
		if (!realpath(r->dir, real))
			return bad(r, -errno, off, "%s: %s", r->dir, strerror(errno));
		r->dir_real = gpuenv_arena_strndup(r->arena, real, strlen(real));
		if (!r->dir_real)
			return gpuenv_oom(r->ctx, "reading the ONNX model");
	}
	if (!realpath(path, real)) {
		int err = errno;
		bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data file %s: %s",
			GPUENV_STR_ARG(tname), path, strerror(err));
		return gpuenv_hint(r->ctx, "copy the data file beside the model; the dynamo exporter "
			"writes it as MODEL.onnx.data");
	}
	dl = strlen(r->dir_real);
	/* a link may point out of the folder: onnx refuses that too */
	if (!(strncmp(real, r->dir_real, dl) == 0 && (real[dl] == '/' || (dl == 1 && real[0] == '/'))))
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data file "
			"%s resolves to %s, outside the model's folder", GPUENV_STR_ARG(tname), path, real);
	if (stat(real, &st) || !S_ISREG(st.st_mode))
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data file "
			"%s is not a regular file", GPUENV_STR_ARG(tname), path);
	x->location = gpuenv_arena_str(r->arena, loc);
	x->path = gpuenv_arena_str(r->arena, gpuenv_str(path));
	if (!x->location.ptr || !x->path.ptr)
		return gpuenv_oom(r->ctx, "reading the ONNX model");
	x->file_size = (uint64_t)st.st_size;
	return 0;
}

static int ext_add(struct rd *r, size_t off, gpuenv_str_t tname, gpuenv_str_t loc, gpuenv_str_t soff,
	gpuenv_str_t slen, bool has_len)
{
	gpuenv_onnx_model_t *m = r->m;
	gpuenv_onnx_extfile_t *x;
	uint64_t o = 0, len = 0;
	bool found;
	void *v;
	int e;

	if (soff.ptr && !parse_u64(soff, &o))
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data offset "
			"'" GPUENV_STR_FMT "' is not a number", GPUENV_STR_ARG(tname), GPUENV_STR_ARG(soff));
	if (has_len && !parse_u64(slen, &len))
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data length "
			"'" GPUENV_STR_FMT "' is not a number", GPUENV_STR_ARG(tname), GPUENV_STR_ARG(slen));
	v = gpuenv_strmap_get(&r->extmap, loc.ptr, loc.len, &found);
	if (found) {
		x = &m->extfiles[(size_t)(uintptr_t)v - 1];
	} else {
		if ((e = grow(r, (void **)&m->extfiles, &r->cap_extfiles, m->nextfiles,
			     sizeof(*m->extfiles), GPUENV_ONNX_MAX_EXTFILES, off, "external data files")))
			return e;
		x = &m->extfiles[m->nextfiles];
		memset(x, 0, sizeof(*x));
		if ((e = ext_resolve(r, off, loc, tname, x)))
			return e;
		if (gpuenv_strmap_put(&r->extmap, x->location.ptr, x->location.len,
			    (void *)(uintptr_t)(m->nextfiles + 1)))
			return gpuenv_oom(r->ctx, "reading the ONNX model");
		m->nextfiles++;
	}
	if (o > x->file_size || (has_len && len > x->file_size - o))
		return bad(r, GPUENV_EFORMAT, off, "tensor '" GPUENV_STR_FMT "': external data at "
			"offset %llu, length %llu runs past the end of %.*s (%llu bytes)",
			GPUENV_STR_ARG(tname), (unsigned long long)o, (unsigned long long)len,
			GPUENV_STR_ARG(x->path), (unsigned long long)x->file_size);
	if (!has_len) /* onnx reads to the end of the file */
		len = x->file_size - o;
	x->tensors++;
	x->bytes += len;
	if (o + len > x->end)
		x->end = o + len;
	m->external_tensors++;
	m->external_bytes += len;
	return 0;
}

/* StringStringEntryProto */
static int read_entry(struct rd *r, onnx_wire_t w, gpuenv_str_t *key, gpuenv_str_t *val)
{
	onnx_wire_field_t f;

	*key = *val = GPUENV_STR_NULL;
	while (onnx_wire_next(&w, &f)) {
		if (f.num == ENTRY_KEY && f.wire == ONNX_WIRE_LEN)
			*key = slice(&w, &f);
		else if (f.num == ENTRY_VALUE && f.wire == ONNX_WIRE_LEN)
			*val = slice(&w, &f);
	}
	return wire_end(r, &w, "StringStringEntryProto");
}

/* A TensorProto: its payload's size, its external data checked.  *name (may
 * be NULL) gets its name as a slice of the file. */
static int read_tensor(struct rd *r, onnx_wire_t w, size_t at, bool initializer, gpuenv_str_t *name)
{
	gpuenv_str_t tname = GPUENV_STR_LIT(""), loc = GPUENV_STR_NULL, soff = GPUENV_STR_NULL;
	gpuenv_str_t slen = GPUENV_STR_NULL;
	bool external = false, has_loc = false, has_len = false;
	uint64_t bytes = 0;
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		switch (f.num) {
		case TENSOR_NAME:
			if (f.wire == ONNX_WIRE_LEN)
				tname = slice(&w, &f);
			break;
		case TENSOR_DATA_LOCATION:
			if (f.wire == ONNX_WIRE_VARINT)
				external = (int32_t)(uint32_t)f.u == LOCATION_EXTERNAL;
			break;
		case TENSOR_EXTERNAL_DATA: {
			gpuenv_str_t k, v;
			if (f.wire != ONNX_WIRE_LEN)
				break;
			if ((e = enter(r, &f, "StringStringEntryProto")) ||
				(e = read_entry(r, onnx_wire_sub(&w, &f), &k, &v)))
				return e;
			r->depth--;
			/* a key met twice: the last one counts, as onnx's dict() */
			if (gpuenv_str_eq_cstr(k, "location")) {
				loc = v;
				has_loc = true;
			} else if (gpuenv_str_eq_cstr(k, "offset")) {
				soff = v;
			} else if (gpuenv_str_eq_cstr(k, "length")) {
				slen = v;
				has_len = true;
			}
			break;
		}
		case TENSOR_RAW_DATA:
		case TENSOR_FLOAT_DATA:
		case TENSOR_INT32_DATA:
		case TENSOR_STRING_DATA:
		case TENSOR_INT64_DATA:
		case TENSOR_DOUBLE_DATA:
		case TENSOR_UINT64_DATA:
			/* payload as stored: packed or not, skipped by its length */
			bytes += f.len;
			break;
		default:
			break;
		}
	}
	if ((e = wire_end(r, &w, "TensorProto")))
		return e;
	if (initializer)
		r->m->initializer_bytes += bytes;
	if (name)
		*name = tname;
	if (!external)
		return 0;
	if (!has_loc)
		return bad(r, GPUENV_EFORMAT, at, "tensor '" GPUENV_STR_FMT "': data_location is "
			"EXTERNAL and external_data has no location", GPUENV_STR_ARG(tname));
	return ext_add(r, at, tname, loc, soff, slen, has_len);
}

/* SparseTensorProto: values and indices are TensorProtos; its name is the
 * values' name */
static int read_sparse(struct rd *r, onnx_wire_t w, bool initializer, gpuenv_str_t *name)
{
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		if ((f.num != SPARSE_VALUES && f.num != SPARSE_INDICES) || f.wire != ONNX_WIRE_LEN)
			continue;
		if ((e = enter(r, &f, "TensorProto")) ||
			(e = read_tensor(r, onnx_wire_sub(&w, &f), f.tag_off, initializer,
				 f.num == SPARSE_VALUES ? name : NULL)))
			return e;
		r->depth--;
	}
	return wire_end(r, &w, "SparseTensorProto");
}

/* ---- graphs ---------------------------------------------------------------------- */

static int read_graph(struct rd *r, onnx_wire_t w, bool main);

static int count_op(struct rd *r, gpuenv_str_t domain, gpuenv_str_t op, size_t at)
{
	gpuenv_onnx_model_t *m = r->m;
	bool deflt = !domain.len || gpuenv_str_eq_cstr(domain, "ai.onnx");
	bool found;
	void *v;
	int e;

	gpuenv_buf_reset(&r->key);
	if (!deflt && (gpuenv_buf_append(&r->key, domain.ptr, domain.len) || gpuenv_buf_putc(&r->key, '.')))
		return gpuenv_oom(r->ctx, "reading the ONNX model");
	if (gpuenv_buf_append(&r->key, op.ptr ? op.ptr : "", op.len))
		return gpuenv_oom(r->ctx, "reading the ONNX model");
	v = gpuenv_strmap_get(&r->opmap, r->key.data, r->key.len, &found);
	if (found) {
		m->ops[(size_t)(uintptr_t)v - 1].count++;
		return 0;
	}
	if ((e = grow(r, (void **)&m->ops, &r->cap_ops, m->nops, sizeof(*m->ops), GPUENV_ONNX_MAX_OPS,
		     at, "operator types")))
		return e;
	gpuenv_onnx_op_t *o = &m->ops[m->nops];
	o->qualified = gpuenv_arena_str(r->arena, gpuenv_str_n(r->key.data, r->key.len));
	o->domain = deflt ? GPUENV_STR_LIT("ai.onnx") : gpuenv_arena_str(r->arena, domain);
	o->op_type = gpuenv_arena_str(r->arena, op.ptr ? op : GPUENV_STR_LIT(""));
	o->count = 1;
	if (!o->qualified.ptr || !o->domain.ptr || !o->op_type.ptr ||
		gpuenv_strmap_put(&r->opmap, o->qualified.ptr, o->qualified.len,
			(void *)(uintptr_t)(m->nops + 1)))
		return gpuenv_oom(r->ctx, "reading the ONNX model");
	m->nops++;
	return 0;
}

/* AttributeProto: the subgraphs of If / Loop / Scan, and tensors (Constant's
 * value may be external data). */
static int read_attribute(struct rd *r, onnx_wire_t w)
{
	onnx_wire_field_t f;
	int e = 0;

	while (onnx_wire_next(&w, &f)) {
		if (f.wire != ONNX_WIRE_LEN)
			continue;
		switch (f.num) {
		case ATTR_G:
		case ATTR_GRAPHS:
			if ((e = enter(r, &f, "GraphProto")))
				return e;
			r->m->subgraphs++;
			e = read_graph(r, onnx_wire_sub(&w, &f), false);
			break;
		case ATTR_T:
		case ATTR_TENSORS:
			if ((e = enter(r, &f, "TensorProto")))
				return e;
			e = read_tensor(r, onnx_wire_sub(&w, &f), f.tag_off, false, NULL);
			break;
		case ATTR_SPARSE_TENSOR:
		case ATTR_SPARSE_TENSORS:
			if ((e = enter(r, &f, "SparseTensorProto")))
				return e;
			e = read_sparse(r, onnx_wire_sub(&w, &f), false, NULL);
			break;
		default:
			continue;
		}
		if (e)
			return e;
		r->depth--;
	}
	return wire_end(r, &w, "AttributeProto");
}

static int read_node(struct rd *r, onnx_wire_t w, size_t at)
{
	gpuenv_str_t op = GPUENV_STR_NULL, domain = GPUENV_STR_NULL;
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		if (f.wire != ONNX_WIRE_LEN)
			continue;
		if (f.num == NODE_OP_TYPE) {
			op = slice(&w, &f);
		} else if (f.num == NODE_DOMAIN) {
			domain = slice(&w, &f);
		} else if (f.num == NODE_ATTRIBUTE) {
			if ((e = enter(r, &f, "AttributeProto")) ||
				(e = read_attribute(r, onnx_wire_sub(&w, &f))))
				return e;
			r->depth--;
		}
	}
	if ((e = wire_end(r, &w, "NodeProto")))
		return e;
	if (op.len > GPUENV_ONNX_MAX_STRING || domain.len > GPUENV_ONNX_MAX_STRING)
		return bad(r, GPUENV_ETOOBIG, at, "an operator name longer than %d bytes: refused",
			GPUENV_ONNX_MAX_STRING);
	return count_op(r, domain, op, at);
}

static int add_value(struct rd *r, const onnx_wire_t *w, const onnx_wire_field_t *f,
	gpuenv_onnx_value_t **arr, size_t *n, size_t *cap, const char *what)
{
	int e;

	if ((e = grow(r, (void **)arr, cap, *n, sizeof(**arr), GPUENV_ONNX_MAX_VALUES, f->tag_off, what)))
		return e;
	gpuenv_onnx_value_t *v = &(*arr)[*n];
	memset(v, 0, sizeof(*v));
	if ((e = enter(r, f, "ValueInfoProto")) || (e = read_value(r, onnx_wire_sub(w, f), v)))
		return e;
	r->depth--;
	(*n)++;
	return 0;
}

static int read_graph(struct rd *r, onnx_wire_t w, bool main)
{
	gpuenv_onnx_model_t *m = r->m;
	onnx_wire_field_t f;
	int e = 0;

	while (onnx_wire_next(&w, &f)) {
		if (f.wire != ONNX_WIRE_LEN)
			continue;
		if (f.num == GRAPH_NODE) {
			if ((e = enter(r, &f, "NodeProto")) ||
				(e = read_node(r, onnx_wire_sub(&w, &f), f.tag_off)))
				return e;
			r->depth--;
			if (main)
				m->nodes++;
			else
				m->subgraph_nodes++;
			continue;
		}
		if (f.num == GRAPH_INITIALIZER || f.num == GRAPH_SPARSE_INITIALIZER) {
			gpuenv_str_t name = GPUENV_STR_NULL;
			if (main && m->initializers >= GPUENV_ONNX_MAX_INITIALIZERS)
				return bad(r, GPUENV_ETOOBIG, f.tag_off, "more than %u initializers: refused",
					GPUENV_ONNX_MAX_INITIALIZERS);
			if ((e = enter(r, &f, "TensorProto")))
				return e;
			e = f.num == GRAPH_INITIALIZER
				? read_tensor(r, onnx_wire_sub(&w, &f), f.tag_off, main, &name)
				: read_sparse(r, onnx_wire_sub(&w, &f), main, &name);
			if (e)
				return e;
			r->depth--;
			if (!main)
				continue;
			m->initializers++;
			/* names are slices of the file: the map lives while it is mapped */
			if (name.ptr && gpuenv_strmap_put(&r->inits, name.ptr, name.len, (void *)1))
				return gpuenv_oom(r->ctx, "reading the ONNX model");
			continue;
		}
		if (!main)
			continue;
		if (f.num == GRAPH_NAME) {
			if ((e = name_of(r, &w, &f, &m->graph_name)))
				return e;
		} else if (f.num == GRAPH_INPUT) {
			if ((e = add_value(r, &w, &f, &m->inputs, &m->ninputs, &r->cap_inputs, "graph inputs")))
				return e;
		} else if (f.num == GRAPH_OUTPUT) {
			if ((e = add_value(r, &w, &f, &m->outputs, &m->noutputs, &r->cap_outputs,
				     "graph outputs")))
				return e;
		}
	}
	return wire_end(r, &w, "GraphProto");
}

/* ---- the model ------------------------------------------------------------------- */

static int read_opset(struct rd *r, onnx_wire_t w, gpuenv_onnx_opset_t *o)
{
	onnx_wire_field_t f;
	int e;

	o->domain = GPUENV_STR_LIT("ai.onnx");
	while (onnx_wire_next(&w, &f)) {
		if (f.num == OPSET_DOMAIN && f.wire == ONNX_WIRE_LEN) {
			if (!f.len) {
				o->domain = GPUENV_STR_LIT("ai.onnx");
			} else if ((e = name_of(r, &w, &f, &o->domain))) {
				return e;
			}
		} else if (f.num == OPSET_VERSION && f.wire == ONNX_WIRE_VARINT) {
			o->version = (int64_t)f.u;
		}
	}
	if ((e = wire_end(r, &w, "OperatorSetIdProto")))
		return e;
	return own(r, &o->domain);
}

static int read_model(struct rd *r, onnx_wire_t w)
{
	gpuenv_onnx_model_t *m = r->m;
	onnx_wire_field_t f;
	int e;

	while (onnx_wire_next(&w, &f)) {
		switch (f.num) {
		case MODEL_IR_VERSION:
			if (f.wire == ONNX_WIRE_VARINT)
				m->ir_version = (int64_t)f.u;
			break;
		case MODEL_MODEL_VERSION:
			if (f.wire == ONNX_WIRE_VARINT)
				m->model_version = (int64_t)f.u;
			break;
		case MODEL_PRODUCER_NAME:
			if (f.wire == ONNX_WIRE_LEN && (e = name_of(r, &w, &f, &m->producer_name)))
				return e;
			break;
		case MODEL_PRODUCER_VERSION:
			if (f.wire == ONNX_WIRE_LEN && (e = name_of(r, &w, &f, &m->producer_version)))
				return e;
			break;
		case MODEL_DOMAIN:
			if (f.wire == ONNX_WIRE_LEN && (e = name_of(r, &w, &f, &m->domain)))
				return e;
			break;
		case MODEL_OPSET_IMPORT:
			if (f.wire != ONNX_WIRE_LEN)
				break;
			if ((e = grow(r, (void **)&m->opsets, &r->cap_opsets, m->nopsets, sizeof(*m->opsets),
				     GPUENV_ONNX_MAX_OPSETS, f.tag_off, "opset imports")))
				return e;
			memset(&m->opsets[m->nopsets], 0, sizeof(*m->opsets));
			if ((e = enter(r, &f, "OperatorSetIdProto")) ||
				(e = read_opset(r, onnx_wire_sub(&w, &f), &m->opsets[m->nopsets])))
				return e;
			r->depth--;
			m->nopsets++;
			break;
		case MODEL_GRAPH:
			if (f.wire != ONNX_WIRE_LEN)
				break;
			m->has_graph = true;
			if ((e = enter(r, &f, "GraphProto")) || (e = read_graph(r, onnx_wire_sub(&w, &f), true)))
				return e;
			r->depth--;
			break;
		case MODEL_FUNCTIONS:
			if (f.wire == ONNX_WIRE_LEN)
				m->functions++;
			break;
		default:
			break;
		}
	}
	return wire_end(r, &w, "ModelProto");
}

static int cmp_op(const void *a, const void *b)
{
	const gpuenv_onnx_op_t *x = a, *y = b;
	return gpuenv_str_cmp(x->qualified, y->qualified);
}

/* Graph inputs that are initializers (IR < 4 lists them there) left out. */
static void drop_initializer_inputs(struct rd *r)
{
	gpuenv_onnx_model_t *m = r->m;
	size_t n = 0;

	for (size_t i = 0; i < m->ninputs; i++) {
		bool found;
		gpuenv_strmap_get(&r->inits, m->inputs[i].name.ptr, m->inputs[i].name.len, &found);
		if (!found)
			m->inputs[n++] = m->inputs[i];
	}
	m->ninputs = n;
}

int gpuenv_onnx_inspect_mem(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const void *data, size_t size,
	const char *name, const char *dir, gpuenv_onnx_model_t *out)
{
	struct rd r = { .ctx = ctx, .arena = arena, .name = name ? name : "<model>", .dir = dir, .m = out };
	onnx_wire_t w;
	int e;

	memset(out, 0, sizeof(*out));
	out->path = r.name;
	out->file_size = size;
	out->producer_name = out->producer_version = out->domain = out->graph_name = GPUENV_STR_LIT("");
	r.inits.ctx = r.opmap.ctx = r.extmap.ctx = ctx;
	gpuenv_buf_init(&r.key, ctx, 2 * GPUENV_ONNX_MAX_STRING + 2);
	if (gpuenv_buf_reserve(&r.key, 64))
		return gpuenv_oom(ctx, "reading the ONNX model");
	if (!size) {
		e = bad(&r, GPUENV_EFORMAT, 0, "empty file, not an ONNX model");
		goto out;
	}
	onnx_wire_init(&w, data, size);
	e = read_model(&r, w);
	if (!e && !out->has_graph) {
		e = bad(&r, GPUENV_EFORMAT, 0, "no graph (ModelProto field 7): not an ONNX model");
		gpuenv_hint(ctx, "gpuenv trt inspect reads ONNX models (.onnx) as torch.onnx.export writes them");
	}
	/* the model's own strings: slices of the file until now */
	if (!e && !(e = own(&r, &out->producer_name)) && !(e = own(&r, &out->producer_version)) &&
		!(e = own(&r, &out->domain)))
		e = own(&r, &out->graph_name);
	if (!e) {
		drop_initializer_inputs(&r);
		if (out->nops)
			qsort(out->ops, out->nops, sizeof(*out->ops), cmp_op);
	}
out:
	gpuenv_strmap_free(&r.inits);
	gpuenv_strmap_free(&r.opmap);
	gpuenv_strmap_free(&r.extmap);
	gpuenv_buf_free(&r.key);
	return e;
}

int gpuenv_onnx_inspect(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_onnx_model_t *out)
{
	struct stat st;
	const char *slash = strrchr(path, '/');
	char *dir;
	void *map;
	int fd, e;

	memset(out, 0, sizeof(*out));
	fd = gpuenv_fs_open_regular(ctx, AT_FDCWD, path, &st);
	if (fd < 0)
		return fd;
	if (st.st_size == 0) { /* mmap cannot map it; the reader says what it is */
		close(fd);
		return gpuenv_onnx_inspect_mem(ctx, arena, "", 0, path, NULL, out);
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0, "too large to map");
	}
	/* mapped, not read: payloads are skipped by their lengths, so only
	 * the pages holding the graph's structure are ever touched */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	e = errno;
	close(fd);
	if (map == MAP_FAILED)
		return gpuenv_fail(ctx, -e, path, 0, 0, "cannot map the file: %s", strerror(e));
	dir = slash ? gpuenv_arena_strndup(arena, path, slash == path ? 1 : (size_t)(slash - path))
		    : gpuenv_arena_strndup(arena, ".", 1);
	if (!dir) {
		munmap(map, (size_t)st.st_size);
		return gpuenv_oom(ctx, "reading the ONNX model");
	}
	e = gpuenv_onnx_inspect_mem(ctx, arena, map, (size_t)st.st_size, path, dir, out);
	munmap(map, (size_t)st.st_size);
	return e;
}
