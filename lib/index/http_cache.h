/* The index client's on-disk HTTP cache (cache.c). */
#ifndef GPUENV_INDEX_CACHE_H
#define GPUENV_INDEX_CACHE_H

#include "gpuenv/core.h"

typedef struct ix_cache_entry {
	int status;	 /* 200, or 404 for "this source does not have it" */
	int64_t stored;	 /* unix seconds */
	int64_t max_age; /* freshness lifetime, seconds; -1: none given (revalidate every time) */
	int64_t age;	 /* its age when stored (Age, Date; ix_req_freshness), seconds */
	bool immutable;	 /* keyed by a hash: never revalidated */
	char etag[256];
	char last_modified[64];
	char content_type[128];
	char base_url[2048]; /* where a page was served from, when not its URL ("" none) */
} ix_cache_entry_t;

/* The entry file of url (+ the hash an immutable entry is keyed by); 0, or
 * the digest's failure (gpuenv_sha256_final; out is "" then). */
GPUENV_MUST_CHECK int ix_cache_key(const char *root, const char *url, const char *sha256, char *out,
	size_t outsz);
/* 0 with the entry and its body (digest checked); -ENOENT for a miss, -EINVAL
 * for a damaged entry (neither recorded), -ENOMEM.  body's memory is
 * replaced by the bytes read (the body moved to their front, no copy). */
int ix_cache_load(gpuenv_ctx_t *ctx, const char *path, size_t max, ix_cache_entry_t *e,
	gpuenv_buf_t *body);
/* The entry's header alone: whether it is fresh and what to revalidate it
 * with, so that a big page's body is loaded only when it is used, not held
 * while the server is asked.  verify: the body is read through its digest
 * (a buffer at a time, nothing kept) and must match its length and
 * digest, so that a damaged entry is not revalidated.  0, -ENOENT, -EINVAL
 * (neither recorded), -ENOMEM. */
int ix_cache_load_head(gpuenv_ctx_t *ctx, const char *path, ix_cache_entry_t *e, bool verify);
/* Write an entry atomically; 0 or an error recorded with the path. */
int ix_cache_store(gpuenv_ctx_t *ctx, const char *path, const ix_cache_entry_t *e,
	const void *data, size_t len);
/* The freshness lifetime of a 404 / 410 that gives none (RFC 9110 15.5.5:
 * heuristically cacheable), as long as PyPI's pages: a torch mirror
 * lacking a build is not asked again for it on every lock. */
#define IX_CACHE_NOT_FOUND_MAX_AGE 600

/* May the entry be used without asking the server?  Immutable, or its
 * current age (age + now - stored) below max_age (RFC 9111 4.2). */
bool ix_cache_fresh(const ix_cache_entry_t *e, int64_t now);

#endif
