/* gpuenv trt: ONNX models and TensorRT engines (docs/trt.md).  One table
 * row per sub-verb; `inspect` is here, over lib/onnx (gpuenv/onnx.h). */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

#include "gpuenv/onnx.h"

/* Each sub-verb ends its file with `const struct cli_verb cli_verb_trt_NAME`;
 * a new one is one X() here (cli/trt_engine.c adds its own). */
#define TRT_SUBS(X) X(inspect) X(optimize) X(build) X(check)
#define TRT_SUB_DECLARE(n) extern const struct cli_verb cli_verb_trt_##n;
TRT_SUBS(TRT_SUB_DECLARE)
#define TRT_SUB_ROW(n) &cli_verb_trt_##n,
static const struct cli_verb *const subs[] = { TRT_SUBS(TRT_SUB_ROW) };

#define NSUBS (sizeof(subs) / sizeof(subs[0]))

static int cli_trt(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, subs, NSUBS, "subcommand", argc, argv);
}

const struct cli_verb cli_verb_trt = {
	.name = "trt",
	.run = cli_trt,
	.summary = "ONNX models and TensorRT engines: inspect, optimize, build, check",
	.usage = "gpuenv trt SUBCOMMAND [ARGS...]",
	.help = "subcommands (each takes --help and --json):\n"
		"  inspect MODEL.onnx   IR version, opsets, producer, inputs and outputs with\n"
		"                       their types and shapes, operators, initializers and\n"
		"                       external data (docs/trt.md)\n"
		"  optimize MODEL.onnx  the trtexec command for a target's GPU and TensorRT\n"
		"  build MODEL.onnx     run it here and write the engine's record\n"
		"  check ENGINE         go or no-go of an engine on this node, by its record\n",
};

/* ---- inspect ------------------------------------------------------------------ */

static json_t *jtext(struct cli *cli, gpuenv_str_t s)
{
	return cli_json_text(cli, s.ptr ? s.ptr : "", s.ptr ? s.len : 0);
}

/* a new container put under key in parent at once, so a failure later
 * frees it with the parent; NULL when memory ran out */
static json_t *child(json_t *parent, const char *key, json_t *c)
{
	return parent && c && !json_object_set_new(parent, key, c) ? c : NULL;
}

static bool set_int(json_t *o, const char *key, uint64_t v)
{
	return o && !json_object_set_new(o, key, json_integer((json_int_t)v));
}

static json_t *value_json(struct cli *cli, const gpuenv_onnx_value_t *v)
{
	json_t *o = json_object(), *shape;
	const char *dt = v->dtype ? gpuenv_onnx_dtype_name(v->dtype) : NULL;
	bool ok;

	ok = o && !json_object_set_new(o, "name", jtext(cli, v->name));
	/* a number onnx.proto does not name is shown as the number */
	ok = ok && !json_object_set_new(o, "dtype", dt ? json_string(dt)
			: v->dtype ? json_integer(v->dtype) : json_null());
	/* no shape at all: null; else one entry per dim */
	shape = ok ? child(o, "shape", v->has_shape ? json_array() : json_null()) : NULL;
	ok = shape != NULL;
	for (size_t i = 0; ok && v->has_shape && i < v->ndims; i++) {
		const gpuenv_onnx_dim_t *d = &v->dims[i];
		ok = !json_array_append_new(shape, d->kind == GPUENV_ONNX_DIM_FIXED
				? json_integer((json_int_t)d->value)
				: d->kind == GPUENV_ONNX_DIM_SYMBOLIC ? jtext(cli, d->param) : json_null());
	}
	if (ok && v->kind != GPUENV_ONNX_TYPE_TENSOR) {
		const char *k = gpuenv_onnx_type_kind_name(v->kind);
		ok = !json_object_set_new(o, "type", k ? json_string(k) : json_null());
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *values_json(struct cli *cli, const gpuenv_onnx_value_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, value_json(cli, &v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *model_json(struct cli *cli, const gpuenv_onnx_model_t *m)
{
	json_t *o = json_object(), *opset, *ops, *init, *ext, *files;
	gpuenv_buf_t producer;
	bool ok;

	/* "pytorch 2.11.0": the name and the version, as the issue shows */
	gpuenv_buf_init(&producer, &cli->ctx, 2 * GPUENV_ONNX_MAX_STRING + 2);
	ok = !gpuenv_buf_append(&producer, m->producer_name.ptr, m->producer_name.len);
	if (ok && m->producer_version.len)
		ok = !gpuenv_buf_printf(&producer, "%s" GPUENV_STR_FMT,
			m->producer_name.len ? " " : "", GPUENV_STR_ARG(m->producer_version));
	/* keys in the order the issue shows them */
	ok = ok && o && !json_object_set_new(o, "path", cli_json_text(cli, m->path, strlen(m->path))) &&
		set_int(o, "file_size", m->file_size) && set_int(o, "ir_version", (uint64_t)m->ir_version);
	opset = ok ? child(o, "opset", json_object()) : NULL;
	for (size_t i = 0; opset && i < m->nopsets; i++) {
		json_t *k = jtext(cli, m->opsets[i].domain);
		/* a domain imported twice: the last import counts, as in onnx */
		ok = k && set_int(opset, json_string_value(k), (uint64_t)m->opsets[i].version);
		json_decref(k);
		opset = ok ? opset : NULL;
	}
	ok = opset && !json_object_set_new(o, "producer",
			cli_json_text(cli, producer.data ? producer.data : "", producer.len)) &&
		!json_object_set_new(o, "inputs", values_json(cli, m->inputs, m->ninputs)) &&
		!json_object_set_new(o, "outputs", values_json(cli, m->outputs, m->noutputs));
	gpuenv_buf_free(&producer);
	ops = ok ? child(o, "operators", json_object()) : NULL;
	for (size_t i = 0; ops && i < m->nops; i++) {
		json_t *k = jtext(cli, m->ops[i].qualified);
		ok = k && set_int(ops, json_string_value(k), m->ops[i].count);
		json_decref(k);
		ops = ok ? ops : NULL;
	}
	ok = ops && set_int(o, "nodes", m->nodes) && set_int(o, "subgraph_nodes", m->subgraph_nodes) &&
		set_int(o, "functions", m->functions);
	init = ok ? child(o, "initializers", json_object()) : NULL;
	ok = set_int(init, "count", m->initializers) && set_int(init, "bytes", m->initializer_bytes);
	ext = ok ? child(init, "external", json_object()) : NULL;
	ok = set_int(ext, "tensors", m->external_tensors) && set_int(ext, "bytes", m->external_bytes);
	files = ok ? child(ext, "files", json_array()) : NULL;
	ok = files != NULL;
	for (size_t i = 0; ok && i < m->nextfiles; i++) {
		const gpuenv_onnx_extfile_t *f = &m->extfiles[i];
		json_t *r = json_object();
		ok = r && !json_array_append_new(files, r) &&
			!json_object_set_new(r, "location", jtext(cli, f->location)) &&
			!json_object_set_new(r, "path", jtext(cli, f->path)) && set_int(r, "tensors", f->tensors) &&
			set_int(r, "bytes", f->bytes) && set_int(r, "file_size", f->file_size);
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "1.2 MiB" */
static const char *human(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	unsigned u = 0;

	if (n < 1024) {
		snprintf(buf, size, "%" PRIu64 " bytes", n);
		return buf;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

static void print_values(struct cli *cli, const char *title, const gpuenv_onnx_value_t *v, size_t n)
{
	printf("%s:%s\n", title, n ? "" : " none");
	for (size_t i = 0; i < n; i++) {
		const char *dt = gpuenv_onnx_dtype_name(v[i].dtype);
		printf("  ");
		cli_put_text(cli, stdout, v[i].name.ptr, v[i].name.len);
		if (v[i].kind != GPUENV_ONNX_TYPE_TENSOR) {
			const char *k = gpuenv_onnx_type_kind_name(v[i].kind);
			printf("  %s", k ? k : "(no type)");
		}
		if (v[i].dtype)
			dt ? printf("  %s", dt) : printf("  type %d", v[i].dtype);
		if (!v[i].has_shape) {
			if (v[i].kind == GPUENV_ONNX_TYPE_TENSOR ||
				v[i].kind == GPUENV_ONNX_TYPE_SPARSE_TENSOR)
				printf("  (no shape: rank unknown)");
			printf("\n");
			continue;
		}
		printf("  [");
		for (size_t d = 0; d < v[i].ndims; d++) {
			const gpuenv_onnx_dim_t *dim = &v[i].dims[d];
			printf("%s", d ? ", " : "");
			if (dim->kind == GPUENV_ONNX_DIM_FIXED)
				printf("%" PRId64, dim->value);
			else if (dim->kind == GPUENV_ONNX_DIM_SYMBOLIC)
				cli_put_text(cli, stdout, dim->param.ptr, dim->param.len);
			else
				printf("?");
		}
		printf("]%s\n", gpuenv_onnx_value_is_dynamic(&v[i]) ? "  dynamic" : "");
	}
}

static void print_model(struct cli *cli, const gpuenv_onnx_model_t *m)
{
	char b1[32], b2[32];

	cli_put_text(cli, stdout, m->path, strlen(m->path));
	printf(": ONNX IR version %" PRId64 ", %s\n", m->ir_version, human(m->file_size, b1, sizeof(b1)));
	printf("producer: ");
	if (m->producer_name.len || m->producer_version.len) {
		cli_put_text(cli, stdout, m->producer_name.ptr, m->producer_name.len);
		printf("%s", m->producer_name.len && m->producer_version.len ? " " : "");
		cli_put_text(cli, stdout, m->producer_version.ptr, m->producer_version.len);
		printf("\n");
	} else {
		printf("(not given)\n");
	}
	printf("opsets:");
	for (size_t i = 0; i < m->nopsets; i++) {
		printf("%s ", i ? "," : "");
		cli_put_text(cli, stdout, m->opsets[i].domain.ptr, m->opsets[i].domain.len);
		printf(" %" PRId64, m->opsets[i].version);
	}
	printf("%s\n", m->nopsets ? "" : " none");
	print_values(cli, "inputs", m->inputs, m->ninputs);
	print_values(cli, "outputs", m->outputs, m->noutputs);
	printf("operators: %zu types, %" PRIu64 " nodes", m->nops, m->nodes);
	if (m->subgraphs)
		printf(" (and %" PRIu64 " in %" PRIu64 " subgraphs, counted below)", m->subgraph_nodes,
			m->subgraphs);
	printf("\n");
	for (size_t i = 0; i < m->nops; i++) {
		printf("  ");
		cli_put_text(cli, stdout, m->ops[i].qualified.ptr, m->ops[i].qualified.len);
		printf(" %" PRIu64 "\n", m->ops[i].count);
	}
	if (m->functions)
		printf("model-local functions: %" PRIu64 "\n", m->functions);
	printf("initializers: %" PRIu64 ", %s in the model", m->initializers,
		human(m->initializer_bytes, b1, sizeof(b1)));
	if (m->external_tensors)
		printf(", %" PRIu64 " external (%s)", m->external_tensors,
			human(m->external_bytes, b2, sizeof(b2)));
	printf("\n");
	for (size_t i = 0; i < m->nextfiles; i++) {
		const gpuenv_onnx_extfile_t *f = &m->extfiles[i];
		printf("external data: ");
		cli_put_text(cli, stdout, f->path.ptr, f->path.len);
		printf(": %" PRIu64 " tensors, %s used of %s\n", f->tensors,
			human(f->end, b1, sizeof(b1)), human(f->file_size, b2, sizeof(b2)));
	}
}

static int cli_trt_inspect(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	json_t *all = NULL;
	int c, st, status = CLI_EXIT_OK;

	while ((c = cli_getopt(cli, verb, argc, argv, "", NULL, &st)) != -1)
		if (c == CLI_OPT_EXIT)
			return st;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no MODEL given", verb->name);
	/* several models: one JSON array, in the order given */
	if (cli->json && argc - optind > 1 && !(all = json_array()))
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
	for (int i = optind; i < argc; i++) {
		gpuenv_arena_t arena;
		gpuenv_onnx_model_t m;

		gpuenv_arena_init(&arena, &cli->ctx, 0);
		if (gpuenv_onnx_inspect(&cli->ctx, &arena, argv[i], &m)) {
			status = cli_report(cli, CLI_EXIT_CANNOT);
		} else if (all) {
			json_t *o = model_json(cli, &m);
			if (!o || json_array_append_new(all, o))
				status = cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
		} else if (cli->json) {
			st = cli_print_json(cli, model_json(cli, &m));
			status = st ? st : status;
		} else {
			if (i > optind)
				printf("\n");
			print_model(cli, &m);
		}
		gpuenv_arena_free(&arena);
	}
	if (all) {
		st = cli_print_json(cli, all);
		status = st ? st : status;
	}
	return status;
}

const struct cli_verb cli_verb_trt_inspect = {
	.name = "inspect",
	.run = cli_trt_inspect,
	.summary = "what an ONNX model declares: opsets, inputs, outputs, operators, weights",
	.usage = "gpuenv trt inspect MODEL.onnx... [--json]",
	.help = "The model is mapped, not loaded: tensor payloads are skipped by their length and\n"
		"external data (MODEL.onnx.data) is checked, never read.  In --json a shape entry is\n"
		"an integer (fixed), a string (symbolic dim_param) or null (unknown); a shape of\n"
		"null means the tensor has no shape at all.  Several models: one JSON array, in the\n"
		"order given (a model that cannot be read is reported and left out).\n\n"
		"exit status: 0 every model was read, 2 usage, 4 a model could not be read or is\n"
		"damaged (FILE:OFFSET and what is wrong), or its external data is missing or\n"
		"outside its folder\n",
};
