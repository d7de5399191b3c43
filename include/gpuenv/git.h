/* git dependencies through the `git` program (lib/project/git.c; docs/lock.md,
 * "Direct references").
 *
 *   <cache>/git/db/<sha256(url)[0:24]>/      a bare copy of the repository,
 *                                           fetched again when a ref is asked
 *   <cache>/git/checkouts/<commit>/          the tree at one commit (made
 *                                           once, renamed into place)
 *
 * A ref (a branch, a tag, a commit id or its prefix, NULL: the remote's
 * HEAD) is resolved against the fetched copy; a lock records the commit,
 * and `lock --check` asks the remote again (git ls-remote) whether the ref
 * still names it.  git runs with GIT_TERMINAL_PROMPT=0 (never a prompt),
 * its stderr's last line in the error.  No git on PATH: GPUENV_ENOTFOUND
 * saying so. */
#ifndef GPUENV_GIT_H
#define GPUENV_GIT_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The repository url fetched into the cache (cache_dir NULL: the default)
 * and ref resolved there: *commit (40 hex digits) in arena.  Errors: the
 * fetch failed (GPUENV_EIO, git's message), the ref is not there
 * (GPUENV_ENOTFOUND), no git (GPUENV_ENOTFOUND); ctx->err has no position
 * (the caller adds the manifest's). */
GPUENV_API int gpuenv_git_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *cache_dir,
	const char *url, const char *ref, const char **commit);

/* The tree of url at commit (fetched when the cache lacks it), *dir its
 * absolute path in arena.  0, or the error. */
GPUENV_API int gpuenv_git_checkout(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *cache_dir,
	const char *url, const char *commit, const char **dir);

/* What ref (NULL: HEAD) names on the remote now (git ls-remote; a tag's
 * commit, not the tag object): *commit in arena, NULL when the remote has
 * no such ref.  A full commit id is its own answer (nothing asked).  0, or
 * the error. */
GPUENV_API int gpuenv_git_ls_remote(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *url, const char *ref,
	const char **commit);

/* The name of a checkout's tree (url, commit, subdirectory or NULL) for
 * the caches (metadata, builds): 64 hex digits and a NUL into out.  0, or
 * the digest's failure (recorded). */
GPUENV_API int gpuenv_git_tree_key(gpuenv_ctx_t *ctx, const char *url, const char *commit, const char *subdirectory,
	char out[65]);

/* Is s a full commit id (40 hex digits)? */
GPUENV_API bool gpuenv_git_is_commit(const char *s);

#ifdef __cplusplus
}
#endif
#endif
