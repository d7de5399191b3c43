/* gpuenv probe: the machine's GPU stack, as a compact human view or as the
 * facts JSON (docs/probe-schema.md).  The human view is written from the very
 * JSON object --json prints, so both always agree. */
#include "cli.h"

#include <string.h>

#include "gpuenv/probe.h"

static const char *s_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

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

static void human_driver(struct cli *cli, json_t *f)
{
	json_t *d = json_object_get(f, "driver");
	json_t *nvml = json_object_get(d, "nvml"), *cuda = json_object_get(d, "libcuda");
	const char *state = s_of(d, "state");

	printf("%sdriver%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (state && strcmp(state, "ok") == 0) {
		printf("  NVIDIA %s (%s kernel module), supports CUDA <= %s\n",
			or_unknown(s_of(d, "version")), or_unknown(s_of(d, "flavor")),
			or_unknown(s_of(d, "cuda_version")));
	} else {
		printf("  %s%s%s\n", cli_col(cli, CLI_YELLOW), or_unknown(s_of(d, "state_text")),
			cli_col(cli, CLI_RESET));
		if (s_of(d, "version"))
			printf("  version %s\n", s_of(d, "version"));
	}
	printf("  NVML: %s%s%s", or_unknown(s_of(nvml, "state")), s_of(nvml, "path") ? " " : "",
		s_of(nvml, "path") ? s_of(nvml, "path") : "");
	if (s_of(nvml, "message") && strcmp(or_unknown(s_of(nvml, "state")), "ok") != 0)
		printf(" (%s)", s_of(nvml, "message"));
	printf("\n  libcuda: %s", or_unknown(s_of(cuda, "state")));
	if (s_of(cuda, "path"))
		printf(" %s", s_of(cuda, "path"));
	if (s_of(cuda, "cuda_version"))
		printf(", CUDA %s", s_of(cuda, "cuda_version"));
	if (s_of(cuda, "message") && strcmp(or_unknown(s_of(cuda, "state")), "driver") != 0)
		printf(" (%s)", s_of(cuda, "message"));
	printf("\n");
	json_t *j = json_object_get(f, "jetson");
	if (json_is_object(j))
		printf("  Jetson: %s, SoC %s, L4T %s\n", or_unknown(s_of(j, "model")),
			or_unknown(s_of(j, "soc")), or_unknown(s_of(j, "l4t")));
}

static void human_gpus(struct cli *cli, json_t *f)
{
	json_t *gpus = json_object_get(f, "gpus"), *vis = json_object_get(f, "cuda_visible_devices");
	json_t *pci = json_object_get(f, "pci");
	size_t i;
	json_t *g;

	printf("%sGPUs%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (json_is_true(json_object_get(vis, "set")))
		printf("  CUDA_VISIBLE_DEVICES=%s -> %zu device(s) visible to CUDA\n",
			or_unknown(s_of(vis, "value")), json_array_size(json_object_get(vis, "devices")));
	if (!json_array_size(gpus)) {
		size_t n = 0;
		json_array_foreach(pci, i, g)
			if (s_of(g, "kind") && strcmp(s_of(g, "kind"), "gpu") == 0)
				n++;
		printf("  none%s\n", n ? " visible to the driver (see the PCI devices below)" : "");
	}
	json_array_foreach(gpus, i, g) {
		json_t *mem = json_object_get(g, "memory_total");
		json_t *mig = json_object_get(g, "mig");
		json_t *idx = json_object_get(g, "index");
		char ix[24] = "-";
		if (json_is_integer(idx))
			snprintf(ix, sizeof(ix), "%lld", (long long)json_integer_value(idx));
		printf("  [%s] %s  %s (%s, CC %s)", ix, or_unknown(s_of(g, "name")),
			or_unknown(s_of(g, "sm")), or_unknown(s_of(g, "architecture")),
			or_unknown(s_of(g, "compute_capability")));
		if (json_is_integer(mem))
			printf(", %.1f GiB", (double)json_integer_value(mem) / (1024.0 * 1024 * 1024));
		printf("\n      %s  pci %s  id %s", or_unknown(s_of(g, "uuid")),
			or_unknown(s_of(g, "pci_bus_id")), or_unknown(s_of(g, "pci_device_id")));
		if (!json_is_true(json_object_get(g, "visible")))
			printf("  %s(hidden from CUDA)%s", cli_col(cli, CLI_YELLOW), cli_col(cli, CLI_RESET));
		printf("\n");
		if (s_of(mig, "current") && strcmp(s_of(mig, "current"), "enabled") == 0) {
			json_t *inst = json_object_get(mig, "instances"), *m;
			size_t k;
			printf("      MIG enabled, %zu instance(s)\n", json_array_size(inst));
			json_array_foreach(inst, k, m)
				printf("        %s %s\n", or_unknown(s_of(m, "uuid")), or_unknown(s_of(m, "name")));
		}
		json_t *links = json_object_get(g, "nvlink"), *l;
		size_t k, active = 0;
		json_array_foreach(links, k, l)
			if (json_is_true(json_object_get(l, "active")))
				active++;
		if (active) {
			printf("      NVLink: %zu active link(s) ->", active);
			json_array_foreach(links, k, l)
				if (json_is_true(json_object_get(l, "active")))
					printf(" %s", or_unknown(s_of(l, "peer_pci_bus_id")));
			printf("\n");
		}
		json_t *w = json_object_get(g, "warnings"), *x;
		json_array_foreach(w, k, x)
			print_warning(cli, "      ", json_string_value(x), NULL);
	}
	if (json_array_size(pci)) {
		json_t *p;
		printf("  PCI:");
		json_array_foreach(pci, i, p)
			printf(" %s %s:%s [%s]", or_unknown(s_of(p, "bus_id")), or_unknown(s_of(p, "vendor")),
				or_unknown(s_of(p, "device")), s_of(p, "driver") ? s_of(p, "driver") : "no driver");
		printf("\n");
	}
}

static void human_warnings(struct cli *cli, json_t *f)
{
	json_t *w = json_object_get(f, "warnings"), *x;
	size_t i;

	json_array_foreach(w, i, x) {
		if (json_is_integer(json_object_get(x, "gpu")))
			continue; /* shown under its GPU */
		print_warning(cli, "", or_unknown(s_of(x, "message")), s_of(x, "hint"));
	}
}

int cli_probe(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
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
		{ NULL, 0, NULL, 0 },
	};
	gpuenv_probe_opts_t po;
	json_t *facts = NULL;
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
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "probe: unexpected argument '%s'", argv[optind]);
	if (po.python && po.env_dir)
		return cli_usage_error(cli, verb, "probe: --python and --env name the same thing; give one");
	r = gpuenv_probe_facts_json(&cli->ctx, &po, &facts);
	if (r)
		return cli_error(cli, CLI_EXIT_FAIL, "probe: %s", gpuenv_strerror(r));
	if (cli->json)
		return cli_print_json(cli, facts);
	human_driver(cli, facts);
	human_gpus(cli, facts);
	human_warnings(cli, facts);
	json_decref(facts);
	return CLI_EXIT_OK;
}
