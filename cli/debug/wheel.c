/* debug subcommands over the wheel and metadata modules:
 *   wheel-name  a wheel file name as JSON (and its rank for a target)
 *   wheel-tags  the ordered tags a target supports
 *   metadata    a dist-info folder, or one METADATA / WHEEL / RECORD /
 *               entry_points.txt file, as JSON */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/metadata.h"
#include "gpuenv/wheel.h"

/* A JSON string from bytes that should be UTF-8; malformed bytes become
 * U+FFFD so odd input never makes the JSON invalid. */
static json_t *jstr(gpuenv_str_t s)
{
	json_t *j;
	char *tmp;
	size_t o = 0;

	if (!s.ptr)
		return json_string("");
	j = json_stringn(s.ptr, s.len);
	if (j)
		return j;
	tmp = malloc(s.len * 3 + 1);
	if (!tmp)
		return NULL;
	for (size_t i = 0; i < s.len;) {
		unsigned char c = (unsigned char)s.ptr[i];
		size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		bool ok = l && i + l <= s.len && c != 0;
		for (size_t k = 1; ok && k < l; k++)
			ok = ((unsigned char)s.ptr[i + k] & 0xc0) == 0x80;
		if (ok && l > 1) {
			json_t *probe = json_stringn(s.ptr + i, l);
			ok = probe != NULL;
			json_decref(probe);
		}
		if (ok) {
			memcpy(tmp + o, s.ptr + i, l);
			o += l;
			i += l;
		} else {
			memcpy(tmp + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	j = json_stringn(tmp, o);
	free(tmp);
	return j;
}

static json_t *jbuild(bool has, uint64_t number, gpuenv_str_t suffix)
{
	if (!has)
		return json_null();
	return json_pack("[I, o]", (json_int_t)number, jstr(suffix));
}

static json_t *jlist(const gpuenv_md_list_t *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, jstr(l->items[i]));
	return a;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Tags as sorted "i-a-p" strings. */
static json_t *jtags(gpuenv_ctx_t *ctx, const gpuenv_tag_t *tags, size_t n)
{
	json_t *a = json_array();
	char **s = calloc(n ? n : 1, sizeof(*s));
	gpuenv_buf_t b;

	if (!a || !s) {
		free(s);
		json_decref(a);
		return NULL;
	}
	gpuenv_buf_init(&b, ctx, 0);
	for (size_t i = 0; i < n; i++) {
		gpuenv_buf_reset(&b);
		if (gpuenv_tag_format(&tags[i], &b) == 0)
			s[i] = gpuenv_strndup(ctx, b.data, b.len);
	}
	qsort(s, n, sizeof(*s), cmp_cstr);
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(a, jstr(gpuenv_str(s[i] ? s[i] : "")));
		gpuenv_free(ctx, s[i]);
	}
	gpuenv_buf_free(&b);
	free(s);
	return a;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int cli_debug_wheel_name(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "validate-order", no_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *target = NULL;
	unsigned flags = 0;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 't')
			target = optarg;
		else if (c == 'o')
			flags |= GPUENV_TAG_VALIDATE_ORDER;
	}
	if (optind != argc - 1)
		return cli_usage_error(cli, verb, "%s: give one FILE.whl", verb->name);

	gpuenv_arena_t arena;
	gpuenv_wheel_name_t w;
	gpuenv_buf_t vb;
	int status = CLI_EXIT_OK;

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	gpuenv_buf_init(&vb, &cli->ctx, 0);
	if (gpuenv_wheel_name_parse(&cli->ctx, &arena, gpuenv_str(base_name(argv[optind])), flags,
		    &w)) {
		status = cli_report(cli, CLI_EXIT_FAIL);
		goto out;
	}
	gpuenv_version_format(&w.version, &vb);
	json_t *o = json_object();
	json_object_set_new(o, "name", jstr(w.normalized));
	json_object_set_new(o, "version", jstr(gpuenv_str_n(vb.data ? vb.data : "", vb.len)));
	json_object_set_new(o, "build", jbuild(w.has_build, w.build_number, w.build_suffix));
	json_object_set_new(o, "tags", jtags(&cli->ctx, w.tags, w.ntags));
	if (target) {
		gpuenv_wheel_target_t t;
		gpuenv_tagset_t *set;
		if (gpuenv_wheel_target_parse(&cli->ctx, gpuenv_str(target), &t) ||
			gpuenv_tagset_build(&cli->ctx, &t, &set)) {
			json_decref(o);
			status = cli_report(cli, CLI_EXIT_USAGE);
			goto out;
		}
		long rank = gpuenv_tagset_rank_wheel(set, &w);
		json_object_set_new(o, "compatible", json_boolean(rank >= 0));
		json_object_set_new(o, "rank", rank >= 0 ? json_integer(rank) : json_null());
		gpuenv_tagset_free(set);
		if (rank < 0)
			status = CLI_EXIT_FAIL;
	}
	if (cli_print_json(cli, o) != CLI_EXIT_OK)
		status = CLI_EXIT_FAIL;
out:
	gpuenv_buf_free(&vb);
	gpuenv_arena_free(&arena);
	return status;
}

static int cli_debug_wheel_tags(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "linux-first", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	bool linux_first = false;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'l')
			linux_first = true;
	}
	if (optind != argc - 1)
		return cli_usage_error(cli, verb, "%s: give one TARGET", verb->name);

	gpuenv_wheel_target_t t;
	gpuenv_tagset_t *set;
	if (gpuenv_wheel_target_parse(&cli->ctx, gpuenv_str(argv[optind]), &t))
		return cli_report(cli, CLI_EXIT_USAGE);
	t.linux_first = linux_first;
	if (gpuenv_tagset_build(&cli->ctx, &t, &set))
		return cli_report(cli, CLI_EXIT_FAIL);
	int status = CLI_EXIT_OK;
	if (cli->json) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < gpuenv_tagset_count(set); i++)
			json_array_append_new(a, json_string(gpuenv_tagset_get(set, i)));
		status = cli_print_json(cli, a);
	} else {
		for (size_t i = 0; i < gpuenv_tagset_count(set); i++)
			puts(gpuenv_tagset_get(set, i));
	}
	gpuenv_tagset_free(set);
	return status;
}

/* ---- metadata ---- */

static json_t *jformat_req(gpuenv_ctx_t *ctx, const gpuenv_md_requirement_t *q)
{
	json_t *o = json_object();
	gpuenv_buf_t b;

	json_object_set_new(o, "text", jstr(q->text));
	json_object_set_new(o, "line", json_integer(q->line));
	if (!q->valid) {
		json_object_set_new(o, "valid", json_false());
		return o;
	}
	gpuenv_buf_init(&b, ctx, 0);
	json_object_set_new(o, "name", jstr(q->req.name));
	json_t *ex = json_array();
	for (size_t i = 0; i < q->req.nextras; i++)
		json_array_append_new(ex, jstr(q->req.extras[i]));
	json_object_set_new(o, "extras", ex);
	if (gpuenv_specset_format(&q->req.spec, &b) == 0)
		json_object_set_new(o, "specifier", jstr(gpuenv_str_n(b.data ? b.data : "", b.len)));
	if (q->req.url.len)
		json_object_set_new(o, "url", jstr(q->req.url));
	gpuenv_buf_reset(&b);
	if (q->req.marker && gpuenv_marker_format(q->req.marker, &b) == 0)
		json_object_set_new(o, "marker", jstr(gpuenv_str_n(b.data ? b.data : "", b.len)));
	else
		json_object_set_new(o, "marker", json_null());
	gpuenv_buf_free(&b);
	return o;
}

static void set_opt(json_t *o, const char *key, gpuenv_str_t v)
{
	if (v.ptr)
		json_object_set_new(o, key, jstr(v));
}

static json_t *jmetadata(gpuenv_ctx_t *ctx, const gpuenv_metadata_t *md)
{
	json_t *o = json_object();
	gpuenv_buf_t b;

	gpuenv_buf_init(&b, ctx, 0);
	set_opt(o, "metadata_version", md->metadata_version);
	json_object_set_new(o, "name", jstr(md->name));
	json_object_set_new(o, "version", jstr(md->version_text));
	if (md->version_valid && gpuenv_version_format(&md->version, &b) == 0)
		json_object_set_new(o, "version_normalized",
			jstr(gpuenv_str_n(b.data ? b.data : "", b.len)));
	else
		json_object_set_new(o, "version_normalized", json_null());
	set_opt(o, "summary", md->summary);
	set_opt(o, "keywords", md->keywords);
	set_opt(o, "home_page", md->home_page);
	set_opt(o, "download_url", md->download_url);
	set_opt(o, "author", md->author);
	set_opt(o, "author_email", md->author_email);
	set_opt(o, "maintainer", md->maintainer);
	set_opt(o, "maintainer_email", md->maintainer_email);
	set_opt(o, "license", md->license);
	set_opt(o, "license_expression", md->license_expression);
	set_opt(o, "description_content_type", md->description_content_type);
	json_object_set_new(o, "description_bytes", json_integer((json_int_t)md->description.len));
	if (md->requires_python_text.ptr) {
		json_object_set_new(o, "requires_python", jstr(md->requires_python_text));
		json_object_set_new(o, "requires_python_valid", json_boolean(md->requires_python_valid));
	}
	json_t *rd = json_array();
	for (size_t i = 0; i < md->nrequires_dist; i++)
		json_array_append_new(rd, jformat_req(ctx, &md->requires_dist[i]));
	json_object_set_new(o, "requires_dist", rd);
	json_object_set_new(o, "provides_extra", jlist(&md->provides_extra));
	json_t *urls = json_array();
	for (size_t i = 0; i < md->nproject_urls; i++)
		json_array_append_new(urls, json_pack("{s:o, s:o}", "label",
			jstr(md->project_urls[i].label), "url", jstr(md->project_urls[i].url)));
	json_object_set_new(o, "project_urls", urls);
	json_object_set_new(o, "classifiers", jlist(&md->classifiers));
	json_object_set_new(o, "platforms", jlist(&md->platforms));
	json_object_set_new(o, "supported_platforms", jlist(&md->supported_platforms));
	json_object_set_new(o, "license_files", jlist(&md->license_files));
	json_object_set_new(o, "dynamic", jlist(&md->dynamic));
	json_object_set_new(o, "requires_external", jlist(&md->requires_external));
	json_object_set_new(o, "provides_dist", jlist(&md->provides_dist));
	json_object_set_new(o, "obsoletes_dist", jlist(&md->obsoletes_dist));
	json_object_set_new(o, "import_names", jlist(&md->import_names));
	json_object_set_new(o, "import_namespaces", jlist(&md->import_namespaces));
	json_object_set_new(o, "fields", json_integer((json_int_t)md->nfields));
	json_object_set_new(o, "warnings", json_integer(md->nwarnings));
	gpuenv_buf_free(&b);
	return o;
}

static json_t *jwheel(gpuenv_ctx_t *ctx, const gpuenv_wheelfile_t *w)
{
	json_t *o = json_object();

	json_object_set_new(o, "wheel_version", jstr(w->wheel_version));
	set_opt(o, "generator", w->generator);
	json_object_set_new(o, "root_is_purelib",
		w->has_root_is_purelib ? json_boolean(w->root_is_purelib) : json_null());
	json_object_set_new(o, "tags", jtags(ctx, w->tags, w->ntags));
	json_object_set_new(o, "build", jbuild(w->has_build, w->build_number, w->build_suffix));
	return o;
}

static json_t *jrecord(gpuenv_ctx_t *ctx, const gpuenv_record_t *r)
{
	json_t *a = json_array();
	gpuenv_buf_t b;

	gpuenv_buf_init(&b, ctx, 0);
	for (size_t i = 0; i < r->n; i++) {
		const gpuenv_record_entry_t *e = &r->entries[i];
		json_t *o = json_object();
		json_object_set_new(o, "path", jstr(e->path));
		if (e->hash_algo.len) {
			char hex[2 * GPUENV_DIGEST_MAX + 1];
			gpuenv_hex(e->digest, e->digest_len, hex);
			json_object_set_new(o, "algorithm", jstr(e->hash_algo));
			json_object_set_new(o, "digest_hex", json_string(hex));
		} else {
			json_object_set_new(o, "algorithm", json_null());
		}
		json_object_set_new(o, "size",
			e->has_size ? json_integer((json_int_t)e->size) : json_null());
		json_array_append_new(a, o);
	}
	gpuenv_buf_free(&b);
	return a;
}

static json_t *jentry_points(const gpuenv_entry_points_t *ep)
{
	json_t *a = json_array();

	for (size_t i = 0; i < ep->n; i++) {
		const gpuenv_entry_point_t *e = &ep->items[i];
		json_t *o = json_object();
		json_object_set_new(o, "group", jstr(e->group));
		json_object_set_new(o, "name", jstr(e->name));
		json_object_set_new(o, "value", jstr(e->value));
		if (e->valid) {
			json_object_set_new(o, "module", jstr(e->module));
			json_object_set_new(o, "attr", e->attr.len ? jstr(e->attr) : json_null());
			json_t *ex = json_array();
			for (size_t k = 0; k < e->nextras; k++)
				json_array_append_new(ex, jstr(e->extras[k]));
			json_object_set_new(o, "extras", ex);
		}
		json_array_append_new(a, o);
	}
	return a;
}

static int cli_debug_metadata(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lenient-version", no_argument, NULL, 'L' },
		{ "validate-record", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned flags = 0;
	bool validate = false;
	int c, st, r, status = CLI_EXIT_OK;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'L')
			flags |= GPUENV_METADATA_LENIENT_VERSION;
		else if (c == 'R')
			validate = true;
	}
	if (optind != argc - 1)
		return cli_usage_error(cli, verb, "%s: give one PATH", verb->name);

	const char *path = argv[optind];
	struct stat sb;
	gpuenv_arena_t arena;
	json_t *o = NULL;

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		gpuenv_distinfo_t di;
		if ((r = gpuenv_distinfo_load(&cli->ctx, &arena, path, flags, &di)) != 0) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		if (validate && di.has_record) {
			char rp[4096];
			snprintf(rp, sizeof(rp), "%s/RECORD", path);
			if (gpuenv_record_validate(&cli->ctx, rp, &di.record)) {
				status = cli_report(cli, CLI_EXIT_FAIL);
				goto out;
			}
		}
		o = json_object();
		json_object_set_new(o, "metadata", jmetadata(&cli->ctx, &di.metadata));
		json_object_set_new(o, "wheel", di.has_wheel ? jwheel(&cli->ctx, &di.wheel) : json_null());
		json_object_set_new(o, "record",
			di.has_record ? jrecord(&cli->ctx, &di.record) : json_null());
		json_object_set_new(o, "entry_points",
			di.has_entry_points ? jentry_points(&di.entry_points) : json_null());
	} else {
		gpuenv_buf_t buf;
		const char *base = base_name(path);
		gpuenv_buf_init(&buf, &cli->ctx, 0);
		if (cli_read_input(cli, path, GPUENV_RECORD_MAX, &buf)) {
			gpuenv_buf_free(&buf);
			status = CLI_EXIT_FAIL;
			goto out;
		}
		gpuenv_str_t text = gpuenv_str_n(buf.data ? buf.data : "", buf.len);
		if (strcmp(base, "WHEEL") == 0) {
			gpuenv_wheelfile_t w;
			if ((r = gpuenv_wheelfile_parse(&cli->ctx, &arena, path, text, &w)) == 0)
				o = json_pack("{s:o}", "wheel", jwheel(&cli->ctx, &w));
		} else if (strcmp(base, "RECORD") == 0) {
			gpuenv_record_t rec;
			r = gpuenv_record_parse(&cli->ctx, &arena, path, text, &rec);
			if (r == 0 && validate)
				r = gpuenv_record_validate(&cli->ctx, path, &rec);
			if (r == 0)
				o = json_pack("{s:o}", "record", jrecord(&cli->ctx, &rec));
		} else if (strcmp(base, "entry_points.txt") == 0) {
			gpuenv_entry_points_t ep;
			if ((r = gpuenv_entry_points_parse(&cli->ctx, &arena, path, text, &ep)) == 0)
				o = json_pack("{s:o}", "entry_points", jentry_points(&ep));
		} else {
			gpuenv_metadata_t md;
			if ((r = gpuenv_metadata_parse(&cli->ctx, &arena, path, text, flags, &md)) == 0)
				o = json_pack("{s:o}", "metadata", jmetadata(&cli->ctx, &md));
		}
		gpuenv_buf_free(&buf);
		if (r) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
	}
	status = cli_print_json(cli, o);
out:
	gpuenv_arena_free(&arena);
	return status;
}

const struct cli_verb cli_verb_debug_wheel_name = {
	.name = "wheel-name",
	.run = cli_debug_wheel_name,
	.summary = "parse a wheel file name and print its name, version, build and tags as JSON",
	.usage = "gpuenv debug wheel-name [--target TARGET] [--validate-order] FILE.whl",
	.help = "  --target TARGET    also say whether a target (cp312-manylinux_2_35_x86_64)\n"
		"                     runs the wheel and its rank there (0 = best tag; exit 1\n"
		"                     when incompatible)\n"
		"  --validate-order   require sorted compressed tag sets (PEP 425)\n",
};

const struct cli_verb cli_verb_debug_wheel_tags = {
	.name = "wheel-tags",
	.run = cli_debug_wheel_tags,
	.summary = "list the wheel tags a target supports, best first, as pip would on that interpreter",
	.usage = "gpuenv debug wheel-tags [--linux-first] TARGET",
	.help = "  TARGET             PYTHON-PLATFORM: cp312-manylinux_2_35_x86_64,\n"
		"                     cp313t-musllinux_1_2_aarch64, pp310-macosx_14_0_arm64,\n"
		"                     cp311-win_amd64, cp312-linux_x86_64 (no manylinux)\n"
		"  --linux-first      linux_ARCH before manylinux (packaging >= 26.3's order)\n",
};

const struct cli_verb cli_verb_debug_metadata = {
	.name = "metadata",
	.run = cli_debug_metadata,
	.summary = "parse a dist-info folder (METADATA, WHEEL, RECORD, entry_points.txt) or one METADATA file and print JSON",
	.usage = "gpuenv debug metadata [--lenient-version] [--validate-record] PATH",
	.help = "  PATH               a .dist-info folder, or a METADATA (PKG-INFO), WHEEL, RECORD\n"
		"                     or entry_points.txt file (told apart by its name)\n"
		"  --lenient-version  accept a Version that is not PEP 440\n"
		"  --validate-record  also check RECORD as a wheel's (safe paths, hashes)\n",
};
