/* lib/manifest's loader helpers (manifest_int.h), shared by manifest.c
 * ([project], Poetry, sources) and targets.c ([tool.gpuenv]): errors at a
 * value's position, strings and lists of them, PEP 503 names, arena
 * arrays, unknown keys with a suggestion.  Below both files: it calls
 * neither. */
#include "manifest_int.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

int mf_err(mf_load_t *L, int code, unsigned line, unsigned col, const char *fmt, ...)
{
	char msg[sizeof(L->ctx->err.msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(L->ctx, code, L->file, line, col, "%s", msg);
}

int mf_cstr(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const char **out)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_STRING, what);

	if (r)
		return r;
	if (v->u.str.len > MF_MAX_STR)
		return mf_err(L, GPUENV_ETOOBIG, v->line, v->col, "'%s' is %zu bytes long (at most %d)",
			what, v->u.str.len, MF_MAX_STR);
	if (memchr(v->u.str.ptr, '\0', v->u.str.len))
		return mf_err(L, GPUENV_ESYNTAX, v->line, v->col, "'%s' holds a NUL character", what);
	*out = gpuenv_arena_strndup(L->arena, v->u.str.ptr, v->u.str.len);
	return *out ? 0 : gpuenv_oom(L->ctx, "the manifest");
}

int mf_strs(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const char ***out, size_t *n)
{
	int r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, what);
	const char **a;

	if (r)
		return r;
	a = gpuenv_arena_calloc(L->arena, v->u.arr->len + 1, sizeof(*a));
	if (!a)
		return gpuenv_oom(L->ctx, "the manifest");
	for (uint32_t i = 0; i < v->u.arr->len; i++)
		if ((r = mf_cstr(L, v->u.arr->items[i], what, &a[i])))
			return r;
	*out = a;
	*n = v->u.arr->len;
	return 0;
}

const char *mf_norm(mf_load_t *L, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *o = s ? gpuenv_arena_alloc(L->arena, n + 1) : NULL;

	if (!o) {
		gpuenv_oom(L->ctx, "the manifest");
		return NULL;
	}
	gpuenv_name_normalize_to(gpuenv_str_n(s, n), o, n + 1);
	return o;
}

void *mf_grow(mf_load_t *L, void *arr, size_t *cap, size_t n, size_t size, size_t max, const char *what)
{
	void *na;
	size_t nc;

	if (n < *cap)
		return arr;
	if (n >= max) {
		gpuenv_fail(L->ctx, GPUENV_ETOOBIG, L->file, 0, 0, "more than %zu %s", max, what);
		return NULL;
	}
	nc = *cap ? *cap * 2 : 8;
	if (nc > max)
		nc = max;
	na = gpuenv_arena_calloc(L->arena, nc, size);
	if (!na) {
		gpuenv_oom(L->ctx, "the manifest");
		return NULL;
	}
	if (n)
		memcpy(na, arr, n * size);
	*cap = nc;
	return na;
}

void mf_list_add(char *list, size_t size, size_t *len, const char *name, bool quote)
{
	int w;

	if (*len >= size)
		return;
	if (!*len)
		list[0] = '\0';
	w = snprintf(list + *len, size - *len, "%s%s%s%s", *len ? ", " : "", quote ? "'" : "", name,
		quote ? "'" : "");
	if (w < 0 || (size_t)w >= size - *len) {
		list[*len] = '\0'; /* a name that does not fit is left out */
		*len = size;
		return;
	}
	*len += (size_t)w;
}

int mf_check_keys(mf_load_t *L, const gpuenv_toml_table_t *t, const char *const *known, const char *where)
{
	for (uint32_t i = 0; i < t->len; i++) {
		const gpuenv_toml_kv_t *kv = t->items[i];
		const char *best = NULL;
		size_t bestd = SIZE_MAX;
		char key[96];
		bool ok = false;
		snprintf(key, sizeof(key), "%.*s", (int)(kv->key.len > 80 ? 80 : kv->key.len), kv->key.ptr);
		for (size_t k = 0; known[k]; k++) {
			size_t d;
			if (gpuenv_str_eq_cstr(kv->key, known[k])) {
				ok = true;
				break;
			}
			d = gpuenv_edit_distance(key, known[k]);
			if (d < bestd) {
				bestd = d;
				best = known[k];
			}
		}
		if (ok)
			continue;
		mf_err(L, GPUENV_ENOTFOUND, kv->line, kv->col, "%s: unknown key '%s'", where, key);
		if (best && bestd <= 1 + strlen(key) / 3)
			return gpuenv_hint(L->ctx, "did you mean '%s'?", best);
		{
			char list[200] = "";
			size_t len = 0;
			for (size_t k = 0; known[k]; k++)
				mf_list_add(list, sizeof(list), &len, known[k], false);
			return gpuenv_hint(L->ctx, "the keys there: %s", list);
		}
	}
	return 0;
}
