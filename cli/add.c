/* gpuenv add / gpuenv remove (docs/workflow.md): pyproject.toml edited in
 * the project's own dialect by lib/manifest's editor (gpuenv/manifest_edit.h,
 * format-preserving), then the targets locked and the one this machine is
 * synced, as lock and sync do it (cli_lock_targets, cli_sync_do).  The file
 * and the locks change together: a lock that fails puts the file back. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "edit_util.h"
#include "gpuenv/manifest_edit.h"
#include "gpuenv/project.h"
#include "lock_util.h"

struct add_opts {
	struct cli_lock_opts lo;
	const char *group, *extra, *source, *target;
	bool no_lock, no_sync;
};

static int parse_opts(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, bool add,
	struct add_opts *o, int *st)
{
	static const struct option add_opts[] = {
		CLI_LOCK_OPTIONS,
		{ "group", required_argument, NULL, 'g' },
		{ "optional", required_argument, NULL, 'x' },
		{ "source", required_argument, NULL, 'u' },
		{ "target", required_argument, NULL, 't' },
		{ "no-lock", no_argument, NULL, 'n' },
		{ "no-sync", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option rm_opts[] = {
		CLI_LOCK_OPTIONS,
		{ "group", required_argument, NULL, 'g' },
		{ "target", required_argument, NULL, 't' },
		{ "no-lock", no_argument, NULL, 'n' },
		{ "no-sync", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int c, h;
	*st = CLI_EXIT_USAGE;
	while ((c = cli_getopt(cli, verb, argc, argv, "", add ? add_opts : rm_opts, st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return -1;
		if ((h = cli_lock_opt(cli, verb, c, optarg, &o->lo, st)) < 0)
			return -1;
		if (h)
			continue;
		switch (c) {
		case 'g': o->group = optarg; break;
		case 'x': o->extra = optarg; break;
		case 'u': o->source = optarg; break;
		case 't': o->target = optarg; break;
		case 'n': o->no_lock = true; break;
		case 'N': o->no_sync = true; break;
		default:
			return *st = cli_usage_error(cli, verb, "%s: unexpected option", verb->name), -1;
		}
	}
	if (optind >= argc)
		return *st = cli_usage_error(cli, verb, "%s: which %s?", verb->name, add ? "requirement" : "package"), -1;
	return 0;
}

/* Lock (the named target, or every one) and sync the target this machine
 * is; a lock that fails puts pyproject.toml back. */
static int lock_and_sync(struct cli *cli, const struct cli_verb *verb, struct add_opts *o, struct cli_pyproject *pp)
{
	gpuenv_project_t pj;
	gpuenv_index_t *ix = NULL;
	const gpuenv_manifest_target_t *one = NULL;
	int st;

	if (o->no_lock)
		return CLI_EXIT_OK;
	o->lo.project = pp->path;
	if ((st = cli_project_open(cli, verb->name, o->lo.project, o->lo.facts_path, o->lo.kb_dir, o->lo.torch_index,
		     0, &pj)) == 0 &&
		(!o->target || !strcmp(o->target, "auto") || (one = cli_project_target(cli, verb, &pj, o->target, &st)))) {
		const gpuenv_manifest_target_t **pick = one ? &one : NULL;
		size_t npick = one ? 1 : pj.ntargets;
		const gpuenv_manifest_target_t *all[CLI_LOCK_MAX_ARGS];
		if (!one) {
			npick = npick > CLI_LOCK_MAX_ARGS ? CLI_LOCK_MAX_ARGS : npick;
			for (size_t i = 0; i < npick; i++)
				all[i] = &pj.targets[i];
			pick = all;
		}
		st = cli_lock_targets(cli, verb, &o->lo, &pj, pick, npick, &ix);
	}
	gpuenv_index_close(ix);
	gpuenv_project_close(&pj);
	if (st != 0) {
		int r = cli_pyproject_restore(cli, verb->name, pp);
		fprintf(stderr, "%s: %s: %s%s\n", cli->prog, verb->name, pp->path,
			r ? " is the edited one: the original could not be written back"
			  : " left as it was: the lock did not succeed");
		return r ? r : st;
	}
	if (o->no_sync)
		return CLI_EXIT_OK;
	struct cli_sync_opts so = { .verb = verb, .lo = o->lo, .target = o->target };
	const char *root = NULL;
	st = cli_sync_do(cli, &so, &root);
	free((void *)root);
	if (st != 0)
		fprintf(stderr, "note: %s and its locks are updated; the sync did not succeed (gpuenv sync to retry)\n",
			pp->path);
	return st;
}

/* add (requirements) or remove (names): every edit made, the file
 * written, then the locks and the sync. */
static int edit_verb(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, bool add)
{
	struct add_opts o = { 0 };
	struct cli_pyproject pp;
	gpuenv_arena_t arena;
	int st;

	if (parse_opts(cli, verb, argc, argv, add, &o, &st) != 0)
		return st;
	if ((st = cli_pyproject_open(cli, verb->name, o.lo.project, &pp)) != 0) {
		cli_pyproject_close(&pp);
		return st;
	}
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	for (int i = optind; i < argc && !st; i++) {
		gpuenv_manifest_add_t a = { .req = argv[i], .group = o.group, .extra = o.extra, .source = o.source };
		const char *what;
		int r = add ? gpuenv_manifest_edit_add(&pp.ed, &arena, &a, &what)
			    : gpuenv_manifest_edit_remove(&pp.ed, &arena, argv[i], o.group, &what);
		if (r)
			st = cli_pyproject_edit_error(cli, cli->ctx.err.code);
		else if (!cli->json && cli->verbose >= 0 && add)
			printf("+ %s\n", what);
		else if (!cli->json && cli->verbose >= 0)
			printf("- %s (%s)\n", argv[i], what);
	}
	if (!st && !(st = cli_pyproject_write(cli, verb->name, &pp)))
		st = lock_and_sync(cli, verb, &o, &pp);
	gpuenv_arena_free(&arena);
	cli_pyproject_close(&pp);
	return st;
}

static int cli_add(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return edit_verb(cli, verb, argc, argv, true);
}

static int cli_remove(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return edit_verb(cli, verb, argc, argv, false);
}

#define ADD_LOCK_HELP \
	"  --target NAME      lock only this target, and sync it (default: lock every\n" \
	"                     target, sync the one this machine is, as sync --target auto)\n" \
	"  --no-lock          only edit pyproject.toml\n" \
	"  --no-sync          edit and lock; leave the venv alone\n" \
	"  --project DIR      the project (its pyproject.toml); default: .\n" \
	"  --offline, --refresh, --index-url, --source-url, --torch-index, --find-links,\n" \
	"  --cache-dir, --facts, --kb-dir, --retries, --timeout, --build-timeout, --pre,\n" \
	"  --only-binary, --no-binary: as for gpuenv lock\n"

const struct cli_verb cli_verb_add = {
	.name = "add",
	.run = cli_add,
	.summary = "add dependencies to pyproject.toml (its format kept), lock and sync",
	.usage = "gpuenv add REQ... [--group G] [--optional EXTRA] [--source NAME] [--target T]\n"
		 "                [--no-lock] [--no-sync] [--project DIR] [lock's options]",
	.help = "  REQ                a PEP 508 requirement (\"numpy>=2\", \"torch[opt]; sys_platform\n"
		"                     == 'linux'\"), or in a Poetry project NAME@CONSTRAINT\n"
		"                     (\"pillow@^10\"); a plain name is \"*\" in Poetry, unpinned in\n"
		"                     PEP 621; a name already there is updated where it is\n"
		"  --group G          into group G: [dependency-groups] (PEP 735) or\n"
		"                     [tool.poetry.group.G.dependencies]; made when missing\n"
		"  --optional EXTRA   an optional dependency of EXTRA ([project.optional-\n"
		"                     dependencies], or Poetry's optional = true and [tool.poetry.extras])\n"
		"  --source NAME      Poetry: from this [[tool.poetry.source]] (an inline table\n"
		"                     { version = ..., source = NAME })\n"
		ADD_LOCK_HELP
		"\n"
		"The rest of the file stays byte for byte (comments, order, quoting, an array's\n"
		"layout); gpuenv remove of what add wrote gives the original file back. When a\n"
		"lock fails (no solution, an index error) pyproject.toml is put back as it was.\n"
		"exit status: 0 added, locked and synced, 1 no solution (the file put back) or the\n"
		"sync failed, 2 usage (an invalid requirement or constraint, an unknown source),\n"
		"4 pyproject.toml missing, unreadable, read-only or malformed (file:line:col;\n"
		"nothing written), a lock or the venv could not be made",
};

const struct cli_verb cli_verb_remove = {
	.name = "remove",
	.run = cli_remove,
	.summary = "remove dependencies from pyproject.toml (its format kept), lock and sync",
	.usage = "gpuenv remove NAME... [--group G] [--target T] [--no-lock] [--no-sync]\n"
		 "                   [--project DIR] [lock's options]",
	.help = "  NAME               a package name, any spelling (PEP 503)\n"
		"  --group G          from group G (a PEP 735 group left empty goes, and so does\n"
		"                     a Poetry group's table); default: the main dependencies and\n"
		"                     their extras\n" ADD_LOCK_HELP
		"\n"
		"Only the lines of what is removed go; the comments of the others stay.\n"
		"exit status: 0 removed, locked and synced, 1 no solution (the file put back) or\n"
		"the sync failed, 2 usage (not a dependency, no such group), 4 pyproject.toml\n"
		"missing, unreadable, read-only or malformed, a lock or the venv could not be made",
};
