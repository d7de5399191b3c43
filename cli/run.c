/* gpuenv run: a command inside the project's environment, synced first
 * (docs/install.md). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock_util.h"

static int cli_run(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = { CLI_LOCK_OPTIONS, CLI_SYNC_OPTIONS,
		{ "no-sync", no_argument, NULL, 'X' }, { NULL, 0, NULL, 0 } };
	struct cli_sync_opts o = { .verb = verb, .quiet = true };
	const char *root = NULL;
	bool no_sync = false;
	int c, st = CLI_EXIT_USAGE, h;

	/* '+': options end at the command (`gpuenv run python -c ...`) */
	while ((c = cli_getopt(cli, verb, argc, argv, "+", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'X') {
			no_sync = true;
			continue;
		}
		if ((h = cli_sync_opt(cli, c, optarg, &o, &st)) < 0)
			return st;
		if (!h)
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no command given (gpuenv run -- CMD [ARGS...])", verb->name);
	if (no_sync) {
		if (!o.venv_dir)
			o.venv_dir = ".venv";
		char *abs = realpath(o.venv_dir, NULL);
		if (!abs || access(o.venv_dir, F_OK) != 0) {
			free(abs);
			return cli_error(cli, CLI_EXIT_CANNOT, "%s: --no-sync: no venv at %s (run gpuenv sync first, or "
				"give --venv DIR)", verb->name, o.venv_dir);
		}
		root = abs;
	} else if ((st = cli_sync_do(cli, &o, &root)) != 0) {
		free((void *)root);
		return st;
	}
	/* the venv first on PATH, VIRTUAL_ENV set, PYTHONHOME out of the way
	 * (as activate does) */
	const char *path = getenv("PATH");
	size_t n = strlen(root) + 6 + (path ? strlen(path) : 0);
	char *np = malloc(n);
	if (!np) {
		free((void *)root);
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
	}
	snprintf(np, n, "%s/bin%s%s", root, path && *path ? ":" : "", path ? path : "");
	if (setenv("PATH", np, 1) != 0 || setenv("VIRTUAL_ENV", root, 1) != 0) {
		free(np);
		free((void *)root);
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: setenv: %s", verb->name, strerror(errno));
	}
	unsetenv("PYTHONHOME");
	free(np);
	free((void *)root);
	fflush(stdout);
	fflush(stderr);
	execvp(argv[optind], &argv[optind]);
	st = errno == ENOENT ? 127 : 126;
	cli_error(cli, st, "%s: %s: %s", verb->name, argv[optind], strerror(errno));
	return st;
}

const struct cli_verb cli_verb_run = {
	.name = "run",
	.run = cli_run,
	.summary = "run a command in the project's venv, synced to the target's lock first",
	.usage = "gpuenv run [--target NAME|auto] [--venv DIR] [--project DIR] [--locked] [--no-sync]\n"
		 "                [sync's options] [--] CMD [ARGS...]",
	.help = "  --target NAME      the target whose lock the venv must match (default: auto)\n"
		"  --venv DIR         the venv (default: PROJECT/.venv)\n"
		"  --no-sync          run in the venv as it is (default: sync first when needed)\n"
		"  --locked           refuse to lock first (the lock must be fresh)\n"
		"  sync's other options apply to the sync before the command\n"
		"\n"
		"CMD runs with the venv's bin first on PATH and VIRTUAL_ENV set; changes the\n"
		"sync made are reported on stderr, nothing when the venv already matched.\n"
		"exit status: CMD's; 127 CMD not found, 126 not executable; otherwise sync's",
};
