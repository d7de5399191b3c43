/* hw_util.c: what the driver/GPU backends (sysfs.c, nvml.c, cudadrv.c) and
 * the orchestrator (gpus.c) share: the facts arrays, file reads under
 * ctx->root, dlopen by the options' search path, which source may set a
 * fact, warnings, and the names of states, sources and error codes. */
#define _GNU_SOURCE
#include "gpuenv/fs.h"
#include "hw_util.h"

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
	struct hw_facts_priv *p = gpuenv_arena_calloc(arena, 1, sizeof(*p));
	gpuenv_hw_facts_t *f = p ? &p->pub : NULL;

	if (!f)
		return NULL;
	f->state = GPUENV_HW_NO_HARDWARE;
	f->libcuda.device_count = -1;
	return f;
}

/* Grow an arena array to hold one more element (doubling; the old block
 * stays in the arena, which is fine for these few dozen entries). */
int hw_grow(gpuenv_arena_t *a, void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap <= n) /* arrays a caller filled itself (n set, no capacity) */
		ncap = n * 2 + 8;
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
	if ((r = hw_grow(a, (void **)&f->gpus, &hw_priv(f)->cap_gpus, f->n_gpus, sizeof(*f->gpus))) < 0)
		return r;
	g = &f->gpus[f->n_gpus];
	memset(g, 0, sizeof(*g));
	g->index = -1;
	g->cc_major = g->cc_minor = -1;
	g->mig_current = g->mig_pending = -1;
	g->cuda_index = -1;
	return (int)f->n_gpus++;
}

bool hw_bus_eq(const gpuenv_hw_gpu_t *g, const gpuenv_hw_busid_t *id)
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
		if (hw_bus_eq(&f->gpus[k], id))
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
	if ((r = hw_grow(a, (void **)&f->warnings, &hw_priv(f)->cap_warnings, f->n_warnings,
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
