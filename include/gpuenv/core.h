/* gpuenv core: context, errors, string slices, arenas, capped buffers.
 *
 * Everything the library does goes through a gpuenv_ctx_t: memory, output,
 * verbosity and the environment lookup are injected there, so the library has
 * no globals, never prints and never exits (STYLE.md 3 and 5).
 */
#ifndef GPUENV_CORE_H
#define GPUENV_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define GPUENV_API __attribute__((visibility("default")))
#define GPUENV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define GPUENV_NODISCARD __attribute__((warn_unused_result))
#define GPUENV_MUST_CHECK __attribute__((warn_unused_result)) /* a result that says whether out was written */
#else
#define GPUENV_NODISCARD
#define GPUENV_API
#define GPUENV_PRINTF(a, b)
#define GPUENV_MUST_CHECK
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------
 * Return values are 0 on success or a negative code: either -errno (ENOMEM,
 * ENOENT, ...) or one of the gpuenv codes below, which all sit below -4096 so
 * they never collide with errno values.  GPUENV_ERRORS is the one table: it
 * defines each code and its text together (gpuenv_strerror), so a code
 * without a text cannot be written.  X(name, value, text). */
#define GPUENV_ERRORS(X)                                                                  \
	X(GPUENV_ESYNTAX, -4097, "syntax error")		 /* malformed input text */      \
	X(GPUENV_ETOOBIG, -4098, "size limit exceeded")	 /* a size limit was hit */      \
	X(GPUENV_EVERSION, -4099, "invalid version")	 /* not a PEP 440 version */     \
	X(GPUENV_ESPEC, -4100, "invalid version specifier") /* not a PEP 440 specifier */ \
	X(GPUENV_EREQ, -4101, "invalid requirement")	 /* not a PEP 508 requirement */ \
	X(GPUENV_EMARKER, -4102, "invalid marker")	 /* not a PEP 508 marker */      \
	X(GPUENV_EWHEELNAME, -4103, "invalid wheel file name")                            \
	X(GPUENV_EFORMAT, -4104, "corrupt or unrecognised file") /* binary or structured */ \
	X(GPUENV_ENOTFOUND, -4105, "not found")		 /* what was asked for is absent */ \
	X(GPUENV_EUNSUPPORTED, -4106, "not supported")	 /* valid, not supported by gpuenv */ \
	X(GPUENV_EUSAGE, -4107, "usage error")		 /* bad command-line usage */    \
	X(GPUENV_ELOCKED, -4108, "locked by another process")                             \
	X(GPUENV_EDUPLICATE, -4109, "defined more than once") /* a key or entry twice */  \
	X(GPUENV_ETYPE, -4110, "wrong type")		 /* a value has the wrong type */ \
	/* no version assignment satisfies the requirements (gpuenv/resolve.h) */        \
	X(GPUENV_ENOSOLUTION, -4200, "no versions satisfy the requirements")              \
	/* a build backend ran and failed or gave no wheel (gpuenv/build.h) */            \
	X(GPUENV_EBUILD, -4300, "source build failed")

#define GPUENV_ERROR_ENUM_(name, value, text) name = (value),
enum {
	GPUENV_OK = 0,
	GPUENV_E_BASE = -4096,
	GPUENV_ERRORS(GPUENV_ERROR_ENUM_)
	GPUENV_E_LAST = -4111, /* below the first block of codes (ESYNTAX..ETYPE) */
};
#undef GPUENV_ERROR_ENUM_

/* A human-readable text for any return code (errno or gpuenv). Never NULL. */
GPUENV_API const char *gpuenv_strerror(int code);

/* The story of the last error: code, where it happened and how to fix it. */
typedef struct gpuenv_error {
	int code;
	char file[256];	  /* "" when not about a file */
	unsigned line, col; /* 1-based; 0 when unknown */
	char msg[512];
	char hint[256]; /* "" when there is no hint */
} gpuenv_error_t;

/* ---- context ----------------------------------------------------------- */
typedef struct gpuenv_allocator {
	void *(*alloc)(void *ud, size_t size);
	void *(*realloc)(void *ud, void *ptr, size_t size);
	void (*free)(void *ud, void *ptr);
	void *ud;
} gpuenv_allocator_t;

enum gpuenv_level {
	GPUENV_LOG_ERROR = 0,
	GPUENV_LOG_WARN = 1,
	GPUENV_LOG_INFO = 2,
	GPUENV_LOG_DEBUG = 3,
};

typedef void (*gpuenv_log_fn)(void *ud, int level, const char *msg);
typedef const char *(*gpuenv_getenv_fn)(void *ud, const char *name);
/* A trace recorder (gpuenv/trace.h); NULL in a context: tracing is off. */
typedef struct gpuenv_trace gpuenv_trace_t;

typedef struct gpuenv_ctx {
	gpuenv_allocator_t mem;
	gpuenv_log_fn log; /* NULL: messages are dropped */
	void *log_ud;
	int verbosity;	   /* messages above this level are dropped */
	gpuenv_getenv_fn getenv; /* NULL: every variable is unset */
	void *getenv_ud;
	const char *root; /* prefix for absolute paths the probe reads ("" = /) */
	gpuenv_error_t err;
	gpuenv_trace_t *trace; /* spans of --profile (gpuenv/trace.h); NULL = off */
} gpuenv_ctx_t;

/* A context using malloc, the process environment (getenv) and no log
 * handler.  The CLI sets the handlers it wants afterwards. */
GPUENV_API void gpuenv_ctx_init(gpuenv_ctx_t *ctx);

/* An allocator for bulk work (big parses, sorts): blocks of 1 MiB or more
 * are mapped with transparent huge pages, where faulting tens of MB in 4 KiB
 * pages would cost more than the work; smaller ones come from malloc.  Set
 * it in ctx->mem for the length of such work. */
GPUENV_API void gpuenv_allocator_bulk(gpuenv_allocator_t *a);

/* The memory of bytes [from, to) of a block of len bytes (from any
 * allocator) given back to the system, in whole pages (madvise
 * MADV_DONTNEED): they read as zeros afterwards.  For a buffer a parser has
 * read past and that will only be freed: a 40 MB index page is not held
 * beside what its parse makes (issue 22 item 16).  The block's first and
 * last page are kept. */
GPUENV_API void gpuenv_mem_release(void *block, size_t len, size_t from, size_t to);

/* True when a is the allocator gpuenv_ctx_init sets (malloc and free). */
GPUENV_API bool gpuenv_allocator_is_malloc(const gpuenv_allocator_t *a);

/* Environment lookup through the context; NULL when unset. */
GPUENV_API const char *gpuenv_ctx_getenv(gpuenv_ctx_t *ctx, const char *name);

/* Report a message through the context's log handler. */
GPUENV_API void gpuenv_log(gpuenv_ctx_t *ctx, int level, const char *fmt, ...)
	GPUENV_PRINTF(3, 4);

/* Record an error in ctx->err and return code (so callers can
 * `return gpuenv_fail(...)`).  file may be NULL, line/col 0. */
GPUENV_API int gpuenv_fail(gpuenv_ctx_t *ctx, int code, const char *file,
	unsigned line, unsigned col, const char *fmt, ...) GPUENV_PRINTF(6, 7);
/* Attach a fix hint to the current error; returns ctx->err.code. */
GPUENV_API int gpuenv_hint(gpuenv_ctx_t *ctx, const char *fmt, ...)
	GPUENV_PRINTF(2, 3);
/* Fail again with a prefix: the error a call just left in ctx->err becomes
 * "<fmt ...>: <its message>" with code, file, line and col replaced (file
 * NULL, line/col 0 when unknown) and its hint kept.  Returns code. */
GPUENV_API int gpuenv_fail_prefix(gpuenv_ctx_t *ctx, int code, const char *file,
	unsigned line, unsigned col, const char *fmt, ...) GPUENV_PRINTF(6, 7);
GPUENV_API void gpuenv_error_clear(gpuenv_ctx_t *ctx);
/* "file:line:col: message" (parts omitted when unknown) into out. */
GPUENV_API void gpuenv_error_format(const gpuenv_error_t *e, char *out,
	size_t outsz);

/* Memory through the context; these never abort: NULL on failure. */
GPUENV_API void *gpuenv_alloc(gpuenv_ctx_t *ctx, size_t size);
GPUENV_API void *gpuenv_calloc(gpuenv_ctx_t *ctx, size_t n, size_t size);
GPUENV_API void *gpuenv_realloc(gpuenv_ctx_t *ctx, void *p, size_t size);
GPUENV_API void gpuenv_free(gpuenv_ctx_t *ctx, void *p);
GPUENV_API char *gpuenv_strndup(gpuenv_ctx_t *ctx, const char *s, size_t n);

/* A library loaded with dlopen: every name of names[0..n) looked up in so
 * and stored in slots[i] (a table of function pointers, as void * each).
 * false, with the first name that is missing in *missing and slots
 * cleared, when one is not there (libcurl and libcrypto are loaded so). */
GPUENV_API bool gpuenv_dl_syms(void *so, const char *const *names, size_t n, void **slots,
	const char **missing);

/* ---- string slices ----------------------------------------------------- */
typedef struct gpuenv_str {
	const char *ptr;
	size_t len;
} gpuenv_str_t;

#define GPUENV_STR_LIT(s) ((gpuenv_str_t){ (s), sizeof(s) - 1 })
#define GPUENV_STR_NULL ((gpuenv_str_t){ NULL, 0 })
#define GPUENV_STR_FMT "%.*s"
#define GPUENV_STR_ARG(s) (int)(s).len, (s).ptr

GPUENV_API gpuenv_str_t gpuenv_str(const char *cstr);
GPUENV_API gpuenv_str_t gpuenv_str_n(const char *p, size_t n);
GPUENV_API bool gpuenv_str_eq(gpuenv_str_t a, gpuenv_str_t b);
GPUENV_API bool gpuenv_str_eq_cstr(gpuenv_str_t a, const char *b);
GPUENV_API bool gpuenv_str_ieq(gpuenv_str_t a, gpuenv_str_t b);
GPUENV_API int gpuenv_str_cmp(gpuenv_str_t a, gpuenv_str_t b);
GPUENV_API bool gpuenv_str_startswith(gpuenv_str_t s, const char *prefix);
GPUENV_API bool gpuenv_str_endswith(gpuenv_str_t s, const char *suffix);
GPUENV_API gpuenv_str_t gpuenv_str_trim(gpuenv_str_t s);
/* Split at the first occurrence of c: head gets what is before, the return
 * value is what follows (GPUENV_STR_NULL with ptr==NULL when c is absent, and
 * then head is the whole string). */
GPUENV_API gpuenv_str_t gpuenv_str_split(gpuenv_str_t s, char c,
	gpuenv_str_t *head);
/* Parse an unsigned decimal number that fills the whole slice; false on
 * empty, non-digit or overflow. */
GPUENV_API bool gpuenv_str_to_u64(gpuenv_str_t s, uint64_t *out);

/* ---- arenas -------------------------------------------------------------
 * Bump allocation in chunks; everything is freed at once. Allocations are
 * aligned to max_align_t. */
typedef struct gpuenv_arena_chunk gpuenv_arena_chunk_t;
typedef struct gpuenv_arena {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_chunk_t *head;
	size_t used;	  /* bytes handed out in all chunks */
	size_t limit;	  /* 0 = no limit */
	size_t chunk_size;
} gpuenv_arena_t;

GPUENV_API void gpuenv_arena_init(gpuenv_arena_t *a, gpuenv_ctx_t *ctx,
	size_t limit);
GPUENV_API void *gpuenv_arena_alloc(gpuenv_arena_t *a, size_t size);
GPUENV_API void *gpuenv_arena_calloc(gpuenv_arena_t *a, size_t n, size_t size);
GPUENV_API char *gpuenv_arena_strndup(gpuenv_arena_t *a, const char *s,
	size_t n);
GPUENV_API gpuenv_str_t gpuenv_arena_str(gpuenv_arena_t *a, gpuenv_str_t s);
/* printf into the arena: a NUL-terminated slice, or GPUENV_STR_NULL when
 * out of memory. */
GPUENV_API gpuenv_str_t gpuenv_arena_printf(gpuenv_arena_t *a, const char *fmt, ...)
	GPUENV_PRINTF(2, 3);
GPUENV_API gpuenv_str_t gpuenv_arena_vprintf(gpuenv_arena_t *a, const char *fmt, va_list ap);
GPUENV_API void gpuenv_arena_free(gpuenv_arena_t *a);

/* ---- a string-keyed hash map ---------------------------------------------
 * Open addressing, FNV-1a.  Keys are not copied: they must outlive the map
 * (arena copies).  Start from { .ctx = ctx } (zeroed otherwise). */
typedef struct gpuenv_strmap_slot {
	const char *key;
	size_t klen;
	uint64_t hash;
	void *val;
} gpuenv_strmap_slot_t;

typedef struct gpuenv_strmap {
	gpuenv_ctx_t *ctx;
	gpuenv_strmap_slot_t *v;
	size_t n, cap;
} gpuenv_strmap_t;

/* The value of key k (n bytes); *found says whether it is there. */
GPUENV_API void *gpuenv_strmap_get(const gpuenv_strmap_t *m, const char *k, size_t n, bool *found);
/* Set (or replace) the value of k.  0 or -ENOMEM (ctx->err set). */
GPUENV_API int gpuenv_strmap_put(gpuenv_strmap_t *m, const char *k, size_t n, void *val);
GPUENV_API void gpuenv_strmap_free(gpuenv_strmap_t *m);

/* ---- growable arrays with a cap ----------------------------------------
 * Make room for need elements of size bytes in the array *pv (a T **, passed
 * as &v) of *cap elements: nothing while need <= *cap, else a larger array
 * (the capacity doubled, from 8, at most max elements) with the old elements
 * copied and the new ones zeroed.  From arena when it is not NULL (the old
 * array stays there), else through ctx's allocator (the old one freed).
 * 0, GPUENV_ETOOBIG ("more than MAX WHAT") or -ENOMEM ("out of memory WHAT"),
 * with ctx->err set; *pv and *cap are unchanged on failure. */
GPUENV_API int gpuenv_array_grow(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, void *pv,
	size_t *cap, size_t need, size_t size, size_t max, const char *what) GPUENV_NODISCARD;

/* A typed growable vector: GPUENV_VEC(int) v = { 0 }; free v.v with
 * gpuenv_free when it grows through ctx (arena NULL). */
#define GPUENV_VEC(T) \
	struct {      \
		T *v;     \
		size_t n, cap; \
	}
/* A new zeroed element at the end of vec (a GPUENV_VEC pointer), or NULL
 * with ctx->err set (gpuenv_array_grow's errors). */
#define gpuenv_vec_push(ctx, arena, vec, max, what)                                         \
	(gpuenv_array_grow((ctx), (arena), &(vec)->v, &(vec)->cap, (vec)->n + 1,             \
		 sizeof(*(vec)->v), (max), (what))                                            \
			? NULL                                                                \
			: memset(&(vec)->v[(vec)->n++], 0, sizeof(*(vec)->v)))

/* ---- growable buffers with a cap ---------------------------------------
 * data is always NUL-terminated (when non-NULL); len excludes the NUL.
 * Growth past max fails with GPUENV_ETOOBIG.  A buffer is sticky on failure
 * (as curl's dynbuf): after the first failed append every later append is a
 * no-op that returns the same code, so a chain of appends needs no check of
 * its own; the one check is gpuenv_buf_failed where the text is used or
 * written (gpuenv_buf_steal then returns NULL).  reset and free start over. */
typedef struct gpuenv_buf {
	gpuenv_ctx_t *ctx;
	char *data;
	size_t len, cap, max;
	int err; /* 0, or the code of the first failed append */
} gpuenv_buf_t;

#define GPUENV_BUF_DEFAULT_MAX ((size_t)1 << 30)

GPUENV_API void gpuenv_buf_init(gpuenv_buf_t *b, gpuenv_ctx_t *ctx, size_t max);
GPUENV_API int gpuenv_buf_reserve(gpuenv_buf_t *b, size_t extra);
GPUENV_API int gpuenv_buf_append(gpuenv_buf_t *b, const void *p, size_t n);
GPUENV_API int gpuenv_buf_puts(gpuenv_buf_t *b, const char *s);
GPUENV_API int gpuenv_buf_putc(gpuenv_buf_t *b, char c);
GPUENV_API int gpuenv_buf_printf(gpuenv_buf_t *b, const char *fmt, ...)
	GPUENV_PRINTF(2, 3);
GPUENV_API int gpuenv_buf_vprintf(gpuenv_buf_t *b, const char *fmt, va_list ap);
/* 0, or the code of the first append that failed (ctx->err told the story
 * then; this puts it back in ctx->err when something else wrote there since).
 * Check it once before the text is used. */
GPUENV_API int gpuenv_buf_failed(gpuenv_buf_t *b) GPUENV_NODISCARD;
GPUENV_API void gpuenv_buf_reset(gpuenv_buf_t *b);
/* Hand the data over to the caller (free with gpuenv_free) and reset; NULL
 * when the buffer failed (or out of memory for an empty one). */
GPUENV_API char *gpuenv_buf_steal(gpuenv_buf_t *b, size_t *len) GPUENV_NODISCARD;
GPUENV_API void gpuenv_buf_free(gpuenv_buf_t *b);

/* ---- ASCII classifiers -------------------------------------------------
 * The C locale's meaning whatever the process locale is (ctype.h's follow
 * it, and take int with UB for negative chars): the grammars gpuenv reads
 * (PEP 440/508, TOML, METADATA, HTML, Dockerfile) are defined over ASCII. */
static inline bool gpuenv_is_digit(int c) { return c >= '0' && c <= '9'; }
static inline bool gpuenv_is_lower(int c) { return c >= 'a' && c <= 'z'; }
static inline bool gpuenv_is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static inline bool gpuenv_is_alpha(int c) { return gpuenv_is_lower(c) || gpuenv_is_upper(c); }
static inline bool gpuenv_is_alnum(int c) { return gpuenv_is_alpha(c) || gpuenv_is_digit(c); }
static inline bool gpuenv_is_xdigit(int c)
{
	return gpuenv_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
/* space, \t, \n, \r, \f, \v (isspace in the C locale) */
static inline bool gpuenv_is_space(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}
/* space or tab */
static inline bool gpuenv_is_blank(int c) { return c == ' ' || c == '\t'; }
static inline int gpuenv_to_lower(int c) { return gpuenv_is_upper(c) ? c + ('a' - 'A') : c; }
static inline int gpuenv_to_upper(int c) { return gpuenv_is_lower(c) ? c - ('a' - 'A') : c; }

/* ---- text ---------------------------------------------------------------
 * Strings that leave gpuenv as text (the facts JSON, --json output, the
 * terminal) are valid UTF-8 with no NUL.  Bytes that are not are written one
 * documented way (docs/probe-schema.md, "Strings"): a NUL or a byte that is
 * not part of a valid UTF-8 sequence becomes the four characters \xHH
 * (lower-case hex) and a backslash becomes \\, so the original bytes come
 * back exactly with gpuenv_text_unescape. */
enum {
	GPUENV_ESC_CONTROL = 1, /* also escape C0 controls but tab, and DEL
				   (text bound for a terminal) */
};
/* Length of the valid UTF-8 sequence that starts s (1..4); 0 when none. */
GPUENV_API size_t gpuenv_utf8_seq(const char *s, size_t n);
/* The UTF-8 of code point cp (at most U+10FFFF; the caller rules out
 * surrogates) written to out (room for 4 bytes); its length. */
GPUENV_API size_t gpuenv_utf8_put(char *out, uint32_t cp);
/* True when gpuenv_text_escape would copy s unchanged. */
GPUENV_API bool gpuenv_text_valid(const char *s, size_t n, unsigned flags);
/* Append s, escaped, to out.  0 or a negative code (ENOMEM, ETOOBIG). */
GPUENV_API int gpuenv_text_escape(gpuenv_buf_t *out, const char *s, size_t n,
	unsigned flags);
/* Undo gpuenv_text_escape in place; returns the new length (and writes a
 * NUL after it when there is room). */
GPUENV_API size_t gpuenv_text_unescape(char *s, size_t n);

/* The value of one hexadecimal digit (either case); -1 when c is not one. */
GPUENV_API int gpuenv_hex_digit(char c);

/* Record "out of memory" (with " <what>" when what is not NULL) in ctx and
 * return -ENOMEM: the one way every module reports it. */
GPUENV_API int gpuenv_oom(gpuenv_ctx_t *ctx, const char *what);

/* Levenshtein distance of two short strings; SIZE_MAX when either is longer
 * than GPUENV_EDIT_DISTANCE_MAX bytes.  "Did you mean" everywhere uses it. */
#define GPUENV_EDIT_DISTANCE_MAX 80
GPUENV_API size_t gpuenv_edit_distance(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif
