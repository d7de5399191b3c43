/* The facts document (docs/probe-schema.md) decoded once into
 * gpuenv_facts_t (include/gpuenv/facts.h).
 *
 * The only required structure is the document itself: JSON, an object, a
 * "schema" of major version 1.  Everything inside is optional and read
 * leniently: a field of another type reads as unknown and says so in its
 * state, a record that is not an object is skipped (the others keep their
 * index in the document), so no rule ever acts on a fact it cannot trust. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/facts.h"
#include "gpuenv/kb.h"

typedef struct dec {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	int err; /* -ENOMEM once memory ran out */
} dec_t;

/* ---- leaves ------------------------------------------------------------- */

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static unsigned char state_of(const json_t *v, bool ok)
{
	if (!v)
		return GPUENV_FACT_ABSENT;
	if (json_is_null(v))
		return GPUENV_FACT_NULL;
	return ok ? GPUENV_FACT_SET : GPUENV_FACT_MISTYPED;
}

/* A copy of a JSON string in the arena.  A NUL (a \u0000 in the text)
 * becomes the four characters \x00: the form docs/probe-schema.md gives
 * bytes that are not text. */
static const char *copy_str(dec_t *d, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), nul = 0;
	char *out, *o;

	for (size_t i = 0; i < n; i++)
		nul += s[i] == '\0';
	if (n > SIZE_MAX / 4 - 1 || !(out = gpuenv_arena_alloc(d->a, n + 3 * nul + 1))) {
		d->err = -ENOMEM;
		return NULL;
	}
	if (!nul) {
		memcpy(out, s, n);
		out[n] = '\0';
		return out;
	}
	o = out;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\0') {
			memcpy(o, "\\x00", 4);
			o += 4;
		} else
			*o++ = s[i];
	}
	*o = '\0';
	return out;
}

static const char *str_st(dec_t *d, const json_t *o, const char *key, unsigned char *st)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	if (st)
		*st = state_of(v, json_is_string(v));
	return json_is_string(v) ? copy_str(d, v) : NULL;
}

static const char *str(dec_t *d, const json_t *o, const char *key)
{
	return str_st(d, o, key, NULL);
}

static long long num(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (long long)json_integer_value(v) : -1;
}

static gpuenv_tri_t tri(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_true(v) ? GPUENV_TRI_TRUE : json_is_false(v) ? GPUENV_TRI_FALSE
								     : GPUENV_TRI_UNKNOWN;
}

static const json_t *obj(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_object(v) ? v : NULL;
}

static const json_t *arr(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_array(v) ? v : NULL;
}

/* A list of strings: unknown as a whole when one entry is not a string. */
static gpuenv_facts_strs_t strs(dec_t *d, const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	gpuenv_facts_strs_t out = { NULL, 0, state_of(v, json_is_array(v)) };
	size_t n = json_is_array(v) ? json_array_size(v) : 0;
	const char **items;

	if (out.state != GPUENV_FACT_SET)
		return out;
	for (size_t i = 0; i < n; i++)
		if (!json_is_string(json_array_get(v, i))) {
			out.state = GPUENV_FACT_MISTYPED;
			return out;
		}
	if (!n)
		return out;
	if (!(items = gpuenv_arena_calloc(d->a, n, sizeof(*items)))) {
		d->err = -ENOMEM;
		return out;
	}
	for (size_t i = 0; i < n; i++)
		items[i] = copy_str(d, json_array_get(v, i));
	out.items = items;
	out.n = n;
	return out;
}

static gpuenv_facts_ver_t ver(dec_t *d, const json_t *o, const char *key)
{
	const json_t *v = obj(o, key);
	gpuenv_facts_ver_t out = { str(d, v, "version"), str(d, v, "source"), str(d, v, "from") };
	return out;
}

/* Records: an array's objects, each decoded by fn into an element of the
 * type; non-objects skipped; each keeps its index in the array in `at`. */
typedef void (*rec_fn)(dec_t *d, const json_t *o, void *out);

/* `at` is a member of every record type; set it by offset. */
#define REC(d, o, key, type, fn, n)                                                          \
	((const type *)records_at((d), (o), (key), sizeof(type), offsetof(type, at), (fn), (n)))

static const void *records_at(dec_t *d, const json_t *o, const char *key, size_t sz,
	size_t at_off, rec_fn fn, size_t *n)
{
	const json_t *v = arr(o, key);
	size_t m = v ? json_array_size(v) : 0, k = 0;
	char *out;

	*n = 0;
	if (!m)
		return NULL;
	if (!(out = gpuenv_arena_calloc(d->a, m, sz))) {
		d->err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < m && !d->err; i++) {
		const json_t *e = json_array_get(v, i);
		if (!json_is_object(e))
			continue;
		fn(d, e, out + k * sz);
		memcpy(out + k * sz + at_off, &i, sizeof(i));
		k++;
	}
	*n = k;
	return out;
}

/* ---- records ------------------------------------------------------------ */

static void dec_warning(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_warning_t *w = p;

	w->id = str(d, o, "id");
	w->message = str(d, o, "message");
	w->hint = str(d, o, "hint");
	w->source = str(d, o, "source");
	w->code = num(o, "code");
	w->gpu = num(o, "gpu");
	w->has_gpu = json_object_get(o, "gpu") != NULL;
}

static void dec_pci(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_pci_t *x = p;

	x->bus_id = str(d, o, "bus_id");
	x->vendor = str(d, o, "vendor");
	x->device = str(d, o, "device");
	x->class_ = str(d, o, "class");
	x->kind = str(d, o, "kind");
	x->driver = str(d, o, "driver");
}

static void dec_mig(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_mig_instance_t *m = p;

	m->index = num(o, "index");
	m->uuid = str(d, o, "uuid");
	m->name = str(d, o, "name");
	m->gpu_instance = num(o, "gpu_instance");
	m->compute_instance = num(o, "compute_instance");
	m->memory_total = num(o, "memory_total");
	m->memory_free = num(o, "memory_free");
	m->visible = tri(o, "visible");
	m->cuda_index = num(o, "cuda_index");
}

static void dec_nvlink(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_nvlink_t *l = p;

	l->link = num(o, "link");
	l->active = tri(o, "active");
	l->peer_pci_bus_id = str(d, o, "peer_pci_bus_id");
	l->peer_type = str(d, o, "peer_type");
	l->peer_gpu = num(o, "peer_gpu");
}

static gpuenv_facts_sources_t sources(dec_t *d, const json_t *o)
{
	const json_t *s = obj(o, "sources"), *v;
	gpuenv_facts_sources_t out = { NULL, 0 };
	size_t n = s ? json_object_size(s) : 0, k = 0;
	gpuenv_facts_kv_t *kv;
	const char *key;

	if (!n)
		return out;
	if (!(kv = gpuenv_arena_calloc(d->a, n, sizeof(*kv)))) {
		d->err = -ENOMEM;
		return out;
	}
	json_object_foreach((json_t *)s, key, v) {
		if (!json_is_string(v))
			continue;
		kv[k].key = gpuenv_arena_strndup(d->a, key, strlen(key));
		kv[k].value = copy_str(d, v);
		if (!kv[k].key)
			d->err = -ENOMEM;
		k++;
	}
	out.items = kv;
	out.n = k;
	return out;
}

static void dec_gpu(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_gpu_t *g = p;
	const json_t *mig = obj(o, "mig");

	g->index = num(o, "index");
	g->name = str(d, o, "name");
	g->uuid = str(d, o, "uuid");
	g->compute_capability = str(d, o, "compute_capability");
	g->sm = str(d, o, "sm");
	g->architecture = str(d, o, "architecture");
	g->nvml_architecture = num(o, "nvml_architecture");
	g->memory_total = num(o, "memory_total");
	g->memory_free = num(o, "memory_free");
	g->pci_bus_id = str(d, o, "pci_bus_id");
	g->pci_device_id = str(d, o, "pci_device_id");
	g->device_id = str(d, o, "device_id");
	g->kernel_driver = str(d, o, "kernel_driver");
	g->integrated = tri(o, "integrated");
	g->visible = tri(o, "visible");
	g->cuda_index = num(o, "cuda_index");
	g->have_mig = mig != NULL;
	g->mig_current = str(d, mig, "current");
	g->mig_pending = str(d, mig, "pending");
	g->mig_instances = REC(d, mig, "instances", gpuenv_facts_mig_instance_t, dec_mig,
		&g->nmig_instances);
	g->nvlink = REC(d, o, "nvlink", gpuenv_facts_nvlink_t, dec_nvlink, &g->nnvlink);
	g->sources = sources(d, o);
	g->warnings = strs(d, o, "warnings");
}

/* "components": {name: {version, source}}; entries that are not objects
 * skipped. */
static const gpuenv_facts_component_t *components(dec_t *d, const json_t *o, size_t *n)
{
	const json_t *c = obj(o, "components"), *v;
	size_t m = c ? json_object_size(c) : 0;
	gpuenv_facts_component_t *out;
	const char *key;

	*n = 0;
	if (!m)
		return NULL;
	if (!(out = gpuenv_arena_calloc(d->a, m, sizeof(*out)))) {
		d->err = -ENOMEM;
		return NULL;
	}
	json_object_foreach((json_t *)c, key, v) {
		if (!json_is_object(v))
			continue;
		out[*n].name = gpuenv_arena_strndup(d->a, key, strlen(key));
		out[*n].version = str(d, v, "version");
		out[*n].source = str(d, v, "source");
		if (!out[*n].name)
			d->err = -ENOMEM;
		(*n)++;
	}
	return out;
}

/* "versions": [{version, source, from} or null]; other entries skipped. */
static const gpuenv_facts_ver_t *versions(dec_t *d, const json_t *o, size_t *n)
{
	const json_t *v = arr(o, "versions");
	size_t m = v ? json_array_size(v) : 0;
	gpuenv_facts_ver_t *out;

	*n = 0;
	if (!m)
		return NULL;
	if (!(out = gpuenv_arena_calloc(d->a, m, sizeof(*out)))) {
		d->err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < m; i++) {
		const json_t *e = json_array_get(v, i);
		if (json_is_object(e)) {
			out[*n].version = str(d, e, "version");
			out[*n].source = str(d, e, "source");
			out[*n].from = str(d, e, "from");
		} else if (!json_is_null(e)) {
			continue;
		}
		(*n)++;
	}
	return out;
}

static void dec_toolkit(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_toolkit_t *t = p;

	t->path = str(d, o, "path");
	t->realpath = str(d, o, "realpath");
	t->nvcc = str(d, o, "nvcc");
	t->nvcc_version = str(d, o, "nvcc_version");
	t->lib_dir = str(d, o, "lib_dir");
	t->include_dir = str(d, o, "include_dir");
	t->aliases = strs(d, o, "aliases");
	t->found_by = strs(d, o, "found_by");
	t->version = ver(d, o, "version");
	t->components = components(d, o, &t->ncomponents);
}

/* "cuda_code": {cubins, ptx, entries, summary, error}. */
static void code_of(dec_t *d, const json_t *o, unsigned char *state, gpuenv_facts_strs_t *cubins,
	gpuenv_facts_strs_t *ptx, const char **summary, const char **error, long long *entries)
{
	const json_t *code = json_is_object(o) ? json_object_get(o, "cuda_code") : NULL;

	*state = state_of(code, json_is_object(code));
	*entries = -1;
	if (!json_is_object(code))
		return;
	*cubins = strs(d, code, "cubins");
	*ptx = strs(d, code, "ptx");
	*entries = num(code, "entries");
	*summary = str(d, code, "summary");
	*error = str(d, code, "error");
	/* a list of another type makes the code unknown */
	if (cubins->state == GPUENV_FACT_MISTYPED || ptx->state == GPUENV_FACT_MISTYPED)
		*state = GPUENV_FACT_MISTYPED;
}

static void dec_library(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_library_t *l = p;

	l->family = str(d, o, "family");
	l->path = str(d, o, "path");
	l->name = str(d, o, "name");
	l->soname = str(d, o, "soname");
	l->toolkit = str(d, o, "toolkit");
	l->dist = str(d, o, "dist");
	l->site = str(d, o, "site");
	l->aliases = strs(d, o, "aliases");
	l->where = strs(d, o, "where");
	l->size = num(o, "size");
	l->version = ver(d, o, "version");
	l->versions = versions(d, o, &l->nversions);
	l->verdefs = strs(d, o, "verdefs");
	code_of(d, o, &l->code_state, &l->cubins, &l->ptx, &l->code_summary, &l->code_error,
		&l->code_entries);
}

static void dec_dist(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_dist_t *x = p;

	x->name = str(d, o, "name");
	x->normalized = str(d, o, "normalized");
	x->version = str(d, o, "version");
	x->path = str(d, o, "path");
	x->site = str(d, o, "site");
	x->egg_info = tri(o, "egg_info");
	x->shadowed = tri(o, "shadowed");
	x->requires = strs(d, o, "requires");
}

static void dec_need(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_need_t *n = p;

	n->name = str(d, o, "name");
	n->how = str(d, o, "how");
	n->path = str(d, o, "path");
	n->object = num(o, "object");
	n->dir = str(d, o, "dir");
	n->rule = str(d, o, "rule");
	n->shadowed = strs(d, o, "shadowed");
	n->rule_of = str(d, o, "rule_of");
}

static void dec_object(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_object_t *x = p;

	x->path = str(d, o, "path");
	x->soname = str(d, o, "soname");
	x->error = str(d, o, "error");
	x->parent = num(o, "parent");
	x->depth = num(o, "depth");
	x->rpath = str(d, o, "rpath");
	x->runpath = str(d, o, "runpath");
	x->nodeflib = tri(o, "nodeflib");
	x->needs = REC(d, o, "needs", gpuenv_facts_need_t, dec_need, &x->nneeds);
}

static void dec_binary(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_binary_t *b = p;
	const json_t *loads = obj(o, "loads");

	b->path = str(d, o, "path");
	code_of(d, o, &b->code_state, &b->cubins, &b->ptx, &b->summary, &b->error, &b->entries);
	b->have_loads = loads != NULL;
	b->loads_binary = str(d, loads, "binary");
	b->loads_missing = num(loads, "missing");
	b->loads_truncated = tri(loads, "truncated");
	b->objects = REC(d, loads, "objects", gpuenv_facts_object_t, dec_object, &b->nobjects);
}

/* "cu128" -> "12.8", "cu130" -> "13.0", "cu92" -> "9.2"; NULL otherwise. */
static const char *cuda_of_label(gpuenv_arena_t *a, const char *local, bool *oom)
{
	char buf[16], *s;

	/* the one reader of a build tag: "cu126" -> "12.6" */
	if (!local || !gpuenv_kb_cuda_of_tag(gpuenv_str(local), buf, sizeof(buf), NULL))
		return NULL;
	if (!(s = gpuenv_arena_strndup(a, buf, strlen(buf))))
		*oom = true;
	return s;
}

int gpuenv_facts_framework_derive(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_facts_framework_t *f)
{
	const char *plus;
	bool oom = false;

	f->local = f->written.local;
	f->cuda = f->written.cuda;
	f->cuda_source = f->written.cuda_source;
	f->gpu = f->written.gpu;
	if (!f->local && f->version && (plus = strchr(f->version, '+')))
		f->local = plus + 1;
	/* a torch without torch/version.py: the +cuXYZ of its version says
	 * which CUDA it was built for (version.py, when read, says so itself) */
	if (!f->cuda && f->cuda_state != GPUENV_FACT_MISTYPED && f->kind &&
		strcmp(f->kind, "torch") == 0 &&
		!(f->cuda_source && strcmp(f->cuda_source, "version.py") == 0) &&
		(f->cuda = cuda_of_label(arena, f->local, &oom)) != NULL) {
		f->cuda_source = "local-version";
		f->gpu = GPUENV_TRI_TRUE;
	}
	return oom ? gpuenv_oom(ctx, "decoding the facts") : 0;
}

static void dec_framework(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_framework_t *f = p;

	f->kind = str(d, o, "kind");
	f->dist = str(d, o, "dist");
	f->version = str(d, o, "version");
	f->version_source = str(d, o, "version_source");
	f->written.local = str(d, o, "local");
	f->written.cuda = str_st(d, o, "cuda", &f->cuda_state);
	f->written.cuda_source = str(d, o, "cuda_source");
	f->cudnn = str(d, o, "cudnn");
	f->hip = str(d, o, "hip");
	f->written.gpu = tri(o, "gpu");
	if (gpuenv_facts_framework_derive(d->ctx, d->a, f))
		d->err = -ENOMEM;
	f->binaries = REC(d, o, "binaries", gpuenv_facts_binary_t, dec_binary, &f->nbinaries);
}

static void dec_env(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_env_t *e = p;

	e->found_by = str(d, o, "found_by");
	e->kind = str(d, o, "kind");
	e->interpreter = str(d, o, "interpreter");
	e->real_interpreter = str(d, o, "real_interpreter");
	e->prefix = str(d, o, "prefix");
	e->base_prefix = str(d, o, "base_prefix");
	e->system_site_packages = tri(o, "system_site_packages");
	e->python = ver(d, o, "python");
	e->python_xy = str(d, o, "python_xy");
	e->sites = strs(d, o, "sites");
	e->dists = REC(d, o, "distributions", gpuenv_facts_dist_t, dec_dist, &e->ndists);
	e->frameworks = REC(d, o, "frameworks", gpuenv_facts_framework_t, dec_framework,
		&e->nframeworks);
}

static void dec_driver(dec_t *d, const json_t *o, gpuenv_facts_driver_t *x)
{
	const json_t *nvml = obj(o, "nvml"), *lc = obj(o, "libcuda");

	x->present = o != NULL;
	x->state = str(d, o, "state");
	x->state_text = str(d, o, "state_text");
	x->loaded = tri(o, "loaded");
	x->version = str(d, o, "version");
	x->version_source = str(d, o, "version_source");
	x->cuda_version = str(d, o, "cuda_version");
	x->cuda_version_source = str(d, o, "cuda_version_source");
	x->cuda_version_int = num(o, "cuda_version_int");
	x->kernel_module = str(d, o, "kernel_module");
	x->flavor = str(d, o, "flavor");
	x->procfs = str(d, o, "procfs");
	x->procfs_version = str(d, o, "procfs_version");
	x->have_nvml = nvml != NULL;
	x->nvml.state = str(d, nvml, "state");
	x->nvml.path = str(d, nvml, "path");
	x->nvml.version = str(d, nvml, "version");
	x->nvml.error = str(d, nvml, "error");
	x->nvml.message = str(d, nvml, "message");
	x->nvml.loaded = tri(nvml, "loaded");
	x->nvml.device_count = num(nvml, "device_count");
	x->have_libcuda = lc != NULL;
	x->libcuda.state = str(d, lc, "state");
	x->libcuda.path = str(d, lc, "path");
	x->libcuda.cuda_version = str(d, lc, "cuda_version");
	x->libcuda.error = str(d, lc, "error");
	x->libcuda.message = str(d, lc, "message");
	x->libcuda.cuda_version_int = num(lc, "cuda_version_int");
	x->libcuda.initialized = tri(lc, "initialized");
	x->libcuda.device_count = num(lc, "device_count");
}

static void dec_cvd_dev(dec_t *d, const json_t *o, void *p)
{
	gpuenv_facts_cvd_device_t *x = p;

	x->gpu = num(o, "gpu");
	x->mig = str(d, o, "mig");
}

static void dec_cvd(dec_t *d, const json_t *o, gpuenv_facts_cvd_t *c)
{
	const json_t *vis = arr(o, "visible"), *devs = arr(o, "devices");

	c->present = o != NULL;
	c->set = tri(o, "set");
	c->value = str(d, o, "value");
	c->invalid = str(d, o, "invalid");
	c->ambiguous_order = tri(o, "ambiguous_order");
	if (vis) {
		size_t n = json_array_size(vis);
		long long *v = n ? gpuenv_arena_calloc(d->a, n, sizeof(*v)) : NULL;
		c->have_visible = true;
		if (n && !v)
			d->err = -ENOMEM;
		for (size_t i = 0; v && i < n; i++) {
			const json_t *e = json_array_get(vis, i);
			if (!json_is_integer(e)) {
				/* one entry that is not an index: the list is unknown */
				c->have_visible = false;
				c->nvisible = 0;
				break;
			}
			v[c->nvisible++] = (long long)json_integer_value(e);
		}
		c->visible = v;
	}
	if (devs) {
		/* the devices CUDA enumerates: each entry counts */
		size_t n = json_array_size(devs);
		gpuenv_facts_cvd_device_t *v = n ? gpuenv_arena_calloc(d->a, n, sizeof(*v)) : NULL;
		c->have_devices = true;
		if (n && !v)
			d->err = -ENOMEM;
		for (size_t i = 0; v && i < n; i++) {
			const json_t *e = json_array_get(devs, i);
			v[i].gpu = -1;
			if (json_is_object(e))
				dec_cvd_dev(d, e, &v[i]);
		}
		c->devices = v;
		c->ndevices = v ? n : 0;
	}
}

/* ---- the document ------------------------------------------------------- */

static const char *file_or(const char *name)
{
	return name && *name ? name : NULL;
}

static int check_schema(gpuenv_ctx_t *ctx, const json_t *doc, const char *name)
{
	const json_t *v;
	const char *s, *p = "gpuenv.facts/";
	size_t pl = strlen(p), n;

	if (!json_is_object(doc)) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, file_or(name), 0, 0,
			"not a gpuenv facts document: the top level is %s, not an object",
			type_name(doc));
		return gpuenv_hint(ctx, "write the facts with `gpuenv probe --json > facts.json`");
	}
	v = json_object_get(doc, "schema");
	if (!json_is_string(v)) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, file_or(name), 0, 0,
			v ? "not a gpuenv facts document: \"schema\" is %s, not a string"
			  : "not a gpuenv facts document: no \"schema\" key%s",
			v ? type_name(v) : "");
		return gpuenv_hint(ctx, "write the facts with `gpuenv probe --json > facts.json`");
	}
	s = json_string_value(v);
	n = strspn(s + (strncmp(s, p, pl) == 0 ? pl : 0), "0123456789");
	if (strncmp(s, p, pl) != 0 || n == 0 || (s[pl + n] != '\0' && s[pl + n] != '.')) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, file_or(name), 0, 0,
			"not a gpuenv facts document: \"schema\" is \"%.100s\", not \"gpuenv.facts/1\"", s);
		return gpuenv_hint(ctx, "write the facts with `gpuenv probe --json > facts.json`");
	}
	if (!(n == 1 && s[pl] == '1')) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, file_or(name), 0, 0,
			"facts schema \"%.100s\" is not supported: this gpuenv reads gpuenv.facts/1", s);
		return gpuenv_hint(ctx, "take the snapshot with a gpuenv of the same major version");
	}
	return 0;
}

int gpuenv_facts_decode(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const json_t *doc,
	const char *name, const gpuenv_facts_t **out)
{
	dec_t d = { ctx, arena, 0 };
	gpuenv_facts_t *f;
	const json_t *host, *ldlp;
	int rc;

	*out = NULL;
	if ((rc = check_schema(ctx, doc, name)) != 0)
		return rc;
	if (!(f = gpuenv_arena_calloc(arena, 1, sizeof(*f))))
		return gpuenv_oom(ctx, "decoding the facts");
	f->name = gpuenv_arena_strndup(arena, name ? name : "", name ? strlen(name) : 0);
	f->schema = str(&d, doc, "schema");
	f->gpuenv = str(&d, doc, "gpuenv");
	f->taken_at = str(&d, doc, "taken_at");
	{
		const json_t *ms = json_object_get(doc, "probe_ms");
		f->probe_ms = json_is_number(ms) && json_number_value(ms) >= 0 ? json_number_value(ms) : -1;
	}
	host = obj(doc, "host");
	f->host.hostname = str(&d, host, "hostname");
	f->host.machine = str(&d, host, "machine");
	f->host.kernel = str(&d, host, "kernel");
	f->host.root = str(&d, host, "root");
	f->host.libc = str(&d, host, "libc");
	f->host.libc_version = str(&d, host, "libc_version");
	f->warnings = REC(&d, doc, "warnings", gpuenv_facts_warning_t, dec_warning, &f->nwarnings);
	dec_driver(&d, obj(doc, "driver"), &f->driver);
	{
		const json_t *j = obj(doc, "jetson");
		f->jetson.present = j != NULL;
		f->jetson.model = str(&d, j, "model");
		f->jetson.soc = str(&d, j, "soc");
		f->jetson.l4t = str(&d, j, "l4t");
		f->jetson.nvgpu = tri(j, "nvgpu");
	}
	{
		const json_t *c = obj(doc, "container");
		f->container.present = c != NULL;
		f->container.docker = tri(c, "docker") == GPUENV_TRI_TRUE;
		f->container.podman = tri(c, "podman") == GPUENV_TRI_TRUE;
		f->container.nvidia_ctk = str(&d, c, "nvidia_ctk");
		f->container.docker_runtime_nvidia = tri(c, "docker_runtime_nvidia") == GPUENV_TRI_TRUE;
		f->container.cdi_specs = strs(&d, c, "cdi_specs");
	}
	dec_cvd(&d, obj(doc, "cuda_visible_devices"), &f->cvd);
	f->pci = REC(&d, doc, "pci", gpuenv_facts_pci_t, dec_pci, &f->npci);
	f->gpus = REC(&d, doc, "gpus", gpuenv_facts_gpu_t, dec_gpu, &f->ngpus);
	f->have_toolkits = arr(doc, "toolkits") != NULL;
	f->toolkits = REC(&d, doc, "toolkits", gpuenv_facts_toolkit_t, dec_toolkit, &f->ntoolkits);
	{
		const json_t *lc = obj(doc, "ldcache");
		f->have_ldcache = lc != NULL;
		f->ldcache.path = str(&d, lc, "path");
		f->ldcache.format = str(&d, lc, "format");
		f->ldcache.entries = num(lc, "entries");
		f->ldcache.hwcaps = strs(&d, lc, "hwcaps");
		f->ldcache.generator = str(&d, lc, "generator");
	}
	ldlp = json_object_get(doc, "ld_library_path");
	f->ld_library_path = json_is_string(ldlp) ? copy_str(&d, ldlp) : NULL;
	f->have_libraries = arr(doc, "libraries") != NULL;
	f->libraries = REC(&d, doc, "libraries", gpuenv_facts_library_t, dec_library,
		&f->nlibraries);
	f->envs = REC(&d, doc, "environments", gpuenv_facts_env_t, dec_env, &f->nenvs);
	if (d.err || !f->name)
		return gpuenv_oom(ctx, "decoding the facts");
	*out = f;
	return 0;
}

/* jansson's error, in our words. */
static const char *syntax_text(const json_error_t *je)
{
	switch (json_error_code(je)) {
	case json_error_invalid_utf8:
		return "the text is not valid UTF-8 (facts hold bytes that are not text as \\xHH)";
	case json_error_premature_end_of_input:
		return "the document ends early (a truncated file?)";
	case json_error_end_of_input_expected:
		return "text after the end of the document";
	case json_error_numeric_overflow:
		return "a number too big for a 64-bit integer";
	case json_error_null_byte_in_key:
	case json_error_null_character:
		return "a NUL character in a key";
	case json_error_duplicate_key:
		return "a key given twice in one object";
	case json_error_stack_overflow:
		return "arrays or objects nested too deep";
	default:
		return "malformed JSON";
	}
}

int gpuenv_facts_read_json(gpuenv_ctx_t *ctx, const char *text, size_t len, const char *name,
	json_t **out)
{
	gpuenv_json_scope_t scope;
	json_error_t je;
	json_t *doc;
	bool oom;

	*out = NULL;
	if (len > GPUENV_FACTS_MAX) {
		gpuenv_fail(ctx, GPUENV_ETOOBIG, file_or(name), 0, 0,
			"the facts are %zu bytes, more than the %zu MiB gpuenv reads", len,
			GPUENV_FACTS_MAX >> 20);
		return gpuenv_hint(ctx, "probe with --gpus-only, or --env for one environment");
	}
	gpuenv_json_enter(ctx, &scope);
	/* \u0000: an older gpuenv wrote NUL bytes so; read as \x00 */
	doc = json_loadb(text ? text : "", len, JSON_ALLOW_NUL, &je);
	oom = gpuenv_json_leave(&scope);
	if (oom || (!doc && json_error_code(&je) == json_error_out_of_memory)) {
		json_decref(doc);
		return gpuenv_oom(ctx, "reading the facts");
	}
	if (!doc) {
		gpuenv_fail(ctx, GPUENV_ESYNTAX, file_or(name) ? name : "<facts>",
			je.line > 0 ? (unsigned)je.line : 0, je.column > 0 ? (unsigned)je.column : 0,
			"%s", syntax_text(&je));
		return gpuenv_hint(ctx, "the facts are the JSON `gpuenv probe --json` writes; take a "
					"new snapshot");
	}
	*out = doc;
	return 0;
}

int gpuenv_facts_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *text, size_t len,
	const char *name, const gpuenv_facts_t **out)
{
	gpuenv_json_scope_t scope;
	json_t *doc;
	int rc;

	*out = NULL;
	if ((rc = gpuenv_facts_read_json(ctx, text, len, name, &doc)) != 0)
		return rc;
	rc = gpuenv_facts_decode(ctx, arena, doc, name, out);
	gpuenv_json_enter(ctx, &scope);
	json_decref(doc);
	gpuenv_json_leave(&scope);
	return rc;
}

/* ---- small readers ------------------------------------------------------ */

const char *gpuenv_facts_source(const gpuenv_facts_sources_t *s, const char *key)
{
	for (size_t i = 0; s && key && i < s->n; i++)
		if (s->items[i].key && strcmp(s->items[i].key, key) == 0)
			return s->items[i].value;
	return NULL;
}

bool gpuenv_facts_cc(const char *s, int *maj, int *min)
{
	size_t a, b;

	if (!s)
		return false;
	a = strspn(s, "0123456789");
	if (a < 1 || a > 2 || s[a] != '.')
		return false;
	b = strspn(s + a + 1, "0123456789");
	if (b != 1 || s[a + 1 + b] != '\0')
		return false;
	*maj = a == 2 ? (s[0] - '0') * 10 + (s[1] - '0') : s[0] - '0';
	*min = s[a + 1] - '0';
	return true;
}

bool gpuenv_facts_gpu_cc(const gpuenv_facts_gpu_t *g, int *maj, int *min)
{
	const char *sm = g->sm;
	size_t n;

	if (gpuenv_facts_cc(g->compute_capability, maj, min))
		return true;
	/* "sm_90", "sm_90a", "sm_120" */
	if (!sm || strncmp(sm, "sm_", 3) != 0)
		return false;
	n = strspn(sm + 3, "0123456789");
	if (n < 2 || n > 3 || (sm[3 + n] && !(strchr("af", sm[3 + n]) && !sm[4 + n])))
		return false;
	*maj = n == 3 ? (sm[3] - '0') * 10 + (sm[4] - '0') : sm[3] - '0';
	*min = sm[3 + n - 1] - '0';
	return true;
}

bool gpuenv_facts_gpu_visible(const gpuenv_facts_t *f, const gpuenv_facts_gpu_t *g)
{
	long long idx = g->index >= 0 ? g->index : (long long)g->at;

	if (g->visible != GPUENV_TRI_UNKNOWN)
		return g->visible == GPUENV_TRI_TRUE;
	if (f->cvd.set == GPUENV_TRI_TRUE && f->cvd.have_visible) {
		for (size_t i = 0; i < f->cvd.nvisible; i++)
			if (f->cvd.visible[i] == idx)
				return true;
		return false;
	}
	return true;
}

size_t gpuenv_facts_active_env(const gpuenv_facts_t *f)
{
	for (size_t i = 0; i < f->nenvs; i++)
		if (f->envs[i].found_by && strcmp(f->envs[i].found_by, "VIRTUAL_ENV") == 0)
			return i;
	return f->nenvs ? 0 : SIZE_MAX;
}
