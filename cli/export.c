/* gpuenv export: a target's lock as pip requirements or constraints, a
 * Dockerfile or a compose file (docs/export.md).  The formats are
 * lib/export's (gpuenv/export.h); this file reads the options, finds the
 * lock and prints what the library made. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/export.h"
#include "gpuenv/fs.h"
#include "gpuenv/kb_answer.h"
#include "gpuenv/project.h"
#include "lock_util.h"

enum { OPT_PROJECT = 0x2201, OPT_TARGET, OPT_LOCK, OPT_FORMAT, OPT_OUT, OPT_NO_HASHES, OPT_BASE,
	OPT_TRUST_BASE, OPT_IMAGE_MANIFEST };

struct export_opts {
	const char *project, *target, *lock, *format, *out, *base, *image_manifest;
	bool hashes, trust_base, constraints, docker, compose;
};

static json_t *base_json(const gpuenv_base_image_t *b)
{
	json_t *notes = json_array(), *warns = json_array();
	for (size_t i = 0; i < b->nnotes; i++)
		json_array_append_new(notes, json_string(b->notes[i]));
	for (size_t i = 0; i < b->nwarns; i++)
		json_array_append_new(warns, json_string(b->warns[i]));
	char cuda[32];
	snprintf(cuda, sizeof(cuda), "%u.%u", b->img.cuda.part[0], b->img.cuda.part[1]);
	/* runs: the target's driver on the image's CUDA, the word `kb image` and
	 * preflight --image give (tests/cli/test_consistency.py) */
	return json_pack("{s:s, s:s?, s:b, s:b, s:s?, s:s?, s:s?, s:o, s:o}", "image", b->ref, "digest", b->digest,
		"chosen", b->chosen, "known", b->known, "cuda", b->img.cuda.n ? cuda : NULL, "flavour",
		b->flavour, "runs", b->known ? gpuenv_kb_runs_name(b->runs) : NULL, "reasons", notes, "warnings",
		warns);
}

/* --format dockerfile: the Dockerfile of t, with its requirements file and
 * .dockerignore beside -o. */
static int export_dockerfile(struct cli *cli, const char *verb, const struct export_opts *eo, gpuenv_project_t *pj,
	const gpuenv_manifest_target_t *t, const gpuenv_lock_t *lk, const char *lock_path)
{
	gpuenv_export_docker_req_t q = { .kb = pj->kb, .m = &pj->m, .project_dir = pj->dir, .t = t, .lk = lk,
		.lock_path = lock_path, .base = eo->base, .trust_base = eo->trust_base,
		.image_manifest = eo->image_manifest, .out = eo->out };
	gpuenv_export_docker_t x;
	int st = CLI_EXIT_OK;

	if (gpuenv_export_dockerfile(&cli->ctx, &pj->arena, &q, &x) != 0) {
		st = cli_report(cli, x.status ? x.status : CLI_EXIT_CANNOT);
		goto out;
	}
	for (size_t i = 0; i < x.nwarnings; i++)
		fprintf(stderr, "%s: %s: warning: %s\n", cli->prog, verb, x.warnings[i]);
	if (eo->out && gpuenv_export_docker_write(&cli->ctx, &x) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (cli->json) {
		json_t *files = json_array(), *j;
		if (eo->out) {
			json_array_append_new(files, json_pack("{s:s, s:s}", "path", x.dockerfile_path, "what", "dockerfile"));
			json_array_append_new(files, json_pack("{s:s, s:s}", "path", x.requirements_path, "what",
				"requirements"));
			json_array_append_new(files, json_pack("{s:s, s:s, s:b}", "path", x.ignore_path, "what",
				"dockerignore", "written", x.wrote_ignore));
		}
		j = json_pack("{s:s, s:s, s:o, s:o}", "target", t->name, "lock", lock_path, "base", base_json(&x.base),
			"files", files);
		if (j && !eo->out)
			json_object_set_new(j, "dockerfile", json_string(x.dockerfile.data));
		if (cli_print_json(cli, j))
			st = CLI_EXIT_CANNOT;
	} else if (eo->out) {
		fprintf(stderr, "%s: FROM %s%s%s, %zu packages from %s\n", x.dockerfile_path, x.base.ref,
			x.base.digest ? "@" : "", x.base.digest ? x.base.digest : "", lk->npackages, lock_path);
		fprintf(stderr, "%s: the requirements it installs (with hashes)\n", x.requirements_path);
		fprintf(stderr, "%s: %s\n", x.ignore_path, x.wrote_ignore ? "what the build leaves out (edit it)" :
			"there already: left as it is");
		fprintf(stderr, "build: docker build%s%s -f %s -t %s:%s %s\n", x.platform ? " --platform " : "",
			x.platform ? x.platform : "", x.dockerfile_path, x.image, t->name, pj->dir);
	} else {
		if (fwrite(x.dockerfile.data, 1, x.dockerfile.len, stdout) != x.dockerfile.len)
			st = cli_error(cli, CLI_EXIT_CANNOT, "%s: cannot write the output", verb);
		fprintf(stderr, "%s: %s: the Dockerfile COPYs %s: write both with -o %s (or the requirements "
			"alone: gpuenv export --target %s -o %s)\n", cli->prog, verb, x.requirements_name,
			x.dockerfile_name, t->name, x.requirements_name);
	}
out:
	gpuenv_export_docker_free(&x);
	return st;
}

/* --format compose: docker-compose.yml, one service per target. */
static int export_compose(struct cli *cli, const char *verb, const char *out, gpuenv_project_t *pj)
{
	gpuenv_export_compose_t c;
	int st = CLI_EXIT_OK;

	if (gpuenv_export_compose(&cli->ctx, &pj->arena, pj->kb, &pj->m, pj->dir, pj->targets, pj->ntargets, out, &c)) {
		st = cli_report(cli, cli->ctx.err.code == GPUENV_EUSAGE ? CLI_EXIT_USAGE : CLI_EXIT_CANNOT);
		goto done;
	}
	for (size_t i = 0; i < c.nmissing; i++)
		fprintf(stderr, "%s: %s: note: service %s needs Dockerfile.%s: gpuenv export --target %s "
			"--format dockerfile -o Dockerfile.%s\n", cli->prog, verb, c.missing[i], c.missing[i],
			c.missing[i], c.missing[i]);
	if (out) {
		if (gpuenv_fs_write_atomic(&cli->ctx, out, c.text.data, c.text.len, 0644))
			st = cli_report(cli, CLI_EXIT_CANNOT);
		else
			fprintf(stderr, "%s: %zu services (%zu Dockerfiles still to export)\n", out, c.nservices,
				c.nmissing);
	} else if (fwrite(c.text.data, 1, c.text.len, stdout) != c.text.len)
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: cannot write the output", verb);
done:
	gpuenv_buf_free(&c.text);
	return st;
}

/* The options into eo: 0, or -1 with *st the exit status. */
static int export_parse(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, struct export_opts *eo,
	int *st)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "lock", required_argument, NULL, OPT_LOCK },
		{ "no-hashes", no_argument, NULL, OPT_NO_HASHES },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "trust-base", no_argument, NULL, OPT_TRUST_BASE },
		{ "image-manifest", required_argument, NULL, OPT_IMAGE_MANIFEST },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*eo = (struct export_opts){ .format = "requirements", .hashes = true };
	while ((c = cli_getopt(cli, verb, argc, argv, "o:", opts, st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT: return -1;
		case OPT_TARGET: eo->target = optarg; break;
		case OPT_LOCK: eo->lock = optarg; break;
		case OPT_NO_HASHES: eo->hashes = false; break;
		case OPT_BASE: eo->base = optarg; break;
		case OPT_TRUST_BASE: eo->trust_base = true; break;
		case OPT_IMAGE_MANIFEST: eo->image_manifest = optarg; break;
		default: *st = CLI_EXIT_USAGE; return -1;
		}
	}
	if (cli->opt.project)
		eo->project = cli->opt.project;
	if (cli->opt.format)
		eo->format = cli->opt.format;
	if (cli->opt.output)
		eo->out = cli->opt.output;
	const char *why = NULL, *format = eo->format;
	eo->constraints = !strcmp(format, "constraints");
	eo->docker = !strcmp(format, "dockerfile");
	eo->compose = !strcmp(format, "compose");
	if (optind < argc)
		*st = cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	else if (strcmp(format, "requirements") && !eo->constraints && !eo->docker && !eo->compose)
		*st = cli_usage_error(cli, verb, "%s: --format %s: the formats are requirements, "
			"constraints, dockerfile and compose", verb->name, format);
	else if (eo->lock && (eo->project || eo->target))
		why = "--lock names the lock; --project and --target choose one: give one or the other";
	else if (eo->lock && (eo->docker || eo->compose))
		*st = cli_usage_error(cli, verb, "%s: --format %s is made for a project's targets (their "
			"source is the build context): give --project and --target, not --lock", verb->name, format);
	else if ((eo->base || eo->trust_base || eo->image_manifest) && !eo->docker)
		why = "--base, --trust-base and --image-manifest are options of --format dockerfile";
	else if (eo->compose && eo->target)
		why = "--format compose has a service for every target: leave --target out";
	else if ((eo->docker || eo->compose) && !eo->hashes)
		*st = cli_usage_error(cli, verb, "%s: --format %s installs with --require-hashes: "
			"--no-hashes does not apply", verb->name, format);
	else
		return 0;
	if (why)
		*st = cli_usage_error(cli, verb, "%s: %s", verb->name, why);
	return -1;
}

/* The project's lock of eo->target (or of its one target) into lk: 0, or
 * the exit status (reported).  A stale lock is exported with a warning. */
static int export_find_lock(struct cli *cli, const struct cli_verb *verb, const struct export_opts *eo,
	gpuenv_project_t *pj, const gpuenv_manifest_target_t **tp, const char **path, gpuenv_lock_t *lk)
{
	const gpuenv_manifest_target_t *t = NULL;
	const char *detail = NULL;
	int st = 0;

	if (eo->target)
		t = cli_project_target(cli, verb, pj, eo->target, &st);
	else if (pj->ntargets == 1)
		t = &pj->targets[0];
	else
		st = cli_usage_error(cli, verb, "%s: the project declares %zu targets: name one with --target",
			verb->name, pj->ntargets);
	if (!t)
		return st;
	*tp = t;
	if (!(*path = gpuenv_project_lock_path(pj, t)))
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
	int state = gpuenv_project_lock_state(pj, t, *path, lk, &detail);
	if (state < 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (state == GPUENV_LOCK_MISSING)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: no lock for target %s (run gpuenv lock --target %s)",
			verb->name, *path, t->name, t->name);
	if (state == GPUENV_LOCK_STALE)
		fprintf(stderr, "%s: %s: warning: %s is stale (%s): exporting it as it is; gpuenv lock --target %s "
			"brings it up to date\n", cli->prog, verb->name, *path, detail ? detail : "the project changed",
			t->name);
	return 0;
}

static int cli_export(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct export_opts eo;
	gpuenv_project_t pj;
	const gpuenv_manifest_target_t *t = NULL;
	const char *lock;
	bool have_pj = false;
	gpuenv_arena_t a;
	gpuenv_lock_t lk;
	gpuenv_buf_t o;
	int st = 0;

	if (export_parse(cli, verb, argc, argv, &eo, &st) != 0)
		return st;
	gpuenv_arena_init(&a, &cli->ctx, 0);
	memset(&lk, 0, sizeof(lk));
	lock = eo.lock;
	if (!lock) {
		have_pj = true;
		if ((st = cli_project_open(cli, verb->name, eo.project, NULL, NULL, NULL, 0, &pj)) != 0)
			goto done;
		if (eo.compose) {
			st = export_compose(cli, verb->name, eo.out, &pj);
			goto done;
		}
		if ((st = export_find_lock(cli, verb, &eo, &pj, &t, &lock, &lk)) != 0)
			goto done;
	}
	if (!lk.lock_version && gpuenv_project_read_lock(&cli->ctx, &a, lock, &lk)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	if (eo.docker) {
		st = export_dockerfile(cli, verb->name, &eo, &pj, t, &lk, lock);
		goto done;
	}
	gpuenv_buf_init(&o, &cli->ctx, GPUENV_PYLOCK_MAX_SIZE);
	if (gpuenv_export_requirements(&cli->ctx, &a, &lk, lock, eo.constraints, eo.hashes, &o))
		st = cli_report(cli, CLI_EXIT_CANNOT);
	else if ((st = cli_write_output(cli, verb, eo.out, o.data, o.len, 0)) == CLI_EXIT_OK && eo.out)
		fprintf(stderr, "%s: %zu packages from %s\n", eo.out, lk.npackages, lock);
	gpuenv_buf_free(&o);
done:
	if (have_pj)
		gpuenv_project_close(&pj);
	gpuenv_arena_free(&a);
	return st;
}

const struct cli_verb cli_verb_export = {
	.name = "export",
	.run = cli_export,
	.summary = "a target's lock as pip requirements or constraints, a Dockerfile or a compose file",
	.usage = "gpuenv export [--project DIR] [--target NAME | --lock FILE]\n"
		 "              [--format requirements|constraints] [--no-hashes] [-o FILE]\n"
		 "       gpuenv export [--project DIR] [--target NAME] --format dockerfile\n"
		 "              [--base IMAGE[:TAG][@DIGEST] [--trust-base]] [--image-manifest FILE]\n"
		 "              [-o FILE]\n"
		 "       gpuenv export [--project DIR] --format compose [-o FILE]",
	.help = "  --project DIR      the project (default: .); its lock of --target (or of its one target)\n"
		"  --lock FILE        export this lock instead (requirements, constraints)\n"
		"  --no-hashes        requirements without hashes (directory and VCS entries allowed)\n"
		"  --base IMAGE       the Dockerfile's base image instead of the knowledge base's choice,\n"
		"                     checked the same way (the lock's CUDA major, the target's driver\n"
		"                     and Python); refused with the reason when it does not fit\n"
		"  --trust-base       write a --base image the knowledge base does not know, unchecked\n"
		"  --image-manifest FILE  the image lock whose digest FROM writes the base image by\n"
		"                     (default: image-manifest.json in the project, when there)\n"
		"exit status: 0 written, 1 the base image does not fit the target or the lock (the\n"
		"reason is given; nothing is written), 2 usage, 4 no lock, an unreadable lock, a\n"
		"package that cannot be exported, no base image the knowledge base knows fits, or\n"
		"the output could not be written (nothing is written)\n",
	.groups = CLI_G_PROJECT | CLI_G_FORMAT | CLI_G_OUTPUT,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_FORMAT, "  --format F         requirements (default): index lines, name==version ; marker and a\n"
			"                     --hash for every file, for pip install --require-hashes -r;\n"
			"                     constraints: the pins alone, for pip install -c;\n"
			"                     dockerfile: a Dockerfile for the target (with -o: its requirements\n"
			"                     file and a .dockerignore beside it); compose: docker-compose.yml,\n"
			"                     one service per target\n" },
		{ CLI_G_OUTPUT, "  -o, --output FILE  write FILE atomically (default: standard output)\n" },
		{ 0, NULL },
	},
};
