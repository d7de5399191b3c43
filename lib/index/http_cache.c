/* The on-disk HTTP cache (docs/index-client.md, "What is cached").
 *
 * One file per entry under <cache_dir>/http-v1/<2 hex>/<62 hex>, the name
 * the SHA-256 of the key (the URL, plus the known hash of an immutable
 * entry).  The file is a short text header, a blank line, then the body:
 *
 *   gpuenv-http-cache 1
 *   status: 200
 *   stored: <unix seconds>
 *   max-age: <seconds, -1: none>
 *   age: <seconds old when stored>   (optional, 0 when absent)
 *   etag: "..."            (optional)
 *   last-modified: ...     (optional)
 *   content-type: ...      (optional)
 *   length: <body bytes>
 *   sha256: <body digest>
 *
 * Entries are written whole (a temporary file renamed over the name), so a
 * reader in another process sees the old entry or the new one, never half
 * of either.  Every read checks the length and
 * the digest: a damaged entry is a miss and is fetched again. */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"

#include "http_cache.h"

#define MAGIC "gpuenv-http-cache 1\n"

int ix_cache_key(const char *root, const char *url, const char *sha256, char *out, size_t outsz)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	gpuenv_sha256_t h;
	int r;

	gpuenv_sha256_init(&h);
	gpuenv_sha256_update(&h, url, strlen(url));
	if (sha256) {
		gpuenv_sha256_update(&h, "\n", 1);
		gpuenv_sha256_update(&h, sha256, strlen(sha256));
	}
	if ((r = gpuenv_sha256_final(&h, d))) {
		if (outsz)
			out[0] = '\0';
		return r;
	}
	gpuenv_hex(d, sizeof(d), hex);
	snprintf(out, outsz, "%s/%.2s/%s", root, hex, hex + 2);
	return 0;
}

static gpuenv_str_t field(gpuenv_str_t head, const char *name)
{
	size_t nl = strlen(name);

	while (head.len) {
		gpuenv_str_t line, rest = gpuenv_str_split(head, '\n', &line);
		if (line.len > nl + 1 && !memcmp(line.ptr, name, nl) && line.ptr[nl] == ':')
			return gpuenv_str_trim(gpuenv_str_n(line.ptr + nl + 1, line.len - nl - 1));
		if (!rest.ptr)
			break;
		head = rest;
	}
	return GPUENV_STR_NULL;
}

static void copy_field(gpuenv_str_t head, const char *name, char *out, size_t outsz)
{
	gpuenv_str_t v = field(head, name);
	size_t n = v.len < outsz - 1 ? v.len : outsz - 1;

	if (v.ptr)
		memcpy(out, v.ptr, n);
	out[v.ptr ? n : 0] = '\0';
}

static bool field_i64(gpuenv_str_t head, const char *name, int64_t *out)
{
	gpuenv_str_t v = field(head, name);
	uint64_t u;
	bool neg = v.len && v.ptr[0] == '-';

	if (neg)
		v = gpuenv_str_n(v.ptr + 1, v.len - 1);
	if (!gpuenv_str_to_u64(v, &u) || u > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)u : (int64_t)u;
	return true;
}

/* The entry's header fields from head (its text up to the blank line);
 * *len and sha (65 bytes) the body's promised length and digest.  false
 * when a field that must be there is not. */
static bool parse_head(gpuenv_str_t head, ix_cache_entry_t *e, int64_t *len, char *sha)
{
	int64_t status;

	memset(e, 0, sizeof(*e));
	if (!field_i64(head, "length", len) || *len < 0 || !field_i64(head, "status", &status) ||
		!field_i64(head, "stored", &e->stored))
		return false;
	if (!field_i64(head, "max-age", &e->max_age))
		e->max_age = -1;
	if (!field_i64(head, "age", &e->age) || e->age < 0)
		e->age = 0;
	e->status = (int)status;
	copy_field(head, "etag", e->etag, sizeof(e->etag));
	copy_field(head, "last-modified", e->last_modified, sizeof(e->last_modified));
	copy_field(head, "content-type", e->content_type, sizeof(e->content_type));
	copy_field(head, "base-url", e->base_url, sizeof(e->base_url));
	copy_field(head, "sha256", sha, 2 * GPUENV_SHA256_LEN + 1);
	return true;
}

/* The header's text in data (n bytes), and the offset of the body; false
 * when it is not an entry's. */
static bool split_entry(const char *data, size_t n, gpuenv_str_t *head, size_t *off)
{
	const char *sep;

	if (n < sizeof(MAGIC) - 1 || memcmp(data, MAGIC, sizeof(MAGIC) - 1))
		return false;
	sep = memmem(data, n, "\n\n", 2);
	if (!sep)
		return false;
	*head = gpuenv_str_n(data, (size_t)(sep - data) + 1);
	*off = (size_t)(sep - data) + 2;
	return true;
}

int ix_cache_load(gpuenv_ctx_t *ctx, const char *path, size_t max, ix_cache_entry_t *e,
	gpuenv_buf_t *body)
{
	gpuenv_buf_t raw;
	gpuenv_str_t head;
	size_t off;
	int64_t len;
	int r;

	memset(e, 0, sizeof(*e));
	gpuenv_buf_init(&raw, ctx, max + 4096);
	/* a miss is an ordinary answer: nothing recorded */
	{
		gpuenv_error_t saved = ctx->err;
		r = gpuenv_fs_read(ctx, path, max + 4096, &raw);
		ctx->err = saved;
	}
	if (r) {
		gpuenv_buf_free(&raw);
		return r == -ENOMEM ? gpuenv_oom(ctx, "for a cache entry") : -ENOENT;
	}
	r = -EINVAL; /* damaged: a miss */
	char want[2 * GPUENV_SHA256_LEN + 1] = "", got[sizeof(want)];
	unsigned char d[GPUENV_SHA256_LEN];
	if (!split_entry(raw.data, raw.len, &head, &off) || !parse_head(head, e, &len, want) ||
		(uint64_t)len != raw.len - off || raw.len - off > max)
		goto out;
	if (gpuenv_sha256(raw.data + off, raw.len - off, d))
		goto out;
	gpuenv_hex(d, sizeof(d), got);
	if (strcmp(want, got))
		goto out;
	/* the body moved to the front of the bytes read, which become the
	 * caller's buffer: a page is in memory once, not read and copied */
	memmove(raw.data, raw.data + off, raw.len - off);
	raw.len -= off;
	raw.data[raw.len] = '\0';
	gpuenv_buf_free(body);
	*body = raw;
	return 0;
out:
	gpuenv_buf_free(&raw);
	return r;
}

int ix_cache_load_head(gpuenv_ctx_t *ctx, const char *path, ix_cache_entry_t *e, bool verify)
{
	char buf[8192], want[2 * GPUENV_SHA256_LEN + 1], got[sizeof(want)];
	unsigned char d[GPUENV_SHA256_LEN];
	gpuenv_sha256_t h;
	gpuenv_str_t head;
	size_t off, n = 0;
	uint64_t body = 0;
	int64_t len;
	ssize_t k;
	int fd, r = -EINVAL;

	memset(e, 0, sizeof(*e));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	while (n < sizeof(buf) && ((k = read(fd, buf + n, sizeof(buf) - n)) > 0 || (k < 0 && errno == EINTR)))
		n += k > 0 ? (size_t)k : 0;
	if (!split_entry(buf, n, &head, &off) || !parse_head(head, e, &len, want))
		goto out;
	if (!verify) {
		r = 0;
		goto out;
	}
	/* the body through the digest a buffer at a time: checked, not held */
	if (gpuenv_sha256_init(&h) == -ENOMEM) {
		r = gpuenv_oom(ctx, "for SHA-256");
		goto out;
	}
	gpuenv_sha256_update(&h, buf + off, n - off);
	body = n - off;
	while ((k = read(fd, buf, sizeof(buf))) > 0 || (k < 0 && errno == EINTR)) {
		if (k > 0) {
			gpuenv_sha256_update(&h, buf, (size_t)k);
			body += (uint64_t)k;
		}
	}
	if ((r = gpuenv_sha256_final(&h, d)) == -ENOMEM) {
		r = gpuenv_oom(ctx, "for SHA-256");
		goto out;
	}
	r = -EINVAL;
	if (k < 0 || body != (uint64_t)len)
		goto out;
	gpuenv_hex(d, sizeof(d), got);
	r = strcmp(want, got) ? -EINVAL : 0;
out:
	close(fd);
	return r;
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		char c = tmp[i];
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -errno;
		tmp[i] = c;
	}
	return 0;
}

/* An entry written atomically but without fsync (GPUENV_FS_NOSYNC): a
 * cache entry needs atomicity, not durability; after a crash an entry that
 * is lost or torn fails its length or digest check and is fetched again,
 * while the fsyncs cost a cold lock of 200 entries more than a second on a
 * disk.  The entry's folders are made on the first write into them. */
static int write_entry(gpuenv_ctx_t *ctx, const char *path, const gpuenv_str_t parts[2])
{
	gpuenv_error_t saved = ctx->err;
	int r = gpuenv_fs_write_atomic_parts(ctx, path, parts, 2, 0644, GPUENV_FS_NOSYNC);

	if (r == -ENOENT) {
		char dir[PATH_MAX];
		const char *slash = strrchr(path, '/');
		size_t n = slash ? (size_t)(slash - path) : 0;
		ctx->err = saved;
		if (n >= sizeof(dir))
			return gpuenv_fail(ctx, -ENAMETOOLONG, path, 0, 0, "cache path too long");
		memcpy(dir, path, n);
		dir[n] = '\0';
		if ((r = mkdirs(dir)))
			return gpuenv_fail(ctx, r, dir, 0, 0, "cannot create the cache folder: %s",
				strerror(-r));
		r = gpuenv_fs_write_atomic_parts(ctx, path, parts, 2, 0644, GPUENV_FS_NOSYNC);
	}
	if (r)
		return gpuenv_fail(ctx, r, path, 0, 0, "cannot write a cache entry: %s", strerror(-r));
	return 0;
}

int ix_cache_store(gpuenv_ctx_t *ctx, const char *path, const ix_cache_entry_t *e,
	const void *data, size_t len)
{
	char hex[2 * GPUENV_SHA256_LEN + 1];
	unsigned char d[GPUENV_SHA256_LEN];
	gpuenv_buf_t b;
	int r;

	if (gpuenv_sha256(data, len, d))
		return gpuenv_oom(ctx, "for SHA-256");
	gpuenv_hex(d, sizeof(d), hex);
	gpuenv_buf_init(&b, ctx, 0);
	r = gpuenv_buf_printf(&b, MAGIC "status: %d\nstored: %lld\nmax-age: %lld\n", e->status,
		(long long)e->stored, (long long)e->max_age);
	if (!r && e->age > 0)
		r = gpuenv_buf_printf(&b, "age: %lld\n", (long long)e->age);
	if (!r && e->etag[0])
		r = gpuenv_buf_printf(&b, "etag: %s\n", e->etag);
	if (!r && e->last_modified[0])
		r = gpuenv_buf_printf(&b, "last-modified: %s\n", e->last_modified);
	if (!r && e->content_type[0])
		r = gpuenv_buf_printf(&b, "content-type: %s\n", e->content_type);
	if (!r && e->base_url[0])
		r = gpuenv_buf_printf(&b, "base-url: %s\n", e->base_url);
	if (!r)
		r = gpuenv_buf_printf(&b, "length: %zu\nsha256: %s\n\n", len, hex);
	if (r) {
		gpuenv_buf_free(&b);
		return gpuenv_oom(ctx, "for a cache entry");
	}
	/* the header and the body written one after the other: a page is
	 * not copied behind its header first */
	gpuenv_str_t parts[2] = { gpuenv_str_n(b.data, b.len), gpuenv_str_n(data, len) };
	r = write_entry(ctx, path, parts);
	gpuenv_buf_free(&b);
	return r;
}

bool ix_cache_fresh(const ix_cache_entry_t *e, int64_t now)
{
	if (e->immutable)
		return true;
	return e->max_age >= 0 && now >= e->stored && e->age < e->max_age &&
	       now - e->stored < e->max_age - e->age;
}
