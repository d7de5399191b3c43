/* Source distributions: the PKG-INFO of a .tar.gz sdist, read from the
 * gzip stream and the tar headers without unpacking anything (the sdist
 * spec: one top-level directory "{name}-{version}" holding PKG-INFO).
 * Whether PKG-INFO's metadata can be trusted without a build is PEP 643's
 * question (Metadata-Version >= 2.2, Requires-Dist not Dynamic), answered
 * by the caller from the parsed metadata. */
#ifndef GPUENV_SDIST_H
#define GPUENV_SDIST_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_SDIST_MAX_UNPACKED ((size_t)1 << 30) /* tar bytes read at most */

/* PKG-INFO of the gzip-compressed tar in data (file names it in messages),
 * copied into arena; at most max bytes.  GPUENV_ENOTFOUND when the archive
 * has no top-level PKG-INFO, GPUENV_EFORMAT for a damaged gzip or tar
 * stream, GPUENV_ETOOBIG past max or GPUENV_SDIST_MAX_UNPACKED, with
 * ctx->err set. */
GPUENV_API int gpuenv_sdist_pkg_info(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const void *data, size_t len, size_t max, gpuenv_str_t *out);

#ifdef __cplusplus
}
#endif
#endif
