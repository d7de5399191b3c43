/* gpuenv tree: the locked dependency graph of a target, from its lock. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/fs.h"
#include "gpuenv/project.h"
#include "gpuenv/pylock.h"
#include "lock_util.h"

#define TREE_MAX_DEPTH 64

static size_t tree_find(const gpuenv_lock_t *lk, const char *name)
{
	size_t lo = 0, hi = lk->npackages;
	while (lo < hi) { /* packages are sorted by name */
		size_t mid = (lo + hi) / 2;
		int c = strcmp(lk->packages[mid].name, name);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = 0; i < lk->npackages; i++) /* a lock written by another tool */
		if (!strcmp(lk->packages[i].name, name))
			return i;
	return SIZE_MAX;
}

struct tree {
	const gpuenv_lock_t *lk;
	bool *shown;
	bool *on_path;
	char prefix[4 * TREE_MAX_DEPTH + 1];
};

static void tree_print(struct tree *tr, size_t i, size_t depth, bool last, bool top)
{
	const gpuenv_lock_package_t *p = &tr->lk->packages[i];
	size_t plen = strlen(tr->prefix);
	printf("%s%s%s %s%s\n", tr->prefix, top ? "" : last ? "└── " : "├── ", p->name,
		p->version ? p->version : "", tr->on_path[i] ? " (cycle)" : tr->shown[i] && p->ndeps ? " (*)" : "");
	if (tr->on_path[i] || (tr->shown[i] && p->ndeps) || depth >= TREE_MAX_DEPTH - 1)
		return;
	tr->shown[i] = true;
	tr->on_path[i] = true;
	if (!top)
		strcat(tr->prefix, last ? "    " : "│   ");
	for (size_t k = 0; k < p->ndeps; k++) {
		size_t j = tree_find(tr->lk, p->deps[k].name);
		if (j != SIZE_MAX)
			tree_print(tr, j, depth + 1, k + 1 == p->ndeps, false);
	}
	tr->prefix[plen] = '\0';
	tr->on_path[i] = false;
}

static json_t *tree_json(const gpuenv_lock_t *lk)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		json_t *d = json_array();
		for (size_t k = 0; d && k < p->ndeps; k++)
			json_array_append_new(d, json_string(p->deps[k].name));
		json_array_append_new(a, json_pack("{s:s, s:s?, s:o}", "name", p->name, "version", p->version,
			"dependencies", d ? d : json_array()));
	}
	return a;
}

static int tree_one(struct cli *cli, gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, json_t *out)
{
	const char *name = gpuenv_project_lock_name(&pj->arena, &pj->m, t);
	const char *path = gpuenv_project_lock_path(pj, t);
	gpuenv_lock_t lk;
	const gpuenv_dep_t *deps;
	size_t ndeps;
	int st = CLI_EXIT_OK;

	if (!path || gpuenv_project_read_lock(&cli->ctx, &pj->arena, path, &lk) != 0) {
		if (cli->ctx.err.code == -ENOENT)
			gpuenv_hint(&cli->ctx, "run `gpuenv lock --target %s` first", t->name);
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (gpuenv_manifest_target_deps(&cli->ctx, &pj->arena, &pj->m, t, &deps, &ndeps) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (out) {
		json_array_append_new(out, json_pack("{s:s, s:s, s:s?, s:o}", "target", t->name, "lock", name,
			"backend", lk.target.backend, "packages", tree_json(&lk)));
		goto out;
	}
	struct tree tr = { .lk = &lk };
	tr.shown = calloc(lk.npackages + 1, 1);
	tr.on_path = calloc(lk.npackages + 1, 1);
	if (!tr.shown || !tr.on_path) {
		free(tr.shown), free(tr.on_path);
		st = cli_error(cli, CLI_EXIT_CANNOT, "tree: out of memory");
		goto out;
	}
	printf("%s (target %s", name, t->name);
	if (lk.target.gpu)
		printf(", gpu %s", lk.target.gpu);
	if (lk.target.driver)
		printf(", driver %s", lk.target.driver);
	if (lk.target.backend)
		printf(", build %s", lk.target.backend);
	printf(")\n");
	/* the project's own requirements first, then what nothing reaches */
	for (size_t i = 0; i < ndeps; i++) {
		size_t j = tree_find(&lk, deps[i].name);
		if (j != SIZE_MAX && !tr.shown[j])
			tree_print(&tr, j, 0, true, true);
	}
	for (size_t i = 0; i < lk.npackages; i++)
		if (!tr.shown[i])
			tree_print(&tr, i, 0, true, true);
	free(tr.shown);
	free(tr.on_path);
out:
	return st;
}

static int cli_tree(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *project = NULL, *target = NULL, *facts = NULL;
	gpuenv_project_t pj;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case 't': target = optarg; break;
		default:
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (cli->opt.project)
		project = cli->opt.project;
	if (cli->opt.facts)
		facts = cli->opt.facts;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if ((st = cli_project_open(cli, verb->name, project, facts, NULL, NULL, 0, &pj)) != 0)
		goto out;
	const gpuenv_manifest_target_t *only = NULL;
	if (target && !(only = cli_project_target(cli, verb, &pj, target, &st)))
		goto out;
	json_t *arr = cli->json ? json_array() : NULL;
	for (size_t i = 0; i < pj.ntargets; i++) {
		if (only && only != &pj.targets[i])
			continue;
		if (!arr && i && !only)
			printf("\n");
		int s = tree_one(cli, &pj, &pj.targets[i], arr);
		if (s > st)
			st = s;
	}
	if (arr && cli_print_json(cli, arr) != 0)
		st = CLI_EXIT_CANNOT;
out:
	gpuenv_project_close(&pj);
	return st;
}

const struct cli_verb cli_verb_tree = {
	.name = "tree",
	.run = cli_tree,
	.summary = "print a target's locked dependency graph",
	.usage = "gpuenv tree [--project DIR] [--target NAME] [--facts FILE.json] [--json]",
	.help = "  --target NAME      this target only; default: every target with a lock\n"
		"  --json             the packages and their dependencies per target\n"
		"\n"
		"(*) marks a package whose dependencies were shown above.\n"
		"exit status: 0 printed, 2 usage, 4 the manifest or a lock could not be read",
	.groups = CLI_G_PROJECT | CLI_G_FACTS,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_PROJECT, "  --project DIR      the project (its pyproject.toml); default: .\n" },
		{ CLI_G_FACTS, "  --facts FILE.json  with no targets declared: the machine a snapshot describes\n" },
		{ 0, NULL },
	},
};
