/* The base image of an exported Dockerfile (include/gpuenv/base_image.h,
 * docs/export.md "The base image"): a given image judged for a target and
 * its lock with the knowledge base's image rules (gpuenv_kb_image_lookup,
 * gpuenv_kb_image_check: the answers of `preflight --image` and `kb image`),
 * or the nvidia/cuda tag the rule chooses. */
#include "gpuenv/base_image.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The target and its lock, as the base image is judged for them. */
struct dk {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	const gpuenv_kb_t *kb;
	const gpuenv_base_need_t *need;
	const gpuenv_kb_target_t *kts;
	size_t nkts;
	bool gpu;			/* the target has a GPU */
	const gpuenv_kb_gpu_t *jetson; /* the target's GPU when it is a Jetson */
	gpuenv_kb_ver_t py;		/* the target's Python, MAJOR.MINOR (n 0: none) */
	/* the lock's CUDA */
	unsigned major;		   /* 0: no CUDA build in the lock */
	gpuenv_kb_ver_t cuda;	   /* the torch build's CUDA ("11.8"), n 0: none */
	const char *cuda_from;	   /* what says so ("torch build cu118 [torch.toml:330]") */
	bool runtime_wheel;	   /* the lock has the CUDA runtime as a wheel */
	const char *torch;	   /* torch's version in the lock, or NULL */
	bool oom;		   /* a message could not be made: the answer is out of memory */
};

static const char *fmt(struct dk *d, const char *f, ...) GPUENV_PRINTF(2, 3);
static const char *fmt(struct dk *d, const char *f, ...)
{
	va_list ap;
	gpuenv_str_t s;

	va_start(ap, f);
	s = gpuenv_arena_vprintf(d->a, f, ap);
	va_end(ap);
	if (!s.ptr)
		d->oom = true;
	return s.ptr ? s.ptr : "(out of memory)";
}

void gpuenv_base_note(gpuenv_base_image_t *b, const char *s)
{
	if (b->nnotes < GPUENV_BASE_MAX_NOTES)
		b->notes[b->nnotes++] = s;
}

void gpuenv_base_warn(gpuenv_base_image_t *b, const char *s)
{
	if (b->nwarns < GPUENV_BASE_MAX_NOTES)
		b->warns[b->nwarns++] = s;
}

static const char *where(struct dk *d, const gpuenv_kb_row_t *row)
{
	char buf[64];
	return fmt(d, "%s", gpuenv_kb_row_where(row, buf, sizeof(buf)));
}

static bool mm_eq(const gpuenv_kb_ver_t *a, const gpuenv_kb_ver_t *b)
{
	return a->n && b->n && a->part[0] == b->part[0] && a->part[1] == b->part[1];
}

/* The Python an Ubuntu release ships as python3: the one the knowledge
 * base's NGC rows built on that Ubuntu record (those images use Ubuntu's
 * python3: 3.10.12 on 22.04), when every such row agrees on MAJOR.MINOR.
 * *src gets the first row.  False when no row says, or they disagree. */
static bool ubuntu_python(const gpuenv_kb_t *kb, gpuenv_str_t ubuntu, gpuenv_kb_ver_t *py,
	const gpuenv_kb_row_t **src)
{
	gpuenv_kb_ver_t u;
	bool found = false;

	if (!ubuntu.ptr || !gpuenv_kb_ver_parse(ubuntu, &u))
		return false;
	for (size_t i = 0; i < kb->n_container; i++) {
		const gpuenv_kb_container_t *c = &kb->container[i];
		if (!c->ubuntu.n || !c->python.n || !mm_eq(&c->ubuntu, &u))
			continue;
		if (found && !mm_eq(&c->python, py))
			return false;
		if (!found) {
			*py = c->python;
			py->n = 2;
			*src = &c->row;
		}
		found = true;
	}
	return found;
}

/* ---- what the lock needs ------------------------------------------------- */

/* The lock's CUDA: the torch build's ([tool.gpuenv] backend, a [[variant]]
 * tag of torch.toml) and the CUDA major of its nvidia-* and other CUDA
 * wheels (wheels.toml [[package]]); one major for all, or an error. */
static int lock_cuda(struct dk *d)
{
	const gpuenv_base_need_t *n = d->need;
	const char *major_from = NULL, *lock_path = n->lock_path;
	const char *be = n->backend;

	for (size_t i = 0; i < n->npkgs; i++) {
		const char *name = n->names[i], *version = n->versions ? n->versions[i] : NULL;
		if (!strcmp(name, "torch"))
			d->torch = version;
		for (size_t k = 0; k < d->kb->n_wheel_package; k++) {
			const gpuenv_kb_wheel_package_t *w = &d->kb->wheel_package[k];
			if (w->cuda_major == GPUENV_KB_NONE || !gpuenv_str_eq_cstr(w->name, name))
				continue;
			if (d->major && (int64_t)d->major != w->cuda_major) {
				gpuenv_fail(d->ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "the lock mixes "
					"CUDA %u builds (%s) and CUDA %lld ones (%s %s, %s): no one base image "
					"serves both", d->major, major_from, (long long)w->cuda_major, name,
					version ? version : "", where(d, &w->row));
				return gpuenv_hint(d->ctx, "lock the target again (gpuenv lock --target "
							     "%s); gpuenv doctor names the package at fault",
					d->need->target);
			}
			d->major = (unsigned)w->cuda_major;
			if (!major_from)
				major_from = fmt(d, "%s %s, %s", name, version ? version : "",
					where(d, &w->row));
			break;
		}
		if (!strncmp(name, "nvidia-cuda-runtime", strlen("nvidia-cuda-runtime")))
			d->runtime_wheel = true;
	}
	if (be && !strncmp(be, "cu", 2)) {
		const gpuenv_kb_torch_variant_t *v = NULL;
		for (size_t k = 0; k < d->kb->n_torch_variant && !v; k++)
			if (gpuenv_str_eq_cstr(d->kb->torch_variant[k].tag, be))
				v = &d->kb->torch_variant[k];
		if (!v) {
			gpuenv_fail(d->ctx, GPUENV_ENOTFOUND, lock_path, 0, 0, "the lock's torch build "
				"%s is not in the knowledge base: its CUDA release is unknown", be);
			return gpuenv_hint(d->ctx, "update the knowledge base (gpuenv kb update), or "
						     "give the base image with --base IMAGE");
		}
		if (d->major && d->major != v->cuda.part[0]) {
			gpuenv_fail(d->ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "the lock mixes "
				"CUDA %u builds (%s) and a CUDA %u torch build (%s): no one base image serves "
				"both", d->major, major_from, v->cuda.part[0], be);
			return gpuenv_hint(d->ctx, "lock the target again (gpuenv lock --target %s)",
				d->need->target);
		}
		d->cuda = v->cuda;
		d->cuda.n = 2;
		d->major = v->cuda.part[0];
		d->cuda_from = fmt(d, "the torch build %s, CUDA %.*s [%s]", be, GPUENV_STR_ARG(v->cuda.str),
			where(d, &v->row));
	} else if (d->major)
		d->cuda_from = fmt(d, "%s", major_from);
	return 0;
}

static const char *driver_text(struct dk *d)
{
	if (d->need->driver)
		return fmt(d, "driver %s", d->need->driver);
	if (d->need->driver_cuda)
		return fmt(d, "a driver for CUDA <= %s", d->need->driver_cuda);
	return "no driver declared";
}

static const char *target_text(struct dk *d)
{
	const gpuenv_kb_gpu_t *g = d->nkts ? d->kts[0].gpu : NULL;
	return fmt(d, "target %s (%.*s%s%s)", d->need->target, g ? (int)g->name.len : 0, g ? g->name.ptr : "",
		g ? ", " : "", driver_text(d));
}

/* ---- judging one image ----------------------------------------------------- */

/* Record a refusal (exit 1: the knowledge base says it cannot work). */
static int refuse(struct dk *d, const char *ref, const char *why, const char *hint)
{
	gpuenv_fail(d->ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "base image %s: %s", ref, why);
	if (hint)
		gpuenv_hint(d->ctx, "%s", hint);
	return GPUENV_BASE_REFUSED;
}

static const char *runs_text(struct dk *d, const gpuenv_kb_image_verdict_t *iv, const gpuenv_kb_image_ref_t *img)
{
	const char *cuda = fmt(d, "CUDA %u.%u", img->cuda.part[0], img->cuda.part[1]);
	const gpuenv_kb_toolkit_t *ga = iv->dc.ga;

	if (iv->by_notes)
		return iv->runs == GPUENV_KB_RUNS_GA
			? fmt(d, "%s is on branch R%u or later, which its release notes require [%s]",
				  driver_text(d), iv->branch, where(d, &img->row->row))
			: fmt(d, "%s is one of the older data-center drivers its release notes allow "
				 "through the CUDA forward-compatibility package it ships [%s]",
				  driver_text(d), where(d, &img->row->row));
	switch (iv->runs) {
	case GPUENV_KB_RUNS_GA:
		return ga ? fmt(d, "%s runs %s by itself (>= %.*s) [%s]", driver_text(d), cuda,
				    GPUENV_STR_ARG(ga->driver_linux.str), where(d, &ga->row))
			  : fmt(d, "%s runs %s by itself", driver_text(d), cuda);
	case GPUENV_KB_RUNS_MINOR_COMPAT:
		return fmt(d, "%s runs %s only through minor-version compatibility (limited features: "
			      "no PTX JIT of newer code) [%s]", driver_text(d), cuda,
			iv->dc.mvc ? where(d, &iv->dc.mvc->row) : "cuda.toml");
	case GPUENV_KB_RUNS_FORWARD_COMPAT:
		return fmt(d, "%s runs %s through the CUDA forward-compatibility package (data-center "
			      "GPUs)", driver_text(d), cuda);
	default:
		return fmt(d, "%s: whether it runs %s is not checked%s%.*s%s", driver_text(d), cuda,
			ga ? " (it needs >= " : "", ga ? (int)ga->driver_linux.str.len : 0,
			ga ? ga->driver_linux.str.ptr : "", ga ? ")" : "");
	}
}

/* Judge ref for the target and its lock.  0: it fits (b filled, with the
 * reasons); GPUENV_BASE_REFUSED: the knowledge base says it cannot work (the
 * reason recorded in ctx); GPUENV_BASE_CANNOT: it cannot be judged (unknown to
 * the knowledge base without trust, or an image this export cannot install
 * Python into); GPUENV_BASE_USAGE: a tag that does not fit its image's
 * grammar. */
static int judge(struct dk *d, const char *ref, bool trust, gpuenv_base_image_t *b)
{
	gpuenv_ctx_t *ctx = d->ctx;
	const gpuenv_kb_container_t *row;
	const gpuenv_kb_row_t *pysrc = NULL;
	bool any = false;

	memset(b, 0, sizeof(*b));
	b->ref = ref;
	b->runs = GPUENV_KB_RUNS_UNKNOWN;
	if (gpuenv_kb_image_lookup(d->kb, ref, &b->img) != 0) {
		if (ctx->err.code == GPUENV_EUSAGE)
			return GPUENV_BASE_USAGE;
		if (!trust) {
			gpuenv_hint(ctx, "its CUDA cannot be checked against %s and the lock; --trust-base "
					 "writes it unchecked", target_text(d));
			return GPUENV_BASE_CANNOT;
		}
		gpuenv_error_clear(ctx);
		gpuenv_base_note(b, fmt(d, "%s is not in the knowledge base: written unchecked (--trust-base); "
			       "the Dockerfile assumes an Ubuntu or Debian image whose python3 is the "
			       "target's Python%s", ref,
			d->py.n ? fmt(d, ", %u.%u", d->py.part[0], d->py.part[1]) : ""));
		gpuenv_base_warn(b, fmt(d, "%s is not in the knowledge base: its CUDA, its driver needs and its Python "
			       "are not checked (--trust-base)", ref));
		return 0;
	}
	row = b->img.row;
	b->known = true;
	if (row)
		gpuenv_base_note(b, fmt(d, "%s: CUDA %.*s%s%.*s [%s]", ref, GPUENV_STR_ARG(row->cuda_full.n ? row->cuda_full.str
											: row->cuda.str),
			row->torch.ptr ? ", torch " : "", row->torch.ptr ? (int)row->torch.len : 0,
			row->torch.ptr ? row->torch.ptr : "", where(d, &row->row)));
	else if (b->img.match.cuda_row)
		gpuenv_base_note(b, fmt(d, "%s: CUDA %.*s, a %s tag [%s]", ref, GPUENV_STR_ARG(b->img.hub.cuda_full.str),
			b->img.match.known ? fmt(d, "listed (%.*s)",
						     GPUENV_STR_ARG(b->img.match.cuda_row->status))
					   : "unlisted",
			where(d, &b->img.match.cuda_row->row)));
	if (!row && !b->img.match.known)
		gpuenv_base_warn(b, fmt(d, "images.toml does not list %s: judged by the CUDA its tag names", ref));
	if (b->img.hub.kind == GPUENV_KB_HUB_PYTORCH)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "base image %s: pytorch/pytorch "
			"images run conda's Python with their own torch; this export installs the lock into "
			"a venv of the image's system python3", ref),
		       gpuenv_hint(ctx, "use an nvidia/cuda or NGC image (leave --base out: gpuenv "
					"chooses one)"),
		       GPUENV_BASE_CANNOT;
	if (d->jetson)
		return refuse(d, ref, fmt(d, "%s is a Jetson: the knowledge base holds no image recorded "
					     "to run on Jetson (L4T), and this one is not", target_text(d)),
			"give the L4T image of the target's JetPack release with --base IMAGE --trust-base");
	b->ubuntu = row ? row->ubuntu.str : b->img.hub.ubuntu;
	if (!row && !b->img.hub.ubuntu.ptr)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "base image %s: an %.*s image; "
			"the Dockerfile installs Python with apt-get, as Ubuntu images have it", ref,
			GPUENV_STR_ARG(b->img.hub.os)),
		       gpuenv_hint(ctx, "use an ubuntu tag of the same CUDA release"), GPUENV_BASE_CANNOT;
	if (!row)
		b->flavour = fmt(d, "%.*s", GPUENV_STR_ARG(b->img.hub.flavour));
	/* the lock's CUDA major */
	if (d->major && b->img.cuda.part[0] != d->major)
		return refuse(d, ref, fmt(d, "its CUDA %u.%u does not match the lock's CUDA %u builds (%s): "
					     "their libraries need a CUDA %u runtime", b->img.cuda.part[0],
					  b->img.cuda.part[1], d->major, d->cuda_from, d->major),
			fmt(d, "use a CUDA %u.x image, or leave --base out: gpuenv chooses one", d->major));
	/* the target's driver, on each of its GPUs */
	for (size_t i = 0; i < d->nkts; i++) {
		gpuenv_kb_image_verdict_t iv;
		gpuenv_kb_image_check(d->kb, &d->kts[i], &b->img, &iv);
		if (iv.cc_ok == 0)
			return refuse(d, ref, fmt(d, "it supports compute capability >= %.*s [%s]; %s is %u.%u",
						     GPUENV_STR_ARG(row->cc_min.str), where(d, &row->row),
						  target_text(d), d->kts[i].cc_major, d->kts[i].cc_minor),
				"use an older release of the image, or leave --base out");
		if (iv.runs == GPUENV_KB_RUNS_NO) {
			const char *why;
			if (iv.by_notes)
				why = fmt(d, "its release notes require driver branch R%u or later, or on "
					     "data-center GPUs one of the older drivers they list [%s]; %s %s",
					  iv.branch, where(d, &row->row), target_text(d),
					  iv.not_datacenter ? "has a listed driver, but not a data-center GPU"
							    : "has neither");
			else
				why = fmt(d, "its CUDA %u.%u needs %s%.*s%s; %s runs CUDA <= %.*s", b->img.cuda.part[0],
					  b->img.cuda.part[1], iv.dc.ga ? "driver >= " : "a newer driver",
					  iv.dc.ga ? (int)iv.dc.ga->driver_linux.str.len : 0,
					  iv.dc.ga ? iv.dc.ga->driver_linux.str.ptr : "",
					  iv.dc.ga ? fmt(d, " [%s]", where(d, &iv.dc.ga->row)) : "",
					  target_text(d), iv.dc.max.n ? (int)iv.dc.max.str.len : 1,
					  iv.dc.max.n ? iv.dc.max.str.ptr : "?");
			return refuse(d, ref, why, "upgrade the target's driver, or use an image of an older "
						   "CUDA release (leave --base out: gpuenv chooses one)");
		}
		if (!any || iv.runs == GPUENV_KB_RUNS_UNKNOWN ||
			(b->runs == GPUENV_KB_RUNS_GA && iv.runs != GPUENV_KB_RUNS_GA)) {
			b->runs = iv.runs;
			if (i == 0 || iv.runs != GPUENV_KB_RUNS_GA)
				gpuenv_base_note(b, runs_text(d, &iv, &b->img));
		}
		any = true;
		if (iv.runs == GPUENV_KB_RUNS_UNKNOWN)
			gpuenv_base_warn(b, fmt(d, "%s: whether its driver runs %s is not checked", target_text(d), ref));
	}
	if (!row && b->img.hub.kind == GPUENV_KB_HUB_CUDA && b->runs == GPUENV_KB_RUNS_MINOR_COMPAT)
		gpuenv_base_warn(b, fmt(d, "nvidia/cuda images require their CUDA of the driver (NVIDIA_REQUIRE_CUDA="
			       "cuda>=%u.%u): the NVIDIA container runtime refuses %s ('unsatisfied condition') "
			       "unless the container runs with NVIDIA_DISABLE_REQUIRE=true", b->img.cuda.part[0],
			b->img.cuda.part[1], driver_text(d)));
	if (!d->gpu)
		gpuenv_base_note(b, fmt(d, "target %s has no GPU: the image's CUDA is not used by it", d->need->target));
	/* the image's Python: the lock's wheels are for the target's */
	if (row && row->python.n) {
		b->python = row->python;
		b->python.n = 2;
		pysrc = &row->row;
	} else if (!b->ubuntu.ptr || !ubuntu_python(d->kb, b->ubuntu, &b->python, &pysrc))
		memset(&b->python, 0, sizeof(b->python));
	if (b->python.n && d->py.n && !mm_eq(&b->python, &d->py))
		return refuse(d, ref, fmt(d, "its Python is %u.%u [%s]; the lock's wheels are for Python %u.%u "
					     "(target %s)", b->python.part[0], b->python.part[1], where(d, pysrc),
					  d->py.part[0], d->py.part[1], d->need->target),
			fmt(d, "use an image on the Ubuntu whose python3 is %u.%u, or leave --base out",
				d->py.part[0], d->py.part[1]));
	if (b->python.n && !row)
		gpuenv_base_note(b, fmt(d, "Ubuntu %.*s, whose python3 is %u.%u, the target's Python (as the NGC "
			       "images built on it record) [%s]", GPUENV_STR_ARG(b->ubuntu), b->python.part[0],
			b->python.part[1], where(d, pysrc)));
	else if (!b->python.n)
		gpuenv_base_warn(b, fmt(d, "the knowledge base does not say which Python %s has: the lock's wheels "
			       "need the target's%s", ref,
			d->py.n ? fmt(d, ", %u.%u", d->py.part[0], d->py.part[1]) : ""));
	if (row && row->torch.ptr && d->torch)
		gpuenv_base_warn(b, fmt(d, "%s ships its own torch %.*s; the lock installs torch %s into /opt/venv, "
			       "so the image holds two torch builds (and the venv uses the lock's)", ref,
			GPUENV_STR_ARG(row->torch), d->torch));
	return 0;
}

/* ---- the rule ------------------------------------------------------------------ */

struct cand {
	const gpuenv_kb_cuda_image_t *row;
	const char *ref;
	unsigned dist;	  /* minor releases above the lock's */
	int runs_rank;	  /* 0 the driver by itself, 1 compatibility or unknown */
	int status_rank;  /* 0 supported, 1 end-of-life */
	gpuenv_kb_ver_t ubuntu;
	size_t order;
};

static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	int c;

	if (a->runs_rank != b->runs_rank)
		return a->runs_rank - b->runs_rank;
	if (a->dist != b->dist)
		return a->dist < b->dist ? -1 : 1;
	if (a->status_rank != b->status_rank)
		return a->status_rank - b->status_rank;
	if ((c = gpuenv_kb_ver_cmp(&b->row->cuda_full, &a->row->cuda_full)) != 0)
		return c;
	if ((c = gpuenv_kb_ver_cmp(&b->ubuntu, &a->ubuntu)) != 0)
		return c;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* The base image by the rule (the file's comment, docs/export.md). */
static int choose(struct dk *d, gpuenv_base_image_t *out)
{
	gpuenv_ctx_t *ctx = d->ctx;
	const char *flavour = d->runtime_wheel ? "base" : "runtime";
	struct cand *c;
	size_t n = 0, max = 0, rejected = 0;
	int st;

	if (d->jetson) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "%s is a Jetson (%s): the knowledge base "
			"holds no image recorded to run on Jetson (L4T base images are not among its NGC and "
			"nvidia/cuda rows), so gpuenv cannot choose one", target_text(d),
			d->need->platform ? d->need->platform : "aarch64");
		gpuenv_hint(ctx, "give the L4T image of the target's JetPack release with --base IMAGE "
				 "--trust-base (written unchecked)");
		return GPUENV_BASE_CANNOT;
	}
	if (!d->gpu && !d->major) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "target %s has no GPU and its lock no CUDA "
			"build: the knowledge base holds CUDA images only", d->need->target);
		gpuenv_hint(ctx, "give an Ubuntu image whose python3 is %u.%u with --base IMAGE "
				 "--trust-base", d->py.part[0], d->py.part[1]);
		return GPUENV_BASE_CANNOT;
	}
	if (!d->py.n) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "target %s declares no Python version: "
			"the base image's Python cannot be chosen", d->need->target);
		gpuenv_hint(ctx, "declare python = \"3.X\" in [tool.gpuenv.targets.%s]", d->need->target);
		return GPUENV_BASE_CANNOT;
	}
	for (size_t i = 0; i < d->kb->n_cuda_image; i++)
		max += d->kb->cuda_image[i].os.n;
	c = gpuenv_arena_calloc(d->a, max ? max : 1, sizeof(*c));
	if (!c)
		return gpuenv_oom(ctx, "the base images"), GPUENV_BASE_CANNOT;
	for (size_t i = 0; i < d->kb->n_cuda_image; i++) {
		const gpuenv_kb_cuda_image_t *r = &d->kb->cuda_image[i];
		bool has = false;
		int status = gpuenv_str_eq_cstr(r->status, "supported")	   ? 0
			   : gpuenv_str_eq_cstr(r->status, "end-of-life") ? 1
									  : -1;
		if (status < 0 || (d->major && r->cuda_full.part[0] != d->major))
			continue;
		if (d->cuda.n && r->cuda_full.part[1] < d->cuda.part[1])
			continue;
		for (uint32_t f = 0; f < r->flavours.n; f++)
			has |= gpuenv_str_eq_cstr(r->flavours.v[f], flavour);
		if (!has)
			continue;
		for (uint32_t o = 0; o < r->os.n; o++) {
			gpuenv_str_t os = r->os.v[o];
			gpuenv_base_image_t b;
			gpuenv_kb_ver_t py;
			const gpuenv_kb_row_t *src;
			struct cand *k = &c[n];
			if (!gpuenv_str_startswith(os, "ubuntu") ||
				!ubuntu_python(d->kb, gpuenv_str_n(os.ptr + 6, os.len - 6), &py, &src) ||
				!mm_eq(&py, &d->py))
				continue;
			k->ref = fmt(d, "nvidia/cuda:%.*s-%s-%.*s", GPUENV_STR_ARG(r->cuda_full.str), flavour,
				GPUENV_STR_ARG(os));
			st = judge(d, k->ref, false, &b);
			gpuenv_error_clear(ctx);
			if (st) {
				rejected++;
				continue;
			}
			k->row = r;
			k->dist = d->cuda.n ? r->cuda_full.part[1] - d->cuda.part[1] : 0;
			k->runs_rank = b.runs == GPUENV_KB_RUNS_GA ? 0 : 1;
			k->status_rank = status;
			gpuenv_kb_ver_parse(gpuenv_str_n(os.ptr + 6, os.len - 6), &k->ubuntu);
			k->order = n++;
		}
	}
	if (!n) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "no nvidia/cuda tag in the knowledge base fits "
			"%s: CUDA %s%s (%s), flavour %s, on an Ubuntu whose python3 is %u.%u, that the "
			"driver runs (%zu such tags refused)", target_text(d),
			d->major ? fmt(d, "%u.", d->major) : "any", d->cuda.n ? fmt(d, "%u or newer",
									   d->cuda.part[1])
								 : (d->major ? "x" : ""),
			d->cuda_from ? d->cuda_from : "the lock has no CUDA build", flavour, d->py.part[0],
			d->py.part[1], rejected);
		gpuenv_hint(ctx, "give one with --base IMAGE (checked the same way); gpuenv kb image "
				 "nvidia/cuda lists the tags the knowledge base knows");
		return GPUENV_BASE_CANNOT;
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	if ((st = judge(d, c[0].ref, false, out)) != 0)
		return st;
	out->chosen = true;
	out->flavour = flavour;
	gpuenv_base_note(out, fmt(d, "chosen by gpuenv's rule (docs/export.md, \"The base image\"): CUDA %u%s, "
			 "flavour %s (%s), %s tag", d->major ? d->major : c[0].row->cuda_full.part[0],
		      d->cuda.n ? fmt(d, ".%u%s (%s)", c[0].row->cuda_full.part[1],
					  c[0].dist ? fmt(d, ", the nearest newer than the lock's %u.%u with "
							     "this Ubuntu", d->cuda.part[0], d->cuda.part[1])
						    : ", the lock's",
					  d->cuda_from)
				: fmt(d, ".x (%s)", d->cuda_from ? d->cuda_from : "any: the lock has no CUDA build"),
		      flavour, d->runtime_wheel ? "the lock brings the CUDA runtime as wheels"
						: "the image supplies the CUDA libraries",
		      c[0].status_rank ? "an end-of-life" : "a supported"));
	return 0;
}

int gpuenv_base_image(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_base_need_t *need, const char *ref, bool trust, gpuenv_base_image_t *out)
{
	struct dk d = { .ctx = ctx, .a = arena, .kb = kb, .need = need, .kts = need->kts, .nkts = need->nkts };
	int st;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < d.nkts; i++) {
		d.gpu |= d.kts[i].has_cc;
		if (d.kts[i].gpu && gpuenv_str_eq_cstr(d.kts[i].gpu->segment, "jetson"))
			d.jetson = d.kts[i].gpu;
	}
	if (need->python && gpuenv_kb_ver_parse(gpuenv_str(need->python), &d.py))
		d.py.n = 2;
	else
		memset(&d.py, 0, sizeof(d.py));
	if (lock_cuda(&d) != 0)
		return d.oom ? gpuenv_oom(ctx, "the base image"), GPUENV_BASE_CANNOT : GPUENV_BASE_CANNOT;
	st = ref ? judge(&d, ref, trust, out) : choose(&d, out);
	out->py = d.py;
	out->major = d.major;
	out->cuda_from = d.cuda_from;
	/* a message that could not be made leaves a Dockerfile without its
	 * reasons: out of memory, not an answer */
	if (d.oom || (st == GPUENV_BASE_CANNOT && ctx->err.code == -ENOMEM))
		return gpuenv_oom(ctx, "the base image"), GPUENV_BASE_CANNOT;
	return st;
}
