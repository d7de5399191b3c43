/* gpuenv preflight: go or no-go for a CUDA version, a torch build or an
 * image on this node (or on the node a snapshot describes). */
#include "cli.h"

#include <string.h>

#include "gpuenv/dockerfile.h"
#include "gpuenv/doctor.h"
#include "gpuenv/pylock.h"
#include "lock_util.h"
#include "trt_engine.h"

/* The lock's own words: torch's version, the target, the package count. */
static const gpuenv_lock_package_t *lock_torch(const gpuenv_lock_t *lk)
{
	for (size_t i = 0; i < lk->npackages; i++)
		if (strcmp(lk->packages[i].name, "torch") == 0)
			return &lk->packages[i];
	return NULL;
}

static json_t *lock_json(const char *path, const gpuenv_lock_t *lk)
{
	const gpuenv_lock_package_t *t = lock_torch(lk);

	return json_pack("{s:s, s:s?, s:s?, s:I, s:s?}", "path", path, "target", lk->target.name, "created_by",
		lk->created_by, "packages", (json_int_t)lk->npackages, "torch", t ? t->version : NULL);
}

static void print_lock(const char *path, const gpuenv_lock_t *lk)
{
	const gpuenv_lock_package_t *t = lock_torch(lk);

	printf("%s: %zu package%s", path, lk->npackages, lk->npackages == 1 ? "" : "s");
	if (lk->target.name)
		printf(", locked for target %s", lk->target.name);
	if (t && t->version)
		printf(", torch %s", t->version);
	printf("\n");
}

static int cli_preflight(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cuda", required_argument, NULL, 'c' },
		{ "torch", required_argument, NULL, 't' },
		{ "image", required_argument, NULL, 'i' },
		{ "lock", required_argument, NULL, 'l' },
		{ "dockerfile", required_argument, NULL, 'D' },
		{ "engine", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	gpuenv_preflight_req_t req = { 0 };
	const char *engine = NULL;
	const char *facts_path = NULL, *lock = NULL, *kb_dir = NULL, *dockerfile = NULL;
	gpuenv_dockerfile_base_t df = { 0 };
	gpuenv_lock_t lk;
	gpuenv_kb_t *kb = NULL;
	gpuenv_preflight_t pf;
	gpuenv_arena_t arena;
	const gpuenv_facts_t *facts = NULL;
	int c, st, given;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case 'c':
			req.cuda = optarg;
			break;
		case 't':
			req.torch = optarg;
			break;
		case 'i':
			req.image = optarg;
			break;
		case 'l':
			lock = optarg;
			break;
		case 'D':
			dockerfile = optarg;
			break;
		case 'e':
			engine = optarg;
			break;
		default:
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (cli->opt.facts)
		facts_path = cli->opt.facts;
	if (cli->opt.kb_dir)
		kb_dir = cli->opt.kb_dir;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	given = !!req.cuda + !!req.torch + !!req.image + !!lock + !!dockerfile + !!engine;
	if (given == 0)
		return cli_usage_error(cli, verb, "%s: what should this node run? give --cuda, --torch, "
			"--image, --dockerfile, --lock or --engine", verb->name);
	if (given > 1)
		return cli_usage_error(cli, verb, "%s: give one of --cuda, --torch, --image, --dockerfile, "
			"--lock and --engine", verb->name);
	if (engine) /* a TensorRT engine, by its record (cli/trt_engine.c) */
		return cli_trt_engine_check(cli, verb, &engine, 1, facts_path, kb_dir);
	if (kb_dir && (st = cli_kb_load(cli, kb_dir, &kb)) != 0)
		return st;
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (dockerfile) {
		/* its final stage's base image, judged as --image is */
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, &cli->ctx, GPUENV_DOCKERFILE_MAX);
		/* an unreadable Dockerfile is an input that cannot be read: 4, not no-go */
		st = cli_read_input(cli, dockerfile, GPUENV_DOCKERFILE_MAX, &b) ? CLI_EXIT_CANNOT : 0;
		if (!st && gpuenv_dockerfile_base(&cli->ctx, &arena, dockerfile, b.len ? b.data : "", b.len, &df))
			st = cli_report(cli, CLI_EXIT_CANNOT);
		gpuenv_buf_free(&b);
		if (st)
			goto out;
		req.image = df.image;
	}
	if (lock) {
		/* a lock that cannot be read or is malformed: 4 with FILE:LINE:COL */
		if (gpuenv_project_read_lock(&cli->ctx, &arena, lock, &lk) != 0) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
		req.lock = &lk;
		req.lock_path = lock;
	}
	if ((st = cli_facts_load(cli, verb->name, facts_path, NULL, &arena, &facts)) != 0)
		goto out;
	req.kb = kb;

	if (gpuenv_preflight_check(&cli->ctx, &arena, facts, &req, &pf) != 0) {
		st = cli_report(cli, cli->ctx.err.code == GPUENV_EUSAGE ? CLI_EXIT_USAGE : CLI_EXIT_CANNOT);
		goto out;
	}
	st = pf.go ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	if (cli->json) {
		json_t *j = gpuenv_preflight_json(&pf);
		if (j && lock)
			json_object_set_new(j, "lock", lock_json(lock, &lk));
		if (j && dockerfile)
			json_object_set_new(j, "dockerfile", json_pack("{s:s, s:i, s:s, s:s?, s:i}", "path",
				dockerfile, "line", (int)df.line, "image", df.image, "stage", df.stage,
				"stages", (int)df.stages));
		if (cli_print_json(cli, j) != 0)
			st = CLI_EXIT_CANNOT;
		goto out;
	}
	if (dockerfile)
		printf("%s:%u: FROM %s (the final stage's base image)\n", dockerfile, df.line, df.image);
	if (lock)
		print_lock(lock, &lk);
	printf("%s%s%s: this node %s %s\n", cli_col(cli, pf.go ? CLI_GREEN : CLI_RED),
		pf.go ? "go" : "no-go", cli_col(cli, CLI_RESET), pf.go ? "can run" : "cannot run",
		pf.what ? pf.what : "it");
	for (size_t i = 0; i < pf.reasons.n; i++) {
		const gpuenv_verdict_t *v = &pf.reasons.items[i];
		printf("\n");
		cli_print_verdict(cli, v, v->severity == GPUENV_SEV_INFO && strstr(v->id, "-ok") ? "ok" : NULL);
	}
out:
	gpuenv_arena_free(&arena);
	gpuenv_kb_free(kb);
	return st;
}

const struct cli_verb cli_verb_preflight = {
	.name = "preflight",
	.run = cli_preflight,
	.summary = "go or no-go: can this node run a CUDA version, a torch build, an image or a lock?",
	.usage = "gpuenv preflight (--cuda X.Y | --torch VERSION | --image IMAGE:TAG | --dockerfile FILE\n"
		"                 | --lock FILE | --engine ENGINE)\n"
		"                 [--facts FILE.json] [--kb-dir DIR] [--json]",
	.help = "  --cuda X.Y         a CUDA application of that version (12.2)\n"
		"  --torch VERSION    a torch build (2.7.0+cu128; without +cuXYZ the PyPI build)\n"
		"  --image IMAGE:TAG  an NGC container (nvcr.io/nvidia/pytorch:25.01-py3) or\n"
		"                     nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
		"  --dockerfile FILE  the base image of a Dockerfile's final stage (its FROM, with the\n"
		"                     ARG defaults substituted and stages followed), judged as --image\n"
		"  --lock FILE        a PEP 751 lock (pylock.t4.toml; gpuenv's or another tool's): each\n"
		"                     package it installs here, judged on this node (torch's CUDA and\n"
		"                     arch list, CUDA wheels, wheel tags, Python, the lock's target)\n"
		"  --engine ENGINE    a TensorRT engine gpuenv trt build made, by its record\n"
		"                     (ENGINE.gpuenv.json): TensorRT, compute capability, hardware and\n"
		"                     version compatibility, precisions (docs/trt.md)\n"
		"exit status: 0 go, 1 no-go, 2 usage, 4 the facts or the request could not\n"
		"  be judged (unknown to the knowledge base, a malformed lock or Dockerfile,\n"
		"  an engine without a record),\n"
		"  or the output not written\n"
		"  (docs/exit-codes.md)\n",
	.groups = CLI_G_FACTS | CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_FACTS, "  --facts FILE.json  judge the node a snapshot describes instead of this one\n" },
		{ CLI_G_KB_DIR, "  --kb-dir DIR       knowledge-base files (cuda.toml, torch.toml, ngc.toml) from DIR\n" },
		{ 0, NULL },
	},
};
