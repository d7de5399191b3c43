/* libcrypto loaded on first use (lib/core/crypto_dl.c), as libcurl is
 * (lib/index/curl_dl.c): linked, its relocations cost the dynamic loader
 * about 8 M cycles at every start on a 2-core VM (LD_DEBUG=statistics;
 * 0.1 M on the H200 machine), paid by probe, doctor and every verb that
 * never hashes.  Include this after the OpenSSL headers: the OpenSSL
 * functions gpuenv calls become gpuenv_crypto_* wrappers, which load
 * libcrypto.so.3 the first time one is called (once per process) and
 * answer as the function does when it fails (NULL, 0) when it cannot be
 * loaded; gpuenv_crypto_loaded says why.  Only the files that call
 * OpenSSL include it (lib/core/hash.c, lib/install/wheel.c,
 * lib/kb/bundle.c). */
#ifndef GPUENV_CRYPTO_H
#define GPUENV_CRYPTO_H

#include <stdio.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "gpuenv/core.h"

/* 0 when libcrypto is loaded (loading it now if need be), else the failure
 * recorded in ctx with the fix (ctx NULL: not recorded). */
GPUENV_API int gpuenv_crypto_loaded(gpuenv_ctx_t *ctx);

GPUENV_API int gpuenv_crypto_EVP_DigestFinal_ex(EVP_MD_CTX *c, unsigned char *md, unsigned int *s);
GPUENV_API int gpuenv_crypto_EVP_DigestInit_ex(EVP_MD_CTX *c, const EVP_MD *type, ENGINE *impl);
GPUENV_API int gpuenv_crypto_EVP_DigestSign(EVP_MD_CTX *c, unsigned char *sig, size_t *siglen,
	const unsigned char *tbs, size_t tbslen);
GPUENV_API int gpuenv_crypto_EVP_DigestSignInit(EVP_MD_CTX *c, EVP_PKEY_CTX **pctx, const EVP_MD *type,
	ENGINE *e, EVP_PKEY *pkey);
GPUENV_API int gpuenv_crypto_EVP_DigestUpdate(EVP_MD_CTX *c, const void *d, size_t n);
GPUENV_API int gpuenv_crypto_EVP_DigestVerify(EVP_MD_CTX *c, const unsigned char *sig, size_t siglen,
	const unsigned char *tbs, size_t tbslen);
GPUENV_API int gpuenv_crypto_EVP_DigestVerifyInit(EVP_MD_CTX *c, EVP_PKEY_CTX **pctx, const EVP_MD *type,
	ENGINE *e, EVP_PKEY *pkey);
GPUENV_API void gpuenv_crypto_EVP_MD_CTX_free(EVP_MD_CTX *c);
GPUENV_API EVP_MD_CTX *gpuenv_crypto_EVP_MD_CTX_new(void);
GPUENV_API EVP_MD *gpuenv_crypto_EVP_MD_fetch(OSSL_LIB_CTX *lib, const char *algorithm, const char *properties);
GPUENV_API void gpuenv_crypto_EVP_MD_free(EVP_MD *md);
GPUENV_API void gpuenv_crypto_EVP_PKEY_free(EVP_PKEY *pkey);
GPUENV_API int gpuenv_crypto_EVP_PKEY_get_id(const EVP_PKEY *pkey);
GPUENV_API int gpuenv_crypto_EVP_PKEY_get_raw_public_key(const EVP_PKEY *pkey, unsigned char *pub, size_t *len);
GPUENV_API EVP_PKEY *gpuenv_crypto_EVP_PKEY_new_raw_public_key(int type, ENGINE *e, const unsigned char *pub,
	size_t len);
GPUENV_API const EVP_MD *gpuenv_crypto_EVP_get_digestbyname(const char *name);
GPUENV_API const EVP_MD *gpuenv_crypto_EVP_sha256(void);
GPUENV_API int gpuenv_crypto_OPENSSL_init_crypto(uint64_t opts, const OPENSSL_INIT_SETTINGS *settings);
GPUENV_API OSSL_LIB_CTX *gpuenv_crypto_OSSL_LIB_CTX_get0_global_default(void);
GPUENV_API EVP_PKEY *gpuenv_crypto_PEM_read_PrivateKey(FILE *fp, EVP_PKEY **x, pem_password_cb *cb, void *u);

#ifndef GPUENV_CRYPTO_DL_IMPL
#define EVP_DigestFinal_ex gpuenv_crypto_EVP_DigestFinal_ex
#define EVP_DigestInit_ex gpuenv_crypto_EVP_DigestInit_ex
#define EVP_DigestSign gpuenv_crypto_EVP_DigestSign
#define EVP_DigestSignInit gpuenv_crypto_EVP_DigestSignInit
#define EVP_DigestUpdate gpuenv_crypto_EVP_DigestUpdate
#define EVP_DigestVerify gpuenv_crypto_EVP_DigestVerify
#define EVP_DigestVerifyInit gpuenv_crypto_EVP_DigestVerifyInit
#define EVP_MD_CTX_free gpuenv_crypto_EVP_MD_CTX_free
#define EVP_MD_CTX_new gpuenv_crypto_EVP_MD_CTX_new
#define EVP_MD_fetch gpuenv_crypto_EVP_MD_fetch
#define EVP_MD_free gpuenv_crypto_EVP_MD_free
#define EVP_PKEY_free gpuenv_crypto_EVP_PKEY_free
#define EVP_PKEY_get_id gpuenv_crypto_EVP_PKEY_get_id
#define EVP_PKEY_get_raw_public_key gpuenv_crypto_EVP_PKEY_get_raw_public_key
#define EVP_PKEY_new_raw_public_key gpuenv_crypto_EVP_PKEY_new_raw_public_key
#define EVP_get_digestbyname gpuenv_crypto_EVP_get_digestbyname
#define EVP_sha256 gpuenv_crypto_EVP_sha256
#define OPENSSL_init_crypto gpuenv_crypto_OPENSSL_init_crypto
#define OSSL_LIB_CTX_get0_global_default gpuenv_crypto_OSSL_LIB_CTX_get0_global_default
#define PEM_read_PrivateKey gpuenv_crypto_PEM_read_PrivateKey
#endif

#endif
