/* `gpuenv kb` answered by the library (include/gpuenv/kb_answer.h): the
 * torch survey and the JSON document of every question.  The documents are
 * the ones cli/kb.c used to build itself (docs/kb.md); each fact carries the
 * row it comes from. */
#include "gpuenv/kb_answer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *jstr(gpuenv_str_t s)
{
	return s.ptr ? json_stringn(s.ptr, s.len) : json_null();
}

static json_t *jver(const gpuenv_kb_ver_t *v)
{
	return v->n ? json_stringn(v->str.ptr, v->str.len) : json_null();
}

json_t *gpuenv_kb_row_json(const gpuenv_kb_row_t *r)
{
	json_t *o;

	if (!r)
		return json_null();
	o = json_pack("{s:s, s:i, s:s%, s:b}", "file", gpuenv_kb_file_name(r->file), "line",
		(json_int_t)r->line, "source", r->source.ptr, r->source.len, "secondary",
		r->secondary);
	if (o && r->note.ptr)
		json_object_set_new(o, "note", jstr(r->note));
	return o;
}

#define jrow gpuenv_kb_row_json

static json_t *jsms(const gpuenv_kb_sms_t *l)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, jstr(l->v[i].str));
	return a;
}

static const char *verdict_word(int v)
{
	return v == GPUENV_KB_YES ? "yes" : v == GPUENV_KB_NO ? "no" : "unknown";
}

const char *gpuenv_kb_runs_name(int runs)
{
	switch (runs) {
	case GPUENV_KB_RUNS_GA:
		return "yes";
	case GPUENV_KB_RUNS_MINOR_COMPAT:
		return "minor-version-compat";
	case GPUENV_KB_RUNS_FORWARD_COMPAT:
		return "forward-compat";
	case GPUENV_KB_RUNS_NO:
		return "no";
	default:
		return "unknown";
	}
}

/* ---- GPUs ------------------------------------------------------------------------- */

static json_t *gpu_core_json(const gpuenv_kb_t *kb, const gpuenv_kb_gpu_match_t *m)
{
	const gpuenv_kb_gpu_t *g = m->gpu;
	const gpuenv_kb_arch_t *a = gpuenv_kb_arch(kb, g->cc.part[0], g->cc.part[1]);
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "name", jstr(g->name));
	json_object_set_new(o, "compute_capability", jver(&g->cc));
	json_object_set_new(o, "sm", a ? jstr(a->sm.str) : json_null());
	json_object_set_new(o, "architecture", a ? jstr(a->architecture) : json_null());
	json_object_set_new(o, "segment", jstr(g->segment));
	json_object_set_new(o, "source", jrow(&g->row));
	json_object_set_new(o, "arch_source", a ? jrow(&a->row) : json_null());
	if (m->pci) {
		char id[16];
		snprintf(id, sizeof(id), "0x%04x", (unsigned)m->pci->device_id);
		json_object_set_new(o, "matched_pci", json_pack("{s:s, s:s%, s:o}", "device_id", id,
			"name", m->pci->name.ptr, m->pci->name.len, "source", jrow(&m->pci->row)));
	}
	return o;
}

static const char *match_word(int how)
{
	switch (how) {
	case GPUENV_KB_MATCH_EXACT:
		return "exact";
	case GPUENV_KB_MATCH_PCI:
		return "pci";
	case GPUENV_KB_MATCH_PREFIX:
		return "prefix";
	default:
		return "partial";
	}
}

json_t *gpuenv_kb_gpu_json(const gpuenv_kb_t *kb, const gpuenv_kb_gpu_match_t *m)
{
	const gpuenv_kb_gpu_t *g = m->gpu;
	const gpuenv_kb_arch_t *a = gpuenv_kb_arch(kb, g->cc.part[0], g->cc.part[1]);
	const gpuenv_kb_toolkit_t *ga;
	const gpuenv_kb_cuda_arch_list_t *first =
		gpuenv_kb_arch_first_cuda(kb, g->cc.part[0], g->cc.part[1], &ga);
	json_t *o = gpu_core_json(kb, m), *pcis = json_array(), *builds = json_array();
	const gpuenv_kb_torch_arch_list_t *al[256];
	gpuenv_kb_cover_t cov[256];
	size_t nb;

	if (!o || !pcis || !builds) {
		json_decref(o);
		json_decref(pcis);
		json_decref(builds);
		return NULL;
	}
	json_object_set_new(o, "match", json_string(match_word(m->how)));
	for (size_t k = 0; k < kb->n_pci; k++) {
		const gpuenv_kb_pci_t *p = &kb->pci[k];
		json_t *pj;
		char d[16];
		if (p->gpu_row != g || !(pj = json_object()))
			continue;
		snprintf(d, sizeof(d), "0x%04x", (unsigned)p->device_id);
		json_object_set_new(pj, "device_id", json_string(d));
		if (p->subsys_vendor >= 0) {
			snprintf(d, sizeof(d), "0x%04x", (unsigned)p->subsys_vendor);
			json_object_set_new(pj, "subsys_vendor", json_string(d));
			snprintf(d, sizeof(d), "0x%04x", (unsigned)p->subsys_device);
			json_object_set_new(pj, "subsys_device", json_string(d));
		}
		json_object_set_new(pj, "name", jstr(p->name));
		json_object_set_new(pj, "source", jrow(&p->row));
		json_array_append_new(pcis, pj);
	}
	json_object_set_new(o, "pci", pcis);
	json_object_set_new(o, "first_cuda", first ? jver(&first->cuda_min) : json_null());
	json_object_set_new(o, "first_cuda_driver", ga ? jver(&ga->driver_linux) : json_null());
	json_object_set_new(o, "first_cuda_source", first ? jrow(&first->row) : json_null());
	json_object_set_new(o, "last_cuda_major",
		a && a->last_cuda_major >= 0 ? json_integer(a->last_cuda_major) : json_null());
	nb = gpuenv_kb_gpu_builds(kb, g->cc.part[0], g->cc.part[1], al, cov, 256);
	for (size_t k = 0; k < nb && k < 256; k++)
		json_array_append_new(builds, json_pack("{s:o, s:o, s:s, s:o, s:o}", "torch",
			jver(&al[k]->torch), "tag", jstr(al[k]->tag), "via", cov[k].via_ptx ? "ptx" : "cubin",
			"target", jstr(cov[k].by->str), "source", jrow(&al[k]->row)));
	json_object_set_new(o, "torch_builds", builds);
	return o;
}

json_t *gpuenv_kb_gpus_json(const gpuenv_kb_t *kb, const char *query, const gpuenv_kb_gpu_match_t *m,
	size_t n, bool ambiguous)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, gpuenv_kb_gpu_json(kb, &m[i]));
	return json_pack("{s:s, s:b, s:o}", "query", query, "ambiguous", ambiguous, "gpus", arr);
}

/* ---- drivers and CUDA versions ---------------------------------------------------------- */

json_t *gpuenv_kb_driver_json(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *d)
{
	gpuenv_kb_driver_max_t mx;
	json_t *o = json_object();

	if (!o)
		return NULL;
	gpuenv_kb_driver_max_cuda(kb, d, &mx);
	json_object_set_new(o, "version", jver(d));
	json_object_set_new(o, "max_cuda", mx.ga ? jver(&mx.ga->cuda) : json_null());
	json_object_set_new(o, "max_release", mx.ga
			? json_pack("{s:s%, s:I, s:s%, s:o}", "label", mx.ga->label.ptr, mx.ga->label.len,
				  "update", (json_int_t)mx.ga->update, "driver_linux",
				  mx.ga->driver_linux.str.ptr, mx.ga->driver_linux.str.len, "source",
				  jrow(&mx.ga->row))
			: json_null());
	json_object_set_new(o, "minor_compat", mx.mvc
			? json_pack("{s:I, s:s%, s:o}", "cuda_major", (json_int_t)mx.mvc->cuda_major,
				  "driver_min", mx.mvc->driver_min.str.ptr, mx.mvc->driver_min.str.len,
				  "source", jrow(&mx.mvc->row))
			: json_null());
	json_object_set_new(o, "branch", mx.branch
			? json_pack("{s:s%, s:s%, s:s%, s:I, s:o}", "branch", mx.branch->branch.ptr,
				  mx.branch->branch.len, "designation", mx.branch->designation.ptr,
				  mx.branch->designation.len, "eol", mx.branch->eol.ptr, mx.branch->eol.len,
				  "max_cuda_major", (json_int_t)mx.branch->max_cuda_major, "source",
				  jrow(&mx.branch->row))
			: json_null());
	return o;
}

json_t *gpuenv_kb_cuda_json(const gpuenv_kb_t *kb, const gpuenv_kb_toolkit_t *ga)
{
	const gpuenv_kb_minor_compat_t *mvc = gpuenv_kb_minor_compat(kb, ga->cuda.part[0]);
	json_t *root = json_object(), *rel = json_array();

	if (!root || !rel) {
		json_decref(root);
		json_decref(rel);
		return NULL;
	}
	json_object_set_new(root, "cuda", jver(&ga->cuda));
	json_object_set_new(root, "min_driver", jver(&ga->driver_linux));
	json_object_set_new(root, "min_driver_windows", jver(&ga->driver_windows));
	json_object_set_new(root, "source", jrow(&ga->row));
	for (size_t i = 0; i < kb->n_toolkit; i++) {
		const gpuenv_kb_toolkit_t *t = &kb->toolkit[i];
		if (gpuenv_kb_ver_cmp(&t->cuda, &ga->cuda) != 0)
			continue;
		json_array_append_new(rel, json_pack("{s:s%, s:I, s:o, s:o, s:o}", "label", t->label.ptr,
			t->label.len, "update", (json_int_t)t->update, "driver_linux",
			jver(&t->driver_linux), "driver_windows", jver(&t->driver_windows), "source",
			jrow(&t->row)));
	}
	json_object_set_new(root, "releases", rel);
	json_object_set_new(root, "minor_compat", mvc
			? json_pack("{s:I, s:o, s:o, s:o}", "cuda_major", (json_int_t)mvc->cuda_major,
				  "driver_min", jver(&mvc->driver_min), "driver_below",
				  jver(&mvc->driver_below), "source", jrow(&mvc->row))
			: json_null());
	return root;
}

/* ---- torch ------------------------------------------------------------------------------- */

static int variant_order(const void *a, const void *b)
{
	const gpuenv_kb_torch_variant_t *x = *(const gpuenv_kb_torch_variant_t *const *)a;
	const gpuenv_kb_torch_variant_t *y = *(const gpuenv_kb_torch_variant_t *const *)b;
	int c = gpuenv_kb_ver_cmp(&y->torch, &x->torch);

	return c ? c : gpuenv_kb_ver_cmp(&y->cuda, &x->cuda);
}

int gpuenv_kb_ask_torch(const gpuenv_kb_t *kb, const gpuenv_kb_torch_question_t *q,
	gpuenv_arena_t *arena, gpuenv_kb_torch_answer_t *out)
{
	static const gpuenv_kb_target_t none;
	const gpuenv_kb_target_t *t = q->target ? q->target : &none;
	gpuenv_str_t head, local = GPUENV_STR_NULL;
	gpuenv_kb_ver_t want;
	size_t cap = kb->n_torch_variant ? kb->n_torch_variant : 1;

	memset(out, 0, sizeof(*out));
	memset(&want, 0, sizeof(want));
	if (q->version) {
		local = gpuenv_str_split(gpuenv_str(q->version), '+', &head);
		if (!gpuenv_kb_ver_parse(head, &want) || (local.ptr && !local.len))
			return gpuenv_fail(kb->ctx, GPUENV_EVERSION, NULL, 0, 0,
				"'%s' is not a torch version (as 2.5 or 2.5.1)", q->version);
		if (want.n > 2)
			want.n = 2;
	}
	out->builds = gpuenv_arena_calloc(arena, cap, sizeof(*out->builds));
	out->verdicts = gpuenv_arena_calloc(arena, cap, sizeof(*out->verdicts));
	if (!out->builds || !out->verdicts)
		return gpuenv_oom(kb->ctx, "listing torch builds");
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &kb->torch_variant[i];
		if (want.n && gpuenv_kb_ver_cmp(&v->torch, &want) != 0)
			continue;
		if (local.ptr && !gpuenv_str_eq(v->tag, local))
			continue;
		out->builds[out->n++] = v;
	}
	if (!out->n) {
		if (want.n && gpuenv_kb_fail_newer(kb, GPUENV_ENOTFOUND, GPUENV_KB_KIND_TORCH, &want,
				      gpuenv_str_n(NULL, 0)))
			return kb->ctx->err.code;
		return gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
			"no torch build %s in the knowledge base", q->version ? q->version : "");
	}
	qsort(out->builds, out->n, sizeof(*out->builds), variant_order);
	for (size_t i = 0; i < out->n; i++) {
		int r = gpuenv_kb_torch_check(kb, t, out->builds[i], arena, &out->verdicts[i]);
		if (r)
			return r;
		out->yes += out->verdicts[i].verdict == GPUENV_KB_YES;
	}
	out->judged = t->has_cc || t->has_driver || t->driver_cuda.n;
	if (out->judged) {
		/* the build gpuenv would install there, for someone on version's
		 * release: the choice doctor's and diagnose's fixes make */
		gpuenv_kb_pick_req_t pr = { t, 1, q->version, false, false, NULL, true };
		return gpuenv_kb_torch_pick(kb, &pr, arena, &out->pick);
	}
	return 0;
}

static json_t *build_json(const gpuenv_kb_torch_variant_t *v, const gpuenv_kb_torch_verdict_t *vd)
{
	json_t *b = json_object(), *rs = json_array();

	if (!b || !rs) {
		json_decref(b);
		json_decref(rs);
		return NULL;
	}
	json_object_set_new(b, "torch", jver(&v->torch));
	json_object_set_new(b, "tag", jstr(v->tag));
	json_object_set_new(b, "cuda", jver(&v->cuda));
	json_object_set_new(b, "channel", jstr(v->channel));
	json_object_set_new(b, "pypi_default", json_boolean(v->pypi_default == 1));
	json_object_set_new(b, "verdict", json_string(verdict_word(vd->verdict)));
	json_object_set_new(b, "source", jrow(&v->row));
	json_object_set_new(b, "arch_list", vd->arch
			? json_pack("{s:o, s:o, s:o}", "sm", jsms(&vd->arch->sm), "ptx",
				  jsms(&vd->arch->ptx), "source", jrow(&vd->arch->row))
			: json_null());
	for (size_t k = 0; k < vd->n_reason; k++) {
		const gpuenv_kb_reason_t *r = &vd->reason[k];
		json_t *ro = json_pack("{s:s, s:s, s:o}", "verdict", verdict_word(r->verdict), "text",
			r->text, "source", jrow(r->src));
		if (ro && r->src2)
			json_object_set_new(ro, "source2", jrow(r->src2));
		json_array_append_new(rs, ro);
	}
	json_object_set_new(b, "reasons", rs);
	return b;
}

json_t *gpuenv_kb_torch_json(const gpuenv_kb_t *kb, const gpuenv_kb_torch_question_t *q,
	const gpuenv_kb_torch_answer_t *a, const gpuenv_kb_gpu_match_t *gpu)
{
	json_t *root = json_object(), *builds = json_array(), *runs = json_array();
	const gpuenv_kb_pick_t *p = &a->pick;

	if (!root || !builds || !runs) {
		json_decref(root);
		json_decref(builds);
		json_decref(runs);
		return NULL;
	}
	json_object_set_new(root, "gpu", gpu ? gpu_core_json(kb, gpu) : json_null());
	json_object_set_new(root, "driver", q->target && q->target->has_driver
			? gpuenv_kb_driver_json(kb, &q->target->driver) : json_null());
	for (size_t i = 0; i < a->n; i++) {
		const gpuenv_kb_torch_variant_t *v = a->builds[i];
		json_array_append_new(builds, build_json(v, &a->verdicts[i]));
		if (a->verdicts[i].verdict == GPUENV_KB_YES) {
			char name[64];
			snprintf(name, sizeof(name), "%.*s %.*s", GPUENV_STR_ARG(v->torch.str),
				GPUENV_STR_ARG(v->tag));
			json_array_append_new(runs, json_string(name));
		}
	}
	json_object_set_new(root, "builds", builds);
	json_object_set_new(root, "runs", runs);
	json_object_set_new(root, "pick", p->variant
			? json_pack("{s:o, s:o, s:o, s:o, s:o}", "torch", jver(&p->variant->torch), "tag",
				  jstr(p->variant->tag), "cuda", jver(&p->variant->cuda), "driver_upgrade",
				  p->driver_upgrade ? jver(&p->driver_upgrade->driver_linux) : json_null(),
				  "source", jrow(&p->variant->row))
			: json_null());
	return root;
}

/* ---- images ------------------------------------------------------------------------------- */

static json_t *jstrs(const gpuenv_kb_strs_t *l)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, jstr(l->v[i]));
	return a;
}

/* A Docker Hub tag read by its grammar, and what images.toml says of it
 * (docs/kb.md, "`gpuenv kb`'s answers"). */
static void hub_json(const gpuenv_kb_t *kb, json_t *j, const gpuenv_kb_image_ref_t *img)
{
	const gpuenv_kb_hub_tag_t *h = &img->hub;
	const gpuenv_kb_hub_match_t *m = &img->match;
	const gpuenv_kb_cuda_image_t *cr = m->cuda_row;
	const gpuenv_kb_pytorch_image_t *pr = m->pytorch_row;
	/* the cuDNN of a row is that of its cudnn flavours, so of a listed tag only */
	bool cudnn = m->known && cr && h->has_cudnn && cr->cudnn.n;
	int cudnn_major = h->cudnn_major >= 0 ? h->cudnn_major : cudnn ? (int)cr->cudnn.part[0] : -1;
	char newer[480];

	json_object_set_new(j, "image", jstr(h->image));
	json_object_set_new(j, "tag", jstr(h->tag));
	json_object_set_new(j, "grammar", json_string(gpuenv_kb_hub_grammar(h->kind)));
	json_object_set_new(j, "cuda", jver(&h->cuda));
	json_object_set_new(j, "cuda_full",
		h->kind == GPUENV_KB_HUB_CUDA ? jver(&h->cuda_full) : json_null());
	json_object_set_new(j, "torch", h->kind == GPUENV_KB_HUB_PYTORCH ? jver(&h->torch) : json_null());
	json_object_set_new(j, "flavour", jstr(h->flavour));
	json_object_set_new(j, "os", jstr(h->os));
	json_object_set_new(j, "ubuntu", jstr(h->ubuntu));
	json_object_set_new(j, "cudnn", cudnn ? jver(&cr->cudnn) : json_null());
	json_object_set_new(j, "cudnn_major", cudnn_major >= 0 ? json_integer(cudnn_major) : json_null());
	json_object_set_new(j, "python", h->kind == GPUENV_KB_HUB_PYTHON ? jver(&h->python)
					 : m->known && pr	       ? jver(&pr->python)
								       : json_null());
	json_object_set_new(j, "known", json_boolean(m->known));
	json_object_set_new(j, "release_known", json_boolean(m->release_known));
	json_object_set_new(j, "answered_from", json_string(m->known ? "data" : "grammar"));
	json_object_set_new(j, "status", cr ? jstr(cr->status) : json_null());
	json_object_set_new(j, "flavours", cr ? jstrs(&cr->flavours) : pr ? jstrs(&pr->flavours) : json_null());
	json_object_set_new(j, "source", cr ? jrow(&cr->row) : pr ? jrow(&pr->row) : json_null());
	json_object_set_new(j, "newer_than_kb", gpuenv_kb_hub_newer(kb, h, newer, sizeof(newer))
			? json_string(newer) : json_null());
}

json_t *gpuenv_kb_images_json(const gpuenv_kb_t *kb, const char *query,
	const gpuenv_kb_image_ref_t *img, const gpuenv_kb_image_verdict_t *iv, size_t n, bool driver,
	bool gpu)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		const gpuenv_kb_container_t *c = img[i].row;
		const gpuenv_kb_toolkit_t *ga = gpuenv_kb_toolkit(kb, &img[i].cuda, 0);
		json_t *j = json_object();
		if (!j)
			continue;
		if (c) {
			json_object_set_new(j, "image", jstr(c->image));
			json_object_set_new(j, "tag", jstr(c->tag));
			json_object_set_new(j, "release", jver(&c->release));
			json_object_set_new(j, "cuda", jver(&c->cuda));
			json_object_set_new(j, "cuda_full", jver(&c->cuda_full));
			json_object_set_new(j, "python", jver(&c->python));
			json_object_set_new(j, "torch", jstr(c->torch));
			json_object_set_new(j, "tensorrt", jver(&c->tensorrt));
			json_object_set_new(j, "cudnn", jver(&c->cudnn));
			json_object_set_new(j, "nccl", jver(&c->nccl));
			json_object_set_new(j, "tensorrt_llm", jver(&c->tensorrt_llm));
			json_object_set_new(j, "ubuntu", jver(&c->ubuntu));
			json_object_set_new(j, "tensorflow", jstr(c->tensorflow));
			json_object_set_new(j, "jax", jstr(c->jax));
			json_object_set_new(j, "triton", jstr(c->triton));
			json_object_set_new(j, "vllm", jstr(c->vllm));
			json_object_set_new(j, "cuda_driver", jver(&c->cuda_driver));
			json_object_set_new(j, "driver_min_branch", jstr(c->driver_min_branch));
			{
				json_t *dd = json_array();
				for (uint32_t k = 0; dd && k < c->datacenter_drivers.n; k++)
					json_array_append_new(dd, jver(&c->datacenter_drivers.v[k]));
				json_object_set_new(j, "datacenter_drivers", dd ? dd : json_null());
			}
			json_object_set_new(j, "cc_min", jver(&c->cc_min));
			json_object_set_new(j, "jetpack", jver(&c->jetpack));
			json_object_set_new(j, "l4t", jver(&c->l4t));
			json_object_set_new(j, "source", jrow(&c->row));
		} else if (img[i].hub.kind) {
			hub_json(kb, j, &img[i]);
		} else {
			json_object_set_new(j, "image", json_string(query));
			json_object_set_new(j, "cuda", jver(&img[i].cuda));
			json_object_set_new(j, "source", json_null());
		}
		json_object_set_new(j, "min_driver", ga ? jver(&ga->driver_linux) : json_null());
		json_object_set_new(j, "min_driver_source", ga ? jrow(&ga->row) : json_null());
		if (driver) {
			json_object_set_new(j, "runs", json_string(gpuenv_kb_runs_name(iv[i].runs)));
			json_object_set_new(j, "decided_by",
				json_string(iv[i].by_notes ? "release-notes" : "cuda-driver-rule"));
			json_object_set_new(j, "forward_compat_driver",
				iv[i].fc_driver ? jver(iv[i].fc_driver) : json_null());
			json_object_set_new(j, "datacenter_only", json_boolean(iv[i].datacenter_only));
		}
		if (gpu)
			json_object_set_new(j, "cc_ok", iv[i].cc_ok < 0 ? json_null()
								   : json_boolean(iv[i].cc_ok));
		json_array_append_new(arr, j);
	}
	return json_pack("{s:s, s:o}", "query", query, "images", arr);
}

/* ---- sources ------------------------------------------------------------------------------ */

json_t *gpuenv_kb_sources_json(const gpuenv_kb_t *kb)
{
	gpuenv_kb_table_info_t t[64];
	size_t nt = gpuenv_kb_tables(kb, t, 64), total = 0;
	json_t *files = json_array();

	if (nt > 64)
		nt = 64;
	for (int f = 0; files && f < GPUENV_KB_NFILES; f++) {
		json_t *tabs = json_object();
		for (size_t i = 0; tabs && i < nt; i++)
			if (t[i].file == f)
				json_object_set_new(tabs, t[i].name, json_pack("{s:I, s:I}", "rows",
					(json_int_t)t[i].rows, "secondary", (json_int_t)t[i].secondary));
		json_array_append_new(files, json_pack("{s:s, s:s, s:I, s:I, s:o}", "name",
			kb->files[f].name, "origin", kb->files[f].origin, "bytes",
			(json_int_t)kb->files[f].size, "rows", (json_int_t)kb->files[f].rows, "tables",
			tabs));
		total += kb->files[f].rows;
	}
	return json_pack("{s:o, s:I}", "files", files, "rows", (json_int_t)total);
}
