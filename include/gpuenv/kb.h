/* gpuenv kb: the compatibility knowledge base (data/kb/<file>.toml) as typed
 * tables, and the queries the verbs ask of it.
 *
 * The files are compiled into the library (scripts/embed.py); a directory
 * given to gpuenv_kb_load() replaces the files it holds.  Every row keeps its
 * source, file and line, so an answer can always cite where its fact was
 * read (docs/kb.md: the sourcing rule); a row without a source is a load
 * error here as it is in tests/kb_check.py.
 *
 * The tables are plain arrays of plain structs.  Strings are slices into the
 * KB's own arena and live as long as the gpuenv_kb_t (the TOML documents
 * are freed once mapped).  Optional keys that a
 * row leaves out read as: a NULL slice, a version with n == 0, an integer of
 * GPUENV_KB_NONE, a tri-state of -1, an empty list.
 */
#ifndef GPUENV_KB_H
#define GPUENV_KB_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_KB_NONE (-1) /* an optional integer the row leaves out */

/* ---- values ------------------------------------------------------------- */

/* A dotted numeric version as the KB writes it: a driver "570.124.06", a
 * CUDA version "12.8", a compute capability "9.0".  Missing parts compare
 * as 0, so "570" < "570.26" and "12" == "12.0". */
typedef struct gpuenv_kb_ver {
	gpuenv_str_t str; /* as written; ptr NULL when absent */
	uint32_t part[4];
	uint8_t n; /* number of parts; 0 = absent */
} gpuenv_kb_ver_t;

/* Parse 1 to 4 dot-separated decimal parts (each < 10^9) filling the whole
 * slice; leading zeros are fine ("570.124.06").  out->str is s. */
GPUENV_API bool gpuenv_kb_ver_parse(gpuenv_str_t s, gpuenv_kb_ver_t *out);
GPUENV_API int gpuenv_kb_ver_cmp(const gpuenv_kb_ver_t *a, const gpuenv_kb_ver_t *b);
/* a's first n parts equal b's ("12.8.1" has prefix "12.8") */
GPUENV_API bool gpuenv_kb_ver_prefix(const gpuenv_kb_ver_t *v, const gpuenv_kb_ver_t *prefix);

/* A GPU code target: a cubin architecture (sm_90, sm_90a arch-specific,
 * sm_100f family) or, where the caller says so, a PTX one (compute_90). */
typedef struct gpuenv_kb_sm {
	gpuenv_str_t str; /* as written */
	uint8_t major, minor; /* sm_120 -> 12.0, sm_90a -> 9.0 */
	char variant; /* 0, 'a' (arch-specific) or 'f' (family) */
} gpuenv_kb_sm_t;

/* Parse "sm_XY", "sm_XYa", "sm_XYf", "compute_XY[af]" or a compute
 * capability "X.Y"; the last digit of XY is the minor. */
GPUENV_API bool gpuenv_kb_sm_parse(gpuenv_str_t s, gpuenv_kb_sm_t *out);

typedef struct gpuenv_kb_strs {
	const gpuenv_str_t *v;
	uint32_t n;
} gpuenv_kb_strs_t;
typedef struct gpuenv_kb_vers {
	const gpuenv_kb_ver_t *v;
	uint32_t n;
} gpuenv_kb_vers_t;
typedef struct gpuenv_kb_sms {
	const gpuenv_kb_sm_t *v;
	uint32_t n;
} gpuenv_kb_sms_t;
typedef struct gpuenv_kb_ints {
	const int64_t *v;
	uint32_t n;
} gpuenv_kb_ints_t;

/* ---- files and rows ------------------------------------------------------ */

enum gpuenv_kb_file_id {
	GPUENV_KB_CUDA = 0, /* cuda.toml */
	GPUENV_KB_GPUS,	    /* gpus.toml */
	GPUENV_KB_TORCH,    /* torch.toml */
	GPUENV_KB_LIBRARIES, /* libraries.toml */
	GPUENV_KB_WHEELS,   /* wheels.toml */
	GPUENV_KB_NGC,	    /* ngc.toml */
	GPUENV_KB_DIAGNOSE, /* diagnose.toml */
	GPUENV_KB_IMAGES,   /* images.toml: Docker Hub images by tag grammar */
	GPUENV_KB_ABOUT,    /* about.toml: the knowledge base's own date */
	GPUENV_KB_TENSORRT, /* tensorrt.toml: gpuenv trt (gpuenv/kb_trt.h) */
	GPUENV_KB_NFILES
};

#define GPUENV_KB_ALL ((1u << GPUENV_KB_NFILES) - 1)
#define GPUENV_KB_FILE(id) (1u << (id)) /* a bit of a load mask */

typedef struct gpuenv_kb_file {
	const char *name;   /* "cuda.toml" */
	const char *origin; /* "embedded", the path it was read from, or NULL
			       when the load mask left it out */
	size_t size;	    /* bytes */
	size_t rows;	    /* rows of every table in it */
} gpuenv_kb_file_t;

/* What every row has; first member of every row struct. */
typedef struct gpuenv_kb_row {
	gpuenv_str_t source; /* never empty */
	gpuenv_str_t note;   /* ptr NULL when absent */
	bool secondary;	     /* confidence = "secondary" */
	uint8_t file;	     /* enum gpuenv_kb_file_id */
	uint32_t line;	     /* of the row's [[table]] header */
} gpuenv_kb_row_t;

/* ---- cuda.toml ----------------------------------------------------------- */
typedef struct gpuenv_kb_toolkit {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t cuda; /* "12.8" */
	int64_t update;	      /* 0 = GA */
	gpuenv_str_t label;
	gpuenv_kb_ver_t driver_linux, driver_windows;
} gpuenv_kb_toolkit_t;

/* A toolkit release the sources show whose minimum driver no stored source
 * gives (Table 3 not read): it exists, and that is all the KB says. */
typedef struct gpuenv_kb_toolkit_known {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t cuda;
	int64_t update;
	gpuenv_str_t label;
} gpuenv_kb_toolkit_known_t;

typedef struct gpuenv_kb_minor_compat {
	gpuenv_kb_row_t row;
	int64_t cuda_major;
	gpuenv_kb_ver_t driver_min, driver_below; /* [min, below) */
} gpuenv_kb_minor_compat_t;

typedef struct gpuenv_kb_branch {
	gpuenv_kb_row_t row;
	gpuenv_str_t branch; /* "R535" */
	gpuenv_str_t designation, eol;
	int64_t max_cuda_major;
} gpuenv_kb_branch_t;

typedef struct gpuenv_kb_cuda_arch_list {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t cuda_min, cuda_max; /* inclusive */
	gpuenv_kb_sms_t sm;
} gpuenv_kb_cuda_arch_list_t;

typedef struct gpuenv_kb_rule {
	gpuenv_kb_row_t row;
	gpuenv_str_t id, text;
} gpuenv_kb_rule_t;

typedef struct gpuenv_kb_driver_observed {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t driver, cuda;
	gpuenv_str_t kernel_module;
} gpuenv_kb_driver_observed_t;

/* ---- gpus.toml ----------------------------------------------------------- */
typedef struct gpuenv_kb_arch {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t cc;
	gpuenv_kb_sm_t sm;
	gpuenv_str_t architecture;
	int64_t last_cuda_major;
	gpuenv_str_t last_driver_branch;
} gpuenv_kb_arch_t;

typedef struct gpuenv_kb_gpu {
	gpuenv_kb_row_t row;
	gpuenv_str_t name;
	gpuenv_kb_ver_t cc;
	gpuenv_str_t segment; /* datacenter, workstation, consumer, jetson */
} gpuenv_kb_gpu_t;

typedef struct gpuenv_kb_pci_vendor {
	gpuenv_kb_row_t row;
	int32_t vendor_id;
	gpuenv_str_t name;
} gpuenv_kb_pci_vendor_t;

typedef struct gpuenv_kb_pci {
	gpuenv_kb_row_t row;
	int32_t device_id;		    /* 0x2335 */
	int32_t subsys_vendor, subsys_device; /* GPUENV_KB_NONE when absent */
	gpuenv_str_t name;		    /* the driver's product name */
	gpuenv_str_t gpu;		    /* a gpu row's name */
	const gpuenv_kb_gpu_t *gpu_row;	    /* that row (resolved at load) */
} gpuenv_kb_pci_t;

/* ---- torch.toml ---------------------------------------------------------- */
typedef struct gpuenv_kb_torch_release {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t torch; /* "2.11" */
	gpuenv_kb_ver_t python_min, python_max;
	gpuenv_str_t python_note, cxx, released;
} gpuenv_kb_torch_release_t;

typedef struct gpuenv_kb_torch_variant {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t torch; /* "2.11" */
	gpuenv_str_t tag;      /* "cu130" */
	gpuenv_kb_ver_t cuda;
	gpuenv_str_t channel; /* stable, experimental */
	gpuenv_kb_ver_t cudnn, nccl;
	int8_t pypi_default; /* -1 not stated, 0, 1 */
} gpuenv_kb_torch_variant_t;

typedef struct gpuenv_kb_torch_arch_list {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t torch;
	gpuenv_str_t tag, platform;
	gpuenv_kb_sms_t sm, ptx, extra_sm;
} gpuenv_kb_torch_arch_list_t;

typedef struct gpuenv_kb_torch_pin {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t torch; /* "2.11.0" */
	gpuenv_str_t tag, package;
	gpuenv_kb_strs_t extras;
	gpuenv_str_t spec, marker;
} gpuenv_kb_torch_pin_t;

/* ---- libraries.toml ------------------------------------------------------- */
typedef struct gpuenv_kb_cudnn {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t cudnn;
	int64_t cuda_major;
	gpuenv_kb_vers_t cuda;
	int8_t static_link;
	gpuenv_kb_ver_t driver_linux, driver_windows;
	gpuenv_kb_vers_t cc;
} gpuenv_kb_cudnn_t;

typedef struct gpuenv_kb_nccl {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t nccl;
	gpuenv_kb_vers_t cuda;
	gpuenv_kb_ints_t cuda_majors;
} gpuenv_kb_nccl_t;

typedef struct gpuenv_kb_tensorrt {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t tensorrt;
	gpuenv_kb_vers_t cuda;
	gpuenv_kb_ints_t cuda_majors;
	gpuenv_kb_ver_t cudnn_optional;
	gpuenv_kb_sm_t sm_min; /* str.ptr NULL when absent */
} gpuenv_kb_tensorrt_t;

typedef struct gpuenv_kb_version_encoding {
	gpuenv_kb_row_t row;
	gpuenv_str_t library, formula;
	int64_t major_min, major_max, example_int;
	gpuenv_kb_ver_t example_version;
} gpuenv_kb_version_encoding_t;

typedef struct gpuenv_kb_soname {
	gpuenv_kb_row_t row;
	gpuenv_str_t soname, library;
	int64_t major, cuda_major;
} gpuenv_kb_soname_t;

/* ---- wheels.toml ---------------------------------------------------------- */
typedef struct gpuenv_kb_local_tag {
	gpuenv_kb_row_t row;
	gpuenv_str_t project, pattern, meaning, index;
} gpuenv_kb_local_tag_t;

typedef struct gpuenv_kb_wheel_package {
	gpuenv_kb_row_t row;
	gpuenv_str_t name, framework;
	int64_t cuda_major;
	gpuenv_kb_ver_t cuda_min;
} gpuenv_kb_wheel_package_t;

typedef struct gpuenv_kb_version_rule {
	gpuenv_kb_row_t row;
	gpuenv_str_t project, versions;
	int64_t cuda_major, cudnn_major;
} gpuenv_kb_version_rule_t;

typedef struct gpuenv_kb_wheel_extra {
	gpuenv_kb_row_t row;
	gpuenv_str_t project, extra, requires;
	int64_t cuda_major;
	int8_t bundles_cuda;
} gpuenv_kb_wheel_extra_t;

typedef struct gpuenv_kb_meta_pin {
	gpuenv_kb_row_t row;
	gpuenv_str_t parent;
	gpuenv_kb_ver_t parent_version;
	gpuenv_str_t extra, package, spec, marker;
} gpuenv_kb_meta_pin_t;

/* ---- about.toml ----------------------------------------------------------- */
/* The knowledge base's own date: the day its rows were last checked against
 * their sources (one row).  "Newer than the KB" answers compare with it. */
typedef struct gpuenv_kb_about {
	gpuenv_kb_row_t row;
	gpuenv_str_t date; /* "2026-12-01" */
} gpuenv_kb_about_t;

/* ---- ngc.toml ------------------------------------------------------------- */
typedef struct gpuenv_kb_container {
	gpuenv_kb_row_t row;
	gpuenv_str_t image, tag; /* "nvcr.io/nvidia/pytorch", "24.05-py3" */
	gpuenv_kb_ver_t release, cuda, cuda_full, python;
	gpuenv_str_t torch;
	gpuenv_kb_ver_t tensorrt, tensorrt_llm, cudnn, nccl, ubuntu, cuda_driver;
	/* the framework or server the image is built around, as its notes write it */
	gpuenv_str_t tensorflow, jax, triton, vllm;
	gpuenv_str_t driver_min_branch;
	gpuenv_kb_vers_t datacenter_drivers;
	gpuenv_kb_ver_t cc_min;
	/* Jetson (L4T) images: the JetPack and L4T releases they are built for */
	gpuenv_kb_ver_t jetpack, l4t;
} gpuenv_kb_container_t;

/* ---- images.toml ---------------------------------------------------------- */
/* A CUDA release published as nvidia/cuda tags "<cuda_full>-<flavour>-<os>":
 * every os of the row carries every flavour ("base", "runtime", "devel",
 * "cudnn-runtime", "cudnn8-devel", ...). */
typedef struct gpuenv_kb_cuda_image {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t cuda_full; /* "12.4.1" */
	gpuenv_kb_strs_t os;	   /* "ubuntu22.04", "ubi9" */
	gpuenv_kb_strs_t flavours;
	gpuenv_kb_ver_t cudnn; /* in the cudnn flavours, "9.1.0.70" */
	gpuenv_str_t status;   /* "supported", "end-of-life", "unsupported" */
} gpuenv_kb_cuda_image_t;

/* A pytorch/pytorch release "<torch>-cuda<cuda>-cudnn<cudnn_major>-<flavour>". */
typedef struct gpuenv_kb_pytorch_image {
	gpuenv_kb_row_t row;
	gpuenv_kb_ver_t torch, cuda; /* "2.5.1", "12.4" */
	int64_t cudnn_major;
	gpuenv_kb_strs_t flavours; /* "runtime", "devel" */
	gpuenv_kb_ver_t python;	   /* the image's Python, as its build sets it */
} gpuenv_kb_pytorch_image_t;

/* ---- diagnose.toml -------------------------------------------------------- */
typedef struct gpuenv_kb_signature {
	gpuenv_kb_row_t row;
	gpuenv_str_t id, title;
	gpuenv_kb_strs_t literal, regex; /* at least one pattern in all */
	int8_t ignore_case;
	/* optional: the signature claims a line only when one of these
	 * literals was on that line or on one of the `within` lines before it
	 * (a Python exception read with the traceback frame above it) */
	gpuenv_kb_strs_t after;
	int64_t within; /* 0..GPUENV_DIAG_MAX_WITHIN (gpuenv/diagnose.h); GPUENV_KB_NONE: absent */
	gpuenv_str_t cause;
	gpuenv_str_t fix;	/* generic; {N} captures only */
	gpuenv_str_t fix_log;	/* from the log's captures and the KB ({N|filter}) */
	gpuenv_str_t fix_facts; /* from the machine's facts */
} gpuenv_kb_signature_t;

/* ---- the knowledge base ---------------------------------------------------- */
#define GPUENV_KB_TABLE(type, name) \
	const type *name;           \
	size_t n_##name

typedef struct gpuenv_kb {
	gpuenv_ctx_t *ctx;
	gpuenv_kb_file_t files[GPUENV_KB_NFILES];
	/* the installed bundle the files come from (gpuenv/kb_bundle.h), or
	 * NULL: embedded, or --kb-dir */
	const char *bundle;
	const char *bundle_key; /* the name of the key that signed it */
	/* cuda.toml */
	GPUENV_KB_TABLE(gpuenv_kb_toolkit_t, toolkit);
	GPUENV_KB_TABLE(gpuenv_kb_minor_compat_t, minor_compat);
	GPUENV_KB_TABLE(gpuenv_kb_toolkit_known_t, toolkit_known);
	GPUENV_KB_TABLE(gpuenv_kb_branch_t, branch);
	GPUENV_KB_TABLE(gpuenv_kb_cuda_arch_list_t, cuda_arch_list);
	GPUENV_KB_TABLE(gpuenv_kb_rule_t, rule);
	GPUENV_KB_TABLE(gpuenv_kb_driver_observed_t, driver_observed);
	/* gpus.toml */
	GPUENV_KB_TABLE(gpuenv_kb_arch_t, arch);
	GPUENV_KB_TABLE(gpuenv_kb_gpu_t, gpu);
	GPUENV_KB_TABLE(gpuenv_kb_pci_vendor_t, pci_vendor);
	GPUENV_KB_TABLE(gpuenv_kb_pci_t, pci);
	/* torch.toml */
	GPUENV_KB_TABLE(gpuenv_kb_torch_release_t, torch_release);
	GPUENV_KB_TABLE(gpuenv_kb_torch_variant_t, torch_variant);
	GPUENV_KB_TABLE(gpuenv_kb_torch_arch_list_t, torch_arch_list);
	GPUENV_KB_TABLE(gpuenv_kb_torch_pin_t, torch_pin);
	/* libraries.toml */
	GPUENV_KB_TABLE(gpuenv_kb_cudnn_t, cudnn);
	GPUENV_KB_TABLE(gpuenv_kb_nccl_t, nccl);
	GPUENV_KB_TABLE(gpuenv_kb_tensorrt_t, tensorrt);
	GPUENV_KB_TABLE(gpuenv_kb_version_encoding_t, version_encoding);
	GPUENV_KB_TABLE(gpuenv_kb_soname_t, soname);
	/* wheels.toml */
	GPUENV_KB_TABLE(gpuenv_kb_local_tag_t, local_tag);
	GPUENV_KB_TABLE(gpuenv_kb_wheel_package_t, wheel_package);
	GPUENV_KB_TABLE(gpuenv_kb_version_rule_t, version_rule);
	GPUENV_KB_TABLE(gpuenv_kb_wheel_extra_t, wheel_extra);
	GPUENV_KB_TABLE(gpuenv_kb_meta_pin_t, meta_pin);
	/* ngc.toml */
	GPUENV_KB_TABLE(gpuenv_kb_container_t, container);
	/* diagnose.toml */
	GPUENV_KB_TABLE(gpuenv_kb_signature_t, signature);
	/* about.toml */
	GPUENV_KB_TABLE(gpuenv_kb_about_t, about);
	/* images.toml */
	GPUENV_KB_TABLE(gpuenv_kb_cuda_image_t, cuda_image);
	GPUENV_KB_TABLE(gpuenv_kb_pytorch_image_t, pytorch_image);
	/* tensorrt.toml: the row types are in gpuenv/kb_trt.h */
	GPUENV_KB_TABLE(struct gpuenv_kb_trt_release, trt_release);
	GPUENV_KB_TABLE(struct gpuenv_kb_trt_precision, trt_precision);
	GPUENV_KB_TABLE(struct gpuenv_kb_trt_flag, trt_flag);
	GPUENV_KB_TABLE(struct gpuenv_kb_trt_hwcompat, trt_hwcompat);
	GPUENV_KB_TABLE(struct gpuenv_kb_trt_vcompat, trt_vcompat);

	/* private: rows and strings */
	gpuenv_arena_t arena;
} gpuenv_kb_t;

#undef GPUENV_KB_TABLE

/* ---- loading ---------------------------------------------------------------- */

/* One file's bytes, for gpuenv_kb_load_sources. */
typedef struct gpuenv_kb_source {
	const char *name;   /* "gpus.toml" */
	const void *data;   /* TOML text, not NUL-terminated */
	size_t len;
	const char *origin; /* shown in errors and `kb sources`; NULL: name */
} gpuenv_kb_source_t;

#define GPUENV_KB_MAX_FILE ((size_t)8 << 20) /* per file, from a directory */

/* Load the knowledge base: the embedded files, each replaced by DIR/<name>
 * when dir is not NULL and holds that file.  Errors (a parse error, a row
 * without a source, a key of the wrong type, an unknown table or key, a
 * broken cross-reference) come back as GPUENV_ESYNTAX / GPUENV_ETYPE /
 * GPUENV_EFORMAT / -errno with ctx->err at "file:line:col".  *out is freed
 * with gpuenv_kb_free. */
GPUENV_API int gpuenv_kb_load(gpuenv_ctx_t *ctx, const char *dir, gpuenv_kb_t **out);
/* As gpuenv_kb_load, only the files in mask (GPUENV_KB_FILE(GPUENV_KB_CUDA)
 * | ...); the tables of the others stay empty.  A query needs the files its
 * rows come from: the verbs load what they ask about. */
GPUENV_API int gpuenv_kb_load_files(gpuenv_ctx_t *ctx, const char *dir, unsigned mask,
	gpuenv_kb_t **out);
/* As gpuenv_kb_load_files, with files given in memory (names must be known
 * KB files; the data is copied); the others in mask come from the embedded
 * copy. */
GPUENV_API int gpuenv_kb_load_sources(gpuenv_ctx_t *ctx, const gpuenv_kb_source_t *src,
	size_t n, unsigned mask, gpuenv_kb_t **out);
GPUENV_API void gpuenv_kb_free(gpuenv_kb_t *kb);

/* Every row of every table, in file and table order: fn(ud, table name,
 * row). */
typedef void (*gpuenv_kb_row_fn)(void *ud, const char *table, const gpuenv_kb_row_t *row);
GPUENV_API void gpuenv_kb_foreach_row(const gpuenv_kb_t *kb, gpuenv_kb_row_fn fn, void *ud);

/* ---- the knowledge base's age (lib/kb/age.c) -----------------------------
 * A question about a release the knowledge base does not know, and that is
 * newer than every release of its kind the knowledge base knows, is answered
 * with the knowledge base's date instead of a bare "not found". */

/* The date of about.toml ("2026-12-01"), or a NULL slice. */
GPUENV_API gpuenv_str_t gpuenv_kb_date(const gpuenv_kb_t *kb);
/* The newest torch series, CUDA toolkit release and NGC release of one
 * image the knowledge base knows, or NULL. */
GPUENV_API const gpuenv_kb_ver_t *gpuenv_kb_newest_torch(const gpuenv_kb_t *kb);
GPUENV_API const gpuenv_kb_ver_t *gpuenv_kb_newest_cuda(const gpuenv_kb_t *kb);
GPUENV_API const gpuenv_kb_ver_t *gpuenv_kb_newest_ngc(const gpuenv_kb_t *kb, gpuenv_str_t image);

enum gpuenv_kb_kind { GPUENV_KB_KIND_TORCH, GPUENV_KB_KIND_CUDA, GPUENV_KB_KIND_NGC };
/* Whether v (a torch version, a CUDA version, an NGC release "27.01" of
 * image) is newer than all the knowledge base knows of that kind; if so,
 * the sentence that says so goes to buf ("the knowledge base is from
 * 2026-12; torch 2.15 is newer than the newest it knows, 2.14"). */
GPUENV_API bool gpuenv_kb_newer(const gpuenv_kb_t *kb, int kind, const gpuenv_kb_ver_t *v,
	gpuenv_str_t image, char *buf, size_t size);
/* gpuenv_kb_newer's sentence as the error (code, with the hint to update),
 * returning code; or 0 when v is not newer (nothing recorded). */
GPUENV_API int gpuenv_kb_fail_newer(const gpuenv_kb_t *kb, int code, int kind,
	const gpuenv_kb_ver_t *v, gpuenv_str_t image);

/* The embedded copy of file id (for `kb sources` and tests). */
GPUENV_API gpuenv_kb_source_t gpuenv_kb_embedded(int file_id);
/* "cuda.toml", ... for a file id; NULL when out of range. */
GPUENV_API const char *gpuenv_kb_file_name(int file_id);

/* Row counts of every table, in file order. */
typedef struct gpuenv_kb_table_info {
	int file;	  /* enum gpuenv_kb_file_id */
	const char *name; /* "toolkit" (the [[table]] name) */
	size_t rows, secondary;
} gpuenv_kb_table_info_t;
/* Fill out[0..max) and return the number of tables (may exceed max). */
GPUENV_API size_t gpuenv_kb_tables(const gpuenv_kb_t *kb, gpuenv_kb_table_info_t *out,
	size_t max);

/* "cuda.toml:412" for a row (buf of 64 bytes is enough). */
GPUENV_API const char *gpuenv_kb_row_where(const gpuenv_kb_row_t *row, char *buf,
	size_t size);

/* The wheels.toml [[package]] row of a distribution whose name fixes a CUDA
 * major (nvidia-cudnn-cu12, cupy-cuda12x, jax-cuda13-plugin), by its
 * PEP 503 normalized name; NULL when the KB has none (or wheels.toml is not
 * loaded). */
GPUENV_API const gpuenv_kb_wheel_package_t *gpuenv_kb_wheel_package(const gpuenv_kb_t *kb,
	const char *normalized_name);

/* ---- CUDA and the driver ------------------------------------------------------ */

/* The toolkit row of a CUDA version ("12.8" GA: update 0; update >= 1 for
 * "Update N"); NULL when the KB has no such release. */
GPUENV_API const gpuenv_kb_toolkit_t *gpuenv_kb_toolkit(const gpuenv_kb_t *kb,
	const gpuenv_kb_ver_t *cuda, int update);

/* The minimum Linux driver for a CUDA version: the driver of its GA row.
 * cuda is "MAJOR.MINOR" (a third part, as in "12.8.1", is ignored).
 * GPUENV_ENOTFOUND with a hint naming the known versions otherwise. */
GPUENV_API int gpuenv_kb_cuda_min_driver(const gpuenv_kb_t *kb, gpuenv_str_t cuda,
	const gpuenv_kb_toolkit_t **ga);

/* The minor-version compatibility row of a CUDA major, NULL when none. */
GPUENV_API const gpuenv_kb_minor_compat_t *gpuenv_kb_minor_compat(const gpuenv_kb_t *kb,
	int64_t cuda_major);

/* The data-center branch row of a driver ("R535" for 535.104.05), or NULL. */
GPUENV_API const gpuenv_kb_branch_t *gpuenv_kb_driver_branch(const gpuenv_kb_t *kb,
	const gpuenv_kb_ver_t *driver);

/* What a driver can run. */
typedef struct gpuenv_kb_driver_max {
	/* the newest release (GA or update) whose minimum driver it meets, by
	 * the toolkit table (rule backward-compat); NULL: older than them all */
	const gpuenv_kb_toolkit_t *ga;
	/* the minor-version compatibility range the driver falls in: every
	 * CUDA <mvc->cuda_major>.x runs, with the limits of that rule; NULL */
	const gpuenv_kb_minor_compat_t *mvc;
	const gpuenv_kb_branch_t *branch; /* NULL when not a listed branch */
} gpuenv_kb_driver_max_t;
GPUENV_API void gpuenv_kb_driver_max_cuda(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *driver,
	gpuenv_kb_driver_max_t *out);

/* What a driver can run: the one answer to "does this host run CUDA X.Y",
 * used by doctor, preflight, diagnose, `kb` and the resolver alike.  The
 * order of the checks is the order of NVIDIA's rules: backward
 * compatibility (the driver supports X.Y itself), forward compatibility (a
 * cuda-compat libcuda for X.Y is what applications load), minor-version
 * compatibility (the driver is in the [[minor_compat]] range of X), else no. */
enum gpuenv_kb_runs {
	GPUENV_KB_RUNS_NO = 0,	  /* the driver is too old for that CUDA */
	GPUENV_KB_RUNS_GA,	  /* driver >= the GA minimum (rule backward-compat) */
	GPUENV_KB_RUNS_MINOR_COMPAT, /* only through minor-version compatibility */
	GPUENV_KB_RUNS_UNKNOWN,	  /* the facts or the KB lack what the answer needs */
	GPUENV_KB_RUNS_FORWARD_COMPAT, /* through the forward-compatibility package
					  (data-center GPUs: rule forward-compat) */
};
typedef struct gpuenv_kb_driver_cuda {
	int runs;			     /* enum gpuenv_kb_runs */
	const gpuenv_kb_toolkit_t *ga;	     /* GA row of the CUDA version; NULL unknown */
	const gpuenv_kb_minor_compat_t *mvc; /* minor-compat row of its major */
	/* the newest CUDA the driver runs by itself: the target's driver_cuda
	 * when the driver reported one, else the KB's toolkit table (max_row
	 * is that row); n == 0 when neither is known */
	gpuenv_kb_ver_t max;
	const gpuenv_kb_toolkit_t *max_row;
} gpuenv_kb_driver_cuda_t;

struct gpuenv_kb_target;
/* Does the target's driver run applications built with CUDA cuda
 * (MAJOR.MINOR; a third part is ignored)?  Returns out->runs. */
GPUENV_API int gpuenv_kb_driver_runs_cuda(const gpuenv_kb_t *kb, const struct gpuenv_kb_target *t,
	const gpuenv_kb_ver_t *cuda, gpuenv_kb_driver_cuda_t *out);

/* A CUDA version as a person writes it: MAJOR.MINOR, optionally .PATCH
 * ("12.8", "12.4.1"); out->n is 2 (the patch is dropped).  A bare major
 * ("12") is refused rather than read as 12.0.  GPUENV_EVERSION with a
 * message and hint in ctx->err otherwise.  Every verb that takes a CUDA
 * version parses it here. */
GPUENV_API int gpuenv_kb_cuda_parse(gpuenv_ctx_t *ctx, gpuenv_str_t s, gpuenv_kb_ver_t *out);

/* The CUDA version a torch build tag names: "cu126" -> 12.6, "cu130" ->
 * 13.0, "cu92" -> 9.2 (cu, then 2 or 3 digits, the last one the minor: the
 * "+cu{major}{minor}" of wheels.toml's [[local_tag]] row).  tag is the tag
 * alone, as a local version label ("+cu126" without the '+'), a
 * torch-backend name or the last part of a PyTorch index URL write it.  The
 * version goes to buf as text ("12.6") and, when out is not NULL, to *out
 * (its str is buf).  NULL for "cpu", "rocm6.2", anything else, or a buf too
 * small.  Every reader of such a tag asks here. */
GPUENV_API const char *gpuenv_kb_cuda_of_tag(gpuenv_str_t tag, char *buf, size_t size,
	gpuenv_kb_ver_t *out);

/* A rule row by id ("minor-version-compat"), NULL when absent. */
GPUENV_API const gpuenv_kb_rule_t *gpuenv_kb_rule(const gpuenv_kb_t *kb, const char *id);

/* ---- GPUs ------------------------------------------------------------------------- */

/* The arch row of a compute capability, NULL when unknown. */
GPUENV_API const gpuenv_kb_arch_t *gpuenv_kb_arch(const gpuenv_kb_t *kb, unsigned major,
	unsigned minor);

enum gpuenv_kb_match {
	GPUENV_KB_MATCH_EXACT = 1,  /* the name, brand words aside ("RTX 5090") */
	GPUENV_KB_MATCH_PCI,	    /* a PCI id ("0x2335", "10de:2335") */
	GPUENV_KB_MATCH_PREFIX,	    /* a longer product name ("NVIDIA H100 80GB HBM3") */
	GPUENV_KB_MATCH_PARTIAL,    /* the query starts a name ("RTX PRO 6000") */
};
typedef struct gpuenv_kb_gpu_match {
	const gpuenv_kb_gpu_t *gpu;
	const gpuenv_kb_pci_t *pci; /* the PCI row when one decided */
	int how;		    /* enum gpuenv_kb_match */
} gpuenv_kb_gpu_match_t;

/* Find GPUs by a name as people and tools write it ("RTX 5090", "h100",
 * "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "Tesla T4") or a PCI device id
 * ("0x2335", "2335", "10de:2335").  Case, punctuation and the words NVIDIA,
 * GeForce and Tesla do not matter, nor Quadro when nothing matches with it
 * ("RTX 8000"; docs/kb.md has the order).  The best kind of match wins; returns how
 * many GPUs matched that well (out[0..max) filled): 1 is an answer, more is
 * ambiguous, 0 none. */
GPUENV_API size_t gpuenv_kb_gpu_find(const gpuenv_kb_t *kb, const char *query,
	gpuenv_kb_gpu_match_t *out, size_t max);
/* One GPU or an error: GPUENV_ENOTFOUND (with a suggestion when a name is
 * close) or GPUENV_EDUPLICATE when the name is ambiguous (the hint lists
 * the candidates). */
GPUENV_API int gpuenv_kb_gpu_lookup(const gpuenv_kb_t *kb, const char *query,
	gpuenv_kb_gpu_match_t *out);

/* ---- CUDA code and compute capabilities ---------------------------------------------- */

/* Does code built for target sm run on a GPU of compute capability
 * major.minor?  A cubin (ptx false): same major and minor <= the GPU's; an
 * arch-specific cubin (sm_90a) only on exactly that capability; a family
 * cubin (sm_100f) on the same major with minor >= its own.  PTX (ptx true):
 * any GPU of capability >= the target (JIT-compiled by the driver, which
 * must be new enough for the PTX: the caller's concern); arch-specific PTX
 * only on exactly that capability, family PTX within the family. */
GPUENV_API bool gpuenv_kb_sm_runs_on(const gpuenv_kb_sm_t *sm, bool ptx, unsigned major,
	unsigned minor);

typedef struct gpuenv_kb_cover {
	bool ok;
	bool via_ptx;		  /* no cubin fits; PTX must be JIT-compiled */
	const gpuenv_kb_sm_t *by; /* the cubin (or PTX) that runs */
} gpuenv_kb_cover_t;
/* Which of a binary's cubins / PTX runs on major.minor: the closest
 * cubin, else the newest PTX that fits. */
GPUENV_API bool gpuenv_kb_code_covers(const gpuenv_kb_sm_t *cubins, size_t ncubins,
	const gpuenv_kb_sm_t *ptx, size_t nptx, unsigned major, unsigned minor,
	gpuenv_kb_cover_t *out);

/* The torch arch lists whose cubins or PTX run on a GPU of compute
 * capability major.minor, in file order, with how (cov); returns how many
 * (out[0..max) filled). */
GPUENV_API size_t gpuenv_kb_gpu_builds(const gpuenv_kb_t *kb, unsigned major, unsigned minor,
	const gpuenv_kb_torch_arch_list_t **out, gpuenv_kb_cover_t *cov, size_t max);

/* The oldest toolkit whose real architectures include major.minor (from the
 * [[arch_list]] rows of cuda.toml), and that toolkit's GA row: drivers
 * older than its minimum predate the architecture.  NULL when no row has it. */
GPUENV_API const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_arch_first_cuda(const gpuenv_kb_t *kb,
	unsigned major, unsigned minor, const gpuenv_kb_toolkit_t **ga);

/* Does the target's driver predate its GPU: older than the GA driver of
 * the first toolkit that builds for the GPU's architecture (*first gets
 * that [[arch_list]] row)?  That GA row, or NULL when the driver knows the
 * GPU or either is unknown. */
GPUENV_API const gpuenv_kb_toolkit_t *gpuenv_kb_driver_predates_gpu(const gpuenv_kb_t *kb,
	const struct gpuenv_kb_target *t, const gpuenv_kb_cuda_arch_list_t **first);

/* "sm_50..sm_90" for a list (one element: itself; empty: "none"), into buf. */
GPUENV_API const char *gpuenv_kb_sms_range(const gpuenv_kb_sm_t *v, size_t n, char *buf,
	size_t size);

/* ---- torch --------------------------------------------------------------------------- */

/* A machine (or a target) to judge builds for; each part is optional.  One
 * target has one compute capability: a machine with GPUs of several gives
 * one target per capability (gpuenv_kb_torch_pick takes a list). */
typedef struct gpuenv_kb_target {
	bool has_cc;
	unsigned cc_major, cc_minor;
	const gpuenv_kb_gpu_t *gpu; /* for names and the segment; may be NULL */
	bool has_driver;	    /* driver is set */
	gpuenv_kb_ver_t driver;
	/* the newest CUDA the driver reports (NVML); n == 0: the KB decides
	 * from driver.  Usable without has_driver. */
	gpuenv_kb_ver_t driver_cuda;
	/* the CUDA version of a forward-compatibility libcuda (cuda-compat)
	 * that applications load; n == 0: none */
	gpuenv_kb_ver_t compat_cuda;
} gpuenv_kb_target_t;

/* A data-center GPU (forward compatibility applies): 1, 0, or -1 when the
 * target names no GPU the KB knows. */
GPUENV_API int gpuenv_kb_target_datacenter(const gpuenv_kb_target_t *t);

enum gpuenv_kb_verdict {
	GPUENV_KB_NO = 0,
	GPUENV_KB_YES = 1,
	GPUENV_KB_UNKNOWN = 2, /* the KB lacks a fact the answer needs */
};

#define GPUENV_KB_MAX_REASONS 6
typedef struct gpuenv_kb_reason {
	int verdict;		    /* what this reason says on its own */
	const char *text;	    /* one sentence, in the caller's arena */
	const gpuenv_kb_row_t *src; /* the row the fact comes from; may be NULL */
	const gpuenv_kb_row_t *src2;
} gpuenv_kb_reason_t;

typedef struct gpuenv_kb_torch_verdict {
	const gpuenv_kb_torch_variant_t *variant;
	const gpuenv_kb_torch_arch_list_t *arch; /* NULL: not in the KB */
	int verdict;				 /* enum gpuenv_kb_verdict */
	int code;  /* how the GPU runs it: enum gpuenv_kb_code (0 when not judged) */
	int runs;  /* the driver rule for the build's CUDA: enum gpuenv_kb_runs
		      (GPUENV_KB_RUNS_UNKNOWN without a driver) */
	gpuenv_kb_reason_t reason[GPUENV_KB_MAX_REASONS];
	size_t n_reason;
} gpuenv_kb_torch_verdict_t;

enum gpuenv_kb_code {
	GPUENV_KB_CODE_CUBIN = 1, /* a cubin runs on the GPU */
	GPUENV_KB_CODE_PTX,	  /* only PTX, JIT-compiled by the driver */
	GPUENV_KB_CODE_NONE,	  /* nothing runs */
	GPUENV_KB_CODE_UNKNOWN,	  /* the KB has no arch list for the build */
};

/* The arch list row of a torch variant, NULL when the KB has none. */
GPUENV_API const gpuenv_kb_torch_arch_list_t *gpuenv_kb_torch_arch(const gpuenv_kb_t *kb,
	const gpuenv_kb_torch_variant_t *v);

/* The variant a torch version names: "2.5.1+cu124" or "2.5" + "cu124";
 * without a local tag, the release's PyPI default.  NULL when unknown. */
GPUENV_API const gpuenv_kb_torch_variant_t *gpuenv_kb_torch_variant(const gpuenv_kb_t *kb,
	gpuenv_str_t version);

/* Does variant v run on target t?  Reasons (positive and negative) name
 * the rows they come from; texts are allocated in arena. 0 or -ENOMEM. */
GPUENV_API int gpuenv_kb_torch_check(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_torch_variant_t *v, gpuenv_arena_t *arena, gpuenv_kb_torch_verdict_t *out);

/* The torch build to install on a target: the one choice doctor's fixes,
 * preflight, diagnose's {torch_pick}, `kb torch` and the resolver make.
 *
 * A build qualifies when gpuenv_kb_torch_check says no "no" on any of the
 * targets.  Among those, in order:
 *  1. how the GPUs run it: a cubin on every GPU, then PTX somewhere, then
 *     builds whose arch list the KB lacks (need_cubin: the first only);
 *  2. current's own release;
 *  3. without a driver to go by: the oldest CUDA (the least it asks of a
 *     driver);
 *  4. the release: newer ones, the nearest first (the smallest upgrade),
 *     then older ones, the nearest first; without current, the newest.  A
 *     release other than current's must support python (when given);
 *  5. within a release, with a driver to go by: builds the driver runs by
 *     itself (GA) first, the newest CUDA among them (the newest kernels it
 *     can use), then minor-version / forward compatibility, the oldest
 *     CUDA first (the fewest newer features missing).
 * With a driver to go by, a build the driver runs by itself (GA) comes
 * before one that runs only through minor-version or forward
 * compatibility whatever its release (after 1 and 2): compatibility is
 * used only when nothing the driver fully supports covers the GPUs.
 * A fresh pick (current NULL: `kb torch` without --version, the lock)
 * takes stable builds only; experimental ones are weighed only for someone
 * already on a torch (doctor's and diagnose's upgrades) or when named.
 * With allow_driver_upgrade, when nothing runs with the targets' driver
 * the choice is made as if there were no driver, and driver_upgrade names
 * the driver it needs (its CUDA's GA minimum, or the GPU's first CUDA's
 * when that is newer). */
typedef struct gpuenv_kb_pick_req {
	const gpuenv_kb_target_t *targets; /* one per GPU compute capability */
	size_t n_targets;
	const char *current;	/* the torch in use ("2.7.1+cu128"), or NULL */
	bool same_release;	/* only builds of current's release */
	bool need_cubin;	/* only builds with a cubin for every GPU */
	const char *python;	/* "3.12.3" or NULL */
	bool allow_driver_upgrade;
} gpuenv_kb_pick_req_t;

typedef struct gpuenv_kb_pick {
	const gpuenv_kb_torch_variant_t *variant; /* NULL: nothing fits */
	int code;  /* enum gpuenv_kb_code: the worst over the targets */
	int runs;  /* enum gpuenv_kb_runs of its CUDA on the driver */
	const gpuenv_kb_toolkit_t *driver_upgrade; /* the row whose driver_linux it
						      needs; NULL: runs now */
	const gpuenv_kb_ver_t *latest; /* newest exact release of it the KB knows
					  ("2.7.1", from [[pin]]); NULL */
} gpuenv_kb_pick_t;

/* 0 with out filled (out->variant NULL when nothing fits), or -ENOMEM.
 * Reasons are built in arena (freed by the caller). */
GPUENV_API int gpuenv_kb_torch_pick(const gpuenv_kb_t *kb, const gpuenv_kb_pick_req_t *req,
	gpuenv_arena_t *arena, gpuenv_kb_pick_t *out);
/* The same choice among the builds allow says true of (a project's torch
 * constraint: the lock); allow NULL is gpuenv_kb_torch_pick. */
typedef bool (*gpuenv_kb_pick_allow_fn)(void *arg, const gpuenv_kb_torch_variant_t *v);
GPUENV_API int gpuenv_kb_torch_pick_among(const gpuenv_kb_t *kb, const gpuenv_kb_pick_req_t *req,
	gpuenv_kb_pick_allow_fn allow, void *allow_arg, gpuenv_arena_t *arena,
	gpuenv_kb_pick_t *out);

/* The newest exact release of a variant's series the KB has [[pin]] rows
 * for ("2.7.1"); NULL when none. */
GPUENV_API const gpuenv_kb_ver_t *gpuenv_kb_torch_latest(const gpuenv_kb_t *kb,
	const gpuenv_kb_torch_variant_t *v);

/* The index a variant's wheels live on ("https://download.pytorch.org/whl/cu128",
 * from wheels.toml [[local_tag]]; the PyTorch index pattern when that file
 * is not loaded), into buf. */
GPUENV_API const char *gpuenv_kb_torch_index(const gpuenv_kb_t *kb,
	const gpuenv_kb_torch_variant_t *v, char *buf, size_t size);

/* "pip install [--force-reinstall ]torch==VERSION --index-url URL": version
 * NULL is the newest exact release the KB knows, else "X.Y.*".  In arena;
 * NULL when memory runs out. */
GPUENV_API const char *gpuenv_kb_torch_install_cmd(const gpuenv_kb_t *kb,
	const gpuenv_kb_torch_variant_t *v, const char *version, bool force, gpuenv_arena_t *arena);

/* A torch version as a person or a facts file writes it: "2.7.1+cu128",
 * "2.7+cu128" or, without a local tag, the PyPI build of that release
 * (the variant with pypi_default).  0 with *out set; GPUENV_ENOTFOUND
 * with the release's known builds in the hint (and a word on the PyPI
 * build when the KB does not record it); GPUENV_EVERSION when it is not a
 * torch version.  "+cpu" and other non-CUDA tags are GPUENV_ENOTFOUND
 * (no variant): callers that accept CPU builds test for them first. */
GPUENV_API int gpuenv_kb_torch_lookup(const gpuenv_kb_t *kb, gpuenv_str_t version,
	const gpuenv_kb_torch_variant_t **out);

/* ---- CUDA toolkits and GPU architectures -------------------------------------------- */

/* The [[arch_list]] row of the toolkit range holding cuda, NULL when none. */
GPUENV_API const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_cuda_arch_list(const gpuenv_kb_t *kb,
	const gpuenv_kb_ver_t *cuda);
/* Can nvcc of CUDA cuda build cubins for major.minor?  1 yes, 0 no, -1 the
 * KB has no arch list for that toolkit; *row (may be NULL) gets the row. */
GPUENV_API int gpuenv_kb_cuda_builds_for(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *cuda,
	unsigned major, unsigned minor, const gpuenv_kb_cuda_arch_list_t **row);
/* The newest toolkit range that still builds for major.minor, NULL when none. */
GPUENV_API const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_arch_last_cuda(const gpuenv_kb_t *kb,
	unsigned major, unsigned minor);

/* ---- NGC images ----------------------------------------------------------------------- */

/* Image rows for a reference: "nvcr.io/nvidia/pytorch:24.05-py3",
 * "pytorch:24.05-py3", or an image without a tag (all its tags).  Returns the
 * number of matches, out[0..max) filled. */
GPUENV_API size_t gpuenv_kb_image_find(const gpuenv_kb_t *kb, const char *ref,
	const gpuenv_kb_container_t **out, size_t max);

/* ---- Docker Hub images by their tag grammar (lib/kb/hub.c) ----------------- */

enum gpuenv_kb_hub_kind {
	GPUENV_KB_HUB_NONE = 0,
	GPUENV_KB_HUB_CUDA,    /* nvidia/cuda, docker.io/nvidia/cuda, nvcr.io/nvidia/cuda */
	GPUENV_KB_HUB_PYTORCH, /* pytorch/pytorch, docker.io/pytorch/pytorch */
	GPUENV_KB_HUB_PYTHON,  /* python, docker.io/library/python: Docker's official
				  Python images, no CUDA of their own */
};

/* Which grammar an image's tags follow (an image name without the tag). */
GPUENV_API int gpuenv_kb_hub_kind(gpuenv_str_t image);
/* The grammar as text ("<cuda>-<base|runtime|...>-<os>"); NULL for NONE. */
GPUENV_API const char *gpuenv_kb_hub_grammar(int kind);

/* A tag read by its grammar; slices point into the tag. */
typedef struct gpuenv_kb_hub_tag {
	int kind;		   /* enum gpuenv_kb_hub_kind */
	gpuenv_str_t image, tag;   /* as written ("nvidia/cuda"; parse leaves image unset) */
	gpuenv_kb_ver_t cuda_full; /* nvidia/cuda: "12.4.1" as written (n 2 or 3) */
	gpuenv_kb_ver_t cuda;	   /* MAJOR.MINOR */
	gpuenv_kb_ver_t torch;	   /* pytorch/pytorch: "2.5.1" */
	gpuenv_kb_ver_t python;	   /* python: "3.11" (MAJOR.MINOR; cuda stays n 0) */
	gpuenv_str_t flavour;	   /* "cudnn-devel", "cudnn8-runtime", "base"; "runtime"; python: "slim" or empty */
	gpuenv_str_t os;	   /* nvidia/cuda: "ubuntu22.04", "ubi9"; python: "bookworm" or empty */
	gpuenv_str_t ubuntu;	   /* "22.04" when os is an Ubuntu */
	int cudnn_major;	   /* the N of "cudnn9": 9; -1 when the tag names none */
	bool has_cudnn;		   /* a cudnn flavour (every pytorch/pytorch tag) */
} gpuenv_kb_hub_tag_t;

/* Read a tag (without "IMAGE:") by the grammar of kind.  0 and *out;
 * GPUENV_EUSAGE when the tag does not fit, ctx->err naming the part that is
 * wrong and the hint the grammar with an example.  Tags over 128 bytes are
 * refused (Docker's limit). */
GPUENV_API int gpuenv_kb_hub_parse(gpuenv_ctx_t *ctx, int kind, gpuenv_str_t tag,
	gpuenv_kb_hub_tag_t *out);

/* What images.toml says about a parsed tag. */
typedef struct gpuenv_kb_hub_match {
	const gpuenv_kb_cuda_image_t *cuda_row;       /* the row of the release and OS */
	const gpuenv_kb_pytorch_image_t *pytorch_row; /* the row of the torch and CUDA */
	bool release_known; /* the data have the CUDA release (nvidia/cuda) or torch release */
	bool known;	    /* the data list this very tag (flavour, cuDNN major included) */
} gpuenv_kb_hub_match_t;
GPUENV_API void gpuenv_kb_hub_find(const gpuenv_kb_t *kb, gpuenv_kb_hub_match_t *m,
	const gpuenv_kb_hub_tag_t *t);
/* A tag's torch release (pytorch/pytorch) or CUDA version newer than the
 * newest the KB knows: true and gpuenv_kb_newer's sentence in buf. */
GPUENV_API bool gpuenv_kb_hub_newer(const gpuenv_kb_t *kb, const gpuenv_kb_hub_tag_t *t, char *buf,
	size_t size);

/* Does an image run on a target's driver (and GPU)?  The image's release
 * notes decide when the KB has them (driver_min_branch): a driver of that
 * branch or later runs it; an older one only when it is one of the
 * data-center drivers the notes list (that branch, at least that release),
 * through the forward-compatibility package the image ships, and only on a
 * data-center GPU.  Minor-version compatibility does not make such an image
 * run: the notes name exactly which older drivers it supports (for
 * tritonserver 24.10, CUDA 12.6: R560 or later, or R470/R525/R535/R545 on
 * data-center GPUs; R550 is not among them).  Images without notes in the
 * KB (and nvidia/cuda tags) follow the CUDA rule, gpuenv_kb_driver_runs_cuda. */
typedef struct gpuenv_kb_image_verdict {
	int runs;	     /* enum gpuenv_kb_runs */
	bool by_notes;	     /* decided by the release notes' requirement */
	unsigned branch;     /* the branch the notes require (560 for "R560"); 0 */
	const gpuenv_kb_ver_t *fc_driver; /* FORWARD_COMPAT: the listed driver met */
	bool datacenter_only; /* FORWARD_COMPAT while the target's GPU is unknown:
				 holds on a data-center GPU only */
	bool not_datacenter; /* NO because the GPU is not a data-center one, though
				the driver is a listed one */
	int cc_ok;	     /* the target's GPU >= the image's cc_min: 1, 0, -1 unknown */
	gpuenv_kb_driver_cuda_t dc; /* the CUDA rule for the image's CUDA */
} gpuenv_kb_image_verdict_t;

/* The image's CUDA version as a container row: an NGC row of the KB, or
 * for nvidia/cuda (docker.io, nvcr.io) and pytorch/pytorch a tag read by its
 * grammar ("12.4.1-runtime-ubuntu22.04": CUDA 12.4) and looked up in
 * images.toml.  0 and *out; GPUENV_ENOTFOUND otherwise (ctx->err says which
 * images the KB knows); GPUENV_EUSAGE when ref has no tag or the tag does not
 * fit its image's grammar.  For those images *row is NULL, hub and match say
 * what the tag and the data hold, and cuda comes from the tag. */
typedef struct gpuenv_kb_image_ref {
	const gpuenv_kb_container_t *row; /* NULL for a Docker Hub tag */
	gpuenv_kb_ver_t cuda;		  /* MAJOR.MINOR */
	gpuenv_kb_hub_tag_t hub;	  /* kind NONE for NGC rows */
	gpuenv_kb_hub_match_t match;
} gpuenv_kb_image_ref_t;
GPUENV_API int gpuenv_kb_image_lookup(const gpuenv_kb_t *kb, const char *ref,
	gpuenv_kb_image_ref_t *out);

/* Judge an image (row, or cuda alone when row is NULL) on a target. */
GPUENV_API void gpuenv_kb_image_check(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_image_ref_t *img, gpuenv_kb_image_verdict_t *out);

#ifdef __cplusplus
}
#endif
#endif
