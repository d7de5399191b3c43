/* Helpers shared by the verbs: options, errors, suggestions, JSON output. */
#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/json.h"
#include "gpuenv/trace.h"
#include "gpuenv/venv.h"

const char *cli_col(struct cli *cli, const char *esc)
{
	return cli->color ? esc : "";
}

#define GROUP_ROW_(bit, name, letter, metavar, field, help) \
	{ bit, name, letter, metavar, offsetof(struct cli_opts, field), help },
static const struct group_opt {
	unsigned bit;
	const char *name;
	char letter;
	const char *metavar; /* NULL: a flag */
	size_t field;	     /* offset in struct cli_opts */
	const char *help;
} group_opts[] = { CLI_OPTION_GROUPS(GROUP_ROW_) };
#undef GROUP_ROW_

#define GROUP_VAL 0x1100 /* getopt values of the group options: GROUP_VAL + row */

/* The help line of one group option: the verb's own, else the default one
 * in the layout of the verbs' help ("  -o, --output FILE  text"). */
static void group_help(const struct cli_verb *verb, const struct group_opt *g, FILE *out)
{
	char left[64];

	for (const struct cli_group_help *h = verb->group_help; h && h->group; h++)
		if (h->group == g->bit) {
			fputs(h->text, out);
			return;
		}
	snprintf(left, sizeof(left), "%s%c%s--%s%s%s", g->letter ? "-" : "", g->letter ? g->letter : ' ',
		g->letter ? ", " : "", g->name, g->metavar ? " " : "", g->metavar ? g->metavar : "");
	fprintf(out, "  %-18s %s\n", g->letter ? left : left + 1, g->help);
}

void cli_verb_help(struct cli *cli, const struct cli_verb *verb, FILE *out)
{
	(void)cli;
	const char *help = verb->help ? verb->help : "", *tail;

	fprintf(out, "usage: %s\n\n%s\n", verb->usage, verb->summary);
	if (!verb->help && !verb->groups)
		goto common;
	/* the verb's own option lines (indented), the shared ones, then the
	 * rest of its help (exit status and notes) */
	for (tail = help; *tail == ' ';) {
		const char *nl = strchr(tail, '\n');
		tail = nl ? nl + 1 : tail + strlen(tail);
	}
	fprintf(out, "\n%.*s", (int)(tail - help), help);
	for (size_t i = 0; i < sizeof(group_opts) / sizeof(group_opts[0]); i++)
		if (verb->groups & group_opts[i].bit)
			group_help(verb, &group_opts[i], out);
	fputs(tail, out);
common:
	fprintf(out, "\n  -h, --help     show this help\n"
		"      --json     machine-readable output where the verb has any\n");
}

/* Every error goes out here.  Out of memory is never a bare "out of
 * memory" (issue 22 item 12): where the place that ran out said nothing of
 * what it was doing (gpuenv_oom(ctx, NULL), a verb's own "out of memory"),
 * the running verb is named, and the fix is given. */
static int verr(struct cli *cli, int status, const char *fmt, va_list ap)
{
	char msg[1400];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fflush(stdout);
	fprintf(stderr, "%s%s:%s %s", cli_col(cli, CLI_RED), cli->prog, cli_col(cli, CLI_RESET), msg);
	if (!strcmp(msg, "out of memory"))
		fprintf(stderr, " while running `%s %s`\nhint: free some memory, or raise this process's "
				"limit (ulimit -v, the container's or cgroup's memory limit)",
			cli->prog, cli->verb ? cli->verb : "(starting)");
	fputc('\n', stderr);
	return status;
}

int cli_error(struct cli *cli, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(cli, status, fmt, ap);
	va_end(ap);
	return status;
}

int cli_report(struct cli *cli, int status)
{
	char msg[1200];

	gpuenv_error_format(&cli->ctx.err, msg, sizeof(msg));
	cli_error(cli, status, "%s", msg);
	if (cli->ctx.err.hint[0])
		fprintf(stderr, "hint: %s\n", cli->ctx.err.hint);
	return status;
}

int cli_usage_error(struct cli *cli, const struct cli_verb *verb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(cli, CLI_EXIT_USAGE, fmt, ap);
	va_end(ap);
	fprintf(stderr, "usage: %s\n", verb->usage);
	return CLI_EXIT_USAGE;
}

const char *cli_suggest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX, wl = strlen(word);

	for (size_t i = 0; i < n; i++) {
		size_t d;
		/* a unique prefix is a good guess too */
		if (wl >= 2 && strncmp(names[i], word, wl) == 0)
			d = 1;
		else
			d = gpuenv_edit_distance(word, names[i]);
		if (d < bestd) {
			bestd = d;
			best = names[i];
		}
	}
	/* allow roughly one typo per three letters, at least two */
	if (best && bestd <= (wl / 3 > 2 ? wl / 3 : 2))
		return best;
	return NULL;
}

void cli_opt_reset(void)
{
	optind = 0;
	opterr = 0;
}

#define MAX_LONGOPTS 32
#define MAX_ALLOPTS (MAX_LONGOPTS + CLI_NGROUP_OPTIONS + 3)

/* The getopt rows of a verb: its own, its groups', --help and --json; the
 * short letters likewise.  n: the rows, without the terminator. */
static size_t all_options(const struct cli_verb *verb, const char *shortopts,
	const struct option *longopts, struct option *all, char *shorts, size_t shortsz)
{
	size_t n = 0, k;
	bool plus = shortopts && shortopts[0] == '+';

	for (; longopts && longopts[n].name && n < MAX_LONGOPTS; n++)
		all[n] = longopts[n];
	/* leading ':' makes getopt report a missing argument as ':' */
	/* a leading '+' (stop at the first argument that is not an option,
	 * as `run -- CMD` needs) goes before it */
	k = (size_t)snprintf(shorts, shortsz, "%s:%sh", plus ? "+" : "",
		shortopts ? shortopts + plus : "");
	for (size_t i = 0; i < sizeof(group_opts) / sizeof(group_opts[0]); i++) {
		const struct group_opt *g = &group_opts[i];
		if (!(verb->groups & g->bit))
			continue;
		all[n++] = (struct option){ g->name, g->metavar ? required_argument : no_argument, NULL,
			GROUP_VAL + (int)i };
		if (g->letter && k + 3 < shortsz) {
			shorts[k++] = g->letter;
			if (g->metavar)
				shorts[k++] = ':';
			shorts[k] = '\0';
		}
	}
	all[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	all[n++] = (struct option){ "json", no_argument, NULL, 0x1001 };
	all[n] = (struct option){ NULL, 0, NULL, 0 };
	return n;
}

/* A group option's value into cli->opt (a short letter: its row's). */
static bool group_store(struct cli *cli, const struct cli_verb *verb, int c)
{
	for (size_t i = 0; i < sizeof(group_opts) / sizeof(group_opts[0]); i++) {
		const struct group_opt *g = &group_opts[i];
		if ((verb->groups & g->bit) && (c == GROUP_VAL + (int)i || (g->letter && c == g->letter))) {
			const char *v = g->metavar ? optarg : "";
			memcpy((char *)&cli->opt + g->field, &v, sizeof(v));
			return true;
		}
	}
	return false;
}

int cli_getopt(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	const char *shortopts, const struct option *longopts, int *status)
{
	struct option all[MAX_ALLOPTS];
	char shorts[96];
	size_t n;
	int c, idx = -1;

	if (optind == 0) /* a verb's first call (cli_opt_reset): none given yet */
		memset(&cli->opt, 0, sizeof(cli->opt));
	n = all_options(verb, shortopts, longopts, all, shorts, sizeof(shorts));
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, shorts, all, &idx);
		if (c == 0x1001)
			cli->json = true;
		else if (c == -1 || c == 'h' || c == ':' || c == '?' || !group_store(cli, verb, c))
			break;
	}
	switch (c) {
	case 'h':
		cli_verb_help(cli, verb, stdout);
		*status = CLI_EXIT_OK;
		return CLI_OPT_EXIT;
	case ':':
		*status = cli_usage_error(cli, verb, "%s: option '%s' needs a value",
			verb->name, argv[optind - 1]);
		return CLI_OPT_EXIT;
	case '?': {
		const char *bad = argv[optind - 1];
		const char *names[MAX_ALLOPTS];
		const char *sugg = NULL;
		if (optopt && !(bad[0] == '-' && bad[1] == '-')) {
			*status = cli_usage_error(cli, verb, "%s: unknown option '-%c'",
				verb->name, optopt);
			return CLI_OPT_EXIT;
		}
		char word[64];
		snprintf(word, sizeof(word), "%s", bad + (bad[0] == '-' ? (bad[1] == '-' ? 2 : 1) : 0));
		char *eq = strchr(word, '=');
		if (eq)
			*eq = '\0';
		for (size_t i = 0; i < n; i++)
			names[i] = all[i].name;
		sugg = cli_suggest(word, names, n);
		if (sugg)
			*status = cli_error(cli, CLI_EXIT_USAGE,
				"%s: unknown option '%s'; did you mean '--%s'?", verb->name, bad, sugg);
		else
			*status = cli_usage_error(cli, verb, "%s: unknown option '%s'", verb->name, bad);
		return CLI_OPT_EXIT;
	}
	default:
		return c;
	}
}

json_t *cli_json_text(struct cli *cli, const char *s, size_t n)
{
	gpuenv_buf_t b;
	json_t *j;

	if (!s)
		return json_null();
	if (gpuenv_text_valid(s, n, 0))
		return json_stringn(s, n);
	gpuenv_buf_init(&b, &cli->ctx, 0);
	j = gpuenv_text_escape(&b, s, n, 0) ? NULL : json_stringn(b.data, b.len);
	gpuenv_buf_free(&b);
	return j;
}

int cli_put_text(struct cli *cli, FILE *out, const char *s, size_t n)
{
	gpuenv_buf_t b;
	int r;

	if (gpuenv_text_valid(s, n, GPUENV_ESC_CONTROL)) {
		fwrite(s, 1, n, out);
		return 0;
	}
	gpuenv_buf_init(&b, &cli->ctx, 0);
	r = gpuenv_text_escape(&b, s, n, GPUENV_ESC_CONTROL);
	if (!r)
		fwrite(b.data, 1, b.len, out);
	gpuenv_buf_free(&b);
	return r;
}

void cli_json_drop(json_t *v)
{
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
	/* the process exits after the verb: walking a facts document's
	 * ~100,000 nodes to free them cost about a millisecond of every
	 * doctor and probe run on the H200 (docs/hardware-results.md,
	 * 2026-12-01); the test build frees, so leak checks still see all */
	(void)v;
#else
	json_decref(v);
#endif
}

int cli_write_output(struct cli *cli, const struct cli_verb *verb, const char *out, const char *data,
	size_t len, unsigned fs_flags)
{
	if (out)
		return gpuenv_fs_write_atomic_ex(&cli->ctx, out, data, len, 0644, fs_flags)
			? cli_report(cli, CLI_EXIT_CANNOT) : CLI_EXIT_OK;
	if (len && fwrite(data, 1, len, stdout) != len)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: cannot write the output", verb->name);
	return CLI_EXIT_OK;
}

int cli_write_buf(struct cli *cli, const struct cli_verb *verb, const char *out, gpuenv_buf_t *b,
	unsigned fs_flags)
{
	if (gpuenv_buf_failed(b))
		return cli_report(cli, CLI_EXIT_CANNOT);
	return cli_write_output(cli, verb, out, b->data ? b->data : "", b->len, fs_flags);
}

int cli_print_json(struct cli *cli, json_t *value)
{
	int r;

	if (!value)
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
	gpuenv_buf_t b;

	gpuenv_buf_init(&b, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	r = gpuenv_json_write(&b, value, 2);
	cli_json_drop(value);
	return cli_print_json_text(cli, &b, r);
}

int cli_print_json_text(struct cli *cli, gpuenv_buf_t *b, int r)
{
	if (r == 0)
		r = gpuenv_buf_putc(b, '\n');
	if (r != 0 || gpuenv_buf_failed(b)) {
		gpuenv_buf_free(b);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	r = fwrite(b->data, 1, b->len, stdout) != b->len;
	gpuenv_buf_free(b);
	/* main() reports the write error once, after the verb */
	if (r != 0 || fflush(stdout) != 0 || ferror(stdout))
		return CLI_EXIT_CANNOT;
	return CLI_EXIT_OK;
}

int cli_read_input(struct cli *cli, const char *path, size_t max, gpuenv_buf_t *buf)
{
	int r;

	if (!path || strcmp(path, "-") == 0)
		r = gpuenv_fs_read_fd(&cli->ctx, STDIN_FILENO, "<stdin>", max, buf);
	else
		r = gpuenv_fs_read(&cli->ctx, path, max, buf);
	return r ? cli_report(cli, CLI_EXIT_FAIL) : 0;
}

int cli_dispatch(struct cli *cli, const struct cli_verb *verb, const struct cli_verb *const *subs,
	size_t nsubs, const char *what, int argc, char **argv)
{
	const char *names[64];

	if (argc < 2)
		return cli_usage_error(cli, verb, "%s: which %s?", verb->name, what);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		cli_verb_help(cli, verb, stdout);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < nsubs && i < 64; i++) {
		names[i] = subs[i]->name;
		if (strcmp(argv[1], subs[i]->name) != 0)
			continue;
		struct cli_verb v = *subs[i];
		char full[64];
		snprintf(full, sizeof(full), "%s %s", verb->name, subs[i]->name);
		v.name = full;
		if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
			cli_verb_help(cli, &v, stdout);
			return CLI_EXIT_OK;
		}
		cli_opt_reset();
		const char *outer = cli->verb;
		cli->verb = full;
		int st = subs[i]->run(cli, &v, argc - 1, argv + 1);
		cli->verb = outer;
		return st;
	}
	const char *s = cli_suggest(argv[1], names, nsubs < 64 ? nsubs : 64);
	if (s)
		return cli_error(cli, CLI_EXIT_USAGE, "%s: unknown %s '%s'; did you mean '%s'?",
			verb->name, what, argv[1], s);
	return cli_usage_error(cli, verb, "%s: unknown %s '%s'", verb->name, what, argv[1]);
}

double cli_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

json_t *cli_python_json(struct cli *cli, const gpuenv_python_t *py)
{
	return json_pack("{s:o, s:o, s:s, s:s, s:s, s:b, s:o}", "path",
		cli_json_text(cli, py->path, strlen(py->path)), "real", cli_json_text(cli, py->real, strlen(py->real)),
		"found_by", py->found_by, "version", py->version, "version_source", py->version_source,
		"free_threaded", py->free_threaded, "home", cli_json_text(cli, py->home, strlen(py->home)));
}

int cli_profile_start(struct cli *cli, const char *verb, const char *path)
{
	char cmd[64];

	if (!path)
		return 0;
	snprintf(cmd, sizeof(cmd), "gpuenv %s", verb);
	if (gpuenv_trace_new(&cli->ctx, cmd, &cli->ctx.trace) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return 0;
}

int cli_profile_finish(struct cli *cli, const char *path, int st)
{
	gpuenv_trace_t *t = cli->ctx.trace;

	if (!t)
		return st;
	cli->ctx.trace = NULL;
	/* a failed run's trace is written too: it shows where the time went */
	gpuenv_error_t saved = cli->ctx.err;
	gpuenv_error_clear(&cli->ctx);
	if (gpuenv_trace_write(&cli->ctx, t, path) != 0) {
		cli_report(cli, CLI_EXIT_CANNOT);
		st = CLI_EXIT_CANNOT;
	}
	gpuenv_trace_free(&cli->ctx, t);
	cli->ctx.err = saved;
	return st;
}
