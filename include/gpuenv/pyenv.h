/* gpuenv pyenv: Python environments and their GPU frameworks, read from
 * disk without starting Python (lib/hw/pyenv.c, on the environment reader
 * gpuenv/env.h).
 * Conventions of every struct (see gpuenv/stack.h): results live in the
 * caller's arena; every gpuenv_str_t is NUL-terminated or GPUENV_STR_NULL
 * (unknown); paths are as seen on the probed machine, without ctx->root. */
#ifndef GPUENV_PYENV_H
#define GPUENV_PYENV_H

#include "gpuenv/env.h"
#include "gpuenv/loader.h"
#include "gpuenv/stack_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Python environments ================================================ */

enum gpuenv_pyenv_found {
	GPUENV_PYENV_ARG_PYTHON = 1, /* the caller named the interpreter */
	GPUENV_PYENV_ARG_ENV,	     /* the caller named the environment folder */
	GPUENV_PYENV_VIRTUAL_ENV,    /* $VIRTUAL_ENV */
	GPUENV_PYENV_CONDA_PREFIX,   /* $CONDA_PREFIX */
	GPUENV_PYENV_PATH,	     /* python3 on $PATH */
};
/* "--python", "--env", "VIRTUAL_ENV", "CONDA_PREFIX", "PATH". */
GPUENV_API const char *gpuenv_pyenv_found_name(int found_by);

enum gpuenv_pyenv_kind {
	GPUENV_PYENV_SYSTEM = 0, /* a plain installation (/usr, pyenv version) */
	GPUENV_PYENV_VENV,	 /* has pyvenv.cfg */
	GPUENV_PYENV_CONDA,	 /* has conda-meta/ */
};

/* Kinds of GPU framework recognised. */
enum gpuenv_fw_kind {
	GPUENV_FW_TORCH = 1,
	GPUENV_FW_JAX,		/* jax (pure Python) */
	GPUENV_FW_JAXLIB,
	GPUENV_FW_JAX_CUDA_PLUGIN, /* jax-cudaNN-plugin */
	GPUENV_FW_JAX_CUDA_PJRT,   /* jax-cudaNN-pjrt (xla_cuda_plugin.so) */
	GPUENV_FW_CUPY,		/* cupy-cudaNNx / cupy-cudaNNN / cupy */
	GPUENV_FW_TENSORRT,	/* tensorrt, tensorrt-cuNN[-libs|-bindings] */
	GPUENV_FW_ONNXRUNTIME,	/* onnxruntime-gpu (and plain onnxruntime: cpu) */
	GPUENV_FW_TRITON,
	GPUENV_FW_NVIDIA_WHEEL, /* nvidia-* (cuDNN, cuBLAS, NCCL ... wheels) */
	GPUENV_FW_COUNT
};
/* "torch", "jax", "jaxlib", "jax-cuda-plugin", "jax-cuda-pjrt", "cupy",
 * "tensorrt", "onnxruntime", "triton", "nvidia-wheel". */
GPUENV_API const char *gpuenv_fw_kind_name(int kind);

/* A distribution of an environment, as lib/env reads it (gpuenv/env.h). */
typedef gpuenv_env_dist_t gpuenv_pydist_t;

typedef struct gpuenv_framework {
	int kind;	      /* enum gpuenv_fw_kind */
	size_t dist;	      /* index in gpuenv_pyenv_t.dists */
	gpuenv_str_t version; /* the version the framework reports: torch's
				 version.py __version__ ("2.11.0+cu130"), else
				 the distribution's */
	int version_src;      /* GPUENV_VSRC_VERSION_PY or _METADATA */
	gpuenv_str_t local;   /* local label of the version: "cu130", "cpu",
				 "rocm6.2"; NULL if none */
	/* CUDA the build targets: torch.version.cuda ("13.0"), onnxruntime's
	 * capi/version_info.py cuda_version, else the major from the name
	 * (cupy-cuda13x, jax-cuda13-plugin, tensorrt-cu12, nvidia-*-cu13 ->
	 * "13"); NULL for CPU builds or when unknown */
	gpuenv_str_t cuda;
	int cuda_src;	      /* GPUENV_VSRC_VERSION_PY, _METADATA (name) or _NONE */
	gpuenv_str_t cudnn;   /* onnxruntime's cudnn_version when present */
	gpuenv_str_t hip;     /* torch.version.hip for ROCm builds */
	bool gpu;	      /* a GPU build (false: torch +cpu or cuda None,
				 plain onnxruntime) */
	size_t nbinaries;
	gpuenv_str_t *binaries; /* its CUDA-linked binaries present on disk
				   (libtorch_cuda.so, xla_cuda_plugin.so, ...) */
	gpuenv_ld_resolution_t *loads; /* nbinaries resolutions (NULL when the
					  loader emulation was not asked for) */
} gpuenv_framework_t;

typedef struct gpuenv_pyenv {
	int found_by;		   /* enum gpuenv_pyenv_found */
	int kind;		   /* enum gpuenv_pyenv_kind */
	gpuenv_str_t interpreter;  /* the interpreter as named (may be a symlink
				      or a pyenv shim); NULL with --env and none found */
	gpuenv_str_t real_interpreter; /* symlinks and pyenv shims resolved */
	gpuenv_str_t prefix;	   /* sys.prefix */
	gpuenv_str_t base_prefix;  /* sys.base_prefix (pyvenv.cfg home's parent) */
	bool system_site_packages; /* venv: include-system-site-packages */
	gpuenv_str_t python_xy;	   /* "3.12" (NULL when unknown) */
	gpuenv_stack_version_t python; /* "3.12.3" / "3.12" and its source */
	size_t nsites;
	gpuenv_str_t *sites;	   /* site folders, in sys.path order */
	size_t ndists;
	gpuenv_pydist_t *dists;	   /* every distribution, sorted by normalized
				      name (shadowed copies after the one that wins) */
	size_t nframeworks;
	gpuenv_framework_t *frameworks; /* in enum order, then by name */
} gpuenv_pyenv_t;

typedef struct gpuenv_pyenv_opts {
	const char *python;  /* --python PATH, or NULL */
	const char *env_dir; /* --env DIR, or NULL */
	/* with neither: $VIRTUAL_ENV, $CONDA_PREFIX and python3 on $PATH, one
	 * entry per distinct prefix */
	bool no_user_site;   /* leave out ~/.local/lib/pythonX.Y/site-packages */
	/* run the loader emulation on each framework binary with these options
	 * (NULL = do not) */
	const gpuenv_loader_opts_t *loader;
	size_t max_dists;    /* 0 = GPUENV_ENV_MAX_DISTS (a warning past it) */
} gpuenv_pyenv_opts_t;

/* Find and read the Python environments.  Never starts Python.  An
 * interpreter or folder named by the caller that cannot be read gives an
 * error (-ENOENT ...); environments found on their own that turn out
 * unreadable are skipped with a warning. */
GPUENV_API int gpuenv_pyenv_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_pyenv_opts_t *opts, size_t *n, gpuenv_pyenv_t **out);

/* Find a distribution by name (any spelling) among the ones that win. */
GPUENV_API const gpuenv_pydist_t *gpuenv_pyenv_find(const gpuenv_pyenv_t *env, const char *name);

#ifdef __cplusplus
}
#endif
#endif
