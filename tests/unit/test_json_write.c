/* gpuenv_json_write (lib/formats/json_write.c) against jansson's own
 * json_dumps(v, JSON_INDENT(n)), byte for byte: every JSON file of the
 * source tree's tests and data (the facts snapshots among them), values
 * made at random (strings with every control byte and UTF-8 of every
 * length, reals from random bit patterns, integers at their limits,
 * nesting), indents 0, 2 and 4; text that is not UTF-8 refused. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/json.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static size_t nfiles, nvalues;

/* one value, three indents: equal to jansson, or the test fails naming it */
static void same(const json_t *v, const char *what)
{
	static const unsigned indents[] = { 0, 2, 4 };

	for (size_t i = 0; i < sizeof(indents) / sizeof(indents[0]); i++) {
		char *want = json_dumps(v, JSON_INDENT(indents[i]) | JSON_ENCODE_ANY);
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, &ctx, GPUENV_BUF_DEFAULT_MAX);
		assert_non_null(want);
		assert_int_equal(gpuenv_json_write(&b, v, indents[i]), 0);
		if (strlen(want) != b.len || memcmp(want, b.data, b.len) != 0) {
			fprintf(stderr, "%s, indent %u:\n--- jansson\n%s\n--- gpuenv\n%.*s\n", what, indents[i], want,
				(int)b.len, b.data);
			fail();
		}
		free(want);
		gpuenv_buf_free(&b);
	}
	nvalues++;
}

static int one_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t n = strlen(path);
	json_error_t e;
	json_t *v;

	(void)st;
	(void)ftw;
	if (flag != FTW_F || n < 5 || strcmp(path + n - 5, ".json") != 0)
		return 0;
	if (!(v = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e)))
		return 0; /* a deliberately broken fixture */
	same(v, path);
	json_decref(v);
	nfiles++;
	return 0;
}

static void test_files(void **state)
{
	const char *src = getenv("GPUENV_SRC");
	char dir[4096];

	(void)state;
	for (int k = 0; k < 2; k++) {
		snprintf(dir, sizeof(dir), "%s/%s", src ? src : ".", k ? "data" : "tests");
		assert_int_equal(nftw(dir, one_file, 16, FTW_PHYS), 0);
	}
	fprintf(stderr, "%zu JSON files of the source tree written as jansson does\n", nfiles);
	assert_true(nfiles >= 20);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* random valid UTF-8: ASCII (controls included), 2-, 3- and 4-byte forms */
static json_t *rand_string(void)
{
	char s[64];
	size_t n = 0, want = next() % 24;

	while (n < want && n + 4 < sizeof(s)) {
		unsigned long cp;
		switch (next() % 5) {
		case 0: cp = next() % 0x20; break;
		case 1: cp = 0x20 + next() % 0x60; break;
		case 2: cp = 0x80 + next() % 0x780; break;
		case 3: cp = 0x800 + next() % 0xf7ff; if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xe000; break;
		default: cp = 0x10000 + next() % 0x100000; break;
		}
		if (cp < 0x80) {
			s[n++] = (char)cp;
		} else if (cp < 0x800) {
			s[n++] = (char)(0xc0 | (cp >> 6));
			s[n++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			s[n++] = (char)(0xe0 | (cp >> 12));
			s[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			s[n++] = (char)(0x80 | (cp & 0x3f));
		} else {
			s[n++] = (char)(0xf0 | (cp >> 18));
			s[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			s[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			s[n++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	return json_stringn(s, n);
}

static json_t *rand_value(int depth)
{
	switch (next() % (depth > 5 ? 6 : 8)) {
	case 0: return json_null();
	case 1: return json_boolean(next() & 1);
	case 2: {
		static const json_int_t edge[] = { 0, -1, 1, INT64_MAX, INT64_MIN };
		return json_integer(next() & 1 ? edge[next() % 5] : (json_int_t)next());
	}
	case 3: {
		double d;
		uint64_t bits = next();
		memcpy(&d, &bits, sizeof(d));
		if (!isfinite(d) || next() % 3 == 0)
			d = (double)(int64_t)(next() % 2000001) / 1000.0 - 1000.0;
		return json_real(d);
	}
	case 4:
	case 5: return rand_string();
	case 6: {
		json_t *a = json_array();
		for (size_t i = next() % 5; i > 0; i--)
			json_array_append_new(a, rand_value(depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		for (size_t i = next() % 5; i > 0; i--) {
			json_t *k = rand_string();
			json_object_set_new(o, json_string_value(k), rand_value(depth + 1));
			json_decref(k);
		}
		return o;
	}
	}
}

static void test_random(void **state)
{
	(void)state;
	for (int i = 0; i < 3000; i++) {
		json_t *v = rand_value(0);
		char what[32];
		snprintf(what, sizeof(what), "random value %d", i);
		same(v, what);
		json_decref(v);
	}
	/* a key holding NUL (toml-test's valid/key/quoted-unicode) */
	json_t *o = json_object();
	json_object_setn_new_nocheck(o, "a\0b", 3, json_true());
	json_object_setn_new_nocheck(o, "\0", 1, json_null());
	same(o, "keys holding NUL");
	json_decref(o);
	/* reals whose text needs the ".0", an exponent, or both */
	static const double reals[] = { 0.0, -0.0, 1.0, 1e20, 1e21, 1e-7, 5e-324, 1.7976931348623157e308,
		0.1, 123456789012345678.0, -2.5e-300 };
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		json_t *v = json_real(reals[i]);
		same(v, "an edge real");
		json_decref(v);
	}
}

static void test_refused(void **state)
{
	json_t *o = json_object();
	gpuenv_buf_t b;

	(void)state;
	json_object_set_new(o, "bad", json_stringn_nocheck("\xff\xfe", 2));
	gpuenv_buf_init(&b, &ctx, GPUENV_BUF_DEFAULT_MAX);
	assert_int_equal(gpuenv_json_write(&b, o, 2), -EINVAL);
	assert_non_null(strstr(ctx.err.msg, "not UTF-8"));
	gpuenv_buf_free(&b);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_refused),
	};
	gpuenv_ctx_init(&ctx);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
