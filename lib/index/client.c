/* The index client (include/gpuenv/index.h; docs/index-client.md): sources
 * and their priorities, project pages through the cache and the transfer
 * engine, find-links folders and pages, file:// indexes, core metadata. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/trace.h"
#include "gpuenv/sdist.h"
#include "gpuenv/hash.h"
#include "gpuenv/pep440.h"

#include "http_cache.h"
#include "http.h"
#include "index_int.h"

#define DEFAULT_PAGE_MAX ((size_t)64 << 20)
#define DEFAULT_META_MAX ((size_t)16 << 20)
#define DEFAULT_WHEEL_MAX ((uint64_t)2 << 30)

/* ---- the client -------------------------------------------------------- */

typedef struct src {
	gpuenv_index_source_t pub; /* strings in the client's arena, url without userinfo */
	bool is_file;		   /* a file:// URL or a path */
	const char *path;	   /* is_file: the local path */
	/* find-links: every file the folder or page lists, loaded once */
	bool fl_loaded;
	gpuenv_index_project_t fl;
} src_t;

/* What (source, name) gave: a project, or NOT_THERE. */
static char not_there_mark;
#define NOT_THERE ((void *)&not_there_mark)

struct gpuenv_index {
	gpuenv_arena_t arena;
	gpuenv_index_opts_t o;
	src_t *src;
	size_t nsrc;
	char cache[PATH_MAX]; /* <cache_dir>/http-v1 */
	ix_http_t http;
	ix_cred_t *creds;
	size_t ncreds;
	gpuenv_strmap_t pages;   /* "<source index>\n<name>" -> project or NOT_THERE */
	gpuenv_strmap_t answers; /* "<only_source>\n<name>" -> the answer */
	gpuenv_strmap_t meta;    /* file URL -> gpuenv_str_t * */
	gpuenv_index_stats_t stats;
};

static char *adup(gpuenv_index_t *ix, const char *s)
{
	return gpuenv_arena_strndup(&ix->arena, s, strlen(s));
}

/* Swallow a failure that must not stop the work (a cache write): log it. */
static void warn_only(gpuenv_ctx_t *ctx, const gpuenv_error_t *saved)
{
	char msg[1024];

	gpuenv_error_format(&ctx->err, msg, sizeof(msg));
	gpuenv_log(ctx, GPUENV_LOG_WARN, "%s", msg);
	ctx->err = *saved;
}

int gpuenv_index_cache_dir(gpuenv_ctx_t *ctx, char *out, size_t outsz)
{
	const char *v = gpuenv_ctx_getenv(ctx, "GPUENV_CACHE_DIR"), *home;
	int n;

	if (v && v[0])
		n = snprintf(out, outsz, "%s", v);
	else if ((v = gpuenv_ctx_getenv(ctx, "XDG_CACHE_HOME")) && v[0] == '/')
		n = snprintf(out, outsz, "%s/gpuenv", v);
	else if ((v = home = gpuenv_ctx_getenv(ctx, "HOME")) && home[0])
		n = snprintf(out, outsz, "%s/.cache/gpuenv", home);
	else {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
			"no cache folder: none of GPUENV_CACHE_DIR, XDG_CACHE_HOME and HOME is set");
		return gpuenv_hint(ctx, "set GPUENV_CACHE_DIR, or give a cache folder (--cache-dir)");
	}
	if (n < 0 || (size_t)n >= outsz)
		return gpuenv_fail(ctx, -ENAMETOOLONG, v, 0, 0, "cache path too long");
	return 0;
}

static int cache_root(gpuenv_ctx_t *ctx, const char *dir, char *out, size_t outsz)
{
	char def[PATH_MAX];
	int r, n;

	if (!dir || !dir[0]) {
		if ((r = gpuenv_index_cache_dir(ctx, def, sizeof(def))))
			return r;
		dir = def;
	}
	n = snprintf(out, outsz, "%s/http-v1", dir);
	if (n < 0 || (size_t)n >= outsz)
		return gpuenv_fail(ctx, -ENAMETOOLONG, dir, 0, 0, "cache path too long");
	return 0;
}

/* GPUENV_INDEX_<NAME>_<WHAT>: the name upper-cased, other bytes '_'. */
static const char *cred_env(gpuenv_ctx_t *ctx, const char *name, const char *what)
{
	char var[160];
	size_t n = 0;

	n = (size_t)snprintf(var, sizeof(var), "GPUENV_INDEX_");
	for (const char *p = name; *p && n + 20 < sizeof(var); p++) {
		char c = *p;
		var[n++] = (char)((c >= 'a' && c <= 'z') ? c - 32 :
			((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c : '_');
	}
	snprintf(var + n, sizeof(var) - n, "_%s", what);
	return gpuenv_ctx_getenv(ctx, var);
}

static int add_source(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, const gpuenv_index_source_t *in,
	src_t *s)
{
	gpuenv_str_t user, pass, url;
	const char *env_user, *env_pass;

	if (!in->url || !in->url[0])
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "source %s has no URL",
			in->name ? in->name : "(unnamed)");
	const char *rel = in->url;

	s->pub = *in;
	s->pub.name = adup(ix, in->name ? in->name : in->url);
	if (!s->pub.name)
		return gpuenv_oom(ctx, "for the index client");
	/* "file://wheels" names the relative folder wheels (not a host), as
	 * people write it */
	if (!strncmp(rel, "file://", 7) && rel[7] && rel[7] != '/' && strncmp(rel + 7, "localhost/", 10))
		rel += 7;
	if (rel[0] == '/' || rel != in->url || (in->find_links && !strstr(rel, "://"))) {
		/* a path: an absolute file:// URL for messages and links */
		char abs[PATH_MAX];
		if (rel[0] == '/') {
			snprintf(abs, sizeof(abs), "%s", rel);
		} else {
			char cwd[PATH_MAX];
			if (!getcwd(cwd, sizeof(cwd)))
				return gpuenv_fail(ctx, -errno, in->url, 0, 0, "cannot resolve the path");
			if ((size_t)snprintf(abs, sizeof(abs), "%.*s/%s", (int)(sizeof(cwd) / 2), cwd,
				    rel) >= sizeof(abs))
				return gpuenv_fail(ctx, -ENAMETOOLONG, in->url, 0, 0, "path too long");
		}
		gpuenv_fs_tidy_path(abs);
		url = ix_path_to_file_url(&ix->arena, abs);
		user = pass = gpuenv_str_n("", 0);
	} else {
		url = ix_url_strip(&ix->arena, gpuenv_str(in->url), &user, &pass);
	}
	if (!url.ptr)
		return gpuenv_oom(ctx, "for the index client");
	/* an index URL is a folder: project pages are relative to it */
	if (!in->find_links && url.len && url.ptr[url.len - 1] != '/') {
		url = gpuenv_arena_printf(&ix->arena, "%s/", url.ptr);
		if (!url.ptr)
			return gpuenv_oom(ctx, "for the index client");
	}
	s->pub.url = url.ptr;
	gpuenv_str_t p = ix_file_url_path(&ix->arena, url.ptr);
	s->is_file = p.ptr != NULL;
	s->path = p.ptr;
	env_user = cred_env(ctx, s->pub.name, "USERNAME");
	env_pass = cred_env(ctx, s->pub.name, "PASSWORD");
	if (!user.len && env_user) {
		user = gpuenv_str(env_user);
		pass = gpuenv_str(env_pass ? env_pass : "");
	}
	if (user.len && !s->is_file) {
		ix_cred_t *c = &ix->creds[ix->ncreds];
		c->prefix = (char *)s->pub.url;
		if (!ix_url_host(s->pub.url, c->host, sizeof(c->host)))
			c->host[0] = '\0';
		c->user = gpuenv_arena_strndup(&ix->arena, user.ptr, user.len);
		c->pass = gpuenv_arena_strndup(&ix->arena, pass.ptr ? pass.ptr : "", pass.len);
		if (!c->user || !c->pass)
			return gpuenv_oom(ctx, "for the index client");
		ix->ncreds++;
	}
	return 0;
}

int gpuenv_index_open(gpuenv_ctx_t *ctx, const gpuenv_index_opts_t *opts, gpuenv_index_t **out)
{
	gpuenv_index_t *ix;
	int r;

	*out = NULL;
	ix = gpuenv_calloc(ctx, 1, sizeof(*ix));
	if (!ix)
		return gpuenv_oom(ctx, "for the index client");
	gpuenv_arena_init(&ix->arena, ctx, 0);
	ix->o = *opts;
	ix->pages.ctx = ix->answers.ctx = ix->meta.ctx = ctx;
	if (!ix->o.max_parallel)
		ix->o.max_parallel = 16;
	if (!ix->o.timeout_ms)
		ix->o.timeout_ms = 30000;
	if (!ix->o.retries)
		ix->o.retries = 3;
	if (!ix->o.retry_base_ms)
		ix->o.retry_base_ms = 250;
	if (!ix->o.retry_max_ms)
		ix->o.retry_max_ms = 10000;
	if (!ix->o.max_page_bytes || ix->o.max_page_bytes > IX_PAGE_MAX)
		ix->o.max_page_bytes = DEFAULT_PAGE_MAX;
	if (!ix->o.max_metadata_bytes)
		ix->o.max_metadata_bytes = DEFAULT_META_MAX;
	if (!ix->o.max_wheel_bytes)
		ix->o.max_wheel_bytes = DEFAULT_WHEEL_MAX;
	if ((r = cache_root(ctx, opts->cache_dir, ix->cache, sizeof(ix->cache))))
		goto fail;
	ix->nsrc = opts->nsources;
	ix->src = gpuenv_arena_calloc(&ix->arena, opts->nsources ? opts->nsources : 1, sizeof(src_t));
	ix->creds = gpuenv_arena_calloc(&ix->arena, opts->nsources ? opts->nsources : 1,
		sizeof(ix_cred_t));
	if (!ix->src || !ix->creds) {
		r = gpuenv_oom(ctx, "for the index client");
		goto fail;
	}
	for (size_t i = 0; i < opts->nsources; i++) {
		for (size_t k = 0; k < i; k++)
			if (opts->sources[i].name && opts->sources[k].name &&
				!strcmp(opts->sources[i].name, opts->sources[k].name)) {
				r = gpuenv_fail(ctx, GPUENV_EDUPLICATE, NULL, 0, 0,
					"two sources are named %s", opts->sources[i].name);
				goto fail;
			}
		if ((r = add_source(ix, ctx, &opts->sources[i], &ix->src[i])))
			goto fail;
	}
	ix->o.sources = NULL;
	ix->http.max_parallel = ix->o.max_parallel;
	ix->http.timeout_ms = ix->o.timeout_ms;
	ix->http.retries = ix->o.retries;
	ix->http.retry_base_ms = ix->o.retry_base_ms;
	ix->http.retry_max_ms = ix->o.retry_max_ms;
	ix->http.creds = ix->creds;
	ix->http.ncreds = ix->ncreds;
	ix->http.stats = &ix->stats;
	ix->http.progress = opts->progress;
	ix->http.progress_arg = opts->progress_arg;
	const char *netrc = gpuenv_ctx_getenv(ctx, "NETRC");
	ix->http.netrc = netrc && netrc[0] ? adup(ix, netrc) : NULL;
	if (!ix->o.offline && (r = ix_http_init(&ix->http, ctx)))
		goto fail;
	*out = ix;
	return 0;
fail:
	gpuenv_index_close(ix);
	return r;
}

ix_http_t *ix_client_http(gpuenv_index_t *ix)
{
	return &ix->http;
}

const gpuenv_index_opts_t *ix_client_opts(const gpuenv_index_t *ix)
{
	return &ix->o;
}

void gpuenv_index_close(gpuenv_index_t *ix)
{
	if (!ix)
		return;
	ix_http_free(&ix->http);
	gpuenv_strmap_free(&ix->pages);
	gpuenv_strmap_free(&ix->answers);
	gpuenv_strmap_free(&ix->meta);
	gpuenv_ctx_t *ctx = ix->arena.ctx;
	gpuenv_arena_free(&ix->arena);
	gpuenv_free(ctx, ix);
}

void gpuenv_index_get_stats(const gpuenv_index_t *ix, gpuenv_index_stats_t *out)
{
	*out = ix->stats;
}

/* ---- pages --------------------------------------------------------------- */

static bool is_json_type(const char *ct, gpuenv_str_t body)
{
	if (ct && ct[0])
		return !strncasecmp(ct, "application/vnd.pypi.simple.v1+json", 35) ||
		       !strncasecmp(ct, "application/json", 16);
	for (size_t i = 0; i < body.len; i++)
		if (body.ptr[i] != ' ' && body.ptr[i] != '\n' && body.ptr[i] != '\r' && body.ptr[i] != '\t')
			return body.ptr[i] == '{';
	return false;
}

/* Parse a page body into a project of the client's arena.  The body (its
 * data and len; data may be NULL when len is 0) is the caller's, who frees
 * it right after: its memory is given back as the parse passes it, so a
 * big page is in memory once, not beside all its parse makes. */
static int parse_page(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, src_t *s, const char *name,
	const char *url, const char *ct, gpuenv_buf_t *body, gpuenv_index_project_t **out)
{
	gpuenv_index_project_t *p = gpuenv_arena_calloc(&ix->arena, 1, sizeof(*p));
	int r;

	if (!p)
		return gpuenv_oom(ctx, "for an index page");
	r = is_json_type(ct, gpuenv_str_n(body->data ? body->data : "", body->len))
		    ? ix_simple_json_parse_owned(ctx, &ix->arena, url, body->data, body->len, p)
		    : ix_simple_html_parse_owned(ctx, &ix->arena, url, body->data, body->len, p);
	if (r)
		return r;
	p->source = &s->pub;
	if (name)
		p->name = name;
	*out = p;
	return 0;
}

typedef struct pjob {
	ix_job_t job;
	gpuenv_index_t *ix;
	src_t *src;
	const char *name; /* NULL: a find-links page (the whole listing) */
	const char *url;
	char path[PATH_MAX]; /* the cache entry */
	ix_cache_entry_t ce;
	gpuenv_buf_t cached;
	bool have;
	void *result; /* a project or NOT_THERE */
} pjob_t;

/* The page's answer: a project, or NOT_THERE.  body as parse_page's. */
static int page_conclude(pjob_t *pj, gpuenv_ctx_t *ctx, int status, const char *ct,
	const char *base, gpuenv_buf_t *body)
{
	gpuenv_index_project_t *p;
	int r;

	if (status == 404 || status == 410) {
		pj->result = NOT_THERE;
	} else {
		if ((r = parse_page(pj->ix, ctx, pj->src, pj->name, base && base[0] ? base : pj->url,
			     ct, body, &p)))
			return r;
		pj->result = p;
	}
	pj->job.done = true;
	return 0;
}

static void page_store(pjob_t *pj, gpuenv_ctx_t *ctx, const void *data, size_t len)
{
	gpuenv_error_t saved = ctx->err;

	if (ix_cache_store(ctx, pj->path, &pj->ce, data, len))
		warn_only(ctx, &saved);
}

/* The entry's freshness from the answer r (RFC 9111 4.2): its own
 * lifetime when it gives one; else a 304 keeps the stored one (4.3.4: a
 * 304 updates only the headers it carries), a 404 / 410 gets
 * IX_CACHE_NOT_FOUND_MAX_AGE, a page none (revalidated every time). */
static void page_fresh(pjob_t *pj, const ix_req_t *r, bool revalidated)
{
	int64_t now = (int64_t)time(NULL), life, age;

	ix_req_freshness(r, now, &life, &age);
	pj->ce.stored = now;
	pj->ce.age = age;
	if (life >= 0)
		pj->ce.max_age = life;
	else if (!revalidated)
		pj->ce.max_age = pj->ce.status == 404 ? IX_CACHE_NOT_FOUND_MAX_AGE : -1;
}

/* The entry's body read (digest checked) and the page concluded from it,
 * then dropped: the project keeps what it needs.  store: the entry written
 * again with pj->ce (a 304 renewed its freshness).  *damaged: the entry is
 * gone, damaged, or another than the header read before (nothing done). */
static int page_from_cache(pjob_t *pj, gpuenv_ctx_t *ctx, const ix_cache_entry_t *head, bool store,
	bool *damaged)
{
	gpuenv_index_t *ix = pj->ix;
	ix_cache_entry_t e;
	int r;

	*damaged = false;
	gpuenv_buf_init(&pj->cached, ctx, ix->o.max_page_bytes);
	r = ix_cache_load(ctx, pj->path, ix->o.max_page_bytes, &e, &pj->cached);
	if (r == -ENOMEM)
		return r;
	if (r || e.status != head->status || e.stored != head->stored || strcmp(e.etag, head->etag) ||
		strcmp(e.last_modified, head->last_modified)) {
		gpuenv_buf_free(&pj->cached);
		*damaged = true;
		return 0;
	}
	if (store)
		page_store(pj, ctx, pj->cached.data, pj->cached.len);
	r = page_conclude(pj, ctx, pj->ce.status, pj->ce.content_type, pj->ce.base_url, &pj->cached);
	gpuenv_buf_free(&pj->cached);
	return r;
}

/* Ask the server: again with If-None-Match / If-Modified-Since when an
 * entry (its header) is there. */
static void page_request(pjob_t *pj, gpuenv_ctx_t *ctx)
{
	ix_req_reset(&pj->job.req, ctx);
	pj->job.req.url = pj->url;
	pj->job.req.page = true;
	pj->job.req.max = pj->ix->o.max_page_bytes;
	if (pj->have && pj->ce.status == 200) {
		pj->job.req.if_none_match = pj->ce.etag;
		pj->job.req.if_modified_since = pj->ce.last_modified;
	}
	pj->job.want = true;
}

static int page_answer(ix_job_t *job, gpuenv_ctx_t *ctx)
{
	pjob_t *pj = (pjob_t *)job;
	ix_req_t *r = &job->req;
	int rc;

	if (r->err) {
		ctx->err = r->error;
		return r->err;
	}
	if (r->status == 304 && pj->have) {
		ix_cache_entry_t head = pj->ce;
		bool damaged;
		pj->ix->stats.not_modified++;
		page_fresh(pj, r, true);
		/* the body is read now, not held while the request ran */
		if ((rc = page_from_cache(pj, ctx, &head, !r->no_store, &damaged)) || !damaged)
			return rc;
		/* gone or damaged since its header was read: ask for the page */
		pj->have = false;
		page_request(pj, ctx);
		return 0;
	}
	if (r->status == 200 || r->status == 404 || r->status == 410) {
		int st = r->status == 200 ? 200 : 404;
		memset(&pj->ce, 0, sizeof(pj->ce));
		pj->ce.status = st;
		page_fresh(pj, r, false);
		snprintf(pj->ce.etag, sizeof(pj->ce.etag), "%s", r->etag);
		snprintf(pj->ce.last_modified, sizeof(pj->ce.last_modified), "%s", r->last_modified);
		snprintf(pj->ce.content_type, sizeof(pj->ce.content_type), "%s", r->content_type);
		if (r->final_url && strlen(r->final_url) < sizeof(pj->ce.base_url))
			snprintf(pj->ce.base_url, sizeof(pj->ce.base_url), "%s", r->final_url);
		if (!r->no_store)
			page_store(pj, ctx, st == 200 ? r->body.data : "", st == 200 ? r->body.len : 0);
		rc = page_conclude(pj, ctx, st, r->content_type, pj->ce.base_url, &r->body);
		gpuenv_buf_free(&r->body); /* parsed: not held until the batch ends */
		return rc;
	}
	return gpuenv_fail(ctx, -EIO, r->url, 0, 0, "unexpected HTTP %ld for an index page", r->status);
}

static int offline_miss(gpuenv_ctx_t *ctx, const char *url, const char *what)
{
	gpuenv_fail(ctx, GPUENV_ENOTFOUND, url, 0, 0, "%s is not in the cache (--offline)", what);
	return gpuenv_hint(ctx, "run once without --offline to fetch it");
}

/* Decide from the cache entry's header; the body is read only when it is
 * used (a fresh entry, or a 304), so a stale big page is not held in
 * memory while the server is asked and answers with a new one. */
static int page_prepare(pjob_t *pj, gpuenv_ctx_t *ctx)
{
	gpuenv_index_t *ix = pj->ix;
	bool damaged;
	int r;

	pj->job.answer = page_answer;
	gpuenv_buf_init(&pj->cached, ctx, ix->o.max_page_bytes);
	if ((r = ix_cache_key(ix->cache, pj->url, NULL, pj->path, sizeof(pj->path))))
		return gpuenv_sha256_fail(ctx, r, "the HTTP cache's key of a page");
	pj->have = ix_cache_load_head(ctx, pj->path, &pj->ce, false) == 0;
	/* --offline: any entry, fresh or not; --refresh: none without asking */
	bool use = pj->have && (ix->o.offline || (!ix->o.refresh && ix_cache_fresh(&pj->ce, (int64_t)time(NULL))));
	/* one to revalidate: its body checked now (a damaged one is fetched
	 * whole), read again only when the server says 304 */
	if (pj->have && !use && (r = ix_cache_load_head(ctx, pj->path, &pj->ce, true)) != 0) {
		if (r == -ENOMEM)
			return r;
		pj->have = false;
	}
	if (use) {
		if ((r = page_from_cache(pj, ctx, &pj->ce, false, &damaged)))
			return r;
		if (!damaged) {
			ix->stats.cache_hits++;
			return 0;
		}
		pj->have = false;
	}
	if (ix->o.offline)
		return offline_miss(ctx, pj->url, "the index page");
	page_request(pj, ctx);
	return 0;
}

static void pjob_free(pjob_t *pj)
{
	ix_req_free(&pj->job.req);
	gpuenv_buf_free(&pj->cached);
}

/* ---- file:// indexes and find-links ------------------------------------ */

/* The project name a distribution file name starts with, normalised into
 * out; false for other files. */
bool ix_dist_name(const char *fn, char *out, size_t outsz)
{
	size_t n = strlen(fn), stem;
	const char *dash;

	if (n > 4 && !strcmp(fn + n - 4, ".whl")) {
		dash = strchr(fn, '-');
		if (!dash)
			return false;
		stem = (size_t)(dash - fn);
	} else {
		if (n > 7 && !strcmp(fn + n - 7, ".tar.gz"))
			n -= 7;
		else if (n > 4 && !strcmp(fn + n - 4, ".zip"))
			n -= 4;
		else
			return false;
		for (stem = n; stem > 0 && fn[stem - 1] != '-'; stem--)
			;
		if (!stem)
			return false;
		stem--;
	}
	return stem && gpuenv_name_normalize_to(gpuenv_str_n(fn, stem), out, outsz) != SIZE_MAX;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A find-links folder: every *.whl / *.tar.gz / *.zip, sorted. */
static int list_folder(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, src_t *s)
{
	DIR *d = opendir(s->path);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	ix_files_t files = { .ctx = ctx };
	int r = 0;

	if (!d)
		return gpuenv_fail(ctx, -errno, s->path, 0, 0, "cannot list the find-links folder: %s",
			strerror(errno));
	while ((de = readdir(d))) {
		char norm[256];
		if (!ix_dist_name(de->d_name, norm, sizeof(norm)))
			continue;
		if ((r = gpuenv_array_grow(ctx, NULL, &names, &cap, n + 1, sizeof(*names), SIZE_MAX,
			     "for a folder listing")))
			goto out;
		if (!(names[n] = adup(ix, de->d_name))) {
			r = gpuenv_oom(ctx, "for a folder listing");
			goto out;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		gpuenv_index_file_t *f = ix_files_push(&files, s->pub.url, &r);
		char path[PATH_MAX];
		struct stat st;
		if (!f)
			goto out;
		f->filename = names[i];
		gpuenv_str_t u = gpuenv_arena_printf(&ix->arena, "%s/%s", s->path, names[i]);
		if (!u.ptr || !(f->url = ix_path_to_file_url(&ix->arena, u.ptr).ptr)) {
			r = gpuenv_oom(ctx, "for a folder listing");
			goto out;
		}
		if (stat(u.ptr, &st) == 0)
			f->size = (int64_t)st.st_size;
		snprintf(path, sizeof(path), "%s.metadata", u.ptr);
		f->has_metadata = access(path, R_OK) == 0;
	}
	r = ix_files_finish(&files, &ix->arena, &s->fl, s->pub.url);
	s->fl.source = &s->pub;
	s->fl.page_url = s->pub.url;
	s->fl.name = "";
	s->fl_loaded = true;
out:
	ix_files_free(&files);
	gpuenv_free(ctx, names);
	closedir(d);
	return r;
}

/* Read a local page (file:// index or find-links page); NOT_THERE when the
 * file is missing. */
static int read_local_page(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, src_t *s, const char *name,
	const char *url, const char *path, void **out)
{
	gpuenv_buf_t b;
	gpuenv_index_project_t *p;
	gpuenv_error_t saved = ctx->err;
	int r;

	gpuenv_buf_init(&b, ctx, ix->o.max_page_bytes);
	r = gpuenv_fs_read(ctx, path, ix->o.max_page_bytes, &b);
	if (r == -ENOENT || r == -ENOTDIR) {
		ctx->err = saved;
		gpuenv_buf_free(&b);
		*out = NOT_THERE;
		return 0;
	}
	if (!r) {
		r = parse_page(ix, ctx, s, name, url, NULL, &b, &p);
		*out = p;
	}
	gpuenv_buf_free(&b);
	return r;
}

/* Hash local files of a find-links project (a lock records hashes). */
static int hash_local(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, gpuenv_index_file_t *f)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char *hex;
	gpuenv_str_t path = ix_file_url_path(&ix->arena, f->url);
	int r;

	if (!path.ptr || f->sha256)
		return 0;
	if ((r = gpuenv_sha256_file(ctx, path.ptr, d)))
		return r;
	if (!(hex = gpuenv_arena_alloc(&ix->arena, 2 * GPUENV_SHA256_LEN + 1)))
		return gpuenv_oom(ctx, "for a hash");
	gpuenv_hex(d, sizeof(d), hex);
	f->sha256 = hex;
	return 0;
}

/* The files of a find-links listing that belong to name. */
static int fl_filter(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, src_t *s, const char *name, void **out)
{
	ix_files_t files = { .ctx = ctx };
	gpuenv_index_project_t *p;
	int r = 0;

	for (size_t i = 0; i < s->fl.nfiles; i++) {
		char norm[256];
		gpuenv_index_file_t *f;
		if (!ix_dist_name(s->fl.files[i].filename, norm, sizeof(norm)) || strcmp(norm, name))
			continue;
		if (!(f = ix_files_push(&files, s->pub.url, &r)))
			return r;
		*f = s->fl.files[i];
		if (s->is_file && (r = hash_local(ix, ctx, f))) {
			ix_files_free(&files);
			return r;
		}
	}
	if (!files.n) {
		*out = NOT_THERE;
		return 0;
	}
	if (!(p = gpuenv_arena_calloc(&ix->arena, 1, sizeof(*p)))) {
		ix_files_free(&files);
		return gpuenv_oom(ctx, "for a project");
	}
	if ((r = ix_files_finish(&files, &ix->arena, p, NULL)))
		return r;
	p->name = name;
	p->source = &s->pub;
	p->page_url = s->pub.url;
	*out = p;
	return 0;
}

/* ---- projects -------------------------------------------------------------- */

typedef struct want {
	const char *name;    /* normalised, in the arena */
	size_t cand[64];     /* source indexes, in the order they are asked */
	size_t ncand, pos;
	bool finished;
	const char *akey;
	size_t aklen;
} want_t;

/* What (source s, name) is known to give; NULL with *job set when a page
 * must be fetched (a new job, or one of this round's). */
static int lookup(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, size_t si, const char *name,
	void **res, pjob_t ***jobs, size_t *njobs, size_t *capjobs, gpuenv_strmap_t *round)
{
	src_t *s = &ix->src[si];
	gpuenv_str_t key;
	bool found;
	void *v;
	int r;

	*res = NULL;
	if (s->pub.find_links && s->fl_loaded) {
		key = gpuenv_arena_printf(&ix->arena, "%zu\n%s", si, name);
		if (!key.ptr)
			return gpuenv_oom(ctx, "for the index client");
		v = gpuenv_strmap_get(&ix->pages, key.ptr, key.len, &found);
		if (!found) {
			if ((r = fl_filter(ix, ctx, s, name, &v)) || (r = gpuenv_strmap_put(&ix->pages, key.ptr, key.len, v)))
				return r;
		}
		*res = v;
		return 0;
	}
	/* a find-links source is fetched once, as a whole: key it without the name */
	const char *kname = s->pub.find_links ? "" : name;
	key = gpuenv_arena_printf(&ix->arena, "%zu\n%s", si, kname);
	if (!key.ptr)
		return gpuenv_oom(ctx, "for the index client");
	v = gpuenv_strmap_get(&ix->pages, key.ptr, key.len, &found);
	if (found) {
		*res = v;
		return 0;
	}
	if (s->is_file) {
		struct stat st;
		if (s->pub.find_links && stat(s->path, &st) == 0 && S_ISDIR(st.st_mode)) {
			if ((r = list_folder(ix, ctx, s)))
				return r;
			return lookup(ix, ctx, si, name, res, jobs, njobs, capjobs, round);
		}
		gpuenv_str_t url = s->pub.find_links ? gpuenv_str(s->pub.url)
						     : gpuenv_arena_printf(&ix->arena, "%s%s/", s->pub.url, name);
		gpuenv_str_t path = s->pub.find_links ? gpuenv_str(s->path)
						      : gpuenv_arena_printf(&ix->arena, "%s%s/index.html", s->path, name);
		if (!url.ptr || !path.ptr)
			return gpuenv_oom(ctx, "for the index client");
		if ((r = read_local_page(ix, ctx, s, s->pub.find_links ? NULL : name, url.ptr, path.ptr, &v)))
			return r;
		if (s->pub.find_links) {
			if (v == NOT_THERE)
				return gpuenv_fail(ctx, -ENOENT, s->path, 0, 0, "find-links location does not exist");
			s->fl = *(gpuenv_index_project_t *)v;
			s->fl_loaded = true;
			return lookup(ix, ctx, si, name, res, jobs, njobs, capjobs, round);
		}
		if ((r = gpuenv_strmap_put(&ix->pages, key.ptr, key.len, v)))
			return r;
		*res = v;
		return 0;
	}
	/* a page to fetch: one job per (source, name) in a round */
	v = gpuenv_strmap_get(round, key.ptr, key.len, &found);
	if (found)
		return 0;
	pjob_t *pj = gpuenv_calloc(ctx, 1, sizeof(*pj));
	if (!pj)
		return gpuenv_oom(ctx, "for the index client");
	pj->ix = ix;
	pj->src = s;
	pj->name = s->pub.find_links ? NULL : name;
	pj->url = s->pub.find_links ? s->pub.url : gpuenv_arena_printf(&ix->arena, "%s%s/", s->pub.url, name).ptr;
	if (gpuenv_array_grow(ctx, NULL, jobs, capjobs, *njobs + 1, sizeof(**jobs), SIZE_MAX,
		    "for the index client")) {
		gpuenv_free(ctx, pj);
		return ctx->err.code;
	}
	(*jobs)[(*njobs)++] = pj;
	if (!pj->url)
		return gpuenv_oom(ctx, "for the index client");
	if ((r = gpuenv_strmap_put(round, key.ptr, key.len, pj)))
		return r;
	uint64_t t0 = gpuenv_trace_begin(ctx);
	if ((r = page_prepare(pj, ctx)))
		return r;
	if (ctx->trace)
		ix_trace_job(ctx, &pj->job, "page", pj->name,
			gpuenv_arena_printf(&ix->arena, "cache: %s", pj->url).ptr, t0);
	return 0;
}

/* Every file of the projects in order, a file name seen before dropped. */
static int merge(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, const char *name, void **got, size_t n,
	const gpuenv_index_project_t **out)
{
	ix_files_t files = { .ctx = ctx };
	gpuenv_strmap_t seen = { .ctx = ctx };
	const gpuenv_index_project_t *first = NULL;
	gpuenv_index_project_t *p;
	int r = 0;

	for (size_t k = 0; k < n; k++) {
		const gpuenv_index_project_t *q = got[k];
		if (q == NOT_THERE || !q)
			continue;
		if (!first)
			first = q;
		for (size_t i = 0; i < q->nfiles; i++) {
			bool found;
			gpuenv_index_file_t *f;
			gpuenv_strmap_get(&seen, q->files[i].filename, strlen(q->files[i].filename), &found);
			if (found)
				continue;
			if ((r = gpuenv_strmap_put(&seen, q->files[i].filename, strlen(q->files[i].filename), NULL)) ||
				!(f = ix_files_push(&files, q->page_url, &r)))
				goto out;
			*f = q->files[i];
		}
	}
	*out = NULL;
	if (!first)
		goto out;
	if (!(p = gpuenv_arena_calloc(&ix->arena, 1, sizeof(*p)))) {
		r = gpuenv_oom(ctx, "for a project");
		goto out;
	}
	*p = *first;
	p->name = name;
	if ((r = ix_files_finish(&files, &ix->arena, p, NULL)))
		goto out;
	*out = p;
out:
	ix_files_free(&files);
	gpuenv_strmap_free(&seen);
	return r;
}

static int find_source(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, const char *name, size_t *out)
{
	const char *names[64];
	size_t n = 0;

	for (size_t i = 0; i < ix->nsrc; i++) {
		if (!strcmp(ix->src[i].pub.name, name)) {
			*out = i;
			return 0;
		}
		if (n < 64)
			names[n++] = ix->src[i].pub.name;
	}
	gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "no source is named %s", name);
	size_t best = SIZE_MAX;
	const char *sug = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = gpuenv_edit_distance(name, names[i]);
		if (d < best && d <= 3) {
			best = d;
			sug = names[i];
		}
	}
	if (sug)
		return gpuenv_hint(ctx, "did you mean %s?", sug);
	return ctx->err.code;
}

static int plan(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, const char *only, want_t *w)
{
	int r;

	w->ncand = w->pos = 0;
	if (only) {
		size_t si = 0;
		if ((r = find_source(ix, ctx, only, &si)))
			return r;
		w->cand[w->ncand++] = si;
		return 0;
	}
	for (int pri = GPUENV_SOURCE_PRIMARY; pri <= GPUENV_SOURCE_SUPPLEMENTAL; pri++)
		for (size_t i = 0; i < ix->nsrc && w->ncand < 64; i++)
			if (ix->src[i].pub.priority == pri)
				w->cand[w->ncand++] = i;
	return 0;
}

int gpuenv_index_projects(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, const char *const *names,
	const char *const *only_source, size_t n, const gpuenv_index_project_t **out)
{
	want_t *w = gpuenv_calloc(ctx, n ? n : 1, sizeof(*w));
	pjob_t **jobs = NULL;
	size_t njobs = 0, capjobs = 0, pending = 0;
	gpuenv_strmap_t round = { .ctx = ctx };
	int r = 0;

	if (!w)
		return gpuenv_oom(ctx, "for the index client");
	for (size_t i = 0; i < n; i++) {
		const char *only = only_source ? only_source[i] : NULL;
		char norm[256];
		bool found;
		out[i] = NULL;
		if (!names[i] || gpuenv_name_normalize_to(gpuenv_str(names[i]), norm, sizeof(norm)) == SIZE_MAX ||
			!norm[0]) {
			r = gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "not a project name: %s",
				names[i] ? names[i] : "(null)");
			goto out;
		}
		gpuenv_str_t ak = gpuenv_arena_printf(&ix->arena, "%s\n%s", only ? only : "", norm);
		if (!ak.ptr || !(w[i].name = adup(ix, norm))) {
			r = gpuenv_oom(ctx, "for the index client");
			goto out;
		}
		w[i].akey = ak.ptr;
		w[i].aklen = ak.len;
		void *v = gpuenv_strmap_get(&ix->answers, ak.ptr, ak.len, &found);
		if (found) {
			out[i] = v;
			w[i].finished = true;
			continue;
		}
		if ((r = plan(ix, ctx, only, &w[i])))
			goto out;
		pending++;
	}
	while (pending) {
		njobs = 0;
		for (size_t i = 0; i < n; i++) {
			want_t *x = &w[i];
			void *got[64];
			bool all = true;
			if (x->finished)
				continue;
			if (ix->o.merge_sources) {
				for (size_t k = 0; k < x->ncand; k++) {
					if ((r = lookup(ix, ctx, x->cand[k], x->name, &got[k], &jobs, &njobs, &capjobs, &round)))
						goto out;
					all = all && got[k];
				}
				if (!all)
					continue;
				if ((r = merge(ix, ctx, x->name, got, x->ncand, &out[i])))
					goto out;
			} else {
				void *v = NULL;
				while (x->pos < x->ncand) {
					if ((r = lookup(ix, ctx, x->cand[x->pos], x->name, &v, &jobs, &njobs, &capjobs, &round)))
						goto out;
					if (!v || v != NOT_THERE)
						break;
					x->pos++;
				}
				if (x->pos < x->ncand && !v)
					continue; /* a page is being fetched */
				out[i] = x->pos < x->ncand ? v : NULL;
			}
			x->finished = true;
			pending--;
			if ((r = gpuenv_strmap_put(&ix->answers, x->akey, x->aklen, (void *)out[i])))
				goto out;
		}
		if (!pending)
			break;
		ix_job_t **jv = gpuenv_calloc(ctx, njobs ? njobs : 1, sizeof(*jv));
		if (!jv) {
			r = gpuenv_oom(ctx, "for the index client");
			goto out;
		}
		for (size_t k = 0; k < njobs; k++)
			jv[k] = &jobs[k]->job;
		r = njobs ? ix_http_run(&ix->http, ctx, jv, njobs) : 0;
		gpuenv_free(ctx, jv);
		/* the round's answers into the client's map */
		for (size_t k = 0; k < njobs; k++) {
			pjob_t *pj = jobs[k];
			size_t si = (size_t)(pj->src - ix->src);
			if (!r && pj->result) {
				gpuenv_str_t key = gpuenv_arena_printf(&ix->arena, "%zu\n%s", si,
					pj->name ? pj->name : "");
				int pr = key.ptr ? gpuenv_strmap_put(&ix->pages, key.ptr, key.len, pj->result)
						 : gpuenv_oom(ctx, "for the index client");
				if (pr && !r)
					r = pr;
				if (!pj->name && pj->result != NOT_THERE) {
					pj->src->fl = *(gpuenv_index_project_t *)pj->result;
					pj->src->fl_loaded = true;
				} else if (!pj->name && !r) {
					r = gpuenv_fail(ctx, GPUENV_ENOTFOUND, pj->url, 0, 0,
						"the find-links page does not exist (HTTP 404)");
				}
			}
			pjob_free(pj);
			gpuenv_free(ctx, pj);
		}
		njobs = 0;
		gpuenv_strmap_free(&round);
		round.ctx = ctx;
		if (r)
			goto out;
	}
out:
	for (size_t k = 0; k < njobs; k++) {
		pjob_free(jobs[k]);
		gpuenv_free(ctx, jobs[k]);
	}
	gpuenv_free(ctx, jobs);
	gpuenv_strmap_free(&round);
	gpuenv_free(ctx, w);
	return r;
}

/* ---- metadata ---------------------------------------------------------------- */

enum { M_PEP658, M_RANGE, M_WHOLE };


typedef struct mjob {
	ix_job_t job;
	gpuenv_index_t *ix;
	const gpuenv_index_file_t *f;
	char name[256];	 /* the project, normalised */
	int phase;
	char *meta_url;	 /* url + ".metadata" */
	char path658[PATH_MAX], pathwhl[PATH_MAX]; /* cache entries ("" none) */
	ix_zip_t zip;
	bool zip_on;
	gpuenv_str_t result;
} mjob_t;

static bool is_tar_sdist(const char *fn);
static int meta_sdist(mjob_t *mj, gpuenv_ctx_t *ctx, gpuenv_str_t body, const char *store);

static int hash_mismatch(gpuenv_ctx_t *ctx, const char *url, const char *file, const char *want,
	const char *got)
{
	gpuenv_fail(ctx, GPUENV_EFORMAT, url, 0, 0, "hash mismatch for %s: expected sha256 %s, got %s",
		file, want, got);
	return gpuenv_hint(ctx, "the index or a proxy serves other bytes than the page promises; "
				"retry, or report it to the index");
}

/* The hex SHA-256 of p[0..n); 0, or the failure recorded in ctx. */
static int sha_hex(gpuenv_ctx_t *ctx, const void *p, size_t n, char out[65])
{
	unsigned char d[GPUENV_SHA256_LEN];
	int r = gpuenv_sha256(p, n, d);

	if (r)
		return gpuenv_sha256_fail(ctx, r, "checking a download's hash");
	gpuenv_hex(d, sizeof(d), out);
	return 0;
}

static int meta_done(mjob_t *mj, gpuenv_ctx_t *ctx, const char *data, size_t len, const char *store)
{
	char *copy = gpuenv_arena_alloc(&mj->ix->arena, len + 1);

	if (!copy)
		return gpuenv_oom(ctx, "for METADATA");
	memcpy(copy, data, len);
	copy[len] = '\0';
	mj->result = gpuenv_str_n(copy, len);
	if (store && store[0]) {
		ix_cache_entry_t ce = { .status = 200, .stored = (int64_t)time(NULL), .max_age = -1 };
		gpuenv_error_t saved = ctx->err;
		if (ix_cache_store(ctx, store, &ce, data, len))
			warn_only(ctx, &saved);
	}
	mj->job.done = true;
	return 0;
}

static void want_range(mjob_t *mj, gpuenv_ctx_t *ctx, uint64_t off, uint64_t len)
{
	ix_req_t *r = &mj->job.req;

	ix_req_reset(r, ctx);
	r->url = mj->f->url;
	r->max = mj->ix->o.max_metadata_bytes + IX_ZIP_TAIL + 4096;
	r->max_full = (size_t)mj->ix->o.max_wheel_bytes;
	if (!len)
		snprintf(r->range, sizeof(r->range), "bytes=-%llu", (unsigned long long)IX_ZIP_TAIL);
	else
		snprintf(r->range, sizeof(r->range), "bytes=%llu-%llu", (unsigned long long)off,
			(unsigned long long)(off + len - 1));
	mj->phase = M_RANGE;
	mj->job.want = true;
}

static void want_whole(mjob_t *mj, gpuenv_ctx_t *ctx)
{
	ix_req_t *r = &mj->job.req;

	ix_req_reset(r, ctx);
	r->url = mj->f->url;
	r->max = (size_t)mj->ix->o.max_wheel_bytes;
	r->slow_ok = true;
	r->expect = mj->f->size;
	mj->phase = M_WHOLE;
	mj->job.want = true;
}

/* A whole wheel in memory: check its hash, keep it, read METADATA. */
static int meta_whole(mjob_t *mj, gpuenv_ctx_t *ctx, gpuenv_str_t body)
{
	gpuenv_str_t md;
	char got[65];
	int r;

	if (mj->f->sha256) {
		if ((r = sha_hex(ctx, body.ptr, body.len, got)))
			return r;
		if (strcmp(got, mj->f->sha256))
			return hash_mismatch(ctx, mj->f->url, mj->f->filename, mj->f->sha256, got);
		char path[PATH_MAX];
		ix_cache_entry_t ce = { .status = 200, .stored = (int64_t)time(NULL), .max_age = -1 };
		gpuenv_error_t saved = ctx->err;
		if (ix_cache_key(mj->ix->cache, mj->f->url, mj->f->sha256, path, sizeof(path)) ||
			ix_cache_store(ctx, path, &ce, body.ptr, body.len))
			warn_only(ctx, &saved);
	}
	if (is_tar_sdist(mj->f->filename))
		return meta_sdist(mj, ctx, body, mj->pathwhl);
	if ((r = ix_zip_read_mem(ctx, &mj->ix->arena, body.ptr, body.len, mj->f->url, mj->name,
		     mj->ix->o.max_metadata_bytes, &md)))
		return r;
	return meta_done(mj, ctx, md.ptr, md.len, mj->pathwhl);
}

/* "bytes A-B/TOTAL" */
static bool content_range(const char *s, uint64_t *a, uint64_t *total)
{
	unsigned long long x, y, t;
	char star;

	if (sscanf(s, "bytes %llu-%llu/%llu", &x, &y, &t) == 3 && y >= x && t > y) {
		*a = x;
		*total = t;
		return true;
	}
	if (sscanf(s, "bytes %llu-%llu/%c", &x, &y, &star) == 3 && star == '*' && y >= x) {
		*a = x;
		*total = 0;
		return true;
	}
	return false;
}

static int meta_answer(ix_job_t *job, gpuenv_ctx_t *ctx)
{
	mjob_t *mj = (mjob_t *)job;
	ix_req_t *r = &job->req;
	gpuenv_str_t body = gpuenv_str_n(r->body.data ? r->body.data : "", r->body.len), md;
	char got[65];
	int rc;

	if (r->err) {
		ctx->err = r->error;
		return r->err;
	}
	switch (mj->phase) {
	case M_PEP658:
		if (r->status == 200) {
			if (mj->f->metadata_sha256) {
				int e = sha_hex(ctx, body.ptr, body.len, got);
				if (e)
					return e;
				if (strcmp(got, mj->f->metadata_sha256))
					return hash_mismatch(ctx, mj->meta_url,
						gpuenv_arena_printf(&mj->ix->arena, "%s.metadata", mj->f->filename).ptr,
						mj->f->metadata_sha256, got);
			}
			return meta_done(mj, ctx, body.ptr, body.len, mj->path658[0] ? mj->path658 : mj->pathwhl);
		}
		/* the page promised a metadata file the server lacks: the wheel */
		gpuenv_log(ctx, GPUENV_LOG_WARN, "%s: HTTP %ld; reading the %s instead", mj->meta_url,
			r->status, is_tar_sdist(mj->f->filename) ? "sdist" : "wheel");
		if (is_tar_sdist(mj->f->filename))
			want_whole(mj, ctx);
		else
			want_range(mj, ctx, 0, 0);
		return 0;
	case M_RANGE:
		if (r->status == 206) {
			uint64_t off, total;
			if (!content_range(r->content_range, &off, &total))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, r->url, 0, 0,
					"a 206 answer without a usable Content-Range (\"%s\")", r->content_range);
			if (!mj->zip_on) {
				ix_zip_init(&mj->zip, ctx, mj->f->url, mj->name, mj->ix->o.max_metadata_bytes, total);
				mj->zip_on = true;
			}
			rc = ix_zip_feed(&mj->zip, ctx, &mj->ix->arena, off, body.ptr, body.len, total, &md);
			if (rc < 0)
				return rc;
			if (rc == 0)
				return meta_done(mj, ctx, md.ptr, md.len, mj->pathwhl);
			uint64_t len = mj->zip.want_len;
			if (mj->zip.total && mj->zip.want_off + len > mj->zip.total)
				len = mj->zip.total - mj->zip.want_off;
			want_range(mj, ctx, mj->zip.want_off, len);
			return 0;
		}
		if (r->status == 200)
			return meta_whole(mj, ctx, body); /* the server ignored Range */
		if (r->status == 416) {
			want_whole(mj, ctx);
			return 0;
		}
		return gpuenv_fail(ctx, -EIO, r->url, 0, 0, "HTTP %ld for a file the page lists", r->status);
	default:
		if (r->status == 200)
			return meta_whole(mj, ctx, body);
		return gpuenv_fail(ctx, -EIO, r->url, 0, 0, "HTTP %ld for a file the page lists", r->status);
	}
}

static bool is_wheel(const char *fn)
{
	size_t n = strlen(fn);
	return n > 4 && !strcmp(fn + n - 4, ".whl");
}

static bool is_tar_sdist(const char *fn)
{
	size_t n = strlen(fn);
	return n > 7 && !strcmp(fn + n - 7, ".tar.gz");
}

/* PKG-INFO of a .tar.gz sdist in memory (its Metadata-Version and Dynamic
 * fields say whether it holds without a build: the caller's question). */
static int meta_sdist(mjob_t *mj, gpuenv_ctx_t *ctx, gpuenv_str_t body, const char *store)
{
	gpuenv_str_t md;
	int r = gpuenv_sdist_pkg_info(ctx, &mj->ix->arena, mj->f->filename, body.ptr, body.len,
		mj->ix->o.max_metadata_bytes, &md);
	if (r)
		return r;
	return meta_done(mj, ctx, md.ptr, md.len, store);
}

static int not_a_wheel(gpuenv_ctx_t *ctx, const gpuenv_index_file_t *f)
{
	gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, f->url, 0, 0,
		"%s is a source distribution without a metadata file: its metadata needs a build",
		f->filename);
	return gpuenv_hint(ctx, "gpuenv reads the metadata of wheels and of PEP 658 metadata files");
}

/* METADATA of a file on disk. */
static int meta_local(mjob_t *mj, gpuenv_ctx_t *ctx, const char *path)
{
	gpuenv_index_t *ix = mj->ix;
	gpuenv_str_t md;
	char mpath[PATH_MAX];
	int r, fd;

	if (mj->f->has_metadata) {
		gpuenv_buf_t b;
		gpuenv_error_t saved = ctx->err;
		snprintf(mpath, sizeof(mpath), "%s.metadata", path);
		gpuenv_buf_init(&b, ctx, ix->o.max_metadata_bytes);
		r = gpuenv_fs_read(ctx, mpath, ix->o.max_metadata_bytes, &b);
		if (!r) {
			char got[65];
			if (mj->f->metadata_sha256) {
				if ((r = sha_hex(ctx, b.data, b.len, got))) {
					gpuenv_buf_free(&b);
					return r;
				}
				if (strcmp(got, mj->f->metadata_sha256)) {
					gpuenv_buf_free(&b);
					return hash_mismatch(ctx, mpath, mj->f->filename, mj->f->metadata_sha256, got);
				}
			}
			r = meta_done(mj, ctx, b.data ? b.data : "", b.len, NULL);
			gpuenv_buf_free(&b);
			return r;
		}
		gpuenv_buf_free(&b);
		if (r != -ENOENT)
			return r;
		ctx->err = saved;
	}
	if (is_tar_sdist(mj->f->filename)) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, ctx, ix->o.max_wheel_bytes);
		r = gpuenv_fs_read(ctx, path, ix->o.max_wheel_bytes, &b);
		if (!r)
			r = meta_sdist(mj, ctx, (gpuenv_str_t){ b.data ? b.data : "", b.len }, NULL);
		gpuenv_buf_free(&b);
		return r;
	}
	if (!is_wheel(mj->f->filename))
		return not_a_wheel(ctx, mj->f);
	fd = gpuenv_fs_open_regular(ctx, AT_FDCWD, path, NULL);
	if (fd < 0)
		return fd;
	r = ix_zip_read_fd(ctx, &ix->arena, fd, path, mj->name, ix->o.max_metadata_bytes, &md);
	close(fd);
	if (r)
		return r;
	return meta_done(mj, ctx, md.ptr, md.len, NULL);
}

static int meta_prepare(mjob_t *mj, gpuenv_ctx_t *ctx)
{
	gpuenv_index_t *ix = mj->ix;
	const gpuenv_index_file_t *f = mj->f;
	ix_cache_entry_t ce;
	gpuenv_buf_t b;
	gpuenv_str_t path;
	int r;

	mj->job.answer = meta_answer;
	if (!f->url || !f->filename)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "a file without a URL or name");
	ix_dist_name(f->filename, mj->name, sizeof(mj->name));
	if ((path = ix_file_url_path(&ix->arena, f->url)).ptr)
		return meta_local(mj, ctx, path.ptr);
	gpuenv_str_t mu = gpuenv_arena_printf(&ix->arena, "%s.metadata", f->url);
	if (!mu.ptr)
		return gpuenv_oom(ctx, "for METADATA");
	mj->meta_url = (char *)mu.ptr;
	/* immutable entries: the metadata file by its hash, and METADATA read
	 * from the wheel by the wheel's hash */
	if (f->has_metadata && f->metadata_sha256 &&
		(r = ix_cache_key(ix->cache, mj->meta_url, f->metadata_sha256, mj->path658, sizeof(mj->path658))))
		return gpuenv_sha256_fail(ctx, r, "the HTTP cache's key of METADATA");
	if (f->sha256) {
		gpuenv_str_t k = gpuenv_arena_printf(&ix->arena, "%s#METADATA", f->url);
		if (!k.ptr)
			return gpuenv_oom(ctx, "for METADATA");
		if ((r = ix_cache_key(ix->cache, k.ptr, f->sha256, mj->pathwhl, sizeof(mj->pathwhl))))
			return gpuenv_sha256_fail(ctx, r, "the HTTP cache's key of METADATA");
	}
	gpuenv_buf_init(&b, ctx, ix->o.max_metadata_bytes);
	const char *paths[2] = { mj->path658, mj->pathwhl };
	for (int k = 0; k < 2; k++) {
		if (!paths[k][0])
			continue;
		r = ix_cache_load(ctx, paths[k], ix->o.max_metadata_bytes, &ce, &b);
		if (r == -ENOMEM) {
			gpuenv_buf_free(&b);
			return r;
		}
		if (!r && k == 0) {
			char got[65];
			if ((r = sha_hex(ctx, b.data, b.len, got))) {
				gpuenv_buf_free(&b);
				return r;
			}
			if (strcmp(got, f->metadata_sha256))
				r = -EINVAL; /* damaged: fetch again */
		}
		if (!r) {
			ix->stats.cache_hits++;
			r = meta_done(mj, ctx, b.data ? b.data : "", b.len, NULL);
			gpuenv_buf_free(&b);
			return r;
		}
	}
	gpuenv_buf_free(&b);
	if (ix->o.offline)
		return offline_miss(ctx, f->url, "the metadata of this file");
	if (f->has_metadata) {
		ix_req_reset(&mj->job.req, ctx);
		mj->job.req.url = mj->meta_url;
		mj->job.req.max = ix->o.max_metadata_bytes;
		mj->phase = M_PEP658;
		mj->job.want = true;
		return 0;
	}
	if (is_tar_sdist(f->filename)) {
		want_whole(mj, ctx); /* PKG-INFO is somewhere in the stream */
		return 0;
	}
	if (!is_wheel(f->filename))
		return not_a_wheel(ctx, f);
	want_range(mj, ctx, 0, 0);
	return 0;
}

int gpuenv_index_metadata(gpuenv_index_t *ix, gpuenv_ctx_t *ctx,
	const gpuenv_index_file_t *const *files, size_t n, gpuenv_str_t *out)
{
	mjob_t **jobs = gpuenv_calloc(ctx, n ? n : 1, sizeof(*jobs));
	ix_job_t **jv = gpuenv_calloc(ctx, n ? n : 1, sizeof(*jv));
	size_t nj = 0;
	gpuenv_strmap_t batch = { ctx, NULL, 0, 0 };
	int r = 0;

	if (!jobs || !jv) {
		r = gpuenv_oom(ctx, "for the index client");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const gpuenv_index_file_t *f = files[i];
		bool found;
		out[i] = GPUENV_STR_NULL;
		if (!f || !f->url) {
			r = gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "a file without a URL");
			goto out;
		}
		gpuenv_str_t *known = gpuenv_strmap_get(&ix->meta, f->url, strlen(f->url), &found);
		if (found) {
			out[i] = *known;
			continue;
		}
		gpuenv_strmap_get(&batch, f->url, strlen(f->url), &found);
		if (found)
			continue;
		mjob_t *mj = gpuenv_calloc(ctx, 1, sizeof(*mj));
		if (!mj) {
			r = gpuenv_oom(ctx, "for the index client");
			goto out;
		}
		jobs[nj] = mj;
		jv[nj++] = &mj->job;
		mj->ix = ix;
		mj->f = f;
		uint64_t t0 = gpuenv_trace_begin(ctx);
		if ((r = gpuenv_strmap_put(&batch, f->url, strlen(f->url), mj)) || (r = meta_prepare(mj, ctx)))
			goto out;
		if (ctx->trace)
			ix_trace_job(ctx, &mj->job, "metadata", mj->name,
				gpuenv_arena_printf(&ix->arena, "%s: %s", mj->meta_url ? "cache" : "file",
					f->filename).ptr, t0);
	}
	if ((r = ix_http_run(&ix->http, ctx, jv, nj)))
		goto out;
	for (size_t k = 0; k < nj; k++) {
		gpuenv_str_t *v = gpuenv_arena_alloc(&ix->arena, sizeof(*v));
		const char *key = adup(ix, jobs[k]->f->url);
		if (!v || !key) {
			r = gpuenv_oom(ctx, "for the index client");
			goto out;
		}
		*v = jobs[k]->result;
		if ((r = gpuenv_strmap_put(&ix->meta, key, strlen(key), v)))
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bool found;
		gpuenv_str_t *v = gpuenv_strmap_get(&ix->meta, files[i]->url, strlen(files[i]->url), &found);
		if (found)
			out[i] = *v;
	}
out:
	for (size_t k = 0; k < nj; k++) {
		if (jobs[k]->zip_on)
			ix_zip_free(&jobs[k]->zip);
		ix_req_free(&jobs[k]->job.req);
		gpuenv_free(ctx, jobs[k]);
	}
	gpuenv_free(ctx, jobs);
	gpuenv_free(ctx, jv);
	gpuenv_strmap_free(&batch);
	return r;
}
