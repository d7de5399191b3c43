/* Unit tests for lib/check/fit.c: does a machine run a target (the judgement
 * behind `sync --target auto`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gpuenv/fit.h"
#include "gpuenv/kb.h"
#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb;
static gpuenv_arena_t arena; /* the reasons of every judgement, freed at the end */

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	return gpuenv_kb_load(&ctx, NULL, &kb);
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&arena);
	return 0;
}

static const gpuenv_target_gpu_t H200 = { "NVIDIA H200", 9, 0, -1, true };
static const gpuenv_target_gpu_t A100 = { "NVIDIA A100-SXM4-80GB", 8, 0, -1, true };
static const gpuenv_target_gpu_t H100 = { "NVIDIA H100 80GB HBM3", 9, 0, -1, true };
static const gpuenv_target_gpu_t T4_HIDDEN = { "Tesla T4", 7, 5, -1, false };

static gpuenv_target_t machine(const gpuenv_target_gpu_t *gpus, size_t n, const char *driver, const char *cuda)
{
	gpuenv_target_t t;
	memset(&t, 0, sizeof(t));
	t.name = "auto";
	t.origin = "probe";
	t.gpus = gpus;
	t.ngpus = n;
	t.driver = driver;
	t.driver_cuda = cuda;
	t.machine = "x86_64";
	t.libc = "glibc";
	t.libc_version = "2.36";
	return t;
}

static gpuenv_target_t declared(const gpuenv_target_gpu_t *g, const char *driver, const char *cuda)
{
	gpuenv_target_t t = machine(g, g ? 1 : 0, driver, cuda);
	t.origin = "declared";
	t.libc_version = "2.28";
	return t;
}

static gpuenv_fit_t judge(const gpuenv_target_t *m, const gpuenv_target_t *w, const char *cuda_build)
{
	gpuenv_fit_t f;
	assert_int_equal(gpuenv_target_fit(&ctx, &arena, kb, m, w, cuda_build, &f), 0);
	for (size_t i = 0; i < f.nreasons; i++)
		assert_non_null(f.reasons[i]);
	return f;
}

static void test_gpus(void **state)
{
	(void)state;
	gpuenv_target_t h200 = machine(&H200, 1, "580.95.05", "13.0");
	gpuenv_target_t want_h200 = declared(&(gpuenv_target_gpu_t){ "H200", 9, 0, -1, true }, "580.159.04", "13.0");
	gpuenv_target_t want_h100 = declared(&H100, "580.159.04", "13.0");
	gpuenv_target_t want_a100 = declared(&A100, "535.104.05", "12.2");
	gpuenv_target_t want_cpu = declared(NULL, NULL, NULL);
	gpuenv_fit_t f;

	f = judge(&h200, &want_h200, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_YES);
	assert_int_equal(f.score, 3);
	f = judge(&h200, &want_h100, NULL); /* the same sm 9.0, another GPU */
	assert_int_equal(f.verdict, GPUENV_KB_YES);
	assert_int_equal(f.score, 2);
	f = judge(&h200, &want_a100, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_int_equal(f.score, 0);
	f = judge(&h200, &want_cpu, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_YES);
	assert_int_equal(f.score, 1);

	/* no GPU CUDA sees: a GPU target does not fit, a CPU one does */
	gpuenv_target_t none = machine(&T4_HIDDEN, 1, NULL, NULL);
	gpuenv_target_t want_t4 = declared(&(gpuenv_target_gpu_t){ "T4", 7, 5, -1, true }, "525.85.12", "12.0");
	f = judge(&none, &want_t4, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_non_null(strstr(f.reasons[0], "no NVIDIA GPU"));
	assert_int_equal(judge(&none, &want_cpu, NULL).score, 1);

	/* a mixed machine: every visible GPU must be the target's */
	gpuenv_target_gpu_t mixed[2] = { H200, A100 };
	gpuenv_target_t mx = machine(mixed, 2, "580.95.05", "13.0");
	f = judge(&mx, &want_h200, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_non_null(strstr(f.reasons[0], "GPU 1"));
}

static void test_driver_and_platform(void **state)
{
	(void)state;
	gpuenv_target_t a100_old = machine(&A100, 1, "535.104.05", "12.2");
	gpuenv_target_t want_a100 = declared(&A100, "570.86.10", "12.8");
	gpuenv_fit_t f;

	/* without a lock: the machine's driver must run the target's CUDA */
	f = judge(&a100_old, &want_a100, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_non_null(strstr(f.reasons[0], "CUDA 12.8"));
	/* with the lock's build: CUDA 12.6 runs on R535 through minor-version
	 * compatibility, CUDA 13.0 does not */
	assert_int_equal(judge(&a100_old, &want_a100, "12.6").verdict, GPUENV_KB_YES);
	f = judge(&a100_old, &want_a100, "13.0");
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_non_null(strstr(f.reasons[0], "CUDA 13.0"));
	/* a target declaring only its driver (no lock): a driver at least as
	 * new fits; an older one fits when it runs the same newest CUDA
	 * release (the KB's table), else not */
	gpuenv_target_t want_drv = declared(&A100, "570.86.10", NULL);
	gpuenv_target_t a100_new = machine(&A100, 1, "580.95.05", NULL);
	f = judge(&a100_new, &want_drv, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_YES);
	assert_non_null(strstr(f.reasons[f.nreasons - 1], "at least the target's"));
	gpuenv_target_t a100_same = machine(&A100, 1, "570.86.15", NULL);
	want_drv.driver = "570.124.06";
	f = judge(&a100_same, &want_drv, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_YES);
	assert_non_null(strstr(f.reasons[f.nreasons - 1], "runs CUDA 12.8"));
	gpuenv_target_t a100_r535 = machine(&A100, 1, "535.104.05", NULL);
	f = judge(&a100_r535, &want_drv, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_non_null(strstr(f.reasons[0], "runs CUDA 12.8; this machine's 535.104.05 runs CUDA 12.2"));
	/* no driver loaded */
	gpuenv_target_t nodrv = machine(&A100, 1, NULL, NULL);
	assert_int_equal(judge(&nodrv, &want_a100, NULL).verdict, GPUENV_KB_NO);

	/* platform: another CPU, an older C library */
	gpuenv_target_t want_arm = declared(NULL, NULL, NULL);
	want_arm.machine = "aarch64";
	f = judge(&a100_old, &want_arm, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_non_null(strstr(f.reasons[0], "aarch64"));
	gpuenv_target_t want_new = declared(NULL, NULL, NULL);
	want_new.libc_version = "2.39";
	f = judge(&a100_old, &want_new, NULL);
	assert_int_equal(f.verdict, GPUENV_KB_NO);
	assert_non_null(strstr(f.reasons[0], "2.39"));
}

static void test_backend_cuda(void **state)
{
	char b[16];
	(void)state;
	assert_string_equal(gpuenv_fit_backend_cuda("cu126", b, sizeof(b)), "12.6");
	assert_string_equal(gpuenv_fit_backend_cuda("cu130", b, sizeof(b)), "13.0");
	assert_string_equal(gpuenv_fit_backend_cuda("cu118", b, sizeof(b)), "11.8");
	assert_string_equal(gpuenv_fit_backend_cuda("cu92", b, sizeof(b)), "9.2");
	assert_null(gpuenv_fit_backend_cuda("cpu", b, sizeof(b)));
	assert_null(gpuenv_fit_backend_cuda("rocm6.2", b, sizeof(b)));
	assert_null(gpuenv_fit_backend_cuda("cu1", b, sizeof(b)));
	assert_null(gpuenv_fit_backend_cuda("cu12x", b, sizeof(b)));
	assert_null(gpuenv_fit_backend_cuda(NULL, b, sizeof(b)));
	assert_null(gpuenv_fit_backend_cuda("cu126", b, 3));
}

static void test_describe(void **state)
{
	gpuenv_arena_t a;
	(void)state;
	gpuenv_arena_init(&a, &ctx, 0);
	gpuenv_target_t h200 = machine(&H200, 1, "580.95.05", "13.0");
	assert_string_equal(gpuenv_target_describe(&a, &h200), "NVIDIA H200 (sm 9.0), driver 580.95.05, x86_64");
	gpuenv_target_t none = machine(&T4_HIDDEN, 1, NULL, NULL);
	assert_string_equal(gpuenv_target_describe(&a, &none), "no NVIDIA GPU, x86_64");
	gpuenv_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_driver_and_platform),
		cmocka_unit_test(test_backend_cuda),
		cmocka_unit_test(test_describe),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
