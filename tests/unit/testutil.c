/* Test doubles shared by the unit tests: see testutil.h. */
#include "testutil.h"

#include <stdlib.h>

static bool fails(testutil_alloc_t *t)
{
	long i = t->calls++;
	bool f = t->only_one ? i == t->fail_at : i >= t->fail_at;

	t->failures += f;
	return f;
}

/* size 0 asks for one byte: malloc(0) and realloc(p, 0) may return NULL,
 * which would read as a failure */
static void *t_alloc(void *ud, size_t n)
{
	return fails(ud) ? NULL : malloc(n ? n : 1);
}

static void *t_realloc(void *ud, void *p, size_t n)
{
	return fails(ud) ? NULL : realloc(p, n ? n : 1);
}

static void t_free(void *ud, void *p)
{
	(void)ud;
	free(p);
}

gpuenv_allocator_t testutil_allocator(testutil_alloc_t *t)
{
	return (gpuenv_allocator_t){ t_alloc, t_realloc, t_free, t };
}

void testutil_alloc_reset(testutil_alloc_t *t, long fail_at, bool only_one)
{
	*t = (testutil_alloc_t){ .fail_at = fail_at, .only_one = only_one };
}
