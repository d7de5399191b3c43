/* gpuenv hash: SHA-256 through libcrypto. */
#ifndef GPUENV_HASH_H
#define GPUENV_HASH_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_SHA256_LEN 32

typedef struct gpuenv_sha256 {
	void *md; /* EVP_MD_CTX */
} gpuenv_sha256_t;

GPUENV_API int gpuenv_sha256_init(gpuenv_sha256_t *h);
GPUENV_API int gpuenv_sha256_update(gpuenv_sha256_t *h, const void *p, size_t n);
/* A named field into a digest that several fields make: key and value
 * each with its NUL, a NULL value as one 0xff byte (no text has it), so
 * ("ab", "c") and ("a", "bc") and absent and "" all differ.  The inputs
 * hash of a lock and the cache key of a build are made of these. */
GPUENV_API void gpuenv_sha256_field(gpuenv_sha256_t *h, const char *key, const char *value);
/* Finish, write 32 bytes to out, and release the state. */
GPUENV_API int gpuenv_sha256_final(gpuenv_sha256_t *h,
	unsigned char out[GPUENV_SHA256_LEN]);
/* One-shot digest of a memory block. */
GPUENV_API int gpuenv_sha256(const void *p, size_t n,
	unsigned char out[GPUENV_SHA256_LEN]);
/* Digest of a file's contents, streamed. */
GPUENV_API int gpuenv_sha256_file(gpuenv_ctx_t *ctx, const char *path,
	unsigned char out[GPUENV_SHA256_LEN]);
/* Lower-case hex (2*n chars + NUL) into out. */
GPUENV_API void gpuenv_hex(const unsigned char *p, size_t n, char *out);

#ifdef __cplusplus
}
#endif
#endif
