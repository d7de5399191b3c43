/* gpuenv json_pull: a pull parser of JSON text (RFC 8259) over a buffer the
 * caller holds (lib/formats/json_pull.c).  It builds no tree: the caller
 * asks for one token at a time and keeps what it needs, so a 40 MB index
 * page costs its own bytes and what the caller keeps, not a document tree
 * several times its size (issue 22 item 16).
 *
 * Strict: UTF-8 only (no overlong forms, no surrogates, nothing past
 * U+10FFFF), the escapes of RFC 8259 section 7 with surrogate pairs
 * joined, no raw control characters in strings, numbers by the grammar of
 * section 6, one value and white space only around it.  The limits are
 * jansson's (RFC 8259 section 9 lets a parser set them), so that a text one
 * accepts the other accepts: no "\u0000" in a string (it could not be a C
 * string), integers within int64_t, reals that do not overflow a double,
 * at most GPUENV_JP_MAX_DEPTH nested containers (jansson itself takes a
 * raw NUL byte right after a number or a literal, which RFC 8259 does not
 * allow anywhere: refused here).  Duplicate keys are
 * reported as they come; the caller decides (the page reader keeps the
 * last, as jansson does). */
#ifndef GPUENV_JSON_PULL_H
#define GPUENV_JSON_PULL_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_JP_MAX_DEPTH 2048

typedef enum gpuenv_jp_tok {
	GPUENV_JP_END = 0,	/* the value is complete (only white space followed) */
	GPUENV_JP_OBJECT,	/* '{' */
	GPUENV_JP_OBJECT_END,	/* '}' */
	GPUENV_JP_ARRAY,	/* '[' */
	GPUENV_JP_ARRAY_END,	/* ']' */
	GPUENV_JP_KEY,		/* a member's name: str (its value is the next token) */
	GPUENV_JP_STRING,	/* str */
	GPUENV_JP_INTEGER,	/* no fraction, no exponent: num, i */
	GPUENV_JP_REAL,		/* num, d */
	GPUENV_JP_TRUE,
	GPUENV_JP_FALSE,
	GPUENV_JP_NULL,
} gpuenv_jp_tok_t;

typedef struct gpuenv_jp {
	gpuenv_ctx_t *ctx;
	const char *file; /* for messages (NULL: none) */
	const char *what; /* their prefix ("malformed index page"; NULL: none) */
	gpuenv_str_t text;
	size_t pos;   /* the next byte to read */
	size_t tok;   /* offset of the token just returned */
	/* the token just returned: KEY and STRING decoded, valid until the
	 * next call (a slice of text when the string has no escape, else of
	 * the parser's buffer: not NUL-terminated); INTEGER and REAL: num is
	 * the text, i / d the value */
	gpuenv_str_t str, num;
	int64_t i;
	double d;
	unsigned depth; /* containers open */
	/* private */
	void *release;	/* gpuenv_jp_release */
	size_t released, hold;
	size_t mark;	/* line and column of this offset known: */
	unsigned mark_line, mark_col;
	int expect;
	unsigned char stack[GPUENV_JP_MAX_DEPTH / 8 + 1]; /* bit set: an object */
	gpuenv_buf_t buf;
} gpuenv_jp_t;

/* A parser over text (not NUL-terminated; not copied: it must outlive the
 * parser); errors name file and start with what. */
GPUENV_API void gpuenv_jp_init(gpuenv_jp_t *p, gpuenv_ctx_t *ctx, gpuenv_str_t text, const char *file,
	const char *what);
/* The next token (a gpuenv_jp_tok_t, >= 0), or < 0: GPUENV_ESYNTAX
 * ("file:line:col: WHAT: what is wrong"), or -ENOMEM (a string with
 * escapes is decoded into the parser's buffer), recorded in ctx->err.  After
 * an error or GPUENV_JP_END every call returns the same. */
GPUENV_API int gpuenv_jp_next(gpuenv_jp_t *p);
/* The value that begins with token tok (the one just returned) read to its
 * end and dropped: a container with all it holds (every byte still checked),
 * a scalar nothing more.  0 or gpuenv_jp_next's error. */
GPUENV_API int gpuenv_jp_skip(gpuenv_jp_t *p, int tok);
/* The text's memory given back to the system behind the parser as it
 * reads, a MiB at a time (gpuenv_mem_release): text is the same bytes as
 * the parser's, writable, the caller's to free once the parse is over and
 * not to read again.  A 40 MB page then costs little more than what the
 * caller keeps of it.  The bytes from the offset given to gpuenv_jp_hold
 * on are kept (default: none behind the current token). */
GPUENV_API void gpuenv_jp_release(gpuenv_jp_t *p, void *text);
/* Keep the bytes from offset off on (SIZE_MAX: none behind the current
 * token), for gpuenv_jp_where about a value read before. */
GPUENV_API void gpuenv_jp_hold(gpuenv_jp_t *p, size_t off);
/* Line and column (1-based; the column counts characters) of byte offset
 * off of the text; 0 and 0 for an offset already released. */
GPUENV_API void gpuenv_jp_where(const gpuenv_jp_t *p, size_t off, unsigned *line, unsigned *col);
/* Record an error about the text at offset off (file:line:col, the what
 * prefix, the message); returns code. */
GPUENV_API int gpuenv_jp_fail(gpuenv_jp_t *p, int code, size_t off, const char *fmt, ...)
	GPUENV_PRINTF(4, 5);
GPUENV_API void gpuenv_jp_free(gpuenv_jp_t *p);

#ifdef __cplusplus
}
#endif
#endif
