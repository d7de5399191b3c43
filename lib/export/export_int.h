/* lib/export's own: a text written piece by piece whose first failed
 * append is remembered, and checked once where the text is finished
 * (curl's dynbuf stays failed until that check).
 * TODO(lead): gpuenv_buf_t sticky on failure (lib/core/buf.c) replaces this. */
#ifndef GPUENV_EXPORT_INT_H
#define GPUENV_EXPORT_INT_H

#include <stdarg.h>

#include "gpuenv/core.h"

typedef struct export_text {
	gpuenv_buf_t *b;
	int err; /* the first append's failure, 0: none */
} export_text_t;

static inline void export_put(export_text_t *w, const char *fmt, ...) GPUENV_PRINTF(2, 3);
static inline void export_put(export_text_t *w, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (w->err)
		return;
	va_start(ap, fmt);
	r = gpuenv_buf_vprintf(w->b, fmt, ap);
	va_end(ap);
	if (r)
		w->err = r;
}

/* 0 when every append went in, else the failure recorded in ctx ("out of
 * memory" for a failed allocation: the buffer may hold a prefix). */
static inline int export_done(gpuenv_ctx_t *ctx, const export_text_t *w, const char *what)
{
	if (!w->err && w->b->data)
		return 0;
	if (w->err == GPUENV_ETOOBIG)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "%s: larger than %zu bytes", what, w->b->max);
	return gpuenv_oom(ctx, what);
}

/* Shared by dockerfile.c and compose.c (dockerfile.c). */
struct gpuenv_manifest_target;
bool export_exists(const char *path);
/* The directory of file relative to projdir ("" or "sub/dir/"); GPUENV_EUSAGE
 * when it is outside (the build context is the project directory). */
int export_rel_dir(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *projdir, const char *file, const char **out);
/* docker's --platform of a target ("linux/amd64"), or NULL. */
const char *export_platform(const struct gpuenv_manifest_target *t);
/* A Docker repository name from the project's ("app" when none), NULL when
 * out of memory. */
const char *export_docker_name(gpuenv_arena_t *a, const char *name);

#endif
