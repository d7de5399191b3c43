/* gpuenv export: a target's lock as files other tools install from
 * (lib/export, docs/export.md).
 *
 *   requirements   pip requirements with a --hash for every file, or the
 *                  pins alone as constraints (requirements.c)
 *   dockerfile     a Dockerfile whose base image the knowledge base chose or
 *                  checked (gpuenv/base_image.h), the requirements it
 *                  installs and a .dockerignore (dockerfile.c)
 *   compose        docker-compose.yml, one service per target (compose.c)
 *
 * Nothing here prints: the texts, the paths and the warnings come back in
 * the results; a text is complete or the call fails ("out of memory", or
 * the package that cannot be exported), so no prefix of a file is ever
 * written. */
#ifndef GPUENV_EXPORT_H
#define GPUENV_EXPORT_H

#include "gpuenv/base_image.h"
#include "gpuenv/core.h"
#include "gpuenv/kb.h"
#include "gpuenv/manifest.h"
#include "gpuenv/pylock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The lock as pip requirements (constraints: the pins alone, index lines as
 * comments; hashes: a --hash for every file) appended to out.  0, or an
 * error in ctx: a package pip cannot take as asked (a directory or VCS
 * entry with hashes, a package of several files and no index), out of
 * memory, too big. */
GPUENV_API int gpuenv_export_requirements(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_lock_t *lk,
	const char *lock_path, bool constraints, bool hashes, gpuenv_buf_t *out);

#define GPUENV_EXPORT_MAX_WARNINGS (GPUENV_BASE_MAX_NOTES + 2)

typedef struct gpuenv_export_docker_req {
	const gpuenv_kb_t *kb;
	const gpuenv_manifest_t *m;	 /* the project (its name names the image) */
	const char *project_dir;	 /* the build context */
	const gpuenv_manifest_target_t *t;
	const gpuenv_lock_t *lk;	 /* t's lock */
	const char *lock_path;
	const char *base;		 /* IMAGE[:TAG][@DIGEST], or NULL: the rule chooses */
	bool trust_base;		 /* write a base the knowledge base does not know */
	const char *image_manifest;	 /* the image lock, or NULL: the project's
					    image-manifest.json when there */
	const char *out;		 /* the Dockerfile's path, or NULL: standard output */
} gpuenv_export_docker_req_t;

typedef struct gpuenv_export_docker {
	/* 0 on success; else enum gpuenv_base_verdict's exit class of the
	 * failure (1 refused, 2 usage, 4 cannot), the error in ctx */
	int status;
	gpuenv_base_image_t base;
	gpuenv_buf_t dockerfile, requirements; /* the texts (free with gpuenv_export_docker_free) */
	const char *dockerfile_name;	       /* as `docker build -f` names it */
	const char *requirements_name;	       /* as COPY names it */
	/* with req->out: the three files, beside each other */
	const char *dockerfile_path, *requirements_path, *ignore_path;
	bool wrote_ignore;		       /* gpuenv_export_docker_write made the .dockerignore */
	const char *platform;		       /* "linux/amd64", or NULL */
	const char *image;		       /* the image's repository name */
	/* what the user should know: the base's warnings, local files */
	const char *warnings[GPUENV_EXPORT_MAX_WARNINGS];
	size_t nwarnings;
} gpuenv_export_docker_t;

/* The Dockerfile of req->t and what goes beside it, as texts in out (the
 * base image judged, its digest from the image lock); nothing written.
 * 0, or an error (out->status its class). */
GPUENV_API int gpuenv_export_dockerfile(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_export_docker_req_t *req, gpuenv_export_docker_t *out);
/* Write out's files (req->out set): the requirements first, so the
 * Dockerfile never names a file that is not there; the .dockerignore only
 * when there is none.  0, or an error in ctx. */
GPUENV_API int gpuenv_export_docker_write(gpuenv_ctx_t *ctx, gpuenv_export_docker_t *out);
GPUENV_API void gpuenv_export_docker_free(gpuenv_export_docker_t *out);

typedef struct gpuenv_export_compose {
	gpuenv_buf_t text;	   /* docker-compose.yml (free with gpuenv_buf_free) */
	size_t nservices;	   /* one per target */
	/* the targets whose Dockerfile.<target> is not in the project yet */
	const char **missing; /* in arena */
	size_t nmissing;
	/* the Triton service ([tool.gpuenv.triton] repository), or NULL */
	const char *triton_image;  /* the tritonserver image it runs */
	const char *triton_target; /* the target whose driver chose it */
} gpuenv_export_compose_t;

/* docker-compose.yml of the project's targets, and a Triton Inference
 * Server service when pyproject.toml declares [tool.gpuenv.triton]
 * repository (its image from the KB for the target's driver unless image
 * names one; docs/export.md, "Triton"); out_path (may be NULL:
 * standard output) places the build context.  0, or an error (GPUENV_EUSAGE:
 * out_path outside the project). */
GPUENV_API int gpuenv_export_compose(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const struct gpuenv_kb *kb,
	const gpuenv_manifest_t *m, const char *project_dir, const gpuenv_manifest_target_t *targets, size_t ntargets,
	const char *out_path, gpuenv_export_compose_t *out);

#ifdef __cplusplus
}
#endif
#endif
