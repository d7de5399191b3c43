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

typedef struct gpuenv_pv_opts {
	gpuenv_index_t *ix;
	const struct gpuenv_tagset *tags; /* the target's wheel tags */
	const char *python;		 /* "3.12" or "3.12.3": requires-python */
	const char *target_name;	 /* for messages */
	const gpuenv_marker_env_t *env;	 /* for the crawl's marker checks */
	/* where names come from: a dependency's source, the torch family's
	 * build index; others follow the priority rule */
	size_t nroutes;
	const char *const *route_names;	  /* normalised */
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
} gpuenv_pv_opts_t;

typedef struct gpuenv_pv gpuenv_pv_t;

/* The file one candidate stands for (candidate->data). */
typedef struct gpuenv_pv_file {
	const gpuenv_index_file_t *file;
	const gpuenv_index_project_t *project;
	const char *reason; /* why this build (torch family), or NULL */
	bool sdist;	    /* a source distribution (no usable wheel of its
			       version): locked as PEP 751 sdist */
} gpuenv_pv_file_t;

GPUENV_API int gpuenv_pv_new(gpuenv_ctx_t *ctx, const gpuenv_pv_opts_t *opts, gpuenv_pv_t **out);
GPUENV_API void gpuenv_pv_free(gpuenv_pv_t *pv);
/* The provider interface over pv (valid while pv lives). */
GPUENV_API void gpuenv_pv_provider(gpuenv_pv_t *pv, gpuenv_provider_t *out);

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
	gpuenv_index_t *ix;
	const gpuenv_kb_t *kb; /* may be NULL: no hardware judgement */
	bool pre; /* pre-releases allowed everywhere (pip's --pre) */
	/* pip's format control (normalised names or ":all:") */
	const char *const *only_binary;
	size_t nonly_binary;
	const char *const *no_binary;
	size_t nno_binary;
	/* when set: the resolution's inputs appended as a packse-format
	 * scenario (gpuenv_scenario_write), solved or not, so a failing real
	 * resolution replays with `gpuenv debug resolve` and no index */
	gpuenv_buf_t *dump;
} gpuenv_project_lock_req_t;

typedef struct gpuenv_project_lock_out {
	gpuenv_resolution_t res;
	gpuenv_lock_t lock; /* valid when the resolution succeeded */
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

#ifdef __cplusplus
}
#endif
#endif
