/* gpuenv image lock / check (lib/image/image_lock.c; docs/image.md): container
 * image references resolved to digests through the registry client
 * (gpuenv/registry.h), with the components the knowledge base gives for
 * each tag, as image-manifest.json entries (gpuenv/image_manifest.h). */
#ifndef GPUENV_IMAGE_H
#define GPUENV_IMAGE_H

#include "gpuenv/image_manifest.h"
#include "gpuenv/kb.h"
#include "gpuenv/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What happened to one reference. */
typedef struct gpuenv_image_result {
	int err; /* 0, or the registry's failure (gpuenv_registry_resolve's codes) */
	gpuenv_error_t error;
	bool kb_known;	   /* the components come from a KB row or a tag grammar */
	char kb_note[512]; /* when not: what the knowledge base said */
	bool sent_credentials;
} gpuenv_image_result_t;

/* The components the knowledge base gives for a normalized reference
 * (ngc.toml rows by image and tag; nvidia/cuda and pytorch/pytorch tags by
 * their grammar and images.toml; driver_min from cuda.toml), in arena.
 * 0, or the KB's GPUENV_ENOTFOUND / GPUENV_EUSAGE (a tag that does not fit
 * its image's grammar) in ctx->err, *out then all NULL. */
GPUENV_API int gpuenv_image_components(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb,
	gpuenv_arena_t *arena, const gpuenv_image_ref_t *ref, gpuenv_image_components_t *out);

/* Resolve every reference (tags; a reference with a digest is a usage
 * error of the caller) in parallel and fill out[i]: its parts, the digest,
 * media type, the linux/amd64 and linux/arm64 platforms (sorted) and, when
 * kb is not NULL, the components.  res[i] says how each went.  0 when every
 * reference was asked (failures per reference), or the run's own error. */
GPUENV_API int gpuenv_image_lock(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_registry_opts_t *ro, const gpuenv_kb_t *kb, const gpuenv_image_ref_t *refs,
	size_t n, gpuenv_image_entry_t *out, gpuenv_image_result_t *res);

#ifdef __cplusplus
}
#endif
#endif
