/* Fuzz target for the strict zip reader (lib/formats/zip.c): any bytes as
 * an archive.  No crash, no read outside the input, no leak; a refusal
 * carries its story; an archive that opens has every entry inside the
 * input, sorted names, no name twice, and each entry extracts to at most
 * its declared size (the extraction is where zip bombs are caught).  Small
 * caps keep runs fast.  Then once more with an allocation failing. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/zip.h"

#include "fuzz_alloc.h"

typedef struct count {
	uint64_t n;
} count_t;

static int sink(void *ud, const void *p, size_t n)
{
	(void)p;
	((count_t *)ud)->n += n;
	return 0;
}

static const gpuenv_zip_limits_t lim = { .max_entries = 1000, .max_total = 1 << 24,
	.max_entry = 1 << 22, .max_ratio = 50 };

static void story(const gpuenv_ctx_t *ctx, int r)
{
	if (r && (ctx->err.code != r || !ctx->err.msg[0])) {
		fprintf(stderr, "fuzz_zip: a refusal without its story (%d)\n", r);
		abort();
	}
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_zip_t z;
	gpuenv_arena_init(&a, ctx, 0);
	if (OOM_CALL(o, ctx, gpuenv_zip_open(ctx, &a, "fuzz.whl", data, size, &lim, &z)) == 0)
		for (size_t i = 0; i < z.n && i < 4; i++) {
			gpuenv_str_t out;
			OOM_CALL(o, ctx, gpuenv_zip_read(ctx, &a, &z, &z.entries[i], 1 << 16, &out));
		}
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_zip_t z;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	r = gpuenv_zip_open(&ctx, &a, "fuzz.whl", data, size, &lim, &z);
	story(&ctx, r);
	if (r == 0) {
		for (size_t i = 0; i < z.n; i++) {
			const gpuenv_zip_entry_t *e = &z.entries[z.sorted[i]];
			if (e->data_off > size || e->csize > size - e->data_off)
				abort();
			if (i && gpuenv_str_cmp(z.entries[z.sorted[i - 1]].name, e->name) >= 0)
				abort();
			if (gpuenv_zip_find(&z, e->name) != e)
				abort();
			count_t c = { 0 };
			gpuenv_error_clear(&ctx);
			r = gpuenv_zip_extract(&ctx, &z, e, sink, &c);
			story(&ctx, r);
			if (c.n > e->usize || (r == 0 && c.n != e->usize))
				abort();
			/* inflated whole (libdeflate) the entry passes or fails as streamed (zlib) */
			void *inf = e->usize <= (1u << 20) ? gpuenv_zip_inflater_new() : NULL;
			unsigned char *buf = inf ? malloc(e->usize ? (size_t)e->usize : 1) : NULL;
			if (buf) {
				gpuenv_error_clear(&ctx);
				int r2 = gpuenv_zip_inflate_to(&ctx, &z, e, inf, buf);
				story(&ctx, r2);
				if ((r == 0) != (r2 == 0))
					abort();
			}
			free(buf);
			gpuenv_zip_inflater_free(inf);
		}
	}
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
