/* gpuenv pbtxt: protobuf's text format, as Triton's config.pbtxt is written
 * (lib/formats/pbtxt.c).
 *
 * The grammar of protobuf's "Text Format Language Specification": fields
 * `name: value` and `name { ... }` / `name: < ... >`, lists `[a, b]` of
 * scalars or messages (each element becomes one field of that name, as a
 * repeated field), `;` or `,` after a field, `#` comments, strings in single
 * or double quotes with C escapes (octal, \x, \u, \U) and adjacent strings
 * joined, numbers (decimal, hex, octal, floats, a leading '-', inf/nan) and
 * identifiers (enum values, true/false).  The reader knows no schema: it
 * returns the tree, every field and value with its line and column, and
 * leaves the meaning of names to the caller (Triton's model_config.proto for
 * `gpuenv triton check`). */
#ifndef GPUENV_PBTXT_H
#define GPUENV_PBTXT_H

#include <stdint.h>

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_PBTXT_MAX ((size_t)4 << 20) /* bytes of one file */
#define GPUENV_PBTXT_MAX_DEPTH 64	   /* nested messages */
#define GPUENV_PBTXT_MAX_FIELDS 1000000u   /* fields in one file */

typedef enum gpuenv_pbtxt_kind {
	GPUENV_PBTXT_STRING,  /* "text" (escapes decoded; may hold NUL bytes) */
	GPUENV_PBTXT_NUMBER,  /* 12, -1, 0x1f, 1.5e3, -inf: the text as written */
	GPUENV_PBTXT_IDENT,   /* TYPE_FP32, KIND_GPU, true */
	GPUENV_PBTXT_MESSAGE, /* { ... } */
} gpuenv_pbtxt_kind_t;

typedef struct gpuenv_pbtxt_msg gpuenv_pbtxt_msg_t;

typedef struct gpuenv_pbtxt_field {
	const char *name;	     /* "max_batch_size"; "[ext.name]" for an extension */
	gpuenv_pbtxt_kind_t kind;
	const char *value;	     /* scalars: NUL-terminated (decoded string, number, identifier) */
	size_t len;		     /* bytes of value */
	const gpuenv_pbtxt_msg_t *msg; /* GPUENV_PBTXT_MESSAGE */
	unsigned line, col;	     /* of the field's name, 1-based */
	unsigned vline, vcol;	     /* of its value */
} gpuenv_pbtxt_field_t;

struct gpuenv_pbtxt_msg {
	const gpuenv_pbtxt_field_t *fields; /* in file order */
	size_t n;
	unsigned line, col; /* of the opening brace; 1:1 for the file */
};

/* Parse text (len bytes; file names it in errors) into a tree in arena.
 * 0, or GPUENV_ESYNTAX with ctx->err "FILE:LINE:COL: what is wrong" and a
 * hint, GPUENV_ETOOBIG (file, depth or field count over the limits above),
 * -ENOMEM. */
GPUENV_API int gpuenv_pbtxt_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const char *text, size_t len, const gpuenv_pbtxt_msg_t **out);

/* The first field called name in m (NULL: none); *count (may be NULL) gets
 * how many fields have that name. */
GPUENV_API const gpuenv_pbtxt_field_t *gpuenv_pbtxt_find(const gpuenv_pbtxt_msg_t *m, const char *name,
	size_t *count);

/* The i-th field called name in m, NULL past the last. */
GPUENV_API const gpuenv_pbtxt_field_t *gpuenv_pbtxt_nth(const gpuenv_pbtxt_msg_t *m, const char *name,
	size_t i);

/* Field f as a signed 64-bit integer (decimal, 0x hex, 0 octal, a leading
 * '-'): 0, or GPUENV_ETYPE / GPUENV_ERANGE-like GPUENV_ESYNTAX at f's value
 * ("FILE:LINE:COL: NAME: expected an integer, got ..."). */
GPUENV_API int gpuenv_pbtxt_int(gpuenv_ctx_t *ctx, const char *file, const gpuenv_pbtxt_field_t *f,
	int64_t *out);

/* Field f as a bool (true/false/t/f/True/False/1/0, as protobuf reads them). */
GPUENV_API int gpuenv_pbtxt_bool(gpuenv_ctx_t *ctx, const char *file, const gpuenv_pbtxt_field_t *f,
	bool *out);

#ifdef __cplusplus
}
#endif
#endif
