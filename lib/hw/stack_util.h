/* The helpers of stack_util.c that every stack file shares (arena vectors,
 * warnings, paths under ctx->root, capped reads).  Not installed. */
#ifndef GPUENV_STACK_UTIL_H
#define GPUENV_STACK_UTIL_H

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>

#include "gpuenv/stack_version.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The one cap on the small text files the stack probe reads (C headers,
 * version.py, pyvenv.cfg, version.txt, pyenv's version file): only their
 * beginning matters. */
#define STACK_TEXT_MAX ((size_t)64 << 10)

/* A growable array living in an arena (old blocks are left behind, which is
 * fine for the small lists the probe builds). */
struct svec {
	void *items;
	size_t n, cap;
};

/* A new zeroed element at the end, NULL when out of memory. */
void *stack_vec_push(gpuenv_arena_t *a, struct svec *v, size_t elem);

/* Non-fatal problems collected while probing: "path: message". */
struct stack_warn {
	gpuenv_arena_t *arena;
	struct svec list; /* gpuenv_str_t */
};

void stack_warn(gpuenv_ctx_t *ctx, struct stack_warn *w, const char *fmt, ...)
	GPUENV_PRINTF(3, 4);

/* ctx->root + path into out; false when it does not fit. */
bool stack_rooted(gpuenv_ctx_t *ctx, const char *path, char *out, size_t outsz);

/* A NUL-terminated copy of s[0..n) in the arena, or GPUENV_STR_NULL
 * (printf into the arena: gpuenv_arena_printf). */
gpuenv_str_t stack_strdup(gpuenv_arena_t *a, const char *s, size_t n);

/* Read at most max bytes of a file (path under ctx->root) into buf (reset
 * first).  Larger files are cut at max: callers only need their beginning.
 * 0 or -errno; no ctx->err. */
int stack_read_head(gpuenv_ctx_t *ctx, const char *path, size_t max, gpuenv_buf_t *buf);

/* The same, stopping early once stop (e.g. "\n\n": the end of a METADATA
 * header block) has been read. */
int stack_read_until(gpuenv_ctx_t *ctx, const char *path, size_t max, const char *stop,
	gpuenv_buf_t *buf);

/* Whether a path (under ctx->root) exists as a file / folder. */
bool stack_is_file(gpuenv_ctx_t *ctx, const char *path);
bool stack_is_dir(gpuenv_ctx_t *ctx, const char *path);

/* Resolve symlinks of path under ctx->root; the result is a path without
 * the root prefix.  NULL slice when it does not exist or escapes the root. */
gpuenv_str_t stack_realpath(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *path);

/* Parent folder ("/a/b/c" -> "/a/b", "/a" -> "/"), into the arena. */
gpuenv_str_t stack_dirname(gpuenv_arena_t *a, const char *path);
/* Join: "dir" + "/" + "name" (dir may end with '/'). */
gpuenv_str_t stack_join(gpuenv_arena_t *a, const char *dir, const char *name);

#endif
