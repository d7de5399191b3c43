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
 * Builds: the compiler calls inside a build are recorded by the tool shims
 * of gpuenv/shim.h (lib/shim), which feed this recorder through
 * gpuenv_trace_lane_new and gpuenv_trace_complete_args.
 */
#ifndef GPUENV_TRACE_H
#define GPUENV_TRACE_H

#include <limits.h>
#include <time.h>

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Microseconds of CLOCK_MONOTONIC: one clock for every process of the
 * machine, so the shims' times line up with the recorder's.  Inline: the
 * gpuenv-shim executable reads the clock without linking the recorder. */
static inline uint64_t gpuenv_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

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

/* A new virtual thread (a lane) of the trace named name, for spans that
 * are not the calling thread's (a build's tool calls); 0 when off. */
GPUENV_API long gpuenv_trace_lane_new(const gpuenv_ctx_t *ctx, const char *name);

/* As gpuenv_trace_complete with more members of the span's args: args is
 * JSON object members without the braces ("\"status\":0"), or NULL. */
GPUENV_API void gpuenv_trace_complete_args(const gpuenv_ctx_t *ctx, const char *cat,
	const char *phase, const char *package, const char *detail, uint64_t start, uint64_t dur,
	long tid, const char *args);

/* Append s to b as a JSON string, as the recorder writes its strings:
 * valid UTF-8 copied (", \\ and controls escaped), any other byte as the
 * text \\xHH (docs/probe-schema.md, "Strings").  0 or the buffer's error. */
GPUENV_API int gpuenv_trace_json_str(gpuenv_buf_t *b, const char *s);

#ifdef __cplusplus
}
#endif
#endif
