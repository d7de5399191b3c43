/* Unit tests for image references and image-manifest.json (lib/image/image_manifest.c):
 * the reference grammar and its normalization, the strict reader and its
 * messages, the lookup the Dockerfile export uses, the deterministic writer
 * (what it writes reads back equal, sorted), and every allocation failing in
 * turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/image_manifest.h"

#include "testutil.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define D3 "sha256:3333333333333333333333333333333333333333333333333333333333333333"

static gpuenv_ctx_t ctx;
static gpuenv_arena_t arena;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_arena_free(&arena);
	return 0;
}

static void ref_is(const char *in, const char *reg, const char *repo, const char *tag,
	const char *digest)
{
	gpuenv_image_ref_t r;

	if (gpuenv_image_ref_parse(&ctx, &arena, gpuenv_str(in), &r))
		fail_msg("%s: %s", in, ctx.err.msg);
	assert_string_equal(r.registry, reg);
	assert_string_equal(r.repository, repo);
	assert_string_equal(r.tag, tag);
	if (digest)
		assert_string_equal(r.digest, digest);
	else
		assert_null(r.digest);
	char want[600];
	snprintf(want, sizeof(want), "%s/%s:%s", reg, repo, tag);
	assert_string_equal(r.ref, want);
}

static void ref_bad(const char *in, const char *what)
{
	gpuenv_image_ref_t r;

	assert_int_equal(gpuenv_image_ref_parse(&ctx, &arena, gpuenv_str(in), &r), GPUENV_EUSAGE);
	if (!strstr(ctx.err.msg, what))
		fail_msg("%s: '%s' lacks '%s'", in, ctx.err.msg, what);
	assert_non_null(strstr(ctx.err.hint, "REPOSITORY"));
}

static void test_refs(void **state)
{
	(void)state;
	ref_is("nvcr.io/nvidia/pytorch:25.01-py3", "nvcr.io", "nvidia/pytorch", "25.01-py3", NULL);
	ref_is("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "docker.io", "pytorch/pytorch",
		"2.5.1-cuda12.4-cudnn9-runtime", NULL);
	ref_is("ubuntu", "docker.io", "library/ubuntu", "latest", NULL);
	ref_is("ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", NULL);
	ref_is("docker.io/ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", NULL);
	ref_is("registry-1.docker.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", "docker.io",
		"nvidia/cuda", "12.4.1-runtime-ubuntu22.04", NULL);
	ref_is("index.docker.io/library/busybox", "docker.io", "library/busybox", "latest", NULL);
	ref_is("localhost/foo/bar:x", "localhost", "foo/bar", "x", NULL);
	ref_is("127.0.0.1:5000/a_b__c/d-e--f.g:T_1.x-y", "127.0.0.1:5000", "a_b__c/d-e--f.g", "T_1.x-y",
		NULL);
	ref_is("NVCR.IO/nvidia/pytorch:25.01-py3", "nvcr.io", "nvidia/pytorch", "25.01-py3", NULL);
	ref_is("LocalHost/x", "localhost", "x", "latest", NULL);
	/* upper case alone makes a registry: kept, so the ref reads back the same */
	ref_is("Registry/x:1", "Registry", "x", "1", NULL);
	ref_is("Registry/x:1@" D1, "Registry", "x", "1", D1);
	ref_is("nvcr.io/nvidia/pytorch:25.01-py3@" D1, "nvcr.io", "nvidia/pytorch", "25.01-py3", D1);
	ref_is("nvcr.io/nvidia/pytorch@" D1, "nvcr.io", "nvidia/pytorch", "latest", D1);
	ref_bad("", "empty");
	ref_bad("Ubuntu:22.04", "repository component");
	ref_bad("nvcr.io/nvidia/PyTorch:1", "repository component");
	ref_bad("nvcr.io/nvidia//pytorch:1", "repository component");
	ref_bad("nvcr.io/nvidia/pytorch-:1", "repository component");
	ref_bad("nvcr.io/nvidia/py...torch:1", "repository component");
	ref_bad("nvcr.io/nvidia/pytorch:", "tag");
	ref_bad("nvcr.io/nvidia/pytorch:.x", "tag");
	ref_bad("nvcr.io/nvidia/pytorch:a b", "tag");
	ref_bad("nvcr.io:99999/nvidia/pytorch:1", "registry");
	ref_bad("-bad.io/x:1", "registry");
	ref_bad("nvcr.io/nvidia/pytorch@sha256:12", "digest");
	ref_bad("nvcr.io/nvidia/pytorch@md5:1111", "digest");
	ref_bad("nvcr.io/", "empty");
	{
		char tag[200];
		memset(tag, 'a', sizeof(tag));
		memcpy(tag, "x:", 2);
		tag[2 + 129] = '\0';
		ref_bad(tag, "tag");
	}
	{
		/* 250 bytes: 255 only once "library/" is added, so refused (a
		 * normalized ref must read back) */
		char name[260];
		memset(name, 'a', 250);
		name[250] = '\0';
		ref_bad(name, "longer than 255");
		name[247] = '\0';
		char repo[300];
		snprintf(repo, sizeof(repo), "library/%s", name);
		ref_is(name, "docker.io", repo, "latest", NULL);
	}
	assert_true(gpuenv_image_digest_valid(gpuenv_str(D1)));
	assert_false(gpuenv_image_digest_valid(gpuenv_str(
		"sha256:111111111111111111111111111111111111111111111111111111111111111A")));
}

static const char good[] =
	"{\"schema\": \"gpuenv.image-manifest/1\", \"images\": [\n"
	" {\"ref\": \"nvcr.io/nvidia/pytorch:25.01-py3\", \"registry\": \"nvcr.io\",\n"
	"  \"repository\": \"nvidia/pytorch\", \"tag\": \"25.01-py3\", \"digest\": \"" D1 "\",\n"
	"  \"media_type\": \"application/vnd.oci.image.index.v1+json\",\n"
	"  \"platforms\": [{\"os\": \"linux\", \"architecture\": \"arm64\", \"variant\": \"v8\",\n"
	"                  \"digest\": \"" D3 "\"},\n"
	"                 {\"os\": \"linux\", \"architecture\": \"amd64\", \"digest\": \"" D2 "\"}],\n"
	"  \"components\": {\"cuda\": \"12.8.0\", \"torch\": \"2.6.0a0\", \"driver_min\": \"570.26\"}},\n"
	" {\"ref\": \"docker.io/library/ubuntu:22.04\", \"registry\": \"docker.io\",\n"
	"  \"repository\": \"library/ubuntu\", \"tag\": \"22.04\", \"digest\": \"" D2 "\",\n"
	"  \"platforms\": [], \"components\": {}}]}\n";

static void test_read(void **state)
{
	gpuenv_image_manifest_t m;

	(void)state;
	assert_int_equal(gpuenv_image_manifest_parse(&ctx, &arena, "m.json", good, strlen(good), &m), 0);
	assert_int_equal(m.nimages, 2);
	/* sorted by ref */
	assert_string_equal(m.images[0].ref, "docker.io/library/ubuntu:22.04");
	assert_null(m.images[0].media_type);
	const gpuenv_image_entry_t *e = &m.images[1];
	assert_string_equal(e->ref, "nvcr.io/nvidia/pytorch:25.01-py3");
	assert_int_equal(e->nplatforms, 2);
	assert_string_equal(e->platforms[0].architecture, "amd64");
	assert_null(e->platforms[0].variant);
	assert_string_equal(e->platforms[1].variant, "v8");
	assert_string_equal(e->components.cuda, "12.8.0");
	assert_null(e->components.cudnn);
	assert_string_equal(e->components.driver_min, "570.26");
	/* the lookup by the ways a Dockerfile writes a ref */
	assert_ptr_equal(gpuenv_image_manifest_find(&m, "nvcr.io/nvidia/pytorch:25.01-py3"), e);
	assert_string_equal(gpuenv_image_manifest_digest(&m, "ubuntu:22.04"), D2);
	assert_string_equal(gpuenv_image_manifest_digest(&m, "docker.io/library/ubuntu:22.04"), D2);
	assert_null(gpuenv_image_manifest_find(&m, "ubuntu:24.04"));
	assert_null(gpuenv_image_manifest_find(&m, "ubuntu"));
	assert_null(gpuenv_image_manifest_find(&m, "not a ref"));
	assert_non_null(gpuenv_image_manifest_find(&m, "ubuntu:22.04@" D2));
	assert_null(gpuenv_image_manifest_find(&m, "ubuntu:22.04@" D1));
}

static void test_roundtrip(void **state)
{
	gpuenv_image_manifest_t m, m2;
	gpuenv_buf_t a, b;

	(void)state;
	assert_int_equal(gpuenv_image_manifest_parse(&ctx, &arena, "m.json", good, strlen(good), &m), 0);
	gpuenv_buf_init(&a, &ctx, 0);
	gpuenv_buf_init(&b, &ctx, 0);
	/* out of order in memory: the writer sorts */
	gpuenv_image_entry_t t = m.images[0];
	m.images[0] = m.images[1];
	m.images[1] = t;
	assert_int_equal(gpuenv_image_manifest_format(&ctx, &m, &a), 0);
	assert_string_equal(m.images[0].ref, "nvcr.io/nvidia/pytorch:25.01-py3"); /* untouched */
	assert_int_equal(gpuenv_image_manifest_parse(&ctx, &arena, "a.json", a.data, a.len, &m2), 0);
	assert_int_equal(gpuenv_image_manifest_format(&ctx, &m2, &b), 0);
	assert_string_equal(a.data, b.data);
	assert_true(a.len && a.data[a.len - 1] == '\n');
	assert_non_null(strstr(a.data, "{\n  \"schema\": \"gpuenv.image-manifest/1\",\n  \"images\": ["));
	assert_true(strstr(a.data, "docker.io/library/ubuntu") < strstr(a.data, "nvcr.io/nvidia"));
	assert_true(strstr(a.data, "\"amd64\"") < strstr(a.data, "\"arm64\""));
	assert_null(strstr(a.data, "cudnn"));
	gpuenv_buf_free(&a);
	gpuenv_buf_free(&b);
}

/* text with one replacement made in good */
static void bad_doc(const char *from, const char *to, const char *what, unsigned line)
{
	char doc[4096];
	const char *at = strstr(good, from);
	gpuenv_image_manifest_t m;

	assert_non_null(at);
	snprintf(doc, sizeof(doc), "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
	assert_int_equal(gpuenv_image_manifest_parse(&ctx, &arena, "m.json", doc, strlen(doc), &m),
		GPUENV_ESYNTAX);
	assert_string_equal(ctx.err.file, "m.json");
	if (!strstr(ctx.err.msg, what))
		fail_msg("'%s' lacks '%s'", ctx.err.msg, what);
	assert_int_equal(ctx.err.line, line);
	assert_int_equal(m.nimages, 0);
	assert_true(ctx.err.hint[0] != '\0');
}

static void test_malformed(void **state)
{
	(void)state;
	bad_doc("\"images\": [", "\"images\": [,", "malformed JSON", 1);
	bad_doc("\"tag\": \"25.01-py3\",", "\"tag\": \"25.01-py3\"", "malformed JSON", 3);
	bad_doc("image-manifest/1", "image-manifest/2", "is not gpuenv.image-manifest/1", 0);
	bad_doc("\"schema\"", "\"extra\": 1, \"schema\"", "unknown key 'extra'", 0);
	bad_doc("\"registry\": \"nvcr.io\"", "\"registry\": \"nvcr.io\", \"registry\": \"x\"",
		"malformed JSON", 2);
	bad_doc("\"ref\": \"nvcr.io/nvidia/pytorch:25.01-py3\"", "\"ref\": \"nvcr.io/nvidia/pytorch\"",
		"images[0].ref: 'nvcr.io/nvidia/pytorch' is not written normalized", 0);
	bad_doc("\"ref\": \"docker.io/library/ubuntu:22.04\"", "\"ref\": \"ubuntu:22.04\"",
		"images[1].ref", 0);
	bad_doc("\"repository\": \"nvidia/pytorch\"", "\"repository\": \"nvidia/pytorc\"",
		"do not match the ref", 0);
	bad_doc("\"digest\": \"" D2 "\",\n  \"platforms\"", "\"digest\": \"sha256:x\",\n  \"platforms\"",
		"images[1].digest: 'sha256:x' is not sha256:", 0);
	bad_doc("\"digest\": \"" D3 "\"", "\"digest\": 3", "images[0].platforms[0].digest: expected a",
		0);
	bad_doc("\"architecture\": \"amd64\"", "\"architecture\": \"arm64\", \"variant\": \"v8\"",
		"platform linux/arm64/v8 given twice", 0);
	bad_doc("\"architecture\": \"amd64\"", "\"architecture\": \"AMD64\"", "lower-case", 0);
	bad_doc("\"torch\": \"2.6.0a0\"", "\"pytorch\": \"2.6.0a0\"",
		"images[0].components: unknown key 'pytorch'", 0);
	bad_doc("\"cuda\": \"12.8.0\"", "\"cuda\": \"\"", "components.cuda: expected a non-empty", 0);
	bad_doc("\"platforms\": []", "\"platforms\": {}", "platforms: expected an array", 0);
	bad_doc("\"ref\": \"docker.io/library/ubuntu:22.04\", \"registry\": \"docker.io\",\n"
		"  \"repository\": \"library/ubuntu\", \"tag\": \"22.04\"",
		"\"ref\": \"nvcr.io/nvidia/pytorch:25.01-py3\", \"registry\": \"nvcr.io\",\n"
		"  \"repository\": \"nvidia/pytorch\", \"tag\": \"25.01-py3\"",
		"given twice", 0);
	bad_doc("{\"schema\"", "[{\"schema\"", "malformed JSON", 12);
	{
		gpuenv_image_manifest_t m;
		assert_int_equal(gpuenv_image_manifest_parse(&ctx, &arena, "e.json", "[]", 2, &m),
			GPUENV_ESYNTAX);
		assert_non_null(strstr(ctx.err.msg, "expected a JSON object"));
		assert_int_equal(gpuenv_image_manifest_read(&ctx, &arena, "/nonexistent/m.json", &m),
			-ENOENT);
		assert_non_null(strstr(ctx.err.file, "/nonexistent/m.json"));
	}
}

/* every allocation of a read and a write failing in turn: -ENOMEM, recorded */
static void test_oom(void **state)
{
	testutil_alloc_t t;
	gpuenv_ctx_t c;
	long n = 0;

	(void)state;
	for (long k = 0;; k++) {
		gpuenv_arena_t a;
		gpuenv_image_manifest_t m;
		gpuenv_buf_t b;
		int r;
		gpuenv_ctx_init(&c);
		testutil_alloc_reset(&t, k, false);
		c.mem = testutil_allocator(&t);
		gpuenv_arena_init(&a, &c, 0);
		gpuenv_buf_init(&b, &c, 0);
		r = gpuenv_image_manifest_parse(&c, &a, "m.json", good, strlen(good), &m);
		if (r == 0)
			r = gpuenv_image_manifest_format(&c, &m, &b);
		gpuenv_buf_free(&b);
		gpuenv_arena_free(&a);
		if (!t.failures) {
			assert_int_equal(r, 0);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		assert_int_equal(c.err.code, -ENOMEM);
		assert_non_null(strstr(c.err.msg, "out of memory"));
		n++;
	}
	assert_true(n > 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oom, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
