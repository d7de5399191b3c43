/* debug subcommands over the PEP 440 module: version-sort, specifier. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep440.h"

#define INPUT_MAX ((size_t)1 << 30)

/* ---- input ----------------------------------------------------------------- */

/* The next line of buf from *pos (without its '\n'); false at the end.  A
 * final '\n' does not start another line. */
static bool next_line(const gpuenv_buf_t *buf, size_t *pos, gpuenv_str_t *line)
{
	const char *nl;
	size_t end;

	if (*pos >= buf->len)
		return false;
	nl = memchr(buf->data + *pos, '\n', buf->len - *pos);
	end = nl ? (size_t)(nl - buf->data) : buf->len;
	*line = gpuenv_str_n(buf->data + *pos, end - *pos);
	*pos = end + 1;
	return true;
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

static void *alloc_array(struct cli *cli, size_t n, size_t size)
{
	if (n && size > SIZE_MAX / n)
		return NULL;
	return gpuenv_alloc(&cli->ctx, (n ? n : 1) * size);
}

/* ---- version-sort ---------------------------------------------------------- */

/* What the sort moves: the version's key, which settles most comparisons
 * without touching the version, then the version and the line. */
struct sortent {
	gpuenv_version_key_t key;
	const gpuenv_version_t *v;
	gpuenv_str_t text;
};

static inline int ent_cmp(const struct sortent *x, const struct sortent *y)
{
	int c = gpuenv_version_key_cmp(&x->key, &y->key);
	return c ? c : gpuenv_version_cmp(x->v, y->v);
}

/* Stable bottom-up merge sort of a[0..n) (equal versions keep their input
 * order); tmp has room for n.  Returns the array holding the result. */
static struct sortent *sort_ents(struct sortent *a, struct sortent *tmp, size_t n)
{
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			/* runs already in order (common in real lists) are copied */
			if (mid >= hi || ent_cmp(&a[mid - 1], &a[mid]) <= 0) {
				memcpy(tmp + lo, a + lo, (hi - lo) * sizeof(*a));
				continue;
			}
			while (i < mid && j < hi)
				tmp[k++] = ent_cmp(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < hi)
				tmp[k++] = a[j++];
		}
		struct sortent *t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}

static int version_sort(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	gpuenv_buf_t in, out;
	gpuenv_arena_t arena;
	struct sortent *ents = NULL, *tmp = NULL, *res;
	gpuenv_version_t *vs = NULL;
	json_t *bad = NULL;
	size_t nlines = 0, n = 0, nbad = 0, pos;
	gpuenv_str_t line;
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
	arena.chunk_size = (size_t)4 << 20; /* few, huge-page backed chunks */
	if ((status = cli_read_input(cli, "-", INPUT_MAX, &in)))
		goto done;
	for (pos = 0; next_line(&in, &pos, &line);)
		nlines++;
	vs = alloc_array(cli, nlines, sizeof(*vs));
	ents = alloc_array(cli, nlines, sizeof(*ents));
	tmp = alloc_array(cli, nlines, sizeof(*tmp));
	bad = cli->json ? json_array() : NULL;
	if (!vs || !ents || !tmp || (cli->json && !bad))
		goto oom;

	for (pos = 0; next_line(&in, &pos, &line);) {
		int r = gpuenv_version_parse(&cli->ctx, &arena, line, &vs[n]);
		if (r == 0) {
			gpuenv_version_key(&vs[n], &ents[n].key);
			ents[n].v = &vs[n];
			ents[n].text = line;
			n++;
			continue;
		}
		if (r != GPUENV_EVERSION) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto done;
		}
		nbad++;
		if (bad) {
			json_array_append_new(bad, json_pack("{s:I,s:s%}", "line",
							   (json_int_t)(n + nbad), "text", line.ptr, line.len));
			continue;
		}
		fflush(stdout);
		fprintf(stderr, "<stdin>:%zu: invalid version '", n + nbad);
		print_escaped(stderr, line);
		fputs("'\n", stderr);
	}
	res = sort_ents(ents, tmp, n);

	if (cli->json) {
		json_t *arr = json_array(), *obj = json_object();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, json_stringn(res[i].text.ptr, res[i].text.len));
		json_object_set_new(obj, "versions", arr);
		json_object_set_new(obj, "invalid", bad);
		bad = NULL;
		if (cli_print_json(cli, obj))
			status = CLI_EXIT_FAIL;
	} else {
		if (gpuenv_buf_reserve(&out, in.len + 1))
			goto oom;
		for (size_t i = 0; i < n; i++) {
			memcpy(out.data + out.len, res[i].text.ptr, res[i].text.len);
			out.len += res[i].text.len;
			out.data[out.len++] = '\n';
		}
		if (out.len)
			fwrite(out.data, 1, out.len, stdout);
	}
	if (!status && nbad)
		status = CLI_EXIT_FAIL;
	goto done;
oom:
	status = cli_error(cli, CLI_EXIT_FAIL, "%s: out of memory", verb->name);
done:
	json_decref(bad);
	gpuenv_free(&cli->ctx, tmp);
	gpuenv_free(&cli->ctx, ents);
	gpuenv_free(&cli->ctx, vs);
	gpuenv_arena_free(&arena);
	gpuenv_buf_free(&out);
	gpuenv_buf_free(&in);
	return status;
}

/* ---- specifier ------------------------------------------------------------- */

/* Candidates come from argv or from stdin's lines; they are filtered as they
 * come (one parse at a time), only each verdict is kept. */
struct cands {
	char **argv;
	int argc, i;
	const gpuenv_buf_t *buf;
	size_t pos;
};

static bool next_cand(struct cands *c, gpuenv_str_t *out)
{
	if (!c->buf) {
		if (c->i >= c->argc)
			return false;
		*out = gpuenv_str(c->argv[c->i++]);
		return true;
	}
	return next_line(c->buf, &c->pos, out);
}

static int specifier(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prereleases", no_argument, NULL, 'p' },
		{ "no-prereleases", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int pre = GPUENV_PRERELEASES_DEFAULT;
	gpuenv_buf_t in, out;
	gpuenv_arena_t arena, scratch;
	gpuenv_specset_t set;
	gpuenv_filter_t filt;
	unsigned char *verdict = NULL;
	struct cands cands = { 0 };
	gpuenv_str_t text;
	size_t n = 0, kept = 0;
	json_t *arr = NULL;
	const char *spec;
	bool from_stdin;
	int c, st, status = CLI_EXIT_OK;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		pre = c == 'p' ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_NO;
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no SPEC given", verb->name);
	spec = argv[optind++];
	from_stdin = optind >= argc || (optind + 1 == argc && strcmp(argv[optind], "-") == 0);

	gpuenv_buf_init(&in, &cli->ctx, INPUT_MAX);
	gpuenv_buf_init(&out, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	gpuenv_arena_init(&scratch, &cli->ctx, 0);
	if (gpuenv_specset_parse(&cli->ctx, &arena, gpuenv_str(spec), &set)) {
		status = cli_report(cli, CLI_EXIT_FAIL);
		goto done;
	}
	if (from_stdin) {
		if ((status = cli_read_input(cli, "-", INPUT_MAX, &in)))
			goto done;
		cands.buf = &in;
		for (size_t pos = 0; next_line(&in, &pos, &text);)
			n++;
	} else {
		cands.argv = argv + optind;
		cands.argc = argc - optind;
		n = (size_t)cands.argc;
	}
	verdict = alloc_array(cli, n, 1);
	if (!verdict)
		goto oom;

	/* one pass: each candidate parsed into a scratch arena, emptied now and
	 * then, and its verdict remembered */
	gpuenv_filter_init(&filt, &set, pre);
	for (size_t i = 0; next_cand(&cands, &text); i++) {
		gpuenv_version_t v;
		int r;
		if ((i & 1023) == 1023) {
			gpuenv_arena_free(&scratch);
			gpuenv_arena_init(&scratch, &cli->ctx, 0);
		}
		r = gpuenv_version_parse(&cli->ctx, &scratch, text, &v);
		if (r && r != GPUENV_EVERSION) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto done;
		}
		verdict[i] = (unsigned char)gpuenv_filter_feed(&filt, text, r ? NULL : &v);
		if (r && !verdict[i]) {
			/* not PEP 440 and not let in by === or an empty set */
			fflush(stdout);
			fprintf(stderr, "gpuenv: warning: %s%zu: invalid version '",
				from_stdin ? "<stdin>:" : "argument ", i + 1);
			print_escaped(stderr, text);
			fputs("' (skipped)\n", stderr);
		}
	}

	/* second pass: print what was kept, in input order */
	if (cli->json && !(arr = json_array()))
		goto oom;
	if (!cli->json && from_stdin && gpuenv_buf_reserve(&out, in.len + 1))
		goto oom;
	cands.i = 0;
	cands.pos = 0;
	for (size_t i = 0; next_cand(&cands, &text); i++) {
		if (verdict[i] == GPUENV_FILTER_DROP ||
			(verdict[i] == GPUENV_FILTER_KEEP_IF_NO_FINAL && filt.found_final))
			continue;
		kept++;
		if (arr) {
			json_array_append_new(arr, json_stringn(text.ptr, text.len));
		} else if (gpuenv_buf_append(&out, text.ptr, text.len) ||
			gpuenv_buf_putc(&out, '\n')) {
			goto oom;
		}
	}
	if (arr) {
		json_t *obj = json_object();
		gpuenv_buf_t norm;
		gpuenv_buf_init(&norm, &cli->ctx, 0);
		gpuenv_specset_format(&set, &norm);
		json_object_set_new(obj, "specifier", json_string(norm.data ? norm.data : ""));
		json_object_set_new(obj, "matches", arr);
		arr = NULL;
		gpuenv_buf_free(&norm);
		if (cli_print_json(cli, obj))
			status = CLI_EXIT_FAIL;
	} else if (out.len) {
		fwrite(out.data, 1, out.len, stdout);
	}
	if (!status && kept == 0)
		status = CLI_EXIT_FAIL; /* nothing matched: a "no", as grep says it */
	goto done;
oom:
	status = cli_error(cli, CLI_EXIT_FAIL, "%s: out of memory", verb->name);
done:
	json_decref(arr);
	gpuenv_free(&cli->ctx, verdict);
	gpuenv_arena_free(&scratch);
	gpuenv_arena_free(&arena);
	gpuenv_buf_free(&out);
	gpuenv_buf_free(&in);
	return status;
}

/* The entry points run the verbs with the bulk (huge-page) allocator. */
static int with_big_pages(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	int (*fn)(struct cli *, const struct cli_verb *, int, char **))
{
	gpuenv_allocator_t saved = cli->ctx.mem;
	int status;

	gpuenv_allocator_bulk(&cli->ctx.mem);
	status = fn(cli, verb, argc, argv);
	cli->ctx.mem = saved;
	return status;
}

static int cli_debug_version_sort(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return with_big_pages(cli, verb, argc, argv, version_sort);
}

static int cli_debug_specifier(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return with_big_pages(cli, verb, argc, argv, specifier);
}

const struct cli_verb cli_verb_debug_version_sort = {
	.name = "version-sort",
	.run = cli_debug_version_sort,
	.summary = "read PEP 440 versions (one a line) on stdin, write them sorted ascending; invalid ones go to stderr and the exit status is 1",
	.usage = "gpuenv debug version-sort < VERSIONS",
	.help = "  Each line is printed as it was read (not normalized); equal versions\n"
		"  (1.0 and 1.0.0) keep their input order.  Invalid lines are reported on\n"
		"  stderr as '<stdin>:LINE: invalid version ...'; the valid ones are still\n"
		"  printed.  --json: {\"versions\": [...], \"invalid\": [{line, text}]}\n",
};

const struct cli_verb cli_verb_debug_specifier = {
	.name = "specifier",
	.run = cli_debug_specifier,
	.summary = "print the VERSIONs that the PEP 440 specifier SPEC matches, one a line",
	.usage = "gpuenv debug specifier SPEC [--prereleases|--no-prereleases] [VERSION...|-]",
	.help = "  SPEC is a comma-separated set ('>=1.0,<2,!=1.5.*'); with no VERSION, or\n"
		"  '-', the versions are read from stdin, one a line.  Matches are printed\n"
		"  as given, in input order; exit status 1 when none matches.\n"
		"  --prereleases      let pre-releases match\n"
		"  --no-prereleases   never let pre-releases match\n"
		"  (neither: PEP 440's default, pre-releases only when nothing else matches\n"
		"   or the specifier names one)\n",
};
