/* gpuenv debug pythons: every interpreter gpuenv_python_find sees, in its
 * order of preference, with the version and where the version came from. */
#include "cli.h"

#include <string.h>

#include "gpuenv/venv.h"

static int cli_debug_pythons(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "python", required_argument, NULL, 'p' },
		{ "fits", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *want = NULL, *fits = NULL;
	gpuenv_arena_t a;
	gpuenv_python_t pick, *all;
	size_t n;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case 'p': want = optarg; break;
		case 'f': fits = optarg; break;
		default:
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	gpuenv_arena_init(&a, &cli->ctx, 0);
	int r = gpuenv_python_find(&cli->ctx, &a, want, fits, &pick, &n, &all);
	if (r && r != GPUENV_ENOTFOUND) {
		st = cli_report(cli, r == GPUENV_EUSAGE || r == GPUENV_ESPEC ? CLI_EXIT_USAGE : CLI_EXIT_FAIL);
		gpuenv_arena_free(&a);
		return st;
	}
	st = r ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (cli->json) {
		json_t *list = json_array();
		for (size_t i = 0; list && i < n; i++) {
			json_t *one = cli_python_json(cli, &all[i]);
			if (one)
				json_object_set_new(one, "picked", json_boolean(!r && !strcmp(all[i].real, pick.real)));
			json_array_append_new(list, one);
		}
		json_t *j = json_pack("{s:o, s:o}", "pythons", list ? list : json_array(), "picked",
			r ? json_null() : cli_python_json(cli, &pick));
		if (!j || cli_print_json(cli, j) != 0)
			st = cli_error(cli, CLI_EXIT_CANNOT, "debug pythons: the JSON could not be written");
	} else {
		for (size_t i = 0; i < n; i++) {
			const gpuenv_python_t *p = &all[i];
			bool picked = !r && !strcmp(p->real, pick.real);
			printf("%c %-8s %-9s %-14s ", picked ? '*' : ' ', p->found_by, p->version, p->version_source);
			cli_put_text(cli, stdout, p->path, strlen(p->path));
			if (strcmp(p->path, p->real) != 0) {
				printf(" -> ");
				cli_put_text(cli, stdout, p->real, strlen(p->real));
			}
			printf("%s\n", p->free_threaded ? " (free-threaded)" : "");
		}
		if (!n)
			printf("no Python interpreter found\n");
	}
	if (r)
		cli_report(cli, st);
	gpuenv_arena_free(&a);
	return st;
}

const struct cli_verb cli_verb_debug_pythons = {
	.name = "pythons",
	.run = cli_debug_pythons,
	.summary = "the Python interpreters gpuenv finds (PATH, pyenv, /usr/bin) and their versions",
	.usage = "gpuenv debug pythons [--python P] [--fits SPEC] [--json]",
	.help = "  --python P     mark the one `--python P` picks (X.Y, X.Y.Z, a name or a path)\n"
		"  --fits SPEC    ... among those whose version fits SPEC (\">=3.10,<3.13\")\n"
		"  --json         the list as JSON\n"
		"\n"
		"* marks the interpreter picked (default: the newest).  exit 1 when none fits.",
};
