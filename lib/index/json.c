/* PEP 691 simple index pages (application/vnd.pypi.simple.v1+json): the
 * files list with hashes, requires-python, yanked (PEP 592), core-metadata
 * (PEP 714, and PEP 691's dist-info-metadata), size and upload-time (PEP
 * 700).
 *
 * Read token by token (gpuenv/json_pull.h), never as a tree: a page of a
 * big project is tens of MB, and jansson's tree of one cost 4x its size
 * (issue 22 item 16).  Each file object's members are gathered as they
 * come (a repeated key: the last one, as jansson keeps), then judged in a
 * fixed order, as the tree reader did, so the same page gives the same
 * files and the same first error.  Errors about what the page says are
 * kept until the whole text is read: a syntax error anywhere comes first,
 * then the page's own fields (meta.api-version, name, files), then the
 * first bad file. */
#include <errno.h>
#include <string.h>

#include "gpuenv/json_pull.h"
#include "gpuenv/pep440.h"

#include "index_int.h"

#define WHAT "malformed index page"

/* One member's value as it came. */
typedef struct jv {
	int tok;	  /* GPUENV_JP_*; GPUENV_JP_END: absent */
	size_t pos;	  /* where it starts in the page */
	unsigned line, col; /* the same (the page's own fields: read before the files) */
	size_t off, len;  /* STRING: its bytes in the file's buffer */
	int64_t i;	  /* INTEGER */
	struct jv *sha256; /* an object of hashes: its "sha256" member */
} jv_t;

enum { K_FILENAME, K_URL, K_HASHES, K_REQUIRES_PYTHON, K_YANKED, K_CORE, K_DIST, K_SIZE, K_UPLOAD, NKEYS };
static const char *const KEYS[NKEYS] = { "filename", "url", "hashes", "requires-python", "yanked",
	"core-metadata", "dist-info-metadata", "size", "upload-time" };
/* the members that are objects of hashes */
#define HASHES_KEY(k) ((k) == K_HASHES || (k) == K_CORE || (k) == K_DIST)

typedef struct jfile {
	jv_t v[NKEYS];
	jv_t sha[NKEYS]; /* the "sha256" of the objects of hashes */
} jfile_t;

typedef struct jp {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *url;
	gpuenv_str_t base;
	gpuenv_jp_t jp;
	gpuenv_buf_t fbuf;     /* the current file's strings */
	gpuenv_arena_t scratch; /* URL resolution */
	ix_files_t files;
	/* the first error about a file, reported after the whole text is read */
	int ferr;
	gpuenv_error_t ferror;
} jp_t;

static gpuenv_str_t sv(const jp_t *p, const jv_t *v)
{
	return gpuenv_str_n(p->fbuf.data + v->off, v->len);
}

/* An error about what the page says at line:col (0: none). */
static int bad_lc(jp_t *p, unsigned line, unsigned col, size_t i, const char *key, const char *what)
{
	if (key)
		return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, line, col,
			WHAT ": files[%zu].%s: %s", i, key, what);
	return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, line, col, WHAT ": %s", what);
}

/* The same at offset pos of the file being read (gpuenv_jp_hold keeps it). */
static int bad_at(jp_t *p, size_t pos, size_t i, const char *key, const char *what)
{
	unsigned line, col;

	gpuenv_jp_where(&p->jp, pos, &line, &col);
	return bad_lc(p, line, col, i, key, what);
}

static bool is_number(const jv_t *v)
{
	return v->tok == GPUENV_JP_INTEGER || v->tok == GPUENV_JP_REAL;
}

static bool is_bool(const jv_t *v)
{
	return v->tok == GPUENV_JP_TRUE || v->tok == GPUENV_JP_FALSE;
}

/* The value whose first token was just read, kept as v (a string's bytes
 * appended to the file's buffer, a container skipped; with sha, an object's
 * "sha256" member kept there). */
static int keep(jp_t *p, int tok, jv_t *v, jv_t *sha)
{
	int r;

	memset(v, 0, sizeof(*v));
	v->tok = tok;
	v->pos = p->jp.tok;
	if (tok == GPUENV_JP_STRING) {
		v->off = p->fbuf.len;
		v->len = p->jp.str.len;
		gpuenv_buf_append(&p->fbuf, p->jp.str.ptr, p->jp.str.len);
		return 0;
	}
	if (tok == GPUENV_JP_INTEGER)
		v->i = p->jp.i;
	if (tok != GPUENV_JP_OBJECT || !sha)
		return gpuenv_jp_skip(&p->jp, tok);
	v->sha256 = sha;
	memset(sha, 0, sizeof(*sha));
	while ((r = gpuenv_jp_next(&p->jp)) == GPUENV_JP_KEY) {
		bool want = gpuenv_str_eq_cstr(p->jp.str, "sha256");
		if ((r = gpuenv_jp_next(&p->jp)) < 0 || (r = want ? keep(p, r, sha, NULL) : gpuenv_jp_skip(&p->jp, r)))
			return r;
	}
	return r < 0 ? r : 0;
}

/* One file object (its '{' just read): the members the client reads. */
static int read_file(jp_t *p, jfile_t *jf)
{
	int r;

	gpuenv_buf_reset(&p->fbuf);
	for (int k = 0; k < NKEYS; k++) { /* absent: an error points at the object */
		jf->v[k].tok = GPUENV_JP_END;
		jf->v[k].pos = p->jp.tok;
	}
	while ((r = gpuenv_jp_next(&p->jp)) == GPUENV_JP_KEY) {
		int k = 0;
		while (k < NKEYS && !gpuenv_str_eq_cstr(p->jp.str, KEYS[k]))
			k++;
		if ((r = gpuenv_jp_next(&p->jp)) < 0)
			return r;
		if (k == NKEYS)
			r = gpuenv_jp_skip(&p->jp, r);
		else
			r = keep(p, r, &jf->v[k], HASHES_KEY(k) ? &jf->sha[k] : NULL);
		if (r)
			return r;
	}
	if (r < 0)
		return r;
	if (gpuenv_buf_failed(&p->fbuf))
		return gpuenv_oom(p->ctx, "for an index page");
	return 0;
}

/* "sha256" of an object of hashes: NULL when absent; *r set on a bad value. */
static const char *hash_of(jp_t *p, const jv_t *hashes, size_t i, const char *key, int *r)
{
	const jv_t *h = hashes->sha256;
	const char *hex = NULL;
	int e;

	if (hashes->tok != GPUENV_JP_OBJECT) {
		*r = bad_at(p, hashes->pos, i, key, "expected an object of hashes");
		return NULL;
	}
	if (h->tok == GPUENV_JP_END)
		return NULL;
	if (h->tok != GPUENV_JP_STRING || (e = ix_files_sha256(&p->files, sv(p, h), &hex)) > 0) {
		*r = bad_at(p, h->pos, i, key, "the sha256 is not 64 hex digits");
		return NULL;
	}
	if (e)
		*r = gpuenv_oom(p->ctx, "for an index page");
	return hex;
}

/* The file's members judged, in the order the tree reader judged them. */
static int one_file(jp_t *p, const jfile_t *jf, size_t i, gpuenv_index_file_t *f)
{
	ix_files_t *files = &p->files;
	const jv_t *v;
	gpuenv_str_t url;
	int r = 0;

	v = &jf->v[K_FILENAME];
	if (v->tok != GPUENV_JP_STRING || !v->len)
		return bad_at(p, v->pos, i, "filename", "expected a non-empty string");
	const jv_t *fn = v;
	v = &jf->v[K_URL];
	if (v->tok != GPUENV_JP_STRING || !v->len)
		return bad_at(p, v->pos, i, "url", "expected a non-empty string");
	if (p->scratch.used > ((size_t)1 << 20)) { /* bounded on any page */
		gpuenv_arena_free(&p->scratch);
		gpuenv_arena_init(&p->scratch, p->ctx, 0);
	}
	url = ix_url_resolve(&p->scratch, p->base, sv(p, v), NULL);
	if (!url.ptr || !(f->url = ix_files_str(files, url)) || !(f->filename = ix_files_name(files, f->url, sv(p, fn))))
		return gpuenv_oom(p->ctx, "for an index page");
	v = &jf->v[K_HASHES];
	if (v->tok != GPUENV_JP_END) {
		f->sha256 = hash_of(p, v, i, "hashes", &r);
		if (r)
			return r;
	}
	/* requires-python and upload-time: a wrong one is ignored with a
	 * warning (ix_files_finish checks the strings), as pip does */
	v = &jf->v[K_REQUIRES_PYTHON];
	if (v->tok != GPUENV_JP_END && v->tok != GPUENV_JP_NULL) {
		if (v->tok != GPUENV_JP_STRING)
			ix_files_ignore(files, f, IX_ATTR_REQUIRES_PYTHON, is_number(v) ? "a number" : "not a string",
				"expected a string or null");
		else if (v->len && !(f->requires_python = ix_files_intern(files, sv(p, v))))
			return gpuenv_oom(p->ctx, "for an index page");
	}
	v = &jf->v[K_YANKED];
	if (v->tok == GPUENV_JP_STRING) {
		f->yanked = true;
		if (v->len && !(f->yanked_reason = ix_files_intern(files, sv(p, v))))
			return gpuenv_oom(p->ctx, "for an index page");
	} else if (is_bool(v)) {
		f->yanked = v->tok == GPUENV_JP_TRUE;
	} else if (v->tok != GPUENV_JP_END && v->tok != GPUENV_JP_NULL) {
		return bad_at(p, v->pos, i, "yanked", "expected a boolean or a string");
	}
	/* PEP 714 names it core-metadata; dist-info-metadata is the older key */
	int k = K_CORE;
	if (jf->v[k].tok == GPUENV_JP_END)
		k = K_DIST;
	v = &jf->v[k];
	if (is_bool(v)) {
		f->has_metadata = v->tok == GPUENV_JP_TRUE;
	} else if (v->tok == GPUENV_JP_OBJECT) {
		f->has_metadata = true;
		f->metadata_sha256 = hash_of(p, v, i, KEYS[k], &r);
		if (r)
			return r;
	} else if (v->tok != GPUENV_JP_END && v->tok != GPUENV_JP_NULL) {
		return bad_at(p, v->pos, i, KEYS[k], "expected a boolean or an object of hashes");
	}
	v = &jf->v[K_SIZE];
	if (v->tok != GPUENV_JP_END && v->tok != GPUENV_JP_NULL) {
		if (v->tok != GPUENV_JP_INTEGER || v->i < 0)
			return bad_at(p, v->pos, i, "size", "expected a non-negative integer");
		f->size = v->i;
	}
	v = &jf->v[K_UPLOAD];
	if (v->tok != GPUENV_JP_END && v->tok != GPUENV_JP_NULL) {
		if (v->tok != GPUENV_JP_STRING)
			ix_files_ignore(files, f, IX_ATTR_UPLOAD_TIME, is_number(v) ? "a number" : "not a string",
				"expected a string");
		else if (!(f->upload_time = ix_files_str(files, sv(p, v))))
			return gpuenv_oom(p->ctx, "for an index page");
	}
	return 0;
}

/* A failure about a file: kept for the end (the first one), and the rest
 * of the files array is only checked; out of memory ends the parse. */
static int defer(jp_t *p, int r)
{
	if (r == -ENOMEM)
		return r;
	p->ferr = r;
	p->ferror = p->ctx->err;
	return 0;
}

/* The files array (its '[' just read): a new list, as a repeated "files"
 * key replaces the first (jansson keeps the last). */
static int read_files(jp_t *p)
{
	jfile_t jf;
	int r;

	ix_files_free(&p->files);
	p->ferr = 0;
	for (size_t i = 0;; i++) {
		if ((r = gpuenv_jp_next(&p->jp)) < 0 || r == GPUENV_JP_ARRAY_END) {
			gpuenv_jp_hold(&p->jp, SIZE_MAX);
			return r < 0 ? r : 0;
		}
		size_t pos = p->jp.tok;
		int tok = r;
		gpuenv_jp_hold(&p->jp, pos); /* its errors name their line */
		if (p->ferr) {
			if ((r = gpuenv_jp_skip(&p->jp, r)))
				return r;
			continue;
		}
		gpuenv_index_file_t *f = ix_files_push(&p->files, p->url, &r);
		if (!f) {
			if ((r = defer(p, r)) || (r = gpuenv_jp_skip(&p->jp, tok)))
				return r;
			continue;
		}
		if (tok != GPUENV_JP_OBJECT) {
			int e = gpuenv_jp_skip(&p->jp, tok);
			unsigned line, col;
			if (e)
				return e;
			gpuenv_jp_where(&p->jp, pos, &line, &col);
			defer(p, gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, line, col,
				WHAT ": files[%zu]: expected an object", i));
			continue;
		}
		if ((r = read_file(p, &jf)))
			return r;
		if ((r = one_file(p, &jf, i, f)) && (r = defer(p, r)))
			return r;
	}
}

/* What the page says beside its files. */
typedef struct jtop {
	unsigned root_line, root_col;
	bool root_object, meta_object, files_array;
	jv_t version, name, files;
	gpuenv_buf_t vbuf, nbuf; /* meta.api-version and name */
} jtop_t;

/* A string value read into b (its bytes), else skipped; v says which. */
static int top_value(jp_t *p, jv_t *v, gpuenv_buf_t *b)
{
	int r = gpuenv_jp_next(&p->jp);

	if (r < 0)
		return r;
	memset(v, 0, sizeof(*v));
	v->tok = r;
	v->pos = p->jp.tok;
	gpuenv_jp_where(&p->jp, v->pos, &v->line, &v->col);
	if (r != GPUENV_JP_STRING)
		return gpuenv_jp_skip(&p->jp, r);
	gpuenv_buf_reset(b);
	if (gpuenv_buf_append(b, p->jp.str.ptr, p->jp.str.len))
		return gpuenv_oom(p->ctx, "for an index page");
	v->len = p->jp.str.len;
	return 0;
}

/* The whole text: the root object's members, files as they come. */
static int read_page(jp_t *p, jtop_t *t)
{
	int r = gpuenv_jp_next(&p->jp);

	if (r < 0)
		return r;
	gpuenv_jp_where(&p->jp, p->jp.tok, &t->root_line, &t->root_col);
	t->root_object = r == GPUENV_JP_OBJECT;
	if (!t->root_object) {
		if ((r = gpuenv_jp_skip(&p->jp, r)))
			return r;
	} else {
		while ((r = gpuenv_jp_next(&p->jp)) == GPUENV_JP_KEY) {
			if (gpuenv_str_eq_cstr(p->jp.str, "meta")) {
				if ((r = gpuenv_jp_next(&p->jp)) < 0)
					return r;
				t->meta_object = r == GPUENV_JP_OBJECT;
				t->version.tok = GPUENV_JP_END;
				if (!t->meta_object) {
					if ((r = gpuenv_jp_skip(&p->jp, r)))
						return r;
					continue;
				}
				while ((r = gpuenv_jp_next(&p->jp)) == GPUENV_JP_KEY) {
					if (gpuenv_str_eq_cstr(p->jp.str, "api-version"))
						r = top_value(p, &t->version, &t->vbuf);
					else if ((r = gpuenv_jp_next(&p->jp)) >= 0)
						r = gpuenv_jp_skip(&p->jp, r);
					if (r)
						return r;
				}
				if (r < 0)
					return r;
			} else if (gpuenv_str_eq_cstr(p->jp.str, "name")) {
				if ((r = top_value(p, &t->name, &t->nbuf)))
					return r;
			} else if (gpuenv_str_eq_cstr(p->jp.str, "files")) {
				if ((r = gpuenv_jp_next(&p->jp)) < 0)
					return r;
				t->files.tok = r;
				t->files.pos = p->jp.tok;
				gpuenv_jp_where(&p->jp, t->files.pos, &t->files.line, &t->files.col);
				t->files_array = r == GPUENV_JP_ARRAY;
				if ((r = t->files_array ? read_files(p) : gpuenv_jp_skip(&p->jp, r)))
					return r;
			} else if ((r = gpuenv_jp_next(&p->jp)) < 0 || (r = gpuenv_jp_skip(&p->jp, r))) {
				return r;
			}
		}
		if (r < 0)
			return r;
	}
	r = gpuenv_jp_next(&p->jp);
	return r < 0 ? r : 0;
}

/* The page's own fields judged, then its files. */
static int decode(jp_t *p, jtop_t *t, gpuenv_index_project_t *out)
{
	gpuenv_str_t major, ver = gpuenv_str_n(t->vbuf.data, t->version.len);

	if (!t->root_object)
		return bad_lc(p, t->root_line, t->root_col, 0, NULL, "expected a JSON object");
	if (!t->meta_object || t->version.tok != GPUENV_JP_STRING)
		return bad_lc(p, t->meta_object ? t->version.line : 0, t->meta_object ? t->version.col : 0, 0, NULL,
			"no meta.api-version string (not a PEP 691 page)");
	gpuenv_str_split(ver, '.', &major);
	if (!gpuenv_str_eq_cstr(major, "1")) {
		gpuenv_fail(p->ctx, GPUENV_EUNSUPPORTED, p->url, t->version.line, t->version.col,
			"api-version " GPUENV_STR_FMT " of the simple API is not supported", GPUENV_STR_ARG(ver));
		return gpuenv_hint(p->ctx, "gpuenv reads version 1.x (PEP 691)");
	}
	if (t->name.tok == GPUENV_JP_STRING) {
		size_t n = t->name.len;
		char *s = gpuenv_arena_alloc(p->arena, n + 1);
		if (!s)
			return gpuenv_oom(p->ctx, "for an index page");
		gpuenv_name_normalize_to(gpuenv_str_n(t->nbuf.data, n), s, n + 1);
		out->name = s;
	} else if (t->name.tok != GPUENV_JP_END && t->name.tok != GPUENV_JP_NULL) {
		return bad_lc(p, t->name.line, t->name.col, 0, NULL, "name: expected a string");
	}
	if (!t->files_array)
		return bad_lc(p, t->files.line, t->files.col, 0, NULL, "no files array");
	if (p->ferr) {
		p->ctx->err = p->ferror;
		return p->ferr;
	}
	return ix_files_finish(&p->files, p->arena, out, p->url);
}

/* The page; release: body's bytes, writable, given back as they are read
 * (NULL: not). */
static int parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url, gpuenv_str_t body,
	void *release, gpuenv_index_project_t *out)
{
	jp_t p = { .ctx = ctx, .arena = arena, .files = { .ctx = ctx, .arena = arena } };
	jtop_t t = { .version.tok = GPUENV_JP_END, .name.tok = GPUENV_JP_END, .files.tok = GPUENV_JP_END };
	gpuenv_str_t page;
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
	gpuenv_jp_init(&p.jp, ctx, body, p.url, WHAT);
	if (release)
		gpuenv_jp_release(&p.jp, release);
	gpuenv_buf_init(&p.fbuf, ctx, body.len + 64);
	gpuenv_buf_init(&t.vbuf, ctx, body.len + 64);
	gpuenv_buf_init(&t.nbuf, ctx, body.len + 64);
	gpuenv_arena_init(&p.scratch, ctx, 0);
	r = read_page(&p, &t);
	if (!r)
		r = decode(&p, &t, out);
	ix_files_free(&p.files);
	gpuenv_arena_free(&p.scratch);
	gpuenv_buf_free(&t.vbuf);
	gpuenv_buf_free(&t.nbuf);
	gpuenv_buf_free(&p.fbuf);
	gpuenv_jp_free(&p.jp);
	if (r) {
		out->files = NULL;
		out->nfiles = 0;
	}
	return r;
}

int gpuenv_simple_json_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url,
	gpuenv_str_t body, gpuenv_index_project_t *out)
{
	return parse(ctx, arena, base_url, body, NULL, out);
}

int ix_simple_json_parse_owned(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url, char *body,
	size_t len, gpuenv_index_project_t *out)
{
	return parse(ctx, arena, base_url, gpuenv_str_n(body ? body : "", len), body, out);
}
