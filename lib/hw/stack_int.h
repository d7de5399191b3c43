/* Internal helpers shared by the stack probe backends (ldcache.c, loader.c,
 * toolkit.c, libs.c, pyenv.c).  Not installed. */
#ifndef GPUENV_STACK_INT_H
#define GPUENV_STACK_INT_H

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>

#include "gpuenv/pep440.h"
#include "gpuenv/stack.h"

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


/* Read "#define NAME value" integers / strings from header text. */
bool stack_header_int(const char *text, size_t len, const char *name, long *out);
gpuenv_str_t stack_header_str(const char *text, size_t len, const char *name);

/* Version-shaped: digits separated by dots (at least one dot when
 * need_dot). */
bool stack_is_dotted(gpuenv_str_t s, bool need_dot);

/* ELF facts read once per probe: the loader emulations of every framework
 * binary and the library inventory meet the same files (libc, cuDNN ...);
 * each is mapped and parsed once, keyed by device and inode. */
struct stack_elfcache {
	gpuenv_arena_t *arena;
	struct svec items;    /* struct stack_elfitem */
	struct svec verified; /* struct stack_verified: candidate checks by path */
};

/* The facts of the file at path (dev/ino from a stat of it): *out points
 * into the cache, valid until the next call; the return is 0 or the read error (-errno,
 * GPUENV_EFORMAT, GPUENV_EUNSUPPORTED), remembered too; -ENOMEM. */
int stack_elf_get(gpuenv_ctx_t *ctx, struct stack_elfcache *c, const char *path, dev_t dev,
	ino_t ino, const gpuenv_ld_elf_t **out);

/* gpuenv_loader_resolve with a cache shared between calls (NULL: none). */
int stack_loader_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_elfcache *cache,
	const char *binary, const gpuenv_loader_opts_t *opts, gpuenv_ld_resolution_t *out);

/* Internal variants taking a warning sink. */
int stack_toolkit_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_warn *w,
	size_t *n, gpuenv_toolkit_t **out);
int stack_pyenv_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_warn *w,
	struct stack_elfcache *cache, const gpuenv_pyenv_opts_t *opts, size_t *n, gpuenv_pyenv_t **out);
int stack_libs_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_warn *w,
	struct stack_elfcache *elfcache,
	const gpuenv_toolkit_t *toolkits, size_t ntoolkits, const gpuenv_ldcache_t *cache,
	const gpuenv_pyenv_t *envs, size_t nenvs, size_t *n, gpuenv_libcopy_t **out);

/* The default system folders of the loader for a machine. */
const char *const *stack_default_dirs(unsigned machine, bool is64);

#endif
