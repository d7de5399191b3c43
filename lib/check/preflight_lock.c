/* gpuenv preflight --lock: can this node install and run what a PEP 751
 * lock installs here (docs/doctor.md, "Preflight")?
 *
 * Each package whose marker holds on the node is judged by what can be
 * wrong with it there, every answer a KB or facts call: the torch build's
 * CUDA against the driver and its arch list against the GPUs (the rules of
 * `--torch`, pf_node and pf_torch_arch), the CUDA major of nvidia-* /
 * cupy / jax CUDA wheels against the driver (dr_rule_driver), the wheels'
 * tags against the node's machine, C library and Python (gpuenv_tagset),
 * requires-python, and the lock's [tool.gpuenv] target against the node
 * (gpuenv_target_fit, the judgement behind `sync --target auto`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"
#include "gpuenv/fit.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/pylock.h"
#include "gpuenv/wheel.h"

typedef struct lrun {
	drun_t *r;
	const gpuenv_lock_t *lk;
	const char *path;
	gpuenv_target_t node;	/* this node; python: the one judged */
	const char *py;		/* the Python judged ("3.12.3"); NULL unknown */
	bool py_known;		/* py is an environment's, not the lock's */
	size_t py_at;		/* that environment's index in the document */
	gpuenv_marker_env_t menv;
	bool *applies;		/* per package: its marker holds here */
	const char *relock;	/* "lock again for this node: ..." */
} lrun_t;

/* A library call that failed: out of memory stops the run, anything else
 * (a marker the reader let through but the evaluator cannot decide) reads
 * as unknown. */
static void soft(lrun_t *lr, int rc)
{
	if (rc == -ENOMEM || lr->r->ctx->err.code == -ENOMEM)
		lr->r->err = -ENOMEM;
	else
		gpuenv_error_clear(lr->r->ctx);
}

static const char *pkg_label(lrun_t *lr, const gpuenv_lock_package_t *p)
{
	return dr_fmt(lr->r, "%s%s%s", p->name, p->version ? " " : "", p->version ? p->version : "");
}

/* where the lock says it: "pylock.t4.toml: packages[torch]" = "2.7.0+cu128 torch-...whl" */
static void pkg_ev(lrun_t *lr, gpuenv_verdict_t *v, const gpuenv_lock_package_t *p,
	const gpuenv_lock_file_t *f)
{
	if (!f && p->nwheels == 1)
		f = &p->wheels[0];
	dr_ev(lr->r, v, dr_fmt(lr->r, "%s: packages[%s]", lr->path, p->name), "lock", "%s%s%s",
		p->version ? p->version : "", f && f->name ? " " : "", f && f->name ? f->name : "");
}

/* ---- the Python judged ---------------------------------------------------- */

/* Does Python version ver ("3.12.3") meet a requires-python specifier?
 * One that cannot be read (the reader checked it) or no version: yes. */
static bool py_fits(lrun_t *lr, const char *spec, const char *ver)
{
	gpuenv_specset_t ss;
	gpuenv_version_t pv;
	int rc;

	if (!ver || !spec)
		return true;
	if ((rc = gpuenv_specset_parse(lr->r->ctx, lr->r->arena, gpuenv_str(spec), &ss)) != 0 ||
		(rc = gpuenv_version_parse(lr->r->ctx, lr->r->arena, gpuenv_str(ver), &pv)) != 0) {
		soft(lr, rc);
		return true;
	}
	return gpuenv_specset_contains_ex(&ss, gpuenv_str(ver), &pv, GPUENV_PRERELEASES_DEFAULT, true);
}

/* "3.12" of "3.12.3", in the run's arena. */
static const char *py_xy(lrun_t *lr, const char *ver)
{
	size_t a = strspn(ver, "0123456789"), b = ver[a] == '.' ? strspn(ver + a + 1, "0123456789") : 0;

	return dr_fmt(lr->r, "%.*s", (int)(b ? a + 1 + b : a), ver);
}

static bool py_xy_is(const char *ver, const char *xy)
{
	size_t n = xy ? strlen(xy) : 0;

	return !xy || (ver && strncmp(ver, xy, n) == 0 && (ver[n] == '\0' || ver[n] == '.'));
}

static void rule_python(lrun_t *lr)
{
	drun_t *r = lr->r;
	const gpuenv_facts_t *f = r->facts;
	const char *want = lr->lk->target.python, *rp = lr->lk->requires_python;
	size_t active = gpuenv_facts_active_env(f), pick = SIZE_MAX;
	const char *list = "";
	gpuenv_verdict_t *v;

	/* the active environment first, then the others in the facts' order */
	for (size_t k = 0; k <= f->nenvs && pick == SIZE_MAX; k++) {
		size_t i = k == 0 ? active : k - 1;
		const gpuenv_facts_env_t *e;
		const char *ver;
		if (i >= f->nenvs || (k > 0 && i == active))
			continue;
		e = &f->envs[i];
		ver = e->python.version ? e->python.version : e->python_xy;
		if (ver && py_xy_is(ver, want) && py_fits(lr, rp, ver))
			pick = i;
	}
	if (pick != SIZE_MAX) {
		const gpuenv_facts_env_t *e = &f->envs[pick];
		lr->py = e->python.version ? e->python.version : e->python_xy;
		lr->py_known = true;
		lr->py_at = e->at;
		v = dr_verdict(r, "python-ok", GPUENV_SEV_INFO, "environment", e->prefix);
		if (!v)
			return;
		v->env = e->prefix;
		dr_ev(r, v, dr_fmt(r, "environments[%zu].python.version", e->at), NULL, "%s", lr->py);
		v->message = dr_fmt(r, "Python %s of %s fits the lock (%s%s%s%s%s)", lr->py,
			e->prefix ? e->prefix : "an environment", want ? "python " : "", want ? want : "",
			want && rp ? ", " : "", rp ? "requires-python " : "", rp ? rp : "");
		if (!want && !rp)
			v->message = dr_fmt(r, "Python %s of %s: the lock names no Python version", lr->py,
				e->prefix ? e->prefix : "an environment");
		return;
	}
	/* judged further with the lock's own Python, so one mismatch is said once */
	lr->py = want;
	if (!want && !rp)
		return;
	if (!f->nenvs) {
		v = dr_verdict(r, "python-unknown", GPUENV_SEV_WARNING, "environment", "Python");
		if (v)
			v->message = dr_fmt(r, "the facts list no Python environment: cannot tell whether this "
				"node has the Python the lock is for (%s%s%s%s%s)", want ? "python " : "",
				want ? want : "", want && rp ? ", " : "", rp ? "requires-python " : "",
				rp ? rp : "");
		return;
	}
	for (size_t i = 0; i < f->nenvs; i++) {
		const gpuenv_facts_env_t *e = &f->envs[i];
		const char *ver = e->python.version ? e->python.version : e->python_xy;
		list = dr_fmt(r, "%s%s%s (%s)", list ? list : "", i ? ", " : "", ver ? ver : "?",
			e->prefix ? e->prefix : "?");
	}
	/* a warning: the facts list the environments the probe found (the
	 * active one, --env), not every interpreter on the node; sync makes
	 * its venv from any interpreter of the lock's Python */
	v = dr_verdict(r, "python-mismatch", GPUENV_SEV_WARNING, "environment",
		f->envs[0].prefix ? f->envs[0].prefix : "Python");
	if (!v)
		return;
	for (size_t i = 0; i < f->nenvs && i < 4; i++)
		dr_ev(r, v, dr_fmt(r, "environments[%zu].python.version", f->envs[i].at), NULL, "%s",
			f->envs[i].python.version ? f->envs[i].python.version
						  : f->envs[i].python_xy ? f->envs[i].python_xy : "?");
	if (want)
		dr_ev(r, v, dr_fmt(r, "%s: tool.gpuenv.python", lr->path), "lock", "%s", want);
	if (rp)
		dr_ev(r, v, dr_fmt(r, "%s: requires-python", lr->path), "lock", "%s", rp);
	v->message = dr_fmt(r, "%s is for Python %s%s; the Python environments the facts list for this "
		"node run %s (gpuenv sync needs an interpreter of the lock's Python on this node)", lr->path, want ? want : rp, want && rp ? dr_fmt(r, " (requires-python %s)", rp) : "",
		list);
	{
		const gpuenv_facts_env_t *e = &f->envs[active < f->nenvs ? active : 0];
		const char *ver = e->python.version ? e->python.version : e->python_xy;
		v->fix = dr_fmt(r, "install Python %s on this node (gpuenv sync makes its venv from it; "
			"gpuenv probe --env DIR shows an environment the probe did not find), or lock again "
			"for this node's Python: python = \"%s\" in the target (gpuenv lock --target NAME)",
			want ? want : rp, ver ? py_xy(lr, ver) : "?");
	}
}

/* ---- markers --------------------------------------------------------------- */

static bool marker_holds(lrun_t *lr, const char *text)
{
	gpuenv_marker_t *m;
	bool yes = true;
	int rc;

	if (!text)
		return true;
	if ((rc = gpuenv_marker_parse(lr->r->ctx, lr->r->arena, gpuenv_str(text), &m)) != 0 ||
		(rc = gpuenv_marker_eval(lr->r->ctx, m, &lr->menv, &yes)) != 0) {
		/* a variable the facts do not give: the package may install here */
		soft(lr, rc);
		return true;
	}
	return yes;
}

static int markers(lrun_t *lr)
{
	drun_t *r = lr->r;
	const gpuenv_lock_t *lk = lr->lk;
	gpuenv_target_t t = lr->node;
	const char **groups;

	memset(&lr->menv, 0, sizeof(lr->menv));
	t.python = lr->py;
	if (gpuenv_target_marker_env(r->ctx, r->arena, &t, &lr->menv) != 0)
		return r->err = -ENOMEM;
	/* PEP 751: the default groups, no extra */
	groups = gpuenv_arena_calloc(r->arena, lk->ndefault_groups + 1, sizeof(*groups));
	lr->applies = gpuenv_arena_calloc(r->arena, lk->npackages ? lk->npackages : 1, sizeof(bool));
	if (!groups || !lr->applies)
		return r->err = -ENOMEM;
	for (size_t i = 0; i < lk->ndefault_groups; i++)
		groups[i] = lk->default_groups[i];
	lr->menv.dependency_groups = groups;
	lr->menv.extras = groups + lk->ndefault_groups; /* empty */
	for (size_t i = 0; i < lk->npackages && !r->err; i++)
		lr->applies[i] = marker_holds(lr, lk->packages[i].marker);
	if (lk->nenvironments) {
		bool any = false;
		const char *list = "";
		gpuenv_verdict_t *v;
		for (size_t i = 0; i < lk->nenvironments && !any; i++)
			any = marker_holds(lr, lk->environments[i]);
		if (any || r->err)
			return r->err;
		for (size_t i = 0; i < lk->nenvironments; i++)
			list = dr_fmt(r, "%s%s\"%s\"", list ? list : "", i ? ", " : "", lk->environments[i]);
		v = dr_verdict(r, "lock-environments", GPUENV_SEV_ERROR, "machine", "this node");
		if (!v)
			return r->err;
		dr_ev(r, v, dr_fmt(r, "%s: environments", lr->path), "lock", "%s", list);
		if (lr->node.machine)
			dr_ev(r, v, "host.machine", NULL, "%s", lr->node.machine);
		v->message = dr_fmt(r, "%s covers the environments %s; this node (%s%s%s) is none of them",
			lr->path, list, lr->node.machine ? lr->node.machine : "machine unknown",
			lr->py ? ", Python " : "", lr->py ? lr->py : "");
		v->fix = lr->relock;
	}
	return r->err;
}

/* ---- the torch build and the CUDA wheels ------------------------------------- */

static const gpuenv_lock_package_t *find_pkg(lrun_t *lr, const char *name)
{
	for (size_t i = 0; i < lr->lk->npackages; i++)
		if (lr->applies[i] && strcmp(lr->lk->packages[i].name, name) == 0)
			return &lr->lk->packages[i];
	return NULL;
}

/* The CUDA (1000*major + 10*minor) a CUDA wheel needs of the driver, its
 * major's first release or the KB row's lowest minor; 0 for other packages. */
static int wheel_need(lrun_t *lr, const gpuenv_lock_package_t *p, const char **cite)
{
	const gpuenv_kb_wheel_package_t *row = gpuenv_kb_wheel_package(lr->r->kb, p->name);
	char lib[128];
	int major;

	*cite = NULL;
	if (row && row->cuda_major > 0 && row->cuda_major < 100) {
		*cite = dr_kb_cite(lr->r, &row->row, "[[package]]");
		if (row->cuda_min.n >= 2 && row->cuda_min.part[0] == (unsigned)row->cuda_major)
			return (int)(row->cuda_min.part[0] * 1000 + row->cuda_min.part[1] * 10);
		return (int)row->cuda_major * 1000;
	}
	major = dk_name_cuda_major(p->name, lib, sizeof(lib));
	return major > 0 && major < 100 ? major * 1000 : 0;
}

/* torch's build: the KB's variant, or only the CUDA of its local label. */
typedef struct torch_build {
	const gpuenv_lock_package_t *p;
	const gpuenv_kb_torch_variant_t *kv;
	int cuda;	  /* 0: a CPU build or unknown */
	bool cpu;
	const char *what; /* "torch 2.7.0+cu128 (CUDA 12.8)" */
} torch_build_t;

static void torch_of(lrun_t *lr, torch_build_t *tb)
{
	drun_t *r = lr->r;
	const gpuenv_lock_package_t *p = find_pkg(lr, "torch");
	const char *ver, *plus, *local, *backend = lr->lk->target.backend;
	char cb[32];
	gpuenv_kb_ver_t cv;
	int rc;

	memset(tb, 0, sizeof(*tb));
	if (!p || !p->version)
		return;
	tb->p = p;
	ver = p->version;
	plus = strchr(ver, '+');
	/* a plain version: the build the lock's backend names, else PyPI's */
	local = plus ? plus + 1 : backend;
	if (local && strcmp(local, "cpu") == 0) {
		tb->cpu = true;
		tb->what = dr_fmt(r, "torch %s (CPU build)", ver);
		return;
	}
	if (!plus && local && gpuenv_kb_cuda_of_tag(gpuenv_str(local), cb, sizeof(cb), NULL))
		ver = dr_fmt(r, "%s+%s", ver, local);
	if (!ver)
		return;
	rc = gpuenv_kb_torch_lookup(r->kb, gpuenv_str(ver), &tb->kv);
	if (rc == 0) {
		tb->cuda = tb->kv->cuda.n ? (int)(tb->kv->cuda.part[0] * 1000 + tb->kv->cuda.part[1] * 10) : 0;
		tb->what = dr_fmt(r, "torch %.*s+%.*s (CUDA %.*s)",
			(int)strcspn(ver, "+"), ver, GPUENV_STR_ARG(tb->kv->tag), GPUENV_STR_ARG(tb->kv->cuda.str));
		return;
	}
	soft(lr, rc);
	tb->kv = NULL;
	if (local && gpuenv_kb_cuda_of_tag(gpuenv_str(local), cb, sizeof(cb), &cv))
		tb->cuda = (int)(cv.part[0] * 1000 + cv.part[1] * 10);
	tb->what = tb->cuda ? dr_fmt(r, "torch %s (CUDA %s)", ver, cb) : dr_fmt(r, "torch %s", ver);
}

static void rule_torch(lrun_t *lr, const torch_build_t *tb, bool *asked, int *cuda)
{
	drun_t *r = lr->r;
	const char *fact = dr_fmt(r, "%s: packages[torch] needs CUDA", lr->path);
	gpuenv_verdict_t *v;
	bool ptx_ok;

	if (!tb->p)
		return;
	if (tb->cpu) {
		bool gpu = r->ngpus > 0 || r->gpu_host;
		v = dr_verdict(r, "cpu-build", gpu ? GPUENV_SEV_WARNING : GPUENV_SEV_INFO, "package",
			pkg_label(lr, tb->p));
		if (!v)
			return;
		pkg_ev(lr, v, tb->p, NULL);
		if (!gpu) {
			v->message = dr_fmt(r, "%s needs no GPU", tb->what);
			return;
		}
		dr_ev(r, v, "gpus", NULL, "%zu", r->ngpus);
		v->message = dr_fmt(r, "%s is a CPU build: it runs here, but never on this node's NVIDIA "
			"GPU%s", tb->what, r->ngpus > 1 ? "s" : "");
		v->fix = lr->relock;
		return;
	}
	if (!tb->cuda) {
		v = dr_verdict(r, "torch-unknown", GPUENV_SEV_WARNING, "package", pkg_label(lr, tb->p));
		if (!v)
			return;
		pkg_ev(lr, v, tb->p, NULL);
		v->message = dr_fmt(r, "the knowledge base does not know which build %s is (no +cuXYZ or "
			"+cpu label, no [tool.gpuenv] backend, and no row for its PyPI build): cannot tell "
			"what it needs of the driver and the GPUs", tb->what);
		return;
	}
	*asked = true;
	*cuda = tb->cuda;
	ptx_ok = pf_node(r, tb->cuda, tb->what, NULL, fact, "lock", lr->relock);
	if (tb->kv) {
		pf_torch_arch(r, tb->kv, tb->what, ptx_ok, true);
		return;
	}
	v = dr_verdict(r, "arch-unknown", GPUENV_SEV_WARNING, "package", pkg_label(lr, tb->p));
	if (v) {
		pkg_ev(lr, v, tb->p, NULL);
		v->message = dr_fmt(r, "the knowledge base has no row for %s: cannot tell which GPUs it "
			"carries code for", tb->what);
	}
}

static void rule_cuda_wheels(lrun_t *lr, bool *asked, int *cuda)
{
	drun_t *r = lr->r;

	for (size_t i = 0; i < lr->lk->npackages && !r->err; i++) {
		const gpuenv_lock_package_t *p = &lr->lk->packages[i];
		const char *cite, *what, *fact;
		int need;

		if (!lr->applies[i] || !(need = wheel_need(lr, p, &cite)))
			continue;
		what = pkg_label(lr, p);
		fact = dr_fmt(r, "%s: packages[%s] needs CUDA", lr->path, p->name);
		if (need > *cuda)
			*cuda = need;
		if (!*asked) {
			/* the first CUDA wheel of a lock without a CUDA torch asks the node */
			*asked = true;
			pf_node(r, need, what, NULL, fact, "lock", lr->relock);
		} else if (r->ngpus > 0) {
			dr_rule_driver(r, need, what, fact, "lock", NULL, lr->relock, false);
		}
		/* the KB row in the driver verdict of that CUDA (dr_rule_driver's) */
		for (size_t k = 0; cite && k < r->ndrv_seen; k++)
			if (r->drv_seen[k].need == need && !r->drv_seen[k].env && r->drv_seen[k].vi != SIZE_MAX)
				dr_ev_kb(r, &r->out->items[r->drv_seen[k].vi],
					dr_fmt(r, "kb:wheels.toml package %s", p->name), cite, "cuda_major %d",
					need / 1000);
	}
}

/* ---- wheel tags -------------------------------------------------------------- */

/* Does a platform tag run on a Linux machine of this arch ("any",
 * "manylinux_2_28_x86_64", "musllinux_1_2_x86_64", "linux_x86_64")? */
static bool plat_arch_is(gpuenv_str_t plat, const char *arch)
{
	size_t n = arch ? strlen(arch) : 0;
	bool linux_tag = (plat.len > 6 && memcmp(plat.ptr, "linux_", 6) == 0) ||
		(plat.len > 9 && (memcmp(plat.ptr, "manylinux", 9) == 0 || memcmp(plat.ptr, "musllinux", 9) == 0));

	if (gpuenv_str_eq_cstr(plat, "any"))
		return true;
	return n && linux_tag && plat.len > n + 1 && plat.ptr[plat.len - n - 1] == '_' &&
		memcmp(plat.ptr + plat.len - n, arch, n) == 0;
}

/* The glibc a manylinux tag needs, as 100*major + minor (2.28 -> 228); 0
 * for other tags. */
static unsigned manylinux_glibc(gpuenv_str_t plat)
{
	unsigned a = 0, b = 0;
	char t[64];

	if (plat.len >= sizeof(t))
		return 0;
	memcpy(t, plat.ptr, plat.len);
	t[plat.len] = '\0';
	if (strncmp(t, "manylinux1_", 11) == 0)
		return 205;
	if (strncmp(t, "manylinux2010_", 14) == 0)
		return 212;
	if (strncmp(t, "manylinux2014_", 14) == 0)
		return 217;
	if (sscanf(t, "manylinux_%u_%u_", &a, &b) == 2 && a < 100 && b < 100)
		return a * 100 + b;
	return 0;
}

static bool is_musl(gpuenv_str_t plat)
{
	return plat.len > 9 && memcmp(plat.ptr, "musllinux", 9) == 0;
}

typedef struct tagrun {
	gpuenv_tagset_t *set;
	unsigned glibc;		/* the node's (100*major + minor), 0 unknown */
	bool musl;
	unsigned need_unknown;	/* the newest glibc a wheel needs when the node's is unknown */
	const char *unknown_pkg;
	size_t nfail;
} tagrun_t;

/* Why none of p's wheels installs here, in words: the first of machine, C
 * library, glibc version and Python that none of their tags fits. */
static const char *why_not(lrun_t *lr, const tagrun_t *tr, const gpuenv_wheel_name_t *wn, size_t nw)
{
	drun_t *r = lr->r;
	const char *arch = lr->node.machine;
	bool arch_ok = false, libc_ok = false, glibc_ok = false;
	unsigned gmin = 0;
	const char *plat = NULL, *interp = NULL;

	for (size_t w = 0; w < nw; w++)
		for (size_t k = 0; k < wn[w].ntags; k++) {
			gpuenv_str_t pl = wn[w].tags[k].platform;
			unsigned g = manylinux_glibc(pl);
			if (!plat)
				plat = dr_fmt(r, "%.*s", GPUENV_STR_ARG(pl));
			if (!plat_arch_is(pl, arch))
				continue;
			arch_ok = true;
			if (!gpuenv_str_eq_cstr(pl, "any") && (tr->musl ? !is_musl(pl) && g : is_musl(pl)))
				continue;
			libc_ok = true;
			if (g && tr->glibc && g > tr->glibc) {
				gmin = !gmin || g < gmin ? g : gmin;
				continue;
			}
			glibc_ok = true;
			if (!interp)
				interp = dr_fmt(r, "%.*s-%.*s", GPUENV_STR_ARG(wn[w].tags[k].interpreter),
					GPUENV_STR_ARG(wn[w].tags[k].abi));
		}
	if (!arch_ok)
		return dr_fmt(r, "its wheels are for %s; this node is %s", plat ? plat : "another platform", arch);
	if (!libc_ok)
		return dr_fmt(r, "its wheels are for %s; this node's C library is %s",
			tr->musl ? "glibc (manylinux)" : "musl (musllinux)", tr->musl ? "musl" : "glibc");
	if (!glibc_ok)
		return dr_fmt(r, "its wheels need glibc %u.%u (manylinux_%u_%u); this node has glibc %u.%u",
			gmin / 100, gmin % 100, gmin / 100, gmin % 100, tr->glibc / 100, tr->glibc % 100);
	return dr_fmt(r, "its wheels are for %s; this node's Python is %s %s", interp ? interp : "another Python",
		lr->node.implementation && strcmp(lr->node.implementation, "pypy") == 0 ? "PyPy" : "CPython",
		lr->py ? lr->py : "?");
}

/* The platform tag of this node, for the fix: "manylinux_2_35_aarch64". */
static const char *node_platform(lrun_t *lr, const tagrun_t *tr)
{
	if (!lr->node.machine)
		return NULL;
	unsigned g = tr->glibc;

	/* a glibc the facts do not give: the lock's own, else manylinux2014's */
	if (!g && lr->lk->target.platform)
		g = manylinux_glibc(gpuenv_str(lr->lk->target.platform));
	if (!g)
		g = 217;
	return dr_fmt(lr->r, "%s_%u_%u_%s", tr->musl ? "musllinux" : "manylinux", g / 100, g % 100,
		lr->node.machine);
}

static void pkg_tags(lrun_t *lr, tagrun_t *tr, const gpuenv_lock_package_t *p)
{
	drun_t *r = lr->r;
	gpuenv_wheel_name_t *wn = gpuenv_arena_calloc(r->arena, p->nwheels, sizeof(*wn));
	size_t nw = 0;
	const gpuenv_lock_file_t *first = NULL;
	gpuenv_verdict_t *v;
	int rc;

	if (!wn) {
		r->err = -ENOMEM;
		return;
	}
	for (size_t w = 0; w < p->nwheels; w++) {
		if ((rc = gpuenv_wheel_name_parse(r->ctx, r->arena, gpuenv_str(p->wheels[w].name), 0, &wn[nw])) != 0) {
			soft(lr, rc);	/* the reader checked them: only memory */
			continue;
		}
		if (!first)
			first = &p->wheels[w];
		if (gpuenv_tagset_rank_wheel(tr->set, &wn[nw]) >= 0) {
			/* one installs here; on a glibc the facts do not give, the
			 * oldest glibc among its tags is what it needs */
			unsigned need = 0;
			for (size_t k = 0; !tr->glibc && k < wn[nw].ntags; k++) {
				unsigned g = manylinux_glibc(wn[nw].tags[k].platform);
				if (plat_arch_is(wn[nw].tags[k].platform, lr->node.machine) &&
					(gpuenv_str_eq_cstr(wn[nw].tags[k].platform, "any") || g))
					need = !need || g < need ? g : need;
			}
			if (need > 217 && need > tr->need_unknown) {
				tr->need_unknown = need;
				tr->unknown_pkg = p->name;
			}
			return;
		}
		nw++;
	}
	if (!nw || r->err)
		return;
	tr->nfail++;
	v = dr_verdict(r, "wheel-platform", GPUENV_SEV_ERROR, "package", pkg_label(lr, p));
	if (!v)
		return;
	pkg_ev(lr, v, p, first);
	if (lr->node.machine)
		dr_ev(r, v, "host.machine", NULL, "%s", lr->node.machine);
	if (lr->node.libc_version)
		dr_ev(r, v, "host.libc_version", NULL, "%s %s", lr->node.libc ? lr->node.libc : "",
			lr->node.libc_version);
	if (lr->py)
		dr_ev(r, v, lr->py_known ? dr_fmt(r, "environments[%zu].python.version", lr->py_at)
					 : dr_fmt(r, "%s: tool.gpuenv.python", lr->path),
			lr->py_known ? NULL : "lock", "%s", lr->py);
	v->message = dr_fmt(r, "no wheel of %s installs on this node (%s%s): %s", pkg_label(lr, p),
		first ? first->name : "?", p->nwheels > 1 ? dr_fmt(r, " and %zu more", p->nwheels - 1) : "",
		why_not(lr, tr, wn, nw));
	{
		const char *plat = node_platform(lr, tr);
		v->fix = dr_fmt(r, "lock again for this node's platform: a target with platform = \"%s\"%s "
			"in [tool.gpuenv.targets] and gpuenv lock --target NAME", plat ? plat : "?",
			lr->py ? dr_fmt(r, " and python = \"%s\"", py_xy(lr, lr->py)) : "");
	}
}

static void rule_requires_python(lrun_t *lr, const gpuenv_lock_package_t *p)
{
	drun_t *r = lr->r;
	gpuenv_verdict_t *v;

	if (!p->requires_python || !lr->py || py_fits(lr, p->requires_python, lr->py))
		return;
	v = dr_verdict(r, "requires-python", GPUENV_SEV_ERROR, "package", pkg_label(lr, p));
	if (!v)
		return;
	pkg_ev(lr, v, p, NULL);
	dr_ev(r, v, dr_fmt(r, "%s: packages[%s].requires-python", lr->path, p->name), "lock", "%s",
		p->requires_python);
	v->message = dr_fmt(r, "%s requires Python %s; this node's is %s", pkg_label(lr, p), p->requires_python,
		lr->py);
	v->fix = dr_fmt(r, "lock again for Python %s (python = \"%s\" in the target), or install a Python "
		"that fits %s", lr->py, py_xy(lr, lr->py), p->requires_python);
}

static void rule_platform(lrun_t *lr)
{
	drun_t *r = lr->r;
	gpuenv_target_t t = lr->node;
	gpuenv_wheel_target_t wt;
	tagrun_t tr;
	size_t nwheeled = 0;
	gpuenv_verdict_t *v;
	int rc;

	memset(&tr, 0, sizeof(tr));
	for (size_t i = 0; i < lr->lk->npackages; i++)
		if (lr->applies[i])
			rule_requires_python(lr, &lr->lk->packages[i]);
	if (!lr->node.machine || !lr->py)
		return; /* python-unknown said it, or nothing to judge wheels by */
	t.python = lr->py;
	tr.musl = t.libc && strcmp(t.libc, "musl") == 0;
	if (t.libc_version) {
		unsigned a, b;
		if (sscanf(t.libc_version, "%u.%u", &a, &b) == 2 && a < 100 && b < 100)
			tr.glibc = a * 100 + b;
	}
	if (!tr.glibc) {
		/* the facts do not say: any version of it (glibc when the C library
		 * itself is unknown), and a warning for what needs a new one; for
		 * glibc, the newest the lock's wheels name, so the tag set stays
		 * small */
		unsigned top = 217;
		for (size_t i = 0; i < lr->lk->npackages; i++)
			for (size_t w = 0; lr->applies[i] && w < lr->lk->packages[i].nwheels; w++) {
				const char *n = lr->lk->packages[i].wheels[w].name, *m = n;
				while ((m = strstr(m, "manylinux_"))) {
					unsigned a, b;
					if (sscanf(m, "manylinux_%u_%u_", &a, &b) == 2 && a == 2 && b < 100 &&
						200 + b > top)
						top = 200 + b;
					m += 10;
				}
			}
		t.libc = tr.musl ? "musl" : "glibc";
		t.libc_version = tr.musl ? "1.99" : dr_fmt(r, "2.%u", top - 200);
		if (!t.libc_version)
			return;
	}
	if ((rc = gpuenv_target_wheel(r->ctx, &t, &wt)) != 0 ||
		(rc = gpuenv_tagset_build(r->ctx, &wt, &tr.set)) != 0) {
		soft(lr, rc);
		return;
	}
	for (size_t i = 0; i < lr->lk->npackages && !r->err; i++) {
		const gpuenv_lock_package_t *p = &lr->lk->packages[i];
		if (!lr->applies[i] || !p->nwheels || p->sdist)
			continue;	/* an sdist builds anywhere: not this rule's */
		nwheeled++;
		pkg_tags(lr, &tr, p);
	}
	gpuenv_tagset_free(tr.set);
	if (r->err)
		return;
	if (tr.need_unknown) {
		v = dr_verdict(r, "libc-unknown", GPUENV_SEV_WARNING, "machine", "this node");
		if (v) {
			v->message = dr_fmt(r, "the facts do not record this node's C library (a snapshot taken "
				"with --root, or by an older probe): cannot tell whether it runs wheels that need "
				"glibc %u.%u (%s and others)", tr.need_unknown / 100, tr.need_unknown % 100,
				tr.unknown_pkg);
			v->fix = dr_fmt(r, "judge a probe taken on the node itself (gpuenv probe --json)");
		}
	}
	if (!tr.nfail && nwheeled) {
		v = dr_verdict(r, "platform-ok", GPUENV_SEV_INFO, "machine", "this node");
		if (v) {
			dr_ev(r, v, "host.machine", NULL, "%s", lr->node.machine);
			v->message = dr_fmt(r, "each of the %zu packages with wheels has one for this node "
				"(CPython %s, %s%s%s)", nwheeled, lr->py, lr->node.machine,
				tr.glibc ? dr_fmt(r, ", %s %u.%u", tr.musl ? "musl" : "glibc", tr.glibc / 100,
						   tr.glibc % 100) : "", "");
		}
	}
}

/* ---- the lock's target --------------------------------------------------------- */

static void rule_target(lrun_t *lr)
{
	drun_t *r = lr->r;
	const gpuenv_lock_target_t *lt = &lr->lk->target;
	gpuenv_target_t want;
	gpuenv_target_gpu_t g;
	gpuenv_fit_t fit;
	char cb[32];
	gpuenv_verdict_t *v;
	bool cpu;

	if (!lt->name || (!lt->gpu && !lt->compute_capability))
		return; /* another tool's lock: no target to compare */
	cpu = lt->gpu && strcmp(lt->gpu, "none") == 0;
	memset(&want, 0, sizeof(want));
	memset(&g, 0, sizeof(g));
	want.name = lt->name;
	want.origin = "declared";
	g.name = cpu ? NULL : lt->gpu;
	g.memory = -1;
	g.visible = true;
	if (!lt->compute_capability || !gpuenv_facts_cc(lt->compute_capability, &g.cc_major, &g.cc_minor))
		g.cc_major = g.cc_minor = -1;
	if (!cpu && g.cc_major < 0 && lt->gpu) {
		gpuenv_kb_gpu_match_t m;
		if (gpuenv_kb_gpu_find(r->kb, lt->gpu, &m, 1) == 1 && m.gpu->cc.n >= 2) {
			g.cc_major = (int)m.gpu->cc.part[0];
			g.cc_minor = (int)m.gpu->cc.part[1];
		}
	}
	if (!cpu) {
		want.ngpus = 1;
		want.gpus = &g;
	}
	want.driver = lt->driver;
	want.driver_cuda = lt->cuda;
	if (gpuenv_target_fit(r->ctx, r->arena, r->kb, &lr->node, &want,
		    gpuenv_kb_cuda_of_tag(gpuenv_str(lt->backend), cb, sizeof(cb), NULL), &fit) != 0) {
		r->err = -ENOMEM;
		return;
	}
	v = dr_verdict(r, fit.verdict == GPUENV_KB_NO ? "target-other" : "target-ok",
		fit.verdict == GPUENV_KB_NO ? GPUENV_SEV_WARNING : GPUENV_SEV_INFO, "machine", "this node");
	if (!v)
		return;
	dr_ev(r, v, dr_fmt(r, "%s: tool.gpuenv.target", lr->path), "lock", "%s", lt->name);
	if (lt->gpu)
		dr_ev(r, v, dr_fmt(r, "%s: tool.gpuenv.gpu", lr->path), "lock", "%s", lt->gpu);
	if (lt->compute_capability)
		dr_ev(r, v, dr_fmt(r, "%s: tool.gpuenv.compute-capability", lr->path), "lock", "%s",
			lt->compute_capability);
	if (lt->driver)
		dr_ev(r, v, dr_fmt(r, "%s: tool.gpuenv.driver", lr->path), "lock", "%s", lt->driver);
	if (fit.verdict != GPUENV_KB_NO) {
		v->message = dr_fmt(r, "%s is locked for target %s, and this node is one: %s", lr->path, lt->name,
			fit.nreasons ? fit.reasons[0] : "it fits");
		return;
	}
	{
		const char *wd = gpuenv_target_describe(r->arena, &want);
		const char *nd = gpuenv_target_describe(r->arena, &lr->node);
		if (!wd || !nd) {
			r->err = -ENOMEM;
			return;
		}
		v->message = dr_fmt(r, "%s is locked for target %s (%s), not for this node (%s): %s; what "
			"the lock installs is judged on its own above", lr->path, lt->name, wd, nd,
			fit.nreasons ? fit.reasons[0] : "it does not fit");
	}
	v->fix = lr->relock;
}

/* ---- the run ---------------------------------------------------------------------- */

/* "lock again for this node: a target with gpu = ..., driver = ... and
 * gpuenv lock --target NAME" */
static const char *relock_fix(lrun_t *lr)
{
	drun_t *r = lr->r;
	const char *gpu = NULL;

	for (size_t i = 0; i < r->ngpus && !gpu; i++)
		if (r->gpus[i].visible && r->gpus[i].name)
			gpu = r->gpus[i].name;
	return dr_fmt(r, "lock again for this node: a target with %s%s%s%s%s in [tool.gpuenv.targets] "
		"(gpuenv lock --target NAME), or gpuenv lock on the node itself",
		gpu ? dr_fmt(r, "gpu = \"%s\"", gpu) : "gpu = \"none\"",
		r->drv_version ? ", driver = \"" : "", r->drv_version ? r->drv_version : "",
		r->drv_version ? "\"" : "", "");
}

int pf_lock(drun_t *r, const gpuenv_lock_t *lk, const char *path, gpuenv_preflight_t *out)
{
	lrun_t lr;
	torch_build_t tb;
	bool asked = false; /* the node asked for a GPU and a driver */
	int cuda = 0;

	memset(&lr, 0, sizeof(lr));
	lr.r = r;
	lr.lk = lk;
	lr.path = path;
	if (gpuenv_target_from_facts(r->ctx, r->arena, r->facts, SIZE_MAX, &lr.node) != 0)
		return r->ctx->err.code;
	lr.relock = relock_fix(&lr);
	rule_python(&lr);
	if (!r->err)
		markers(&lr);
	if (r->err)
		return r->err;
	torch_of(&lr, &tb);
	if (!r->err)
		rule_torch(&lr, &tb, &asked, &cuda);
	if (!r->err)
		rule_cuda_wheels(&lr, &asked, &cuda);
	if (!r->err)
		rule_platform(&lr);
	if (!r->err)
		rule_target(&lr);
	out->cuda = cuda;
	out->what = dr_fmt(r, "%s%s%s%s", path, lk->target.name ? " (target " : "",
		lk->target.name ? lk->target.name : "", lk->target.name ? ")" : "");
	return r->err;
}
