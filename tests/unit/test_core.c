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
	/* a buffer's text is written only when no append failed: a cut text
	 * never replaces the file */
	gpuenv_buf_init(&b, &ctx, 8);
	assert_int_equal(gpuenv_buf_puts(&b, "a = 3\n"), 0);
	assert_int_equal(gpuenv_fs_write_buf(&ctx, path, &b, 0644, 0), 0);
	(void)gpuenv_buf_puts(&b, "b = 4\n"); /* over the 8-byte cap */
	assert_int_equal(gpuenv_fs_write_buf(&ctx, path, &b, 0644, 0), GPUENV_ETOOBIG);
	assert_int_equal(ctx.err.code, GPUENV_ETOOBIG);
	gpuenv_buf_free(&b);
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_fs_read(&ctx, path, 100, &b), 0);
	assert_string_equal(b.data, "a = 3\n");
	gpuenv_buf_free(&b);
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

/* Every code in GPUENV_ERRORS has its own text: the table that defines the
 * codes is the one gpuenv_strerror reads, so none says "unknown error". */
static void test_error_table(void **state)
{
	(void)state;
#define CODE(name, value, text) { name, #name, text },
	static const struct {
		int code;
		const char *name, *text;
	} codes[] = { GPUENV_ERRORS(CODE) };
#undef CODE
	size_t n = sizeof(codes) / sizeof(codes[0]);
	assert_true(n >= 16);
	for (size_t i = 0; i < n; i++) {
		assert_true(codes[i].code < GPUENV_E_BASE);
		assert_string_equal(gpuenv_strerror(codes[i].code), codes[i].text);
		assert_string_not_equal(codes[i].text, "unknown error");
		for (size_t j = 0; j < i; j++) {
			assert_int_not_equal(codes[i].code, codes[j].code);
			assert_string_not_equal(codes[i].text, codes[j].text);
		}
	}
	assert_string_equal(gpuenv_strerror(GPUENV_ENOSOLUTION), "no versions satisfy the requirements");
	assert_string_equal(gpuenv_strerror(GPUENV_EBUILD), "source build failed");
	assert_string_equal(gpuenv_strerror(-4250), "unknown error");
	assert_string_equal(gpuenv_strerror(1), "unknown error");
}

static void test_fail_prefix(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	char out[600];
	gpuenv_ctx_init(&ctx);
	gpuenv_fail(&ctx, GPUENV_ESPEC, NULL, 0, 4, "expected a version");
	gpuenv_hint(&ctx, "write '>=2.1'");
	int r = gpuenv_fail_prefix(&ctx, GPUENV_EFORMAT, "pyproject.toml", 3, 9, "%s '%s'",
		"requires-python", "2.1");
	assert_int_equal(r, GPUENV_EFORMAT);
	assert_int_equal(ctx.err.code, GPUENV_EFORMAT);
	gpuenv_error_format(&ctx.err, out, sizeof(out));
	assert_string_equal(out, "pyproject.toml:3:9: requires-python '2.1': expected a version");
	assert_string_equal(ctx.err.hint, "write '>=2.1'");
	/* the file the inner error named can be kept by passing it back */
	gpuenv_fail_prefix(&ctx, GPUENV_EFORMAT, ctx.err.file, 0, 0, "again");
	assert_string_equal(ctx.err.file, "pyproject.toml");
	assert_string_equal(ctx.err.msg, "again: requires-python '2.1': expected a version");
	/* an inner error without a message is named by its code */
	gpuenv_error_clear(&ctx);
	ctx.err.code = GPUENV_EVERSION;
	gpuenv_fail_prefix(&ctx, GPUENV_EVERSION, NULL, 0, 0, "torch");
	assert_string_equal(ctx.err.msg, "torch: invalid version");
	assert_string_equal(ctx.err.file, "");
	/* a prefix that fills the message is cut, never overflows */
	char big[700];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	gpuenv_fail_prefix(&ctx, GPUENV_EVERSION, NULL, 0, 0, "%s", big);
	assert_int_equal(strlen(ctx.err.msg), sizeof(ctx.err.msg) - 1);
}

static void test_array_grow(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_ctx_init(&ctx);
	int *v = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < 100; i++) {
		assert_int_equal(gpuenv_array_grow(&ctx, NULL, &v, &cap, i + 1, sizeof(*v), 100, "ints"), 0);
		assert_true(cap >= i + 1 && cap <= 100);
		assert_int_equal(v[i], 0); /* new elements are zeroed */
		v[i] = (int)i;
	}
	assert_int_equal(cap, 100); /* the last doubling stops at the cap */
	int *keep = v;
	assert_int_equal(gpuenv_array_grow(&ctx, NULL, &v, &cap, 101, sizeof(*v), 100, "ints"),
		GPUENV_ETOOBIG);
	assert_string_equal(ctx.err.msg, "more than 100 ints");
	assert_ptr_equal(v, keep);
	assert_int_equal(cap, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(v[i], i);
	gpuenv_free(&ctx, v);
	/* element size times count overflowing is a size error, not a wrap */
	char *c = NULL;
	cap = 0;
	assert_int_equal(gpuenv_array_grow(&ctx, NULL, &c, &cap, SIZE_MAX / 2, 4, SIZE_MAX, "big"),
		GPUENV_ETOOBIG);
	assert_null(c);
	/* from an arena: the old array stays, the copy carries the elements */
	gpuenv_arena_t a;
	gpuenv_arena_init(&a, &ctx, 0);
	GPUENV_VEC(gpuenv_str_t) sv = { 0 };
	for (int i = 0; i < 50; i++) {
		gpuenv_str_t *e = gpuenv_vec_push(&ctx, &a, &sv, 1000, "strings");
		assert_non_null(e);
		assert_null(e->ptr);
		*e = gpuenv_str("x");
	}
	assert_int_equal(sv.n, 50);
	assert_true(sv.cap >= 50);
	for (int i = 0; i < 50; i++)
		assert_string_equal(sv.v[i].ptr, "x");
	gpuenv_arena_free(&a);
	/* every allocation failing: -ENOMEM with the story, the vector unchanged */
	for (long at = 0; at < 4; at++) {
		testutil_alloc_t bud = { .fail_at = at };
		ctx.mem = testutil_allocator(&bud);
		GPUENV_VEC(double) dv = { 0 };
		double *d = (double *)1;
		while (dv.n < 1000 && (d = gpuenv_vec_push(&ctx, NULL, &dv, 1000, "numbers")))
			*d = 1.5;
		assert_null(d);
		assert_int_equal(ctx.err.code, -ENOMEM);
		assert_string_equal(ctx.err.msg, "out of memory numbers");
		for (size_t i = 0; i < dv.n; i++)
			assert_true(dv.v[i] == 1.5);
		gpuenv_free(&ctx, dv.v);
	}
}

/* A buffer that failed stays failed: later appends are no-ops, the one
 * check (gpuenv_buf_failed) reports the first failure, steal gives NULL. */
static void test_buf_sticky(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_buf_t b;
	gpuenv_ctx_init(&ctx);
	gpuenv_buf_init(&b, &ctx, 8);
	assert_int_equal(gpuenv_buf_puts(&b, "abc"), 0);
	assert_int_equal(gpuenv_buf_failed(&b), 0);
	assert_int_equal(gpuenv_buf_puts(&b, "defghijk"), GPUENV_ETOOBIG);
	/* "z" would fit, but the text already lost a part: nothing more goes in */
	assert_int_equal(gpuenv_buf_putc(&b, 'z'), GPUENV_ETOOBIG);
	assert_int_equal(gpuenv_buf_printf(&b, "%d", 1), GPUENV_ETOOBIG);
	assert_int_equal(gpuenv_buf_append(&b, "", 0), GPUENV_ETOOBIG);
	assert_int_equal(gpuenv_buf_reserve(&b, 1), GPUENV_ETOOBIG);
	assert_string_equal(b.data, "abc");
	/* the check puts the story back when something else failed meanwhile */
	gpuenv_fail(&ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "other");
	assert_int_equal(gpuenv_buf_failed(&b), GPUENV_ETOOBIG);
	assert_int_equal(ctx.err.code, GPUENV_ETOOBIG);
	assert_null(gpuenv_buf_steal(&b, NULL));
	assert_null(b.data);
	/* after steal (as after reset and free) the buffer starts over */
	assert_int_equal(gpuenv_buf_failed(&b), 0);
	assert_int_equal(gpuenv_buf_puts(&b, "ok"), 0);
	gpuenv_buf_reset(&b);
	assert_int_equal(gpuenv_buf_failed(&b), 0);
	gpuenv_buf_free(&b);
	/* a reserve that fails loses no text: not sticky */
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_buf_reserve(&b, SIZE_MAX), GPUENV_ETOOBIG);
	assert_int_equal(gpuenv_buf_failed(&b), 0);
	gpuenv_buf_free(&b);
	/* out of memory at any allocation: the appends that follow are no-ops */
	for (long at = 0; at < 3; at++) {
		testutil_alloc_t bud = { .fail_at = at };
		ctx.mem = testutil_allocator(&bud);
		gpuenv_buf_init(&b, &ctx, 0);
		for (int i = 0; i < 1000; i++)
			(void)gpuenv_buf_printf(&b, "line %d\n", i);
		long calls = bud.calls;
		(void)gpuenv_buf_puts(&b, "more");
		assert_int_equal(bud.calls, calls); /* no allocation tried again */
		assert_int_equal(gpuenv_buf_failed(&b), -ENOMEM);
		assert_null(gpuenv_buf_steal(&b, NULL));
		gpuenv_buf_free(&b);
	}
}

static void test_ascii(void **state)
{
	(void)state;
	for (int c = -128; c < 256; c++) {
		bool in = c >= 0 && c < 128;
		unsigned char u = (unsigned char)c;
		/* ctype's answers in the C locale, for ASCII; nothing else counts */
		if (!in) {
			assert_false(gpuenv_is_digit(c) || gpuenv_is_alpha(c) || gpuenv_is_alnum(c) ||
				     gpuenv_is_space(c) || gpuenv_is_xdigit(c) || gpuenv_is_blank(c));
			assert_int_equal(gpuenv_to_lower(c), c);
			assert_int_equal(gpuenv_to_upper(c), c);
			continue;
		}
		assert_int_equal(gpuenv_is_digit(c), strchr("0123456789", c) && c);
		assert_int_equal(gpuenv_is_lower(c), strchr("abcdefghijklmnopqrstuvwxyz", c) && c);
		assert_int_equal(gpuenv_is_upper(c), strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ", c) && c);
		assert_int_equal(gpuenv_is_alpha(c), gpuenv_is_lower(c) || gpuenv_is_upper(c));
		assert_int_equal(gpuenv_is_alnum(c), gpuenv_is_alpha(c) || gpuenv_is_digit(c));
		assert_int_equal(gpuenv_is_xdigit(c), gpuenv_hex_digit((char)u) >= 0);
		assert_int_equal(gpuenv_is_space(c), strchr(" \t\n\v\f\r", c) && c);
		assert_int_equal(gpuenv_is_blank(c), c == ' ' || c == '\t');
		assert_int_equal(gpuenv_to_lower(c), gpuenv_is_upper(c) ? c + 32 : c);
		assert_int_equal(gpuenv_to_upper(c), gpuenv_is_lower(c) ? c - 32 : c);
	}
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
		cmocka_unit_test(test_error_table),
		cmocka_unit_test(test_fail_prefix),
		cmocka_unit_test(test_array_grow),
		cmocka_unit_test(test_buf_sticky),
		cmocka_unit_test(test_ascii),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
