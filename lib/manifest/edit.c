/* pyproject.toml's dependencies and sources edited in the project's dialect
 * (gpuenv/manifest_edit.h), over the format-preserving editor. */
#include "gpuenv/manifest_edit.h"

#include <errno.h>
#include <string.h>

#include "gpuenv/manifest.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"

#define MAX_PATH 8

/* The value at path in the parsed document, or NULL. */
static const gpuenv_toml_value_t *doc_get(const gpuenv_toml_edit_t *ed, const char *const *path, size_t n)
{
	const gpuenv_toml_table_t *t = ed->doc.root;
	const gpuenv_toml_value_t *v = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!t || !(v = gpuenv_toml_get(t, path[i])))
			return NULL;
		t = v->type == GPUENV_TOML_TABLE ? v->u.tab : NULL;
	}
	return v;
}

static const gpuenv_toml_table_t *doc_table(const gpuenv_toml_edit_t *ed, const char *const *path, size_t n)
{
	const gpuenv_toml_value_t *v = doc_get(ed, path, n);
	return v && v->type == GPUENV_TOML_TABLE ? v->u.tab : NULL;
}

int gpuenv_manifest_edit_dialect(const gpuenv_toml_edit_t *ed, bool groups)
{
	static const char *const proj_deps[] = { "project", "dependencies" };
	static const char *const poetry_deps[] = { "tool", "poetry", "dependencies" };
	static const char *const poetry_groups[] = { "tool", "poetry", "group" };
	static const char *const groups_pep[] = { "dependency-groups" };
	bool poetry_main = doc_get(ed, poetry_deps, 3) && !doc_get(ed, proj_deps, 2);
	if (!groups)
		return poetry_main ? GPUENV_DIALECT_POETRY : GPUENV_DIALECT_PEP621;
	if (doc_get(ed, groups_pep, 1))
		return GPUENV_DIALECT_PEP621;
	return poetry_main || doc_get(ed, poetry_groups, 3) ? GPUENV_DIALECT_POETRY : GPUENV_DIALECT_PEP621;
}

/* A PEP 503-normalised copy of the name at the start of s (a requirement's
 * name, a table key), in arena. */
static const char *norm_name(gpuenv_arena_t *arena, gpuenv_str_t s)
{
	size_t n = 0;
	while (n < s.len && (gpuenv_is_alnum(s.ptr[n]) || s.ptr[n] == '.' || s.ptr[n] == '_' || s.ptr[n] == '-'))
		n++;
	char *out = gpuenv_arena_alloc(arena, n + 1);
	if (out)
		gpuenv_name_normalize_to(gpuenv_str_n(s.ptr, n), out, n + 1);
	return out;
}

/* TOML text of a basic string, in arena. */
static gpuenv_str_t toml_str(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *s)
{
	gpuenv_buf_t b;
	gpuenv_str_t out = GPUENV_STR_NULL;
	gpuenv_buf_init(&b, ctx, GPUENV_TOML_MAX_SIZE);
	gpuenv_toml_write_string(&b, gpuenv_str(s));
	if (!gpuenv_buf_failed(&b))
		out = gpuenv_arena_str(arena, gpuenv_str_n(b.data, b.len));
	gpuenv_buf_free(&b);
	if (!out.ptr && !ctx->err.code)
		gpuenv_oom(ctx, "editing pyproject.toml");
	return out;
}

/* The index of the string element of the array at path whose requirement
 * name is name (normalised), or SIZE_MAX. */
static size_t find_req(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const char *const *path, size_t n,
	const char *name)
{
	const gpuenv_toml_value_t *v = doc_get(ed, path, n);
	if (!v || v->type != GPUENV_TOML_ARRAY)
		return SIZE_MAX;
	for (size_t i = 0; i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const char *nn;
		if (e->type == GPUENV_TOML_STRING && (nn = norm_name(arena, gpuenv_str_trim(e->u.str))) && !strcmp(nn, name))
			return i;
	}
	return SIZE_MAX;
}

/* The key of table t whose name normalises to name, or NULL. */
static const gpuenv_toml_kv_t *find_key(gpuenv_arena_t *arena, const gpuenv_toml_table_t *t, const char *name)
{
	for (uint32_t i = 0; t && i < t->len; i++) {
		const char *nn = norm_name(arena, t->items[i]->key);
		if (nn && *nn && !strcmp(nn, name) && !memchr(t->items[i]->key.ptr, 0, t->items[i]->key.len))
			return t->items[i];
	}
	return NULL;
}

static const char *join_path(gpuenv_arena_t *arena, const char *const *path, size_t n)
{
	gpuenv_str_t s = gpuenv_arena_printf(arena, "%s", "");
	for (size_t i = 0; s.ptr && i < n; i++)
		s = gpuenv_arena_printf(arena, "%s%s%s", s.ptr, i ? "." : "", path[i]);
	return s.ptr;
}

/* The names of a table's keys, comma-separated ("" when none). */
static const char *key_list(gpuenv_arena_t *arena, const gpuenv_toml_table_t *t)
{
	gpuenv_str_t s = gpuenv_arena_printf(arena, "%s", "");
	for (uint32_t i = 0; s.ptr && t && i < t->len; i++)
		s = gpuenv_arena_printf(arena, "%s%s" GPUENV_STR_FMT, s.ptr, i ? ", " : "", GPUENV_STR_ARG(t->items[i]->key));
	return s.ptr;
}

static const gpuenv_toml_array_t *poetry_sources(const gpuenv_toml_edit_t *ed)
{
	static const char *const p[] = { "tool", "poetry", "source" };
	const gpuenv_toml_value_t *v = doc_get(ed, p, 3);
	return v && v->type == GPUENV_TOML_ARRAY ? v->u.arr : NULL;
}

/* The element index of the Poetry source called name, or SIZE_MAX. */
static size_t source_index(const gpuenv_toml_edit_t *ed, const char *name)
{
	const gpuenv_toml_array_t *a = poetry_sources(ed);
	for (size_t i = 0; a && i < a->len; i++) {
		const gpuenv_toml_value_t *nv;
		if (a->items[i]->type == GPUENV_TOML_TABLE && (nv = gpuenv_toml_get(a->items[i]->u.tab, "name")) &&
			nv->type == GPUENV_TOML_STRING && gpuenv_str_eq_cstr(nv->u.str, name))
			return i;
	}
	return SIZE_MAX;
}

static const char *source_names(gpuenv_arena_t *arena, const gpuenv_toml_edit_t *ed)
{
	const gpuenv_toml_array_t *a = poetry_sources(ed);
	gpuenv_str_t s = gpuenv_arena_printf(arena, "%s", "");
	for (size_t i = 0; s.ptr && a && i < a->len; i++) {
		const gpuenv_toml_value_t *nv = a->items[i]->type == GPUENV_TOML_TABLE
			? gpuenv_toml_get(a->items[i]->u.tab, "name") : NULL;
		if (nv && nv->type == GPUENV_TOML_STRING)
			s = gpuenv_arena_printf(arena, "%s%s" GPUENV_STR_FMT, s.ptr, s.ptr[0] ? ", " : "",
				GPUENV_STR_ARG(nv->u.str));
	}
	return s.ptr;
}

/* ---- PEP 621 / 735 ------------------------------------------------------ */

static int add_pep621(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const gpuenv_manifest_add_t *add,
	const gpuenv_requirement_t *req, const char *text, const char **what)
{
	gpuenv_ctx_t *ctx = ed->ctx;
	const char *path[MAX_PATH];
	size_t n;
	if (add->source)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, ed->file, 0, 0, "--source %s: a PEP 621 dependency names no "
			"index", add->source),
		       gpuenv_hint(ctx, "declare the source in [tool.gpuenv] or use a Poetry project's "
				"[[tool.poetry.source]]; torch's build index is chosen per target by gpuenv");
	if (add->group) {
		path[0] = "dependency-groups", path[1] = add->group, n = 2;
	} else if (add->extra) {
		path[0] = "project", path[1] = "optional-dependencies", path[2] = add->extra, n = 3;
	} else {
		path[0] = "project", path[1] = "dependencies", n = 2;
	}
	const char *name = norm_name(arena, req->name);
	gpuenv_str_t val = toml_str(ctx, arena, text);
	if (!name || !val.ptr)
		return gpuenv_oom(ctx, "editing pyproject.toml");
	*what = gpuenv_arena_printf(arena, "%s: %s", join_path(arena, path, n), text).ptr;
	const gpuenv_toml_value_t *v = doc_get(ed, path, n);
	if (!v) {
		gpuenv_str_t arr = gpuenv_arena_printf(arena, "[%.*s]", (int)val.len, val.ptr);
		return arr.ptr ? gpuenv_toml_edit_set(ed, path, n, arr) : gpuenv_oom(ctx, "editing pyproject.toml");
	}
	if (v->type != GPUENV_TOML_ARRAY)
		return gpuenv_fail(ctx, GPUENV_ETYPE, ed->file, v->line, v->col, "%s must be an array of strings",
			join_path(arena, path, n));
	size_t at = find_req(ed, arena, path, n, name);
	if (at != SIZE_MAX)
		return gpuenv_toml_edit_array_set(ed, path, n, at, val);
	return gpuenv_toml_edit_array_append(ed, path, n, val);
}

static int remove_pep621(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const char *name, const char *group,
	const char **what)
{
	gpuenv_ctx_t *ctx = ed->ctx;
	const char *path[MAX_PATH];
	size_t n, at;
	if (group) {
		static const char *const gp[] = { "dependency-groups" };
		path[0] = "dependency-groups", path[1] = group, n = 2;
		if (!doc_get(ed, path, n))
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "no group '%s' in [dependency-groups] "
				"(declared: %s)", group, key_list(arena, doc_table(ed, gp, 1)));
		if ((at = find_req(ed, arena, path, n, name)) == SIZE_MAX)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "%s is not in group '%s'", name, group);
		*what = join_path(arena, path, n);
		gpuenv_toml_edit_elem_t *el;
		size_t ne;
		const gpuenv_toml_edit_node_t *kv = gpuenv_toml_edit_find(ed, path, n);
		int r = kv ? gpuenv_toml_edit_elems(ed, kv, &el, &ne) : GPUENV_ENOTFOUND;
		if (r)
			return r;
		/* a group left empty goes (what an add that made it leaves) */
		if (ne == 1)
			return gpuenv_toml_edit_remove(ed, path, n, GPUENV_TOML_EDIT_PRUNE);
		return gpuenv_toml_edit_array_remove(ed, path, n, at);
	}
	path[0] = "project", path[1] = "dependencies", n = 2;
	if ((at = find_req(ed, arena, path, n, name)) != SIZE_MAX) {
		*what = "project.dependencies";
		return gpuenv_toml_edit_array_remove(ed, path, n, at);
	}
	static const char *const op[] = { "project", "optional-dependencies" };
	const gpuenv_toml_table_t *opt = doc_table(ed, op, 2);
	for (uint32_t i = 0; opt && i < opt->len; i++) {
		path[1] = "optional-dependencies";
		path[2] = gpuenv_arena_strndup(arena, opt->items[i]->key.ptr, opt->items[i]->key.len);
		if (path[2] && (at = find_req(ed, arena, path, 3, name)) != SIZE_MAX) {
			*what = join_path(arena, path, 3);
			return gpuenv_toml_edit_array_remove(ed, path, 3, at);
		}
	}
	/* where it is instead */
	static const char *const gp[] = { "dependency-groups" };
	const gpuenv_toml_table_t *groups = doc_table(ed, gp, 1);
	for (uint32_t i = 0; groups && i < groups->len; i++) {
		path[0] = "dependency-groups";
		path[1] = gpuenv_arena_strndup(arena, groups->items[i]->key.ptr, groups->items[i]->key.len);
		if (path[1] && find_req(ed, arena, path, 2, name) != SIZE_MAX)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "%s is not a main dependency; it is in "
				"group '%s' (--group %s)", name, path[1], path[1]);
	}
	return gpuenv_fail(ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "%s is not a dependency of the project", name);
}

/* ---- Poetry ------------------------------------------------------------- */

/* "pillow@^10": the name and Poetry's constraint; false when s is not
 * that shape (a PEP 508 URL requirement is "name @ scheme://..."). */
static bool poetry_at(gpuenv_str_t s, gpuenv_str_t *name, gpuenv_str_t *constraint)
{
	gpuenv_str_t head;
	gpuenv_str_t tail = gpuenv_str_split(s, '@', &head);
	if (!tail.ptr)
		return false;
	head = gpuenv_str_trim(head);
	tail = gpuenv_str_trim(tail);
	if (!gpuenv_name_is_valid(head) || !tail.len)
		return false;
	for (size_t i = 0; i + 2 < tail.len; i++)
		if (!memcmp(tail.ptr + i, "://", 3))
			return false;
	*name = head;
	*constraint = tail;
	return true;
}

static int add_poetry(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const gpuenv_manifest_add_t *add, const char *text,
	const char **what)
{
	gpuenv_ctx_t *ctx = ed->ctx;
	gpuenv_requirement_t req;
	gpuenv_str_t name, constraint;
	const char *pep440;
	int r;

	memset(&req, 0, sizeof(req));
	if (poetry_at(gpuenv_str(text), &name, &constraint)) {
		req.name = name;
	} else {
		if ((r = gpuenv_requirement_parse(ctx, arena, gpuenv_str(text), &req)) != 0)
			return gpuenv_fail_prefix(ctx, r, NULL, 0, 0, "'%s' is not a requirement", text);
		if (req.url.len)
			return gpuenv_fail(ctx, GPUENV_EUSAGE, ed->file, 0, 0, "'%s': a URL dependency is Poetry's url, "
				"git or path key; gpuenv add writes versions", text);
		/* the specifier as written: after the name and extras, before ';' */
		const char *p = text + (req.name.ptr - text) + req.name.len, *e = strchr(text, ';');
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[' && strchr(p, ']'))
			p = strchr(p, ']') + 1;
		constraint = gpuenv_str_trim(gpuenv_str_n(p, e ? (size_t)(e - p) : strlen(p)));
		if (constraint.len >= 2 && constraint.ptr[0] == '(' && constraint.ptr[constraint.len - 1] == ')')
			constraint = gpuenv_str_trim(gpuenv_str_n(constraint.ptr + 1, constraint.len - 2));
		if (!constraint.len)
			constraint = GPUENV_STR_LIT("*");
	}
	if ((r = gpuenv_manifest_poetry_constraint(ctx, arena, constraint, &pep440)) != 0)
		return gpuenv_fail_prefix(ctx, r, NULL, 0, 0, "'%s': the constraint '%.*s'", text, (int)constraint.len,
			constraint.ptr);
	if (add->source && source_index(ed, add->source) == SIZE_MAX)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "--source %s: no such [[tool.poetry.source]] "
			"(declared: %s)", add->source, source_names(arena, ed)),
		       gpuenv_hint(ctx, "declare it first: gpuenv source add %s URL", add->source);
	const char *nn = norm_name(arena, req.name);
	const char *ctext = gpuenv_arena_strndup(arena, constraint.ptr, constraint.len);
	if (!nn || !ctext)
		return gpuenv_oom(ctx, "editing pyproject.toml");

	/* the value: a string, or an inline table when it says more */
	gpuenv_str_t marker = GPUENV_STR_NULL;
	gpuenv_buf_t b;
	if (req.marker) {
		gpuenv_buf_init(&b, ctx, GPUENV_TOML_MAX_SIZE);
		gpuenv_marker_format(req.marker, &b);
		if ((r = gpuenv_buf_failed(&b)) == 0 && !(marker = gpuenv_arena_str(arena, gpuenv_str_n(b.data, b.len))).ptr)
			r = gpuenv_oom(ctx, "editing pyproject.toml");
		gpuenv_buf_free(&b);
		if (r)
			return r;
	}
	gpuenv_buf_init(&b, ctx, GPUENV_TOML_MAX_SIZE);
	bool table = req.nextras || req.marker || add->source || add->extra;
	if (table) {
		gpuenv_buf_puts(&b, "{ version = ");
		gpuenv_toml_write_string(&b, gpuenv_str(ctext));
		if (req.nextras) {
			gpuenv_buf_puts(&b, ", extras = [");
			for (size_t i = 0; i < req.nextras; i++) {
				gpuenv_buf_puts(&b, i ? ", " : "");
				gpuenv_toml_write_string(&b, req.extras[i]);
			}
			gpuenv_buf_puts(&b, "]");
		}
		if (marker.ptr) {
			gpuenv_buf_puts(&b, ", markers = ");
			gpuenv_toml_write_string(&b, marker);
		}
		if (add->source) {
			gpuenv_buf_puts(&b, ", source = ");
			gpuenv_toml_write_string(&b, gpuenv_str(add->source));
		}
		if (add->extra)
			gpuenv_buf_puts(&b, ", optional = true");
		gpuenv_buf_puts(&b, " }");
	} else {
		gpuenv_toml_write_string(&b, gpuenv_str(ctext));
	}
	if ((r = gpuenv_buf_failed(&b)) != 0) {
		gpuenv_buf_free(&b);
		return r;
	}
	gpuenv_str_t val = gpuenv_arena_str(arena, gpuenv_str_n(b.data, b.len));
	gpuenv_buf_free(&b);
	if (!val.ptr)
		return gpuenv_oom(ctx, "editing pyproject.toml");

	const char *path[MAX_PATH];
	size_t n = 0;
	path[n++] = "tool";
	path[n++] = "poetry";
	if (add->group) {
		path[n++] = "group";
		path[n++] = add->group;
	}
	path[n++] = "dependencies";
	/* the key as the file spells it when it is there */
	const gpuenv_toml_kv_t *old = find_key(arena, doc_table(ed, path, n), nn);
	path[n++] = old ? gpuenv_arena_strndup(arena, old->key.ptr, old->key.len)
			: gpuenv_arena_strndup(arena, req.name.ptr, req.name.len);
	if (!path[n - 1])
		return gpuenv_oom(ctx, "editing pyproject.toml");
	*what = gpuenv_arena_printf(arena, "[%s] %s = %.*s", join_path(arena, path, n - 1), path[n - 1], (int)val.len,
		val.ptr).ptr;
	if ((r = gpuenv_toml_edit_set(ed, path, n, val)) != 0 || !add->extra)
		return r;
	/* [tool.poetry.extras] EXTRA lists it */
	const char *xp[] = { "tool", "poetry", "extras", add->extra };
	gpuenv_str_t sv = toml_str(ctx, arena, path[n - 1]);
	if (!sv.ptr)
		return ctx->err.code;
	if (find_req(ed, arena, xp, 4, nn) != SIZE_MAX)
		return 0;
	if (!doc_get(ed, xp, 4)) {
		gpuenv_str_t arr = gpuenv_arena_printf(arena, "[%.*s]", (int)sv.len, sv.ptr);
		return arr.ptr ? gpuenv_toml_edit_set(ed, xp, 4, arr) : gpuenv_oom(ctx, "editing pyproject.toml");
	}
	return gpuenv_toml_edit_array_append(ed, xp, 4, sv);
}

static int remove_poetry(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const char *name, const char *group,
	const char **what)
{
	gpuenv_ctx_t *ctx = ed->ctx;
	const char *path[MAX_PATH];
	size_t n = 0;
	int r;
	path[n++] = "tool";
	path[n++] = "poetry";
	if (group) {
		static const char *const gp[] = { "tool", "poetry", "group" };
		path[n++] = "group";
		path[n++] = group;
		if (!doc_get(ed, path, n))
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "no group '%s' in [tool.poetry.group] "
				"(declared: %s)", group, key_list(arena, doc_table(ed, gp, 3)));
	}
	path[n++] = "dependencies";
	const gpuenv_toml_kv_t *kv = find_key(arena, doc_table(ed, path, n), name);
	if (!kv)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "%s is not in [%s]", name, join_path(arena, path, n));
	if (!(path[n++] = gpuenv_arena_strndup(arena, kv->key.ptr, kv->key.len)))
		return gpuenv_oom(ctx, "editing pyproject.toml");
	*what = join_path(arena, path, n - 1);
	if ((r = gpuenv_toml_edit_remove(ed, path, n, GPUENV_TOML_EDIT_PRUNE)) != 0 || group)
		return r;
	/* out of [tool.poetry.extras] too */
	static const char *const xp[] = { "tool", "poetry", "extras" };
	const gpuenv_toml_table_t *x = doc_table(ed, xp, 3);
	for (uint32_t i = 0; x && i < x->len; i++) {
		const char *p4[] = { "tool", "poetry", "extras",
			gpuenv_arena_strndup(arena, x->items[i]->key.ptr, x->items[i]->key.len) };
		if (!p4[3])
			return gpuenv_oom(ctx, "editing pyproject.toml");
		size_t at = find_req(ed, arena, p4, 4, name);
		if (at == SIZE_MAX)
			continue;
		const gpuenv_toml_value_t *a = doc_get(ed, p4, 4);
		r = a && a->u.arr->len == 1 ? gpuenv_toml_edit_remove(ed, p4, 4, GPUENV_TOML_EDIT_PRUNE)
					    : gpuenv_toml_edit_array_remove(ed, p4, 4, at);
		if (r)
			return r;
		x = doc_table(ed, xp, 3); /* the document was read again */
		i = (uint32_t)-1;
	}
	return 0;
}

int gpuenv_manifest_edit_add(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const gpuenv_manifest_add_t *add,
	const char **what)
{
	gpuenv_ctx_t *ctx = ed->ctx;
	const char *text = add->req;
	int dialect = gpuenv_manifest_edit_dialect(ed, add->group != NULL);
	*what = NULL;
	while (*text == ' ' || *text == '\t')
		text++;
	if (add->group && add->extra)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "--group and --optional: a dependency is in a "
			"group or an extra, not both");
	if (dialect == GPUENV_DIALECT_POETRY)
		return add_poetry(ed, arena, add, text, what);
	gpuenv_requirement_t req;
	int r = gpuenv_requirement_parse(ctx, arena, gpuenv_str(text), &req);
	if (r)
		return gpuenv_fail_prefix(ctx, r, NULL, 0, 0, "'%s' is not a PEP 508 requirement", text);
	size_t len = strlen(text);
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	const char *t = gpuenv_arena_strndup(arena, text, len);
	return t ? add_pep621(ed, arena, add, &req, t, what) : gpuenv_oom(ctx, "editing pyproject.toml");
}

int gpuenv_manifest_edit_remove(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const char *name, const char *group,
	const char **what)
{
	const char *nn = norm_name(arena, gpuenv_str(name));
	*what = NULL;
	if (!nn)
		return gpuenv_oom(ed->ctx, "editing pyproject.toml");
	if (!*nn || strlen(nn) != strlen(name))
		return gpuenv_fail(ed->ctx, GPUENV_EREQ, NULL, 0, 0, "'%s' is not a package name", name);
	if (gpuenv_manifest_edit_dialect(ed, group != NULL) == GPUENV_DIALECT_POETRY)
		return remove_poetry(ed, arena, nn, group, what);
	return remove_pep621(ed, arena, nn, group, what);
}

int gpuenv_manifest_edit_source_add(gpuenv_toml_edit_t *ed, const char *name, const char *url, const char *priority)
{
	gpuenv_ctx_t *ctx = ed->ctx;
	static const char *const p[] = { "tool", "poetry", "source" };
	gpuenv_buf_t b;
	int r;
	if (source_index(ed, name) != SIZE_MAX)
		return gpuenv_fail(ctx, GPUENV_EDUPLICATE, ed->file, 0, 0, "source '%s' is declared already", name);
	gpuenv_buf_init(&b, ctx, GPUENV_TOML_MAX_SIZE);
	gpuenv_buf_puts(&b, "name = ");
	gpuenv_toml_write_string(&b, gpuenv_str(name));
	gpuenv_buf_puts(&b, "\nurl = ");
	gpuenv_toml_write_string(&b, gpuenv_str(url));
	if (priority) {
		gpuenv_buf_puts(&b, "\npriority = ");
		gpuenv_toml_write_string(&b, gpuenv_str(priority));
	}
	gpuenv_buf_puts(&b, "\n");
	if ((r = gpuenv_buf_failed(&b)) == 0)
		r = gpuenv_toml_edit_aot_append(ed, p, 3, gpuenv_str_n(b.data, b.len));
	gpuenv_buf_free(&b);
	return r;
}

/* Does a Poetry dependency table name source? */
static bool names_source(const gpuenv_toml_table_t *deps, const char *source)
{
	for (uint32_t i = 0; deps && i < deps->len; i++) {
		const gpuenv_toml_value_t *v = &deps->items[i]->val, *s;
		if (v->type == GPUENV_TOML_TABLE && (s = gpuenv_toml_get(v->u.tab, "source")) &&
			s->type == GPUENV_TOML_STRING && gpuenv_str_eq_cstr(s->u.str, source))
			return true;
	}
	return false;
}

int gpuenv_manifest_edit_source_remove(gpuenv_toml_edit_t *ed, const char *name)
{
	static const char *const p[] = { "tool", "poetry", "source" };
	static const char *const dp[] = { "tool", "poetry", "dependencies" };
	static const char *const gp[] = { "tool", "poetry", "group" };
	size_t i = source_index(ed, name);
	if (i == SIZE_MAX)
		return gpuenv_fail(ed->ctx, GPUENV_ENOTFOUND, ed->file, 0, 0, "no [[tool.poetry.source]] called '%s'", name);
	bool used = names_source(doc_table(ed, dp, 3), name);
	const gpuenv_toml_table_t *groups = doc_table(ed, gp, 3);
	for (uint32_t k = 0; !used && groups && k < groups->len; k++) {
		const gpuenv_toml_value_t *g = &groups->items[k]->val, *d;
		if (g->type == GPUENV_TOML_TABLE && (d = gpuenv_toml_get(g->u.tab, "dependencies")) &&
			d->type == GPUENV_TOML_TABLE)
			used = names_source(d->u.tab, name);
	}
	if (used)
		return gpuenv_fail(ed->ctx, GPUENV_EUSAGE, ed->file, 0, 0, "source '%s' is still named by a dependency's "
			"source key", name),
		       gpuenv_hint(ed->ctx, "remove or change those dependencies first (gpuenv add NAME without --source)");
	/* the element index among the [[tool.poetry.source]] sections */
	return gpuenv_toml_edit_aot_remove(ed, p, 3, i);
}
