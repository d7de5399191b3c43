/* The index client: PEP 503 / 691 simple indexes, PEP 658 / 714 metadata,
 * find-links folders and file:// indexes, an on-disk HTTP cache, parallel
 * transfers through libcurl's multi interface.
 *
 * Blocking batch calls: the caller names every project (or file) it will
 * need next, the client fetches the ones it lacks in parallel and returns
 * when all are answered.  Pure parsers of the page formats are separate, so
 * they can be fuzzed and tested without a server.
 *
 * CONTRACT (lib/resolve/provider.c uses exactly this): the structures and
 * functions below marked "contract".  Their owner may add fields and
 * functions, not change these.
 */
#ifndef GPUENV_INDEX_H
#define GPUENV_INDEX_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Poetry's source priorities (contract). */
enum gpuenv_source_priority {
	GPUENV_SOURCE_PRIMARY = 0,	/* asked, in order, before the default */
	GPUENV_SOURCE_DEFAULT = 1,	/* PyPI, or --index-url */
	GPUENV_SOURCE_SUPPLEMENTAL = 2, /* asked only when no primary has it */
	GPUENV_SOURCE_EXPLICIT = 3,	/* only for packages that name it */
};

/* One index or find-links location (contract). */
typedef struct gpuenv_index_source {
	const char *name;	/* "pypi", "pytorch" */
	const char *url;	/* a simple index ("https://h/simple/"),
				   "file:///dir/simple/", or with find_links
				   a folder or page listing files */
	int priority;		/* enum gpuenv_source_priority */
	bool find_links;
} gpuenv_index_source_t;

/* One file of a project page (contract). */
typedef struct gpuenv_index_file {
	const char *filename;	   /* "torch-2.8.0+cu128-cp312-...whl" */
	const char *url;	   /* absolute, without the fragment */
	const char *sha256;	   /* 64 lower-case hex digits, or NULL */
	const char *requires_python; /* NULL: none */
	bool yanked;
	const char *yanked_reason; /* NULL: none given */
	bool has_metadata;	   /* PEP 658 / 714: URL + ".metadata" */
	const char *metadata_sha256; /* NULL: not given */
	int64_t size;		   /* -1: unknown */
	const char *upload_time;   /* RFC 3339, NULL: unknown */
} gpuenv_index_file_t;

/* One project as one source lists it (contract). */
typedef struct gpuenv_index_project {
	const char *name;		   /* normalised */
	const gpuenv_index_source_t *source; /* the source it came from */
	const char *page_url;		   /* the page (for messages) */
	size_t nfiles;
	const gpuenv_index_file_t *files; /* in the page's order */
} gpuenv_index_project_t;

/* Parsers of one page, pure (fuzzed).  base_url resolves relative links.
 * 0, or GPUENV_ESYNTAX / GPUENV_ETOOBIG with ctx->err naming base_url and
 * the position. */
GPUENV_API int gpuenv_simple_html_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *base_url, gpuenv_str_t body, gpuenv_index_project_t *out);
GPUENV_API int gpuenv_simple_json_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *base_url, gpuenv_str_t body, gpuenv_index_project_t *out);

typedef struct gpuenv_index gpuenv_index_t;

typedef struct gpuenv_index_opts {
	const gpuenv_index_source_t *sources; /* in declaration order */
	size_t nsources;
	const char *cache_dir; /* NULL: gpuenv_index_cache_dir() (GPUENV_CACHE_DIR,
				  $XDG_CACHE_HOME/gpuenv or ~/.cache/gpuenv) */
	bool offline;	       /* the cache only */
	/* false (default): the first source, by priority, that has a
	 * package is the only one asked for it; true: merge all (pip's
	 * extra-index-url behaviour) */
	bool merge_sources;
	unsigned max_parallel; /* 0: 16 */
	unsigned timeout_ms;   /* per transfer; 0: 30000 */
	unsigned retries;      /* 0: 3 */
	/* progress callback (may be NULL), called from the batch calls */
	void (*progress)(void *arg, size_t done, size_t total, uint64_t bytes);
	void *progress_arg;
	/* added after the contract (0: the default for each) */
	unsigned retry_base_ms;	  /* first backoff delay; 0: 250 (doubles each retry) */
	unsigned retry_max_ms;	  /* cap of one wait, Retry-After included; 0: 10000 */
	size_t max_page_bytes;	  /* 0: 64 MiB */
	size_t max_metadata_bytes; /* 0: 16 MiB (METADATA, a central directory) */
	uint64_t max_wheel_bytes; /* whole-file fallback; 0: 2 GiB */
	bool refresh;		  /* every cached page revalidated, fresh or not (uv's
				     --refresh); entries keyed by a hash stay */
} gpuenv_index_opts_t;

/* contract */
GPUENV_API int gpuenv_index_open(gpuenv_ctx_t *ctx, const gpuenv_index_opts_t *opts,
	gpuenv_index_t **out);
GPUENV_API void gpuenv_index_close(gpuenv_index_t *ix);

/* The pages of names (normalised), fetched in parallel, from the sources
 * the priority rule gives; only_source (NULL: the rule) restricts a name to
 * one source (a dependency's `source = "pytorch"`).  out[i] NULL: no source
 * has names[i].  Results live until gpuenv_index_close.  0 or the first
 * error (ctx->err names the URL; retried transient errors only after the
 * retries are spent) (contract). */
GPUENV_API int gpuenv_index_projects(gpuenv_index_t *ix, gpuenv_ctx_t *ctx,
	const char *const *names, const char *const *only_source, size_t n,
	const gpuenv_index_project_t **out);

/* The core metadata (METADATA bytes) of wheel files, in parallel: PEP 658
 * file when the page offers one (hash checked), else the wheel's
 * central directory through HTTP range requests, else the whole wheel.
 * out[i] lives until gpuenv_index_close (contract). */
GPUENV_API int gpuenv_index_metadata(gpuenv_index_t *ix, gpuenv_ctx_t *ctx,
	const gpuenv_index_file_t *const *files, size_t n, gpuenv_str_t *out);

/* A URL without "user:password@" (for locks and messages), in arena;
 * NULL when url is NULL or memory runs out. */
GPUENV_API const char *gpuenv_url_public(gpuenv_arena_t *arena, const char *url);
/* The last path segment of a URL (no query or fragment), percent-decoded,
 * in arena ("x-1.0-py3-none-any.whl"); NULL when there is none or memory
 * runs out. */
GPUENV_API const char *gpuenv_url_basename(gpuenv_arena_t *arena, const char *url);
/* The file:// URL of an absolute path, percent-encoded, in arena; NULL
 * when memory runs out. */
GPUENV_API const char *gpuenv_path_file_url(gpuenv_arena_t *arena, const char *path);
/* The local path of a file:// URL, percent-decoded, in arena; NULL when
 * url is not one (or memory runs out). */
GPUENV_API const char *gpuenv_file_url_path(gpuenv_arena_t *arena, const char *url);

/* Counters (for --json and benchmarks) (contract). */
typedef struct gpuenv_index_stats {
	size_t requests, cache_hits, revalidated, not_modified;
	uint64_t bytes;
} gpuenv_index_stats_t;
GPUENV_API void gpuenv_index_get_stats(const gpuenv_index_t *ix, gpuenv_index_stats_t *out);

/* gpuenv's cache folder (added after the contract): GPUENV_CACHE_DIR, else
 * $XDG_CACHE_HOME/gpuenv (an absolute XDG_CACHE_HOME only), else
 * $HOME/.cache/gpuenv, into out.  The index client's HTTP cache (http-v1/)
 * and the global cache of wheels and trees (gpuenv/cache.h) share it.
 * 0, GPUENV_ENOTFOUND (none set) or -ENAMETOOLONG, recorded. */
GPUENV_API int gpuenv_index_cache_dir(gpuenv_ctx_t *ctx, char *out, size_t outsz);

/* ---- downloads (lib/index/download.c; added after the contract) --------
 * Whole files (wheels) streamed to disk over the client's transfers: in
 * parallel, retried as every transfer is, with the client's credentials
 * (a source's userinfo or environment, ~/.netrc; the URL's own userinfo
 * first), hashed while the bytes arrive. */
typedef struct gpuenv_download {
	/* asked */
	const char *url;    /* http(s):// or file:// (userinfo allowed, never shown) */
	const char *src_path; /* with url NULL: a local file (a lock's path entry) */
	const char *name;   /* for messages (the file name); NULL: the URL's last segment */
	int fd;		    /* the destination, open for writing at offset 0 and
			       empty, or -1: path is created (O_EXCL, 0644) */
	const char *path;   /* with fd -1; removed again when the download fails */
	const char *sha256; /* 64 hex digits, required: a mismatch is an error */
	bool unhashed;	    /* sha256 NULL allowed: the caller checks the bytes
			       itself (a signed knowledge-base bundle) */
	int64_t size;	    /* expected bytes, -1: unknown (a mismatch is an error) */
	uint64_t max_bytes; /* cap; 0: the client's max_wheel_bytes (2 GiB by default) */
	/* answered */
	uint64_t bytes;		/* written */
	char got_sha256[65];	/* the body's sha256 once all of it is in
				   (64 hex digits; "" until then) */
	int err;		/* 0, or this download's failure ... */
	gpuenv_error_t error;	/* ... and its story */
} gpuenv_download_t;

typedef struct gpuenv_download_opts {
	unsigned max_parallel; /* 0: the client's */
	/* called on the calling thread while bytes arrive: downloads done of
	 * n, bytes so far of total_bytes (the sum of the known sizes, 0 when
	 * none is known) */
	void (*progress)(void *arg, size_t done, size_t n, uint64_t bytes, uint64_t total_bytes);
	void *progress_arg;
	/* called on the calling thread as soon as dl[k] is complete and
	 * checked (its file closed), while the others still arrive: the
	 * caller may start on it */
	void (*done)(void *arg, size_t k);
	void *done_arg;
} gpuenv_download_opts_t;

/* Download dl[0..n) (every one is tried; each gets its own err).  ix may
 * be NULL for file:// URLs only.  With the client's offline option an
 * http(s) URL is refused (GPUENV_ENOTFOUND, "--offline").  A body whose
 * sha256 differs from dl->sha256 is GPUENV_EFORMAT naming the URL and both
 * hashes; a body over the cap or the expected size GPUENV_ETOOBIG.
 * 0, or the first failure (in the order given) in ctx->err. */
GPUENV_API int gpuenv_index_download(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, gpuenv_download_t *dl,
	size_t n, const gpuenv_download_opts_t *opts);

#ifdef __cplusplus
}
#endif
#endif
