/* The probe: runs the backends and writes the facts document
 * (docs/probe-schema.md).  Only this file knows the JSON shape. */
#define _GNU_SOURCE
#include "gpuenv/probe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

void gpuenv_probe_opts_init(gpuenv_probe_opts_t *opts)
{
	memset(opts, 0, sizeof(*opts));
	gpuenv_hw_opts_init(&opts->hw);
}

/* json_string(NULL) is NULL, and json_object_set_new(NULL) fails: write
 * JSON null for unknown strings instead. */
static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jstr_nonempty(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

static int set(json_t *obj, const char *key, json_t *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_set_new(obj, key, v) ? -ENOMEM : 0;
}

static int push(json_t *arr, json_t *v)
{
	if (!v)
		return -ENOMEM;
	return json_array_append_new(arr, v) ? -ENOMEM : 0;
}

static json_t *cc_json(int major, int minor)
{
	char b[32];

	if (major < 0)
		return json_null();
	snprintf(b, sizeof(b), "%d.%d", major, minor < 0 ? 0 : minor);
	return json_string(b);
}

static json_t *sm_json(int major, int minor)
{
	char b[32];

	if (major < 0)
		return json_null();
	snprintf(b, sizeof(b), "sm_%d%d", major, minor < 0 ? 0 : minor);
	return json_string(b);
}

static json_t *hex_json(unsigned long v, int digits)
{
	char b[24];

	if (!v)
		return json_null();
	snprintf(b, sizeof(b), "0x%0*lX", digits, v);
	return json_string(b);
}

static const char *mig_mode(int m)
{
	return m > 0 ? "enabled" : m == 0 ? "disabled" : "unsupported";
}

static json_t *gpu_json(const gpuenv_hw_facts_t *f, const gpuenv_hw_gpu_t *g)
{
	static const char *const fact_names[GPUENV_HW_F_COUNT] = {
		"name", "uuid", "compute_capability", "architecture", "memory",
		"pci", "mig", "nvlink", "visible",
	};
	json_t *o = json_object(), *mig, *links, *src, *w;
	char b[32];

	if (!o)
		return NULL;
	set(o, "index", g->index >= 0 ? json_integer(g->index) : json_null());
	set(o, "name", jstr(g->name));
	set(o, "uuid", jstr(g->uuid));
	set(o, "compute_capability", cc_json(g->cc_major, g->cc_minor));
	set(o, "sm", sm_json(g->cc_major, g->cc_minor));
	set(o, "architecture", jstr(g->arch));
	set(o, "memory_total", g->mem_total ? json_integer((json_int_t)g->mem_total) : json_null());
	set(o, "memory_free", g->mem_free ? json_integer((json_int_t)g->mem_free) : json_null());
	set(o, "pci_bus_id", jstr_nonempty(g->bus_id));
	if (g->pci_device_id) {
		snprintf(b, sizeof(b), "0x%08X", (unsigned)g->pci_device_id);
		set(o, "pci_device_id", json_string(b));
	} else {
		set(o, "pci_device_id", json_null());
	}
	set(o, "device_id", hex_json(g->device_id, 4));
	set(o, "kernel_driver", jstr(g->driver));
	set(o, "integrated", json_boolean(g->integrated));
	set(o, "visible", json_boolean(g->visible));
	set(o, "cuda_index", g->cuda_index >= 0 ? json_integer(g->cuda_index) : json_null());

	mig = json_object();
	set(mig, "current", json_string(mig_mode(g->mig_current)));
	set(mig, "pending", json_string(mig_mode(g->mig_pending)));
	json_t *inst = json_array();
	for (size_t i = 0; i < g->n_mig; i++) {
		const gpuenv_hw_mig_t *m = &g->mig[i];
		json_t *mo = json_object();
		set(mo, "index", json_integer(m->index));
		set(mo, "uuid", jstr(m->uuid));
		set(mo, "name", jstr(m->name));
		set(mo, "gpu_instance", m->gi_id >= 0 ? json_integer(m->gi_id) : json_null());
		set(mo, "compute_instance", m->ci_id >= 0 ? json_integer(m->ci_id) : json_null());
		set(mo, "memory_total", m->mem_total ? json_integer((json_int_t)m->mem_total) : json_null());
		set(mo, "visible", json_boolean(m->visible));
		set(mo, "cuda_index", m->cuda_index >= 0 ? json_integer(m->cuda_index) : json_null());
		push(inst, mo);
	}
	set(mig, "instances", inst);
	set(o, "mig", mig);

	links = json_array();
	for (size_t i = 0; i < g->n_nvlink; i++) {
		const gpuenv_hw_nvlink_t *l = &g->nvlink[i];
		json_t *lo = json_object();
		set(lo, "link", json_integer(l->link));
		set(lo, "active", json_boolean(l->active));
		set(lo, "peer_pci_bus_id", jstr_nonempty(l->peer_bus_id));
		set(lo, "peer_type", json_string(gpuenv_hw_peer_name(l->peer_type)));
		set(lo, "peer_gpu", l->peer_gpu >= 0 ? json_integer(l->peer_gpu) : json_null());
		push(links, lo);
	}
	set(o, "nvlink", links);

	src = json_object();
	for (int i = 0; i < GPUENV_HW_F_COUNT; i++)
		if (g->src[i])
			set(src, fact_names[i], json_string(gpuenv_hw_src_name(g->src[i])));
	set(o, "source", src);

	w = json_array();
	for (size_t i = 0; i < f->n_warnings; i++) {
		const gpuenv_hw_warning_t *x = &f->warnings[i];
		if (x->gpu >= 0 && &f->gpus[x->gpu] == g)
			push(w, json_string(x->msg));
	}
	set(o, "warnings", w);
	return o;
}

int gpuenv_probe_hw_json(const gpuenv_hw_facts_t *f, json_t *obj)
{
	json_t *drv = json_object(), *nvml = json_object(), *cuda = json_object();
	json_t *vis = json_object(), *pci = json_array(), *gpus = json_array();
	json_t *warnings = json_object_get(obj, "warnings");
	char b[32];

	if (!drv || !nvml || !cuda || !vis || !pci || !gpus)
		goto nomem;
	set(drv, "state", json_string(gpuenv_hw_state_name(f->state)));
	set(drv, "state_text", json_string(gpuenv_hw_state_text(f->state)));
	set(drv, "loaded", json_boolean(f->driver.loaded));
	set(drv, "version", jstr(f->driver.version));
	set(drv, "version_source", f->driver.version ? json_string(gpuenv_hw_src_name(f->driver.version_src)) : json_null());
	gpuenv_hw_cuda_version_str(f->driver.cuda_version, b, sizeof(b));
	set(drv, "cuda_version", jstr_nonempty(b));
	set(drv, "cuda_version_int", f->driver.cuda_version ? json_integer(f->driver.cuda_version) : json_null());
	set(drv, "cuda_version_source", f->driver.cuda_version ? json_string(gpuenv_hw_src_name(f->driver.cuda_version_src)) : json_null());
	set(drv, "kernel_module", jstr(f->driver.module_version));
	set(drv, "flavor", jstr(f->driver.flavor));
	set(drv, "procfs", jstr(f->driver.procfs));

	set(nvml, "state", json_string(gpuenv_hw_nvml_state_name(f->nvml.state)));
	set(nvml, "path", jstr(f->nvml.path));
	set(nvml, "version", jstr(f->nvml.version));
	set(nvml, "message", jstr(f->nvml.message));
	set(drv, "nvml", nvml);

	set(cuda, "state", json_string(gpuenv_hw_libcuda_state_name(f->libcuda.state)));
	set(cuda, "path", jstr(f->libcuda.path));
	gpuenv_hw_cuda_version_str(f->libcuda.version, b, sizeof(b));
	set(cuda, "cuda_version", jstr_nonempty(b));
	set(cuda, "error", jstr(f->libcuda.error_name));
	set(cuda, "message", jstr(f->libcuda.message));
	set(cuda, "initialized", json_boolean(f->libcuda.initialized));
	set(cuda, "device_count", f->libcuda.device_count >= 0 ? json_integer(f->libcuda.device_count) : json_null());
	set(drv, "libcuda", cuda);
	if (set(obj, "driver", drv))
		goto nomem_obj;

	if (f->jetson.present) {
		json_t *j = json_object();
		set(j, "model", jstr(f->jetson.model));
		set(j, "soc", jstr(f->jetson.soc));
		set(j, "l4t", jstr(f->jetson.l4t));
		set(j, "nvgpu", json_boolean(f->jetson.nvgpu));
		set(obj, "jetson", j);
	} else {
		set(obj, "jetson", json_null());
	}

	set(vis, "set", json_boolean(f->visible.set));
	set(vis, "value", jstr(f->visible.value));
	set(vis, "invalid_entry", jstr(f->visible.invalid));
	set(vis, "ambiguous_order", json_boolean(f->visible.ambiguous_order));
	json_t *devs = json_array();
	for (size_t i = 0; i < f->visible.n; i++) {
		json_t *d = json_object();
		const gpuenv_hw_visible_dev_t *v = &f->visible.devs[i];
		set(d, "gpu", json_integer(v->gpu));
		set(d, "mig", v->mig >= 0 ? json_integer(v->mig) : json_null());
		push(devs, d);
	}
	set(vis, "devices", devs);
	set(obj, "cuda_visible_devices", vis);

	for (size_t i = 0; i < f->n_pci; i++) {
		const gpuenv_hw_pci_t *p = &f->pci[i];
		json_t *po = json_object();
		static const char *const kinds[] = { "other", "gpu", "nvswitch" };
		set(po, "bus_id", json_string(p->bus_id));
		set(po, "vendor", hex_json(p->vendor, 4));
		set(po, "device", hex_json(p->device, 4));
		set(po, "class", hex_json(p->class_code, 6));
		set(po, "kind", json_string(kinds[p->kind >= 0 && p->kind <= 2 ? p->kind : 0]));
		set(po, "driver", jstr(p->driver));
		push(pci, po);
	}
	set(obj, "pci", pci);

	for (size_t i = 0; i < f->n_gpus; i++)
		if (push(gpus, gpu_json(f, &f->gpus[i])))
			goto nomem_obj;
	set(obj, "gpus", gpus);

	if (warnings) {
		for (size_t i = 0; i < f->n_warnings; i++) {
			const gpuenv_hw_warning_t *x = &f->warnings[i];
			json_t *w = json_object();
			set(w, "id", jstr(x->id));
			set(w, "message", jstr(x->msg));
			set(w, "hint", jstr(x->hint));
			set(w, "source", json_string(gpuenv_hw_src_name(x->src)));
			set(w, "gpu", x->gpu >= 0 ? json_integer(x->gpu) : json_null());
			push(warnings, w);
		}
	}
	return 0;
nomem:
	json_decref(drv);
	json_decref(nvml);
	json_decref(cuda);
	json_decref(vis);
	json_decref(pci);
	json_decref(gpus);
	return -ENOMEM;
nomem_obj:
	return -ENOMEM;
}

static void host_json(gpuenv_ctx_t *ctx, json_t *obj)
{
	struct utsname u;
	json_t *h = json_object();
	char name[256];

	if (gethostname(name, sizeof(name)) == 0) {
		name[sizeof(name) - 1] = '\0';
		set(h, "hostname", json_string(name));
	}
	if (uname(&u) == 0) {
		set(h, "machine", json_string(u.machine));
		set(h, "kernel", json_string(u.release));
	}
	set(h, "root", json_string(ctx->root && ctx->root[0] ? ctx->root : "/"));
	set(obj, "host", h);
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int gpuenv_probe_facts_json(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts, json_t **out)
{
	gpuenv_probe_opts_t defaults;
	gpuenv_arena_t arena;
	gpuenv_hw_facts_t *hw = NULL;
	gpuenv_hw_opts_t hwo;
	json_t *obj;
	double t0 = mono_ms();
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int r;

	if (!opts) {
		gpuenv_probe_opts_init(&defaults);
		opts = &defaults;
	}
	obj = json_object();
	if (!obj)
		return -ENOMEM;
	set(obj, "schema", json_string(GPUENV_FACTS_SCHEMA));
	set(obj, "gpuenv", jstr(opts->version));
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	set(obj, "taken_at", json_string(when));
	host_json(ctx, obj);
	set(obj, "warnings", json_array());

	gpuenv_arena_init(&arena, ctx, 0);
	hwo = opts->hw;
	if (opts->flags & GPUENV_PROBE_DEEP)
		hwo.flags |= GPUENV_HW_DEEP;
	r = gpuenv_hw_probe_gpus(ctx, &hwo, &arena, &hw);
	if (!r)
		r = gpuenv_probe_hw_json(hw, obj);
	gpuenv_arena_free(&arena);
	if (r) {
		json_decref(obj);
		return r;
	}
	set(obj, "probe_ms", json_real(mono_ms() - t0));
	*out = obj;
	return 0;
}
