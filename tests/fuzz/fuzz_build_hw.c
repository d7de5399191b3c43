/* Fuzz target: lib/builder/hw.c over any bytes: the first line the locked
 * CUDA ("13.0"; empty: a CPU-only build), the rest a facts document whose
 * toolkits and GPUs decide the build (the facts decoder first), for the
 * facts' own target and a fixed A10 one sharing the build.  Besides the
 * sanitizers, invariants abort() on violation:
 *   - a failure leaves its code and message in ctx->err;
 *   - a CPU-only build gets MAX_JOBS alone;
 *   - a CUDA build gets CUDA_HOME = CUDA_PATH = a facts toolkit's path that
 *     has nvcc and a version of the locked CUDA's major, an arch list of
 *     ascending "X.Y" entries that has the A10's 8.6, PATH's prefix
 *     <CUDA_HOME>/bin, and 1 <= NVCC_THREADS <= 4 and MAX_JOBS >= 1;
 *   - envp[i] is "env[i].name=env[i].value".
 * Then the same with an allocation failing (fuzz_alloc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/build_hw.h"
#include "gpuenv/kb.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb;

static const gpuenv_target_gpu_t a10 = { "NVIDIA A10", 8, 6, -1, true };

/* the locked CUDA (line 1, NUL-terminated in buf; NULL when empty) and the facts text */
static const char *split(const uint8_t *data, size_t size, char *buf, size_t bufsz, const char **facts, size_t *n)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t l = nl ? (size_t)(nl - data) : size;
	if (l >= bufsz)
		l = bufsz - 1;
	memcpy(buf, data, l);
	buf[l] = '\0';
	*facts = nl ? (const char *)nl + 1 : "";
	*n = nl ? size - (size_t)(nl - data) - 1 : 0;
	return l && !memchr(buf, '\0', l) ? buf : NULL;
}

static int decide(gpuenv_ctx_t *c, gpuenv_arena_t *a, const char *cuda, const char *text, size_t n,
	gpuenv_build_hw_t *hw, const gpuenv_facts_t **fout)
{
	const gpuenv_facts_t *f = NULL;
	gpuenv_target_t ts[2];
	int r;

	if ((r = gpuenv_facts_parse(c, a, text, n, "facts.json", &f)) != 0)
		return r;
	if ((r = gpuenv_target_from_facts(c, a, f, SIZE_MAX, &ts[0])) != 0)
		return r;
	memset(&ts[1], 0, sizeof(ts[1]));
	ts[1].name = "a10";
	ts[1].gpus = &a10;
	ts[1].ngpus = 1;
	gpuenv_build_hw_opts_t o = { .facts = f, .targets = ts, .ntargets = 2, .cuda = cuda,
		.host = { 16, (long long)(text[0] & 0x3f) << 30 }, .kb = kb, .package = "pkg" };
	*fout = f;
	return gpuenv_build_hw(c, a, &o, hw);
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *c, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_build_hw_t hw;
	const gpuenv_facts_t *f;
	const char *text;
	size_t n;
	char buf[64];
	const char *cuda = split(data, size, buf, sizeof(buf), &text, &n);

	if (!n)
		return;
	gpuenv_arena_init(&a, c, 0);
	OOM_CALL(o, c, decide(c, &a, cuda, text, n, &hw, &f));
	gpuenv_arena_free(&a);
}

static void check_arch_list(const char *s)
{
	int pmaj = -1, pmin = -1;
	bool a10_seen = false;
	while (*s) {
		int maj, min, k = 0;
		CHECK(sscanf(s, "%d.%d%n", &maj, &min, &k) == 2 && k > 0);
		CHECK(maj > pmaj || (maj == pmaj && min > pmin));
		a10_seen |= maj == 8 && min == 6;
		pmaj = maj;
		pmin = min;
		s += k;
		CHECK(*s == ';' || *s == '\0');
		if (*s)
			s++;
	}
	CHECK(pmaj >= 0 && a10_seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_build_hw_t hw;
	const gpuenv_facts_t *f = NULL;
	const char *text;
	size_t n;
	char buf[64];

	if (!kb) {
		gpuenv_ctx_init(&ctx);
		if (gpuenv_kb_load(&ctx, NULL, &kb) != 0)
			abort();
	}
	const char *cuda = split(data, size, buf, sizeof(buf), &text, &n);
	if (!n)
		return 0;
	gpuenv_arena_init(&a, &ctx, 0);
	int r = decide(&ctx, &a, cuda, text, n, &hw, &f);
	if (r) {
		CHECK(ctx.err.code == r && ctx.err.msg[0]);
	} else {
		CHECK(hw.nenv >= 1 && hw.nenv <= GPUENV_BUILD_HW_MAX_VARS && hw.max_jobs >= 1);
		for (size_t i = 0; i < hw.nenv; i++) {
			size_t l = strlen(hw.env[i].name);
			CHECK(!strncmp(hw.envp[i], hw.env[i].name, l) && hw.envp[i][l] == '=' &&
				!strcmp(hw.envp[i] + l + 1, hw.env[i].value));
		}
		if (!cuda) {
			CHECK(!hw.cuda && hw.nenv == 1 && !strcmp(hw.env[0].name, "MAX_JOBS"));
		} else {
			int maj = atoi(cuda), tmaj = -1;
			CHECK(hw.cuda && hw.nenv == 5 && hw.toolkit && hw.toolkit->nvcc);
			CHECK(hw.toolkit >= f->toolkits && hw.toolkit < f->toolkits + f->ntoolkits);
			CHECK(sscanf(hw.cuda_version, "%d", &tmaj) == 1 && tmaj == maj);
			CHECK(!strcmp(gpuenv_build_hw_get(&hw, "CUDA_HOME"), hw.toolkit->path));
			CHECK(!strcmp(gpuenv_build_hw_get(&hw, "CUDA_PATH"), hw.toolkit->path));
			CHECK(!strncmp(hw.path_prepend, hw.toolkit->path, strlen(hw.toolkit->path)));
			CHECK(hw.nvcc_threads >= 1 && hw.nvcc_threads <= GPUENV_BUILD_NVCC_THREADS_MAX);
			check_arch_list(gpuenv_build_hw_get(&hw, "TORCH_CUDA_ARCH_LIST"));
		}
	}
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
