/* gpuenv debug index: the index client from the command line, for tests,
 * benchmarks and for looking at what an index offers.
 *   gpuenv debug index [--index-url URL] [--source NAME=URL]... NAME...
 * prints each project's files (and, with --metadata, the newest wheel's
 * METADATA Name / Version / Requires-Dist). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/index.h"
#include "gpuenv/metadata.h"
#include "gpuenv/wheel.h"

#define MAX_SOURCES 32

typedef struct dix {
	gpuenv_index_source_t src[MAX_SOURCES];
	size_t nsrc;
	unsigned nfl, nindex;
	char names[MAX_SOURCES][32];
} dix_t;

static int add_src(struct cli *cli, const struct cli_verb *verb, dix_t *d, const char *arg,
	int priority, bool find_links, bool named)
{
	gpuenv_index_source_t *s;
	const char *eq;

	if (d->nsrc == MAX_SOURCES)
		return cli_usage_error(cli, verb, "%s: at most %d sources", verb->name, MAX_SOURCES);
	s = &d->src[d->nsrc];
	memset(s, 0, sizeof(*s));
	s->priority = priority;
	s->find_links = find_links;
	if (named) {
		eq = strchr(arg, '=');
		if (!eq || eq == arg || !eq[1])
			return cli_usage_error(cli, verb, "%s: expected NAME=URL, got '%s'", verb->name, arg);
		snprintf(d->names[d->nsrc], sizeof(d->names[0]), "%.*s", (int)(eq - arg), arg);
		s->url = eq + 1;
	} else {
		if (find_links)
			snprintf(d->names[d->nsrc], sizeof(d->names[0]), "find-links-%u", ++d->nfl);
		else if (d->nindex++)
			snprintf(d->names[d->nsrc], sizeof(d->names[0]), "index-%u", d->nindex);
		else
			snprintf(d->names[d->nsrc], sizeof(d->names[0]), "pypi");
		s->url = arg;
	}
	s->name = d->names[d->nsrc];
	d->nsrc++;
	return 0;
}

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jfile(struct cli *cli, const gpuenv_index_file_t *f)
{
	json_t *o = json_object();

	json_object_set_new(o, "filename", cli_json_text(cli, f->filename, strlen(f->filename)));
	json_object_set_new(o, "url", cli_json_text(cli, f->url, strlen(f->url)));
	json_object_set_new(o, "sha256", jstr_or_null(f->sha256));
	json_object_set_new(o, "requires_python",
		f->requires_python ? cli_json_text(cli, f->requires_python, strlen(f->requires_python))
				   : json_null());
	json_object_set_new(o, "yanked", json_boolean(f->yanked));
	json_object_set_new(o, "yanked_reason",
		f->yanked_reason ? cli_json_text(cli, f->yanked_reason, strlen(f->yanked_reason)) : json_null());
	json_object_set_new(o, "has_metadata", json_boolean(f->has_metadata));
	json_object_set_new(o, "metadata_sha256", jstr_or_null(f->metadata_sha256));
	json_object_set_new(o, "size", f->size >= 0 ? json_integer((json_int_t)f->size) : json_null());
	json_object_set_new(o, "upload_time",
		f->upload_time ? cli_json_text(cli, f->upload_time, strlen(f->upload_time)) : json_null());
	return o;
}

/* The newest wheel of a project that is not yanked (page order breaks ties). */
static const gpuenv_index_file_t *newest_wheel(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_index_project_t *p)
{
	const gpuenv_index_file_t *best = NULL;
	gpuenv_wheel_name_t bw, w;
	gpuenv_error_t saved = ctx->err;

	for (size_t i = 0; i < p->nfiles; i++) {
		const gpuenv_index_file_t *f = &p->files[i];
		if (f->yanked || gpuenv_wheel_name_parse(ctx, arena, gpuenv_str(f->filename), 0, &w))
			continue;
		if (!best || gpuenv_version_cmp(&w.version, &bw.version) > 0) {
			best = f;
			bw = w;
		}
	}
	ctx->err = saved;
	return best;
}

static json_t *jmetadata(struct cli *cli, gpuenv_arena_t *arena, const gpuenv_index_file_t *f,
	gpuenv_str_t text, int *status)
{
	gpuenv_metadata_t md;
	json_t *o = json_object(), *rd = json_array();

	json_object_set_new(o, "file", json_string(f->filename));
	if (gpuenv_metadata_parse(&cli->ctx, arena, f->filename, text, GPUENV_METADATA_LENIENT_VERSION,
		    &md)) {
		*status = cli_report(cli, CLI_EXIT_FAIL);
		json_decref(rd);
		json_object_set_new(o, "error", json_string(cli->ctx.err.msg));
		return o;
	}
	json_object_set_new(o, "name", cli_json_text(cli, md.name.ptr, md.name.len));
	json_object_set_new(o, "version", cli_json_text(cli, md.version_text.ptr, md.version_text.len));
	for (size_t i = 0; i < md.nrequires_dist; i++)
		json_array_append_new(rd, cli_json_text(cli, md.requires_dist[i].text.ptr,
			md.requires_dist[i].text.len));
	json_object_set_new(o, "requires_dist", rd);
	return o;
}

static void print_text(struct cli *cli, json_t *projects)
{
	size_t i;
	json_t *p;

	json_array_foreach(projects, i, p) {
		json_t *files = json_object_get(p, "files"), *f, *md;
		size_t k;
		if (!json_is_array(files)) {
			printf("%s: not found in any source\n", json_string_value(json_object_get(p, "name")));
			continue;
		}
		printf("%s: %s (%s)\n", json_string_value(json_object_get(p, "name")),
			json_string_value(json_object_get(p, "source")),
			json_string_value(json_object_get(p, "page_url")));
		json_array_foreach(files, k, f) {
			const char *rp = json_string_value(json_object_get(f, "requires_python"));
			printf("  %s", json_string_value(json_object_get(f, "filename")));
			if (json_is_string(json_object_get(f, "sha256")))
				printf(" sha256=%.12s", json_string_value(json_object_get(f, "sha256")));
			if (rp)
				printf(" requires-python=%s", rp);
			if (json_is_true(json_object_get(f, "yanked"))) {
				const char *why = json_string_value(json_object_get(f, "yanked_reason"));
				printf(" yanked%s%s", why ? ": " : "", why ? why : "");
			}
			if (json_is_true(json_object_get(f, "has_metadata")))
				printf(" metadata");
			printf("\n");
		}
		if ((md = json_object_get(p, "metadata")) && json_is_object(md)) {
			json_t *r;
			size_t j;
			printf("  METADATA of %s:\n", json_string_value(json_object_get(md, "file")));
			if (json_object_get(md, "error")) {
				printf("    error: %s\n", json_string_value(json_object_get(md, "error")));
				continue;
			}
			printf("    Name: %s\n    Version: %s\n",
				json_string_value(json_object_get(md, "name")),
				json_string_value(json_object_get(md, "version")));
			json_array_foreach(json_object_get(md, "requires_dist"), j, r)
				printf("    Requires-Dist: %s\n", json_string_value(r));
		}
	}
}

static int cli_debug_index(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	enum { O_INDEX = 1, O_SOURCE, O_SUPPL, O_EXPLICIT, O_FL, O_CACHE, O_OFFLINE, O_MERGE,
		O_ONLY, O_META, O_TIMEOUT, O_RETRIES, O_BASE, O_PAR, O_STATS, O_MAXPAGE, O_MAXMETA,
		O_REFRESH };
	static const struct option opts[] = {
		{ "index-url", required_argument, NULL, O_INDEX },
		{ "source", required_argument, NULL, O_SOURCE },
		{ "supplemental", required_argument, NULL, O_SUPPL },
		{ "explicit", required_argument, NULL, O_EXPLICIT },
		{ "find-links", required_argument, NULL, O_FL },
		{ "cache-dir", required_argument, NULL, O_CACHE },
		{ "offline", no_argument, NULL, O_OFFLINE },
		{ "merge-sources", no_argument, NULL, O_MERGE },
		{ "only-source", required_argument, NULL, O_ONLY },
		{ "metadata", no_argument, NULL, O_META },
		{ "timeout-ms", required_argument, NULL, O_TIMEOUT },
		{ "retries", required_argument, NULL, O_RETRIES },
		{ "retry-base-ms", required_argument, NULL, O_BASE },
		{ "max-parallel", required_argument, NULL, O_PAR },
		{ "stats", no_argument, NULL, O_STATS },
		{ "max-page-bytes", required_argument, NULL, O_MAXPAGE },
		{ "max-metadata-bytes", required_argument, NULL, O_MAXMETA },
		{ "refresh", no_argument, NULL, O_REFRESH },
		{ NULL, 0, NULL, 0 },
	};
	dix_t d;
	gpuenv_index_opts_t o;
	const char *only = NULL;
	bool meta = false, stats = false, have_default = false;
	int c, st, r;

	memset(&d, 0, sizeof(d));
	memset(&o, 0, sizeof(o));
	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		char *end = NULL;
		unsigned long v = 0;
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == O_TIMEOUT || c == O_RETRIES || c == O_BASE || c == O_PAR || c == O_MAXPAGE ||
			c == O_MAXMETA) {
			v = strtoul(optarg, &end, 10);
			if (!optarg[0] || *end || v > 100000000)
				return cli_usage_error(cli, verb, "%s: --%s takes a number, not '%s'",
					verb->name, opts[c - 1].name, optarg);
		}
		switch (c) {
		case O_INDEX:
			r = add_src(cli, verb, &d, optarg, GPUENV_SOURCE_DEFAULT, false, false);
			have_default = true;
			break;
		case O_SOURCE: r = add_src(cli, verb, &d, optarg, GPUENV_SOURCE_PRIMARY, false, true); break;
		case O_SUPPL: r = add_src(cli, verb, &d, optarg, GPUENV_SOURCE_SUPPLEMENTAL, false, true); break;
		case O_EXPLICIT: r = add_src(cli, verb, &d, optarg, GPUENV_SOURCE_EXPLICIT, false, true); break;
		case O_FL: r = add_src(cli, verb, &d, optarg, GPUENV_SOURCE_PRIMARY, true, false); break;
		case O_CACHE: o.cache_dir = optarg; r = 0; break;
		case O_OFFLINE: o.offline = true; r = 0; break;
		case O_REFRESH: o.refresh = true; r = 0; break;
		case O_MERGE: o.merge_sources = true; r = 0; break;
		case O_ONLY: only = optarg; r = 0; break;
		case O_META: meta = true; r = 0; break;
		case O_TIMEOUT: o.timeout_ms = (unsigned)v; r = 0; break;
		case O_RETRIES: o.retries = (unsigned)v; r = 0; break;
		case O_BASE: o.retry_base_ms = (unsigned)v; r = 0; break;
		case O_PAR: o.max_parallel = (unsigned)v; r = 0; break;
		case O_STATS: stats = true; r = 0; break;
		case O_MAXPAGE: o.max_page_bytes = v; r = 0; break;
		case O_MAXMETA: o.max_metadata_bytes = v; r = 0; break;
		default: r = 0; break;
		}
		if (r)
			return r;
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no project NAME given", verb->name);
	if (!have_default && !d.nsrc)
		add_src(cli, verb, &d, "https://pypi.org/simple/", GPUENV_SOURCE_DEFAULT, false, false);
	o.sources = d.src;
	o.nsources = d.nsrc;

	size_t n = (size_t)(argc - optind);
	const char **names = calloc(n, sizeof(*names)), **onlys = calloc(n, sizeof(*onlys));
	const gpuenv_index_project_t **projects = calloc(n, sizeof(*projects));
	const gpuenv_index_file_t **chosen = calloc(n, sizeof(*chosen));
	gpuenv_str_t *mds = calloc(n, sizeof(*mds));
	gpuenv_index_t *ix = NULL;
	gpuenv_arena_t arena;
	json_t *out = NULL, *arr;
	int status = CLI_EXIT_OK;

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (!names || !onlys || !projects || !chosen || !mds) {
		status = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		names[i] = argv[optind + (int)i];
		onlys[i] = only;
	}
	if (gpuenv_index_open(&cli->ctx, &o, &ix) ||
		gpuenv_index_projects(ix, &cli->ctx, names, onlys, n, projects)) {
		status = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	size_t nmeta = 0;
	const gpuenv_index_file_t **want = calloc(n, sizeof(*want));
	if (!want) {
		status = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto done;
	}
	for (size_t i = 0; meta && i < n; i++)
		if (projects[i] && (chosen[i] = newest_wheel(&cli->ctx, &arena, projects[i])))
			want[nmeta++] = chosen[i];
	gpuenv_str_t *got = calloc(nmeta ? nmeta : 1, sizeof(*got));
	if (!got || (nmeta && gpuenv_index_metadata(ix, &cli->ctx, want, nmeta, got))) {
		free(want);
		free(got);
		status = got ? cli_report(cli, CLI_EXIT_CANNOT) : cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		goto done;
	}
	for (size_t i = 0, k = 0; i < n; i++)
		if (chosen[i])
			mds[i] = got[k++];
	free(want);
	free(got);

	out = json_object();
	arr = json_array();
	json_object_set_new(out, "projects", arr);
	for (size_t i = 0; i < n; i++) {
		const gpuenv_index_project_t *p = projects[i];
		json_t *po = json_object(), *files;
		json_array_append_new(arr, po);
		json_object_set_new(po, "name", json_string(names[i]));
		if (!p) {
			json_object_set_new(po, "source", json_null());
			json_object_set_new(po, "page_url", json_null());
			json_object_set_new(po, "files", json_null());
			status = CLI_EXIT_FAIL;
			continue;
		}
		json_object_set_new(po, "name", json_string(p->name));
		json_object_set_new(po, "source", json_string(p->source ? p->source->name : ""));
		json_object_set_new(po, "page_url", cli_json_text(cli, p->page_url, strlen(p->page_url)));
		files = json_array();
		for (size_t k = 0; k < p->nfiles; k++)
			json_array_append_new(files, jfile(cli, &p->files[k]));
		json_object_set_new(po, "files", files);
		if (meta)
			json_object_set_new(po, "metadata", chosen[i] ? jmetadata(cli, &arena, chosen[i],
									     mds[i], &status)
								    : json_null());
	}
	gpuenv_index_stats_t s;
	gpuenv_index_get_stats(ix, &s);
	json_object_set_new(out, "stats", json_pack("{s:I, s:I, s:I, s:I, s:I}",
		"requests", (json_int_t)s.requests, "cache_hits", (json_int_t)s.cache_hits,
		"revalidated", (json_int_t)s.revalidated, "not_modified", (json_int_t)s.not_modified,
		"bytes", (json_int_t)s.bytes));
	if (cli->json) {
		if (cli_print_json(cli, out) != CLI_EXIT_OK)
			status = CLI_EXIT_CANNOT;
		out = NULL;
	} else {
		print_text(cli, arr);
		if (stats)
			fprintf(stderr, "requests %zu, cache hits %zu, revalidated %zu, not modified %zu, "
					"bytes %llu\n", s.requests, s.cache_hits, s.revalidated, s.not_modified,
				(unsigned long long)s.bytes);
	}
done:
	if (out)
		cli_json_drop(out);
	gpuenv_index_close(ix);
	gpuenv_arena_free(&arena);
	free(names);
	free(onlys);
	free(projects);
	free(chosen);
	free(mds);
	return status;
}

const struct cli_verb cli_verb_debug_index = {
	.name = "index",
	.run = cli_debug_index,
	.summary = "the files an index offers for projects (and their METADATA)",
	.usage = "gpuenv debug index [OPTIONS] NAME...",
	.help = "sources (asked by priority: --source in order, then --index-url, then\n"
		"--supplemental; the first that has a project is the only one used):\n"
		"  --index-url URL        the default index (replaces PyPI); again: more default\n"
		"                         indexes (\"index-2\", ...), asked in order\n"
		"  --source NAME=URL      a primary index\n"
		"  --supplemental NAME=URL  asked when no other source has the project\n"
		"  --explicit NAME=URL    used only with --only-source NAME\n"
		"  --find-links DIR|URL   a folder of wheels / sdists, or a page of links\n"
		"  --only-source NAME     ask only this source\n"
		"  --merge-sources        merge every source's files (pip's --extra-index-url)\n"
		"fetching:\n"
		"  --cache-dir DIR        the HTTP cache (default $XDG_CACHE_HOME/gpuenv)\n"
		"  --offline              the cache only; a miss is an error\n"
		"  --refresh              revalidate every cached page, even a fresh one\n"
		"  --timeout-ms N         per transfer (default 30000)\n"
		"  --retries N            for transient failures (default 3)\n"
		"  --retry-base-ms N      first backoff delay (default 250)\n"
		"  --max-parallel N       transfers at once (default 16)\n"
		"  --max-page-bytes N     cap of a page (default 64 MiB)\n"
		"  --max-metadata-bytes N cap of METADATA and a central directory (default 16 MiB)\n"
		"output:\n"
		"  --metadata             the newest wheel's METADATA Name, Version, Requires-Dist\n"
		"  --stats                request counters on stderr (always in --json)\n"
		"exit status 1 when a project is in no source\n",
};
