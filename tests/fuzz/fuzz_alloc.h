/* Allocation failures in every fuzz target (as pkgconf's fuzzers and curl's
 * torture tests do).  Each target also hands its parsers to fuzz_oom(), which
 * runs them twice over the same input with the failing allocator of
 * tests/unit/testutil.h: once to count the allocations, once with one of
 * them failing, and every later one (memory has run out), the one chosen by
 * the input's first two bytes, so the fuzzer explores the failure points as
 * it explores the input.  Every call goes through OOM_CALL, which abort()s
 * (for libFuzzer and the corpus replay to catch) when
 *   - a call returns a negative code without recording it in ctx->err
 *     (err.code equal to the code, a message), or
 *   - the first result that differs from the run without failures, in a
 *     call during which an allocation failed, is not -ENOMEM (an
 *     allocation failure reported as a syntax error, say).
 * GPUENV_FUZZ_OOM_ALL=1 in the environment tries every allocation index
 * instead of one (slow; for a deep check of a corpus). */
#ifndef GPUENV_FUZZ_ALLOC_H
#define GPUENV_FUZZ_ALLOC_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/core.h"

#include "../unit/testutil.h"

#define FUZZ_OOM_MAX_CALLS 64

typedef struct fuzz_oom {
	testutil_alloc_t t;
	int pass;		      /* 0: counting, 1: with a failure */
	int res[FUZZ_OOM_MAX_CALLS]; /* pass 0's results, call by call */
	size_t n, i;
	long mark;     /* failures before the current call */
	bool diverged; /* pass 1 took another path than pass 0 */
} fuzz_oom_t;

typedef void (*fuzz_oom_fn)(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size);

static inline void fuzz_oom_fail(const char *what, const gpuenv_ctx_t *ctx, int r)
{
	fprintf(stderr, "fuzz_oom: %s: returned %d (%s), ctx->err %d '%s'\n", what, r,
		gpuenv_strerror(r), ctx->err.code, ctx->err.msg);
	abort();
}

static inline void fuzz_oom_before(fuzz_oom_t *o, gpuenv_ctx_t *ctx)
{
	memset(&ctx->err, 0, sizeof(ctx->err));
	o->mark = o->t.failures;
}

static inline int fuzz_oom_after(fuzz_oom_t *o, gpuenv_ctx_t *ctx, int r, const char *what)
{
	size_t i = o->i++;

	if (r < 0 && (ctx->err.code != r || !ctx->err.msg[0]))
		fuzz_oom_fail(what, ctx, r);
	if (o->pass == 0) {
		if (i < FUZZ_OOM_MAX_CALLS)
			o->res[o->n++] = r;
		return r;
	}
	if (!o->diverged && i < o->n && r != o->res[i]) {
		o->diverged = true;
		if (o->t.failures > o->mark && r != -ENOMEM)
			fuzz_oom_fail(what, ctx, r);
	}
	return r;
}

/* r = a call that returns 0 or a negative code, checked as said above */
#define OOM_CALL(o, ctx, call) (fuzz_oom_before((o), (ctx)), fuzz_oom_after((o), (ctx), (call), #call))

static inline void fuzz_oom_pass(fuzz_oom_t *o, fuzz_oom_fn run, const uint8_t *data, size_t size,
	int pass, long fail_at)
{
	gpuenv_ctx_t ctx;

	testutil_alloc_reset(&o->t, fail_at, false);
	o->pass = pass;
	o->i = 0;
	o->diverged = false;
	if (pass == 0)
		o->n = 0;
	gpuenv_ctx_init(&ctx);
	ctx.getenv = NULL; /* the same runs whatever the environment */
	ctx.mem = testutil_allocator(&o->t);
	run(o, &ctx, data, size);
}

static inline void fuzz_oom(const uint8_t *data, size_t size, fuzz_oom_fn run)
{
	fuzz_oom_t o;
	long n;

	memset(&o, 0, sizeof(o));
	fuzz_oom_pass(&o, run, data, size, 0, TESTUTIL_NEVER);
	n = o.t.calls;
	if (!n)
		return;
	if (getenv("GPUENV_FUZZ_OOM_ALL")) {
		for (long k = 0; k < n; k++)
			fuzz_oom_pass(&o, run, data, size, 1, k);
		return;
	}
	fuzz_oom_pass(&o, run, data, size, 1,
		(long)(((size ? data[0] : 0) | (size > 1 ? data[1] << 8 : 0)) % n));
	/* the same input allocates the same way: the failure was reached */
	if (!o.t.failures)
		abort();
}

#endif
