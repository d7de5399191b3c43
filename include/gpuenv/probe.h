/* gpuenv probe: the whole snapshot of a machine's GPU stack as "facts", the
 * JSON document described in docs/probe-schema.md (schema gpuenv.facts/1).
 *
 * The probe runs the backends (include/gpuenv/hw.h for the driver and GPUs,
 * include/gpuenv/stack.h for toolkits, libraries, the loader and Python
 * environments, include/gpuenv/fatbin.h for the CUDA code in binaries) and
 * turns their structs into one JSON object (the writers of each part are in
 * include/gpuenv/facts_write.h).  Later verbs (doctor, preflight,
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

/* Probe the machine (through ctx->root and ctx->getenv) and build the facts
 * object; *out is a new reference the caller must json_decref.  Returns 0 or a
 * negative code (out of memory); everything the machine lacks is a fact, not
 * an error. */
GPUENV_API int gpuenv_probe_facts_json(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *opts,
	json_t **out);

#ifdef __cplusplus
}
#endif
#endif
