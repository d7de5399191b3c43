/* gpuenv toml: a TOML 1.0 parser, its document model and a writer.
 *
 * A document lives in one arena: tables keep their keys in insertion order
 * and remember how they were made ([header], dotted key, inline, array of
 * tables), every key and value keeps its line:col, strings are slices, and
 * date/time values are kept as their validated text plus their kind.  The
 * writer turns a document back into TOML that the parser reads back to the
 * same document (pyproject.toml and pylock.toml readers and the lock writer
 * are built on this).
 *
 * Errors are reported in ctx->err as "file:line:col: message"; columns count
 * characters (UTF-8 code points), both are 1-based.
 */
#ifndef GPUENV_TOML_H
#define GPUENV_TOML_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpuenv_toml_type {
	GPUENV_TOML_NONE = 0, /* a value not set yet (builder) */
	GPUENV_TOML_STRING,
	GPUENV_TOML_INTEGER,
	GPUENV_TOML_FLOAT,
	GPUENV_TOML_BOOL,
	GPUENV_TOML_DATETIME,	    /* offset date-time: 1979-05-27T07:32:00Z */
	GPUENV_TOML_DATETIME_LOCAL, /* local date-time: 1979-05-27T07:32:00 */
	GPUENV_TOML_DATE_LOCAL,	    /* local date: 1979-05-27 */
	GPUENV_TOML_TIME_LOCAL,	    /* local time: 07:32:00 */
	GPUENV_TOML_ARRAY,
	GPUENV_TOML_TABLE,
} gpuenv_toml_type_t;

/* How a table or array was made; the parser enforces TOML's rules with them
 * and the writer uses them to choose a form. */
enum {
	GPUENV_TOML_INLINE = 1 << 0,  /* table written { ... }; closed once parsed */
	GPUENV_TOML_DOTTED = 1 << 1,  /* table made by a dotted key (a.b = 1) */
	GPUENV_TOML_DEFINED = 1 << 2, /* table with its own [header] */
	GPUENV_TOML_AOT = 1 << 3,     /* array of tables ([[header]]) */
};

typedef struct gpuenv_toml_table gpuenv_toml_table_t;
typedef struct gpuenv_toml_array gpuenv_toml_array_t;

/* Positions: line, and column in characters; 0 when built in memory.  The
 * stored column stops at 65535 (GPUENV_TOML_COL_MAX) to keep values small;
 * parse errors always carry the exact column. */
#define GPUENV_TOML_COL_MAX 65535u

typedef struct gpuenv_toml_value {
	uint32_t line;	/* where the value starts */
	uint16_t col;
	uint8_t type;	/* gpuenv_toml_type_t */
	uint8_t flags;	/* GPUENV_TOML_* of the table or array */
	union {
		gpuenv_str_t str; /* STRING, and the date/time kinds (validated text) */
		int64_t i;
		double f;
		bool b;
		gpuenv_toml_array_t *arr;
		gpuenv_toml_table_t *tab;
	} u;
} gpuenv_toml_value_t;

typedef struct gpuenv_toml_kv {
	gpuenv_str_t key; /* decoded key (may hold any UTF-8, even NUL) */
	gpuenv_toml_value_t val;
	uint32_t line; /* of the key (for a.b.c = 1: of that part) */
	uint16_t col;
} gpuenv_toml_kv_t;

/* Items are pointers so that a value stays where it is while its table or
 * array grows. */
struct gpuenv_toml_table {
	gpuenv_toml_kv_t **items; /* insertion order */
	uint32_t len, cap;
	uint32_t *index; /* hash slots (item number + 1) once the table grows */
	uint32_t index_cap;
	uint32_t depth;	    /* nesting depth from the parser (root: 0) */
	uint32_t line, col; /* header, '{' or first key; 0 when built in memory */
};

struct gpuenv_toml_array {
	gpuenv_toml_value_t **items;
	uint32_t len, cap;
	uint32_t depth;
};

#define GPUENV_TOML_MAX_SIZE ((size_t)64 << 20) /* default input limit */
#define GPUENV_TOML_MAX_DEPTH 128		/* default nesting limit */
#define GPUENV_TOML_DEPTH_LIMIT 1000		/* max_depth is capped here */

typedef struct gpuenv_toml_doc {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t arena; /* everything of the document */
	gpuenv_toml_table_t *root;
	const char *file; /* name in error messages ("" when none) */
	size_t max_size;  /* input limit, GPUENV_TOML_MAX_SIZE by default */
	unsigned max_depth; /* nesting limit of tables and arrays */
} gpuenv_toml_doc_t;

/* Start an empty document (an empty root table).  file names the source in
 * error messages (NULL: none) and is copied.  0 or -ENOMEM. */
GPUENV_API int gpuenv_toml_doc_init(gpuenv_toml_doc_t *doc, gpuenv_ctx_t *ctx,
	const char *file);
/* Free everything of the document; it may be initialised again. */
GPUENV_API void gpuenv_toml_doc_free(gpuenv_toml_doc_t *doc);

/* Parse TOML 1.0 text (any bytes; not NUL-terminated) into a freshly
 * initialised document.  The text is copied: the document does not refer to
 * it afterwards.  0, or GPUENV_ESYNTAX (malformed), GPUENV_EDUPLICATE (a key
 * or table defined twice, or redefined as another kind), GPUENV_ETOOBIG
 * (max_size, max_depth) or -ENOMEM, with ctx->err set to
 * "file:line:col: message"; after a failure the root is left empty. */
GPUENV_API int gpuenv_toml_parse(gpuenv_toml_doc_t *doc, const char *text,
	size_t len);

/* The same without the copy, for big inputs already in memory: text[len]
 * must be a NUL byte (as in a gpuenv_buf_t), and the document refers to the
 * text (its strings are slices of it), so the text must outlive the
 * document.  GPUENV_EUSAGE when text[len] is not NUL. */
GPUENV_API int gpuenv_toml_parse_borrowed(gpuenv_toml_doc_t *doc, const char *text,
	size_t len);

/* ---- lookups ------------------------------------------------------------ */

/* "string", "integer", ..., "table" */
GPUENV_API const char *gpuenv_toml_type_name(int type);

/* The key/value pair for key in t, or NULL.  O(1) for big tables. */
/* Same data: same types and values (floats bit for bit, NaN by sign),
 * tables with the same keys in any order, arrays in order; strings and
 * date/times by text.  How a table was written (inline, dotted) is ignored. */
GPUENV_API bool gpuenv_toml_value_eq(const gpuenv_toml_value_t *a, const gpuenv_toml_value_t *b);
GPUENV_API bool gpuenv_toml_table_eq(const gpuenv_toml_table_t *a, const gpuenv_toml_table_t *b);

GPUENV_API gpuenv_toml_kv_t *gpuenv_toml_find(const gpuenv_toml_table_t *t,
	gpuenv_str_t key);
/* The value of key in t (a plain key, no dots), or NULL. */
GPUENV_API gpuenv_toml_value_t *gpuenv_toml_get(const gpuenv_toml_table_t *t,
	const char *key);
/* The value at a dotted path written as a TOML key ("tool.gpuenv.targets",
 * "tool.\"a.b\".c"), going through tables only; NULL when absent or when the
 * path is not a valid TOML key. */
GPUENV_API gpuenv_toml_value_t *gpuenv_toml_get_path(const gpuenv_toml_table_t *t,
	const char *path);

/* Typed getters: the value at path (as gpuenv_toml_get_path) must exist and
 * have the type asked for.  0; GPUENV_ENOTFOUND when absent (ctx->err says
 * which key is missing, at the table's position when known); GPUENV_ETYPE
 * with "file:line:col: 'path' must be a string, not an integer". */
GPUENV_API int gpuenv_toml_get_string(gpuenv_toml_doc_t *doc,
	const gpuenv_toml_table_t *t, const char *path, gpuenv_str_t *out);
GPUENV_API int gpuenv_toml_get_integer(gpuenv_toml_doc_t *doc,
	const gpuenv_toml_table_t *t, const char *path, int64_t *out);
/* accepts integers too (converted) */
GPUENV_API int gpuenv_toml_get_float(gpuenv_toml_doc_t *doc,
	const gpuenv_toml_table_t *t, const char *path, double *out);
GPUENV_API int gpuenv_toml_get_bool(gpuenv_toml_doc_t *doc,
	const gpuenv_toml_table_t *t, const char *path, bool *out);
GPUENV_API int gpuenv_toml_get_table(gpuenv_toml_doc_t *doc,
	const gpuenv_toml_table_t *t, const char *path, gpuenv_toml_table_t **out);
GPUENV_API int gpuenv_toml_get_array(gpuenv_toml_doc_t *doc,
	const gpuenv_toml_table_t *t, const char *path, gpuenv_toml_array_t **out);
/* Fail with GPUENV_ETYPE at v's position unless v has type; what names the
 * value in the message ("project.name", "dependencies[3]"). */
GPUENV_API int gpuenv_toml_expect(gpuenv_toml_doc_t *doc,
	const gpuenv_toml_value_t *v, int type, const char *what);

/* ---- date and time values ----------------------------------------------- */
typedef struct gpuenv_toml_datetime {
	int type; /* GPUENV_TOML_DATETIME, _DATETIME_LOCAL, _DATE_LOCAL, _TIME_LOCAL */
	int year, month, day;	  /* 0 when there is no date */
	int hour, minute, second; /* 0 when there is no time */
	uint32_t nanosecond;	  /* fraction digits past the ninth are dropped */
	int offset_minutes;	  /* east of UTC (Z = 0); offset date-times only */
} gpuenv_toml_datetime_t;

/* Parse a TOML date/time (RFC 3339 as TOML 1.0 allows: 'T', 't' or one space
 * between date and time, seconds required) filling the whole slice.  Returns
 * its type (> 0) or GPUENV_ESYNTAX; out may be NULL. */
GPUENV_API int gpuenv_toml_datetime_parse(gpuenv_str_t text,
	gpuenv_toml_datetime_t *out);

/* ---- building documents --------------------------------------------------
 * Values returned below stay valid until the document is freed.  Strings and
 * keys are copied into the document's arena. */

/* Add key to t; returns its (GPUENV_TOML_NONE) value to set, or NULL with
 * ctx->err set (GPUENV_EDUPLICATE, -ENOMEM). */
GPUENV_API gpuenv_toml_value_t *gpuenv_toml_table_add(gpuenv_toml_doc_t *doc,
	gpuenv_toml_table_t *t, gpuenv_str_t key);
/* Append a (GPUENV_TOML_NONE) value to a; NULL on -ENOMEM. */
GPUENV_API gpuenv_toml_value_t *gpuenv_toml_array_push(gpuenv_toml_doc_t *doc,
	gpuenv_toml_array_t *a);

/* Setters: 0 or a negative code (ctx->err set).  A string must be valid
 * UTF-8 (GPUENV_ESYNTAX otherwise); a date/time must parse with
 * gpuenv_toml_datetime_parse, and its kind is taken from the text. */
GPUENV_API int gpuenv_toml_set_string(gpuenv_toml_doc_t *doc,
	gpuenv_toml_value_t *v, gpuenv_str_t s);
GPUENV_API void gpuenv_toml_set_integer(gpuenv_toml_value_t *v, int64_t i);
GPUENV_API void gpuenv_toml_set_float(gpuenv_toml_value_t *v, double f);
GPUENV_API void gpuenv_toml_set_bool(gpuenv_toml_value_t *v, bool b);
GPUENV_API int gpuenv_toml_set_datetime(gpuenv_toml_doc_t *doc,
	gpuenv_toml_value_t *v, gpuenv_str_t text);
/* Make v an empty table / array with flags (GPUENV_TOML_INLINE for tables the
 * writer should write { ... }; GPUENV_TOML_AOT for arrays it should write as
 * [[header]] sections).  NULL on -ENOMEM. */
GPUENV_API gpuenv_toml_table_t *gpuenv_toml_set_table(gpuenv_toml_doc_t *doc,
	gpuenv_toml_value_t *v, unsigned flags);
GPUENV_API gpuenv_toml_array_t *gpuenv_toml_set_array(gpuenv_toml_doc_t *doc,
	gpuenv_toml_value_t *v, unsigned flags);

/* Shortcuts: add key to t with a value; 0 or a negative code. */
GPUENV_API int gpuenv_toml_add_string(gpuenv_toml_doc_t *doc,
	gpuenv_toml_table_t *t, const char *key, const char *value);
GPUENV_API int gpuenv_toml_add_integer(gpuenv_toml_doc_t *doc,
	gpuenv_toml_table_t *t, const char *key, int64_t value);
GPUENV_API int gpuenv_toml_add_bool(gpuenv_toml_doc_t *doc,
	gpuenv_toml_table_t *t, const char *key, bool value);
/* NULL with ctx->err set on failure */
GPUENV_API gpuenv_toml_table_t *gpuenv_toml_add_table(gpuenv_toml_doc_t *doc,
	gpuenv_toml_table_t *t, const char *key, unsigned flags);
GPUENV_API gpuenv_toml_array_t *gpuenv_toml_add_array(gpuenv_toml_doc_t *doc,
	gpuenv_toml_table_t *t, const char *key, unsigned flags);

/* ---- writing ------------------------------------------------------------- */

/* Append root as TOML to out.  Deterministic: keys in insertion order,
 * strings escaped minimally, floats in the shortest form that reads back
 * exactly, date/times as stored.  Tables become [header] sections unless
 * marked inline (or inside an array that is not an array of tables); dotted
 * tables are written as dotted keys; arrays of tables as [[header]].  Reading
 * the output back gives the same document.  0, GPUENV_EFORMAT (a NONE value,
 * too deep) or GPUENV_ETOOBIG / -ENOMEM from the buffer. */
GPUENV_API int gpuenv_toml_write(gpuenv_ctx_t *ctx, const gpuenv_toml_table_t *root,
	gpuenv_buf_t *out);

/* The shortest text that reads back as f exactly ("0.1", "1e+300", "inf",
 * "-nan"); always has a '.', an exponent or is inf/nan, so it reads back as a
 * TOML float.  buf needs 32 bytes; returns the length. */
GPUENV_API size_t gpuenv_toml_format_float(double f, char *buf);

/* Append s as a TOML basic string ("...", minimal escapes) to out. */
GPUENV_API int gpuenv_toml_write_string(gpuenv_buf_t *out, gpuenv_str_t s);
/* Append key bare when it can be, else quoted. */
GPUENV_API int gpuenv_toml_write_key(gpuenv_buf_t *out, gpuenv_str_t key);

#ifdef __cplusplus
}
#endif
#endif
