/* gpuenv diagnose: an error log in, the known failures it shows out, with
 * their causes and fixes (signatures from the knowledge base's diagnose.toml).
 * Doctor and preflight have their own header, gpuenv/doctor.h.
 */
#ifndef GPUENV_DIAGNOSE_H
#define GPUENV_DIAGNOSE_H

#include "gpuenv/core.h"
#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * diagnose
 *
 * The signatures are data: [[signature]] rows of data/kb/diagnose.toml, each
 * with literal and/or POSIX extended regex patterns, a cause and a fix
 * template (docs/diagnose.md lists them and the placeholders a template may
 * use).  A log is read line by line; on each line the signatures are tried
 * in file order and the first that matches claims the line, so the specific
 * ones come before the general ones.  A signature that matches several lines
 * is reported once, at its first line, with the count and the line numbers.
 * ======================================================================== */

/* What is known of the machine, for fixes made concrete.  Everything is
 * optional: NULL / -1 / 0 = unknown.  Strings are borrowed. */
typedef struct gpuenv_diag_facts {
	const char *gpu;	   /* "NVIDIA H200" */
	int cc_major, cc_minor;	   /* 9, 0 */
	uint64_t gpu_mem;	   /* bytes */
	unsigned gpu_count;
	const char *driver;	   /* "580.159.04" */
	const char *driver_cuda;   /* "13.0": the newest CUDA the driver runs */
	const char *kernel_module; /* "580.159.04" (/sys/module/nvidia/version) */
	const char *cuda_visible_devices; /* its value; NULL when unset */
	const char *torch;	   /* "2.11.0+cu130" */
	const char *torch_cuda;	   /* "13.0" */
	bool torch_code;	   /* torch_cubins / torch_ptx were read */
	const char *const *torch_cubins; /* "sm_90", ... (libtorch_cuda.so) */
	size_t n_torch_cubins;
	const char *const *torch_ptx; /* "sm_90" or "compute_90" */
	size_t n_torch_ptx;
	const char *cudnn; /* the cuDNN version loaded, "9.19.0" */
} gpuenv_diag_facts_t;

/* The diagnose view of decoded facts (include/gpuenv/facts.h): the first
 * visible GPU, the driver, the active (else first) environment's torch and
 * its libtorch_cuda.so code, the first cuDNN.  Strings are borrowed from
 * facts (unknown facts stay NULL / -1).  Returns 0. */
struct gpuenv_facts;
GPUENV_API int gpuenv_diag_facts_from(const struct gpuenv_facts *facts, gpuenv_diag_facts_t *out);

/* gpuenv_facts_parse (the same checks and messages as doctor and
 * preflight: GPUENV_ESYNTAX, GPUENV_EFORMAT, GPUENV_EUNSUPPORTED, -ENOMEM,
 * with ctx->err set) and gpuenv_diag_facts_from; strings in arena. */
GPUENV_API int gpuenv_diag_facts_parse(gpuenv_ctx_t *ctx, const char *json, size_t len,
	const char *name, gpuenv_arena_t *arena, gpuenv_diag_facts_t *out);

/* Compiled signatures, ready to scan logs; tied to the kb it came from. */
typedef struct gpuenv_diag gpuenv_diag_t;

#define GPUENV_DIAG_MAX_PATTERN 1024 /* bytes of one pattern */
#define GPUENV_DIAG_MAX_LINE 8192    /* bytes of a log line looked at */
#define GPUENV_DIAG_MAX_LINES 16     /* line numbers kept per hit */
#define GPUENV_DIAG_MAX_WITHIN 16    /* lines a signature's `after` may lie above */
#define GPUENV_DIAG_WITHIN 8         /* ... when the row does not say */

/* Compile kb's signatures (regcomp once).  A pattern that does not compile
 * is GPUENV_ESYNTAX at its diagnose.toml line. */
GPUENV_API int gpuenv_diag_new(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb, gpuenv_diag_t **out);
GPUENV_API void gpuenv_diag_free(gpuenv_diag_t *d);

typedef struct gpuenv_diag_hit {
	const gpuenv_kb_signature_t *sig;
	uint64_t line;	     /* first line it matched, 1-based */
	gpuenv_str_t match;  /* the text that matched there */
	gpuenv_str_t text;   /* that whole line, trimmed (at most 400 bytes) */
	uint64_t count;	     /* lines it matched */
	uint64_t lines[GPUENV_DIAG_MAX_LINES]; /* the first of them */
	size_t n_lines;
	const char *cause;   /* the cause, placeholders filled */
	const char *fix;     /* the fix: concrete when the facts allowed */
	bool concrete;	     /* fix made from the machine's facts (fix_facts) */
} gpuenv_diag_hit_t;

typedef struct gpuenv_diag_result {
	gpuenv_diag_hit_t *hits; /* in the order of their first lines */
	size_t n;
	uint64_t lines; /* lines read */
} gpuenv_diag_result_t;

/* Scan a log (any bytes; not NUL-terminated).  facts may be NULL.  Hits and
 * their strings are allocated in arena.  0 or -ENOMEM. */
GPUENV_API int gpuenv_diag_scan(gpuenv_diag_t *d, const char *log, size_t len,
	const gpuenv_diag_facts_t *facts, gpuenv_arena_t *arena, gpuenv_diag_result_t *out);

/* Expand a fix/cause template: {1}..{9} from caps (ncaps of them), facts
 * and knowledge-base placeholders (docs/diagnose.md).  Returns the text in
 * arena, or NULL when a placeholder cannot be filled (*missing names it). */
GPUENV_API const char *gpuenv_diag_expand(gpuenv_diag_t *d, const char *tmpl, size_t len,
	const gpuenv_str_t *caps, size_t ncaps, const gpuenv_diag_facts_t *facts,
	gpuenv_arena_t *arena, const char **missing);

/* The torch build gpuenv would install on this machine (facts: GPU and
 * driver), as a phrase: "a cu128 build (torch 2.10: pip install ...)";
 * NULL when nothing fits or the GPU is unknown. */
GPUENV_API const char *gpuenv_diag_torch_pick(gpuenv_diag_t *d, const gpuenv_diag_facts_t *facts,
	gpuenv_arena_t *arena);

/* ===========================================================================
 * doctor (to come)
 * ======================================================================== */

#ifdef __cplusplus
}
#endif
#endif
