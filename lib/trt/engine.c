/* Engines after the plan: a trtexec line judged against a release
 * (--check-command), the engine's record (ENGINE.gpuenv.json) written and
 * read, and a record judged on a node (trt check, preflight --engine). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb_trt.h"
#include "gpuenv/trt.h"
#include "trt_int.h"

/* ---- a trtexec line ------------------------------------------------------------------ */

#define MAX_LINE ((size_t)1 << 16)
#define MAX_WORDS 512

/* Split line as a POSIX shell splits words (quotes, backslashes, a
 * backslash-newline joining lines); no expansions. */
static int split_words(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *line, char ***out,
	size_t *n)
{
	size_t len = strlen(line), nw = 0;
	char **w = gpuenv_arena_calloc(a, MAX_WORDS, sizeof(*w));
	char *cur = gpuenv_arena_alloc(a, len + 1);
	size_t cl = 0;
	bool in_word = false;

	if (!w || !cur)
		return gpuenv_oom(ctx, "splitting a command line");
	if (len > MAX_LINE)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, "--check-command", 0, 0, "the line is longer "
			"than %zu bytes", MAX_LINE);
	for (size_t i = 0; i <= len; i++) {
		char c = line[i];
		if (c == '\0' || c == ' ' || c == '\t' || c == '\n') {
			if (in_word) {
				if (nw == MAX_WORDS)
					return gpuenv_fail(ctx, GPUENV_ETOOBIG, "--check-command", 1,
						(uint32_t)i, "more than %d words", MAX_WORDS);
				w[nw++] = gpuenv_arena_strndup(a, cur, cl);
				if (!w[nw - 1])
					return gpuenv_oom(ctx, "splitting a command line");
				cl = 0;
				in_word = false;
			}
			continue;
		}
		in_word = true;
		if (c == '\\') {
			if (line[i + 1] == '\n') {
				i++;
				in_word = cl > 0;
				continue;
			}
			if (line[i + 1])
				cur[cl++] = line[++i];
			continue;
		}
		if (c == '\'' || c == '"') {
			size_t j = i + 1;
			while (j < len && line[j] != c) {
				if (c == '"' && line[j] == '\\' && j + 1 < len)
					j++;
				cur[cl++] = line[j++];
			}
			if (j >= len)
				return gpuenv_fail(ctx, GPUENV_ESYNTAX, "--check-command", 1,
					(uint32_t)i + 1, "a %s quote is not closed",
					c == '"' ? "double" : "single");
			i = j;
			continue;
		}
		cur[cl++] = c;
	}
	*out = w;
	*n = nw;
	return 0;
}

/* The replacement of a removed or deprecated flag as an argument, value
 * kept ("--memPoolSize=workspace:<MiB>" with 4096 -> "...workspace:4096");
 * NULL when the replacement is prose, not a flag. */
static const char *replace_arg(gpuenv_arena_t *a, gpuenv_str_t rep, const char *value)
{
	const char *lt, *gt;

	if (!rep.ptr || !gpuenv_str_startswith(rep, "--") || memchr(rep.ptr, ' ', rep.len))
		return NULL;
	lt = memchr(rep.ptr, '<', rep.len);
	gt = lt ? memchr(lt, '>', rep.len - (size_t)(lt - rep.ptr)) : NULL;
	if (lt && gt)
		return gpuenv_arena_printf(a, "%.*s%s%.*s", (int)(lt - rep.ptr), rep.ptr,
			value ? value : "", (int)(rep.ptr + rep.len - gt - 1), gt + 1).ptr;
	return value ? gpuenv_arena_printf(a, "%.*s=%s", GPUENV_STR_ARG(rep), value).ptr
		     : gpuenv_arena_strndup(a, rep.ptr, rep.len);
}

int gpuenv_trt_check_command(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_kb_t *kb,
	const char *line, const char *tensorrt, gpuenv_trt_cmd_check_t *out)
{
	gpuenv_kb_ver_t v;
	gpuenv_buf_t b;
	char **w = NULL;
	size_t nw = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if (!tensorrt || !gpuenv_kb_ver_parse(gpuenv_str(tensorrt), &v)) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "'%s' is not a TensorRT version",
			tensorrt ? tensorrt : "");
		return gpuenv_hint(ctx, "a TensorRT version is dotted numbers: 8.5.3.1, 10.3");
	}
	if ((r = split_words(ctx, a, line, &w, &nw)))
		return r;
	if (!nw)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, "--check-command", 0, 0, "the line is empty");
	out->findings = gpuenv_arena_calloc(a, nw, sizeof(*out->findings));
	if (!out->findings)
		return gpuenv_oom(ctx, "checking a command line");
	gpuenv_buf_init(&b, ctx, MAX_LINE * 2);
	for (size_t i = 0; i < nw; i++) {
		const char *arg = w[i], *eq = strchr(arg, '='), *keep = arg;
		gpuenv_str_t name = eq ? (gpuenv_str_t){ arg, (size_t)(eq - arg) } : gpuenv_str(arg);
		const gpuenv_kb_trt_flag_t *row = NULL;
		gpuenv_trt_cmd_finding_t *f = &out->findings[out->nfindings];
		int st;

		if (strncmp(arg, "--", 2) != 0) {
			r = gpuenv_buf_printf(&b, "%s%s", b.len ? " " : "", arg);
			if (r)
				break;
			continue;
		}
		st = gpuenv_kb_trt_flag(kb, name, &v, &row);
		f->arg = arg;
		f->state = st;
		f->source = trt_row_cite(a, row ? &row->row : NULL);
		switch (st) {
		case GPUENV_KB_TRT_FLAG_REMOVED:
		case GPUENV_KB_TRT_FLAG_DEPRECATED: {
			bool removed = st == GPUENV_KB_TRT_FLAG_REMOVED;
			keep = replace_arg(a, row->replacement, eq ? eq + 1 : NULL);
			f->text = gpuenv_arena_printf(a, "%.*s is %s in TensorRT %s (since %.*s)%s%.*s%s",
				GPUENV_STR_ARG(name), removed ? "removed" : "deprecated", tensorrt,
				GPUENV_STR_ARG(removed ? row->removed.str : row->deprecated.str),
				row->replacement.ptr ? ": instead, " : "",
				GPUENV_STR_ARG(row->replacement),
				removed ? (keep ? "" : "; dropped from the line below")
					: "; trtexec still accepts it").ptr;
			if (removed)
				out->nremoved++;
			else
				out->ndeprecated++;
			break;
		}
		case GPUENV_KB_TRT_FLAG_NOT_YET:
			f->text = gpuenv_arena_printf(a, "%.*s came in TensorRT %.*s; trtexec of %s "
				"does not know it", GPUENV_STR_ARG(name), GPUENV_STR_ARG(row->added.str),
				tensorrt).ptr;
			keep = NULL;
			out->nnot_yet++;
			break;
		case GPUENV_KB_TRT_FLAG_UNKNOWN:
			out->nunknown++;
			f->text = "not in the knowledge base's list of trtexec flags (kept as written)";
			break;
		default:
			if (row && row->row.note.ptr && gpuenv_str_eq_cstr(row->flag, "--shapes"))
				f->text = gpuenv_arena_printf(a, "%.*s", GPUENV_STR_ARG(row->row.note)).ptr;
			break;
		}
		if (f->text)
			out->nfindings++;
		if (f->text == NULL && st != GPUENV_KB_TRT_FLAG_OK)
			return gpuenv_oom(ctx, "checking a command line");
		if (keep && (r = gpuenv_buf_printf(&b, "%s%s", b.len ? " " : "", keep)))
			break;
	}
	if (!r)
		out->rewritten = gpuenv_arena_strndup(a, b.data ? b.data : "", b.len);
	gpuenv_buf_free(&b);
	if (r || !out->rewritten)
		return gpuenv_oom(ctx, "checking a command line");
	return 0;
}

/* ---- the record -------------------------------------------------------------------- */

static bool hwlevel_ok(const char *s)
{
	return s && (!strcmp(s, "none") || !strcmp(s, "ampere+") ||
		     !strcmp(s, "same-compute-capability"));
}

int gpuenv_trt_record_json(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_trt_record_t *r,
	const char **out)
{
	gpuenv_json_scope_t sc;
	json_t *o, *prec, *argv;
	char *text = NULL;
	size_t need = 0;
	bool failed;

	*out = NULL;
	gpuenv_json_enter(ctx, &sc);
	prec = json_array();
	argv = json_array();
	for (size_t i = 0; prec && i < r->nprecisions; i++)
		json_array_append_new(prec, json_string(r->precisions[i]));
	for (size_t i = 0; argv && i < r->ntrtexec; i++)
		json_array_append_new(argv, json_string(r->trtexec[i]));
	o = json_pack("{s:s, s:s, s:s?, s:s, s:s, s:b, s:o, s:{s:s, s:s}, s:s, s:o, s:s}",
		"schema", GPUENV_TRT_RECORD_SCHEMA, "tensorrt", r->tensorrt, "gpu", r->gpu,
		"compute_capability", r->compute_capability, "hardware_compatibility",
		r->hardware_compatibility, "version_compatible", r->version_compatible,
		"precisions", prec ? prec : json_null(), "onnx", "path", r->onnx_path, "sha256",
		r->onnx_sha256, "engine_sha256", r->engine_sha256, "trtexec",
		argv ? argv : json_null(), "built_at", r->built_at);
	/* into the arena directly: json_dumpb's size, then the bytes (jansson's
	 * own strings come from its allocator, not malloc) */
	if (o && (need = json_dumpb(o, NULL, 0, JSON_INDENT(2) | JSON_PRESERVE_ORDER)) > 0 &&
		(text = gpuenv_arena_alloc(arena, need + 2)) != NULL) {
		json_dumpb(o, text, need, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		text[need] = '\n';
		text[need + 1] = '\0';
	}
	json_decref(o);
	failed = gpuenv_json_leave(&sc);
	if (text && !failed)
		*out = text;
	if (!*out)
		return o || failed ? gpuenv_oom(ctx, "writing the engine's record")
				   : gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0,
					     "the engine's record misses a field");
	return 0;
}

/* A string field of o into arena; NULL (with ctx->err) when absent or not
 * a string and required. */
static int str_field(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *name, json_t *o,
	const char *key, bool required, const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v && !required)
		return 0;
	if (!json_is_string(v)) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "%s: %s", key,
			v ? "must be a string" : "missing");
		return gpuenv_hint(ctx, "an engine record (schema %s) is written by `gpuenv trt "
					"build` (docs/trt.md, 'Records')", GPUENV_TRT_RECORD_SCHEMA);
	}
	*out = gpuenv_arena_strndup(a, json_string_value(v), json_string_length(v));
	return *out ? 0 : gpuenv_oom(ctx, "reading an engine record");
}

static int record_decode(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, json_t *doc, const char *name,
	gpuenv_trt_record_t *out)
{
	const char *schema;
	gpuenv_kb_ver_t ver;
	json_t *v, *onnx;
	int r;

	if (!json_is_object(doc))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "not a JSON object");
	if ((r = str_field(ctx, a, name, doc, "schema", true, &schema)))
		return r;
	if (strcmp(schema, GPUENV_TRT_RECORD_SCHEMA) != 0) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "schema '%s' is not %s", schema,
			GPUENV_TRT_RECORD_SCHEMA);
		return gpuenv_hint(ctx, "a newer gpuenv may have written it");
	}
	if ((r = str_field(ctx, a, name, doc, "tensorrt", true, &out->tensorrt)) ||
		(r = str_field(ctx, a, name, doc, "gpu", false, &out->gpu)) ||
		(r = str_field(ctx, a, name, doc, "compute_capability", true,
			 &out->compute_capability)) ||
		(r = str_field(ctx, a, name, doc, "hardware_compatibility", true,
			 &out->hardware_compatibility)) ||
		(r = str_field(ctx, a, name, doc, "engine_sha256", false, &out->engine_sha256)) ||
		(r = str_field(ctx, a, name, doc, "built_at", false, &out->built_at)))
		return r;
	if (!gpuenv_kb_ver_parse(gpuenv_str(out->tensorrt), &ver))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "tensorrt: '%s' is not a version",
			out->tensorrt);
	if (!gpuenv_kb_ver_parse(gpuenv_str(out->compute_capability), &ver) || ver.n != 2 ||
		ver.part[0] > 99 || ver.part[1] > 9)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "compute_capability: '%s' is "
			"not a compute capability like \"8.6\"", out->compute_capability);
	if (!hwlevel_ok(out->hardware_compatibility))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "hardware_compatibility: '%s' "
			"is not none, ampere+ or same-compute-capability", out->hardware_compatibility);
	v = json_object_get(doc, "version_compatible");
	if (!json_is_boolean(v))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "version_compatible: %s",
			v ? "must be true or false" : "missing");
	out->version_compatible = json_is_true(v);
	v = json_object_get(doc, "precisions");
	if (!json_is_array(v))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "precisions: %s",
			v ? "must be an array" : "missing");
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *e = json_array_get(v, i);
		if (!json_is_string(e) || gpuenv_trt_precision_parse(json_string_value(e)) <= 0)
			return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "precisions[%zu]: not one "
				"of fp32, fp16, bf16, int8, fp8", i);
		if (out->nprecisions == sizeof(out->precisions) / sizeof(out->precisions[0]))
			return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "precisions: too many");
		out->precisions[out->nprecisions++] =
			gpuenv_trt_precision_name(gpuenv_trt_precision_parse(json_string_value(e)));
	}
	onnx = json_object_get(doc, "onnx");
	if (onnx && !json_is_object(onnx))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0, "onnx: must be an object");
	if (onnx && ((r = str_field(ctx, a, name, onnx, "path", false, &out->onnx_path)) ||
			    (r = str_field(ctx, a, name, onnx, "sha256", false, &out->onnx_sha256))))
		return r;
	v = json_object_get(doc, "trtexec");
	if (v && json_is_array(v) && json_array_size(v) < 4096) {
		const char **argv = gpuenv_arena_calloc(a, json_array_size(v) + 1, sizeof(*argv));
		if (!argv)
			return gpuenv_oom(ctx, "reading an engine record");
		for (size_t i = 0; i < json_array_size(v); i++)
			if (json_is_string(json_array_get(v, i)) &&
				!(argv[out->ntrtexec++] = gpuenv_arena_strndup(a,
					  json_string_value(json_array_get(v, i)),
					  json_string_length(json_array_get(v, i)))))
				return gpuenv_oom(ctx, "reading an engine record");
		out->trtexec = argv;
	}
	return 0;
}

int gpuenv_trt_record_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *text, size_t len,
	const char *name, gpuenv_trt_record_t *out)
{
	gpuenv_json_scope_t sc;
	json_error_t jerr;
	json_t *doc;
	int r;

	memset(out, 0, sizeof(*out));
	if (len > GPUENV_TRT_RECORD_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, name, 0, 0, "larger than %zu bytes",
			GPUENV_TRT_RECORD_MAX);
	gpuenv_json_enter(ctx, &sc);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		bool oom = gpuenv_json_leave(&sc);
		if (oom)
			return gpuenv_oom(ctx, "reading an engine record");
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, name, (uint32_t)(jerr.line > 0 ? jerr.line : 0),
			(uint32_t)(jerr.column > 0 ? jerr.column : 0), "not JSON: %s", jerr.text);
	}
	r = record_decode(ctx, arena, doc, name, out);
	json_decref(doc);
	if (gpuenv_json_leave(&sc))
		return gpuenv_oom(ctx, "reading an engine record");
	return r;
}

/* ---- a record on a node ------------------------------------------------------------------- */

#define REASON(kind, row, ...) trt_note(ctx, a, out->reasons, &out->nreasons, kind, row, __VA_ARGS__)
/* A no-go reason: the engine does not load or run there. */
#define BLOCKER(row, ...) blocker(out, REASON(GPUENV_TRT_NOTE_WARN, row, __VA_ARGS__))

static int blocker(gpuenv_trt_verdict_t *out, int r)
{
	if (!r && out->nreasons)
		out->reasons[out->nreasons - 1].blocks = true;
	return r;
}

static bool ver3_eq(const gpuenv_kb_ver_t *x, const gpuenv_kb_ver_t *y)
{
	/* the engine's release against the runtime's: major.minor.patch (the
	 * banner gives no build number, so a fourth part is not compared) */
	for (int i = 0; i < 3; i++)
		if ((i < x->n ? x->part[i] : 0) != (i < y->n ? y->part[i] : 0))
			return false;
	return true;
}

/* The node's TensorRT: the libnvinfer the probe found (the environment's
 * copy first, as gpuenv_target_from_facts orders them). */
static const char *node_tensorrt(const gpuenv_target_t *t)
{
	for (size_t i = 0; i < t->nlibs; i++)
		if (t->libs[i].name && strcmp(t->libs[i].name, "nvinfer") == 0)
			return t->libs[i].version;
	return NULL;
}

/* Whether an engine built on cc bm.bn with level hw runs on a GPU gm.gn. */
static bool hw_runs(const gpuenv_kb_t *kb, const char *hw, int bm, int bn, int gm, int gn,
	const gpuenv_kb_trt_hwcompat_t **row)
{
	*row = NULL;
	if (!strcmp(hw, "none") || !strcmp(hw, "same-compute-capability")) {
		if (strcmp(hw, "none"))
			*row = gpuenv_kb_trt_hwcompat(kb, gpuenv_str("same-compute-capability"));
		return bm == gm && bn == gn;
	}
	*row = gpuenv_kb_trt_hwcompat(kb, gpuenv_str("ampere+"));
	if (!*row)
		return bm == gm && bn == gn;
	return gm * 10 + gn >= (int)((*row)->cc_min.part[0] * 10 + (*row)->cc_min.part[1]);
}

/* Whether TensorRT nv loads the engine of record r, built by ev: the same
 * release, or for a version-compatible engine a runtime at least as new as
 * the builder (and the feature's floor, *vcp the row that says so). */
static bool runtime_loads(const gpuenv_kb_t *kb, const gpuenv_trt_record_t *r, const gpuenv_kb_ver_t *ev,
	const gpuenv_kb_ver_t *nv, const gpuenv_kb_trt_vcompat_t **vcp)
{
	const gpuenv_kb_trt_vcompat_t *vc = gpuenv_kb_trt_vcompat(kb);

	if (vcp)
		*vcp = vc;
	if (!r->version_compatible)
		return ver3_eq(ev, nv);
	/* the record says version-compatible, but a builder older than the
	 * feature could not have made it so */
	return vc && gpuenv_kb_ver_cmp(ev, &vc->tensorrt_min) >= 0 && gpuenv_kb_ver_cmp(nv, &vc->runtime_min) >= 0 &&
	       gpuenv_kb_ver_cmp(nv, ev) >= 0;
}

bool gpuenv_trt_runtime_loads(const gpuenv_kb_t *kb, const gpuenv_trt_record_t *r, const char *tensorrt)
{
	gpuenv_kb_ver_t ev, nv;

	return tensorrt && gpuenv_kb_ver_parse(gpuenv_str(r->tensorrt), &ev) &&
	       gpuenv_kb_ver_parse(gpuenv_str(tensorrt), &nv) && runtime_loads(kb, r, &ev, &nv, NULL);
}

int gpuenv_trt_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_kb_t *kb,
	const gpuenv_trt_record_t *r, const gpuenv_target_t *t, gpuenv_trt_verdict_t *out)
{
	return gpuenv_trt_check_runtime(ctx, a, kb, r, node_tensorrt(t), NULL, t, out);
}

int gpuenv_trt_check_runtime(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_kb_t *kb,
	const gpuenv_trt_record_t *r, const char *tensorrt, const char *from, const gpuenv_target_t *t,
	gpuenv_trt_verdict_t *out)
{
	const char *here = from ? gpuenv_arena_printf(a, "in %s", from).ptr : "here";
	gpuenv_kb_ver_t ev, nv, cc;
	int bm, bn;
	size_t runs = 0, seen = 0;

	memset(out, 0, sizeof(*out));
	if (!gpuenv_kb_ver_parse(gpuenv_str(r->tensorrt), &ev) ||
		!gpuenv_kb_ver_parse(gpuenv_str(r->compute_capability), &cc) || cc.n != 2)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0, "the record's tensorrt or "
			"compute_capability is malformed");
	bm = (int)cc.part[0];
	bn = (int)cc.part[1];
	out->what = gpuenv_arena_printf(a, "the engine built for sm_%d%d%s%s%s with TensorRT %s%s",
		bm, bn, r->gpu ? " (" : "", r->gpu ? r->gpu : "", r->gpu ? ")" : "", r->tensorrt,
		strcmp(r->hardware_compatibility, "none") || r->version_compatible
			? gpuenv_arena_printf(a, " (%s%s%s)",
				  strcmp(r->hardware_compatibility, "none")
					  ? gpuenv_arena_printf(a, "hardware compatibility %s",
						    r->hardware_compatibility).ptr : "",
				  strcmp(r->hardware_compatibility, "none") && r->version_compatible
					  ? ", " : "",
				  r->version_compatible ? "version-compatible" : "").ptr
			: "").ptr;
	if (!out->what)
		return gpuenv_oom(ctx, "judging an engine");
	out->go = true;

	/* TensorRT: the same release, unless version-compatible */
	out->tensorrt = tensorrt;
	out->tensorrt_from = from ? from : "libnvinfer";
	out->tensorrt_ok = false;
	if (!here)
		return gpuenv_oom(ctx, "judging an engine");
	if (!out->tensorrt) {
		out->go = false;
		if (from ? REASON(GPUENV_TRT_NOTE_WARN, NULL, "no TensorRT known %s: the engine of "
				   "TensorRT %s is not judged against it", here, r->tensorrt)
			 : BLOCKER(NULL, "no TensorRT on this node: the probe found no "
				   "libnvinfer (system or a venv's tensorrt wheel); install TensorRT %s "
				   "(pip install tensorrt==%s)", r->tensorrt, r->tensorrt))
			return -ENOMEM;
	} else if (!gpuenv_kb_ver_parse(gpuenv_str(out->tensorrt), &nv)) {
		out->go = false;
		if (REASON(GPUENV_TRT_NOTE_WARN, NULL, "the TensorRT %s reports version '%s', "
			    "which gpuenv cannot compare", here, out->tensorrt))
			return -ENOMEM;
	} else if (r->version_compatible) {
		const gpuenv_kb_trt_vcompat_t *vc;
		out->tensorrt_ok = runtime_loads(kb, r, &ev, &nv, &vc);
		if (!out->tensorrt_ok) {
			out->go = false;
			if (BLOCKER(vc ? &vc->row : NULL, "TensorRT %s %s; a "
				    "version-compatible engine of TensorRT %s runs on that release and "
				    "newer ones (from %s), never on an older runtime: install TensorRT "
				    ">= %s, or rebuild with TensorRT %s", out->tensorrt, here, r->tensorrt,
				    vc ? trt_kbs(a, vc->tensorrt_min.str) : "8.6", r->tensorrt, out->tensorrt))
				return -ENOMEM;
		} else if (REASON(GPUENV_TRT_NOTE_INFO, &vc->row, "TensorRT %s %s runs this "
				   "version-compatible engine of TensorRT %s", out->tensorrt, here, r->tensorrt)) {
			return -ENOMEM;
		}
	} else if (!(out->tensorrt_ok = runtime_loads(kb, r, &ev, &nv, NULL))) {
		out->go = false;
		if (BLOCKER(NULL, "TensorRT %s %s, the engine is of TensorRT "
			    "%s: an engine runs only on the TensorRT release that built it "
			    "(deserialize_cuda_engine() returns None): rebuild it %s with "
			    "TensorRT %s (gpuenv trt build), install TensorRT %s, or build it with "
			    "--portable-tensorrt (--versionCompatible, TensorRT 8.6+)",
			    out->tensorrt, here, r->tensorrt, here, out->tensorrt, r->tensorrt))
			return -ENOMEM;
	} else if (REASON(GPUENV_TRT_NOTE_INFO, NULL, "TensorRT %s %s: the release that built "
			   "the engine", out->tensorrt, here)) {
		return -ENOMEM;
	}
	out->gpu_reasons = out->nreasons;
	if (!t)
		return 0; /* the GPUs are not known */

	/* the GPUs */
	for (size_t i = 0; i < t->ngpus; i++) {
		const gpuenv_target_gpu_t *g = &t->gpus[i];
		const gpuenv_kb_trt_hwcompat_t *hrow;
		const char *name = g->name ? g->name : "a GPU";
		bool ok;
		if (!g->visible || g->cc_major < 0)
			continue;
		seen++;
		ok = hw_runs(kb, r->hardware_compatibility, bm, bn, g->cc_major, g->cc_minor, &hrow);
		if (ok) {
			runs++;
			if (REASON(GPUENV_TRT_NOTE_INFO, hrow ? &hrow->row : NULL, "GPU %zu, %s, is sm_%d%d: %s",
				    i, name, g->cc_major, g->cc_minor,
				    !strcmp(r->hardware_compatibility, "ampere+")
					    ? "hardware compatibility ampere+ covers it"
					    : "the compute capability the engine was built for"))
				return -ENOMEM;
			for (size_t k = 0; k < r->nprecisions; k++) {
				const gpuenv_kb_trt_precision_t *prow;
				if (out->tensorrt && !gpuenv_kb_ver_parse(gpuenv_str(out->tensorrt), &nv))
					break;
				if (!out->tensorrt)
					nv = ev;
				if (!gpuenv_kb_trt_precision(kb, r->precisions[k], &nv, g->cc_major,
					    g->cc_minor, &prow) &&
					REASON(GPUENV_TRT_NOTE_WARN, NULL, "GPU %zu, %s: TensorRT's "
						"precision matrix does not list compute capability %d.%d "
						"for %s: the engine's %s layers run slowly here", i, name,
						g->cc_major, g->cc_minor, r->precisions[k], r->precisions[k]))
					return -ENOMEM;
			}
			continue;
		}
		if (!strcmp(r->hardware_compatibility, "none") ||
			!strcmp(r->hardware_compatibility, "same-compute-capability")) {
			const gpuenv_kb_trt_hwcompat_t *amp = gpuenv_kb_trt_hwcompat(kb, gpuenv_str("ampere+"));
			bool amp_here = amp && g->cc_major * 10 + g->cc_minor >=
				(int)(amp->cc_min.part[0] * 10 + amp->cc_min.part[1]);
			bool amp_build = amp && bm * 10 + bn >=
				(int)(amp->cc_min.part[0] * 10 + amp->cc_min.part[1]);
			if (BLOCKER(amp ? &amp->row : NULL,
				    "GPU %zu, %s, is sm_%d%d; the engine was built for sm_%d%d with "
				    "TensorRT %s: rebuild on a %s (gpuenv trt build there)%s", i, name,
				    g->cc_major, g->cc_minor, bm, bn, r->tensorrt, name,
				    amp_here && amp_build
					    ? ", or build with --hardwareCompatibilityLevel=ampere+ "
					      "(gpuenv trt optimize --portable-gpus; TensorRT 8.6+)"
					    : gpuenv_arena_printf(a, ", or build with "
						  "--hardwareCompatibilityLevel=ampere+ (needs sm_80+ on "
						  "both sides, so not for %s)", amp_here ? "this build GPU"
						  : gpuenv_arena_printf(a, "a %s", name).ptr).ptr))
				return -ENOMEM;
		} else if (BLOCKER(hrow ? &hrow->row : NULL,
				   "GPU %zu, %s, is sm_%d%d: hardware compatibility %s covers compute "
				   "capability %s and newer only: rebuild on a %s", i, name,
				   g->cc_major, g->cc_minor, r->hardware_compatibility,
				   hrow ? trt_kbs(a, hrow->cc_min.str) : "8.0", name)) {
			return -ENOMEM;
		}
	}
	if (!seen) {
		out->go = false;
		if (BLOCKER(NULL, "no visible NVIDIA GPU with a known compute "
			    "capability on this node"))
			return -ENOMEM;
	} else if (!runs) {
		out->go = false;
	}
	return 0;
}
