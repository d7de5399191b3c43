/* Internal to lib/check: what doctor.c and preflight.c share.
 *
 *  - adapters from the facts to the knowledge base's queries (lib/kb,
 *    include/gpuenv/kb.h), which give every compatibility answer;
 *  - the facts, decoded once by lib/facts (include/gpuenv/facts.h): a wrong
 *    or missing field reads as "unknown" there;
 *  - the verdict builder, and the rules preflight reuses.
 */
#ifndef GPUENV_DOCTOR_INT_H
#define GPUENV_DOCTOR_INT_H

#include "gpuenv/doctor.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"

/* ==== knowledge base ===================================================== */

/* Every compatibility answer comes from lib/kb (include/gpuenv/kb.h): the
 * driver against a CUDA version, which cubin or PTX runs on a GPU, an image
 * on a host, the torch build to install.  What is here only adapts the
 * facts to those calls. */

/* CUDA versions are ints as CUDA writes them: 1000*major + 10*minor. */
#define CUDA_MAJOR(v) ((v) / 1000)
#define CUDA_MINOR(v) (((v) % 1000) / 10)

/* The KB the rules read: given (borrowed), else the built-in files of the
 * load mask files loaded into *own (free it with gpuenv_kb_free): each verb
 * loads what it asks about.  0 or the loader's error. */
int dr_kb_open(gpuenv_ctx_t *ctx, const gpuenv_kb_t *given, unsigned files, gpuenv_kb_t **own,
	const gpuenv_kb_t **out);
struct drun;
/* "data/kb/cuda.toml:412 [[toolkit]]: <source>": a row's citation in a
 * verdict's evidence, in the run's arena (NULL for NULL). */
const char *dr_kb_cite(struct drun *r, const gpuenv_kb_row_t *row, const char *table);
/* 12080 as a KB version "12.8" (buf holds its text, 16 bytes). */
gpuenv_kb_ver_t dr_cuda_ver(int cuda, char *buf);

/* ==== small parsers ====================================================== */

/* "12.8", "12.8.1", "13" -> 12080 / 13000; 0 when not a version.  For
 * CUDA versions read from facts (a framework's "13" from a package name);
 * what a person types goes through gpuenv_kb_cuda_parse. */
int dk_cuda_parse(const char *s);
/* "12.8" from 12080 into out. */
void dk_cuda_str(int v, char *out, size_t outsz);
/* Dotted numeric versions ("580.159.04", "9.19.0", "525") by
 * gpuenv_kb_ver_cmp: <0, 0, >0; ok (may be NULL) false when either is not
 * one. */
int dk_vcmp(const char *a, const char *b, bool *ok);
/* The first number of a dotted version; -1 when none. */
long dk_vmajor(const char *s);

/* The CUDA major a (normalized) distribution name fixes: nvidia-cudnn-cu12
 * -> 12 (lib "nvidia-cudnn"), cupy-cuda12x -> 12, jax-cuda13-plugin -> 13,
 * tensorrt-cu12-libs -> 12.  0 when the name says nothing.  The KB's
 * wheels.toml [[package]] rows name most of them; this is the naming rule
 * those rows follow, for the names they leave out. */
int dk_name_cuda_major(const char *n, char *lib, size_t libsz);

/* Coverage of a GPU by a binary's cubins and PTX, by gpuenv_kb_code_covers. */
enum { DK_COV_NONE = 0, DK_COV_PTX, DK_COV_CUBIN };
typedef struct dk_cov {
	int how;	   /* DK_COV_* */
	const char *by;	   /* the cubin or PTX that covers it */
	const char *ptx;   /* DK_COV_NONE only: a PTX that would cover it if the
			      driver could JIT it; else NULL */
	size_t ncubins, nptx;
	const char *lo, *hi; /* lowest / highest cubin (for messages) */
	char text[4][24];    /* what by, ptx, lo and hi point to (do not copy a dk_cov_t) */
} dk_cov_t;
/* The facts' lists (ptx may be NULL) or KB lists. */
void dk_cover_strs(const gpuenv_facts_strs_t *cubins, const gpuenv_facts_strs_t *ptx, int maj,
	int min, bool ptx_ok, dk_cov_t *out);
void dk_cover_kb(const gpuenv_kb_sms_t *cubins, const gpuenv_kb_sms_t *ptx, int maj, int min,
	bool ptx_ok, dk_cov_t *out);

/* ==== verdicts =========================================================== */

/* A run of rules: where verdicts go and what the rules share. */
typedef struct drun {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const gpuenv_facts_t *facts;
	const gpuenv_kb_t *kb;
	/* the machine as every verb takes it (gpuenv_target_machine), and its
	 * host as the KB's rules see it (gpuenv_target_kb_host): driver
	 * version, the CUDA the driver runs, a forward-compatibility libcuda */
	gpuenv_target_t machine;
	gpuenv_kb_target_t host;
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
	const gpuenv_kb_t *kb, gpuenv_verdicts_t *out);
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
/* doctor only (doctor_ctk.c): on a GPU machine with Docker or Podman, is
 * the NVIDIA Container Toolkit installed and configured?
 * container-toolkit-missing / -unconfigured (warnings), container-toolkit-ok
 * (info). */
void dr_rule_container(drun_t *r);

/* Does the driver run CUDA need?  Adds driver-too-old (error) or, when it
 * runs through minor-version or forward compatibility, driver-minor-compat
 * / driver-forward-compat (info); with ok_info, driver-ok (info) when it
 * runs plainly.  what: "torch 2.7.1+cu128" (for messages); fix_alt: a second
 * fix (another build) or NULL.  Returns true when the driver can JIT PTX of
 * that CUDA version (it supports the version itself or through forward
 * compatibility). */
bool dr_rule_driver(drun_t *r, int need, const char *what, const char *need_fact,
	const char *need_src, const char *env, const char *fix_alt, bool ok_info);

/* The torch build to suggest for this run: gpuenv_kb_torch_pick for the
 * visible GPUs (one target per compute capability) and the host's driver,
 * someone on current ("2.7.1+cpu"; NULL none) with python ("3.12.3" or
 * NULL).  need_cubin: only builds with a cubin for every GPU.  NULL when
 * nothing fits; *out (may be NULL) gets the whole pick. */
const gpuenv_kb_torch_variant_t *dr_pick_torch(drun_t *r, const char *current, bool need_cubin,
	const char *python, gpuenv_kb_pick_t *out);
/* Is version ("2.7.1+cu128") of v's release? */
bool dr_same_release(const gpuenv_kb_torch_variant_t *v, const char *version);
/* "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128"
 * (gpuenv_kb_torch_install_cmd; with --force-reinstall when force). */
const char *dr_torch_cmd(drun_t *r, const gpuenv_kb_torch_variant_t *v, const char *version,
	bool force);
/* Does the driver predate the GPU (older than the first toolkit that builds
 * for it)?  Adds driver-predates-gpu (error) for each such compute
 * capability; the same rule gpuenv_kb_torch_check applies. */
void dr_rule_driver_knows_gpus(drun_t *r, const char *what);

/* ==== preflight ========================================================== */

/* What a request needing CUDA cuda (1000*major + 10*minor) asks of the node:
 * the machine rules, no-gpu, driver-unknown, driver-predates-gpu and the
 * driver against the CUDA (an image with a driver branch: the branch rule).
 * need_fact / need_src: where the CUDA was read ("request.cuda",
 * "request"); fix_alt: a second fix for driver-too-old, or NULL.  Returns
 * whether the driver can JIT the request's PTX. */
bool pf_node(drun_t *r, int cuda, const char *what, const gpuenv_kb_image_ref_t *img,
	const char *need_fact, const char *need_src, const char *fix_alt);
/* A torch build's KB arch list against each visible GPU (arch-ok,
 * ptx-jit-only, no-kernel-image; arch-unknown without a list).  relock: the
 * build is a lock's, so the fix is to lock again for the GPU. */
void pf_torch_arch(drun_t *r, const gpuenv_kb_torch_variant_t *kv, const char *what, bool ptx_ok,
	bool relock);
/* A CUDA version (row: an NGC image's KB row, or NULL) against each visible
 * compute capability (preflight_node.c, as pf_node and pf_torch_arch). */
void pf_cuda_arch(drun_t *r, gpuenv_kb_ver_t cuda, const char *what,
	const gpuenv_kb_container_t *row);
/* preflight --lock (preflight_lock.c): the lock's packages on the node. */
struct gpuenv_lock;
int pf_lock(drun_t *r, const struct gpuenv_lock *lk, const char *path, gpuenv_preflight_t *out);

#endif
