/* gpuenv hw: the driver and GPU facts of a machine, and the probe backends
 * that gather them.
 *
 * Backends, one file each and one shape (STYLE.md 9):
 *
 *     int gpuenv_hw_<backend>_probe(ctx, opts, arena, facts);
 *
 *   sysfs    lib/hw/sysfs.c    PCI scan (vendor 0x10de), /proc/driver/nvidia,
 *                              /sys/module/nvidia, Jetson files
 *   nvml     lib/hw/nvml.c     libnvidia-ml.so.1 through dlopen
 *   cudadrv  lib/hw/cudadrv.c  libcuda.so.1 through dlopen
 *
 * Each adds what its source knows to *facts (GPUs are matched by PCI bus id),
 * records which source each fact came from, and records an absent or failing
 * source as a fact of its own: a missing library is never an error.  Negative
 * returns mean only that memory or a size limit ran out.  gpuenv_hw_probe_gpus()
 * runs the three in that order, applies CUDA_VISIBLE_DEVICES and derives the
 * state.
 *
 * No NVIDIA header is needed: the few NVML and CUDA driver API types used are
 * declared in the backends from NVIDIA's public documentation, and every
 * symbol is looked up with dlsym (a missing one means "not available").  All
 * file reads go through ctx->root; the environment (CUDA_VISIBLE_DEVICES,
 * CUDA_DEVICE_ORDER) is read through gpuenv_ctx_getenv.
 *
 * Cost on an H200 machine: NVML's own init and shutdown dominate (about
 * 20 ms); nothing here calls cuInit unless asked (GPUENV_HW_DEEP) or NVML is
 * unusable while a GPU is present.
 */
#ifndef GPUENV_HW_H
#define GPUENV_HW_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits ---------------------------------------------------------- */
#define GPUENV_HW_MAX_GPUS 64	    /* more are left out, with a warning */
#define GPUENV_HW_MAX_PCI 256	    /* NVIDIA PCI functions kept from the scan */
#define GPUENV_HW_MAX_MIG 64	    /* MIG devices per GPU */
#define GPUENV_HW_MAX_NVLINKS 32    /* NVLink links per GPU (NVML has 18 today) */
#define GPUENV_HW_MAX_WARNINGS 256
#define GPUENV_HW_MAX_VISIBLE 256   /* CUDA_VISIBLE_DEVICES entries */

/* ---- the overall state ----------------------------------------------
 * One word that says what the machine's GPU stack is, for doctor and CI.
 * Names (gpuenv_hw_state_name) are the JSON values. */
enum gpuenv_hw_state {
	/* "no-hardware": no NVIDIA GPU on the PCI bus, no Jetson, no driver */
	GPUENV_HW_NO_HARDWARE = 0,
	/* "not-loaded": a GPU is present (PCI scan, Jetson device tree) but
	 * the NVIDIA kernel driver is not loaded (nouveau, vfio-pci or none) */
	GPUENV_HW_NOT_LOADED,
	/* "nvml-unavailable": the driver is loaded but libnvidia-ml.so.1 is
	 * missing or is not NVML; GPU facts come from procfs/sysfs/libcuda */
	GPUENV_HW_NVML_UNAVAILABLE,
	/* "nvml-error": the driver is loaded but nvmlInit failed, or NVML
	 * listed no GPU while the PCI scan shows some */
	GPUENV_HW_NVML_ERROR,
	/* "ok": NVML listed the GPUs; on a Jetson without NVML: the GPU
	 * driver (nvgpu) is loaded and the SoC is known */
	GPUENV_HW_OK,
};

/* ---- where a fact came from ------------------------------------------
 * Names (gpuenv_hw_src_name) are the JSON values of "source". */
enum gpuenv_hw_src {
	GPUENV_HW_SRC_NONE = 0, /* "none": not known */
	GPUENV_HW_SRC_NVML,	/* "nvml" */
	GPUENV_HW_SRC_PROCFS,	/* "procfs": /proc/driver/nvidia, /proc/meminfo */
	GPUENV_HW_SRC_SYSFS,	/* "sysfs": /sys/bus/pci, /sys/module */
	GPUENV_HW_SRC_LIBCUDA,	/* "libcuda": the CUDA driver library */
	GPUENV_HW_SRC_DEVTREE,	/* "devicetree": Jetson /proc/device-tree, /etc/nv_tegra_release */
	GPUENV_HW_SRC_DERIVED,	/* "derived": computed from other facts (arch from CC) */
	GPUENV_HW_SRC_ENV,	/* "env": CUDA_VISIBLE_DEVICES */
	GPUENV_HW_SRC_COUNT
};

/* Index into gpuenv_hw_gpu_t.src: the source of each fact of a GPU. */
enum gpuenv_hw_fact {
	GPUENV_HW_F_NAME = 0,
	GPUENV_HW_F_UUID,
	GPUENV_HW_F_CC,
	GPUENV_HW_F_ARCH,
	GPUENV_HW_F_MEMORY,
	GPUENV_HW_F_PCI,
	GPUENV_HW_F_MIG,
	GPUENV_HW_F_NVLINK,
	GPUENV_HW_F_VISIBLE,
	GPUENV_HW_F_COUNT
};

/* ---- one NVIDIA PCI function (from the sysfs scan) ------------------ */
enum gpuenv_hw_pci_kind {
	GPUENV_HW_PCI_OTHER = 0, /* e.g. the HDMI audio function of a GPU */
	GPUENV_HW_PCI_GPU,	 /* class 0x03xxxx: VGA or 3D controller */
	GPUENV_HW_PCI_NVSWITCH,	 /* class 0x068000 */
};

typedef struct gpuenv_hw_pci {
	char bus_id[16];	/* "0000:19:00.0", as sysfs names it */
	uint32_t domain;
	uint8_t bus, dev, fn;
	uint16_t vendor;	/* 0x10de */
	uint16_t device;	/* 0x2335 */
	uint32_t class_code;	/* 0x030200 */
	int kind;		/* enum gpuenv_hw_pci_kind */
	const char *driver;	/* kernel driver bound: "nvidia", "nouveau",
				   "vfio-pci"; NULL when none */
} gpuenv_hw_pci_t;

/* ---- MIG devices of a GPU ------------------------------------------- */
typedef struct gpuenv_hw_mig {
	unsigned index;		/* NVML's MIG device index under its GPU */
	const char *uuid;	/* "MIG-..."; NULL unknown */
	const char *name;	/* "NVIDIA A100-SXM4-40GB MIG 1g.5gb"; NULL unknown */
	int gi_id, ci_id;	/* GPU / compute instance ids; -1 unknown */
	uint64_t mem_total, mem_free; /* bytes; 0 unknown */
	bool visible;		/* CUDA enumerates it (see gpuenv_hw_visible_t) */
	int cuda_index;		/* its CUDA ordinal; -1 when not visible */
} gpuenv_hw_mig_t;

/* ---- NVLink links of a GPU ------------------------------------------ */
enum gpuenv_hw_peer {
	GPUENV_HW_PEER_UNKNOWN = 0,
	GPUENV_HW_PEER_GPU,
	GPUENV_HW_PEER_SWITCH, /* NVSwitch */
	GPUENV_HW_PEER_NPU,    /* IBM POWER CPU */
};

typedef struct gpuenv_hw_nvlink {
	unsigned link;		/* link number */
	bool active;
	char peer_bus_id[20];	/* "00000000:3B:00.0" for an active link; "" unknown */
	int peer_type;		/* enum gpuenv_hw_peer */
	int peer_gpu;		/* index into facts->gpus when the peer is one of
				   them, else -1 */
} gpuenv_hw_nvlink_t;

/* ---- one GPU -------------------------------------------------------- */
typedef struct gpuenv_hw_gpu {
	int index;		/* NVML index; -1 when NVML did not list it */
	const char *name;	/* "NVIDIA H200"; NULL unknown */
	const char *uuid;	/* "GPU-c8d8d7e0-..."; NULL unknown */
	int cc_major, cc_minor;	/* compute capability; -1 unknown */
	const char *arch;	/* "Hopper" (from the CC); NULL unknown */
	unsigned nvml_arch;	/* NVML's nvmlDeviceArchitecture_t (9 = Hopper);
				   0 unknown */
	uint64_t mem_total, mem_free; /* bytes; 0 unknown (Jetson: system RAM) */
	char bus_id[20];	/* "00000000:19:00.0" (NVML's form); "" unknown */
	uint32_t pci_device_id;	/* 0x233510DE: device << 16 | vendor; 0 unknown */
	uint16_t device_id;	/* 0x2335; 0 unknown */
	const char *driver;	/* kernel driver bound in sysfs; NULL none/unknown */
	bool integrated;	/* a Jetson's on-chip GPU (no PCI) */
	int mig_current;	/* 1 enabled, 0 disabled, -1 unsupported/unknown */
	int mig_pending;	/* after the next GPU reset; same values */
	size_t n_mig;
	gpuenv_hw_mig_t *mig;
	size_t n_nvlink;	/* links NVML reported, active or not */
	gpuenv_hw_nvlink_t *nvlink;
	bool visible;		/* CUDA can see it (or one of its MIG devices) */
	int cuda_index;		/* its CUDA ordinal; -1 when hidden or MIG */
	unsigned char src[GPUENV_HW_F_COUNT]; /* enum gpuenv_hw_src per fact */
	/* for matching: the parsed bus id (valid when bus_id[0]) */
	uint32_t pci_domain;
	uint8_t pci_bus, pci_dev, pci_fn;
} gpuenv_hw_gpu_t;

/* ---- the driver ----------------------------------------------------- */
typedef struct gpuenv_hw_driver {
	bool loaded;		/* the kernel driver is loaded (nvidia, or a
				   Jetson's nvgpu) */
	const char *version;	/* "580.159.04"; NULL unknown */
	int version_src;	/* nvml, else procfs, else sysfs */
	int cuda_version;	/* newest CUDA it supports: 13000 (= 13.0); 0 unknown */
	int cuda_version_src;	/* nvml, else libcuda */
	const char *procfs;	/* first line of /proc/driver/nvidia/version */
	const char *procfs_version; /* the version in that line */
	const char *flavor;	/* "open" / "proprietary" kernel module; NULL unknown */
	const char *module_version; /* /sys/module/nvidia/version */
} gpuenv_hw_driver_t;

/* ---- NVML ----------------------------------------------------------- */
enum gpuenv_hw_lib_state {
	GPUENV_HW_LIB_NOT_CHECKED = 0, /* "not-checked": not tried (flag, or --root) */
	GPUENV_HW_LIB_MISSING,	  /* "missing": dlopen failed */
	GPUENV_HW_LIB_WRONG,	  /* "not-nvml" / "not-libcuda": entry point absent */
	GPUENV_HW_LIB_STUB,	  /* "stub": libcuda answered CUDA_ERROR_STUB_LIBRARY
				     (the toolkit's link stub, not a driver) */
	GPUENV_HW_LIB_ERROR,	  /* "error": the library answered with an error */
	GPUENV_HW_LIB_OK,	  /* "ok" (NVML) / "driver" (libcuda) */
};

typedef struct gpuenv_hw_nvml {
	int state;		/* enum gpuenv_hw_lib_state (never STUB) */
	const char *path;	/* the file dlopen loaded; NULL when none */
	const char *version;	/* nvmlSystemGetNVMLVersion: "13.580.159.04" */
	int error;		/* nvmlReturn_t of the failing call (state ERROR) */
	const char *message;	/* why it is not OK (dlerror text, NVML error) */
	unsigned device_count;	/* nvmlDeviceGetCount */
} gpuenv_hw_nvml_t;

/* ---- libcuda -------------------------------------------------------- */
typedef struct gpuenv_hw_libcuda {
	int state;		/* enum gpuenv_hw_lib_state */
	const char *path;	/* the file dlopen loaded; NULL when none */
	int version;		/* cuDriverGetVersion: 13000; 0 unknown */
	int error;		/* CUresult of the failing call (STUB: 34) */
	const char *error_name;	/* "CUDA_ERROR_STUB_LIBRARY"; NULL when none */
	const char *message;	/* why it is not OK, in words */
	bool initialized;	/* cuInit(0) was called and succeeded */
	int device_count;	/* cuDeviceGetCount after cuInit; -1 not asked */
} gpuenv_hw_libcuda_t;

/* ---- Jetson --------------------------------------------------------
 * What L4T images expose: /etc/nv_tegra_release (the L4T release line),
 * /proc/device-tree/model and .../compatible (NUL-separated, with
 * "nvidia,tegra234" for Orin), and /sys/module/nvgpu for the integrated GPU
 * driver of Orin and older; Thor uses the regular nvidia module and NVML. */
typedef struct gpuenv_hw_jetson {
	bool present;
	const char *model;	/* "NVIDIA Jetson AGX Orin Developer Kit" */
	const char *soc;	/* "tegra234"; NULL unknown */
	const char *l4t;	/* "36.4.3" from /etc/nv_tegra_release; NULL unknown */
	bool nvgpu;		/* the nvgpu module is loaded */
} gpuenv_hw_jetson_t;

/* ---- CUDA_VISIBLE_DEVICES --------------------------------------------
 * Read as the CUDA runtime reads it: a comma-separated list of NVML indices,
 * GPU UUIDs (a unique prefix is enough, "GPU-" included), "MIG-<uuid>" and
 * "MIG-GPU-<uuid>/<gi>/<ci>"; the first invalid entry ends the list; unset
 * means every GPU.  A GPU in MIG mode is seen by CUDA as its MIG devices. */
typedef struct gpuenv_hw_visible_dev {
	int gpu;		/* index into facts->gpus */
	int mig;		/* index into that GPU's mig[], -1 for the whole GPU */
} gpuenv_hw_visible_dev_t;

typedef struct gpuenv_hw_visible {
	bool set;		/* the variable is set */
	const char *value;	/* its value; NULL when unset */
	const char *invalid;	/* the entry that ended the list; NULL none */
	bool ambiguous_order;	/* indices used while CUDA_DEVICE_ORDER is not
				   PCI_BUS_ID and the GPUs differ: CUDA may
				   number them fastest first */
	size_t n;		/* devices CUDA will enumerate, in its order */
	gpuenv_hw_visible_dev_t *devs;
} gpuenv_hw_visible_t;

/* ---- warnings ------------------------------------------------------- */
typedef struct gpuenv_hw_warning {
	int gpu;		/* index into facts->gpus; -1 for the machine */
	int src;		/* enum gpuenv_hw_src of the backend */
	int code;		/* the source's own code (nvmlReturn_t, CUresult), 0 none */
	const char *id;		/* stable short id: "nvml-gpu-lost", ... */
	const char *msg;	/* "GPU 1: nvmlDeviceGetUUID: NVML_ERROR_GPU_IS_LOST (...)" */
	const char *hint;	/* a fix, or NULL */
} gpuenv_hw_warning_t;

/* ---- all of it ------------------------------------------------------ */
typedef struct gpuenv_hw_facts {
	int state;		/* enum gpuenv_hw_state */
	gpuenv_hw_driver_t driver;
	gpuenv_hw_nvml_t nvml;
	gpuenv_hw_libcuda_t libcuda;
	gpuenv_hw_jetson_t jetson;
	size_t n_pci;		/* NVIDIA PCI functions, sorted by bus id */
	gpuenv_hw_pci_t *pci;
	size_t n_gpus;		/* GPUs: NVML order first, then by bus id */
	gpuenv_hw_gpu_t *gpus;
	gpuenv_hw_visible_t visible;
	size_t n_warnings;
	gpuenv_hw_warning_t *warnings;
} gpuenv_hw_facts_t;

/* ---- options -------------------------------------------------------- */
enum {
	/* cuInit and libcuda device queries (about 200 ms with a GPU); also
	 * done without this flag when NVML is unusable and a GPU is present */
	GPUENV_HW_DEEP = 1u << 0,
	GPUENV_HW_NO_NVML = 1u << 1,	/* do not load NVML */
	GPUENV_HW_NO_LIBCUDA = 1u << 2, /* do not load libcuda */
	GPUENV_HW_NO_MIG = 1u << 3,	/* skip MIG queries */
	GPUENV_HW_NO_NVLINK = 1u << 4,	/* skip NVLink queries */
};

typedef struct gpuenv_hw_opts {
	unsigned flags;		/* GPUENV_HW_* above */
	/* Library to load for NVML / libcuda: a path or a file name for
	 * dlopen.  NULL: "libnvidia-ml.so.1" / "libcuda.so.1", tried in each
	 * of lib_dirs and then through the dynamic loader's own search; with
	 * a non-empty ctx->root the default is not to load anything, since
	 * this machine's libraries do not describe that tree. */
	const char *nvml_lib;
	const char *cuda_lib;
	const char *const *lib_dirs; /* NULL-terminated list, or NULL */
} gpuenv_hw_opts_t;

/* Default options: every backend, no cuInit, default library names. */
GPUENV_API void gpuenv_hw_opts_init(gpuenv_hw_opts_t *opts);

/* Probe the driver and the GPUs: sysfs/procfs, NVML, libcuda, then
 * CUDA_VISIBLE_DEVICES and the state.  *out is allocated in arena (free it
 * with the arena).  opts may be NULL for the defaults.  Returns 0, or a
 * negative code when memory ran out. */
GPUENV_API int gpuenv_hw_probe_gpus(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t **out);

/* An empty facts object (everything unknown), allocated in arena; NULL on
 * ENOMEM.  For running backends one by one; the backends take facts made
 * here only (they keep private state behind the public struct). */
GPUENV_API gpuenv_hw_facts_t *gpuenv_hw_facts_new(gpuenv_arena_t *arena);

/* The backends (see the top of this file).  Each returns 0 or a negative
 * code when memory ran out. */
GPUENV_API int gpuenv_hw_sysfs_probe(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t *facts);
GPUENV_API int gpuenv_hw_nvml_probe(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t *facts);
GPUENV_API int gpuenv_hw_cudadrv_probe(gpuenv_ctx_t *ctx, const gpuenv_hw_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_hw_facts_t *facts);

/* After the backends: architecture names, NVLink peers, order of the GPUs,
 * CUDA_VISIBLE_DEVICES (through gpuenv_ctx_getenv) and the state. */
GPUENV_API int gpuenv_hw_finish(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_hw_facts_t *facts);

/* Apply a CUDA_VISIBLE_DEVICES value (NULL = unset) to facts: fills
 * facts->visible and each GPU's / MIG device's visible and cuda_index.
 * cuda_device_order is CUDA_DEVICE_ORDER's value or NULL. */
GPUENV_API int gpuenv_hw_apply_visible(gpuenv_arena_t *arena, gpuenv_hw_facts_t *facts,
	const char *value, const char *cuda_device_order);

/* ---- names ---------------------------------------------------------- */
GPUENV_API const char *gpuenv_hw_state_name(int state);	 /* "ok", ... */
GPUENV_API const char *gpuenv_hw_state_text(int state);	 /* a sentence */
GPUENV_API const char *gpuenv_hw_src_name(int src);	 /* "nvml", ... */
/* NVML: "not-checked" "missing" "not-nvml" "error" "ok";
 * libcuda: "not-checked" "missing" "not-libcuda" "stub" "error" "driver". */
GPUENV_API const char *gpuenv_hw_nvml_state_name(int state);
GPUENV_API const char *gpuenv_hw_libcuda_state_name(int state);
GPUENV_API const char *gpuenv_hw_peer_name(int peer);	 /* "gpu", "switch", ... */
/* Architecture from the compute capability: "Kepler" .. "Blackwell"; NULL
 * when unknown. */
GPUENV_API const char *gpuenv_hw_arch_from_cc(int major, int minor);
/* Architecture from NVML's nvmlDeviceArchitecture_t; NULL when unknown. */
GPUENV_API const char *gpuenv_hw_arch_from_nvml(unsigned arch);
/* "13.0" for 13000, "12.2" for 12020 (CUDA's 1000*major + 10*minor);
 * "" for 0 or a negative value. */
GPUENV_API void gpuenv_hw_cuda_version_str(int version, char *out, size_t outsz);
/* An NVML error name ("NVML_ERROR_GPU_IS_LOST") and a CUresult name
 * ("CUDA_ERROR_STUB_LIBRARY"); NULL for codes gpuenv does not know. */
GPUENV_API const char *gpuenv_hw_nvml_error_name(int code);
GPUENV_API const char *gpuenv_hw_cuda_error_name(int code);

/* ---- parsers of the probed text (used by the backends; exposed for
 * diagnose and the fuzzers).  Inputs are (ptr, len), never read past len. */

/* A PCI bus id: "0000:19:00.0", "00000000:19:00.0" (any case), or
 * "19:00.0" (domain 0).  false when malformed. */
typedef struct gpuenv_hw_busid {
	uint32_t domain;
	uint8_t bus, dev, fn;
} gpuenv_hw_busid_t;
GPUENV_API bool gpuenv_hw_parse_bus_id(gpuenv_str_t s, gpuenv_hw_busid_t *out);
/* NVML's form "00000000:19:00.0" of a bus id, into out (at least 17 bytes). */
GPUENV_API void gpuenv_hw_bus_id_str(const gpuenv_hw_busid_t *id, char *out, size_t outsz);

/* /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX Open Kernel Module
 * for x86_64  580.159.04  Release Build ..." (open module), "NVRM version:
 * NVIDIA UNIX x86_64 Kernel Module  535.216.03  <date>" (proprietary) or the
 * aarch64 forms of both.  Slices point into text.  false when no version. */
typedef struct gpuenv_hw_nvrm {
	gpuenv_str_t line;	/* the NVRM line, trimmed */
	gpuenv_str_t version;	/* "580.159.04" */
	gpuenv_str_t arch;	/* "x86_64", "aarch64", ...; empty when absent */
	bool open;		/* "Open Kernel Module" */
} gpuenv_hw_nvrm_t;
GPUENV_API bool gpuenv_hw_parse_nvrm(gpuenv_str_t text, gpuenv_hw_nvrm_t *out);

/* The value of the first "Key: value" line whose key is key (case-
 * sensitive), trimmed of blanks and tabs, as in /proc/driver/nvidia/gpus/
 * X/information and /proc/meminfo.  ptr NULL when absent. */
GPUENV_API gpuenv_str_t gpuenv_hw_text_field(gpuenv_str_t text, const char *key);

/* /etc/nv_tegra_release: "# R36 (release), REVISION: 4.3, GCID: ..." ->
 * "36.4.3" into out.  false when malformed. */
GPUENV_API bool gpuenv_hw_parse_l4t(gpuenv_str_t text, char *out, size_t outsz);

/* /proc/device-tree/compatible (NUL-separated strings): the Tegra SoC,
 * e.g. "tegra234" for "nvidia,tegra234"; ptr NULL when none. */
GPUENV_API gpuenv_str_t gpuenv_hw_parse_tegra_soc(gpuenv_str_t compatible);

#ifdef __cplusplus
}
#endif
#endif
