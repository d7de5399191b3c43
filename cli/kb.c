/* gpuenv kb: questions to the compatibility knowledge base.  Every answer
 * cites the rows it comes from: "[n]" marks in the text and a numbered
 * source list at the end; in JSON a "source" object on every fact. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"
#include "gpuenv/kb_answer.h"

/* ---- shared ------------------------------------------------------------------ */

#define MAX_CITES 128

struct cites {
	const gpuenv_kb_row_t *row[MAX_CITES];
	size_t n;
};

/* " [3]" for a row (numbering rows in order of first use) into buf */
static const char *cite(struct cites *c, const gpuenv_kb_row_t *row, char *buf, size_t size)
{
	size_t i;

	buf[0] = '\0';
	if (!row)
		return buf;
	for (i = 0; i < c->n; i++)
		if (c->row[i] == row)
			break;
	if (i == c->n) {
		if (c->n == MAX_CITES)
			return buf;
		c->row[c->n++] = row;
	}
	snprintf(buf, size, " [%zu]", i + 1);
	return buf;
}

static void print_cites(const struct cites *c)
{
	char where[64];

	if (!c->n)
		return;
	printf("\nsources:\n");
	for (size_t i = 0; i < c->n; i++) {
		const gpuenv_kb_row_t *r = c->row[i];
		printf("  [%zu] %s: %.*s%s\n", i + 1, gpuenv_kb_row_where(r, where, sizeof(where)),
			GPUENV_STR_ARG(r->source), r->secondary ? " (secondary source)" : "");
	}
}

/* Each question loads only the files its answer comes from. */
#define F(id) GPUENV_KB_FILE(GPUENV_KB_##id)

static int load_kb(struct cli *cli, const char *dir, unsigned files, gpuenv_kb_t **kb)
{
	if (gpuenv_kb_load_files(&cli->ctx, dir, files, kb))
		return cli_report(cli, CLI_EXIT_CANNOT); /* docs/exit-codes.md */
	return 0;
}

static int parse_driver(struct cli *cli, const struct cli_verb *verb, const char *s,
	gpuenv_kb_ver_t *v)
{
	if (!gpuenv_kb_ver_parse(gpuenv_str(s), v) || v->n > 3)
		return cli_usage_error(cli, verb, "%s: '%s' is not a driver version (as 535.104.05)",
			verb->name, s);
	return 0;
}

/* A usage error the library worded (ctx->err, with its hint). */
static int usage_report(struct cli *cli, const struct cli_verb *verb)
{
	cli_report(cli, CLI_EXIT_USAGE);
	fprintf(stderr, "usage: %s\n", verb->usage);
	return CLI_EXIT_USAGE;
}

enum { OPT_GPU = 0x2002, OPT_DRIVER, OPT_VERSION, OPT_CUDA };

/* Options every kb subcommand takes, plus the ones in extra. */
struct kbopts {
	const char *kb_dir, *gpu, *driver, *version, *cuda;
};

static int getopts(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	const char *allowed, struct kbopts *o, int *status)
{
	static const struct option all[] = {
		{ "gpu", required_argument, NULL, OPT_GPU },
		{ "driver", required_argument, NULL, OPT_DRIVER },
		{ "version", required_argument, NULL, OPT_VERSION },
		{ "cuda", required_argument, NULL, OPT_CUDA },
		{ NULL, 0, NULL, 0 },
	};
	struct option mine[8];
	size_t n = 0;
	int c;

	for (size_t i = 0; all[i].name; i++)
		if (strchr(allowed, (char)('b' + i)))
			mine[n++] = all[i];
	mine[n] = (struct option){ NULL, 0, NULL, 0 };
	while ((c = cli_getopt(cli, verb, argc, argv, "", mine, status)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return -1;
		case OPT_GPU:
			o->gpu = optarg;
			break;
		case OPT_DRIVER:
			o->driver = optarg;
			break;
		case OPT_VERSION:
			o->version = optarg;
			break;
		case OPT_CUDA:
			o->cuda = optarg;
			break;
		default:
			*status = CLI_EXIT_USAGE;
			return -1;
		}
	}
	o->kb_dir = cli->opt.kb_dir;
	return 0;
}

/* "b" gpu, "c" driver, "d" version, "e" cuda (letters: "b" + the index in `all`) */
#define O_GPU "b"
#define O_DRIVER "c"
#define O_VERSION "d"
#define O_CUDA "e"

static const char *verdict_word(int v)
{
	return v == GPUENV_KB_YES ? "yes" : v == GPUENV_KB_NO ? "no" : "unknown";
}

static void print_driver_line(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *d, struct cites *c)
{
	gpuenv_kb_driver_max_t mx;
	char c1[16], c2[16];

	gpuenv_kb_driver_max_cuda(kb, d, &mx);
	printf("driver %.*s: ", GPUENV_STR_ARG(d->str));
	if (mx.ga)
		printf("CUDA <= %.*s (%.*s)%s", GPUENV_STR_ARG(mx.ga->cuda.str),
			GPUENV_STR_ARG(mx.ga->label), cite(c, &mx.ga->row, c1, sizeof(c1)));
	else
		printf("older than every toolkit in the knowledge base");
	if (mx.mvc && (!mx.ga || (int64_t)mx.ga->cuda.part[0] <= mx.mvc->cuda_major))
		printf("; every CUDA %lld.x through minor-version compatibility%s",
			(long long)mx.mvc->cuda_major, cite(c, &mx.mvc->row, c2, sizeof(c2)));
	printf("\n");
}

static int kb_torch(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct kbopts o = { 0 };
	gpuenv_kb_t *kb = NULL;
	gpuenv_kb_target_t t;
	gpuenv_kb_gpu_match_t gm;
	gpuenv_arena_t arena;
	gpuenv_kb_torch_question_t q;
	gpuenv_kb_torch_answer_t ans;
	struct cites cites = { { 0 }, 0 };
	int st = 0;

	if (getopts(cli, verb, argc, argv, O_GPU O_DRIVER O_VERSION, &o, &st))
		return st;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	memset(&t, 0, sizeof(t));
	if (o.driver && parse_driver(cli, verb, o.driver, &t.driver))
		return CLI_EXIT_USAGE;
	t.has_driver = o.driver != NULL;
	if ((st = load_kb(cli, o.kb_dir, F(TORCH) | F(CUDA) | F(GPUS) | F(WHEELS), &kb)))
		return st;
	if (o.gpu) {
		if (gpuenv_kb_gpu_lookup(kb, o.gpu, &gm)) {
			st = cli_report(cli, CLI_EXIT_FAIL);
			gpuenv_kb_free(kb);
			return st;
		}
		t.has_cc = true;
		t.cc_major = gm.gpu->cc.part[0];
		t.cc_minor = gm.gpu->cc.part[1];
		t.gpu = gm.gpu;
	}
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	q.target = &t;
	q.version = o.version;
	if (gpuenv_kb_ask_torch(kb, &q, &arena, &ans)) {
		st = cli->ctx.err.code == GPUENV_EVERSION ? usage_report(cli, verb)
							  : cli_report(cli, CLI_EXIT_FAIL);
		goto out;
	}
	if (cli->json) {
		st = cli_print_json(cli, gpuenv_kb_torch_json(kb, &q, &ans, o.gpu ? &gm : NULL));
	} else {
		char c1[16], c2[16];
		const gpuenv_kb_pick_t *pick = &ans.pick;
		if (o.gpu) {
			const gpuenv_kb_arch_t *a = gpuenv_kb_arch(kb, t.cc_major, t.cc_minor);
			printf("GPU %.*s: compute capability %.*s", GPUENV_STR_ARG(gm.gpu->name),
				GPUENV_STR_ARG(gm.gpu->cc.str));
			if (a)
				printf(" (%.*s, %.*s)", GPUENV_STR_ARG(a->sm.str),
					GPUENV_STR_ARG(a->architecture));
			cite(&cites, &gm.gpu->row, c1, sizeof(c1));
			c2[0] = '\0';
			if (a)
				cite(&cites, &a->row, c2, sizeof(c2));
			printf("%s%s\n", c1, c2);
		}
		if (o.driver)
			print_driver_line(kb, &t.driver, &cites);
		if (ans.judged) {
			if (pick->variant) {
				printf("gpuenv would install torch %.*s %.*s (CUDA %.*s)",
					GPUENV_STR_ARG(pick->variant->torch.str),
					GPUENV_STR_ARG(pick->variant->tag),
					GPUENV_STR_ARG(pick->variant->cuda.str));
				if (pick->driver_upgrade)
					printf(" after upgrading the driver to >= %.*s",
						GPUENV_STR_ARG(pick->driver_upgrade->driver_linux.str));
				printf("%s\n", cite(&cites, &pick->variant->row, c1, sizeof(c1)));
			}
			if (ans.yes)
				printf("%zu of %zu torch builds run there.\n\n", ans.yes, ans.n);
			else
				printf("no torch build in the knowledge base runs there.\n\n");
		}
		for (size_t i = 0; i < ans.n; i++) {
			const gpuenv_kb_torch_variant_t *v = ans.builds[i];
			const gpuenv_kb_torch_verdict_t *vd = &ans.verdicts[i];
			printf("torch %-5.*s %-6.*s CUDA %-5.*s %-12.*s %s%s\n", GPUENV_STR_ARG(v->torch.str),
				GPUENV_STR_ARG(v->tag), GPUENV_STR_ARG(v->cuda.str), GPUENV_STR_ARG(v->channel),
				ans.judged ? verdict_word(vd->verdict) : "",
				cite(&cites, &v->row, c1, sizeof(c1)));
			if (!ans.judged) {
				char r[64];
				if (vd->arch) {
					printf("    code: %s", gpuenv_kb_sms_range(vd->arch->sm.v,
						vd->arch->sm.n, r, sizeof(r)));
					printf(", PTX %s%s\n", gpuenv_kb_sms_range(vd->arch->ptx.v,
						vd->arch->ptx.n, r, sizeof(r)),
						cite(&cites, &vd->arch->row, c2, sizeof(c2)));
				} else
					printf("    code: not in the knowledge base\n");
				continue;
			}
			for (size_t k = 0; k < vd->n_reason; k++) {
				const gpuenv_kb_reason_t *r = &vd->reason[k];
				cite(&cites, r->src, c1, sizeof(c1));
				cite(&cites, r->src2, c2, sizeof(c2));
				printf("    %s %s%s%s\n",
					r->verdict == GPUENV_KB_YES ? "+" : r->verdict == GPUENV_KB_NO ? "-" : "?",
					r->text, c1, c2);
			}
		}
		print_cites(&cites);
	}
	if (!st && ans.judged && !ans.yes)
		st = CLI_EXIT_FAIL;
out:
	gpuenv_arena_free(&arena);
	gpuenv_kb_free(kb);
	return st;
}

/* ---- kb driver ---------------------------------------------------------------------- */

static int kb_driver(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct kbopts o = { 0 };
	gpuenv_kb_t *kb = NULL;
	struct cites cites = { { 0 }, 0 };
	char c1[16], c2[16];
	int st = 0;

	if (getopts(cli, verb, argc, argv, O_CUDA, &o, &st))
		return st;
	if (!o.cuda && optind >= argc)
		return cli_usage_error(cli, verb, "%s: give --cuda X.Y or a DRIVER version", verb->name);
	if (o.cuda && optind < argc)
		return cli_usage_error(cli, verb, "%s: --cuda and a DRIVER version are two questions; ask one",
			verb->name);
	if (optind + 1 < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name,
			argv[optind + 1]);
	if ((st = load_kb(cli, o.kb_dir, F(CUDA), &kb)))
		return st;
	if (o.cuda) {
		const gpuenv_kb_toolkit_t *ga;
		const gpuenv_kb_minor_compat_t *mvc;
		gpuenv_kb_ver_t cv;
		if (gpuenv_kb_cuda_parse(&cli->ctx, gpuenv_str(o.cuda), &cv)) {
			st = usage_report(cli, verb);
			goto out;
		}
		if (gpuenv_kb_cuda_min_driver(kb, gpuenv_str(o.cuda), &ga)) {
			st = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		mvc = gpuenv_kb_minor_compat(kb, ga->cuda.part[0]);
		if (cli->json) {
			st = cli_print_json(cli, gpuenv_kb_cuda_json(kb, ga));
			goto out;
		}
		printf("CUDA %.*s needs driver >= %.*s on Linux", GPUENV_STR_ARG(ga->cuda.str),
			GPUENV_STR_ARG(ga->driver_linux.str));
		if (ga->driver_windows.n)
			printf(" (>= %.*s on Windows)", GPUENV_STR_ARG(ga->driver_windows.str));
		printf(": %.*s%s\n", GPUENV_STR_ARG(ga->label), cite(&cites, &ga->row, c1, sizeof(c1)));
		for (size_t i = 0; i < kb->n_toolkit; i++) {
			const gpuenv_kb_toolkit_t *t = &kb->toolkit[i];
			if (gpuenv_kb_ver_cmp(&t->cuda, &ga->cuda) != 0 || t->update == 0)
				continue;
			printf("  %.*s: >= %.*s%s\n", GPUENV_STR_ARG(t->label),
				GPUENV_STR_ARG(t->driver_linux.str), cite(&cites, &t->row, c1, sizeof(c1)));
		}
		if (mvc) {
			printf("minor-version compatibility: any CUDA %lld.x runs on drivers >= %.*s",
				(long long)mvc->cuda_major, GPUENV_STR_ARG(mvc->driver_min.str));
			if (mvc->driver_below.n)
				printf(" (and < %.*s; newer drivers by backward compatibility)",
					GPUENV_STR_ARG(mvc->driver_below.str));
			printf(", with limited features%s\n", cite(&cites, &mvc->row, c2, sizeof(c2)));
		}
		print_cites(&cites);
	} else {
		gpuenv_kb_ver_t d;
		gpuenv_kb_driver_max_t mx;
		if (parse_driver(cli, verb, argv[optind], &d)) {
			st = CLI_EXIT_USAGE;
			goto out;
		}
		if (cli->json) {
			st = cli_print_json(cli, gpuenv_kb_driver_json(kb, &d));
			goto out;
		}
		gpuenv_kb_driver_max_cuda(kb, &d, &mx);
		printf("driver %.*s", GPUENV_STR_ARG(d.str));
		if (mx.branch)
			printf(" (branch %.*s, %.*s, end of life %.*s%s)", GPUENV_STR_ARG(mx.branch->branch),
				GPUENV_STR_ARG(mx.branch->designation), GPUENV_STR_ARG(mx.branch->eol),
				cite(&cites, &mx.branch->row, c1, sizeof(c1)));
		printf("\n");
		if (mx.ga)
			printf("  runs CUDA <= %.*s: %.*s needs >= %.*s%s\n", GPUENV_STR_ARG(mx.ga->cuda.str),
				GPUENV_STR_ARG(mx.ga->label), GPUENV_STR_ARG(mx.ga->driver_linux.str),
				cite(&cites, &mx.ga->row, c1, sizeof(c1)));
		else
			printf("  older than the minimum driver of every toolkit in the knowledge base\n");
		if (mx.mvc && (!mx.ga || (int64_t)mx.ga->cuda.part[0] <= mx.mvc->cuda_major))
			printf("  runs every CUDA %lld.x through minor-version compatibility (drivers >= %.*s), "
			       "with limited features%s\n",
				(long long)mx.mvc->cuda_major, GPUENV_STR_ARG(mx.mvc->driver_min.str),
				cite(&cites, &mx.mvc->row, c2, sizeof(c2)));
		print_cites(&cites);
		if (!mx.ga && !mx.mvc)
			st = CLI_EXIT_FAIL;
	}
out:
	gpuenv_kb_free(kb);
	return st;
}

/* ---- kb gpu ----------------------------------------------------------------------------- */

static int kb_gpu(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct kbopts o = { 0 };
	gpuenv_kb_t *kb = NULL;
	gpuenv_kb_gpu_match_t m[16];
	struct cites cites = { { 0 }, 0 };
	char c1[16], c2[16];
	size_t n;
	int st = 0;
	bool ambiguous = false;

	if (getopts(cli, verb, argc, argv, "", &o, &st))
		return st;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: which GPU?", verb->name);
	if (optind + 1 < argc)
		return cli_usage_error(cli, verb, "%s: one NAME (quote names with spaces)", verb->name);
	if ((st = load_kb(cli, o.kb_dir, F(GPUS) | F(CUDA) | F(TORCH), &kb)))
		return st;
	/* one lookup for every verb: kb torch --gpu, kb gpu, kb image --gpu */
	{
		gpuenv_kb_gpu_match_t one;
		if (gpuenv_kb_gpu_lookup(kb, argv[optind], &one) != 0) {
			ambiguous = kb->ctx->err.code == GPUENV_EDUPLICATE;
			if (!ambiguous) {
				st = cli_report(cli, CLI_EXIT_FAIL);
				goto out;
			}
		}
	}
	n = gpuenv_kb_gpu_find(kb, argv[optind], m, 16);
	if (n > 16)
		n = 16;
	if (cli->json) {
		st = cli_print_json(cli, gpuenv_kb_gpus_json(kb, argv[optind], m, n, ambiguous));
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		const gpuenv_kb_gpu_t *g = m[i].gpu;
		const gpuenv_kb_arch_t *a = gpuenv_kb_arch(kb, g->cc.part[0], g->cc.part[1]);
		const gpuenv_kb_toolkit_t *ga;
		const gpuenv_kb_cuda_arch_list_t *first =
			gpuenv_kb_arch_first_cuda(kb, g->cc.part[0], g->cc.part[1], &ga);
		const gpuenv_kb_torch_arch_list_t *al[256];
		gpuenv_kb_cover_t cov[256];
		size_t nb;
		bool any = false;

		printf("%s%.*s: compute capability %.*s", i ? "\n" : "", GPUENV_STR_ARG(g->name),
			GPUENV_STR_ARG(g->cc.str));
		if (a)
			printf(", %.*s, %.*s", GPUENV_STR_ARG(a->sm.str), GPUENV_STR_ARG(a->architecture));
		cite(&cites, &g->row, c1, sizeof(c1));
		c2[0] = '\0';
		if (a)
			cite(&cites, &a->row, c2, sizeof(c2));
		printf(", %.*s%s%s\n", GPUENV_STR_ARG(g->segment), c1, c2);
		for (size_t k = 0; k < kb->n_pci; k++) {
			const gpuenv_kb_pci_t *p = &kb->pci[k];
			char id[64];
			if (p->gpu_row != g)
				continue;
			if (p->subsys_vendor >= 0)
				snprintf(id, sizeof(id), "0x%04x (subsystem 0x%04x:0x%04x)",
					(unsigned)p->device_id, (unsigned)p->subsys_vendor,
					(unsigned)p->subsys_device);
			else
				snprintf(id, sizeof(id), "0x%04x", (unsigned)p->device_id);
			printf("%s %s \"%.*s\"%s", any ? "," : "  PCI:", id, GPUENV_STR_ARG(p->name),
				cite(&cites, &p->row, c1, sizeof(c1)));
			any = true;
		}
		if (any)
			printf("\n");
		if (first && ga) {
			cite(&cites, &first->row, c1, sizeof(c1));
			cite(&cites, &ga->row, c2, sizeof(c2));
			printf("  oldest CUDA that builds sm_%u%u: %.*s (driver >= %.*s)%s%s\n",
				g->cc.part[0], g->cc.part[1], GPUENV_STR_ARG(first->cuda_min.str),
				GPUENV_STR_ARG(ga->driver_linux.str), c1, c2);
		}
		if (a && a->last_cuda_major >= 0)
			printf("  last supported by CUDA %lld.x%s%.*s%s\n", (long long)a->last_cuda_major,
				a->last_driver_branch.ptr ? " and driver branch " : "",
				a->last_driver_branch.ptr ? (int)a->last_driver_branch.len : 0,
				a->last_driver_branch.ptr ? a->last_driver_branch.ptr : "",
				cite(&cites, &a->row, c1, sizeof(c1)));
		printf("  torch builds with code for it:");
		nb = gpuenv_kb_gpu_builds(kb, g->cc.part[0], g->cc.part[1], al, cov, 256);
		for (size_t k = 0; k < nb && k < 256; k++)
			printf("%s %.*s %.*s%s%s", k ? "," : "", GPUENV_STR_ARG(al[k]->torch.str),
				GPUENV_STR_ARG(al[k]->tag), cov[k].via_ptx ? " (PTX)" : "",
				cite(&cites, &al[k]->row, c1, sizeof(c1)));
		printf("%s\n", nb ? "" : " none known");
	}
	print_cites(&cites);
done:
	/* the candidates are listed; the name still does not say which */
	if (ambiguous)
		st = cli_report(cli, CLI_EXIT_FAIL);
out:
	gpuenv_kb_free(kb);
	return st;
}

/* ---- kb image ------------------------------------------------------------------------------ */

static void print_image_runs(const gpuenv_kb_image_ref_t *img,
	const gpuenv_kb_image_verdict_t *iv, const gpuenv_kb_ver_t *d, struct cites *cites)
{
	const gpuenv_kb_container_t *c = img->row;
	char c1[16];

	if (iv->by_notes) {
		cite(cites, &c->row, c1, sizeof(c1));
		if (iv->runs == GPUENV_KB_RUNS_GA)
			printf("  driver %.*s runs it: branch R%u, and the release notes require %.*s or "
			       "later%s\n", GPUENV_STR_ARG(d->str), d->part[0],
				GPUENV_STR_ARG(c->driver_min_branch), c1);
		else if (iv->runs == GPUENV_KB_RUNS_FORWARD_COMPAT)
			printf("  driver %.*s runs it through the forward-compatibility package it ships, "
			       "on data-center GPUs only (the release notes allow %.*s or later of that "
			       "branch)%s\n", GPUENV_STR_ARG(d->str), GPUENV_STR_ARG(iv->fc_driver->str), c1);
		else if (iv->not_datacenter)
			printf("  driver %.*s does not run it on this GPU: the release notes allow %.*s "
			       "through forward compatibility on data-center GPUs only; upgrade to %.*s or "
			       "later%s\n", GPUENV_STR_ARG(d->str), GPUENV_STR_ARG(iv->fc_driver->str),
				GPUENV_STR_ARG(c->driver_min_branch), c1);
		else
			printf("  driver %.*s does not run it: the release notes require %.*s or later, or "
			       "one of the data-center drivers listed above (minor-version compatibility "
			       "does not apply); upgrade the driver%s\n", GPUENV_STR_ARG(d->str),
				GPUENV_STR_ARG(c->driver_min_branch), c1);
		return;
	}
	if (iv->runs == GPUENV_KB_RUNS_GA)
		printf("  driver %.*s runs it\n", GPUENV_STR_ARG(d->str));
	else if (iv->runs == GPUENV_KB_RUNS_MINOR_COMPAT)
		printf("  driver %.*s runs it only through minor-version compatibility (>= %.*s), with "
		       "limited features%s\n", GPUENV_STR_ARG(d->str),
			GPUENV_STR_ARG(iv->dc.mvc->driver_min.str),
			cite(cites, &iv->dc.mvc->row, c1, sizeof(c1)));
	else if (iv->runs == GPUENV_KB_RUNS_NO && iv->dc.ga)
		printf("  driver %.*s does not run it: upgrade to >= %.*s\n", GPUENV_STR_ARG(d->str),
			GPUENV_STR_ARG(iv->dc.ga->driver_linux.str));
	else if (iv->runs == GPUENV_KB_RUNS_NO && iv->dc.mvc)
		printf("  driver %.*s does not run it: CUDA %lld.x needs >= %.*s even through "
		       "minor-version compatibility%s\n", GPUENV_STR_ARG(d->str),
			(long long)iv->dc.mvc->cuda_major, GPUENV_STR_ARG(iv->dc.mvc->driver_min.str),
			cite(cites, &iv->dc.mvc->row, c1, sizeof(c1)));
	else
		printf("  unknown: CUDA %.*s has no toolkit row\n", GPUENV_STR_ARG(img->cuda.str));
}

/* a Docker Hub tag: what its grammar and images.toml say (no newline at the end) */
static void print_hub(const gpuenv_kb_t *kb, const char *query, const gpuenv_kb_image_ref_t *img,
	struct cites *cites)
{
	const gpuenv_kb_hub_tag_t *h = &img->hub;
	const gpuenv_kb_hub_match_t *m = &img->match;
	const gpuenv_kb_cuda_image_t *cr = m->cuda_row;
	const gpuenv_kb_pytorch_image_t *pr = m->pytorch_row;
	const gpuenv_kb_row_t *row = cr ? &cr->row : pr ? &pr->row : NULL;
	const gpuenv_kb_strs_t *fl = cr ? &cr->flavours : pr ? &pr->flavours : NULL;
	char c1[16], newer[480];

	printf("%s%s\n", query, row ? cite(cites, row, c1, sizeof(c1)) : "");
	if (h->kind == GPUENV_KB_HUB_PYTHON) {
		printf("  Python %.*s%s%.*s, no CUDA of its own (the CUDA libraries come from the wheels "
		       "installed into it)\n  read by the grammar %s", GPUENV_STR_ARG(h->python.str),
			h->os.len ? ", Debian " : "", GPUENV_STR_ARG(h->os), gpuenv_kb_hub_grammar(h->kind));
		return;
	}
	if (h->kind == GPUENV_KB_HUB_CUDA)
		printf("  CUDA %.*s, flavour %.*s, OS %.*s", GPUENV_STR_ARG(h->cuda_full.str),
			GPUENV_STR_ARG(h->flavour), GPUENV_STR_ARG(h->os));
	else
		printf("  torch %.*s, CUDA %.*s, cuDNN %d, flavour %.*s", GPUENV_STR_ARG(h->torch.str),
			GPUENV_STR_ARG(h->cuda.str), h->cudnn_major, GPUENV_STR_ARG(h->flavour));
	if (m->known && cr && h->has_cudnn && cr->cudnn.n)
		printf(", cuDNN %.*s", GPUENV_STR_ARG(cr->cudnn.str));
	if (m->known && pr && pr->python.n)
		printf(", Python %.*s", GPUENV_STR_ARG(pr->python.str));
	if (m->known && cr)
		printf("\n  a tag the knowledge base lists (%.*s)", GPUENV_STR_ARG(cr->status));
	else if (m->known)
		printf("\n  a tag the knowledge base lists");
	else {
		printf("\n  not in the knowledge base's tag list; read by the grammar %s",
			gpuenv_kb_hub_grammar(h->kind));
		if (fl) {
			printf("\n  the list has for this release:");
			for (uint32_t k = 0; k < fl->n; k++)
				printf(" %.*s", GPUENV_STR_ARG(fl->v[k]));
			if (pr)
				printf(" (cuDNN %lld)", (long long)pr->cudnn_major);
		} else if (m->release_known)
			printf("\n  (it lists this release for other %s)",
				h->kind == GPUENV_KB_HUB_CUDA ? "OSes" : "CUDA versions");
	}
	if (gpuenv_kb_hub_newer(kb, h, newer, sizeof(newer)))
		printf("\n  %s", newer);
}

static int kb_image(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct kbopts o = { 0 };
	gpuenv_kb_t *kb = NULL;
	const gpuenv_kb_container_t *m[64];
	gpuenv_kb_image_ref_t refs[64];
	gpuenv_kb_image_verdict_t ivs[64];
	struct cites cites = { { 0 }, 0 };
	char c1[16], c2[16];
	gpuenv_kb_target_t t;
	gpuenv_kb_gpu_match_t gm;
	size_t n;
	int st = 0, fails = 0;

	memset(&t, 0, sizeof(t));
	memset(refs, 0, sizeof(refs));
	if (getopts(cli, verb, argc, argv, O_GPU O_DRIVER, &o, &st))
		return st;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: which image (nvcr.io/nvidia/pytorch:24.05-py3)?",
			verb->name);
	if (optind + 1 < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name,
			argv[optind + 1]);
	if (o.driver && parse_driver(cli, verb, o.driver, &t.driver))
		return CLI_EXIT_USAGE;
	t.has_driver = o.driver != NULL;
	if ((st = load_kb(cli, o.kb_dir, F(NGC) | F(CUDA) | F(GPUS) | F(IMAGES) | F(TORCH), &kb)))
		return st;
	if (o.gpu) {
		if (gpuenv_kb_gpu_lookup(kb, o.gpu, &gm)) {
			st = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		t.has_cc = true;
		t.cc_major = gm.gpu->cc.part[0];
		t.cc_minor = gm.gpu->cc.part[1];
		t.gpu = gm.gpu;
	}
	n = gpuenv_kb_image_find(kb, argv[optind], m, 64);
	if (n > 64)
		n = 64;
	for (size_t i = 0; i < n; i++) {
		refs[i].row = m[i];
		refs[i].cuda = m[i]->cuda;
	}
	if (!n) {
		/* a nvidia/cuda tag, or nothing the KB knows */
		if (gpuenv_kb_image_lookup(kb, argv[optind], &refs[0])) {
			st = cli_report(cli, cli->ctx.err.code == GPUENV_EUSAGE ? CLI_EXIT_USAGE : CLI_EXIT_FAIL);
			goto out;
		}
		n = 1;
	}
	for (size_t i = 0; i < n; i++)
		gpuenv_kb_image_check(kb, &t, &refs[i], &ivs[i]);
	if (cli->json) {
		st = cli_print_json(cli, gpuenv_kb_images_json(kb, argv[optind], refs, ivs, n,
			o.driver != NULL, o.gpu != NULL));
		for (size_t i = 0; i < n; i++)
			fails += (o.driver && ivs[i].runs == GPUENV_KB_RUNS_NO) || (o.gpu && ivs[i].cc_ok == 0);
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		const gpuenv_kb_container_t *c = refs[i].row;
		const gpuenv_kb_toolkit_t *ga = gpuenv_kb_toolkit(kb, &refs[i].cuda, 0);
		const gpuenv_kb_image_verdict_t *iv = &ivs[i];
		if (c) {
			printf("%s%.*s:%.*s (release %.*s)%s\n", i ? "\n" : "", GPUENV_STR_ARG(c->image),
				GPUENV_STR_ARG(c->tag), GPUENV_STR_ARG(c->release.str),
				cite(&cites, &c->row, c1, sizeof(c1)));
			printf("  CUDA %.*s", GPUENV_STR_ARG(c->cuda_full.str));
			if (c->torch.ptr)
				printf(", torch %.*s", GPUENV_STR_ARG(c->torch));
			if (c->cudnn.n)
				printf(", cuDNN %.*s", GPUENV_STR_ARG(c->cudnn.str));
			if (c->tensorrt.n)
				printf(", TensorRT %.*s", GPUENV_STR_ARG(c->tensorrt.str));
			if (c->nccl.n)
				printf(", NCCL %.*s", GPUENV_STR_ARG(c->nccl.str));
			if (c->python.n)
				printf(", Python %.*s", GPUENV_STR_ARG(c->python.str));
			{
				/* the framework or server, then the OS */
				const struct { const char *name; gpuenv_str_t v; } more[] = {
					{ "TensorFlow", c->tensorflow }, { "JAX", c->jax },
					{ "Triton", c->triton }, { "vLLM", c->vllm },
					{ "TensorRT-LLM", c->tensorrt_llm.str }, { "Ubuntu", c->ubuntu.str },
				};
				for (size_t k = 0; k < sizeof(more) / sizeof(more[0]); k++)
					if (more[k].v.ptr)
						printf(", %s %.*s", more[k].name, GPUENV_STR_ARG(more[k].v));
			}
		} else if (refs[i].hub.kind)
			print_hub(kb, argv[optind], &refs[i], &cites);
		else
			printf("%s: CUDA %.*s (from the tag)", argv[optind], GPUENV_STR_ARG(refs[i].cuda.str));
		printf("\n  host driver:");
		if (ga)
			printf(" CUDA %.*s needs >= %.*s%s", GPUENV_STR_ARG(refs[i].cuda.str),
				GPUENV_STR_ARG(ga->driver_linux.str), cite(&cites, &ga->row, c2, sizeof(c2)));
		else if (refs[i].hub.kind == GPUENV_KB_HUB_PYTHON)
			printf(" any: the image asks nothing of it");
		else if (refs[i].hub.kind)
			printf(" unknown: the knowledge base has no CUDA %.*s toolkit",
				GPUENV_STR_ARG(refs[i].cuda.str));
		else if (c)
			printf(" CUDA %.*s: its minimum driver is not in the knowledge base",
				GPUENV_STR_ARG(refs[i].cuda.str));
		if (c && c->driver_min_branch.ptr)
			printf("; the release notes require %.*s or later",
				GPUENV_STR_ARG(c->driver_min_branch));
		if (c && c->datacenter_drivers.n) {
			printf("; data-center drivers through forward compatibility:");
			for (uint32_t k = 0; k < c->datacenter_drivers.n; k++)
				printf(" %.*s", GPUENV_STR_ARG(c->datacenter_drivers.v[k].str));
		}
		printf("\n");
		if (o.gpu && iv->cc_ok == 0)
			printf("  %.*s (compute capability %.*s) is below the image's minimum %.*s\n",
				GPUENV_STR_ARG(gm.gpu->name), GPUENV_STR_ARG(gm.gpu->cc.str),
				GPUENV_STR_ARG(c->cc_min.str));
		if (o.driver)
			print_image_runs(&refs[i], iv, &t.driver, &cites);
		fails += (o.driver && iv->runs == GPUENV_KB_RUNS_NO) || (o.gpu && iv->cc_ok == 0);
	}
	print_cites(&cites);
done:
	if (!st && fails && (size_t)fails == n)
		st = CLI_EXIT_FAIL;
out:
	gpuenv_kb_free(kb);
	return st;
}

/* ---- kb sources -------------------------------------------------------------------------------- */

static int kb_sources(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct kbopts o = { 0 };
	gpuenv_kb_t *kb = NULL;
	gpuenv_kb_table_info_t t[64];
	size_t nt, total = 0, sec = 0;
	int st = 0;

	if (getopts(cli, verb, argc, argv, "", &o, &st))
		return st;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if ((st = load_kb(cli, o.kb_dir, GPUENV_KB_ALL, &kb)))
		return st;
	if (cli->json) {
		st = cli_print_json(cli, gpuenv_kb_sources_json(kb));
		goto out;
	}
	nt = gpuenv_kb_tables(kb, t, 64);
	if (nt > 64)
		nt = 64;
	for (int f = 0; f < GPUENV_KB_NFILES; f++) {
		bool first = true;
		printf("%-15s %-9s %7zu bytes %5zu rows:", kb->files[f].name, kb->files[f].origin,
			kb->files[f].size, kb->files[f].rows);
		for (size_t i = 0; i < nt; i++) {
			if (t[i].file != f)
				continue;
			printf("%s %s %zu", first ? "" : ",", t[i].name, t[i].rows);
			if (t[i].secondary)
				printf(" (%zu secondary)", t[i].secondary);
			first = false;
			sec += t[i].secondary;
		}
		printf("\n");
		total += kb->files[f].rows;
	}
	printf("total: %zu rows, every one with a source; %zu from secondary sources\n", total, sec);
out:
	gpuenv_kb_free(kb);
	return st;
}

/* ---- dispatch ---------------------------------------------------------------------------------- */

/* every question takes --kb-dir (CLI_G_KB_DIR), worded the same */
#define KBDIR_GROUPS                                                                               \
	.groups = CLI_G_KB_DIR,                                                                    \
	.group_help = (const struct cli_group_help[]){                                             \
		{ CLI_G_KB_DIR, "  --kb-dir DIR       read the knowledge-base files from DIR (missing ones: " \
				"the built-in copy)\n" },                                            \
		{ 0, NULL },                                                                       \
	}

static const struct cli_verb kb_torch_verb = {
	.name = "torch",
	.run = kb_torch,
	.summary = "which torch builds run on a GPU and driver, and why the others do not",
	.usage = "gpuenv kb torch [--gpu NAME] [--driver VERSION] [--version X.Y[.Z][+cuXYZ]]",
	.help = "  --gpu NAME         a GPU name (\"RTX 5090\", \"H100\") or PCI id (\"0x2335\")\n"
		"  --driver VERSION   an NVIDIA driver version (535.104.05)\n"
		"  --version X        only the builds of one torch release (2.5, 2.5.1, 2.5.1+cu124)\n"
		"with --gpu or --driver it also names the build gpuenv would install there (for\n"
		"someone on --version's release), by the choice doctor's, preflight's and\n"
		"diagnose's fixes make (JSON \"pick\")\n"
		"exit status: 0 at least one build runs (or no GPU/driver given), 1 none does\n",
	KBDIR_GROUPS,
};

static const struct cli_verb kb_driver_verb = {
	.name = "driver",
	.run = kb_driver,
	.summary = "the minimum driver of a CUDA version, or the CUDA versions a driver runs",
	.usage = "gpuenv kb driver --cuda X.Y\n       gpuenv kb driver DRIVER-VERSION",
	.help = "  --cuda X.Y         the CUDA version to ask about\n",
	KBDIR_GROUPS,
};

static const struct cli_verb kb_gpu_verb = {
	.name = "gpu",
	.run = kb_gpu,
	.summary = "a GPU's compute capability, architecture, PCI ids and the builds that run on it",
	.usage = "gpuenv kb gpu NAME|PCI-ID",
	KBDIR_GROUPS,
};

static const struct cli_verb kb_image_verb = {
	.name = "image",
	.run = kb_image,
	.summary = "what an NGC, nvidia/cuda or pytorch/pytorch image holds and the driver it needs",
	.usage = "gpuenv kb image IMAGE[:TAG] [--driver VERSION] [--gpu NAME]",
	.help = "  --driver VERSION   also say whether this driver runs the image (by its release\n"
		"                     notes where the knowledge base has them, else by its CUDA)\n"
		"  --gpu NAME         the host's GPU: forward compatibility needs a data-center one\n"
		"nvidia/cuda and pytorch/pytorch tags are read by their grammar and looked up in\n"
		"images.toml; a tag that does not fit the grammar is a usage error (exit 2)\n",
	KBDIR_GROUPS,
};

static const struct cli_verb kb_sources_verb = {
	.name = "sources",
	.run = kb_sources,
	.summary = "the knowledge-base files, where they were read from and their row counts",
	.usage = "gpuenv kb sources",
	KBDIR_GROUPS,
};

static const struct cli_verb *const subs[] = {
	&kb_torch_verb, &kb_driver_verb, &kb_gpu_verb, &kb_image_verb, &kb_sources_verb,
	&cli_kb_info_verb, &cli_kb_update_verb, &cli_kb_bundle_verb,
};

#define NSUBS (sizeof(subs) / sizeof(subs[0]))

static int cli_kb(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, subs, NSUBS, "question", argc, argv);
}

const struct cli_verb cli_verb_kb = {
	.name = "kb",
	.run = cli_kb,
	.summary = "ask the compatibility knowledge base (torch builds, drivers, GPUs, NGC images)",
	.usage = "gpuenv kb torch|driver|gpu|image|sources|info|update|bundle [ARGS...]",
	.help = "questions (each takes --help, --json and --kb-dir DIR):\n"
		"  torch [--gpu NAME] [--driver VER] [--version X]  torch builds that run there, and why not\n"
		"  driver --cuda X.Y | driver VERSION               minimum driver / CUDA a driver runs\n"
		"  gpu NAME|PCI-ID                                  compute capability, architecture, PCI ids\n"
		"  image IMAGE[:TAG] [--driver VER] [--gpu NAME]    an NGC image's contents and driver needs\n"
		"  sources                                          the files and their row counts\n"
		"  info                                             its date, origin, counts and sources\n"
		"  update [--from URL|FILE]                         install a newer, signed knowledge base\n"
		"  bundle DIR --key KEY.pem -o FILE                 make a signed bundle (maintainers)\n",
};
