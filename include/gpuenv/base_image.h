/* The base image of an exported Dockerfile (lib/kb/base_image.c; docs/export.md,
 * "The base image"): chosen for a target and its lock, or a given one
 * checked, beside the other image rules of the knowledge base
 * (gpuenv_kb_image_lookup / gpuenv_kb_image_check, as `preflight --image`
 * and `kb image` ask them).
 *
 * The rule: the lock carries the framework (torch and its nvidia-* wheels)
 * into a venv, so the base is a slim nvidia/cuda image (an NGC framework
 * image would hold a second torch): of the lock's CUDA major, the lock's CUDA
 * release or the nearest newer one of that major, flavour base when the lock
 * brings the CUDA runtime as a wheel and runtime otherwise, on the Ubuntu
 * whose python3 is the target's Python, that the target's driver runs; then
 * by the driver's own support before compatibility, NVIDIA's supported tags
 * before end-of-life ones, the newest patch release. */
#ifndef GPUENV_BASE_IMAGE_H
#define GPUENV_BASE_IMAGE_H

#include "gpuenv/core.h"
#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_BASE_MAX_GPUS 8
#define GPUENV_BASE_MAX_NOTES 12

/* What the base image is judged for: the target (as the KB sees it) and
 * what its lock installs. */
typedef struct gpuenv_base_need {
	const char *target;	 /* its name, for messages */
	const char *platform;	 /* the wheel platform it declares, or NULL */
	const char *driver;	 /* "570.86.10", or NULL */
	const char *driver_cuda; /* the newest CUDA its driver runs, or NULL */
	const char *python;	 /* "3.12", or NULL: none declared */
	const char *cuda;	 /* the CUDA its environment uses ("12.6": a Jetson's JetPack), or NULL */
	const gpuenv_kb_target_t *kts; /* one per GPU (gpuenv_target_kb) */
	size_t nkts;
	/* the lock: its path (messages), its torch build ([tool.gpuenv]
	 * backend, "cu126"), its packages' names and versions */
	const char *lock_path;
	const char *backend;
	const char *const *names;
	const char *const *versions;
	size_t npkgs;
} gpuenv_base_need_t;

/* A base image, judged. */
typedef struct gpuenv_base_image {
	const char *ref;    /* IMAGE:TAG as FROM writes it */
	const char *digest; /* "sha256:...", or NULL */
	gpuenv_kb_image_ref_t img;
	bool known;	    /* the knowledge base judged it */
	bool chosen;	    /* by the rule (not given) */
	int runs;	    /* enum gpuenv_kb_runs, the worst over the target's GPUs */
	gpuenv_kb_ver_t python; /* the image's Python, n 0: unknown */
	gpuenv_str_t ubuntu;	/* "22.04", or a NULL slice */
	const char *flavour;	/* nvidia/cuda: "runtime", ... */
	const char *notes[GPUENV_BASE_MAX_NOTES]; /* why, one line each (Dockerfile comments) */
	size_t nnotes;
	const char *warns[GPUENV_BASE_MAX_NOTES]; /* what the user should know */
	size_t nwarns;
	/* where the Dockerfile's Python comes from (enum gpuenv_base_python) */
	int python_from;
	/* NVIDIA_REQUIRE_CUDA for the NVIDIA container toolkit ("cuda>=12.6,arch>=8.0"),
	 * and why, or NULL: a target without a GPU */
	const char *require_cuda;
	const char *require_why;
	/* the lock's CUDA, as the rule read it */
	gpuenv_kb_ver_t py;	/* the target's Python, MAJOR.MINOR (n 0: none) */
	unsigned major;		/* 0: no CUDA build in the lock */
	const char *cuda_from;	/* what says so */
} gpuenv_base_image_t;

/* Where the image's Python comes from. */
enum gpuenv_base_python {
	GPUENV_BASE_PY_SYSTEM = 0, /* the image's OS python3 (apt-get: Ubuntu, L4T) */
	GPUENV_BASE_PY_IMAGE,	   /* the image's own (Docker's python images) */
	GPUENV_BASE_PY_UV,	   /* a uv-managed Python, installed by the Dockerfile */
};

/* The uv image the Dockerfile copies uv from (GPUENV_BASE_PY_UV). */
#define GPUENV_BASE_UV_IMAGE "ghcr.io/astral-sh/uv:0.8.14"

/* How a judgement ended (the error in ctx for every value but OK). */
enum gpuenv_base_verdict {
	GPUENV_BASE_OK = 0,
	GPUENV_BASE_REFUSED = 1,  /* the knowledge base says it cannot work */
	GPUENV_BASE_USAGE = 2,	  /* a tag that does not fit its image's grammar */
	GPUENV_BASE_CANNOT = 4,	  /* not judged: unknown, an image without Ubuntu's
				     python3, no rule's choice, out of memory */
};

/* The base image for need: ref (IMAGE[:TAG], no digest) checked, unknown
 * refs written unchecked when trust is set; ref NULL: the rule chooses.
 * Strings in arena.  An enum gpuenv_base_verdict. */
GPUENV_API int gpuenv_base_image(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_base_need_t *need, const char *ref, bool trust, gpuenv_base_image_t *out);

/* A note (why) or a warning on b, dropped past GPUENV_BASE_MAX_NOTES. */
GPUENV_API void gpuenv_base_note(gpuenv_base_image_t *b, const char *s);
GPUENV_API void gpuenv_base_warn(gpuenv_base_image_t *b, const char *s);

#ifdef __cplusplus
}
#endif
#endif
