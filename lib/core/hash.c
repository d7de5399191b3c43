/* SHA-256 through OpenSSL's libcrypto (EVP interface). */
#include "gpuenv/hash.h"
#include "gpuenv/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

int gpuenv_sha256_init(gpuenv_sha256_t *h)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (!md)
		return -ENOMEM;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return GPUENV_EUNSUPPORTED;
	}
	h->md = md;
	return 0;
}

int gpuenv_sha256_update(gpuenv_sha256_t *h, const void *p, size_t n)
{
	return EVP_DigestUpdate(h->md, p, n) == 1 ? 0 : GPUENV_EUNSUPPORTED;
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
	int ok = EVP_DigestFinal_ex(h->md, out, &n) == 1 && n == GPUENV_SHA256_LEN;

	EVP_MD_CTX_free(h->md);
	h->md = NULL;
	return ok ? 0 : GPUENV_EUNSUPPORTED;
}

int gpuenv_sha256(const void *p, size_t n, unsigned char out[GPUENV_SHA256_LEN])
{
	gpuenv_sha256_t h;
	int r = gpuenv_sha256_init(&h);

	if (r)
		return r;
	r = gpuenv_sha256_update(&h, p, n);
	if (r) {
		EVP_MD_CTX_free(h.md);
		return r;
	}
	return gpuenv_sha256_final(&h, out);
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
		return r == -ENOMEM ? gpuenv_oom(ctx, "hashing a file")
				    : gpuenv_fail(ctx, r, path, 0, 0, "sha256 unavailable");
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
			r = gpuenv_fail(ctx, r, path, 0, 0, "sha256 failed");
			break;
		}
	}
	close(fd);
	if (r) {
		EVP_MD_CTX_free(h.md);
		return r;
	}
	if ((r = gpuenv_sha256_final(&h, out)) != 0)
		return gpuenv_fail(ctx, r, path, 0, 0, "sha256 failed");
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
