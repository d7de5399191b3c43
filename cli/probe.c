/* gpuenv probe: the machine's GPU stack, as a compact human view or as the
 * facts JSON (docs/probe-schema.md).  Both are written from the one typed
 * facts struct the probe fills (gpuenv_probe_facts), the struct every verb
 * reads, so they always agree. */
#include "cli.h"

#include <string.h>

#include "gpuenv/facts.h"
#include "gpuenv/probe.h"
#include "gpuenv/trace.h"

static const char *or_unknown(const char *s)
{
	return s ? s : "unknown";
}

static void print_warning(struct cli *cli, const char *indent, const char *msg, const char *hint)
{
	printf("%s%swarning:%s %s\n", indent, cli_col(cli, CLI_YELLOW), cli_col(cli, CLI_RESET), msg);
	if (hint)
		printf("%s  fix: %s\n", indent, hint);
}

static void human_driver(struct cli *cli, const gpuenv_facts_t *f)
{
	const gpuenv_facts_driver_t *d = &f->driver;
	const gpuenv_facts_nvml_t *nvml = &d->nvml;
	const gpuenv_facts_libcuda_t *cuda = &d->libcuda;

	printf("%sdriver%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (d->state && strcmp(d->state, "ok") == 0) {
		printf("  NVIDIA %s (%s kernel module), supports CUDA <= %s\n", or_unknown(d->version),
			or_unknown(d->flavor), or_unknown(d->cuda_version));
	} else {
		printf("  %s%s%s\n", cli_col(cli, CLI_YELLOW), or_unknown(d->state_text),
			cli_col(cli, CLI_RESET));
		if (d->version)
			printf("  version %s\n", d->version);
	}
	printf("  NVML: %s%s%s", or_unknown(nvml->state), nvml->path ? " " : "",
		nvml->path ? nvml->path : "");
	if (nvml->message && strcmp(or_unknown(nvml->state), "ok") != 0)
		printf(" (%s)", nvml->message);
	printf("\n  libcuda: %s", or_unknown(cuda->state));
	if (cuda->path)
		printf(" %s", cuda->path);
	if (cuda->cuda_version)
		printf(", CUDA %s", cuda->cuda_version);
	if (cuda->message && strcmp(or_unknown(cuda->state), "driver") != 0)
		printf(" (%s)", cuda->message);
	printf("\n");
	if (f->jetson.present)
		printf("  Jetson: %s, SoC %s, L4T %s\n", or_unknown(f->jetson.model),
			or_unknown(f->jetson.soc), or_unknown(f->jetson.l4t));
}

static void human_gpus(struct cli *cli, const gpuenv_facts_t *f)
{
	size_t i;

	printf("%sGPUs%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (f->cvd.set == GPUENV_TRI_TRUE)
		printf("  CUDA_VISIBLE_DEVICES=%s -> %zu device(s) visible to CUDA\n",
			or_unknown(f->cvd.value), f->cvd.ndevices);
	if (!f->ngpus) {
		size_t n = 0;
		for (i = 0; i < f->npci; i++)
			if (f->pci[i].kind && strcmp(f->pci[i].kind, "gpu") == 0)
				n++;
		printf("  none%s\n", n ? " visible to the driver (see the PCI devices below)" : "");
	}
	for (i = 0; i < f->ngpus; i++) {
		const gpuenv_facts_gpu_t *g = &f->gpus[i];
		char ix[24] = "-";
		size_t k, active = 0;
		if (g->index >= 0)
			snprintf(ix, sizeof(ix), "%lld", g->index);
		printf("  [%s] %s  %s (%s, CC %s)", ix, or_unknown(g->name), or_unknown(g->sm),
			or_unknown(g->architecture), or_unknown(g->compute_capability));
		if (g->memory_total >= 0)
			printf(", %.1f GiB", (double)g->memory_total / (1024.0 * 1024 * 1024));
		printf("\n      %s  pci %s  id %s", or_unknown(g->uuid), or_unknown(g->pci_bus_id),
			or_unknown(g->pci_device_id));
		if (g->visible != GPUENV_TRI_TRUE)
			printf("  %s(hidden from CUDA)%s", cli_col(cli, CLI_YELLOW), cli_col(cli, CLI_RESET));
		printf("\n");
		if (g->mig_current && strcmp(g->mig_current, "enabled") == 0) {
			printf("      MIG enabled, %zu instance(s)\n", g->nmig_instances);
			for (k = 0; k < g->nmig_instances; k++)
				printf("        %s %s\n", or_unknown(g->mig_instances[k].uuid),
					or_unknown(g->mig_instances[k].name));
		}
		for (k = 0; k < g->nnvlink; k++)
			active += g->nvlink[k].active == GPUENV_TRI_TRUE;
		if (active) {
			printf("      NVLink: %zu active link(s) ->", active);
			for (k = 0; k < g->nnvlink; k++)
				if (g->nvlink[k].active == GPUENV_TRI_TRUE)
					printf(" %s", or_unknown(g->nvlink[k].peer_pci_bus_id));
			printf("\n");
		}
		for (k = 0; k < g->warnings.n; k++)
			print_warning(cli, "      ", g->warnings.items[k], NULL);
	}
	if (f->npci) {
		printf("  PCI:");
		for (i = 0; i < f->npci; i++) {
			const gpuenv_facts_pci_t *p = &f->pci[i];
			printf(" %s %s:%s [%s]", or_unknown(p->bus_id), or_unknown(p->vendor),
				or_unknown(p->device), p->driver ? p->driver : "no driver");
		}
		printf("\n");
	}
}

static void human_toolkits(struct cli *cli, const gpuenv_facts_t *f)
{
	printf("%sCUDA toolkits%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (!f->ntoolkits)
		printf("  none\n");
	for (size_t i = 0; i < f->ntoolkits; i++) {
		const gpuenv_facts_toolkit_t *t = &f->toolkits[i];
		printf("  %s  CUDA %s (%s)%s%s\n", or_unknown(t->path), or_unknown(t->version.version),
			or_unknown(t->version.source), t->nvcc ? "  nvcc " : "", t->nvcc ? t->nvcc : "");
	}
}

/* A binary's CUDA code as the text view shows it: the summary, or why it
 * could not be read; NULL when it was not looked at. */
static const char *code_text(unsigned char state, const char *summary, const char *error)
{
	if (state != GPUENV_FACT_SET && state != GPUENV_FACT_MISTYPED)
		return NULL;
	return error ? error : or_unknown(summary);
}

static void human_libraries(struct cli *cli, const gpuenv_facts_t *f)
{
	printf("%slibraries%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (!f->nlibraries)
		printf("  none found\n");
	for (size_t i = 0; i < f->nlibraries; i++) {
		const gpuenv_facts_library_t *l = &f->libraries[i];
		const char *code = code_text(l->code_state, l->code_summary, l->code_error);
		printf("  %-9s %-12s %s [", or_unknown(l->family), or_unknown(l->version.version),
			or_unknown(l->path));
		for (size_t k = 0; k < l->where.n; k++)
			printf("%s%s", k ? ", " : "", l->where.items[k]);
		printf("]\n");
		/* --all-binaries: the CUDA code of every library copy */
		if (code)
			printf("            CUDA code: %s\n", code);
	}
}

/* The copy the loader picks for each NVIDIA library a binary needs. */
static void human_loads(const gpuenv_facts_binary_t *b)
{
	/* the binary's own needs (objects[0]); the rest are transitive */
	if (!b->nobjects)
		return;
	for (size_t k = 0; k < b->objects[0].nneeds; k++) {
		const gpuenv_facts_need_t *n = &b->objects[0].needs[k];
		const char *name = n->name;
		if (!name || !(strstr(name, "cud") || strstr(name, "nccl") || strstr(name, "cublas") ||
			strstr(name, "nvrtc") || strstr(name, "nvJitLink") || strstr(name, "nvinfer")))
			continue;
		printf("        %s -> %s (%s)\n", name, n->path ? n->path : "NOT FOUND", or_unknown(n->how));
	}
}

static void human_envs(struct cli *cli, const gpuenv_facts_t *f)
{
	printf("%sPython environments%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (!f->nenvs)
		printf("  none found\n");
	for (size_t i = 0; i < f->nenvs; i++) {
		const gpuenv_facts_env_t *e = &f->envs[i];
		printf("  %s  Python %s, %zu distributions (%s)\n", or_unknown(e->prefix),
			or_unknown(e->python.version), e->ndists, or_unknown(e->found_by));
		for (size_t k = 0; k < e->nframeworks; k++) {
			const gpuenv_facts_framework_t *fw = &e->frameworks[k];
			/* "CPU only" only where the package itself decides (torch +cpu,
			 * plain onnxruntime); jax and jaxlib get CUDA from plugins */
			const char *kind = or_unknown(fw->kind);
			bool cpu = fw->gpu != GPUENV_TRI_TRUE &&
				(strcmp(kind, "torch") == 0 || strcmp(kind, "onnxruntime") == 0);
			printf("    %s %s%s%s\n", or_unknown(fw->dist), or_unknown(fw->version),
				fw->cuda ? ", CUDA " : cpu ? ", CPU only" : "", fw->cuda ? fw->cuda : "");
			for (size_t m = 0; m < fw->nbinaries; m++) {
				const gpuenv_facts_binary_t *b = &fw->binaries[m];
				const char *path = or_unknown(b->path);
				const char *base = strrchr(path, '/');
				const char *code = code_text(b->code_state, b->summary, b->error);
				printf("      %s: %s\n", base ? base + 1 : path, code ? code : "");
				human_loads(b);
			}
		}
	}
}

static void human_warnings(struct cli *cli, const gpuenv_facts_t *f)
{
	for (size_t i = 0; i < f->nwarnings; i++) {
		if (f->warnings[i].gpu >= 0)
			continue; /* shown under its GPU */
		print_warning(cli, "", or_unknown(f->warnings[i].message), f->warnings[i].hint);
	}
}

/* probe --json: the text written from the facts, no tree between; the
 * stack's part (toolkits to environments: most of the document) written
 * between the probe's halves, then head, stack and tail printed in turn. */
static int probe_json(struct cli *cli, const gpuenv_probe_opts_t *po, gpuenv_arena_t *arena)
{
	const gpuenv_facts_t *f;
	gpuenv_probe_t *P;
	gpuenv_buf_t stack, b;
	bool wfail = false;
	int r;

	if (gpuenv_probe_begin(&cli->ctx, po, arena, &P, &f)) {
		gpuenv_arena_free(arena);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	gpuenv_buf_init(&stack, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	uint64_t t0 = gpuenv_trace_begin(&cli->ctx);
	r = gpuenv_facts_write_parts(&cli->ctx, f, &stack, 2, GPUENV_FACTS_STACK);
	gpuenv_trace_end(&cli->ctx, "probe", "write", NULL, "the document's stack part", t0);
	if (gpuenv_probe_end(P, &cli->ctx, &f) && !r)
		r = -1;
	t0 = gpuenv_trace_begin(&cli->ctx);
	gpuenv_buf_init(&b, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	if (!r)
		r = gpuenv_facts_write_parts(&cli->ctx, f, &b, 2, GPUENV_FACTS_HEAD);
	if (!r && !gpuenv_buf_failed(&b) && !gpuenv_buf_failed(&stack)) {
		wfail = fwrite(b.data, 1, b.len, stdout) != b.len ||
			fwrite(stack.data ? stack.data : "", 1, stack.len, stdout) != stack.len;
		gpuenv_buf_reset(&b);
		if (!wfail)
			r = gpuenv_facts_write_parts(&cli->ctx, f, &b, 2, GPUENV_FACTS_TAIL);
	}
	gpuenv_trace_end(&cli->ctx, "probe", "write", NULL, "head and tail written, the document printed", t0);
	gpuenv_buf_free(&stack);
	gpuenv_arena_free(arena);
	if (wfail) { /* main() reports the write error once, after the verb */
		gpuenv_buf_free(&b);
		return CLI_EXIT_CANNOT;
	}
	return cli_print_json_text(cli, &b, r);
}

static int cli_probe(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "deep", no_argument, NULL, 'd' },
		{ "python", required_argument, NULL, 'p' },
		{ "env", required_argument, NULL, 'e' },
		{ "root", required_argument, NULL, 'r' },
		{ "nvml-lib", required_argument, NULL, 'n' },
		{ "cuda-lib", required_argument, NULL, 'c' },
		{ "no-fatbin", no_argument, NULL, 'F' },
		{ "all-binaries", no_argument, NULL, 'A' },
		{ "gpus-only", no_argument, NULL, 'G' },
		{ "profile", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	gpuenv_probe_opts_t po;
	const gpuenv_facts_t *f;
	gpuenv_arena_t arena;
	const char *profile = NULL;
	int c, st, r;

	gpuenv_probe_opts_init(&po);
	po.version = GPUENV_VERSION;
	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case 'd': po.flags |= GPUENV_PROBE_DEEP; break;
		case 'p': po.python = optarg; break;
		case 'e': po.env_dir = optarg; break;
		case 'r': cli->ctx.root = optarg; break;
		case 'n': po.hw.nvml_lib = optarg; break;
		case 'c': po.hw.cuda_lib = optarg; break;
		case 'F': po.flags |= GPUENV_PROBE_NO_FATBIN; break;
		case 'A': po.flags |= GPUENV_PROBE_ALL_BINARIES; break;
		case 'G': po.flags |= GPUENV_PROBE_NO_LIBS; break;
		case 'P': profile = optarg; break;
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "probe: unexpected argument '%s'", argv[optind]);
	if (po.python && po.env_dir)
		return cli_usage_error(cli, verb, "probe: --python and --env name the same thing; give one");
	/* the typed facts every verb reads (lib/facts); --json writes them,
	 * the stack's part while NVML starts (on a VM the page faults of
	 * the 0.6 MB a torch environment gives cost more than the writing) */
	if ((st = cli_profile_start(cli, verb->name, profile)) != 0)
		return st;
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (cli->json)
		return cli_profile_finish(cli, profile, probe_json(cli, &po, &arena));
	r = gpuenv_probe_facts(&cli->ctx, &po, &arena, &f);
	if (r) { /* a missing --root, --python or --env: the library's message */
		gpuenv_arena_free(&arena);
		return cli_profile_finish(cli, profile, cli_report(cli, CLI_EXIT_CANNOT));
	}
	human_driver(cli, f);
	human_gpus(cli, f);
	if (f->have_libraries) {
		human_toolkits(cli, f);
		human_libraries(cli, f);
		human_envs(cli, f);
	}
	human_warnings(cli, f);
	gpuenv_arena_free(&arena);
	return cli_profile_finish(cli, profile, CLI_EXIT_OK);
}

const struct cli_verb cli_verb_probe = {
	.name = "probe",
	.run = cli_probe,
	.summary = "snapshot of this machine's GPU stack: driver, GPUs, toolkits, libraries, Python environments, CUDA code",
	.usage = "gpuenv probe [--json] [--deep] [--python PATH | --env DIR] [--root DIR] [--profile FILE]",
	.help = "  --deep             also cuInit and ask libcuda about each device (~200 ms with a GPU)\n"
		"  --python PATH      read the environment of this interpreter (default: VIRTUAL_ENV,\n"
		"                     then python3 on PATH); read from disk, Python is never started\n"
		"  --env DIR          read this virtual environment or prefix\n"
		"  --no-fatbin        skip listing the CUDA code (cubins, PTX) in framework binaries\n"
		"  --all-binaries     also list the CUDA code of every NVIDIA library found\n"
		"  --gpus-only        driver and GPUs only: no toolkits, libraries or environments\n"
		"  --root DIR         read /proc, /sys, /etc, ... under DIR (a snapshot or a test tree)\n"
		"  --profile FILE     write where the probe's time went (Chrome trace format:\n"
		"                     the NVML start, sysfs, toolkits, environments, fatbins,\n"
		"                     the writing; read it with gpuenv profile FILE)\n"
		"  --nvml-lib LIB     load this NVML instead of libnvidia-ml.so.1\n"
		"  --cuda-lib LIB     load this libcuda instead of libcuda.so.1\n"
		"\nThe JSON (--json) is the facts document of docs/probe-schema.md (gpuenv.facts/1),\n"
		"which doctor --facts and preflight --facts read.\n",
};
