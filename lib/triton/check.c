/* A Triton model repository checked as the server checks it at load time
 * (gpuenv/triton.h).  The rules follow Triton's documentation (the model
 * repository layout, the model configuration) and what its backends check
 * when a model loads: the ONNX Runtime backend compares the configuration's
 * inputs and outputs with the model's (names, data types, and dims through
 * backend_common's CompareDimsSupported: with max_batch_size > 0 the model's
 * first dimension must be variable, and every fixed dimension of the model
 * must equal the configuration's).  The texts say what Triton would do and
 * the fix; docs/triton.md lists every check with its source. */
#include "gpuenv/triton.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/doctor.h"
#include "gpuenv/facts.h"
#include "gpuenv/fs.h"
#include "gpuenv/kb.h"
#include "gpuenv/onnx.h"
#include "gpuenv/pbtxt.h"
#include "gpuenv/trt.h"

#define CONFIG "config.pbtxt"

struct cfg {
	const char *name;		 /* the model's folder */
	const gpuenv_pbtxt_msg_t *m; /* NULL: no config, or it did not parse */
	const char *path;
};

struct chk {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	const char *repo;
	const gpuenv_triton_opts_t *o;
	gpuenv_triton_finding_t *f;
	size_t nf, capf;
	struct cfg *cfgs; /* every model's config, for ensembles */
	size_t ncfgs;
	gpuenv_triton_model_t *cur; /* NULL: findings about the repository */
	int oom;
	/* the image and the node, for TensorRT plans (check_plan) */
	const gpuenv_kb_t *kb;
	const char *image_trt; /* the image's TensorRT by its KB row; NULL unknown */
	bool image_known;      /* the KB has a row for opts->image */
	const gpuenv_target_t *node; /* opts->facts as a target; NULL without facts */
};


static void note(struct chk *c, gpuenv_triton_severity_t sev, const char *id, const char *file,
	const gpuenv_pbtxt_field_t *at, const char *fix, const char *fmt, ...) GPUENV_PRINTF(7, 8);

static void note(struct chk *c, gpuenv_triton_severity_t sev, const char *id, const char *file,
	const gpuenv_pbtxt_field_t *at, const char *fix, const char *fmt, ...)
{
	va_list ap;
	gpuenv_triton_finding_t *x;

	if (c->oom)
		return;
	if (gpuenv_array_grow(c->ctx, NULL, &c->f, &c->capf, c->nf + 1, sizeof(*c->f), SIZE_MAX,
		    "checking a Triton model repository")) {
		c->oom = c->ctx->err.code;
		return;
	}
	x = &c->f[c->nf];
	memset(x, 0, sizeof *x);
	va_start(ap, fmt);
	gpuenv_str_t msg = gpuenv_arena_vprintf(c->a, fmt, ap);
	va_end(ap);
	if (!msg.ptr) {
		c->oom = gpuenv_oom(c->ctx, "checking a Triton model repository");
		return;
	}
	x->model = c->cur ? c->cur->name : NULL;
	x->id = id;
	x->severity = sev;
	x->file = file;
	if (at) {
		x->line = at->line;
		x->col = at->col;
	}
	x->message = msg.ptr;
	x->fix = fix;
	if (sev == GPUENV_TRITON_ERROR && c->cur)
		c->cur->loads = false;
	c->nf++;
}

/* printf into the arena; "" when memory ran out (note() then stops). */
static const char *fmt(struct chk *c, const char *f, ...) GPUENV_PRINTF(2, 3);

static const char *fmt(struct chk *c, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	gpuenv_str_t s = gpuenv_arena_vprintf(c->a, f, ap);
	va_end(ap);
	if (!s.ptr) {
		if (!c->oom)
			c->oom = gpuenv_oom(c->ctx, "checking a Triton model repository");
		return "";
	}
	return s.ptr;
}

/* r, a library call's result about file: 0 is false; -ENOMEM stops the
 * check; any other error becomes a finding, what + its message (ctx->err
 * cleared).  True when r is an error. */
static bool call_failed(struct chk *c, int r, gpuenv_triton_severity_t sev, const char *id, const char *file,
	const char *fix, const char *what)
{
	char e[600];

	if (!r)
		return false;
	if (r == -ENOMEM) {
		c->oom = r;
		return true;
	}
	gpuenv_error_format(&c->ctx->err, e, sizeof e);
	gpuenv_error_clear(c->ctx);
	note(c, sev, id, file, NULL, fix, "%s%s", what, e);
	return true;
}

static const char *join(struct chk *c, const char *dir, const char *name)
{
	return fmt(c, "%s/%s", dir, name);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The folders of dir (hidden ones left out), sorted; -errno when dir cannot
 * be listed. */
static int list_dirs(struct chk *c, const char *dir, const char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	const char **v = NULL;
	size_t k = 0, cap = 0;
	struct dirent *e;

	*out = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		const char *p = join(c, dir, e->d_name);
		if (c->oom)
			break;
		if (!is_dir(p))
			continue;
		if (gpuenv_array_grow(c->ctx, c->a, &v, &cap, k + 1, sizeof(*v), SIZE_MAX,
			    "listing a Triton model repository")) {
			c->oom = c->ctx->err.code;
			break;
		}
		v[k] = gpuenv_arena_strndup(c->a, e->d_name, strlen(e->d_name));
		if (!v[k]) {
			c->oom = gpuenv_oom(c->ctx, "listing a Triton model repository");
			break;
		}
		k++;
	}
	closedir(d);
	if (c->oom)
		return c->oom;
	if (k)
		qsort(v, k, sizeof *v, cmp_str);
	*out = v;
	*n = k;
	return 0;
}

/* ---- the backend --------------------------------------------------------- */

static const struct platform {
	const char *platform, *backend, *file;
} PLATFORMS[] = {
	{ "tensorrt_plan", "tensorrt", "model.plan" },
	{ "onnxruntime_onnx", "onnxruntime", "model.onnx" },
	{ "pytorch_libtorch", "pytorch", "model.pt" },
	{ "tensorflow_savedmodel", "tensorflow", "model.savedmodel" },
	{ "tensorflow_graphdef", "tensorflow", "model.graphdef" },
	{ "ensemble", "ensemble", NULL },
};

/* The default model file of a backend (the platform's when one is given). */
static const struct backend {
	const char *backend, *file;
} BACKENDS[] = {
	{ "tensorrt", "model.plan" },
	{ "onnxruntime", "model.onnx" },
	{ "pytorch", "model.pt" },
	{ "tensorflow", "model.savedmodel" },
	{ "python", "model.py" },
	{ "openvino", "model.xml" },
	{ "fil", "xgboost.model" },
	{ "dali", "model.dali" },
	{ "identity", NULL },
	{ "repeat", NULL },
	{ "square", NULL },
	{ "ensemble", NULL },
};

static const struct platform *platform_of(const char *p)
{
	for (size_t i = 0; i < sizeof PLATFORMS / sizeof *PLATFORMS; i++)
		if (!strcmp(PLATFORMS[i].platform, p))
			return &PLATFORMS[i];
	return NULL;
}

static const struct backend *backend_of(const char *b)
{
	for (size_t i = 0; i < sizeof BACKENDS / sizeof *BACKENDS; i++)
		if (!strcmp(BACKENDS[i].backend, b))
			return &BACKENDS[i];
	return NULL;
}

/* The string value of field name in m, NULL when absent or not a string. */
static const char *str_field(const gpuenv_pbtxt_msg_t *m, const char *name, const gpuenv_pbtxt_field_t **at)
{
	const gpuenv_pbtxt_field_t *f = gpuenv_pbtxt_find(m, name, NULL);
	if (at)
		*at = f;
	return f && f->kind == GPUENV_PBTXT_STRING ? f->value : NULL;
}

/* An integer field; def when absent; a finding (and def) when not one. */
static long long int_field(struct chk *c, const char *file, const gpuenv_pbtxt_field_t *f, long long def)
{
	int64_t v;
	if (!f)
		return def;
	if (gpuenv_pbtxt_int(c->ctx, file, f, &v)) {
		note(c, GPUENV_TRITON_ERROR, "config-type", file, f, "write an integer",
			"%s: expected an integer, found '%s'", f->name, f->value ? f->value : "{ ... }");
		gpuenv_error_clear(c->ctx);
		return def;
	}
	return v;
}

/* ---- data types ------------------------------------------------------------ */

static const struct dtype {
	const char *config;
	int onnx;
} DTYPES[] = {
	{ "TYPE_BOOL", GPUENV_ONNX_BOOL },     { "TYPE_UINT8", GPUENV_ONNX_UINT8 },
	{ "TYPE_UINT16", GPUENV_ONNX_UINT16 }, { "TYPE_UINT32", GPUENV_ONNX_UINT32 },
	{ "TYPE_UINT64", GPUENV_ONNX_UINT64 }, { "TYPE_INT8", GPUENV_ONNX_INT8 },
	{ "TYPE_INT16", GPUENV_ONNX_INT16 },   { "TYPE_INT32", GPUENV_ONNX_INT32 },
	{ "TYPE_INT64", GPUENV_ONNX_INT64 },   { "TYPE_FP16", GPUENV_ONNX_FLOAT16 },
	{ "TYPE_FP32", GPUENV_ONNX_FLOAT },    { "TYPE_FP64", GPUENV_ONNX_DOUBLE },
	{ "TYPE_STRING", GPUENV_ONNX_STRING }, { "TYPE_BF16", GPUENV_ONNX_BFLOAT16 },
};

static const struct dtype *dtype_of_config(const char *s)
{
	for (size_t i = 0; i < sizeof DTYPES / sizeof *DTYPES; i++)
		if (!strcmp(DTYPES[i].config, s))
			return &DTYPES[i];
	return NULL;
}

static const char *config_type_of_onnx(int t)
{
	for (size_t i = 0; i < sizeof DTYPES / sizeof *DTYPES; i++)
		if (DTYPES[i].onnx == t)
			return DTYPES[i].config;
	return NULL;
}

/* ---- shapes ---------------------------------------------------------------- */

/* The model's shape as Triton's ONNX Runtime backend sees it: -1 for a
 * symbolic or unknown dimension. */
static void model_dims(const gpuenv_onnx_value_t *v, long long *d, size_t cap, size_t *n)
{
	*n = v->ndims < cap ? v->ndims : cap;
	for (size_t i = 0; i < *n; i++)
		d[i] = v->dims[i].kind == GPUENV_ONNX_DIM_FIXED && v->dims[i].value > 0 ? v->dims[i].value : -1;
}

static const char *shape_text(struct chk *c, const long long *d, size_t n)
{
	gpuenv_buf_t b;
	const char *s;

	gpuenv_buf_init(&b, c->ctx, 4096);
	gpuenv_buf_putc(&b, '[');
	for (size_t i = 0; i < n; i++)
		gpuenv_buf_printf(&b, "%s%lld", i ? "," : "", d[i]);
	gpuenv_buf_putc(&b, ']');
	s = fmt(c, "%.*s", (int)b.len, b.data ? b.data : "");
	gpuenv_buf_free(&b);
	return s;
}

#define MAX_DIMS 64

/* The dims (or reshape shape) of a config tensor: n < 0 when absent. */
static int cfg_dims(struct chk *c, const char *file, const gpuenv_pbtxt_msg_t *t, const char *name, long long *d,
	const gpuenv_pbtxt_field_t **at)
{
	size_t n;
	const gpuenv_pbtxt_field_t *f = gpuenv_pbtxt_find(t, name, &n);
	*at = f;
	if (!f)
		return -1;
	if (n > MAX_DIMS)
		n = MAX_DIMS;
	for (size_t i = 0; i < n; i++)
		d[i] = int_field(c, file, gpuenv_pbtxt_nth(t, name, i), -1);
	return (int)n;
}

/* ---- inputs and outputs against an ONNX model ------------------------------ */

static const gpuenv_onnx_value_t *find_value(const gpuenv_onnx_value_t *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].name.len == strlen(name) && !memcmp(v[i].name.ptr, name, v[i].name.len))
			return &v[i];
	return NULL;
}

static const char *names_of(struct chk *c, const gpuenv_onnx_value_t *v, size_t n)
{
	gpuenv_buf_t b;
	const char *s;

	gpuenv_buf_init(&b, c->ctx, 4096);
	for (size_t i = 0; i < n && i < 16; i++)
		gpuenv_buf_printf(&b, "%s%.*s", i ? ", " : "", (int)v[i].name.len, v[i].name.ptr);
	if (n > 16)
		gpuenv_buf_printf(&b, ", and %zu more", n - 16);
	s = fmt(c, "%.*s", (int)b.len, b.data ? b.data : "");
	gpuenv_buf_free(&b);
	return s;
}

static void check_tensor(struct chk *c, const char *file, const char *what, const gpuenv_pbtxt_field_t *tf,
	long long mbs, const gpuenv_onnx_value_t *mv, size_t nmv, const char *onnx_path)
{
	const gpuenv_pbtxt_msg_t *t = tf->msg;
	const gpuenv_pbtxt_field_t *at;
	const char *name = str_field(t, "name", &at);

	if (!name) {
		note(c, GPUENV_TRITON_ERROR, "tensor-name", file, tf, fmt(c, "give each %s a name: \"...\"", what),
			"an %s without a name", what);
		return;
	}
	const gpuenv_pbtxt_field_t *dtf;
	const char *dt = NULL;
	dtf = gpuenv_pbtxt_find(t, "data_type", NULL);
	if (!dtf)
		note(c, GPUENV_TRITON_ERROR, "tensor-type", file, tf, "add data_type: TYPE_FP32 (or the model's type)",
			"%s '%s' has no data_type", what, name);
	else if (dtf->kind != GPUENV_PBTXT_IDENT || !dtype_of_config(dtf->value))
		note(c, GPUENV_TRITON_ERROR, "tensor-type", file, dtf,
			"data types: TYPE_BOOL, TYPE_UINT8..TYPE_UINT64, TYPE_INT8..TYPE_INT64, TYPE_FP16, TYPE_FP32, "
			"TYPE_FP64, TYPE_BF16, TYPE_STRING",
			"%s '%s': '%s' is not a data type", what, name, dtf->value ? dtf->value : "{ ... }");
	else
		dt = dtf->value;

	long long dims[MAX_DIMS], rs[MAX_DIMS];
	const gpuenv_pbtxt_field_t *dat, *rat = NULL;
	int nd = cfg_dims(c, file, t, "dims", dims, &dat);
	const gpuenv_pbtxt_field_t *reshape = gpuenv_pbtxt_find(t, "reshape", NULL);
	int nr = -1;
	if (reshape && reshape->kind == GPUENV_PBTXT_MESSAGE) {
		nr = cfg_dims(c, file, reshape->msg, "shape", rs, &rat);
		if (nr < 0)
			nr = 0; /* reshape: { shape: [ ] }: a scalar */
	}
	if (nd < 0)
		note(c, GPUENV_TRITON_ERROR, "tensor-dims", file, tf,
			"add dims: [ ... ] (without the batch dimension when max_batch_size > 0; -1 for a variable one)",
			"%s '%s' has no dims", what, name);
	for (int i = 0; i < nd; i++)
		if (dims[i] == 0 || dims[i] < -1)
			note(c, GPUENV_TRITON_ERROR, "tensor-dims", file, gpuenv_pbtxt_nth(t, "dims", (size_t)i),
				"a dimension is a positive size or -1 (variable)", "%s '%s': dimension %lld", what, name,
				dims[i]);

	if (!mv)
		return;
	const gpuenv_onnx_value_t *v = find_value(mv, nmv, name);
	if (!v) {
		const char *allowed = names_of(c, mv, nmv);
		note(c, GPUENV_TRITON_ERROR, !strcmp(what, "input") ? "input-name" : "output-name", file, at,
			fmt(c, "name the %s as the model does (%s); `gpuenv trt inspect %s` lists them", what, allowed,
				onnx_path),
			"unexpected inference %s '%s', allowed %ss are: %s (Triton refuses the model)", what, name, what,
			allowed);
		return;
	}
	if (dt && v->dtype) {
		const char *want = config_type_of_onnx(v->dtype);
		if (want && strcmp(want, dt))
			note(c, GPUENV_TRITON_ERROR, "tensor-type", file, dtf,
				fmt(c, "data_type: %s (the model's %s)", want, gpuenv_onnx_dtype_name(v->dtype)),
				"unexpected datatype %s for %s '%s', expecting %s: the model's %s is %s", dt, what, name,
				want, what, gpuenv_onnx_dtype_name(v->dtype));
		else if (!want)
			note(c, GPUENV_TRITON_ERROR, "tensor-type", file, dtf, NULL,
				"%s '%s': the model's element type %s has no Triton data type", what, name,
				gpuenv_onnx_dtype_name(v->dtype) ? gpuenv_onnx_dtype_name(v->dtype) : "(unknown)");
	}
	if (!v->has_shape || nd < 0)
		return;
	long long md[MAX_DIMS];
	size_t nmd;
	model_dims(v, md, MAX_DIMS, &nmd);
	if (mbs > 0 && (nmd == 0 || md[0] != -1)) {
		note(c, GPUENV_TRITON_ERROR, "batch-dim-fixed", file, tf,
			fmt(c, "export the model with a dynamic first dimension (torch.onnx.export(..., dynamic_axes={'%s': "
				"{0: 'batch'}}) or dynamic_shapes=), or set max_batch_size: 0 and list the full shape in dims",
				name),
			"%s '%s': for the model to support batching (max_batch_size %lld) its first dimension must be "
			"variable, but the model's shape is %s",
			what, name, mbs, shape_text(c, md, nmd));
		return;
	}
	/* the full shape Triton expects the model to take */
	long long full[MAX_DIMS + 1];
	size_t nfull = 0;
	const long long *cd = nr >= 0 ? rs : dims;
	int ncd = nr >= 0 ? nr : nd;
	if (mbs > 0)
		full[nfull++] = -1;
	for (int i = 0; i < ncd && nfull < MAX_DIMS + 1; i++)
		full[nfull++] = cd[i];
	bool ok = nfull == nmd;
	for (size_t i = 0; ok && i < nfull; i++)
		if (md[i] != -1 && md[i] != full[i])
			ok = false;
	if (!ok)
		note(c, GPUENV_TRITON_ERROR, "tensor-dims", file, nr >= 0 ? (rat ? rat : reshape) : dat,
			fmt(c, "dims: %s%s (the model's shape%s; -1 where the model's is variable)",
				shape_text(c, md + (mbs > 0), nmd - (mbs > 0 && nmd)), nr >= 0 ? " in reshape" : "",
				mbs > 0 ? " without its batch dimension" : ""),
			"%s '%s': the model expects %zu dimensions (shape %s) but the configuration gives %zu (%s%s)", what,
			name, nmd, shape_text(c, md, nmd), nfull, mbs > 0 ? "the batch dimension, then " : "",
			shape_text(c, cd, (size_t)(ncd > 0 ? ncd : 0)));
}

/* Inputs the model has and the configuration leaves out. */
static void check_missing(struct chk *c, const char *file, const gpuenv_pbtxt_msg_t *m, const gpuenv_onnx_value_t *mv,
	size_t nmv, const char *onnx_path)
{
	size_t n;
	gpuenv_pbtxt_find(m, "input", &n);
	for (size_t i = 0; i < nmv; i++) {
		bool found = false;
		for (size_t k = 0; k < n && !found; k++) {
			const char *nm = str_field(gpuenv_pbtxt_nth(m, "input", k)->msg, "name", NULL);
			found = nm && mv[i].name.len == strlen(nm) && !memcmp(nm, mv[i].name.ptr, mv[i].name.len);
		}
		if (!found && n)
			note(c, GPUENV_TRITON_ERROR, "input-missing", file, NULL,
				fmt(c, "add an input { name: \"%.*s\" ... } (`gpuenv trt inspect %s` shows its type and shape)",
					(int)mv[i].name.len, mv[i].name.ptr, onnx_path),
				"the model's input '%.*s' is not in the configuration: the configuration expects %zu inputs, "
				"the model takes %zu",
				(int)mv[i].name.len, mv[i].name.ptr, n, nmv);
	}
}

/* ---- versions --------------------------------------------------------------- */

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* The numeric version folders of dir, ascending. */
static size_t versions_of(struct chk *c, const char *dir, long long *v, size_t cap, size_t *others)
{
	const char **names;
	size_t n, k = 0;

	*others = 0;
	if (list_dirs(c, dir, &names, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char *end;
		const char *s = names[i];
		errno = 0;
		long long x = strtoll(s, &end, 10);
		if (*s < '0' || *s > '9' || *end || errno)
			(*others)++;
		else if (k < cap)
			v[k++] = x;
	}
	qsort(v, k, sizeof *v, cmp_ll);
	return k;
}

#define MAX_VERSIONS 256

/* ---- TensorRT plans: the engine's record against the image and the node ------- */

#define TRITONSERVER "nvcr.io/nvidia/tritonserver"
#define MAX_TAGS 3

/* The tritonserver tags of the KB whose TensorRT loads the engine of r,
 * newest first, at most MAX_TAGS ("nvcr.io/nvidia/tritonserver:24.05-
 * trtllm-python-py3, ..."); NULL when none. */
static const char *matching_tags(struct chk *c, const gpuenv_trt_record_t *r)
{
	const gpuenv_kb_container_t *best[MAX_TAGS] = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < c->kb->n_container; i++) {
		const gpuenv_kb_container_t *k = &c->kb->container[i];
		if (!gpuenv_str_eq_cstr(k->image, TRITONSERVER) || !k->tensorrt.n ||
			!gpuenv_trt_runtime_loads(c->kb, r, fmt(c, "%.*s", GPUENV_STR_ARG(k->tensorrt.str))))
			continue;
		/* insert by release, newest first */
		size_t at = n < MAX_TAGS ? n : MAX_TAGS;
		while (at > 0 && gpuenv_kb_ver_cmp(&k->release, &best[at - 1]->release) > 0)
			at--;
		if (at == MAX_TAGS)
			continue;
		memmove(&best[at + 1], &best[at], (MAX_TAGS - 1 - at) * sizeof *best);
		best[at] = k;
		n += n < MAX_TAGS;
	}
	if (!n)
		return NULL;
	const char *out = "";
	for (size_t i = 0; i < n; i++)
		out = fmt(c, "%s%s" TRITONSERVER ":%.*s", out, i ? ", " : "", GPUENV_STR_ARG(best[i]->tag));
	return out;
}

/* A plan model's engine file: its record (PLAN.gpuenv.json, gpuenv trt
 * build) judged by lib/trt's rule with the image's TensorRT as the runtime
 * and the node's GPUs.  Nothing to judge against: no finding. */
static void check_plan(struct chk *c, const char *plan)
{
	const gpuenv_triton_opts_t *o = c->o;
	const char *rpath = fmt(c, "%s.gpuenv.json", plan);
	gpuenv_trt_record_t rec;
	gpuenv_trt_verdict_t v;
	gpuenv_buf_t b;
	int r;

	if (!o->image && !c->node)
		return;
	if (c->oom)
		return;
	if (!exists(rpath)) {
		note(c, GPUENV_TRITON_INFO, "plan-record", plan, NULL, NULL,
			"no engine record (%s): the TensorRT release and GPU that built this plan are unknown, so it "
			"is not checked against %s%s%s; `gpuenv trt build` writes the record, and trtexec "
			"--loadEngine=%s --getPlanVersionOnly (TensorRT 10+) prints the plan's TensorRT",
			rpath, o->image ? o->image : "", o->image && c->node ? " and " : "",
			c->node ? "the node's GPUs" : "", plan);
		return;
	}
	gpuenv_buf_init(&b, c->ctx, GPUENV_TRT_RECORD_MAX);
	r = gpuenv_fs_read(c->ctx, rpath, GPUENV_TRT_RECORD_MAX, &b);
	if (!r)
		r = gpuenv_trt_record_parse(c->ctx, c->a, b.data ? b.data : "", b.len, rpath, &rec);
	gpuenv_buf_free(&b);
	if (call_failed(c, r, GPUENV_TRITON_WARNING, "plan-record", rpath,
		    "write the record again with `gpuenv trt build`, or remove it",
		    "the engine record cannot be read, so the plan is not checked: "))
		return;
	/* the image's TensorRT as the runtime (none given: only the GPUs count) */
	r = gpuenv_trt_check_runtime(c->ctx, c->a, c->kb, &rec, c->image_trt, o->image ? o->image : "the server image",
		c->node, &v);
	if (call_failed(c, r, GPUENV_TRITON_WARNING, "plan-record", rpath,
		    "write the record again with `gpuenv trt build`", ""))
		return;
	if (o->image && c->image_known && !c->image_trt)
		note(c, GPUENV_TRITON_INFO, "plan-tensorrt", plan, NULL, NULL,
			"the plan was built with TensorRT %s; the knowledge base has no TensorRT release for %s (its "
			"release notes as stored do not say), so whether the image loads it is unknown",
			rec.tensorrt, o->image);
	else if (o->image && c->image_trt && !v.tensorrt_ok) {
		const char *tags = matching_tags(c, &rec);
		note(c, GPUENV_TRITON_ERROR, "plan-tensorrt", plan, NULL,
			fmt(c, "rebuild the engine with TensorRT %s (gpuenv trt build with that release, or trtexec inside "
			       "%s)%s%s%s",
				c->image_trt, o->image, tags ? ", or serve it with an image whose TensorRT built it: " : "",
				tags ? tags : "",
				tags ? "" : fmt(c, "; no tritonserver image the knowledge base knows carries TensorRT %s",
						    rec.tensorrt)),
			"the plan was built with TensorRT %s%s (its record %s) and %s carries TensorRT %s: Triton's "
			"TensorRT backend cannot deserialize an engine of another TensorRT release, so the model fails "
			"to load",
			rec.tensorrt, rec.version_compatible ? " (version-compatible)" : "", rpath, o->image, c->image_trt);
	}
	/* the node's GPUs: lib/trt's reasons, in its words */
	for (size_t i = v.gpu_reasons; c->node && i < v.nreasons; i++) {
		const gpuenv_trt_note_t *n = &v.reasons[i];
		if (n->kind != GPUENV_TRT_NOTE_WARN)
			continue;
		note(c, n->blocks ? GPUENV_TRITON_ERROR : GPUENV_TRITON_WARNING, n->blocks ? "plan-gpu" : "plan-precision",
			plan, NULL,
			n->blocks ? "rebuild the engine on a GPU of the node's kind (gpuenv trt build there), or with "
				    "hardware compatibility (gpuenv trt optimize --portable-gpus)"
				  : "build the engine in a precision the node's GPUs run fast",
			"%s%s", n->text,
			n->blocks ? " (Triton's TensorRT backend fails to load the model on that GPU)" : "");
	}
}

/* ---- one model -------------------------------------------------------------- */

static void check_ensemble(struct chk *c, const char *file, const gpuenv_pbtxt_msg_t *m);

static void check_model(struct chk *c, struct cfg *cf)
{
	gpuenv_triton_model_t *mo = c->cur;
	const char *dir = join(c, c->repo, cf->name);
	const char *file = cf->path;
	const gpuenv_pbtxt_msg_t *m = cf->m;
	long long vers[MAX_VERSIONS];
	size_t others, nv = versions_of(c, dir, vers, MAX_VERSIONS, &others);

	mo->nversions = nv;
	mo->max_batch_size = -1;
	if (!m)
		return; /* no config, or one that did not parse: said already */

	/* name */
	const gpuenv_pbtxt_field_t *at;
	const char *name = str_field(m, "name", &at);
	if (name && strcmp(name, cf->name))
		note(c, GPUENV_TRITON_ERROR, "config-name", file, at,
			fmt(c, "name: \"%s\", or rename the folder to %s", cf->name, name),
			"the configuration names the model '%s' but its folder is '%s' (Triton refuses the mismatch)", name,
			cf->name);

	/* platform and backend */
	const gpuenv_pbtxt_field_t *pat, *bat;
	const char *platform = str_field(m, "platform", &pat), *backend = str_field(m, "backend", &bat);
	const struct platform *pl = platform ? platform_of(platform) : NULL;
	mo->platform = platform;
	if (platform && !pl)
		note(c, GPUENV_TRITON_ERROR, "platform", file, pat,
			"platforms: tensorrt_plan, onnxruntime_onnx, pytorch_libtorch, tensorflow_savedmodel, "
			"tensorflow_graphdef, ensemble; other backends are named with backend: \"...\"",
			"'%s' is not a platform Triton knows", platform);
	if (pl && backend && strcmp(pl->backend, backend))
		note(c, GPUENV_TRITON_ERROR, "platform-backend", file, bat,
			fmt(c, "keep one of them: platform \"%s\" is backend \"%s\"", platform, pl->backend),
			"platform '%s' and backend '%s' disagree", platform, backend);
	const char *eff = backend ? backend : pl ? pl->backend : NULL;
	const char *deffile = pl ? pl->file : NULL;
	if (!deffile && eff && backend_of(eff))
		deffile = backend_of(eff)->file;
	if (backend && !backend_of(backend))
		note(c, GPUENV_TRITON_WARNING, "backend-custom", file, bat,
			fmt(c, "make sure the server has /opt/tritonserver/backends/%s/libtriton_%s.so", backend, backend),
			"backend '%s' is not one Triton's images ship: it must be installed in the server's backends folder",
			backend);
	bool ensemble = eff && !strcmp(eff, "ensemble");

	/* the default model file name */
	const gpuenv_pbtxt_field_t *dfat;
	const char *dmf = str_field(m, "default_model_filename", &dfat);
	if (dmf)
		deffile = dmf;

	/* versions */
	if (!nv)
		note(c, GPUENV_TRITON_ERROR, "no-version", dir, NULL,
			fmt(c, "put the model in a numeric version folder: %s/1/%s", dir,
				deffile ? deffile : ensemble ? "(an empty folder for an ensemble)" : "model.<ext>"),
			"no numeric version folder: Triton finds no version of '%s' to load%s", cf->name,
			others ? " (folders whose names are not numbers are ignored)" : "");
	long long served[MAX_VERSIONS];
	size_t ns = 0;
	const gpuenv_pbtxt_field_t *vp = gpuenv_pbtxt_find(m, "version_policy", NULL);
	const gpuenv_pbtxt_field_t *lat = NULL, *spec = NULL, *all = NULL;
	if (vp && vp->kind == GPUENV_PBTXT_MESSAGE) {
		lat = gpuenv_pbtxt_find(vp->msg, "latest", NULL);
		spec = gpuenv_pbtxt_find(vp->msg, "specific", NULL);
		all = gpuenv_pbtxt_find(vp->msg, "all", NULL);
	}
	if (spec && spec->kind == GPUENV_PBTXT_MESSAGE) {
		size_t k;
		gpuenv_pbtxt_find(spec->msg, "versions", &k);
		for (size_t i = 0; i < k; i++) {
			const gpuenv_pbtxt_field_t *vf = gpuenv_pbtxt_nth(spec->msg, "versions", i);
			long long want = int_field(c, file, vf, -1);
			bool have = false;
			for (size_t j = 0; j < nv; j++)
				have |= vers[j] == want;
			if (!have)
				note(c, GPUENV_TRITON_ERROR, "version-missing", file, vf,
					fmt(c, "add the folder %s/%lld or remove %lld from version_policy", dir, want, want),
					"version_policy asks for version %lld, which has no folder", want);
			else if (ns < MAX_VERSIONS)
				served[ns++] = want;
		}
	} else if (all) {
		memcpy(served, vers, nv * sizeof *vers);
		ns = nv;
	} else {
		long long keep = 1;
		if (lat && lat->kind == GPUENV_PBTXT_MESSAGE)
			keep = int_field(c, file, gpuenv_pbtxt_find(lat->msg, "num_versions", NULL), 1);
		if (keep < 1) {
			note(c, GPUENV_TRITON_ERROR, "version-policy", file, lat, "num_versions: 1 or more",
				"version_policy latest num_versions %lld serves nothing", keep);
			keep = 1;
		}
		for (size_t j = nv; j > 0 && ns < (size_t)keep; j--)
			served[ns++] = vers[j - 1];
	}

	/* the model file of each served version */
	const gpuenv_pbtxt_field_t *ccm = gpuenv_pbtxt_find(m, "cc_model_filenames", NULL);
	const char *onnx_path = NULL;
	for (size_t i = 0; i < ns && !ensemble; i++) {
		const char *vdir = fmt(c, "%s/%lld", dir, served[i]);
		if (!deffile) {
			/* no backend decided: Triton takes it from the file's name */
			static const char *const guess[] = { "model.plan", "model.onnx", "model.pt", "model.savedmodel",
				"model.graphdef", "model.py" };
			for (size_t g = 0; g < sizeof guess / sizeof *guess && !eff; g++)
				if (exists(join(c, vdir, guess[g]))) {
					deffile = guess[g];
					eff = g == 0 ? "tensorrt" : g == 1 ? "onnxruntime" : g == 2 ? "pytorch" :
						g == 5 ? "python" : "tensorflow";
					note(c, GPUENV_TRITON_INFO, "backend-auto", file, NULL, NULL,
						"no platform or backend: Triton takes backend '%s' from %s/%s", eff, vdir,
						guess[g]);
				}
			if (!eff) {
				note(c, GPUENV_TRITON_ERROR, "backend-unknown", file, NULL,
					"set backend: \"onnxruntime\" (or tensorrt, pytorch, python, ...) or platform",
					"could not determine the backend of model '%s': no backend or platform, and no "
					"model.<backend> file in %s",
					cf->name, vdir);
				break;
			}
		}
		/* the file for each of the node's GPUs (cc_model_filenames, a map:
		 * one { key: "7.5" value: "model_t4.plan" } per entry) */
		const char *want = deffile;
		for (size_t g = 0; ccm && c->o && c->o->node.known && g < c->o->node.ngpus; g++) {
			const char *cc = c->o->node.cc[g];
			const gpuenv_pbtxt_field_t *ef;
			for (size_t e = 0; cc && (ef = gpuenv_pbtxt_nth(m, "cc_model_filenames", e)); e++) {
				if (ef->kind != GPUENV_PBTXT_MESSAGE)
					continue;
				const char *key = str_field(ef->msg, "key", NULL), *val = str_field(ef->msg, "value", NULL);
				if (!key || !val || strcmp(key, cc))
					continue;
				if (!exists(join(c, vdir, val)))
					note(c, GPUENV_TRITON_ERROR, "model-file", file, ef,
						fmt(c, "put the engine built for compute capability %s at %s/%s", cc, vdir,
							val),
						"GPU %zu (compute capability %s) loads %s/%s, which is missing", g, cc, vdir,
						val);
				if (g == 0)
					want = val; /* checked above; the default file may be absent then */
			}
		}
		if (want != deffile)
			continue;
		if (want && !exists(join(c, vdir, want))) {
			/* the file of another backend, present instead? */
			const char *other = NULL;
			for (size_t p = 0; p < sizeof PLATFORMS / sizeof *PLATFORMS && !other; p++)
				if (PLATFORMS[p].file && strcmp(PLATFORMS[p].file, want) &&
					exists(join(c, vdir, PLATFORMS[p].file)))
					other = PLATFORMS[p].file;
			if (other)
				note(c, GPUENV_TRITON_ERROR, "platform-file", file, pat ? pat : bat,
					fmt(c, "set the platform or backend that runs %s, or put %s in %s", other, want, vdir),
					"backend '%s' loads %s/%s, but the folder holds %s", eff ? eff : "?", vdir, want, other);
			else
				note(c, GPUENV_TRITON_ERROR, "model-file", file, dfat,
					fmt(c, "put the model at %s/%s%s", vdir, want,
						dmf ? "" : ", or name the file with default_model_filename"),
					"version %lld has no model file: %s/%s is missing", served[i], vdir, want);
		} else if (want && eff && !strcmp(eff, "onnxruntime") && !onnx_path)
			onnx_path = join(c, vdir, want);
		else if (want && eff && !strcmp(eff, "tensorrt"))
			check_plan(c, join(c, vdir, want));
	}
	mo->backend = eff;

	/* max_batch_size */
	const gpuenv_pbtxt_field_t *mbf = gpuenv_pbtxt_find(m, "max_batch_size", NULL);
	long long mbs = int_field(c, file, mbf, 0);
	if (mbs < 0) {
		note(c, GPUENV_TRITON_ERROR, "max-batch-size", file, mbf,
			"max_batch_size: 0 (no batching) or the largest batch the model takes",
			"max_batch_size %lld is negative", mbs);
		mbs = 0;
	}
	mo->max_batch_size = mbs;

	/* the ONNX model, for its inputs and outputs */
	gpuenv_onnx_model_t om;
	bool have_onnx = false;
	if (onnx_path) {
		int r = gpuenv_onnx_inspect(c->ctx, c->a, onnx_path, &om);
		if (!call_failed(c, r, GPUENV_TRITON_ERROR, "model-unreadable", onnx_path,
			    "re-export the model; `gpuenv trt inspect` reads it the same way", ""))
			have_onnx = true;
		else if (c->oom)
			return;
	}
	size_t nin, nout;
	gpuenv_pbtxt_find(m, "input", &nin);
	gpuenv_pbtxt_find(m, "output", &nout);
	if (have_onnx && !nin && !nout)
		note(c, GPUENV_TRITON_INFO, "auto-complete", file, NULL, NULL,
			"no input or output listed: Triton's ONNX Runtime backend fills in the model's %zu inputs (%s) and "
			"%zu outputs (%s) unless the server runs with --disable-auto-complete-config",
			om.ninputs, names_of(c, om.inputs, om.ninputs), om.noutputs, names_of(c, om.outputs, om.noutputs));
	for (size_t i = 0; i < nin + nout; i++) {
		bool in = i < nin;
		const gpuenv_pbtxt_field_t *tf = gpuenv_pbtxt_nth(m, in ? "input" : "output", in ? i : i - nin);
		if (tf->kind != GPUENV_PBTXT_MESSAGE) {
			note(c, GPUENV_TRITON_ERROR, "config-type", file, tf, "input { name: ... data_type: ... dims: [...] }",
				"%s: expected a message { ... }", tf->name);
			continue;
		}
		check_tensor(c, file, in ? "input" : "output", tf, mbs, have_onnx ? (in ? om.inputs : om.outputs) : NULL,
			have_onnx ? (in ? om.ninputs : om.noutputs) : 0, onnx_path);
	}
	if (have_onnx)
		check_missing(c, file, m, om.inputs, om.ninputs, onnx_path);

	/* dynamic batching */
	const gpuenv_pbtxt_field_t *db = gpuenv_pbtxt_find(m, "dynamic_batching", NULL);
	if (db && db->kind == GPUENV_PBTXT_MESSAGE) {
		if (mbs == 0)
			note(c, GPUENV_TRITON_ERROR, "batching-without-batch", file, db,
				"set max_batch_size to the largest batch the model takes, or remove dynamic_batching",
				"dynamic_batching needs max_batch_size > 0: with 0 the model takes no batch dimension");
		size_t k;
		gpuenv_pbtxt_find(db->msg, "preferred_batch_size", &k);
		for (size_t i = 0; i < k; i++) {
			const gpuenv_pbtxt_field_t *pf = gpuenv_pbtxt_nth(db->msg, "preferred_batch_size", i);
			long long p = int_field(c, file, pf, 1);
			if (p < 1 || (mbs > 0 && p > mbs))
				note(c, GPUENV_TRITON_ERROR, "preferred-batch-size", file, pf,
					fmt(c, "preferred batch sizes from 1 to max_batch_size (%lld)", mbs),
					"preferred_batch_size %lld is %s", p,
					p < 1 ? "not a batch size" : fmt(c, "above max_batch_size %lld", mbs));
		}
		const gpuenv_pbtxt_field_t *qd = gpuenv_pbtxt_find(db->msg, "max_queue_delay_microseconds", NULL);
		long long q = int_field(c, file, qd, 0);
		if (q > 1000000)
			note(c, GPUENV_TRITON_WARNING, "queue-delay", file, qd,
				"a delay of a few milliseconds at most (microseconds: 1000 is 1 ms)",
				"max_queue_delay_microseconds %lld holds a request up to %.1f s before it runs", q, q / 1e6);
	}

	/* instance groups */
	size_t ng;
	gpuenv_pbtxt_find(m, "instance_group", &ng);
	for (size_t i = 0; i < ng; i++) {
		const gpuenv_pbtxt_field_t *gf = gpuenv_pbtxt_nth(m, "instance_group", i);
		if (gf->kind != GPUENV_PBTXT_MESSAGE)
			continue;
		const gpuenv_pbtxt_field_t *kf = gpuenv_pbtxt_find(gf->msg, "kind", NULL);
		const char *kind = kf && kf->kind == GPUENV_PBTXT_IDENT ? kf->value : "KIND_AUTO";
		const gpuenv_pbtxt_field_t *cnf = gpuenv_pbtxt_find(gf->msg, "count", NULL);
		long long cnt = int_field(c, file, cnf, 1);
		if (cnt < 1)
			note(c, GPUENV_TRITON_ERROR, "instance-count", file, cnf, "count: 1 or more",
				"instance_group count %lld runs no instance", cnt);
		if (strcmp(kind, "KIND_AUTO") && strcmp(kind, "KIND_GPU") && strcmp(kind, "KIND_CPU") &&
			strcmp(kind, "KIND_MODEL"))
			note(c, GPUENV_TRITON_ERROR, "instance-kind", file, kf, "kinds: KIND_AUTO, KIND_GPU, KIND_CPU, KIND_MODEL",
				"'%s' is not an instance_group kind", kind);
		if (!strcmp(kind, "KIND_CPU") && eff && !strcmp(eff, "tensorrt"))
			note(c, GPUENV_TRITON_ERROR, "instance-kind", file, kf, "kind: KIND_GPU",
				"a TensorRT plan runs only on a GPU: KIND_CPU instances cannot load it");
		size_t k;
		gpuenv_pbtxt_find(gf->msg, "gpus", &k);
		if (c->o && c->o->node.known && (!strcmp(kind, "KIND_GPU") || (!strcmp(kind, "KIND_AUTO") && k))) {
			if (!c->o->node.ngpus)
				note(c, GPUENV_TRITON_ERROR, "instance-gpu", file, kf ? kf : gf,
					"run it on a node with a GPU, or kind: KIND_CPU where the backend allows",
					"instance_group asks for GPUs and the node has none");
			for (size_t j = 0; j < k; j++) {
				const gpuenv_pbtxt_field_t *gp = gpuenv_pbtxt_nth(gf->msg, "gpus", j);
				long long g = int_field(c, file, gp, 0);
				if (g < 0 || (size_t)g >= c->o->node.ngpus)
					note(c, GPUENV_TRITON_ERROR, "instance-gpu", file, gp,
						fmt(c, "gpus: from 0 to %zu on this node (as CUDA numbers them inside the "
							"container)",
							c->o->node.ngpus ? c->o->node.ngpus - 1 : 0),
						"instance_group names GPU %lld, and the node has %zu GPU%s", g,
						c->o->node.ngpus, c->o->node.ngpus == 1 ? "" : "s");
			}
		}
	}

	if (ensemble)
		check_ensemble(c, file, m);
}

/* ---- ensembles --------------------------------------------------------------- */

static const struct cfg *cfg_named(struct chk *c, const char *name)
{
	for (size_t i = 0; i < c->ncfgs; i++)
		if (!strcmp(c->cfgs[i].name, name))
			return &c->cfgs[i];
	return NULL;
}

static bool tensor_in(const gpuenv_pbtxt_msg_t *m, const char *list, const char *name)
{
	size_t n;
	gpuenv_pbtxt_find(m, list, &n);
	for (size_t i = 0; i < n; i++) {
		const gpuenv_pbtxt_field_t *f = gpuenv_pbtxt_nth(m, list, i);
		const char *nm = f->kind == GPUENV_PBTXT_MESSAGE ? str_field(f->msg, "name", NULL) : NULL;
		if (nm && !strcmp(nm, name))
			return true;
	}
	return false;
}

/* Does some step's output_map produce the ensemble tensor name? */
static bool produced(const gpuenv_pbtxt_msg_t *sched, const char *name)
{
	size_t ns;
	gpuenv_pbtxt_find(sched, "step", &ns);
	for (size_t i = 0; i < ns; i++) {
		const gpuenv_pbtxt_field_t *st = gpuenv_pbtxt_nth(sched, "step", i);
		if (st->kind != GPUENV_PBTXT_MESSAGE)
			continue;
		size_t no;
		gpuenv_pbtxt_find(st->msg, "output_map", &no);
		for (size_t k = 0; k < no; k++) {
			const gpuenv_pbtxt_field_t *om = gpuenv_pbtxt_nth(st->msg, "output_map", k);
			const char *v = om->kind == GPUENV_PBTXT_MESSAGE ? str_field(om->msg, "value", NULL) : NULL;
			if (v && !strcmp(v, name))
				return true;
		}
	}
	return false;
}

static void check_ensemble(struct chk *c, const char *file, const gpuenv_pbtxt_msg_t *m)
{
	const gpuenv_pbtxt_field_t *es = gpuenv_pbtxt_find(m, "ensemble_scheduling", NULL);
	if (!es || es->kind != GPUENV_PBTXT_MESSAGE) {
		note(c, GPUENV_TRITON_ERROR, "ensemble-steps", file, NULL,
			"add ensemble_scheduling { step [ { model_name: ... input_map { key: ... value: ... } ... } ] }",
			"an ensemble without ensemble_scheduling has no step to run");
		return;
	}
	size_t ns;
	gpuenv_pbtxt_find(es->msg, "step", &ns);
	if (!ns)
		note(c, GPUENV_TRITON_ERROR, "ensemble-steps", file, es, "add at least one step { ... }",
			"ensemble_scheduling has no step");
	for (size_t i = 0; i < ns; i++) {
		const gpuenv_pbtxt_field_t *st = gpuenv_pbtxt_nth(es->msg, "step", i);
		if (st->kind != GPUENV_PBTXT_MESSAGE)
			continue;
		const gpuenv_pbtxt_field_t *mat;
		const char *mn = str_field(st->msg, "model_name", &mat);
		const struct cfg *sc = mn ? cfg_named(c, mn) : NULL;
		if (!mn)
			note(c, GPUENV_TRITON_ERROR, "ensemble-model", file, st, "model_name: \"...\"",
				"ensemble step %zu names no model", i + 1);
		else if (!sc)
			note(c, GPUENV_TRITON_ERROR, "ensemble-model", file, mat,
				fmt(c, "add the model folder %s/%s, or name a model of the repository", c->repo, mn),
				"ensemble step %zu runs model '%s', which the repository does not have", i + 1, mn);
		size_t ni;
		gpuenv_pbtxt_find(st->msg, "input_map", &ni);
		for (size_t k = 0; k < ni; k++) {
			const gpuenv_pbtxt_field_t *im = gpuenv_pbtxt_nth(st->msg, "input_map", k);
			if (im->kind != GPUENV_PBTXT_MESSAGE)
				continue;
			const char *key = str_field(im->msg, "key", NULL), *val = str_field(im->msg, "value", NULL);
			if (key && sc && sc->m && !tensor_in(sc->m, "input", key) && gpuenv_pbtxt_find(sc->m, "input", NULL))
				note(c, GPUENV_TRITON_ERROR, "ensemble-wiring", file, im,
					fmt(c, "use an input name of model '%s' as the key", mn),
					"ensemble step %zu maps '%s', which is not an input of model '%s'", i + 1, key, mn);
			if (val && !tensor_in(m, "input", val) && !produced(es->msg, val))
				note(c, GPUENV_TRITON_ERROR, "ensemble-wiring", file, im,
					"feed it from an ensemble input or from an earlier step's output_map value",
					"ensemble step %zu reads tensor '%s', which no ensemble input or step output provides",
					i + 1, val);
		}
		size_t no;
		gpuenv_pbtxt_find(st->msg, "output_map", &no);
		for (size_t k = 0; k < no; k++) {
			const gpuenv_pbtxt_field_t *om = gpuenv_pbtxt_nth(st->msg, "output_map", k);
			const char *key = om->kind == GPUENV_PBTXT_MESSAGE ? str_field(om->msg, "key", NULL) : NULL;
			if (key && sc && sc->m && !tensor_in(sc->m, "output", key) && gpuenv_pbtxt_find(sc->m, "output", NULL))
				note(c, GPUENV_TRITON_ERROR, "ensemble-wiring", file, om,
					fmt(c, "use an output name of model '%s' as the key", mn),
					"ensemble step %zu maps '%s', which is not an output of model '%s'", i + 1, key, mn);
		}
	}
	size_t nout;
	gpuenv_pbtxt_find(m, "output", &nout);
	for (size_t i = 0; i < nout; i++) {
		const gpuenv_pbtxt_field_t *of = gpuenv_pbtxt_nth(m, "output", i);
		const char *nm = of->kind == GPUENV_PBTXT_MESSAGE ? str_field(of->msg, "name", NULL) : NULL;
		if (nm && !produced(es->msg, nm))
			note(c, GPUENV_TRITON_ERROR, "ensemble-wiring", file, of,
				fmt(c, "map a step's output to '%s' in its output_map", nm),
				"the ensemble's output '%s' is produced by no step", nm);
	}
}

/* ---- the repository ----------------------------------------------------------- */

/* Read and parse every model's config (ensembles look at the others). */
static void read_config(struct chk *c, struct cfg *cf)
{
	gpuenv_buf_t b;
	const char *dir = join(c, c->repo, cf->name);
	int r;

	cf->path = join(c, dir, CONFIG);
	gpuenv_buf_init(&b, c->ctx, GPUENV_PBTXT_MAX);
	r = gpuenv_fs_read(c->ctx, cf->path, GPUENV_PBTXT_MAX, &b);
	if (r == -ENOENT) {
		gpuenv_error_clear(c->ctx);
		/* Triton auto-completes ONNX, TensorRT and SavedModel models */
		const char *auto_file = NULL;
		long long vers[MAX_VERSIONS];
		size_t others, nv = versions_of(c, dir, vers, MAX_VERSIONS, &others);
		for (size_t i = nv; i > 0 && !auto_file; i--)
			for (const char *const *f = (const char *const[]){ "model.onnx", "model.plan", "model.savedmodel", NULL };
				*f && !auto_file; f++)
				if (exists(fmt(c, "%s/%lld/%s", dir, vers[i - 1], *f)))
					auto_file = fmt(c, "%s/%lld/%s", dir, vers[i - 1], *f);
		if (auto_file)
			note(c, GPUENV_TRITON_INFO, "auto-complete", cf->path, NULL, NULL,
				"no %s: Triton makes the configuration from %s (backend, max_batch_size, inputs and outputs) "
				"unless the server runs with --disable-auto-complete-config",
				CONFIG, auto_file);
		else
			note(c, GPUENV_TRITON_ERROR, "config-missing", cf->path, NULL,
				fmt(c, "write %s (name, backend or platform, max_batch_size, input, output)", cf->path),
				"no %s, and no ONNX, TensorRT or SavedModel file Triton could make one from", CONFIG);
	} else if (r == -ENOMEM)
		c->oom = r;
	else if (r) {
		char e[600];
		gpuenv_error_format(&c->ctx->err, e, sizeof e);
		note(c, GPUENV_TRITON_ERROR, "config-unreadable", cf->path, NULL, "make the file readable by the server",
			"%s", e);
		gpuenv_error_clear(c->ctx);
	} else {
		r = gpuenv_pbtxt_parse(c->ctx, c->a, cf->path, b.data ? b.data : "", b.len, &cf->m);
		if (r == -ENOMEM)
			c->oom = r;
		else if (r) {
			const gpuenv_pbtxt_field_t at = { .line = c->ctx->err.line, .col = c->ctx->err.col };
			note(c, GPUENV_TRITON_ERROR, "config-syntax", cf->path, &at,
				c->ctx->err.hint[0] ? fmt(c, "%s", c->ctx->err.hint) :
						      "config.pbtxt is protobuf text format: model_config.proto's fields",
				"failed to read text proto from %s: %s (Triton refuses the model)", cf->path, c->ctx->err.msg);
			gpuenv_error_clear(c->ctx);
			cf->m = NULL;
		}
	}
	gpuenv_buf_free(&b);
}

/* The server image and the node, before the models: the node as a target
 * (the plans' GPUs), the image's KB row (its TensorRT), and the image on
 * the node as preflight --image judges it: one finding in its words. */
static void check_image(struct chk *c, gpuenv_target_t *node)
{
	const gpuenv_triton_opts_t *o = c->o;
	gpuenv_kb_image_ref_t img;
	gpuenv_preflight_t pf;
	int r;

	if (o->facts) {
		if (gpuenv_target_from_facts(c->ctx, c->a, o->facts, SIZE_MAX, node)) {
			c->oom = -ENOMEM;
			return;
		}
		c->node = node;
	}
	if (!o->image)
		return;
	if (call_failed(c, gpuenv_kb_image_lookup(c->kb, o->image, &img), GPUENV_TRITON_WARNING, "image-unknown",
		    c->repo,
		    "name an image the knowledge base knows (gpuenv kb image IMAGE), or update the knowledge base "
		    "(gpuenv kb update)",
		    fmt(c, "%s is not checked (its TensorRT, what it asks of the node): ", o->image)))
		return;
	c->image_known = true;
	if (img.row && img.row->tensorrt.n)
		c->image_trt = fmt(c, "%.*s", GPUENV_STR_ARG(img.row->tensorrt.str));
	if (!o->facts)
		return;
	r = gpuenv_preflight_check(c->ctx, c->a, o->facts, &(gpuenv_preflight_req_t){ .image = o->image, .kb = c->kb },
		&pf);
	if (call_failed(c, r, GPUENV_TRITON_WARNING, "image-node", c->repo, "gpuenv preflight --image says more",
		    fmt(c, "%s was not judged on the node: ", o->image)))
		return;
	if (pf.go)
		return;
	const char *msg = "", *fix = NULL;
	for (size_t i = 0; i < pf.reasons.n; i++) {
		const gpuenv_verdict_t *v = &pf.reasons.items[i];
		if (v->severity != GPUENV_SEV_ERROR || !v->message)
			continue;
		msg = fmt(c, "%s%s%s", msg, *msg ? "; " : "", v->message);
		if (!fix)
			fix = v->fix;
	}
	note(c, GPUENV_TRITON_ERROR, "image-node", c->repo, NULL,
		fix ? fix : "choose a server image this node runs (gpuenv preflight --image IMAGE)",
		"gpuenv preflight --image: no-go for %s on this node: %s; the server does not start there, so no model "
		"loads",
		pf.what ? pf.what : o->image, msg);
}

int gpuenv_triton_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path, const gpuenv_triton_opts_t *opts,
	gpuenv_triton_report_t *out)
{
	struct chk c = { .ctx = ctx, .a = arena, .repo = path, .o = opts };
	const char **names;
	size_t n;
	int r;

	memset(out, 0, sizeof *out);
	out->repository = path;
	if (!is_dir(path)) {
		r = exists(path) ? -ENOTDIR : -ENOENT;
		gpuenv_fail(ctx, r, path, 0, 0, "%s", r == -ENOTDIR ? "not a folder" : "no such folder");
		return gpuenv_hint(ctx, "give the model repository: the folder with one folder per model");
	}
	r = list_dirs(&c, path, &names, &n);
	if (r) {
		if (r != -ENOMEM)
			gpuenv_fail(ctx, r, path, 0, 0, "cannot list the model repository: %s", strerror(-r));
		return r;
	}
	out->models = gpuenv_arena_calloc(arena, n ? n : 1, sizeof *out->models);
	c.cfgs = gpuenv_arena_calloc(arena, n ? n : 1, sizeof *c.cfgs);
	if (!out->models || !c.cfgs)
		return gpuenv_oom(ctx, "checking a Triton model repository");
	c.ncfgs = n;
	gpuenv_kb_t *own = NULL;
	if (opts && (opts->image || opts->facts) && !(c.kb = opts->kb)) {
		if ((r = gpuenv_kb_load_files(ctx, NULL, GPUENV_TRITON_KB_FILES, &own)) != 0)
			return r;
		c.kb = own;
	}
	for (size_t i = 0; i < n && !c.oom; i++) {
		c.cur = &out->models[i];
		c.cur->name = names[i];
		c.cur->loads = true;
		c.cfgs[i].name = names[i];
		read_config(&c, &c.cfgs[i]);
	}
	/* the checks, model by model; findings kept in model order after the
	 * repository's own (the image on the node) */
	gpuenv_triton_finding_t *first = c.f;
	size_t nfirst = c.nf;
	gpuenv_target_t node;
	c.f = NULL;
	c.nf = c.capf = 0;
	c.cur = NULL;
	if (!c.oom && opts && (opts->image || opts->facts))
		check_image(&c, &node);
	for (size_t i = 0; i < n && !c.oom; i++) {
		c.cur = &out->models[i];
		for (size_t k = 0; k < nfirst; k++)
			if (first[k].model == names[i])
				note(&c, first[k].severity, first[k].id, first[k].file,
					&(gpuenv_pbtxt_field_t){ .line = first[k].line, .col = first[k].col }, first[k].fix,
					"%s", first[k].message);
		check_model(&c, &c.cfgs[i]);
	}
	gpuenv_free(ctx, first);
	gpuenv_kb_free(own);
	out->image = opts ? opts->image : NULL;
	out->image_tensorrt = c.image_trt;
	if (c.oom) {
		gpuenv_free(ctx, c.f);
		return -ENOMEM;
	}
	out->nmodels = n;
	if (c.nf) {
		out->findings = gpuenv_arena_alloc(arena, c.nf * sizeof *out->findings);
		if (!out->findings) {
			gpuenv_free(ctx, c.f);
			return gpuenv_oom(ctx, "checking a Triton model repository");
		}
		memcpy(out->findings, c.f, c.nf * sizeof *out->findings);
	}
	out->nfindings = c.nf;
	gpuenv_free(ctx, c.f);
	for (size_t i = 0; i < c.nf; i++) {
		out->errors += out->findings[i].severity == GPUENV_TRITON_ERROR;
		out->warnings += out->findings[i].severity == GPUENV_TRITON_WARNING;
	}
	return 0;
}

const char *gpuenv_triton_severity_name(gpuenv_triton_severity_t s)
{
	return s == GPUENV_TRITON_ERROR ? "error" : s == GPUENV_TRITON_WARNING ? "warning" : "info";
}
