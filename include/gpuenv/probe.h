/* gpuenv probe: the whole snapshot of a machine's GPU stack as "facts", the
 * JSON document described in docs/probe-schema.md (schema gpuenv.facts/1).
 *
 * The probe runs the backends (include/gpuenv/hw.h for the driver and GPUs,
 * include/gpuenv/stack.h for toolkits, libraries, the loader and Python
 * environments, include/gpuenv/fatbin.h for the CUDA code in binaries) and
 * fills the typed facts (gpuenv_facts_t, include/gpuenv/facts.h) from their
 * structs; the facts document is gpuenv_facts_json of that struct.  Later verbs (doctor, preflight,
 * labels) read only that object, so a snapshot from another node
 * (`--facts FILE`) is judged exactly like this machine. */
#ifndef GPUENV_PROBE_H
#define GPUENV_PROBE_H

#include <jansson.h>

#include "gpuenv/core.h"
#include "gpuenv/hw.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_FACTS_SCHEMA "gpuenv.facts/1"

enum {
	GPUENV_PROBE_DEEP = 1u << 0,	  /* cuInit and libcuda device queries */
	GPUENV_PROBE_NO_FATBIN = 1u << 1, /* skip the scan of CUDA code in binaries */
	GPUENV_PROBE_NO_PYTHON = 1u << 2, /* skip Python environments */
	GPUENV_PROBE_NO_LIBS = 1u << 3,	  /* skip the library and toolkit scan */
	GPUENV_PROBE_ALL_BINARIES = 1u << 4, /* fatbin scan of every CUDA library found,
						not only the frameworks' own */
};

typedef struct gpuenv_probe_opts {
	unsigned flags;		/* GPUENV_PROBE_* */
	gpuenv_hw_opts_t hw;	/* driver / GPU backends */
	const char *python;	/* --python PATH: the interpreter whose environment to read */
	const char *env_dir;	/* --env DIR: a virtual environment or prefix */
	const char *version;	/* gpuenv's version, written as "gpuenv" */
} gpuenv_probe_opts_t;

GPUENV_API void gpuenv_probe_opts_init(gpuenv_probe_opts_t *opts);

/* Probe the machine (through ctx->root and ctx->getenv) into the typed
 * facts (gpuenv/facts.h), allocated in arena: the same struct
 * gpuenv_facts_decode makes of a snapshot, so a live run and a snapshot are
 * judged alike without a JSON round trip.  0 or a negative code (out of
 * memory, a missing --root, an unusable --python / --env; ctx->err set);
 * everything the machine lacks is a fact, not an error. */
struct gpuenv_facts;
GPUENV_API int gpuenv_probe_facts(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts,
	gpuenv_arena_t *arena, const struct gpuenv_facts **out);

/* The same probe in two halves, for a caller with work to do on the
 * software stack while NVML starts (`probe --json` writes that part of the
 * document).  begin starts the GPU thread, then reads the host, the
 * container engines and the stack on the calling thread; *partial (when
 * not NULL) is the facts without the driver, PCI and GPUs (their keys
 * empty), which end fills in place: the same struct end returns.  On an
 * error begin has waited for the thread itself and there is nothing to
 * end; after a 0, end must be called once.  Errors as gpuenv_probe_facts. */
typedef struct gpuenv_probe gpuenv_probe_t;
GPUENV_API int gpuenv_probe_begin(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts,
	gpuenv_arena_t *arena, gpuenv_probe_t **probe, const struct gpuenv_facts **partial);
GPUENV_API int gpuenv_probe_end(gpuenv_probe_t *probe, gpuenv_ctx_t *ctx,
	const struct gpuenv_facts **out);

/* This machine's CUDA toolkits alone (gpuenv_toolkit_probe, through
 * ctx->root and ctx->getenv), as the typed facts a full probe gives them:
 * *out has the schema and "toolkits" only.  For callers whose facts came
 * from a light probe (source builds).  0 or -ENOMEM. */
GPUENV_API int gpuenv_probe_toolkit_facts(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const struct gpuenv_facts **out);

/* gpuenv_probe_facts written as the facts document (gpuenv_facts_json):
 * what `gpuenv probe --json` prints.  *out is a new reference the caller
 * must json_decref.  0 or a negative code, as gpuenv_probe_facts. */
GPUENV_API int gpuenv_probe_facts_json(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts,
	json_t **out);

#ifdef __cplusplus
}
#endif
#endif
