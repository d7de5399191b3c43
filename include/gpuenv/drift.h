/* gpuenv drift: a node against an expected manifest (docs/drift.md).
 *
 * The expected manifest is either a small TOML file naming any of the
 * checks below, each an exact version or a PEP 440 specifier set
 *
 *     driver = ">=575,<590"
 *     cuda = "13.0"
 *     gpu = "H200"
 *     gpu_count = 8
 *     cudnn = ">=9.10"
 *     nccl = "none"
 *
 * or an earlier `gpuenv probe --json` snapshot (told apart by its content: a
 * JSON object), whose values are all expected exactly, absent ones as "none".
 * The node is a gpuenv_target_t (include/gpuenv/facts.h): the same reading
 * of the facts as `sync --target auto`, so drift and the rest of gpuenv
 * agree on which driver, GPUs and libraries a machine has.
 *
 * Each check's expected text is kept as written and its actual value as the
 * node has it ("none" when absent), so a report and the metrics say both.
 */
#ifndef GPUENV_DRIFT_H
#define GPUENV_DRIFT_H

#include "gpuenv/core.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"
#include "gpuenv/pep440.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The checks, in the order reports and metrics list them. */
enum gpuenv_drift_check {
	GPUENV_DRIFT_DRIVER,	/* "driver": the kernel driver's version, 580.95.05 */
	GPUENV_DRIFT_CUDA,	/* "cuda": the newest CUDA the driver runs (nvidia-smi's) */
	GPUENV_DRIFT_GPU,	/* "gpu": every GPU's product name */
	GPUENV_DRIFT_GPU_COUNT, /* "gpu_count": how many GPUs the probe saw */
	GPUENV_DRIFT_CUDNN,	/* "cudnn", "nccl", "tensorrt": the copy the */
	GPUENV_DRIFT_NCCL,	/* active environment loads, else the machine's */
	GPUENV_DRIFT_TENSORRT,
	GPUENV_DRIFT_NCHECKS
};

/* "driver", "cuda", ... (the TOML key and the metric's check label); NULL
 * out of range. */
GPUENV_API const char *gpuenv_drift_check_name(int check);

enum gpuenv_drift_how {
	GPUENV_DRIFT_UNSET = 0, /* not expected: not checked */
	GPUENV_DRIFT_NONE,	/* "none": expected absent */
	GPUENV_DRIFT_EXACT,	/* one version (PEP 440 equality), or a count */
	GPUENV_DRIFT_SPEC,	/* a specifier set: ">=575,<590" */
	GPUENV_DRIFT_NAME,	/* gpu: a name, matched through the KB */
	GPUENV_DRIFT_NAME_EXACT, /* gpu: "==NAME" or a snapshot's, byte for byte */
};

typedef struct gpuenv_drift_want {
	int how;	     /* enum gpuenv_drift_how */
	const char *text;    /* as written ("580.95.05", ">=575,<590", "8") */
	gpuenv_specset_t spec; /* SPEC */
	bool have_version;   /* EXACT: version parsed text (else compared as text) */
	gpuenv_version_t version;
	const char *name;    /* NAME, NAME_EXACT: the name compared */
	/* NAME: the KB's GPUs the name names (it can name several, "H100"
	 * names no variant); none: the name is compared exactly */
	const gpuenv_kb_gpu_t *kb_gpus[8];
	size_t nkb_gpus;
	uint32_t line, col;  /* in the expect file; 0 from a snapshot */
} gpuenv_drift_want_t;

enum { GPUENV_DRIFT_FROM_TOML = 1, GPUENV_DRIFT_FROM_SNAPSHOT = 2 };

typedef struct gpuenv_drift_expect {
	const char *file;
	int from; /* GPUENV_DRIFT_FROM_* */
	gpuenv_drift_want_t want[GPUENV_DRIFT_NCHECKS];
	size_t nwant; /* checks set */
} gpuenv_drift_expect_t;

/* Input cap: a snapshot of a large machine is a few MB. */
#define GPUENV_DRIFT_EXPECT_MAX ((size_t)64 << 20)

/* Read an expect file (text[0..len), any bytes).  kb resolves gpu names
 * (NULL: names are compared exactly).  0, or with ctx->err set to
 * "file:line:col: message" and a hint: GPUENV_ESYNTAX (TOML or JSON that
 * does not parse), GPUENV_EFORMAT (an unknown key, with the nearest known
 * one; a value of the wrong type or that is not a version or specifier;
 * no check at all; a JSON document that is not a facts snapshot),
 * GPUENV_ETOOBIG, -ENOMEM.  Everything lives in arena. */
GPUENV_API int gpuenv_drift_expect_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_kb_t *kb, const char *file, const char *text, size_t len,
	gpuenv_drift_expect_t *out);

typedef struct gpuenv_drift_item {
	int check;	      /* enum gpuenv_drift_check */
	const char *expected; /* as written; "none" */
	const char *actual;   /* the node's; "none" when it has none */
	bool holds;
	const char *why;      /* a failed check: one sentence; NULL when it holds */
} gpuenv_drift_item_t;

typedef struct gpuenv_drift_report {
	gpuenv_drift_item_t items[GPUENV_DRIFT_NCHECKS]; /* the expected checks, in order */
	size_t n, nfailed;
	/* the node's value of every check ("none" when absent), whether
	 * expected or not: the labels of gpuenv_info */
	const char *node[GPUENV_DRIFT_NCHECKS];
} gpuenv_drift_report_t;

/* Judge node against expect.  kb as for the parse (the node's GPU names
 * are looked up in it).  0 or -ENOMEM (recorded). */
GPUENV_API int gpuenv_drift_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_drift_expect_t *expect, const gpuenv_target_t *node, gpuenv_drift_report_t *out);

/* The report as Prometheus text exposition (node_exporter's textfile
 * collector): gpuenv_info{driver,cuda,gpu,cudnn,nccl,tensorrt} 1, one
 * gpuenv_drift{check,expected,actual} 0|1 per check, and
 * gpuenv_probe_duration_seconds when probe_seconds >= 0; each family with
 * its # HELP and # TYPE lines, label values escaped as the format says
 * (\\, \", \n).  Appended to out; 0 or a negative code of the buffer. */
GPUENV_API int gpuenv_drift_metrics(const gpuenv_drift_report_t *r, double probe_seconds,
	gpuenv_buf_t *out);

/* Append s as a Prometheus label value (without the quotes) to out. */
GPUENV_API int gpuenv_prom_label_value(gpuenv_buf_t *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
