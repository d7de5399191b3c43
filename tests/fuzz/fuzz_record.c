/* Fuzz target: RECORD (CSV) parsing, validation and a write/read round trip
 * that must give the same rows back.  The input is not NUL-terminated. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuenv/metadata.h"

#include "fuzz_alloc.h"

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_record_t rec;

	gpuenv_arena_init(&arena, ctx, (size_t)256 << 20);
	if (OOM_CALL(o, ctx, gpuenv_record_parse(ctx, &arena, NULL, gpuenv_str_n((const char *)data, size), &rec)) == 0) {
		gpuenv_buf_t out;
		OOM_CALL(o, ctx, gpuenv_record_validate(ctx, NULL, &rec));
		gpuenv_buf_init(&out, ctx, 0);
		for (size_t i = 0; i < rec.n && i < 8; i++)
			OOM_CALL(o, ctx, gpuenv_record_format_entry(&rec.entries[i], &out));
		gpuenv_buf_free(&out);
	}
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_record_t rec, back;
	gpuenv_buf_t out;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, (size_t)256 << 20);
	if (gpuenv_record_parse(&ctx, &arena, NULL, gpuenv_str_n((const char *)data, size), &rec)) {
		gpuenv_arena_free(&arena);
		return 0;
	}
	gpuenv_record_validate(&ctx, NULL, &rec);
	for (size_t i = 0; i < rec.n; i++)
		gpuenv_record_check_path(&ctx, rec.entries[i].path);
	gpuenv_buf_init(&out, &ctx, 0);
	for (size_t i = 0; i < rec.n; i++)
		if (gpuenv_record_format_entry(&rec.entries[i], &out))
			__builtin_trap();
	if (gpuenv_record_parse(&ctx, &arena, NULL, gpuenv_str_n(out.data ? out.data : "", out.len),
		    &back))
		__builtin_trap();
	/* blank paths never parse, and a row that is only a quoted empty path
	 * cannot exist, so the counts must agree */
	if (back.n != rec.n)
		__builtin_trap();
	for (size_t i = 0; i < rec.n; i++) {
		const gpuenv_record_entry_t *a = &rec.entries[i], *b = &back.entries[i];
		if (!gpuenv_str_eq(a->path, b->path) || !gpuenv_str_eq(a->hash_algo, b->hash_algo) ||
			a->digest_len != b->digest_len ||
			(a->digest_len && memcmp(a->digest, b->digest, a->digest_len) != 0) ||
			!a->digest != !b->digest || a->has_size != b->has_size ||
			a->size != b->size)
			__builtin_trap();
	}
	gpuenv_buf_free(&out);
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
