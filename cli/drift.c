/* gpuenv drift: this node (or a snapshot) against an expected manifest, as
 * text, JSON or node_exporter textfile metrics (docs/drift.md).  The expect
 * file is read before the node is probed, so a broken one fails at once and
 * nothing is written; drift itself is an answer (exit 1), and the metrics
 * that say so are written. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/drift.h"
#include "gpuenv/fs.h"

enum { OPT_EXPECT = 0x2301 };

/* s escaped for a terminal or a text file */
static void put(gpuenv_buf_t *o, const char *s)
{
	gpuenv_text_escape(o, s, strlen(s), GPUENV_ESC_CONTROL);
}

static void write_text(const gpuenv_drift_expect_t *e, const gpuenv_facts_t *f,
	const gpuenv_drift_report_t *r, gpuenv_buf_t *o)
{
	const char *host = f->host.hostname;

	put(o, e->file);
	gpuenv_buf_printf(o, "%s against ", e->from == GPUENV_DRIFT_FROM_SNAPSHOT ? " (a snapshot)" : "");
	if (f->name && *f->name) {
		gpuenv_buf_puts(o, "the snapshot ");
		put(o, f->name);
	} else
		gpuenv_buf_puts(o, "this node");
	if (host) {
		gpuenv_buf_puts(o, " (");
		put(o, host);
		gpuenv_buf_puts(o, ")");
	}
	if (r->nfailed)
		gpuenv_buf_printf(o, ": drift in %zu of %zu checks\n", r->nfailed, r->n);
	else
		gpuenv_buf_printf(o, ": all %zu checks hold\n", r->n);
	for (size_t i = 0; i < r->n; i++) {
		const gpuenv_drift_item_t *it = &r->items[i];
		gpuenv_buf_printf(o, "  %-5s  %-9s  expected ", it->holds ? "ok" : "DRIFT",
			gpuenv_drift_check_name(it->check));
		put(o, it->expected);
		gpuenv_buf_puts(o, ", actual ");
		put(o, it->actual);
		gpuenv_buf_puts(o, "\n");
		/* a GPU's name says more than the joined list */
		if (!it->holds && it->check == GPUENV_DRIFT_GPU && it->why) {
			gpuenv_buf_puts(o, "         ");
			put(o, it->why);
			gpuenv_buf_puts(o, "\n");
		}
	}
}

static json_t *report_json(struct cli *cli, const gpuenv_drift_expect_t *e, const gpuenv_facts_t *f,
	const gpuenv_drift_report_t *r)
{
	json_t *o = json_object(), *checks = json_array(), *node = json_object();
	bool ok = o && checks && node;

#define TXT(s) cli_json_text(cli, (s), (s) ? strlen(s) : 0)
	ok = ok && !json_object_set_new(o, "expect", TXT(e->file)) &&
		!json_object_set_new(o, "from", json_string(e->from == GPUENV_DRIFT_FROM_SNAPSHOT
			? "snapshot" : "toml")) &&
		!json_object_set_new(o, "facts", f->name && *f->name ? TXT(f->name) : json_null()) &&
		!json_object_set_new(o, "status", json_string(r->nfailed ? "drift" : "ok"));
	for (size_t i = 0; ok && i < r->n; i++) {
		const gpuenv_drift_item_t *it = &r->items[i];
		json_t *c = json_object();
		ok = c && !json_array_append_new(checks, c) &&
			!json_object_set_new(c, "check", json_string(gpuenv_drift_check_name(it->check))) &&
			!json_object_set_new(c, "expected", TXT(it->expected)) &&
			!json_object_set_new(c, "actual", TXT(it->actual)) &&
			!json_object_set_new(c, "holds", json_boolean(it->holds)) &&
			!json_object_set_new(c, "why", it->why ? TXT(it->why) : json_null());
	}
	for (int c = 0; ok && c < GPUENV_DRIFT_NCHECKS; c++)
		ok = !json_object_set_new(node, gpuenv_drift_check_name(c), TXT(r->node[c]));
#undef TXT
	ok = ok && !json_object_set(o, "checks", checks) && !json_object_set(o, "node", node);
	json_decref(checks);
	json_decref(node);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int cli_drift(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "expect", required_argument, NULL, OPT_EXPECT },
		{ NULL, 0, NULL, 0 },
	};
	const char *expect_path = NULL, *facts_path, *format, *out;
	const gpuenv_facts_t *facts = NULL;
	gpuenv_drift_expect_t expect;
	gpuenv_drift_report_t rep;
	gpuenv_kb_t *kb = NULL;
	gpuenv_target_t node;
	gpuenv_arena_t arena;
	gpuenv_buf_t in, o;
	bool prom;
	double t0, probe_s;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case OPT_EXPECT:
			expect_path = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	facts_path = cli->opt.facts;
	format = cli->opt.format ? cli->opt.format : "text";
	out = cli->opt.output;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (!expect_path)
		return cli_usage_error(cli, verb, "%s: --expect FILE names the expected manifest", verb->name);
	if (strcmp(format, "text") && strcmp(format, "prometheus"))
		return cli_usage_error(cli, verb, "%s: --format %s: the formats are text and prometheus",
			verb->name, format);
	prom = !strcmp(format, "prometheus");
	if (prom && cli->json)
		return cli_usage_error(cli, verb, "%s: --json and --format prometheus: choose one", verb->name);
	if (facts_path && !strcmp(facts_path, "-") && !strcmp(expect_path, "-"))
		return cli_usage_error(cli, verb, "%s: --expect and --facts cannot both be standard input",
			verb->name);

	if ((st = cli_kb_load(cli, cli->opt.kb_dir, &kb)) != 0)
		return st;
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	gpuenv_buf_init(&in, &cli->ctx, GPUENV_DRIFT_EXPECT_MAX);
	gpuenv_buf_init(&o, &cli->ctx, 64 << 20);
	/* the expect file first: a broken one is reported before any probe */
	if (cli_read_input(cli, expect_path, GPUENV_DRIFT_EXPECT_MAX, &in) != 0) {
		st = CLI_EXIT_CANNOT;
		goto done;
	}
	if (gpuenv_drift_expect_parse(&cli->ctx, &arena, kb, strcmp(expect_path, "-") ? expect_path
			: "<stdin>", in.data ? in.data : "", in.len, &expect) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	t0 = cli_now_s();
	if ((st = cli_facts_load(cli, verb->name, facts_path, NULL, &arena, &facts)) != 0)
		goto done;
	/* the probe's own figure when the facts have it (a snapshot's too) */
	probe_s = facts->probe_ms >= 0 ? facts->probe_ms / 1000.0 : facts_path ? -1 : cli_now_s() - t0;
	if (gpuenv_target_from_facts(&cli->ctx, &arena, facts, SIZE_MAX, &node) != 0 ||
		gpuenv_drift_check(&cli->ctx, &arena, kb, &expect, &node, &rep) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	if (cli->json) {
		json_t *j = report_json(cli, &expect, facts, &rep);
		char *s = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
		if (s)
			gpuenv_buf_printf(&o, "%s\n", s);
		free(s);
		cli_json_drop(j);
		if (!s) {
			st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory building JSON", verb->name);
			goto done;
		}
	} else if (prom)
		gpuenv_drift_metrics(&rep, probe_s, &o);
	else
		write_text(&expect, facts, &rep, &o);
	if (!o.data || !o.len) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory writing the report", verb->name);
		goto done;
	}
	if ((st = cli_write_buf(cli, verb, out, &o, 0)) == CLI_EXIT_OK)
		st = rep.nfailed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
done:
	gpuenv_buf_free(&o);
	gpuenv_buf_free(&in);
	gpuenv_arena_free(&arena);
	gpuenv_kb_free(kb);
	return st;
}

const struct cli_verb cli_verb_drift = {
	.name = "drift",
	.run = cli_drift,
	.summary = "this node against an expected manifest; Prometheus textfile metrics",
	.usage = "gpuenv drift --expect FILE [--facts FILE.json] [--format text|prometheus]\n"
		 "                    [-o FILE] [--kb-dir DIR] [--json]",
	.help = "  --expect FILE      the expected manifest: TOML with any of driver, cuda, gpu,\n"
		"                     gpu_count, cudnn, nccl, tensorrt, each an exact version or a\n"
		"                     PEP 440 range (\">=575,<590\") or \"none\"; or an earlier\n"
		"                     gpuenv probe --json to compare against (docs/drift.md)\n"
		"exit status: 0 every check holds, 1 drift, 2 usage, 4 the expect file or the facts\n"
		"could not be read (malformed: FILE:LINE:COL), or the output not written\n",
	.groups = CLI_G_FACTS | CLI_G_FORMAT | CLI_G_OUTPUT | CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_FORMAT, "  --format F         text (default) or prometheus: node_exporter textfile-collector\n"
				"                     metrics (gpuenv_info, gpuenv_drift per check,\n"
				"                     gpuenv_probe_duration_seconds)\n" },
		{ CLI_G_OUTPUT, "  -o, --output FILE  write FILE atomically (default: standard output); with drift\n"
				"                     the file is written too, on a usage or input error it is not\n" },
		{ 0, NULL },
	},
};
