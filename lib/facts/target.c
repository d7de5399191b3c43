/* One target for a machine (include/gpuenv/facts.h): derived from the
 * facts, or filled by hand for a declared one, and the views the other
 * modules take of it (wheel tags, PEP 508 markers, the knowledge base). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/facts.h"
#include "gpuenv/kb.h"
#include "gpuenv/pep508.h"
#include "gpuenv/wheel.h"

static bool ieq(const char *a, const char *b)
{
	return a && b && gpuenv_str_ieq(gpuenv_str(a), gpuenv_str(b));
}

/* "13.0" from 13000; NULL for 0 or less. */
static const char *cuda_text(gpuenv_arena_t *a, long long v, bool *oom)
{
	char buf[24];
	char *s;

	if (v <= 0 || v >= 100000)
		return NULL;
	snprintf(buf, sizeof(buf), "%lld.%lld", v / 1000, v % 1000 / 10);
	if (!(s = gpuenv_arena_strndup(a, buf, strlen(buf))))
		*oom = true;
	return s;
}

/* "12.8" -> 12080 (a third part ignored); 0 when not a version. */
static long cuda_num(const char *s)
{
	size_t a, b;

	if (!s)
		return 0;
	a = strspn(s, "0123456789");
	if (a < 1 || a > 2 || s[a] != '.')
		return a >= 1 && a <= 2 && !s[a] ? (long)strtol(s, NULL, 10) * 1000 : 0;
	b = strspn(s + a + 1, "0123456789");
	if (b != 1)
		return 0;
	return strtol(s, NULL, 10) * 1000 + (s[a + 1] - '0') * 10;
}

int gpuenv_target_from_facts(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_facts_t *f, size_t env, gpuenv_target_t *out)
{
	const gpuenv_facts_env_t *e;
	gpuenv_target_gpu_t *gpus = NULL;
	gpuenv_target_lib_t *libs = NULL;
	bool oom = false;

	memset(out, 0, sizeof(*out));
	out->name = "auto";
	out->origin = f->name && *f->name ? "snapshot" : "probe";
	if (f->ngpus && !(gpus = gpuenv_arena_calloc(arena, f->ngpus, sizeof(*gpus))))
		return gpuenv_oom(ctx, "deriving the target");
	for (size_t i = 0; i < f->ngpus; i++) {
		const gpuenv_facts_gpu_t *g = &f->gpus[i];
		gpuenv_target_gpu_t *t = &gpus[out->ngpus++];
		t->name = g->name;
		if (!gpuenv_facts_gpu_cc(g, &t->cc_major, &t->cc_minor))
			t->cc_major = t->cc_minor = -1;
		t->memory = g->memory_total;
		t->visible = gpuenv_facts_gpu_visible(f, g);
	}
	out->gpus = gpus;
	out->driver = f->driver.version;
	out->driver_cuda = f->driver.cuda_version ? f->driver.cuda_version
						  : cuda_text(arena, f->driver.cuda_version_int, &oom);
	if (ieq(f->driver.libcuda.state, "driver")) {
		/* a libcuda newer than the kernel driver: cuda-compat */
		const char *lc = f->driver.libcuda.cuda_version
			? f->driver.libcuda.cuda_version
			: cuda_text(arena, f->driver.libcuda.cuda_version_int, &oom);
		if (lc && cuda_num(lc) > cuda_num(out->driver_cuda))
			out->compat_cuda = lc;
	}
	out->os = "linux"; /* the probe runs on Linux only */
	out->machine = f->host.machine;
	out->kernel = f->host.kernel;
	out->libc = f->host.libc;
	out->libc_version = f->host.libc_version;
	if (env == SIZE_MAX)
		env = gpuenv_facts_active_env(f);
	e = env < f->nenvs ? &f->envs[env] : NULL;
	if (e) {
		out->python = e->python.version ? e->python.version : e->python_xy;
		out->implementation = "cpython";
		/* the CUDA the environment's builds use: the first framework
		 * naming a full version (a major alone, jax-cuda13-plugin's "13",
		 * says less) */
		for (size_t k = 0; k < e->nframeworks && !out->cuda; k++)
			if (e->frameworks[k].cuda && strchr(e->frameworks[k].cuda, '.'))
				out->cuda = e->frameworks[k].cuda;
		for (size_t k = 0; k < e->nframeworks && !out->cuda; k++)
			out->cuda = e->frameworks[k].cuda;
	}
	/* the NVIDIA libraries: the environment's own copies (its wheels), else
	 * the machine's; one per family, the first listed */
	if (f->nlibraries && !(libs = gpuenv_arena_calloc(arena, f->nlibraries, sizeof(*libs))))
		return gpuenv_oom(ctx, "deriving the target");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < f->nlibraries; i++) {
			const gpuenv_facts_library_t *l = &f->libraries[i];
			bool mine = false, have = false;
			if (!l->family || !l->version.version)
				continue;
			for (size_t k = 0; e && l->site && k < e->sites.n; k++)
				mine |= strcmp(l->site, e->sites.items[k]) == 0;
			if ((pass == 0) != mine)
				continue;
			for (size_t k = 0; k < out->nlibs; k++)
				have |= strcmp(libs[k].name, l->family) == 0;
			if (have)
				continue;
			libs[out->nlibs].name = l->family;
			libs[out->nlibs].version = l->version.version;
			out->nlibs++;
		}
	out->libs = libs;
	if (oom)
		return gpuenv_oom(ctx, "deriving the target");
	return 0;
}

/* "3.12.3" -> 3, 12; false when it does not start with major.minor. */
static bool py_xy(const char *s, unsigned *maj, unsigned *min, size_t *len)
{
	size_t a, b;

	if (!s)
		return false;
	a = strspn(s, "0123456789");
	if (a < 1 || a > 2 || s[a] != '.')
		return false;
	b = strspn(s + a + 1, "0123456789");
	if (b < 1 || b > 3)
		return false;
	*maj = 0;
	*min = 0;
	for (size_t i = 0; i < a; i++)
		*maj = *maj * 10 + (unsigned)(s[i] - '0');
	for (size_t i = 0; i < b; i++)
		*min = *min * 10 + (unsigned)(s[a + 1 + i] - '0');
	*len = a + 1 + b;
	return true;
}

int gpuenv_target_wheel(gpuenv_ctx_t *ctx, const gpuenv_target_t *t, gpuenv_wheel_target_t *out)
{
	unsigned maj, min;
	size_t len;

	memset(out, 0, sizeof(*out));
	if (!py_xy(t->python, &maj, &min, &len)) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "target %s: %s", t->name ? t->name : "?",
			t->python ? "its Python version is not X.Y[.Z]" : "no Python version");
		return gpuenv_hint(ctx, "probe a Python environment (gpuenv probe --env DIR), or "
					"declare python = \"3.12\"");
	}
	if (!t->machine || !*t->machine || strlen(t->machine) >= sizeof(out->arch)) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "target %s: no machine (x86_64, aarch64)",
			t->name ? t->name : "?");
		return gpuenv_hint(ctx, "declare machine = \"x86_64\"");
	}
	if (t->os && !ieq(t->os, "linux"))
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"target %s: os %s: only linux targets are supported", t->name ? t->name : "?",
			t->os);
	out->impl = ieq(t->implementation, "pypy") ? GPUENV_IMPL_PYPY : GPUENV_IMPL_CPYTHON;
	out->py_major = maj;
	out->py_minor = min;
	snprintf(out->arch, sizeof(out->arch), "%s", t->machine);
	out->os = ieq(t->libc, "musl") ? GPUENV_OS_MUSL : GPUENV_OS_LINUX;
	if (t->libc_version) {
		unsigned lm, ln;
		size_t l2;
		if (py_xy(t->libc_version, &lm, &ln, &l2)) {
			out->libc_major = lm;
			out->libc_minor = ln;
		}
	}
	return 0;
}

int gpuenv_target_marker_env(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_target_t *t,
	gpuenv_marker_env_t *out)
{
	unsigned maj, min;
	size_t len;

	if (t->python && py_xy(t->python, &maj, &min, &len)) {
		char *xy = gpuenv_arena_strndup(arena, t->python, len);
		if (!xy)
			return gpuenv_oom(ctx, "the marker environment");
		out->python_version = xy;
		/* "3.12" alone stands for its full version too */
		out->python_full_version = t->python;
		out->implementation_version = t->python;
	}
	if (t->implementation || t->python) {
		bool pypy = ieq(t->implementation, "pypy");
		out->implementation_name = pypy ? "pypy" : "cpython";
		out->platform_python_implementation = pypy ? "PyPy" : "CPython";
	}
	if (t->os && ieq(t->os, "linux")) {
		out->sys_platform = "linux";
		out->platform_system = "Linux";
		out->os_name = "posix";
	}
	if (t->machine)
		out->platform_machine = t->machine;
	if (t->kernel)
		out->platform_release = t->kernel;
	return 0;
}

static void kb_ver(const char *s, gpuenv_kb_ver_t *v)
{
	memset(v, 0, sizeof(*v));
	/* "580.159.04" of "580.159.04 -open": the version alone */
	if (!s || !gpuenv_kb_ver_parse(gpuenv_str_n(s, strcspn(s, " -")), v))
		memset(v, 0, sizeof(*v));
}

void gpuenv_target_kb_host(const gpuenv_target_t *t, gpuenv_kb_target_t *out)
{
	memset(out, 0, sizeof(*out));
	kb_ver(t->driver, &out->driver);
	out->has_driver = out->driver.n > 0;
	kb_ver(t->driver_cuda, &out->driver_cuda);
	kb_ver(t->compat_cuda, &out->compat_cuda);
}

int gpuenv_target_machine(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *f,
	const gpuenv_kb_t *kb, size_t env, gpuenv_target_t *out)
{
	int rc;

	if ((rc = gpuenv_target_from_facts(ctx, arena, f, env, out)) != 0 || !kb)
		return rc;
	return gpuenv_target_complete(ctx, arena, kb, out);
}

int gpuenv_target_complete(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	gpuenv_target_t *out)
{
	gpuenv_target_gpu_t *g;
	gpuenv_kb_ver_t dv;

	/* a GPU's compute capability by its name (a light probe without
	 * NVML has names from the PCI ids) */
	if (out->ngpus && !(g = gpuenv_arena_calloc(arena, out->ngpus, sizeof(*g))))
		return gpuenv_oom(ctx, "deriving the target");
	for (size_t i = 0; i < out->ngpus; i++) {
		gpuenv_kb_gpu_match_t m;
		g[i] = out->gpus[i];
		if (g[i].cc_major < 0 && g[i].name && gpuenv_kb_gpu_find(kb, g[i].name, &m, 1) == 1 &&
			m.gpu->cc.n >= 2) {
			g[i].cc_major = (int)m.gpu->cc.part[0];
			g[i].cc_minor = (int)m.gpu->cc.part[1];
		}
	}
	if (out->ngpus)
		out->gpus = g;
	/* the newest CUDA the driver runs, by its version, when NVML did not
	 * say: the newest GA toolkit whose driver floor it meets */
	if (!out->driver_cuda && out->driver) {
		kb_ver(out->driver, &dv);
		if (dv.n) {
			gpuenv_kb_driver_max_t mx;
			gpuenv_kb_driver_max_cuda(kb, &dv, &mx);
			if (mx.ga && mx.ga->cuda.n >= 2 &&
				!(out->driver_cuda = gpuenv_arena_printf(arena, "%u.%u", mx.ga->cuda.part[0],
					  mx.ga->cuda.part[1]).ptr))
				return gpuenv_oom(ctx, "deriving the target");
		}
	}
	/* forward compatibility is a libcuda newer than what the driver runs,
	 * the KB's answer included: the driver's own libcuda is none */
	if (out->compat_cuda && cuda_num(out->compat_cuda) <= cuda_num(out->driver_cuda))
		out->compat_cuda = NULL;
	return 0;
}

int gpuenv_target_datacenter(const gpuenv_kb_t *kb, const gpuenv_target_t *t,
	const gpuenv_kb_gpu_t **known)
{
	int dc = -1;

	*known = NULL;
	for (size_t i = 0; kb && i < t->ngpus; i++) {
		gpuenv_kb_gpu_match_t m;
		gpuenv_kb_target_t kt;
		if (!t->gpus[i].visible || !t->gpus[i].name ||
			gpuenv_kb_gpu_find(kb, t->gpus[i].name, &m, 1) != 1)
			continue;
		memset(&kt, 0, sizeof(kt));
		kt.gpu = m.gpu;
		*known = m.gpu;
		if (gpuenv_kb_target_datacenter(&kt) != 1)
			return 0;
		dc = 1;
	}
	return dc;
}

const char *gpuenv_target_platform(gpuenv_arena_t *arena, const gpuenv_target_t *t)
{
	unsigned a, b;

	if (t->libc && !strcmp(t->libc, "glibc") && t->libc_version &&
		sscanf(t->libc_version, "%u.%u", &a, &b) == 2)
		return gpuenv_arena_printf(arena, "manylinux_%u_%u_%s", a, b,
			t->machine ? t->machine : "x86_64").ptr;
	return t->machine ? gpuenv_arena_printf(arena, "linux_%s", t->machine).ptr : NULL;
}

size_t gpuenv_target_kb(const gpuenv_kb_t *kb, const gpuenv_target_t *t, gpuenv_kb_target_t *out,
	size_t max)
{
	gpuenv_kb_target_t base;
	size_t n = 0;

	gpuenv_target_kb_host(t, &base);
	for (size_t i = 0; i < t->ngpus; i++) {
		const gpuenv_target_gpu_t *g = &t->gpus[i];
		bool seen = false;
		if (!g->visible || g->cc_major < 0)
			continue;
		for (size_t k = 0; k < i; k++)
			seen |= t->gpus[k].visible && t->gpus[k].cc_major == g->cc_major &&
				t->gpus[k].cc_minor == g->cc_minor;
		if (seen)
			continue;
		if (n < max) {
			gpuenv_kb_gpu_match_t m;
			out[n] = base;
			out[n].has_cc = true;
			out[n].cc_major = (unsigned)g->cc_major;
			out[n].cc_minor = (unsigned)g->cc_minor;
			if (kb && g->name && gpuenv_kb_gpu_find(kb, g->name, &m, 1) == 1)
				out[n].gpu = m.gpu;
		}
		n++;
	}
	if (n == 0) {
		if (max)
			out[0] = base;
		n = 1;
	}
	return n;
}
