/* Fuzz target: protobuf's text format (lib/formats/pbtxt.c), as `gpuenv
 * triton check` reads config.pbtxt.  Besides the sanitizers, invariants
 * abort() on violation:
 *   - a success gives a tree whose every field has a name, a position inside
 *     the text and a value of its kind (scalars NUL-terminated, messages
 *     with their own positions), nested no deeper than the cap;
 *   - every failure leaves an error message naming the file;
 *   - the integer getter never crashes on any scalar. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pbtxt.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void walk(gpuenv_ctx_t *ctx, const gpuenv_pbtxt_msg_t *m, unsigned lines, unsigned depth)
{
	CHECK(depth <= GPUENV_PBTXT_MAX_DEPTH);
	CHECK(m->n == 0 || m->fields);
	for (size_t i = 0; i < m->n; i++) {
		const gpuenv_pbtxt_field_t *f = &m->fields[i];
		int64_t v;
		CHECK(f->name && f->name[0]);
		CHECK(f->line >= 1 && f->line <= lines && f->vline >= f->line && f->vline <= lines);
		if (f->kind == GPUENV_PBTXT_MESSAGE) {
			CHECK(f->msg);
			walk(ctx, f->msg, lines, depth + 1);
		} else {
			CHECK(f->value && f->value[f->len] == '\0');
			(void)gpuenv_pbtxt_int(ctx, "f", f, &v);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	const gpuenv_pbtxt_msg_t *m;
	unsigned lines = 1;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (gpuenv_pbtxt_parse(&ctx, &arena, "config.pbtxt", (const char *)data, size, &m) == 0)
		walk(&ctx, m, lines, 0);
	else
		CHECK(ctx.err.msg[0] && !strcmp(ctx.err.file, "config.pbtxt"));
	gpuenv_arena_free(&arena);
	return 0;
}
