/* gpuenv preflight: can this node (its facts) run a CUDA version, a torch
 * build or a container image?  The same facts and knowledge base as doctor,
 * and the same verdicts as reasons; go when none of them is an error. */
#include <errno.h>
#include <string.h>

#include "doctor_int.h"

/* ---- the request ------------------------------------------------------- */

/* A request the library refused as malformed is a usage error (exit 2);
 * the message is the parser's. */
static int as_usage(gpuenv_ctx_t *ctx, int rc)
{
	if (rc == GPUENV_EVERSION || rc == GPUENV_EUSAGE) {
		ctx->err.code = GPUENV_EUSAGE;
		return GPUENV_EUSAGE;
	}
	return rc;
}

/* An image without CUDA of its own (Docker's python images, the export's
 * base when the lock brings the CUDA runtime as wheels): nothing in it asks
 * anything of the driver; what the wheels ask is `preflight --lock`'s. */
static int pf_no_cuda_image(drun_t *r, const char *ref, const gpuenv_kb_image_ref_t *img, gpuenv_preflight_t *out)
{
	gpuenv_verdict_t *v;

	out->what = dr_fmt(r, "%s (Python %.*s, no CUDA of its own)", ref, GPUENV_STR_ARG(img->hub.python.str));
	if (!out->what)
		return -ENOMEM;
	dr_rules_machine(r);
	if ((v = dr_verdict(r, "image-no-cuda", GPUENV_SEV_INFO, "machine", out->what)) != NULL) {
		dr_ev(r, v, "request.image", NULL, "%s", ref);
		v->message = dr_fmt(r, "%s carries no CUDA libraries and asks nothing of the driver: the "
			"NVIDIA container toolkit mounts this node's driver into it, and the CUDA libraries "
			"come from the wheels installed into it (gpuenv preflight --lock judges those on this "
			"node)", ref);
	}
	dr_finish(r);
	out->go = out->reasons.count[GPUENV_SEV_ERROR] == 0;
	return r->err;
}

static int preflight(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const gpuenv_kb_t *kb, const gpuenv_preflight_req_t *req, gpuenv_preflight_t *out)
{
	const gpuenv_kb_torch_variant_t *kv = NULL;
	gpuenv_kb_image_ref_t img;
	gpuenv_kb_ver_t need;
	drun_t r;
	int rc;
	const char *what = NULL;
	bool ptx_ok = true, cpu = false;

	memset(&img, 0, sizeof(img));
	memset(&need, 0, sizeof(need));
	if ((rc = drun_init(&r, ctx, arena, facts, kb, &out->reasons)) != 0)
		return rc;

	if (req->lock) {
		if ((rc = pf_lock(&r, req->lock, req->lock_path ? req->lock_path : "the lock", out)) != 0)
			return rc;
		dr_finish(&r);
		out->go = out->reasons.count[GPUENV_SEV_ERROR] == 0;
		return r.err;
	}
	if (req->cuda) {
		const gpuenv_kb_toolkit_t *ga;
		/* one parse, one answer: as `kb driver --cuda` */
		if ((rc = gpuenv_kb_cuda_min_driver(kb, gpuenv_str(req->cuda), &ga)) != 0)
			return as_usage(ctx, rc);
		need = ga->cuda;
		what = dr_fmt(&r, "CUDA %.*s", GPUENV_STR_ARG(need.str));
	} else if (req->torch) {
		const char *plus = strchr(req->torch, '+');
		if (plus && strcmp(plus, "+cpu") == 0) {
			cpu = true;
			what = dr_fmt(&r, "torch %s (CPU build)", req->torch);
		} else if ((rc = gpuenv_kb_torch_lookup(kb, gpuenv_str(req->torch), &kv)) != 0)
			return as_usage(ctx, rc);
		else {
			need = kv->cuda;
			what = dr_fmt(&r, "torch %.*s+%.*s (CUDA %.*s)",
				plus ? (int)(plus - req->torch) : (int)strlen(req->torch), req->torch,
				GPUENV_STR_ARG(kv->tag), GPUENV_STR_ARG(need.str));
		}
	} else {
		if ((rc = gpuenv_kb_image_lookup(kb, req->image, &img)) != 0)
			return as_usage(ctx, rc);
		if (img.hub.kind == GPUENV_KB_HUB_PYTHON)
			return pf_no_cuda_image(&r, req->image, &img, out);
		need = img.cuda;
		what = dr_fmt(&r, "%s (CUDA %.*s)", req->image, GPUENV_STR_ARG(need.str));
	}
	if (!what)
		return -ENOMEM;
	out->what = what;
	out->cuda = need.n ? (int)(need.part[0] * 1000 + need.part[1] * 10) : 0;

	if (cpu) {
		gpuenv_verdict_t *v = dr_verdict(&r, "cpu-build", GPUENV_SEV_INFO, "machine", what);
		if (v)
			v->message = dr_fmt(&r, "%s needs no GPU", what);
		dr_finish(&r);
		out->go = true;
		return r.err;
	}

	ptx_ok = pf_node(&r, out->cuda, what, img.row ? &img : NULL, "request.cuda", "request", NULL);
	if (kv) {
		pf_torch_arch(&r, kv, what, ptx_ok, false);
	} else {
		pf_cuda_arch(&r, need, what, img.row);
	}
	dr_finish(&r);
	out->go = out->reasons.count[GPUENV_SEV_ERROR] == 0;
	return r.err;
}

int gpuenv_preflight_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const gpuenv_preflight_req_t *req, gpuenv_preflight_t *out)
{
	const gpuenv_kb_t *kb;
	gpuenv_kb_t *own;
	int rc, given;

	memset(out, 0, sizeof(*out));
	given = !!req->cuda + !!req->torch + !!req->image + !!req->lock;
	if (given != 1)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
			given ? "give one of --cuda, --torch, --image and --lock"
			      : "nothing to check: give --cuda, --torch, --image or --lock");
	if (!facts)
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "preflight: no facts given");
	/* the files the question needs: gpus.toml only for an image's
	 * data-center condition and a lock's target */
	if ((rc = dr_kb_open(ctx, req->kb,
		     GPUENV_KB_FILE(GPUENV_KB_CUDA) | GPUENV_KB_FILE(GPUENV_KB_TORCH) |
			     (req->image ? GPUENV_KB_FILE(GPUENV_KB_NGC) | GPUENV_KB_FILE(GPUENV_KB_GPUS)
					 : 0) |
			     /* a lock: its CUDA wheels (wheels.toml), its target's GPU */
			     (req->lock ? GPUENV_KB_FILE(GPUENV_KB_WHEELS) | GPUENV_KB_FILE(GPUENV_KB_GPUS)
					: 0),
		     &own, &kb)) != 0)
		return dr_done(ctx, rc);
	rc = preflight(ctx, arena, facts, kb, req, out);
	gpuenv_kb_free(own);
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
	dk_cuda_str(p->cuda, cs, sizeof(cs));	/* the request's CUDA, "12.8" */
	if (json_object_set_new(o, "go", json_boolean(p->go)) ||
		json_object_set_new(o, "request", p->what ? json_string(p->what) : json_null()) ||
		json_object_set_new(o, "cuda", p->cuda ? json_string(cs) : json_null())) {
		json_decref(o);
		return NULL;
	}
	return o;
}
