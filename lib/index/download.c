/* Downloads of whole files (include/gpuenv/index.h, "downloads"): the
 * bytes go straight to the destination as they arrive (a sink on the
 * transfer engine's request, http.c), hashed on the way, so a 2 GB wheel
 * is never held in memory and its hash is known when the last byte lands.
 *
 * A retried transfer (a 503, a body cut short) starts its file and its
 * hash again: the sink notices that the bytes belong to a new attempt.
 * file:// URLs are read on the calling thread through the same writer. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/hash.h"
#include "gpuenv/fs.h"
#include "gpuenv/trace.h"

#include "http.h"
#include "index_int.h"

#define DEFAULT_MAX ((uint64_t)2 << 30)
#define PROGRESS_STEP ((uint64_t)1 << 20)

typedef struct dl_run {
	const gpuenv_download_opts_t *opts;
	gpuenv_download_t *dl; /* the first, for done's index */
	size_t done, n;
	uint64_t bytes, total, last_report;
} dl_run_t;

typedef struct djob {
	ix_job_t job;
	gpuenv_download_t *d;
	dl_run_t *run;
	const char *url;  /* without userinfo */
	const char *name; /* for messages */
	const char *sha;  /* the expected sha256, lower case */
	const char *local; /* a file:// URL's path, or src_path; NULL: remote */
	int fd;
	bool own_fd, hashing;
	gpuenv_sha256_t h;
	unsigned attempt; /* the request attempt the bytes so far belong to */
	uint64_t bytes, cap;
	int werr; /* the sink's failure: -errno of a write, GPUENV_ETOOBIG */
	ix_cred_t cred;
	/* --profile: the package, and the time spent hashing as bytes arrived */
	const gpuenv_ctx_t *traced; /* NULL: tracing off */
	char pkg[128];
	uint64_t hash_us;
} djob_t;

static void report(dl_run_t *run, bool force)
{
	if (!run->opts || !run->opts->progress)
		return;
	if (!force && run->bytes - run->last_report < PROGRESS_STEP)
		return;
	run->last_report = run->bytes;
	run->opts->progress(run->opts->progress_arg, run->done, run->n, run->bytes, run->total);
}

/* Start the file and the hash again (a new attempt, or the first). */
static int restart(djob_t *j)
{
	if (j->bytes) {
		if (ftruncate(j->fd, 0) < 0 || lseek(j->fd, 0, SEEK_SET) < 0)
			return -errno;
		j->run->bytes -= j->bytes;
		j->bytes = 0;
	}
	if (j->hashing)
		gpuenv_sha256_drop(&j->h);
	j->hashing = gpuenv_sha256_init(&j->h) == 0;
	return j->hashing ? 0 : -ENOMEM;
}

/* Bytes to the file and the hash; 0 or the sink's failure (kept in werr). */
static int put(djob_t *j, const char *p, size_t n)
{
	if (j->bytes + n > j->cap || (j->d->size >= 0 && j->bytes + n > (uint64_t)j->d->size))
		return j->werr = GPUENV_ETOOBIG;
	for (size_t w = 0; w < n;) {
		ssize_t k = write(j->fd, p + w, n - w);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return j->werr = -errno;
		w += (size_t)k;
	}
	if (j->traced) {
		uint64_t h0 = gpuenv_trace_now();
		gpuenv_sha256_update(&j->h, p, n);
		j->hash_us += gpuenv_trace_now() - h0;
	} else
		gpuenv_sha256_update(&j->h, p, n);
	j->bytes += n;
	j->run->bytes += n;
	report(j->run, false);
	return 0;
}

static bool sink(ix_req_t *r, const char *p, size_t n, void *arg)
{
	djob_t *j = arg;

	if (j->attempt != r->attempts) {
		j->attempt = r->attempts;
		if ((j->werr = restart(j)))
			return false;
	}
	return put(j, p, n) == 0;
}

static int sink_fail(djob_t *j, gpuenv_ctx_t *ctx)
{
	if (j->werr == GPUENV_ETOOBIG) {
		if (j->d->size >= 0 && (uint64_t)j->d->size < j->cap)
			gpuenv_fail(ctx, GPUENV_ETOOBIG, j->url, 0, 0, "%s is larger than the %lld bytes "
				"expected", j->name, (long long)j->d->size);
		else
			gpuenv_fail(ctx, GPUENV_ETOOBIG, j->url, 0, 0, "%s is larger than the limit of "
				"%llu bytes", j->name, (unsigned long long)j->cap);
		return gpuenv_hint(ctx, "the lock or the index gives another size than the server "
					"serves; check the source");
	}
	gpuenv_fail(ctx, j->werr, j->d->path ? j->d->path : j->url, 0, 0, "cannot write %s: %s",
		j->name, j->werr == -ENOMEM ? "out of memory" : strerror(-j->werr));
	if (j->d->path)
		return gpuenv_fs_full_hint(ctx, j->werr, AT_FDCWD, j->d->path, -1,
			"`gpuenv cache prune` frees unused cache entries");
	if (j->werr == -ENOSPC || j->werr == -EDQUOT)
		return gpuenv_hint(ctx, "free some space (`gpuenv cache prune` frees unused cache entries)");
	return j->werr;
}

/* All bytes are in: the size and the hash decide. */
static int finish(djob_t *j, gpuenv_ctx_t *ctx)
{
	unsigned char dg[GPUENV_SHA256_LEN];
	char got[2 * GPUENV_SHA256_LEN + 1];
	uint64_t t0 = gpuenv_trace_begin(ctx);
	int r = gpuenv_sha256_final(&j->h, dg);

	j->hashing = false;
	if (r)
		return gpuenv_sha256_fail(ctx, r, j->name);
	gpuenv_hex(dg, sizeof(dg), got);
	memcpy(j->d->got_sha256, got, sizeof(got));
	j->d->bytes = j->bytes;
	if (j->d->size >= 0 && j->bytes != (uint64_t)j->d->size) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, j->url, 0, 0, "%s has %llu bytes, expected %lld", j->name,
			(unsigned long long)j->bytes, (long long)j->d->size);
		return gpuenv_hint(ctx, "the lock or the index is wrong, or the server serves other bytes: "
					"check the source, then lock again");
	}
	if (j->sha && strcmp(got, j->sha)) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, j->url, 0, 0,
			"hash mismatch for %s: expected sha256 %s, got %s", j->name, j->sha, got);
		return gpuenv_hint(ctx, "the lock or the index is wrong, or a proxy serves other bytes: "
					"check the source, then lock again");
	}
	j->job.done = true;
	if (ctx->trace) {
		/* the bytes were hashed as they arrived: the span is the check, its
		 * detail the hashing time inside the download span */
		char d[200];
		snprintf(d, sizeof(d), "sha256 of %llu bytes, %llu us of hashing while downloading",
			(unsigned long long)j->bytes, (unsigned long long)j->hash_us);
		gpuenv_trace_complete_lane(ctx, IX_TRACE_LANES, "index", "hash", j->pkg, d, t0,
			gpuenv_trace_now() - t0);
	}
	return 0;
}

static int answer_one(djob_t *j, gpuenv_ctx_t *ctx)
{
	ix_req_t *r = &j->job.req;
	int e;

	if (j->werr)
		return sink_fail(j, ctx);
	if (r->err) {
		ctx->err = r->error;
		return r->err;
	}
	if (r->status != 200) {
		gpuenv_fail(ctx, r->status == 404 || r->status == 410 ? GPUENV_ENOTFOUND : -EIO, j->url,
			0, 0, "HTTP %ld for %s", r->status, j->name);
		return gpuenv_hint(ctx, "the file is not on the server (any more): lock again");
	}
	if (j->attempt != r->attempts) { /* an empty body */
		j->attempt = r->attempts;
		if ((e = restart(j))) {
			j->werr = e;
			return sink_fail(j, ctx);
		}
	}
	return finish(j, ctx);
}

/* A download complete and checked: its file closed, the caller told. */
static void close_done(djob_t *j, const gpuenv_download_opts_t *opts, size_t k)
{
	if (j->own_fd && j->fd >= 0) {
		close(j->fd);
		j->fd = -1;
	}
	if (opts && opts->done)
		opts->done(opts->done_arg, k);
}

static int answer(ix_job_t *job, gpuenv_ctx_t *ctx)
{
	djob_t *j = (djob_t *)job;
	int r = answer_one(j, ctx);

	if (!r)
		close_done(j, j->run->opts, (size_t)(j->d - j->run->dl));
	j->run->done++;
	report(j->run, true);
	return r;
}

static int copy_local(djob_t *j, gpuenv_ctx_t *ctx, const char *path)
{
	char buf[256 * 1024];
	int in, r = 0;

	if ((in = gpuenv_fs_open_regular(ctx, AT_FDCWD, path, NULL)) < 0)
		return in;
	if ((r = restart(j))) {
		close(in);
		j->werr = r;
		return sink_fail(j, ctx);
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = gpuenv_fail(ctx, -errno, path, 0, 0, "cannot read %s: %s", j->name, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (put(j, buf, (size_t)n)) {
			r = sink_fail(j, ctx);
			break;
		}
	}
	close(in);
	return r ? r : finish(j, ctx);
}

static int prepare(djob_t *j, gpuenv_index_t *ix, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	bool *remote)
{
	gpuenv_download_t *d = j->d;
	gpuenv_str_t user, pass, pub;

	*remote = false;
	if (!d->url && !d->src_path)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "a download without a URL");
	if (!d->url) {
		user = pass = GPUENV_STR_NULL;
		pub = gpuenv_arena_str(arena, gpuenv_str(d->src_path));
		j->local = pub.ptr;
	} else {
		pub = ix_url_strip(arena, gpuenv_str(d->url), &user, &pass);
		j->local = pub.ptr ? ix_file_url_path(arena, pub.ptr).ptr : NULL;
	}
	if (!pub.ptr)
		return gpuenv_oom(ctx, "for a download");
	j->url = pub.ptr;
	j->name = d->name;
	if (!j->name) {
		gpuenv_str_t b = ix_url_basename(arena, pub);
		j->name = b.ptr && b.len ? b.ptr : j->url;
	}
	if (d->unhashed && !d->sha256)
		j->sha = NULL;
	else if (!d->sha256 || !(j->sha = ix_sha256_hex(arena, gpuenv_str(d->sha256))))
		return gpuenv_fail(ctx, GPUENV_EUSAGE, j->url, 0, 0, "%s: a download needs a sha256 of "
			"64 hex digits (got %s)", j->name, d->sha256 ? d->sha256 : "none");
	j->cap = d->max_bytes ? d->max_bytes : ix ? ix_client_opts(ix)->max_wheel_bytes : DEFAULT_MAX;
	if (!j->local) {
		if (strncmp(j->url, "http://", 7) && strncmp(j->url, "https://", 8))
			return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, j->url, 0, 0, "%s: only http(s):// and "
				"file:// URLs can be downloaded", j->name);
		if (!ix) {
			gpuenv_fail(ctx, GPUENV_EUSAGE, j->url, 0, 0, "%s needs a download, and no index "
				"client is open", j->name);
			return gpuenv_hint(ctx, "give the index (--index-url) so gpuenv can fetch it");
		}
		if (ix_client_opts(ix)->offline) {
			gpuenv_fail(ctx, GPUENV_ENOTFOUND, j->url, 0, 0, "%s is not in the cache, and "
				"--offline forbids downloading it", j->name);
			return gpuenv_hint(ctx, "run once without --offline to fetch it");
		}
		*remote = true;
		if (user.len) {
			j->cred.prefix = (char *)j->url;
			j->cred.user = (char *)user.ptr;
			j->cred.pass = (char *)(pass.ptr ? pass.ptr : "");
		}
	}
	if (d->fd >= 0) {
		j->fd = d->fd;
	} else if (!d->path) {
		return gpuenv_fail(ctx, GPUENV_EUSAGE, j->url, 0, 0, "%s: no destination", j->name);
	} else if ((j->fd = open(d->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		return gpuenv_fail(ctx, -errno, d->path, 0, 0, "cannot create the download of %s: %s",
			j->name, strerror(errno));
	} else {
		j->own_fd = true;
	}
	if (*remote) {
		ix_req_t *r = &j->job.req;
		ix_req_reset(r, ctx);
		r->url = j->url;
		r->max = 64 << 10; /* the body of an error answer (dropped) */
		r->slow_ok = true;
		r->expect = d->size;
		r->sink = sink;
		r->sink_arg = j;
		r->cred = user.len ? &j->cred : NULL;
		j->job.answer = answer;
		j->job.want = true;
	}
	return 0;
}

int gpuenv_index_download(gpuenv_index_t *ix, gpuenv_ctx_t *ctx, gpuenv_download_t *dl,
	size_t n, const gpuenv_download_opts_t *opts)
{
	gpuenv_arena_t arena;
	dl_run_t run = { .opts = opts, .dl = dl, .n = n };
	djob_t *jobs = gpuenv_calloc(ctx, n ? n : 1, sizeof(*jobs));
	ix_job_t **jv = gpuenv_calloc(ctx, n ? n : 1, sizeof(*jv));
	size_t nremote = 0;
	int first = 0;

	gpuenv_arena_init(&arena, ctx, 0);
	if (!jobs || !jv) {
		gpuenv_free(ctx, jobs);
		gpuenv_free(ctx, jv);
		return gpuenv_oom(ctx, "for downloads");
	}
	for (size_t i = 0; i < n; i++) {
		dl[i].bytes = 0;
		dl[i].got_sha256[0] = '\0';
		dl[i].err = 0;
		if (dl[i].size > 0)
			run.total += (uint64_t)dl[i].size;
	}
	for (size_t i = 0; i < n; i++) {
		djob_t *j = &jobs[i];
		bool remote;
		int r;
		j->d = &dl[i];
		j->run = &run;
		j->fd = -1;
		uint64_t t0 = gpuenv_trace_begin(ctx);
		if ((r = prepare(j, ix, ctx, &arena, &remote))) {
			ix_job_fail(&j->job, ctx, r);
			run.done++;
			continue;
		}
		if (ctx->trace) {
			j->traced = ctx;
			if (!ix_dist_name(j->name, j->pkg, sizeof(j->pkg)))
				snprintf(j->pkg, sizeof(j->pkg), "%s", j->name);
		}
		if (remote) {
			ix_trace_job(ctx, &j->job, "download", j->pkg, NULL, t0);
			jv[nremote++] = &j->job;
			continue;
		}
		if ((r = copy_local(j, ctx, j->local)))
			ix_job_fail(&j->job, ctx, r);
		else
			close_done(j, opts, i);
		if (ctx->trace)
			gpuenv_trace_complete_lane(ctx, IX_TRACE_LANES, "index", "download", j->pkg,
				gpuenv_arena_printf(&arena, "file: %s", j->local).ptr, t0, gpuenv_trace_now() - t0);
		run.done++;
		report(&run, true);
	}
	if (nremote) {
		ix_http_t *h = ix_client_http(ix);
		void (*saved_progress)(void *, size_t, size_t, uint64_t) = h->progress;
		unsigned saved_parallel = h->max_parallel;
		gpuenv_error_t saved_err = ctx->err;
		/* the index's page progress is not this; the downloads report bytes */
		h->progress = NULL;
		if (opts && opts->max_parallel)
			h->max_parallel = opts->max_parallel;
		ix_http_run(h, ctx, jv, nremote);
		h->progress = saved_progress;
		h->max_parallel = saved_parallel;
		ctx->err = saved_err;
		for (size_t k = 0; k < nremote; k++)
			h->stats->bytes += ((djob_t *)jv[k])->bytes;
	}
	for (size_t i = 0; i < n; i++) {
		djob_t *j = &jobs[i];
		if (j->hashing)
			gpuenv_sha256_drop(&j->h);
		if (j->job.err) {
			dl[i].err = j->job.err;
			dl[i].error = j->job.error;
			if (!first) {
				first = j->job.err;
				ctx->err = j->job.error;
			}
		}
		if (j->own_fd && j->fd >= 0)
			close(j->fd);
		if (j->own_fd && j->job.err)
			unlink(dl[i].path);
		if (j->job.req.body.ctx)
			ix_req_free(&j->job.req);
	}
	gpuenv_free(ctx, jobs);
	gpuenv_free(ctx, jv);
	gpuenv_arena_free(&arena);
	return first;
}
