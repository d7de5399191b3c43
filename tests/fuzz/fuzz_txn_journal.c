/* Fuzz target: the transaction journal's reader (lib/install/txn.c), a
 * file on disk that a crash, a full disk or a bad block may have cut or
 * damaged.  Whatever it reads: every op it returns is one the writer could
 * have written (the writer takes them back), and a committed journal
 * written again reads back to the same ops.  The input is not
 * NUL-terminated. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuenv/txn.h"

#include "fuzz_alloc.h"

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_txn_journal_t j;
	gpuenv_buf_t out;

	gpuenv_arena_init(&arena, ctx, 0);
	gpuenv_buf_init(&out, ctx, 0);
	if (OOM_CALL(o, ctx, gpuenv_txn_journal_parse(ctx, &arena, "journal",
			     gpuenv_str_n((const char *)data, size), &j)) == 0)
		OOM_CALL(o, ctx, gpuenv_txn_journal_format(ctx, j.ops, j.nops, &out));
	gpuenv_buf_free(&out);
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_txn_journal_t j, back;
	gpuenv_buf_t out;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	gpuenv_buf_init(&out, &ctx, 0);
	int r = gpuenv_txn_journal_parse(&ctx, &arena, "journal", gpuenv_str_n((const char *)data, size), &j);
	if (r < 0 && (ctx.err.code != r || !ctx.err.msg[0]))
		__builtin_trap();
	if (r == 0) {
		if (j.state != GPUENV_TXN_UNFINISHED && j.state != GPUENV_TXN_COMMITTED &&
			j.state != GPUENV_TXN_ROLLBACK)
			__builtin_trap();
		/* what was read can be written, and reads back the same */
		if (gpuenv_txn_journal_format(&ctx, j.ops, j.nops, &out))
			__builtin_trap();
		if (gpuenv_txn_journal_parse(&ctx, &arena, "again", gpuenv_str_n(out.data, out.len), &back) ||
			back.state != GPUENV_TXN_COMMITTED || back.nops != j.nops)
			__builtin_trap();
		for (size_t i = 0; i < j.nops; i++)
			if (back.ops[i].kind != j.ops[i].kind || strcmp(back.ops[i].dst, j.ops[i].dst) ||
				!back.ops[i].src != !j.ops[i].src ||
				(j.ops[i].src && strcmp(back.ops[i].src, j.ops[i].src)))
				__builtin_trap();
		/* a committed journal is exact: its bytes are the writer's */
		if (j.state == GPUENV_TXN_COMMITTED && (out.len != size || memcmp(out.data, data, size)))
			__builtin_trap();
	}
	gpuenv_buf_free(&out);
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
