/* Fuzz target for the resolver: the input is a packse-format scenario
 * (TOML) read by the in-memory provider and resolved.  Beyond surviving
 * any bytes: a parse fails with ctx->err set; a resolution is either a
 * solution that meets every requirement that applies (the roots', and each
 * chosen version's with its extras, markers evaluated for the target) or
 * GPUENV_ENOSOLUTION with an explanation; the same input resolves the
 * same way twice; and the inputs written back as a scenario
 * (gpuenv_scenario_write) resolve to the same answer. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/resolve.h"

#include "fuzz_alloc.h"

#define CHECK(c)                                                                          \
	do {                                                                              \
		if (!(c))                                                                 \
			abort();                                                          \
	} while (0)

static const gpuenv_resolved_t *find(const gpuenv_resolution_t *res, const char *name)
{
	for (size_t i = 0; i < res->npkgs; i++)
		if (!strcmp(res->pkgs[i].name, name))
			return &res->pkgs[i];
	return NULL;
}

/* rq (marker already known true) is met by the resolution */
static void check_met(const gpuenv_resolution_t *res, const gpuenv_requirement_t *rq)
{
	char name[600], ex[600];
	const gpuenv_resolved_t *p;

	if (rq->name.len >= sizeof(name))
		return;
	gpuenv_name_normalize_to(rq->name, name, sizeof(name));
	p = find(res, name);
	CHECK(p != NULL);
	CHECK(rq->url.len || gpuenv_specset_contains_ex(&rq->spec, gpuenv_str(p->cand->version),
				     &p->cand->v, GPUENV_PRERELEASES_YES, false));
	for (size_t e = 0; e < rq->nextras; e++) {
		bool found = false;
		if (rq->extras[e].len >= sizeof(ex))
			continue;
		gpuenv_name_normalize_to(rq->extras[e], ex, sizeof(ex));
		for (size_t k = 0; k < p->nextras; k++)
			found = found || !strcmp(p->extras[k], ex);
		CHECK(found);
	}
}

static bool applies(gpuenv_ctx_t *ctx, const gpuenv_scenario_t *sc, const gpuenv_requirement_t *rq,
	const char *extra)
{
	gpuenv_marker_env_t env = sc->env;
	bool with = false, without = false;

	if (!rq->marker)
		return extra == NULL;
	env.extra = NULL;
	CHECK(gpuenv_marker_eval(ctx, rq->marker, &env, &without) == 0);
	if (!extra)
		return without;
	env.extra = extra;
	CHECK(gpuenv_marker_eval(ctx, rq->marker, &env, &with) == 0);
	return with && !without;
}

static void verify(gpuenv_ctx_t *ctx, const gpuenv_scenario_t *sc, const gpuenv_resolution_t *res)
{
	for (size_t i = 0; i < sc->nroots; i++)
		if (applies(ctx, sc, &sc->roots[i], NULL))
			check_met(res, &sc->roots[i]);
	for (size_t i = 0; i < res->npkgs; i++) {
		const gpuenv_resolved_t *p = &res->pkgs[i];
		const gpuenv_requirement_t *rq;
		size_t n;
		CHECK(i == 0 || strcmp(res->pkgs[i - 1].name, p->name) < 0);
		CHECK(sc->provider.requires(sc->provider.self, ctx, p->name, p->cand, &rq, &n) == 0);
		for (size_t k = 0; k < n; k++) {
			if (applies(ctx, sc, &rq[k], NULL))
				check_met(res, &rq[k]);
			for (size_t e = 0; e < p->nextras; e++)
				if (applies(ctx, sc, &rq[k], p->extras[e]))
					check_met(res, &rq[k]);
		}
		for (size_t d = 0; d < p->ndeps; d++)
			CHECK(p->deps[d] < res->npkgs && p->deps[d] != i);
	}
}

static void resolve(gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t ar;
	gpuenv_scenario_t sc;
	gpuenv_resolve_req_t req;
	gpuenv_resolution_t r1, r2;
	int a, b;

	gpuenv_arena_init(&ar, ctx, 0);
	a = gpuenv_scenario_parse(ctx, &ar, "fuzz.toml", (const char *)data, size, &sc);
	if (a) {
		CHECK(ctx->err.code == a && ctx->err.msg[0]);
		gpuenv_arena_free(&ar);
		return;
	}
	gpuenv_scenario_request(&sc, &req);
	a = gpuenv_resolve(ctx, &ar, &req, &sc.provider, &r1);
	b = gpuenv_resolve(ctx, &ar, &req, &sc.provider, &r2);
	CHECK(a == b);
	if (a == 0 || a == GPUENV_ENOSOLUTION) {
		/* the inputs written as a scenario resolve the same way */
		gpuenv_buf_t out;
		gpuenv_scenario_t sc2;
		gpuenv_resolve_req_t req2;
		gpuenv_resolution_t r3;
		gpuenv_buf_init(&out, ctx, GPUENV_SCENARIO_MAX);
		CHECK(gpuenv_scenario_write(ctx, &req, &sc.provider, sc.name, 0, &out) == 0);
		CHECK(gpuenv_scenario_parse(ctx, &ar, "dump.toml", out.data, out.len, &sc2) == 0);
		gpuenv_scenario_request(&sc2, &req2);
		CHECK(gpuenv_resolve(ctx, &ar, &req2, &sc2.provider, &r3) == a);
		CHECK(r3.npkgs == r1.npkgs);
		for (size_t i = 0; i < r1.npkgs; i++)
			CHECK(!strcmp(r1.pkgs[i].name, r3.pkgs[i].name) &&
			      !strcmp(r1.pkgs[i].cand->version, r3.pkgs[i].cand->version));
		gpuenv_buf_free(&out);
	}
	if (a == 0) {
		verify(ctx, &sc, &r1);
		CHECK(r1.npkgs == r2.npkgs);
		for (size_t i = 0; i < r1.npkgs; i++)
			CHECK(r1.pkgs[i].cand == r2.pkgs[i].cand);
	} else if (a == GPUENV_ENOSOLUTION) {
		CHECK(r1.explanation && r1.explanation[0]);
		CHECK(!strcmp(r1.explanation, r2.explanation));
	} else {
		/* a marker that cannot be evaluated, or a cap */
		CHECK(ctx->err.code == a && ctx->err.msg[0]);
	}
	gpuenv_arena_free(&ar);
}

/* The same with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t ar;
	gpuenv_scenario_t sc;
	gpuenv_resolve_req_t req;
	gpuenv_resolution_t res;

	gpuenv_arena_init(&ar, ctx, 0);
	if (OOM_CALL(o, ctx, gpuenv_scenario_parse(ctx, &ar, "fuzz.toml", (const char *)data, size,
				     &sc)) == 0) {
		gpuenv_scenario_request(&sc, &req);
		OOM_CALL(o, ctx, gpuenv_resolve(ctx, &ar, &req, &sc.provider, &res));
	}
	gpuenv_arena_free(&ar);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;

	if (size > 1 << 16) /* keep a search within a fuzzing budget */
		return 0;
	gpuenv_ctx_init(&ctx);
	resolve(&ctx, data, size);
	fuzz_oom(data, size, oom_run);
	return 0;
}
