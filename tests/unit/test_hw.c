/* Unit tests for the driver/GPU probe backends: fake sysfs/procfs trees
 * (tests/fixtures/hw/ and trees built here in a temporary folder), a fake
 * NVML / libcuda (tests/fixtures/fake_nvml.c, GPUENV_FAKE_NVML), and this
 * machine itself (root ""). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/hw.h"

#include "testutil.h"

#define STUB_LIBCUDA "/usr/local/cuda/lib64/stubs/libcuda.so"

static const char *fake_nvml, *fake_nvml_old, *src_dir;

/* ---- an injected environment ---------------------------------------------- */
struct env {
	const char *cvd, *order;
};

static const char *env_get(void *ud, const char *name)
{
	struct env *e = ud;
	if (strcmp(name, "CUDA_VISIBLE_DEVICES") == 0)
		return e->cvd;
	if (strcmp(name, "CUDA_DEVICE_ORDER") == 0)
		return e->order;
	return NULL;
}

/* ---- trees ----------------------------------------------------------------- */
static void mkdirs(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	mkdir(tmp, 0755);
}

static void put_n(const char *root, const char *rel, const char *data, size_t n)
{
	char path[4096], dir[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
}

static void put(const char *root, const char *rel, const char *data)
{
	put_n(root, rel, data, strlen(data));
}

static void link_to(const char *root, const char *rel, const char *target)
{
	char path[4096], dir[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	assert_int_equal(symlink(target, path), 0);
}

/* a PCI function as sysfs shows it */
static void pci(const char *root, const char *bus, const char *vendor, const char *device,
	const char *cls, const char *driver)
{
	char rel[256], target[256];
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/vendor", bus);
	put(root, rel, vendor);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/device", bus);
	put(root, rel, device);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/class", bus);
	put(root, rel, cls);
	if (driver) {
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/driver", bus);
		snprintf(target, sizeof(target), "../../../bus/pci/drivers/%s", driver);
		link_to(root, rel, target);
	}
}

static char *mktree(void)
{
	char *t = strdup("/tmp/gpuenv-hw-XXXXXX");
	assert_non_null(t);
	assert_non_null(mkdtemp(t));
	return t;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rmtree(char *t)
{
	nftw(t, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
}

static char fixture_buf[4096];
static const char *fixture(const char *name)
{
	snprintf(fixture_buf, sizeof(fixture_buf), "%s/tests/fixtures/hw/%s", src_dir, name);
	return fixture_buf;
}

/* ---- one probe --------------------------------------------------------------- */
struct probe {
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	struct env env;
	gpuenv_hw_opts_t opts;
	gpuenv_hw_facts_t *f;
};

static void probe_init(struct probe *p, const char *root, const char *nvml_scenario,
	const char *cuda_scenario)
{
	memset(p, 0, sizeof(*p));
	gpuenv_ctx_init(&p->ctx);
	p->ctx.root = root;
	p->ctx.getenv = env_get;
	p->ctx.getenv_ud = &p->env;
	gpuenv_arena_init(&p->arena, &p->ctx, 0);
	gpuenv_hw_opts_init(&p->opts);
	p->opts.nvml_lib = fake_nvml;
	p->opts.cuda_lib = fake_nvml;
	setenv("FAKE_NVML_SCENARIO", nvml_scenario ? nvml_scenario : "h200", 1);
	setenv("FAKE_CUDA_SCENARIO", cuda_scenario ? cuda_scenario : "driver", 1);
}

static void probe_run(struct probe *p)
{
	assert_int_equal(gpuenv_hw_probe_gpus(&p->ctx, &p->opts, &p->arena, &p->f), 0);
	assert_non_null(p->f);
}

static void probe_free(struct probe *p)
{
	gpuenv_arena_free(&p->arena);
}

static const gpuenv_hw_warning_t *warning(const gpuenv_hw_facts_t *f, const char *id)
{
	for (size_t i = 0; i < f->n_warnings; i++)
		if (strcmp(f->warnings[i].id, id) == 0)
			return &f->warnings[i];
	return NULL;
}

static void dump_warnings(const gpuenv_hw_facts_t *f)
{
	for (size_t i = 0; i < f->n_warnings; i++)
		fprintf(stderr, "  warning %s (gpu %d): %s\n", f->warnings[i].id,
			f->warnings[i].gpu, f->warnings[i].msg);
}

/* ---- parsers ------------------------------------------------------------------ */
static void test_parse_bus_id(void **state)
{
	(void)state;
	gpuenv_hw_busid_t id;
	char s[32];

	assert_true(gpuenv_hw_parse_bus_id(gpuenv_str("00000000:3B:00.0"), &id));
	assert_int_equal(id.domain, 0);
	assert_int_equal(id.bus, 0x3b);
	gpuenv_hw_bus_id_str(&id, s, sizeof(s));
	assert_string_equal(s, "00000000:3B:00.0");
	assert_true(gpuenv_hw_parse_bus_id(gpuenv_str("0001:c5:1f.7"), &id));
	assert_int_equal(id.domain, 1);
	assert_int_equal(id.bus, 0xc5);
	assert_int_equal(id.dev, 0x1f);
	assert_int_equal(id.fn, 7);
	assert_true(gpuenv_hw_parse_bus_id(gpuenv_str("19:00.0"), &id));
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str("0000:00:20.0"), &id)); /* dev > 31 */
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str("0000:00:06.8"), &id));
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str("000000000:00:06.0"), &id));
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str(":00:06.0"), &id));
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str("0000-00:06.0"), &id));
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str("0000:0g:06.0"), &id));
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str(""), &id));
	assert_false(gpuenv_hw_parse_bus_id(gpuenv_str("pci0000:00"), &id));
}

static void test_parse_nvrm(void **state)
{
	(void)state;
	gpuenv_hw_nvrm_t v;
	const char *open_x86 = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
			       "580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc\n";
	const char *prop_x86 = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.216.03  "
			       "Wed Nov 13 00:17:42 UTC 2024\nGCC version:  gcc version 12.3.0\n";
	const char *open_arm = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  "
			       "580.00  Release Build  (buildbrain@x)  Thu Aug 14 2025\n";
	const char *prop_arm = "NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.90.07  "
			       "Fri May 31 09:30:47 UTC 2024\n";

	assert_true(gpuenv_hw_parse_nvrm(gpuenv_str(open_x86), &v));
	assert_true(gpuenv_str_eq_cstr(v.version, "580.159.04"));
	assert_true(gpuenv_str_eq_cstr(v.arch, "x86_64"));
	assert_true(v.open);
	assert_true(gpuenv_str_startswith(v.line, "NVRM version:"));
	assert_true(gpuenv_str_endswith(v.line, "(nixbld@)"));
	assert_true(gpuenv_hw_parse_nvrm(gpuenv_str(prop_x86), &v));
	assert_true(gpuenv_str_eq_cstr(v.version, "535.216.03"));
	assert_false(v.open);
	assert_true(gpuenv_hw_parse_nvrm(gpuenv_str(open_arm), &v));
	assert_true(gpuenv_str_eq_cstr(v.version, "580.00"));
	assert_true(gpuenv_str_eq_cstr(v.arch, "aarch64"));
	assert_true(gpuenv_hw_parse_nvrm(gpuenv_str(prop_arm), &v));
	assert_true(gpuenv_str_eq_cstr(v.version, "550.90.07"));
	assert_true(gpuenv_str_eq_cstr(v.arch, "aarch64"));
	assert_false(gpuenv_hw_parse_nvrm(gpuenv_str("NVRM version: garbage\n"), &v));
	assert_false(gpuenv_hw_parse_nvrm(gpuenv_str(""), &v));
	assert_false(gpuenv_hw_parse_nvrm(gpuenv_str("GCC version: 1.2\n"), &v));
	/* not NUL-terminated: the slice ends before the version */
	assert_false(gpuenv_hw_parse_nvrm(gpuenv_str_n(open_x86, 50), &v));
}

static void test_parse_text(void **state)
{
	(void)state;
	const char *info = "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-c8d8\nBus Location: \t "
			   "0000:00:06.0\n";
	char out[32];
	gpuenv_str_t s;

	s = gpuenv_hw_text_field(gpuenv_str(info), "Model");
	assert_true(gpuenv_str_eq_cstr(s, "NVIDIA H200"));
	s = gpuenv_hw_text_field(gpuenv_str(info), "GPU UUID");
	assert_true(gpuenv_str_eq_cstr(s, "GPU-c8d8"));
	assert_null(gpuenv_hw_text_field(gpuenv_str(info), "GPU").ptr);
	assert_null(gpuenv_hw_text_field(gpuenv_str(info), "IRQ").ptr);

	assert_true(gpuenv_hw_parse_l4t(gpuenv_str("# R36 (release), REVISION: 4.3, GCID: 38968081, "
						   "BOARD: generic, EABI: aarch64, DATE: x\n"),
		out, sizeof(out)));
	assert_string_equal(out, "36.4.3");
	assert_true(gpuenv_hw_parse_l4t(gpuenv_str("# R32 (release), REVISION: 7.4, GCID: 1\n"),
		out, sizeof(out)));
	assert_string_equal(out, "32.7.4");
	assert_true(gpuenv_hw_parse_l4t(gpuenv_str("# R38 (release), REVISION: 2\n"), out, sizeof(out)));
	assert_string_equal(out, "38.2.0");
	assert_false(gpuenv_hw_parse_l4t(gpuenv_str("# R36 (release)\n"), out, sizeof(out)));
	assert_false(gpuenv_hw_parse_l4t(gpuenv_str("R\n"), out, sizeof(out)));
	assert_false(gpuenv_hw_parse_l4t(gpuenv_str(""), out, sizeof(out)));

	static const char compat[] = "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234";
	s = gpuenv_hw_parse_tegra_soc(gpuenv_str_n(compat, sizeof(compat))); /* with the NUL */
	assert_true(gpuenv_str_eq_cstr(s, "tegra234"));
	s = gpuenv_hw_parse_tegra_soc(gpuenv_str_n(compat, sizeof(compat) - 1));
	assert_true(gpuenv_str_eq_cstr(s, "tegra234"));
	assert_null(gpuenv_hw_parse_tegra_soc(gpuenv_str("nvidia,tegra")).ptr);
	assert_null(gpuenv_hw_parse_tegra_soc(gpuenv_str("nvidia,tegra23x")).ptr);
	assert_null(gpuenv_hw_parse_tegra_soc(gpuenv_str("raspberrypi,4-model-b")).ptr);
}

static void test_names(void **state)
{
	(void)state;
	char v[16];

	gpuenv_hw_cuda_version_str(13000, v, sizeof(v));
	assert_string_equal(v, "13.0");
	gpuenv_hw_cuda_version_str(12020, v, sizeof(v));
	assert_string_equal(v, "12.2");
	gpuenv_hw_cuda_version_str(11080, v, sizeof(v));
	assert_string_equal(v, "11.8");
	gpuenv_hw_cuda_version_str(0, v, sizeof(v));
	assert_string_equal(v, "");
	assert_string_equal(gpuenv_hw_arch_from_cc(3, 7), "Kepler");
	assert_string_equal(gpuenv_hw_arch_from_cc(7, 0), "Volta");
	assert_string_equal(gpuenv_hw_arch_from_cc(7, 2), "Volta");
	assert_string_equal(gpuenv_hw_arch_from_cc(7, 5), "Turing");
	assert_string_equal(gpuenv_hw_arch_from_cc(8, 7), "Ampere");
	assert_string_equal(gpuenv_hw_arch_from_cc(8, 9), "Ada");
	assert_string_equal(gpuenv_hw_arch_from_cc(9, 0), "Hopper");
	assert_string_equal(gpuenv_hw_arch_from_cc(10, 3), "Blackwell");
	assert_string_equal(gpuenv_hw_arch_from_cc(12, 1), "Blackwell");
	assert_null(gpuenv_hw_arch_from_cc(-1, -1));
	assert_null(gpuenv_hw_arch_from_cc(4, 0));
	assert_string_equal(gpuenv_hw_arch_from_nvml(9), "Hopper");
	assert_null(gpuenv_hw_arch_from_nvml(0xffffffffu));
	assert_null(gpuenv_hw_arch_from_nvml(1));
	assert_string_equal(gpuenv_hw_state_name(GPUENV_HW_NOT_LOADED), "not-loaded");
	assert_string_equal(gpuenv_hw_libcuda_state_name(GPUENV_HW_LIB_STUB), "stub");
	assert_string_equal(gpuenv_hw_libcuda_state_name(GPUENV_HW_LIB_OK), "driver");
	assert_string_equal(gpuenv_hw_nvml_state_name(GPUENV_HW_LIB_WRONG), "not-nvml");
	assert_string_equal(gpuenv_hw_src_name(GPUENV_HW_SRC_PROCFS), "procfs");
	assert_string_equal(gpuenv_hw_src_name(99), "none");
	assert_string_equal(gpuenv_hw_nvml_error_name(15), "NVML_ERROR_GPU_IS_LOST");
	assert_string_equal(gpuenv_hw_cuda_error_name(34), "CUDA_ERROR_STUB_LIBRARY");
	assert_null(gpuenv_hw_cuda_error_name(12345));
}

/* ---- machines --------------------------------------------------------------------- */

/* This machine (root ""): with no NVIDIA driver here the answer must say so,
 * and the toolkit's stub libcuda must never pass for a driver. */
static void test_this_machine(void **state)
{
	(void)state;
	struct probe p;
	struct timespec t0, t1;

	probe_init(&p, "", NULL, NULL);
	p.opts.nvml_lib = NULL;
	p.opts.cuda_lib = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	probe_run(&p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("this machine: %s (%s), nvml %s, libcuda %s, %zu GPU(s), %.2f ms\n",
		gpuenv_hw_state_name(p.f->state), gpuenv_hw_state_text(p.f->state),
		gpuenv_hw_nvml_state_name(p.f->nvml.state),
		gpuenv_hw_libcuda_state_name(p.f->libcuda.state), p.f->n_gpus,
		(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	bool driver_here = access("/proc/driver/nvidia/version", F_OK) == 0;
	if (!driver_here) {
		assert_false(p.f->driver.loaded);
		assert_null(p.f->driver.version);
		assert_true(p.f->state == GPUENV_HW_NO_HARDWARE || p.f->state == GPUENV_HW_NOT_LOADED);
		assert_int_not_equal(p.f->nvml.state, GPUENV_HW_LIB_OK);
		assert_int_not_equal(p.f->libcuda.state, GPUENV_HW_LIB_OK);
		assert_int_equal(p.f->driver.cuda_version, 0);
	}
	probe_free(&p);

	/* the toolkit's stub, loaded on purpose */
	if (access(STUB_LIBCUDA, R_OK) != 0) {
		print_message("no %s here: stub case covered by the fake only\n", STUB_LIBCUDA);
		return;
	}
	probe_init(&p, "", NULL, NULL);
	p.opts.nvml_lib = NULL;
	p.opts.cuda_lib = STUB_LIBCUDA;
	probe_run(&p);
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_STUB);
	assert_int_equal(p.f->libcuda.error, 34);
	assert_string_equal(p.f->libcuda.error_name, "CUDA_ERROR_STUB_LIBRARY");
	assert_int_equal(p.f->libcuda.version, 0);
	assert_non_null(warning(p.f, "libcuda-stub"));
	if (!driver_here) {
		assert_int_not_equal(p.f->state, GPUENV_HW_OK);
		assert_false(p.f->driver.loaded);
		assert_int_equal(p.f->driver.cuda_version, 0);
	}
	probe_free(&p);
}

/* the search path in the options: folders tried before the loader's own */
static void test_lib_dirs(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree(), path[4096];
	const char *dirs[] = { "/nonexistent", t, NULL };

	snprintf(path, sizeof(path), "%s/libnvidia-ml.so.1", t);
	assert_int_equal(symlink(fake_nvml, path), 0);
	snprintf(path, sizeof(path), "%s/libcuda.so.1", t);
	assert_int_equal(symlink(fake_nvml, path), 0);
	probe_init(&p, "", "h200", NULL);
	p.opts.nvml_lib = NULL;
	p.opts.cuda_lib = NULL;
	p.opts.lib_dirs = dirs;
	probe_run(&p);
	assert_int_equal(p.f->nvml.state, GPUENV_HW_LIB_OK);
	snprintf(path, sizeof(path), "%s/libnvidia-ml.so.1", t);
	assert_string_equal(p.f->nvml.path, path);
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_OK);
	assert_non_null(strstr(p.f->libcuda.path, "libcuda.so.1"));
	probe_free(&p);
	rmtree(t);
}

static void test_no_hardware(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree();

	/* a machine with other PCI devices only and no libraries */
	pci(t, "0000:00:00.0", "0x8086\n", "0x0d57\n", "0x060000\n", NULL);
	pci(t, "0000:00:03.0", "0x1af4\n", "0x1041\n", "0x020000\n", "virtio-pci");
	probe_init(&p, t, NULL, NULL);
	p.opts.nvml_lib = NULL; /* a --root tree: nothing is loaded */
	p.opts.cuda_lib = NULL;
	probe_run(&p);
	assert_int_equal(p.f->state, GPUENV_HW_NO_HARDWARE);
	assert_int_equal(p.f->n_pci, 0);
	assert_int_equal(p.f->n_gpus, 0);
	assert_false(p.f->driver.loaded);
	assert_int_equal(p.f->nvml.state, GPUENV_HW_LIB_NOT_CHECKED);
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_NOT_CHECKED);
	assert_false(p.f->visible.set);
	assert_int_equal(p.f->visible.n, 0);
	assert_int_equal(p.f->n_warnings, 0);
	probe_free(&p);

	/* libraries that cannot be found */
	probe_init(&p, t, NULL, NULL);
	p.opts.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
	p.opts.cuda_lib = "/nonexistent/libcuda.so.1";
	probe_run(&p);
	assert_int_equal(p.f->state, GPUENV_HW_NO_HARDWARE);
	assert_int_equal(p.f->nvml.state, GPUENV_HW_LIB_MISSING);
	assert_non_null(p.f->nvml.message);
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_MISSING);
	probe_free(&p);

	/* a library that is not NVML (nor libcuda) */
	probe_init(&p, t, NULL, NULL);
	p.opts.nvml_lib = "libc.so.6";
	p.opts.cuda_lib = "libc.so.6";
	probe_run(&p);
	assert_int_equal(p.f->nvml.state, GPUENV_HW_LIB_WRONG);
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_WRONG);
	assert_int_equal(p.f->state, GPUENV_HW_NO_HARDWARE);
	probe_free(&p);

	/* every backend switched off */
	probe_init(&p, t, NULL, NULL);
	p.opts.flags = GPUENV_HW_NO_NVML | GPUENV_HW_NO_LIBCUDA;
	probe_run(&p);
	assert_int_equal(p.f->nvml.state, GPUENV_HW_LIB_NOT_CHECKED);
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_NOT_CHECKED);
	probe_free(&p);
	rmtree(t);
}

static void test_driver_not_loaded(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree();

	/* an H100 and its audio function, no driver bound */
	pci(t, "0000:3b:00.0", "0x10de\n", "0x2330\n", "0x030200\n", NULL);
	pci(t, "0000:3b:00.1", "0x10de\n", "0x22a3\n", "0x040300\n", NULL);
	pci(t, "0000:00:00.0", "0x8086\n", "0x0d57\n", "0x060000\n", NULL);
	probe_init(&p, t, "initfail", NULL);
	p.opts.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
	p.opts.cuda_lib = "/nonexistent/libcuda.so.1";
	probe_run(&p);
	assert_int_equal(p.f->state, GPUENV_HW_NOT_LOADED);
	assert_false(p.f->driver.loaded);
	assert_int_equal(p.f->n_pci, 2);
	assert_string_equal(p.f->pci[0].bus_id, "0000:3b:00.0");
	assert_int_equal(p.f->pci[0].kind, GPUENV_HW_PCI_GPU);
	assert_int_equal(p.f->pci[1].kind, GPUENV_HW_PCI_OTHER);
	assert_int_equal(p.f->pci[0].device, 0x2330);
	assert_int_equal(p.f->pci[0].class_code, 0x030200);
	assert_null(p.f->pci[0].driver);
	assert_int_equal(p.f->n_gpus, 1);
	assert_string_equal(p.f->gpus[0].bus_id, "00000000:3B:00.0");
	assert_int_equal(p.f->gpus[0].pci_device_id, 0x233010DE);
	assert_int_equal(p.f->gpus[0].src[GPUENV_HW_F_PCI], GPUENV_HW_SRC_SYSFS);
	assert_int_equal(p.f->gpus[0].index, -1);
	assert_false(p.f->gpus[0].visible); /* no driver: CUDA sees nothing */
	assert_int_equal(p.f->visible.n, 0);
	probe_free(&p);

	/* the same GPU bound to nouveau; NVML installed but failing */
	link_to(t, "sys/bus/pci/devices/0000:3b:00.0/driver", "../../../bus/pci/drivers/nouveau");
	probe_init(&p, t, "initfail", "noinit");
	probe_run(&p);
	assert_int_equal(p.f->state, GPUENV_HW_NOT_LOADED);
	assert_string_equal(p.f->gpus[0].driver, "nouveau");
	assert_int_equal(p.f->nvml.state, GPUENV_HW_LIB_ERROR);
	assert_int_equal(p.f->nvml.error, 9);
	const gpuenv_hw_warning_t *w = warning(p.f, "gpu-other-driver");
	assert_non_null(w);
	assert_int_equal(w->gpu, 0);
	assert_non_null(strstr(w->msg, "nouveau"));
	assert_non_null(w->hint);
	assert_non_null(warning(p.f, "nvml-init"));
	/* a GPU is there: libcuda was asked for devices, and had none */
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_OK);
	assert_false(p.f->libcuda.initialized);
	assert_int_equal(p.f->libcuda.error, 100);
	assert_non_null(warning(p.f, "libcuda-init"));
	probe_free(&p);
	rmtree(t);
}

/* The tree copied from a real H200 machine, with the fake NVML answering
 * what that machine's NVML answered. */
static void test_h200(void **state)
{
	(void)state;
	struct probe p;

	probe_init(&p, fixture("h200"), "h200", NULL);
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->state, GPUENV_HW_OK);
	assert_int_equal(f->n_warnings, 0);
	assert_true(f->driver.loaded);
	assert_string_equal(f->driver.version, "580.159.04");
	assert_int_equal(f->driver.version_src, GPUENV_HW_SRC_NVML);
	assert_string_equal(f->driver.procfs_version, "580.159.04");
	assert_string_equal(f->driver.module_version, "580.159.04");
	assert_string_equal(f->driver.flavor, "open");
	assert_string_equal(f->driver.procfs, "NVRM version: NVIDIA UNIX Open Kernel Module for "
					      "x86_64  580.159.04  Release Build  (nixbld@)");
	assert_int_equal(f->driver.cuda_version, 13000);
	assert_int_equal(f->driver.cuda_version_src, GPUENV_HW_SRC_NVML);
	assert_int_equal(f->nvml.state, GPUENV_HW_LIB_OK);
	assert_string_equal(f->nvml.version, "13.580.159.04");
	assert_string_equal(f->nvml.path, fake_nvml);
	assert_int_equal(f->nvml.device_count, 1);
	assert_int_equal(f->libcuda.state, GPUENV_HW_LIB_OK);
	assert_int_equal(f->libcuda.version, 13000);
	assert_false(f->libcuda.initialized); /* no cuInit by default */
	assert_int_equal(f->libcuda.device_count, -1);
	assert_int_equal(f->n_pci, 1);
	assert_string_equal(f->pci[0].bus_id, "0000:00:06.0");
	assert_string_equal(f->pci[0].driver, "nvidia");
	assert_int_equal(f->n_gpus, 1);
	gpuenv_hw_gpu_t *g = &f->gpus[0];
	assert_int_equal(g->index, 0);
	assert_string_equal(g->name, "NVIDIA H200");
	assert_string_equal(g->uuid, "GPU-c8d8d7e0-0645-db3d-6384-e3f778912639");
	assert_int_equal(g->cc_major, 9);
	assert_int_equal(g->cc_minor, 0);
	assert_string_equal(g->arch, "Hopper");
	assert_int_equal(g->nvml_arch, 9);
	assert_true(g->mem_total == 150754820096ULL);
	assert_true(g->mem_free == 150109880320ULL);
	assert_string_equal(g->bus_id, "00000000:00:06.0");
	assert_int_equal(g->pci_device_id, 0x233510DE);
	assert_int_equal(g->device_id, 0x2335);
	assert_string_equal(g->driver, "nvidia");
	assert_int_equal(g->mig_current, 0);
	assert_int_equal(g->mig_pending, 0);
	assert_int_equal(g->n_nvlink, 0);
	assert_true(g->visible);
	assert_int_equal(g->cuda_index, 0);
	assert_int_equal(g->src[GPUENV_HW_F_NAME], GPUENV_HW_SRC_NVML);
	assert_int_equal(g->src[GPUENV_HW_F_ARCH], GPUENV_HW_SRC_DERIVED);
	assert_int_equal(g->src[GPUENV_HW_F_MIG], GPUENV_HW_SRC_NVML);
	assert_int_equal(g->src[GPUENV_HW_F_NVLINK], GPUENV_HW_SRC_NVML);
	assert_int_equal(g->src[GPUENV_HW_F_VISIBLE], GPUENV_HW_SRC_ENV);
	assert_false(f->visible.set);
	assert_int_equal(f->visible.n, 1);
	assert_false(f->jetson.present);
	probe_free(&p);

	/* the deep probe: cuInit and libcuda's own numbering agree */
	probe_init(&p, fixture("h200"), "h200", NULL);
	p.opts.flags = GPUENV_HW_DEEP;
	probe_run(&p);
	dump_warnings(p.f);
	assert_true(p.f->libcuda.initialized);
	assert_int_equal(p.f->libcuda.device_count, 1);
	assert_int_equal(p.f->gpus[0].cuda_index, 0);
	assert_int_equal(p.f->gpus[0].src[GPUENV_HW_F_VISIBLE], GPUENV_HW_SRC_LIBCUDA);
	assert_int_equal(p.f->n_gpus, 1);
	assert_int_equal(p.f->n_warnings, 0);
	probe_free(&p);

	/* procfs and sysfs alone (NVML and libcuda not loaded) */
	probe_init(&p, fixture("h200"), NULL, NULL);
	p.opts.flags = GPUENV_HW_NO_NVML | GPUENV_HW_NO_LIBCUDA;
	probe_run(&p);
	f = p.f;
	assert_int_equal(f->state, GPUENV_HW_NVML_UNAVAILABLE);
	assert_string_equal(f->driver.version, "580.159.04");
	assert_int_equal(f->driver.version_src, GPUENV_HW_SRC_PROCFS);
	assert_int_equal(f->driver.cuda_version, 0);
	assert_int_equal(f->n_gpus, 1);
	assert_string_equal(f->gpus[0].name, "NVIDIA H200");
	assert_int_equal(f->gpus[0].src[GPUENV_HW_F_NAME], GPUENV_HW_SRC_PROCFS);
	assert_string_equal(f->gpus[0].uuid, "GPU-c8d8d7e0-0645-db3d-6384-e3f778912639");
	assert_int_equal(f->gpus[0].cc_major, -1);
	assert_null(f->gpus[0].arch);
	assert_true(f->gpus[0].visible); /* the nvidia driver owns it */
	probe_free(&p);
}

static void test_nvml_missing_driver_loaded(void **state)
{
	(void)state;
	struct probe p;

	/* NVML missing, libcuda there: device facts come from cuInit */
	probe_init(&p, fixture("h200"), "h200", NULL);
	p.opts.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->state, GPUENV_HW_NVML_UNAVAILABLE);
	assert_int_equal(f->nvml.state, GPUENV_HW_LIB_MISSING);
	assert_true(f->libcuda.initialized);
	assert_int_equal(f->driver.cuda_version, 13000);
	assert_int_equal(f->driver.cuda_version_src, GPUENV_HW_SRC_LIBCUDA);
	assert_int_equal(f->n_gpus, 1);
	assert_int_equal(f->gpus[0].cc_major, 9);
	assert_int_equal(f->gpus[0].src[GPUENV_HW_F_CC], GPUENV_HW_SRC_LIBCUDA);
	assert_string_equal(f->gpus[0].arch, "Hopper");
	assert_true(f->gpus[0].mem_total == 150754820096ULL);
	assert_int_equal(f->gpus[0].cuda_index, 0);
	probe_free(&p);

	/* NVML's init fails: the other facts still come through */
	probe_init(&p, fixture("h200"), "mismatch", "noinit");
	probe_run(&p);
	f = p.f;
	assert_int_equal(f->state, GPUENV_HW_NVML_ERROR);
	assert_int_equal(f->nvml.error, 18);
	assert_non_null(strstr(f->nvml.message, "NVML_ERROR_LIB_RM_VERSION_MISMATCH"));
	const gpuenv_hw_warning_t *w = warning(f, "nvml-init");
	assert_non_null(w);
	assert_non_null(strstr(w->hint, "reboot"));
	assert_string_equal(f->driver.version, "580.159.04");
	assert_int_equal(f->n_gpus, 1);
	probe_free(&p);
}

static void test_many(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree();

	probe_init(&p, t, "many", NULL);
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->state, GPUENV_HW_OK);
	assert_string_equal(f->driver.version, "570.124.06");
	assert_int_equal(f->driver.cuda_version, 12080);
	assert_int_equal(f->n_gpus, 4);
	static const char *const arch[] = { "Ampere", "Turing", "Ada", "Blackwell" };
	static const char *const bus[] = { "00000000:07:00.0", "00000000:3B:00.0",
		"00000000:86:00.0", "00000000:AF:00.0" };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(f->gpus[i].index, i);
		assert_string_equal(f->gpus[i].arch, arch[i]);
		assert_string_equal(f->gpus[i].bus_id, bus[i]);
		assert_int_equal(f->gpus[i].cuda_index, i);
		assert_null(f->gpus[i].driver); /* no sysfs in this tree */
	}
	assert_int_equal(f->gpus[1].mig_current, -1); /* T4: no MIG call made */
	assert_int_equal(f->gpus[3].cc_major, 12);
	assert_int_equal(f->gpus[3].device_id, 0x2B85);
	/* four different GPUs and CUDA_DEVICE_ORDER unset */
	assert_true(f->visible.ambiguous_order);
	assert_non_null(warning(f, "cvd-order"));
	probe_free(&p);

	probe_init(&p, t, "many", NULL);
	p.env.order = "PCI_BUS_ID";
	probe_run(&p);
	assert_false(p.f->visible.ambiguous_order);
	assert_null(warning(p.f, "cvd-order"));
	probe_free(&p);

	/* the deep probe: libcuda numbers them fastest first (here: reversed) */
	probe_init(&p, t, "many", NULL);
	p.opts.flags = GPUENV_HW_DEEP;
	probe_run(&p);
	f = p.f;
	assert_true(f->libcuda.initialized);
	assert_int_equal(f->libcuda.device_count, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(f->gpus[i].cuda_index, 3 - i);
		assert_int_equal(f->visible.devs[i].gpu, 3 - i);
	}
	assert_non_null(warning(f, "cvd-libcuda"));
	assert_null(warning(f, "cvd-order"));
	probe_free(&p);

	/* NVML's architecture disagrees with the compute capability */
	probe_init(&p, t, "badarch", NULL);
	probe_run(&p);
	const gpuenv_hw_warning_t *w = warning(p.f, "arch-mismatch");
	assert_non_null(w);
	assert_int_equal(w->gpu, 2);
	assert_string_equal(p.f->gpus[2].arch, "Ada");
	probe_free(&p);
	rmtree(t);
}

/* CUDA_VISIBLE_DEVICES, read as the CUDA runtime reads it */
static void visible_case(const char *root, const char *value, int n, const int *gpus,
	const char *invalid)
{
	struct probe p;

	probe_init(&p, root, "many", NULL);
	p.env.cvd = value;
	p.env.order = "PCI_BUS_ID";
	probe_run(&p);
	assert_true(p.f->visible.set);
	assert_string_equal(p.f->visible.value, value);
	if ((int)p.f->visible.n != n)
		fail_msg("CUDA_VISIBLE_DEVICES='%s': %zu devices, expected %d", value,
			p.f->visible.n, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(p.f->visible.devs[i].gpu, gpus[i]);
		assert_int_equal(p.f->visible.devs[i].mig, -1);
		assert_int_equal(p.f->gpus[gpus[i]].cuda_index, i);
		assert_true(p.f->gpus[gpus[i]].visible);
	}
	size_t shown = 0;
	for (size_t i = 0; i < p.f->n_gpus; i++)
		shown += p.f->gpus[i].visible;
	assert_int_equal(shown, n);
	if (invalid) {
		assert_non_null(p.f->visible.invalid);
		assert_string_equal(p.f->visible.invalid, invalid);
		assert_non_null(warning(p.f, "cvd-invalid"));
	} else {
		assert_null(p.f->visible.invalid);
	}
	probe_free(&p);
}

static void test_visible(void **state)
{
	(void)state;
	char *t = mktree();

	visible_case(t, "2,0", 2, (int[]){ 2, 0 }, NULL);
	visible_case(t, "0,2,-1,1", 2, (int[]){ 0, 2 }, "-1");
	visible_case(t, " 1 , 3 ", 2, (int[]){ 1, 3 }, NULL);
	visible_case(t, "1,1", 1, (int[]){ 1 }, NULL);
	visible_case(t, "7", 0, NULL, "7");
	visible_case(t, "", 0, NULL, "");
	visible_case(t, "3,", 1, (int[]){ 3 }, "");
	visible_case(t, "GPU-11111111-2222-3333-4444-555555555503", 1, (int[]){ 2 }, NULL);
	visible_case(t, "GPU-11111111-2222-3333-4444-55555555550", 0, NULL,
		"GPU-11111111-2222-3333-4444-55555555550"); /* ambiguous prefix */
	visible_case(t, "3,GPU-11111111-2222-3333-4444-5555555555,0", 1, (int[]){ 3 },
		"GPU-11111111-2222-3333-4444-5555555555");
	visible_case(t, "GPU-11111111-2222-3333-4444-555555555504,0", 2, (int[]){ 3, 0 }, NULL);
	visible_case(t, "GPU-ffffffff", 0, NULL, "GPU-ffffffff");
	visible_case(t, "NoDevFiles", 0, NULL, "NoDevFiles");
	visible_case(t, "MIG-aaaa", 0, NULL, "MIG-aaaa");
	visible_case(t, "18446744073709551616", 0, NULL, "18446744073709551616");
	rmtree(t);
}

static void test_mig(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree();

	probe_init(&p, t, "mig", NULL);
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->n_warnings, 0);
	assert_int_equal(f->n_gpus, 2);
	gpuenv_hw_gpu_t *g = &f->gpus[0];
	assert_int_equal(g->mig_current, 1);
	assert_int_equal(g->mig_pending, 1);
	assert_int_equal(g->n_mig, 3);
	assert_int_equal(g->mig[0].index, 0);
	assert_int_equal(g->mig[1].index, 2);
	assert_int_equal(g->mig[2].index, 3);
	assert_string_equal(g->mig[1].uuid, "MIG-aaaaaaaa-1111-0000-0000-000000000002");
	assert_string_equal(g->mig[1].name, "NVIDIA A100-SXM4-40GB MIG 2g.10gb");
	assert_int_equal(g->mig[2].gi_id, 13);
	assert_int_equal(g->mig[2].ci_id, 0);
	assert_true(g->mig[0].mem_total == 19968ULL << 20);
	assert_int_equal(f->gpus[1].mig_current, 0);
	assert_int_equal(f->gpus[1].mig_pending, 1);
	assert_int_equal(f->gpus[1].n_mig, 0);
	/* CUDA sees the MIG devices of GPU 0, then GPU 1 */
	assert_int_equal(f->visible.n, 4);
	assert_int_equal(f->visible.devs[0].mig, 0);
	assert_int_equal(f->visible.devs[2].mig, 2);
	assert_int_equal(f->visible.devs[3].gpu, 1);
	assert_int_equal(f->visible.devs[3].mig, -1);
	assert_true(g->visible);
	assert_int_equal(g->cuda_index, -1);
	assert_int_equal(g->mig[1].cuda_index, 1);
	assert_int_equal(f->gpus[1].cuda_index, 3);
	probe_free(&p);

	/* one MIG device by UUID, by its CUDA 11.0 name, an ambiguous prefix */
	probe_init(&p, t, "mig", NULL);
	p.env.cvd = "MIG-aaaaaaaa-1111-0000-0000-000000000002";
	probe_run(&p);
	assert_int_equal(p.f->visible.n, 1);
	assert_int_equal(p.f->visible.devs[0].gpu, 0);
	assert_int_equal(p.f->visible.devs[0].mig, 1);
	assert_true(p.f->gpus[0].mig[1].visible);
	assert_false(p.f->gpus[0].mig[0].visible);
	assert_false(p.f->gpus[1].visible);
	probe_free(&p);

	probe_init(&p, t, "mig", NULL);
	p.env.cvd = "MIG-GPU-aaaaaaaa-0000-0000-0000-000000000001/13/0,1";
	probe_run(&p);
	assert_int_equal(p.f->visible.n, 2);
	assert_int_equal(p.f->visible.devs[0].mig, 2);
	assert_int_equal(p.f->visible.devs[1].gpu, 1);
	probe_free(&p);

	probe_init(&p, t, "mig", NULL);
	p.env.cvd = "MIG-aaaaaaaa-1111,1";
	probe_run(&p);
	assert_int_equal(p.f->visible.n, 0);
	assert_string_equal(p.f->visible.invalid, "MIG-aaaaaaaa-1111");
	probe_free(&p);

	probe_init(&p, t, "mig", NULL);
	p.env.cvd = "MIG-GPU-aaaaaaaa-0000-0000-0000-000000000001/13";
	probe_run(&p);
	assert_int_equal(p.f->visible.n, 0);
	probe_free(&p);

	/* deep: libcuda enumerates the MIG devices by their UUIDs */
	probe_init(&p, t, "mig", NULL);
	p.opts.flags = GPUENV_HW_DEEP;
	probe_run(&p);
	dump_warnings(p.f);
	assert_int_equal(p.f->libcuda.device_count, 4);
	assert_int_equal(p.f->gpus[0].mig[2].cuda_index, 2);
	assert_int_equal(p.f->gpus[1].cuda_index, 3);
	assert_null(warning(p.f, "cvd-libcuda"));
	probe_free(&p);

	/* MIG queries switched off */
	probe_init(&p, t, "mig", NULL);
	p.opts.flags = GPUENV_HW_NO_MIG;
	probe_run(&p);
	assert_int_equal(p.f->gpus[0].mig_current, -1);
	assert_int_equal(p.f->gpus[0].n_mig, 0);
	assert_int_equal(p.f->gpus[0].src[GPUENV_HW_F_MIG], GPUENV_HW_SRC_NONE);
	probe_free(&p);
	rmtree(t);
}

static void test_nvlink(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree();

	probe_init(&p, t, "nvlink", NULL);
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->n_gpus, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(f->gpus[i].n_nvlink, 18);
	gpuenv_hw_nvlink_t *k = f->gpus[0].nvlink;
	assert_true(k[0].active);
	assert_int_equal(k[3].link, 3);
	assert_true(k[3].active);
	assert_false(k[4].active);
	assert_string_equal(k[0].peer_bus_id, "00000000:2A:00.0");
	assert_int_equal(k[0].peer_type, GPUENV_HW_PEER_GPU);
	assert_int_equal(k[0].peer_gpu, 1);
	assert_int_equal(f->gpus[1].nvlink[2].peer_gpu, 0);
	assert_string_equal(f->gpus[2].nvlink[17].peer_bus_id, "00000000:C5:00.0");
	assert_int_equal(f->gpus[2].nvlink[17].peer_type, GPUENV_HW_PEER_SWITCH);
	assert_int_equal(f->gpus[2].nvlink[17].peer_gpu, -1);
	assert_false(f->gpus[3].nvlink[0].active);
	assert_string_equal(f->gpus[3].nvlink[0].peer_bus_id, "");
	assert_int_equal(f->gpus[0].src[GPUENV_HW_F_NVLINK], GPUENV_HW_SRC_NVML);
	assert_false(f->visible.ambiguous_order); /* four identical GPUs */
	probe_free(&p);

	probe_init(&p, t, "nvlink", NULL);
	p.opts.flags = GPUENV_HW_NO_NVLINK;
	probe_run(&p);
	assert_int_equal(p.f->gpus[0].n_nvlink, 0);
	assert_int_equal(p.f->gpus[0].src[GPUENV_HW_F_NVLINK], GPUENV_HW_SRC_NONE);
	probe_free(&p);
	rmtree(t);
}

static void test_device_errors(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree();

	/* GPU 1 lost before its handle, GPU 2 lost while being read */
	probe_init(&p, t, "lost", NULL);
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->state, GPUENV_HW_OK);
	assert_int_equal(f->n_gpus, 3);
	assert_string_equal(f->gpus[0].uuid, "GPU-dddddddd-0000-0000-0000-000000000000");
	assert_int_equal(f->gpus[0].cc_major, 7);
	assert_int_equal(f->gpus[1].index, 1);
	assert_null(f->gpus[1].name);
	assert_string_equal(f->gpus[1].bus_id, "");
	assert_int_equal(f->gpus[2].index, 2);
	assert_string_equal(f->gpus[2].name, "Tesla V100-SXM2-16GB");
	assert_null(f->gpus[2].uuid);
	assert_int_equal(f->gpus[2].cc_major, -1); /* nothing asked after the loss */
	assert_int_equal(f->n_warnings, 2);
	assert_string_equal(f->warnings[0].id, "nvml-gpu-lost");
	assert_int_equal(f->warnings[0].gpu, 1);
	assert_int_equal(f->warnings[0].code, 15);
	assert_non_null(strstr(f->warnings[0].msg, "nvmlDeviceGetHandleByIndex"));
	assert_non_null(strstr(f->warnings[0].msg, "NVML_ERROR_GPU_IS_LOST"));
	assert_non_null(strstr(f->warnings[0].hint, "Xid 79"));
	assert_int_equal(f->warnings[1].gpu, 2);
	assert_non_null(strstr(f->warnings[1].msg, "nvmlDeviceGetUUID"));
	probe_free(&p);

	/* no permission for GPU 0; GPU 1 readable except its memory */
	probe_init(&p, t, "noperm", NULL);
	probe_run(&p);
	f = p.f;
	dump_warnings(f);
	assert_int_equal(f->n_gpus, 2);
	assert_null(f->gpus[0].name);
	assert_string_equal(f->gpus[1].name, "NVIDIA L40S");
	assert_true(f->gpus[1].mem_total == 0);
	assert_int_equal(f->gpus[1].src[GPUENV_HW_F_MEMORY], GPUENV_HW_SRC_NONE);
	assert_int_equal(f->n_warnings, 2);
	assert_string_equal(f->warnings[0].id, "nvml-no-permission");
	assert_int_equal(f->warnings[0].gpu, 0);
	assert_int_equal(f->warnings[1].gpu, 1);
	assert_non_null(strstr(f->warnings[1].msg, "nvmlDeviceGetMemoryInfo"));
	probe_free(&p);

	/* more GPUs than the probe keeps */
	probe_init(&p, t, "toomany", NULL);
	p.opts.flags = GPUENV_HW_NO_LIBCUDA;
	probe_run(&p);
	assert_int_equal(p.f->n_gpus, GPUENV_HW_MAX_GPUS);
	assert_int_equal(p.f->nvml.device_count, 100);
	assert_non_null(warning(p.f, "too-many-gpus"));
	probe_free(&p);

	/* NVML works but lists nothing, while the PCI bus shows a GPU */
	probe_init(&p, t, "zero", NULL);
	probe_run(&p);
	assert_int_equal(p.f->state, GPUENV_HW_NO_HARDWARE);
	probe_free(&p);
	pci(t, "0000:3b:00.0", "0x10de\n", "0x2330\n", "0x030200\n", "nvidia");
	probe_init(&p, t, "zero", NULL);
	probe_run(&p);
	assert_int_equal(p.f->state, GPUENV_HW_NVML_ERROR);
	probe_free(&p);
	rmtree(t);
}

static void test_cross_checks(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree();

	/* the kernel module is older than the NVML library */
	put(t, "proc/driver/nvidia/version",
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  575.57.08  Sat May 24 2025\n");
	probe_init(&p, t, "h200", NULL);
	probe_run(&p);
	dump_warnings(p.f);
	assert_string_equal(p.f->driver.flavor, "proprietary");
	const gpuenv_hw_warning_t *w = warning(p.f, "driver-mismatch");
	assert_non_null(w);
	assert_non_null(strstr(w->msg, "575.57.08"));
	probe_free(&p);

	/* a forward-compatibility libcuda */
	probe_init(&p, t, "h200", "compat");
	probe_run(&p);
	w = warning(p.f, "libcuda-version");
	assert_non_null(w);
	assert_non_null(strstr(w->msg, "13.1"));
	assert_non_null(strstr(w->hint, "cuda-compat"));
	probe_free(&p);

	/* an older libcuda.so.1 */
	probe_init(&p, t, "h200", "old");
	probe_run(&p);
	assert_non_null(warning(p.f, "libcuda-version"));
	assert_int_equal(p.f->driver.cuda_version, 13000);
	probe_free(&p);

	/* a stub answering the fake's way */
	probe_init(&p, t, "h200", "stub");
	probe_run(&p);
	assert_int_equal(p.f->libcuda.state, GPUENV_HW_LIB_STUB);
	assert_string_equal(p.f->libcuda.message, "toolkit stub, not a driver");
	assert_non_null(warning(p.f, "libcuda-stub"));
	assert_int_equal(p.f->state, GPUENV_HW_OK); /* NVML still works */
	probe_free(&p);
	rmtree(t);
}

static void test_old_nvml(void **state)
{
	(void)state;
	struct probe p;

	/* only the v1 entry points: nvmlInit, nvmlDeviceGetPciInfo, ... */
	probe_init(&p, fixture("h200"), "h200", NULL);
	p.opts.nvml_lib = fake_nvml_old;
	p.opts.cuda_lib = fake_nvml_old;
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->state, GPUENV_HW_OK);
	assert_int_equal(f->nvml.state, GPUENV_HW_LIB_OK);
	assert_int_equal(f->libcuda.state, GPUENV_HW_LIB_WRONG);
	assert_int_equal(f->driver.cuda_version, 0);
	assert_int_equal(f->n_gpus, 1);
	assert_string_equal(f->gpus[0].bus_id, "00000000:00:06.0"); /* from the legacy id */
	assert_int_equal(f->gpus[0].nvml_arch, 0);
	assert_string_equal(f->gpus[0].arch, "Hopper");
	assert_int_equal(f->gpus[0].mig_current, -1);
	assert_int_equal(f->gpus[0].src[GPUENV_HW_F_NVLINK], GPUENV_HW_SRC_NONE);
	probe_free(&p);
}

static void test_jetson(void **state)
{
	(void)state;
	struct probe p;
	char *t;

	/* Orin (L4T 36): nvgpu, no NVML, no PCI GPU */
	probe_init(&p, fixture("jetson-orin"), NULL, NULL);
	p.opts.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
	p.opts.flags = GPUENV_HW_NO_LIBCUDA;
	probe_run(&p);
	gpuenv_hw_facts_t *f = p.f;
	dump_warnings(f);
	assert_int_equal(f->state, GPUENV_HW_OK);
	assert_true(f->jetson.present);
	assert_true(f->jetson.nvgpu);
	assert_string_equal(f->jetson.soc, "tegra234");
	assert_string_equal(f->jetson.l4t, "36.4.3");
	assert_string_equal(f->jetson.model, "NVIDIA Jetson AGX Orin Developer Kit");
	assert_true(f->driver.loaded);
	assert_int_equal(f->n_gpus, 1);
	gpuenv_hw_gpu_t *g = &f->gpus[0];
	assert_true(g->integrated);
	assert_string_equal(g->name, "Orin");
	assert_int_equal(g->cc_major, 8);
	assert_int_equal(g->cc_minor, 7);
	assert_string_equal(g->arch, "Ampere");
	assert_int_equal(g->src[GPUENV_HW_F_CC], GPUENV_HW_SRC_DEVTREE);
	assert_true(g->mem_total == 64335836ULL * 1024);
	assert_string_equal(g->driver, "nvgpu");
	assert_string_equal(g->bus_id, "");
	assert_true(g->visible);
	assert_int_equal(g->cuda_index, 0);
	probe_free(&p);

	/* the same board with the GPU driver not loaded */
	t = mktree();
	put(t, "etc/nv_tegra_release", "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref\n");
	put_n(t, "proc/device-tree/compatible", "nvidia,p3768-0000+p3767-0000\0nvidia,tegra234\0", 46);
	put_n(t, "proc/device-tree/model", "NVIDIA Orin Nano Developer Kit\0", 31);
	probe_init(&p, t, NULL, NULL);
	p.opts.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
	p.opts.flags = GPUENV_HW_NO_LIBCUDA;
	probe_run(&p);
	assert_int_equal(p.f->state, GPUENV_HW_NOT_LOADED);
	assert_string_equal(p.f->jetson.l4t, "35.4.1");
	assert_string_equal(p.f->jetson.model, "NVIDIA Orin Nano Developer Kit");
	assert_int_equal(p.f->n_gpus, 1);
	assert_false(p.f->gpus[0].visible);
	probe_free(&p);
	rmtree(t);

	/* Thor (L4T 38): the nvidia module (aarch64 /proc format) and a
	 * limited NVML: no PCI info, no memory */
	t = mktree();
	put(t, "proc/driver/nvidia/version",
		"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.00  Release Build  "
		"(buildbrain@mobile-u64-6336-d8000)  Tue Aug 12 22:20:10 PDT 2025\n"
		"GCC version:  collect2: error: ld returned 1 exit status\n");
	put(t, "sys/module/nvidia/version", "580.00\n");
	put(t, "etc/nv_tegra_release", "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64\n");
	put_n(t, "proc/device-tree/compatible", "nvidia,p3971-0080+p3834-0008\0nvidia,tegra264\0", 46);
	put(t, "proc/meminfo", "MemTotal:       128416044 kB\n");
	probe_init(&p, t, "thor", NULL);
	probe_run(&p);
	f = p.f;
	dump_warnings(f);
	assert_int_equal(f->state, GPUENV_HW_OK);
	assert_string_equal(f->driver.procfs_version, "580.00");
	assert_string_equal(f->driver.version, "580.00");
	assert_string_equal(f->driver.flavor, "open");
	assert_false(f->jetson.nvgpu);
	assert_string_equal(f->jetson.soc, "tegra264");
	assert_string_equal(f->jetson.l4t, "38.2.0");
	assert_int_equal(f->n_gpus, 1); /* NVML's GPU is the integrated one */
	g = &f->gpus[0];
	assert_true(g->integrated);
	assert_int_equal(g->index, 0);
	assert_string_equal(g->name, "NVIDIA Thor");
	assert_int_equal(g->src[GPUENV_HW_F_NAME], GPUENV_HW_SRC_NVML);
	assert_int_equal(g->cc_major, 11);
	assert_string_equal(g->arch, "Blackwell");
	assert_true(g->mem_total == 128416044ULL * 1024);
	assert_int_equal(g->src[GPUENV_HW_F_MEMORY], GPUENV_HW_SRC_PROCFS);
	assert_int_equal(f->n_warnings, 0);
	probe_free(&p);

	probe_init(&p, t, "thor", NULL);
	p.opts.flags = GPUENV_HW_DEEP;
	probe_run(&p);
	assert_int_equal(p.f->n_gpus, 1);
	assert_int_equal(p.f->gpus[0].cuda_index, 0);
	probe_free(&p);
	rmtree(t);
}

/* Trees with hostile contents: binary junk, huge files, a FIFO, a loop. */
static void test_hostile_tree(void **state)
{
	(void)state;
	struct probe p;
	char *t = mktree(), path[4096], junk[8192];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	put_n(t, "proc/driver/nvidia/version", junk, sizeof(junk));
	put_n(t, "sys/module/nvidia/version", junk, 100);
	pci(t, "0000:01:00.0", "0x10de", "zzzz", "0x0302000000000", NULL);
	pci(t, "0000:02:00.0", "0x10de\n", "0x2330\n", "0x030200\n",
		"../../../../../../../../../../../../../../../../../../../../../../../../x");
	pci(t, "not-a-bus-id", "0x10de\n", "0x2330\n", "0x030200\n", NULL);
	put_n(t, "proc/driver/nvidia/gpus/0000:02:00.0/information", junk, sizeof(junk));
	put(t, "proc/driver/nvidia/gpus/0000:09:00.0/information", "Model:\nGPU UUID: GPU-????\n");
	put_n(t, "etc/nv_tegra_release", junk, sizeof(junk));
	put_n(t, "proc/device-tree/compatible", junk, sizeof(junk));
	snprintf(path, sizeof(path), "%s/proc/device-tree/model", t);
	assert_int_equal(mkfifo(path, 0600), 0); /* must not block */
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:03:00.0", t);
	assert_int_equal(symlink(path, path), 0); /* a symlink loop */
	probe_init(&p, t, "h200", NULL);
	p.opts.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
	p.opts.flags = GPUENV_HW_NO_LIBCUDA;
	p.env.cvd = "0,GPU-,MIG-,MIG-GPU-/1/2,,,";
	probe_run(&p);
	assert_true(p.f->driver.loaded);
	assert_null(p.f->driver.procfs_version);
	assert_int_equal(p.f->n_pci, 2);
	assert_int_equal(p.f->pci[0].kind, GPUENV_HW_PCI_OTHER); /* class unreadable */
	assert_string_equal(p.f->pci[1].driver, "x");
	probe_free(&p);
	rmtree(t);
}

/* allocation failures at every point: -ENOMEM or success, never a crash */
static void test_alloc_failures(void **state)
{
	(void)state;
	static const char *const scenarios[] = { "mig", "nvlink", "lost" };

	for (size_t s = 0; s < 3; s++) {
		bool ok = false;
		for (int n = 0; n < 400 && !ok; n++) {
			struct probe p;
			testutil_alloc_t b = { .fail_at = n };
			probe_init(&p, fixture("h200"), scenarios[s], NULL);
			p.ctx.mem = testutil_allocator(&b);
			p.opts.flags = GPUENV_HW_DEEP;
			p.arena.chunk_size = 256; /* many chunks, many failure points */
			int r = gpuenv_hw_probe_gpus(&p.ctx, &p.opts, &p.arena, &p.f);
			if (r == 0)
				ok = true;
			else
				assert_int_equal(r, -ENOMEM);
			probe_free(&p);
		}
		assert_true(ok);
	}
}

int main(void)
{
	fake_nvml = getenv("GPUENV_FAKE_NVML");
	fake_nvml_old = getenv("GPUENV_FAKE_NVML_OLD");
	src_dir = getenv("GPUENV_SRC");
	if (!fake_nvml || !fake_nvml_old || !src_dir) {
		fprintf(stderr, "GPUENV_FAKE_NVML, GPUENV_FAKE_NVML_OLD and GPUENV_SRC must be set "
				"(meson test sets them)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_bus_id),
		cmocka_unit_test(test_parse_nvrm),
		cmocka_unit_test(test_parse_text),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_this_machine),
		cmocka_unit_test(test_lib_dirs),
		cmocka_unit_test(test_no_hardware),
		cmocka_unit_test(test_driver_not_loaded),
		cmocka_unit_test(test_h200),
		cmocka_unit_test(test_nvml_missing_driver_loaded),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_nvlink),
		cmocka_unit_test(test_device_errors),
		cmocka_unit_test(test_cross_checks),
		cmocka_unit_test(test_old_nvml),
		cmocka_unit_test(test_jetson),
		cmocka_unit_test(test_hostile_tree),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
