/* Driver and GPU facts: the probe that runs the backends (sysfs.c, nvml.c,
 * cudadrv.c) and what they share: the facts arrays, file reads under
 * ctx->root, dlopen by the options' search path, CUDA_VISIBLE_DEVICES, the
 * cross-checks between sources and the overall state. */
#define _GNU_SOURCE
#include "gpuenv/fs.h"
#include "gpuenv/trace.h"
#include "hw_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	if ((r = hw_grow(a, (void **)&v->devs, cap, v->n, sizeof(*v->devs))) < 0)
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
	return r == -ENOMEM ? gpuenv_oom(a->ctx, "reading the GPUs' facts") : r;
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
				if (hw_bus_eq(&f->gpus[j], &id))
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

struct warm {
	gpuenv_ctx_t ctx; /* its own: nothing of it is reported */
	const gpuenv_hw_opts_t *opts;
	pthread_t tid;
	hw_nvml_warm_t *nvml;
};

static void *warm_thread(void *p)
{
	struct warm *w = p;
	uint64_t t0 = gpuenv_trace_begin(&w->ctx);

	gpuenv_trace_thread_name(&w->ctx, "nvml start");
	w->nvml = hw_nvml_warm_up(&w->ctx, w->opts);
	gpuenv_trace_end(&w->ctx, "probe", "nvml-init", NULL, "dlopen libnvidia-ml.so.1, nvmlInit", t0);
	return NULL;
}

int gpuenv_hw_probe_gpus(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t **out)
{
	static const struct {
		int (*probe)(gpuenv_ctx_t *, const gpuenv_hw_opts_t *, gpuenv_arena_t *,
			gpuenv_hw_facts_t *);
		const char *phase; /* its span's (--profile) */
	} backends[] = {
		{ gpuenv_hw_sysfs_probe, "sysfs" },
		{ gpuenv_hw_nvml_probe, "nvml" },
		{ gpuenv_hw_cudadrv_probe, "cuda-driver" },
	};
	gpuenv_hw_opts_t defaults;
	gpuenv_hw_facts_t *f;
	uint64_t t0;
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
	/* NVML starts on a thread of its own while sysfs is read (hw_util.h) */
	struct warm w = { .opts = opts };
	gpuenv_ctx_init(&w.ctx); /* plain memory: a test's failing allocator stays the backends' */
	w.ctx.root = ctx->root;
	w.ctx.trace = ctx->trace; /* its spans too (--profile) */
	bool warming = pthread_create(&w.tid, NULL, warm_thread, &w) == 0;
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (i == 1 && warming) { /* the NVML backend: the warm-up done first */
			t0 = gpuenv_trace_begin(ctx);
			pthread_join(w.tid, NULL);
			gpuenv_trace_end(ctx, "probe", "nvml-wait", NULL, "the NVML start's thread joined", t0);
			warming = false;
		}
		t0 = gpuenv_trace_begin(ctx);
		r = backends[i].probe(ctx, opts, arena, f);
		gpuenv_trace_end(ctx, "probe", backends[i].phase, NULL, NULL, t0);
		if (i == 1) { /* NVML's last shutdown: after the backend's */
			t0 = gpuenv_trace_begin(ctx);
			hw_nvml_warm_down(&w.ctx, w.nvml);
			gpuenv_trace_end(ctx, "probe", "nvml-shutdown", NULL, NULL, t0);
			w.nvml = NULL;
		}
		if (r < 0)
			break;
	}
	if (warming)
		pthread_join(w.tid, NULL);
	hw_nvml_warm_down(&w.ctx, w.nvml);
	if (r < 0)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "GPU probe: %s", gpuenv_strerror(r));
	if ((r = gpuenv_hw_finish(ctx, arena, f)) < 0)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "GPU probe: %s", gpuenv_strerror(r));
	*out = f;
	return 0;
}
