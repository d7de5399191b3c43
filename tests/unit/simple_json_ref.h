/* The PEP 691 page reader as it was over jansson's tree (simple_json_ref.c):
 * the oracle of the streaming reader's tests.  Same contract as
 * gpuenv_simple_json_parse. */
#ifndef GPUENV_TEST_SIMPLE_JSON_REF_H
#define GPUENV_TEST_SIMPLE_JSON_REF_H

#include "gpuenv/index.h"

int ref_simple_json_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url,
	gpuenv_str_t body, gpuenv_index_project_t *out);

/* Both readers over body: NULL when they agree, else what differs (in why).
 * They agree when they return the same code and, on success, the same
 * project, files (field by field) and warnings; on failure, when the
 * reference's error has no position (it is about the page's fields, not
 * jansson's syntax error), the same message and hint.  A page with a raw
 * NUL byte (valid JSON nowhere; jansson took one after a number) must be
 * refused by the new reader. */
const char *ref_simple_json_compare(const char *base_url, gpuenv_str_t body, char *why, size_t whysz);

#endif
