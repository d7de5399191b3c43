/* gpuenv sync: make a venv hold exactly what a lock names.
 *
 *   gpuenv_sync_begin: lock the venv (gpuenv/txn.h: a pending transaction
 *     is recovered first), read what is installed, plan: install, upgrade
 *     (another version, or another build: "2.11.0+cu130" vs "+cpu"),
 *     remove (installed, not in the lock), keep;
 *   gpuenv_sync_commit: the wheels the plan needs from the cache
 *     (gpuenv/cache.h: fetched, hash-checked, unpacked once), staged
 *     (gpuenv/install.h) and committed as one transaction;
 *   gpuenv_sync_end: release the venv (a plan not committed is dropped).
 *
 * The lock's packages are the ones whose marker holds in env; each must
 * have a wheel the venv's interpreter supports (tags), or a clear error
 * names the package and the tags.  sdist and directory entries are built
 * into wheels through opts->builder (gpuenv/build.h fills it: the build
 * module sits above this one); without a builder, and for VCS entries,
 * they are refused with the way out. */
#ifndef GPUENV_SYNC_H
#define GPUENV_SYNC_H

#include "gpuenv/cache.h"
#include "gpuenv/core.h"
#include "gpuenv/env.h"
#include "gpuenv/index.h"
#include "gpuenv/install.h"
#include "gpuenv/pep508.h"
#include "gpuenv/pylock.h"
#include "gpuenv/txn.h"
#include "gpuenv/venv.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpuenv_tagset;

/* ---- source builds: the hook gpuenv/build.h fills ----------------------- */

/* One lock package that is built from source. */
typedef struct gpuenv_sync_source {
	const gpuenv_lock_package_t *pkg;
	/* the source file built: the sdist entry, or an archive entry that is
	 * not a wheel (PEP 751 archive: a direct URL or path), its name set */
	const gpuenv_lock_file_t *sdist;
	const char *sdist_path; /* its local path, absolute; NULL: its url */
	const char *directory;	/* a directory entry's path, absolute; NULL: an sdist */
	bool editable;		/* PEP 660 (a directory entry marked editable) */
} gpuenv_sync_source_t;

/* What a build gave sync to install. */
typedef struct gpuenv_sync_built {
	const char *wheel;	/* the wheel file */
	const char *wheel_name;
	const char *sha256;	/* hex, of the wheel */
	const char *key;	/* the build's key (recorded in the dist-info) */
} gpuenv_sync_built_t;

typedef struct gpuenv_sync_builder {
	void *self;
	/* The key of src's build for this venv (64 hex digits, in arena),
	 * computed without building: a source package installed with the
	 * same version and key is kept, else it is built and reinstalled.
	 * 0 or an error (ctx->err set). */
	int (*key)(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_sync_source_t *src,
		const char **key);
	/* Build src (or reuse its cached wheel): 0 with out filled, or an
	 * error (ctx->err: the package, the log).  Called by commit before the
	 * wheels are unpacked. */
	int (*build)(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_cache_t *cache,
		gpuenv_index_t *ix, const gpuenv_sync_source_t *src, gpuenv_sync_built_t *out);
	/* Optional: true for a package built against the venv itself (no
	 * isolation: [tool.gpuenv] build-against-env).  commit then works in
	 * two rounds, two transactions: everything else first, then these,
	 * built when the venv holds what their build imports (torch). */
	bool (*deferred)(void *self, const char *name);
} gpuenv_sync_builder_t;

/* The dist-info file that records a source build's key (JSON:
 * {"key": "...", "source": "sdist"|"directory"|"editable"}). */
#define GPUENV_SYNC_BUILD_INFO "gpuenv-build.json"

typedef struct gpuenv_sync_opts {
	const gpuenv_lock_t *lock;
	const char *lock_path;		 /* for messages */
	const char *lock_dir;		 /* relative path entries start here */
	const gpuenv_venv_t *venv;
	const gpuenv_marker_env_t *env;	 /* the venv's interpreter on this machine */
	const struct gpuenv_tagset *tags; /* the wheel tags it supports */
	/* direct dependencies (normalised names): REQUESTED is written for them */
	const char *const *requested;
	size_t nrequested;
	int link_mode;	/* enum gpuenv_link_mode */
	bool compile;	/* byte-compile (pip's --compile) */
	bool reinstall; /* reinstall every package even when the version matches */
	bool wait;	/* wait for another gpuenv working on the venv */
	const gpuenv_unpack_limits_t *limits; /* NULL: the defaults */
	/* source builds; build NULL: sdist and directory entries are refused */
	gpuenv_sync_builder_t builder;
	/* lock packages left out (normalised names; `--no-install-project`):
	 * planned as if their marker were false (an installed copy goes) */
	const char *const *skip;
	size_t nskip;
} gpuenv_sync_opts_t;

enum gpuenv_sync_op {
	GPUENV_SYNC_KEEP = 0,
	GPUENV_SYNC_INSTALL = 1,
	GPUENV_SYNC_UPGRADE = 2, /* another version or build replaces the installed one */
	GPUENV_SYNC_REINSTALL = 3,
	GPUENV_SYNC_REMOVE = 4,
};

GPUENV_API const char *gpuenv_sync_op_name(int op);

typedef struct gpuenv_sync_action {
	int op;				   /* enum gpuenv_sync_op */
	const char *name;		   /* normalised */
	const char *old_version;	   /* installed, NULL: none */
	const char *new_version;	   /* locked, NULL: removal */
	const gpuenv_lock_package_t *pkg;  /* NULL: removal */
	const gpuenv_lock_file_t *file;	   /* the wheel chosen */
	const gpuenv_env_dist_t *dist;	   /* the installed one, NULL: none */
	/* a source build (file NULL): its key, and the source handed to the
	 * builder; NULL for wheels */
	const char *build_key;
	const gpuenv_sync_source_t *source;
} gpuenv_sync_action_t;

typedef struct gpuenv_sync_plan {
	size_t n;
	const gpuenv_sync_action_t *actions; /* by name */
	size_t count[5];		     /* per enum gpuenv_sync_op */
	size_t nskipped;		     /* lock packages whose marker is false */
	gpuenv_txn_report_t recovery;	     /* what begin recovered */
} gpuenv_sync_plan_t;

typedef struct gpuenv_sync_result {
	size_t installed, removed; /* distributions */
	size_t downloaded, unpacked, repaired;
	size_t files;		/* files placed */
	size_t built;		/* source packages built or taken from the build cache */
	uint64_t bytes;		/* downloaded */
	int link_mode_used;	/* the weakest mode a file needed */
	gpuenv_txn_report_t txn;
	/* where the time went, seconds: the cache (fetch, check, unpack),
	 * staging, the transaction's commit */
	double secs_cache, secs_stage, secs_commit;
	double secs_build; /* source builds (cached ones included) */
} gpuenv_sync_result_t;

typedef struct gpuenv_sync gpuenv_sync_t;

/* Lock the venv, recover, plan.  A venv whose site is NULL (not made yet,
 * for a dry run) is planned as empty, with nothing locked; commit refuses.
 * 0 with *out (free with gpuenv_sync_end), or an error (ctx->err: the
 * package, the lock, what is wrong, the fix). */
GPUENV_API int gpuenv_sync_begin(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_sync_opts_t *opts,
	gpuenv_sync_t **out);
GPUENV_API const gpuenv_sync_plan_t *gpuenv_sync_plan(const gpuenv_sync_t *s);

/* Carry the plan out: wheels through cache (ix may be NULL when nothing
 * needs a download), staged, committed.  On error the venv is as it was
 * (with deferred sources: as it was after the first round, which holds
 * every other package of the plan). */
GPUENV_API int gpuenv_sync_commit(gpuenv_sync_t *s, gpuenv_cache_t *cache, gpuenv_index_t *ix,
	const gpuenv_cache_progress_t *progress, gpuenv_sync_result_t *res);

/* Release the venv; an uncommitted plan is dropped.  NULL is fine. */
GPUENV_API void gpuenv_sync_end(gpuenv_sync_t *s);

#ifdef __cplusplus
}
#endif
#endif
