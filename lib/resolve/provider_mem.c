/* The in-memory provider: a packse-format scenario file (TOML) read into
 * packages, versions and requirements, filtered for the scenario's target
 * the way an index-backed provider filters files (requires-python, wheel
 * tags, no_build / no_binary), with the reasons kept for excluded(). */
#include "gpuenv/resolve.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/fs.h"
#include "gpuenv/toml.h"
#include "gpuenv/wheel.h"

#define SC_MAX_PACKAGES 100000u
#define SC_MAX_VERSIONS 100000u
#define SC_MAX_REQS 10000u
#define SC_MAX_TAGS 1000u
#define SC_MAX_NOTES 8

typedef struct mem_ver {
	gpuenv_requirement_t *reqs;
	size_t nreqs;
} mem_ver_t;

typedef struct mem_pkg {
	const char *name; /* normalised */
	gpuenv_candidate_t *cands; /* usable, newest first */
	size_t ncands;
	const char *excluded;
} mem_pkg_t;

typedef struct mem_prov {
	mem_pkg_t *pkgs; /* sorted by name */
	size_t npkgs;
} mem_prov_t;

/* what a scenario load needs in one place */
typedef struct sc_load {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *ar;
	gpuenv_toml_doc_t *doc;
	const char *file;
	gpuenv_tagset_t *tags;
	gpuenv_version_t pyver;
	const char *python;
	const gpuenv_toml_value_t *no_build, *no_binary;
} sc_load_t;

static int sc_oom(sc_load_t *L)
{
	return gpuenv_oom(L->ctx, "reading a scenario");
}

static int mem_pkg_cmp(const void *a, const void *b)
{
	return strcmp(((const mem_pkg_t *)a)->name, ((const mem_pkg_t *)b)->name);
}

static const mem_pkg_t *mem_find(const mem_prov_t *m, const char *name)
{
	mem_pkg_t key = { .name = name };
	return bsearch(&key, m->pkgs, m->npkgs, sizeof(mem_pkg_t), mem_pkg_cmp);
}

static int mem_versions(void *self, gpuenv_ctx_t *ctx, const char *name,
	const gpuenv_candidate_t **out, size_t *n)
{
	const mem_pkg_t *p = mem_find(self, name);
	*out = NULL;
	*n = 0;
	if (!p)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
			"the scenario has no package %s", name);
	*out = p->cands;
	*n = p->ncands;
	return 0;
}

static int mem_requires(void *self, gpuenv_ctx_t *ctx, const char *name, const gpuenv_candidate_t *c,
	const gpuenv_requirement_t **out, size_t *n)
{
	const mem_ver_t *v = c->data;
	(void)self;
	(void)ctx;
	(void)name;
	*out = v->reqs;
	*n = v->nreqs;
	return 0;
}

static const char *mem_excluded(void *self, const char *name)
{
	const mem_pkg_t *p = mem_find(self, name);
	return p ? p->excluded : NULL;
}

/* ---- reading ---------------------------------------------------------------- */

static const gpuenv_toml_value_t *get_typed(sc_load_t *L, const gpuenv_toml_table_t *t,
	const char *key, int type, const char *what, int *err)
{
	const gpuenv_toml_value_t *v = t ? gpuenv_toml_get(t, key) : NULL;
	*err = 0;
	if (v && v->type != type) {
		*err = gpuenv_fail(L->ctx, GPUENV_ETYPE, L->file, v->line, v->col,
			"'%s' must be %s, not %s", what,
			type == GPUENV_TOML_TABLE   ? "a table"
			: type == GPUENV_TOML_ARRAY ? "an array"
			: type == GPUENV_TOML_BOOL  ? "a boolean"
						    : "a string",
			gpuenv_toml_type_name(v->type));
		return NULL;
	}
	return v;
}

static char *dupstr(sc_load_t *L, gpuenv_str_t s)
{
	return gpuenv_arena_strndup(L->ar, s.ptr ? s.ptr : "", s.len);
}

/* Parse requirement text; a parse error is reported at v's position. */
static int parse_req(sc_load_t *L, const gpuenv_toml_value_t *v, gpuenv_str_t text,
	const char *what, gpuenv_requirement_t *out)
{
	int r = gpuenv_requirement_parse(L->ctx, L->ar, text, out);
	if (r == -ENOMEM)
		return r;
	if (r) {
		return gpuenv_fail_prefix(L->ctx, r, L->file, v->line, v->col, "%s: '%.*s'", what,
			(int)(text.len > 200 ? 200 : text.len), text.ptr);
	}
	return 0;
}

/* An array of requirement strings; extra, when given, is and-ed into each
 * marker (how an extra's requirements look in METADATA). */
static int read_reqs(sc_load_t *L, const gpuenv_toml_value_t *arr, const char *what,
	const char *extra, gpuenv_requirement_t *out, size_t *n)
{
	gpuenv_buf_t b;
	int r = 0;

	gpuenv_buf_init(&b, L->ctx, 1 << 20);
	for (uint32_t i = 0; i < arr->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = arr->u.arr->items[i];
		if (e->type != GPUENV_TOML_STRING) {
			r = gpuenv_fail(L->ctx, GPUENV_ETYPE, L->file, e->line, e->col,
				"%s[%u] must be a string, not %s", what, i,
				gpuenv_toml_type_name(e->type));
			break;
		}
		gpuenv_requirement_t *rq = &out[(*n)++];
		if ((r = parse_req(L, e, e->u.str, what, rq)))
			break;
		if (!extra)
			continue;
		gpuenv_marker_t *m = rq->marker;
		gpuenv_buf_reset(&b);
		rq->marker = NULL;
		if ((r = gpuenv_requirement_format(rq, &b)) || (r = gpuenv_buf_puts(&b, " ; ")))
			break;
		if (m && ((r = gpuenv_buf_putc(&b, '(')) || (r = gpuenv_marker_format(m, &b)) ||
				 (r = gpuenv_buf_puts(&b, ") and "))))
			break;
		if ((r = gpuenv_buf_printf(&b, "extra == \"%s\"", extra)))
			break;
		if ((r = parse_req(L, e, gpuenv_str_n(b.data, b.len), what, rq)))
			break;
	}
	gpuenv_buf_free(&b);
	if (r == -ENOMEM || r == GPUENV_ETOOBIG)
		if (!L->ctx->err.msg[0] || L->ctx->err.code != r)
			gpuenv_oom(L->ctx, "reading a scenario");
	return r;
}

/* no_build / no_binary: true (every package) or a list of names */
static bool name_listed(const gpuenv_toml_value_t *v, const char *name)
{
	if (!v)
		return false;
	if (v->type == GPUENV_TOML_BOOL)
		return v->u.b;
	if (v->type != GPUENV_TOML_ARRAY)
		return false;
	for (uint32_t i = 0; i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		char nm[512];
		if (e->type == GPUENV_TOML_STRING && e->u.str.len < sizeof(nm) &&
			gpuenv_name_normalize_to(e->u.str, nm, sizeof(nm)) != SIZE_MAX &&
			(!strcmp(nm, name) || !strcmp(nm, ":all:")))
			return true;
	}
	return false;
}

/* Does one of the wheel tags fit the target? */
static bool tags_fit(sc_load_t *L, const gpuenv_toml_value_t *wt)
{
	gpuenv_str_t def = GPUENV_STR_LIT("py3-none-any");
	uint32_t n = wt ? wt->u.arr->len : 1;
	if (n > SC_MAX_TAGS)
		n = SC_MAX_TAGS;
	for (uint32_t i = 0; i < n; i++) {
		gpuenv_str_t text = def;
		gpuenv_tag_t *tags;
		size_t nt;
		if (wt) {
			if (wt->u.arr->items[i]->type != GPUENV_TOML_STRING)
				continue;
			text = wt->u.arr->items[i]->u.str;
		}
		gpuenv_error_t saved = L->ctx->err;
		if (gpuenv_tag_parse(L->ctx, L->ar, text, 0, &nt, &tags)) {
			L->ctx->err = saved; /* a tag we cannot read fits nothing */
			continue;
		}
		for (size_t k = 0; k < nt; k++)
			if (gpuenv_tagset_rank(L->tags, &tags[k]) >= 0)
				return true;
	}
	return false;
}

static int cand_newest_first(const void *a, const void *b)
{
	const gpuenv_candidate_t *x = a, *y = b;
	int r = gpuenv_version_cmp(&y->v, &x->v);
	return r ? r : strcmp(x->version, y->version);
}

static int add_note(sc_load_t *L, gpuenv_buf_t *notes, size_t *nnotes, const char *fmt, ...)
	GPUENV_PRINTF(4, 5);
static int add_note(sc_load_t *L, gpuenv_buf_t *notes, size_t *nnotes, const char *fmt, ...)
{
	va_list ap;
	int r = 0;
	(void)L;
	if ((*nnotes)++ >= SC_MAX_NOTES)
		return 0;
	if (notes->len)
		r = gpuenv_buf_puts(notes, "; ");
	va_start(ap, fmt);
	if (!r)
		r = gpuenv_buf_vprintf(notes, fmt, ap);
	va_end(ap);
	return r;
}

static int read_package(sc_load_t *L, const gpuenv_toml_kv_t *kv, mem_pkg_t *out)
{
	char name[512];
	int r;
	const gpuenv_toml_value_t *pv = &kv->val, *vers;
	gpuenv_buf_t notes;
	size_t nnotes = 0;

	if (kv->key.len >= sizeof(name) || !gpuenv_name_is_valid(kv->key))
		return gpuenv_fail(L->ctx, GPUENV_ESYNTAX, L->file, kv->line, kv->col,
			"'%.*s' is not a valid package name", (int)(kv->key.len > 100 ? 100 : kv->key.len),
			kv->key.ptr);
	gpuenv_name_normalize_to(kv->key, name, sizeof(name));
	if (pv->type != GPUENV_TOML_TABLE)
		return gpuenv_fail(L->ctx, GPUENV_ETYPE, L->file, pv->line, pv->col,
			"packages.%s must be a table, not %s", name, gpuenv_toml_type_name(pv->type));
	if (!(out->name = gpuenv_arena_strndup(L->ar, name, strlen(name))))
		return sc_oom(L);
	vers = get_typed(L, pv->u.tab, "versions", GPUENV_TOML_TABLE, "versions", &r);
	if (r)
		return r;
	uint32_t nv = vers ? vers->u.tab->len : 0;
	if (nv > SC_MAX_VERSIONS)
		return gpuenv_fail(L->ctx, GPUENV_ETOOBIG, L->file, vers->line, vers->col,
			"%s has %u versions (at most %u)", name, nv, SC_MAX_VERSIONS);
	out->cands = gpuenv_arena_calloc(L->ar, nv ? nv : 1, sizeof(gpuenv_candidate_t));
	if (!out->cands)
		return sc_oom(L);
	gpuenv_buf_init(&notes, L->ctx, 1 << 16);
	for (uint32_t i = 0; i < nv; i++) {
		const gpuenv_toml_kv_t *vk = vers->u.tab->items[i];
		const gpuenv_toml_table_t *vt;
		const gpuenv_toml_value_t *v, *wt;
		gpuenv_candidate_t *c = &out->cands[out->ncands];
		gpuenv_version_t ver;
		bool sdist = true, wheel = true;

		if (vk->val.type != GPUENV_TOML_TABLE) {
			r = gpuenv_fail(L->ctx, GPUENV_ETYPE, L->file, vk->val.line, vk->val.col,
				"packages.%s.versions.\"%.*s\" must be a table, not %s", name,
				(int)(vk->key.len > 100 ? 100 : vk->key.len), vk->key.ptr,
				gpuenv_toml_type_name(vk->val.type));
			goto out;
		}
		vt = vk->val.u.tab;
		if ((r = gpuenv_version_parse(L->ctx, L->ar, vk->key, &ver))) {
			if (r != -ENOMEM)
				r = gpuenv_fail(L->ctx, r, L->file, vk->line, vk->col,
					"%s: '%.*s' is not a PEP 440 version", name,
					(int)(vk->key.len > 100 ? 100 : vk->key.len), vk->key.ptr);
			goto out;
		}
		c->version = dupstr(L, vk->key);
		if (!c->version) {
			r = sc_oom(L);
			goto out;
		}
		c->v = ver;
		if ((v = get_typed(L, vt, "yanked", GPUENV_TOML_BOOL, "yanked", &r)), r)
			goto out;
		c->yanked = v && v->u.b;
		if ((v = get_typed(L, vt, "sdist", GPUENV_TOML_BOOL, "sdist", &r)), r)
			goto out;
		if (v)
			sdist = v->u.b;
		if ((v = get_typed(L, vt, "wheel", GPUENV_TOML_BOOL, "wheel", &r)), r)
			goto out;
		if (v)
			wheel = v->u.b;
		if ((wt = get_typed(L, vt, "wheel_tags", GPUENV_TOML_ARRAY, "wheel_tags", &r)), r)
			goto out;
		/* requires-python, against the target's Python */
		if ((v = get_typed(L, vt, "requires_python", GPUENV_TOML_STRING, "requires_python", &r)),
			r)
			goto out;
		bool py_ok = true;
		if (v) {
			gpuenv_specset_t rp;
			if ((r = gpuenv_specset_parse(L->ctx, L->ar, v->u.str, &rp))) {
				if (r != -ENOMEM) {
					r = gpuenv_fail_prefix(L->ctx, r, L->file, v->line, v->col,
						"requires_python of %s %s", name, c->version);
				}
				goto out;
			}
			c->requires_python = dupstr(L, v->u.str);
			if (!c->requires_python) {
				r = sc_oom(L);
				goto out;
			}
			py_ok = gpuenv_specset_contains_ex(&rp, gpuenv_str(L->python), &L->pyver,
				GPUENV_PRERELEASES_YES, false);
		}
		/* the requirements, the extras' with their markers */
		const gpuenv_toml_value_t *rq, *ex;
		if ((rq = get_typed(L, vt, "requires", GPUENV_TOML_ARRAY, "requires", &r)), r)
			goto out;
		if ((ex = get_typed(L, vt, "extras", GPUENV_TOML_TABLE, "extras", &r)), r)
			goto out;
		size_t total = rq ? rq->u.arr->len : 0;
		for (uint32_t k = 0; ex && k < ex->u.tab->len; k++) {
			const gpuenv_toml_value_t *ea = &ex->u.tab->items[k]->val;
			if (ea->type != GPUENV_TOML_ARRAY) {
				r = gpuenv_fail(L->ctx, GPUENV_ETYPE, L->file, ea->line, ea->col,
					"an extra of %s %s must be an array of requirements", name,
					c->version);
				goto out;
			}
			total += ea->u.arr->len;
		}
		if (total > SC_MAX_REQS) {
			r = gpuenv_fail(L->ctx, GPUENV_ETOOBIG, L->file, vk->line, vk->col,
				"%s %s has %zu requirements (at most %u)", name, c->version, total,
				SC_MAX_REQS);
			goto out;
		}
		mem_ver_t *mv = gpuenv_arena_calloc(L->ar, 1, sizeof(*mv));
		if (!mv || !(mv->reqs = gpuenv_arena_calloc(L->ar, total ? total : 1,
				     sizeof(gpuenv_requirement_t)))) {
			r = sc_oom(L);
			goto out;
		}
		if (rq && (r = read_reqs(L, rq, "requires", NULL, mv->reqs, &mv->nreqs)))
			goto out;
		for (uint32_t k = 0; ex && k < ex->u.tab->len; k++) {
			const gpuenv_toml_kv_t *ekv = ex->u.tab->items[k];
			char en[512];
			if (ekv->key.len >= sizeof(en) || !gpuenv_name_is_valid(ekv->key)) {
				r = gpuenv_fail(L->ctx, GPUENV_ESYNTAX, L->file, ekv->line, ekv->col,
					"'%.*s' is not a valid extra name",
					(int)(ekv->key.len > 100 ? 100 : ekv->key.len), ekv->key.ptr);
				goto out;
			}
			gpuenv_name_normalize_to(ekv->key, en, sizeof(en));
			if ((r = read_reqs(L, &ekv->val, "extras", en, mv->reqs, &mv->nreqs)))
				goto out;
		}
		c->data = mv;
		/* usable on the target? */
		bool b_ok = sdist && !name_listed(L->no_build, name);
		bool w_ok = wheel && !name_listed(L->no_binary, name) && tags_fit(L, wt);
		if (!py_ok) {
			r = add_note(L, &notes, &nnotes, "%s %s needs Python %s (the target has %s)",
				name, c->version, c->requires_python, L->python);
		} else if (!b_ok && !w_ok) {
			r = add_note(L, &notes, &nnotes, "%s %s has %s and %s", name, c->version,
				!wheel ? "no wheel"
				: name_listed(L->no_binary, name)
					? "wheels, but no_binary forbids them"
					: "no wheel for the target's tags",
				!sdist ? "no source distribution"
				       : "a source distribution, but no_build forbids building it");
		} else {
			out->ncands++;
			continue;
		}
		if (r)
			goto out;
	}
	if (nnotes > SC_MAX_NOTES && (r = gpuenv_buf_printf(&notes, "; and %zu more versions",
					      nnotes - SC_MAX_NOTES)))
		goto out;
	if (notes.len && !(out->excluded = gpuenv_arena_strndup(L->ar, notes.data, notes.len))) {
		r = sc_oom(L);
		goto out;
	}
	qsort(out->cands, out->ncands, sizeof(gpuenv_candidate_t), cand_newest_first);
	r = 0;
out:
	gpuenv_buf_free(&notes);
	if ((r == -ENOMEM || r == GPUENV_ETOOBIG) && L->ctx->err.code != r)
		gpuenv_oom(L->ctx, "reading a scenario");
	return r;
}

/* python_platform -> the target's newest platform tag and its markers */
static int platform_for(sc_load_t *L, const gpuenv_toml_value_t *pp, gpuenv_scenario_t *sc,
	char *plat, size_t platsz)
{
	static const struct {
		const char *name, *plat, *sys, *system, *os, *machine;
	} map[] = {
		{ "", "manylinux_2_28_x86_64", "linux", "Linux", "posix", "x86_64" },
		{ "linux", "manylinux_2_28_x86_64", "linux", "Linux", "posix", "x86_64" },
		{ "x86_64-unknown-linux-gnu", "manylinux_2_28_x86_64", "linux", "Linux", "posix",
			"x86_64" },
		{ "x86_64-manylinux2014", "manylinux2014_x86_64", "linux", "Linux", "posix", "x86_64" },
		{ "aarch64-unknown-linux-gnu", "manylinux_2_28_aarch64", "linux", "Linux", "posix",
			"aarch64" },
		{ "aarch64-manylinux2014", "manylinux2014_aarch64", "linux", "Linux", "posix",
			"aarch64" },
		{ "macos", "macosx_14_0_arm64", "darwin", "Darwin", "posix", "arm64" },
		{ "aarch64-apple-darwin", "macosx_14_0_arm64", "darwin", "Darwin", "posix", "arm64" },
		{ "x86_64-apple-darwin", "macosx_14_0_x86_64", "darwin", "Darwin", "posix", "x86_64" },
		{ "windows", "win_amd64", "win32", "Windows", "nt", "AMD64" },
		{ "x86_64-pc-windows-msvc", "win_amd64", "win32", "Windows", "nt", "AMD64" },
	};
	gpuenv_str_t want = pp ? pp->u.str : GPUENV_STR_LIT("");
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (gpuenv_str_eq_cstr(want, map[i].name)) {
			snprintf(plat, platsz, "%s", map[i].plat);
			sc->env.sys_platform = map[i].sys;
			sc->env.platform_system = map[i].system;
			sc->env.os_name = map[i].os;
			sc->env.platform_machine = map[i].machine;
			return 0;
		}
	/* ARCH-manylinux_2_N: any glibc */
	unsigned minor;
	char arch[16], tail;
	if (want.len < 64) {
		char w[64];
		snprintf(w, sizeof(w), "%.*s", GPUENV_STR_ARG(want));
		char *dash = strchr(w, '-');
		if (dash && (size_t)(dash - w) < sizeof(arch) &&
			sscanf(dash, "-manylinux_2_%u%c", &minor, &tail) == 1 && minor < 1000) {
			snprintf(arch, sizeof(arch), "%.*s", (int)(dash - w), w);
			if (!strcmp(arch, "x86_64") || !strcmp(arch, "aarch64")) {
				snprintf(plat, platsz, "manylinux_2_%u_%s", minor, arch);
				sc->env.sys_platform = "linux";
				sc->env.platform_system = "Linux";
				sc->env.os_name = "posix";
				sc->env.platform_machine = !strcmp(arch, "x86_64") ? "x86_64" : "aarch64";
				return 0;
			}
		}
	}
	return gpuenv_fail(L->ctx, GPUENV_EUNSUPPORTED, L->file, pp->line, pp->col,
		"python_platform '%.*s' is not one gpuenv knows", (int)(want.len > 100 ? 100 : want.len),
		want.ptr);
}

static int name_ver_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int load(sc_load_t *L, gpuenv_scenario_t *sc)
{
	const gpuenv_toml_table_t *rt = L->doc->root, *root = NULL, *opts = NULL, *envt = NULL,
				  *exp = NULL;
	const gpuenv_toml_value_t *v;
	int r;
	char py[64], full[80], plat[64], spec[160];
	mem_prov_t *m;

#define TABLE(dst, t, key)                                                                \
	do {                                                                              \
		v = get_typed(L, t, key, GPUENV_TOML_TABLE, key, &r);                     \
		if (r)                                                                    \
			return r;                                                         \
		dst = v ? v->u.tab : NULL;                                                \
	} while (0)

	TABLE(root, rt, "root");
	TABLE(opts, rt, "resolver_options");
	TABLE(envt, rt, "environment");
	TABLE(exp, rt, "expected");
	if ((v = get_typed(L, rt, "name", GPUENV_TOML_STRING, "name", &r)), r)
		return r;
	sc->name = v ? dupstr(L, v->u.str) : "";
	if (!sc->name)
		return sc_oom(L);
	/* the target's Python */
	const gpuenv_toml_value_t *pyv;
	if ((pyv = get_typed(L, opts, "python", GPUENV_TOML_STRING, "resolver_options.python", &r)), r)
		return r;
	if (!pyv && ((pyv = get_typed(L, envt, "python", GPUENV_TOML_STRING, "environment.python",
			      &r)),
			    r))
		return r;
	snprintf(py, sizeof(py), "%.*s", pyv ? (int)pyv->u.str.len : 4,
		pyv ? pyv->u.str.ptr : "3.12");
	unsigned maj = 0, min = 0, patch = 0;
	int fields = 0;
	char tail = 0;
	fields = sscanf(py, "%u.%u.%u%c", &maj, &min, &patch, &tail);
	if (fields < 2 || fields > 3 || maj != 3 || min > 99)
		return gpuenv_fail(L->ctx, GPUENV_ESYNTAX, L->file, pyv ? pyv->line : 0,
			pyv ? pyv->col : 0, "python '%s' is not a Python 3 version X.Y or X.Y.Z", py);
	if (fields == 2)
		patch = 0;
	snprintf(py, sizeof(py), "%u.%u", maj, min);
	snprintf(full, sizeof(full), "%u.%u.%u", maj, min, patch);
	sc->python = gpuenv_arena_strndup(L->ar, py, strlen(py));
	const char *fullc = gpuenv_arena_strndup(L->ar, full, strlen(full));
	if (!sc->python || !fullc)
		return sc_oom(L);
	L->python = fullc;
	if ((r = gpuenv_version_parse(L->ctx, L->ar, gpuenv_str(fullc), &L->pyver)))
		return r;
	/* the marker environment */
	gpuenv_marker_env_default(&sc->env);
	sc->env.python_version = sc->python;
	sc->env.python_full_version = fullc;
	sc->env.implementation_version = fullc;
	sc->env.implementation_name = "cpython";
	sc->env.platform_python_implementation = "CPython";
	sc->env.platform_release = "";
	sc->env.platform_version = "";
	const gpuenv_toml_value_t *pp;
	if ((pp = get_typed(L, opts, "python_platform", GPUENV_TOML_STRING,
		     "resolver_options.python_platform", &r)),
		r)
		return r;
	if ((r = platform_for(L, pp, sc, plat, sizeof(plat))))
		return r;
	sc->platform = gpuenv_arena_strndup(L->ar, plat, strlen(plat));
	if (!sc->platform)
		return sc_oom(L);
	snprintf(spec, sizeof(spec), "cp%u%u-%s", maj, min, plat);
	gpuenv_wheel_target_t wt;
	if ((r = gpuenv_wheel_target_parse(L->ctx, gpuenv_str(spec), &wt)) ||
		(r = gpuenv_tagset_build(L->ctx, &wt, &L->tags)))
		return r;
	/* options */
	if ((v = get_typed(L, opts, "universal", GPUENV_TOML_BOOL, "resolver_options.universal", &r)), r)
		return r;
	sc->universal = v && v->u.b;
	if ((v = get_typed(L, opts, "prereleases", GPUENV_TOML_BOOL, "resolver_options.prereleases",
		     &r)),
		r)
		return r;
	sc->prereleases = v && v->u.b ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_DEFAULT;
	L->no_build = opts ? gpuenv_toml_get(opts, "no_build") : NULL;
	L->no_binary = opts ? gpuenv_toml_get(opts, "no_binary") : NULL;
	/* expected */
	if ((v = get_typed(L, exp, "satisfiable", GPUENV_TOML_BOOL, "expected.satisfiable", &r)), r)
		return r;
	sc->has_expected = v != NULL;
	sc->expected_satisfiable = v && v->u.b;
	const gpuenv_toml_value_t *ep;
	if ((ep = get_typed(L, exp, "packages", GPUENV_TOML_TABLE, "expected.packages", &r)), r)
		return r;
	if (ep && ep->u.tab->len) {
		uint32_t n = ep->u.tab->len;
		const char **pairs = gpuenv_arena_alloc(L->ar, 2 * n * sizeof(char *));
		const char **names = gpuenv_arena_alloc(L->ar, n * sizeof(char *));
		const char **vers = gpuenv_arena_alloc(L->ar, n * sizeof(char *));
		if (!pairs || !names || !vers)
			return sc_oom(L);
		for (uint32_t i = 0; i < n; i++) {
			const gpuenv_toml_kv_t *kv = ep->u.tab->items[i];
			char nm[512];
			if (kv->val.type != GPUENV_TOML_STRING)
				return gpuenv_fail(L->ctx, GPUENV_ETYPE, L->file, kv->val.line,
					kv->val.col, "expected.packages values must be version strings");
			if (kv->key.len >= sizeof(nm))
				return gpuenv_fail(L->ctx, GPUENV_ETOOBIG, L->file, kv->line, kv->col,
					"a package name in expected.packages is too long");
			gpuenv_name_normalize_to(kv->key, nm, sizeof(nm));
			/* "name\0version" kept together so one sort orders both */
			gpuenv_str_t pv = gpuenv_arena_printf(L->ar, "%s%c%.*s", nm, 0,
				GPUENV_STR_ARG(kv->val.u.str));
			if (!pv.ptr)
				return sc_oom(L);
			pairs[i] = pv.ptr;
		}
		qsort(pairs, n, sizeof(char *), name_ver_cmp);
		for (uint32_t i = 0; i < n; i++) {
			names[i] = pairs[i];
			vers[i] = pairs[i] + strlen(pairs[i]) + 1;
		}
		sc->expected_names = names;
		sc->expected_versions = vers;
		sc->nexpected = n;
	}
	/* root requirements */
	const gpuenv_toml_value_t *rr;
	if ((rr = get_typed(L, root, "requires", GPUENV_TOML_ARRAY, "root.requires", &r)), r)
		return r;
	size_t nroots = rr ? rr->u.arr->len : 0;
	if (nroots > SC_MAX_REQS)
		return gpuenv_fail(L->ctx, GPUENV_ETOOBIG, L->file, rr->line, rr->col,
			"root.requires has %zu requirements (at most %u)", nroots, SC_MAX_REQS);
	sc->roots = gpuenv_arena_calloc(L->ar, nroots ? nroots : 1, sizeof(gpuenv_requirement_t));
	if (!sc->roots)
		return sc_oom(L);
	if (rr && (r = read_reqs(L, rr, "root.requires", NULL, sc->roots, &sc->nroots)))
		return r;
	/* packages */
	const gpuenv_toml_value_t *pk;
	if ((pk = get_typed(L, rt, "packages", GPUENV_TOML_TABLE, "packages", &r)), r)
		return r;
	m = gpuenv_arena_calloc(L->ar, 1, sizeof(*m));
	if (!m)
		return sc_oom(L);
	uint32_t np = pk ? pk->u.tab->len : 0;
	if (np > SC_MAX_PACKAGES)
		return gpuenv_fail(L->ctx, GPUENV_ETOOBIG, L->file, pk->line, pk->col,
			"the scenario has %u packages (at most %u)", np, SC_MAX_PACKAGES);
	m->pkgs = gpuenv_arena_calloc(L->ar, np ? np : 1, sizeof(mem_pkg_t));
	if (!m->pkgs)
		return sc_oom(L);
	for (uint32_t i = 0; i < np; i++)
		if ((r = read_package(L, pk->u.tab->items[i], &m->pkgs[i])))
			return r;
	m->npkgs = np;
	qsort(m->pkgs, np, sizeof(mem_pkg_t), mem_pkg_cmp);
	for (uint32_t i = 1; i < np; i++)
		if (!strcmp(m->pkgs[i - 1].name, m->pkgs[i].name))
			return gpuenv_fail(L->ctx, GPUENV_EDUPLICATE, L->file, pk->line, pk->col,
				"package %s is defined twice (names compare PEP 503-normalised)",
				m->pkgs[i].name);
	sc->npackages = np;
	sc->provider.self = m;
	sc->provider.versions = mem_versions;
	sc->provider.requires = mem_requires;
	sc->provider.prefetch = NULL;
	sc->provider.excluded = mem_excluded;
	return 0;
#undef TABLE
}

int gpuenv_scenario_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const char *text, size_t len, gpuenv_scenario_t *out)
{
	gpuenv_toml_doc_t doc;
	sc_load_t L;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&L, 0, sizeof(L));
	if (len > GPUENV_SCENARIO_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0,
			"a scenario of %zu bytes is larger than the %zu allowed", len,
			GPUENV_SCENARIO_MAX);
	out->file = file ? gpuenv_arena_strndup(arena, file, strlen(file)) : "";
	if (!out->file)
		return gpuenv_oom(ctx, "reading a scenario");
	if ((r = gpuenv_toml_doc_init(&doc, ctx, file)))
		return r == -ENOMEM ? gpuenv_oom(ctx, "reading a scenario") : r;
	r = gpuenv_toml_parse(&doc, text, len);
	if (!r) {
		L.ctx = ctx;
		L.ar = arena;
		L.doc = &doc;
		L.file = out->file;
		r = load(&L, out);
	}
	gpuenv_tagset_free(L.tags);
	gpuenv_toml_doc_free(&doc);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

int gpuenv_scenario_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_scenario_t *out)
{
	gpuenv_buf_t b;
	int r;

	memset(out, 0, sizeof(*out));
	gpuenv_buf_init(&b, ctx, GPUENV_SCENARIO_MAX + 1);
	r = gpuenv_fs_read(ctx, path, GPUENV_SCENARIO_MAX, &b);
	if (!r)
		r = gpuenv_scenario_parse(ctx, arena, path, b.data ? b.data : "", b.len, out);
	gpuenv_buf_free(&b);
	return r;
}

void gpuenv_scenario_request(const gpuenv_scenario_t *sc, gpuenv_resolve_req_t *req)
{
	memset(req, 0, sizeof(*req));
	req->roots = sc->roots;
	req->nroots = sc->nroots;
	req->env = &sc->env;
	req->prereleases = sc->prereleases;
}
