/* gpuenv triton: a Triton model repository checked before a server loads it
 * (docs/triton.md), over lib/triton (gpuenv/triton.h).  One sub-verb table
 * row per sub-verb, as cli/trt.c. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/facts.h"
#include "gpuenv/kb.h"
#include "gpuenv/triton.h"

#define TRITON_SUBS(X) X(check)
#define TRITON_SUB_DECLARE(n) extern const struct cli_verb cli_verb_triton_##n;
TRITON_SUBS(TRITON_SUB_DECLARE)
#define TRITON_SUB_ROW(n) &cli_verb_triton_##n,
static const struct cli_verb *const subs[] = { TRITON_SUBS(TRITON_SUB_ROW) };

static int cli_triton(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, subs, sizeof subs / sizeof *subs, "subcommand", argc, argv);
}

const struct cli_verb cli_verb_triton = {
	.name = "triton",
	.run = cli_triton,
	.summary = "Triton model repositories: what the server would refuse, before it loads them",
	.usage = "gpuenv triton check REPOSITORY [--image IMAGE] [--facts FILE] [--json]",
	.help = "subcommands (each takes --help and --json):\n"
		"  check REPOSITORY     each model's config.pbtxt, files, versions, batching, inputs and\n"
		"                       outputs against the ONNX model, instance groups against the\n"
		"                       node's GPUs, ensembles, TensorRT plans against the server\n"
		"                       image's TensorRT, the image against the node (docs/triton.md)\n",
};

/* ---- check ---------------------------------------------------------------------- */

static json_t *finding_json(struct cli *cli, const gpuenv_triton_finding_t *f)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(o, "model", f->model ? cli_json_text(cli, f->model, strlen(f->model)) : json_null()) ||
		json_object_set_new(o, "id", json_string(f->id)) ||
		json_object_set_new(o, "severity", json_string(gpuenv_triton_severity_name(f->severity))) ||
		json_object_set_new(o, "file", cli_json_text(cli, f->file, strlen(f->file))) ||
		json_object_set_new(o, "line", f->line ? json_integer(f->line) : json_null()) ||
		json_object_set_new(o, "column", f->col ? json_integer(f->col) : json_null()) ||
		json_object_set_new(o, "message", cli_json_text(cli, f->message, strlen(f->message))) ||
		json_object_set_new(o, "fix", f->fix ? cli_json_text(cli, f->fix, strlen(f->fix)) : json_null())) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *report_json(struct cli *cli, const gpuenv_triton_report_t *r)
{
	json_t *o = json_object(), *models = json_array(), *fs = json_array();
	bool bad = !o || !models || !fs;

	if (!bad)
		bad = json_object_set_new(o, "repository", cli_json_text(cli, r->repository, strlen(r->repository))) ||
		      json_object_set_new(o, "image", r->image ? cli_json_text(cli, r->image, strlen(r->image)) : json_null()) ||
		      json_object_set_new(o, "image_tensorrt", r->image_tensorrt ? json_string(r->image_tensorrt) : json_null()) ||
		      json_object_set(o, "models", models) || json_object_set(o, "findings", fs) ||
		      json_object_set_new(o, "errors", json_integer((json_int_t)r->errors)) ||
		      json_object_set_new(o, "warnings", json_integer((json_int_t)r->warnings));
	for (size_t i = 0; !bad && i < r->nmodels; i++) {
		const gpuenv_triton_model_t *m = &r->models[i];
		json_t *mo = json_object();
		bad = !mo || json_array_append_new(models, mo) ||
		      json_object_set_new(mo, "name", cli_json_text(cli, m->name, strlen(m->name))) ||
		      json_object_set_new(mo, "backend", m->backend ? json_string(m->backend) : json_null()) ||
		      json_object_set_new(mo, "platform", m->platform ? json_string(m->platform) : json_null()) ||
		      json_object_set_new(mo, "max_batch_size",
			      m->max_batch_size >= 0 ? json_integer(m->max_batch_size) : json_null()) ||
		      json_object_set_new(mo, "versions", json_integer((json_int_t)m->nversions)) ||
		      json_object_set_new(mo, "loads", json_boolean(m->loads));
	}
	for (size_t i = 0; !bad && i < r->nfindings; i++) {
		json_t *f = finding_json(cli, &r->findings[i]);
		bad = !f || json_array_append_new(fs, f);
	}
	json_decref(models);
	json_decref(fs);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The findings about model (NULL: the repository's own). */
static void print_findings(struct cli *cli, const gpuenv_triton_report_t *r, const char *model)
{
	for (size_t k = 0; k < r->nfindings; k++) {
		const gpuenv_triton_finding_t *f = &r->findings[k];
		if (f->model != model)
			continue;
		const char *col = f->severity == GPUENV_TRITON_ERROR ? CLI_RED :
				  f->severity == GPUENV_TRITON_WARNING ? CLI_YELLOW : "";
		printf("  %s%-7s%s %s  ", cli_col(cli, col), gpuenv_triton_severity_name(f->severity),
			cli_col(cli, CLI_RESET), f->id);
		cli_put_text(cli, stdout, f->file, strlen(f->file));
		if (f->line)
			printf(":%u:%u", f->line, f->col);
		printf("\n          ");
		cli_put_text(cli, stdout, f->message, strlen(f->message));
		printf("\n");
		if (f->fix) {
			printf("          fix: ");
			cli_put_text(cli, stdout, f->fix, strlen(f->fix));
			printf("\n");
		}
	}
}

static void print_report(struct cli *cli, const gpuenv_triton_report_t *r)
{
	if (r->image) {
		printf("%simage%s ", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
		cli_put_text(cli, stdout, r->image, strlen(r->image));
		printf(": TensorRT %s\n", r->image_tensorrt ? r->image_tensorrt : "unknown (the knowledge base has none)");
	}
	print_findings(cli, r, NULL);
	for (size_t i = 0; i < r->nmodels; i++) {
		const gpuenv_triton_model_t *m = &r->models[i];
		printf("%s%s%s: %s", cli_col(cli, CLI_BOLD), m->name, cli_col(cli, CLI_RESET),
			m->loads ? "loads" : "would fail to load");
		if (m->backend)
			printf(" (backend %s", m->backend);
		if (m->backend && m->max_batch_size >= 0)
			printf(", max_batch_size %lld", m->max_batch_size);
		printf("%s\n", m->backend ? ")" : "");
		print_findings(cli, r, m->name);
	}
	printf("%zu model%s, %zu error%s, %zu warning%s\n", r->nmodels, r->nmodels == 1 ? "" : "s", r->errors,
		r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s");
}

static int cli_triton_check(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	enum { OPT_IMAGE = 1000 };
	static const struct option longopts[] = {
		{ "image", required_argument, 0, OPT_IMAGE },
		{ 0, 0, 0, 0 },
	};
	const char *facts_path = NULL;
	gpuenv_triton_opts_t o = { 0 };
	gpuenv_triton_report_t rep;
	gpuenv_arena_t arena;
	gpuenv_kb_t *kb = NULL;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", longopts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == OPT_IMAGE) {
			if (!*optarg)
				return cli_usage_error(cli, verb, "%s: --image: an empty image reference", verb->name);
			o.image = optarg;
		}
	}
	facts_path = cli->opt.facts;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no REPOSITORY given", verb->name);
	if (argc - optind > 1)
		return cli_usage_error(cli, verb, "%s: one REPOSITORY at a time", verb->name);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (facts_path) {
		/* the node: its GPUs as CUDA numbers them (instance_group gpus) */
		const struct gpuenv_facts *f;
		if ((st = cli_facts_load(cli, verb->name, facts_path, NULL, &arena, &f)) != 0) {
			gpuenv_arena_free(&arena);
			return st;
		}
		const char **cc = gpuenv_arena_calloc(&arena, f->ngpus ? f->ngpus : 1, sizeof *cc);
		if (!cc) {
			gpuenv_arena_free(&arena);
			return cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		}
		size_t n = 0;
		for (size_t i = 0; i < f->ngpus; i++)
			if (f->gpus[i].visible != GPUENV_TRI_FALSE)
				cc[n++] = f->gpus[i].compute_capability;
		o.node.known = true;
		o.node.ngpus = n;
		o.node.cc = cc;
		o.facts = f;
	}
	if ((o.image || o.facts) && gpuenv_kb_load_files(&cli->ctx, cli->opt.kb_dir, GPUENV_TRITON_KB_FILES, &kb)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		gpuenv_arena_free(&arena);
		return st;
	}
	o.kb = kb;
	if (gpuenv_triton_check(&cli->ctx, &arena, argv[optind], &o, &rep)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		gpuenv_kb_free(kb);
		gpuenv_arena_free(&arena);
		return st;
	}
	st = rep.errors ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (cli->json) {
		json_t *j = report_json(cli, &rep);
		int pst = j ? cli_print_json(cli, j) : cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
		st = pst ? pst : st;
	} else
		print_report(cli, &rep);
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&arena);
	return st;
}

const struct cli_verb cli_verb_triton_check = {
	.name = "check",
	.run = cli_triton_check,
	.summary = "check a model repository as Triton would load it",
	.usage = "gpuenv triton check REPOSITORY [--image IMAGE] [--facts FILE] [--json]",
	.help = "\nEach folder of REPOSITORY is a model: config.pbtxt (protobuf text format; every\n"
		"error FILE:LINE:COL), platform / backend and the model file, numeric version\n"
		"folders and version_policy, max_batch_size, each input and output against the ONNX\n"
		"model (name, TYPE_*, dims with the batch dimension, reshape), dynamic_batching,\n"
		"instance_group, ensembles.  Where Triton would fill in the configuration\n"
		"itself, an info line says what.\n\n"
		"  --image IMAGE      the server image (nvcr.io/nvidia/tritonserver:24.10-py3): each\n"
		"                     TensorRT plan's engine record (PLAN.gpuenv.json, gpuenv trt\n"
		"                     build) against the image's TensorRT by the knowledge base, and\n"
		"                     with --facts the image on the node as preflight --image judges\n"
		"                     it; an image the knowledge base does not know is a warning\n\n"
		"exit status: 0 every model would load, 1 a model would fail to load, 2 usage,\n"
		"4 the repository, --facts or the knowledge base could not be read\n",
	.groups = CLI_G_FACTS | CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_FACTS, "  --facts FILE       the node's facts (gpuenv probe --json): instance_group GPUs,\n"
			       "                     cc_model_filenames and the plans' engine records are checked\n"
			       "                     against its GPUs\n" },
		{ 0, NULL },
	},
};
