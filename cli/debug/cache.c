/* gpuenv debug download / debug cache-get: the downloads (lib/index/
 * download.c) and the global cache (lib/install/cache.c) from the command
 * line, for tests and for looking at what the cache does.
 *   gpuenv debug download [OPTIONS] --dest DIR URL=SHA256[:SIZE]...
 *   gpuenv debug cache-get [OPTIONS] [--cache-dir DIR] URL=SHA256[:SIZE]...
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/cache.h"
#include "gpuenv/index.h"

enum { O_PAR = 1, O_RETRIES, O_BASE, O_TIMEOUT, O_DEST, O_PROGRESS,
	O_HTTP_CACHE };

static const struct option dbg_opts[] = {
	{ "max-parallel", required_argument, NULL, O_PAR },
	{ "retries", required_argument, NULL, O_RETRIES },
	{ "retry-base-ms", required_argument, NULL, O_BASE },
	{ "timeout-ms", required_argument, NULL, O_TIMEOUT },
	{ "dest", required_argument, NULL, O_DEST },
	{ "progress", no_argument, NULL, O_PROGRESS },
	{ NULL, 0, NULL, 0 },
};

#define DBG_OPTS_HELP \
	"  --max-parallel N    downloads at once (default 16)\n" \
	"  --retries N         for transient failures (default 3)\n" \
	"  --retry-base-ms N   first backoff delay (default 250)\n" \
	"  --timeout-ms N      connect timeout and stall limit (default 30000)\n" \
	"  --progress          progress lines on stderr (bytes so far)\n"

static const struct cli_group_help dbg_group_help[] = {
	{ CLI_G_INDEX_URL, "  --index-url URL     the index whose credentials apply (its userinfo,\n"
			   "                      GPUENV_INDEX_PYPI_USERNAME / _PASSWORD, ~/.netrc)\n" },
	{ CLI_G_CACHE_DIR, "  --cache-dir DIR     the cache (default: GPUENV_CACHE_DIR, else\n"
			   "                      $XDG_CACHE_HOME/gpuenv)\n" },
	{ CLI_G_OFFLINE, "  --offline           refuse downloads (file:// still works)\n" },
	{ 0, NULL },
};

struct dbg {
	gpuenv_index_source_t src;
	gpuenv_index_opts_t o;
	const char *cache_dir, *dest;
	bool progress;
	size_t n;
	char **urls, **shas; /* argv's URL=SHA256[:SIZE], split in place */
	int64_t *sizes;
};

static int dbg_parse(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	bool dest, struct dbg *d)
{
	int c, st;

	memset(d, 0, sizeof(*d));
	while ((c = cli_getopt(cli, verb, argc, argv, "", dbg_opts, &st)) != -1) {
		char *end = NULL;
		unsigned long v = 0;
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == O_PAR || c == O_RETRIES || c == O_BASE || c == O_TIMEOUT) {
			v = strtoul(optarg, &end, 10);
			if (!optarg[0] || *end || v > 100000000)
				return cli_usage_error(cli, verb, "%s: --%s takes a number, not '%s'",
					verb->name, dbg_opts[c - 1].name, optarg);
		}
		switch (c) {
		case O_PAR: d->o.max_parallel = (unsigned)v; break;
		case O_RETRIES: d->o.retries = (unsigned)v; break;
		case O_BASE: d->o.retry_base_ms = (unsigned)v; break;
		case O_TIMEOUT: d->o.timeout_ms = (unsigned)v; break;
		case O_DEST:
			if (!dest)
				return cli_usage_error(cli, verb, "%s: unexpected option --dest", verb->name);
			d->dest = optarg;
			break;
		case O_PROGRESS: d->progress = true; break;
		default:
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (cli->opt.index_url) {
		d->src = (gpuenv_index_source_t){ .name = "pypi", .url = cli->opt.index_url,
			.priority = GPUENV_SOURCE_DEFAULT };
		d->o.sources = &d->src;
		d->o.nsources = 1;
	}
	d->cache_dir = cli->opt.cache_dir;
	d->o.offline = cli->opt.offline != NULL;
	if (dest && !d->dest)
		return cli_usage_error(cli, verb, "%s: no --dest DIR given", verb->name);
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no URL=SHA256 given", verb->name);
	d->o.cache_dir = d->cache_dir;
	d->n = (size_t)(argc - optind);
	d->urls = calloc(d->n, sizeof(*d->urls));
	d->shas = calloc(d->n, sizeof(*d->shas));
	d->sizes = calloc(d->n, sizeof(*d->sizes));
	if (!d->urls || !d->shas || !d->sizes)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
	for (size_t i = 0; i < d->n; i++) {
		char *arg = argv[optind + (int)i], *eq = strrchr(arg, '='), *colon;
		if (!eq || eq == arg || !eq[1])
			return cli_usage_error(cli, verb, "%s: expected URL=SHA256[:SIZE], got '%s'",
				verb->name, arg);
		*eq = '\0';
		d->urls[i] = arg;
		d->shas[i] = eq + 1;
		d->sizes[i] = -1;
		if ((colon = strchr(eq + 1, ':'))) {
			char *end;
			*colon = '\0';
			long long sz = strtoll(colon + 1, &end, 10);
			if (!colon[1] || *end || sz < 0)
				return cli_usage_error(cli, verb, "%s: SIZE must be a number of bytes, not '%s'",
					verb->name, colon + 1);
			d->sizes[i] = sz;
		}
	}
	return 0;
}

static void dbg_free(struct dbg *d)
{
	free(d->urls);
	free(d->shas);
	free(d->sizes);
}

/* The last path segment of a URL, without query or fragment, percent-
 * decoded (the file name). */
static const char *url_name(gpuenv_arena_t *arena, const char *url)
{
	size_t end = strcspn(url, "?#"), start = end, n = 0;

	while (start && url[start - 1] != '/')
		start--;
	char *out = gpuenv_arena_alloc(arena, end - start + 1);
	for (size_t i = start; out && i < end; i++) {
		int hi, lo;
		if (url[i] == '%' && i + 2 < end && (hi = gpuenv_hex_digit(url[i + 1])) >= 0 &&
			(lo = gpuenv_hex_digit(url[i + 2])) >= 0) {
			out[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[n++] = url[i];
		}
	}
	if (out)
		out[n] = '\0';
	return out;
}

static void dl_progress(void *arg, size_t done, size_t n, uint64_t bytes, uint64_t total)
{
	(void)arg;
	fprintf(stderr, "download %zu/%zu %llu/%llu bytes\n", done, n, (unsigned long long)bytes,
		(unsigned long long)total);
}

static int cli_debug_download(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct dbg d;
	gpuenv_index_t *ix = NULL;
	gpuenv_download_t *dl = NULL;
	gpuenv_arena_t arena;
	int status = CLI_EXIT_OK;

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if ((status = dbg_parse(cli, verb, argc, argv, true, &d)) != 0)
		goto out;
	if (!(dl = calloc(d.n, sizeof(*dl)))) {
		status = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
		goto out;
	}
	for (size_t i = 0; i < d.n; i++) {
		dl[i].url = d.urls[i];
		dl[i].name = url_name(&arena, d.urls[i]);
		dl[i].fd = -1;
		dl[i].path = dl[i].name ? gpuenv_arena_printf(&arena, "%s/%s", d.dest, dl[i].name).ptr : NULL;
		dl[i].sha256 = d.shas[i];
		dl[i].size = d.sizes[i];
		if (!dl[i].path) {
			status = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
			goto out;
		}
	}
	if (gpuenv_index_open(&cli->ctx, &d.o, &ix) != 0) {
		status = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	gpuenv_download_opts_t dopts = { .max_parallel = d.o.max_parallel,
		.progress = d.progress ? dl_progress : NULL };
	gpuenv_index_download(ix, &cli->ctx, dl, d.n, &dopts);
	json_t *arr = cli->json ? json_array() : NULL;
	for (size_t i = 0; i < d.n; i++) {
		if (dl[i].err) {
			cli->ctx.err = dl[i].error;
			status = cli_report(cli, CLI_EXIT_CANNOT);
		} else if (!arr) {
			printf("%s: %llu bytes\n", dl[i].name, (unsigned long long)dl[i].bytes);
		}
		if (arr)
			json_array_append_new(arr, json_pack("{s:o, s:s, s:I, s:o}", "name",
				cli_json_text(cli, dl[i].name, strlen(dl[i].name)), "sha256", dl[i].sha256,
				"bytes", (json_int_t)dl[i].bytes, "error",
				dl[i].err ? json_string(dl[i].error.msg) : json_null()));
	}
	if (arr && cli_print_json(cli, arr) != CLI_EXIT_OK)
		status = CLI_EXIT_CANNOT;
out:
	gpuenv_index_close(ix);
	gpuenv_arena_free(&arena);
	free(dl);
	dbg_free(&d);
	return status;
}

const struct cli_verb cli_verb_debug_download = {
	.name = "download",
	.run = cli_debug_download,
	.summary = "download files, each checked against its sha256 (lib/index/download.c)",
	.usage = "gpuenv debug download [OPTIONS] --dest DIR URL=SHA256[:SIZE]...",
	.help = "  --dest DIR          where the files go (DIR/<the URL's last segment>; must\n"
		"                      not exist yet)\n"
		DBG_OPTS_HELP
		"URLs are http(s):// or file://; SIZE, when given, must match too.\n"
		"A failed download is reported and removed; exit 4 when any failed.\n",
	.groups = CLI_G_INDEX,
	.group_help = dbg_group_help,
};

static void get_progress(void *arg, const char *phase, size_t done, size_t n, uint64_t bytes,
	uint64_t total)
{
	(void)arg;
	if (!strcmp(phase, "download"))
		dl_progress(arg, done, n, bytes, total);
	else
		fprintf(stderr, "%s %zu/%zu\n", phase, done, n);
}

static int cli_debug_cache_get(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct dbg d;
	gpuenv_index_t *ix = NULL;
	gpuenv_cache_t *c = NULL;
	gpuenv_cache_req_t *reqs = NULL;
	gpuenv_cache_entry_t *out = NULL;
	gpuenv_arena_t arena;
	int status = CLI_EXIT_OK;

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if ((status = dbg_parse(cli, verb, argc, argv, false, &d)) != 0)
		goto done;
	reqs = calloc(d.n, sizeof(*reqs));
	out = calloc(d.n, sizeof(*out));
	if (!reqs || !out) {
		status = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
		goto done;
	}
	for (size_t i = 0; i < d.n; i++) {
		bool is_url = strstr(d.urls[i], "://") != NULL;
		reqs[i] = (gpuenv_cache_req_t){ .name = url_name(&arena, d.urls[i]),
			.url = is_url ? d.urls[i] : NULL, .path = is_url ? NULL : d.urls[i],
			.sha256 = d.shas[i], .size = d.sizes[i] };
	}
	if (gpuenv_cache_open(&cli->ctx, d.cache_dir, &c) != 0) {
		status = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	/* the index client's HTTP cache beside the cache's entries */
	d.o.cache_dir = gpuenv_cache_dir(c);
	if (gpuenv_index_open(&cli->ctx, &d.o, &ix) != 0) {
		status = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	gpuenv_cache_progress_t prog = { .fn = get_progress };
	if (gpuenv_cache_get(c, &cli->ctx, &arena, ix, reqs, d.n, NULL, d.progress ? &prog : NULL,
		    out) != 0) {
		status = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	json_t *arr = cli->json ? json_array() : NULL;
	for (size_t i = 0; i < d.n; i++) {
		const gpuenv_cache_entry_t *e = &out[i];
		if (arr) {
			json_array_append_new(arr, json_pack("{s:o, s:o, s:s?, s:s?, s:I, s:b, s:b, s:b}",
				"name", cli_json_text(cli, reqs[i].name, strlen(reqs[i].name)),
				"tree_dir", cli_json_text(cli, e->tree_dir, strlen(e->tree_dir)),
				"project", e->tree.name, "version", e->tree.version,
				"files", (json_int_t)e->tree.nfiles, "downloaded", e->downloaded,
				"unpacked", e->unpacked, "repaired", e->repaired));
			continue;
		}
		printf("%s %s files=%zu%s%s%s\n", reqs[i].name, e->tree_dir, e->tree.nfiles,
			e->downloaded ? " downloaded" : "", e->unpacked ? " unpacked" : "",
			e->repaired ? " repaired" : "");
	}
	if (arr && cli_print_json(cli, arr) != CLI_EXIT_OK)
		status = CLI_EXIT_CANNOT;
done:
	gpuenv_index_close(ix);
	gpuenv_cache_close(c);
	gpuenv_arena_free(&arena);
	free(reqs);
	free(out);
	dbg_free(&d);
	return status;
}

const struct cli_verb cli_verb_debug_cache_get = {
	.name = "cache-get",
	.run = cli_debug_cache_get,
	.summary = "checked trees of wheels from the global cache (lib/install/cache.c)",
	.usage = "gpuenv debug cache-get [OPTIONS] URL|PATH=SHA256[:SIZE]...",
	.help = DBG_OPTS_HELP
		"Prints each wheel's tree folder, its file count, and whether it was\n"
		"downloaded, unpacked or repaired (a damaged entry replaced) in this run.\n"
		"Exit 4 when a wheel could not be had.\n",
	.groups = CLI_G_INDEX,
	.group_help = dbg_group_help,
};
