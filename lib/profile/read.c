/* The trace reader and validator (gpuenv/profile.h, docs/profile.md "The
 * checks").  jansson parses the JSON (through the context's allocator);
 * this file checks what the Trace Event Format asks of each event and
 * makes the spans: complete events as they are, B/E pairs matched per
 * thread in time order, nesting depths for the flame chart. */
#include "gpuenv/profile.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/json.h"

/* The phases of the format (the Trace Event Format document, "Event
 * Descriptions"): durations B E, complete X, instant i I, counter C,
 * async b n e S T p F, flow s t f, sample P, objects N O D, metadata M,
 * memory dumps V v, mark R, context ( ), clock sync c. */
static const char PHASES[] = "BEXiICbneSTpFstfPNODMVvRc()";

typedef struct rd {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *file;
	gpuenv_prof_span_t *spans;
	size_t nspans, cap;
	gpuenv_prof_thread_t *threads;
	size_t nthreads, tcap, last;
	/* B and E events, matched after all are read */
	struct be {
		size_t thread, index; /* index: in traceEvents */
		double ts;
		char ph;
		json_t *ev;
	} *be;
	size_t nbe, becap;
} rd_t;

static int bad(rd_t *r, size_t i, json_t *ev, const char *fmt, ...) GPUENV_PRINTF(4, 5);

static int bad(rd_t *r, size_t i, json_t *ev, const char *fmt, ...)
{
	char what[300], msg[200] = "";
	const char *ph = json_string_value(json_object_get(ev, "ph"));
	const char *name = json_string_value(json_object_get(ev, "name"));
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (ph && name)
		snprintf(msg, sizeof(msg), " (a \"%.8s\" event named \"%.80s\")", ph, name);
	else if (ph)
		snprintf(msg, sizeof(msg), " (a \"%.8s\" event)", ph);
	gpuenv_fail(r->ctx, GPUENV_EFORMAT, r->file, 0, 0, "traceEvents[%zu]%s: %s", i, msg, what);
	return gpuenv_hint(r->ctx, "the Trace Event Format (docs/profile.md) needs ph, ts, pid, tid and "
				   "name on every event, dur on an X event, and each E after its B on one thread");
}

/* v with room for element n (core's growth rule), or NULL (v unchanged) */
static void *grow(rd_t *r, void *v, size_t *cap, size_t n, size_t size)
{
	return gpuenv_array_grow(r->ctx, NULL, &v, cap, n + 1, size, SIZE_MAX, "reading the trace") ? NULL : v;
}

static const char *dup_str(rd_t *r, json_t *v)
{
	const char *s = json_string_value(v);
	return s ? gpuenv_arena_strndup(r->arena, s, json_string_length(v)) : NULL;
}

/* An integral JSON number (pid, tid). */
static bool get_int(json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return true;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d > -9e15 && d < 9e15 && (double)(int64_t)d == d) {
			*out = (int64_t)d;
			return true;
		}
	}
	return false;
}

static bool get_num(json_t *v, double *out)
{
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return *out > -1e18 && *out < 1e18; /* NaN fails both */
}

/* The thread (pid, tid), made when new; SIZE_MAX when out of memory. */
static size_t thread_of(rd_t *r, int64_t pid, int64_t tid)
{
	/* the last one asked is the usual answer */
	if (r->last < r->nthreads && r->threads[r->last].pid == pid && r->threads[r->last].tid == tid)
		return r->last;
	for (size_t k = r->nthreads; k-- > 0;)
		if (r->threads[k].pid == pid && r->threads[k].tid == tid)
			return r->last = k;
	gpuenv_prof_thread_t *t = grow(r, r->threads, &r->tcap, r->nthreads, sizeof(*t));
	if (!t)
		return SIZE_MAX;
	r->threads = t;
	t[r->nthreads] = (gpuenv_prof_thread_t){ .pid = pid, .tid = tid };
	return r->last = r->nthreads++;
}

static int oom(rd_t *r)
{
	return gpuenv_oom(r->ctx, "reading the trace");
}

/* A span of ev (X, or the B of a pair with dur from its E). */
static int add_span(rd_t *r, json_t *ev, size_t thread, double ts, double dur)
{
	gpuenv_prof_span_t *s = grow(r, r->spans, &r->cap, r->nspans, sizeof(*s));
	json_t *args = json_object_get(ev, "args");
	int64_t st;

	if (!s)
		return oom(r);
	r->spans = s;
	s += r->nspans;
	memset(s, 0, sizeof(*s));
	s->name = dup_str(r, json_object_get(ev, "name"));
	s->cat = json_is_string(json_object_get(ev, "cat")) ? dup_str(r, json_object_get(ev, "cat")) : "";
	s->phase = json_is_string(json_object_get(args, "phase")) ? dup_str(r, json_object_get(args, "phase")) : s->name;
	if (json_is_string(json_object_get(args, "package")))
		s->package = dup_str(r, json_object_get(args, "package"));
	if (json_is_string(json_object_get(args, "detail")))
		s->detail = dup_str(r, json_object_get(args, "detail"));
	if (s->cat && strcmp(s->cat, "tool") == 0)
		s->tool = json_is_string(json_object_get(args, "tool")) ? dup_str(r, json_object_get(args, "tool")) : s->name;
	s->status = get_int(json_object_get(args, "status"), &st) && st >= 0 && st < 1000 ? (int)st : -1;
	s->ts = ts;
	s->dur = dur;
	s->thread = thread;
	if (!s->name || !s->cat || !s->phase || (json_is_string(json_object_get(args, "package")) && !s->package) ||
		(json_is_string(json_object_get(args, "detail")) && !s->detail) || (s->cat[0] == 't' && !strcmp(s->cat, "tool") && !s->tool))
		return oom(r);
	r->nspans++;
	return 0;
}

static int metadata(rd_t *r, size_t i, json_t *ev)
{
	const char *name = json_string_value(json_object_get(ev, "name"));
	json_t *args = json_object_get(ev, "args");
	int64_t pid, tid = 0;
	bool is_thread;

	if (!name)
		return bad(r, i, ev, "no \"name\": a metadata event says which (process_name, thread_name, ...)");
	if (!get_int(json_object_get(ev, "pid"), &pid))
		return bad(r, i, ev, "\"pid\" is missing or not an integer");
	is_thread = !strncmp(name, "thread_", 7);
	if (is_thread && !get_int(json_object_get(ev, "tid"), &tid))
		return bad(r, i, ev, "\"tid\" is missing or not an integer");
	if (strcmp(name, "process_name") && strcmp(name, "thread_name") && strcmp(name, "process_labels") &&
		strcmp(name, "process_sort_index") && strcmp(name, "thread_sort_index"))
		return bad(r, i, ev, "unknown metadata \"%.60s\": the format has process_name, process_labels, "
			"process_sort_index, thread_name and thread_sort_index", name);
	if (!strcmp(name, "process_name") || !strcmp(name, "thread_name")) {
		json_t *n = json_object_get(args, "name");
		if (!json_is_string(n))
			return bad(r, i, ev, "%s needs args.name, a string", name);
		const char *v = dup_str(r, n);
		if (!v)
			return oom(r);
		if (is_thread) {
			size_t t = thread_of(r, pid, tid);
			if (t == SIZE_MAX)
				return oom(r);
			r->threads[t].name = v;
		} else {
			/* every thread of the process, now and later (set below) */
			size_t t = thread_of(r, pid, pid);
			if (t == SIZE_MAX)
				return oom(r);
			r->threads[t].process = v;
		}
	}
	return 0;
}

static int one_event(rd_t *r, size_t i, json_t *ev)
{
	json_t *ph = json_object_get(ev, "ph");
	const char *p = json_string_value(ph);
	int64_t pid, tid;
	double ts, dur;

	if (!json_is_object(ev))
		return bad(r, i, ev, "not an object");
	if (!p || json_string_length(ph) != 1 || !strchr(PHASES, p[0]))
		return bad(r, i, ev, "\"ph\" is %s: the phase is one character of the format (X, B, E, i, M, ...)",
			!p ? "missing or not a string" : "unknown");
	json_t *args = json_object_get(ev, "args");
	if (args && !json_is_object(args) && p[0] != 'M')
		return bad(r, i, ev, "\"args\" is not an object");
	if (p[0] == 'M')
		return metadata(r, i, ev);
	if (p[0] != 'E' && !json_is_string(json_object_get(ev, "name")))
		return bad(r, i, ev, "\"name\" is missing or not a string");
	if (json_object_get(ev, "cat") && !json_is_string(json_object_get(ev, "cat")))
		return bad(r, i, ev, "\"cat\" is not a string");
	if (!get_num(json_object_get(ev, "ts"), &ts))
		return bad(r, i, ev, "\"ts\" is missing or not a number (microseconds)");
	if (!get_int(json_object_get(ev, "pid"), &pid))
		return bad(r, i, ev, "\"pid\" is missing or not an integer");
	if (!get_int(json_object_get(ev, "tid"), &tid))
		return bad(r, i, ev, "\"tid\" is missing or not an integer");
	size_t t = thread_of(r, pid, tid);
	if (t == SIZE_MAX)
		return oom(r);
	switch (p[0]) {
	case 'X':
		if (!get_num(json_object_get(ev, "dur"), &dur) || dur < 0)
			return bad(r, i, ev, "\"dur\" is %s: a complete event needs its duration in microseconds, >= 0",
				json_object_get(ev, "dur") ? "not a number >= 0" : "missing");
		return add_span(r, ev, t, ts, dur);
	case 'B':
	case 'E': {
		struct be *b = grow(r, r->be, &r->becap, r->nbe, sizeof(*b));
		if (!b)
			return oom(r);
		r->be = b;
		b[r->nbe++] = (struct be){ .thread = t, .index = i, .ts = ts, .ph = p[0], .ev = ev };
		return 0;
	}
	default:
		return 0; /* instants, counters, async and flow events: valid, not spans */
	}
}

static int by_thread_ts(const void *a, const void *b)
{
	const struct be *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index; /* the file's order at one time */
}

/* B/E pairs, per thread in time order: each E closes the innermost open B. */
static int match_be(rd_t *r)
{
	size_t *stack = NULL, depth = 0, scap = 0;
	int rc = 0;

	if (r->nbe)
		qsort(r->be, r->nbe, sizeof(*r->be), by_thread_ts);
	for (size_t k = 0; k < r->nbe && !rc; k++) {
		struct be *e = &r->be[k];
		if (k && r->be[k - 1].thread != e->thread && depth) {
			struct be *open = &r->be[stack[depth - 1]];
			rc = bad(r, open->index, open->ev, "no E event ends this B event on its thread (pid %lld, tid %lld)",
				(long long)r->threads[open->thread].pid, (long long)r->threads[open->thread].tid);
			break;
		}
		if (e->ph == 'B') {
			size_t *s = grow(r, stack, &scap, depth, sizeof(*s));
			if (!s) {
				rc = oom(r);
				break;
			}
			stack = s;
			stack[depth++] = k;
			continue;
		}
		if (!depth) {
			rc = bad(r, e->index, e->ev, "an E event with no B event open on its thread (pid %lld, tid %lld) at ts %.3f",
				(long long)r->threads[e->thread].pid, (long long)r->threads[e->thread].tid, e->ts);
			break;
		}
		struct be *b = &r->be[stack[--depth]];
		const char *en = json_string_value(json_object_get(e->ev, "name"));
		const char *bn = json_string_value(json_object_get(b->ev, "name"));
		if (en && strcmp(en, bn)) {
			rc = bad(r, e->index, e->ev, "this E event ends \"%.80s\" (traceEvents[%zu]), the innermost B "
				"open on its thread: B/E pairs must nest", bn, b->index);
			break;
		}
		rc = add_span(r, b->ev, b->thread, b->ts, e->ts - b->ts);
	}
	if (!rc && depth) {
		struct be *open = &r->be[stack[depth - 1]];
		rc = bad(r, open->index, open->ev, "no E event ends this B event on its thread (pid %lld, tid %lld)",
			(long long)r->threads[open->thread].pid, (long long)r->threads[open->thread].tid);
	}
	gpuenv_free(r->ctx, stack);
	return rc;
}

static int by_pid_tid(const void *a, const void *b)
{
	const gpuenv_prof_thread_t *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int by_span(const void *a, const void *b)
{
	const gpuenv_prof_span_t *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1; /* the outer first */
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->phase, y->phase);
}

/* Threads in (pid, tid) order, spans by thread and time, their depths. */
static int finish(rd_t *r, gpuenv_prof_t *out)
{
	size_t *map = gpuenv_calloc(r->ctx, r->nthreads ? r->nthreads : 1, sizeof(*map));
	gpuenv_prof_thread_t *sorted = gpuenv_arena_calloc(r->arena, r->nthreads ? r->nthreads : 1, sizeof(*sorted));
	double *ends = gpuenv_calloc(r->ctx, r->nspans ? r->nspans : 1, sizeof(*ends));

	if (!map || !sorted || !ends) {
		gpuenv_free(r->ctx, map);
		gpuenv_free(r->ctx, ends);
		return oom(r);
	}
	/* a thread's position after the sort: sort (pid, tid, old index) triples */
	for (size_t k = 0; k < r->nthreads; k++)
		sorted[k] = r->threads[k];
	if (r->nthreads)
		qsort(sorted, r->nthreads, sizeof(*sorted), by_pid_tid);
	for (size_t k = 0; k < r->nthreads; k++) {
		gpuenv_prof_thread_t key = r->threads[k];
		gpuenv_prof_thread_t *f = bsearch(&key, sorted, r->nthreads, sizeof(*sorted), by_pid_tid);
		map[k] = (size_t)(f - sorted);
	}
	/* the process's name on each of its threads */
	for (size_t k = 0; k < r->nthreads; k++) {
		if (!sorted[k].process)
			continue;
		for (size_t j = 0; j < r->nthreads; j++)
			if (sorted[j].pid == sorted[k].pid && !sorted[j].process)
				sorted[j].process = sorted[k].process;
	}
	for (size_t k = 0; k < r->nspans; k++)
		r->spans[k].thread = map[r->spans[k].thread];
	if (r->nspans)
		qsort(r->spans, r->nspans, sizeof(*r->spans), by_span);
	out->t0 = out->t1 = 0;
	size_t depth = 0;
	for (size_t k = 0; k < r->nspans; k++) {
		gpuenv_prof_span_t *s = &r->spans[k];
		if (k && r->spans[k - 1].thread != s->thread)
			depth = 0;
		while (depth && ends[depth - 1] <= s->ts)
			depth--;
		s->depth = (unsigned)depth;
		ends[depth++] = s->ts + s->dur;
		if (!k || s->ts < out->t0)
			out->t0 = s->ts;
		if (!k || s->ts + s->dur > out->t1)
			out->t1 = s->ts + s->dur;
	}
	gpuenv_free(r->ctx, map);
	gpuenv_free(r->ctx, ends);
	/* the spans into the arena, so out owns nothing of the context */
	out->spans = gpuenv_arena_calloc(r->arena, r->nspans ? r->nspans : 1, sizeof(*out->spans));
	if (!out->spans)
		return oom(r);
	if (r->nspans)
		memcpy(out->spans, r->spans, r->nspans * sizeof(*out->spans));
	out->nspans = r->nspans;
	out->threads = sorted;
	out->nthreads = r->nthreads;
	return 0;
}

int gpuenv_prof_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file, const char *data,
	size_t len, gpuenv_prof_t *out)
{
	rd_t r = { .ctx = ctx, .arena = arena, .file = file ? file : "trace" };
	gpuenv_json_scope_t scope;
	json_error_t je;
	json_t *doc, *events;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	gpuenv_json_enter(ctx, &scope);
	doc = json_loadb(data, len, JSON_DECODE_ANY, &je);
	if (!doc) {
		if (gpuenv_json_leave(&scope))
			return oom(&r);
		gpuenv_fail(ctx, GPUENV_ESYNTAX, r.file, (unsigned)(je.line > 0 ? je.line : 0),
			(unsigned)(je.column > 0 ? je.column : 0), "not JSON: %s", je.text);
		return gpuenv_hint(ctx, "a trace is a JSON object {\"traceEvents\": [...]} or an array of events; "
					"one cut short (a killed run) cannot be read");
	}
	if (json_is_array(doc)) {
		events = doc;
	} else if (json_is_object(doc) && json_is_array(json_object_get(doc, "traceEvents"))) {
		events = json_object_get(doc, "traceEvents");
		json_t *unit = json_object_get(doc, "displayTimeUnit");
		if (unit && (!json_is_string(unit) || (strcmp(json_string_value(unit), "ms") &&
							      strcmp(json_string_value(unit), "ns")))) {
			rc = gpuenv_fail(ctx, GPUENV_EFORMAT, r.file, 0, 0, "\"displayTimeUnit\" is not \"ms\" or \"ns\"");
			goto out;
		}
		json_t *cmd = json_object_get(json_object_get(doc, "otherData"), "command");
		if (json_is_string(cmd) && !(out->command = dup_str(&r, cmd))) {
			rc = oom(&r);
			goto out;
		}
	} else {
		rc = gpuenv_fail(ctx, GPUENV_EFORMAT, r.file, 0, 0, "JSON, but not a trace: %s",
			json_is_object(doc) ? "the object has no \"traceEvents\" array" : "neither an object nor an array");
		gpuenv_hint(ctx, "a trace is a JSON object {\"traceEvents\": [...]} (the JSON Object Format) or an "
				 "array of events (the JSON Array Format)");
		goto out;
	}
	if (json_array_size(events) > GPUENV_PROF_MAX_EVENTS) {
		rc = gpuenv_fail(ctx, GPUENV_ETOOBIG, r.file, 0, 0, "%zu events: more than gpuenv reads (%d)",
			json_array_size(events), GPUENV_PROF_MAX_EVENTS);
		goto out;
	}
	out->nevents = json_array_size(events);
	for (size_t i = 0; i < out->nevents && !rc; i++)
		rc = one_event(&r, i, json_array_get(events, i));
	if (!rc)
		rc = match_be(&r);
	if (!rc)
		rc = finish(&r, out);
out:
	json_decref(doc);
	if (gpuenv_json_leave(&scope) && !(rc == -ENOMEM))
		rc = oom(&r);
	gpuenv_free(ctx, r.spans);
	gpuenv_free(ctx, r.threads);
	gpuenv_free(ctx, r.be);
	if (rc) {
		memset(out, 0, sizeof(*out));
	}
	return rc;
}
