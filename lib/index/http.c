/* The transfer engine: jobs run on one libcurl multi handle, up to
 * max_parallel requests at once, HTTP/2 multiplexed where the server offers
 * it (CURLPIPE_MULTIPLEX) and connections kept in the multi handle's cache
 * across batches, so a lock reuses one connection per host.
 *
 * Transient failures (HTTP 429, 500, 502, 503, 504; timeouts; a body cut
 * short of its Content-Length; a dropped connection) are retried with
 * exponential backoff (retry_base_ms * 2^attempt, or the server's
 * Retry-After, capped at retry_max_ms), then reported with the URL and
 * what happened.  Credentials (a source's userinfo or environment, else
 * ~/.netrc or $NETRC through libcurl) go to the request only, never into a
 * message: every URL here has had its userinfo removed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/trace.h"

#include "http.h"
#include "index_int.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ix_http_init(ix_http_t *h, gpuenv_ctx_t *ctx)
{
	static bool global_done;

	/* curl_global_init is not thread-safe before 7.84; gpuenv calls it
	 * once, from the thread that opens the first index */
	if (!global_done) {
		if (ix_curl_load(ctx) != 0)
			return ctx->err.code;
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return gpuenv_fail(ctx, -EIO, NULL, 0, 0, "libcurl cannot start");
		global_done = true;
	}
	h->multi = curl_multi_init();
	if (!h->multi)
		return gpuenv_oom(ctx, "for libcurl");
	curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)h->max_parallel);
	curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, (long)h->max_parallel * 2);
	snprintf(h->user_agent, sizeof(h->user_agent), "gpuenv/%s", GPUENV_VERSION);
	return 0;
}

void ix_http_free(ix_http_t *h)
{
	for (size_t i = 0; i < h->npool; i++)
		curl_easy_cleanup(h->pool[i]);
	free(h->pool);
	if (h->multi)
		curl_multi_cleanup(h->multi);
	memset(h, 0, sizeof(*h));
}

/* A download of known size: the timeout plus its size at IX_DEADLINE_RATE. */
static double ix_deadline_ms(const ix_http_t *h, const ix_req_t *r)
{
	return (double)h->timeout_ms + (double)r->expect * 1000.0 / IX_DEADLINE_RATE;
}

void ix_req_reset(ix_req_t *r, gpuenv_ctx_t *ctx)
{
	gpuenv_buf_t keep = r->body;

	curl_slist_free_all(r->headers);
	free(r->final_url);
	memset(r, 0, sizeof(*r));
	r->body = keep;
	if (!r->body.ctx)
		gpuenv_buf_init(&r->body, ctx, 0);
	gpuenv_buf_reset(&r->body);
	r->max_age = r->age = r->date = r->expires = -1;
	r->expect = -1;
}

void ix_req_free(ix_req_t *r)
{
	curl_slist_free_all(r->headers);
	r->headers = NULL;
	free(r->final_url);
	r->final_url = NULL;
	gpuenv_buf_free(&r->body);
}

int ix_job_fail(ix_job_t *job, gpuenv_ctx_t *ctx, int err)
{
	if (!job->err) {
		job->err = err;
		job->error = ctx->err;
	}
	job->done = true;
	job->want = false;
	return err;
}

/* ---- callbacks ----------------------------------------------------------- */

static void set_str(char *out, size_t outsz, const char *p, size_t n)
{
	while (n && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' '))
		n--;
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

static bool hdr_is(const char *p, size_t n, const char *name, const char **val, size_t *vlen)
{
	size_t nl = strlen(name);

	if (n <= nl || p[nl] != ':' || strncasecmp(p, name, nl))
		return false;
	*val = p + nl + 1;
	*vlen = n - nl - 1;
	return true;
}

/* delta-seconds (RFC 9111 1.2.2): digits only, a value past 2^31 taken
 * as 2^31; -1 when not a number */
static int64_t delta_seconds(const char *p, size_t n)
{
	int64_t v = 0;

	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!gpuenv_is_digit(p[i]))
			return -1;
		if (v < ((int64_t)1 << 31))
			v = v * 10 + (p[i] - '0');
	}
	return v < ((int64_t)1 << 31) ? v : (int64_t)1 << 31;
}

/* One Cache-Control line (RFC 9111 5.2.2): directives separated by
 * commas, names in any case, a value a token or a quoted string.  The
 * first max-age counts (4.2.1); one that is not a number makes the answer
 * stale.  no-cache with field names is taken as plain no-cache (5.2.2.4
 * allows it).  s-maxage, public, private and the rest change nothing for
 * a private cache that never serves stale answers. */
static void cache_control(ix_req_t *r, const char *v, size_t n)
{
	size_t i = 0;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t name = i;
		while (i < n && v[i] != '=' && v[i] != ',' && v[i] != ' ' && v[i] != '\t' && v[i] != '\r' &&
			v[i] != '\n')
			i++;
		size_t nl = i - name, val = i, vl = 0;
		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		if (i < n && v[i] == '=') {
			i++;
			while (i < n && (v[i] == ' ' || v[i] == '\t'))
				i++;
			if (i < n && v[i] == '"') {
				val = ++i;
				while (i < n && v[i] != '"')
					i += v[i] == '\\' && i + 1 < n ? 2 : 1;
				vl = (i < n ? i : n) - val;
				if (i < n)
					i++;
			} else {
				val = i;
				while (i < n && v[i] != ',' && v[i] != ' ' && v[i] != '\t' && v[i] != '\r' &&
					v[i] != '\n')
					i++;
				vl = i - val;
			}
		}
		while (i < n && v[i] != ',')
			i++;
		const char *d = v + name;
		if (nl == 7 && !strncasecmp(d, "max-age", 7)) {
			if (r->max_age < 0) {
				int64_t a = delta_seconds(v + val, vl);
				r->max_age = a < 0 ? 0 : a;
			}
		} else if (nl == 8 && !strncasecmp(d, "no-store", 8)) {
			r->no_store = true;
		} else if (nl == 8 && !strncasecmp(d, "no-cache", 8)) {
			r->no_cache = true;
		} else if (nl == 15 && !strncasecmp(d, "must-revalidate", 15)) {
			r->must_revalidate = true;
		}
	}
}

/* An HTTP date (RFC 9110 5.6.7, the three forms curl_getdate reads) in
 * unix seconds; bad (-1 or 0 as the caller says) when unreadable. */
static int64_t http_date(const char *v, size_t n, int64_t bad)
{
	char tmp[128];
	time_t t;

	set_str(tmp, sizeof(tmp), v, n);
	t = curl_getdate(tmp, NULL);
	return t == -1 ? bad : (int64_t)t;
}

void ix_req_freshness(const ix_req_t *r, int64_t now, int64_t *lifetime, int64_t *age)
{
	int64_t apparent = 0, corrected, delay;

	if (r->no_cache)
		*lifetime = 0;
	else if (r->max_age >= 0)
		*lifetime = r->max_age;
	else if (r->expires >= 0)
		*lifetime = r->date >= 0 && r->expires > r->date ? r->expires - r->date : 0;
	else
		*lifetime = -1;
	if (r->date >= 0 && now > r->date)
		apparent = now - r->date;
	delay = r->sent_at > 0 && now > r->sent_at ? now - r->sent_at : 0;
	corrected = (r->age >= 0 ? r->age : 0) + delay;
	*age = apparent > corrected ? apparent : corrected;
}

/* a challenge line with a Bearer scheme (RFC 7235: case-insensitive) */
static bool names_bearer(const char *s)
{
	for (; *s; s++)
		if (!strncasecmp(s, "bearer", 6))
			return true;
	return false;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	ix_req_t *r = ud;
	size_t len = size * n, vl;
	const char *v;
	char tmp[64];

	if (len > 5 && !memcmp(p, "HTTP/", 5)) {
		/* a new answer (after a redirect or a 100): forget the last one's */
		const char *sp = memchr(p, ' ', len);
		r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		r->content_type[0] = r->etag[0] = r->last_modified[0] = r->content_range[0] = '\0';
		r->www_authenticate[0] = r->content_digest[0] = '\0';
		r->max_age = r->age = r->date = r->expires = -1;
		r->no_store = r->no_cache = r->must_revalidate = false;
		r->retry_after_s = -1;
	} else if (hdr_is(p, len, "content-type", &v, &vl)) {
		set_str(r->content_type, sizeof(r->content_type), v, vl);
	} else if (hdr_is(p, len, "etag", &v, &vl)) {
		set_str(r->etag, sizeof(r->etag), v, vl);
	} else if (hdr_is(p, len, "last-modified", &v, &vl)) {
		set_str(r->last_modified, sizeof(r->last_modified), v, vl);
	} else if (hdr_is(p, len, "content-range", &v, &vl)) {
		set_str(r->content_range, sizeof(r->content_range), v, vl);
	} else if (hdr_is(p, len, "www-authenticate", &v, &vl)) {
		/* several lines: keep a Bearer one over the others */
		char line[sizeof(r->www_authenticate)];
		set_str(line, sizeof(line), v, vl);
		if (!r->www_authenticate[0] ||
			(!names_bearer(r->www_authenticate) && names_bearer(line)))
			memcpy(r->www_authenticate, line, sizeof(line));
	} else if (hdr_is(p, len, "docker-content-digest", &v, &vl)) {
		set_str(r->content_digest, sizeof(r->content_digest), v, vl);
	} else if (hdr_is(p, len, "cache-control", &v, &vl)) {
		cache_control(r, v, vl);
	} else if (hdr_is(p, len, "age", &v, &vl)) {
		set_str(tmp, sizeof(tmp), v, vl);
		if (r->age < 0)
			r->age = delta_seconds(tmp, strlen(tmp));
	} else if (hdr_is(p, len, "date", &v, &vl)) {
		if (r->date < 0)
			r->date = http_date(v, vl, -1);
	} else if (hdr_is(p, len, "expires", &v, &vl)) {
		if (r->expires < 0)
			r->expires = http_date(v, vl, 0);
	} else if (hdr_is(p, len, "retry-after", &v, &vl)) {
		char *end;
		set_str(tmp, sizeof(tmp), v, vl);
		long s = strtol(tmp, &end, 10);
		if (end != tmp && *end == '\0' && s >= 0) {
			r->retry_after_s = s;
		} else {
			time_t t = curl_getdate(tmp, NULL);
			if (t != -1)
				r->retry_after_s = t > time(NULL) ? (long)(t - time(NULL)) : 0;
		}
	}
	return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	ix_job_t *job = ud;
	ix_req_t *r = &job->req;
	size_t len = size * n;

	if (r->sink) /* a download: the bytes of a 200 go to disk, others are dropped */
		return r->status != 200 || r->sink(r, p, len, r->sink_arg) ? len : 0;
	/* a server that ignores Range sends the whole file: take it, under
	 * the whole-file cap, and let the job notice the 200 */
	if (r->range[0] && r->status == 200 && r->max_full > r->max)
		r->max = r->max_full;
	if (r->body.len + len > r->max) {
		r->toobig = true;
		return 0;
	}
	r->body.max = r->max + 1;
	if (gpuenv_buf_append(&r->body, p, len)) {
		r->toobig = true;
		return 0;
	}
	return len;
}

/* ---- starting a request ------------------------------------------------- */

static const ix_cred_t *cred_for(const ix_http_t *h, const char *url)
{
	const ix_cred_t *best = NULL;
	size_t best_len = 0;
	char host[256];

	if (!h->ncreds || !ix_url_host(url, host, sizeof(host)))
		return NULL;
	for (size_t i = 0; i < h->ncreds; i++) {
		const ix_cred_t *c = &h->creds[i];
		size_t pl = strlen(c->prefix);
		if (!strncmp(url, c->prefix, pl) && pl > best_len) {
			best = c;
			best_len = pl;
		}
	}
	if (best)
		return best;
	for (size_t i = 0; i < h->ncreds; i++)
		if (!strcmp(h->creds[i].host, host))
			return &h->creds[i];
	return NULL;
}

static int start(ix_http_t *h, gpuenv_ctx_t *ctx, ix_job_t *job)
{
	ix_req_t *r = &job->req;
	CURL *e;
	char line[512];
	const ix_cred_t *c;

	if (h->npool) {
		e = h->pool[--h->npool];
		curl_easy_reset(e);
	} else if (!(e = curl_easy_init())) {
		return gpuenv_oom(ctx, "for libcurl");
	}
	job->easy = e;
	curl_slist_free_all(r->headers);
	r->headers = NULL;
	gpuenv_buf_reset(&r->body);
	r->status = 0;
	r->toobig = false;
	r->errbuf[0] = '\0';
	r->retry_after_s = -1;
	if (r->page)
		r->headers = curl_slist_append(r->headers,
			"Accept: application/vnd.pypi.simple.v1+json, "
			"application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1");
	if (r->accept && r->accept[0]) {
		snprintf(line, sizeof(line), "Accept: %s", r->accept);
		r->headers = curl_slist_append(r->headers, line);
	}
	if (r->authorization && r->authorization[0]) {
		/* a token may be kilobytes long: its own line */
		size_t al = strlen(r->authorization) + sizeof("Authorization: ");
		char *auth = malloc(al);
		if (!auth) {
			curl_easy_cleanup(e);
			job->easy = NULL;
			return gpuenv_oom(ctx, "for a request");
		}
		snprintf(auth, al, "Authorization: %s", r->authorization);
		r->headers = curl_slist_append(r->headers, auth);
		memset(auth, 0, al);
		free(auth);
	}
	if (r->if_none_match && r->if_none_match[0]) {
		snprintf(line, sizeof(line), "If-None-Match: %s", r->if_none_match);
		r->headers = curl_slist_append(r->headers, line);
	}
	if (r->if_modified_since && r->if_modified_since[0]) {
		snprintf(line, sizeof(line), "If-Modified-Since: %s", r->if_modified_since);
		r->headers = curl_slist_append(r->headers, line);
	}
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, job);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, h->user_agent);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, job);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)h->timeout_ms);
	if (r->slow_ok) {
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, IX_MIN_RATE);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)(h->timeout_ms + 999) / 1000);
		if (r->expect >= 0)
			curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)ix_deadline_ms(h, r));
	} else {
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)h->timeout_ms);
	}
	if (r->headers)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
	if (r->range[0]) {
		/* byte offsets of the file itself: no content coding */
		curl_easy_setopt(e, CURLOPT_RANGE, r->range + 6);
	} else {
		curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	}
	if (r->authorization && r->authorization[0]) {
		/* the header carries the credentials: no netrc, no other source's */
	} else if ((c = r->cred) || (c = cred_for(h, r->url))) {
		curl_easy_setopt(e, CURLOPT_USERNAME, c->user);
		curl_easy_setopt(e, CURLOPT_PASSWORD, c->pass ? c->pass : "");
	} else {
		curl_easy_setopt(e, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
		if (h->netrc)
			curl_easy_setopt(e, CURLOPT_NETRC_FILE, h->netrc);
	}
	if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
		curl_easy_cleanup(e);
		job->easy = NULL;
		return gpuenv_oom(ctx, "for libcurl");
	}
	r->attempts++;
	r->sent_at = (int64_t)time(NULL);
	if (r->if_none_match || r->if_modified_since)
		h->stats->revalidated++;
	h->stats->requests++;
	job->active = true;
	job->want = false;
	if (job->trace_phase && !job->trace_t0 && ctx->trace)
		job->trace_t0 = gpuenv_trace_now();
	return 0;
}

void ix_trace_job(gpuenv_ctx_t *ctx, ix_job_t *job, const char *phase, const char *pkg,
	const char *what, uint64_t t0)
{
	if (!ctx->trace)
		return;
	if (job->want) {
		job->trace_phase = phase;
		job->trace_pkg = pkg;
		return;
	}
	gpuenv_trace_complete_lane(ctx, IX_TRACE_LANES, "index", phase, pkg, what, t0, gpuenv_trace_now() - t0);
}

/* A job that is done: its span (ix_trace_job), once. */
static void job_traced(gpuenv_ctx_t *ctx, ix_job_t *job)
{
	if (!job->trace_phase || !ctx->trace)
		return;
	uint64_t now = gpuenv_trace_now(), t0 = job->trace_t0 ? job->trace_t0 : now;
	gpuenv_trace_complete_lane(ctx, IX_TRACE_LANES, "index", job->trace_phase, job->trace_pkg,
		job->req.url, t0, now - t0);
	job->trace_phase = NULL;
}

static void release(ix_http_t *h, ix_job_t *job)
{
	curl_multi_remove_handle(h->multi, job->easy);
	if (h->npool == h->cappool) {
		size_t cap = h->cappool ? h->cappool * 2 : 16;
		CURL **p = realloc(h->pool, cap * sizeof(*p));
		if (!p) {
			curl_easy_cleanup(job->easy);
			job->easy = NULL;
			job->active = false;
			return;
		}
		h->pool = p;
		h->cappool = cap;
	}
	h->pool[h->npool++] = job->easy;
	job->easy = NULL;
	job->active = false;
}

/* ---- a finished request --------------------------------------------------- */

static bool transient_curl(CURLcode c)
{
	switch (c) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_COULDNT_CONNECT:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_BAD_CONTENT_ENCODING:
		return true;
	default:
		return false;
	}
}

static const char *http_reason(long s)
{
	switch (s) {
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "";
	}
}

/* The request failed for good: the story into ctx->err. */
static int give_up(ix_http_t *h, gpuenv_ctx_t *ctx, ix_req_t *r, CURLcode c)
{
	char tries[64] = "";

	if (r->attempts > 1)
		snprintf(tries, sizeof(tries), " (after %u attempts)", r->attempts);
	if (c == CURLE_OK) {
		gpuenv_fail(ctx, -EIO, r->url, 0, 0, "HTTP %ld %s%s", r->status, http_reason(r->status),
			tries);
		if (r->status == 401 || r->status == 403)
			return gpuenv_hint(ctx, "give credentials in ~/.netrc ($NETRC), in the source URL "
						"or in GPUENV_INDEX_<SOURCE>_USERNAME / _PASSWORD");
		if (r->status == 429 || r->status >= 500)
			return gpuenv_hint(ctx, "the server is failing or limiting requests: try again later");
		return ctx->err.code;
	}
	if (c == CURLE_WRITE_ERROR && r->toobig)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, r->url, 0, 0,
			"the answer is larger than the limit of %zu bytes", r->max);
	if (c == CURLE_OPERATION_TIMEDOUT && r->slow_ok) {
		/* say which bound applied: libcurl's low-speed check words its
		 * message "Operation too slow" */
		if (strstr(r->errbuf, "too slow") || r->expect < 0) {
			gpuenv_fail(ctx, -ETIMEDOUT, r->url, 0, 0, "the download ran below the minimum rate of %ld "
				"bytes/s for %u s%s", IX_MIN_RATE, (h->timeout_ms + 999) / 1000, tries);
			return gpuenv_hint(ctx, "the server sends too slowly or stalls; check the network, or raise "
						"--timeout (the time the rate is measured over)");
		}
		gpuenv_fail(ctx, -ETIMEDOUT, r->url, 0, 0, "the download of %lld bytes did not finish within its "
			"deadline of %.1f s (--timeout %u s plus the size at %.0f KiB/s)%s", (long long)r->expect,
			ix_deadline_ms(h, r) / 1000.0, (h->timeout_ms + 999) / 1000, IX_DEADLINE_RATE / 1024, tries);
		return gpuenv_hint(ctx, "the server is too slow for this file; check the network, or raise --timeout");
	}
	if (c == CURLE_OPERATION_TIMEDOUT) {
		gpuenv_fail(ctx, -ETIMEDOUT, r->url, 0, 0, "timed out after %u ms%s", h->timeout_ms, tries);
		return gpuenv_hint(ctx, "the server did not answer in time; check the network or "
					"raise the timeout");
	}
	if (c == CURLE_PARTIAL_FILE)
		return gpuenv_fail(ctx, -EIO, r->url, 0, 0, "the body was cut short of its "
			"Content-Length (%s)%s", r->errbuf[0] ? r->errbuf : "truncated", tries);
	return gpuenv_fail(ctx, -EIO, r->url, 0, 0, "%s%s%s%s", curl_easy_strerror(c),
		r->errbuf[0] ? ": " : "", r->errbuf, tries);
}

static void finished(ix_http_t *h, gpuenv_ctx_t *ctx, ix_job_t *job, CURLcode c)
{
	ix_req_t *r = &job->req;
	bool retry;
	int64_t delay;

	curl_easy_getinfo(job->easy, CURLINFO_RESPONSE_CODE, &r->status);
	/* links of a page resolve against where it was served from */
	char *eff = NULL;
	free(r->final_url);
	r->final_url = NULL;
	if (curl_easy_getinfo(job->easy, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff &&
		strcmp(eff, r->url)) {
		gpuenv_arena_t a;
		gpuenv_arena_init(&a, ctx, 0);
		gpuenv_str_t s = ix_url_strip(&a, gpuenv_str(eff), NULL, NULL);
		if (s.ptr)
			r->final_url = strdup(s.ptr);
		gpuenv_arena_free(&a);
	}
	release(h, job);
	retry = c == CURLE_OK ? (r->status == 429 || r->status == 500 || r->status == 502 ||
				       r->status == 503 || r->status == 504)
			      : transient_curl(c);
	if (retry && r->attempts <= h->retries) {
		delay = (int64_t)h->retry_base_ms << (r->attempts - 1 < 20 ? r->attempts - 1 : 20);
		if (r->retry_after_s >= 0)
			delay = (int64_t)r->retry_after_s * 1000;
		if (delay > h->retry_max_ms)
			delay = h->retry_max_ms;
		r->not_before = now_ms() + delay;
		job->want = true;
		gpuenv_log(ctx, GPUENV_LOG_DEBUG, "%s: %s, retrying in %lld ms", r->url,
			c == CURLE_OK ? http_reason(r->status) : curl_easy_strerror(c), (long long)delay);
		return;
	}
	if (retry || c != CURLE_OK || (r->status >= 400 && r->status != 404 && r->status != 410 &&
					     r->status != 416)) {
		r->err = give_up(h, ctx, r, c);
		r->error = ctx->err;
	}
	h->stats->bytes += r->body.len;
	int ar = job->answer(job, ctx);
	if (ar < 0)
		ix_job_fail(job, ctx, ar);
}

int ix_http_run(ix_http_t *h, gpuenv_ctx_t *ctx, ix_job_t **jobs, size_t n)
{
	size_t active = 0, ndone = 0;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		ndone += jobs[i]->done;
	for (;;) {
		int64_t now = now_ms(), wait = 1000;
		bool pending = false;
		for (size_t i = 0; i < n && active < h->max_parallel; i++) {
			ix_job_t *j = jobs[i];
			if (!j->want || j->active || j->done)
				continue;
			if (j->req.not_before > now) {
				pending = true;
				if (j->req.not_before - now < wait)
					wait = j->req.not_before - now;
				continue;
			}
			if ((r = start(h, ctx, j)) < 0) {
				ix_job_fail(j, ctx, r);
				job_traced(ctx, j);
				continue;
			}
			active++;
		}
		for (size_t i = 0; i < n && !pending; i++)
			if (jobs[i]->want && !jobs[i]->active && !jobs[i]->done)
				pending = true;
		if (!active && !pending)
			break;
		int running = 0, left;
		curl_multi_perform(h->multi, &running);
		CURLMsg *m;
		bool any = false;
		while ((m = curl_multi_info_read(h->multi, &left))) {
			ix_job_t *j = NULL;
			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&j);
			active--;
			any = true;
			finished(h, ctx, j, m->data.result);
			if (j->done) {
				job_traced(ctx, j);
				ndone++;
				if (h->progress)
					h->progress(h->progress_arg, ndone, n, h->stats->bytes);
			}
		}
		if (!any)
			curl_multi_poll(h->multi, NULL, 0, (int)(wait > 0 ? wait : 1), NULL);
	}
	for (size_t i = 0; i < n; i++)
		if (jobs[i]->err) {
			ctx->err = jobs[i]->error;
			return jobs[i]->err;
		}
	return 0;
}
