/* debug subcommand: gpus — the driver and GPU facts of this machine (or of a
 * --root tree), as text or JSON.  cli_hw_facts_json() is the JSON form that
 * `gpuenv probe --json` can reuse for its "driver"/"gpus" part. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/hw.h"

/* For the integrator: move these two prototypes to cli.h and add this row to
 * subs[] in cli/debug.c (tests/cli/test_hw.py skips until it is there):
 *
 *	{ "gpus", cli_debug_gpus,
 *		"print the driver and GPU facts (NVML, libcuda, procfs/sysfs, Jetson) as text or JSON",
 *		"gpuenv debug gpus [--json] [--deep] [--root DIR] [--nvml LIB] [--libcuda LIB]",
 *		"  --deep             also cuInit and ask libcuda for each device (~250 ms with a GPU)\n"
 *		"  --root DIR         read /proc, /sys and /etc under DIR (libraries are not loaded\n"
 *		"                     unless --nvml / --libcuda name them)\n"
 *		"  --nvml LIB         load this NVML library instead of libnvidia-ml.so.1\n"
 *		"  --libcuda LIB      load this CUDA driver library instead of libcuda.so.1\n"
 *		"  --no-nvml, --no-libcuda, --no-mig, --no-nvlink   skip those queries\n" },
 */
int cli_debug_gpus(struct cli *cli, const struct cli_verb *verb, int argc, char **argv);
json_t *cli_hw_facts_json(const gpuenv_hw_facts_t *f);

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *cuda_version_json(int v)
{
	char s[16];

	if (v <= 0)
		return json_null();
	gpuenv_hw_cuda_version_str(v, s, sizeof(s));
	return json_string(s);
}

static json_t *mig_mode_json(int m)
{
	return m < 0 ? json_null() : json_string(m ? "enabled" : "disabled");
}

static json_t *gpu_json(const gpuenv_hw_facts_t *f, size_t i)
{
	static const char *const fact_names[GPUENV_HW_F_COUNT] = {
		"name", "uuid", "compute_capability", "architecture", "memory", "pci", "mig",
		"nvlink", "visible",
	};
	const gpuenv_hw_gpu_t *g = &f->gpus[i];
	json_t *o = json_object(), *mig = json_object(), *inst = json_array();
	json_t *links = json_array(), *src = json_object(), *warn = json_array();
	char buf[32];

	json_object_set_new(o, "index", g->index >= 0 ? json_integer(g->index) : json_null());
	json_object_set_new(o, "name", str_or_null(g->name));
	json_object_set_new(o, "uuid", str_or_null(g->uuid));
	if (g->cc_major >= 0) {
		snprintf(buf, sizeof(buf), "%d.%d", g->cc_major, g->cc_minor);
		json_object_set_new(o, "compute_capability", json_string(buf));
		snprintf(buf, sizeof(buf), "sm_%d%d", g->cc_major, g->cc_minor);
		json_object_set_new(o, "sm", json_string(buf));
	} else {
		json_object_set_new(o, "compute_capability", json_null());
		json_object_set_new(o, "sm", json_null());
	}
	json_object_set_new(o, "architecture", str_or_null(g->arch));
	json_object_set_new(o, "nvml_architecture",
		g->nvml_arch ? json_integer(g->nvml_arch) : json_null());
	json_object_set_new(o, "memory_total",
		g->mem_total ? json_integer((json_int_t)g->mem_total) : json_null());
	json_object_set_new(o, "memory_free",
		g->mem_free ? json_integer((json_int_t)g->mem_free) : json_null());
	json_object_set_new(o, "pci_bus_id", g->bus_id[0] ? json_string(g->bus_id) : json_null());
	if (g->pci_device_id) {
		snprintf(buf, sizeof(buf), "0x%08X", (unsigned)g->pci_device_id);
		json_object_set_new(o, "pci_device_id", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%04x", (unsigned)g->device_id);
		json_object_set_new(o, "device_id", json_string(buf));
	} else {
		json_object_set_new(o, "pci_device_id", json_null());
		json_object_set_new(o, "device_id", json_null());
	}
	json_object_set_new(o, "kernel_driver", str_or_null(g->driver));
	json_object_set_new(o, "integrated", json_boolean(g->integrated));
	json_object_set_new(o, "visible", json_boolean(g->visible));
	json_object_set_new(o, "cuda_index", g->cuda_index >= 0 ? json_integer(g->cuda_index) : json_null());
	json_object_set_new(mig, "current", mig_mode_json(g->mig_current));
	json_object_set_new(mig, "pending", mig_mode_json(g->mig_pending));
	for (size_t j = 0; j < g->n_mig; j++) {
		const gpuenv_hw_mig_t *m = &g->mig[j];
		json_t *x = json_object();
		json_object_set_new(x, "index", json_integer(m->index));
		json_object_set_new(x, "uuid", str_or_null(m->uuid));
		json_object_set_new(x, "name", str_or_null(m->name));
		json_object_set_new(x, "gpu_instance", m->gi_id >= 0 ? json_integer(m->gi_id) : json_null());
		json_object_set_new(x, "compute_instance", m->ci_id >= 0 ? json_integer(m->ci_id) : json_null());
		json_object_set_new(x, "memory_total", m->mem_total ? json_integer((json_int_t)m->mem_total) : json_null());
		json_object_set_new(x, "memory_free", m->mem_free ? json_integer((json_int_t)m->mem_free) : json_null());
		json_object_set_new(x, "visible", json_boolean(m->visible));
		json_object_set_new(x, "cuda_index", m->cuda_index >= 0 ? json_integer(m->cuda_index) : json_null());
		json_array_append_new(inst, x);
	}
	json_object_set_new(mig, "instances", inst);
	json_object_set_new(o, "mig", mig);
	for (size_t j = 0; j < g->n_nvlink; j++) {
		const gpuenv_hw_nvlink_t *k = &g->nvlink[j];
		json_t *x = json_object();
		json_object_set_new(x, "link", json_integer(k->link));
		json_object_set_new(x, "active", json_boolean(k->active));
		json_object_set_new(x, "peer_pci_bus_id", k->peer_bus_id[0] ? json_string(k->peer_bus_id) : json_null());
		json_object_set_new(x, "peer_type", k->active ? json_string(gpuenv_hw_peer_name(k->peer_type)) : json_null());
		json_object_set_new(x, "peer_gpu", k->peer_gpu >= 0 && f->gpus[k->peer_gpu].index >= 0 ?
			json_integer(f->gpus[k->peer_gpu].index) : json_null());
		json_array_append_new(links, x);
	}
	json_object_set_new(o, "nvlink", links);
	for (int k = 0; k < GPUENV_HW_F_COUNT; k++)
		if (g->src[k])
			json_object_set_new(src, fact_names[k], json_string(gpuenv_hw_src_name(g->src[k])));
	json_object_set_new(o, "sources", src);
	for (size_t k = 0; k < f->n_warnings; k++)
		if (f->warnings[k].gpu == (int)i)
			json_array_append_new(warn, json_string(f->warnings[k].msg));
	json_object_set_new(o, "warnings", warn);
	return o;
}

json_t *cli_hw_facts_json(const gpuenv_hw_facts_t *f)
{
	json_t *o = json_object(), *d = json_object(), *n = json_object(), *c = json_object();
	json_t *v = json_object(), *vis = json_array(), *devs = json_array();
	json_t *pci = json_array(), *gpus = json_array(), *warn = json_array();
	const gpuenv_hw_driver_t *dr = &f->driver;
	char buf[32];

	json_object_set_new(o, "state", json_string(gpuenv_hw_state_name(f->state)));
	json_object_set_new(o, "state_text", json_string(gpuenv_hw_state_text(f->state)));

	json_object_set_new(d, "loaded", json_boolean(dr->loaded));
	json_object_set_new(d, "version", str_or_null(dr->version));
	json_object_set_new(d, "version_source", dr->version ? json_string(gpuenv_hw_src_name(dr->version_src)) : json_null());
	json_object_set_new(d, "cuda_version", cuda_version_json(dr->cuda_version));
	json_object_set_new(d, "cuda_version_int", dr->cuda_version ? json_integer(dr->cuda_version) : json_null());
	json_object_set_new(d, "cuda_version_source", dr->cuda_version ? json_string(gpuenv_hw_src_name(dr->cuda_version_src)) : json_null());
	json_object_set_new(d, "kernel_module", str_or_null(dr->module_version));
	json_object_set_new(d, "flavor", str_or_null(dr->flavor));
	json_object_set_new(d, "procfs", str_or_null(dr->procfs));
	json_object_set_new(d, "procfs_version", str_or_null(dr->procfs_version));

	json_object_set_new(n, "state", json_string(gpuenv_hw_nvml_state_name(f->nvml.state)));
	json_object_set_new(n, "loaded", json_boolean(f->nvml.state == GPUENV_HW_LIB_OK));
	json_object_set_new(n, "path", str_or_null(f->nvml.path));
	json_object_set_new(n, "version", str_or_null(f->nvml.version));
	json_object_set_new(n, "error", f->nvml.state == GPUENV_HW_LIB_ERROR ?
		str_or_null(gpuenv_hw_nvml_error_name(f->nvml.error)) : json_null());
	json_object_set_new(n, "message", str_or_null(f->nvml.message));
	json_object_set_new(n, "device_count", f->nvml.state == GPUENV_HW_LIB_OK ?
		json_integer(f->nvml.device_count) : json_null());
	json_object_set_new(d, "nvml", n);

	json_object_set_new(c, "state", json_string(gpuenv_hw_libcuda_state_name(f->libcuda.state)));
	json_object_set_new(c, "path", str_or_null(f->libcuda.path));
	json_object_set_new(c, "cuda_version", cuda_version_json(f->libcuda.version));
	json_object_set_new(c, "cuda_version_int", f->libcuda.version ? json_integer(f->libcuda.version) : json_null());
	json_object_set_new(c, "error", str_or_null(f->libcuda.error_name));
	json_object_set_new(c, "message", str_or_null(f->libcuda.message));
	json_object_set_new(c, "initialized", json_boolean(f->libcuda.initialized));
	json_object_set_new(c, "device_count", f->libcuda.device_count >= 0 ? json_integer(f->libcuda.device_count) : json_null());
	json_object_set_new(d, "libcuda", c);
	json_object_set_new(o, "driver", d);

	if (f->jetson.present) {
		json_t *j = json_object();
		json_object_set_new(j, "model", str_or_null(f->jetson.model));
		json_object_set_new(j, "soc", str_or_null(f->jetson.soc));
		json_object_set_new(j, "l4t", str_or_null(f->jetson.l4t));
		json_object_set_new(j, "nvgpu", json_boolean(f->jetson.nvgpu));
		json_object_set_new(o, "jetson", j);
	} else {
		json_object_set_new(o, "jetson", json_null());
	}

	json_object_set_new(v, "set", json_boolean(f->visible.set));
	json_object_set_new(v, "value", str_or_null(f->visible.value));
	for (size_t i = 0; i < f->visible.n; i++) {
		const gpuenv_hw_visible_dev_t *x = &f->visible.devs[i];
		const gpuenv_hw_gpu_t *g = &f->gpus[x->gpu];
		json_t *e = json_object();
		json_object_set_new(e, "gpu", g->index >= 0 ? json_integer(g->index) : json_null());
		json_object_set_new(e, "mig", x->mig >= 0 ? str_or_null(g->mig[x->mig].uuid) : json_null());
		json_array_append_new(devs, e);
		if (x->mig < 0 && g->index >= 0)
			json_array_append_new(vis, json_integer(g->index));
	}
	json_object_set_new(v, "visible", vis);
	json_object_set_new(v, "devices", devs);
	json_object_set_new(v, "invalid", str_or_null(f->visible.invalid));
	json_object_set_new(v, "ambiguous_order", json_boolean(f->visible.ambiguous_order));
	json_object_set_new(o, "cuda_visible_devices", v);

	for (size_t i = 0; i < f->n_pci; i++) {
		const gpuenv_hw_pci_t *p = &f->pci[i];
		json_t *e = json_object();
		json_object_set_new(e, "bus_id", json_string(p->bus_id));
		snprintf(buf, sizeof(buf), "0x%04x", p->vendor);
		json_object_set_new(e, "vendor", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%04x", p->device);
		json_object_set_new(e, "device", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%06x", (unsigned)p->class_code);
		json_object_set_new(e, "class", json_string(buf));
		json_object_set_new(e, "kind", json_string(p->kind == GPUENV_HW_PCI_GPU ? "gpu" :
			p->kind == GPUENV_HW_PCI_NVSWITCH ? "nvswitch" : "other"));
		json_object_set_new(e, "driver", str_or_null(p->driver));
		json_array_append_new(pci, e);
	}
	json_object_set_new(o, "pci", pci);
	for (size_t i = 0; i < f->n_gpus; i++)
		json_array_append_new(gpus, gpu_json(f, i));
	json_object_set_new(o, "gpus", gpus);
	for (size_t i = 0; i < f->n_warnings; i++) {
		const gpuenv_hw_warning_t *w = &f->warnings[i];
		json_t *e = json_object();
		json_object_set_new(e, "id", json_string(w->id));
		json_object_set_new(e, "message", json_string(w->msg));
		json_object_set_new(e, "hint", str_or_null(w->hint));
		json_object_set_new(e, "gpu", w->gpu >= 0 && f->gpus[w->gpu].index >= 0 ?
			json_integer(f->gpus[w->gpu].index) : json_null());
		json_object_set_new(e, "source", json_string(gpuenv_hw_src_name(w->src)));
		json_object_set_new(e, "code", w->code ? json_integer(w->code) : json_null());
		json_array_append_new(warn, e);
	}
	json_object_set_new(o, "warnings", warn);
	return o;
}

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

int cli_debug_gpus(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
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
		status = cli_print_json(cli, cli_hw_facts_json(facts));
	} else {
		print_text(cli, facts);
		status = CLI_EXIT_OK;
	}
	gpuenv_arena_free(&arena);
	return status;
}
