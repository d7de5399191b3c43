/* The facts writer's software-stack part (include/gpuenv/facts_write.h):
 * JSON of toolkits, library copies, loader resolutions and Python
 * environments.  Used by gpuenv probe --json and the debug verbs, so both
 * print the same shape.  Every string of bytes read from the machine goes
 * through gpuenv_json_text (docs/probe-schema.md "Strings"). */
#include "gpuenv/facts_write.h"

#include <stdint.h>

/* ---- JSON ----------------------------------------------------------------- */

json_t *gpuenv_json_text(gpuenv_ctx_t *ctx, const char *s, size_t n)
{
	gpuenv_buf_t b;
	json_t *j;

	size_t i = 0;

	if (!s)
		return json_null();
	/* the common case: text already, copied as it is (and not checked by
	 * jansson a second time); plain ASCII is told apart in one quick pass */
	while (i < n && (unsigned char)s[i] - 1u < 0x7fu && s[i] != '\\')
		i++;
	if (i == n || gpuenv_text_valid(s + i, n - i, 0))
		return json_stringn_nocheck(s, n);
	gpuenv_buf_init(&b, ctx, 0);
	if (gpuenv_text_escape(&b, s, n, 0) < 0) {
		gpuenv_buf_free(&b);
		gpuenv_oom(ctx, "escaping a string for JSON");
		return NULL;
	}
	j = json_stringn_nocheck(b.data, b.len);
	gpuenv_buf_free(&b);
	return j;
}

static json_t *jstr(gpuenv_ctx_t *ctx, gpuenv_str_t s)
{
	return s.ptr ? gpuenv_json_text(ctx, s.ptr, s.len) : json_null();
}

static json_t *jstrs(gpuenv_ctx_t *ctx, const gpuenv_str_t *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, jstr(ctx, v[i]));
	return a;
}

static json_t *jversion(gpuenv_ctx_t *ctx, const gpuenv_stack_version_t *v)
{
	if (!v->text.ptr)
		return json_null();
	return json_pack("{s:o, s:s, s:o}", "version", jstr(ctx, v->text), "source",
		gpuenv_vsrc_name(v->src), "from", jstr(ctx, v->origin));
}

static json_t *jbits(unsigned bits, const char *const *names, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		if (bits & (1u << i))
			json_array_append_new(a, json_string(names[i]));
	return a;
}

const char *const gpuenv_stack_found_by_names[] = { "usr-local", "CUDA_HOME", "CUDA_PATH",
	"nvcc-on-PATH", "distribution" };
const char *const gpuenv_stack_where_names[] = { "ld.so.cache", "LD_LIBRARY_PATH", "toolkit", "wheel",
	"default", "loader" };

json_t *gpuenv_stack_toolkit_json(gpuenv_ctx_t *ctx, const gpuenv_toolkit_t *tk)
{
	json_t *comps = json_object();
	for (size_t i = 0; i < tk->ncomponents; i++) {
		json_t *key = jstr(ctx, tk->components[i].name);
		if (json_is_string(key))
			json_object_setn_new_nocheck(comps, json_string_value(key), json_string_length(key),
				json_pack("{s:o, s:s}", "version", jstr(ctx, tk->components[i].version),
					"source", gpuenv_vsrc_name(tk->components[i].src)));
		json_decref(key);
	}
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"path", jstr(ctx, tk->path), "realpath", jstr(ctx, tk->realpath),
		"aliases", jstrs(ctx, tk->aliases, tk->naliases),
		"found_by", jbits(tk->found_by, gpuenv_stack_found_by_names, 5),
		"version", jversion(ctx, &tk->version), "nvcc", jstr(ctx, tk->nvcc),
		"nvcc_version", jstr(ctx, tk->nvcc_version), "lib_dir", jstr(ctx, tk->lib_dir),
		"include_dir", jstr(ctx, tk->include_dir), "components", comps);
}

json_t *gpuenv_stack_libcopy_json(gpuenv_ctx_t *ctx, const gpuenv_libcopy_t *c)
{
	json_t *vs = json_array();
	for (size_t i = 0; i < c->nversions; i++)
		json_array_append_new(vs, jversion(ctx, &c->versions[i]));
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:o}",
		"family", gpuenv_libfamily_name(c->family), "path", jstr(ctx, c->path), "name", jstr(ctx, c->name),
		"soname", jstr(ctx, c->soname), "aliases", jstrs(ctx, c->aliases, c->naliases),
		"where", jbits(c->where, gpuenv_stack_where_names, 6), "toolkit", jstr(ctx, c->toolkit),
		"dist", jstr(ctx, c->dist), "site", jstr(ctx, c->site), "size", (json_int_t)c->size,
		"version", c->nversions ? jversion(ctx, &c->versions[0]) : json_null(),
		"versions", vs, "verdefs", jstrs(ctx, c->verdefs, c->nverdefs));
}

json_t *gpuenv_stack_resolution_json(gpuenv_ctx_t *ctx, const gpuenv_ld_resolution_t *r)
{
	json_t *objs = json_array();
	for (size_t i = 0; i < r->nobjects; i++) {
		const gpuenv_ld_object_t *o = &r->objects[i];
		json_t *needs = json_array();
		for (size_t k = 0; k < o->elf.nneeded; k++) {
			const gpuenv_ld_need_t *n = &o->needs[k];
			json_array_append_new(needs, json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:o}",
				"name", jstr(ctx, n->name), "how", gpuenv_ldsrc_name(n->how),
				"path", jstr(ctx, n->path),
				"object", n->object == SIZE_MAX ? json_null() : json_integer((json_int_t)n->object),
				"dir", jstr(ctx, n->dir), "rule", jstr(ctx, n->rule),
				"shadowed", jstrs(ctx, n->shadowed, n->nshadowed)));
			if (n->rule_owner != SIZE_MAX)
				json_object_set_new(json_array_get(needs, k), "rule_of",
					jstr(ctx, r->objects[n->rule_owner].path));
		}
		json_array_append_new(objs, json_pack("{s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:b, s:o}",
			"path", jstr(ctx, o->path),
			"parent", o->parent == SIZE_MAX ? json_null() : json_integer((json_int_t)o->parent),
			"depth", (int)o->depth,
			"error", o->error ? json_string(gpuenv_strerror(o->error)) : json_null(),
			"soname", jstr(ctx, o->elf.soname), "rpath", jstr(ctx, o->elf.rpath),
			"runpath", jstr(ctx, o->elf.runpath), "nodeflib", o->elf.nodeflib, "needs", needs));
	}
	return json_pack("{s:o, s:I, s:b, s:o}", "binary", jstr(ctx, r->binary),
		"missing", (json_int_t)r->nmissing, "truncated", r->truncated, "objects", objs);
}

json_t *gpuenv_stack_pyenv_json(gpuenv_ctx_t *ctx, const gpuenv_pyenv_t *env)
{
	static const char *const kinds[] = { "system", "venv", "conda" };
	json_t *dists = json_array(), *fws = json_array();

	for (size_t i = 0; i < env->ndists; i++) {
		const gpuenv_pydist_t *d = &env->dists[i];
		json_array_append_new(dists, json_pack("{s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:o}",
			"name", jstr(ctx, d->name), "normalized", jstr(ctx, d->normalized),
			"version", jstr(ctx, d->version), "path", jstr(ctx, d->path),
			"site", jstr(ctx, env->sites[d->site]), "egg_info", d->egg_info,
			"shadowed", d->shadowed, "requires", jstrs(ctx, d->requires, d->nrequires)));
	}
	for (size_t i = 0; i < env->nframeworks; i++) {
		const gpuenv_framework_t *f = &env->frameworks[i];
		json_t *bins = json_array();
		for (size_t b = 0; b < f->nbinaries; b++)
			json_array_append_new(bins, json_pack("{s:o, s:o}", "path", jstr(ctx, f->binaries[b]),
				"loads", f->loads ? gpuenv_stack_resolution_json(ctx, &f->loads[b]) : json_null()));
		json_array_append_new(fws, json_pack("{s:s, s:o, s:o, s:s, s:o, s:o, s:s, s:o, s:o, s:b, s:o}",
			"kind", gpuenv_fw_kind_name(f->kind), "dist", jstr(ctx, env->dists[f->dist].normalized),
			"version", jstr(ctx, f->version), "version_source", gpuenv_vsrc_name(f->version_src),
			"local", jstr(ctx, f->local), "cuda", jstr(ctx, f->cuda),
			"cuda_source", gpuenv_vsrc_name(f->cuda_src), "cudnn", jstr(ctx, f->cudnn),
			"hip", jstr(ctx, f->hip), "gpu", f->gpu, "binaries", bins));
	}
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}",
		"found_by", gpuenv_pyenv_found_name(env->found_by),
		"kind", env->kind >= 0 && env->kind < 3 ? kinds[env->kind] : "unknown",
		"interpreter", jstr(ctx, env->interpreter), "real_interpreter", jstr(ctx, env->real_interpreter),
		"prefix", jstr(ctx, env->prefix), "base_prefix", jstr(ctx, env->base_prefix),
		"system_site_packages", env->system_site_packages,
		"python", jversion(ctx, &env->python), "python_xy", jstr(ctx, env->python_xy),
		"sites", jstrs(ctx, env->sites, env->nsites), "distributions", dists, "frameworks", fws);
}

json_t *gpuenv_stack_ldcache_json(gpuenv_ctx_t *ctx, const gpuenv_ldcache_t *c, bool entries)
{
	json_t *o = json_pack("{s:o, s:o, s:I, s:o, s:o}", "path", jstr(ctx, c->path),
		"format", json_string((c->format & GPUENV_LDCACHE_NEW) && (c->format & GPUENV_LDCACHE_OLD) ? "old+new"
			: (c->format & GPUENV_LDCACHE_NEW) ? "new" : "old"),
		"entries", (json_int_t)c->n, "hwcaps", jstrs(ctx, c->hwcaps, c->nhwcaps),
		"generator", jstr(ctx, c->generator));
	if (entries) {
		json_t *a = json_array();
		for (size_t i = 0; i < c->n; i++) {
			const gpuenv_ldcache_entry_t *e = &c->entries[i];
			json_array_append_new(a, json_pack("{s:o, s:o, s:s, s:o}", "soname", jstr(ctx, e->soname),
				"path", jstr(ctx, e->path), "abi", gpuenv_ldcache_abi_name(e->flags),
				"hwcaps", e->hwcaps_index >= 0 && (size_t)e->hwcaps_index < c->nhwcaps
					? jstr(ctx, c->hwcaps[e->hwcaps_index]) : json_null()));
		}
		json_object_set_new(o, "list", a);
	}
	return o;
}

json_t *gpuenv_stack_json(gpuenv_ctx_t *ctx, const gpuenv_stack_t *st)
{
	json_t *tks = json_array(), *libs = json_array(), *envs = json_array();

	for (size_t i = 0; i < st->ntoolkits; i++)
		json_array_append_new(tks, gpuenv_stack_toolkit_json(ctx, &st->toolkits[i]));
	for (size_t i = 0; i < st->nlibs; i++)
		json_array_append_new(libs, gpuenv_stack_libcopy_json(ctx, &st->libs[i]));
	for (size_t i = 0; i < st->nenvs; i++)
		json_array_append_new(envs, gpuenv_stack_pyenv_json(ctx, &st->envs[i]));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "toolkits", tks,
		"ldcache", st->have_ldcache ? gpuenv_stack_ldcache_json(ctx, &st->ldcache, false) : json_null(),
		"ld_library_path", jstr(ctx, st->ld_library_path), "libraries", libs,
		"python_envs", envs, "warnings", jstrs(ctx, st->warnings, st->nwarnings));
}

