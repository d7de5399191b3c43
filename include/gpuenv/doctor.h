/* gpuenv doctor and preflight: verdicts over the probe's facts.
 *
 * Both read the facts `gpuenv probe --json` writes (docs/probe-schema.md),
 * decoded by gpuenv_facts_parse / gpuenv_facts_decode (include/gpuenv/facts.h),
 * so a snapshot taken on one node can be judged on another, and both are
 * pure functions of (facts, knowledge base): no file,
 * no environment variable, no clock.  Every verdict carries a stable id, a
 * severity, what it concerns, the evidence it read (with the sources the
 * facts name) and a concrete fix.  The rules and their ids are listed in
 * docs/doctor.md.
 */
#ifndef GPUENV_DOCTOR_H
#define GPUENV_DOCTOR_H

#include <jansson.h>

#include "gpuenv/core.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The knowledge base (include/gpuenv/kb.h); NULL everywhere below means the
 * one compiled into the binary.  A KB given by the caller needs at least
 * these files (gpuenv_kb_load_files mask): */
#define GPUENV_DOCTOR_KB_FILES                                                        \
	(GPUENV_KB_FILE(GPUENV_KB_CUDA) | GPUENV_KB_FILE(GPUENV_KB_TORCH) |           \
		GPUENV_KB_FILE(GPUENV_KB_NGC) | GPUENV_KB_FILE(GPUENV_KB_GPUS) | GPUENV_KB_FILE(GPUENV_KB_WHEELS))

/* ---- verdicts ---------------------------------------------------------- */

enum gpuenv_severity {
	GPUENV_SEV_INFO = 0,
	GPUENV_SEV_WARNING = 1,
	GPUENV_SEV_ERROR = 2,
};

/* "info", "warning", "error". */
GPUENV_API const char *gpuenv_severity_name(int severity);

/* One fact a verdict rests on. */
typedef struct gpuenv_evidence {
	const char *fact;   /* where it was read: a path into the facts
			       ("gpus[0].compute_capability") or a KB row
			       ("kb:cuda.toml toolkit 12.8") */
	const char *value;  /* the value, as text */
	const char *source; /* the fact's own source as the facts name it
			       ("nvml", "metadata", "LD_LIBRARY_PATH"), "kb"
			       (with the row's citation in kb_source), or
			       "facts" when the document does not say */
	const char *kb_source; /* the KB row's citation; NULL otherwise */
} gpuenv_evidence_t;

typedef struct gpuenv_verdict {
	const char *id;	     /* stable rule id: "driver-too-old", ... */
	int severity;	     /* enum gpuenv_severity */
	const char *subject; /* what kind of thing it concerns: "machine",
				"driver", "gpu", "environment", "binary",
				"library" */
	const char *target;  /* which one, in words ("GPU 0 NVIDIA H200 (sm_90)",
				a binary's path, an environment's path) */
	int gpu;	     /* index in facts.gpus[] it concerns; -1 none or several */
	const char *env;     /* environment path; NULL when not about one */
	const char *binary;  /* binary path; NULL when not about one */
	const char *message; /* what is wrong (or, for info, what holds) */
	const char *fix;     /* a command or a version; NULL when none is needed */
	size_t nevidence;
	gpuenv_evidence_t *evidence;
} gpuenv_verdict_t;

typedef struct gpuenv_verdicts {
	size_t n;
	gpuenv_verdict_t *items; /* errors first, then warnings, then infos;
				    in rule order within a severity */
	size_t count[3];	 /* by enum gpuenv_severity */
	size_t cap;		 /* private */
} gpuenv_verdicts_t;

/* The verdicts as JSON: {"errors": N, "warnings": N, "infos": N,
 * "verdicts": [{id, severity, subject, target, gpu, environment, binary,
 * message, fix, evidence: [{fact, value, source, kb_source}]}]}.  NULL when
 * memory runs out. */
GPUENV_API json_t *gpuenv_verdicts_json(const gpuenv_verdicts_t *v);

/* ---- doctor ------------------------------------------------------------ */

typedef struct gpuenv_doctor_opts {
	const struct gpuenv_kb *kb; /* NULL: the built-in knowledge base */
	const char *env;	    /* judge only the Python environment at this
				       path, as bytes (compared with the facts'
				       escaped prefix; machine rules still run);
				       NULL: all */
} gpuenv_doctor_opts_t;

/* Run every rule of docs/doctor.md over facts.  Verdicts and their strings
 * live in arena.  opts may be NULL.  Returns 0 (even with error verdicts),
 * GPUENV_ENOTFOUND when opts->env names no environment of the facts, the
 * KB loader's error, or -ENOMEM; ctx->err always says which. */
GPUENV_API int gpuenv_doctor_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_facts_t *facts, const gpuenv_doctor_opts_t *opts, gpuenv_verdicts_t *out);

/* ---- preflight --------------------------------------------------------- */

struct gpuenv_lock;

/* What to run: exactly one of cuda, torch, image, lock. */
typedef struct gpuenv_preflight_req {
	const char *cuda;  /* "12.2": a CUDA application of that version */
	const char *torch; /* "2.7.0+cu128"; without a local label, the
			      PyPI build of that release */
	const char *image; /* "nvcr.io/nvidia/pytorch:25.01-py3",
			      "nvidia/cuda:12.4.1-runtime-ubuntu22.04" */
	const struct gpuenv_kb *kb; /* NULL: built in */
	/* a PEP 751 lock the caller read (gpuenv/pylock.h: gpuenv's own or
	 * another tool's) and its path for messages: every package it installs
	 * on this node judged (docs/doctor.md, "Preflight") */
	const struct gpuenv_lock *lock;
	const char *lock_path;
} gpuenv_preflight_req_t;

typedef struct gpuenv_preflight {
	bool go;	     /* no error among the reasons */
	const char *what;    /* the request in words: "torch 2.7.0+cu128 (CUDA 12.8)" */
	int cuda;	     /* the CUDA version it needs, as 1000*major + 10*minor */
	gpuenv_verdicts_t reasons; /* why (info reasons say what holds) */
} gpuenv_preflight_t;

/* Can the node the facts describe run req?  Returns 0 with out filled (go
 * or no-go), GPUENV_ENOTFOUND when the knowledge base does not know the
 * request (an unknown torch release or image tag), GPUENV_EUSAGE for a
 * malformed or empty request, or -ENOMEM; ctx->err always says which. */
GPUENV_API int gpuenv_preflight_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_facts_t *facts, const gpuenv_preflight_req_t *req, gpuenv_preflight_t *out);

/* {"go": bool, "request": what, "cuda": "12.8", + gpuenv_verdicts_json's
 * keys for the reasons}.  NULL when memory runs out. */
GPUENV_API json_t *gpuenv_preflight_json(const gpuenv_preflight_t *p);

#ifdef __cplusplus
}
#endif
#endif
