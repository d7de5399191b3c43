/* gpuenv image manifests (image-manifest.json, docs/image.md): container
 * image references locked by digest, per platform, with the component
 * versions the knowledge base gives for the tag.  `gpuenv image lock` writes
 * the file, `gpuenv image check` re-resolves it, and `gpuenv export --format
 * dockerfile` looks a base image up in it to write FROM tag@digest.
 *
 * The format (schema "gpuenv.image-manifest/1"):
 *
 *   { "schema": "gpuenv.image-manifest/1",
 *     "images": [ { "ref": "nvcr.io/nvidia/pytorch:25.01-py3",
 *                   "registry": "nvcr.io", "repository": "nvidia/pytorch",
 *                   "tag": "25.01-py3",
 *                   "digest": "sha256:<64 hex>",       the tag's manifest or index
 *                   "media_type": "application/vnd.oci.image.index.v1+json",
 *                   "platforms": [ { "os": "linux", "architecture": "arm64",
 *                                    "variant": "v8", "digest": "sha256:..." } ],
 *                   "components": { "cuda": "12.8.0", "cudnn": "...", "nccl",
 *                                   "tensorrt", "torch", "python", "ubuntu",
 *                                   "driver_min" } } ] }
 *
 * images sorted by ref, platforms by os, architecture, variant; component
 * keys absent when the knowledge base does not know them; "media_type" and
 * "variant" optional.  The reader is strict: unknown keys, a ref that is not
 * the normalization of registry/repository:tag, a digest that is not
 * sha256:<64 lower-case hex>, a ref given twice are errors naming the file,
 * the entry and the key (JSON syntax errors: file:line:col).
 */
#ifndef GPUENV_IMAGE_MANIFEST_H
#define GPUENV_IMAGE_MANIFEST_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_IMAGE_MANIFEST_SCHEMA "gpuenv.image-manifest/1"
#define GPUENV_IMAGE_MANIFEST_MAX ((size_t)16 << 20) /* bytes the reader takes */
#define GPUENV_IMAGE_MAX_IMAGES 4096
#define GPUENV_IMAGE_MAX_PLATFORMS 64

/* ---- references ---------------------------------------------------------
 * An image reference as docker pull reads it (the distribution project's
 * reference grammar): [REGISTRY/]REPOSITORY[:TAG][@sha256:HEX].  The first
 * component is a registry when it holds a '.' or a ':' or is "localhost";
 * otherwise the registry is Docker Hub, written "docker.io" (its API host,
 * registry-1.docker.io, and index.docker.io are read as docker.io), where a
 * one-component name is under "library/".  The tag defaults to "latest". */
typedef struct gpuenv_image_ref {
	const char *registry;	/* "nvcr.io", "docker.io", "127.0.0.1:5000" */
	const char *repository; /* "nvidia/pytorch", "library/ubuntu" */
	const char *tag;	/* "25.01-py3" */
	const char *digest;	/* "sha256:..." when written with @, else NULL */
	const char *ref;	/* "registry/repository:tag" (no digest) */
} gpuenv_image_ref_t;

/* Parse and normalize text into arena.  0, or GPUENV_EUSAGE with ctx->err
 * naming the part that is wrong (a reference the user gave is a usage
 * error; the manifest reader turns it into a syntax error of the file). */
GPUENV_API int gpuenv_image_ref_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	gpuenv_image_ref_t *out);

/* "sha256:" and 64 lower-case hex digits. */
GPUENV_API bool gpuenv_image_digest_valid(gpuenv_str_t s);

/* ---- the manifest -------------------------------------------------------- */

typedef struct gpuenv_image_platform {
	const char *os, *architecture; /* "linux", "amd64" */
	const char *variant;	       /* "v8", or NULL */
	const char *digest;	       /* that platform's image manifest */
} gpuenv_image_platform_t;

/* What the knowledge base says the tag holds; NULL when it does not know. */
typedef struct gpuenv_image_components {
	const char *cuda, *cudnn, *nccl, *tensorrt, *torch, *python, *ubuntu, *driver_min;
} gpuenv_image_components_t;

/* The component keys in the file's order, and the field of each. */
#define GPUENV_IMAGE_NCOMPONENTS 8
GPUENV_API const char *gpuenv_image_component_name(size_t i);
GPUENV_API const char **gpuenv_image_component(gpuenv_image_components_t *c, size_t i);

typedef struct gpuenv_image_entry {
	const char *ref, *registry, *repository, *tag;
	const char *digest;
	const char *media_type; /* NULL when not recorded */
	gpuenv_image_platform_t *platforms;
	size_t nplatforms;
	gpuenv_image_components_t components;
} gpuenv_image_entry_t;

typedef struct gpuenv_image_manifest {
	gpuenv_image_entry_t *images; /* sorted by ref once read or normalized */
	size_t nimages;
} gpuenv_image_manifest_t;

/* Read the JSON text of an image manifest (name: the file, for messages)
 * into arena.  0, or GPUENV_ESYNTAX (file:line:col for JSON syntax;
 * "file: images[i].key: ..." for the rest), GPUENV_ETOOBIG, -ENOMEM; each
 * recorded in ctx->err with a hint. */
GPUENV_API int gpuenv_image_manifest_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *name, const char *text, size_t len, gpuenv_image_manifest_t *out);
/* The same over a file (a pipe is fine). */
GPUENV_API int gpuenv_image_manifest_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, gpuenv_image_manifest_t *out);

/* The entry of an image reference, as a user or a Dockerfile writes it
 * ("nvidia/cuda:12.4.1-runtime-ubuntu22.04" finds
 * "docker.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04"); NULL when the
 * manifest has none or ref is not a reference.  A ref written with
 * @sha256:... matches only an entry of that digest. */
GPUENV_API const gpuenv_image_entry_t *gpuenv_image_manifest_find(
	const gpuenv_image_manifest_t *m, const char *ref);

/* The digest of that entry (the tag's manifest or index), or NULL. */
GPUENV_API const char *gpuenv_image_manifest_digest(const gpuenv_image_manifest_t *m,
	const char *ref);

/* Sort m's images by ref and each one's platforms (in place). */
GPUENV_API void gpuenv_image_manifest_sort(gpuenv_image_manifest_t *m);

/* The manifest as JSON text (sorted, two-space indent, one newline at the
 * end) appended to out; the same input gives the same bytes.  0 or
 * -ENOMEM / GPUENV_ETOOBIG. */
GPUENV_API int gpuenv_image_manifest_format(gpuenv_ctx_t *ctx, const gpuenv_image_manifest_t *m,
	gpuenv_buf_t *out);
/* Write it to path atomically (nothing changes there on failure). */
GPUENV_API int gpuenv_image_manifest_write(gpuenv_ctx_t *ctx, const gpuenv_image_manifest_t *m,
	const char *path);

#ifdef __cplusplus
}
#endif
#endif
