/* gpuenv pep440: PEP 440 versions and specifiers, PEP 503 names.
 *
 * Contract between modules: the functions below keep these signatures; the
 * struct layouts may grow.  Everything variable-sized lives in the caller's
 * arena. */
#ifndef GPUENV_PEP440_H
#define GPUENV_PEP440_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ---------------------------------------------------------- */

enum gpuenv_pre_kind {
	GPUENV_PRE_NONE = 0,
	GPUENV_PRE_A = 1, /* a, alpha */
	GPUENV_PRE_B = 2, /* b, beta */
	GPUENV_PRE_RC = 3, /* rc, c, pre, preview */
};

typedef struct gpuenv_version {
	uint64_t epoch;
	size_t nrelease;	 /* >= 1 */
	const uint64_t *release; /* nrelease numbers, in the arena */
	int pre_kind;		 /* enum gpuenv_pre_kind */
	uint64_t pre;
	bool has_post;
	uint64_t post;
	bool has_dev;
	uint64_t dev;
	/* normalized local label without the '+' ("cu118", "ubuntu.1"),
	 * lower-case, separators turned into '.'; len 0 when absent */
	gpuenv_str_t local;
} gpuenv_version_t;

/* Parse a version (surrounding white space allowed, as packaging allows).
 * Returns 0 or GPUENV_EVERSION with ctx->err set (column of the problem). */
GPUENV_API int gpuenv_version_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_version_t *out);

/* Total order of PEP 440 (epoch, release with trailing zeros ignored, dev <
 * pre < final < post, local labels compared segment-wise). <0, 0, >0. */
GPUENV_API int gpuenv_version_cmp(const gpuenv_version_t *a, const gpuenv_version_t *b);

/* A pre-release or a development release. */
GPUENV_API bool gpuenv_version_is_prerelease(const gpuenv_version_t *v);

/* The normalized form ("1.0rc1.post2.dev3+cu118"), appended to out. */
GPUENV_API int gpuenv_version_format(const gpuenv_version_t *v, gpuenv_buf_t *out);

/* ---- specifiers -------------------------------------------------------- */

enum gpuenv_spec_op {
	GPUENV_OP_EQ,	     /* == (with wildcard: ==1.2.*) */
	GPUENV_OP_NE,	     /* != (with wildcard: !=1.2.*) */
	GPUENV_OP_LT,	     /* < */
	GPUENV_OP_LE,	     /* <= */
	GPUENV_OP_GT,	     /* > */
	GPUENV_OP_GE,	     /* >= */
	GPUENV_OP_COMPAT,    /* ~= */
	GPUENV_OP_ARBITRARY, /* === */
};

typedef struct gpuenv_specifier {
	int op;		  /* enum gpuenv_spec_op */
	bool wildcard;	  /* ==X.* or !=X.* */
	gpuenv_version_t version; /* unused for === */
	gpuenv_str_t text; /* the version text as written (for === and str()) */
} gpuenv_specifier_t;

/* Tri-state pre-release policy. */
enum {
	GPUENV_PRERELEASES_DEFAULT = -1, /* PEP 440's rules */
	GPUENV_PRERELEASES_NO = 0,
	GPUENV_PRERELEASES_YES = 1,
};

typedef struct gpuenv_specset {
	size_t n;
	gpuenv_specifier_t *items; /* in the arena */
	int prereleases;	   /* set-level override, default DEFAULT */
} gpuenv_specset_t;

/* Parse one clause ("~=2.0", "== 1.2.*"). GPUENV_ESPEC with ctx->err set. */
GPUENV_API int gpuenv_specifier_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_specifier_t *out);

/* Parse a comma-separated set (may be empty: matches everything). */
GPUENV_API int gpuenv_specset_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_specset_t *out);

/* Does the candidate match?  text is the candidate as written (needed by
 * ===); v is its parse, or NULL when text is not a valid version (then only
 * === can match).  prereleases: GPUENV_PRERELEASES_* for this call; DEFAULT
 * defers to the specifier's own rule (a clause naming a pre-release admits
 * pre-releases). */
GPUENV_API bool gpuenv_specifier_contains(const gpuenv_specifier_t *s, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases);
GPUENV_API bool gpuenv_specset_contains(const gpuenv_specset_t *set, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases);

/* Whether the clause/set admits pre-releases by default (packaging's
 * .prereleases property when not overridden). */
GPUENV_API bool gpuenv_specifier_prereleases(const gpuenv_specifier_t *s);

/* packaging's filter(): select from texts[0..n) (vs[i] their parses or NULL)
 * those the set admits, in input order; with the default policy,
 * pre-releases are kept only when the set admits them or when nothing else
 * matched.  Writes the chosen indexes to out_idx, returns the count. */
GPUENV_API size_t gpuenv_specset_filter(const gpuenv_specset_t *set, const gpuenv_str_t *texts,
	const gpuenv_version_t *const *vs, size_t n, int prereleases, size_t *out_idx);

/* The normalized text of a clause / set ("~=2.0", ">=1.0,<2") into out.
 * Sets are written with clauses sorted as packaging's str() does. */
GPUENV_API int gpuenv_specifier_format(const gpuenv_specifier_t *s, gpuenv_buf_t *out);
GPUENV_API int gpuenv_specset_format(const gpuenv_specset_t *set, gpuenv_buf_t *out);

/* ---- PEP 503 names ----------------------------------------------------- */

/* Normalized name (lower case, runs of -_. turned into one '-') into out. */
GPUENV_API int gpuenv_name_normalize(gpuenv_str_t name, gpuenv_buf_t *out);
/* A valid distribution name per the core metadata spec. */
GPUENV_API bool gpuenv_name_is_valid(gpuenv_str_t name);
/* Already in normalized form. */
GPUENV_API bool gpuenv_name_is_normalized(gpuenv_str_t name);

#ifdef __cplusplus
}
#endif
#endif
