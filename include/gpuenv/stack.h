/* gpuenv stack: the software half of `gpuenv probe`.
 *
 * CUDA toolkits, every copy of the NVIDIA libraries that matter (cudart,
 * cuBLAS, cuDNN, NCCL, TensorRT, NVRTC, nvJitLink) with its version and where
 * it was found, an emulation of the dynamic loader that says which copy each
 * framework binary would really load, and the Python environments with their
 * distributions and GPU frameworks.
 *
 * Everything is read from disk: no dlopen of heavy libraries, no subprocess,
 * no Python.  ELF files are mmapped and only their headers, dynamic section
 * and dynamic string table are touched; ld.so.cache is parsed directly.
 *
 * Conventions for every struct below:
 *  - all results live in the caller's arena and are freed with it;
 *  - every gpuenv_str_t in a result is NUL-terminated (ptr[len] == '\0'), or
 *    GPUENV_STR_NULL (ptr NULL, len 0) when the fact is unknown;
 *  - paths are as seen on the probed machine: absolute, without ctx->root
 *    (the prefix under which the files were read; "" = the real root);
 *  - environment variables are read through gpuenv_ctx_getenv only.
 * A ctx->root tree is read as if it were "/": its symlinks, absolute ones
 * included, resolve inside it (gpuenv_fs_resolve_in_root), never against
 * the host.  A ctx->root that does not exist is an error.
 */
#ifndef GPUENV_STACK_H
#define GPUENV_STACK_H

#include "gpuenv/core.h"
#include "gpuenv/env.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== versions and where they came from ================================= */

/* The source of a version: the probe says how it knows, because the sources
 * differ in precision (a soname gives the major only, a header the exact
 * release). */
enum gpuenv_vsrc {
	GPUENV_VSRC_NONE = 0,
	GPUENV_VSRC_FILENAME,	  /* the file's name: libcudnn.so.9.19.0 -> 9.19.0 */
	GPUENV_VSRC_HEADER,	  /* a C header: cudnn_version.h, nccl.h, cublas_api.h,
				     NvInferVersion.h, cuda.h, patchlevel.h */
	GPUENV_VSRC_METADATA,	  /* a Python distribution's METADATA (or its
				     dist-info folder name) */
	GPUENV_VSRC_VERSION_JSON, /* a CUDA toolkit's version.json */
	GPUENV_VSRC_VERSION_TXT,  /* a CUDA toolkit's version.txt */
	GPUENV_VSRC_VERDEF,	  /* an ELF version definition (GNU verdef) */
	GPUENV_VSRC_SONAME,	  /* the soname's number: libcudnn.so.9 -> 9 (major only) */
	GPUENV_VSRC_PYVENV_CFG,	  /* a venv's pyvenv.cfg "version" / "version_info" */
	GPUENV_VSRC_PATH,	  /* a folder or program name: .../versions/3.12.1,
				     python3.12 */
	GPUENV_VSRC_VERSION_PY,	  /* a framework's version module: torch/version.py */
	GPUENV_VSRC_COUNT
};

/* Short stable identifier of a source, for JSON ("filename", "header",
 * "metadata", "version.json", "version.txt", "verdef", "soname",
 * "pyvenv.cfg", "path", "version.py"; "none"). */
GPUENV_API const char *gpuenv_vsrc_name(int src);

/* One piece of version evidence. */
typedef struct gpuenv_stack_version {
	gpuenv_str_t text;   /* "9.19.0", "13.0", "9" */
	int src;	     /* enum gpuenv_vsrc */
	gpuenv_str_t origin; /* what was read: a header or file path, or
				"nvidia-cudnn-cu13 9.19.0.56" for a wheel */
} gpuenv_stack_version_t;

/* ==== ld.so.cache ======================================================== */

/* Entry flags as ldconfig writes them: the low byte is the library type
 * (3 = ELF for glibc), the next byte the ABI. */
#define GPUENV_LDCACHE_FLAG_TYPE_MASK 0x00ff
#define GPUENV_LDCACHE_FLAG_ELF_LIBC6 0x0003
#define GPUENV_LDCACHE_FLAG_ABI_MASK 0xff00
#define GPUENV_LDCACHE_FLAG_SPARC_LIB64 0x0100
#define GPUENV_LDCACHE_FLAG_IA64_LIB64 0x0200
#define GPUENV_LDCACHE_FLAG_X8664_LIB64 0x0300
#define GPUENV_LDCACHE_FLAG_S390_LIB64 0x0400
#define GPUENV_LDCACHE_FLAG_POWERPC_LIB64 0x0500
#define GPUENV_LDCACHE_FLAG_X8664_LIBX32 0x0800
#define GPUENV_LDCACHE_FLAG_ARM_LIBHF 0x0900
#define GPUENV_LDCACHE_FLAG_AARCH64_LIB64 0x0a00
#define GPUENV_LDCACHE_FLAG_RISCV_DOUBLE 0x1000

/* Which layouts a cache file held (bits). */
enum {
	GPUENV_LDCACHE_OLD = 1, /* "ld.so-1.7.0" (libc5 / glibc < 2.32 compat part) */
	GPUENV_LDCACHE_NEW = 2, /* "glibc-ld.so.cache1.1" */
};

typedef struct gpuenv_ldcache_entry {
	gpuenv_str_t soname; /* the key: "libcudnn.so.9" */
	gpuenv_str_t path;   /* the value: "/usr/lib/x86_64-linux-gnu/libcudnn.so.9" */
	int32_t flags;	     /* GPUENV_LDCACHE_FLAG_* type | ABI */
	uint32_t osversion;  /* minimum kernel version (0 = any), new format only */
	uint64_t hwcap;	     /* the raw hwcap word, new format only */
	int hwcaps_index;    /* -1: a baseline entry; else the index in
				gpuenv_ldcache_t.hwcaps of the glibc-hwcaps
				subfolder the entry lives in (>= nhwcaps
				when the table does not name it: ld.so
				never picks such an entry) */
	unsigned isa_level;  /* x86 ISA level bits of hwcap (0 = none) */
} gpuenv_ldcache_entry_t;

typedef struct gpuenv_ldcache {
	gpuenv_str_t path; /* the file read ("/etc/ld.so.cache"), or the name given */
	int format;	   /* GPUENV_LDCACHE_OLD | GPUENV_LDCACHE_NEW bits */
	size_t n;
	gpuenv_ldcache_entry_t *entries; /* in file order (ldconfig's sort order)
					    of the new part when present,
					    else of the old part */
	size_t nhwcaps;
	gpuenv_str_t *hwcaps;	/* glibc-hwcaps subfolder names ("x86-64-v3") */
	gpuenv_str_t generator; /* "ldconfig (GNU libc) 2.36", or NULL */
} gpuenv_ldcache_t;

/* Parse an ld.so.cache image held in memory (data need not be
 * NUL-terminated or aligned).  name is used in error messages.  Both the
 * new format (with the glibc 2.33 extension directory and its hwcaps table)
 * and the old "ld.so-1.7.0" one (alone or followed by the new one) are
 * understood; a big-endian cache is refused with GPUENV_EUNSUPPORTED.
 * Strings are copied into the arena.  Corrupt input: GPUENV_EFORMAT with
 * the byte offset in the message. */
GPUENV_API int gpuenv_ldcache_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const void *data, size_t len, const char *name, gpuenv_ldcache_t *out);

/* mmap and parse a cache file; path NULL means "/etc/ld.so.cache".  The
 * path is read under ctx->root.  A missing file gives -ENOENT. */
GPUENV_API int gpuenv_ldcache_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, gpuenv_ldcache_t *out);

/* What ld.so would take from the cache for soname, for a program whose
 * cache flags are flags (see gpuenv_ldcache_flags_for): among the entries
 * with that key and those flags, the one in the best-ranked glibc-hwcaps
 * subfolder named in hwcaps (a NULL-terminated list, best first, of the
 * subfolders the CPU supports; NULL = none), else the first baseline entry.
 * NULL when there is none. */
GPUENV_API const gpuenv_ldcache_entry_t *gpuenv_ldcache_lookup(const gpuenv_ldcache_t *cache,
	gpuenv_str_t soname, int32_t flags, const char *const *hwcaps);

/* The cache flags ld.so accepts for an ELF object of this machine (e_machine)
 * and class (64-bit or not); GPUENV_LDCACHE_FLAG_ELF_LIBC6 alone for
 * machines it does not know. */
GPUENV_API int32_t gpuenv_ldcache_flags_for(unsigned e_machine, bool is64);

/* A short name of the flags' ABI ("x86-64", "i386", "aarch64", "x32",
 * "libc6"; "unknown"). */
GPUENV_API const char *gpuenv_ldcache_abi_name(int32_t flags);

/* ==== dynamic loader emulation ========================================== */

/* What the loader needs from one ELF object. */
typedef struct gpuenv_ld_elf {
	unsigned machine;     /* e_machine (62 x86-64, 183 aarch64, ...) */
	bool is64;	      /* ELFCLASS64 (always: 32-bit files are refused) */
	bool is_dso;	      /* ET_DYN */
	gpuenv_str_t soname;  /* DT_SONAME, or NULL */
	gpuenv_str_t rpath;   /* DT_RPATH as written (colon-separated), or NULL */
	gpuenv_str_t runpath; /* DT_RUNPATH as written, or NULL */
	bool nodeflib;	      /* DF_1_NODEFLIB: no ld.so.cache, no default folders */
	size_t nneeded;
	gpuenv_str_t *needed; /* DT_NEEDED in order */
	size_t nverdefs;
	gpuenv_str_t *verdefs; /* GNU version definitions, base (soname) entry
				  excluded, in file order */
} gpuenv_ld_elf_t;

/* Read the dynamic-linking facts of one ELF file (path is read under
 * ctx->root) with the shared ELF reader (gpuenv/elf.h): mmap, headers only.
 * GPUENV_EFORMAT for a file that is not a valid ELF, GPUENV_EUNSUPPORTED
 * for 32-bit or big-endian ones; an ELF without a dynamic section succeeds
 * with empty lists. */
GPUENV_API int gpuenv_ld_read_elf(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, gpuenv_ld_elf_t *out);

/* The same from an image in memory (for tests and fuzzing). */
GPUENV_API int gpuenv_ld_parse_elf(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const void *data, size_t len, const char *name, gpuenv_ld_elf_t *out);

/* Why the loader picked a path for a DT_NEEDED entry, in ld.so's order. */
enum gpuenv_ldsrc {
	GPUENV_LDSRC_NOTFOUND = 0, /* no search location had it: the load fails */
	GPUENV_LDSRC_LOADED,	   /* an object with this soname/name is already
				      loaded: it is reused */
	GPUENV_LDSRC_DIRECT,	   /* the name holds a '/': used as a path */
	GPUENV_LDSRC_RPATH,	   /* DT_RPATH of the needing object or of an
				      object that loaded it (none with RUNPATH) */
	GPUENV_LDSRC_LD_LIBRARY_PATH,
	GPUENV_LDSRC_RUNPATH,	   /* DT_RUNPATH of the needing object */
	GPUENV_LDSRC_LDCACHE,	   /* /etc/ld.so.cache */
	GPUENV_LDSRC_DEFAULT,	   /* a default system folder */
	GPUENV_LDSRC_COUNT
};

/* "not found", "already loaded", "direct", "rpath", "LD_LIBRARY_PATH",
 * "runpath", "ld.so.cache", "default". */
GPUENV_API const char *gpuenv_ldsrc_name(int how);

typedef struct gpuenv_ld_need {
	gpuenv_str_t name; /* the DT_NEEDED string */
	int how;	   /* enum gpuenv_ldsrc */
	gpuenv_str_t path; /* the file the loader opens; NULL when not found */
	size_t object;	   /* index of that object in the resolution's
			      objects; SIZE_MAX when not found */
	gpuenv_str_t dir;  /* RPATH / RUNPATH / LD_LIBRARY_PATH / default: the
			      folder (after $ORIGIN expansion) that held it */
	gpuenv_str_t rule; /* RPATH / RUNPATH: the element as written
			      ("$ORIGIN/../../nvidia/cudnn/lib") */
	size_t rule_owner; /* RPATH: index of the object whose DT_RPATH matched
			      (the needing one or an ancestor); else SIZE_MAX */
	size_t nshadowed;
	gpuenv_str_t *shadowed; /* with opts.alternatives: other files the same
				   search would have reached later, in order
				   (the copies this choice hides) */
} gpuenv_ld_need_t;

typedef struct gpuenv_ld_object {
	gpuenv_str_t path;   /* as the loader names it (not symlink-resolved) */
	size_t parent;	     /* the object whose DT_NEEDED loaded it first;
				SIZE_MAX for the root */
	unsigned depth;	     /* 0 for the root */
	int error;	     /* 0, or why its dependencies are unknown:
				-errno, GPUENV_EFORMAT */
	gpuenv_ld_elf_t elf; /* its dynamic facts (empty on error) */
	gpuenv_ld_need_t *needs; /* elf.nneeded entries */
} gpuenv_ld_object_t;

typedef struct gpuenv_ld_resolution {
	gpuenv_str_t binary; /* the object resolved (as given) */
	size_t nobjects;
	gpuenv_ld_object_t *objects; /* breadth-first load order; [0] = binary */
	size_t nmissing;	     /* DT_NEEDED entries not found (all objects) */
	bool truncated;		     /* opts.max_objects was reached */
} gpuenv_ld_resolution_t;

typedef struct gpuenv_loader_opts {
	/* LD_LIBRARY_PATH to use; NULL = read it through gpuenv_ctx_getenv */
	const char *ld_library_path;
	/* the parsed ld.so.cache; NULL = no cache (as ld.so with none) */
	const gpuenv_ldcache_t *cache;
	/* glibc-hwcaps subfolders the CPU supports, best first, NULL-terminated;
	 * NULL = none (only baseline folders and cache entries) */
	const char *const *hwcaps;
	/* default system folders, NULL-terminated; NULL = the usual ones for
	 * the binary's machine (Debian multiarch first, then lib64 / lib) */
	const char *const *default_dirs;
	/* $PLATFORM and $LIB for DT_RPATH / DT_RUNPATH; NULL = from machine */
	const char *platform, *lib;
	/* stop after this many objects (0 = 512) */
	size_t max_objects;
	/* fill gpuenv_ld_need_t.shadowed (a few more opens per need) */
	bool alternatives;
} gpuenv_loader_opts_t;

/* Emulate `dlopen(binary)` from a program without RPATH: breadth-first over
 * DT_NEEDED, each name searched as glibc's ld.so does (already-loaded
 * sonames, RPATH chain unless the needing object has RUNPATH,
 * LD_LIBRARY_PATH, RUNPATH, ld.so.cache unless DF_1_NODEFLIB, default
 * folders; glibc-hwcaps subfolders first in each folder; files of another
 * ELF class or machine skipped).  binary is read under ctx->root.  Returns
 * 0 even when some dependencies are missing (see nmissing); an error only
 * when binary itself cannot be read as ELF. */
GPUENV_API int gpuenv_loader_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *binary, const gpuenv_loader_opts_t *opts, gpuenv_ld_resolution_t *out);

/* ==== CUDA toolkits ====================================================== */

/* How a toolkit was found (bits). */
enum {
	GPUENV_TK_USR_LOCAL = 1, /* /usr/local/cuda or /usr/local/cuda-X.Y */
	GPUENV_TK_CUDA_HOME = 2, /* $CUDA_HOME */
	GPUENV_TK_CUDA_PATH = 4, /* $CUDA_PATH */
	GPUENV_TK_NVCC_PATH = 8, /* the folder above the first nvcc on $PATH */
	GPUENV_TK_OPT = 16,	 /* /opt/cuda, /usr/lib/cuda (distribution packages) */
};

typedef struct gpuenv_tk_component {
	gpuenv_str_t name;    /* version.json key ("cuda_cudart", "libcublas") or
				 distribution ("nvidia-cuda-runtime") */
	gpuenv_str_t version; /* "13.0.96" */
	int src;	      /* GPUENV_VSRC_VERSION_JSON or _METADATA */
} gpuenv_tk_component_t;

typedef struct gpuenv_toolkit {
	gpuenv_str_t path;     /* the first path it was found under
				  ("/usr/local/cuda") */
	gpuenv_str_t realpath; /* symlinks resolved ("/usr/local/cuda-13.0") */
	size_t naliases;
	gpuenv_str_t *aliases; /* other paths naming the same folder */
	unsigned found_by;     /* GPUENV_TK_* bits */
	/* release: "13.0.2" from version.json, "11.8.89" from version.txt,
	 * "13.0" from cuda.h's CUDA_VERSION; text NULL when unknown */
	gpuenv_stack_version_t version;
	gpuenv_str_t nvcc;	 /* bin/nvcc when present */
	gpuenv_str_t nvcc_version; /* nvcc's component version when known */
	gpuenv_str_t lib_dir;	 /* lib64, targets/<arch>/lib or lib; NULL if none */
	gpuenv_str_t include_dir; /* include or targets/<arch>/include */
	size_t ncomponents;
	gpuenv_tk_component_t *components;
} gpuenv_toolkit_t;

/* Find the CUDA toolkits: /usr/local/cuda*, $CUDA_HOME, $CUDA_PATH, nvcc
 * on $PATH, /opt/cuda, /usr/lib/cuda.  One entry per real folder, in the
 * order above.  Never fails for a missing toolkit (n = 0). */
GPUENV_API int gpuenv_toolkit_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	size_t *n, gpuenv_toolkit_t **out);

/* Inspect one folder as a toolkit (read under ctx->root); -ENOENT when it
 * has neither bin/nvcc nor include/cuda.h nor a version file. */
GPUENV_API int gpuenv_toolkit_inspect(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *dir, gpuenv_toolkit_t *out);

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

/* ==== NVIDIA library copies ============================================== */

enum gpuenv_libfamily {
	GPUENV_LIB_CUDART = 0,
	GPUENV_LIB_CUBLAS,
	GPUENV_LIB_CUBLASLT,
	GPUENV_LIB_CUDNN,     /* libcudnn.so and its parts libcudnn_*.so */
	GPUENV_LIB_NCCL,
	GPUENV_LIB_NVINFER,   /* TensorRT: libnvinfer*.so */
	GPUENV_LIB_NVRTC,     /* libnvrtc.so, libnvrtc-builtins.so */
	GPUENV_LIB_NVJITLINK,
	GPUENV_LIB_COUNT
};
/* "cudart", "cublas", "cublasLt", "cudnn", "nccl", "nvinfer", "nvrtc",
 * "nvJitLink". */
GPUENV_API const char *gpuenv_libfamily_name(int family);
/* The family of a file name ("libcudnn_ops.so.9" -> CUDNN), -1 if none. */
GPUENV_API int gpuenv_libfamily_of(gpuenv_str_t filename);

/* Where a copy was seen (bits). */
enum {
	GPUENV_LIBLOC_LDCACHE = 1,	   /* listed in ld.so.cache */
	GPUENV_LIBLOC_LD_LIBRARY_PATH = 2, /* in a $LD_LIBRARY_PATH folder */
	GPUENV_LIBLOC_TOOLKIT = 4,	   /* in a CUDA toolkit's lib folder */
	GPUENV_LIBLOC_WHEEL = 8,	   /* inside a Python environment */
	GPUENV_LIBLOC_DEFAULT = 16,	   /* in a default system folder */
	GPUENV_LIBLOC_LOADER = 32,	   /* reached by a framework's RPATH/RUNPATH */
};

typedef struct gpuenv_libcopy {
	int family;	     /* enum gpuenv_libfamily */
	gpuenv_str_t path;   /* the file, symlinks (of folders too) resolved */
	gpuenv_str_t name;   /* its file name: "libcudnn.so.9.19.0" */
	gpuenv_str_t soname; /* DT_SONAME ("libcudnn.so.9"); NULL if none/unreadable */
	size_t naliases;
	gpuenv_str_t *aliases; /* other paths reaching the same file (symlinks such
				  as libcudnn.so.9, symlinked folders), sorted */
	unsigned where;	     /* GPUENV_LIBLOC_* bits */
	gpuenv_str_t toolkit; /* toolkit path when inside one, else NULL */
	gpuenv_str_t dist;    /* owning wheel "nvidia-cudnn-cu13" when known */
	gpuenv_str_t site;    /* site folder when inside a Python environment */
	uint64_t size;	      /* bytes */
	/* version evidence, the most precise first (most dotted parts; among
	 * equals: file name, header, wheel METADATA, toolkit version.json /
	 * dist-info, version definition), the soname's major last.  Empty when
	 * nothing is known. */
	size_t nversions;
	gpuenv_stack_version_t *versions;
	size_t nverdefs;
	gpuenv_str_t *verdefs; /* GNU version definitions (soname excluded) */
} gpuenv_libcopy_t;

/* ==== everything together ================================================ */

typedef struct gpuenv_stack_opts {
	const char *python;	/* --python PATH */
	const char *env_dir;	/* --env DIR */
	const char *ldcache;	/* NULL = /etc/ld.so.cache */
	const char *const *hwcaps; /* as gpuenv_loader_opts_t.hwcaps */
	bool no_loader;		/* skip the loader emulation */
	bool alternatives;	/* loader: list shadowed copies (default off) */
	bool no_user_site;
} gpuenv_stack_opts_t;

typedef struct gpuenv_stack {
	size_t ntoolkits;
	gpuenv_toolkit_t *toolkits;
	bool have_ldcache;	/* false: no readable ld.so.cache */
	gpuenv_ldcache_t ldcache;
	gpuenv_str_t ld_library_path; /* $LD_LIBRARY_PATH as seen, or NULL */
	size_t nlibs;
	gpuenv_libcopy_t *libs;	/* by family, then path */
	size_t nenvs;
	gpuenv_pyenv_t *envs;
	size_t nwarnings;
	gpuenv_str_t *warnings; /* non-fatal problems ("file: message") */
} gpuenv_stack_t;

/* The whole software stack: toolkits, ld.so.cache, Python environments
 * (with loader emulation of their framework binaries unless no_loader) and
 * the library copies found in all of those places, in LD_LIBRARY_PATH and in
 * the default folders.  Fails only on a missing ctx->root, an unusable
 * --python / --env, an ld.so.cache named in opts that cannot be read, or out
 * of memory; everything else becomes a warning. */
GPUENV_API int gpuenv_stack_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_stack_opts_t *opts, gpuenv_stack_t *out);

/* Inventory of library copies alone (used by gpuenv_stack_probe): scans the
 * folders implied by the toolkits, cache, environments, LD_LIBRARY_PATH and
 * default folders.  Any of the inputs may be NULL / 0. */
GPUENV_API int gpuenv_libs_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_toolkit_t *toolkits, size_t ntoolkits, const gpuenv_ldcache_t *cache,
	const gpuenv_pyenv_t *envs, size_t nenvs, size_t *n, gpuenv_libcopy_t **out);

#ifdef __cplusplus
}
#endif
#endif
