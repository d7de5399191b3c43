/* The trtexec command for a model on a target (gpuenv trt optimize): every
 * flag asked of the KB (gpuenv/kb_trt.h), every refusal with its reason. */
#include "gpuenv/trt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb_trt.h"
#include "trt_int.h"

static const char *const precision_names[] = { "auto", "fp32", "fp16", "bf16", "int8", "fp8" };

int gpuenv_trt_precision_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(precision_names) / sizeof(precision_names[0]); i++)
		if (strcmp(s, precision_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *gpuenv_trt_precision_name(int p)
{
	return p >= 0 && p <= GPUENV_TRT_FP8 ? precision_names[p] : NULL;
}

bool gpuenv_trt_input_dynamic(const gpuenv_trt_input_t *in)
{
	if (!in->has_shape)
		return true;
	for (size_t i = 0; i < in->ndims; i++)
		if (in->dims[i] < 0)
			return true;
	return false;
}

/* ---- shapes ------------------------------------------------------------------------ */

/* "1x3x224x224" at s[0..n) into d; the count in *nd. */
static int parse_dims(gpuenv_ctx_t *ctx, const char *origin, const char *text, const char *s,
	size_t n, int64_t *d, size_t *nd)
{
	size_t i = 0;

	*nd = 0;
	while (i <= n) {
		int64_t v = 0;
		size_t st = i;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (v > 100000000)
				return gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1,
					(uint32_t)(s - text + (long)st + 1), "a dimension too large");
			v = v * 10 + (s[i++] - '0');
		}
		if (i == st || v == 0) {
			gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1, (uint32_t)(s - text + (long)i + 1),
				"expected a dimension of 1 or more in '%s'", text);
			return gpuenv_hint(ctx, "a profile is NAME:MIN..OPT..MAX, each shape DxDx... "
						"(input:1x3x224x224..8x3x224x224..32x3x224x224)");
		}
		if (*nd == GPUENV_TRT_MAX_DIMS)
			return gpuenv_fail(ctx, GPUENV_ETOOBIG, origin, 1, 0, "more than %d dimensions",
				GPUENV_TRT_MAX_DIMS);
		d[(*nd)++] = v;
		if (i == n)
			break;
		if (s[i] != 'x') {
			gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1, (uint32_t)(s - text + (long)i + 1),
				"expected 'x' between dimensions in '%s'", text);
			return gpuenv_hint(ctx, "a profile is NAME:MIN..OPT..MAX, each shape DxDx...");
		}
		i++;
	}
	return 0;
}

int gpuenv_trt_shape_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *text,
	const char *origin, gpuenv_trt_shape_t *out)
{
	const char *colon = strrchr(text, ':');
	const char *p, *parts[3];
	size_t lens[3], np = 0, n1, n2;
	int r;

	memset(out, 0, sizeof(*out));
	out->origin = origin;
	if (!colon || colon == text) {
		gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1, 1, "'%s' names no input", text);
		return gpuenv_hint(ctx, "a profile is NAME:MIN..OPT..MAX "
					"(input:1x3x224x224..8x3x224x224..32x3x224x224)");
	}
	out->name = gpuenv_arena_strndup(arena, text, (size_t)(colon - text));
	if (!out->name)
		return gpuenv_oom(ctx, "parsing a shape");
	p = colon + 1;
	while (np < 3) {
		const char *dd = strstr(p, "..");
		parts[np] = p;
		lens[np] = dd ? (size_t)(dd - p) : strlen(p);
		np++;
		if (!dd)
			break;
		p = dd + 2;
	}
	if (np == 3 && strstr(parts[2], "..")) {
		gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1, (uint32_t)(strstr(parts[2], "..") - text + 1),
			"more than three shapes in '%s'", text);
		return gpuenv_hint(ctx, "a profile is NAME:MIN..OPT..MAX");
	}
	if (np == 2) {
		gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1, (uint32_t)(parts[1] - text + 1),
			"two shapes in '%s': give MIN..OPT..MAX or one shape", text);
		return gpuenv_hint(ctx, "a profile is NAME:MIN..OPT..MAX");
	}
	if ((r = parse_dims(ctx, origin, text, parts[0], lens[0], out->min, &out->ndims)))
		return r;
	if (np == 1) {
		memcpy(out->opt, out->min, sizeof(out->min));
		memcpy(out->max, out->min, sizeof(out->min));
		return 0;
	}
	if ((r = parse_dims(ctx, origin, text, parts[1], lens[1], out->opt, &n1)) ||
		(r = parse_dims(ctx, origin, text, parts[2], lens[2], out->max, &n2)))
		return r;
	if (n1 != out->ndims || n2 != out->ndims)
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1, 0,
			"'%s': MIN, OPT and MAX have different ranks", text);
	for (size_t i = 0; i < out->ndims; i++)
		if (out->min[i] > out->opt[i] || out->opt[i] > out->max[i]) {
			gpuenv_fail(ctx, GPUENV_ESYNTAX, origin, 1, 0,
				"'%s': dimension %zu is not MIN <= OPT <= MAX", text, i);
			return gpuenv_hint(ctx, "TensorRT refuses a profile whose OPT is outside "
						"[MIN, MAX]");
		}
	return 0;
}

/* ---- notes and arguments ------------------------------------------------------------ */

const char *trt_kbs(gpuenv_arena_t *a, gpuenv_str_t s)
{
	const char *c = s.ptr ? gpuenv_arena_strndup(a, s.ptr, s.len) : NULL;

	return c ? c : "";
}

const char *trt_row_cite(gpuenv_arena_t *a, const gpuenv_kb_row_t *row)
{
	char where[64];

	if (!row)
		return NULL;
	gpuenv_kb_row_where(row, where, sizeof(where));
	return gpuenv_arena_printf(a, "%s: %.*s", where, GPUENV_STR_ARG(row->source)).ptr;
}

int trt_note(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_trt_note_t *notes, size_t *n, int kind,
	const gpuenv_kb_row_t *row, const char *fmt, ...)
{
	va_list ap;
	gpuenv_str_t s;

	if (*n == GPUENV_TRT_MAX_NOTES)
		return 0; /* a plan never has this many; the first ones say it */
	va_start(ap, fmt);
	s = gpuenv_arena_vprintf(a, fmt, ap);
	va_end(ap);
	if (!s.ptr)
		return gpuenv_oom(ctx, "writing a TensorRT note");
	notes[*n].kind = kind;
	notes[*n].text = s.ptr;
	notes[*n].blocks = false;
	notes[*n].source = trt_row_cite(a, row);
	if (row && !notes[*n].source)
		return gpuenv_oom(ctx, "writing a TensorRT note");
	(*n)++;
	return 0;
}

#define NOTE(kind, row, ...) trt_note(ctx, a, out->notes, &out->nnotes, kind, row, __VA_ARGS__)

static int arg(gpuenv_ctx_t *ctx, gpuenv_trt_plan_t *out, const char *s)
{
	if (!s)
		return gpuenv_oom(ctx, "writing the trtexec command");
	if (out->argc == GPUENV_TRT_MAX_ARGS)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "the trtexec command is too long");
	out->argv[out->argc++] = s;
	return 0;
}

/* Refuse: EUNSUPPORTED with the reason and its source. */
static int refuse(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_kb_row_t *row,
	const char *hint, const char *fmt, ...) GPUENV_PRINTF(5, 6);
static int refuse(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_kb_row_t *row,
	const char *hint, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	const char *cite = trt_row_cite(a, row);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "%s", msg);
	if (hint && cite)
		gpuenv_hint(ctx, "%s (%s)", hint, cite);
	else if (hint || cite)
		gpuenv_hint(ctx, "%s", hint ? hint : cite);
	return GPUENV_EUNSUPPORTED;
}

/* The flag's state in v; a flag the KB does not know is written as it is
 * (the KB lists every flag the plan writes; tests/cli check that). */
static int flag_state(const gpuenv_kb_t *kb, const char *flag, const gpuenv_kb_ver_t *v,
	const gpuenv_kb_trt_flag_t **row)
{
	return gpuenv_kb_trt_flag(kb, gpuenv_str(flag), v, row);
}

/* ---- the precision -------------------------------------------------------------------- */

static const char *prec_flag(int p)
{
	switch (p) {
	case GPUENV_TRT_FP16:
		return "--fp16";
	case GPUENV_TRT_BF16:
		return "--bf16";
	case GPUENV_TRT_INT8:
		return "--int8";
	case GPUENV_TRT_FP8:
		return "--fp8";
	default:
		return NULL;
	}
}

static int plan_precision(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_trt_plan_req_t *req,
	const gpuenv_kb_ver_t *v, gpuenv_trt_plan_t *out)
{
	const gpuenv_kb_t *kb = req->kb;
	const gpuenv_kb_trt_precision_t *prow = NULL;
	const gpuenv_kb_trt_flag_t *frow = NULL;
	int p = req->precision, st;
	bool picked = false;
	const char *flag;

	if (p == GPUENV_TRT_AUTO) {
		/* FP16 where the GPU runs it fast, else FP32; INT8 and FP8 need a
		 * quantized model, so auto never picks them */
		st = flag_state(kb, "--fp16", v, &frow);
		if (st == GPUENV_KB_TRT_FLAG_REMOVED)
			return NOTE(GPUENV_TRT_NOTE_INFO, &frow->row,
				"no precision flag: TensorRT %s builds every network strongly typed "
				"(the model's own types decide); for FP16 make a mixed-precision model "
				"first: %.*s", v->str.ptr, GPUENV_STR_ARG(frow->replacement));
		if (gpuenv_kb_trt_precision(kb, "fp16", v, req->cc_major, req->cc_minor, &prow)) {
			p = GPUENV_TRT_FP16;
			picked = true;
			if (NOTE(GPUENV_TRT_NOTE_INFO, &prow->row,
				    "--fp16: the %s (compute capability %d.%d) runs FP16 fast with TensorRT "
				    "%s; layers without an FP16 kernel stay FP32",
				    req->gpu, req->cc_major, req->cc_minor, v->str.ptr))
				return -ENOMEM;
		} else {
			return NOTE(GPUENV_TRT_NOTE_INFO, NULL,
				"no --fp16: TensorRT's precision matrix does not list compute capability "
				"%d.%d (%s) for fast FP16; the engine is FP32", req->cc_major,
				req->cc_minor, req->gpu);
		}
	}
	if (p == GPUENV_TRT_FP32)
		return NOTE(GPUENV_TRT_NOTE_INFO, NULL, "FP32: no precision flag");
	flag = prec_flag(p);
	st = flag_state(kb, flag, v, &frow);
	if (st == GPUENV_KB_TRT_FLAG_REMOVED)
		return refuse(ctx, a, &frow->row, frow->replacement.ptr
			? gpuenv_arena_printf(a, "instead: %.*s", GPUENV_STR_ARG(frow->replacement)).ptr
			: NULL, "%s: trtexec of TensorRT %s has no %s (removed in %.*s)",
			gpuenv_trt_precision_name(p), v->str.ptr, flag, GPUENV_STR_ARG(frow->removed.str));
	if (st == GPUENV_KB_TRT_FLAG_NOT_YET)
		return refuse(ctx, a, &frow->row, "use a newer TensorRT, or another --precision",
			"%s: trtexec of TensorRT %s has no %s yet (added in %.*s)",
			gpuenv_trt_precision_name(p), v->str.ptr, flag, GPUENV_STR_ARG(frow->added.str));
	if (!gpuenv_kb_trt_precision(kb, gpuenv_trt_precision_name(p), v, req->cc_major,
		    req->cc_minor, &prow))
		return refuse(ctx, a, NULL, "--precision auto picks what this GPU runs fast",
			"%s: TensorRT %s's precision matrix does not list the %s (compute capability "
			"%d.%d) for %s", gpuenv_trt_precision_name(p), v->str.ptr, req->gpu,
			req->cc_major, req->cc_minor, gpuenv_trt_precision_name(p));
	if (!picked && NOTE(GPUENV_TRT_NOTE_INFO, &prow->row, "%s: compute capability %d.%d runs %s "
		    "with TensorRT %s", flag, req->cc_major, req->cc_minor, gpuenv_trt_precision_name(p),
		    v->str.ptr))
		return -ENOMEM;
	if ((p == GPUENV_TRT_INT8 || p == GPUENV_TRT_FP8) &&
		NOTE(GPUENV_TRT_NOTE_WARN, NULL, "%s needs a quantized model (Q/DQ nodes) or "
			"calibration data (--calib); without them TensorRT falls back to higher "
			"precision or builds a wrong engine", flag))
		return -ENOMEM;
	out->precisions[out->nprecisions++] = gpuenv_trt_precision_name(p);
	return arg(ctx, out, flag);
}

/* ---- shapes ---------------------------------------------------------------------------- */

static const gpuenv_trt_shape_t *given_shape(const gpuenv_trt_plan_req_t *req, const char *name)
{
	for (size_t i = 0; i < req->nshapes; i++)
		if (strcmp(req->shapes[i].name, name) == 0)
			return &req->shapes[i];
	return NULL;
}

/* The default profile of an input whose only dynamic dim is the first (a
 * batch): 1..8..32 (gpuenv's choice, said in a note); NULL when the input has
 * other dynamic dims or an unknown rank. */
static bool default_shape(const gpuenv_trt_input_t *in, gpuenv_trt_shape_t *s)
{
	if (!in->has_shape || !in->ndims || in->dims[0] >= 0)
		return false;
	for (size_t i = 1; i < in->ndims; i++)
		if (in->dims[i] < 0)
			return false;
	memset(s, 0, sizeof(*s));
	s->name = in->name;
	s->ndims = in->ndims;
	s->origin = "default";
	for (size_t i = 0; i < in->ndims; i++) {
		s->min[i] = i ? in->dims[i] : 1;
		s->opt[i] = i ? in->dims[i] : 8;
		s->max[i] = i ? in->dims[i] : 32;
	}
	return true;
}

static int shape_text(gpuenv_buf_t *b, const char *name, const int64_t *d, size_t n)
{
	int r = gpuenv_buf_printf(b, "%s%s:", b->len && b->data[b->len - 1] != '=' ? "," : "", name);

	for (size_t i = 0; i < n && !r; i++)
		r = gpuenv_buf_printf(b, "%s%lld", i ? "x" : "", (long long)d[i]);
	return r;
}

static int plan_shapes(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_trt_plan_req_t *req,
	gpuenv_trt_plan_t *out)
{
	const gpuenv_trt_model_t *m = req->model;
	gpuenv_trt_shape_t *use;
	gpuenv_buf_t b[3];
	static const char *const flags[3] = { "--minShapes=", "--optShapes=", "--maxShapes=" };
	size_t nuse = 0, ndefault = 0;
	int r = 0;

	for (size_t i = 0; i < req->nshapes; i++) {
		bool found = false;
		for (size_t k = 0; k < m->ninputs && !found; k++)
			found = strcmp(m->inputs[k].name, req->shapes[i].name) == 0;
		if (!found) {
			gpuenv_fail(ctx, GPUENV_EUSAGE, req->shapes[i].origin, 0, 0,
				"the model has no input '%s'", req->shapes[i].name);
			return gpuenv_hint(ctx, "its inputs: `gpuenv trt inspect %s` lists them", m->path);
		}
	}
	use = m->ninputs ? gpuenv_arena_calloc(a, m->ninputs, sizeof(*use)) : NULL;
	if (m->ninputs && !use)
		return gpuenv_oom(ctx, "planning shapes");
	for (size_t k = 0; k < m->ninputs; k++) {
		const gpuenv_trt_input_t *in = &m->inputs[k];
		const gpuenv_trt_shape_t *g = given_shape(req, in->name);
		if (!gpuenv_trt_input_dynamic(in)) {
			if (g && (g->ndims != in->ndims ||
				     memcmp(g->min, in->dims, in->ndims * sizeof(int64_t)) ||
				     memcmp(g->max, in->dims, in->ndims * sizeof(int64_t))))
				return gpuenv_fail(ctx, GPUENV_EUSAGE, g->origin, 0, 0,
					"input '%s' is static; its profile can only be its own shape",
					in->name);
			continue;
		}
		if (g) {
			if (in->has_shape && g->ndims != in->ndims)
				return gpuenv_fail(ctx, GPUENV_EUSAGE, g->origin, 0, 0,
					"input '%s' has %zu dimensions, the profile %zu", in->name,
					in->ndims, g->ndims);
			for (size_t d = 0; in->has_shape && d < in->ndims; d++)
				if (in->dims[d] >= 0 && (g->min[d] != in->dims[d] ||
							    g->max[d] != in->dims[d]))
					return gpuenv_fail(ctx, GPUENV_EUSAGE, g->origin, 0, 0,
						"input '%s': dimension %zu is fixed at %lld in the model",
						in->name, d, (long long)in->dims[d]);
			use[nuse++] = *g;
			continue;
		}
		if (!default_shape(in, &use[nuse])) {
			gpuenv_fail(ctx, GPUENV_EUSAGE, m->path, 0, 0, "input '%s' has dynamic "
				"dimensions other than the batch: gpuenv cannot choose their range",
				in->name);
			return gpuenv_hint(ctx, "give --shapes %s:MIN..OPT..MAX, or [tool.gpuenv.trt] "
						"shapes in pyproject.toml (docs/trt.md)", in->name);
		}
		nuse++;
		ndefault++;
	}
	if (!nuse)
		return NOTE(GPUENV_TRT_NOTE_INFO, NULL, "no shape flags: every input is static");
	for (int f = 0; f < 3; f++) {
		gpuenv_buf_init(&b[f], ctx, 1 << 16);
		r = r ? r : gpuenv_buf_printf(&b[f], "%s", flags[f]);
	}
	for (size_t i = 0; i < nuse && !r; i++) {
		r = shape_text(&b[0], use[i].name, use[i].min, use[i].ndims);
		r = r ? r : shape_text(&b[1], use[i].name, use[i].opt, use[i].ndims);
		r = r ? r : shape_text(&b[2], use[i].name, use[i].max, use[i].ndims);
	}
	for (int f = 0; f < 3; f++) {
		if (!r)
			r = arg(ctx, out, gpuenv_arena_strndup(a, b[f].data, b[f].len));
		gpuenv_buf_free(&b[f]);
	}
	if (r)
		return r == -ENOMEM ? gpuenv_oom(ctx, "writing the shape flags") : r;
	for (size_t i = 0; i < nuse; i++)
		if (NOTE(GPUENV_TRT_NOTE_INFO, NULL, "profile of '%s' from %s%s", use[i].name,
			    use[i].origin, strcmp(use[i].origin, "default") == 0
				    ? ": gpuenv's default for a dynamic batch, 1..8..32 (give --shapes "
				      "or [tool.gpuenv.trt] shapes for your own)"
				    : ""))
			return -ENOMEM;
	(void)ndefault;
	return 0;
}

/* ---- portability ------------------------------------------------------------------------ */

static int plan_portable(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_trt_plan_req_t *req,
	const gpuenv_kb_ver_t *v, gpuenv_trt_plan_t *out)
{
	const gpuenv_kb_t *kb = req->kb;
	const gpuenv_kb_trt_flag_t *frow = NULL;
	int st;

	out->hardware_compatibility = "none";
	if (req->portable_gpus) {
		const gpuenv_kb_trt_hwcompat_t *amp = gpuenv_kb_trt_hwcompat(kb, gpuenv_str("ampere+"));
		const gpuenv_kb_trt_hwcompat_t *same =
			gpuenv_kb_trt_hwcompat(kb, gpuenv_str("sameComputeCapability"));
		const gpuenv_kb_trt_hwcompat_t *pick = NULL;
		bool amp_gpu = amp && (req->cc_major > (int)amp->cc_min.part[0] ||
			(req->cc_major == (int)amp->cc_min.part[0] &&
				req->cc_minor >= (int)amp->cc_min.part[1]));
		st = flag_state(kb, "--hardwareCompatibilityLevel", v, &frow);
		if (st != GPUENV_KB_TRT_FLAG_OK && st != GPUENV_KB_TRT_FLAG_DEPRECATED)
			return refuse(ctx, a, frow ? &frow->row : NULL,
				"build one engine per GPU architecture (one trt optimize per target), or "
				"use TensorRT 8.6 or newer",
				"--portable-gpus: TensorRT %s has no hardware compatibility (it came in %s)",
				v->str.ptr, frow && frow->added.n ? trt_kbs(a, frow->added.str) : "8.6");
		if (amp && amp_gpu && gpuenv_kb_ver_cmp(v, &amp->added) >= 0)
			pick = amp;
		else if (same && gpuenv_kb_ver_cmp(v, &same->added) >= 0)
			pick = same;
		if (!pick) {
			const char *why = gpuenv_arena_printf(a, "build on and for the %s itself (an "
				"engine per architecture)%s", req->gpu, same
				? gpuenv_arena_printf(a, "; TensorRT %.*s adds %.*s, for GPUs of one "
					"compute capability", GPUENV_STR_ARG(same->added.str),
					GPUENV_STR_ARG(same->trtexec)).ptr : "").ptr;
			return refuse(ctx, a, amp ? &amp->row : NULL, why,
				"--portable-gpus: hardware compatibility ampere+ needs compute "
				"capability %s or newer; the %s is %d.%d (sm_%d%d)",
				amp ? trt_kbs(a, amp->cc_min.str) : "8.0", req->gpu, req->cc_major, req->cc_minor,
				req->cc_major, req->cc_minor);
		}
		out->hardware_compatibility = gpuenv_str_eq_cstr(pick->runs_on, "same_cc")
			? "same-compute-capability" : "ampere+";
		if (arg(ctx, out, gpuenv_arena_printf(a, "--hardwareCompatibilityLevel=%.*s",
				      GPUENV_STR_ARG(pick->trtexec)).ptr) ||
			NOTE(GPUENV_TRT_NOTE_INFO, &pick->row, "--hardwareCompatibilityLevel=%.*s: %s; "
				"such engines can be slower", GPUENV_STR_ARG(pick->trtexec),
				pick == amp ? "runs on every GPU of compute capability 8.0 and newer"
					    : "runs on GPUs of the build GPU's compute capability"))
			return -ENOMEM;
	}
	if (req->portable_tensorrt) {
		const gpuenv_kb_trt_vcompat_t *vc = gpuenv_kb_trt_vcompat(kb);
		st = flag_state(kb, "--versionCompatible", v, &frow);
		if (!vc || (st != GPUENV_KB_TRT_FLAG_OK && st != GPUENV_KB_TRT_FLAG_DEPRECATED) ||
			gpuenv_kb_ver_cmp(v, &vc->tensorrt_min) < 0)
			return refuse(ctx, a, vc ? &vc->row : NULL, "rebuild the engine with each "
				"TensorRT that runs it, or use TensorRT 8.6 or newer",
				"--portable-tensorrt: TensorRT %s cannot build version-compatible engines "
				"(from %s)", v->str.ptr, vc ? trt_kbs(a, vc->tensorrt_min.str) : "8.6");
		out->version_compatible = true;
		if (arg(ctx, out, "--versionCompatible") ||
			NOTE(GPUENV_TRT_NOTE_INFO, &vc->row, "--versionCompatible: runs on TensorRT %s "
				"and newer runtimes (never older ones); can be slower", v->str.ptr))
			return -ENOMEM;
	}
	return 0;
}

/* ---- the plan ----------------------------------------------------------------------------- */

int gpuenv_trt_plan(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_trt_plan_req_t *req,
	gpuenv_trt_plan_t *out)
{
	gpuenv_arena_t *a = arena;
	gpuenv_kb_ver_t v;
	gpuenv_kb_trt_info_t info;
	const gpuenv_kb_trt_flag_t *frow = NULL;
	const char *engine = req->engine;
	long long ws = req->workspace_mib > 0 ? req->workspace_mib : 4096;
	int r, st;

	memset(out, 0, sizeof(*out));
	if (!req->tensorrt || !gpuenv_kb_ver_parse(gpuenv_str(req->tensorrt), &v)) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "'%s' is not a TensorRT version",
			req->tensorrt ? req->tensorrt : "");
		return gpuenv_hint(ctx, "a TensorRT version is dotted numbers: 8.5.3.1, 10.3");
	}
	if (!gpuenv_kb_trt_info(req->kb, &v, &info)) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "the knowledge base knows no "
			"TensorRT release line for %s", req->tensorrt);
		return gpuenv_hint(ctx, "tensorrt.toml has releases from 8.5 on (gpuenv kb info "
					"dates it); `gpuenv kb update` may know newer ones");
	}
	if (info.sm_row && (req->cc_major * 10 + req->cc_minor <
				   info.sm_min.major * 10 + info.sm_min.minor))
		return refuse(ctx, a, &info.sm_row->row, "use an older TensorRT for this GPU",
			"TensorRT %s does not run on the %s (compute capability %d.%d): it needs "
			"%.*s or newer", req->tensorrt, req->gpu, req->cc_major, req->cc_minor,
			GPUENV_STR_ARG(info.sm_min.str));
	if ((r = arg(ctx, out, "trtexec")) ||
		(r = arg(ctx, out, gpuenv_arena_printf(a, "--onnx=%s", req->onnx).ptr)))
		return r;
	if (!engine) {
		size_t n = strlen(req->onnx);
		if (n > 5 && strcmp(req->onnx + n - 5, ".onnx") == 0)
			n -= 5;
		engine = gpuenv_arena_printf(a, "%.*s.plan", (int)n, req->onnx).ptr;
	}
	if ((r = arg(ctx, out, gpuenv_arena_printf(a, "--saveEngine=%s", engine).ptr)))
		return r;
	/* the model's opset against the parser of this release */
	if (req->model->opset > 0 && info.opset_row) {
		if (req->model->opset > info.opset_max &&
			NOTE(GPUENV_TRT_NOTE_WARN, &info.opset_row->row, "the model's opset %lld is "
				"newer than TensorRT %s's ONNX parser reads (up to opset %lld): export "
				"with opset_version=%lld, or use a newer TensorRT",
				(long long)req->model->opset, req->tensorrt, (long long)info.opset_max,
				(long long)info.opset_max))
			return -ENOMEM;
		if (info.opset_min != GPUENV_KB_NONE && req->model->opset < info.opset_min &&
			NOTE(GPUENV_TRT_NOTE_WARN, &info.opset_row->row, "the model's opset %lld is "
				"older than TensorRT %s's ONNX parser reads (from opset %lld): convert "
				"it (onnx.version_converter)", (long long)req->model->opset,
				req->tensorrt, (long long)info.opset_min))
			return -ENOMEM;
	} else if (req->model->opset > 0 &&
		NOTE(GPUENV_TRT_NOTE_INFO, NULL, "the knowledge base does not know which opsets "
			"TensorRT %s's ONNX parser reads; the model's is %lld", req->tensorrt,
			(long long)req->model->opset)) {
		return -ENOMEM;
	}
	if ((r = plan_precision(ctx, a, req, &v, out)) || (r = plan_shapes(ctx, a, req, out)))
		return r;
	/* the workspace: --memPoolSize from 8.4, --workspace before */
	st = flag_state(req->kb, "--memPoolSize", &v, &frow);
	if (st == GPUENV_KB_TRT_FLAG_OK || st == GPUENV_KB_TRT_FLAG_DEPRECATED)
		r = arg(ctx, out, gpuenv_arena_printf(a, "--memPoolSize=workspace:%lld", ws).ptr);
	else
		r = arg(ctx, out, gpuenv_arena_printf(a, "--workspace=%lld", ws).ptr);
	if (r || NOTE(GPUENV_TRT_NOTE_INFO, frow ? &frow->row : NULL, "workspace %lld MiB%s", ws,
			 req->workspace_mib > 0 ? "" : " (gpuenv's default; --workspace-mib sets it)"))
		return r ? r : -ENOMEM;
	if ((r = plan_portable(ctx, a, req, &v, out)))
		return r;
	if (!out->hardware_compatibility)
		out->hardware_compatibility = "none";
	return 0;
}
