/* The OCI distribution API client (lib/index/registry.c; docs/image.md):
 * what manifest a tag of a container image names today, through the pull
 * endpoints of the OCI distribution specification, with the token flow of
 * Docker's registry authentication (a 401 with `WWW-Authenticate: Bearer
 * realm=...,service=...,scope=...`, an anonymous token or one asked with
 * Basic credentials from ~/.docker/config.json, the request again with the
 * token).  libcurl stays in lib/index: this client runs on the index
 * client's transfer engine (http.c).
 *
 * The pure parsers below (challenges, manifests and indexes, image
 * configs, token answers, docker config.json) take text and are fuzzed.
 * Credentials go to requests only: never into a message, a result or a
 * log line.
 */
#ifndef GPUENV_REGISTRY_H
#define GPUENV_REGISTRY_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps on what a registry may send. */
#define GPUENV_REGISTRY_MANIFEST_MAX ((size_t)4 << 20)
#define GPUENV_REGISTRY_TOKEN_MAX ((size_t)64 << 10)
#define GPUENV_REGISTRY_CONFIG_MAX ((size_t)8 << 20)
#define GPUENV_REGISTRY_MAX_ENTRIES 1024 /* manifests of one index */

/* Media types (OCI image spec; Docker's image manifest v2 schema 2). */
#define GPUENV_MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define GPUENV_MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define GPUENV_MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define GPUENV_MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"

/* "sha256:" and 64 lower-case hex digits (the OCI image spec's encoding of
 * a sha256 digest; gpuenv checks no other algorithm). */
GPUENV_API bool gpuenv_registry_digest_valid(gpuenv_str_t s);

/* ---- WWW-Authenticate ------------------------------------------------------
 * RFC 7235 challenges: a scheme, then auth-params (token or quoted-string
 * values, `\` escapes).  A header may hold several challenges separated by
 * commas; the Bearer one is taken, else Basic, else the first. */
typedef struct gpuenv_registry_challenge {
	const char *scheme; /* "Bearer", "Basic" (as written) */
	const char *realm, *service, *scope; /* NULL when absent */
	bool bearer, basic; /* the scheme, compared without case */
} gpuenv_registry_challenge_t;

/* 0, or GPUENV_ESYNTAX / GPUENV_ETOOBIG (over 8 KiB) naming what is wrong. */
GPUENV_API int gpuenv_registry_challenge_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t header, gpuenv_registry_challenge_t *out);

/* ---- manifests ------------------------------------------------------------- */

typedef struct gpuenv_registry_platform {
	const char *os, *architecture, *variant; /* variant NULL when none */
	const char *digest;			 /* the platform's manifest */
	const char *media_type;
} gpuenv_registry_platform_t;

typedef struct gpuenv_registry_manifest {
	const char *media_type; /* one of GPUENV_MT_* */
	bool index;		/* an OCI index or a Docker manifest list */
	/* index: its linux/amd64 and linux/arm64 manifests (every variant), in
	 * the index's order; entries for other platforms and attestation
	 * manifests are counted in nother */
	gpuenv_registry_platform_t *platforms;
	size_t nplatforms, nother;
	/* image manifest: its config blob */
	const char *config_digest;
} gpuenv_registry_manifest_t;

/* A manifest or index as a registry served it: content_type is the
 * Content-Type header (the document's own mediaType wins when both are
 * there and agree; a disagreement is an error).  url names it in messages.
 * 0, GPUENV_ESYNTAX (malformed JSON, a missing or mistyped field, an
 * invalid digest), GPUENV_EUNSUPPORTED (Docker schema 1, another media
 * type), GPUENV_ETOOBIG. */
GPUENV_API int gpuenv_registry_manifest_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *url, const char *content_type, gpuenv_str_t body, gpuenv_registry_manifest_t *out);

/* os / architecture / variant of an image config blob (OCI image config). */
GPUENV_API int gpuenv_registry_config_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *url, gpuenv_str_t body, gpuenv_registry_platform_t *out);

/* The token of a token service's answer ("token", else "access_token"). */
GPUENV_API int gpuenv_registry_token_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *url, gpuenv_str_t body, const char **token);

/* ---- ~/.docker/config.json ----------------------------------------------------
 * The credentials `docker login` stores for a registry: "auths" entries
 * keyed by host (or by URL: "https://index.docker.io/v1/" is Docker Hub's),
 * with "auth" (base64 of "user:password") or "username" and "password".
 * Credential helpers ("credsStore", "credHelpers") are not run: helper names
 * the one that would apply, so the caller can say so. */
typedef struct gpuenv_docker_creds {
	const char *user, *pass; /* NULL: none for this registry */
	const char *helper;	 /* the credential helper configured for it, or NULL */
} gpuenv_docker_creds_t;

/* registry: "nvcr.io", "docker.io", "127.0.0.1:5000".  0 (with or without
 * credentials), or GPUENV_ESYNTAX naming name and the key. */
GPUENV_API int gpuenv_docker_config_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *name, gpuenv_str_t text, const char *registry, gpuenv_docker_creds_t *out);

/* ---- the client -------------------------------------------------------------- */

typedef struct gpuenv_registry_mirror {
	const char *host; /* a registry as references name it: "nvcr.io", "docker.io" */
	const char *url;  /* where its requests go instead: "http://127.0.0.1:5000" */
} gpuenv_registry_mirror_t;

typedef struct gpuenv_registry_opts {
	const gpuenv_registry_mirror_t *mirrors;
	size_t nmirrors;
	/* the docker config folder; NULL: $DOCKER_CONFIG, else ~/.docker */
	const char *docker_config_dir;
	unsigned max_parallel, timeout_ms, retries; /* 0: 8, 30000, 3 */
} gpuenv_registry_opts_t;

/* One tag (or digest) to resolve, and its answer. */
typedef struct gpuenv_registry_query {
	const char *registry, *repository, *reference; /* "nvcr.io", "nvidia/pytorch", "25.01-py3" */
	/* answered */
	int err; /* 0, or the failure (the story in error) */
	gpuenv_error_t error;
	const char *digest;	/* sha256:... of the bytes served */
	const char *media_type;
	gpuenv_registry_platform_t *platforms; /* index: linux/amd64 and arm64; else its own */
	size_t nplatforms;
	bool sent_credentials; /* credentials from config.json were used */
	const char *url;       /* the manifest URL asked */
} gpuenv_registry_query_t;

/* Resolve every query, in parallel; answers in arena.  Each query gets its
 * own err / error: GPUENV_ENOTFOUND (404: no such tag or repository),
 * -EACCES (401 / 403: "needs credentials", or credentials refused),
 * GPUENV_ESYNTAX / GPUENV_EUNSUPPORTED (a registry answer gpuenv cannot
 * read), GPUENV_EFORMAT (the Docker-Content-Digest header disagrees with
 * the bytes), -EIO (the transfer).  Returns 0 when every query was asked,
 * or an error of the whole run (memory, libcurl, a docker config that
 * cannot be read) recorded in ctx->err. */
GPUENV_API int gpuenv_registry_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_registry_opts_t *opts, gpuenv_registry_query_t *q, size_t n);

/* The base URL a registry's requests go to: its mirror, or
 * https://HOST (Docker Hub: https://registry-1.docker.io), in arena. */
GPUENV_API const char *gpuenv_registry_base_url(gpuenv_arena_t *arena,
	const gpuenv_registry_opts_t *opts, const char *registry);

#ifdef __cplusplus
}
#endif
#endif
