/* Test doubles shared by the unit tests (and the fuzz targets). */
#ifndef GPUENV_TESTUTIL_H
#define GPUENV_TESTUTIL_H

#include <limits.h>
#include <stdbool.h>

#include "gpuenv/core.h"

/* A failing allocator (pkgconf's alloc-inject, curl's torture mode): counts
 * the allocations (alloc and realloc calls) and fails the one numbered
 * fail_at (0 = the first), and every later one unless only_one is set.
 * TESTUTIL_NEVER: none fails, the count says how many a run takes. */
#define TESTUTIL_NEVER LONG_MAX
typedef struct testutil_alloc {
	long fail_at;  /* index of the first allocation that fails */
	bool only_one; /* fail allocation fail_at alone, the later ones succeed */
	long calls;    /* allocations asked for so far */
	long failures; /* how many of them returned NULL */
} testutil_alloc_t;

/* The allocator over t (malloc/realloc/free underneath). */
gpuenv_allocator_t testutil_allocator(testutil_alloc_t *t);
/* Start over: fail from allocation fail_at on (or only it), counts zeroed. */
void testutil_alloc_reset(testutil_alloc_t *t, long fail_at, bool only_one);

/* The whole file at a path under the source tree ($GPUENV_SRC, else "."),
 * the path made printf-style; malloc'd and NUL-terminated, its length in
 * *len.  A file that cannot be read ends the test binary with a message. */
char *testutil_read_source(size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
