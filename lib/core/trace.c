/* The trace recorder (gpuenv/trace.h, docs/profile.md).
 *
 * Spans are serialized to JSON as they are recorded, under one mutex, into
 * one capped buffer: the write at the end is then one pass, and a span
 * costs one allocation at most.  The format is Chrome's Trace Event Format
 * (complete events "ph":"X", metadata events "ph":"M" for names).  The
 * build's tool shims that feed it are lib/shim (gpuenv/shim.h). */
#include "gpuenv/trace.h"

#include "gpuenv/fs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef GPUENV_VERSION
#define GPUENV_VERSION "0.0.0"
#endif

#define TRACE_MAX ((size_t)256 << 20)  /* the serialized spans */
#define TRACE_MAX_THREADS 4096	       /* named threads */
#define VTID_BASE 100000000L /* tool lanes: above any Linux tid (pid_max <= 2^22) */

struct trace_thread {
	long tid;
	char *name;
};

#define LANE_GROUPS 16
#define GROUP_LANES 64
struct lane_group {
	char *name;
	long tid[GROUP_LANES];
	uint64_t last_end[GROUP_LANES];
	size_t n;
};

struct gpuenv_trace {
	pthread_mutex_t mu;
	gpuenv_ctx_t mem; /* the creating context's allocator (copied) */
	uint64_t epoch;
	long pid;
	char *command;
	gpuenv_buf_t events; /* ",\n"-separated event objects */
	size_t nevents, dropped;
	bool oom;
	struct trace_thread *threads;
	size_t nthreads, cap;
	long next_vtid;
	struct lane_group groups[LANE_GROUPS];
	size_t ngroups;
};

static long this_tid(void)
{
	return (long)syscall(SYS_gettid);
}

int gpuenv_trace_json_str(gpuenv_buf_t *b, const char *s)
{
	int r = gpuenv_buf_putc(b, '"');
	size_t n = s ? strlen(s) : 0;

	for (size_t i = 0; i < n && !r;) {
		unsigned char c = (unsigned char)s[i];
		size_t k = gpuenv_utf8_seq(s + i, n - i);
		if (c == '"' || c == '\\') {
			r = gpuenv_buf_putc(b, '\\');
			if (!r)
				r = gpuenv_buf_putc(b, (char)c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			r = gpuenv_buf_printf(b, "\\u%04x", c);
			i++;
		} else if (k == 0) {
			r = gpuenv_buf_printf(b, "\\\\x%02x", c);
			i++;
		} else {
			r = gpuenv_buf_append(b, s + i, k);
			i += k;
		}
	}
	return r ? r : gpuenv_buf_putc(b, '"');
}

int gpuenv_trace_new(gpuenv_ctx_t *ctx, const char *command, gpuenv_trace_t **out)
{
	gpuenv_trace_t *t = gpuenv_calloc(ctx, 1, sizeof(*t));

	*out = NULL;
	if (!t)
		return gpuenv_oom(ctx, "the trace");
	gpuenv_ctx_init(&t->mem);
	t->mem.mem = ctx->mem;
	t->epoch = gpuenv_trace_now();
	t->pid = (long)getpid();
	t->next_vtid = VTID_BASE;
	gpuenv_buf_init(&t->events, &t->mem, TRACE_MAX);
	if (!(t->command = gpuenv_strndup(ctx, command ? command : "gpuenv", strlen(command ? command : "gpuenv")))) {
		gpuenv_free(ctx, t);
		return gpuenv_oom(ctx, "the trace");
	}
	pthread_mutex_init(&t->mu, NULL);
	*out = t;
	gpuenv_ctx_t c = *ctx;
	c.trace = t;
	gpuenv_trace_thread_name(&c, "main");
	return 0;
}

void gpuenv_trace_free(gpuenv_ctx_t *ctx, gpuenv_trace_t *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nthreads; i++)
		gpuenv_free(&t->mem, t->threads[i].name);
	for (size_t i = 0; i < t->ngroups; i++)
		gpuenv_free(&t->mem, t->groups[i].name);
	gpuenv_free(&t->mem, t->threads);
	gpuenv_buf_free(&t->events);
	gpuenv_free(ctx, t->command);
	pthread_mutex_destroy(&t->mu);
	gpuenv_free(ctx, t);
}

/* Name tid (under mu); a later name replaces an earlier one. */
static void name_thread_locked(gpuenv_trace_t *t, long tid, const char *name)
{
	size_t i;
	char *copy;

	for (i = 0; i < t->nthreads && t->threads[i].tid != tid; i++)
		;
	if (i == t->nthreads) {
		if (t->nthreads == TRACE_MAX_THREADS)
			return;
		if (t->nthreads == t->cap) {
			size_t nc = t->cap ? 2 * t->cap : 16;
			struct trace_thread *v = gpuenv_realloc(&t->mem, t->threads, nc * sizeof(*v));
			if (!v) {
				t->oom = true;
				return;
			}
			t->threads = v;
			t->cap = nc;
		}
		t->threads[t->nthreads].tid = tid;
		t->threads[t->nthreads].name = NULL;
		t->nthreads++;
	}
	if (!(copy = gpuenv_strndup(&t->mem, name, strlen(name)))) {
		t->oom = true;
		return;
	}
	gpuenv_free(&t->mem, t->threads[i].name);
	t->threads[i].name = copy;
}

void gpuenv_trace_thread_name(const gpuenv_ctx_t *ctx, const char *name)
{
	gpuenv_trace_t *t = ctx->trace;

	if (!t)
		return;
	long tid = this_tid();
	pthread_mutex_lock(&t->mu);
	name_thread_locked(t, tid, name);
	pthread_mutex_unlock(&t->mu);
}

/* Append one event (under mu): the common fields, then extra (a JSON
 * object's members, without braces, or NULL).  On failure the buffer is
 * cut back and the event counted as dropped. */
static void emit_locked(gpuenv_trace_t *t, const char *cat, const char *phase, const char *package,
	const char *detail, uint64_t start, uint64_t dur, long tid, const char *extra)
{
	gpuenv_buf_t *b = &t->events;
	size_t mark = b->len;
	uint64_t ts = start > t->epoch ? start - t->epoch : 0;
	int r = 0;

	if (t->nevents)
		r = gpuenv_buf_puts(b, ",\n");
	if (!r)
		r = gpuenv_buf_printf(b, "{\"ph\":\"X\",\"pid\":%ld,\"tid\":%ld,\"ts\":%llu,\"dur\":%llu,\"cat\":",
			t->pid, tid, (unsigned long long)ts, (unsigned long long)dur);
	if (!r)
		r = gpuenv_trace_json_str(b, cat ? cat : "gpuenv");
	if (!r)
		r = gpuenv_buf_puts(b, ",\"name\":");
	if (!r && package && *package) {
		char name[512];
		snprintf(name, sizeof(name), "%s %s", phase, package);
		r = gpuenv_trace_json_str(b, name);
	} else if (!r)
		r = gpuenv_trace_json_str(b, phase);
	if (!r)
		r = gpuenv_buf_puts(b, ",\"args\":{\"phase\":");
	if (!r)
		r = gpuenv_trace_json_str(b, phase);
	if (!r && package && *package) {
		r = gpuenv_buf_puts(b, ",\"package\":");
		if (!r)
			r = gpuenv_trace_json_str(b, package);
	}
	if (!r && detail && *detail) {
		r = gpuenv_buf_puts(b, ",\"detail\":");
		if (!r)
			r = gpuenv_trace_json_str(b, detail);
	}
	if (!r && extra && *extra) {
		r = gpuenv_buf_putc(b, ',');
		if (!r)
			r = gpuenv_buf_puts(b, extra);
	}
	if (!r)
		r = gpuenv_buf_puts(b, "}}");
	if (r) {
		b->len = mark;
		if (b->data)
			b->data[mark] = '\0';
		t->dropped++;
		if (r == -ENOMEM)
			t->oom = true;
		return;
	}
	t->nevents++;
}

void gpuenv_trace_complete(const gpuenv_ctx_t *ctx, const char *cat, const char *phase,
	const char *package, const char *detail, uint64_t start, uint64_t dur, long tid)
{
	gpuenv_trace_complete_args(ctx, cat, phase, package, detail, start, dur, tid, NULL);
}

/* A lane of group for [start, end) (under mu): the first whose spans
 * all ended by start, else a new one; 0 when none can be had. */
static long lane_locked(gpuenv_trace_t *t, const char *group, uint64_t start, uint64_t end)
{
	struct lane_group *g = NULL;
	char nm[160];

	for (size_t i = 0; i < t->ngroups && !g; i++)
		if (strcmp(t->groups[i].name, group) == 0)
			g = &t->groups[i];
	if (!g) {
		if (t->ngroups == LANE_GROUPS)
			return 0;
		g = &t->groups[t->ngroups];
		if (!(g->name = gpuenv_strndup(&t->mem, group, strlen(group)))) {
			t->oom = true;
			return 0;
		}
		g->n = 0;
		t->ngroups++;
	}
	for (size_t i = 0; i < g->n; i++)
		if (g->last_end[i] <= start) {
			g->last_end[i] = end;
			return g->tid[i];
		}
	if (g->n == GROUP_LANES) { /* 64 at once: the last lane takes the overlap */
		if (g->last_end[g->n - 1] < end)
			g->last_end[g->n - 1] = end;
		return g->tid[g->n - 1];
	}
	g->tid[g->n] = t->next_vtid++;
	g->last_end[g->n] = end;
	snprintf(nm, sizeof(nm), "%s %zu", group, g->n + 1);
	name_thread_locked(t, g->tid[g->n], nm);
	return g->tid[g->n++];
}

void gpuenv_trace_complete_lane(const gpuenv_ctx_t *ctx, const char *group, const char *cat,
	const char *phase, const char *package, const char *detail, uint64_t start, uint64_t dur)
{
	gpuenv_trace_t *t = ctx->trace;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	long tid = lane_locked(t, group, start, start + dur);
	emit_locked(t, cat, phase ? phase : "span", package, detail, start, dur, tid ? tid : this_tid(), NULL);
	pthread_mutex_unlock(&t->mu);
}

long gpuenv_trace_lane_new(const gpuenv_ctx_t *ctx, const char *name)
{
	gpuenv_trace_t *t = ctx->trace;
	long tid;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->mu);
	tid = t->next_vtid++;
	name_thread_locked(t, tid, name);
	pthread_mutex_unlock(&t->mu);
	return tid;
}

void gpuenv_trace_complete_args(const gpuenv_ctx_t *ctx, const char *cat, const char *phase,
	const char *package, const char *detail, uint64_t start, uint64_t dur, long tid,
	const char *args)
{
	gpuenv_trace_t *t = ctx->trace;

	if (!t)
		return;
	if (!tid)
		tid = this_tid();
	pthread_mutex_lock(&t->mu);
	emit_locked(t, cat, phase ? phase : "span", package, detail, start, dur, tid, args);
	pthread_mutex_unlock(&t->mu);
}

void gpuenv_trace_end(const gpuenv_ctx_t *ctx, const char *cat, const char *phase,
	const char *package, const char *detail, uint64_t start)
{
	if (!ctx->trace)
		return;
	uint64_t now = gpuenv_trace_now();
	gpuenv_trace_complete(ctx, cat, phase, package, detail, start, now > start ? now - start : 0, 0);
}

void gpuenv_trace_counts(const gpuenv_trace_t *t, size_t *events, size_t *dropped)
{
	*events = t->nevents;
	*dropped = t->dropped;
}

static void meta(gpuenv_buf_t *b, long pid, long tid, const char *what, const char *name)
{
	gpuenv_buf_printf(b, "{\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,\"name\":\"%s\",\"args\":{\"name\":",
		pid, tid, what);
	gpuenv_trace_json_str(b, name);
	gpuenv_buf_puts(b, "}},\n");
}

int gpuenv_trace_write(gpuenv_ctx_t *ctx, gpuenv_trace_t *t, const char *path)
{
	gpuenv_buf_t b;
	int r;

	/* the buffer is sticky: one check of the text before it is written */
	gpuenv_buf_init(&b, ctx, TRACE_MAX + ((size_t)16 << 20));
	pthread_mutex_lock(&t->mu);
	gpuenv_buf_puts(&b, "{\"traceEvents\":[\n");
	meta(&b, t->pid, t->pid, "process_name", t->command);
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].name)
			meta(&b, t->pid, t->threads[i].tid, "thread_name", t->threads[i].name);
	if (t->nevents)
		gpuenv_buf_append(&b, t->events.data, t->events.len);
	else if (!b.err && b.len >= 2)
		b.len -= 2; /* the last metadata event's ",\n" */
	gpuenv_buf_puts(&b, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"tool\":\"gpuenv\",\"version\":\"" GPUENV_VERSION "\",\"command\":");
	gpuenv_trace_json_str(&b, t->command);
	gpuenv_buf_printf(&b, ",\"clock\":\"CLOCK_MONOTONIC, microseconds since the trace began\",\"events\":%zu,\"dropped\":%zu}}\n",
		t->nevents, t->dropped);
	size_t dropped = t->dropped;
	bool oom = t->oom;
	pthread_mutex_unlock(&t->mu);
	if ((r = gpuenv_buf_failed(&b))) {
		gpuenv_buf_free(&b);
		return r == -ENOMEM ? gpuenv_oom(ctx, "the trace")
				    : gpuenv_fail(ctx, r, path, 0, 0, "the trace is too large to write");
	}
	r = gpuenv_fs_write_buf(ctx, path, &b, 0644, 0);
	gpuenv_buf_free(&b);
	if (r)
		return r;
	if (dropped || oom) {
		gpuenv_fail(ctx, oom ? -ENOMEM : GPUENV_ETOOBIG, path, 0, 0,
			"the trace was written without %zu span(s): %s", dropped,
			oom ? "out of memory" : "over the 256 MiB cap");
		return gpuenv_hint(ctx, "profile a smaller part of the work");
	}
	return 0;
}
