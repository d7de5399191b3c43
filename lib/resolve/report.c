/* The explanation of a failed resolution, written from the derivation tree
 * of the failure (PubGrub's error reporting): each derived incompatibility
 * becomes one "Because X and Y, Z." line, derivations used more than once
 * get a line number so later lines can cite them, and chains of one derived
 * and one external cause read as "And because ...".  Then one note per
 * package the explanation names that had versions left out (the resolver's
 * yanked and pre-release rules, and the provider's excluded() text: wheel
 * tags, requires-python, the hardware).  docs/resolver.md has the format. */
#include "resolve_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RS_MAX_RUNS 6
/* Lines of derivation written at most: a failure learned over thousands of
 * conflicts is written as its last steps, the rest cited as facts with the
 * number of steps left out. */
#define RS_REPORT_LINES 40

typedef struct rep_line {
	char *text;
	uint32_t number; /* 0: none */
} rep_line_t;

typedef struct rep {
	rs_solver_t *s;
	uint32_t *derivs;  /* per incompatibility: times used in the tree */
	uint32_t *lineno;  /* per incompatibility: its line number, 0 */
	rep_line_t *lines;
	size_t nlines, cap;
	uint32_t numbers;
	bool *named; /* packages the explanation names */
	uint8_t *chain; /* per incompatibility: 0 not looked at, 1 a chain, 2 not */
	uint32_t *chain_dep; /* a chain's first dependency edge (its text) */
	uint32_t *size;	 /* per incompatibility: lines its derivation takes
			    written as a tree (saturating) */
	uint8_t *plan;	 /* per incompatibility: 1 written out, 2 cut (cited
			    as a fact, its derivation left out) */
	uint32_t *cut_steps; /* per cut incompatibility: steps left out under it */
	size_t left_out;     /* derivation steps left out in all */
	int err;
} rep_t;

int rs_describe_set(const rs_solver_t *s, uint32_t pkg, const rs_word_t *set, gpuenv_buf_t *b)
{
	const rs_pkg_t *p = &s->pkgs[pkg];
	uint32_t n = p->ncand, count = 0, runs = 0;
	int r;

	if ((r = gpuenv_buf_puts(b, pkg == RS_ROOT ? "the project" : p->name)))
		return r;
	if (pkg == RS_ROOT)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		count += (set[i / 64] >> (i % 64)) & 1;
	if (count == 1) {
		for (uint32_t i = 0; i < n; i++)
			if ((set[i / 64] >> (i % 64)) & 1)
				return gpuenv_buf_printf(b, " %s", p->cand[i]->version);
	}
	if (count == 0)
		return gpuenv_buf_puts(b, " (no version)");
	if (count == n)
		return 0;
	/* runs in ascending version order: index n-1 is the oldest */
	int64_t i = (int64_t)n - 1;
	if ((r = gpuenv_buf_putc(b, ' ')))
		return r;
	while (i >= 0) {
		if (!((set[i / 64] >> (i % 64)) & 1)) {
			i--;
			continue;
		}
		int64_t lo = i;
		while (i - 1 >= 0 && ((set[(i - 1) / 64] >> ((i - 1) % 64)) & 1))
			i--;
		int64_t hi = i;
		i--;
		if (runs == RS_MAX_RUNS) {
			uint32_t rest = 0;
			for (int64_t k = hi; k >= 0; k--)
				rest += (set[k / 64] >> (k % 64)) & 1;
			return gpuenv_buf_printf(b, " | ... (%u more)", rest);
		}
		if (runs++ && (r = gpuenv_buf_puts(b, " | ")))
			return r;
		const char *lv = p->cand[lo]->version, *hv = p->cand[hi]->version;
		if (lo == hi)
			r = gpuenv_buf_printf(b, "==%s", lv);
		else if (lo == (int64_t)n - 1)
			r = gpuenv_buf_printf(b, "<=%s", hv);
		else if (hi == 0)
			r = gpuenv_buf_printf(b, ">=%s", lv);
		else
			r = gpuenv_buf_printf(b, ">=%s,<=%s", lv, hv);
		if (r)
			return r;
	}
	return 0;
}

static void chain_versions(rep_t *rp, uint32_t id, rs_word_t *set);

static int term_str(rep_t *rp, const rs_term_t *t, gpuenv_buf_t *b)
{
	rp->named[rp->s->pkgs[t->pkg].base] = true;
	return rs_describe_set(rp->s, t->pkg, t->set, b);
}

static int depender_str(rep_t *rp, const rs_inc_t *inc, gpuenv_buf_t *b)
{
	const rs_solver_t *s = rp->s;
	if (inc->dep_from == RS_ROOT)
		return gpuenv_buf_puts(b, "the project");
	rp->named[s->pkgs[inc->dep_from].base] = true;
	return gpuenv_buf_printf(b, "%s %s", s->pkgs[inc->dep_from].name,
		s->pkgs[inc->dep_from].cand[inc->dep_ver]->version);
}

/* One incompatibility as a clause ("a 1.0.0 depends on b >=2"). */
static int inc_str(rep_t *rp, uint32_t id, gpuenv_buf_t *b)
{
	const rs_solver_t *s = rp->s;
	const rs_inc_t *inc = &s->incs[id];
	int r;

	switch (inc->kind) {
	case RS_INC_ROOT:
		return gpuenv_buf_puts(b, "the project is required");
	case RS_INC_DEP:
	case RS_INC_DEP_TEXT:
		rp->named[s->pkgs[inc->dep_to].base] = true;
		if ((r = depender_str(rp, inc, b)))
			return r;
		return gpuenv_buf_printf(b, " depends on %s", inc->dep_text);
	case RS_INC_NOVERS: {
		const rs_pkg_t *to = &s->pkgs[inc->dep_to];
		const char *bn = s->pkgs[to->base].name;
		rp->named[to->base] = true;
		if (inc->nv_reason == RS_NV_NOTFOUND)
			return gpuenv_buf_printf(b, "no index offers %s", bn);
		if (inc->nv_reason == RS_NV_NONE)
			return gpuenv_buf_printf(b, "no version of %s can be used", bn);
		if (!inc->spec_text[0])
			return gpuenv_buf_printf(b, "no versions of %s can be used", to->name);
		return gpuenv_buf_printf(b, "no versions of %s match %s", to->name, inc->spec_text);
	}
	default:
		break;
	}
	if (rp->chain[id] == 1) {
		const rs_inc_t *e = &s->incs[rp->chain_dep[id]];
		const rs_pkg_t *f = &s->pkgs[e->dep_from];
		rs_word_t *set = gpuenv_arena_calloc(&rp->s->mem, f->nwords ? f->nwords : 1, sizeof(rs_word_t));
		if (!set)
			return -ENOMEM;
		chain_versions(rp, id, set);
		rp->named[f->base] = true;
		rp->named[s->pkgs[e->dep_to].base] = true;
		if ((r = rs_describe_set(s, e->dep_from, set, b)))
			return r;
		return gpuenv_buf_printf(b, " depends on %s", e->dep_text);
	}
	/* derived: by its terms, the always-selected root left out */
	const rs_term_t *pos[64], *neg[64];
	uint32_t np = 0, nn = 0;
	if (!inc->terms && (r = rs_inc_terms(rp->s, id)))
		return r;
	for (uint32_t i = 0; i < inc->nterms; i++) {
		const rs_term_t *t = &inc->terms[i];
		if (t->pkg == RS_ROOT && t->pos)
			continue;
		if (t->pos && np < 64)
			pos[np++] = t;
		else if (!t->pos && nn < 64)
			neg[nn++] = t;
	}
	if (np + nn == 0)
		return gpuenv_buf_puts(b, "version solving failed");
	if (np + nn == 1) {
		if ((r = term_str(rp, np ? pos[0] : neg[0], b)))
			return r;
		return gpuenv_buf_puts(b, np ? " is forbidden" : " is required");
	}
	if (nn == 0) {
		for (uint32_t i = 0; i < np; i++) {
			if (i && (r = gpuenv_buf_puts(b, i + 1 == np ? (np == 2 ? " is incompatible with " : " and ") : ", ")))
				return r;
			if ((r = term_str(rp, pos[i], b)))
				return r;
		}
		return np == 2 ? 0 : gpuenv_buf_puts(b, " are incompatible");
	}
	if (np == 0) {
		if (nn > 2 && (r = gpuenv_buf_puts(b, "one of ")))
			return r;
		for (uint32_t i = 0; i < nn; i++) {
			if (i && (r = gpuenv_buf_puts(b, i + 1 == nn ? " or " : ", ")))
				return r;
			if ((r = term_str(rp, neg[i], b)))
				return r;
		}
		return gpuenv_buf_puts(b, " is required");
	}
	for (uint32_t i = 0; i < np; i++) {
		if (i && (r = gpuenv_buf_puts(b, i + 1 == np ? " and " : ", ")))
			return r;
		if ((r = term_str(rp, pos[i], b)))
			return r;
	}
	if ((r = gpuenv_buf_puts(b, np == 1 ? " requires " : " require ")))
		return r;
	for (uint32_t i = 0; i < nn; i++) {
		if (i && (r = gpuenv_buf_puts(b, i + 1 == nn ? " or " : ", ")))
			return r;
		if ((r = term_str(rp, neg[i], b)))
			return r;
	}
	return 0;
}

static bool is_dep(const rep_t *rp, uint32_t id)
{
	return rp->s->incs[id].kind == RS_INC_DEP;
}

static bool same_edge(const rep_t *rp, uint32_t a, uint32_t b)
{
	const rs_inc_t *x = &rp->s->incs[a], *y = &rp->s->incs[b];
	return x->dep_from == y->dep_from && x->dep_to == y->dep_to &&
	       !strcmp(x->dep_text, y->dep_text);
}

/* A chain: a derived incompatibility, used once and cited by no line, made
 * only of one dependency edge ("b V depends on c >=2") of several versions
 * of one package.  pubgrub-rs gets the same from dependency ranges; here
 * the explanation folds the chain into one clause, "b <=11.0 depends on
 * c >=2", and treats it as an external fact.  Iterative: chains can be as
 * long as a package has versions. */
static bool is_chain(rep_t *rp, uint32_t id)
{
	const rs_solver_t *s = rp->s;
	uint32_t x = id, edge = UINT32_MAX;

	if (rp->chain[id])
		return rp->chain[id] == 1;
	for (;;) {
		const rs_inc_t *inc = &s->incs[x];
		if (inc->kind != RS_INC_DERIVED || rp->derivs[x] > 1 || rp->lineno[x])
			break;
		uint32_t a = inc->c1, b = inc->c2;
		if (is_dep(rp, a) && is_dep(rp, b)) {
			if (!same_edge(rp, a, b) || (edge != UINT32_MAX && !same_edge(rp, a, edge)))
				break;
			rp->chain[id] = 1;
			rp->chain_dep[id] = a;
			return true;
		}
		uint32_t ext = is_dep(rp, a) ? a : is_dep(rp, b) ? b : UINT32_MAX;
		if (ext == UINT32_MAX || (edge != UINT32_MAX && !same_edge(rp, ext, edge)))
			break;
		edge = ext;
		x = ext == a ? b : a;
	}
	rp->chain[id] = 2;
	return false;
}

/* The versions of a chain's package it covers, into set. */
static void chain_versions(rep_t *rp, uint32_t id, rs_word_t *set)
{
	const rs_solver_t *s = rp->s;
	for (uint32_t x = id;;) {
		const rs_inc_t *inc = &s->incs[x];
		if (inc->kind == RS_INC_DEP) {
			rs_set_bit(set, inc->dep_ver);
			return;
		}
		uint32_t a = inc->c1, b = inc->c2;
		if (is_dep(rp, a) && is_dep(rp, b)) {
			rs_set_bit(set, s->incs[a].dep_ver);
			rs_set_bit(set, s->incs[b].dep_ver);
			return;
		}
		uint32_t ext = is_dep(rp, a) ? a : b;
		rs_set_bit(set, s->incs[ext].dep_ver);
		x = ext == a ? b : a;
	}
}

/* Derived, for the layout of the explanation (a chain, and a derivation
 * cut for length, read as facts). */
static bool derived(rep_t *rp, uint32_t id)
{
	return rp->s->incs[id].kind == RS_INC_DERIVED && !is_chain(rp, id) && rp->plan[id] != 2;
}

/* Derived in the tree, whether written out or cut. */
static bool derivation(rep_t *rp, uint32_t id)
{
	return rp->s->incs[id].kind == RS_INC_DERIVED && !is_chain(rp, id);
}

/* Lines each derivation takes written as a tree, in creation order (an
 * incompatibility's causes are older than it). */
static void sizes(rep_t *rp)
{
	const rs_solver_t *s = rp->s;
	for (uint32_t id = 0; id < s->nincs; id++) {
		if (!rp->derivs[id] || !derivation(rp, id))
			continue;
		uint64_t z = 1 + (uint64_t)rp->size[s->incs[id].c1] + rp->size[s->incs[id].c2];
		rp->size[id] = z > UINT32_MAX ? UINT32_MAX : (uint32_t)z;
	}
}

/* Which derivations are written within budget lines: all of id's when it
 * fits; else id's own line, then its causes, the smaller first, each
 * within what is left (so the steps nearest the failure are written and
 * the deepest cut).  Returns the lines used. */
static uint32_t plan(rep_t *rp, uint32_t id, uint32_t budget)
{
	const rs_inc_t *inc = &rp->s->incs[id];
	if (!derivation(rp, id) || rp->plan[id])
		return 0; /* a fact, or written once and cited after */
	if (budget == 0) {
		rp->plan[id] = 2;
		return 0;
	}
	rp->plan[id] = 1;
	if (rp->size[id] <= budget) {
		/* all of it: mark the tree written */
		uint32_t used = 1;
		used += plan(rp, inc->c1, rp->size[inc->c1]);
		used += plan(rp, inc->c2, rp->size[inc->c2]);
		return used;
	}
	uint32_t a = inc->c1, b = inc->c2, used = 1;
	if (rp->size[b] < rp->size[a]) {
		a = inc->c2;
		b = inc->c1;
	}
	used += plan(rp, a, budget - used);
	used += plan(rp, b, budget - used);
	return used;
}

/* Steps under the cut derivation id not written anywhere, counted once
 * (iterative: the tree can be deep). */
static uint32_t count_cut(rep_t *rp, uint32_t id, uint32_t *stack, uint8_t *seen)
{
	const rs_solver_t *s = rp->s;
	uint32_t n = 0, steps = 0;
	stack[n++] = id;
	while (n) {
		uint32_t x = stack[--n];
		if (s->incs[x].kind != RS_INC_DERIVED || seen[x] || (x != id && rp->plan[x] == 1))
			continue;
		seen[x] = 1;
		steps++;
		stack[n++] = s->incs[x].c1;
		stack[n++] = s->incs[x].c2;
	}
	return steps;
}

/* Times each derived incompatibility is used; its causes counted once. */
static void count(rep_t *rp, uint32_t id)
{
	/* iterative: the tree can be deep */
	uint32_t *stack = gpuenv_arena_alloc(&rp->s->mem, (2 * (size_t)rp->s->nincs + 2) * sizeof(uint32_t));
	size_t n = 0;
	if (!stack) {
		rp->err = -12;
		return;
	}
	stack[n++] = id;
	while (n) {
		uint32_t x = stack[--n];
		if (rp->s->incs[x].kind != RS_INC_DERIVED)
			continue;
		if (rp->derivs[x]++)
			continue;
		const rs_inc_t *inc = &rp->s->incs[x];
		stack[n++] = inc->c2;
		stack[n++] = inc->c1;
	}
}

/* A line ending in this incompatibility: numbered when asked to or when
 * other lines will cite it. */
static void emit(rep_t *rp, uint32_t id, gpuenv_buf_t *msg, bool numbered)
{
	if (rp->err)
		return;
	if (gpuenv_array_grow(rp->s->mem.ctx, &rp->s->mem, &rp->lines, &rp->cap, rp->nlines + 1,
		    sizeof(*rp->lines), SIZE_MAX, "the explanation")) {
		rp->err = -ENOMEM;
		return;
	}
	rep_line_t *l = &rp->lines[rp->nlines++];
	l->text = gpuenv_arena_strndup(&rp->s->mem, msg->data ? msg->data : "", msg->len);
	l->number = 0;
	if (!l->text) {
		rp->err = -12;
		return;
	}
	if (numbered && id != UINT32_MAX) {
		l->number = ++rp->numbers;
		rp->lineno[id] = l->number;
	}
}

/* clause text, plus " (N)" when it has a line, or what was left out */
static int cite(rep_t *rp, uint32_t id, gpuenv_buf_t *b)
{
	int r = inc_str(rp, id, b);
	if (!r && rp->lineno[id])
		r = gpuenv_buf_printf(b, " (%u)", rp->lineno[id]);
	if (!r && rp->plan[id] == 2)
		r = gpuenv_buf_printf(b, " [%u step%s not shown]", rp->cut_steps[id],
			rp->cut_steps[id] == 1 ? "" : "s");
	return r;
}

static bool single_line(rep_t *rp, uint32_t id)
{
	const rs_inc_t *inc = &rp->s->incs[id];
	return !derived(rp, inc->c1) && !derived(rp, inc->c2);
}

/* One derived cause without a line and one external: the derived one's
 * own line can be folded into this one. */
static bool collapsible(rep_t *rp, uint32_t id)
{
	if (rp->derivs[id] > 1)
		return false;
	const rs_inc_t *inc = &rp->s->incs[id];
	bool d1 = derived(rp, inc->c1), d2 = derived(rp, inc->c2);
	if (d1 == d2)
		return false;
	uint32_t complex = d1 ? inc->c1 : inc->c2;
	return rp->lineno[complex] == 0;
}


/* "A and B", or "X depends on both A and B" when both are dependencies
 * of one version */
static int and_str(rep_t *rp, uint32_t a, uint32_t b, gpuenv_buf_t *m)
{
	const rs_inc_t *x = &rp->s->incs[a], *y = &rp->s->incs[b];
	bool xd = x->kind == RS_INC_DEP || x->kind == RS_INC_DEP_TEXT;
	bool yd = y->kind == RS_INC_DEP || y->kind == RS_INC_DEP_TEXT;
	int r;

	if (xd && yd && !rp->lineno[a] && !rp->lineno[b] && x->dep_from == y->dep_from &&
		x->dep_ver == y->dep_ver) {
		rp->named[rp->s->pkgs[x->dep_to].base] = true;
		rp->named[rp->s->pkgs[y->dep_to].base] = true;
		if ((r = depender_str(rp, x, m)))
			return r;
		bool swap = strcmp(x->dep_text, y->dep_text) > 0;
		return gpuenv_buf_printf(m, " depends on both %s and %s", swap ? y->dep_text : x->dep_text,
			swap ? x->dep_text : y->dep_text);
	}
	r = cite(rp, a, m);
	r = r ? r : gpuenv_buf_puts(m, " and ");
	return r ? r : cite(rp, b, m);
}

static void visit(rep_t *rp, uint32_t id, bool conclusion, uint32_t depth);

static void visit(rep_t *rp, uint32_t id, bool conclusion, uint32_t depth)
{
	const rs_inc_t *inc = &rp->s->incs[id];
	bool numbered = conclusion || rp->derivs[id] > 1;
	const char *conj = depth == 0 || conclusion ? "So, because" : "And because";
	uint32_t c1 = inc->c1, c2 = inc->c2;
	gpuenv_buf_t m;
	int r = 0;

	if (rp->err)
		return;
	if (depth > 4096) { /* a derivation too deep to write out */
		gpuenv_buf_init(&m, rp->s->ctx, 1 << 20);
		if (gpuenv_buf_puts(&m, "... (the derivation is too deep to write out)"))
			rp->err = -12;
		emit(rp, UINT32_MAX, &m, false);
		gpuenv_buf_free(&m);
		return;
	}
	gpuenv_buf_init(&m, rp->s->ctx, 1 << 20);
	if (derived(rp, c1) && derived(rp, c2)) {
		uint32_t l1 = rp->lineno[c1], l2 = rp->lineno[c2];
		if (l1 && l2) {
			r = gpuenv_buf_puts(&m, "Because ");
			r = r ? r : cite(rp, c1, &m);
			r = r ? r : gpuenv_buf_puts(&m, " and ");
			r = r ? r : cite(rp, c2, &m);
		} else if (l1 || l2) {
			uint32_t with = l1 ? c1 : c2, without = l1 ? c2 : c1;
			visit(rp, without, false, depth + 1);
			r = gpuenv_buf_printf(&m, "%s ", conj);
			r = r ? r : cite(rp, with, &m);
		} else if (single_line(rp, c1) || single_line(rp, c2)) {
			uint32_t first = single_line(rp, c2) ? c1 : c2;
			uint32_t second = first == c1 ? c2 : c1;
			visit(rp, first, false, depth + 1);
			visit(rp, second, false, depth + 1);
			r = gpuenv_buf_puts(&m, "Thus");
		} else {
			visit(rp, c1, true, depth + 1);
			gpuenv_buf_t blank;
			gpuenv_buf_init(&blank, rp->s->ctx, 16);
			emit(rp, UINT32_MAX, &blank, false);
			gpuenv_buf_free(&blank);
			visit(rp, c2, false, depth + 1);
			r = gpuenv_buf_printf(&m, "%s ", conj);
			r = r ? r : cite(rp, c1, &m);
		}
	} else if (derived(rp, c1) || derived(rp, c2)) {
		uint32_t d = derived(rp, c1) ? c1 : c2, ext = d == c1 ? c2 : c1;
		if (rp->lineno[d]) {
			r = gpuenv_buf_puts(&m, "Because ");
			r = r ? r : cite(rp, ext, &m);
			r = r ? r : gpuenv_buf_puts(&m, " and ");
			r = r ? r : cite(rp, d, &m);
		} else if (collapsible(rp, d)) {
			const rs_inc_t *di = &rp->s->incs[d];
			uint32_t cd = derived(rp, di->c1) ? di->c1 : di->c2;
			uint32_t ce = cd == di->c1 ? di->c2 : di->c1;
			visit(rp, cd, false, depth + 1);
			r = gpuenv_buf_printf(&m, "%s ", conj);
			r = r ? r : and_str(rp, ce, ext, &m);
		} else {
			visit(rp, d, false, depth + 1);
			r = gpuenv_buf_printf(&m, "%s ", conj);
			r = r ? r : cite(rp, ext, &m);
		}
	} else {
		r = gpuenv_buf_puts(&m, "Because ");
		r = r ? r : and_str(rp, c1, c2, &m);
	}
	r = r ? r : gpuenv_buf_puts(&m, ", ");
	r = r ? r : inc_str(rp, id, &m);
	r = r ? r : gpuenv_buf_putc(&m, '.');
	if (r)
		rp->err = r;
	emit(rp, id, &m, numbered);
	gpuenv_buf_free(&m);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *rs_report(rs_solver_t *s, uint32_t failure)
{
	rep_t rp;
	gpuenv_buf_t out;
	const char *res = NULL;

	memset(&rp, 0, sizeof(rp));
	rp.s = s;
	rp.derivs = gpuenv_arena_calloc(&s->mem, s->nincs, sizeof(uint32_t));
	rp.lineno = gpuenv_arena_calloc(&s->mem, s->nincs, sizeof(uint32_t));
	rp.named = gpuenv_arena_calloc(&s->mem, s->npkgs, sizeof(bool));
	rp.chain = gpuenv_arena_calloc(&s->mem, s->nincs, 1);
	rp.chain_dep = gpuenv_arena_calloc(&s->mem, s->nincs, sizeof(uint32_t));
	rp.size = gpuenv_arena_calloc(&s->mem, s->nincs, sizeof(uint32_t));
	rp.plan = gpuenv_arena_calloc(&s->mem, s->nincs, 1);
	rp.cut_steps = gpuenv_arena_calloc(&s->mem, s->nincs, sizeof(uint32_t));
	uint8_t *seen = gpuenv_arena_calloc(&s->mem, s->nincs, 1);
	uint32_t *stack = gpuenv_arena_alloc(&s->mem, (2 * (size_t)s->nincs + 2) * sizeof(uint32_t));
	if (!rp.derivs || !rp.lineno || !rp.named || !rp.chain || !rp.chain_dep || !rp.size ||
		!rp.plan || !rp.cut_steps || !seen || !stack)
		goto nomem;
	count(&rp, failure);
	if (!rp.err) {
		sizes(&rp);
		plan(&rp, failure, RS_REPORT_LINES);
		for (uint32_t id = 0; id < s->nincs; id++)
			if (rp.plan[id] == 2) {
				rp.cut_steps[id] = count_cut(&rp, id, stack, seen);
				rp.left_out += rp.cut_steps[id];
			}
		visit(&rp, failure, false, 0);
	}
	if (rp.err)
		goto nomem;
	gpuenv_buf_init(&out, s->ctx, (size_t)1 << 26);
	int width = 0;
	if (rp.numbers)
		width = snprintf(NULL, 0, "(%u) ", rp.numbers);
	for (size_t i = 0; i < rp.nlines; i++) {
		const rep_line_t *l = &rp.lines[i];
		int r;
		if (!l->text[0])
			r = gpuenv_buf_putc(&out, '\n');
		else if (l->number) {
			char num[32];
			snprintf(num, sizeof(num), "(%u)", l->number);
			r = gpuenv_buf_printf(&out, "%-*s%s\n", width, num, l->text);
		} else
			r = gpuenv_buf_printf(&out, "%*s%s\n", width, "", l->text);
		if (r)
			goto nomem_out;
	}
	if (rp.left_out && gpuenv_buf_printf(&out,
				   "(%zu more step%s of the derivation, from %zu conflict%s, not shown: "
				   "a clause marked [N steps not shown] is what they prove)\n",
				   rp.left_out, rp.left_out == 1 ? "" : "s", s->conflicts,
				   s->conflicts == 1 ? "" : "s"))
		goto nomem_out;
	/* notes on the packages named: why versions were left out */
	const char **names = gpuenv_arena_alloc(&s->mem, (s->npkgs ? s->npkgs : 1) * sizeof(char *));
	size_t nn = 0;
	if (!names)
		goto nomem_out;
	for (uint32_t p = 1; p < s->npkgs; p++)
		if (rp.named[p] && s->pkgs[p].base == p)
			names[nn++] = s->pkgs[p].name;
	qsort(names, nn, sizeof(char *), name_cmp);
	for (size_t i = 0; i < nn; i++) {
		int32_t p = -1;
		for (uint32_t k = 1; k < s->npkgs && p < 0; k++)
			if (s->pkgs[k].name == names[i])
				p = (int32_t)k;
		const char *why = s->prov->excluded ? s->prov->excluded(s->prov->self, names[i]) : NULL;
		if (why && why[0] && gpuenv_buf_printf(&out, "note: %s\n", why))
			goto nomem_out;
		if (p >= 0 && s->pkgs[p].note && gpuenv_buf_printf(&out, "note: %s\n", s->pkgs[p].note))
			goto nomem_out;
	}
	/* no trailing newline: callers print it as one block */
	while (out.len && out.data[out.len - 1] == '\n')
		out.data[--out.len] = '\0';
	res = gpuenv_arena_strndup(s->out, out.data ? out.data : "", out.len);
	gpuenv_buf_free(&out);
	if (!res)
		goto nomem;
	return res;
nomem_out:
	gpuenv_buf_free(&out);
nomem:
	gpuenv_oom(s->ctx, "writing the explanation");
	return NULL;
}
