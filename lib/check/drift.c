/* gpuenv drift: a node against an expected manifest (include/gpuenv/drift.h,
 * docs/drift.md).  The expect file is a schema over the TOML parser (or a
 * facts snapshot through the facts decoder); the node is the target every
 * other verb judges, so "which cuDNN does this node have" has one answer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/drift.h"
#include "gpuenv/toml.h"

static const char *const check_names[GPUENV_DRIFT_NCHECKS] = {
	[GPUENV_DRIFT_DRIVER] = "driver",
	[GPUENV_DRIFT_CUDA] = "cuda",
	[GPUENV_DRIFT_GPU] = "gpu",
	[GPUENV_DRIFT_GPU_COUNT] = "gpu_count",
	[GPUENV_DRIFT_CUDNN] = "cudnn",
	[GPUENV_DRIFT_NCCL] = "nccl",
	[GPUENV_DRIFT_TENSORRT] = "tensorrt",
};

/* The library families of the probe (lib/hw/libs.c) behind each check. */
static const char *lib_family(int check)
{
	return check == GPUENV_DRIFT_CUDNN ? "cudnn"
		: check == GPUENV_DRIFT_NCCL ? "nccl"
		: check == GPUENV_DRIFT_TENSORRT ? "nvinfer" : NULL;
}

const char *gpuenv_drift_check_name(int check)
{
	return check >= 0 && check < GPUENV_DRIFT_NCHECKS ? check_names[check] : NULL;
}

#define MAX_GPU_COUNT 1000000

/* ---- the node's values --------------------------------------------------- */

/* The node's value of each check; NULL when it has none.  gpu: the GPUs'
 * distinct product names in probe order, joined with ", ". */
static int node_values(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_target_t *t,
	const char *out[GPUENV_DRIFT_NCHECKS])
{
	gpuenv_buf_t names;

	memset(out, 0, sizeof(*out) * GPUENV_DRIFT_NCHECKS);
	out[GPUENV_DRIFT_DRIVER] = t->driver;
	out[GPUENV_DRIFT_CUDA] = t->driver_cuda;
	out[GPUENV_DRIFT_GPU_COUNT] = gpuenv_arena_printf(a, "%zu", t->ngpus).ptr;
	for (int c = GPUENV_DRIFT_CUDNN; c <= GPUENV_DRIFT_TENSORRT; c++)
		for (size_t i = 0; i < t->nlibs && !out[c]; i++)
			if (t->libs[i].name && strcmp(t->libs[i].name, lib_family(c)) == 0)
				out[c] = t->libs[i].version;
	gpuenv_buf_init(&names, ctx, 1 << 20);
	for (size_t i = 0; i < t->ngpus; i++) {
		const char *n = t->gpus[i].name ? t->gpus[i].name : "unknown GPU";
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(t->gpus[k].name ? t->gpus[k].name : "unknown GPU", n) == 0;
		if (!seen)
			gpuenv_buf_printf(&names, "%s%s", names.len ? ", " : "", n);
	}
	if (t->ngpus && names.data)
		out[GPUENV_DRIFT_GPU] = gpuenv_arena_strndup(a, names.data, names.len);
	if (t->ngpus && !out[GPUENV_DRIFT_GPU]) {
		gpuenv_buf_free(&names);
		return gpuenv_oom(ctx, "listing the node's GPUs");
	}
	gpuenv_buf_free(&names);
	if (!out[GPUENV_DRIFT_GPU_COUNT])
		return gpuenv_oom(ctx, "counting the node's GPUs");
	return 0;
}

/* ---- the expect file ----------------------------------------------------- */

typedef struct rd {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	const gpuenv_kb_t *kb;
	const char *file;
} rd_t;

static int oom(rd_t *r)
{
	return gpuenv_oom(r->ctx, "reading the expect file");
}

static const char *keep(rd_t *r, gpuenv_str_t s)
{
	return gpuenv_arena_strndup(r->a, s.ptr, s.len);
}

/* A key or value for a message: at most 60 bytes (whole UTF-8 sequences),
 * controls as '?'. */
static const char *shown(rd_t *r, gpuenv_str_t s)
{
	size_t n = s.len > 60 ? 60 : s.len;
	char *p;

	while (n < s.len && n && ((unsigned char)s.ptr[n] & 0xc0) == 0x80)
		n--;
	p = gpuenv_arena_strndup(r->a, s.ptr, n);

	for (size_t i = 0; p && i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			p[i] = '?';
	return p ? p : "";
}

static const char *example(int check)
{
	switch (check) {
	case GPUENV_DRIFT_DRIVER: return "driver = \"580.95.05\" or driver = \">=575,<590\"";
	case GPUENV_DRIFT_CUDA: return "cuda = \"13.0\" or cuda = \">=12.8\"";
	case GPUENV_DRIFT_GPU: return "gpu = \"H200\" (through the knowledge base) or gpu = \"==NVIDIA H200\"";
	case GPUENV_DRIFT_GPU_COUNT: return "gpu_count = 8 or gpu_count = \">=4\"";
	default: return "cudnn = \"9.10.2\", cudnn = \">=9.10,<10\" or cudnn = \"none\"";
	}
}

static int bad_value(rd_t *r, const gpuenv_toml_value_t *v, int check, const char *fmt, const char *detail)
{
	gpuenv_fail(r->ctx, GPUENV_EFORMAT, r->file, v->line, v->col, fmt, check_names[check], detail);
	return gpuenv_hint(r->ctx, "write it as %s (docs/drift.md)", example(check));
}

/* A version or a specifier set (the string s of value v) into w. */
static int want_version(rd_t *r, const gpuenv_toml_value_t *v, int check, gpuenv_str_t s,
	gpuenv_drift_want_t *w)
{
	char msg[sizeof(r->ctx->err.msg)];
	int rc;

	if (strchr("<>=!~", s.ptr[0])) {
		w->how = GPUENV_DRIFT_SPEC;
		rc = gpuenv_specset_parse(r->ctx, r->a, s, &w->spec);
		if (rc == 0 && w->spec.n == 0)
			rc = gpuenv_fail(r->ctx, GPUENV_ESPEC, NULL, 0, 0, "no clause");
	} else {
		w->how = GPUENV_DRIFT_EXACT;
		w->have_version = true;
		rc = gpuenv_version_parse(r->ctx, r->a, s, &w->version);
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		snprintf(msg, sizeof(msg), "%s", r->ctx->err.msg);
		return bad_value(r, v, check, w->how == GPUENV_DRIFT_SPEC
			? "'%s': not a PEP 440 specifier set: %s"
			: "'%s': not a PEP 440 version: %s", msg);
	}
	return 0;
}

static int want_gpu(rd_t *r, const gpuenv_toml_value_t *v, gpuenv_str_t s, gpuenv_drift_want_t *w)
{
	gpuenv_kb_gpu_match_t m[8];
	size_t n;

	if (gpuenv_str_startswith(s, "==")) {
		s = gpuenv_str_trim(gpuenv_str_n(s.ptr + 2, s.len - 2));
		if (!s.len)
			return bad_value(r, v, GPUENV_DRIFT_GPU, "'%s': '==' without a name%s", "");
		w->how = GPUENV_DRIFT_NAME_EXACT;
		return (w->name = keep(r, s)) ? 0 : oom(r);
	}
	w->how = GPUENV_DRIFT_NAME;
	if (!(w->name = keep(r, s)))
		return oom(r);
	if (memchr(s.ptr, 0, s.len))
		return bad_value(r, v, GPUENV_DRIFT_GPU, "'%s': a name with a NUL byte%s", "");
	/* the KB's own names and the driver's product names; "the query starts
	 * a name" is too loose for a check that must fail on another GPU */
	n = r->kb ? gpuenv_kb_gpu_find(r->kb, w->name, m, 8) : 0;
	if (n > 8) {
		gpuenv_fail(r->ctx, GPUENV_EFORMAT, r->file, v->line, v->col, "'gpu': \"%s\" names %zu "
			"GPUs of the knowledge base", shown(r, s), n);
		return gpuenv_hint(r->ctx, "name one product (gpuenv kb gpu NAME shows how a name is read)");
	}
	if (n && m[0].how != GPUENV_KB_MATCH_PARTIAL)
		for (size_t i = 0; i < n; i++)
			w->kb_gpus[w->nkb_gpus++] = m[i].gpu;
	return 0;
}

static int want_count(rd_t *r, const gpuenv_toml_value_t *v, gpuenv_drift_want_t *w)
{
	gpuenv_str_t s;

	if (v->type == GPUENV_TOML_INTEGER) {
		if (v->u.i < 0 || v->u.i > MAX_GPU_COUNT)
			return bad_value(r, v, GPUENV_DRIFT_GPU_COUNT, "'%s': %s is not a GPU count",
				gpuenv_arena_printf(r->a, "%lld", (long long)v->u.i).ptr);
		w->text = gpuenv_arena_printf(r->a, "%lld", (long long)v->u.i).ptr;
		if (!w->text)
			return oom(r);
		return want_version(r, v, GPUENV_DRIFT_GPU_COUNT, gpuenv_str(w->text), w);
	}
	if (v->type != GPUENV_TOML_STRING)
		return bad_value(r, v, GPUENV_DRIFT_GPU_COUNT, "'%s' must be an integer or a string, not %s",
			gpuenv_toml_type_name(v->type));
	s = gpuenv_str_trim(v->u.str);
	if (!s.len || gpuenv_str_eq_cstr(s, "none"))
		return bad_value(r, v, GPUENV_DRIFT_GPU_COUNT, "'%s': %s is not a count (a node without "
			"GPUs has gpu_count = 0)", s.len ? "\"none\"" : "\"\"");
	if (!(w->text = keep(r, s)))
		return oom(r);
	return want_version(r, v, GPUENV_DRIFT_GPU_COUNT, s, w);
}

static int read_toml(rd_t *r, const char *text, size_t len, gpuenv_drift_expect_t *out)
{
	gpuenv_toml_doc_t doc;
	int rc;

	if ((rc = gpuenv_toml_doc_init(&doc, r->ctx, r->file)) != 0)
		return rc;
	doc.max_depth = 8; /* the schema is flat */
	if ((rc = gpuenv_toml_parse(&doc, text, len)) != 0)
		goto done;
	for (uint32_t i = 0; i < doc.root->len && !rc; i++) {
		const gpuenv_toml_kv_t *kv = doc.root->items[i];
		const gpuenv_toml_value_t *v = &kv->val;
		gpuenv_drift_want_t *w;
		gpuenv_str_t s;
		int c;

		for (c = 0; c < GPUENV_DRIFT_NCHECKS && !gpuenv_str_eq_cstr(kv->key, check_names[c]); c++)
			;
		if (c == GPUENV_DRIFT_NCHECKS) {
			const char *best = NULL;
			size_t bd = 3;
			const char *k = shown(r, kv->key);
			for (int j = 0; j < GPUENV_DRIFT_NCHECKS; j++) {
				size_t d = gpuenv_edit_distance(k, check_names[j]);
				if (d < bd) {
					bd = d;
					best = check_names[j];
				}
			}
			rc = gpuenv_fail(r->ctx, GPUENV_EFORMAT, r->file, kv->line, kv->col,
				"unknown key '%s'", k);
			if (best)
				gpuenv_hint(r->ctx, "did you mean '%s'?", best);
			else
				gpuenv_hint(r->ctx, "the keys are driver, cuda, gpu, gpu_count, cudnn, nccl and "
						    "tensorrt (docs/drift.md)");
			break;
		}
		w = &out->want[c];
		w->line = v->line;
		w->col = v->col;
		out->nwant++;
		if (c == GPUENV_DRIFT_GPU_COUNT) {
			rc = want_count(r, v, w);
			continue;
		}
		if (v->type != GPUENV_TOML_STRING) {
			rc = bad_value(r, v, c, v->type == GPUENV_TOML_FLOAT || v->type == GPUENV_TOML_INTEGER
				? "'%s' must be a string, not %s: quote the version (a TOML number "
				  "drops the zeros of 12.10 and the dots of 580.95.05)"
				: "'%s' must be a string, not %s", gpuenv_toml_type_name(v->type));
			continue;
		}
		s = gpuenv_str_trim(v->u.str);
		if (!s.len) {
			rc = bad_value(r, v, c, "'%s' is empty%s", "");
			continue;
		}
		if (!(w->text = keep(r, s))) {
			rc = oom(r);
			continue;
		}
		if (gpuenv_str_eq_cstr(s, "none"))
			w->how = GPUENV_DRIFT_NONE;
		else if (c == GPUENV_DRIFT_GPU)
			rc = want_gpu(r, v, s, w);
		else
			rc = want_version(r, v, c, s, w);
	}
	if (!rc && !out->nwant) {
		rc = gpuenv_fail(r->ctx, GPUENV_EFORMAT, r->file, 0, 0, "the expect file names no check");
		gpuenv_hint(r->ctx, "name at least one of driver, cuda, gpu, gpu_count, cudnn, nccl and "
				    "tensorrt, e.g. driver = \">=575,<590\" (docs/drift.md)");
	}
done:
	gpuenv_toml_doc_free(&doc);
	return rc;
}

/* An earlier `probe --json`: every check expected as it was then. */
static int read_snapshot(rd_t *r, const char *text, size_t len, gpuenv_drift_expect_t *out)
{
	const gpuenv_facts_t *f;
	const char *vals[GPUENV_DRIFT_NCHECKS];
	gpuenv_target_t t;
	int rc;

	if ((rc = gpuenv_facts_parse(r->ctx, r->a, text, len, r->file, &f)) != 0 ||
		(rc = gpuenv_target_from_facts(r->ctx, r->a, f, SIZE_MAX, &t)) != 0 ||
		(rc = node_values(r->ctx, r->a, &t, vals)) != 0)
		return rc;
	for (int c = 0; c < GPUENV_DRIFT_NCHECKS; c++) {
		gpuenv_drift_want_t *w = &out->want[c];
		out->nwant++;
		w->text = vals[c] ? vals[c] : "none";
		if (!vals[c])
			w->how = GPUENV_DRIFT_NONE;
		else if (c == GPUENV_DRIFT_GPU) {
			w->how = GPUENV_DRIFT_NAME_EXACT;
			w->name = vals[c];
		} else {
			/* a version the snapshot wrote that is not PEP 440 is
			 * compared as text */
			w->how = GPUENV_DRIFT_EXACT;
			w->have_version = gpuenv_version_parse(r->ctx, r->a, gpuenv_str(vals[c]),
						  &w->version) == 0;
			if (!w->have_version && r->ctx->err.code == -ENOMEM)
				return -ENOMEM;
			gpuenv_error_clear(r->ctx);
		}
	}
	return 0;
}

int gpuenv_drift_expect_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const char *file, const char *text, size_t len, gpuenv_drift_expect_t *out)
{
	rd_t r = { ctx, arena, kb, file ? file : "" };
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (!(out->file = gpuenv_arena_strndup(arena, r.file, strlen(r.file))))
		return oom(&r);
	r.file = out->file;
	if (len > GPUENV_DRIFT_EXPECT_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, r.file, 0, 0, "the expect file is larger than "
			"%zu MiB", GPUENV_DRIFT_EXPECT_MAX >> 20);
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && strchr(" \t\r\n", text[i]) && text[i])
		i++;
	/* a TOML document cannot start with '{' (no bare key does): JSON */
	if (i < len && text[i] == '{') {
		out->from = GPUENV_DRIFT_FROM_SNAPSHOT;
		return read_snapshot(&r, text, len, out);
	}
	out->from = GPUENV_DRIFT_FROM_TOML;
	return read_toml(&r, text, len, out);
}

/* ---- the check ----------------------------------------------------------- */

static bool name_is(const gpuenv_kb_t *kb, const gpuenv_drift_want_t *w, const char *name)
{
	gpuenv_kb_gpu_match_t m;

	if (!w->nkb_gpus)
		return strcmp(name, w->name) == 0;
	if (!kb || gpuenv_kb_gpu_find(kb, name, &m, 1) != 1)
		return false;
	for (size_t i = 0; i < w->nkb_gpus; i++)
		if (w->kb_gpus[i] == m.gpu)
			return true;
	return false;
}

static void judge(gpuenv_arena_t *a, const gpuenv_kb_t *kb, const gpuenv_drift_want_t *w, int c,
	const gpuenv_target_t *node, const char *actual, gpuenv_drift_item_t *it)
{
	const char *what = check_names[c];
	gpuenv_version_t v;
	gpuenv_ctx_t quiet;
	int parsed = 0;

	it->holds = false;
	if (w->how == GPUENV_DRIFT_NONE) {
		it->holds = !actual;
		if (!it->holds)
			it->why = gpuenv_arena_printf(a, "expected no %s; the node has %s", what, actual).ptr;
		return;
	}
	if (!actual) {
		it->why = gpuenv_arena_printf(a, "expected %s %s; the node has none", what, w->text).ptr;
		return;
	}
	/* the node's version is judged, not reported: parse errors stay here */
	gpuenv_ctx_init(&quiet);
	quiet.mem = a->ctx->mem;
	if (w->how == GPUENV_DRIFT_EXACT || w->how == GPUENV_DRIFT_SPEC) {
		parsed = gpuenv_version_parse(&quiet, a, gpuenv_str(actual), &v);
		if (parsed == -ENOMEM)
			return; /* no why: out of memory */
	}
	switch (w->how) {
	case GPUENV_DRIFT_EXACT:
		if (w->have_version && parsed == 0)
			it->holds = gpuenv_version_cmp(&v, &w->version) == 0;
		else
			it->holds = strcmp(actual, w->text) == 0;
		break;
	case GPUENV_DRIFT_SPEC:
		if (parsed != 0) {
			it->why = gpuenv_arena_printf(a, "the node's %s %s is not a PEP 440 version, so %s "
				"cannot hold", what, actual, w->text).ptr;
			return;
		}
		it->holds = gpuenv_specset_contains(&w->spec, gpuenv_str(actual), &v, GPUENV_PRERELEASES_YES);
		break;
	case GPUENV_DRIFT_NAME_EXACT:
		it->holds = strcmp(actual, w->name) == 0;
		break;
	case GPUENV_DRIFT_NAME:
		it->holds = true;
		for (size_t i = 0; i < node->ngpus && it->holds; i++) {
			const char *n = node->gpus[i].name;
			if (!n || !name_is(kb, w, n)) {
				it->holds = false;
				it->why = gpuenv_arena_printf(a, "expected every GPU to be %s%s; GPU %zu is %s",
					w->name, w->nkb_gpus ? " (as the knowledge base names it)" : "", i,
					n ? n : "of unknown name").ptr;
			}
		}
		return;
	}
	if (!it->holds)
		it->why = gpuenv_arena_printf(a, "expected %s %s; the node has %s", what, w->text, actual).ptr;
}

int gpuenv_drift_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_drift_expect_t *e, const gpuenv_target_t *node, gpuenv_drift_report_t *out)
{
	const char *vals[GPUENV_DRIFT_NCHECKS];
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = node_values(ctx, arena, node, vals)) != 0)
		return rc;
	for (int c = 0; c < GPUENV_DRIFT_NCHECKS; c++) {
		const gpuenv_drift_want_t *w = &e->want[c];
		gpuenv_drift_item_t *it;
		out->node[c] = vals[c] ? vals[c] : "none";
		if (w->how == GPUENV_DRIFT_UNSET)
			continue;
		it = &out->items[out->n++];
		it->check = c;
		it->expected = w->text;
		it->actual = out->node[c];
		judge(arena, kb, w, c, node, vals[c], it);
		if (!it->holds && !it->why)
			return gpuenv_oom(ctx, "judging the node");
		out->nfailed += !it->holds;
	}
	return 0;
}

/* ---- Prometheus text exposition ------------------------------------------
 * https://prometheus.io/docs/instrumenting/exposition_formats/: label values
 * are UTF-8 with \\, \" and \n escaped; # HELP and # TYPE once per family,
 * before its samples. */

int gpuenv_prom_label_value(gpuenv_buf_t *out, const char *s)
{
	int rc = 0;

	for (; *s && !rc; s++)
		rc = *s == '\\' ? gpuenv_buf_puts(out, "\\\\")
			: *s == '"' ? gpuenv_buf_puts(out, "\\\"")
			: *s == '\n' ? gpuenv_buf_puts(out, "\\n")
				     : gpuenv_buf_putc(out, *s);
	return rc;
}

static int label(gpuenv_buf_t *out, bool first, const char *name, const char *value)
{
	int rc = gpuenv_buf_printf(out, "%s%s=\"", first ? "{" : ",", name);
	return rc ? rc : (rc = gpuenv_prom_label_value(out, value)) ? rc : gpuenv_buf_putc(out, '"');
}

int gpuenv_drift_metrics(const gpuenv_drift_report_t *r, double probe_seconds, gpuenv_buf_t *out)
{
	static const int info[] = { GPUENV_DRIFT_DRIVER, GPUENV_DRIFT_CUDA, GPUENV_DRIFT_GPU,
		GPUENV_DRIFT_CUDNN, GPUENV_DRIFT_NCCL, GPUENV_DRIFT_TENSORRT };
	int rc;

	rc = gpuenv_buf_puts(out,
		"# HELP gpuenv_info The node as gpuenv probed it: driver version, the newest CUDA it runs, "
		"GPU product names, cuDNN, NCCL and TensorRT versions (none: absent).\n"
		"# TYPE gpuenv_info gauge\n"
		"gpuenv_info");
	for (size_t i = 0; i < sizeof(info) / sizeof(info[0]) && !rc; i++)
		rc = label(out, i == 0, check_names[info[i]], r->node[info[i]] ? r->node[info[i]] : "none");
	if (!rc)
		rc = gpuenv_buf_puts(out, "} 1\n"
			"# HELP gpuenv_drift Whether a check of the expected manifest fails on this node "
			"(1: drift, 0: the check holds).\n"
			"# TYPE gpuenv_drift gauge\n");
	for (size_t i = 0; i < r->n && !rc; i++) {
		const gpuenv_drift_item_t *it = &r->items[i];
		if (!(rc = gpuenv_buf_puts(out, "gpuenv_drift")) &&
			!(rc = label(out, true, "check", check_names[it->check])) &&
			!(rc = label(out, false, "expected", it->expected)) &&
			!(rc = label(out, false, "actual", it->actual)))
			rc = gpuenv_buf_printf(out, "} %d\n", it->holds ? 0 : 1);
	}
	if (!rc && probe_seconds >= 0)
		rc = gpuenv_buf_printf(out,
			"# HELP gpuenv_probe_duration_seconds Wall time of the probe that read the node's "
			"facts.\n"
			"# TYPE gpuenv_probe_duration_seconds gauge\n"
			"gpuenv_probe_duration_seconds %.6f\n", probe_seconds);
	return rc;
}
