/* gpuenv source add / remove (docs/workflow.md): Poetry's
 * [[tool.poetry.source]] tables edited in place (gpuenv/manifest_edit.h),
 * the rest of pyproject.toml byte for byte.  The locks are left to the next
 * lock or sync (a source changes the manifest's inputs: they say stale). */
#include "cli.h"

#include <string.h>

#include "edit_util.h"
#include "gpuenv/manifest_edit.h"

static int source_run(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, bool add)
{
	static const struct option add_opts[] = {
		{ "priority", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option rm_opts[] = { { NULL, 0, NULL, 0 } };
	static const char *const prios[] = { "primary", "supplemental", "explicit" };
	const char *priority = NULL;
	struct cli_pyproject pp;
	int c, st = CLI_EXIT_USAGE;

	while ((c = cli_getopt(cli, verb, argc, argv, "", add ? add_opts : rm_opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c != 'P')
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		priority = optarg;
		size_t k;
		for (k = 0; k < 3 && strcmp(priority, prios[k]); k++)
			;
		if (k == 3) {
			const char *s = cli_suggest(priority, prios, 3);
			return cli_usage_error(cli, verb, "%s: --priority %s: primary, supplemental or explicit%s%s%s",
				verb->name, priority, s ? " (did you mean " : "", s ? s : "", s ? "?)" : "");
		}
	}
	if (argc - optind != (add ? 2 : 1))
		return cli_usage_error(cli, verb, "%s: %s", verb->name, add ? "NAME and URL, please" : "which source?");
	const char *name = argv[optind], *url = add ? argv[optind + 1] : NULL;
	if (add && !strstr(url, "://"))
		return cli_usage_error(cli, verb, "%s: '%s' is not a URL (https://..., file:///...)", verb->name, url);
	if ((st = cli_pyproject_open(cli, verb->name, cli->opt.project, &pp)) == 0) {
		int r = add ? gpuenv_manifest_edit_source_add(&pp.ed, name, url, priority)
			    : gpuenv_manifest_edit_source_remove(&pp.ed, name);
		if (r)
			st = cli_pyproject_edit_error(cli, r);
		else if (!(st = cli_pyproject_write(cli, verb->name, &pp)) && !cli->json)
			printf("%s [[tool.poetry.source]] %s%s%s\n", add ? "+" : "-", name, add ? " " : "", add ? url : "");
	}
	cli_pyproject_close(&pp);
	return st;
}

static int source_add(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return source_run(cli, verb, argc, argv, true);
}

static int source_remove(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return source_run(cli, verb, argc, argv, false);
}

static const struct cli_verb source_add_verb = {
	.name = "add",
	.run = source_add,
	.summary = "declare a Poetry source ([[tool.poetry.source]])",
	.usage = "gpuenv source add NAME URL [--priority primary|supplemental|explicit] [--project DIR]",
	.help = "  --priority P       Poetry's priority: primary, supplemental or explicit (a\n"
		"                     dependency must name an explicit source: gpuenv add --source)\n"
		"exit status: 0 declared, 2 usage (a name declared already), 4 pyproject.toml\n"
		"missing, unreadable, read-only or malformed",
	.groups = CLI_G_PROJECT,
};

static const struct cli_verb source_remove_verb = {
	.name = "remove",
	.run = source_remove,
	.summary = "remove a Poetry source",
	.usage = "gpuenv source remove NAME [--project DIR]",
	.help = "exit status: 0 removed, 2 usage (no such source, or a dependency still names\n"
		"it), 4 pyproject.toml missing, unreadable, read-only or malformed",
	.groups = CLI_G_PROJECT,
};

static const struct cli_verb *const subs[] = { &source_add_verb, &source_remove_verb };

static int cli_source(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, subs, sizeof(subs) / sizeof(subs[0]), "subcommand", argc, argv);
}

const struct cli_verb cli_verb_source = {
	.name = "source",
	.run = cli_source,
	.summary = "declare or remove a package source in pyproject.toml (Poetry's)",
	.usage = "gpuenv source add NAME URL [--priority primary|supplemental|explicit]\n"
		 "       gpuenv source remove NAME",
	.help = "subcommands:\n"
		"  add                declare [[tool.poetry.source]] NAME at URL\n"
		"  remove             remove it (refused while a dependency names it)\n"
		"exit status: 0 done, 2 usage, 4 pyproject.toml missing, unreadable, read-only\n"
		"or malformed",
};
