/* The summary of a trace (gpuenv/profile.h): time by package, by phase,
 * by package and phase; tool calls by tool and by package and tool. */
#include "gpuenv/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct acc {
	gpuenv_ctx_t *ctx;
	gpuenv_strmap_t map; /* "key\nkey2" -> index + 1 */
	gpuenv_prof_stat_t *v;
	size_t n, cap;
	gpuenv_arena_t *arena;
} acc_t;

static int add(acc_t *a, const char *key, const char *key2, double us, bool failed)
{
	gpuenv_str_t k = gpuenv_arena_printf(a->arena, "%s\n%s", key, key2 ? key2 : "");
	bool found;

	if (!k.ptr)
		return gpuenv_oom(a->ctx, "the trace's summary");
	size_t i = (size_t)(uintptr_t)gpuenv_strmap_get(&a->map, k.ptr, k.len, &found);
	if (!found) {
		if (gpuenv_array_grow(a->ctx, NULL, &a->v, &a->cap, a->n + 1, sizeof(*a->v), SIZE_MAX,
			    "the trace's summary"))
			return a->ctx->err.code;
		a->v[a->n] = (gpuenv_prof_stat_t){ .key = key, .key2 = key2 };
		if (gpuenv_strmap_put(&a->map, k.ptr, k.len, (void *)(uintptr_t)(a->n + 1)))
			return -ENOMEM;
		i = ++a->n;
	}
	gpuenv_prof_stat_t *s = &a->v[i - 1];
	s->total_us += us;
	s->count++;
	s->failed += failed;
	return 0;
}

static int by_total(const void *x, const void *y)
{
	const gpuenv_prof_stat_t *a = x, *b = y;
	if (a->total_us != b->total_us)
		return a->total_us > b->total_us ? -1 : 1;
	int c = strcmp(a->key, b->key);
	return c ? c : strcmp(a->key2 ? a->key2 : "", b->key2 ? b->key2 : "");
}

/* The rows, sorted, into the arena; the accumulator freed. */
static int done(acc_t *a, gpuenv_prof_stat_t **out, size_t *n)
{
	int r = 0;

	*n = 0;
	*out = gpuenv_arena_calloc(a->arena, a->n ? a->n : 1, sizeof(**out));
	if (!*out)
		r = gpuenv_oom(a->ctx, "the trace's summary");
	else if (a->n) {
		memcpy(*out, a->v, a->n * sizeof(**out));
		qsort(*out, a->n, sizeof(**out), by_total);
		*n = a->n;
	}
	gpuenv_free(a->ctx, a->v);
	gpuenv_strmap_free(&a->map);
	return r;
}

int gpuenv_prof_summarize(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_prof_t *p,
	gpuenv_prof_summary_t *out)
{
	enum { PKG, PHASE, PKG_PHASE, TOOL, PKG_TOOL, N };
	acc_t a[N];
	int r = 0;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < N; i++)
		a[i] = (acc_t){ .ctx = ctx, .map = { .ctx = ctx }, .arena = arena };
	out->wall_us = p->t1 - p->t0;
	/* the spans open around the current one on its thread (the spans
	 * come by thread, then start, the outer first): a package's time is
	 * that of its outermost spans, not again that of the hooks inside its
	 * build */
	struct open_span {
		double end;
		const char *package;
	} open[64];
	size_t nopen = 0;
	for (size_t k = 0; k < p->nspans && !r; k++) {
		const gpuenv_prof_span_t *s = &p->spans[k];
		if (k && p->spans[k - 1].thread != s->thread)
			nopen = 0;
		while (nopen && open[nopen - 1].end <= s->ts)
			nopen--;
		bool nested = false;
		for (size_t i = 0; i < nopen && s->package && !nested; i++)
			nested = open[i].package && !strcmp(open[i].package, s->package);
		if (nopen < sizeof(open) / sizeof(open[0]))
			open[nopen++] = (struct open_span){ s->ts + s->dur, s->package };
		if (s->tool) {
			bool failed = s->status > 0;
			out->tool_calls++;
			out->tool_failed += failed;
			r = add(&a[TOOL], s->tool, NULL, s->dur, failed);
			if (!r)
				r = add(&a[PKG_TOOL], s->package ? s->package : "", s->tool, s->dur, failed);
			continue;
		}
		r = add(&a[PHASE], s->phase, NULL, s->dur, false);
		if (!r && s->package && !nested)
			r = add(&a[PKG], s->package, NULL, s->dur, false);
		if (!r && s->package)
			r = add(&a[PKG_PHASE], s->package, s->phase, s->dur, false);
	}
	gpuenv_prof_stat_t **dst[N] = { &out->packages, &out->phases, &out->package_phases, &out->tools,
		&out->package_tools };
	size_t *cnt[N] = { &out->npackages, &out->nphases, &out->npackage_phases, &out->ntools,
		&out->npackage_tools };
	for (int i = 0; i < N; i++) {
		if (r) {
			gpuenv_free(ctx, a[i].v);
			gpuenv_strmap_free(&a[i].map);
			continue;
		}
		r = done(&a[i], dst[i], cnt[i]);
	}
	if (r) {
		if (r == -ENOMEM && ctx->err.code != -ENOMEM)
			gpuenv_oom(ctx, "the trace's summary");
		memset(out, 0, sizeof(*out));
	}
	return r;
}
