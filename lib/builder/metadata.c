/* An sdist's metadata asked of its build backend, for the lock
 * (include/gpuenv/build.h; docs/build.md, "Metadata for the lock").
 *
 *   <cache>/sdist-meta/<sha[0:2]>/<sha>/METADATA   the answer, by the sdist's
 *                                                 sha256 (checked again when
 *                                                 read)
 *   <cache>/build-logs/<name>-<ver>-metadata-<sha[0:12]>.log   its log
 *
 * The steps are a build's (build.c: fetched, unpacked, the build venv made
 * and filled, get_requires_for_build_wheel), then the runner's
 * prepare_metadata_for_build_wheel, which builds the wheel and reads its
 * METADATA when the backend lacks the hook (PEP 517's fallback). */
#include "gpuenv/build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build_int.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/metadata.h"
#include "gpuenv/pep440.h"
#include "gpuenv/trace.h"
#include "gpuenv/wheel.h"

#define META_MAX ((size_t)16 << 20) /* bytes of one METADATA */
#define META_PYTHONS 8		    /* interpreters one lock asks for */

static double meta_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Does text name q's project and version?  GPUENV_EBUILD when not. */
static int meta_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_req_t *q, const char *file,
	gpuenv_str_t text, const char *log)
{
	gpuenv_metadata_t md;
	gpuenv_version_t want;
	char norm[256];
	if (gpuenv_metadata_parse(ctx, arena, file, text, GPUENV_METADATA_LENIENT_VERSION, &md) != 0) {
		if (ctx->err.code == -ENOMEM)
			return ctx->err.code;
		return log ? gpuenv_hint(ctx, "the build backend of %s %s wrote it; the build log: %s", q->name,
				     q->version, log)
			   : ctx->err.code;
	}
	gpuenv_name_normalize_to(md.name, norm, sizeof(norm));
	bool same_name = !strcmp(norm, q->name);
	bool same_ver = !q->version || (md.version_valid && gpuenv_version_parse(ctx, arena, gpuenv_str(q->version),
		&want) == 0 && gpuenv_version_cmp(&md.version, &want) == 0);
	gpuenv_error_clear(ctx);
	if (same_name && same_ver)
		return 0;
	if (q->directory) {
		gpuenv_fail(ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: the build backend of %s names the project %.*s",
			q->name, q->directory, (int)md.name.len, md.name.ptr);
		return gpuenv_hint(ctx, "name the dependency as the project names itself%s%s",
			log ? "; the build log: " : "", log ? log : "");
	}
	gpuenv_fail(ctx, GPUENV_EBUILD, NULL, 0, 0, "%s %s: the build backend's metadata names %.*s %.*s, another "
		"%s than the sdist's file name", q->name, q->version, (int)md.name.len, md.name.ptr,
		(int)md.version_text.len, md.version_text.ptr, same_name ? "version" : "project");
	return gpuenv_hint(ctx, "the sdist %s is not what its index says it is, and cannot be locked as %s %s%s%s",
		q->sdist_name ? q->sdist_name : q->name, q->name, q->version, log ? "; the build log: " : "",
		log ? log : "");
}

/* The cached answer's path for the sdist of sha256 hex. */
static const char *meta_path(gpuenv_arena_t *arena, gpuenv_cache_t *cache, const char *sha)
{
	return gpuenv_arena_printf(arena, "%s/sdist-meta/%.2s/%s/METADATA", gpuenv_cache_dir(cache), sha, sha).ptr;
}

/* Read at most META_MAX bytes of path into *out (arena).  0, or the error. */
static int meta_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path, gpuenv_str_t *out)
{
	gpuenv_buf_t t;
	int r;
	gpuenv_buf_init(&t, ctx, META_MAX);
	if ((r = gpuenv_fs_read(ctx, path, META_MAX, &t)) == 0) {
		char *s = gpuenv_arena_strndup(arena, t.data ? t.data : "", t.len);
		if (!s)
			r = gpuenv_oom(ctx, "an sdist's metadata");
		else
			*out = gpuenv_str_n(s, t.len);
	}
	gpuenv_buf_free(&t);
	return r;
}

static int do_meta(struct gpuenv_bctx *b, const char *key, void *arg)
{
	gpuenv_build_meta_t *res = arg;
	const gpuenv_build_req_t *q = b->req;
	const char *src, *py, *rq, *hook = "prepare_metadata_for_build_wheel";
	gpuenv_build_system_t bs;
	gpuenv_hook_result_t hr;
	gpuenv_str_t text;
	int r;

	if ((r = gpuenv_build_prepare(b, key, &src, &bs, &py)) != 0)
		return r;
	const char *md_dir = gpuenv_arena_printf(b->arena, "%s/meta", b->tmp).ptr;
	const char *outdir = gpuenv_arena_printf(b->arena, "%s/out", b->tmp).ptr;
	if (!md_dir || !outdir || !(rq = gpuenv_build_hook_request(b, hook, src, &bs, outdir, md_dir)))
		return gpuenv_oom(b->ctx, "the metadata build");
	if ((r = gpuenv_build_run_hook(b, py, hook, rq, &hr)) != 0)
		return r;
	if (!hr.ok)
		return gpuenv_build_hook_failed(b, hook, &hr);
	if (!hr.str) {
		gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: %s returned no METADATA", b->what, hook);
		return gpuenv_hint(b->ctx, "the build log: %s", b->log);
	}
	if ((r = meta_read(b->ctx, b->arena, hr.str, &text)) != 0 ||
		(r = meta_check(b->ctx, b->arena, q, hr.str, text, b->log)) != 0)
		return r;
	res->metadata = text;
	const char *mkey = q->directory ? q->meta_key : q->sdist_sha256;
	if (!mkey)
		return 0; /* a folder that may change: not cached */
	const char *path = meta_path(b->arena, b->cache, mkey);
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *dir = slash ? gpuenv_arena_strndup(b->arena, path, (size_t)(slash - path)) : NULL;
	if (!dir)
		return gpuenv_oom(b->ctx, "the metadata build");
	if ((r = gpuenv_fs_mkdirs(b->ctx, dir, 0755)) != 0 ||
		(r = gpuenv_fs_write_atomic_ex(b->ctx, path, text.ptr, text.len, 0644, GPUENV_FS_NOSYNC)) != 0)
		return r;
	gpuenv_build_logf(b, "== gpuenv: METADATA of %s cached as %s ==\n", b->what, path);
	res->metadata = text;
	res->path = path;
	return 0;
}

static bool sha_hex(const char *s)
{
	size_t n = 0;
	for (; s && gpuenv_is_xdigit((unsigned char)s[n]); n++)
		;
	return s && n == 2 * GPUENV_SHA256_LEN && !s[n];
}

int gpuenv_build_metadata(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_opts_t *o,
	gpuenv_cache_t *cache, gpuenv_index_t *ix, const gpuenv_build_req_t *req, gpuenv_build_meta_t *res)
{
	struct gpuenv_bctx b = { .ctx = ctx, .arena = arena, .o = o, .req = req, .cache = cache, .ix = ix,
		.logfd = -1, .doing = "asking the build backend for the metadata of", .log_kind = "metadata-" };
	double t0 = meta_now();
	const char *path;
	int r;

	memset(res, 0, sizeof(*res));
	if (!o->python || !o->python->version)
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "%s: a metadata build needs an interpreter",
			req->name ? req->name : "?");
	if (!req->name || (req->directory ? req->meta_key && !sha_hex(req->meta_key)
					  : !req->version || !sha_hex(req->sdist_sha256)))
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "a metadata build needs a name and a version with an sdist "
			"and its sha256, or a directory");
	const char *mkey = req->directory ? req->meta_key : req->sdist_sha256, *skey = mkey;
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	if (!skey) { /* the session's name for a folder: its path's digest */
		if ((r = gpuenv_sha256(req->directory, strlen(req->directory), d)) != 0)
			return gpuenv_sha256_fail(ctx, r, "a folder's name");
		gpuenv_hex(d, sizeof(d), hex);
		skey = hex;
	}
	if ((mkey && !(path = meta_path(arena, cache, mkey))) ||
		!(b.what = gpuenv_arena_printf(arena, "%s %s", req->name, req->version ? req->version
			: req->directory).ptr))
		return gpuenv_oom(ctx, "the metadata build");
	uint64_t tr0 = gpuenv_trace_begin(ctx);
	/* the cache: the answer of an earlier lock, checked again */
	r = mkey ? meta_read(ctx, arena, path, &res->metadata) : -ENOENT;
	if (r == 0 && (r = meta_check(ctx, arena, req, path, res->metadata, NULL)) == 0) {
		res->path = path;
		res->cached = true;
		res->secs = meta_now() - t0;
		gpuenv_trace_end(ctx, "build", "metadata", req->name, "cached", tr0);
		return 0;
	}
	if (r == -ENOMEM)
		return r;
	gpuenv_error_clear(ctx); /* none, or a damaged one: asked again */
	memset(&res->metadata, 0, sizeof(res->metadata));
	r = gpuenv_build_session(&b, skey, do_meta, res);
	res->log = b.log;
	res->log_tail = b.log_tail;
	res->secs = meta_now() - t0;
	gpuenv_trace_end(ctx, "build", "metadata", req->name, r ? "failed" : "built", tr0);
	return r;
}

/* ---- the lock's hook ----------------------------------------------------- */

struct meta_python {
	const char *want; /* as asked ("" the newest) */
	gpuenv_python_t py;
	gpuenv_tagset_t *tags;
	gpuenv_marker_env_t env;
};

struct gpuenv_meta_builder {
	gpuenv_ctx_t *ctx;
	gpuenv_meta_builder_opts_t o;
	gpuenv_arena_t arena;
	gpuenv_cache_t *cache;
	struct meta_python pys[META_PYTHONS];
	size_t npys;
	size_t built, cached;
};

int gpuenv_meta_builder_new(gpuenv_ctx_t *ctx, const gpuenv_meta_builder_opts_t *o, gpuenv_meta_builder_t **out)
{
	gpuenv_meta_builder_t *mb = gpuenv_calloc(ctx, 1, sizeof(*mb));
	*out = NULL;
	if (!mb)
		return gpuenv_oom(ctx, "the metadata builder");
	mb->ctx = ctx;
	mb->o = *o;
	gpuenv_arena_init(&mb->arena, ctx, 0);
	*out = mb;
	return 0;
}

void gpuenv_meta_builder_free(gpuenv_meta_builder_t *mb)
{
	if (!mb)
		return;
	for (size_t i = 0; i < mb->npys; i++)
		gpuenv_tagset_free(mb->pys[i].tags);
	gpuenv_cache_close(mb->cache);
	gpuenv_arena_free(&mb->arena);
	gpuenv_free(mb->ctx, mb);
}

void gpuenv_meta_builder_counts(const gpuenv_meta_builder_t *mb, size_t *built, size_t *cached)
{
	*built = mb->built;
	*cached = mb->cached;
}

/* The interpreter for a target of Python want (NULL: the newest found):
 * the options' one, else that version, else the newest. */
static int meta_python(gpuenv_meta_builder_t *mb, const char *want, const struct meta_python **out)
{
	gpuenv_ctx_t *ctx = mb->ctx;
	const char *key = mb->o.python ? mb->o.python : want ? want : "";
	for (size_t i = 0; i < mb->npys; i++)
		if (!strcmp(mb->pys[i].want, key)) {
			*out = &mb->pys[i];
			return 0;
		}
	if (mb->npys == META_PYTHONS)
		return gpuenv_fail(ctx, -E2BIG, NULL, 0, 0, "metadata builds for more than %d Pythons in one lock",
			META_PYTHONS);
	struct meta_python *p = &mb->pys[mb->npys];
	memset(p, 0, sizeof(*p));
	if (!(p->want = gpuenv_arena_strndup(&mb->arena, key, strlen(key))))
		return gpuenv_oom(ctx, "the metadata builder");
	int r = gpuenv_python_find(ctx, &mb->arena, *key ? key : NULL, NULL, &p->py, NULL, NULL);
	if (r == GPUENV_ENOTFOUND && !mb->o.python && *key) {
		/* no Python of the target's version here: the metadata of most
		 * sdists does not depend on it, and the newest one asks */
		gpuenv_log(ctx, GPUENV_LOG_WARN, "no Python %s on this machine for the metadata builds; using the "
			"newest one found", key);
		gpuenv_error_clear(ctx);
		r = gpuenv_python_find(ctx, &mb->arena, NULL, NULL, &p->py, NULL, NULL);
	}
	if (r != 0)
		return gpuenv_hint(ctx, "an sdist with dynamic metadata is locked by asking its build backend, which "
			"needs a Python interpreter on this machine");
	if ((r = gpuenv_project_python_views(ctx, &mb->arena, &p->py, &p->tags, &p->env)) != 0)
		return r;
	mb->npys++;
	*out = p;
	return 0;
}

/* q's metadata with the interpreter for python (what names it in the
 * log line), counted as built or cached. */
static int meta_ask(gpuenv_meta_builder_t *mb, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix,
	const char *python, const gpuenv_build_req_t *q, const char *what, gpuenv_str_t *out)
{
	const struct meta_python *p = NULL;
	gpuenv_build_meta_t res;
	int r;

	if (!mb->cache && (r = gpuenv_cache_open(ctx, mb->o.cache_dir, &mb->cache)) != 0)
		return r;
	if ((r = meta_python(mb, python, &p)) != 0)
		return r;
	gpuenv_build_opts_t bo = { .python = &p->py, .tags = p->tags, .marker_env = &p->env,
		.base_env = mb->o.base_env, .timeout_s = mb->o.timeout_s, .limits = mb->o.limits };
	if ((r = gpuenv_build_metadata(ctx, arena, &bo, mb->cache, ix, q, &res)) != 0)
		return r;
	if (res.cached) {
		mb->cached++;
	} else {
		mb->built++;
		gpuenv_log(ctx, GPUENV_LOG_INFO, "%s: dependencies from its build backend in %.1f s (log: %s)", what,
			res.secs, res.log ? res.log : "none");
	}
	*out = res.metadata;
	return 0;
}

static int hook_metadata(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix,
	const gpuenv_pv_sdist_t *sd, gpuenv_str_t *out)
{
	const gpuenv_index_file_t *f = sd->file;
	const char *sha = f->sha256;
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	int r;

	if (!sha) { /* a local file of find-links: hashed here, as the lock does */
		const char *local = gpuenv_file_url_path(arena, f->url);
		if (!local) {
			gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0, "%s: the index gives no sha256 for it, and its "
				"metadata build is cached by that", f->filename);
			return gpuenv_hint(ctx, "use an index that publishes hashes (PEP 503 #sha256= fragments or "
				"PEP 691 hashes)");
		}
		if ((r = gpuenv_sha256_file(ctx, local, d)) != 0)
			return r;
		gpuenv_hex(d, sizeof(d), hex);
		sha = hex;
	}
	gpuenv_build_req_t q = { .name = sd->name, .version = sd->version, .sdist_url = f->url,
		.sdist_name = f->filename, .sdist_sha256 = sha, .sdist_size = f->size };
	const char *what = gpuenv_arena_printf(arena, "%s %s", sd->name, sd->version).ptr;
	return what ? meta_ask(self, ctx, arena, ix, sd->python, &q, what, out) : gpuenv_oom(ctx, "the metadata build");
}

/* A source tree's metadata (a path or git dependency). */
static int hook_tree(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix,
	const gpuenv_pv_tree_t *tr, gpuenv_str_t *out)
{
	gpuenv_build_req_t q = { .name = tr->name, .directory = tr->dir, .meta_key = tr->key };
	const char *what = gpuenv_arena_printf(arena, "%s (%s)", tr->name, tr->dir).ptr;
	return what ? meta_ask(self, ctx, arena, ix, tr->python, &q, what, out) : gpuenv_oom(ctx, "the metadata build");
}

void gpuenv_meta_builder_hook(gpuenv_meta_builder_t *mb, gpuenv_pv_sdist_meta_t *out)
{
	out->self = mb;
	out->metadata = hook_metadata;
	out->tree = hook_tree;
}
