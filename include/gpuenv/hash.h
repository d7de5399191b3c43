/* gpuenv hash: SHA-256 through libcrypto. */
#ifndef GPUENV_HASH_H
#define GPUENV_HASH_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_SHA256_LEN 32

/* A digest being made.  Errors are sticky: a failed init or update is
 * kept and reported by final, so a caller checks final alone (and must:
 * the digest is only written when it returns 0). */
typedef struct gpuenv_sha256 {
	void *md; /* EVP_MD_CTX */
	int err;  /* the first failure (-ENOMEM, GPUENV_EUNSUPPORTED), 0: none */
} gpuenv_sha256_t;

/* Set up libcrypto and its SHA-256, checked ("out of memory"), and check a
 * digest of nothing.  OpenSSL sets itself up lazily at the first digest and
 * crashes there when an allocation fails; gpuenv_sha256_init sets it up
 * first the same way (once per process, on first use), so a failure is an
 * error of the digest, never a crash.  Calling this is optional. */
GPUENV_API int gpuenv_hash_setup(gpuenv_ctx_t *ctx);
GPUENV_API int gpuenv_sha256_init(gpuenv_sha256_t *h);
GPUENV_API int gpuenv_sha256_update(gpuenv_sha256_t *h, const void *p, size_t n);
/* A named field into a digest that several fields make: key and value
 * each with its NUL, a NULL value as one 0xff byte (no text has it), so
 * ("ab", "c") and ("a", "bc") and absent and "" all differ.  The inputs
 * hash of a lock and the cache key of a build are made of these. */
GPUENV_API void gpuenv_sha256_field(gpuenv_sha256_t *h, const char *key, const char *value);
/* Finish, write 32 bytes to out, and release the state; the first error
 * of init, update or final (out unwritten then). */
GPUENV_API GPUENV_MUST_CHECK int gpuenv_sha256_final(gpuenv_sha256_t *h,
	unsigned char out[GPUENV_SHA256_LEN]);
/* Release the state of a digest given up (no digest wanted). */
GPUENV_API void gpuenv_sha256_drop(gpuenv_sha256_t *h);
/* One-shot digest of a memory block. */
GPUENV_API GPUENV_MUST_CHECK int gpuenv_sha256(const void *p, size_t n,
	unsigned char out[GPUENV_SHA256_LEN]);
/* Digest of a file's contents, streamed (the error recorded in ctx). */
GPUENV_API GPUENV_MUST_CHECK int gpuenv_sha256_file(gpuenv_ctx_t *ctx, const char *path,
	unsigned char out[GPUENV_SHA256_LEN]);
/* Record a failed digest (r from the functions above) in ctx: "out of
 * memory" for -ENOMEM, else libcrypto's failure; what: what was hashed. */
GPUENV_API int gpuenv_sha256_fail(gpuenv_ctx_t *ctx, int r, const char *what);
/* Lower-case hex (2*n chars + NUL) into out. */
GPUENV_API void gpuenv_hex(const unsigned char *p, size_t n, char *out);

#ifdef __cplusplus
}
#endif
#endif
