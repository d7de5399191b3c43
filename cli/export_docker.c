/* gpuenv export --format dockerfile | compose (docs/export.md, "Dockerfiles").
 *
 * dockerfile: a target's lock as a Dockerfile whose base image the
 * knowledge base chose or checked (the same gpuenv_kb_image_lookup /
 * gpuenv_kb_image_check as `gpuenv preflight --image`), its requirements
 * (cli_export_requirements, with hashes) and the lock copied and installed
 * before the source in one cached layer, BuildKit's pip cache mount and a
 * non-root user; written with the requirements file and a per-Dockerfile
 * .dockerignore beside -o.  compose: docker-compose.yml, one service per
 * target, with a GPU reservation for the targets that have GPUs.
 *
 * The choice rule (docs/export.md, "The base image"): the lock carries the
 * framework (torch and its nvidia-* wheels) into a venv, so the base is a
 * slim nvidia/cuda image (an NGC framework image would hold a second torch):
 * of the lock's CUDA major, the lock's CUDA release or the nearest newer one
 * of that major, flavour base when the lock brings the CUDA runtime as a
 * wheel and runtime otherwise, on the Ubuntu whose python3 is the target's
 * Python, that the target's driver runs; then by the driver's own support
 * before compatibility, NVIDIA's supported tags before end-of-life ones, the
 * newest patch release. */
#include "export.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/fs.h"
#include "gpuenv/image_manifest.h"
#include "gpuenv/kb.h"
#include "gpuenv/project.h"

#define DK_MAX_KT 8
#define DK_MAX_NOTES 12

/* The target and its lock, as the base image is judged for them. */
struct dk {
	struct cli *cli;
	gpuenv_arena_t *a;
	const gpuenv_kb_t *kb;
	const gpuenv_manifest_target_t *t;
	gpuenv_kb_target_t kts[DK_MAX_KT];
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
};

/* A base image, judged. */
struct dk_base {
	const char *ref;    /* IMAGE:TAG as FROM writes it */
	const char *digest; /* "sha256:...", or NULL */
	gpuenv_kb_image_ref_t img;
	bool known;	    /* the knowledge base judged it */
	bool chosen;	    /* by the rule (not --base) */
	int runs;	    /* enum gpuenv_kb_runs, the worst over the target's GPUs */
	gpuenv_kb_ver_t python; /* the image's Python, n 0: unknown */
	gpuenv_str_t ubuntu;	/* "22.04", or a NULL slice */
	const char *flavour;	/* nvidia/cuda: "runtime", ... */
	const char *notes[DK_MAX_NOTES]; /* why, one line each (Dockerfile comments) */
	size_t nnotes;
	const char *warns[DK_MAX_NOTES]; /* what the user should know (stderr too) */
	size_t nwarns;
};

static const char *fmt(struct dk *d, const char *f, ...) GPUENV_PRINTF(2, 3);
static const char *fmt(struct dk *d, const char *f, ...)
{
	va_list ap;
	gpuenv_str_t s;

	va_start(ap, f);
	s = gpuenv_arena_vprintf(d->a, f, ap);
	va_end(ap);
	return s.ptr ? s.ptr : "(out of memory)";
}

static void note(struct dk_base *b, const char *s)
{
	if (b->nnotes < DK_MAX_NOTES)
		b->notes[b->nnotes++] = s;
}

static void warn(struct dk_base *b, const char *s)
{
	if (b->nwarns < DK_MAX_NOTES)
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
static int lock_cuda(struct dk *d, const gpuenv_lock_t *lk, const char *lock_path)
{
	const char *major_from = NULL;
	const char *be = lk->target.backend;

	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		if (!strcmp(p->name, "torch"))
			d->torch = p->version;
		for (size_t k = 0; k < d->kb->n_wheel_package; k++) {
			const gpuenv_kb_wheel_package_t *w = &d->kb->wheel_package[k];
			if (w->cuda_major == GPUENV_KB_NONE || !gpuenv_str_eq_cstr(w->name, p->name))
				continue;
			if (d->major && (int64_t)d->major != w->cuda_major) {
				gpuenv_fail(&d->cli->ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "the lock mixes "
					"CUDA %u builds (%s) and CUDA %lld ones (%s %s, %s): no one base image "
					"serves both", d->major, major_from, (long long)w->cuda_major, p->name,
					p->version ? p->version : "", where(d, &w->row));
				return gpuenv_hint(&d->cli->ctx, "lock the target again (gpuenv lock --target "
							     "%s); gpuenv doctor names the package at fault",
					d->t->name);
			}
			d->major = (unsigned)w->cuda_major;
			if (!major_from)
				major_from = fmt(d, "%s %s, %s", p->name, p->version ? p->version : "",
					where(d, &w->row));
			break;
		}
		if (!strncmp(p->name, "nvidia-cuda-runtime", strlen("nvidia-cuda-runtime")))
			d->runtime_wheel = true;
	}
	if (be && !strncmp(be, "cu", 2)) {
		const gpuenv_kb_torch_variant_t *v = NULL;
		for (size_t k = 0; k < d->kb->n_torch_variant && !v; k++)
			if (gpuenv_str_eq_cstr(d->kb->torch_variant[k].tag, be))
				v = &d->kb->torch_variant[k];
		if (!v) {
			gpuenv_fail(&d->cli->ctx, GPUENV_ENOTFOUND, lock_path, 0, 0, "the lock's torch build "
				"%s is not in the knowledge base: its CUDA release is unknown", be);
			return gpuenv_hint(&d->cli->ctx, "update the knowledge base (gpuenv kb update), or "
						     "give the base image with --base IMAGE");
		}
		if (d->major && d->major != v->cuda.part[0]) {
			gpuenv_fail(&d->cli->ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "the lock mixes "
				"CUDA %u builds (%s) and a CUDA %u torch build (%s): no one base image serves "
				"both", d->major, major_from, v->cuda.part[0], be);
			return gpuenv_hint(&d->cli->ctx, "lock the target again (gpuenv lock --target %s)",
				d->t->name);
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
	const gpuenv_target_t *t = &d->t->target;
	if (t->driver)
		return fmt(d, "driver %s", t->driver);
	if (t->driver_cuda)
		return fmt(d, "a driver for CUDA <= %s", t->driver_cuda);
	return "no driver declared";
}

static const char *target_text(struct dk *d)
{
	const gpuenv_kb_gpu_t *g = d->nkts ? d->kts[0].gpu : NULL;
	return fmt(d, "target %s (%.*s%s%s)", d->t->name, g ? (int)g->name.len : 0, g ? g->name.ptr : "",
		g ? ", " : "", driver_text(d));
}

/* ---- judging one image ----------------------------------------------------- */

/* Record a refusal (exit 1: the knowledge base says it cannot work). */
static int refuse(struct dk *d, const char *ref, const char *why, const char *hint)
{
	gpuenv_fail(&d->cli->ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "base image %s: %s", ref, why);
	if (hint)
		gpuenv_hint(&d->cli->ctx, "%s", hint);
	return CLI_EXIT_FAIL;
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
 * reasons); CLI_EXIT_FAIL: the knowledge base says it cannot work (the
 * reason recorded in ctx); CLI_EXIT_CANNOT: it cannot be judged (unknown to
 * the knowledge base without trust, or an image this export cannot install
 * Python into); CLI_EXIT_USAGE: a tag that does not fit its image's
 * grammar. */
static int judge(struct dk *d, const char *ref, bool trust, struct dk_base *b)
{
	gpuenv_ctx_t *ctx = &d->cli->ctx;
	const gpuenv_kb_container_t *row;
	const gpuenv_kb_row_t *pysrc = NULL;
	bool any = false;

	memset(b, 0, sizeof(*b));
	b->ref = ref;
	b->runs = GPUENV_KB_RUNS_UNKNOWN;
	if (gpuenv_kb_image_lookup(d->kb, ref, &b->img) != 0) {
		if (ctx->err.code == GPUENV_EUSAGE)
			return CLI_EXIT_USAGE;
		if (!trust) {
			gpuenv_hint(ctx, "its CUDA cannot be checked against %s and the lock; --trust-base "
					 "writes it unchecked", target_text(d));
			return CLI_EXIT_CANNOT;
		}
		gpuenv_error_clear(ctx);
		note(b, fmt(d, "%s is not in the knowledge base: written unchecked (--trust-base); "
			       "the Dockerfile assumes an Ubuntu or Debian image whose python3 is the "
			       "target's Python%s", ref,
			d->py.n ? fmt(d, ", %u.%u", d->py.part[0], d->py.part[1]) : ""));
		warn(b, fmt(d, "%s is not in the knowledge base: its CUDA, its driver needs and its Python "
			       "are not checked (--trust-base)", ref));
		return 0;
	}
	row = b->img.row;
	b->known = true;
	if (row)
		note(b, fmt(d, "%s: CUDA %.*s%s%.*s [%s]", ref, GPUENV_STR_ARG(row->cuda_full.n ? row->cuda_full.str
											: row->cuda.str),
			row->torch.ptr ? ", torch " : "", row->torch.ptr ? (int)row->torch.len : 0,
			row->torch.ptr ? row->torch.ptr : "", where(d, &row->row)));
	else if (b->img.match.cuda_row)
		note(b, fmt(d, "%s: CUDA %.*s, a %s tag [%s]", ref, GPUENV_STR_ARG(b->img.hub.cuda_full.str),
			b->img.match.known ? fmt(d, "listed (%.*s)",
						     GPUENV_STR_ARG(b->img.match.cuda_row->status))
					   : "unlisted",
			where(d, &b->img.match.cuda_row->row)));
	if (!row && !b->img.match.known)
		warn(b, fmt(d, "images.toml does not list %s: judged by the CUDA its tag names", ref));
	if (b->img.hub.kind == GPUENV_KB_HUB_PYTORCH)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "base image %s: pytorch/pytorch "
			"images run conda's Python with their own torch; this export installs the lock into "
			"a venv of the image's system python3", ref),
		       gpuenv_hint(ctx, "use an nvidia/cuda or NGC image (leave --base out: gpuenv "
					"chooses one)"),
		       CLI_EXIT_CANNOT;
	if (d->jetson)
		return refuse(d, ref, fmt(d, "%s is a Jetson: the knowledge base holds no image recorded "
					     "to run on Jetson (L4T), and this one is not", target_text(d)),
			"give the L4T image of the target's JetPack release with --base IMAGE --trust-base");
	b->ubuntu = row ? row->ubuntu.str : b->img.hub.ubuntu;
	if (!row && !b->img.hub.ubuntu.ptr)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "base image %s: an %.*s image; "
			"the Dockerfile installs Python with apt-get, as Ubuntu images have it", ref,
			GPUENV_STR_ARG(b->img.hub.os)),
		       gpuenv_hint(ctx, "use an ubuntu tag of the same CUDA release"), CLI_EXIT_CANNOT;
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
				note(b, runs_text(d, &iv, &b->img));
		}
		any = true;
		if (iv.runs == GPUENV_KB_RUNS_UNKNOWN)
			warn(b, fmt(d, "%s: whether its driver runs %s is not checked", target_text(d), ref));
	}
	if (!row && b->img.hub.kind == GPUENV_KB_HUB_CUDA && b->runs == GPUENV_KB_RUNS_MINOR_COMPAT)
		warn(b, fmt(d, "nvidia/cuda images require their CUDA of the driver (NVIDIA_REQUIRE_CUDA="
			       "cuda>=%u.%u): the NVIDIA container runtime refuses %s ('unsatisfied condition') "
			       "unless the container runs with NVIDIA_DISABLE_REQUIRE=true", b->img.cuda.part[0],
			b->img.cuda.part[1], driver_text(d)));
	if (!d->gpu)
		note(b, fmt(d, "target %s has no GPU: the image's CUDA is not used by it", d->t->name));
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
					  d->py.part[0], d->py.part[1], d->t->name),
			fmt(d, "use an image on the Ubuntu whose python3 is %u.%u, or leave --base out",
				d->py.part[0], d->py.part[1]));
	if (b->python.n && !row)
		note(b, fmt(d, "Ubuntu %.*s, whose python3 is %u.%u, the target's Python (as the NGC "
			       "images built on it record) [%s]", GPUENV_STR_ARG(b->ubuntu), b->python.part[0],
			b->python.part[1], where(d, pysrc)));
	else if (!b->python.n)
		warn(b, fmt(d, "the knowledge base does not say which Python %s has: the lock's wheels "
			       "need the target's%s", ref,
			d->py.n ? fmt(d, ", %u.%u", d->py.part[0], d->py.part[1]) : ""));
	if (row && row->torch.ptr && d->torch)
		warn(b, fmt(d, "%s ships its own torch %.*s; the lock installs torch %s into /opt/venv, "
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
static int choose(struct dk *d, struct dk_base *out)
{
	gpuenv_ctx_t *ctx = &d->cli->ctx;
	const char *flavour = d->runtime_wheel ? "base" : "runtime";
	struct cand *c;
	size_t n = 0, max = 0, rejected = 0;
	int st;

	if (d->jetson) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "%s is a Jetson (%s): the knowledge base "
			"holds no image recorded to run on Jetson (L4T base images are not among its NGC and "
			"nvidia/cuda rows), so gpuenv cannot choose one", target_text(d),
			d->t->platform ? d->t->platform : "aarch64");
		gpuenv_hint(ctx, "give the L4T image of the target's JetPack release with --base IMAGE "
				 "--trust-base (written unchecked)");
		return CLI_EXIT_CANNOT;
	}
	if (!d->gpu && !d->major) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "target %s has no GPU and its lock no CUDA "
			"build: the knowledge base holds CUDA images only", d->t->name);
		gpuenv_hint(ctx, "give an Ubuntu image whose python3 is %u.%u with --base IMAGE "
				 "--trust-base", d->py.part[0], d->py.part[1]);
		return CLI_EXIT_CANNOT;
	}
	if (!d->py.n) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "target %s declares no Python version: "
			"the base image's Python cannot be chosen", d->t->name);
		gpuenv_hint(ctx, "declare python = \"3.X\" in [tool.gpuenv.targets.%s]", d->t->name);
		return CLI_EXIT_CANNOT;
	}
	for (size_t i = 0; i < d->kb->n_cuda_image; i++)
		max += d->kb->cuda_image[i].os.n;
	c = gpuenv_arena_calloc(d->a, max ? max : 1, sizeof(*c));
	if (!c)
		return gpuenv_oom(ctx, "the base images"), CLI_EXIT_CANNOT;
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
			struct dk_base b;
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
		return CLI_EXIT_CANNOT;
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	if ((st = judge(d, c[0].ref, false, out)) != 0)
		return st;
	out->chosen = true;
	out->flavour = flavour;
	note(out, fmt(d, "chosen by gpuenv's rule (docs/export.md, \"The base image\"): CUDA %u%s, "
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

/* ---- files ------------------------------------------------------------------------- */

static bool exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}


/* The directory of file, relative to the project directory ("" for the
 * project directory itself), or NULL (reported) when it is not inside it:
 * the build context is the project directory. */
static const char *rel_dir(struct cli *cli, gpuenv_arena_t *a, const char *verb, const char *projdir,
	const char *file, int *st)
{
	const char *slash = strrchr(file, '/');
	const char *dir = slash ? (slash == file ? "/" : gpuenv_arena_strndup(a, file, (size_t)(slash - file))) : ".";
	char *rp = realpath(projdir, NULL), *rd = dir ? realpath(dir, NULL) : NULL;
	const char *out = NULL;
	size_t n;

	if (!rp || !rd)
		*st = cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: %s", verb, rp ? dir : projdir, strerror(errno));
	else if (n = strlen(rp), !strcmp(rp, rd))
		out = "";
	else if (!strncmp(rp, rd, n) && (rd[n] == '/' || n == 1))
		out = gpuenv_arena_printf(a, "%s/", rd + n + (n > 1)).ptr;
	else
		*st = cli_error(cli, CLI_EXIT_USAGE, "%s: -o %s is outside the project directory %s: the "
			"Dockerfile builds with the project as its context, and COPYs the lock from there",
			verb, file, projdir);
	free(rp);
	free(rd);
	return out;
}

static const char *platform_of(const gpuenv_manifest_target_t *t)
{
	const char *m = t->target.machine;
	if (!m)
		return NULL;
	if (!strcmp(m, "x86_64"))
		return "linux/amd64";
	if (!strcmp(m, "aarch64"))
		return "linux/arm64";
	return NULL;
}

static const char *docker_name(gpuenv_arena_t *a, const char *name)
{
	char *s = gpuenv_arena_strndup(a, name ? name : "app", strlen(name ? name : "app"));
	size_t j = 0;

	if (!s)
		return "app";
	/* a Docker repository path component: [a-z0-9]+ joined by . _ - */
	for (size_t i = 0; s[i]; i++) {
		char ch = s[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			ch = '-';
		if (ch == '-' && (j == 0 || s[j - 1] == '-'))
			continue;
		s[j++] = ch;
	}
	while (j && s[j - 1] == '-')
		j--;
	s[j] = 0;
	return j ? s : "app";
}

static const char *const DOCKERIGNORE =
	"# What docker build leaves out of the context (the project directory).\n"
	"# BuildKit reads <Dockerfile>.dockerignore beside the Dockerfile before the\n"
	"# context's .dockerignore.  Written once by gpuenv export, never overwritten:\n"
	"# edit it.  The lock and the requirements file must stay in the context.\n"
	".git\n"
	".venv\n"
	"venv\n"
	".env\n"
	"**/__pycache__\n"
	"**/*.py[cod]\n"
	".mypy_cache\n"
	".pytest_cache\n"
	".ruff_cache\n"
	".tox\n"
	".nox\n"
	".ipynb_checkpoints\n"
	"build\n"
	"dist\n"
	"*.egg-info\n"
	"Dockerfile*\n"
	"docker-compose*.yml\n"
	"!pylock.*.toml\n"
	"!requirements.*.txt\n";

/* Local paths and file:// indexes a docker build cannot reach. */
static void warn_local(struct cli *cli, const char *verb, const gpuenv_lock_t *lk)
{
	size_t n = 0;
	const char *first = NULL;

	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		bool local = (p->index && !strncmp(p->index, "file:", 5));
		for (size_t w = 0; w < p->nwheels && !local; w++)
			local = !p->wheels[w].url || !strncmp(p->wheels[w].url, "file:", 5);
		if (local && !n++)
			first = p->name;
	}
	if (n)
		fprintf(stderr, "%s: %s: warning: %zu packages (%s first) come from local files or a "
			"file:// index, which a docker build cannot reach\n", cli->prog, verb, n, first);
}

static void put_dockerfile(struct dk *d, const struct cli_export_docker *o, const struct dk_base *b,
	const char *rel, const char *dfname, const char *lockname, const char *reqname, gpuenv_buf_t *df)
{
	const char *img = docker_name(d->a, o->pj->m.name), *plat = platform_of(d->t);

	gpuenv_buf_printf(df, "# syntax=docker/dockerfile:1\n");
	gpuenv_buf_printf(df, "# %s: target %s of %s, generated by gpuenv export --format dockerfile\n"
			      "# from %s; export again after gpuenv lock.  Build in the project directory:\n"
			      "#   docker build%s%s -f %s%s -t %s:%s .\n#\n", dfname, d->t->name,
		o->pj->m.name ? o->pj->m.name : "the project", lockname, plat ? " --platform " : "",
		plat ? plat : "", rel, dfname, img, d->t->name);
	gpuenv_buf_printf(df, "# The base image%s (docs/export.md, \"The base image\"):\n",
		b->chosen ? ", chosen for the target and the lock by the knowledge base" : ", given with --base");
	for (size_t i = 0; i < b->nnotes; i++)
		gpuenv_buf_printf(df, "#   %s\n", b->notes[i]);
	for (size_t i = 0; i < b->nwarns; i++)
		gpuenv_buf_printf(df, "#   warning: %s\n", b->warns[i]);
	if (b->digest)
		gpuenv_buf_printf(df, "FROM %s@%s\n\n", b->ref, b->digest);
	else
		gpuenv_buf_printf(df, "FROM %s\n\n", b->ref);
	gpuenv_buf_printf(df, "# Python%s: the image's Ubuntu python3 (%s), and a venv that holds\n"
			      "# exactly the lock\n"
			      "RUN apt-get update \\\n"
			      "    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
			      "       python3 python3-venv \\\n"
			      "    && rm -rf /var/lib/apt/lists/*\n"
			      "RUN python3 -m venv /opt/venv\n"
			      "ENV VIRTUAL_ENV=/opt/venv \\\n"
			      "    PATH=/opt/venv/bin:$PATH \\\n"
			      "    PIP_DISABLE_PIP_VERSION_CHECK=1 \\\n"
			      "    PYTHONUNBUFFERED=1\n\n",
		d->py.n ? fmt(d, " %u.%u", d->py.part[0], d->py.part[1]) : "",
		!b->known ? "assumed: --trust-base"
		: b->img.row ? "installed in NGC images; python3-venv added"
			     : "nvidia/cuda images carry no Python: installed here");
	gpuenv_buf_printf(df, "# The lock and its requirements before the source: this layer is built again\n"
			      "# only when they change.  pip checks every file's hash (--require-hashes) and\n"
			      "# installs nothing the lock does not name (--no-deps); BuildKit keeps pip's cache.\n"
			      "COPY %s %s%s /opt/gpuenv/\n"
			      "RUN --mount=type=cache,target=/root/.cache/pip \\\n"
			      "    pip install --require-hashes --no-deps -r /opt/gpuenv/%s\n\n",
		lockname, rel, reqname, reqname);
	gpuenv_buf_printf(df, "# A user that is not root; numeric in USER so that Kubernetes' runAsNonRoot\n"
			      "# can check it (uid 10001: Ubuntu 24.04 images have a user of uid 1000)\n"
			      "RUN groupadd --gid 10001 app \\\n"
			      "    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin app\n"
			      "WORKDIR /app\n"
			      "COPY . /app\n"
			      "USER 10001:10001\n");
}

/* The base image's digest from the image lock (image-manifest.json, made by
 * gpuenv image lock; docs/image.md), and the check that it has an image for
 * the target's platform.  0, or the exit status (reported). */
static int pin_digest(struct dk *d, const struct cli_export_docker *o, struct dk_base *b)
{
	struct cli *cli = d->cli;
	const char *path = o->image_manifest;
	const char *m = d->t->target.machine;
	const char *arch = !m ? NULL : !strcmp(m, "x86_64") ? "amd64" : !strcmp(m, "aarch64") ? "arm64" : NULL;
	const gpuenv_image_entry_t *e;
	gpuenv_image_manifest_t im;
	bool found = false;

	if (!path) {
		path = fmt(d, "%s/image-manifest.json", o->pj->dir);
		if (!exists(path))
			return 0;
	}
	if (gpuenv_image_manifest_read(&cli->ctx, d->a, path, &im))
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (!(e = gpuenv_image_manifest_find(&im, b->ref))) {
		warn(b, fmt(d, "%s has no entry for %s: FROM names it by tag only (gpuenv image lock %s "
			       "adds it)", path, b->ref, b->ref));
		return 0;
	}
	for (size_t i = 0; i < e->nplatforms && arch; i++)
		found |= !strcmp(e->platforms[i].os, "linux") && !strcmp(e->platforms[i].architecture, arch);
	if (arch && e->nplatforms && !found) {
		const char *list = "";
		for (size_t i = 0; i < e->nplatforms; i++)
			list = fmt(d, "%s%s%s/%s", list, i ? ", " : "", e->platforms[i].os,
				e->platforms[i].architecture);
		refuse(d, b->ref, fmt(d, "%s records no linux/%s image for it (target %s is %s): only %s",
				      path, arch, d->t->name, m, list),
			"use an image published for the target's platform");
		return cli_report(cli, CLI_EXIT_FAIL);
	}
	if (b->digest && strcmp(b->digest, e->digest)) {
		warn(b, fmt(d, "--base gives %s; %s records %s for %s: FROM writes the one --base gives",
			       b->digest, path, e->digest, b->ref));
		return 0;
	}
	b->digest = e->digest;
	note(b, fmt(d, "digest %s from %s (the image lock)", e->digest, path));
	return 0;
}

static json_t *base_json(const struct dk_base *b)
{
	json_t *notes = json_array(), *warns = json_array();
	for (size_t i = 0; i < b->nnotes; i++)
		json_array_append_new(notes, json_string(b->notes[i]));
	for (size_t i = 0; i < b->nwarns; i++)
		json_array_append_new(warns, json_string(b->warns[i]));
	char cuda[32];
	snprintf(cuda, sizeof(cuda), "%u.%u", b->img.cuda.part[0], b->img.cuda.part[1]);
	return json_pack("{s:s, s:s?, s:b, s:b, s:s?, s:s?, s:o, s:o}", "image", b->ref, "digest", b->digest,
		"chosen", b->chosen, "known", b->known, "cuda", b->img.cuda.n ? cuda : NULL, "flavour",
		b->flavour, "reasons", notes, "warnings", warns);
}

int cli_export_dockerfile(struct cli *cli, const struct cli_export_docker *o)
{
	const char *verb = o->verb->name;
	gpuenv_arena_t a;
	struct dk d;
	struct dk_base b;
	gpuenv_buf_t df, req;
	const char *rel = "", *dir = o->pj->dir, *dfname, *reqname, *lockname, *ignore = NULL;
	const char *reqpath = NULL, *dfpath = NULL;
	bool wrote_ignore = false;
	int st = 0;

	gpuenv_arena_init(&a, &cli->ctx, 0);
	gpuenv_buf_init(&df, &cli->ctx, GPUENV_PYLOCK_MAX_SIZE);
	gpuenv_buf_init(&req, &cli->ctx, GPUENV_PYLOCK_MAX_SIZE);
	memset(&d, 0, sizeof(d));
	d.cli = cli;
	d.a = &a;
	d.kb = o->pj->kb;
	d.t = o->t;
	d.nkts = gpuenv_target_kb(d.kb, &o->t->target, d.kts, DK_MAX_KT);
	if (d.nkts > DK_MAX_KT)
		d.nkts = DK_MAX_KT;
	for (size_t i = 0; i < d.nkts; i++) {
		d.gpu |= d.kts[i].has_cc;
		if (d.kts[i].gpu && gpuenv_str_eq_cstr(d.kts[i].gpu->segment, "jetson"))
			d.jetson = d.kts[i].gpu;
	}
	if (o->t->target.python && gpuenv_kb_ver_parse(gpuenv_str(o->t->target.python), &d.py))
		d.py.n = 2;
	else
		memset(&d.py, 0, sizeof(d.py));
	if (lock_cuda(&d, o->lk, o->lock_path)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (o->base) {
		const char *at = strchr(o->base, '@');
		const char *ref = at ? gpuenv_arena_strndup(&a, o->base, (size_t)(at - o->base)) : o->base;
		st = judge(&d, ref, o->trust_base, &b);
		if (!st && at)
			b.digest = at + 1;
		if (!st && at && !gpuenv_image_digest_valid(gpuenv_str(at + 1))) {
			st = cli_error(cli, CLI_EXIT_USAGE, "%s: --base %s: a digest is sha256: and 64 "
				"lower-case hex digits", verb, o->base);
			goto out;
		}
	} else
		st = choose(&d, &b);
	if (st) {
		st = cli_report(cli, st);
		goto out;
	}
	if ((st = pin_digest(&d, o, &b)) != 0)
		goto out;
	/* where the files go: the Dockerfile at -o, the requirements and the
	 * .dockerignore beside it; COPY paths are relative to the project */
	dfname = gpuenv_arena_printf(&a, "Dockerfile.%s", o->t->name).ptr;
	reqname = gpuenv_arena_printf(&a, "requirements.%s.txt", o->t->name).ptr;
	lockname = gpuenv_project_lock_name(&a, &o->pj->m, o->t);
	if (o->out) {
		const char *slash = strrchr(o->out, '/');
		if (!(rel = rel_dir(cli, &a, verb, dir, o->out, &st)))
			goto out;
		dfname = slash ? slash + 1 : o->out;
		dfpath = o->out;
		reqpath = gpuenv_arena_printf(&a, "%.*s%s", slash ? (int)(slash - o->out + 1) : 0, o->out,
			reqname).ptr;
		ignore = gpuenv_arena_printf(&a, "%s.dockerignore", o->out).ptr;
	}
	if (cli_export_requirements(cli, &a, o->lk, o->lock_path, false, true, &req)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	put_dockerfile(&d, o, &b, rel, dfname, lockname, reqname, &df);
	if (!df.data || (!reqpath && o->out)) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb);
		goto out;
	}
	for (size_t i = 0; i < b.nwarns; i++)
		fprintf(stderr, "%s: %s: warning: %s\n", cli->prog, verb, b.warns[i]);
	warn_local(cli, verb, o->lk);
	if (o->out) {
		/* the requirements first: the Dockerfile never names a file that is not there */
		if (gpuenv_fs_write_atomic(&cli->ctx, reqpath, req.data, req.len, 0644) ||
			(!exists(ignore) && (wrote_ignore = true) &&
				gpuenv_fs_write_atomic(&cli->ctx, ignore, DOCKERIGNORE, strlen(DOCKERIGNORE), 0644)) ||
			gpuenv_fs_write_atomic(&cli->ctx, dfpath, df.data, df.len, 0644)) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
	}
	if (cli->json) {
		json_t *files = json_array(), *j;
		if (o->out) {
			json_array_append_new(files, json_pack("{s:s, s:s}", "path", dfpath, "what", "dockerfile"));
			json_array_append_new(files, json_pack("{s:s, s:s}", "path", reqpath, "what", "requirements"));
			json_array_append_new(files, json_pack("{s:s, s:s, s:b}", "path", ignore, "what",
				"dockerignore", "written", wrote_ignore));
		}
		j = json_pack("{s:s, s:s, s:o, s:o}", "target", o->t->name, "lock", o->lock_path, "base",
			base_json(&b), "files", files);
		if (j && !o->out)
			json_object_set_new(j, "dockerfile", json_string(df.data));
		if (cli_print_json(cli, j))
			st = CLI_EXIT_CANNOT;
	} else if (o->out) {
		fprintf(stderr, "%s: FROM %s%s%s, %zu packages from %s\n", dfpath, b.ref, b.digest ? "@" : "",
			b.digest ? b.digest : "", o->lk->npackages, o->lock_path);
		fprintf(stderr, "%s: the requirements it installs (with hashes)\n", reqpath);
		fprintf(stderr, "%s: %s\n", ignore, wrote_ignore ? "what the build leaves out (edit it)" :
			"there already: left as it is");
		fprintf(stderr, "build: docker build%s%s -f %s -t %s:%s %s\n", platform_of(o->t) ?
			" --platform " : "", platform_of(o->t) ? platform_of(o->t) : "", dfpath,
			docker_name(&a, o->pj->m.name), o->t->name, dir);
	} else {
		if (fwrite(df.data, 1, df.len, stdout) != df.len)
			st = cli_error(cli, CLI_EXIT_CANNOT, "%s: cannot write the output", verb);
		fprintf(stderr, "%s: %s: the Dockerfile COPYs %s: write both with -o %s (or the requirements "
			"alone: gpuenv export --target %s -o %s)\n", cli->prog, verb, reqname, dfname,
			o->t->name, reqname);
	}
out:
	gpuenv_buf_free(&df);
	gpuenv_buf_free(&req);
	gpuenv_arena_free(&a);
	return st;
}

/* ---- compose ------------------------------------------------------------------------ */

int cli_export_compose(struct cli *cli, const struct cli_export_docker *o)
{
	const char *verb = o->verb->name;
	const struct cli_project *pj = o->pj;
	const char *img, *ctxdir = ".", *rel = "";
	gpuenv_arena_t a;
	gpuenv_buf_t y;
	int st = 0;
	size_t missing = 0;

	gpuenv_arena_init(&a, &cli->ctx, 0);
	gpuenv_buf_init(&y, &cli->ctx, 1u << 20);
	img = docker_name(&a, pj->m.name);
	if (o->out) {
		if (!(rel = rel_dir(cli, &a, verb, pj->dir, o->out, &st)))
			goto out;
		/* the context: the project directory, from the compose file's */
		if (*rel) {
			gpuenv_buf_t up;
			gpuenv_buf_init(&up, &cli->ctx, PATH_MAX);
			for (const char *p = rel; *p; p++)
				if (*p == '/')
					gpuenv_buf_puts(&up, up.len ? "/.." : "..");
			ctxdir = up.data ? gpuenv_arena_strndup(&a, up.data, up.len) : NULL;
			gpuenv_buf_free(&up);
		}
	}
	gpuenv_buf_printf(&y, "# docker-compose.yml of %s: one service per target, generated by gpuenv\n"
			      "# export --format compose.  Each service builds the Dockerfile that\n"
			      "#   gpuenv export --target TARGET --format dockerfile -o Dockerfile.TARGET\n"
			      "# writes in the project directory; the GPU targets reserve the node's GPUs.\n"
			      "services:\n", pj->m.name ? pj->m.name : "the project");
	for (size_t i = 0; i < pj->ntargets; i++) {
		const gpuenv_manifest_target_t *t = &pj->targets[i];
		const char *plat = platform_of(t);
		const char *df = gpuenv_arena_printf(&a, "%s/Dockerfile.%s", pj->dir, t->name).ptr;
		gpuenv_buf_printf(&y, "  %s:\n"
				      "    build:\n"
				      "      context: \"%s\"\n"
				      "      dockerfile: \"Dockerfile.%s\"\n"
				      "    image: \"%s:%s\"\n", t->name, ctxdir ? ctxdir : ".", t->name, img, t->name);
		if (plat)
			gpuenv_buf_printf(&y, "    platform: \"%s\"\n", plat);
		if (t->target.ngpus)
			gpuenv_buf_printf(&y, "    deploy:\n"
					      "      resources:\n"
					      "        reservations:\n"
					      "          devices:\n"
					      "            - driver: nvidia\n"
					      "              count: all\n"
					      "              capabilities: [gpu]\n");
		if (df && !exists(df)) {
			fprintf(stderr, "%s: %s: note: service %s needs Dockerfile.%s: gpuenv export --target %s "
				"--format dockerfile -o Dockerfile.%s\n", cli->prog, verb, t->name, t->name, t->name,
				t->name);
			missing++;
		}
	}
	if (!y.data || !ctxdir) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb);
		goto out;
	}
	if (o->out) {
		if (gpuenv_fs_write_atomic(&cli->ctx, o->out, y.data, y.len, 0644))
			st = cli_report(cli, CLI_EXIT_CANNOT);
		else
			fprintf(stderr, "%s: %zu services (%zu Dockerfiles still to export)\n", o->out,
				pj->ntargets, missing);
	} else if (fwrite(y.data, 1, y.len, stdout) != y.len)
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: cannot write the output", verb);
out:
	gpuenv_buf_free(&y);
	gpuenv_arena_free(&a);
	return st;
}
