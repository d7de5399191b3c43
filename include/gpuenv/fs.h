/* gpuenv fs: whole-file reads with a cap, checked opens of files found by a
 * scan, atomic writes, advisory locks. */
#ifndef GPUENV_FS_H
#define GPUENV_FS_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a whole file into buf (appended).  Files larger than max give
 * GPUENV_ETOOBIG; errors are recorded in ctx->err with the path. */
GPUENV_API int gpuenv_fs_read(gpuenv_ctx_t *ctx, const char *path, size_t max,
	gpuenv_buf_t *buf);

/* Read all of an open descriptor (stdin, a pipe) into buf, up to max bytes. */
GPUENV_API int gpuenv_fs_read_fd(gpuenv_ctx_t *ctx, int fd, const char *name,
	size_t max, gpuenv_buf_t *buf);

struct stat;

/* Open, for reading, a file that gpuenv found by itself (a folder listing, a
 * search path, an ld.so.cache entry, a DT_NEEDED name) rather than one the
 * user named: only a regular file is accepted, and that is checked before
 * anything can block (the open is O_NONBLOCK, so a FIFO opens at once and
 * is refused by the fstat that follows; a file the user names, such as
 * `--facts <(gpuenv probe --json)`, goes through gpuenv_fs_read and may be
 * a pipe).  path is relative to dirfd (AT_FDCWD: the current folder) unless
 * absolute.  Returns the descriptor (O_CLOEXEC; O_NONBLOCK, which a regular
 * file ignores) with *st filled when st is not NULL; or -errno, -EISDIR for
 * a folder, GPUENV_EFORMAT ("not a regular file") for a FIFO, socket or
 * device.  ctx not NULL: the error is recorded there with the path; NULL:
 * nothing is recorded (in a scan a miss is an ordinary answer). */
GPUENV_API int gpuenv_fs_open_regular(gpuenv_ctx_t *ctx, int dirfd, const char *path,
	struct stat *st);

/* Read the beginning of an open file into buf (reset first): at most max
 * bytes, and no more once stop (e.g. "\n\n", the end of a METADATA header
 * block; NULL: none) has been read.  Larger files are cut at max: callers
 * only need their beginning.  buf->data is "" for an empty file.  0 or
 * -errno / -ENOMEM; nothing is recorded in a context (the callers scan). */
GPUENV_API int gpuenv_fs_read_head(int fd, size_t max, const char *stop, gpuenv_buf_t *buf);

/* Lexically tidy a path in place: "//", "/./" and "x/../" folded ("/.." is
 * "/"; a relative path keeps its leading ".."; "" becomes "."). */
GPUENV_API void gpuenv_fs_tidy_path(char *path);

/* root + path with every symlink of path resolved inside root, as if root
 * were "/" (chroot-like: an absolute link target starts again at root, ".."
 * stops at it), into out.  root "" or NULL, or a relative path: root +
 * path unchanged.  A component that does not exist ends the resolution (the
 * rest is appended as it is, so an open then fails with ENOENT).  0, or
 * -ENAMETOOLONG, -ELOOP (more than 40 links). */
GPUENV_API int gpuenv_fs_resolve_in_root(const char *root, const char *path, char *out,
	size_t outsz);

/* ctx->root, when set (--root DIR), must be an existing folder: else -ENOENT
 * or -ENOTDIR, recorded with the path.  Without this check a mistyped root
 * gives a plausible report of an empty machine. */
GPUENV_API int gpuenv_fs_check_root(gpuenv_ctx_t *ctx);

/* Write data to path atomically: a temporary file in the same folder, fsync,
 * rename over path, fsync of the folder.  On any failure path is untouched and
 * the temporary file removed.  mode is the new file's permission bits. */
GPUENV_API int gpuenv_fs_write_atomic(gpuenv_ctx_t *ctx, const char *path,
	const void *data, size_t len, unsigned mode);
/* As gpuenv_fs_write_atomic; GPUENV_FS_NOSYNC: atomic but not durable (no
 * fsync of the file or the folder), for caches whose entries are checked
 * on every read and fetched again when lost or torn. */
#define GPUENV_FS_NOSYNC 1u
/* GPUENV_FS_HIDDEN_TMP: the temporary file is ".NAME.tmp.XXXXXX", a dot
 * file, for folders whose readers skip dot files but would read a
 * half-written NAME.tmp (node-feature-discovery's features.d). */
#define GPUENV_FS_HIDDEN_TMP 2u
GPUENV_API int gpuenv_fs_write_atomic_ex(gpuenv_ctx_t *ctx, const char *path,
	const void *data, size_t len, unsigned mode, unsigned flags);
/* As gpuenv_fs_write_atomic_ex, the file's bytes given as nparts pieces
 * written one after the other: a header and a large body that are not
 * together in memory, without a copy of both (the index client's cache). */
GPUENV_API int gpuenv_fs_write_atomic_parts(gpuenv_ctx_t *ctx, const char *path,
	const gpuenv_str_t *parts, size_t nparts, unsigned mode, unsigned flags);
/* The temporaries of path's atomic writes that a killed writer left
 * ("NAME.tmp.*", ".NAME.tmp.*" beside it) removed: a writer holds a flock
 * on its temporary until the rename, so one that can be locked and is
 * older than a few seconds is a dead process's.  A live writer's is never
 * touched.  Durable atomic writes call it; best effort, no error. */
GPUENV_API void gpuenv_fs_clean_tmp(const char *path);
/* A buffer's text written as gpuenv_fs_write_atomic_ex does, after the one
 * check of the buffer (gpuenv_buf_failed): when an append failed, nothing is
 * written and that failure is returned (ctx->err tells it), so a cut text
 * never reaches the file. */
GPUENV_API int gpuenv_fs_write_buf(gpuenv_ctx_t *ctx, const char *path, gpuenv_buf_t *b,
	unsigned mode, unsigned flags);

/* mkdir -p: path and the folders above it, each with mode (umask applies);
 * folders already there are fine.  0, or -errno / -ENAMETOOLONG recorded
 * ("PATH: cannot create the folder: ..."). */
GPUENV_API int gpuenv_fs_mkdirs(gpuenv_ctx_t *ctx, const char *path, unsigned mode);

/* The full path of name in the folder dirfd (AT_FDCWD: the working folder;
 * an absolute name is itself) into out, from /proc/self/fd; name alone when
 * the folder's path cannot be read.  out is always terminated. */
GPUENV_API void gpuenv_fs_fd_path(int dirfd, const char *name, char *out, size_t outsz);
/* After err (-ENOSPC or -EDQUOT; any other err: nothing is done) writing
 * into the folder dirfd (AT_FDCWD and a path with a folder work too: path
 * is then opened): a hint on ctx's error naming the file system that is
 * full, its mount point (/proc/self/mountinfo), type, free bytes and
 * inodes (statvfs), and the fix, to free space on it.  same_tip (NULL:
 * none) is a way to free space that only helps on one file system, that of
 * the folder same_fd ("`gpuenv cache prune` frees unused cache entries":
 * same_fd the cache's): added only when same_fd is on the full one, or
 * always when same_fd is -1 (the full folder is the cache's own).
 * Returns ctx->err.code. */
GPUENV_API int gpuenv_fs_full_hint(gpuenv_ctx_t *ctx, int err, int dirfd, const char *path,
	int same_fd, const char *same_tip);

/* Advisory lock (flock) on path, created if missing.  exclusive: writer lock;
 * wait: block until free, else GPUENV_ELOCKED when held elsewhere.  On
 * success *fd_out holds the descriptor to pass to gpuenv_fs_unlock. */
GPUENV_API int gpuenv_fs_lock(gpuenv_ctx_t *ctx, const char *path,
	bool exclusive, bool wait, int *fd_out);
GPUENV_API void gpuenv_fs_unlock(int fd);

#ifdef __cplusplus
}
#endif
#endif
