/* Whole-file reads, atomic writes and advisory locks. */
#define _GNU_SOURCE
#include "gpuenv/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int gpuenv_fs_read_fd(gpuenv_ctx_t *ctx, int fd, const char *name, size_t max,
	gpuenv_buf_t *buf)
{
	size_t start = buf->len;

	for (;;) {
		int r = gpuenv_buf_reserve(buf, 65536);
		if (r == GPUENV_ETOOBIG) {
			/* there may be room for less than a full block */
			size_t room = buf->max - buf->len;
			if (!room || (r = gpuenv_buf_reserve(buf, room)) != 0)
				room = 0;
			if (!room)
				goto toobig;
		} else if (r) {
			return gpuenv_fail(ctx, r, name, 0, 0, "%s", gpuenv_strerror(r));
		}
		size_t want = buf->cap - buf->len - 1;
		if (buf->len - start + want > max)
			want = max - (buf->len - start) + 1; /* one byte over: detect */
		ssize_t n = read(fd, buf->data + buf->len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return gpuenv_fail(ctx, -errno, name, 0, 0, "read: %s", strerror(errno));
		}
		if (n == 0)
			break;
		buf->len += (size_t)n;
		buf->data[buf->len] = '\0';
		if (buf->len - start > max)
			goto toobig;
	}
	return 0;
toobig:
	buf->len = start;
	if (buf->data)
		buf->data[start] = '\0';
	gpuenv_fail(ctx, GPUENV_ETOOBIG, name, 0, 0, "larger than the %zu-byte limit", max);
	return GPUENV_ETOOBIG;
}

int gpuenv_fs_read(gpuenv_ctx_t *ctx, const char *path, size_t max, gpuenv_buf_t *buf)
{
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "%s", strerror(errno));
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			return gpuenv_fail(ctx, -EISDIR, path, 0, 0, "%s", strerror(EISDIR));
		}
		if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
			close(fd);
			return gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0,
				"file is %lld bytes, over the %zu-byte limit",
				(long long)st.st_size, max);
		}
		if (S_ISREG(st.st_mode) && st.st_size > 0)
			gpuenv_buf_reserve(buf, (size_t)st.st_size);
	}
	r = gpuenv_fs_read_fd(ctx, fd, path, max, buf);
	close(fd);
	return r;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int gpuenv_fs_write_atomic(gpuenv_ctx_t *ctx, const char *path, const void *data,
	size_t len, unsigned mode)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	const char *slash;
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return gpuenv_fail(ctx, -ENAMETOOLONG, path, 0, 0, "path too long");
	fd = mkstemp(tmp);
	if (fd < 0)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "cannot create temporary file: %s",
			strerror(errno));
	r = write_all(fd, data, len);
	if (!r && fchmod(fd, mode & 07777) != 0)
		r = -errno;
	if (!r && fsync(fd) != 0)
		r = -errno;
	if (close(fd) != 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) != 0)
		r = -errno;
	if (r) {
		unlink(tmp);
		return gpuenv_fail(ctx, r, path, 0, 0, "cannot write: %s", strerror(-r));
	}
	/* make the rename itself durable */
	slash = strrchr(path, '/');
	if (slash) {
		size_t n = (size_t)(slash - path);
		if (n == 0)
			n = 1;
		if (n < sizeof(dir)) {
			memcpy(dir, path, n);
			dir[n] = '\0';
		} else {
			dir[0] = '\0';
		}
	} else {
		dir[0] = '.';
		dir[1] = '\0';
	}
	if (dir[0]) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	return 0;
}

int gpuenv_fs_lock(gpuenv_ctx_t *ctx, const char *path, bool exclusive, bool wait,
	int *fd_out)
{
	int fd, op;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "cannot open lock file: %s",
			strerror(errno));
	op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
	while (flock(fd, op) != 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		close(fd);
		if (e == EWOULDBLOCK) {
			gpuenv_fail(ctx, GPUENV_ELOCKED, path, 0, 0,
				"locked by another gpuenv process");
			return gpuenv_hint(ctx, "wait for it to finish, or remove %s if no "
				"gpuenv is running", path);
		}
		return gpuenv_fail(ctx, -e, path, 0, 0, "cannot lock: %s", strerror(e));
	}
	*fd_out = fd;
	return 0;
}

void gpuenv_fs_unlock(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}
