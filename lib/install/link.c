/* Link modes (include/gpuenv/install.h, "link modes"): how a file of a
 * cached tree is put into a stage dir.
 *
 *   hardlink  linkat: no data written, the venv shares the cache's inode
 *   reflink   a new file whose extents are the source's (ioctl FICLONE on
 *             btrfs, XFS, bcachefs...): a private inode, no data copied
 *   copy      copy_file_range (the kernel copies, or clones where it can),
 *             read/write where it cannot (old kernels, some file systems)
 *   auto      hardlink; where the two folders are not on one file system
 *             (EXDEV) or hardlinks are refused, reflink; where that is not
 *             supported either, copy.  Decided per file: nothing is
 *             remembered, so a caller that mixes folders gets the best
 *             mode for each.
 *
 * A new file (reflink, copy) is created with O_EXCL and perm, so the
 * process's umask applies as it does to pip's files; a failed one is
 * removed again. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/install.h"

#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int)
#endif

/* copy_file_range comes with glibc 2.27; declared here for older headers */
extern ssize_t copy_file_range(int, off_t *, int, off_t *, size_t, unsigned int);

static const char *const mode_names[] = { "auto", "hardlink", "reflink", "copy" };

int gpuenv_link_mode_parse(const char *text)
{
	for (int i = 0; text && i < (int)(sizeof(mode_names) / sizeof(mode_names[0])); i++)
		if (!strcmp(text, mode_names[i]))
			return i;
	return -1;
}

const char *gpuenv_link_mode_name(int mode)
{
	if (mode < 0 || mode >= (int)(sizeof(mode_names) / sizeof(mode_names[0])))
		return "unknown";
	return mode_names[mode];
}

/* The failure named by full paths (the descriptors' folders), not the
 * bare file names: "b2.bin: cannot copy b2.bin to b2.bin" says nothing of
 * where.  A full file system is named by core's hint; pruning the cache
 * (the source's folder) is offered only when it is on that file system.
 * remove: dst is a new file of ours, removed after the report. */
static int link_fail(gpuenv_ctx_t *ctx, int err, const char *what, int src_dirfd, const char *src,
	int dst_dirfd, const char *dst, bool remove)
{
	char sp[PATH_MAX], dp[PATH_MAX];

	gpuenv_fs_fd_path(src_dirfd, src, sp, sizeof(sp));
	gpuenv_fs_fd_path(dst_dirfd, dst, dp, sizeof(dp));
	gpuenv_fail(ctx, err, dp, 0, 0, "cannot %s %s here: %s", what, sp, strerror(-err));
	if (err == -ENOSPC || err == -EDQUOT)
		gpuenv_fs_full_hint(ctx, err, dst_dirfd, dst, src_dirfd,
			"the cache is on it too: `gpuenv cache prune` frees unused cache entries");
	if (remove)
		unlinkat(dst_dirfd, dst, 0);
	if (err == -EXDEV)
		return gpuenv_hint(ctx, "the cache and the venv are on different file systems: use "
					"the link mode auto or copy, or a cache folder on the venv's file system "
					"(GPUENV_CACHE_DIR)");
	if (err == -EOPNOTSUPP || err == -ENOTTY || err == -EINVAL)
		return gpuenv_hint(ctx, "this file system cannot clone files (reflinks need btrfs, XFS "
					"or similar): use the link mode auto or copy");
	return err;
}

/* The source open for reading, its stat in *st. */
static int open_src(int dirfd, const char *src, struct stat *st)
{
	int fd = openat(dirfd, src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int open_dst(int dirfd, const char *dst, unsigned perm)
{
	int fd = openat(dirfd, dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, (mode_t)perm);

	return fd < 0 ? -errno : fd;
}

/* Bytes of in (from its start) to out with read/write. */
static int copy_rw(int in, int out, off_t from)
{
	char buf[128 * 1024];

	if (lseek(in, from, SEEK_SET) < 0 || lseek(out, from, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return -errno;
			w += k;
		}
	}
}

static int fill_clone(int in, int out, off_t size, int *mode)
{
	(void)size;
	*mode = GPUENV_LINK_REFLINK;
	return ioctl(out, FICLONE, in) < 0 ? -errno : 0;
}

/* copy_file_range until the size fstat gave, then read/write whatever
 * remains (a file that grew, or a kernel or file system that cannot) */
static int fill_copy(int in, int out, off_t size, int *mode)
{
	off_t done = 0;

	*mode = GPUENV_LINK_COPY;
	while (done < size) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(size - done), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP &&
				errno != EPERM && errno != ETXTBSY)
				return -errno;
			break;
		}
		if (n == 0)
			break;
		done += n;
	}
	return copy_rw(in, out, done);
}

/* errors after which auto tries the next mode: the file systems differ, or
 * this one cannot do it (hardlinks refused: protected_hardlinks' EPERM,
 * EMLINK; no clone support) */
static bool fall_back(int err)
{
	return err == -EXDEV || err == -EPERM || err == -EMLINK || err == -EOPNOTSUPP ||
		err == -ENOTTY || err == -EINVAL || err == -ENOSYS;
}

/* auto past the hardlink: a clone, else a copy into the same new file
 * (no second create and unlink per file across file systems) */
static int fill_auto(int in, int out, off_t size, int *mode)
{
	int r = fill_clone(in, out, size, mode);

	return r && fall_back(r) ? fill_copy(in, out, size, mode) : r;
}

/* dst as a new file (perm) filled from src by fill (*mode: the mode it
 * used); on failure (*made: dst was created) the caller reports, then
 * removes it (link_fail): a full
 * file system's free bytes are read while the failed file still takes its
 * space. */
static int new_file(int src_dirfd, const char *src, int dst_dirfd, const char *dst, unsigned perm,
	int (*fill)(int in, int out, off_t size, int *mode), int *mode, bool *made)
{
	struct stat st;
	int in, out, r;

	*made = false;
	if ((in = open_src(src_dirfd, src, &st)) < 0)
		return in;
	if ((out = open_dst(dst_dirfd, dst, perm)) < 0) {
		close(in);
		return out;
	}
	*made = true;
	r = fill(in, out, st.st_size, mode);
	close(in);
	if (close(out) < 0 && !r)
		r = -errno;
	return r;
}

int gpuenv_link_file(gpuenv_ctx_t *ctx, int src_dirfd, const char *src, int dst_dirfd,
	const char *dst, unsigned perm, int mode, int *used)
{
	bool made = false;
	int r;

	if (used)
		*used = -1;
	switch (mode) {
	case GPUENV_LINK_HARDLINK:
		if (linkat(src_dirfd, src, dst_dirfd, dst, 0) < 0)
			return link_fail(ctx, -errno, "hardlink", src_dirfd, src, dst_dirfd, dst, false);
		break;
	case GPUENV_LINK_REFLINK:
		if ((r = new_file(src_dirfd, src, dst_dirfd, dst, perm, fill_clone, &mode, &made)))
			return link_fail(ctx, r, "reflink", src_dirfd, src, dst_dirfd, dst, made);
		break;
	case GPUENV_LINK_COPY:
		if ((r = new_file(src_dirfd, src, dst_dirfd, dst, perm, fill_copy, &mode, &made)))
			return link_fail(ctx, r, "copy", src_dirfd, src, dst_dirfd, dst, made);
		break;
	case GPUENV_LINK_AUTO:
		if (linkat(src_dirfd, src, dst_dirfd, dst, 0) == 0) {
			mode = GPUENV_LINK_HARDLINK;
			break;
		}
		r = -errno;
		if (!fall_back(r))
			return link_fail(ctx, r, "hardlink", src_dirfd, src, dst_dirfd, dst, false);
		if ((r = new_file(src_dirfd, src, dst_dirfd, dst, perm, fill_auto, &mode, &made)))
			return link_fail(ctx, r, mode == GPUENV_LINK_COPY ? "copy" : "reflink", src_dirfd,
				src, dst_dirfd, dst, made);
		break;
	default:
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "unknown link mode %d", mode);
	}
	if (used)
		*used = mode;
	return 0;
}
