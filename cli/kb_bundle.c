/* gpuenv kb bundle: make a signed knowledge-base bundle, the maintainers'
 * side of `kb update` (gpuenv_kb_bundle_make, docs/kb.md "Updating the
 * knowledge base"). */
#include "cli.h"

#include "gpuenv/fs.h"
#include "gpuenv/kb_bundle.h"

enum { OPT_KEY = 0x2103 };

static int kb_bundle(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, OPT_KEY },
		{ NULL, 0, NULL, 0 },
	};
	const char *key = NULL, *out = NULL;
	gpuenv_buf_t buf;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == OPT_KEY)
			key = optarg;
		else
			return CLI_EXIT_USAGE;
	}
	out = cli->opt.output;
	if (optind + 1 != argc || !key || !out)
		return cli_usage_error(cli, verb, "%s: give the folder of KB files, --key KEY.pem and "
			"-o FILE", verb->name);
	gpuenv_buf_init(&buf, &cli->ctx, GPUENV_KB_BUNDLE_MAX);
	if (gpuenv_kb_bundle_make(&cli->ctx, argv[optind], key, &buf) ||
		gpuenv_fs_write_atomic(&cli->ctx, out, buf.data, buf.len, 0644))
		st = cli_report(cli, CLI_EXIT_CANNOT);
	else if (!cli->json)
		printf("%s: %zu bytes\n", out, buf.len);
	else
		st = cli_print_json(cli, json_pack("{s:s, s:I}", "path", out, "bytes", (json_int_t)buf.len));
	gpuenv_buf_free(&buf);
	return st;
}

const struct cli_verb cli_kb_bundle_verb = {
	.name = "bundle",
	.run = kb_bundle,
	.summary = "make a signed knowledge-base bundle (for the project's maintainers)",
	.usage = "gpuenv kb bundle DIR --key KEY.pem -o FILE",
	.help = "  DIR                the KB files (as data/kb/), dated by DIR/about.toml\n"
		"  --key KEY.pem      the Ed25519 private key that signs the manifest\n",
	.groups = CLI_G_OUTPUT,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_OUTPUT, "  -o, --output FILE  where the bundle goes (written atomically)\n" },
		{ 0, NULL },
	},
};
