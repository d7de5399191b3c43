/* gpuenv trt optimize / build / check, and preflight --engine (docs/trt.md):
 * the CLI over lib/trt (gpuenv/trt.h).  The sub-verbs are rows of the trt
 * table in cli/trt.c. */
#include "trt_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/kb_trt.h"
#include "gpuenv/onnx.h"
#include "gpuenv/project.h"
#include "gpuenv/toml.h"
#include "gpuenv/trt.h"
#include "lock_util.h"

#define MAX_SHAPES 64
#define MAX_TARGETS 16

/* the KB files the trt verbs read */
#define TRT_KB_FILES (GPUENV_KB_FILE(GPUENV_KB_TENSORRT) | GPUENV_KB_FILE(GPUENV_KB_GPUS))

static int kb_load(struct cli *cli, const char *dir, gpuenv_kb_t **kb)
{
	if (gpuenv_kb_load_files(&cli->ctx, dir, TRT_KB_FILES, kb) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return 0;
}

/* ---- the model -------------------------------------------------------------------- */

static int load_model(struct cli *cli, gpuenv_arena_t *a, const char *path, gpuenv_trt_model_t *m)
{
	gpuenv_onnx_model_t om;
	gpuenv_trt_input_t *in;

	memset(m, 0, sizeof(*m));
	if (gpuenv_onnx_inspect(&cli->ctx, a, path, &om) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (om.ninputs > GPUENV_TRT_MAX_INPUTS)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %zu inputs: more than TensorRT profiles "
			"gpuenv writes (%d)", path, om.ninputs, GPUENV_TRT_MAX_INPUTS);
	in = om.ninputs ? gpuenv_arena_calloc(a, om.ninputs, sizeof(*in)) : NULL;
	if (om.ninputs && !in)
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
	for (size_t i = 0; i < om.ninputs; i++) {
		const gpuenv_onnx_value_t *v = &om.inputs[i];
		in[i].name = gpuenv_arena_strndup(a, v->name.ptr, v->name.len);
		if (!in[i].name)
			return cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		in[i].has_shape = v->has_shape;
		if (v->ndims > GPUENV_TRT_MAX_DIMS)
			return cli_error(cli, CLI_EXIT_CANNOT, "%s: input '%s' has %zu dimensions, more "
				"than TensorRT takes (%d)", path, in[i].name, v->ndims, GPUENV_TRT_MAX_DIMS);
		in[i].ndims = v->ndims;
		for (size_t d = 0; d < v->ndims; d++) {
			const gpuenv_onnx_dim_t *dim = &v->dims[d];
			in[i].dims[d] = dim->kind == GPUENV_ONNX_DIM_FIXED && dim->value > 0 ? dim->value : -1;
			if (dim->kind == GPUENV_ONNX_DIM_SYMBOLIC)
				in[i].dim_names[d] = gpuenv_arena_strndup(a, dim->param.ptr, dim->param.len);
		}
	}
	m->path = path;
	m->opset = gpuenv_onnx_opset_version(&om, "ai.onnx");
	m->ninputs = om.ninputs;
	m->inputs = in;
	return 0;
}

/* ---- where the engine goes: a target -------------------------------------------------- */

struct trt_target {
	const char *name;     /* the project's target, or NULL (--gpu) */
	const char *gpu;      /* "Tesla T4" */
	int cc_major, cc_minor;
	const char *tensorrt; /* "8.5.3.1" */
	const char *tensorrt_from; /* "--tensorrt", "pylock.t4.toml", "pyproject.toml:23" */
};

/* A GPU by name ("T4"), compute capability ("7.5") or architecture ("sm_75"). */
static int gpu_of(struct cli *cli, gpuenv_arena_t *a, const gpuenv_kb_t *kb, const char *q,
	struct trt_target *t)
{
	gpuenv_kb_gpu_match_t m;
	gpuenv_kb_sm_t sm;

	if (gpuenv_kb_sm_parse(gpuenv_str(q), &sm) && !sm.variant) {
		t->gpu = q;
		t->cc_major = sm.major;
		t->cc_minor = sm.minor;
		return 0;
	}
	if (gpuenv_kb_gpu_lookup(kb, q, &m) != 0)
		return cli_report(cli, CLI_EXIT_USAGE);
	t->gpu = gpuenv_arena_strndup(a, m.gpu->name.ptr, m.gpu->name.len);
	if (!t->gpu)
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
	t->cc_major = (int)m.gpu->cc.part[0];
	t->cc_minor = (int)m.gpu->cc.part[1];
	return 0;
}

/* The target's TensorRT: its lock's tensorrt package, else an exact pin of
 * tensorrt in its dependencies (a Poetry group's "8.5.3.1"). */
static const char *target_tensorrt(struct cli *cli, gpuenv_project_t *pj,
	const gpuenv_manifest_target_t *mt, const char **from)
{
	gpuenv_arena_t *a = &pj->arena;
	const char *path = gpuenv_arena_printf(a, "%s/%s", pj->dir,
		gpuenv_project_lock_name(a, &pj->m, mt)).ptr;
	gpuenv_lock_t lk;
	const gpuenv_dep_t *deps;
	size_t nd;
	gpuenv_error_t saved = cli->ctx.err;

	memset(&lk, 0, sizeof(lk));
	if (path && access(path, F_OK) == 0) {
		if (gpuenv_project_read_lock(&cli->ctx, a, path, &lk) == 0) {
			for (size_t i = 0; i < lk.npackages; i++)
				if (!strcmp(lk.packages[i].name, "tensorrt") ||
					!strncmp(lk.packages[i].name, "tensorrt-cu", 11)) {
					if (lk.packages[i].version && !strstr(lk.packages[i].name, "-libs") &&
						!strstr(lk.packages[i].name, "-bindings")) {
						*from = path;
						return lk.packages[i].version;
					}
				}
		} else {
			cli_report(cli, CLI_EXIT_CANNOT);
		}
	}
	cli->ctx.err = saved;
	if (gpuenv_manifest_target_deps(&cli->ctx, a, &pj->m, mt, &deps, &nd) != 0) {
		cli->ctx.err = saved;
		return NULL;
	}
	for (size_t i = 0; i < nd; i++) {
		const gpuenv_specset_t *s = &deps[i].req.spec;
		if (strcmp(deps[i].name, "tensorrt") != 0 || s->n != 1 ||
			s->items[0].op != GPUENV_OP_EQ || s->items[0].wildcard)
			continue;
		*from = gpuenv_arena_printf(a, "%s:%u", pj->path, deps[i].line).ptr;
		return gpuenv_arena_strndup(a, s->items[0].text.ptr, s->items[0].text.len);
	}
	return NULL;
}

/* [tool.gpuenv.trt] shapes = ["input:1x3x640x640..8x3x640x640..32x3x640x640"] */
static int project_shapes(struct cli *cli, gpuenv_project_t *pj, gpuenv_trt_shape_t *shapes,
	size_t *n)
{
	gpuenv_toml_doc_t doc;
	gpuenv_toml_value_t *v;
	gpuenv_buf_t b;
	int st = 0;

	gpuenv_buf_init(&b, &cli->ctx, GPUENV_TOML_MAX_SIZE);
	if (gpuenv_fs_read(&cli->ctx, pj->path, GPUENV_TOML_MAX_SIZE, &b) ||
		gpuenv_toml_doc_init(&doc, &cli->ctx, pj->path)) {
		gpuenv_buf_free(&b);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	if (gpuenv_toml_parse(&doc, b.data ? b.data : "", b.len)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	v = gpuenv_toml_get_path(doc.root, "tool.gpuenv.trt.shapes");
	if (!v)
		goto out;
	if (v->type != GPUENV_TOML_ARRAY) {
		gpuenv_fail(&cli->ctx, GPUENV_ETYPE, pj->path, v->line, v->col,
			"tool.gpuenv.trt.shapes must be an array of \"NAME:MIN..OPT..MAX\" strings");
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	for (uint32_t i = 0; i < v->u.arr->len && !st; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const char *origin = gpuenv_arena_printf(&pj->arena, "%s:%u:%u", pj->path, e->line,
			e->col).ptr;
		if (e->type != GPUENV_TOML_STRING) {
			gpuenv_fail(&cli->ctx, GPUENV_ETYPE, pj->path, e->line, e->col,
				"tool.gpuenv.trt.shapes[%u] must be a string", i);
			st = cli_report(cli, CLI_EXIT_CANNOT);
		} else if (*n == MAX_SHAPES) {
			st = cli_error(cli, CLI_EXIT_CANNOT, "%s: more than %d shapes", pj->path,
				MAX_SHAPES);
		} else if (gpuenv_trt_shape_parse(&cli->ctx, &pj->arena,
				   gpuenv_arena_strndup(&pj->arena, e->u.str.ptr, e->u.str.len),
				   origin, &shapes[*n])) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
		} else {
			(*n)++;
		}
	}
out:
	gpuenv_toml_doc_free(&doc);
	gpuenv_buf_free(&b);
	return st;
}

/* ---- optimize ----------------------------------------------------------------------- */

struct opt_args {
	const char *model, *gpu, *tensorrt, *out, *project, *kb_dir, *check_command;
	const char *targets[MAX_TARGETS];
	size_t ntargets;
	const char *shape_text[MAX_SHAPES];
	size_t nshape_text;
	int precision;
	bool portable_gpus, portable_tensorrt;
	long long workspace_mib;
};

static json_t *notes_json(const gpuenv_trt_note_t *n, size_t count)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < count; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s?}", "kind",
			n[i].kind == GPUENV_TRT_NOTE_WARN ? "warning" : "info", "text", n[i].text,
			"source", n[i].source));
	return a;
}

static void print_notes(struct cli *cli, const gpuenv_trt_note_t *n, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		printf("  %s%s%s %s\n", cli_col(cli, n[i].kind == GPUENV_TRT_NOTE_WARN ? CLI_YELLOW : ""),
			n[i].kind == GPUENV_TRT_NOTE_WARN ? "warning:" : "-", cli_col(cli, CLI_RESET),
			n[i].text);
		if (n[i].source && cli->verbose > 0)
			printf("      source: %s\n", n[i].source);
	}
}

static void print_command(const gpuenv_trt_plan_t *p)
{
	for (size_t i = 0; i < p->argc; i++)
		printf("%s%s%s", i ? "  " : "", p->argv[i], i + 1 < p->argc ? " \\\n" : "\n");
}

/* Which targets can share one engine: the same TensorRT release and the
 * same compute capability, or (built with --portable-gpus) compute
 * capabilities ampere+ covers, built on one of them. */
static const char *share_key(gpuenv_arena_t *a, const gpuenv_kb_t *kb, const struct trt_target *t,
	bool portable)
{
	const gpuenv_kb_trt_hwcompat_t *amp = gpuenv_kb_trt_hwcompat(kb, gpuenv_str("ampere+"));
	gpuenv_kb_ver_t v;

	if (portable && amp && gpuenv_kb_ver_parse(gpuenv_str(t->tensorrt), &v) &&
		gpuenv_kb_ver_cmp(&v, &amp->added) >= 0 &&
		t->cc_major * 10 + t->cc_minor >= (int)(amp->cc_min.part[0] * 10 + amp->cc_min.part[1]))
		return gpuenv_arena_printf(a, "TensorRT %s, hardware compatibility ampere+",
			t->tensorrt).ptr;
	return gpuenv_arena_printf(a, "TensorRT %s, sm_%d%d", t->tensorrt, t->cc_major,
		t->cc_minor).ptr;
}

static int optimize_run(struct cli *cli, const struct cli_verb *verb, struct opt_args *o)
{
	gpuenv_project_t pj;
	struct trt_target tg[MAX_TARGETS];
	gpuenv_trt_shape_t shapes[MAX_SHAPES];
	gpuenv_trt_plan_t *plans = NULL;
	gpuenv_trt_model_t model;
	gpuenv_kb_t *kb = NULL;
	gpuenv_arena_t a;
	size_t ntg = 0, nshapes = 0;
	bool have_pj = false;
	int st = 0;

	memset(&pj, 0, sizeof(pj));
	memset(tg, 0, sizeof(tg));
	gpuenv_arena_init(&a, &cli->ctx, 0);
	if ((st = kb_load(cli, o->kb_dir, &kb)))
		goto out;
	if (o->ntargets) {
		if ((st = cli_project_open(cli, verb->name, o->project, NULL, o->kb_dir, NULL,
			     CLI_PROJECT_DECLARED, &pj)))
			goto out;
		have_pj = true;
		for (size_t i = 0; i < o->ntargets; i++) {
			const gpuenv_manifest_target_t *mt = cli_project_target(cli, verb, &pj,
				o->targets[i], &st);
			struct trt_target *t = &tg[ntg++];
			if (!mt)
				goto out;
			t->name = mt->name;
			if (o->gpu) {
				if ((st = gpu_of(cli, &a, kb, o->gpu, t)))
					goto out;
			} else if (!mt->target.ngpus || mt->target.gpus[0].cc_major < 0) {
				st = cli_error(cli, CLI_EXIT_USAGE, "%s: target %s declares no GPU with a "
					"known compute capability: give --gpu", verb->name, mt->name);
				goto out;
			} else {
				t->gpu = mt->target.gpus[0].name;
				t->cc_major = mt->target.gpus[0].cc_major;
				t->cc_minor = mt->target.gpus[0].cc_minor;
			}
			t->tensorrt = o->tensorrt;
			t->tensorrt_from = "--tensorrt";
			if (!t->tensorrt)
				t->tensorrt = target_tensorrt(cli, &pj, mt, &t->tensorrt_from);
			if (!t->tensorrt) {
				st = cli_error(cli, CLI_EXIT_USAGE, "%s: target %s locks no tensorrt "
					"(%s/%s) and pins none: give --tensorrt VERSION, or add tensorrt to "
					"its dependencies and run gpuenv lock --target %s", verb->name,
					mt->name, pj.dir, gpuenv_project_lock_name(&a, &pj.m, mt), mt->name);
				goto out;
			}
		}
		if ((st = project_shapes(cli, &pj, shapes, &nshapes)))
			goto out;
	} else if (o->check_command && !o->model && !o->gpu) {
		/* a line judged against a release needs no GPU */
		if (!o->tensorrt) {
			st = cli_usage_error(cli, verb, "%s: against which TensorRT? give --target T or "
				"--tensorrt VERSION", verb->name);
			goto out;
		}
		tg[0].gpu = "-";
		tg[0].tensorrt = o->tensorrt;
		tg[0].tensorrt_from = "--tensorrt";
		ntg = 1;
	} else {
		if (!o->gpu || !o->tensorrt) {
			st = cli_usage_error(cli, verb, "%s: for which GPU and TensorRT? give --target T "
				"(a project's target), or --gpu NAME and --tensorrt VERSION", verb->name);
			goto out;
		}
		if ((st = gpu_of(cli, &a, kb, o->gpu, &tg[0])))
			goto out;
		tg[0].tensorrt = o->tensorrt;
		tg[0].tensorrt_from = "--tensorrt";
		ntg = 1;
	}
	/* --shapes replaces the project's profile of the same input */
	for (size_t i = 0; i < o->nshape_text; i++) {
		gpuenv_trt_shape_t s;
		size_t k;
		if (gpuenv_trt_shape_parse(&cli->ctx, &a, o->shape_text[i], "--shapes", &s)) {
			st = cli_report(cli, CLI_EXIT_USAGE);
			goto out;
		}
		for (k = 0; k < nshapes && strcmp(shapes[k].name, s.name); k++)
			;
		if (k == nshapes && nshapes == MAX_SHAPES) {
			st = cli_usage_error(cli, verb, "%s: more than %d --shapes", verb->name, MAX_SHAPES);
			goto out;
		}
		shapes[k] = s;
		nshapes += k == nshapes;
	}

	if (o->check_command) {
		/* judge the line against the first target's TensorRT */
		gpuenv_trt_cmd_check_t cc;
		if (ntg > 1) {
			st = cli_usage_error(cli, verb, "%s: --check-command judges one line against one "
				"TensorRT: give one --target", verb->name);
			goto out;
		}
		if (gpuenv_trt_check_command(&cli->ctx, &a, kb, o->check_command, tg[0].tensorrt, &cc)) {
			st = cli_report(cli, cli->ctx.err.code == GPUENV_EUSAGE ? CLI_EXIT_USAGE
				: CLI_EXIT_CANNOT);
			goto out;
		}
		st = cc.nremoved + cc.nnot_yet + cc.ndeprecated ? CLI_EXIT_FAIL : CLI_EXIT_OK;
		if (cli->json) {
			json_t *f = json_array();
			for (size_t i = 0; f && i < cc.nfindings; i++) {
				const gpuenv_trt_cmd_finding_t *x = &cc.findings[i];
				static const char *const states[] = { "unknown", "ok", "not-yet",
					"deprecated", "removed" };
				json_array_append_new(f, json_pack("{s:s, s:s, s:s, s:s?}", "arg", x->arg,
					"state", states[x->state], "text", x->text, "source", x->source));
			}
			if (cli_print_json(cli, json_pack("{s:s, s:s, s:o, s:s, s:I, s:I}", "tensorrt",
				    tg[0].tensorrt, "tensorrt_from", tg[0].tensorrt_from, "findings",
				    f ? f : json_null(), "rewritten", cc.rewritten, "removed",
				    (json_int_t)cc.nremoved, "deprecated", (json_int_t)cc.ndeprecated)))
				st = CLI_EXIT_CANNOT;
			goto out;
		}
		printf("the trtexec line against TensorRT %s (%s%s%s):\n", tg[0].tensorrt,
			tg[0].name ? "target " : "", tg[0].name ? tg[0].name : "", tg[0].name
				? gpuenv_arena_printf(&a, ", from %s", tg[0].tensorrt_from).ptr
				: tg[0].tensorrt_from);
		for (size_t i = 0; i < cc.nfindings; i++)
			printf("  %s%s: %s\n", cc.findings[i].state == GPUENV_KB_TRT_FLAG_REMOVED ||
					cc.findings[i].state == GPUENV_KB_TRT_FLAG_NOT_YET
					? "error: " : cc.findings[i].state == GPUENV_KB_TRT_FLAG_DEPRECATED
					? "warning: " : "", cc.findings[i].arg, cc.findings[i].text);
		printf("%zu removed, %zu deprecated, %zu not yet in this release\n", cc.nremoved,
			cc.ndeprecated, cc.nnot_yet);
		printf("instead:\n  %s\n", cc.rewritten);
		if (!o->model)
			goto out;
		printf("\n");
	}
	if (!o->model) {
		st = cli_usage_error(cli, verb, "%s: which model? give MODEL.onnx", verb->name);
		goto out;
	}
	if ((st = load_model(cli, &a, o->model, &model)))
		goto out;
	plans = gpuenv_arena_calloc(&a, ntg, sizeof(*plans));
	if (!plans) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ntg; i++) {
		gpuenv_trt_shape_t mine[MAX_SHAPES];
		size_t nmine = 0;
		/* the project's profiles of inputs this model has; --shapes as given */
		for (size_t k = 0; k < nshapes; k++) {
			bool has = !strcmp(shapes[k].origin, "--shapes");
			for (size_t j = 0; !has && j < model.ninputs; j++)
				has = !strcmp(model.inputs[j].name, shapes[k].name);
			if (has)
				mine[nmine++] = shapes[k];
		}
		gpuenv_trt_plan_req_t req = { .kb = kb, .model = &model, .onnx = o->model,
			.engine = ntg > 1 && o->out ? gpuenv_arena_printf(&a, "%s.%s", o->out,
							     tg[i].name).ptr : o->out,
			.tensorrt = tg[i].tensorrt, .gpu = tg[i].gpu, .cc_major = tg[i].cc_major,
			.cc_minor = tg[i].cc_minor, .shapes = mine, .nshapes = nmine,
			.precision = o->precision, .portable_gpus = o->portable_gpus,
			.portable_tensorrt = o->portable_tensorrt, .workspace_mib = o->workspace_mib };
		if (ntg > 1 && !o->out)
			req.engine = gpuenv_arena_printf(&a, "%.*s.%s.plan",
				(int)(strlen(o->model) - (strlen(o->model) > 5 && !strcmp(o->model +
					strlen(o->model) - 5, ".onnx") ? 5 : 0)), o->model, tg[i].name).ptr;
		if (gpuenv_trt_plan(&cli->ctx, &a, &req, &plans[i])) {
			int code = cli->ctx.err.code;
			if (tg[i].name)
				fprintf(stderr, "%s: %s: target %s (%s, TensorRT %s from %s):\n", cli->prog,
					verb->name, tg[i].name, tg[i].gpu, tg[i].tensorrt, tg[i].tensorrt_from);
			st = cli_report(cli, code == GPUENV_EUSAGE ? CLI_EXIT_USAGE
				: code == GPUENV_EUNSUPPORTED ? CLI_EXIT_FAIL : CLI_EXIT_CANNOT);
			goto out;
		}
	}
	if (cli->json) {
		json_t *arr = json_array(), *root;
		for (size_t i = 0; arr && i < ntg; i++) {
			json_t *cmd = json_array(), *o1;
			for (size_t k = 0; cmd && k < plans[i].argc; k++)
				json_array_append_new(cmd, json_string(plans[i].argv[k]));
			o1 = json_pack("{s:o, s:o, s:s?, s:s, s:s, s:s, s:s, s:s, s:b}", "command",
				cmd ? cmd : json_null(), "notes", notes_json(plans[i].notes, plans[i].nnotes),
				"target", tg[i].name, "gpu", tg[i].gpu, "compute_capability",
				gpuenv_arena_printf(&a, "%d.%d", tg[i].cc_major, tg[i].cc_minor).ptr,
				"tensorrt", tg[i].tensorrt, "tensorrt_from", tg[i].tensorrt_from,
				"hardware_compatibility", plans[i].hardware_compatibility,
				"version_compatible", plans[i].version_compatible);
			if (o1 && ntg > 1)
				json_object_set_new(o1, "shares_with", json_string(share_key(&a, kb, &tg[i],
					o->portable_gpus)));
			json_array_append_new(arr, o1);
		}
		root = ntg == 1 && arr ? json_incref(json_array_get(arr, 0)) : json_pack("{s:O}",
			"targets", arr);
		json_decref(arr);
		if (cli_print_json(cli, root))
			st = CLI_EXIT_CANNOT;
		goto out;
	}
	for (size_t i = 0; i < ntg; i++) {
		if (ntg > 1 || tg[i].name)
			printf("%s# target %s: %s (sm_%d%d), TensorRT %s from %s\n", i ? "\n" : "",
				tg[i].name ? tg[i].name : "-", tg[i].gpu, tg[i].cc_major, tg[i].cc_minor,
				tg[i].tensorrt, tg[i].tensorrt_from);
		print_command(&plans[i]);
		print_notes(cli, plans[i].notes, plans[i].nnotes);
	}
	if (ntg > 1) {
		/* one engine per distinct key */
		printf("\nengines:\n");
		for (size_t i = 0; i < ntg; i++) {
			const char *key = share_key(&a, kb, &tg[i], o->portable_gpus);
			bool first = true;
			for (size_t k = 0; k < i && first; k++)
				first = strcmp(key, share_key(&a, kb, &tg[k], o->portable_gpus)) != 0;
			if (!first)
				continue;
			printf("  %s:", key);
			for (size_t k = i; k < ntg; k++)
				if (!strcmp(key, share_key(&a, kb, &tg[k], o->portable_gpus)))
					printf(" %s", tg[k].name);
			printf("\n");
		}
		printf("(targets on one line can share one engine; the others each need their own%s)\n",
			o->portable_gpus ? "" : "; --portable-gpus lets sm_80+ targets of one TensorRT "
						"share one");
	}
out:
	if (have_pj)
		gpuenv_project_close(&pj);
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&a);
	return st;
}

#define OPT_OPTIONS \
	{ "target", required_argument, NULL, 't' }, \
	{ "gpu", required_argument, NULL, 'g' }, \
	{ "tensorrt", required_argument, NULL, 'r' }, \
	{ "shapes", required_argument, NULL, 's' }, \
	{ "precision", required_argument, NULL, 'P' }, \
	{ "portable-gpus", no_argument, NULL, 'G' }, \
	{ "portable-tensorrt", no_argument, NULL, 'R' }, \
	{ "workspace-mib", required_argument, NULL, 'W' }, \
	{ "project", required_argument, NULL, 'p' }, \
	{ "kb-dir", required_argument, NULL, 'k' }

/* One of OPT_OPTIONS into o: 1 taken, 0 not one of them, else an exit status
 * in *st (-1 returned). */
static int opt_arg(struct cli *cli, const struct cli_verb *verb, int c, struct opt_args *o, int *st)
{
	char *end;

	switch (c) {
	case 't':
		if (o->ntargets == MAX_TARGETS) {
			*st = cli_usage_error(cli, verb, "%s: more than %d --target", verb->name, MAX_TARGETS);
			return -1;
		}
		o->targets[o->ntargets++] = optarg;
		return 1;
	case 'g':
		o->gpu = optarg;
		return 1;
	case 'r':
		o->tensorrt = optarg;
		return 1;
	case 's':
		if (o->nshape_text == MAX_SHAPES) {
			*st = cli_usage_error(cli, verb, "%s: more than %d --shapes", verb->name, MAX_SHAPES);
			return -1;
		}
		o->shape_text[o->nshape_text++] = optarg;
		return 1;
	case 'P':
		o->precision = gpuenv_trt_precision_parse(optarg);
		if (o->precision < 0) {
			*st = cli_usage_error(cli, verb, "%s: --precision %s: one of auto, fp32, fp16, "
				"bf16, int8, fp8", verb->name, optarg);
			return -1;
		}
		return 1;
	case 'G':
		o->portable_gpus = true;
		return 1;
	case 'R':
		o->portable_tensorrt = true;
		return 1;
	case 'W':
		errno = 0;
		o->workspace_mib = strtoll(optarg, &end, 10);
		if (errno || *end || o->workspace_mib < 1 || o->workspace_mib > (1ll << 30)) {
			*st = cli_usage_error(cli, verb, "%s: --workspace-mib %s: a size in MiB", verb->name,
				optarg);
			return -1;
		}
		return 1;
	case 'p':
		o->project = optarg;
		return 1;
	case 'k':
		o->kb_dir = optarg;
		return 1;
	}
	return 0;
}

static int cli_trt_optimize(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		OPT_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "check-command", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	struct opt_args o;
	int c, st, took;

	memset(&o, 0, sizeof(o));
	while ((c = cli_getopt(cli, verb, argc, argv, "o:", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if ((took = opt_arg(cli, verb, c, &o, &st)) < 0)
			return st;
		if (took)
			continue;
		if (c == 'o')
			o.out = optarg;
		else if (c == 'C')
			o.check_command = optarg;
		else
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
	}
	if (optind < argc)
		o.model = argv[optind++];
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: one model at a time ('%s')", verb->name,
			argv[optind]);
	if (!o.model && !o.check_command)
		return cli_usage_error(cli, verb, "%s: which model? give MODEL.onnx", verb->name);
	return optimize_run(cli, verb, &o);
}

const struct cli_verb cli_verb_trt_optimize = {
	.name = "optimize",
	.run = cli_trt_optimize,
	.summary = "the trtexec command that builds a model for a target's GPU and TensorRT",
	.usage = "gpuenv trt optimize MODEL.onnx [--target T ... | --gpu NAME --tensorrt VERSION]\n"
		"                 [--shapes NAME:MIN..OPT..MAX ...] [--precision P] [--portable-gpus]\n"
		"                 [--portable-tensorrt] [--workspace-mib N] [-o ENGINE] [--json]\n"
		"       gpuenv trt optimize --check-command \"trtexec ...\" (--target T | --tensorrt V)\n"
		"                 [MODEL.onnx]",
	.help = "  --target T         a target of the project (repeat it: which targets can share\n"
		"                     one engine); its GPU, and the TensorRT its lock holds\n"
		"  --gpu NAME         the GPU (T4, A100, H200, 8.6, sm_75) instead of the target's\n"
		"  --tensorrt V       the TensorRT release (8.5.3.1) instead of the lock's\n"
		"  --shapes N:A..B..C the profile of input N (1x3x224x224..8x3x224x224..32x3x224x224);\n"
		"                     else [tool.gpuenv.trt] shapes of pyproject.toml; else a dynamic\n"
		"                     batch gets 1..8..32 (said as a default)\n"
		"  --precision P      auto (FP16 where the GPU runs it fast), fp32, fp16, bf16, int8,\n"
		"                     fp8: refused where the GPU or that TensorRT lacks it\n"
		"  --portable-gpus    hardware compatibility (ampere+, sm_80 and newer; TensorRT 8.6+)\n"
		"  --portable-tensorrt  a version-compatible engine (TensorRT 8.6+)\n"
		"  --workspace-mib N  the builder's workspace (default 4096)\n"
		"  -o, --output ENGINE  --saveEngine (default: MODEL.plan)\n"
		"  --check-command L  judge a trtexec line L against the target's TensorRT: removed and\n"
		"                     deprecated flags, and the line gpuenv would write instead\n"
		"  --project P        the project (a folder or pyproject.toml; default .)\n"
		"  --kb-dir DIR       knowledge-base files (tensorrt.toml, gpus.toml) from DIR\n"
		"exit status: 0 the command was written (check-command: nothing to change), 1 refused\n"
		"  (a portability or precision this GPU or TensorRT lacks; check-command: flags to\n"
		"  change), 2 usage, 4 the model, project or KB could not be read (docs/exit-codes.md)\n",
};

/* ---- build ---------------------------------------------------------------------------- */

/* trtexec on PATH, in $TENSORRT_HOME/bin, in /usr/src/tensorrt/bin. */
static const char *find_trtexec(struct cli *cli, gpuenv_arena_t *a, const char **looked)
{
	const char *path = gpuenv_ctx_getenv(&cli->ctx, "PATH");
	const char *home = gpuenv_ctx_getenv(&cli->ctx, "TENSORRT_HOME");
	const char *p = path ? path : "";

	while (*p) {
		size_t n = strcspn(p, ":");
		const char *cand = gpuenv_arena_printf(a, "%.*s/trtexec", (int)n, n ? p : ".").ptr;
		if (cand && access(cand, X_OK) == 0)
			return cand;
		p += n + (p[n] == ':');
	}
	if (home && *home) {
		const char *cand = gpuenv_arena_printf(a, "%s/bin/trtexec", home).ptr;
		if (cand && access(cand, X_OK) == 0)
			return cand;
	}
	if (access("/usr/src/tensorrt/bin/trtexec", X_OK) == 0)
		return "/usr/src/tensorrt/bin/trtexec";
	*looked = gpuenv_arena_printf(a, "PATH (%s), $TENSORRT_HOME/bin (%s), "
		"/usr/src/tensorrt/bin", path ? path : "unset", home && *home
			? gpuenv_arena_printf(a, "%s/bin", home).ptr : "TENSORRT_HOME unset").ptr;
	return NULL;
}

/* "[TensorRT v8503]" anywhere in a line: the version (8.5.3). */
static bool banner_version(gpuenv_arena_t *a, const char *line, const char **out)
{
	const char *p = strstr(line, "[TensorRT v");
	gpuenv_kb_ver_t v;
	char *end;
	long long n;

	if (!p)
		return false;
	p += 11;
	errno = 0;
	n = strtoll(p, &end, 10);
	if (errno || end == p || *end != ']' || !gpuenv_kb_trt_version_from_int(n, &v))
		return false;
	*out = gpuenv_arena_printf(a, "%u.%u.%u", v.part[0], v.part[1], v.part[2]).ptr;
	return *out != NULL;
}

/* Run argv, copying its output line by line to out and reading the banner.
 * The exit status of the child, or -1 when it could not run (reported). */
static int run_trtexec(struct cli *cli, gpuenv_arena_t *a, char *const *argv, FILE *out,
	const char **banner)
{
	int fd[2], status;
	pid_t pid;
	FILE *in;
	char line[8192];

	if (pipe(fd) != 0) {
		cli_error(cli, CLI_EXIT_CANNOT, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		cli_error(cli, CLI_EXIT_CANNOT, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		dprintf(2, "gpuenv: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	in = fdopen(fd[0], "r");
	if (!in) {
		close(fd[0]);
		waitpid(pid, &status, 0);
		cli_error(cli, CLI_EXIT_CANNOT, "fdopen: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), in)) {
		fputs(line, out);
		fflush(out);
		if (!*banner)
			banner_version(a, line, banner);
	}
	fclose(in);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			cli_error(cli, CLI_EXIT_CANNOT, "waitpid: %s", strerror(errno));
			return -1;
		}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static const char *sha256_hex(struct cli *cli, gpuenv_arena_t *a, const char *path)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];

	if (gpuenv_sha256_file(&cli->ctx, path, d) != 0)
		return NULL;
	gpuenv_hex(d, sizeof(d), hex);
	return gpuenv_arena_strndup(a, hex, strlen(hex));
}

static const char *now_utc(struct cli *cli, gpuenv_arena_t *a)
{
	const char *sde = gpuenv_ctx_getenv(&cli->ctx, "SOURCE_DATE_EPOCH");
	time_t t = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : time(NULL);
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return gpuenv_arena_strndup(a, buf, strlen(buf));
}

static int cli_trt_build(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		OPT_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "facts", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct opt_args o;
	const char *facts_path = NULL, *trtexec, *looked = NULL, *banner = NULL, *engine;
	const gpuenv_facts_t *facts;
	const gpuenv_target_gpu_t *g = NULL;
	gpuenv_target_t node;
	gpuenv_trt_model_t model;
	gpuenv_trt_plan_t plan;
	gpuenv_trt_record_t rec;
	gpuenv_project_t pj;
	gpuenv_kb_t *kb = NULL;
	gpuenv_arena_t a;
	char **xargv;
	const char *text, *record_path, *tensorrt = NULL, *tensorrt_from = "--tensorrt";
	gpuenv_trt_shape_t shapes[MAX_SHAPES];
	size_t nshapes = 0, nextra = 0;
	bool have_pj = false;
	char **extra;
	int c, st = 0, took, rc, dd;

	memset(&o, 0, sizeof(o));
	memset(&pj, 0, sizeof(pj));
	/* trtexec's own arguments after "--", split off before option parsing
	 * (getopt would move them) */
	for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
		;
	extra = argv + (dd < argc ? dd + 1 : argc);
	nextra = dd < argc ? (size_t)(argc - dd - 1) : 0;
	argc = dd;
	while ((c = cli_getopt(cli, verb, argc, argv, "o:", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if ((took = opt_arg(cli, verb, c, &o, &st)) < 0)
			return st;
		if (took)
			continue;
		if (c == 'o')
			o.out = optarg;
		else if (c == 'f')
			facts_path = optarg;
		else
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
	}
	if (optind < argc)
		o.model = argv[optind++];
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s' (trtexec's own "
			"arguments go after --)", verb->name, argv[optind]);
	if (!o.model)
		return cli_usage_error(cli, verb, "%s: which model? give MODEL.onnx", verb->name);
	if (o.ntargets > 1)
		return cli_usage_error(cli, verb, "%s: one --target: an engine is built for the GPU "
			"it is built on", verb->name);
	if (o.gpu)
		return cli_usage_error(cli, verb, "%s: the engine is built for this machine's GPU; "
			"--gpu is an option of trt optimize", verb->name);
	gpuenv_arena_init(&a, &cli->ctx, 0);
	if ((st = kb_load(cli, o.kb_dir, &kb)))
		goto out;
	/* trtexec first: without it nothing else matters */
	if (!(trtexec = find_trtexec(cli, &a, &looked))) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: trtexec not found; looked in %s: install "
			"TensorRT (its tar or deb package has bin/trtexec; NGC's tensorrt image has it in "
			"/usr/src/tensorrt/bin) and set TENSORRT_HOME", verb->name, looked);
		goto out;
	}
	/* the GPU it builds on, from the probe (or the snapshot --facts gives) */
	if ((st = cli_facts_load(cli, verb->name, facts_path, NULL, &a, &facts)))
		goto out;
	if (gpuenv_target_from_facts(&cli->ctx, &a, facts, SIZE_MAX, &node)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	for (size_t i = 0; i < node.ngpus && !g; i++)
		if (node.gpus[i].visible && node.gpus[i].cc_major >= 0)
			g = &node.gpus[i];
	if (!g) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: no visible NVIDIA GPU with a known compute "
			"capability here: TensorRT builds an engine on the GPU it is for", verb->name);
		goto out;
	}
	tensorrt = o.tensorrt;
	if (o.ntargets) {
		const gpuenv_manifest_target_t *mt;
		if ((st = cli_project_open(cli, verb->name, o.project, NULL, o.kb_dir, NULL,
			     CLI_PROJECT_DECLARED, &pj)))
			goto out;
		have_pj = true;
		if (!(mt = cli_project_target(cli, verb, &pj, o.targets[0], &st)))
			goto out;
		if (mt->target.ngpus && mt->target.gpus[0].cc_major >= 0 &&
			(mt->target.gpus[0].cc_major != g->cc_major ||
				mt->target.gpus[0].cc_minor != g->cc_minor) && !o.portable_gpus) {
			st = cli_error(cli, CLI_EXIT_FAIL, "%s: target %s is a %s (sm_%d%d), this "
				"machine's GPU a %s (sm_%d%d): TensorRT builds for the GPU it runs on; "
				"build on a %s, or with --portable-gpus where both are sm_80+", verb->name,
				mt->name, mt->target.gpus[0].name, mt->target.gpus[0].cc_major,
				mt->target.gpus[0].cc_minor, g->name ? g->name : "GPU", g->cc_major,
				g->cc_minor, mt->target.gpus[0].name);
			goto out;
		}
		if (!tensorrt && (tensorrt = target_tensorrt(cli, &pj, mt, &tensorrt_from)) == NULL) {
			st = cli_error(cli, CLI_EXIT_USAGE, "%s: target %s locks no tensorrt: give "
				"--tensorrt VERSION", verb->name, mt->name);
			goto out;
		}
		if ((st = project_shapes(cli, &pj, shapes, &nshapes)))
			goto out;
	}
	if (!tensorrt) {
		/* the node's own TensorRT (the probe's libnvinfer) */
		for (size_t i = 0; i < node.nlibs && !tensorrt; i++)
			if (!strcmp(node.libs[i].name, "nvinfer"))
				tensorrt = node.libs[i].version;
		tensorrt_from = "libnvinfer";
	}
	if (!tensorrt) {
		st = cli_error(cli, CLI_EXIT_USAGE, "%s: which TensorRT is %s? the probe found no "
			"libnvinfer: give --tensorrt VERSION or --target T", verb->name, trtexec);
		goto out;
	}
	for (size_t i = 0; i < o.nshape_text; i++) {
		size_t k;
		gpuenv_trt_shape_t s;
		if (gpuenv_trt_shape_parse(&cli->ctx, &a, o.shape_text[i], "--shapes", &s)) {
			st = cli_report(cli, CLI_EXIT_USAGE);
			goto out;
		}
		for (k = 0; k < nshapes && strcmp(shapes[k].name, s.name); k++)
			;
		if (k == MAX_SHAPES)
			continue;
		shapes[k] = s;
		nshapes += k == nshapes;
	}
	if ((st = load_model(cli, &a, o.model, &model)))
		goto out;
	{
		gpuenv_trt_plan_req_t req = { .kb = kb, .model = &model, .onnx = o.model,
			.engine = o.out, .tensorrt = tensorrt, .gpu = g->name ? g->name : "GPU",
			.cc_major = g->cc_major, .cc_minor = g->cc_minor, .shapes = shapes,
			.nshapes = nshapes, .precision = o.precision, .portable_gpus = o.portable_gpus,
			.portable_tensorrt = o.portable_tensorrt, .workspace_mib = o.workspace_mib };
		if (gpuenv_trt_plan(&cli->ctx, &a, &req, &plan)) {
			int code = cli->ctx.err.code;
			st = cli_report(cli, code == GPUENV_EUSAGE ? CLI_EXIT_USAGE
				: code == GPUENV_EUNSUPPORTED ? CLI_EXIT_FAIL : CLI_EXIT_CANNOT);
			goto out;
		}
	}
	engine = strchr(plan.argv[2], '=') + 1; /* --saveEngine= */
	xargv = gpuenv_arena_calloc(&a, plan.argc + nextra + 1, sizeof(*xargv));
	if (!xargv) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto out;
	}
	xargv[0] = (char *)trtexec;
	for (size_t i = 1; i < plan.argc; i++)
		xargv[i] = (char *)plan.argv[i];
	for (size_t i = 0; i < nextra; i++)
		xargv[plan.argc + i] = extra[i];
	fprintf(stderr, "%s: %s: running", cli->prog, verb->name);
	for (size_t i = 0; xargv[i]; i++)
		fprintf(stderr, " %s", xargv[i]);
	fprintf(stderr, "\n");
	/* an engine of an earlier build (and its record) must not pass for this one */
	record_path = gpuenv_arena_printf(&a, "%s.gpuenv.json", engine).ptr;
	if (!record_path) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto out;
	}
	if ((unlink(engine) != 0 && errno != ENOENT) ||
		(unlink(record_path) != 0 && errno != ENOENT)) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: %s", engine, strerror(errno));
		goto out;
	}
	rc = run_trtexec(cli, &a, xargv, cli->json ? stderr : stdout, &banner);
	if (rc < 0) {
		st = CLI_EXIT_CANNOT;
		goto out;
	}
	if (rc != 0) {
		/* what a failed build left must not pass for an engine */
		unlink(engine);
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: trtexec failed (exit status %d): no engine, "
			"no record; `gpuenv diagnose` reads its log", verb->name, rc);
		goto out;
	}
	if (access(engine, R_OK) != 0) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: trtexec succeeded but wrote no %s",
			verb->name, engine);
		goto out;
	}
	if (!banner)
		fprintf(stderr, "%s: %s: warning: trtexec printed no '[TensorRT vNNNN]' banner: the "
			"record says TensorRT %s (%s)\n", cli->prog, verb->name, tensorrt, tensorrt_from);
	else {
		gpuenv_kb_ver_t bv, pv;
		if (gpuenv_kb_ver_parse(gpuenv_str(banner), &bv) &&
			gpuenv_kb_ver_parse(gpuenv_str(tensorrt), &pv) && !(bv.part[0] == pv.part[0] &&
				bv.part[1] == pv.part[1] && bv.part[2] == pv.part[2]))
			fprintf(stderr, "%s: %s: warning: trtexec is TensorRT %s, not %s (%s): the "
				"record says %s\n", cli->prog, verb->name, banner, tensorrt, tensorrt_from,
				banner);
	}
	memset(&rec, 0, sizeof(rec));
	rec.tensorrt = banner ? banner : tensorrt;
	rec.gpu = g->name;
	rec.compute_capability = gpuenv_arena_printf(&a, "%d.%d", g->cc_major, g->cc_minor).ptr;
	rec.hardware_compatibility = plan.hardware_compatibility;
	rec.version_compatible = plan.version_compatible;
	for (size_t i = 0; i < plan.nprecisions; i++)
		rec.precisions[rec.nprecisions++] = plan.precisions[i];
	rec.onnx_path = o.model;
	rec.onnx_sha256 = sha256_hex(cli, &a, o.model);
	rec.engine_sha256 = sha256_hex(cli, &a, engine);
	rec.trtexec = (const char *const *)xargv;
	rec.ntrtexec = plan.argc + nextra;
	rec.built_at = now_utc(cli, &a);
	if (!rec.onnx_sha256 || !rec.engine_sha256) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (gpuenv_trt_record_json(&cli->ctx, &a, &rec, &text) ||
		gpuenv_fs_write_atomic(&cli->ctx, record_path, text, strlen(text), 0644)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (cli->json) {
		if (cli_print_json(cli, json_pack("{s:s, s:s, s:s}", "engine", engine, "record",
			    record_path, "tensorrt", rec.tensorrt)))
			st = CLI_EXIT_CANNOT;
	} else {
		printf("%s: built for %s (sm_%d%d) with TensorRT %s; record %s\n", engine,
			g->name ? g->name : "GPU", g->cc_major, g->cc_minor, rec.tensorrt, record_path);
	}
out:
	if (have_pj)
		gpuenv_project_close(&pj);
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&a);
	return st;
}

const struct cli_verb cli_verb_trt_build = {
	.name = "build",
	.run = cli_trt_build,
	.summary = "run trtexec for this machine's GPU and write the engine's record",
	.usage = "gpuenv trt build MODEL.onnx [--target T] [--tensorrt V] [--shapes ...]\n"
		"                 [--precision P] [--portable-gpus] [--portable-tensorrt] [-o ENGINE]\n"
		"                 [--facts FILE.json] [--json] [-- TRTEXEC-ARGS...]",
	.help = "  runs the command trt optimize writes (its options), for this machine's GPU, with\n"
		"  trtexec from PATH, $TENSORRT_HOME/bin or /usr/src/tensorrt/bin; streams its\n"
		"  output; writes ENGINE.gpuenv.json (schema gpuenv.engine/1) atomically: TensorRT\n"
		"  from trtexec's banner, the GPU from the probe, precisions, portability, hashes\n"
		"  --target T         the project's target: its TensorRT, shapes and GPU (which must be\n"
		"                     this machine's, unless --portable-gpus)\n"
		"  --tensorrt V       the TensorRT trtexec is (default: the target's, else the probed\n"
		"                     libnvinfer)\n"
		"  --facts FILE.json  the build machine from a snapshot instead of the probe\n"
		"exit status: 0 built, 1 refused (the target's GPU is not this one, a portability or\n"
		"  precision refused), 2 usage, 4 no trtexec, trtexec failed, or the record not written\n"
		"  (docs/exit-codes.md)\n",
};

/* ---- check and preflight --engine ------------------------------------------------------------ */

/* One engine's record, read into rec; 0 or an exit status (reported). */
static int record_read(struct cli *cli, const struct cli_verb *verb, gpuenv_arena_t *a,
	const char *engine, const char **rpath, gpuenv_trt_record_t *rec)
{
	size_t n = strlen(engine);
	gpuenv_buf_t b;
	int st = 0;

	*rpath = n > 12 && !strcmp(engine + n - 12, ".gpuenv.json") ? engine
		: gpuenv_arena_printf(a, "%s.gpuenv.json", engine).ptr;
	if (access(*rpath, F_OK) != 0)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: no record of this engine (%s): what "
			"built it is unknown (the TensorRT release, the GPU's compute capability, "
			"hardware and version compatibility, precisions); build it with `gpuenv trt "
			"build`, or ask the engine itself: trtexec --loadEngine=%s --getPlanVersionOnly "
			"(TensorRT 10+) prints its TensorRT", verb->name, engine, *rpath, engine);
	gpuenv_buf_init(&b, &cli->ctx, GPUENV_TRT_RECORD_MAX);
	if (cli_read_input(cli, *rpath, GPUENV_TRT_RECORD_MAX, &b))
		st = CLI_EXIT_CANNOT;
	else if (gpuenv_trt_record_parse(&cli->ctx, a, b.data ? b.data : "", b.len, *rpath, rec))
		st = cli_report(cli, CLI_EXIT_CANNOT);
	gpuenv_buf_free(&b);
	return st;
}

int cli_trt_engine_check(struct cli *cli, const struct cli_verb *verb, const char *const *engines,
	size_t nengines, const char *facts_path, const char *kb_dir)
{
	const gpuenv_facts_t *facts;
	gpuenv_target_t node;
	gpuenv_kb_t *kb = NULL;
	gpuenv_arena_t a;
	json_t *all = NULL;
	bool nogo = false;
	int st = 0;

	gpuenv_arena_init(&a, &cli->ctx, 0);
	/* the records first: a missing one is said before the probe runs */
	gpuenv_trt_record_t *recs = gpuenv_arena_calloc(&a, nengines, sizeof(*recs));
	const char **rpaths = gpuenv_arena_calloc(&a, nengines, sizeof(*rpaths));
	if (!recs || !rpaths) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nengines; i++)
		if ((st = record_read(cli, verb, &a, engines[i], &rpaths[i], &recs[i])))
			goto out;
	if ((st = kb_load(cli, kb_dir, &kb)) ||
		(st = cli_facts_load(cli, verb->name, facts_path, NULL, &a, &facts)))
		goto out;
	if (gpuenv_target_from_facts(&cli->ctx, &a, facts, SIZE_MAX, &node)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (cli->json && nengines > 1 && !(all = json_array())) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nengines; i++) {
		const gpuenv_trt_record_t *rec = &recs[i];
		gpuenv_trt_verdict_t v;
		if (gpuenv_trt_check(&cli->ctx, &a, kb, rec, &node, &v)) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
		nogo |= !v.go;
		if (cli->json) {
			json_t *o = json_pack("{s:s, s:b, s:s, s:s, s:s?, s:o, s:{s:s, s:s, s:s, s:b}}",
				"engine", engines[i], "go", v.go, "what", v.what, "record", rpaths[i],
				"node_tensorrt", v.tensorrt, "reasons", notes_json(v.reasons, v.nreasons),
				"built", "tensorrt", rec->tensorrt, "compute_capability",
				rec->compute_capability, "hardware_compatibility",
				rec->hardware_compatibility, "version_compatible", rec->version_compatible);
			if (all)
				json_array_append_new(all, o);
			else
				all = o;
			continue;
		}
		printf("%s%s%s%s%s: this node %s %s\n", nengines > 1 ? engines[i] : "",
			nengines > 1 ? ": " : "", cli_col(cli, v.go ? CLI_GREEN : CLI_RED),
			v.go ? "go" : "no-go", cli_col(cli, CLI_RESET), v.go ? "can run" : "cannot run",
			v.what);
		print_notes(cli, v.reasons, v.nreasons);
	}
	st = nogo ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (cli->json) {
		int r = cli_print_json(cli, all);
		all = NULL;
		if (r)
			st = CLI_EXIT_CANNOT;
	}
out:
	json_decref(all);
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&a);
	return st;
}

static int cli_trt_check(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "facts", required_argument, NULL, 'f' },
		{ "kb-dir", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char *facts = NULL, *kb_dir = NULL;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'f')
			facts = optarg;
		else if (c == 'k')
			kb_dir = optarg;
		else
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: which engine? give ENGINE (its record is "
			"ENGINE.gpuenv.json)", verb->name);
	return cli_trt_engine_check(cli, verb, (const char *const *)argv + optind,
		(size_t)(argc - optind), facts, kb_dir);
}

const struct cli_verb cli_verb_trt_check = {
	.name = "check",
	.run = cli_trt_check,
	.summary = "go or no-go: can this node run an engine gpuenv built (its record)?",
	.usage = "gpuenv trt check ENGINE... [--facts FILE.json] [--kb-dir DIR] [--json]",
	.help = "  reads ENGINE.gpuenv.json and judges it on this node (as preflight --engine);\n"
		"  several engines: one line (one JSON object in an array) each, in the order given:\n"
		"  the node's TensorRT (libnvinfer) against the engine's, its GPUs against the\n"
		"  engine's compute capability and hardware compatibility, each precision\n"
		"  --facts FILE.json  judge the node a snapshot describes instead of this one\n"
		"exit status: 0 go (every engine), 1 no-go (one or more), 2 usage, 4 no record, or a\n"
		"  record or facts that cannot be read (docs/exit-codes.md)\n",
};
