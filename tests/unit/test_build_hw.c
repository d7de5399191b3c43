/* Unit tests for lib/builder/hw.c: the toolkit, TORCH_CUDA_ARCH_LIST,
 * NVCC_THREADS and MAX_JOBS of a source build, from facts fixtures (the
 * H200 snapshot, facts without a toolkit, a CUDA 12.x toolkit against a
 * CUDA 13.0 lock), several targets sharing one build, the build host's
 * CPUs and memory (cgroup v1 and v2 under a fake root), every allocation
 * failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/build_hw.h"
#include "gpuenv/facts.h"
#include "gpuenv/fs.h"
#include "gpuenv/kb.h"
#include "testutil.h"

#define GiB (1LL << 30)

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb;
static gpuenv_arena_t arena;

/* the fake environment: NAME=VALUE pairs */
static const char *env_vars[8];

static const char *fake_getenv(void *ud, const char *name)
{
	(void)ud;
	size_t n = strlen(name);
	for (size_t i = 0; i < 8 && env_vars[i]; i++)
		if (strncmp(env_vars[i], name, n) == 0 && env_vars[i][n] == '=')
			return env_vars[i] + n + 1;
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	ctx.getenv = fake_getenv;
	gpuenv_arena_init(&arena, &ctx, 0);
	return gpuenv_kb_load(&ctx, NULL, &kb);
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&arena);
	return 0;
}

static const gpuenv_facts_t *facts_file(const char *dir)
{
	const gpuenv_facts_t *f = NULL;
	size_t len;
	char *text = testutil_read_source(&len, "tests/fixtures/doctor/%s/facts.json", dir);
	assert_int_equal(gpuenv_facts_parse(&ctx, &arena, text, len, dir, &f), 0);
	free(text);
	return f;
}

/* facts with the toolkits given as JSON objects */
static const gpuenv_facts_t *facts_toolkits(const char *toolkits_json)
{
	const gpuenv_facts_t *f = NULL;
	char text[4096];
	snprintf(text, sizeof(text), "{\"schema\": \"gpuenv.facts/1\", \"toolkits\": [%s]}", toolkits_json);
	int rc = gpuenv_facts_parse(&ctx, &arena, text, strlen(text), "tk.json", &f);
	if (rc)
		fail_msg("facts: %s", ctx.err.msg);
	return f;
}

#define TK(path, ver, found) \
	"{\"path\": \"" path "\", \"realpath\": \"" path "\", \"found_by\": [" found "], " \
	"\"version\": {\"version\": \"" ver "\", \"source\": \"version.json\", \"from\": \"" path \
	"/version.json\"}, \"nvcc\": \"" path "/bin/nvcc\"}"
#define TK_NO_NVCC(path, ver) \
	"{\"path\": \"" path "\", \"version\": {\"version\": \"" ver "\"}, \"nvcc\": null}"

static const gpuenv_target_gpu_t H200 = { "NVIDIA H200", 9, 0, -1, true };
static const gpuenv_target_gpu_t A100 = { "NVIDIA A100-SXM4-80GB", 8, 0, -1, true };
static const gpuenv_target_gpu_t A10 = { "NVIDIA A10", 8, 6, -1, true };
static const gpuenv_target_gpu_t V100 = { "Tesla V100-SXM2-16GB", 7, 0, -1, true };
static const gpuenv_target_gpu_t B200 = { "NVIDIA B200", 10, 0, -1, true };

static gpuenv_target_t target(const char *name, const gpuenv_target_gpu_t *g, size_t n)
{
	gpuenv_target_t t;
	memset(&t, 0, sizeof(t));
	t.name = name;
	t.origin = "declared";
	t.gpus = g;
	t.ngpus = n;
	return t;
}

static gpuenv_build_hw_opts_t opts(const gpuenv_facts_t *f, const gpuenv_target_t *t, size_t n, const char *cuda)
{
	gpuenv_build_hw_opts_t o;
	memset(&o, 0, sizeof(o));
	o.facts = f;
	o.targets = t;
	o.ntargets = n;
	o.cuda = cuda;
	o.host.cpus = 16;
	o.host.mem_available = 64 * GiB;
	o.kb = kb;
	o.package = "flash-attn";
	return o;
}

static gpuenv_build_hw_t decide_ok(const gpuenv_build_hw_opts_t *o)
{
	gpuenv_build_hw_t hw;
	int rc = gpuenv_build_hw(&ctx, &arena, o, &hw);
	if (rc)
		fail_msg("gpuenv_build_hw: %d %s (%s)", rc, ctx.err.msg, ctx.err.hint);
	return hw;
}

static int decide_err(const gpuenv_build_hw_opts_t *o)
{
	gpuenv_build_hw_t hw;
	gpuenv_error_clear(&ctx);
	int rc = gpuenv_build_hw(&ctx, &arena, o, &hw);
	assert_int_not_equal(rc, 0);
	assert_int_equal(ctx.err.code, rc);
	assert_true(ctx.err.msg[0] != '\0');
	assert_true(ctx.err.hint[0] != '\0');
	return rc;
}

/* The real H200 snapshot: its CUDA 13.0 toolkit at /usr/local/cuda, its
 * one GPU, 9.0. */
static void test_h200_snapshot(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_file("h200-2026-11-29");
	gpuenv_target_t t;
	assert_int_equal(gpuenv_target_from_facts(&ctx, &arena, f, SIZE_MAX, &t), 0);
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, "13.0");
	gpuenv_build_hw_t hw = decide_ok(&o);
	assert_true(hw.cuda);
	assert_string_equal(hw.cuda_home, "/usr/local/cuda");
	assert_string_equal(gpuenv_build_hw_get(&hw, "CUDA_HOME"), "/usr/local/cuda");
	assert_string_equal(gpuenv_build_hw_get(&hw, "CUDA_PATH"), "/usr/local/cuda");
	assert_string_equal(gpuenv_build_hw_get(&hw, "TORCH_CUDA_ARCH_LIST"), "9.0");
	assert_string_equal(gpuenv_build_hw_get(&hw, "NVCC_THREADS"), "1");
	/* 16 CPUs, 64 GiB / 2.25 GiB = 28: the CPUs bound it */
	assert_string_equal(gpuenv_build_hw_get(&hw, "MAX_JOBS"), "16");
	assert_string_equal(hw.path_prepend, "/usr/local/cuda/bin");
	assert_string_equal(hw.envp[0], "CUDA_HOME=/usr/local/cuda");
	assert_string_equal(hw.envp[2], "TORCH_CUDA_ARCH_LIST=9.0");
	assert_string_equal(hw.envp[4], "MAX_JOBS=16");
	assert_int_equal(hw.nenv, 5);
	assert_int_equal(hw.nnotes, 0);
	assert_non_null(strstr(hw.jobs_why, "16 CPUs"));
}

/* No toolkit at all (the healthy fixture has none): the places searched,
 * the CUDA wanted and what to install. */
static void test_no_toolkit(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_file("healthy");
	gpuenv_target_t t = target("h200", &H200, 1);
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, "13.0");
	assert_int_equal(decide_err(&o), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.msg, "flash-attn: no CUDA toolkit found"));
	assert_non_null(strstr(ctx.err.msg, "/usr/local/cuda"));
	assert_non_null(strstr(ctx.err.msg, "$CUDA_HOME"));
	assert_non_null(strstr(ctx.err.msg, "built for CUDA 13.0"));
	assert_non_null(strstr(ctx.err.hint, "cuda-toolkit-13-0"));
	assert_non_null(strstr(ctx.err.hint, "CUDA_HOME"));
	/* no facts at all reads the same */
	o.facts = NULL;
	assert_int_equal(decide_err(&o), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.msg, "no CUDA toolkit found"));
}

/* A CUDA 12.1 toolkit against a CUDA 13.0 lock: both versions named. */
static void test_wrong_major(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_toolkits(TK("/usr/local/cuda-12.1", "12.1.105", "\"usr-local\""));
	gpuenv_target_t t = target("h200", &H200, 1);
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, "13.0");
	assert_int_equal(decide_err(&o), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "CUDA 13.0"));
	assert_non_null(strstr(ctx.err.msg, "CUDA 12.1.105 (/usr/local/cuda-12.1)"));
	assert_non_null(strstr(ctx.err.hint, "cuda-toolkit-13-0"));
	/* the other way round: a 13.0 toolkit and a cu128 lock */
	f = facts_toolkits(TK("/usr/local/cuda-13.0", "13.0", "\"usr-local\""));
	o = opts(f, &t, 1, "12.8");
	assert_int_equal(decide_err(&o), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "CUDA 12.8"));
	assert_non_null(strstr(ctx.err.msg, "CUDA 13.0 (/usr/local/cuda-13.0)"));
	assert_non_null(strstr(ctx.err.hint, "cuda-toolkit-12-8"));
	/* a toolkit of the right version without nvcc does not fit either */
	f = facts_toolkits(TK_NO_NVCC("/opt/cuda", "13.0.2"));
	o = opts(f, &t, 1, "13.0");
	assert_int_equal(decide_err(&o), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "/opt/cuda) without bin/nvcc"));
}

/* Which of several toolkits: the same major.minor, else the newest of the
 * major; CUDA_HOME breaks a tie; one of another major never. */
static void test_pick(void **state)
{
	(void)state;
	gpuenv_target_t t = target("h200", &H200, 1);
	const gpuenv_facts_t *f = facts_toolkits(
		TK("/usr/local/cuda", "13.1.0", "\"usr-local\"") ","
		TK("/usr/local/cuda-13.0", "13.0.2", "\"usr-local\"") ","
		TK("/usr/local/cuda-12.9", "12.9.1", "\"usr-local\"") ","
		TK("/usr/local/cuda-12.4", "12.4.1", "\"usr-local\""));
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, "13.0");
	gpuenv_build_hw_t hw = decide_ok(&o);
	assert_string_equal(hw.cuda_home, "/usr/local/cuda-13.0");
	assert_string_equal(hw.cuda_version, "13.0.2");
	assert_int_equal(hw.nnotes, 0);
	o.cuda = "13.1";
	hw = decide_ok(&o);
	assert_string_equal(hw.cuda_home, "/usr/local/cuda");
	/* torch 12.8: no 12.8 toolkit, the newest 12.x, and a note on the minor */
	o.cuda = "12.8";
	hw = decide_ok(&o);
	assert_string_equal(hw.cuda_home, "/usr/local/cuda-12.9");
	assert_int_equal(hw.nnotes, 1);
	assert_non_null(strstr(hw.notes[0], "12.9.1"));
	assert_non_null(strstr(hw.notes[0], "minor"));

	/* two 13.0 toolkits: the one $CUDA_HOME named */
	f = facts_toolkits(TK("/usr/local/cuda-13.0", "13.0.2", "\"usr-local\"") ","
		TK("/opt/nvidia/cuda-13.0", "13.0.2", "\"CUDA_HOME\""));
	o = opts(f, &t, 1, "13.0");
	hw = decide_ok(&o);
	assert_string_equal(hw.cuda_home, "/opt/nvidia/cuda-13.0");

	/* a $CUDA_HOME that does not fit is overridden, and said so */
	env_vars[0] = "CUDA_HOME=/usr/local/cuda-12.1";
	f = facts_toolkits(TK("/usr/local/cuda-12.1", "12.1.105", "\"CUDA_HOME\"") ","
		TK("/usr/local/cuda-13.0", "13.0.2", "\"usr-local\""));
	o = opts(f, &t, 1, "13.0");
	hw = decide_ok(&o);
	env_vars[0] = NULL;
	assert_string_equal(hw.cuda_home, "/usr/local/cuda-13.0");
	assert_int_equal(hw.nnotes, 1);
	assert_non_null(strstr(hw.notes[0], "CUDA_HOME=/usr/local/cuda-12.1"));
}

/* Several targets sharing one build: every capability once, ascending. */
static void test_shared_build(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_toolkits(TK("/usr/local/cuda", "13.0.2", "\"usr-local\""));
	gpuenv_target_gpu_t mixed[] = { A10, A100, A10 };
	gpuenv_target_t ts[] = { target("a10-box", mixed, 3), target("a100", &A100, 1) };
	gpuenv_build_hw_opts_t o = opts(f, ts, 2, "13.0");
	gpuenv_build_hw_t hw = decide_ok(&o);
	assert_string_equal(hw.arch_list, "8.0;8.6");
	assert_string_equal(gpuenv_build_hw_get(&hw, "TORCH_CUDA_ARCH_LIST"), "8.0;8.6");
	assert_string_equal(gpuenv_build_hw_get(&hw, "NVCC_THREADS"), "2");
	/* 16 CPUs / 2 threads = 8; 64 GiB / 4.5 GiB = 14 */
	assert_string_equal(gpuenv_build_hw_get(&hw, "MAX_JOBS"), "8");

	/* major 10 sorts after 9: numbers, not text */
	gpuenv_target_t ts2[] = { target("b200", &B200, 1), target("h200", &H200, 1), target("a100", &A100, 1) };
	o = opts(f, ts2, 3, "13.0");
	hw = decide_ok(&o);
	assert_string_equal(hw.arch_list, "8.0;9.0;10.0");
	assert_int_equal(hw.nvcc_threads, 3);
}

/* The memory bounds the jobs before the CPUs do. */
static void test_jobs(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_toolkits(TK("/usr/local/cuda", "13.0.2", "\"usr-local\""));
	gpuenv_target_t t = target("h200", &H200, 1);
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, "13.0");
	o.host.cpus = 64;
	o.host.mem_available = 8 * GiB; /* 8 / 2.25 = 3.6 */
	gpuenv_build_hw_t hw = decide_ok(&o);
	assert_int_equal(hw.max_jobs, 3);
	assert_non_null(strstr(hw.jobs_why, "64 CPUs, 8.0 GiB available"));
	o.host.mem_available = GiB; /* less than one job's worth: still one */
	assert_int_equal(decide_ok(&o).max_jobs, 1);
	o.host.cpus = -1; /* nothing known: one */
	o.host.mem_available = -1;
	hw = decide_ok(&o);
	assert_int_equal(hw.max_jobs, 1);
	assert_non_null(strstr(hw.jobs_why, "unknown CPUs, unknown memory"));
	o.host.cpus = 12; /* memory unknown: the CPUs */
	assert_int_equal(decide_ok(&o).max_jobs, 12);
	/* two architectures: 2 threads a job, 9 GiB / 4.5 GiB = 2 jobs */
	gpuenv_target_gpu_t two[] = { A100, A10 };
	gpuenv_target_t t2 = target("mixed", two, 2);
	o = opts(f, &t2, 1, "13.0");
	o.host.mem_available = 9 * GiB;
	assert_int_equal(decide_ok(&o).max_jobs, 2);
	/* the user's MAX_JOBS and NVCC_THREADS are kept; garbage is not */
	env_vars[0] = "MAX_JOBS=5";
	env_vars[1] = "NVCC_THREADS=8";
	hw = decide_ok(&o);
	assert_string_equal(gpuenv_build_hw_get(&hw, "MAX_JOBS"), "5");
	assert_string_equal(gpuenv_build_hw_get(&hw, "NVCC_THREADS"), "8");
	env_vars[0] = "MAX_JOBS=-3";
	env_vars[1] = "NVCC_THREADS=lots";
	hw = decide_ok(&o);
	assert_string_equal(gpuenv_build_hw_get(&hw, "MAX_JOBS"), "2");
	assert_string_equal(gpuenv_build_hw_get(&hw, "NVCC_THREADS"), "2");
	env_vars[0] = env_vars[1] = NULL;
}

/* A CPU-only build: MAX_JOBS and nothing of CUDA, whatever the toolkits. */
static void test_cpu_only(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_file("h200-2026-11-29");
	gpuenv_target_t t = target("cpu", NULL, 0);
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, NULL);
	o.host.mem_available = 4 * GiB;
	gpuenv_build_hw_t hw = decide_ok(&o);
	assert_false(hw.cuda);
	assert_int_equal(hw.nenv, 1);
	assert_string_equal(hw.env[0].name, "MAX_JOBS");
	assert_string_equal(hw.env[0].value, "1");
	assert_null(gpuenv_build_hw_get(&hw, "CUDA_HOME"));
	assert_null(gpuenv_build_hw_get(&hw, "TORCH_CUDA_ARCH_LIST"));
	assert_null(hw.path_prepend);
	assert_string_equal(hw.envp[0], "MAX_JOBS=1");
}

/* What TORCH_CUDA_ARCH_LIST cannot be made from, and an nvcc that cannot
 * compile the GPU (the KB's [[arch_list]]: CUDA 13 dropped Volta). */
static void test_archs(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_toolkits(TK("/usr/local/cuda", "13.0.2", "\"usr-local\""));
	gpuenv_target_t t = target("v100", &V100, 1);
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, "13.0");
	assert_int_equal(decide_err(&o), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "compute capability 7.0"));
	assert_non_null(strstr(ctx.err.msg, "sm_75"));
	assert_non_null(strstr(ctx.err.msg, "target v100"));
	o.kb = NULL; /* without the KB nothing is said */
	assert_string_equal(decide_ok(&o).arch_list, "7.0");

	gpuenv_target_t none = target("cloud", NULL, 0);
	o = opts(f, &none, 1, "13.0");
	assert_int_equal(decide_err(&o), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.msg, "target cloud, which names no GPU"));
	assert_non_null(strstr(ctx.err.hint, "[tool.gpuenv.targets.cloud]"));

	gpuenv_target_gpu_t unknown = { "Mystery GPU", -1, -1, -1, true };
	gpuenv_target_t u = target("odd", &unknown, 1);
	o = opts(f, &u, 1, "13.0");
	assert_int_equal(decide_err(&o), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.msg, "Mystery GPU"));

	o = opts(f, &t, 1, "thirteen");
	gpuenv_build_hw_t hw;
	assert_int_equal(gpuenv_build_hw(&ctx, &arena, &o, &hw), GPUENV_EVERSION);
	o.cuda = "13";
	assert_int_equal(gpuenv_build_hw(&ctx, &arena, &o, &hw), GPUENV_EVERSION);
}

/* ---- the build host under a fake root ------------------------------------ */

static void put(const char *root, const char *rel, const char *text)
{
	char path[4096], dir[4096];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(gpuenv_fs_mkdirs(&ctx, dir, 0755), 0);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_host(void **state)
{
	(void)state;
	char root[] = "/tmp/buildhw-root-XXXXXX";
	assert_non_null(mkdtemp(root));
	gpuenv_build_host_t h;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	ctx.root = root;
	/* nothing under the root: CPUs from the affinity mask, memory unknown */
	gpuenv_build_host_probe(&ctx, &h);
	assert_true(h.cpus >= 1 && h.cpus <= online);
	assert_int_equal(h.mem_available, -1);

	put(root, "/proc/meminfo", "MemTotal:       65536000 kB\nMemFree:  1000 kB\nMemAvailable:   33554432 kB\n");
	gpuenv_build_host_probe(&ctx, &h);
	assert_int_equal(h.mem_available, 32 * GiB);

	/* cgroup v2: 4 GiB allowed, 1 GiB used; a quota of 1.5 CPUs is 2 */
	put(root, "/proc/self/cgroup", "0::/build.slice\n");
	put(root, "/sys/fs/cgroup/build.slice/memory.max", "4294967296\n");
	put(root, "/sys/fs/cgroup/build.slice/memory.current", "1073741824\n");
	put(root, "/sys/fs/cgroup/build.slice/cpu.max", "150000 100000\n");
	gpuenv_build_host_probe(&ctx, &h);
	assert_int_equal(h.mem_available, 3 * GiB);
	assert_true(h.cpus >= 1 && h.cpus <= 2);
	/* "max": no limit */
	put(root, "/sys/fs/cgroup/build.slice/memory.max", "max\n");
	put(root, "/sys/fs/cgroup/build.slice/cpu.max", "max 100000\n");
	gpuenv_build_host_probe(&ctx, &h);
	assert_int_equal(h.mem_available, 32 * GiB);
	assert_true(h.cpus >= 1 && h.cpus <= online);

	/* cgroup v1, this machine's layout: memory and cpu,cpuacct controllers */
	put(root, "/proc/self/cgroup", "4:memory:/job/7\n2:cpu,cpuacct:/job/7\n0::/\n");
	put(root, "/sys/fs/cgroup/memory/job/7/memory.limit_in_bytes", "2147483648\n");
	put(root, "/sys/fs/cgroup/memory/job/7/memory.usage_in_bytes", "536870912\n");
	put(root, "/sys/fs/cgroup/cpu/job/7/cpu.cfs_quota_us", "100000\n");
	put(root, "/sys/fs/cgroup/cpu/job/7/cpu.cfs_period_us", "100000\n");
	gpuenv_build_host_probe(&ctx, &h);
	assert_int_equal(h.mem_available, GiB + GiB / 2);
	assert_int_equal(h.cpus, 1);
	/* v1's "unlimited" is a page-rounded LLONG_MAX, -1 for the quota */
	put(root, "/sys/fs/cgroup/memory/job/7/memory.limit_in_bytes", "9223372036854771712\n");
	put(root, "/sys/fs/cgroup/cpu/job/7/cpu.cfs_quota_us", "-1\n");
	gpuenv_build_host_probe(&ctx, &h);
	assert_int_equal(h.mem_available, 32 * GiB);
	assert_true(h.cpus >= 1 && h.cpus <= online);

	/* this machine's toolkits under the root, as facts */
	put(root, "/usr/local/cuda-12.4/bin/nvcc", "#!/bin/sh\n");
	put(root, "/usr/local/cuda-12.4/version.json", "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"12.4.1\"}}\n");
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/usr/local/cuda-12.4/bin/nvcc", root);
	assert_int_equal(chmod(bin, 0755), 0);
	const gpuenv_facts_t *f = NULL;
	assert_int_equal(gpuenv_build_hw_toolkits(&ctx, &arena, &f), 0);
	assert_true(f->have_toolkits);
	assert_int_equal(f->ntoolkits, 1);
	assert_string_equal(f->toolkits[0].path, "/usr/local/cuda-12.4");
	assert_string_equal(f->toolkits[0].version.version, "12.4.1");
	gpuenv_target_t t = target("a100", &A100, 1);
	gpuenv_build_hw_opts_t o = opts(f, &t, 1, "12.4");
	assert_string_equal(decide_ok(&o).cuda_home, "/usr/local/cuda-12.4");
	ctx.root = NULL;

	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* A failed build's log through diagnose: its cause and fix; nothing for a
 * log it does not know; an error for one that cannot be read. */
static void test_explain(void **state)
{
	(void)state;
	char path[] = "/tmp/buildhw-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *log = "running build_ext\nTraceback (most recent call last):\n"
		"    raise OSError('CUDA_HOME environment variable is not set. '\n"
		"OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n";
	assert_int_equal(write(fd, log, strlen(log)), (ssize_t)strlen(log));
	close(fd);
	const char *text = NULL;
	assert_int_equal(gpuenv_build_hw_explain(&ctx, &arena, kb, path, NULL, &text), 0);
	assert_non_null(text);
	assert_true(strncmp(text, "cause: ", 7) == 0);
	assert_non_null(strstr(text, "\nfix: "));
	assert_non_null(strstr(text, "CUDA_HOME"));

	FILE *fp = fopen(path, "w");
	fputs("copying foo.py\nerror: something nobody knows\n", fp);
	fclose(fp);
	assert_int_equal(gpuenv_build_hw_explain(&ctx, &arena, kb, path, NULL, &text), 0);
	assert_null(text);
	unlink(path);
	assert_int_equal(gpuenv_build_hw_explain(&ctx, &arena, kb, path, NULL, &text), -ENOENT);
	assert_non_null(strstr(ctx.err.msg, "cannot read the build log"));
}

/* Every allocation failure of gpuenv_build_hw is "out of memory", never a
 * crash or a half-made answer. */
static void test_alloc_failures(void **state)
{
	(void)state;
	const gpuenv_facts_t *f = facts_toolkits(TK("/usr/local/cuda-12.1", "12.1.105", "\"usr-local\"") ","
		TK("/usr/local/cuda", "13.0.2", "\"usr-local\""));
	gpuenv_target_gpu_t two[] = { A100, A10 };
	gpuenv_target_t t = target("mixed", two, 2);
	testutil_alloc_t ta;
	gpuenv_ctx_t c;
	gpuenv_ctx_init(&c);
	c.mem = testutil_allocator(&ta);
	const char *cudas[] = { "13.0", "12.8", NULL };
	for (size_t k = 0; k < 3; k++) {
		gpuenv_build_hw_opts_t o = opts(f, &t, 1, cudas[k]);
		long need = 0;
		for (long i = 0;; i++) {
			gpuenv_arena_t a;
			gpuenv_build_hw_t hw;
			testutil_alloc_reset(&ta, i, false);
			gpuenv_arena_init(&a, &c, 0);
			int rc = gpuenv_build_hw(&c, &a, &o, &hw);
			gpuenv_arena_free(&a);
			if (ta.failures == 0) {
				need = i;
				break;
			}
			assert_int_equal(rc, -ENOMEM);
			assert_non_null(strstr(c.err.msg, "out of memory"));
		}
		assert_true(need > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h200_snapshot),
		cmocka_unit_test(test_no_toolkit),
		cmocka_unit_test(test_wrong_major),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_shared_build),
		cmocka_unit_test(test_jobs),
		cmocka_unit_test(test_cpu_only),
		cmocka_unit_test(test_archs),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
