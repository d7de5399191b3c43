/* PubGrub (Natalie Weizenbaum's version solving: unit propagation over
 * incompatibilities, conflict resolution that learns the root cause and
 * backjumps, decisions one package at a time) over bit sets of candidates.
 * docs/resolver.md describes the rules and the explanation format. */
#include "resolve_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Caps: a hostile or pathological input stops with an error instead of
 * running for ever. */
#define RS_MAX_PKGS 200000u
#define RS_MAX_CONFLICTS 200000u
#define RS_MAX_CANDS 100000u
#define RS_NAME_MAX 512
/* words of one block of the partial solution's sets: room for the two sets
 * (the assignment's and the intersection) of the largest universe */
#define RS_WBLOCK 16384u
/* how far ahead the propagation fetches the incompatibilities it will look at */
#define RS_AHEAD 8u
/* The learned incompatibilities' database reduction (glucose's): the first
 * after RS_REDUCE_FIRST conflicts, each next one RS_REDUCE_STEP conflicts
 * later than the one before; those of LBD RS_KEEP_LBD or less stay. */
#define RS_REDUCE_FIRST 2000u
#define RS_REDUCE_STEP 300u
#define RS_KEEP_LBD 2u
_Static_assert(2 * ((RS_MAX_CANDS + 63) / 64) <= RS_WBLOCK, "a block holds an assignment's sets");

enum { REL_SAT, REL_ALMOST, REL_CONTRA, REL_INCONCL };

static int oom(rs_solver_t *s)
{
	return gpuenv_oom(s->ctx, "resolving");
}

/* ---- set and term algebra --------------------------------------------- */

static rs_word_t *set_new(rs_solver_t *s, uint32_t nw)
{
	return gpuenv_arena_calloc(&s->mem, nw ? nw : 1, sizeof(rs_word_t));
}

/* The package's current intersection: NULL set means no assignment yet
 * (every version, or absent). */
static void pkg_acc(const rs_solver_t *s, uint32_t p, bool *pos, const rs_word_t **set)
{
	*pos = s->cur[p].pos;
	*set = s->cur[p].acc;
}

/* Does a package's intersection c imply the term (tpos, tset), whose first
 * word is t0?  One word: two word operations, no other memory. */
static inline bool cur_implies(const rs_cur_t *c, bool tpos, rs_word_t t0, const rs_word_t *tset)
{
	if (!c->acc)
		return false;
	if (c->nw == 1) {
		if (c->pos)
			return tpos ? !(c->w0 & ~t0) : !(c->w0 & t0);
		return !tpos && !(t0 & ~c->w0);
	}
	return rs_term_subset(c->pos, c->acc, tpos, tset, c->nw);
}

/* Does the package's intersection c imply the watched term? */
static inline bool watch_satisfied(const rs_solver_t *s, const rs_watch_t *w, const rs_cur_t *c)
{
	bool pos = w->term & RS_WATCH_POS;
	if (c->nw == 1 || !c->acc)
		return cur_implies(c, pos, w->w0, NULL);
	return cur_implies(c, pos, w->w0, s->incs[w->inc].terms[w->term & ~RS_WATCH_POS].set);
}

/* Can the term of one word (tpos, t0) never hold, given the package's
 * intersection c (of one word)?  rs_term_disjoint on first words. */
static inline bool cur_contradicts(const rs_cur_t *c, bool tpos, rs_word_t t0)
{
	if (!c->acc)
		return false;
	if (c->pos)
		return tpos ? !(c->w0 & t0) : !(c->w0 & ~t0);
	return tpos && !(t0 & ~c->w0);
}

/* Does the partial solution imply term t? */
static inline bool term_satisfied(const rs_solver_t *s, const rs_term_t *t)
{
	const rs_cur_t *c = &s->cur[t->pkg];
	return cur_implies(c, t->pos, c->nw ? t->set[0] : 0, t->set);
}

/* ---- packages ----------------------------------------------------------- */

static uint64_t name_hash(const char *n)
{
	uint64_t h = 1469598103934665603ull;
	for (; *n; n++)
		h = (h ^ (unsigned char)*n) * 1099511628211ull;
	return h;
}

static int32_t pkg_find(const rs_solver_t *s, const char *name)
{
	if (!s->hcap)
		return -1;
	for (uint64_t i = name_hash(name) & (s->hcap - 1);; i = (i + 1) & (s->hcap - 1)) {
		uint32_t v = s->htab[i];
		if (!v)
			return -1;
		if (!strcmp(s->pkgs[v - 1].name, name))
			return (int32_t)(v - 1);
	}
}

static int htab_put(rs_solver_t *s, uint32_t id)
{
	if ((s->npkgs + 1) * 2 > s->hcap) {
		uint32_t ncap = s->hcap ? s->hcap * 2 : 64;
		uint32_t *nt = gpuenv_arena_calloc(&s->mem, ncap, sizeof(uint32_t));
		if (!nt)
			return oom(s);
		for (uint32_t i = 0; i < s->hcap; i++) {
			uint32_t v = s->htab[i];
			if (!v)
				continue;
			uint64_t j = name_hash(s->pkgs[v - 1].name) & (ncap - 1);
			while (nt[j])
				j = (j + 1) & (ncap - 1);
			nt[j] = v;
		}
		s->htab = nt;
		s->hcap = ncap;
	}
	uint64_t j = name_hash(s->pkgs[id].name) & (s->hcap - 1);
	while (s->htab[j])
		j = (j + 1) & (s->hcap - 1);
	s->htab[j] = id + 1;
	return 0;
}

static int pkg_new(rs_solver_t *s, const char *name, uint32_t *out)
{
	if (s->npkgs >= RS_MAX_PKGS)
		return gpuenv_fail(s->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"resolution needs more than %u packages", RS_MAX_PKGS);
	if (s->npkgs == s->cappkgs) {
		uint32_t ncap = s->cappkgs ? s->cappkgs * 2 : 64;
		rs_pkg_t *np = gpuenv_realloc(s->ctx, s->pkgs, ncap * sizeof(*np));
		if (!np)
			return oom(s);
		s->pkgs = np;
		rs_cur_t *nc = gpuenv_realloc(s->ctx, s->cur, ncap * sizeof(*nc));
		if (!nc)
			return oom(s);
		s->cur = nc;
		s->cappkgs = ncap;
	}
	rs_pkg_t *p = &s->pkgs[s->npkgs];
	memset(p, 0, sizeof(*p));
	memset(&s->cur[s->npkgs], 0, sizeof(rs_cur_t));
	p->name = gpuenv_arena_strndup(&s->mem, name, strlen(name));
	if (!p->name)
		return oom(s);
	p->last = -1;
	p->scanned = -1;
	p->decision = -1;
	p->prefer = -1;
	p->base = s->npkgs;
	p->order = s->npkgs;
	*out = s->npkgs++;
	return htab_put(s, *out);
}

static bool is_root_pin(const rs_solver_t *s, const char *name, const gpuenv_candidate_t *c)
{
	for (size_t i = 0; i < s->nrootspecs; i++) {
		const gpuenv_specset_t *sp = s->rootspecs[i].spec;
		bool pin = false;
		if (strcmp(s->rootspecs[i].name, name))
			continue;
		for (size_t k = 0; k < sp->n; k++)
			if ((sp->items[k].op == GPUENV_OP_EQ && !sp->items[k].wildcard) ||
				sp->items[k].op == GPUENV_OP_ARBITRARY)
				pin = true;
		if (pin && gpuenv_specset_contains_ex(sp, gpuenv_str(c->version), &c->v,
				   GPUENV_PRERELEASES_YES, false))
			return true;
	}
	return false;
}

/* Poetry's allow-prereleases on a root requirement naming name. */
static bool root_allows_prereleases(const rs_solver_t *s, const char *name)
{
	for (size_t i = 0; i < s->nrootspecs; i++)
		if (s->rootspecs[i].allow_pre && !strcmp(s->rootspecs[i].name, name))
			return true;
	return false;
}

typedef struct cand_sort {
	const gpuenv_candidate_t *c;
	size_t i;
} cand_sort_t;

static int cand_cmp(const void *a, const void *b)
{
	const cand_sort_t *x = a, *y = b;
	int r = gpuenv_version_cmp(&y->c->v, &x->c->v); /* newest first */
	if (r)
		return r;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The candidate of p the request prefers, or -1 (none, or not a
 * candidate: yanked, left out by the provider, or not published). */
static int32_t prefer_index(rs_solver_t *s, rs_pkg_t *p)
{
	for (size_t i = 0; i < s->req->nprefer; i++) {
		const gpuenv_preference_t *f = &s->req->prefer[i];
		gpuenv_version_t v;
		if (!f->name || strcmp(f->name, p->name))
			continue;
		p->early = f->early;
		if (!f->version)
			return -1;
		if (gpuenv_version_parse(s->ctx, &s->mem, gpuenv_str(f->version), &v) != 0) {
			gpuenv_error_clear(s->ctx); /* a version no candidate has */
			return -1;
		}
		for (uint32_t c = 0; c < p->ncand; c++)
			if (!gpuenv_version_cmp(&p->cand[c]->v, &v) &&
				!strcmp(p->cand[c]->version, f->version))
				return (int32_t)c;
		for (uint32_t c = 0; c < p->ncand; c++)
			if (!gpuenv_version_cmp(&p->cand[c]->v, &v))
				return (int32_t)c;
		return -1;
	}
	return -1;
}

/* The universe of a real package: the provider's candidates the yanked and
 * pre-release rules keep, newest first. */
static int pkg_load(rs_solver_t *s, uint32_t id)
{
	const gpuenv_candidate_t *cs = NULL;
	size_t n = 0, nyanked = 0, npre = 0;
	int r;
	rs_pkg_t *p;
	bool no_pre = s->req->prereleases == GPUENV_PRERELEASES_NO;
	gpuenv_buf_t note;

	s->asked++;
	r = s->prov->versions(s->prov->self, s->ctx, s->pkgs[id].name, &cs, &n);
	p = &s->pkgs[id];
	if (r == GPUENV_ENOTFOUND) {
		gpuenv_error_clear(s->ctx);
		p->not_found = true;
		return 0;
	}
	if (r)
		return r;
	if (n > RS_MAX_CANDS)
		return gpuenv_fail(s->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"%s has %zu candidates (at most %u are considered)", p->name, n,
			RS_MAX_CANDS);
	cand_sort_t *tmp = gpuenv_arena_alloc(&s->mem, (n ? n : 1) * sizeof(*tmp));
	p->cand = gpuenv_arena_alloc(&s->mem, (n ? n : 1) * sizeof(*p->cand));
	if (!tmp || !p->cand)
		return oom(s);
	/* Pre-releases are candidates unless turned off; by default they rank
	 * after every stable version (the decision takes the newest stable
	 * version its package's term allows, a pre-release only when none is
	 * left), so one is used only when a specifier or a conflict rules the
	 * stable versions out: uv's `if-necessary` (docs/resolver.md). */
	p->pre_ranked = s->req->prereleases == GPUENV_PRERELEASES_YES ||
			root_allows_prereleases(s, p->name);
	/* the versions the rules leave out, in the provider's order */
	gpuenv_buf_t yl, pl;
	gpuenv_buf_init(&note, s->ctx, 1 << 16);
	gpuenv_buf_init(&yl, s->ctx, 1 << 16);
	gpuenv_buf_init(&pl, s->ctx, 1 << 16);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const gpuenv_candidate_t *c = &cs[i];
		gpuenv_buf_t *l = NULL;
		size_t at;
		if (c->yanked && !is_root_pin(s, p->name, c))
			l = &yl, at = nyanked++;
		else if (no_pre && gpuenv_version_is_prerelease(&c->v))
			l = &pl, at = npre++;
		if (l) {
			if (at < 4 && gpuenv_buf_printf(l, "%s%s", at ? ", " : "", c->version))
				goto nomem;
			continue;
		}
		tmp[k].c = c;
		tmp[k].i = i;
		k++;
	}
	if (nyanked && gpuenv_buf_printf(&note, "%s %s%s%.0zu%s %s yanked (a yanked version is used "
					  "only when a root requirement pins it with == or ===)",
			       p->name, yl.data, nyanked > 4 ? " and " : "", nyanked > 4 ? nyanked - 4 : 0,
			       nyanked > 4 ? " more" : "", nyanked > 1 ? "are" : "is"))
		goto nomem;
	if (npre && gpuenv_buf_printf(&note, "%s%s %s%s%.0zu%s %s (%s)", note.len ? "; " : "",
			    p->name, pl.data, npre > 4 ? " and " : "", npre > 4 ? npre - 4 : 0,
			    npre > 4 ? " more" : "", npre > 1 ? "are pre-releases" : "is a pre-release",
			    "pre-releases are turned off"))
		goto nomem;
	gpuenv_buf_free(&yl);
	gpuenv_buf_free(&pl);
	if (note.len) {
		p->note = gpuenv_arena_strndup(&s->mem, note.data, note.len);
		if (!p->note)
			goto nomem;
	}
	gpuenv_buf_free(&note);
	qsort(tmp, k, sizeof(*tmp), cand_cmp);
	p->ncand = (uint32_t)k;
	p->nwords = rs_words(p->ncand);
	rs_word_t *stable = set_new(s, p->nwords);
	if (!stable)
		return oom(s);
	for (size_t i = 0; i < k; i++) {
		p->cand[i] = tmp[i].c;
		if (!gpuenv_version_is_prerelease(&tmp[i].c->v))
			rs_set_bit(stable, (uint32_t)i);
	}
	p->stable = stable;
	p->prefer = prefer_index(s, p);
	if (p->nwords > s->tmpwords) {
		s->tmp = set_new(s, p->nwords);
		s->tmp2 = set_new(s, p->nwords);
		if (!s->tmp || !s->tmp2)
			return oom(s);
		s->tmpwords = p->nwords;
	}
	return 0;
nomem:
	gpuenv_buf_free(&note);
	gpuenv_buf_free(&yl);
	gpuenv_buf_free(&pl);
	return oom(s);
}

/* The package for name, or for name[extra]; registered (and asked of the
 * provider) on first use. */
static int pkg_get(rs_solver_t *s, const char *name, const char *extra, uint32_t *out)
{
	char key[2 * RS_NAME_MAX + 4];
	int32_t f;
	int r;
	uint32_t base, id;

	if (strlen(name) >= RS_NAME_MAX || (extra && strlen(extra) >= RS_NAME_MAX))
		return gpuenv_fail(s->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"a package or extra name is longer than %d bytes", RS_NAME_MAX);
	if (extra)
		snprintf(key, sizeof(key), "%s[%s]", name, extra);
	else
		snprintf(key, sizeof(key), "%s", name);
	f = pkg_find(s, key);
	if (f >= 0) {
		*out = (uint32_t)f;
		return 0;
	}
	if (!extra) {
		if ((r = pkg_new(s, name, &id)) || (r = pkg_load(s, id)))
			return r;
		*out = id;
		return 0;
	}
	if ((r = pkg_get(s, name, NULL, &base)) || (r = pkg_new(s, key, &id)))
		return r;
	rs_pkg_t *p = &s->pkgs[id], *b = &s->pkgs[base];
	p->base = base;
	p->extra = gpuenv_arena_strndup(&s->mem, extra, strlen(extra));
	if (!p->extra)
		return oom(s);
	p->cand = b->cand;
	p->stable = b->stable;
	p->pre_ranked = b->pre_ranked;
	p->prefer = b->prefer;
	p->early = b->early;
	p->ncand = b->ncand;
	p->nwords = b->nwords;
	p->not_found = b->not_found;
	*out = id;
	return 0;
}

/* ---- incompatibilities -------------------------------------------------- */

static int inc_new(rs_solver_t *s, uint32_t *out)
{
	if (s->nincs == s->capincs) {
		uint32_t ncap = s->capincs ? s->capincs * 2 : 256;
		rs_inc_t *ni = gpuenv_realloc(s->ctx, s->incs, ncap * sizeof(*ni));
		if (!ni)
			return oom(s);
		s->incs = ni;
		s->capincs = ncap;
	}
	memset(&s->incs[s->nincs], 0, sizeof(rs_inc_t));
	*out = s->nincs++;
	return 0;
}

/* ---- the watch lists' index ----------------------------------------------
 * A package whose universe fits one word (64 candidates or fewer) indexes
 * its watch list by state: one bit set over the entries per candidate, and
 * one for "absent", each entry's bit set in the rows of the states its term
 * allows; a last row has the entries still watched.  The partial solution allows the package a set of states (its
 * intersection's versions, or for a negative one the other versions and
 * absent) and implies a term exactly when every one of those states is
 * allowed by it, so the entries a change satisfies are the AND of a few
 * rows: a word operation per 64 entries and state instead of a look at
 * every entry.  The same entries in the same order as the look at every
 * entry finds (that scan remains for larger universes and for wide
 * intersections). */

/* The candidates of a one-word universe. */
static inline rs_word_t universe(const rs_pkg_t *k)
{
	return k->ncand >= 64 ? ~(rs_word_t)0 : (((rs_word_t)1 << k->ncand) - 1);
}

/* Row st (a candidate, or ncand: absent) of k's index. */
static inline rs_word_t *wrow(const rs_pkg_t *k, uint32_t st)
{
	return k->wbm + (size_t)st * k->wbmcap;
}

/* Set entry e's bits in the rows of the states its term allows. */
static void wbm_mark(rs_pkg_t *k, uint32_t e)
{
	const rs_watch_t *w = &k->incs[e];
	bool pos = w->term & RS_WATCH_POS;
	rs_word_t states = pos ? w->w0 : ~w->w0 & universe(k), bit = (rs_word_t)1 << (e % 64);
	for (;;) {
		uint32_t st;
		if (states) {
			st = (uint32_t)__builtin_ctzll(states);
			states &= states - 1;
		} else if (!pos) {
			st = k->ncand; /* a negative term allows absent */
			pos = true;
		} else
			break;
		wrow(k, st)[e / 64] |= bit;
	}
	wrow(k, k->ncand + 1)[e / 64] |= bit; /* watched */
}

/* Room in k's index for its watch list's capacity. */
static int wbm_grow(rs_solver_t *s, rs_pkg_t *k)
{
	uint32_t need = rs_words(k->capincs), rows = k->ncand + 2;
	if (k->nwords != 1 || need <= k->wbmcap)
		return 0;
	rs_word_t *n = gpuenv_calloc(s->ctx, (size_t)rows * need, sizeof(rs_word_t));
	if (!n)
		return oom(s);
	for (uint32_t st = 0; k->wbm && st < rows; st++)
		memcpy(n + (size_t)st * need, wrow(k, st), k->wbmcap * sizeof(rs_word_t));
	gpuenv_free(s->ctx, k->wbm);
	k->wbm = n;
	k->wbmcap = need;
	return 0;
}

/* Package p's entry e no longer watches its term (its bit in the index's
 * row of watched entries goes; the others stay until the list is
 * compacted). */
static void unwatch(rs_solver_t *s, uint32_t p, uint32_t e)
{
	rs_pkg_t *k = &s->pkgs[p];
	k->incs[e].inc = UINT32_MAX;
	k->ndead++;
	if (k->wbm)
		wrow(k, k->ncand + 1)[e / 64] &= ~((rs_word_t)1 << (e % 64));
}

/* Drop p's entries no longer watched once they are half the list, or
 * any when forced (the index is rebuilt then, so not after every scan). */
static void compact(rs_solver_t *s, uint32_t p, bool force)
{
	rs_pkg_t *k = &s->pkgs[p];
	uint32_t j = 0;
	if (!k->ndead || (!force && k->ndead * 2 < k->nincs))
		return;
	for (uint32_t i = 0; i < k->nincs; i++)
		if (k->incs[i].inc != UINT32_MAX)
			k->incs[j++] = k->incs[i];
	if (k->wbm) {
		for (uint32_t st = 0; st <= k->ncand + 1; st++)
			memset(wrow(k, st), 0, rs_words(k->nincs) * sizeof(rs_word_t));
		for (uint32_t i = 0; i < j; i++)
			wbm_mark(k, i);
	}
	k->nincs = j;
	k->ndead = 0;
}

/* The entries of p's watch list whose term p's intersection c implies and
 * its intersection o did not, newest first, into s->sat; the count.  o is
 * what the last look at the list saw (o->acc NULL: nothing, the first
 * look), c narrows it, and whatever o implied was looked at then: its
 * entries were moved, derived from, or found unable to hold, which they
 * still are (the other watched term contradicted at the same level or
 * before).  So each entry is looked at once per satisfaction, as a SAT
 * solver looks at a watched literal once when it becomes false. */
static uint32_t watch_find(rs_solver_t *s, uint32_t p, const rs_cur_t *c, const rs_cur_t *o)
{
	const rs_pkg_t *k = &s->pkgs[p];
	const rs_watch_t *wl = k->incs;
	const rs_word_t *rows[32], *xrows[65];
	uint32_t nrows = 0, nx = 0, nsat = 0;
	if (!c->acc)
		return 0;
	if (k->wbm) {
		/* the states the intersection allows */
		rs_word_t states = c->pos ? c->w0 : ~c->w0 & universe(k);
		uint32_t n = (uint32_t)__builtin_popcountll(states) + !c->pos;
		if (n && n <= 32) {
			for (rs_word_t st = states; st; st &= st - 1)
				rows[nrows++] = wrow(k, (uint32_t)__builtin_ctzll(st));
			if (!c->pos)
				rows[nrows++] = wrow(k, k->ncand);
			if (o->acc) {
				/* an entry o implied is in the rows of the states
				 * o allowed and c does not, too */
				rs_word_t x = (o->pos ? o->w0 : ~o->w0 & universe(k)) & ~states;
				for (; x; x &= x - 1)
					xrows[nx++] = wrow(k, (uint32_t)__builtin_ctzll(x));
				if (!o->pos && c->pos)
					xrows[nx++] = wrow(k, k->ncand);
				if (!nx)
					return 0; /* the same states: nothing new */
			}
		}
	}
	if (!nrows) {
		for (uint32_t i = k->nincs; i-- > 0;)
			if (wl[i].inc != UINT32_MAX && watch_satisfied(s, &wl[i], c) &&
				!(o->acc && watch_satisfied(s, &wl[i], o)))
				s->sat[nsat++] = i;
		return nsat;
	}
	const rs_word_t *live = wrow(k, k->ncand + 1);
	for (uint32_t col = rs_words(k->nincs); col-- > 0;) {
		rs_word_t m = rows[0][col], x = nx ? xrows[0][col] : 0;
		for (uint32_t j = 1; j < nrows && m; j++)
			m &= rows[j][col];
		for (uint32_t j = 1; j < nx && x && m; j++)
			x &= xrows[j][col];
		m &= ~x & live[col];
		for (; m; m &= ~((rs_word_t)1 << (63 - __builtin_clzll(m))))
			s->sat[nsat++] = col * 64 + 63 - (uint32_t)__builtin_clzll(m);
	}
	return nsat;
}

/* Entry w's blocker: term b of its incompatibility (UINT32_MAX: none). */
static inline void set_blocker(const rs_solver_t *s, rs_watch_t *w, const rs_inc_t *inc, uint32_t b)
{
	const rs_term_t *t = b != UINT32_MAX ? &inc->terms[b] : NULL;
	if (!t || s->pkgs[t->pkg].nwords != 1) {
		w->bpkg = RS_NO_BLOCKER;
		w->bw0 = 0;
		return;
	}
	w->bpkg = t->pkg | (t->pos ? RS_WATCH_POS : 0);
	w->bw0 = t->set[0];
}

/* Package p's list watches term of incompatibility inc, with term
 * blocker (UINT32_MAX: none) as its blocker. */
static int watch(rs_solver_t *s, uint32_t p, uint32_t inc, uint32_t term, uint32_t blocker)
{
	rs_pkg_t *k = &s->pkgs[p];
	int r;
	if (k->nincs == k->capincs) {
		uint32_t ncap = k->capincs ? k->capincs * 2 : 8;
		rs_watch_t *n = gpuenv_realloc(s->ctx, k->incs, (size_t)ncap * sizeof(rs_watch_t));
		if (!n)
			return oom(s);
		k->incs = n;
		k->capincs = ncap;
	}
	if ((r = wbm_grow(s, k)))
		return r;
	const rs_term_t *t = &s->incs[inc].terms[term];
	rs_watch_t *w = &k->incs[k->nincs++];
	w->inc = inc;
	w->term = term | (t->pos ? RS_WATCH_POS : 0);
	w->w0 = k->nwords ? t->set[0] : 0;
	set_blocker(s, w, &s->incs[inc], blocker);
	if (k->wbm)
		wbm_mark(k, k->nincs - 1);
	return 0;
}

/* Watch terms a and b of incompatibility id (the same index when it has
 * one term).  A term it watched before and no longer does keeps its entry
 * until a scan finds it stale and drops it. */
static int inc_watch(rs_solver_t *s, uint32_t id, uint32_t a, uint32_t b)
{
	rs_inc_t *inc = &s->incs[id];
	uint32_t old0 = inc->wt[0], old1 = inc->wt[1];
	bool was = inc->watched;
	int r;
	if (!inc->nterms)
		return 0;
	inc->wt[0] = a;
	inc->wt[1] = b;
	inc->watched = true;
	if ((!was || (a != old0 && a != old1)) &&
		(r = watch(s, inc->terms[a].pkg, id, a, a != b ? b : UINT32_MAX)))
		return r;
	if (a != b && (!was || (b != old0 && b != old1)) && (r = watch(s, inc->terms[b].pkg, id, b, a)))
		return r;
	return 0;
}

/* An incompatibility of at most two terms (the root's, a dependency, a
 * dependency nothing meets): both terms watched. */
static int inc_activate(rs_solver_t *s, uint32_t id)
{
	return inc_watch(s, id, 0, s->incs[id].nterms > 1 ? 1 : 0);
}

/* ---- the partial solution ------------------------------------------------ */

/* n words for an assignment's sets, from the word blocks used as a stack
 * (backtrack gives them back); NULL when out of memory. */
static rs_word_t *words_push(rs_solver_t *s, uint32_t n)
{
	if (!s->nwblocks || s->wused + n > RS_WBLOCK) {
		uint32_t b = s->nwblocks ? s->wblock + 1 : 0;
		if (b == s->nwblocks) {
			size_t cap = s->nwblocks;
			rs_word_t *blk;
			if (rs_grow(s, (void **)&s->wblocks, &cap, s->nwblocks, 1, sizeof(rs_word_t *)))
				return NULL;
			if (!(blk = gpuenv_alloc(s->ctx, RS_WBLOCK * sizeof(rs_word_t))))
				return NULL;
			s->wblocks[s->nwblocks++] = blk;
		}
		s->wblock = b;
		s->wused = 0;
	}
	rs_word_t *w = s->wblocks[s->wblock] + s->wused;
	s->wused += n;
	s->wlive += n;
	if (s->wlive > s->wpeak)
		s->wpeak = s->wlive;
	return w;
}

/* The package's intersection after its newest assignment, into cur. */
static void cur_set(rs_solver_t *s, uint32_t pkg)
{
	const rs_pkg_t *p = &s->pkgs[pkg];
	rs_cur_t *c = &s->cur[pkg];
	if (p->last < 0) {
		memset(c, 0, sizeof(*c));
		return;
	}
	const rs_asg_t *a = &s->asg[p->last];
	c->acc = a->acc;
	c->pos = a->acc_pos;
	c->nw = p->nwords;
	c->w0 = p->nwords ? a->acc[0] : 0;
}

static int assign(rs_solver_t *s, uint32_t pkg, bool pos, const rs_word_t *set, bool decision,
	uint32_t cause)
{
	rs_pkg_t *p = &s->pkgs[pkg];
	const rs_cur_t *c = &s->cur[pkg];
	uint32_t nw = p->nwords, mark_block = s->wblock, mark_used = s->wused;
	size_t cap;
	int r;

	cap = s->capasg;
	if ((r = rs_grow(s, (void **)&s->asg, &cap, s->nasg, 1, sizeof(rs_asg_t))))
		return r;
	s->capasg = (uint32_t)cap;
	cap = p->caphist;
	if ((r = rs_grow(s, (void **)&p->hist, &cap, p->nhist, 1, sizeof(uint32_t))))
		return r;
	p->caphist = (uint32_t)cap;
	rs_word_t *w = words_push(s, 2 * nw);
	if (!w)
		return oom(s);
	rs_asg_t *a = &s->asg[s->nasg];
	a->pkg = pkg;
	a->pos = pos;
	a->decision = decision;
	a->cause = cause;
	a->level = s->level;
	a->mark_block = mark_block;
	a->mark_used = mark_used;
	a->set = w;
	a->acc = w + nw;
	if (nw)
		memcpy(a->set, set, nw * sizeof(rs_word_t));
	if (c->acc)
		rs_term_and(c->pos, c->acc, pos, set, nw, &a->acc_pos, a->acc);
	else {
		if (nw)
			memcpy(a->acc, set, nw * sizeof(rs_word_t));
		a->acc_pos = pos;
	}
	p->hist[p->nhist++] = s->nasg;
	p->last = (int32_t)s->nasg;
	s->nasg++;
	s->nassigned++;
	cur_set(s, pkg);
	return 0;
}

/* Undo the assignments above level; their sets' words are reused. */
static void backtrack(rs_solver_t *s, uint32_t level)
{
	while (s->nasg && s->asg[s->nasg - 1].level > level) {
		const rs_asg_t *a = &s->asg[--s->nasg];
		rs_pkg_t *p = &s->pkgs[a->pkg];
		p->nhist--;
		p->last = p->nhist ? (int32_t)p->hist[p->nhist - 1] : -1;
		if (p->scanned > p->last)
			p->scanned = p->last; /* what it had then was looked at */
		if (a->decision)
			p->decision = -1;
		cur_set(s, a->pkg);
		s->wblock = a->mark_block;
		s->wused = a->mark_used;
		s->wlive -= 2 * (size_t)p->nwords;
	}
	s->level = level;
}

/* How incompatibility id stands against the partial solution; *which: the
 * one inconclusive term when REL_ALMOST. */
static int relation(const rs_solver_t *s, uint32_t id, uint32_t *which)
{
	const rs_inc_t *inc = &s->incs[id];
	int res = REL_SAT;

	for (uint32_t i = 0; i < inc->nterms; i++) {
		const rs_term_t *t = &inc->terms[i];
		uint32_t nw = s->pkgs[t->pkg].nwords;
		bool ap;
		const rs_word_t *acc;
		pkg_acc(s, t->pkg, &ap, &acc);
		if (!acc) {
			/* nothing known: a positive term is open; a negative one
			 * (never empty here) too */
			if (res != REL_SAT)
				return REL_INCONCL;
			res = REL_ALMOST;
			*which = i;
			continue;
		}
		if (rs_term_subset(ap, acc, t->pos, t->set, nw))
			continue;
		if (rs_term_disjoint(ap, acc, t->pos, t->set, nw))
			return REL_CONTRA;
		if (res != REL_SAT)
			return REL_INCONCL;
		res = REL_ALMOST;
		*which = i;
	}
	return res;
}

/* ---- conflict resolution -------------------------------------------------- */

/* The earliest assignment of pkg (before assignment before, when that is
 * not -1) after which the package's intersection (met with extra, when
 * given) implies term t; -1 when extra alone does (or, without extra,
 * never: cannot happen for a satisfied term).  The intersections narrow
 * along the package's assignments, so once one implies t every later one
 * does: a binary search. */
static int32_t first_satisfying(rs_solver_t *s, uint32_t pkg, const rs_term_t *t, int32_t before,
	bool xpos, const rs_word_t *extra)
{
	const rs_pkg_t *p = &s->pkgs[pkg];
	uint32_t nw = p->nwords, lo = 0, hi = p->nhist;
	int32_t found = -1;

	if (extra && rs_term_subset(xpos, extra, t->pos, t->set, nw))
		return -1;
	if (before >= 0) {
		/* only the assignments before it */
		uint32_t b = p->nhist;
		while (lo < b) {
			uint32_t m = lo + (b - lo) / 2;
			if (p->hist[m] < (uint32_t)before)
				lo = m + 1;
			else
				b = m;
		}
		hi = lo;
		lo = 0;
	}
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		const rs_asg_t *a = &s->asg[p->hist[m]];
		bool ok;
		if (extra) {
			bool ap;
			rs_term_and(a->acc_pos, a->acc, xpos, extra, nw, &ap, s->tmp);
			ok = rs_term_subset(ap, s->tmp, t->pos, t->set, nw);
		} else
			ok = rs_term_subset(a->acc_pos, a->acc, t->pos, t->set, nw);
		if (ok) {
			found = (int32_t)p->hist[m];
			hi = m;
		} else
			lo = m + 1;
	}
	return found;
}

static bool is_failure(const rs_term_t *terms, uint32_t nterms)
{
	return nterms == 0 || (nterms == 1 && terms[0].pkg == RS_ROOT && terms[0].pos);
}

/* Incompatibility id, new, becomes a learned one: its LBD (glucose's
 * "literal block distance": the decision levels its terms were satisfied
 * at, counted while they still are) and its place in the database. */
static int learn(rs_solver_t *s, uint32_t id)
{
	rs_inc_t *inc = &s->incs[id];
	uint32_t n = 0, stamp = (uint32_t)s->conflicts;
	int r;

	if (s->level + 1 > s->caplvmark) {
		size_t ncap = s->caplvmark, old = s->caplvmark;
		if ((r = rs_grow(s, (void **)&s->lvmark, &ncap, 0, s->level + 1, sizeof(uint32_t))))
			return r;
		memset(s->lvmark + old, 0, (ncap - old) * sizeof(uint32_t));
		s->caplvmark = ncap;
	}
	if ((r = rs_grow(s, (void **)&s->learnts, &s->caplearnts, s->nlearnts, 1, sizeof(uint32_t))))
		return r;
	for (uint32_t i = 0; i < inc->nterms; i++) {
		int32_t a = first_satisfying(s, inc->terms[i].pkg, &inc->terms[i], -1, false, NULL);
		uint32_t lv = a >= 0 ? s->asg[a].level : 0;
		if (s->lvmark[lv] != stamp) {
			s->lvmark[lv] = stamp;
			n++;
		}
	}
	inc->lbd = (uint8_t)(n < 1 ? 1 : n > 255 ? 255 : n);
	inc->used = stamp;
	s->learnts[s->nlearnts++] = id;
	s->learned++;
	return 0;
}

/* The paper's conflict resolution: learn the root cause of satisfied
 * incompatibility id and backjump.  *learned: the incompatibility to
 * derive from (or the failure, with GPUENV_ENOSOLUTION). */
static int resolve_conflict(rs_solver_t *s, uint32_t id, uint32_t *learned)
{
	uint32_t start = s->nincs, nterms = s->incs[id].nterms;
	const rs_term_t *terms = s->incs[id].terms;
	int r;

	s->conflicts++;
	if (s->conflicts > RS_MAX_CONFLICTS)
		return gpuenv_fail(s->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"resolution gave up after %u conflicts", RS_MAX_CONFLICTS);
	if (s->incs[id].lbd)
		s->incs[id].used = (uint32_t)s->conflicts;
	while (!is_failure(terms, nterms)) {
		int32_t satisfier = -1, prev = -1, second = -1;
		uint32_t ti = 0;

		/* the satisfier, and the latest satisfier of the other terms */
		for (uint32_t i = 0; i < nterms; i++) {
			int32_t a = first_satisfying(s, terms[i].pkg, &terms[i], -1, false, NULL);
			if (a > satisfier) {
				second = satisfier;
				satisfier = a;
				ti = i;
			} else if (a > second)
				second = a;
		}
		if (satisfier < 0)
			return gpuenv_fail(s->ctx, -EINVAL, NULL, 0, 0,
				"resolver: conflict without a satisfier (a bug)");
		prev = first_satisfying(s, terms[ti].pkg, &terms[ti], satisfier,
			s->asg[satisfier].pos, s->asg[satisfier].set);
		if (second > prev)
			prev = second;
		const rs_asg_t *sa = &s->asg[satisfier];
		uint32_t prev_level = prev >= 0 ? s->asg[prev].level : 1;
		if (prev_level < 1)
			prev_level = 1;
		/* what level 0 holds follows from the root alone: resolve on
		 * until the failure */
		if (sa->level == 0)
			prev_level = 0;
		if (sa->decision || prev_level != sa->level) {
			if (id >= start && ((r = rs_terms_keep(s, id, terms, nterms)) || (r = learn(s, id))))
				return r;
			backtrack(s, prev_level);
			*learned = id;
			return 0;
		}
		/* prior cause: this incompatibility resolved with the
		 * satisfier's cause on the satisfier's package.  The step is
		 * not kept: only its causes and package, what the explanation
		 * needs to derive it again (rs_inc_terms) */
		uint32_t cause = sa->cause, spkg = sa->pkg, nid = 0;
		const rs_inc_t *cinc = &s->incs[cause];
		if (cinc->lbd)
			s->incs[cause].used = (uint32_t)s->conflicts;
		if ((r = rs_resolvent(s, terms, nterms, cinc->terms, cinc->nterms, spkg)) ||
			(r = rs_tl_scratch(s, &terms, &nterms)) || (r = inc_new(s, &nid)))
			return r;
		s->incs[nid].kind = RS_INC_DERIVED;
		s->incs[nid].c1 = id;
		s->incs[nid].c2 = cause;
		s->incs[nid].pivot = spkg;
		s->incs[nid].nterms = nterms;
		id = nid;
	}
	if (id >= start && (r = rs_terms_keep(s, id, terms, nterms)))
		return r;
	*learned = id;
	return GPUENV_ENOSOLUTION;
}

/* ---- unit propagation ------------------------------------------------------ */

static int derive(rs_solver_t *s, uint32_t id, uint32_t which)
{
	const rs_term_t *t = &s->incs[id].terms[which];
	return assign(s, t->pkg, !t->pos, t->set, false, id);
}

/* A learned incompatibility, unit after the backjump (every term but
 * which satisfied): watched on which and on the term satisfied last, the
 * first to come undone when the search backtracks (what keeps the two
 * watched terms sound). */
static int watch_learned(rs_solver_t *s, uint32_t id, uint32_t which)
{
	const rs_inc_t *inc = &s->incs[id];
	int32_t latest = -2;
	uint32_t other = which;
	for (uint32_t i = 0; i < inc->nterms; i++) {
		if (i == which)
			continue;
		int32_t a = first_satisfying(s, inc->terms[i].pkg, &inc->terms[i], -1, false, NULL);
		if (a > latest) {
			latest = a;
			other = i;
		}
	}
	return inc_watch(s, id, which, other);
}

/* A conflict on satisfied incompatibility id: learn, backjump, derive what
 * the learned incompatibility implies.  *pkg: the package derived. */
static int on_conflict(rs_solver_t *s, uint32_t id, uint32_t *failure, uint32_t *pkg)
{
	uint32_t learned = 0, which = 0;
	int r = resolve_conflict(s, id, &learned);
	if (r == GPUENV_ENOSOLUTION)
		*failure = learned;
	if (r)
		return r;
	if (relation(s, learned, &which) != REL_ALMOST)
		return gpuenv_fail(s->ctx, -EINVAL, NULL, 0, 0,
			"resolver: learned clause is not unit (a bug)");
	/* a new one, or one that was there (its watches may be on terms
	 * satisfied before the one the backjump undid) */
	if ((r = watch_learned(s, learned, which)))
		return r;
	*pkg = s->incs[learned].terms[which].pkg;
	return derive(s, learned, which);
}

/* Queue package p for the propagation (once). */
static int enqueue(rs_solver_t *s, uint32_t *n, uint32_t p)
{
	if (s->pkgs[p].stamp == s->stamp)
		return 0;
	if (*n == s->capqueue) {
		uint32_t nc = s->capqueue ? s->capqueue * 2 : 64;
		uint32_t *nq = gpuenv_realloc(s->ctx, s->queue, nc * sizeof(uint32_t));
		if (!nq)
			return oom(s);
		s->queue = nq;
		s->capqueue = nc;
	}
	s->pkgs[p].stamp = s->stamp;
	s->queue[(*n)++] = p;
	return 0;
}

/* Unit propagation from package start (and first from incompatibility
 * first, when not UINT32_MAX), with two watched terms per
 * incompatibility: a package's change looks only at the incompatibilities
 * watching one of its terms that the change satisfied (not those it
 * satisfied before: watch_find), passes those whose blocker or other
 * watched term can never hold, and moves the watch to another term not
 * satisfied when there is one; with none, the other watched term decides
 * (satisfied: a conflict; undecided: its negation is derived). */
static int propagate(rs_solver_t *s, uint32_t start, uint32_t first, uint32_t *failure)
{
	uint32_t n = 0, derived = 0;
	int r = 0;

	s->stamp++;
	if (first != UINT32_MAX) {
		uint32_t which = 0;
		int rel = relation(s, first, &which);
		if (rel == REL_SAT) {
			if ((r = on_conflict(s, first, failure, &derived)))
				return r;
			s->stamp++;
			return propagate(s, derived, UINT32_MAX, failure);
		}
		if (rel == REL_ALMOST) {
			if ((r = derive(s, first, which)) ||
				(r = enqueue(s, &n, s->incs[first].terms[which].pkg)))
				goto out;
		}
	}
	if ((r = enqueue(s, &n, start)))
		goto out;
	while (n) {
		uint32_t p = s->queue[--n];
		s->pkgs[p].stamp = 0;
		/* p's intersection (the scan derives only other packages), and
		 * the one the last look at p's list saw (oc): only the entries
		 * the change since then made hold are looked at */
		const rs_cur_t pc = s->cur[p];
		rs_cur_t oc = { 0 };
		rs_pkg_t *pk = &s->pkgs[p];
		if (pk->scanned >= 0) {
			const rs_asg_t *a = &s->asg[pk->scanned];
			oc.acc = a->acc;
			oc.pos = a->acc_pos;
			oc.nw = pk->nwords;
			oc.w0 = pk->nwords ? a->acc[0] : 0;
		}
		pk->scanned = pk->last;
		const int32_t pc_last = pk->last;
		if ((r = rs_grow(s, (void **)&s->sat, &s->capsat, 0, s->pkgs[p].nincs, sizeof(uint32_t))))
			goto out;
		/* the entries whose term p's change satisfied, newest first,
		 * found first so that their incompatibilities are fetched ahead
		 * of their turn (one cache miss hidden behind another's work);
		 * p's list does not move meanwhile (only other packages are
		 * derived and watched) */
		uint32_t nsat = watch_find(s, p, &pc, &oc), nkeep = 0;
		s->watch_looks++;
		s->watch_found += nsat;
		rs_watch_t *wl = s->pkgs[p].incs;
		/* passed at once: those whose blocker cannot hold (it cannot
		 * start to while this look lasts: nothing is undone) */
		for (uint32_t j = 0; j < nsat; j++) {
			const rs_watch_t *w = &wl[s->sat[j]];
			if (j + 2 * RS_AHEAD < nsat)
				__builtin_prefetch(&wl[s->sat[j + 2 * RS_AHEAD]]);
			if (w->bpkg == RS_NO_BLOCKER ||
				!cur_contradicts(&s->cur[w->bpkg & ~RS_WATCH_POS], w->bpkg & RS_WATCH_POS,
					w->bw0))
				s->sat[nkeep++] = s->sat[j];
		}
		s->watch_passed += nsat - nkeep;
		nsat = nkeep;
		for (uint32_t j = 0; j < RS_AHEAD && j < nsat; j++)
			__builtin_prefetch(&s->incs[wl[s->sat[j]].inc]);
		for (uint32_t j = 0; j < nsat; j++) {
			rs_watch_t *w = &wl[s->sat[j]];
			if (j + RS_AHEAD < nsat)
				__builtin_prefetch(&s->incs[wl[s->sat[j + RS_AHEAD]].inc]);
			if (j + RS_AHEAD / 2 < nsat)
				__builtin_prefetch(s->incs[wl[s->sat[j + RS_AHEAD / 2]].inc].terms);
			uint32_t id = w->inc, term = w->term & ~RS_WATCH_POS;
			rs_inc_t *inc = &s->incs[id];
			if (inc->wt[0] != term && inc->wt[1] != term) {
				unwatch(s, p, s->sat[j]); /* stale: it watches other terms now */
				continue;
			}
			uint32_t slot = inc->wt[0] == term ? 0 : 1, other = inc->wt[1 - slot];
			if (other != term) {
				const rs_term_t *bt = &inc->terms[other];
				const rs_cur_t *bc = &s->cur[bt->pkg];
				if (bc->acc && rs_term_disjoint(bc->pos, bc->acc, bt->pos, bt->set, bc->nw)) {
					set_blocker(s, w, inc, other);
					continue; /* the other can never hold: the blocker now */
				}
			}
			/* another term to watch, not satisfied */
			uint32_t repl = UINT32_MAX;
			for (uint32_t k = 0; k < inc->nterms && repl == UINT32_MAX; k++)
				if (k != inc->wt[0] && k != inc->wt[1] &&
					!term_satisfied(s, &inc->terms[k]))
					repl = k;
			if (repl != UINT32_MAX) {
				inc->wt[slot] = repl;
				unwatch(s, p, s->sat[j]);
				if ((r = watch(s, inc->terms[repl].pkg, id, repl,
					     other != term ? other : UINT32_MAX)))
					goto out;
				continue;
			}
			const rs_term_t *ot = &inc->terms[other];
			if (other == term || term_satisfied(s, ot)) {
				/* every term holds: learn, backjump, and start over
				 * from the derived package only */
				if ((r = on_conflict(s, id, failure, &derived)))
					goto out;
				/* the rest of p's list was not looked at: all of
				 * it next time, unless the backjump undid what p
				 * had (it does but after a look at a package not
				 * decided, solve()'s) */
				if (s->pkgs[p].scanned == pc_last)
					s->pkgs[p].scanned = -1;
				while (n)
					s->pkgs[s->queue[--n]].stamp = 0;
				s->stamp++;
				if ((r = enqueue(s, &n, derived)))
					goto out;
				break;
			}
			bool op;
			const rs_word_t *oacc;
			pkg_acc(s, ot->pkg, &op, &oacc);
			if (oacc && rs_term_disjoint(op, oacc, ot->pos, ot->set, s->pkgs[ot->pkg].nwords))
				continue; /* can never hold */
			if ((r = derive(s, id, other)) || (r = enqueue(s, &n, ot->pkg)))
				goto out;
		}
		compact(s, p, false);
	}
out:
	while (n)
		s->pkgs[s->queue[--n]].stamp = 0;
	return r;
}

/* ---- the learned incompatibilities' database ------------------------------- */

typedef struct rs_rank {
	uint32_t id, used;
	uint8_t lbd;
} rs_rank_t;

/* The first to drop: the highest LBD, then the least recently used, then
 * the oldest (a total order: the same run drops the same ones). */
static int rank_cmp(const void *a, const void *b)
{
	const rs_rank_t *x = a, *y = b;
	if (x->lbd != y->lbd)
		return x->lbd > y->lbd ? -1 : 1;
	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Glucose's clause database reduction: past each step of its schedule,
 * half of the learned incompatibilities still watched leave the watch
 * lists, the highest LBD first, never one of LBD RS_KEEP_LBD or less nor
 * one that is the cause of an assignment of the partial solution.  A
 * dropped one stays an incompatibility (the derivations that cite it, the
 * explanation): only its watches go, so the propagation no longer looks at
 * it. */
static int reduce_learned(rs_solver_t *s)
{
	size_t n = 0, ndrop, j = 0;
	rs_rank_t *rk = gpuenv_alloc(s->ctx, (s->nlearnts ? s->nlearnts : 1) * sizeof(*rk));
	rs_word_t *locked = gpuenv_calloc(s->ctx, rs_words(s->nincs) + 1, sizeof(rs_word_t));

	s->reductions++;
	s->next_reduce = s->conflicts + RS_REDUCE_FIRST + RS_REDUCE_STEP * s->reductions;
	if (!rk || !locked) {
		gpuenv_free(s->ctx, rk);
		gpuenv_free(s->ctx, locked);
		return oom(s);
	}
	/* the causes of the partial solution's assignments stay */
	for (uint32_t a = 0; a < s->nasg; a++)
		if (!s->asg[a].decision)
			rs_set_bit(locked, s->asg[a].cause);
	for (size_t i = 0; i < s->nlearnts; i++) {
		const rs_inc_t *inc = &s->incs[s->learnts[i]];
		if (inc->lbd > RS_KEEP_LBD && !rs_set_has(locked, s->learnts[i])) {
			rk[n].id = s->learnts[i];
			rk[n].used = inc->used;
			rk[n].lbd = inc->lbd;
			n++;
		}
	}
	ndrop = s->nlearnts / 2 < n ? s->nlearnts / 2 : n;
	qsort(rk, n, sizeof(*rk), rank_cmp);
	for (size_t i = 0; i < ndrop; i++)
		s->incs[rk[i].id].watched = false;
	gpuenv_free(s->ctx, rk);
	gpuenv_free(s->ctx, locked);
	for (size_t i = 0; i < s->nlearnts; i++)
		if (s->incs[s->learnts[i]].watched)
			s->learnts[j++] = s->learnts[i];
	s->nlearnts = j;
	s->dropped += ndrop;
	/* their entries out of the watch lists */
	for (uint32_t p = 0; p < s->npkgs && ndrop; p++) {
		rs_pkg_t *k = &s->pkgs[p];
		for (uint32_t e = 0; e < k->nincs; e++) {
			uint32_t id = k->incs[e].inc;
			if (id != UINT32_MAX && s->incs[id].lbd && !s->incs[id].watched)
				unwatch(s, p, e);
		}
		compact(s, p, true);
	}
	return 0;
}

/* ---- dependencies ---------------------------------------------------------- */

/* Text of a dependency for the explanation: "b[x] >=2", "b". */
static const char *dep_text(rs_solver_t *s, const char *name, const char *extra,
	const gpuenv_specset_t *spec, const char **spec_text)
{
	gpuenv_buf_t b;
	const char *res = NULL;
	size_t at;

	gpuenv_buf_init(&b, s->ctx, 1 << 16);
	if (gpuenv_buf_puts(&b, name) || (extra && gpuenv_buf_printf(&b, "[%s]", extra)))
		goto done;
	at = b.len;
	if (spec && spec->n && (gpuenv_buf_putc(&b, ' ') || gpuenv_specset_format(spec, &b)))
		goto done;
	res = gpuenv_arena_strndup(&s->mem, b.data ? b.data : "", b.len);
	if (res)
		*spec_text = res + (at < b.len ? at + 1 : at);
done:
	gpuenv_buf_free(&b);
	return res;
}

/* Add "from (version ver) depends on to in spec" (or, with to's set empty,
 * the derived "from ver is forbidden" with its two external halves). */
static int add_dep(rs_solver_t *s, uint32_t from, uint32_t ver, uint32_t to, const rs_word_t *set,
	const char *text, const char *spec_text)
{
	rs_pkg_t *f = &s->pkgs[from], *t = &s->pkgs[to];
	uint32_t id = 0, a = 0, b = 0;
	bool never;
	int r;
	rs_word_t *fv = set_new(s, f->nwords);

	if (!fv)
		return oom(s);
	rs_set_bit(fv, ver);
	rs_tl_reset(s);
	if ((r = rs_tl_add(s, from, true, fv)))
		return r;
	if (rs_set_empty(set, t->nwords)) {
		/* nothing can satisfy it: two text-only causes */
		if ((r = inc_new(s, &a)) || (r = rs_tl_store(s, a, &never)))
			return r;
		s->incs[a].kind = RS_INC_DEP_TEXT;
		if ((r = inc_new(s, &b)))
			return r;
		s->incs[b].kind = RS_INC_NOVERS;
		s->incs[b].nv_reason = t->not_found ? RS_NV_NOTFOUND
				       : t->ncand ? RS_NV_NOMATCH
						  : RS_NV_NONE;
		if ((r = inc_new(s, &id)) || (r = rs_tl_store(s, id, &never)))
			return r;
		s->incs[id].kind = RS_INC_DERIVED;
		s->incs[id].c1 = a;
		s->incs[id].c2 = b;
		for (uint32_t x = 0; x < 3; x++) {
			rs_inc_t *i = &s->incs[x == 0 ? a : x == 1 ? b : id];
			i->dep_from = from;
			i->dep_ver = ver;
			i->dep_to = to;
			i->dep_text = text;
			i->spec_text = spec_text;
		}
		return inc_activate(s, id);
	}
	if ((r = rs_tl_add(s, to, false, set)))
		return r;
	if ((r = inc_new(s, &id)) || (r = rs_tl_store(s, id, &never)))
		return r;
	s->incs[id].kind = RS_INC_DEP;
	s->incs[id].dep_from = from;
	s->incs[id].dep_ver = ver;
	s->incs[id].dep_to = to;
	s->incs[id].dep_text = text;
	s->incs[id].spec_text = spec_text;
	if (never) /* a self-dependency its own version meets */
		return 0;
	return inc_activate(s, id);
}

/* One requirement of (from, ver): its packages (name, each name[extra]). */
static int add_requirement(rs_solver_t *s, uint32_t from, uint32_t ver,
	const gpuenv_requirement_t *rq)
{
	char name[RS_NAME_MAX], extra[RS_NAME_MAX];
	uint32_t to;
	int r;

	if (rq->name.len >= RS_NAME_MAX ||
		gpuenv_name_normalize_to(rq->name, name, sizeof(name)) == SIZE_MAX)
		return gpuenv_fail(s->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"a requirement's name is longer than %d bytes", RS_NAME_MAX);
	for (size_t e = 0; e <= rq->nextras; e++) {
		const char *ex = NULL;
		if (e < rq->nextras) {
			if (rq->extras[e].len >= RS_NAME_MAX ||
				gpuenv_name_normalize_to(rq->extras[e], extra, sizeof(extra)) ==
					SIZE_MAX)
				return gpuenv_fail(s->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
					"an extra's name is longer than %d bytes", RS_NAME_MAX);
			/* a[x, x]: once */
			bool dup = false;
			for (size_t k = 0; k < e; k++)
				dup = dup || gpuenv_str_ieq(rq->extras[k], rq->extras[e]);
			if (dup)
				continue;
			ex = extra;
		}
		if ((r = pkg_get(s, name, ex, &to)))
			return r;
		rs_pkg_t *t = &s->pkgs[to];
		rs_word_t *set = set_new(s, t->nwords);
		if (!set)
			return oom(s);
		for (uint32_t i = 0; i < t->ncand; i++) {
			const gpuenv_candidate_t *c = t->cand[i];
			if (rq->url.len || gpuenv_specset_contains_ex(&rq->spec, gpuenv_str(c->version),
						   &c->v, GPUENV_PRERELEASES_YES, false))
				rs_set_bit(set, i);
		}
		const char *spec_text = "";
		const char *text = dep_text(s, name, ex, rq->url.len ? NULL : &rq->spec, &spec_text);
		if (!text)
			return oom(s);
		if ((r = add_dep(s, from, ver, to, set, text, spec_text)))
			return r;
	}
	return 0;
}

/* Marker check: *use when rq applies to (package, extra). */
static int applies(rs_solver_t *s, const gpuenv_requirement_t *rq, const char *extra, bool *use)
{
	gpuenv_marker_env_t env;
	bool with, without;
	int r;

	/* no marker: the base's requirement, never an extra's */
	*use = extra == NULL;
	if (!rq->marker)
		return 0;
	if (s->req->env)
		env = *s->req->env;
	else
		gpuenv_marker_env_default(&env);
	env.extras = NULL;
	env.dependency_groups = NULL;
	env.extra = NULL;
	if ((r = gpuenv_marker_eval(s->ctx, rq->marker, &env, &without)))
		return r;
	if (!extra) {
		*use = without;
		return 0;
	}
	env.extra = extra;
	if ((r = gpuenv_marker_eval(s->ctx, rq->marker, &env, &with)))
		return r;
	/* an extra adds what its marker turns on; the rest is the base's */
	*use = with && !without;
	return 0;
}

/* The dependencies of package p at candidate ver, added once. */
static int add_deps(rs_solver_t *s, uint32_t p, uint32_t ver, uint32_t *first, uint32_t *count)
{
	rs_pkg_t *k = &s->pkgs[p];
	int r;

	if (!k->dep_n) {
		k->dep_n = gpuenv_arena_calloc(&s->mem, k->ncand ? k->ncand : 1, sizeof(uint32_t));
		k->dep_first = gpuenv_arena_calloc(&s->mem, k->ncand ? k->ncand : 1, sizeof(uint32_t));
		if (!k->dep_n || !k->dep_first)
			return oom(s);
	}
	if (k->dep_n[ver]) {
		*first = k->dep_first[ver];
		*count = k->dep_n[ver] - 1;
		return 0;
	}
	uint32_t start = s->nincs;
	if (p == RS_ROOT) {
		for (size_t i = 0; i < s->req->nroots; i++) {
			bool use;
			if ((r = applies(s, &s->req->roots[i], NULL, &use)))
				return r;
			if (use && (r = add_requirement(s, p, ver, &s->req->roots[i])))
				return r;
		}
	} else {
		const gpuenv_requirement_t *rq = NULL;
		size_t n = 0;
		uint32_t base = k->base;
		const char *extra = k->extra;
		const gpuenv_candidate_t *c = k->cand[ver];
		if (extra) {
			/* a[x] v depends on a == v */
			rs_pkg_t *b = &s->pkgs[base];
			rs_word_t *one = set_new(s, b->nwords);
			if (!one)
				return oom(s);
			rs_set_bit(one, ver);
			const char *text = gpuenv_arena_printf(&s->mem, "%s ==%s", b->name,
				c->version).ptr;
			if (!text)
				return oom(s);
			if ((r = add_dep(s, p, ver, base, one, text, text + strlen(b->name) + 1)))
				return r;
		}
		if ((r = s->prov->requires(s->prov->self, s->ctx, s->pkgs[base].name, c, &rq, &n)))
			return r;
		/* prefetch the names this version brings in */
		if (s->prov->prefetch && n) {
			const char **names = gpuenv_arena_alloc(&s->mem, n * sizeof(char *));
			size_t m = 0;
			if (!names)
				return oom(s);
			for (size_t i = 0; i < n; i++) {
				char nm[RS_NAME_MAX];
				bool use;
				if (rq[i].name.len >= RS_NAME_MAX ||
					gpuenv_name_normalize_to(rq[i].name, nm, sizeof(nm)) == SIZE_MAX)
					continue;
				if (pkg_find(s, nm) >= 0)
					continue;
				if ((r = applies(s, &rq[i], extra, &use)))
					return r;
				if (use && (names[m] = gpuenv_arena_strndup(&s->mem, nm, strlen(nm))))
					m++;
			}
			if (m)
				s->prov->prefetch(s->prov->self, s->ctx, names, m);
		}
		for (size_t i = 0; i < n; i++) {
			bool use;
			if ((r = applies(s, &rq[i], extra, &use)))
				return gpuenv_hint(s->ctx, "in a requirement of %s %s", k->name,
					c->version);
			if (use && (r = add_requirement(s, p, ver, &rq[i])))
				return r;
		}
	}
	k = &s->pkgs[p]; /* the table may have moved */
	k->dep_first[ver] = start;
	k->dep_n[ver] = s->nincs - start + 1;
	*first = start;
	*count = s->nincs - start;
	return 0;
}

/* ---- decisions --------------------------------------------------------------- */

/* The next package: a positive one not decided, an early one (an upgrade
 * asked for) before the rest, then the fewest candidates left, the
 * earliest registered on a tie.  -1: all done. */
static int32_t pick(const rs_solver_t *s)
{
	int32_t best = -1;
	uint32_t bestn = 0;
	bool best_early = false;

	for (uint32_t p = 0; p < s->npkgs; p++) {
		const rs_pkg_t *k = &s->pkgs[p];
		if (k->decision >= 0 || !s->cur[p].acc || !s->cur[p].pos)
			continue;
		uint32_t c = rs_set_count(s->cur[p].acc, k->nwords);
		if (best < 0 || (k->early && !best_early) || (k->early == best_early && c < bestn)) {
			best = (int32_t)p;
			bestn = c;
			best_early = k->early;
		}
	}
	return best;
}

/* The candidate to try for package k within set: the preferred one while
 * the set holds it (a stable lock's version), else the newest, or, unless
 * pre-releases rank with the rest, the newest stable one while the set
 * holds one.  -1: the set is empty. */
static int32_t pick_version(const rs_pkg_t *k, const rs_word_t *set)
{
	if (k->prefer >= 0 && rs_set_has(set, (uint32_t)k->prefer))
		return k->prefer;
	if (!k->pre_ranked && k->stable)
		for (uint32_t i = 0; i < k->nwords; i++)
			if (set[i] & k->stable[i])
				return (int32_t)(i * 64 + (uint32_t)__builtin_ctzll(set[i] & k->stable[i]));
	return rs_set_first(set, k->nwords);
}

static int solve(rs_solver_t *s, uint32_t *failure)
{
	uint32_t id = 0, next = RS_ROOT, first = 0, count = 0, first_inc = UINT32_MAX;
	int r;
	bool never;
	rs_word_t one = 1;

	/* the root must be selected */
	rs_tl_reset(s);
	if ((r = inc_new(s, &id)) || (r = rs_tl_add(s, RS_ROOT, false, &one)) ||
		(r = rs_tl_store(s, id, &never)) || (r = inc_activate(s, id)))
		return r;
	s->incs[id].kind = RS_INC_ROOT;
	first_inc = id; /* derive "the root is selected" */
	for (;;) {
		if ((r = propagate(s, next, first_inc, failure)))
			return r;
		if (s->conflicts >= s->next_reduce && (r = reduce_learned(s)))
			return r;
		int32_t p = pick(s);
		if (p < 0)
			return 0;
		rs_pkg_t *k = &s->pkgs[p];
		int32_t ver = pick_version(k, s->cur[p].acc);
		if (ver < 0)
			return gpuenv_fail(s->ctx, -EINVAL, NULL, 0, 0,
				"resolver: empty positive term (a bug)");
		if ((r = add_deps(s, (uint32_t)p, (uint32_t)ver, &first, &count)))
			return r;
		k = &s->pkgs[p];
		/* decide unless one of its dependencies would be violated at once */
		uint32_t unit = UINT32_MAX;
		for (uint32_t i = first; i < first + count && unit == UINT32_MAX; i++) {
			uint32_t which;
			const rs_inc_t *inc = &s->incs[i];
			if (inc->kind != RS_INC_DEP && inc->kind != RS_INC_DERIVED)
				continue;
			if (inc->nterms == 0 || !inc->terms)
				continue;
			int rel = relation(s, i, &which);
			if (rel == REL_SAT || rel == REL_ALMOST)
				unit = i; /* propagate it instead of deciding */
		}
		if (unit == UINT32_MAX) {
			rs_word_t *v = s->tmp2; /* assign copies it */
			memset(v, 0, k->nwords * sizeof(rs_word_t));
			rs_set_bit(v, (uint32_t)ver);
			s->level++;
			s->decisions++;
			if ((r = assign(s, (uint32_t)p, true, v, true, 0)))
				return r;
			s->pkgs[p].decision = ver;
		}
		next = (uint32_t)p;
		first_inc = unit;
		/* not decided: the dependencies just watched may hold already, so
		 * the propagation looks at the package's whole list */
		if (unit != UINT32_MAX)
			k->scanned = -1;
	}
}

/* ---- the result ------------------------------------------------------------ */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct out_ix {
	const char *name;
	uint32_t pkg;
} out_ix_t;

static int out_ix_cmp(const void *a, const void *b)
{
	return strcmp(((const out_ix_t *)a)->name, ((const out_ix_t *)b)->name);
}

static int build_result(rs_solver_t *s, gpuenv_resolution_t *out)
{
	gpuenv_arena_t *ar = s->out;
	size_t n = 0;
	uint32_t *slot; /* pkg -> output index + 1 */
	out_ix_t *ix;

	for (uint32_t p = 1; p < s->npkgs; p++)
		n += s->pkgs[p].decision >= 0 && !s->pkgs[p].extra;
	ix = gpuenv_arena_alloc(&s->mem, (n ? n : 1) * sizeof(*ix));
	slot = gpuenv_arena_calloc(&s->mem, s->npkgs, sizeof(uint32_t));
	gpuenv_resolved_t *pk = gpuenv_arena_calloc(ar, n ? n : 1, sizeof(*pk));
	if (!ix || !slot || !pk)
		return oom(s);
	n = 0;
	for (uint32_t p = 1; p < s->npkgs; p++)
		if (s->pkgs[p].decision >= 0 && !s->pkgs[p].extra) {
			ix[n].name = s->pkgs[p].name;
			ix[n].pkg = p;
			n++;
		}
	qsort(ix, n, sizeof(*ix), out_ix_cmp);
	for (size_t i = 0; i < n; i++)
		slot[ix[i].pkg] = (uint32_t)i + 1;
	for (size_t i = 0; i < n; i++) {
		const rs_pkg_t *k = &s->pkgs[ix[i].pkg];
		pk[i].name = gpuenv_arena_strndup(ar, k->name, strlen(k->name));
		if (!pk[i].name)
			return oom(s);
		pk[i].cand = k->cand[k->decision];
	}
	/* extras, dependencies, roots: from the dependency incompatibilities
	 * of the chosen versions */
	size_t *deps = gpuenv_arena_alloc(&s->mem, (s->npkgs + 1) * sizeof(size_t));
	const char **ex = gpuenv_arena_alloc(&s->mem, (s->npkgs + 1) * sizeof(char *));
	if (!deps || !ex)
		return oom(s);
	for (size_t i = 0; i < n; i++) {
		uint32_t bp = ix[i].pkg;
		size_t nd = 0, ne = 0;
		s->stamp++;
		for (uint32_t p = 0; p < s->npkgs; p++) {
			const rs_pkg_t *k = &s->pkgs[p];
			if (k->base != bp || k->decision < 0)
				continue;
			if (k->extra)
				ex[ne++] = k->extra;
			uint32_t v = (uint32_t)k->decision;
			if (!k->dep_n || !k->dep_n[v])
				continue;
			for (uint32_t j = k->dep_first[v]; j < k->dep_first[v] + k->dep_n[v] - 1; j++) {
				const rs_inc_t *inc = &s->incs[j];
				if (inc->kind != RS_INC_DEP || inc->dep_from != p)
					continue;
				uint32_t to = s->pkgs[inc->dep_to].base;
				if (to == bp || !slot[to] || s->pkgs[to].stamp == s->stamp)
					continue;
				s->pkgs[to].stamp = s->stamp;
				deps[nd++] = slot[to] - 1;
			}
		}
		for (uint32_t p = 0; p < s->npkgs; p++)
			s->pkgs[p].stamp = 0;
		qsort(ex, ne, sizeof(char *), name_cmp);
		for (size_t a = 1; a < nd; a++)
			for (size_t b = a; b > 0 && deps[b - 1] > deps[b]; b--) {
				size_t x = deps[b];
				deps[b] = deps[b - 1];
				deps[b - 1] = x;
			}
		size_t *d = gpuenv_arena_alloc(ar, (nd ? nd : 1) * sizeof(size_t));
		const char **e = gpuenv_arena_alloc(ar, (ne ? ne : 1) * sizeof(char *));
		if (!d || !e)
			return oom(s);
		memcpy(d, deps, nd * sizeof(size_t));
		for (size_t a = 0; a < ne; a++)
			if (!(e[a] = gpuenv_arena_strndup(ar, ex[a], strlen(ex[a]))))
				return oom(s);
		pk[i].deps = d;
		pk[i].ndeps = nd;
		pk[i].extras = e;
		pk[i].nextras = ne;
	}
	const rs_pkg_t *root = &s->pkgs[RS_ROOT];
	if (root->dep_n && root->dep_n[0])
		for (uint32_t j = root->dep_first[0]; j < root->dep_first[0] + root->dep_n[0] - 1; j++) {
			const rs_inc_t *inc = &s->incs[j];
			if (inc->kind == RS_INC_DEP && inc->dep_from == RS_ROOT) {
				uint32_t to = s->pkgs[inc->dep_to].base;
				if (slot[to])
					pk[slot[to] - 1].root = true;
			}
		}
	out->pkgs = pk;
	out->npkgs = n;
	return 0;
}

int gpuenv_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_resolve_req_t *req,
	const gpuenv_provider_t *provider, gpuenv_resolution_t *out)
{
	rs_solver_t s;
	uint32_t root, failure = 0;
	int r;
	static const gpuenv_candidate_t root_cand = { .version = "0" };
	static const gpuenv_candidate_t *const root_cands[1] = { &root_cand };

	memset(out, 0, sizeof(*out));
	if (!req || !provider || !provider->versions || !provider->requires)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"gpuenv_resolve: a request and a provider with versions() and "
			"requires() are needed");
	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.out = arena;
	s.req = req;
	s.prov = provider;
	gpuenv_arena_init(&s.mem, ctx, 0);

	/* root specifiers, by normalised name (the yanked and pre-release
	 * rules look at them) */
	s.rootspecs = gpuenv_arena_alloc(&s.mem, (req->nroots ? req->nroots : 1) * sizeof(rs_root_spec_t));
	if (!s.rootspecs) {
		r = oom(&s);
		goto done;
	}
	for (size_t i = 0; i < req->nroots; i++) {
		char nm[RS_NAME_MAX];
		bool use;
		if ((r = applies(&s, &req->roots[i], NULL, &use)))
			goto done;
		if (!use)
			continue;
		if (req->roots[i].name.len >= RS_NAME_MAX ||
			gpuenv_name_normalize_to(req->roots[i].name, nm, sizeof(nm)) == SIZE_MAX) {
			r = gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
				"a requirement's name is longer than %d bytes", RS_NAME_MAX);
			goto done;
		}
		s.rootspecs[s.nrootspecs].name = gpuenv_arena_strndup(&s.mem, nm, strlen(nm));
		if (!s.rootspecs[s.nrootspecs].name) {
			r = oom(&s);
			goto done;
		}
		s.rootspecs[s.nrootspecs].allow_pre = req->allow_prereleases &&
							req->allow_prereleases[i];
		s.rootspecs[s.nrootspecs++].spec = &req->roots[i].spec;
	}
	/* the root: a package of one version, "0", no name an index can have */
	if ((r = pkg_new(&s, "<root>", &root)))
		goto done;
	s.pkgs[root].cand = (const gpuenv_candidate_t **)root_cands;
	s.pkgs[root].ncand = 1;
	s.pkgs[root].nwords = 1;
	s.tmp = set_new(&s, 1);
	s.tmp2 = set_new(&s, 1);
	s.tmpwords = 1;
	if (!s.tmp || !s.tmp2) {
		r = oom(&s);
		goto done;
	}
	s.next_reduce = RS_REDUCE_FIRST;
	r = solve(&s, &failure);
	out->decisions = s.decisions;
	out->learned = s.learned;
	out->learned_dropped = s.dropped;
	out->reductions = s.reductions;
	out->watch_looks = s.watch_looks;
	out->watch_found = s.watch_found;
	out->watch_passed = s.watch_passed;
	out->conflicts = s.conflicts;
	out->packages_asked = s.asked;
	out->assignments = s.nassigned;
	out->partial_bytes_peak = s.wpeak * sizeof(rs_word_t);
	if (r == GPUENV_ENOSOLUTION) {
		out->explanation = rs_report(&s, failure);
		if (!out->explanation)
			r = oom(&s);
		else
			gpuenv_fail(ctx, GPUENV_ENOSOLUTION, NULL, 0, 0,
				"no solution: the requirements conflict (the explanation says "
				"how)");
	} else if (r == 0)
		r = build_result(&s, out);
done:
	for (uint32_t p = 0; p < s.npkgs; p++) {
		gpuenv_free(ctx, s.pkgs[p].incs);
		gpuenv_free(ctx, s.pkgs[p].hist);
		gpuenv_free(ctx, s.pkgs[p].wbm);
	}
	for (uint32_t b = 0; b < s.nwblocks; b++)
		gpuenv_free(ctx, s.wblocks[b]);
	gpuenv_free(ctx, s.wblocks);
	gpuenv_free(ctx, s.tl);
	gpuenv_free(ctx, s.tw);
	gpuenv_free(ctx, s.cur);
	gpuenv_free(ctx, s.pkgs);
	gpuenv_free(ctx, s.incs);
	gpuenv_free(ctx, s.asg);
	gpuenv_free(ctx, s.queue);
	gpuenv_free(ctx, s.sat);
	gpuenv_free(ctx, s.learnts);
	gpuenv_free(ctx, s.xblock);
	gpuenv_free(ctx, s.lvmark);
	gpuenv_arena_free(&s.mem);
	return r;
}
