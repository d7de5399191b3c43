/* gpuenv labels: Kubernetes node labels from the probed facts (docs/labels.md).
 *
 * Two families of labels:
 *
 *  - GPU Feature Discovery's (GFD, NVIDIA/k8s-device-plugin), under
 *    nvidia.com/, with GFD's names and GFD's value formats, so the selectors
 *    a cluster already has keep matching: the driver and its CUDA, the
 *    compute capability, count, family, memory in MiB, product (GFD's
 *    sanitising: characters other than [A-Za-z0-9-_. ] dropped, runs of
 *    spaces one dash), machine type, MIG capability, GPU mode and, with a MIG
 *    strategy other than none, the strategy's labels that the facts can say;
 *  - gpuenv's own, under one prefix (a DNS subdomain NFD accepts): whether a
 *    usable GPU is present, the driver's state, the SM architecture, the CUDA
 *    toolkit, the cuDNN / NCCL / TensorRT versions, and per project target
 *    whether this node runs it (the caller judges, gpuenv/fit.h).
 *
 * Every label is checked against Kubernetes' syntax before it is kept: a
 * qualified name (prefix a DNS subdomain of at most 253 characters, name
 * at most 63 of [A-Za-z0-9-_.] with an alphanumeric at each end) and a value
 * of at most 63 such characters (or empty).  A value that is not valid is
 * escaped (GFD's sanitising, then non-alphanumeric ends trimmed); one still
 * invalid (too long) is left out with a warning in the set, never an error.
 * The set is sorted by name, so every output is deterministic.
 */
#ifndef GPUENV_LABELS_H
#define GPUENV_LABELS_H

#include "gpuenv/core.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_LABELS_DEFAULT_PREFIX "gpuenv.io"
#define GPUENV_LABEL_NAME_MAX 63    /* the name part of a key, and a value */
#define GPUENV_LABEL_PREFIX_MAX 253 /* a DNS subdomain */
#define GPUENV_LABELS_MAX 4096	    /* labels in one set */
/* NFD ignores a feature file larger than this (source/local, MaxFeatureFileSize) */
#define GPUENV_LABELS_NFD_MAX 65536

typedef struct gpuenv_label {
	const char *key;   /* "nvidia.com/gpu.product" */
	const char *value; /* "NVIDIA-H200"; "" allowed */
} gpuenv_label_t;

typedef struct gpuenv_labels {
	gpuenv_arena_t *arena; /* where keys, values and warnings live */
	gpuenv_label_t *items;
	size_t n, cap;
	const char **warnings; /* sentences: labels left out, values escaped */
	size_t nwarnings, capwarnings;
} gpuenv_labels_t;

/* An empty set whose strings go into arena. */
GPUENV_API void gpuenv_labels_init(gpuenv_labels_t *ls, gpuenv_arena_t *arena);

/* Is s a valid label name part / value / key (prefix/name, prefix optional)
 * / prefix (DNS subdomain)?  *why (may be NULL) gets a short reason. */
GPUENV_API bool gpuenv_label_name_valid(gpuenv_str_t s, const char **why);
GPUENV_API bool gpuenv_label_value_valid(gpuenv_str_t s, const char **why);
GPUENV_API bool gpuenv_label_key_valid(gpuenv_str_t s, const char **why);
GPUENV_API bool gpuenv_label_prefix_valid(gpuenv_str_t s, const char **why);

/* The prefix gpuenv's own labels may use: a valid DNS subdomain that NFD
 * publishes (kubernetes.io and *.kubernetes.io are always denied except
 * feature.node.kubernetes.io and profile.node.kubernetes.io and their
 * subdomains; k8s.io is reserved by Kubernetes; nvidia.com is GFD's).
 * what names where it came from ("--prefix", "pyproject.toml: [tool.gpuenv]
 * label-prefix").  0, or GPUENV_EUSAGE with the reason and a hint. */
GPUENV_API int gpuenv_labels_prefix_check(gpuenv_ctx_t *ctx, const char *prefix, const char *what);

/* GFD's sanitising of a value, then its ends trimmed to alphanumerics: the
 * text of a facts string (escaped bytes are undone first), as a value or
 * GPUENV_STR_NULL when out of memory.  May be empty or longer than 63. */
GPUENV_API gpuenv_str_t gpuenv_label_sanitize(gpuenv_arena_t *arena, gpuenv_str_t s);

/* Add key=value (a key already there is replaced: the later labeler wins,
 * as GFD merges).  An invalid key, or a value that is invalid even escaped,
 * is left out with a warning.  0 or -ENOMEM / GPUENV_ETOOBIG (recorded). */
GPUENV_API int gpuenv_labels_set(gpuenv_labels_t *ls, const char *key, const char *value);
/* printf form of the value. */
GPUENV_API int gpuenv_labels_setf(gpuenv_labels_t *ls, const char *key, const char *fmt, ...)
	GPUENV_PRINTF(3, 4);
/* A warning of the caller's (a target whose label cannot be made, ...). */
GPUENV_API int gpuenv_labels_warn(gpuenv_labels_t *ls, const char *fmt, ...) GPUENV_PRINTF(2, 3);
/* The value of key, or NULL. */
GPUENV_API const char *gpuenv_labels_get(const gpuenv_labels_t *ls, const char *key);

enum gpuenv_mig_strategy {
	GPUENV_MIG_NONE = 0, /* GFD's default: no MIG labels */
	GPUENV_MIG_SINGLE,
	GPUENV_MIG_MIXED,
};
/* "none" / "single" / "mixed" -> the enum; -1 for anything else. */
GPUENV_API int gpuenv_mig_strategy_parse(const char *s);

typedef struct gpuenv_labels_opts {
	const char *prefix;	  /* gpuenv's own labels; NULL: the default */
	int mig_strategy;	  /* enum gpuenv_mig_strategy */
	/* GFD's machine type (the DMI product name, as --machine-type-file
	 * gives it), NULL when unknown: gpu.machine is then "unknown", as
	 * GFD writes it without a readable file */
	const char *machine_type;
	/* gpuenv's own labels only: for a node where GFD itself runs, so that
	 * two writers never give one nvidia.com/ label */
	bool no_gfd;
} gpuenv_labels_opts_t;

/* GFD's labels and gpuenv's own (all but the targets') of the machine the
 * facts describe; machine is gpuenv_target_from_facts of the same facts
 * (its libraries are the environment's).  A machine with no GPU or no
 * driver gets the labels that say so (nvidia.com/gpu.count=0,
 * PREFIX/present=false, PREFIX/driver.state), never an error.  0 or
 * -ENOMEM. */
GPUENV_API int gpuenv_labels_from_facts(gpuenv_ctx_t *ctx, gpuenv_labels_t *ls, const gpuenv_facts_t *f,
	const gpuenv_target_t *machine, const gpuenv_labels_opts_t *opts);

/* PREFIX/target.NAME: the key of a target's label in out, or NULL (a
 * warning in ls) when NAME makes no valid label name. */
GPUENV_API const char *gpuenv_labels_target_key(gpuenv_labels_t *ls, const char *prefix, const char *name);

/* Sort by key (byte order).  Call before writing. */
GPUENV_API void gpuenv_labels_sort(gpuenv_labels_t *ls);

/* The set as text: "key=value" lines.  0 or a negative code. */
GPUENV_API int gpuenv_labels_write_text(const gpuenv_labels_t *ls, gpuenv_buf_t *out);

/* The set as a node-feature-discovery local feature file (features.d/):
 * comment lines, "# +expiry-time=<RFC 3339 UTC>" when expiry is not
 * (time_t)-1, then "key=value" lines.  GPUENV_ETOOBIG when it would pass
 * NFD's 64 KiB limit. */
GPUENV_API int gpuenv_labels_write_nfd(gpuenv_ctx_t *ctx, const gpuenv_labels_t *ls, long long expiry,
	const char *source, gpuenv_buf_t *out);

/* An --expiry value: a duration ("90s", "15m", "1h", "2d"; a bare number is
 * seconds) from now, or an RFC 3339 time ("2026-12-01T20:00:00Z",
 * "...+01:00").  *out: seconds since the epoch.  GPUENV_EUSAGE otherwise. */
GPUENV_API int gpuenv_labels_expiry_parse(gpuenv_ctx_t *ctx, const char *s, long long now, long long *out);

/* ---- the selector ------------------------------------------------------
 * The fields of a pod spec that place a target's pods only on nodes that
 * run it, as YAML: nodeSelector with PREFIX/target.NAME "true", the
 * kubernetes.io/arch of its platform and GFD's compute capability (GPU
 * targets), and affinity.nodeAffinity.requiredDuringScheduling... with
 * GFD's driver labels for the driver range (nodeSelectorTerms ORed, Gt on
 * the integer parts).  cuda_build: the CUDA of the target's locked torch
 * build ("12.6") or NULL: the driver range is then the target's own
 * (its cuda, else its driver). */
typedef struct gpuenv_selector_req {
	const char *key, *op; /* "nvidia.com/cuda.driver-version.major", "Gt" */
	const char *value;    /* one value ("579", "525") */
} gpuenv_selector_req_t;

#define GPUENV_SELECTOR_MAX_TERMS 4
#define GPUENV_SELECTOR_MAX_REQS 6
typedef struct gpuenv_selector {
	size_t nsel;
	gpuenv_label_t sel[8]; /* nodeSelector, sorted by key */
	size_t nterms;	       /* 0: no affinity */
	size_t nreqs[GPUENV_SELECTOR_MAX_TERMS];
	gpuenv_selector_req_t terms[GPUENV_SELECTOR_MAX_TERMS][GPUENV_SELECTOR_MAX_REQS];
	const char *driver_why; /* where the driver range came from, a sentence */
} gpuenv_selector_t;

/* The selector of target want called name.  GPUENV_EUNSUPPORTED when the
 * name makes no label name (ctx->err says why). */
GPUENV_API int gpuenv_labels_selector(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const char *prefix, const char *name, const gpuenv_target_t *want, const char *cuda_build,
	gpuenv_selector_t *out);
/* As YAML (two top-level keys, nodeSelector and affinity), after a comment
 * naming the target. */
GPUENV_API int gpuenv_selector_write_yaml(const gpuenv_selector_t *s, const char *name, gpuenv_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif
