/* gpuenv labels: this node's Kubernetes labels (GPU Feature Discovery's
 * names and formats, and gpuenv's own under one prefix, with a label per
 * project target this node runs), as text, JSON or a node-feature-discovery
 * feature file; with --selector, the node selection that places a target's
 * pods on the nodes that run it (docs/labels.md). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gpuenv/facts.h"
#include "gpuenv/fit.h"
#include "gpuenv/fs.h"
#include "gpuenv/labels.h"
#include "lock_util.h"

enum {
	OPT_PREFIX = 0x2401,
	OPT_SELECTOR,
	OPT_TARGET,
	OPT_MIG,
	OPT_MACHINE_TYPE,
	OPT_EXPIRY,
	OPT_NO_GFD,
};

#define DMI_PRODUCT_NAME "/sys/class/dmi/id/product_name"
#define DEFAULT_EXPIRY "1h"

struct labels_opts {
	const char *facts, *project, *format, *out, *prefix, *target, *mig, *machine_type_file, *expiry, *kb_dir;
	bool selector, no_gfd;
};

static void print_warnings(struct cli *cli, const struct cli_verb *verb, const gpuenv_labels_t *ls)
{
	if (cli->verbose < 0)
		return;
	for (size_t i = 0; i < ls->nwarnings; i++)
		fprintf(stderr, "%s: %s: warning: %s\n", cli->prog, verb->name, ls->warnings[i]);
}

/* The text to write: to -o FILE atomically (a dot file first, so that
 * NFD never reads it half-written), else to stdout. */
static int emit(struct cli *cli, const struct cli_verb *verb, const char *out, const char *data, size_t len)
{
	return cli_write_output(cli, verb, out, data, len, GPUENV_FS_HIDDEN_TMP);
}

static int emit_json(struct cli *cli, const struct cli_verb *verb, const char *out, json_t *v)
{
	if (!v)
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
	if (!out)
		return cli_print_json(cli, v);
	char *s = json_dumps(v, JSON_INDENT(2));
	cli_json_drop(v);
	if (!s)
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
	size_t n = strlen(s);
	char *t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory building JSON");
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	int st = emit(cli, verb, out, t, n + 1);
	free(t);
	return st;
}

/* GFD's machine type: the file's text, trimmed; NULL when unreadable */
static const char *machine_type(struct cli *cli, const struct cli_verb *verb, gpuenv_arena_t *a, const char *path,
	bool asked)
{
	gpuenv_buf_t b;
	const char *s = NULL;
	gpuenv_buf_init(&b, &cli->ctx, 4096);
	if (gpuenv_fs_read(&cli->ctx, path, 4096, &b) == 0 && b.data) {
		gpuenv_str_t t = gpuenv_str_trim(gpuenv_str_n(b.data, b.len));
		s = gpuenv_arena_strndup(a, t.ptr, t.len);
	} else if (asked && cli->verbose >= 0) {
		char msg[1024];
		gpuenv_error_format(&cli->ctx.err, msg, sizeof(msg));
		fprintf(stderr, "%s: %s: warning: --machine-type-file: %s: nvidia.com/gpu.machine is \"unknown\", as "
			"GFD writes it then\n", cli->prog, verb->name, msg);
	}
	gpuenv_error_clear(&cli->ctx);
	gpuenv_buf_free(&b);
	return s;
}

/* --project DIR, else the current folder when it has a pyproject.toml */
static const char *project_dir(const struct labels_opts *o)
{
	struct stat sb;
	if (o->project)
		return o->project;
	return stat("pyproject.toml", &sb) == 0 ? "." : NULL;
}

/* The prefix of gpuenv's own labels: --prefix, [tool.gpuenv] label-prefix,
 * the default.  0 or an exit status. */
static int pick_prefix(struct cli *cli, const struct cli_verb *verb, const struct labels_opts *o,
	const gpuenv_project_t *pj, const char **out)
{
	if (o->prefix) {
		if (gpuenv_labels_prefix_check(&cli->ctx, o->prefix, "--prefix"))
			return cli_report(cli, CLI_EXIT_USAGE);
		*out = o->prefix;
	} else if (pj && pj->m.label_prefix) {
		char what[512];
		snprintf(what, sizeof(what), "%s: [tool.gpuenv] label-prefix", pj->path);
		if (gpuenv_labels_prefix_check(&cli->ctx, pj->m.label_prefix, what))
			return cli_report(cli, CLI_EXIT_CANNOT);
		*out = pj->m.label_prefix;
	} else
		*out = GPUENV_LABELS_DEFAULT_PREFIX;
	(void)verb;
	return 0;
}

static int do_selector(struct cli *cli, const struct cli_verb *verb, const struct labels_opts *o,
	gpuenv_project_t *pj, const char *prefix, gpuenv_arena_t *a)
{
	int st = 0;
	if (!pj->m.ntargets)
		return cli_usage_error(cli, verb, "%s: --selector: %s declares no [tool.gpuenv.targets]", verb->name,
			pj->path);
	const gpuenv_manifest_target_t *t = cli_project_target(cli, verb, pj, o->target, &st);
	if (!t)
		return st;
	gpuenv_lock_t lk;
	const char *lk_path = NULL;
	char cb[32];
	const char *cuda = gpuenv_project_locked_cuda(pj, t, &lk, &lk_path, cb, sizeof(cb));
	gpuenv_selector_t sel;
	if (gpuenv_labels_selector(&cli->ctx, a, pj->kb, prefix, t->name, &t->target, cuda, &sel))
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (cli->json) {
		json_t *root = json_object(), *ns = json_object();
		json_object_set_new(root, "nodeSelector", ns);
		for (size_t i = 0; i < sel.nsel; i++)
			json_object_set_new(ns, sel.sel[i].key, json_string(sel.sel[i].value));
		if (sel.nterms) {
			json_t *terms = json_array();
			for (size_t k = 0; k < sel.nterms; k++) {
				json_t *ex = json_array();
				for (size_t i = 0; i < sel.nreqs[k]; i++)
					json_array_append_new(ex, json_pack("{s:s, s:s, s:[s]}", "key",
						sel.terms[k][i].key, "operator", sel.terms[k][i].op, "values",
						sel.terms[k][i].value));
				json_array_append_new(terms, json_pack("{s:o}", "matchExpressions", ex));
			}
			json_object_set_new(root, "affinity", json_pack("{s:{s:{s:o}}}", "nodeAffinity",
				"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", terms));
		}
		return emit_json(cli, verb, o->out, root);
	}
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &cli->ctx, 1 << 20);
	if (gpuenv_selector_write_yaml(&sel, t->name, &b) || !b.data) {
		gpuenv_buf_free(&b);
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory writing the selector");
	}
	st = emit(cli, verb, o->out, b.data, b.len);
	gpuenv_buf_free(&b);
	return st;
}

/* PREFIX/target.NAME for every declared target: "true" when this machine
 * runs it by sync --target auto's judgement (a verdict other than no),
 * "false" otherwise */
static int target_labels(struct cli *cli, gpuenv_project_t *pj, const gpuenv_target_t *machine,
	const char *prefix, gpuenv_labels_t *ls)
{
	for (size_t i = 0; i < pj->ntargets; i++) {
		const gpuenv_manifest_target_t *t = &pj->targets[i];
		const char *key = gpuenv_labels_target_key(ls, prefix, t->name), *lk_path = NULL;
		gpuenv_lock_t lk;
		gpuenv_fit_t fit;
		if (!key) {
			if (cli->ctx.err.code == -ENOMEM)
				return cli_report(cli, CLI_EXIT_CANNOT);
			continue;
		}
		if (gpuenv_project_fit(pj, machine, t, &lk, &lk_path, &fit))
			return cli_report(cli, CLI_EXIT_CANNOT);
		if (fit.verdict == GPUENV_KB_UNKNOWN) {
			/* the judgement's reasons, the uncertain one among them */
			gpuenv_buf_t why;
			gpuenv_buf_init(&why, &cli->ctx, 1 << 16);
			for (size_t k = 0; k < fit.nreasons; k++)
				gpuenv_buf_printf(&why, "%s%s", k ? "; " : "", fit.reasons[k]);
			int r = gpuenv_labels_warn(ls, "target %s: %s=true, as sync --target auto would choose it, "
				"though not every check could be made (%s)", t->name, key, why.data ? why.data : "");
			gpuenv_buf_free(&why);
			if (r)
				return cli_report(cli, CLI_EXIT_CANNOT);
		}
		if (gpuenv_labels_set(ls, key, fit.verdict == GPUENV_KB_NO ? "false" : "true"))
			return cli_report(cli, CLI_EXIT_CANNOT);
	}
	return 0;
}

static int do_labels(struct cli *cli, const struct cli_verb *verb, const struct labels_opts *o,
	gpuenv_project_t *pj, const char *prefix, long long expiry, gpuenv_arena_t *a)
{
	const gpuenv_facts_t *facts = NULL;
	gpuenv_target_t machine;
	gpuenv_labels_t ls;
	gpuenv_labels_opts_t lo = { .prefix = prefix, .no_gfd = o->no_gfd };
	int st;

	if ((st = cli_facts_load(cli, verb->name, o->facts, NULL, a, &facts)) != 0)
		return st;
	if (gpuenv_target_from_facts(&cli->ctx, a, facts, SIZE_MAX, &machine))
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (pj && gpuenv_project_machine_from_kb(&cli->ctx, pj->kb, a, &machine) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	lo.mig_strategy = gpuenv_mig_strategy_parse(o->mig ? o->mig : "none");
	/* GFD reads the DMI product name; a snapshot has none of this host's */
	if (o->machine_type_file)
		lo.machine_type = machine_type(cli, verb, a, o->machine_type_file, true);
	else if (!o->facts && !o->no_gfd)
		lo.machine_type = machine_type(cli, verb, a, DMI_PRODUCT_NAME, false);
	gpuenv_labels_init(&ls, a);
	if (gpuenv_labels_from_facts(&cli->ctx, &ls, facts, &machine, &lo))
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (pj && (st = target_labels(cli, pj, &machine, prefix, &ls)) != 0)
		return st;
	gpuenv_labels_sort(&ls);
	print_warnings(cli, verb, &ls);

	if (!strcmp(o->format, "json")) {
		json_t *root = json_object(), *l = json_object(), *w = json_array();
		json_object_set_new(root, "prefix", json_string(prefix));
		json_object_set_new(root, "labels", l);
		json_object_set_new(root, "warnings", w);
		for (size_t i = 0; i < ls.n; i++)
			json_object_set_new(l, ls.items[i].key, json_string(ls.items[i].value));
		for (size_t i = 0; i < ls.nwarnings; i++)
			json_array_append_new(w, cli_json_text(cli, ls.warnings[i], strlen(ls.warnings[i])));
		return emit_json(cli, verb, o->out, root);
	}
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &cli->ctx, GPUENV_LABELS_NFD_MAX * 16);
	int r = !strcmp(o->format, "nfd")
		? gpuenv_labels_write_nfd(&cli->ctx, &ls, expiry, o->facts ? o->facts : NULL, &b)
		: gpuenv_labels_write_text(&ls, &b);
	if (r || !b.data || (r = gpuenv_buf_failed(&b))) {
		gpuenv_buf_free(&b);
		if (!r)
			gpuenv_oom(&cli->ctx, "the labels");
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	st = emit(cli, verb, o->out, b.data, b.len);
	gpuenv_buf_free(&b);
	return st;
}

static int cli_labels(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, OPT_PREFIX },
		{ "selector", no_argument, NULL, OPT_SELECTOR },
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "mig-strategy", required_argument, NULL, OPT_MIG },
		{ "machine-type-file", required_argument, NULL, OPT_MACHINE_TYPE },
		{ "expiry", required_argument, NULL, OPT_EXPIRY },
		{ "no-gfd", no_argument, NULL, OPT_NO_GFD },
		{ NULL, 0, NULL, 0 },
	};
	struct labels_opts o = { 0 };
	gpuenv_project_t pj;
	bool have_pj = false;
	const char *prefix = NULL, *dir;
	long long expiry = -1;
	gpuenv_arena_t a;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case OPT_PREFIX:
			o.prefix = optarg;
			break;
		case OPT_SELECTOR:
			o.selector = true;
			break;
		case OPT_TARGET:
			o.target = optarg;
			break;
		case OPT_MIG:
			o.mig = optarg;
			break;
		case OPT_MACHINE_TYPE:
			o.machine_type_file = optarg;
			break;
		case OPT_EXPIRY:
			o.expiry = optarg;
			break;
		case OPT_NO_GFD:
			o.no_gfd = true;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	o.facts = cli->opt.facts;
	o.project = cli->opt.project;
	o.format = cli->opt.format;
	o.out = cli->opt.output;
	o.kb_dir = cli->opt.kb_dir;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (o.selector) {
		if (!o.target)
			return cli_usage_error(cli, verb, "%s: --selector needs --target NAME", verb->name);
		if (o.format || o.facts || o.mig || o.machine_type_file || o.expiry || o.no_gfd)
			return cli_usage_error(cli, verb, "%s: --selector writes YAML (--json: JSON) from the project "
				"alone; --format, --facts, --mig-strategy, --machine-type-file, --expiry and --no-gfd "
				"do not go with it", verb->name);
	} else if (o.target)
		return cli_usage_error(cli, verb, "%s: --target goes with --selector (the labels judge every "
			"target)", verb->name);
	if (!o.format)
		o.format = cli->json ? "json" : "text";
	else if (cli->json && strcmp(o.format, "json"))
		return cli_usage_error(cli, verb, "%s: --json and --format %s: choose one", verb->name, o.format);
	if (strcmp(o.format, "text") && strcmp(o.format, "json") && strcmp(o.format, "nfd"))
		return cli_usage_error(cli, verb, "%s: --format %s: the formats are text, json and nfd", verb->name,
			o.format);
	if (o.no_gfd && (o.mig || o.machine_type_file))
		return cli_usage_error(cli, verb, "%s: --mig-strategy and --machine-type-file shape GFD's labels; "
			"--no-gfd leaves them out", verb->name);
	if (o.mig && gpuenv_mig_strategy_parse(o.mig) < 0)
		return cli_usage_error(cli, verb, "%s: --mig-strategy %s: GFD's strategies are none, single and "
			"mixed", verb->name, o.mig);
	if (o.expiry && strcmp(o.format, "nfd"))
		return cli_usage_error(cli, verb, "%s: --expiry goes with --format nfd", verb->name);
	if (!strcmp(o.format, "nfd") && (!o.expiry || strcmp(o.expiry, "never"))) {
		const char *e = o.expiry ? o.expiry : DEFAULT_EXPIRY;
		if (gpuenv_labels_expiry_parse(&cli->ctx, e, (long long)time(NULL), &expiry))
			return cli_report(cli, CLI_EXIT_USAGE);
	}
	if (o.prefix && gpuenv_labels_prefix_check(&cli->ctx, o.prefix, "--prefix"))
		return cli_report(cli, CLI_EXIT_USAGE);

	gpuenv_arena_init(&a, &cli->ctx, 0);
	dir = project_dir(&o);
	if (o.selector && !dir) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: --selector: no pyproject.toml here (give --project DIR)",
			verb->name);
		goto done;
	}
	if (dir) {
		if ((st = cli_project_open(cli, verb->name, dir, o.facts, o.kb_dir, NULL, CLI_PROJECT_DECLARED,
			     &pj)) != 0) {
			gpuenv_project_close(&pj);
			goto done;
		}
		have_pj = true;
	}
	if ((st = pick_prefix(cli, verb, &o, have_pj ? &pj : NULL, &prefix)) != 0)
		goto done;
	st = o.selector ? do_selector(cli, verb, &o, &pj, prefix, &a)
			: do_labels(cli, verb, &o, have_pj ? &pj : NULL, prefix, expiry, &a);
done:
	if (have_pj)
		gpuenv_project_close(&pj);
	gpuenv_arena_free(&a);
	return st;
}

const struct cli_verb cli_verb_labels = {
	.name = "labels",
	.run = cli_labels,
	.summary = "this node's Kubernetes labels (GFD's and gpuenv's), or a target's node selector",
	.usage = "gpuenv labels [--facts FILE] [--project DIR] [--format text|json|nfd] [-o FILE]\n"
		 "                     [--prefix P] [--mig-strategy none|single|mixed]\n"
		 "                     [--machine-type-file FILE] [--expiry DURATION|TIME|never] [--no-gfd]\n"
		 "                     [--kb-dir DIR]\n"
		 "       gpuenv labels --selector --target NAME [--project DIR] [--prefix P] [-o FILE]",
	.help = "  --prefix P         the prefix of gpuenv's own labels (default: [tool.gpuenv]\n"
		"                     label-prefix, else " GPUENV_LABELS_DEFAULT_PREFIX ")\n"
		"  --mig-strategy S   GFD's MIG strategy: none (default), single or mixed\n"
		"  --machine-type-file FILE  nvidia.com/gpu.machine from FILE (default: " DMI_PRODUCT_NAME "\n"
		"                     when probing; \"unknown\" with --facts)\n"
		"  --expiry E         nfd: labels expire E (\"1h\" default, \"30m\", \"2d\", an RFC 3339\n"
		"                     time, or never) from now\n"
		"  --no-gfd           gpuenv's own labels only (a node where GFD itself runs)\n"
		"  --selector         the nodeSelector and nodeAffinity (YAML; --json: JSON) that place\n"
		"                     --target NAME's pods only on nodes that run it\n"
		"exit status: 0 written (a node without a GPU or a driver too), 2 usage, 4 the facts,\n"
		"the project or a lock could not be read, or the output not written\n",
	.groups = CLI_G_FACTS | CLI_G_PROJECT | CLI_G_FORMAT | CLI_G_OUTPUT | CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_FACTS, "  --facts FILE       label the machine of a facts snapshot (gpuenv probe --json;\n"
			       "                     '-' reads stdin) instead of probing this one\n" },
		{ CLI_G_PROJECT, "  --project DIR      the project whose targets get a PREFIX/target.NAME label (default:\n"
				 "                     the current folder when it has a pyproject.toml)\n" },
		{ CLI_G_FORMAT, "  --format F         text (default): key=value lines; json; nfd: a node-feature-discovery\n"
				"                     local feature file (features.d/), with # +expiry-time=\n" },
		{ 0, NULL },
	},
};
