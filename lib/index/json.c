/* PEP 691 simple index pages (application/vnd.pypi.simple.v1+json): the
 * files list with hashes, requires-python, yanked (PEP 592), core-metadata
 * (PEP 714, and PEP 691's dist-info-metadata), size and upload-time (PEP
 * 700).  jansson decodes; the values are copied into the caller's arena. */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "gpuenv/json.h"
#include "gpuenv/pep440.h"

#include "index_int.h"

typedef struct jp {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *url;
	gpuenv_str_t base;
} jp_t;

static int bad(jp_t *p, size_t i, const char *key, const char *what)
{
	if (key)
		return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, 0, 0,
			"malformed index page: files[%zu].%s: %s", i, key, what);
	return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, 0, 0, "malformed index page: %s", what);
}

static const char *copy(jp_t *p, json_t *s)
{
	return gpuenv_arena_strndup(p->arena, json_string_value(s), json_string_length(s));
}

/* "sha256" of a hashes object: NULL when absent; *r set on a bad value. */
static const char *hash_of(jp_t *p, json_t *hashes, size_t i, const char *key, int *r)
{
	json_t *h;
	const char *hex;

	if (!json_is_object(hashes)) {
		*r = bad(p, i, key, "expected an object of hashes");
		return NULL;
	}
	h = json_object_get(hashes, "sha256");
	if (!h)
		return NULL;
	if (!json_is_string(h) ||
		!(hex = ix_sha256_hex(p->arena, gpuenv_str_n(json_string_value(h), json_string_length(h))))) {
		*r = bad(p, i, key, "the sha256 is not 64 hex digits");
		return NULL;
	}
	return hex;
}

static int one_file(jp_t *p, ix_files_t *files, json_t *o, size_t i, gpuenv_index_file_t *f)
{
	json_t *v;
	gpuenv_str_t url;
	int r = 0;

	if (!json_is_object(o))
		return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, 0, 0,
			"malformed index page: files[%zu]: expected an object", i);
	v = json_object_get(o, "filename");
	if (!json_is_string(v) || !json_string_length(v))
		return bad(p, i, "filename", "expected a non-empty string");
	if (!(f->filename = copy(p, v)))
		return gpuenv_oom(p->ctx, "for an index page");
	v = json_object_get(o, "url");
	if (!json_is_string(v) || !json_string_length(v))
		return bad(p, i, "url", "expected a non-empty string");
	url = ix_url_resolve(p->arena, p->base, gpuenv_str_n(json_string_value(v), json_string_length(v)),
		NULL);
	if (!url.ptr)
		return gpuenv_oom(p->ctx, "for an index page");
	f->url = url.ptr;
	if ((v = json_object_get(o, "hashes"))) {
		f->sha256 = hash_of(p, v, i, "hashes", &r);
		if (r)
			return r;
	}
	/* requires-python and upload-time: a wrong one is ignored with a
	 * warning (ix_files_finish checks the strings), as pip does */
	v = json_object_get(o, "requires-python");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			ix_files_ignore(files, f, IX_ATTR_REQUIRES_PYTHON, json_is_number(v) ? "a number" : "not a string",
				"expected a string or null");
		else if (json_string_length(v) && !(f->requires_python = copy(p, v)))
			return gpuenv_oom(p->ctx, "for an index page");
	}
	v = json_object_get(o, "yanked");
	if (v && json_is_string(v)) {
		f->yanked = true;
		if (json_string_length(v) && !(f->yanked_reason = copy(p, v)))
			return gpuenv_oom(p->ctx, "for an index page");
	} else if (v && json_is_boolean(v)) {
		f->yanked = json_is_true(v);
	} else if (v && !json_is_null(v)) {
		return bad(p, i, "yanked", "expected a boolean or a string");
	}
	/* PEP 714 names it core-metadata; dist-info-metadata is the older key */
	const char *key = "core-metadata";
	if (!(v = json_object_get(o, key))) {
		key = "dist-info-metadata";
		v = json_object_get(o, key);
	}
	if (v && json_is_boolean(v)) {
		f->has_metadata = json_is_true(v);
	} else if (v && json_is_object(v)) {
		f->has_metadata = true;
		f->metadata_sha256 = hash_of(p, v, i, key, &r);
		if (r)
			return r;
	} else if (v && !json_is_null(v)) {
		return bad(p, i, key, "expected a boolean or an object of hashes");
	}
	v = json_object_get(o, "size");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return bad(p, i, "size", "expected a non-negative integer");
		f->size = (int64_t)json_integer_value(v);
	}
	v = json_object_get(o, "upload-time");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			ix_files_ignore(files, f, IX_ATTR_UPLOAD_TIME, json_is_number(v) ? "a number" : "not a string",
				"expected a string");
		else if (!(f->upload_time = copy(p, v)))
			return gpuenv_oom(p->ctx, "for an index page");
	}
	return 0;
}

static int decode(jp_t *p, json_t *root, gpuenv_index_project_t *out)
{
	ix_files_t files = { .ctx = p->ctx };
	json_t *meta, *ver, *name, *arr;
	gpuenv_str_t major;
	int r = 0;

	if (!json_is_object(root))
		return bad(p, 0, NULL, "expected a JSON object");
	meta = json_object_get(root, "meta");
	ver = json_is_object(meta) ? json_object_get(meta, "api-version") : NULL;
	if (!json_is_string(ver))
		return bad(p, 0, NULL, "no meta.api-version string (not a PEP 691 page)");
	gpuenv_str_split(gpuenv_str_n(json_string_value(ver), json_string_length(ver)), '.', &major);
	if (!gpuenv_str_eq_cstr(major, "1")) {
		gpuenv_fail(p->ctx, GPUENV_EUNSUPPORTED, p->url, 0, 0,
			"api-version %s of the simple API is not supported", json_string_value(ver));
		return gpuenv_hint(p->ctx, "gpuenv reads version 1.x (PEP 691)");
	}
	name = json_object_get(root, "name");
	if (json_is_string(name)) {
		size_t n = json_string_length(name);
		char *s = gpuenv_arena_alloc(p->arena, n + 1);
		if (!s)
			return gpuenv_oom(p->ctx, "for an index page");
		gpuenv_name_normalize_to(gpuenv_str_n(json_string_value(name), n), s, n + 1);
		out->name = s;
	} else if (name && !json_is_null(name)) {
		return bad(p, 0, NULL, "name: expected a string");
	}
	arr = json_object_get(root, "files");
	if (!json_is_array(arr))
		return bad(p, 0, NULL, "no files array");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		gpuenv_index_file_t *f = ix_files_push(&files, p->url, &r);
		if (!f || (r = one_file(p, &files, json_array_get(arr, i), i, f))) {
			ix_files_free(&files);
			return r;
		}
	}
	return ix_files_finish(&files, p->arena, out, p->url);
}

int gpuenv_simple_json_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url,
	gpuenv_str_t body, gpuenv_index_project_t *out)
{
	jp_t p = { ctx, arena, NULL, GPUENV_STR_NULL };
	gpuenv_json_scope_t scope;
	json_error_t je;
	json_t *root;
	gpuenv_str_t page;
	bool oom;
	int r;

	memset(out, 0, sizeof(*out));
	page = ix_url_strip(arena, gpuenv_str(base_url ? base_url : ""), NULL, NULL);
	if (!page.ptr)
		return gpuenv_oom(ctx, "for an index page");
	p.url = page.len ? page.ptr : "index page";
	p.base = page;
	if (body.len > IX_PAGE_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, p.url, 0, 0,
			"index page of %zu bytes is larger than the %zu MiB limit", body.len,
			IX_PAGE_MAX >> 20);
	out->page_url = page.ptr;
	if (!(out->name = ix_page_name(arena, page.ptr)))
		return gpuenv_oom(ctx, "for an index page");
	gpuenv_json_enter(ctx, &scope);
	root = json_loadb(body.ptr ? body.ptr : "", body.len, 0, &je);
	if (!root) {
		oom = gpuenv_json_leave(&scope);
		if (oom)
			return gpuenv_oom(ctx, "for an index page");
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, p.url, je.line > 0 ? (unsigned)je.line : 0,
			je.column > 0 ? (unsigned)je.column : 0, "malformed index page: %s", je.text);
	}
	r = decode(&p, root, out);
	json_decref(root);
	oom = gpuenv_json_leave(&scope);
	if (oom && r != -ENOMEM) {
		r = gpuenv_oom(ctx, "for an index page");
	}
	if (r) {
		out->files = NULL;
		out->nfiles = 0;
	}
	return r;
}
