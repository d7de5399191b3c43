/* gpuenv profile: Chrome traces read and checked, summed up and drawn
 * (docs/profile.md).  The reader is a validator of the Trace Event Format
 * (the JSON Object Format {"traceEvents": [...]} or the JSON Array
 * Format): every event's fields as the trace viewer needs them, B/E pairs
 * nested per thread.  It reads any tool's trace; gpuenv's own spans
 * (gpuenv/trace.h) carry args.phase, args.package and, for a build's tool
 * calls, args.tool and args.status, which the summary groups by. */
#ifndef GPUENV_PROFILE_H
#define GPUENV_PROFILE_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_PROF_MAX_EVENTS 5000000

/* One span: a complete event ("X"), or a B/E pair made into one. */
typedef struct gpuenv_prof_span {
	const char *name, *cat;	  /* cat "" when absent */
	const char *phase;	  /* args.phase, else the name */
	const char *package;	  /* args.package, or NULL */
	const char *tool;	  /* args.tool of a tool call (cat "tool"), or NULL */
	const char *detail;	  /* args.detail, or NULL */
	double ts, dur;		  /* microseconds; ts as in the file */
	int status;		  /* a tool call's args.status; -1: none */
	size_t thread;		  /* index in gpuenv_prof_t.threads */
	unsigned depth;		  /* nesting on its thread: 0 outermost */
} gpuenv_prof_span_t;

typedef struct gpuenv_prof_thread {
	int64_t pid, tid;
	const char *name;	  /* thread_name metadata, or NULL */
	const char *process;	  /* process_name metadata, or NULL */
} gpuenv_prof_thread_t;

typedef struct gpuenv_prof {
	gpuenv_prof_span_t *spans; /* by thread, then start, the outer first */
	size_t nspans;
	gpuenv_prof_thread_t *threads; /* in order of pid, then tid */
	size_t nthreads;
	size_t nevents;		  /* events read, of every phase */
	const char *command;	  /* otherData.command, or NULL */
	double t0, t1;		  /* the first span's start, the last one's end */
} gpuenv_prof_t;

/* Parse and check a trace (data, len; file names it in messages) into out
 * (its memory in arena).  0, or GPUENV_ESYNTAX (not JSON: line and column),
 * GPUENV_EFORMAT (JSON, but not a trace: the event's index and field, what
 * the viewer needs instead), GPUENV_ETOOBIG, -ENOMEM; recorded. */
GPUENV_API int gpuenv_prof_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const char *data, size_t len, gpuenv_prof_t *out);

/* One row of the summary: microseconds and count of key (and key2). */
typedef struct gpuenv_prof_stat {
	const char *key, *key2;
	double total_us;
	size_t count, failed; /* failed: tool calls with a status other than 0 */
} gpuenv_prof_stat_t;

typedef struct gpuenv_prof_summary {
	double wall_us;			  /* t1 - t0 */
	gpuenv_prof_stat_t *packages;	  /* the packages' outermost spans (a span inside another of
					     its package on its thread, a build's hooks, counts once) */
	size_t npackages;
	gpuenv_prof_stat_t *phases;	  /* every span but tool calls, by phase */
	size_t nphases;
	gpuenv_prof_stat_t *package_phases; /* key package, key2 phase */
	size_t npackage_phases;
	gpuenv_prof_stat_t *tools;	  /* tool calls by tool */
	size_t ntools;
	gpuenv_prof_stat_t *package_tools; /* key package ("" none), key2 tool */
	size_t npackage_tools;
	size_t tool_calls, tool_failed;
} gpuenv_prof_summary_t;

/* Sum the spans up.  Every list is sorted by total time, longest first,
 * then by key: the same trace gives the same summary.  0 or -ENOMEM. */
GPUENV_API int gpuenv_prof_summarize(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_prof_t *p,
	gpuenv_prof_summary_t *out);

/* A duration for people into out: "1.23 s", "45.60 ms", "789 us". */
GPUENV_API void gpuenv_prof_human(double us, char *out, size_t n);

/* The flame chart as a self-contained SVG into out (appended): one band
 * per thread, spans stacked by nesting, x the time, a <title> on every
 * span (name, package, phase, duration, detail), text where it fits, the
 * colour by phase; deterministic.  title heads the picture.  Spans under
 * 0.1 px wide are counted in a note instead of drawn.  0 or -ENOMEM /
 * GPUENV_ETOOBIG. */
GPUENV_API int gpuenv_prof_svg(gpuenv_ctx_t *ctx, const gpuenv_prof_t *p, const char *title,
	gpuenv_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif
