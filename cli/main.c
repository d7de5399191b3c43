/* gpuenv: entry point, global options and the verb table. */
#include "cli.h"
#include "alloc_inject.h"

#include "gpuenv/shim.h"
#include "gpuenv/hash.h"
#include "gpuenv/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GPUENV_VERSION
#define GPUENV_VERSION "0.0.0"
#endif

/* The verbs, one file each under cli/ (each ends with its struct cli_verb):
 * adding one is a new file and a row here. */
#define CLI_VERBS(X) X(probe) \
	X(doctor) \
	X(preflight) \
	X(diagnose) \
	X(kb) \
	X(init) \
	X(add) \
	X(remove) \
	X(source) \
	X(lock) \
	X(outdated) \
	X(tree) \
	X(export) \
	X(image) \
	X(labels) \
	X(sync) \
	X(run) \
	X(profile) \
	X(venv) \
	X(cache) \
	X(drift) \
	X(trt) \
	X(triton) \
	X(debug)
#define CLI_VERB_DECLARE(n) extern const struct cli_verb cli_verb_##n;
CLI_VERBS(CLI_VERB_DECLARE)
#define CLI_VERB_ROW(n) &cli_verb_##n,
static const struct cli_verb *const verbs[] = { CLI_VERBS(CLI_VERB_ROW) };

#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

static void main_help(FILE *out)
{
	fprintf(out,
		"usage: gpuenv [--json] [--color=WHEN] [-v|-q] VERB [ARGS...]\n"
		"       gpuenv --version\n"
		"       gpuenv VERB --help\n\n"
		"Hardware-aware dependency management for GPU Python stacks.\n\n"
		"verbs:\n");
	for (size_t i = 0; i < NVERBS; i++)
		fprintf(out, "  %-12s %s\n", verbs[i]->name, verbs[i]->summary);
	fprintf(out,
		"\noptions:\n"
		"  -h, --help         show this help\n"
		"      --version      show the version\n"
		"      --json         machine-readable output (JSON) where a verb has any\n"
		"      --color=WHEN   auto (default), always or never; NO_COLOR disables it\n"
		"  -v, --verbose      more messages (repeatable)\n"
		"  -q, --quiet        fewer messages\n\n"
		"exit status, for every verb (docs/exit-codes.md; each verb's --help says\n"
		"what its codes mean there):\n");
#define CLI_EXIT_HELP(name, value, meaning) fprintf(out, "  %d  %s\n", value, meaning);
	CLI_EXIT_CODES(CLI_EXIT_HELP)
}

/* A full disk or a closed pipe must not look like success, nor like a
 * verb's answer (1 is "known failures found" for diagnose): the output
 * was not written, the job was not done. */
static int flushed(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "gpuenv: write error on stdout: %s\n", strerror(errno));
		return CLI_EXIT_CANNOT;
	}
	return status;
}

static void log_stderr(void *ud, int level, const char *msg)
{
	struct cli *cli = ud;
	static const char *const names[] = { "error", "warning", "info", "debug" };
	const char *col = level == GPUENV_LOG_ERROR ? CLI_RED
		: level == GPUENV_LOG_WARN	  ? CLI_YELLOW
						  : "";

	fprintf(stderr, "%s%s:%s %s\n", cli_col(cli, col),
		names[level < 0 ? 0 : level > 3 ? 3 : level], cli_col(cli, CLI_RESET), msg);
}

static bool want_color(struct cli *cli, const char *when)
{
	const char *nc = gpuenv_ctx_getenv(&cli->ctx, "NO_COLOR");
	const char *term = gpuenv_ctx_getenv(&cli->ctx, "TERM");

	if (when && strcmp(when, "always") == 0)
		return !(nc && nc[0]);
	if (when && strcmp(when, "never") == 0)
		return false;
	if (nc && nc[0])
		return false;
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'j' },
		{ "color", required_argument, NULL, 'c' },
		{ "colour", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli cli;
	const char *color_when = NULL;
	const char *names[NVERBS];
	int c, status;

	/* a symlink named cc, nvcc...: a build's tool shim (--profile) */
	if (argc > 0 && gpuenv_shim_is_tool(argv[0]))
		return cli_shim_main(argc, argv);
	memset(&cli, 0, sizeof(cli));
	gpuenv_ctx_init(&cli.ctx);
	cli.prog = "gpuenv";
	cli.ctx.log = log_stderr;
	cli.ctx.log_ud = &cli;
	cli_alloc_inject(&cli);

	opterr = 0;
	/* '+': stop at the verb, its options are its own */
	while ((c = getopt_long(argc, argv, "+:hvq", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			main_help(stdout);
			return flushed(CLI_EXIT_OK);
		case 'V':
			printf("gpuenv %s\n", GPUENV_VERSION);
			return flushed(CLI_EXIT_OK);
		case 'j':
			cli.json = true;
			break;
		case 'c':
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
				return cli_error(&cli, CLI_EXIT_USAGE,
					"--color takes auto, always or never, not '%s'", optarg);
			color_when = optarg;
			break;
		case 'v':
			cli.verbose++;
			break;
		case 'q':
			cli.verbose--;
			break;
		case ':':
			return cli_error(&cli, CLI_EXIT_USAGE, "option '%s' needs a value",
				argv[optind - 1]);
		default: {
			const char *bad = argv[optind - 1];
			const char *gnames[] = { "help", "version", "json", "color", "verbose", "quiet" };
			const char *s = bad[0] == '-' && bad[1] == '-'
				? cli_suggest(bad + 2, gnames, sizeof(gnames) / sizeof(gnames[0]))
				: NULL;
			if (s)
				return cli_error(&cli, CLI_EXIT_USAGE,
					"unknown option '%s'; did you mean '--%s'?", bad, s);
			return cli_error(&cli, CLI_EXIT_USAGE,
				"unknown option '%s'; see 'gpuenv --help'", bad);
		}
		}
	}
	cli.color = want_color(&cli, color_when);
	cli.ctx.verbosity = GPUENV_LOG_WARN + cli.verbose;

	if (optind >= argc) {
		main_help(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *verb = argv[optind];
	for (size_t i = 0; i < NVERBS; i++) {
		names[i] = verbs[i]->name;
		if (strcmp(verb, verbs[i]->name) == 0) {
			int vargc = argc - optind;
			char **vargv = argv + optind;
			cli_opt_reset();
			cli.verb = verbs[i]->name;
			status = verbs[i]->run(&cli, verbs[i], vargc, vargv);
			return flushed(status);
		}
	}
	const char *s = cli_suggest(verb, names, NVERBS);
	if (s)
		return cli_error(&cli, CLI_EXIT_USAGE,
			"'%s' is not a gpuenv verb; did you mean '%s'?", verb, s);
	return cli_error(&cli, CLI_EXIT_USAGE, "'%s' is not a gpuenv verb; see 'gpuenv --help'",
		verb);
}
