/* lib/index internals: URLs, the file list the page parsers build, the
 * wheel's zip reader, the on-disk cache. */
#ifndef GPUENV_INDEX_INT_H
#define GPUENV_INDEX_INT_H

#include "gpuenv/index.h"

/* Caps of the page parsers (a PyPI page of a big project is a few MB). */
#define IX_PAGE_MAX ((size_t)64 << 20)
#define IX_FILES_MAX 1000000
#define IX_URL_MAX 8192

/* ---- URLs (url.c) ------------------------------------------------------ */

/* ref resolved against base (RFC 3986 section 5.2, with the dot segments of
 * the result removed), the fragment dropped (*frag: it, or len 0), the
 * userinfo of the result removed: what a client may show or return.  The
 * result is NUL-terminated in arena; GPUENV_STR_NULL when out of memory. */
gpuenv_str_t ix_url_resolve(gpuenv_arena_t *arena, gpuenv_str_t base, gpuenv_str_t ref,
	gpuenv_str_t *frag);

/* url without "user:pass@" (NUL-terminated, in arena), and that userinfo
 * (percent-decoded user and password, in arena; len 0 when absent). */
gpuenv_str_t ix_url_strip(gpuenv_arena_t *arena, gpuenv_str_t url, gpuenv_str_t *user,
	gpuenv_str_t *pass);

/* "host[:port]" of an absolute URL (lower-case, without userinfo), into
 * out; false when url has no authority. */
bool ix_url_host(const char *url, char *out, size_t outsz);

/* Percent-decoding (in arena, NUL-terminated). */
gpuenv_str_t ix_pct_decode(gpuenv_arena_t *arena, gpuenv_str_t s);

/* The last path segment of a URL without query or fragment, percent-decoded. */
/* The normalized project name of a wheel or sdist file name, into out;
 * false when fn is neither. */
bool ix_dist_name(const char *fn, char *out, size_t outsz);

/* --profile (gpuenv/trace.h): the spans of the index client go on the
 * lanes of this group (its transfers overlap on one thread). */
#define IX_TRACE_LANES "index"

gpuenv_str_t ix_url_basename(gpuenv_arena_t *arena, gpuenv_str_t url);

/* The local path of a file:// URL (percent-decoded, in arena), or
 * GPUENV_STR_NULL when url is not one. */
gpuenv_str_t ix_file_url_path(gpuenv_arena_t *arena, const char *url);

/* "file://" + the absolute, percent-encoded path, in arena. */
gpuenv_str_t ix_path_to_file_url(gpuenv_arena_t *arena, const char *path);

/* 64 hex digits (either case) lower-cased into arena; NULL when s is not. */
const char *ix_sha256_hex(gpuenv_arena_t *arena, gpuenv_str_t s);

/* ---- the page parsers over a body the caller owns (json.c, html.c) ----
 * As gpuenv_simple_json_parse / _html_parse, and body's memory (writable,
 * the caller's to free afterwards, not to read again) is given back to the
 * system as the parse passes it: a page of tens of MB is not held beside
 * what its parse makes (issue 22 item 16). */
int ix_simple_json_parse_owned(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url, char *body,
	size_t len, gpuenv_index_project_t *out);
int ix_simple_html_parse_owned(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url, char *body,
	size_t len, gpuenv_index_project_t *out);

/* ---- the parsers' file list (pages.c) ---------------------------------- */

/* The attributes of a file a page may get wrong and a client ignores (pip
 * does): counted per page, one warning each (ix_files_finish). */
enum { IX_ATTR_REQUIRES_PYTHON, IX_ATTR_UPLOAD_TIME, IX_NATTR };

typedef struct ix_files {
	gpuenv_ctx_t *ctx;
	gpuenv_index_file_t *v;
	size_t n, cap;
	size_t nignored[IX_NATTR];   /* attributes dropped, by kind */
	char first[IX_NATTR][400];  /* the first of each: "FILE: 'VALUE': why" */
	/* the files' strings (ix_files_str): packed one after the other in
	 * blocks of arena (no alignment: a sha256 takes 65 bytes, not 80);
	 * the values a page repeats (requires-python, yanked reasons) once */
	gpuenv_arena_t *arena;
	char *at;
	size_t left;
	gpuenv_strmap_t interned;
} ix_files_t;

/* A new zeroed file at the end (size -1), or NULL: out of memory or over
 * IX_FILES_MAX (*r says which: -ENOMEM or GPUENV_ETOOBIG, recorded). */
gpuenv_index_file_t *ix_files_push(ix_files_t *f, const char *base_url, int *r);
/* attr (IX_ATTR_*) of file e, value, is not valid (why): dropped, noted
 * for the page's warning. */
void ix_files_ignore(ix_files_t *f, gpuenv_index_file_t *e, int attr, const char *value, const char *why);
/* A NUL-terminated copy of s among the list's strings (f->arena); NULL
 * when out of memory (not recorded). */
const char *ix_files_str(ix_files_t *f, gpuenv_str_t s);
/* The same, one copy per distinct value: for what a page repeats. */
const char *ix_files_intern(ix_files_t *f, gpuenv_str_t s);
/* A file's name: a pointer into its url when the url ends with "/" and
 * the name (as a page of PyPI's writes most), else a copy; NULL when out
 * of memory (not recorded). */
const char *ix_files_name(ix_files_t *f, const char *url, gpuenv_str_t name);
/* s as 64 lower-case hex digits among the list's strings: 0, 1 when s is
 * not 64 hex digits (nothing recorded), -ENOMEM (not recorded). */
int ix_files_sha256(ix_files_t *f, gpuenv_str_t s, const char **out);
/* Move the list into arena as out->files; frees the list.  Every file's
 * requires-python (PEP 440 specifiers) and upload-time (an RFC 3339
 * date-time with an offset) is checked first: a bad one is dropped with a
 * warning naming page_url and the file, never an error about the page.
 * page_url NULL: files of lists finished before (merged, filtered), not
 * checked again. */
int ix_files_finish(ix_files_t *f, gpuenv_arena_t *arena, gpuenv_index_project_t *out, const char *page_url);
void ix_files_free(ix_files_t *f);
/* The project name the page URL ends with ("https://h/simple/torch/" ->
 * "torch"), normalised, in arena ("" when none). */
const char *ix_page_name(gpuenv_arena_t *arena, const char *page_url);

/* ---- zip: METADATA of a wheel from ranges (zip.c) ----------------------
 * A state machine fed with byte ranges of the wheel: the caller fetches
 * [want_off, want_off + want_len) (want_len 0 with want_tail: the last
 * IX_ZIP_TAIL bytes, for when the size is not known yet) and feeds them. */
#define IX_ZIP_TAIL ((uint64_t)64 << 10)

typedef struct ix_zip {
	const char *file;   /* for messages */
	const char *want_name; /* normalised project name, or NULL */
	size_t max;	    /* cap of the METADATA and of the central directory */
	uint64_t total;	    /* the file size; 0: not known yet */
	int step;
	uint64_t want_off, want_len;
	/* what the central directory said about METADATA */
	uint64_t lho, csize, usize;
	uint32_t crc;
	unsigned method;
	uint64_t cd_off, cd_size;
	/* the bytes kept from the last feed (tail or directory) */
	gpuenv_buf_t keep;
	uint64_t keep_off;
} ix_zip_t;

void ix_zip_init(ix_zip_t *z, gpuenv_ctx_t *ctx, const char *file, const char *want_name,
	size_t max, uint64_t total);
/* Feed bytes at offset off (total: the file size, when the answer told it;
 * 0 otherwise).  1: more is wanted (want_off/want_len set); 0: *out holds
 * the METADATA (in arena); <0: an error naming the file (recorded). */
int ix_zip_feed(ix_zip_t *z, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, uint64_t off,
	const char *data, size_t len, uint64_t total, gpuenv_str_t *out);
void ix_zip_free(ix_zip_t *z);

/* The METADATA of a whole wheel on disk (pread): the same machine. */
int ix_zip_read_fd(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, int fd, const char *file,
	const char *want_name, size_t max, gpuenv_str_t *out);
/* ... and of a whole wheel in memory. */
int ix_zip_read_mem(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *data, size_t len,
	const char *file, const char *want_name, size_t max, gpuenv_str_t *out);

#endif
