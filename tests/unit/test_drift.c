/* lib/check/drift.c: the expect file's schema, the judgement against a node
 * made by hand, the Prometheus text byte for byte, and every allocation
 * failing in turn (each one is "out of memory", never a syntax error or a
 * success). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuenv/drift.h"
#include "gpuenv/kb.h"

#include "testutil.h"

static gpuenv_kb_t *kb;
static gpuenv_ctx_t kctx;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&kctx);
	return gpuenv_kb_load(&kctx, NULL, &kb);
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_kb_free(kb);
	return 0;
}

static const gpuenv_target_gpu_t h100s[2] = {
	{ "NVIDIA H100 80GB HBM3", 9, 0, 85899345920LL, true },
	{ "NVIDIA H100 80GB HBM3", 9, 0, 85899345920LL, true },
};
static const gpuenv_target_lib_t libs[2] = { { "cudnn", "9.5.1.17" }, { "nvinfer", "10.3.0.26" } };
static const gpuenv_target_t node = {
	.name = "auto", .origin = "probe", .ngpus = 2, .gpus = h100s, .driver = "580.95.05",
	.driver_cuda = "13.0", .nlibs = 2, .libs = libs,
};

/* Parse text and judge the node; returns the parse's code. */
static int judge(gpuenv_ctx_t *c, gpuenv_arena_t *a, const char *text, gpuenv_drift_expect_t *e,
	gpuenv_drift_report_t *r)
{
	int rc = gpuenv_drift_expect_parse(c, a, kb, "e.toml", text, strlen(text), e);
	if (rc == 0)
		assert_int_equal(gpuenv_drift_check(c, a, kb, e, &node, r), 0);
	return rc;
}

static void test_checks(void **state)
{
	static const struct {
		const char *toml;
		int check;
		bool holds;
		const char *actual;
	} cases[] = {
		{ "driver = \"580.95.5\"", GPUENV_DRIFT_DRIVER, true, "580.95.05" },
		{ "driver = \">580.95.4\"", GPUENV_DRIFT_DRIVER, true, "580.95.05" },
		{ "driver = \"<580.159.04\"", GPUENV_DRIFT_DRIVER, true, "580.95.05" },
		{ "driver = \">=575,<580\"", GPUENV_DRIFT_DRIVER, false, "580.95.05" },
		{ "driver = \"none\"", GPUENV_DRIFT_DRIVER, false, "580.95.05" },
		{ "cuda = \"13\"", GPUENV_DRIFT_CUDA, true, "13.0" },
		{ "gpu = \"H100\"", GPUENV_DRIFT_GPU, true, "NVIDIA H100 80GB HBM3" },
		{ "gpu = \"nvidia h100 nvl\"", GPUENV_DRIFT_GPU, true, "NVIDIA H100 80GB HBM3" },
		{ "gpu = \"==NVIDIA H100 NVL\"", GPUENV_DRIFT_GPU, false, "NVIDIA H100 80GB HBM3" },
		{ "gpu = \"A100\"", GPUENV_DRIFT_GPU, false, "NVIDIA H100 80GB HBM3" },
		{ "gpu_count = 2", GPUENV_DRIFT_GPU_COUNT, true, "2" },
		{ "gpu_count = \">2\"", GPUENV_DRIFT_GPU_COUNT, false, "2" },
		{ "cudnn = \"~=9.5\"", GPUENV_DRIFT_CUDNN, true, "9.5.1.17" },
		{ "nccl = \"none\"", GPUENV_DRIFT_NCCL, true, "none" },
		{ "nccl = \">=2\"", GPUENV_DRIFT_NCCL, false, "none" },
		{ "tensorrt = \"==10.3.*\"", GPUENV_DRIFT_TENSORRT, true, "10.3.0.26" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		gpuenv_drift_expect_t e;
		gpuenv_drift_report_t r;
		gpuenv_ctx_init(&c);
		gpuenv_arena_init(&a, &c, 0);
		if (judge(&c, &a, cases[i].toml, &e, &r) != 0)
			fail_msg("%s: %s", cases[i].toml, c.err.msg);
		assert_int_equal(r.n, 1);
		assert_int_equal(r.items[0].check, cases[i].check);
		if (r.items[0].holds != cases[i].holds)
			fail_msg("%s: holds %d", cases[i].toml, r.items[0].holds);
		assert_string_equal(r.items[0].actual, cases[i].actual);
		assert_true(r.items[0].holds || (r.items[0].why && r.items[0].why[0]));
		assert_int_equal(r.nfailed, !cases[i].holds);
		gpuenv_arena_free(&a);
	}
}

static void test_refused(void **state)
{
	static const struct {
		const char *toml;
		unsigned line, col;
		const char *msg, *hint;
	} cases[] = {
		{ "gpu_cnt = 1", 1, 1, "unknown key 'gpu_cnt'", "did you mean 'gpu_count'?" },
		{ "driver = 580", 1, 10, "'driver' must be a string, not integer", "driver = \"580.95.05\"" },
		{ "cuda = \"~=\"", 1, 8, "'cuda': not a PEP 440 specifier set", "cuda = \">=12.8\"" },
		{ "gpu = \"==\"", 1, 7, "'gpu': '==' without a name", "gpu = \"==NVIDIA H200\"" },
		{ "gpu_count = \"none\"", 1, 13, "is not a count", "gpu_count = 8" },
		{ "\n\n", 0, 0, "names no check", "at least one of" },
		{ "x = [", 1, 0, "", "" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		gpuenv_drift_expect_t e;
		gpuenv_drift_report_t r;
		gpuenv_ctx_init(&c);
		gpuenv_arena_init(&a, &c, 0);
		assert_true(judge(&c, &a, cases[i].toml, &e, &r) < 0);
		assert_string_equal(c.err.file, "e.toml");
		if (c.err.line != cases[i].line || (cases[i].col && c.err.col != cases[i].col) ||
			!strstr(c.err.msg, cases[i].msg) || !strstr(c.err.hint, cases[i].hint))
			fail_msg("%s: %u:%u: %s (hint: %s)", cases[i].toml, c.err.line, c.err.col, c.err.msg,
				c.err.hint);
		gpuenv_arena_free(&a);
	}
}

static void test_metrics(void **state)
{
	gpuenv_ctx_t c;
	gpuenv_arena_t a;
	gpuenv_drift_expect_t e;
	gpuenv_drift_report_t r;
	gpuenv_buf_t b;
	const char *want =
		"# HELP gpuenv_info The node as gpuenv probed it: driver version, the newest CUDA it runs, "
		"GPU product names, cuDNN, NCCL and TensorRT versions (none: absent).\n"
		"# TYPE gpuenv_info gauge\n"
		"gpuenv_info{driver=\"580.95.05\",cuda=\"13.0\",gpu=\"NVIDIA H100 80GB HBM3\",cudnn=\"9.5.1.17\","
		"nccl=\"none\",tensorrt=\"10.3.0.26\"} 1\n"
		"# HELP gpuenv_drift Whether a check of the expected manifest fails on this node (1: drift, "
		"0: the check holds).\n"
		"# TYPE gpuenv_drift gauge\n"
		"gpuenv_drift{check=\"driver\",expected=\">=575,<590\",actual=\"580.95.05\"} 0\n"
		"gpuenv_drift{check=\"gpu\",expected=\"==a\\\"b\\\\c\\nd\",actual=\"NVIDIA H100 80GB HBM3\"} 1\n"
		"# HELP gpuenv_probe_duration_seconds Wall time of the probe that read the node's facts.\n"
		"# TYPE gpuenv_probe_duration_seconds gauge\n"
		"gpuenv_probe_duration_seconds 0.021500\n";
	(void)state;
	gpuenv_ctx_init(&c);
	gpuenv_arena_init(&a, &c, 0);
	/* keys in any order: the report keeps check order */
	assert_int_equal(judge(&c, &a, "gpu = \"==a\\\"b\\\\c\\nd\"\ndriver = \">=575,<590\"\n", &e, &r), 0);
	gpuenv_buf_init(&b, &c, 0);
	assert_int_equal(gpuenv_drift_metrics(&r, 0.0215, &b), 0);
	assert_string_equal(b.data, want);
	/* no duration: the family is left out */
	gpuenv_buf_reset(&b);
	assert_int_equal(gpuenv_drift_metrics(&r, -1, &b), 0);
	assert_null(strstr(b.data, "gpuenv_probe_duration_seconds"));
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&a);
}

/* One run with allocator al: parse, check, metrics.  0 or the first error. */
static int run_once(const char *text, size_t len, gpuenv_allocator_t al, gpuenv_ctx_t *c)
{
	gpuenv_arena_t a;
	gpuenv_drift_expect_t e;
	gpuenv_drift_report_t r;
	gpuenv_buf_t b;
	int rc;

	gpuenv_ctx_init(c);
	c->mem = al;
	gpuenv_arena_init(&a, c, 0);
	gpuenv_buf_init(&b, c, 0);
	rc = gpuenv_drift_expect_parse(c, &a, kb, "e.toml", text, len, &e);
	if (rc == 0)
		rc = gpuenv_drift_check(c, &a, kb, &e, &node, &r);
	if (rc == 0)
		rc = gpuenv_drift_metrics(&r, 0.5, &b);
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&a);
	return rc;
}

static void test_alloc_failures(void **state)
{
	const char *toml = "driver = \">=575,<590\"\ncuda = \"13.0\"\ngpu = \"H100\"\ngpu_count = 2\n"
			   "cudnn = \"9.5.1.17\"\nnccl = \"none\"\ntensorrt = \"~=10.3\"\n";
	size_t slen;
	char *snap = testutil_read_source(&slen, "tests/fuzz/corpus/drift_expect/snapshot");
	const char *texts[2] = { toml, snap };
	size_t lens[2] = { strlen(toml), slen };
	(void)state;
	for (int k = 0; k < 2; k++) {
		bool done = false;
		for (long n = 0; !done && n < 1000000; n++) {
			testutil_alloc_t t = { .fail_at = n, .only_one = false };
			gpuenv_ctx_t c;
			int rc = run_once(texts[k], lens[k], testutil_allocator(&t), &c);
			if (!t.failures) {
				assert_int_equal(rc, 0);
				done = true;
			} else if (rc != -ENOMEM || c.err.code != -ENOMEM || !strstr(c.err.msg, "out of memory"))
				fail_msg("%s: allocation %ld failed: rc %d, ctx->err %d \"%s\"", k ? "snapshot" : "toml",
					n, rc, c.err.code, c.err.msg);
		}
		assert_true(done);
	}
	free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
