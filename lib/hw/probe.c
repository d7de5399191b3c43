/* The probe: runs the backends and fills gpuenv_facts_t (the typed facts,
 * include/gpuenv/facts.h) from their structs; lib/facts/write.c writes the
 * document (docs/probe-schema.md) from that struct.  Bytes from the machine
 * are escaped here, once, as "Strings" says: the facts hold text. */
#define _GNU_SOURCE
#include "gpuenv/probe.h"

#include "gpuenv/facts.h"
#include "gpuenv/facts_write.h"
#include "gpuenv/fatbin.h"
#include "gpuenv/fs.h"
#include "gpuenv/stack.h"
#include "gpuenv/trace.h"

#include "hw_util.h"

#include <dirent.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
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


/* The facts being filled: every string copied into the caller's arena as
 * text (bytes that are not escaped, docs/probe-schema.md "Strings"). */
typedef struct fill {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	int err; /* -ENOMEM once memory ran out */
} fill_t;

static const char *text(fill_t *F, const char *s, size_t n)
{
	gpuenv_buf_t b;
	char *out;

	if (!s)
		return NULL;
	if (gpuenv_text_valid(s, n, 0)) {
		out = gpuenv_arena_strndup(F->a, s, n);
	} else {
		gpuenv_buf_init(&b, F->ctx, 0);
		out = gpuenv_text_escape(&b, s, n, 0) < 0 ? NULL
			: gpuenv_arena_strndup(F->a, b.data ? b.data : "", b.len);
		gpuenv_buf_free(&b);
	}
	if (!out)
		F->err = -ENOMEM;
	return out;
}

static const char *cstr(fill_t *F, const char *s)
{
	return s ? text(F, s, strlen(s)) : NULL;
}

static const char *sstr(fill_t *F, gpuenv_str_t s)
{
	return s.ptr ? text(F, s.ptr, s.len) : NULL;
}

static const char *fmt(fill_t *F, const char *f, ...) GPUENV_PRINTF(2, 3);
static const char *fmt(fill_t *F, const char *f, ...)
{
	va_list ap;
	gpuenv_str_t s;

	va_start(ap, f);
	s = gpuenv_arena_vprintf(F->a, f, ap);
	va_end(ap);
	if (!s.ptr)
		F->err = -ENOMEM;
	return s.ptr;
}

static void *calloc_n(fill_t *F, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	if (!(p = gpuenv_arena_calloc(F->a, n, size)))
		F->err = -ENOMEM;
	return p;
}

static gpuenv_facts_strs_t strs_of(fill_t *F, const gpuenv_str_t *v, size_t n)
{
	gpuenv_facts_strs_t out = { NULL, 0, GPUENV_FACT_SET };
	const char **items = calloc_n(F, n, sizeof(*items));

	for (size_t i = 0; items && i < n; i++)
		items[i] = sstr(F, v[i]);
	out.items = items;
	out.n = items ? n : 0;
	return out;
}

/* The names of the bits set, in bit order. */
static gpuenv_facts_strs_t bits_of(fill_t *F, unsigned bits, const char *const *names, size_t n)
{
	gpuenv_facts_strs_t out = { NULL, 0, GPUENV_FACT_SET };
	const char **items = calloc_n(F, n, sizeof(*items));

	for (size_t i = 0; items && i < n; i++)
		if (bits & (1u << i))
			items[out.n++] = names[i];
	out.items = items;
	return out;
}

static gpuenv_facts_ver_t ver_of(fill_t *F, const gpuenv_stack_version_t *v)
{
	gpuenv_facts_ver_t out = { NULL, NULL, NULL };

	if (v->text.ptr) {
		out.version = sstr(F, v->text);
		out.source = gpuenv_vsrc_name(v->src);
		out.from = sstr(F, v->origin);
	}
	return out;
}

static gpuenv_tri_t tri(bool b)
{
	return b ? GPUENV_TRI_TRUE : GPUENV_TRI_FALSE;
}

/* ---- driver and GPUs ---------------------------------------------------- */

static const char *cuda_version_text(fill_t *F, int v)
{
	char s[16];

	if (v <= 0)
		return NULL;
	gpuenv_hw_cuda_version_str(v, s, sizeof(s));
	return cstr(F, s);
}

static const char *mig_mode(int m)
{
	return m < 0 ? NULL : m ? "enabled" : "disabled";
}

/* The NVML index of gpus[i], or -1. */
static long long nvml_index(const gpuenv_hw_facts_t *h, int i)
{
	return i >= 0 && h->gpus[i].index >= 0 ? h->gpus[i].index : -1;
}

static void fill_gpu(fill_t *F, const gpuenv_hw_facts_t *h, size_t i, gpuenv_facts_gpu_t *o)
{
	static const char *const fact_names[GPUENV_HW_F_COUNT] = {
		"name", "uuid", "compute_capability", "architecture", "memory", "pci", "mig",
		"nvlink", "visible",
	};
	const gpuenv_hw_gpu_t *g = &h->gpus[i];
	gpuenv_facts_mig_instance_t *mig = calloc_n(F, g->n_mig, sizeof(*mig));
	gpuenv_facts_nvlink_t *links = calloc_n(F, g->n_nvlink, sizeof(*links));
	gpuenv_facts_kv_t *src = calloc_n(F, GPUENV_HW_F_COUNT, sizeof(*src));
	const char **warn = calloc_n(F, h->n_warnings, sizeof(*warn));

	o->index = g->index >= 0 ? g->index : -1;
	o->at = i;
	o->name = cstr(F, g->name);
	o->uuid = cstr(F, g->uuid);
	if (g->cc_major >= 0) {
		o->compute_capability = fmt(F, "%d.%d", g->cc_major, g->cc_minor);
		o->sm = fmt(F, "sm_%d%d", g->cc_major, g->cc_minor);
	}
	o->architecture = cstr(F, g->arch);
	o->nvml_architecture = g->nvml_arch ? (long long)g->nvml_arch : -1;
	o->memory_total = g->mem_total ? (long long)g->mem_total : -1;
	o->memory_free = g->mem_free ? (long long)g->mem_free : -1;
	o->pci_bus_id = g->bus_id[0] ? cstr(F, g->bus_id) : NULL;
	if (g->pci_device_id) {
		o->pci_device_id = fmt(F, "0x%08X", (unsigned)g->pci_device_id);
		o->device_id = fmt(F, "0x%04x", (unsigned)g->device_id);
	}
	o->kernel_driver = cstr(F, g->driver);
	o->integrated = tri(g->integrated);
	o->visible = tri(g->visible);
	o->cuda_index = g->cuda_index >= 0 ? g->cuda_index : -1;
	o->have_mig = true;
	o->mig_current = mig_mode(g->mig_current);
	o->mig_pending = mig_mode(g->mig_pending);
	for (size_t j = 0; mig && j < g->n_mig; j++) {
		const gpuenv_hw_mig_t *m = &g->mig[j];
		mig[j].index = m->index;
		mig[j].uuid = cstr(F, m->uuid);
		mig[j].name = cstr(F, m->name);
		mig[j].gpu_instance = m->gi_id >= 0 ? m->gi_id : -1;
		mig[j].compute_instance = m->ci_id >= 0 ? m->ci_id : -1;
		mig[j].memory_total = m->mem_total ? (long long)m->mem_total : -1;
		mig[j].memory_free = m->mem_free ? (long long)m->mem_free : -1;
		mig[j].visible = tri(m->visible);
		mig[j].cuda_index = m->cuda_index >= 0 ? m->cuda_index : -1;
		mig[j].at = j;
	}
	o->mig_instances = mig;
	o->nmig_instances = mig ? g->n_mig : 0;
	for (size_t j = 0; links && j < g->n_nvlink; j++) {
		const gpuenv_hw_nvlink_t *k = &g->nvlink[j];
		links[j].link = k->link;
		links[j].active = tri(k->active);
		links[j].peer_pci_bus_id = k->peer_bus_id[0] ? cstr(F, k->peer_bus_id) : NULL;
		links[j].peer_type = k->active ? gpuenv_hw_peer_name(k->peer_type) : NULL;
		links[j].peer_gpu = nvml_index(h, k->peer_gpu);
		links[j].at = j;
	}
	o->nvlink = links;
	o->nnvlink = links ? g->n_nvlink : 0;
	for (int k = 0; src && k < GPUENV_HW_F_COUNT; k++)
		if (g->src[k]) {
			src[o->sources.n].key = fact_names[k];
			src[o->sources.n++].value = gpuenv_hw_src_name(g->src[k]);
		}
	o->sources.items = src;
	o->warnings.state = GPUENV_FACT_SET;
	for (size_t k = 0; warn && k < h->n_warnings; k++)
		if (h->warnings[k].gpu == (int)i)
			warn[o->warnings.n++] = cstr(F, h->warnings[k].msg);
	o->warnings.items = warn;
}

static void fill_driver(fill_t *F, const gpuenv_hw_facts_t *h, gpuenv_facts_driver_t *d)
{
	const gpuenv_hw_driver_t *dr = &h->driver;

	d->present = true;
	d->state = gpuenv_hw_state_name(h->state);
	d->state_text = gpuenv_hw_state_text(h->state);
	d->loaded = tri(dr->loaded);
	d->version = cstr(F, dr->version);
	d->version_source = dr->version ? gpuenv_hw_src_name(dr->version_src) : NULL;
	d->cuda_version = cuda_version_text(F, dr->cuda_version);
	d->cuda_version_int = dr->cuda_version ? dr->cuda_version : -1;
	d->cuda_version_source = dr->cuda_version ? gpuenv_hw_src_name(dr->cuda_version_src) : NULL;
	d->kernel_module = cstr(F, dr->module_version);
	d->flavor = cstr(F, dr->flavor);
	d->procfs = cstr(F, dr->procfs);
	d->procfs_version = cstr(F, dr->procfs_version);

	d->have_nvml = true;
	d->nvml.state = gpuenv_hw_nvml_state_name(h->nvml.state);
	d->nvml.loaded = tri(h->nvml.state == GPUENV_HW_LIB_OK);
	d->nvml.path = cstr(F, h->nvml.path);
	d->nvml.version = cstr(F, h->nvml.version);
	d->nvml.error = h->nvml.state == GPUENV_HW_LIB_ERROR ?
		cstr(F, gpuenv_hw_nvml_error_name(h->nvml.error)) : NULL;
	d->nvml.message = cstr(F, h->nvml.message);
	d->nvml.device_count = h->nvml.state == GPUENV_HW_LIB_OK ? (long long)h->nvml.device_count : -1;

	d->have_libcuda = true;
	d->libcuda.state = gpuenv_hw_libcuda_state_name(h->libcuda.state);
	d->libcuda.path = cstr(F, h->libcuda.path);
	d->libcuda.cuda_version = cuda_version_text(F, h->libcuda.version);
	d->libcuda.cuda_version_int = h->libcuda.version ? h->libcuda.version : -1;
	d->libcuda.error = cstr(F, h->libcuda.error_name);
	d->libcuda.message = cstr(F, h->libcuda.message);
	d->libcuda.initialized = tri(h->libcuda.initialized);
	d->libcuda.device_count = h->libcuda.device_count >= 0 ? h->libcuda.device_count : -1;
}

static void fill_cvd(fill_t *F, const gpuenv_hw_facts_t *h, gpuenv_facts_cvd_t *c)
{
	const gpuenv_hw_visible_t *v = &h->visible;
	long long *vis = calloc_n(F, v->n, sizeof(*vis));
	gpuenv_facts_cvd_device_t *devs = calloc_n(F, v->n, sizeof(*devs));

	c->present = true;
	c->set = tri(v->set);
	c->value = cstr(F, v->value);
	c->invalid = cstr(F, v->invalid);
	c->ambiguous_order = tri(v->ambiguous_order);
	c->have_visible = c->have_devices = true;
	for (size_t i = 0; vis && devs && i < v->n; i++) {
		const gpuenv_hw_visible_dev_t *x = &v->devs[i];
		const gpuenv_hw_gpu_t *g = &h->gpus[x->gpu];
		devs[i].gpu = g->index >= 0 ? g->index : -1;
		devs[i].mig = x->mig >= 0 ? cstr(F, g->mig[x->mig].uuid) : NULL;
		if (x->mig < 0 && g->index >= 0)
			vis[c->nvisible++] = g->index;
	}
	c->visible = vis;
	c->devices = devs;
	c->ndevices = devs ? v->n : 0;
}

/* The driver/GPU part: driver, jetson, cuda_visible_devices, pci, gpus,
 * and the backends' warnings appended to f's. */
static void fill_hw(fill_t *F, const gpuenv_hw_facts_t *h, gpuenv_facts_t *f)
{
	gpuenv_facts_pci_t *pci = calloc_n(F, h->n_pci, sizeof(*pci));
	gpuenv_facts_gpu_t *gpus = calloc_n(F, h->n_gpus, sizeof(*gpus));
	gpuenv_facts_warning_t *warn = calloc_n(F, f->nwarnings + h->n_warnings, sizeof(*warn));

	fill_driver(F, h, &f->driver);
	if (h->jetson.present) {
		f->jetson.present = true;
		f->jetson.model = cstr(F, h->jetson.model);
		f->jetson.soc = cstr(F, h->jetson.soc);
		f->jetson.l4t = cstr(F, h->jetson.l4t);
		f->jetson.nvgpu = tri(h->jetson.nvgpu);
	}
	fill_cvd(F, h, &f->cvd);
	for (size_t i = 0; pci && i < h->n_pci; i++) {
		const gpuenv_hw_pci_t *p = &h->pci[i];
		pci[i].bus_id = cstr(F, p->bus_id);
		pci[i].vendor = fmt(F, "0x%04x", p->vendor);
		pci[i].device = fmt(F, "0x%04x", p->device);
		pci[i].class_ = fmt(F, "0x%06x", (unsigned)p->class_code);
		pci[i].kind = p->kind == GPUENV_HW_PCI_GPU ? "gpu"
			: p->kind == GPUENV_HW_PCI_NVSWITCH ? "nvswitch" : "other";
		pci[i].driver = cstr(F, p->driver);
		pci[i].at = i;
	}
	f->pci = pci;
	f->npci = pci ? h->n_pci : 0;
	for (size_t i = 0; gpus && i < h->n_gpus; i++)
		fill_gpu(F, h, i, &gpus[i]);
	f->gpus = gpus;
	f->ngpus = gpus ? h->n_gpus : 0;
	if (!warn)
		return;
	if (f->nwarnings)
		memcpy(warn, f->warnings, f->nwarnings * sizeof(*warn));
	for (size_t i = 0; i < h->n_warnings; i++) {
		const gpuenv_hw_warning_t *w = &h->warnings[i];
		gpuenv_facts_warning_t *x = &warn[f->nwarnings];
		x->id = cstr(F, w->id);
		x->message = cstr(F, w->msg);
		x->hint = cstr(F, w->hint);
		x->has_gpu = true;
		x->gpu = w->gpu >= 0 ? nvml_index(h, w->gpu) : -1;
		x->source = gpuenv_hw_src_name(w->src);
		x->code = w->code ? w->code : -1;
		x->at = f->nwarnings++;
	}
	f->warnings = warn;
}

/* ---- the software stack ------------------------------------------------- */

static void fill_toolkit(fill_t *F, const gpuenv_toolkit_t *tk, gpuenv_facts_toolkit_t *o)
{
	gpuenv_facts_component_t *c = calloc_n(F, tk->ncomponents, sizeof(*c));

	o->path = sstr(F, tk->path);
	o->realpath = sstr(F, tk->realpath);
	o->aliases = strs_of(F, tk->aliases, tk->naliases);
	o->found_by = bits_of(F, tk->found_by, gpuenv_stack_found_by_names, 5);
	o->version = ver_of(F, &tk->version);
	o->nvcc = sstr(F, tk->nvcc);
	o->nvcc_version = sstr(F, tk->nvcc_version);
	o->lib_dir = sstr(F, tk->lib_dir);
	o->include_dir = sstr(F, tk->include_dir);
	for (size_t i = 0; c && i < tk->ncomponents; i++) {
		/* a name that is no string has no key in the document */
		if (!tk->components[i].name.ptr)
			continue;
		c[o->ncomponents].name = sstr(F, tk->components[i].name);
		c[o->ncomponents].version = sstr(F, tk->components[i].version);
		c[o->ncomponents++].source = gpuenv_vsrc_name(tk->components[i].src);
	}
	o->components = c;
}

static void fill_library(fill_t *F, const gpuenv_libcopy_t *c, gpuenv_facts_library_t *o)
{
	gpuenv_facts_ver_t *vs = calloc_n(F, c->nversions, sizeof(*vs));

	o->family = gpuenv_libfamily_name(c->family);
	o->path = sstr(F, c->path);
	o->name = sstr(F, c->name);
	o->soname = sstr(F, c->soname);
	o->aliases = strs_of(F, c->aliases, c->naliases);
	o->where = bits_of(F, c->where, gpuenv_stack_where_names, 6);
	o->toolkit = sstr(F, c->toolkit);
	o->dist = sstr(F, c->dist);
	o->site = sstr(F, c->site);
	o->size = (long long)c->size;
	o->version = c->nversions ? ver_of(F, &c->versions[0]) : (gpuenv_facts_ver_t){ 0 };
	for (size_t i = 0; vs && i < c->nversions; i++)
		vs[i] = ver_of(F, &c->versions[i]);
	o->versions = vs;
	o->nversions = vs ? c->nversions : 0;
	o->verdefs = strs_of(F, c->verdefs, c->nverdefs);
	o->code_entries = -1;
}

static void fill_loads(fill_t *F, const gpuenv_ld_resolution_t *r, gpuenv_facts_binary_t *b)
{
	gpuenv_facts_object_t *objs = calloc_n(F, r->nobjects, sizeof(*objs));

	b->have_loads = true;
	b->loads_binary = sstr(F, r->binary);
	b->loads_missing = (long long)r->nmissing;
	b->loads_truncated = tri(r->truncated);
	for (size_t i = 0; objs && i < r->nobjects; i++) {
		const gpuenv_ld_object_t *o = &r->objects[i];
		gpuenv_facts_object_t *x = &objs[i];
		gpuenv_facts_need_t *needs = calloc_n(F, o->elf.nneeded, sizeof(*needs));
		x->path = sstr(F, o->path);
		x->parent = o->parent == SIZE_MAX ? -1 : (long long)o->parent;
		x->depth = o->depth;
		x->error = o->error ? gpuenv_strerror(o->error) : NULL;
		x->soname = sstr(F, o->elf.soname);
		x->rpath = sstr(F, o->elf.rpath);
		x->runpath = sstr(F, o->elf.runpath);
		x->nodeflib = tri(o->elf.nodeflib);
		for (size_t k = 0; needs && k < o->elf.nneeded; k++) {
			const gpuenv_ld_need_t *n = &o->needs[k];
			needs[k].name = sstr(F, n->name);
			needs[k].how = gpuenv_ldsrc_name(n->how);
			needs[k].path = sstr(F, n->path);
			needs[k].object = n->object == SIZE_MAX ? -1 : (long long)n->object;
			needs[k].dir = sstr(F, n->dir);
			needs[k].rule = sstr(F, n->rule);
			needs[k].shadowed = strs_of(F, n->shadowed, n->nshadowed);
			if (n->rule_owner != SIZE_MAX)
				needs[k].rule_of = sstr(F, r->objects[n->rule_owner].path);
			needs[k].at = k;
		}
		x->needs = needs;
		x->nneeds = needs ? o->elf.nneeded : 0;
		x->at = i;
	}
	b->objects = objs;
	b->nobjects = objs ? r->nobjects : 0;
}

static void fill_env(fill_t *F, const gpuenv_pyenv_t *env, gpuenv_facts_env_t *o)
{
	static const char *const kinds[] = { "system", "venv", "conda" };
	gpuenv_facts_dist_t *dists = calloc_n(F, env->ndists, sizeof(*dists));
	gpuenv_facts_framework_t *fws = calloc_n(F, env->nframeworks, sizeof(*fws));

	o->found_by = gpuenv_pyenv_found_name(env->found_by);
	o->kind = env->kind >= 0 && env->kind < 3 ? kinds[env->kind] : "unknown";
	o->interpreter = sstr(F, env->interpreter);
	o->real_interpreter = sstr(F, env->real_interpreter);
	o->prefix = sstr(F, env->prefix);
	o->base_prefix = sstr(F, env->base_prefix);
	o->system_site_packages = tri(env->system_site_packages);
	o->python = ver_of(F, &env->python);
	o->python_xy = sstr(F, env->python_xy);
	o->sites = strs_of(F, env->sites, env->nsites);
	for (size_t i = 0; dists && i < env->ndists; i++) {
		const gpuenv_pydist_t *d = &env->dists[i];
		dists[i].name = sstr(F, d->name);
		dists[i].normalized = sstr(F, d->normalized);
		dists[i].version = sstr(F, d->version);
		dists[i].path = sstr(F, d->path);
		dists[i].site = o->sites.items ? o->sites.items[d->site] : NULL;
		dists[i].egg_info = tri(d->egg_info);
		dists[i].shadowed = tri(d->shadowed);
		dists[i].requires = strs_of(F, d->requires, d->nrequires);
		dists[i].at = i;
	}
	o->dists = dists;
	o->ndists = dists ? env->ndists : 0;
	for (size_t i = 0; fws && i < env->nframeworks; i++) {
		const gpuenv_framework_t *f = &env->frameworks[i];
		gpuenv_facts_framework_t *x = &fws[i];
		gpuenv_facts_binary_t *bins = calloc_n(F, f->nbinaries, sizeof(*bins));
		x->kind = gpuenv_fw_kind_name(f->kind);
		x->dist = dists ? dists[f->dist].normalized : NULL;
		x->version = sstr(F, f->version);
		x->version_source = gpuenv_vsrc_name(f->version_src);
		x->written.local = sstr(F, f->local);
		x->written.cuda = sstr(F, f->cuda);
		x->cuda_state = f->cuda.ptr ? GPUENV_FACT_SET : GPUENV_FACT_NULL;
		x->written.cuda_source = gpuenv_vsrc_name(f->cuda_src);
		x->cudnn = sstr(F, f->cudnn);
		x->hip = sstr(F, f->hip);
		x->written.gpu = tri(f->gpu);
		if (gpuenv_facts_framework_derive(F->ctx, F->a, x))
			F->err = -ENOMEM;
		for (size_t b = 0; bins && b < f->nbinaries; b++) {
			bins[b].path = sstr(F, f->binaries[b]);
			bins[b].entries = -1;
			if (f->loads)
				fill_loads(F, &f->loads[b], &bins[b]);
			bins[b].at = b;
		}
		x->binaries = bins;
		x->nbinaries = bins ? f->nbinaries : 0;
		x->at = i;
	}
	o->frameworks = fws;
	o->nframeworks = fws ? env->nframeworks : 0;
}

/* The CUDA code a binary carries: distinct cubin and PTX archs, the
 * summary, or why it could not be read.  path: on this machine (under
 * ctx->root). */
static void fill_code(fill_t *F, const char *path, unsigned char *state, gpuenv_facts_strs_t *cubins,
	gpuenv_facts_strs_t *ptx, long long *entries, const char **summary, const char **error)
{
	static const struct { int kind; const char *prefix; } kinds[] = {
		{ GPUENV_FATBIN_CUBIN, "sm_" }, { GPUENV_FATBIN_PTX, "compute_" },
	};
	gpuenv_ctx_t *ctx = F->ctx;
	gpuenv_fatbin_t fb;
	gpuenv_fatbin_arch_t archs[128];
	gpuenv_buf_t sum;
	int r;

	uint64_t t0 = gpuenv_trace_begin(ctx);

	gpuenv_fatbin_init(&fb, ctx);
	r = gpuenv_fatbin_open(&fb, path);
	for (size_t k = 0; k < 2; k++) {
		gpuenv_facts_strs_t *out = k == 0 ? cubins : ptx;
		size_t n = gpuenv_fatbin_archs(&fb, kinds[k].kind, archs, 128);
		const char **items = calloc_n(F, n < 128 ? n : 128, sizeof(*items));
		out->state = GPUENV_FACT_SET;
		out->n = 0;
		for (size_t i = 0; items && i < n && i < 128; i++)
			items[out->n++] = fmt(F, "%s%u%s", kinds[k].prefix, archs[i].arch,
				archs[i].variant ? (char[2]){ archs[i].variant, 0 } : "");
		out->items = items;
	}
	*entries = (long long)fb.n;
	*summary = NULL;
	gpuenv_buf_init(&sum, ctx, 4096);
	if (gpuenv_fatbin_summary(&fb, &sum) == 0 && sum.data)
		*summary = cstr(F, sum.data);
	gpuenv_buf_free(&sum);
	*error = NULL;
	if (r) {
		char msg[600];
		gpuenv_error_format(&ctx->err, msg, sizeof(msg));
		*error = cstr(F, msg);
	}
	*state = GPUENV_FACT_SET;
	gpuenv_fatbin_free(&fb);
	gpuenv_trace_end(ctx, "probe", "fatbin", NULL, path, t0);
}

/* ctx->root + a path of the machine; false when it does not fit or holds
 * a NUL byte (no path can). */
static bool rooted_path(gpuenv_ctx_t *ctx, gpuenv_str_t p, char *out, size_t outsz)
{
	return p.ptr && strlen(p.ptr) == p.len &&
		gpuenv_fs_resolve_in_root(ctx->root, p.ptr, out, outsz) == 0;
}

/* Toolkits, ld.so.cache, library copies, Python environments and, for each
 * framework binary, the loader's choices and the CUDA code inside.  The
 * stack's warnings become f's first. */
static int fill_stack(fill_t *F, const gpuenv_probe_opts_t *opts, gpuenv_facts_t *f)
{
	gpuenv_ctx_t *ctx = F->ctx;
	gpuenv_stack_opts_t so;
	gpuenv_stack_t st;
	gpuenv_facts_toolkit_t *tks;
	gpuenv_facts_library_t *libs;
	gpuenv_facts_env_t *envs;
	gpuenv_facts_warning_t *warn;
	char full[4096];
	int r;

	memset(&so, 0, sizeof(so));
	so.python = opts->python;
	so.env_dir = opts->env_dir;
	/* an unusable --python / --env is an error (ctx->err says which
	 * path): a report without the environment that was asked for, and
	 * once without the toolkits and libraries either, would read as
	 * "nothing installed" */
	if ((r = gpuenv_stack_probe(ctx, F->a, &so, &st)) != 0)
		return r;
	tks = calloc_n(F, st.ntoolkits, sizeof(*tks));
	libs = calloc_n(F, st.nlibs, sizeof(*libs));
	envs = calloc_n(F, st.nenvs, sizeof(*envs));
	warn = calloc_n(F, st.nwarnings, sizeof(*warn));
	f->have_toolkits = f->have_libraries = true;
	for (size_t i = 0; tks && i < st.ntoolkits; i++) {
		fill_toolkit(F, &st.toolkits[i], &tks[i]);
		tks[i].at = i;
	}
	f->toolkits = tks;
	f->ntoolkits = tks ? st.ntoolkits : 0;
	if (st.have_ldcache) {
		const gpuenv_ldcache_t *c = &st.ldcache;
		f->have_ldcache = true;
		f->ldcache.path = sstr(F, c->path);
		f->ldcache.format = (c->format & GPUENV_LDCACHE_NEW) && (c->format & GPUENV_LDCACHE_OLD)
			? "old+new" : (c->format & GPUENV_LDCACHE_NEW) ? "new" : "old";
		f->ldcache.entries = (long long)c->n;
		f->ldcache.hwcaps = strs_of(F, c->hwcaps, c->nhwcaps);
		f->ldcache.generator = sstr(F, c->generator);
	}
	f->ld_library_path = sstr(F, st.ld_library_path);
	for (size_t i = 0; libs && i < st.nlibs; i++) {
		fill_library(F, &st.libs[i], &libs[i]);
		libs[i].at = i;
		if (!(opts->flags & GPUENV_PROBE_NO_FATBIN) && (opts->flags & GPUENV_PROBE_ALL_BINARIES) &&
			rooted_path(ctx, st.libs[i].path, full, sizeof(full)))
			fill_code(F, full, &libs[i].code_state, &libs[i].cubins, &libs[i].ptx,
				&libs[i].code_entries, &libs[i].code_summary, &libs[i].code_error);
	}
	f->libraries = libs;
	f->nlibraries = libs ? st.nlibs : 0;
	for (size_t i = 0; envs && i < st.nenvs; i++) {
		fill_env(F, &st.envs[i], &envs[i]);
		envs[i].at = i;
		for (size_t k = 0; !(opts->flags & GPUENV_PROBE_NO_FATBIN) && k < envs[i].nframeworks; k++) {
			const gpuenv_framework_t *fw = &st.envs[i].frameworks[k];
			gpuenv_facts_binary_t *bins = (gpuenv_facts_binary_t *)envs[i].frameworks[k].binaries;
			for (size_t b = 0; b < envs[i].frameworks[k].nbinaries; b++)
				if (rooted_path(ctx, fw->binaries[b], full, sizeof(full)))
					fill_code(F, full, &bins[b].code_state, &bins[b].cubins, &bins[b].ptx,
						&bins[b].entries, &bins[b].summary, &bins[b].error);
		}
	}
	f->envs = envs;
	f->nenvs = envs ? st.nenvs : 0;
	for (size_t i = 0; warn && i < st.nwarnings; i++) {
		warn[i].id = "stack";
		warn[i].message = sstr(F, st.warnings[i]);
		warn[i].source = "stack";
		warn[i].gpu = warn[i].code = -1;
		warn[i].at = i;
	}
	f->warnings = warn;
	f->nwarnings = warn ? st.nwarnings : 0;
	return 0;
}

int gpuenv_probe_toolkit_facts(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t **out)
{
	fill_t F = { ctx, arena, 0 };
	gpuenv_toolkit_t *tks = NULL;
	gpuenv_facts_toolkit_t *ft;
	gpuenv_facts_t *f;
	size_t n = 0;
	int r;

	*out = NULL;
	if ((r = gpuenv_toolkit_probe(ctx, arena, &n, &tks)) != 0)
		return r;
	if (!(f = gpuenv_arena_calloc(arena, 1, sizeof(*f))))
		return gpuenv_oom(ctx, "the toolkits' facts");
	f->name = "";
	f->schema = GPUENV_FACTS_SCHEMA;
	f->probe_ms = -1;
	f->have_toolkits = true;
	ft = calloc_n(&F, n, sizeof(*ft));
	for (size_t i = 0; ft && i < n; i++) {
		fill_toolkit(&F, &tks[i], &ft[i]);
		ft[i].at = i;
	}
	f->toolkits = ft;
	f->ntoolkits = ft ? n : 0;
	if (F.err)
		return gpuenv_oom(ctx, "the toolkits' facts");
	*out = f;
	return 0;
}

/* ---- container engines and the NVIDIA Container Toolkit ----------------- */

/* Is ctx->root + path a regular file? */
static bool is_file(gpuenv_ctx_t *ctx, const char *path)
{
	char full[4096];
	struct stat st;

	return hw_path(ctx, path, full, sizeof(full)) == 0 && stat(full, &st) == 0 &&
		S_ISREG(st.st_mode);
}

/* nvidia-ctk: /usr/bin/nvidia-ctk, else the first $PATH folder (under the
 * root) that holds it. */
static const char *find_ctk(fill_t *F)
{
	const char *path = gpuenv_ctx_getenv(F->ctx, "PATH");
	char cand[4096];

	if (is_file(F->ctx, "/usr/bin/nvidia-ctk"))
		return cstr(F, "/usr/bin/nvidia-ctk");
	for (const char *p = path; p && *p;) {
		size_t n = strcspn(p, ":");
		if (n && p[0] == '/' &&
		    snprintf(cand, sizeof(cand), "%.*s/nvidia-ctk", (int)n, p) < (int)sizeof(cand) &&
		    is_file(F->ctx, cand))
			return text(F, cand, strlen(cand));
		p += n + (p[n] == ':');
	}
	return NULL;
}

/* /etc/docker/daemon.json names a runtime "nvidia" under "runtimes". */
static bool docker_runtime_nvidia(gpuenv_ctx_t *ctx)
{
	char full[4096];
	json_t *doc, *rt;
	bool yes;

	if (hw_path(ctx, "/etc/docker/daemon.json", full, sizeof(full)) != 0 ||
	    !(doc = json_load_file(full, 0, NULL)))
		return false;
	rt = json_object_get(doc, "runtimes");
	yes = json_is_object(rt) && json_object_get(rt, "nvidia") != NULL;
	json_decref(doc);
	return yes;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The CDI specs whose file name mentions nvidia (*.yaml, *.json), sorted. */
static gpuenv_facts_strs_t find_cdi(fill_t *F)
{
	static const char *const dirs[] = { "/etc/cdi", "/var/run/cdi" };
	gpuenv_facts_strs_t out = { NULL, 0, GPUENV_FACT_SET };
	GPUENV_VEC(const char *) v = { 0 };
	char full[4096], name[4096];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !F->err; i++) {
		struct dirent *e;
		DIR *d;
		if (hw_path(F->ctx, dirs[i], full, sizeof(full)) != 0 || !(d = opendir(full)))
			continue;
		while ((e = readdir(d)) && !F->err) {
			size_t n = strlen(e->d_name);
			const char **slot;
			if (n <= 5 || (strcmp(e->d_name + n - 5, ".yaml") &&
					      strcmp(e->d_name + n - 5, ".json")) ||
			    !strcasestr(e->d_name, "nvidia"))
				continue;
			snprintf(name, sizeof(name), "%s/%s", dirs[i], e->d_name);
			if (!(slot = gpuenv_vec_push(F->ctx, F->a, &v, 4096, "listing CDI specs")))
				F->err = -ENOMEM;
			else
				*slot = cstr(F, name);
		}
		closedir(d);
	}
	if (F->err)
		return out;
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), cmp_cstr);
	out.items = v.v;
	out.n = v.n;
	return out;
}

static void fill_container(fill_t *F, gpuenv_facts_container_t *c)
{
	c->present = true;
	c->docker = hw_exists(F->ctx, "/usr/bin/docker") || hw_exists(F->ctx, "/etc/docker");
	c->podman = hw_exists(F->ctx, "/usr/bin/podman");
	c->nvidia_ctk = find_ctk(F);
	c->docker_runtime_nvidia = docker_runtime_nvidia(F->ctx);
	c->cdi_specs = find_cdi(F);
}

/* ---- the document ------------------------------------------------------- */

static void fill_host(fill_t *F, gpuenv_facts_host_t *h)
{
	gpuenv_ctx_t *ctx = F->ctx;
	struct utsname u;
	char name[256];

	if (gethostname(name, sizeof(name)) == 0) {
		name[sizeof(name) - 1] = '\0';
		h->hostname = cstr(F, name);
	}
	if (uname(&u) == 0) {
		h->machine = cstr(F, u.machine);
		h->kernel = cstr(F, u.release);
	}
	h->root = cstr(F, ctx->root && ctx->root[0] ? ctx->root : "/");
	/* the C library, for wheel tags (manylinux_X_Y): this process's, so
	 * only when the probe looks at the machine it runs on */
#ifdef _CS_GNU_LIBC_VERSION
	if (!ctx->root || !ctx->root[0] || !strcmp(ctx->root, "/")) {
		char lv[64];
		size_t n = confstr(_CS_GNU_LIBC_VERSION, lv, sizeof(lv));
		if (n > 6 && n <= sizeof(lv) && !strncmp(lv, "glibc ", 6)) {
			h->libc = "glibc";
			h->libc_version = cstr(F, lv + 6);
		}
	}
#endif
}

int gpuenv_probe_hw_json(gpuenv_ctx_t *ctx, const gpuenv_hw_facts_t *h, json_t *obj)
{
	static const char *const keys[] = { "driver", "jetson", "cuda_visible_devices", "pci", "gpus" };
	gpuenv_json_scope_t scope;
	gpuenv_arena_t arena;
	gpuenv_facts_t f;
	fill_t F = { ctx, &arena, 0 };
	json_t *doc = NULL, *all, *warn;
	int r = 0;

	memset(&f, 0, sizeof(f));
	f.probe_ms = -1;
	gpuenv_arena_init(&arena, ctx, 0);
	fill_hw(&F, h, &f);
	if (F.err || !obj || (r = gpuenv_facts_json(ctx, &f, &doc)) != 0) {
		gpuenv_arena_free(&arena);
		return r ? r : gpuenv_oom(ctx, "the GPU facts");
	}
	gpuenv_json_enter(ctx, &scope);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_set(obj, keys[i], json_object_get(doc, keys[i])))
			r = -ENOMEM;
	/* append to the facts' warnings (other probe parts add theirs) */
	warn = json_object_get(doc, "warnings");
	all = json_object_get(obj, "warnings");
	if (json_is_array(all) ? json_array_extend(all, warn) : json_object_set(obj, "warnings", warn))
		r = -ENOMEM;
	json_decref(doc);
	if (gpuenv_json_leave(&scope))
		r = -ENOMEM;
	gpuenv_arena_free(&arena);
	return r ? gpuenv_oom(ctx, "the GPU facts") : 0;
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
	bool own_thread; /* not the caller's (its name in a trace) */
};

static void *hw_thread(void *p)
{
	struct hw_job *j = p;

	if (j->own_thread)
		gpuenv_trace_thread_name(&j->ctx, "gpus");
	j->r = gpuenv_hw_probe_gpus(&j->ctx, &j->opts, &j->arena, &j->facts);
	return NULL;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The probe between its halves: the GPU thread running, the facts filled
 * but for the driver and the GPUs. */
struct gpuenv_probe {
	struct hw_job job;
	pthread_t tid;
	bool threaded;
	fill_t F;
	gpuenv_facts_t *f;
	double t0;
};

static int probe_join(gpuenv_probe_t *P, gpuenv_ctx_t *ctx, int r)
{
	uint64_t t0 = gpuenv_trace_begin(ctx);

	if (P->threaded)
		pthread_join(P->tid, NULL);
	gpuenv_trace_end(ctx, "probe", "gpus-wait", NULL, "the GPU thread joined", t0);
	if (P->job.r && !r) { /* the stack's error, when it had one, is the one told */
		ctx->err = P->job.ctx.err;
		r = P->job.r;
	}
	if (!r)
		fill_hw(&P->F, P->job.facts, P->f);
	gpuenv_arena_free(&P->job.arena);
	if (!r && P->F.err)
		r = gpuenv_oom(ctx, "probing");
	return r;
}

int gpuenv_probe_begin(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts, gpuenv_arena_t *arena,
	gpuenv_probe_t **out, const gpuenv_facts_t **partial)
{
	gpuenv_probe_opts_t defaults;
	gpuenv_probe_t *P;
	gpuenv_facts_t *f;
	double t0 = mono_ms();
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int r;

	*out = NULL;
	if (partial)
		*partial = NULL;
	if (!opts) {
		gpuenv_probe_opts_init(&defaults);
		opts = &defaults;
	}
	if ((r = gpuenv_fs_check_root(ctx)) != 0)
		return r;
	if (!(P = gpuenv_arena_calloc(arena, 1, sizeof(*P))) ||
		!(f = gpuenv_arena_calloc(arena, 1, sizeof(*f))))
		return gpuenv_oom(ctx, "probing");
	P->F = (fill_t){ ctx, arena, 0 };
	P->f = f;
	P->t0 = t0;
	f->name = "";
	f->schema = GPUENV_FACTS_SCHEMA;
	f->gpuenv = cstr(&P->F, opts->version);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	f->taken_at = cstr(&P->F, when);

	/* the GPU thread first: the host's and the container engines' reads
	 * below run inside NVML's initialisation too */
	P->job.ctx = *ctx;
	P->job.opts = opts->hw;
	if (opts->flags & GPUENV_PROBE_DEEP)
		P->job.opts.flags |= GPUENV_HW_DEEP;
	gpuenv_arena_init(&P->job.arena, &P->job.ctx, 0);
	P->job.own_thread = true;
	P->threaded = pthread_create(&P->tid, NULL, hw_thread, &P->job) == 0;
	if (!P->threaded) {
		P->job.own_thread = false;
		hw_thread(&P->job);
	}
	uint64_t ts = gpuenv_trace_begin(ctx);
	fill_host(&P->F, &f->host);
	fill_container(&P->F, &f->container);
	gpuenv_trace_end(ctx, "probe", "host", NULL, "host and container engines", ts);
	r = 0;
	if (!(opts->flags & GPUENV_PROBE_NO_LIBS))
		r = fill_stack(&P->F, opts, f);
	if (!r && P->F.err)
		r = gpuenv_oom(ctx, "probing");
	if (r)
		return probe_join(P, ctx, r);
	*out = P;
	if (partial)
		*partial = f;
	return 0;
}

int gpuenv_probe_end(gpuenv_probe_t *P, gpuenv_ctx_t *ctx, const gpuenv_facts_t **out)
{
	int r = probe_join(P, ctx, 0);

	*out = NULL;
	if (r)
		return r;
	P->f->probe_ms = mono_ms() - P->t0;
	*out = P->f;
	return 0;
}

int gpuenv_probe_facts(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts, gpuenv_arena_t *arena,
	const gpuenv_facts_t **out)
{
	gpuenv_probe_t *P;
	int r;

	*out = NULL;
	if ((r = gpuenv_probe_begin(ctx, opts, arena, &P, NULL)) != 0)
		return r;
	return gpuenv_probe_end(P, ctx, out);
}

int gpuenv_probe_facts_json(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts, json_t **out)
{
	gpuenv_arena_t arena;
	const gpuenv_facts_t *f;
	int r;

	*out = NULL;
	gpuenv_arena_init(&arena, ctx, 0);
	r = gpuenv_probe_facts(ctx, opts, &arena, &f);
	if (!r)
		r = gpuenv_facts_json(ctx, f, out);
	gpuenv_arena_free(&arena);
	return r;
}
