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

int mf_add_source(mf_load_t *L, const char *name, const char *url, int prio, bool find_links,
	const char *from, unsigned line, unsigned col)
{
	gpuenv_manifest_t *m = L->m;

	L->sources = mf_grow(L, L->sources, &L->cap_sources, m->nsources, sizeof(*L->sources), MF_MAX_SOURCES,
		"sources");
	if (!L->sources)
		return L->ctx->err.code;
	L->source_info = mf_grow(L, L->source_info, &L->cap_source_info, m->nsources, sizeof(*L->source_info),
		MF_MAX_SOURCES, "sources");
	if (!L->source_info)
		return L->ctx->err.code;
	m->sources = L->sources;
	m->source_info = L->source_info;
	L->sources[m->nsources] = (gpuenv_index_source_t){ .name = name, .url = url, .priority = prio,
		.find_links = find_links };
	L->source_info[m->nsources] = (gpuenv_manifest_source_info_t){ .from = from, .line = line, .col = col,
		.verify_ssl = true };
	m->nsources++;
	return 0;
}

long mf_source_find(const mf_load_t *L, const char *name)
{
	for (size_t k = 0; k < L->m->nsources; k++)
		if (gpuenv_str_ieq(gpuenv_str(L->m->sources[k].name), gpuenv_str(name)))
			return (long)k;
	return -1;
}

int mf_warn(mf_load_t *L, unsigned line, unsigned col, const char *fmt, ...)
{
	char msg[1024];
	const char *w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	L->warnings = mf_grow(L, L->warnings, &L->cap_warnings, L->m->nwarnings, sizeof(*L->warnings), 1000,
		"warnings");
	if (!L->warnings)
		return L->ctx->err.code;
	w = gpuenv_arena_printf(L->arena, "%s:%u:%u: %s", L->file, line, col, msg).ptr;
	if (!w)
		return gpuenv_oom(L->ctx, "the manifest");
	L->warnings[L->m->nwarnings++] = w;
	L->m->warnings = L->warnings;
	return 0;
}

void mf_dialect(mf_load_t *L, const char *name)
{
	if (!L->dialects && !(L->dialects = gpuenv_arena_calloc(L->arena, 4, sizeof(*L->dialects))))
		return; /* not said: nothing else depends on it */
	for (size_t i = 0; i < L->ndialects; i++)
		if (!strcmp(L->dialects[i], name))
			return;
	if (L->ndialects < 3)
		L->dialects[L->ndialects++] = name;
	L->m->dialects = L->dialects;
}

/* s[0..n) in the arena; NULL (recorded) when memory runs out */
static const char *dupn(mf_load_t *L, const char *s, size_t n)
{
	const char *o = gpuenv_arena_strndup(L->arena, s, n);

	if (!o)
		gpuenv_oom(L->ctx, "the manifest");
	return o;
}

/* The fragment of an archive's or a repository's URL (without its '#'):
 * PEP 508 / pip's "subdirectory=" and a hash ("sha256=HEX", or another
 * algorithm's name recorded for the lock's refusal), pairs joined by '&'.
 * 0, or out of memory (recorded). */
int mf_url_fragment(mf_load_t *L, gpuenv_direct_t *d, const char *frag)
{
	static const char *const others[] = { "md5", "sha1", "sha224", "sha384", "sha512" };

	for (const char *p = frag; *p;) {
		size_t n = strcspn(p, "&");
		const char *eq = memchr(p, '=', n);
		size_t k = eq ? (size_t)(eq - p) : n;
		const char *v = eq ? eq + 1 : p + n;
		size_t vn = (size_t)(p + n - v);
		if (k == 12 && !strncmp(p, "subdirectory", k)) {
			if (!(d->subdirectory = dupn(L, v, vn)))
				return L->ctx->err.code;
		} else if (k == 6 && !strncmp(p, "sha256", k)) {
			if (!(d->sha256 = dupn(L, v, vn)))
				return L->ctx->err.code;
		} else {
			for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
				if (strlen(others[i]) == k && !strncmp(p, others[i], k))
					d->hash_other = others[i];
		}
		p += n + (p[n] == '&');
	}
	return 0;
}

gpuenv_direct_t *mf_direct_of_url(mf_load_t *L, const char *url, const char *from, unsigned line, unsigned col)
{
	gpuenv_direct_t *d = gpuenv_arena_calloc(L->arena, 1, sizeof(*d));
	const char *frag, *body, *slash, *at;
	size_t n;

	if (!d) {
		gpuenv_oom(L->ctx, "the manifest");
		return NULL;
	}
	d->from = from;
	d->line = line;
	d->col = col;
	frag = strchr(url, '#');
	n = frag ? (size_t)(frag - url) : strlen(url);
	if (frag && mf_url_fragment(L, d, frag + 1) != 0)
		return NULL;
	if (!strncmp(url, "git+", 4)) {
		d->kind = GPUENV_DIRECT_GIT;
		d->sha256 = d->hash_other = NULL; /* a repository has no file hash */
		body = url + 4;
		n -= 4;
		/* the ref follows an '@' after the path's last '/' */
		slash = memchr(body, '/', n) ? body : NULL;
		for (const char *p = body; p < body + n; p++)
			if (*p == '/')
				slash = p;
		at = slash ? memchr(slash, '@', n - (size_t)(slash - body)) : NULL;
		if (at && !(d->rev = dupn(L, at + 1, n - (size_t)(at + 1 - body))))
			return NULL;
		if (!(d->url = dupn(L, body, at ? (size_t)(at - body) : n)))
			return NULL;
	} else if (!strncmp(url, "file:", 5)) {
		d->kind = GPUENV_DIRECT_PATH;
		d->sha256 = d->hash_other = NULL;
		body = url + 5;
		n -= 5;
		if (!strncmp(body, "//", 2)) {
			body += 2;
			n -= 2;
		}
		if (!(d->path = dupn(L, body, n)))
			return NULL;
	} else {
		d->kind = GPUENV_DIRECT_URL;
		if (!(d->url = dupn(L, url, n)))
			return NULL;
	}
	return d;
}

bool mf_in_list(const char *const *l, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}
