/* gpuenv profile: a trace of `lock --profile` / `sync --profile` (or any
 * Chrome trace) checked and summed up: the slowest packages and phases,
 * the tool calls of builds; --svg draws the flame chart (docs/profile.md). */
#include "cli.h"

#include <string.h>

#include "gpuenv/fs.h"
#include "gpuenv/profile.h"

#define MAX_TRACE ((size_t)512 << 20) /* the help text says "512 MiB" */
#define MAX_SVG ((size_t)256 << 20)

enum { OPT_TOP = 0x2301, OPT_SVG };

static size_t top_n(size_t n, size_t top)
{
	return top && top < n ? top : n;
}

static json_t *jstr(struct cli *cli, const char *s)
{
	return cli_json_text(cli, s, strlen(s));
}

static json_t *jstat(struct cli *cli, const char *k1, const char *k2, const gpuenv_prof_stat_t *s, bool tool)
{
	json_t *o = json_object();

	if (!o || json_object_set_new(o, k1, jstr(cli, s->key)) ||
		(k2 && json_object_set_new(o, k2, jstr(cli, s->key2 ? s->key2 : ""))) ||
		json_object_set_new(o, "total_us", json_real(s->total_us)) ||
		json_object_set_new(o, tool ? "calls" : "spans", json_integer((json_int_t)s->count)) ||
		(tool && json_object_set_new(o, "failed", json_integer((json_int_t)s->failed)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Append to arr; false (and arr freed by the caller) when memory ran out. */
static bool push(json_t *arr, json_t *v)
{
	return v && json_array_append_new(arr, v) == 0;
}

static int print_json(struct cli *cli, const char *path, const gpuenv_prof_t *p, const gpuenv_prof_summary_t *s,
	size_t top)
{
	json_t *o = json_object(), *pk = json_array(), *ph = json_array(), *tl = json_array(), *bp = json_array();
	bool ok = o && pk && ph && tl && bp;

	for (size_t i = 0; ok && i < top_n(s->npackages, top); i++) {
		json_t *row = jstat(cli, "package", NULL, &s->packages[i], false), *phases = json_array();
		ok = row && phases && json_object_set_new(row, "phases", phases) == 0;
		for (size_t k = 0; ok && k < s->npackage_phases; k++)
			if (!strcmp(s->package_phases[k].key, s->packages[i].key))
				ok = push(phases, jstat(cli, "phase", NULL, &(gpuenv_prof_stat_t){ .key = s->package_phases[k].key2,
					.total_us = s->package_phases[k].total_us, .count = s->package_phases[k].count }, false));
		ok = ok && push(pk, row);
		if (!ok)
			json_decref(row);
	}
	for (size_t i = 0; ok && i < top_n(s->nphases, top); i++)
		ok = push(ph, jstat(cli, "phase", NULL, &s->phases[i], false));
	for (size_t i = 0; ok && i < s->ntools; i++)
		ok = push(tl, jstat(cli, "tool", NULL, &s->tools[i], true));
	for (size_t i = 0; ok && i < s->npackage_tools; i++)
		ok = push(bp, jstat(cli, "package", "tool", &s->package_tools[i], true));
	ok = ok && !json_object_set_new(o, "trace", jstr(cli, path)) &&
		!json_object_set_new(o, "command", p->command ? jstr(cli, p->command) : json_null()) &&
		!json_object_set_new(o, "events", json_integer((json_int_t)p->nevents)) &&
		!json_object_set_new(o, "spans", json_integer((json_int_t)p->nspans)) &&
		!json_object_set_new(o, "threads", json_integer((json_int_t)p->nthreads)) &&
		!json_object_set_new(o, "wall_us", json_real(s->wall_us)) &&
		!json_object_set_new(o, "packages", pk) && !json_object_set_new(o, "phases", ph) &&
		!json_object_set_new(o, "tool_calls", json_integer((json_int_t)s->tool_calls)) &&
		!json_object_set_new(o, "tool_failed", json_integer((json_int_t)s->tool_failed)) &&
		!json_object_set_new(o, "tools", tl) && !json_object_set_new(o, "tools_by_package", bp);
	if (!ok) {
		json_decref(o);
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
	}
	return cli_print_json(cli, o);
}

static void print_text(struct cli *cli, const char *path, const gpuenv_prof_t *p, const gpuenv_prof_summary_t *s,
	size_t top)
{
	char a[32], b[32];

	gpuenv_prof_human(s->wall_us, a, sizeof(a));
	printf("%s%s%s%s: %zu spans on %zu threads over %s\n", path, p->command ? " (" : "",
		p->command ? p->command : "", p->command ? ")" : "", p->nspans, p->nthreads, a);
	if (s->npackages) {
		printf("\nslowest packages (the time of their outermost spans, tool calls aside):\n");
		for (size_t i = 0; i < top_n(s->npackages, top); i++) {
			gpuenv_prof_human(s->packages[i].total_us, a, sizeof(a));
			printf("  %-28s %10s ", s->packages[i].key, a);
			const char *sep = "";
			for (size_t k = 0; k < s->npackage_phases; k++) {
				if (strcmp(s->package_phases[k].key, s->packages[i].key))
					continue;
				gpuenv_prof_human(s->package_phases[k].total_us, b, sizeof(b));
				printf("%s %s %s", sep, s->package_phases[k].key2, b);
				sep = ",";
			}
			printf("\n");
		}
		if (top_n(s->npackages, top) < s->npackages)
			printf("  ... %zu more (--top 0 lists all)\n", s->npackages - top_n(s->npackages, top));
	}
	if (s->nphases) {
		printf("\nslowest phases:\n");
		for (size_t i = 0; i < top_n(s->nphases, top); i++) {
			gpuenv_prof_human(s->phases[i].total_us, a, sizeof(a));
			printf("  %-28s %10s  %zu span%s\n", s->phases[i].key, a, s->phases[i].count,
				s->phases[i].count == 1 ? "" : "s");
		}
		if (top_n(s->nphases, top) < s->nphases)
			printf("  ... %zu more (--top 0 lists all)\n", s->nphases - top_n(s->nphases, top));
	}
	if (!s->tool_calls) {
		printf("\ntool calls: none (a build's compiler and nvcc calls are counted here)\n");
		return;
	}
	printf("\ntool calls: %zu (%zu failed)\n", s->tool_calls, s->tool_failed);
	for (size_t i = 0; i < s->ntools; i++) {
		gpuenv_prof_human(s->tools[i].total_us, a, sizeof(a));
		printf("  %-28s %6zu call%s %10s%s\n", s->tools[i].key, s->tools[i].count,
			s->tools[i].count == 1 ? " " : "s", a, s->tools[i].failed ? "  (some failed)" : "");
	}
	printf("by package:\n");
	for (size_t i = 0; i < s->npackage_tools; i++) {
		gpuenv_prof_human(s->package_tools[i].total_us, a, sizeof(a));
		printf("  %-28s %-10s %6zu call%s %10s\n", s->package_tools[i].key[0] ? s->package_tools[i].key : "(none)",
			s->package_tools[i].key2, s->package_tools[i].count, s->package_tools[i].count == 1 ? " " : "s", a);
	}
	(void)cli;
}

static int cli_profile(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, OPT_TOP },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *svg = NULL;
	uint64_t top = 10;
	int c, st = CLI_EXIT_USAGE;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case OPT_TOP:
			if (!gpuenv_str_to_u64(gpuenv_str(optarg), &top) || top > 100000)
				return cli_usage_error(cli, verb, "%s: --top wants a number of rows (0: all), not '%s'",
					verb->name, optarg);
			break;
		case OPT_SVG:
			svg = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (!path)
		return cli_usage_error(cli, verb, "%s: which trace? (the FILE of lock --profile or sync --profile)",
			verb->name);
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: one trace at a time ('%s' is extra)", verb->name, argv[optind]);

	gpuenv_buf_t data, pic;
	gpuenv_arena_t arena;
	gpuenv_prof_t p;
	gpuenv_prof_summary_t s;
	gpuenv_buf_init(&data, &cli->ctx, MAX_TRACE);
	gpuenv_buf_init(&pic, &cli->ctx, MAX_SVG);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (cli_read_input(cli, path, MAX_TRACE, &data) != 0) {
		st = CLI_EXIT_CANNOT;
		goto out;
	}
	if (gpuenv_prof_read(&cli->ctx, &arena, strcmp(path, "-") ? path : "<stdin>", data.data ? data.data : "",
		    data.len, &p) != 0 ||
		gpuenv_prof_summarize(&cli->ctx, &arena, &p, &s) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (svg) {
		char title[512];
		snprintf(title, sizeof(title), "gpuenv profile %s", path);
		if (gpuenv_prof_svg(&cli->ctx, &p, title, &pic) != 0 ||
			gpuenv_fs_write_buf(&cli->ctx, svg, &pic, 0644, 0) != 0) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
	}
	if (cli->json)
		st = print_json(cli, path, &p, &s, (size_t)top);
	else {
		print_text(cli, path, &p, &s, (size_t)top);
		st = CLI_EXIT_OK;
	}
	if (svg && cli->verbose >= 0) {
		fflush(stdout);
		fprintf(stderr, "flame graph: %s (%zu spans)\n", svg, p.nspans);
	}
out:
	gpuenv_buf_free(&data);
	gpuenv_buf_free(&pic);
	gpuenv_arena_free(&arena);
	return st;
}

const struct cli_verb cli_verb_profile = {
	.name = "profile",
	.run = cli_profile,
	.summary = "where install time went: the slowest packages, phases and tool calls of a trace",
	.usage = "gpuenv profile FILE [--top N] [--svg OUT.svg] [--json]",
	.help = "  FILE               a trace: lock --profile FILE or sync --profile FILE wrote it\n"
		"                     (any Chrome Trace Event Format file is read; '-': stdin;\n"
		"                     at most 512 MiB); it is checked as the trace viewer needs it\n"
		"  --top N            rows of slowest packages and phases (default 10; 0: all)\n"
		"  --svg OUT.svg      also draw the flame chart: a band per thread, spans stacked by\n"
		"                     nesting over time, a tooltip on each (open it in a browser)\n"
		"  --json             the summary as one object on stdout\n"
		"\n"
		"exit status: 0 the trace was read and summed up, 2 usage, 4 the trace could not\n"
		"be read or is not a valid trace (the event and field are named), or the SVG\n"
		"could not be written",
};
