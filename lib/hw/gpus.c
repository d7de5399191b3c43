/* Driver and GPU facts: the probe that runs the backends (sysfs.c, nvml.c,
 * cudadrv.c) and what they share: the facts arrays, file reads under
 * ctx->root, dlopen by the options' search path, CUDA_VISIBLE_DEVICES, the
 * cross-checks between sources and the overall state. */
#define _GNU_SOURCE
#include "gpuenv/fs.h"
#include "hw_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- options and the empty facts ------------------------------------- */

void gpuenv_hw_opts_init(gpuenv_hw_opts_t *opts)
{
	memset(opts, 0, sizeof(*opts));
}

gpuenv_hw_facts_t *gpuenv_hw_facts_new(gpuenv_arena_t *arena)
{
	gpuenv_hw_facts_t *f = gpuenv_arena_calloc(arena, 1, sizeof(*f));

	if (!f)
		return NULL;
	f->state = GPUENV_HW_NO_HARDWARE;
	f->libcuda.device_count = -1;
	return f;
}

/* Grow an arena array to hold one more element (doubling; the old block
 * stays in the arena, which is fine for these few dozen entries). */
static int grow(gpuenv_arena_t *a, void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = gpuenv_arena_calloc(a, ncap, elem);
	if (!p)
		return -ENOMEM;
	if (n)
		memcpy(p, *arr, n * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---- file reads under ctx->root -------------------------------------- */

int hw_path(gpuenv_ctx_t *ctx, const char *path, char *out, size_t outsz)
{
	/* symlinks resolved inside ctx->root (an absolute one stays in the tree) */
	return gpuenv_fs_resolve_in_root(ctx->root, path, out, outsz);
}

int hw_read(gpuenv_ctx_t *ctx, const char *path, char *buf, size_t cap)
{
	char full[4096];
	size_t len = 0;
	int fd, r;

	if (!cap)
		return -EINVAL;
	buf[0] = '\0';
	if ((r = hw_path(ctx, path, full, sizeof(full))) < 0)
		return r;
	/* a FIFO planted in a fake tree must not hang the probe */
	fd = gpuenv_fs_open_regular(NULL, AT_FDCWD, full, NULL);
	if (fd < 0)
		return fd;
	while (len < cap - 1) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			buf[0] = '\0';
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

bool hw_exists(gpuenv_ctx_t *ctx, const char *path)
{
	char full[4096];
	struct stat st;

	return hw_path(ctx, path, full, sizeof(full)) == 0 && stat(full, &st) == 0;
}

const char *hw_strdup(gpuenv_arena_t *a, const char *s, size_t n)
{
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
		     s[n - 1] == '\r' || s[n - 1] == '\0'))
		n--;
	return gpuenv_arena_strndup(a, s, n);
}

/* ---- GPUs and warnings ----------------------------------------------- */

static int src_rank(int src)
{
	switch (src) {
	case GPUENV_HW_SRC_NVML: return 6;
	case GPUENV_HW_SRC_LIBCUDA: return 5;
	case GPUENV_HW_SRC_PROCFS: return 4;
	case GPUENV_HW_SRC_SYSFS: return 3;
	case GPUENV_HW_SRC_DEVTREE: return 2;
	case GPUENV_HW_SRC_DERIVED: return 1;
	case GPUENV_HW_SRC_ENV: return 1;
	default: return 0;
	}
}

bool hw_take(gpuenv_hw_gpu_t *g, int fact, int src)
{
	if (src_rank(src) < src_rank(g->src[fact]))
		return false;
	g->src[fact] = (unsigned char)src;
	return true;
}

int hw_gpu_new(gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	gpuenv_hw_gpu_t *g;
	int r;

	if (f->n_gpus >= GPUENV_HW_MAX_GPUS) {
		if ((r = hw_warn(a, f, -1, GPUENV_HW_SRC_NONE, 0, "too-many-gpus", NULL,
			     "more than %d GPUs: the rest are left out", GPUENV_HW_MAX_GPUS)) < 0)
			return r;
		return GPUENV_ETOOBIG;
	}
	if ((r = grow(a, (void **)&f->gpus, &f->cap_gpus, f->n_gpus, sizeof(*f->gpus))) < 0)
		return r;
	g = &f->gpus[f->n_gpus];
	memset(g, 0, sizeof(*g));
	g->index = -1;
	g->cc_major = g->cc_minor = -1;
	g->mig_current = g->mig_pending = -1;
	g->cuda_index = -1;
	return (int)f->n_gpus++;
}

static bool bus_eq(const gpuenv_hw_gpu_t *g, const gpuenv_hw_busid_t *id)
{
	return g->bus_id[0] && g->pci_domain == id->domain && g->pci_bus == id->bus &&
		g->pci_dev == id->dev && g->pci_fn == id->fn;
}

void hw_gpu_set_bus(gpuenv_hw_gpu_t *g, const gpuenv_hw_busid_t *id)
{
	g->pci_domain = id->domain;
	g->pci_bus = id->bus;
	g->pci_dev = id->dev;
	g->pci_fn = id->fn;
	gpuenv_hw_bus_id_str(id, g->bus_id, sizeof(g->bus_id));
}

int hw_gpu_by_bus(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, const gpuenv_hw_busid_t *id)
{
	int i;

	for (size_t k = 0; k < f->n_gpus; k++)
		if (bus_eq(&f->gpus[k], id))
			return (int)k;
	if ((i = hw_gpu_new(a, f)) < 0)
		return i;
	hw_gpu_set_bus(&f->gpus[i], id);
	return i;
}

int hw_gpu_by_index(const gpuenv_hw_facts_t *f, int index)
{
	for (size_t k = 0; k < f->n_gpus; k++)
		if (f->gpus[k].index == index)
			return (int)k;
	return -1;
}

int hw_warn(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, int gpu, int src, int code,
	const char *id, const char *hint, const char *fmt, ...)
{
	char msg[512];
	gpuenv_hw_warning_t *w;
	va_list ap;
	int r;

	if (f->n_warnings >= GPUENV_HW_MAX_WARNINGS)
		return 0;
	if ((r = grow(a, (void **)&f->warnings, &f->cap_warnings, f->n_warnings,
		     sizeof(*f->warnings))) < 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w = &f->warnings[f->n_warnings];
	w->gpu = gpu;
	w->src = src;
	w->code = code;
	w->id = id;
	w->hint = hint;
	if (!(w->msg = gpuenv_arena_strndup(a, msg, strlen(msg))))
		return -ENOMEM;
	f->n_warnings++;
	return 0;
}

/* ---- libraries ------------------------------------------------------- */

void *hw_dlopen(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts, gpuenv_arena_t *a,
	const char *lib, const char *soname, const char **path, const char **msg,
	int *state)
{
	const char *err = NULL;
	struct link_map *lm = NULL;
	void *h = NULL;

	*path = NULL;
	*msg = NULL;
	if (!lib && ctx->root && ctx->root[0]) {
		/* the libraries of this machine say nothing about that tree */
		*state = GPUENV_HW_LIB_NOT_CHECKED;
		*msg = "not loaded: the probe reads a --root tree";
		return NULL;
	}
	dlerror();
	if (lib) {
		h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
		if (!h)
			err = dlerror();
	} else {
		for (size_t i = 0; opts && opts->lib_dirs && opts->lib_dirs[i] && !h; i++) {
			char p[4096];
			int n = snprintf(p, sizeof(p), "%s/%s", opts->lib_dirs[i], soname);
			if (n > 0 && (size_t)n < sizeof(p))
				h = dlopen(p, RTLD_LAZY | RTLD_LOCAL);
		}
		if (!h) {
			dlerror();
			h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
			if (!h)
				err = dlerror();
		}
	}
	if (!h) {
		*state = GPUENV_HW_LIB_MISSING;
		if (!err)
			err = "cannot be loaded";
		*msg = gpuenv_arena_strndup(a, err, strlen(err));
		return NULL;
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
		*path = gpuenv_arena_strndup(a, lm->l_name, strlen(lm->l_name));
	else
		*path = lib ? lib : soname;
	return h;
}

/* ---- names ------------------------------------------------------------ */

const char *gpuenv_hw_state_name(int state)
{
	switch (state) {
	case GPUENV_HW_NO_HARDWARE: return "no-hardware";
	case GPUENV_HW_NOT_LOADED: return "not-loaded";
	case GPUENV_HW_NVML_UNAVAILABLE: return "nvml-unavailable";
	case GPUENV_HW_NVML_ERROR: return "nvml-error";
	case GPUENV_HW_OK: return "ok";
	default: return "unknown";
	}
}

const char *gpuenv_hw_state_text(int state)
{
	switch (state) {
	case GPUENV_HW_NO_HARDWARE:
		return "no NVIDIA GPU and no NVIDIA driver on this machine";
	case GPUENV_HW_NOT_LOADED:
		return "an NVIDIA GPU is present but the NVIDIA driver is not loaded";
	case GPUENV_HW_NVML_UNAVAILABLE:
		return "the NVIDIA driver is loaded but NVML (libnvidia-ml.so.1) is missing";
	case GPUENV_HW_NVML_ERROR:
		return "the NVIDIA driver is loaded but NVML fails";
	case GPUENV_HW_OK:
		return "NVIDIA driver loaded and GPUs listed";
	default:
		return "unknown";
	}
}

const char *gpuenv_hw_src_name(int src)
{
	static const char *const names[GPUENV_HW_SRC_COUNT] = {
		"none", "nvml", "procfs", "sysfs", "libcuda", "devicetree", "derived", "env",
	};
	return src >= 0 && src < GPUENV_HW_SRC_COUNT ? names[src] : "none";
}

const char *gpuenv_hw_nvml_state_name(int state)
{
	switch (state) {
	case GPUENV_HW_LIB_NOT_CHECKED: return "not-checked";
	case GPUENV_HW_LIB_MISSING: return "missing";
	case GPUENV_HW_LIB_WRONG: return "not-nvml";
	case GPUENV_HW_LIB_ERROR: return "error";
	case GPUENV_HW_LIB_OK: return "ok";
	default: return "unknown";
	}
}

const char *gpuenv_hw_libcuda_state_name(int state)
{
	switch (state) {
	case GPUENV_HW_LIB_NOT_CHECKED: return "not-checked";
	case GPUENV_HW_LIB_MISSING: return "missing";
	case GPUENV_HW_LIB_WRONG: return "not-libcuda";
	case GPUENV_HW_LIB_STUB: return "stub";
	case GPUENV_HW_LIB_ERROR: return "error";
	case GPUENV_HW_LIB_OK: return "driver";
	default: return "unknown";
	}
}

const char *gpuenv_hw_peer_name(int peer)
{
	switch (peer) {
	case GPUENV_HW_PEER_GPU: return "gpu";
	case GPUENV_HW_PEER_SWITCH: return "switch";
	case GPUENV_HW_PEER_NPU: return "npu";
	default: return "unknown";
	}
}

/* Sources: the CUDA programming guide's compute capability table and
 * developer.nvidia.com/cuda-gpus (see ../shared/KB-FACTS.md). */
const char *gpuenv_hw_arch_from_cc(int major, int minor)
{
	switch (major) {
	case 1: return "Tesla";
	case 2: return "Fermi";
	case 3: return "Kepler";
	case 5: return "Maxwell";
	case 6: return "Pascal";
	case 7: return minor >= 5 ? "Turing" : "Volta"; /* 7.0 V100, 7.2 Xavier */
	case 8: return minor == 9 ? "Ada" : "Ampere";	  /* 8.0 8.6 8.7 8.8; 8.9 Ada */
	case 9: return "Hopper";
	case 10: /* B200, B300 */
	case 11: /* Jetson Thor */
	case 12: /* RTX 50xx, GB10 */
		return "Blackwell";
	default: return NULL;
	}
}

/* nvmlDeviceArchitecture_t: NVML_DEVICE_ARCH_KEPLER = 2 .. BLACKWELL = 10 */
const char *gpuenv_hw_arch_from_nvml(unsigned arch)
{
	static const char *const names[] = {
		[2] = "Kepler", [3] = "Maxwell", [4] = "Pascal", [5] = "Volta",
		[6] = "Turing", [7] = "Ampere", [8] = "Ada", [9] = "Hopper",
		[10] = "Blackwell",
	};
	return arch < sizeof(names) / sizeof(names[0]) ? names[arch] : NULL;
}

void gpuenv_hw_cuda_version_str(int version, char *out, size_t outsz)
{
	if (!outsz)
		return;
	if (version <= 0) {
		out[0] = '\0';
		return;
	}
	snprintf(out, outsz, "%d.%d", version / 1000, (version % 1000) / 10);
}

/* nvmlReturn_t values, from NVML's API reference (nvmlReturn_t). */
const char *gpuenv_hw_nvml_error_name(int code)
{
	switch (code) {
	case 0: return "NVML_SUCCESS";
	case 1: return "NVML_ERROR_UNINITIALIZED";
	case 2: return "NVML_ERROR_INVALID_ARGUMENT";
	case 3: return "NVML_ERROR_NOT_SUPPORTED";
	case 4: return "NVML_ERROR_NO_PERMISSION";
	case 5: return "NVML_ERROR_ALREADY_INITIALIZED";
	case 6: return "NVML_ERROR_NOT_FOUND";
	case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
	case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
	case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
	case 10: return "NVML_ERROR_TIMEOUT";
	case 11: return "NVML_ERROR_IRQ_ISSUE";
	case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
	case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
	case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
	case 15: return "NVML_ERROR_GPU_IS_LOST";
	case 16: return "NVML_ERROR_RESET_REQUIRED";
	case 17: return "NVML_ERROR_OPERATING_SYSTEM";
	case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
	case 19: return "NVML_ERROR_IN_USE";
	case 20: return "NVML_ERROR_MEMORY";
	case 21: return "NVML_ERROR_NO_DATA";
	case 22: return "NVML_ERROR_VGPU_ECC_NOT_ENABLED";
	case 23: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
	case 24: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
	case 25: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
	case 26: return "NVML_ERROR_DEPRECATED";
	case 27: return "NVML_ERROR_NOT_READY";
	case 28: return "NVML_ERROR_GPU_NOT_FOUND";
	case 29: return "NVML_ERROR_INVALID_STATE";
	case 999: return "NVML_ERROR_UNKNOWN";
	default: return NULL;
	}
}

/* CUresult values, from the CUDA driver API reference (CUresult). */
const char *gpuenv_hw_cuda_error_name(int code)
{
	switch (code) {
	case 0: return "CUDA_SUCCESS";
	case 1: return "CUDA_ERROR_INVALID_VALUE";
	case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
	case 3: return "CUDA_ERROR_NOT_INITIALIZED";
	case 4: return "CUDA_ERROR_DEINITIALIZED";
	case 34: return "CUDA_ERROR_STUB_LIBRARY";
	case 36: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
	case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
	case 100: return "CUDA_ERROR_NO_DEVICE";
	case 101: return "CUDA_ERROR_INVALID_DEVICE";
	case 102: return "CUDA_ERROR_DEVICE_NOT_LICENSED";
	case 304: return "CUDA_ERROR_OPERATING_SYSTEM";
	case 800: return "CUDA_ERROR_NOT_PERMITTED";
	case 801: return "CUDA_ERROR_NOT_SUPPORTED";
	case 802: return "CUDA_ERROR_SYSTEM_NOT_READY";
	case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
	case 804: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
	case 999: return "CUDA_ERROR_UNKNOWN";
	default: return NULL;
	}
}

/* ---- CUDA_VISIBLE_DEVICES --------------------------------------------- */

/* A GPU the CUDA driver would enumerate: NVML listed it, or (without NVML)
 * the nvidia driver owns it, or it is a Jetson's GPU. */
static bool cuda_capable(const gpuenv_hw_facts_t *f, const gpuenv_hw_gpu_t *g)
{
	if (g->index >= 0)
		return true;
	if (g->integrated)
		return f->driver.loaded;
	if (f->nvml.state == GPUENV_HW_LIB_OK && f->nvml.device_count > 0)
		return false; /* NVML saw the GPUs and not this one */
	if (!f->driver.loaded)
		return false;
	return !g->driver || strcmp(g->driver, "nvidia") == 0;
}

static int add_vis(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, size_t *cap, int gpu, int mig)
{
	gpuenv_hw_visible_t *v = &f->visible;
	gpuenv_hw_gpu_t *g = &f->gpus[gpu];
	int r;

	for (size_t i = 0; i < v->n; i++)
		if (v->devs[i].gpu == gpu && v->devs[i].mig == mig)
			return 0; /* named twice: CUDA cannot enumerate it twice */
	if (v->n >= GPUENV_HW_MAX_VISIBLE)
		return 0;
	if ((r = grow(a, (void **)&v->devs, cap, v->n, sizeof(*v->devs))) < 0)
		return r;
	v->devs[v->n].gpu = gpu;
	v->devs[v->n].mig = mig;
	g->visible = true;
	if (mig >= 0) {
		g->mig[mig].visible = true;
		g->mig[mig].cuda_index = (int)v->n;
	} else {
		g->cuda_index = (int)v->n;
	}
	v->n++;
	return 0;
}

/* The CUDA devices a GPU stands for: itself, or its MIG devices. */
static int add_gpu_devs(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, size_t *cap, int gpu)
{
	gpuenv_hw_gpu_t *g = &f->gpus[gpu];
	int r;

	if (g->mig_current == 1) {
		for (size_t j = 0; j < g->n_mig; j++)
			if ((r = add_vis(a, f, cap, gpu, (int)j)) < 0)
				return r;
		return 0;
	}
	return add_vis(a, f, cap, gpu, -1);
}

static bool uuid_prefix(const char *uuid, gpuenv_str_t e)
{
	return uuid && strlen(uuid) >= e.len && strncasecmp(uuid, e.ptr, e.len) == 0;
}

/* One entry: the device(s) it names, added in order.  Returns 1 when the
 * entry is valid, 0 when it ends the list, negative on ENOMEM. */
static int visible_entry(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, size_t *cap,
	gpuenv_str_t e, const int *ordinals, size_t n_ord, bool *used_index)
{
	uint64_t k;
	int found = -1, found_mig = -1, hits = 0;

	if (!e.len)
		return 0;
	if (gpuenv_str_to_u64(e, &k)) {
		*used_index = true;
		if (k >= n_ord)
			return 0;
		return add_gpu_devs(a, f, cap, ordinals[k]) < 0 ? -ENOMEM : 1;
	}
	if (e.len > 8 && strncasecmp(e.ptr, "MIG-GPU-", 8) == 0) {
		/* the CUDA 11.0 form: MIG-GPU-<uuid>/<gi>/<ci> */
		gpuenv_str_t uuid, gi, ci, rest;
		uint64_t gv, cv;
		rest = gpuenv_str_split(gpuenv_str_n(e.ptr + 4, e.len - 4), '/', &uuid);
		if (!rest.ptr)
			return 0;
		ci = gpuenv_str_split(rest, '/', &gi);
		if (!ci.ptr || !gpuenv_str_to_u64(gi, &gv) || !gpuenv_str_to_u64(ci, &cv))
			return 0;
		for (size_t i = 0; i < f->n_gpus; i++) {
			gpuenv_hw_gpu_t *g = &f->gpus[i];
			if (!g->uuid || strlen(g->uuid) != uuid.len ||
			    strncasecmp(g->uuid, uuid.ptr, uuid.len) != 0)
				continue;
			for (size_t j = 0; j < g->n_mig; j++)
				if (g->mig[j].gi_id >= 0 && (uint64_t)g->mig[j].gi_id == gv &&
				    g->mig[j].ci_id >= 0 && (uint64_t)g->mig[j].ci_id == cv) {
					found = (int)i;
					found_mig = (int)j;
					hits++;
				}
		}
	} else if (e.len > 4 && strncasecmp(e.ptr, "MIG-", 4) == 0) {
		for (size_t i = 0; i < f->n_gpus; i++)
			for (size_t j = 0; j < f->gpus[i].n_mig; j++)
				if (uuid_prefix(f->gpus[i].mig[j].uuid, e)) {
					found = (int)i;
					found_mig = (int)j;
					hits++;
				}
	} else if (e.len > 4 && strncasecmp(e.ptr, "GPU-", 4) == 0) {
		for (size_t i = 0; i < n_ord; i++)
			if (uuid_prefix(f->gpus[ordinals[i]].uuid, e)) {
				found = ordinals[i];
				hits++;
			}
	}
	if (hits != 1) /* none, or an ambiguous prefix */
		return 0;
	if (found_mig >= 0)
		return add_vis(a, f, cap, found, found_mig) < 0 ? -ENOMEM : 1;
	return add_gpu_devs(a, f, cap, found) < 0 ? -ENOMEM : 1;
}

static int apply_visible(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, const char *value,
	const char *cuda_device_order)
{
	gpuenv_hw_visible_t *v = &f->visible;
	int ordinals[GPUENV_HW_MAX_GPUS];
	size_t n_ord = 0, cap = 0;
	bool used_index = false, mixed = false;
	int r;

	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < f->n_gpus; i++) {
		gpuenv_hw_gpu_t *g = &f->gpus[i];
		g->visible = false;
		g->cuda_index = -1;
		for (size_t j = 0; j < g->n_mig; j++) {
			g->mig[j].visible = false;
			g->mig[j].cuda_index = -1;
		}
		if (g->src[GPUENV_HW_F_VISIBLE] != GPUENV_HW_SRC_LIBCUDA)
			g->src[GPUENV_HW_F_VISIBLE] = GPUENV_HW_SRC_ENV;
		if (cuda_capable(f, g) && n_ord < GPUENV_HW_MAX_GPUS) {
			if (n_ord && g->name && f->gpus[ordinals[0]].name &&
			    strcmp(g->name, f->gpus[ordinals[0]].name) != 0)
				mixed = true;
			ordinals[n_ord++] = (int)i;
		}
	}
	if (!value) {
		for (size_t i = 0; i < n_ord; i++)
			if ((r = add_gpu_devs(a, f, &cap, ordinals[i])) < 0)
				return r;
	} else {
		gpuenv_str_t rest = gpuenv_str(value), e;
		v->set = true;
		if (!(v->value = gpuenv_arena_strndup(a, value, strlen(value))))
			return -ENOMEM;
		for (size_t count = 0; rest.ptr && count < GPUENV_HW_MAX_VISIBLE; count++) {
			rest = gpuenv_str_split(rest, ',', &e);
			e = gpuenv_str_trim(e);
			r = visible_entry(a, f, &cap, e, ordinals, n_ord, &used_index);
			if (r < 0)
				return r;
			if (r == 0) {
				if (!(v->invalid = gpuenv_arena_strndup(a, e.ptr, e.len)))
					return -ENOMEM;
				break;
			}
		}
	}
	if (mixed && (!value || used_index) &&
	    !(cuda_device_order && strcmp(cuda_device_order, "PCI_BUS_ID") == 0))
		v->ambiguous_order = true;
	return 0;
}

int gpuenv_hw_apply_visible(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, const char *value,
	const char *cuda_device_order)
{
	int r = apply_visible(a, f, value, cuda_device_order);

	/* the helpers above return -ENOMEM bare: recorded here, once */
	return r == -ENOMEM ? gpuenv_oom(a->ctx, NULL) : r;
}

/* ---- finishing ---------------------------------------------------------- */

static int gpu_cmp(const void *pa, const void *pb)
{
	const gpuenv_hw_gpu_t *a = pa, *b = pb;

	/* NVML's order first, then by bus id, then integrated GPUs */
	if ((a->index >= 0) != (b->index >= 0))
		return a->index >= 0 ? -1 : 1;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	if (!a->bus_id[0] != !b->bus_id[0])
		return a->bus_id[0] ? -1 : 1;
	if (a->pci_domain != b->pci_domain)
		return a->pci_domain < b->pci_domain ? -1 : 1;
	if (a->pci_bus != b->pci_bus)
		return a->pci_bus < b->pci_bus ? -1 : 1;
	if (a->pci_dev != b->pci_dev)
		return a->pci_dev < b->pci_dev ? -1 : 1;
	if (a->pci_fn != b->pci_fn)
		return a->pci_fn < b->pci_fn ? -1 : 1;
	return 0;
}

/* Sort the GPUs and renumber what points at them (warnings). */
static int sort_gpus(gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	struct keyed {
		gpuenv_hw_gpu_t g;
		int old;
	} *tmp;
	int *map;
	size_t n = f->n_gpus;

	if (n < 2)
		return 0;
	tmp = gpuenv_arena_calloc(a, n, sizeof(*tmp));
	map = gpuenv_arena_calloc(a, n, sizeof(*map));
	if (!tmp || !map)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		tmp[i].g = f->gpus[i];
		tmp[i].old = (int)i;
	}
	/* the GPU is the first member, so gpu_cmp works on the wrapper too */
	qsort(tmp, n, sizeof(*tmp), gpu_cmp);
	for (size_t i = 0; i < n; i++) {
		map[tmp[i].old] = (int)i;
		f->gpus[i] = tmp[i].g;
	}
	for (size_t i = 0; i < f->n_warnings; i++)
		if (f->warnings[i].gpu >= 0 && (size_t)f->warnings[i].gpu < n)
			f->warnings[i].gpu = map[f->warnings[i].gpu];
	return 0;
}

static int cross_check(gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	gpuenv_hw_driver_t *d = &f->driver;
	int r = 0;

	if (d->version && d->procfs_version && strcmp(d->version, d->procfs_version) != 0 &&
	    (r = hw_warn(a, f, -1, GPUENV_HW_SRC_PROCFS, 0, "driver-mismatch",
		     "reboot, or unload and reload the nvidia kernel modules",
		     "NVML reports driver %s but the loaded kernel module is %s",
		     d->version, d->procfs_version)) < 0)
		return r;
	if (f->libcuda.state == GPUENV_HW_LIB_OK && f->libcuda.version && d->cuda_version &&
	    d->cuda_version_src == GPUENV_HW_SRC_NVML && f->libcuda.version != d->cuda_version) {
		char lv[16], nv[16];
		gpuenv_hw_cuda_version_str(f->libcuda.version, lv, sizeof(lv));
		gpuenv_hw_cuda_version_str(d->cuda_version, nv, sizeof(nv));
		if ((r = hw_warn(a, f, -1, GPUENV_HW_SRC_LIBCUDA, 0, "libcuda-version",
			     f->libcuda.version > d->cuda_version ?
				     "a CUDA forward-compatibility package (cuda-compat) is in use; it works only on data-center GPUs" :
				     "libcuda.so.1 and the driver come from different installs: remove the stale copy",
			     "%s supports CUDA %s but the driver (NVML) supports CUDA %s",
			     f->libcuda.path ? f->libcuda.path : "libcuda.so.1", lv, nv)) < 0)
			return r;
	}
	if (f->libcuda.state == GPUENV_HW_LIB_STUB &&
	    (r = hw_warn(a, f, -1, GPUENV_HW_SRC_LIBCUDA, 34, "libcuda-stub",
		     "the stub exists only for linking: take its folder (.../lib64/stubs) out of LD_LIBRARY_PATH and install the NVIDIA driver",
		     "%s is the CUDA toolkit's stub library, not a driver",
		     f->libcuda.path ? f->libcuda.path : "libcuda.so.1")) < 0)
		return r;
	for (size_t i = 0; i < f->n_gpus; i++) {
		gpuenv_hw_gpu_t *g = &f->gpus[i];
		const char *cc_arch = gpuenv_hw_arch_from_cc(g->cc_major, g->cc_minor);
		const char *nv_arch = gpuenv_hw_arch_from_nvml(g->nvml_arch);
		if (cc_arch && hw_take(g, GPUENV_HW_F_ARCH, GPUENV_HW_SRC_DERIVED))
			g->arch = cc_arch;
		else if (!g->arch && nv_arch && hw_take(g, GPUENV_HW_F_ARCH, GPUENV_HW_SRC_NVML))
			g->arch = nv_arch;
		if (cc_arch && nv_arch && strcmp(cc_arch, nv_arch) != 0 &&
		    (r = hw_warn(a, f, (int)i, GPUENV_HW_SRC_NVML, 0, "arch-mismatch", NULL,
			     "GPU %d: compute capability %d.%d means %s but NVML says %s",
			     g->index, g->cc_major, g->cc_minor, cc_arch, nv_arch)) < 0)
			return r;
		if (g->driver && strcmp(g->driver, "nvidia") != 0 && g->index < 0 && !g->integrated &&
		    (r = hw_warn(a, f, (int)i, GPUENV_HW_SRC_SYSFS, 0, "gpu-other-driver",
			     strcmp(g->driver, "nouveau") == 0 ?
				     "blacklist nouveau and install the NVIDIA driver" : NULL,
			     "GPU %s is bound to the %s kernel driver, not nvidia",
			     g->bus_id, g->driver)) < 0)
			return r;
		/* NVLink peers that are GPUs of this machine */
		for (size_t l = 0; l < g->n_nvlink; l++) {
			gpuenv_hw_nvlink_t *k = &g->nvlink[l];
			gpuenv_hw_busid_t id;
			k->peer_gpu = -1;
			if (!k->peer_bus_id[0] ||
			    !gpuenv_hw_parse_bus_id(gpuenv_str(k->peer_bus_id), &id))
				continue;
			for (size_t j = 0; j < f->n_gpus; j++)
				if (bus_eq(&f->gpus[j], &id))
					k->peer_gpu = (int)j;
		}
	}
	return 0;
}

static void derive_state(gpuenv_hw_facts_t *f)
{
	bool pci_gpu = false, seen;

	for (size_t i = 0; i < f->n_pci; i++)
		if (f->pci[i].kind == GPUENV_HW_PCI_GPU)
			pci_gpu = true;
	seen = pci_gpu || f->jetson.present || f->n_gpus > 0;
	if (f->nvml.state == GPUENV_HW_LIB_OK && f->nvml.device_count > 0)
		f->state = GPUENV_HW_OK;
	else if (f->jetson.present && f->jetson.nvgpu)
		f->state = GPUENV_HW_OK; /* Orin and older: no full NVML there */
	else if (!f->driver.loaded)
		f->state = seen ? GPUENV_HW_NOT_LOADED : GPUENV_HW_NO_HARDWARE;
	else if (f->nvml.state == GPUENV_HW_LIB_OK)
		f->state = seen ? GPUENV_HW_NVML_ERROR : GPUENV_HW_NO_HARDWARE;
	else if (f->nvml.state == GPUENV_HW_LIB_ERROR)
		f->state = GPUENV_HW_NVML_ERROR;
	else
		f->state = GPUENV_HW_NVML_UNAVAILABLE;
}

/* A CUDA ordinal that libcuda itself reported (deep probe). */
struct ordinal {
	int cuda, gpu, mig;
};

static int ordinal_cmp(const void *pa, const void *pb)
{
	const struct ordinal *a = pa, *b = pb;
	return (a->cuda > b->cuda) - (a->cuda < b->cuda);
}

/* After a deep probe, libcuda's ordinals replace the ones read from
 * CUDA_VISIBLE_DEVICES: libcuda applied the variable (and CUDA_DEVICE_ORDER)
 * itself.  A disagreement is worth a warning. */
static int use_cuda_ordinals(gpuenv_arena_t *a, gpuenv_hw_facts_t *f,
	struct ordinal *ord, size_t n)
{
	gpuenv_hw_visible_t *v = &f->visible;
	bool differ = n != v->n;
	int r;

	qsort(ord, n, sizeof(*ord), ordinal_cmp);
	for (size_t i = 0; i < n && !differ; i++)
		differ = v->devs[i].gpu != ord[i].gpu || v->devs[i].mig != ord[i].mig;
	if (differ && (r = hw_warn(a, f, -1, GPUENV_HW_SRC_LIBCUDA, 0, "cvd-libcuda",
			       "trust the libcuda numbering; name GPUs by UUID to be sure",
			       "libcuda numbers the GPUs differently from what CUDA_VISIBLE_DEVICES and NVML's order suggest")) < 0)
		return r;
	for (size_t i = 0; i < f->n_gpus; i++) {
		gpuenv_hw_gpu_t *g = &f->gpus[i];
		g->visible = false;
		g->cuda_index = -1;
		g->src[GPUENV_HW_F_VISIBLE] = GPUENV_HW_SRC_LIBCUDA;
		for (size_t j = 0; j < g->n_mig; j++) {
			g->mig[j].visible = false;
			g->mig[j].cuda_index = -1;
		}
	}
	if (n > v->n && !(v->devs = gpuenv_arena_calloc(a, n, sizeof(*v->devs))))
		return -ENOMEM;
	v->n = n;
	for (size_t i = 0; i < n; i++) {
		gpuenv_hw_gpu_t *g = &f->gpus[ord[i].gpu];
		v->devs[i].gpu = ord[i].gpu;
		v->devs[i].mig = ord[i].mig;
		g->visible = true;
		if (ord[i].mig >= 0) {
			g->mig[ord[i].mig].visible = true;
			g->mig[ord[i].mig].cuda_index = (int)i;
		} else {
			g->cuda_index = (int)i;
		}
	}
	return 0;
}

int gpuenv_hw_finish(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_hw_facts_t *f)
{
	const char *cvd = gpuenv_ctx_getenv(ctx, "CUDA_VISIBLE_DEVICES");
	const char *order = gpuenv_ctx_getenv(ctx, "CUDA_DEVICE_ORDER");
	struct ordinal ord[GPUENV_HW_MAX_VISIBLE];
	size_t n_ord = 0;
	int r;

	if ((r = sort_gpus(arena, f)) < 0)
		return r;
	/* cudadrv.c leaves libcuda's ordinals in cuda_index, marked by source */
	for (size_t i = 0; i < f->n_gpus; i++) {
		gpuenv_hw_gpu_t *g = &f->gpus[i];
		if (g->src[GPUENV_HW_F_VISIBLE] != GPUENV_HW_SRC_LIBCUDA)
			continue;
		if (g->cuda_index >= 0 && n_ord < GPUENV_HW_MAX_VISIBLE)
			ord[n_ord++] = (struct ordinal){ g->cuda_index, (int)i, -1 };
		for (size_t j = 0; j < g->n_mig; j++)
			if (g->mig[j].cuda_index >= 0 && n_ord < GPUENV_HW_MAX_VISIBLE)
				ord[n_ord++] = (struct ordinal){ g->mig[j].cuda_index, (int)i, (int)j };
	}
	bool have_cuda_ordinals = f->libcuda.initialized;
	if ((r = cross_check(arena, f)) < 0)
		return r;
	if ((r = gpuenv_hw_apply_visible(arena, f, cvd, order)) < 0)
		return r;
	if (f->visible.invalid &&
	    (r = hw_warn(arena, f, -1, GPUENV_HW_SRC_ENV, 0, "cvd-invalid",
		     "CUDA stops reading CUDA_VISIBLE_DEVICES at the first entry it cannot match",
		     "CUDA_VISIBLE_DEVICES entry '%s' matches no GPU: CUDA sees only the %zu device(s) before it",
		     f->visible.invalid, f->visible.n)) < 0)
		return r;
	if (have_cuda_ordinals) {
		if ((r = use_cuda_ordinals(arena, f, ord, n_ord)) < 0)
			return r;
	} else if (f->visible.ambiguous_order &&
		   (r = hw_warn(arena, f, -1, GPUENV_HW_SRC_ENV, 0, "cvd-order",
			    "set CUDA_DEVICE_ORDER=PCI_BUS_ID or name GPUs by UUID",
			    "the GPUs differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA numbers them fastest first, so CUDA's device numbers may not be NVML's")) < 0) {
		return r;
	}
	derive_state(f);
	return 0;
}

int gpuenv_hw_probe_gpus(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t **out)
{
	static int (*const backends[])(gpuenv_ctx_t *, const gpuenv_hw_opts_t *,
		gpuenv_arena_t *, gpuenv_hw_facts_t *) = {
		gpuenv_hw_sysfs_probe,
		gpuenv_hw_nvml_probe,
		gpuenv_hw_cudadrv_probe,
	};
	gpuenv_hw_opts_t defaults;
	gpuenv_hw_facts_t *f;
	int r;

	*out = NULL;
	if (!opts) {
		gpuenv_hw_opts_init(&defaults);
		opts = &defaults;
	}
	if ((r = gpuenv_fs_check_root(ctx)) != 0)
		return r;
	if (!(f = gpuenv_hw_facts_new(arena)))
		return gpuenv_oom(ctx, "GPU facts");
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if ((r = backends[i](ctx, opts, arena, f)) < 0)
			return gpuenv_fail(ctx, r, NULL, 0, 0, "GPU probe: %s", gpuenv_strerror(r));
	if ((r = gpuenv_hw_finish(ctx, arena, f)) < 0)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "GPU probe: %s", gpuenv_strerror(r));
	*out = f;
	return 0;
}
