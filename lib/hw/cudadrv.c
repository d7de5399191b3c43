/* The CUDA driver backend: libcuda.so.1 through dlopen, as a cross-check of
 * NVML and a fallback without it.
 *
 * cuDriverGetVersion needs no cuInit and costs a dlopen (about 1.5 ms with
 * the real driver, nothing once NVML has loaded it); it also tells the
 * toolkit's link stub (lib64/stubs/libcuda.so, which answers every call with
 * CUDA_ERROR_STUB_LIBRARY) from a driver.  cuInit costs about 200 ms with a
 * GPU, so device queries run only with GPUENV_HW_DEEP, or when NVML is
 * unusable while a GPU or a loaded driver is there.
 *
 * Types, constants and signatures are declared here from NVIDIA's public
 * CUDA driver API reference (docs.nvidia.com/cuda/cuda-driver-api); every
 * symbol is looked up with dlsym. */
#include "hw_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- the CUDA driver API, as documented ------------------------------------ */
typedef int CUresult;
typedef int CUdevice;
typedef struct {
	unsigned char bytes[16];
} CUuuid;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
	CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
};

/* CUdevice_attribute */
enum {
	CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
	CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
	CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
};

struct cuda {
	void *h;
	CUresult (*DriverGetVersion)(int *);
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*GetErrorName)(CUresult, const char **);
};


static void load(struct cuda *api)
{
	HW_LOAD(api, DriverGetVersion, "cuDriverGetVersion");
	HW_LOAD(api, Init, "cuInit");
	HW_LOAD(api, DeviceGetCount, "cuDeviceGetCount");
	HW_LOAD(api, DeviceGet, "cuDeviceGet");
	HW_LOAD(api, DeviceGetAttribute, "cuDeviceGetAttribute");
	HW_LOAD(api, DeviceGetName, "cuDeviceGetName");
	HW_LOAD(api, DeviceTotalMem, "cuDeviceTotalMem_v2");
	/* _v2 gives a MIG device's own UUID */
	HW_LOAD(api, DeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
	HW_LOAD(api, GetErrorName, "cuGetErrorName");
}

/* "CUDA_ERROR_NO_DEVICE"; our table first (the stub's cuGetErrorName fails
 * too), then the library's. */
static const char *errname(const struct cuda *api, CUresult r, gpuenv_arena_t *a)
{
	const char *n = gpuenv_hw_cuda_error_name(r), *ln = NULL;
	char buf[32];

	if (n)
		return n;
	if (api->GetErrorName && api->GetErrorName(r, &ln) == CUDA_SUCCESS && ln)
		return hw_strdup(a, ln, strnlen(ln, 128));
	snprintf(buf, sizeof(buf), "CUresult %d", r);
	return hw_strdup(a, buf, strlen(buf));
}

static const char *init_hint(CUresult r)
{
	switch (r) {
	case CUDA_ERROR_NO_DEVICE:
		return "no CUDA device is visible to this process: check CUDA_VISIBLE_DEVICES and the container's GPU access";
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
		return "libcuda.so.1 and the kernel module come from different driver versions: reinstall the driver or reboot";
	case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
		return "the forward-compatibility libcuda (cuda-compat) does not support this GPU: remove it from the library path";
	default:
		return NULL;
	}
}

static void uuid_str(const CUuuid *u, const char *prefix, char *out, size_t outsz)
{
	const unsigned char *b = u->bytes;

	snprintf(out, outsz,
		"%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix,
		b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		b[13], b[14], b[15]);
}

static bool uuid_is(const char *have, const char *want_hex)
{
	/* have: "GPU-<hex>" or "MIG-<hex>"; want_hex: "<hex>" */
	return have && strlen(have) > 4 && strcasecmp(have + 4, want_hex) == 0;
}

/* One CUDA ordinal: matched to a facts GPU (or MIG device) by UUID, then by
 * PCI bus id; facts NVML did not give are filled in. */
static int read_device(const struct cuda *api, gpuenv_arena_t *a, gpuenv_hw_facts_t *f,
	int ord)
{
	CUdevice dev = 0;
	CUuuid u;
	char hex[64] = "", buf[256];
	int dom = -1, bus = -1, pdev = -1, ma = -1, mi = -1, integ = 0, k = -1, mig = -1;
	size_t mem = 0;

	if (api->DeviceGet(&dev, ord) != CUDA_SUCCESS)
		return 0;
	if (api->DeviceGetUuid && api->DeviceGetUuid(&u, dev) == CUDA_SUCCESS)
		uuid_str(&u, "", hex, sizeof(hex));
	if (api->DeviceGetAttribute) {
		api->DeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev);
		api->DeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
		api->DeviceGetAttribute(&pdev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
		api->DeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
		api->DeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
		api->DeviceGetAttribute(&integ, CU_DEVICE_ATTRIBUTE_INTEGRATED, dev);
	}
	for (size_t i = 0; hex[0] && i < f->n_gpus && k < 0; i++) {
		gpuenv_hw_gpu_t *g = &f->gpus[i];
		if (uuid_is(g->uuid, hex))
			k = (int)i;
		for (size_t j = 0; j < g->n_mig && k < 0; j++)
			if (uuid_is(g->mig[j].uuid, hex)) {
				k = (int)i;
				mig = (int)j;
			}
	}
	if (k < 0 && integ) {
		for (size_t i = 0; i < f->n_gpus && k < 0; i++)
			if (f->gpus[i].integrated)
				k = (int)i;
	}
	if (k < 0 && !integ && dom >= 0 && bus >= 0 && bus <= 0xff && pdev >= 0 && pdev <= 0x1f) {
		gpuenv_hw_busid_t id = { (uint32_t)dom, (uint8_t)bus, (uint8_t)pdev, 0 };
		k = hw_gpu_by_bus(a, f, &id);
	}
	if (k < 0 && (k = hw_gpu_new(a, f)) >= 0)
		f->gpus[k].integrated = integ != 0;
	if (k < 0)
		return k == GPUENV_ETOOBIG ? 0 : k;

	gpuenv_hw_gpu_t *g = &f->gpus[k];
	if (mig >= 0) {
		g->mig[mig].cuda_index = ord;
	} else {
		g->cuda_index = ord;
		if (hex[0] && hw_take(g, GPUENV_HW_F_UUID, GPUENV_HW_SRC_LIBCUDA)) {
			snprintf(buf, sizeof(buf), "GPU-%s", hex);
			if (!(g->uuid = hw_strdup(a, buf, strlen(buf))))
				return -ENOMEM;
		}
	}
	g->src[GPUENV_HW_F_VISIBLE] = GPUENV_HW_SRC_LIBCUDA;
	if (ma >= 0 && ma < 100 && mi >= 0 && mi < 100 && hw_take(g, GPUENV_HW_F_CC, GPUENV_HW_SRC_LIBCUDA)) {
		g->cc_major = ma;
		g->cc_minor = mi;
	}
	if (mig < 0 && api->DeviceGetName && api->DeviceGetName(buf, (int)sizeof(buf), dev) == CUDA_SUCCESS &&
	    hw_take(g, GPUENV_HW_F_NAME, GPUENV_HW_SRC_LIBCUDA)) {
		buf[sizeof(buf) - 1] = '\0';
		if (!(g->name = hw_strdup(a, buf, strlen(buf))))
			return -ENOMEM;
	}
	if (mig < 0 && !g->integrated && api->DeviceTotalMem &&
	    api->DeviceTotalMem(&mem, dev) == CUDA_SUCCESS &&
	    hw_take(g, GPUENV_HW_F_MEMORY, GPUENV_HW_SRC_LIBCUDA))
		g->mem_total = mem;
	return 0;
}

/* cuInit and the devices.  Returns 0 or -ENOMEM. */
static int deep(const struct cuda *api, gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	gpuenv_hw_libcuda_t *c = &f->libcuda;
	CUresult r;
	int count = 0, e;

	if (!api->Init || !api->DeviceGetCount || !api->DeviceGet)
		return 0;
	r = api->Init(0);
	if (r == CUDA_ERROR_STUB_LIBRARY) {
		c->state = GPUENV_HW_LIB_STUB;
		c->error = r;
		c->error_name = "CUDA_ERROR_STUB_LIBRARY";
		c->message = "toolkit stub, not a driver";
		return 0;
	}
	if (r != CUDA_SUCCESS) {
		c->error = r;
		if (!(c->error_name = errname(api, r, a)))
			return -ENOMEM;
		return hw_warn(a, f, -1, GPUENV_HW_SRC_LIBCUDA, r, "libcuda-init", init_hint(r),
			"cuInit failed: %s", c->error_name);
	}
	c->initialized = true;
	if (api->DeviceGetCount(&count) != CUDA_SUCCESS || count < 0)
		count = 0;
	c->device_count = count;
	for (int i = 0; i < count && i < GPUENV_HW_MAX_VISIBLE; i++)
		if ((e = read_device(api, a, f, i)) < 0)
			return e;
	return 0;
}

int gpuenv_hw_cudadrv_probe(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t *facts)
{
	gpuenv_hw_libcuda_t *c = &facts->libcuda;
	struct cuda api = { 0 };
	bool gpu_seen = facts->jetson.present, want_deep;
	CUresult r;
	int v = 0;

	if (opts->flags & GPUENV_HW_NO_LIBCUDA) {
		c->state = GPUENV_HW_LIB_NOT_CHECKED;
		c->message = "not loaded: disabled by the options";
		return 0;
	}
	api.h = hw_dlopen(ctx, opts, arena, opts->cuda_lib, "libcuda.so.1", &c->path,
		&c->message, &c->state);
	if (!api.h)
		return c->message ? 0 : -ENOMEM;
	load(&api);
	if (!api.DriverGetVersion) {
		c->state = GPUENV_HW_LIB_WRONG;
		c->message = "not libcuda: cuDriverGetVersion is missing";
		dlclose(api.h);
		return 0;
	}
	r = api.DriverGetVersion(&v);
	if (r == CUDA_ERROR_STUB_LIBRARY) {
		c->state = GPUENV_HW_LIB_STUB;
		c->error = r;
		c->error_name = "CUDA_ERROR_STUB_LIBRARY";
		c->message = "toolkit stub, not a driver";
		dlclose(api.h);
		return 0;
	}
	if (r != CUDA_SUCCESS || v <= 0) {
		c->state = GPUENV_HW_LIB_ERROR;
		c->error = r;
		if (!(c->error_name = errname(&api, r, arena)))
			return -ENOMEM;
		c->message = "cuDriverGetVersion failed";
		dlclose(api.h);
		return 0;
	}
	c->state = GPUENV_HW_LIB_OK;
	c->version = v;
	if (!facts->driver.cuda_version) {
		facts->driver.cuda_version = v;
		facts->driver.cuda_version_src = GPUENV_HW_SRC_LIBCUDA;
	}
	for (size_t i = 0; i < facts->n_pci; i++)
		if (facts->pci[i].kind == GPUENV_HW_PCI_GPU)
			gpu_seen = true;
	want_deep = (opts->flags & GPUENV_HW_DEEP) ||
		((facts->nvml.state != GPUENV_HW_LIB_OK || !facts->nvml.device_count) &&
		 (gpu_seen || facts->driver.loaded));
	if (!want_deep) {
		dlclose(api.h);
		return 0;
	}
	/* no dlclose once cuInit was called: the driver may have started
	 * threads that run its code; the handle stays open for the process */
	return deep(&api, arena, facts);
}
