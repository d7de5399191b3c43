/* The target's hardware in sync's source builds: the variables of
 * lib/builder/hw.c for the builder, the toolkit problem kept for the builds
 * that need CUDA, diagnose's reading of a failed build's log
 * (docs/build.md). */
#include "build_hw.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "gpuenv/diagnose.h"
#include "gpuenv/fit.h"

int cli_build_hw_setup(struct cli *cli, const struct cli_sync_opts *o, struct cli_project *pj,
	const gpuenv_manifest_target_t *t, const gpuenv_lock_t *lk, struct cli_build_hw *out)
{
	const gpuenv_facts_t *facts = NULL;
	gpuenv_build_hw_opts_t ho;
	int st;

	memset(out, 0, sizeof(*out));
	bool sources = false; /* nothing to build: nothing to decide (a no-op sync stays cheap) */
	for (size_t i = 0; i < lk->npackages && !sources; i++)
		sources = !lk->packages[i].nwheels && (lk->packages[i].sdist || lk->packages[i].directory);
	if (!sources)
		return 0;
	/* --facts describes this machine, its toolkits included; else this
	 * machine's own (sync's light probe leaves them out) */
	if (o->lo.facts_path) {
		if ((st = cli_facts_load(cli, o->verb->name, o->lo.facts_path, NULL, &pj->arena, &facts)) != 0)
			return st;
	} else if (gpuenv_build_hw_toolkits(&cli->ctx, &pj->arena, &facts) != 0) {
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	out->cuda = gpuenv_fit_backend_cuda(lk->target.backend, out->cuda_buf, sizeof(out->cuda_buf));
	for (size_t i = 0; i < lk->npackages; i++)
		if (strcmp(lk->packages[i].name, "torch") == 0)
			out->torch = lk->packages[i].version;
	memset(&ho, 0, sizeof(ho));
	ho.facts = facts;
	ho.targets = &t->target;
	ho.ntargets = 1;
	ho.cuda = out->cuda;
	ho.kb = pj->kb;
	gpuenv_build_host_probe(&cli->ctx, &ho.host);
	if (gpuenv_build_hw(&cli->ctx, &pj->arena, &ho, &out->hw) == 0)
		return 0;
	if (cli->ctx.err.code == -ENOMEM)
		return cli_report(cli, CLI_EXIT_CANNOT);
	out->problem = true;
	out->err = cli->ctx.err;
	gpuenv_error_clear(&cli->ctx);
	ho.cuda = NULL;
	if (gpuenv_build_hw(&cli->ctx, &pj->arena, &ho, &out->hw) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return 0;
}

bool cli_build_hw_against(const gpuenv_manifest_t *m, const char *name)
{
	for (size_t i = 0; i < m->nbuild_against_env; i++)
		if (strcmp(m->build_against_env[i], name) == 0)
			return true;
	return false;
}

static bool builds(const gpuenv_sync_action_t *a)
{
	return a->source && (a->op == GPUENV_SYNC_INSTALL || a->op == GPUENV_SYNC_UPGRADE ||
		a->op == GPUENV_SYNC_REINSTALL);
}

bool cli_build_hw_refuse(struct cli *cli, const struct cli_build_hw *h, const gpuenv_manifest_t *m,
	const gpuenv_sync_plan_t *pl, int *st)
{
	bool any = false;
	for (size_t i = 0; i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		if (!builds(a))
			continue;
		any = true;
		if (h->problem && cli_build_hw_against(m, a->name)) {
			/* built against the environment because its build uses
			 * torch's CUDA: no point in starting it */
			cli->ctx.err = h->err;
			snprintf(cli->ctx.err.msg, sizeof(cli->ctx.err.msg), "%.64s (build-against-env, built with the "
				"target's CUDA): %.380s", a->name, h->err.msg);
			*st = cli_report(cli, CLI_EXIT_FAIL);
			return true;
		}
	}
	for (size_t i = 0; any && i < h->hw.nnotes; i++)
		fprintf(stderr, "note: %s\n", h->hw.notes[i]);
	return false;
}

void cli_build_hw_explain(struct cli *cli, struct cli_project *pj, const struct cli_build_hw *h,
	const char *log)
{
	gpuenv_diag_facts_t df;
	const char *text = NULL;

	if (h->problem) {
		char msg[sizeof(h->err.msg) + 64];
		gpuenv_error_format(&h->err, msg, sizeof(msg));
		fprintf(stderr, "note: the build ran without CUDA_HOME or TORCH_CUDA_ARCH_LIST: %s\n", msg);
		if (h->err.hint[0])
			fprintf(stderr, "hint: %s\n", h->err.hint);
	}
	if (!log)
		return;
	memset(&df, 0, sizeof(df));
	df.cc_major = df.cc_minor = -1;
	df.torch = h->torch;
	df.torch_cuda = h->cuda;
	gpuenv_error_t keep = cli->ctx.err; /* the build's own error is reported after */
	if (gpuenv_build_hw_explain(&cli->ctx, &pj->arena, pj->kb, log, &df, &text) == 0 && text) {
		fprintf(stderr, "diagnose (%s):\n", log);
		for (const char *p = text; *p;) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			fprintf(stderr, "  %.*s\n", (int)n, p);
			p += n + (e != NULL);
		}
	}
	cli->ctx.err = keep;
}
