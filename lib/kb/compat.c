/* The compatibility questions every verb asks, each answered once here:
 * a CUDA version a person writes, a driver against a CUDA version, an
 * image on a host, which torch build to install, and what a toolkit builds
 * for.  doctor, preflight, diagnose and `gpuenv kb` call these; so will the
 * resolver ("which torch build for this target").  docs/kb.md lists them. */
#include "gpuenv/kb.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- CUDA versions --------------------------------------------------------------- */

int gpuenv_kb_cuda_parse(gpuenv_ctx_t *ctx, gpuenv_str_t s, gpuenv_kb_ver_t *out)
{
	gpuenv_kb_ver_t v;
	int shown = (int)(s.len > 40 ? 40 : s.len);

	memset(out, 0, sizeof(*out));
	if (!gpuenv_kb_ver_parse(s, &v) || v.n < 2 || v.n > 3 || v.part[0] == 0 ||
		v.part[0] > 99 || v.part[1] > 99) {
		gpuenv_fail(ctx, GPUENV_EVERSION, NULL, 0, 0,
			"'%.*s' is not a CUDA version (MAJOR.MINOR, as 12.8)", shown,
			s.ptr ? s.ptr : "");
		if (gpuenv_kb_ver_parse(s, &v) && v.n == 1 && v.part[0] > 0 && v.part[0] <= 99)
			return gpuenv_hint(ctx, "name the minor release: %u.0 for CUDA %u.0 itself, "
						"or the %u.x release meant (as %u.8)",
				v.part[0], v.part[0], v.part[0], v.part[0]);
		return gpuenv_hint(ctx, "a CUDA version is MAJOR.MINOR[.PATCH], as 12.8 or 12.4.1");
	}
	/* the patch ("12.4.1") does not change what a driver must support */
	v.n = 2;
	for (size_t i = 0, dots = 0; i < s.len; i++)
		if (s.ptr[i] == '.' && ++dots == 2)
			v.str.len = i;
	*out = v;
	return 0;
}

/* MAJOR.MINOR of a against b (further parts ignored) */
static int mm_cmp(const gpuenv_kb_ver_t *a, const gpuenv_kb_ver_t *b)
{
	gpuenv_kb_ver_t x = *a, y = *b;

	if (x.n > 2)
		x.n = 2;
	if (y.n > 2)
		y.n = 2;
	return gpuenv_kb_ver_cmp(&x, &y);
}

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
		if (mm_cmp(cuda, &kb->toolkit_known[i].cuda) == 0)
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
	if (out->max.n && mm_cmp(cuda, &out->max) <= 0)
		out->runs = GPUENV_KB_RUNS_GA;
	else if (!out->ga && !known_release(kb, cuda))
		out->runs = GPUENV_KB_RUNS_UNKNOWN; /* not a release the KB knows */
	else if (t->compat_cuda.n && mm_cmp(cuda, &t->compat_cuda) <= 0)
		out->runs = GPUENV_KB_RUNS_FORWARD_COMPAT;
	else if (t->has_driver && out->mvc && gpuenv_kb_ver_cmp(&t->driver, &out->mvc->driver_min) >= 0)
		out->runs = GPUENV_KB_RUNS_MINOR_COMPAT;
	else
		out->runs = GPUENV_KB_RUNS_NO;
	return out->runs;
}

/* ---- toolkits and architectures ------------------------------------------------------- */

const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_cuda_arch_list(const gpuenv_kb_t *kb,
	const gpuenv_kb_ver_t *cuda)
{
	for (size_t i = 0; i < kb->n_cuda_arch_list; i++) {
		const gpuenv_kb_cuda_arch_list_t *a = &kb->cuda_arch_list[i];
		if (mm_cmp(cuda, &a->cuda_min) >= 0 && mm_cmp(cuda, &a->cuda_max) <= 0)
			return a;
	}
	return NULL;
}

static bool list_builds(const gpuenv_kb_cuda_arch_list_t *a, unsigned major, unsigned minor)
{
	for (uint32_t j = 0; j < a->sm.n; j++)
		if (a->sm.v[j].major == major && a->sm.v[j].minor == minor && !a->sm.v[j].variant)
			return true;
	return false;
}

int gpuenv_kb_cuda_builds_for(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *cuda, unsigned major,
	unsigned minor, const gpuenv_kb_cuda_arch_list_t **row)
{
	const gpuenv_kb_cuda_arch_list_t *a = gpuenv_kb_cuda_arch_list(kb, cuda);

	if (row)
		*row = a;
	if (!a)
		return -1;
	return list_builds(a, major, minor) ? 1 : 0;
}

const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_arch_last_cuda(const gpuenv_kb_t *kb, unsigned major,
	unsigned minor)
{
	const gpuenv_kb_cuda_arch_list_t *last = NULL;

	for (size_t i = 0; i < kb->n_cuda_arch_list; i++) {
		const gpuenv_kb_cuda_arch_list_t *a = &kb->cuda_arch_list[i];
		if (list_builds(a, major, minor) &&
			(!last || gpuenv_kb_ver_cmp(&a->cuda_max, &last->cuda_max) > 0))
			last = a;
	}
	return last;
}

/* ---- torch: versions, indexes, commands ------------------------------------------------- */

const gpuenv_kb_ver_t *gpuenv_kb_torch_latest(const gpuenv_kb_t *kb,
	const gpuenv_kb_torch_variant_t *v)
{
	const gpuenv_kb_ver_t *latest = NULL;

	for (size_t k = 0; k < kb->n_torch_pin; k++) {
		const gpuenv_kb_ver_t *p = &kb->torch_pin[k].torch;
		if (gpuenv_kb_ver_prefix(p, &v->torch) && p->n > v->torch.n &&
			(!latest || gpuenv_kb_ver_cmp(p, latest) > 0))
			latest = p;
	}
	return latest;
}

const char *gpuenv_kb_torch_index(const gpuenv_kb_t *kb, const gpuenv_kb_torch_variant_t *v,
	char *buf, size_t size)
{
	static const char pat[] = "cu{major}{minor}";

	for (size_t i = 0; i < kb->n_local_tag; i++) {
		const gpuenv_kb_local_tag_t *t = &kb->local_tag[i];
		const char *at = NULL;
		if (!gpuenv_str_eq_cstr(t->project, "torch") || !t->index.ptr ||
			!gpuenv_str_startswith(t->pattern, "+cu"))
			continue;
		for (size_t k = 0; k + sizeof(pat) - 1 <= t->index.len && !at; k++)
			if (!memcmp(t->index.ptr + k, pat, sizeof(pat) - 1))
				at = t->index.ptr + k;
		if (!at)
			continue;
		snprintf(buf, size, "%.*s%.*s%.*s", (int)(at - t->index.ptr), t->index.ptr,
			GPUENV_STR_ARG(v->tag),
			(int)(t->index.len - (size_t)(at - t->index.ptr) - (sizeof(pat) - 1)),
			at + sizeof(pat) - 1);
		return buf;
	}
	/* wheels.toml not loaded: the pattern its [[local_tag]] row records */
	snprintf(buf, size, "https://download.pytorch.org/whl/%.*s", GPUENV_STR_ARG(v->tag));
	return buf;
}

const char *gpuenv_kb_torch_install_cmd(const gpuenv_kb_t *kb, const gpuenv_kb_torch_variant_t *v,
	const char *version, bool force, gpuenv_arena_t *arena)
{
	const gpuenv_kb_ver_t *latest = version ? NULL : gpuenv_kb_torch_latest(kb, v);
	char url[256], buf[512];

	gpuenv_kb_torch_index(kb, v, url, sizeof(url));
	if (version)
		snprintf(buf, sizeof(buf), "pip install %storch==%s --index-url %s",
			force ? "--force-reinstall " : "", version, url);
	else if (latest)
		snprintf(buf, sizeof(buf), "pip install %storch==%.*s --index-url %s",
			force ? "--force-reinstall " : "", GPUENV_STR_ARG(latest->str), url);
	else
		snprintf(buf, sizeof(buf), "pip install %storch==%.*s.* --index-url %s",
			force ? "--force-reinstall " : "", GPUENV_STR_ARG(v->torch.str), url);
	return gpuenv_arena_strndup(arena, buf, strlen(buf));
}

/* "2.5.1" of "2.5.1a0" / "2.5.1.dev20240720+cu124": the release, as MAJOR.MINOR */
static bool torch_series(gpuenv_str_t head, gpuenv_kb_ver_t *v)
{
	size_t n = 0;

	while (n < head.len && ((head.ptr[n] >= '0' && head.ptr[n] <= '9') || head.ptr[n] == '.'))
		n++;
	while (n && head.ptr[n - 1] == '.')
		n--;
	if (!gpuenv_kb_ver_parse(gpuenv_str_n(head.ptr, n), v) || v->n < 2)
		return false;
	v->n = 2;
	return true;
}

/* The variant of release v with local tag local (NULL: the PyPI default). */
static const gpuenv_kb_torch_variant_t *variant_of(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *v,
	gpuenv_str_t local)
{
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *t = &kb->torch_variant[i];
		if (gpuenv_kb_ver_cmp(&t->torch, v) == 0 &&
			(local.ptr ? gpuenv_str_eq(t->tag, local) : t->pypi_default == 1))
			return t;
	}
	return NULL;
}

const gpuenv_kb_torch_variant_t *gpuenv_kb_torch_variant(const gpuenv_kb_t *kb,
	gpuenv_str_t version)
{
	gpuenv_str_t head, local = gpuenv_str_split(gpuenv_str_trim(version), '+', &head);
	gpuenv_kb_ver_t v;

	return torch_series(head, &v) ? variant_of(kb, &v, local) : NULL;
}

int gpuenv_kb_torch_lookup(const gpuenv_kb_t *kb, gpuenv_str_t version,
	const gpuenv_kb_torch_variant_t **out)
{
	gpuenv_str_t head, local = gpuenv_str_split(gpuenv_str_trim(version), '+', &head);
	gpuenv_kb_ver_t v;
	char tags[256];
	size_t n = 0, known = 0;
	int shown = (int)(version.len > 60 ? 60 : version.len);

	*out = NULL;
	if (!torch_series(head, &v) || (local.ptr && !local.len))
		return gpuenv_fail(kb->ctx, GPUENV_EVERSION, NULL, 0, 0,
			"'%.*s' is not a torch version (as 2.7.1 or 2.7.1+cu128)", shown,
			version.ptr ? version.ptr : "");
	if ((*out = variant_of(kb, &v, local)) != NULL)
		return 0;
	tags[0] = '\0';
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *t = &kb->torch_variant[i];
		int w;
		if (gpuenv_kb_ver_cmp(&t->torch, &v) != 0)
			continue;
		known++;
		w = snprintf(tags + n, sizeof(tags) - n, "%s%.*s+%.*s", n ? ", " : "",
			GPUENV_STR_ARG(head), GPUENV_STR_ARG(t->tag));
		if (w > 0 && (size_t)w < sizeof(tags) - n)
			n += (size_t)w;
	}
	if (!local.ptr && known) {
		gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
			"torch %.*s without a local tag means the build on PyPI, and the knowledge "
			"base does not record which CUDA build PyPI ships for torch %u.%u", shown,
			version.ptr, v.part[0], v.part[1]);
		return gpuenv_hint(kb->ctx, "name the build: %s", tags);
	}
	if (!known) {
		gpuenv_kb_ver_t full;
		if (gpuenv_kb_ver_parse(head, &full) &&
			gpuenv_kb_fail_newer(kb, GPUENV_ENOTFOUND, GPUENV_KB_KIND_TORCH, &full,
				gpuenv_str_n(NULL, 0)))
			return kb->ctx->err.code;
	}
	gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
		"torch %.*s: no such build in the knowledge base", shown, version.ptr);
	if (known)
		return gpuenv_hint(kb->ctx, "builds of that release: %s", tags);
	return gpuenv_hint(kb->ctx, "`gpuenv kb torch` lists the builds it knows");
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
	c = mm_cmp(&a->v->cuda, &b->v->cuda);
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
		p.has_cur = torch_series(head, &p.cur);
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

int gpuenv_kb_image_lookup(const gpuenv_kb_t *kb, const char *ref, gpuenv_kb_image_ref_t *out)
{
	gpuenv_str_t r = gpuenv_str_trim(gpuenv_str(ref)), image, tag;
	const gpuenv_kb_container_t *row = NULL;
	const char *at = r.len ? memchr(r.ptr, '@', r.len) : NULL;
	size_t slash = 0, colon = 0;
	int kind;

	memset(out, 0, sizeof(*out));
	/* IMAGE:TAG@sha256:...: the digest pins the bytes, the tag is what the
	 * knowledge base knows them by (gpuenv_kb_image_find reads it so too) */
	if (at)
		r.len = (size_t)(at - r.ptr);
	/* the tag follows the last ':' after the last '/' (a registry may have a port) */
	for (size_t i = 0; i < r.len; i++)
		if (r.ptr[i] == '/')
			slash = i + 1;
	for (size_t i = slash; i < r.len; i++)
		if (r.ptr[i] == ':')
			colon = i + 1;
	if (!colon || colon == 1 || colon == r.len)
		return gpuenv_fail(kb->ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"'%.*s' is not IMAGE:TAG (as nvcr.io/nvidia/pytorch:25.01-py3)",
			(int)(r.len > 200 ? 200 : r.len), r.ptr ? r.ptr : "");
	image = gpuenv_str_n(r.ptr, colon - 1);
	tag = gpuenv_str_n(r.ptr + colon, r.len - colon);
	if (gpuenv_kb_image_find(kb, ref, &row, 1) >= 1 && row) {
		out->row = row;
		out->cuda = row->cuda;
		if (out->cuda.n > 2)
			out->cuda.n = 2;
		return 0;
	}
	if ((kind = gpuenv_kb_hub_kind(image)) != GPUENV_KB_HUB_NONE) {
		/* the tag's grammar, then images.toml (lib/kb/hub.c) */
		int rc = gpuenv_kb_hub_parse(kb->ctx, kind, tag, &out->hub);
		if (rc)
			return rc;
		out->hub.image = image;
		gpuenv_kb_hub_find(kb, &out->match, &out->hub);
		out->cuda = out->hub.cuda;
		return 0;
	}
	{
		/* an NGC release ("27.01-py3") after the newest the KB knows of that image */
		gpuenv_kb_ver_t rel;
		size_t n = 0;
		while (n < tag.len && tag.ptr[n] != '-')
			n++;
		if (gpuenv_kb_ver_parse(gpuenv_str_n(tag.ptr, n), &rel) && rel.n == 2 &&
			gpuenv_kb_fail_newer(kb, GPUENV_ENOTFOUND, GPUENV_KB_KIND_NGC, &rel, image))
			return kb->ctx->err.code;
	}
	gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
		"image %.*s is not in the knowledge base (NGC containers, nvidia/cuda and "
		"pytorch/pytorch tags are)",
		(int)(r.len > 200 ? 200 : r.len), r.ptr);
	return gpuenv_hint(kb->ctx, "the knowledge base has %zu NGC tags; `gpuenv kb image "
				    "nvcr.io/nvidia/pytorch` lists one image's", kb->n_container);
}

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
