/* Unit tests for protobuf's text format (lib/formats/pbtxt.c): Triton's
 * config.pbtxt shapes (messages with and without ':', lists of scalars and
 * of messages, comments, separators), strings and their escapes, numbers,
 * the typed getters, positions in errors, the limits, and every allocation
 * failing in turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/pbtxt.h"

#include "testutil.h"

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

static const gpuenv_pbtxt_msg_t *parse_ok(const char *text)
{
	const gpuenv_pbtxt_msg_t *m = NULL;
	int r = gpuenv_pbtxt_parse(&ctx, &arena, "config.pbtxt", text, strlen(text), &m);
	if (r) {
		char e[1024];
		gpuenv_error_format(&ctx.err, e, sizeof e);
		fail_msg("%s", e);
	}
	assert_non_null(m);
	return m;
}

/* text fails with GPUENV_ESYNTAX at line:col, msg containing want */
static void parse_bad(const char *text, int code, unsigned line, unsigned col, const char *want)
{
	const gpuenv_pbtxt_msg_t *m = NULL;
	int r = gpuenv_pbtxt_parse(&ctx, &arena, "config.pbtxt", text, strlen(text), &m);
	assert_int_equal(r, code);
	assert_null(m);
	assert_string_equal(ctx.err.file, "config.pbtxt");
	if (line) {
		if (ctx.err.line != line || ctx.err.col != col)
			fail_msg("%s: at %u:%u, wanted %u:%u (%s)", text, ctx.err.line, ctx.err.col, line, col,
				ctx.err.msg);
	}
	if (!strstr(ctx.err.msg, want))
		fail_msg("%s: message '%s' lacks '%s'", text, ctx.err.msg, want);
}

static const char triton[] =
	"# a Triton model configuration\n"
	"name: \"densenet_onnx\"\n"
	"platform: \"onnxruntime_onnx\"\n"
	"max_batch_size : 8\n"
	"input [\n"
	"  {\n"
	"    name: \"data_0\"\n"
	"    data_type: TYPE_FP32\n"
	"    format: FORMAT_NCHW\n"
	"    dims: [ 3, 224, 224 ]\n"
	"    reshape: { shape: [ 1, 3, 224, 224 ] }\n"
	"  }\n"
	"]\n"
	"output {\n"
	"  name: 'fc6_1'; data_type: TYPE_FP32, dims: -1\n"
	"  label_filename: \"densenet_labels.txt\"\n"
	"}\n"
	"instance_group [ { count: 2 kind: KIND_GPU gpus: [ 0, 1 ] } ]\n"
	"dynamic_batching < preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 >\n"
	"parameters { key: \"x\" value: { string_value: \"a\" \"b\" } }\n";

static void test_triton_config(void **state)
{
	(void)state;
	const gpuenv_pbtxt_msg_t *m = parse_ok(triton);
	const gpuenv_pbtxt_field_t *f;
	size_t n;
	int64_t v;

	f = gpuenv_pbtxt_find(m, "name", &n);
	assert_int_equal(n, 1);
	assert_int_equal(f->kind, GPUENV_PBTXT_STRING);
	assert_string_equal(f->value, "densenet_onnx");
	assert_int_equal(f->line, 2);
	assert_int_equal(f->col, 1);
	assert_int_equal(f->vcol, 7);
	f = gpuenv_pbtxt_find(m, "max_batch_size", NULL);
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", f, &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(f->line, 4);

	f = gpuenv_pbtxt_find(m, "input", &n);
	assert_int_equal(n, 1);
	assert_int_equal(f->kind, GPUENV_PBTXT_MESSAGE);
	assert_int_equal(f->msg->line, 6);
	assert_int_equal(f->msg->col, 3);
	const gpuenv_pbtxt_msg_t *in = f->msg;
	assert_string_equal(gpuenv_pbtxt_find(in, "data_type", NULL)->value, "TYPE_FP32");
	assert_int_equal(gpuenv_pbtxt_find(in, "data_type", NULL)->kind, GPUENV_PBTXT_IDENT);
	gpuenv_pbtxt_find(in, "dims", &n);
	assert_int_equal(n, 3);
	const int64_t dims[] = { 3, 224, 224 };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", gpuenv_pbtxt_nth(in, "dims", i), &v), 0);
		assert_int_equal(v, dims[i]);
	}
	assert_null(gpuenv_pbtxt_nth(in, "dims", 3));
	f = gpuenv_pbtxt_find(in, "reshape", NULL);
	gpuenv_pbtxt_find(f->msg, "shape", &n);
	assert_int_equal(n, 4);

	f = gpuenv_pbtxt_find(m, "output", NULL);
	assert_string_equal(gpuenv_pbtxt_find(f->msg, "name", NULL)->value, "fc6_1");
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", gpuenv_pbtxt_find(f->msg, "dims", NULL), &v), 0);
	assert_int_equal(v, -1);

	f = gpuenv_pbtxt_find(m, "instance_group", &n);
	assert_int_equal(n, 1);
	gpuenv_pbtxt_find(f->msg, "gpus", &n);
	assert_int_equal(n, 2);
	assert_string_equal(gpuenv_pbtxt_find(f->msg, "kind", NULL)->value, "KIND_GPU");
	f = gpuenv_pbtxt_find(m, "dynamic_batching", NULL);
	assert_int_equal(f->kind, GPUENV_PBTXT_MESSAGE);
	gpuenv_pbtxt_find(f->msg, "preferred_batch_size", &n);
	assert_int_equal(n, 2);
	f = gpuenv_pbtxt_find(m, "parameters", NULL);
	f = gpuenv_pbtxt_find(gpuenv_pbtxt_find(f->msg, "value", NULL)->msg, "string_value", NULL);
	assert_string_equal(f->value, "ab"); /* adjacent strings joined */
	assert_int_equal(m->n, 8);
}

static void test_lists_of_messages(void **state)
{
	(void)state;
	const gpuenv_pbtxt_msg_t *m = parse_ok("input [ { name: \"a\" }, { name: \"b\" } ]\n"
					       "input: [ <name: \"c\"> ]\nempty: []\nx [ ]\n");
	size_t n;
	gpuenv_pbtxt_find(m, "input", &n);
	assert_int_equal(n, 3);
	assert_string_equal(gpuenv_pbtxt_find(gpuenv_pbtxt_nth(m, "input", 1)->msg, "name", NULL)->value, "b");
	assert_string_equal(gpuenv_pbtxt_find(gpuenv_pbtxt_nth(m, "input", 2)->msg, "name", NULL)->value, "c");
	assert_null(gpuenv_pbtxt_find(m, "empty", &n));
	assert_int_equal(n, 0);
	assert_int_equal(m->n, 3);
	m = parse_ok("");
	assert_int_equal(m->n, 0);
	m = parse_ok("  # only a comment\n");
	assert_int_equal(m->n, 0);
	m = parse_ok("[ext.field]: 3 a{}");
	assert_string_equal(m->fields[0].name, "[ext.field]");
	assert_int_equal(m->fields[1].msg->n, 0);
}

static void test_strings(void **state)
{
	(void)state;
	const gpuenv_pbtxt_msg_t *m = parse_ok(
		"a: \"tab\\there\\n\" b: 'it\\'s' c: \"\\101\\x42\\u00e9\\U0001F600\" d: \"\\0z\" e: \"# not a comment\"");
	assert_string_equal(m->fields[0].value, "tab\there\n");
	assert_string_equal(m->fields[1].value, "it's");
	assert_string_equal(m->fields[2].value, "AB\xc3\xa9\xf0\x9f\x98\x80");
	assert_int_equal(m->fields[3].len, 2);
	assert_memory_equal(m->fields[3].value, "\0z", 2);
	assert_string_equal(m->fields[4].value, "# not a comment");
}

static void test_numbers(void **state)
{
	(void)state;
	const gpuenv_pbtxt_msg_t *m = parse_ok(
		"a: 0x1F b: 017 c: -12 d: 1.5e-3 e: .5 f: -inf g: nan h: 2.0f i: - 4 j: true k: 9223372036854775807\n"
		"l: -9223372036854775808 m: 9223372036854775808 n: 1.5");
	int64_t v;
	bool b;

	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[0], &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[1], &v), 0);
	assert_int_equal(v, 15);
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[2], &v), 0);
	assert_int_equal(v, -12);
	assert_string_equal(m->fields[3].value, "1.5e-3");
	assert_int_equal(m->fields[3].kind, GPUENV_PBTXT_NUMBER);
	assert_string_equal(m->fields[4].value, ".5");
	assert_string_equal(m->fields[5].value, "-inf");
	assert_int_equal(m->fields[5].kind, GPUENV_PBTXT_NUMBER);
	assert_int_equal(m->fields[6].kind, GPUENV_PBTXT_IDENT);
	assert_string_equal(m->fields[7].value, "2.0f");
	assert_string_equal(m->fields[8].value, "-4");
	assert_int_equal(gpuenv_pbtxt_bool(&ctx, "c", &m->fields[9], &b), 0);
	assert_true(b);
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[10], &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[11], &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[12], &v), GPUENV_ETYPE);
	assert_non_null(strstr(ctx.err.msg, "64 bits"));
	assert_int_equal(ctx.err.line, 2);
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[13], &v), GPUENV_ETYPE);
	assert_non_null(strstr(ctx.err.msg, "expected an integer, got '1.5'"));
	assert_int_equal(gpuenv_pbtxt_int(&ctx, "c", &m->fields[9], &v), GPUENV_ETYPE);
	assert_non_null(strstr(ctx.err.msg, "got an identifier"));
	assert_int_equal(gpuenv_pbtxt_bool(&ctx, "c", &m->fields[0], &b), GPUENV_ETYPE);
}

static void test_errors(void **state)
{
	(void)state;
	parse_bad("name: \"x", GPUENV_ESYNTAX, 1, 7, "not closed before the end of the file");
	parse_bad("name: \"x\ny: 1", GPUENV_ESYNTAX, 1, 7, "not closed before the end of the line");
	parse_bad("input {\n  name: \"a\"\n", GPUENV_ESYNTAX, 1, 7, "'{' is not closed");
	parse_bad("a: 1\n}\n", GPUENV_ESYNTAX, 2, 1, "'}' without an opening '{'");
	parse_bad("max_batch_size 8", GPUENV_ESYNTAX, 1, 1, "expected ':' or '{' after the field name 'max_batch_size'");
	parse_bad("a: ", GPUENV_ESYNTAX, 1, 1, "the file ends after the field name 'a'");
	parse_bad("a: }", GPUENV_ESYNTAX, 1, 4, "expected a value after 'a:'");
	parse_bad("dims: [1, 2", GPUENV_ESYNTAX, 1, 7, "a list is not closed");
	parse_bad("dims: [1 2]", GPUENV_ESYNTAX, 1, 10, "expected ',' or ']'");
	parse_bad("dims [1, 2]", GPUENV_ESYNTAX, 1, 1, "needs a ':'");
	parse_bad("dynamic_batching [\n  preferred_batch_size: [8, 16]\n]", GPUENV_ESYNTAX, 1, 1,
		"'dynamic_batching [ ... ]' holds fields, not messages");
	parse_bad("a: 12abc", GPUENV_ESYNTAX, 1, 4, "'12abc' is not a number");
	parse_bad("a: 1e", GPUENV_ESYNTAX, 1, 4, "is not a number");
	parse_bad("a: -foo", GPUENV_ESYNTAX, 1, 4, "'-' before an identifier");
	parse_bad("a: \"\\q\"", GPUENV_ESYNTAX, 1, 5, "unknown escape \\q");
	parse_bad("a: \"\\777\"", GPUENV_ESYNTAX, 1, 5, "more than one byte");
	parse_bad("a: \"\\ud800\"", GPUENV_ESYNTAX, 1, 5, "not a Unicode scalar value");
	parse_bad("a: \"\\u12\"", GPUENV_ESYNTAX, 1, 5, "needs 4 hex digits");
	parse_bad("= 3", GPUENV_ESYNTAX, 1, 1, "expected a field name, found '='");
	parse_bad("[ext.x: 3", GPUENV_ESYNTAX, 1, 1, "not closed with ']'");
}

static void test_nul_and_limits(void **state)
{
	(void)state;
	const gpuenv_pbtxt_msg_t *m;
	static const char nul[] = "a: 1\nbb\0: 2";
	assert_int_equal(gpuenv_pbtxt_parse(&ctx, &arena, "f", nul, sizeof nul - 1, &m), GPUENV_ESYNTAX);
	assert_int_equal(ctx.err.line, 2);
	assert_int_equal(ctx.err.col, 3);
	assert_non_null(strstr(ctx.err.msg, "NUL"));

	/* nesting past the cap */
	size_t depth = GPUENV_PBTXT_MAX_DEPTH + 5, k = 0;
	char *deep = malloc(depth * 4 + 1);
	assert_non_null(deep);
	for (size_t i = 0; i < depth; i++)
		deep[k++] = 'a', deep[k++] = '{';
	for (size_t i = 0; i < depth; i++)
		deep[k++] = '}';
	assert_int_equal(gpuenv_pbtxt_parse(&ctx, &arena, "f", deep, k, &m), GPUENV_ETOOBIG);
	assert_non_null(strstr(ctx.err.msg, "nested more than"));
	/* at the cap: fine */
	k = 0;
	for (size_t i = 0; i < GPUENV_PBTXT_MAX_DEPTH; i++)
		deep[k++] = 'a', deep[k++] = '{';
	for (size_t i = 0; i < GPUENV_PBTXT_MAX_DEPTH; i++)
		deep[k++] = '}';
	assert_int_equal(gpuenv_pbtxt_parse(&ctx, &arena, "f", deep, k, &m), 0);
	free(deep);

	assert_int_equal(gpuenv_pbtxt_parse(&ctx, &arena, "f", "", GPUENV_PBTXT_MAX + 1, &m), GPUENV_ETOOBIG);
}

/* every allocation failing in turn: -ENOMEM with "out of memory", no crash */
static void test_oom(void **state)
{
	(void)state;
	testutil_alloc_t t;
	long n = 0;

	for (long k = 0;; k++) {
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		const gpuenv_pbtxt_msg_t *m;
		gpuenv_ctx_init(&c);
		testutil_alloc_reset(&t, k, false);
		c.mem = testutil_allocator(&t);
		gpuenv_arena_init(&a, &c, 0);
		int r = gpuenv_pbtxt_parse(&c, &a, "config.pbtxt", triton, strlen(triton), &m);
		gpuenv_arena_free(&a);
		if (!t.failures) {
			assert_int_equal(r, 0);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		assert_non_null(strstr(c.err.msg, "out of memory"));
		n++;
	}
	assert_true(n >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_triton_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lists_of_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_and_limits, setup, teardown),
		cmocka_unit_test(test_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
