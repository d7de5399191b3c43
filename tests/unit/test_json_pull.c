/* The JSON pull parser (lib/formats/json_pull.c): tokens, strings and their
 * escapes, numbers, limits, errors with their position, skipping, and the
 * release of what was read (issue 22 item 16).  Its agreement with jansson
 * on any input is the fuzz target's (tests/fuzz/fuzz_json_pull.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/json_pull.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	return 0;
}

/* The tokens of text as a string: "{ k:a s:x i:1 r:0.5 t f n [ ] } END",
 * or "ERR line:col message" at the first error. */
static void tokens(const char *text, size_t n, char *out, size_t outsz)
{
	gpuenv_jp_t p;
	size_t o = 0;
	int t;

	out[0] = '\0';
	gpuenv_jp_init(&p, &ctx, gpuenv_str_n(text, n), "t.json", "bad");
	do {
		t = gpuenv_jp_next(&p);
		switch (t) {
		case GPUENV_JP_OBJECT: o += (size_t)snprintf(out + o, outsz - o, "{ "); break;
		case GPUENV_JP_OBJECT_END: o += (size_t)snprintf(out + o, outsz - o, "} "); break;
		case GPUENV_JP_ARRAY: o += (size_t)snprintf(out + o, outsz - o, "[ "); break;
		case GPUENV_JP_ARRAY_END: o += (size_t)snprintf(out + o, outsz - o, "] "); break;
		case GPUENV_JP_KEY:
			o += (size_t)snprintf(out + o, outsz - o, "k:" GPUENV_STR_FMT " ", GPUENV_STR_ARG(p.str));
			break;
		case GPUENV_JP_STRING:
			o += (size_t)snprintf(out + o, outsz - o, "s:" GPUENV_STR_FMT " ", GPUENV_STR_ARG(p.str));
			break;
		case GPUENV_JP_INTEGER: o += (size_t)snprintf(out + o, outsz - o, "i:%lld ", (long long)p.i); break;
		case GPUENV_JP_REAL: o += (size_t)snprintf(out + o, outsz - o, "r:%g ", p.d); break;
		case GPUENV_JP_TRUE: o += (size_t)snprintf(out + o, outsz - o, "t "); break;
		case GPUENV_JP_FALSE: o += (size_t)snprintf(out + o, outsz - o, "f "); break;
		case GPUENV_JP_NULL: o += (size_t)snprintf(out + o, outsz - o, "n "); break;
		case GPUENV_JP_END: o += (size_t)snprintf(out + o, outsz - o, "END"); break;
		default:
			assert_int_equal(t, GPUENV_ESYNTAX);
			assert_int_equal(ctx.err.code, t);
			assert_string_equal(ctx.err.file, "t.json");
			snprintf(out + o, outsz - o, "ERR %u:%u %s", ctx.err.line, ctx.err.col, ctx.err.msg);
		}
	} while (t > 0);
	/* the end and an error stay */
	assert_int_equal(gpuenv_jp_next(&p), t);
	gpuenv_jp_free(&p);
}

static void expect(const char *text, const char *want)
{
	char got[4096];

	tokens(text, strlen(text), got, sizeof(got));
	if (strncmp(got, want, strlen(want))) {
		fprintf(stderr, "text %s\n got  %s\n want %s\n", text, got, want);
		fail();
	}
}

static void test_tokens(void **state)
{
	(void)state;
	expect("{\"a\": [1, -2, 0.5, true, false, null, \"x\"], \"b\": {}}",
		"{ k:a [ i:1 i:-2 r:0.5 t f n s:x ] k:b { } } END");
	expect(" \t\r\n[]\n", "[ ] END");
	expect("\"top\"", "s:top END");
	expect("-0", "i:0 END");
	/* a repeated key is given twice: the caller decides */
	expect("{\"a\":1,\"a\":2}", "{ k:a i:1 k:a i:2 } END");
	expect("[9223372036854775807,-9223372036854775808]", "[ i:9223372036854775807 i:-9223372036854775808 ] END");
	expect("[1e2,1E-2,-1.5e+3,1e-400]", "[ r:100 r:0.01 r:-1500 r:0 ] END");
}

static void test_strings(void **state)
{
	(void)state;
	/* every escape, and the surrogate pair of U+1F600 */
	expect("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t|\\u00e9\\u20AC\\ud83d\\ude00\"]",
		"[ s:\"\\/\b\f\n\r\t|\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 ] END");
	/* UTF-8 as it is, without a copy when there is no escape */
	{
		const char *t = "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"";
		gpuenv_jp_t p;
		gpuenv_jp_init(&p, &ctx, gpuenv_str(t), "t.json", NULL);
		assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_STRING);
		assert_ptr_equal(p.str.ptr, t + 1);
		assert_int_equal(p.str.len, strlen(t) - 2);
		gpuenv_jp_free(&p);
	}
	expect("\"\\ud83d\"", "ERR 1:2 bad: \\uD83D is a high surrogate without a low one");
	expect("\"\\ud83d\\u0041\"", "ERR 1:2 bad: \\uD83D is a high surrogate");
	expect("\"\\ude00\"", "ERR 1:2 bad: \\uDE00 is a low surrogate without a high one");
	expect("\"a\\u0000\"", "ERR 1:3 bad: \\u0000 in a string is not accepted");
	expect("\"\\x\"", "ERR 1:2 bad: invalid escape '\\x'");
	expect("\"\\u12\"", "ERR 1:2 bad: \\u must be followed by four hex digits");
	expect("\"a\tb\"", "ERR 1:3 bad: a control character (0x09) in a string");
	/* not UTF-8: an overlong form, a surrogate, past U+10FFFF, a cut sequence */
	expect("[\"\xc0\x80\"]", "[ ERR 1:3 bad: a string is not valid UTF-8 (byte 0xc0)");
	expect("[\"\xed\xa0\x80\"]", "[ ERR 1:3 bad: a string is not valid UTF-8 (byte 0xed)");
	expect("[\"\xf4\x90\x80\x80\"]", "[ ERR 1:3 bad: a string is not valid UTF-8 (byte 0xf4)");
	expect("[\"\xc3\"]", "[ ERR 1:3 bad: a string is not valid UTF-8");
	expect("\"abc", "ERR 1:1 bad: a string is not closed");
}

static void test_errors(void **state)
{
	(void)state;
	/* where: lines, and columns in characters (é is one) */
	expect("{\"a\": 1,\n \"\xc3\xa9\": [1 2]}", "{ k:a i:1 k:\xc3\xa9 [ i:1 ERR 2:10 bad: '2' where ',' or ']' was expected");
	expect("", "ERR 1:1 bad: the text ends where a value");
	expect("{\"meta\": {\"api-version\": \"1.1\"}, \"files\": [",
		"{ k:meta { k:api-version s:1.1 } k:files [ ERR 1:44 bad: the text ends where a value");
	expect("{\"a\" 1}", "{ k:a ERR 1:6 bad: '1' where ':' after a key was expected");
	expect("{\"a\":1,}", "{ k:a i:1 ERR 1:8 bad: '}' where a key (a string) after ','");
	expect("[1,]", "[ i:1 ERR 1:4 bad: ']' where a value");
	expect("{1:2}", "{ ERR 1:2 bad: '1' where a key (a string) or '}'");
	expect("{} x", "{ } ERR 1:4 bad: more text after the end of the value");
	expect("[01]", "[ i:0 ERR 1:3 bad: '1' where ',' or ']'");
	expect("[1.]", "[ ERR 1:4 bad: a digit must follow a number's '.'");
	expect("[-]", "[ ERR 1:3 bad: a digit must follow '-'");
	expect("[1e]", "[ ERR 1:4 bad: a digit must follow a number's exponent");
	expect("[tru]", "[ ERR 1:2 bad: 't' where a value");
	expect("[9223372036854775808]", "[ ERR 1:2 bad: the integer 9223372036854775808 is out of range");
	expect("[1e309]", "[ ERR 1:2 bad: the number 1e309 is too large for a double");
	expect("\xef\xbb\xbf{}", "ERR 1:1 bad: byte 0xef where a value");
	/* depth: jansson's 2048 */
	char deep[2 * 2049 + 1];
	memset(deep, '[', 2048);
	memset(deep + 2048, ']', 2048);
	deep[4096] = '\0';
	char got[16384];
	tokens(deep, 4096, got, sizeof(got));
	assert_non_null(strstr(got, "END"));
	memset(deep, '[', 2049);
	memset(deep + 2049, ']', 2049);
	tokens(deep, 4098, got, sizeof(got));
	assert_non_null(strstr(got, "ERR 1:2049 bad: more than 2048 arrays and objects"));
	/* a NUL byte is not white space */
	tokens("[1,\0 2]", 7, got, sizeof(got));
	assert_non_null(strstr(got, "ERR 1:4 bad: byte 0x00 where a value"));
}

static void test_skip(void **state)
{
	(void)state;
	gpuenv_jp_t p;
	const char *t = "{\"skip\": {\"a\": [1, {\"b\": \"\\u00e9\"}], \"c\": null}, \"keep\": 5}";

	gpuenv_jp_init(&p, &ctx, gpuenv_str(t), "t.json", NULL);
	assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_OBJECT);
	assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_KEY);
	assert_int_equal(gpuenv_jp_skip(&p, gpuenv_jp_next(&p)), 0);
	assert_int_equal(p.depth, 1);
	assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_KEY);
	assert_true(gpuenv_str_eq_cstr(p.str, "keep"));
	assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_INTEGER);
	assert_int_equal(gpuenv_jp_skip(&p, GPUENV_JP_INTEGER), 0); /* a scalar: nothing more */
	assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_OBJECT_END);
	assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_END);
	gpuenv_jp_free(&p);
	/* skipping still checks every byte */
	gpuenv_jp_init(&p, &ctx, gpuenv_str("[{\"a\": [1, 2,]}]"), "t.json", NULL);
	assert_int_equal(gpuenv_jp_next(&p), GPUENV_JP_ARRAY);
	assert_int_equal(gpuenv_jp_skip(&p, gpuenv_jp_next(&p)), GPUENV_ESYNTAX);
	assert_int_equal(ctx.err.col, 14);
	gpuenv_jp_free(&p);
}

/* A big text read with its memory released behind the parser: the same
 * tokens, and an error past the released part keeps its line and column. */
static void test_release(void **state)
{
	(void)state;
	size_t n = 0, cap = (size_t)8 << 20;
	char *a = malloc(cap), *b = malloc(cap);
	gpuenv_jp_t p, q;
	int t, u;
	long count = 0;

	assert_non_null(a);
	assert_non_null(b);
	n += (size_t)snprintf(a + n, cap - n, "[\n");
	for (int i = 0; n < cap - 4096; i++)
		n += (size_t)snprintf(a + n, cap - n, "{\"n\": %d, \"s\": \"caf\\u00e9 %d \xf0\x9f\x98\x80\"},\n", i, i);
	n += (size_t)snprintf(a + n, cap - n, "1 2]"); /* an error on the last line */
	memcpy(b, a, n);
	gpuenv_jp_init(&p, &ctx, gpuenv_str_n(a, n), "t.json", NULL);
	gpuenv_jp_init(&q, &ctx, gpuenv_str_n(b, n), "t.json", NULL);
	gpuenv_jp_release(&q, b);
	do {
		t = gpuenv_jp_next(&p);
		gpuenv_error_t e = ctx.err;
		u = gpuenv_jp_next(&q);
		assert_int_equal(t, u);
		if (t < 0) {
			assert_int_equal(e.line, ctx.err.line);
			assert_int_equal(e.col, ctx.err.col);
			assert_string_equal(e.msg, ctx.err.msg);
		} else if (t == GPUENV_JP_STRING || t == GPUENV_JP_KEY) {
			assert_int_equal(p.str.len, q.str.len);
			assert_memory_equal(p.str.ptr, q.str.ptr, p.str.len);
		}
		count++;
	} while (t > 0);
	assert_int_equal(t, GPUENV_ESYNTAX);
	assert_true(count > 500000);
	assert_true(q.released > ((size_t)6 << 20)); /* the memory was given back */
	gpuenv_jp_free(&p);
	gpuenv_jp_free(&q);
	free(a);
	free(b);
}

/* Every allocation failing in turn (strings with escapes are copied): -ENOMEM. */
static void test_oom(void **state)
{
	(void)state;
	const char *t = "{\"a\\u00e9\": [\"x\\ny\", 1.5, {\"b\": \"\\t\"}]}";
	for (long k = 0;; k++) {
		testutil_alloc_t ta;
		gpuenv_ctx_t c;
		gpuenv_jp_t p;
		int r;
		gpuenv_ctx_init(&c);
		testutil_alloc_reset(&ta, k, false);
		c.mem = testutil_allocator(&ta);
		gpuenv_jp_init(&p, &c, gpuenv_str(t), "t.json", NULL);
		while ((r = gpuenv_jp_next(&p)) > 0)
			;
		gpuenv_jp_free(&p);
		if (!ta.failures) {
			assert_int_equal(r, GPUENV_JP_END);
			assert_true(k > 0);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		assert_int_equal(c.err.code, -ENOMEM);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_tokens, setup),
		cmocka_unit_test_setup(test_strings, setup),
		cmocka_unit_test_setup(test_errors, setup),
		cmocka_unit_test_setup(test_skip, setup),
		cmocka_unit_test_setup(test_release, setup),
		cmocka_unit_test(test_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
