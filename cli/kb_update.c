/* gpuenv kb info, kb update and kb bundle: the knowledge base about itself,
 * a newer one installed from a signed bundle, and making such a bundle
 * (include/gpuenv/kb_bundle.h, docs/kb.md "Updating the knowledge base"). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/index.h"
#include "gpuenv/kb.h"
#include "gpuenv/kb_answer.h"
#include "gpuenv/kb_bundle.h"

#ifndef GPUENV_KB_UPDATE_URL
#define GPUENV_KB_UPDATE_URL "" /* meson -Dkb_update_url=URL */
#endif

enum { OPT_KB_DIR = 0x2101, OPT_FROM, OPT_KEY, OPT_OUT };

static const struct option kb_dir_opt[] = {
	{ "kb-dir", required_argument, NULL, OPT_KB_DIR },
	{ NULL, 0, NULL, 0 },
};

/* "2026-12-01 (built in)" or "2027-01-15 (bundle PATH, signed by the release key)" */
static void print_origin(const gpuenv_kb_t *kb)
{
	gpuenv_str_t d = gpuenv_kb_date(kb);

	printf("%.*s", d.ptr ? (int)d.len : 7, d.ptr ? d.ptr : "no date");
	if (kb->bundle)
		printf(" (installed bundle %s, signed by the %s key)\n", kb->bundle, kb->bundle_key);
	else if (kb->files[GPUENV_KB_CUDA].origin &&
		strcmp(kb->files[GPUENV_KB_CUDA].origin, "embedded") != 0)
		printf(" (files from --kb-dir)\n");
	else
		printf(" (built in)\n");
}

/* The hosts of info's "hosts" object, most rows first. */
static int by_rows(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "rows"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "rows"));
	return x < y ? 1 : x > y ? -1 : 0;
}

static void print_info(const gpuenv_kb_t *kb, json_t *info, const char *bundles)
{
	json_t *nw = json_object_get(info, "newest"), *ngc = json_object_get(nw, "ngc"), *v;
	json_t *hosts = json_object_get(info, "hosts"), *list[256], *arr;
	const char *key, *names[5] = { "torch", "cuda", "cudnn", "nccl", "tensorrt" };
	const char *words[5] = { "torch", "CUDA", "cuDNN", "NCCL", "TensorRT" };
	size_t nh = 0, i;

	printf("knowledge base: ");
	print_origin(kb);
	printf("rows: %lld in %d files, every one with a source; %lld from secondary sources\n",
		(long long)json_integer_value(json_object_get(info, "rows")), GPUENV_KB_NFILES,
		(long long)json_integer_value(json_object_get(info, "secondary")));
	printf("newest known:");
	for (i = 0; i < 5; i++)
		if ((v = json_object_get(nw, names[i])) && json_is_string(v))
			printf("%s %s %s", i ? "," : "", words[i], json_string_value(v));
	printf("\n");
	if (json_object_size(ngc)) {
		bool first = true;
		printf("newest NGC releases:");
		json_object_foreach(ngc, key, v) {
			const char *s = strrchr(key, '/');
			if (json_is_string(v))
				printf("%s %s %s", first ? "" : ",", s ? s + 1 : key, json_string_value(v));
			first = false;
		}
		printf("\n");
	}
	json_object_foreach(hosts, key, v) {
		if (nh < sizeof(list) / sizeof(list[0]))
			list[nh++] = v;
	}
	qsort(list, nh, sizeof(list[0]), by_rows);
	printf("sources: %zu documents from %zu hosts (`gpuenv --json kb info` lists each)\n",
		json_object_size(json_object_get(info, "documents")), json_object_size(hosts));
	for (i = 0; i < nh && i < 12; i++) {
		json_object_foreach(hosts, key, v) {
			if (v == list[i])
				printf("  %-44s %5lld rows, %lld documents\n", key,
					(long long)json_integer_value(json_object_get(v, "rows")),
					(long long)json_integer_value(json_object_get(v, "documents")));
		}
	}
	if (nh > 12)
		printf("  ... and %zu more hosts\n", nh - 12);
	arr = json_object_get(info, "bundles");
	if (bundles) {
		printf("installed bundles (%s):%s\n", bundles, json_array_size(arr) ? "" : " none");
		json_array_foreach(arr, i, v) {
			const char *err = json_string_value(json_object_get(v, "error"));
			printf("  %s%s%s%s\n", json_string_value(json_object_get(v, "path")),
				json_is_true(json_object_get(v, "in_use")) ? " (in use)" : "",
				err ? ": not used: " : "", err ? err : "");
		}
	}
	printf("embedded knowledge base: %s; trusted signing keys:", gpuenv_kb_embedded_date());
	json_array_foreach(json_object_get(info, "trusted_keys"), i, v)
		printf("%s %s (%s)", i ? "," : "", json_string_value(json_object_get(v, "id")),
			json_string_value(json_object_get(v, "name")));
	printf("\n");
}

static int kb_info(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	const char *kb_dir = NULL;
	char bundles[4096];
	bool have_dir;
	gpuenv_kb_t *kb = NULL;
	json_t *info;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "", kb_dir_opt, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c != OPT_KB_DIR)
			return CLI_EXIT_USAGE;
		kb_dir = optarg;
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (gpuenv_kb_load(&cli->ctx, kb_dir, &kb))
		return cli_report(cli, CLI_EXIT_CANNOT);
	have_dir = gpuenv_kb_bundle_dir(&cli->ctx, bundles, sizeof(bundles)) == 0;
	gpuenv_error_clear(&cli->ctx);
	info = gpuenv_kb_info_json(kb, have_dir ? bundles : NULL);
	if (!info)
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
	else if (cli->json)
		st = cli_print_json(cli, info);
	else {
		print_info(kb, info, have_dir ? bundles : NULL);
		cli_json_drop(info);
	}
	gpuenv_kb_free(kb);
	return st;
}

/* ---- kb update --------------------------------------------------------------------- */

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

/* ---- kb bundle ---------------------------------------------------------------------- */

static int kb_bundle(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, OPT_KEY },
		{ "output", required_argument, NULL, OPT_OUT },
		{ NULL, 0, NULL, 0 },
	};
	const char *key = NULL, *out = NULL;
	gpuenv_buf_t buf;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "o:", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == OPT_KEY)
			key = optarg;
		else if (c == OPT_OUT || c == 'o')
			out = optarg;
		else
			return CLI_EXIT_USAGE;
	}
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

const struct cli_verb cli_kb_info_verb = {
	.name = "info",
	.run = kb_info,
	.summary = "the knowledge base's date, where it comes from, its counts and its sources",
	.usage = "gpuenv kb info [--kb-dir DIR]",
	.help = "  --kb-dir DIR       the files in DIR instead (missing ones: the built-in copy)\n"
		"JSON adds every cited document with its row count (\"documents\")\n",
};

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

const struct cli_verb cli_kb_bundle_verb = {
	.name = "bundle",
	.run = kb_bundle,
	.summary = "make a signed knowledge-base bundle (for the project's maintainers)",
	.usage = "gpuenv kb bundle DIR --key KEY.pem -o FILE",
	.help = "  DIR                the KB files (as data/kb/), dated by DIR/about.toml\n"
		"  --key KEY.pem      the Ed25519 private key that signs the manifest\n"
		"  -o, --output FILE  where the bundle goes (written atomically)\n",
};
