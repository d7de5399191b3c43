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

/* Numbers are uint64_t: a version with a number above 2^64-1 is rejected
 * (packaging accepts any size; see docs/packaging-vectors.md). */
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
	 * lower-case, separators turned into '.', leading zeros of numeric
	 * segments dropped ("+Ubuntu-007" -> "ubuntu.7"); len 0 when absent */
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

/* Variants of the normalized form (flags may be combined):
 * TRIM_ZEROS drops trailing ".0" release parts, keeping one (packaging's
 * canonicalize_version: "1.0.0+cu118" -> "1+cu118"); PUBLIC leaves out the
 * local label (Version.public); BASE writes epoch and release only
 * (Version.base_version). */
enum {
	GPUENV_VFMT_TRIM_ZEROS = 1,
	GPUENV_VFMT_PUBLIC = 2,
	GPUENV_VFMT_BASE = 4,
};
GPUENV_API int gpuenv_version_format_ex(const gpuenv_version_t *v, unsigned flags,
	gpuenv_buf_t *out);

/* Compare ignoring local labels (1.0+cu118 == 1.0 here). <0, 0, >0. */
GPUENV_API int gpuenv_version_cmp_public(const gpuenv_version_t *a, const gpuenv_version_t *b);

/* A small order-preserving key for sorting many versions: epoch, the first
 * three release numbers and a packed summary of the rest (more release
 * numbers, pre/post/dev numbers up to a size, whether a local label is
 * there).  Keys that differ order their versions as gpuenv_version_cmp does;
 * equal keys need gpuenv_version_cmp.  Keeping the key beside each element
 * saves the pointer chasing of most comparisons. */
typedef struct gpuenv_version_key {
	uint64_t k[5];
} gpuenv_version_key_t;
GPUENV_API void gpuenv_version_key(const gpuenv_version_t *v, gpuenv_version_key_t *key);
static inline int gpuenv_version_key_cmp(const gpuenv_version_key_t *a,
	const gpuenv_version_key_t *b)
{
	for (int i = 0; i < 5; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return 0;
}

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
	/* clause-level pre-release override (packaging's Specifier(...,
	 * prereleases=)); GPUENV_PRERELEASES_*, parse sets DEFAULT */
	int prereleases;
	/* version holds a parse of text: always, except for === with a text
	 * that is not a PEP 440 version ("===foobar") */
	bool has_version;
} gpuenv_specifier_t;

/* Tri-state pre-release policy (packaging's prereleases=None/False/True). */
enum {
	GPUENV_PRERELEASES_DEFAULT = -1, /* PEP 440's rules, as packaging >= 25 */
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

/* Parse a comma-separated set (may be empty: matches everything; empty
 * pieces such as ">=1,,<2" are skipped, as packaging does).  At most
 * GPUENV_SPECSET_MAX clauses (GPUENV_ETOOBIG beyond). */
#define GPUENV_SPECSET_MAX 1024
GPUENV_API int gpuenv_specset_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_specset_t *out);

/* Does the candidate match?  text is the candidate as written (needed by
 * ===); v is its parse, or NULL when text is not a valid version (then only
 * === can match; an empty set matches anything).  prereleases:
 * GPUENV_PRERELEASES_* for this call; DEFAULT defers to the clause's or
 * set's override, then to its own rule (a clause naming a pre-release admits
 * pre-releases), and otherwise follows packaging >= 25: a single candidate
 * is judged alone, as if it were the only version available, so a matching
 * pre-release IS contained.  Only NO (from the call, the clause or the set)
 * rejects pre-releases here; the "pre-releases only when nothing else
 * matches" rule lives in gpuenv_specset_filter(). */
GPUENV_API bool gpuenv_specifier_contains(const gpuenv_specifier_t *s, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases);
GPUENV_API bool gpuenv_specset_contains(const gpuenv_specset_t *set, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases);
/* As gpuenv_specset_contains; installed: the candidate is already installed,
 * so a pre-release is accepted whatever the policy (packaging's
 * contains(installed=True)). */
GPUENV_API bool gpuenv_specset_contains_ex(const gpuenv_specset_t *set, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases, bool installed);

/* Whether the clause/set admits pre-releases by default (packaging's
 * .prereleases property when not overridden). */
GPUENV_API bool gpuenv_specifier_prereleases(const gpuenv_specifier_t *s);
/* The set's tri-state .prereleases: its override, else YES when a clause
 * admits pre-releases, else DEFAULT. */
GPUENV_API int gpuenv_specset_prereleases(const gpuenv_specset_t *set);

/* packaging's filter(): select from texts[0..n) (vs[i] their parses or NULL)
 * those the set admits, in input order; with the default policy,
 * pre-releases are kept only when the set admits them or when no final (or
 * post-) release matched.  Texts that are not versions are kept only when a
 * === clause or an empty set matches them.  Writes the chosen indexes to
 * out_idx (room for n), returns the count. */
GPUENV_API size_t gpuenv_specset_filter(const gpuenv_specset_t *set, const gpuenv_str_t *texts,
	const gpuenv_version_t *const *vs, size_t n, int prereleases, size_t *out_idx);
/* filter() one candidate at a time, for streams too long to keep parsed:
 * feed the candidates in order; each verdict is final except
 * KEEP_IF_NO_FINAL (a pre-release under the default policy), kept only when
 * found_final is still false after the last one.  gpuenv_specset_filter()
 * is this loop. */
enum {
	GPUENV_FILTER_DROP = 0,
	GPUENV_FILTER_KEEP = 1,
	GPUENV_FILTER_KEEP_IF_NO_FINAL = 2,
};
typedef struct gpuenv_filter {
	const gpuenv_specifier_t *items;
	size_t n;
	int policy;	  /* the effective GPUENV_PRERELEASES_* */
	bool found_final; /* a final (or post-) release was kept */
} gpuenv_filter_t;
GPUENV_API void gpuenv_filter_init(gpuenv_filter_t *f, const gpuenv_specset_t *set,
	int prereleases);
GPUENV_API int gpuenv_filter_feed(gpuenv_filter_t *f, gpuenv_str_t text,
	const gpuenv_version_t *v);

/* The same for one clause (packaging's Specifier.filter). */
GPUENV_API size_t gpuenv_specifier_filter(const gpuenv_specifier_t *s, const gpuenv_str_t *texts,
	const gpuenv_version_t *const *vs, size_t n, int prereleases, size_t *out_idx);

/* The operator's text ("~=", "===", ...); "?" for an unknown value. */
GPUENV_API const char *gpuenv_spec_op_str(int op);

/* packaging's equality: same operator and same version once canonicalized
 * (trailing zeros ignored except for ~=; === and wildcards compare the text
 * as written).  Pre-release overrides are ignored. */
GPUENV_API bool gpuenv_specifier_eq(const gpuenv_specifier_t *a, const gpuenv_specifier_t *b);
/* Sets are equal when every clause of each has an equal clause in the other
 * (order and duplicates do not matter).  Returns 1 (equal) or 0; ctx is
 * unused (kept for a future canonical form that allocates). */
GPUENV_API int gpuenv_specset_eq(gpuenv_ctx_t *ctx, const gpuenv_specset_t *a,
	const gpuenv_specset_t *b);

/* The text of a clause / set as packaging's str() writes it: operator and
 * version text without white space ("~=2.0", ">=1.0,<2"); the version text
 * is kept as written (not normalized).  Sets are written with clauses sorted
 * by text and equal clauses (gpuenv_specifier_eq) written once. */
GPUENV_API int gpuenv_specifier_format(const gpuenv_specifier_t *s, gpuenv_buf_t *out);
GPUENV_API int gpuenv_specset_format(const gpuenv_specset_t *set, gpuenv_buf_t *out);

/* ---- PEP 503 names ----------------------------------------------------- */

/* Normalized name (lower case, runs of -_. turned into one '-') into out.
 * No validation (packaging's canonicalize_name); only ASCII letters are
 * lowered, other bytes are copied. */
GPUENV_API int gpuenv_name_normalize(gpuenv_str_t name, gpuenv_buf_t *out);
/* The same into out[0..outsz), NUL-terminated; returns its length, or
 * SIZE_MAX when it does not fit (it is never longer than name: outsz =
 * name.len + 1 always fits).  The one normalization of the tree: no module
 * keeps its own. */
GPUENV_API size_t gpuenv_name_normalize_to(gpuenv_str_t name, char *out, size_t outsz);
/* A valid distribution name per the core metadata spec. */
GPUENV_API bool gpuenv_name_is_valid(gpuenv_str_t name);
/* Already in normalized form: a valid name equal to its normalization
 * (lower-case letters, digits, single '-' between them). */
GPUENV_API bool gpuenv_name_is_normalized(gpuenv_str_t name);

#ifdef __cplusplus
}
#endif
#endif
