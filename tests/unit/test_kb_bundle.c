/* Unit tests for lib/kb/bundle.c: the MANIFEST parser, a bundle made and
 * checked in memory, and the ways a bundle is refused. */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/kb_bundle.h"

static gpuenv_ctx_t ctx;

static int parse(const char *text, gpuenv_kb_manifest_t *m)
{
	gpuenv_error_clear(&ctx);
	return gpuenv_kb_manifest_parse(&ctx, "MANIFEST", text, strlen(text), m);
}

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_manifest(void **state)
{
	gpuenv_kb_manifest_t m;
	(void)state;

	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nkey 095efaea96612f15\n"
			       "file cuda.toml 10 " SHA "\nfile about.toml 3 " SHA "\n", &m), 0);
	assert_string_equal(m.date, "2027-01-15");
	assert_string_equal(m.key_id, "095efaea96612f15");
	assert_int_equal(m.n, 2);
	assert_int_equal(m.file[0].id, GPUENV_KB_CUDA);
	assert_int_equal(m.file[1].id, GPUENV_KB_ABOUT);
	assert_int_equal(m.file[0].size, 10);
	assert_int_equal(m.file[0].sha256[0], 0x01);
	assert_int_equal(m.file[0].sha256[31], 0xef);

	/* each refusal names its line */
	assert_int_equal(parse("gpuenv-kb-bundle 2\ndate 2027-01-15\n", &m), GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 1);
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-1-15\n", &m), GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 2);
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nfile evil.toml 1 " SHA "\n", &m),
		GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "not a knowledge-base file"));
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nfile ../cuda.toml 1 " SHA "\n", &m),
		GPUENV_EFORMAT);
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nfile cuda.toml 1 " SHA
			       "\nfile cuda.toml 1 " SHA "\n", &m), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "twice"));
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nfile cuda.toml x " SHA "\n", &m),
		GPUENV_EFORMAT);
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nfile cuda.toml 1 ABC\n", &m),
		GPUENV_EFORMAT);
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nfile cuda.toml 1 " SHA, &m),
		GPUENV_EFORMAT); /* cut: no last newline */
	assert_non_null(strstr(ctx.err.msg, "newline"));
	assert_int_equal(parse("gpuenv-kb-bundle 1\nfile cuda.toml 1 " SHA "\n", &m), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "no date"));
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\n", &m), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "no file"));
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\r\nfile cuda.toml 1 " SHA "\n", &m),
		GPUENV_EFORMAT);
	assert_int_equal(parse("gpuenv-kb-bundle 1\ndate 2027-01-15\nsomething else\n", &m),
		GPUENV_EFORMAT);
	assert_int_equal(parse("", &m), GPUENV_EFORMAT);
}

static bool trusts_test_key(void)
{
	const gpuenv_kb_key_t *k;
	size_t n = gpuenv_kb_trusted_keys(&k);
	for (size_t i = 0; i < n; i++)
		if (strcmp(k[i].name, "test") == 0)
			return true;
	return false;
}

static void test_make_and_check(void **state)
{
	const char *src = getenv("GPUENV_SRC");
	char dir[] = "/tmp/gpuenv-kbb-XXXXXX", key[4096], path[4200];
	gpuenv_buf_t buf;
	gpuenv_arena_t arena;
	gpuenv_kb_bundle_t b;
	gpuenv_kb_source_t about = gpuenv_kb_embedded(GPUENV_KB_ABOUT);
	char *text;
	(void)state;

	if (!src || !trusts_test_key())
		skip();
	snprintf(key, sizeof(key), "%s/tests/fixtures/kb-keys/test-signing-key.pem", src);
	assert_non_null(mkdtemp(dir));
	/* a bundle of one file: about.toml, dated later than the embedded one */
	text = strdup(about.data);
	memcpy(strstr(text, "date = \"") + 8, "2099-01-01", 10);
	snprintf(path, sizeof(path), "%s/about.toml", dir);
	assert_int_equal(gpuenv_fs_write_atomic(&ctx, path, text, strlen(text), 0644), 0);
	gpuenv_buf_init(&buf, &ctx, GPUENV_KB_BUNDLE_MAX);
	assert_int_equal(gpuenv_kb_bundle_make(&ctx, dir, key, &buf), 0);
	gpuenv_arena_init(&arena, &ctx, 0);
	assert_int_equal(gpuenv_kb_bundle_check(&ctx, &arena, "b.zip", buf.data, buf.len, &b), 0);
	assert_string_equal(b.m.date, "2099-01-01");
	assert_string_equal(b.key->name, "test");
	assert_int_equal(b.n, 1);
	/* one byte changed anywhere in a stored entry: refused */
	{
		char *copy = malloc(buf.len);
		const char *hit;
		memcpy(copy, buf.data, buf.len);
		hit = memmem(copy, buf.len, "2099-01-01\"", 11);
		assert_non_null(hit);
		copy[hit - copy + 3] = '8';
		assert_int_not_equal(gpuenv_kb_bundle_check(&ctx, &arena, "b.zip", copy, buf.len, &b), 0);
		/* cut short */
		assert_int_not_equal(gpuenv_kb_bundle_check(&ctx, &arena, "b.zip", buf.data, buf.len - 30, &b), 0);
		free(copy);
	}
	gpuenv_arena_free(&arena);
	gpuenv_buf_free(&buf);
	unlink(path);
	rmdir(dir);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_make_and_check),
	};
	gpuenv_ctx_init(&ctx);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
