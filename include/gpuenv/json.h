/* gpuenv json: jansson's allocations through the calling context
 * (lib/formats/json_mem.c).  Every library function that makes or parses
 * JSON (the facts document, index pages, OCI manifests, traces, image
 * manifests) opens a scope here.
 *
 * jansson has one process-wide allocator (json_set_alloc_funcs).  gpuenv
 * installs a trampoline there once: between gpuenv_json_enter and
 * gpuenv_json_leave, jansson allocates through that context's allocator on
 * the calling thread (a thread-local "current context"); outside, through
 * malloc.  A block of a context with an allocator of its own carries a
 * header naming it (malloc's blocks need none), so a value made under one
 * context may be freed under another or none.  Scopes nest.  jansson 2.14
 * does not survive every failed allocation (its lexer runs off a token it
 * could not save), so when the context's allocator refuses, the block comes
 * from malloc instead and the refusal is recorded: the scope's
 * gpuenv_json_leave returns true, and the caller must then fail with
 * -ENOMEM whatever jansson returned. */
#ifndef GPUENV_JSON_H
#define GPUENV_JSON_H

#include <jansson.h>

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuenv_json_scope {
	gpuenv_ctx_t *prev;
	bool prev_failed;
} gpuenv_json_scope_t;

GPUENV_API void gpuenv_json_enter(gpuenv_ctx_t *ctx, gpuenv_json_scope_t *scope);
/* Leaves the scope; true when the context refused an allocation inside
 * it: memory ran out, whatever jansson returned. */
GPUENV_API bool gpuenv_json_leave(gpuenv_json_scope_t *scope);

/* The text of v appended to b exactly as json_dumps(v, JSON_INDENT(indent))
 * writes it (insertion order, 17 significant digits, UTF-8 kept), at a
 * fraction of its cost: jansson's dumper calls back per token, and a large
 * document (the facts of a GPU machine with a torch environment) took it
 * about 7 ms on the H200, a fifth of `probe --json`.  0; -EINVAL for text
 * that is not UTF-8 and GPUENV_ETOOBIG past 2048 levels, as jansson refuses
 * them; the buffer's error when an append failed.  json_write.c. */
GPUENV_API int gpuenv_json_write(gpuenv_buf_t *b, const json_t *v, unsigned indent);

/* The same text written as it is produced, with no tree: the writer of a
 * large document (the facts) calls these in document order.  Inside an
 * object, a key and then its value; inside an array, values.  Errors are
 * kept (the first one) and returned by gpuenv_json_out_end, as
 * gpuenv_json_write returns them; a NULL string is written as null. */
typedef struct gpuenv_json_out {
	gpuenv_buf_t *b;
	unsigned indent, depth;
	bool empty; /* the container just opened has no member yet */
	bool keyed; /* a key was written: its value comes next */
	int err;
} gpuenv_json_out_t;

GPUENV_API void gpuenv_json_out_init(gpuenv_json_out_t *o, gpuenv_buf_t *b, unsigned indent);
GPUENV_API void gpuenv_json_out_key(gpuenv_json_out_t *o, const char *key);
GPUENV_API void gpuenv_json_out_keyn(gpuenv_json_out_t *o, const char *key, size_t n);
/* brace: '{' or '[' to open, '}' or ']' to close */
GPUENV_API void gpuenv_json_out_open(gpuenv_json_out_t *o, char brace);
GPUENV_API void gpuenv_json_out_close(gpuenv_json_out_t *o, char brace);
GPUENV_API void gpuenv_json_out_str(gpuenv_json_out_t *o, const char *s);
GPUENV_API void gpuenv_json_out_strn(gpuenv_json_out_t *o, const char *s, size_t n);
GPUENV_API void gpuenv_json_out_int(gpuenv_json_out_t *o, long long v);
GPUENV_API void gpuenv_json_out_real(gpuenv_json_out_t *o, double d);
GPUENV_API void gpuenv_json_out_bool(gpuenv_json_out_t *o, bool v);
GPUENV_API void gpuenv_json_out_null(gpuenv_json_out_t *o);
GPUENV_API int gpuenv_json_out_end(gpuenv_json_out_t *o);

#ifdef __cplusplus
}
#endif
#endif
