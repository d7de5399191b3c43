/* Fuzz target for PEP 751 locks (lib/lock/pylock.c).
 *
 * Any bytes: the reader must not crash, read out of bounds or leak.  When
 * they read as a lock, the writer must accept it (it refuses exactly what
 * the reader refuses), what it writes must read back equal
 * (gpuenv_pylock_eq), and writing that again must give the same bytes.
 * Then both once more with an allocation failing (fuzz_alloc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pylock.h"

#include "fuzz_alloc.h"

static void die(const char *what, gpuenv_ctx_t *ctx, const gpuenv_buf_t *text)
{
	char msg[1200];
	gpuenv_error_format(&ctx->err, msg, sizeof(msg));
	fprintf(stderr, "fuzz_pylock: %s (%s)\n--- written ---\n%.*s\n", what, msg,
		(int)(text->len > 4000 ? 4000 : text->len), text->data ? text->data : "");
	abort();
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_lock_t lock, again;
	gpuenv_buf_t w;

	gpuenv_arena_init(&a, ctx, 0);
	gpuenv_buf_init(&w, ctx, 0);
	if (OOM_CALL(o, ctx, gpuenv_pylock_parse(ctx, &a, "fuzz.toml",
			     gpuenv_str_n((const char *)data, size), &lock)) == 0 &&
		OOM_CALL(o, ctx, gpuenv_pylock_write(ctx, &lock, &w)) == 0)
		OOM_CALL(o, ctx, gpuenv_pylock_parse(ctx, &a, "written.toml",
				 gpuenv_str_n(w.data ? w.data : "", w.len), &again));
	gpuenv_buf_free(&w);
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_lock_t lock, again;
	gpuenv_buf_t w1, w2;

	gpuenv_ctx_init(&ctx);
	ctx.getenv = NULL;
	gpuenv_arena_init(&a, &ctx, 0);
	gpuenv_buf_init(&w1, &ctx, 0);
	gpuenv_buf_init(&w2, &ctx, 0);
	if (gpuenv_pylock_parse(&ctx, &a, "fuzz.toml", gpuenv_str_n((const char *)data, size), &lock)) {
		if (ctx.err.code == 0 || !ctx.err.msg[0])
			die("a refusal without its story", &ctx, &w1);
		goto out;
	}
	if (gpuenv_pylock_write(&ctx, &lock, &w1))
		die("the writer refused a lock the reader accepted", &ctx, &w1);
	if (gpuenv_pylock_parse(&ctx, &a, "written.toml", gpuenv_str_n(w1.data, w1.len), &again))
		die("the written lock does not read back", &ctx, &w1);
	if (!gpuenv_pylock_eq(&lock, &again))
		die("the written lock reads back different", &ctx, &w1);
	if (gpuenv_pylock_write(&ctx, &again, &w2))
		die("second write failed", &ctx, &w2);
	if (w1.len != w2.len || memcmp(w1.data, w2.data, w1.len))
		die("writing twice gives different bytes", &ctx, &w2);
out:
	gpuenv_buf_free(&w1);
	gpuenv_buf_free(&w2);
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
