/* Unit tests for Docker Hub tags read by their grammar (lib/kb/hub.c): the
 * nvidia/cuda and pytorch/pytorch parsers, their refusals, the lookup in the
 * embedded images.toml, and gpuenv_kb_image_lookup over those images. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/kb.h"

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

static bool is(gpuenv_str_t s, const char *c)
{
	return gpuenv_str_eq_cstr(s, c);
}

static int cuda(const char *tag, gpuenv_kb_hub_tag_t *t)
{
	return gpuenv_kb_hub_parse(&ctx, GPUENV_KB_HUB_CUDA, gpuenv_str(tag), t);
}

static int pt(const char *tag, gpuenv_kb_hub_tag_t *t)
{
	return gpuenv_kb_hub_parse(&ctx, GPUENV_KB_HUB_PYTORCH, gpuenv_str(tag), t);
}

static void test_kind(void **state)
{
	(void)state;
	assert_int_equal(gpuenv_kb_hub_kind(gpuenv_str("nvidia/cuda")), GPUENV_KB_HUB_CUDA);
	assert_int_equal(gpuenv_kb_hub_kind(gpuenv_str("docker.io/nvidia/cuda")), GPUENV_KB_HUB_CUDA);
	assert_int_equal(gpuenv_kb_hub_kind(gpuenv_str("nvcr.io/nvidia/cuda")), GPUENV_KB_HUB_CUDA);
	assert_int_equal(gpuenv_kb_hub_kind(gpuenv_str("pytorch/pytorch")), GPUENV_KB_HUB_PYTORCH);
	assert_int_equal(gpuenv_kb_hub_kind(gpuenv_str("docker.io/pytorch/pytorch")),
		GPUENV_KB_HUB_PYTORCH);
	assert_int_equal(gpuenv_kb_hub_kind(gpuenv_str("nvcr.io/nvidia/pytorch")), GPUENV_KB_HUB_NONE);
	assert_int_equal(gpuenv_kb_hub_kind(gpuenv_str("nvidia/cudagl")), GPUENV_KB_HUB_NONE);
	assert_null(gpuenv_kb_hub_grammar(GPUENV_KB_HUB_NONE));
	assert_non_null(strstr(gpuenv_kb_hub_grammar(GPUENV_KB_HUB_CUDA), "cudnn-devel"));
}

static void test_cuda_tags(void **state)
{
	gpuenv_kb_hub_tag_t t;

	(void)state;
	assert_int_equal(cuda("12.4.1-cudnn-devel-ubuntu22.04", &t), 0);
	assert_true(is(t.cuda_full.str, "12.4.1") && is(t.cuda.str, "12.4") && t.cuda.n == 2);
	assert_true(is(t.flavour, "cudnn-devel") && is(t.os, "ubuntu22.04") && is(t.ubuntu, "22.04"));
	assert_true(t.has_cudnn);
	assert_int_equal(t.cudnn_major, -1);

	assert_int_equal(cuda("11.8.0-cudnn8-runtime-ubi8", &t), 0);
	assert_true(is(t.flavour, "cudnn8-runtime") && is(t.os, "ubi8") && !t.ubuntu.ptr);
	assert_int_equal(t.cudnn_major, 8);

	assert_int_equal(cuda("13.2.1-base-amzn2023", &t), 0);
	assert_true(is(t.flavour, "base") && !t.has_cudnn && is(t.os, "amzn2023"));
	assert_int_equal(cuda("13.0.0-tensorrt-devel-ubuntu24.04", &t), 0);
	assert_false(t.has_cudnn);
	/* the old two-part releases */
	assert_int_equal(cuda("10.2-runtime-ubuntu18.04", &t), 0);
	assert_true(is(t.cuda_full.str, "10.2") && t.cuda_full.n == 2);
}

static void refused(int rc, const char *part)
{
	assert_int_equal(rc, GPUENV_EUSAGE);
	assert_int_equal(ctx.err.code, GPUENV_EUSAGE);
	if (part)
		assert_non_null(strstr(ctx.err.msg, part));
	assert_non_null(strstr(ctx.err.hint, "tags are <"));
}

static void test_cuda_refused(void **state)
{
	gpuenv_kb_hub_tag_t t;
	char longtag[200];

	(void)state;
	refused(cuda("12.4.1-cudnn-dev-ubuntu22.04", &t), "the flavour 'cudnn-dev'");
	refused(cuda("12-runtime-ubuntu22.04", &t), "the CUDA version '12'");
	refused(cuda("v12.4.1-runtime-ubuntu22.04", &t), "the CUDA version");
	refused(cuda("12.4.1-runtime-ubuntu", &t), "the OS 'ubuntu'");
	refused(cuda("12.4.1-ubuntu22.04", &t), "three parts");
	refused(cuda("12.4.1", &t), "three parts");
	refused(cuda("latest", &t), "'latest' moves");
	refused(cuda("", &t), "empty");
	refused(cuda("12.4.1-cudnn999-runtime-ubuntu22.04", &t), "the flavour");
	memset(longtag, 'a', sizeof(longtag) - 1);
	longtag[sizeof(longtag) - 1] = '\0';
	memcpy(longtag, "12.4.1-base-", 12);
	refused(cuda(longtag, &t), "128");
}

static void test_pytorch_tags(void **state)
{
	gpuenv_kb_hub_tag_t t;

	(void)state;
	assert_int_equal(pt("2.5.1-cuda12.4-cudnn9-runtime", &t), 0);
	assert_true(is(t.torch.str, "2.5.1") && is(t.cuda.str, "12.4") && is(t.flavour, "runtime"));
	assert_int_equal(t.cudnn_major, 9);
	assert_true(t.has_cudnn && !t.os.ptr);
	assert_int_equal(pt("1.13.1-cuda11.6-cudnn8-devel", &t), 0);
	assert_int_equal(t.cudnn_major, 8);

	refused(pt("2.5-cuda12.4-cudnn9-runtime", &t), "the torch version '2.5'");
	refused(pt("2.5.1-cu124-cudnn9-runtime", &t), "the CUDA part 'cu124'");
	refused(pt("2.5.1-cuda12.4.1-cudnn9-runtime", &t), "the CUDA part");
	refused(pt("2.5.1-cuda12.4-cudnn-runtime", &t), "the cuDNN part 'cudnn'");
	refused(pt("2.5.1-cuda12.4-cudnn9-base", &t), "the flavour 'base'");
	refused(pt("2.5.1-cuda12.4-cudnn9", &t), "four parts");
	refused(pt("2.5.1-cuda12.4-cudnn9-runtime-x", &t), "more than four");
	refused(pt("latest", &t), "'latest'");
}

static void test_lookup(void **state)
{
	gpuenv_kb_image_ref_t r;

	(void)state;
	/* a tag the data list, with its cuDNN (NV_CUDNN_VERSION of the Dockerfile) */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", &r), 0);
	assert_null(r.row);
	assert_int_equal(r.hub.kind, GPUENV_KB_HUB_CUDA);
	assert_true(is(r.hub.image, "nvidia/cuda") && is(r.cuda.str, "12.4"));
	assert_true(r.match.known && r.match.release_known && r.match.cuda_row);
	assert_true(is(r.match.cuda_row->cudnn.str, "9.1.0.70"));
	assert_true(is(r.match.cuda_row->status, "supported"));

	/* docker.io and nvcr.io spell the same image */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "nvcr.io/nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", &r), 0);
	assert_true(r.match.known && is(r.match.cuda_row->cudnn.str, "8.9.6.50"));

	/* the release is listed, this flavour is not (12.4.1 has cudnn-*, not cudnn9-*) */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "docker.io/nvidia/cuda:12.4.1-cudnn9-runtime-ubuntu22.04", &r), 0);
	assert_false(r.match.known);
	assert_true(r.match.release_known && r.match.cuda_row);

	/* fits the grammar, the data lack the release: answered from the grammar */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "nvidia/cuda:12.4.7-base-ubuntu22.04", &r), 0);
	assert_false(r.match.known || r.match.release_known);
	assert_null(r.match.cuda_row);
	assert_true(is(r.cuda.str, "12.4"));

	/* malformed: a usage error naming the part */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "nvidia/cuda:12.4.1-cuddn-devel-ubuntu22.04", &r),
		GPUENV_EUSAGE);
	assert_non_null(strstr(ctx.err.msg, "'cuddn-devel'"));
	assert_int_equal(gpuenv_kb_image_lookup(kb, "pytorch/pytorch:2.5.1-cuda12-cudnn9-runtime", &r),
		GPUENV_EUSAGE);
	assert_non_null(strstr(ctx.err.msg, "'cuda12'"));

	/* pytorch/pytorch: CUDA from the tag */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", &r), 0);
	assert_int_equal(r.hub.kind, GPUENV_KB_HUB_PYTORCH);
	assert_true(is(r.cuda.str, "12.4") && is(r.hub.torch.str, "2.5.1"));

	/* newer than the knowledge base: said, not refused */
	{
		char buf[480];
		assert_int_equal(gpuenv_kb_image_lookup(kb, "nvidia/cuda:99.1.0-base-ubuntu24.04", &r), 0);
		assert_true(gpuenv_kb_hub_newer(kb, &r.hub, buf, sizeof(buf)));
		assert_non_null(strstr(buf, "CUDA 99.1 is newer"));
		assert_int_equal(gpuenv_kb_image_lookup(kb, "nvidia/cuda:12.4.1-base-ubuntu22.04", &r), 0);
		assert_false(gpuenv_kb_hub_newer(kb, &r.hub, buf, sizeof(buf)));
		assert_int_equal(gpuenv_kb_image_lookup(kb, "pytorch/pytorch:2.99.0-cuda12.4-cudnn9-runtime", &r), 0);
		assert_true(gpuenv_kb_hub_newer(kb, &r.hub, buf, sizeof(buf)));
		assert_non_null(strstr(buf, "torch 2.99.0 is newer"));
	}

	/* other images are still not found */
	assert_int_equal(gpuenv_kb_image_lookup(kb, "nvidia/cudagl:11.4.2-base-ubuntu20.04", &r),
		GPUENV_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_cuda_tags),
		cmocka_unit_test(test_cuda_refused),
		cmocka_unit_test(test_pytorch_tags),
		cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
	};
	gpuenv_ctx_init(&ctx);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
