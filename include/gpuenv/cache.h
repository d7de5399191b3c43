/* gpuenv cache: the global cache of downloaded wheels (by sha256) and of
 * their unpacked trees (gpuenv/install.h), shared by every venv and by
 * concurrent gpuenv processes.
 *
 * Layout under the cache folder (GPUENV_CACHE_DIR, else $XDG_CACHE_HOME/
 * gpuenv, else ~/.cache/gpuenv; the index client's HTTP cache lives beside
 * it in the same folder):
 *   wheels/<sha256[0:2]>/<sha256>/<file name>   downloaded wheels
 *   trees/<sha256[0:2]>/<sha256>/               unpacked trees
 *   tmp/                                        writes in progress (renamed
 *                                               into place when complete)
 *   .lock                                       shared by users, exclusive
 *                                               for prune / clean
 * Everything enters by rename of a complete entry, so a reader never sees
 * half of one; two processes making the same entry both succeed (the
 * second's copy is dropped).  A wheel is trusted only after its hash
 * matched; a tree only while gpuenv_wheel_tree_load(check) passes, and
 * is unpacked again (from the wheel, fetched again when that is damaged
 * too) otherwise: a damaged entry is never installed.
 *
 * CONTRACT (sync codes against exactly this): the structures and functions
 * below.  Their owner (the "cache" part) may add fields and functions,
 * never rename, remove or change the meaning of these.
 */
#ifndef GPUENV_CACHE_H
#define GPUENV_CACHE_H

#include "gpuenv/core.h"
#include "gpuenv/index.h"
#include "gpuenv/install.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuenv_cache gpuenv_cache_t;

/* Open (creating) the cache at dir (NULL: the default above), taking the
 * shared lock.  0, or -errno recorded with the path. */
GPUENV_API int gpuenv_cache_open(gpuenv_ctx_t *ctx, const char *dir, gpuenv_cache_t **out);
GPUENV_API void gpuenv_cache_close(gpuenv_cache_t *c);
GPUENV_API const char *gpuenv_cache_dir(const gpuenv_cache_t *c);
/* Call before making anything in <cache>/tmp through this handle (the
 * cache's own gets do): once per handle, a killed process's leftovers there
 * are removed when no other process or handle uses the cache. */
GPUENV_API void gpuenv_cache_tmp_ready(gpuenv_cache_t *c);
/* The default folder (added): gpuenv_index_cache_dir (GPUENV_CACHE_DIR,
 * else $XDG_CACHE_HOME/gpuenv, else $HOME/.cache/gpuenv), the index
 * client's default too.  With a dir other than the default, give the index
 * client gpuenv_cache_dir() as its cache_dir, so both stay together. */
GPUENV_API int gpuenv_cache_default_dir(gpuenv_ctx_t *ctx, char *out, size_t outsz);

/* One wheel a sync needs. */
typedef struct gpuenv_cache_req {
	const char *name;   /* file name */
	const char *url;    /* http(s):// or file://; NULL with path */
	const char *path;   /* a local file (a lock's path entry), or NULL */
	const char *sha256; /* hex, required */
	int64_t size;	    /* -1: unknown */
} gpuenv_cache_req_t;

/* What the cache gives back for one request. */
typedef struct gpuenv_cache_entry {
	const char *tree_dir;	   /* the unpacked tree (in arena) */
	gpuenv_wheel_tree_t tree;  /* its manifest, checked */
	bool downloaded;	   /* fetched in this call */
	bool unpacked;		   /* unpacked in this call */
	bool repaired;		   /* a damaged entry was replaced */
} gpuenv_cache_entry_t;

typedef struct gpuenv_cache_progress {
	/* called on the calling thread; bytes/total_bytes of downloads
	 * (total 0: unknown), files done of the n asked */
	void (*fn)(void *arg, const char *phase /* "download", "unpack" */,
		size_t done, size_t n, uint64_t bytes, uint64_t total_bytes);
	void *arg;
} gpuenv_cache_progress_t;

/* Make sure each request has a checked tree: a tree present and intact is
 * used as it is; else the cached wheel (hash checked again) is unpacked;
 * else the wheel is fetched through ix (NULL: only file:// and paths; in
 * parallel, the hash checked before it enters the cache) and unpacked.
 * Unpacking runs on several threads.  out[i] for reqs[i].  0, or the first
 * error (ctx->err names the wheel and what is wrong; a hash mismatch says
 * both hashes and that the lock or the index is wrong). */
GPUENV_API int gpuenv_cache_get(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_index_t *ix, const gpuenv_cache_req_t *reqs, size_t n,
	const gpuenv_unpack_limits_t *lim, const gpuenv_cache_progress_t *progress,
	gpuenv_cache_entry_t *out);

typedef struct gpuenv_cache_usage {
	uint64_t wheels, wheel_bytes, trees, tree_bytes, http_bytes, other_bytes;
} gpuenv_cache_usage_t;

/* Sizes by kind (du-like: a file hardlinked into venvs counts once). */
GPUENV_API int gpuenv_cache_size(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, gpuenv_cache_usage_t *out);

/* prune: remove entries not used for older_than_s seconds (atime of the
 * entry's stamp, refreshed on use), trees whose wheel is gone, and stale
 * tmp/ leftovers; clean: remove everything.  Both take the exclusive
 * lock (GPUENV_ELOCKED when another gpuenv uses the cache and wait is
 * false).  Files hardlinked into venvs stay valid there.  *freed: bytes. */
GPUENV_API int gpuenv_cache_prune(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, uint64_t older_than_s,
	bool wait, uint64_t *freed);
GPUENV_API int gpuenv_cache_clean(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, bool wait, uint64_t *freed);

#ifdef __cplusplus
}
#endif
#endif
