/* Internal to lib/check: what doctor.c and preflight.c share.
 *
 *  - the knowledge-base queries the rules need (doctor_kb.c, over the KB
 *    loader of include/gpuenv/kb.h), as flat tables of C strings;
 *  - the facts, decoded once by lib/facts (include/gpuenv/facts.h): a wrong
 *    or missing field reads as "unknown" there;
 *  - the verdict builder, and the rules preflight reuses.
 */
#ifndef GPUENV_DOCTOR_INT_H
#define GPUENV_DOCTOR_INT_H

#include "gpuenv/doctor.h"
#include "gpuenv/facts.h"

/* ==== knowledge base ===================================================== */

/* CUDA versions are ints as CUDA writes them: 1000*major + 10*minor. */
#define CUDA_MAJOR(v) ((v) / 1000)
#define CUDA_MINOR(v) (((v) % 1000) / 10)

struct dkb_toolkit {
	int cuda, update;
	const char *driver; /* minimum Linux x86_64 driver */
	const char *source;
};
struct dkb_minor {
	int major;
	const char *driver_min, *driver_below;
	const char *source;
};
struct dkb_nvcc {
	int cuda_min, cuda_max;
	const char *const *sm; /* NULL-terminated */
	const char *source;
};
typedef struct dkb_torch_variant {
	const char *series; /* "2.7" */
	const char *tag;    /* "cu128" */
	int cuda;
	bool pypi_default, stable, have_arch;
	const char *const *sm, *const *ptx; /* NULL-terminated; NULL when unknown */
	const char *latest; /* newest exact release the KB knows ("2.7.1"), or NULL */
	const char *python_min, *python_max;
	const char *source;
} dkb_torch_variant_t;
typedef struct dkb_ngc {
	const char *image, *tag, *release;
	int cuda;
	const char *torch;
	const char *driver_min_branch; /* "R560" or NULL */
	const char *const *datacenter_drivers; /* NULL-terminated or NULL */
	const char *cc_min;
	const char *source;
} dkb_ngc_t;

typedef struct dkb dkb_t;

/* The KB the rules read, from kb (NULL: the built-in one, loaded here),
 * copied into arena.  0, or the loader's error with ctx->err set. */
int dkb_open(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const struct gpuenv_kb *kb,
	const dkb_t **out);
/* Minimum driver of the GA release of cuda; NULL when unknown. */
const struct dkb_toolkit *dkb_toolkit(const dkb_t *kb, int cuda);
/* Minor version compatibility row of a CUDA major; NULL when none. */
const struct dkb_minor *dkb_minor_compat(const dkb_t *kb, int major);
/* Newest CUDA whose GA release the driver meets; 0 when unknown. */
int dkb_driver_max_cuda(const dkb_t *kb, const char *driver, const char **source);
/* Can nvcc of cuda build cubins for sm_<maj><min>?  1 yes, 0 no, -1 unknown
 * (no arch list for that toolkit).  *row gets the arch list row. */
int dkb_nvcc_builds(const dkb_t *kb, int cuda, int maj, int min, const struct dkb_nvcc **row);
/* The first / last CUDA whose nvcc builds for the CC; 0 when none known. */
int dkb_nvcc_first(const dkb_t *kb, int maj, int min);
int dkb_nvcc_last(const dkb_t *kb, int maj, int min);
/* Every torch variant, by series then CUDA (ascending). */
size_t dkb_torch_variants(const dkb_t *kb, const dkb_torch_variant_t **out);
/* One variant: series "2.7" (or a full version "2.7.1"), tag "cu128".
 * tag NULL: the PyPI default of the series. */
const dkb_torch_variant_t *dkb_torch_find(const dkb_t *kb, const char *version, const char *tag);
/* An NGC image by image name and tag. */
const dkb_ngc_t *dkb_ngc_find(const dkb_t *kb, const char *image, const char *tag);

/* ==== small parsers ====================================================== */

/* "12.8", "12.8.1", "13" -> 12080 / 13000; 0 when not a version. */
int dk_cuda_parse(const char *s);
/* "12.8" from 12080 into out. */
void dk_cuda_str(int v, char *out, size_t outsz);
/* Dotted numeric versions ("580.159.04", "9.19.0", "525"): <0, 0, >0;
 * missing parts count as 0.  ok (may be NULL) false when either does not
 * start with a number. */
int dk_vcmp(const char *a, const char *b, bool *ok);
/* The first number of a dotted version; -1 when none. */
long dk_vmajor(const char *s);
/* "9.0" -> 9, 0.  false when malformed. */
bool dk_cc_parse(const char *s, int *maj, int *min);

/* A CUDA code target: "sm_90", "sm_90a", "sm_100f", "compute_90". */
typedef struct dk_arch {
	int maj, min;
	char suffix; /* 0, 'a' or 'f' */
	bool ptx;    /* compute_XY */
} dk_arch_t;
bool dk_arch_parse(const char *s, dk_arch_t *out);
/* Does a cubin for a run on a GPU of compute capability maj.min? */
bool dk_cubin_runs(const dk_arch_t *a, int maj, int min);
/* Can the driver JIT PTX for a on that GPU (the PTX-version condition apart)? */
bool dk_ptx_runs(const dk_arch_t *a, int maj, int min);

/* Coverage of a GPU by lists of cubins and PTX (the facts' lists or C lists). */
enum { DK_COV_NONE = 0, DK_COV_PTX, DK_COV_CUBIN };
typedef struct dk_cov {
	int how;	   /* DK_COV_* */
	const char *by;	   /* the cubin or PTX that covers it */
	const char *ptx;   /* DK_COV_NONE only: a PTX that would cover it if the
			      driver could JIT it; else NULL */
	size_t ncubins, nptx;
	const char *lo, *hi; /* lowest / highest cubin (for messages) */
} dk_cov_t;
void dk_cover_strs(const gpuenv_facts_strs_t *cubins, const gpuenv_facts_strs_t *ptx, int maj,
	int min, bool ptx_ok, dk_cov_t *out);
void dk_cover_list(const char *const *cubins, const char *const *ptx, int maj, int min,
	bool ptx_ok, dk_cov_t *out);

/* ==== verdicts =========================================================== */

/* A run of rules: where verdicts go and what the rules share. */
typedef struct drun {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const gpuenv_facts_t *facts;
	const dkb_t *kb;
	gpuenv_verdicts_t *out;
	int err;		/* first error (ENOMEM); rules stop adding */
	/* derived once */
	const char *drv_version;
	const char *drv_state;
	int drv_cuda;		/* newest CUDA the driver runs (GA); 0 unknown */
	const char *drv_cuda_fact; /* where drv_cuda came from */
	const char *drv_cuda_src;
	int compat_cuda;	/* CUDA of a forward-compat libcuda; 0 none */
	bool gpu_host;		/* NVIDIA GPUs on this machine (NVML or PCI) */
	bool drv_libs_missing;	/* driver-libraries-missing was said */
	size_t ngpus;
	struct dgpu {
		size_t i;	/* index in the document's gpus[] */
		long long index; /* NVML index (i when the facts have none) */
		int maj, min;	/* -1 unknown */
		const char *name, *uuid;
		bool visible;	/* CUDA enumerates it or one of its MIG devices */
		bool mig;	/* MIG enabled */
		size_t mig_instances, mig_visible;
		const gpuenv_facts_gpu_t *fg;
	} *gpus;
	size_t visible_devices; /* CUDA devices this process would see */
	/* driver verdicts given, so frameworks needing the same CUDA share one */
	size_t ndrv_seen;
	struct {
		int need;
		const char *env;
		size_t vi;	/* index in out->items; SIZE_MAX when no verdict */
		bool ptx_ok;
	} drv_seen[32];
} drun_t;

/* Derive the shared facts (driver, GPUs, visibility).  0 or -ENOMEM. */
int drun_init(drun_t *r, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const dkb_t *kb, gpuenv_verdicts_t *out);
/* The source a GPU's facts name for key ("compute_capability"). */
const char *dr_gpu_src(const struct dgpu *g, const char *key);
/* The end of a public entry point: rc, with ctx->err recording it (an
 * out-of-memory a helper swallowed is reported as such). */
int dr_done(gpuenv_ctx_t *ctx, int rc);

/* Printf into the arena; NULL (and r->err set) when memory runs out. */
const char *dr_fmt(drun_t *r, const char *fmt, ...) GPUENV_PRINTF(2, 3);
/* A new verdict; NULL when memory runs out.  The pointer is valid until
 * the next dr_verdict (the array grows): keep an index to come back. */
gpuenv_verdict_t *dr_verdict(drun_t *r, const char *id, int severity, const char *subject,
	const char *target);
/* Append evidence: source NULL -> "facts". */
void dr_ev(drun_t *r, gpuenv_verdict_t *v, const char *fact, const char *source,
	const char *fmt, ...) GPUENV_PRINTF(5, 6);
void dr_ev_kb(drun_t *r, gpuenv_verdict_t *v, const char *fact, const char *kb_source,
	const char *fmt, ...) GPUENV_PRINTF(5, 6);
/* Sort the verdicts by severity (stable) and count them. */
void dr_finish(drun_t *r);
/* "GPU 0 NVIDIA H200 (sm_90)". */
const char *dr_gpu_label(drun_t *r, const struct dgpu *g);

/* Machine rules shared by doctor and preflight: driver-not-loaded,
 * driver-libraries-missing, cuda-visible-devices-hides-all / -invalid,
 * mig-no-device. */
void dr_rules_machine(drun_t *r);

/* Does the driver run CUDA need?  Adds driver-too-old (error) or, when it
 * runs through minor-version or forward compatibility, driver-minor-compat
 * / driver-forward-compat (info); with ok_info, driver-ok (info) when it
 * runs plainly.  what: "torch 2.7.1+cu128" (for messages); fix_alt: a second
 * fix (another build) or NULL.  Returns true when the driver can JIT PTX of
 * that CUDA version (it supports the version itself or through forward
 * compatibility). */
bool dr_rule_driver(drun_t *r, int need, const char *what, const char *need_fact,
	const char *need_src, const char *env, const char *fix_alt, bool ok_info);

/* The torch build to suggest for the GPUs and the driver of this run:
 * the oldest series >= from's (a "2.7" / "2.7.1+cu126" string, NULL = any)
 * that has a variant the driver runs (GA or minor compat) whose KB arch list
 * covers every visible GPU with cubins, newest CUDA first among those; with
 * same_series only that series; unless need_arch, a variant whose arch list
 * the KB lacks when no known one fits.  python: the environment's "3.12.3" or
 * NULL.  NULL when none. */
const dkb_torch_variant_t *dr_pick_torch(drun_t *r, const char *from, bool same_series,
	bool need_arch, const char *python);
/* Is version ("2.7.1+cu128") of series ("2.7")? */
bool dk_same_series(const char *series, const char *version);
/* "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128"
 * (with --force-reinstall when force). */
const char *dr_torch_cmd(drun_t *r, const dkb_torch_variant_t *v, const char *version, bool force);

#endif
