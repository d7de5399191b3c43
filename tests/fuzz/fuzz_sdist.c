/* Fuzz target for PKG-INFO out of .tar.gz sdists (lib/formats/sdist.c).
 *
 * Any bytes, as the gzip stream itself and wrapped in a valid gzip stream
 * (so the tar walk sees arbitrary tar bytes): no crash, no read out of
 * bounds, no leak; a refusal carries its story; a PKG-INFO found lies
 * within the limit.  Then once more with an allocation failing. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gpuenv/sdist.h"

#include "fuzz_alloc.h"

#define FUZZ_MAX_PKG_INFO 4096

static void one(gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_str_t out;
	gpuenv_arena_init(&a, ctx, 0);
	int r = gpuenv_sdist_pkg_info(ctx, &a, "fuzz.tar.gz", data, size, FUZZ_MAX_PKG_INFO, &out);
	if (r && (ctx->err.code == 0 || !ctx->err.msg[0])) {
		fprintf(stderr, "fuzz_sdist: a refusal without its story\n");
		abort();
	}
	if (!r && (out.len > FUZZ_MAX_PKG_INFO || !out.ptr || out.ptr[out.len] != '\0')) {
		fprintf(stderr, "fuzz_sdist: PKG-INFO past the limit or unterminated\n");
		abort();
	}
	gpuenv_arena_free(&a);
}

/* data gzip-compressed into a malloc'd buffer (NULL when it fails) */
static unsigned char *gzip(const uint8_t *data, size_t size, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = size + size / 8 + 128;
	unsigned char *out = malloc(cap);
	if (!out || deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)size;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*outlen = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_str_t out;
	gpuenv_arena_init(&a, ctx, 0);
	OOM_CALL(o, ctx, gpuenv_sdist_pkg_info(ctx, &a, "fuzz.tar.gz", data, size, FUZZ_MAX_PKG_INFO, &out));
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	size_t zn = 0;
	unsigned char *z;

	gpuenv_ctx_init(&ctx);
	ctx.getenv = NULL;
	one(&ctx, data, size);
	if (size <= 1 << 20 && (z = gzip(data, size, &zn)) != NULL) {
		gpuenv_error_clear(&ctx);
		one(&ctx, z, zn);
		fuzz_oom(z, zn, oom_run);
		free(z);
	}
	return 0;
}
