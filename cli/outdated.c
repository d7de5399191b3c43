/* gpuenv outdated: each target's locked packages against the sources
 * (docs/lock.md "Outdated").  The work is lib/project's
 * (gpuenv_project_outdated); this file reads the options and prints. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/project.h"
#include "lock_util.h"

static const char *verdict_name(int v)
{
	return v == GPUENV_KB_YES ? "runs" : v == GPUENV_KB_NO ? "does not run" : "unknown";
}

/* A row is shown in the text when something newer exists. */
static bool row_behind(const gpuenv_outdated_pkg_t *p)
{
	return !p->allowed || strcmp(p->allowed, p->locked) || (p->latest && strcmp(p->latest, p->locked));
}

static json_t *target_json(const gpuenv_outdated_t *o)
{
	json_t *t = json_pack("{s:s, s:s, s:s, s:s?, s:I}", "target", o->t->name, "lock", o->lock_name, "lock_state",
		gpuenv_lock_state_name(o->state), "detail", o->detail, "outdated", (json_int_t)o->noutdated);
	json_t *a = json_array();
	if (!t || !a) {
		json_decref(t);
		json_decref(a);
		return NULL;
	}
	for (size_t i = 0; i < o->npkgs; i++) {
		const gpuenv_outdated_pkg_t *p = &o->pkgs[i];
		json_t *r = json_pack("{s:s, s:s, s:s?, s:s?, s:b, s:b}", "name", p->name, "locked", p->locked,
			"latest", p->latest, "allowed", p->allowed, "torch_family", p->torch_family, "outdated",
			o->rc == 0 && (!p->allowed || strcmp(p->allowed, p->locked)));
		if (r && p->latest_runs >= 0)
			json_object_set_new(r, "kb", json_pack("{s:s, s:s?, s:s, s:s?}", "latest",
				verdict_name(p->latest_runs), "latest_why", p->latest_why, "allowed",
				verdict_name(p->allowed_runs), "allowed_why", p->allowed_why));
		json_array_append_new(a, r);
	}
	json_object_set_new(t, "packages", a);
	return t;
}

static void target_text(const struct cli *cli, const gpuenv_outdated_t *o)
{
	size_t wn = strlen("package"), wl = strlen("locked"), wa = strlen("allowed");

	if (!o->npkgs && o->state >= GPUENV_LOCK_MISSING) {
		printf("%s: %s %s: %s\n", o->t->name, o->lock_name, gpuenv_lock_state_name(o->state),
			o->detail ? o->detail : "");
		return;
	}
	if (o->rc == GPUENV_ENOSOLUTION) {
		printf("%s: %s: the constraints have no solution now\n%s\n", o->t->name, o->lock_name,
			o->detail ? o->detail : "");
		return;
	}
	if (o->rc) {
		fprintf(stderr, "%s: outdated: %s: %s\n", cli->prog, o->t->name, o->detail ? o->detail : "");
		return;
	}
	printf("%s (%s%s): %zu of %zu package%s can move within the constraints\n", o->t->name, o->lock_name,
		o->state == GPUENV_LOCK_STALE ? ", stale" : "", o->noutdated, o->npkgs, o->npkgs == 1 ? "" : "s");
	for (size_t i = 0; i < o->npkgs; i++) {
		const gpuenv_outdated_pkg_t *p = &o->pkgs[i];
		if (!row_behind(p))
			continue;
		wn = strlen(p->name) > wn ? strlen(p->name) : wn;
		wl = strlen(p->locked) > wl ? strlen(p->locked) : wl;
		wa = p->allowed && strlen(p->allowed) > wa ? strlen(p->allowed) : wa;
	}
	bool header = false;
	for (size_t i = 0; i < o->npkgs; i++) {
		const gpuenv_outdated_pkg_t *p = &o->pkgs[i];
		if (!row_behind(p))
			continue;
		if (!header)
			printf("  %-*s  %-*s  %-*s  %s\n", (int)wn, "package", (int)wl, "locked", (int)wa, "allowed",
				"latest");
		header = true;
		printf("  %-*s  %-*s  %-*s  %s\n", (int)wn, p->name, (int)wl, p->locked, (int)wa,
			p->allowed ? p->allowed : "-", p->latest ? p->latest : "-");
		if (p->latest_runs >= 0) {
			printf("    on %s (the knowledge base): %s %s", o->t->name, p->allowed ? p->allowed : "-",
				verdict_name(p->allowed_runs));
			if (p->latest && (!p->allowed || strcmp(p->latest, p->allowed)))
				printf(", %s %s%s%s", p->latest, verdict_name(p->latest_runs),
					p->latest_runs != GPUENV_KB_YES && p->latest_why ? ": " : "",
					p->latest_runs != GPUENV_KB_YES && p->latest_why ? p->latest_why : "");
			putchar('\n');
		}
	}
}

static int cli_outdated(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_LOCK_OPTIONS,
		{ "target", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_lock_opts o = { 0 };
	gpuenv_project_t pj;
	gpuenv_project_lock_opts_t lo;
	gpuenv_outdated_t *res = NULL;
	const gpuenv_manifest_target_t **pick = NULL;
	size_t npick = 0;
	int c, h, st = CLI_EXIT_USAGE;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if ((h = cli_lock_opt(cli, verb, c, optarg, &o, &st)) < 0)
			return st;
		if (h)
			continue;
		if (c != 't')
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		if (o.ntargets == CLI_LOCK_MAX_ARGS)
			return cli_usage_error(cli, verb, "%s: too many --target options", verb->name);
		o.targets[o.ntargets++] = optarg;
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if ((st = cli_project_open(cli, verb->name, o.project, o.facts_path, o.kb_dir, o.torch_index, 0, &pj)) != 0)
		goto out;
	pick = gpuenv_arena_calloc(&pj.arena, pj.ntargets + o.ntargets + 1, sizeof(*pick));
	if (!pick) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	for (size_t i = 0; i < (o.ntargets ? o.ntargets : pj.ntargets); i++)
		if (!(pick[npick++] = o.ntargets ? cli_project_target(cli, verb, &pj, o.targets[i], &st) : &pj.targets[i]))
			goto out;
	if ((st = cli_lock_lib_opts(cli, verb, &o, &pj, &lo)) != 0)
		goto out;
	if (gpuenv_project_outdated(&pj, &lo, pick, npick, &res) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	json_t *arr = cli->json ? json_array() : NULL;
	st = CLI_EXIT_OK;
	for (size_t i = 0; i < npick; i++) {
		const gpuenv_outdated_t *r = &res[i];
		if (r->rc && r->rc != GPUENV_ENOSOLUTION)
			st = CLI_EXIT_CANNOT;
		else if ((r->noutdated || r->rc || r->state >= GPUENV_LOCK_MISSING) && st == CLI_EXIT_OK)
			st = CLI_EXIT_FAIL;
		if (arr)
			json_array_append_new(arr, target_json(r));
		else
			target_text(cli, r);
	}
	if (arr && cli_print_json(cli, arr) != 0)
		st = CLI_EXIT_CANNOT;
out:
	gpuenv_project_close(&pj);
	return st;
}

const struct cli_verb cli_verb_outdated = {
	.name = "outdated",
	.run = cli_outdated,
	.summary = "each target's locked packages against the newest the sources offer",
	.usage = "gpuenv outdated [--project DIR] [--target NAME]... [--offline] [--refresh]\n"
		 "                 [--index-url URL]\n"
		 "                 [--source-url NAME=URL]... [--torch-index URL] [--find-links DIR]...\n"
		 "                 [--cache-dir DIR] [--facts FILE.json] [--kb-dir DIR] [--pre]\n"
		 "                 [--retries N] [--timeout SECONDS] [--json]",
	.help = "  --project DIR      the project (its pyproject.toml); default: .\n"
		"  --target NAME      this declared target (repeatable); default: all\n"
		CLI_LOCK_INDEX_HELP
		"  --facts FILE.json  with no targets declared: the machine a probe snapshot\n"
		"                     describes instead of this one\n"
		"  --kb-dir DIR       knowledge-base files that replace the built-in ones\n"
		"  --pre              allow pre-releases everywhere\n"
		"  --retries N        retry a failed transfer N times (1-20, default 3), with backoff\n"
		"  --timeout SECONDS  give up on a transfer after this long (default 30)\n"
		"  --json             one object per target on stdout, every locked package\n"
		"\n"
		"For each package of a target's lock: the version locked, the newest the\n"
		"project's constraints allow on the target (what gpuenv lock --upgrade would\n"
		"take; nothing is written) and the newest the sources offer; for torch, whether\n"
		"the knowledge base says each runs on the target.  The text lists the packages\n"
		"with something newer; --json lists all.\n"
		"exit status: 0 every locked package is the newest its constraints allow,\n"
		"1 some package can move (gpuenv lock --upgrade), a lock is missing or the\n"
		"constraints have no solution, 2 usage, 4 an input could not be read or\n"
		"fetched, or the output not written",
};
