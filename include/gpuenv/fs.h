/* gpuenv fs: whole-file reads with a cap, atomic writes, advisory locks. */
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

/* Write data to path atomically: a temporary file in the same folder, fsync,
 * rename over path, fsync of the folder.  On any failure path is untouched and
 * the temporary file removed.  mode is the new file's permission bits. */
GPUENV_API int gpuenv_fs_write_atomic(gpuenv_ctx_t *ctx, const char *path,
	const void *data, size_t len, unsigned mode);

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
