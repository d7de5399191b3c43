/* gpuenv: entry point, global options and the verb table. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GPUENV_VERSION
#define GPUENV_VERSION "0.0.0"
#endif

static const struct cli_verb verbs[] = {
	{ "probe", cli_probe, "snapshot of this machine's GPU stack: driver, GPUs, toolkits, libraries, Python environments, CUDA code",
		"gpuenv probe [--json] [--deep] [--python PATH | --env DIR] [--root DIR]",
		"  --deep             also cuInit and ask libcuda about each device (~200 ms with a GPU)\n"
		"  --python PATH      read the environment of this interpreter (default: VIRTUAL_ENV,\n"
		"                     then python3 on PATH); read from disk, Python is never started\n"
		"  --env DIR          read this virtual environment or prefix\n"
		"  --no-fatbin        skip listing the CUDA code (cubins, PTX) in framework binaries\n"
		"  --all-binaries     also list the CUDA code of every NVIDIA library found\n"
		"  --gpus-only        driver and GPUs only: no toolkits, libraries or environments\n"
		"  --root DIR         read /proc, /sys, /etc, ... under DIR (a snapshot or a test tree)\n"
		"  --nvml-lib LIB     load this NVML instead of libnvidia-ml.so.1\n"
		"  --cuda-lib LIB     load this libcuda instead of libcuda.so.1\n"
		"\nThe JSON (--json) is the facts document of docs/probe-schema.md (gpuenv.facts/1),\n"
		"which doctor --facts and preflight --facts read.\n" },
	{ "doctor", cli_doctor, "verdicts with fixes over this machine's GPU stack (or a snapshot's facts)",
		"gpuenv doctor [--facts FILE.json] [--env DIR] [--kb-dir DIR] [--json]",
		"  --facts FILE.json  judge a snapshot ('gpuenv probe --json' output; - = stdin)\n"
		"                     instead of probing this machine\n"
		"  --env DIR          judge only the Python environment at DIR\n"
		"  --kb-dir DIR       knowledge-base files (cuda.toml, torch.toml, ngc.toml) from DIR\n"
		"  -v                 also print the knowledge-base source of each fact\n"
		"exit status: 0 no error or warning (infos only), 1 warnings, 3 errors,\n"
		"  2 usage, 4 the facts could not be read or judged (docs/doctor.md)\n" },
	{ "preflight", cli_preflight, "go or no-go: can this node run a CUDA version, a torch build or an image?",
		"gpuenv preflight (--cuda X.Y | --torch VERSION | --image IMAGE:TAG | --lock FILE)\n"
		"                 [--facts FILE.json] [--kb-dir DIR] [--json]",
		"  --cuda X.Y         a CUDA application of that version (12.2)\n"
		"  --torch VERSION    a torch build (2.7.0+cu128; without +cuXYZ the PyPI build)\n"
		"  --image IMAGE:TAG  an NGC container (nvcr.io/nvidia/pytorch:25.01-py3) or\n"
		"                     nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
		"  --lock FILE        a lock file (not supported yet)\n"
		"  --facts FILE.json  judge the node a snapshot describes instead of this one\n"
		"  --kb-dir DIR       knowledge-base files (cuda.toml, torch.toml, ngc.toml) from DIR\n"
		"exit status: 0 go, 1 no-go, 2 usage, 4 the facts or the request could not\n"
		"  be judged (unknown to the knowledge base)\n" },
	{ "diagnose", cli_diagnose, "name the known failures in an error log, with their causes and fixes",
		"gpuenv diagnose [FILE|-] [--facts FACTS.json] [--gpu NAME] [--driver VERSION] [--torch VERSION]",
		"  FILE               the log (default, or '-': standard input)\n"
		"  --facts FILE.json  this machine's facts (`gpuenv probe --json`): fixes made concrete\n"
		"  --gpu NAME, --driver VERSION, --torch VERSION\n"
		"                     facts given by hand (they override --facts)\n"
		"  --kb-dir DIR       knowledge-base files (diagnose.toml ...) from DIR\n"
		"exit status: 0 no known failure found, 1 known failures found,\n"
		"             2 usage error or an input that cannot be read\n" },
	{ "kb", cli_kb, "ask the compatibility knowledge base (torch builds, drivers, GPUs, NGC images)",
		"gpuenv kb torch|driver|gpu|image|sources [ARGS...]",
		"questions (each takes --help, --json and --kb-dir DIR):\n"
		"  torch [--gpu NAME] [--driver VER] [--version X]  torch builds that run there, and why not\n"
		"  driver --cuda X.Y | driver VERSION               minimum driver / CUDA a driver runs\n"
		"  gpu NAME|PCI-ID                                  compute capability, architecture, PCI ids\n"
		"  image IMAGE[:TAG] [--driver VER]                 an NGC image's contents and driver needs\n"
		"  sources                                          the files and their row counts\n" },
	{ "debug", cli_debug, "expose gpuenv's parsers to scripts and test suites",
		"gpuenv debug SUBCOMMAND [ARGS...]",
		"subcommands (each takes --help):\n"
		"  toml-decode       TOML on stdin -> toml-test tagged JSON on stdout\n"
		"  toml-encode       toml-test tagged JSON on stdin -> TOML on stdout\n"
		"  version-sort      PEP 440 versions on stdin -> sorted ascending\n"
		"  specifier         SPEC VERSION... -> the versions SPEC matches\n"
		"  marker            MARKER --env FILE.json -> true or false\n"
		"  requirement       REQ -> JSON of name, extras, specifier, url, marker\n"
		"  wheel-name        FILE.whl -> JSON of name, version, build, tags\n"
		"  metadata          DIST-INFO|METADATA -> JSON of the core metadata\n"
		"  fatbin            FILE... -> sm_XX cubins and PTX inside (cuobjdump's lists)\n"
		"  gpus              the driver and GPU facts alone (NVML, libcuda, sysfs)\n"
		"  libs              CUDA toolkits and NVIDIA library copies with versions\n"
		"  pyenv             Python environments, GPU frameworks, what they load\n"
		"  ldd               the dynamic loader's choices for a binary, emulated\n"
		"  sha256            FILE... -> SHA-256 digests\n" },
};

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
		fprintf(out, "  %-12s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(out,
		"\noptions:\n"
		"  -h, --help         show this help\n"
		"      --version      show the version\n"
		"      --json         machine-readable output (JSON) where a verb has any\n"
		"      --color=WHEN   auto (default), always or never; NO_COLOR disables it\n"
		"  -v, --verbose      more messages (repeatable)\n"
		"  -q, --quiet        fewer messages\n\n"
		"exit status: 0 success, 1 failure or a negative answer, 2 usage error\n");
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

	memset(&cli, 0, sizeof(cli));
	gpuenv_ctx_init(&cli.ctx);
	cli.prog = "gpuenv";
	cli.ctx.log = log_stderr;
	cli.ctx.log_ud = &cli;

	opterr = 0;
	/* '+': stop at the verb, its options are its own */
	while ((c = getopt_long(argc, argv, "+:hvq", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			main_help(stdout);
			return fflush(stdout) == 0 ? 0 : 1;
		case 'V':
			printf("gpuenv %s\n", GPUENV_VERSION);
			return fflush(stdout) == 0 ? 0 : 1;
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
		names[i] = verbs[i].name;
		if (strcmp(verb, verbs[i].name) == 0) {
			int vargc = argc - optind;
			char **vargv = argv + optind;
			cli_opt_reset();
			status = verbs[i].run(&cli, &verbs[i], vargc, vargv);
			/* a full disk or closed pipe must not look like success */
			if (fflush(stdout) != 0 || ferror(stdout)) {
				if (errno != EPIPE)
					fprintf(stderr, "gpuenv: write error on stdout: %s\n", strerror(errno));
				return status ? status : CLI_EXIT_FAIL;
			}
			return status;
		}
	}
	const char *s = cli_suggest(verb, names, NVERBS);
	if (s)
		return cli_error(&cli, CLI_EXIT_USAGE,
			"'%s' is not a gpuenv verb; did you mean '%s'?", verb, s);
	return cli_error(&cli, CLI_EXIT_USAGE, "'%s' is not a gpuenv verb; see 'gpuenv --help'",
		verb);
}
