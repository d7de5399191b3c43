/* gpuenv facts: the probe's facts document, decoded once into types, and the
 * target that describes one machine.
 *
 * `gpuenv probe --json` writes the facts (docs/probe-schema.md).  Every verb
 * that reads them (doctor, preflight, diagnose, the probe's own text view)
 * reads this decoded form, so the schema checks, the error messages and the
 * meaning of a missing field are the same everywhere:
 *
 *  - the required structure is checked: the text is JSON, and the document
 *    is an object whose "schema" is gpuenv.facts/1 (minor additions are
 *    fine).  A violation is an error naming the file, the position or the
 *    JSON path of the field, what is wrong and how to fix it;
 *  - every leaf fact is optional: missing, null or of another type, it reads
 *    as unknown (NULL, -1, GPUENV_TRI_UNKNOWN), and the field's *_state says
 *    which (GPUENV_FACT_MISTYPED for a wrong type), so a rule can stay silent
 *    on a fact it cannot trust.  A list of strings with one entry that is not
 *    a string is unknown as a whole, never read in part.  A section or a
 *    record of the wrong type is unknown too (a record that is not an object
 *    is skipped; each record keeps its index in the document, `at`, for the
 *    paths verdicts cite).
 *
 * Strings are the document's, copied into the arena: valid UTF-8, and bytes
 * that were not text escaped as docs/probe-schema.md "Strings" says (\xHH,
 * \\).  Compare them with gpuenv_text_escape'd input, or unescape with
 * gpuenv_text_unescape.  A JSON \u0000 (written by gpuenv before the escape
 * was documented) reads as the four characters \x00, so an old snapshot reads
 * as the probe writes today.
 *
 * Everything decoded lives in the arena the caller passes; the JSON document
 * may be freed once gpuenv_facts_decode returns.
 */
#ifndef GPUENV_FACTS_H
#define GPUENV_FACTS_H

#include <jansson.h>

#include "gpuenv/core.h"
#include "gpuenv/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* jansson's memory: gpuenv_json_enter / gpuenv_json_leave (gpuenv/json.h). */

/* ---- leaf values ------------------------------------------------------- */

enum gpuenv_fact_state {
	GPUENV_FACT_ABSENT = 0, /* the key is not there */
	GPUENV_FACT_NULL,	/* null: unknown or not read */
	GPUENV_FACT_MISTYPED,	/* a value of another type: unknown */
	GPUENV_FACT_SET,	/* read */
};

/* A boolean fact. */
enum { GPUENV_TRI_UNKNOWN = -1, GPUENV_TRI_FALSE = 0, GPUENV_TRI_TRUE = 1 };
typedef signed char gpuenv_tri_t;

/* A list of strings; items NULL and n 0 unless state is GPUENV_FACT_SET. */
typedef struct gpuenv_facts_strs {
	const char *const *items;
	size_t n;
	unsigned char state; /* enum gpuenv_fact_state */
} gpuenv_facts_strs_t;

/* {version, source, from}: a version and where it was read. */
typedef struct gpuenv_facts_ver {
	const char *version, *source, *from;
} gpuenv_facts_ver_t;

/* "sources": {fact: source}. */
typedef struct gpuenv_facts_kv {
	const char *key, *value;
} gpuenv_facts_kv_t;

typedef struct gpuenv_facts_sources {
	const gpuenv_facts_kv_t *items;
	size_t n;
} gpuenv_facts_sources_t;

/* The value of key in s; NULL when not named. */
GPUENV_API const char *gpuenv_facts_source(const gpuenv_facts_sources_t *s, const char *key);

/* ---- sections (names as in docs/probe-schema.md) ----------------------- */

typedef struct gpuenv_facts_host {
	const char *hostname, *machine, *kernel, *root;
	const char *libc, *libc_version; /* "glibc", "2.36"; NULL: not probed */
} gpuenv_facts_host_t;

typedef struct gpuenv_facts_warning {
	const char *id, *message, *hint, *source;
	long long gpu;  /* NVML index; -1 when null */
	long long code; /* the source's own code (nvmlReturn_t, CUresult); -1 none */
	bool has_gpu;	/* the record names "gpu" and "code" (the driver/GPU
			   backends' warnings do, the software stack's do not) */
	size_t at; /* its index in the document's array */
} gpuenv_facts_warning_t;

typedef struct gpuenv_facts_nvml {
	const char *state, *path, *version, *error, *message;
	gpuenv_tri_t loaded;
	long long device_count; /* -1 unknown */
} gpuenv_facts_nvml_t;

typedef struct gpuenv_facts_libcuda {
	const char *state, *path, *cuda_version, *error, *message;
	long long cuda_version_int; /* -1 unknown */
	gpuenv_tri_t initialized;
	long long device_count;
} gpuenv_facts_libcuda_t;

typedef struct gpuenv_facts_driver {
	bool present; /* the section is there */
	const char *state, *state_text;
	gpuenv_tri_t loaded;
	const char *version, *version_source;
	const char *cuda_version, *cuda_version_source;
	long long cuda_version_int; /* -1 unknown */
	const char *kernel_module, *flavor, *procfs, *procfs_version;
	bool have_nvml, have_libcuda;
	gpuenv_facts_nvml_t nvml;
	gpuenv_facts_libcuda_t libcuda;
} gpuenv_facts_driver_t;

typedef struct gpuenv_facts_jetson {
	bool present;
	const char *model, *soc, *l4t;
	gpuenv_tri_t nvgpu; /* the nvgpu module is loaded */
} gpuenv_facts_jetson_t;

/* "container": the container engines and the NVIDIA Container Toolkit, read
 * from files under the probe's root (docs/probe-schema.md). */
typedef struct gpuenv_facts_container {
	bool present;		    /* the section is there */
	bool docker, podman;	    /* /usr/bin/docker or /etc/docker; /usr/bin/podman */
	const char *nvidia_ctk;	    /* the nvidia-ctk binary; NULL: none found */
	bool docker_runtime_nvidia; /* /etc/docker/daemon.json "runtimes" has "nvidia" */
	gpuenv_facts_strs_t cdi_specs; /* NVIDIA CDI specs in /etc/cdi, /var/run/cdi */
} gpuenv_facts_container_t;

typedef struct gpuenv_facts_cvd_device {
	long long gpu; /* NVML index; -1 unknown */
	const char *mig;
} gpuenv_facts_cvd_device_t;

typedef struct gpuenv_facts_cvd {
	bool present;
	gpuenv_tri_t set;
	const char *value, *invalid;
	bool have_visible; /* visible[] was listed (all integers) */
	const long long *visible;
	size_t nvisible;
	bool have_devices; /* devices[] was listed */
	const gpuenv_facts_cvd_device_t *devices;
	size_t ndevices;
	gpuenv_tri_t ambiguous_order;
} gpuenv_facts_cvd_t;

typedef struct gpuenv_facts_pci {
	const char *bus_id, *vendor, *device, *class_, *kind, *driver;
	size_t at; /* its index in the document's array */
} gpuenv_facts_pci_t;

typedef struct gpuenv_facts_mig_instance {
	long long index;
	const char *uuid, *name;
	long long gpu_instance, compute_instance; /* -1 unknown */
	long long memory_total, memory_free;	  /* bytes; -1 unknown */
	gpuenv_tri_t visible;
	long long cuda_index;
	size_t at; /* its index in the document's array */
} gpuenv_facts_mig_instance_t;

typedef struct gpuenv_facts_nvlink {
	long long link;
	gpuenv_tri_t active;
	const char *peer_pci_bus_id, *peer_type;
	long long peer_gpu;
	size_t at;
} gpuenv_facts_nvlink_t;

typedef struct gpuenv_facts_gpu {
	long long index; /* NVML index; -1 when null (only sysfs saw it) */
	const char *name, *uuid, *compute_capability, *sm, *architecture;
	long long nvml_architecture; /* NVML's nvmlDeviceArchitecture_t; -1 unknown */
	long long memory_total, memory_free; /* bytes; -1 unknown */
	const char *pci_bus_id, *pci_device_id, *device_id, *kernel_driver;
	gpuenv_tri_t integrated, visible;
	long long cuda_index;
	bool have_mig;
	const char *mig_current, *mig_pending;
	const gpuenv_facts_mig_instance_t *mig_instances;
	size_t nmig_instances;
	const gpuenv_facts_nvlink_t *nvlink;
	size_t nnvlink;
	gpuenv_facts_sources_t sources;
	gpuenv_facts_strs_t warnings;
	size_t at; /* its index in the document's array */
} gpuenv_facts_gpu_t;

/* A toolkit's component ("components": {name: {version, source}}). */
typedef struct gpuenv_facts_component {
	const char *name, *version, *source;
} gpuenv_facts_component_t;

typedef struct gpuenv_facts_toolkit {
	const char *path, *realpath, *nvcc, *nvcc_version, *lib_dir, *include_dir;
	gpuenv_facts_strs_t aliases, found_by;
	gpuenv_facts_ver_t version;
	const gpuenv_facts_component_t *components;
	size_t ncomponents;
	size_t at; /* its index in the document's array */
} gpuenv_facts_toolkit_t;

typedef struct gpuenv_facts_library {
	const char *family, *path, *name, *soname, *toolkit, *dist, *site;
	gpuenv_facts_strs_t aliases, where;
	long long size;
	gpuenv_facts_ver_t version;
	/* every version read ("versions"; version is the first); an entry
	 * whose version is NULL is a null */
	const gpuenv_facts_ver_t *versions;
	size_t nversions;
	gpuenv_facts_strs_t verdefs;
	/* cuda_code (probe --all-binaries): as a framework binary's */
	unsigned char code_state;
	gpuenv_facts_strs_t cubins, ptx;
	const char *code_summary, *code_error;
	long long code_entries;
	size_t at; /* its index in the document's array */
} gpuenv_facts_library_t;

typedef struct gpuenv_facts_dist {
	const char *name, *normalized, *version, *path, *site;
	gpuenv_tri_t egg_info, shadowed;
	gpuenv_facts_strs_t requires;
	size_t at; /* its index in the document's array */
} gpuenv_facts_dist_t;

typedef struct gpuenv_facts_need {
	const char *name, *how, *path;
	long long object; /* the object it resolved to (objects[]); -1 none */
	const char *dir, *rule;
	gpuenv_facts_strs_t shadowed;
	const char *rule_of; /* the object whose RPATH/RUNPATH rule found it;
				NULL: not written */
	size_t at; /* its index in the document's array */
} gpuenv_facts_need_t;

typedef struct gpuenv_facts_object {
	const char *path, *soname, *error;
	long long parent, depth; /* -1 unknown (parent: none) */
	const char *rpath, *runpath;
	gpuenv_tri_t nodeflib;
	const gpuenv_facts_need_t *needs;
	size_t nneeds;
	size_t at; /* its index in the document's array */
} gpuenv_facts_object_t;

typedef struct gpuenv_facts_binary {
	const char *path;
	/* cuda_code: code_state SET when both lists are known (or one of them
	 * and the other absent) */
	unsigned char code_state; /* enum gpuenv_fact_state */
	gpuenv_facts_strs_t cubins, ptx;
	long long entries;
	const char *summary, *error;
	bool have_loads;
	const char *loads_binary;	/* loads.binary */
	long long loads_missing;	/* loads.missing; -1 unknown */
	gpuenv_tri_t loads_truncated;
	const gpuenv_facts_object_t *objects; /* loads.objects; [0] the binary */
	size_t nobjects;
	size_t at; /* its index in the document's array */
} gpuenv_facts_binary_t;

typedef struct gpuenv_facts_framework {
	const char *kind, *dist, *version, *version_source, *local;
	/* cuda: the CUDA version the build is for.  The probe reads it from
	 * version.py; when that said nothing (no version.py) and the version's
	 * local label is cuXYZ, the decoder takes it from there and sets
	 * cuda_source to "local-version". */
	const char *cuda, *cuda_source;
	unsigned char cuda_state; /* of the document's own "cuda" */
	const char *cudnn, *hip;
	gpuenv_tri_t gpu; /* TRUE too when cuda came from the local label */
	/* the document's own values of what the lines above derive (what the
	 * writer writes back) */
	struct {
		const char *local, *cuda, *cuda_source;
		gpuenv_tri_t gpu;
	} written;
	const gpuenv_facts_binary_t *binaries;
	size_t nbinaries;
	size_t at; /* its index in the document's array */
} gpuenv_facts_framework_t;

typedef struct gpuenv_facts_env {
	const char *found_by, *kind, *interpreter, *real_interpreter, *prefix, *base_prefix;
	gpuenv_tri_t system_site_packages;
	gpuenv_facts_ver_t python;
	const char *python_xy;
	gpuenv_facts_strs_t sites;
	const gpuenv_facts_dist_t *dists;
	size_t ndists;
	const gpuenv_facts_framework_t *frameworks;
	size_t nframeworks;
	size_t at; /* its index in the document's array */
} gpuenv_facts_env_t;

typedef struct gpuenv_facts {
	const char *name; /* the file the facts came from, "" for a live probe */
	const char *schema, *gpuenv, *taken_at;
	double probe_ms; /* "probe_ms": the probe's own wall time; -1 unknown */
	gpuenv_facts_host_t host;
	const gpuenv_facts_warning_t *warnings;
	size_t nwarnings;
	gpuenv_facts_driver_t driver;
	gpuenv_facts_jetson_t jetson;
	gpuenv_facts_container_t container;
	gpuenv_facts_cvd_t cvd; /* "cuda_visible_devices" */
	const gpuenv_facts_pci_t *pci;
	size_t npci;
	const gpuenv_facts_gpu_t *gpus;
	size_t ngpus;
	bool have_toolkits; /* absent with --gpus-only: so is the rest of the
			       software stack (ldcache ... environments) */
	const gpuenv_facts_toolkit_t *toolkits;
	size_t ntoolkits;
	bool have_ldcache;  /* "ldcache" is an object (not null) */
	struct {
		const char *path, *format, *generator;
		long long entries;
		gpuenv_facts_strs_t hwcaps;
	} ldcache;
	const char *ld_library_path;
	bool have_libraries;
	const gpuenv_facts_library_t *libraries;
	size_t nlibraries;
	const gpuenv_facts_env_t *envs; /* "environments" */
	size_t nenvs;
} gpuenv_facts_t;

/* The facts document of f (docs/probe-schema.md), the one writer: its
 * text appended to b, exactly as json_dumps(JSON_INDENT(indent)) would
 * write the same document, with no tree built (lib/facts/write.c).  `gpuenv
 * probe --json` prints it, so probe -> JSON -> gpuenv_facts_decode -> JSON
 * gives the same bytes.  Keys in the schema's order; strings are f's
 * (already text: escaped as "Strings" says).  0 or -ENOMEM / the buffer's
 * error / GPUENV_EFORMAT (a string that is not valid UTF-8). */
GPUENV_API int gpuenv_facts_write(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f, gpuenv_buf_t *b,
	unsigned indent);
/* The document in three parts whose texts, one after the other, are
 * gpuenv_facts_write's: HEAD from the opening brace to "gpus", STACK
 * "toolkits" to "environments" (empty when f has neither), TAIL the rest.
 * The probe's stack is known before its GPUs (gpuenv_probe_begin), so
 * `probe --json` writes STACK while NVML starts.  Errors as
 * gpuenv_facts_write. */
enum {
	GPUENV_FACTS_HEAD = 1u << 0,
	GPUENV_FACTS_STACK = 1u << 1,
	GPUENV_FACTS_TAIL = 1u << 2,
	GPUENV_FACTS_ALL = GPUENV_FACTS_HEAD | GPUENV_FACTS_STACK | GPUENV_FACTS_TAIL,
};
GPUENV_API int gpuenv_facts_write_parts(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f,
	gpuenv_buf_t *b, unsigned indent, unsigned parts);
/* The same document as a jansson tree (that text parsed): *out is a new
 * reference (jansson's memory through ctx); the errors of gpuenv_facts_write. */
GPUENV_API int gpuenv_facts_json(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f, json_t **out);

/* What a framework's record implies beyond what it says: the local label
 * of its version ("2.7.1+cu128" -> "cu128") when "local" is null, and the
 * CUDA of a torch without version.py from that label ("cu128" -> "12.8",
 * cuda_source "local-version", gpu true).  fw->written holds what the
 * document said.  The decoder and the probe both call it.  0 or -ENOMEM. */
GPUENV_API int gpuenv_facts_framework_derive(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_facts_framework_t *fw);

/* Decode a parsed facts document.  name: the file it came from (for
 * messages; NULL for a live probe).  0, or with ctx->err set:
 * GPUENV_EFORMAT (not a facts document: "FILE: schema: expected a string,
 * got a number"), GPUENV_EUNSUPPORTED (another major schema version),
 * -ENOMEM. */
GPUENV_API int gpuenv_facts_decode(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const json_t *doc, const char *name, const gpuenv_facts_t **out);

/* The JSON document of the facts text (the first half of
 * gpuenv_facts_parse: size cap, syntax, out of memory, each with the same
 * message), for a caller that decodes it itself and decides when the tree
 * is freed (json_decref; jansson's memory, above). */
GPUENV_API int gpuenv_facts_read_json(gpuenv_ctx_t *ctx, const char *text, size_t len,
	const char *name, json_t **out);

/* Parse text (the JSON `gpuenv probe --json` writes) and decode it.
 * A malformed document is GPUENV_ESYNTAX at FILE:line:col, in gpuenv's own
 * words; jansson's allocations go through ctx. */
#define GPUENV_FACTS_MAX ((size_t)256 << 20)
GPUENV_API int gpuenv_facts_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *text, size_t len, const char *name, const gpuenv_facts_t **out);

/* ---- the target -------------------------------------------------------
 * One machine to build, resolve or judge for, whether probed (gpuenv
 * probe), read from a snapshot (--facts FILE) or declared by hand (a
 * pyproject.toml target).  Every part is optional: NULL / 0 / -1 unknown.
 * Versions are strings as their source writes them. */
typedef struct gpuenv_target_gpu {
	const char *name;	/* "NVIDIA H200" */
	int cc_major, cc_minor; /* 9, 0; -1 unknown */
	long long memory;	/* bytes; -1 unknown */
	bool visible;		/* CUDA enumerates it (or one of its MIG devices) */
} gpuenv_target_gpu_t;

typedef struct gpuenv_target_lib {
	const char *name;    /* family: "cudnn", "nccl", "cublas" */
	const char *version; /* "9.19.0.56" */
} gpuenv_target_lib_t;

typedef struct gpuenv_target {
	const char *name;   /* "auto" for this machine, else the declared name */
	const char *origin; /* "probe", "snapshot" or "declared" */
	size_t ngpus;
	const gpuenv_target_gpu_t *gpus;
	const char *driver;	 /* "580.159.04" */
	const char *driver_cuda; /* the newest CUDA it supports, "13.0" */
	const char *compat_cuda; /* the CUDA of a forward-compatibility libcuda
				    (cuda-compat) applications load, newer
				    than driver_cuda, "13.0" */
	const char *cuda;	 /* the CUDA the environment's builds use, "12.8" */
	const char *python;	 /* "3.12.3" (or "3.12") */
	const char *implementation; /* "cpython" (the default when NULL) */
	const char *os;		 /* "linux" (sys_platform) */
	const char *machine;	 /* "x86_64", "aarch64" (platform_machine) */
	const char *kernel;	 /* "6.8.0-49-generic" (platform_release) */
	const char *libc;	 /* "glibc" or "musl" */
	const char *libc_version; /* "2.35" */
	size_t nlibs;
	const gpuenv_target_lib_t *libs;
} gpuenv_target_t;

/* The target facts describe: the GPUs, the driver, the host, and the
 * Python environment env (an index in facts->envs; SIZE_MAX: the active
 * one, found by VIRTUAL_ENV, else the first) with its frameworks' CUDA and
 * the NVIDIA libraries it would load.  Strings are borrowed from facts or
 * allocated in arena.  0 or -ENOMEM (ctx->err set). */
GPUENV_API int gpuenv_target_from_facts(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_facts_t *facts, size_t env, gpuenv_target_t *out);

/* The machine facts describe, as every verb takes it (lock's probed
 * target, sync --target auto, labels, fit, doctor's host): the target of
 * gpuenv_target_from_facts, completed from the knowledge base when kb is
 * not NULL: a GPU's compute capability by its name when the facts lack it,
 * the newest CUDA the driver runs by its version when NVML did not say, and
 * no forward-compatibility CUDA unless the libcuda's is newer than that.
 * 0 or -ENOMEM (ctx->err set). */
struct gpuenv_kb;
GPUENV_API int gpuenv_target_machine(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_facts_t *facts, const struct gpuenv_kb *kb, size_t env, gpuenv_target_t *out);

/* The knowledge base's completion of t alone (what gpuenv_target_machine
 * adds to gpuenv_target_from_facts), for a target derived earlier.  0 or
 * -ENOMEM. */
GPUENV_API int gpuenv_target_complete(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const struct gpuenv_kb *kb, gpuenv_target_t *t);

/* The wheel platform a probed target supports, as a declared target says
 * it: "manylinux_2_36_x86_64" (glibc), else "linux_x86_64"; NULL without a
 * machine or when out of memory (arena). */
GPUENV_API const char *gpuenv_target_platform(gpuenv_arena_t *arena, const gpuenv_target_t *t);

/* ---- views of a target -------------------------------------------------
 * The structures the resolver's parts take, derived from one target so they
 * never disagree. */
struct gpuenv_wheel_target;
struct gpuenv_marker_env;
struct gpuenv_kb_target;

/* The wheel-tag target (include/gpuenv/wheel.h): CPython (or PyPy) of the
 * target's Python major.minor on its platform: linux with glibc
 * libc_version (manylinux tags), musl (musllinux), or linux without a known
 * libc (linux_ARCH only).  GPUENV_ENOTFOUND when the target names no Python
 * version or no machine, GPUENV_EUNSUPPORTED for an OS other than linux;
 * ctx->err says which. */
GPUENV_API int gpuenv_target_wheel(gpuenv_ctx_t *ctx, const gpuenv_target_t *t,
	struct gpuenv_wheel_target *out);

/* The PEP 508 marker environment (include/gpuenv/pep508.h) of the target:
 * python_version "3.12", python_full_version / implementation_version
 * "3.12.3" (the target's version as written), implementation_name, platform_python_implementation,
 * sys_platform "linux", platform_system "Linux", os_name "posix",
 * platform_machine, platform_release (the kernel).  Only what the target
 * knows is set: the other fields keep out's values (start from
 * gpuenv_marker_env_default, or zeros to leave them unset).  Strings are
 * borrowed from t or allocated in arena.  0 or -ENOMEM. */
GPUENV_API int gpuenv_target_marker_env(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_target_t *t, struct gpuenv_marker_env *out);

/* The host part of the knowledge base's targets (include/gpuenv/kb.h): the
 * driver, the CUDA it reports and a forward-compatibility CUDA; no GPU.
 * The one conversion of a target's driver facts into the KB's terms:
 * gpuenv_target_kb below starts from it, doctor and preflight judge the
 * driver with it. */
GPUENV_API void gpuenv_target_kb_host(const gpuenv_target_t *t, struct gpuenv_kb_target *out);

/* Is the machine a data-center host, for forward compatibility: 1 when
 * every visible GPU the KB knows is a data-center one, 0 when one is not
 * (*known: that GPU), -1 when the KB knows none of them (*known NULL).
 * Each GPU is judged by gpuenv_kb_target_datacenter; the one place that
 * decides it for a host (preflight --image, export's base image). */
struct gpuenv_kb_gpu;
GPUENV_API int gpuenv_target_datacenter(const struct gpuenv_kb *kb, const gpuenv_target_t *t,
	const struct gpuenv_kb_gpu **known);

/* The knowledge base's targets (include/gpuenv/kb.h): one per distinct
 * compute capability of the visible GPUs (none known: one without), each
 * with the driver, the CUDA it reports and a forward-compatibility CUDA,
 * and the KB's GPU of that name when it knows exactly one.  Fills out[0..max)
 * and returns how many the target has (the first max written). */
GPUENV_API size_t gpuenv_target_kb(const struct gpuenv_kb *kb, const gpuenv_target_t *t,
	struct gpuenv_kb_target *out, size_t max);

/* ---- small readers shared by the verbs -------------------------------- */

/* "9.0" -> 9, 0 (each part 0..99 / 0..9); false when malformed. */
GPUENV_API bool gpuenv_facts_cc(const char *s, int *maj, int *min);
/* The compute capability of a GPU: compute_capability, else its sm. */
GPUENV_API bool gpuenv_facts_gpu_cc(const gpuenv_facts_gpu_t *g, int *maj, int *min);
/* Is the GPU visible to CUDA: its "visible", else CUDA_VISIBLE_DEVICES'
 * visible list, else true. */
GPUENV_API bool gpuenv_facts_gpu_visible(const gpuenv_facts_t *f, const gpuenv_facts_gpu_t *g);
/* The active environment (found by VIRTUAL_ENV), else the first; SIZE_MAX
 * when there is none. */
GPUENV_API size_t gpuenv_facts_active_env(const gpuenv_facts_t *f);

#ifdef __cplusplus
}
#endif
#endif
