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


static const char *ver_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_object(v) ? s_of(v, "version") : NULL;
}

static void human_toolkits(struct cli *cli, json_t *f)
{
	json_t *tks = json_object_get(f, "toolkits"), *t;
	size_t i;

	printf("%sCUDA toolkits%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (!json_array_size(tks))
		printf("  none\n");
	json_array_foreach(tks, i, t) {
		json_t *v = json_object_get(t, "version");
		printf("  %s  CUDA %s (%s)%s%s\n", or_unknown(s_of(t, "path")),
			or_unknown(ver_of(t, "version")), or_unknown(s_of(v, "source")),
			s_of(t, "nvcc") ? "  nvcc " : "", s_of(t, "nvcc") ? s_of(t, "nvcc") : "");
	}
}

static void human_libraries(struct cli *cli, json_t *f)
{
	json_t *libs = json_object_get(f, "libraries"), *l;
	size_t i;

	printf("%slibraries%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (!json_array_size(libs))
		printf("  none found\n");
	json_array_foreach(libs, i, l) {
		json_t *v = json_object_get(l, "version"), *w = json_object_get(l, "where"), *x;
		size_t k;
		printf("  %-9s %-12s %s [", or_unknown(s_of(l, "family")), or_unknown(s_of(v, "version")),
			or_unknown(s_of(l, "path")));
		json_array_foreach(w, k, x)
			printf("%s%s", k ? ", " : "", json_string_value(x));
		printf("]\n");
	}
}

/* The copy the loader picks for each NVIDIA library a binary needs. */
static void human_loads(json_t *bin)
{
	json_t *loads = json_object_get(bin, "loads");
	json_t *objs = json_object_get(loads, "objects"), *o, *n;
	size_t i, k;

	json_array_foreach(objs, i, o) {
		json_array_foreach(json_object_get(o, "needs"), k, n) {
			const char *name = s_of(n, "name");
			if (!name || !(strstr(name, "cud") || strstr(name, "nccl") || strstr(name, "cublas") ||
				strstr(name, "nvrtc") || strstr(name, "nvJitLink") || strstr(name, "nvinfer")))
				continue;
			printf("        %s -> %s (%s)\n", name, s_of(n, "path") ? s_of(n, "path") : "NOT FOUND",
				or_unknown(s_of(n, "how")));
		}
		break; /* the binary's own needs; the rest are transitive */
	}
}

static void human_envs(struct cli *cli, json_t *f)
{
	json_t *envs = json_object_get(f, "environments"), *e;
	size_t i;

	printf("%sPython environments%s\n", cli_col(cli, CLI_BOLD), cli_col(cli, CLI_RESET));
	if (!json_array_size(envs))
		printf("  none found\n");
	json_array_foreach(envs, i, e) {
		json_t *fw, *b;
		size_t k, m;
		printf("  %s  Python %s, %zu distributions (%s)\n", or_unknown(s_of(e, "prefix")),
			or_unknown(ver_of(e, "python")), json_array_size(json_object_get(e, "distributions")),
			or_unknown(s_of(e, "found_by")));
		json_array_foreach(json_object_get(e, "frameworks"), k, fw) {
			/* "CPU only" only where the package itself decides (torch +cpu,
			 * plain onnxruntime); jax and jaxlib get CUDA from plugins */
			const char *kind = or_unknown(s_of(fw, "kind"));
			bool cpu = !json_is_true(json_object_get(fw, "gpu")) &&
				(strcmp(kind, "torch") == 0 || strcmp(kind, "onnxruntime") == 0);
			printf("    %s %s%s%s\n", or_unknown(s_of(fw, "dist")), or_unknown(s_of(fw, "version")),
				s_of(fw, "cuda") ? ", CUDA " : cpu ? ", CPU only" : "",
				s_of(fw, "cuda") ? s_of(fw, "cuda") : "");
			json_array_foreach(json_object_get(fw, "binaries"), m, b) {
				json_t *cc = json_object_get(b, "cuda_code");
				const char *path = or_unknown(s_of(b, "path"));
				const char *base = strrchr(path, '/');
				printf("      %s: %s\n", base ? base + 1 : path,
					cc ? (s_of(cc, "error") ? s_of(cc, "error") : or_unknown(s_of(cc, "summary"))) : "");
				human_loads(b);
			}
		}
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
		case 'G': po.flags |= GPUENV_PROBE_NO_LIBS; break;
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "probe: unexpected argument '%s'", argv[optind]);
	if (po.python && po.env_dir)
		return cli_usage_error(cli, verb, "probe: --python and --env name the same thing; give one");
	r = gpuenv_probe_facts_json(&cli->ctx, &po, &facts);
	if (r) /* a missing --root, --python or --env: the library's message */
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (cli->json)
		return cli_print_json(cli, facts);
	human_driver(cli, facts);
	human_gpus(cli, facts);
	if (json_object_get(facts, "libraries")) {
		human_toolkits(cli, facts);
		human_libraries(cli, facts);
		human_envs(cli, facts);
	}
	human_warnings(cli, facts);
	json_decref(facts);
	return CLI_EXIT_OK;
}

const struct cli_verb cli_verb_probe = {
	.name = "probe",
	.run = cli_probe,
	.summary = "snapshot of this machine's GPU stack: driver, GPUs, toolkits, libraries, Python environments, CUDA code",
	.usage = "gpuenv probe [--json] [--deep] [--python PATH | --env DIR] [--root DIR]",
	.help = "  --deep             also cuInit and ask libcuda about each device (~200 ms with a GPU)\n"
		"  --python PATH      read the environment of this interpreter (default: VIRTUAL_ENV,\n"
		"                     then python3 on PATH); read from disk, Python is never started\n"
		"  --env DIR          read this virtual environment or prefix\n"
		"  --no-fatbin        skip listing the CUDA code (cubins, PTX) in framework binaries\n"
		"  --all-binaries     also list the CUDA code of every NVIDIA library found\n"
		"  --gpus-only        driver and GPUs only: no toolkits, libraries or environments\n"
		"  --root DIR         read /proc, /sys, /etc, ... under DIR (a snapshot or a test tree)\n"
		"  --nvml-lib LIB     load this NVML instead of libnvidia-ml.so.1\n"
		"  --cuda-lib LIB     load this libcuda instead of libcuda.so.1\n"
		"\nThe JSON (--json) is the facts document of docs/probe-schema.md (gpuenv.facts/1),\n"
		"which doctor --facts and preflight --facts read.\n",
};
