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

static rs_word_t *set_dup(rs_solver_t *s, const rs_word_t *a, uint32_t nw)
{
	rs_word_t *r = set_new(s, nw);
	if (r && nw)
		memcpy(r, a, nw * sizeof(rs_word_t));
	return r;
}

/* The package's current intersection: NULL set means no assignment yet
 * (every version, or absent). */
static void pkg_acc(const rs_solver_t *s, uint32_t p, bool *pos, const rs_word_t **set)
{
	int32_t a = s->pkgs[p].last;
	if (a < 0) {
		*pos = false;
		*set = NULL;
	} else {
		*pos = s->asg[a].acc_pos;
		*set = s->asg[a].acc;
	}
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
		s->cappkgs = ncap;
	}
	rs_pkg_t *p = &s->pkgs[s->npkgs];
	memset(p, 0, sizeof(*p));
	p->name = gpuenv_arena_strndup(&s->mem, name, strlen(name));
	if (!p->name)
		return oom(s);
	p->last = -1;
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
		if (!s->tmp)
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

static int watch(rs_solver_t *s, uint32_t p, uint32_t inc, uint32_t term)
{
	rs_pkg_t *k = &s->pkgs[p];
	if (k->nincs == k->capincs) {
		uint32_t ncap = k->capincs ? k->capincs * 2 : 8;
		rs_watch_t *n = gpuenv_realloc(s->ctx, k->incs, (size_t)ncap * sizeof(rs_watch_t));
		if (!n)
			return oom(s);
		k->incs = n;
		k->capincs = ncap;
	}
	const rs_term_t *t = &s->incs[inc].terms[term];
	rs_watch_t *w = &k->incs[k->nincs++];
	w->inc = inc;
	w->term = term;
	w->pos = t->pos;
	w->set = t->set;
	w->w0 = k->nwords ? t->set[0] : 0;
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
	if ((!was || (a != old0 && a != old1)) && (r = watch(s, inc->terms[a].pkg, id, a)))
		return r;
	if (a != b && (!was || (b != old0 && b != old1)) && (r = watch(s, inc->terms[b].pkg, id, b)))
		return r;
	return 0;
}

/* An incompatibility of at most two terms (the root's, a dependency, a
 * dependency nothing meets): both terms watched. */
static int inc_activate(rs_solver_t *s, uint32_t id)
{
	return inc_watch(s, id, 0, s->incs[id].nterms > 1 ? 1 : 0);
}

/* A term list under construction: merged per package by intersection. */
typedef struct tlist {
	rs_term_t t[64];
	rs_term_t *v;
	uint32_t n, cap;
} tlist_t;

static void tlist_init(tlist_t *l)
{
	l->v = l->t;
	l->n = 0;
	l->cap = 64;
}

static int tlist_add(rs_solver_t *s, tlist_t *l, uint32_t pkg, bool pos, const rs_word_t *set)
{
	uint32_t nw = s->pkgs[pkg].nwords;
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].pkg == pkg) {
			bool np;
			rs_term_and(l->v[i].pos, l->v[i].set, pos, set, nw, &np, l->v[i].set);
			l->v[i].pos = np;
			return 0;
		}
	if (l->n == l->cap) {
		rs_term_t *n = gpuenv_arena_alloc(&s->mem, 2 * l->cap * sizeof(*n));
		if (!n)
			return oom(s);
		memcpy(n, l->v, l->n * sizeof(*n));
		l->v = n;
		l->cap *= 2;
	}
	l->v[l->n].pkg = pkg;
	l->v[l->n].pos = pos;
	l->v[l->n].set = set_dup(s, set, nw);
	if (!l->v[l->n].set)
		return oom(s);
	l->n++;
	return 0;
}

/* Copy the list into incompatibility id, dropping terms that always hold
 * (negative, empty set).  *never: a term can never hold (positive, empty),
 * so the incompatibility is vacuous. */
static int tlist_store(rs_solver_t *s, tlist_t *l, uint32_t id, bool *never)
{
	uint32_t k = 0;
	*never = false;
	for (uint32_t i = 0; i < l->n; i++) {
		bool empty = rs_set_empty(l->v[i].set, s->pkgs[l->v[i].pkg].nwords);
		if (empty && !l->v[i].pos)
			continue;
		if (empty && l->v[i].pos)
			*never = true;
		l->v[k++] = l->v[i];
	}
	rs_term_t *t = gpuenv_arena_alloc(&s->mem, (k ? k : 1) * sizeof(*t));
	if (!t)
		return oom(s);
	memcpy(t, l->v, k * sizeof(*t));
	/* terms sorted by package: deterministic and cheap to compare */
	for (uint32_t i = 1; i < k; i++)
		for (uint32_t j = i; j > 0 && t[j - 1].pkg > t[j].pkg; j--) {
			rs_term_t x = t[j];
			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	s->incs[id].terms = t;
	s->incs[id].nterms = k;
	return 0;
}

/* ---- the partial solution ------------------------------------------------ */

static int assign(rs_solver_t *s, uint32_t pkg, bool pos, const rs_word_t *set, bool decision,
	uint32_t cause)
{
	rs_pkg_t *p = &s->pkgs[pkg];
	uint32_t nw = p->nwords;
	bool ap;
	const rs_word_t *acc;

	if (s->nasg == s->capasg) {
		uint32_t ncap = s->capasg ? s->capasg * 2 : 256;
		rs_asg_t *na = gpuenv_realloc(s->ctx, s->asg, ncap * sizeof(*na));
		if (!na)
			return oom(s);
		s->asg = na;
		s->capasg = ncap;
	}
	rs_asg_t *a = &s->asg[s->nasg];
	a->pkg = pkg;
	a->pos = pos;
	a->decision = decision;
	a->cause = cause;
	a->level = s->level;
	a->prev = p->last;
	a->set = set_dup(s, set, nw);
	a->acc = set_new(s, nw);
	if (!a->set || !a->acc)
		return oom(s);
	pkg_acc(s, pkg, &ap, &acc);
	if (acc)
		rs_term_and(ap, acc, pos, set, nw, &a->acc_pos, a->acc);
	else {
		memcpy(a->acc, set, nw * sizeof(rs_word_t));
		a->acc_pos = pos;
	}
	p->last = (int32_t)s->nasg;
	s->nasg++;
	return 0;
}

static void backtrack(rs_solver_t *s, uint32_t level)
{
	while (s->nasg && s->asg[s->nasg - 1].level > level) {
		rs_asg_t *a = &s->asg[--s->nasg];
		s->pkgs[a->pkg].last = a->prev;
		if (a->decision)
			s->pkgs[a->pkg].decision = -1;
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

/* The earliest assignment of pkg after which the package's intersection
 * (met with extra, when given) implies term t; -1 when extra alone does
 * (or, without extra, never: cannot happen for a satisfied term). */
static int32_t first_satisfying(rs_solver_t *s, uint32_t pkg, const rs_term_t *t, int32_t before,
	bool xpos, const rs_word_t *extra)
{
	uint32_t nw = s->pkgs[pkg].nwords;
	int32_t chain[64], *ch = chain;
	uint32_t n = 0, cap = 64;
	int32_t found = -1;

	if (extra && rs_term_subset(xpos, extra, t->pos, t->set, nw))
		return -1;
	for (int32_t a = s->pkgs[pkg].last; a >= 0; a = s->asg[a].prev) {
		if (before >= 0 && a >= before)
			continue;
		if (n == cap) {
			int32_t *nc = gpuenv_arena_alloc(&s->mem, 2 * cap * sizeof(int32_t));
			if (!nc)
				return -2;
			memcpy(nc, ch, n * sizeof(int32_t));
			ch = nc;
			cap *= 2;
		}
		ch[n++] = a;
	}
	for (uint32_t k = n; k-- > 0;) {
		const rs_asg_t *a = &s->asg[ch[k]];
		bool ok;
		if (extra) {
			bool p;
			rs_term_and(a->acc_pos, a->acc, xpos, extra, nw, &p, s->tmp);
			ok = rs_term_subset(p, s->tmp, t->pos, t->set, nw);
		} else
			ok = rs_term_subset(a->acc_pos, a->acc, t->pos, t->set, nw);
		if (ok) {
			found = ch[k];
			break;
		}
	}
	return found;
}

static bool is_failure(const rs_solver_t *s, uint32_t id)
{
	const rs_inc_t *inc = &s->incs[id];
	return inc->nterms == 0 ||
	       (inc->nterms == 1 && inc->terms[0].pkg == RS_ROOT && inc->terms[0].pos);
}

/* The paper's conflict resolution: learn the root cause of satisfied
 * incompatibility id and backjump.  *learned: the incompatibility to
 * derive from (or the failure, with GPUENV_ENOSOLUTION). */
static int resolve_conflict(rs_solver_t *s, uint32_t id, uint32_t *learned)
{

	s->conflicts++;
	if (s->conflicts > RS_MAX_CONFLICTS)
		return gpuenv_fail(s->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"resolution gave up after %u conflicts", RS_MAX_CONFLICTS);
	while (!is_failure(s, id)) {
		rs_inc_t *inc = &s->incs[id];
		int32_t satisfier = -1, prev = -1;
		uint32_t ti = 0;

		for (uint32_t i = 0; i < inc->nterms; i++) {
			int32_t a = first_satisfying(s, inc->terms[i].pkg, &inc->terms[i], -1, false,
				NULL);
			if (a == -2)
				return oom(s);
			if (a > satisfier) {
				satisfier = a;
				ti = i;
			}
		}
		if (satisfier < 0)
			return gpuenv_fail(s->ctx, -EINVAL, NULL, 0, 0,
				"resolver: conflict without a satisfier (a bug)");
		for (uint32_t i = 0; i < inc->nterms; i++) {
			int32_t a;
			if (i == ti)
				a = first_satisfying(s, inc->terms[i].pkg, &inc->terms[i], satisfier,
					s->asg[satisfier].pos, s->asg[satisfier].set);
			else
				a = first_satisfying(s, inc->terms[i].pkg, &inc->terms[i], -1, false,
					NULL);
			if (a == -2)
				return oom(s);
			if (a > prev)
				prev = a;
		}
		const rs_asg_t *sa = &s->asg[satisfier];
		uint32_t prev_level = prev >= 0 ? s->asg[prev].level : 1;
		if (prev_level < 1)
			prev_level = 1;
		/* what level 0 holds follows from the root alone: resolve on
		 * until the failure */
		if (sa->level == 0)
			prev_level = 0;
		if (sa->decision || prev_level != sa->level) {
			backtrack(s, prev_level);
			*learned = id;
			return 0;
		}
		/* prior cause: this incompatibility resolved with the
		 * satisfier's cause on the satisfier's package */
		uint32_t cause = sa->cause, spkg = sa->pkg, nid = 0;
		tlist_t l;
		int r;
		bool never;
		tlist_init(&l);
		const rs_term_t *st = &inc->terms[ti];
		rs_word_t *u = NULL;
		bool upos = false;
		for (uint32_t i = 0; i < inc->nterms; i++)
			if (inc->terms[i].pkg != spkg &&
				(r = tlist_add(s, &l, inc->terms[i].pkg, inc->terms[i].pos,
					 inc->terms[i].set)))
				return r;
		const rs_inc_t *cinc = &s->incs[cause];
		const rs_term_t *ct = NULL;
		for (uint32_t i = 0; i < cinc->nterms; i++) {
			if (cinc->terms[i].pkg == spkg) {
				ct = &cinc->terms[i];
				continue;
			}
			if ((r = tlist_add(s, &l, cinc->terms[i].pkg, cinc->terms[i].pos,
				     cinc->terms[i].set)))
				return r;
		}
		/* the satisfier's package: the union of both terms */
		uint32_t nw = s->pkgs[spkg].nwords;
		u = set_new(s, nw);
		if (!u)
			return oom(s);
		if (ct)
			rs_term_or(st->pos, st->set, ct->pos, ct->set, nw, &upos, u);
		else {
			memcpy(u, st->set, nw * sizeof(rs_word_t));
			upos = st->pos;
		}
		/* a union that covers everything (negative, empty) drops out */
		if (upos || !rs_set_empty(u, nw))
			if ((r = tlist_add(s, &l, spkg, upos, u)))
				return r;
		if ((r = inc_new(s, &nid)))
			return r;
		if ((r = tlist_store(s, &l, nid, &never)))
			return r;
		s->incs[nid].kind = RS_INC_DERIVED;
		s->incs[nid].c1 = id;
		s->incs[nid].c2 = cause;
		id = nid;
	}
	*learned = id;
	return GPUENV_ENOSOLUTION;
}

/* ---- unit propagation ------------------------------------------------------ */

static int derive(rs_solver_t *s, uint32_t id, uint32_t which)
{
	const rs_term_t *t = &s->incs[id].terms[which];
	return assign(s, t->pkg, !t->pos, t->set, false, id);
}

/* Does the package's intersection (ap, acc) imply the watched term? */
static inline bool watch_satisfied(const rs_watch_t *w, bool ap, const rs_word_t *acc, uint32_t nw)
{
	if (!acc)
		return false;
	if (nw == 1) {
		if (ap)
			return w->pos ? !(acc[0] & ~w->w0) : !(acc[0] & w->w0);
		return !w->pos && !(w->w0 & ~acc[0]);
	}
	return rs_term_subset(ap, acc, w->pos, w->set, nw);
}

/* Does the partial solution imply term t? */
static bool term_satisfied(const rs_solver_t *s, const rs_term_t *t)
{
	bool ap;
	const rs_word_t *acc;
	pkg_acc(s, t->pkg, &ap, &acc);
	return acc && rs_term_subset(ap, acc, t->pos, t->set, s->pkgs[t->pkg].nwords);
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
		if (a == -2)
			return oom(s);
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

/* Drop the watch entries of package p marked no longer watched. */
static void compact(rs_solver_t *s, uint32_t p, uint32_t dropped)
{
	rs_pkg_t *k = &s->pkgs[p];
	uint32_t j = 0;
	if (!dropped)
		return;
	for (uint32_t i = 0; i < k->nincs; i++)
		if (k->incs[i].inc != UINT32_MAX)
			k->incs[j++] = k->incs[i];
	k->nincs = j;
}

/* Unit propagation from package start (and first from incompatibility
 * first, when not UINT32_MAX), with two watched terms per
 * incompatibility: a package's change looks only at the incompatibilities
 * watching one of its terms that the change satisfied, and moves the watch
 * to another term not satisfied when there is one; with none, the other
 * watched term decides (satisfied: a conflict; undecided: its negation is
 * derived).  So the work per change does not grow with the number of
 * incompatibilities learned. */
static int propagate(rs_solver_t *s, uint32_t start, uint32_t first, uint32_t *failure)
{
	uint32_t n = 0, derived = 0, cur = UINT32_MAX, dropped = 0;
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
		bool ap;
		const rs_word_t *acc;
		uint32_t nw = s->pkgs[p].nwords;
		cur = p;
		pkg_acc(s, p, &ap, &acc);
		/* newest first; an entry no longer watched here is marked and the
		 * list compacted after the scan */
		for (uint32_t i = s->pkgs[p].nincs; i-- > 0;) {
			rs_watch_t *w = &s->pkgs[p].incs[i];
			if (!watch_satisfied(w, ap, acc, nw))
				continue;
			uint32_t id = w->inc, term = w->term;
			rs_inc_t *inc = &s->incs[id];
			if (inc->wt[0] != term && inc->wt[1] != term) {
				w->inc = UINT32_MAX; /* stale: it watches other terms now */
				dropped++;
				continue;
			}
			uint32_t slot = inc->wt[0] == term ? 0 : 1, other = inc->wt[1 - slot];
			/* another term to watch, not satisfied */
			uint32_t repl = UINT32_MAX;
			for (uint32_t k = 0; k < inc->nterms && repl == UINT32_MAX; k++)
				if (k != inc->wt[0] && k != inc->wt[1] &&
					!term_satisfied(s, &inc->terms[k]))
					repl = k;
			if (repl != UINT32_MAX) {
				inc->wt[slot] = repl;
				w->inc = UINT32_MAX;
				dropped++;
				if ((r = watch(s, inc->terms[repl].pkg, id, repl)))
					goto out;
				continue;
			}
			const rs_term_t *ot = &inc->terms[other];
			if (other == term || term_satisfied(s, ot)) {
				/* every term holds: learn, backjump, and start over
				 * from the derived package only */
				compact(s, p, dropped);
				dropped = 0;
				cur = UINT32_MAX;
				if ((r = on_conflict(s, id, failure, &derived)))
					goto out;
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
		compact(s, p, dropped);
		dropped = 0;
		cur = UINT32_MAX;
	}
out:
	if (cur != UINT32_MAX)
		compact(s, cur, dropped);
	while (n)
		s->pkgs[s->queue[--n]].stamp = 0;
	return r;
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
	tlist_t l;
	bool never;
	int r;
	rs_word_t *fv = set_new(s, f->nwords);

	if (!fv)
		return oom(s);
	rs_set_bit(fv, ver);
	tlist_init(&l);
	if ((r = tlist_add(s, &l, from, true, fv)))
		return r;
	if (rs_set_empty(set, t->nwords)) {
		/* nothing can satisfy it: two text-only causes */
		if ((r = inc_new(s, &a)) || (r = tlist_store(s, &l, a, &never)))
			return r;
		s->incs[a].kind = RS_INC_DEP_TEXT;
		if ((r = inc_new(s, &b)))
			return r;
		s->incs[b].kind = RS_INC_NOVERS;
		s->incs[b].nv_reason = t->not_found ? RS_NV_NOTFOUND
				       : t->ncand ? RS_NV_NOMATCH
						  : RS_NV_NONE;
		if ((r = inc_new(s, &id)) || (r = tlist_store(s, &l, id, &never)))
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
	if ((r = tlist_add(s, &l, to, false, set)))
		return r;
	if ((r = inc_new(s, &id)) || (r = tlist_store(s, &l, id, &never)))
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
		if (k->decision >= 0 || k->last < 0 || !s->asg[k->last].acc_pos)
			continue;
		uint32_t c = rs_set_count(s->asg[k->last].acc, k->nwords);
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
	tlist_t l;
	bool never;
	rs_word_t one = 1;

	/* the root must be selected */
	tlist_init(&l);
	if ((r = inc_new(s, &id)) || (r = tlist_add(s, &l, RS_ROOT, false, &one)) ||
		(r = tlist_store(s, &l, id, &never)) || (r = inc_activate(s, id)))
		return r;
	s->incs[id].kind = RS_INC_ROOT;
	first_inc = id; /* derive "the root is selected" */
	for (;;) {
		if ((r = propagate(s, next, first_inc, failure)))
			return r;
		int32_t p = pick(s);
		if (p < 0)
			return 0;
		rs_pkg_t *k = &s->pkgs[p];
		int32_t ver = pick_version(k, s->asg[k->last].acc);
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
			rs_word_t *v = set_new(s, k->nwords);
			if (!v)
				return oom(s);
			rs_set_bit(v, (uint32_t)ver);
			s->level++;
			s->decisions++;
			if ((r = assign(s, (uint32_t)p, true, v, true, 0)))
				return r;
			s->pkgs[p].decision = ver;
		}
		next = (uint32_t)p;
		first_inc = unit;
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
	s.tmpwords = 1;
	if (!s.tmp) {
		r = oom(&s);
		goto done;
	}
	r = solve(&s, &failure);
	out->decisions = s.decisions;
	out->conflicts = s.conflicts;
	out->packages_asked = s.asked;
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
	for (uint32_t p = 0; p < s.npkgs; p++)
		gpuenv_free(ctx, s.pkgs[p].incs);
	gpuenv_free(ctx, s.pkgs);
	gpuenv_free(ctx, s.incs);
	gpuenv_free(ctx, s.asg);
	gpuenv_free(ctx, s.queue);
	gpuenv_arena_free(&s.mem);
	return r;
}
