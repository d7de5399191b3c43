/* gpuenv dockerfile: the base image a Dockerfile's final stage runs on, as
 * `gpuenv preflight --dockerfile` needs it (lib/formats/dockerfile.c).
 *
 * Read as the Dockerfile reference describes: parser directives (`# escape=`)
 * at the top, comment lines, line continuations with the escape character,
 * instructions in any case.  ARGs declared before the first FROM (with their
 * defaults) are substituted in FROM lines ($NAME, ${NAME}, ${NAME:-word},
 * ${NAME:+word}); `FROM [--platform=P] IMAGE [AS NAME]`; the final stage is
 * the last FROM, and a stage built FROM an earlier stage's name is followed
 * to that stage's image. */
#ifndef GPUENV_DOCKERFILE_H
#define GPUENV_DOCKERFILE_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_DOCKERFILE_MAX ((size_t)1 << 20)

typedef struct gpuenv_dockerfile_base {
	const char *image;    /* "nvcr.io/nvidia/pytorch:24.05-py3" (arguments substituted) */
	const char *platform; /* --platform=, NULL: none */
	unsigned line;	      /* of the FROM that names image */
	unsigned stages;      /* FROM instructions in the file */
	const char *stage;    /* the final stage's AS name, NULL: none */
} gpuenv_dockerfile_base_t;

/* The final stage's base image of the Dockerfile text (file names it in
 * errors: "FILE:LINE: what is wrong").  GPUENV_ESYNTAX (a malformed FROM,
 * an ARG without a value used in FROM, no FROM at all, a stage cycle),
 * GPUENV_EUNSUPPORTED (FROM scratch: no image to judge), GPUENV_ETOOBIG;
 * strings in arena. */
GPUENV_API int gpuenv_dockerfile_base(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const char *text, size_t len, gpuenv_dockerfile_base_t *out);

#ifdef __cplusplus
}
#endif
#endif
