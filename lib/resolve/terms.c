/* Term lists: an incompatibility's terms built one list at a time in the
 * solver's reused buffers (merged per package, packed sorted by package)
 * and stored as one block, and the resolvent of two incompatibilities,
 * which conflict resolution (solver.c) builds and the explanation
 * (report.c) builds again for a step that did not keep its terms.
 * Private to lib/resolve. */
#include "resolve_int.h"

#include <errno.h>
#include <string.h>

static int oom(rs_solver_t *s)
{
	return gpuenv_oom(s->ctx, "resolving");
}

/* The term list under construction (one at a time, in the solver's
 * reused buffers): merged per package by intersection, then stored as an
 * incompatibility's terms by tl_store. */
typedef struct rs_tl_ent {
	uint32_t pkg;
	bool pos;
	size_t off; /* its set: s->tw + off */
} rs_tl_ent_t;

void rs_tl_reset(rs_solver_t *s)
{
	s->ntl = 0;
	s->ntw = 0;
}

int rs_grow_slow(rs_solver_t *s, void **v, size_t *cap, size_t used, size_t n, size_t size)
{
	size_t ncap = *cap ? *cap : 64;
	while (ncap < used + n) {
		if (ncap > SIZE_MAX / 2 / size)
			return oom(s);
		ncap *= 2;
	}
	void *nv = gpuenv_realloc(s->ctx, *v, ncap * size);
	if (!nv)
		return oom(s);
	*v = nv;
	*cap = ncap;
	return 0;
}

/* Append a term for a package the list does not name yet. */
int rs_tl_push(rs_solver_t *s, uint32_t pkg, bool pos, const rs_word_t *set)
{
	uint32_t nw = s->pkgs[pkg].nwords;
	int r;
	if ((r = rs_grow(s, (void **)&s->tl, &s->captl, s->ntl, 1, sizeof(rs_tl_ent_t))) ||
		(r = rs_grow(s, (void **)&s->tw, &s->captw, s->ntw, nw, sizeof(rs_word_t))))
		return r;
	rs_tl_ent_t *e = &s->tl[s->ntl++];
	e->pkg = pkg;
	e->pos = pos;
	e->off = s->ntw;
	if (nw)
		memcpy(s->tw + s->ntw, set, nw * sizeof(rs_word_t));
	s->ntw += nw;
	return 0;
}

/* Add a term: met with the list's term for its package, if any. */
int rs_tl_add(rs_solver_t *s, uint32_t pkg, bool pos, const rs_word_t *set)
{
	for (uint32_t i = 0; i < s->ntl; i++)
		if (s->tl[i].pkg == pkg) {
			rs_word_t *w = s->tw + s->tl[i].off;
			bool np;
			rs_term_and(s->tl[i].pos, w, pos, set, s->pkgs[pkg].nwords, &np, w);
			s->tl[i].pos = np;
			return 0;
		}
	return rs_tl_push(s, pkg, pos, set);
}

/* Pack the list for storing: terms that always hold (negative, empty
 * set) dropped, the rest sorted by package; the bytes of its block (the
 * terms, then their sets).  *never: a term can never hold (positive,
 * empty), so the incompatibility is vacuous. */
static size_t tl_pack(rs_solver_t *s, bool *never)
{
	uint32_t k = 0;
	size_t words = 0;
	*never = false;
	for (uint32_t i = 0; i < s->ntl; i++) {
		const rs_tl_ent_t *e = &s->tl[i];
		uint32_t nw = s->pkgs[e->pkg].nwords;
		bool empty = rs_set_empty(s->tw + e->off, nw);
		if (empty && !e->pos)
			continue;
		if (empty && e->pos)
			*never = true;
		s->tl[k++] = *e;
		words += nw;
	}
	s->ntl = k;
	/* terms sorted by package: deterministic and cheap to compare */
	for (uint32_t i = 1; i < k; i++)
		for (uint32_t j = i; j > 0 && s->tl[j - 1].pkg > s->tl[j].pkg; j--) {
			rs_tl_ent_t x = s->tl[j];
			s->tl[j] = s->tl[j - 1];
			s->tl[j - 1] = x;
		}
	return (k ? k : 1) * sizeof(rs_term_t) + words * sizeof(rs_word_t);
}

/* Write the packed list into block t (tl_pack's bytes). */
static void tl_write(rs_solver_t *s, rs_term_t *t)
{
	uint32_t k = s->ntl;
	rs_word_t *w = (rs_word_t *)(t + k);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t nw = s->pkgs[s->tl[i].pkg].nwords;
		t[i].pkg = s->tl[i].pkg;
		t[i].pos = s->tl[i].pos;
		t[i].set = w;
		if (nw)
			memcpy(w, s->tw + s->tl[i].off, nw * sizeof(rs_word_t));
		w += nw;
	}
}

/* Store the list as incompatibility id's terms, dropping terms that
 * always hold (negative, empty set): the terms sorted by package and
 * their sets after them, in one block (what the replacement search of the
 * watched terms reads, contiguous).  *never: a term can never hold
 * (positive, empty), so the incompatibility is vacuous. */
int rs_tl_store(rs_solver_t *s, uint32_t id, bool *never)
{
	rs_term_t *t = gpuenv_arena_alloc(&s->mem, tl_pack(s, never));
	if (!t)
		return oom(s);
	tl_write(s, t);
	s->incs[id].terms = t;
	s->incs[id].nterms = s->ntl;
	return 0;
}

/* The list packed as tl_store does, into the solver's reused block
 * (conflict resolution's step in progress, not kept). */
int rs_tl_scratch(rs_solver_t *s, const rs_term_t **terms, uint32_t *nterms)
{
	bool never;
	size_t bytes = tl_pack(s, &never), nw = (bytes + sizeof(rs_word_t) - 1) / sizeof(rs_word_t);
	int r;
	if ((r = rs_grow(s, (void **)&s->xblock, &s->capxblock, 0, nw, sizeof(rs_word_t))))
		return r;
	tl_write(s, (rs_term_t *)s->xblock);
	*terms = (const rs_term_t *)s->xblock;
	*nterms = s->ntl;
	return 0;
}

/* The term list of the resolvent of (t1, n1) and (t2, n2), both sorted by
 * package, on package pkg, which t1 names: their other terms met, and the
 * union of their terms for pkg (t1's alone when t2 has none).  A merge:
 * the list comes out sorted by package. */
int rs_resolvent(rs_solver_t *s, const rs_term_t *t1, uint32_t n1, const rs_term_t *t2,
	uint32_t n2, uint32_t pkg)
{
	uint32_t i = 0, j = 0;
	bool seen = false;
	int r;

	rs_tl_reset(s);
	while (i < n1 || j < n2) {
		const rs_term_t *a = i < n1 ? &t1[i] : NULL, *b = j < n2 ? &t2[j] : NULL;
		if (a && b && a->pkg != b->pkg) {
			if (a->pkg < b->pkg)
				b = NULL;
			else
				a = NULL;
		}
		i += a != NULL;
		j += b != NULL;
		uint32_t p = a ? a->pkg : b->pkg, nw = s->pkgs[p].nwords;
		if (p == pkg) {
			/* the union: a covering one (negative, empty) drops out */
			rs_word_t *u = s->tmp2;
			bool upos;
			if (!a)
				break; /* t1 lacks it: reported below */
			seen = true;
			if (b)
				rs_term_or(a->pos, a->set, b->pos, b->set, nw, &upos, u);
			else {
				memcpy(u, a->set, nw * sizeof(rs_word_t));
				upos = a->pos;
			}
			if ((upos || !rs_set_empty(u, nw)) && (r = rs_tl_push(s, p, upos, u)))
				return r;
			continue;
		}
		if ((r = rs_tl_push(s, p, a ? a->pos : b->pos, a ? a->set : b->set)))
			return r;
		if (a && b) {
			rs_tl_ent_t *e = &s->tl[s->ntl - 1];
			rs_word_t *w = s->tw + e->off;
			bool np;
			rs_term_and(e->pos, w, b->pos, b->set, nw, &np, w);
			e->pos = np;
		}
	}
	if (!seen)
		return gpuenv_fail(s->ctx, -EINVAL, NULL, 0, 0,
			"resolver: resolution on a package the incompatibility lacks (a bug)");
	return 0;
}

/* Incompatibility id's own copy of terms (from a reused block). */
int rs_terms_keep(rs_solver_t *s, uint32_t id, const rs_term_t *terms, uint32_t n)
{
	size_t words = 0;
	for (uint32_t i = 0; i < n; i++)
		words += s->pkgs[terms[i].pkg].nwords;
	rs_term_t *t = gpuenv_arena_alloc(&s->mem, (n ? n : 1) * sizeof(*t) + words * sizeof(rs_word_t));
	if (!t)
		return oom(s);
	rs_word_t *w = (rs_word_t *)(t + n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nw = s->pkgs[terms[i].pkg].nwords;
		t[i] = terms[i];
		t[i].set = w;
		if (nw)
			memcpy(w, terms[i].set, nw * sizeof(rs_word_t));
		w += nw;
	}
	s->incs[id].terms = t;
	s->incs[id].nterms = n;
	return 0;
}

int rs_inc_terms(rs_solver_t *s, uint32_t id)
{
	uint32_t n = 0, x = id;
	int r;
	/* the steps down to one whose terms are kept (the conflict the
	 * resolution started from), then up again */
	while (!s->incs[x].terms) {
		size_t cap = s->capqueue;
		if ((r = rs_grow(s, (void **)&s->queue, &cap, n, 1, sizeof(uint32_t))))
			return r;
		s->capqueue = (uint32_t)cap;
		s->queue[n++] = x;
		x = s->incs[x].c1;
	}
	while (n) {
		bool never;
		const rs_inc_t *inc = &s->incs[s->queue[--n]];
		const rs_inc_t *c1 = &s->incs[inc->c1], *c2 = &s->incs[inc->c2];
		if ((r = rs_resolvent(s, c1->terms, c1->nterms, c2->terms, c2->nterms, inc->pivot)) ||
			(r = rs_tl_store(s, s->queue[n], &never)))
			return r;
	}
	return 0;
}
