/* Unit tests for PEP 440 versions and specifiers and PEP 503 names: the
 * corners the packaging vectors do not reach (limits, errors and their
 * columns, uint64 edges, local labels of GPU wheels, allocation failure). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep440.h"

#include "testutil.h"

struct fx {
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	gpuenv_ctx_init(&f->ctx);
	gpuenv_arena_init(&f->arena, &f->ctx, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	gpuenv_arena_free(&f->arena);
	free(f);
	return 0;
}

static gpuenv_version_t V(struct fx *f, const char *s)
{
	gpuenv_version_t v;
	int r = gpuenv_version_parse(&f->ctx, &f->arena, gpuenv_str(s), &v);
	if (r)
		fail_msg("'%s' should parse: %s", s, f->ctx.err.msg);
	return v;
}

static void assert_norm(struct fx *f, const char *in, unsigned flags, const char *want)
{
	gpuenv_version_t v = V(f, in);
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &f->ctx, 0);
	assert_int_equal(gpuenv_version_format_ex(&v, flags, &b), 0);
	if (strcmp(b.data ? b.data : "", want) != 0)
		fail_msg("'%s' -> '%s', want '%s'", in, b.data ? b.data : "", want);
	gpuenv_buf_free(&b);
}

static void test_parse_forms(void **state)
{
	struct fx *f = *state;

	assert_norm(f, "1.0", 0, "1.0");
	assert_norm(f, "V1.0", 0, "1.0");
	assert_norm(f, "  2.1.0+CU118 \n", 0, "2.1.0+cu118");
	assert_norm(f, "2.1.0+Ubuntu-007_rc.01a", 0, "2.1.0+ubuntu.7.rc.01a");
	assert_norm(f, "1.0a.", 0, "1.0a0");		  /* separator without a number */
	assert_norm(f, "1.0.post.dev", 0, "1.0.post0.dev0");
	assert_norm(f, "1.0-1", 0, "1.0.post1");
	assert_norm(f, "1.0a-1", 0, "1.0a1");		  /* '-' binds to the a-number */
	assert_norm(f, "1.0a1-1", 0, "1.0a1.post1");
	assert_norm(f, "1.0PREVIEW2", 0, "1.0rc2");
	assert_norm(f, "1!2.0_Beta_3.REV4-DEV5", 0, "1!2.0b3.post4.dev5");
	assert_norm(f, "\xe3\x80\x80" "1.0\xc2\xa0", 0, "1.0"); /* U+3000, U+00A0 */
	assert_norm(f, "18446744073709551615.1", 0, "18446744073709551615.1");
	assert_norm(f, "1.0.0.0+local", GPUENV_VFMT_TRIM_ZEROS, "1+local");
	assert_norm(f, "0.0", GPUENV_VFMT_TRIM_ZEROS, "0");
	assert_norm(f, "1!2.0rc1.post2.dev3+x", GPUENV_VFMT_PUBLIC, "1!2.0rc1.post2.dev3");
	assert_norm(f, "1!2.0rc1.post2.dev3+x", GPUENV_VFMT_BASE, "1!2.0");
	assert_norm(f, "7!1.0.0.post1+x", GPUENV_VFMT_BASE | GPUENV_VFMT_TRIM_ZEROS, "7!1");
}

static void assert_bad(struct fx *f, const char *in, unsigned col)
{
	gpuenv_version_t v;
	int r = gpuenv_version_parse(&f->ctx, &f->arena, gpuenv_str(in), &v);
	if (r != GPUENV_EVERSION)
		fail_msg("'%s' should be invalid (got %d)", in, r);
	assert_non_null(strstr(f->ctx.err.msg, "invalid version"));
	if (col && f->ctx.err.col != col)
		fail_msg("'%s': error at column %u, want %u (%s)", in, f->ctx.err.col, col,
			f->ctx.err.msg);
}

static void test_parse_errors(void **state)
{
	struct fx *f = *state;

	assert_bad(f, "", 1);
	assert_bad(f, "   ", 0);
	assert_bad(f, "v", 2);
	assert_bad(f, "1.0+", 5);
	assert_bad(f, "1.0+a..b", 6);
	assert_bad(f, "1..0", 2);
	assert_bad(f, "  1.0 a1", 6);
	assert_bad(f, "1!", 3);
	assert_bad(f, "1.0-", 4);
	assert_bad(f, "1.0_1", 4);
	assert_bad(f, "1.0alpha.beta", 10);
	/* uint64: the largest value parses, one more does not */
	assert_bad(f, "18446744073709551616", 1);
	assert_bad(f, "1.0a99999999999999999999", 5);
	assert_bad(f, "99999999999999999999!1.0", 1);
	/* non-ASCII letters that Python would case-fold to ASCII */
	assert_bad(f, "1.0+\xc4\xb0", 5);
	assert_non_null(strstr(f->ctx.err.msg, "local label"));
	assert_bad(f, "1.0\xc4\xb0", 4);
	assert_non_null(strstr(f->ctx.err.msg, "byte 0xc4"));
}

static void test_parse_embedded_nul(void **state)
{
	struct fx *f = *state;
	gpuenv_version_t v;

	assert_int_equal(gpuenv_version_parse(&f->ctx, &f->arena, gpuenv_str_n("1.0\0", 4), &v),
		GPUENV_EVERSION);
	assert_int_equal(gpuenv_version_parse(&f->ctx, &f->arena, GPUENV_STR_NULL, &v),
		GPUENV_EVERSION);
}

/* strictly ascending, including GPU-wheel local labels and uint64 edges */
static const char *const ascending[] = {
	"0.dev0", "0", "0.0.0.1", "0.9", "1.0.dev0", "1.0.dev1", "1.0a1.dev0", "1.0a1",
	"1.0a1.post1.dev1", "1.0a1.post1", "1.0b1", "1.0rc1", "1.0", "1.0+abc", "1.0+cpu",
	"1.0+cu118", "1.0+cu121", "1.0+0", "1.0+1", "1.0+1.abc", "1.0+1.1", "1.0+2", "1.0+10",
	"1.0+18446744073709551616000", "1.0.post1.dev0", "1.0.post1", "1.0.post1+cu118",
	"1.0.1", "1.1", "2.1.0+cpu", "2.1.0+cu118", "2.1.0+cu121", "2.1.1", "18446744073709551615",
	"18446744073709551615.1", "1!0", "18446744073709551615!0.dev0",
};

static void test_order(void **state)
{
	struct fx *f = *state;
	size_t n = sizeof(ascending) / sizeof(ascending[0]);
	gpuenv_version_t vs[sizeof(ascending) / sizeof(ascending[0])];

	for (size_t i = 0; i < n; i++)
		vs[i] = V(f, ascending[i]);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int c = gpuenv_version_cmp(&vs[i], &vs[j]);
			int want = (i > j) - (i < j);
			if ((c > 0) - (c < 0) != want)
				fail_msg("cmp(%s, %s) = %d", ascending[i], ascending[j], c);
		}
	/* keys never contradict the order */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			gpuenv_version_key_t ki, kj;
			gpuenv_version_key(&vs[i], &ki);
			gpuenv_version_key(&vs[j], &kj);
			int kc = gpuenv_version_key_cmp(&ki, &kj);
			if (kc && (kc > 0) != (i > j))
				fail_msg("key order of %s vs %s", ascending[i], ascending[j]);
		}
	/* trailing zeros and spelling do not matter; locals do, publicly not */
	gpuenv_version_t a = V(f, "1.0.0"), b = V(f, "1"), c = V(f, "1.0+x"), d = V(f, "01.00");
	assert_int_equal(gpuenv_version_cmp(&a, &b), 0);
	assert_int_equal(gpuenv_version_cmp(&a, &d), 0);
	assert_true(gpuenv_version_cmp(&a, &c) < 0);
	assert_int_equal(gpuenv_version_cmp_public(&a, &c), 0);
	assert_true(gpuenv_version_is_prerelease(&vs[0]));
	a = V(f, "1.0.post1.dev1");
	assert_true(gpuenv_version_is_prerelease(&a));
	a = V(f, "1.0.post1+dev");
	assert_false(gpuenv_version_is_prerelease(&a));
}

static void test_alloc_failure(void **state)
{
	(void)state;
	/* parses fail cleanly with -ENOMEM whenever the arena cannot grow */
	for (int budget = 0; budget < 3; budget++) {
		gpuenv_ctx_t ctx;
		gpuenv_arena_t a;
		gpuenv_version_t v;
		gpuenv_specset_t set;
		testutil_alloc_t bud = { .fail_at = budget };
		int r = 0;
		gpuenv_ctx_init(&ctx);
		ctx.mem = testutil_allocator(&bud);
		gpuenv_arena_init(&a, &ctx, 0);
		for (int i = 0; i < 5000 && !r; i++)
			r = gpuenv_version_parse(&ctx, &a, gpuenv_str("1.2.3.4.5.6.7.8+cu118.x"), &v);
		assert_int_equal(r, -ENOMEM);
		r = 0;
		for (int i = 0; i < 5000 && !r; i++)
			r = gpuenv_specset_parse(&ctx, &a, gpuenv_str(">=1.0,<2,!=1.5.*,===x"), &set);
		assert_int_equal(r, -ENOMEM);
		gpuenv_arena_free(&a);
	}
	/* an arena limit is respected the same way */
	{
		gpuenv_ctx_t ctx;
		gpuenv_arena_t a;
		gpuenv_version_t v;
		gpuenv_ctx_init(&ctx);
		gpuenv_arena_init(&a, &ctx, 64);
		assert_int_equal(gpuenv_version_parse(&ctx, &a,
					 gpuenv_str("1.2.3.4.5.6.7.8.9.10.11.12"), &v),
			-ENOMEM);
		gpuenv_arena_free(&a);
	}
}

/* ---- specifiers ---------------------------------------------------------- */

static gpuenv_specset_t S(struct fx *f, const char *s)
{
	gpuenv_specset_t set;
	if (gpuenv_specset_parse(&f->ctx, &f->arena, gpuenv_str(s), &set))
		fail_msg("'%s' should parse: %s", s, f->ctx.err.msg);
	return set;
}

static bool in(struct fx *f, const char *spec, const char *ver, int pre)
{
	gpuenv_specset_t set = S(f, spec);
	gpuenv_version_t v;
	bool ok = gpuenv_version_parse(&f->ctx, &f->arena, gpuenv_str(ver), &v) == 0;
	return gpuenv_specset_contains(&set, gpuenv_str(ver), ok ? &v : NULL, pre);
}

#define YES GPUENV_PRERELEASES_YES
#define NO GPUENV_PRERELEASES_NO
#define DEF GPUENV_PRERELEASES_DEFAULT

static void test_contains(void **state)
{
	struct fx *f = *state;

	/* local versions of GPU wheels */
	assert_true(in(f, "==2.1.0", "2.1.0+cu118", DEF));
	assert_true(in(f, "==2.1.*", "2.1.0+cu118", DEF));
	assert_true(in(f, "==2.1.0+cu118", "2.1.0+CU118", DEF));
	assert_false(in(f, "==2.1.0+cu118", "2.1.0+cu121", DEF));
	assert_false(in(f, "==2.1.0+cu118", "2.1.0", DEF));
	assert_false(in(f, "!=2.1.0", "2.1.0+cu121", DEF));
	assert_true(in(f, "!=2.1.0+cu118", "2.1.0+cu121", DEF));
	assert_true(in(f, "<=2.1.0", "2.1.0+cu121", DEF));
	assert_false(in(f, ">2.1.0", "2.1.0+cu121", DEF));
	assert_true(in(f, ">=2.1.0", "2.1.0+cu121", DEF));
	assert_false(in(f, "<2.1.0", "2.1.0+cu121", DEF));
	/* PEP 440's exclusions for < and > */
	assert_false(in(f, "<2.0", "2.0rc1", YES));
	assert_true(in(f, "<2.0rc2", "2.0rc1", DEF));
	assert_false(in(f, ">1.0", "1.0.post1", DEF));
	assert_true(in(f, ">1.0.post1", "1.0.post2", DEF));
	assert_true(in(f, ">1.0", "1.0.1", DEF));
	/* compatible release */
	assert_true(in(f, "~=2.2", "2.9", DEF));
	assert_false(in(f, "~=2.2", "3.0", DEF));
	assert_false(in(f, "~=2.2", "3.0.dev0", YES));
	assert_true(in(f, "~=1.4.5", "1.4.9", DEF));
	assert_false(in(f, "~=1.4.5", "1.5.0", DEF));
	assert_true(in(f, "~=2.2.post3", "2.2.post3", DEF));
	/* no overflow at the top of uint64 */
	assert_true(in(f, "~=1.18446744073709551615", "1.18446744073709551615.7", DEF));
	assert_false(in(f, "~=1.18446744073709551615", "2", DEF));
	assert_true(in(f, "==18446744073709551615.*", "18446744073709551615.3", DEF));
	assert_false(in(f, "==18446744073709551615.*", "18446744073709551615!1", DEF));
	assert_true(in(f, ">1.0.dev18446744073709551615", "1.0a1", DEF));
	/* pre-release policy: a lone candidate is contained unless told no */
	assert_true(in(f, ">=1.0", "2.0b1", DEF));
	assert_false(in(f, ">=1.0", "2.0b1", NO));
	assert_true(in(f, "", "2.0b1", DEF));
	assert_false(in(f, "", "2.0b1", NO));
	/* text that is not a version: only === and the empty set take it */
	assert_true(in(f, "===Foo-Bar", "foo-bar", DEF));
	assert_true(in(f, "", "foo-bar", NO));
	assert_false(in(f, "!=1.0", "foo-bar", DEF));
	assert_false(in(f, ">=1.0,===foo", "foo", DEF));
	{
		gpuenv_specset_t set = S(f, "~=1.0");
		gpuenv_version_t v = V(f, "1.1.dev1");
		assert_false(gpuenv_specset_contains_ex(&set, gpuenv_str("1.1.dev1"), &v, NO, false));
		assert_true(gpuenv_specset_contains_ex(&set, gpuenv_str("1.1.dev1"), &v, NO, true));
	}
}

static void test_filter(void **state)
{
	struct fx *f = *state;
	const char *vers[] = { "1.0", "2.0b1", "bogus", "1.5", "1.5+cu118", "2.0", "0.9rc1" };
	size_t n = sizeof(vers) / sizeof(vers[0]), idx[8], m;
	gpuenv_version_t vs[8];
	gpuenv_str_t texts[8];
	const gpuenv_version_t *pv[8];

	for (size_t i = 0; i < n; i++) {
		texts[i] = gpuenv_str(vers[i]);
		pv[i] = gpuenv_version_parse(&f->ctx, &f->arena, texts[i], &vs[i]) ? NULL : &vs[i];
	}
	gpuenv_specset_t set = S(f, ">=1.0");
	m = gpuenv_specset_filter(&set, texts, pv, n, DEF, idx);
	assert_int_equal(m, 4); /* 1.0 1.5 1.5+cu118 2.0: 2.0b1 dropped, finals exist */
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 3);
	assert_int_equal(idx[2], 4);
	assert_int_equal(idx[3], 5);
	m = gpuenv_specset_filter(&set, texts, pv, n, YES, idx);
	assert_int_equal(m, 5);
	set = S(f, ">=2.0b1,<2.0");
	m = gpuenv_specset_filter(&set, texts, pv, n, YES, idx);
	assert_int_equal(m, 0); /* <2.0 keeps 2.0's own pre-releases out */
	set = S(f, ">=2.0b1,<2.0rc1");
	m = gpuenv_specset_filter(&set, texts, pv, n, DEF, idx);
	assert_int_equal(m, 1); /* only pre-releases match: they come back */
	assert_int_equal(idx[0], 1);
	m = gpuenv_specset_filter(&set, texts, pv, n, NO, idx);
	assert_int_equal(m, 0);
	set = S(f, "");
	m = gpuenv_specset_filter(&set, texts, pv, n, DEF, idx);
	assert_int_equal(m, 5); /* the bogus text stays, pre-releases go */
	assert_int_equal(idx[1], 2);
	set = S(f, "<1");
	m = gpuenv_specset_filter(&set, texts, pv, n, DEF, idx);
	assert_int_equal(m, 1);
	assert_int_equal(idx[0], 6);
	/* the streaming form gives the same verdicts */
	{
		gpuenv_filter_t flt;
		set = S(f, ">=1.0");
		gpuenv_filter_init(&flt, &set, DEF);
		assert_int_equal(gpuenv_filter_feed(&flt, texts[1], pv[1]), GPUENV_FILTER_KEEP_IF_NO_FINAL);
		assert_false(flt.found_final);
		assert_int_equal(gpuenv_filter_feed(&flt, texts[0], pv[0]), GPUENV_FILTER_KEEP);
		assert_true(flt.found_final);
		assert_int_equal(gpuenv_filter_feed(&flt, texts[1], pv[1]), GPUENV_FILTER_DROP);
		assert_int_equal(gpuenv_filter_feed(&flt, texts[2], pv[2]), GPUENV_FILTER_DROP);
		gpuenv_filter_init(&flt, &set, YES);
		assert_int_equal(gpuenv_filter_feed(&flt, texts[1], pv[1]), GPUENV_FILTER_KEEP);
		gpuenv_filter_init(&flt, &set, NO);
		assert_int_equal(gpuenv_filter_feed(&flt, texts[1], pv[1]), GPUENV_FILTER_DROP);
	}
	/* one clause, with its own override */
	gpuenv_specifier_t s;
	assert_int_equal(gpuenv_specifier_parse(&f->ctx, &f->arena, gpuenv_str(">=1"), &s), 0);
	s.prereleases = YES;
	m = gpuenv_specifier_filter(&s, texts, pv, n, DEF, idx);
	assert_int_equal(m, 5);
}

static void assert_spec_bad(struct fx *f, const char *in, unsigned col, const char *what)
{
	gpuenv_specset_t set;
	int r = gpuenv_specset_parse(&f->ctx, &f->arena, gpuenv_str(in), &set);
	if (r != GPUENV_ESPEC)
		fail_msg("'%s' should be invalid (got %d)", in, r);
	if (f->ctx.err.col != col || !strstr(f->ctx.err.msg, what))
		fail_msg("'%s': column %u (want %u): %s", in, f->ctx.err.col, col, f->ctx.err.msg);
}

static void test_spec_parse(void **state)
{
	struct fx *f = *state;
	gpuenv_specset_t set;
	gpuenv_buf_t b;

	set = S(f, " , >= 1.0 ,, <2 ,");
	assert_int_equal(set.n, 2);
	assert_int_equal(set.items[0].op, GPUENV_OP_GE);
	assert_true(gpuenv_str_eq_cstr(set.items[0].text, "1.0"));
	set = S(f, "== 2.1.*");
	assert_true(set.items[0].wildcard);
	assert_true(gpuenv_str_eq_cstr(set.items[0].text, "2.1.*"));
	set = S(f, "===2.1.0+cu118");
	assert_true(set.items[0].has_version);
	set = S(f, "====x");
	assert_true(gpuenv_str_eq_cstr(set.items[0].text, "=x"));
	assert_false(set.items[0].has_version);

	assert_spec_bad(f, ">=1.0, 2.0", 8, "expected an operator");
	assert_non_null(strstr(f->ctx.err.hint, "operator"));
	assert_spec_bad(f, ">=1.0,<2+cu118", 8, "local version label");
	assert_spec_bad(f, "~=2", 3, "two release numbers");
	assert_spec_bad(f, "==2.0a1.*", 8, "wildcard");
	assert_spec_bad(f, ">=1.*", 4, "invalid specifier");
	assert_spec_bad(f, "===a b", 5, "===");
	assert_spec_bad(f, "==", 3, "expected a version");
	assert_spec_bad(f, ">=1..0", 4, "unexpected '.'");

	/* a limit on the number of clauses; empty pieces do not count */
	{
		size_t n = GPUENV_SPECSET_MAX + 1;
		char *big = malloc(n * 3 + 1);
		assert_non_null(big);
		for (size_t i = 0; i < n; i++)
			memcpy(big + 3 * i, ">1,", 3);
		big[3 * n - 1] = '\0';
		assert_int_equal(gpuenv_specset_parse(&f->ctx, &f->arena, gpuenv_str(big), &set),
			GPUENV_ETOOBIG);
		big[3 * n - 4] = '\0';
		assert_int_equal(gpuenv_specset_parse(&f->ctx, &f->arena, gpuenv_str(big), &set), 0);
		assert_int_equal(set.n, GPUENV_SPECSET_MAX);
		free(big);
		char commas[4000];
		memset(commas, ',', sizeof(commas) - 1);
		commas[sizeof(commas) - 1] = '\0';
		assert_int_equal(gpuenv_specset_parse(&f->ctx, &f->arena, gpuenv_str(commas), &set), 0);
		assert_int_equal(set.n, 0);
	}

	/* str(): sorted, duplicates (equal once canonical) written once */
	gpuenv_buf_init(&b, &f->ctx, 0);
	set = S(f, "<3, >=2.0.0, ==2.4, >=2.0, ~=2.0, ~=2.0.0");
	assert_int_equal(gpuenv_specset_format(&set, &b), 0);
	assert_string_equal(b.data, "<3,==2.4,>=2.0,~=2.0,~=2.0.0");
	gpuenv_buf_free(&b);
	gpuenv_specset_t other = S(f, ">=2,<3.0,==2.4.0,~=2.0,~=2.0.0");
	assert_int_equal(gpuenv_specset_eq(&f->ctx, &set, &other), 1);
	other = S(f, ">=2,<3.0,==2.4.0,~=2.0");
	assert_int_equal(gpuenv_specset_eq(&f->ctx, &set, &other), 0);
	assert_string_equal(gpuenv_spec_op_str(GPUENV_OP_ARBITRARY), "===");
	assert_string_equal(gpuenv_spec_op_str(99), "?");
}

static void test_names(void **state)
{
	struct fx *f = *state;
	gpuenv_buf_t b;

	gpuenv_buf_init(&b, &f->ctx, 0);
	assert_int_equal(gpuenv_name_normalize(gpuenv_str("NVIDIA_cuDNN..cu12"), &b), 0);
	assert_string_equal(b.data, "nvidia-cudnn-cu12");
	gpuenv_buf_reset(&b);
	assert_int_equal(gpuenv_name_normalize(gpuenv_str("-._Torch_-"), &b), 0);
	assert_string_equal(b.data, "-torch-");
	gpuenv_buf_free(&b);
	/* a capped buffer reports the overflow */
	gpuenv_buf_init(&b, &f->ctx, 4);
	assert_int_equal(gpuenv_name_normalize(gpuenv_str("torchvision"), &b), GPUENV_ETOOBIG);
	gpuenv_buf_free(&b);

	assert_true(gpuenv_name_is_valid(gpuenv_str("nvidia-cudnn-cu12")));
	assert_true(gpuenv_name_is_valid(gpuenv_str("A")));
	assert_true(gpuenv_name_is_valid(gpuenv_str("zope.interface")));
	assert_false(gpuenv_name_is_valid(gpuenv_str("")));
	assert_false(gpuenv_name_is_valid(gpuenv_str("torch-")));
	assert_false(gpuenv_name_is_valid(gpuenv_str("t orch")));
	assert_true(gpuenv_name_is_normalized(gpuenv_str("nvidia-cudnn-cu12")));
	assert_false(gpuenv_name_is_normalized(gpuenv_str("nvidia_cudnn_cu12")));
	assert_false(gpuenv_name_is_normalized(gpuenv_str("a--b")));
	assert_false(gpuenv_name_is_normalized(gpuenv_str("-a")));
	assert_false(gpuenv_name_is_normalized(gpuenv_str("")));
}

/* Random versions: the normalized form parses back to an equal version,
 * and the order is a total order on a sample of triples. */
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void random_version(char *out, size_t cap)
{
	static const char *const pre[] = { "a", "b", "rc", "alpha", "c", "pre" };
	static const char *const loc[] = { "cu118", "cpu", "0", "7", "rocm5.6", "abc.1" };
	size_t n = 0;
	int k = (int)(next() % 4) + 1;
	n += (size_t)snprintf(out + n, cap - n, "%s", next() % 8 == 0 ? "1!" : "");
	for (int i = 0; i < k; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%u", i ? "." : "", (unsigned)(next() % 3));
	if (next() % 3 == 0)
		n += (size_t)snprintf(out + n, cap - n, "%s%u", pre[next() % 6], (unsigned)(next() % 3));
	if (next() % 4 == 0)
		n += (size_t)snprintf(out + n, cap - n, ".post%u", (unsigned)(next() % 3));
	if (next() % 4 == 0) /* sometimes past the width of the key's dev field */
		n += (size_t)snprintf(out + n, cap - n, ".dev%u",
			(next() % 4 ? 0u : 33554430u) + (unsigned)(next() % 3));
	if (next() % 4 == 0)
		snprintf(out + n, cap - n, "+%s", loc[next() % 6]);
}

static void test_random_roundtrip(void **state)
{
	struct fx *f = *state;
	enum { N = 400 };
	gpuenv_version_t *vs = calloc(N, sizeof(*vs));
	assert_non_null(vs);

	for (int i = 0; i < N; i++) {
		char text[128];
		gpuenv_buf_t b;
		gpuenv_version_t back;
		random_version(text, sizeof(text));
		vs[i] = V(f, text);
		gpuenv_buf_init(&b, &f->ctx, 0);
		assert_int_equal(gpuenv_version_format(&vs[i], &b), 0);
		back = V(f, b.data);
		if (gpuenv_version_cmp(&vs[i], &back) != 0)
			fail_msg("'%s' -> '%s' does not compare equal", text, b.data);
		gpuenv_buf_free(&b);
	}
	for (int t = 0; t < 20000; t++) {
		const gpuenv_version_t *a = &vs[next() % N], *b = &vs[next() % N], *c = &vs[next() % N];
		int ab = gpuenv_version_cmp(a, b), bc = gpuenv_version_cmp(b, c);
		int ac = gpuenv_version_cmp(a, c);
		assert_int_equal((ab > 0) - (ab < 0), -((gpuenv_version_cmp(b, a) > 0) -
							 (gpuenv_version_cmp(b, a) < 0)));
		if (ab <= 0 && bc <= 0)
			assert_true(ac <= 0);
		gpuenv_version_key_t ka, kb;
		gpuenv_version_key(a, &ka);
		gpuenv_version_key(b, &kb);
		int kc = gpuenv_version_key_cmp(&ka, &kb);
		assert_true(kc == 0 || (kc > 0) == (ab > 0));
		assert_true(ab != 0 || kc == 0);
	}
	free(vs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_embedded_nul, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order, setup, teardown),
		cmocka_unit_test(test_alloc_failure),
		cmocka_unit_test_setup_teardown(test_contains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_roundtrip, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
