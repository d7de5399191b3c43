/* SHA-256 through OpenSSL's libcrypto (EVP interface). */
#include "gpuenv/hash.h"
#include "gpuenv/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "gpuenv/crypto.h" /* after OpenSSL's: libcrypto loaded on first use */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

/* libcrypto is set up once, before the first digest, and checked: OpenSSL
 * 3 sets itself up lazily inside the first digest and, when an allocation
 * fails there, dereferences a NULL lock (issue 22, item 3).  Done on first
 * use rather than at start-up, so that the verbs that never hash (probe,
 * doctor, ...) do not pay its ~2 ms; the outcome is kept for the process. */
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static int crypto_state; /* 0, -ENOMEM, GPUENV_EUNSUPPORTED or GPUENV_ENOTFOUND (not loaded) */

static void crypto_setup(void)
{
	EVP_MD *md;
	int r = gpuenv_crypto_loaded(NULL);

	if (r) { /* not installed, or out of memory loading it */
		crypto_state = r;
		return;
	}
	/* OpenSSL 3 reports a failed set-up of its default context only
	 * here: used after such a failure, it dereferences a NULL lock */
	if (!OPENSSL_init_crypto(0, NULL) || !OSSL_LIB_CTX_get0_global_default()) {
		crypto_state = -ENOMEM;
		return;
	}
	if (!(md = EVP_MD_fetch(NULL, "SHA256", NULL))) {
		crypto_state = -ENOMEM;
		return;
	}
	EVP_MD_free(md);
}

static int crypto_ready(void)
{
	if (pthread_once(&crypto_once, crypto_setup) != 0)
		return GPUENV_EUNSUPPORTED;
	return crypto_state;
}

int gpuenv_hash_setup(gpuenv_ctx_t *ctx)
{
	static const unsigned char empty[GPUENV_SHA256_LEN] = { 0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14,
		0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c,
		0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55 };
	unsigned char d[GPUENV_SHA256_LEN];
	int r = crypto_ready();

	if (r == -ENOMEM)
		return gpuenv_oom(ctx, "setting up libcrypto's SHA-256");
	if (r && r != GPUENV_EUNSUPPORTED)
		return gpuenv_crypto_loaded(ctx); /* libcrypto.so.3 not found: says so, with the fix */
	if (r)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "libcrypto could not be set up");
	r = gpuenv_sha256("", 0, d);
	if (r)
		return gpuenv_sha256_fail(ctx, r, "setting up libcrypto's SHA-256");
	if (memcmp(d, empty, sizeof(d)))
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "libcrypto's SHA-256 of nothing is wrong");
	return 0;
}

int gpuenv_sha256_init(gpuenv_sha256_t *h)
{
	EVP_MD_CTX *md;
	int r = crypto_ready();

	h->md = NULL;
	h->err = r;
	if (r)
		return r;
	md = EVP_MD_CTX_new();
	if (!md)
		return h->err = -ENOMEM;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return h->err = GPUENV_EUNSUPPORTED;
	}
	h->md = md;
	return 0;
}

int gpuenv_sha256_update(gpuenv_sha256_t *h, const void *p, size_t n)
{
	if (!h->err && EVP_DigestUpdate(h->md, p, n) != 1)
		h->err = GPUENV_EUNSUPPORTED;
	return h->err;
}

void gpuenv_sha256_field(gpuenv_sha256_t *h, const char *key, const char *value)
{
	gpuenv_sha256_update(h, key, strlen(key) + 1);
	if (value)
		gpuenv_sha256_update(h, value, strlen(value) + 1);
	else
		gpuenv_sha256_update(h, "\xff", 1);
}

int gpuenv_sha256_final(gpuenv_sha256_t *h, unsigned char out[GPUENV_SHA256_LEN])
{
	unsigned int n = 0;
	int r = h->err;

	if (!r && (EVP_DigestFinal_ex(h->md, out, &n) != 1 || n != GPUENV_SHA256_LEN))
		r = GPUENV_EUNSUPPORTED;
	gpuenv_sha256_drop(h);
	h->err = r;
	return r;
}

void gpuenv_sha256_drop(gpuenv_sha256_t *h)
{
	EVP_MD_CTX_free(h->md);
	h->md = NULL;
}

int gpuenv_sha256(const void *p, size_t n, unsigned char out[GPUENV_SHA256_LEN])
{
	gpuenv_sha256_t h;

	gpuenv_sha256_init(&h);
	gpuenv_sha256_update(&h, p, n);
	return gpuenv_sha256_final(&h, out);
}

int gpuenv_sha256_fail(gpuenv_ctx_t *ctx, int r, const char *what)
{
	if (r == -ENOMEM)
		return gpuenv_oom(ctx, what);
	return gpuenv_fail(ctx, r, NULL, 0, 0, "libcrypto could not compute a SHA-256 (%s)", what);
}

int gpuenv_sha256_file(gpuenv_ctx_t *ctx, const char *path,
	unsigned char out[GPUENV_SHA256_LEN])
{
	unsigned char block[1 << 16];
	gpuenv_sha256_t h;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "%s", strerror(errno));
	r = gpuenv_sha256_init(&h);
	if (r) {
		close(fd);
		return gpuenv_sha256_fail(ctx, r, path);
	}
	for (;;) {
		ssize_t n = read(fd, block, sizeof(block));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = gpuenv_fail(ctx, -errno, path, 0, 0, "read: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if ((r = gpuenv_sha256_update(&h, block, (size_t)n)) != 0) {
			r = gpuenv_sha256_fail(ctx, r, path);
			break;
		}
	}
	close(fd);
	if (r) {
		gpuenv_sha256_drop(&h);
		return r;
	}
	if ((r = gpuenv_sha256_final(&h, out)) != 0)
		return gpuenv_sha256_fail(ctx, r, path);
	return 0;
}

void gpuenv_hex(const unsigned char *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}
