/* The bulk allocator: huge pages for big blocks (gpuenv_allocator_bulk). */
#define _GNU_SOURCE
#include "gpuenv/core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Sorting 100,000 versions or parsing an 8 MB lock file touches tens of MB.  Faulting that in 4 KiB pages
 * costs more than the parsing on some virtual machines (15 us a fault has
 * been measured), so for the length of these verbs the context's allocator
 * asks for transparent huge pages on blocks of a megabyte or more.  Small
 * blocks go to malloc.  Every block carries a header saying which. */

struct blk {
	size_t map; /* bytes mapped (0: from malloc) */
	size_t size;
	max_align_t pad[2]; /* keeps the payload aligned */
};

#define BIG_MIN ((size_t)1 << 20)
#define HUGE_SZ ((size_t)2 << 20)

static void *big_alloc(void *ud, size_t n)
{
	struct blk *b;

	(void)ud;
	if (n > SIZE_MAX - sizeof(*b) - 2 * HUGE_SZ)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (n >= BIG_MIN) {
		size_t map = (n + sizeof(*b) + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
		char *p = mmap(NULL, map + HUGE_SZ, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			/* align to a huge page, give back the slack on both sides */
			char *a = (char *)(((uintptr_t)p + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1));
			if (a > p)
				munmap(p, (size_t)(a - p));
			if (a + map < p + map + HUGE_SZ)
				munmap(a + map, (size_t)(p + map + HUGE_SZ - (a + map)));
			madvise(a, map, MADV_HUGEPAGE);
			b = (struct blk *)a;
			b->map = map;
			b->size = n;
			return b + 1;
		}
	}
#endif
	b = malloc(sizeof(*b) + n);
	if (!b)
		return NULL;
	b->map = 0;
	b->size = n;
	return b + 1;
}

static void big_free(void *ud, void *p)
{
	struct blk *b;

	(void)ud;
	if (!p)
		return;
	b = (struct blk *)p - 1;
	if (b->map)
		munmap(b, b->map);
	else
		free(b);
}

static void *big_realloc(void *ud, void *p, size_t n)
{
	struct blk *b;
	void *q;

	if (!p)
		return big_alloc(ud, n);
	b = (struct blk *)p - 1;
	if (b->map && n + sizeof(*b) <= b->map) {
		b->size = n;
		return p;
	}
	if (!b->map && n < BIG_MIN) {
		struct blk *nb = realloc(b, sizeof(*b) + n);
		if (!nb)
			return NULL;
		nb->size = n;
		return nb + 1;
	}
	q = big_alloc(ud, n);
	if (!q)
		return NULL;
	memcpy(q, p, b->size < n ? b->size : n);
	big_free(ud, p);
	return q;
}


void gpuenv_allocator_bulk(gpuenv_allocator_t *a)
{
	a->alloc = big_alloc;
	a->realloc = big_realloc;
	a->free = big_free;
	a->ud = NULL;
}

void gpuenv_mem_release(void *block, size_t len, size_t from, size_t to)
{
	const size_t pg = 4096; /* the smallest page: release whole ones only */
	uintptr_t b = (uintptr_t)block, lo, hi;

	/* the block's first and last page stay: an allocator keeps its
	 * bookkeeping beside a block, and may write there when it is freed */
	if (from < pg)
		from = pg;
	if (len < pg || to > len - pg)
		to = len < pg ? 0 : len - pg;
	if (from >= to)
		return;
	lo = (b + from + pg - 1) & ~(uintptr_t)(pg - 1);
	hi = (b + to) & ~(uintptr_t)(pg - 1);
	if (lo < hi)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
