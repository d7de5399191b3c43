/* gpuenv trace: a recorder of Chrome Trace Event Format spans (docs/profile.md).
 *
 * `lock --profile FILE` and `sync --profile FILE` make a recorder and set
 * ctx->trace; every module then records spans through the context it
 * already has, with no new parameters.  ctx->trace NULL (the default) is
 * "off": gpuenv_trace_begin returns 0 without reading the clock and every
 * record call returns after one NULL check.
 *
 *     uint64_t t0 = gpuenv_trace_begin(ctx);
 *     ... download numpy ...
 *     gpuenv_trace_end(ctx, "install", "download", "numpy", url, t0);
 *
 * Each span becomes a complete event ("ph":"X") with ts and dur in
 * microseconds since the recorder was made, pid = this process, tid = the
 * recording thread (Linux thread id), name "PHASE PACKAGE", cat the module,
 * args {"phase", "package", "detail"}.  Recording is thread-safe (one
 * mutex; the sync stages packages on one thread per CPU; worker threads
 * copy the context, and with it the pointer) and never touches ctx->err:
 * a span that cannot be stored (out of memory, the 256 MiB cap) is counted
 * as dropped and reported when the trace is written.
 *
 * Builds: the compiler calls inside a build are recorded by shims
 * (gpuenv_trace_shims_setup): symlinks to the gpuenv binary named cc, gcc,
 * nvcc, ld... in a folder put first on the build's PATH.  Run under such a
 * name, gpuenv is the shim (gpuenv_trace_shim_run): it spawns the real tool
 * (the next one of that name on PATH), waits, and appends one line (tool,
 * argv, start, duration, exit status) to the calls file named by
 * GPUENV_SHIM_LOG; gpuenv_trace_shims_collect turns that file into
 * "tool" spans of the package.
 *
 * How a builder uses it (seam 3, include/gpuenv/build.h):
 *
 *     gpuenv_trace_shims_t sh;
 *     if (ctx->trace && gpuenv_trace_shims_setup(ctx, "<build tmp>/shims", NULL, &sh) == 0) {
 *         PATH = sh.path_prefix ":" PATH;   plus sh.env[i].name = sh.env[i].value
 *         ... run the PEP 517 build ...
 *         gpuenv_trace_shims_collect(ctx, &sh, "flash-attn");
 *     }
 */
#ifndef GPUENV_TRACE_H
#define GPUENV_TRACE_H

#include <limits.h>

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Microseconds of CLOCK_MONOTONIC: one clock for every process of the
 * machine, so the shims' times line up with the recorder's. */
GPUENV_API uint64_t gpuenv_trace_now(void);

/* A new recorder (its time 0 is now; it records the calling thread's
 * name as "main").  command names the run in the trace ("gpuenv sync").
 * 0 or -ENOMEM (recorded).  Set ctx->trace to it to turn tracing on. */
GPUENV_API int gpuenv_trace_new(gpuenv_ctx_t *ctx, const char *command, gpuenv_trace_t **out);
GPUENV_API void gpuenv_trace_free(gpuenv_ctx_t *ctx, gpuenv_trace_t *t);

/* The start of a span: now, or 0 when tracing is off (no clock read). */
static inline uint64_t gpuenv_trace_begin(const gpuenv_ctx_t *ctx)
{
	return ctx->trace ? gpuenv_trace_now() : 0;
}

/* A complete span from start to now on the calling thread.  cat: the
 * module ("index", "install", "lock", "build"); phase: "metadata",
 * "download", "hash", "unpack", "link", "build", ...; package: the PEP 503
 * name, or NULL for a span of the whole run; detail: a file or URL, or
 * NULL.  The strings are copied.  No-op when ctx->trace is NULL. */
GPUENV_API void gpuenv_trace_end(const gpuenv_ctx_t *ctx, const char *cat, const char *phase,
	const char *package, const char *detail, uint64_t start);

/* As gpuenv_trace_end with the start and duration given (microseconds of
 * gpuenv_trace_now) and a thread id (0: the calling thread). */
GPUENV_API void gpuenv_trace_complete(const gpuenv_ctx_t *ctx, const char *cat, const char *phase,
	const char *package, const char *detail, uint64_t start, uint64_t dur, long tid);

/* As gpuenv_trace_complete for work that overlaps on one thread (the
 * index client's parallel transfers on one curl multi handle): the span
 * goes on a lane of group (a virtual thread named "GROUP N") where it
 * overlaps no other span, as Chrome's viewer needs. */
GPUENV_API void gpuenv_trace_complete_lane(const gpuenv_ctx_t *ctx, const char *group, const char *cat,
	const char *phase, const char *package, const char *detail, uint64_t start, uint64_t dur);

/* Name the calling thread in the trace ("stage 2"); no-op when off. */
GPUENV_API void gpuenv_trace_thread_name(const gpuenv_ctx_t *ctx, const char *name);

/* Spans recorded so far, and spans dropped (memory, the cap). */
GPUENV_API void gpuenv_trace_counts(const gpuenv_trace_t *t, size_t *events, size_t *dropped);

/* Write the trace to path, atomically: {"traceEvents":[metadata events
 * (process and thread names), spans], "displayTimeUnit":"ms",
 * "otherData":{"tool":"gpuenv", "version", "command", "clock", "events",
 * "dropped"}}.  A trace that dropped spans is still written, and then
 * the call fails with GPUENV_ETOOBIG / -ENOMEM saying how many. */
GPUENV_API int gpuenv_trace_write(gpuenv_ctx_t *ctx, gpuenv_trace_t *t, const char *path);

/* ---- shims: the tool calls inside a build ------------------------------ */

/* The names gpuenv answers to as a shim (NULL-terminated): compilers,
 * nvcc, linkers, archivers, and the machine's triplet-prefixed gcc/g++
 * (Debian's Python builds with x86_64-linux-gnu-gcc). */
GPUENV_API const char *const *gpuenv_trace_shim_names(void);
/* True when basename is one of them (main() dispatches on argv[0]). */
GPUENV_API bool gpuenv_trace_is_shim(const char *argv0);

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
} gpuenv_trace_shims_t;

/* Make dir (mkdir -p), dir/bin with one symlink per shim name to self
 * (NULL: gpuenv-shim next to the running executable, which loads only
 * libc, else the running gpuenv itself, whose main() is the shim under a
 * tool's name) and an empty dir/calls.log.
 * 0 or -errno recorded with the path. */
GPUENV_API int gpuenv_trace_shims_setup(gpuenv_ctx_t *ctx, const char *dir, const char *self,
	gpuenv_trace_shims_t *out);

/* Read the calls file and record each call as a "tool" span of package
 * (name: the tool, args: argv, exit status, pid) on lanes of their own,
 * threads named "build PACKAGE: tools" (calls that overlap go to the next
 * lane; nvcc's own gcc calls nest under it).  A line a killed shim cut short is
 * skipped and counted in *skipped (may be NULL).  Then the shim folder is
 * removed.  No-op (0) when ctx->trace is NULL but the removal. */
GPUENV_API int gpuenv_trace_shims_collect(gpuenv_ctx_t *ctx, gpuenv_trace_shims_t *s,
	const char *package, size_t *skipped);

/* Run as a shim: find the real tool named basename(argv[0]) (the first
 * one on PATH that is not this executable nor in $GPUENV_SHIM_DIR), spawn
 * it with argv (argv[0] its path) and envp, wait, and append the call to
 * $GPUENV_SHIM_LOG when set.  *status: the tool's exit status, or 128 +
 * the signal that killed it (*signo set, else 0).  0, or -errno /
 * GPUENV_ENOTFOUND (no such tool on PATH) recorded; the tool's own failure
 * is its status, not an error. */
GPUENV_API int gpuenv_trace_shim_run(gpuenv_ctx_t *ctx, int argc, char **argv, char *const *envp,
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
GPUENV_API int gpuenv_trace_shim_parse(char *line, size_t len, gpuenv_shim_call_t *out);

#ifdef __cplusplus
}
#endif
#endif
