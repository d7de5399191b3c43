/* gpuenv facts writer, the probe's side: JSON of the backends' structs for
 * the debug verbs (`debug hw`, `debug stack`, `debug ldd`), in the shapes of
 * the facts document (docs/probe-schema.md).  The document itself is
 * written from the typed facts by gpuenv_facts_json (gpuenv/facts.h); the
 * probe fills those (gpuenv_probe_facts, gpuenv/probe.h).
 *
 * Every string of bytes read from the machine (paths, names, METADATA
 * fields, messages that quote them) is written with gpuenv_json_text: bytes
 * that are not valid text are escaped by gpuenv_text_escape, so the
 * document is always valid UTF-8 without NUL and nothing is dropped. */
#ifndef GPUENV_FACTS_WRITE_H
#define GPUENV_FACTS_WRITE_H

#include <jansson.h>

#include "gpuenv/core.h"
#include "gpuenv/hw.h"
#include "gpuenv/stack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A JSON string of n bytes that need not be text (escaped as
 * docs/probe-schema.md "Strings" says); JSON null when s is NULL.  A new
 * reference; NULL when out of memory (recorded in ctx). */
GPUENV_API json_t *gpuenv_json_text(gpuenv_ctx_t *ctx, const char *s, size_t n);

/* The driver/GPU part of the facts, for callers that ran the hw backends
 * themselves: fills "driver", "cuda_visible_devices", "pci", "gpus", "jetson"
 * and appends to "warnings" in obj (through the typed facts and
 * gpuenv_facts_json, so it is the document's part exactly). */
GPUENV_API int gpuenv_probe_hw_json(gpuenv_ctx_t *ctx, const gpuenv_hw_facts_t *f, json_t *obj);

/* JSON of the software-stack structs (gpuenv/stack.h); new references,
 * NULL when out of memory. */
GPUENV_API json_t *gpuenv_stack_toolkit_json(gpuenv_ctx_t *ctx, const gpuenv_toolkit_t *tk);
GPUENV_API json_t *gpuenv_stack_libcopy_json(gpuenv_ctx_t *ctx, const gpuenv_libcopy_t *c);
GPUENV_API json_t *gpuenv_stack_resolution_json(gpuenv_ctx_t *ctx,
	const gpuenv_ld_resolution_t *r);
GPUENV_API json_t *gpuenv_stack_pyenv_json(gpuenv_ctx_t *ctx, const gpuenv_pyenv_t *env);
GPUENV_API json_t *gpuenv_stack_ldcache_json(gpuenv_ctx_t *ctx, const gpuenv_ldcache_t *c,
	bool entries);
GPUENV_API json_t *gpuenv_stack_json(gpuenv_ctx_t *ctx, const gpuenv_stack_t *st);
/* Names of the GPUENV_LIBLOC_* bits, in bit order (6 of them). */
GPUENV_API extern const char *const gpuenv_stack_where_names[];
/* Names of the GPUENV_TK_* bits (a toolkit's found_by), in bit order (5). */
GPUENV_API extern const char *const gpuenv_stack_found_by_names[];

#ifdef __cplusplus
}
#endif
#endif
