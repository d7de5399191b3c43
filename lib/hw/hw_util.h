/* Private helpers (hw_util.c) shared by the driver/GPU probe backends (nvml.c, sysfs.c,
 * cudadrv.c, gpus.c).  Not installed. */
#ifndef GPUENV_HW_UTIL_H
#define GPUENV_HW_UTIL_H

#include <dlfcn.h>

#include "gpuenv/hw.h"

/* Read ctx->root + path (an absolute path) into buf, NUL-terminated, at most
 * cap - 1 bytes.  Returns the length or -errno.  Leaves ctx->err alone: a
 * missing file is an ordinary answer here. */
int hw_read(gpuenv_ctx_t *ctx, const char *path, char *buf, size_t cap);
/* ctx->root + path into out; -ENAMETOOLONG when it does not fit. */
int hw_path(gpuenv_ctx_t *ctx, const char *path, char *out, size_t outsz);
bool hw_exists(gpuenv_ctx_t *ctx, const char *path);

/* The facts as gpuenv_hw_facts_new allocates them: the public struct first,
 * then what only the backends see (the capacities of its arrays). */
struct hw_facts_priv {
	gpuenv_hw_facts_t pub;
	size_t cap_pci, cap_gpus, cap_warnings;
};

static inline struct hw_facts_priv *hw_priv(gpuenv_hw_facts_t *f)
{
	return (struct hw_facts_priv *)(void *)f;
}

/* Grow an arena array to hold one more element (doubling; the old block
 * stays in the arena).  0 or -ENOMEM. */
int hw_grow(gpuenv_arena_t *a, void **arr, size_t *cap, size_t n, size_t elem);
/* Whether a GPU has this bus id. */
bool hw_bus_eq(const gpuenv_hw_gpu_t *g, const gpuenv_hw_busid_t *id);

/* A GPU matched by bus id, added when absent.  Returns its index, or
 * -ENOMEM, or GPUENV_ETOOBIG past GPUENV_HW_MAX_GPUS (a warning is added
 * then; callers skip the GPU). */
int hw_gpu_by_bus(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, const gpuenv_hw_busid_t *id);
/* A new GPU without a bus id; same returns. */
int hw_gpu_new(gpuenv_arena_t *a, gpuenv_hw_facts_t *f);
/* The GPU with this NVML index, or -1. */
int hw_gpu_by_index(const gpuenv_hw_facts_t *f, int index);
/* Set a GPU's bus id fields from id. */
void hw_gpu_set_bus(gpuenv_hw_gpu_t *g, const gpuenv_hw_busid_t *id);

/* Add a warning; msg is formatted.  Returns 0 or -ENOMEM (past
 * GPUENV_HW_MAX_WARNINGS further warnings are dropped silently). */
int hw_warn(gpuenv_arena_t *a, gpuenv_hw_facts_t *f, int gpu, int src, int code,
	const char *id, const char *hint, const char *fmt, ...) GPUENV_PRINTF(8, 9);

/* A NUL-terminated copy of s[0..n) in the arena, with trailing blanks and
 * newlines cut; NULL on ENOMEM. */
const char *hw_strdup(gpuenv_arena_t *a, const char *s, size_t n);

/* dlopen a backend's library as opts says (see gpuenv_hw_opts_t).  On
 * success returns the handle and sets *path to the file loaded; otherwise
 * NULL with *state (GPUENV_HW_LIB_NOT_CHECKED or _MISSING) and *msg set. */
/* NVML's initialisation started early, on a thread of its own, while
 * the sysfs backend reads (gpuenv_hw_probe_gpus): nvmlInit is most of the
 * probe's time (8-12 ms on the H200, mostly waiting on the driver) and NVML
 * counts its inits, so the NVML backend's own init then finds the driver
 * set up; the warm-up's shutdown comes after the backend's.  NULL when NVML
 * is not to be loaded, not there, or does not start (the backend then says
 * why, as before). */
typedef struct hw_nvml_warm hw_nvml_warm_t;
hw_nvml_warm_t *hw_nvml_warm_up(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts);
void hw_nvml_warm_down(gpuenv_ctx_t *ctx, hw_nvml_warm_t *w);

void *hw_dlopen(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts, gpuenv_arena_t *a,
	const char *lib, const char *soname, const char **path, const char **msg,
	int *state);

/* Set fact f of a GPU from source src: true when src may overwrite what is
 * there (a better source, or nothing yet).  NVML beats libcuda beats
 * procfs beats sysfs beats the device tree beats derived values. */
bool hw_take(gpuenv_hw_gpu_t *g, int fact, int src);

/* The first of names (newest first) that the library h exports; NULL when
 * none does: a missing entry point means "not available", never a crash. */
static inline void *hw_dlsym_first(void *h, const char *const *names)
{
	for (; *names; names++) {
		void *p = dlsym(h, *names);
		if (p)
			return p;
	}
	return NULL;
}

/* api->field = the first of the names api->h exports (casts from void * to
 * function pointers are POSIX). */
#define HW_LOAD(api, field, ...) \
	((api)->field = (__typeof__((api)->field))hw_dlsym_first((api)->h, \
		 (const char *const[]){ __VA_ARGS__, NULL }))

#endif
