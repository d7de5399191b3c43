/* Fuzz target: an ONNX model as `gpuenv trt inspect` reads it (lib/onnx:
 * the wire reader and the ModelProto inspector), from memory with no folder,
 * so external data is refused, never looked for.  Besides the sanitizers,
 * invariants abort() on violation:
 *   - a success has a graph, at most the reader's caps of inputs, outputs,
 *     dims and operator types, each dim of a known kind (a symbolic one
 *     named), operators sorted by name whose counts add up to the nodes met;
 *   - a failure leaves a message, with "NAME:OFFSET" as its file and the
 *     offset inside the input (or 0);
 *   - allocation failures (fuzz_alloc.h) are reported as -ENOMEM. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/onnx.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static void check_values(const gpuenv_onnx_value_t *v, size_t n)
{
	CHECK(n <= GPUENV_ONNX_MAX_VALUES);
	for (size_t i = 0; i < n; i++) {
		CHECK(v[i].name.ptr && strlen(v[i].name.ptr) <= v[i].name.len);
		CHECK(v[i].ndims <= GPUENV_ONNX_MAX_DIMS);
		CHECK(v[i].has_shape || v[i].ndims == 0);
		for (size_t d = 0; d < v[i].ndims; d++) {
			const gpuenv_onnx_dim_t *dim = &v[i].dims[d];
			CHECK(dim->kind == GPUENV_ONNX_DIM_UNKNOWN || dim->kind == GPUENV_ONNX_DIM_FIXED ||
				dim->kind == GPUENV_ONNX_DIM_SYMBOLIC);
			CHECK((dim->kind == GPUENV_ONNX_DIM_SYMBOLIC) == (dim->param.ptr != NULL));
		}
		CHECK(v[i].kind == GPUENV_ONNX_TYPE_NONE || gpuenv_onnx_type_kind_name(v[i].kind));
	}
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_onnx_model_t m;

	gpuenv_arena_init(&arena, ctx, 0);
	OOM_CALL(o, ctx, gpuenv_onnx_inspect_mem(ctx, &arena, data, size, "m.onnx", NULL, &m));
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_onnx_model_t m;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	r = gpuenv_onnx_inspect_mem(&ctx, &arena, data, size, "m.onnx", NULL, &m);
	if (r == 0) {
		uint64_t sum = 0;
		CHECK(m.has_graph && m.file_size == size);
		check_values(m.inputs, m.ninputs);
		check_values(m.outputs, m.noutputs);
		CHECK(m.nopsets <= GPUENV_ONNX_MAX_OPSETS && m.nops <= GPUENV_ONNX_MAX_OPS);
		for (size_t i = 0; i < m.nopsets; i++)
			CHECK(m.opsets[i].domain.len > 0);
		for (size_t i = 0; i < m.nops; i++) {
			CHECK(m.ops[i].count > 0 && m.ops[i].qualified.ptr);
			if (i)
				CHECK(gpuenv_str_cmp(m.ops[i - 1].qualified, m.ops[i].qualified) < 0);
			sum += m.ops[i].count;
		}
		CHECK(sum == m.nodes + m.subgraph_nodes);
		CHECK(m.nextfiles == 0 && m.external_tensors == 0);
		CHECK(m.initializer_bytes <= size);
	} else {
		const char *colon = strrchr(ctx.err.file, ':');
		CHECK(ctx.err.msg[0] && ctx.err.code == r);
		CHECK(r == GPUENV_EFORMAT || r == GPUENV_ETOOBIG || r == -ENOMEM);
		if (r != -ENOMEM) {
			CHECK(strncmp(ctx.err.file, "m.onnx:", 7) == 0 && colon);
			CHECK(strtoull(colon + 1, NULL, 10) <= size);
		}
	}
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
