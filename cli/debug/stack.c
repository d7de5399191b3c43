/* debug subcommands over the software-stack probe (include/gpuenv/stack.h):
 *   gpuenv debug libs   toolkits and every NVIDIA library copy
 *   gpuenv debug pyenv  Python environments, GPU frameworks, what they load
 *   gpuenv debug ldd    loader emulation for one binary
 * The JSON builders (cli_stack_json and its parts) are meant for `gpuenv
 * probe --json` too. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/facts_write.h"
#include "gpuenv/stack.h"

/* to move to cli.h when the debug table rows are added */
/* ---- text ----------------------------------------------------------------- */

static void print_version(const gpuenv_stack_version_t *v)
{
	if (!v->text.ptr) {
		printf("version unknown");
		return;
	}
	printf("%s (%s: %s)", v->text.ptr, gpuenv_vsrc_name(v->src), v->origin.ptr ? v->origin.ptr : "?");
}

static void print_toolkits(const gpuenv_stack_t *st)
{
	printf("CUDA toolkits:%s\n", st->ntoolkits ? "" : " none");
	for (size_t i = 0; i < st->ntoolkits; i++) {
		const gpuenv_toolkit_t *tk = &st->toolkits[i];
		printf("  %s", tk->path.ptr);
		if (!gpuenv_str_eq(tk->path, tk->realpath))
			printf(" -> %s", tk->realpath.ptr);
		printf("\n    CUDA ");
		print_version(&tk->version);
		printf("\n    nvcc %s%s%s\n", tk->nvcc.ptr ? tk->nvcc.ptr : "absent",
			tk->nvcc_version.ptr ? " " : "", tk->nvcc_version.ptr ? tk->nvcc_version.ptr : "");
		for (size_t k = 0; k < tk->naliases; k++)
			printf("    also at %s\n", tk->aliases[k].ptr);
	}
}

static void print_where(unsigned bits)
{
	const char *sep = "";
	printf(" [");
	for (size_t i = 0; i < 6; i++)
		if (bits & (1u << i)) {
			printf("%s%s", sep, gpuenv_stack_where_names[i]);
			sep = ", ";
		}
	printf("]");
}

static void print_libs(const gpuenv_stack_t *st)
{
	printf("libraries:%s\n", st->nlibs ? "" : " none");
	for (size_t i = 0; i < st->nlibs; i++) {
		const gpuenv_libcopy_t *c = &st->libs[i];
		printf("  %-9s %s", gpuenv_libfamily_name(c->family), c->path.ptr);
		print_where(c->where);
		printf("\n            ");
		if (c->nversions)
			print_version(&c->versions[0]);
		else
			printf("version unknown");
		if (c->dist.ptr)
			printf(", wheel %s", c->dist.ptr);
		printf("\n");
		for (size_t k = 1; k < c->nversions; k++) {
			printf("            also ");
			print_version(&c->versions[k]);
			printf("\n");
		}
	}
}

static void print_need(const gpuenv_ld_resolution_t *r, const gpuenv_ld_need_t *n, const char *indent)
{
	printf("%s%s => %s (%s", indent, n->name.ptr, n->path.ptr ? n->path.ptr : "not found",
		gpuenv_ldsrc_name(n->how));
	if (n->rule.ptr)
		printf(" %s", n->rule.ptr);
	if (n->rule_owner != SIZE_MAX && n->how == GPUENV_LDSRC_RPATH)
		printf(" of %s", r->objects[n->rule_owner].path.ptr);
	printf(")\n");
	for (size_t s = 0; s < n->nshadowed; s++)
		printf("%s    hides %s\n", indent, n->shadowed[s].ptr);
}

static void print_resolution(const gpuenv_ld_resolution_t *r, bool tree, const char *indent)
{
	if (tree) {
		for (size_t i = 0; i < r->nobjects; i++) {
			const gpuenv_ld_object_t *o = &r->objects[i];
			printf("%s%s%s%s\n", indent, o->path.ptr, o->error ? ": " : "",
				o->error ? gpuenv_strerror(o->error) : "");
			char sub[64];
			snprintf(sub, sizeof(sub), "%s    ", indent);
			for (size_t k = 0; k < o->elf.nneeded; k++)
				print_need(r, &o->needs[k], sub);
		}
		return;
	}
	/* like ldd: each library once, in load order, with the reason of its
	 * first request */
	for (size_t i = 1; i < r->nobjects; i++)
		for (size_t p = 0; p < r->nobjects; p++) {
			const gpuenv_ld_object_t *o = &r->objects[p];
			bool done = false;
			for (size_t k = 0; k < o->elf.nneeded && !done; k++)
				if (o->needs[k].object == i && o->needs[k].how != GPUENV_LDSRC_LOADED) {
					print_need(r, &o->needs[k], indent);
					done = true;
				}
			if (done)
				break;
		}
	for (size_t p = 0; p < r->nobjects; p++)
		for (size_t k = 0; k < r->objects[p].elf.nneeded; k++)
			if (r->objects[p].needs[k].how == GPUENV_LDSRC_NOTFOUND)
				printf("%s%s => not found (needed by %s)\n", indent,
					r->objects[p].needs[k].name.ptr, r->objects[p].path.ptr);
}

static void print_envs(const gpuenv_stack_t *st, bool tree)
{
	printf("Python environments:%s\n", st->nenvs ? "" : " none");
	for (size_t i = 0; i < st->nenvs; i++) {
		const gpuenv_pyenv_t *e = &st->envs[i];
		printf("  %s (%s)\n    python ", e->prefix.ptr, gpuenv_pyenv_found_name(e->found_by));
		print_version(&e->python);
		printf("\n    interpreter %s\n    %zu distributions in", e->real_interpreter.ptr
			? e->real_interpreter.ptr : "unknown", e->ndists);
		for (size_t s = 0; s < e->nsites; s++)
			printf(" %s", e->sites[s].ptr);
		printf("\n");
		for (size_t f = 0; f < e->nframeworks; f++) {
			const gpuenv_framework_t *fw = &e->frameworks[f];
			printf("    %-16s %-24s %s", gpuenv_fw_kind_name(fw->kind),
				e->dists[fw->dist].normalized.ptr, fw->version.ptr ? fw->version.ptr : "?");
			if (fw->cuda.ptr)
				printf("  CUDA %s (%s)", fw->cuda.ptr, gpuenv_vsrc_name(fw->cuda_src));
			else if (fw->kind == GPUENV_FW_TORCH || fw->kind == GPUENV_FW_ONNXRUNTIME)
				printf("  %s", fw->gpu ? "GPU" : "CPU only");
			printf("\n");
			for (size_t b = 0; b < fw->nbinaries; b++) {
				printf("      %s\n", fw->binaries[b].ptr);
				if (fw->loads)
					print_resolution(&fw->loads[b], tree, "        ");
			}
		}
	}
}

/* ---- verbs ---------------------------------------------------------------- */

enum { OPT_PYTHON = 0x2001, OPT_ENV, OPT_ROOT, OPT_LDCACHE, OPT_TREE, OPT_ALT, OPT_NOLOADER };

static const struct option stack_opts[] = {
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "ldcache", required_argument, NULL, OPT_LDCACHE },
	{ "tree", no_argument, NULL, OPT_TREE },
	{ "alternatives", no_argument, NULL, OPT_ALT },
	{ "no-loader", no_argument, NULL, OPT_NOLOADER },
	{ NULL, 0, NULL, 0 },
};

struct sargs {
	gpuenv_stack_opts_t o;
	bool tree;
};

static int parse(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, struct sargs *a,
	int *status)
{
	int c;

	memset(a, 0, sizeof(*a));
	while ((c = cli_getopt(cli, verb, argc, argv, "", stack_opts, status)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT: return -1;
		case OPT_PYTHON: a->o.python = optarg; break;
		case OPT_ENV: a->o.env_dir = optarg; break;
		case OPT_ROOT: cli->ctx.root = optarg; break;
		case OPT_LDCACHE: a->o.ldcache = optarg; break;
		case OPT_TREE: a->tree = true; break;
		case OPT_ALT: a->o.alternatives = true; break;
		case OPT_NOLOADER: a->o.no_loader = true; break;
		default:
			*status = cli_usage_error(cli, verb, "%s: bad option", verb->name);
			return -1;
		}
	}
	if (a->o.python && a->o.env_dir) {
		*status = cli_usage_error(cli, verb, "%s: --python and --env exclude each other", verb->name);
		return -1;
	}
	return 0;
}

static void print_warnings(struct cli *cli, const gpuenv_stack_t *st)
{
	if (cli->verbose < 1)
		return;
	for (size_t i = 0; i < st->nwarnings; i++)
		fprintf(stderr, "warning: %s\n", st->warnings[i].ptr);
}

static int run_stack(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, int what)
{
	struct sargs a;
	gpuenv_arena_t arena;
	gpuenv_stack_t st;
	int status = CLI_EXIT_OK, r;

	if (parse(cli, verb, argc, argv, &a, &status))
		return status;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (what == 0)
		a.o.no_loader = true; /* the library list alone needs no loader run */
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	r = gpuenv_stack_probe(&cli->ctx, &arena, &a.o, &st);
	if (r) {
		gpuenv_arena_free(&arena);
		return cli_report(cli, CLI_EXIT_FAIL);
	}
	print_warnings(cli, &st);
	if (cli->json) {
		json_t *j;
		if (what == 0)
			j = json_pack("{s:o, s:o, s:o}", "toolkits", json_array(), "ldcache",
				st.have_ldcache ? gpuenv_stack_ldcache_json(&cli->ctx, &st.ldcache, false) : json_null(),
				"libraries", json_array());
		else
			j = json_pack("{s:o}", "python_envs", json_array());
		if (what == 0) {
			for (size_t i = 0; i < st.ntoolkits; i++)
				json_array_append_new(json_object_get(j, "toolkits"), gpuenv_stack_toolkit_json(&cli->ctx, &st.toolkits[i]));
			for (size_t i = 0; i < st.nlibs; i++)
				json_array_append_new(json_object_get(j, "libraries"), gpuenv_stack_libcopy_json(&cli->ctx, &st.libs[i]));
		} else {
			for (size_t i = 0; i < st.nenvs; i++)
				json_array_append_new(json_object_get(j, "python_envs"), gpuenv_stack_pyenv_json(&cli->ctx, &st.envs[i]));
		}
		status = cli_print_json(cli, j);
	} else {
		if (what == 0) {
			print_toolkits(&st);
			printf("ld.so.cache: ");
			if (st.have_ldcache)
				printf("%s, %zu entries\n", st.ldcache.path.ptr, st.ldcache.n);
			else
				printf("none\n");
			print_libs(&st);
		} else {
			print_envs(&st, a.tree);
		}
	}
	gpuenv_arena_free(&arena);
	if (fflush(stdout) != 0)
		status = CLI_EXIT_FAIL;
	return status;
}

static int cli_debug_libs(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return run_stack(cli, verb, argc, argv, 0);
}

static int cli_debug_pyenv(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return run_stack(cli, verb, argc, argv, 1);
}

static int cli_debug_ldd(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct sargs a;
	gpuenv_arena_t arena;
	gpuenv_ldcache_t cache;
	gpuenv_loader_opts_t lo;
	int status = CLI_EXIT_OK, r;
	bool have_cache;

	if (parse(cli, verb, argc, argv, &a, &status))
		return status;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no FILE given", verb->name);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	r = gpuenv_ldcache_load(&cli->ctx, &arena, a.o.ldcache, &cache);
	have_cache = r == 0;
	if (r && a.o.ldcache) {
		gpuenv_arena_free(&arena);
		return cli_report(cli, CLI_EXIT_FAIL);
	}
	gpuenv_error_clear(&cli->ctx);
	memset(&lo, 0, sizeof(lo));
	lo.cache = have_cache ? &cache : NULL;
	lo.alternatives = a.o.alternatives;
	json_t *all = cli->json ? json_array() : NULL;
	for (int i = optind; i < argc; i++) {
		gpuenv_ld_resolution_t res;
		r = gpuenv_loader_resolve(&cli->ctx, &arena, argv[i], &lo, &res);
		if (r) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			continue;
		}
		if (res.nmissing)
			status = CLI_EXIT_FAIL;
		if (all) {
			json_array_append_new(all, gpuenv_stack_resolution_json(&cli->ctx, &res));
		} else {
			if (argc - optind > 1)
				printf("%s:\n", argv[i]);
			print_resolution(&res, a.tree, "\t");
		}
	}
	if (all) {
		int s = cli_print_json(cli, all);
		if (s)
			status = s;
	}
	gpuenv_arena_free(&arena);
	if (fflush(stdout) != 0)
		status = CLI_EXIT_FAIL;
	return status;
}

const struct cli_verb cli_verb_debug_libs = {
	.name = "libs",
	.run = cli_debug_libs,
	.summary = "CUDA toolkits and every copy of the NVIDIA libraries, with versions and where found",
	.usage = "gpuenv debug libs [--json] [--root DIR] [--ldcache FILE] [--python PATH | --env DIR]",
	.help = NULL,
};

const struct cli_verb cli_verb_debug_pyenv = {
	.name = "pyenv",
	.run = cli_debug_pyenv,
	.summary = "Python environments, their GPU frameworks and the libraries those load",
	.usage = "gpuenv debug pyenv [--json] [--tree] [--alternatives] [--no-loader] [--root DIR] [--python PATH | --env DIR]",
	.help = NULL,
};

const struct cli_verb cli_verb_debug_ldd = {
	.name = "ldd",
	.run = cli_debug_ldd,
	.summary = "emulate the dynamic loader for FILE: each DT_NEEDED -> the path ld.so would pick and why",
	.usage = "gpuenv debug ldd [--json] [--tree] [--alternatives] [--root DIR] [--ldcache FILE] FILE...",
	.help = NULL,
};
