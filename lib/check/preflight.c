/* gpuenv preflight: can this node (its facts) run a CUDA version, a torch
 * build or a container image?  The same facts and knowledge base as doctor,
 * and the same verdicts as reasons; go when none of them is an error. */
#include <errno.h>
#include <string.h>

#include "doctor_int.h"

/* "2.7.0+cu128" -> version "2.7.0", tag "cu128" (tag NULL without '+'). */
static bool split_torch(drun_t *r, const char *s, const char **ver, const char **tag)
{
	const char *plus = strchr(s, '+');

	if (dk_vmajor(s) < 0)
		return false;
	*ver = plus ? dr_fmt(r, "%.*s", (int)(plus - s), s) : s;
	*tag = plus ? plus + 1 : NULL;
	return *ver != NULL && (!plus || plus[1]);
}

/* "nvcr.io/nvidia/pytorch:25.01-py3" -> image, tag; the tag separator is the
 * last ':' after the last '/' (a registry may carry a port). */
static bool split_image(drun_t *r, const char *s, const char **image, const char **tag)
{
	const char *slash = strrchr(s, '/');
	const char *colon = strrchr(slash ? slash : s, ':');

	if (!colon || colon == s || !colon[1])
		return false;
	*image = dr_fmt(r, "%.*s", (int)(colon - s), s);
	*tag = colon + 1;
	return *image != NULL;
}

static bool is_cuda_image(const char *image)
{
	return strcmp(image, "nvidia/cuda") == 0 || strcmp(image, "docker.io/nvidia/cuda") == 0 ||
		strcmp(image, "nvcr.io/nvidia/cuda") == 0;
}

/* nvidia/cuda tags: "12.4.1-runtime-ubuntu22.04" -> 12040. */
static int cuda_image_version(const char *tag)
{
	char v[16];
	size_t n = 0;

	while (tag[n] && tag[n] != '-' && n + 1 < sizeof(v)) {
		v[n] = tag[n];
		n++;
	}
	v[n] = '\0';
	return dk_cuda_parse(v);
}

/* GPUs of one compute capability, visible ones only: calls fn once per CC. */
static void per_cc(drun_t *r, void (*fn)(drun_t *, const int *, size_t, void *), void *ud)
{
	bool *done = gpuenv_arena_calloc(r->arena, r->ngpus ? r->ngpus : 1, sizeof(bool));
	int *idx = gpuenv_arena_calloc(r->arena, r->ngpus ? r->ngpus : 1, sizeof(int));

	if (!done || !idx) {
		r->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < r->ngpus && !r->err; i++) {
		size_t n = 0;
		if (done[i] || !r->gpus[i].visible || r->gpus[i].maj < 0)
			continue;
		for (size_t k = i; k < r->ngpus; k++)
			if (!done[k] && r->gpus[k].visible && r->gpus[k].maj == r->gpus[i].maj &&
				r->gpus[k].min == r->gpus[i].min) {
				done[k] = true;
				idx[n++] = (int)k;
			}
		fn(r, idx, n, ud);
	}
}

static const char *gpus_text(drun_t *r, const int *idx, size_t n)
{
	const char *s = "";

	if (n == 1)
		return dr_gpu_label(r, &r->gpus[idx[0]]);
	for (size_t i = 0; i < n; i++)
		s = dr_fmt(r, "%s%s%lld", s ? s : "", i ? ", " : "", r->gpus[idx[i]].index);
	return dr_fmt(r, "GPUs %s %s (sm_%d%d)", s ? s : "",
		r->gpus[idx[0]].name ? r->gpus[idx[0]].name : "", r->gpus[idx[0]].maj,
		r->gpus[idx[0]].min);
}

static void gpu_evidence(drun_t *r, gpuenv_verdict_t *v, const int *idx, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct dgpu *g = &r->gpus[idx[k]];
		dr_ev(r, v, dr_fmt(r, "gpus[%zu].compute_capability", g->i),
			dr_gpu_src(g, "compute_capability"), "%d.%d", g->maj, g->min);
	}
	if (v && n == 1)
		v->gpu = (int)r->gpus[idx[0]].i;
}

/* ---- torch builds -------------------------------------------------------- */

struct torch_ud {
	const dkb_torch_variant_t *kv;
	const char *what;
	bool ptx_ok;
};

static void torch_arch(drun_t *r, const int *idx, size_t n, void *p)
{
	struct torch_ud *u = p;
	const struct dgpu *g = &r->gpus[idx[0]];
	const char *sm = "";
	gpuenv_verdict_t *v;
	dk_cov_t c;

	dk_cover_list(u->kv->sm, u->kv->ptx, g->maj, g->min, u->ptx_ok, &c);
	v = dr_verdict(r, c.how == DK_COV_CUBIN ? "arch-ok"
			: c.how == DK_COV_PTX	? "ptx-jit-only"
						: "no-kernel-image",
		c.how == DK_COV_NONE ? GPUENV_SEV_ERROR : GPUENV_SEV_INFO, "gpu", gpus_text(r, idx, n));
	if (!v)
		return;
	gpu_evidence(r, v, idx, n);
	for (const char *const *s = u->kv->sm; s && *s; s++)
		sm = dr_fmt(r, "%s%s%s", sm ? sm : "", s == u->kv->sm ? "" : " ", *s);
	dr_ev_kb(r, v, dr_fmt(r, "kb:torch.toml arch_list %s %s", u->kv->series, u->kv->tag),
		u->kv->source, "%s", sm ? sm : "");
	if (c.how == DK_COV_CUBIN) {
		v->message = dr_fmt(r, "%s carries a %s cubin, which runs on %s", u->what, c.by,
			gpus_text(r, idx, n));
		return;
	}
	if (c.how == DK_COV_PTX) {
		v->message = dr_fmt(r, "%s has no cubin for %s; the driver JIT-compiles its %s PTX at "
			"first use", u->what, gpus_text(r, idx, n), c.by);
		return;
	}
	v->message = dr_fmt(r, "%s carries cubins %s..%s%s; none runs on %s: \"no kernel image is "
		"available for execution on the device\"", u->what, c.lo ? c.lo : "?", c.hi ? c.hi : "?",
		c.ptx ? dr_fmt(r, " and %s PTX the driver cannot JIT", c.ptx) : " and no usable PTX",
		gpus_text(r, idx, n));
	{
		const dkb_torch_variant_t *pick = dr_pick_torch(r, u->kv->series, true, true, NULL);
		if (!pick)
			pick = dr_pick_torch(r, u->kv->series, false, true, NULL);
		v->fix = pick ? dr_fmt(r, "use %s (CUDA %d.%d): %s", dr_fmt(r, "torch %s+%s",
					       pick->latest ? pick->latest : pick->series, pick->tag),
				       CUDA_MAJOR(pick->cuda), CUDA_MINOR(pick->cuda),
				       dr_torch_cmd(r, pick, NULL, false))
			      : dr_fmt(r, "no torch build in the knowledge base covers sm_%d%d with this "
					  "driver", g->maj, g->min);
	}
}

/* ---- CUDA versions and images --------------------------------------------- */

struct cuda_ud {
	int cuda;
	const char *what;
	const char *cc_min;	 /* image's lowest compute capability, or NULL */
	const char *cc_min_src;
};

static void cuda_arch(drun_t *r, const int *idx, size_t n, void *p)
{
	struct cuda_ud *u = p;
	const struct dgpu *g = &r->gpus[idx[0]];
	const struct dkb_nvcc *row = NULL;
	int builds = dkb_nvcc_builds(r->kb, u->cuda, g->maj, g->min, &row);
	int first = dkb_nvcc_first(r->kb, g->maj, g->min);
	int last = dkb_nvcc_last(r->kb, g->maj, g->min);
	int cmaj, cmin;
	gpuenv_verdict_t *v;
	char cs[16], fs[16], ls[16];

	dk_cuda_str(u->cuda, cs, sizeof(cs));
	dk_cuda_str(first, fs, sizeof(fs));
	dk_cuda_str(last, ls, sizeof(ls));
	if (u->cc_min && dk_cc_parse(u->cc_min, &cmaj, &cmin) &&
		(g->maj < cmaj || (g->maj == cmaj && g->min < cmin))) {
		v = dr_verdict(r, "arch-unsupported", GPUENV_SEV_ERROR, "gpu", gpus_text(r, idx, n));
		if (!v)
			return;
		gpu_evidence(r, v, idx, n);
		dr_ev_kb(r, v, "kb:ngc.toml container cc_min", u->cc_min_src, "%s", u->cc_min);
		v->message = dr_fmt(r, "%s supports compute capability >= %s; %s is %d.%d", u->what,
			u->cc_min, gpus_text(r, idx, n), g->maj, g->min);
		v->fix = dr_fmt(r, "use an older release of the image built for sm_%d%d", g->maj, g->min);
		return;
	}
	if (builds == 1) {
		v = dr_verdict(r, "arch-ok", GPUENV_SEV_INFO, "gpu", gpus_text(r, idx, n));
		if (!v)
			return;
		gpu_evidence(r, v, idx, n);
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml arch_list %s", cs), row->source, "has sm_%d%d",
			g->maj, g->min);
		v->message = dr_fmt(r, "CUDA %s builds cubins for sm_%d%d (%s)", cs, g->maj, g->min,
			gpus_text(r, idx, n));
		return;
	}
	if (builds < 0) {
		v = dr_verdict(r, "arch-unknown", GPUENV_SEV_WARNING, "gpu", gpus_text(r, idx, n));
		if (!v)
			return;
		gpu_evidence(r, v, idx, n);
		v->message = dr_fmt(r, "the knowledge base has no architecture list for CUDA %s: cannot "
			"tell whether it builds for sm_%d%d", cs, g->maj, g->min);
		return;
	}
	if (first && first > u->cuda) {
		/* the GPU is newer than the toolkit: only PTX can reach it */
		v = dr_verdict(r, "arch-too-new", GPUENV_SEV_WARNING, "gpu", gpus_text(r, idx, n));
		if (!v)
			return;
		gpu_evidence(r, v, idx, n);
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml arch_list %s", cs), row ? row->source : NULL,
			"no sm_%d%d", g->maj, g->min);
		v->message = dr_fmt(r, "CUDA %s predates sm_%d%d (first built by CUDA %s): applications "
			"built with it run on %s only through PTX the driver JIT-compiles, if they ship "
			"any", cs, g->maj, g->min, fs, gpus_text(r, idx, n));
		v->fix = dr_fmt(r, "use CUDA >= %s for native sm_%d%d code", fs, g->maj, g->min);
		return;
	}
	v = dr_verdict(r, "arch-unsupported", GPUENV_SEV_ERROR, "gpu", gpus_text(r, idx, n));
	if (!v)
		return;
	gpu_evidence(r, v, idx, n);
	dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml arch_list %s", cs), row ? row->source : NULL,
		"no sm_%d%d", g->maj, g->min);
	v->message = last ? dr_fmt(r, "CUDA %s dropped sm_%d%d (%s): the last CUDA that builds for it "
				      "is %s", cs, g->maj, g->min, gpus_text(r, idx, n), ls)
			  : dr_fmt(r, "CUDA %s does not build for sm_%d%d (%s)", cs, g->maj, g->min,
				      gpus_text(r, idx, n));
	v->fix = last ? dr_fmt(r, "use CUDA <= %s on this GPU", ls) : NULL;
}

/* NGC images that name a driver branch ("R560": 560 or later), with the
 * older data-center drivers forward compatibility allows. */
static bool image_driver(drun_t *r, const dkb_ngc_t *row, const char *what)
{
	long want = dk_vmajor(row->driver_min_branch + 1), have = dk_vmajor(r->drv_version);
	gpuenv_verdict_t *v;
	bool ok;

	if (have < 0)
		return false;
	if (have >= want) {
		v = dr_verdict(r, "driver-ok", GPUENV_SEV_INFO, "driver",
			dr_fmt(r, "driver %s", r->drv_version));
		if (!v)
			return true;
		dr_ev(r, v, "driver.version", NULL, "%s", r->drv_version);
		dr_ev_kb(r, v, "kb:ngc.toml container driver_min_branch", row->source, "%s",
			row->driver_min_branch);
		v->message = dr_fmt(r, "driver %s is on branch R%ld; %s needs %s or later",
			r->drv_version, have, what, row->driver_min_branch);
		return true;
	}
	for (const char *const *d = row->datacenter_drivers; d && *d; d++) {
		if (dk_vmajor(*d) == have && dk_vcmp(r->drv_version, *d, &ok) >= 0 && ok) {
			v = dr_verdict(r, "driver-forward-compat", GPUENV_SEV_INFO, "driver",
				dr_fmt(r, "driver %s", r->drv_version));
			if (!v)
				return true;
			dr_ev(r, v, "driver.version", NULL, "%s", r->drv_version);
			dr_ev_kb(r, v, "kb:ngc.toml container datacenter_drivers", row->source, "%s", *d);
			v->message = dr_fmt(r, "driver %s is older than %s, but %s runs on data-center "
				"GPUs with driver %s or later of that branch through the CUDA forward "
				"compatibility package it ships", r->drv_version, row->driver_min_branch, what,
				*d);
			return true;
		}
	}
	v = dr_verdict(r, "driver-too-old", GPUENV_SEV_ERROR, "driver",
		dr_fmt(r, "driver %s", r->drv_version));
	if (!v)
		return false;
	dr_ev(r, v, "driver.version", NULL, "%s", r->drv_version);
	dr_ev_kb(r, v, "kb:ngc.toml container driver_min_branch", row->source, "%s",
		row->driver_min_branch);
	v->message = dr_fmt(r, "%s needs driver branch %s or later; this node runs %s", what,
		row->driver_min_branch, r->drv_version);
	v->fix = dr_fmt(r, "upgrade the driver to branch %s or later, or use an older image",
		row->driver_min_branch);
	return false;
}

/* ---- the request ------------------------------------------------------- */

static int usage(gpuenv_ctx_t *ctx, const char *fmt, const char *arg)
{
	return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, fmt, arg);
}

static int preflight(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const gpuenv_preflight_req_t *req, gpuenv_preflight_t *out)
{
	const dkb_torch_variant_t *kv = NULL;
	const dkb_ngc_t *ngc = NULL;
	const dkb_t *kb;
	drun_t r;
	int rc, given, need = 0;
	const char *what = NULL;
	bool ptx_ok = true, cpu = false;

	memset(out, 0, sizeof(*out));
	given = !!req->cuda + !!req->torch + !!req->image;
	if (given != 1)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
			given ? "give one of --cuda, --torch and --image"
			      : "nothing to check: give --cuda, --torch or --image");
	if (!facts)
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "preflight: no facts given");
	if ((rc = dkb_open(ctx, arena, req->kb, &kb)) != 0)
		return rc;
	if ((rc = drun_init(&r, ctx, arena, facts, kb, &out->reasons)) != 0)
		return rc;

	if (req->cuda) {
		need = dk_cuda_parse(req->cuda);
		if (!need)
			return usage(ctx, "--cuda takes a CUDA version such as 12.2, not '%s'", req->cuda);
		if (!dkb_toolkit(r.kb, need))
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
				"CUDA %s is not a release the knowledge base knows", req->cuda);
		what = dr_fmt(&r, "CUDA %d.%d", CUDA_MAJOR(need), CUDA_MINOR(need));
	} else if (req->torch) {
		const char *ver, *tag;
		if (!split_torch(&r, req->torch, &ver, &tag))
			return usage(ctx, "--torch takes a torch version such as 2.7.0+cu128, not '%s'",
				req->torch);
		if (tag && strcmp(tag, "cpu") == 0)
			cpu = true;
		else if (!(kv = dkb_torch_find(r.kb, ver, tag))) {
			const dkb_torch_variant_t *all;
			size_t n = dkb_torch_variants(r.kb, &all);
			const char *tags = "";
			for (size_t i = 0; i < n; i++)
				if (strncmp(all[i].series, ver, strlen(all[i].series)) == 0 &&
					(ver[strlen(all[i].series)] == '.' || !ver[strlen(all[i].series)]))
					tags = dr_fmt(&r, "%s%s%s", tags ? tags : "", tags && *tags ? ", " : "",
						all[i].tag);
			gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
				"torch %s: no such build in the knowledge base", req->torch);
			if (tags && *tags)
				gpuenv_hint(ctx, "builds of that release: %s", tags);
			return GPUENV_ENOTFOUND;
		} else {
			need = kv->cuda;
			what = dr_fmt(&r, "torch %s+%s (CUDA %d.%d)", ver, kv->tag, CUDA_MAJOR(need),
				CUDA_MINOR(need));
		}
		if (cpu)
			what = dr_fmt(&r, "torch %s (CPU build)", req->torch);
	} else {
		const char *image, *tag;
		if (!split_image(&r, req->image, &image, &tag))
			return usage(ctx, "--image takes IMAGE:TAG such as nvcr.io/nvidia/pytorch:25.01-py3, "
					  "not '%s'", req->image);
		ngc = dkb_ngc_find(r.kb, image, tag);
		if (!ngc && !strchr(image, '/'))
			ngc = dkb_ngc_find(r.kb, dr_fmt(&r, "nvcr.io/nvidia/%s", image), tag);
		if (ngc)
			need = ngc->cuda;
		else if (is_cuda_image(image))
			need = cuda_image_version(tag);
		if (!need)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
				"image %s is not in the knowledge base (NGC containers and nvidia/cuda "
				"tags are)", req->image);
		what = dr_fmt(&r, "%s (CUDA %d.%d)", req->image, CUDA_MAJOR(need), CUDA_MINOR(need));
	}
	if (!what)
		return -ENOMEM;
	out->what = what;
	out->cuda = need;

	if (cpu) {
		gpuenv_verdict_t *v = dr_verdict(&r, "cpu-build", GPUENV_SEV_INFO, "machine", what);
		if (v)
			v->message = dr_fmt(&r, "%s needs no GPU", what);
		dr_finish(&r);
		out->go = true;
		return r.err;
	}

	dr_rules_machine(&r);
	if (r.ngpus == 0 && !(r.drv_state && strcmp(r.drv_state, "not-loaded") == 0) &&
		!r.drv_libs_missing) {
		gpuenv_verdict_t *v = dr_verdict(&r, "no-gpu", GPUENV_SEV_ERROR, "machine", "this node");
		if (v) {
			dr_ev(&r, v, "gpus", NULL, "[]");
			if (r.drv_state)
				dr_ev(&r, v, "driver.state", NULL, "%s", r.drv_state);
			v->message = dr_fmt(&r, "this node has no NVIDIA GPU that the driver lists; %s needs one",
				what);
			v->fix = dr_fmt(&r, "run it on a GPU node");
		}
	} else if (r.ngpus > 0 && !r.drv_version && !r.drv_cuda) {
		gpuenv_verdict_t *v = dr_verdict(&r, "driver-unknown", GPUENV_SEV_WARNING, "driver",
			"NVIDIA driver");
		if (v)
			v->message = dr_fmt(&r, "the facts name no driver version: cannot tell whether it "
				"runs %s", what);
	} else if (r.ngpus > 0) {
		if (ngc && ngc->driver_min_branch && r.drv_version)
			ptx_ok = image_driver(&r, ngc, what);
		else
			ptx_ok = dr_rule_driver(&r, need, what, "request.cuda", "request", NULL, NULL, true);
	}

	if (kv && kv->have_arch) {
		struct torch_ud u = { kv, what, ptx_ok };
		per_cc(&r, torch_arch, &u);
	} else if (kv) {
		gpuenv_verdict_t *v = dr_verdict(&r, "arch-unknown", GPUENV_SEV_WARNING, "machine", what);
		if (v)
			v->message = dr_fmt(&r, "the knowledge base has no architecture list for torch %s "
				"%s: cannot tell which GPUs it carries code for", kv->series, kv->tag);
	} else {
		struct cuda_ud u = { need, what, ngc ? ngc->cc_min : NULL, ngc ? ngc->source : NULL };
		per_cc(&r, cuda_arch, &u);
	}
	dr_finish(&r);
	out->go = out->reasons.count[GPUENV_SEV_ERROR] == 0;
	return r.err;
}

int gpuenv_preflight_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const gpuenv_preflight_req_t *req, gpuenv_preflight_t *out)
{
	int rc = preflight(ctx, arena, facts, req, out);

	if (rc)
		memset(out, 0, sizeof(*out));
	return dr_done(ctx, rc);
}

json_t *gpuenv_preflight_json(const gpuenv_preflight_t *p)
{
	json_t *o = gpuenv_verdicts_json(&p->reasons);
	char cs[16];

	if (!o)
		return NULL;
	dk_cuda_str(p->cuda, cs, sizeof(cs));
	if (json_object_set_new(o, "go", json_boolean(p->go)) ||
		json_object_set_new(o, "request", p->what ? json_string(p->what) : json_null()) ||
		json_object_set_new(o, "cuda", p->cuda ? json_string(cs) : json_null())) {
		json_decref(o);
		return NULL;
	}
	return o;
}
