/* The NVML backend: libnvidia-ml.so.1 through dlopen.
 *
 * The types, constants and signatures below are declared here from NVIDIA's
 * public NVML API reference (docs.nvidia.com/deploy/nvml-api), so no NVIDIA
 * header is needed to build.  Every function is looked up with dlsym, newest
 * version first; a missing one means "not available".
 *
 * Calls are few and in a fixed order: nvmlInit_v2, driver / CUDA / NVML
 * versions, device count, then per GPU: handle, PCI info, name, UUID, compute
 * capability, architecture, memory, MIG mode (and MIG devices when enabled),
 * NVLink states (and peers of active links), then nvmlShutdown.  NVML's init
 * and shutdown are most of the cost (about 15 of 23 ms on an H200).  An error
 * on one GPU becomes a warning on that GPU; the others are still read.  After
 * NVML_ERROR_GPU_IS_LOST nothing more is asked of that GPU. */
#include "hw_util.h"

#include "gpuenv/trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- the NVML API, as documented ----------------------------------------- */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
};

/* nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v2/_v3 (the v1 struct had
 * its 16-byte bus id first too, and is smaller) */
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device;
	unsigned int pciDeviceId;    /* device << 16 | vendor */
	unsigned int pciSubSystemId;
	char busId[32];		     /* "00000000:19:00.0" */
} nvmlPciInfo_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

#define NVML_BUF 128 /* >= NVML_DEVICE_NAME_V2_BUFFER_SIZE, _UUID_V2_, driver 80 */
#define NVML_FEATURE_ENABLED 1
#define NVML_NVLINK_DEVICE_TYPE_GPU 0
#define NVML_NVLINK_DEVICE_TYPE_IBMNPU 1
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2

struct nvml {
	void *h;
	nvmlReturn_t (*Init)(void);
	nvmlReturn_t (*Shutdown)(void);
	const char *(*ErrorString)(nvmlReturn_t);
	nvmlReturn_t (*SystemGetDriverVersion)(char *, unsigned);
	nvmlReturn_t (*SystemGetNVMLVersion)(char *, unsigned);
	nvmlReturn_t (*SystemGetCudaDriverVersion)(int *);
	nvmlReturn_t (*DeviceGetCount)(unsigned *);
	nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*DeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*DeviceGetCudaComputeCapability)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*DeviceGetArchitecture)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*DeviceGetMigMode)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*DeviceGetMaxMigDeviceCount)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*DeviceGetMigDeviceHandleByIndex)(nvmlDevice_t, unsigned, nvmlDevice_t *);
	nvmlReturn_t (*DeviceGetGpuInstanceId)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*DeviceGetComputeInstanceId)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*DeviceGetNvLinkState)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*DeviceGetNvLinkRemotePciInfo)(nvmlDevice_t, unsigned, nvmlPciInfo_t *);
	nvmlReturn_t (*DeviceGetNvLinkRemoteDeviceType)(nvmlDevice_t, unsigned, unsigned *);
};


static void load(struct nvml *api)
{
	HW_LOAD(api, Init, "nvmlInit_v2", "nvmlInit");
	HW_LOAD(api, Shutdown, "nvmlShutdown");
	HW_LOAD(api, ErrorString, "nvmlErrorString");
	HW_LOAD(api, SystemGetDriverVersion, "nvmlSystemGetDriverVersion");
	HW_LOAD(api, SystemGetNVMLVersion, "nvmlSystemGetNVMLVersion");
	HW_LOAD(api, SystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2",
		"nvmlSystemGetCudaDriverVersion");
	HW_LOAD(api, DeviceGetCount, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	HW_LOAD(api, DeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetHandleByIndex");
	HW_LOAD(api, DeviceGetPciInfo, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2",
		"nvmlDeviceGetPciInfo");
	HW_LOAD(api, DeviceGetName, "nvmlDeviceGetName");
	HW_LOAD(api, DeviceGetUUID, "nvmlDeviceGetUUID");
	HW_LOAD(api, DeviceGetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability");
	HW_LOAD(api, DeviceGetArchitecture, "nvmlDeviceGetArchitecture");
	HW_LOAD(api, DeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo");
	HW_LOAD(api, DeviceGetMigMode, "nvmlDeviceGetMigMode");
	HW_LOAD(api, DeviceGetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount");
	HW_LOAD(api, DeviceGetMigDeviceHandleByIndex, "nvmlDeviceGetMigDeviceHandleByIndex");
	HW_LOAD(api, DeviceGetGpuInstanceId, "nvmlDeviceGetGpuInstanceId");
	HW_LOAD(api, DeviceGetComputeInstanceId, "nvmlDeviceGetComputeInstanceId");
	HW_LOAD(api, DeviceGetNvLinkState, "nvmlDeviceGetNvLinkState");
	HW_LOAD(api, DeviceGetNvLinkRemotePciInfo, "nvmlDeviceGetNvLinkRemotePciInfo_v2",
		"nvmlDeviceGetNvLinkRemotePciInfo");
	HW_LOAD(api, DeviceGetNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType");
}

/* "NVML_ERROR_GPU_IS_LOST (GPU is lost)" */
static void errtext(const struct nvml *api, nvmlReturn_t r, char *out, size_t outsz)
{
	const char *name = gpuenv_hw_nvml_error_name(r);
	const char *text = api->ErrorString ? api->ErrorString(r) : NULL;

	if (name && text)
		snprintf(out, outsz, "%s (%s)", name, text);
	else if (name)
		snprintf(out, outsz, "%s", name);
	else
		snprintf(out, outsz, "NVML error %d%s%s%s", r, text ? " (" : "",
			text ? text : "", text ? ")" : "");
}

static const char *error_id(nvmlReturn_t r)
{
	switch (r) {
	case NVML_ERROR_GPU_IS_LOST: return "nvml-gpu-lost";
	case NVML_ERROR_NO_PERMISSION: return "nvml-no-permission";
	case NVML_ERROR_RESET_REQUIRED: return "nvml-reset-required";
	default: return "nvml-error";
	}
}

static const char *error_hint(nvmlReturn_t r)
{
	switch (r) {
	case NVML_ERROR_GPU_IS_LOST:
		return "the GPU fell off the bus: look for Xid 79 in the kernel log (dmesg), then reset the GPU (nvidia-smi -r) or reboot";
	case NVML_ERROR_NO_PERMISSION:
		return "this process may not open the GPU's /dev/nvidia* device: check its group, the container's device list or the cgroup";
	case NVML_ERROR_RESET_REQUIRED:
		return "reset the GPU (nvidia-smi -r) or reboot";
	case NVML_ERROR_OPERATING_SYSTEM:
		return "the operating system or a cgroup blocks the GPU's device file";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "load the NVIDIA kernel driver (modprobe nvidia), or install it";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return "the driver was upgraded without a reboot: reboot, or unload and reload the nvidia kernel modules";
	default:
		return NULL;
	}
}

struct run {
	gpuenv_ctx_t *ctx;
	const gpuenv_hw_opts_t *opts;
	gpuenv_arena_t *a;
	gpuenv_hw_facts_t *f;
	struct nvml api;
};

/* An error from call `what` on GPU index i (facts GPU k).  Returns 0, or
 * -ENOMEM. */
static int dev_warn(struct run *R, int k, unsigned i, const char *what, nvmlReturn_t r)
{
	char e[256];

	errtext(&R->api, r, e, sizeof(e));
	return hw_warn(R->a, R->f, k, GPUENV_HW_SRC_NVML, r, error_id(r), error_hint(r),
		"GPU %u: %s: %s", i, what, e);
}

/* Quietly "not there" answers. */
static bool absent(nvmlReturn_t r)
{
	return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND ||
		r == NVML_ERROR_INVALID_ARGUMENT;
}

static const char *dupbuf(gpuenv_arena_t *a, char *buf, size_t cap)
{
	buf[cap - 1] = '\0'; /* never trust the library to terminate */
	return hw_strdup(a, buf, strnlen(buf, cap));
}

static bool pci_bus(nvmlPciInfo_t *p, gpuenv_hw_busid_t *id)
{
	p->busId[sizeof(p->busId) - 1] = '\0';
	p->busIdLegacy[sizeof(p->busIdLegacy) - 1] = '\0';
	return gpuenv_hw_parse_bus_id(gpuenv_str(p->busId), id) ||
		gpuenv_hw_parse_bus_id(gpuenv_str(p->busIdLegacy), id);
}

/* The facts GPU for NVML index i: by bus id when known; a Jetson's
 * integrated GPU (found by sysfs.c, no PCI) is adopted. */
static int gpu_for(struct run *R, unsigned i, const gpuenv_hw_busid_t *id)
{
	gpuenv_hw_facts_t *f = R->f;
	int k = -1;

	if (id)
		for (size_t j = 0; j < f->n_gpus && k < 0; j++)
			if (f->gpus[j].bus_id[0] && f->gpus[j].pci_domain == id->domain &&
			    f->gpus[j].pci_bus == id->bus && f->gpus[j].pci_dev == id->dev &&
			    f->gpus[j].pci_fn == id->fn)
				k = (int)j;
	for (size_t j = 0; j < f->n_gpus && k < 0; j++)
		if (f->gpus[j].integrated && f->gpus[j].index < 0)
			k = (int)j;
	if (k < 0 && (k = hw_gpu_new(R->a, f)) < 0)
		return k;
	if (id && !f->gpus[k].bus_id[0])
		hw_gpu_set_bus(&f->gpus[k], id);
	f->gpus[k].index = (int)i;
	return k;
}

static int read_mig(struct run *R, int k, unsigned i, nvmlDevice_t dev)
{
	struct nvml *api = &R->api;
	gpuenv_hw_gpu_t *g = &R->f->gpus[k];
	unsigned cur = 0, pend = 0, max = 0;
	nvmlReturn_t r;
	int e;

	if (!api->DeviceGetMigMode)
		return 0;
	r = api->DeviceGetMigMode(dev, &cur, &pend);
	if (r != NVML_SUCCESS)
		return absent(r) ? 0 : dev_warn(R, k, i, "nvmlDeviceGetMigMode", r);
	g->mig_current = cur == 1;
	g->mig_pending = pend == 1;
	hw_take(g, GPUENV_HW_F_MIG, GPUENV_HW_SRC_NVML);
	if (cur != 1 || !api->DeviceGetMaxMigDeviceCount || !api->DeviceGetMigDeviceHandleByIndex)
		return 0;
	r = api->DeviceGetMaxMigDeviceCount(dev, &max);
	if (r != NVML_SUCCESS)
		return absent(r) ? 0 : dev_warn(R, k, i, "nvmlDeviceGetMaxMigDeviceCount", r);
	if (max > GPUENV_HW_MAX_MIG)
		max = GPUENV_HW_MAX_MIG;
	if (!max)
		return 0;
	gpuenv_hw_mig_t *m = gpuenv_arena_calloc(R->a, max, sizeof(*m));
	if (!m)
		return -ENOMEM;
	size_t n = 0;
	for (unsigned j = 0; j < max; j++) {
		nvmlDevice_t md = NULL;
		nvmlMemory_t mem;
		char buf[NVML_BUF];
		unsigned id;
		r = api->DeviceGetMigDeviceHandleByIndex(dev, j, &md);
		if (r == NVML_ERROR_NOT_FOUND || r == NVML_ERROR_INVALID_ARGUMENT)
			continue; /* an empty slot */
		if (r != NVML_SUCCESS) {
			if ((e = dev_warn(R, k, i, "nvmlDeviceGetMigDeviceHandleByIndex", r)) < 0)
				return e;
			if (r == NVML_ERROR_GPU_IS_LOST)
				break;
			continue;
		}
		gpuenv_hw_mig_t *x = &m[n++];
		x->index = j;
		x->gi_id = x->ci_id = -1;
		x->cuda_index = -1;
		if (api->DeviceGetUUID && api->DeviceGetUUID(md, buf, sizeof(buf)) == NVML_SUCCESS &&
		    !(x->uuid = dupbuf(R->a, buf, sizeof(buf))))
			return -ENOMEM;
		if (api->DeviceGetName && api->DeviceGetName(md, buf, sizeof(buf)) == NVML_SUCCESS &&
		    !(x->name = dupbuf(R->a, buf, sizeof(buf))))
			return -ENOMEM;
		if (api->DeviceGetMemoryInfo && api->DeviceGetMemoryInfo(md, &mem) == NVML_SUCCESS) {
			x->mem_total = mem.total;
			x->mem_free = mem.free;
		}
		if (api->DeviceGetGpuInstanceId && api->DeviceGetGpuInstanceId(md, &id) == NVML_SUCCESS &&
		    id <= 0xffff)
			x->gi_id = (int)id;
		if (api->DeviceGetComputeInstanceId &&
		    api->DeviceGetComputeInstanceId(md, &id) == NVML_SUCCESS && id <= 0xffff)
			x->ci_id = (int)id;
	}
	g = &R->f->gpus[k];
	g->mig = m;
	g->n_mig = n;
	return 0;
}

static int read_nvlink(struct run *R, int k, unsigned i, nvmlDevice_t dev)
{
	struct nvml *api = &R->api;
	gpuenv_hw_nvlink_t links[GPUENV_HW_MAX_NVLINKS];
	size_t n = 0;
	bool answered = false;
	int e;

	if (!api->DeviceGetNvLinkState)
		return 0;
	for (unsigned l = 0; l < GPUENV_HW_MAX_NVLINKS; l++) {
		unsigned st = 0;
		nvmlReturn_t r = api->DeviceGetNvLinkState(dev, l, &st);
		if (absent(r)) {
			/* no such link: the links are numbered from 0 */
			answered = true;
			break;
		}
		if (r != NVML_SUCCESS) {
			if ((e = dev_warn(R, k, i, "nvmlDeviceGetNvLinkState", r)) < 0)
				return e;
			break;
		}
		answered = true;
		gpuenv_hw_nvlink_t *x = &links[n++];
		memset(x, 0, sizeof(*x));
		x->link = l;
		x->active = st == NVML_FEATURE_ENABLED;
		x->peer_gpu = -1;
		if (!x->active)
			continue;
		nvmlPciInfo_t p;
		gpuenv_hw_busid_t id;
		memset(&p, 0, sizeof(p));
		if (api->DeviceGetNvLinkRemotePciInfo &&
		    api->DeviceGetNvLinkRemotePciInfo(dev, l, &p) == NVML_SUCCESS && pci_bus(&p, &id))
			gpuenv_hw_bus_id_str(&id, x->peer_bus_id, sizeof(x->peer_bus_id));
		unsigned type = 255;
		if (api->DeviceGetNvLinkRemoteDeviceType &&
		    api->DeviceGetNvLinkRemoteDeviceType(dev, l, &type) == NVML_SUCCESS) {
			x->peer_type = type == NVML_NVLINK_DEVICE_TYPE_GPU ? GPUENV_HW_PEER_GPU :
				type == NVML_NVLINK_DEVICE_TYPE_SWITCH ? GPUENV_HW_PEER_SWITCH :
				type == NVML_NVLINK_DEVICE_TYPE_IBMNPU ? GPUENV_HW_PEER_NPU :
				GPUENV_HW_PEER_UNKNOWN;
		}
	}
	gpuenv_hw_gpu_t *g = &R->f->gpus[k];
	if (answered)
		hw_take(g, GPUENV_HW_F_NVLINK, GPUENV_HW_SRC_NVML);
	if (!n)
		return 0;
	if (!(g->nvlink = gpuenv_arena_calloc(R->a, n, sizeof(*links))))
		return -ENOMEM;
	memcpy(g->nvlink, links, n * sizeof(*links));
	g->n_nvlink = n;
	return 0;
}

/* Everything about NVML GPU i.  Returns 0 or -ENOMEM. */
static int read_gpu(struct run *R, unsigned i)
{
	struct nvml *api = &R->api;
	nvmlDevice_t dev = NULL;
	nvmlPciInfo_t pci;
	gpuenv_hw_busid_t id;
	gpuenv_hw_gpu_t *g;
	char buf[NVML_BUF];
	nvmlReturn_t r, rp;
	bool have_id = false;
	int k, e;

	uint64_t t0 = gpuenv_trace_begin(R->ctx);
	r = api->DeviceGetHandleByIndex(i, &dev);
	gpuenv_trace_end(R->ctx, "probe", "nvml-handle", NULL, "nvmlDeviceGetHandleByIndex", t0);
	if (r != NVML_SUCCESS) {
		/* the GPU still counts: an entry with its index and the error */
		if ((k = gpu_for(R, i, NULL)) < 0)
			return k == GPUENV_ETOOBIG ? 0 : k;
		return dev_warn(R, k, i, "nvmlDeviceGetHandleByIndex", r);
	}
	memset(&pci, 0, sizeof(pci));
	rp = api->DeviceGetPciInfo ? api->DeviceGetPciInfo(dev, &pci) : NVML_ERROR_FUNCTION_NOT_FOUND;
	if (rp == NVML_SUCCESS)
		have_id = pci_bus(&pci, &id);
	if ((k = gpu_for(R, i, have_id ? &id : NULL)) < 0)
		return k == GPUENV_ETOOBIG ? 0 : k;
	g = &R->f->gpus[k];
	if (rp == NVML_SUCCESS) {
		if (hw_take(g, GPUENV_HW_F_PCI, GPUENV_HW_SRC_NVML)) {
			g->pci_device_id = pci.pciDeviceId;
			g->device_id = (uint16_t)(pci.pciDeviceId >> 16);
		}
	} else if (!absent(rp)) {
		if ((e = dev_warn(R, k, i, "nvmlDeviceGetPciInfo", rp)) < 0)
			return e;
		if (rp == NVML_ERROR_GPU_IS_LOST)
			return 0;
	}

/* one query: on failure warn (unless "not supported") and stop after a lost GPU */
#define QUERY(call, what)                                                  \
	do {                                                               \
		r = (call);                                                \
		if (r != NVML_SUCCESS && !absent(r)) {                     \
			if ((e = dev_warn(R, k, i, what, r)) < 0)          \
				return e;                                  \
			if (r == NVML_ERROR_GPU_IS_LOST)                   \
				return 0;                                  \
		}                                                          \
	} while (0)

	if (api->DeviceGetName) {
		QUERY(api->DeviceGetName(dev, buf, sizeof(buf)), "nvmlDeviceGetName");
		if (r == NVML_SUCCESS && hw_take(g, GPUENV_HW_F_NAME, GPUENV_HW_SRC_NVML) &&
		    !(g->name = dupbuf(R->a, buf, sizeof(buf))))
			return -ENOMEM;
	}
	if (api->DeviceGetUUID) {
		QUERY(api->DeviceGetUUID(dev, buf, sizeof(buf)), "nvmlDeviceGetUUID");
		if (r == NVML_SUCCESS && hw_take(g, GPUENV_HW_F_UUID, GPUENV_HW_SRC_NVML) &&
		    !(g->uuid = dupbuf(R->a, buf, sizeof(buf))))
			return -ENOMEM;
	}
	if (api->DeviceGetCudaComputeCapability) {
		int ma = -1, mi = -1;
		QUERY(api->DeviceGetCudaComputeCapability(dev, &ma, &mi),
			"nvmlDeviceGetCudaComputeCapability");
		if (r == NVML_SUCCESS && ma >= 0 && ma < 100 && mi >= 0 && mi < 100 &&
		    hw_take(g, GPUENV_HW_F_CC, GPUENV_HW_SRC_NVML)) {
			g->cc_major = ma;
			g->cc_minor = mi;
		}
	}
	if (api->DeviceGetArchitecture) {
		unsigned arch = 0;
		QUERY(api->DeviceGetArchitecture(dev, &arch), "nvmlDeviceGetArchitecture");
		if (r == NVML_SUCCESS && arch != 0xffffffffu)
			g->nvml_arch = arch;
	}
	if (api->DeviceGetMemoryInfo) {
		nvmlMemory_t mem;
		QUERY(api->DeviceGetMemoryInfo(dev, &mem), "nvmlDeviceGetMemoryInfo");
		if (r == NVML_SUCCESS && hw_take(g, GPUENV_HW_F_MEMORY, GPUENV_HW_SRC_NVML)) {
			g->mem_total = mem.total;
			g->mem_free = mem.free;
		}
	}
#undef QUERY
	/* MIG needs Ampere or newer, NVLink Pascal or newer: skip the calls
	 * on older GPUs */
	t0 = gpuenv_trace_begin(R->ctx);
	if (!(R->opts->flags & GPUENV_HW_NO_MIG) && (g->cc_major < 0 || g->cc_major >= 8) &&
	    (e = read_mig(R, k, i, dev)) < 0)
		return e;
	gpuenv_trace_end(R->ctx, "probe", "nvml-mig", NULL, NULL, t0);
	g = &R->f->gpus[k];
	t0 = gpuenv_trace_begin(R->ctx);
	if (!(R->opts->flags & GPUENV_HW_NO_NVLINK) && (g->cc_major < 0 || g->cc_major >= 6) &&
	    (e = read_nvlink(R, k, i, dev)) < 0)
		return e;
	gpuenv_trace_end(R->ctx, "probe", "nvml-nvlink", NULL, NULL, t0);
	return 0;
}

struct hw_nvml_warm {
	void *h;
	nvmlReturn_t (*Shutdown)(void);
};

hw_nvml_warm_t *hw_nvml_warm_up(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts)
{
	nvmlReturn_t (*init)(void) = NULL;
	const char *path, *msg;
	gpuenv_arena_t a;
	hw_nvml_warm_t *w;
	void *h, *f;
	int state;

	if (opts->flags & GPUENV_HW_NO_NVML)
		return NULL;
	gpuenv_arena_init(&a, ctx, 0); /* hw_dlopen's messages, not kept */
	h = hw_dlopen(ctx, opts, &a, opts->nvml_lib, "libnvidia-ml.so.1", &path, &msg, &state);
	gpuenv_arena_free(&a);
	if (!h)
		return NULL;
	if ((f = dlsym(h, "nvmlInit_v2")) || (f = dlsym(h, "nvmlInit")))
		memcpy(&init, &f, sizeof(f));
	if (!(w = gpuenv_calloc(ctx, 1, sizeof(*w))) || !init || !(f = dlsym(h, "nvmlShutdown")) ||
		init() != NVML_SUCCESS) {
		gpuenv_free(ctx, w);
		dlclose(h);
		return NULL;
	}
	memcpy(&w->Shutdown, &f, sizeof(f));
	w->h = h;
	return w;
}

void hw_nvml_warm_down(gpuenv_ctx_t *ctx, hw_nvml_warm_t *w)
{
	if (!w)
		return;
	w->Shutdown();
	dlclose(w->h);
	gpuenv_free(ctx, w);
}

int gpuenv_hw_nvml_probe(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t *facts)
{
	struct run R = { ctx, opts, arena, facts, { 0 } };
	gpuenv_hw_nvml_t *n = &facts->nvml;
	gpuenv_hw_driver_t *d = &facts->driver;
	struct nvml *api = &R.api;
	char buf[NVML_BUF], e[256];
	unsigned count = 0;
	nvmlReturn_t r;
	int cv = 0, rc = 0;

	if (opts->flags & GPUENV_HW_NO_NVML) {
		n->state = GPUENV_HW_LIB_NOT_CHECKED;
		n->message = "not loaded: disabled by the options";
		return 0;
	}
	api->h = hw_dlopen(ctx, opts, arena, opts->nvml_lib, "libnvidia-ml.so.1", &n->path,
		&n->message, &n->state);
	if (!api->h)
		return n->message ? 0 : -ENOMEM;
	load(api);
	if (!api->Init || !api->DeviceGetCount || !api->DeviceGetHandleByIndex) {
		n->state = GPUENV_HW_LIB_WRONG;
		n->message = "not NVML: nvmlInit_v2, nvmlDeviceGetCount or nvmlDeviceGetHandleByIndex is missing";
		dlclose(api->h);
		return 0;
	}
	uint64_t t0 = gpuenv_trace_begin(ctx);
	r = api->Init();
	gpuenv_trace_end(ctx, "probe", "nvml-init", NULL, "the backend's nvmlInit", t0);
	if (r != NVML_SUCCESS) {
		errtext(api, r, e, sizeof(e));
		n->state = GPUENV_HW_LIB_ERROR;
		n->error = r;
		n->message = hw_strdup(arena, e, strlen(e));
		rc = n->message ? hw_warn(arena, facts, -1, GPUENV_HW_SRC_NVML, r, "nvml-init",
					  error_hint(r), "nvmlInit failed: %s", e) : -ENOMEM;
		dlclose(api->h);
		return rc;
	}
	n->state = GPUENV_HW_LIB_OK;
	d->loaded = true;
	if (api->SystemGetDriverVersion &&
	    api->SystemGetDriverVersion(buf, sizeof(buf)) == NVML_SUCCESS) {
		if (!(d->version = dupbuf(arena, buf, sizeof(buf))))
			rc = -ENOMEM;
		d->version_src = GPUENV_HW_SRC_NVML;
	}
	if (api->SystemGetNVMLVersion && api->SystemGetNVMLVersion(buf, sizeof(buf)) == NVML_SUCCESS &&
	    !(n->version = dupbuf(arena, buf, sizeof(buf))))
		rc = -ENOMEM;
	if (api->SystemGetCudaDriverVersion && api->SystemGetCudaDriverVersion(&cv) == NVML_SUCCESS &&
	    cv > 0) {
		d->cuda_version = cv;
		d->cuda_version_src = GPUENV_HW_SRC_NVML;
	}
	r = api->DeviceGetCount(&count);
	if (r != NVML_SUCCESS) {
		errtext(api, r, e, sizeof(e));
		if (!rc)
			rc = hw_warn(arena, facts, -1, GPUENV_HW_SRC_NVML, r, "nvml-count",
				error_hint(r), "nvmlDeviceGetCount failed: %s", e);
		count = 0;
	}
	n->device_count = count;
	if (count > GPUENV_HW_MAX_GPUS && !rc)
		rc = hw_warn(arena, facts, -1, GPUENV_HW_SRC_NVML, 0, "too-many-gpus", NULL,
			"NVML lists %u GPUs: only the first %d are read", count, GPUENV_HW_MAX_GPUS);
	for (unsigned i = 0; i < count && i < GPUENV_HW_MAX_GPUS && !rc; i++)
		rc = read_gpu(&R, i);
	t0 = gpuenv_trace_begin(ctx);
	if (api->Shutdown)
		api->Shutdown();
	dlclose(api->h);
	gpuenv_trace_end(ctx, "probe", "nvml-shutdown", NULL, "the backend's nvmlShutdown", t0);
	return rc;
}
