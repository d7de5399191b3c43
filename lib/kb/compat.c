/* Every "does X run on Y" of the knowledge base, answered once here (the
 * judgements): a driver against a CUDA version (backward, forward and
 * minor-version compatibility), what a driver runs, a build's cubins and PTX
 * on a GPU, a driver that predates its GPU, a torch build on a target and
 * the torch build to install, an image on a host.  Over the lookups
 * (lookup.c: rows found, nothing judged) and the values and rows (kb.c);
 * doctor, preflight, diagnose, fit, the lock and `gpuenv kb` ask here, and
 * the answers and JSON (answer.c) sit above.  docs/kb.md lists the
 * questions. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kb_int.h"

/* ---- the driver --------------------------------------------------------------------- */

int gpuenv_kb_target_datacenter(const gpuenv_kb_target_t *t)
{
	if (!t->gpu || !t->gpu->segment.ptr)
		return -1;
	return gpuenv_str_eq_cstr(t->gpu->segment, "datacenter") ? 1 : 0;
}

/* A release the KB knows without its driver row ([[toolkit_known]]): what
 * the driver runs by itself, forward compatibility and the minor-version
 * rule still decide; only the GA minimum is not there to compare with. */
static bool known_release(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *cuda)
{
	for (size_t i = 0; i < kb->n_toolkit_known; i++)
		if (kb_ver_mm_cmp(cuda, &kb->toolkit_known[i].cuda) == 0)
			return true;
	return false;
}

int gpuenv_kb_driver_runs_cuda(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_ver_t *cuda, gpuenv_kb_driver_cuda_t *out)
{
	memset(out, 0, sizeof(*out));
	out->runs = GPUENV_KB_RUNS_UNKNOWN;
	if (!cuda->n)
		return out->runs;
	out->ga = gpuenv_kb_toolkit(kb, cuda, 0);
	out->mvc = gpuenv_kb_minor_compat(kb, cuda->part[0]);
	if (t->driver_cuda.n)
		out->max = t->driver_cuda; /* the driver's own word (rule smi-cuda-version) */
	else if (t->has_driver) {
		gpuenv_kb_driver_max_t mx;
		gpuenv_kb_driver_max_cuda(kb, &t->driver, &mx);
		if (mx.ga) {
			out->max = mx.ga->cuda;
			out->max_row = mx.ga;
		}
	}
	if (!t->has_driver && !t->driver_cuda.n)
		return out->runs;
	if (out->max.n && kb_ver_mm_cmp(cuda, &out->max) <= 0)
		out->runs = GPUENV_KB_RUNS_GA;
	else if (!out->ga && !known_release(kb, cuda))
		out->runs = GPUENV_KB_RUNS_UNKNOWN; /* not a release the KB knows */
	else if (t->compat_cuda.n && kb_ver_mm_cmp(cuda, &t->compat_cuda) <= 0)
		out->runs = GPUENV_KB_RUNS_FORWARD_COMPAT;
	else if (t->has_driver && out->mvc && gpuenv_kb_ver_cmp(&t->driver, &out->mvc->driver_min) >= 0)
		out->runs = GPUENV_KB_RUNS_MINOR_COMPAT;
	else
		out->runs = GPUENV_KB_RUNS_NO;
	return out->runs;
}

static int tk_cmp(const gpuenv_kb_toolkit_t *a, const gpuenv_kb_toolkit_t *b)
{
	int c = gpuenv_kb_ver_cmp(&a->cuda, &b->cuda);

	return c ? c : (a->update > b->update) - (a->update < b->update);
}

static bool in_mvc_range(const gpuenv_kb_minor_compat_t *m, const gpuenv_kb_ver_t *driver)
{
	return gpuenv_kb_ver_cmp(driver, &m->driver_min) >= 0 &&
		(!m->driver_below.n || gpuenv_kb_ver_cmp(driver, &m->driver_below) < 0);
}

void gpuenv_kb_driver_max_cuda(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *driver,
	gpuenv_kb_driver_max_t *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < kb->n_toolkit; i++) {
		const gpuenv_kb_toolkit_t *t = &kb->toolkit[i];
		if (gpuenv_kb_ver_cmp(&t->driver_linux, driver) <= 0 &&
			(!out->ga || tk_cmp(t, out->ga) > 0))
			out->ga = t;
	}
	for (size_t i = 0; i < kb->n_minor_compat; i++) {
		const gpuenv_kb_minor_compat_t *m = &kb->minor_compat[i];
		if (in_mvc_range(m, driver) && (!out->mvc || m->cuda_major > out->mvc->cuda_major))
			out->mvc = m;
	}
	out->branch = gpuenv_kb_driver_branch(kb, driver);
}

/* ---- CUDA code on a GPU ------------------------------------------------------------- */

bool gpuenv_kb_sm_runs_on(const gpuenv_kb_sm_t *sm, bool ptx, unsigned major, unsigned minor)
{
	if (sm->variant == 'a')
		return sm->major == major && sm->minor == minor;
	if (sm->variant == 'f' || !ptx)
		return sm->major == major && sm->minor <= minor;
	return sm->major < major || (sm->major == major && sm->minor <= minor);
}

bool gpuenv_kb_code_covers(const gpuenv_kb_sm_t *cubins, size_t ncubins, const gpuenv_kb_sm_t *ptx,
	size_t nptx, unsigned major, unsigned minor, gpuenv_kb_cover_t *out)
{
	const gpuenv_kb_sm_t *best = NULL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ncubins; i++)
		if (gpuenv_kb_sm_runs_on(&cubins[i], false, major, minor) &&
			(!best || kb_sm_cmp(&cubins[i], best) > 0))
			best = &cubins[i];
	if (best) {
		out->ok = true;
		out->by = best;
		return true;
	}
	for (size_t i = 0; i < nptx; i++)
		if (gpuenv_kb_sm_runs_on(&ptx[i], true, major, minor) &&
			(!best || kb_sm_cmp(&ptx[i], best) > 0))
			best = &ptx[i];
	if (best) {
		out->ok = true;
		out->via_ptx = true;
		out->by = best;
	}
	return out->ok;
}

size_t gpuenv_kb_gpu_builds(const gpuenv_kb_t *kb, unsigned major, unsigned minor,
	const gpuenv_kb_torch_arch_list_t **out, gpuenv_kb_cover_t *cov, size_t max)
{
	size_t n = 0;

	for (size_t k = 0; k < kb->n_torch_arch_list; k++) {
		const gpuenv_kb_torch_arch_list_t *al = &kb->torch_arch_list[k];
		gpuenv_kb_cover_t c;
		if (!gpuenv_kb_code_covers(al->sm.v, al->sm.n, al->ptx.v, al->ptx.n, major, minor, &c))
			continue;
		if (n < max) {
			out[n] = al;
			cov[n] = c;
		}
		n++;
	}
	return n;
}

const gpuenv_kb_toolkit_t *gpuenv_kb_driver_predates_gpu(const gpuenv_kb_t *kb,
	const gpuenv_kb_target_t *t, const gpuenv_kb_cuda_arch_list_t **first)
{
	const gpuenv_kb_toolkit_t *ga = NULL;
	const gpuenv_kb_cuda_arch_list_t *f = NULL;

	if (t->has_cc && t->has_driver)
		f = gpuenv_kb_arch_first_cuda(kb, t->cc_major, t->cc_minor, &ga);
	if (first)
		*first = f;
	if (!f || !ga || gpuenv_kb_ver_cmp(&t->driver, &ga->driver_linux) >= 0)
		return NULL;
	return ga;
}

/* ---- torch: a build on a target ------------------------------------------------------ */

struct rctx {
	gpuenv_arena_t *arena;
	gpuenv_kb_torch_verdict_t *out;
	int err;
};

static void reason(struct rctx *rc, int verdict, const gpuenv_kb_row_t *src,

	const gpuenv_kb_row_t *src2, const char *fmt, ...) GPUENV_PRINTF(5, 6);

static void reason(struct rctx *rc, int verdict, const gpuenv_kb_row_t *src,
	const gpuenv_kb_row_t *src2, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	gpuenv_kb_reason_t *r;

	if (rc->out->n_reason >= GPUENV_KB_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r = &rc->out->reason[rc->out->n_reason];
	r->text = gpuenv_arena_strndup(rc->arena, buf, strlen(buf));
	if (!r->text) {
		rc->err = -ENOMEM;
		return;
	}
	r->verdict = verdict;
	r->src = src;
	r->src2 = src2;
	rc->out->n_reason++;
	if (verdict == GPUENV_KB_NO)
		rc->out->verdict = GPUENV_KB_NO;
	else if (verdict == GPUENV_KB_UNKNOWN && rc->out->verdict == GPUENV_KB_YES)
		rc->out->verdict = GPUENV_KB_UNKNOWN;
}

#define V(x) GPUENV_STR_ARG((x).str)

/* The GPU must be one the driver knows: a driver older than the first
 * toolkit that builds for its architecture predates it. */
static void check_driver_knows_gpu(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	struct rctx *rc)
{
	const gpuenv_kb_cuda_arch_list_t *first;
	const gpuenv_kb_toolkit_t *ga = gpuenv_kb_driver_predates_gpu(kb, t, &first);

	if (!ga)
		return;
	reason(rc, GPUENV_KB_NO, &first->row, &ga->row,
		"driver %.*s predates sm_%u%u: the oldest toolkit that builds for it is CUDA %.*s, "
		"which needs driver >= %.*s",
		V(t->driver), t->cc_major, t->cc_minor, V(first->cuda_min), V(ga->driver_linux));
}

static void check_driver_cuda(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_torch_variant_t *v, const gpuenv_kb_driver_cuda_t *dc, struct rctx *rc)
{
	const gpuenv_kb_rule_t *fwd = gpuenv_kb_rule(kb, "forward-compat");
	bool dc_gpu = gpuenv_kb_target_datacenter(t) == 1;
	const char *fc = dc_gpu ? " (a data-center GPU can use the CUDA forward-compatibility package)" : "";
	char drv[48];

	if (t->has_driver)
		snprintf(drv, sizeof(drv), "driver %.*s", V(t->driver));
	else
		snprintf(drv, sizeof(drv), "the driver (CUDA <= %.*s)", V(t->driver_cuda));
	switch (dc->runs) {
	case GPUENV_KB_RUNS_GA:
		if (dc->ga && t->has_driver && !t->driver_cuda.n)
			reason(rc, GPUENV_KB_YES, &dc->ga->row, NULL,
				"driver %.*s >= %.*s, the minimum for CUDA %.*s", V(t->driver),
				V(dc->ga->driver_linux), V(v->cuda));
		else
			reason(rc, GPUENV_KB_YES, dc->ga ? &dc->ga->row : NULL, NULL,
				"%s supports CUDA <= %.*s, enough for CUDA %.*s", drv, V(dc->max),
				V(v->cuda));
		break;
	case GPUENV_KB_RUNS_FORWARD_COMPAT:
		reason(rc, GPUENV_KB_YES, fwd ? &fwd->row : NULL, dc->ga ? &dc->ga->row : NULL,
			"%s supports CUDA <= %.*s; the forward-compatibility libcuda in use runs "
			"CUDA %.*s",
			drv, dc->max.n ? (int)dc->max.str.len : 1, dc->max.n ? dc->max.str.ptr : "?",
			V(t->compat_cuda));
		break;
	case GPUENV_KB_RUNS_MINOR_COMPAT:
		reason(rc, GPUENV_KB_YES, &dc->mvc->row, dc->ga ? &dc->ga->row : NULL,
			"driver %.*s < %.*s (CUDA %.*s) but >= %.*s: CUDA %u.x runs through "
			"minor-version compatibility, with its limits (no JIT of newer PTX)",
			V(t->driver), dc->ga ? (int)dc->ga->driver_linux.str.len : 1,
			dc->ga ? dc->ga->driver_linux.str.ptr : "?", V(v->cuda), V(dc->mvc->driver_min),
			v->cuda.part[0]);
		break;
	case GPUENV_KB_RUNS_NO:
		if (!dc->ga)
			reason(rc, GPUENV_KB_NO, NULL, NULL, "%s supports CUDA <= %.*s, not %.*s%s", drv,
				V(dc->max), V(v->cuda), fc);
		else if (dc->mvc && t->has_driver)
			reason(rc, GPUENV_KB_NO, &dc->ga->row, &dc->mvc->row,
				"%s < %.*s, the minimum for CUDA %.*s, and below %.*s, where "
				"minor-version compatibility for CUDA %u.x starts%s",
				drv, V(dc->ga->driver_linux), V(v->cuda), V(dc->mvc->driver_min),
				v->cuda.part[0], fc);
		else
			reason(rc, GPUENV_KB_NO, &dc->ga->row, dc_gpu && fwd ? &fwd->row : NULL,
				"%s < %.*s, the minimum for CUDA %.*s%s", drv, V(dc->ga->driver_linux),
				V(v->cuda), fc);
		break;
	default:
		reason(rc, GPUENV_KB_UNKNOWN, &v->row, NULL,
			"CUDA %.*s has no toolkit row in cuda.toml", V(v->cuda));
		break;
	}
}

static void check_code(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_torch_variant_t *v, const gpuenv_kb_torch_arch_list_t *al,
	const gpuenv_kb_driver_cuda_t *dc, struct rctx *rc)
{
	const gpuenv_kb_arch_t *arch = gpuenv_kb_arch(kb, t->cc_major, t->cc_minor);
	gpuenv_kb_cover_t cov;
	char range[64];

	if (arch && arch->last_cuda_major != GPUENV_KB_NONE && v->cuda.n &&
		v->cuda.part[0] > arch->last_cuda_major) {
		reason(rc, GPUENV_KB_NO, &arch->row, NULL,
			"%.*s (%.*s) is supported up to CUDA %lld.x; this build is CUDA %.*s",
			GPUENV_STR_ARG(arch->sm.str), GPUENV_STR_ARG(arch->architecture),
			(long long)arch->last_cuda_major, V(v->cuda));
	}
	if (!al) {
		const gpuenv_kb_cuda_arch_list_t *tl = gpuenv_kb_cuda_arch_list(kb, &v->cuda);
		rc->out->code = GPUENV_KB_CODE_UNKNOWN;
		if (tl && !gpuenv_kb_code_covers(tl->sm.v, tl->sm.n, NULL, 0, t->cc_major,
				  t->cc_minor, &cov))
			reason(rc, GPUENV_KB_UNKNOWN, &v->row, &tl->row,
				"no arch list for torch %.*s %.*s in the knowledge base; CUDA %.*s "
				"builds no cubin that runs on sm_%u%u, so only PTX could",
				V(v->torch), GPUENV_STR_ARG(v->tag), V(v->cuda), t->cc_major, t->cc_minor);
		else if (tl)
			reason(rc, GPUENV_KB_UNKNOWN, &v->row, &tl->row,
				"no arch list for torch %.*s %.*s in the knowledge base; CUDA %.*s can "
				"build %.*s cubins, which run on sm_%u%u",
				V(v->torch), GPUENV_STR_ARG(v->tag), V(v->cuda),
				GPUENV_STR_ARG(cov.by->str), t->cc_major, t->cc_minor);
		else
			reason(rc, GPUENV_KB_UNKNOWN, &v->row, NULL,
				"no arch list for torch %.*s %.*s in the knowledge base", V(v->torch),
				GPUENV_STR_ARG(v->tag));
		return;
	}
	gpuenv_kb_sms_range(al->sm.v, al->sm.n, range, sizeof(range));
	if (!gpuenv_kb_code_covers(al->sm.v, al->sm.n, al->ptx.v, al->ptx.n, t->cc_major,
		    t->cc_minor, &cov)) {
		rc->out->code = GPUENV_KB_CODE_NONE;
		if (al->ptx.n) {
			char pr[64];
			gpuenv_kb_sms_range(al->ptx.v, al->ptx.n, pr, sizeof(pr));
			reason(rc, GPUENV_KB_NO, &al->row, NULL,
				"carries cubins %s and PTX %s: none runs on sm_%u%u", range, pr,
				t->cc_major, t->cc_minor);
		} else
			reason(rc, GPUENV_KB_NO, &al->row, NULL,
				"carries %s and no PTX: nothing runs on sm_%u%u", range, t->cc_major,
				t->cc_minor);
		return;
	}
	rc->out->code = cov.via_ptx ? GPUENV_KB_CODE_PTX : GPUENV_KB_CODE_CUBIN;
	if (!cov.via_ptx) {
		reason(rc, GPUENV_KB_YES, &al->row, NULL, "carries a %.*s cubin, which runs on sm_%u%u",
			GPUENV_STR_ARG(cov.by->str), t->cc_major, t->cc_minor);
		return;
	}
	/* PTX is compiled by the driver, which must know that PTX version:
	 * the driver of the toolkit that wrote it (minor-version
	 * compatibility does not cover JIT) */
	if (dc->runs != GPUENV_KB_RUNS_UNKNOWN && dc->runs != GPUENV_KB_RUNS_GA &&
		dc->runs != GPUENV_KB_RUNS_FORWARD_COMPAT) {
		const gpuenv_kb_rule_t *jit = gpuenv_kb_rule(kb, "ptx-jit");
		reason(rc, GPUENV_KB_NO, &al->row, jit ? &jit->row : NULL,
			"no cubin for sm_%u%u (carries %s); its PTX for %.*s needs the driver to "
			"JIT-compile CUDA %.*s PTX, which needs driver >= %.*s",
			t->cc_major, t->cc_minor, range, GPUENV_STR_ARG(cov.by->str), V(v->cuda),
			dc->ga ? (int)dc->ga->driver_linux.str.len : 1,
			dc->ga ? dc->ga->driver_linux.str.ptr : "?");
		return;
	}
	reason(rc, GPUENV_KB_YES, &al->row, NULL,
		"no cubin for sm_%u%u, but its PTX for %.*s is JIT-compiled by the driver "
		"(slower first start)",
		t->cc_major, t->cc_minor, GPUENV_STR_ARG(cov.by->str));
}

int gpuenv_kb_torch_check(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_torch_variant_t *v, gpuenv_arena_t *arena, gpuenv_kb_torch_verdict_t *out)
{
	struct rctx rc = { arena, out, 0 };
	gpuenv_kb_driver_cuda_t dc;
	bool drv = t->has_driver || t->driver_cuda.n;

	memset(out, 0, sizeof(*out));
	out->variant = v;
	out->arch = gpuenv_kb_torch_arch(kb, v);
	out->verdict = GPUENV_KB_YES;
	gpuenv_kb_driver_runs_cuda(kb, t, &v->cuda, &dc);
	out->runs = dc.runs;
	if (t->has_cc && t->has_driver)
		check_driver_knows_gpu(kb, t, &rc);
	if (drv)
		check_driver_cuda(kb, t, v, &dc, &rc);
	if (t->has_cc)
		check_code(kb, t, v, out->arch, &dc, &rc);
	if (!t->has_cc && !drv)
		out->verdict = GPUENV_KB_UNKNOWN;
	if (rc.err)
		return gpuenv_oom(kb->ctx, "judging a torch build");
	return 0;
}

/* ---- torch: the pick ---------------------------------------------------------------------- */

struct cand {
	const gpuenv_kb_torch_variant_t *v;
	int code; /* 1 cubin, 2 PTX, 3 arch list unknown */
	int runs;
};

struct pickctx {
	const gpuenv_kb_pick_req_t *req;
	gpuenv_kb_pick_allow_fn allow;
	void *allow_arg;
	bool has_cur, has_driver;
	gpuenv_kb_ver_t cur;
};

/* the release class against current's: 0 the same, 1 newer, 2 older */
static int rel_class(const struct pickctx *p, const gpuenv_kb_torch_variant_t *v)
{
	int c;

	if (!p->has_cur)
		return 0;
	c = gpuenv_kb_ver_cmp(&v->torch, &p->cur);
	return c == 0 ? 0 : c > 0 ? 1 : 2;
}

static bool better(const struct pickctx *p, const struct cand *a, const struct cand *b)
{
	int ca = rel_class(p, a->v), cb = rel_class(p, b->v), s, c;

	if (a->code != b->code)
		return a->code < b->code;
	if ((ca == 0) != (cb == 0))
		return ca == 0;
	/* a build the driver runs by itself beats one that runs only through
	 * minor-version or forward compatibility, whatever its release */
	if (p->has_driver && (a->runs == GPUENV_KB_RUNS_GA) != (b->runs == GPUENV_KB_RUNS_GA))
		return a->runs == GPUENV_KB_RUNS_GA;
	c = kb_ver_mm_cmp(&a->v->cuda, &b->v->cuda);
	/* no driver to go by: the least a driver must do comes before the release */
	if (!p->has_driver && c)
		return c < 0;
	if (ca != cb)
		return ca < cb;
	s = gpuenv_kb_ver_cmp(&a->v->torch, &b->v->torch);
	if (s)
		return ca == 1 ? s < 0 : s > 0; /* newer: the nearest; else the newest */
	if (p->has_driver) {
		bool ga = a->runs == GPUENV_KB_RUNS_GA, gb = b->runs == GPUENV_KB_RUNS_GA;
		if (ga != gb)
			return ga;
		if (c)
			return ga ? c > 0 : c < 0;
	} else if (c)
		return c < 0;
	return a->v->pypi_default == 1 && b->v->pypi_default != 1;
}

static bool python_ok(const gpuenv_kb_t *kb, const gpuenv_kb_torch_variant_t *v, const char *py)
{
	gpuenv_kb_ver_t p;
	size_t n = 0, dots = 0;

	if (!py)
		return true;
	while (py[n] && ((py[n] >= '0' && py[n] <= '9') || (py[n] == '.' && ++dots < 2)))
		n++;
	if (!gpuenv_kb_ver_parse(gpuenv_str_n(py, n), &p))
		return true;
	for (size_t i = 0; i < kb->n_torch_release; i++) {
		const gpuenv_kb_torch_release_t *r = &kb->torch_release[i];
		if (gpuenv_kb_ver_cmp(&r->torch, &v->torch) != 0)
			continue;
		if (r->python_min.n && gpuenv_kb_ver_cmp(&p, &r->python_min) < 0)
			return false;
		if (r->python_max.n && gpuenv_kb_ver_cmp(&p, &r->python_max) > 0)
			return false;
	}
	return true;
}

static int judge(const gpuenv_kb_t *kb, const gpuenv_kb_pick_req_t *req,
	const gpuenv_kb_target_t *ts, size_t nt, const gpuenv_kb_torch_variant_t *v,
	gpuenv_arena_t *arena, struct cand *out)
{
	static const gpuenv_kb_target_t none;

	out->v = v;
	out->code = 1;
	out->runs = GPUENV_KB_RUNS_UNKNOWN;
	for (size_t i = 0; i < (nt ? nt : 1); i++) {
		const gpuenv_kb_target_t *t = nt ? &ts[i] : &none;
		gpuenv_kb_torch_verdict_t vd;
		int code = 1;
		if (gpuenv_kb_torch_check(kb, t, v, arena, &vd))
			return -ENOMEM;
		for (size_t k = 0; k < vd.n_reason; k++)
			if (vd.reason[k].verdict == GPUENV_KB_NO)
				return 0;
		if (t->has_cc)
			code = vd.code == GPUENV_KB_CODE_CUBIN ? 1 : vd.code == GPUENV_KB_CODE_PTX ? 2 : 3;
		if (req->need_cubin && (code != 1 || (t->has_cc && !vd.arch)))
			return 0;
		if (code > out->code)
			out->code = code;
		out->runs = vd.runs;
	}
	return 1;
}

static int pick_among(const gpuenv_kb_t *kb, const gpuenv_kb_pick_req_t *req,
	gpuenv_kb_pick_allow_fn allow, void *allow_arg, const gpuenv_kb_target_t *ts, size_t nt,
	gpuenv_arena_t *arena, struct cand *best)
{
	struct pickctx p;
	bool found = false;

	memset(&p, 0, sizeof(p));
	p.req = req;
	p.allow = allow;
	p.allow_arg = allow_arg;
	if (req->current) {
		gpuenv_str_t head;
		gpuenv_str_split(gpuenv_str(req->current), '+', &head);
		p.has_cur = kb_torch_series(head, &p.cur);
	}
	for (size_t i = 0; i < nt; i++)
		if (ts[i].has_driver || ts[i].driver_cuda.n)
			p.has_driver = true;
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &kb->torch_variant[i];
		struct cand c;
		int r, cls = rel_class(&p, v);
		if (p.has_cur && req->same_release && cls != 0)
			continue;
		if (cls != 0 && !python_ok(kb, v, req->python))
			continue;
		if (p.allow && !p.allow(p.allow_arg, v))
			continue;
		/* a fresh pick (no torch in use to start from) takes stable builds */
		if (!req->current && !gpuenv_str_eq_cstr(v->channel, "stable"))
			continue;
		if ((r = judge(kb, req, ts, nt, v, arena, &c)) < 0)
			return r;
		if (r && (!found || better(&p, &c, best))) {
			*best = c;
			found = true;
		}
	}
	return found;
}

int gpuenv_kb_torch_pick(const gpuenv_kb_t *kb, const gpuenv_kb_pick_req_t *req,
	gpuenv_arena_t *arena, gpuenv_kb_pick_t *out)
{
	return gpuenv_kb_torch_pick_among(kb, req, NULL, NULL, arena, out);
}

int gpuenv_kb_torch_pick_among(const gpuenv_kb_t *kb, const gpuenv_kb_pick_req_t *req,
	gpuenv_kb_pick_allow_fn allow, void *allow_arg, gpuenv_arena_t *arena,
	gpuenv_kb_pick_t *out)
{
	struct cand best;
	gpuenv_kb_target_t *bare;
	bool driver = false;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = pick_among(kb, req, allow, allow_arg, req->targets, req->n_targets, arena, &best)) < 0)
		return gpuenv_oom(kb->ctx, "choosing a torch build");
	if (r) {
		out->variant = best.v;
		out->code = best.code == 1 ? GPUENV_KB_CODE_CUBIN : best.code == 2 ? GPUENV_KB_CODE_PTX
										   : GPUENV_KB_CODE_UNKNOWN;
		out->runs = best.runs;
		out->latest = gpuenv_kb_torch_latest(kb, best.v);
		return 0;
	}
	for (size_t i = 0; i < req->n_targets; i++)
		driver |= req->targets[i].has_driver || req->targets[i].driver_cuda.n;
	if (!req->allow_driver_upgrade || !driver)
		return 0;
	/* nothing runs with this driver: what would after an upgrade */
	bare = gpuenv_arena_calloc(arena, req->n_targets, sizeof(*bare));
	if (!bare)
		return gpuenv_oom(kb->ctx, "choosing a torch build");
	for (size_t i = 0; i < req->n_targets; i++) {
		bare[i] = req->targets[i];
		bare[i].has_driver = false;
		memset(&bare[i].driver, 0, sizeof(bare[i].driver));
		memset(&bare[i].driver_cuda, 0, sizeof(bare[i].driver_cuda));
		memset(&bare[i].compat_cuda, 0, sizeof(bare[i].compat_cuda));
	}
	if ((r = pick_among(kb, req, allow, allow_arg, bare, req->n_targets, arena, &best)) < 0)
		return gpuenv_oom(kb->ctx, "choosing a torch build");
	if (!r)
		return 0;
	out->variant = best.v;
	out->code = best.code == 1 ? GPUENV_KB_CODE_CUBIN : best.code == 2 ? GPUENV_KB_CODE_PTX
									   : GPUENV_KB_CODE_UNKNOWN;
	out->runs = GPUENV_KB_RUNS_NO;
	out->latest = gpuenv_kb_torch_latest(kb, best.v);
	out->driver_upgrade = gpuenv_kb_toolkit(kb, &best.v->cuda, 0);
	/* and each GPU may need a newer driver than that CUDA's */
	for (size_t i = 0; i < req->n_targets; i++) {
		const gpuenv_kb_toolkit_t *first = NULL;
		if (!req->targets[i].has_cc)
			continue;
		gpuenv_kb_arch_first_cuda(kb, req->targets[i].cc_major, req->targets[i].cc_minor, &first);
		if (first && (!out->driver_upgrade ||
				     gpuenv_kb_ver_cmp(&first->driver_linux,
					     &out->driver_upgrade->driver_linux) > 0))
			out->driver_upgrade = first;
	}
	return 0;
}

/* ---- images ------------------------------------------------------------------------------- */

/* "R560" -> 560 */
static unsigned branch_of(gpuenv_str_t b)
{
	gpuenv_kb_ver_t v;

	if (b.len < 2 || (b.ptr[0] != 'R' && b.ptr[0] != 'r') ||
		!gpuenv_kb_ver_parse(gpuenv_str_n(b.ptr + 1, b.len - 1), &v))
		return 0;
	return v.part[0];
}

void gpuenv_kb_image_check(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_image_ref_t *img, gpuenv_kb_image_verdict_t *out)
{
	const gpuenv_kb_container_t *c = img->row;
	int dcgpu = gpuenv_kb_target_datacenter(t);

	memset(out, 0, sizeof(*out));
	out->cc_ok = -1;
	if (img->hub.kind == GPUENV_KB_HUB_PYTHON && !img->cuda.n) {
		/* no CUDA in the image: it asks nothing of the driver (the CUDA
		 * libraries come from the wheels installed into it) */
		out->runs = GPUENV_KB_RUNS_GA;
		return;
	}
	if (c && c->cc_min.n && t->has_cc) {
		gpuenv_kb_ver_t cc = { { NULL, 0 }, { t->cc_major, t->cc_minor, 0, 0 }, 2 };
		out->cc_ok = gpuenv_kb_ver_cmp(&cc, &c->cc_min) >= 0;
	}
	gpuenv_kb_driver_runs_cuda(kb, t, &img->cuda, &out->dc);
	out->runs = out->dc.runs;
	out->branch = c ? branch_of(c->driver_min_branch) : 0;
	if (!out->branch || !t->has_driver)
		return; /* no notes (or no driver version to hold them against) */
	/* the release notes decide (docs/kb.md, "NGC images") */
	out->by_notes = true;
	if (t->driver.part[0] >= out->branch) {
		out->runs = GPUENV_KB_RUNS_GA;
		return;
	}
	out->runs = GPUENV_KB_RUNS_NO;
	for (uint32_t i = 0; i < c->datacenter_drivers.n; i++) {
		const gpuenv_kb_ver_t *d = &c->datacenter_drivers.v[i];
		if (d->part[0] != t->driver.part[0] || gpuenv_kb_ver_cmp(&t->driver, d) < 0)
			continue;
		out->fc_driver = d;
		if (dcgpu == 0) {
			out->not_datacenter = true;
			return;
		}
		out->runs = GPUENV_KB_RUNS_FORWARD_COMPAT;
		out->datacenter_only = dcgpu < 0;
		return;
	}
}
