/* Unit tests for the core: slices, arenas, capped buffers, errors, fs, hash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"

#include "testutil.h"

static const char *fake_env(void *ud, const char *name)
{
	(void)ud;
	return strcmp(name, "CUDA_VISIBLE_DEVICES") == 0 ? "1,0" : NULL;
}

static void test_slices(void **state)
{
	(void)state;
	gpuenv_str_t s = gpuenv_str("  torch==2.1 \n"), head, rest;
	s = gpuenv_str_trim(s);
	assert_true(gpuenv_str_eq_cstr(s, "torch==2.1"));
	rest = gpuenv_str_split(s, '=', &head);
	assert_true(gpuenv_str_eq_cstr(head, "torch"));
	assert_true(gpuenv_str_eq_cstr(rest, "=2.1"));
	rest = gpuenv_str_split(head, '!', &head);
	assert_null(rest.ptr);
	assert_true(gpuenv_str_ieq(gpuenv_str("Torch"), gpuenv_str("tORCH")));
	assert_true(gpuenv_str_cmp(gpuenv_str("ab"), gpuenv_str("abc")) < 0);
	assert_true(gpuenv_str_startswith(s, "torch"));
	assert_true(gpuenv_str_endswith(s, "2.1"));
	uint64_t v;
	assert_true(gpuenv_str_to_u64(gpuenv_str("18446744073709551615"), &v));
	assert_true(v == UINT64_MAX);
	assert_false(gpuenv_str_to_u64(gpuenv_str("18446744073709551616"), &v));
	assert_false(gpuenv_str_to_u64(gpuenv_str(""), &v));
	assert_false(gpuenv_str_to_u64(gpuenv_str("1a"), &v));
}

static void test_arena(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	for (int i = 0; i < 10000; i++) {
		char *p = gpuenv_arena_alloc(&a, (size_t)(i % 97) + 1);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % _Alignof(max_align_t), 0);
		memset(p, 'x', (size_t)(i % 97) + 1);
	}
	void *big = gpuenv_arena_alloc(&a, 5u << 20);
	assert_non_null(big);
	assert_string_equal(gpuenv_arena_strndup(&a, "hello", 3), "hel");
	assert_null(gpuenv_arena_calloc(&a, SIZE_MAX / 2, 4));
	gpuenv_arena_free(&a);

	/* a limit is a hard cap */
	gpuenv_arena_init(&a, &ctx, 1000);
	assert_non_null(gpuenv_arena_alloc(&a, 500));
	assert_null(gpuenv_arena_alloc(&a, 600));
	gpuenv_arena_free(&a);
}

static void test_buf_cap(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_buf_t b;
	gpuenv_ctx_init(&ctx);
	gpuenv_buf_init(&b, &ctx, 10);
	assert_int_equal(gpuenv_buf_puts(&b, "0123456789"), 0);
	assert_int_equal(gpuenv_buf_putc(&b, 'x'), GPUENV_ETOOBIG);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.data, "0123456789");
	gpuenv_buf_reset(&b);
	assert_int_equal(gpuenv_buf_printf(&b, "%d-%s", 42, "ok"), 0);
	assert_string_equal(b.data, "42-ok");
	assert_int_equal(gpuenv_buf_reserve(&b, SIZE_MAX), GPUENV_ETOOBIG);
	{
		/* reserving alone already gives a NUL-terminated (empty) string */
		gpuenv_buf_t e;
		gpuenv_buf_init(&e, &ctx, 0);
		assert_int_equal(gpuenv_buf_reserve(&e, 100), 0);
		assert_string_equal(e.data, "");
		gpuenv_buf_free(&e);
	}
	size_t n;
	char *s = gpuenv_buf_steal(&b, &n);
	assert_string_equal(s, "42-ok");
	assert_int_equal(n, 5);
	gpuenv_free(&ctx, s);
	gpuenv_buf_free(&b);
}

static void test_alloc_failure(void **state)
{
	(void)state;
	/* every allocation point fails cleanly, never crashes */
	for (int budget = 0; budget < 4; budget++) {
		testutil_alloc_t bud = { .fail_at = budget };
		gpuenv_ctx_t ctx;
		gpuenv_buf_t b;
		gpuenv_ctx_init(&ctx);
		ctx.mem = testutil_allocator(&bud);
		gpuenv_buf_init(&b, &ctx, 0);
		int r = 0;
		for (int i = 0; i < 2000 && !r; i++)
			r = gpuenv_buf_puts(&b, "abcdefgh");
		assert_int_equal(r, -ENOMEM);
		/* recorded, as every error a public function returns */
		assert_int_equal(ctx.err.code, -ENOMEM);
		assert_non_null(strstr(ctx.err.msg, "out of memory"));
		gpuenv_buf_free(&b);
		gpuenv_error_clear(&ctx);
		gpuenv_buf_init(&b, &ctx, 10);
		assert_int_equal(gpuenv_buf_puts(&b, "0123456789x"), GPUENV_ETOOBIG);
		assert_int_equal(ctx.err.code, GPUENV_ETOOBIG);
		assert_non_null(strstr(ctx.err.msg, "10-byte limit"));
		gpuenv_buf_free(&b);
		gpuenv_arena_t a;
		gpuenv_arena_init(&a, &ctx, 0);
		void *p = NULL;
		for (int i = 0; i < 100000; i++)
			if (!(p = gpuenv_arena_alloc(&a, 64)))
				break;
		assert_null(p);
		gpuenv_arena_free(&a);
	}
}

static void test_errors(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	char out[512];
	gpuenv_ctx_init(&ctx);
	assert_string_equal(gpuenv_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(gpuenv_strerror(GPUENV_ESYNTAX), "syntax error");
	for (int c = GPUENV_E_BASE - 1; c > GPUENV_E_LAST; c--)
		assert_non_null(gpuenv_strerror(c));
	assert_string_equal(gpuenv_strerror(GPUENV_E_LAST - 5), "unknown error");
	int r = gpuenv_fail(&ctx, GPUENV_ESYNTAX, "pyproject.toml", 14, 9,
		"expected '=' after key");
	assert_int_equal(r, GPUENV_ESYNTAX);
	gpuenv_hint(&ctx, "write key = value");
	gpuenv_error_format(&ctx.err, out, sizeof(out));
	assert_string_equal(out, "pyproject.toml:14:9: expected '=' after key");
	assert_string_equal(ctx.err.hint, "write key = value");
	gpuenv_fail(&ctx, -ENOENT, NULL, 0, 0, NULL);
	gpuenv_error_format(&ctx.err, out, sizeof(out));
	assert_string_equal(out, strerror(ENOENT));
	gpuenv_error_clear(&ctx);
	assert_int_equal(ctx.err.code, 0);
}

static void test_env_injection(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_ctx_init(&ctx);
	ctx.getenv = fake_env;
	assert_string_equal(gpuenv_ctx_getenv(&ctx, "CUDA_VISIBLE_DEVICES"), "1,0");
	assert_null(gpuenv_ctx_getenv(&ctx, "HOME"));
	ctx.getenv = NULL;
	assert_null(gpuenv_ctx_getenv(&ctx, "CUDA_VISIBLE_DEVICES"));
}

static void test_atomic_write(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_buf_t b;
	char dir[] = "/tmp/gpuenv-test-XXXXXX", path[256];
	gpuenv_ctx_init(&ctx);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lock.toml", dir);
	assert_int_equal(gpuenv_fs_write_atomic(&ctx, path, "a = 1\n", 6, 0644), 0);
	assert_int_equal(gpuenv_fs_write_atomic(&ctx, path, "a = 2\n", 6, 0600), 0);
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_fs_read(&ctx, path, 100, &b), 0);
	assert_string_equal(b.data, "a = 2\n");
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* a read over the limit fails and appends nothing */
	gpuenv_buf_reset(&b);
	assert_int_equal(gpuenv_fs_read(&ctx, path, 3, &b), GPUENV_ETOOBIG);
	assert_int_equal(b.len, 0);
	gpuenv_buf_free(&b);
	/* a failed write leaves the old file and no temporary behind */
	char bad[300];
	snprintf(bad, sizeof(bad), "%s/missing/x.toml", dir);
	assert_true(gpuenv_fs_write_atomic(&ctx, bad, "x", 1, 0644) < 0);
	assert_string_equal(ctx.err.file, bad);
	unlink(path);
	assert_int_equal(rmdir(dir), 0); /* empty: nothing left over */
}

static void test_lock(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	char dir[] = "/tmp/gpuenv-lock-XXXXXX", path[256];
	int fd;
	gpuenv_ctx_init(&ctx);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/.lock", dir);
	assert_int_equal(gpuenv_fs_lock(&ctx, path, true, false, &fd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		gpuenv_ctx_t c2;
		int fd2;
		gpuenv_ctx_init(&c2);
		_exit(gpuenv_fs_lock(&c2, path, true, false, &fd2) == GPUENV_ELOCKED ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	gpuenv_fs_unlock(fd);
	assert_int_equal(gpuenv_fs_lock(&ctx, path, true, false, &fd), 0);
	gpuenv_fs_unlock(fd);
	unlink(path);
	rmdir(dir);
}

static void test_sha256(void **state)
{
	(void)state;
	unsigned char d[32];
	char hex[65];
	assert_int_equal(gpuenv_sha256("abc", 3, d), 0);
	gpuenv_hex(d, 32, hex);
	assert_string_equal(hex,
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(gpuenv_sha256("", 0, d), 0);
	gpuenv_hex(d, 32, hex);
	assert_string_equal(hex,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void check_escape(const char *in, size_t n, unsigned flags, const char *want)
{
	gpuenv_ctx_t ctx;
	gpuenv_buf_t b;
	size_t len;

	gpuenv_ctx_init(&ctx);
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_text_escape(&b, in, n, flags), 0);
	assert_non_null(b.data);
	assert_string_equal(b.data, want);
	assert_int_equal(gpuenv_text_valid(in, n, flags), strcmp(want, in) == 0 && strlen(in) == n);
	/* the escaped text is valid text, and the bytes come back exactly */
	assert_true(gpuenv_text_valid(b.data, b.len, 0) || strchr(b.data, '\\'));
	len = gpuenv_text_unescape(b.data, b.len);
	assert_int_equal(len, n);
	assert_memory_equal(b.data, in, n);
	gpuenv_buf_free(&b);
}

static void test_text_escape(void **state)
{
	(void)state;
	check_escape("", 0, 0, "");
	check_escape("plain/path", 10, 0, "plain/path");
	check_escape("caf\xc3\xa9", 5, 0, "caf\xc3\xa9");
	check_escape("a\0b", 3, 0, "a\\x00b");
	check_escape("x\xffy", 3, 0, "x\\xffy");
	check_escape("C:\\dir", 6, 0, "C:\\\\dir");
	check_escape("\\x41", 4, 0, "\\\\x41");
	/* overlong, surrogate, past U+10FFFF, truncated */
	check_escape("\xc0\xaf", 2, 0, "\\xc0\\xaf");
	check_escape("\xed\xa0\x80", 3, 0, "\\xed\\xa0\\x80");
	check_escape("\xf4\x90\x80\x80", 4, 0, "\\xf4\\x90\\x80\\x80");
	check_escape("\xe2\x82", 2, 0, "\\xe2\\x82");
	check_escape("\xf0\x9f\x98\x80", 4, 0, "\xf0\x9f\x98\x80");
	/* terminal text: escape sequences cannot reach the terminal */
	check_escape("\x1b[31mred\ttab", 12, GPUENV_ESC_CONTROL, "\\x1b[31mred\ttab");
	check_escape("\x1b[31m", 5, 0, "\x1b[31m");
}

static void test_oom_and_distance(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;

	gpuenv_ctx_init(&ctx);
	assert_int_equal(gpuenv_oom(&ctx, "reading the facts"), -ENOMEM);
	assert_int_equal(ctx.err.code, -ENOMEM);
	assert_string_equal(ctx.err.msg, "out of memory reading the facts");
	assert_int_equal(gpuenv_oom(&ctx, NULL), -ENOMEM);
	assert_string_equal(ctx.err.msg, "out of memory");
	assert_int_equal(gpuenv_oom(NULL, NULL), -ENOMEM);

	assert_int_equal(gpuenv_edit_distance("doctor", "doctor"), 0);
	assert_int_equal(gpuenv_edit_distance("docter", "doctor"), 1);
	assert_int_equal(gpuenv_edit_distance("", "abc"), 3);
	assert_int_equal(gpuenv_edit_distance("kitten", "sitting"), 3);
	char longs[100];
	memset(longs, 'a', 99);
	longs[99] = 0;
	assert_int_equal(gpuenv_edit_distance(longs, "a"), SIZE_MAX);
}


/* The string map: many keys through growth, replacement, absent keys, a key
 * that is a prefix of another, and a failed growth that leaves it usable. */
static void test_strmap(void **state)
{
	(void)state;
	gpuenv_ctx_t c;
	gpuenv_strmap_t m;
	static char keys[2000][16];
	bool found;

	gpuenv_ctx_init(&c);
	m = (gpuenv_strmap_t){ .ctx = &c };
	assert_null(gpuenv_strmap_get(&m, "x", 1, &found));
	assert_false(found);
	for (int i = 0; i < 2000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		assert_int_equal(gpuenv_strmap_put(&m, keys[i], strlen(keys[i]), (void *)(intptr_t)(i + 1)), 0);
	}
	assert_int_equal(m.n, 2000);
	for (int i = 0; i < 2000; i++) {
		assert_int_equal((intptr_t)gpuenv_strmap_get(&m, keys[i], strlen(keys[i]), &found), i + 1);
		assert_true(found);
	}
	assert_int_equal(gpuenv_strmap_put(&m, keys[7], strlen(keys[7]), NULL), 0);
	assert_int_equal(m.n, 2000);
	assert_null(gpuenv_strmap_get(&m, keys[7], strlen(keys[7]), &found));
	assert_true(found); /* present with a NULL value */
	assert_null(gpuenv_strmap_get(&m, "k", 1, &found)); /* a prefix of k1 */
	assert_false(found);
	gpuenv_strmap_free(&m);
	assert_int_equal(m.cap, 0);

	testutil_alloc_t t;
	testutil_alloc_reset(&t, 0, false);
	c.mem = testutil_allocator(&t);
	m = (gpuenv_strmap_t){ .ctx = &c };
	assert_int_equal(gpuenv_strmap_put(&m, "a", 1, NULL), -ENOMEM);
	assert_int_equal(c.err.code, -ENOMEM);
	assert_false(gpuenv_strmap_get(&m, "a", 1, &found) || found);
	testutil_alloc_reset(&t, TESTUTIL_NEVER, false);
	assert_int_equal(gpuenv_strmap_put(&m, "a", 1, keys[0]), 0);
	assert_ptr_equal(gpuenv_strmap_get(&m, "a", 1, &found), keys[0]);
	gpuenv_strmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_arena),
		cmocka_unit_test(test_buf_cap),
		cmocka_unit_test(test_alloc_failure),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_env_injection),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_text_escape),
		cmocka_unit_test(test_oom_and_distance),
		cmocka_unit_test(test_strmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
