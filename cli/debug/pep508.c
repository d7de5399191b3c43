/* debug subcommands for PEP 508: marker (evaluate) and requirement (parse). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep508.h"

#define ENV_FILE_MAX ((size_t)1 << 20)

/* Report ctx->err for the command-line argument text: "<arg>:L:C: msg",
 * then the offending line with a caret under the column. */
static int report_arg(struct cli *cli, const char *text)
{
	const gpuenv_error_t *e = &cli->ctx.err;
	const char *line = text, *end;

	if (e->line) {
		snprintf(cli->ctx.err.file, sizeof(cli->ctx.err.file), "<arg>");
		for (unsigned l = 1; l < e->line && strchr(line, '\n'); l++)
			line = strchr(line, '\n') + 1;
	}
	cli_report(cli, CLI_EXIT_FAIL);
	if (!e->line || !e->col)
		return CLI_EXIT_FAIL;
	end = strchr(line, '\n');
	if (!end)
		end = line + strlen(line);
	fprintf(stderr, "    %.*s\n    ", (int)(end - line), line);
	/* keep tabs so the caret lines up under tab-indented text */
	for (unsigned i = 0; i + 1 < e->col && line + i < end; i++)
		fputc(line[i] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
	return CLI_EXIT_FAIL;
}

/* A JSON string from bytes that may not be UTF-8: invalid bytes become
 * U+FFFD, so the output is always valid JSON. */
static json_t *json_bytes(gpuenv_str_t s)
{
	json_t *j = json_stringn(s.len ? s.ptr : "", s.len);
	char *out;
	size_t n = 0;

	if (j)
		return j;
	out = malloc(s.len * 3 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < s.len;) {
		unsigned char c = (unsigned char)s.ptr[i];
		size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		json_t *t = NULL;
		if (k && i + k <= s.len && (t = json_stringn(s.ptr + i, k))) {
			json_decref(t);
			memcpy(out + n, s.ptr + i, k);
			n += k;
			i += k;
		} else {
			memcpy(out + n, "\xef\xbf\xbd", 3);
			n += 3;
			i++;
		}
	}
	j = json_stringn(out, n);
	free(out);
	return j;
}

/* ---- marker ---------------------------------------------------------------- */

struct env_file {
	json_t *root;		/* keeps the strings alive */
	const char **lists[2];	/* extras, dependency_groups */
};

static int load_env(struct cli *cli, const char *path, gpuenv_marker_env_t *env,
	struct env_file *ef)
{
	gpuenv_buf_t buf;
	json_error_t jerr;
	const char *key;
	json_t *v;
	int nlists = 0;

	gpuenv_buf_init(&buf, &cli->ctx, ENV_FILE_MAX);
	if (cli_read_input(cli, path, ENV_FILE_MAX, &buf))
		return CLI_EXIT_FAIL;
	ef->root = json_loadb(buf.data ? buf.data : "", buf.len, 0, &jerr);
	gpuenv_buf_free(&buf);
	if (!ef->root)
		return cli_error(cli, CLI_EXIT_FAIL, "%s:%d:%d: %s", path, jerr.line, jerr.column,
			jerr.text);
	if (!json_is_object(ef->root))
		return cli_error(cli, CLI_EXIT_FAIL,
			"%s: the environment must be a JSON object of marker variables", path);
	json_object_foreach(ef->root, key, v) {
		int r;
		if (json_is_array(v)) {
			size_t n = json_array_size(v);
			const char **list;
			if (nlists == 2 || !(list = calloc(n + 1, sizeof(*list))))
				r = GPUENV_ETYPE;
			else {
				ef->lists[nlists++] = list;
				for (size_t i = 0; i < n; i++)
					if (!(list[i] = json_string_value(json_array_get(v, i))))
						return cli_error(cli, CLI_EXIT_FAIL,
							"%s: '%s' must be an array of strings", path, key);
				r = gpuenv_marker_env_set_list(env, key, list);
			}
		} else if (json_is_string(v) || json_is_null(v)) {
			r = gpuenv_marker_env_set(env, key, json_string_value(v));
		} else {
			r = GPUENV_ETYPE;
		}
		if (r == GPUENV_ENOTFOUND) {
			const char *names[32];
			size_t n = 0;
			while (n < 32 && (names[n] = gpuenv_marker_var_name(n)))
				n++;
			const char *s = cli_suggest(key, names, n);
			return cli_error(cli, CLI_EXIT_FAIL, "%s: '%s' is not a marker variable%s%s%s",
				path, key, s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
		}
		if (r)
			return cli_error(cli, CLI_EXIT_FAIL, "%s: '%s' must be %s", path, key,
				strcmp(key, "extras") == 0 || strcmp(key, "dependency_groups") == 0
					? "an array of strings"
					: "a string");
	}
	return 0;
}

static int cli_debug_marker(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "env", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	struct env_file ef = { 0 };
	gpuenv_marker_env_t env;
	const char *env_path = NULL, *text;
	gpuenv_marker_t *m;
	gpuenv_arena_t ar;
	bool result;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'e')
			env_path = optarg;
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no MARKER given", verb->name);
	if (optind + 1 < argc)
		return cli_usage_error(cli, verb, "%s: one MARKER only (quote it)", verb->name);
	text = argv[optind];

	gpuenv_marker_env_default(&env);
	gpuenv_arena_init(&ar, &cli->ctx, 0);
	if (env_path && (st = load_env(cli, env_path, &env, &ef)))
		goto out;
	if (gpuenv_marker_parse(&cli->ctx, &ar, gpuenv_str(text), &m)) {
		st = report_arg(cli, text);
		goto out;
	}
	if (gpuenv_marker_eval(&cli->ctx, m, &env, &result)) {
		st = report_arg(cli, text);
		goto out;
	}
	if (cli->json) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
		if (gpuenv_marker_format(m, &b)) {
			gpuenv_buf_free(&b);
			st = cli_error(cli, CLI_EXIT_FAIL, "out of memory");
			goto out;
		}
		st = cli_print_json(cli, json_pack("{s:o, s:b}", "marker",
			json_bytes(gpuenv_str_n(b.data, b.len)), "result", result));
		gpuenv_buf_free(&b);
	} else {
		puts(result ? "true" : "false");
		st = CLI_EXIT_OK;
	}
	if (st == CLI_EXIT_OK && !result)
		st = CLI_EXIT_FAIL; /* a negative answer, for shell conditions */
out:
	gpuenv_arena_free(&ar);
	free(ef.lists[0]);
	free(ef.lists[1]);
	json_decref(ef.root);
	return st;
}

/* ---- requirement ------------------------------------------------------------ */

static int cmp_extra(const void *a, const void *b)
{
	return gpuenv_str_cmp(*(const gpuenv_str_t *)a, *(const gpuenv_str_t *)b);
}

static int cli_debug_requirement(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	gpuenv_requirement_t req;
	gpuenv_arena_t ar;
	gpuenv_buf_t b;
	gpuenv_str_t *ex = NULL;
	json_t *out, *extras;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", NULL, &st)) != -1)
		if (c == CLI_OPT_EXIT)
			return st;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no REQ given", verb->name);
	if (optind + 1 < argc)
		return cli_usage_error(cli, verb, "%s: one REQ only (quote it)", verb->name);

	gpuenv_arena_init(&ar, &cli->ctx, 0);
	gpuenv_buf_init(&b, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	if (gpuenv_requirement_parse(&cli->ctx, &ar, gpuenv_str(argv[optind]), &req)) {
		st = report_arg(cli, argv[optind]);
		goto done;
	}
	/* extras as packaging holds them: a set, listed sorted */
	extras = json_array();
	if (req.nextras && (ex = calloc(req.nextras, sizeof(*ex)))) {
		memcpy(ex, req.extras, req.nextras * sizeof(*ex));
		qsort(ex, req.nextras, sizeof(*ex), cmp_extra);
		for (size_t i = 0; i < req.nextras; i++)
			if (!i || !gpuenv_str_eq(ex[i], ex[i - 1]))
				json_array_append_new(extras, json_bytes(ex[i]));
	}
	out = json_object();
	json_object_set_new(out, "name", json_bytes(req.name));
	json_object_set_new(out, "extras", extras);
	if (req.spec.n && gpuenv_specset_format(&req.spec, &b) == 0)
		json_object_set_new(out, "specifier", json_bytes(gpuenv_str_n(b.data, b.len)));
	else
		json_object_set_new(out, "specifier", json_string(""));
	json_object_set_new(out, "url", req.url.len ? json_bytes(req.url) : json_null());
	gpuenv_buf_reset(&b);
	if (req.marker && gpuenv_marker_format(req.marker, &b) == 0)
		json_object_set_new(out, "marker", json_bytes(gpuenv_str_n(b.data, b.len)));
	else
		json_object_set_new(out, "marker", json_null());
	st = cli_print_json(cli, out);
done:
	free(ex);
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&ar);
	return st;
}

const struct cli_verb cli_verb_debug_marker = {
	.name = "marker",
	.run = cli_debug_marker,
	.summary = "evaluate a PEP 508 marker against an environment and print true or false",
	.usage = "gpuenv debug marker 'MARKER' [--env FILE.json]",
	.help = "  --env FILE.json    environment: a JSON object of marker variables\n"
		"                     (python_version, sys_platform, extra, ...)\n",
};

const struct cli_verb cli_verb_debug_requirement = {
	.name = "requirement",
	.run = cli_debug_requirement,
	.summary = "parse a PEP 508 requirement and print its name, extras, specifier, url and marker as JSON",
	.usage = "gpuenv debug requirement 'REQ'",
	.help = NULL,
};
