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
		"gpuenv debug wheel-name [--target TARGET] [--validate-order] FILE.whl",
		"  --target TARGET    also say whether a target (cp312-manylinux_2_35_x86_64)\n"
		"                     runs the wheel and its rank there (0 = best tag; exit 1\n"
		"                     when incompatible)\n"
		"  --validate-order   require sorted compressed tag sets (PEP 425)\n" },
	{ "wheel-tags", cli_debug_wheel_tags,
		"list the wheel tags a target supports, best first, as pip would on that interpreter",
		"gpuenv debug wheel-tags [--linux-first] TARGET",
		"  TARGET             PYTHON-PLATFORM: cp312-manylinux_2_35_x86_64,\n"
		"                     cp313t-musllinux_1_2_aarch64, pp310-macosx_14_0_arm64,\n"
		"                     cp311-win_amd64, cp312-linux_x86_64 (no manylinux)\n"
		"  --linux-first      linux_ARCH before manylinux (packaging >= 26.3's order)\n" },
	{ "metadata", cli_debug_metadata,
		"parse a dist-info folder (METADATA, WHEEL, RECORD, entry_points.txt) or one METADATA file and print JSON",
		"gpuenv debug metadata [--lenient-version] [--validate-record] PATH",
		"  PATH               a .dist-info folder, or a METADATA (PKG-INFO), WHEEL, RECORD\n"
		"                     or entry_points.txt file (told apart by its name)\n"
		"  --lenient-version  accept a Version that is not PEP 440\n"
		"  --validate-record  also check RECORD as a wheel's (safe paths, hashes)\n" },
	{ "fatbin", cli_debug_fatbin,
		"list the CUDA code (sm_XX cubins, PTX) inside ELF files' .nv_fatbin sections, as cuobjdump --list-elf / --list-ptx",
		"gpuenv debug fatbin [--elf] [--ptx] [--json] FILE...",
		"  --elf    print cuobjdump --list-elf lines (\"ELF file    1: libX.so.1.sm_90a.cubin\")\n"
		"  --ptx    print cuobjdump --list-ptx lines\n"
		"  (neither: one summary line per file, \"sm_75 sm_90a sm_100f ptx: compute_121\")\n"
		"  (--json: an array with an object per file: cubins, PTX, LTO-IR, summary, error)\n" },
	{ "gpus", cli_debug_gpus,
		"print the driver and GPU facts (NVML, libcuda, procfs/sysfs, Jetson) as text or JSON",
		"gpuenv debug gpus [--json] [--deep] [--root DIR] [--nvml LIB] [--libcuda LIB]",
		"  --deep             also cuInit and ask libcuda for each device (~250 ms with a GPU)\n"
		"  --root DIR         read /proc, /sys and /etc under DIR (libraries are not loaded\n"
		"                     unless --nvml / --libcuda name them)\n"
		"  --nvml LIB         load this NVML library instead of libnvidia-ml.so.1\n"
		"  --libcuda LIB      load this CUDA driver library instead of libcuda.so.1\n"
		"  --no-nvml, --no-libcuda, --no-mig, --no-nvlink   skip those queries\n" },
	{ "libs", cli_debug_libs, "CUDA toolkits and every copy of the NVIDIA libraries, with versions and where found",
		"gpuenv debug libs [--json] [--root DIR] [--ldcache FILE] [--python PATH | --env DIR]", NULL },
	{ "pyenv", cli_debug_pyenv, "Python environments, their GPU frameworks and the libraries those load",
		"gpuenv debug pyenv [--json] [--tree] [--alternatives] [--no-loader] [--root DIR] [--python PATH | --env DIR]", NULL },
	{ "ldd", cli_debug_ldd, "emulate the dynamic loader for FILE: each DT_NEEDED -> the path ld.so would pick and why",
		"gpuenv debug ldd [--json] [--tree] [--alternatives] [--root DIR] [--ldcache FILE] FILE...", NULL },
	{ "sha256", cli_debug_sha256, "print the SHA-256 digest of each FILE, as sha256sum does",
		"gpuenv debug sha256 FILE...", NULL },
};

#define NSUBS (sizeof(subs) / sizeof(subs[0]))

int cli_debug(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, subs, NSUBS, "subcommand", argc, argv);
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
