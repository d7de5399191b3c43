/* Unit tests for lib/onnx: the protobuf wire reader (varints, each wire
 * type, every refusal with its offset, nested windows), the ModelProto
 * inspector over hand-written bytes (dims of each kind, domains, initializer
 * inputs, opsets, limits), allocation failures at every point, and a 1 GB
 * model (a sparse file) and its external data inspected in under 50 ms. */
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
#include <time.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/onnx.h"

#include "../../lib/onnx/wire.h"
#include "testutil.h"

static gpuenv_ctx_t ctx;

/* ---- protobuf by hand --------------------------------------------------------- */

static void put_varint(gpuenv_buf_t *b, uint64_t v)
{
	do {
		char c = (char)(v & 0x7f);
		v >>= 7;
		assert_int_equal(gpuenv_buf_putc(b, (char)(c | (v ? 0x80 : 0))), 0);
	} while (v);
}

static void put_int(gpuenv_buf_t *b, uint32_t num, uint64_t v)
{
	put_varint(b, (uint64_t)num << 3);
	put_varint(b, v);
}

/* a LEN field whose payload is p (n bytes) */
static void put_len(gpuenv_buf_t *b, uint32_t num, const void *p, size_t n)
{
	put_varint(b, (uint64_t)num << 3 | 2);
	put_varint(b, n);
	assert_int_equal(gpuenv_buf_append(b, p, n), 0);
}

static void put_str(gpuenv_buf_t *b, uint32_t num, const char *s)
{
	put_len(b, num, s, strlen(s));
}

/* a LEN field holding the message in m, which is freed */
static void put_msg(gpuenv_buf_t *b, uint32_t num, gpuenv_buf_t *m)
{
	put_len(b, num, m->data ? m->data : "", m->len);
	gpuenv_buf_free(m);
	gpuenv_buf_init(m, &ctx, 0);
}

/* ValueInfoProto: name, a tensor type with elem_type and dims "3", "N" or "?" */
static void put_value(gpuenv_buf_t *graph, uint32_t num, const char *name, int dtype, const char *const *dims,
	size_t n)
{
	gpuenv_buf_t v, t, tt, shape, dim;

	gpuenv_buf_init(&v, &ctx, 0);
	gpuenv_buf_init(&t, &ctx, 0);
	gpuenv_buf_init(&tt, &ctx, 0);
	gpuenv_buf_init(&shape, &ctx, 0);
	gpuenv_buf_init(&dim, &ctx, 0);
	for (size_t i = 0; i < n; i++) {
		if (dims[i][0] >= '0' && dims[i][0] <= '9')
			put_int(&dim, 1, strtoull(dims[i], NULL, 10));
		else if (strcmp(dims[i], "?") != 0)
			put_str(&dim, 2, dims[i]);
		put_msg(&shape, 1, &dim);
	}
	put_int(&tt, 1, (uint64_t)dtype);
	put_msg(&tt, 2, &shape);
	put_msg(&t, 1, &tt);
	put_str(&v, 1, name);
	put_msg(&v, 2, &t);
	put_msg(graph, num, &v);
	gpuenv_buf_free(&t);
	gpuenv_buf_free(&tt);
	gpuenv_buf_free(&shape);
	gpuenv_buf_free(&dim);
}

static void put_node(gpuenv_buf_t *graph, const char *op, const char *domain)
{
	gpuenv_buf_t n;

	gpuenv_buf_init(&n, &ctx, 0);
	put_str(&n, 4, op);
	if (domain)
		put_str(&n, 7, domain);
	put_msg(graph, 1, &n);
}

static void put_opset(gpuenv_buf_t *model, const char *domain, uint64_t v)
{
	gpuenv_buf_t o;

	gpuenv_buf_init(&o, &ctx, 0);
	if (domain)
		put_str(&o, 1, domain);
	put_int(&o, 2, v);
	put_msg(model, 8, &o);
}

/* ---- the wire reader ------------------------------------------------------------ */

static void test_varint(void **state)
{
	static const struct {
		uint8_t b[11];
		size_t n;
		int took;
		uint64_t v;
	} cases[] = {
		{ { 0x00 }, 1, 1, 0 },
		{ { 0x7f }, 1, 1, 127 },
		{ { 0xac, 0x02 }, 2, 2, 300 },
		{ { 0x80, 0x00 }, 2, 2, 0 }, /* not minimal: protobuf reads it */
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10, 10, UINT64_MAX },
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 }, 10, -1, 0 },
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 11, -1, 0 },
		{ { 0x80 }, 1, 0, 0 },
		{ { 0x80, 0x80 }, 2, 0, 0 },
		{ { 0x01 }, 0, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int took = onnx_wire_varint(cases[i].b, cases[i].n, &v);
		assert_int_equal(took, cases[i].took);
		if (took > 0)
			assert_true(v == cases[i].v);
	}
}

static void test_fields(void **state)
{
	/* 1: varint 150; 2: fixed64; 3: "abc"; 4: fixed32; 5: an empty LEN */
	static const uint8_t b[] = { 0x08, 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1a, 3, 'a', 'b', 'c',
		0x25, 0x78, 0x56, 0x34, 0x12, 0x2a, 0x00 };
	onnx_wire_t w;
	onnx_wire_field_t f;

	(void)state;
	onnx_wire_init(&w, b, sizeof(b));
	assert_true(onnx_wire_next(&w, &f));
	assert_int_equal(f.num, 1);
	assert_int_equal(f.wire, ONNX_WIRE_VARINT);
	assert_true(f.u == 150 && f.off == 1 && f.len == 2 && f.tag_off == 0);
	assert_true(onnx_wire_next(&w, &f));
	assert_true(f.num == 2 && f.wire == ONNX_WIRE_I64 && f.u == 0x0807060504030201ull && f.off == 4);
	assert_true(onnx_wire_next(&w, &f));
	assert_true(f.num == 3 && f.wire == ONNX_WIRE_LEN && f.off == 14 && f.len == 3);
	assert_memory_equal(onnx_wire_bytes(&w, &f), "abc", 3);
	assert_true(onnx_wire_next(&w, &f));
	assert_true(f.num == 4 && f.wire == ONNX_WIRE_I32 && f.u == 0x12345678 && f.tag_off == 17);
	assert_true(onnx_wire_next(&w, &f));
	assert_true(f.num == 5 && f.wire == ONNX_WIRE_LEN && f.len == 0 && f.off == sizeof(b));
	assert_false(onnx_wire_next(&w, &f));
	assert_null(w.err);
	assert_string_equal(onnx_wire_type_name(ONNX_WIRE_LEN), "length-delimited");
}

static void test_refused(void **state)
{
	static const struct {
		uint8_t b[16];
		size_t n, off;
		const char *why;
	} cases[] = {
		{ { 0x08, 0x01, 0x0b }, 3, 2, "group" },		   /* wire type 3 */
		{ { 0x0c }, 1, 0, "group" },				   /* wire type 4 */
		{ { 0x0e }, 1, 0, "invalid wire type" },		   /* 6 */
		{ { 0x0f }, 1, 0, "invalid wire type" },		   /* 7 */
		{ { 0x00, 0x01 }, 2, 0, "field number 0" },
		{ { 0x0a, 0x05, 'a' }, 3, 1, "past the end" },
		{ { 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f }, 6, 1, "past the end" }, /* 4 GB */
		{ { 0x0a }, 1, 1, "truncated length" },
		{ { 0x09, 1, 2, 3 }, 4, 1, "truncated 64-bit" },
		{ { 0x0d, 1, 2 }, 3, 1, "truncated 32-bit" },
		{ { 0x08 }, 1, 1, "truncated varint" },
		{ { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 12, 1, "malformed varint" },
		{ { 0x80 }, 1, 0, "truncated field tag" },
		{ { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 }, 6, 0, "larger than 32 bits" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		onnx_wire_t w;
		onnx_wire_field_t f;
		onnx_wire_init(&w, cases[i].b, cases[i].n);
		while (onnx_wire_next(&w, &f))
			;
		assert_non_null(w.err);
		if (!strstr(w.err, cases[i].why))
			fail_msg("case %zu: '%s' does not say '%s'", i, w.err, cases[i].why);
		assert_int_equal(w.err_off, cases[i].off);
		assert_false(onnx_wire_next(&w, &f)); /* stays failed */
	}
}

static void test_window(void **state)
{
	/* field 1 holds 2 bytes: a LEN field of length 1 that would reach the
	 * byte after the window (there, in the buffer, but not its own) */
	static const uint8_t b[] = { 0x0a, 0x02, 0x0a, 0x01, 'x' };
	onnx_wire_t w, s;
	onnx_wire_field_t f;

	(void)state;
	onnx_wire_init(&w, b, sizeof(b));
	assert_true(onnx_wire_next(&w, &f)); /* the outer length is 2, 3 are left: fine */
	assert_false(onnx_wire_next(&w, &f)); /* then 'x' is a tag: field 15, a varint cut short */
	assert_string_equal(w.err, "truncated varint");
	onnx_wire_init(&w, b, 2 + 2);
	assert_true(onnx_wire_next(&w, &f));
	s = onnx_wire_sub(&w, &f);
	assert_true(s.pos == 2 && s.end == 4);
	assert_false(onnx_wire_next(&s, &f));
	assert_string_equal(s.err, "length runs past the end of its message");
	assert_int_equal(s.err_off, 3);
}

/* ---- the inspector ----------------------------------------------------------------- */

/* A model: inputs x [N, 3, ?, 224] FLOAT16 and w (an initializer, IR 3 style),
 * output y [N, 1000]; nodes Conv, Relu, Relu, com.microsoft.FusedGemm;
 * opsets "" 17 and com.microsoft 1; producer "pytorch" "2.11.0". */
static void make_model(gpuenv_buf_t *model)
{
	static const char *const xd[] = { "N", "3", "?", "224" }, *const wd[] = { "8" }, *const yd[] = { "N", "1000" };
	gpuenv_buf_t g, t;

	gpuenv_buf_init(&g, &ctx, 0);
	gpuenv_buf_init(&t, &ctx, 0);
	put_str(&g, 2, "main");
	put_node(&g, "Conv", NULL);
	put_node(&g, "Relu", "");
	put_node(&g, "Relu", "ai.onnx");
	put_node(&g, "FusedGemm", "com.microsoft");
	put_str(&t, 8, "w");
	put_int(&t, 2, GPUENV_ONNX_FLOAT);
	put_len(&t, 9, "0123456789abcdef0123456789abcdef", 32);
	put_msg(&g, 5, &t);
	put_value(&g, 11, "x", GPUENV_ONNX_FLOAT16, xd, 4);
	put_value(&g, 11, "w", GPUENV_ONNX_FLOAT, wd, 1);
	put_value(&g, 12, "y", GPUENV_ONNX_FLOAT16, yd, 2);
	put_int(model, 1, 3);
	put_str(model, 2, "pytorch");
	put_str(model, 3, "2.11.0");
	put_msg(model, 7, &g);
	put_opset(model, NULL, 17);
	put_opset(model, "com.microsoft", 1);
	gpuenv_buf_free(&g);
	gpuenv_buf_free(&t);
}

static void test_inspect(void **state)
{
	gpuenv_buf_t b;
	gpuenv_arena_t a;
	gpuenv_onnx_model_t m;

	(void)state;
	gpuenv_buf_init(&b, &ctx, 0);
	make_model(&b);
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_onnx_inspect_mem(&ctx, &a, b.data, b.len, "m.onnx", NULL, &m), 0);
	assert_true(m.ir_version == 3 && m.has_graph && m.file_size == b.len);
	assert_string_equal(m.producer_name.ptr, "pytorch");
	assert_string_equal(m.producer_version.ptr, "2.11.0");
	assert_string_equal(m.graph_name.ptr, "main");
	assert_int_equal(m.nopsets, 2);
	assert_true(gpuenv_onnx_opset_version(&m, "") == 17 && gpuenv_onnx_opset_version(&m, "ai.onnx") == 17);
	assert_true(gpuenv_onnx_opset_version(&m, "com.microsoft") == 1);
	assert_true(gpuenv_onnx_opset_version(&m, "ai.onnx.ml") == -1);
	/* w is an initializer: not an input */
	assert_int_equal(m.ninputs, 1);
	assert_string_equal(m.inputs[0].name.ptr, "x");
	assert_int_equal(m.inputs[0].dtype, GPUENV_ONNX_FLOAT16);
	assert_int_equal(m.inputs[0].kind, GPUENV_ONNX_TYPE_TENSOR);
	assert_true(m.inputs[0].has_shape && m.inputs[0].ndims == 4);
	assert_int_equal(m.inputs[0].dims[0].kind, GPUENV_ONNX_DIM_SYMBOLIC);
	assert_string_equal(m.inputs[0].dims[0].param.ptr, "N");
	assert_true(m.inputs[0].dims[1].kind == GPUENV_ONNX_DIM_FIXED && m.inputs[0].dims[1].value == 3);
	assert_int_equal(m.inputs[0].dims[2].kind, GPUENV_ONNX_DIM_UNKNOWN);
	assert_true(m.inputs[0].dims[3].value == 224);
	assert_true(gpuenv_onnx_value_is_dynamic(&m.inputs[0]));
	assert_int_equal(m.noutputs, 1);
	assert_true(m.outputs[0].ndims == 2 && m.outputs[0].dims[1].value == 1000);
	/* sorted by qualified name; "" and "ai.onnx" are one domain */
	assert_int_equal(m.nops, 3);
	assert_string_equal(m.ops[0].qualified.ptr, "Conv");
	assert_string_equal(m.ops[1].qualified.ptr, "Relu");
	assert_true(m.ops[1].count == 2);
	assert_string_equal(m.ops[1].domain.ptr, "ai.onnx");
	assert_string_equal(m.ops[2].qualified.ptr, "com.microsoft.FusedGemm");
	assert_string_equal(m.ops[2].op_type.ptr, "FusedGemm");
	assert_true(m.nodes == 4 && m.subgraph_nodes == 0);
	assert_true(m.initializers == 1 && m.initializer_bytes == 32 && m.external_tensors == 0);
	gpuenv_arena_free(&a);

	/* every prefix: refused with an offset inside it, or read (never a crash) */
	for (size_t n = 0; n < b.len; n++) {
		gpuenv_arena_init(&a, &ctx, 0);
		int r = gpuenv_onnx_inspect_mem(&ctx, &a, b.data, n, "m.onnx", NULL, &m);
		if (r) {
			const char *c = strrchr(ctx.err.file, ':');
			assert_true(r == GPUENV_EFORMAT && c && strtoull(c + 1, NULL, 10) <= n);
		}
		gpuenv_arena_free(&a);
	}
	gpuenv_buf_free(&b);
}

static void test_dtypes(void **state)
{
	(void)state;
	assert_string_equal(gpuenv_onnx_dtype_name(GPUENV_ONNX_BFLOAT16), "BFLOAT16");
	assert_string_equal(gpuenv_onnx_dtype_name(GPUENV_ONNX_FLOAT8E4M3FN), "FLOAT8E4M3FN");
	assert_string_equal(gpuenv_onnx_dtype_name(GPUENV_ONNX_INT2), "INT2");
	assert_null(gpuenv_onnx_dtype_name(GPUENV_ONNX_DTYPE_COUNT));
	assert_null(gpuenv_onnx_dtype_name(-1));
	for (int i = 0; i < GPUENV_ONNX_DTYPE_COUNT; i++)
		assert_int_equal(gpuenv_onnx_dtype_parse(gpuenv_str(gpuenv_onnx_dtype_name(i))), i);
	assert_int_equal(gpuenv_onnx_dtype_parse(gpuenv_str("float")), -1);
	assert_int_equal(gpuenv_onnx_dtype_size(GPUENV_ONNX_FLOAT16), 2);
	assert_int_equal(gpuenv_onnx_dtype_size(GPUENV_ONNX_INT4), 0);
	assert_string_equal(gpuenv_onnx_type_kind_name(GPUENV_ONNX_TYPE_SEQUENCE), "sequence");
	assert_null(gpuenv_onnx_type_kind_name(GPUENV_ONNX_TYPE_NONE));
}

static int inspect_bytes(const gpuenv_buf_t *b, gpuenv_onnx_model_t *m, gpuenv_arena_t *a)
{
	gpuenv_arena_init(a, &ctx, 0);
	return gpuenv_onnx_inspect_mem(&ctx, a, b->data, b->len, "h.onnx", NULL, m);
}

static void test_limits(void **state)
{
	gpuenv_buf_t b, g, v, m;
	gpuenv_arena_t a;
	gpuenv_onnx_model_t model;

	(void)state;
	gpuenv_buf_init(&b, &ctx, 0);
	gpuenv_buf_init(&g, &ctx, 0);
	gpuenv_buf_init(&v, &ctx, 0);
	gpuenv_buf_init(&m, &ctx, 0);
	/* 65537 inputs */
	put_str(&v, 1, "x");
	for (int i = 0; i <= GPUENV_ONNX_MAX_VALUES; i++)
		put_len(&g, 11, v.data, v.len);
	put_msg(&b, 7, &g);
	assert_int_equal(inspect_bytes(&b, &model, &a), GPUENV_ETOOBIG);
	assert_non_null(strstr(ctx.err.msg, "more than 65536 graph inputs"));
	assert_true(a.used < (size_t)64 << 20);
	gpuenv_arena_free(&a);
	gpuenv_buf_reset(&b);
	/* a TypeProto nested 65 deep: sequence of sequence of ... */
	gpuenv_buf_reset(&v);
	put_int(&v, 1, 1); /* Tensor.elem_type */
	put_msg(&m, 1, &v); /* TypeProto.tensor_type */
	for (int i = 0; i < 40; i++) {
		put_msg(&v, 1, &m); /* Sequence.elem_type */
		put_msg(&m, 4, &v); /* TypeProto.sequence_type */
	}
	put_str(&v, 1, "deep");
	put_msg(&v, 2, &m);
	put_msg(&g, 11, &v);
	put_msg(&b, 7, &g);
	assert_int_equal(inspect_bytes(&b, &model, &a), GPUENV_ETOOBIG);
	assert_non_null(strstr(ctx.err.msg, "nested more than 64"));
	assert_non_null(strstr(ctx.err.file, "h.onnx:"));
	gpuenv_arena_free(&a);
	/* 20 deep is fine: a sequence's dtype is its innermost tensor's */
	gpuenv_buf_reset(&b);
	put_int(&v, 1, GPUENV_ONNX_INT8);
	put_msg(&m, 1, &v);
	for (int i = 0; i < 20; i++) {
		put_msg(&v, 1, &m);
		put_msg(&m, 4, &v);
	}
	put_str(&v, 1, "seq");
	put_msg(&v, 2, &m);
	put_msg(&g, 11, &v);
	put_msg(&b, 7, &g);
	assert_int_equal(inspect_bytes(&b, &model, &a), 0);
	assert_true(model.ninputs == 1 && model.inputs[0].kind == GPUENV_ONNX_TYPE_SEQUENCE &&
		model.inputs[0].dtype == GPUENV_ONNX_INT8 && !model.inputs[0].has_shape);
	assert_false(gpuenv_onnx_value_is_dynamic(&model.inputs[0]));
	gpuenv_arena_free(&a);
	/* one name written 10,000 times in one value (the last counts): one
	 * copy is kept, not 10 MB of them */
	gpuenv_buf_reset(&b);
	{
		char name[1000];
		memset(name, 'n', sizeof(name));
		for (int i = 0; i < 10000; i++)
			put_len(&v, 1, name, sizeof(name));
		put_str(&v, 1, "last");
	}
	put_msg(&g, 11, &v);
	put_msg(&b, 7, &g);
	assert_int_equal(inspect_bytes(&b, &model, &a), 0);
	assert_true(model.ninputs == 1 && gpuenv_str_eq_cstr(model.inputs[0].name, "last"));
	assert_true(a.used < 64 * 1024);
	gpuenv_arena_free(&a);
	/* external data in a model read from memory: refused, not looked for */
	gpuenv_buf_reset(&b);
	put_str(&v, 8, "w");
	put_int(&v, 14, 1);
	put_msg(&g, 5, &v);
	put_msg(&b, 7, &g);
	assert_int_equal(inspect_bytes(&b, &model, &a), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "no location"));
	gpuenv_arena_free(&a);
	gpuenv_buf_free(&b);
	gpuenv_buf_free(&g);
	gpuenv_buf_free(&v);
	gpuenv_buf_free(&m);
}

/* Every allocation failing in turn: -ENOMEM reported, nothing leaked
 * (the sanitizer build checks the leaks). */
static void test_oom(void **state)
{
	testutil_alloc_t t;
	gpuenv_ctx_t c;
	gpuenv_buf_t b;
	gpuenv_arena_t a;
	gpuenv_onnx_model_t m;
	long total;

	(void)state;
	gpuenv_buf_init(&b, &ctx, 0);
	make_model(&b);
	gpuenv_ctx_init(&c);
	c.mem = testutil_allocator(&t);
	testutil_alloc_reset(&t, TESTUTIL_NEVER, false);
	gpuenv_arena_init(&a, &c, 0);
	assert_int_equal(gpuenv_onnx_inspect_mem(&c, &a, b.data, b.len, "m.onnx", NULL, &m), 0);
	gpuenv_arena_free(&a);
	total = t.calls;
	assert_true(total > 3);
	for (long i = 0; i < total; i++) {
		testutil_alloc_reset(&t, i, false);
		gpuenv_arena_init(&a, &c, 0);
		assert_int_equal(gpuenv_onnx_inspect_mem(&c, &a, b.data, b.len, "m.onnx", NULL, &m), -ENOMEM);
		assert_int_equal(c.err.code, -ENOMEM);
		gpuenv_arena_free(&a);
	}
	gpuenv_buf_free(&b);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A 1 GB raw_data initializer written as a hole (a sparse file), and a
 * second model whose 1 GB of weights are external data: both inspected in
 * under 50 ms, the weights never read. */
static void test_big(void **state)
{
	const uint64_t N = (uint64_t)1 << 30;
	char dir[] = "/tmp/gpuenv-onnx-XXXXXX", path[256], data[256];
	static const char *const xd[] = { "batch", "4" };
	gpuenv_buf_t head, tail, g, t, e;
	gpuenv_arena_t a;
	gpuenv_onnx_model_t m;
	double t0, ms;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	gpuenv_buf_init(&head, &ctx, 0);
	gpuenv_buf_init(&tail, &ctx, 0);
	gpuenv_buf_init(&g, &ctx, 0);
	gpuenv_buf_init(&t, &ctx, 0);
	gpuenv_buf_init(&e, &ctx, 0);
	/* the tensor's header; its N bytes of raw_data follow as a hole */
	put_str(&t, 8, "weight");
	put_int(&t, 2, GPUENV_ONNX_FLOAT);
	put_varint(&t, 9 << 3 | 2);
	put_varint(&t, N);
	put_node(&tail, "MatMul", NULL);
	put_value(&tail, 11, "x", GPUENV_ONNX_FLOAT, xd, 2);
	put_value(&tail, 12, "y", GPUENV_ONNX_FLOAT, xd, 2);
	put_int(&head, 1, 8);
	put_varint(&head, 7 << 3 | 2);
	put_varint(&head, 1 + 5 + t.len + N + tail.len); /* tag 0x2a, a 5-byte length */
	put_varint(&head, 5 << 3 | 2);
	put_varint(&head, t.len + N);
	assert_int_equal(gpuenv_buf_append(&head, t.data, t.len), 0);
	snprintf(path, sizeof(path), "%s/big.onnx", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, head.data, head.len), (ssize_t)head.len);
	assert_true(lseek(fd, (off_t)N, SEEK_CUR) > 0);
	assert_int_equal(write(fd, tail.data, tail.len), (ssize_t)tail.len);
	close(fd);
	gpuenv_arena_init(&a, &ctx, 0);
	t0 = now_ms();
	assert_int_equal(gpuenv_onnx_inspect(&ctx, &a, path, &m), 0);
	ms = now_ms() - t0;
	print_message("1 GB model (raw_data): %.3f ms\n", ms);
	assert_true(ms < 50);
	assert_true(m.initializers == 1 && m.initializer_bytes == N && m.ninputs == 1 && m.nops == 1);
	assert_true(m.file_size > N);
	gpuenv_arena_free(&a);
	unlink(path);

	/* external data: a 1 GB data file beside the model */
	snprintf(data, sizeof(data), "%s/ext.onnx.data", dir);
	fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0 && ftruncate(fd, (off_t)N) == 0);
	close(fd);
	gpuenv_buf_reset(&t);
	put_str(&t, 8, "weight");
	put_int(&t, 2, GPUENV_ONNX_FLOAT);
	put_int(&t, 14, 1);
	put_str(&e, 1, "location");
	put_str(&e, 2, "ext.onnx.data");
	put_msg(&t, 13, &e);
	put_str(&e, 1, "length");
	put_str(&e, 2, "1073741824");
	put_msg(&t, 13, &e);
	put_msg(&g, 5, &t);
	assert_int_equal(gpuenv_buf_append(&g, tail.data, tail.len), 0);
	gpuenv_buf_reset(&head);
	put_int(&head, 1, 10);
	put_msg(&head, 7, &g);
	snprintf(path, sizeof(path), "%s/ext.onnx", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, head.data, head.len), (ssize_t)head.len);
	close(fd);
	gpuenv_arena_init(&a, &ctx, 0);
	t0 = now_ms();
	assert_int_equal(gpuenv_onnx_inspect(&ctx, &a, path, &m), 0);
	ms = now_ms() - t0;
	print_message("1 GB of external data: %.3f ms\n", ms);
	assert_true(ms < 50);
	assert_true(m.external_tensors == 1 && m.external_bytes == N && m.nextfiles == 1);
	assert_true(m.extfiles[0].file_size == N && m.extfiles[0].end == N);
	assert_string_equal(m.extfiles[0].location.ptr, "ext.onnx.data");
	gpuenv_arena_free(&a);
	unlink(path);
	unlink(data);
	rmdir(dir);
	gpuenv_buf_free(&head);
	gpuenv_buf_free(&tail);
	gpuenv_buf_free(&g);
	gpuenv_buf_free(&t);
	gpuenv_buf_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_inspect),
		cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_oom),
		cmocka_unit_test(test_big),
	};
	gpuenv_ctx_init(&ctx);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
