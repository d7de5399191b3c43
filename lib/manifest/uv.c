/* uv's tables (docs/manifest.md, "uv"), as uv's documentation describes
 * them: [[tool.uv.index]] as sources (uv asks its indexes in declaration
 * order, the default one, PyPI unless an index says default = true, last;
 * an explicit index only for the packages pinned to it), [tool.uv.sources]
 * attached to the dependencies read (an index pin is a dependency's source
 * exactly as Poetry's `source` is; git, path, url and workspace sources
 * are direct references; a list of sources by marker / extra / group is
 * chosen per target by gpuenv_manifest_target_deps, and its entries must
 * be disjoint, as uv requires), and [tool.uv] conflicts, environments and
 * required-environments judged against the declared targets. */
#include "manifest_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const UV_INDEX_KEYS[] = { "name", "url", "explicit", "default", "format",
	/* read and not acted on: publishing, uv's own credential and cache
	 * settings (docs/manifest.md) */
	"publish-url", "authenticate", "ignore-error-codes", "cache-control", NULL };
static const char *const UV_SOURCE_KEYS[] = { "index", "git", "url", "path", "workspace", "rev", "tag",
	"branch", "subdirectory", "lfs", "editable", "package", "marker", "extra", "group", NULL };

/* ---- [[tool.uv.index]] ------------------------------------------------------------ */

static bool index_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!gpuenv_is_alnum(*s) && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

/* A URL as given, or a local folder (uv's flat indexes take paths) as a
 * file:// URL, relative to the manifest's folder. */
static int index_url(mf_load_t *L, const gpuenv_toml_value_t *v, const char *name, const char **out)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *u, *slash;
	int r;

	if ((r = mf_cstr(L, v, "url", &u)))
		return r;
	if (!strncmp(u, "https://", 8) || !strncmp(u, "http://", 7) || !strncmp(u, "file://", 7)) {
		*out = u;
		return 0;
	}
	if (strstr(u, "://"))
		return mf_err(L, GPUENV_EUNSUPPORTED, v->line, v->col,
			"index '%s': '%s' is not an http(s):// or file:// URL", name, u);
	if (u[0] == '/') {
		*out = gpuenv_arena_printf(L->arena, "file://%s", u).ptr;
		return *out ? 0 : gpuenv_oom(L->ctx, "the manifest");
	}
	slash = strrchr(L->file, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - L->file) : 1, slash ? L->file : ".");
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	if (!realpath(dir, real))
		return mf_err(L, GPUENV_ENOTFOUND, v->line, v->col,
			"index '%s': the folder '%s' is relative to the manifest's, which cannot be found", name, u);
	*out = gpuenv_arena_printf(L->arena, "file://%s/%s", real, u[0] == '.' && u[1] == '/' ? u + 2 : u).ptr;
	return *out ? 0 : gpuenv_oom(L->ctx, "the manifest");
}

static int bool_at(mf_load_t *L, const gpuenv_toml_table_t *t, const char *key, bool *out)
{
	const gpuenv_toml_value_t *x = gpuenv_toml_get(t, key);
	int r;

	if (!x)
		return 0;
	if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_BOOL, key)))
		return r;
	*out = x->u.b;
	return 0;
}

int mf_uv_indexes(mf_load_t *L, const gpuenv_toml_value_t *uv)
{
	const gpuenv_toml_value_t *v, *x;
	const char *default_name = NULL;
	int r;

	if ((r = gpuenv_toml_expect(L->doc, uv, GPUENV_TOML_TABLE, "tool.uv")))
		return r;
	mf_dialect(L, "uv");
	if (!(v = gpuenv_toml_get(uv->u.tab, "index")))
		return 0;
	if ((r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, "tool.uv.index")))
		return r;
	for (uint32_t i = 0; i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const char *name, *url, *format = "simple";
		bool expl = false, dflt = false;
		int prio;
		if (e->type != GPUENV_TOML_TABLE)
			return mf_err(L, GPUENV_ETYPE, e->line, e->col, "[[tool.uv.index]] entries are tables");
		if ((r = mf_check_keys(L, e->u.tab, UV_INDEX_KEYS, "[[tool.uv.index]]")))
			return r;
		if ((x = gpuenv_toml_get(e->u.tab, "name"))) {
			if ((r = mf_cstr(L, x, "name", &name)))
				return r;
			if (!index_name_ok(name))
				return mf_err(L, GPUENV_ESYNTAX, x->line, x->col,
					"index name '%s': letters, digits, '-', '_' and '.' only (uv's rule)", name);
			if (mf_source_find(L, name) >= 0)
				return mf_err(L, GPUENV_EDUPLICATE, x->line, x->col, "index '%s' is declared twice",
					name);
		} else if (!(name = gpuenv_arena_printf(L->arena, "uv-index-%u", i + 1).ptr))
			return gpuenv_oom(L->ctx, "the manifest");
		if (!(x = gpuenv_toml_get(e->u.tab, "url")))
			return mf_err(L, GPUENV_ENOTFOUND, e->line, e->col, "index '%s' has no url", name);
		if ((r = index_url(L, x, name, &url)))
			return r;
		if ((r = bool_at(L, e->u.tab, "explicit", &expl)) || (r = bool_at(L, e->u.tab, "default", &dflt)))
			return r;
		if ((x = gpuenv_toml_get(e->u.tab, "format"))) {
			if ((r = mf_cstr(L, x, "format", &format)))
				return r;
			if (strcmp(format, "simple") && strcmp(format, "flat")) {
				mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col, "index '%s': unknown format '%s'",
					name, format);
				return gpuenv_hint(L->ctx, "\"simple\" (PEP 503, the default) or \"flat\" (a folder "
							   "or page of files, pip's --find-links)");
			}
		}
		if (dflt) {
			if (default_name)
				return mf_err(L, GPUENV_EDUPLICATE, e->line, e->col,
					"index '%s': a second default index ('%s' is one); uv has one", name,
					default_name);
			default_name = name;
			L->no_pypi = true; /* it replaces PyPI */
		}
		/* uv: an explicit index is only for the packages pinned to it,
		 * even when it is also the default */
		prio = expl ? GPUENV_SOURCE_EXPLICIT : dflt ? GPUENV_SOURCE_DEFAULT : GPUENV_SOURCE_PRIMARY;
		if ((r = mf_add_source(L, name, url, prio, !strcmp(format, "flat"), "[[tool.uv.index]]", e->line,
			     e->col)))
			return r;
	}
	return 0;
}

/* ---- marker overlap ------------------------------------------------------------- */

#define OV_MAX_VARS 8
#define OV_MAX_LITS 24
#define OV_MAX_CASES 50000

struct ov {
	const char *vars[OV_MAX_VARS];
	size_t nvars;
	const char *lits[OV_MAX_LITS];
	size_t nlits;
	bool too_many;
};

/* the variables and quoted values of a marker's text (packaging's str()) */
static void ov_scan(mf_load_t *L, struct ov *o, const char *s)
{
	while (*s) {
		if (*s == '"' || *s == '\'') {
			const char *e = strchr(s + 1, *s);
			size_t n = e ? (size_t)(e - s - 1) : strlen(s + 1);
			bool dup = false;
			for (size_t i = 0; i < o->nlits; i++)
				dup |= strlen(o->lits[i]) == n && !strncmp(o->lits[i], s + 1, n);
			if (!dup && o->nlits < OV_MAX_LITS)
				o->lits[o->nlits++] = gpuenv_arena_strndup(L->arena, s + 1, n);
			else if (!dup)
				o->too_many = true;
			s = e ? e + 1 : s + 1 + n;
			continue;
		}
		if (gpuenv_is_alpha(*s) || *s == '_') {
			size_t n = 0;
			while (gpuenv_is_alnum(s[n]) || s[n] == '_')
				n++;
			for (size_t i = 0; gpuenv_marker_var_name(i); i++) {
				const char *v = gpuenv_marker_var_name(i);
				bool dup = false;
				if (strlen(v) != n || strncmp(v, s, n) || !strcmp(v, "extra") || !strcmp(v, "extras") ||
					!strcmp(v, "dependency_groups"))
					continue;
				for (size_t k = 0; k < o->nvars; k++)
					dup |= o->vars[k] == v;
				if (!dup && o->nvars < OV_MAX_VARS)
					o->vars[o->nvars++] = v;
				else if (!dup)
					o->too_many = true;
			}
			s += n;
			continue;
		}
		s++;
	}
}

static bool ov_eval(mf_load_t *L, const gpuenv_marker_t *m, const gpuenv_marker_env_t *env)
{
	gpuenv_error_t keep = L->ctx->err;
	bool res = false;

	if (!m)
		return true;
	if (gpuenv_marker_eval(L->ctx, m, env, &res)) {
		res = false; /* undefined there: this environment does not count */
		L->ctx->err = keep;
	}
	return res;
}

/* Do markers a and b (NULL: always) hold together somewhere?  The
 * environments tried: every variable either names set to each value
 * either compares against, each value with ".1" appended (just above a
 * version), "0", "99999" and a value neither names.  *witness says where
 * they meet.  A pair with too many variables or values is not judged. */
static int ov_markers(mf_load_t *L, const gpuenv_dep_source_t *a, const gpuenv_dep_source_t *b, bool *meet,
	char *witness, size_t wn)
{
	struct ov o;
	const char *cand[2 * OV_MAX_LITS + 3];
	size_t nc, idx[OV_MAX_VARS], cases = 1;
	gpuenv_marker_env_t env;

	*meet = false;
	witness[0] = '\0';
	if (!a->marker || !b->marker) {
		*meet = true;
		if (a->marker || b->marker)
			snprintf(witness, wn, "where %s", a->marker ? a->marker_text : b->marker_text);
		else
			snprintf(witness, wn, "always (neither has a marker)");
		return 0;
	}
	memset(&o, 0, sizeof(o));
	ov_scan(L, &o, a->marker_text);
	ov_scan(L, &o, b->marker_text);
	for (size_t i = 0; i < o.nlits; i++)
		if (!o.lits[i])
			return gpuenv_oom(L->ctx, "the manifest");
	nc = 0;
	for (size_t i = 0; i < o.nlits; i++) {
		cand[nc++] = o.lits[i];
		if (!(cand[nc++] = gpuenv_arena_printf(L->arena, "%s.1", o.lits[i]).ptr))
			return gpuenv_oom(L->ctx, "the manifest");
	}
	cand[nc++] = "0";
	cand[nc++] = "99999";
	cand[nc++] = "gpuenv-none-of-them";
	for (size_t i = 0; i < o.nvars && cases <= OV_MAX_CASES; i++)
		cases *= nc;
	if (o.too_many || cases > OV_MAX_CASES)
		return 0;
	memset(idx, 0, sizeof(idx));
	for (size_t c = 0; c < cases; c++) {
		gpuenv_marker_env_default(&env);
		for (size_t i = 0; i < o.nvars; i++)
			gpuenv_marker_env_set(&env, o.vars[i], cand[idx[i]]);
		if (ov_eval(L, a->marker, &env) && ov_eval(L, b->marker, &env)) {
			size_t len = (size_t)snprintf(witness, wn, "where ");
			*meet = true;
			for (size_t i = 0; i < o.nvars && len < wn; i++) {
				int w = snprintf(witness + len, wn - len, "%s%s == '%s'", i ? " and " : "", o.vars[i],
					cand[idx[i]]);
				len += w > 0 ? (size_t)w : 0;
			}
			if (!o.nvars)
				snprintf(witness, wn, "in every environment");
			return 0;
		}
		for (size_t i = 0; i < o.nvars && ++idx[i] == nc; i++)
			idx[i] = 0;
	}
	return 0;
}

/* ---- [tool.uv.sources] ------------------------------------------------------------- */

static const char *name_list(mf_load_t *L, bool groups)
{
	char list[300] = "";
	size_t len = 0, n = groups ? L->m->ngroups : L->m->nextras;

	for (size_t k = 0; k < n; k++)
		mf_list_add(list, sizeof(list), &len, groups ? L->m->groups[k].name : L->m->extras[k].name, true);
	return gpuenv_arena_strndup(L->arena, list[0] ? list : "none", strlen(list[0] ? list : "none"));
}

/* the extra or group an entry names: declared, normalised */
static int entry_scope(mf_load_t *L, const gpuenv_toml_table_t *t, const char *key, const char *what,
	const char **out)
{
	const gpuenv_toml_value_t *x = gpuenv_toml_get(t, key);
	const char *raw, *norm;
	bool groups = !strcmp(key, "group");
	size_t n = groups ? L->m->ngroups : L->m->nextras;
	int r;

	*out = NULL;
	if (!x)
		return 0;
	if ((r = mf_cstr(L, x, key, &raw)) || !(norm = mf_norm(L, raw)))
		return r ? r : -ENOMEM;
	for (size_t k = 0; k < n; k++)
		if (!strcmp(groups ? L->m->groups[k].name : L->m->extras[k].name, norm)) {
			*out = norm;
			return 0;
		}
	mf_err(L, GPUENV_ENOTFOUND, x->line, x->col, "%s: %s '%s' is not declared", what, key, raw);
	return gpuenv_hint(L->ctx, "the project's %s: %s", groups ? "dependency groups" : "extras",
		name_list(L, groups));
}

static const char *index_names(mf_load_t *L)
{
	char list[300] = "";
	size_t len = 0;

	for (size_t k = 0; k < L->m->nsources; k++)
		if (L->m->source_info && !strcmp(L->m->source_info[k].from, "[[tool.uv.index]]"))
			mf_list_add(list, sizeof(list), &len, L->m->sources[k].name, true);
	return gpuenv_arena_strndup(L->arena, list[0] ? list : "none", strlen(list[0] ? list : "none"));
}

/* One [tool.uv.sources] entry (a table). */
static int source_entry(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, gpuenv_dep_source_t *out)
{
	static const char *const kinds[] = { "index", "git", "url", "path", "workspace" };
	static const char *const refs[] = { "rev", "tag", "branch" };
	const gpuenv_toml_table_t *t;
	const gpuenv_toml_value_t *x, *kind = NULL;
	const char *kname = NULL;
	gpuenv_direct_t *d;
	int r;

	memset(out, 0, sizeof(*out));
	out->line = v->line;
	out->col = v->col;
	if (v->type != GPUENV_TOML_TABLE)
		return mf_err(L, GPUENV_ETYPE, v->line, v->col,
			"%s: a source is a table ({ index = \"NAME\" }, { git = \"URL\" }, { path = \"DIR\" }, "
			"{ url = \"URL\" }) or a list of them, not %s", what, gpuenv_toml_type_name(v->type));
	t = v->u.tab;
	if ((r = mf_check_keys(L, t, UV_SOURCE_KEYS, what)))
		return r;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(x = gpuenv_toml_get(t, kinds[i])))
			continue;
		if (kind)
			return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: both %s and %s (one source each)",
				what, kname, kinds[i]);
		kind = x;
		kname = kinds[i];
	}
	if (!kind)
		return mf_err(L, GPUENV_ESYNTAX, v->line, v->col,
			"%s: a source names one of index, git, url, path or workspace", what);
	for (size_t i = 0; i < 3; i++)
		if (strcmp(kname, "git") && (x = gpuenv_toml_get(t, refs[i])))
			return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: '%s' goes with git", what, refs[i]);
	if (strcmp(kname, "path") && (x = gpuenv_toml_get(t, "editable")))
		return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: 'editable' goes with path", what);
	if (!strcmp(kname, "index")) {
		const char *name;
		long k;
		if ((x = gpuenv_toml_get(t, "subdirectory")))
			return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: 'subdirectory' goes with git or url",
				what);
		if ((r = mf_cstr(L, kind, "index", &name)))
			return r;
		if ((k = mf_source_find(L, name)) < 0) {
			mf_err(L, GPUENV_ENOTFOUND, kind->line, kind->col,
				"%s: index '%s' is not declared ([[tool.uv.index]] with name = \"%s\")", what, name, name);
			return gpuenv_hint(L->ctx, "the indexes declared: %s", index_names(L));
		}
		out->index = L->m->sources[k].name;
	} else {
		if (!(d = gpuenv_arena_calloc(L->arena, 1, sizeof(*d))))
			return gpuenv_oom(L->ctx, "the manifest");
		d->from = "tool.uv.sources";
		d->line = kind->line;
		d->col = kind->col;
		if (!strcmp(kname, "workspace")) {
			if ((r = gpuenv_toml_expect(L->doc, kind, GPUENV_TOML_BOOL, "workspace")))
				return r;
			if (!kind->u.b)
				return mf_err(L, GPUENV_ESYNTAX, kind->line, kind->col,
					"%s: workspace = false names no source", what);
			d->kind = GPUENV_DIRECT_WORKSPACE;
			d->editable = true; /* uv: workspace members are editable */
		} else if (!strcmp(kname, "path")) {
			d->kind = GPUENV_DIRECT_PATH;
			if ((r = mf_cstr(L, kind, "path", &d->path)) || (r = bool_at(L, t, "editable", &d->editable)))
				return r;
		} else {
			d->kind = !strcmp(kname, "git") ? GPUENV_DIRECT_GIT : GPUENV_DIRECT_URL;
			if ((r = mf_cstr(L, kind, kname, &d->url)))
				return r;
			if (!strncmp(d->url, "git+", 4) && d->kind == GPUENV_DIRECT_GIT)
				d->url += 4;
			const char *frag = d->kind == GPUENV_DIRECT_URL ? strchr(d->url, '#') : NULL;
			if (frag) { /* an archive's #sha256= (its subdirectory key wins below) */
				if ((r = mf_url_fragment(L, d, frag + 1)) ||
					!(d->url = gpuenv_arena_strndup(L->arena, d->url, (size_t)(frag - d->url))))
					return r ? r : gpuenv_oom(L->ctx, "the manifest");
			}
			const char **slot[3] = { &d->rev, &d->tag, &d->branch };
			const char *first = NULL;
			for (size_t i = 0; i < 3; i++) {
				if (!(x = gpuenv_toml_get(t, refs[i])))
					continue;
				if (first)
					return mf_err(L, GPUENV_ESYNTAX, x->line, x->col, "%s: both %s and %s (one ref)",
						what, first, refs[i]);
				first = refs[i];
				if ((r = mf_cstr(L, x, refs[i], slot[i])))
					return r;
			}
			if ((x = gpuenv_toml_get(t, "subdirectory")) &&
				(r = mf_cstr(L, x, "subdirectory", &d->subdirectory)))
				return r;
		}
		out->direct = d;
	}
	if ((x = gpuenv_toml_get(t, "marker"))) {
		gpuenv_marker_t *m;
		gpuenv_buf_t b;
		if ((r = mf_cstr(L, x, "marker", &out->marker_text)))
			return r;
		if ((r = gpuenv_marker_parse(L->ctx, L->arena, gpuenv_str(out->marker_text), &m))) {
			unsigned at = L->ctx->err.line <= 1 && L->ctx->err.col ? L->ctx->err.col : 1;
			if (r == -ENOMEM)
				return r;
			return gpuenv_fail_prefix(L->ctx, r, L->file, x->line, x->col + at, "%s: marker '%s'", what,
				out->marker_text);
		}
		out->marker = m;
		/* packaging's form, which the overlap check reads */
		gpuenv_buf_init(&b, L->ctx, 4 * MF_MAX_STR);
		if (gpuenv_marker_format(m, &b) || gpuenv_buf_failed(&b) ||
			!(out->marker_text = gpuenv_arena_strndup(L->arena, b.data ? b.data : "", b.len))) {
			gpuenv_buf_free(&b);
			return gpuenv_oom(L->ctx, "the manifest");
		}
		gpuenv_buf_free(&b);
	}
	if ((r = entry_scope(L, t, "extra", what, &out->extra)) || (r = entry_scope(L, t, "group", what, &out->group)))
		return r;
	return 0;
}

/* two entries of one list that can both apply: an error at the second */
static int disjoint(mf_load_t *L, const gpuenv_dep_source_t *e, size_t n, const char *what)
{
	char witness[400];
	bool meet;
	int r;

	for (size_t j = 1; j < n; j++)
		for (size_t i = 0; i < j; i++) {
			if (e[i].extra && e[j].extra && strcmp(e[i].extra, e[j].extra))
				continue;
			if (e[i].group && e[j].group && strcmp(e[i].group, e[j].group))
				continue;
			if ((r = ov_markers(L, &e[i], &e[j], &meet, witness, sizeof(witness))))
				return r;
			if (!meet)
				continue;
			mf_err(L, GPUENV_ESYNTAX, e[j].line, e[j].col,
				"%s: sources %zu and %zu both apply %s (a list of sources must be disjoint, "
				"as uv requires)", what, i + 1, j + 1, witness);
			return gpuenv_hint(L->ctx, "give each entry a marker (or extra, or group) that excludes the "
						   "others': \"sys_platform == 'linux'\" and \"sys_platform != 'linux'\"");
		}
	return 0;
}

int mf_uv_sources(mf_load_t *L, const gpuenv_toml_value_t *uv)
{
	const gpuenv_toml_value_t *v = gpuenv_toml_get(uv->u.tab, "sources");
	int r;

	if (!v)
		return 0;
	if ((r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_TABLE, "tool.uv.sources")))
		return r;
	for (uint32_t i = 0; i < v->u.tab->len; i++) {
		const gpuenv_toml_kv_t *kv = v->u.tab->items[i];
		const gpuenv_toml_value_t *val = &kv->val;
		gpuenv_dep_source_t *e;
		const char *raw, *name;
		size_t n, used = 0;
		char what[160];
		if (!gpuenv_name_is_valid(kv->key) || memchr(kv->key.ptr, '\0', kv->key.len))
			return mf_err(L, GPUENV_EREQ, kv->line, kv->col,
				"tool.uv.sources: '%.*s' is not a valid package name",
				(int)(kv->key.len > 100 ? 100 : kv->key.len), kv->key.ptr);
		if (!(raw = gpuenv_arena_strndup(L->arena, kv->key.ptr, kv->key.len)) || !(name = mf_norm(L, raw)))
			return gpuenv_oom(L->ctx, "the manifest");
		snprintf(what, sizeof(what), "tool.uv.sources.%s", raw);
		n = val->type == GPUENV_TOML_ARRAY ? val->u.arr->len : 1;
		if (!n)
			return mf_err(L, GPUENV_ETYPE, val->line, val->col, "%s: an empty list of sources", what);
		if (!(e = gpuenv_arena_calloc(L->arena, n, sizeof(*e))))
			return gpuenv_oom(L->ctx, "the manifest");
		for (size_t k = 0; k < n; k++)
			if ((r = source_entry(L, val->type == GPUENV_TOML_ARRAY ? val->u.arr->items[k] : val, what,
				     &e[k])))
				return r;
		if ((r = disjoint(L, e, n, what)))
			return r;
		for (size_t k = 0; k < L->ndeps; k++) {
			gpuenv_dep_t *d = &L->deps[k];
			if (strcmp(d->name, name))
				continue;
			used++;
			if (n == 1 && !e[0].marker && !e[0].extra && !e[0].group) {
				/* one unconditional source: what Poetry's `source` (or
				 * git / path key) says, the same fields */
				if (e[0].index)
					d->source = e[0].index;
				else
					d->direct = e[0].direct;
				d->line = e[0].line;
				d->col = e[0].col;
			} else {
				d->sources_by = e;
				d->nsources_by = n;
			}
		}
		if (!used && (r = mf_warn(L, kv->line, kv->col,
				      "%s: no dependency of the project is named '%s': the source is not used "
				      "(uv applies sources to the project's own dependencies)", what, raw)))
			return r;
	}
	return 0;
}

/* ---- [tool.uv] conflicts, environments, required-environments -------------------- */


/* conflicts = [[{ extra = "cpu" }, { extra = "cu124" }], ...]: a target that
 * turns on two items of one set cannot be one lock */
static int uv_conflicts(mf_load_t *L, const gpuenv_toml_value_t *v)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, "tool.uv.conflicts");

	for (uint32_t s = 0; !r && s < v->u.arr->len; s++) {
		const gpuenv_toml_value_t *set = v->u.arr->items[s];
		if ((r = gpuenv_toml_expect(L->doc, set, GPUENV_TOML_ARRAY, "tool.uv.conflicts")))
			return r;
		const char **names = gpuenv_arena_calloc(L->arena, set->u.arr->len + 1, sizeof(*names));
		bool *grp = gpuenv_arena_calloc(L->arena, set->u.arr->len + 1, sizeof(*grp));
		size_t n = 0;
		if (!names || !grp)
			return gpuenv_oom(L->ctx, "the manifest");
		for (uint32_t i = 0; i < set->u.arr->len; i++) {
			static const char *const keys[] = { "extra", "group", "package", NULL };
			const gpuenv_toml_value_t *it = set->u.arr->items[i], *pk;
			const char *name = NULL;
			if ((r = gpuenv_toml_expect(L->doc, it, GPUENV_TOML_TABLE, "tool.uv.conflicts")) ||
				(r = mf_check_keys(L, it->u.tab, keys, "tool.uv.conflicts")))
				return r;
			if ((pk = gpuenv_toml_get(it->u.tab, "package"))) {
				const char *p, *pn;
				if ((r = mf_cstr(L, pk, "package", &p)) || !(pn = mf_norm(L, p)))
					return r ? r : -ENOMEM;
				if (!L->m->name || strcmp(pn, mf_norm(L, L->m->name)))
					continue; /* another workspace member's */
			}
			if ((r = entry_scope(L, it->u.tab, "extra", "tool.uv.conflicts", &name)))
				return r;
			if (name) {
				names[n++] = name;
				continue;
			}
			if ((r = entry_scope(L, it->u.tab, "group", "tool.uv.conflicts", &name)))
				return r;
			if (!name)
				return mf_err(L, GPUENV_ESYNTAX, it->line, it->col,
					"tool.uv.conflicts: an item names an extra or a group");
			grp[n] = true;
			names[n++] = name;
		}
		for (size_t t = 0; t < L->m->ntargets; t++) {
			const gpuenv_manifest_target_t *mt = &L->m->targets[t];
			size_t first = SIZE_MAX;
			for (size_t i = 0; i < n; i++) {
				bool on = grp[i] ? mf_in_list(mt->groups, mt->ngroups, names[i])
						 : mf_in_list(mt->extras, mt->nextras, names[i]);
				if (!on)
					continue;
				if (first == SIZE_MAX) {
					first = i;
					continue;
				}
				mf_err(L, GPUENV_EUNSUPPORTED, mt->line, 1,
					"target %s: %s '%s' and %s '%s' are declared conflicting ([tool.uv] conflicts, "
					"line %u): uv never installs them together, and one target's lock cannot hold "
					"both", mt->name, grp[first] ? "group" : "extra", names[first],
					grp[i] ? "group" : "extra", names[i], set->line);
				return gpuenv_hint(L->ctx, "give each its own target ([tool.gpuenv.targets.NAME] "
							   "extras = [\"%s\"] in one, [\"%s\"] in another)",
					names[first], names[i]);
			}
		}
	}
	return r;
}

/* the markers of environments / required-environments (a string or a
 * list of them) */
static int env_markers(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what,
	const gpuenv_toml_value_t ***at, gpuenv_marker_t ***ms, size_t *n)
{
	size_t cnt = v->type == GPUENV_TOML_ARRAY ? v->u.arr->len : 1;
	int r;

	if (v->type != GPUENV_TOML_ARRAY && v->type != GPUENV_TOML_STRING)
		return gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, what);
	*at = gpuenv_arena_calloc(L->arena, cnt + 1, sizeof(**at));
	*ms = gpuenv_arena_calloc(L->arena, cnt + 1, sizeof(**ms));
	if (!*at || !*ms)
		return gpuenv_oom(L->ctx, "the manifest");
	for (size_t i = 0; i < cnt; i++) {
		const gpuenv_toml_value_t *e = v->type == GPUENV_TOML_ARRAY ? v->u.arr->items[i] : v;
		const char *s;
		if ((r = mf_cstr(L, e, what, &s)))
			return r;
		if ((r = gpuenv_marker_parse(L->ctx, L->arena, gpuenv_str(s), &(*ms)[i]))) {
			unsigned c = L->ctx->err.line <= 1 && L->ctx->err.col ? L->ctx->err.col : 1;
			if (r == -ENOMEM)
				return r;
			return gpuenv_fail_prefix(L->ctx, r, L->file, e->line, e->col + c, "%s: '%s'", what, s);
		}
		(*at)[i] = e;
	}
	*n = cnt;
	return 0;
}

int mf_uv_targets(mf_load_t *L, const gpuenv_toml_value_t *uv)
{
	const gpuenv_toml_value_t *x, **at[2] = { NULL, NULL };
	gpuenv_marker_t **ms[2] = { NULL, NULL };
	size_t n[2] = { 0, 0 };
	static const char *const keys[2] = { "environments", "required-environments" };
	bool *covered = NULL;
	int r;

	if ((x = gpuenv_toml_get(uv->u.tab, "conflicts")) && (r = uv_conflicts(L, x)))
		return r;
	for (int k = 0; k < 2; k++)
		if ((x = gpuenv_toml_get(uv->u.tab, keys[k])) && (r = env_markers(L, x, keys[k], &at[k], &ms[k], &n[k])))
			return r;
	if (!L->m->ntargets || (!n[0] && !n[1]))
		return 0;
	if (n[1] && !(covered = gpuenv_arena_calloc(L->arena, n[1], sizeof(*covered))))
		return gpuenv_oom(L->ctx, "the manifest");
	for (size_t t = 0; t < L->m->ntargets; t++) {
		const gpuenv_manifest_target_t *mt = &L->m->targets[t];
		gpuenv_marker_env_t env;
		bool holds[2] = { false, false };
		gpuenv_marker_env_default(&env);
		if ((r = gpuenv_target_marker_env(L->ctx, L->arena, &mt->target, &env)))
			return r;
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < n[k]; i++) {
				gpuenv_dep_source_t probe = { .marker = ms[k][i] };
				bool h = ov_eval(L, probe.marker, &env);
				holds[k] |= h;
				if (k == 1 && h)
					covered[i] = true;
			}
		/* environments: uv resolves for them alone, so a target outside
		 * them is one uv would never lock for: an error */
		if (n[0] && !holds[0]) {
			mf_err(L, GPUENV_EUNSUPPORTED, mt->line, 1,
				"target %s (%s, %s, Python %s) is outside [tool.uv] environments (line %u): uv "
				"resolves the project for those environments alone", mt->name,
				env.sys_platform ? env.sys_platform : "?", env.platform_machine ? env.platform_machine : "?",
				env.python_full_version ? env.python_full_version : "?", at[0][0]->line);
			return gpuenv_hint(L->ctx, "add the target's environment to [tool.uv] environments, or "
						   "drop the target");
		}
		/* required-environments: environments that must have wheels, not
		 * the only ones; a target outside them is locked all the same, and
		 * said */
		if (n[1] && !holds[1] &&
			(r = mf_warn(L, mt->line, 1,
				 "target %s (%s, %s) is none of [tool.uv] required-environments (line %u): uv "
				 "does not require wheels for it; gpuenv locks it all the same", mt->name,
				 env.sys_platform ? env.sys_platform : "?",
				 env.platform_machine ? env.platform_machine : "?", at[1][0]->line)))
			return r;
	}
	for (size_t i = 0; i < n[1]; i++)
		if (!covered[i] && (r = mf_warn(L, at[1][i]->line, at[1][i]->col,
					    "required environment '%.*s' is no declared target's: no lock of "
					    "gpuenv's checks that it has wheels", (int)at[1][i]->u.str.len,
					    at[1][i]->u.str.ptr)))
			return r;
	return 0;
}
