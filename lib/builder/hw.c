/* hw.c: the target's hardware in a source build: the CUDA toolkit
 * (CUDA_HOME, CUDA_PATH), the GPU architectures (TORCH_CUDA_ARCH_LIST) and
 * the parallelism (NVCC_THREADS, MAX_JOBS); the build machine's CPUs and
 * memory; a failed build's log read by diagnose.  The rules and their
 * sources: include/gpuenv/build_hw.h and docs/build.md. */
#define _GNU_SOURCE
#include "gpuenv/build_hw.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/diagnose.h"
#include "gpuenv/fs.h"
#include "gpuenv/kb.h"
#include "gpuenv/probe.h"
#include "gpuenv/toolkit.h"

/* Where gpuenv_toolkit_probe looks (include/gpuenv/toolkit.h), for the
 * message that says none was found. */
#define SEARCHED "/usr/local/cuda, /usr/local/cuda-X.Y, $CUDA_HOME, $CUDA_PATH, nvcc on $PATH, " \
	"/opt/cuda, /usr/lib/cuda"

/* ---- versions ---------------------------------------------------------- */

/* Leading digits of *s (at most 4), advancing it; -1 when none. */
static int digits(const char **s)
{
	int n = 0, k = 0;
	while (**s >= '0' && **s <= '9' && k < 4) {
		n = n * 10 + (*(*s)++ - '0');
		k++;
	}
	return k && !(**s >= '0' && **s <= '9') ? n : -1;
}

/* "13.0", "13.0.2", "12" -> major, minor (-1 when absent); false when it
 * does not start with a number or a '.' is not followed by one. */
static bool major_minor(const char *s, int *maj, int *min)
{
	if (!s || (*maj = digits(&s)) < 0)
		return false;
	*min = -1;
	if (*s == '.' && (s++, (*min = digits(&s)) < 0))
		return false;
	return true;
}

/* ---- the build machine ------------------------------------------------- */

/* A small file under ctx->root into buf (NUL-terminated); false when it
 * cannot be read. */
static bool read_small(gpuenv_ctx_t *ctx, const char *path, char *buf, size_t size)
{
	char full[PATH_MAX];
	ssize_t n;
	int fd;

	if (gpuenv_fs_resolve_in_root(ctx->root, path, full, sizeof(full)) != 0)
		return false;
	fd = gpuenv_fs_open_regular(NULL, AT_FDCWD, full, NULL);
	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* The first integer of a file ("max" reads as no limit: false). */
static bool read_ll(gpuenv_ctx_t *ctx, const char *path, long long *out)
{
	char buf[128], *end;
	if (!read_small(ctx, path, buf, sizeof(buf)))
		return false;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	if (end == buf || errno || v < 0)
		return false;
	*out = v;
	return true;
}

/* The cgroup folder of this process for controller (v1) or of the unified
 * hierarchy (controller NULL), from /proc/self/cgroup: "0::/a/b" or
 * "4:memory:/a/b" -> "/sys/fs/cgroup[/memory]/a/b". */
static bool cgroup_dir(gpuenv_ctx_t *ctx, const char *controller, char *out, size_t size)
{
	char buf[4096];
	if (!read_small(ctx, "/proc/self/cgroup", buf, sizeof(buf)))
		return false;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		size_t clen = (size_t)(c2 - c1 - 1);
		bool hit;
		if (!controller) {
			hit = clen == 0 && strncmp(line, "0:", 2) == 0;
		} else { /* "cpu,cpuacct" names several */
			hit = false;
			for (const char *p = c1 + 1; p < c2;) {
				const char *e = memchr(p, ',', (size_t)(c2 - p));
				size_t n = (size_t)((e ? e : c2) - p);
				if (n == strlen(controller) && memcmp(p, controller, n) == 0)
					hit = true;
				p += n + 1;
			}
		}
		if (!hit)
			continue;
		const char *rel = strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1;
		const char *ctl = controller ? controller : "";
		int w = snprintf(out, size, "/sys/fs/cgroup%s%s%s", controller ? "/" : "", ctl, rel);
		return w > 0 && (size_t)w < size;
	}
	return false;
}

/* A limit file of the process's cgroup, else of the hierarchy's root (a
 * container sees its own cgroup as the root of its mount). */
static bool cgroup_ll(gpuenv_ctx_t *ctx, const char *controller, const char *file, long long *out)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	if (cgroup_dir(ctx, controller, dir, sizeof(dir))) {
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		if (read_ll(ctx, path, out))
			return true;
	}
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s%s/%s", controller ? "/" : "",
		controller ? controller : "", file);
	return read_ll(ctx, path, out);
}

/* Memory the cgroup still allows, -1 when it sets no limit. */
static long long cgroup_mem_left(gpuenv_ctx_t *ctx)
{
	long long max, cur = 0;
	/* v2: memory.max ("max" when unlimited) and memory.current */
	if (cgroup_ll(ctx, NULL, "memory.max", &max)) {
		cgroup_ll(ctx, NULL, "memory.current", &cur);
		return max > cur ? max - cur : 0;
	}
	/* v1: an unlimited limit_in_bytes is a huge page-rounded LLONG_MAX */
	if (cgroup_ll(ctx, "memory", "memory.limit_in_bytes", &max) && max < (1LL << 60)) {
		cgroup_ll(ctx, "memory", "memory.usage_in_bytes", &cur);
		return max > cur ? max - cur : 0;
	}
	return -1;
}

/* CPUs the cgroup's quota allows (rounded up), -1 when unlimited. */
static long cgroup_cpus(gpuenv_ctx_t *ctx)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], buf[128];
	long long quota = -1, period = 0;

	if (cgroup_dir(ctx, NULL, dir, sizeof(dir))) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir); /* "200000 100000" or "max 100000" */
		if (read_small(ctx, path, buf, sizeof(buf)) && buf[0] >= '0' && buf[0] <= '9') {
			char *end;
			quota = strtoll(buf, &end, 10);
			period = strtoll(end, NULL, 10);
		}
	}
	/* v1: cpu.cfs_quota_us is -1 when unlimited (read_ll refuses it) */
	if (quota < 0 && cgroup_ll(ctx, "cpu", "cpu.cfs_period_us", &period) &&
		!cgroup_ll(ctx, "cpu", "cpu.cfs_quota_us", &quota))
		quota = -1;
	if (quota <= 0 || period <= 0)
		return -1;
	return (long)((quota + period - 1) / period);
}

void gpuenv_build_host_probe(gpuenv_ctx_t *ctx, gpuenv_build_host_t *out)
{
	char buf[8192];
	cpu_set_t set;

	out->cpus = -1;
	out->mem_available = -1;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		out->cpus = CPU_COUNT(&set);
	if (out->cpus <= 0)
		out->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long q = cgroup_cpus(ctx);
	if (q > 0 && (out->cpus <= 0 || q < out->cpus))
		out->cpus = q;
	if (read_small(ctx, "/proc/meminfo", buf, sizeof(buf))) {
		const char *p = strstr(buf, "MemAvailable:");
		if (p) {
			long long kb = strtoll(p + strlen("MemAvailable:"), NULL, 10);
			if (kb > 0)
				out->mem_available = kb * 1024;
		}
	}
	long long left = cgroup_mem_left(ctx);
	if (left >= 0 && (out->mem_available < 0 || left < out->mem_available))
		out->mem_available = left;
}

/* ---- the toolkit ------------------------------------------------------- */

static bool strs_has(const gpuenv_facts_strs_t *s, const char *what)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->items[i], what) == 0)
			return true;
	return false;
}

/* The toolkits, as a phrase: "CUDA 12.1 (/usr/local/cuda-12.1), ..." */
static const char *toolkit_list(gpuenv_arena_t *a, const gpuenv_facts_t *f)
{
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, a->ctx, 4096);
	for (size_t i = 0; i < f->ntoolkits && i < 6; i++) {
		const gpuenv_facts_toolkit_t *t = &f->toolkits[i];
		gpuenv_buf_printf(&b, "%s%s%s (%s)%s", i ? ", " : "", t->version.version ? "CUDA " : "",
			t->version.version ? t->version.version : "version unknown", t->path ? t->path : "?",
			t->nvcc ? "" : " without bin/nvcc");
	}
	if (f->ntoolkits > 6)
		gpuenv_buf_printf(&b, " and %zu more", f->ntoolkits - 6);
	const char *out = b.data ? gpuenv_arena_strndup(a, b.data, b.len) : NULL;
	gpuenv_buf_free(&b);
	return out;
}

/* Rank a toolkit for CUDA want_maj.want_min: -1 unusable, else higher is
 * better: the same minor first, then the newer minors; CUDA_HOME / CUDA_PATH
 * breaks ties (the user named it). */
static long toolkit_rank(const gpuenv_facts_toolkit_t *t, int want_maj, int want_min)
{
	int maj, min;
	if (!t->nvcc || !t->path || !major_minor(t->version.version, &maj, &min) || maj != want_maj)
		return -1;
	long r = (min == want_min ? 1000 : 0) + (min < 0 ? 0 : min) * 2;
	if (strs_has(&t->found_by, "CUDA_HOME") || strs_has(&t->found_by, "CUDA_PATH"))
		r += 1;
	return r;
}

/* One compute capability, as TORCH_CUDA_ARCH_LIST writes it. */
typedef struct cc {
	int major, minor;
	const char *gpu, *target; /* the first GPU that has it, for messages */
} cc_t;

static int cc_cmp(const void *a, const void *b)
{
	const cc_t *x = a, *y = b;
	return x->major != y->major ? (x->major > y->major) - (x->major < y->major)
				    : (x->minor > y->minor) - (x->minor < y->minor);
}

/* Every GPU of every target, distinct capabilities ascending.  A GPU
 * hidden by CUDA_VISIBLE_DEVICES counts too: the wheel outlives the
 * variable. */
static int collect_ccs(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_build_hw_opts_t *o, cc_t **out,
	size_t *n)
{
	size_t cap = 0;
	for (size_t i = 0; i < o->ntargets; i++)
		cap += o->targets[i].ngpus;
	cc_t *v = cap ? gpuenv_arena_calloc(a, cap, sizeof(*v)) : NULL;
	if (cap && !v)
		return gpuenv_oom(ctx, "the build's GPU architectures");
	*n = 0;
	for (size_t i = 0; i < o->ntargets; i++) {
		const gpuenv_target_t *t = &o->targets[i];
		const char *tn = t->name ? t->name : "?";
		if (!t->ngpus) {
			gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
				"%s%sa CUDA %s build for target %s, which names no GPU: TORCH_CUDA_ARCH_LIST needs "
				"the GPUs' compute capabilities", o->package ? o->package : "",
				o->package ? ": " : "", o->cuda, tn);
			return gpuenv_hint(ctx, "declare the target's GPUs (gpus = [\"H200\"] in "
				"[tool.gpuenv.targets.%s]), or sync on a machine that has them", tn);
		}
		for (size_t k = 0; k < t->ngpus; k++) {
			const gpuenv_target_gpu_t *g = &t->gpus[k];
			if (g->cc_major < 0 || g->cc_minor < 0) {
				gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
					"%s%starget %s: the compute capability of GPU %s is not known, so "
					"TORCH_CUDA_ARCH_LIST cannot be set", o->package ? o->package : "",
					o->package ? ": " : "", tn, g->name ? g->name : "?");
				return gpuenv_hint(ctx, "name the GPU as the knowledge base knows it (gpuenv kb gpu "
					"NAME) in [tool.gpuenv.targets.%s], or probe with NVML (gpuenv probe)", tn);
			}
			bool seen = false;
			for (size_t j = 0; j < *n; j++)
				seen |= v[j].major == g->cc_major && v[j].minor == g->cc_minor;
			if (!seen)
				v[(*n)++] = (cc_t){ g->cc_major, g->cc_minor, g->name, tn };
		}
	}
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cc_cmp);
	*out = v;
	return 0;
}

/* Does the toolkit's nvcc compile every capability (the KB's [[arch_list]]
 * row of its CUDA)?  0, or GPUENV_EUNSUPPORTED naming the first it does not;
 * no row: nothing to say. */
static int check_archs(gpuenv_ctx_t *ctx, const gpuenv_build_hw_opts_t *o, const gpuenv_facts_toolkit_t *t,
	const cc_t *v, size_t n)
{
	gpuenv_kb_ver_t ver;
	if (!o->kb || !gpuenv_kb_ver_parse(gpuenv_str(t->version.version), &ver))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const gpuenv_kb_cuda_arch_list_t *row;
		if (gpuenv_kb_cuda_builds_for(o->kb, &ver, (unsigned)v[i].major, (unsigned)v[i].minor, &row) != 0)
			continue;
		char range[256];
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"%s%sthe CUDA %s toolkit (%s) does not compile for compute capability %d.%d (%s of target "
			"%s): its nvcc builds %s", o->package ? o->package : "", o->package ? ": " : "",
			t->version.version, t->path, v[i].major, v[i].minor, v[i].gpu ? v[i].gpu : "a GPU", v[i].target,
			gpuenv_kb_sms_range(row->sm.v, row->sm.n, range, sizeof(range)));
		return gpuenv_hint(ctx, "build this target with a torch for a CUDA whose toolkit has sm_%d%d "
			"(gpuenv kb gpu), or leave %s out of the targets that share this build", v[i].major,
			v[i].minor, v[i].target);
	}
	return 0;
}

static int pick_toolkit(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_build_hw_opts_t *o, int maj, int min,
	const gpuenv_facts_toolkit_t **out)
{
	const gpuenv_facts_t *f = o->facts;
	const gpuenv_facts_toolkit_t *best = NULL;
	long best_rank = -1;
	const char *pkg = o->package ? o->package : "", *sep = o->package ? ": " : "";
	char want[16];

	snprintf(want, sizeof(want), "%d-%d", maj, min < 0 ? 0 : min);
	for (size_t i = 0; f && i < f->ntoolkits; i++) {
		long r = toolkit_rank(&f->toolkits[i], maj, min);
		if (r > best_rank) {
			best_rank = r;
			best = &f->toolkits[i];
		}
	}
	if (best) {
		*out = best;
		return 0;
	}
	if (!f || !f->ntoolkits) {
		const char *from = f && f->name && *f->name ? f->name : NULL;
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
			"%s%sno CUDA toolkit found (%s%s%ssearched %s); the lock's torch is built for CUDA %s",
			pkg, sep, from ? "the facts of " : "", from ? from : "", from ? ": the probe " : "",
			f && !f->have_toolkits ? "nothing: the facts were probed without toolkits" : SEARCHED,
			o->cuda);
		return gpuenv_hint(ctx, "install cuda-toolkit-%s (NVIDIA's CUDA repository) or set CUDA_HOME to "
			"a CUDA %d.x toolkit", want, maj);
	}
	const char *have = toolkit_list(a, f);
	if (!have)
		return gpuenv_oom(ctx, "the toolkit list");
	gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
		"%s%sno CUDA toolkit fits the lock's torch, built for CUDA %s (torch's cpp_extension needs a "
		"toolkit of the same major, CUDA %d.x, with nvcc); found %s", pkg, sep, o->cuda, maj, have);
	return gpuenv_hint(ctx, "install cuda-toolkit-%s (NVIDIA's CUDA repository) or set CUDA_HOME to a "
		"CUDA %d.x toolkit; or lock the torch build of the toolkit you have", want, maj);
}

/* ---- the whole answer -------------------------------------------------- */

static int add_var(gpuenv_arena_t *a, gpuenv_build_hw_t *out, const char *name, const char *value)
{
	const char *kv = value ? gpuenv_arena_printf(a, "%s=%s", name, value).ptr : NULL;
	if (!kv)
		return -ENOMEM;
	out->envp[out->nenv] = kv;
	out->env[out->nenv++] = (gpuenv_build_var_t){ name, value };
	return 0;
}

static void note(gpuenv_build_hw_t *out, const char *text)
{
	if (text && out->nnotes < GPUENV_BUILD_HW_MAX_NOTES)
		out->notes[out->nnotes++] = text;
}

/* A positive integer from the environment, 0 when unset or not one. */
static unsigned env_uint(gpuenv_ctx_t *ctx, const char *name)
{
	const char *s = gpuenv_ctx_getenv(ctx, name);
	char *end;
	if (!s || !*s)
		return 0;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	return *end || errno || v == 0 || v > 4096 || *s == '-' ? 0 : (unsigned)v;
}

/* MAX_JOBS: each job runs `threads` nvcc threads; CPUs and memory both
 * bound the jobs (flash-attn's setup.py rule, with its per-job memory
 * divided by its 4 threads). */
static void jobs(gpuenv_arena_t *a, const gpuenv_build_host_t *h, unsigned threads, gpuenv_build_hw_t *out)
{
	long long by_cpu = h->cpus > 0 ? h->cpus / threads : -1;
	long long by_mem = h->mem_available >= 0 ? h->mem_available / (GPUENV_BUILD_MEM_PER_THREAD * threads) : -1;
	long long j = by_cpu;
	if (by_mem >= 0 && (j < 0 || by_mem < j))
		j = by_mem;
	if (j < 1)
		j = 1;
	if (j > 4096)
		j = 4096;
	out->max_jobs = (unsigned)j;
	char cpus[32] = "unknown CPUs", mem[48] = "unknown memory";
	if (h->cpus > 0)
		snprintf(cpus, sizeof(cpus), "%ld CPUs", h->cpus);
	if (h->mem_available >= 0)
		snprintf(mem, sizeof(mem), "%.1f GiB available", (double)h->mem_available / (1 << 30));
	out->jobs_why = gpuenv_arena_printf(a, "%s, %s, %u nvcc thread%s per job, %.2f GiB per thread", cpus,
		mem, threads, threads == 1 ? "" : "s", (double)GPUENV_BUILD_MEM_PER_THREAD / (1 << 30)).ptr;
}

int gpuenv_build_hw(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_hw_opts_t *opts,
	gpuenv_build_hw_t *out)
{
	int maj, min, r;
	unsigned user;

	memset(out, 0, sizeof(*out));
	if (!opts->cuda) { /* CPU-only: the parallelism alone */
		jobs(arena, &opts->host, 1, out);
		if ((user = env_uint(ctx, "MAX_JOBS")) != 0)
			out->max_jobs = user;
		if (!out->jobs_why || add_var(arena, out, "MAX_JOBS", gpuenv_arena_printf(arena, "%u", out->max_jobs).ptr))
			return gpuenv_oom(ctx, "the build's variables");
		return 0;
	}
	if (!major_minor(opts->cuda, &maj, &min) || min < 0)
		return gpuenv_fail(ctx, GPUENV_EVERSION, NULL, 0, 0, "the locked CUDA '%s' is not MAJOR.MINOR",
			opts->cuda);
	out->cuda = true;

	cc_t *ccs = NULL;
	size_t nccs = 0;
	if ((r = collect_ccs(ctx, arena, opts, &ccs, &nccs)) != 0)
		return r;
	if (!nccs)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "%s%sa CUDA %s build with no target to build for",
			opts->package ? opts->package : "", opts->package ? ": " : "", opts->cuda);
	const gpuenv_facts_toolkit_t *tk = NULL;
	if ((r = pick_toolkit(ctx, arena, opts, maj, min, &tk)) != 0)
		return r;
	if ((r = check_archs(ctx, opts, tk, ccs, nccs)) != 0)
		return r;
	out->toolkit = tk;
	out->cuda_home = tk->path;
	out->cuda_version = tk->version.version;

	/* the user's own CUDA_HOME, when it is not the one chosen */
	const char *uh = gpuenv_ctx_getenv(ctx, "CUDA_HOME");
	if (!uh)
		uh = gpuenv_ctx_getenv(ctx, "CUDA_PATH");
	if (uh && *uh && strcmp(uh, tk->path) != 0 && (!tk->realpath || strcmp(uh, tk->realpath) != 0))
		note(out, gpuenv_arena_printf(arena, "CUDA_HOME=%s is not a CUDA %d.x toolkit with nvcc: building "
			"with %s (CUDA %s)", uh, maj, tk->path, tk->version.version).ptr);
	int tmaj, tmin;
	if (major_minor(tk->version.version, &tmaj, &tmin) && tmin >= 0 && tmin != min)
		note(out, gpuenv_arena_printf(arena, "the CUDA %s toolkit differs from torch's CUDA %s in the minor "
			"version only: torch's cpp_extension warns and builds", tk->version.version, opts->cuda).ptr);

	gpuenv_buf_t b;
	gpuenv_buf_init(&b, ctx, 4096);
	for (size_t i = 0; i < nccs; i++)
		gpuenv_buf_printf(&b, "%s%d.%d", i ? ";" : "", ccs[i].major, ccs[i].minor);
	out->arch_list = b.data ? gpuenv_arena_strndup(arena, b.data, b.len) : NULL;
	gpuenv_buf_free(&b);
	if (!out->arch_list)
		return gpuenv_oom(ctx, "the build's architecture list");

	out->nvcc_threads = nccs < GPUENV_BUILD_NVCC_THREADS_MAX ? (unsigned)nccs : GPUENV_BUILD_NVCC_THREADS_MAX;
	if ((user = env_uint(ctx, "NVCC_THREADS")) != 0)
		out->nvcc_threads = user;
	jobs(arena, &opts->host, out->nvcc_threads, out);
	if ((user = env_uint(ctx, "MAX_JOBS")) != 0)
		out->max_jobs = user;
	out->path_prepend = gpuenv_arena_printf(arena, "%s/bin", tk->path).ptr;
	if (!out->path_prepend || !out->jobs_why ||
		add_var(arena, out, "CUDA_HOME", tk->path) || add_var(arena, out, "CUDA_PATH", tk->path) ||
		add_var(arena, out, "TORCH_CUDA_ARCH_LIST", out->arch_list) ||
		add_var(arena, out, "NVCC_THREADS", gpuenv_arena_printf(arena, "%u", out->nvcc_threads).ptr) ||
		add_var(arena, out, "MAX_JOBS", gpuenv_arena_printf(arena, "%u", out->max_jobs).ptr))
		return gpuenv_oom(ctx, "the build's variables");
	return 0;
}

const char *gpuenv_build_hw_get(const gpuenv_build_hw_t *hw, const char *name)
{
	for (size_t i = 0; i < hw->nenv; i++)
		if (strcmp(hw->env[i].name, name) == 0)
			return hw->env[i].value;
	return NULL;
}

/* ---- this machine's toolkits as facts ---------------------------------- */

int gpuenv_build_hw_toolkits(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t **out)
{
	/* the probe's own typed facts of the toolkits, nothing converted */
	return gpuenv_probe_toolkit_facts(ctx, arena, out);
}

/* ---- a failed build's log ---------------------------------------------- */

/* The log, whole or its last GPUENV_BUILD_HW_MAX_LOG bytes. */
static int read_log(gpuenv_ctx_t *ctx, const char *path, gpuenv_buf_t *b)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return gpuenv_fail(ctx, -e, path, 0, 0, "cannot read the build log: %s", strerror(e));
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > GPUENV_BUILD_HW_MAX_LOG)
		(void)lseek(fd, st.st_size - (off_t)GPUENV_BUILD_HW_MAX_LOG, SEEK_SET);
	for (;;) {
		if (gpuenv_buf_reserve(b, 65536) != 0) {
			close(fd);
			return gpuenv_oom(ctx, "the build log");
		}
		size_t room = b->len + 65536 > GPUENV_BUILD_HW_MAX_LOG ? GPUENV_BUILD_HW_MAX_LOG - b->len : 65536;
		ssize_t n = room ? read(fd, b->data + b->len, room) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			return gpuenv_fail(ctx, -e, path, 0, 0, "cannot read the build log: %s", strerror(e));
		}
		if (n == 0)
			break;
		b->len += (size_t)n;
		b->data[b->len] = '\0';
	}
	close(fd);
	return 0;
}

int gpuenv_build_hw_explain(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const struct gpuenv_kb *kb,
	const char *log_path, const struct gpuenv_diag_facts *facts, const char **out)
{
	gpuenv_buf_t log, text;
	gpuenv_diag_t *d = NULL;
	gpuenv_diag_result_t res;
	int r;

	*out = NULL;
	gpuenv_buf_init(&log, ctx, GPUENV_BUILD_HW_MAX_LOG + 65536);
	gpuenv_buf_init(&text, ctx, 64 * 1024);
	if ((r = read_log(ctx, log_path, &log)) != 0 || (r = gpuenv_diag_new(ctx, kb, &d)) != 0)
		goto done;
	if ((r = gpuenv_diag_scan(d, log.data ? log.data : "", log.len, facts, arena, &res)) != 0) {
		r = gpuenv_oom(ctx, "diagnose's findings");
		goto done;
	}
	bool bad = false;
	for (size_t i = 0; i < res.n && i < GPUENV_BUILD_HW_MAX_FINDINGS; i++)
		bad |= gpuenv_buf_printf(&text, "cause: %s\nfix: %s\n", res.hits[i].cause, res.hits[i].fix) != 0;
	if (res.n && (bad || !text.data || !(*out = gpuenv_arena_strndup(arena, text.data, text.len))))
		r = gpuenv_oom(ctx, "diagnose's findings");
done:
	gpuenv_diag_free(d);
	gpuenv_buf_free(&log);
	gpuenv_buf_free(&text);
	return r;
}
