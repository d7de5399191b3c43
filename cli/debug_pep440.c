/* debug subcommands over the PEP 440 module: version-sort, specifier. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep440.h"

#define INPUT_MAX ((size_t)1 << 30)

/* A line of input: its text (without the '\n') and, when valid, its parse. */
struct line {
	gpuenv_str_t text;
	const gpuenv_version_t *v; /* NULL: not a valid version */
	size_t lineno;
};

/* Split buf into lines; a final line without '\n' counts, a final '\n' does
 * not start another line. */
static struct line *split_lines(struct cli *cli, const gpuenv_buf_t *buf, size_t *nout)
{
	size_t n = 0, k = 0;
	struct line *lines;

	for (size_t i = 0; i < buf->len; i++)
		n += buf->data[i] == '\n';
	if (buf->len && buf->data[buf->len - 1] != '\n')
		n++;
	lines = gpuenv_calloc(&cli->ctx, n ? n : 1, sizeof(*lines));
	if (!lines)
		return NULL;
	for (size_t pos = 0; pos < buf->len;) {
		const char *nl = memchr(buf->data + pos, '\n', buf->len - pos);
		size_t end = nl ? (size_t)(nl - buf->data) : buf->len;
		lines[k].text = gpuenv_str_n(buf->data + pos, end - pos);
		lines[k].lineno = k + 1;
		k++;
		pos = end + 1;
	}
	*nout = k;
	return lines;
}

/* The text of a bad line, with control bytes escaped, for messages. */
static void print_escaped(FILE *f, gpuenv_str_t s)
{
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c < 0x20 || c == 0x7f || c == '\\' || c == '\'')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

/* Stable bottom-up merge sort of a[0..n) by version, equal versions in
 * input order; tmp has room for n.  Returns the array holding the result
 * (a or tmp). */
static struct line *sort_lines(struct line *a, struct line *tmp, size_t n)
{
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			/* runs already in order (common in real lists) are copied */
			if (mid >= hi || gpuenv_version_cmp(a[mid - 1].v, a[mid].v) <= 0) {
				memcpy(tmp + lo, a + lo, (hi - lo) * sizeof(*a));
				continue;
			}
			while (i < mid && j < hi)
				tmp[k++] = gpuenv_version_cmp(a[j].v, a[i].v) < 0 ? a[j++] : a[i++];
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < hi)
				tmp[k++] = a[j++];
		}
		struct line *t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}

static int read_lines(struct cli *cli, gpuenv_buf_t *buf, gpuenv_arena_t *arena,
	struct line **lines, size_t *n, gpuenv_version_t **vs)
{
	int r;

	if ((r = cli_read_input(cli, "-", INPUT_MAX, buf)))
		return r;
	*lines = split_lines(cli, buf, n);
	if (!*lines)
		return cli_error(cli, CLI_EXIT_FAIL, "out of memory");
	*vs = gpuenv_calloc(&cli->ctx, *n ? *n : 1, sizeof(**vs));
	if (!*vs)
		return cli_error(cli, CLI_EXIT_FAIL, "out of memory");
	for (size_t i = 0; i < *n; i++) {
		r = gpuenv_version_parse(&cli->ctx, arena, (*lines)[i].text, &(*vs)[i]);
		if (r == 0)
			(*lines)[i].v = &(*vs)[i];
		else if (r != GPUENV_EVERSION)
			return cli_report(cli, CLI_EXIT_FAIL);
	}
	return 0;
}

int cli_debug_version_sort(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	gpuenv_buf_t in, out;
	gpuenv_arena_t arena;
	struct line *lines = NULL, *sorted = NULL, *tmp = NULL;
	gpuenv_version_t *vs = NULL;
	size_t n = 0, nvalid = 0, nbad = 0;
	int c, st, status = CLI_EXIT_OK;

	while ((c = cli_getopt(cli, verb, argc, argv, "", NULL, &st)) != -1)
		if (c == CLI_OPT_EXIT)
			return st;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: takes no arguments (versions come on stdin)",
			verb->name);

	gpuenv_buf_init(&in, &cli->ctx, INPUT_MAX);
	gpuenv_buf_init(&out, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if ((status = read_lines(cli, &in, &arena, &lines, &n, &vs)))
		goto done;

	sorted = gpuenv_calloc(&cli->ctx, n ? n : 1, sizeof(*sorted));
	tmp = gpuenv_calloc(&cli->ctx, n ? n : 1, sizeof(*tmp));
	if (!sorted || !tmp) {
		status = cli_error(cli, CLI_EXIT_FAIL, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		if (lines[i].v) {
			sorted[nvalid++] = lines[i];
			continue;
		}
		nbad++;
		fflush(stdout);
		fprintf(stderr, "<stdin>:%zu: invalid version '", lines[i].lineno);
		print_escaped(stderr, lines[i].text);
		fputs("'\n", stderr);
	}
	{
		struct line *a = sort_lines(sorted, tmp, nvalid);

		if (cli->json) {
			json_t *arr = json_array(), *bad = json_array(), *obj = json_object();
			for (size_t i = 0; i < nvalid; i++)
				json_array_append_new(arr, json_stringn(a[i].text.ptr, a[i].text.len));
			for (size_t i = 0; i < n; i++)
				if (!lines[i].v)
					json_array_append_new(bad,
						json_pack("{s:I,s:s%}", "line", (json_int_t)lines[i].lineno,
							"text", lines[i].text.ptr, lines[i].text.len));
			json_object_set_new(obj, "versions", arr);
			json_object_set_new(obj, "invalid", bad);
			if (cli_print_json(cli, obj))
				status = CLI_EXIT_FAIL;
		} else {
			for (size_t i = 0; i < nvalid && !status; i++)
				if (gpuenv_buf_append(&out, a[i].text.ptr, a[i].text.len) ||
					gpuenv_buf_putc(&out, '\n'))
					status = cli_error(cli, CLI_EXIT_FAIL, "out of memory");
			if (!status && out.len)
				fwrite(out.data, 1, out.len, stdout);
		}
	}
	if (!status && nbad)
		status = CLI_EXIT_FAIL;
done:
	gpuenv_free(&cli->ctx, tmp);
	gpuenv_free(&cli->ctx, sorted);
	gpuenv_free(&cli->ctx, vs);
	gpuenv_free(&cli->ctx, lines);
	gpuenv_arena_free(&arena);
	gpuenv_buf_free(&out);
	gpuenv_buf_free(&in);
	return status;
}

int cli_debug_specifier(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prereleases", no_argument, NULL, 'p' },
		{ "no-prereleases", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int pre = GPUENV_PRERELEASES_DEFAULT;
	gpuenv_buf_t in, out;
	gpuenv_arena_t arena;
	gpuenv_specset_t set;
	struct line *lines = NULL;
	gpuenv_version_t *vs = NULL;
	gpuenv_str_t *texts = NULL;
	const gpuenv_version_t **pv = NULL;
	size_t *idx = NULL, n = 0, m;
	const char *spec;
	int c, st, status = CLI_EXIT_OK;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		pre = c == 'p' ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_NO;
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no SPEC given", verb->name);
	spec = argv[optind++];

	gpuenv_buf_init(&in, &cli->ctx, INPUT_MAX);
	gpuenv_buf_init(&out, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (gpuenv_specset_parse(&cli->ctx, &arena, gpuenv_str(spec), &set)) {
		status = cli_report(cli, CLI_EXIT_FAIL);
		goto done;
	}

	if (optind >= argc || (optind + 1 == argc && strcmp(argv[optind], "-") == 0)) {
		/* versions on stdin, one a line */
		if ((status = read_lines(cli, &in, &arena, &lines, &n, &vs)))
			goto done;
	} else {
		n = (size_t)(argc - optind);
		lines = gpuenv_calloc(&cli->ctx, n, sizeof(*lines));
		vs = gpuenv_calloc(&cli->ctx, n, sizeof(*vs));
		if (!lines || !vs) {
			status = cli_error(cli, CLI_EXIT_FAIL, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < n; i++) {
			int r;
			lines[i].text = gpuenv_str(argv[optind + (int)i]);
			lines[i].lineno = i + 1;
			r = gpuenv_version_parse(&cli->ctx, &arena, lines[i].text, &vs[i]);
			if (r == 0)
				lines[i].v = &vs[i];
			else if (r != GPUENV_EVERSION) {
				status = cli_report(cli, CLI_EXIT_FAIL);
				goto done;
			}
		}
	}

	texts = gpuenv_calloc(&cli->ctx, n ? n : 1, sizeof(*texts));
	pv = gpuenv_calloc(&cli->ctx, n ? n : 1, sizeof(*pv));
	idx = gpuenv_calloc(&cli->ctx, n ? n : 1, sizeof(*idx));
	if (!texts || !pv || !idx) {
		status = cli_error(cli, CLI_EXIT_FAIL, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		texts[i] = lines[i].text;
		pv[i] = lines[i].v;
	}
	m = gpuenv_specset_filter(&set, texts, pv, n, pre, idx);
	/* versions that are not PEP 440 can only match ===: say so */
	for (size_t i = 0, j = 0; i < n; i++) {
		while (j < m && idx[j] < i)
			j++;
		if (pv[i] || (j < m && idx[j] == i))
			continue;
		fflush(stdout);
		fprintf(stderr, "gpuenv: warning: %s%zu: invalid version '",
			optind >= argc || strcmp(argv[optind], "-") == 0 ? "<stdin>:" : "argument ",
			lines[i].lineno);
		print_escaped(stderr, texts[i]);
		fputs("' (skipped)\n", stderr);
	}

	if (cli->json) {
		json_t *arr = json_array(), *obj = json_object();
		gpuenv_buf_t norm;
		gpuenv_buf_init(&norm, &cli->ctx, 0);
		for (size_t i = 0; i < m; i++)
			json_array_append_new(arr, json_stringn(texts[idx[i]].ptr, texts[idx[i]].len));
		gpuenv_specset_format(&set, &norm);
		json_object_set_new(obj, "specifier", json_string(norm.data ? norm.data : ""));
		json_object_set_new(obj, "matches", arr);
		gpuenv_buf_free(&norm);
		if (cli_print_json(cli, obj))
			status = CLI_EXIT_FAIL;
	} else {
		for (size_t i = 0; i < m && !status; i++)
			if (gpuenv_buf_append(&out, texts[idx[i]].ptr, texts[idx[i]].len) ||
				gpuenv_buf_putc(&out, '\n'))
				status = cli_error(cli, CLI_EXIT_FAIL, "out of memory");
		if (!status && out.len)
			fwrite(out.data, 1, out.len, stdout);
	}
	if (!status && m == 0)
		status = CLI_EXIT_FAIL; /* nothing matched: a "no", as grep says it */
done:
	gpuenv_free(&cli->ctx, idx);
	gpuenv_free(&cli->ctx, pv);
	gpuenv_free(&cli->ctx, texts);
	gpuenv_free(&cli->ctx, vs);
	gpuenv_free(&cli->ctx, lines);
	gpuenv_arena_free(&arena);
	gpuenv_buf_free(&out);
	gpuenv_buf_free(&in);
	return status;
}
