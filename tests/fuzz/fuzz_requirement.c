/* Fuzz target for PEP 508: the input is read as a requirement and as a
 * marker.  Beyond surviving any bytes, what parses must round-trip:
 * str() parses again, to an equal requirement with the same str(), and
 * evaluation either answers or reports an error (never crashes). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep508.h"

#include "fuzz_alloc.h"

#define CHECK(c)                                                                          \
	do {                                                                              \
		if (!(c))                                                                 \
			abort();                                                          \
	} while (0)

static void eval_both(gpuenv_ctx_t *ctx, const gpuenv_marker_t *m)
{
	static const char *const extras[] = { "cuda", "Foo_Bar", NULL };
	gpuenv_marker_env_t env;
	bool res;
	int r;

	r = gpuenv_marker_eval(ctx, m, NULL, &res);
	CHECK(r == 0 || r == GPUENV_EMARKER || r == -ENOMEM);
	gpuenv_marker_env_default(&env);
	env.extras = extras;
	env.dependency_groups = extras;
	env.extra = "cuda";
	env.python_full_version = "3.13.0rc1+";
	r = gpuenv_marker_eval(ctx, m, &env, &res);
	CHECK(r == 0 || r == GPUENV_EMARKER || r == -ENOMEM);
}

static void requirement(gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t ar;
	gpuenv_requirement_t r1, r2;
	gpuenv_buf_t s1, s2;
	bool eq;

	gpuenv_arena_init(&ar, ctx, 0);
	gpuenv_buf_init(&s1, ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_buf_init(&s2, ctx, GPUENV_BUF_DEFAULT_MAX);
	if (gpuenv_requirement_parse(ctx, &ar, gpuenv_str_n((const char *)data, size), &r1) == 0) {
		CHECK(gpuenv_requirement_format(&r1, &s1) == 0);
		CHECK(gpuenv_requirement_parse(ctx, &ar, gpuenv_str_n(s1.data, s1.len), &r2) == 0);
		CHECK(gpuenv_requirement_format(&r2, &s2) == 0);
		CHECK(s1.len == s2.len && memcmp(s1.data, s2.data, s1.len) == 0);
		CHECK(gpuenv_requirement_eq(ctx, &r1, &r2, &eq) == 0 && eq);
		if (r1.marker)
			eval_both(ctx, r1.marker);
	}
	gpuenv_buf_free(&s1);
	gpuenv_buf_free(&s2);
	gpuenv_arena_free(&ar);
}

static void marker(gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t ar;
	gpuenv_marker_t *m1, *m2;
	gpuenv_buf_t s1, s2;
	bool eq;

	gpuenv_arena_init(&ar, ctx, 0);
	gpuenv_buf_init(&s1, ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_buf_init(&s2, ctx, GPUENV_BUF_DEFAULT_MAX);
	if (gpuenv_marker_parse(ctx, &ar, gpuenv_str_n((const char *)data, size), &m1) == 0) {
		CHECK(gpuenv_marker_format(m1, &s1) == 0);
		CHECK(gpuenv_marker_parse(ctx, &ar, gpuenv_str_n(s1.data, s1.len), &m2) == 0);
		CHECK(gpuenv_marker_format(m2, &s2) == 0);
		CHECK(s1.len == s2.len && memcmp(s1.data, s2.data, s1.len) == 0);
		CHECK(gpuenv_marker_eq(ctx, m1, m2, &eq) == 0 && eq);
		eval_both(ctx, m1);
	}
	gpuenv_buf_free(&s1);
	gpuenv_buf_free(&s2);
	gpuenv_arena_free(&ar);
}

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t ar;
	gpuenv_requirement_t r1;
	gpuenv_marker_t *m;
	gpuenv_str_t all = gpuenv_str_n((const char *)data, size);

	gpuenv_arena_init(&ar, ctx, 0);
	if (OOM_CALL(o, ctx, gpuenv_requirement_parse(ctx, &ar, all, &r1)) == 0) {
		gpuenv_buf_t s1;
		bool eq, res;
		gpuenv_buf_init(&s1, ctx, GPUENV_BUF_DEFAULT_MAX);
		OOM_CALL(o, ctx, gpuenv_requirement_format(&r1, &s1));
		OOM_CALL(o, ctx, gpuenv_requirement_eq(ctx, &r1, &r1, &eq));
		if (r1.marker)
			OOM_CALL(o, ctx, gpuenv_marker_eval(ctx, r1.marker, NULL, &res));
		gpuenv_buf_free(&s1);
	}
	if (OOM_CALL(o, ctx, gpuenv_marker_parse(ctx, &ar, all, &m)) == 0) {
		gpuenv_buf_t s1;
		bool res, eq;
		OOM_CALL(o, ctx, gpuenv_marker_eval(ctx, m, NULL, &res));
		OOM_CALL(o, ctx, gpuenv_marker_eq(ctx, m, m, &eq));
		gpuenv_buf_init(&s1, ctx, GPUENV_BUF_DEFAULT_MAX);
		OOM_CALL(o, ctx, gpuenv_marker_format(m, &s1));
		gpuenv_buf_free(&s1);
	}
	gpuenv_arena_free(&ar);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;

	gpuenv_ctx_init(&ctx);
	requirement(&ctx, data, size);
	marker(&ctx, data, size);
	fuzz_oom(data, size, oom_run);
	return 0;
}
