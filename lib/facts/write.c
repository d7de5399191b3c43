/* The facts document (docs/probe-schema.md) written from gpuenv_facts_t:
 * the one writer.  The probe fills gpuenv_facts_t and `gpuenv probe --json`
 * prints what this writes; the decoder (decode.c) reads it back into the
 * same struct, so probe -> JSON -> decode -> JSON gives the same bytes.
 *
 * Keys go in the schema's order (jansson keeps insertion order).  A fact
 * the struct holds as unknown (NULL, -1, GPUENV_TRI_UNKNOWN) is written as
 * null; the few keys the probe writes only when it knows them (a host's
 * name, a binary's CUDA code, a fatbin summary, a need's rule_of) are left
 * out instead. */
#include <errno.h>
#include <string.h>

#include "gpuenv/facts.h"

typedef struct wr {
	gpuenv_ctx_t *ctx;
	int err; /* -ENOMEM (or GPUENV_EFORMAT) once something failed */
} wr_t;

/* ---- leaves ------------------------------------------------------------- */

static json_t *jnew(wr_t *w, json_t *v)
{
	if (!v && !w->err)
		w->err = -ENOMEM;
	return v;
}

/* A string of the facts (text already); null for NULL. */
static json_t *jstr(wr_t *w, const char *s)
{
	json_t *v;

	if (!s)
		return json_null();
	if (!(v = json_stringn(s, strlen(s))) && !w->err)
		w->err = gpuenv_text_valid(s, strlen(s), 0) ? -ENOMEM : GPUENV_EFORMAT;
	return v;
}

static json_t *jint(long long v)
{
	return v >= 0 ? json_integer((json_int_t)v) : json_null();
}

static json_t *jtri(gpuenv_tri_t t)
{
	return t == GPUENV_TRI_UNKNOWN ? json_null() : json_boolean(t == GPUENV_TRI_TRUE);
}

/* obj[key] = v (a new reference, stolen); a NULL v or a failed set makes
 * the whole document fail. */
static void put(wr_t *w, json_t *obj, const char *key, json_t *v)
{
	if (!v || !obj || json_object_set_new(obj, key, v)) {
		if (!w->err)
			w->err = -ENOMEM;
		if (v && !obj)
			json_decref(v);
	}
}

static void add(wr_t *w, json_t *arr, json_t *v)
{
	if (!v || !arr || json_array_append_new(arr, v)) {
		if (!w->err)
			w->err = -ENOMEM;
		if (v && !arr)
			json_decref(v);
	}
}

static json_t *jstrs(wr_t *w, const gpuenv_facts_strs_t *s)
{
	json_t *a;

	if (s->state != GPUENV_FACT_SET)
		return json_null();
	a = jnew(w, json_array());
	for (size_t i = 0; a && i < s->n; i++)
		add(w, a, jstr(w, s->items[i]));
	return a;
}

static json_t *jver(wr_t *w, const gpuenv_facts_ver_t *v)
{
	json_t *o;

	if (!v->version)
		return json_null();
	o = jnew(w, json_object());
	put(w, o, "version", jstr(w, v->version));
	put(w, o, "source", jstr(w, v->source));
	put(w, o, "from", jstr(w, v->from));
	return o;
}

/* ---- driver and GPUs ---------------------------------------------------- */

static json_t *driver_json(wr_t *w, const gpuenv_facts_driver_t *d)
{
	json_t *o = jnew(w, json_object()), *n, *c;

	put(w, o, "state", jstr(w, d->state));
	put(w, o, "state_text", jstr(w, d->state_text));
	put(w, o, "loaded", jtri(d->loaded));
	put(w, o, "version", jstr(w, d->version));
	put(w, o, "version_source", jstr(w, d->version_source));
	put(w, o, "cuda_version", jstr(w, d->cuda_version));
	put(w, o, "cuda_version_int", jint(d->cuda_version_int));
	put(w, o, "cuda_version_source", jstr(w, d->cuda_version_source));
	put(w, o, "kernel_module", jstr(w, d->kernel_module));
	put(w, o, "flavor", jstr(w, d->flavor));
	put(w, o, "procfs", jstr(w, d->procfs));
	put(w, o, "procfs_version", jstr(w, d->procfs_version));
	if (d->have_nvml) {
		n = jnew(w, json_object());
		put(w, n, "state", jstr(w, d->nvml.state));
		put(w, n, "loaded", jtri(d->nvml.loaded));
		put(w, n, "path", jstr(w, d->nvml.path));
		put(w, n, "version", jstr(w, d->nvml.version));
		put(w, n, "error", jstr(w, d->nvml.error));
		put(w, n, "message", jstr(w, d->nvml.message));
		put(w, n, "device_count", jint(d->nvml.device_count));
		put(w, o, "nvml", n);
	}
	if (d->have_libcuda) {
		c = jnew(w, json_object());
		put(w, c, "state", jstr(w, d->libcuda.state));
		put(w, c, "path", jstr(w, d->libcuda.path));
		put(w, c, "cuda_version", jstr(w, d->libcuda.cuda_version));
		put(w, c, "cuda_version_int", jint(d->libcuda.cuda_version_int));
		put(w, c, "error", jstr(w, d->libcuda.error));
		put(w, c, "message", jstr(w, d->libcuda.message));
		put(w, c, "initialized", jtri(d->libcuda.initialized));
		put(w, c, "device_count", jint(d->libcuda.device_count));
		put(w, o, "libcuda", c);
	}
	return o;
}

static json_t *jetson_json(wr_t *w, const gpuenv_facts_jetson_t *j)
{
	json_t *o;

	if (!j->present)
		return json_null();
	o = jnew(w, json_object());
	put(w, o, "model", jstr(w, j->model));
	put(w, o, "soc", jstr(w, j->soc));
	put(w, o, "l4t", jstr(w, j->l4t));
	put(w, o, "nvgpu", jtri(j->nvgpu));
	return o;
}

static json_t *container_json(wr_t *w, const gpuenv_facts_container_t *c)
{
	json_t *o = jnew(w, json_object());

	put(w, o, "docker", json_boolean(c->docker));
	put(w, o, "podman", json_boolean(c->podman));
	put(w, o, "nvidia_ctk", jstr(w, c->nvidia_ctk));
	put(w, o, "docker_runtime_nvidia", json_boolean(c->docker_runtime_nvidia));
	put(w, o, "cdi_specs", jstrs(w, &c->cdi_specs));
	return o;
}

static json_t *cvd_json(wr_t *w, const gpuenv_facts_cvd_t *c)
{
	json_t *o = jnew(w, json_object()), *vis = NULL, *devs = NULL;

	put(w, o, "set", jtri(c->set));
	put(w, o, "value", jstr(w, c->value));
	if (c->have_visible) {
		vis = jnew(w, json_array());
		for (size_t i = 0; vis && i < c->nvisible; i++)
			add(w, vis, json_integer((json_int_t)c->visible[i]));
	}
	put(w, o, "visible", vis ? vis : json_null());
	if (c->have_devices) {
		devs = jnew(w, json_array());
		for (size_t i = 0; devs && i < c->ndevices; i++) {
			json_t *e = jnew(w, json_object());
			put(w, e, "gpu", jint(c->devices[i].gpu));
			put(w, e, "mig", jstr(w, c->devices[i].mig));
			add(w, devs, e);
		}
	}
	put(w, o, "devices", devs ? devs : json_null());
	put(w, o, "invalid", jstr(w, c->invalid));
	put(w, o, "ambiguous_order", jtri(c->ambiguous_order));
	return o;
}

static json_t *pci_json(wr_t *w, const gpuenv_facts_pci_t *p)
{
	json_t *o = jnew(w, json_object());

	put(w, o, "bus_id", jstr(w, p->bus_id));
	put(w, o, "vendor", jstr(w, p->vendor));
	put(w, o, "device", jstr(w, p->device));
	put(w, o, "class", jstr(w, p->class_));
	put(w, o, "kind", jstr(w, p->kind));
	put(w, o, "driver", jstr(w, p->driver));
	return o;
}

static json_t *mig_json(wr_t *w, const gpuenv_facts_gpu_t *g)
{
	json_t *o = jnew(w, json_object()), *inst = jnew(w, json_array());

	put(w, o, "current", jstr(w, g->mig_current));
	put(w, o, "pending", jstr(w, g->mig_pending));
	for (size_t i = 0; inst && i < g->nmig_instances; i++) {
		const gpuenv_facts_mig_instance_t *m = &g->mig_instances[i];
		json_t *x = jnew(w, json_object());
		put(w, x, "index", jint(m->index));
		put(w, x, "uuid", jstr(w, m->uuid));
		put(w, x, "name", jstr(w, m->name));
		put(w, x, "gpu_instance", jint(m->gpu_instance));
		put(w, x, "compute_instance", jint(m->compute_instance));
		put(w, x, "memory_total", jint(m->memory_total));
		put(w, x, "memory_free", jint(m->memory_free));
		put(w, x, "visible", jtri(m->visible));
		put(w, x, "cuda_index", jint(m->cuda_index));
		add(w, inst, x);
	}
	put(w, o, "instances", inst);
	return o;
}

static json_t *gpu_json(wr_t *w, const gpuenv_facts_gpu_t *g)
{
	json_t *o = jnew(w, json_object()), *links = jnew(w, json_array());
	json_t *src = jnew(w, json_object());

	put(w, o, "index", jint(g->index));
	put(w, o, "name", jstr(w, g->name));
	put(w, o, "uuid", jstr(w, g->uuid));
	put(w, o, "compute_capability", jstr(w, g->compute_capability));
	put(w, o, "sm", jstr(w, g->sm));
	put(w, o, "architecture", jstr(w, g->architecture));
	put(w, o, "nvml_architecture", jint(g->nvml_architecture));
	put(w, o, "memory_total", jint(g->memory_total));
	put(w, o, "memory_free", jint(g->memory_free));
	put(w, o, "pci_bus_id", jstr(w, g->pci_bus_id));
	put(w, o, "pci_device_id", jstr(w, g->pci_device_id));
	put(w, o, "device_id", jstr(w, g->device_id));
	put(w, o, "kernel_driver", jstr(w, g->kernel_driver));
	put(w, o, "integrated", jtri(g->integrated));
	put(w, o, "visible", jtri(g->visible));
	put(w, o, "cuda_index", jint(g->cuda_index));
	put(w, o, "mig", g->have_mig ? mig_json(w, g) : json_null());
	for (size_t i = 0; links && i < g->nnvlink; i++) {
		const gpuenv_facts_nvlink_t *k = &g->nvlink[i];
		json_t *x = jnew(w, json_object());
		put(w, x, "link", jint(k->link));
		put(w, x, "active", jtri(k->active));
		put(w, x, "peer_pci_bus_id", jstr(w, k->peer_pci_bus_id));
		put(w, x, "peer_type", jstr(w, k->peer_type));
		put(w, x, "peer_gpu", jint(k->peer_gpu));
		add(w, links, x);
	}
	put(w, o, "nvlink", links);
	for (size_t i = 0; src && i < g->sources.n; i++)
		put(w, src, g->sources.items[i].key, jstr(w, g->sources.items[i].value));
	put(w, o, "sources", src);
	put(w, o, "warnings", jstrs(w, &g->warnings));
	return o;
}

static json_t *warning_json(wr_t *w, const gpuenv_facts_warning_t *x)
{
	json_t *o = jnew(w, json_object());

	put(w, o, "id", jstr(w, x->id));
	put(w, o, "message", jstr(w, x->message));
	put(w, o, "hint", jstr(w, x->hint));
	if (x->has_gpu)
		put(w, o, "gpu", jint(x->gpu));
	put(w, o, "source", jstr(w, x->source));
	if (x->has_gpu)
		put(w, o, "code", jint(x->code));
	return o;
}

/* ---- the software stack ------------------------------------------------- */

static json_t *toolkit_json(wr_t *w, const gpuenv_facts_toolkit_t *t)
{
	json_t *o = jnew(w, json_object()), *comps = jnew(w, json_object());

	put(w, o, "path", jstr(w, t->path));
	put(w, o, "realpath", jstr(w, t->realpath));
	put(w, o, "aliases", jstrs(w, &t->aliases));
	put(w, o, "found_by", jstrs(w, &t->found_by));
	put(w, o, "version", jver(w, &t->version));
	put(w, o, "nvcc", jstr(w, t->nvcc));
	put(w, o, "nvcc_version", jstr(w, t->nvcc_version));
	put(w, o, "lib_dir", jstr(w, t->lib_dir));
	put(w, o, "include_dir", jstr(w, t->include_dir));
	for (size_t i = 0; comps && i < t->ncomponents; i++) {
		json_t *c = jnew(w, json_object());
		put(w, c, "version", jstr(w, t->components[i].version));
		put(w, c, "source", jstr(w, t->components[i].source));
		put(w, comps, t->components[i].name, c);
	}
	put(w, o, "components", comps);
	return o;
}

/* "cuda_code": {cubins, ptx, entries, summary, error}; the summary only
 * when there is one. */
static json_t *code_json(wr_t *w, const gpuenv_facts_strs_t *cubins, const gpuenv_facts_strs_t *ptx,
	long long entries, const char *summary, const char *error)
{
	json_t *o = jnew(w, json_object());

	put(w, o, "cubins", jstrs(w, cubins));
	put(w, o, "ptx", jstrs(w, ptx));
	put(w, o, "entries", jint(entries));
	if (summary)
		put(w, o, "summary", jstr(w, summary));
	put(w, o, "error", jstr(w, error));
	return o;
}

static json_t *library_json(wr_t *w, const gpuenv_facts_library_t *l)
{
	json_t *o = jnew(w, json_object()), *vs = jnew(w, json_array());

	put(w, o, "family", jstr(w, l->family));
	put(w, o, "path", jstr(w, l->path));
	put(w, o, "name", jstr(w, l->name));
	put(w, o, "soname", jstr(w, l->soname));
	put(w, o, "aliases", jstrs(w, &l->aliases));
	put(w, o, "where", jstrs(w, &l->where));
	put(w, o, "toolkit", jstr(w, l->toolkit));
	put(w, o, "dist", jstr(w, l->dist));
	put(w, o, "site", jstr(w, l->site));
	put(w, o, "size", l->size >= 0 ? json_integer((json_int_t)l->size) : json_null());
	put(w, o, "version", jver(w, &l->version));
	for (size_t i = 0; vs && i < l->nversions; i++)
		add(w, vs, jver(w, &l->versions[i]));
	put(w, o, "versions", vs);
	put(w, o, "verdefs", jstrs(w, &l->verdefs));
	if (l->code_state == GPUENV_FACT_SET || l->code_state == GPUENV_FACT_MISTYPED)
		put(w, o, "cuda_code", code_json(w, &l->cubins, &l->ptx, l->code_entries,
			l->code_summary, l->code_error));
	return o;
}

static json_t *loads_json(wr_t *w, const gpuenv_facts_binary_t *b)
{
	json_t *o = jnew(w, json_object()), *objs = jnew(w, json_array());

	put(w, o, "binary", jstr(w, b->loads_binary));
	put(w, o, "missing", jint(b->loads_missing));
	put(w, o, "truncated", jtri(b->loads_truncated));
	for (size_t i = 0; objs && i < b->nobjects; i++) {
		const gpuenv_facts_object_t *x = &b->objects[i];
		json_t *e = jnew(w, json_object()), *needs = jnew(w, json_array());
		for (size_t k = 0; needs && k < x->nneeds; k++) {
			const gpuenv_facts_need_t *n = &x->needs[k];
			json_t *ne = jnew(w, json_object());
			put(w, ne, "name", jstr(w, n->name));
			put(w, ne, "how", jstr(w, n->how));
			put(w, ne, "path", jstr(w, n->path));
			put(w, ne, "object", jint(n->object));
			put(w, ne, "dir", jstr(w, n->dir));
			put(w, ne, "rule", jstr(w, n->rule));
			put(w, ne, "shadowed", jstrs(w, &n->shadowed));
			if (n->rule_of)
				put(w, ne, "rule_of", jstr(w, n->rule_of));
			add(w, needs, ne);
		}
		put(w, e, "path", jstr(w, x->path));
		put(w, e, "parent", jint(x->parent));
		put(w, e, "depth", jint(x->depth));
		put(w, e, "error", jstr(w, x->error));
		put(w, e, "soname", jstr(w, x->soname));
		put(w, e, "rpath", jstr(w, x->rpath));
		put(w, e, "runpath", jstr(w, x->runpath));
		put(w, e, "nodeflib", jtri(x->nodeflib));
		put(w, e, "needs", needs);
		add(w, objs, e);
	}
	put(w, o, "objects", objs);
	return o;
}

static json_t *framework_json(wr_t *w, const gpuenv_facts_framework_t *f)
{
	json_t *o = jnew(w, json_object()), *bins = jnew(w, json_array());

	put(w, o, "kind", jstr(w, f->kind));
	put(w, o, "dist", jstr(w, f->dist));
	put(w, o, "version", jstr(w, f->version));
	put(w, o, "version_source", jstr(w, f->version_source));
	put(w, o, "local", jstr(w, f->written.local));
	put(w, o, "cuda", jstr(w, f->written.cuda));
	put(w, o, "cuda_source", jstr(w, f->written.cuda_source));
	put(w, o, "cudnn", jstr(w, f->cudnn));
	put(w, o, "hip", jstr(w, f->hip));
	put(w, o, "gpu", jtri(f->written.gpu));
	for (size_t i = 0; bins && i < f->nbinaries; i++) {
		const gpuenv_facts_binary_t *b = &f->binaries[i];
		json_t *e = jnew(w, json_object());
		put(w, e, "path", jstr(w, b->path));
		put(w, e, "loads", b->have_loads ? loads_json(w, b) : json_null());
		if (b->code_state == GPUENV_FACT_SET || b->code_state == GPUENV_FACT_MISTYPED)
			put(w, e, "cuda_code", code_json(w, &b->cubins, &b->ptx, b->entries, b->summary,
				b->error));
		add(w, bins, e);
	}
	put(w, o, "binaries", bins);
	return o;
}

static json_t *env_json(wr_t *w, const gpuenv_facts_env_t *e)
{
	json_t *o = jnew(w, json_object()), *dists = jnew(w, json_array());
	json_t *fws = jnew(w, json_array());

	put(w, o, "found_by", jstr(w, e->found_by));
	put(w, o, "kind", jstr(w, e->kind));
	put(w, o, "interpreter", jstr(w, e->interpreter));
	put(w, o, "real_interpreter", jstr(w, e->real_interpreter));
	put(w, o, "prefix", jstr(w, e->prefix));
	put(w, o, "base_prefix", jstr(w, e->base_prefix));
	put(w, o, "system_site_packages", jtri(e->system_site_packages));
	put(w, o, "python", jver(w, &e->python));
	put(w, o, "python_xy", jstr(w, e->python_xy));
	put(w, o, "sites", jstrs(w, &e->sites));
	for (size_t i = 0; dists && i < e->ndists; i++) {
		const gpuenv_facts_dist_t *d = &e->dists[i];
		json_t *x = jnew(w, json_object());
		put(w, x, "name", jstr(w, d->name));
		put(w, x, "normalized", jstr(w, d->normalized));
		put(w, x, "version", jstr(w, d->version));
		put(w, x, "path", jstr(w, d->path));
		put(w, x, "site", jstr(w, d->site));
		put(w, x, "egg_info", jtri(d->egg_info));
		put(w, x, "shadowed", jtri(d->shadowed));
		put(w, x, "requires", jstrs(w, &d->requires));
		add(w, dists, x);
	}
	put(w, o, "distributions", dists);
	for (size_t i = 0; fws && i < e->nframeworks; i++)
		add(w, fws, framework_json(w, &e->frameworks[i]));
	put(w, o, "frameworks", fws);
	return o;
}

static json_t *ldcache_json(wr_t *w, const gpuenv_facts_t *f)
{
	json_t *o;

	if (!f->have_ldcache)
		return json_null();
	o = jnew(w, json_object());
	put(w, o, "path", jstr(w, f->ldcache.path));
	put(w, o, "format", jstr(w, f->ldcache.format));
	put(w, o, "entries", jint(f->ldcache.entries));
	put(w, o, "hwcaps", jstrs(w, &f->ldcache.hwcaps));
	put(w, o, "generator", jstr(w, f->ldcache.generator));
	return o;
}

/* ---- the document ------------------------------------------------------- */

static json_t *host_json(wr_t *w, const gpuenv_facts_host_t *h)
{
	json_t *o = jnew(w, json_object());

	if (h->hostname)
		put(w, o, "hostname", jstr(w, h->hostname));
	if (h->machine)
		put(w, o, "machine", jstr(w, h->machine));
	if (h->kernel)
		put(w, o, "kernel", jstr(w, h->kernel));
	put(w, o, "root", jstr(w, h->root));
	if (h->libc)
		put(w, o, "libc", jstr(w, h->libc));
	if (h->libc_version)
		put(w, o, "libc_version", jstr(w, h->libc_version));
	return o;
}

int gpuenv_facts_json(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f, json_t **out)
{
	gpuenv_json_scope_t scope;
	wr_t w = { ctx, 0 };
	json_t *doc, *a;
	bool oom;

	*out = NULL;
	gpuenv_json_enter(ctx, &scope);
	doc = jnew(&w, json_object());
	put(&w, doc, "schema", jstr(&w, f->schema));
	put(&w, doc, "gpuenv", jstr(&w, f->gpuenv));
	put(&w, doc, "taken_at", jstr(&w, f->taken_at));
	put(&w, doc, "host", host_json(&w, &f->host));
	a = jnew(&w, json_array());
	for (size_t i = 0; a && i < f->nwarnings; i++)
		add(&w, a, warning_json(&w, &f->warnings[i]));
	put(&w, doc, "warnings", a);
	if (f->driver.present)
		put(&w, doc, "driver", driver_json(&w, &f->driver));
	put(&w, doc, "jetson", jetson_json(&w, &f->jetson));
	if (f->cvd.present)
		put(&w, doc, "cuda_visible_devices", cvd_json(&w, &f->cvd));
	a = jnew(&w, json_array());
	for (size_t i = 0; a && i < f->npci; i++)
		add(&w, a, pci_json(&w, &f->pci[i]));
	put(&w, doc, "pci", a);
	a = jnew(&w, json_array());
	for (size_t i = 0; a && i < f->ngpus; i++)
		add(&w, a, gpu_json(&w, &f->gpus[i]));
	put(&w, doc, "gpus", a);
	if (f->have_toolkits) {
		a = jnew(&w, json_array());
		for (size_t i = 0; a && i < f->ntoolkits; i++)
			add(&w, a, toolkit_json(&w, &f->toolkits[i]));
		put(&w, doc, "toolkits", a);
		put(&w, doc, "ldcache", ldcache_json(&w, f));
		put(&w, doc, "ld_library_path", jstr(&w, f->ld_library_path));
	}
	if (f->have_libraries) {
		a = jnew(&w, json_array());
		for (size_t i = 0; a && i < f->nlibraries; i++)
			add(&w, a, library_json(&w, &f->libraries[i]));
		put(&w, doc, "libraries", a);
		a = jnew(&w, json_array());
		for (size_t i = 0; a && i < f->nenvs; i++)
			add(&w, a, env_json(&w, &f->envs[i]));
		put(&w, doc, "environments", a);
	}
	if (f->container.present)
		put(&w, doc, "container", container_json(&w, &f->container));
	if (f->probe_ms >= 0)
		put(&w, doc, "probe_ms", json_real(f->probe_ms));
	oom = gpuenv_json_leave(&scope);
	if (w.err || oom) {
		gpuenv_json_enter(ctx, &scope);
		json_decref(doc);
		gpuenv_json_leave(&scope);
		if (w.err == GPUENV_EFORMAT)
			return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0,
				"a fact is not valid UTF-8 text (the probe escapes bytes as \\xHH)");
		return gpuenv_oom(ctx, "writing the facts");
	}
	*out = doc;
	return 0;
}
