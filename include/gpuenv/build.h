/* gpuenv build: PEP 517 builds of source distributions and source trees
 * into wheels (docs/build.md).
 *
 *   sdist (fetched, sha256 checked) or directory
 *     ──unpacked into a temporary folder──> pyproject.toml [build-system]
 *     ──build venv (gpuenv/venv.h) with `requires` locked by gpuenv's own
 *       resolver (gpuenv/project.h: gpuenv_project_lock_reqs) and installed
 *       by gpuenv's own installer (gpuenv/sync.h)──> the backend's
 *       get_requires_for_build_wheel (or _editable) installed the same way
 *     ──build_wheel / build_editable through gpuenv's hook runner (a Python
 *       script embedded in the binary, run with the build venv's
 *       interpreter, talking by JSON files)──> a wheel in the cache
 *
 * HOW TO CALL IT.  The build module sits ABOVE lib/install: it calls the
 * resolver and the installer to make its build venvs, so lib/install cannot
 * call it back by name.  `gpuenv sync` reaches it through a hook in its
 * options (gpuenv_sync_opts_t.builder, gpuenv/sync.h) that the caller (cli)
 * fills with gpuenv_builder_sync_hook():
 *
 *     gpuenv_build_opts_t bo = { .tags = tags, .marker_env = &env,
 *         .base_env = (const char *const *)environ, .env = extra, .nenv = n,
 *         .path_prefix = shims, .cuda_version = "13.0" };
 *     gpuenv_builder_t *b;
 *     gpuenv_builder_new(ctx, &bo, &b);
 *     gpuenv_builder_sync_hook(b, &sync_opts.builder);
 *     ... gpuenv_sync_begin / commit ...
 *     gpuenv_builder_free(b);
 *
 * The buildhw part (gpuenv/build_hw.h) fills `env` (CUDA_HOME, CUDA_PATH,
 * TORCH_CUDA_ARCH_LIST, MAX_JOBS) and `cuda_version`; the profile part's
 * trace shims go in `path_prefix`; `against_env` names the packages of
 * [tool.gpuenv] build-against-env (gpuenv_manifest_t.build_against_env),
 * built with no isolation by the target venv's own interpreter.  Other
 * callers (a `gpuenv build` verb, tests) call gpuenv_build_wheel directly.
 *
 * Built wheels are cached under <cache>/builds/<key[0:2]>/<key>/ (the key:
 * gpuenv_build_key), each build's log under <cache>/build-logs/; a cached
 * wheel is used again without running any hook.  The library prints
 * nothing: a failed build is GPUENV_EBUILD with ctx->err naming the package
 * and the hook, and the result's log path and log_tail for the caller.
 */
#ifndef GPUENV_BUILD_H
#define GPUENV_BUILD_H

#include "gpuenv/cache.h"
#include "gpuenv/core.h"
#include "gpuenv/index.h"
#include "gpuenv/pep508.h"
#include "gpuenv/project.h"
#include "gpuenv/sync.h"
#include "gpuenv/venv.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpuenv_tagset;

/* GPUENV_EBUILD (core.h's error table): a build backend ran and failed (or gave no wheel); the log says why */

/* The legacy default of PEP 517/518 when pyproject.toml has no
 * [build-system] (or no build-backend). */
#define GPUENV_BUILD_LEGACY_BACKEND "setuptools.build_meta:__legacy__"
#define GPUENV_BUILD_LEGACY_REQUIRES "setuptools>=40.8.0"

/* Caps on what a build hands back. */
#define GPUENV_BUILD_MAX_PYPROJECT ((size_t)4 << 20)
#define GPUENV_BUILD_MAX_RESULT ((size_t)1 << 20)
#define GPUENV_BUILD_MAX_REQUIRES 256
#define GPUENV_BUILD_LOG_TAIL 4000 /* bytes of the log's end in a result */

/* ---- pyproject.toml's [build-system] (PEP 518 / 517) -------------------- */

typedef struct gpuenv_build_system {
	size_t nrequires;
	const char *const *requires; /* PEP 508 strings, as written */
	const char *backend;	     /* "setuptools.build_meta", "pkg.mod:obj" */
	size_t nbackend_path;
	const char *const *backend_path; /* relative to the source tree */
	bool legacy;		     /* no [build-system] / build-backend: the
					defaults above were used */
} gpuenv_build_system_t;

/* Read [build-system] from the text of a pyproject.toml (file names it in
 * messages; text may be empty: no pyproject.toml, the legacy defaults).
 * requires must be an array of valid PEP 508 strings, build-backend a
 * "module.path[:object.path]", backend-path an array of relative paths
 * that stay inside the tree.  0 or GPUENV_ESYNTAX / GPUENV_ETYPE /
 * GPUENV_EREQ / GPUENV_ETOOBIG with file:line:col. */
GPUENV_API int gpuenv_build_system_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_build_system_t *out);

/* ---- the hook runner's answer -------------------------------------------
 * The runner writes one JSON object: {"ok": true, "return": VALUE} or
 * {"ok": false, "kind": "missing"|"error"|"unsupported", "message": TEXT,
 * "traceback": TEXT}.  "missing": the backend has no such (optional) hook. */
typedef struct gpuenv_hook_result {
	bool ok;
	const char *kind;	/* NULL when ok */
	const char *message;	/* NULL when ok */
	const char *traceback;	/* may be NULL */
	/* the return value: a string (build_wheel's file name) ... */
	const char *str;
	/* ... or a list of strings (get_requires_*) */
	size_t nlist;
	const char *const *list;
	bool is_list;
} gpuenv_hook_result_t;

/* Parse the runner's result file (file for messages; at most
 * GPUENV_BUILD_MAX_RESULT bytes).  GPUENV_EFORMAT for anything else than
 * the shape above. */
GPUENV_API int gpuenv_hook_result_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_hook_result_t *out);

/* ---- options, requests, results ------------------------------------------ */

typedef struct gpuenv_build_opts {
	/* the interpreter the build venvs are made for (the target venv's
	 * base interpreter), with its wheel tags and marker environment: the
	 * build requirements are resolved for exactly that */
	const gpuenv_python_t *python;
	const struct gpuenv_tagset *tags;
	const gpuenv_marker_env_t *marker_env;
	/* the environment a build starts from ("NAME=VALUE"; NULL: only
	 * PATH=/usr/local/bin:/usr/bin:/bin); PYTHONHOME, PYTHONPATH,
	 * PYTHONSTARTUP, VIRTUAL_ENV and PIP_* are dropped from it */
	const char *const *base_env;
	/* extra variables, "NAME=VALUE", set over base_env (buildhw:
	 * CUDA_HOME, CUDA_PATH, TORCH_CUDA_ARCH_LIST, MAX_JOBS) */
	const char *const *env;
	size_t nenv;
	/* folders put first on the build's PATH, ':'-separated (the trace's
	 * compiler shims), or NULL */
	const char *path_prefix;
	/* the CUDA version of the toolkit CUDA_HOME points at ("13.0"), NULL:
	 * none; part of the cache key */
	const char *cuda_version;
	/* no isolation (PEP 517 --no-isolation): these packages (normalised
	 * names) are built by against->python.real with against's packages,
	 * nothing installed for the build; NULL against: none */
	const gpuenv_venv_t *against;
	const char *const *against_names;
	size_t nagainst;
	/* where the build logs go; NULL: <cache>/build-logs */
	const char *log_dir;
	/* the build requirements' wheels only (no sdist builds inside a
	 * build): always true today; kept for the day it is not */
	const gpuenv_unpack_limits_t *limits;
	/* seconds a hook may run; 0: 3600 */
	unsigned timeout_s;
} gpuenv_build_opts_t;

typedef struct gpuenv_build_req {
	const char *name;	  /* normalised; the log's name */
	const char *version;	  /* the lock's, NULL: unknown (a directory) */
	/* the source: an sdist file ... */
	const char *sdist_url;	  /* http(s):// or file://, or NULL */
	const char *sdist_path;	  /* a local file, or NULL */
	const char *sdist_name;	  /* "foo-1.0.tar.gz" */
	const char *sdist_sha256; /* hex, required with an sdist */
	int64_t sdist_size;	  /* -1: unknown */
	/* ... or a directory (absolute) */
	const char *directory;
	bool editable;		  /* PEP 660 build_editable (a directory) */
	/* gpuenv_build_metadata of a directory: the tree's content named in
	 * 64 hex digits (a git checkout's URL and commit), its answer cached
	 * by it; NULL: asked every time */
	const char *meta_key;
} gpuenv_build_req_t;

typedef struct gpuenv_build_result {
	const char *key;	/* gpuenv_build_key */
	const char *wheel;	/* the built wheel's path (in the cache) */
	const char *wheel_name;
	const char *sha256;	/* of the wheel */
	const char *log;	/* the build log (kept), NULL when cached */
	const char *log_tail;	/* on GPUENV_EBUILD: the log's last lines */
	bool cached;		/* reused; no hook ran */
	bool isolated;		/* false: built against the target venv */
	double secs;
} gpuenv_build_result_t;

/* The cache key of a build (64 hex digits, in arena): the source (the
 * sdist's sha256; a directory's file contents, or for an editable build its
 * path and build files), editable or not, the interpreter (version, free
 * threading, machine), the isolation (the target venv for no-isolation
 * builds), cuda_version, and the values of the variables that change what
 * a compiler makes (the extra env, then CC, CXX, CFLAGS, CXXFLAGS,
 * CPPFLAGS, LDFLAGS, CUDA_HOME, CUDA_PATH, TORCH_CUDA_ARCH_LIST,
 * NVCC_FLAGS... from base_env: docs/build.md lists them; MAX_JOBS is not
 * among them).  Nothing is built or fetched. */
GPUENV_API int gpuenv_build_key(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_opts_t *o,
	const gpuenv_build_req_t *req, const char **key);

/* Build req into a wheel (or reuse the cached one): the sdist fetched
 * through ix into the cache (hash checked), unpacked, the build venv made
 * and filled, the hooks run, the wheel checked (its name's project is
 * req->name, its version req->version when given) and entered into the
 * cache by rename.  cache is required; ix may be NULL when nothing needs a
 * download.  0, or GPUENV_EBUILD (res->log, res->log_tail set) or another
 * error, with ctx->err naming the package. */
GPUENV_API int gpuenv_build_wheel(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_opts_t *o,
	gpuenv_cache_t *cache, gpuenv_index_t *ix, const gpuenv_build_req_t *req, gpuenv_build_result_t *res);

/* ---- metadata for the lock (lib/builder/metadata.c) ----------------------
 * An sdist whose PKG-INFO does not hold its dependencies (Metadata-Version
 * before 2.2, or Requires-Dist marked Dynamic) is locked by asking its
 * build backend: the steps of a build up to get_requires_for_build_wheel,
 * then prepare_metadata_for_build_wheel (or, when the backend lacks it,
 * build_wheel and the wheel's METADATA: PEP 517's fallback).  The answer
 * must name req's project and version; it is cached by the sdist's sha256
 * under <cache>/sdist-meta/, so a second lock runs nothing. */

typedef struct gpuenv_build_meta {
	gpuenv_str_t metadata;	/* the METADATA text (in arena) */
	const char *path;	/* the cached copy */
	const char *log;	/* the log, NULL when cached */
	const char *log_tail;	/* on GPUENV_EBUILD: the log's last lines */
	bool cached;		/* no hook ran */
	double secs;
} gpuenv_build_meta_t;

/* The METADATA of req (an sdist with name, version and sha256, or a
 * directory with its name, its version then the answer's; o's python,
 * tags and marker_env make the build venv; against is not used).
 * 0, or GPUENV_EBUILD (a hook failed, ran past o->timeout_s, or answered
 * another project or version: ctx->err names the package, its hint the
 * log) or another error. */
GPUENV_API int gpuenv_build_metadata(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_opts_t *o,
	gpuenv_cache_t *cache, gpuenv_index_t *ix, const gpuenv_build_req_t *req, gpuenv_build_meta_t *res);

/* The hook the lock's provider asks (gpuenv_pv_sdist_meta_t, filled by the
 * caller: cli): interpreters found on this machine as the targets' Python
 * versions ask, the cache opened when first needed. */
typedef struct gpuenv_meta_builder_opts {
	const char *cache_dir;	     /* NULL: the default */
	const char *const *base_env; /* as gpuenv_build_opts_t's */
	unsigned timeout_s;	     /* per hook; 0: 3600 */
	/* an interpreter (a path or a version) for every metadata build;
	 * NULL: the target's Python version, else the newest found */
	const char *python;
	const gpuenv_unpack_limits_t *limits;
} gpuenv_meta_builder_opts_t;

typedef struct gpuenv_meta_builder gpuenv_meta_builder_t;

GPUENV_API int gpuenv_meta_builder_new(gpuenv_ctx_t *ctx, const gpuenv_meta_builder_opts_t *o,
	gpuenv_meta_builder_t **out);
GPUENV_API void gpuenv_meta_builder_free(gpuenv_meta_builder_t *mb);
GPUENV_API void gpuenv_meta_builder_hook(gpuenv_meta_builder_t *mb, gpuenv_pv_sdist_meta_t *out);
/* How many answers came from builds and from the cache. */
GPUENV_API void gpuenv_meta_builder_counts(const gpuenv_meta_builder_t *mb, size_t *built, size_t *cached);

/* ---- the hook sync uses ---------------------------------------------- */

typedef struct gpuenv_builder gpuenv_builder_t;

/* A builder over o (copied; what it points to must outlive the builder). */
GPUENV_API int gpuenv_builder_new(gpuenv_ctx_t *ctx, const gpuenv_build_opts_t *o, gpuenv_builder_t **out);
GPUENV_API void gpuenv_builder_free(gpuenv_builder_t *b);
/* Fill sync's hook with b (gpuenv_sync_opts_t.builder). */
GPUENV_API void gpuenv_builder_sync_hook(gpuenv_builder_t *b, gpuenv_sync_builder_t *out);
/* The build that failed last (its log and log_tail, and its request), or
 * NULL when none did. */
GPUENV_API const gpuenv_build_result_t *gpuenv_builder_failure(const gpuenv_builder_t *b,
	const gpuenv_build_req_t **req);
/* The builds b made or reused, in order (for --json and the report). */
GPUENV_API size_t gpuenv_builder_results(const gpuenv_builder_t *b, const gpuenv_build_result_t **out,
	const gpuenv_build_req_t **reqs);

#ifdef __cplusplus
}
#endif
#endif
