/* Allocation failures on demand, for the test build (sanitizer builds
 * define GPUENV_ALLOC_INJECT): GPUENV_TEST_ALLOC_FAIL=N makes the
 * context's Nth allocation and every later one fail, as pkgconf's
 * alloc-inject and curl's torture mode do, so a test can run a verb with
 * memory running out at every point and check that it either finishes or
 * says "out of memory", writes nothing and does not crash
 * (tests/cli/test_alloc_sweep.py).  GPUENV_TEST_ALLOC_COUNT=FILE writes how
 * many allocations the run made there (the sweep's range). */
#include "alloc_inject.h"

#ifdef GPUENV_ALLOC_INJECT
#include <stdio.h>
#include <stdlib.h>

struct inject {
	unsigned long long n, fail_at;
	const char *count_file;
};

static struct inject inject_state; /* one per process: the test build's hook, nothing else */

static bool inject_fails(struct inject *s)
{
	return ++s->n >= s->fail_at && s->fail_at;
}

static void *inject_alloc(void *ud, size_t size)
{
	return inject_fails(ud) ? NULL : malloc(size);
}

static void *inject_realloc(void *ud, void *p, size_t size)
{
	return inject_fails(ud) ? NULL : realloc(p, size);
}

static void inject_free(void *ud, void *p)
{
	(void)ud;
	free(p);
}

static void inject_report(void)
{
	FILE *f = fopen(inject_state.count_file, "w");
	if (f) {
		fprintf(f, "%llu\n", inject_state.n);
		fclose(f);
	}
}

void cli_alloc_inject(struct cli *cli)
{
	const char *at = getenv("GPUENV_TEST_ALLOC_FAIL"), *count = getenv("GPUENV_TEST_ALLOC_COUNT");

	if (!at && !count)
		return;
	inject_state.fail_at = at ? strtoull(at, NULL, 10) : 0;
	inject_state.count_file = count;
	cli->ctx.mem = (gpuenv_allocator_t){ .alloc = inject_alloc, .realloc = inject_realloc, .free = inject_free,
		.ud = &inject_state };
	if (count)
		atexit(inject_report);
}
#else
void cli_alloc_inject(struct cli *cli)
{
	(void)cli;
}
#endif
