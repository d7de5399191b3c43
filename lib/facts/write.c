/* The facts document (docs/probe-schema.md) written from gpuenv_facts_t:
 * the one writer.  The probe fills gpuenv_facts_t and `gpuenv probe --json`
 * prints what this writes; the decoder (decode.c) reads it back into the
 * same struct, so probe -> JSON -> decode -> JSON gives the same bytes.
 *
 * The text is written as it is produced (gpuenv_json_out, the exact text
 * json_dumps gives with JSON_INDENT), with no tree in between: on the H200
 * the facts are 601 KB and building then dumping a jansson tree was the
 * largest part of `probe --json` after NVML (issue 26 item 3).  A caller
 * that wants a tree (gpuenv_facts_json) parses that text.
 *
 * Keys go in the schema's order.  A fact the struct holds as unknown (NULL,
 * -1, GPUENV_TRI_UNKNOWN) is written as null; the few keys the probe writes
 * only when it knows them (a host's name, a binary's CUDA code, a fatbin
 * summary, a need's rule_of) are left out instead. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "gpuenv/facts.h"
#include "gpuenv/json.h"

typedef gpuenv_json_out_t wr_t;

/* ---- leaves: key and value ---------------------------------------------- */

static void ks(wr_t *w, const char *key, const char *s)
{
	gpuenv_json_out_key(w, key);
	gpuenv_json_out_str(w, s);
}

static void vint(wr_t *w, long long v)
{
	if (v >= 0)
		gpuenv_json_out_int(w, v);
	else
		gpuenv_json_out_null(w);
}

static void ki(wr_t *w, const char *key, long long v)
{
	gpuenv_json_out_key(w, key);
	vint(w, v);
}

static void kt(wr_t *w, const char *key, gpuenv_tri_t t)
{
	gpuenv_json_out_key(w, key);
	if (t == GPUENV_TRI_UNKNOWN)
		gpuenv_json_out_null(w);
	else
		gpuenv_json_out_bool(w, t == GPUENV_TRI_TRUE);
}

static void kb(wr_t *w, const char *key, bool v)
{
	gpuenv_json_out_key(w, key);
	gpuenv_json_out_bool(w, v);
}

static void knull(wr_t *w, const char *key)
{
	gpuenv_json_out_key(w, key);
	gpuenv_json_out_null(w);
}

/* key: { ... (the caller writes the members, then end(w, '}')) */
static void kopen(wr_t *w, const char *key, char brace)
{
	if (key)
		gpuenv_json_out_key(w, key);
	gpuenv_json_out_open(w, brace);
}

static void end(wr_t *w, char brace)
{
	gpuenv_json_out_close(w, brace);
}

static void kstrs(wr_t *w, const char *key, const gpuenv_facts_strs_t *s)
{
	if (s->state != GPUENV_FACT_SET) {
		knull(w, key);
		return;
	}
	kopen(w, key, '[');
	for (size_t i = 0; i < s->n; i++)
		gpuenv_json_out_str(w, s->items[i]);
	end(w, ']');
}

static void vver(wr_t *w, const gpuenv_facts_ver_t *v)
{
	if (!v->version) {
		gpuenv_json_out_null(w);
		return;
	}
	kopen(w, NULL, '{');
	ks(w, "version", v->version);
	ks(w, "source", v->source);
	ks(w, "from", v->from);
	end(w, '}');
}

static void kver(wr_t *w, const char *key, const gpuenv_facts_ver_t *v)
{
	gpuenv_json_out_key(w, key);
	vver(w, v);
}

/* ---- driver and GPUs ---------------------------------------------------- */

static void driver_json(wr_t *w, const gpuenv_facts_driver_t *d)
{
	kopen(w, "driver", '{');
	ks(w, "state", d->state);
	ks(w, "state_text", d->state_text);
	kt(w, "loaded", d->loaded);
	ks(w, "version", d->version);
	ks(w, "version_source", d->version_source);
	ks(w, "cuda_version", d->cuda_version);
	ki(w, "cuda_version_int", d->cuda_version_int);
	ks(w, "cuda_version_source", d->cuda_version_source);
	ks(w, "kernel_module", d->kernel_module);
	ks(w, "flavor", d->flavor);
	ks(w, "procfs", d->procfs);
	ks(w, "procfs_version", d->procfs_version);
	if (d->have_nvml) {
		kopen(w, "nvml", '{');
		ks(w, "state", d->nvml.state);
		kt(w, "loaded", d->nvml.loaded);
		ks(w, "path", d->nvml.path);
		ks(w, "version", d->nvml.version);
		ks(w, "error", d->nvml.error);
		ks(w, "message", d->nvml.message);
		ki(w, "device_count", d->nvml.device_count);
		end(w, '}');
	}
	if (d->have_libcuda) {
		kopen(w, "libcuda", '{');
		ks(w, "state", d->libcuda.state);
		ks(w, "path", d->libcuda.path);
		ks(w, "cuda_version", d->libcuda.cuda_version);
		ki(w, "cuda_version_int", d->libcuda.cuda_version_int);
		ks(w, "error", d->libcuda.error);
		ks(w, "message", d->libcuda.message);
		kt(w, "initialized", d->libcuda.initialized);
		ki(w, "device_count", d->libcuda.device_count);
		end(w, '}');
	}
	end(w, '}');
}

static void jetson_json(wr_t *w, const gpuenv_facts_jetson_t *j)
{
	if (!j->present) {
		knull(w, "jetson");
		return;
	}
	kopen(w, "jetson", '{');
	ks(w, "model", j->model);
	ks(w, "soc", j->soc);
	ks(w, "l4t", j->l4t);
	kt(w, "nvgpu", j->nvgpu);
	end(w, '}');
}

static void container_json(wr_t *w, const gpuenv_facts_container_t *c)
{
	kopen(w, "container", '{');
	kb(w, "docker", c->docker);
	kb(w, "podman", c->podman);
	ks(w, "nvidia_ctk", c->nvidia_ctk);
	kb(w, "docker_runtime_nvidia", c->docker_runtime_nvidia);
	kstrs(w, "cdi_specs", &c->cdi_specs);
	end(w, '}');
}

static void cvd_json(wr_t *w, const gpuenv_facts_cvd_t *c)
{
	kopen(w, "cuda_visible_devices", '{');
	kt(w, "set", c->set);
	ks(w, "value", c->value);
	if (c->have_visible) {
		kopen(w, "visible", '[');
		for (size_t i = 0; i < c->nvisible; i++)
			gpuenv_json_out_int(w, c->visible[i]);
		end(w, ']');
	} else {
		knull(w, "visible");
	}
	if (c->have_devices) {
		kopen(w, "devices", '[');
		for (size_t i = 0; i < c->ndevices; i++) {
			kopen(w, NULL, '{');
			ki(w, "gpu", c->devices[i].gpu);
			ks(w, "mig", c->devices[i].mig);
			end(w, '}');
		}
		end(w, ']');
	} else {
		knull(w, "devices");
	}
	ks(w, "invalid", c->invalid);
	kt(w, "ambiguous_order", c->ambiguous_order);
	end(w, '}');
}

static void pci_json(wr_t *w, const gpuenv_facts_pci_t *p)
{
	kopen(w, NULL, '{');
	ks(w, "bus_id", p->bus_id);
	ks(w, "vendor", p->vendor);
	ks(w, "device", p->device);
	ks(w, "class", p->class_);
	ks(w, "kind", p->kind);
	ks(w, "driver", p->driver);
	end(w, '}');
}

static void mig_json(wr_t *w, const gpuenv_facts_gpu_t *g)
{
	kopen(w, "mig", '{');
	ks(w, "current", g->mig_current);
	ks(w, "pending", g->mig_pending);
	kopen(w, "instances", '[');
	for (size_t i = 0; i < g->nmig_instances; i++) {
		const gpuenv_facts_mig_instance_t *m = &g->mig_instances[i];
		kopen(w, NULL, '{');
		ki(w, "index", m->index);
		ks(w, "uuid", m->uuid);
		ks(w, "name", m->name);
		ki(w, "gpu_instance", m->gpu_instance);
		ki(w, "compute_instance", m->compute_instance);
		ki(w, "memory_total", m->memory_total);
		ki(w, "memory_free", m->memory_free);
		kt(w, "visible", m->visible);
		ki(w, "cuda_index", m->cuda_index);
		end(w, '}');
	}
	end(w, ']');
	end(w, '}');
}

/* An object from a list of items whose first field is the key: a key given
 * twice is one member, at its first place with its last value (what a JSON
 * object made by setting each in turn holds).  SIZE_MAX when item i's key
 * came before; else the item whose value it gets. */
static const char *key_at(const void *items, size_t stride, size_t k)
{
	return *(const char *const *)(const void *)((const char *)items + k * stride);
}

static size_t member_of(const void *items, size_t stride, size_t n, size_t i)
{
	size_t last = i;

	for (size_t k = 0; k < n; k++)
		if (k != i && strcmp(key_at(items, stride, k), key_at(items, stride, i)) == 0) {
			if (k < i)
				return SIZE_MAX;
			last = k;
		}
	return last;
}

static void gpu_json(wr_t *w, const gpuenv_facts_gpu_t *g)
{
	const gpuenv_facts_kv_t *src = g->sources.items;

	kopen(w, NULL, '{');
	ki(w, "index", g->index);
	ks(w, "name", g->name);
	ks(w, "uuid", g->uuid);
	ks(w, "compute_capability", g->compute_capability);
	ks(w, "sm", g->sm);
	ks(w, "architecture", g->architecture);
	ki(w, "nvml_architecture", g->nvml_architecture);
	ki(w, "memory_total", g->memory_total);
	ki(w, "memory_free", g->memory_free);
	ks(w, "pci_bus_id", g->pci_bus_id);
	ks(w, "pci_device_id", g->pci_device_id);
	ks(w, "device_id", g->device_id);
	ks(w, "kernel_driver", g->kernel_driver);
	kt(w, "integrated", g->integrated);
	kt(w, "visible", g->visible);
	ki(w, "cuda_index", g->cuda_index);
	if (g->have_mig)
		mig_json(w, g);
	else
		knull(w, "mig");
	kopen(w, "nvlink", '[');
	for (size_t i = 0; i < g->nnvlink; i++) {
		const gpuenv_facts_nvlink_t *k = &g->nvlink[i];
		kopen(w, NULL, '{');
		ki(w, "link", k->link);
		kt(w, "active", k->active);
		ks(w, "peer_pci_bus_id", k->peer_pci_bus_id);
		ks(w, "peer_type", k->peer_type);
		ki(w, "peer_gpu", k->peer_gpu);
		end(w, '}');
	}
	end(w, ']');
	kopen(w, "sources", '{');
	for (size_t i = 0, m; i < g->sources.n; i++)
		if ((m = member_of(src, sizeof(*src), g->sources.n, i)) != SIZE_MAX)
			ks(w, src[i].key, src[m].value);
	end(w, '}');
	kstrs(w, "warnings", &g->warnings);
	end(w, '}');
}

static void warning_json(wr_t *w, const gpuenv_facts_warning_t *x)
{
	kopen(w, NULL, '{');
	ks(w, "id", x->id);
	ks(w, "message", x->message);
	ks(w, "hint", x->hint);
	if (x->has_gpu)
		ki(w, "gpu", x->gpu);
	ks(w, "source", x->source);
	if (x->has_gpu)
		ki(w, "code", x->code);
	end(w, '}');
}

/* ---- the software stack ------------------------------------------------- */

static void toolkit_json(wr_t *w, const gpuenv_facts_toolkit_t *t)
{
	const gpuenv_facts_component_t *c = t->components;

	kopen(w, NULL, '{');
	ks(w, "path", t->path);
	ks(w, "realpath", t->realpath);
	kstrs(w, "aliases", &t->aliases);
	kstrs(w, "found_by", &t->found_by);
	kver(w, "version", &t->version);
	ks(w, "nvcc", t->nvcc);
	ks(w, "nvcc_version", t->nvcc_version);
	ks(w, "lib_dir", t->lib_dir);
	ks(w, "include_dir", t->include_dir);
	kopen(w, "components", '{');
	for (size_t i = 0, m; i < t->ncomponents; i++) {
		if ((m = member_of(c, sizeof(*c), t->ncomponents, i)) == SIZE_MAX)
			continue;
		const gpuenv_facts_component_t *x = &c[m];
		kopen(w, c[i].name, '{');
		ks(w, "version", x->version);
		ks(w, "source", x->source);
		end(w, '}');
	}
	end(w, '}');
	end(w, '}');
}

/* "cuda_code": {cubins, ptx, entries, summary, error}; the summary only
 * when there is one. */
static void code_json(wr_t *w, const gpuenv_facts_strs_t *cubins, const gpuenv_facts_strs_t *ptx,
	long long entries, const char *summary, const char *error)
{
	kopen(w, "cuda_code", '{');
	kstrs(w, "cubins", cubins);
	kstrs(w, "ptx", ptx);
	ki(w, "entries", entries);
	if (summary)
		ks(w, "summary", summary);
	ks(w, "error", error);
	end(w, '}');
}

static void library_json(wr_t *w, const gpuenv_facts_library_t *l)
{
	kopen(w, NULL, '{');
	ks(w, "family", l->family);
	ks(w, "path", l->path);
	ks(w, "name", l->name);
	ks(w, "soname", l->soname);
	kstrs(w, "aliases", &l->aliases);
	kstrs(w, "where", &l->where);
	ks(w, "toolkit", l->toolkit);
	ks(w, "dist", l->dist);
	ks(w, "site", l->site);
	ki(w, "size", l->size);
	kver(w, "version", &l->version);
	kopen(w, "versions", '[');
	for (size_t i = 0; i < l->nversions; i++)
		vver(w, &l->versions[i]);
	end(w, ']');
	kstrs(w, "verdefs", &l->verdefs);
	if (l->code_state == GPUENV_FACT_SET || l->code_state == GPUENV_FACT_MISTYPED)
		code_json(w, &l->cubins, &l->ptx, l->code_entries, l->code_summary, l->code_error);
	end(w, '}');
}

static void loads_json(wr_t *w, const gpuenv_facts_binary_t *b)
{
	kopen(w, "loads", '{');
	ks(w, "binary", b->loads_binary);
	ki(w, "missing", b->loads_missing);
	kt(w, "truncated", b->loads_truncated);
	kopen(w, "objects", '[');
	for (size_t i = 0; i < b->nobjects; i++) {
		const gpuenv_facts_object_t *x = &b->objects[i];
		kopen(w, NULL, '{');
		ks(w, "path", x->path);
		ki(w, "parent", x->parent);
		ki(w, "depth", x->depth);
		ks(w, "error", x->error);
		ks(w, "soname", x->soname);
		ks(w, "rpath", x->rpath);
		ks(w, "runpath", x->runpath);
		kt(w, "nodeflib", x->nodeflib);
		kopen(w, "needs", '[');
		for (size_t k = 0; k < x->nneeds; k++) {
			const gpuenv_facts_need_t *n = &x->needs[k];
			kopen(w, NULL, '{');
			ks(w, "name", n->name);
			ks(w, "how", n->how);
			ks(w, "path", n->path);
			ki(w, "object", n->object);
			ks(w, "dir", n->dir);
			ks(w, "rule", n->rule);
			kstrs(w, "shadowed", &n->shadowed);
			if (n->rule_of)
				ks(w, "rule_of", n->rule_of);
			end(w, '}');
		}
		end(w, ']');
		end(w, '}');
	}
	end(w, ']');
	end(w, '}');
}

static void framework_json(wr_t *w, const gpuenv_facts_framework_t *f)
{
	kopen(w, NULL, '{');
	ks(w, "kind", f->kind);
	ks(w, "dist", f->dist);
	ks(w, "version", f->version);
	ks(w, "version_source", f->version_source);
	ks(w, "local", f->written.local);
	ks(w, "cuda", f->written.cuda);
	ks(w, "cuda_source", f->written.cuda_source);
	ks(w, "cudnn", f->cudnn);
	ks(w, "hip", f->hip);
	kt(w, "gpu", f->written.gpu);
	kopen(w, "binaries", '[');
	for (size_t i = 0; i < f->nbinaries; i++) {
		const gpuenv_facts_binary_t *b = &f->binaries[i];
		kopen(w, NULL, '{');
		ks(w, "path", b->path);
		if (b->have_loads)
			loads_json(w, b);
		else
			knull(w, "loads");
		if (b->code_state == GPUENV_FACT_SET || b->code_state == GPUENV_FACT_MISTYPED)
			code_json(w, &b->cubins, &b->ptx, b->entries, b->summary, b->error);
		end(w, '}');
	}
	end(w, ']');
	end(w, '}');
}

static void env_json(wr_t *w, const gpuenv_facts_env_t *e)
{
	kopen(w, NULL, '{');
	ks(w, "found_by", e->found_by);
	ks(w, "kind", e->kind);
	ks(w, "interpreter", e->interpreter);
	ks(w, "real_interpreter", e->real_interpreter);
	ks(w, "prefix", e->prefix);
	ks(w, "base_prefix", e->base_prefix);
	kt(w, "system_site_packages", e->system_site_packages);
	kver(w, "python", &e->python);
	ks(w, "python_xy", e->python_xy);
	kstrs(w, "sites", &e->sites);
	kopen(w, "distributions", '[');
	for (size_t i = 0; i < e->ndists; i++) {
		const gpuenv_facts_dist_t *d = &e->dists[i];
		kopen(w, NULL, '{');
		ks(w, "name", d->name);
		ks(w, "normalized", d->normalized);
		ks(w, "version", d->version);
		ks(w, "path", d->path);
		ks(w, "site", d->site);
		kt(w, "egg_info", d->egg_info);
		kt(w, "shadowed", d->shadowed);
		kstrs(w, "requires", &d->requires);
		end(w, '}');
	}
	end(w, ']');
	kopen(w, "frameworks", '[');
	for (size_t i = 0; i < e->nframeworks; i++)
		framework_json(w, &e->frameworks[i]);
	end(w, ']');
	end(w, '}');
}

static void ldcache_json(wr_t *w, const gpuenv_facts_t *f)
{
	if (!f->have_ldcache) {
		knull(w, "ldcache");
		return;
	}
	kopen(w, "ldcache", '{');
	ks(w, "path", f->ldcache.path);
	ks(w, "format", f->ldcache.format);
	ki(w, "entries", f->ldcache.entries);
	kstrs(w, "hwcaps", &f->ldcache.hwcaps);
	ks(w, "generator", f->ldcache.generator);
	end(w, '}');
}

/* ---- the document ------------------------------------------------------- */

static void host_json(wr_t *w, const gpuenv_facts_host_t *h)
{
	kopen(w, "host", '{');
	if (h->hostname)
		ks(w, "hostname", h->hostname);
	if (h->machine)
		ks(w, "machine", h->machine);
	if (h->kernel)
		ks(w, "kernel", h->kernel);
	ks(w, "root", h->root);
	if (h->libc)
		ks(w, "libc", h->libc);
	if (h->libc_version)
		ks(w, "libc_version", h->libc_version);
	end(w, '}');
}

int gpuenv_facts_write_parts(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f, gpuenv_buf_t *b,
	unsigned indent, unsigned parts)
{
	gpuenv_json_out_t o, *w = &o;
	int r;

	gpuenv_json_out_init(w, b, indent);
	if (parts & GPUENV_FACTS_HEAD) {
		kopen(w, NULL, '{');
		ks(w, "schema", f->schema);
		ks(w, "gpuenv", f->gpuenv);
		ks(w, "taken_at", f->taken_at);
		host_json(w, &f->host);
		kopen(w, "warnings", '[');
		for (size_t i = 0; i < f->nwarnings; i++)
			warning_json(w, &f->warnings[i]);
		end(w, ']');
		if (f->driver.present)
			driver_json(w, &f->driver);
		jetson_json(w, &f->jetson);
		if (f->cvd.present)
			cvd_json(w, &f->cvd);
		kopen(w, "pci", '[');
		for (size_t i = 0; i < f->npci; i++)
			pci_json(w, &f->pci[i]);
		end(w, ']');
		kopen(w, "gpus", '[');
		for (size_t i = 0; i < f->ngpus; i++)
			gpu_json(w, &f->gpus[i]);
		end(w, ']');
	} else {
		/* a part alone: inside the document's object, after a member
		 * ("gpus" always is), as the whole document would have it */
		w->depth = 1;
		w->empty = false;
	}
	if ((parts & GPUENV_FACTS_STACK) && f->have_toolkits) {
		kopen(w, "toolkits", '[');
		for (size_t i = 0; i < f->ntoolkits; i++)
			toolkit_json(w, &f->toolkits[i]);
		end(w, ']');
		ldcache_json(w, f);
		ks(w, "ld_library_path", f->ld_library_path);
	}
	if ((parts & GPUENV_FACTS_STACK) && f->have_libraries) {
		kopen(w, "libraries", '[');
		for (size_t i = 0; i < f->nlibraries; i++)
			library_json(w, &f->libraries[i]);
		end(w, ']');
		kopen(w, "environments", '[');
		for (size_t i = 0; i < f->nenvs; i++)
			env_json(w, &f->envs[i]);
		end(w, ']');
	}
	if (parts & GPUENV_FACTS_TAIL) {
		if (f->container.present)
			container_json(w, &f->container);
		if (f->probe_ms >= 0) {
			gpuenv_json_out_key(w, "probe_ms");
			gpuenv_json_out_real(w, f->probe_ms);
		}
		end(w, '}');
	}
	if (o.err == -EINVAL)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0,
			"a fact is not valid UTF-8 text (the probe escapes bytes as \\xHH)");
	if ((r = gpuenv_json_out_end(w)) != 0)
		return r == -ENOMEM ? gpuenv_oom(ctx, "writing the facts") : r;
	return 0;
}

int gpuenv_facts_write(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f, gpuenv_buf_t *b, unsigned indent)
{
	return gpuenv_facts_write_parts(ctx, f, b, indent, GPUENV_FACTS_ALL);
}

int gpuenv_facts_json(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f, json_t **out)
{
	gpuenv_json_scope_t scope;
	json_error_t jerr;
	gpuenv_buf_t b;
	json_t *doc;
	bool oom;
	int r;

	*out = NULL;
	gpuenv_buf_init(&b, ctx, SIZE_MAX);
	if ((r = gpuenv_facts_write(ctx, f, &b, 0)) != 0) {
		gpuenv_buf_free(&b);
		return r;
	}
	gpuenv_json_enter(ctx, &scope);
	doc = json_loadb(b.data, b.len, 0, &jerr);
	oom = gpuenv_json_leave(&scope);
	gpuenv_buf_free(&b);
	if (!doc || oom) {
		gpuenv_json_enter(ctx, &scope);
		json_decref(doc);
		gpuenv_json_leave(&scope);
		return gpuenv_oom(ctx, "reading the facts written");
	}
	*out = doc;
	return 0;
}
