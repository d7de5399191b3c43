/* The PubGrub solver's state, shared by solver.c (the search) and report.c
 * (the explanation).  Private to lib/resolve.
 *
 * Versions are candidate indexes: every package's universe is the list of
 * candidates the provider offered and the rules (yanked, pre-releases)
 * allowed, newest first, so a version set is a bit set over that list and
 * every set operation is a few word operations.  A term is a set with a
 * polarity: positive "selected, with a version in S", negative "not
 * selected with a version in S" (absent is fine). */
#ifndef GPUENV_RESOLVE_INT_H
#define GPUENV_RESOLVE_INT_H

#include <stdint.h>

#include "gpuenv/resolve.h"

typedef uint64_t rs_word_t;

/* Incompatibility kinds. */
enum {
	RS_INC_ROOT,	 /* {root: not selected}: the root must be chosen */
	RS_INC_DEP,	 /* {depender: {v}, dependency: not S} */
	RS_INC_DERIVED,	 /* learned from two causes */
	/* the two external halves of "a 1.0 depends on b >= 2 and no versions
	 * of b match >= 2": text only, never in the watch lists */
	RS_INC_DEP_TEXT, /* "a 1.0 depends on b >=2" */
	RS_INC_NOVERS,	 /* "no versions of b match >=2" */
};

/* Why a dependency could not be met (RS_INC_NOVERS). */
enum {
	RS_NV_NOMATCH,	/* versions exist, none matches */
	RS_NV_NOTFOUND, /* no such package */
	RS_NV_NONE,	/* the package exists, nothing usable */
};

typedef struct rs_term {
	uint32_t pkg;
	bool pos;
	rs_word_t *set;
} rs_term_t;

typedef struct rs_inc {
	uint32_t nterms;
	uint8_t kind;
	uint8_t nv_reason; /* RS_NV_*, for NOVERS */
	bool watched;
	/* a learned incompatibility (the root cause of a conflict, watched
	 * since): its LBD when learned, the number of decision levels its
	 * terms were satisfied at (at most 255); 0 for any other.  One with
	 * lbd set and not watched was dropped by the database reduction */
	uint8_t lbd;
	/* NULL for a step of a conflict's resolution that was not learned
	 * (rs_inc_terms derives them again from its causes and pivot) */
	rs_term_t *terms;
	uint32_t c1, c2;   /* causes of DERIVED */
	union {
		uint32_t wt[2]; /* the two watched terms (the same one twice
				   when there is one term), when watched */
		uint32_t pivot; /* a step not kept: the package c1 and c2 were
				   resolved on */
	};
	uint32_t used;	   /* learned: the last conflict whose resolution used it */
	/* DEP, DEP_TEXT, NOVERS: who depends (pkg, version index) on what */
	uint32_t dep_from, dep_ver, dep_to;
	const char *dep_text; /* "b[x] >=2" (name, extras, specifier) */
	const char *spec_text; /* ">=2", "" when any version */
} rs_inc_t;

/* One incompatibility that watches a term of a package (two watched terms
 * per incompatibility, moved as terms get satisfied: SAT solvers' two
 * watched literals), with the term's polarity and first word copied out,
 * so the propagation's scan of a list (16 bytes an entry) touches no other
 * memory while the package's universe fits one word. */
#define RS_WATCH_POS 0x80000000u
typedef struct rs_watch {
	uint32_t inc;
	uint32_t term; /* its index in the incompatibility, | RS_WATCH_POS
			  when the term is positive */
	rs_word_t w0;  /* the term's first word */
	/* the blocker (MiniSat's): another term of the incompatibility, its
	 * package | RS_WATCH_POS when positive, RS_NO_BLOCKER when none (one
	 * term, or a package of more than one word), and its first word.
	 * While it cannot hold, neither can the incompatibility: the
	 * propagation passes the entry without reading the incompatibility */
	uint32_t bpkg;
	rs_word_t bw0;
} rs_watch_t;
#define RS_NO_BLOCKER UINT32_MAX

/* A package's intersection of its assignments, kept per package in one
 * dense array (what the propagation asks most): acc NULL while it has no
 * assignment (every version, or absent). */
typedef struct rs_cur {
	rs_word_t w0;	      /* acc[0] */
	const rs_word_t *acc; /* in the partial solution's word blocks */
	uint32_t nw;	      /* the package's words */
	bool pos;
} rs_cur_t;

typedef struct rs_pkg {
	const char *name;  /* normalised; "a[x]" for an extra */
	uint32_t base;	   /* the real package (itself unless an extra) */
	const char *extra; /* normalised extra, NULL */
	uint32_t ncand, nwords;
	const gpuenv_candidate_t **cand; /* the universe, newest first */
	bool not_found;
	/* the candidates that are not pre-releases (an extra shares its
	 * base's), and whether pre-releases rank with them (--pre, Poetry's
	 * allow-prereleases) instead of after them */
	const rs_word_t *stable;
	bool pre_ranked;
	int32_t prefer;	  /* the preferred candidate (req->prefer), -1 */
	bool early;	  /* decided before the others (req->prefer) */
	const char *note; /* what the resolver's rules left out, or NULL */
	/* the partial solution: this package's assignments, oldest first
	 * (their intersections narrow along it, so the first one after which
	 * a term holds is found by binary search) */
	uint32_t *hist;
	uint32_t nhist, caphist;
	int32_t last;	  /* newest assignment of this package, -1 */
	/* its newest assignment when the propagation last looked at its watch
	 * list (-1: none, or look at the whole list) */
	int32_t scanned;
	int32_t decision; /* the chosen candidate, -1 */
	/* incompatibilities watching a term of this package */
	struct rs_watch *incs;
	uint32_t nincs, capincs;
	uint32_t ndead; /* entries no longer watched (inc UINT32_MAX) */
	/* a universe of one word: the list's index by state, ncand + 2 rows
	 * (each candidate, absent, then the entries still watched) of wbmcap
	 * words (solver.c) */
	rs_word_t *wbm;
	uint32_t wbmcap;
	/* dependencies already added, per candidate: first incompatibility
	 * and count (count + 1; 0 = not yet) */
	uint32_t *dep_first, *dep_n;
	uint32_t stamp; /* scratch mark */
	uint32_t order; /* registration order (ties in decisions) */
} rs_pkg_t;

typedef struct rs_asg {
	uint32_t pkg;
	uint32_t level;
	bool pos, decision;
	bool acc_pos; /* the package's intersection after this one */
	rs_word_t *set, *acc; /* in the word blocks, from mark on */
	uint32_t cause; /* derivations */
	uint32_t mark_block, mark_used; /* the word blocks before this one */
} rs_asg_t;

typedef struct rs_root_spec {
	const char *name; /* normalised base name */
	const gpuenv_specset_t *spec;
	bool allow_pre; /* Poetry's allow-prereleases */
} rs_root_spec_t;

typedef struct rs_solver {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *out; /* the caller's arena (results) */
	gpuenv_arena_t mem;  /* solver state, freed at the end */
	const gpuenv_resolve_req_t *req;
	const gpuenv_provider_t *prov;

	rs_pkg_t *pkgs;
	uint32_t npkgs, cappkgs;
	uint32_t *htab; /* name hash -> pkg id + 1 */
	uint32_t hcap;

	rs_inc_t *incs;
	uint32_t nincs, capincs;

	rs_cur_t *cur; /* per package, beside pkgs (same capacity) */

	rs_asg_t *asg;
	uint32_t nasg, capasg;
	/* the assignments' sets: fixed-size word blocks used as a stack,
	 * truncated on backjump and reused (RS_WBLOCK words each) */
	rs_word_t **wblocks;
	uint32_t nwblocks, wblock, wused;
	size_t wlive, wpeak; /* words held now, at most */
	size_t nassigned;    /* assignments made */
	/* the term list under construction (one at a time: solver.c's tl_*),
	 * its sets in tw; both reused for each list */
	struct rs_tl_ent *tl;
	uint32_t ntl;
	size_t captl;
	rs_word_t *tw;
	size_t ntw, captw;
	uint32_t level;
	/* the learned incompatibilities still watched, oldest first, and the
	 * database reduction's schedule (solver.c's reduce_learned) */
	uint32_t *learnts;
	size_t nlearnts, caplearnts;
	size_t next_reduce, reductions, dropped;
	size_t watch_looks, watch_found, watch_passed; /* gpuenv_resolution_t's */
	uint32_t *lvmark; /* per decision level: the LBD count's stamp */
	size_t caplvmark;
	uint32_t *queue; /* propagation's packages to look at */
	uint32_t *sat;	 /* propagation's watch entries to look at */
	size_t capsat;
	uint32_t capqueue;

	rs_root_spec_t *rootspecs;
	size_t nrootspecs;

	uint32_t stamp;
	size_t decisions, conflicts, asked, learned;
	rs_word_t *tmp, *tmp2; /* scratch sets, room for the largest universe */
	rs_word_t *xblock; /* the resolution step in progress's terms */
	size_t capxblock;
	uint32_t tmpwords;
} rs_solver_t;

#define RS_ROOT 0u

/* Words of a set over n candidates. */
static inline uint32_t rs_words(uint32_t n)
{
	return (n + 63) / 64;
}

/* ---- set and term algebra (over one package's nw words) ----------------
 * Sets keep the bits past the universe clear.  A positive term (p, S):
 * "p is selected with a version in S"; a negative one: "p is not selected
 * with a version in S" (p absent is fine). */
static inline bool rs_set_empty(const rs_word_t *a, uint32_t nw)
{
	for (uint32_t i = 0; i < nw; i++)
		if (a[i])
			return false;
	return true;
}

static inline bool rs_set_subset(const rs_word_t *a, const rs_word_t *b, uint32_t nw)
{
	for (uint32_t i = 0; i < nw; i++)
		if (a[i] & ~b[i])
			return false;
	return true;
}

static inline bool rs_set_disjoint(const rs_word_t *a, const rs_word_t *b, uint32_t nw)
{
	for (uint32_t i = 0; i < nw; i++)
		if (a[i] & b[i])
			return false;
	return true;
}

static inline uint32_t rs_set_count(const rs_word_t *a, uint32_t nw)
{
	uint32_t c = 0;
	for (uint32_t i = 0; i < nw; i++)
		c += (uint32_t)__builtin_popcountll(a[i]);
	return c;
}

static inline int32_t rs_set_first(const rs_word_t *a, uint32_t nw)
{
	for (uint32_t i = 0; i < nw; i++)
		if (a[i])
			return (int32_t)(i * 64 + (uint32_t)__builtin_ctzll(a[i]));
	return -1;
}

static inline bool rs_set_has(const rs_word_t *a, uint32_t i)
{
	return (a[i / 64] >> (i % 64)) & 1;
}

static inline void rs_set_bit(rs_word_t *a, uint32_t i)
{
	a[i / 64] |= (rs_word_t)1 << (i % 64);
}

/* Intersection of two terms of one package into (out_pos, out). */
static inline void rs_term_and(bool ap, const rs_word_t *a, bool bp, const rs_word_t *b, uint32_t nw,
	bool *out_pos, rs_word_t *out)
{
	for (uint32_t i = 0; i < nw; i++) {
		if (ap && bp)
			out[i] = a[i] & b[i];
		else if (ap)
			out[i] = a[i] & ~b[i];
		else if (bp)
			out[i] = b[i] & ~a[i];
		else
			out[i] = a[i] | b[i];
	}
	*out_pos = ap || bp;
}

/* Union of two terms: the complement of the intersection of complements. */
static inline void rs_term_or(bool ap, const rs_word_t *a, bool bp, const rs_word_t *b, uint32_t nw,
	bool *out_pos, rs_word_t *out)
{
	bool np;
	rs_term_and(!ap, a, !bp, b, nw, &np, out);
	*out_pos = !np;
}

/* Term s implies term t (s is a subset of t). */
static inline bool rs_term_subset(bool sp, const rs_word_t *s, bool tp, const rs_word_t *t, uint32_t nw)
{
	if (sp && tp)
		return rs_set_subset(s, t, nw);
	if (sp)
		return rs_set_disjoint(s, t, nw);
	if (tp)
		return false;
	return rs_set_subset(t, s, nw);
}

/* Terms s and t cannot both hold. */
static inline bool rs_term_disjoint(bool sp, const rs_word_t *s, bool tp, const rs_word_t *t, uint32_t nw)
{
	if (sp && tp)
		return rs_set_disjoint(s, t, nw);
	if (sp)
		return rs_set_subset(s, t, nw);
	if (tp)
		return rs_set_subset(t, s, nw);
	return false;
}


/* ---- term lists (terms.c) ---------------------------------------------- */

/* Room for n more of size each in *v (capacity *cap), grown by doubling
 * (the check inline: the propagation asks at every step). */
int rs_grow_slow(rs_solver_t *s, void **v, size_t *cap, size_t used, size_t n, size_t size);
static inline int rs_grow(rs_solver_t *s, void **v, size_t *cap, size_t used, size_t n, size_t size)
{
	return used + n <= *cap ? 0 : rs_grow_slow(s, v, cap, used, n, size);
}
/* Start a term list; add a term for a package it does not name yet; add a
 * term met with the list's term for its package, if any. */
void rs_tl_reset(rs_solver_t *s);
int rs_tl_push(rs_solver_t *s, uint32_t pkg, bool pos, const rs_word_t *set);
int rs_tl_add(rs_solver_t *s, uint32_t pkg, bool pos, const rs_word_t *set);
/* The list as incompatibility id's terms (*never: one can never hold),
 * or into the reused block of the resolution step in progress. */
int rs_tl_store(rs_solver_t *s, uint32_t id, bool *never);
int rs_tl_scratch(rs_solver_t *s, const rs_term_t **terms, uint32_t *nterms);
/* The list of the resolvent of two incompatibilities' terms on pkg. */
int rs_resolvent(rs_solver_t *s, const rs_term_t *t1, uint32_t n1, const rs_term_t *t2,
	uint32_t n2, uint32_t pkg);
/* Incompatibility id's own copy of terms (from the reused block). */
int rs_terms_keep(rs_solver_t *s, uint32_t id, const rs_term_t *terms, uint32_t n);
/* Incompatibility id's terms: derived again for a step of a conflict's
 * resolution that did not keep them (0, or out of memory). */
int rs_inc_terms(rs_solver_t *s, uint32_t id);

/* The explanation of a failure whose root incompatibility is inc, written
 * into s->out; NULL when out of memory (ctx->err set). */
const char *rs_report(rs_solver_t *s, uint32_t inc);

/* "a 1.0.0", "a >=2.0.0,<=2.4.0", "a" (any version) into buf. */
int rs_describe_set(const rs_solver_t *s, uint32_t pkg, const rs_word_t *set, gpuenv_buf_t *buf);

#endif
