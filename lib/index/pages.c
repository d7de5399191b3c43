/* What the two page parsers (html.c, json.c) share: the growing file list
 * and the project name a page URL ends with. */
#include <errno.h>
#include <string.h>

#include "gpuenv/pep440.h"

#include "index_int.h"

gpuenv_index_file_t *ix_files_push(ix_files_t *f, const char *base_url, int *r)
{
	if (f->n >= IX_FILES_MAX) {
		*r = gpuenv_fail(f->ctx, GPUENV_ETOOBIG, base_url, 0, 0, "more than %d files on one page",
			IX_FILES_MAX);
		return NULL;
	}
	if ((*r = gpuenv_array_grow(f->ctx, NULL, &f->v, &f->cap, f->n + 1, sizeof(*f->v), SIZE_MAX,
		     "for an index page's files")))
		return NULL;
	gpuenv_index_file_t *e = &f->v[f->n++];
	memset(e, 0, sizeof(*e));
	e->size = -1;
	return e;
}

int ix_files_finish(ix_files_t *f, gpuenv_arena_t *arena, gpuenv_index_project_t *out)
{
	gpuenv_index_file_t *v = NULL;

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
