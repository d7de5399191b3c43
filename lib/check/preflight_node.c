/* What every preflight request asks of the node: a GPU the driver lists, a
 * driver new enough for the CUDA version or image (with minor-version and
 * forward compatibility), and code for each GPU's architecture in a torch
 * build or a CUDA version.  preflight.c (a CUDA version, a torch build, an
 * image) and preflight_lock.c (each package of a lock) both stand on it. */
#include <errno.h>
#include <string.h>

#include "doctor_int.h"

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
	const gpuenv_kb_torch_variant_t *kv;
	const gpuenv_kb_torch_arch_list_t *al;
	const char *what;
	bool ptx_ok;
	bool relock; /* a lock's build: the fix is to lock again for the GPU */
};

static void torch_arch(drun_t *r, const int *idx, size_t n, void *p)
{
	struct torch_ud *u = p;
	const struct dgpu *g = &r->gpus[idx[0]];
	gpuenv_verdict_t *v;
	gpuenv_kb_pick_t pk;
	const gpuenv_kb_torch_variant_t *pick;
	char sm[512];
	dk_cov_t c;

	/* the KB's coverage rule over the build's arch list (gpuenv_kb_code_covers) */
	dk_cover_kb(&u->al->sm, &u->al->ptx, g->maj, g->min, u->ptx_ok, &c);
	v = dr_verdict(r, c.how == DK_COV_CUBIN ? "arch-ok"
			: c.how == DK_COV_PTX	? "ptx-jit-only"
						: "no-kernel-image",
		c.how == DK_COV_NONE ? GPUENV_SEV_ERROR : GPUENV_SEV_INFO, "gpu", gpus_text(r, idx, n));
	if (!v)
		return;
	gpu_evidence(r, v, idx, n);
	gpuenv_kb_sms_range(u->al->sm.v, u->al->sm.n, sm, sizeof(sm));
	dr_ev_kb(r, v, dr_fmt(r, "kb:torch.toml arch_list %.*s %.*s", GPUENV_STR_ARG(u->kv->torch.str),
			       GPUENV_STR_ARG(u->kv->tag)),
		dr_kb_cite(r, &u->al->row, "[[arch_list]]"), "%s", sm);
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
	/* the build doctor, diagnose and kb torch would name (gpuenv_kb_torch_pick) */
	pick = dr_pick_torch(r, u->kv->torch.str.ptr ? dr_fmt(r, "%.*s", GPUENV_STR_ARG(u->kv->torch.str))
						     : NULL, true, NULL, &pk);
	if (pick && u->relock)
		v->fix = dr_fmt(r, "lock again for this GPU: a target with gpu = \"%s\" in "
			"[tool.gpuenv.targets] and gpuenv lock --target NAME (the knowledge base picks "
			"torch %.*s+%.*s for it%s)", g->name ? g->name : dr_fmt(r, "sm_%d%d", g->maj, g->min),
			pk.latest ? (int)pk.latest->str.len : (int)pick->torch.str.len,
			pk.latest ? pk.latest->str.ptr : pick->torch.str.ptr, GPUENV_STR_ARG(pick->tag),
			pk.driver_upgrade ? dr_fmt(r, ", with a driver >= %.*s",
						    GPUENV_STR_ARG(pk.driver_upgrade->driver_linux.str))
					  : "");
	else if (pick)
		v->fix = dr_fmt(r, "use torch %.*s+%.*s (CUDA %.*s): %s%s%s",
			pk.latest ? (int)pk.latest->str.len : (int)pick->torch.str.len,
			pk.latest ? pk.latest->str.ptr : pick->torch.str.ptr, GPUENV_STR_ARG(pick->tag),
			GPUENV_STR_ARG(pick->cuda.str),
			pk.driver_upgrade ? dr_fmt(r, "upgrade the driver to >= %.*s, then ",
						    GPUENV_STR_ARG(pk.driver_upgrade->driver_linux.str))
					  : "",
			dr_torch_cmd(r, pick, NULL, false), "");
	else
		v->fix = dr_fmt(r, "no torch build in the knowledge base covers sm_%d%d", g->maj, g->min);
}

/* ---- CUDA versions and images --------------------------------------------- */

struct cuda_ud {
	gpuenv_kb_ver_t cuda;
	const char *what;
	const gpuenv_kb_container_t *row; /* an NGC image's row, or NULL */
};

static void cuda_arch(drun_t *r, const int *idx, size_t n, void *p)
{
	struct cuda_ud *u = p;
	const struct dgpu *g = &r->gpus[idx[0]];
	const gpuenv_kb_cuda_arch_list_t *row = NULL, *last;
	const gpuenv_kb_toolkit_t *fga = NULL;
	const gpuenv_kb_cuda_arch_list_t *first;
	int builds;
	gpuenv_verdict_t *v;
	const char *cs;

	if (g->maj < 0)
		return;
	builds = gpuenv_kb_cuda_builds_for(r->kb, &u->cuda, (unsigned)g->maj, (unsigned)g->min, &row);
	first = gpuenv_kb_arch_first_cuda(r->kb, (unsigned)g->maj, (unsigned)g->min, &fga);
	last = gpuenv_kb_arch_last_cuda(r->kb, (unsigned)g->maj, (unsigned)g->min);
	cs = dr_fmt(r, "%.*s", GPUENV_STR_ARG(u->cuda.str));
	if (u->row && u->row->cc_min.n) {
		gpuenv_kb_target_t t = r->host;
		gpuenv_kb_image_ref_t img = { .row = u->row, .cuda = u->cuda };
		gpuenv_kb_image_verdict_t iv;
		t.has_cc = true;
		t.cc_major = (unsigned)g->maj;
		t.cc_minor = (unsigned)g->min;
		gpuenv_kb_image_check(r->kb, &t, &img, &iv);
		if (iv.cc_ok == 0) {
			v = dr_verdict(r, "arch-unsupported", GPUENV_SEV_ERROR, "gpu", gpus_text(r, idx, n));
			if (!v)
				return;
			gpu_evidence(r, v, idx, n);
			dr_ev_kb(r, v, "kb:ngc.toml container cc_min", dr_kb_cite(r, &u->row->row, "[[container]]"),
				"%.*s", GPUENV_STR_ARG(u->row->cc_min.str));
			v->message = dr_fmt(r, "%s supports compute capability >= %.*s; %s is %d.%d", u->what,
				GPUENV_STR_ARG(u->row->cc_min.str), gpus_text(r, idx, n), g->maj, g->min);
			v->fix = dr_fmt(r, "use an older release of the image built for sm_%d%d", g->maj,
				g->min);
			return;
		}
	}
	if (builds == 1) {
		v = dr_verdict(r, "arch-ok", GPUENV_SEV_INFO, "gpu", gpus_text(r, idx, n));
		if (!v)
			return;
		gpu_evidence(r, v, idx, n);
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml arch_list %s", cs),
			dr_kb_cite(r, &row->row, "[[arch_list]]"), "has sm_%d%d", g->maj, g->min);
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
	if (first && gpuenv_kb_ver_cmp(&first->cuda_min, &u->cuda) > 0) {
		/* the GPU is newer than the toolkit: only PTX can reach it */
		v = dr_verdict(r, "arch-too-new", GPUENV_SEV_WARNING, "gpu", gpus_text(r, idx, n));
		if (!v)
			return;
		gpu_evidence(r, v, idx, n);
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml arch_list %s", cs),
			dr_kb_cite(r, &row->row, "[[arch_list]]"), "no sm_%d%d", g->maj, g->min);
		v->message = dr_fmt(r, "CUDA %s predates sm_%d%d (first built by CUDA %.*s): applications "
			"built with it run on %s only through PTX the driver JIT-compiles, if they ship "
			"any", cs, g->maj, g->min, GPUENV_STR_ARG(first->cuda_min.str), gpus_text(r, idx, n));
		v->fix = dr_fmt(r, "use CUDA >= %.*s for native sm_%d%d code",
			GPUENV_STR_ARG(first->cuda_min.str), g->maj, g->min);
		return;
	}
	v = dr_verdict(r, "arch-unsupported", GPUENV_SEV_ERROR, "gpu", gpus_text(r, idx, n));
	if (!v)
		return;
	gpu_evidence(r, v, idx, n);
	dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml arch_list %s", cs),
		dr_kb_cite(r, &row->row, "[[arch_list]]"), "no sm_%d%d", g->maj, g->min);
	v->message = last ? dr_fmt(r, "CUDA %s dropped sm_%d%d (%s): the last CUDA that builds for it "
				      "is %.*s", cs, g->maj, g->min, gpus_text(r, idx, n),
				      GPUENV_STR_ARG(last->cuda_max.str))
			  : dr_fmt(r, "CUDA %s does not build for sm_%d%d (%s)", cs, g->maj, g->min,
				      gpus_text(r, idx, n));
	v->fix = last ? dr_fmt(r, "use CUDA <= %.*s on this GPU", GPUENV_STR_ARG(last->cuda_max.str))
		      : NULL;
}

/* An image whose release notes the KB has: gpuenv_kb_image_check decides
 * (R560 or later; older data-center drivers the notes list, through
 * forward compatibility, on data-center GPUs). */
static bool image_driver(drun_t *r, const gpuenv_kb_image_ref_t *img, const char *what)
{
	const gpuenv_kb_container_t *row = img->row;
	const gpuenv_kb_gpu_t *gpu;
	gpuenv_kb_target_t t = r->host;
	gpuenv_kb_image_verdict_t iv;
	gpuenv_verdict_t *v;
	const char *cite = dr_kb_cite(r, &row->row, "[[container]]");

	t.gpu = NULL;
	/* a data-center host or not: decided once (gpuenv_target_datacenter) */
	if (gpuenv_target_datacenter(r->kb, &r->machine, &gpu) >= 0)
		t.gpu = gpu;
	gpuenv_kb_image_check(r->kb, &t, img, &iv);
	if (iv.runs == GPUENV_KB_RUNS_GA) {
		v = dr_verdict(r, "driver-ok", GPUENV_SEV_INFO, "driver",
			dr_fmt(r, "driver %s", r->drv_version));
		if (!v)
			return true;
		dr_ev(r, v, "driver.version", NULL, "%s", r->drv_version);
		dr_ev_kb(r, v, "kb:ngc.toml container driver_min_branch", cite, "%.*s",
			GPUENV_STR_ARG(row->driver_min_branch));
		v->message = dr_fmt(r, "driver %s is on branch R%u; %s needs %.*s or later",
			r->drv_version, r->host.driver.part[0], what,
			GPUENV_STR_ARG(row->driver_min_branch));
		return true;
	}
	if (iv.runs == GPUENV_KB_RUNS_FORWARD_COMPAT) {
		v = dr_verdict(r, "driver-forward-compat", GPUENV_SEV_INFO, "driver",
			dr_fmt(r, "driver %s", r->drv_version));
		if (!v)
			return true;
		dr_ev(r, v, "driver.version", NULL, "%s", r->drv_version);
		dr_ev_kb(r, v, "kb:ngc.toml container datacenter_drivers", cite, "%.*s",
			GPUENV_STR_ARG(iv.fc_driver->str));
		v->message = dr_fmt(r, "driver %s is older than %.*s, but %s runs on data-center "
			"GPUs with driver %.*s or later of that branch through the CUDA forward "
			"compatibility package it ships%s", r->drv_version,
			GPUENV_STR_ARG(row->driver_min_branch), what, GPUENV_STR_ARG(iv.fc_driver->str),
			iv.datacenter_only ? " (the knowledge base does not know this GPU: data-center "
					     "ones only)" : "");
		return true;
	}
	v = dr_verdict(r, "driver-too-old", GPUENV_SEV_ERROR, "driver",
		dr_fmt(r, "driver %s", r->drv_version));
	if (!v)
		return false;
	dr_ev(r, v, "driver.version", NULL, "%s", r->drv_version);
	dr_ev_kb(r, v, "kb:ngc.toml container driver_min_branch", cite, "%.*s",
		GPUENV_STR_ARG(row->driver_min_branch));
	if (iv.not_datacenter)
		v->message = dr_fmt(r, "%s needs driver branch %.*s or later; this node runs %s, which "
			"the release notes allow through forward compatibility on data-center GPUs "
			"only, and %.*s is not one", what, GPUENV_STR_ARG(row->driver_min_branch),
			r->drv_version, GPUENV_STR_ARG(gpu->name));
	else
		v->message = dr_fmt(r, "%s needs driver branch %.*s or later (or, on data-center GPUs, "
			"one of the older drivers its release notes list); this node runs %s, and "
			"minor-version compatibility does not stand in for them", what,
			GPUENV_STR_ARG(row->driver_min_branch), r->drv_version);
	v->fix = dr_fmt(r, "upgrade the driver to branch %.*s or later, or use an older image",
		GPUENV_STR_ARG(row->driver_min_branch));
	return false;
}

/* ---- what every request needs of the node ------------------------------- */

bool pf_node(drun_t *r, int cuda, const char *what, const gpuenv_kb_image_ref_t *img,
	const char *need_fact, const char *need_src, const char *fix_alt)
{
	bool ptx_ok = true;

	dr_rules_machine(r);
	if (r->ngpus == 0 && !(r->drv_state && strcmp(r->drv_state, "not-loaded") == 0) &&
		!r->drv_libs_missing) {
		gpuenv_verdict_t *v = dr_verdict(r, "no-gpu", GPUENV_SEV_ERROR, "machine", "this node");
		if (v) {
			dr_ev(r, v, "gpus", NULL, "[]");
			if (r->drv_state)
				dr_ev(r, v, "driver.state", NULL, "%s", r->drv_state);
			v->message = dr_fmt(r, "this node has no NVIDIA GPU that the driver lists; %s needs one",
				what);
			v->fix = dr_fmt(r, "run it on a GPU node");
		}
	} else if (r->ngpus > 0 && !r->drv_version && !r->drv_cuda) {
		gpuenv_verdict_t *v = dr_verdict(r, "driver-unknown", GPUENV_SEV_WARNING, "driver",
			"NVIDIA driver");
		if (v)
			v->message = dr_fmt(r, "the facts name no driver version: cannot tell whether it "
				"runs %s", what);
	} else if (r->ngpus > 0) {
		dr_rule_driver_knows_gpus(r, what);
		if (img && img->row && img->row->driver_min_branch.ptr && r->host.has_driver)
			ptx_ok = image_driver(r, img, what);
		else
			ptx_ok = dr_rule_driver(r, cuda, what, need_fact, need_src, NULL, fix_alt, true);
	}
	return ptx_ok;
}

void pf_torch_arch(drun_t *r, const gpuenv_kb_torch_variant_t *kv, const char *what, bool ptx_ok,
	bool relock)
{
	const gpuenv_kb_torch_arch_list_t *al = gpuenv_kb_torch_arch(r->kb, kv);

	if (al) {
		struct torch_ud u = { kv, al, what, ptx_ok, relock };
		per_cc(r, torch_arch, &u);
		return;
	}
	gpuenv_verdict_t *v = dr_verdict(r, "arch-unknown", GPUENV_SEV_WARNING, "machine", what);
	if (v)
		v->message = dr_fmt(r, "the knowledge base has no architecture list for torch %.*s "
			"%.*s: cannot tell which GPUs it carries code for",
			GPUENV_STR_ARG(kv->torch.str), GPUENV_STR_ARG(kv->tag));
}

/* A CUDA version (and an NGC image's row, or NULL) against each compute
 * capability of the node's visible GPUs. */
void pf_cuda_arch(drun_t *r, gpuenv_kb_ver_t cuda, const char *what,
	const gpuenv_kb_container_t *row)
{
	struct cuda_ud u = { cuda, what, row };

	per_cc(r, cuda_arch, &u);
}
