/* What the stack backends offer each other and the orchestrator (stack.c):
 * the per-probe ELF cache and loader of loader.c, the probe entry points
 * with a warning sink.  Not installed.  File layers, each calling only
 * those below: stack_util.c (and lib/formats' cdefine.c); ldcache.c, toolkit.c; loader.c;
 * pyenv.c; libs.c; stack.c; stack_json.c, probe.c. */
#ifndef GPUENV_STACK_INT_H
#define GPUENV_STACK_INT_H

#include "gpuenv/cdefine.h"
#include "gpuenv/libs.h"
#include "gpuenv/loader.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pyenv.h"
#include "gpuenv/toolkit.h"
#include "stack_util.h"

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
