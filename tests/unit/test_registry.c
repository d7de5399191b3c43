/* Unit tests for the registry client's parsers (lib/index/oci.c): RFC 7235
 * challenges (several in one header, quoted values with escapes, token68,
 * case), indexes and manifests (platforms kept and left out, media types
 * from the header or the document, schema 1, digests), token answers and
 * docker's config.json (auth, username/password, Docker Hub's key, helpers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/registry.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"

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

static int chal(const char *h, gpuenv_registry_challenge_t *c)
{
	return gpuenv_registry_challenge_parse(&ctx, &arena, gpuenv_str(h), c);
}

static void test_challenge(void **state)
{
	gpuenv_registry_challenge_t c;

	(void)state;
	assert_int_equal(chal("Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
			      "scope=\"repository:library/ubuntu:pull\"", &c), 0);
	assert_true(c.bearer);
	assert_string_equal(c.realm, "https://auth.docker.io/token");
	assert_string_equal(c.service, "registry.docker.io");
	assert_string_equal(c.scope, "repository:library/ubuntu:pull");
	/* Basic and Bearer in one header: Bearer; case of scheme and names; tokens */
	assert_int_equal(chal("Basic realm=\"x\", bearer REALM=\"https://h/t\" , Service=reg", &c), 0);
	assert_true(c.bearer && !c.basic);
	assert_string_equal(c.scheme, "bearer");
	assert_string_equal(c.realm, "https://h/t");
	assert_string_equal(c.service, "reg");
	assert_null(c.scope);
	/* escapes in a quoted value, other parameters ignored */
	assert_int_equal(chal("Bearer realm=\"https://h/a\\\"b\", error=\"insufficient_scope\"", &c), 0);
	assert_string_equal(c.realm, "https://h/a\"b");
	/* token68, then Basic */
	assert_int_equal(chal("Negotiate abc123==, Basic realm=\"r\"", &c), 0);
	assert_true(c.basic);
	assert_string_equal(c.realm, "r");
	/* refusals */
	assert_int_equal(chal("Bearer service=\"s\"", &c), GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "without a realm"));
	assert_int_equal(chal("Bearer realm=\"https://h", &c), GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "not closed"));
	assert_int_equal(chal("Bearer realm=\"a\", realm=\"b\"", &c), GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "twice"));
	assert_int_equal(chal("realm=\"a\"", &c), GPUENV_ESYNTAX);
	assert_int_equal(chal("", &c), GPUENV_ESYNTAX);
	assert_int_equal(chal("Bearer realm=\"a\" x", &c), GPUENV_ESYNTAX);
	assert_string_equal(ctx.err.file, "WWW-Authenticate");
}

static int mf(const char *ct, const char *body, gpuenv_registry_manifest_t *m)
{
	return gpuenv_registry_manifest_parse(&ctx, &arena, "https://r/v2/x/manifests/1", ct,
		gpuenv_str(body), m);
}

static void test_manifest(void **state)
{
	gpuenv_registry_manifest_t m;

	(void)state;
	assert_int_equal(mf(GPUENV_MT_DOCKER_LIST "; charset=utf-8",
		"{\"schemaVersion\": 2, \"manifests\": ["
		"{\"digest\": \"" D1 "\", \"mediaType\": \"" GPUENV_MT_DOCKER_MANIFEST "\","
		" \"platform\": {\"os\": \"linux\", \"architecture\": \"arm64\", \"variant\": \"v8\"}},"
		"{\"digest\": \"" D2 "\", \"platform\": {\"os\": \"windows\", \"architecture\": \"amd64\"}},"
		"{\"digest\": \"" D2 "\", \"platform\": {\"os\": \"linux\", \"architecture\": \"ppc64le\"}},"
		"{\"digest\": \"" D2 "\"},"
		"{\"digest\": \"" D2 "\", \"platform\": {\"os\": \"linux\", \"architecture\": \"amd64\"}}]}",
		&m), 0);
	assert_true(m.index);
	assert_string_equal(m.media_type, GPUENV_MT_DOCKER_LIST);
	assert_int_equal(m.nplatforms, 2);
	assert_int_equal(m.nother, 3);
	assert_string_equal(m.platforms[0].variant, "v8");
	assert_string_equal(m.platforms[1].architecture, "amd64");
	assert_null(m.platforms[1].variant);
	/* no media type anywhere: the shape says */
	assert_int_equal(mf(NULL, "{\"schemaVersion\": 2, \"config\": {\"digest\": \"" D1 "\"}, "
				  "\"layers\": []}", &m), 0);
	assert_false(m.index);
	assert_string_equal(m.media_type, GPUENV_MT_OCI_MANIFEST);
	assert_string_equal(m.config_digest, D1);
	/* the header and the document disagree */
	assert_int_equal(mf(GPUENV_MT_OCI_INDEX, "{\"schemaVersion\": 2, \"mediaType\": \""
		GPUENV_MT_OCI_MANIFEST "\", \"config\": {\"digest\": \"" D1 "\"}, \"layers\": []}", &m),
		GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "Content-Type says"));
	/* a header that names nothing of ours does not count */
	assert_int_equal(mf("application/json", "{\"schemaVersion\": 2, \"mediaType\": \""
		GPUENV_MT_OCI_MANIFEST "\", \"config\": {\"digest\": \"" D1 "\"}, \"layers\": []}", &m), 0);
	assert_int_equal(mf(NULL, "{\"schemaVersion\": 1, \"name\": \"x\"}", &m), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "schema 1"));
	assert_int_equal(mf(NULL, "{\"schemaVersion\": 2, \"manifests\": [{\"digest\": \"sha256:AB\"}]}",
		&m), GPUENV_ESYNTAX);
	assert_int_equal(mf(NULL, "{\"schemaVersion\": 2, \"manifests\": [{\"digest\": \"sha512:ab\"}]}",
		&m), GPUENV_EUNSUPPORTED);
	assert_int_equal(mf(NULL, "{\"schemaVersion\": 2, \"manifests\": {}}", &m), GPUENV_ESYNTAX);
	assert_int_equal(mf(NULL, "{\"schemaVersion\": 2,", &m), GPUENV_ESYNTAX);
	assert_int_equal(ctx.err.line, 1);
	assert_string_equal(ctx.err.file, "https://r/v2/x/manifests/1");
	assert_int_equal(mf(NULL, "{\"schemaVersion\": 2, \"a\": 1, \"a\": 2}", &m), GPUENV_ESYNTAX);
}

static void test_token_config(void **state)
{
	const char *t;
	gpuenv_registry_platform_t p;

	(void)state;
	assert_int_equal(gpuenv_registry_token_parse(&ctx, &arena, "t",
		gpuenv_str("{\"token\": \"\", \"access_token\": \"abc\"}"), &t), 0);
	assert_string_equal(t, "abc");
	assert_int_equal(gpuenv_registry_token_parse(&ctx, &arena, "t",
		gpuenv_str("{\"token\": \"a\\r\\nX-Evil: 1\"}"), &t), GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "visible ASCII"));
	assert_int_equal(gpuenv_registry_token_parse(&ctx, &arena, "t", gpuenv_str("{\"token\": x"), &t),
		GPUENV_ESYNTAX);
	/* a token answer's text is not quoted in the message */
	assert_null(strstr(ctx.err.msg, "x"));
	assert_int_equal(gpuenv_registry_config_parse(&ctx, &arena, "c",
		gpuenv_str("{\"os\": \"linux\", \"architecture\": \"arm\", \"variant\": \"v7\"}"), &p), 0);
	assert_string_equal(p.variant, "v7");
	assert_int_equal(gpuenv_registry_config_parse(&ctx, &arena, "c", gpuenv_str("{\"os\": \"linux\"}"),
		&p), GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "\"architecture\" is missing"));
}

static int dc(const char *text, const char *reg, gpuenv_docker_creds_t *c)
{
	return gpuenv_docker_config_parse(&ctx, &arena, "config.json", gpuenv_str(text), reg, c);
}

static void test_docker_config(void **state)
{
	gpuenv_docker_creds_t c;
	/* base64("alice:s3:cr+et/") */
	const char *cfg = "{\"auths\": {\"https://index.docker.io/v1/\": {\"auth\": \"YWxpY2U6czM6Y3IrZXQv\"},"
			  " \"NVCR.IO\": {\"username\": \"u\", \"password\": \"p\"}, \"other.io\": {}},"
			  " \"credHelpers\": {\"gcr.io\": \"gcloud\"}, \"credsStore\": \"desktop\"}";

	(void)state;
	assert_int_equal(dc(cfg, "docker.io", &c), 0);
	assert_string_equal(c.user, "alice");
	assert_string_equal(c.pass, "s3:cr+et/");
	assert_int_equal(dc(cfg, "nvcr.io", &c), 0);
	assert_string_equal(c.user, "u");
	assert_string_equal(c.pass, "p");
	assert_int_equal(dc(cfg, "other.io", &c), 0);
	assert_null(c.user);
	assert_string_equal(c.helper, "desktop");
	assert_int_equal(dc(cfg, "gcr.io", &c), 0);
	assert_string_equal(c.helper, "gcloud");
	assert_int_equal(dc("{}", "nvcr.io", &c), 0);
	assert_null(c.user);
	assert_null(c.helper);
	assert_int_equal(dc("{\"auths\": {\"nvcr.io\": {\"auth\": \"bm9jb2xvbg==\"}}}", "nvcr.io", &c),
		GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "\"user:password\""));
	assert_int_equal(dc("{\"auths\": {\"nvcr.io\": {\"auth\": \"@@@\"}}}", "nvcr.io", &c), GPUENV_ESYNTAX);
	assert_null(strstr(ctx.err.msg, "@@@"));
	assert_int_equal(dc("{\"auths\": {\"nvcr.io\": {\"auth\": \"c2VjcmV0cGFzc3dvcmQ\"", "nvcr.io", &c),
		GPUENV_ESYNTAX);
	assert_null(strstr(ctx.err.msg, "c2VjcmV0"));
	assert_string_equal(ctx.err.file, "config.json");
	assert_int_equal(dc("{\"auths\": []}", "nvcr.io", &c), GPUENV_ESYNTAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_challenge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_manifest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_docker_config, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
