/* The global cache (include/gpuenv/cache.h; docs/install.md, "Cache").
 *
 *   <dir>/wheels/<aa>/<sha256>/<file name>   a wheel whose hash matched
 *   <dir>/wheels/<aa>/<sha256>/.used         its stamp (mtime: last use)
 *   <dir>/trees/<aa>/<sha256>/               its unpacked tree (manifest last)
 *   <dir>/trees/<aa>/<sha256>.used           the tree's stamp
 *   <dir>/tmp/                               entries being made
 *   <dir>/http-v1/                           the index client's HTTP cache
 *   <dir>/.lock                              flock: shared while used,
 *                                            exclusive for prune / clean
 *
 * An entry is made complete under tmp/ and renamed into place; when the
 * rename finds the name taken, another process was quicker and its entry
 * (complete, because it too arrived by rename) is used, ours dropped.  A
 * damaged entry is first renamed into tmp/ (out of every reader's way) and
 * removed there.
 *
 * gpuenv_cache_get: (1) each tree is checked (gpuenv_wheel_tree_load with
 * check: a stat per file); (2) a missing tree's wheel is looked up, and
 * downloaded when it is not cached (one batch, in parallel); (3) unpacking
 * runs on a few threads, each with its own copy of the context and its own
 * arena: a cached wheel's hash is checked first (a damaged one is fetched
 * again in a second round), a fresh download's was checked as it arrived,
 * and gpuenv_wheel_unpack checks it once more before it writes; (4) the new
 * trees are read into the caller's arena on the calling thread (without a
 * stat per file for a tree this call made: its manifest's stats were just
 * taken; another process's tree found in its place is checked). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/cache.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/pep440.h"
#include "gpuenv/trace.h"

#define STAMP ".used"
#define HTTP_DIR "http-v1" /* lib/index/http_cache.c's folder */
#define MAX_THREADS 64

struct gpuenv_cache {
	gpuenv_ctx_t *ctx; /* the opener's, for memory */
	char *dir;
	int dirfd, lockfd;
	unsigned long seq; /* temporary names (atomic) */
	bool tmp_ready;	   /* tmp/ checked for a dead process's leftovers */
};

/* ---- the folder ------------------------------------------------------------ */

int gpuenv_cache_default_dir(gpuenv_ctx_t *ctx, char *out, size_t outsz)
{
	return gpuenv_index_cache_dir(ctx, out, outsz);
}


int gpuenv_cache_open(gpuenv_ctx_t *ctx, const char *dir, gpuenv_cache_t **out)
{
	char def[PATH_MAX], lock[PATH_MAX + 8];
	gpuenv_cache_t *c;
	int r;

	*out = NULL;
	if (!dir || !dir[0]) {
		if ((r = gpuenv_cache_default_dir(ctx, def, sizeof(def))))
			return r;
		dir = def;
	}
	if ((r = gpuenv_fs_mkdirs(ctx, dir, 0755)))
		return r;
	if (!(c = gpuenv_calloc(ctx, 1, sizeof(*c))) || !(c->dir = gpuenv_strndup(ctx, dir, strlen(dir)))) {
		gpuenv_free(ctx, c);
		return gpuenv_oom(ctx, "for the cache");
	}
	c->ctx = ctx;
	c->lockfd = -1;
	if ((c->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = gpuenv_fail(ctx, -errno, dir, 0, 0, "cannot open the cache folder: %s", strerror(errno));
		goto fail;
	}
	static const char *const subs[] = { "wheels", "trees", "tmp" };
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (mkdirat(c->dirfd, subs[i], 0755) < 0 && errno != EEXIST) {
			r = gpuenv_fail(ctx, -errno, dir, 0, 0, "cannot create %s/%s: %s", dir, subs[i],
				strerror(errno));
			goto fail;
		}
	snprintf(lock, sizeof(lock), "%s/.lock", dir);
	/* a prune or clean holds it for a moment: wait */
	if ((r = gpuenv_fs_lock(ctx, lock, false, true, &c->lockfd)))
		goto fail;
	*out = c;
	return 0;
fail:
	gpuenv_cache_close(c);
	return r;
}

void gpuenv_cache_close(gpuenv_cache_t *c)
{
	if (!c)
		return;
	gpuenv_fs_unlock(c->lockfd);
	if (c->dirfd >= 0)
		close(c->dirfd);
	gpuenv_free(c->ctx, c->dir);
	gpuenv_free(c->ctx, c);
}

const char *gpuenv_cache_dir(const gpuenv_cache_t *c)
{
	return c->dir;
}

/* ---- helpers ----------------------------------------------------------------- */

/* A fresh name under tmp/ ("tmp/<pid>-<seq>-<what>"). */
static void tmp_name(gpuenv_cache_t *c, const char *what, char *out, size_t outsz)
{
	unsigned long k = __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELAXED);
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(out, outsz, "tmp/%ld-%lu-%lx-%s", (long)getpid(), k, (unsigned long)ts.tv_nsec, what);
}

/* The folder name (relative to dirfd) for readdir, or NULL (errno set). */
static DIR *open_dir(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return d;
}

/* Remove name (relative to dirfd) and everything below it; *freed gets the
 * bytes of files whose last link went (NULL: not counted).  0 or -errno. */
static int rm_tree(int at, const char *name, uint64_t *freed)
{
	struct stat st;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(at, name, 0) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (freed && st.st_nlink <= 1)
			*freed += (uint64_t)st.st_size;
		return 0;
	}
	DIR *d = open_dir(at, name);
	if (!d)
		return -errno;
	int fd = dirfd(d), r = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int k = rm_tree(fd, e->d_name, freed);
		if (k && !r)
			r = k;
	}
	closedir(d);
	if (unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !r)
		r = -errno;
	return r;
}

/* Move a damaged or unwanted entry out of the readers' way, then remove it. */
static void discard(gpuenv_cache_t *c, const char *rel)
{
	char t[128];

	tmp_name(c, "discard", t, sizeof(t));
	if (renameat(c->dirfd, rel, c->dirfd, t) == 0)
		rm_tree(c->dirfd, t, NULL);
	else if (errno != ENOENT)
		rm_tree(c->dirfd, rel, NULL);
}

/* Refresh (or make) a stamp: its mtime and atime say when it was used. */
static void touch(int at, const char *rel)
{
	if (utimensat(at, rel, NULL, 0) == 0 || errno != ENOENT)
		return;
	int fd = openat(at, rel, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

/* ---- get ---------------------------------------------------------------------- */

enum { S_DONE, S_FETCH, S_UNPACK_CACHED, S_UNPACK_FRESH, S_UNPACK_LOCAL, S_ALIAS };

typedef struct item {
	const gpuenv_cache_req_t *req;
	char sha[65];
	char wheel_dir[96];   /* wheels/aa/sha */
	char wheel_rel[400];  /* wheels/aa/sha/name */
	char tree_rel[96];    /* trees/aa/sha */
	int state;
	size_t alias;	      /* S_ALIAS: the item with the same hash */
	bool tree_new;	      /* a tree this call renamed into place, or found made */
	bool tree_ours;	      /* ...renamed by this call: its manifest's stats are ours */
	bool downloaded;      /* fetched by this call */
	int err;
	gpuenv_error_t error;
	/* while it is unpacked */
	gpuenv_unpack_job_t *job;
	gpuenv_arena_t arena;
	gpuenv_wheel_tree_t tree;
	size_t parts_left;
	uint64_t size;	      /* the wheel's bytes */
	unsigned units;	      /* under the pool's mu: the tree, and the copy of a local wheel */
	const char *src;      /* a local wheel (a path, a file:// URL): unpacked
				 from where it lies, copied into wheels/ beside */
	char tmp[128];	      /* its tree under tmp/ */
	char pkg[128];	      /* --profile: the package */
	uint64_t t0;
} item_t;

/* The pool's work: an item to begin (its wheel checked and cut into parts;
 * before any part, the largest wheels first) or one part of a begun item
 * (the costliest first, so the largest files start first and the last to
 * finish is small). */
enum { T_PART, T_BEGIN, T_COPY };

typedef struct task {
	uint64_t cost;
	size_t item, part;
	int kind;
} task_t;

typedef struct pool {
	gpuenv_cache_t *c;
	const gpuenv_ctx_t *ctx;
	const gpuenv_unpack_limits_t *lim;
	item_t *items;
	gpuenv_ctx_t *mem;	/* the caller's, for the heap's memory (under mu) */
	task_t *heap;
	size_t nheap, cap;
	size_t queued, done;	/* items given to the pool, items finished */
	unsigned beginning;	/* begins running: they may add parts */
	bool closed;		/* no more items will come */
	bool stop;		/* an item failed: no more begins */
	pthread_mutex_t mu;
	pthread_cond_t work, finished;
} pool_t;
static int name_check(gpuenv_ctx_t *ctx, const gpuenv_cache_req_t *q)
{
	size_t n = q->name ? strlen(q->name) : 0;

	if (!n || n > 255 || strchr(q->name, '/') || q->name[0] == '.' || n < 5 ||
		strcmp(q->name + n - 4, ".whl")) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "not a wheel file name: '%s'",
			q->name ? q->name : "");
		return gpuenv_hint(ctx, "the cache holds wheels (NAME-VERSION-TAGS.whl)");
	}
	return 0;
}

/* An item's wheel, checked: 0, or a damaged (or missing) wheel: 1. */
static int wheel_intact(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, item_t *it)
{
	char path[PATH_MAX];
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[65];
	gpuenv_error_t saved = ctx->err;

	snprintf(path, sizeof(path), "%s/%s", c->dir, it->wheel_rel);
	if (gpuenv_sha256_file(ctx, path, d) != 0) {
		ctx->err = saved;
		return 1;
	}
	gpuenv_hex(d, sizeof(d), hex);
	return strcmp(hex, it->sha) ? 1 : 0;
}

static int mkdir_parent(int at, const char *rel)
{
	char p[128];
	const char *slash = strrchr(rel, '/');

	snprintf(p, sizeof(p), "%.*s", (int)(slash - rel), rel);
	return mkdirat(at, p, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* Rename the complete entry t (under tmp/) to rel.  When rel is taken,
 * another process was first: its entry is used and t dropped, unless it
 * lacks what marks it complete (need, relative to rel), then it is
 * replaced.  1 when t is now rel, 0 when another's entry is, or -errno. */
static int enter(gpuenv_cache_t *c, const char *t, const char *rel, const char *need)
{
	char p[PATH_MAX];
	int r;

	if ((r = mkdir_parent(c->dirfd, rel)))
		goto fail;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (renameat(c->dirfd, t, c->dirfd, rel) == 0)
			return 1;
		if (errno != EEXIST && errno != ENOTEMPTY) {
			r = -errno;
			goto fail;
		}
		snprintf(p, sizeof(p), "%s/%s", rel, need);
		if (faccessat(c->dirfd, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			break;
		discard(c, rel);
	}
	rm_tree(c->dirfd, t, NULL);
	return 0;
fail:
	rm_tree(c->dirfd, t, NULL);
	return r;
}

/* --profile: the package of a wheel's file name (its first field: PEP
 * 427 escapes the name's own dashes), PEP 503 normalized. */
static void trace_pkg(const char *whl, char *out, size_t n)
{
	const char *dash = strchr(whl, '-');

	if (gpuenv_name_normalize_to(gpuenv_str_n(whl, dash ? (size_t)(dash - whl) : strlen(whl)), out, n) == SIZE_MAX)
		snprintf(out, n, "%s", whl);
}

/* ---- the pool: every wheel's parts on one set of threads ---------------- */

static void heap_up(task_t *h, size_t i)
{
	while (i) {
		size_t up = (i - 1) / 2;
		if (h[up].cost >= h[i].cost)
			break;
		task_t t = h[up];
		h[up] = h[i];
		h[i] = t;
		i = up;
	}
}

static task_t heap_pop(pool_t *p)
{
	task_t top = p->heap[0], *h = p->heap;
	size_t i = 0, n = --p->nheap;

	h[0] = h[n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l].cost > h[m].cost)
			m = l;
		if (r < n && h[r].cost > h[m].cost)
			m = r;
		if (m == i)
			break;
		task_t t = h[m];
		h[m] = h[i];
		h[i] = t;
		i = m;
	}
	return top;
}

/* Under mu.  false: out of memory (the caller runs the task itself). */
static bool heap_push(pool_t *p, task_t t)
{
	if (p->nheap == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		task_t *h = gpuenv_realloc(p->mem, p->heap, cap * sizeof(*h));
		if (!h)
			return false;
		p->heap = h;
		p->cap = cap;
	}
	p->heap[p->nheap] = t;
	heap_up(p->heap, p->nheap++);
	return true;
}

/* Begins come before parts, the largest wheels first. */
#define BEGIN_COST ((uint64_t)1 << 62)

/* One unit of an item finished (its tree in place, failed, or its cached
 * wheel found damaged and to be fetched again; a local wheel's copy). */
static void item_finished(pool_t *p, item_t *it, unsigned units, int r, const gpuenv_ctx_t *ctx)
{
	pthread_mutex_lock(&p->mu);
	if (r && !it->err) {
		it->err = r;
		it->error = ctx->err;
		p->stop = true; /* the call fails: what has not begun does not begin */
	}
	if (!(it->units -= units))
		p->done++;
	pthread_cond_broadcast(&p->finished);
	pthread_mutex_unlock(&p->mu);
}

/* A local wheel into wheels/ once its hash is known to be right: copied
 * (in the kernel) under tmp/, then renamed into place as a download is. */
static void run_copy(pool_t *p, gpuenv_ctx_t *ctx, item_t *it)
{
	gpuenv_cache_t *c = p->c;
	char d[128], rel[400];
	uint64_t t0 = gpuenv_trace_begin(ctx);
	int r = 0, e;

	tmp_name(c, "wheel", d, sizeof(d));
	snprintf(rel, sizeof(rel), "%s/%s", d, it->req->name);
	if (mkdirat(c->dirfd, d, 0755) < 0)
		r = gpuenv_fail(ctx, -errno, c->dir, 0, 0, "cannot create %s/%s: %s", c->dir, d, strerror(errno));
	/* copy_file_range: the kernel copies (or clones where the file system can) */
	else if (!(r = gpuenv_link_file(ctx, AT_FDCWD, it->src, c->dirfd, rel, 0644, GPUENV_LINK_COPY, NULL))) {
		snprintf(rel, sizeof(rel), "%s/" STAMP, d);
		touch(c->dirfd, rel);
		if ((e = enter(c, d, it->wheel_dir, it->req->name)) < 0)
			r = gpuenv_fail(ctx, e, c->dir, 0, 0, "cannot put %s into the cache: %s", it->req->name,
				strerror(-e));
		else
			it->downloaded = true;
	}
	if (r)
		rm_tree(c->dirfd, d, NULL);
	gpuenv_trace_end(ctx, "install", "copy", it->pkg, it->src, t0);
	item_finished(p, it, 1, r, ctx);
}

/* The last part of an item done: the manifest (or the tree's removal),
 * then the tree renamed into place. */
static void item_end(pool_t *p, gpuenv_ctx_t *ctx, item_t *it)
{
	gpuenv_cache_t *c = p->c;
	uint64_t t0 = gpuenv_trace_begin(ctx);
	bool wrong = it->state == S_UNPACK_FRESH && gpuenv_wheel_unpack_hash_bad(it->job);
	int r = gpuenv_wheel_unpack_end(it->job, ctx);

	it->job = NULL;
	gpuenv_arena_free(&it->arena);
	if (wrong) /* a fresh (or linked) wheel that is not the one locked leaves the cache */
		discard(c, it->wheel_dir);
	if (!r && (r = enter(c, it->tmp, it->tree_rel, GPUENV_TREE_MANIFEST)) < 0)
		r = gpuenv_fail(ctx, r, c->dir, 0, 0, "cannot move the tree of %s into %s: %s",
			it->req->name, it->tree_rel, strerror(-r));
	gpuenv_trace_end(ctx, "install", "unpack", it->pkg, "the manifest, the tree renamed into place", t0);
	if (r >= 0) {
		it->state = S_DONE;
		it->tree_new = true;
		it->tree_ours = r == 1;
		r = 0;
	}
	item_finished(p, it, 1, r, ctx);
}

static void run_part(pool_t *p, gpuenv_ctx_t *ctx, const task_t *t)
{
	item_t *it = &p->items[t->item];
	uint64_t t0 = gpuenv_trace_begin(ctx);
	size_t left;

	gpuenv_wheel_unpack_part(it->job, ctx, t->part);
	if (ctx->trace) {
		char d[64];
		snprintf(d, sizeof(d), t->part ? "part %zu of %zu" : "sha256 of the wheel", t->part,
			gpuenv_wheel_unpack_parts(it->job) - 1);
		gpuenv_trace_end(ctx, "install", t->part ? "unpack" : "hash", it->pkg, d, t0);
	}
	/* a local wheel whose hash is right: its copy into wheels/ may start
	 * (about four times cheaper than inflating it) */
	bool local0 = it->src && t->part == 0, queued = false;
	bool copy = local0 && !gpuenv_wheel_unpack_hash_bad(it->job);
	pthread_mutex_lock(&p->mu);
	left = --it->parts_left;
	if (copy && (queued = heap_push(p, (task_t){ .cost = it->size / 4 + 1, .item = t->item, .kind = T_COPY })))
		pthread_cond_signal(&p->work);
	if (local0 && !copy)
		it->units--; /* no copy of a wheel that is not the one locked (the tree's unit remains) */
	pthread_mutex_unlock(&p->mu);
	if (copy && !queued) /* no memory for the queue: copied here */
		run_copy(p, ctx, it);
	if (!left)
		item_end(p, ctx, it);
}

/* Begin an item: a cached wheel's hash checked first (a damaged one is
 * fetched again in the next round), the wheel checked and cut into parts,
 * the parts handed to the pool. */
static void run_begin(pool_t *p, gpuenv_ctx_t *ctx, size_t i)
{
	gpuenv_cache_t *c = p->c;
	item_t *it = &p->items[i];
	char tpath[PATH_MAX], wpath[PATH_MAX];
	int r;

	it->t0 = gpuenv_trace_begin(ctx);
	if (ctx->trace)
		trace_pkg(it->req->name, it->pkg, sizeof(it->pkg));
	if (it->state == S_UNPACK_CACHED) {
		bool damaged = wheel_intact(c, ctx, it);
		gpuenv_trace_end(ctx, "install", "hash", it->pkg,
			damaged ? "sha256 of the cached wheel: damaged, fetched again" : "sha256 of the cached wheel",
			it->t0);
		if (damaged) {
			it->state = S_FETCH; /* damaged: fetched again in the next round */
			discard(c, it->wheel_dir);
			item_finished(p, it, it->units, 0, ctx);
			return;
		}
		it->t0 = gpuenv_trace_begin(ctx);
	}
	tmp_name(c, "tree", it->tmp, sizeof(it->tmp));
	snprintf(tpath, sizeof(tpath), "%s/%s", c->dir, it->tmp);
	if (it->src)
		snprintf(wpath, sizeof(wpath), "%s", it->src);
	else
		snprintf(wpath, sizeof(wpath), "%s/%s", c->dir, it->wheel_rel);
	gpuenv_arena_init(&it->arena, ctx, 0);
	if ((r = gpuenv_wheel_unpack_begin(ctx, &it->arena, wpath, it->req->name, it->sha, tpath, p->lim,
		     &it->tree, &it->job))) {
		gpuenv_trace_end(ctx, "install", "unpack", it->pkg, it->req->name, it->t0);
		gpuenv_arena_free(&it->arena);
		item_finished(p, it, it->units, r, ctx); /* and a local wheel's copy, which never starts */
		return;
	}
	size_t n = gpuenv_wheel_unpack_parts(it->job), k;
	if (ctx->trace) {
		char d[96];
		snprintf(d, sizeof(d), "checked, cut into %zu parts", n - 1);
		gpuenv_trace_end(ctx, "install", "unpack", it->pkg, d, it->t0);
	}
	it->parts_left = n;
	pthread_mutex_lock(&p->mu);
	for (k = 0; k < n; k++)
		if (!heap_push(p, (task_t){ .cost = gpuenv_wheel_unpack_part_cost(it->job, k), .item = i, .part = k,
			    .kind = T_PART }))
			break;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	/* out of memory for the queue: the rest on this thread */
	for (; k < n; k++) {
		task_t t = { .item = i, .part = k, .kind = T_PART };
		run_part(p, ctx, &t);
	}
}

static void *worker(void *arg)
{
	pool_t *p = arg;
	gpuenv_ctx_t ctx = *p->ctx;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (p->nheap) {
			task_t t = heap_pop(p);
			item_t *it = &p->items[t.item];
			/* after a failure nothing begins and nothing more is copied */
			bool skip = t.kind != T_PART && p->stop;
			if (t.kind == T_BEGIN && !skip)
				p->beginning++;
			pthread_mutex_unlock(&p->mu);
			gpuenv_error_clear(&ctx);
			if (skip)
				item_finished(p, it, t.kind == T_BEGIN ? it->units : 1, 0, &ctx);
			else if (t.kind == T_BEGIN)
				run_begin(p, &ctx, t.item);
			else if (t.kind == T_COPY)
				run_copy(p, &ctx, it);
			else
				run_part(p, &ctx, &t);
			pthread_mutex_lock(&p->mu);
			if (t.kind == T_BEGIN && !skip)
				p->beginning--;
			continue;
		}
		if (p->closed && !p->beginning)
			break; /* no work left, none to come */
		pthread_cond_wait(&p->work, &p->mu);
	}
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* A thread of its own (the calling thread works when none could start). */
static void *worker_thread(void *arg)
{
	pool_t *p = arg;

	gpuenv_trace_thread_name(p->ctx, "unpack");
	return worker(arg);
}

/* An item for the pool (any thread).  The queue out of memory: begun and
 * unpacked on this thread. */
static void pool_add(pool_t *p, size_t i)
{
	struct stat st;
	item_t *it = &p->items[i];
	bool queued;

	if ((it->src ? stat(it->src, &st) : fstatat(p->c->dirfd, it->wheel_rel, &st, 0)) == 0)
		it->size = (uint64_t)st.st_size;
	pthread_mutex_lock(&p->mu);
	p->queued++;
	it->units = it->src ? 2 : 1;
	queued = heap_push(p, (task_t){ .cost = BEGIN_COST + it->size, .item = i, .kind = T_BEGIN });
	if (queued)
		pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	if (!queued) {
		gpuenv_ctx_t ctx = *p->ctx;
		run_begin(p, &ctx, i);
	}
}

static unsigned nthreads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t t = cpus > 0 ? (size_t)cpus : 1;

	return (unsigned)(t > MAX_THREADS ? MAX_THREADS : t);
}

static int pool_start(pool_t *p, pthread_t *th, unsigned *started)
{
	unsigned nt = nthreads();

	*started = 0;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->finished, NULL);
	for (unsigned i = 0; i < nt; i++)
		if (pthread_create(&th[i], NULL, worker_thread, p) == 0)
			(*started)++;
	return 0;
}

/* No more items: wait for every one, with progress on this thread; the
 * first failure (in item order) is the call's. */
static int pool_finish(pool_t *p, pthread_t *th, unsigned started, gpuenv_ctx_t *ctx,
	const gpuenv_cache_progress_t *progress, size_t n)
{
	size_t reported = (size_t)-1;

	pthread_mutex_lock(&p->mu);
	p->closed = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	if (!started) /* no thread could start: this one does the work */
		worker(p);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		size_t done = p->done;
		if (p->queued && done != reported && progress && progress->fn) {
			reported = done;
			size_t q = p->queued;
			pthread_mutex_unlock(&p->mu);
			progress->fn(progress->arg, "unpack", done, q, 0, 0);
			pthread_mutex_lock(&p->mu);
			continue;
		}
		if (p->done == p->queued)
			break;
		pthread_cond_wait(&p->finished, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->finished);
	gpuenv_free(p->mem, p->heap);
	for (size_t i = 0; i < n; i++)
		if (p->items[i].err) {
			ctx->err = p->items[i].error;
			return p->items[i].err;
		}
	return 0;
}

static void on_download(void *arg, size_t done, size_t n, uint64_t bytes, uint64_t total)
{
	const gpuenv_cache_progress_t *p = arg;

	p->fn(p->arg, "download", done, n, bytes, total);
}

typedef struct fetch {
	gpuenv_cache_t *c;
	gpuenv_ctx_t *ctx;
	pool_t *pool;
	item_t *items;
	gpuenv_download_t *dl;
	size_t *which;
	char (*tmp)[128];
	int err; /* the first failure to put a wheel into the cache */
} fetch_t;

/* A download complete and checked: into wheels/ (the entry folder with the
 * wheel and its stamp, then one rename), and to the pool at once. */
static void on_fetched(void *arg, size_t k)
{
	fetch_t *f = arg;
	gpuenv_cache_t *c = f->c;
	item_t *it = &f->items[f->which[k]];
	char d[128], rel[400];
	int e = 0;

	tmp_name(c, "wheel", d, sizeof(d));
	snprintf(rel, sizeof(rel), "%s/%s", d, it->req->name);
	if (mkdirat(c->dirfd, d, 0755) < 0 || renameat(c->dirfd, f->tmp[k], c->dirfd, rel) < 0)
		e = -errno;
	if (!e) {
		snprintf(rel, sizeof(rel), "%s/" STAMP, d);
		touch(c->dirfd, rel);
		e = enter(c, d, it->wheel_dir, it->req->name);
	}
	if (e < 0) {
		rm_tree(c->dirfd, f->tmp[k], NULL);
		rm_tree(c->dirfd, d, NULL);
		if (!f->err)
			f->err = gpuenv_fail(f->ctx, e, c->dir, 0, 0, "cannot put %s into the cache: %s",
				it->req->name, strerror(-e));
		return;
	}
	it->state = S_UNPACK_FRESH;
	it->downloaded = true;
	pool_add(f->pool, f->which[k]);
}

/* Download the items in S_FETCH into wheels/, each handed to the pool as
 * it arrives. */
static int fetch_all(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, gpuenv_index_t *ix, item_t *items,
	size_t n, pool_t *pool, const gpuenv_cache_progress_t *progress)
{
	size_t nf = 0;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		nf += items[i].state == S_FETCH;
	if (!nf)
		return 0;
	fetch_t f = { .c = c, .ctx = ctx, .pool = pool, .items = items };
	f.dl = gpuenv_calloc(ctx, nf, sizeof(*f.dl));
	f.which = gpuenv_calloc(ctx, nf, sizeof(*f.which));
	f.tmp = gpuenv_calloc(ctx, nf, sizeof(*f.tmp));
	char (*paths)[PATH_MAX] = gpuenv_calloc(ctx, nf, sizeof(*paths));
	if (!f.dl || !f.which || !f.tmp || !paths) {
		r = gpuenv_oom(ctx, "for downloads");
		goto out;
	}
	for (size_t i = 0, k = 0; i < n; i++) {
		if (items[i].state != S_FETCH)
			continue;
		const gpuenv_cache_req_t *q = items[i].req;
		f.which[k] = i;
		tmp_name(c, "whl", f.tmp[k], sizeof(f.tmp[k]));
		snprintf(paths[k], sizeof(paths[k]), "%s/%s", c->dir, f.tmp[k]);
		f.dl[k] = (gpuenv_download_t){ .url = q->url, .src_path = q->url ? NULL : q->path,
			.name = q->name, .fd = -1, .path = paths[k], .sha256 = items[i].sha, .size = q->size };
		k++;
	}
	gpuenv_download_opts_t o = { .progress = progress && progress->fn ? on_download : NULL,
		.progress_arg = (void *)progress, .done = on_fetched, .done_arg = &f };
	r = gpuenv_index_download(ix, ctx, f.dl, nf, &o);
	if (!r && f.err) {
		r = f.err;
		ctx->err = f.ctx->err;
	}
out:
	gpuenv_free(ctx, f.dl);
	gpuenv_free(ctx, f.which);
	gpuenv_free(ctx, f.tmp);
	gpuenv_free(ctx, paths);
	return r;
}

/* The first look at an item: its tree intact (S_DONE), its wheel cached
 * (S_UNPACK_CACHED), or nothing (S_FETCH); a damaged tree is discarded. */
static bool tree_ok(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir, const char *sha,
	gpuenv_wheel_tree_t *t, int *r)
{
	*r = gpuenv_wheel_tree_load(ctx, arena, dir, true, t);
	return *r == 0 && t->wheel_sha256 && !strcmp(t->wheel_sha256, sha);
}

static void look(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, item_t *it,
	gpuenv_cache_entry_t *e)
{
	struct stat st;
	gpuenv_error_t saved = ctx->err;
	int r;

	for (int attempt = 0; attempt < 3 && fstatat(c->dirfd, it->tree_rel, &st, 0) == 0; attempt++) {
		if (tree_ok(ctx, arena, e->tree_dir, it->sha, &e->tree, &r)) {
			it->state = S_DONE;
			return;
		}
		if (r == -ENOMEM) {
			it->err = r;
			it->error = ctx->err;
			return;
		}
		gpuenv_log(ctx, GPUENV_LOG_INFO, "%s: the cached tree is damaged (%s); unpacking it again",
			it->req->name, r ? ctx->err.msg : "another wheel's hash");
		ctx->err = saved;
		/* out of the readers' way; then a look at what was moved: when
		 * another process had just put a fresh tree there, it goes back */
		char t[128], tpath[PATH_MAX];
		tmp_name(c, "damaged", t, sizeof(t));
		if (renameat(c->dirfd, it->tree_rel, c->dirfd, t) < 0)
			continue; /* moved by another process: look again */
		snprintf(tpath, sizeof(tpath), "%s/%s", c->dir, t);
		gpuenv_arena_t scratch;
		gpuenv_wheel_tree_t moved;
		gpuenv_arena_init(&scratch, ctx, 0);
		bool fresh = tree_ok(ctx, &scratch, tpath, it->sha, &moved, &r);
		gpuenv_arena_free(&scratch);
		ctx->err = saved;
		if (fresh && renameat(c->dirfd, t, c->dirfd, it->tree_rel) == 0)
			continue;
		rm_tree(c->dirfd, t, NULL);
		e->repaired = true;
		break;
	}
	it->state = fstatat(c->dirfd, it->wheel_rel, &st, 0) == 0 && S_ISREG(st.st_mode) ? S_UNPACK_CACHED
											  : S_FETCH;
}

/* The size a request gives, against what the cache knows of the wheel with
 * its hash (the tree's record, else the cached file): a wrong size fails
 * from a warm cache as it fails a download.  A tree that does not know
 * its wheel's size, without the wheel beside it, is fetched again (the
 * download checks). */
static void check_size(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, item_t *it, const gpuenv_cache_entry_t *e)
{
	const gpuenv_cache_req_t *q = it->req;
	uint64_t have = it->state == S_DONE ? e->tree.wheel_size : 0;
	struct stat st;

	if (q->size < 0 || it->state == S_FETCH)
		return;
	if (!have && fstatat(c->dirfd, it->wheel_rel, &st, 0) == 0 && S_ISREG(st.st_mode))
		have = (uint64_t)st.st_size;
	if (!have) {
		it->state = S_FETCH;
		return;
	}
	if (have == (uint64_t)q->size)
		return;
	it->err = gpuenv_fail(ctx, GPUENV_EFORMAT, q->url ? q->url : q->path, 0, 0,
		"%s has %llu bytes (the wheel of sha256 %s in the cache), expected %lld", q->name,
		(unsigned long long)have, it->sha, (long long)q->size);
	gpuenv_hint(ctx, "the lock or the index is wrong about its size: check the source, then lock again");
	it->error = ctx->err;
}

static void empty_dir(gpuenv_cache_t *c, const char *top, uint64_t *freed);
static void lock_shared(gpuenv_cache_t *c);

/* Before this handle makes anything in tmp/: with no other process (or
 * other handle) using the cache, what tmp/ holds is a killed one's (partial
 * downloads, half-unpacked trees), cleared now rather than at the next
 * prune (issue 22 item 10).  Busy: left to its owners.  Once per handle: a
 * later call would find this handle's own work there (a source build's
 * folder while its build venv is filled).  The readers (size) leave it
 * alone. */
void gpuenv_cache_tmp_ready(gpuenv_cache_t *c)
{
	if (c->tmp_ready)
		return;
	c->tmp_ready = true;
	if (flock(c->lockfd, LOCK_EX | LOCK_NB) == 0)
		empty_dir(c, "tmp", NULL);
	lock_shared(c); /* back to shared (a failed conversion may have dropped it) */
}

/* A wheel to fetch that lies on this machine (a path, a file:// URL) is
 * unpacked from where it lies, hashed as it is read, and copied into
 * wheels/ beside (no copy to wait for); its size is checked here, as a
 * download's is. */
static int local_source(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, item_t *it)
{
	const gpuenv_cache_req_t *q = it->req;
	const char *src = q->url ? NULL : q->path;
	struct stat st;

	if (q->url && !strncmp(q->url, "file://", 7) && !(src = gpuenv_file_url_path(arena, q->url)))
		return 0; /* not a URL this machine reads: the download says why */
	if (!src)
		return 0;
	if (stat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = errno;
		gpuenv_fail(ctx, S_ISREG(st.st_mode) || e == ENOENT ? -e : GPUENV_EFORMAT, src, 0, 0,
			"cannot read %s: %s", q->name, e == ENOENT || !S_ISREG(st.st_mode) ? "not a file" : strerror(e));
		return gpuenv_hint(ctx, "the lock names a local wheel that is not there: build it, or lock again");
	}
	if (q->size >= 0 && (uint64_t)st.st_size != (uint64_t)q->size) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, src, 0, 0, "%s has %llu bytes, expected %lld", q->name,
			(unsigned long long)st.st_size, (long long)q->size);
		return gpuenv_hint(ctx, "the lock or the index is wrong, or the file changed: check the "
					"source, then lock again");
	}
	it->src = src;
	it->state = S_UNPACK_LOCAL;
	return 0;
}

int gpuenv_cache_get(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_index_t *ix, const gpuenv_cache_req_t *reqs, size_t n,
	const gpuenv_unpack_limits_t *lim, const gpuenv_cache_progress_t *progress,
	gpuenv_cache_entry_t *out)
{
	item_t *items = gpuenv_calloc(ctx, n ? n : 1, sizeof(*items));
	gpuenv_strmap_t seen = { .ctx = ctx };
	int r = 0;

	if (!items) {
		r = gpuenv_oom(ctx, "for the cache");
		goto out;
	}
	gpuenv_cache_tmp_ready(c);
	/* (1) names, hashes, the trees that are there */
	for (size_t i = 0; i < n; i++) {
		item_t *it = &items[i];
		const gpuenv_cache_req_t *q = &reqs[i];
		memset(&out[i], 0, sizeof(out[i]));
		it->req = q;
		if ((r = name_check(ctx, q)))
			goto out;
		size_t k;
		for (k = 0; q->sha256 && q->sha256[k] && k < 64; k++)
			it->sha[k] = (char)(q->sha256[k] >= 'A' && q->sha256[k] <= 'F' ? q->sha256[k] + 32
										 : q->sha256[k]);
		it->sha[k] = '\0';
		if (!q->sha256 || q->sha256[k] || !is_hex64(it->sha)) {
			r = gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s: the cache needs its sha256 "
				"(64 hex digits), got '%s'", q->name, q->sha256 ? q->sha256 : "");
			goto out;
		}
		if (!q->url && !q->path) {
			r = gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s: neither a URL nor a path",
				q->name);
			goto out;
		}
		snprintf(it->wheel_dir, sizeof(it->wheel_dir), "wheels/%.2s/%s", it->sha, it->sha);
		snprintf(it->wheel_rel, sizeof(it->wheel_rel), "%s/%s", it->wheel_dir, q->name);
		snprintf(it->tree_rel, sizeof(it->tree_rel), "trees/%.2s/%s", it->sha, it->sha);
		out[i].tree_dir = gpuenv_arena_printf(arena, "%s/%s", c->dir, it->tree_rel).ptr;
		if (!out[i].tree_dir) {
			r = gpuenv_oom(ctx, "for the cache");
			goto out;
		}
		bool found;
		void *first = gpuenv_strmap_get(&seen, it->sha, 64, &found);
		if (found) { /* the same wheel twice: one entry */
			it->state = S_ALIAS;
			it->alias = (size_t)((uintptr_t)first - 1);
			continue;
		}
		if ((r = gpuenv_strmap_put(&seen, it->sha, 64, (void *)(uintptr_t)(i + 1))))
			goto out;
		look(c, ctx, arena, it, &out[i]);
		if (!it->err)
			check_size(c, ctx, it, &out[i]);
		if (it->err) {
			r = it->err;
			ctx->err = it->error;
			goto out;
		}
	}
	/* (2) and (3), twice at most: a cached wheel found damaged is fetched
	 * again and unpacked in the second round */
	for (int round = 0; round < 2; round++) {
		/* the cached wheels to unpack go to the pool first, then each
		 * download as it arrives, so unpacking overlaps downloading */
		pool_t pool = { .c = c, .ctx = ctx, .lim = lim, .items = items, .mem = ctx };
		pthread_t th[MAX_THREADS];
		unsigned started;
		for (size_t i = 0; i < n && !r; i++)
			if (items[i].state == S_FETCH)
				r = local_source(ctx, arena, &items[i]);
		if (r)
			goto out;
		pool_start(&pool, th, &started);
		for (size_t i = 0; i < n; i++)
			if (items[i].state == S_UNPACK_CACHED || items[i].state == S_UNPACK_LOCAL)
				pool_add(&pool, i);
		int fr = fetch_all(c, ctx, ix, items, n, &pool, progress);
		gpuenv_error_t fetch_err = ctx->err;
		r = pool_finish(&pool, th, started, ctx, progress, n);
		if (fr) { /* a download's failure comes first */
			r = fr;
			ctx->err = fetch_err;
		}
		for (size_t i = 0; i < n; i++)
			if (items[i].downloaded)
				out[i].downloaded = true;
		if (r)
			goto out;
		bool again = false;
		for (size_t i = 0; i < n; i++)
			if (items[i].state == S_FETCH) {
				if (round) {
					r = gpuenv_fail(ctx, GPUENV_EFORMAT, items[i].req->name, 0, 0,
						"the wheel fetched again does not match sha256 %s either",
						items[i].sha);
					goto out;
				}
				out[i].repaired = true;
				again = true;
			}
		if (!again)
			break;
	}
	/* (4) the new trees into the caller's arena; stamps */
	for (size_t i = 0; i < n; i++) {
		item_t *it = &items[i];
		if (it->state == S_ALIAS)
			continue;
		if (it->tree_new) {
			out[i].unpacked = true;
			/* a tree this call made was stat'ed as its manifest was
			 * written, a moment ago: checked again only when another
			 * process's was found in its place */
			if ((r = gpuenv_wheel_tree_load(ctx, arena, out[i].tree_dir, !it->tree_ours,
				     &out[i].tree))) {
				gpuenv_hint(ctx, "the tree of %s changed while it was made; run again", it->req->name);
				goto out;
			}
		}
		char stamp[128];
		snprintf(stamp, sizeof(stamp), "%s" STAMP, it->tree_rel);
		touch(c->dirfd, stamp);
		snprintf(stamp, sizeof(stamp), "%s/" STAMP, it->wheel_dir);
		touch(c->dirfd, stamp);
	}
	for (size_t i = 0; i < n; i++)
		if (items[i].state == S_ALIAS) {
			size_t a = items[i].alias;
			out[i] = out[a];
			out[i].downloaded = out[i].unpacked = out[i].repaired = false;
		}
out:
	gpuenv_strmap_free(&seen);
	gpuenv_free(ctx, items);
	return r;
}

/* ---- size, prune, clean -------------------------------------------------------- */

typedef struct inode_set {
	gpuenv_ctx_t *ctx;
	uint64_t *v; /* dev ^ ino << 1 ... as pairs */
	size_t n, cap;
} inode_set_t;

/* true when (dev, ino) was not in the set (and is now) */
static bool inode_add(inode_set_t *s, dev_t dev, ino_t ino)
{
	uint64_t key[2] = { (uint64_t)dev, (uint64_t)ino };

	if (s->n * 2 >= s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = gpuenv_calloc(s->ctx, cap, 2 * sizeof(uint64_t));
		if (!v)
			return true; /* out of memory: count it (an over-estimate) */
		for (size_t i = 0; i < s->cap; i++) {
			uint64_t *o = &s->v[2 * i];
			if (!o[0] && !o[1])
				continue;
			size_t h = (size_t)((o[0] * 0x9e3779b97f4a7c15ULL) ^ o[1]) & (cap - 1);
			while (v[2 * h] || v[2 * h + 1])
				h = (h + 1) & (cap - 1);
			v[2 * h] = o[0];
			v[2 * h + 1] = o[1];
		}
		gpuenv_free(s->ctx, s->v);
		s->v = v;
		s->cap = cap;
	}
	key[0] += 1; /* (0, 0) marks an empty slot */
	size_t h = (size_t)((key[0] * 0x9e3779b97f4a7c15ULL) ^ key[1]) & (s->cap - 1);
	while (s->v[2 * h] || s->v[2 * h + 1]) {
		if (s->v[2 * h] == key[0] && s->v[2 * h + 1] == key[1])
			return false;
		h = (h + 1) & (s->cap - 1);
	}
	s->v[2 * h] = key[0];
	s->v[2 * h + 1] = key[1];
	s->n++;
	return true;
}

/* Bytes under name (a file or a folder), each inode once. */
static uint64_t du(int at, const char *name, inode_set_t *seen)
{
	struct stat st;
	uint64_t sum = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return st.st_nlink > 1 && !inode_add(seen, st.st_dev, st.st_ino) ? 0 : (uint64_t)st.st_size;
	DIR *d = open_dir(at, name);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			sum += du(dirfd(d), e->d_name, seen);
	closedir(d);
	return sum;
}

/* Each entry <top>/<aa>/<name> of wheels/ or trees/: fn(c, rel, arg). */
static void each_entry(gpuenv_cache_t *c, const char *top,
	void (*fn)(gpuenv_cache_t *c, const char *rel, const char *name, void *arg), void *arg)
{
	DIR *d = open_dir(c->dirfd, top);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char sub[64];
		snprintf(sub, sizeof(sub), "%s/%.8s", top, e->d_name);
		DIR *d2 = open_dir(c->dirfd, sub);
		if (!d2)
			continue;
		struct dirent *e2;
		while ((e2 = readdir(d2))) {
			if (e2->d_name[0] == '.')
				continue;
			char rel[400];
			snprintf(rel, sizeof(rel), "%s/%s", sub, e2->d_name);
			fn(c, rel, e2->d_name, arg);
		}
		closedir(d2);
	}
	closedir(d);
}

struct size_walk {
	inode_set_t seen;
	uint64_t count, bytes;
	bool trees;
};

static void size_one(gpuenv_cache_t *c, const char *rel, const char *name, void *arg)
{
	struct size_walk *w = arg;
	size_t n = strlen(name);

	if (w->trees && n > sizeof(STAMP) && !strcmp(name + n - (sizeof(STAMP) - 1), STAMP)) {
		w->bytes += du(c->dirfd, rel, &w->seen);
		return;
	}
	w->count++;
	w->bytes += du(c->dirfd, rel, &w->seen);
}

int gpuenv_cache_size(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, gpuenv_cache_usage_t *out)
{
	struct size_walk w = { .seen = { .ctx = ctx } };

	memset(out, 0, sizeof(*out));
	each_entry(c, "wheels", size_one, &w);
	out->wheels = w.count;
	out->wheel_bytes = w.bytes;
	w.count = w.bytes = 0;
	w.trees = true;
	each_entry(c, "trees", size_one, &w);
	out->trees = w.count;
	out->tree_bytes = w.bytes;
	out->http_bytes = du(c->dirfd, HTTP_DIR, &w.seen);
	/* tmp/ and whatever else lies at the top */
	DIR *d = open_dir(c->dirfd, ".");
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, ".lock") &&
			strcmp(e->d_name, "wheels") && strcmp(e->d_name, "trees") && strcmp(e->d_name, HTTP_DIR))
			out->other_bytes += du(c->dirfd, e->d_name, &w.seen);
	if (d)
		closedir(d);
	gpuenv_free(ctx, w.seen.v);
	return 0;
}

/* The exclusive lock on the descriptor that holds the shared one (flock
 * converts; a failed conversion may drop the shared lock, so it is taken
 * again). */
static int lock_exclusive(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, bool wait)
{
	while (flock(c->lockfd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		while (flock(c->lockfd, LOCK_SH) < 0 && errno == EINTR)
			;
		if (e == EWOULDBLOCK) {
			gpuenv_fail(ctx, GPUENV_ELOCKED, c->dir, 0, 0,
				"the cache is in use by another gpuenv process");
			return gpuenv_hint(ctx, "try again when it is done, or wait for it (--wait)");
		}
		return gpuenv_fail(ctx, -e, c->dir, 0, 0, "cannot lock the cache: %s", strerror(e));
	}
	return 0;
}

static void lock_shared(gpuenv_cache_t *c)
{
	while (flock(c->lockfd, LOCK_SH) < 0 && errno == EINTR)
		;
}

struct prune_walk {
	time_t cutoff;
	bool trees;
	uint64_t freed;
};

/* The last use of an entry: its stamp (atime or mtime, the later), else the
 * entry itself. */
static time_t last_use(gpuenv_cache_t *c, const char *stamp, const char *entry)
{
	struct stat st;

	if (fstatat(c->dirfd, stamp, &st, 0) == 0 || fstatat(c->dirfd, entry, &st, 0) == 0)
		return st.st_atime > st.st_mtime ? st.st_atime : st.st_mtime;
	return 0;
}

static void prune_one(gpuenv_cache_t *c, const char *rel, const char *name, void *arg)
{
	struct prune_walk *w = arg;
	char stamp[420], wheel[128];
	size_t n = strlen(name);

	if (!w->trees) {
		snprintf(stamp, sizeof(stamp), "%s/" STAMP, rel);
		if (last_use(c, stamp, rel) < w->cutoff)
			rm_tree(c->dirfd, rel, &w->freed);
		return;
	}
	if (n > sizeof(STAMP) && !strcmp(name + n - (sizeof(STAMP) - 1), STAMP)) {
		/* a stamp without its tree */
		snprintf(stamp, sizeof(stamp), "%.*s", (int)(strlen(rel) - (sizeof(STAMP) - 1)), rel);
		if (faccessat(c->dirfd, stamp, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			rm_tree(c->dirfd, rel, &w->freed);
		return;
	}
	snprintf(stamp, sizeof(stamp), "%s" STAMP, rel);
	snprintf(wheel, sizeof(wheel), "wheels/%.2s/%.64s", name, name);
	if (last_use(c, stamp, rel) < w->cutoff || faccessat(c->dirfd, wheel, F_OK, 0) < 0) {
		rm_tree(c->dirfd, rel, &w->freed);
		rm_tree(c->dirfd, stamp, &w->freed);
	}
}

/* Everything under tmp/ (no other process writes there while the lock is
 * exclusive). */
static void empty_dir(gpuenv_cache_t *c, const char *top, uint64_t *freed)
{
	DIR *d = open_dir(c->dirfd, top);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rm_tree(dirfd(d), e->d_name, freed);
	closedir(d);
}

int gpuenv_cache_prune(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, uint64_t older_than_s, bool wait,
	uint64_t *freed)
{
	struct prune_walk w = { .cutoff = time(NULL) - (time_t)older_than_s };
	int r;

	if (freed)
		*freed = 0;
	if ((r = lock_exclusive(c, ctx, wait)))
		return r;
	each_entry(c, "wheels", prune_one, &w);
	w.trees = true;
	each_entry(c, "trees", prune_one, &w);
	empty_dir(c, "tmp", &w.freed);
	lock_shared(c);
	if (freed)
		*freed = w.freed;
	return 0;
}

int gpuenv_cache_clean(gpuenv_cache_t *c, gpuenv_ctx_t *ctx, bool wait, uint64_t *freed)
{
	uint64_t f = 0;
	int r;

	if (freed)
		*freed = 0;
	if ((r = lock_exclusive(c, ctx, wait)))
		return r;
	/* builds, sdists, build-logs: lib/builder's (docs/build.md) */
	static const char *const tops[] = { "wheels", "trees", "tmp", HTTP_DIR, "builds", "sdists", "build-logs" };
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		empty_dir(c, tops[i], &f);
	lock_shared(c);
	if (freed)
		*freed = f;
	return 0;
}
