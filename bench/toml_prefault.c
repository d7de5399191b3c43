/* The TOML parser alone, without the kernel's page faults: parses FILE RUNS
 * times into memory that was touched beforehand (a bump allocator over one
 * pre-faulted block handed to the context), printing the CPU time of each
 * parse in ms.  Used by bench/toml.sh to show where the time of a parse in a
 * fresh process goes; not a way to run gpuenv.
 *   toml_prefault FILE RUNS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/fs.h"
#include "gpuenv/toml.h"

struct pool {
	char *base;
	size_t used, cap;
};

static void *pool_alloc(void *ud, size_t n)
{
	struct pool *p = ud;
	n = (n + 15) & ~(size_t)15;
	if (n + 16 > p->cap - p->used)
		return NULL;
	char *r = p->base + p->used;
	memcpy(r, &n, sizeof(n));
	p->used += n + 16;
	return r + 16;
}

static void *pool_realloc(void *ud, void *old, size_t n)
{
	void *r = pool_alloc(ud, n);
	if (r && old) {
		size_t o;
		memcpy(&o, (char *)old - 16, sizeof(o));
		memcpy(r, old, o < n ? o : n);
	}
	return r;
}

static void pool_free(void *ud, void *p)
{
	(void)ud;
	(void)p;
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	gpuenv_ctx_t ctx, pctx;
	gpuenv_buf_t text;
	struct pool pool;

	if (argc != 3) {
		fprintf(stderr, "usage: toml_prefault FILE RUNS\n");
		return 2;
	}
	gpuenv_ctx_init(&ctx);
	gpuenv_buf_init(&text, &ctx, 0);
	if (gpuenv_fs_read(&ctx, argv[1], (size_t)1 << 30, &text) || !text.len) {
		fprintf(stderr, "toml_prefault: cannot read %s\n", argv[1]);
		return 1;
	}
	pool.cap = text.len * 4 + ((size_t)64 << 20);
	pool.base = malloc(pool.cap);
	if (!pool.base)
		return 1;
	memset(pool.base, 1, pool.cap); /* every page faulted in now */
	gpuenv_ctx_init(&pctx);
	pctx.mem = (gpuenv_allocator_t){ pool_alloc, pool_realloc, pool_free, &pool };
	for (long i = 0; i < strtol(argv[2], NULL, 10); i++) {
		gpuenv_toml_doc_t doc;
		pool.used = 0;
		if (gpuenv_toml_doc_init(&doc, &pctx, argv[1]))
			return 1;
		double t0 = cpu_ms();
		int r = gpuenv_toml_parse_borrowed(&doc, text.data, text.len);
		double t1 = cpu_ms();
		if (r) {
			fprintf(stderr, "toml_prefault: parse failed (%d)\n", r);
			return 1;
		}
		printf("%.3f\n", t1 - t0);
	}
	free(pool.base);
	gpuenv_buf_free(&text);
	return 0;
}
