/* Fuzz target: PEP 440 versions and specifier sets.
 *
 * The input (not NUL-terminated) is parsed as a version and as a specifier
 * set; when the first line and the rest both parse, they are also compared
 * and matched against each other.  Besides the sanitizers, invariants are
 * checked and abort() on violation:
 *   - a version's normalized form parses back to an equal version and is
 *     a fixed point of normalization;
 *   - cmp is reflexive and antisymmetric; cmp_public agrees with cmp up to
 *     the local label;
 *   - a set's text parses back to an equal set;
 *   - filter with YES selects exactly what contains(YES) accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep440.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

static void check_version(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_version_t *v)
{
	gpuenv_buf_t b1, b2;
	gpuenv_version_t back;

	CHECK(gpuenv_version_cmp(v, v) == 0);
	gpuenv_buf_init(&b1, ctx, 0);
	gpuenv_buf_init(&b2, ctx, 0);
	CHECK(gpuenv_version_format(v, &b1) == 0);
	CHECK(gpuenv_version_parse(ctx, a, gpuenv_str_n(b1.data, b1.len), &back) == 0);
	CHECK(gpuenv_version_cmp(v, &back) == 0);
	CHECK(gpuenv_version_format(&back, &b2) == 0);
	CHECK(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
	for (unsigned flags = 1; flags < 8; flags++) {
		gpuenv_buf_reset(&b2);
		CHECK(gpuenv_version_format_ex(v, flags, &b2) == 0);
		if (!(flags & GPUENV_VFMT_BASE)) {
			/* every variant is a version again */
			CHECK(gpuenv_version_parse(ctx, a, gpuenv_str_n(b2.data, b2.len), &back) == 0);
			if (flags == GPUENV_VFMT_TRIM_ZEROS)
				CHECK(gpuenv_version_cmp(v, &back) == 0);
			if (flags & GPUENV_VFMT_PUBLIC)
				CHECK(gpuenv_version_cmp_public(v, &back) == 0);
		}
	}
	gpuenv_buf_free(&b1);
	gpuenv_buf_free(&b2);
}

static void check_set(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_specset_t *set)
{
	gpuenv_buf_t b;
	gpuenv_specset_t back;

	gpuenv_buf_init(&b, ctx, 0);
	CHECK(gpuenv_specset_format(set, &b) == 0);
	CHECK(gpuenv_specset_parse(ctx, a, gpuenv_str_n(b.data ? b.data : "", b.len), &back) == 0);
	CHECK(gpuenv_specset_eq(ctx, set, &back) == 1);
	for (size_t i = 0; i < set->n; i++) {
		gpuenv_specifier_t one;
		gpuenv_buf_reset(&b);
		CHECK(gpuenv_specifier_format(&set->items[i], &b) == 0);
		CHECK(gpuenv_specifier_parse(ctx, a, gpuenv_str_n(b.data, b.len), &one) == 0);
		CHECK(gpuenv_specifier_eq(&one, &set->items[i]));
		(void)gpuenv_specifier_prereleases(&one);
	}
	(void)gpuenv_specset_prereleases(set);
	gpuenv_buf_free(&b);
}

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_version_t v;
	gpuenv_specset_t set;
	gpuenv_str_t all = gpuenv_str_n((const char *)data, size);

	gpuenv_arena_init(&a, ctx, (size_t)16 << 20);
	{
		gpuenv_specifier_t one;
		gpuenv_buf_t b;
		OOM_CALL(o, ctx, gpuenv_specifier_parse(ctx, &a, all, &one));
		gpuenv_buf_init(&b, ctx, 0);
		OOM_CALL(o, ctx, gpuenv_name_normalize(all, &b));
		gpuenv_buf_free(&b);
	}
	if (OOM_CALL(o, ctx, gpuenv_version_parse(ctx, &a, all, &v)) == 0) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, ctx, 0);
		OOM_CALL(o, ctx, gpuenv_version_format(&v, &b));
		gpuenv_buf_free(&b);
	}
	if (OOM_CALL(o, ctx, gpuenv_specset_parse(ctx, &a, all, &set)) == 0) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, ctx, 0);
		if (OOM_CALL(o, ctx, gpuenv_specset_format(&set, &b)) == 0) {
			gpuenv_specset_t back;
			if (OOM_CALL(o, ctx, gpuenv_specset_parse(ctx, &a, gpuenv_str_n(b.data ? b.data : "", b.len), &back)) == 0) {
				int eq = gpuenv_specset_eq(ctx, &set, &back);
				OOM_CALL(o, ctx, eq < 0 ? eq : 0);
			}
		}
		gpuenv_buf_free(&b);
	}
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_version_t v, w;
	gpuenv_specset_t set;
	gpuenv_str_t all = gpuenv_str_n((const char *)data, size), head, rest;
	bool v_ok, w_ok, set_ok;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, (size_t)16 << 20);

	if (gpuenv_version_parse(&ctx, &a, all, &v) == 0)
		check_version(&ctx, &a, &v);
	if (gpuenv_specset_parse(&ctx, &a, all, &set) == 0)
		check_set(&ctx, &a, &set);

	/* "VERSION\nVERSION-OR-SPEC": compare and match the two */
	rest = gpuenv_str_split(all, '\n', &head);
	if (rest.ptr) {
		v_ok = gpuenv_version_parse(&ctx, &a, head, &v) == 0;
		w_ok = gpuenv_version_parse(&ctx, &a, rest, &w) == 0;
		if (v_ok && w_ok) {
			int c = gpuenv_version_cmp(&v, &w), p = gpuenv_version_cmp_public(&v, &w);
			CHECK(sign(c) == -sign(gpuenv_version_cmp(&w, &v)));
			CHECK(p == 0 || sign(p) == sign(c));
			gpuenv_version_key_t kv, kw;
			gpuenv_version_key(&v, &kv);
			gpuenv_version_key(&w, &kw);
			int k = gpuenv_version_key_cmp(&kv, &kw);
			CHECK(k == 0 || sign(k) == sign(c));
			CHECK(c != 0 || k == 0);
		}
		set_ok = gpuenv_specset_parse(&ctx, &a, rest, &set) == 0;
		if (set_ok) {
			const gpuenv_version_t *pv[2] = { v_ok ? &v : NULL, w_ok ? &w : NULL };
			gpuenv_str_t texts[2] = { head, rest };
			size_t idx[2], m;
			bool in = gpuenv_specset_contains(&set, head, pv[0], GPUENV_PRERELEASES_YES);
			m = gpuenv_specset_filter(&set, texts, pv, 1, GPUENV_PRERELEASES_YES, idx);
			CHECK(m == (in ? 1u : 0u));
			for (int pre = -1; pre <= 1; pre++) {
				(void)gpuenv_specset_contains_ex(&set, head, pv[0], pre, pre == 0);
				m = gpuenv_specset_filter(&set, texts, pv, 2, pre, idx);
				CHECK(m <= 2);
				for (size_t i = 0; i < set.n; i++) {
					(void)gpuenv_specifier_contains(&set.items[i], head, pv[0], pre);
					(void)gpuenv_specifier_filter(&set.items[i], texts, pv, 2, pre, idx);
				}
			}
		}
	}
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
