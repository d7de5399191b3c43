/* gpuenv debug shim-run: a command run as a build is under --profile: the
 * tool shims first on its PATH (gpuenv/trace.h), one "build" span around
 * it, its compiler and nvcc calls collected into a trace.  For the tests
 * of the shims, and for profiling a build command by hand. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuenv/shim.h"
#include "gpuenv/trace.h"

extern char **environ;

enum { OPT_PROFILE = 0x2401, OPT_PACKAGE };

/* environ with PATH prefixed and the shims' variables set, malloc'd. */
static char **shim_env(const gpuenv_shims_t *sh)
{
	size_t n = 0;
	for (char **e = environ; *e; e++)
		n++;
	char **v = calloc(n + sh->nenv + 2, sizeof(*v));
	const char *path = getenv("PATH");
	size_t k = 0;

	if (!v)
		return NULL;
	for (char **e = environ; *e; e++) {
		bool ours = !strncmp(*e, "PATH=", 5);
		for (size_t i = 0; i < sh->nenv; i++)
			ours |= !strncmp(*e, sh->env[i].name, strlen(sh->env[i].name)) && (*e)[strlen(sh->env[i].name)] == '=';
		if (!ours)
			v[k++] = *e;
	}
	size_t len = strlen(sh->path_prefix) + (path ? strlen(path) : 0) + 8;
	if (!(v[k] = malloc(len))) {
		free(v);
		return NULL;
	}
	snprintf(v[k++], len, "PATH=%s%s%s", sh->path_prefix, path ? ":" : "", path ? path : "");
	for (size_t i = 0; i < sh->nenv; i++) {
		len = strlen(sh->env[i].name) + strlen(sh->env[i].value) + 2;
		if (!(v[k] = malloc(len))) {
			for (size_t j = 0; j < i + 1; j++)
				free(v[k - 1 - j]);
			free(v);
			return NULL;
		}
		snprintf(v[k++], len, "%s=%s", sh->env[i].name, sh->env[i].value);
	}
	return v;
}

static void env_free(char **v, const gpuenv_shims_t *sh)
{
	size_t n = 0;
	if (!v)
		return;
	while (v[n])
		n++;
	for (size_t i = 0; i < sh->nenv + 1 && i < n; i++)
		free(v[n - 1 - i]);
	free(v);
}

static int cli_debug_shim_run(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "package", required_argument, NULL, OPT_PACKAGE },
		{ NULL, 0, NULL, 0 },
	};
	const char *profile = NULL, *package = "build";
	char dir[PATH_MAX], shims[PATH_MAX + 8];
	const char *tmp = getenv("TMPDIR");
	gpuenv_shims_t sh;
	gpuenv_trace_t *t = NULL;
	char **env = NULL;
	int c, st = CLI_EXIT_USAGE, ws = 0;
	pid_t pid;

	while ((c = cli_getopt(cli, verb, argc, argv, "+", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case OPT_PROFILE:
			profile = optarg;
			break;
		case OPT_PACKAGE:
			package = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (!profile)
		return cli_usage_error(cli, verb, "%s: --profile FILE is required", verb->name);
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: which command? (after --)", verb->name);
	snprintf(dir, sizeof(dir), "%s/gpuenv-shims-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: cannot make a folder for the shims: %s", verb->name,
			strerror(errno));
	snprintf(shims, sizeof(shims), "%s/shims", dir);
	if (gpuenv_trace_new(&cli->ctx, "gpuenv debug shim-run", &t) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	cli->ctx.trace = t;
	if (gpuenv_shim_setup(&cli->ctx, shims, NULL, &sh) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (!(env = shim_env(&sh))) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto out_shims;
	}
	uint64_t t0 = gpuenv_trace_begin(&cli->ctx);
	int e = posix_spawnp(&pid, argv[optind], NULL, NULL, argv + optind, env);
	if (e) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: cannot run %s: %s", verb->name, argv[optind], strerror(e));
		goto out_shims;
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	gpuenv_trace_end(&cli->ctx, "build", "build", package, argv[optind], t0);
	st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
out_shims:
	if (gpuenv_shim_collect(&cli->ctx, &sh, package, NULL) != 0)
		st = cli_report(cli, CLI_EXIT_CANNOT);
	else if (gpuenv_trace_write(&cli->ctx, t, profile) != 0)
		st = cli_report(cli, CLI_EXIT_CANNOT);
out:
	env_free(env, &sh);
	cli->ctx.trace = NULL;
	gpuenv_trace_free(&cli->ctx, t);
	rmdir(dir);
	return st;
}

const struct cli_verb cli_verb_debug_shim_run = {
	.name = "shim-run",
	.run = cli_debug_shim_run,
	.summary = "run a command as a build under --profile: its compiler calls traced",
	.usage = "gpuenv debug shim-run --profile FILE [--package NAME] [--] CMD [ARGS...]",
	.help = "  --profile FILE     the trace: a \"build\" span of NAME around CMD and one \"tool\"\n"
		"                     span per cc/gcc/g++/nvcc/ld/... call it made (shims first on\n"
		"                     its PATH run the real tools; docs/profile.md)\n"
		"  --package NAME     the package the calls belong to (default: build)\n"
		"(the shims live in a folder under $TMPDIR, /tmp by default, removed after)\n"
		"\n"
		"exit status: CMD's, or 4 when the shims or the trace could not be made",
};
