/* Unit tests for the knowledge base: the loader over the embedded data (and
 * over broken data), the queries the verbs ask, the cubin/PTX coverage
 * rule, and the diagnose library (signatures, templates, facts). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/diagnose.h"
#include "gpuenv/core.h"
#include "gpuenv/kb.h"
#include "gpuenv/kb_trt.h"
#include "gpuenv/kb_answer.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	return gpuenv_kb_load(&ctx, NULL, &kb);
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_kb_free(kb);
	kb = NULL;
	return 0;
}

static gpuenv_kb_ver_t V(const char *s)
{
	gpuenv_kb_ver_t v;
	assert_true(gpuenv_kb_ver_parse(gpuenv_str(s), &v));
	return v;
}

static gpuenv_kb_sm_t SM(const char *s)
{
	gpuenv_kb_sm_t v;
	assert_true(gpuenv_kb_sm_parse(gpuenv_str(s), &v));
	return v;
}

static bool str_is(gpuenv_str_t s, const char *c)
{
	return gpuenv_str_eq_cstr(s, c);
}

/* ---- loading -------------------------------------------------------------- */

#define EVERY_ROW(tab)                                                                  \
	for (size_t i = 0; i < kb->n_##tab; i++) {                                      \
		const gpuenv_kb_row_t *r = &kb->tab[i].row;                             \
		assert_non_null(r->source.ptr);                                         \
		assert_true(gpuenv_str_trim(r->source).len > 0);                        \
		assert_true(r->line > 0);                                               \
		assert_true(r->file < GPUENV_KB_NFILES);                                \
		rows++;                                                                 \
	}

static void test_every_row_has_a_source(void **state)
{
	size_t rows = 0, counted = 0;
	gpuenv_kb_table_info_t t[64];
	size_t nt;

	(void)state;
	EVERY_ROW(toolkit)
	EVERY_ROW(minor_compat)
	EVERY_ROW(branch)
	EVERY_ROW(cuda_arch_list)
	EVERY_ROW(rule)
	EVERY_ROW(driver_observed)
	EVERY_ROW(arch)
	EVERY_ROW(gpu)
	EVERY_ROW(pci_vendor)
	EVERY_ROW(pci)
	EVERY_ROW(torch_release)
	EVERY_ROW(torch_variant)
	EVERY_ROW(torch_arch_list)
	EVERY_ROW(torch_pin)
	EVERY_ROW(cudnn)
	EVERY_ROW(nccl)
	EVERY_ROW(tensorrt)
	EVERY_ROW(version_encoding)
	EVERY_ROW(soname)
	EVERY_ROW(local_tag)
	EVERY_ROW(wheel_package)
	EVERY_ROW(version_rule)
	EVERY_ROW(wheel_extra)
	EVERY_ROW(meta_pin)
	EVERY_ROW(container)
	EVERY_ROW(signature)
	EVERY_ROW(about)
	EVERY_ROW(toolkit_known)
	EVERY_ROW(cuda_image)
	EVERY_ROW(pytorch_image)
	EVERY_ROW(trt_release)
	EVERY_ROW(trt_precision)
	EVERY_ROW(trt_flag)
	EVERY_ROW(trt_hwcompat)
	EVERY_ROW(trt_vcompat)
	nt = gpuenv_kb_tables(kb, t, 64);
	assert_int_equal(nt, 35);
	for (size_t i = 0; i < nt; i++) {
		assert_true(t[i].rows > 0);
		counted += t[i].rows;
	}
	/* every table is checked above, and none is empty */
	assert_int_equal(rows, counted);
	for (int f = 0; f < GPUENV_KB_NFILES; f++) {
		assert_string_equal(kb->files[f].origin, "embedded");
		/* images.toml's rows come with its tables (issue 10's Docker Hub part) */
		assert_true(kb->files[f].rows > 0 || f == GPUENV_KB_IMAGES);
		assert_true(kb->files[f].size > 0);
	}
	assert_true(kb->n_signature >= 30);
	/* the PCI rows were linked to their GPUs */
	for (size_t i = 0; i < kb->n_pci; i++)
		assert_non_null(kb->pci[i].gpu_row);
}

static void test_values(void **state)
{
	gpuenv_kb_ver_t a, b;
	gpuenv_kb_sm_t s;

	(void)state;
	a = V("570.124.06");
	b = V("570.26");
	assert_true(gpuenv_kb_ver_cmp(&a, &b) > 0);
	a = V("580");
	b = V("580.0.0");
	assert_int_equal(gpuenv_kb_ver_cmp(&a, &b), 0);
	assert_false(gpuenv_kb_ver_parse(gpuenv_str("12."), &a));
	assert_false(gpuenv_kb_ver_parse(gpuenv_str(".12"), &a));
	assert_false(gpuenv_kb_ver_parse(gpuenv_str("1.2.3.4.5"), &a));
	assert_false(gpuenv_kb_ver_parse(gpuenv_str("1234567890"), &a));
	assert_false(gpuenv_kb_ver_parse(gpuenv_str(""), &a));
	a = V("12.8.1");
	b = V("12.8");
	assert_true(gpuenv_kb_ver_prefix(&a, &b));
	s = SM("sm_120a");
	assert_int_equal(s.major, 12);
	assert_int_equal(s.minor, 0);
	assert_int_equal(s.variant, 'a');
	s = SM("compute_90");
	assert_int_equal(s.major, 9);
	s = SM("sm_100f");
	assert_int_equal(s.variant, 'f');
	s = SM("8.6");
	assert_int_equal(s.major, 8);
	assert_int_equal(s.minor, 6);
	assert_false(gpuenv_kb_sm_parse(gpuenv_str("sm_9"), &s));
	assert_false(gpuenv_kb_sm_parse(gpuenv_str("sm_1200"), &s));
	assert_false(gpuenv_kb_sm_parse(gpuenv_str("sm_90b"), &s));
	assert_false(gpuenv_kb_sm_parse(gpuenv_str("gfx90a"), &s));
}

/* ---- CUDA and drivers ------------------------------------------------------------ */

static void test_min_driver(void **state)
{
	const gpuenv_kb_toolkit_t *ga;

	(void)state;
	assert_int_equal(gpuenv_kb_cuda_min_driver(kb, gpuenv_str("12.8"), &ga), 0);
	assert_true(str_is(ga->driver_linux.str, "570.26"));
	assert_int_equal(ga->update, 0);
	assert_int_equal(ga->row.file, GPUENV_KB_CUDA);
	/* a patch part is ignored */
	assert_int_equal(gpuenv_kb_cuda_min_driver(kb, gpuenv_str("12.8.1"), &ga), 0);
	assert_true(str_is(ga->driver_linux.str, "570.26"));
	assert_int_equal(gpuenv_kb_cuda_min_driver(kb, gpuenv_str("13.0"), &ga), 0);
	assert_true(str_is(ga->driver_linux.str, "580.65.06"));
	assert_int_equal(gpuenv_kb_cuda_min_driver(kb, gpuenv_str("11.8"), &ga), 0);
	assert_true(str_is(ga->driver_linux.str, "520.61.05"));
	/* CUDA 12.7 was never released */
	assert_int_equal(gpuenv_kb_cuda_min_driver(kb, gpuenv_str("12.7"), &ga), GPUENV_ENOTFOUND);
	assert_null(ga);
	assert_non_null(strstr(ctx.err.hint, "12.8"));
	assert_int_equal(gpuenv_kb_cuda_min_driver(kb, gpuenv_str("twelve"), &ga), GPUENV_EVERSION);
}

/* the driver rule for a host that is just a driver version */
static int driver_runs(const gpuenv_kb_ver_t *d, const gpuenv_kb_ver_t *c, gpuenv_kb_driver_cuda_t *dc)
{
	gpuenv_kb_target_t t;

	memset(&t, 0, sizeof(t));
	t.has_driver = true;
	t.driver = *d;
	return gpuenv_kb_driver_runs_cuda(kb, &t, c, dc);
}

static void test_driver_max_cuda(void **state)
{
	gpuenv_kb_driver_max_t mx;
	gpuenv_kb_driver_cuda_t dc;
	gpuenv_kb_ver_t d = V("535.104.05"), c;

	(void)state;
	gpuenv_kb_driver_max_cuda(kb, &d, &mx);
	assert_non_null(mx.ga);
	assert_true(str_is(mx.ga->cuda.str, "12.2")); /* up to 12.2 by the GA table */
	assert_int_equal(mx.ga->update, 2);
	assert_non_null(mx.mvc); /* every 12.x by minor-version compatibility */
	assert_int_equal(mx.mvc->cuda_major, 12);
	assert_non_null(mx.branch);
	assert_true(str_is(mx.branch->branch, "R535"));

	c = V("12.8");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_MINOR_COMPAT);
	c = V("12.2");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_GA);
	c = V("13.0");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_NO);
	c = V("12.7");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_UNKNOWN);

	d = V("580.159.04"); /* the H200 machine */
	gpuenv_kb_driver_max_cuda(kb, &d, &mx);
	assert_true(str_is(mx.ga->cuda.str, "13.0"));
	assert_int_equal(mx.mvc->cuda_major, 13);
	c = V("13.0");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_GA);
	c = V("13.2");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_MINOR_COMPAT);

	/* CUDA 11.x minor-version compatibility starts at 450.80.02, not 450.51 */
	d = V("450.51.06");
	c = V("11.4");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_NO);
	d = V("450.80.02");
	assert_int_equal(driver_runs(&d, &c, &dc), GPUENV_KB_RUNS_MINOR_COMPAT);

	d = V("390.1");
	gpuenv_kb_driver_max_cuda(kb, &d, &mx);
	assert_null(mx.ga);
	assert_null(mx.mvc);
	assert_non_null(gpuenv_kb_rule(kb, "minor-version-compat"));
	assert_null(gpuenv_kb_rule(kb, "no-such-rule"));
}

/* ---- GPUs ------------------------------------------------------------------------- */

static const gpuenv_kb_gpu_t *one_gpu(const char *q)
{
	gpuenv_kb_gpu_match_t m;
	int r = gpuenv_kb_gpu_lookup(kb, q, &m);
	if (r)
		fail_msg("'%s': %s (%s)", q, ctx.err.msg, ctx.err.hint);
	return m.gpu;
}

static void test_gpu_lookup(void **state)
{
	const gpuenv_kb_gpu_t *g;
	const gpuenv_kb_arch_t *a;
	gpuenv_kb_gpu_match_t m[8];

	(void)state;
	g = one_gpu("RTX 5090");
	assert_true(str_is(g->name, "GeForce RTX 5090"));
	assert_true(str_is(g->cc.str, "12.0"));
	a = gpuenv_kb_arch(kb, 12, 0);
	assert_true(str_is(a->architecture, "Blackwell"));
	assert_true(str_is(a->sm.str, "sm_120"));

	assert_int_equal(gpuenv_kb_gpu_find(kb, "0x2335", m, 8), 1);
	assert_int_equal(m[0].how, GPUENV_KB_MATCH_PCI);
	assert_true(str_is(m[0].gpu->name, "NVIDIA H200"));
	assert_true(str_is(m[0].gpu->cc.str, "9.0"));
	assert_true(str_is(one_gpu("10de:2335")->name, "NVIDIA H200"));
	assert_true(str_is(one_gpu("0x233510DE")->name, "NVIDIA H200"));

	assert_true(str_is(one_gpu("H100")->name, "NVIDIA H100"));
	assert_true(str_is(one_gpu("a100")->name, "NVIDIA A100"));
	assert_true(str_is(one_gpu("NVIDIA H200")->name, "NVIDIA H200"));
	assert_true(str_is(one_gpu("nvidia geforce rtx 5090")->name, "GeForce RTX 5090"));
	assert_true(str_is(one_gpu("rtx5090")->name, "GeForce RTX 5090"));
	/* names as NVML and nvidia-smi print them */
	assert_true(str_is(one_gpu("NVIDIA A100-SXM4-80GB")->name, "NVIDIA A100"));
	assert_true(str_is(one_gpu("NVIDIA H100 80GB HBM3")->name, "NVIDIA H100"));
	assert_true(str_is(one_gpu("Tesla T4")->name, "NVIDIA T4"));
	assert_true(str_is(one_gpu("NVIDIA L40S")->name, "NVIDIA L40S"));
	assert_true(str_is(one_gpu("L40")->name, "NVIDIA L40"));
	assert_true(str_is(one_gpu("NVIDIA GeForce RTX 4070 Ti SUPER")->name, "GeForce RTX 4070 Ti"));
	/* A10 is not A100 nor A16 */
	assert_true(str_is(one_gpu("A10")->name, "NVIDIA A10"));

	/* several products start with these words */
	assert_int_equal(gpuenv_kb_gpu_find(kb, "RTX PRO 6000", m, 8), 3);
	assert_int_equal(gpuenv_kb_gpu_lookup(kb, "RTX PRO 6000", &m[0]), GPUENV_EDUPLICATE);
	assert_non_null(strstr(ctx.err.hint, "Workstation"));
	/* Quadro is a word people leave out ("RTX 8000") and the driver adds
	 * ("Quadro T1000" for NVIDIA's "T1000"); when a newer product starts
	 * with the same words ("RTX 6000": Quadro RTX 6000 or RTX 6000 Ada)
	 * the answer is ambiguous, not the older card */
	assert_true(str_is(one_gpu("RTX 8000")->name, "Quadro RTX 8000"));
	assert_true(str_is(one_gpu("Quadro T1000")->name, "T1000"));
	assert_true(str_is(one_gpu("RTX 8000 Passive")->name, "Quadro RTX 8000"));
	assert_int_equal(gpuenv_kb_gpu_find(kb, "RTX 6000", m, 8), 2);
	assert_int_equal(m[0].how, GPUENV_KB_MATCH_EXACT);
	assert_true(str_is(m[0].gpu->name, "Quadro RTX 6000"));
	assert_int_equal(m[1].how, GPUENV_KB_MATCH_PARTIAL);
	assert_true(str_is(m[1].gpu->name, "NVIDIA RTX 6000 Ada"));
	/* legacy names, laptop parts and board names as the driver writes them */
	assert_true(str_is(one_gpu("GTX 980")->name, "GeForce GTX 980"));
	assert_true(str_is(one_gpu("GTX 980M")->name, "GeForce GTX 980M"));
	assert_true(str_is(one_gpu("GeForce 8800 GTX")->cc.str, "1.0"));
	assert_true(str_is(one_gpu("Tesla C2070")->name, "Tesla C2070"));
	assert_true(str_is(one_gpu("Jetson Orin Nano")->cc.str, "8.7"));
	assert_true(str_is(one_gpu("NVIDIA A100 80GB PCIe")->name, "NVIDIA A100"));
	assert_true(str_is(one_gpu("NVIDIA GeForce RTX 3080 Laptop GPU")->name, "GeForce RTX 3080"));
	assert_true(str_is(one_gpu("rtx 3050ti")->name, "GeForce RTX 3050 Ti"));
	/* a number followed by Ti, SUPER or M is another product: "GTX 1650"
	 * does not start "GTX 1650 Ti" (not in NVIDIA's lists: not found,
	 * with the near name as a hint) */
	assert_int_equal(gpuenv_kb_gpu_find(kb, "GTX 1650", m, 8), 0);
	assert_int_equal(gpuenv_kb_gpu_lookup(kb, "GTX 1650", &m[0]), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.hint, "GeForce GTX 1650 Ti"));
	/* GDDR5 and GDDR3 GT 640s have different compute capabilities */
	assert_int_equal(gpuenv_kb_gpu_find(kb, "GT 640", m, 8), 2);
	/* 0x25b6 is both A16 and A2 (told apart by subsystem ids) */
	assert_int_equal(gpuenv_kb_gpu_find(kb, "0x25b6", m, 8), 2);

	/* a known name with words after it that are no board's: not that GPU
	 * (issue 22 item 11: "T4 H100" was a T4); several names are no one */
	assert_int_equal(gpuenv_kb_gpu_find(kb, "T4 H100", m, 8), 0);
	assert_int_equal(gpuenv_kb_gpu_lookup(kb, "T4 H100", &m[0]), GPUENV_EDUPLICATE);
	assert_non_null(strstr(ctx.err.msg, "names 2 GPUs"));
	assert_non_null(strstr(ctx.err.hint, "'NVIDIA T4' or 'NVIDIA H100'"));
	assert_int_equal(gpuenv_kb_gpu_lookup(kb, "A100 or T4", &m[0]), GPUENV_EDUPLICATE);
	assert_non_null(strstr(ctx.err.hint, "'NVIDIA A100' or 'NVIDIA T4'"));
	assert_int_equal(gpuenv_kb_gpu_lookup(kb, "T4; rm -rf /", &m[0]), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.hint, "did you mean 'NVIDIA T4'?"));
	assert_int_equal(gpuenv_kb_gpu_find(kb, "T4 100", m, 8), 0);
	/* a remark in parentheses, as NVIDIA's list writes "NVIDIA GB10 (DGX
	 * Spark)", is not part of the name; one with other characters is */
	assert_true(str_is(one_gpu("NVIDIA GB10 (DGX Spark)")->name, "NVIDIA GB10"));
	assert_int_equal(gpuenv_kb_gpu_find(kb, "T4 (rm -rf /)", m, 8), 0);
	assert_int_equal(gpuenv_kb_gpu_find(kb, "T4 (H100)", m, 8), 1);
	assert_int_equal(gpuenv_kb_gpu_find(kb, "H100 SXM5 80GB", m, 8), 1);
	assert_true(str_is(one_gpu("Tesla V100-SXM2-16GB")->name, "NVIDIA V100"));
	assert_true(str_is(one_gpu("NVIDIA A100-SXM4-40GB MIG 1g.5gb")->name, "NVIDIA A100"));
	assert_true(str_is(one_gpu("Quadro RTX 5000 with Max-Q Design")->name, "Quadro RTX 5000"));

	assert_int_equal(gpuenv_kb_gpu_lookup(kb, "H1000", &m[0]), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.hint, "NVIDIA H100"));
	assert_int_equal(gpuenv_kb_gpu_find(kb, "", m, 8), 0);
	assert_int_equal(gpuenv_kb_gpu_find(kb, "0xzzzz", m, 8), 0);
	assert_int_equal(gpuenv_kb_gpu_find(kb, "0x0000", m, 8), 0);
	assert_int_equal(gpuenv_kb_gpu_find(kb, "Radeon RX 7900", m, 8), 0);
}

/* ---- CUDA code coverage ------------------------------------------------------------- */

static bool runs(const char *code, bool ptx, unsigned major, unsigned minor)
{
	gpuenv_kb_sm_t s = SM(code);
	return gpuenv_kb_sm_runs_on(&s, ptx, major, minor);
}

static void test_coverage_rule(void **state)
{
	(void)state;
	/* cubins: same major, lower or equal minor */
	assert_true(runs("sm_80", false, 8, 6));
	assert_false(runs("sm_86", false, 8, 0));
	assert_false(runs("sm_90", false, 10, 0));
	assert_false(runs("sm_90", false, 12, 0));
	assert_true(runs("sm_100", false, 10, 3));
	assert_false(runs("sm_100", false, 12, 0));
	assert_true(runs("sm_120", false, 12, 1));
	assert_false(runs("sm_121", false, 12, 0));
	/* arch-specific: exactly that capability */
	assert_true(runs("sm_90a", false, 9, 0));
	assert_false(runs("sm_90a", false, 10, 0));
	assert_true(runs("sm_100a", false, 10, 0));
	assert_false(runs("sm_100a", false, 10, 3));
	assert_false(runs("sm_120a", false, 12, 1));
	/* family: later members of the same family */
	assert_true(runs("sm_100f", false, 10, 3));
	assert_false(runs("sm_100f", false, 12, 0));
	assert_true(runs("sm_120f", false, 12, 1));
	/* PTX: any capability at or above its own */
	assert_true(runs("compute_90", true, 10, 0));
	assert_true(runs("compute_90", true, 12, 0));
	assert_true(runs("compute_120", true, 12, 0));
	assert_false(runs("compute_120", true, 10, 0));
	assert_false(runs("compute_90a", true, 10, 0));
	assert_true(runs("compute_90a", true, 9, 0));
	assert_false(runs("compute_100f", true, 12, 0));

	/* a binary: the closest cubin wins; PTX only when no cubin fits */
	gpuenv_kb_sm_t cub[] = { SM("sm_75"), SM("sm_80"), SM("sm_86"), SM("sm_90"), SM("sm_90a") };
	gpuenv_kb_sm_t ptx[] = { SM("sm_90") };
	gpuenv_kb_cover_t cov;
	assert_true(gpuenv_kb_code_covers(cub, 5, NULL, 0, 8, 9, &cov));
	assert_true(str_is(cov.by->str, "sm_86"));
	assert_false(cov.via_ptx);
	assert_true(gpuenv_kb_code_covers(cub, 5, NULL, 0, 9, 0, &cov));
	assert_true(str_is(cov.by->str, "sm_90a"));
	assert_false(gpuenv_kb_code_covers(cub, 5, NULL, 0, 12, 0, &cov));
	assert_true(gpuenv_kb_code_covers(cub, 5, ptx, 1, 12, 0, &cov));
	assert_true(cov.via_ptx);
	assert_false(gpuenv_kb_code_covers(cub, 5, ptx, 1, 7, 0, &cov));

	/* the oldest toolkit that builds an architecture */
	const gpuenv_kb_toolkit_t *ga;
	const gpuenv_kb_cuda_arch_list_t *al = gpuenv_kb_arch_first_cuda(kb, 12, 0, &ga);
	assert_non_null(al);
	assert_true(str_is(al->cuda_min.str, "12.8"));
	assert_true(str_is(ga->driver_linux.str, "570.26"));
	al = gpuenv_kb_arch_first_cuda(kb, 9, 0, &ga);
	assert_true(str_is(al->cuda_min.str, "11.8"));
	assert_null(gpuenv_kb_arch_first_cuda(kb, 2, 0, &ga));

	char buf[64];
	assert_string_equal(gpuenv_kb_sms_range(cub, 4, buf, sizeof(buf)), "sm_75..sm_90");
	assert_string_equal(gpuenv_kb_sms_range(cub, 0, buf, sizeof(buf)), "none");
}

/* ---- torch --------------------------------------------------------------------------- */

static const gpuenv_kb_torch_variant_t *variant(const char *series, const char *tag)
{
	gpuenv_kb_ver_t s = V(series);
	for (size_t i = 0; i < kb->n_torch_variant; i++)
		if (gpuenv_kb_ver_cmp(&kb->torch_variant[i].torch, &s) == 0 &&
			str_is(kb->torch_variant[i].tag, tag))
			return &kb->torch_variant[i];
	fail_msg("no variant %s %s", series, tag);
	return NULL;
}

static bool has_reason(const gpuenv_kb_torch_verdict_t *vd, int verdict, const char *text)
{
	for (size_t i = 0; i < vd->n_reason; i++)
		if (vd->reason[i].verdict == verdict && strstr(vd->reason[i].text, text))
			return true;
	return false;
}

static gpuenv_kb_target_t target(const char *gpu, const char *driver)
{
	gpuenv_kb_target_t t;
	memset(&t, 0, sizeof(t));
	if (gpu) {
		const gpuenv_kb_gpu_t *g = one_gpu(gpu);
		t.has_cc = true;
		t.cc_major = g->cc.part[0];
		t.cc_minor = g->cc.part[1];
		t.gpu = g;
	}
	if (driver) {
		t.has_driver = true;
		t.driver = V(driver);
	}
	return t;
}

static void test_torch_rtx5090_driver535(void **state)
{
	gpuenv_kb_target_t t = target("RTX 5090", "535.104.05");
	gpuenv_kb_torch_verdict_t vd;
	gpuenv_arena_t a;

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	/* no build runs there, and each no has its reason */
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		assert_int_equal(gpuenv_kb_torch_check(kb, &t, &kb->torch_variant[i], &a, &vd), 0);
		assert_int_equal(vd.verdict, GPUENV_KB_NO);
		assert_true(vd.n_reason > 0);
		assert_true(has_reason(&vd, GPUENV_KB_NO, "predates sm_120"));
		for (size_t k = 0; k < vd.n_reason; k++)
			assert_non_null(vd.reason[k].text);
	}
	/* the builds with sm_120 code fail only on the driver */
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.10", "cu128"), &a, &vd), 0);
	assert_true(has_reason(&vd, GPUENV_KB_YES, "sm_120 cubin"));
	assert_true(has_reason(&vd, GPUENV_KB_YES, "minor-version compatibility"));
	assert_non_null(vd.reason[0].src);
	/* the old ones lack the code as well */
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.5", "cu124"), &a, &vd), 0);
	assert_true(has_reason(&vd, GPUENV_KB_NO, "carries sm_50..sm_90 and no PTX"));
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.11", "cu130"), &a, &vd), 0);
	assert_true(has_reason(&vd, GPUENV_KB_NO, "the minimum for CUDA 13.0"));
	gpuenv_arena_free(&a);
}

static void test_torch_other_machines(void **state)
{
	gpuenv_kb_target_t t;
	gpuenv_kb_torch_verdict_t vd;
	gpuenv_arena_t a;

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	/* RTX 5090 on a 570 driver: cu128 with sm_120 yes, cu130 no */
	t = target("RTX 5090", "570.26");
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.10", "cu128"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_YES);
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.11", "cu130"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_NO);
	/* 2.7 cu128 carries sm_120 as a cubin */
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.7", "cu128"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_YES);
	/* a build without an arch list is unknown, not yes (2.11 cu128 has one
	 * now, from RELEASE.md's CUDA support matrix; 2.7 cu118 still has none) */
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.7", "cu118"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_UNKNOWN);

	/* the H200 machine: 580.159.04 runs 2.11 cu130 */
	t = target("0x2335", "580.159.04");
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.11", "cu130"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_YES);
	assert_true(has_reason(&vd, GPUENV_KB_YES, "sm_90 cubin"));

	/* an H100 on driver 535 and a CUDA 13 build: forward compatibility is named */
	t = target("H100", "535.104.05");
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.11", "cu130"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_NO);
	assert_true(has_reason(&vd, GPUENV_KB_NO, "forward-compatibility"));

	/* Kepler (K80, sm_37) ended with CUDA 11 */
	t = target("Tesla K80", NULL);
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.1", "cu121"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_NO);
	assert_true(has_reason(&vd, GPUENV_KB_NO, "up to CUDA 11.x"));
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.1", "cu118"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_YES);

	/* driver only */
	t = target(NULL, "525.60.13");
	assert_int_equal(gpuenv_kb_torch_check(kb, &t, variant("2.1", "cu121"), &a, &vd), 0);
	assert_int_equal(vd.verdict, GPUENV_KB_YES);
	gpuenv_arena_free(&a);

	/* versions to variants */
	const gpuenv_kb_torch_variant_t *v = gpuenv_kb_torch_variant(kb, gpuenv_str("2.5.1+cu124"));
	assert_non_null(v);
	assert_true(str_is(v->tag, "cu124"));
	v = gpuenv_kb_torch_variant(kb, gpuenv_str("2.11.0"));
	assert_non_null(v);
	assert_true(str_is(v->tag, "cu130")); /* the PyPI default */
	assert_null(gpuenv_kb_torch_variant(kb, gpuenv_str("2.5.1+cpu")));
	assert_null(gpuenv_kb_torch_variant(kb, gpuenv_str("1.13.1+cu117")));
	/* an NGC build is none of the PyPI / download.pytorch.org variants */
	assert_null(gpuenv_kb_torch_variant(kb, gpuenv_str("2.10.0a0+b4e4ee81d3")));
	v = gpuenv_kb_torch_variant(kb, gpuenv_str("2.7.1"));
	assert_true(str_is(v->tag, "cu126"));
}

static void test_images(void **state)
{
	const gpuenv_kb_container_t *m[64];

	(void)state;
	assert_int_equal(gpuenv_kb_image_find(kb, "nvcr.io/nvidia/pytorch:24.05-py3", m, 64), 1);
	assert_true(str_is(m[0]->cuda.str, "12.4"));
	assert_true(str_is(m[0]->cudnn.str, "9.1.0.70"));
	assert_int_equal(gpuenv_kb_image_find(kb, "pytorch:24.05-py3", m, 64), 1);
	assert_int_equal(gpuenv_kb_image_find(kb, "nvidia/pytorch:24.05-py3", m, 64), 1);
	assert_true(gpuenv_kb_image_find(kb, "nvcr.io/nvidia/pytorch", m, 64) >= 3);
	assert_int_equal(gpuenv_kb_image_find(kb, "nvcr.io/nvidia/pytorch:99.99-py3", m, 64), 0);
	assert_int_equal(gpuenv_kb_image_find(kb, "", m, 64), 0);
	assert_int_equal(gpuenv_kb_image_find(kb, "docker.io/library/ubuntu:24.04", m, 64), 0);
}

/* ---- one answer per question (lib/kb/compat.c) --------------------------------------------- */

static void test_cuda_parse(void **state)
{
	gpuenv_kb_ver_t v;

	(void)state;
	assert_int_equal(gpuenv_kb_cuda_parse(&ctx, gpuenv_str("12.8"), &v), 0);
	assert_true(str_is(v.str, "12.8") && v.n == 2);
	assert_int_equal(gpuenv_kb_cuda_parse(&ctx, gpuenv_str("12.4.1"), &v), 0);
	assert_true(str_is(v.str, "12.4") && v.n == 2 && v.part[1] == 4);
	/* a bare major is not silently 12.0 (issue 7: preflight read it so) */
	assert_int_equal(gpuenv_kb_cuda_parse(&ctx, gpuenv_str("12"), &v), GPUENV_EVERSION);
	assert_non_null(strstr(ctx.err.hint, "12.0"));
	assert_int_equal(gpuenv_kb_cuda_parse(&ctx, gpuenv_str("abc"), &v), GPUENV_EVERSION);
	assert_int_equal(gpuenv_kb_cuda_parse(&ctx, gpuenv_str("0.9"), &v), GPUENV_EVERSION);
	assert_int_equal(gpuenv_kb_cuda_parse(&ctx, gpuenv_str("12.8.1.2"), &v), GPUENV_EVERSION);
}

/* a torch build tag's CUDA: the one reader (lib/kb/kb.c) */
static void test_cuda_of_tag(void **state)
{
	gpuenv_kb_ver_t v;
	char b[16];

	(void)state;
	assert_string_equal(gpuenv_kb_cuda_of_tag(gpuenv_str("cu126"), b, sizeof(b), &v), "12.6");
	assert_true(v.n == 2 && v.part[0] == 12 && v.part[1] == 6 && str_is(v.str, "12.6"));
	assert_string_equal(gpuenv_kb_cuda_of_tag(gpuenv_str("cu130"), b, sizeof(b), NULL), "13.0");
	assert_string_equal(gpuenv_kb_cuda_of_tag(gpuenv_str("cu92"), b, sizeof(b), &v), "9.2");
	assert_true(v.part[0] == 9 && v.part[1] == 2);
	/* every tag torch.toml lists reads as the row's CUDA */
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *t = &kb->torch_variant[i];
		assert_non_null(gpuenv_kb_cuda_of_tag(t->tag, b, sizeof(b), &v));
		assert_int_equal(gpuenv_kb_ver_cmp(&v, &t->cuda), 0);
	}
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("cpu"), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("rocm6.2"), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("cu1"), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("cu12x"), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("cu1260"), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("cu062"), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("+cu126"), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str(NULL), b, sizeof(b), NULL));
	assert_null(gpuenv_kb_cuda_of_tag(gpuenv_str("cu126"), b, 4, NULL));
}

static gpuenv_kb_target_t host(const char *gpu, const char *driver)
{
	gpuenv_kb_target_t t;
	gpuenv_kb_gpu_match_t m;

	memset(&t, 0, sizeof(t));
	if (gpu) {
		assert_int_equal(gpuenv_kb_gpu_lookup(kb, gpu, &m), 0);
		t.has_cc = true;
		t.cc_major = m.gpu->cc.part[0];
		t.cc_minor = m.gpu->cc.part[1];
		t.gpu = m.gpu;
	}
	if (driver) {
		t.has_driver = true;
		t.driver = V(driver);
	}
	return t;
}

static int image_runs(const char *ref, const gpuenv_kb_target_t *t, gpuenv_kb_image_verdict_t *iv)
{
	gpuenv_kb_image_ref_t img;

	assert_int_equal(gpuenv_kb_image_lookup(kb, ref, &img), 0);
	gpuenv_kb_image_check(kb, t, &img, iv);
	return iv->runs;
}

static void test_image_check(void **state)
{
	const char *triton = "nvcr.io/nvidia/tritonserver:24.10-py3";
	gpuenv_kb_image_verdict_t iv;
	gpuenv_kb_image_ref_t img;
	gpuenv_kb_target_t t;

	(void)state;
	/* the release notes of 24.10: R560, or R470/R525/R535/R545 on data-center
	 * GPUs; 550.54.15 is neither, minor-version compatibility aside */
	t = host("H100", "550.54.15");
	assert_int_equal(image_runs(triton, &t, &iv), GPUENV_KB_RUNS_NO);
	assert_true(iv.by_notes && iv.branch == 560);
	assert_int_equal(iv.dc.runs, GPUENV_KB_RUNS_MINOR_COMPAT); /* what the CUDA rule alone says */
	t = host("H100", "560.35.03");
	assert_int_equal(image_runs(triton, &t, &iv), GPUENV_KB_RUNS_GA);
	t = host("H100", "535.104.05");
	assert_int_equal(image_runs(triton, &t, &iv), GPUENV_KB_RUNS_FORWARD_COMPAT);
	assert_true(str_is(iv.fc_driver->str, "535.86") && !iv.datacenter_only);
	t = host(NULL, "535.104.05");
	assert_int_equal(image_runs(triton, &t, &iv), GPUENV_KB_RUNS_FORWARD_COMPAT);
	assert_true(iv.datacenter_only);
	t = host("RTX 4090", "535.104.05");
	assert_int_equal(image_runs(triton, &t, &iv), GPUENV_KB_RUNS_NO);
	assert_true(iv.not_datacenter);
	t = host("H100", "535.54.03"); /* R535, but older than the 535.86 the notes name */
	assert_int_equal(image_runs(triton, &t, &iv), GPUENV_KB_RUNS_NO);
	/* an image without notes in the KB: the CUDA rule */
	t = host(NULL, "535.104.05");
	{
		/* a CUDA 12 NGC row whose release notes the KB lacks (which one changes
		 * as rows gain their notes) */
		char ref[128] = "";
		for (size_t i = 0; i < kb->n_container && !ref[0]; i++) {
			const gpuenv_kb_container_t *c = &kb->container[i];
			if (!c->driver_min_branch.ptr && c->cuda.part[0] == 12 && c->cuda.part[1] >= 3)
				snprintf(ref, sizeof(ref), "%.*s:%.*s", GPUENV_STR_ARG(c->image),
					GPUENV_STR_ARG(c->tag));
		}
		assert_true(ref[0]);
		assert_int_equal(image_runs(ref, &t, &iv), GPUENV_KB_RUNS_MINOR_COMPAT);
		assert_false(iv.by_notes);
	}
	assert_int_equal(image_runs("nvidia/cuda:12.2.2-runtime-ubuntu22.04", &t, &iv),
		GPUENV_KB_RUNS_GA);
	/* no release in the tag: refused by the grammar (lib/kb/hub.c) */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "nvidia/cuda:latest", &img), GPUENV_EUSAGE);
	assert_int_equal(gpuenv_kb_image_lookup(kb, "pytorch", &img), GPUENV_EUSAGE);
	/* cc_min */
	t = host("T4", NULL);
	image_runs(triton, &t, &iv);
	assert_int_equal(iv.cc_ok, 1);
}

static void test_driver_target(void **state)
{
	gpuenv_kb_target_t t = host(NULL, NULL);
	gpuenv_kb_driver_cuda_t dc;
	gpuenv_kb_ver_t c = V("12.8");

	(void)state;
	assert_int_equal(gpuenv_kb_driver_runs_cuda(kb, &t, &c, &dc), GPUENV_KB_RUNS_UNKNOWN);
	/* the driver's own word, without a version */
	t.driver_cuda = V("12.8");
	assert_int_equal(gpuenv_kb_driver_runs_cuda(kb, &t, &c, &dc), GPUENV_KB_RUNS_GA);
	t.driver_cuda = V("12.2");
	assert_int_equal(gpuenv_kb_driver_runs_cuda(kb, &t, &c, &dc), GPUENV_KB_RUNS_NO);
	/* a forward-compatibility libcuda */
	t.compat_cuda = V("12.8");
	assert_int_equal(gpuenv_kb_driver_runs_cuda(kb, &t, &c, &dc), GPUENV_KB_RUNS_FORWARD_COMPAT);
	c = V("12.8.1");
	assert_int_equal(gpuenv_kb_driver_runs_cuda(kb, &t, &c, &dc), GPUENV_KB_RUNS_FORWARD_COMPAT);
}

static const gpuenv_kb_torch_variant_t *pick1(const char *gpu, const char *driver,
	const char *current, bool need_cubin, gpuenv_kb_pick_t *pk)
{
	gpuenv_kb_target_t t = host(gpu, driver);
	gpuenv_kb_pick_req_t req;
	gpuenv_arena_t a;

	memset(&req, 0, sizeof(req));
	req.targets = &t;
	req.n_targets = 1;
	req.current = current;
	req.need_cubin = need_cubin;
	req.allow_driver_upgrade = true;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_kb_torch_pick(kb, &req, &a, pk), 0);
	gpuenv_arena_free(&a); /* the pick points into the KB, not the arena */
	return pk->variant;
}

static void test_torch_pick(void **state)
{
	const gpuenv_kb_torch_variant_t *v, *w;
	gpuenv_kb_pick_t pk;

	(void)state;
	/* RTX 5090 on 2.6 cu124: the nearest newer release with sm_120 cubins */
	v = pick1("RTX 5090", "570.133.07", "2.6.0+cu124", true, &pk);
	assert_non_null(v);
	assert_true(str_is(v->torch.str, "2.7") && str_is(v->tag, "cu128"));
	assert_true(str_is(pk.latest->str, "2.7.1") && !pk.driver_upgrade);
	/* nothing runs on 535 there: the pick after an upgrade, and that driver */
	v = pick1("RTX 5090", "535.104.05", "2.6.0+cu124", true, &pk);
	assert_non_null(v);
	assert_true(str_is(v->tag, "cu128") && pk.driver_upgrade);
	assert_true(str_is(pk.driver_upgrade->driver_linux.str, "570.26"));
	/* the release in use first; the newest CUDA the driver runs by itself */
	v = pick1("H100", "580.65.06", "2.7.1+cpu", false, &pk);
	assert_true(str_is(v->torch.str, "2.7") && str_is(v->tag, "cu128"));
	/* a known cubin before a build whose arch list the KB lacks (2.7 cu126,
	 * cu118), even through minor-version compatibility */
	v = pick1("H100", "550.54.15", "2.7.1+cpu", false, &pk);
	assert_true(str_is(v->torch.str, "2.7") && str_is(v->tag, "cu128"));
	assert_int_equal(pk.runs, GPUENV_KB_RUNS_MINOR_COMPAT);
	assert_int_equal(pk.code, GPUENV_KB_CODE_CUBIN);
	/* driver 470 runs CUDA 11 builds only: anything else comes with an upgrade */
	v = pick1("H100", "470.57.02", "2.7.1+cu128", true, &pk);
	assert_true(!v || pk.driver_upgrade || v->cuda.part[0] == 11);
	/* no driver to go by: the least a driver must do */
	v = pick1("RTX 5090", NULL, NULL, false, &pk);
	assert_true(str_is(v->tag, "cu128"));
	/* the same question asked twice gets the same answer */
	w = pick1("RTX 5090", NULL, NULL, false, &pk);
	assert_ptr_equal(v, w);
	/* a build the driver runs by itself before minor-version compatibility,
	 * whatever the release: T4 on 525 (CUDA 12.0) gets a CUDA 11.8 build */
	v = pick1("T4", "525.85.12", NULL, false, &pk);
	assert_true(str_is(v->tag, "cu118"));
	assert_int_equal(pk.runs, GPUENV_KB_RUNS_GA);
	/* a fresh pick takes stable builds only */
	static const char *const gpus[] = { "RTX 5090", "H200", "A100", "T4", "L4", "V100" };
	static const char *const drivers[] = { "580.159.04", "570.133.07", "560.35.03", "535.104.05", "525.85.12" };
	for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++)
		for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
			v = pick1(gpus[g], drivers[d], NULL, false, &pk);
			assert_true(!v || str_is(v->channel, "stable"));
		}
}

static void test_torch_lookup(void **state)
{
	const gpuenv_kb_torch_variant_t *v;

	(void)state;
	assert_int_equal(gpuenv_kb_torch_lookup(kb, gpuenv_str("2.7.1+cu128"), &v), 0);
	assert_true(str_is(v->tag, "cu128"));
	assert_int_equal(gpuenv_kb_torch_lookup(kb, gpuenv_str("2.11.0"), &v), 0);
	assert_true(str_is(v->tag, "cu130")); /* the PyPI build */
	/* the KB does not record 2.5's PyPI build: said so, not "no such build" */
	assert_int_equal(gpuenv_kb_torch_lookup(kb, gpuenv_str("2.5.1"), &v), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.msg, "PyPI"));
	assert_non_null(strstr(ctx.err.hint, "2.5.1+cu124"));
	assert_int_equal(gpuenv_kb_torch_lookup(kb, gpuenv_str("2.7.0+cu999"), &v), GPUENV_ENOTFOUND);
	assert_non_null(strstr(ctx.err.msg, "no such build"));
	assert_int_equal(gpuenv_kb_torch_lookup(kb, gpuenv_str("abc"), &v), GPUENV_EVERSION);
}

static void test_ask_torch(void **state)
{
	gpuenv_kb_target_t t = host("RTX 5090", "535.104.05");
	gpuenv_kb_torch_question_t q = { &t, NULL };
	gpuenv_kb_torch_answer_t a;
	gpuenv_kb_gpu_match_t m;
	gpuenv_arena_t ar;
	json_t *j;

	(void)state;
	gpuenv_arena_init(&ar, &ctx, 0);
	assert_int_equal(gpuenv_kb_ask_torch(kb, &q, &ar, &a), 0);
	assert_true(a.n >= 30 && a.yes == 0 && a.judged);
	assert_true(a.pick.variant && a.pick.driver_upgrade);
	assert_int_equal(gpuenv_kb_gpu_lookup(kb, "RTX 5090", &m), 0);
	j = gpuenv_kb_torch_json(kb, &q, &a, &m);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "builds")), a.n);
	assert_int_equal(json_array_size(json_object_get(j, "runs")), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "pick"), "tag")),
		"cu128");
	json_decref(j);
	q.version = "2.5.1+cu124";
	assert_int_equal(gpuenv_kb_ask_torch(kb, &q, &ar, &a), 0);
	assert_int_equal(a.n, 1);
	q.version = "1.13";
	assert_int_equal(gpuenv_kb_ask_torch(kb, &q, &ar, &a), GPUENV_ENOTFOUND);
	q.version = "x";
	assert_int_equal(gpuenv_kb_ask_torch(kb, &q, &ar, &a), GPUENV_EVERSION);
	gpuenv_arena_free(&ar);
}

/* ---- broken data ------------------------------------------------------------------------- */

static int load_one(const char *name, const char *text)
{
	gpuenv_kb_source_t s = { name, text, strlen(text), "test.toml" };
	gpuenv_kb_t *k = NULL;
	int r = gpuenv_kb_load_sources(&ctx, &s, 1, GPUENV_KB_ALL, &k);
	if (!r) {
		assert_non_null(k);
		gpuenv_kb_free(k);
	} else
		assert_null(k);
	return r;
}

static void test_broken_data(void **state)
{
	(void)state;
	/* a valid small replacement loads, the other files stay embedded */
	assert_int_equal(load_one("ngc.toml", "[[container]]\nimage = \"nvcr.io/nvidia/x\"\n"
		"tag = \"25.01-py3\"\nrelease = \"25.01\"\ncuda = \"12.8\"\ncuda_full = \"12.8.0\"\n"
		"source = \"a test\"\n"), 0);
	/* a row without a source */
	assert_int_equal(load_one("ngc.toml", "[[container]]\nimage = \"x\"\ntag = \"t\"\n"
		"release = \"25.01\"\ncuda = \"12.8\"\ncuda_full = \"12.8.0\"\n"), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "without a source"));
	assert_int_equal(ctx.err.line, 1);
	assert_string_equal(ctx.err.file, "test.toml");
	assert_int_equal(load_one("ngc.toml", "[[container]]\nimage = \"x\"\ntag = \"t\"\n"
		"release = \"25.01\"\ncuda = \"12.8\"\ncuda_full = \"12.8.0\"\nsource = \"  \"\n"),
		GPUENV_EFORMAT);
	/* a missing required key */
	assert_int_equal(load_one("ngc.toml", "\n[[container]]\nimage = \"x\"\nsource = \"s\"\n"),
		GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "without 'tag'"));
	assert_int_equal(ctx.err.line, 2);
	/* an unknown key, an unknown table, a top-level key */
	assert_int_equal(load_one("gpus.toml", "[[gpu]]\nname = \"X\"\ncc = \"9.0\"\n"
		"segment = \"datacenter\"\nsource = \"s\"\ncolour = \"green\"\n"), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "unknown key 'colour'"));
	assert_int_equal(ctx.err.line, 6);
	assert_int_equal(load_one("gpus.toml", "[[gpus]]\nname = \"X\"\n"), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "unknown table 'gpus'"));
	assert_int_equal(load_one("gpus.toml", "gpu = 1\n"), GPUENV_EFORMAT);
	assert_int_equal(load_one("gpus.toml", "[gpu]\nname = \"X\"\n"), GPUENV_EFORMAT);
	/* wrong types and formats */
	assert_int_equal(load_one("gpus.toml", "[[gpu]]\nname = 5\ncc = \"9.0\"\n"
		"segment = \"datacenter\"\nsource = \"s\"\n"), GPUENV_ETYPE);
	assert_int_equal(load_one("gpus.toml", "[[gpu]]\nname = \"X\"\ncc = \"9.0.1\"\n"
		"segment = \"datacenter\"\nsource = \"s\"\n"), GPUENV_EFORMAT);
	assert_int_equal(load_one("gpus.toml", "[[arch]]\ncc = \"9.0\"\nsm = \"gfx90\"\n"
		"architecture = \"H\"\nsource = \"s\"\n"), GPUENV_EFORMAT);
	assert_int_equal(load_one("cuda.toml", "[[toolkit]]\ncuda = \"12.x\"\nupdate = 0\n"
		"label = \"l\"\ndriver_linux = \"1\"\nsource = \"s\"\n"), GPUENV_EFORMAT);
	assert_int_equal(load_one("cuda.toml", "[[toolkit]]\ncuda = \"12.8\"\nupdate = -1\n"
		"label = \"l\"\ndriver_linux = \"1\"\nsource = \"s\"\n"), GPUENV_EFORMAT);
	assert_int_equal(load_one("cuda.toml", "[[arch_list]]\ncuda_min = \"12.8\"\n"
		"cuda_max = \"12.8\"\nsm = [\"sm_90\", 7]\nsource = \"s\"\n"), GPUENV_ETYPE);
	assert_int_equal(load_one("cuda.toml", "[[toolkit]]\ncuda = \"12.8\"\nupdate = 0\n"
		"label = \"l\"\ndriver_linux = \"1\"\nsource = \"s\"\nconfidence = \"high\"\n"),
		GPUENV_EFORMAT);
	/* a PCI row naming a GPU that does not exist (gpus.toml replaced whole) */
	assert_int_equal(load_one("gpus.toml", "[[pci]]\ndevice_id = \"0x2335\"\nname = \"n\"\n"
		"gpu = \"NVIDIA H300\"\nsource = \"s\"\n"), GPUENV_EFORMAT);
	assert_int_equal(load_one("gpus.toml", "[[pci]]\ndevice_id = \"2335\"\nname = \"n\"\n"
		"gpu = \"NVIDIA H300\"\nsource = \"s\"\n"), GPUENV_EFORMAT);
	/* a signature without patterns, and two with one id */
	assert_int_equal(load_one("diagnose.toml", "[[signature]]\nid = \"a\"\ntitle = \"t\"\n"
		"cause = \"c\"\nfix = \"f\"\nsource = \"s\"\n"), GPUENV_EFORMAT);
	assert_int_equal(load_one("diagnose.toml", "[[signature]]\nid = \"a\"\ntitle = \"t\"\n"
		"literal = [\"x\"]\ncause = \"c\"\nfix = \"f\"\nsource = \"s\"\n"
		"[[signature]]\nid = \"a\"\ntitle = \"t\"\nliteral = [\"y\"]\ncause = \"c\"\n"
		"fix = \"f\"\nsource = \"s\"\n"), GPUENV_EDUPLICATE);
	/* not TOML at all, and not a KB file */
	assert_true(load_one("cuda.toml", "[[toolkit]\n") < 0);
	assert_int_equal(load_one("extra.toml", ""), GPUENV_ENOTFOUND);
	/* an empty file is an empty table set */
	assert_int_equal(load_one("wheels.toml", ""), 0);
}

static void test_load_mask(void **state)
{
	gpuenv_kb_t *k;
	const gpuenv_kb_toolkit_t *ga;

	(void)state;
	assert_int_equal(gpuenv_kb_load_files(&ctx, NULL, GPUENV_KB_FILE(GPUENV_KB_CUDA), &k), 0);
	assert_true(k->n_toolkit > 50);
	assert_int_equal(k->n_gpu, 0);
	assert_int_equal(k->n_signature, 0);
	assert_null(k->files[GPUENV_KB_GPUS].origin);
	assert_string_equal(k->files[GPUENV_KB_GPUS].name, "gpus.toml");
	assert_int_equal(gpuenv_kb_cuda_min_driver(k, gpuenv_str("12.8"), &ga), 0);
	/* strings point into the embedded text where they can */
	gpuenv_kb_source_t e = gpuenv_kb_embedded(GPUENV_KB_CUDA);
	assert_true(ga->label.ptr > (const char *)e.data && ga->label.ptr < (const char *)e.data + e.len);
	gpuenv_kb_free(k);
}

static void test_kb_dir(void **state)
{
	char dir[] = "/tmp/gpuenv-kbdir-XXXXXX", path[256];
	gpuenv_kb_t *k = NULL;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cuda.toml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[[toolkit]]\ncuda = \"12.8\"\nupdate = 0\nlabel = \"CUDA 12.8 GA\"\n"
	      "driver_linux = \"570.26\"\nsource = \"a test table\"\n", f);
	fclose(f);
	assert_int_equal(gpuenv_kb_load(&ctx, dir, &k), 0);
	assert_int_equal(k->n_toolkit, 1);
	assert_string_equal(k->files[GPUENV_KB_CUDA].origin, path);
	assert_string_equal(k->files[GPUENV_KB_GPUS].origin, "embedded");
	assert_true(k->n_gpu > 50);
	gpuenv_kb_free(k);
	/* a broken file there is reported with its path */
	f = fopen(path, "w");
	fputs("[[toolkit]]\ncuda = \"12.8\"\n", f);
	fclose(f);
	assert_true(gpuenv_kb_load(&ctx, dir, &k) < 0);
	assert_null(k);
	assert_string_equal(ctx.err.file, path);
	unlink(path);
	rmdir(dir);
	assert_int_equal(gpuenv_kb_load(&ctx, "/nonexistent/kb", &k), -ENOENT);
	assert_int_equal(gpuenv_kb_load(&ctx, "/dev/null", &k), -ENOTDIR);
}

/* allocation failures at every step of a load leave nothing behind */
static void test_alloc_failures(void **state)
{
	gpuenv_ctx_t c;
	testutil_alloc_t b = { .fail_at = TESTUTIL_NEVER };
	gpuenv_kb_t *k;
	long total, step, fails = 0;

	(void)state;
	gpuenv_ctx_init(&c);
	c.mem = testutil_allocator(&b);
	assert_int_equal(gpuenv_kb_load(&c, NULL, &k), 0);
	gpuenv_kb_free(k);
	total = b.calls;
	/* every early failure, then a spread over the rest */
	step = total > 400 ? total / 200 : 1;
	for (long n = 0; n < total; n += n < 200 ? 1 : step) {
		testutil_alloc_reset(&b, n, false);
		k = NULL;
		int r = gpuenv_kb_load(&c, NULL, &k);
		/* a failed line table only costs copies: the load still works */
		if (r == 0) {
			assert_non_null(k);
			gpuenv_kb_free(k);
			continue;
		}
		assert_int_equal(r, -ENOMEM);
		assert_null(k);
		fails++;
	}
	assert_true(fails > 0);
}

/* the pick and kb torch's survey with their arena's allocations failing:
 * -ENOMEM recorded in the KB's context, never a wrong answer */
static void test_pick_alloc_failures(void **state)
{
	gpuenv_ctx_t c;
	testutil_alloc_t b = { .fail_at = TESTUTIL_NEVER };
	gpuenv_kb_target_t t = host("RTX 5090", "535.104.05");
	gpuenv_kb_pick_req_t req = { &t, 1, "2.6.0+cu124", false, false, NULL, true };
	gpuenv_kb_torch_question_t q = { &t, NULL };
	gpuenv_kb_torch_answer_t ans;
	gpuenv_kb_pick_t pk, want;
	gpuenv_arena_t a;
	long total, fails = 0;

	(void)state;
	gpuenv_ctx_init(&c);
	c.mem = testutil_allocator(&b);
	gpuenv_arena_init(&a, &c, 0);
	assert_int_equal(gpuenv_kb_torch_pick(kb, &req, &a, &want), 0);
	assert_int_equal(gpuenv_kb_ask_torch(kb, &q, &a, &ans), 0);
	gpuenv_arena_free(&a);
	total = b.calls;
	assert_true(total > 0);
	for (long n = 0; n < total; n++) {
		int r1, r2;
		testutil_alloc_reset(&b, n, false);
		gpuenv_error_clear(&ctx);
		gpuenv_arena_init(&a, &c, 0);
		r1 = gpuenv_kb_torch_pick(kb, &req, &a, &pk);
		r2 = r1 ? 0 : gpuenv_kb_ask_torch(kb, &q, &a, &ans);
		if (r1 || r2) {
			assert_int_equal(r1 ? r1 : r2, -ENOMEM);
			assert_int_equal(ctx.err.code, -ENOMEM);
			assert_non_null(strstr(ctx.err.msg, "out of memory"));
			fails++;
		} else
			assert_ptr_equal(pk.variant, want.variant);
		gpuenv_arena_free(&a);
	}
	assert_true(fails > 0);
}

/* how long a load takes (the budget: well under a millisecond, release build) */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void test_load_time(void **state)
{
	double t[21];

	(void)state;
	for (int i = 0; i < 21; i++) {
		struct timespec a, b;
		gpuenv_kb_t *k;
		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(gpuenv_kb_load(&ctx, NULL, &k), 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		gpuenv_kb_free(k);
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	qsort(t, 21, sizeof(t[0]), cmp_d);
	print_message("kb load: median %.3f ms (this build; min %.3f)\n", t[10], t[0]);
	/* a loose bound that holds under the sanitizers too */
	assert_true(t[10] < 200.0);
}

/* ---- diagnose ---------------------------------------------------------------------------- */

static void test_diagnose_scan(void **state)
{
	gpuenv_diag_t *d;
	gpuenv_diag_result_t res;
	gpuenv_diag_facts_t f;
	gpuenv_arena_t a;
	const char log[] =
		"Traceback (most recent call last):\r\n"
		"ImportError: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file\n"
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
		"\n"
		"RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB";

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_diag_new(&ctx, kb, &d), 0);
	assert_int_equal(gpuenv_diag_scan(d, log, sizeof(log) - 1, NULL, &a, &res), 0);
	assert_int_equal(res.lines, 6);
	assert_int_equal(res.n, 3);
	assert_true(str_is(res.hits[0].sig->id, "cudnn-lib-missing"));
	assert_int_equal(res.hits[0].line, 2);
	assert_true(str_is(res.hits[0].match, "libcudnn_cnn_infer.so.8: cannot open shared object file"));
	assert_non_null(strstr(res.hits[0].cause, "cuDNN 8 (libcudnn_cnn_infer.so.8)"));
	assert_false(res.hits[0].concrete);
	assert_true(str_is(res.hits[1].sig->id, "cuda-oom"));
	assert_int_equal(res.hits[1].count, 2);
	assert_int_equal(res.hits[1].n_lines, 2);
	assert_int_equal(res.hits[1].lines[1], 6);
	assert_true(str_is(res.hits[2].sig->id, "no-kernel-image"));
	assert_int_equal(res.hits[2].line, 5);

	/* with facts the fix is concrete, as the issue words it */
	memset(&f, 0, sizeof(f));
	f.cc_major = 12;
	f.cc_minor = 0;
	f.torch = "2.5.1+cu124";
	f.driver = "570.133.07";
	assert_int_equal(gpuenv_diag_scan(d, log, sizeof(log) - 1, &f, &a, &res), 0);
	assert_true(res.hits[2].concrete);
	assert_non_null(strstr(res.hits[2].fix,
		"your GPU is sm_120; your torch 2.5.1+cu124 carries sm_50..sm_90 and no PTX: "
		"install a cu128 build"));
	/* facts read from the probe cover torch's real code */
	const char *cub[] = { "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90" };
	f.torch_code = true;
	f.torch_cubins = cub;
	f.n_torch_cubins = 7;
	assert_int_equal(gpuenv_diag_scan(d, log, sizeof(log) - 1, &f, &a, &res), 0);
	assert_non_null(strstr(res.hits[2].fix, "carries sm_50..sm_90 and no PTX"));

	/* nothing known: no hits; empty and binary input are fine */
	assert_int_equal(gpuenv_diag_scan(d, "all good\n", 9, NULL, &a, &res), 0);
	assert_int_equal(res.n, 0);
	assert_int_equal(gpuenv_diag_scan(d, "", 0, NULL, &a, &res), 0);
	assert_int_equal(res.lines, 0);
	assert_int_equal(gpuenv_diag_scan(d, "\0\0CUDA out of memory\0", 22, NULL, &a, &res), 0);
	assert_int_equal(res.n, 1);
	gpuenv_diag_free(d);
	gpuenv_arena_free(&a);
}

static void test_diagnose_templates(void **state)
{
	gpuenv_diag_t *d;
	gpuenv_arena_t a;
	gpuenv_diag_facts_t f;
	const char *miss, *s;
	gpuenv_str_t caps[3] = { GPUENV_STR_LIT("x"), GPUENV_STR_LIT("11040"), GPUENV_STR_LIT("sm_120") };

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_diag_new(&ctx, kb, &d), 0);
#define EXP(t, f) gpuenv_diag_expand(d, t, strlen(t), caps, 3, f, &a, &miss)
	s = EXP("CUDA {1|cuda_int}, first {2|first_cuda} ({2|first_driver})", NULL);
	assert_string_equal(s, "CUDA 11.4, first 12.8 (570.26)");
	s = EXP("{2|torch_for_sm}", NULL);
	assert_non_null(s);
	assert_non_null(strstr(s, "a cu128 build"));
	/* a missing fact makes the template fail and names it */
	assert_null(EXP("your GPU is {gpu_sm}", NULL));
	assert_string_equal(miss, "gpu_sm");
	assert_null(EXP("{7}", NULL));
	assert_null(EXP("{1|no_such_filter}", NULL));
	assert_string_equal(EXP("no {placeholders here", NULL), "no {placeholders here");
	memset(&f, 0, sizeof(f));
	f.cc_major = 9;
	f.cc_minor = 0;
	f.gpu = "NVIDIA H200";
	f.gpu_mem = 150754820096ULL;
	f.driver = "535.104.05";
	assert_string_equal(EXP("{gpu} {gpu_sm} {gpu_arch} {gpu_mem}", &f),
		"NVIDIA H200 sm_90 Hopper 140.4 GiB");
	assert_string_equal(EXP("{driver_cuda}", &f), "12.2");
	s = EXP("{torch_pick}", &f);
	assert_non_null(s);
	/* the newest build that runs on an H200 with driver 535: a CUDA 12 one */
	assert_null(strstr(s, "cu130"));
	assert_string_equal(EXP("{cudnn_for_gpu}", &f), "8.9.6 (for CUDA 12.0, 12.1, 12.2)");
	f.cc_major = 12;
	assert_string_equal(EXP("{cudnn_for_gpu}", &f), "9.10.2 (for CUDA 12.8, 12.9)");
	f.cc_major = 9;
	f.torch = "2.11.0+cu130";
	assert_string_equal(EXP("{torch_cuda|min_driver}", &f), "580.65.06");
#undef EXP
	gpuenv_diag_free(d);
	gpuenv_arena_free(&a);
}

static void test_diagnose_bad_signatures(void **state)
{
	gpuenv_kb_source_t s = { "diagnose.toml",
		"[[signature]]\nid = \"bad\"\ntitle = \"t\"\nregex = [\"(unclosed\"]\n"
		"cause = \"c\"\nfix = \"f\"\nsource = \"s\"\n",
		0, "bad.toml" };
	gpuenv_kb_t *k;
	gpuenv_diag_t *d;

	(void)state;
	s.len = strlen(s.data);
	assert_int_equal(gpuenv_kb_load_sources(&ctx, &s, 1, GPUENV_KB_ALL, &k), 0);
	assert_int_equal(gpuenv_diag_new(&ctx, k, &d), GPUENV_ESYNTAX);
	assert_null(d);
	assert_string_equal(ctx.err.file, "bad.toml");
	assert_int_equal(ctx.err.line, 1);
	gpuenv_kb_free(k);
}

static void test_facts_json(void **state)
{
	gpuenv_arena_t a;
	gpuenv_diag_facts_t f;
	const char *j =
		"{\"schema\": \"gpuenv.facts/1\", \"driver\": {\"version\": \"580.159.04\","
		" \"cuda_version\": \"13.0\", \"kernel_module\": \"580.159.04\"},"
		" \"cuda_visible_devices\": {\"set\": true, \"value\": \"1\"},"
		" \"gpus\": [{\"name\": \"NVIDIA H200\", \"compute_capability\": \"9.0\","
		"   \"memory_total\": 150754820096, \"visible\": true}],"
		" \"libraries\": [{\"family\": \"cudnn\", \"version\": {\"version\": \"9.19.0\"}}],"
		" \"environments\": [{\"found_by\": \"PATH\", \"frameworks\": [{\"kind\": \"torch\","
		"   \"dist\": \"torch\", \"version\": \"2.0.0\"}]},"
		"  {\"found_by\": \"VIRTUAL_ENV\", \"frameworks\": [{\"kind\": \"torch\", \"dist\": \"torch\","
		"   \"version\": \"2.11.0+cu130\", \"cuda\": \"13.0\", \"binaries\": ["
		"   {\"path\": \"/v/torch/lib/libtorch_cuda.so\", \"cuda_code\": {\"cubins\": [\"sm_90\", \"sm_100\"],"
		"    \"ptx\": []}}]}]}]}";

	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_diag_facts_parse(&ctx, j, strlen(j), "f.json", &a, &f), 0);
	assert_string_equal(f.gpu, "NVIDIA H200");
	assert_int_equal(f.cc_major, 9);
	assert_int_equal(f.cc_minor, 0);
	assert_int_equal(f.gpu_count, 1);
	assert_string_equal(f.driver, "580.159.04");
	assert_string_equal(f.driver_cuda, "13.0");
	assert_string_equal(f.cuda_visible_devices, "1");
	assert_string_equal(f.torch, "2.11.0+cu130");
	assert_true(f.torch_code);
	assert_int_equal(f.n_torch_cubins, 2);
	assert_string_equal(f.cudnn, "9.19.0");
	assert_int_equal(gpuenv_diag_facts_parse(&ctx, "{}", 2, "f.json", &a, &f), GPUENV_EFORMAT);
	/* another major: the same answer as doctor and preflight give */
	assert_int_equal(gpuenv_diag_facts_parse(&ctx, "{\"schema\": \"gpuenv.facts/2\"}", 28,
		"f.json", &a, &f), GPUENV_EUNSUPPORTED);
	assert_int_equal(gpuenv_diag_facts_parse(&ctx, "{", 1, "f.json", &a, &f), GPUENV_ESYNTAX);
	assert_int_equal(gpuenv_diag_facts_parse(&ctx, "[]", 2, "f.json", &a, &f), GPUENV_EFORMAT);
	gpuenv_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_has_a_source),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_min_driver),
		cmocka_unit_test(test_driver_max_cuda),
		cmocka_unit_test(test_gpu_lookup),
		cmocka_unit_test(test_coverage_rule),
		cmocka_unit_test(test_torch_rtx5090_driver535),
		cmocka_unit_test(test_torch_other_machines),
		cmocka_unit_test(test_images),
		cmocka_unit_test(test_cuda_parse),
		cmocka_unit_test(test_cuda_of_tag),
		cmocka_unit_test(test_image_check),
		cmocka_unit_test(test_driver_target),
		cmocka_unit_test(test_torch_pick),
		cmocka_unit_test(test_torch_lookup),
		cmocka_unit_test(test_ask_torch),
		cmocka_unit_test(test_broken_data),
		cmocka_unit_test(test_load_mask),
		cmocka_unit_test(test_kb_dir),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_pick_alloc_failures),
		cmocka_unit_test(test_load_time),
		cmocka_unit_test(test_diagnose_scan),
		cmocka_unit_test(test_diagnose_templates),
		cmocka_unit_test(test_diagnose_bad_signatures),
		cmocka_unit_test(test_facts_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
