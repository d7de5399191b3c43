/* lib/builder's own functions, shared by its files (not exported). */
#ifndef GPUENV_BUILD_INT_H
#define GPUENV_BUILD_INT_H

#include "gpuenv/build.h"
#include "gpuenv/shim.h"

/* The environment of a build (spec.c): o->base_env without the variables
 * an isolated build must not inherit (PYTHONPATH, VIRTUAL_ENV, PIP_*...),
 * o->env over it, PATH = path_prefix:venv_bin:PATH, VIRTUAL_ENV when
 * given.  NULL-terminated, in arena.  0 or -ENOMEM. */
int gpuenv_build_envp(gpuenv_arena_t *arena, const gpuenv_build_opts_t *o, const char *venv_bin,
	const char *virtual_env, char ***out);

/* Is name built against o->against (no isolation)? */
bool gpuenv_build_against(const gpuenv_build_opts_t *o, const char *name);

/* One build in progress (build.c; metadata.c asks the backend for
 * metadata through the same steps). */
struct gpuenv_bctx {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const gpuenv_build_opts_t *o;
	const gpuenv_build_req_t *req;
	gpuenv_cache_t *cache;
	gpuenv_index_t *ix;
	const char *what;     /* "foo 1.0" */
	const char *doing;    /* the log's first line: "building" (NULL) */
	const char *log_kind; /* before the key in the log's name ("metadata-"), or NULL */
	const char *tmp;      /* the build's folder */
	const char *runner;   /* tmp/hook_runner.py */
	const char *log;      /* the log's path */
	const char *log_tail; /* on GPUENV_EBUILD: the log's end */
	int logfd;
	unsigned seq;	      /* request / result file numbers */
	char **envp;
	gpuenv_venv_t venv;   /* the build venv (isolated builds) */
	/* --profile: the compiler shims first on PATH (gpuenv/trace.h) */
	gpuenv_shims_t shims;
	bool have_shims;
	gpuenv_build_opts_t traced; /* o with the shims' PATH and variables */
};

/* A line into the build's log. */
void gpuenv_build_logf(struct gpuenv_bctx *b, const char *fmt, ...) GPUENV_PRINTF(2, 3);

/* The build's folder made under <cache>/tmp, its log opened, work run,
 * then the folder removed (the log stays; b->log_tail set on
 * GPUENV_EBUILD).  work's status. */
int gpuenv_build_session(struct gpuenv_bctx *b, const char *key,
	int (*work)(struct gpuenv_bctx *b, const char *key, void *arg), void *arg);

/* Steps 2 to 5 of docs/build.md: the source fetched and unpacked,
 * [build-system] read, the build venv made and filled (or the target
 * venv's interpreter for no-isolation builds), get_requires_for_build_*
 * asked and installed.  *src: the source tree, *py: the interpreter to run
 * the hooks with. */
int gpuenv_build_prepare(struct gpuenv_bctx *b, const char *key, const char **src, gpuenv_build_system_t *bs,
	const char **py);

/* One hook request as JSON (wheel_dir, metadata_dir: NULL when the hook
 * takes none), in b's arena; NULL: out of memory. */
const char *gpuenv_build_hook_request(struct gpuenv_bctx *b, const char *hook, const char *src,
	const gpuenv_build_system_t *bs, const char *wheel_dir, const char *metadata_dir);

/* Run the runner with python on req_json and read its answer. */
int gpuenv_build_run_hook(struct gpuenv_bctx *b, const char *python, const char *hook, const char *req_json,
	gpuenv_hook_result_t *res);

/* GPUENV_EBUILD for a hook's failure answer, the log in the hint. */
int gpuenv_build_hook_failed(struct gpuenv_bctx *b, const char *hook, const gpuenv_hook_result_t *res);

#endif
