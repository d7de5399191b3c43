/* Unit tests for lib/check (doctor, preflight): the small parsers and the
 * coverage rule the verdicts rest on, the library API over in-memory facts,
 * and every allocation failure on the way through the H200 snapshot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/check/doctor_int.h"
#include "gpuenv/doctor.h"
#include "gpuenv/kb.h"
#include "gpuenv/pylock.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb;

static gpuenv_arena_t lock_arena;
/* A lock for the H200 (gpuenv's [tool.gpuenv] fields): torch 2.11 cu130, a
 * CUDA 13 cuDNN wheel, and numpy for aarch64 only. */
#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"
static const char lock_text[] =
	"lock-version = \"1.0\"\ncreated-by = \"gpuenv\"\nrequires-python = \">=3.10\"\n\n"
	"[[packages]]\nname = \"numpy\"\nversion = \"2.3.5\"\nwheels = [{ name = "
	"\"numpy-2.3.5-cp312-cp312-manylinux_2_28_aarch64.whl\", url = \"https://x/n.whl\", "
	"hashes = { sha256 = \"" Z64 "\" } }]\n\n"
	"[[packages]]\nname = \"nvidia-cudnn-cu13\"\nversion = \"9.19.0.56\"\nwheels = [{ name = "
	"\"nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl\", url = \"https://x/c.whl\", "
	"hashes = { sha256 = \"" Z64 "\" } }]\n\n"
	"[[packages]]\nname = \"torch\"\nversion = \"2.11.0+cu130\"\nwheels = [{ name = "
	"\"torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl\", url = \"https://x/t.whl\", "
	"hashes = { sha256 = \"" Z64 "\" } }]\n\n"
	"[tool.gpuenv]\ntarget = \"h200\"\ngpu = \"NVIDIA H200\"\ncompute-capability = \"9.0\"\n"
	"driver = \"580.159.04\"\npython = \"3.12\"\nplatform = \"manylinux_2_28_x86_64\"\n"
	"backend = \"cu130\"\n";
static gpuenv_lock_t lock;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&lock_arena, &ctx, 0);
	if (gpuenv_pylock_parse(&ctx, &lock_arena, "pylock.h200.toml", gpuenv_str(lock_text), &lock) != 0)
		return -1;
	return gpuenv_kb_load_files(&ctx, NULL, GPUENV_DOCTOR_KB_FILES, &kb);
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_kb_free(kb);
	kb = NULL;
	gpuenv_arena_free(&lock_arena);
	return 0;
}

static void test_versions(void **state)
{
	bool ok;

	(void)state;
	assert_true(dk_vcmp("580.159.04", "580.65.06", &ok) > 0 && ok);
	assert_true(dk_vcmp("525", "525.60.13", &ok) < 0 && ok);
	assert_true(dk_vcmp("12.0", "12", &ok) == 0 && ok);
	assert_true(dk_vcmp("9.19.0.56", "9.19.0", &ok) > 0 && ok);
	dk_vcmp("x", "1", &ok);
	assert_false(ok);
	dk_vcmp(NULL, "1", &ok);
	assert_false(ok);
	assert_int_equal(dk_cuda_parse("12.8"), 12080);
	assert_int_equal(dk_cuda_parse("13"), 13000);
	assert_int_equal(dk_cuda_parse("12.8.1"), 12080);
	assert_int_equal(dk_cuda_parse("12.10"), 0);
	assert_int_equal(dk_cuda_parse("100.1"), 0);
	assert_int_equal(dk_cuda_parse("12.8x"), 0);
	assert_int_equal(dk_cuda_parse(""), 0);
	assert_int_equal(dk_cuda_parse(NULL), 0);
	assert_int_equal(dk_cuda_parse("99999999999"), 0);
	assert_int_equal(dk_vmajor("470.82.01"), 470);
	assert_int_equal(dk_vmajor("abc"), -1);
	/* compute capabilities and code targets: gpuenv_kb_sm_parse (test-kb) */
}

/* NULL-terminated list -> dk_cover_strs (the KB's rule, gpuenv_kb_code_covers) */
static size_t len_of(const char *const *l)
{
	size_t n = 0;

	while (l[n])
		n++;
	return n;
}
static void dk_cover_list(const char *const *c, const char *const *p, int maj, int min, bool ok,
	dk_cov_t *out)
{
	gpuenv_facts_strs_t cs = { c, len_of(c), GPUENV_FACT_SET }, ps = { p, len_of(p), GPUENV_FACT_SET };

	dk_cover_strs(&cs, &ps, maj, min, ok, out);
}

static void test_cover(void **state)
{
	static const char *const cu12[] = { "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86",
		"sm_90", NULL };
	static const char *const none[] = { NULL };
	static const char *const a90[] = { "sm_90a", NULL };
	static const char *const f100[] = { "sm_100f", NULL };
	static const char *const ptx80[] = { "compute_80", NULL };
	static const char *const ptx100f[] = { "compute_100f", NULL };
	dk_cov_t c;

	(void)state;
	/* same major, lower or equal minor: the closest cubin */
	dk_cover_list(cu12, none, 8, 9, true, &c);
	assert_int_equal(c.how, DK_COV_CUBIN);
	assert_string_equal(c.by, "sm_86");
	assert_int_equal(c.ncubins, 7);
	assert_string_equal(c.lo, "sm_50");
	assert_string_equal(c.hi, "sm_90");
	/* no cubin of the major: sm_120 */
	dk_cover_list(cu12, none, 12, 0, true, &c);
	assert_int_equal(c.how, DK_COV_NONE);
	assert_null(c.ptx);
	/* never an older minor */
	{
		static const char *const s86[] = { "sm_86", NULL };
		dk_cover_list(s86, none, 8, 0, true, &c);
	}
	assert_int_equal(c.how, DK_COV_NONE);
	/* arch-specific: exactly 9.0 */
	dk_cover_list(a90, none, 9, 0, true, &c);
	assert_int_equal(c.how, DK_COV_CUBIN);
	dk_cover_list(a90, none, 10, 0, true, &c);
	assert_int_equal(c.how, DK_COV_NONE);
	/* family: later members of 10.x */
	dk_cover_list(f100, none, 10, 3, true, &c);
	assert_int_equal(c.how, DK_COV_CUBIN);
	dk_cover_list(f100, none, 12, 0, true, &c);
	assert_int_equal(c.how, DK_COV_NONE);
	/* PTX: any later GPU, when the driver can JIT it */
	dk_cover_list(none, ptx80, 9, 0, true, &c);
	assert_int_equal(c.how, DK_COV_PTX);
	assert_string_equal(c.by, "compute_80");
	dk_cover_list(none, ptx80, 9, 0, false, &c);
	assert_int_equal(c.how, DK_COV_NONE);
	assert_string_equal(c.ptx, "compute_80");
	dk_cover_list(none, ptx80, 7, 5, true, &c);
	assert_int_equal(c.how, DK_COV_NONE);
	dk_cover_list(none, ptx100f, 12, 0, true, &c);
	assert_int_equal(c.how, DK_COV_NONE);
	/* the facts' lists: entries that are no arch are skipped */
	const char *const cubv[] = { "sm_9x", "sm_", "sm_90" }, *const ptxv[] = { "sm_120" };
	gpuenv_facts_strs_t cub = { cubv, 3, GPUENV_FACT_SET }, ptx = { ptxv, 1, GPUENV_FACT_SET };
	gpuenv_facts_strs_t unknown = { NULL, 0, GPUENV_FACT_NULL };
	dk_cover_strs(&cub, &ptx, 9, 0, true, &c);
	assert_int_equal(c.how, DK_COV_CUBIN);
	assert_int_equal(c.ncubins, 1);
	dk_cover_strs(&cub, &ptx, 12, 0, true, &c);
	assert_int_equal(c.how, DK_COV_PTX);
	dk_cover_strs(&unknown, NULL, 9, 0, true, &c);
	assert_int_equal(c.how, DK_COV_NONE);
}

/* The facts of a scenario, decoded into arena a. */
static const gpuenv_facts_t *load_fixture(gpuenv_arena_t *a, const char *name)
{
	const gpuenv_facts_t *f;
	size_t len;
	char *text = testutil_read_source(&len, "tests/fixtures/doctor/%s/facts.json", name);

	if (gpuenv_facts_parse(&ctx, a, text, len, name, &f) != 0)
		fail_msg("%s: %s", name, ctx.err.msg);
	free(text);
	return f;
}

static bool has(const gpuenv_verdicts_t *v, const char *id, int sev)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->items[i].id, id) == 0 && v->items[i].severity == sev)
			return true;
	return false;
}

static void test_api(void **state)
{
	gpuenv_doctor_opts_t o = { .kb = kb };
	gpuenv_verdicts_t v;
	gpuenv_arena_t a, fa;
	const gpuenv_facts_t *f;
	json_t *out;

	(void)state;
	gpuenv_arena_init(&fa, &ctx, 0);
	f = load_fixture(&fa, "sm120-torch-cu124");
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_doctor_check(&ctx, &a, f, &o, &v), 0);
	assert_int_equal(v.n, 1);
	assert_true(has(&v, "no-kernel-image", GPUENV_SEV_ERROR));
	assert_int_equal(v.count[GPUENV_SEV_ERROR], 1);
	assert_int_equal(v.items[0].gpu, 0);
	assert_non_null(strstr(v.items[0].fix, "cu128"));
	out = gpuenv_verdicts_json(&v);
	assert_non_null(out);
	assert_int_equal(json_integer_value(json_object_get(out, "errors")), 1);
	json_decref(out);
	gpuenv_arena_free(&a);

	/* the built-in KB gives the same answer */
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_doctor_check(&ctx, &a, f, NULL, &v), 0);
	assert_true(has(&v, "no-kernel-image", GPUENV_SEV_ERROR));
	gpuenv_arena_free(&a);

	/* --env that the facts lack */
	o.env = "/nowhere";
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_doctor_check(&ctx, &a, f, &o, &v), GPUENV_ENOTFOUND);
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&a);

	/* preflight: no-go, a build to use instead */
	gpuenv_preflight_req_t req = { .torch = "2.6.0+cu124", .kb = kb };
	gpuenv_preflight_t p;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_preflight_check(&ctx, &a, f, &req, &p), 0);
	assert_false(p.go);
	assert_int_equal(p.cuda, 12040);
	assert_true(has(&p.reasons, "no-kernel-image", GPUENV_SEV_ERROR));
	out = gpuenv_preflight_json(&p);
	assert_true(json_is_false(json_object_get(out, "go")));
	json_decref(out);
	gpuenv_arena_free(&a);

	req = (gpuenv_preflight_req_t){ .cuda = "12.2", .torch = "2.7.0", .kb = kb };
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_preflight_check(&ctx, &a, f, &req, &p), GPUENV_EUSAGE);
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&a);
	gpuenv_arena_free(&fa);
	gpuenv_error_clear(&ctx);
	assert_string_equal(gpuenv_severity_name(GPUENV_SEV_WARNING), "warning");
	assert_string_equal(gpuenv_severity_name(7), "unknown");
}


static const gpuenv_verdict_t *find(const gpuenv_verdicts_t *v, const char *id)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->items[i].id, id) == 0)
			return &v->items[i];
	return NULL;
}

/* preflight --lock through the API: the verdicts name the packages */
static void test_lock(void **state)
{
	gpuenv_arena_t a, fa;
	gpuenv_preflight_req_t req = { .lock = &lock, .lock_path = "pylock.h200.toml", .kb = kb };
	gpuenv_preflight_t p;
	const gpuenv_verdict_t *v;
	const gpuenv_facts_t *f;

	(void)state;
	gpuenv_arena_init(&fa, &ctx, 0);
	f = load_fixture(&fa, "h200-2026-11-29");
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_preflight_check(&ctx, &a, f, &req, &p), 0);
	assert_false(p.go);
	assert_int_equal(p.cuda, 13000);
	assert_string_equal(p.what, "pylock.h200.toml (target h200)");
	assert_int_equal(p.reasons.count[GPUENV_SEV_ERROR], 1);
	assert_non_null(v = find(&p.reasons, "wheel-platform"));
	assert_string_equal(v->target, "numpy 2.3.5");
	assert_non_null(strstr(v->message, "this node is x86_64"));
	assert_non_null(strstr(v->fix, "manylinux_2_28_x86_64"));
	assert_true(has(&p.reasons, "arch-ok", GPUENV_SEV_INFO));
	assert_true(has(&p.reasons, "driver-ok", GPUENV_SEV_INFO));
	assert_true(has(&p.reasons, "target-ok", GPUENV_SEV_INFO));
	assert_true(has(&p.reasons, "libc-unknown", GPUENV_SEV_WARNING));
	gpuenv_arena_free(&a);
	gpuenv_arena_free(&fa);

	/* driver 535 (CUDA 12.2): torch and the CUDA 13 wheel share one verdict */
	gpuenv_arena_init(&fa, &ctx, 0);
	f = load_fixture(&fa, "driver-too-old-cu130");
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_preflight_check(&ctx, &a, f, &req, &p), 0);
	assert_non_null(v = find(&p.reasons, "driver-too-old"));
	assert_non_null(strstr(v->message, "torch 2.11.0+cu130"));
	{
		bool cudnn = false;
		for (size_t i = 0; i < v->nevidence; i++)
			cudnn |= strstr(v->evidence[i].fact, "packages[nvidia-cudnn-cu13]") != NULL;
		assert_true(cudnn);
	}
	assert_non_null(strstr(v->fix, "lock again for this node"));
	assert_true(has(&p.reasons, "target-other", GPUENV_SEV_WARNING) ||
		has(&p.reasons, "target-ok", GPUENV_SEV_INFO));
	gpuenv_arena_free(&a);

	/* exactly one request */
	req.torch = "2.7.0";
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_preflight_check(&ctx, &a, f, &req, &p), GPUENV_EUSAGE);
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&a);
	gpuenv_arena_free(&fa);
}

/* One run of doctor (which 0), preflight (1) or preflight of the lock (2)
 * under allocator al: the facts parsed from text (when f is NULL) and
 * judged. */
static int run_once(int which, const char *text, size_t len, const gpuenv_facts_t *f,
	gpuenv_allocator_t al, gpuenv_ctx_t *c)
{
	gpuenv_arena_t a;
	gpuenv_verdicts_t v;
	gpuenv_doctor_opts_t o = { .kb = kb };
	gpuenv_preflight_req_t req = { .torch = "2.7.0+cu128", .kb = kb };
	gpuenv_preflight_req_t lreq = { .lock = &lock, .lock_path = "pylock.h200.toml", .kb = kb };
	gpuenv_preflight_t p;
	int rc = 0;

	gpuenv_ctx_init(c);
	c->mem = al;
	gpuenv_arena_init(&a, c, 0);
	if (!f)
		rc = gpuenv_facts_parse(c, &a, text, len, "f.json", &f);
	if (!rc)
		rc = which == 0 ? gpuenv_doctor_check(c, &a, f, &o, &v)
				: gpuenv_preflight_check(c, &a, f, which == 1 ? &req : &lreq, &p);
	gpuenv_arena_free(&a);
	return rc;
}

/* Allocation n fails, for every n in turn until a run needs no more: each
 * run gives a nonzero return and ctx->err saying memory ran out (never
 * "success", never a syntax error).  Only allocation n fails, so a failure
 * some code swallows shows as a success with it counted.  For the first two
 * scenarios the facts are parsed inside the run (jansson's allocations
 * counted too); for the others, and the big H200 snapshot, the rules alone
 * (test_facts fails every allocation of a parse). */
static void test_alloc_failures(void **state)
{
	static const char *const names[] = { "wheel-pin-major", "cudnn-ld-library-path",
		"h200-2026-11-29", "mixed-cu11-cu12", "forward-compat" };
	(void)state;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t len;
		char *text = testutil_read_source(&len, "tests/fixtures/doctor/%s/facts.json", names[k]);
		gpuenv_arena_t fa;
		const gpuenv_facts_t *pre = NULL;

		gpuenv_arena_init(&fa, &ctx, 0);
		if (k >= 2)
			pre = load_fixture(&fa, names[k]);
		for (int which = 0; which < 3; which++) {
			bool done = false;
			for (long n = 0; !done && n < 1000000; n++) {
				testutil_alloc_t b = { .fail_at = n, .only_one = true };
				gpuenv_ctx_t c;
				int rc = run_once(which, text, len, pre, testutil_allocator(&b), &c);
				if (!b.failures) {
					assert_int_equal(rc, 0);
					done = true;
				} else if (rc == 0 || c.err.code != -ENOMEM ||
					   !strstr(c.err.msg, "out of memory"))
					fail_msg("%s: %s: allocation %ld failed: rc %d, ctx->err %d \"%s\"",
						names[k], which == 2 ? "preflight --lock" : which ? "preflight"
							: "doctor", n, rc, c.err.code,
						c.err.msg);
			}
			assert_true(done);
		}
		gpuenv_arena_free(&fa);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_cover),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
