/* gpuenv toml_edit: format-preserving edits of a TOML file (pyproject.toml
 * for init, add, remove and source).
 *
 * The model is a concrete syntax tree of spans over the file's bytes: the
 * text is cut into statements (a blank line, a comment line, a [table] or
 * [[array]] header, a key/value line with its value's span and the comment
 * after it), every byte in exactly one statement, so the statements written
 * back one after the other are the file byte for byte.  An array value is
 * cut into its elements on demand.  Keys are decoded (quoted keys,
 * escapes, dotted keys and the header they sit under), so a statement is
 * found by its full path as the parser's document names it.
 *
 * Every edit splices new text into the old and reads the result again
 * with the TOML parser (gpuenv/toml.h): an edit that would make the file
 * invalid is refused and the text is left as it was.  Edits keep the
 * style of what they touch: an array one-line or one element per line,
 * its indentation and its trailing comma; the file's newline (LF or
 * CRLF); a removal takes only the lines of what it removes (the comments
 * of the others stay), so an insertion followed by the removal of what
 * was inserted gives the original bytes back.
 */
#ifndef GPUENV_TOML_EDIT_H
#define GPUENV_TOML_EDIT_H

#include "gpuenv/core.h"
#include "gpuenv/toml.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gpuenv_toml_edit_kind {
	GPUENV_TOML_EDIT_BLANK = 0, /* whitespace only */
	GPUENV_TOML_EDIT_COMMENT,   /* a comment line */
	GPUENV_TOML_EDIT_TABLE,	    /* [a.b] */
	GPUENV_TOML_EDIT_AOT,	    /* [[a.b]] */
	GPUENV_TOML_EDIT_KEYVAL,    /* a.b = value  # comment */
};

/* One statement: bytes [start, end) of the text, its newline included. */
typedef struct gpuenv_toml_edit_node {
	uint8_t kind;
	size_t start, end;
	size_t vstart, vend; /* KEYVAL: the value's bytes */
	/* the full path from the root: a header's keys, or the key/value's
	 * header keys followed by its own (dotted) keys; nhead of them come
	 * from the header (KEYVAL), decoded, in the editor's arena */
	gpuenv_str_t *path;
	uint32_t npath, nhead;
	uint32_t header; /* KEYVAL: the index of its header node, UINT32_MAX: none */
} gpuenv_toml_edit_node_t;

/* An element of an array value: its bytes [start, end). */
typedef struct gpuenv_toml_edit_elem {
	size_t start, end;
} gpuenv_toml_edit_elem_t;

typedef struct gpuenv_toml_edit {
	gpuenv_ctx_t *ctx;
	const char *file;  /* in error messages */
	gpuenv_buf_t text; /* the current text */
	gpuenv_arena_t arena; /* nodes and paths, remade at every edit */
	gpuenv_toml_edit_node_t *nodes;
	size_t nnodes;
	gpuenv_toml_doc_t doc; /* the current text parsed */
	const char *nl;	       /* "\n" or "\r\n", the file's first newline */
} gpuenv_toml_edit_t;

/* Read text (any bytes) as TOML into ed.  0, or the parser's error
 * ("file:line:col: ...") or -ENOMEM; ed is safe to free in every case. */
GPUENV_API int gpuenv_toml_edit_open(gpuenv_toml_edit_t *ed, gpuenv_ctx_t *ctx, const char *file,
	const char *text, size_t len) GPUENV_NODISCARD;
GPUENV_API void gpuenv_toml_edit_free(gpuenv_toml_edit_t *ed);

/* The statements' bytes one after the other, appended to out: the text as
 * it is now (the file itself when nothing was edited).  0 or the buffer's
 * error. */
GPUENV_API int gpuenv_toml_edit_write(const gpuenv_toml_edit_t *ed, gpuenv_buf_t *out);

/* The key/value statement at the full path (keys decoded), or NULL (also
 * for a key inside an inline table or an array of tables' element). */
GPUENV_API const gpuenv_toml_edit_node_t *gpuenv_toml_edit_find(const gpuenv_toml_edit_t *ed,
	const char *const *path, size_t n);
/* The [header] statement of the table at path, or NULL. */
GPUENV_API const gpuenv_toml_edit_node_t *gpuenv_toml_edit_find_table(const gpuenv_toml_edit_t *ed,
	const char *const *path, size_t n);

/* The elements of a key/value's array value into *out (in the editor's
 * arena, valid until the next edit), *n their number.  0, GPUENV_ETYPE
 * (the value is not an array) or -ENOMEM. */
GPUENV_API int gpuenv_toml_edit_elems(gpuenv_toml_edit_t *ed, const gpuenv_toml_edit_node_t *kv,
	gpuenv_toml_edit_elem_t **out, size_t *n) GPUENV_NODISCARD;

/* Append value (TOML text: "\"numpy>=2\"") to the array at path, in the
 * array's style: one line ("a", "b") or one element per line with the last
 * element's indentation and trailing comma (4 spaces and a comma in an
 * empty multi-line array).  0, GPUENV_ENOTFOUND (no such key), GPUENV_ETYPE
 * (not an array), GPUENV_ESYNTAX (the result would not parse) or -ENOMEM,
 * ctx->err set. */
GPUENV_API int gpuenv_toml_edit_array_append(gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	gpuenv_str_t value) GPUENV_NODISCARD;
/* Remove element i of the array at path: its own line(s) when it has them
 * (the comment on its line goes with it), else it and its separator; the
 * comma the previous element had only as a separator goes when the last
 * element of an array without a trailing comma is removed.  Errors as
 * gpuenv_toml_edit_array_append, GPUENV_ENOTFOUND when i is out of range. */
GPUENV_API int gpuenv_toml_edit_array_remove(gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	size_t i) GPUENV_NODISCARD;

/* Replace element i of the array at path with value (TOML text), the rest
 * of the line as it was.  Errors as gpuenv_toml_edit_array_remove. */
GPUENV_API int gpuenv_toml_edit_array_set(gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	size_t i, gpuenv_str_t value) GPUENV_NODISCARD;

/* Set the key at path (n >= 1) to value (TOML text): the value replaced
 * where the key is, else a line "key = value" after the last key/value of
 * its table's section (its [header], or the dotted keys that made it), else
 * a new [table] section at the end of the file (after one blank line).
 * Errors as above; GPUENV_EUNSUPPORTED when the table is an inline table
 * or an array of tables' element. */
GPUENV_API int gpuenv_toml_edit_set(gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	gpuenv_str_t value) GPUENV_NODISCARD;

/* Flags of gpuenv_toml_edit_remove. */
#define GPUENV_TOML_EDIT_PRUNE 1u /* a [header] left without keys goes too */

/* Remove the key/value at path (its lines).  With GPUENV_TOML_EDIT_PRUNE,
 * a table section the removal leaves empty loses its header and the blank
 * line before it (what gpuenv_toml_edit_set added).  0, GPUENV_ENOTFOUND
 * or the errors above. */
GPUENV_API int gpuenv_toml_edit_remove(gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	unsigned flags) GPUENV_NODISCARD;

/* Arrays of tables ([[path]] sections). */
/* The number of [[path]] elements; *first the node index of each element's
 * header in order when elems is not NULL (up to cap). */
GPUENV_API size_t gpuenv_toml_edit_aot_count(const gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	size_t *elems, size_t cap);
/* Append a [[path]] element whose body is the key/value lines of body (TOML
 * text, each line ended by "\n", written with the file's newline) after
 * the last element's last key/value, or at the end of the file; one blank
 * line before its header. */
GPUENV_API int gpuenv_toml_edit_aot_append(gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	gpuenv_str_t body) GPUENV_NODISCARD;
/* Remove element i of [[path]]: its header, its key/value lines and the
 * comments between them, and the blank line before the header. */
GPUENV_API int gpuenv_toml_edit_aot_remove(gpuenv_toml_edit_t *ed, const char *const *path, size_t n,
	size_t i) GPUENV_NODISCARD;

#ifdef __cplusplus
}
#endif
#endif
