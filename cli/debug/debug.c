/* gpuenv debug: the parsers, exposed to scripts and external test suites
 * (in the spirit of `apk version -t`).  One table row per subcommand. */
#include "cli.h"

#include <string.h>

#include "gpuenv/hash.h"

/* Each subcommand ends its file in cli/debug/ with its struct cli_verb. */
#define DEBUG_SUBS(X) X(toml_decode) \
	X(toml_encode) \
	X(version_sort) \
	X(specifier) \
	X(marker) \
	X(requirement) \
	X(wheel_name) \
	X(wheel_tags) \
	X(metadata) \
	X(fatbin) \
	X(gpus) \
	X(libs) \
	X(pyenv) \
	X(pythons) \
	X(ldd) \
	X(manifest) \
	X(index) \
	X(sha256) \
	X(pylock) \
	X(resolve) \
	X(download) \
	X(txn) \
	X(cache_get) \
	X(wheel_install) \
	X(shim_run)
#define DEBUG_SUB_DECLARE(n) extern const struct cli_verb cli_verb_debug_##n;
DEBUG_SUBS(DEBUG_SUB_DECLARE)
#define DEBUG_SUB_ROW(n) &cli_verb_debug_##n,
static const struct cli_verb *const subs[] = { DEBUG_SUBS(DEBUG_SUB_ROW) };

#define NSUBS (sizeof(subs) / sizeof(subs[0]))

static int cli_debug(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, subs, NSUBS, "subcommand", argc, argv);
}

static int cli_debug_sha256(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	int c, st, status = CLI_EXIT_OK;

	while ((c = cli_getopt(cli, verb, argc, argv, "", NULL, &st)) != -1)
		if (c == CLI_OPT_EXIT)
			return st;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no FILE given", verb->name);
	for (int i = optind; i < argc; i++) {
		if (gpuenv_sha256_file(&cli->ctx, argv[i], d)) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			continue;
		}
		gpuenv_hex(d, sizeof(d), hex);
		printf("%s  %s\n", hex, argv[i]);
	}
	return status;
}

const struct cli_verb cli_verb_debug = {
	.name = "debug",
	.run = cli_debug,
	.summary = "expose gpuenv's parsers to scripts and test suites",
	.usage = "gpuenv debug SUBCOMMAND [ARGS...]",
	.help = "subcommands (each takes --help):\n"
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
		"  pythons           the Python interpreters found (PATH, pyenv, /usr/bin), versions\n"
		"  ldd               the dynamic loader's choices for a binary, emulated\n"
		"  manifest          pyproject.toml as gpuenv reads it: targets, torch builds\n"
		"  index             NAME... -> the files an index offers (and METADATA)\n"
		"  sha256            FILE... -> SHA-256 digests\n"
		"  pylock            FILE -> the PEP 751 lock re-written (or --json), strictly read\n"
		"  resolve           SCENARIO.toml -> the resolution (packse format, no index)\n"
		"  txn               one transaction on a venv: remove, install stage folders, recover\n"
		"  wheel-install     WHEEL -> an unpacked tree, a stage, a venv (installer tests)\n"
		"  shim-run          CMD as a build under --profile: its compiler calls traced\n",
};

const struct cli_verb cli_verb_debug_sha256 = {
	.name = "sha256",
	.run = cli_debug_sha256,
	.summary = "print the SHA-256 digest of each FILE, as sha256sum does",
	.usage = "gpuenv debug sha256 FILE...",
	.help = NULL,
};
