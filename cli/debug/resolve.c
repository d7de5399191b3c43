/* gpuenv debug resolve: the resolver over a packse-format scenario file,
 * through the in-memory provider (no index). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/fs.h"
#include "gpuenv/resolve.h"

static int cli_debug_resolve(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	gpuenv_arena_t ar;
	gpuenv_scenario_t sc;
	gpuenv_resolve_req_t req;
	gpuenv_resolution_t res;
	int c, st, r, repeat = 0;
	const char *dump = NULL;
	static const struct option opts[] = {
		{ "time", required_argument, NULL, 't' },
		{ "dump", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'd')
			dump = optarg;
		if (c == 't') {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 100000)
				return cli_usage_error(cli, verb, "--time N: N from 1 to 100000, not '%s'",
					optarg);
			repeat = (int)n;
		}
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no SCENARIO.toml given", verb->name);
	if (optind + 1 < argc)
		return cli_usage_error(cli, verb, "%s: one scenario at a time", verb->name);
	gpuenv_arena_init(&ar, &cli->ctx, 0);
	if (gpuenv_scenario_load(&cli->ctx, &ar, argv[optind], &sc)) {
		st = cli_report(cli, cli->ctx.err.code == -ENOMEM ? CLI_EXIT_CANNOT : CLI_EXIT_FAIL);
		gpuenv_arena_free(&ar);
		return st;
	}
	gpuenv_scenario_request(&sc, &req);
	if (dump) {
		/* the scenario as the resolver sees it (the in-memory provider's
		 * filtering applied), the way a real resolution is dumped */
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, &cli->ctx, GPUENV_SCENARIO_MAX);
		r = gpuenv_scenario_write(&cli->ctx, &req, &sc.provider, sc.name, 0, &b);
		if (!r)
			r = gpuenv_fs_write_buf(&cli->ctx, dump, &b, 0644, 0);
		gpuenv_buf_free(&b);
		if (r) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			gpuenv_arena_free(&ar);
			return st;
		}
	}
	if (repeat) {
		/* the resolver alone, metadata in memory: N runs, the median CPU
		 * time (wall time on a shared machine says little) */
		double *ms = calloc((size_t)repeat, sizeof(double));
		if (!ms) {
			gpuenv_arena_free(&ar);
			return cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
		}
		for (int i = 0; i < repeat; i++) {
			gpuenv_arena_t run;
			struct timespec t0, t1;
			gpuenv_arena_init(&run, &cli->ctx, 0);
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
			gpuenv_resolve(&cli->ctx, &run, &req, &sc.provider, &res);
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
			ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
			gpuenv_arena_free(&run);
		}
		for (int i = 1; i < repeat; i++)
			for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
				double x = ms[j];
				ms[j] = ms[j - 1];
				ms[j - 1] = x;
			}
		fprintf(stderr, "resolve: median %.3f ms of CPU in %d runs (min %.3f, max %.3f)\n",
			ms[repeat / 2], repeat, ms[0], ms[repeat - 1]);
		free(ms);
	}
	r = gpuenv_resolve(&cli->ctx, &ar, &req, &sc.provider, &res);
	if (r && r != GPUENV_ENOSOLUTION) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		gpuenv_arena_free(&ar);
		return st;
	}
	st = r ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (cli->json) {
		json_t *o = json_object(), *pk = json_object(), *ex = json_object();
		for (size_t i = 0; i < res.npkgs; i++) {
			json_object_set_new(pk, res.pkgs[i].name, json_string(res.pkgs[i].cand->version));
			if (res.pkgs[i].nextras) {
				json_t *a = json_array();
				for (size_t k = 0; k < res.pkgs[i].nextras; k++)
					json_array_append_new(a, json_string(res.pkgs[i].extras[k]));
				json_object_set_new(ex, res.pkgs[i].name, a);
			}
		}
		json_object_set_new(o, "scenario", json_string(sc.name));
		json_object_set_new(o, "universal", json_boolean(sc.universal));
		json_object_set_new(o, "python", json_string(sc.python));
		json_object_set_new(o, "platform", json_string(sc.platform));
		json_object_set_new(o, "satisfiable", json_boolean(r == 0));
		json_object_set_new(o, "packages", pk);
		json_object_set_new(o, "extras", ex);
		json_object_set_new(o, "explanation",
			res.explanation ? cli_json_text(cli, res.explanation, strlen(res.explanation))
					: json_null());
		json_object_set_new(o, "decisions", json_integer((json_int_t)res.decisions));
		json_object_set_new(o, "conflicts", json_integer((json_int_t)res.conflicts));
		json_object_set_new(o, "packages_asked", json_integer((json_int_t)res.packages_asked));
		json_object_set_new(o, "assignments", json_integer((json_int_t)res.assignments));
		json_object_set_new(o, "partial_bytes_peak",
			json_integer((json_int_t)res.partial_bytes_peak));
		json_object_set_new(o, "learned", json_integer((json_int_t)res.learned));
		json_object_set_new(o, "learned_dropped",
			json_integer((json_int_t)res.learned_dropped));
		json_object_set_new(o, "reductions", json_integer((json_int_t)res.reductions));
		json_object_set_new(o, "watch_looks", json_integer((json_int_t)res.watch_looks));
		json_object_set_new(o, "watch_found", json_integer((json_int_t)res.watch_found));
		json_object_set_new(o, "watch_passed", json_integer((json_int_t)res.watch_passed));
		int pst = cli_print_json(cli, o);
		if (pst)
			st = pst;
	} else if (r) {
		printf("no solution for %s:\n", sc.name[0] ? sc.name : argv[optind]);
		/* line by line: the text escape keeps each line's bytes safe */
		for (const char *l = res.explanation; *l;) {
			const char *e = strchr(l, '\n');
			size_t n = e ? (size_t)(e - l) : strlen(l);
			cli_put_text(cli, stdout, l, n);
			putchar('\n');
			l += n + (e != NULL);
		}
	} else {
		for (size_t i = 0; i < res.npkgs; i++)
			printf("%s==%s\n", res.pkgs[i].name, res.pkgs[i].cand->version);
	}
	gpuenv_arena_free(&ar);
	return st;
}

const struct cli_verb cli_verb_debug_resolve = {
	.name = "resolve",
	.run = cli_debug_resolve,
	.summary = "resolve a packse-format scenario file in memory (no index)",
	.usage = "gpuenv debug resolve SCENARIO.toml [--json] [--time N] [--dump OUT.toml]",
	.help = "Prints name==version lines sorted by name, or, when the requirements\n"
		"cannot be met, PubGrub's explanation and exits 1.  --json adds the\n"
		"target, the extras, and the resolver's counters.\n"
		"  --time N   resolve N times first and print the median time of the\n"
		"             resolver alone (metadata in memory) on stderr\n"
		"  --dump OUT.toml  also write the request and the candidates the resolver\n"
		"             sees (filtered for the target) as a scenario file\n",
};
