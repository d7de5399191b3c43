/* gpuenv kb update: a newer knowledge base installed from a signed bundle
 * (include/gpuenv/kb_bundle.h, docs/kb.md "Updating the knowledge base"). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/index.h"
#include "gpuenv/kb.h"
#include "gpuenv/kb_bundle.h"

#ifndef GPUENV_KB_UPDATE_URL
#define GPUENV_KB_UPDATE_URL "" /* meson -Dkb_update_url=URL */
#endif

enum { OPT_FROM = 0x2102 };

static bool is_url(const char *s)
{
	return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 ||
		strncmp(s, "file://", 7) == 0;
}

static void dl_progress(void *arg, size_t done, size_t n, uint64_t bytes, uint64_t total)
{
	struct cli *cli = arg;
	(void)done, (void)n, (void)total;
	if (!cli->json && isatty(2))
		fprintf(stderr, "\rdownloading the bundle: %llu KiB", (unsigned long long)(bytes >> 10));
}

/* The bundle at url into buf, through a temporary file in dir. */
static int fetch_url(struct cli *cli, const char *url, const char *dir, gpuenv_buf_t *buf)
{
	gpuenv_index_opts_t io = { 0 };
	gpuenv_download_opts_t dopt = { .progress = dl_progress, .progress_arg = cli };
	gpuenv_download_t dl = { .url = url, .name = "the knowledge-base bundle", .fd = -1,
		.unhashed = true, .size = -1, .max_bytes = GPUENV_KB_BUNDLE_MAX };
	gpuenv_index_t *ix = NULL;
	char tmp[4200];
	int r;

	snprintf(tmp, sizeof(tmp), "%s/.download-%ld", dir, (long)getpid());
	dl.path = tmp;
	unlink(tmp);
	if (!cli->json)
		fprintf(stderr, "fetching %s\n", url);
	r = strncmp(url, "file://", 7) == 0 ? 0 : gpuenv_index_open(&cli->ctx, &io, &ix);
	if (!r)
		r = gpuenv_index_download(ix, &cli->ctx, &dl, 1, &dopt);
	if (!cli->json && isatty(2))
		fprintf(stderr, "\n");
	if (ix)
		gpuenv_index_close(ix);
	if (!r)
		r = gpuenv_fs_read(&cli->ctx, tmp, GPUENV_KB_BUNDLE_MAX, buf);
	unlink(tmp);
	return r;
}

static int kb_update(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, OPT_FROM },
		{ NULL, 0, NULL, 0 },
	};
	const char *from = NULL, *env;
	char bundles[4096], path[4200];
	gpuenv_kb_t *cur = NULL;
	gpuenv_kb_bundle_t b;
	gpuenv_arena_t arena;
	gpuenv_buf_t buf;
	gpuenv_str_t cur_date;
	int c, st = 0, r;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c != OPT_FROM)
			return CLI_EXIT_USAGE;
		from = optarg;
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (!from && (env = gpuenv_ctx_getenv(&cli->ctx, "GPUENV_KB_URL")) && *env)
		from = env;
	if (!from && GPUENV_KB_UPDATE_URL[0])
		from = GPUENV_KB_UPDATE_URL;
	if (!from)
		return cli_usage_error(cli, verb, "%s: where from? give --from URL|FILE (or set "
			"GPUENV_KB_URL); this build has no default update URL", verb->name);
	if (gpuenv_kb_bundle_dir(&cli->ctx, bundles, sizeof(bundles)))
		return cli_report(cli, CLI_EXIT_CANNOT);
	/* what is in use now: the answer compares with it, and it stays if the new one is refused */
	if (gpuenv_kb_load_files(&cli->ctx, NULL, GPUENV_KB_ALL, &cur))
		return cli_report(cli, CLI_EXIT_CANNOT);
	cur_date = gpuenv_kb_date(cur);
	gpuenv_buf_init(&buf, &cli->ctx, GPUENV_KB_BUNDLE_MAX);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (is_url(from)) {
		/* the download lands beside the bundles: the folder must be there */
		r = gpuenv_fs_mkdirs(&cli->ctx, bundles, 0755);
		if (!r)
			r = fetch_url(cli, from, bundles, &buf);
	} else
		r = gpuenv_fs_read(&cli->ctx, from, GPUENV_KB_BUNDLE_MAX, &buf);
	if (!r)
		r = gpuenv_kb_bundle_check(&cli->ctx, &arena, from, buf.len ? buf.data : "", buf.len, &b);
	if (r) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		fprintf(stderr, "nothing was installed; the knowledge base in use stays: %.*s%s\n",
			cur_date.ptr ? (int)cur_date.len : 7, cur_date.ptr ? cur_date.ptr : "no date",
			cur->bundle ? " (installed bundle)" : " (built in)");
		goto out;
	}
	if (cur_date.len == 10 && strncmp(b.m.date, cur_date.ptr, 10) <= 0) {
		if (cli->json)
			st = cli_print_json(cli, json_pack("{s:s, s:s, s:s#}", "status", "current",
				"date", b.m.date, "in_use", cur_date.ptr, (int)cur_date.len));
		else
			printf("the knowledge base in use (%.*s) is as new as the bundle (%s) or newer: "
			       "nothing installed\n", GPUENV_STR_ARG(cur_date), b.m.date);
		goto out;
	}
	r = gpuenv_kb_bundle_install(&cli->ctx, &b, bundles, path, sizeof(path));
	if (r < 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (cli->json)
		st = cli_print_json(cli, json_pack("{s:s, s:s, s:s, s:s, s:s#, s:i}", "status",
			r == 1 ? "already-installed" : "installed", "date", b.m.date, "path", path,
			"key", b.key->name, "previous", cur_date.ptr ? cur_date.ptr : "",
			(int)cur_date.len, "files", (int)b.n));
	else
		printf("%s knowledge base %s (%zu files, signed by the %s key) at %s;\n"
		       "every verb uses it from now on (the one in use was %.*s)\n",
			r == 1 ? "already installed:" : "installed", b.m.date, b.n, b.key->name, path,
			GPUENV_STR_ARG(cur_date));
out:
	gpuenv_arena_free(&arena);
	gpuenv_buf_free(&buf);
	gpuenv_kb_free(cur);
	return st;
}

const struct cli_verb cli_kb_update_verb = {
	.name = "update",
	.run = kb_update,
	.summary = "install a newer knowledge base from a signed bundle",
	.usage = "gpuenv kb update [--from URL|FILE]",
	.help = "  --from URL|FILE    the bundle (http(s):// or file:// URL, or a path); default\n"
		"                     $GPUENV_KB_URL\n"
		"The bundle's signature must verify with a key built into gpuenv, its files must\n"
		"match its signed manifest and load; it is installed atomically into the data\n"
		"folder ($GPUENV_DATA_DIR/kb, else $XDG_DATA_HOME/gpuenv/kb, else\n"
		"~/.local/share/gpuenv/kb) and every verb uses the newest sound bundle that is\n"
		"newer than the built-in knowledge base. A refused bundle changes nothing.\n"
		"exit status: 0 installed or already current, 2 usage, 4 refused or unreadable\n",
};
