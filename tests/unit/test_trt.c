/* lib/trt and lib/kb/trt.c: the KB's TensorRT questions, shape profiles,
 * the trtexec plan over made-up models, a trtexec line judged, records
 * written and read back, a record on a node, every allocation failing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuenv/kb_trt.h"
#include "gpuenv/trt.h"

#include "testutil.h"

static gpuenv_ctx_t kctx;
static gpuenv_kb_t *kb;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&kctx);
	return gpuenv_kb_load_files(&kctx, NULL, GPUENV_KB_FILE(GPUENV_KB_TENSORRT), &kb);
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_kb_free(kb);
	return 0;
}

static gpuenv_kb_ver_t ver(const char *s)
{
	gpuenv_kb_ver_t v;
	assert_true(gpuenv_kb_ver_parse(gpuenv_str(s), &v));
	return v;
}

static void test_kb_questions(void **state)
{
	gpuenv_kb_trt_info_t info;
	const gpuenv_kb_trt_flag_t *f;
	const gpuenv_kb_trt_precision_t *p;
	gpuenv_kb_ver_t v;

	(void)state;
	v = ver("8.5.3.1");
	assert_true(gpuenv_kb_trt_info(kb, &v, &info));
	assert_int_equal(info.opset_max, 17);
	assert_int_equal(info.sm_min.major * 10 + info.sm_min.minor, 35);
	v = ver("10.13.3.9"); /* 10.5's sm_75, no opset known before 10.15 */
	assert_true(gpuenv_kb_trt_info(kb, &v, &info));
	assert_int_equal(info.sm_min.major * 10 + info.sm_min.minor, 75);
	assert_null(info.opset_row);
	v = ver("7.2.3");
	assert_false(gpuenv_kb_trt_info(kb, &v, &info));

	v = ver("8.5.3.1");
	assert_int_equal(gpuenv_kb_trt_flag(kb, gpuenv_str("--workspace"), &v, &f), GPUENV_KB_TRT_FLAG_DEPRECATED);
	assert_int_equal(gpuenv_kb_trt_flag(kb, gpuenv_str("--hardwareCompatibilityLevel"), &v, &f),
		GPUENV_KB_TRT_FLAG_NOT_YET);
	assert_int_equal(gpuenv_kb_trt_flag(kb, gpuenv_str("--memPoolSize"), &v, &f), GPUENV_KB_TRT_FLAG_OK);
	assert_int_equal(gpuenv_kb_trt_flag(kb, gpuenv_str("--nonsense"), &v, &f), GPUENV_KB_TRT_FLAG_UNKNOWN);
	assert_null(f);
	v = ver("10.0");
	assert_int_equal(gpuenv_kb_trt_flag(kb, gpuenv_str("--workspace"), &v, &f), GPUENV_KB_TRT_FLAG_REMOVED);
	v = ver("11.0.0");
	assert_int_equal(gpuenv_kb_trt_flag(kb, gpuenv_str("--fp16"), &v, &f), GPUENV_KB_TRT_FLAG_REMOVED);

	v = ver("8.5.3.1");
	assert_true(gpuenv_kb_trt_precision(kb, "fp16", &v, 7, 5, &p)); /* the T4 */
	assert_false(gpuenv_kb_trt_precision(kb, "fp16", &v, 6, 1, &p)); /* the P4 */
	assert_true(gpuenv_kb_trt_precision(kb, "int8", &v, 6, 1, &p));
	assert_false(gpuenv_kb_trt_precision(kb, "bf16", &v, 8, 0, &p)); /* BF16 from 10.0 */
	v = ver("10.3");
	assert_true(gpuenv_kb_trt_precision(kb, "bf16", &v, 8, 0, &p));
	assert_false(gpuenv_kb_trt_precision(kb, "bf16", &v, 7, 5, &p));
	assert_true(gpuenv_kb_trt_precision(kb, "fp8", &v, 8, 9, &p));
	assert_false(gpuenv_kb_trt_precision(kb, "fp8", &v, 8, 6, &p));

	assert_non_null(gpuenv_kb_trt_hwcompat(kb, gpuenv_str("ampere+")));
	assert_non_null(gpuenv_kb_trt_hwcompat(kb, gpuenv_str("same-compute-capability")));
	assert_non_null(gpuenv_kb_trt_vcompat(kb));

	assert_true(gpuenv_kb_trt_version_from_int(8503, &v));
	assert_true(v.part[0] == 8 && v.part[1] == 5 && v.part[2] == 3);
	assert_true(gpuenv_kb_trt_version_from_int(100300, &v));
	assert_true(v.part[0] == 10 && v.part[1] == 3 && v.part[2] == 0);
	assert_false(gpuenv_kb_trt_version_from_int(42, &v));
}

static void test_shapes(void **state)
{
	gpuenv_ctx_t c;
	gpuenv_arena_t a;
	gpuenv_trt_shape_t s;
	static const char *const bad[] = { "x", ":1x2", "x:1x2..3x4", "x:1x2..1x3..1x4x5", "x:4..2..8",
		"x:1x0", "x:1xx2", "x:1x2..3x4..5x6..7x8", "x:999999999999" };

	(void)state;
	gpuenv_ctx_init(&c);
	gpuenv_arena_init(&a, &c, 0);
	assert_int_equal(gpuenv_trt_shape_parse(&c, &a, "in:put:1x3..2x3..4x3", "t", &s), 0);
	assert_string_equal(s.name, "in:put"); /* the last colon ends the name */
	assert_int_equal(s.ndims, 2);
	assert_true(s.min[0] == 1 && s.opt[0] == 2 && s.max[0] == 4 && s.max[1] == 3);
	assert_int_equal(gpuenv_trt_shape_parse(&c, &a, "x:8x3", "t", &s), 0);
	assert_true(s.min[0] == 8 && s.max[0] == 8);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_not_equal(gpuenv_trt_shape_parse(&c, &a, bad[i], "t", &s), 0);
	gpuenv_arena_free(&a);
}

static const char *find_arg(const gpuenv_trt_plan_t *p, const char *prefix)
{
	for (size_t i = 0; i < p->argc; i++)
		if (strncmp(p->argv[i], prefix, strlen(prefix)) == 0)
			return p->argv[i];
	return NULL;
}

static gpuenv_trt_input_t dyn_input(const char *name, int rank)
{
	gpuenv_trt_input_t in;
	memset(&in, 0, sizeof(in));
	in.name = name;
	in.has_shape = true;
	in.ndims = (size_t)rank;
	for (int i = 0; i < rank; i++)
		in.dims[i] = i ? 16 : -1;
	return in;
}

static void test_plan(void **state)
{
	gpuenv_ctx_t c;
	gpuenv_arena_t a;
	gpuenv_trt_input_t ins[2] = { dyn_input("a", 2), dyn_input("b", 3) };
	gpuenv_trt_model_t m = { "m.onnx", 18, 2, ins };
	gpuenv_trt_plan_req_t req = { .kb = kb, .model = &m, .onnx = "m.onnx", .tensorrt = "8.6.1.6",
		.gpu = "A100", .cc_major = 8, .cc_minor = 0 };
	gpuenv_trt_plan_t p;

	(void)state;
	gpuenv_ctx_init(&c);
	gpuenv_arena_init(&a, &c, 0);
	assert_int_equal(gpuenv_trt_plan(&c, &a, &req, &p), 0);
	assert_string_equal(p.argv[0], "trtexec");
	assert_string_equal(find_arg(&p, "--saveEngine="), "--saveEngine=m.plan");
	assert_string_equal(find_arg(&p, "--minShapes="), "--minShapes=a:1x16,b:1x16x16");
	assert_string_equal(find_arg(&p, "--maxShapes="), "--maxShapes=a:32x16,b:32x16x16");
	assert_non_null(find_arg(&p, "--fp16"));
	assert_null(find_arg(&p, "--hardwareCompatibilityLevel"));
	assert_string_equal(p.hardware_compatibility, "none");
	/* portability: ampere+ on sm_80 with 8.6; refused on sm_75 */
	req.portable_gpus = req.portable_tensorrt = true;
	assert_int_equal(gpuenv_trt_plan(&c, &a, &req, &p), 0);
	assert_string_equal(find_arg(&p, "--hardwareCompatibilityLevel="), "--hardwareCompatibilityLevel=ampere+");
	assert_non_null(find_arg(&p, "--versionCompatible"));
	req.cc_major = 7;
	req.cc_minor = 5;
	assert_int_equal(gpuenv_trt_plan(&c, &a, &req, &p), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(c.err.msg, "sm_75"));
	/* 8.x before 8.4 is unknown to the KB; 10.x: no --workspace */
	req.portable_gpus = req.portable_tensorrt = false;
	req.tensorrt = "10.3.0";
	assert_int_equal(gpuenv_trt_plan(&c, &a, &req, &p), 0);
	assert_non_null(find_arg(&p, "--memPoolSize=workspace:4096"));
	assert_null(find_arg(&p, "--workspace"));
	req.tensorrt = "not.a.version";
	assert_int_equal(gpuenv_trt_plan(&c, &a, &req, &p), GPUENV_EUSAGE);
	/* a dynamic dim past the batch without a profile */
	ins[0].dims[1] = -1;
	req.tensorrt = "10.3.0";
	assert_int_equal(gpuenv_trt_plan(&c, &a, &req, &p), GPUENV_EUSAGE);
	gpuenv_arena_free(&a);
}

static void test_check_command(void **state)
{
	gpuenv_ctx_t c;
	gpuenv_arena_t a;
	gpuenv_trt_cmd_check_t cc;

	(void)state;
	gpuenv_ctx_init(&c);
	gpuenv_arena_init(&a, &c, 0);
	assert_int_equal(gpuenv_trt_check_command(&c, &a, kb, "trtexec --onnx='a b.onnx' \\\n --workspace=64 "
		"--minTiming=2 --uff=x.uff --fp16", "10.3", &cc), 0);
	assert_int_equal(cc.nremoved, 3);
	assert_string_equal(cc.rewritten, "trtexec --onnx=a b.onnx --memPoolSize=workspace:64 --avgTiming=2 --fp16");
	assert_int_equal(gpuenv_trt_check_command(&c, &a, kb, "trtexec --vc", "8.6", &cc), 0);
	assert_int_equal(cc.nunknown, 1);
	assert_int_not_equal(gpuenv_trt_check_command(&c, &a, kb, "trtexec \"--fp16", "8.6", &cc), 0);
	gpuenv_arena_free(&a);
}

static const char *const REC = "{\"schema\": \"gpuenv.engine/1\", \"tensorrt\": \"8.5.3\", "
	"\"gpu\": \"NVIDIA GeForce RTX 3090\", \"compute_capability\": \"8.6\", "
	"\"hardware_compatibility\": \"none\", \"version_compatible\": false, "
	"\"precisions\": [\"fp16\"], \"onnx\": {\"path\": \"m.onnx\", \"sha256\": \"00\"}, "
	"\"engine_sha256\": \"11\", \"trtexec\": [\"trtexec\", \"--fp16\"], \"built_at\": \"x\"}";

static void test_record(void **state)
{
	gpuenv_ctx_t c;
	gpuenv_arena_t a;
	gpuenv_trt_record_t r, r2;
	const char *text;
	gpuenv_target_gpu_t g = { "Tesla T4", 7, 5, -1, true };
	gpuenv_target_lib_t lib = { "nvinfer", "8.5.3.1" };
	gpuenv_target_t node = { .name = "auto", .ngpus = 1, .gpus = &g, .nlibs = 1, .libs = &lib };
	gpuenv_trt_verdict_t v;

	(void)state;
	gpuenv_ctx_init(&c);
	gpuenv_arena_init(&a, &c, 0);
	assert_int_equal(gpuenv_trt_record_parse(&c, &a, REC, strlen(REC), "r.json", &r), 0);
	assert_string_equal(r.tensorrt, "8.5.3");
	assert_int_equal(r.ntrtexec, 2);
	assert_int_equal(gpuenv_trt_record_json(&c, &a, &r, &text), 0);
	assert_int_equal(gpuenv_trt_record_parse(&c, &a, text, strlen(text), "r2.json", &r2), 0);
	assert_string_equal(r2.compute_capability, "8.6");
	assert_string_equal(r2.onnx_sha256, "00");
	/* the seed's case: no-go on a T4, both reasons */
	assert_int_equal(gpuenv_trt_check(&c, &a, kb, &r, &node, &v), 0);
	assert_false(v.go);
	assert_non_null(strstr(v.reasons[v.nreasons - 1].text, "not for a Tesla T4"));
	assert_true(v.tensorrt_ok);
	assert_true(v.gpu_reasons < v.nreasons && v.reasons[v.nreasons - 1].blocks);
	/* a server image's TensorRT as the runtime (triton check --image): another
	 * release is no-go before the GPUs, which are not judged without a node */
	assert_int_equal(gpuenv_trt_check_runtime(&c, &a, kb, &r, "10.8.0.43", "img:1", NULL, &v), 0);
	assert_false(v.go);
	assert_false(v.tensorrt_ok);
	assert_int_equal(v.gpu_reasons, v.nreasons);
	assert_true(v.reasons[0].blocks);
	assert_non_null(strstr(v.reasons[0].text, "TensorRT 10.8.0.43 in img:1, the engine is of TensorRT 8.5.3"));
	/* the same release (the banner's three parts against four): loads */
	assert_int_equal(gpuenv_trt_check_runtime(&c, &a, kb, &r, "8.5.3.1", "img:1", NULL, &v), 0);
	assert_true(v.go && v.tensorrt_ok);
	assert_true(gpuenv_trt_runtime_loads(kb, &r, "8.5.3.1"));
	assert_false(gpuenv_trt_runtime_loads(kb, &r, "8.5.2"));
	assert_false(gpuenv_trt_runtime_loads(kb, &r, "8.x"));
	assert_false(gpuenv_trt_runtime_loads(kb, &r, NULL));
	/* unknown: said, not a blocker */
	assert_int_equal(gpuenv_trt_check_runtime(&c, &a, kb, &r, NULL, "img:1", NULL, &v), 0);
	assert_false(v.tensorrt_ok);
	assert_false(v.reasons[0].blocks);
	/* on a 3090 with the same TensorRT: go */
	g.name = "NVIDIA GeForce RTX 3090";
	g.cc_major = 8;
	g.cc_minor = 6;
	assert_int_equal(gpuenv_trt_check(&c, &a, kb, &r, &node, &v), 0);
	assert_true(v.go);
	/* refusals name the field */
	assert_int_equal(gpuenv_trt_record_parse(&c, &a, "{\"schema\": \"gpuenv.engine/1\"}", 29, "r.json",
		&r2), GPUENV_EFORMAT);
	assert_non_null(strstr(c.err.msg, "tensorrt"));
	assert_int_equal(gpuenv_trt_record_parse(&c, &a, "[1", 2, "r.json", &r2), GPUENV_ESYNTAX);
	gpuenv_arena_free(&a);
}

/* Every allocation failing in turn: an error or a result, never a crash. */
static void test_alloc_failures(void **state)
{
	testutil_alloc_t t;
	gpuenv_trt_input_t ins[1] = { dyn_input("a", 2) };
	gpuenv_trt_model_t m = { "m.onnx", 18, 1, ins };
	gpuenv_trt_plan_req_t req = { .kb = kb, .model = &m, .onnx = "m.onnx", .tensorrt = "8.6.1.6",
		.gpu = "A100", .cc_major = 8, .cc_minor = 0, .portable_gpus = true };
	long n = 0;

	(void)state;
	for (long fail = 0; fail < 400; fail++) {
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		gpuenv_trt_plan_t p;
		gpuenv_trt_cmd_check_t cc;
		gpuenv_trt_record_t r;
		const char *text;
		int r1, r2, r3, r4;
		gpuenv_ctx_init(&c);
		testutil_alloc_reset(&t, fail, false);
		c.mem = testutil_allocator(&t);
		gpuenv_arena_init(&a, &c, 0);
		r1 = gpuenv_trt_plan(&c, &a, &req, &p);
		r2 = gpuenv_trt_check_command(&c, &a, kb, "trtexec --workspace=4 --fp16", "10.3", &cc);
		r3 = gpuenv_trt_record_parse(&c, &a, REC, strlen(REC), "r", &r);
		r4 = r3 ? r3 : gpuenv_trt_record_json(&c, &a, &r, &text);
		gpuenv_arena_free(&a);
		if (!t.failures) {
			assert_true(!r1 && !r2 && !r3 && !r4);
			n = fail;
			break;
		}
		assert_true(r1 == 0 || r1 == -ENOMEM);
		assert_true(r2 == 0 || r2 == -ENOMEM);
		assert_true(r3 == 0 || r3 == -ENOMEM);
		assert_true(r4 == 0 || r4 == -ENOMEM);
	}
	assert_true(n > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kb_questions),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_check_command),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
