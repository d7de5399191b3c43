/* The sysfs / procfs backend: what the kernel says without any NVIDIA
 * library.
 *
 *   /sys/bus/pci/devices/X/{vendor,device,class,driver}  NVIDIA PCI functions
 *       (vendor 0x10de): GPUs (class 0x03xxxx), NVSwitches (0x068000), and
 *       the kernel driver bound to each (a GPU with no driver or with nouveau
 *       or vfio-pci is "present, driver not loaded")
 *   /proc/driver/nvidia/version      the loaded kernel module's NVRM line
 *   /sys/module/nvidia/version       the module's bare version
 *   /proc/driver/nvidia/gpus/X/information   Model, GPU UUID, Bus Location
 *   Jetson (no PCI GPU; NVML is absent or limited before Thor):
 *     /etc/nv_tegra_release          "# R36 (release), REVISION: 4.3, ..."
 *     /proc/device-tree/model        "NVIDIA Jetson AGX Orin Developer Kit\0"
 *     /proc/device-tree/compatible   "...\0nvidia,tegra234\0"
 *     /sys/module/nvgpu              the integrated GPU's driver (Orin and
 *                                    older; Thor uses the nvidia module)
 *     /proc/meminfo                  MemTotal: the GPU shares system memory
 *
 * Every path is read under ctx->root, with small fixed buffers. */
#define _GNU_SOURCE
#include "hw_text.h"
#include "hw_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVIDIA_VENDOR 0x10de

/* A small sysfs file holding one hex number ("0x10de\n"). */
static bool read_hex(gpuenv_ctx_t *ctx, const char *path, uint32_t *out)
{
	char buf[32];
	int n = hw_read(ctx, path, buf, sizeof(buf));
	gpuenv_str_t s;
	uint32_t v;

	if (n <= 0)
		return false;
	s = hw_trim_blanks(gpuenv_str_n(buf, (size_t)n));
	if (s.len > 2 && s.ptr[0] == '0' && (s.ptr[1] == 'x' || s.ptr[1] == 'X'))
		s = gpuenv_str_n(s.ptr + 2, s.len - 2);
	if (!s.len || s.len > 8 || !hw_hexn(s.ptr, s.len, &v))
		return false;
	*out = v;
	return true;
}

static int pci_cmp(const void *pa, const void *pb)
{
	const gpuenv_hw_pci_t *a = pa, *b = pb;

	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->bus != b->bus)
		return a->bus < b->bus ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->fn > b->fn) - (a->fn < b->fn);
}

static int add_pci(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_hw_facts_t *f,
	const char *name, const gpuenv_hw_busid_t *id)
{
	char path[512], link[512];
	uint32_t device = 0, cls = 0;
	gpuenv_hw_pci_t *p;
	ssize_t n;

	if (f->n_pci >= GPUENV_HW_MAX_PCI) {
		/* said once: the functions past the cap are left out */
		for (size_t i = 0; i < f->n_warnings; i++)
			if (strcmp(f->warnings[i].id, "too-many-pci") == 0)
				return 0;
		return hw_warn(a, f, -1, GPUENV_HW_SRC_SYSFS, 0, "too-many-pci", NULL,
			"more than %d NVIDIA PCI functions: the rest are left out", GPUENV_HW_MAX_PCI);
	}
	size_t *cap = &hw_priv(f)->cap_pci;
	if (hw_grow(a, (void **)&f->pci, cap, f->n_pci, sizeof(*f->pci)))
		return -ENOMEM;
	p = &f->pci[f->n_pci];
	memset(p, 0, sizeof(*p));
	snprintf(p->bus_id, sizeof(p->bus_id), "%04x:%02x:%02x.%x", (unsigned)id->domain,
		id->bus, id->dev, id->fn);
	p->domain = id->domain;
	p->bus = id->bus;
	p->dev = id->dev;
	p->fn = id->fn;
	p->vendor = NVIDIA_VENDOR;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", name);
	if (read_hex(ctx, path, &device))
		p->device = (uint16_t)device;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", name);
	if (read_hex(ctx, path, &cls))
		p->class_code = cls & 0xffffff;
	if ((p->class_code >> 16) == 0x03)
		p->kind = GPUENV_HW_PCI_GPU;
	else if (p->class_code == 0x068000)
		p->kind = GPUENV_HW_PCI_NVSWITCH;
	/* driver -> ../../../bus/pci/drivers/nvidia: the bound driver's name */
	/* the link itself is read: the folder holding it is resolved, not it */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", name);
	if (hw_path(ctx, path, link, sizeof(link) - 7) == 0 && strcat(link, "/driver") &&
	    (n = readlink(link, path, sizeof(path) - 1)) > 0) {
		const char *base;
		path[n] = '\0';
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (*base && !(p->driver = hw_strdup(a, base, strlen(base))))
			return -ENOMEM;
	}
	f->n_pci++;
	return 0;
}

static int scan_pci(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	char dirp[4096], path[512];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (hw_path(ctx, "/sys/bus/pci/devices", dirp, sizeof(dirp)) < 0 ||
	    !(d = opendir(dirp)))
		return 0;
	/* every entry: a machine with many PCI functions (a large switch
	 * fabric) must not lose its GPUs past a silent cap */
	while ((de = readdir(d))) {
		gpuenv_hw_busid_t id;
		uint32_t vendor;
		if (de->d_name[0] == '.' ||
		    !gpuenv_hw_parse_bus_id(gpuenv_str(de->d_name), &id))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", de->d_name);
		if (!read_hex(ctx, path, &vendor) || vendor != NVIDIA_VENDOR)
			continue;
		if ((r = add_pci(ctx, a, f, de->d_name, &id)) < 0)
			break;
	}
	closedir(d);
	if (r < 0)
		return r;
	if (f->n_pci > 1)
		qsort(f->pci, f->n_pci, sizeof(*f->pci), pci_cmp);
	/* each GPU function becomes a GPU */
	for (size_t i = 0; i < f->n_pci; i++) {
		gpuenv_hw_pci_t *p = &f->pci[i];
		gpuenv_hw_busid_t id = { p->domain, p->bus, p->dev, p->fn };
		gpuenv_hw_gpu_t *g;
		int k;
		if (p->kind != GPUENV_HW_PCI_GPU)
			continue;
		k = hw_gpu_by_bus(a, f, &id);
		if (k == GPUENV_ETOOBIG)
			break;
		if (k < 0)
			return k;
		g = &f->gpus[k];
		g->driver = p->driver;
		g->device_id = p->device;
		g->pci_device_id = (uint32_t)p->device << 16 | NVIDIA_VENDOR;
		hw_take(g, GPUENV_HW_F_PCI, GPUENV_HW_SRC_SYSFS);
	}
	return 0;
}

static int read_driver(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	gpuenv_hw_driver_t *d = &f->driver;
	char buf[1024];
	int n;

	n = hw_read(ctx, "/proc/driver/nvidia/version", buf, sizeof(buf));
	if (n > 0) {
		gpuenv_hw_nvrm_t v;
		d->loaded = true;
		if (gpuenv_hw_parse_nvrm(gpuenv_str_n(buf, (size_t)n), &v)) {
			if (!(d->procfs = hw_strdup(a, v.line.ptr, v.line.len)) ||
			    !(d->procfs_version = hw_strdup(a, v.version.ptr, v.version.len)))
				return -ENOMEM;
			d->flavor = v.open ? "open" : "proprietary";
			d->version = d->procfs_version;
			d->version_src = GPUENV_HW_SRC_PROCFS;
		} else {
			gpuenv_str_t line = GPUENV_STR_NULL, text = gpuenv_str_n(buf, (size_t)n);
			hw_next_line(&text, &line);
			line = hw_trim_blanks(line);
			if (line.len && !(d->procfs = hw_strdup(a, line.ptr, line.len)))
				return -ENOMEM;
		}
	}
	n = hw_read(ctx, "/sys/module/nvidia/version", buf, sizeof(buf));
	if (n > 0) {
		gpuenv_str_t v = hw_trim_blanks(gpuenv_str_n(buf, (size_t)n));
		d->loaded = true;
		if (v.len && !(d->module_version = hw_strdup(a, v.ptr, v.len)))
			return -ENOMEM;
		if (!d->version && hw_is_version_word(v)) {
			d->version = d->module_version;
			d->version_src = GPUENV_HW_SRC_SYSFS;
		}
	} else if (hw_exists(ctx, "/sys/module/nvidia/initstate")) {
		d->loaded = true;
	}
	return 0;
}

/* /proc/driver/nvidia/gpus/<bus id>/information, one folder per GPU the
 * nvidia driver owns. */
static int read_proc_gpus(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	char dirp[4096], path[512], buf[2048];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (hw_path(ctx, "/proc/driver/nvidia/gpus", dirp, sizeof(dirp)) < 0 ||
	    !(d = opendir(dirp)))
		return 0;
	while ((de = readdir(d))) {
		gpuenv_hw_busid_t id;
		gpuenv_str_t text, v;
		gpuenv_hw_gpu_t *g;
		int n, k;
		if (de->d_name[0] == '.' ||
		    !gpuenv_hw_parse_bus_id(gpuenv_str(de->d_name), &id))
			continue;
		snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information",
			de->d_name);
		if ((n = hw_read(ctx, path, buf, sizeof(buf))) < 0)
			continue;
		k = hw_gpu_by_bus(a, f, &id);
		if (k == GPUENV_ETOOBIG)
			break;
		if (k < 0) {
			r = k;
			break;
		}
		g = &f->gpus[k];
		if (!g->driver)
			g->driver = "nvidia";
		text = gpuenv_str_n(buf, (size_t)n);
		v = gpuenv_hw_text_field(text, "Model");
		if (v.len && hw_take(g, GPUENV_HW_F_NAME, GPUENV_HW_SRC_PROCFS) &&
		    !(g->name = hw_strdup(a, v.ptr, v.len))) {
			r = -ENOMEM;
			break;
		}
		/* an unreadable UUID is shown as GPU-????????-... */
		v = gpuenv_hw_text_field(text, "GPU UUID");
		if (v.len > 4 && gpuenv_str_startswith(v, "GPU-") && !memchr(v.ptr, '?', v.len) &&
		    hw_take(g, GPUENV_HW_F_UUID, GPUENV_HW_SRC_PROCFS) &&
		    !(g->uuid = hw_strdup(a, v.ptr, v.len))) {
			r = -ENOMEM;
			break;
		}
		hw_take(g, GPUENV_HW_F_PCI, GPUENV_HW_SRC_PROCFS);
	}
	closedir(d);
	return r;
}

/* Jetson SoCs: the integrated GPU's CUDA name and compute capability.
 * Sources: developer.nvidia.com/cuda-gpus, KB-FACTS.md. */
static const struct tegra {
	const char *soc, *gpu;
	int major, minor;
} tegras[] = {
	{ "tegra210", "NVIDIA Tegra X1", 5, 3 }, /* Jetson Nano, TX1 */
	{ "tegra186", "NVIDIA Tegra X2", 6, 2 }, /* TX2 */
	{ "tegra194", "Xavier", 7, 2 },		 /* AGX Xavier, Xavier NX */
	{ "tegra234", "Orin", 8, 7 },		 /* AGX Orin, Orin NX, Orin Nano */
	{ "tegra264", "NVIDIA Thor", 11, 0 },	 /* Jetson Thor */
};

static int read_jetson(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	gpuenv_hw_jetson_t *j = &f->jetson;
	char buf[1024], l4t[32];
	gpuenv_str_t soc = GPUENV_STR_NULL;
	int n;

	n = hw_read(ctx, "/etc/nv_tegra_release", buf, sizeof(buf));
	if (n > 0 && gpuenv_hw_parse_l4t(gpuenv_str_n(buf, (size_t)n), l4t, sizeof(l4t))) {
		j->present = true;
		if (!(j->l4t = hw_strdup(a, l4t, strlen(l4t))))
			return -ENOMEM;
	}
	n = hw_read(ctx, "/proc/device-tree/compatible", buf, sizeof(buf));
	if (n > 0 && (soc = gpuenv_hw_parse_tegra_soc(gpuenv_str_n(buf, (size_t)n))).ptr) {
		j->present = true;
		if (!(j->soc = hw_strdup(a, soc.ptr, soc.len)))
			return -ENOMEM;
	}
	if (!j->present)
		return 0;
	n = hw_read(ctx, "/proc/device-tree/model", buf, sizeof(buf));
	if (n > 0) {
		gpuenv_str_t m = hw_trim_blanks(gpuenv_str_n(buf, strnlen(buf, (size_t)n)));
		if (m.len && !(j->model = hw_strdup(a, m.ptr, m.len)))
			return -ENOMEM;
	}
	j->nvgpu = hw_exists(ctx, "/sys/module/nvgpu");
	if (j->nvgpu)
		f->driver.loaded = true;
	return 0;
}

/* A Jetson's integrated GPU, when no PCI scan or NVML will list it. */
static int add_jetson_gpu(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	const struct tegra *t = NULL;
	gpuenv_hw_gpu_t *g;
	char buf[4096];
	int k, n;

	for (size_t i = 0; f->jetson.soc && i < sizeof(tegras) / sizeof(tegras[0]); i++)
		if (strcmp(f->jetson.soc, tegras[i].soc) == 0)
			t = &tegras[i];
	for (size_t i = 0; i < f->n_gpus; i++)
		if (f->gpus[i].integrated)
			return 0;
	if ((k = hw_gpu_new(a, f)) < 0)
		return k == GPUENV_ETOOBIG ? 0 : k;
	g = &f->gpus[k];
	g->integrated = true;
	g->driver = f->jetson.nvgpu ? "nvgpu" : NULL;
	if (t) {
		g->name = t->gpu;
		g->cc_major = t->major;
		g->cc_minor = t->minor;
		g->src[GPUENV_HW_F_NAME] = GPUENV_HW_SRC_DEVTREE;
		g->src[GPUENV_HW_F_CC] = GPUENV_HW_SRC_DEVTREE;
	}
	/* the integrated GPU allocates from system memory */
	n = hw_read(ctx, "/proc/meminfo", buf, sizeof(buf));
	if (n > 0) {
		gpuenv_str_t v = gpuenv_hw_text_field(gpuenv_str_n(buf, (size_t)n), "MemTotal");
		gpuenv_str_t num, unit;
		uint64_t kb;
		unit = gpuenv_str_split(v, ' ', &num);
		if (gpuenv_str_to_u64(num, &kb) && kb < (UINT64_MAX >> 10) &&
		    (!unit.ptr || gpuenv_str_eq_cstr(gpuenv_str_trim(unit), "kB"))) {
			g->mem_total = kb << 10;
			g->src[GPUENV_HW_F_MEMORY] = GPUENV_HW_SRC_PROCFS;
		}
	}
	return 0;
}

int gpuenv_hw_sysfs_probe(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t *facts)
{
	int r;

	(void)opts;
	if ((r = read_driver(ctx, arena, facts)) < 0 || (r = scan_pci(ctx, arena, facts)) < 0 ||
	    (r = read_proc_gpus(ctx, arena, facts)) < 0 || (r = read_jetson(ctx, arena, facts)) < 0)
		return r;
	/* Orin and older: an nvgpu GPU with no PCI function; NVML may add it
	 * later (Thor), and then nvml.c drops this one */
	if (facts->jetson.present && facts->n_gpus == 0 &&
	    (r = add_jetson_gpu(ctx, arena, facts)) < 0)
		return r;
	return 0;
}
