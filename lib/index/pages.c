/* What the two page parsers (html.c, json.c) share: the growing file list
 * and the project name a page URL ends with. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/pep440.h"
#include "gpuenv/toml.h"

#include "index_int.h"

gpuenv_index_file_t *ix_files_push(ix_files_t *f, const char *base_url, int *r)
{
	if (f->n >= IX_FILES_MAX) {
		gpuenv_fail(f->ctx, GPUENV_ETOOBIG, base_url, 0, 0, "more than %d files on one page",
			IX_FILES_MAX);
		*r = gpuenv_hint(f->ctx, "no index has a project that large: the URL is likely not a project's "
					 "page; check --index-url, or give the files as --find-links");
		return NULL;
	}
	if (f->n == f->cap) {
		/* realloc, not gpuenv_array_grow: the new room is not zeroed, so
		 * a big page's list costs the files it holds, not its capacity
		 * (the room past them stays untouched) */
		size_t ncap = f->cap ? 2 * f->cap : 16;
		gpuenv_index_file_t *v = gpuenv_realloc(f->ctx, f->v, ncap * sizeof(*v));
		if (!v) {
			*r = gpuenv_oom(f->ctx, "for an index page's files");
			return NULL;
		}
		f->v = v;
		f->cap = ncap;
	}
	gpuenv_index_file_t *e = &f->v[f->n++];
	memset(e, 0, sizeof(*e));
	e->size = -1;
	return e;
}

/* Strings longer than this get an arena block of their own. */
#define STR_BLOCK ((size_t)64 << 10)
#define STR_OWN ((size_t)4 << 10)
/* Distinct values interned at most (past them: copies). */
#define INTERN_MAX 4096

const char *ix_files_str(ix_files_t *f, gpuenv_str_t s)
{
	char *out;

	if (s.len >= STR_OWN) {
		out = gpuenv_arena_alloc(f->arena, s.len + 1);
	} else {
		if (f->left < s.len + 1) {
			if (!(f->at = gpuenv_arena_alloc(f->arena, STR_BLOCK))) {
				f->left = 0;
				return NULL;
			}
			f->left = STR_BLOCK;
		}
		out = f->at;
		f->at += s.len + 1;
		f->left -= s.len + 1;
	}
	if (!out)
		return NULL;
	if (s.len)
		memcpy(out, s.ptr, s.len);
	out[s.len] = '\0';
	return out;
}

const char *ix_files_intern(ix_files_t *f, gpuenv_str_t s)
{
	bool found;
	const char *v;

	f->interned.ctx = f->ctx;
	v = gpuenv_strmap_get(&f->interned, s.ptr, s.len, &found);
	if (found)
		return v;
	if (!(v = ix_files_str(f, s)))
		return NULL;
	if (f->interned.n < INTERN_MAX) {
		gpuenv_error_t keep = f->ctx->err; /* the map records its failure: not ours to report */
		if (gpuenv_strmap_put(&f->interned, v, s.len, (void *)v)) {
			f->ctx->err = keep;
			return NULL;
		}
	}
	return v;
}

const char *ix_files_name(ix_files_t *f, const char *url, gpuenv_str_t name)
{
	size_t ul = strlen(url);

	if (name.len && ul > name.len && url[ul - name.len - 1] == '/' &&
		!memcmp(url + ul - name.len, name.ptr, name.len))
		return url + ul - name.len;
	return ix_files_str(f, name);
}

int ix_files_sha256(ix_files_t *f, gpuenv_str_t s, const char **out)
{
	char hex[64];

	if (s.len != sizeof(hex))
		return 1;
	for (size_t i = 0; i < sizeof(hex); i++) {
		if (gpuenv_hex_digit(s.ptr[i]) < 0)
			return 1;
		hex[i] = gpuenv_to_lower(s.ptr[i]);
	}
	if (!(*out = ix_files_str(f, gpuenv_str_n(hex, sizeof(hex)))))
		return -ENOMEM;
	return 0;
}

static const char *const ATTR_NAMES[IX_NATTR] = { "requires-python", "upload-time" };

void ix_files_ignore(ix_files_t *f, gpuenv_index_file_t *e, int attr, const char *value, const char *why)
{
	if (attr == IX_ATTR_REQUIRES_PYTHON)
		e->requires_python = NULL;
	else
		e->upload_time = NULL;
	if (!f->nignored[attr]++)
		snprintf(f->first[attr], sizeof(f->first[attr]), "%.120s: '%.80s': %.180s", e->filename ? e->filename : "?",
			value, why);
}

/* Each file's requires-python and upload-time checked (see
 * ix_files_finish); -ENOMEM or 0. */
static int check_attrs(ix_files_t *f)
{
	gpuenv_ctx_t *ctx = f->ctx;
	gpuenv_arena_t scratch;
	int r = 0;

	const char *good = NULL; /* the last valid one: a page repeats a few */

	gpuenv_arena_init(&scratch, ctx, 0);
	for (size_t i = 0; i < f->n && !r; i++) {
		gpuenv_index_file_t *e = &f->v[i];
		if (e->requires_python && !(good && !strcmp(good, e->requires_python))) {
			gpuenv_error_t keep = ctx->err;
			gpuenv_specset_t set;
			if (gpuenv_specset_parse(ctx, &scratch, gpuenv_str(e->requires_python), &set) != 0) {
				if (ctx->err.code == -ENOMEM) {
					r = -ENOMEM;
					break;
				}
				char why[300];
				snprintf(why, sizeof(why), "%.200s", ctx->err.msg);
				ctx->err = keep;
				ix_files_ignore(f, e, IX_ATTR_REQUIRES_PYTHON, e->requires_python, why);
			} else {
				good = e->requires_python;
			}
			if (scratch.used > (1u << 20)) { /* bounded on any page */
				gpuenv_arena_free(&scratch);
				gpuenv_arena_init(&scratch, ctx, 0);
			}
		}
		if (e->upload_time && gpuenv_toml_datetime_parse(gpuenv_str(e->upload_time), NULL) != GPUENV_TOML_DATETIME)
			ix_files_ignore(f, e, IX_ATTR_UPLOAD_TIME, e->upload_time,
				"not a date-time with an offset (2025-01-25T11:30:10Z)");
	}
	gpuenv_arena_free(&scratch);
	return r;
}

int ix_files_finish(ix_files_t *f, gpuenv_arena_t *arena, gpuenv_index_project_t *out, const char *page_url)
{
	gpuenv_index_file_t *v = NULL;

	if (page_url && check_attrs(f)) {
		ix_files_free(f);
		return gpuenv_oom(f->ctx, "checking an index page's files");
	}
	for (int k = 0; k < IX_NATTR; k++)
		if (f->nignored[k])
			gpuenv_log(f->ctx, GPUENV_LOG_WARN, "%s: the %s of %zu file%s ignored (not valid; pip ignores "
				"it too), the first: %s", page_url ? page_url : "index page", ATTR_NAMES[k],
				f->nignored[k], f->nignored[k] == 1 ? "" : "s", f->first[k]);
	if (f->n) {
		v = gpuenv_arena_alloc(arena, f->n * sizeof(*v));
		if (!v) {
			ix_files_free(f);
			return gpuenv_oom(f->ctx, "for an index page's files");
		}
		memcpy(v, f->v, f->n * sizeof(*v));
	}
	out->files = v;
	out->nfiles = f->n;
	ix_files_free(f);
	return 0;
}

void ix_files_free(ix_files_t *f)
{
	gpuenv_free(f->ctx, f->v);
	f->v = NULL;
	f->n = f->cap = 0;
	f->interned.ctx = f->ctx;
	gpuenv_strmap_free(&f->interned);
	memset(f->nignored, 0, sizeof(f->nignored));
}

const char *ix_page_name(gpuenv_arena_t *arena, const char *page_url)
{
	gpuenv_str_t u = gpuenv_str(page_url);
	const char *q = memchr(u.ptr, '?', u.len);
	size_t end, start;
	char *out;

	if (q)
		u.len = (size_t)(q - u.ptr);
	end = u.len;
	while (end > 0 && u.ptr[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && u.ptr[start - 1] != '/')
		start--;
	if (start >= 1 && start >= 2 && u.ptr[start - 2] == '/')
		start = end; /* "https://host/": a host, not a name */
	out = gpuenv_arena_alloc(arena, end - start + 1);
	if (!out)
		return NULL;
	gpuenv_name_normalize_to(gpuenv_str_n(u.ptr + start, end - start), out, end - start + 1);
	return out;
}
