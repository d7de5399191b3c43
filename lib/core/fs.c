/* Whole-file reads, atomic writes and advisory locks. */
#define _GNU_SOURCE
#include "gpuenv/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
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

int gpuenv_fs_open_regular(gpuenv_ctx_t *ctx, int dirfd, const char *path, struct stat *st)
{
	struct stat local;
	int fd, e;

	if (!st)
		st = &local;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		e = -errno;
		return ctx ? gpuenv_fail(ctx, e, path, 0, 0, "%s", strerror(-e)) : e;
	}
	if (fstat(fd, st) != 0) {
		e = -errno;
		close(fd);
		return ctx ? gpuenv_fail(ctx, e, path, 0, 0, "%s", strerror(-e)) : e;
	}
	if (S_ISREG(st->st_mode))
		return fd;
	close(fd);
	if (S_ISDIR(st->st_mode))
		return ctx ? gpuenv_fail(ctx, -EISDIR, path, 0, 0, "%s", strerror(EISDIR)) : -EISDIR;
	if (ctx) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, path, 0, 0, "not a regular file (%s)",
			S_ISFIFO(st->st_mode) ? "a FIFO" : S_ISSOCK(st->st_mode) ? "a socket"
											: "a device");
		gpuenv_hint(ctx, "gpuenv reads only regular files it finds by itself");
	}
	return GPUENV_EFORMAT;
}

/* Whether stop[0..slen) occurs in p[0..n): memchr for its first byte (a
 * vector scan) instead of glibc's generic memmem, which showed up as a
 * tenth of a stack probe's instructions for the "\n\n" of METADATA. */
static bool has_stop(const char *p, size_t n, const char *stop, size_t slen)
{
	const char *end = p + n, *q = p;

	while (slen && (size_t)(end - q) >= slen && (q = memchr(q, stop[0], (size_t)(end - q) - slen + 1))) {
		if (memcmp(q, stop, slen) == 0)
			return true;
		q++;
	}
	return false;
}

int gpuenv_fs_read_head(int fd, size_t max, const char *stop, gpuenv_buf_t *buf)
{
	size_t chunk = stop ? 8192 : 65536, slen = stop ? strlen(stop) : 0;
	int r = 0;

	gpuenv_buf_reset(buf);
	while (buf->len < max) {
		size_t want = max - buf->len;
		if (want > chunk)
			want = chunk;
		if ((r = gpuenv_buf_reserve(buf, want)) != 0)
			break;
		ssize_t got = read(fd, buf->data + buf->len, want);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (got == 0)
			break;
		size_t from = buf->len > slen ? buf->len - slen : 0;
		buf->len += (size_t)got;
		buf->data[buf->len] = '\0';
		/* the marker may straddle two reads: look from just before */
		if (stop && has_stop(buf->data + from, buf->len - from, stop, slen))
			break;
	}
	if (!buf->data && r == 0)
		r = gpuenv_buf_reserve(buf, 1); /* an empty file still gives "" */
	return r;
}

/* The next component of a path: skips slashes, returns its start (at the
 * NUL when there is none) and sets *end just past it. */
static const char *component(const char *p, const char **end)
{
	while (*p == '/')
		p++;
	const char *q = p;
	while (*q && *q != '/')
		q++;
	*end = q;
	return p;
}

void gpuenv_fs_tidy_path(char *path)
{
	size_t starts[PATH_MAX / 2], nst = 0, o = 0, base;
	const char *p = path, *q;
	bool abs = path[0] == '/';

	/* components are copied down one by one (o never passes p, so the
	 * copy is safe in place); ".." drops the last kept component */
	if (abs)
		path[o++] = '/';
	base = o;
	while (*(p = component(p, &q))) {
		size_t len = (size_t)(q - p);
		bool dotdot = len == 2 && p[0] == '.' && p[1] == '.';
		if (len == 1 && p[0] == '.') {
			/* nothing */
		} else if (dotdot && nst > 0 &&
			!(o - starts[nst - 1] == 2 && path[starts[nst - 1]] == '.' &&
				path[starts[nst - 1] + 1] == '.')) {
			o = starts[--nst];
			if (o > base)
				o--;
		} else if (dotdot && abs && nst == 0) {
			/* "/.." is "/" */
		} else {
			if (o > base)
				path[o++] = '/';
			if (nst < sizeof(starts) / sizeof(starts[0]))
				starts[nst++] = o;
			memmove(path + o, p, len);
			o += len;
		}
		p = q;
	}
	if (o == 0)
		path[o++] = '.';
	path[o] = '\0';
}

int gpuenv_fs_resolve_in_root(const char *root, const char *path, char *out, size_t outsz)
{
	char rest[PATH_MAX], tmp[PATH_MAX], link[PATH_MAX];
	size_t base, len, links = 0;
	const char *p;

	if (!root || !root[0] || path[0] != '/') {
		int n = snprintf(out, outsz, "%s%s", path[0] == '/' && root ? root : "", path);
		return n >= 0 && (size_t)n < outsz ? 0 : -ENAMETOOLONG;
	}
	base = strlen(root);
	while (base > 0 && root[base - 1] == '/')
		base--; /* root "/" is base 0 */
	if (base >= outsz || strlen(path) >= sizeof(rest))
		return -ENAMETOOLONG;
	memcpy(out, root, base);
	len = base;
	out[len] = '\0';
	strcpy(rest, path);
	p = rest;
	for (const char *q; *(p = component(p, &q));) {
		struct stat st;
		size_t cl = (size_t)(q - p);
		if (cl == 1 && p[0] == '.') {
			p = q;
			continue;
		}
		if (cl == 2 && p[0] == '.' && p[1] == '.') {
			while (len > base && out[len - 1] != '/')
				len--;
			if (len > base)
				len--;
			out[len] = '\0';
			p = q;
			continue;
		}
		if (len + 1 + cl >= outsz)
			return -ENAMETOOLONG;
		out[len] = '/';
		memcpy(out + len + 1, p, cl);
		size_t prev = len;
		len += 1 + cl;
		out[len] = '\0';
		if (lstat(out, &st) != 0) {
			/* the rest cannot be resolved: appended as it is */
			if (len + strlen(q) >= outsz)
				return -ENAMETOOLONG;
			strcpy(out + len, q);
			return 0;
		}
		if (!S_ISLNK(st.st_mode)) {
			p = q;
			continue;
		}
		if (++links > 40)
			return -ELOOP;
		ssize_t n = readlink(out, link, sizeof(link) - 1);
		if (n < 0) {
			p = q;
			continue;
		}
		link[n] = '\0';
		/* the target replaces the component: from root when absolute */
		len = link[0] == '/' ? base : prev;
		out[len] = '\0';
		size_t ql = strlen(q);
		if ((size_t)n + 1 + ql >= sizeof(tmp))
			return -ENAMETOOLONG;
		memcpy(tmp, link, (size_t)n);
		tmp[n] = '/';
		memcpy(tmp + n + 1, q, ql + 1);
		memcpy(rest, tmp, (size_t)n + 2 + ql);
		p = rest;
	}
	if (len == 0) {
		if (outsz < 2)
			return -ENAMETOOLONG;
		out[len++] = '/';
		out[len] = '\0';
	}
	return 0;
}

int gpuenv_fs_check_root(gpuenv_ctx_t *ctx)
{
	struct stat st;

	if (!ctx->root || !ctx->root[0])
		return 0;
	if (stat(ctx->root, &st) != 0) {
		int e = -errno;
		gpuenv_fail(ctx, e, ctx->root, 0, 0, "--root: %s", e == -ENOENT
			? "no such folder" : strerror(-e));
		return gpuenv_hint(ctx, "give the folder that holds the machine's /etc, /proc, /sys "
			"and /usr");
	}
	if (!S_ISDIR(st.st_mode))
		return gpuenv_fail(ctx, -ENOTDIR, ctx->root, 0, 0, "--root: not a folder");
	return 0;
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

int gpuenv_fs_write_buf(gpuenv_ctx_t *ctx, const char *path, gpuenv_buf_t *b, unsigned mode,
	unsigned flags)
{
	int r = gpuenv_buf_failed(b);

	return r ? r : gpuenv_fs_write_atomic_ex(ctx, path, b->data ? b->data : "", b->len, mode, flags);
}

int gpuenv_fs_write_atomic(gpuenv_ctx_t *ctx, const char *path, const void *data,
	size_t len, unsigned mode)
{
	return gpuenv_fs_write_atomic_ex(ctx, path, data, len, mode, 0);
}

/* a writer's temporary lives a moment between mkstemp and its flock */
#define STALE_TMP_S 10

void gpuenv_fs_clean_tmp(const char *path)
{
	char dir[PATH_MAX];
	const char *base = strrchr(path, '/');
	size_t bl, dl = base ? (size_t)(base - path) : 0;
	DIR *d;
	struct dirent *e;

	base = base ? base + 1 : path;
	bl = strlen(base);
	if (dl >= sizeof(dir) || !bl)
		return;
	memcpy(dir, path, dl);
	dir[dl] = '\0';
	if (!(d = opendir(dl ? dir : (base == path ? "." : "/"))))
		return;
	while ((e = readdir(d))) {
		const char *n = e->d_name + (e->d_name[0] == '.');
		struct stat st;
		int fd;
		if (strncmp(n, base, bl) || strncmp(n + bl, ".tmp.", 5))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime < time(NULL) - STALE_TMP_S &&
			flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

int gpuenv_fs_write_atomic_ex(gpuenv_ctx_t *ctx, const char *path, const void *data,
	size_t len, unsigned mode, unsigned flags)
{
	gpuenv_str_t part = gpuenv_str_n(data, len);

	return gpuenv_fs_write_atomic_parts(ctx, path, &part, 1, mode, flags);
}

int gpuenv_fs_write_atomic_parts(gpuenv_ctx_t *ctx, const char *path, const gpuenv_str_t *parts,
	size_t nparts, unsigned mode, unsigned flags)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	const char *slash;
	int fd, r;

	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if ((flags & GPUENV_FS_HIDDEN_TMP ? snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.XXXXXX", (int)(base - path),
		path, base) : snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path)) >= (int)sizeof(tmp))
		return gpuenv_fail(ctx, -ENAMETOOLONG, path, 0, 0, "path too long");
	if (!(flags & GPUENV_FS_NOSYNC))
		gpuenv_fs_clean_tmp(path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		r = -errno;
		gpuenv_fail(ctx, r, path, 0, 0, "cannot create temporary file: %s", strerror(-r));
		return gpuenv_fs_full_hint(ctx, r, AT_FDCWD, path, -1, NULL);
	}
	/* held until the rename: a cleaner tells a live writer's by it */
	flock(fd, LOCK_EX | LOCK_NB);
	r = 0;
	for (size_t i = 0; i < nparts && !r; i++)
		r = write_all(fd, parts[i].ptr, parts[i].len);
	if (!r && fchmod(fd, mode & 07777) != 0)
		r = -errno;
	if (!r && !(flags & GPUENV_FS_NOSYNC) && fsync(fd) != 0)
		r = -errno;
	if (close(fd) != 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) != 0)
		r = -errno;
	if (r) {
		/* the hint first: the free bytes while the temporary still holds its share */
		gpuenv_fail(ctx, r, path, 0, 0, "cannot write: %s", strerror(-r));
		gpuenv_fs_full_hint(ctx, r, AT_FDCWD, path, -1, NULL);
		unlink(tmp);
		return r;
	}
	if (flags & GPUENV_FS_NOSYNC)
		return 0;
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

void gpuenv_fs_fd_path(int dirfd, const char *name, char *out, size_t outsz)
{
	char dir[PATH_MAX], link[64];
	ssize_t n = -1;

	if (!outsz)
		return;
	if (name && name[0] == '/') {
		snprintf(out, outsz, "%s", name);
		return;
	}
	if (dirfd == AT_FDCWD) {
		n = getcwd(dir, sizeof(dir)) ? (ssize_t)strlen(dir) : -1;
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		n = readlink(link, dir, sizeof(dir) - 1);
	}
	if (n <= 0 || dir[0] != '/') {
		snprintf(out, outsz, "%s", name ? name : ".");
		return;
	}
	dir[n] = '\0';
	if (!name || !name[0])
		snprintf(out, outsz, "%s", dir);
	else
		snprintf(out, outsz, "%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", name);
}

/* mountinfo's octal escapes (\040 for a space) undone in place */
static void mount_unescape(char *s)
{
	char *w = s;

	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
			p[3] >= '0' && p[3] <= '7') {
			*w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
}

/* The mount point and type of the file system dev, the one whose mount
 * point is the longest prefix of path among those (bind mounts share a
 * device); false when /proc/self/mountinfo does not say. */
static bool mount_of(dev_t dev, const char *path, char *mnt, size_t mntsz, char *type, size_t typesz)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	size_t best = 0;
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned ma, mi;
		char point[PATH_MAX], fstype[64];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %u:%u %*s %4095s", &ma, &mi, point) != 3 ||
			sscanf(dash + 3, "%63s", fstype) != 1 || makedev(ma, mi) != dev)
			continue;
		mount_unescape(point);
		size_t pl = strlen(point);
		bool prefix = !strcmp(point, "/") ||
			(!strncmp(path, point, pl) && (path[pl] == '/' || path[pl] == '\0'));
		if (found && !(prefix && pl > best))
			continue;
		if (!found || prefix) {
			snprintf(mnt, mntsz, "%s", point);
			snprintf(type, typesz, "%s", fstype);
			best = prefix ? pl : 0;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* bytes as "12.3 MiB" (B, KiB, MiB, GiB, TiB) */
static void human_bytes(unsigned long long b, char *out, size_t n)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, n, "%llu bytes", b);
	else
		snprintf(out, n, "%.1f %s", v, unit[u]);
}

int gpuenv_fs_full_hint(gpuenv_ctx_t *ctx, int err, int dirfd, const char *path, int same_fd,
	const char *same_tip)
{
	char full[PATH_MAX], mnt[PATH_MAX] = "", type[64] = "", freeb[32], total[32], inodes[64] = "";
	struct stat st, so;
	struct statvfs vfs;
	int fd = dirfd;

	if (err != -ENOSPC && err != -EDQUOT)
		return ctx->err.code;
	if (dirfd == AT_FDCWD && path && strchr(path, '/')) {
		/* the folder of path: the nearest one that exists */
		snprintf(full, sizeof(full), "%s", path);
		for (char *slash; fd == AT_FDCWD && (slash = strrchr(full, '/'));) {
			*slash = '\0';
			fd = open(full[0] ? full : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				fd = AT_FDCWD;
		}
	}
	gpuenv_fs_fd_path(fd, fd == dirfd ? path : NULL, full, sizeof(full));
	bool ok = (fd == AT_FDCWD ? stat(".", &st) : fstat(fd, &st)) == 0 &&
		(fd == AT_FDCWD ? statvfs(".", &vfs) : fstatvfs(fd, &vfs)) == 0;
	if (fd != dirfd)
		close(fd);
	if (!ok)
		return gpuenv_hint(ctx, "%s: free some space on the file system that holds %s",
			err == -EDQUOT ? "the disk quota is used up" : "the file system is full", full);
	if (!mount_of(st.st_dev, full, mnt, sizeof(mnt), type, sizeof(type)))
		snprintf(mnt, sizeof(mnt), "(device %u:%u)", major(st.st_dev), minor(st.st_dev));
	human_bytes((unsigned long long)vfs.f_bavail * vfs.f_frsize, freeb, sizeof(freeb));
	human_bytes((unsigned long long)vfs.f_blocks * vfs.f_frsize, total, sizeof(total));
	if (vfs.f_files && vfs.f_favail == 0)
		snprintf(inodes, sizeof(inodes), ", no inode left (of %llu)", (unsigned long long)vfs.f_files);
	bool same = same_tip && (same_fd == -1 || (fstat(same_fd, &so) == 0 && so.st_dev == st.st_dev));
	return gpuenv_hint(ctx, "%sthe file system mounted on %s%s%s%s %s: %s free of %s%s; free "
				"space on it%s%s%s",
		err == -EDQUOT ? "your disk quota on " : "", mnt, type[0] ? " (" : "", type, type[0] ? ")" : "",
		err == -EDQUOT ? "is used up" : "is full", freeb, total, inodes,
		err == -EDQUOT ? " (or ask for a larger quota)" : "", same ? "; " : "", same ? same_tip : "");
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
			/* an flock dies with its process: a held one is a live
			 * process, and removing the file would not free it */
			return gpuenv_hint(ctx, "wait for it to finish (`fuser %s` names it)", path);
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

int gpuenv_fs_mkdirs(gpuenv_ctx_t *ctx, const char *path, unsigned mode)
{
	char p[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(p))
		return gpuenv_fail(ctx, -ENAMETOOLONG, path, 0, 0, "path too long");
	memcpy(p, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		char c = p[i];
		if (c != '/' && c != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
			int e = -errno;
			gpuenv_fail(ctx, e, p, 0, 0, "cannot create the folder: %s", strerror(-e));
			return gpuenv_fs_full_hint(ctx, e, AT_FDCWD, p, -1, NULL);
		}
		p[i] = c;
	}
	return 0;
}
