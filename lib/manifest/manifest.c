/* pyproject.toml: [project] (PEP 621), [dependency-groups] (PEP 735) and
 * Poetry's tables as Poetry users write them, read through the TOML
 * parser's document model so that every error has file:line:col.
 *
 * Both styles may meet in one file (Poetry 2 projects do): [project]
 * dependencies come first, and a [tool.poetry.dependencies] entry of the
 * same name refines it (its source, allow-prereleases) as Poetry 2 does;
 * other Poetry entries are added.  [tool.gpuenv] is read by targets.c; the
 * helpers both use are manifest_util.c's. */
#include "manifest_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/index.h" /* the sources are gpuenv_index_source_t */

#define PYPI_URL "https://pypi.org/simple/"

/* ---- dependencies ----------------------------------------------------------- */

typedef struct depspec {
	const char *group, *source, *extra;
	bool optional, allow_prereleases;
	const char *from; /* the table ("project.dependencies") */
} depspec_t;

/* Parse text as PEP 508 and add it; an error points into the string at
 * (line, col) (col of its opening quote). */
static int add_dep(mf_load_t *L, const char *text, unsigned line, unsigned col, const depspec_t *ds,
	gpuenv_dep_t **added)
{
	gpuenv_dep_t *d;
	gpuenv_requirement_t req;
	int r;

	if ((r = gpuenv_requirement_parse(L->ctx, L->arena, gpuenv_str(text), &req))) {
		unsigned at = L->ctx->err.line <= 1 && L->ctx->err.col ? L->ctx->err.col : 1;
		if (r == -ENOMEM)
			return r;
		return gpuenv_fail_prefix(L->ctx, r, L->file, line, col + at, "'%s' is not a PEP 508 requirement",
			text);
	}
	L->deps = mf_grow(L, L->deps, &L->capdeps, L->ndeps, sizeof(*L->deps), MF_MAX_DEPS, "dependencies");
	if (!L->deps)
		return L->ctx->err.code;
	d = &L->deps[L->ndeps++];
	memset(d, 0, sizeof(*d));
	d->req = req;
	d->name = gpuenv_arena_strndup(L->arena, req.name.ptr, req.name.len);
	if (!d->name || !(d->name = mf_norm(L, d->name)))
		return gpuenv_oom(L->ctx, "the manifest");
	d->group = ds->group;
	d->source = ds->source;
	d->extra = ds->extra;
	d->optional = ds->optional;
	d->allow_prereleases = ds->allow_prereleases;
	d->from = ds->from;
	d->line = line;
	d->col = col;
	if (req.url.len) {
		const char *u = gpuenv_arena_strndup(L->arena, req.url.ptr, req.url.len);
		if (!u || !(d->direct = mf_direct_of_url(L, u, ds->from, line, col)))
			return gpuenv_oom(L->ctx, "the manifest");
	}
	if (added)
		*added = d;
	return 0;
}

/* A PEP 508 string from an array (project.dependencies, a group) */
static int pep508_list(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const depspec_t *ds)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, what);

	for (uint32_t i = 0; !r && i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const char *s;
		if ((r = mf_cstr(L, e, what, &s)))
			break;
		r = add_dep(L, s, e->line, e->col, ds, NULL);
	}
	return r;
}

static const char *const POETRY_DEP_KEYS[] = { "version", "source", "markers", "optional", "extras",
	"python", "platform", "allow-prereleases", "develop", "url", "git", "branch", "tag", "rev",
	"subdirectory", "path", NULL };

/* "(a) and (b)" of the markers given */
static const char *and_markers(mf_load_t *L, const char *const *ms, size_t n)
{
	gpuenv_buf_t b;
	const char *out = NULL;
	size_t k = 0;

	gpuenv_buf_init(&b, L->ctx, 0);
	for (size_t i = 0; i < n; i++) {
		if (!ms[i])
			continue;
		if (gpuenv_buf_printf(&b, "%s(%s)", k++ ? " and " : "", ms[i])) {
			gpuenv_buf_free(&b);
			gpuenv_oom(L->ctx, "the manifest");
			return NULL;
		}
	}
	if (k == 1 && b.data) {
		/* one marker: as written */
		for (size_t i = 0; i < n; i++)
			if (ms[i])
				out = ms[i];
	} else if (b.data)
		out = gpuenv_arena_strndup(L->arena, b.data, b.len);
	else
		out = "";
	gpuenv_buf_free(&b);
	return out;
}

/* A Poetry constraint at v as PEP 440 */
static int poetry_spec(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const char **out)
{
	const char *s;
	int r;

	if ((r = mf_cstr(L, v, what, &s)))
		return r;
	if ((r = gpuenv_manifest_poetry_constraint(L->ctx, L->arena, gpuenv_str(s), out))) {
		if (r == -ENOMEM)
			return r;
		return gpuenv_fail_prefix(L->ctx, r, L->file, v->line, v->col, "%s", what);
	}
	return 0;
}

static int python_marker_at(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const char **out)
{
	const char *s;
	int r;

	if ((r = mf_cstr(L, v, what, &s)))
		return r;
	if ((r = gpuenv_manifest_python_marker(L->ctx, L->arena, gpuenv_str(s), out))) {
		if (r == -ENOMEM)
			return r;
		return gpuenv_fail_prefix(L->ctx, r, L->file, v->line, v->col, "%s", what);
	}
	return 0;
}

/* Poetry's git (with rev / tag / branch / subdirectory) and path (with
 * develop) keys as a direct reference; *out NULL when the table has
 * neither.  A key that belongs to the other kind, two refs, or a version
 * beside them is an error at that key's value. */
static int poetry_direct(mf_load_t *L, const gpuenv_toml_table_t *t, const char *what, const char *from,
	gpuenv_direct_t **out)
{
	static const char *const refs[] = { "rev", "tag", "branch" };
	const gpuenv_toml_value_t *git = gpuenv_toml_get(t, "git"), *path = gpuenv_toml_get(t, "path"), *x;
	gpuenv_direct_t *d;
	const char *first_ref = NULL;
	int r;

	*out = NULL;
	for (size_t i = 0; i < 3; i++)
		if (!git && (x = gpuenv_toml_get(t, refs[i])))
			return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: '%s' goes with git = \"URL\"", what,
				refs[i]);
	if (!path && (x = gpuenv_toml_get(t, "develop")))
		return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: 'develop' goes with path = \"DIR\"", what);
	if (!git && !path)
		return 0;
	if (git && path)
		return mf_err(L, GPUENV_ESYNTAX, path->line, path->col, "%s: both git and path", what);
	if ((x = gpuenv_toml_get(t, "version")) || (x = gpuenv_toml_get(t, "url")))
		return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: a %s dependency takes no %s", what,
			git ? "git" : "path", gpuenv_toml_get(t, "url") == x ? "url" : "version");
	if (!(d = gpuenv_arena_calloc(L->arena, 1, sizeof(*d))))
		return gpuenv_oom(L->ctx, "the manifest");
	d->from = from;
	d->line = (git ? git : path)->line;
	d->col = (git ? git : path)->col;
	if (path) {
		d->kind = GPUENV_DIRECT_PATH;
		if ((r = mf_cstr(L, path, "path", &d->path)))
			return r;
		if ((x = gpuenv_toml_get(t, "develop"))) {
			if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_BOOL, "develop")))
				return r;
			d->editable = x->u.b;
		}
	} else {
		const char **slot[3] = { &d->rev, &d->tag, &d->branch };
		d->kind = GPUENV_DIRECT_GIT;
		if ((r = mf_cstr(L, git, "git", &d->url)))
			return r;
		for (size_t i = 0; i < 3; i++) {
			if (!(x = gpuenv_toml_get(t, refs[i])))
				continue;
			if (first_ref)
				return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: both %s and %s (one ref)", what,
					first_ref, refs[i]);
			first_ref = refs[i];
			if ((r = mf_cstr(L, x, refs[i], slot[i])))
				return r;
		}
	}
	if ((x = gpuenv_toml_get(t, "subdirectory")) && (r = mf_cstr(L, x, "subdirectory", &d->subdirectory)))
		return r;
	*out = d;
	return 0;
}

/* One Poetry dependency: "name = constraint", a table, or (inside a
 * multiple-constraint list) one of its tables. */
static int poetry_dep(mf_load_t *L, gpuenv_str_t key, unsigned kline, unsigned kcol,
	const gpuenv_toml_value_t *v, const depspec_t *base, const char *where)
{
	depspec_t ds = *base;
	const char *name, *spec = "", *markers[3] = { NULL, NULL, NULL }, *marker, *url = NULL;
	const char **extras = NULL;
	size_t nextras = 0;
	gpuenv_buf_t text;
	gpuenv_toml_value_t *x;
	gpuenv_dep_t *d;
	gpuenv_direct_t *direct = NULL;
	const char *subdir = NULL;
	char what[160];
	int r;

	name = gpuenv_arena_strndup(L->arena, key.ptr, key.len);
	if (!name)
		return gpuenv_oom(L->ctx, "the manifest");
	if (!gpuenv_name_is_valid(key) || memchr(key.ptr, '\0', key.len))
		return mf_err(L, GPUENV_EREQ, kline, kcol, "%s: '%.*s' is not a valid package name", where,
			(int)(key.len > 100 ? 100 : key.len), key.ptr);
	snprintf(what, sizeof(what), "%s.%s", where, name);
	if (v->type == GPUENV_TOML_STRING) {
		if ((r = poetry_spec(L, v, what, &spec)))
			return r;
	} else if (v->type == GPUENV_TOML_TABLE) {
		const gpuenv_toml_table_t *t = v->u.tab;
		if ((r = mf_check_keys(L, t, POETRY_DEP_KEYS, what)))
			return r;
		/* git and path: direct references, which the lock refuses until
		 * it can lock them (lib/project/lock.c) */
		if ((r = poetry_direct(L, t, what, base->from, &direct)))
			return r;
		if (!direct && (x = gpuenv_toml_get(t, "subdirectory"))) {
			if (!gpuenv_toml_get(t, "url"))
				return mf_err(L, GPUENV_ESYNTAX, x->line, x->col,
					"%s: 'subdirectory' goes with git or url", what);
			if ((r = mf_cstr(L, x, "subdirectory", &subdir)))
				return r;
		}
		if ((x = gpuenv_toml_get(t, "version")) && (r = poetry_spec(L, x, what, &spec)))
			return r;
		if ((x = gpuenv_toml_get(t, "url")) && (r = mf_cstr(L, x, "url", &url)))
			return r;
		if (url && x && spec[0])
			return mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col,
				"%s: a url dependency takes no version", what);
		if ((x = gpuenv_toml_get(t, "source"))) {
			if ((r = mf_cstr(L, x, "source", &ds.source)))
				return r;
		}
		if ((x = gpuenv_toml_get(t, "markers")) && (r = mf_cstr(L, x, "markers", &markers[0])))
			return r;
		if ((x = gpuenv_toml_get(t, "python")) && (r = python_marker_at(L, x, "python", &markers[1])))
			return r;
		if ((x = gpuenv_toml_get(t, "platform"))) {
			const char *p;
			if ((r = mf_cstr(L, x, "platform", &p)))
				return r;
			if (strchr(p, '"') || strchr(p, '\\'))
				return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: platform '%s'", what, p);
			markers[2] = gpuenv_arena_printf(L->arena, "sys_platform == \"%s\"", p).ptr;
			if (!markers[2])
				return gpuenv_oom(L->ctx, "the manifest");
		}
		if ((x = gpuenv_toml_get(t, "optional"))) {
			if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_BOOL, "optional")))
				return r;
			ds.optional = x->u.b;
		}
		if ((x = gpuenv_toml_get(t, "allow-prereleases"))) {
			if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_BOOL, "allow-prereleases")))
				return r;
			ds.allow_prereleases = x->u.b;
		}
		if ((x = gpuenv_toml_get(t, "extras")) && (r = mf_strs(L, x, "extras", &extras, &nextras)))
			return r;
	} else if (v->type == GPUENV_TOML_ARRAY) {
		/* multiple constraints: one requirement per entry, each with its marker */
		if (!v->u.arr->len)
			return mf_err(L, GPUENV_ETYPE, v->line, v->col, "%s: an empty constraint list", what);
		for (uint32_t i = 0; i < v->u.arr->len; i++) {
			const gpuenv_toml_value_t *e = v->u.arr->items[i];
			if (e->type != GPUENV_TOML_TABLE)
				return mf_err(L, GPUENV_ETYPE, e->line, e->col,
					"%s: each entry of a multiple-constraint list is a table "
					"{version = \"...\", markers = \"...\"}", what);
			if ((r = poetry_dep(L, key, e->line, e->col, e, base, where)))
				return r;
		}
		return 0;
	} else
		return mf_err(L, GPUENV_ETYPE, v->line, v->col,
			"'%s' must be a version constraint (string), a table or a list of tables, not %s %s",
			what, "a", gpuenv_toml_type_name(v->type));
	marker = and_markers(L, markers, 3);
	if (!marker)
		return gpuenv_oom(L->ctx, "the manifest");
	gpuenv_buf_init(&text, L->ctx, 4 * MF_MAX_STR);
	r = gpuenv_buf_puts(&text, name);
	for (size_t i = 0; !r && i < nextras; i++)
		r = gpuenv_buf_printf(&text, "%s%s%s", i ? "," : "[", extras[i], i + 1 == nextras ? "]" : "");
	if (!r && url)
		r = gpuenv_buf_printf(&text, " @ %s%s", url, marker[0] ? " " : "");
	else if (!r)
		r = gpuenv_buf_puts(&text, spec);
	if (!r && marker[0])
		r = gpuenv_buf_printf(&text, "; %s", marker);
	if (r) {
		gpuenv_buf_free(&text);
		return gpuenv_oom(L->ctx, "the manifest");
	}
	r = add_dep(L, text.data, kline, kcol, &ds, &d);
	gpuenv_buf_free(&text);
	if (r)
		return r;
	if (direct)
		d->direct = direct;
	if (subdir && d->direct)
		((gpuenv_direct_t *)d->direct)->subdirectory = subdir;
	if (v->type == GPUENV_TOML_TABLE && (x = gpuenv_toml_get(v->u.tab, "source"))) {
		d->line = x->line; /* an unknown source is reported at the value */
		d->col = x->col;
	}
	return 0;
}

static int poetry_dep_table(mf_load_t *L, const gpuenv_toml_value_t *v, const depspec_t *ds,
	const char *where, bool main_deps)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_TABLE, where);

	for (uint32_t i = 0; !r && i < v->u.tab->len; i++) {
		const gpuenv_toml_kv_t *kv = v->u.tab->items[i];
		if (main_deps && gpuenv_str_eq_cstr(kv->key, "python"))
			continue; /* the project's requires-python */
		r = poetry_dep(L, kv->key, kv->line, kv->col, &kv->val, ds, where);
	}
	return r;
}

/* ---- groups and extras ------------------------------------------------------------ */

static gpuenv_group_t *group_get(mf_load_t *L, const char *name, bool create)
{
	gpuenv_manifest_t *m = L->m;
	gpuenv_group_t *g;

	for (size_t i = 0; i < m->ngroups; i++)
		if (!strcmp(m->groups[i].name, name))
			return (gpuenv_group_t *)&m->groups[i];
	if (!create)
		return NULL;
	L->groups = mf_grow(L, L->groups, &L->cap_groups, m->ngroups, sizeof(*L->groups), MF_MAX_GROUPS,
		"dependency groups");
	if (!L->groups)
		return NULL;
	m->groups = L->groups;
	g = &L->groups[m->ngroups++];
	memset(g, 0, sizeof(*g));
	g->name = name;
	return g;
}

/* PEP 735: [dependency-groups], include-group expanded, cycles refused */
struct dg {
	const gpuenv_toml_kv_t *kv;
	const char *name;
	int state; /* 0 not done, 1 in progress, 2 done */
	size_t first, n; /* its deps in L->deps, once done */
};

static int dg_expand(mf_load_t *L, struct dg *g, size_t ng, size_t k, unsigned line, unsigned col)
{
	struct dg *me = &g[k];
	const gpuenv_toml_value_t *v = &me->kv->val;
	depspec_t ds = { me->name, NULL, NULL, false, false, "dependency-groups" };
	int r;

	if (me->state == 2)
		return 0;
	if (me->state == 1)
		return mf_err(L, GPUENV_ESYNTAX, line, col,
			"dependency group '%s' includes itself (an include-group cycle)", me->name);
	me->state = 1;
	if ((r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, "dependency-groups")))
		return r;
	/* the included groups first, so that this group's deps, its own and
	 * the copies of theirs, sit together after start */
	for (uint32_t i = 0; i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i], *inc;
		const char *iname, *norm;
		size_t j;
		if (e->type == GPUENV_TOML_STRING)
			continue;
		if (e->type != GPUENV_TOML_TABLE)
			return mf_err(L, GPUENV_ETYPE, e->line, e->col,
				"dependency group '%s': each entry is a PEP 508 string or "
				"{include-group = \"NAME\"}, not %s", me->name, gpuenv_toml_type_name(e->type));
		inc = gpuenv_toml_get(e->u.tab, "include-group");
		if (!inc || e->u.tab->len != 1)
			return mf_err(L, GPUENV_ESYNTAX, e->line, e->col,
				"dependency group '%s': a table entry holds include-group alone", me->name);
		if ((r = mf_cstr(L, inc, "include-group", &iname)))
			return r;
		if (!(norm = mf_norm(L, iname)))
			return -ENOMEM;
		for (j = 0; j < ng && strcmp(g[j].name, norm); j++)
			;
		if (j == ng)
			return mf_err(L, GPUENV_ENOTFOUND, inc->line, inc->col,
				"dependency group '%s' includes '%s', which [dependency-groups] does not declare",
				me->name, iname);
		if ((r = dg_expand(L, g, ng, j, inc->line, inc->col)))
			return r;
	}
	size_t start = L->ndeps;
	for (uint32_t i = 0; i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const char *s;
		size_t j;
		if (e->type == GPUENV_TOML_STRING) {
			if ((r = mf_cstr(L, e, "dependency-groups", &s)) ||
				(r = add_dep(L, s, e->line, e->col, &ds, NULL)))
				return r;
			continue;
		}
		s = mf_norm(L, gpuenv_arena_strndup(L->arena,
			gpuenv_toml_get(e->u.tab, "include-group")->u.str.ptr,
			gpuenv_toml_get(e->u.tab, "include-group")->u.str.len));
		if (!s)
			return gpuenv_oom(L->ctx, "the manifest");
		for (j = 0; j < ng && strcmp(g[j].name, s); j++)
			;
		for (size_t d = 0; d < g[j].n; d++) {
			gpuenv_dep_t copy = L->deps[g[j].first + d];
			copy.group = me->name;
			L->deps = mf_grow(L, L->deps, &L->capdeps, L->ndeps, sizeof(*L->deps), MF_MAX_DEPS,
				"dependencies");
			if (!L->deps)
				return L->ctx->err.code;
			L->deps[L->ndeps++] = copy;
		}
	}
	/* its deps must be contiguous: the included ones were expanded before
	 * (they sit before start, or were copied after it) */
	me->first = start;
	me->n = L->ndeps - start;
	me->state = 2;
	return 0;
}

static int dependency_groups(mf_load_t *L, const gpuenv_toml_value_t *v)
{
	struct dg *g;
	size_t ng;
	int r;

	if ((r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_TABLE, "dependency-groups")))
		return r;
	ng = v->u.tab->len;
	if (ng > MF_MAX_GROUPS)
		return mf_err(L, GPUENV_ETOOBIG, v->line, v->col, "more than %d dependency groups", MF_MAX_GROUPS);
	g = gpuenv_arena_calloc(L->arena, ng ? ng : 1, sizeof(*g));
	if (!g)
		return gpuenv_oom(L->ctx, "the manifest");
	for (size_t i = 0; i < ng; i++) {
		gpuenv_toml_kv_t *kv = v->u.tab->items[i];
		const char *raw = gpuenv_arena_strndup(L->arena, kv->key.ptr, kv->key.len);
		if (!raw || !(g[i].name = mf_norm(L, raw)))
			return gpuenv_oom(L->ctx, "the manifest");
		if (!gpuenv_name_is_valid(kv->key))
			return mf_err(L, GPUENV_ESYNTAX, kv->line, kv->col,
				"'%s' is not a valid dependency group name", raw);
		g[i].kv = kv;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(g[k].name, g[i].name))
				return mf_err(L, GPUENV_EDUPLICATE, kv->line, kv->col,
					"dependency group '%s' is declared twice (names compare normalised: "
					"'%.*s' at line %u)", raw, (int)g[k].kv->key.len, g[k].kv->key.ptr,
					g[k].kv->line);
	}
	for (size_t i = 0; i < ng; i++)
		if ((r = dg_expand(L, g, ng, i, g[i].kv->line, g[i].kv->col)))
			return r;
	for (size_t i = 0; i < ng; i++)
		if (!group_get(L, g[i].name, true))
			return L->ctx->err.code;
	return 0;
}

static gpuenv_extra_t *extra_get(mf_load_t *L, const char *name)
{
	gpuenv_manifest_t *m = L->m;
	gpuenv_extra_t *e;

	for (size_t i = 0; i < m->nextras; i++)
		if (!strcmp(m->extras[i].name, name))
			return (gpuenv_extra_t *)&m->extras[i];
	L->extras = mf_grow(L, L->extras, &L->cap_extras, m->nextras, sizeof(*L->extras), MF_MAX_GROUPS,
		"extras");
	if (!L->extras)
		return NULL;
	m->extras = L->extras;
	e = &L->extras[m->nextras++];
	memset(e, 0, sizeof(*e));
	e->name = name;
	return e;
}

static int extra_add_name(mf_load_t *L, gpuenv_extra_t *e, const char *name)
{
	const char **n;

	for (size_t i = 0; i < e->nnames; i++)
		if (!strcmp(e->names[i], name))
			return 0;
	n = gpuenv_arena_calloc(L->arena, e->nnames + 1, sizeof(*n));
	if (!n)
		return gpuenv_oom(L->ctx, "the manifest");
	if (e->nnames)
		memcpy(n, e->names, e->nnames * sizeof(*n));
	n[e->nnames++] = name;
	e->names = n;
	return 0;
}

static int optional_dependencies(mf_load_t *L, const gpuenv_toml_value_t *v)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_TABLE, "project.optional-dependencies");

	for (uint32_t i = 0; !r && i < v->u.tab->len; i++) {
		const gpuenv_toml_kv_t *kv = v->u.tab->items[i];
		const char *raw = gpuenv_arena_strndup(L->arena, kv->key.ptr, kv->key.len), *name;
		gpuenv_extra_t *e;
		size_t before = L->ndeps;
		if (!raw || !(name = mf_norm(L, raw)))
			return gpuenv_oom(L->ctx, "the manifest");
		if (!(e = extra_get(L, name)))
			return L->ctx->err.code;
		depspec_t ds = { NULL, NULL, name, true, false, "project.optional-dependencies" };
		if ((r = pep508_list(L, &kv->val, "project.optional-dependencies", &ds)))
			return r;
		for (size_t k = before; !r && k < L->ndeps; k++)
			r = extra_add_name(L, e, L->deps[k].name);
	}
	return r;
}

static int poetry_extras(mf_load_t *L, const gpuenv_toml_value_t *v)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_TABLE, "tool.poetry.extras");

	for (uint32_t i = 0; !r && i < v->u.tab->len; i++) {
		const gpuenv_toml_kv_t *kv = v->u.tab->items[i];
		const char *raw = gpuenv_arena_strndup(L->arena, kv->key.ptr, kv->key.len), *name;
		const char **names;
		size_t n;
		gpuenv_extra_t *e;
		if (!raw || !(name = mf_norm(L, raw)))
			return gpuenv_oom(L->ctx, "the manifest");
		if ((r = mf_strs(L, &kv->val, "tool.poetry.extras", &names, &n)))
			return r;
		if (!(e = extra_get(L, name)))
			return L->ctx->err.code;
		for (size_t k = 0; !r && k < n; k++) {
			const char *dn = mf_norm(L, names[k]);
			bool found = false;
			if (!dn)
				return -ENOMEM;
			for (size_t d = 0; d < L->ndeps && !found; d++)
				found = !L->deps[d].group && !strcmp(L->deps[d].name, dn);
			if (!found) {
				const gpuenv_toml_value_t *at = kv->val.u.arr->items[k];
				return mf_err(L, GPUENV_ENOTFOUND, at->line, at->col,
					"extra '%s' names '%s', which is not one of the main dependencies "
					"([tool.poetry.dependencies] with optional = true)", raw, names[k]);
			}
			r = extra_add_name(L, e, dn);
		}
	}
	return r;
}

/* ---- sources ------------------------------------------------------------------ */

static const char *const SOURCE_KEYS[] = { "name", "url", "priority", "default", "secondary", "links",
	"indexed", NULL };

static int poetry_sources(mf_load_t *L, const gpuenv_toml_value_t *v)
{
	bool primary = false, pypi = false;
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, "tool.poetry.source");

	for (uint32_t i = 0; !r && i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const gpuenv_toml_value_t *x;
		const char *name, *url = NULL, *pr = NULL;
		int prio = GPUENV_SOURCE_PRIMARY;
		bool is_pypi;
		if (e->type != GPUENV_TOML_TABLE)
			return mf_err(L, GPUENV_ETYPE, e->line, e->col, "[[tool.poetry.source]] entries are tables");
		if ((r = mf_check_keys(L, e->u.tab, SOURCE_KEYS, "[[tool.poetry.source]]")))
			return r;
		if (!(x = gpuenv_toml_get(e->u.tab, "name")))
			return mf_err(L, GPUENV_ENOTFOUND, e->line, e->col,
				"[[tool.poetry.source]] without a name");
		if ((r = mf_cstr(L, x, "name", &name)))
			return r;
		is_pypi = gpuenv_str_ieq(gpuenv_str(name), gpuenv_str("pypi"));
		if (mf_source_find(L, name) >= 0)
			return mf_err(L, GPUENV_EDUPLICATE, x->line, x->col, "source '%s' is declared twice", name);
		if ((x = gpuenv_toml_get(e->u.tab, "url"))) {
			if ((r = mf_cstr(L, x, "url", &url)))
				return r;
			if (strncmp(url, "https://", 8) && strncmp(url, "http://", 7) && strncmp(url, "file://", 7))
				return mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col,
					"source '%s': '%s' is not an http(s):// or file:// URL", name, url);
		} else if (is_pypi)
			url = PYPI_URL;
		else
			return mf_err(L, GPUENV_ENOTFOUND, e->line, e->col, "source '%s' has no url", name);
		if ((x = gpuenv_toml_get(e->u.tab, "priority"))) {
			if ((r = mf_cstr(L, x, "priority", &pr)))
				return r;
			if (!strcmp(pr, "primary"))
				prio = GPUENV_SOURCE_PRIMARY;
			else if (!strcmp(pr, "supplemental") || !strcmp(pr, "secondary"))
				prio = GPUENV_SOURCE_SUPPLEMENTAL;
			else if (!strcmp(pr, "explicit"))
				prio = GPUENV_SOURCE_EXPLICIT;
			else if (!strcmp(pr, "default"))
				prio = GPUENV_SOURCE_DEFAULT;
			else {
				mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col,
					"source '%s': unknown priority '%s'", name, pr);
				return gpuenv_hint(L->ctx, "priority is primary, supplemental or explicit");
			}
		}
		/* Poetry 1.x flags: default = true replaces PyPI, secondary = true
		 * is asked after the others (Poetry maps it to supplemental) */
		static const char *const flags[] = { "default", "secondary" };
		for (int f = 0; f < 2; f++) {
			if (!(x = gpuenv_toml_get(e->u.tab, flags[f])))
				continue;
			if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_BOOL, flags[f])))
				return r;
			if (x->u.b && pr)
				return mf_err(L, GPUENV_EDUPLICATE, x->line, x->col,
					"source '%s': both priority and %s = true", name, flags[f]);
			if (x->u.b)
				prio = f ? GPUENV_SOURCE_SUPPLEMENTAL : GPUENV_SOURCE_DEFAULT;
		}
		primary |= prio == GPUENV_SOURCE_PRIMARY || prio == GPUENV_SOURCE_DEFAULT;
		pypi |= is_pypi;
		if ((r = mf_add_source(L, name, url, prio, false, "[[tool.poetry.source]]", e->line, e->col)))
			return r;
	}
	if (r)
		return r;
	/* Poetry's rule: PyPI is the default index until a primary source is
	 * declared (or PyPI itself is) */
	if (!primary && !pypi)
		return mf_add_source(L, "pypi", PYPI_URL, GPUENV_SOURCE_DEFAULT, false, "implicit", 0, 0);
	return 0;
}

static int check_dep_sources(mf_load_t *L)
{
	for (size_t i = 0; i < L->ndeps; i++) {
		gpuenv_dep_t *d = &L->deps[i];
		bool found = false;
		char list[300] = "";
		size_t len = 0;
		if (!d->source)
			continue;
		for (size_t k = 0; k < L->m->nsources && !found; k++)
			if (gpuenv_str_ieq(gpuenv_str(L->m->sources[k].name), gpuenv_str(d->source))) {
				d->source = L->m->sources[k].name;
				found = true;
			}
		if (found)
			continue;
		for (size_t k = 0; k < L->m->nsources; k++)
			mf_list_add(list, sizeof(list), &len, L->m->sources[k].name, true);
		mf_err(L, GPUENV_ENOTFOUND, d->line, d->col, "%s: unknown source '%s'", d->name, d->source);
		return gpuenv_hint(L->ctx, "the sources declared ([[tool.poetry.source]], [[tool.uv.index]], "
					   "[[tool.pdm.source]]): %s", list);
	}
	return 0;
}

/* ---- the whole file ------------------------------------------------------------- */

/* a [tool.poetry.dependencies] entry of a name [project] declares refines it */
static void poetry_refines(mf_load_t *L, size_t nproject)
{
	size_t out = nproject;

	for (size_t i = nproject; i < L->ndeps; i++) {
		gpuenv_dep_t *d = &L->deps[i];
		bool merged = false;
		if (!d->group)
			for (size_t k = 0; k < nproject && !merged; k++)
				if (!L->deps[k].group && !L->deps[k].extra && !strcmp(L->deps[k].name, d->name)) {
					if (d->source)
						L->deps[k].source = d->source;
					L->deps[k].allow_prereleases |= d->allow_prereleases;
					merged = true;
				}
		if (!merged)
			L->deps[out++] = *d;
	}
	L->ndeps = out;
}

static int poetry_groups(mf_load_t *L, const gpuenv_toml_value_t *v)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_TABLE, "tool.poetry.group");

	for (uint32_t i = 0; !r && i < v->u.tab->len; i++) {
		const gpuenv_toml_kv_t *kv = v->u.tab->items[i];
		const char *raw = gpuenv_arena_strndup(L->arena, kv->key.ptr, kv->key.len), *name;
		const gpuenv_toml_value_t *x;
		gpuenv_group_t *g;
		char where[160];
		if (!raw || !(name = mf_norm(L, raw)))
			return gpuenv_oom(L->ctx, "the manifest");
		if ((r = gpuenv_toml_expect(L->doc, &kv->val, GPUENV_TOML_TABLE, "tool.poetry.group")))
			return r;
		if (!(g = group_get(L, name, true)))
			return L->ctx->err.code;
		if ((x = gpuenv_toml_get(kv->val.u.tab, "optional"))) {
			if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_BOOL, "optional")))
				return r;
			g->optional = x->u.b;
		}
		snprintf(where, sizeof(where), "tool.poetry.group.%s.dependencies", raw);
		depspec_t ds = { name, NULL, NULL, false, false, gpuenv_arena_strndup(L->arena, where, strlen(where)) };
		if (!ds.from)
			return gpuenv_oom(L->ctx, "the manifest");
		if ((x = gpuenv_toml_get(kv->val.u.tab, "dependencies")))
			r = poetry_dep_table(L, x, &ds, where, false);
	}
	return r;
}

static int dep_cmp(const void *a, const void *b)
{
	const gpuenv_dep_t *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->line != y->line ? (x->line < y->line ? -1 : 1) : (x->col < y->col ? -1 : x->col > y->col);
}

/* the groups' deps from L->deps into each group (in declaration order) */
static int finish_groups(mf_load_t *L)
{
	gpuenv_manifest_t *m = L->m;
	gpuenv_dep_t *main_deps;
	size_t nmain = 0;

	for (size_t i = 0; i < m->ngroups; i++) {
		gpuenv_group_t *g = (gpuenv_group_t *)&m->groups[i];
		gpuenv_dep_t *d;
		size_t n = 0;
		for (size_t k = 0; k < L->ndeps; k++)
			n += L->deps[k].group && !strcmp(L->deps[k].group, g->name);
		d = gpuenv_arena_calloc(L->arena, n ? n : 1, sizeof(*d));
		if (!d)
			return gpuenv_oom(L->ctx, "the manifest");
		n = 0;
		for (size_t k = 0; k < L->ndeps; k++)
			if (L->deps[k].group && !strcmp(L->deps[k].group, g->name)) {
				d[n] = L->deps[k];
				d[n++].group = g->name;
			}
		g->deps = d;
		g->ndeps = n;
	}
	main_deps = gpuenv_arena_calloc(L->arena, L->ndeps ? L->ndeps : 1, sizeof(*main_deps));
	if (!main_deps)
		return gpuenv_oom(L->ctx, "the manifest");
	for (size_t k = 0; k < L->ndeps; k++)
		if (!L->deps[k].group)
			main_deps[nmain++] = L->deps[k];
	m->deps = main_deps;
	m->ndeps = nmain;
	return 0;
}

static int project_table(mf_load_t *L, const gpuenv_toml_value_t *pv)
{
	const gpuenv_toml_table_t *p;
	const gpuenv_toml_value_t *x;
	gpuenv_specset_t set;
	int r;

	if ((r = gpuenv_toml_expect(L->doc, pv, GPUENV_TOML_TABLE, "project")))
		return r;
	p = pv->u.tab;
	if ((x = gpuenv_toml_get(p, "name")) && (r = mf_cstr(L, x, "project.name", &L->m->name)))
		return r;
	if ((x = gpuenv_toml_get(p, "version")) && (r = mf_cstr(L, x, "project.version", &L->m->version)))
		return r;
	if ((x = gpuenv_toml_get(p, "requires-python"))) {
		if ((r = mf_cstr(L, x, "project.requires-python", &L->m->requires_python)))
			return r;
		if ((r = gpuenv_specset_parse(L->ctx, L->arena, gpuenv_str(L->m->requires_python), &set))) {
			if (r == -ENOMEM)
				return r;
			return gpuenv_fail_prefix(L->ctx, r, L->file, x->line, x->col, "project.requires-python");
		}
	}
	depspec_t ds = { NULL, NULL, NULL, false, false, "project.dependencies" };
	if ((x = gpuenv_toml_get(p, "dependencies")) &&
		(r = pep508_list(L, x, "project.dependencies", &ds)))
		return r;
	if ((x = gpuenv_toml_get(p, "optional-dependencies")) && (r = optional_dependencies(L, x)))
		return r;
	return 0;
}

static int poetry_table(mf_load_t *L, const gpuenv_toml_value_t *tv)
{
	const gpuenv_toml_table_t *t;
	const gpuenv_toml_value_t *x, *deps;
	size_t nproject = L->ndeps;
	int r;

	if ((r = gpuenv_toml_expect(L->doc, tv, GPUENV_TOML_TABLE, "tool.poetry")))
		return r;
	t = tv->u.tab;
	if (!L->m->name && (x = gpuenv_toml_get(t, "name")) && (r = mf_cstr(L, x, "tool.poetry.name", &L->m->name)))
		return r;
	if (!L->m->version && (x = gpuenv_toml_get(t, "version")) &&
		(r = mf_cstr(L, x, "tool.poetry.version", &L->m->version)))
		return r;
	if ((deps = gpuenv_toml_get(t, "dependencies"))) {
		depspec_t ds = { NULL, NULL, NULL, false, false, "tool.poetry.dependencies" };
		if ((r = poetry_dep_table(L, deps, &ds, "tool.poetry.dependencies", true)))
			return r;
		if (deps->type == GPUENV_TOML_TABLE && (x = gpuenv_toml_get(deps->u.tab, "python")) &&
			!L->m->requires_python) {
			const char *s;
			if ((r = poetry_spec(L, x, "tool.poetry.dependencies.python", &s))) {
				if (r == GPUENV_EUNSUPPORTED) /* a union: no Requires-Python can say it */
					gpuenv_hint(L->ctx, "the project's Python range is one range here "
							    "(\">=3.8,<4.0\"); or set [project] requires-python");
				return r;
			}
			L->m->requires_python = s[0] ? s : NULL;
		}
		poetry_refines(L, nproject);
	}
	if ((x = gpuenv_toml_get(t, "dev-dependencies"))) {
		const char *dev = "dev";
		if (!group_get(L, dev, true))
			return L->ctx->err.code;
		depspec_t ds = { dev, NULL, NULL, false, false, "tool.poetry.dev-dependencies" };
		if ((r = poetry_dep_table(L, x, &ds, "tool.poetry.dev-dependencies", false)))
			return r;
	}
	if ((x = gpuenv_toml_get(t, "group")) && (r = poetry_groups(L, x)))
		return r;
	if ((x = gpuenv_toml_get(t, "extras")) && (r = poetry_extras(L, x)))
		return r;
	return 0;
}

/* ---- inputs hash --------------------------------------------------------------- */

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int direct_line(gpuenv_buf_t *b, const gpuenv_direct_t *x)
{
	int r = gpuenv_buf_printf(b, "\tdirect:%d|%s|%s|%s|%s|%s|%s|%d", x->kind, x->path ? x->path : "-",
		x->url ? x->url : "-", x->rev ? x->rev : "-", x->tag ? x->tag : "-", x->branch ? x->branch : "-",
		x->subdirectory ? x->subdirectory : "-", x->editable);
	/* an archive's pinned hash: a new one makes the lock stale (only where
	 * there is one, so that other manifests' hashes stay what they were) */
	if (!r && (x->sha256 || x->hash_other))
		r = gpuenv_buf_printf(b, "|%s|%s", x->sha256 ? x->sha256 : "-", x->hash_other ? x->hash_other : "-");
	return r;
}

static int dep_line(gpuenv_buf_t *b, const gpuenv_dep_t *d)
{
	int r = gpuenv_buf_printf(b, "dep\t%s\t%s\t", d->group ? d->group : "-", d->name);

	if (!r)
		r = gpuenv_requirement_format(&d->req, b);
	if (!r)
		r = gpuenv_buf_printf(b, "\t%s\t%d\t%s\t%d", d->source ? d->source : "-", d->optional,
			d->extra ? d->extra : "-", d->allow_prereleases);
	/* direct references and uv's conditional sources only where there are
	 * some, so that the hash of a manifest without them stays what it was */
	if (!r && d->direct)
		r = direct_line(b, d->direct);
	for (size_t i = 0; !r && i < d->nsources_by; i++) {
		const gpuenv_dep_source_t *e = &d->sources_by[i];
		r = gpuenv_buf_printf(b, "\tby:%s|%s|%s|%s", e->index ? e->index : "-",
			e->marker_text ? e->marker_text : "-", e->extra ? e->extra : "-", e->group ? e->group : "-");
		if (!r && e->direct)
			r = direct_line(b, e->direct);
	}
	return r;
}

static int target_line(gpuenv_buf_t *b, const gpuenv_manifest_target_t *t)
{
	const gpuenv_target_t *x = &t->target;
	int r = gpuenv_buf_printf(b, "target\t%s\t%s\t", t->name, t->torch_backend ? t->torch_backend : "-");

	for (size_t i = 0; !r && i < x->ngpus; i++)
		r = gpuenv_buf_printf(b, "%s/%d.%d,", x->gpus[i].name ? x->gpus[i].name : "-",
			x->gpus[i].cc_major, x->gpus[i].cc_minor);
	if (!r)
		r = gpuenv_buf_printf(b, "\t%s\t%s\t%s\t%s", x->driver ? x->driver : "-",
			x->driver_cuda ? x->driver_cuda : "-", x->python ? x->python : "-",
			t->platform ? t->platform : "-");
	for (size_t i = 0; !r && i < t->ngroups; i++)
		r = gpuenv_buf_printf(b, "%sg:%s", i ? "," : "\t", t->groups[i]);
	for (size_t i = 0; !r && i < t->nextras; i++)
		r = gpuenv_buf_printf(b, "%se:%s", i ? "," : "\t", t->extras[i]);
	return r;
}

/* sha-256 over sorted lines that say what a lock depends on: every
 * dependency in packaging's str() form with its Poetry attributes, the
 * groups, extras, sources (with their order), requires-python and
 * [tool.gpuenv]; comments, formatting and key order change none of them */
static int inputs_hash(mf_load_t *L)
{
	const gpuenv_manifest_t *m = L->m;
	size_t n = m->ndeps + m->ngroups + m->nextras + m->nsources + m->ntargets + 3, k = 0;
	const char **lines;
	gpuenv_buf_t b;
	gpuenv_sha256_t h;
	unsigned char d[GPUENV_SHA256_LEN];
	char *hex;
	int r = 0;

	for (size_t i = 0; i < m->ngroups; i++)
		n += m->groups[i].ndeps;
	lines = gpuenv_arena_calloc(L->arena, n, sizeof(*lines));
	hex = gpuenv_arena_alloc(L->arena, 2 * GPUENV_SHA256_LEN + 1);
	if (!lines || !hex)
		return gpuenv_oom(L->ctx, "the inputs hash");
	gpuenv_buf_init(&b, L->ctx, 0);
#define EMIT()                                                                   \
	do {                                                                     \
		if (!r && !(lines[k++] = gpuenv_arena_strndup(L->arena, b.data ? b.data : "", b.len))) \
			r = -ENOMEM;                                             \
		gpuenv_buf_reset(&b);                                            \
	} while (0)
	r = gpuenv_buf_printf(&b, "requires-python\t%s", m->requires_python ? m->requires_python : "-");
	EMIT();
	if (!r)
		r = gpuenv_buf_printf(&b, "gpuenv\t%s\t%s", m->torch_backend, m->torch_index);
	EMIT();
	if (!r)
		r = gpuenv_buf_puts(&b, "schema\tgpuenv.manifest/1");
	EMIT();
	for (size_t i = 0; !r && i < m->ndeps; i++) {
		r = dep_line(&b, &m->deps[i]);
		EMIT();
	}
	for (size_t g = 0; !r && g < m->ngroups; g++) {
		r = gpuenv_buf_printf(&b, "group\t%s\t%d", m->groups[g].name, m->groups[g].optional);
		EMIT();
		for (size_t i = 0; !r && i < m->groups[g].ndeps; i++) {
			r = dep_line(&b, &m->groups[g].deps[i]);
			EMIT();
		}
	}
	for (size_t i = 0; !r && i < m->nextras; i++) {
		r = gpuenv_buf_printf(&b, "extra\t%s", m->extras[i].name);
		for (size_t j = 0; !r && j < m->extras[i].nnames; j++)
			r = gpuenv_buf_printf(&b, "\t%s", m->extras[i].names[j]);
		EMIT();
	}
	for (size_t i = 0; !r && i < m->nsources; i++) {
		r = gpuenv_buf_printf(&b, "source\t%04zu\t%s\t%s\t%d", i, m->sources[i].name, m->sources[i].url,
			m->sources[i].priority);
		if (!r && m->sources[i].find_links)
			r = gpuenv_buf_puts(&b, "\tfind-links");
		for (size_t p = 0; !r && m->source_info && p < m->source_info[i].ninclude; p++)
			r = gpuenv_buf_printf(&b, "\tinclude:%s", m->source_info[i].include[p]);
		EMIT();
	}
	size_t ncommon = k;
	for (size_t i = 0; !r && i < m->ntargets; i++) {
		r = target_line(&b, &m->targets[i]);
		EMIT();
		if (!r) /* the loader's own array */
			((gpuenv_manifest_target_t *)&m->targets[i])->inputs_line = lines[k - 1];
	}
#undef EMIT
	gpuenv_buf_free(&b);
	if (r)
		return gpuenv_oom(L->ctx, "the inputs hash");
	const char **common = gpuenv_arena_calloc(L->arena, ncommon ? ncommon : 1, sizeof(*common));
	char *chex = gpuenv_arena_alloc(L->arena, 2 * GPUENV_SHA256_LEN + 1);
	if (!common || !chex)
		return gpuenv_oom(L->ctx, "the inputs hash");
	memcpy(common, lines, ncommon * sizeof(*common));
	qsort(lines, k, sizeof(*lines), line_cmp);
	qsort(common, ncommon, sizeof(*common), line_cmp);
	for (int pass = 0; pass < 2; pass++) {
		const char **ls = pass ? common : lines;
		size_t nl = pass ? ncommon : k;
		if (gpuenv_sha256_init(&h))
			return gpuenv_oom(L->ctx, "the inputs hash");
		for (size_t i = 0; i < nl; i++) {
			gpuenv_sha256_update(&h, ls[i], strlen(ls[i]));
			gpuenv_sha256_update(&h, "\n", 1);
		}
		if (gpuenv_sha256_final(&h, d))
			return gpuenv_oom(L->ctx, "the inputs hash");
		gpuenv_hex(d, sizeof(d), pass ? chex : hex);
	}
	L->m->inputs_hash = hex;
	L->m->common_inputs_hash = chex;
	return 0;
}

/* ---- entry points ---------------------------------------------------------------- */

static int load_doc(mf_load_t *L)
{
	const gpuenv_toml_table_t *root = L->doc->root;
	const gpuenv_toml_value_t *x, *tool;
	int r;

	if ((x = gpuenv_toml_get(root, "project")) && (r = project_table(L, x)))
		return r;
	tool = gpuenv_toml_get(root, "tool");
	if (tool && tool->type != GPUENV_TOML_TABLE)
		return gpuenv_toml_expect(L->doc, tool, GPUENV_TOML_TABLE, "tool");
	const gpuenv_toml_value_t *poetry = tool ? gpuenv_toml_get(tool->u.tab, "poetry") : NULL;
	const gpuenv_toml_value_t *uv = tool ? gpuenv_toml_get(tool->u.tab, "uv") : NULL;
	const gpuenv_toml_value_t *pdm = tool ? gpuenv_toml_get(tool->u.tab, "pdm") : NULL;
	if (poetry)
		mf_dialect(L, "poetry");
	/* sources before the dependencies name them: Poetry's (with its PyPI
	 * rule), uv's indexes, PDM's sources; PyPI last unless one of them
	 * replaces it */
	x = tool ? gpuenv_toml_get_path(root, "tool.poetry.source") : NULL;
	if (x && (r = poetry_sources(L, x)))
		return r;
	if (uv && (r = mf_uv_indexes(L, uv)))
		return r;
	if (pdm && (r = mf_pdm_sources(L, pdm)))
		return r;
	if (!x && !L->no_pypi &&
		(r = mf_add_source(L, "pypi", PYPI_URL, GPUENV_SOURCE_DEFAULT, false, "implicit", 0, 0)))
		return r;
	if (poetry && (r = poetry_table(L, poetry)))
		return r;
	if ((x = gpuenv_toml_get(root, "dependency-groups")) && (r = dependency_groups(L, x)))
		return r;
	if (uv && (r = mf_uv_sources(L, uv)))
		return r;
	if ((r = check_dep_sources(L)) || (r = finish_groups(L)))
		return r;
	qsort((void *)L->m->deps, L->m->ndeps, sizeof(*L->m->deps), dep_cmp);
	if ((r = mf_load_gpuenv(L, root)))
		return r;
	if (uv && (r = mf_uv_targets(L, uv)))
		return r;
	return inputs_hash(L);
}

int gpuenv_manifest_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path, const char *text,
	size_t len, const gpuenv_kb_t *kb, gpuenv_manifest_t *out)
{
	gpuenv_toml_doc_t doc;
	mf_load_t L;
	int r;

	memset(out, 0, sizeof(*out));
	if (!path)
		path = "pyproject.toml";
	if (len > GPUENV_MANIFEST_MAX_SIZE)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0, "%zu bytes: a manifest is at most %zu",
			len, GPUENV_MANIFEST_MAX_SIZE);
	if ((r = gpuenv_toml_doc_init(&doc, ctx, path)))
		return gpuenv_oom(ctx, "the manifest");
	doc.max_size = GPUENV_MANIFEST_MAX_SIZE;
	if ((r = gpuenv_toml_parse(&doc, text, len))) {
		gpuenv_toml_doc_free(&doc);
		return r;
	}
	memset(&L, 0, sizeof(L));
	L.ctx = ctx;
	L.arena = arena;
	L.doc = &doc;
	L.file = path;
	L.kb = kb;
	L.m = out;
	out->path = gpuenv_arena_strndup(arena, path, strlen(path));
	r = out->path ? load_doc(&L) : gpuenv_oom(ctx, "the manifest");
	gpuenv_toml_doc_free(&doc);
	if (r) {
		gpuenv_error_t e = ctx->err;
		memset(out, 0, sizeof(*out));
		ctx->err = e;
		if (r == -ENOMEM && ctx->err.code != -ENOMEM)
			gpuenv_oom(ctx, "the manifest");
	}
	return r;
}

int gpuenv_manifest_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path, const gpuenv_kb_t *kb,
	gpuenv_manifest_t *out)
{
	gpuenv_buf_t b;
	int r;

	memset(out, 0, sizeof(*out));
	gpuenv_buf_init(&b, ctx, GPUENV_MANIFEST_MAX_SIZE + 1);
	if ((r = gpuenv_fs_read(ctx, path, GPUENV_MANIFEST_MAX_SIZE, &b))) {
		gpuenv_buf_free(&b);
		return r;
	}
	r = gpuenv_manifest_parse(ctx, arena, path, b.data ? b.data : "", b.len, kb, out);
	gpuenv_buf_free(&b);
	return r;
}
