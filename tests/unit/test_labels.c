/* lib/labels (gpuenv/labels.h): Kubernetes' label syntax, GFD's sanitising,
 * NFD's namespace rules for the prefix, --expiry, the driver terms of a
 * selector, and the labels of the H200 snapshot with every allocation
 * failing in turn ("out of memory", never a half set or a crash). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuenv/facts.h"
#include "gpuenv/labels.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;

static void test_syntax(void **state)
{
	static const struct {
		const char *s;
		bool name, value, prefix;
	} cases[] = {
		{ "gpu.product", true, true, true },
		{ "a", true, true, true },
		{ "", false, true, false },
		{ "-a", false, false, false },
		{ "a-", false, false, false },
		{ "a_b.c-d", true, true, false }, /* '_' is not in a DNS name */
		{ "Upper", true, true, false },	 /* nor upper case */
		{ "sm_90", true, true, false },
		{ "a b", false, false, false },
		{ "a/b", false, false, false },
		{ "a..b", true, true, false },	 /* fine in a name, not a DNS name */
		{ "x.", false, false, false },
		{ "\xc3\xa9", false, false, false },
		{ "012345678901234567890123456789012345678901234567890123456789012", true, true, true },
		{ "0123456789012345678901234567890123456789012345678901234567890123", false, false, false },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpuenv_str_t s = gpuenv_str(cases[i].s);
		const char *why = NULL;
		if (gpuenv_label_name_valid(s, &why) != cases[i].name)
			fail_msg("name %s: %d (%s)", cases[i].s, !cases[i].name, why ? why : "");
		if (gpuenv_label_value_valid(s, NULL) != cases[i].value)
			fail_msg("value %s", cases[i].s);
		if (gpuenv_label_prefix_valid(s, NULL) != cases[i].prefix)
			fail_msg("prefix %s", cases[i].s);
	}
	/* a DNS subdomain of 253, not 254; parts of 63, not 64 */
	char p[300];
	memset(p, 'a', sizeof(p));
	for (size_t i = 63; i < 260; i += 64)
		p[i] = '.';
	p[253] = '\0';
	assert_true(gpuenv_label_prefix_valid(gpuenv_str(p), NULL));
	p[253] = 'a';
	p[254] = '\0';
	assert_false(gpuenv_label_prefix_valid(gpuenv_str(p), NULL));
	memset(p, 'a', 64);
	p[64] = '\0';
	assert_false(gpuenv_label_prefix_valid(gpuenv_str(p), NULL));
	assert_true(gpuenv_label_key_valid(gpuenv_str("nvidia.com/gpu.product"), NULL));
	assert_true(gpuenv_label_key_valid(gpuenv_str("plain"), NULL));
	assert_false(gpuenv_label_key_valid(gpuenv_str("nvidia.com/"), NULL));
	assert_false(gpuenv_label_key_valid(gpuenv_str("/x"), NULL));
	assert_false(gpuenv_label_key_valid(gpuenv_str("NVIDIA.com/x"), NULL));
	assert_false(gpuenv_label_key_valid(gpuenv_str("a/b/c"), NULL));
}

static void test_sanitize(void **state)
{
	static const char *const cases[][2] = {
		{ "NVIDIA H200", "NVIDIA-H200" },
		{ "Tesla T4", "Tesla-T4" },
		{ "NVIDIA A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB" },
		{ "NVIDIA GeForce RTX 4090 (Laptop)", "NVIDIA-GeForce-RTX-4090-Laptop" },
		{ "  a  b  ", "a-b" },
		{ "a\tb", "ab" },  /* GFD keeps only spaces of the blanks */
		{ "\xc3\xa9t\xc3\xa9", "t" },
		{ "a\\xffb", "ab" }, /* the facts' escape of a byte that is not text */
		{ "a\\\\b", "ab" },
		{ "-_.x._-", "x" },
		{ "(((", "" },
		{ "", "" },
	};
	gpuenv_arena_t a;
	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpuenv_str_t e = gpuenv_label_sanitize(&a, gpuenv_str(cases[i][0]));
		assert_non_null(e.ptr);
		if (!gpuenv_str_eq_cstr(e, cases[i][1]))
			fail_msg("sanitize \"%s\": \"%.*s\", want \"%s\"", cases[i][0], (int)e.len, e.ptr, cases[i][1]);
	}
	gpuenv_arena_free(&a);
}

static void test_prefix_and_set(void **state)
{
	static const char *const ok[] = { "gpuenv.io", "fleet.example.com", "feature.node.kubernetes.io",
		"gpuenv.feature.node.kubernetes.io", "profile.node.kubernetes.io" };
	static const char *const bad[] = { "kubernetes.io", "node.kubernetes.io", "x.k8s.io", "k8s.io", "nvidia.com",
		"Gpuenv.io", "gpuenv_io", "" };
	gpuenv_arena_t a;
	gpuenv_labels_t ls;
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(gpuenv_labels_prefix_check(&ctx, ok[i], "--prefix"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gpuenv_error_clear(&ctx);
		assert_int_equal(gpuenv_labels_prefix_check(&ctx, bad[i], "--prefix"), GPUENV_EUSAGE);
		assert_non_null(strstr(ctx.err.msg, "--prefix"));
		assert_true(ctx.err.hint[0] != '\0');
	}
	gpuenv_arena_init(&a, &ctx, 0);
	gpuenv_labels_init(&ls, &a);
	assert_int_equal(gpuenv_labels_set(&ls, "v.io/b", "1"), 0);
	assert_int_equal(gpuenv_labels_set(&ls, "v.io/a", "x y"), 0);    /* escaped, a warning */
	assert_int_equal(gpuenv_labels_set(&ls, "v.io/b", "2"), 0);      /* replaced */
	assert_int_equal(gpuenv_labels_set(&ls, "v.io/c", ""), 0);     /* empty is a value */
	assert_int_equal(gpuenv_labels_set(&ls, "v.io/-bad", "1"), 0);   /* left out, a warning */
	char big[100];
	memset(big, 'x', 99);
	big[99] = '\0';
	assert_int_equal(gpuenv_labels_set(&ls, "v.io/d", big), 0); /* too long: left out */
	assert_int_equal(ls.n, 3);
	assert_int_equal(ls.nwarnings, 3);
	gpuenv_labels_sort(&ls);
	assert_string_equal(ls.items[0].key, "v.io/a");
	assert_string_equal(ls.items[0].value, "x-y");
	assert_string_equal(gpuenv_labels_get(&ls, "v.io/b"), "2");
	assert_string_equal(gpuenv_labels_get(&ls, "v.io/c"), "");
	assert_null(gpuenv_labels_get(&ls, "v.io/d"));
	assert_non_null(gpuenv_labels_target_key(&ls, NULL, "t4"));
	assert_string_equal(gpuenv_labels_target_key(&ls, "x.io", "t4"), "x.io/target.t4");
	assert_null(gpuenv_labels_target_key(&ls, NULL, "a b"));
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 1 << 20);
	assert_int_equal(gpuenv_labels_write_nfd(&ctx, &ls, 1764619200LL, NULL, &b), 0);
	assert_non_null(strstr(b.data, "\n# +expiry-time=2025-12-01T20:00:00Z\nv.io/a=x-y\nv.io/b=2\nv.io/c=\n"));
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&a);
}

static void test_expiry(void **state)
{
	static const struct {
		const char *s;
		long long want; /* -1: refused */
	} cases[] = {
		{ "0", 1000 },
		{ "90", 1090 },
		{ "90s", 1090 },
		{ "15m", 1900 },
		{ "2h", 8200 },
		{ "1d", 87400 },
		{ "1970-01-01T00:00:00Z", 0 },
		{ "2026-12-01T20:00:00Z", 1796155200 },
		{ "2026-12-01T21:00:00+01:00", 1796155200 },
		{ "2026-12-01t15:30:00.25-04:30", 1796155200 },
		{ "2024-02-29T00:00:00Z", 1709164800 },
		{ "2023-02-29T00:00:00Z", -1 },
		{ "2026-13-01T00:00:00Z", -1 },
		{ "2026-12-01T20:00:00", -1 },
		{ "2026-12-01T20:00:60Z", -1 },
		{ "2026-12-01T20:00:00.Z", -1 },
		{ "1w", -1 },
		{ "h", -1 },
		{ "-5m", -1 },
		{ "", -1 },
		{ "999999999999d", -1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long t = -7;
		gpuenv_error_clear(&ctx);
		int r = gpuenv_labels_expiry_parse(&ctx, cases[i].s, 1000, &t);
		if (cases[i].want == -1) {
			if (r != GPUENV_EUSAGE || !ctx.err.hint[0])
				fail_msg("--expiry %s: %d, want a usage error", cases[i].s, r);
		} else if (r || t != cases[i].want)
			fail_msg("--expiry %s: %d %lld, want %lld", cases[i].s, r, t, cases[i].want);
	}
}

/* the driver floor as ORed terms: a version satisfies them exactly when it
 * is at least the floor */
static bool satisfies(const gpuenv_selector_t *s, const long long v[3])
{
	static const char *const keys[] = { "nvidia.com/cuda.driver-version.major",
		"nvidia.com/cuda.driver-version.minor", "nvidia.com/cuda.driver-version.revision" };
	for (size_t t = 0; t < s->nterms; t++) {
		bool all = true;
		for (size_t i = 0; i < s->nreqs[t] && all; i++) {
			const gpuenv_selector_req_t *q = &s->terms[t][i];
			size_t k = 0;
			while (k < 3 && strcmp(keys[k], q->key))
				k++;
			assert_true(k < 3);
			long long x = strtoll(q->value, NULL, 10);
			all = !strcmp(q->op, "Gt") ? v[k] > x : !strcmp(q->op, "Lt") ? v[k] < x : false;
		}
		if (all)
			return true;
	}
	return false;
}

static void test_selector_terms(void **state)
{
	static const char *const floors[] = { "535.104.05", "580", "525.60.13", "450.80.02", "570.0.1", "470.0" };
	gpuenv_arena_t a;
	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	for (size_t f = 0; f < sizeof(floors) / sizeof(floors[0]); f++) {
		gpuenv_target_gpu_t g = { .name = "X", .cc_major = 8, .cc_minor = 0, .memory = -1, .visible = true };
		gpuenv_target_t w = { .ngpus = 1, .gpus = &g, .driver = floors[f], .machine = "x86_64" };
		gpuenv_selector_t s;
		assert_int_equal(gpuenv_labels_selector(&ctx, &a, NULL, NULL, "x", &w, NULL, &s), 0);
		assert_true(s.nterms >= 1);
		long long fl[3] = { 0, 0, 0 };
		sscanf(floors[f], "%lld.%lld.%lld", &fl[0], &fl[1], &fl[2]);
		for (long long d0 = fl[0] - 1; d0 <= fl[0] + 1; d0++)
			for (long long d1 = fl[1] - 2 < 0 ? 0 : fl[1] - 2; d1 <= fl[1] + 2; d1++)
				for (long long d2 = fl[2] - 2 < 0 ? 0 : fl[2] - 2; d2 <= fl[2] + 2; d2++) {
					long long v[3] = { d0, d1, d2 };
					bool want = d0 != fl[0] ? d0 > fl[0] : d1 != fl[1] ? d1 > fl[1] : d2 >= fl[2];
					if (satisfies(&s, v) != want)
						fail_msg("floor %s, driver %lld.%lld.%lld: %d", floors[f], d0, d1, d2, !want);
				}
		assert_int_equal(s.nsel, 4); /* target, arch, compute major and minor */
	}
	/* a CPU target: no GPU labels, no driver terms */
	gpuenv_target_t cpu = { .machine = "aarch64" };
	gpuenv_selector_t s;
	assert_int_equal(gpuenv_labels_selector(&ctx, &a, NULL, "x.io", "cpu", &cpu, NULL, &s), 0);
	assert_int_equal(s.nsel, 2);
	assert_int_equal(s.nterms, 0);
	assert_string_equal(s.sel[0].key, "kubernetes.io/arch");
	assert_string_equal(s.sel[0].value, "arm64");
	assert_string_equal(s.sel[1].key, "x.io/target.cpu");
	assert_int_equal(gpuenv_labels_selector(&ctx, &a, NULL, NULL, "not a name", &cpu, NULL, &s), GPUENV_EUNSUPPORTED);
	gpuenv_arena_free(&a);
}

/* the H200's labels with allocation n failing, for every n in turn */
static void test_alloc_failures(void **state)
{
	size_t len;
	char *text = testutil_read_source(&len, "tests/fixtures/doctor/h200-probe-2026-11-29/facts.json");
	gpuenv_arena_t fa;
	const gpuenv_facts_t *f;
	gpuenv_target_t m;
	long n, total = -1;

	(void)state;
	gpuenv_arena_init(&fa, &ctx, 0);
	assert_int_equal(gpuenv_facts_parse(&ctx, &fa, text, len, "h200.json", &f), 0);
	assert_int_equal(gpuenv_target_from_facts(&ctx, &fa, f, SIZE_MAX, &m), 0);
	for (n = 0; n < 100000; n++) {
		testutil_alloc_t t;
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		gpuenv_labels_t ls;
		gpuenv_labels_opts_t o = { .mig_strategy = GPUENV_MIG_SINGLE, .machine_type = "Box (1)" };
		gpuenv_buf_t b;
		int rc;

		testutil_alloc_reset(&t, n, false);
		gpuenv_ctx_init(&c);
		c.mem = testutil_allocator(&t);
		gpuenv_arena_init(&a, &c, 0);
		gpuenv_labels_init(&ls, &a);
		gpuenv_buf_init(&b, &c, 1 << 20);
		rc = gpuenv_labels_from_facts(&c, &ls, f, &m, &o);
		if (!rc) {
			gpuenv_labels_sort(&ls);
			rc = gpuenv_labels_write_nfd(&c, &ls, 0, "h200.json", &b);
		}
		if (!t.failures) {
			assert_int_equal(rc, 0);
			assert_string_equal(gpuenv_labels_get(&ls, "nvidia.com/gpu.product"), "NVIDIA-H200");
			assert_string_equal(gpuenv_labels_get(&ls, "nvidia.com/gpu.machine"), "Box-1");
			assert_string_equal(gpuenv_labels_get(&ls, "gpuenv.io/gpu.sm"), "sm_90");
			assert_non_null(strstr(b.data, "# +expiry-time=1970-01-01T00:00:00Z\n"));
			total = t.calls;
		} else if (rc != -ENOMEM || c.err.code != -ENOMEM || !strstr(c.err.msg, "out of memory"))
			fail_msg("allocation %ld: rc %d, error %d \"%s\"", n, rc, c.err.code, c.err.msg);
		gpuenv_buf_free(&b);
		gpuenv_arena_free(&a);
		if (total >= 0)
			break;
	}
	assert_true(total > 3);
	gpuenv_arena_free(&fa);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_prefix_and_set),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_selector_terms),
		cmocka_unit_test(test_alloc_failures),
	};
	gpuenv_ctx_init(&ctx);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
