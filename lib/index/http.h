/* The index client's transfer engine (http.c): jobs of one or more HTTP
 * requests run in parallel on one libcurl multi handle, with retries. */
#ifndef GPUENV_INDEX_HTTP_H
#define GPUENV_INDEX_HTTP_H

#include "curl_dl.h"

#include "gpuenv/index.h"

typedef struct ix_cred {
	char *prefix; /* a source URL (no userinfo): the longest match wins */
	char host[256];
	char *user, *pass;
} ix_cred_t;

typedef struct ix_http {
	CURLM *multi;
	CURL **pool; /* finished easy handles, reused (their DNS and TLS state) */
	size_t npool, cappool;
	unsigned max_parallel, timeout_ms, retries, retry_base_ms, retry_max_ms;
	const char *netrc; /* $NETRC, or NULL: curl's default ~/.netrc */
	const ix_cred_t *creds;
	size_t ncreds;
	gpuenv_index_stats_t *stats;
	void (*progress)(void *arg, size_t done, size_t total, uint64_t bytes);
	void *progress_arg;
	char user_agent[64];
} ix_http_t;

/* A download slower than this (bytes/s, averaged over the timeout) gives
 * up; one of known size also has until the timeout plus its size at
 * IX_DEADLINE_RATE to finish (issue 22 item 2: a server trickling 2 bytes/s
 * kept a download going for ever). */
#define IX_MIN_RATE 1024L
#define IX_DEADLINE_RATE 65536.0

/* One request and its answer. */
typedef struct ix_req ix_req_t;
struct ix_req {
	/* asked */
	const char *url; /* without credentials */
	char range[64];	 /* "" or "bytes=..." */
	bool page;	 /* a simple page: Accept JSON then HTML, compression */
	const char *if_none_match, *if_modified_since;
	size_t max;	 /* body cap */
	size_t max_full; /* body cap when a range is answered with the whole file */
	/* a big download: no fixed total timeout but a minimum rate
	 * (IX_MIN_RATE over the timeout) and, when expect (its size, -1
	 * unknown) is known, a deadline scaled to it (IX_DEADLINE_RATE) */
	bool slow_ok;
	int64_t expect;
	/* downloads (download.c): a 200 body goes to sink instead of body
	 * (false stops the transfer; the sink keeps its own story), and
	 * cred, when set, is this request's credentials (a URL's userinfo)
	 * before the sources' */
	bool (*sink)(ix_req_t *r, const char *p, size_t n, void *arg);
	void *sink_arg;
	const ix_cred_t *cred;
	/* the registry client (registry.c): an Accept header, and an
	 * Authorization header value ("Bearer ..."; it replaces libcurl's own
	 * and the netrc lookup, and is never logged) */
	const char *accept, *authorization;
	/* answered */
	long status;
	gpuenv_buf_t body;
	char content_type[128], etag[256], last_modified[64], content_range[128];
	char www_authenticate[2048]; /* the first challenge line naming Bearer, else the first */
	char content_digest[128];    /* Docker-Content-Digest */
	char *final_url; /* after redirects, without userinfo (malloc'd); NULL: url */
	/* freshness (RFC 9111 section 4.2; ix_req_freshness) */
	int64_t max_age; /* Cache-Control: max-age, the first one; -1: none */
	int64_t age;	 /* Age; -1: none */
	int64_t date;	 /* Date, unix seconds; -1: none or unreadable */
	int64_t expires; /* Expires, unix seconds; -1: none; 0: unreadable (already expired) */
	bool no_store, no_cache, must_revalidate;
	int64_t sent_at; /* unix seconds when the last attempt started (request_time) */
	int err; /* <0: failed after the retries; error holds the story */
	gpuenv_error_t error;
	/* engine */
	unsigned attempts;
	int64_t not_before; /* monotonic ms */
	long retry_after_s;
	bool toobig;
	char errbuf[CURL_ERROR_SIZE];
	struct curl_slist *headers;
};

typedef struct ix_job ix_job_t;
struct ix_job {
	ix_req_t req;
	/* called when req is answered or has failed for good: set want (and
	 * req's fields) for another request, or done; a negative return fails
	 * the job (recorded in ctx, copied to err). */
	int (*answer)(ix_job_t *job, gpuenv_ctx_t *ctx);
	void *user;
	bool want, done;
	int err; /* the job's failure */
	gpuenv_error_t error;
	/* engine */
	CURL *easy;
	bool active;
	/* --profile: with trace_phase set, the job is one span of package
	 * trace_pkg from its first request to its end (http.c) */
	const char *trace_phase, *trace_pkg;
	uint64_t trace_t0;
};

/* --profile: job is one span: from its first request when it goes to the
 * network (want set), else (the cache or a file answered it) from t0 to
 * now with detail what ("cache: URL").  No-op when tracing is off. */
void ix_trace_job(gpuenv_ctx_t *ctx, ix_job_t *job, const char *phase, const char *pkg,
	const char *what, uint64_t t0);

int ix_http_init(ix_http_t *h, gpuenv_ctx_t *ctx);
void ix_http_free(ix_http_t *h);
/* The answer's freshness lifetime and its age when received (RFC 9111
 * 4.2.1 and 4.2.3, a private cache): *lifetime is max-age, else Expires
 * minus Date, 0 with no-cache, -1 when the answer gives none; *age is the
 * corrected initial age (Age plus the request's delay, or now minus Date
 * when that is more), never negative. */
void ix_req_freshness(const ix_req_t *r, int64_t now, int64_t *lifetime, int64_t *age);

/* Run the jobs until every one is done; 0, or the error of the first
 * failed job (in the order given) in ctx->err. */
int ix_http_run(ix_http_t *h, gpuenv_ctx_t *ctx, ix_job_t **jobs, size_t n);
/* Reset a job's request for a new one (keeps the body buffer's memory). */
void ix_req_reset(ix_req_t *r, gpuenv_ctx_t *ctx);
void ix_req_free(ix_req_t *r);
/* Record err / the story of ctx->err as the job's failure; returns err. */
int ix_job_fail(ix_job_t *job, gpuenv_ctx_t *ctx, int err);

/* The client's engine and options (client.c), for download.c. */
ix_http_t *ix_client_http(gpuenv_index_t *ix);
const gpuenv_index_opts_t *ix_client_opts(const gpuenv_index_t *ix);

#endif
