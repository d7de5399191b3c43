/* gpuenv doctor: verdicts with fixes over this machine's facts (or a
 * snapshot's). */
#include "cli.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/doctor.h"

static const char *sev_col(struct cli *cli, int sev)
{
	return cli_col(cli, sev == GPUENV_SEV_ERROR ? CLI_RED
			: sev == GPUENV_SEV_WARNING ? CLI_YELLOW
						    : "");
}

void cli_print_verdict(struct cli *cli, const gpuenv_verdict_t *v, const char *label)
{
	printf("%s%-7s%s %s%s%s  %s\n", sev_col(cli, v->severity),
		label ? label : gpuenv_severity_name(v->severity), cli_col(cli, CLI_RESET),
		cli_col(cli, CLI_BOLD), v->id, cli_col(cli, CLI_RESET), v->target ? v->target : "");
	if (v->message)
		printf("        %s\n", v->message);
	if (v->fix)
		printf("        %sfix:%s %s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET), v->fix);
	for (size_t k = 0; k < v->nevidence; k++) {
		const gpuenv_evidence_t *e = &v->evidence[k];
		printf("        %s %s = %s (%s)\n", k ? "       " : "evidence:", e->fact, e->value,
			e->source);
		if (e->kb_source && cli->verbose > 0)
			printf("                    source: %s\n", e->kb_source);
	}
}

/* The built-in KB, loaded on a thread of its own while this machine is
 * probed: the two are independent, and the load (about 1 ms) would
 * otherwise sit on doctor's critical path after the probe.  The thread has
 * a context of its own (a context is not shared between threads). */
struct kb_loader {
	gpuenv_ctx_t ctx;
	gpuenv_kb_t *kb;
	int rc;
	pthread_t th;
	bool started;
};

static void *kb_loader_run(void *p)
{
	struct kb_loader *l = p;

	l->rc = gpuenv_kb_load_files(&l->ctx, NULL, GPUENV_DOCTOR_KB_FILES, &l->kb);
	return NULL;
}

static void kb_loader_start(struct cli *cli, struct kb_loader *l)
{
	memset(l, 0, sizeof(*l));
	l->ctx = cli->ctx;
	gpuenv_error_clear(&l->ctx);
	l->started = pthread_create(&l->th, NULL, kb_loader_run, l) == 0;
}

/* Joins the loader: 0 with *kb set (the caller frees it), or the loader's
 * error copied into cli's context.  Without a thread (pthread_create
 * failed), loads here. */
static int kb_loader_join(struct cli *cli, struct kb_loader *l, gpuenv_kb_t **kb)
{
	if (l->started)
		pthread_join(l->th, NULL);
	else
		kb_loader_run(l);
	*kb = l->kb;
	if (l->rc != 0)
		cli->ctx.err = l->ctx.err;
	return l->rc;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static int cli_doctor(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "env", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	const char *facts_path = NULL, *kb_dir = NULL;
	gpuenv_kb_t *kb = NULL;
	gpuenv_doctor_opts_t dopts = { 0 };
	gpuenv_verdicts_t vs;
	gpuenv_arena_t arena;
	const gpuenv_facts_t *facts = NULL;
	struct kb_loader loader;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case 'e':
			dopts.env = optarg;
			break;
		default:
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	facts_path = cli->opt.facts;
	kb_dir = cli->opt.kb_dir;
	if (kb_dir && (st = cli_kb_load(cli, kb_dir, &kb)) != 0)
		return st;
	if (!kb_dir)
		kb_loader_start(cli, &loader);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	st = cli_facts_load(cli, verb->name, facts_path, dopts.env, &arena, &facts);
	if (!kb_dir && kb_loader_join(cli, &loader, &kb) != 0 && st == 0)
		st = cli_report(cli, CLI_EXIT_CANNOT);
	if (st != 0)
		goto out;
	dopts.kb = kb;

	if (gpuenv_doctor_check(&cli->ctx, &arena, facts, &dopts, &vs) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	st = vs.count[GPUENV_SEV_ERROR] ? CLI_EXIT_DOCTOR_ERRORS
		: vs.count[GPUENV_SEV_WARNING] ? CLI_EXIT_DOCTOR_WARNINGS
					       : CLI_EXIT_OK;
	if (cli->json) {
		json_t *o = gpuenv_verdicts_json(&vs);
		if (o && json_object_set_new(o, "status", json_string(st == CLI_EXIT_OK ? "ok"
				: st == CLI_EXIT_DOCTOR_WARNINGS ? "warnings" : "errors"))) {
			json_decref(o);
			o = NULL;
		}
		if (cli_print_json(cli, o) != 0)
			st = CLI_EXIT_CANNOT;
		goto out;
	}
	{
		const char *hn = facts->host.hostname;
		const char *when = facts->taken_at;
		printf("gpuenv doctor: %zu %s, %zu %s, %zu %s", vs.count[GPUENV_SEV_ERROR],
			plural(vs.count[GPUENV_SEV_ERROR], "error", "errors"),
			vs.count[GPUENV_SEV_WARNING],
			plural(vs.count[GPUENV_SEV_WARNING], "warning", "warnings"),
			vs.count[GPUENV_SEV_INFO], plural(vs.count[GPUENV_SEV_INFO], "info", "infos"));
		if (facts_path)
			printf(" (facts: %s%s%s%s%s)", facts_path, hn ? ", host " : "", hn ? hn : "",
				when ? ", taken " : "", when ? when : "");
		printf("\n");
		for (size_t i = 0; i < vs.n; i++) {
			printf("\n");
			cli_print_verdict(cli, &vs.items[i], NULL);
		}
		if (vs.n == 0) {
			/* say what was judged, so "no problem" on a machine without a
			 * GPU is not mistaken for a healthy GPU stack */
			const char *state = facts->driver.state;
			const char *text = facts->driver.state_text;
			size_t ngpus = facts->ngpus;
			size_t nenvs = facts->nenvs;
			if (state && strcmp(state, "ok") != 0 && text)
				printf("no problem found (%s; %zu Python environment%s checked)\n", text,
					nenvs, nenvs == 1 ? "" : "s");
			else
				printf("no problem found (%zu GPU%s, %zu Python environment%s checked)\n",
					ngpus, ngpus == 1 ? "" : "s", nenvs, nenvs == 1 ? "" : "s");
		}
	}
out:
	gpuenv_arena_free(&arena);
	gpuenv_kb_free(kb);
	return st;
}

const struct cli_verb cli_verb_doctor = {
	.name = "doctor",
	.run = cli_doctor,
	.summary = "verdicts with fixes over this machine's GPU stack (or a snapshot's facts)",
	.usage = "gpuenv doctor [--facts FILE.json] [--env DIR] [--kb-dir DIR] [--json]",
	.help = "  --env DIR          judge only the Python environment at DIR\n"
		"  -v                 also print the knowledge-base source of each fact\n"
		"exit status: 0 no error or warning (infos only), 1 warnings, 3 errors,\n"
		"  2 usage, 4 the facts could not be read or judged, or the output not written\n"
		"  (docs/exit-codes.md)\n",
	.groups = CLI_G_FACTS | CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_FACTS, "  --facts FILE.json  judge a snapshot ('gpuenv probe --json' output; - = stdin)\n"
			       "                     instead of probing this machine\n" },
		{ CLI_G_KB_DIR, "  --kb-dir DIR       knowledge-base files (cuda.toml, torch.toml, ngc.toml) from DIR\n" },
		{ 0, NULL },
	},
};
