/* The torch build each target gets, and why: every judgement is the
 * knowledge base's (gpuenv_kb_torch_pick for "auto", gpuenv_kb_torch_check
 * for a build the user named or pinned), over the target's KB view
 * (gpuenv_target_kb), so `gpuenv lock`, `gpuenv kb torch --gpu G --driver D`
 * and preflight give one answer.  Here: which question to ask (a pinned
 * source, a named backend, the project's torch constraint) and the
 * reason text citing the KB rows. */
#include "manifest_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"

#define MAX_KT 16
#define MAX_TORCH_SPECS 16

/* ---- names ------------------------------------------------------------------------ */

static size_t norm_name(const char *name, char *buf, size_t size)
{
	size_t n = name ? gpuenv_name_normalize_to(gpuenv_str(name), buf, size) : SIZE_MAX;

	if (n == SIZE_MAX)
		buf[0] = '\0';
	return n == SIZE_MAX ? 0 : n;
}

static int digits_at(const char *s, size_t n, size_t *len)
{
	int v = 0;
	size_t i = 0;

	while (i < n && s[i] >= '0' && s[i] <= '9' && i < 4)
		v = v * 10 + (s[i++] - '0');
	*len = i;
	return v;
}

int gpuenv_manifest_cuda_major(const char *name)
{
	char b[128];
	size_t n = norm_name(name, b, sizeof(b)), dl;
	int v;

	if (!n)
		return 0;
	/* nvidia-cudnn-cu12, nvidia-cublas-cu11 */
	if (n > 11 && !strncmp(b, "nvidia-", 7)) {
		const char *dash = strrchr(b, '-');
		if (dash > b + 7 && !strncmp(dash, "-cu", 3)) {
			v = digits_at(dash + 3, strlen(dash + 3), &dl);
			if (dl >= 1 && dl <= 2 && !dash[3 + dl])
				return v;
		}
		return 0;
	}
	/* cupy-cuda12x (a major), cupy-cuda117 / cupy-cuda102 (major and one minor digit) */
	if (!strncmp(b, "cupy-cuda", 9)) {
		v = digits_at(b + 9, n - 9, &dl);
		if (dl >= 1 && b[9 + dl] == 'x' && !b[10 + dl])
			return v;
		if (dl >= 2 && dl <= 3 && !b[9 + dl])
			return v / 10;
		return 0;
	}
	/* jax-cuda12-plugin, jax-cuda12-pjrt */
	if (!strncmp(b, "jax-cuda", 8)) {
		v = digits_at(b + 8, n - 8, &dl);
		if (dl >= 1 && dl <= 2 && (!strcmp(b + 8 + dl, "-plugin") || !strcmp(b + 8 + dl, "-pjrt")))
			return v;
	}
	return 0;
}

bool gpuenv_manifest_torch_family(const char *name)
{
	/* the packages download.pytorch.org publishes per build (<backend>/) */
	static const char *const fam[] = { "torch", "torchvision", "torchaudio", "torchtext", "torchdata",
		"pytorch-triton", "torchao", "torchrec", "fbgemm-gpu" };
	char b[128];

	if (!norm_name(name, b, sizeof(b)))
		return false;
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++)
		if (!strcmp(b, fam[i]))
			return true;
	return gpuenv_manifest_cuda_major(b) > 0;
}

bool gpuenv_manifest_torch_index_package(const char *name)
{
	char b[128];

	return gpuenv_manifest_torch_family(name) || (norm_name(name, b, sizeof(b)) && !strcmp(b, "triton"));
}

/* ---- the target as the KB sees it ------------------------------------------------------ */

static const char *cite(const gpuenv_kb_row_t *row, char *buf, size_t size)
{
	char w[64];

	if (!row) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, size, " [%s]", gpuenv_kb_row_where(row, w, sizeof(w)));
	return buf;
}

/* "NVIDIA T4 (sm_75), driver 525.85.12" */
static void describe(const gpuenv_manifest_target_t *t, char *buf, size_t size)
{
	const gpuenv_target_t *x = &t->target;
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < x->ngpus && n < size; i++) {
		int w = snprintf(buf + n, size - n, "%s%s (sm_%d%d)", i ? ", " : "",
			x->gpus[i].name ? x->gpus[i].name : "GPU", x->gpus[i].cc_major, x->gpus[i].cc_minor);
		n += w > 0 ? (size_t)w : 0;
	}
	if (n < size && x->driver)
		snprintf(buf + n, size - n, ", driver %s", x->driver);
	else if (n < size && x->driver_cuda)
		snprintf(buf + n, size - n, ", a driver for CUDA <= %s", x->driver_cuda);
}

/* the `gpuenv kb torch` command that asks the same question */
static void kb_cmd(const gpuenv_manifest_target_t *t, char *buf, size_t size)
{
	const gpuenv_target_t *x = &t->target;

	snprintf(buf, size, "gpuenv kb torch%s%s%s%s%s", x->ngpus && x->gpus[0].name ? " --gpu \"" : "",
		x->ngpus && x->gpus[0].name ? x->gpus[0].name : "", x->ngpus && x->gpus[0].name ? "\"" : "",
		x->driver ? " --driver " : "", x->driver ? x->driver : "");
}

int gpuenv_manifest_cuda_check(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb, const gpuenv_manifest_target_t *t,
	const char *name)
{
	int major = gpuenv_manifest_cuda_major(name);
	gpuenv_kb_target_t kts[MAX_KT];
	gpuenv_kb_ver_t cv;
	char num[16], c1[80], c2[80], d[200];
	size_t n;

	if (!major)
		return 0;
	if (!t->target.ngpus) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"%s is a CUDA %d package and target %s has no GPU (gpu = \"none\")", name, major, t->name);
		return gpuenv_hint(ctx, "declare it in a group only the GPU targets name");
	}
	if (!kb)
		return 0;
	snprintf(num, sizeof(num), "%d.0", major);
	if (!gpuenv_kb_ver_parse(gpuenv_str(num), &cv))
		return 0;
	n = gpuenv_target_kb(kb, &t->target, kts, MAX_KT);
	for (size_t i = 0; i < n && i < MAX_KT; i++) {
		gpuenv_kb_driver_cuda_t dc;
		if (gpuenv_kb_driver_runs_cuda(kb, &kts[i], &cv, &dc) != GPUENV_KB_RUNS_NO)
			continue;
		describe(t, d, sizeof(d));
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"%s is built for CUDA %d, and target %s (%s) runs CUDA <= %.*s%s%s", name, major, t->name,
			d, dc.max.n ? (int)dc.max.str.len : 1, dc.max.n ? dc.max.str.ptr : "?",
			cite(dc.max_row ? &dc.max_row->row : NULL, c1, sizeof(c1)),
			dc.mvc ? "" : "");
		if (dc.mvc)
			return gpuenv_hint(ctx, "use the package for CUDA %u, or a driver >= %.*s (where CUDA %d.x "
						"runs through minor-version compatibility%s)",
				dc.max.n ? dc.max.part[0] : 0, GPUENV_STR_ARG(dc.mvc->driver_min.str), major,
				cite(&dc.mvc->row, c2, sizeof(c2)));
		if (dc.ga)
			return gpuenv_hint(ctx, "use the package for CUDA %u, or a driver >= %.*s%s",
				dc.max.n ? dc.max.part[0] : 0, GPUENV_STR_ARG(dc.ga->driver_linux.str),
				cite(&dc.ga->row, c2, sizeof(c2)));
		return ctx->err.code;
	}
	return 0;
}

/* ---- the torch constraint ---------------------------------------------------------------- */

struct torch_spec {
	const gpuenv_kb_t *kb;
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const gpuenv_specset_t *sets[MAX_TORCH_SPECS];
	size_t n;
	const char *text; /* "torch>=2.1.0,<3.0.0" for messages */
	bool oom;	  /* a version could not be parsed for want of memory */
};

static bool version_in(struct torch_spec *ts, const char *text)
{
	gpuenv_version_t v;
	gpuenv_error_t keep = ts->ctx->err;

	int r = gpuenv_version_parse(ts->ctx, ts->arena, gpuenv_str(text), &v);

	if (r) {
		ts->oom |= r == -ENOMEM; /* reported by the caller: never a silent "no" */
		ts->ctx->err = keep;
		return false;
	}
	for (size_t i = 0; i < ts->n; i++)
		if (!gpuenv_specset_contains(ts->sets[i], gpuenv_str(text), &v, GPUENV_PRERELEASES_DEFAULT))
			return false;
	return true;
}

/* a build's release series (2.5) is allowed when its first release (2.5.0)
 * or the newest the KB knows (2.5.1) satisfies every torch requirement */
static bool torch_allows(void *arg, const gpuenv_kb_torch_variant_t *v)
{
	struct torch_spec *ts = arg;
	const gpuenv_kb_ver_t *latest;
	char buf[48];

	if (!ts->n)
		return true;
	snprintf(buf, sizeof(buf), "%u.%u.0", v->torch.part[0], v->torch.part[1]);
	if (version_in(ts, buf))
		return true;
	latest = gpuenv_kb_torch_latest(ts->kb, v);
	if (latest) {
		snprintf(buf, sizeof(buf), "%.*s", GPUENV_STR_ARG(latest->str));
		return version_in(ts, buf);
	}
	return false;
}

/* ---- reasons --------------------------------------------------------------------------- */

/* one reason line: "+ text [file:line]" (an explanation: the text alone) */
static bool reason_shown(const gpuenv_kb_reason_t *x, bool only_no, int pass, size_t shown)
{
	if (!only_no)
		return true;
	/* an explanation: the GPU's reasons before the driver's, three at most */
	return x->verdict == GPUENV_KB_NO && shown < 3 &&
		(x->src && x->src->file == GPUENV_KB_CUDA) == (pass == 1);
}

static int reasons_text(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *kts, size_t n,
	const gpuenv_kb_torch_variant_t *v, gpuenv_arena_t *arena, gpuenv_buf_t *b, bool only_no)
{
	size_t shown = 0;

	for (int pass = 0; pass < (only_no ? 2 : 1); pass++) {
		for (size_t i = 0; i < n; i++) {
			gpuenv_kb_torch_verdict_t vd;
			int r = gpuenv_kb_torch_check(kb, &kts[i], v, arena, &vd);
			if (r)
				return r;
			for (size_t k = 0; k < vd.n_reason; k++) {
				const gpuenv_kb_reason_t *x = &vd.reason[k];
				char c1[80], c2[80];
				if (!reason_shown(x, only_no, pass, shown))
					continue;
				shown++;
				r = gpuenv_buf_printf(b, "%s%s%s%s%s", b->len ? (only_no ? "; " : "\n") : "",
					only_no ? "" : x->verdict == GPUENV_KB_YES ? "+ "
						: x->verdict == GPUENV_KB_NO	     ? "- "
										     : "? ",
					x->text, cite(x->src, c1, sizeof(c1)), cite(x->src2, c2, sizeof(c2)));
				if (r)
					return r;
			}
		}
	}
	return 0;
}

/* does v run on every KB target (no "no" among the reasons)? */
static int runs_on(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *kts, size_t n,
	const gpuenv_kb_torch_variant_t *v, gpuenv_arena_t *arena, bool *ok)
{
	*ok = true;
	for (size_t i = 0; i < n && *ok; i++) {
		gpuenv_kb_torch_verdict_t vd;
		int r = gpuenv_kb_torch_check(kb, &kts[i], v, arena, &vd);
		if (r)
			return r;
		for (size_t k = 0; k < vd.n_reason; k++)
			if (vd.reason[k].verdict == GPUENV_KB_NO)
				*ok = false;
	}
	return 0;
}

struct bk {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const gpuenv_manifest_t *m;
	const gpuenv_manifest_target_t *t;
	const gpuenv_kb_t *kb;
	gpuenv_kb_target_t kts[MAX_KT];
	size_t nkt;
	struct torch_spec spec;
	gpuenv_backend_choice_t *out;
	gpuenv_buf_t why; /* the reason being written */
};

static int fail_at(struct bk *B, int code, const char *fmt, ...) GPUENV_PRINTF(3, 4);
static int fail_at(struct bk *B, int code, const char *fmt, ...)
{
	char msg[sizeof(B->ctx->err.msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(B->ctx, code, B->m->path, B->t->line, 0, "%s", msg);
}

/* the build the KB picks (NULL: none runs with this driver; *up set when
 * one would after a driver upgrade) */
static int kb_pick(struct bk *B, bool constrained, gpuenv_kb_pick_t *pk)
{
	gpuenv_kb_pick_req_t req;

	memset(&req, 0, sizeof(req));
	req.targets = B->kts;
	req.n_targets = B->nkt;
	req.allow_driver_upgrade = true; /* as `gpuenv kb torch` asks */
	if (gpuenv_kb_torch_pick_among(B->kb, &req, constrained ? torch_allows : NULL, &B->spec, B->arena, pk))
		return gpuenv_oom(B->ctx, "choosing a torch build");
	return 0;
}

/* "torch 2.5 cu118 (gpuenv kb torch --gpu ...)" of what would run, for hints */
static void would_run(struct bk *B, char *buf, size_t size)
{
	gpuenv_kb_pick_t pk;
	char cmd[200];

	buf[0] = '\0';
	if (kb_pick(B, true, &pk) || !pk.variant || pk.driver_upgrade) {
		if (!kb_pick(B, false, &pk) && pk.variant && !pk.driver_upgrade)
			snprintf(buf, size, "torch %.*s %.*s runs there, outside the project's torch constraint",
				GPUENV_STR_ARG(pk.variant->torch.str), GPUENV_STR_ARG(pk.variant->tag));
		return;
	}
	kb_cmd(B->t, cmd, sizeof(cmd));
	if (snprintf(buf, size, "the build that runs there: %.*s (torch %.*s, `%s`)",
		    GPUENV_STR_ARG(pk.variant->tag), GPUENV_STR_ARG(pk.variant->torch.str), cmd) < 0)
		buf[0] = '\0';
}

static int set_index(struct bk *B, const char *backend)
{
	B->out->backend = backend;
	B->out->index_url = gpuenv_arena_printf(B->arena, "%s/%s/", B->m->torch_index, backend).ptr;
	return B->out->index_url ? 0 : gpuenv_oom(B->ctx, "the torch backend");
}

static int finish_reason(struct bk *B)
{
	if (!B->why.data && gpuenv_buf_puts(&B->why, ""))
		return gpuenv_oom(B->ctx, "the torch backend");
	B->out->reason = gpuenv_arena_strndup(B->arena, B->why.data, B->why.len);
	return B->out->reason ? 0 : gpuenv_oom(B->ctx, "the torch backend");
}

/* the tags of the stable builds within the constraint that run on the
 * target, the pick's first (B->out->offer_tags) */
static int offer_tags(struct bk *B)
{
	const char **tags = gpuenv_arena_calloc(B->arena, B->kb->n_torch_variant + 1, sizeof(*tags));
	size_t n = 0;

	if (!tags)
		return gpuenv_oom(B->ctx, "the torch backend");
	tags[n++] = B->out->backend;
	for (size_t i = 0; i < B->kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &B->kb->torch_variant[i];
		bool ok, seen = false;
		if (!gpuenv_str_eq_cstr(v->channel, "stable") || !torch_allows(&B->spec, v))
			continue;
		for (size_t k = 0; k < n; k++)
			seen |= gpuenv_str_eq_cstr(v->tag, tags[k]);
		if (seen)
			continue;
		if (runs_on(B->kb, B->kts, B->nkt, v, B->arena, &ok))
			return gpuenv_oom(B->ctx, "the torch backend");
		if (ok && !(tags[n++] = gpuenv_arena_strndup(B->arena, v->tag.ptr, v->tag.len)))
			return gpuenv_oom(B->ctx, "the torch backend");
	}
	B->out->offer_tags = tags;
	B->out->noffer_tags = n;
	return 0;
}

static int choose_auto(struct bk *B)
{
	gpuenv_kb_pick_t pk;
	char d[200], cmd[200], c1[80], hint[240];
	int r;

	describe(B->t, d, sizeof(d));
	B->out->how = "auto";
	if (!B->t->target.ngpus) {
		if ((r = set_index(B, "cpu")))
			return r;
		return gpuenv_buf_printf(&B->why, "auto: cpu, target %s has no GPU (gpu = \"none\")", B->t->name)
			? gpuenv_oom(B->ctx, "the torch backend") : 0;
	}
	if ((r = kb_pick(B, true, &pk)))
		return r;
	if (pk.variant && pk.driver_upgrade) {
		fail_at(B, GPUENV_EUNSUPPORTED,
			"target %s (%s): no torch build%s%s runs with this driver; torch %.*s %.*s would after "
			"upgrading the driver to >= %.*s%s", B->t->name, d, B->spec.n ? " within " : "",
			B->spec.n ? B->spec.text : "", GPUENV_STR_ARG(pk.variant->torch.str),
			GPUENV_STR_ARG(pk.variant->tag), GPUENV_STR_ARG(pk.driver_upgrade->driver_linux.str),
			cite(&pk.driver_upgrade->row, c1, sizeof(c1)));
		return gpuenv_hint(B->ctx, "upgrade the target's driver, or name an older build with torch-backend");
	}
	if (!pk.variant) {
		/* why the newest allowed stable build does not run */
		const gpuenv_kb_torch_variant_t *best = NULL;
		for (size_t i = 0; i < B->kb->n_torch_variant; i++) {
			const gpuenv_kb_torch_variant_t *v = &B->kb->torch_variant[i];
			if (!gpuenv_str_eq_cstr(v->channel, "stable") || !torch_allows(&B->spec, v))
				continue;
			if (!best || gpuenv_kb_ver_cmp(&v->torch, &best->torch) > 0 ||
				(!gpuenv_kb_ver_cmp(&v->torch, &best->torch) && gpuenv_kb_ver_cmp(&v->cuda, &best->cuda) > 0))
				best = v;
		}
		if (best && (r = reasons_text(B->kb, B->kts, B->nkt, best, B->arena, &B->why, true)))
			return gpuenv_oom(B->ctx, "the torch backend");
		would_run(B, hint, sizeof(hint));
		fail_at(B, GPUENV_EUNSUPPORTED, "target %s (%s): no torch build%s%s in the knowledge base runs there%s%.*s%s%.*s%s",
			B->t->name, d, B->spec.n ? " within " : "", B->spec.n ? B->spec.text : "",
			best ? "; the newest, torch " : "", best ? (int)best->torch.str.len : 0,
			best ? best->torch.str.ptr : "", best ? " " : "", best ? (int)best->tag.len : 0,
			best ? best->tag.ptr : "", best ? ":" : "");
		if (best && B->why.data) {
			size_t l = strlen(B->ctx->err.msg);
			snprintf(B->ctx->err.msg + l, sizeof(B->ctx->err.msg) - l, " %s", B->why.data);
			for (char *p = B->ctx->err.msg; *p; p++)
				if (*p == '\n')
					*p = ';';
		}
		return gpuenv_hint(B->ctx, "%s", hint[0] ? hint : "no torch build in the knowledge base runs on that "
								 "GPU: use an older GPU-less target (gpu = \"none\")");
	}
	if ((r = set_index(B, gpuenv_arena_strndup(B->arena, pk.variant->tag.ptr, pk.variant->tag.len))))
		return r;
	B->out->cuda = gpuenv_arena_strndup(B->arena, pk.variant->cuda.str.ptr, pk.variant->cuda.str.len);
	B->out->variant = pk.variant;
	if ((r = offer_tags(B)))
		return r;
	kb_cmd(B->t, cmd, sizeof(cmd));
	r = gpuenv_buf_printf(&B->why, "auto: torch %.*s %.*s (CUDA %.*s), the build `%s` picks%s%s%s%s",
		GPUENV_STR_ARG(pk.variant->torch.str), GPUENV_STR_ARG(pk.variant->tag),
		GPUENV_STR_ARG(pk.variant->cuda.str), cmd, B->spec.n ? " within " : "",
		B->spec.n ? B->spec.text : "", cite(&pk.variant->row, c1, sizeof(c1)),
		pk.runs == GPUENV_KB_RUNS_MINOR_COMPAT ? " (no build the driver fully supports covers the GPU: "
							  "minor-version compatibility)" : "");
	if (!r)
		r = reasons_text(B->kb, B->kts, B->nkt, pk.variant, B->arena, &B->why, false);
	return r ? gpuenv_oom(B->ctx, "the torch backend") : 0;
}

/* a build the user named (torch-backend) or pinned (a source ending in
 * /cuXYZ or /cpu): checked, never replaced */
static int check_named(struct bk *B, const char *backend, const char *how)
{
	const gpuenv_kb_torch_variant_t *best = NULL, *newest = NULL;
	char d[200], hint[240], c1[80], tags[200] = "";
	int r;

	describe(B->t, d, sizeof(d));
	B->out->backend = backend;
	if (!(B->out->how = gpuenv_arena_strndup(B->arena, how, strlen(how))))
		return gpuenv_oom(B->ctx, "the torch backend");
	if (!strcmp(backend, "cpu")) {
		if (B->t->target.ngpus) {
			would_run(B, hint, sizeof(hint));
			fail_at(B, GPUENV_EUNSUPPORTED,
				"target %s has a GPU (%s) and %s the CPU-only build: gpuenv never gives a GPU "
				"target a build that leaves its GPU unused", B->t->name, d, how);
			return gpuenv_hint(B->ctx, "%s%sa CPU target is written gpu = \"none\"", hint,
				hint[0] ? "; " : "");
		}
		return gpuenv_buf_printf(&B->why, "%s: cpu, and target %s has no GPU", how, B->t->name)
			? gpuenv_oom(B->ctx, "the torch backend") : 0;
	}
	mf_backend_known(B->kb, backend, tags, sizeof(tags));
	for (size_t i = 0; i < B->kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &B->kb->torch_variant[i];
		if (!gpuenv_str_eq_cstr(v->tag, backend) || !torch_allows(&B->spec, v))
			continue;
		if (!newest || gpuenv_kb_ver_cmp(&v->torch, &newest->torch) > 0)
			newest = v;
	}
	if (!newest) {
		const gpuenv_kb_ver_t *nt = gpuenv_kb_newest_torch(B->kb);
		gpuenv_str_t date = gpuenv_kb_date(B->kb);
		fail_at(B, GPUENV_ENOTFOUND, "target %s: %s %s, and the knowledge base has no torch %s build%s%s",
			B->t->name, how, backend, backend, B->spec.n ? " within " : "", B->spec.n ? B->spec.text : "");
		if (B->spec.n && nt && date.ptr)
			return gpuenv_hint(B->ctx, "builds it knows: %s; the knowledge base is from %.7s and "
				"its newest torch is %.*s: if the constraint needs a newer release, "
				"`gpuenv kb update`", tags, date.ptr, GPUENV_STR_ARG(nt->str));
		return gpuenv_hint(B->ctx, "builds it knows: %s", tags);
	}
	if (!B->t->target.ngpus) {
		B->out->variant = newest;
		B->out->cuda = gpuenv_arena_strndup(B->arena, newest->cuda.str.ptr, newest->cuda.str.len);
		return gpuenv_buf_printf(&B->why, "%s: %s; target %s has no GPU, so the build runs on the CPU "
						  "and its CUDA goes unused", how, backend, B->t->name)
			? gpuenv_oom(B->ctx, "the torch backend") : 0;
	}
	/* the newest release of that build that runs there */
	for (size_t i = 0; i < B->kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &B->kb->torch_variant[i];
		bool ok;
		if (!gpuenv_str_eq_cstr(v->tag, backend) || !torch_allows(&B->spec, v))
			continue;
		if (best && gpuenv_kb_ver_cmp(&v->torch, &best->torch) <= 0)
			continue;
		if (runs_on(B->kb, B->kts, B->nkt, v, B->arena, &ok))
			return gpuenv_oom(B->ctx, "the torch backend");
		if (ok)
			best = v;
	}
	if (!best) {
		if (reasons_text(B->kb, B->kts, B->nkt, newest, B->arena, &B->why, true))
			return gpuenv_oom(B->ctx, "the torch backend");
		would_run(B, hint, sizeof(hint));
		fail_at(B, GPUENV_EUNSUPPORTED, "target %s (%s) cannot run the %s build %s: torch %.*s %s: %s",
			B->t->name, d, backend, how, GPUENV_STR_ARG(newest->torch.str), backend,
			B->why.data ? B->why.data : "the knowledge base says no");
		for (char *p = B->ctx->err.msg; *p; p++)
			if (*p == '\n')
				*p = ';';
		return gpuenv_hint(B->ctx, "%s", hint[0] ? hint : "no torch build in the knowledge base runs there");
	}
	B->out->cuda = gpuenv_arena_strndup(B->arena, best->cuda.str.ptr, best->cuda.str.len);
	B->out->variant = best;
	r = gpuenv_buf_printf(&B->why, "%s: %s; gpuenv checked torch %.*s %s (CUDA %.*s) on %s%s", how, backend,
		GPUENV_STR_ARG(best->torch.str), backend, GPUENV_STR_ARG(best->cuda.str), d,
		cite(&best->row, c1, sizeof(c1)));
	if (!r)
		r = reasons_text(B->kb, B->kts, B->nkt, best, B->arena, &B->why, false);
	return r ? gpuenv_oom(B->ctx, "the torch backend") : 0;
}

static const gpuenv_index_source_t *source_of(const gpuenv_manifest_t *m, const char *name)
{
	for (size_t i = 0; i < m->nsources; i++)
		if (gpuenv_str_ieq(gpuenv_str(m->sources[i].name), gpuenv_str(name)))
			return &m->sources[i];
	return NULL;
}

/* the build a source URL names: ".../whl/cu118" -> "cu118", ".../cpu/" -> "cpu" */
static const char *url_backend(gpuenv_arena_t *arena, const char *url)
{
	size_t n = strlen(url), s;

	while (n && url[n - 1] == '/')
		n--;
	for (s = n; s && url[s - 1] != '/'; s--)
		;
	char tail[8], cuda[16];
	if (n - s >= sizeof(tail))
		return NULL;
	memcpy(tail, url + s, n - s);
	tail[n - s] = '\0';
	if (!strcmp(tail, "cpu") || gpuenv_kb_cuda_of_tag(gpuenv_str(tail), cuda, sizeof(cuda), NULL))
		return gpuenv_arena_strndup(arena, tail, n - s);
	return NULL;
}

static bool applies(struct bk *B, const gpuenv_marker_env_t *env, const gpuenv_dep_t *d)
{
	gpuenv_error_t keep = B->ctx->err;
	bool res = true;

	if (d->req.marker && gpuenv_marker_eval(B->ctx, d->req.marker, env, &res)) {
		res = true; /* a variable the target does not know: it may apply */
		B->ctx->err = keep;
	}
	return res;
}

static int backend_run(struct bk *B)
{
	const gpuenv_dep_t *deps, *pin = NULL, *custom = NULL;
	const char *pin_backend = NULL, *want;
	gpuenv_marker_env_t env;
	gpuenv_buf_t st;
	size_t n;
	char how[300];
	int r;

	want = B->t->torch_backend ? B->t->torch_backend : B->m->torch_backend ? B->m->torch_backend : "auto";
	if ((r = gpuenv_manifest_target_deps(B->ctx, B->arena, B->m, B->t, &deps, &n)))
		return r;
	memset(&env, 0, sizeof(env));
	if ((r = gpuenv_target_marker_env(B->ctx, B->arena, &B->t->target, &env)))
		return r;
	gpuenv_buf_init(&st, B->ctx, 4096);
	for (size_t i = 0; i < n; i++) {
		const gpuenv_dep_t *d = &deps[i];
		const gpuenv_index_source_t *src;
		const char *bk;
		if (!applies(B, &env, d))
			continue;
		if ((r = gpuenv_manifest_cuda_check(B->ctx, B->kb, B->t, d->name))) {
			snprintf(B->ctx->err.file, sizeof(B->ctx->err.file), "%s", B->m->path);
			B->ctx->err.line = d->line;
			B->ctx->err.col = d->col;
			gpuenv_buf_free(&st);
			return r;
		}
		if (!strcmp(d->name, "torch") && B->spec.n < MAX_TORCH_SPECS && d->req.spec.n) {
			B->spec.sets[B->spec.n++] = &d->req.spec;
			if (gpuenv_buf_printf(&st, "%s", st.len ? " and " : "torch") ||
				gpuenv_specset_format(&d->req.spec, &st)) {
				gpuenv_buf_free(&st);
				return gpuenv_oom(B->ctx, "the torch backend");
			}
		}
		if (!d->source || !gpuenv_manifest_torch_index_package(d->name))
			continue;
		if (!(src = source_of(B->m, d->source)))
			continue;
		bk = url_backend(B->arena, src->url);
		if (!bk) {
			if (!custom)
				custom = d;
			continue;
		}
		if (pin && strcmp(pin_backend, bk)) {
			gpuenv_buf_free(&st);
			gpuenv_fail(B->ctx, GPUENV_EUNSUPPORTED, B->m->path, d->line, d->col,
				"target %s: %s comes from source '%s' (the %s build) and %s from source '%s' (the %s "
				"build); one target gets one build", B->t->name, d->name, d->source, bk, pin->name,
				pin->source, pin_backend);
			return gpuenv_hint(B->ctx, "pin the torch family to one source");
		}
		if (!pin || (!strcmp(d->name, "torch") && strcmp(pin->name, "torch"))) {
			pin = d;
			pin_backend = bk;
		}
	}
	B->spec.text = st.data ? gpuenv_arena_strndup(B->arena, st.data, st.len) : NULL;
	gpuenv_buf_free(&st);
	if (B->spec.n && !B->spec.text)
		return gpuenv_oom(B->ctx, "the torch backend");
	if (pin) {
		const gpuenv_index_source_t *src = source_of(B->m, pin->source);
		if (strcmp(want, "auto") && strcmp(want, pin_backend)) {
			gpuenv_fail(B->ctx, GPUENV_EUNSUPPORTED, B->m->path, pin->line, pin->col,
				"target %s: torch-backend = \"%s\", but %s comes from source '%s' (%s), the %s build",
				B->t->name, want, pin->name, pin->source, src->url, pin_backend);
			return gpuenv_hint(B->ctx, "drop one of the two: the source pins the build");
		}
		snprintf(how, sizeof(how), "%s pinned to source '%s' (%s)", pin->name, src->name, src->url);
		B->out->user_pinned = true;
		B->out->source = src->name;
		if ((r = check_named(B, pin_backend, how)))
			return r;
		B->out->index_url = src->url;
		return finish_reason(B);
	}
	if (!strcmp(want, "auto"))
		r = choose_auto(B);
	else {
		snprintf(how, sizeof(how), "torch-backend = \"%s\"", want);
		if (!(r = check_named(B, want, how)))
			r = set_index(B, want);
	}
	if (r)
		return r;
	if (custom) {
		const gpuenv_index_source_t *src = source_of(B->m, custom->source);
		B->out->user_pinned = true;
		B->out->source = src->name;
		B->out->index_url = src->url;
		if (gpuenv_buf_printf(&B->why, "\n%s comes from source '%s' (%s), whose URL names no build: gpuenv "
						"checked the %s build, and that source must serve it", custom->name,
			    src->name, src->url, B->out->backend))
			return gpuenv_oom(B->ctx, "the torch backend");
	}
	return finish_reason(B);
}

int gpuenv_manifest_backend(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t, const gpuenv_kb_t *kb, gpuenv_backend_choice_t *out)
{
	struct bk *B;
	int r;

	memset(out, 0, sizeof(*out));
	if (!kb)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "choosing a torch build needs the knowledge base");
	B = gpuenv_arena_calloc(arena, 1, sizeof(*B));
	if (!B)
		return gpuenv_oom(ctx, "the torch backend");
	B->ctx = ctx;
	B->arena = arena;
	B->m = m;
	B->t = t;
	B->kb = kb;
	B->out = out;
	B->spec.kb = kb;
	B->spec.ctx = ctx;
	B->spec.arena = arena;
	B->nkt = gpuenv_target_kb(kb, &t->target, B->kts, MAX_KT);
	if (B->nkt > MAX_KT)
		B->nkt = MAX_KT;
	gpuenv_buf_init(&B->why, ctx, 16384);
	r = backend_run(B);
	if (B->spec.oom) /* whatever came of it, memory ran out on the way */
		r = gpuenv_oom(ctx, "the torch backend");
	gpuenv_buf_free(&B->why);
	if (r) {
		gpuenv_error_t e = ctx->err;
		memset(out, 0, sizeof(*out));
		ctx->err = e;
		if (r == -ENOMEM && ctx->err.code != -ENOMEM)
			gpuenv_oom(ctx, "the torch backend");
	}
	return r;
}

int gpuenv_manifest_backend_locked(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_manifest_target_t *t,
	const gpuenv_kb_t *kb, const gpuenv_backend_choice_t *bc, const char *version, const char *tag,
	const char *note, const char **out)
{
	gpuenv_kb_target_t kts[MAX_KT];
	const gpuenv_kb_torch_variant_t *v = NULL;
	gpuenv_buf_t b;
	gpuenv_str_t head;
	char vt[96], d[200], cmd[200], c1[80], cuda[16];
	size_t nkt = kb ? gpuenv_target_kb(kb, &t->target, kts, MAX_KT) : 0;
	bool autom = bc->how && !strcmp(bc->how, "auto") && !bc->user_pinned;
	int r = 0;

	*out = NULL;
	if (nkt > MAX_KT)
		nkt = MAX_KT;
	gpuenv_str_split(gpuenv_str(version), '+', &head);
	snprintf(vt, sizeof(vt), "%.*s+%s", (int)head.len, head.ptr, tag);
	if (kb && strcmp(tag, "cpu") != 0)
		v = gpuenv_kb_torch_variant(kb, gpuenv_str(vt));
	describe(t, d, sizeof(d));
	kb_cmd(t, cmd, sizeof(cmd));
	gpuenv_buf_init(&b, ctx, 1 << 16);
	gpuenv_buf_printf(&b, "%s: torch %s locked, build %s", bc->how ? bc->how : "the build", version, tag);
	if (gpuenv_kb_cuda_of_tag(gpuenv_str(tag), cuda, sizeof(cuda), NULL))
		gpuenv_buf_printf(&b, " (CUDA %s)", cuda);
	if (!t->target.ngpus)
		gpuenv_buf_printf(&b, "; target %s has no GPU (gpu = \"none\")%s", t->name, strcmp(tag, "cpu") ?
			", so the build runs on the CPU and its CUDA goes unused" : "");
	else if (note)
		gpuenv_buf_printf(&b, "; %s", note);
	else if (autom)
		gpuenv_buf_printf(&b, ", the build `%s` picks", cmd);
	else
		gpuenv_buf_printf(&b, "; gpuenv checked it on %s", d);
	if (v)
		gpuenv_buf_puts(&b, cite(&v->row, c1, sizeof(c1)));
	else if (t->target.ngpus)
		gpuenv_buf_printf(&b, "; the knowledge base has no row for torch %.*s %s: judged by its CUDA against "
			"the driver only", (int)head.len, head.ptr, tag);
	if (v && t->target.ngpus) {
		r = reasons_text(kb, kts, nkt, v, arena, &b, false);
	}
	if (!r && !gpuenv_buf_failed(&b) && b.data)
		*out = gpuenv_arena_strndup(arena, b.data, b.len);
	gpuenv_buf_free(&b);
	return *out ? 0 : gpuenv_oom(ctx, "the torch build's reason");
}
