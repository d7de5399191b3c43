/* gpuenv venv: make a virtual environment for an interpreter found on this
 * machine, without starting it (lib/install/venv.c, docs/install.md). */
#include "cli.h"

#include <string.h>

#include "gpuenv/venv.h"

/* The interpreter for a venv: --python as given, else the python3 the
 * user would run (the first on PATH), else the newest found. */
static int pick_python(struct cli *cli, gpuenv_arena_t *a, const char *want, gpuenv_python_t *py)
{
	int r = gpuenv_python_find(&cli->ctx, a, want ? want : "python3", NULL, py, NULL, NULL);
	if (r == GPUENV_ENOTFOUND && !want) {
		gpuenv_error_clear(&cli->ctx);
		r = gpuenv_python_find(&cli->ctx, a, NULL, NULL, py, NULL, NULL);
	}
	return r;
}

static int cli_venv(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "python", required_argument, NULL, 'p' },
		{ "clear", no_argument, NULL, 'c' },
		{ "copies", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	const char *want = NULL, *dir = ".venv";
	unsigned flags = 0;
	gpuenv_arena_t a;
	gpuenv_python_t py;
	gpuenv_venv_t v;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case 'p': want = optarg; break;
		case 'c': flags |= GPUENV_VENV_CLEAR; break;
		case 'C': flags |= GPUENV_VENV_COPIES; break;
		default:
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (optind < argc)
		dir = argv[optind++];
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (!dir[0])
		return cli_usage_error(cli, verb, "%s: an empty DIR", verb->name);
	gpuenv_arena_init(&a, &cli->ctx, 0);
	int r = pick_python(cli, &a, want, &py);
	if (r == 0)
		r = gpuenv_venv_create(&cli->ctx, &a, dir, &py, flags, &v);
	if (r) {
		/* refused (no interpreter fits, a folder that is not this venv)
		 * is an answer; a file that could not be read or written is not */
		st = r == GPUENV_ENOTFOUND || r == GPUENV_EUNSUPPORTED || r == GPUENV_EFORMAT ? CLI_EXIT_FAIL
			: r == GPUENV_EUSAGE ? CLI_EXIT_USAGE : CLI_EXIT_CANNOT;
		cli_report(cli, st);
		gpuenv_arena_free(&a);
		return st;
	}
	st = CLI_EXIT_OK;
	if (cli->json) {
		json_t *scheme = json_object();
		for (int k = 0; scheme && k < GPUENV_SCHEME_N; k++)
			json_object_set_new(scheme, gpuenv_scheme_key_name(k),
				cli_json_text(cli, v.scheme.dirs[k], strlen(v.scheme.dirs[k])));
		if (scheme)
			json_object_set_new(scheme, "python", cli_json_text(cli, v.scheme.python, strlen(v.scheme.python)));
		json_t *j = json_pack("{s:o, s:s, s:o, s:o, s:o, s:o}", "venv", cli_json_text(cli, v.root, strlen(v.root)),
			"action", v.action, "python", cli_python_json(cli, &py),
			"site_packages", cli_json_text(cli, v.site, strlen(v.site)),
			"bin", cli_json_text(cli, v.bin, strlen(v.bin)), "scheme", scheme ? scheme : json_null());
		if (!j || cli_print_json(cli, j) != 0)
			st = cli_error(cli, CLI_EXIT_CANNOT, "venv: the JSON could not be written");
	} else {
		printf("%s %s: Python %s (%s, %s)\n", v.action, v.root, v.python.version, py.path, py.found_by);
		if (strcmp(v.action, "kept") != 0)
			printf("activate with: . %s/bin/activate\n", v.root);
	}
	gpuenv_arena_free(&a);
	return st;
}

const struct cli_verb cli_verb_venv = {
	.name = "venv",
	.run = cli_venv,
	.summary = "make a virtual environment (without starting Python)",
	.usage = "gpuenv venv [DIR] [--python P] [--clear] [--copies] [--json]",
	.help = "  DIR            the venv folder; default: .venv\n"
		"  --python P     the interpreter: X.Y (3.12), X.Y.Z, X.Yt (free-threaded), a name\n"
		"                 (python3.12) looked up on PATH, in pyenv and /usr/bin, or a path;\n"
		"                 default: the first python3 on PATH (`gpuenv debug pythons` lists them)\n"
		"  --clear        empty DIR first (everything in it is removed) and make the venv again\n"
		"  --copies       copy the interpreter instead of linking to it\n"
		"  --json         the venv, the interpreter and the install scheme (where wheels go)\n"
		"\n"
		"An existing venv of the same Python X.Y is kept as it is; one of another\n"
		"Python, or a folder that is not a venv, is refused (unless --clear).\n"
		"exit status: 0 the venv is ready, 1 refused: no interpreter fits --python,\n"
		"  or DIR is not a venv of that Python, 2 usage, 4 a file could not be read\n"
		"  or written",
};
