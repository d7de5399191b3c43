/* gpuenv debug: the parsers, exposed to scripts and external test suites
 * (in the spirit of `apk version -t`).  One table row per subcommand. */
#include "cli.h"

#include <string.h>

#include "gpuenv/hash.h"

static const struct cli_verb subs[] = {
	{ "toml-decode", cli_debug_toml_decode,
		"read TOML on stdin and write toml-test's tagged JSON on stdout; exit 1 on invalid TOML",
		"gpuenv debug toml-decode [--check] [--time] [--copy] [--repeat N] [FILE.toml] (default: stdin)",
		"  --check   parse only: no output, the exit status says whether it is valid\n"
		"  --time    print the parse time and throughput on stderr\n"
		"  --copy    parse through gpuenv_toml_parse (copies the input) instead of\n"
		"            gpuenv_toml_parse_borrowed (benchmarks)\n"
		"  --repeat N  parse N times in this process (benchmarks, with --time)\n" },
	{ "toml-encode", cli_debug_toml_encode,
		"read toml-test's tagged JSON on stdin and write TOML on stdout",
		"gpuenv debug toml-encode [FILE.json] (default: stdin)", NULL },
	{ "version-sort", cli_debug_version_sort,
		"read PEP 440 versions (one a line) on stdin, write them sorted ascending; invalid ones go to stderr and the exit status is 1",
		"gpuenv debug version-sort < VERSIONS",
		"  Each line is printed as it was read (not normalized); equal versions\n"
		"  (1.0 and 1.0.0) keep their input order.  Invalid lines are reported on\n"
		"  stderr as '<stdin>:LINE: invalid version ...'; the valid ones are still\n"
		"  printed.  --json: {\"versions\": [...], \"invalid\": [{line, text}]}\n" },
	{ "specifier", cli_debug_specifier,
		"print the VERSIONs that the PEP 440 specifier SPEC matches, one a line",
		"gpuenv debug specifier SPEC [--prereleases|--no-prereleases] [VERSION...|-]",
		"  SPEC is a comma-separated set ('>=1.0,<2,!=1.5.*'); with no VERSION, or\n"
		"  '-', the versions are read from stdin, one a line.  Matches are printed\n"
		"  as given, in input order; exit status 1 when none matches.\n"
		"  --prereleases      let pre-releases match\n"
		"  --no-prereleases   never let pre-releases match\n"
		"  (neither: PEP 440's default, pre-releases only when nothing else matches\n"
		"   or the specifier names one)\n" },
	{ "marker", cli_debug_marker,
		"evaluate a PEP 508 marker against an environment and print true or false",
		"gpuenv debug marker 'MARKER' [--env FILE.json]",
		"  --env FILE.json    environment: a JSON object of marker variables\n"
		"                     (python_version, sys_platform, extra, ...)\n" },
	{ "requirement", cli_debug_requirement,
		"parse a PEP 508 requirement and print its name, extras, specifier, url and marker as JSON",
		"gpuenv debug requirement 'REQ'", NULL },
	{ "wheel-name", cli_debug_wheel_name,
		"parse a wheel file name and print its name, version, build and tags as JSON",
		"gpuenv debug wheel-name FILE.whl", NULL },
	{ "metadata", cli_debug_metadata,
		"parse a dist-info folder (METADATA, WHEEL, RECORD, entry_points.txt) or one METADATA file and print JSON",
		"gpuenv debug metadata PATH", NULL },
	{ "fatbin", cli_debug_fatbin,
		"list the CUDA code (sm_XX cubins, PTX) inside ELF files' .nv_fatbin sections, as cuobjdump --list-elf / --list-ptx",
		"gpuenv debug fatbin [--elf|--ptx] FILE...", NULL },
	{ "sha256", cli_debug_sha256, "print the SHA-256 digest of each FILE, as sha256sum does",
		"gpuenv debug sha256 FILE...", NULL },
};

#define NSUBS (sizeof(subs) / sizeof(subs[0]))

int cli_debug(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	const char *names[NSUBS];

	if (argc < 2)
		return cli_usage_error(cli, verb, "debug: which subcommand?");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		cli_verb_help(cli, verb, stdout);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < NSUBS; i++) {
		names[i] = subs[i].name;
		if (strcmp(argv[1], subs[i].name) == 0) {
			struct cli_verb v = subs[i];
			char full[64];
			snprintf(full, sizeof(full), "debug %s", subs[i].name);
			v.name = full;
			if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
				cli_verb_help(cli, &v, stdout);
				return CLI_EXIT_OK;
			}
			cli_opt_reset();
			return subs[i].run(cli, &v, argc - 1, argv + 1);
		}
	}
	const char *s = cli_suggest(argv[1], names, NSUBS);
	if (s)
		return cli_error(cli, CLI_EXIT_USAGE,
			"debug: unknown subcommand '%s'; did you mean '%s'?", argv[1], s);
	return cli_usage_error(cli, verb, "debug: unknown subcommand '%s'", argv[1]);
}

int cli_debug_sha256(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
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
