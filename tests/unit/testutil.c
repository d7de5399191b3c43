/* Test doubles shared by the unit tests: see testutil.h. */
#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
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

char *testutil_read_source(size_t *len, const char *fmt, ...)
{
	const char *src = getenv("GPUENV_SRC");
	char rel[2048], path[4096];
	va_list ap;
	FILE *f;
	char *buf = NULL;
	long n = -1;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", rel);
	if ((f = fopen(path, "rb")) && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
		fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
		fread(buf, 1, (size_t)n, f) == (size_t)n) {
		fclose(f);
		buf[n] = '\0';
		*len = (size_t)n;
		return buf;
	}
	fprintf(stderr, "%s: cannot read\n", path);
	abort();
}
