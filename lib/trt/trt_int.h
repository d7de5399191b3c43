/* lib/trt's own helpers (plan.c, engine.c). */
#ifndef GPUENV_TRT_INT_H
#define GPUENV_TRT_INT_H

#include "gpuenv/trt.h"

/* "tensorrt.toml:41: <source>" of a KB row, in a; NULL for no row (or
 * out of memory). */
const char *trt_row_cite(gpuenv_arena_t *a, const gpuenv_kb_row_t *row);
/* A KB string (a slice, not NUL-terminated) as a C string in a; "" when
 * memory ran out (a message loses a word, never its end). */
const char *trt_kbs(gpuenv_arena_t *a, gpuenv_str_t s);
/* Append a note (text printf'd into a, the row's citation) to notes[*n];
 * beyond GPUENV_TRT_MAX_NOTES it is dropped.  0 or -ENOMEM. */
int trt_note(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_trt_note_t *notes, size_t *n, int kind,
	const gpuenv_kb_row_t *row, const char *fmt, ...) GPUENV_PRINTF(7, 8);

#endif
