/* gpuenv metadata: what a .dist-info folder says about a distribution.
 *
 * - METADATA (core metadata 1.0 to 2.5: RFC 822 style headers, multiple-use
 *   fields, folded lines, the description as the message body),
 * - WHEEL (Wheel-Version, Generator, Root-Is-Purelib, Tag, Build),
 * - RECORD (CSV rows path,hash,size),
 * - entry_points.txt (INI-like groups of name = module:attr [extras]).
 *
 * Parse results are slices into the caller's text where possible and
 * otherwise live in the caller's arena: keep the text alive as long as the
 * result.  Inputs are (ptr, len) and need not be NUL-terminated.  Problems
 * that pip tolerates (an invalid Requires-Dist in an old package, an unknown
 * Metadata-Version minor) are logged as warnings through the context with
 * their line number; problems that make the file useless are errors. */
#ifndef GPUENV_METADATA_H
#define GPUENV_METADATA_H

#include "gpuenv/core.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/wheel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps: a METADATA with a huge README is a few MB; nothing real nears these. */
#define GPUENV_METADATA_MAX ((size_t)64 << 20) /* bytes of METADATA / WHEEL */
#define GPUENV_METADATA_FIELDS_MAX 100000      /* header fields */
#define GPUENV_RECORD_MAX ((size_t)256 << 20)  /* bytes of RECORD */
#define GPUENV_RECORD_ROWS_MAX 2000000
#define GPUENV_ENTRY_POINTS_MAX ((size_t)16 << 20)

/* One header as written: its name, its value with folded lines joined
 * (RFC 5322 unfolding: the line breaks go, the indentation stays) and the
 * line it starts on. */
typedef struct gpuenv_md_field {
	gpuenv_str_t name;
	gpuenv_str_t value;
	gpuenv_str_t raw; /* the value as in the file, line breaks included */
	unsigned line;
} gpuenv_md_field_t;

/* A list of slices (multiple-use fields). */
typedef struct gpuenv_md_list {
	size_t n;
	gpuenv_str_t *items;
} gpuenv_md_list_t;

typedef struct gpuenv_md_requirement {
	gpuenv_str_t text; /* the value as written */
	unsigned line;
	bool valid;		   /* false: not PEP 508 (a warning was logged) */
	gpuenv_requirement_t req; /* when valid */
} gpuenv_md_requirement_t;

typedef struct gpuenv_md_url {
	gpuenv_str_t label; /* "Homepage"; len 0 when the value has no comma */
	gpuenv_str_t url;
} gpuenv_md_url_t;

typedef struct gpuenv_metadata {
	gpuenv_str_t metadata_version; /* "2.4"; len 0 when absent (a warning) */
	unsigned mv_major, mv_minor;
	gpuenv_str_t name;	   /* as written */
	gpuenv_str_t version_text; /* as written */
	bool version_valid;	   /* false only with GPUENV_METADATA_LENIENT_VERSION */
	gpuenv_version_t version;
	/* single-use text fields; len 0 when absent */
	gpuenv_str_t summary, description, description_content_type, keywords, home_page,
		download_url, author, author_email, maintainer, maintainer_email, license,
		license_expression;
	/* the description: the message body, or else the Description header
	 * with its continuation indentation ("       |" or 8 spaces) removed */
	bool description_in_body;
	gpuenv_str_t requires_python_text;
	bool requires_python_valid; /* present and a valid specifier set */
	gpuenv_specset_t requires_python;
	size_t nrequires_dist;
	gpuenv_md_requirement_t *requires_dist;
	size_t nproject_urls;
	gpuenv_md_url_t *project_urls;
	gpuenv_md_list_t provides_extra, classifiers, platforms, supported_platforms,
		license_files, dynamic, requires_external, provides_dist, obsoletes_dist,
		import_names, import_namespaces; /* 2.5 (PEP 794) */
	/* every header in file order, known or not */
	size_t nfields;
	gpuenv_md_field_t *fields;
	unsigned nwarnings; /* warnings logged while parsing */
} gpuenv_metadata_t;

enum {
	/* Keep going when Version is not PEP 440 ("2010i"): version_valid is
	 * false instead of failing with GPUENV_EVERSION. */
	GPUENV_METADATA_LENIENT_VERSION = 1u << 0,
};

/* Parse METADATA (or PKG-INFO).  file names the input in messages (NULL:
 * "METADATA").  Errors: GPUENV_ESYNTAX (not header lines), GPUENV_EFORMAT
 * (Name or Version missing or duplicated, a Metadata-Version of an unknown
 * major), GPUENV_EVERSION, GPUENV_ETOOBIG, -ENOMEM; ctx->err has the line. */
GPUENV_API int gpuenv_metadata_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, gpuenv_str_t text, unsigned flags, gpuenv_metadata_t *out);

/* Does an sdist's PKG-INFO hold its dependencies without a build (PEP 643:
 * Metadata-Version 2.2 or later, and Requires-Dist not marked Dynamic)? */
GPUENV_API bool gpuenv_metadata_deps_static(const gpuenv_metadata_t *md);

/* The values of every header called name (case-insensitive), in order;
 * returns how many were found and stores up to max of them. */
GPUENV_API size_t gpuenv_metadata_get_all(const gpuenv_metadata_t *md, const char *name,
	gpuenv_str_t *values, size_t max);

/* The header block as a generic parser (WHEEL and METADATA share it): fields
 * in order and, after the first empty line, the body.  No field checks. */
GPUENV_API int gpuenv_headers_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, gpuenv_str_t text, size_t *nfields, gpuenv_md_field_t **fields,
	gpuenv_str_t *body, unsigned *body_line);

/* ---- WHEEL -------------------------------------------------------------- */

typedef struct gpuenv_wheelfile {
	gpuenv_str_t wheel_version; /* "1.0" */
	unsigned wv_major, wv_minor;
	gpuenv_str_t generator; /* len 0 when absent */
	bool has_root_is_purelib;
	bool root_is_purelib;
	size_t ntags;
	gpuenv_tag_t *tags; /* every Tag line, expanded, in order */
	bool has_build;
	gpuenv_str_t build; /* as written */
	uint64_t build_number;
	gpuenv_str_t build_suffix;
	size_t nfields;
	gpuenv_md_field_t *fields;
	unsigned nwarnings;
} gpuenv_wheelfile_t;

/* Parse a WHEEL file.  Wheel-Version is required; a major version above 1 is
 * GPUENV_EUNSUPPORTED (the spec says to refuse it), a newer minor a warning.
 * Root-Is-Purelib must be true or false. */
GPUENV_API int gpuenv_wheelfile_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, gpuenv_str_t text, gpuenv_wheelfile_t *out);

/* ---- RECORD ------------------------------------------------------------- */

#define GPUENV_DIGEST_MAX 64

/* Kept small on purpose: an installed awscli lists 20,000 files. */
typedef struct gpuenv_record_entry {
	gpuenv_str_t path;	/* unquoted ("" quotes resolved, in the arena then) */
	gpuenv_str_t hash_algo; /* "sha256"; len 0 when the hash is empty */
	const unsigned char *digest; /* digest_len bytes in the arena; NULL: no hash */
	uint64_t size;
	uint32_t line;
	uint8_t digest_len;
	bool has_size;
} gpuenv_record_entry_t;

typedef struct gpuenv_record {
	size_t n;
	gpuenv_record_entry_t *entries;
} gpuenv_record_t;

/* Parse RECORD: CSV as Python's csv module writes it (RFC 4180 quoting, LF or
 * CRLF), three fields a row; hash "ALGO=<urlsafe base64, no padding>" is
 * decoded (sha256 must give 32 bytes, sha384 48, sha512 64); empty hash and
 * size are allowed (RECORD itself, .pyc).  Blank lines are skipped. */
GPUENV_API int gpuenv_record_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, gpuenv_str_t text, gpuenv_record_t *out);

/* The entry for a path (exact match), or NULL. */
GPUENV_API const gpuenv_record_entry_t *gpuenv_record_find(const gpuenv_record_t *rec,
	gpuenv_str_t path);

/* A path from a wheel's RECORD that is safe to install: relative, no NUL or
 * backslash, no drive letter, no '..' component.  0 or GPUENV_EFORMAT. */
GPUENV_API int gpuenv_record_check_path(gpuenv_ctx_t *ctx, gpuenv_str_t path);

/* Checks over a wheel's RECORD: every path safe (above), no path twice, a
 * hash and size on every entry except RECORD itself, its signatures
 * (RECORD.jws, RECORD.p7s) and .pyc files, and only sha256/sha384/sha512
 * hashes.  0 or GPUENV_EFORMAT with the offending line. */
GPUENV_API int gpuenv_record_validate(gpuenv_ctx_t *ctx, const char *file,
	const gpuenv_record_t *rec);

/* One row as csv.writer writes it (quoting when needed), with "\n". */
GPUENV_API int gpuenv_record_format_entry(const gpuenv_record_entry_t *e, gpuenv_buf_t *out);

/* urlsafe base64 without padding (as RECORD and PEP 658 use) into out. */
GPUENV_API int gpuenv_b64url_encode(const unsigned char *p, size_t n, gpuenv_buf_t *out);
/* Decode urlsafe base64 (padding optional); false on bad input or when
 * more than max bytes would come out. */
GPUENV_API bool gpuenv_b64url_decode(gpuenv_str_t s, unsigned char *out, size_t max,
	size_t *outlen);

/* ---- entry_points.txt --------------------------------------------------- */

typedef struct gpuenv_entry_point {
	gpuenv_str_t group; /* "console_scripts" */
	gpuenv_str_t name;  /* as written (case kept) */
	gpuenv_str_t value; /* "module:attr [extra1, extra2]", trimmed */
	bool valid;	    /* the value is an object reference (module[:attr]) */
	gpuenv_str_t module, attr; /* attr len 0 when absent */
	size_t nextras;
	gpuenv_str_t *extras;
	unsigned line;
} gpuenv_entry_point_t;

typedef struct gpuenv_entry_points {
	size_t n;
	gpuenv_entry_point_t *items;
} gpuenv_entry_points_t;

/* Parse entry_points.txt as importlib.metadata reads it: [group] lines,
 * "name = value" lines, '#' and ';' comments.  A value that is not an object
 * reference is kept with valid == false (groups other than console_scripts /
 * gui_scripts may hold anything); a line without '=' or outside a group is a
 * GPUENV_ESYNTAX error. */
GPUENV_API int gpuenv_entry_points_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, gpuenv_str_t text, gpuenv_entry_points_t *out);

/* ---- a whole .dist-info folder ------------------------------------------ */

typedef struct gpuenv_distinfo {
	gpuenv_metadata_t metadata;
	bool has_wheel, has_record, has_entry_points;
	gpuenv_wheelfile_t wheel;
	gpuenv_record_t record;
	gpuenv_entry_points_t entry_points;
} gpuenv_distinfo_t;

/* Read and parse DIR/METADATA (required), and WHEEL, RECORD and
 * entry_points.txt when present; the file contents are copied into the arena.
 * flags: GPUENV_METADATA_*.  Errors name the file. */
GPUENV_API int gpuenv_distinfo_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *dir, unsigned flags, gpuenv_distinfo_t *out);

#ifdef __cplusplus
}
#endif
#endif
