/* The project layer: a manifest and its targets, locked against indexes.
 *
 *   manifest ──> per target: backend choice (KB) ──> provider over the
 *   index client ──> resolver ──> pylock.<target>.toml
 *
 * The provider (lib/project/provider.c) turns index pages into the
 * resolver's candidates for ONE target: wheels whose tags the target
 * supports, files whose requires-python its Python meets, the torch family
 * from the target's build only (never a CPU build for a GPU target), each
 * torch build judged by the knowledge base for the target's GPUs and
 * driver.  While the resolver works it crawls ahead: the pages of every
 * name the newest candidates require and those candidates' metadata, in
 * parallel batches, so a cold lock costs a few round trips, not one per
 * package.
 */
#ifndef GPUENV_PROJECT_H
#define GPUENV_PROJECT_H

#include "gpuenv/core.h"
#include "gpuenv/index.h"
#include "gpuenv/kb.h"
#include "gpuenv/manifest.h"
#include "gpuenv/pylock.h"
#include "gpuenv/resolve.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpuenv_tagset;

/* An sdist whose PKG-INFO does not hold its dependencies (Metadata-Version
 * before 2.2, or Requires-Dist marked Dynamic: PEP 643), as the provider
 * hands it to the hook below. */
typedef struct gpuenv_pv_sdist {
	const char *name;	 /* normalised, from the file name */
	const char *version;	 /* as the file name writes it */
	const gpuenv_index_file_t *file;
	const char *python;	 /* the target's Python ("3.12"), or NULL */
	const char *target_name; /* for messages, or NULL */
} gpuenv_pv_sdist_t;

/* How the lock learns such an sdist's dependencies: its build backend's
 * METADATA (PEP 517 prepare_metadata_for_build_wheel).  The build module
 * sits above this one (builder/ ──► project/), so the caller fills this
 * hook (gpuenv_meta_builder_hook, gpuenv/build.h); NULL metadata: such
 * sdists are refused.  metadata: the METADATA text (in arena, checked to
 * name sd's project and version), ix the lock's index client; 0 or the
 * error (GPUENV_EBUILD: the backend failed or ran past its time, ctx->err
 * names the package, its hint the build log). */
/* A source tree a direct reference names (a path dependency, a git
 * checkout): an sdist already unpacked, its metadata asked the same way. */
typedef struct gpuenv_pv_tree {
	const char *name;	 /* normalised: the dependency's */
	const char *dir;	 /* absolute */
	/* 64 hex digits naming the tree's content for the metadata cache (a
	 * git checkout: its URL, commit and subdirectory), NULL: a tree that
	 * may change (a local folder), asked every time */
	const char *key;
	const char *python;	 /* the target's Python ("3.12"), or NULL */
	const char *target_name; /* for messages, or NULL */
} gpuenv_pv_tree_t;

typedef struct gpuenv_pv_sdist_meta {
	void *self;
	int (*metadata)(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix,
		const gpuenv_pv_sdist_t *sd, gpuenv_str_t *out);
	/* the same for a source tree (tr->name checked against the answer;
	 * its version is the tree's); NULL: direct references to source
	 * trees are refused */
	int (*tree)(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix,
		const gpuenv_pv_tree_t *tr, gpuenv_str_t *out);
} gpuenv_pv_sdist_meta_t;

/* A dependency that does not come from an index (gpuenv_direct_t), made
 * ready for the lock (lib/project/direct.c): its one candidate, and what
 * its PEP 751 entry records (one of directory, vcs, archive). */
typedef struct gpuenv_pv_direct {
	const char *name;	     /* normalised */
	const char *version;	     /* its metadata's */
	const char *requires_python; /* its metadata's, or NULL */
	const gpuenv_requirement_t *reqs; /* its Requires-Dist */
	size_t nreqs;
	const char *directory;	     /* as the lock writes it (relative to the
					lock's folder, or absolute) */
	bool editable;
	const gpuenv_lock_vcs_t *vcs;
	const gpuenv_lock_file_t *archive;
	const char *subdirectory;
	const char *tree;	     /* the source tree read (absolute), or NULL */
} gpuenv_pv_direct_t;

typedef struct gpuenv_pv_opts {
	gpuenv_index_t *ix;
	const struct gpuenv_tagset *tags; /* the target's wheel tags */
	const char *python;		 /* "3.12" or "3.12.3": requires-python */
	const char *target_name;	 /* for messages */
	const gpuenv_marker_env_t *env;	 /* for the crawl's marker checks */
	/* where names come from: a dependency's source, the torch family's
	 * build index; others follow the priority rule */
	size_t nroutes;
	const char *const *route_names;	  /* normalised; or glob patterns (fnmatch) */
	const char *const *route_sources; /* source names */
	/* the torch family (gpuenv_project_torch_routed) comes from this
	 * source when set; backend is the build it must have ("cu126",
	 * "cpu"), NULL: any */
	const char *torch_source;
	const char *backend;
	bool gpu; /* a GPU target: CPU-only torch builds are left out */
	/* no torch build runs on the target: why (every torch-family wheel is
	 * left out with it), or NULL */
	const char *torch_error;
	/* hw_strict: leave out torch builds the KB cannot confirm for the
	 * target (no arch list), as gpuenv_kb_torch_pick ranks them last;
	 * experimental: allow builds of the experimental channel (the user
	 * named the backend) */
	bool hw_strict, experimental;
	/* the declared target, for the CUDA-suffixed names' check
	 * (gpuenv_manifest_cuda_check); NULL: none */
	const gpuenv_manifest_target_t *mtarget;
	/* hardware judgement of torch builds (NULL kb: none) */
	const gpuenv_kb_t *kb;
	const gpuenv_kb_target_t *kbt;
	size_t nkbt;
	/* pip's format control: names (normalised) or ":all:" whose sdists
	 * are not used (only_binary) or whose wheels are not (no_binary) */
	const char *const *only_binary;
	size_t nonly_binary;
	const char *const *no_binary;
	size_t nno_binary;
	/* the names the crawl starts from (the root requirements) */
	const gpuenv_requirement_t *roots;
	size_t nroots;
	/* torch-backend "auto" on a GPU target: the build comes from what the
	 * sources offer.  offer_sources[0..noffers): the source names of the
	 * torch index's builds (<torch-index>/<tag>/, one per tag the KB
	 * knows); with the usual rule's source they are asked for torch once,
	 * each torch wheel's build read from the wheel
	 * (gpuenv_project_wheel_build), and the KB's pick among the builds
	 * that exist decides the torch family's source (docs/lock.md) */
	size_t noffers;
	const char *const *offer_sources;
	const char *torch_index; /* for messages: the torch index's root */
	const gpuenv_kb_ver_t *fav_series; /* the KB's favourite's series ("2.14") */
	/* sdists with dynamic metadata (see above); zero: refused */
	gpuenv_pv_sdist_meta_t sdist_meta;
	/* names that do not come from an index: each one candidate */
	size_t ndirect;
	const gpuenv_pv_direct_t *direct;
} gpuenv_pv_opts_t;

typedef struct gpuenv_pv gpuenv_pv_t;

/* The file one candidate stands for (candidate->data). */
typedef struct gpuenv_pv_file {
	const gpuenv_index_file_t *file;
	const gpuenv_index_project_t *project;
	const char *reason; /* why this build (torch family), or NULL */
	/* a torch wheel's build as read from it ("cu128", "cpu"), NULL when
	 * not read or unknown */
	const char *build;
	bool sdist;	    /* a source distribution (no usable wheel of its
			       version): locked as PEP 751 sdist */
	/* a direct reference (file and project NULL then) */
	const gpuenv_pv_direct_t *direct;
} gpuenv_pv_file_t;

GPUENV_API int gpuenv_pv_new(gpuenv_ctx_t *ctx, const gpuenv_pv_opts_t *opts, gpuenv_pv_t **out);
GPUENV_API void gpuenv_pv_free(gpuenv_pv_t *pv);
/* The provider interface over pv (valid while pv lives). */
GPUENV_API void gpuenv_pv_provider(gpuenv_pv_t *pv, gpuenv_provider_t *out);

/* What the provider saw of the torch builds the sources offer (opts'
 * offer_sources), NULL before it looked or when it did not. */
typedef struct gpuenv_pv_torch_offer {
	const char *tag;      /* the build taken ("cu129"), NULL: none runs */
	bool fav_tag_offered; /* the KB's favourite tag (opts->backend) is there */
	bool fav_offered;     /* ... in the favourite's release series */
	const char *offered;  /* "2.8.0+cu126, 2.8.0+cu129, 2.8.0 (cpu), ..." */
	const char *where;    /* the indexes asked, for messages */
	const char *runs_on;  /* the target: "sm_90 with driver 580.159.04" */
} gpuenv_pv_torch_offer_t;
GPUENV_API const gpuenv_pv_torch_offer_t *gpuenv_pv_torch_offer(const gpuenv_pv_t *pv);

/* ---- a wheel's build (lib/project/wheel_build.c) ------------------------ */

enum gpuenv_build_kind {
	GPUENV_BUILD_UNKNOWN = 0, /* nothing in the wheel says */
	GPUENV_BUILD_CPU,	  /* no CUDA code */
	GPUENV_BUILD_CUDA,	  /* tag "cu128"; cuda_major alone when only a
				     CUDA-suffixed requirement names it */
	GPUENV_BUILD_OTHER,	  /* another accelerator's build ("rocm6.2") */
};
typedef struct gpuenv_wheel_build {
	int kind;	/* enum gpuenv_build_kind */
	char tag[24];	/* "cu128", "cpu", "rocm6.2"; "" when unknown */
	int cuda_major; /* GPUENV_BUILD_CUDA: the CUDA major */
	/* how it was read: "its local version", "its requirement
	 * nvidia-cuda-runtime-cu12==12.8.90", "no nvidia-* requirement on
	 * Linux x86_64", ... (static text or in arena) */
	const char *how;
} gpuenv_wheel_build_t;

/* The build of a torch-family wheel, read from the wheel: its local
 * version ("+cu128", "+cpu") where it has one; otherwise its requirements
 * (reqs[0..nreqs), markers judged in env): an nvidia-cuda-runtime /
 * cuda-toolkit pin names the CUDA version (PyPI's Linux torch), another
 * CUDA-suffixed nvidia-* requirement its major (the KB's PyPI build of the
 * release then names the tag); none on a manylinux x86_64 or aarch64
 * wheel is a CPU build; a plain linux_aarch64 wheel is a JetPack build
 * carrying L4T CUDA, the tag read from source_url's last part
 * (".../jp6/cu126") when it names one.  reqs NULL: the local version
 * only.  0, or -ENOMEM. */
GPUENV_API int gpuenv_project_wheel_build(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const char *filename, const gpuenv_requirement_t *reqs, size_t nreqs, const gpuenv_marker_env_t *env,
	const char *source_url, gpuenv_wheel_build_t *out);

/* The lock-time check of a target's stack: the pins of nvidia-cudnn-*,
 * nvidia-nccl-* and tensorrt among roots[0..nroots) beside the locked torch
 * (res's entry torch, of build tag) that the KB says was built with other
 * versions and that carries its own copy (its wheel does not require the
 * package).  *out[0..*nout): one warning each, naming the package (for its
 * [packages.tool.gpuenv] reason), in arena.  0, or -ENOMEM. */
typedef struct gpuenv_stack_warning {
	const char *package; /* the pinned package (normalised) */
	const char *text;
} gpuenv_stack_warning_t;
GPUENV_API int gpuenv_project_stack_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const char *target, const gpuenv_requirement_t *roots, size_t nroots, const gpuenv_resolution_t *res,
	const gpuenv_resolved_t *torch, const char *tag, gpuenv_stack_warning_t **out, size_t *nout);

/* ---- locking one target ------------------------------------------------ */

typedef struct gpuenv_project_lock_req {
	const gpuenv_manifest_t *m;
	const gpuenv_manifest_target_t *t;
	/* the target's torch build, or NULL when none runs (torch_error then
	 * says why) */
	const gpuenv_backend_choice_t *backend;
	const char *torch_error;
	/* the source name under which backend->index_url is registered in ix */
	const char *torch_source;
	/* torch-backend "auto" on a GPU target: the sources of every build
	 * of the torch index (gpuenv_pv_opts_t's offer_sources) */
	size_t noffers;
	const char *const *offer_sources;
	gpuenv_index_t *ix;
	const gpuenv_kb_t *kb; /* may be NULL: no hardware judgement */
	bool pre; /* pre-releases allowed everywhere (pip's --pre) */
	/* pip's format control (normalised names or ":all:") */
	const char *const *only_binary;
	size_t nonly_binary;
	const char *const *no_binary;
	size_t nno_binary;
	/* the versions to keep (a stable lock: gpuenv_project_preferences),
	 * given to the resolver as they are */
	const gpuenv_preference_t *prefer;
	size_t nprefer;
	/* when set: the resolution's inputs appended as a packse-format
	 * scenario (gpuenv_scenario_write), solved or not, so a failing real
	 * resolution replays with `gpuenv debug resolve` and no index */
	gpuenv_buf_t *dump;
	/* sdists with dynamic metadata asked of their build backend (zero:
	 * refused) */
	gpuenv_pv_sdist_meta_t sdist_meta;
	/* the cache git dependencies and archives by URL are fetched into
	 * (NULL: the default) */
	const char *cache_dir;
	/* archives by URL fetched again even when the cache has them (lock
	 * --refresh) */
	bool refresh;
} gpuenv_project_lock_req_t;

typedef struct gpuenv_project_lock_out {
	gpuenv_resolution_t res;
	gpuenv_lock_t lock; /* valid when the resolution succeeded */
	/* the torch build the lock holds (backend: the build read from the
	 * locked torch wheel; reason: naming the locked release), valid when
	 * locked.backend is set */
	gpuenv_backend_choice_t locked;
	/* the stack check's warnings (gpuenv_project_stack_check), lines */
	const char *warnings;
	gpuenv_buf_t text;  /* the lock as TOML (caller frees) */
	gpuenv_pv_t *pv;    /* owns the strings res and lock point to */
} gpuenv_project_lock_out_t;

/* Resolve one target and build its lock.  0, GPUENV_ENOSOLUTION
 * (out->res.explanation says why), or an error with ctx->err set.  The
 * text buffer is initialised in every case. */
GPUENV_API int gpuenv_project_lock_target(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_project_lock_req_t *req, gpuenv_project_lock_out_t *out);

/* Plain requirements locked for one interpreter (added for source builds:
 * a build environment's [build-system] requires): the provider over ix
 * with the interpreter's tags and Python, wheels only (pip's
 * --only-binary :all:, no sdist is built to build another), no torch
 * routing, no target; the lock has packages and environments only. */
typedef struct gpuenv_project_reqs {
	gpuenv_index_t *ix;
	const struct gpuenv_tagset *tags;
	const char *python;		/* "3.12.1" */
	const gpuenv_marker_env_t *env;
	const char *what;		/* for messages ("build requirements of foo 1.0") */
	const gpuenv_requirement_t *roots;
	size_t nroots;
} gpuenv_project_reqs_t;

/* 0, GPUENV_ENOSOLUTION (out->res.explanation), or an error; free out
 * with gpuenv_project_lock_out_free in every case. */
GPUENV_API int gpuenv_project_lock_reqs(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_reqs_t *req,
	gpuenv_project_lock_out_t *out);

/* Frees what gpuenv_project_lock_target kept (the arena's parts stay). */
GPUENV_API void gpuenv_project_lock_out_free(gpuenv_project_lock_out_t *out);

/* The hash a target's lock records in [tool.gpuenv] inputs-hash: the
 * manifest's inputs with the target's facts (a probed target's machine
 * included), hex, in arena. */
GPUENV_API const char *gpuenv_project_inputs_hash(gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t);

/* The lock file of a target: "pylock.<name>.toml", or "pylock.toml" for
 * the probed machine of a project that declares no targets. */
GPUENV_API const char *gpuenv_project_lock_name(gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t);

/* The packages published per torch build on a torch index (torch,
 * torchvision, torchaudio, ...): routed to the target's build. */
GPUENV_API bool gpuenv_project_torch_routed(const char *name);

/* ---- the project session: opened once, its targets, their locks --------
 * (lib/project/session.c, freshness.c).  What lock, sync, tree, export and
 * labels share: the manifest and the KB loaded once, the targets declared
 * (or the machine a probe describes, for a project that declares none),
 * each target's lock by its path and whether it is fresh. */

struct gpuenv_facts;

typedef struct gpuenv_project {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t arena;
	gpuenv_kb_t *kb;
	gpuenv_manifest_t m;
	const char *dir;  /* the project directory (locks are written there) */
	const char *path; /* its pyproject.toml */
	const gpuenv_manifest_target_t *targets; /* the declared ones, or the machine */
	size_t ntargets;
} gpuenv_project_t;

/* Open project (a directory or a pyproject.toml; NULL: "."): the KB
 * (kb_dir's files replace the built-in ones), the manifest, its declared
 * targets; torch_index replaces [tool.gpuenv] torch-index.  0, or the
 * error; pj is always safe to close. */
GPUENV_API int gpuenv_project_open(gpuenv_ctx_t *ctx, const char *project, const char *kb_dir,
	const char *torch_index, gpuenv_project_t *pj);
/* The machine facts describe as the one target ("auto") of a project that
 * declares none, with the wheel platform it supports.  0, or the error
 * (no Python environment found: nothing to lock for). */
GPUENV_API int gpuenv_project_add_machine(gpuenv_project_t *pj, const struct gpuenv_facts *facts);
GPUENV_API void gpuenv_project_close(gpuenv_project_t *pj);

/* The target called name, or NULL. */
GPUENV_API const gpuenv_manifest_target_t *gpuenv_project_find_target(const gpuenv_project_t *pj,
	const char *name);
/* "<dir>/pylock.<target>.toml", in pj's arena (NULL: out of memory). */
GPUENV_API const char *gpuenv_project_lock_path(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t);
/* Read and parse the lock at path (its strings in arena).  0, or the error
 * (-ENOENT when there is none). */
GPUENV_API int gpuenv_project_read_lock(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_lock_t *lk);

enum gpuenv_lock_state {
	GPUENV_LOCK_FRESH = 0,	    /* made from these inputs */
	GPUENV_LOCK_STALE = 1,	    /* the manifest or the target changed since */
	GPUENV_LOCK_MISSING = 2,
	GPUENV_LOCK_UNREADABLE = 3,
};
/* "fresh", "stale", "missing", "unreadable". */
GPUENV_API const char *gpuenv_lock_state_name(int state);

/* Is target t's lock at path fresh?  *detail says why not (NULL when
 * fresh).  lk (may be NULL): a lock read already (lock_version set) is
 * judged as it is; otherwise the one read is stored there (lock_version
 * NULL when none could be read).  An enum gpuenv_lock_state, or -ENOMEM
 * (ctx->err set). */
GPUENV_API int gpuenv_project_lock_state(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t,
	const char *path, gpuenv_lock_t *lk, const char **detail);

/* ---- direct references (lib/project/direct.c) ----------------------------- */

/* The direct references among deps[0..ndeps) made ready for target t of
 * req: a path resolved against the manifest's folder and checked, a git
 * ref fetched and resolved to its commit, each tree's metadata asked
 * through req->sdist_meta.tree; an archive by URL fetched into the cache
 * (its #sha256= checked), a wheel's tags checked against tags (the
 * target's), its METADATA read, an sdist's PKG-INFO or, when that is not
 * static (PEP 643), its build backend's through req->sdist_meta.metadata.
 * *out[0..*n) in arena.  Errors name the manifest's file:line:col where
 * the reference is written. */
GPUENV_API int gpuenv_project_direct(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const struct gpuenv_tagset *tags, const gpuenv_dep_t *deps, size_t ndeps, gpuenv_pv_direct_t **out,
	size_t *n);

/* Do lk's git entries still name what their refs name on the remotes (git
 * ls-remote), and do its archives by URL still have the hash it records
 * (each fetched again through ix, into the cache at cache_dir, NULL: the
 * default, so that the next lock takes the new one)?  lock --check asks.
 * *detail: the first that changed ("alpha: the git ref 'v1' of URL moved
 * from 1a2b3c4d5e6f to 7a8b9c0d1e2f", "beta: the archive at URL changed
 * since it was locked (sha256 ... -> ...)"), NULL when none did.  0, or
 * the error (a remote could not be asked). */
GPUENV_API int gpuenv_project_lock_refs(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix,
	const char *cache_dir, const gpuenv_lock_t *lk, const char **detail);

/* Does lk have an archive entry by http(s) URL (its check needs an index
 * client)? */
GPUENV_API bool gpuenv_project_lock_has_remote_archive(const gpuenv_lock_t *lk);

/* ---- archives by URL (lib/project/archive.c) -------------------------------
 * A wheel or an sdist a dependency names by URL, fetched into
 *   <cache>/archives/<sha256(url)[0:2]>/<sha256(url)>/<file name>
 * through the index client's download (hashed as the bytes arrive); the
 * lock reads its metadata from there. */
typedef struct gpuenv_archive {
	const char *path;  /* the copy in the cache (in arena) */
	const char *name;  /* its file name: the URL's last segment, decoded */
	char sha256[65];   /* 64 hex digits */
	int64_t size;
	bool fetched;	   /* downloaded by this call */
} gpuenv_archive_t;

/* url's archive (cache_dir NULL: the default cache): the copy in the cache
 * when there is one, refresh is false and its sha256 is want_sha256 (NULL:
 * any); else fetched through ix (NULL: file:// only) and checked against
 * want_sha256 (64 lower-case hex digits, or NULL).  0, or the error with
 * no position (the download's: an HTTP status, a hash mismatch naming
 * both hashes, a connection that failed). */
GPUENV_API int gpuenv_project_archive(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix,
	const char *cache_dir, const char *url, const char *want_sha256, bool refresh, gpuenv_archive_t *out);

/* ---- stable locks (lib/project/prefer.c) ---------------------------------
 * A target is locked again with the versions of its existing lock
 * preferred: each one is kept while the requirements still allow it, new
 * or changed requirements get the newest that fits.  An upgrade names what
 * moves. */

typedef struct gpuenv_upgrade {
	bool all;		     /* --upgrade: nothing is kept */
	size_t n;		     /* --upgrade-package NAME[==VERSION] */
	const char *const *names;    /* normalised */
	const char *const *versions; /* the VERSION named, or NULL: the newest */
} gpuenv_upgrade_t;

/* up (may be NULL) upgrades name: all, or named. */
GPUENV_API bool gpuenv_upgrade_has(const gpuenv_upgrade_t *up, const char *name);

/* What changed in target t's hardware since old (a lock's [tool.gpuenv]
 * target) was written: "driver 535.104.05 -> 560.35.03" (the GPU, its
 * compute capability or the driver), in arena; NULL when nothing did or
 * old records no target. */
GPUENV_API const char *gpuenv_project_target_change(gpuenv_arena_t *arena, const gpuenv_lock_target_t *old,
	const gpuenv_manifest_target_t *t);

/* The resolver's preferences from old (NULL: no lock yet) and up (may be
 * NULL): every locked version (the project's own entry left out) unless
 * up->all or up names it; up's names decided first, at their VERSION or
 * the newest; the torch family's versions left out when hw_changed.  In
 * arena.  0, or -ENOMEM (recorded). */
GPUENV_API int gpuenv_project_preferences(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_lock_t *old,
	const gpuenv_upgrade_t *up, bool hw_changed, gpuenv_preference_t **out, size_t *n);

/* One package's change between two locks of a target. */
typedef struct gpuenv_lock_change {
	const char *name;
	const char *from; /* NULL: added */
	const char *to;	  /* NULL: removed */
} gpuenv_lock_change_t;

/* The changes from old (NULL: none) to now, by name (the project's own
 * entry left out), in arena.  0, or -ENOMEM (recorded). */
GPUENV_API int gpuenv_project_lock_diff(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_lock_t *old,
	const gpuenv_lock_t *now, gpuenv_lock_change_t **out, size_t *n);

/* ---- locking the project's targets (lib/project/lock_targets.c) --------- */

/* One target locked, as gpuenv_project_lock reports it (valid during the
 * callback only). */
typedef struct gpuenv_project_locked {
	const gpuenv_manifest_target_t *t;
	const char *lock_name, *lock_path;
	/* "written", "unchanged", "no-solution" or "error" ("outdated" with
	 * opts->dry_run: the lock would change) */
	const char *status;
	int rc;		    /* 0, GPUENV_ENOSOLUTION, or the error */
	const char *error;  /* status "error": the error's line, and its hint ("" none) */
	const char *hint;
	double secs;
	/* the torch build: the KB's choice, or why none runs (torch_error) */
	const gpuenv_backend_choice_t *backend;
	const char *torch_error;
	const gpuenv_resolution_t *res; /* rc 0: the packages; no-solution: the explanation */
	const char *torch;		/* torch's version in the lock, or NULL */
	const char *warnings;		/* the stack check's lines, or NULL */
	/* with opts->dump_dir: the scenario written, or why not */
	const char *dump_path, *dump_error;
	/* stable locks: a lock was there before (old_lock), what changed
	 * from it (rc 0), what in the target's hardware changed since
	 * (target_change, NULL: nothing) and its torch build then
	 * (old_backend, NULL: none); backend_kept: the locked build stays
	 * although the KB picks another now (backend_pick) */
	bool old_lock;
	size_t nchanges;
	const gpuenv_lock_change_t *changes;
	const char *target_change, *old_backend, *backend_pick;
	bool backend_kept;
	/* the source the torch family came from (NULL: no torch build) */
	const char *torch_source;
} gpuenv_project_locked_t;

typedef struct gpuenv_project_lock_opts {
	/* the index: the project's sources with the command line's
	 * replacements (sources, nsources), the cache, offline, the transfer
	 * limits, progress; the torch builds' indexes are added */
	gpuenv_index_opts_t index;
	bool pre;
	const char *const *only_binary, *const *no_binary; /* pip's format control */
	size_t nonly_binary, nno_binary;
	/* what may move from the existing locks (nothing: all kept that
	 * still fits) */
	gpuenv_upgrade_t upgrade;
	/* resolve but write no lock (status "unchanged" or "outdated": the
	 * lock would change) */
	bool dry_run;
	/* write each target's resolution inputs as DIR/scenario.<target>.toml */
	const char *dump_dir;
	/* sdists with dynamic metadata asked of their build backend (zero:
	 * refused); the caller fills it (gpuenv_meta_builder_hook) */
	gpuenv_pv_sdist_meta_t sdist_meta;
	/* each target's outcome, in order */
	void (*done)(void *ud, const gpuenv_project_locked_t *r);
	void *ud;
} gpuenv_project_lock_opts_t;

/* The index client over opts->index's sources and extra ones. */
GPUENV_API int gpuenv_project_index_open(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_index_source_t *extra, size_t nextra, gpuenv_index_t **ix);

/* Lock the targets pick[0..npick): each target's torch build first (its
 * index joins the sources), then each target resolved and its lock written
 * when it changed (opts->done says how each went).  *ix_out: the index
 * client used (the caller closes it; NULL on error).  0 when every target
 * was handled (*worst: 0, 1 some target has no solution, 4 some lock could
 * not be made or written, or opts->dump_dir's scenario not written), or the
 * error that stopped it all. */
GPUENV_API int gpuenv_project_lock(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_index_t **ix_out, int *worst);

/* ---- outdated packages (lib/project/outdated.c; gpuenv outdated) -------- */

typedef struct gpuenv_outdated_pkg {
	const char *name;    /* normalised */
	const char *locked;  /* the version in the lock */
	/* the newest version the sources offer (any file, not yanked;
	 * pre-releases only when the locked one is one), NULL: none found */
	const char *latest;
	/* the newest the project's constraints allow on the target: what
	 * `lock --upgrade` takes; NULL: no longer needed (or no solution) */
	const char *allowed;
	bool torch_family;   /* gpuenv_project_torch_routed */
	/* torch: the knowledge base's verdict on the target for latest and
	 * allowed (enum gpuenv_kb_verdict), -1 when not asked; why: a reason */
	int latest_runs, allowed_runs;
	const char *latest_why, *allowed_why;
} gpuenv_outdated_pkg_t;

typedef struct gpuenv_outdated {
	const gpuenv_manifest_target_t *t;
	const char *lock_name;
	int state;	    /* enum gpuenv_lock_state of its lock */
	const char *detail; /* why not fresh, or why the upgrade failed */
	int rc;		    /* the upgrade resolution's: 0, GPUENV_ENOSOLUTION, an error */
	size_t npkgs;	    /* the lock's packages (the project's own left out) */
	const gpuenv_outdated_pkg_t *pkgs;
	size_t noutdated;   /* packages whose allowed is not the locked version */
} gpuenv_outdated_t;

/* For each target pick[i] with a lock, its packages against the sources
 * (opts: the index as lock takes it; its upgrade, dry_run and callback
 * are replaced): *out[0..npick) in pj's arena.  Nothing is written.  0, or
 * the error that stopped it (a page that could not be fetched). */
GPUENV_API int gpuenv_project_outdated(gpuenv_project_t *pj, const gpuenv_project_lock_opts_t *opts,
	const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_outdated_t **out);

/* ---- does this machine run a target (lib/project/fit.c; sync --target
 * auto, labels) ------------------------------------------------------------ */

struct gpuenv_fit;

/* What a light probe leaves out, from the KB: a GPU's compute capability
 * by its name, the newest CUDA the driver runs by its version.  0, or
 * -ENOMEM (recorded). */
GPUENV_API int gpuenv_project_machine_from_kb(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb, gpuenv_arena_t *arena,
	gpuenv_target_t *t);
/* This machine as a target, completed from the KB: facts (a snapshot), or
 * NULL for a light probe (sysfs and procfs: GPUs, driver, host; NVML's
 * start alone costs more than a no-op sync may).  0, or the error. */
GPUENV_API int gpuenv_project_machine(gpuenv_project_t *pj, const struct gpuenv_facts *facts, gpuenv_target_t *out);
/* The CUDA ("12.6") of target t's locked torch build into buf, or NULL when
 * there is no readable lock (then judged by the target's driver); *lk and
 * *lk_path get the lock read (zeroed / NULL when none). */
GPUENV_API const char *gpuenv_project_locked_cuda(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t,
	gpuenv_lock_t *lk, const char **lk_path, char *buf, size_t bufsz);
/* gpuenv_target_fit of machine against t with its locked build's CUDA: the
 * one judgement of sync --target auto and labels.  0, or -ENOMEM. */
GPUENV_API int gpuenv_project_fit(gpuenv_project_t *pj, const gpuenv_target_t *machine,
	const gpuenv_manifest_target_t *t, gpuenv_lock_t *lk, const char **lk_path, struct gpuenv_fit *fit);
/* The target machine runs best (--target auto): its index, or SIZE_MAX
 * when none does; fits[0..pj->ntargets) get every judgement (in pj's
 * arena), *lk / *lk_path the lock read last.  0, or -ENOMEM. */
GPUENV_API int gpuenv_project_pick(gpuenv_project_t *pj, const gpuenv_target_t *machine, struct gpuenv_fit **fits,
	gpuenv_lock_t *lk, const char **lk_path, size_t *best);

/* ---- syncing one target's venv (lib/project/sync_target.c) ------------- */

struct gpuenv_venv;
struct gpuenv_sync_opts;
struct gpuenv_marker_env;

enum gpuenv_project_venv_made {
	GPUENV_VENV_OPENED = 0,	 /* there already, of the lock's Python */
	GPUENV_VENV_CREATED = 1, /* made for an interpreter that fits */
	GPUENV_VENV_DRY = 2,	 /* would be made (dry run): venv->site NULL */
};

/* The venv of a sync: dir (NULL: <project>/.venv) opened, or made for the
 * interpreter python (NULL: the lock's Python) when missing (dry_run: only
 * described).  A venv of another Python than the lock's is refused
 * (GPUENV_EUNSUPPORTED, with the fix); no interpreter that fits:
 * GPUENV_ENOTFOUND.  0 with *made an enum gpuenv_project_venv_made, or the
 * error. */
GPUENV_API int gpuenv_project_venv(gpuenv_project_t *pj, const char *dir, const char *python, bool dry_run,
	const gpuenv_lock_t *lk, struct gpuenv_venv *venv, int *made);

/* The wheel tags (*tags: free with gpuenv_tagset_free) and PEP 508 marker
 * environment (env: filled, its strings in arena) of interpreter py on this
 * machine, as a venv of it installs for.  0, or the error. */
struct gpuenv_python;
GPUENV_API int gpuenv_project_python_views(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const struct gpuenv_python *py,
	struct gpuenv_tagset **tags, gpuenv_marker_env_t *env);

/* What gpuenv_sync_begin needs for venv on this machine, in so: the wheel
 * tags and marker environment of its interpreter (*tags: free with
 * gpuenv_tagset_free; env: filled), the lock and its directory, the target's
 * direct dependencies (REQUESTED), the project's own package left out when
 * skip_project.  The link mode and flags are the caller's.  0, or the error. */
GPUENV_API int gpuenv_project_sync_opts(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t,
	const gpuenv_lock_t *lk, const char *lock_path, const struct gpuenv_venv *venv, bool skip_project,
	struct gpuenv_tagset **tags, struct gpuenv_marker_env *env, struct gpuenv_sync_opts *so);

#ifdef __cplusplus
}
#endif
#endif
