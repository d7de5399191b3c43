/* gpuenv build_hw: the target's hardware in a source build (lib/builder/hw.c).
 *
 * A PEP 517 build of a CUDA extension (flash-attn, apex, a project's own
 * kernels) reads its hardware from the environment: torch's cpp_extension
 * takes the toolkit from CUDA_HOME / CUDA_PATH, the GPU architectures from
 * TORCH_CUDA_ARCH_LIST and the ninja job count from MAX_JOBS.  Left to
 * themselves they pick whatever nvcc is on PATH, the GPUs of the build host
 * (none on a build server: torch then fails) and #CPUs + 2 jobs (which an
 * nvcc build turns into an out-of-memory kill).  gpuenv_build_hw decides
 * them once, from
 *
 *  - the toolkits the probe found (facts->toolkits, docs/probe-schema.md;
 *    gpuenv_build_hw_toolkits probes this machine's alone),
 *  - the targets that share the build (their GPUs' compute capabilities),
 *  - the CUDA of the locked torch build ("13.0"; gpuenv_fit_backend_cuda
 *    turns the lock's "cu130" into it), NULL for a CPU-only build,
 *  - the build machine's CPUs and memory (gpuenv_build_host_probe),
 *
 * and the builder (include/gpuenv/build.h) passes out->env to the build.
 * The rules, each with its source, are in docs/build.md, "The target's
 * hardware":
 *
 *  - toolkit: the same CUDA major as torch's build (torch's
 *    _check_cuda_version raises on another major and warns on another
 *    minor), with bin/nvcc; the same major.minor first, then the newest of
 *    the major; a toolkit named by $CUDA_HOME / $CUDA_PATH wins among equals.
 *    None: GPUENV_ENOTFOUND naming the places searched, the CUDA wanted and
 *    what to install; only other majors: GPUENV_EUNSUPPORTED naming both
 *    versions.  With a KB, a toolkit that cannot compile a target's GPU
 *    architecture (cuda.toml [[arch_list]]) is refused the same way.
 *  - TORCH_CUDA_ARCH_LIST: the distinct compute capabilities of every GPU of
 *    every target, ascending ("8.0;8.6"), no +PTX (the wheel is cached per
 *    arch list, so a new GPU is a rebuild, not a JIT).  A target with a GPU
 *    of unknown capability, or none at all, is GPUENV_ENOTFOUND.
 *  - NVCC_THREADS (flash-attn's `nvcc --threads`): min(4, architectures);
 *    MAX_JOBS: max(1, min(CPUs / threads, memory / (threads x 2.25 GiB))).
 *    MAX_JOBS and NVCC_THREADS already in the environment (ctx->getenv) are
 *    kept: they change how fast, not what is built.
 *  - CPU-only (cuda NULL): MAX_JOBS alone, no CUDA variable.
 */
#ifndef GPUENV_BUILD_HW_H
#define GPUENV_BUILD_HW_H

#include "gpuenv/core.h"
#include "gpuenv/facts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpuenv_kb;

/* The memory one nvcc thread of a flash-attn-sized build peaks at: its
 * setup.py budgets "~8-9GB when threads = 4" per ninja job. */
#define GPUENV_BUILD_MEM_PER_THREAD ((long long)9 << 28) /* 2.25 GiB */
#define GPUENV_BUILD_NVCC_THREADS_MAX 4 /* flash-attn's default */

/* The build machine: what a build may use. */
typedef struct gpuenv_build_host {
	long cpus;		 /* CPUs this process may run on; -1 unknown */
	long long mem_available; /* bytes; -1 unknown */
} gpuenv_build_host_t;

/* This machine: the CPUs of the process's affinity mask, bounded by its
 * cgroup's cpu.max quota; /proc/meminfo's MemAvailable, bounded by its
 * cgroup's memory.max less memory.current (cgroup v2).  /proc and /sys are
 * read under ctx->root.  Never fails: what cannot be read is -1. */
GPUENV_API void gpuenv_build_host_probe(gpuenv_ctx_t *ctx, gpuenv_build_host_t *out);

/* One variable the build gets. */
typedef struct gpuenv_build_var {
	const char *name, *value;
} gpuenv_build_var_t;

#define GPUENV_BUILD_HW_MAX_VARS 6
#define GPUENV_BUILD_HW_MAX_NOTES 4

typedef struct gpuenv_build_hw_opts {
	const gpuenv_facts_t *facts;	/* toolkits: facts->toolkits (NULL: none) */
	const gpuenv_target_t *targets; /* the targets sharing this build */
	size_t ntargets;
	const char *cuda;		/* locked torch's CUDA, "13.0"; NULL: CPU-only */
	gpuenv_build_host_t host;
	const struct gpuenv_kb *kb;	/* optional: nvcc's architectures */
	const char *package;		/* for messages ("flash-attn"); may be NULL */
} gpuenv_build_hw_opts_t;

typedef struct gpuenv_build_hw {
	bool cuda; /* a CUDA build: the CUDA variables are set */
	const gpuenv_facts_toolkit_t *toolkit; /* the toolkit chosen (facts') */
	const char *cuda_home;	  /* its path, "/usr/local/cuda" */
	const char *cuda_version; /* its version, "13.0.2" */
	const char *arch_list;	  /* "8.0;8.6" */
	const char *path_prepend; /* "<cuda_home>/bin": first on the build's PATH
				     (after the trace shims), so `nvcc` is it */
	unsigned max_jobs, nvcc_threads; /* nvcc_threads 0 for CPU-only */
	const char *jobs_why;	  /* "16 CPUs, 40.0 GiB available: ..." */
	/* what the build gets, in this order: CUDA_HOME, CUDA_PATH,
	 * TORCH_CUDA_ARCH_LIST, NVCC_THREADS, MAX_JOBS (the last alone for a
	 * CPU-only build); envp: the same as "NAME=VALUE" (gpuenv/build.h's
	 * gpuenv_build_opts_t.env).  MAX_JOBS and NVCC_THREADS change how fast,
	 * not what is built: they stay out of a build cache's key. */
	gpuenv_build_var_t env[GPUENV_BUILD_HW_MAX_VARS];
	const char *envp[GPUENV_BUILD_HW_MAX_VARS];
	size_t nenv;
	const char *notes[GPUENV_BUILD_HW_MAX_NOTES]; /* things to tell the user */
	size_t nnotes;
} gpuenv_build_hw_t;

/* Decide the build's hardware variables (above).  Strings in arena.  0, or
 * with ctx->err set (message and hint): GPUENV_ENOTFOUND (no toolkit, no
 * GPU architecture), GPUENV_EUNSUPPORTED (toolkits of another CUDA major
 * only, or none that compiles a target's architecture), GPUENV_EVERSION (a
 * malformed opts->cuda), -ENOMEM. */
GPUENV_API int gpuenv_build_hw(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_build_hw_opts_t *opts, gpuenv_build_hw_t *out);

/* This machine's toolkits alone (gpuenv_toolkit_probe, through ctx->root
 * and ctx->getenv), as the facts a full probe would give: *out has only
 * "toolkits".  For callers whose facts came from a light probe.  0 or
 * -ENOMEM. */
GPUENV_API int gpuenv_build_hw_toolkits(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_facts_t **out);

/* What diagnose (gpuenv/diagnose.h, data/kb/diagnose.toml) reads in a
 * failed build's log: one "cause: ...\nfix: ...\n" pair per finding, in
 * the log's order (at most GPUENV_BUILD_HW_MAX_FINDINGS), or NULL in *out
 * when it recognises nothing.  The log is read whole up to
 * GPUENV_BUILD_HW_MAX_LOG bytes, else its end.  facts (may be NULL) makes
 * the fixes concrete ({torch_cuda}: the locked CUDA).  0, or -ENOMEM /
 * -errno (the log cannot be read) with ctx->err set. */
#define GPUENV_BUILD_HW_MAX_FINDINGS 4
#define GPUENV_BUILD_HW_MAX_LOG ((size_t)32 << 20)
struct gpuenv_diag_facts;
GPUENV_API int gpuenv_build_hw_explain(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const struct gpuenv_kb *kb,
	const char *log_path, const struct gpuenv_diag_facts *facts, const char **out);

/* The value of name in hw->env, NULL when not set. */
GPUENV_API const char *gpuenv_build_hw_get(const gpuenv_build_hw_t *hw, const char *name);

#ifdef __cplusplus
}
#endif
#endif
