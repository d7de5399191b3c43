/* gpuenv shim: the build's tool shims (docs/profile.md, "Tool calls").
 *
 * The compiler calls inside a build are recorded by shims (gpuenv_shim_setup):
 * symlinks named cc, gcc, nvcc, ld... in a folder put first on the build's
 * PATH, to gpuenv-shim (or the gpuenv binary).  Run under such a name, the
 * shim (gpuenv_shim_run) spawns the real tool (the next one of that name on
 * PATH), waits, and appends one line (tool, argv, start, duration, exit
 * status) to the calls file named by GPUENV_SHIM_LOG; gpuenv_shim_collect
 * turns that file into "tool" spans of the trace recorder (gpuenv/trace.h).
 *
 * How a builder uses it (seam 3, include/gpuenv/build.h):
 *
 *     gpuenv_shims_t sh;
 *     if (ctx->trace && gpuenv_shim_setup(ctx, "<build tmp>/shims", NULL, &sh) == 0) {
 *         PATH = sh.path_prefix ":" PATH;   plus sh.env[i].name = sh.env[i].value
 *         ... run the PEP 517 build ...
 *         gpuenv_shim_collect(ctx, &sh, "flash-attn", NULL);
 *     }
 *
 * The module sits above core (the recorder) and below builder and cli: the
 * ground floor does not know how to run nvcc.  tool.c is the tool side (what
 * gpuenv-shim links), shims.c the builder side.
 */
#ifndef GPUENV_SHIM_H
#define GPUENV_SHIM_H

#include <limits.h>

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The names gpuenv answers to as a shim (NULL-terminated): compilers,
 * nvcc, linkers, archivers, and the machine's triplet-prefixed gcc/g++
 * (Debian's Python builds with x86_64-linux-gnu-gcc). */
GPUENV_API const char *const *gpuenv_shim_names(void);
/* True when basename is one of them (main() dispatches on argv[0]). */
GPUENV_API bool gpuenv_shim_is_tool(const char *argv0);

#define GPUENV_SHIM_LOG_ENV "GPUENV_SHIM_LOG"
#define GPUENV_SHIM_DIR_ENV "GPUENV_SHIM_DIR"

typedef struct gpuenv_trace_shims {
	char dir[PATH_MAX];	    /* the folder given */
	char path_prefix[PATH_MAX]; /* dir/bin: put it first on the build's PATH */
	char log[PATH_MAX];	    /* dir/calls.log: the calls file */
	struct {
		const char *name;
		const char *value;
	} env[2]; /* GPUENV_SHIM_LOG=log, GPUENV_SHIM_DIR=path_prefix: set them in the build */
	size_t nenv;
} gpuenv_shims_t;

/* Make dir (mkdir -p), dir/bin with one symlink per shim name to self
 * (NULL: gpuenv-shim next to the running executable, which loads only
 * libc, else the running gpuenv itself, whose main() is the shim under a
 * tool's name) and an empty dir/calls.log.
 * 0 or -errno recorded with the path. */
GPUENV_API int gpuenv_shim_setup(gpuenv_ctx_t *ctx, const char *dir, const char *self,
	gpuenv_shims_t *out);

/* Read the calls file and record each call as a "tool" span of package
 * (name: the tool, args: argv, exit status, pid) on lanes of their own,
 * threads named "build PACKAGE: tools" (calls that overlap go to the next
 * lane; nvcc's own gcc calls nest under it).  A line a killed shim cut short is
 * skipped and counted in *skipped (may be NULL).  Then the shim folder is
 * removed.  No-op (0) when ctx->trace is NULL but the removal. */
GPUENV_API int gpuenv_shim_collect(gpuenv_ctx_t *ctx, gpuenv_shims_t *s,
	const char *package, size_t *skipped);

/* Run as a shim: find the real tool named basename(argv[0]) (the first
 * one on PATH that is not this executable nor in $GPUENV_SHIM_DIR), spawn
 * it with argv (argv[0] its path) and envp, wait, and append the call to
 * $GPUENV_SHIM_LOG when set.  *status: the tool's exit status, or 128 +
 * the signal that killed it (*signo set, else 0).  0, or -errno /
 * GPUENV_ENOTFOUND (no such tool on PATH) recorded; the tool's own failure
 * is its status, not an error. */
GPUENV_API int gpuenv_shim_run(gpuenv_ctx_t *ctx, int argc, char **argv, char *const *envp,
	int *status, int *signo);

/* One line of a calls file, parsed (the fuzz target's entry and the
 * collector's): fields point into line, which is modified (unescaped in
 * place).  0 or GPUENV_ESYNTAX. */
#define GPUENV_SHIM_MAX_ARGS 4096
typedef struct gpuenv_shim_call {
	uint64_t start, dur;
	long pid;
	int status; /* exit status; 128+N for signal N */
	const char *tool;
	const char *cwd;
	size_t argc;
	const char *argv[GPUENV_SHIM_MAX_ARGS];
	bool truncated; /* the shim cut the argv to fit a line */
} gpuenv_shim_call_t;
GPUENV_API int gpuenv_shim_parse(char *line, size_t len, gpuenv_shim_call_t *out);

/* One call's line at most (one write(), so parallel shims never interleave). */
#define GPUENV_SHIM_LINE_MAX ((size_t)64 << 10)

#ifdef __cplusplus
}
#endif
#endif
