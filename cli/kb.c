/* gpuenv kb: questions to the compatibility knowledge base.  Every answer
 * cites the rows it comes from: "[n]" marks in the text and a numbered
 * source list at the end; in JSON a "source" object on every fact. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"

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

static json_t *jstr(gpuenv_str_t s)
{
	return s.ptr ? json_stringn(s.ptr, s.len) : json_null();
}

static json_t *jver(const gpuenv_kb_ver_t *v)
{
	return v->n ? json_stringn(v->str.ptr, v->str.len) : json_null();
}

static json_t *jrow(const gpuenv_kb_row_t *r)
{
	json_t *o;

	if (!r)
		return json_null();
	o = json_pack("{s:s, s:i, s:s%, s:b}", "file", gpuenv_kb_file_name(r->file), "line",
		(json_int_t)r->line, "source", r->source.ptr, r->source.len, "secondary",
		r->secondary);
	if (o && r->note.ptr)
		json_object_set_new(o, "note", jstr(r->note));
	return o;
}

static json_t *jsms(const gpuenv_kb_sms_t *l)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, jstr(l->v[i].str));
	return a;
}

/* Each question loads only the files its answer comes from. */
#define F(id) GPUENV_KB_FILE(GPUENV_KB_##id)

static int load_kb(struct cli *cli, const char *dir, unsigned files, gpuenv_kb_t **kb)
{
	if (gpuenv_kb_load_files(&cli->ctx, dir, files, kb))
		return cli_report(cli, CLI_EXIT_FAIL);
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

enum { OPT_KB_DIR = 0x2001, OPT_GPU, OPT_DRIVER, OPT_VERSION, OPT_CUDA };

/* Options every kb subcommand takes, plus the ones in extra. */
struct kbopts {
	const char *kb_dir, *gpu, *driver, *version, *cuda;
};

static int getopts(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	const char *allowed, struct kbopts *o, int *status)
{
	static const struct option all[] = {
		{ "kb-dir", required_argument, NULL, OPT_KB_DIR },
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
		if (i == 0 || strchr(allowed, (char)('a' + i)))
			mine[n++] = all[i];
	mine[n] = (struct option){ NULL, 0, NULL, 0 };
	while ((c = cli_getopt(cli, verb, argc, argv, "", mine, status)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return -1;
		case OPT_KB_DIR:
			o->kb_dir = optarg;
			break;
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
	return 0;
}

/* "b" gpu, "c" driver, "d" version, "e" cuda (letters = index in `all`) */
#define O_GPU "b"
#define O_DRIVER "c"
#define O_VERSION "d"
#define O_CUDA "e"

static json_t *gpu_json(const gpuenv_kb_t *kb, const gpuenv_kb_gpu_match_t *m)
{
	const gpuenv_kb_gpu_t *g = m->gpu;
	const gpuenv_kb_arch_t *a = gpuenv_kb_arch(kb, g->cc.part[0], g->cc.part[1]);
	json_t *o = json_object();

	json_object_set_new(o, "name", jstr(g->name));
	json_object_set_new(o, "compute_capability", jver(&g->cc));
	json_object_set_new(o, "sm", a ? jstr(a->sm.str) : json_null());
	json_object_set_new(o, "architecture", a ? jstr(a->architecture) : json_null());
	json_object_set_new(o, "segment", jstr(g->segment));
	json_object_set_new(o, "source", jrow(&g->row));
	json_object_set_new(o, "arch_source", a ? jrow(&a->row) : json_null());
	if (m->pci) {
		char id[16];
		snprintf(id, sizeof(id), "0x%04x", (unsigned)m->pci->device_id);
		json_object_set_new(o, "matched_pci", json_pack("{s:s, s:s%, s:o}", "device_id", id,
			"name", m->pci->name.ptr, m->pci->name.len, "source", jrow(&m->pci->row)));
	}
	return o;
}

static const char *match_word(int how)
{
	switch (how) {
	case GPUENV_KB_MATCH_EXACT:
		return "exact";
	case GPUENV_KB_MATCH_PCI:
		return "pci";
	case GPUENV_KB_MATCH_PREFIX:
		return "prefix";
	default:
		return "partial";
	}
}

/* ---- kb torch --------------------------------------------------------------------- */

static const char *verdict_word(int v)
{
	return v == GPUENV_KB_YES ? "yes" : v == GPUENV_KB_NO ? "no" : "unknown";
}

static int variant_order(const void *a, const void *b)
{
	const gpuenv_kb_torch_variant_t *x = *(const gpuenv_kb_torch_variant_t *const *)a;
	const gpuenv_kb_torch_variant_t *y = *(const gpuenv_kb_torch_variant_t *const *)b;
	int c = gpuenv_kb_ver_cmp(&y->torch, &x->torch);

	return c ? c : gpuenv_kb_ver_cmp(&y->cuda, &x->cuda);
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

static json_t *driver_json(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *d)
{
	gpuenv_kb_driver_max_t mx;
	json_t *o = json_object();

	gpuenv_kb_driver_max_cuda(kb, d, &mx);
	json_object_set_new(o, "version", jver(d));
	json_object_set_new(o, "max_cuda", mx.ga ? jver(&mx.ga->cuda) : json_null());
	json_object_set_new(o, "max_release", mx.ga
			? json_pack("{s:s%, s:I, s:s%, s:o}", "label", mx.ga->label.ptr, mx.ga->label.len,
				  "update", (json_int_t)mx.ga->update, "driver_linux",
				  mx.ga->driver_linux.str.ptr, mx.ga->driver_linux.str.len, "source",
				  jrow(&mx.ga->row))
			: json_null());
	json_object_set_new(o, "minor_compat", mx.mvc
			? json_pack("{s:I, s:s%, s:o}", "cuda_major", (json_int_t)mx.mvc->cuda_major,
				  "driver_min", mx.mvc->driver_min.str.ptr, mx.mvc->driver_min.str.len,
				  "source", jrow(&mx.mvc->row))
			: json_null());
	json_object_set_new(o, "branch", mx.branch
			? json_pack("{s:s%, s:s%, s:s%, s:I, s:o}", "branch", mx.branch->branch.ptr,
				  mx.branch->branch.len, "designation", mx.branch->designation.ptr,
				  mx.branch->designation.len, "eol", mx.branch->eol.ptr, mx.branch->eol.len,
				  "max_cuda_major", (json_int_t)mx.branch->max_cuda_major, "source",
				  jrow(&mx.branch->row))
			: json_null());
	return o;
}

static int kb_torch(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct kbopts o = { 0 };
	gpuenv_kb_t *kb = NULL;
	gpuenv_kb_target_t t;
	gpuenv_kb_gpu_match_t gm;
	gpuenv_kb_ver_t want;
	gpuenv_arena_t arena;
	const gpuenv_kb_torch_variant_t **vs = NULL;
	gpuenv_kb_torch_verdict_t *vd = NULL;
	size_t n = 0, yes = 0;
	struct cites cites = { { 0 }, 0 };
	gpuenv_kb_pick_t pick;
	int st = 0;

	memset(&pick, 0, sizeof(pick));
	if (getopts(cli, verb, argc, argv, O_GPU O_DRIVER O_VERSION, &o, &st))
		return st;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	memset(&t, 0, sizeof(t));
	memset(&want, 0, sizeof(want));
	if (o.driver && parse_driver(cli, verb, o.driver, &t.driver))
		return CLI_EXIT_USAGE;
	t.has_driver = o.driver != NULL;
	if (o.version) {
		gpuenv_str_t head;
		gpuenv_str_split(gpuenv_str(o.version), '+', &head);
		if (!gpuenv_kb_ver_parse(head, &want))
			return cli_usage_error(cli, verb, "%s: '%s' is not a torch version (as 2.5 or 2.5.1)",
				verb->name, o.version);
		if (want.n > 2)
			want.n = 2;
	}
	if ((st = load_kb(cli, o.kb_dir, F(TORCH) | F(CUDA) | F(GPUS), &kb)))
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
	vs = calloc(kb->n_torch_variant ? kb->n_torch_variant : 1, sizeof(*vs));
	vd = calloc(kb->n_torch_variant ? kb->n_torch_variant : 1, sizeof(*vd));
	if (!vs || !vd) {
		st = cli_error(cli, CLI_EXIT_FAIL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &kb->torch_variant[i];
		if (want.n && gpuenv_kb_ver_cmp(&v->torch, &want) != 0)
			continue;
		if (o.version && strchr(o.version, '+') &&
			!gpuenv_str_eq_cstr(v->tag, strchr(o.version, '+') + 1))
			continue;
		vs[n++] = v;
	}
	if (!n) {
		st = cli_error(cli, CLI_EXIT_FAIL, "%s: no torch build %s in the knowledge base",
			verb->name, o.version ? o.version : "");
		goto out;
	}
	qsort(vs, n, sizeof(*vs), variant_order);
	for (size_t i = 0; i < n; i++) {
		if (gpuenv_kb_torch_check(kb, &t, vs[i], &arena, &vd[i])) {
			st = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		yes += vd[i].verdict == GPUENV_KB_YES;
	}
	/* the build gpuenv would install there, for someone on --version's
	 * release: the choice doctor's and diagnose's fixes make */
	if (o.gpu || o.driver) {
		gpuenv_kb_pick_req_t pr = { &t, 1, o.version, false, false, NULL, true };
		if (gpuenv_kb_torch_pick(kb, &pr, &arena, &pick)) {
			st = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
	}
	if (cli->json) {
		json_t *root = json_object(), *builds = json_array(), *runs = json_array();
		json_object_set_new(root, "gpu", o.gpu ? gpu_json(kb, &gm) : json_null());
		json_object_set_new(root, "driver", o.driver ? driver_json(kb, &t.driver) : json_null());
		for (size_t i = 0; i < n; i++) {
			const gpuenv_kb_torch_variant_t *v = vs[i];
			json_t *b = json_object(), *rs = json_array();
			json_object_set_new(b, "torch", jver(&v->torch));
			json_object_set_new(b, "tag", jstr(v->tag));
			json_object_set_new(b, "cuda", jver(&v->cuda));
			json_object_set_new(b, "channel", jstr(v->channel));
			json_object_set_new(b, "pypi_default", json_boolean(v->pypi_default == 1));
			json_object_set_new(b, "verdict", json_string(verdict_word(vd[i].verdict)));
			json_object_set_new(b, "source", jrow(&v->row));
			if (vd[i].arch)
				json_object_set_new(b, "arch_list", json_pack("{s:o, s:o, s:o}", "sm",
					jsms(&vd[i].arch->sm), "ptx", jsms(&vd[i].arch->ptx), "source",
					jrow(&vd[i].arch->row)));
			else
				json_object_set_new(b, "arch_list", json_null());
			for (size_t k = 0; k < vd[i].n_reason; k++) {
				const gpuenv_kb_reason_t *r = &vd[i].reason[k];
				json_t *ro = json_pack("{s:s, s:s, s:o}", "verdict", verdict_word(r->verdict),
					"text", r->text, "source", jrow(r->src));
				if (ro && r->src2)
					json_object_set_new(ro, "source2", jrow(r->src2));
				json_array_append_new(rs, ro);
			}
			json_object_set_new(b, "reasons", rs);
			json_array_append_new(builds, b);
			if (vd[i].verdict == GPUENV_KB_YES) {
				char name[64];
				snprintf(name, sizeof(name), "%.*s %.*s", GPUENV_STR_ARG(v->torch.str),
					GPUENV_STR_ARG(v->tag));
				json_array_append_new(runs, json_string(name));
			}
		}
		json_object_set_new(root, "builds", builds);
		json_object_set_new(root, "runs", runs);
		json_object_set_new(root, "pick", pick.variant
				? json_pack("{s:o, s:o, s:o, s:o, s:o}", "torch", jver(&pick.variant->torch),
					  "tag", jstr(pick.variant->tag), "cuda", jver(&pick.variant->cuda),
					  "driver_upgrade", pick.driver_upgrade
						  ? jver(&pick.driver_upgrade->driver_linux) : json_null(),
					  "source", jrow(&pick.variant->row))
				: json_null());
		st = cli_print_json(cli, root);
	} else {
		char c1[16], c2[16];
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
		if (o.gpu || o.driver) {
			if (pick.variant && pick.driver_upgrade)
				printf("gpuenv would install torch %.*s %.*s (CUDA %.*s) after upgrading the "
				       "driver to >= %.*s%s\n",
					GPUENV_STR_ARG(pick.variant->torch.str), GPUENV_STR_ARG(pick.variant->tag),
					GPUENV_STR_ARG(pick.variant->cuda.str),
					GPUENV_STR_ARG(pick.driver_upgrade->driver_linux.str),
					cite(&cites, &pick.variant->row, c1, sizeof(c1)));
			else if (pick.variant)
				printf("gpuenv would install torch %.*s %.*s (CUDA %.*s)%s\n",
					GPUENV_STR_ARG(pick.variant->torch.str), GPUENV_STR_ARG(pick.variant->tag),
					GPUENV_STR_ARG(pick.variant->cuda.str),
					cite(&cites, &pick.variant->row, c1, sizeof(c1)));
			if (yes)
				printf("%zu of %zu torch builds run there.\n\n", yes, n);
			else
				printf("no torch build in the knowledge base runs there.\n\n");
		}
		for (size_t i = 0; i < n; i++) {
			const gpuenv_kb_torch_variant_t *v = vs[i];
			printf("torch %-5.*s %-6.*s CUDA %-5.*s %-12.*s %s%s\n", GPUENV_STR_ARG(v->torch.str),
				GPUENV_STR_ARG(v->tag), GPUENV_STR_ARG(v->cuda.str), GPUENV_STR_ARG(v->channel),
				o.gpu || o.driver ? verdict_word(vd[i].verdict) : "",
				cite(&cites, &v->row, c1, sizeof(c1)));
			if (!o.gpu && !o.driver) {
				char r[64];
				if (vd[i].arch) {
					printf("    code: %s", gpuenv_kb_sms_range(vd[i].arch->sm.v,
						vd[i].arch->sm.n, r, sizeof(r)));
					printf(", PTX %s%s\n", gpuenv_kb_sms_range(vd[i].arch->ptx.v,
						vd[i].arch->ptx.n, r, sizeof(r)),
						cite(&cites, &vd[i].arch->row, c2, sizeof(c2)));
				} else
					printf("    code: not in the knowledge base\n");
				continue;
			}
			for (size_t k = 0; k < vd[i].n_reason; k++) {
				const gpuenv_kb_reason_t *r = &vd[i].reason[k];
				cite(&cites, r->src, c1, sizeof(c1));
				cite(&cites, r->src2, c2, sizeof(c2));
				printf("    %s %s%s%s\n",
					r->verdict == GPUENV_KB_YES ? "+" : r->verdict == GPUENV_KB_NO ? "-" : "?",
					r->text, c1, c2);
			}
		}
		print_cites(&cites);
	}
	if (!st && (o.gpu || o.driver) && !yes)
		st = CLI_EXIT_FAIL;
out:
	free(vs);
	free(vd);
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
			json_t *root = json_object(), *rel = json_array();
			json_object_set_new(root, "cuda", jver(&ga->cuda));
			json_object_set_new(root, "min_driver", jver(&ga->driver_linux));
			json_object_set_new(root, "min_driver_windows", jver(&ga->driver_windows));
			json_object_set_new(root, "source", jrow(&ga->row));
			for (size_t i = 0; i < kb->n_toolkit; i++) {
				const gpuenv_kb_toolkit_t *t = &kb->toolkit[i];
				if (gpuenv_kb_ver_cmp(&t->cuda, &ga->cuda) != 0)
					continue;
				json_array_append_new(rel, json_pack("{s:s%, s:I, s:o, s:o, s:o}", "label",
					t->label.ptr, t->label.len, "update", (json_int_t)t->update,
					"driver_linux", jver(&t->driver_linux), "driver_windows",
					jver(&t->driver_windows), "source", jrow(&t->row)));
			}
			json_object_set_new(root, "releases", rel);
			json_object_set_new(root, "minor_compat", mvc
					? json_pack("{s:I, s:o, s:o, s:o}", "cuda_major",
						  (json_int_t)mvc->cuda_major, "driver_min", jver(&mvc->driver_min),
						  "driver_below", jver(&mvc->driver_below), "source", jrow(&mvc->row))
					: json_null());
			st = cli_print_json(cli, root);
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
			st = cli_print_json(cli, driver_json(kb, &d));
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
	json_t *arr = NULL;

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
	if (cli->json)
		arr = json_array();
	for (size_t i = 0; i < n; i++) {
		const gpuenv_kb_gpu_t *g = m[i].gpu;
		const gpuenv_kb_arch_t *a = gpuenv_kb_arch(kb, g->cc.part[0], g->cc.part[1]);
		const gpuenv_kb_toolkit_t *ga;
		const gpuenv_kb_cuda_arch_list_t *first =
			gpuenv_kb_arch_first_cuda(kb, g->cc.part[0], g->cc.part[1], &ga);
		json_t *gj = NULL, *pcis = NULL, *builds = NULL;
		if (arr) {
			gj = gpu_json(kb, &m[i]);
			json_object_set_new(gj, "match", json_string(match_word(m[i].how)));
			pcis = json_array();
			builds = json_array();
		} else {
			printf("%s%.*s: compute capability %.*s", i ? "\n" : "", GPUENV_STR_ARG(g->name),
				GPUENV_STR_ARG(g->cc.str));
			if (a)
				printf(", %.*s, %.*s", GPUENV_STR_ARG(a->sm.str), GPUENV_STR_ARG(a->architecture));
			cite(&cites, &g->row, c1, sizeof(c1));
			c2[0] = '\0';
			if (a)
				cite(&cites, &a->row, c2, sizeof(c2));
			printf(", %.*s%s%s\n", GPUENV_STR_ARG(g->segment), c1, c2);
		}
		/* PCI ids */
		{
			bool any = false;
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
				if (pcis) {
					json_t *pj = json_object();
					char d[16];
					snprintf(d, sizeof(d), "0x%04x", (unsigned)p->device_id);
					json_object_set_new(pj, "device_id", json_string(d));
					if (p->subsys_vendor >= 0) {
						snprintf(d, sizeof(d), "0x%04x", (unsigned)p->subsys_vendor);
						json_object_set_new(pj, "subsys_vendor", json_string(d));
						snprintf(d, sizeof(d), "0x%04x", (unsigned)p->subsys_device);
						json_object_set_new(pj, "subsys_device", json_string(d));
					}
					json_object_set_new(pj, "name", jstr(p->name));
					json_object_set_new(pj, "source", jrow(&p->row));
					json_array_append_new(pcis, pj);
					continue;
				}
				printf("%s %s \"%.*s\"%s", any ? "," : "  PCI:", id, GPUENV_STR_ARG(p->name),
					cite(&cites, &p->row, c1, sizeof(c1)));
				any = true;
			}
			if (any)
				printf("\n");
		}
		if (gj) {
			json_object_set_new(gj, "pci", pcis);
			json_object_set_new(gj, "first_cuda", first ? jver(&first->cuda_min) : json_null());
			json_object_set_new(gj, "first_cuda_driver", ga ? jver(&ga->driver_linux) : json_null());
			json_object_set_new(gj, "first_cuda_source", first ? jrow(&first->row) : json_null());
			json_object_set_new(gj, "last_cuda_major", a && a->last_cuda_major >= 0
					? json_integer(a->last_cuda_major) : json_null());
		} else {
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
		}
		/* torch builds whose cubins or PTX run on it */
		{
			bool any = false;
			for (size_t k = 0; k < kb->n_torch_arch_list; k++) {
				const gpuenv_kb_torch_arch_list_t *al = &kb->torch_arch_list[k];
				gpuenv_kb_cover_t cov;
				if (!gpuenv_kb_code_covers(al->sm.v, al->sm.n, al->ptx.v, al->ptx.n,
					    g->cc.part[0], g->cc.part[1], &cov))
					continue;
				if (builds) {
					json_array_append_new(builds, json_pack("{s:o, s:o, s:s, s:o, s:o}", "torch",
						jver(&al->torch), "tag", jstr(al->tag), "via",
						cov.via_ptx ? "ptx" : "cubin", "target", jstr(cov.by->str), "source",
						jrow(&al->row)));
					continue;
				}
				printf("%s %.*s %.*s%s%s", any ? "," : "", GPUENV_STR_ARG(al->torch.str),
					GPUENV_STR_ARG(al->tag), cov.via_ptx ? " (PTX)" : "",
					cite(&cites, &al->row, c1, sizeof(c1)));
				any = true;
			}
			if (!builds)
				printf("%s\n", any ? "" : " none known");
		}
		if (gj) {
			json_object_set_new(gj, "torch_builds", builds);
			json_array_append_new(arr, gj);
		}
	}
	if (arr)
		st = cli_print_json(cli, json_pack("{s:s, s:b, s:o}", "query", argv[optind], "ambiguous",
			ambiguous, "gpus", arr));
	else
		print_cites(&cites);
	/* the candidates are listed; the name still does not say which */
	if (ambiguous)
		st = cli_report(cli, CLI_EXIT_FAIL);
out:
	gpuenv_kb_free(kb);
	return st;
}

/* ---- kb image ------------------------------------------------------------------------------ */

static const char *runs_word(int runs)
{
	switch (runs) {
	case GPUENV_KB_RUNS_GA:
		return "yes";
	case GPUENV_KB_RUNS_MINOR_COMPAT:
		return "minor-version-compat";
	case GPUENV_KB_RUNS_FORWARD_COMPAT:
		return "forward-compat";
	case GPUENV_KB_RUNS_NO:
		return "no";
	default:
		return "unknown";
	}
}

static void print_image_runs(const gpuenv_kb_t *kb, const gpuenv_kb_image_ref_t *img,
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
	else
		printf("  unknown: CUDA %.*s has no toolkit row\n", GPUENV_STR_ARG(img->cuda.str));
	(void)kb;
}

static int kb_image(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct kbopts o = { 0 };
	gpuenv_kb_t *kb = NULL;
	const gpuenv_kb_container_t *m[64];
	gpuenv_kb_image_ref_t refs[64];
	struct cites cites = { { 0 }, 0 };
	char c1[16], c2[16];
	gpuenv_kb_target_t t;
	gpuenv_kb_gpu_match_t gm;
	size_t n;
	int st = 0, fails = 0;
	json_t *arr = NULL;

	memset(&t, 0, sizeof(t));
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
	if ((st = load_kb(cli, o.kb_dir, F(NGC) | F(CUDA) | F(GPUS), &kb)))
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
	if (cli->json)
		arr = json_array();
	for (size_t i = 0; i < n; i++) {
		const gpuenv_kb_container_t *c = refs[i].row;
		const gpuenv_kb_toolkit_t *ga = gpuenv_kb_toolkit(kb, &refs[i].cuda, 0);
		gpuenv_kb_image_verdict_t iv;
		gpuenv_kb_image_check(kb, &t, &refs[i], &iv);
		if (arr) {
			json_t *j = json_object();
			if (c) {
				json_object_set_new(j, "image", jstr(c->image));
				json_object_set_new(j, "tag", jstr(c->tag));
				json_object_set_new(j, "release", jver(&c->release));
				json_object_set_new(j, "cuda", jver(&c->cuda));
				json_object_set_new(j, "cuda_full", jver(&c->cuda_full));
				json_object_set_new(j, "python", jver(&c->python));
				json_object_set_new(j, "torch", jstr(c->torch));
				json_object_set_new(j, "tensorrt", jver(&c->tensorrt));
				json_object_set_new(j, "cudnn", jver(&c->cudnn));
				json_object_set_new(j, "nccl", jver(&c->nccl));
				json_object_set_new(j, "cuda_driver", jver(&c->cuda_driver));
				json_object_set_new(j, "driver_min_branch", jstr(c->driver_min_branch));
				json_object_set_new(j, "source", jrow(&c->row));
			} else {
				json_object_set_new(j, "image", json_string(argv[optind]));
				json_object_set_new(j, "cuda", jver(&refs[i].cuda));
				json_object_set_new(j, "source", json_null());
			}
			json_object_set_new(j, "min_driver", ga ? jver(&ga->driver_linux) : json_null());
			json_object_set_new(j, "min_driver_source", ga ? jrow(&ga->row) : json_null());
			if (o.driver) {
				json_object_set_new(j, "runs", json_string(runs_word(iv.runs)));
				json_object_set_new(j, "decided_by", json_string(iv.by_notes
						? "release-notes" : "cuda-driver-rule"));
				json_object_set_new(j, "forward_compat_driver",
					iv.fc_driver ? jver(iv.fc_driver) : json_null());
				json_object_set_new(j, "datacenter_only", json_boolean(iv.datacenter_only));
			}
			if (o.gpu)
				json_object_set_new(j, "cc_ok", iv.cc_ok < 0 ? json_null()
								: json_boolean(iv.cc_ok));
			json_array_append_new(arr, j);
		} else {
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
			} else
				printf("%s: CUDA %.*s (from the tag)", argv[optind],
					GPUENV_STR_ARG(refs[i].cuda.str));
			printf("\n  host driver:");
			if (ga)
				printf(" CUDA %.*s needs >= %.*s%s", GPUENV_STR_ARG(refs[i].cuda.str),
					GPUENV_STR_ARG(ga->driver_linux.str), cite(&cites, &ga->row, c2, sizeof(c2)));
			if (c && c->driver_min_branch.ptr)
				printf("; the release notes require %.*s or later",
					GPUENV_STR_ARG(c->driver_min_branch));
			if (c && c->datacenter_drivers.n) {
				printf("; data-center drivers through forward compatibility:");
				for (uint32_t k = 0; k < c->datacenter_drivers.n; k++)
					printf(" %.*s", GPUENV_STR_ARG(c->datacenter_drivers.v[k].str));
			}
			printf("\n");
			if (o.gpu && iv.cc_ok == 0)
				printf("  %.*s (compute capability %.*s) is below the image's minimum %.*s\n",
					GPUENV_STR_ARG(gm.gpu->name), GPUENV_STR_ARG(gm.gpu->cc.str),
					GPUENV_STR_ARG(c->cc_min.str));
			if (o.driver)
				print_image_runs(kb, &refs[i], &iv, &t.driver, &cites);
		}
		if ((o.driver && iv.runs == GPUENV_KB_RUNS_NO) || (o.gpu && iv.cc_ok == 0))
			fails++;
	}
	if (arr)
		st = cli_print_json(cli, json_pack("{s:s, s:o}", "query", argv[optind], "images", arr));
	else
		print_cites(&cites);
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
	nt = gpuenv_kb_tables(kb, t, 64);
	if (nt > 64)
		nt = 64;
	if (cli->json) {
		json_t *files = json_array();
		for (int f = 0; f < GPUENV_KB_NFILES; f++) {
			json_t *tabs = json_object();
			for (size_t i = 0; i < nt; i++)
				if (t[i].file == f)
					json_object_set_new(tabs, t[i].name, json_pack("{s:I, s:I}", "rows",
						(json_int_t)t[i].rows, "secondary", (json_int_t)t[i].secondary));
			json_array_append_new(files, json_pack("{s:s, s:s, s:I, s:I, s:o}", "name",
				kb->files[f].name, "origin", kb->files[f].origin, "bytes",
				(json_int_t)kb->files[f].size, "rows", (json_int_t)kb->files[f].rows,
				"tables", tabs));
			total += kb->files[f].rows;
		}
		st = cli_print_json(cli, json_pack("{s:o, s:I}", "files", files, "rows", (json_int_t)total));
		goto out;
	}
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

#define KBDIR_HELP "  --kb-dir DIR       read the knowledge-base files from DIR (missing ones: the built-in copy)\n"

static const struct cli_verb kb_torch_verb = {
	.name = "torch",
	.run = kb_torch,
	.summary = "which torch builds run on a GPU and driver, and why the others do not",
	.usage = "gpuenv kb torch [--gpu NAME] [--driver VERSION] [--version X.Y[.Z][+cuXYZ]]",
	.help = "  --gpu NAME         a GPU name (\"RTX 5090\", \"H100\") or PCI id (\"0x2335\")\n"
		"  --driver VERSION   an NVIDIA driver version (535.104.05)\n"
		"  --version X        only the builds of one torch release (2.5, 2.5.1, 2.5.1+cu124)\n" KBDIR_HELP
		"exit status: 0 at least one build runs (or no GPU/driver given), 1 none does\n",
};

static const struct cli_verb kb_driver_verb = {
	.name = "driver",
	.run = kb_driver,
	.summary = "the minimum driver of a CUDA version, or the CUDA versions a driver runs",
	.usage = "gpuenv kb driver --cuda X.Y\n       gpuenv kb driver DRIVER-VERSION",
	.help = "  --cuda X.Y         the CUDA version to ask about\n" KBDIR_HELP,
};

static const struct cli_verb kb_gpu_verb = {
	.name = "gpu",
	.run = kb_gpu,
	.summary = "a GPU's compute capability, architecture, PCI ids and the builds that run on it",
	.usage = "gpuenv kb gpu NAME|PCI-ID",
	.help = KBDIR_HELP,
};

static const struct cli_verb kb_image_verb = {
	.name = "image",
	.run = kb_image,
	.summary = "what an NGC container image holds and the driver it needs",
	.usage = "gpuenv kb image IMAGE[:TAG] [--driver VERSION] [--gpu NAME]",
	.help = "  --driver VERSION   also say whether this driver runs the image (by its release\n"
		"                     notes where the knowledge base has them, else by its CUDA)\n"
		"  --gpu NAME         the host's GPU: forward compatibility needs a data-center one\n" KBDIR_HELP,
};

static const struct cli_verb kb_sources_verb = {
	.name = "sources",
	.run = kb_sources,
	.summary = "the knowledge-base files, where they were read from and their row counts",
	.usage = "gpuenv kb sources",
	.help = KBDIR_HELP,
};

static const struct cli_verb *const subs[] = {
	&kb_torch_verb, &kb_driver_verb, &kb_gpu_verb, &kb_image_verb, &kb_sources_verb,
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
	.usage = "gpuenv kb torch|driver|gpu|image|sources [ARGS...]",
	.help = "questions (each takes --help, --json and --kb-dir DIR):\n"
		"  torch [--gpu NAME] [--driver VER] [--version X]  torch builds that run there, and why not\n"
		"  driver --cuda X.Y | driver VERSION               minimum driver / CUDA a driver runs\n"
		"  gpu NAME|PCI-ID                                  compute capability, architecture, PCI ids\n"
		"  image IMAGE[:TAG] [--driver VER] [--gpu NAME]    an NGC image's contents and driver needs\n"
		"  sources                                          the files and their row counts\n",
};
