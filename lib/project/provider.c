/* The resolver's provider over the index client, for one target
 * (include/gpuenv/project.h).
 *
 * Pages and metadata are fetched in batches.  The first question starts a
 * crawl: the pages of the root names, the metadata of each page's newest
 * usable wheel, the pages of what those require (markers evaluated for the
 * target), and so on until nothing new turns up.  Each round is one
 * parallel batch, so a cold lock waits for about twice the graph's depth
 * in round trips.  What the resolver asks for beyond the crawl (an older
 * version's metadata after a conflict) is fetched on demand, together with
 * whatever else is queued. */
#include "gpuenv/project.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <fnmatch.h>
#include <string.h>

#include "gpuenv/metadata.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/trace.h"
#include "gpuenv/wheel.h"

#define PV_CRAWL_MAX 20000 /* projects one crawl may queue */

struct pv_cand_file {
	gpuenv_pv_file_t pub;
	int meta; /* 0 not asked, 1 queued, 2 have */
	bool deferred; /* a plain torch version for a GPU target: its build is
			  read from its requirements before it is offered */
	const gpuenv_requirement_t *reqs;
	size_t nreqs;
};

struct pv_proj {
	const char *name;
	int state; /* 0 unknown, 1 queued, 2 have */
	bool fallback_tried; /* the torch source lacked it: the rule was asked */
	const char *only_source;
	const gpuenv_index_project_t *page; /* NULL: no source has it */
	gpuenv_candidate_t *cands;
	size_t ncands;
	const char *excluded;
	bool direct; /* a direct reference: its one candidate, no page */
};

struct gpuenv_pv {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t arena;
	gpuenv_pv_opts_t o;
	gpuenv_version_t python;
	gpuenv_strmap_t projs; /* name -> struct pv_proj */
	/* queues */
	struct pv_proj **pq;
	size_t npq, capq;
	struct pv_cand_file **mq;
	size_t nmq, capm;
	bool crawled;
	size_t queued_total;
	/* the torch builds the sources offer (opts' offer_sources) */
	bool offers_done, discovering;
	const char *torch_src;	     /* the source the torch family comes from now */
	const char *torch_error_dyn; /* no offered build runs: why */
	gpuenv_pv_torch_offer_t offer;
	gpuenv_buf_t offered; /* the builds seen, for messages */
};

#define PV_BUILD_READS 12 /* plain torch versions whose build one page reads */

/* The project entry of name (normalised), created when create is set. */
static struct pv_proj *pv_proj(gpuenv_pv_t *pv, const char *name, bool create)
{
	bool found;
	struct pv_proj *p = gpuenv_strmap_get(&pv->projs, name, strlen(name), &found);
	if (found || !create)
		return p;
	p = gpuenv_arena_calloc(&pv->arena, 1, sizeof(*p));
	char *nm = p ? gpuenv_arena_strndup(&pv->arena, name, strlen(name)) : NULL;
	if (!nm) {
		gpuenv_oom(pv->ctx, "the provider's package table");
		return NULL;
	}
	p->name = nm;
	p->only_source = NULL;
	for (size_t i = 0; i < pv->o.nroutes; i++)
		if (!strcmp(pv->o.route_names[i], nm) ||
			(strpbrk(pv->o.route_names[i], "*?[") && fnmatch(pv->o.route_names[i], nm, 0) == 0))
			p->only_source = pv->o.route_sources[i]; /* a name, or a glob (PDM's include_packages) */
	if (!p->only_source && pv->o.torch_source && gpuenv_project_torch_routed(nm))
		p->only_source = pv->o.torch_source;
	if (gpuenv_strmap_put(&pv->projs, nm, strlen(nm), p) != 0)
		return NULL;
	return p;
}

static int pv_push(gpuenv_pv_t *pv, void ***q, size_t *n, size_t *cap, void *item)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		void **nq = realloc(*q, nc * sizeof(*nq));
		if (!nq)
			return gpuenv_oom(pv->ctx, "the provider's fetch queue");
		*q = nq;
		*cap = nc;
	}
	(*q)[(*n)++] = item;
	return 0;
}

static int pv_queue_page(gpuenv_pv_t *pv, const char *name)
{
	struct pv_proj *p = pv_proj(pv, name, true);
	if (!p)
		return -ENOMEM;
	if (p->state != 0 || pv->queued_total >= PV_CRAWL_MAX)
		return 0;
	p->state = 1;
	pv->queued_total++;
	return pv_push(pv, (void ***)&pv->pq, &pv->npq, &pv->capq, p);
}

static int pv_queue_meta(gpuenv_pv_t *pv, struct pv_cand_file *f)
{
	if (f->meta != 0)
		return 0;
	f->meta = 1;
	return pv_push(pv, (void ***)&pv->mq, &pv->nmq, &pv->capm, f);
}

/* ---- candidates from a page ------------------------------------------------ */

struct pv_wheel {
	const gpuenv_index_file_t *f;
	gpuenv_wheel_name_t wn; /* an sdist's name and version are in it too */
	long rank;		/* an sdist ranks after every wheel */
	bool sdist;
	bool deferred;		/* its build is read from its requirements */
	const char *build;	/* the build read from its name, or NULL */
};

/* Is name in a format-control list (or the list ":all:")? */
static bool pv_listed(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], ":all:") || !strcmp(list[i], name))
			return true;
	return false;
}

static int pv_wheel_cmp(const void *a, const void *b)
{
	const struct pv_wheel *x = a, *y = b;
	int c = gpuenv_version_cmp(&y->wn.version, &x->wn.version); /* newest first */
	if (c)
		return c;
	if (x->sdist != y->sdist)
		return x->sdist ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if ((c = gpuenv_wheel_build_cmp(&y->wn, &x->wn)) != 0) /* the highest build first */
		return c;
	return strcmp(x->f->filename, y->f->filename);
}

static bool pv_is_sdist(const char *fn)
{
	size_t n = strlen(fn);
	return (n > 7 && !strcmp(fn + n - 7, ".tar.gz")) || (n > 4 && !strcmp(fn + n - 4, ".zip"));
}

/* The build the torch family must have now: the one taken from what the
 * sources offer, else the backend chosen. */
static const char *pv_backend(const gpuenv_pv_t *pv)
{
	return pv->offer.tag ? pv->offer.tag : pv->o.backend;
}

/* "sm_90 with driver 580.159.04" of the target, into buf. */
static const char *pv_describe(const gpuenv_pv_t *pv, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < pv->o.nkbt && n < size; i++) {
		int w = pv->o.kbt[i].has_cc ? snprintf(buf + n, size - n, "%ssm_%u%u", n ? ", " : "",
			pv->o.kbt[i].cc_major, pv->o.kbt[i].cc_minor) : 0;
		n += w > 0 ? (size_t)w : 0;
	}
	if (n < size && pv->o.nkbt && pv->o.kbt[0].has_driver)
		snprintf(buf + n, size - n, " with driver %.*s", GPUENV_STR_ARG(pv->o.kbt[0].driver.str));
	else if (n < size && pv->o.nkbt && pv->o.kbt[0].driver_cuda.n)
		snprintf(buf + n, size - n, " with a driver for CUDA <= %.*s",
			GPUENV_STR_ARG(pv->o.kbt[0].driver_cuda.str));
	return buf;
}

/* The hardware's word on one torch-family wheel of build b (read from the
 * wheel; NULL: not read yet): NULL when it may be used, else why not (in
 * the arena). */
static const char *pv_hw_reject(gpuenv_pv_t *pv, const char *name, const gpuenv_wheel_name_t *wn,
	const gpuenv_wheel_build_t *b)
{
	const char *t = pv->o.target_name ? pv->o.target_name : "the target";
	const char *want = pv_backend(pv);
	int vl = (int)wn->version_text.len;
	char vt[96], cuda[16];
	gpuenv_str_t head;

	if (!gpuenv_project_torch_routed(name))
		return NULL;
	if (pv->o.torch_error)
		return pv->o.torch_error;
	if (pv->torch_error_dyn && !pv->discovering)
		return pv->torch_error_dyn;
	if (!b)
		return NULL;
	if (pv->o.gpu && b->kind == GPUENV_BUILD_CPU)
		return gpuenv_arena_printf(&pv->arena, "%s %.*s is a CPU-only build (%s) and target %s has a GPU",
			name, vl, wn->version_text.ptr, b->how, t).ptr;
	if (pv->o.gpu && b->kind == GPUENV_BUILD_OTHER)
		return gpuenv_arena_printf(&pv->arena, "%s %.*s is a %s build, not a CUDA one, and target %s has an "
			"NVIDIA GPU", name, vl, wn->version_text.ptr, b->tag, t).ptr;
	if (want && !pv->discovering && b->tag[0] && strcmp(b->tag, want) != 0
		&& (b->kind == GPUENV_BUILD_CUDA || b->kind == GPUENV_BUILD_CPU))
		return gpuenv_arena_printf(&pv->arena, "%s %.*s is of build %s (%s), not %s, which target %s uses",
			name, vl, wn->version_text.ptr, b->tag, b->how, want, t).ptr;
	if (strcmp(name, "torch") != 0 || b->kind != GPUENV_BUILD_CUDA)
		return NULL;
	if (pv->o.gpu && b->kind == GPUENV_BUILD_CUDA && !b->tag[0] && pv->o.hw_strict)
		return gpuenv_arena_printf(&pv->arena, "the build of torch %.*s is CUDA %d (%s) and no more: the "
			"knowledge base cannot confirm that it runs on target %s (tried after the builds it can)", vl,
			wn->version_text.ptr, b->cuda_major, b->how, t).ptr;
	if (!pv->o.kb || !b->tag[0])
		return NULL;
	gpuenv_str_split(wn->version_text, '+', &head);
	snprintf(vt, sizeof(vt), "%.*s+%s", (int)head.len, head.ptr, b->tag);
	const gpuenv_kb_torch_variant_t *var = gpuenv_kb_torch_variant(pv->o.kb, gpuenv_str(vt));
	if (!var) {
		/* the KB has no row for the build: its CUDA against the driver */
		gpuenv_kb_ver_t cv;
		if (!gpuenv_kb_cuda_of_tag(gpuenv_str(b->tag), cuda, sizeof(cuda), &cv))
			return NULL;
		for (size_t i = 0; i < pv->o.nkbt; i++) {
			gpuenv_kb_driver_cuda_t dc;
			if (gpuenv_kb_driver_runs_cuda(pv->o.kb, &pv->o.kbt[i], &cv, &dc) == GPUENV_KB_RUNS_NO)
				return gpuenv_arena_printf(&pv->arena, "torch %.*s (build %s, CUDA %s) on target %s: the "
					"driver runs CUDA <= %.*s", vl, wn->version_text.ptr, b->tag, cuda, t,
					dc.max.n ? (int)dc.max.str.len : 1, dc.max.n ? dc.max.str.ptr : "?").ptr;
		}
		if (pv->o.hw_strict && pv->o.gpu)
			return gpuenv_arena_printf(&pv->arena, "the knowledge base has no row for torch %s and cannot "
				"confirm that it runs on target %s (tried after the builds it can)", vt, t).ptr;
		return NULL;
	}
	if (!pv->o.experimental && gpuenv_str_eq_cstr(var->channel, "experimental"))
		return gpuenv_arena_printf(&pv->arena, "torch %.*s is an experimental build (torch-backend = "
			"\"%.*s\" names it)", vl, wn->version_text.ptr, (int)var->tag.len, var->tag.ptr).ptr;
	for (size_t i = 0; i < pv->o.nkbt; i++) {
		gpuenv_kb_torch_verdict_t vd;
		if (gpuenv_kb_torch_check(pv->o.kb, &pv->o.kbt[i], var, &pv->arena, &vd) != 0)
			return NULL;
		if (vd.verdict == GPUENV_KB_UNKNOWN && pv->o.hw_strict)
			return gpuenv_arena_printf(&pv->arena, "the knowledge base cannot confirm that torch %s "
				"runs on target %s (tried after the builds it can)", vt, t).ptr;
		if (vd.verdict != GPUENV_KB_NO)
			continue;
		for (size_t k = 0; k < vd.n_reason; k++)
			if (vd.reason[k].verdict == GPUENV_KB_NO && vd.reason[k].text)
				return gpuenv_arena_printf(&pv->arena, "torch %.*s%s%s%s on target %s: %s", vl,
					wn->version_text.ptr, wn->version.local.len ? "" : " (build ",
					wn->version.local.len ? "" : b->tag, wn->version.local.len ? "" : ")", t,
					vd.reason[k].text).ptr;
		return gpuenv_arena_printf(&pv->arena, "torch %s cannot run on target %s", vt, t).ptr;
	}
	return NULL;
}

/* Add tag to the ", "-separated list in b unless it is there (a few
 * dozen at most: the rest become "..."). */
static void pv_note_tag(gpuenv_buf_t *b, gpuenv_str_t tag)
{
	const char *p = b->data;
	size_t n = 0;
	while (p && *p) {
		const char *e = strstr(p, ", ");
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == tag.len && !memcmp(p, tag.ptr, l))
			return;
		n++;
		p = e ? e + 2 : p + l;
	}
	if (n == 16) {
		gpuenv_buf_puts(b, ", ...");
		return;
	}
	if (n > 16)
		return;
	gpuenv_buf_printf(b, "%s%.*s", b->len ? ", " : "", (int)tag.len, tag.ptr);
}

static int pv_parse_meta(gpuenv_pv_t *pv, struct pv_cand_file *cf, gpuenv_str_t text);

/* Does every root requirement of name allow version c? */
static bool pv_root_allows(const gpuenv_pv_t *pv, const char *name, const gpuenv_candidate_t *c)
{
	char b[256];
	for (size_t i = 0; i < pv->o.nroots; i++) {
		const gpuenv_requirement_t *r = &pv->o.roots[i];
		if (r->name.len >= sizeof(b) || gpuenv_name_normalize_to(r->name, b, sizeof(b)) == SIZE_MAX
			|| strcmp(b, name) != 0)
			continue;
		if (!gpuenv_specset_contains(&r->spec, gpuenv_str(c->version), &c->v, GPUENV_PRERELEASES_YES))
			return false;
	}
	return true;
}

/* The plain torch versions of a GPU target (no local version): their
 * builds read from their requirements (one metadata batch, the newest
 * PV_BUILD_READS the project's constraint allows), judged, and those that
 * cannot run, or were not read, taken out of p's candidates. */
static int pv_read_builds(gpuenv_pv_t *pv, struct pv_proj *p, size_t *nhw, const char **hw_first, size_t *nunread)
{
	const gpuenv_index_file_t *files[PV_BUILD_READS];
	struct pv_cand_file *cfs[PV_BUILD_READS];
	gpuenv_str_t md[PV_BUILD_READS];
	size_t n = 0, k = 0;
	int rc;

	for (size_t i = 0; i < p->ncands; i++) {
		struct pv_cand_file *cf = p->cands[i].data;
		if (!cf->deferred || cf->meta == 2 || n == PV_BUILD_READS || !pv_root_allows(pv, p->name, &p->cands[i]))
			continue;
		files[n] = cf->pub.file;
		cfs[n++] = cf;
	}
	if (n) {
		memset(md, 0, sizeof(md));
		uint64_t t0 = gpuenv_trace_begin(pv->ctx);
		rc = gpuenv_index_metadata(pv->o.ix, pv->ctx, files, n, md);
		gpuenv_trace_end(pv->ctx, "lock", "torch builds", NULL, "the requirements of plain torch versions", t0);
		if (rc)
			return rc;
		for (size_t i = 0; i < n; i++)
			if ((rc = pv_parse_meta(pv, cfs[i], md[i])) != 0)
				return rc;
	}
	for (size_t i = 0; i < p->ncands; i++) {
		struct pv_cand_file *cf = p->cands[i].data;
		gpuenv_wheel_build_t bl;
		gpuenv_wheel_name_t wn;
		const char *why;
		if (!cf->deferred) {
			p->cands[k++] = p->cands[i];
			continue;
		}
		if (cf->meta != 2) {
			(*nunread)++;
			continue;
		}
		if ((rc = gpuenv_project_wheel_build(pv->ctx, &pv->arena, pv->o.kb, cf->pub.file->filename, cf->reqs,
			     cf->nreqs, pv->o.env, p->page && p->page->source ? p->page->source->url : NULL, &bl)) != 0)
			return rc;
		memset(&wn, 0, sizeof(wn));
		wn.version_text = gpuenv_str(p->cands[i].version);
		wn.version = p->cands[i].v;
		why = pv_hw_reject(pv, p->name, &wn, &bl);
		if (!why && bl.kind == GPUENV_BUILD_UNKNOWN)
			why = gpuenv_arena_printf(&pv->arena, "torch %s: %s, and target %s has a GPU", p->cands[i].version,
				bl.how, pv->o.target_name ? pv->o.target_name : "").ptr;
		if (pv->discovering)
			pv_note_tag(&pv->offered, gpuenv_arena_printf(&pv->arena, "%s (%s)", p->cands[i].version,
				bl.tag[0] ? bl.tag : bl.kind == GPUENV_BUILD_CUDA ? "CUDA" : "build unknown"));
		if (why) {
			if (!*hw_first)
				*hw_first = why;
			(*nhw)++;
			continue;
		}
		cf->deferred = false;
		if (bl.tag[0] && !(cf->pub.build = gpuenv_arena_strndup(&pv->arena, bl.tag, strlen(bl.tag))))
			return gpuenv_oom(pv->ctx, "a torch build");
		p->cands[k++] = p->cands[i];
	}
	p->ncands = k;
	return 0;
}

/* Distinct requires-python values a project's build remembers. */
#define PV_RP_SEEN 8

static int pv_build(gpuenv_pv_t *pv, struct pv_proj *p)
{
	const gpuenv_index_project_t *pg = p->page;
	struct pv_wheel *w = NULL;
	size_t nw = 0, ntag = 0, npy = 0, nsdist = 0, nbad = 0, nhw = 0, nunread = 0;
	const char *rp_seen[PV_RP_SEEN]; /* the requires-python values judged, and how */
	bool rp_excludes[PV_RP_SEEN];
	size_t nrp = 0;
	/* the interpreter and platform tags of the wheels that did not fit */
	gpuenv_buf_t seen, seen_plat;
	const char *hw_first = NULL;
	gpuenv_buf_t msg;
	int rc = 0;

	if (!pg || !pg->nfiles)
		return 0;
	/* a CUDA-suffixed package (nvidia-*-cu12, cupy-cuda12x): its CUDA major
	 * must run on the GPU target's driver, or none of its files is used */
	if (pv->o.gpu && pv->o.kb && pv->o.mtarget && gpuenv_manifest_cuda_major(p->name) > 0) {
		gpuenv_error_t saved = pv->ctx->err;
		if (gpuenv_manifest_cuda_check(pv->ctx, pv->o.kb, pv->o.mtarget, p->name) != 0) {
			if (pv->ctx->err.code == -ENOMEM)
				return pv->ctx->err.code;
			p->excluded = gpuenv_arena_printf(&pv->arena, "%s (from %s): %s", p->name,
				pg->page_url ? pg->page_url : "?", pv->ctx->err.msg).ptr;
			pv->ctx->err = saved;
			return p->excluded ? 0 : gpuenv_oom(pv->ctx, "a project's exclusion");
		}
		pv->ctx->err = saved;
	}
	w = calloc(pg->nfiles, sizeof(*w));
	if (!w)
		return gpuenv_oom(pv->ctx, "a project's files");
	gpuenv_buf_init(&seen, pv->ctx, 4096);
	gpuenv_buf_init(&seen_plat, pv->ctx, 4096);
	for (size_t i = 0; i < pg->nfiles; i++) {
		const gpuenv_index_file_t *f = &pg->files[i];
		struct pv_wheel *x = &w[nw];
		size_t fl = strlen(f->filename);
		if (fl < 5 || strcmp(f->filename + fl - 4, ".whl") != 0) {
			gpuenv_sdist_name_t sn;
			if (!pv_is_sdist(f->filename))
				continue;
			nsdist++;
			if (fl < 8 || strcmp(f->filename + fl - 7, ".tar.gz") != 0
				|| pv_listed(pv->o.only_binary, pv->o.nonly_binary, p->name))
				continue; /* .zip sdists: PKG-INFO is read from .tar.gz only */
			if (gpuenv_sdist_name_parse(pv->ctx, &pv->arena, gpuenv_str(f->filename), &sn) != 0) {
				if (pv->ctx->err.code == -ENOMEM)
					goto fail;
				gpuenv_error_clear(pv->ctx);
				nbad++;
				continue;
			}
			if (!gpuenv_str_eq_cstr(sn.normalized, p->name)) {
				nbad++;
				continue;
			}
			memset(&x->wn, 0, sizeof(x->wn));
			x->wn.normalized = sn.normalized;
			x->wn.version = sn.version;
			x->wn.version_text = sn.version_text;
			x->sdist = true;
			x->rank = LONG_MAX;
		} else {
			if (pv_listed(pv->o.no_binary, pv->o.nno_binary, p->name)) {
				nbad++;
				continue;
			}
			if (gpuenv_wheel_name_parse(pv->ctx, &pv->arena, gpuenv_str(f->filename), 0, &x->wn) != 0) {
				if (pv->ctx->err.code == -ENOMEM)
					goto fail;
				gpuenv_error_clear(pv->ctx);
				nbad++;
				continue;
			}
			if (!gpuenv_str_eq_cstr(x->wn.normalized, p->name)) {
				nbad++;
				continue;
			}
			if ((x->rank = gpuenv_tagset_rank_wheel(pv->o.tags, &x->wn)) < 0) {
				ntag++;
				for (size_t k = 0; k < x->wn.ntags; k++) {
					pv_note_tag(&seen, x->wn.tags[k].interpreter);
					pv_note_tag(&seen_plat, x->wn.tags[k].platform);
				}
				continue;
			}
		}
		if (f->requires_python && pv->o.python) {
			/* a page gives a few values to many files (the index client
			 * keeps one copy of each): each judged once, not parsed into
			 * the arena for each of 80,000 files */
			size_t k = 0;
			while (k < nrp && rp_seen[k] != f->requires_python && strcmp(rp_seen[k], f->requires_python))
				k++;
			if (k == nrp) {
				gpuenv_specset_t rp;
				k = nrp < PV_RP_SEEN ? nrp++ : (size_t)(i % PV_RP_SEEN);
				rp_seen[k] = f->requires_python;
				rp_excludes[k] = false;
				if (gpuenv_specset_parse(pv->ctx, &pv->arena, gpuenv_str(f->requires_python), &rp) != 0) {
					if (pv->ctx->err.code == -ENOMEM)
						goto fail;
					gpuenv_error_clear(pv->ctx); /* pip ignores a bad one too */
				} else {
					rp_excludes[k] = !gpuenv_specset_contains(&rp, gpuenv_str(pv->o.python), &pv->python,
						GPUENV_PRERELEASES_YES);
				}
			}
			if (rp_excludes[k]) {
				npy++;
				continue;
			}
		}
		gpuenv_wheel_build_t bl, *bp = NULL;
		x->deferred = false;
		x->build = NULL;
		if (gpuenv_project_torch_routed(p->name)) {
			const char *src = pg->source ? pg->source->url : NULL;
			if (gpuenv_project_wheel_build(pv->ctx, &pv->arena, pv->o.kb, f->filename, NULL, 0, pv->o.env,
				    src, &bl) != 0)
				goto fail;
			if (bl.kind != GPUENV_BUILD_UNKNOWN)
				bp = &bl;
			else if (pv->o.gpu && !strcmp(p->name, "torch"))
				x->deferred = !x->sdist;
			if (bp && !(x->build = gpuenv_arena_strndup(&pv->arena, bl.tag, strlen(bl.tag))))
				goto oom;
		}
		const char *why = pv_hw_reject(pv, p->name, &x->wn, bp);
		if (!why && x->sdist && pv->o.gpu && !strcmp(p->name, "torch") && !pv->o.torch_error)
			why = gpuenv_arena_printf(&pv->arena, "torch %.*s's source distribution has no build gpuenv "
				"can read, and target %s has a GPU", (int)x->wn.version_text.len,
				x->wn.version_text.ptr, pv->o.target_name ? pv->o.target_name : "").ptr;
		if (pv->discovering && !x->deferred && !strcmp(p->name, "torch"))
			pv_note_tag(&pv->offered, x->wn.version_text);
		if (why) {
			if (!hw_first)
				hw_first = why;
			nhw++;
			continue;
		}
		x->f = f;
		nw++;
	}
	qsort(w, nw, sizeof(*w), pv_wheel_cmp);
	p->cands = gpuenv_arena_calloc(&pv->arena, nw ? nw : 1, sizeof(*p->cands));
	if (!p->cands)
		goto oom;
	for (size_t i = 0; i < nw; i++) {
		if (p->ncands && gpuenv_version_cmp(&p->cands[p->ncands - 1].v, &w[i].wn.version) == 0)
			continue; /* the best wheel of a version is first */
		struct pv_cand_file *cf = gpuenv_arena_calloc(&pv->arena, 1, sizeof(*cf));
		char *ver = gpuenv_arena_strndup(&pv->arena, w[i].wn.version_text.ptr, w[i].wn.version_text.len);
		if (!cf || !ver)
			goto oom;
		cf->pub.file = w[i].f;
		cf->pub.project = pg;
		cf->pub.sdist = w[i].sdist;
		cf->pub.build = w[i].build;
		cf->deferred = w[i].deferred;
		gpuenv_candidate_t *c = &p->cands[p->ncands++];
		c->version = ver;
		c->v = w[i].wn.version;
		c->yanked = w[i].f->yanked;
		c->requires_python = w[i].f->requires_python;
		c->data = cf;
	}
	if ((rc = pv_read_builds(pv, p, &nhw, &hw_first, &nunread)) != 0)
		goto fail;
	if (ntag || npy || nhw || (nsdist && !p->ncands) || nbad || nunread) {
		gpuenv_buf_init(&msg, pv->ctx, 1 << 16);
		gpuenv_buf_printf(&msg, "%s (from %s):", p->name, pg->page_url ? pg->page_url : "?");
		if (ntag)
			gpuenv_buf_printf(&msg, " %zu wheel%s with no tag target %s supports (its best tag is %s; "
				"the wheels are for %s on %s);", ntag, ntag == 1 ? "" : "s",
				pv->o.target_name ? pv->o.target_name : "",
				gpuenv_tagset_get(pv->o.tags, 0) ? gpuenv_tagset_get(pv->o.tags, 0) : "none",
				seen.len ? seen.data : "?", seen_plat.len ? seen_plat.data : "?");
		if (npy)
			gpuenv_buf_printf(&msg, " %zu wheel%s whose requires-python excludes Python %s;", npy,
				npy == 1 ? "" : "s", pv->o.python);
		if (nsdist && !p->ncands)
			gpuenv_buf_printf(&msg, " %zu source distribution%s that could not be used (.zip, or "
				"--only-binary);", nsdist, nsdist == 1 ? "" : "s");
		if (nbad)
			gpuenv_buf_printf(&msg, " %zu file%s with a malformed or foreign name;", nbad,
				nbad == 1 ? "" : "s");
		if (nhw)
			gpuenv_buf_printf(&msg, " %zu wheel%s the hardware rules out, such as: %s;", nhw,
				nhw == 1 ? "" : "s", hw_first);
		if (nunread)
			gpuenv_buf_printf(&msg, " %zu version%s whose build was not read from its requirements "
				"(outside the project's torch constraint, or older than the newest %d), so target %s "
				"does not get %s;", nunread, nunread == 1 ? "" : "s", PV_BUILD_READS,
				pv->o.target_name ? pv->o.target_name : "", nunread == 1 ? "it" : "them");
		if (msg.data && msg.len)
			msg.data[--msg.len] = '\0'; /* the last ';' */
		p->excluded = msg.data ? gpuenv_arena_strndup(&pv->arena, msg.data, msg.len) : NULL;
		gpuenv_buf_free(&msg);
	}
	free(w);
	gpuenv_buf_free(&seen);
	gpuenv_buf_free(&seen_plat);
	return 0;
oom:
	rc = gpuenv_oom(pv->ctx, "a project's candidates");
	free(w);
	gpuenv_buf_free(&seen);
	gpuenv_buf_free(&seen_plat);
	return rc;
fail:
	free(w);
	gpuenv_buf_free(&seen);
	gpuenv_buf_free(&seen_plat);
	return pv->ctx->err.code;
}

/* ---- metadata ----------------------------------------------------------------- */

/* An sdist whose PKG-INFO does not hold its dependencies (PEP 643): its
 * METADATA from its build backend through the caller's hook (lib/builder),
 * or the refusal when there is none. */
static int pv_sdist_dynamic(gpuenv_pv_t *pv, struct pv_cand_file *cf, bool dyn, gpuenv_str_t *text)
{
	const char *fn = cf->pub.file->filename;
	gpuenv_sdist_name_t sn;
	if (!pv->o.sdist_meta.metadata) {
		gpuenv_fail(pv->ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "%s: %s, so its dependencies are known only "
			"after a build, and this lock runs none", fn, dyn ? "PKG-INFO marks Requires-Dist as Dynamic"
			: "PKG-INFO predates Metadata-Version 2.2 (PEP 643)");
		return gpuenv_hint(pv->ctx, "pin a version that has a wheel for the target, or use an index that "
			"publishes one");
	}
	if (gpuenv_sdist_name_parse(pv->ctx, &pv->arena, gpuenv_str(fn), &sn) != 0)
		return pv->ctx->err.code;
	gpuenv_pv_sdist_t sd = { .file = cf->pub.file, .python = pv->o.python, .target_name = pv->o.target_name,
		.name = gpuenv_arena_strndup(&pv->arena, sn.normalized.ptr, sn.normalized.len),
		.version = gpuenv_arena_strndup(&pv->arena, sn.version_text.ptr, sn.version_text.len) };
	if (!sd.name || !sd.version)
		return gpuenv_oom(pv->ctx, "an sdist's name");
	return pv->o.sdist_meta.metadata(pv->o.sdist_meta.self, pv->ctx, &pv->arena, pv->o.ix, &sd, text);
}

static int pv_parse_meta(gpuenv_pv_t *pv, struct pv_cand_file *cf, gpuenv_str_t text)
{
	gpuenv_metadata_t md;
	const char *fn = cf->pub.file->filename;
	if (gpuenv_metadata_parse(pv->ctx, &pv->arena, fn, text, GPUENV_METADATA_LENIENT_VERSION, &md) != 0)
		return pv->ctx->err.code;
	if (cf->pub.sdist) {
		if (!gpuenv_metadata_deps_static(&md)) {
			bool dyn = md.mv_major > 2 || (md.mv_major == 2 && md.mv_minor >= 2);
			gpuenv_str_t built;
			if (pv_sdist_dynamic(pv, cf, dyn, &built) != 0 || gpuenv_metadata_parse(pv->ctx, &pv->arena,
				fn, built, GPUENV_METADATA_LENIENT_VERSION, &md) != 0)
				return pv->ctx->err.code;
		}
	}
	gpuenv_requirement_t *r = gpuenv_arena_calloc(&pv->arena, md.nrequires_dist ? md.nrequires_dist : 1,
		sizeof(*r));
	if (!r)
		return gpuenv_oom(pv->ctx, "a wheel's requirements");
	size_t n = 0;
	for (size_t i = 0; i < md.nrequires_dist; i++) {
		if (!md.requires_dist[i].valid) {
			gpuenv_log(pv->ctx, GPUENV_LOG_WARN, "%s: METADATA line %u: Requires-Dist '%.*s' is not a "
				"PEP 508 requirement; ignored", fn, md.requires_dist[i].line,
				(int)md.requires_dist[i].text.len, md.requires_dist[i].text.ptr);
			continue;
		}
		r[n++] = md.requires_dist[i].req;
	}
	cf->reqs = r;
	cf->nreqs = n;
	cf->meta = 2;
	return 0;
}

/* Queue the pages of what a wheel requires on the target (the crawl). */
static int pv_crawl_reqs(gpuenv_pv_t *pv, const gpuenv_requirement_t *r, size_t n)
{
	gpuenv_marker_env_t env;
	char name[256];
	if (pv->o.env)
		env = *pv->o.env;
	else
		gpuenv_marker_env_default(&env);
	env.extra = "";
	for (size_t i = 0; i < n; i++) {
		if (r[i].marker) {
			bool yes = false;
			if (gpuenv_marker_eval(pv->ctx, r[i].marker, &env, &yes) != 0) {
				gpuenv_error_clear(pv->ctx);
				continue;
			}
			if (!yes)
				continue;
		}
		if (r[i].name.len >= sizeof(name))
			continue;
		gpuenv_name_normalize_to(r[i].name, name, sizeof(name));
		int rc = pv_queue_page(pv, name);
		if (rc)
			return rc;
	}
	return 0;
}

/* The source the torch family comes from now. */
static const char *pv_torch_source(const gpuenv_pv_t *pv)
{
	return pv->torch_src ? pv->torch_src : pv->o.torch_source;
}

/* The one source p's page is asked from (NULL: the priority rule). */
static const char *pv_only(const gpuenv_pv_t *pv, const struct pv_proj *p)
{
	if (p->fallback_tried)
		return NULL;
	if (pv->torch_src && p->only_source == pv->o.torch_source && gpuenv_project_torch_routed(p->name))
		return pv->torch_src;
	return p->only_source;
}

struct pv_offers {
	gpuenv_pv_t *pv;
	struct pv_proj *pages; /* one per source asked; page NULL: not there */
	size_t n;
};

/* Does the torch series x.y of candidate c equal v's? */
static bool pv_same_series(const gpuenv_candidate_t *c, const gpuenv_kb_ver_t *v)
{
	return v->n >= 2 && c->v.nrelease >= 2 && c->v.release[0] == v->part[0] && c->v.release[1] == v->part[1];
}

/* gpuenv_kb_torch_pick_among's filter: a build some source offers in a
 * version the project allows. */
static bool pv_offered(void *arg, const gpuenv_kb_torch_variant_t *v)
{
	const struct pv_offers *o = arg;
	for (size_t i = 0; i < o->n; i++)
		for (size_t k = 0; k < o->pages[i].ncands; k++) {
			const gpuenv_pv_file_t *f = o->pages[i].cands[k].data;
			if (f->build && gpuenv_str_eq_cstr(v->tag, f->build) && pv_same_series(&o->pages[i].cands[k], &v->torch)
				&& pv_root_allows(o->pv, "torch", &o->pages[i].cands[k]))
				return true;
		}
	return false;
}

/* torch-backend "auto" on a GPU target: torch asked of every build's
 * source and of the priority rule's, each wheel's build read from it, and
 * the KB's pick among the builds that exist; the torch family then comes
 * from the source of that build (docs/lock.md).  When no offered build
 * runs, every torch-family wheel is left out saying what was offered and
 * what the target needs. */
static int pv_discover(gpuenv_pv_t *pv)
{
	size_t n = pv->o.noffers + 1, best = SIZE_MAX;
	const char **names = calloc(n, sizeof(*names));
	const char **only = calloc(n, sizeof(*only));
	const gpuenv_index_project_t **out = calloc(n, sizeof(*out));
	struct pv_offers oc = { pv, gpuenv_arena_calloc(&pv->arena, n, sizeof(*oc.pages)), n };
	char d[160];
	int rc = 0;

	pv->offers_done = true;
	if (!names || !only || !out || !oc.pages) {
		free(names), free(only), free(out);
		return gpuenv_oom(pv->ctx, "the torch builds offered");
	}
	for (size_t i = 0; i < n; i++) {
		names[i] = "torch";
		only[i] = i < pv->o.noffers ? pv->o.offer_sources[i] : NULL;
	}
	uint64_t t0 = gpuenv_trace_begin(pv->ctx);
	rc = gpuenv_index_projects(pv->o.ix, pv->ctx, names, only, n, out);
	gpuenv_trace_end(pv->ctx, "lock", "torch builds", NULL, "the torch builds the sources offer", t0);
	pv->discovering = true;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		oc.pages[i].name = "torch";
		oc.pages[i].page = out[i];
		oc.pages[i].state = 2;
		if (out[i])
			rc = pv_build(pv, &oc.pages[i]);
	}
	pv->discovering = false;
	free(names), free(only), free(out);
	if (rc)
		return rc;

	gpuenv_kb_pick_req_t req = { .targets = pv->o.kbt, .n_targets = pv->o.nkbt };
	gpuenv_kb_pick_t pk;
	memset(&pk, 0, sizeof(pk));
	if (pv->o.kb && gpuenv_kb_torch_pick_among(pv->o.kb, &req, pv_offered, &oc, &pv->arena, &pk) != 0)
		return pv->ctx->err.code;
	/* the build index of the pick first, then the priority rule's source */
	for (size_t i = 0; pk.variant && best == SIZE_MAX && i < n; i++)
		for (size_t k = 0; k < oc.pages[i].ncands; k++) {
			const gpuenv_pv_file_t *f = oc.pages[i].cands[k].data;
			if (f->build && gpuenv_str_eq_cstr(pk.variant->tag, f->build)
				&& pv_same_series(&oc.pages[i].cands[k], &pk.variant->torch)) {
				best = i;
				break;
			}
		}
	/* nothing the KB confirms (the second pass): the newest build left */
	for (size_t i = 0; !pk.variant && !pv->o.hw_strict && i < n; i++)
		if (oc.pages[i].ncands && (best == SIZE_MAX
			|| gpuenv_version_cmp(&oc.pages[i].cands[0].v, &oc.pages[best].cands[0].v) > 0))
			best = i;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; pv->o.backend && k < oc.pages[i].ncands; k++) {
			const gpuenv_pv_file_t *f = oc.pages[i].cands[k].data;
			if (!f->build || strcmp(f->build, pv->o.backend) != 0)
				continue;
			pv->offer.fav_tag_offered = true;
			pv->offer.fav_offered |= !pv->o.fav_series || pv_same_series(&oc.pages[i].cands[k], pv->o.fav_series);
		}
	const char *prim = oc.pages[n - 1].page && oc.pages[n - 1].page->source ? oc.pages[n - 1].page->source->url : NULL;
	pv->offer.where = gpuenv_arena_printf(&pv->arena, "%s%s%s", pv->o.torch_index ? pv->o.torch_index : "the torch index",
		prim ? " and " : "", prim ? prim : "").ptr;
	pv->offer.offered = gpuenv_buf_failed(&pv->offered) || !pv->offered.data ? "nothing"
		: gpuenv_arena_strndup(&pv->arena, pv->offered.data, pv->offered.len);
	pv_describe(pv, d, sizeof(d));
	pv->offer.runs_on = gpuenv_arena_strndup(&pv->arena, d, strlen(d));
	if (!pv->offer.where || !pv->offer.offered || !pv->offer.runs_on)
		return gpuenv_oom(pv->ctx, "the torch builds offered");
	if (best != SIZE_MAX) {
		const gpuenv_pv_file_t *f = oc.pages[best].cands[0].data;
		pv->torch_src = oc.pages[best].page->source ? oc.pages[best].page->source->name : NULL;
		pv->offer.tag = pk.variant ? gpuenv_arena_strndup(&pv->arena, pk.variant->tag.ptr, pk.variant->tag.len)
			: f->build;
		if (pk.variant && !pv->offer.tag)
			return gpuenv_oom(pv->ctx, "the torch builds offered");
		return 0;
	}
	const char *why = NULL; /* what the sources' pages said, the priority rule's first */
	for (size_t i = n; !why && i-- > 0;)
		why = oc.pages[i].excluded;
	pv->torch_error_dyn = gpuenv_arena_printf(&pv->arena, "no torch build that %s offers runs on target %s "
		"(%s): they offer %s; the target needs a CUDA build that runs there, as %s (the knowledge base's "
		"pick)%s%s", pv->offer.where, pv->o.target_name ? pv->o.target_name : "", pv->offer.runs_on,
		pv->offer.offered, pv->o.backend ? pv->o.backend : "?", why ? "; " : "", why ? why : "").ptr;
	return pv->torch_error_dyn ? 0 : gpuenv_oom(pv->ctx, "the torch builds offered");
}

/* Fetch everything queued, crawling while crawl is set. */
static int pv_flush(gpuenv_pv_t *pv, bool crawl)
{
	int rc = 0;
	while (pv->npq || pv->nmq) {
		if (pv->npq) {
			size_t n = pv->npq;
			const char **names = malloc(n * sizeof(*names));
			const char **only = malloc(n * sizeof(*only));
			const gpuenv_index_project_t **out = calloc(n, sizeof(*out));
			struct pv_proj **batch = malloc(n * sizeof(*batch));
			if (!names || !only || !out || !batch) {
				free(names), free(only), free(out), free(batch);
				return gpuenv_oom(pv->ctx, "a fetch batch");
			}
			memcpy(batch, pv->pq, n * sizeof(*batch));
			pv->npq = 0;
			for (size_t i = 0; rc == 0 && i < n; i++)
				if (pv->o.noffers && !pv->offers_done && batch[i]->only_source == pv->o.torch_source
					&& gpuenv_project_torch_routed(batch[i]->name))
					rc = pv_discover(pv);
			if (rc) {
				free(names), free(only), free(out), free(batch);
				return rc;
			}
			for (size_t i = 0; i < n; i++) {
				names[i] = batch[i]->name;
				only[i] = pv_only(pv, batch[i]);
			}
			uint64_t t0 = gpuenv_trace_begin(pv->ctx);
			rc = gpuenv_index_projects(pv->o.ix, pv->ctx, names, only, n, out);
			gpuenv_trace_end(pv->ctx, "lock", "crawl pages", NULL, "a round of project pages", t0);
			for (size_t i = 0; rc == 0 && i < n; i++) {
				struct pv_proj *p = batch[i];
				/* the torch family's build index lacks a name: the usual rule */
				if (!out[i] && only[i] && only[i] == pv_torch_source(pv) && !p->fallback_tried
					&& gpuenv_project_torch_routed(p->name)) {
					bool declared = false;
					for (size_t k = 0; k < pv->o.nroutes; k++)
						declared |= !strcmp(pv->o.route_names[k], p->name);
					if (!declared) {
						p->fallback_tried = true;
						rc = pv_push(pv, (void ***)&pv->pq, &pv->npq, &pv->capq, p);
						continue;
					}
				}
				if (p->state == 2)
					continue; /* queued twice */
				p->page = out[i];
				p->state = 2;
				if (!out[i] && pv->torch_error_dyn && gpuenv_project_torch_routed(p->name))
					p->excluded = pv->torch_error_dyn;
				if ((rc = pv_build(pv, p)) != 0)
					break;
				if (crawl && p->ncands)
					rc = pv_queue_meta(pv, p->cands[0].data);
			}
			free(names), free(only), free(out), free(batch);
			if (rc)
				return rc;
		}
		if (pv->nmq) {
			size_t n = pv->nmq;
			const gpuenv_index_file_t **files = malloc(n * sizeof(*files));
			gpuenv_str_t *md = calloc(n, sizeof(*md));
			struct pv_cand_file **batch = malloc(n * sizeof(*batch));
			if (!files || !md || !batch) {
				free(files), free(md), free(batch);
				return gpuenv_oom(pv->ctx, "a metadata batch");
			}
			memcpy(batch, pv->mq, n * sizeof(*batch));
			pv->nmq = 0;
			for (size_t i = 0; i < n; i++)
				files[i] = batch[i]->pub.file;
			uint64_t t0 = gpuenv_trace_begin(pv->ctx);
			rc = gpuenv_index_metadata(pv->o.ix, pv->ctx, files, n, md);
			gpuenv_trace_end(pv->ctx, "lock", "crawl metadata", NULL, "a round of METADATA", t0);
			for (size_t i = 0; rc == 0 && i < n; i++) {
				if ((rc = pv_parse_meta(pv, batch[i], md[i])) != 0)
					break;
				if (crawl)
					rc = pv_crawl_reqs(pv, batch[i]->reqs, batch[i]->nreqs);
			}
			free(files), free(md), free(batch);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int pv_start(gpuenv_pv_t *pv)
{
	int rc;
	if (pv->crawled)
		return 0;
	pv->crawled = true;
	if ((rc = pv_crawl_reqs(pv, pv->o.roots, pv->o.nroots)) != 0)
		return rc;
	for (size_t i = 0; i < pv->o.ndirect; i++)
		if ((rc = pv_crawl_reqs(pv, pv->o.direct[i].reqs, pv->o.direct[i].nreqs)) != 0)
			return rc;
	/* root requirements with extras: their names are asked for too */
	return pv_flush(pv, true);
}

/* ---- the provider interface ------------------------------------------------------ */

static int pv_versions(void *self, gpuenv_ctx_t *ctx, const char *name, const gpuenv_candidate_t **out,
	size_t *n)
{
	gpuenv_pv_t *pv = self;
	struct pv_proj *p;
	int rc;
	(void)ctx;
	if ((rc = pv_start(pv)) != 0)
		return rc;
	if (!(p = pv_proj(pv, name, true)))
		return -ENOMEM;
	if (p->state != 2) {
		if (p->state == 0) {
			pv->queued_total = 0; /* an explicit question is always answered */
			if ((rc = pv_queue_page(pv, name)) != 0)
				return rc;
		}
		if ((rc = pv_flush(pv, true)) != 0)
			return rc;
	}
	if (!p->page && !p->direct)
		return gpuenv_fail(pv->ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "no index has a package named '%s'",
			name);
	*out = p->cands;
	*n = p->ncands;
	return 0;
}

static int pv_requires(void *self, gpuenv_ctx_t *ctx, const char *name, const gpuenv_candidate_t *c,
	const gpuenv_requirement_t **out, size_t *n)
{
	gpuenv_pv_t *pv = self;
	struct pv_cand_file *cf = c->data;
	int rc;
	(void)ctx;
	(void)name;
	if (cf->meta != 2) {
		cf->meta = 0;
		if ((rc = pv_queue_meta(pv, cf)) != 0 || (rc = pv_flush(pv, false)) != 0)
			return rc;
	}
	*out = cf->reqs;
	*n = cf->nreqs;
	return 0;
}

static void pv_prefetch(void *self, gpuenv_ctx_t *ctx, const char *const *names, size_t n)
{
	gpuenv_pv_t *pv = self;
	(void)ctx;
	for (size_t i = 0; i < n; i++)
		if (pv_queue_page(pv, names[i]) != 0) {
			gpuenv_error_clear(pv->ctx);
			return;
		}
}

static const char *pv_excluded(void *self, const char *name)
{
	struct pv_proj *p = pv_proj(self, name, false);
	return p ? p->excluded : NULL;
}

const gpuenv_pv_torch_offer_t *gpuenv_pv_torch_offer(const gpuenv_pv_t *pv)
{
	return pv && pv->offers_done && pv->offer.where ? &pv->offer : NULL;
}

void gpuenv_pv_provider(gpuenv_pv_t *pv, gpuenv_provider_t *out)
{
	*out = (gpuenv_provider_t){ .self = pv, .versions = pv_versions, .requires = pv_requires,
		.prefetch = pv_prefetch, .excluded = pv_excluded };
}

/* The direct references: each name's one candidate, its requirements
 * known, no page asked. */
static int pv_directs(gpuenv_pv_t *pv)
{
	for (size_t i = 0; i < pv->o.ndirect; i++) {
		const gpuenv_pv_direct_t *d = &pv->o.direct[i];
		struct pv_proj *p = pv_proj(pv, d->name, true);
		gpuenv_candidate_t *c = p ? gpuenv_arena_calloc(&pv->arena, 1, sizeof(*c)) : NULL;
		struct pv_cand_file *cf = c ? gpuenv_arena_calloc(&pv->arena, 1, sizeof(*cf)) : NULL;
		if (!cf)
			return gpuenv_oom(pv->ctx, "the provider's package table");
		if (gpuenv_version_parse(pv->ctx, &pv->arena, gpuenv_str(d->version), &c->v) != 0)
			return pv->ctx->err.code;
		cf->pub.direct = d;
		cf->meta = 2;
		cf->reqs = d->reqs;
		cf->nreqs = d->nreqs;
		c->version = d->version;
		c->requires_python = d->requires_python;
		c->data = cf;
		p->direct = true;
		p->state = 2;
		p->cands = c;
		p->ncands = 1;
	}
	return 0;
}

int gpuenv_pv_new(gpuenv_ctx_t *ctx, const gpuenv_pv_opts_t *opts, gpuenv_pv_t **out)
{
	gpuenv_pv_t *pv = calloc(1, sizeof(*pv));
	if (!pv)
		return gpuenv_oom(ctx, "the provider");
	pv->ctx = ctx;
	pv->o = *opts;
	pv->projs.ctx = ctx;
	gpuenv_arena_init(&pv->arena, ctx, 0);
	gpuenv_buf_init(&pv->offered, ctx, 4096);
	if ((opts->python && gpuenv_version_parse(ctx, &pv->arena, gpuenv_str(opts->python), &pv->python) != 0) ||
		pv_directs(pv) != 0) {
		int rc = ctx->err.code;
		gpuenv_pv_free(pv);
		return rc;
	}
	*out = pv;
	return 0;
}

void gpuenv_pv_free(gpuenv_pv_t *pv)
{
	if (!pv)
		return;
	gpuenv_strmap_free(&pv->projs);
	gpuenv_buf_free(&pv->offered);
	free(pv->pq);
	free(pv->mq);
	gpuenv_arena_free(&pv->arena);
	free(pv);
}

bool gpuenv_project_torch_routed(const char *name)
{
	/* the torch family without the CUDA-suffixed names (nvidia-*-cu12,
	 * cupy-cuda12x, ...), which come from their own indexes */
	return gpuenv_manifest_torch_family(name) && gpuenv_manifest_cuda_major(name) == 0;
}
