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
	gpuenv_kb_ver_t wheel_cuda; /* that wheel's CUDA, MAJOR.MINOR (n 0: none) */
	bool py_any;		   /* the rule's last resort: any Ubuntu, Python installed by uv */
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
		if (!strncmp(name, "nvidia-cuda-runtime", strlen("nvidia-cuda-runtime"))) {
			d->runtime_wheel = true;
			/* the wheel's version is the CUDA release it carries (12.4.127) */
			if (version && gpuenv_kb_ver_parse(gpuenv_str(version), &d->wheel_cuda) && d->wheel_cuda.n >= 2)
				d->wheel_cuda.n = 2;
			else
				memset(&d->wheel_cuda, 0, sizeof(d->wheel_cuda));
		}
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

/* The target's driver, on each of its GPUs, against the image's CUDA
 * (b->img.cuda; for an image without CUDA of its own, the lock's: whose
 * says which).  0, or GPUENV_BASE_REFUSED. */
static int judge_driver(struct dk *d, const char *ref, gpuenv_base_image_t *b, const char *whose)
{
	const gpuenv_kb_container_t *row = b->img.row;
	bool any = false;

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
				why = fmt(d, "%s CUDA %u.%u needs %s%.*s%s; %s runs CUDA <= %.*s", whose, b->img.cuda.part[0],
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
		gpuenv_base_warn(b, fmt(d, "nvidia/cuda images require their CUDA of the driver (their NVIDIA_REQUIRE_CUDA="
			       "cuda>=%u.%u), which %s meets only through minor-version compatibility: the "
			       "Dockerfile sets NVIDIA_REQUIRE_CUDA=cuda>=%u.0 instead (without it the NVIDIA "
			       "container runtime refuses it, 'unsatisfied condition', unless the container runs "
			       "with NVIDIA_DISABLE_REQUIRE=true)", b->img.cuda.part[0], b->img.cuda.part[1],
			driver_text(d), b->img.cuda.part[0]));
	return 0;
}

/* Docker's official python image: its Python is the tag's; it has no CUDA of
 * its own, so the driver is judged against the lock's CUDA (the wheels'). */
static int judge_python(struct dk *d, const char *ref, gpuenv_base_image_t *b)
{
	const gpuenv_kb_ver_t *lc = d->cuda.n ? &d->cuda : d->wheel_cuda.n ? &d->wheel_cuda : NULL;

	b->python = b->img.hub.python;
	b->python_from = GPUENV_BASE_PY_IMAGE;
	b->flavour = fmt(d, "%.*s", GPUENV_STR_ARG(b->img.hub.flavour));
	if (d->py.n && !mm_eq(&b->python, &d->py))
		return refuse(d, ref, fmt(d, "its Python is %u.%u (its tag); the lock's wheels are for Python "
					     "%u.%u (target %s)", b->python.part[0], b->python.part[1],
					  d->py.part[0], d->py.part[1], d->need->target),
			fmt(d, "use python:%u.%u-slim-bookworm, or leave --base out", d->py.part[0], d->py.part[1]));
	gpuenv_base_note(b, fmt(d, "%s: Docker's official Python %u.%u image%s%.*s, without CUDA of its own: %s",
			       ref, b->python.part[0], b->python.part[1], b->img.hub.os.len ? " on Debian " : "",
		      GPUENV_STR_ARG(b->img.hub.os),
		      !d->major ? "the lock has no CUDA build"
		      : d->runtime_wheel ? "the lock's nvidia-* wheels bring the CUDA runtime and libraries, "
					   "the NVIDIA container toolkit mounts the driver"
					 : "the lock's CUDA builds must carry their libraries"));
	if (d->major && !d->runtime_wheel)
		gpuenv_base_warn(b, fmt(d, "%s has no CUDA libraries and the lock brings no CUDA runtime wheel "
					   "(nvidia-cuda-runtime-cu%u): its CUDA %u builds must carry their own",
			ref, d->major, d->major));
	if (!d->major) {
		b->runs = GPUENV_KB_RUNS_GA;
		if (d->gpu)
			gpuenv_base_note(b, fmt(d, "the lock has no CUDA build: the image asks nothing of %s",
				driver_text(d)));
		return 0;
	}
	/* what the wheels ask of the driver */
	b->img.cuda.n = 2;
	b->img.cuda.part[0] = d->major;
	b->img.cuda.part[1] = lc ? lc->part[1] : 0;
	b->img.cuda.str = GPUENV_STR_NULL;
	return judge_driver(d, ref, b, "the lock's");
}

static int judge(struct dk *d, const char *ref, bool trust, gpuenv_base_image_t *b);

/* The CUDA the target's environment uses, MAJOR.MINOR ([tool.gpuenv.targets]
 * cuda: a Jetson's JetPack), or the lock's torch build's; n 0 when neither. */
static gpuenv_kb_ver_t target_cuda(const struct dk *d)
{
	gpuenv_kb_ver_t v;

	if (d->need->cuda && gpuenv_kb_ver_parse(gpuenv_str(d->need->cuda), &v) && v.n >= 2)
		v.n = 2;
	else if (d->cuda.n)
		v = d->cuda;
	else
		memset(&v, 0, sizeof(v));
	return v;
}

/* An L4T image (ngc.toml rows with l4t): Jetson targets only, of the
 * target's CUDA (its JetPack's) and Python.  On Jetson the CUDA driver is
 * part of L4T: no driver rule, the image's L4T major must be the device's. */
static int judge_l4t(struct dk *d, const char *ref, gpuenv_base_image_t *b)
{
	const gpuenv_kb_container_t *row = b->img.row;
	gpuenv_kb_ver_t tc = target_cuda(d);

	if (!d->jetson)
		return refuse(d, ref, fmt(d, "an L4T image (JetPack %.*s) runs on Jetson devices only; %s is not "
					     "one [%s]", GPUENV_STR_ARG(row->jetpack.str), target_text(d),
					  where(d, &row->row)),
			"leave --base out: gpuenv chooses an image for the target");
	if (tc.n && !mm_eq(&tc, &row->cuda))
		return refuse(d, ref, fmt(d, "it carries CUDA %.*s (JetPack %.*s, L4T R%.*s) [%s]; %s uses CUDA "
					     "%u.%u: a Jetson's CUDA is its JetPack's", GPUENV_STR_ARG(row->cuda_full.str),
					  GPUENV_STR_ARG(row->jetpack.str), GPUENV_STR_ARG(row->l4t.str),
					  where(d, &row->row), target_text(d), tc.part[0], tc.part[1]),
			"use the L4T image of the target's JetPack release, or leave --base out");
	if (row->python.n && d->py.n && !mm_eq(&row->python, &d->py))
		return refuse(d, ref, fmt(d, "its Python is %.*s [%s]; the lock's wheels are for Python %u.%u "
					     "(target %s)", GPUENV_STR_ARG(row->python.str), where(d, &row->row),
					  d->py.part[0], d->py.part[1], d->need->target),
			"use the L4T image whose Ubuntu ships the target's Python, or leave --base out");
	b->python = row->python;
	b->python.n = row->python.n ? 2 : 0;
	b->ubuntu = row->ubuntu.str;
	b->runs = GPUENV_KB_RUNS_UNKNOWN;
	gpuenv_base_note(b, fmt(d, "%s: JetPack %.*s, L4T R%.*s, CUDA %.*s, Ubuntu %.*s, Python %.*s [%s]", ref,
			       GPUENV_STR_ARG(row->jetpack.str), GPUENV_STR_ARG(row->l4t.str),
		      GPUENV_STR_ARG(row->cuda_full.str), GPUENV_STR_ARG(row->ubuntu.str),
		      GPUENV_STR_ARG(row->python.str), where(d, &row->row)));
	gpuenv_base_note(b, fmt(d, "on Jetson the CUDA driver is part of L4T: the device must run L4T R%u "
			       "(JetPack %u.x); a container of another L4T major release does not run there",
		      row->l4t.part[0], row->jetpack.part[0]));
	if (row->torch.ptr && d->torch)
		gpuenv_base_warn(b, fmt(d, "%s ships its own torch %.*s; the lock installs torch %s into /opt/venv, "
			       "so the image holds two torch builds (and the venv uses the lock's)", ref,
			GPUENV_STR_ARG(row->torch), d->torch));
	return 0;
}

/* A Jetson target: the l4t-jetpack image of its CUDA (its JetPack's) and
 * Python, the newest L4T release among them.  l4t-jetpack, not l4t-pytorch:
 * the lock carries torch (the same reason as nvidia/cuda over NGC's pytorch). */
static int choose_l4t(struct dk *d, gpuenv_base_image_t *out)
{
	const gpuenv_kb_container_t *best = NULL;
	gpuenv_kb_ver_t tc = target_cuda(d);
	const char *have = "";
	int st;

	for (size_t i = 0; i < d->kb->n_container; i++) {
		const gpuenv_kb_container_t *c = &d->kb->container[i];
		if (!c->l4t.n || !gpuenv_str_eq_cstr(c->image, "nvcr.io/nvidia/l4t-jetpack"))
			continue;
		have = fmt(d, "%s%s%.*s (CUDA %.*s, Python %.*s)", have, *have ? ", " : "", GPUENV_STR_ARG(c->tag),
			GPUENV_STR_ARG(c->cuda.str), GPUENV_STR_ARG(c->python.str));
		if ((tc.n && !mm_eq(&tc, &c->cuda)) || (d->py.n && c->python.n && !mm_eq(&d->py, &c->python)))
			continue;
		if (!best || gpuenv_kb_ver_cmp(&c->l4t, &best->l4t) > 0)
			best = c;
	}
	if (!best) {
		gpuenv_fail(d->ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "%s is a Jetson (%s): no l4t-jetpack image in the "
			"knowledge base has %s%s%s (it has %s)", target_text(d),
			d->need->platform ? d->need->platform : "aarch64",
			tc.n ? fmt(d, "CUDA %u.%u", tc.part[0], tc.part[1]) : "",
			tc.n && d->py.n ? " and " : "",
			d->py.n ? fmt(d, "Python %u.%u", d->py.part[0], d->py.part[1]) : "", *have ? have : "none");
		gpuenv_hint(d->ctx, "declare the target's JetPack CUDA (cuda = \"12.6\") and Python, or give the "
				    "L4T image with --base IMAGE");
		return GPUENV_BASE_CANNOT;
	}
	if ((st = judge(d, fmt(d, "%.*s:%.*s", GPUENV_STR_ARG(best->image), GPUENV_STR_ARG(best->tag)), false,
		     out)) != 0)
		return st;
	out->chosen = true;
	gpuenv_base_note(out, fmt(d, "chosen by gpuenv's rule (docs/export.md, \"Jetson\"): the newest l4t-jetpack "
			 "image of the target's CUDA %u.%u and Python %u.%u; l4t-jetpack, not l4t-pytorch, "
			 "because the lock carries torch", tc.part[0], tc.part[1], d->py.part[0], d->py.part[1]));
	return 0;
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
	int st;

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
	if (!row && !b->img.match.known && b->img.hub.kind != GPUENV_KB_HUB_PYTHON)
		gpuenv_base_warn(b, fmt(d, "images.toml does not list %s: judged by the CUDA its tag names", ref));
	if (b->img.hub.kind == GPUENV_KB_HUB_PYTORCH)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "base image %s: pytorch/pytorch "
			"images run conda's Python with their own torch; this export installs the lock into "
			"a venv of the image's system python3", ref),
		       gpuenv_hint(ctx, "use an nvidia/cuda or NGC image (leave --base out: gpuenv "
					"chooses one)"),
		       GPUENV_BASE_CANNOT;
	if (row && row->l4t.n)
		return judge_l4t(d, ref, b);
	if (d->jetson)
		return refuse(d, ref, fmt(d, "%s is a Jetson: only L4T images (nvcr.io/nvidia/l4t-*, built "
					     "for its JetPack release) run on Jetson, and this one is not", target_text(d)),
			"leave --base out (gpuenv chooses the l4t-jetpack image of the target's JetPack), or "
			"give an L4T image with --base");
	if (b->img.hub.kind == GPUENV_KB_HUB_PYTHON)
		return judge_python(d, ref, b);
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
	if ((st = judge_driver(d, ref, b, "its")) != 0)
		return st;
	if (!d->gpu)
		gpuenv_base_note(b, fmt(d, "target %s has no GPU: the image's CUDA is not used by it", d->need->target));
	/* the image's Python: the lock's wheels are for the target's */
	if (row && row->python.n) {
		b->python = row->python;
		b->python.n = 2;
		pysrc = &row->row;
	} else if (!b->ubuntu.ptr || !ubuntu_python(d->kb, b->ubuntu, &b->python, &pysrc))
		memset(&b->python, 0, sizeof(b->python));
	if (d->py_any && d->py.n && (!b->python.n || !mm_eq(&b->python, &d->py))) {
		b->python_from = GPUENV_BASE_PY_UV;
		b->python = d->py;
		gpuenv_base_note(b, fmt(d, "Python %u.%u: installed by uv (a python-build-standalone build; "
			       "docs/export.md, \"The base image\"), because no Ubuntu of the nvidia/cuda "
			       "tags ships it as python3 and the lock brings no CUDA runtime wheel for an "
			       "image without CUDA", d->py.part[0], d->py.part[1]));
		return 0;
	}
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

/* The nvidia/cuda tags of the rule that fit (c, *n of them), judged; *rejected
 * counts those the judgement refused.  With d->py_any any Ubuntu serves (the
 * Dockerfile installs the Python). */
static void collect(struct dk *d, struct cand *c, const char *flavour, size_t *n, size_t *rejected)
{
	*n = *rejected = 0;
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
			struct cand *k = &c[*n];
			if (!gpuenv_str_startswith(os, "ubuntu"))
				continue;
			if (!d->py_any && (!ubuntu_python(d->kb, gpuenv_str_n(os.ptr + 6, os.len - 6), &py, &src) ||
						  !mm_eq(&py, &d->py)))
				continue;
			k->ref = fmt(d, "nvidia/cuda:%.*s-%s-%.*s", GPUENV_STR_ARG(r->cuda_full.str), flavour,
				GPUENV_STR_ARG(os));
			if (judge(d, k->ref, false, &b)) {
				gpuenv_error_clear(d->ctx);
				(*rejected)++;
				continue;
			}
			k->row = r;
			k->dist = d->cuda.n ? r->cuda_full.part[1] - d->cuda.part[1] : 0;
			k->runs_rank = b.runs == GPUENV_KB_RUNS_GA ? 0 : 1;
			k->status_rank = status;
			gpuenv_kb_ver_parse(gpuenv_str_n(os.ptr + 6, os.len - 6), &k->ubuntu);
			k->order = (*n)++;
		}
	}
}

/* No nvidia/cuda tag has an Ubuntu whose python3 is the target's, or the
 * target needs no CUDA image: Docker's official python image, when the lock
 * brings the CUDA runtime as wheels (or has no CUDA build). */
static int choose_python(struct dk *d, size_t rejected, gpuenv_base_image_t *out)
{
	const char *ref = fmt(d, "python:%u.%u-slim-bookworm", d->py.part[0], d->py.part[1]);
	int st;

	if ((st = judge(d, ref, false, out)) != 0)
		return st;
	out->chosen = true;
	gpuenv_base_note(out, fmt(d, "chosen by gpuenv's rule (docs/export.md, \"The base image\"): %s", d->major
			 ? fmt(d, "no nvidia/cuda tag of CUDA %u the knowledge base lists has an Ubuntu whose python3 "
				  "is %u.%u (%zu other tags refused), and the lock brings the CUDA runtime as "
				  "wheels (%s), so the official python image serves: the NVIDIA container toolkit "
				  "supplies the driver, the wheels everything else",
				 d->major, d->py.part[0], d->py.part[1], rejected,
				 d->cuda_from ? d->cuda_from : "nvidia-cuda-runtime")
			 : fmt(d, "the lock has no CUDA build, so the official python image of the target's "
				  "Python %u.%u serves", d->py.part[0], d->py.part[1])));
	return 0;
}

/* The base image by the rule (the file's comment, docs/export.md). */
static int choose(struct dk *d, gpuenv_base_image_t *out)
{
	gpuenv_ctx_t *ctx = d->ctx;
	const char *flavour = d->runtime_wheel ? "base" : "runtime";
	struct cand *c;
	size_t n = 0, max = 0, rejected = 0;
	int st;

	if (d->jetson)
		return choose_l4t(d, out);
	if (!d->py.n) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "target %s declares no Python version: "
			"the base image's Python cannot be chosen", d->need->target);
		gpuenv_hint(ctx, "declare python = \"3.X\" in [tool.gpuenv.targets.%s]", d->need->target);
		return GPUENV_BASE_CANNOT;
	}
	if (!d->gpu && !d->major)
		return choose_python(d, 0, out);
	for (size_t i = 0; i < d->kb->n_cuda_image; i++)
		max += d->kb->cuda_image[i].os.n;
	c = gpuenv_arena_calloc(d->a, max ? max : 1, sizeof(*c));
	if (!c)
		return gpuenv_oom(ctx, "the base images"), GPUENV_BASE_CANNOT;
	collect(d, c, flavour, &n, &rejected);
	if (!n && d->major && d->runtime_wheel)
		return choose_python(d, rejected, out);
	if (!n && !d->runtime_wheel) {
		/* the image must supply the CUDA libraries: a CUDA image on any
		 * Ubuntu, the Python installed by uv */
		d->py_any = true;
		collect(d, c, flavour, &n, &rejected);
	}
	if (!n) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "no nvidia/cuda tag in the knowledge base fits "
			"%s: CUDA %s%s (%s), flavour %s, on an Ubuntu%s, that the "
			"driver runs (%zu such tags refused)", target_text(d),
			d->major ? fmt(d, "%u.", d->major) : "any", d->cuda.n ? fmt(d, "%u or newer",
									   d->cuda.part[1])
								 : (d->major ? "x" : ""),
			d->cuda_from ? d->cuda_from : "the lock has no CUDA build", flavour,
			d->py_any ? "" : fmt(d, " whose python3 is %u.%u", d->py.part[0], d->py.part[1]), rejected);
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

/* NVIDIA_REQUIRE_CUDA for a GPU target: the NVIDIA container toolkit checks
 * its constraints before it starts the container (comma: and), so a node
 * whose driver cannot run the lock's CUDA, or whose GPUs are older than the
 * target's, refuses it at start with "unsatisfied condition" instead of
 * failing inside.  cuda>= is the newest of the lock's CUDA and the image's
 * own (X.0 when the target runs it through minor-version compatibility, which
 * any driver of the major's first release allows); arch>= the lowest
 * compute capability among the target's GPUs. */
static void require(struct dk *d, gpuenv_base_image_t *b)
{
	gpuenv_kb_ver_t cuda = target_cuda(d);
	const char *cuda_why = d->cuda_from;
	unsigned amaj = 0, amin = 0;
	bool arch = false;

	if (!d->gpu)
		return;
	if (d->jetson && b->img.row) {
		cuda = b->img.row->cuda;
		cuda_why = fmt(d, "the image's JetPack %.*s", GPUENV_STR_ARG(b->img.row->jetpack.str));
	} else if (!cuda.n && d->wheel_cuda.n) {
		cuda = d->wheel_cuda;
		cuda_why = "the lock's nvidia-cuda-runtime wheel";
	}
	if (!d->jetson && b->img.cuda.n && b->python_from != GPUENV_BASE_PY_IMAGE &&
		(!cuda.n || gpuenv_kb_ver_cmp(&b->img.cuda, &cuda) > 0)) {
		cuda = b->img.cuda;
		cuda_why = fmt(d, "the image's own CUDA");
	}
	if (!cuda.n && d->major) {
		cuda.n = 2;
		cuda.part[0] = d->major;
		cuda.part[1] = 0;
	}
	if (cuda.n && b->runs == GPUENV_KB_RUNS_MINOR_COMPAT) {
		cuda.part[1] = 0;
		cuda_why = fmt(d, "CUDA %u through minor-version compatibility, as %s runs it", cuda.part[0],
			driver_text(d));
	}
	for (size_t i = 0; i < d->nkts; i++) {
		const gpuenv_kb_target_t *t = &d->kts[i];
		if (t->has_cc && (!arch || t->cc_major < amaj || (t->cc_major == amaj && t->cc_minor < amin))) {
			amaj = t->cc_major;
			amin = t->cc_minor;
			arch = true;
		}
	}
	if (!cuda.n && !arch)
		return;
	b->require_cuda = fmt(d, "%s%s%s", cuda.n ? fmt(d, "cuda>=%u.%u", cuda.part[0], cuda.part[1]) : "",
		cuda.n && arch ? "," : "", arch ? fmt(d, "arch>=%u.%u", amaj, amin) : "");
	b->require_why = fmt(d, "%s%s%s", cuda.n ? fmt(d, "a driver that runs CUDA %u.%u (%s)", cuda.part[0],
								cuda.part[1], cuda_why ? cuda_why : "the lock's")
						      : "",
		cuda.n && arch ? " and " : "",
		arch ? fmt(d, "GPUs of compute capability >= %u.%u (the lowest of target %s's)", amaj, amin,
			       d->need->target)
		     : "");
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
	if (st == GPUENV_BASE_OK)
		require(&d, out);
	out->py = d.py;
	out->major = d.major;
	out->cuda_from = d.cuda_from;
	/* a message that could not be made leaves a Dockerfile without its
	 * reasons: out of memory, not an answer */
	if (d.oom || (st == GPUENV_BASE_CANNOT && ctx->err.code == -ENOMEM))
		return gpuenv_oom(ctx, "the base image"), GPUENV_BASE_CANNOT;
	return st;
}
