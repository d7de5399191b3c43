/* The reference the PEP 691 page reader (lib/index/json.c) is held to: the
 * reader as it was before issue 22 item 16, over jansson's tree, kept
 * here for the tests only (tests/unit/test_index.c, the simple_json fuzz
 * target): the streaming reader must give the same files, the same
 * warnings, and the same first error, for any page.  Not for use
 * elsewhere: a page's tree costs 4x the page. */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "gpuenv/json.h"
#include "gpuenv/pep440.h"

#include "../../lib/index/index_int.h"
#include "simple_json_ref.h"

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
	ix_files_t files = { .ctx = p->ctx, .arena = p->arena };
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

int ref_simple_json_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url,
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

/* ---- the two readers compared ------------------------------------------ */

static void log_to(void *ud, int level, const char *msg)
{
	gpuenv_buf_t *b = ud;

	gpuenv_buf_printf(b, "%d %s\n", level, msg);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The first field of two files that differs, or NULL. */
static const char *file_diff(const gpuenv_index_file_t *a, const gpuenv_index_file_t *b)
{
	if (!same_str(a->filename, b->filename))
		return "filename";
	if (!same_str(a->url, b->url))
		return "url";
	if (!same_str(a->sha256, b->sha256))
		return "sha256";
	if (!same_str(a->requires_python, b->requires_python))
		return "requires_python";
	if (a->yanked != b->yanked || !same_str(a->yanked_reason, b->yanked_reason))
		return "yanked";
	if (a->has_metadata != b->has_metadata || !same_str(a->metadata_sha256, b->metadata_sha256))
		return "metadata";
	if (a->size != b->size)
		return "size";
	if (!same_str(a->upload_time, b->upload_time))
		return "upload_time";
	return NULL;
}

const char *ref_simple_json_compare(const char *base_url, gpuenv_str_t body, char *why, size_t whysz)
{
	gpuenv_ctx_t c[2];
	gpuenv_arena_t a[2];
	gpuenv_buf_t log[2];
	gpuenv_index_project_t p[2];
	int r[2];
	const char *d = NULL;

	for (int k = 0; k < 2; k++) {
		gpuenv_ctx_init(&c[k]);
		gpuenv_buf_init(&log[k], &c[k], 0);
		c[k].log = log_to;
		c[k].log_ud = &log[k];
		c[k].verbosity = GPUENV_LOG_DEBUG;
		gpuenv_arena_init(&a[k], &c[k], 0);
		r[k] = k ? gpuenv_simple_json_parse(&c[k], &a[k], base_url, body, &p[k])
			 : ref_simple_json_parse(&c[k], &a[k], base_url, body, &p[k]);
	}
	why[0] = '\0';
	if (body.len && memchr(body.ptr, '\0', body.len)) {
		/* a raw NUL byte is valid JSON nowhere (RFC 8259); jansson took one
		 * right after a number or a literal, the pull parser refuses it */
		if (r[1] != GPUENV_ESYNTAX) {
			snprintf(why, whysz, "a page with a NUL byte: %d (%s)", r[1], c[1].err.msg);
			d = why;
		}
	} else if (r[0] != r[1]) {
		snprintf(why, whysz, "result %d (%s) vs %d (%s)", r[0], c[0].err.msg, r[1], c[1].err.msg);
		d = why;
	} else if (r[0]) {
		/* the reference's own messages (no position) must be the same; a
		 * syntax error is jansson's text there and the pull parser's here */
		if (!c[0].err.line && (strcmp(c[0].err.msg, c[1].err.msg) || strcmp(c[0].err.hint, c[1].err.hint))) {
			snprintf(why, whysz, "error '%s' vs '%s'", c[0].err.msg, c[1].err.msg);
			d = why;
		}
	} else if (!same_str(p[0].name, p[1].name) || !same_str(p[0].page_url, p[1].page_url) ||
		   p[0].nfiles != p[1].nfiles) {
		snprintf(why, whysz, "project: name %s vs %s, %zu vs %zu files", p[0].name, p[1].name, p[0].nfiles,
			p[1].nfiles);
		d = why;
	} else {
		for (size_t i = 0; i < p[0].nfiles && !d; i++) {
			const char *f = file_diff(&p[0].files[i], &p[1].files[i]);
			if (f) {
				snprintf(why, whysz, "files[%zu].%s differs", i, f);
				d = why;
			}
		}
		if (!d && !same_str(log[0].data, log[1].data)) {
			snprintf(why, whysz, "warnings '%s' vs '%s'", log[0].data ? log[0].data : "",
				log[1].data ? log[1].data : "");
			d = why;
		}
	}
	for (int k = 0; k < 2; k++) {
		gpuenv_arena_free(&a[k]);
		gpuenv_buf_free(&log[k]);
	}
	return d;
}
