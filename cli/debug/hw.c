/* debug subcommand: gpus — the driver and GPU facts of this machine (or of a
 * --root tree), as text or JSON.  cli_hw_facts_json() is the JSON form that
 * `gpuenv probe --json` can reuse for its "driver"/"gpus" part. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/hw.h"
#include "gpuenv/facts_write.h"
#include "gpuenv/probe.h"


static void print_mib(const char *what, uint64_t bytes)
{
	if (bytes)
		printf(", %s %llu MiB", what, (unsigned long long)(bytes >> 20));
}

static void print_text(struct cli *cli, const gpuenv_hw_facts_t *f)
{
	const gpuenv_hw_driver_t *d = &f->driver;
	char v[16];

	printf("%sstate:%s %s (%s)\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET),
		gpuenv_hw_state_name(f->state), gpuenv_hw_state_text(f->state));
	if (d->version) {
		printf("driver: %s (%s)", d->version, gpuenv_hw_src_name(d->version_src));
		if (d->flavor)
			printf(", %s kernel module", d->flavor);
		if (d->module_version)
			printf(" %s", d->module_version);
		printf("\n");
	} else {
		printf("driver: %s\n", d->loaded ? "loaded, version unknown" : "not loaded");
	}
	gpuenv_hw_cuda_version_str(d->cuda_version, v, sizeof(v));
	if (v[0])
		printf("CUDA supported by the driver: %s (%s)\n", v, gpuenv_hw_src_name(d->cuda_version_src));
	printf("nvml: %s", gpuenv_hw_nvml_state_name(f->nvml.state));
	if (f->nvml.path)
		printf(" %s", f->nvml.path);
	if (f->nvml.version)
		printf(" (NVML %s)", f->nvml.version);
	if (f->nvml.state != GPUENV_HW_LIB_OK && f->nvml.message)
		printf(": %s", f->nvml.message);
	printf("\nlibcuda: %s", gpuenv_hw_libcuda_state_name(f->libcuda.state));
	if (f->libcuda.path)
		printf(" %s", f->libcuda.path);
	gpuenv_hw_cuda_version_str(f->libcuda.version, v, sizeof(v));
	if (v[0])
		printf(", CUDA %s", v);
	if (f->libcuda.initialized)
		printf(", cuInit: %d device(s)", f->libcuda.device_count);
	else if (f->libcuda.error_name && f->libcuda.state == GPUENV_HW_LIB_OK)
		printf(", cuInit: %s", f->libcuda.error_name);
	if (f->libcuda.state == GPUENV_HW_LIB_STUB)
		printf(" (toolkit stub, not a driver)");
	else if (f->libcuda.state != GPUENV_HW_LIB_OK && f->libcuda.message)
		printf(": %s", f->libcuda.message);
	printf("\n");
	if (f->jetson.present)
		printf("jetson: %s, %s, L4T %s%s\n", f->jetson.model ? f->jetson.model : "?",
			f->jetson.soc ? f->jetson.soc : "?", f->jetson.l4t ? f->jetson.l4t : "?",
			f->jetson.nvgpu ? ", nvgpu loaded" : "");
	if (f->visible.set)
		printf("CUDA_VISIBLE_DEVICES=%s: %zu device(s) visible%s%s%s\n", f->visible.value,
			f->visible.n, f->visible.invalid ? " (stopped at '" : "",
			f->visible.invalid ? f->visible.invalid : "", f->visible.invalid ? "')" : "");
	for (size_t i = 0; i < f->n_gpus; i++) {
		const gpuenv_hw_gpu_t *g = &f->gpus[i];
		if (g->index >= 0)
			printf("GPU %d: ", g->index);
		else
			printf("GPU (%s): ", g->integrated ? "integrated" : "not in NVML");
		printf("%s%s%s", cli_col(cli, CLI_BOLD), g->name ? g->name : "unknown", cli_col(cli, CLI_RESET));
		if (g->cuda_index >= 0)
			printf("  [cuda:%d]", g->cuda_index);
		else if (!g->visible)
			printf("  [hidden from CUDA]");
		printf("\n  ");
		if (g->uuid)
			printf("%s, ", g->uuid);
		if (g->cc_major >= 0)
			printf("compute capability %d.%d (sm_%d%d)", g->cc_major, g->cc_minor, g->cc_major, g->cc_minor);
		else
			printf("compute capability unknown");
		if (g->arch)
			printf(", %s", g->arch);
		print_mib("memory", g->mem_total);
		print_mib("free", g->mem_free);
		printf("\n");
		if (g->bus_id[0] || g->driver) {
			printf("  ");
			if (g->bus_id[0])
				printf("pci %s device 0x%04x (0x%08X)", g->bus_id, g->device_id, (unsigned)g->pci_device_id);
			if (g->driver)
				printf("%sdriver %s", g->bus_id[0] ? ", " : "", g->driver);
			printf("\n");
		}
		if (g->mig_current >= 0) {
			printf("  MIG %s", g->mig_current ? "enabled" : "disabled");
			if (g->mig_pending != g->mig_current)
				printf(" (%s after reset)", g->mig_pending ? "enabled" : "disabled");
			printf("\n");
		}
		for (size_t j = 0; j < g->n_mig; j++) {
			const gpuenv_hw_mig_t *m = &g->mig[j];
			printf("    MIG %u: %s %s", m->index, m->name ? m->name : "?", m->uuid ? m->uuid : "?");
			print_mib("memory", m->mem_total);
			if (m->cuda_index >= 0)
				printf("  [cuda:%d]", m->cuda_index);
			printf("\n");
		}
		size_t active = 0;
		for (size_t j = 0; j < g->n_nvlink; j++)
			active += g->nvlink[j].active;
		if (g->n_nvlink) {
			printf("  NVLink: %zu of %zu links active", active, g->n_nvlink);
			for (size_t j = 0; j < g->n_nvlink; j++) {
				const gpuenv_hw_nvlink_t *k = &g->nvlink[j];
				if (!k->active)
					continue;
				printf("\n    link %u -> %s %s", k->link, gpuenv_hw_peer_name(k->peer_type),
					k->peer_bus_id[0] ? k->peer_bus_id : "?");
				if (k->peer_gpu >= 0 && f->gpus[k->peer_gpu].index >= 0)
					printf(" (GPU %d)", f->gpus[k->peer_gpu].index);
			}
			printf("\n");
		}
	}
	for (size_t i = 0; i < f->n_pci; i++)
		if (f->pci[i].kind == GPUENV_HW_PCI_NVSWITCH)
			printf("NVSwitch: %s\n", f->pci[i].bus_id);
	for (size_t i = 0; i < f->n_warnings; i++) {
		const gpuenv_hw_warning_t *w = &f->warnings[i];
		printf("%swarning:%s %s\n", cli_col(cli, CLI_YELLOW), cli_col(cli, CLI_RESET), w->msg);
		if (w->hint)
			printf("  hint: %s\n", w->hint);
	}
}

static int cli_debug_gpus(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "deep", no_argument, NULL, 'd' },
		{ "root", required_argument, NULL, 'r' },
		{ "nvml", required_argument, NULL, 'n' },
		{ "libcuda", required_argument, NULL, 'c' },
		{ "no-nvml", no_argument, NULL, 'N' },
		{ "no-libcuda", no_argument, NULL, 'C' },
		{ "no-mig", no_argument, NULL, 'M' },
		{ "no-nvlink", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	gpuenv_hw_opts_t opts;
	gpuenv_hw_facts_t *facts;
	gpuenv_arena_t arena;
	int c, st, status;

	gpuenv_hw_opts_init(&opts);
	while ((c = cli_getopt(cli, verb, argc, argv, "", longopts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT: return st;
		case 'd': opts.flags |= GPUENV_HW_DEEP; break;
		case 'r': cli->ctx.root = strcmp(optarg, "/") == 0 ? "" : optarg; break;
		case 'n': opts.nvml_lib = optarg; break;
		case 'c': opts.cuda_lib = optarg; break;
		case 'N': opts.flags |= GPUENV_HW_NO_NVML; break;
		case 'C': opts.flags |= GPUENV_HW_NO_LIBCUDA; break;
		case 'M': opts.flags |= GPUENV_HW_NO_MIG; break;
		case 'L': opts.flags |= GPUENV_HW_NO_NVLINK; break;
		default: return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (gpuenv_hw_probe_gpus(&cli->ctx, &opts, &arena, &facts) < 0) {
		gpuenv_arena_free(&arena);
		return cli_report(cli, CLI_EXIT_FAIL);
	}
	if (cli->json) {
		json_t *o = json_object();
		json_object_set_new(o, "warnings", json_array());
		if (gpuenv_probe_hw_json(&cli->ctx, facts, o)) {
			json_decref(o);
			o = NULL;
		}
		status = cli_print_json(cli, o);
	} else {
		print_text(cli, facts);
		status = CLI_EXIT_OK;
	}
	gpuenv_arena_free(&arena);
	return status;
}

const struct cli_verb cli_verb_debug_gpus = {
	.name = "gpus",
	.run = cli_debug_gpus,
	.summary = "print the driver and GPU facts (NVML, libcuda, procfs/sysfs, Jetson) as text or JSON",
	.usage = "gpuenv debug gpus [--json] [--deep] [--root DIR] [--nvml LIB] [--libcuda LIB]",
	.help = "  --deep             also cuInit and ask libcuda for each device (~250 ms with a GPU)\n"
		"  --root DIR         read /proc, /sys and /etc under DIR (libraries are not loaded\n"
		"                     unless --nvml / --libcuda name them)\n"
		"  --nvml LIB         load this NVML library instead of libnvidia-ml.so.1\n"
		"  --libcuda LIB      load this CUDA driver library instead of libcuda.so.1\n"
		"  --no-nvml, --no-libcuda, --no-mig, --no-nvlink   skip those queries\n",
};
