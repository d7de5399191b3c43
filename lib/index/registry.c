/* The OCI distribution API client (include/gpuenv/registry.h): one job per
 * query on the index client's transfer engine (http.c), all in parallel.
 *
 * A job's steps (OCI distribution spec, "Pulling manifests"; Docker's
 * "Token Authentication Specification"):
 *   MANIFEST  GET <base>/v2/<repository>/manifests/<reference>, Accept the
 *             OCI index and manifest and Docker's manifest list and v2
 *             manifest.  200: the digest is the SHA-256 of the bytes (a
 *             Docker-Content-Digest header must agree); an index gives the
 *             platforms, a manifest asks for its config (CONFIG).  401: the
 *             challenge says how to authenticate (TOKEN, or Basic again).
 *   TOKEN     GET <realm>?service=...&scope=..., anonymous or with the Basic
 *             credentials config.json has for the registry; the token goes
 *             back to MANIFEST as "Authorization: Bearer".
 *   CONFIG    GET <base>/v2/<repository>/blobs/<config digest>: the image's
 *             os / architecture / variant, its bytes checked against the
 *             digest.
 * Credentials are sent only over https or to a loopback host, go to the
 * request alone, and appear in no message. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/registry.h"

#include "http.h"
#include "index_int.h"

#define ACCEPT_MANIFESTS                                                                 \
	GPUENV_MT_OCI_INDEX ", " GPUENV_MT_DOCKER_LIST ", " GPUENV_MT_OCI_MANIFEST ", " \
		GPUENV_MT_DOCKER_MANIFEST

enum { STEP_MANIFEST, STEP_TOKEN, STEP_CONFIG };

typedef struct reg {
	gpuenv_arena_t *arena;
	const gpuenv_registry_opts_t *o;
	const char *config_path; /* <dir>/config.json */
} reg_t;

typedef struct rq {
	ix_job_t job; /* first: the engine hands the job back */
	reg_t *reg;
	gpuenv_registry_query_t *q;
	int step;
	const char *base, *manifest_url, *what; /* what: "registry/repository:ref" */
	char *authorization;			  /* "Bearer ..." (malloc'd, wiped) */
	ix_cred_t cred;				  /* Basic credentials, when sent */
	bool creds_loaded, tried_token, tried_basic, sent_creds;
	bool withheld; /* credentials there, not sent: plain http to another host */
	gpuenv_docker_creds_t creds;
	const char *manifest_digest, *manifest_mt;
	const char *config_digest, *config_url;
	const char *token_url; /* for messages */
} rq_t;

/* ---- small helpers ------------------------------------------------------------ */

static bool is_docker_hub(const char *registry)
{
	return !strcmp(registry, "docker.io") || !strcmp(registry, "registry-1.docker.io") ||
		!strcmp(registry, "index.docker.io");
}

const char *gpuenv_registry_base_url(gpuenv_arena_t *arena, const gpuenv_registry_opts_t *opts,
	const char *registry)
{
	for (size_t i = 0; opts && i < opts->nmirrors; i++) {
		const char *h = opts->mirrors[i].host;
		if (!strcasecmp(h, registry) || (is_docker_hub(h) && is_docker_hub(registry))) {
			gpuenv_str_t u = gpuenv_str(opts->mirrors[i].url);
			while (u.len && u.ptr[u.len - 1] == '/')
				u.len--;
			return gpuenv_arena_strndup(arena, u.ptr, u.len);
		}
	}
	if (is_docker_hub(registry))
		return gpuenv_arena_strndup(arena, "https://registry-1.docker.io", 28);
	return gpuenv_arena_printf(arena, "https://%s", registry).ptr;
}

/* Credentials may go to url: https, or a loopback host (a local mirror). */
static bool safe_for_creds(const char *url)
{
	char host[256];

	if (!strncasecmp(url, "https://", 8))
		return true;
	if (!ix_url_host(url, host, sizeof(host)))
		return false;
	return !strncmp(host, "127.", 4) || !strncmp(host, "[::1]", 5) ||
		!strcmp(host, "localhost") || !strncmp(host, "localhost:", 10);
}

/* repository: the reference grammar's characters; reference: a tag or a digest */
static bool path_ok(const char *s, const char *extra)
{
	if (!s || !s[0] || strlen(s) > 255)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr(extra, *s)))
			return false;
	return true;
}

/* s percent-encoded (RFC 3986 unreserved kept) onto b: 0 or the buffer's error */
static int pct_append(gpuenv_buf_t *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int r = 0;

	for (; *s && !r; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			c == '-' || c == '.' || c == '_' || c == '~')
			r = gpuenv_buf_putc(b, (char)c);
		else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };
			r = gpuenv_buf_append(b, e, 3);
		}
	}
	return r;
}

static void set_auth(rq_t *j, const char *token)
{
	if (j->authorization) {
		memset(j->authorization, 0, strlen(j->authorization));
		free(j->authorization);
		j->authorization = NULL;
	}
	if (token) {
		size_t n = strlen(token) + 8;
		if ((j->authorization = malloc(n)))
			snprintf(j->authorization, n, "Bearer %s", token);
	}
}

/* A new request of the job (the body buffer kept). */
static void ask(rq_t *j, gpuenv_ctx_t *ctx, int step, const char *url, size_t max)
{
	ix_req_t *r = &j->job.req;

	ix_req_reset(r, ctx);
	r->url = url;
	r->max = r->max_full = max;
	j->step = step;
	if (step == STEP_TOKEN) {
		r->accept = "application/json";
		r->cred = j->cred.user ? &j->cred : NULL;
	} else {
		r->accept = step == STEP_MANIFEST ? ACCEPT_MANIFESTS : NULL;
		r->authorization = j->authorization;
		r->cred = !j->authorization && j->tried_basic ? &j->cred : NULL;
	}
	j->job.want = true;
}

static int fail(rq_t *j, gpuenv_ctx_t *ctx, int code, const char *url, const char *hint,
	const char *fmt, ...) GPUENV_PRINTF(6, 7);
static int fail(rq_t *j, gpuenv_ctx_t *ctx, int code, const char *url, const char *hint,
	const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gpuenv_fail(ctx, code, url, 0, 0, "%s: %s", j->what, msg);
	if (hint)
		gpuenv_hint(ctx, "%s", hint);
	return ix_job_fail(&j->job, ctx, code);
}

/* The story of a request that failed in transfer (r->err) */
static int fail_req(rq_t *j, gpuenv_ctx_t *ctx)
{
	ix_req_t *r = &j->job.req;
	char msg[sizeof(r->error.msg) + 300];
	size_t n;

	ctx->err = r->error;
	n = (size_t)snprintf(msg, sizeof(msg), "%s: %s", j->what, r->error.msg);
	if (n >= sizeof(ctx->err.msg))
		n = sizeof(ctx->err.msg) - 1;
	memcpy(ctx->err.msg, msg, n);
	ctx->err.msg[n] = '\0';
	return ix_job_fail(&j->job, ctx, r->err);
}

/* The bytes served have the digest want ("sha256:..."; NULL: any), and
 * the Docker-Content-Digest header, when there, agrees.  *out: the digest. */
static int check_digest(rq_t *j, gpuenv_ctx_t *ctx, const char *want, const char **out)
{
	ix_req_t *r = &j->job.req;
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];

	if (gpuenv_sha256(r->body.data ? r->body.data : "", r->body.len, d))
		return fail(j, ctx, -ENOMEM, r->url, NULL, "out of memory for SHA-256");
	gpuenv_hex(d, sizeof(d), hex);
	*out = gpuenv_arena_printf(j->reg->arena, "sha256:%s", hex).ptr;
	if (!*out)
		return fail(j, ctx, -ENOMEM, r->url, NULL, "out of memory");
	if (r->content_digest[0] && !strncmp(r->content_digest, "sha256:", 7) &&
		strcmp(r->content_digest, *out))
		return fail(j, ctx, GPUENV_EFORMAT, r->url,
			"the registry or a proxy changed the bytes; try again, or without the mirror",
			"the Docker-Content-Digest header says %.80s, the bytes served are %s",
			r->content_digest, *out);
	if (want && strcmp(want, *out))
		return fail(j, ctx, GPUENV_EFORMAT, r->url,
			"the registry or a proxy changed the bytes; try again, or without the mirror",
			"asked for %.80s, the bytes served are %s", want, *out);
	return 0;
}

/* config.json's credentials for the query's registry (once) */
static int load_creds(rq_t *j, gpuenv_ctx_t *ctx)
{
	gpuenv_buf_t b;
	int r;

	if (j->creds_loaded)
		return 0;
	j->creds_loaded = true;
	if (!j->reg->config_path)
		return 0;
	gpuenv_buf_init(&b, ctx, (size_t)1 << 20);
	r = gpuenv_fs_read(ctx, j->reg->config_path, (size_t)1 << 20, &b);
	if (r == -ENOENT || r == -ENOTDIR) {
		gpuenv_error_clear(ctx);
		r = 0;
	} else if (r == 0) {
		r = gpuenv_docker_config_parse(ctx, j->reg->arena, j->reg->config_path,
			gpuenv_str_n(b.data, b.len), j->q->registry, &j->creds);
	}
	if (b.data)
		memset(b.data, 0, b.len);
	gpuenv_buf_free(&b);
	if (r)
		ix_job_fail(&j->job, ctx, r);
	return r;
}

/* A 401 that credentials might cure, and none will. */
static int needs_creds(rq_t *j, gpuenv_ctx_t *ctx, const char *url)
{
	const char *cfg = j->reg->config_path ? j->reg->config_path : "~/.docker/config.json";
	char hint[512];

	if (j->withheld)
		return fail(j, ctx, -EACCES, url, "use an https URL (or a mirror on this machine)",
			"needs credentials, and gpuenv sends those %s has for %s only over https or to "
			"a loopback host, not to %.200s", cfg, j->q->registry, url);
	if (j->sent_creds)
		return fail(j, ctx, -EACCES, url, "log in again: docker login HOST (the token or "
						  "password may have expired)",
			"the registry refused the credentials %s has for %s", cfg, j->q->registry);
	if (j->creds.helper) {
		snprintf(hint, sizeof(hint), "gpuenv does not run credential helpers: put an \"auths\" "
					     "entry for %.60s in %.100s, or point DOCKER_CONFIG at one",
			j->q->registry, cfg);
		return fail(j, ctx, -EACCES, url, hint,
			"needs credentials, and those for %s are kept by the credential helper "
			"docker-credential-%.60s, which gpuenv does not run",
			j->q->registry, j->creds.helper);
	}
	snprintf(hint, sizeof(hint), "docker login %.100s (gpuenv reads %.100s; DOCKER_CONFIG "
				     "names another folder)", j->q->registry, cfg);
	return fail(j, ctx, -EACCES, url, hint,
		"needs credentials: the registry answered 401 Unauthorized and %s has none for %s", cfg,
		j->q->registry);
}

static int on_401(rq_t *j, gpuenv_ctx_t *ctx)
{
	ix_req_t *r = &j->job.req;
	gpuenv_registry_challenge_t ch;
	const char *url = r->url;
	int rc;

	if (j->tried_token || (j->tried_basic && j->cred.user))
		return needs_creds(j, ctx, url);
	if (!r->www_authenticate[0])
		return fail(j, ctx, GPUENV_ESYNTAX, url, "the server is not a registry gpuenv can "
							  "talk to (or a proxy hides the challenge)",
			"HTTP 401 without a WWW-Authenticate challenge");
	if ((rc = gpuenv_registry_challenge_parse(ctx, j->reg->arena,
		     gpuenv_str(r->www_authenticate), &ch))) {
		char msg[sizeof(ctx->err.msg)], hint[sizeof(ctx->err.hint)];
		if (rc == -ENOMEM)
			return ix_job_fail(&j->job, ctx, rc);
		snprintf(msg, sizeof(msg), "%s", ctx->err.msg);
		snprintf(hint, sizeof(hint), "%s", ctx->err.hint);
		return fail(j, ctx, rc, url, hint[0] ? hint : NULL, "%s", msg);
	}
	if ((rc = load_creds(j, ctx)))
		return rc;
	if (ch.bearer) {
		gpuenv_buf_t b;
		bool q = strchr(ch.realm, '?') != NULL;
		const char *scope = ch.scope ? ch.scope
			: gpuenv_arena_printf(j->reg->arena, "repository:%s:pull", j->q->repository).ptr;
		gpuenv_buf_init(&b, ctx, IX_URL_MAX);
		rc = scope ? gpuenv_buf_puts(&b, ch.realm) : -ENOMEM;
		if (!rc && ch.service && !(rc = gpuenv_buf_puts(&b, q ? "&service=" : "?service=")))
			rc = pct_append(&b, ch.service), q = true;
		if (!rc && !(rc = gpuenv_buf_puts(&b, q ? "&scope=" : "?scope=")))
			rc = pct_append(&b, scope);
		j->token_url = !rc ? gpuenv_arena_strndup(j->reg->arena, b.data, b.len) : NULL;
		gpuenv_buf_free(&b);
		if (rc == GPUENV_ETOOBIG)
			return fail(j, ctx, rc, url, NULL, "the token URL of the challenge is longer than %d "
				"bytes", IX_URL_MAX);
		if (!j->token_url)
			return fail(j, ctx, -ENOMEM, url, NULL, "out of memory");
		if (strncasecmp(j->token_url, "http://", 7) && strncasecmp(j->token_url, "https://", 8))
			return fail(j, ctx, GPUENV_ESYNTAX, url, NULL,
				"the challenge's realm '%.100s' is not an http(s) URL", ch.realm);
		if (j->creds.user && safe_for_creds(j->token_url)) {
			j->cred.user = (char *)j->creds.user;
			j->cred.pass = (char *)j->creds.pass;
			j->sent_creds = true;
		} else if (j->creds.user)
			j->withheld = true;
		j->tried_token = true;
		ask(j, ctx, STEP_TOKEN, j->token_url, GPUENV_REGISTRY_TOKEN_MAX);
		return 0;
	}
	if (ch.basic) {
		if (j->creds.user && !safe_for_creds(url))
			j->withheld = true;
		if (!j->creds.user || j->withheld)
			return needs_creds(j, ctx, url);
		j->cred.user = (char *)j->creds.user;
		j->cred.pass = (char *)j->creds.pass;
		j->sent_creds = j->tried_basic = true;
		ask(j, ctx, STEP_MANIFEST, j->manifest_url, GPUENV_REGISTRY_MANIFEST_MAX);
		return 0;
	}
	return fail(j, ctx, GPUENV_EUNSUPPORTED, url, "gpuenv speaks Bearer tokens and Basic",
		"the registry asks for %.60s authentication", ch.scheme);
}

static int on_manifest(rq_t *j, gpuenv_ctx_t *ctx)
{
	ix_req_t *r = &j->job.req;
	gpuenv_registry_manifest_t m;
	gpuenv_registry_query_t *q = j->q;
	const char *want = !strncmp(q->reference, "sha256:", 7) ? q->reference : NULL;
	int rc;

	if (r->status == 401)
		return on_401(j, ctx);
	if (r->status == 404)
		return fail(j, ctx, GPUENV_ENOTFOUND, r->url,
			"check the tag (and the repository) on the registry; IMAGE:TAG as `docker pull` "
			"takes it",
			"HTTP 404: the registry has no %s %s in %s/%s", want ? "manifest" : "tag",
			q->reference, q->registry, q->repository);
	if (r->status == 403) {
		gpuenv_fail(ctx, -EACCES, r->url, 0, 0, "%s: HTTP 403 Forbidden%s", j->what,
			j->sent_creds ? ": the credentials do not give access to it" : "");
		gpuenv_hint(ctx, "docker login %s with an account that may pull it", q->registry);
		return ix_job_fail(&j->job, ctx, -EACCES);
	}
	if (r->err)
		return fail_req(j, ctx);
	if (r->status != 200)
		return fail(j, ctx, GPUENV_ESYNTAX, r->url, NULL, "HTTP %ld where a manifest was expected",
			r->status);
	if ((rc = check_digest(j, ctx, want, &j->manifest_digest)))
		return rc;
	if ((rc = gpuenv_registry_manifest_parse(ctx, j->reg->arena, r->url, r->content_type,
		     gpuenv_str_n(r->body.data, r->body.len), &m)))
		return ix_job_fail(&j->job, ctx, rc);
	q->digest = j->manifest_digest;
	q->media_type = m.media_type;
	if (m.index) {
		q->platforms = m.platforms;
		q->nplatforms = m.nplatforms;
		j->job.done = true;
		return 0;
	}
	j->config_digest = m.config_digest;
	j->config_url = gpuenv_arena_printf(j->reg->arena, "%s/v2/%s/blobs/%s", j->base,
		q->repository, m.config_digest).ptr;
	if (!j->config_url)
		return fail(j, ctx, -ENOMEM, r->url, NULL, "out of memory");
	ask(j, ctx, STEP_CONFIG, j->config_url, GPUENV_REGISTRY_CONFIG_MAX);
	return 0;
}

static int on_token(rq_t *j, gpuenv_ctx_t *ctx)
{
	ix_req_t *r = &j->job.req;
	const char *token;
	int rc;

	if (r->status == 401 || r->status == 403)
		return needs_creds(j, ctx, j->token_url);
	if (r->err)
		return fail_req(j, ctx);
	if (r->status != 200)
		return fail(j, ctx, GPUENV_ESYNTAX, j->token_url, NULL,
			"the token service answered HTTP %ld", r->status);
	if ((rc = gpuenv_registry_token_parse(ctx, j->reg->arena, j->token_url,
		     gpuenv_str_n(r->body.data, r->body.len), &token)))
		return ix_job_fail(&j->job, ctx, rc);
	set_auth(j, token);
	memset((char *)token, 0, strlen(token));
	if (!j->authorization)
		return fail(j, ctx, -ENOMEM, j->token_url, NULL, "out of memory");
	ask(j, ctx, STEP_MANIFEST, j->manifest_url, GPUENV_REGISTRY_MANIFEST_MAX);
	return 0;
}

static int on_config(rq_t *j, gpuenv_ctx_t *ctx)
{
	ix_req_t *r = &j->job.req;
	gpuenv_registry_platform_t *p;
	const char *d;
	int rc;

	if (r->status == 404)
		return fail(j, ctx, GPUENV_ENOTFOUND, r->url, NULL,
			"HTTP 404: the manifest's config blob %s is not in the registry",
			j->config_digest);
	if (r->err)
		return fail_req(j, ctx);
	if (r->status != 200)
		return fail(j, ctx, GPUENV_ESYNTAX, r->url, NULL, "HTTP %ld where a config blob was expected",
			r->status);
	/* a blob's Docker-Content-Digest is the blob's own: check_digest checks both */
	if ((rc = check_digest(j, ctx, j->config_digest, &d)))
		return rc;
	if (!(p = gpuenv_arena_calloc(j->reg->arena, 1, sizeof(*p))))
		return fail(j, ctx, -ENOMEM, r->url, NULL, "out of memory");
	if ((rc = gpuenv_registry_config_parse(ctx, j->reg->arena, r->url,
		     gpuenv_str_n(r->body.data, r->body.len), p)))
		return ix_job_fail(&j->job, ctx, rc);
	p->digest = j->manifest_digest;
	p->media_type = j->q->media_type;
	j->q->platforms = p;
	j->q->nplatforms = 1;
	j->job.done = true;
	return 0;
}

static int answer(ix_job_t *job, gpuenv_ctx_t *ctx)
{
	rq_t *j = (rq_t *)job;

	switch (j->step) {
	case STEP_MANIFEST:
		return on_manifest(j, ctx);
	case STEP_TOKEN:
		return on_token(j, ctx);
	default:
		return on_config(j, ctx);
	}
}

/* ---- the run ------------------------------------------------------------------- */

static int check_opts(gpuenv_ctx_t *ctx, const gpuenv_registry_opts_t *o)
{
	for (size_t i = 0; i < o->nmirrors; i++) {
		const char *u = o->mirrors[i].url, *a;
		if (!u || (strncasecmp(u, "http://", 7) && strncasecmp(u, "https://", 8)))
			return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
				"the mirror of %s, '%.200s', is not an http:// or https:// URL",
				o->mirrors[i].host, u ? u : "");
		a = strstr(u, "://") + 3;
		for (; *a && *a != '/'; a++)
			if (*a == '@') {
				gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
					"the mirror of %s has credentials in its URL", o->mirrors[i].host);
				return gpuenv_hint(ctx, "put them in ~/.docker/config.json (docker login)");
			}
	}
	return 0;
}

int gpuenv_registry_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_registry_opts_t *opts, gpuenv_registry_query_t *q, size_t n)
{
	gpuenv_registry_opts_t none = { 0 };
	gpuenv_index_stats_t stats = { 0 };
	ix_http_t http;
	reg_t reg = { arena, opts ? opts : &none, NULL };
	rq_t *jobs = NULL;
	ix_job_t **jp = NULL;
	int rc;

	if ((rc = check_opts(ctx, reg.o)))
		return rc;
	{
		const char *dir = reg.o->docker_config_dir;
		const char *home = gpuenv_ctx_getenv(ctx, "HOME");
		if (!dir || !dir[0])
			dir = gpuenv_ctx_getenv(ctx, "DOCKER_CONFIG");
		if (dir && dir[0])
			reg.config_path = gpuenv_arena_printf(arena, "%s/config.json", dir).ptr;
		else if (home && home[0])
			reg.config_path = gpuenv_arena_printf(arena, "%s/.docker/config.json", home).ptr;
	}
	memset(&http, 0, sizeof(http));
	http.max_parallel = reg.o->max_parallel ? reg.o->max_parallel : 8;
	http.timeout_ms = reg.o->timeout_ms ? reg.o->timeout_ms : 30000;
	http.retries = reg.o->retries ? reg.o->retries : 3;
	http.retry_base_ms = 250;
	http.retry_max_ms = 10000;
	http.stats = &stats;
	if (!n)
		return 0;
	jobs = gpuenv_calloc(ctx, n, sizeof(*jobs));
	jp = gpuenv_calloc(ctx, n, sizeof(*jp));
	if (!jobs || !jp) {
		rc = gpuenv_oom(ctx, "for the registry client");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		rq_t *j = &jobs[i];
		gpuenv_registry_query_t *qi = &q[i];
		qi->err = 0;
		qi->digest = qi->media_type = NULL;
		qi->platforms = NULL;
		qi->nplatforms = 0;
		qi->sent_credentials = false;
		j->reg = &reg;
		j->q = qi;
		j->job.answer = answer;
		j->job.user = j;
		jp[i] = &j->job;
		j->what = gpuenv_arena_printf(arena, "%s/%s%s%s", qi->registry ? qi->registry : "",
			qi->repository ? qi->repository : "",
			qi->reference && !strncmp(qi->reference, "sha256:", 7) ? "@" : ":",
			qi->reference ? qi->reference : "").ptr;
		if (!j->what) {
			rc = gpuenv_oom(ctx, "for the registry client");
			goto out;
		}
		if (!qi->registry || !qi->registry[0] || !path_ok(qi->repository, "._-/") ||
			!path_ok(qi->reference, "ABCDEFGHIJKLMNOPQRSTUVWXYZ._-:")) {
			fail(j, ctx, GPUENV_EUSAGE, NULL, NULL, "not a registry, repository and tag or digest");
			continue;
		}
		j->base = gpuenv_registry_base_url(arena, reg.o, qi->registry);
		j->manifest_url = j->base ? gpuenv_arena_printf(arena, "%s/v2/%s/manifests/%s", j->base,
						    qi->repository, qi->reference).ptr
					  : NULL;
		if (!j->manifest_url) {
			rc = gpuenv_oom(ctx, "for the registry client");
			goto out;
		}
		qi->url = j->manifest_url;
		ask(j, ctx, STEP_MANIFEST, j->manifest_url, GPUENV_REGISTRY_MANIFEST_MAX);
	}
	if ((rc = ix_http_init(&http, ctx)))
		goto out;
	ix_http_run(&http, ctx, jp, n);
	gpuenv_error_clear(ctx);
	for (size_t i = 0; i < n; i++) {
		q[i].sent_credentials = jobs[i].sent_creds;
		if (jobs[i].job.err) {
			q[i].err = jobs[i].job.err;
			q[i].error = jobs[i].job.error;
			q[i].digest = NULL;
			q[i].platforms = NULL;
			q[i].nplatforms = 0;
		} else if (!q[i].digest) {
			q[i].err = gpuenv_fail(ctx, -EIO, q[i].url, 0, 0, "%s: no answer", jobs[i].what);
			q[i].error = ctx->err;
		}
	}
	rc = 0;
out:
	if (http.multi)
		ix_http_free(&http);
	for (size_t i = 0; jobs && i < n; i++) {
		set_auth(&jobs[i], NULL);
		ix_req_free(&jobs[i].job.req);
	}
	gpuenv_free(ctx, jp);
	gpuenv_free(ctx, jobs);
	return rc;
}
