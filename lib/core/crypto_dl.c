/* libcrypto loaded on first use (gpuenv/crypto.h says why). */
#define GPUENV_CRYPTO_DL_IMPL
#include "gpuenv/crypto.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

/* the functions gpuenv calls, by their libcrypto names */
#define CRYPTO_CALLS(X)                                                                                       \
	X(EVP_DigestFinal_ex) X(EVP_DigestInit_ex) X(EVP_DigestSign) X(EVP_DigestSignInit) X(EVP_DigestUpdate) \
	X(EVP_DigestVerify) X(EVP_DigestVerifyInit) X(EVP_MD_CTX_free) X(EVP_MD_CTX_new) X(EVP_MD_fetch)       \
	X(EVP_MD_free) X(EVP_PKEY_free) X(EVP_PKEY_get_id) X(EVP_PKEY_get_raw_public_key)                      \
	X(EVP_PKEY_new_raw_public_key) X(EVP_get_digestbyname) X(EVP_sha256) X(OPENSSL_init_crypto)             \
	X(OSSL_LIB_CTX_get0_global_default) X(PEM_read_PrivateKey)

#define SLOT(name) __typeof__(&name) name;
static struct {
	CRYPTO_CALLS(SLOT)
} F;
#undef SLOT

#define NAME(name) #name,
static const char *const names[] = { CRYPTO_CALLS(NAME) };
#undef NAME

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_rc = GPUENV_EUNSUPPORTED;
static char load_err[256] = "libcrypto.so.3 cannot be loaded";

static void load(void)
{
	void *so = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
	void **slot = (void **)&F;
	const char *e;

	if (!so) {
		e = dlerror();
		/* the loader out of memory is out of memory, not a missing library */
		load_rc = e && strstr(e, "annot allocate memory") ? -ENOMEM : GPUENV_ENOTFOUND;
		snprintf(load_err, sizeof(load_err), "libcrypto.so.3 cannot be loaded: %s", e ? e : "?");
		return;
	}
	_Static_assert(sizeof(F) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
		"one function pointer per name");
	if (!gpuenv_dl_syms(so, names, sizeof(names) / sizeof(names[0]), slot, &e)) {
		snprintf(load_err, sizeof(load_err), "the libcrypto.so.3 loaded has no %s", e);
		return; /* the handle stays open: a process loads it once */
	}
	load_rc = 0;
}

static bool ready(void)
{
	return pthread_once(&load_once, load) == 0 && !load_rc;
}

int gpuenv_crypto_loaded(gpuenv_ctx_t *ctx)
{
	if (ready())
		return 0;
	if (!ctx)
		return load_rc;
	if (load_rc == -ENOMEM)
		return gpuenv_oom(ctx, "loading libcrypto");
	gpuenv_fail(ctx, load_rc, NULL, 0, 0, "%s", load_err);
	return gpuenv_hint(ctx, "gpuenv hashes wheels and checks signatures with OpenSSL's libcrypto: "
				"install Debian's libssl3 (apt-get install libssl3)");
}

int gpuenv_crypto_EVP_DigestFinal_ex(EVP_MD_CTX *c, unsigned char *md, unsigned int *s)
{
	return ready() ? F.EVP_DigestFinal_ex(c, md, s) : 0;
}

int gpuenv_crypto_EVP_DigestInit_ex(EVP_MD_CTX *c, const EVP_MD *type, ENGINE *impl)
{
	return ready() ? F.EVP_DigestInit_ex(c, type, impl) : 0;
}

int gpuenv_crypto_EVP_DigestSign(EVP_MD_CTX *c, unsigned char *sig, size_t *siglen, const unsigned char *tbs,
	size_t tbslen)
{
	return ready() ? F.EVP_DigestSign(c, sig, siglen, tbs, tbslen) : 0;
}

int gpuenv_crypto_EVP_DigestSignInit(EVP_MD_CTX *c, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e,
	EVP_PKEY *pkey)
{
	return ready() ? F.EVP_DigestSignInit(c, pctx, type, e, pkey) : 0;
}

int gpuenv_crypto_EVP_DigestUpdate(EVP_MD_CTX *c, const void *d, size_t n)
{
	return ready() ? F.EVP_DigestUpdate(c, d, n) : 0;
}

int gpuenv_crypto_EVP_DigestVerify(EVP_MD_CTX *c, const unsigned char *sig, size_t siglen,
	const unsigned char *tbs, size_t tbslen)
{
	return ready() ? F.EVP_DigestVerify(c, sig, siglen, tbs, tbslen) : 0;
}

int gpuenv_crypto_EVP_DigestVerifyInit(EVP_MD_CTX *c, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e,
	EVP_PKEY *pkey)
{
	return ready() ? F.EVP_DigestVerifyInit(c, pctx, type, e, pkey) : 0;
}

void gpuenv_crypto_EVP_MD_CTX_free(EVP_MD_CTX *c)
{
	if (c && ready())
		F.EVP_MD_CTX_free(c);
}

EVP_MD_CTX *gpuenv_crypto_EVP_MD_CTX_new(void)
{
	return ready() ? F.EVP_MD_CTX_new() : NULL;
}

EVP_MD *gpuenv_crypto_EVP_MD_fetch(OSSL_LIB_CTX *lib, const char *algorithm, const char *properties)
{
	return ready() ? F.EVP_MD_fetch(lib, algorithm, properties) : NULL;
}

void gpuenv_crypto_EVP_MD_free(EVP_MD *md)
{
	if (md && ready())
		F.EVP_MD_free(md);
}

void gpuenv_crypto_EVP_PKEY_free(EVP_PKEY *pkey)
{
	if (pkey && ready())
		F.EVP_PKEY_free(pkey);
}

int gpuenv_crypto_EVP_PKEY_get_id(const EVP_PKEY *pkey)
{
	return ready() ? F.EVP_PKEY_get_id(pkey) : 0;
}

int gpuenv_crypto_EVP_PKEY_get_raw_public_key(const EVP_PKEY *pkey, unsigned char *pub, size_t *len)
{
	return ready() ? F.EVP_PKEY_get_raw_public_key(pkey, pub, len) : 0;
}

EVP_PKEY *gpuenv_crypto_EVP_PKEY_new_raw_public_key(int type, ENGINE *e, const unsigned char *pub, size_t len)
{
	return ready() ? F.EVP_PKEY_new_raw_public_key(type, e, pub, len) : NULL;
}

const EVP_MD *gpuenv_crypto_EVP_get_digestbyname(const char *name)
{
	return ready() ? F.EVP_get_digestbyname(name) : NULL;
}

const EVP_MD *gpuenv_crypto_EVP_sha256(void)
{
	return ready() ? F.EVP_sha256() : NULL;
}

int gpuenv_crypto_OPENSSL_init_crypto(uint64_t opts, const OPENSSL_INIT_SETTINGS *settings)
{
	return ready() ? F.OPENSSL_init_crypto(opts, settings) : 0;
}

OSSL_LIB_CTX *gpuenv_crypto_OSSL_LIB_CTX_get0_global_default(void)
{
	return ready() ? F.OSSL_LIB_CTX_get0_global_default() : NULL;
}

EVP_PKEY *gpuenv_crypto_PEM_read_PrivateKey(FILE *fp, EVP_PKEY **x, pem_password_cb *cb, void *u)
{
	return ready() ? F.PEM_read_PrivateKey(fp, x, cb, u) : NULL;
}
