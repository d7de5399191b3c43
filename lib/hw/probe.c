/* The probe: runs the backends and writes the facts document
 * (docs/probe-schema.md).  Only this file knows the JSON shape. */
#define _GNU_SOURCE
#include "gpuenv/probe.h"

#include "gpuenv/facts_write.h"
#include "gpuenv/fatbin.h"
#include "gpuenv/fs.h"
#include "gpuenv/stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <time.h>
#include <unistd.h>

void gpuenv_probe_opts_init(gpuenv_probe_opts_t *opts)
{
	memset(opts, 0, sizeof(*opts));
	gpuenv_hw_opts_init(&opts->hw);
}

static int set(json_t *obj, const char *key, json_t *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_set_new(obj, key, v) ? -ENOMEM : 0;
}

/* Bytes from the machine (names, paths, messages quoting them): escaped
 * where they are not text, never dropped. */
static json_t *str_or_null(gpuenv_ctx_t *ctx, const char *s)
{
	return s ? gpuenv_json_text(ctx, s, strlen(s)) : json_null();
}

static json_t *cuda_version_json(int v)
{
	char s[16];

	if (v <= 0)
		return json_null();
	gpuenv_hw_cuda_version_str(v, s, sizeof(s));
	return json_string(s);
}

static json_t *mig_mode_json(int m)
{
	return m < 0 ? json_null() : json_string(m ? "enabled" : "disabled");
}

static json_t *gpu_json(gpuenv_ctx_t *ctx, const gpuenv_hw_facts_t *f, size_t i)
{
	static const char *const fact_names[GPUENV_HW_F_COUNT] = {
		"name", "uuid", "compute_capability", "architecture", "memory", "pci", "mig",
		"nvlink", "visible",
	};
	const gpuenv_hw_gpu_t *g = &f->gpus[i];
	json_t *o = json_object(), *mig = json_object(), *inst = json_array();
	json_t *links = json_array(), *src = json_object(), *warn = json_array();
	char buf[32];

	json_object_set_new(o, "index", g->index >= 0 ? json_integer(g->index) : json_null());
	json_object_set_new(o, "name", str_or_null(ctx, g->name));
	json_object_set_new(o, "uuid", str_or_null(ctx, g->uuid));
	if (g->cc_major >= 0) {
		snprintf(buf, sizeof(buf), "%d.%d", g->cc_major, g->cc_minor);
		json_object_set_new(o, "compute_capability", json_string(buf));
		snprintf(buf, sizeof(buf), "sm_%d%d", g->cc_major, g->cc_minor);
		json_object_set_new(o, "sm", json_string(buf));
	} else {
		json_object_set_new(o, "compute_capability", json_null());
		json_object_set_new(o, "sm", json_null());
	}
	json_object_set_new(o, "architecture", str_or_null(ctx, g->arch));
	json_object_set_new(o, "nvml_architecture",
		g->nvml_arch ? json_integer(g->nvml_arch) : json_null());
	json_object_set_new(o, "memory_total",
		g->mem_total ? json_integer((json_int_t)g->mem_total) : json_null());
	json_object_set_new(o, "memory_free",
		g->mem_free ? json_integer((json_int_t)g->mem_free) : json_null());
	json_object_set_new(o, "pci_bus_id", g->bus_id[0] ? str_or_null(ctx, g->bus_id) : json_null());
	if (g->pci_device_id) {
		snprintf(buf, sizeof(buf), "0x%08X", (unsigned)g->pci_device_id);
		json_object_set_new(o, "pci_device_id", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%04x", (unsigned)g->device_id);
		json_object_set_new(o, "device_id", json_string(buf));
	} else {
		json_object_set_new(o, "pci_device_id", json_null());
		json_object_set_new(o, "device_id", json_null());
	}
	json_object_set_new(o, "kernel_driver", str_or_null(ctx, g->driver));
	json_object_set_new(o, "integrated", json_boolean(g->integrated));
	json_object_set_new(o, "visible", json_boolean(g->visible));
	json_object_set_new(o, "cuda_index", g->cuda_index >= 0 ? json_integer(g->cuda_index) : json_null());
	json_object_set_new(mig, "current", mig_mode_json(g->mig_current));
	json_object_set_new(mig, "pending", mig_mode_json(g->mig_pending));
	for (size_t j = 0; j < g->n_mig; j++) {
		const gpuenv_hw_mig_t *m = &g->mig[j];
		json_t *x = json_object();
		json_object_set_new(x, "index", json_integer(m->index));
		json_object_set_new(x, "uuid", str_or_null(ctx, m->uuid));
		json_object_set_new(x, "name", str_or_null(ctx, m->name));
		json_object_set_new(x, "gpu_instance", m->gi_id >= 0 ? json_integer(m->gi_id) : json_null());
		json_object_set_new(x, "compute_instance", m->ci_id >= 0 ? json_integer(m->ci_id) : json_null());
		json_object_set_new(x, "memory_total", m->mem_total ? json_integer((json_int_t)m->mem_total) : json_null());
		json_object_set_new(x, "memory_free", m->mem_free ? json_integer((json_int_t)m->mem_free) : json_null());
		json_object_set_new(x, "visible", json_boolean(m->visible));
		json_object_set_new(x, "cuda_index", m->cuda_index >= 0 ? json_integer(m->cuda_index) : json_null());
		json_array_append_new(inst, x);
	}
	json_object_set_new(mig, "instances", inst);
	json_object_set_new(o, "mig", mig);
	for (size_t j = 0; j < g->n_nvlink; j++) {
		const gpuenv_hw_nvlink_t *k = &g->nvlink[j];
		json_t *x = json_object();
		json_object_set_new(x, "link", json_integer(k->link));
		json_object_set_new(x, "active", json_boolean(k->active));
		json_object_set_new(x, "peer_pci_bus_id", k->peer_bus_id[0] ? str_or_null(ctx, k->peer_bus_id) : json_null());
		json_object_set_new(x, "peer_type", k->active ? json_string(gpuenv_hw_peer_name(k->peer_type)) : json_null());
		json_object_set_new(x, "peer_gpu", k->peer_gpu >= 0 && f->gpus[k->peer_gpu].index >= 0 ?
			json_integer(f->gpus[k->peer_gpu].index) : json_null());
		json_array_append_new(links, x);
	}
	json_object_set_new(o, "nvlink", links);
	for (int k = 0; k < GPUENV_HW_F_COUNT; k++)
		if (g->src[k])
			json_object_set_new(src, fact_names[k], json_string(gpuenv_hw_src_name(g->src[k])));
	json_object_set_new(o, "sources", src);
	for (size_t k = 0; k < f->n_warnings; k++)
		if (f->warnings[k].gpu == (int)i)
			json_array_append_new(warn, str_or_null(ctx, f->warnings[k].msg));
	json_object_set_new(o, "warnings", warn);
	return o;
}

int gpuenv_probe_hw_json(gpuenv_ctx_t *ctx, const gpuenv_hw_facts_t *f, json_t *o)
{
	json_t *d = json_object(), *n = json_object(), *c = json_object();
	json_t *v = json_object(), *vis = json_array(), *devs = json_array();
	json_t *pci = json_array(), *gpus = json_array(), *warn = json_array();
	const gpuenv_hw_driver_t *dr = &f->driver;
	char buf[32];

	if (!o || !d || !n || !c || !v || !vis || !devs || !pci || !gpus || !warn) {
		json_decref(d);
		json_decref(n);
		json_decref(c);
		json_decref(v);
		json_decref(vis);
		json_decref(devs);
		json_decref(pci);
		json_decref(gpus);
		json_decref(warn);
		return -ENOMEM;
	}
	json_object_set_new(d, "state", json_string(gpuenv_hw_state_name(f->state)));
	json_object_set_new(d, "state_text", json_string(gpuenv_hw_state_text(f->state)));

	json_object_set_new(d, "loaded", json_boolean(dr->loaded));
	json_object_set_new(d, "version", str_or_null(ctx, dr->version));
	json_object_set_new(d, "version_source", dr->version ? json_string(gpuenv_hw_src_name(dr->version_src)) : json_null());
	json_object_set_new(d, "cuda_version", cuda_version_json(dr->cuda_version));
	json_object_set_new(d, "cuda_version_int", dr->cuda_version ? json_integer(dr->cuda_version) : json_null());
	json_object_set_new(d, "cuda_version_source", dr->cuda_version ? json_string(gpuenv_hw_src_name(dr->cuda_version_src)) : json_null());
	json_object_set_new(d, "kernel_module", str_or_null(ctx, dr->module_version));
	json_object_set_new(d, "flavor", str_or_null(ctx, dr->flavor));
	json_object_set_new(d, "procfs", str_or_null(ctx, dr->procfs));
	json_object_set_new(d, "procfs_version", str_or_null(ctx, dr->procfs_version));

	json_object_set_new(n, "state", json_string(gpuenv_hw_nvml_state_name(f->nvml.state)));
	json_object_set_new(n, "loaded", json_boolean(f->nvml.state == GPUENV_HW_LIB_OK));
	json_object_set_new(n, "path", str_or_null(ctx, f->nvml.path));
	json_object_set_new(n, "version", str_or_null(ctx, f->nvml.version));
	json_object_set_new(n, "error", f->nvml.state == GPUENV_HW_LIB_ERROR ?
		str_or_null(ctx, gpuenv_hw_nvml_error_name(f->nvml.error)) : json_null());
	json_object_set_new(n, "message", str_or_null(ctx, f->nvml.message));
	json_object_set_new(n, "device_count", f->nvml.state == GPUENV_HW_LIB_OK ?
		json_integer(f->nvml.device_count) : json_null());
	json_object_set_new(d, "nvml", n);

	json_object_set_new(c, "state", json_string(gpuenv_hw_libcuda_state_name(f->libcuda.state)));
	json_object_set_new(c, "path", str_or_null(ctx, f->libcuda.path));
	json_object_set_new(c, "cuda_version", cuda_version_json(f->libcuda.version));
	json_object_set_new(c, "cuda_version_int", f->libcuda.version ? json_integer(f->libcuda.version) : json_null());
	json_object_set_new(c, "error", str_or_null(ctx, f->libcuda.error_name));
	json_object_set_new(c, "message", str_or_null(ctx, f->libcuda.message));
	json_object_set_new(c, "initialized", json_boolean(f->libcuda.initialized));
	json_object_set_new(c, "device_count", f->libcuda.device_count >= 0 ? json_integer(f->libcuda.device_count) : json_null());
	json_object_set_new(d, "libcuda", c);
	json_object_set_new(o, "driver", d);

	if (f->jetson.present) {
		json_t *j = json_object();
		json_object_set_new(j, "model", str_or_null(ctx, f->jetson.model));
		json_object_set_new(j, "soc", str_or_null(ctx, f->jetson.soc));
		json_object_set_new(j, "l4t", str_or_null(ctx, f->jetson.l4t));
		json_object_set_new(j, "nvgpu", json_boolean(f->jetson.nvgpu));
		json_object_set_new(o, "jetson", j);
	} else {
		json_object_set_new(o, "jetson", json_null());
	}

	json_object_set_new(v, "set", json_boolean(f->visible.set));
	json_object_set_new(v, "value", str_or_null(ctx, f->visible.value));
	for (size_t i = 0; i < f->visible.n; i++) {
		const gpuenv_hw_visible_dev_t *x = &f->visible.devs[i];
		const gpuenv_hw_gpu_t *g = &f->gpus[x->gpu];
		json_t *e = json_object();
		json_object_set_new(e, "gpu", g->index >= 0 ? json_integer(g->index) : json_null());
		json_object_set_new(e, "mig", x->mig >= 0 ? str_or_null(ctx, g->mig[x->mig].uuid) : json_null());
		json_array_append_new(devs, e);
		if (x->mig < 0 && g->index >= 0)
			json_array_append_new(vis, json_integer(g->index));
	}
	json_object_set_new(v, "visible", vis);
	json_object_set_new(v, "devices", devs);
	json_object_set_new(v, "invalid", str_or_null(ctx, f->visible.invalid));
	json_object_set_new(v, "ambiguous_order", json_boolean(f->visible.ambiguous_order));
	json_object_set_new(o, "cuda_visible_devices", v);

	for (size_t i = 0; i < f->n_pci; i++) {
		const gpuenv_hw_pci_t *p = &f->pci[i];
		json_t *e = json_object();
		json_object_set_new(e, "bus_id", str_or_null(ctx, p->bus_id));
		snprintf(buf, sizeof(buf), "0x%04x", p->vendor);
		json_object_set_new(e, "vendor", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%04x", p->device);
		json_object_set_new(e, "device", json_string(buf));
		snprintf(buf, sizeof(buf), "0x%06x", (unsigned)p->class_code);
		json_object_set_new(e, "class", json_string(buf));
		json_object_set_new(e, "kind", json_string(p->kind == GPUENV_HW_PCI_GPU ? "gpu" :
			p->kind == GPUENV_HW_PCI_NVSWITCH ? "nvswitch" : "other"));
		json_object_set_new(e, "driver", str_or_null(ctx, p->driver));
		json_array_append_new(pci, e);
	}
	json_object_set_new(o, "pci", pci);
	for (size_t i = 0; i < f->n_gpus; i++)
		json_array_append_new(gpus, gpu_json(ctx, f, i));
	json_object_set_new(o, "gpus", gpus);
	for (size_t i = 0; i < f->n_warnings; i++) {
		const gpuenv_hw_warning_t *w = &f->warnings[i];
		json_t *e = json_object();
		json_object_set_new(e, "id", str_or_null(ctx, w->id));
		json_object_set_new(e, "message", str_or_null(ctx, w->msg));
		json_object_set_new(e, "hint", str_or_null(ctx, w->hint));
		json_object_set_new(e, "gpu", w->gpu >= 0 && f->gpus[w->gpu].index >= 0 ?
			json_integer(f->gpus[w->gpu].index) : json_null());
		json_object_set_new(e, "source", json_string(gpuenv_hw_src_name(w->src)));
		json_object_set_new(e, "code", w->code ? json_integer(w->code) : json_null());
		json_array_append_new(warn, e);
	}
	/* append to the facts' warnings (other probe parts add theirs) */
	json_t *all = json_object_get(o, "warnings");
	if (json_is_array(all)) {
		json_array_extend(all, warn);
		json_decref(warn);
	} else {
		json_object_set_new(o, "warnings", warn);
	}
	return 0;
}


static void host_json(gpuenv_ctx_t *ctx, json_t *obj)
{
	struct utsname u;
	json_t *h = json_object();
	char name[256];

	if (gethostname(name, sizeof(name)) == 0) {
		name[sizeof(name) - 1] = '\0';
		set(h, "hostname", str_or_null(ctx, name));
	}
	if (uname(&u) == 0) {
		set(h, "machine", str_or_null(ctx, u.machine));
		set(h, "kernel", str_or_null(ctx, u.release));
	}
	set(h, "root", str_or_null(ctx, ctx->root && ctx->root[0] ? ctx->root : "/"));
	/* the C library, for wheel tags (manylinux_X_Y): this process's, so
	 * only when the probe looks at the machine it runs on */
#ifdef _CS_GNU_LIBC_VERSION
	if (!ctx->root || !ctx->root[0] || !strcmp(ctx->root, "/")) {
		char lv[64];
		size_t n = confstr(_CS_GNU_LIBC_VERSION, lv, sizeof(lv));
		if (n > 6 && n <= sizeof(lv) && !strncmp(lv, "glibc ", 6)) {
			set(h, "libc", str_or_null(ctx, "glibc"));
			set(h, "libc_version", str_or_null(ctx, lv + 6));
		}
	}
#endif
	set(obj, "host", h);
}


/* The CUDA code a binary carries: distinct cubin and PTX archs. */
static json_t *cuda_code_json(gpuenv_ctx_t *ctx, const char *path)
{
	gpuenv_fatbin_t fb;
	gpuenv_fatbin_arch_t archs[128];
	json_t *o = json_object(), *cub = json_array(), *ptx = json_array();
	gpuenv_buf_t sum;
	int r;

	if (!o || !cub || !ptx) {
		json_decref(o);
		json_decref(cub);
		json_decref(ptx);
		return NULL;
	}
	gpuenv_fatbin_init(&fb, ctx);
	r = gpuenv_fatbin_open(&fb, path);
	static const struct { int kind; const char *prefix; } kinds[] = {
		{ GPUENV_FATBIN_CUBIN, "sm_" }, { GPUENV_FATBIN_PTX, "compute_" },
	};
	for (size_t k = 0; k < 2; k++) {
		size_t n = gpuenv_fatbin_archs(&fb, kinds[k].kind, archs, 128);
		for (size_t i = 0; i < n && i < 128; i++) {
			char name[32];
			snprintf(name, sizeof(name), "%s%u%s", kinds[k].prefix, archs[i].arch,
				archs[i].variant ? (char[2]){ archs[i].variant, 0 } : "");
			json_array_append_new(k == 0 ? cub : ptx, json_string(name));
		}
	}
	json_object_set_new(o, "cubins", cub);
	json_object_set_new(o, "ptx", ptx);
	json_object_set_new(o, "entries", json_integer((json_int_t)fb.n));
	gpuenv_buf_init(&sum, ctx, 4096);
	if (gpuenv_fatbin_summary(&fb, &sum) == 0 && sum.data)
		json_object_set_new(o, "summary", str_or_null(ctx, sum.data));
	gpuenv_buf_free(&sum);
	if (r) {
		char msg[600];
		gpuenv_error_format(&ctx->err, msg, sizeof(msg));
		json_object_set_new(o, "error", str_or_null(ctx, msg));
	} else {
		json_object_set_new(o, "error", json_null());
	}
	gpuenv_fatbin_free(&fb);
	return o;
}

/* ctx->root + the bytes of a path written by gpuenv_json_text; false when
 * it is no string or does not fit. */
static bool rooted_path(gpuenv_ctx_t *ctx, const json_t *j, char *out, size_t outsz)
{
	char path[4096];
	size_t n = json_string_length(j);

	if (!json_is_string(j) || n >= sizeof(path))
		return false;
	memcpy(path, json_string_value(j), n);
	n = gpuenv_text_unescape(path, n);
	path[n] = '\0';
	/* a NUL byte cannot be in a path; links resolve inside ctx->root */
	return strlen(path) == n && gpuenv_fs_resolve_in_root(ctx->root, path, out, outsz) == 0;
}

/* Toolkits, ld.so.cache, library copies, Python environments and, for each
 * framework binary, the loader's choices and the CUDA code inside. */
static int stack_part(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts, json_t *obj,
	json_t *out)
{
	gpuenv_arena_t arena;
	gpuenv_stack_opts_t so;
	gpuenv_stack_t st;
	json_t *sj, *warnings = json_object_get(obj, "warnings");
	int r;

	memset(&so, 0, sizeof(so));
	so.python = opts->python;
	so.env_dir = opts->env_dir;
	gpuenv_arena_init(&arena, ctx, 0);
	r = gpuenv_stack_probe(ctx, &arena, &so, &st);
	if (r) {
		/* an unusable --python / --env is an error (ctx->err says which
		 * path): a report without the environment that was asked for, and
		 * once without the toolkits and libraries either, would read as
		 * "nothing installed" */
		gpuenv_arena_free(&arena);
		return r;
	}
	sj = gpuenv_stack_json(ctx, &st);
	if (!sj) {
		gpuenv_arena_free(&arena);
		return -ENOMEM;
	}
	json_object_set(out, "toolkits", json_object_get(sj, "toolkits"));
	json_object_set(out, "ldcache", json_object_get(sj, "ldcache"));
	json_object_set(out, "ld_library_path", json_object_get(sj, "ld_library_path"));
	json_object_set(out, "libraries", json_object_get(sj, "libraries"));
	json_t *envs = json_object_get(sj, "python_envs");
	json_object_set(out, "environments", envs);
	for (size_t i = 0; i < st.nwarnings; i++)
		json_array_append_new(warnings, json_pack("{s:s, s:o, s:n, s:s}", "id", "stack",
			"message", gpuenv_json_text(ctx, st.warnings[i].ptr, st.warnings[i].len), "hint",
			"source", "stack"));
	if (!(opts->flags & GPUENV_PROBE_NO_FATBIN)) {
		size_t ei, fi, bi;
		json_t *env, *fw, *bin;
		json_array_foreach(envs, ei, env) {
			json_array_foreach(json_object_get(env, "frameworks"), fi, fw) {
				json_array_foreach(json_object_get(fw, "binaries"), bi, bin) {
					char full[4096];
					if (rooted_path(ctx, json_object_get(bin, "path"), full, sizeof(full)))
						json_object_set_new(bin, "cuda_code", cuda_code_json(ctx, full));
				}
			}
		}
		if (opts->flags & GPUENV_PROBE_ALL_BINARIES) {
			json_t *lib;
			json_array_foreach(json_object_get(out, "libraries"), bi, lib) {
				char full[4096];
				if (rooted_path(ctx, json_object_get(lib, "path"), full, sizeof(full)))
					json_object_set_new(lib, "cuda_code", cuda_code_json(ctx, full));
			}
		}
	}
	json_decref(sj);
	gpuenv_arena_free(&arena);
	return 0;
}

/* The driver/GPU backends run in a thread of their own: NVML's init is
 * mostly waiting on the kernel driver (about 20 ms on an H200), and the
 * software-stack probe (file reads) fits inside that wait. */
struct hw_job {
	gpuenv_ctx_t ctx; /* a copy: its err must not race the main thread's */
	gpuenv_hw_opts_t opts;
	gpuenv_arena_t arena;
	gpuenv_hw_facts_t *facts;
	int r;
};

static void *hw_thread(void *p)
{
	struct hw_job *j = p;

	j->r = gpuenv_hw_probe_gpus(&j->ctx, &j->opts, &j->arena, &j->facts);
	return NULL;
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
	if ((r = gpuenv_fs_check_root(ctx)) != 0)
		return r;
	obj = json_object();
	if (!obj)
		return -ENOMEM;
	set(obj, "schema", json_string(GPUENV_FACTS_SCHEMA));
	set(obj, "gpuenv", str_or_null(ctx, opts->version));
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	set(obj, "taken_at", json_string(when));
	host_json(ctx, obj);
	set(obj, "warnings", json_array());

	struct hw_job job;
	pthread_t tid;
	bool threaded;
	json_t *sobj = json_object();

	memset(&job, 0, sizeof(job));
	job.ctx = *ctx;
	job.opts = opts->hw;
	if (opts->flags & GPUENV_PROBE_DEEP)
		job.opts.flags |= GPUENV_HW_DEEP;
	gpuenv_arena_init(&job.arena, &job.ctx, 0);
	threaded = pthread_create(&tid, NULL, hw_thread, &job) == 0;
	if (!threaded)
		hw_thread(&job);
	r = 0;
	if (!sobj)
		r = -ENOMEM;
	else if (!(opts->flags & GPUENV_PROBE_NO_LIBS))
		r = stack_part(ctx, opts, obj, sobj);
	if (threaded)
		pthread_join(tid, NULL);
	if (job.r) {
		ctx->err = job.ctx.err;
		if (!r)
			r = job.r;
	}
	if (!r)
		r = gpuenv_probe_hw_json(ctx, job.facts, obj);
	gpuenv_arena_free(&job.arena);
	if (!r && json_object_update(obj, sobj))
		r = -ENOMEM;
	json_decref(sobj);
	if (r) {
		json_decref(obj);
		return r;
	}
	set(obj, "probe_ms", json_real(mono_ms() - t0));
	*out = obj;
	return 0;
}
