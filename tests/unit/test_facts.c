/* Unit tests for lib/facts: the decoder (schema checks, lenient leaves,
 * escaped strings, our own syntax messages, every allocation failure), and
 * jansson's allocations through the context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/diagnose.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"
#include "gpuenv/pep508.h"
#include "gpuenv/wheel.h"
#include "testutil.h"

static gpuenv_ctx_t ctx;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	return 0;
}

static const gpuenv_facts_t *parse(gpuenv_arena_t *a, const char *text)
{
	const gpuenv_facts_t *f = NULL;
	int rc = gpuenv_facts_parse(&ctx, a, text, strlen(text), "t.json", &f);
	if (rc)
		fail_msg("parse: %d %s", rc, ctx.err.msg);
	return f;
}

static void test_fixture(void **state)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;
	size_t len;
	char *text = testutil_read_source(&len, "tests/fixtures/doctor/h200-2026-11-29/facts.json");
	int maj, min;

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_facts_parse(&ctx, &a, text, len, "h200.json", &f), 0);
	free(text);
	assert_string_equal(f->schema, "gpuenv.facts/1");
	assert_string_equal(f->name, "h200.json");
	assert_int_equal(f->ngpus, 1);
	assert_string_equal(f->gpus[0].name, "NVIDIA H200");
	assert_true(gpuenv_facts_gpu_cc(&f->gpus[0], &maj, &min));
	assert_int_equal(maj, 9);
	assert_int_equal(min, 0);
	assert_true(gpuenv_facts_gpu_visible(f, &f->gpus[0]));
	assert_string_equal(gpuenv_facts_source(&f->gpus[0].sources, "compute_capability"), "nvml");
	assert_string_equal(f->driver.version, "580.159.04");
	assert_string_equal(f->driver.cuda_version, "13.0");
	assert_int_equal(f->driver.cuda_version_int, 13000);
	assert_true(f->have_libraries && f->nlibraries > 0);
	assert_true(f->nenvs >= 1);
	const gpuenv_facts_env_t *e = &f->envs[gpuenv_facts_active_env(f)];
	assert_non_null(e->prefix);
	assert_true(e->ndists > 100);
	bool torch = false;
	for (size_t i = 0; i < e->nframeworks; i++) {
		const gpuenv_facts_framework_t *fw = &e->frameworks[i];
		if (!fw->kind || strcmp(fw->kind, "torch"))
			continue;
		torch = true;
		assert_string_equal(fw->cuda, "13.0");
		assert_true(fw->nbinaries >= 1);
		assert_int_equal(fw->binaries[0].code_state, GPUENV_FACT_SET);
		assert_true(fw->binaries[0].cubins.n > 0);
		assert_true(fw->binaries[0].nobjects > 0);
	}
	assert_true(torch);
	gpuenv_arena_free(&a);
}

/* Every leaf is optional: a wrong type reads as unknown and says so. */
static void test_lenient(void **state)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	f = parse(&a, "{\"schema\": \"gpuenv.facts/1.3\", \"driver\": [], \"gpus\": {\"a\": 1},"
		      " \"pci\": \"x\", \"libraries\": [null, 1, {\"soname\": 3, \"where\": [\"wheel\", 2]}],"
		      " \"cuda_visible_devices\": {\"set\": true, \"visible\": [0, \"1\"]},"
		      " \"environments\": [null, {\"prefix\": \"/v\", \"frameworks\": ["
		      "  {\"kind\": \"torch\", \"version\": \"2.7.1+cu128\", \"cuda\": 12.8},"
		      "  {\"kind\": \"torch\", \"version\": \"2.7.1+cu128\", \"cuda\": null, \"gpu\": false,"
		      "   \"cuda_source\": \"metadata\", \"binaries\": [{\"path\": \"/b\", \"cuda_code\":"
		      "   {\"cubins\": [\"sm_80\", 90], \"ptx\": []}}, {\"cuda_code\": \"x\"}]},"
		      "  {\"kind\": \"torch\", \"version\": \"2.7.1\", \"cuda\": null, \"cuda_source\": \"version.py\"}]}]}");
	assert_false(f->driver.present);
	assert_int_equal(f->ngpus, 0);
	assert_int_equal(f->npci, 0);
	assert_int_equal(f->nlibraries, 1);
	assert_int_equal(f->libraries[0].at, 2);
	assert_null(f->libraries[0].soname);
	assert_int_equal(f->libraries[0].where.state, GPUENV_FACT_MISTYPED);
	assert_int_equal(f->libraries[0].where.n, 0);
	assert_false(f->cvd.have_visible);
	assert_int_equal(f->nenvs, 1);
	assert_int_equal(f->envs[0].at, 1);
	assert_int_equal(f->envs[0].nframeworks, 3);
	/* a mistyped cuda is unknown: not taken from the label either */
	assert_null(f->envs[0].frameworks[0].cuda);
	assert_int_equal(f->envs[0].frameworks[0].cuda_state, GPUENV_FACT_MISTYPED);
	/* no version.py: the +cu128 label says CUDA 12.8 */
	const gpuenv_facts_framework_t *fw = &f->envs[0].frameworks[1];
	assert_string_equal(fw->cuda, "12.8");
	assert_string_equal(fw->cuda_source, "local-version");
	assert_int_equal(fw->gpu, GPUENV_TRI_TRUE);
	assert_string_equal(fw->local, "cu128");
	/* a cubin list with a non-string entry is unknown as a whole */
	assert_int_equal(fw->nbinaries, 2);
	assert_int_equal(fw->binaries[0].code_state, GPUENV_FACT_MISTYPED);
	assert_int_equal(fw->binaries[0].cubins.n, 0);
	assert_int_equal(fw->binaries[1].code_state, GPUENV_FACT_MISTYPED);
	/* version.py said None: a CPU build, whatever the label */
	assert_null(f->envs[0].frameworks[2].cuda);
	gpuenv_arena_free(&a);
}

/* Bytes that are not text: \xHH as the probe writes them, and a \u0000 of
 * an older probe read the same way. */
static void test_strings(void **state)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	f = parse(&a, "{\"schema\": \"gpuenv.facts/1\", \"environments\": [{\"prefix\": \"/srv/caf\\\\xe9\","
		      " \"distributions\": [{\"name\": \"a\\u0000b\", \"version\": \"1\\\\x00\"}]}]}");
	assert_string_equal(f->envs[0].prefix, "/srv/caf\\xe9");
	assert_string_equal(f->envs[0].dists[0].name, "a\\x00b");
	assert_string_equal(f->envs[0].dists[0].version, "1\\x00");
	gpuenv_arena_free(&a);
}

static int parse_err(const char *text, const char *name)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;
	int rc;

	gpuenv_error_clear(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	rc = gpuenv_facts_parse(&ctx, &a, text, strlen(text), name, &f);
	assert_null(f);
	gpuenv_arena_free(&a);
	return rc;
}

/* Errors: the file, the position or path, our words, a fix. */
static void test_errors(void **state)
{
	(void)state;
	assert_int_equal(parse_err("{\"schema\": ", "f.json"), GPUENV_ESYNTAX);
	assert_string_equal(ctx.err.file, "f.json");
	assert_int_equal(ctx.err.line, 1);
	assert_true(ctx.err.col > 0);
	assert_non_null(strstr(ctx.err.msg, "ends early"));
	assert_true(ctx.err.hint[0]);

	assert_int_equal(parse_err("{\"schema\": \"gpuenv.facts/1\", \"size\": 99999999999999999999999}",
		"big.json"), GPUENV_ESYNTAX);
	assert_null(strstr(ctx.err.msg, "too big integer"));
	assert_non_null(strstr(ctx.err.msg, "64-bit"));
	assert_int_equal(ctx.err.line, 1);

	assert_int_equal(parse_err("{\"sch\\u0000ema\": 1}", "nul.json"), GPUENV_ESYNTAX);
	assert_null(strstr(ctx.err.msg, "JSON_ALLOW_NUL"));
	assert_string_equal(ctx.err.file, "nul.json");

	assert_int_equal(parse_err("\"\xff\"", "u.json"), GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "UTF-8"));

	assert_int_equal(parse_err("[1]", "a.json"), GPUENV_EFORMAT);
	assert_string_equal(ctx.err.file, "a.json");
	assert_non_null(strstr(ctx.err.msg, "an array"));
	assert_int_equal(parse_err("{}", "a.json"), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "\"schema\""));
	assert_int_equal(parse_err("{\"schema\": 1}", "a.json"), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "an integer"));
	assert_int_equal(parse_err("{\"schema\": \"other/1\"}", "a.json"), GPUENV_EFORMAT);
	assert_int_equal(parse_err("{\"schema\": \"gpuenv.facts/10\"}", "a.json"), GPUENV_EUNSUPPORTED);
	assert_int_equal(parse_err("{\"schema\": \"gpuenv.facts/2.0\"}", "a.json"), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.hint, "same major"));
	assert_int_equal(parse_err("{\"schema\": \"gpuenv.facts/\"}", "a.json"), GPUENV_EFORMAT);
	gpuenv_error_clear(&ctx);
}

static void test_small_readers(void **state)
{
	int maj, min;
	gpuenv_facts_gpu_t g = { .index = -1 };

	(void)state;
	assert_true(gpuenv_facts_cc("12.0", &maj, &min) && maj == 12 && min == 0);
	assert_false(gpuenv_facts_cc("9", &maj, &min));
	assert_false(gpuenv_facts_cc("9.10", &maj, &min));
	assert_false(gpuenv_facts_cc("123.0", &maj, &min));
	g.sm = "sm_90a";
	assert_true(gpuenv_facts_gpu_cc(&g, &maj, &min) && maj == 9 && min == 0);
	g.sm = "sm_121";
	assert_true(gpuenv_facts_gpu_cc(&g, &maj, &min) && maj == 12 && min == 1);
	g.sm = "sm_9";
	assert_false(gpuenv_facts_gpu_cc(&g, &maj, &min));
	g.sm = "sm_90b";
	assert_false(gpuenv_facts_gpu_cc(&g, &maj, &min));
}

/* Every allocation of a parse fails in turn: each run returns -ENOMEM
 * with ctx->err saying memory ran out, never a syntax error, until the
 * run that needs no more succeeds.  jansson's own allocations are among
 * them (they go through the context). */
static void test_alloc_failures(void **state)
{
	size_t len;
	char *text = testutil_read_source(&len, "tests/fixtures/doctor/cudnn-ld-library-path/facts.json");
	long n, total = -1;

	(void)state;
	for (n = 0; n < 1000000; n++) {
		testutil_alloc_t t;
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		const gpuenv_facts_t *f;
		int rc;

		testutil_alloc_reset(&t, n, false);
		gpuenv_ctx_init(&c);
		c.mem = testutil_allocator(&t);
		gpuenv_arena_init(&a, &c, 0);
		rc = gpuenv_facts_parse(&c, &a, text, len, "f.json", &f);
		gpuenv_arena_free(&a);
		if (!t.failures) {
			assert_int_equal(rc, 0);
			total = t.calls;
			break;
		}
		if (rc != -ENOMEM || c.err.code != -ENOMEM || !strstr(c.err.msg, "out of memory"))
			fail_msg("allocation %ld: rc %d, error %d \"%s\"", n, rc, c.err.code, c.err.msg);
	}
	/* jansson's nodes were counted: far more allocations than arena chunks */
	assert_true(total > 100);
	free(text);
}

/* diagnose under a failing allocator: its facts parsed, the signatures
 * compiled and a log scanned with them, allocation n failing for every n in
 * turn; each run gives a nonzero return and ctx->err saying memory ran out. */
static void test_diagnose_alloc_failures(void **state)
{
	size_t flen, llen;
	char *facts = testutil_read_source(&flen, "tests/fixtures/logs/facts-rtx5090.json");
	char *log = testutil_read_source(&llen, "tests/fixtures/logs/mixed-rtx5090.log");
	gpuenv_kb_t *kb;
	bool done = false;

	(void)state;
	assert_int_equal(gpuenv_kb_load(&ctx, NULL, &kb), 0);
	for (long n = 0; !done && n < 1000000; n++) {
		testutil_alloc_t t = { .fail_at = n, .only_one = true };
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		gpuenv_diag_facts_t df;
		gpuenv_diag_t *d = NULL;
		gpuenv_diag_result_t res;
		int rc;

		gpuenv_ctx_init(&c);
		c.mem = testutil_allocator(&t);
		gpuenv_arena_init(&a, &c, 0);
		rc = gpuenv_diag_facts_parse(&c, facts, flen, "facts.json", &a, &df);
		if (!rc)
			rc = gpuenv_diag_new(&c, kb, &d);
		if (!rc)
			rc = gpuenv_diag_scan(d, log, llen, &df, &a, &res);
		if (!rc && !res.n)
			fail_msg("the log has known failures");
		gpuenv_diag_free(d);
		gpuenv_arena_free(&a);
		if (!t.failures) {
			assert_int_equal(rc, 0);
			done = true;
		} else if (rc == 0 || c.err.code != -ENOMEM || !strstr(c.err.msg, "out of memory"))
			fail_msg("diagnose: allocation %ld failed: rc %d, ctx->err %d \"%s\"", n, rc,
				c.err.code, c.err.msg);
	}
	assert_true(done);
	gpuenv_kb_free(kb);
	free(facts);
	free(log);
}

/* The target of the H200 snapshot, and its views. */
static void test_target(void **state)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;
	gpuenv_target_t t;
	size_t len;
	char *text = testutil_read_source(&len, "tests/fixtures/doctor/h200-2026-11-29/facts.json");
	const char *cudnn = NULL, *nccl = NULL;

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_facts_parse(&ctx, &a, text, len, "h200.json", &f), 0);
	free(text);
	assert_int_equal(gpuenv_target_from_facts(&ctx, &a, f, SIZE_MAX, &t), 0);
	assert_string_equal(t.origin, "snapshot");
	assert_int_equal(t.ngpus, 1);
	assert_string_equal(t.gpus[0].name, "NVIDIA H200");
	assert_int_equal(t.gpus[0].cc_major, 9);
	assert_int_equal(t.gpus[0].cc_minor, 0);
	assert_true(t.gpus[0].visible);
	assert_true(t.gpus[0].memory > 0);
	assert_string_equal(t.driver, "580.159.04");
	assert_string_equal(t.driver_cuda, "13.0");
	assert_null(t.compat_cuda);
	assert_string_equal(t.python, "3.12.3");
	assert_string_equal(t.machine, "x86_64");
	assert_string_equal(t.os, "linux");
	assert_string_equal(t.cuda, "13.0");
	/* the environment's own wheels win over the system's copies */
	for (size_t i = 0; i < t.nlibs; i++) {
		if (strcmp(t.libs[i].name, "cudnn") == 0)
			cudnn = t.libs[i].version;
		if (strcmp(t.libs[i].name, "nccl") == 0)
			nccl = t.libs[i].version;
	}
	assert_string_equal(cudnn, "9.19.0.56");
	assert_string_equal(nccl, "2.28.9");

	/* the wheel-tag view: no libc known, so linux_x86_64 only */
	gpuenv_wheel_target_t w;
	gpuenv_tagset_t *tags;
	assert_int_equal(gpuenv_target_wheel(&ctx, &t, &w), 0);
	assert_int_equal(w.impl, GPUENV_IMPL_CPYTHON);
	assert_int_equal(w.py_major, 3);
	assert_int_equal(w.py_minor, 12);
	assert_string_equal(w.arch, "x86_64");
	assert_int_equal(w.os, GPUENV_OS_LINUX);
	assert_int_equal(w.libc_major, 0);
	assert_int_equal(gpuenv_tagset_build(&ctx, &w, &tags), 0);
	assert_string_equal(gpuenv_tagset_get(tags, 0), "cp312-cp312-linux_x86_64");
	gpuenv_tagset_free(tags);
	/* a declared glibc: the manylinux tags, newest first */
	gpuenv_target_t decl = t;
	decl.libc = "glibc";
	decl.libc_version = "2.35";
	assert_int_equal(gpuenv_target_wheel(&ctx, &decl, &w), 0);
	assert_int_equal(w.libc_major, 2);
	assert_int_equal(w.libc_minor, 35);
	assert_int_equal(gpuenv_tagset_build(&ctx, &w, &tags), 0);
	assert_string_equal(gpuenv_tagset_get(tags, 0), "cp312-cp312-manylinux_2_35_x86_64");
	gpuenv_tagset_free(tags);
	decl.libc = "musl";
	decl.libc_version = "1.2";
	assert_int_equal(gpuenv_target_wheel(&ctx, &decl, &w), 0);
	assert_int_equal(w.os, GPUENV_OS_MUSL);
	decl.python = NULL;
	assert_int_equal(gpuenv_target_wheel(&ctx, &decl, &w), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.msg, "Python"));
	decl.python = "3.12";
	decl.os = "windows";
	assert_int_equal(gpuenv_target_wheel(&ctx, &decl, &w), GPUENV_EUNSUPPORTED);
	gpuenv_error_clear(&ctx);

	/* the marker view */
	gpuenv_marker_env_t env;
	gpuenv_marker_t *m;
	bool yes;
	const char *mk = "python_version >= \"3.12\" and python_full_version == \"3.12.3\" and "
			 "platform_machine == \"x86_64\" and sys_platform == \"linux\" and "
			 "platform_release == \"6.18.44-fc-v657-gpu\" and implementation_name == \"cpython\"";
	memset(&env, 0, sizeof(env));
	assert_int_equal(gpuenv_target_marker_env(&ctx, &a, &t, &env), 0);
	assert_string_equal(env.python_version, "3.12");
	assert_int_equal(gpuenv_marker_parse(&ctx, &a, gpuenv_str(mk), &m), 0);
	env.extra = "";
	assert_int_equal(gpuenv_marker_eval(&ctx, m, &env, &yes), 0);
	assert_true(yes);
	decl = t;
	decl.machine = "aarch64";
	decl.python = "3.11";
	gpuenv_marker_env_default(&env);
	assert_int_equal(gpuenv_target_marker_env(&ctx, &a, &decl, &env), 0);
	assert_string_equal(env.python_full_version, "3.11");
	assert_int_equal(gpuenv_marker_eval(&ctx, m, &env, &yes), 0);
	assert_false(yes);

	/* the knowledge base's view: one target per compute capability */
	gpuenv_kb_t *kb;
	gpuenv_kb_target_t kt[4];
	assert_int_equal(gpuenv_kb_load(&ctx, NULL, &kb), 0);
	assert_int_equal(gpuenv_target_kb(kb, &t, kt, 4), 1);
	/* a cuda-compat libcuda newer than the driver's CUDA */
	{
		const gpuenv_facts_t *fc;
		gpuenv_target_t tc;
		size_t flen;
		char *ft = testutil_read_source(&flen, "tests/fixtures/doctor/forward-compat/facts.json");
		assert_int_equal(gpuenv_facts_parse(&ctx, &a, ft, flen, "fc.json", &fc), 0);
		free(ft);
		assert_int_equal(gpuenv_target_from_facts(&ctx, &a, fc, SIZE_MAX, &tc), 0);
		assert_non_null(tc.compat_cuda);
		assert_true(strcmp(tc.compat_cuda, tc.driver_cuda) > 0);
		gpuenv_kb_target_t kc;
		assert_int_equal(gpuenv_target_kb(kb, &tc, &kc, 1), 1);
		assert_true(kc.compat_cuda.n >= 2);
	}
	assert_true(kt[0].has_cc && kt[0].cc_major == 9 && kt[0].cc_minor == 0);
	assert_true(kt[0].has_driver);
	assert_int_equal(kt[0].driver.part[0], 580);
	assert_int_equal(kt[0].driver_cuda.part[0], 13);
	assert_int_equal(kt[0].compat_cuda.n, 0);
	assert_non_null(kt[0].gpu);
	gpuenv_target_gpu_t two[3] = { { "NVIDIA H200", 9, 0, -1, true }, { "NVIDIA A100-SXM4-80GB", 8, 0, -1, true },
		{ "NVIDIA H100 80GB HBM3", 9, 0, -1, true } };
	decl = t;
	decl.gpus = two;
	decl.ngpus = 3;
	assert_int_equal(gpuenv_target_kb(kb, &decl, kt, 4), 2);
	assert_int_equal(kt[1].cc_major, 8);
	assert_int_equal(gpuenv_target_kb(kb, &decl, kt, 1), 2);
	decl.ngpus = 0;
	decl.driver = NULL;
	assert_int_equal(gpuenv_target_kb(kb, &decl, kt, 4), 1);
	assert_false(kt[0].has_cc);
	assert_false(kt[0].has_driver);
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&a);
}

/* Values made under one context are freed right under another or none. */
static void test_json_scope(void **state)
{
	testutil_alloc_t t;
	gpuenv_ctx_t c;
	gpuenv_json_scope_t s, s2;
	json_t *v;

	(void)state;
	testutil_alloc_reset(&t, TESTUTIL_NEVER, false);
	gpuenv_ctx_init(&c);
	c.mem = testutil_allocator(&t);
	gpuenv_json_enter(&c, &s);
	v = json_pack("{s:[i,i]}", "a", 1, 2);
	gpuenv_json_enter(&ctx, &s2);
	json_t *w = json_string("x");
	assert_false(gpuenv_json_leave(&s2));
	assert_false(gpuenv_json_leave(&s));
	assert_non_null(v);
	assert_true(t.calls > 0);
	/* the two kinds of block (lib/formats/json_mem.c): the context's
	 * allocator's, with a header, at 8 mod 16; plain malloc's, no header,
	 * at 0 mod 16 */
	assert_int_equal((uintptr_t)v & 15, 8);
	assert_int_equal((uintptr_t)w & 15, 0);
	long before = t.calls;
	json_decref(v);
	json_decref(w);
	assert_int_equal(t.calls, before);
	/* a refusal inside a scope is reported by its leave (jansson gets a
	 * block from malloc: its lexer does not survive a NULL) */
	testutil_alloc_reset(&t, 0, false);
	gpuenv_json_enter(&c, &s);
	v = json_string("y");
	assert_true(gpuenv_json_leave(&s));
	assert_true(t.failures >= 1);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_lenient),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_small_readers),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_json_scope),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_diagnose_alloc_failures),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
