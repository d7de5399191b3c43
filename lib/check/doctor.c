/* gpuenv doctor: rules over the probe's facts (docs/doctor.md).
 *
 * Each rule reads the decoded facts (include/gpuenv/facts.h) and the
 * knowledge base, and adds verdicts; none reads a file or the environment,
 * so a snapshot judged here gives the same verdicts on any machine.  A
 * field that is missing or of the wrong type reads as "unknown", and a rule
 * that needs an unknown fact stays silent rather than guess.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"

const char *gpuenv_severity_name(int severity)
{
	switch (severity) {
	case GPUENV_SEV_INFO:
		return "info";
	case GPUENV_SEV_WARNING:
		return "warning";
	case GPUENV_SEV_ERROR:
		return "error";
	default:
		return "unknown";
	}
}

/* ==== readers ============================================================ */

/* A library copy's version and its source; NULL when unknown (or no copy). */
static const char *lib_version(const gpuenv_facts_library_t *l)
{
	return l ? l->version.version : NULL;
}

static const char *lib_vsrc(const gpuenv_facts_library_t *l)
{
	return l ? l->version.source : NULL;
}

/* Where a copy was found ("wheel", "LD_LIBRARY_PATH", ...). */
static bool lib_where(const gpuenv_facts_library_t *l, const char *how)
{
	for (size_t i = 0; i < l->where.n; i++)
		if (strcmp(l->where.items[i], how) == 0)
			return true;
	return false;
}

static const char *lib_where_first(const gpuenv_facts_library_t *l)
{
	return l->where.n ? l->where.items[0] : NULL;
}

/* ==== one Python environment ============================================= */

#define NAME_MAX_LEN 128

struct ddist {
	char norm[NAME_MAX_LEN];
	const char *version;
	const gpuenv_facts_dist_t *fd;
	size_t i;
};

struct denv {
	const gpuenv_facts_env_t *fe;
	size_t i;
	const char *path;
	const char *python;
	size_t ndists;
	struct ddist *dists;
	gpuenv_marker_env_t menv;
	/* sonames whose loads were judged (for library-copies) */
	size_t nloaded;
	struct dload {
		const char *soname, *path, *via;
		const char *fw, *binary;
		bool shadowed;	 /* a shadow verdict was given */
		size_t vi;	 /* that verdict's index (more binaries join it), or SIZE_MAX */
	} *loaded;
	size_t cap_loaded;
};

/* PEP 503 normalization (the one in lib/pep) into a fixed buffer; false
 * when too long or empty. */
static bool norm_name(const char *s, char *out, size_t outsz)
{
	size_t n = s ? gpuenv_name_normalize_to(gpuenv_str(s), out, outsz) : SIZE_MAX;

	return n != SIZE_MAX && n > 0;
}

static const struct ddist *find_dist(const struct denv *e, const char *norm)
{
	for (size_t i = 0; i < e->ndists; i++)
		if (strcmp(e->dists[i].norm, norm) == 0)
			return &e->dists[i];
	return NULL;
}

#define MAX_DISTS 100000

static int env_init(drun_t *r, struct denv *e, const gpuenv_facts_env_t *fe)
{
	size_t n = fe->ndists, k;

	memset(e, 0, sizeof(*e));
	e->fe = fe;
	e->i = fe->at;
	e->path = fe->prefix;
	e->python = fe->python.version;
	if (n > MAX_DISTS)
		n = MAX_DISTS;
	if (n) {
		e->dists = gpuenv_arena_calloc(r->arena, n, sizeof(*e->dists));
		if (!e->dists)
			return -ENOMEM;
	}
	for (k = 0; k < n; k++) {
		const gpuenv_facts_dist_t *d = &fe->dists[k];
		struct ddist *x = &e->dists[e->ndists];
		if (!norm_name(d->normalized ? d->normalized : d->name, x->norm, sizeof(x->norm)))
			continue;
		x->version = d->version;
		x->fd = d;
		x->i = d->at;
		e->ndists++;
	}
	/* the marker environment of this interpreter, on this host: a view of
	 * the target the facts describe (include/gpuenv/facts.h) */
	gpuenv_marker_env_default(&e->menv);
	{
		gpuenv_target_t t;
		int rc = gpuenv_target_from_facts(r->ctx, r->arena, r->facts, (size_t)(fe - r->facts->envs),
			&t);
		if (!rc)
			rc = gpuenv_target_marker_env(r->ctx, r->arena, &t, &e->menv);
		if (rc)
			return rc;
	}
	e->menv.extra = "";
	return 0;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n;

	if (!path || !dir || !*dir)
		return false;
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Is path inside the environment (its prefix or one of its site folders)? */
static bool in_env(const struct denv *e, const char *path)
{
	const gpuenv_facts_strs_t *sites = &e->fe->sites;

	if (path_under(path, e->path))
		return true;
	for (size_t i = 0; i < sites->n; i++)
		if (path_under(path, sites->items[i]))
			return true;
	return false;
}

static bool same_path(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ==== frameworks ========================================================= */

struct dfw {
	const gpuenv_facts_framework_t *ff;
	size_t i;
	const char *name;  /* kind: "torch", "cupy", ... */
	const char *dist;  /* its distribution ("jax-cuda13-plugin"), or NULL */
	const char *version, *cuda_s, *tag;
	int cuda;	/* 0: a CPU build or unknown */
	const char *label; /* "torch 2.7.1+cu128" */
	const char *fact;  /* "environments[0].frameworks[1]" */
	/* the nvidia-* wheels its distribution requires (its Requires-Dist,
	 * cuda-toolkit extras expanded): filled at first use */
	bool reqs_done;
	size_t nreqs;
	const char **reqs;
};

static void fw_init(drun_t *r, const struct denv *e, struct dfw *f,
	const gpuenv_facts_framework_t *ff)
{
	size_t i = ff->at;

	memset(f, 0, sizeof(*f));
	f->ff = ff;
	f->i = i;
	f->name = ff->kind;
	f->dist = ff->dist;
	f->version = ff->version;
	f->cuda_s = ff->cuda;
	f->cuda = dk_cuda_parse(f->cuda_s);
	f->tag = ff->local; /* the decoder falls back to the version's label */
	f->label = dr_fmt(r, "%s %s", f->dist ? f->dist : f->name ? f->name : "framework",
		f->version ? f->version : "");
	f->fact = dr_fmt(r, "environments[%zu].frameworks[%zu]", e->i, i);
}

static bool fw_is(const struct dfw *f, const char *name)
{
	return f->name && strcmp(f->name, name) == 0;
}

/* The release without its local label: "2.7.1+cu128" -> "2.7.1". */
static const char *public_version(drun_t *r, const char *v)
{
	const char *plus = v ? strchr(v, '+') : NULL;

	if (!v)
		return NULL;
	return plus ? dr_fmt(r, "%.*s", (int)(plus - v), v) : v;
}

/* ---- cpu-torch-on-gpu-host ---------------------------------------------- */

static void rule_cpu_torch(drun_t *r, const struct denv *e, const struct dfw *f)
{
	const char *local = f->version ? strchr(f->version, '+') : NULL;
	const gpuenv_kb_torch_variant_t *pick;
	gpuenv_kb_pick_t pk;
	gpuenv_verdict_t *v;

	if (!fw_is(f, "torch") || !r->gpu_host || f->ff->hip)
		return;
	/* a CPU build only when the facts say so: no CUDA (null, not of
	 * another type, and none in the +cuXYZ label) and the probe found no
	 * GPU support, or a +cpu label */
	if (f->cuda && f->ff->gpu != GPUENV_TRI_FALSE)
		return;
	if (!(local && strcmp(local + 1, "cpu") == 0) &&
		(f->ff->cuda_state == GPUENV_FACT_MISTYPED || f->ff->gpu != GPUENV_TRI_FALSE))
		return;
	/* a ROCm build is not a CPU build; only +cpu or no CUDA at all */
	if (local && strncmp(local + 1, "rocm", 4) == 0)
		return;
	v = dr_verdict(r, "cpu-torch-on-gpu-host", GPUENV_SEV_ERROR, "environment", e->path);
	if (!v)
		return;
	v->env = e->path;
	dr_ev(r, v, dr_fmt(r, "%s.version", f->fact), f->ff->version_source, "%s",
		f->version ? f->version : "?");
	dr_ev(r, v, dr_fmt(r, "%s.cuda", f->fact), f->ff->cuda_source, "null");
	if (r->ngpus)
		dr_ev(r, v, dr_fmt(r, "gpus[%zu].name", r->gpus[0].i), dr_gpu_src(&r->gpus[0], "name"), "%s",
			r->gpus[0].name ? r->gpus[0].name : "?");
	else
		dr_ev(r, v, "pci", "sysfs", "an NVIDIA display controller");
	v->message = dr_fmt(r, "%s is a CPU-only build on a machine with %s NVIDIA GPU%s: "
		"torch.cuda.is_available() is False (\"Torch not compiled with CUDA enabled\")",
		f->label, r->ngpus ? dr_fmt(r, "%zu", r->ngpus) : "an", r->ngpus == 1 ? "" : "s");
	/* the build kb torch, preflight and diagnose would name (gpuenv_kb_torch_pick) */
	pick = dr_pick_torch(r, f->version, false, e->python, &pk);
	if (pick) {
		bool same = dr_same_release(pick, f->version);
		/* the same release: --force-reinstall, or pip keeps the +cpu wheel */
		v->fix = dr_torch_cmd(r, pick, same ? public_version(r, f->version) : NULL, same);
		if (pk.driver_upgrade)
			v->fix = dr_fmt(r, "upgrade the driver to >= %.*s, then %s",
				GPUENV_STR_ARG(pk.driver_upgrade->driver_linux.str), v->fix);
		dr_ev_kb(r, v, dr_fmt(r, "kb:torch.toml variant %.*s %.*s",
				       GPUENV_STR_ARG(pick->torch.str), GPUENV_STR_ARG(pick->tag)),
			dr_kb_cite(r, &pick->row, "[[variant]]"), "CUDA %.*s",
			GPUENV_STR_ARG(pick->cuda.str));
	} else
		v->fix = dr_fmt(r, "install a CUDA build of torch: pip install --force-reinstall "
			"torch==%s --index-url https://download.pytorch.org/whl/cuXYZ (a CUDA version "
			"the driver supports)", f->version ? public_version(r, f->version) : "X.Y.Z");
}

/* ---- driver-too-old ----------------------------------------------------- */

/* A CUDA major alone ("13", read from a name such as jax-cuda13-plugin)
 * says less than another framework's "13.0": that one speaks for both. */
static bool said_better(const struct denv *e, const struct dfw *f)
{
	if (!f->cuda_s || strchr(f->cuda_s, '.'))
		return false;
	for (size_t i = 0; i < e->fe->nframeworks; i++) {
		const char *c = e->fe->frameworks[i].cuda;
		if (&e->fe->frameworks[i] != f->ff && c && strchr(c, '.') &&
			CUDA_MAJOR(dk_cuda_parse(c)) == CUDA_MAJOR(f->cuda))
			return true;
	}
	return false;
}

static bool rule_driver(drun_t *r, const struct denv *e, const struct dfw *f)
{
	const char *alt = NULL;

	if (!f->cuda)
		return true;
	/* the nvidia-* wheels are there for a framework, whose verdict names
	 * the CUDA it needs; triton brings its own PTX compiler */
	if (fw_is(f, "nvidia-wheel") || fw_is(f, "triton") || said_better(e, f))
		return r->drv_cuda >= f->cuda || r->compat_cuda >= f->cuda;
	if (r->drv_cuda && r->drv_cuda < f->cuda && r->compat_cuda < f->cuda && fw_is(f, "torch")) {
		/* another build of the same release that this driver runs */
		const gpuenv_kb_torch_variant_t *pick = dr_pick_torch(r, f->version, false, e->python,
			NULL);
		if (pick && dr_same_release(pick, f->version))
			alt = dr_torch_cmd(r, pick, public_version(r, f->version), true);
	}
	return dr_rule_driver(r, f->cuda, f->label, dr_fmt(r, "%s.cuda", f->fact),
		f->ff->cuda_source, e->path, alt, false);
}

/* ---- no-kernel-image / ptx-jit-only ------------------------------------- */

static const char *list_text(drun_t *r, const dk_cov_t *c)
{
	if (c->ncubins == 0)
		return "no cubin";
	if (c->ncubins == 1)
		return dr_fmt(r, "one cubin (%s)", c->lo);
	return dr_fmt(r, "%zu cubins (%s..%s)", c->ncubins, c->lo, c->hi);
}

static const char *gpu_list(drun_t *r, const int *idx, size_t n, int maj, int min)
{
	const char *s = "";

	for (size_t i = 0; i < n; i++) {
		const struct dgpu *g = &r->gpus[idx[i]];
		s = dr_fmt(r, "%s%s%lld", s ? s : "", i ? ", " : "", g->index);
	}
	if (n == 1)
		return dr_gpu_label(r, &r->gpus[idx[0]]);
	return dr_fmt(r, "GPUs %s %s (sm_%d%d)", s ? s : "", r->gpus[idx[0]].name ? r->gpus[idx[0]].name : "",
		maj, min);
}

/* The fix for a binary that cannot run on GPUs of CC maj.min. */
static const char *arch_fix(drun_t *r, const struct denv *e, const struct dfw *f, int maj,
	int min, const dk_cov_t *c)
{
	char nb[16];
	gpuenv_kb_ver_t nv = dr_cuda_ver(f->cuda, nb);
	const gpuenv_kb_toolkit_t *first = NULL;

	gpuenv_kb_arch_first_cuda(r->kb, (unsigned)maj, (unsigned)min, &first);
	if (c->ptx) {
		/* the PTX would run if the driver could JIT it */
		const gpuenv_kb_toolkit_t *tk = gpuenv_kb_toolkit(r->kb, &nv, 0);
		if (tk)
			return dr_fmt(r, "upgrade the driver to >= %.*s (CUDA %d.%d) so it can JIT the %s PTX",
				GPUENV_STR_ARG(tk->driver_linux.str), CUDA_MAJOR(f->cuda),
				CUDA_MINOR(f->cuda), c->ptx);
	}
	if (fw_is(f, "torch")) {
		gpuenv_kb_pick_t pk;
		const gpuenv_kb_torch_variant_t *pick = dr_pick_torch(r, f->version, true, e->python, &pk);
		if (pick) {
			bool same = dr_same_release(pick, f->version);
			const char *cmd = dr_torch_cmd(r, pick, same ? public_version(r, f->version) : NULL,
				same);
			return pk.driver_upgrade
				? dr_fmt(r, "upgrade the driver to >= %.*s, then %s",
					  GPUENV_STR_ARG(pk.driver_upgrade->driver_linux.str), cmd)
				: cmd;
		}
	}
	if (first)
		return dr_fmt(r, "install a build of %s compiled for sm_%d%d (CUDA >= %.*s), or with PTX "
			"for an architecture <= sm_%d%d", f->name ? f->name : "it", maj, min,
			GPUENV_STR_ARG(first->cuda.str), maj, min);
	return dr_fmt(r, "install a build of %s compiled for sm_%d%d", f->name ? f->name : "it",
		maj, min);
}

/* A list as compact JSON, ["sm_80","sm_90"], for the evidence. */
static const char *strs_json(drun_t *r, const gpuenv_facts_strs_t *l)
{
	gpuenv_buf_t b;
	const char *s;

	if (l->state != GPUENV_FACT_SET)
		return "null";
	gpuenv_buf_init(&b, r->ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_buf_putc(&b, '[');
	for (size_t i = 0; i < l->n; i++) {
		gpuenv_buf_puts(&b, i ? ",\"" : "\"");
		/* the facts' strings hold no quote or control byte the probe
		 * writes; escape what a hand-made one may */
		for (const char *p = l->items[i]; *p; p++) {
			if (*p == '"' || *p == '\\')
				gpuenv_buf_putc(&b, '\\');
			gpuenv_buf_putc(&b, *p);
		}
		gpuenv_buf_putc(&b, '"');
	}
	if (gpuenv_buf_putc(&b, ']') != 0 || !b.data) {
		gpuenv_buf_free(&b);
		r->err = -ENOMEM;
		return "?";
	}
	s = dr_fmt(r, "%s", b.data);
	gpuenv_buf_free(&b);
	return s ? s : "?";
}

static void judge_binary(drun_t *r, const struct denv *e, const struct dfw *f, bool ptx_ok,
	const char *bpath, const char *bfact, const char *bsrc, const gpuenv_facts_strs_t *cubins,
	const gpuenv_facts_strs_t *ptx, const gpuenv_kb_torch_arch_list_t *kbv)
{
	int *idx = gpuenv_arena_calloc(r->arena, r->ngpus ? r->ngpus : 1, sizeof(int));
	bool *done = gpuenv_arena_calloc(r->arena, r->ngpus ? r->ngpus : 1, sizeof(bool));

	if (!idx || !done) {
		r->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < r->ngpus; i++) {
		const struct dgpu *g = &r->gpus[i];
		gpuenv_verdict_t *v;
		dk_cov_t c;
		size_t n = 0;

		if (done[i] || !g->visible || g->maj < 0)
			continue;
		/* GPUs of one compute capability share one verdict */
		for (size_t k = i; k < r->ngpus; k++)
			if (!done[k] && r->gpus[k].visible && r->gpus[k].maj == g->maj &&
				r->gpus[k].min == g->min) {
				done[k] = true;
				idx[n++] = (int)k;
			}
		if (kbv)
			dk_cover_kb(&kbv->sm, &kbv->ptx, g->maj, g->min, ptx_ok, &c);
		else
			dk_cover_strs(cubins, ptx, g->maj, g->min, ptx_ok, &c);
		if (c.how == DK_COV_CUBIN)
			continue;
		v = dr_verdict(r, c.how == DK_COV_PTX ? "ptx-jit-only" : "no-kernel-image",
			c.how == DK_COV_PTX ? GPUENV_SEV_INFO : GPUENV_SEV_ERROR, "binary", bpath);
		if (!v)
			return;
		v->env = e->path;
		v->binary = kbv ? NULL : bpath;
		v->gpu = n == 1 ? (int)g->i : -1;
		for (size_t k = 0; k < n; k++)
			dr_ev(r, v, dr_fmt(r, "gpus[%zu].compute_capability", r->gpus[idx[k]].i),
				dr_gpu_src(&r->gpus[idx[k]], "compute_capability"), "%d.%d", g->maj,
				g->min);
		if (kbv) {
			char sm[512], px[512];
			gpuenv_kb_sms_range(kbv->sm.v, kbv->sm.n, sm, sizeof(sm));
			gpuenv_kb_sms_range(kbv->ptx.v, kbv->ptx.n, px, sizeof(px));
			dr_ev_kb(r, v, dr_fmt(r, "kb:torch.toml arch_list %.*s %.*s sm",
					       GPUENV_STR_ARG(kbv->torch.str), GPUENV_STR_ARG(kbv->tag)),
				dr_kb_cite(r, &kbv->row, "[[arch_list]]"), "%s", sm);
			dr_ev_kb(r, v, dr_fmt(r, "kb:torch.toml arch_list %.*s %.*s ptx",
					       GPUENV_STR_ARG(kbv->torch.str), GPUENV_STR_ARG(kbv->tag)),
				dr_kb_cite(r, &kbv->row, "[[arch_list]]"), "%s", kbv->ptx.n ? px : "(none)");
		} else {
			dr_ev(r, v, dr_fmt(r, "%s.cubins", bfact), bsrc, "%s", strs_json(r, cubins));
			dr_ev(r, v, dr_fmt(r, "%s.ptx", bfact), bsrc, "%s", strs_json(r, ptx));
		}
		if (c.how == DK_COV_PTX) {
			v->message = dr_fmt(r, "%s has no cubin for %s; the driver JIT-compiles its %s "
				"PTX at first use (slow start, cached in ~/.nv/ComputeCache)",
				kbv ? dr_fmt(r, "%s, by the KB's arch list of torch %.*s %.*s,", f->label,
					      GPUENV_STR_ARG(kbv->torch.str), GPUENV_STR_ARG(kbv->tag))
				    : dr_fmt(r, "%s (%s)", bpath, f->label),
				gpu_list(r, idx, n, g->maj, g->min), c.by);
			continue;
		}
		v->message = dr_fmt(r, "%s carries %s and %s; %s can run none of them: "
			"\"no kernel image is available for execution on the device\"%s",
			kbv ? dr_fmt(r, "%s, by the KB's arch list of torch %.*s %.*s,", f->label,
				      GPUENV_STR_ARG(kbv->torch.str), GPUENV_STR_ARG(kbv->tag))
			    : dr_fmt(r, "%s (%s)", bpath, f->label),
			list_text(r, &c),
			c.nptx == 0 ? "no PTX" : c.ptx ? "PTX the driver cannot JIT" : "no PTX it can use",
			gpu_list(r, idx, n, g->maj, g->min),
			c.ptx ? dr_fmt(r, " (its %s PTX was built by CUDA %d.%d; this driver supports "
					  "CUDA <= %d.%d and cannot JIT it)", c.ptx, CUDA_MAJOR(f->cuda),
					  CUDA_MINOR(f->cuda), CUDA_MAJOR(r->drv_cuda),
					  CUDA_MINOR(r->drv_cuda))
			      : "");
		v->fix = arch_fix(r, e, f, g->maj, g->min, &c);
	}
}

static void rule_arch(drun_t *r, const struct denv *e, const struct dfw *f, bool ptx_ok)
{
	size_t judged = 0, unknown = 0;

	if (!f->cuda || r->ngpus == 0)
		return;
	for (size_t i = 0; i < f->ff->nbinaries; i++) {
		const gpuenv_facts_binary_t *b = &f->ff->binaries[i];
		if (b->code_state == GPUENV_FACT_MISTYPED) {
			unknown++; /* a list of another type: say nothing */
			continue;
		}
		if (!b->cubins.n && !b->ptx.n)
			continue; /* no CUDA code listed: nothing to judge */
		judged++;
		judge_binary(r, e, f, ptx_ok, b->path ? b->path : "?",
			dr_fmt(r, "%s.binaries[%zu].cuda_code", f->fact, b->at), "fatbin", &b->cubins,
			&b->ptx, NULL);
	}
	if (judged == 0 && unknown == 0 && fw_is(f, "torch") && f->tag) {
		/* no binary was read: the KB's arch list of that build */
		const char *rel = f->version ? dr_fmt(r, "%.*s+%s", (int)strcspn(f->version, "+"),
							f->version, f->tag) : NULL;
		const gpuenv_kb_torch_variant_t *kv = rel ? gpuenv_kb_torch_variant(r->kb, gpuenv_str(rel))
							  : NULL;
		const gpuenv_kb_torch_arch_list_t *al = kv ? gpuenv_kb_torch_arch(r->kb, kv) : NULL;
		if (al)
			judge_binary(r, e, f, ptx_ok,
				dr_fmt(r, "%s (KB arch list of torch %.*s %.*s)", f->label,
					GPUENV_STR_ARG(kv->torch.str), GPUENV_STR_ARG(kv->tag)),
				NULL, NULL, NULL, NULL, al);
	}
}

/* ---- library-shadowed / ld-library-path-shadows-wheel / library-not-found */

typedef gpuenv_facts_library_t dlib_t;

static const dlib_t *lib_by_path(drun_t *r, const char *path)
{
	if (!path)
		return NULL;
	for (size_t i = 0; i < r->facts->nlibraries; i++) {
		const dlib_t *l = &r->facts->libraries[i];
		if (same_path(l->path, path))
			return l;
		for (size_t k = 0; k < l->aliases.n; k++)
			if (strcmp(l->aliases.items[k], path) == 0)
				return l;
	}
	return NULL;
}

/* "libraries[3]" for a copy of the facts' list. */
static const char *lib_fact(drun_t *r, const dlib_t *l)
{
	return dr_fmt(r, "libraries[%zu]", l->at);
}

static bool lib_is(const dlib_t *l, const char *soname)
{
	return same_path(l->soname, soname) || same_path(l->name, soname);
}

static bool is_wheel_copy(const struct denv *e, const dlib_t *l)
{
	return in_env(e, l->path) && (l->where.state != GPUENV_FACT_SET || lib_where(l, "wheel"));
}

/* A copy that belongs to another environment is not a candidate here. */
static bool other_env_copy(drun_t *r, const struct denv *e, const dlib_t *l)
{
	if (in_env(e, l->path))
		return false;
	for (size_t i = 0; i < r->facts->nenvs; i++)
		if (&r->facts->envs[i] != e->fe && path_under(l->path, r->facts->envs[i].prefix))
			return true;
	return false;
}

static bool via_is(const char *via, const char *what)
{
	if (!via)
		return false;
	for (; *via && *what; via++, what++) {
		char a = *via >= 'A' && *via <= 'Z' ? (char)(*via + 32) : *via;
		char b = *what >= 'A' && *what <= 'Z' ? (char)(*what + 32) : *what;
		if (a != b)
			return false;
	}
	return *via == *what;
}

static const char *dir_of(drun_t *r, const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	if (!s)
		return path;
	return dr_fmt(r, "%.*s", (int)(s == path ? 1 : s - path), path);
}

/* The facts' LD_LIBRARY_PATH, NULL when not recorded. */
static const char *facts_ldlp(drun_t *r)
{
	return r->facts->ld_library_path;
}

/* LD_LIBRARY_PATH without dir. */
static const char *ldlp_without(drun_t *r, const char *ldlp, const char *dir)
{
	const char *out = "", *p = ldlp;

	while (p && *p) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (!(strlen(dir) == n && strncmp(p, dir, n) == 0) && n > 0)
			out = dr_fmt(r, "%s%s%.*s", out ? out : "", out && *out ? ":" : "", (int)n, p);
		p = c ? c + 1 : NULL;
	}
	return out;
}

/* Wheel families by soname stem, for library-not-found's fix. */
static const struct {
	const char *stem, *wheel;
} soname_wheels[] = {
	{ "libcudnn", "nvidia-cudnn" },	     { "libnccl", "nvidia-nccl" },
	{ "libcublasLt", "nvidia-cublas" },  { "libcublas", "nvidia-cublas" },
	{ "libcudart", "nvidia-cuda-runtime" }, { "libnvrtc", "nvidia-cuda-nvrtc" },
	{ "libcufft", "nvidia-cufft" },	     { "libcurand", "nvidia-curand" },
	{ "libcusolver", "nvidia-cusolver" }, { "libcusparseLt", "nvidia-cusparselt" },
	{ "libcusparse", "nvidia-cusparse" }, { "libnvJitLink", "nvidia-nvjitlink" },
	{ "libcupti", "nvidia-cuda-cupti" }, { "libnvshmem", "nvidia-nvshmem" },
	{ "libcufile", "nvidia-cufile" },     { "libnvToolsExt", "nvidia-nvtx" },
	{ "libnvinfer", "tensorrt" },
};

static const char *wheel_for(const char *soname)
{
	for (size_t i = 0; i < sizeof(soname_wheels) / sizeof(soname_wheels[0]); i++) {
		size_t n = strlen(soname_wheels[i].stem);
		if (strncmp(soname, soname_wheels[i].stem, n) == 0 &&
			(soname[n] == '.' || soname[n] == '_' || soname[n] == '-'))
			return soname_wheels[i].wheel;
	}
	return NULL;
}

/* The Requires-Dist of the framework's distribution that names a wheel
 * starting with stem ("nvidia-cudnn-cu12==9.5.1.17"), or NULL. */
static const char *required_wheel(drun_t *r, const struct denv *e, const struct dfw *f,
	const char *stem)
{
	char fn[NAME_MAX_LEN], rn[NAME_MAX_LEN];
	const struct ddist *d;
	if (!stem || !norm_name(f->dist ? f->dist : f->name, fn, sizeof(fn)) || !(d = find_dist(e, fn)))
		return NULL;
	for (size_t i = 0; i < d->fd->requires.n; i++) {
		const char *t = d->fd->requires.items[i];
		size_t n = 0;
		while (t[n] && t[n] != ' ' && t[n] != ';' && t[n] != '=' && t[n] != '<' &&
			t[n] != '>' && t[n] != '~' && t[n] != '!' && t[n] != '[' && t[n] != '(' &&
			n + 1 < sizeof(rn))
			n++;
		memcpy(rn, t, n);
		rn[n] = '\0';
		if (!norm_name(rn, fn, sizeof(fn)))
			continue;
		if (strncmp(fn, stem, strlen(stem)) == 0) {
			/* without its marker, which is not for the shell */
			const char *semi = strchr(t, ';');
			size_t len = semi ? (size_t)(semi - t) : strlen(t);
			while (len && (t[len - 1] == ' ' || t[len - 1] == '\t'))
				len--;
			return dr_fmt(r, "%.*s", (int)len, t);
		}
	}
	return NULL;
}

static struct dload *env_load(drun_t *r, struct denv *e, const char *soname, const char *path)
{
	for (size_t i = 0; i < e->nloaded; i++)
		if (strcmp(e->loaded[i].soname, soname) == 0 &&
			((!path && !e->loaded[i].path) || same_path(path, e->loaded[i].path)))
			return &e->loaded[i];
	if (gpuenv_array_grow(r->ctx, r->arena, &e->loaded, &e->cap_loaded, e->nloaded + 1,
		    sizeof(*e->loaded), SIZE_MAX, "listing the libraries a framework loads")) {
		r->err = r->ctx->err.code;
		return NULL;
	}
	memset(&e->loaded[e->nloaded], 0, sizeof(e->loaded[0]));
	e->loaded[e->nloaded].vi = SIZE_MAX;
	e->loaded[e->nloaded].soname = soname;
	e->loaded[e->nloaded].path = path;
	return &e->loaded[e->nloaded++];
}

static bool fw_requires(drun_t *r, struct denv *e, struct dfw *f, const char *dist);

/* Where a load was read, formatted only when a verdict cites it. */
struct lref {
	const char *fw;	 /* "environments[0].frameworks[1]" */
	size_t b, o, n;	 /* binary, object, need */
};

static const char *lref_fmt(drun_t *r, const struct lref *l, const char *field)
{
	return dr_fmt(r, "%s.binaries[%zu].loads.objects[%zu].needs[%zu].%s", l->fw, l->b, l->o, l->n,
		field);
}

static void judge_load(drun_t *r, struct denv *e, struct dfw *f, const char *bin,
	const struct lref *lr, const char *needed, const char *path, const char *via)
{
	/* the evidence names the fields as the facts spell them */
	const char *f_needed = "name", *f_via = "how";
	const dlib_t *chosen, *wheel = NULL;
	struct dload *seen;
	gpuenv_verdict_t *v;
	int cmp;
	bool ok;

	/* only the NVIDIA libraries have copies in the facts and wheels */
	if (!needed || !wheel_for(needed) || via_is(via, "already loaded") || via_is(via, "loaded"))
		return;
	if (via_is(via, "not found") || via_is(via, "not-found"))
		path = NULL;
	else if (!path)
		return; /* found, but where is unknown: nothing to judge */
	/* a library the driver installs (libcuda.so.1) or one no wheel ships
	 * is not this rule's: driver-not-loaded and the probe say why */

	seen = env_load(r, e, needed, path);
	if (!seen)
		return;
	if (seen->fw) {
		/* judged already for another binary: name this one too */
		if (seen->vi != SIZE_MAX)
			dr_ev(r, &r->out->items[seen->vi], lref_fmt(r, lr, f_needed),
				"loader", "%s needs %s", bin, needed);
		return;
	}
	seen->fw = f->label;
	seen->binary = bin;
	seen->via = via;

	if (!path) {
		const char *stem = wheel_for(needed);
		const char *req = required_wheel(r, e, f, stem);
		v = dr_verdict(r, "library-not-found", GPUENV_SEV_ERROR, "library", needed);
		if (!v)
			return;
		seen->vi = r->out->n - 1;
		v->env = e->path;
		v->binary = bin;
		seen->shadowed = true;
		dr_ev(r, v, lref_fmt(r, lr, f_needed), "loader", "%s", needed);
		dr_ev(r, v, lref_fmt(r, lr, "path"), "loader", "null (no search location has it)");
		v->message = dr_fmt(r, "%s (%s) needs %s and the loader finds no copy: importing it fails "
			"with \"%s: cannot open shared object file: No such file or directory\"", bin,
			f->label, needed, needed);
		v->fix = req ? dr_fmt(r, "pip install '%s'", req)
			: stem ? dr_fmt(r, "install the wheel that provides %s (%s-cu%d), or add the "
					"folder holding it to LD_LIBRARY_PATH", needed, stem,
					f->cuda ? CUDA_MAJOR(f->cuda) : 12)
			       : dr_fmt(r, "install the library that provides %s, or add its folder to "
					  "LD_LIBRARY_PATH", needed);
		return;
	}

	chosen = lib_by_path(r, path);
	/* the wheel's copy in this environment, if the chosen one is not it */
	if (chosen && is_wheel_copy(e, chosen))
		return;
	if (!chosen && in_env(e, path))
		return;
	for (size_t i = 0; i < r->facts->nlibraries && !wheel; i++)
		if (lib_is(&r->facts->libraries[i], needed) && is_wheel_copy(e, &r->facts->libraries[i]))
			wheel = &r->facts->libraries[i];
	if (!wheel)
		return;
	/* the wheel's copy is the one the framework was built for only when
	 * the framework requires that wheel (cupy does not pin NCCL, torch
	 * does); facts that do not name the owning wheel are taken at face
	 * value */
	if (wheel->dist && !fw_requires(r, e, f, wheel->dist))
		return;
	if (dk_vcmp(lib_version(chosen), lib_version(wheel), &ok) == 0 && ok)
		return; /* the same release in another folder */

	{
		const char *cv = lib_version(chosen);
		const char *wv = lib_version(wheel);
		const char *wdir = dir_of(r, wheel->path);
		const char *cdir = dir_of(r, path);
		bool ldlp = via_is(via, "LD_LIBRARY_PATH");
		bool older;
		int sev;

		cmp = dk_vcmp(cv, wv, &ok);
		older = ok && (cmp < 0 || dk_vmajor(cv) != dk_vmajor(wv));
		sev = older ? GPUENV_SEV_ERROR : GPUENV_SEV_WARNING;
		v = dr_verdict(r, ldlp ? "ld-library-path-shadows-wheel" : "library-shadowed",
			sev, "library", needed);
		if (!v)
			return;
		seen->vi = r->out->n - 1;
		seen->shadowed = true;
		v->env = e->path;
		v->binary = bin;
		dr_ev(r, v, lref_fmt(r, lr, "path"), "loader", "%s", path);
		dr_ev(r, v, lref_fmt(r, lr, f_via), "loader", "%s", via ? via : "?");
		if (cv)
			dr_ev(r, v, dr_fmt(r, "%s.version", lib_fact(r, chosen)), lib_vsrc(chosen),
				"%s: %s", path, cv);
		dr_ev(r, v, dr_fmt(r, "%s.path", lib_fact(r, wheel)), "wheel", "%s",
			wheel->path);
		if (wv)
			dr_ev(r, v, dr_fmt(r, "%s.version", lib_fact(r, wheel)), lib_vsrc(wheel),
				"%s: %s", wheel->path, wv);
		v->message = dr_fmt(r, "%s (%s) loads %s from %s%s (%s) instead of the copy in its "
			"environment's wheel, %s%s%s%s",
			bin, f->label, needed, path, cv ? dr_fmt(r, " (%s)", cv) : "",
			ldlp ? "LD_LIBRARY_PATH comes before the framework's RUNPATH"
			     : dr_fmt(r, "found through %s", via ? via : "the loader's search"),
			wheel->path, wv ? dr_fmt(r, " (%s)", wv) : "",
			older ? ", the one it was built for: expect undefined symbols or "
				"CUDNN_STATUS_VERSION_MISMATCH-style failures"
			      : "",
			!older && ok ? ", a newer copy of the same major: it usually works"
			: !ok	     ? ": the version loaded is unknown"
				     : "");
		if (ldlp) {
			const char *lp = facts_ldlp(r);
			v->fix = lp ? dr_fmt(r, "remove %s from LD_LIBRARY_PATH: export LD_LIBRARY_PATH=%s",
					     cdir, ldlp_without(r, lp, cdir))
				    : dr_fmt(r, "remove %s from LD_LIBRARY_PATH", cdir);
		} else
			v->fix = dr_fmt(r, "put the wheel's folder first: export LD_LIBRARY_PATH=%s"
				"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}%s", wdir,
				wv ? dr_fmt(r, ", or update %s to >= %s", path, wv) : "");
	}
}

static void rule_loads(drun_t *r, struct denv *e, struct dfw *f)
{
	for (size_t i = 0; i < f->ff->nbinaries; i++) {
		const gpuenv_facts_binary_t *b = &f->ff->binaries[i];
		/* the loader emulation: objects[0] is the binary, each object's
		 * needs its DT_NEEDED entries */
		for (size_t k = 0; k < b->nobjects; k++) {
			const gpuenv_facts_object_t *o = &b->objects[k];
			/* a system library's own dependencies are its business,
			 * not the framework's */
			if (o->at > 0 && !in_env(e, o->path))
				continue;
			for (size_t j = 0; j < o->nneeds; j++) {
				const gpuenv_facts_need_t *n = &o->needs[j];
				struct lref lr = { f->fact, b->at, o->at, n->at };
				judge_load(r, e, f, o->path ? o->path : b->path ? b->path : "?", &lr,
					n->name, n->path, n->how);
			}
		}
	}
}

/* ---- library-copies (info) ---------------------------------------------- */

static void rule_copies(drun_t *r, const struct denv *e)
{
	for (size_t i = 0; i < e->nloaded; i++) {
		const struct dload *d = &e->loaded[i];
		const dlib_t *chosen = lib_by_path(r, d->path);
		const char *first = NULL, *others = "";
		gpuenv_verdict_t *v;
		size_t k, ncopies = 0;
		bool differ = false, dup = false;

		if (d->shadowed || !d->path || !chosen)
			continue;
		/* one verdict per soname, even if binaries load it from two places */
		for (size_t j = 0; j < i; j++)
			if (strcmp(e->loaded[j].soname, d->soname) == 0)
				dup = true;
		if (dup)
			continue;
		for (k = 0; k < r->facts->nlibraries; k++) {
			const dlib_t *l = &r->facts->libraries[k];
			const char *lv = lib_version(l);
			if (!lib_is(l, d->soname) || other_env_copy(r, e, l))
				continue;
			ncopies++;
			if (!first)
				first = lv;
			else if (!lv || !first || strcmp(lv, first) != 0)
				differ = true;
		}
		if (ncopies < 2 || !differ)
			continue;
		v = dr_verdict(r, "library-copies", GPUENV_SEV_INFO, "library", d->soname);
		if (!v)
			return;
		v->env = e->path;
		v->binary = d->binary;
		for (k = 0; k < r->facts->nlibraries; k++) {
			const dlib_t *l = &r->facts->libraries[k];
			const char *lp = l->path, *lv = lib_version(l);
			const char *via = lib_where_first(l);
			if (!lib_is(l, d->soname) || other_env_copy(r, e, l) || !lp)
				continue;
			dr_ev(r, v, lib_fact(r, l), lib_vsrc(l),
				"%s %s (%s)", lp, lv ? lv : "version unknown", via ? via : "?");
			if (l != chosen)
				others = dr_fmt(r, "%s%s%s %s", others ? others : "", others && *others ? ", " : "",
					lp, lv ? lv : "(version unknown)");
		}
		v->message = dr_fmt(r, "%zu copies of %s with different versions; %s (%s) loads %s%s%s "
			"through %s%s; also present: %s",
			ncopies, d->soname, d->binary, d->fw, d->path,
			lib_version(chosen) ? " " : "",
			lib_version(chosen) ? lib_version(chosen) : "",
			d->via ? d->via : "the loader",
			in_env(e, d->path) ? ", the copy of its own environment" : "",
			others ? others : "");
	}
}

/* ---- wheel-pin-mismatch / wheel-missing --------------------------------- */

/* The PEP 503 name a requirement starts with, from its raw text (cheap, to
 * skip the parse of requirements on other projects). */
static bool req_name(const char *t, char *out, size_t outsz)
{
	size_t k = 0;

	while (*t == ' ' || *t == '\t')
		t++;
	/* most requirements are on other projects: "nvidia-*" and
	 * "cuda-toolkit" are the only names watched */
	if ((*t | 32) != 'n' && (*t | 32) != 'c')
		return false;
	while (t[k] && t[k] != '[' && t[k] != ' ' && t[k] != '\t' && t[k] != '=' && t[k] != '<' &&
		t[k] != '>' && t[k] != '~' && t[k] != '!' && t[k] != ';' && t[k] != '(' &&
		t[k] != '@' && k + 1 < outsz)
		k++;
	if (k + 1 >= outsz)
		return false;
	memcpy(out, t, k);
	out[k] = '\0';
	return norm_name(out, out, outsz);
}

/* NVIDIA wheels and the CUDA meta package that carries them. */
static bool watched(const char *norm)
{
	return strncmp(norm, "nvidia-", 7) == 0 || strcmp(norm, "cuda-toolkit") == 0;
}

/* The major of the version a specifier set pins (==, ~=, ===), -1 if none. */
static long pinned_major(const gpuenv_specset_t *set)
{
	for (size_t i = 0; i < set->n; i++) {
		const gpuenv_specifier_t *s = &set->items[i];
		if ((s->op == GPUENV_OP_EQ || s->op == GPUENV_OP_COMPAT) && s->has_version &&
			s->version.nrelease > 0)
			return (long)s->version.release[0];
		if (s->op == GPUENV_OP_ARBITRARY)
			return dk_vmajor(s->text.ptr);
	}
	return -1;
}

/* One Requires-Dist entry, parsed. */
struct dreq {
	gpuenv_requirement_t req;
	char name[NAME_MAX_LEN];
	const char *text;
	size_t dist, line; /* where it was read, for the evidence */
};

static const char *req_fact(drun_t *r, const struct denv *e, const struct dreq *q)
{
	return dr_fmt(r, "environments[%zu].distributions[%zu].requires[%zu]", e->i,
		e->dists[q->dist].i, q->line);
}

/* Is the installed distribution what q asks for?  via_extra: the extra of
 * `by` through which q applies (cuda-toolkit[cublas]), NULL for none. */
static void check_installed(drun_t *r, struct denv *e, const struct ddist *by, const struct dreq *q,
	const char *via_extra)
{
	const struct ddist *d = find_dist(e, q->name);
	const char *spec = "", *through = "";
	gpuenv_verdict_t *v;
	gpuenv_version_t ver;

	if (q->req.spec.n) {
		gpuenv_buf_t b;
		int rc;
		gpuenv_buf_init(&b, r->ctx, 4096);
		if ((rc = gpuenv_specset_format(&q->req.spec, &b)) == 0 && b.data)
			spec = dr_fmt(r, "%s", b.data);
		else if (rc == -ENOMEM)
			r->err = rc;
		gpuenv_buf_free(&b);
		if (!spec || r->err)
			return;
	}
	if (via_extra)
		through = dr_fmt(r, " (through the extra %s)", via_extra);
	if (!through)
		return;
	if (!d) {
		v = dr_verdict(r, "wheel-missing", GPUENV_SEV_ERROR, "environment", e->path);
		if (!v)
			return;
		v->env = e->path;
		dr_ev(r, v, req_fact(r, e, q), "metadata", "%s", q->text);
		dr_ev(r, v, dr_fmt(r, "environments[%zu].distributions", e->i), "metadata",
			"no %s installed", q->name);
		v->message = dr_fmt(r, "%s %s requires %s%s%s, which is not installed (installed with "
			"--no-deps?): the libraries it carries will be missing or come from elsewhere",
			by->norm, by->version ? by->version : "", q->name, spec, through);
		v->fix = dr_fmt(r, "pip install '%s%s'", q->name, spec);
		return;
	}
	if (!q->req.spec.n || !d->version)
		return;
	int rc = gpuenv_version_parse(r->ctx, r->arena, gpuenv_str(d->version), &ver);
	if (rc != 0) {
		if (rc == -ENOMEM)
			r->err = rc;
		gpuenv_error_clear(r->ctx);
		return;
	}
	if (!gpuenv_specset_contains_ex(&q->req.spec, gpuenv_str(d->version), &ver,
		    GPUENV_PRERELEASES_DEFAULT, true)) {
		long pm = pinned_major(&q->req.spec);
		bool major = pm >= 0 && ver.nrelease > 0 && (long)ver.release[0] != pm;
		v = dr_verdict(r, "wheel-pin-mismatch", major ? GPUENV_SEV_ERROR : GPUENV_SEV_WARNING,
			"environment", e->path);
		if (!v)
			return;
		v->env = e->path;
		dr_ev(r, v, req_fact(r, e, q), "metadata", "%s", q->text);
		dr_ev(r, v, dr_fmt(r, "environments[%zu].distributions[%zu].version", e->i, d->i),
			"metadata", "%s %s", q->name, d->version);
		v->message = dr_fmt(r, "%s %s requires %s%s%s but %s %s is installed%s", by->norm,
			by->version ? by->version : "", q->name, spec, through, q->name, d->version,
			major ? ": a different major version, whose libraries the framework was not "
				"built against"
			      : ": the framework was built and tested against the pinned one");
		v->fix = dr_fmt(r, "pip install '%s%s'", q->name, spec);
	}
}

/* Parse Requires-Dist entry i of dist k if it names a watched project. */
static bool parse_req(drun_t *r, const struct denv *e, size_t k, size_t i, const char *t,
	struct dreq *q)
{
	if (!req_name(t, q->name, sizeof(q->name)) || !watched(q->name))
		return false;
	int rc = gpuenv_requirement_parse(r->ctx, r->arena, gpuenv_str(t), &q->req);
	if (rc != 0) {
		/* a malformed entry is skipped; running out of memory is not */
		if (rc == -ENOMEM)
			r->err = rc;
		gpuenv_error_clear(r->ctx);
		return false;
	}
	q->text = t;
	q->dist = k;
	q->line = i;
	(void)e;
	return true;
}

static bool marker_true(drun_t *r, const struct denv *e, const struct dreq *q, const char *extra)
{
	gpuenv_marker_env_t menv = e->menv;
	bool active = true;

	if (!q->req.marker)
		return true;
	menv.extra = extra ? extra : "";
	int rc = gpuenv_marker_eval(r->ctx, q->req.marker, &menv, &active);
	if (rc != 0) {
		if (rc == -ENOMEM)
			r->err = rc;
		gpuenv_error_clear(r->ctx);
		return false;
	}
	return active;
}

/* What cuda-toolkit[extras] pulls in: its own Requires-Dist under each
 * extra, each entry parsed once. */
static void check_extras(drun_t *r, struct denv *e, const struct ddist *by, const struct dreq *parent)
{
	const struct ddist *d = find_dist(e, parent->name);
	if (!d)
		return;
	for (size_t i = 0; i < d->fd->requires.n; i++) {
		const char *t = d->fd->requires.items[i];
		struct dreq q;
		if (!t || !parse_req(r, e, (size_t)(d - e->dists), i, t, &q) ||
			strcmp(q.name, "cuda-toolkit") == 0)
			continue;
		for (size_t x = 0; x < parent->req.nextras && !r->err; x++) {
			const char *ex = dr_fmt(r, "%.*s", (int)parent->req.extras[x].len,
				parent->req.extras[x].ptr);
			if (ex && marker_true(r, e, &q, ex)) {
				check_installed(r, e, by, &q, ex);
				break; /* one verdict per entry, whichever extra selects it */
			}
		}
	}
}

static void rule_pins(drun_t *r, struct denv *e)
{
	for (size_t k = 0; k < e->ndists && !r->err; k++) {
		const struct ddist *d = &e->dists[k];
		for (size_t i = 0; i < d->fd->requires.n; i++) {
			const char *t = d->fd->requires.items[i];
			struct dreq q;
			if (!t || !parse_req(r, e, k, i, t, &q) || !marker_true(r, e, &q, NULL))
				continue;
			check_installed(r, e, d, &q, NULL);
			if (q.req.nextras && strcmp(q.name, "cuda-toolkit") == 0)
				check_extras(r, e, d, &q);
		}
	}
}

static bool add_req(drun_t *r, struct dfw *f, const char *name, size_t *cap)
{
	if (gpuenv_array_grow(r->ctx, r->arena, &f->reqs, cap, f->nreqs + 1, sizeof(*f->reqs),
		    SIZE_MAX, "listing a framework's requirements")) {
		r->err = r->ctx->err.code;
		return false;
	}
	f->reqs[f->nreqs++] = dr_fmt(r, "%s", name);
	return true;
}

static bool fw_requires(drun_t *r, struct denv *e, struct dfw *f, const char *dist)
{
	char want[NAME_MAX_LEN];

	if (!f->reqs_done) {
		char fn[NAME_MAX_LEN];
		const struct ddist *d;
		size_t cap = 0;
		f->reqs_done = true;
		if (norm_name(f->dist ? f->dist : f->name, fn, sizeof(fn)) && (d = find_dist(e, fn))) {
			for (size_t i = 0; i < d->fd->requires.n; i++) {
				const char *t = d->fd->requires.items[i];
				struct dreq q;
				if (!t || !parse_req(r, e, (size_t)(d - e->dists), i, t, &q) ||
					!marker_true(r, e, &q, NULL) || !add_req(r, f, q.name, &cap))
					continue;
				if (q.req.nextras && strcmp(q.name, "cuda-toolkit") == 0) {
					/* the wheels cuda-toolkit[extras] pulls in */
					const struct ddist *tkd = find_dist(e, "cuda-toolkit");
					size_t ntk = tkd ? tkd->fd->requires.n : 0;
					for (size_t k = 0; k < ntk; k++) {
						const char *tt = tkd->fd->requires.items[k];
						struct dreq tq;
						if (!tt || !parse_req(r, e, (size_t)(tkd - e->dists), k, tt, &tq))
							continue;
						for (size_t x = 0; x < q.req.nextras; x++) {
							const char *ex = dr_fmt(r, "%.*s", (int)q.req.extras[x].len,
								q.req.extras[x].ptr);
							if (ex && marker_true(r, e, &tq, ex)) {
								add_req(r, f, tq.name, &cap);
								break;
							}
						}
					}
				}
			}
		}
	}
	if (!norm_name(dist, want, sizeof(want)))
		return false;
	for (size_t i = 0; i < f->nreqs; i++)
		if (f->reqs[i] && strcmp(f->reqs[i], want) == 0)
			return true;
	return false;
}

/* ---- mixed-cuda-majors -------------------------------------------------- */

static void rule_mixed(drun_t *r, const struct denv *e)
{
	int majors[8];
	size_t nmaj = 0;
	const struct ddist *clash_a = NULL, *clash_b = NULL;
	gpuenv_verdict_t *v;
	char lib[NAME_MAX_LEN], lib2[NAME_MAX_LEN];
	const char *list = "";

	for (size_t i = 0; i < e->ndists; i++) {
		int m = dk_name_cuda_major(e->dists[i].norm, lib, sizeof(lib));
		bool have = false;
		if (!m)
			continue;
		for (size_t k = 0; k < nmaj; k++)
			have |= majors[k] == m;
		if (!have && nmaj < sizeof(majors) / sizeof(majors[0]))
			majors[nmaj++] = m;
		/* the same library for two majors: both wheels unpack into the
		 * same folder (nvidia/cudnn/lib) and one overwrites the other */
		for (size_t k = 0; k < i && !clash_a; k++) {
			int m2 = dk_name_cuda_major(e->dists[k].norm, lib2, sizeof(lib2));
			if (m2 && m2 != m && strcmp(lib, lib2) == 0) {
				clash_a = &e->dists[k];
				clash_b = &e->dists[i];
			}
		}
	}
	if (nmaj < 2)
		return;
	v = dr_verdict(r, "mixed-cuda-majors", clash_a ? GPUENV_SEV_ERROR : GPUENV_SEV_WARNING,
		"environment", e->path);
	if (!v)
		return;
	v->env = e->path;
	for (size_t k = 0; k < nmaj; k++) {
		const char *names = "";
		size_t cnt = 0;
		for (size_t i = 0; i < e->ndists; i++) {
			int m = dk_name_cuda_major(e->dists[i].norm, lib, sizeof(lib));
			if (m != majors[k])
				continue;
			dr_ev(r, v, dr_fmt(r, "environments[%zu].distributions[%zu]", e->i, e->dists[i].i),
				"metadata", "%s %s (CUDA %d)", e->dists[i].norm,
				e->dists[i].version ? e->dists[i].version : "?", m);
			if (cnt++ < 3 || e->dists + i == clash_a || e->dists + i == clash_b)
				names = dr_fmt(r, "%s%s%s", names ? names : "", names && *names ? ", " : "",
					e->dists[i].norm);
		}
		list = dr_fmt(r, "%s%sCUDA %d: %s%s", list ? list : "", list && *list ? "; " : "",
			majors[k], names ? names : "", cnt > 3 ? ", ..." : "");
	}
	{
		const char *majs = "";
		for (size_t k = 0; k < nmaj; k++)
			majs = dr_fmt(r, "%s%s%d", majs ? majs : "", k ? " and " : "", majors[k]);
		v->message = clash_a
			? dr_fmt(r, "wheels for CUDA %s in one environment (%s); %s and %s install the "
				    "same library into the same folder, so one overwrote the other and "
				    "frameworks may load the wrong one", majs, list, clash_a->norm,
				    clash_b->norm)
			: dr_fmt(r, "wheels for CUDA %s in one environment (%s): each framework must "
				    "load the libraries of its own CUDA major", majs, list);
	}
	if (clash_a) {
		/* keep the major the frameworks were built for */
		int want = 0, ma = dk_name_cuda_major(clash_a->norm, lib, sizeof(lib));
		const struct ddist *keep = NULL, *drop = NULL;
		for (size_t k = 0; k < e->fe->nframeworks; k++) {
			int c = dk_cuda_parse(e->fe->frameworks[k].cuda);
			if (c && !want)
				want = CUDA_MAJOR(c);
		}
		if (want == ma) {
			keep = clash_a;
			drop = clash_b;
		} else if (want) {
			keep = clash_b;
			drop = clash_a;
		}
		v->fix = keep ? dr_fmt(r, "keep CUDA %d, which the frameworks were built for: pip uninstall "
					  "-y %s && pip install --force-reinstall '%s==%s'", want,
					  drop->norm, keep->norm, keep->version ? keep->version : "")
			      : dr_fmt(r, "keep one CUDA major: pip uninstall -y %s %s, then reinstall "
					  "the one your framework pins", clash_a->norm, clash_b->norm);
	} else
		v->fix = dr_fmt(r, "keep one CUDA major per environment (a separate venv for the "
			"other framework), or remove the wheels of the major no framework uses");
}

/* ---- venv-no-interpreter: bin/python removed, the venv runs nothing ----- */

static void rule_interpreter(drun_t *r, const struct denv *e)
{
	gpuenv_verdict_t *v;

	if (e->fe->interpreter || !e->fe->kind || strcmp(e->fe->kind, "venv") != 0 ||
		!(v = dr_verdict(r, "venv-no-interpreter", GPUENV_SEV_ERROR, "environment", e->path)))
		return;
	v->env = e->path;
	dr_ev(r, v, dr_fmt(r, "environments[%zu].interpreter", e->i), NULL, "none");
	v->message = dr_fmt(r, "the venv %s has no interpreter: bin/python3 and bin/python are missing or "
		"lead to nothing", e->path);
	v->fix = dr_fmt(r, "gpuenv venv %s (makes its interpreter links again, keeps its packages)", e->path);
}

/* ==== the run ============================================================ */

static int judge_env(drun_t *r, const gpuenv_facts_env_t *fe)
{
	struct denv e;
	int rc;

	if ((rc = env_init(r, &e, fe)) != 0)
		return rc;
	for (size_t k = 0; k < fe->nframeworks; k++) {
		struct dfw f;
		bool ptx_ok;
		fw_init(r, &e, &f, &fe->frameworks[k]);
		rule_cpu_torch(r, &e, &f);
		ptx_ok = rule_driver(r, &e, &f);
		if (!r->drv_version && !r->drv_cuda)
			ptx_ok = true; /* no driver facts: judge the code alone */
		rule_arch(r, &e, &f, ptx_ok);
		rule_loads(r, &e, &f);
	}
	rule_interpreter(r, &e);
	rule_copies(r, &e);
	rule_pins(r, &e);
	rule_mixed(r, &e);
	return r->err;
}

static bool env_matches(const char *path, const char *want)
{
	size_t a, b;

	if (!path || !want)
		return false;
	a = strlen(path);
	b = strlen(want);
	while (a > 1 && path[a - 1] == '/')
		a--;
	while (b > 1 && want[b - 1] == '/')
		b--;
	return a == b && strncmp(path, want, a) == 0;
}

/* The environment opts->env names (bytes), in the facts' escaped form
 * (docs/probe-schema.md "Strings"), into arena; NULL when memory ran out. */
static const char *escaped(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *s,
	unsigned flags)
{
	gpuenv_buf_t b;
	char *out = NULL;

	gpuenv_buf_init(&b, ctx, GPUENV_BUF_DEFAULT_MAX);
	if (gpuenv_text_escape(&b, s, strlen(s), flags) == 0)
		out = gpuenv_arena_strndup(arena, b.data ? b.data : "", b.len);
	gpuenv_buf_free(&b);
	return out;
}

static int no_env(gpuenv_ctx_t *ctx, drun_t *r, const char *want)
{
	const gpuenv_facts_t *f = r->facts;
	const char *shown = escaped(ctx, r->arena, want, GPUENV_ESC_CONTROL), *list = "";

	if (!shown)
		return gpuenv_oom(ctx, "judging the facts");
	for (size_t i = 0; i < f->nenvs && i < 4 && list; i++)
		list = dr_fmt(r, "%s%s%s", list, i ? ", " : "",
			i == 3 ? "..." : f->envs[i].prefix ? f->envs[i].prefix : "?");
	if (!list)
		return gpuenv_oom(ctx, "judging the facts");
	gpuenv_fail(ctx, GPUENV_ENOTFOUND, f->name && *f->name ? f->name : NULL, 0, 0,
		"the facts have no Python environment at %s", shown);
	if (f->nenvs)
		return gpuenv_hint(ctx, "name one the facts hold (%s), or take the facts with gpuenv "
					"probe --env %s --json", list, shown);
	return gpuenv_hint(ctx, "take the facts with gpuenv probe --env %s --json", shown);
}

static int doctor_run(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const gpuenv_kb_t *kb, const gpuenv_doctor_opts_t *opts, gpuenv_verdicts_t *out)
{
	const char *want = NULL;
	drun_t r;
	size_t judged = 0;
	int rc;

	if ((rc = drun_init(&r, ctx, arena, facts, kb, out)) != 0)
		return dr_done(ctx, rc);
	if (opts && opts->env && !(want = escaped(ctx, arena, opts->env, 0)))
		return gpuenv_oom(ctx, "judging the facts");
	dr_rules_machine(&r);
	dr_rule_container(&r);
	/* a driver older than its GPU runs nothing there (as kb torch and preflight say) */
	dr_rule_driver_knows_gpus(&r, NULL);
	for (size_t i = 0; i < facts->nenvs && !r.err; i++) {
		if (want && !env_matches(facts->envs[i].prefix, want))
			continue;
		judged++;
		if ((rc = judge_env(&r, &facts->envs[i])) != 0)
			return dr_done(ctx, rc);
	}
	if (r.err)
		return dr_done(ctx, r.err);
	if (want && !judged)
		return no_env(ctx, &r, opts->env);
	dr_finish(&r);
	return dr_done(ctx, r.err);
}

int gpuenv_doctor_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const gpuenv_doctor_opts_t *opts, gpuenv_verdicts_t *out)
{
	const gpuenv_kb_t *kb;
	gpuenv_kb_t *own;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!facts)
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "doctor: no facts given");
	/* the rules read cuda.toml and torch.toml (torch indexes: the pattern
	 * wheels.toml records, built in) */
	if ((rc = dr_kb_open(ctx, opts ? opts->kb : NULL,
		     GPUENV_KB_FILE(GPUENV_KB_CUDA) | GPUENV_KB_FILE(GPUENV_KB_TORCH), &own, &kb)) != 0)
		return dr_done(ctx, rc);
	rc = doctor_run(ctx, arena, facts, kb, opts, out);
	gpuenv_kb_free(own);
	return rc;
}

/* ==== JSON ================================================================ */

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *gpuenv_verdicts_json(const gpuenv_verdicts_t *vs)
{
	json_t *root = json_object(), *arr = json_array();
	bool ok = root && arr;

	if (ok)
		ok = !json_object_set_new(root, "errors", json_integer((json_int_t)vs->count[2])) &&
			!json_object_set_new(root, "warnings", json_integer((json_int_t)vs->count[1])) &&
			!json_object_set_new(root, "infos", json_integer((json_int_t)vs->count[0]));
	for (size_t i = 0; ok && i < vs->n; i++) {
		const gpuenv_verdict_t *v = &vs->items[i];
		json_t *o = json_object(), *ev = json_array();
		ok = o && ev && !json_array_append_new(arr, o);
		if (!ok) {
			json_decref(o);
			json_decref(ev);
			break;
		}
		ok = !json_object_set_new(o, "id", json_string(v->id)) &&
			!json_object_set_new(o, "severity", json_string(gpuenv_severity_name(v->severity))) &&
			!json_object_set_new(o, "subject", jstr_or_null(v->subject)) &&
			!json_object_set_new(o, "target", jstr_or_null(v->target)) &&
			!json_object_set_new(o, "gpu", v->gpu >= 0 ? json_integer(v->gpu) : json_null()) &&
			!json_object_set_new(o, "environment", jstr_or_null(v->env)) &&
			!json_object_set_new(o, "binary", jstr_or_null(v->binary)) &&
			!json_object_set_new(o, "message", jstr_or_null(v->message)) &&
			!json_object_set_new(o, "fix", jstr_or_null(v->fix)) &&
			!json_object_set_new(o, "evidence", ev);
		for (size_t k = 0; ok && k < v->nevidence; k++) {
			const gpuenv_evidence_t *x = &v->evidence[k];
			json_t *eo = json_object();
			ok = eo && !json_array_append_new(ev, eo) &&
				!json_object_set_new(eo, "fact", jstr_or_null(x->fact)) &&
				!json_object_set_new(eo, "value", jstr_or_null(x->value)) &&
				!json_object_set_new(eo, "source", jstr_or_null(x->source));
			if (ok && x->kb_source)
				ok = !json_object_set_new(eo, "kb_source", json_string(x->kb_source));
		}
	}
	if (ok)
		ok = !json_object_set_new(root, "verdicts", arr);
	else
		json_decref(arr);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}
