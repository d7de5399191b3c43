/* PEP 440 version specifiers: parse, match, filter, format.
 *
 * Matching follows pypa/packaging (>= 26), which the vectors in
 * shared/testdata/packaging pin down:
 *   >=V   v >= V
 *   <=V   public(v) <= V            (V's local versions are "equal")
 *   ==V   public(v) == V, or v == V exactly when V has a local label
 *   !=V   not ==V
 *   >V    public(v) > V, and when V is a final or a pre-release (no .post,
 *         no .dev) not a post-release of V (PEP 440: 1.0.post1 is not >1.0)
 *   <V    v < V when V is a pre-release; else v < V.dev0 (or V.postN.dev0),
 *         so <2.0 admits no 2.0 pre-release
 *   ~=V   v >= V and v < (V's release without its last part, bumped).dev0
 *   ==V.* v in [V.dev0, next-prefix.dev0)   !=V.*: outside it
 *   ===V  the candidate's text equals V, ignoring ASCII case
 * and pre-releases are handled as packaging does (see pep440.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep440.h"
#include "pep440_internal.h"

static const struct {
	const char *s;
	size_t len;
	int op;
} ops[] = {
	/* longest first, as packaging's regex tries them */
	{ "===", 3, GPUENV_OP_ARBITRARY },
	{ "~=", 2, GPUENV_OP_COMPAT },
	{ "==", 2, GPUENV_OP_EQ },
	{ "!=", 2, GPUENV_OP_NE },
	{ "<=", 2, GPUENV_OP_LE },
	{ ">=", 2, GPUENV_OP_GE },
	{ "<", 1, GPUENV_OP_LT },
	{ ">", 1, GPUENV_OP_GT },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

const char *gpuenv_spec_op_str(int op)
{
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].op == op)
			return ops[i].s;
	return "?";
}

/* ---- parsing ------------------------------------------------------------- */

static int spec_fail(gpuenv_ctx_t *ctx, gpuenv_str_t text, size_t at, const char *why)
{
	int shown = text.len > 80 ? 80 : (int)text.len;
	size_t col = at + 1;

	return gpuenv_fail(ctx, GPUENV_ESPEC, NULL, 1, col > 65535 ? 65535u : (unsigned)col,
		"invalid specifier '%.*s%s': %s at column %zu", shown, text.ptr,
		text.len > 80 ? "..." : "", why, col);
}

/* One clause: piece (already stripped) starts at byte off of text. */
static int clause_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	size_t off, gpuenv_str_t piece, gpuenv_specifier_t *out)
{
	gpuenv_str_t rest;
	size_t i, k;
	int r;

	memset(out, 0, sizeof(*out));
	out->prereleases = GPUENV_PRERELEASES_DEFAULT;
	for (i = 0; i < NOPS; i++)
		if (piece.len >= ops[i].len && memcmp(piece.ptr, ops[i].s, ops[i].len) == 0)
			break;
	if (i == NOPS) {
		spec_fail(ctx, text, off, "expected an operator (==, !=, <=, >=, <, >, ~=, ===)");
		return gpuenv_hint(ctx, "write the operator before the version: '>=2.1', not '2.1'");
	}
	out->op = ops[i].op;
	rest = gpuenv_str_n(piece.ptr + ops[i].len, piece.len - ops[i].len);
	while (rest.len && (k = pep440_space_at(rest.ptr, rest.len)) != 0) {
		rest.ptr += k;
		rest.len -= k;
	}
	off += (size_t)(rest.ptr - piece.ptr);

	if (out->op == GPUENV_OP_ARBITRARY) {
		/* anything but white space, ';' and ')' (packaging's [^\s;)]*) */
		for (size_t j = 0; j < rest.len; j++)
			if (rest.ptr[j] == ';' || rest.ptr[j] == ')' ||
				pep440_space_at(rest.ptr + j, rest.len - j))
				return spec_fail(ctx, text, off + j,
					"=== takes one word without spaces, ';' or ')'");
		out->text = gpuenv_arena_str(arena, rest);
		if (!out->text.ptr)
			return gpuenv_oom(ctx, "parsing a version specifier");
		/* a PEP 440 text is parsed too: it decides .prereleases */
		{
			gpuenv_ctx_t quiet = *ctx;
			out->has_version = rest.len &&
				pep440_version_parse(&quiet, arena, text, off, rest, GPUENV_ESPEC,
					&out->version) == 0;
			if (!out->has_version)
				memset(&out->version, 0, sizeof(out->version));
		}
		return 0;
	}

	if (!rest.len)
		return spec_fail(ctx, text, off, "expected a version after the operator");
	out->text = gpuenv_arena_str(arena, rest);
	if (!out->text.ptr)
		return gpuenv_oom(ctx, "parsing a version specifier");
	if ((out->op == GPUENV_OP_EQ || out->op == GPUENV_OP_NE) && rest.len >= 2 &&
		rest.ptr[rest.len - 2] == '.' && rest.ptr[rest.len - 1] == '*') {
		gpuenv_version_t *v = &out->version;
		out->wildcard = true;
		rest.len -= 2;
		if ((r = pep440_version_parse(ctx, arena, text, off, rest, GPUENV_ESPEC, v)))
			return r;
		if (v->pre_kind || v->has_post || v->has_dev || v->local.len) {
			spec_fail(ctx, text, off + rest.len,
				"a wildcard '.*' may only follow release numbers");
			return gpuenv_hint(ctx, "use a prefix of release numbers: ==2.1.*");
		}
	} else {
		if ((r = pep440_version_parse(ctx, arena, text, off, rest, GPUENV_ESPEC,
			     &out->version)))
			return r;
		if (out->version.local.len && out->op != GPUENV_OP_EQ && out->op != GPUENV_OP_NE)
			return spec_fail(ctx, text, off,
				"a local version label (+...) is only allowed with == and !=");
		if (out->op == GPUENV_OP_COMPAT && out->version.nrelease < 2) {
			spec_fail(ctx, text, off, "~= needs at least two release numbers");
			return gpuenv_hint(ctx, "write ~=2.0 (meaning >=2.0,==2.*) rather than ~=2");
		}
	}
	out->has_version = true;
	return 0;
}

int gpuenv_specifier_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	gpuenv_specifier_t *out)
{
	gpuenv_str_t s;

	if (!text.ptr)
		text = GPUENV_STR_LIT("");
	s = pep440_strip(text);
	if (!s.len) {
		memset(out, 0, sizeof(*out));
		out->prereleases = GPUENV_PRERELEASES_DEFAULT;
		return spec_fail(ctx, text, 0, "empty specifier");
	}
	return clause_parse(ctx, arena, text, (size_t)(s.ptr - text.ptr), s, out);
}

int gpuenv_specset_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	gpuenv_specset_t *out)
{
	size_t max = 1, n = 0, pos = 0;
	int r;

	memset(out, 0, sizeof(*out));
	out->prereleases = GPUENV_PRERELEASES_DEFAULT;
	if (!text.ptr)
		text = GPUENV_STR_LIT("");
	for (size_t i = 0; i < text.len; i++)
		max += text.ptr[i] == ',';
	if (max > GPUENV_SPECSET_MAX) {
		size_t seen = 0;
		/* count the clauses that are not empty before refusing */
		for (size_t i = 0, start = 0; i <= text.len; i++)
			if (i == text.len || text.ptr[i] == ',') {
				seen += pep440_strip(gpuenv_str_n(text.ptr + start, i - start)).len != 0;
				start = i + 1;
			}
		if (seen > GPUENV_SPECSET_MAX)
			return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
				"a specifier set with %zu clauses (the limit is %d)", seen,
				GPUENV_SPECSET_MAX);
		max = seen ? seen : 1;
	}
	out->items = gpuenv_arena_calloc(arena, max, sizeof(*out->items));
	if (!out->items)
		return gpuenv_oom(ctx, "parsing a version specifier");
	/* split on ',' and strip each piece; empty pieces are skipped */
	while (pos <= text.len) {
		const char *comma = memchr(text.ptr + pos, ',', text.len - pos);
		size_t end = comma ? (size_t)(comma - text.ptr) : text.len;
		gpuenv_str_t piece = pep440_strip(gpuenv_str_n(text.ptr + pos, end - pos));
		if (piece.len) {
			r = clause_parse(ctx, arena, text, (size_t)(piece.ptr - text.ptr), piece,
				&out->items[n]);
			if (r) {
				out->n = 0;
				return r;
			}
			n++;
		}
		pos = end + 1;
	}
	out->n = n;
	return 0;
}

/* ---- matching ------------------------------------------------------------ */

/* ASCII case-insensitive equality, as === compares (Python's .lower()). */
static bool text_ieq(gpuenv_str_t a, gpuenv_str_t b)
{
	if (a.len != b.len)
		return false;
	for (size_t i = 0; i < a.len; i++) {
		int x = (unsigned char)a.ptr[i], y = (unsigned char)b.ptr[i];
		if (x >= 'A' && x <= 'Z')
			x += 'a' - 'A';
		if (y >= 'A' && y <= 'Z')
			y += 'a' - 'A';
		if (x != y)
			return false;
	}
	return true;
}

/* v against epoch!rel[0..k-1] with rel[k-1] bumped by one, .dev0: the
 * smallest version of the next prefix (the exclusive upper bound of ~= and
 * ==X.*).  <0, 0, >0; no allocation and no overflow at UINT64_MAX. */
static int cmp_bumped_dev0(const gpuenv_version_t *v, uint64_t epoch, const uint64_t *rel,
	size_t k)
{
	if (v->epoch != epoch)
		return v->epoch < epoch ? -1 : 1;
	for (size_t i = 0; i < k; i++) {
		uint64_t a = i < v->nrelease ? v->release[i] : 0;
		if (i + 1 < k) {
			if (a != rel[i])
				return a < rel[i] ? -1 : 1;
		} else {
			if (rel[i] == UINT64_MAX || a < rel[i] + 1)
				return -1;
			if (a > rel[i] + 1)
				return 1;
		}
	}
	for (size_t i = k; i < v->nrelease; i++)
		if (v->release[i])
			return 1;
	/* same release: X.dev0 is the smallest version of it */
	if (!v->pre_kind && !v->has_post && v->has_dev && v->dev == 0 && !v->local.len)
		return 0;
	return 1;
}

/* v against epoch!rel.dev0 (the smallest version of that release): only the
 * epoch and the release decide, a tie means v >= it. */
static int cmp_release_dev0(const gpuenv_version_t *v, const gpuenv_version_t *base)
{
	gpuenv_version_t a = *v, b = *base;

	/* compare epoch + release only: clear the suffixes of the copies */
	a.pre_kind = b.pre_kind = GPUENV_PRE_NONE;
	a.has_post = b.has_post = false;
	a.has_dev = b.has_dev = false;
	return gpuenv_version_cmp_public(&a, &b);
}

static bool wildcard_match(const gpuenv_version_t *v, const gpuenv_version_t *base)
{
	return cmp_release_dev0(v, base) >= 0 &&
		cmp_bumped_dev0(v, base->epoch, base->release, base->nrelease) < 0;
}

static bool same_family_post(const gpuenv_version_t *v, const gpuenv_version_t *V)
{
	gpuenv_version_t a = *v, b = *V;

	/* same epoch, release and pre-release, and v is a post-release */
	if (!v->has_post || v->pre_kind != V->pre_kind || (V->pre_kind && v->pre != V->pre))
		return false;
	a.has_post = b.has_post = false;
	a.has_dev = b.has_dev = false;
	return gpuenv_version_cmp_public(&a, &b) == 0;
}

/* The clause's verdict, before any pre-release policy. */
static bool clause_match(const gpuenv_specifier_t *s, gpuenv_str_t text, const gpuenv_version_t *v)
{
	const gpuenv_version_t *V = &s->version;

	if (s->op == GPUENV_OP_ARBITRARY)
		return text.ptr && text_ieq(text, s->text);
	if (!v)
		return false;
	switch (s->op) {
	case GPUENV_OP_GE:
		return gpuenv_version_cmp(v, V) >= 0;
	case GPUENV_OP_LE:
		return gpuenv_version_cmp_public(v, V) <= 0;
	case GPUENV_OP_EQ:
	case GPUENV_OP_NE: {
		bool eq;
		if (s->wildcard)
			eq = wildcard_match(v, V);
		else if (V->local.len)
			eq = gpuenv_version_cmp(v, V) == 0;
		else
			eq = gpuenv_version_cmp_public(v, V) == 0;
		return s->op == GPUENV_OP_EQ ? eq : !eq;
	}
	case GPUENV_OP_GT:
		if (gpuenv_version_cmp_public(v, V) <= 0)
			return false;
		if (V->has_post || V->has_dev)
			return true;
		return !same_family_post(v, V);
	case GPUENV_OP_LT: {
		gpuenv_version_t bound;
		if (gpuenv_version_is_prerelease(V))
			return gpuenv_version_cmp(v, V) < 0;
		/* <V keeps out V's own pre-releases: compare with V.dev0 */
		bound = *V;
		bound.has_dev = true;
		bound.dev = 0;
		bound.local = GPUENV_STR_NULL;
		return gpuenv_version_cmp(v, &bound) < 0;
	}
	case GPUENV_OP_COMPAT:
		return gpuenv_version_cmp(v, V) >= 0 &&
			cmp_bumped_dev0(v, V->epoch, V->release, V->nrelease - 1) < 0;
	default:
		return false;
	}
}

/* packaging's Specifier.prereleases as a tri-state. */
static int clause_prereleases(const gpuenv_specifier_t *s)
{
	if (s->prereleases != GPUENV_PRERELEASES_DEFAULT)
		return s->prereleases ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_NO;
	if (s->op == GPUENV_OP_NE || (s->op == GPUENV_OP_EQ && s->wildcard))
		return GPUENV_PRERELEASES_NO;
	if (!s->has_version)
		return GPUENV_PRERELEASES_DEFAULT;
	return gpuenv_version_is_prerelease(&s->version) ? GPUENV_PRERELEASES_YES
							 : GPUENV_PRERELEASES_NO;
}

bool gpuenv_specifier_prereleases(const gpuenv_specifier_t *s)
{
	return clause_prereleases(s) == GPUENV_PRERELEASES_YES;
}

int gpuenv_specset_prereleases(const gpuenv_specset_t *set)
{
	if (set->prereleases != GPUENV_PRERELEASES_DEFAULT)
		return set->prereleases ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_NO;
	for (size_t i = 0; i < set->n; i++)
		if (clause_prereleases(&set->items[i]) == GPUENV_PRERELEASES_YES)
			return GPUENV_PRERELEASES_YES;
	return GPUENV_PRERELEASES_DEFAULT;
}

/* The policy one clause applies: the call's, else its own. */
static int clause_policy(const gpuenv_specifier_t *s, int prereleases)
{
	if (prereleases != GPUENV_PRERELEASES_DEFAULT)
		return prereleases ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_NO;
	if (s->prereleases != GPUENV_PRERELEASES_DEFAULT)
		return s->prereleases ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_NO;
	return gpuenv_specifier_prereleases(s) ? GPUENV_PRERELEASES_YES
					       : GPUENV_PRERELEASES_DEFAULT;
}

static int set_policy(const gpuenv_specset_t *set, int prereleases)
{
	if (prereleases != GPUENV_PRERELEASES_DEFAULT)
		return prereleases ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_NO;
	return gpuenv_specset_prereleases(set);
}

bool gpuenv_specifier_contains(const gpuenv_specifier_t *s, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases)
{
	if (!clause_match(s, text, v))
		return false;
	/* a lone candidate is "the only version available": only an explicit
	 * NO keeps a pre-release out */
	return !(clause_policy(s, prereleases) == GPUENV_PRERELEASES_NO && v &&
		gpuenv_version_is_prerelease(v));
}

bool gpuenv_specset_contains_ex(const gpuenv_specset_t *set, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases, bool installed)
{
	if (v && installed && gpuenv_version_is_prerelease(v))
		prereleases = GPUENV_PRERELEASES_YES;
	for (size_t i = 0; i < set->n; i++)
		if (!clause_match(&set->items[i], text, v))
			return false;
	return !(set_policy(set, prereleases) == GPUENV_PRERELEASES_NO && v &&
		gpuenv_version_is_prerelease(v));
}

bool gpuenv_specset_contains(const gpuenv_specset_t *set, gpuenv_str_t text,
	const gpuenv_version_t *v, int prereleases)
{
	return gpuenv_specset_contains_ex(set, text, v, prereleases, false);
}

/* One candidate through the filter: it must satisfy every clause; then the
 * policy: YES keeps it, NO drops pre-releases, DEFAULT keeps pre-releases
 * only if no final (or post-) release is kept at all.  Texts that are not
 * versions are never pre-releases: they stay when a === or an empty set let
 * them in. */
int gpuenv_filter_feed(gpuenv_filter_t *f, gpuenv_str_t text, const gpuenv_version_t *v)
{
	bool pre;

	for (size_t c = 0; c < f->n; c++)
		if (!clause_match(&f->items[c], text, v))
			return GPUENV_FILTER_DROP;
	pre = v && gpuenv_version_is_prerelease(v);
	if (!pre) {
		f->found_final |= v != NULL;
		return GPUENV_FILTER_KEEP;
	}
	if (f->policy == GPUENV_PRERELEASES_YES)
		return GPUENV_FILTER_KEEP;
	if (f->policy == GPUENV_PRERELEASES_NO || f->found_final)
		return GPUENV_FILTER_DROP;
	return GPUENV_FILTER_KEEP_IF_NO_FINAL;
}

void gpuenv_filter_init(gpuenv_filter_t *f, const gpuenv_specset_t *set, int prereleases)
{
	f->items = set->items;
	f->n = set->n;
	f->policy = set_policy(set, prereleases);
	f->found_final = false;
}

static size_t run_filter(gpuenv_filter_t *f, const gpuenv_str_t *texts,
	const gpuenv_version_t *const *vs, size_t n, size_t *out_idx)
{
	size_t m = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (gpuenv_filter_feed(f, texts ? texts[i] : GPUENV_STR_NULL, vs ? vs[i] : NULL))
			out_idx[m++] = i;
	if (!f->found_final || f->policy != GPUENV_PRERELEASES_DEFAULT)
		return m;
	/* a final came after some pre-releases: those go */
	for (size_t j = 0; j < m; j++) {
		const gpuenv_version_t *v = vs[out_idx[j]];
		if (!(v && gpuenv_version_is_prerelease(v)))
			out_idx[k++] = out_idx[j];
	}
	return k;
}

size_t gpuenv_specset_filter(const gpuenv_specset_t *set, const gpuenv_str_t *texts,
	const gpuenv_version_t *const *vs, size_t n, int prereleases, size_t *out_idx)
{
	gpuenv_filter_t f;

	gpuenv_filter_init(&f, set, prereleases);
	return run_filter(&f, texts, vs, n, out_idx);
}

size_t gpuenv_specifier_filter(const gpuenv_specifier_t *s, const gpuenv_str_t *texts,
	const gpuenv_version_t *const *vs, size_t n, int prereleases, size_t *out_idx)
{
	gpuenv_filter_t f = { s, 1, clause_policy(s, prereleases), false };

	return run_filter(&f, texts, vs, n, out_idx);
}

/* ---- equality and text --------------------------------------------------- */

static bool version_eq_canon(const gpuenv_version_t *a, const gpuenv_version_t *b, bool trim)
{
	if (trim) {
		if (gpuenv_version_cmp_public(a, b) != 0)
			return false;
	} else {
		if (a->epoch != b->epoch || a->nrelease != b->nrelease ||
			memcmp(a->release, b->release, a->nrelease * sizeof(*a->release)) != 0)
			return false;
		if (a->pre_kind != b->pre_kind || (a->pre_kind && a->pre != b->pre) ||
			a->has_post != b->has_post || (a->has_post && a->post != b->post) ||
			a->has_dev != b->has_dev || (a->has_dev && a->dev != b->dev))
			return false;
	}
	return gpuenv_str_eq(a->local, b->local);
}

bool gpuenv_specifier_eq(const gpuenv_specifier_t *a, const gpuenv_specifier_t *b)
{
	if (a->op != b->op)
		return false;
	if (a->op == GPUENV_OP_ARBITRARY || a->wildcard || b->wildcard)
		return a->wildcard == b->wildcard && gpuenv_str_eq(a->text, b->text);
	return version_eq_canon(&a->version, &b->version, a->op != GPUENV_OP_COMPAT);
}

int gpuenv_specifier_format(const gpuenv_specifier_t *s, gpuenv_buf_t *out)
{
	size_t start = out->len;
	int r = gpuenv_buf_puts(out, gpuenv_spec_op_str(s->op));

	if (!r && s->text.len)
		r = gpuenv_buf_append(out, s->text.ptr, s->text.len);
	if (r) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return r;
}

/* Clauses in packaging's canonical order: sorted by their text, equal
 * clauses once (the first in that order stays).  Writes the indexes of the
 * kept clauses to idx (n entries available), returns how many or -ENOMEM. */
struct canon {
	const gpuenv_specifier_t *s;
	size_t pos; /* rank in the sorted order */
};

static int cmp_clause_text(const gpuenv_specifier_t *a, const gpuenv_specifier_t *b)
{
	const char *oa = gpuenv_spec_op_str(a->op), *ob = gpuenv_spec_op_str(b->op);
	size_t la = strlen(oa), lb = strlen(ob);
	/* compare op+text as one string without building it */
	size_t na = la + a->text.len, nb = lb + b->text.len, n = na < nb ? na : nb;

	for (size_t i = 0; i < n; i++) {
		unsigned char x = (unsigned char)(i < la ? oa[i] : a->text.ptr[i - la]);
		unsigned char y = (unsigned char)(i < lb ? ob[i] : b->text.ptr[i - lb]);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return (na > nb) - (na < nb);
}

static int cmp_canon_text(const void *x, const void *y)
{
	const struct canon *a = x, *b = y;
	int c = cmp_clause_text(a->s, b->s);

	return c ? c : (a->s > b->s) - (a->s < b->s);
}

static int canonical_order(gpuenv_ctx_t *ctx, const gpuenv_specset_t *set, struct canon **out,
	size_t *nout)
{
	struct canon *c;
	size_t k = 0;

	*out = NULL;
	*nout = 0;
	if (!set->n)
		return 0;
	if (set->n > SIZE_MAX / sizeof(*c) || !(c = gpuenv_alloc(ctx, set->n * sizeof(*c))))
		return gpuenv_oom(ctx, "parsing a version specifier");
	for (size_t i = 0; i < set->n; i++)
		c[i] = (struct canon){ &set->items[i], 0 };
	qsort(c, set->n, sizeof(*c), cmp_canon_text);
	/* drop clauses equal to an earlier one; equal clauses share their
	 * operator, so only clauses of one operator need comparing */
	for (size_t i = 0; i < set->n; i++) {
		bool dup = false;
		for (size_t j = 0; j < k && !dup; j++)
			dup = c[j].s->op == c[i].s->op && gpuenv_specifier_eq(c[j].s, c[i].s);
		if (!dup)
			c[k++] = c[i];
	}
	*out = c;
	*nout = k;
	return 0;
}

/* Every clause of a has an equal clause in b. */
static bool spec_subset(const gpuenv_specset_t *a, const gpuenv_specset_t *b)
{
	for (size_t i = 0; i < a->n; i++) {
		bool found = false;
		for (size_t j = 0; j < b->n && !found; j++)
			found = gpuenv_specifier_eq(&a->items[i], &b->items[j]);
		if (!found)
			return false;
	}
	return true;
}

int gpuenv_specset_eq(gpuenv_ctx_t *ctx, const gpuenv_specset_t *a, const gpuenv_specset_t *b)
{
	(void)ctx;
	/* set equality by mutual inclusion: sorting by text would pair
	 * "==1.0" with "==1.0-1" against "==1.0.0" (packaging: equal) */
	return spec_subset(a, b) && spec_subset(b, a);
}

int gpuenv_specset_format(const gpuenv_specset_t *set, gpuenv_buf_t *out)
{
	struct canon *c;
	size_t n, start = out->len;
	int r = 0;

	if ((r = canonical_order(out->ctx, set, &c, &n)) != 0)
		return r;
	for (size_t i = 0; i < n && !r; i++) {
		if (i)
			r = gpuenv_buf_putc(out, ',');
		if (!r)
			r = gpuenv_specifier_format(c[i].s, out);
	}
	gpuenv_free(out->ctx, c);
	if (r) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return r;
}
