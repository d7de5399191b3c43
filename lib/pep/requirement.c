/* PEP 508 requirements (dependency specifiers): parser, str(), equality.
 *
 * The grammar is packaging's (the reference the vectors come from):
 *   requirement = WS? IDENTIFIER WS? extras? WS? details END
 *   details     = '@' WS? URL (WS (';' marker WS?)?)?
 *               | specifier WS? (';' marker WS?)?
 *   specifier   = '(' WS? version_many WS? ')' | version_many
 *   version_many = (SPECIFIER (WS? ',' WS? SPECIFIER)*)?
 * SPECIFIER is the token packaging's Specifier regex matches; the text it
 * spans is then read as a specifier set by the PEP 440 module. */
#include "pep508_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool is_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

/* Python's \s for str patterns, ASCII part (non-ASCII white space is not
 * treated as white space; see docs/packaging-vectors.md). */
static bool is_pyspace(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* ---- the SPECIFIER token -------------------------------------------------- */

struct scan {
	const char *s;
	size_t n;
};

/* Case-insensitive literal at p; returns the end or 0. */
static size_t lit_ci(const struct scan *sc, size_t p, const char *w)
{
	size_t k = strlen(w);

	if (sc->n - p < k)
		return 0;
	for (size_t i = 0; i < k; i++)
		if ((char)gpuenv_to_lower(sc->s[p + i]) != w[i])
			return 0;
	return p + k;
}

static size_t skip_digits(const struct scan *sc, size_t p)
{
	while (p < sc->n && gpuenv_is_digit(sc->s[p]))
		p++;
	return p;
}

static size_t opt_sep(const struct scan *sc, size_t p)
{
	return (p < sc->n && is_sep(sc->s[p])) ? p + 1 : p;
}

/* [-_.]? WORD [-_.]? [0-9]*, WORD the first of words[] that matches. */
static size_t word_seg(const struct scan *sc, size_t p, const char *const *words)
{
	size_t q = opt_sep(sc, p), e = 0;

	for (size_t i = 0; words[i] && !e; i++)
		e = lit_ci(sc, q, words[i]);
	if (!e)
		return p;
	return skip_digits(sc, opt_sep(sc, e));
}

static size_t pre_seg(const struct scan *sc, size_t p)
{
	static const char *const w[] = { "alpha", "beta", "preview", "pre", "a", "b", "c", "rc",
		NULL };
	return word_seg(sc, p, w);
}

static size_t post_seg(const struct scan *sc, size_t p)
{
	static const char *const w[] = { "post", "rev", "r", NULL };

	if (p + 1 < sc->n && sc->s[p] == '-' && gpuenv_is_digit(sc->s[p + 1]))
		return skip_digits(sc, p + 1);
	return word_seg(sc, p, w);
}

static size_t dev_seg(const struct scan *sc, size_t p)
{
	static const char *const w[] = { "dev", NULL };
	return word_seg(sc, p, w);
}

/* \+[a-z0-9]+([-_.][a-z0-9]+)*; ci: letters of either case. */
static size_t local_seg(const struct scan *sc, size_t p, bool ci)
{
	size_t q;

	if (p >= sc->n || sc->s[p] != '+')
		return p;
	q = p + 1;
#define LABEL_CHAR(c) (gpuenv_is_digit(c) || ((c) >= 'a' && (c) <= 'z') || (ci && (c) >= 'A' && (c) <= 'Z'))
	if (q >= sc->n || !LABEL_CHAR(sc->s[q]))
		return p;
	while (q < sc->n && LABEL_CHAR(sc->s[q]))
		q++;
	while (q + 1 < sc->n && is_sep(sc->s[q]) && LABEL_CHAR(sc->s[q + 1])) {
		q++;
		while (q < sc->n && LABEL_CHAR(sc->s[q]))
			q++;
	}
#undef LABEL_CHAR
	return q;
}

/* The end of the SPECIFIER token at p, or p when there is none. */
static size_t match_specifier(const struct scan *sc, size_t p)
{
	enum { EQ, COMPAT, ORDER } kind;
	size_t q;

	if (lit_ci(sc, p, "===")) {
		q = p + 3;
		while (q < sc->n && is_pyspace(sc->s[q]))
			q++;
		while (q < sc->n && !is_pyspace(sc->s[q]) && sc->s[q] != ';' && sc->s[q] != ')')
			q++;
		return q;
	}
	if (lit_ci(sc, p, "==") || lit_ci(sc, p, "!=")) {
		kind = EQ;
		q = p + 2;
	} else if (lit_ci(sc, p, "~=")) {
		kind = COMPAT;
		q = p + 2;
	} else if (lit_ci(sc, p, "<=") || lit_ci(sc, p, ">=")) {
		kind = ORDER;
		q = p + 2;
	} else if (lit_ci(sc, p, "<") || lit_ci(sc, p, ">")) {
		kind = ORDER;
		q = p + 1;
	} else {
		return p;
	}
	while (q < sc->n && is_pyspace(sc->s[q]))
		q++;
	if (q < sc->n && (char)gpuenv_to_lower(sc->s[q]) == 'v')
		q++;
	/* epoch: digits followed by '!' */
	size_t d = skip_digits(sc, q);
	if (d > q && d < sc->n && sc->s[d] == '!')
		q = d + 1;
	d = skip_digits(sc, q);
	if (d == q)
		return p;
	q = d;
	size_t parts = 1;
	while (q + 1 < sc->n && sc->s[q] == '.' && gpuenv_is_digit(sc->s[q + 1])) {
		q = skip_digits(sc, q + 1);
		parts++;
	}
	if (kind == COMPAT && parts < 2)
		return p;
	if (kind == EQ && q + 1 < sc->n && sc->s[q] == '.' && sc->s[q + 1] == '*')
		return q + 2;
	q = pre_seg(sc, q);
	q = post_seg(sc, q);
	q = dev_seg(sc, q);
	if (kind == EQ)
		q = local_seg(sc, q, true);
	return q;
}

/* ---- parser --------------------------------------------------------------- */

/* IDENTIFIER: \b[a-zA-Z0-9][a-zA-Z0-9._-]*\b; returns its length or 0. */
static size_t match_ident(const struct pep508_lex *lx)
{
	size_t p = lx->pos, e;

	if (p >= lx->n || !gpuenv_is_alnum(lx->s[p]) || !pep508_boundary(lx->s, lx->n, p))
		return 0;
	e = p + 1;
	while (e < lx->n && (gpuenv_is_alnum(lx->s[e]) || is_sep(lx->s[e])))
		e++;
	/* the regex backtracks until the end sits on a word boundary */
	while (e > p + 1 && !pep508_boundary(lx->s, lx->n, e))
		e--;
	return pep508_boundary(lx->s, lx->n, e) ? e - p : 0;
}

static int add_extra(struct pep508_lex *lx, gpuenv_requirement_t *out, size_t *cap,
	gpuenv_str_t name)
{
	if (gpuenv_array_grow(lx->ctx, lx->arena, &out->extras, cap, out->nextras + 1, sizeof(*out->extras),
		    SIZE_MAX, "the extras"))
		return lx->ctx->err.code;
	out->extras[out->nextras++] = name;
	return 0;
}

static int parse_extras(struct pep508_lex *lx, gpuenv_requirement_t *out)
{
	size_t cap = 0, k;
	int r;

	lx->pos++; /* '[' */
	pep508_skip_ws(lx);
	if ((k = match_ident(lx))) {
		if ((r = add_extra(lx, out, &cap, gpuenv_str_n(lx->s + lx->pos, k))))
			return r;
		lx->pos += k;
		for (;;) {
			pep508_skip_ws(lx);
			if (match_ident(lx))
				return pep508_fail(lx, lx->pos, "Expected comma between extra names");
			if (lx->pos >= lx->n || lx->s[lx->pos] != ',')
				break;
			lx->pos++;
			pep508_skip_ws(lx);
			if (!(k = match_ident(lx)))
				return pep508_fail(lx, lx->pos, "Expected extra name after comma");
			if ((r = add_extra(lx, out, &cap, gpuenv_str_n(lx->s + lx->pos, k))))
				return r;
			lx->pos += k;
		}
	}
	pep508_skip_ws(lx);
	if (lx->pos >= lx->n || lx->s[lx->pos] != ']')
		return pep508_fail(lx, lx->pos,
			"Expected matching RIGHT_BRACKET for LEFT_BRACKET, after extras");
	lx->pos++;
	return 0;
}

/* version_many: leaves [*start, *end) spanning the clauses and commas. */
static int parse_version_many(struct pep508_lex *lx, size_t *start, size_t *end)
{
	struct scan sc = { lx->s, lx->n };
	size_t e;

	*start = *end = lx->pos;
	while ((e = match_specifier(&sc, lx->pos)) > lx->pos) {
		size_t tok = lx->pos;
		lx->pos = *end = e;
		if (e + 1 < lx->n && lx->s[e] == '.' && lx->s[e + 1] == '*') {
			if (lit_ci(&sc, tok, "==") || lit_ci(&sc, tok, "!="))
				return pep508_fail(lx, e + 1,
					".* suffix cannot be used with pre-release, post-release, dev or local versions");
			return pep508_fail(lx, e + 1,
				".* suffix can only be used with `==` or `!=` operators");
		}
		if (local_seg(&sc, e, false) > e)
			return pep508_fail(lx, e,
				"Local version label can only be used with `==` or `!=` operators");
		pep508_skip_ws(lx);
		if (lx->pos >= lx->n || lx->s[lx->pos] != ',')
			break;
		lx->pos++;
		*end = lx->pos;
		pep508_skip_ws(lx);
	}
	return 0;
}

static int parse_specifier(struct pep508_lex *lx, gpuenv_requirement_t *out, bool *nonempty)
{
	bool paren = lx->pos < lx->n && lx->s[lx->pos] == '(';
	size_t start, end;
	int r;

	if (paren)
		lx->pos++;
	pep508_skip_ws(lx);
	if ((r = parse_version_many(lx, &start, &end)))
		return r;
	pep508_skip_ws(lx);
	if (paren) {
		if (lx->pos >= lx->n || lx->s[lx->pos] != ')')
			return pep508_fail(lx, lx->pos,
				"Expected matching RIGHT_PARENTHESIS for LEFT_PARENTHESIS, after version specifier");
		lx->pos++;
	}
	*nonempty = end > start;
	if (!*nonempty)
		return 0;
	r = gpuenv_specset_parse(lx->ctx, lx->arena, gpuenv_str_n(lx->s + start, end - start),
		&out->spec);
	if (r == -ENOMEM)
		return r;
	if (r) {
		/* the clause matched the token but the set rejects it ("===x,y") */
		char msg[sizeof(lx->ctx->err.msg)];
		unsigned col = lx->ctx->err.line <= 1 ? lx->ctx->err.col : 0;
		memcpy(msg, lx->ctx->err.msg, sizeof(msg));
		return pep508_fail(lx, start + (col ? col - 1 : 0), "%s", msg);
	}
	return 0;
}

static int parse_marker_part(struct pep508_lex *lx, gpuenv_requirement_t *out,
	const char *expected)
{
	int r;

	if (lx->pos >= lx->n || lx->s[lx->pos] != ';')
		return pep508_fail(lx, lx->pos, "Expected %s or end", expected);
	lx->pos++;
	if ((r = pep508_parse_marker(lx, &out->marker)))
		return r;
	pep508_skip_ws(lx);
	return 0;
}

static int parse_details(struct pep508_lex *lx, gpuenv_requirement_t *out)
{
	bool nonempty;
	int r;

	if (lx->pos < lx->n && lx->s[lx->pos] == '@') {
		lx->pos++;
		pep508_skip_ws(lx);
		size_t u = lx->pos;
		while (lx->pos < lx->n && !pep508_is_ws(lx->s[lx->pos]))
			lx->pos++;
		if (lx->pos == u)
			return pep508_fail(lx, u, "Expected URL after @");
		out->url = gpuenv_str_n(lx->s + u, lx->pos - u);
		/* the URL stops only at white space or the end */
		pep508_skip_ws(lx);
		if (lx->pos == lx->n)
			return 0;
		return parse_marker_part(lx, out, "semicolon (after URL and whitespace)");
	}
	if ((r = parse_specifier(lx, out, &nonempty)))
		return r;
	pep508_skip_ws(lx);
	if (lx->pos == lx->n)
		return 0;
	return parse_marker_part(lx, out,
		nonempty ? "comma (within version specifier), semicolon (after version specifier)"
			 : "semicolon (after name with no version specifier)");
}

int gpuenv_requirement_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	gpuenv_requirement_t *out)
{
	struct pep508_lex lx = { .ctx = ctx, .arena = arena, .code = GPUENV_EREQ };
	size_t k;
	int r;

	memset(out, 0, sizeof(*out));
	out->spec.prereleases = GPUENV_PRERELEASES_DEFAULT;
	if (text.len > PEP508_MAX_TEXT)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"requirement longer than %zu bytes", PEP508_MAX_TEXT);
	/* the fields slice into this copy, so they outlive the caller's text */
	lx.s = gpuenv_arena_strndup(arena, text.len ? text.ptr : "", text.len);
	if (!lx.s)
		return gpuenv_oom(ctx, "parsing a requirement");
	lx.n = text.len;

	pep508_skip_ws(&lx);
	if (!(k = match_ident(&lx)))
		r = pep508_fail(&lx, lx.pos, "Expected package name at the start of dependency specifier");
	else {
		out->name = gpuenv_str_n(lx.s + lx.pos, k);
		lx.pos += k;
		pep508_skip_ws(&lx);
		r = 0;
		if (lx.pos < lx.n && lx.s[lx.pos] == '[')
			r = parse_extras(&lx, out);
		if (!r) {
			pep508_skip_ws(&lx);
			r = parse_details(&lx, out);
		}
		if (!r && lx.pos != lx.n)
			r = pep508_fail(&lx, lx.pos, "Expected end of dependency specifier");
	}
	if (r) {
		memset(out, 0, sizeof(*out));
		out->spec.prereleases = GPUENV_PRERELEASES_DEFAULT;
	}
	return r;
}

/* ---- str() ------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return gpuenv_str_cmp(*(const gpuenv_str_t *)a, *(const gpuenv_str_t *)b);
}

int gpuenv_requirement_format(const gpuenv_requirement_t *req, gpuenv_buf_t *out)
{
	int r;

	if ((r = gpuenv_buf_append(out, req->name.ptr, req->name.len)))
		return r;
	if (req->nextras) {
		/* a set upstream: sorted, duplicates dropped, not normalised */
		gpuenv_str_t *ex = gpuenv_calloc(out->ctx, req->nextras, sizeof(*ex));
		if (!ex)
			return gpuenv_oom(out->ctx, "parsing a requirement");
		memcpy(ex, req->extras, req->nextras * sizeof(*ex));
		qsort(ex, req->nextras, sizeof(*ex), cmp_str);
		r = gpuenv_buf_putc(out, '[');
		for (size_t i = 0; !r && i < req->nextras; i++) {
			if (i && gpuenv_str_eq(ex[i], ex[i - 1]))
				continue;
			if (i)
				r = gpuenv_buf_putc(out, ',');
			if (!r)
				r = gpuenv_buf_append(out, ex[i].ptr, ex[i].len);
		}
		gpuenv_free(out->ctx, ex);
		if (r || (r = gpuenv_buf_putc(out, ']')))
			return r;
	}
	if (req->spec.n && (r = gpuenv_specset_format(&req->spec, out)))
		return r;
	if (req->url.len) {
		if ((r = gpuenv_buf_puts(out, " @ ")) ||
			(r = gpuenv_buf_append(out, req->url.ptr, req->url.len)))
			return r;
		/* a ';' right after the URL would be read as part of it */
		if (req->marker && (r = gpuenv_buf_putc(out, ' ')))
			return r;
	}
	if (req->marker) {
		if ((r = gpuenv_buf_puts(out, "; ")))
			return r;
		return gpuenv_marker_format(req->marker, out);
	}
	return 0;
}

/* ---- equality ------------------------------------------------------------- */

/* Every clause of a has an equal clause in b (packaging compares the sets
 * of clauses, each by operator and canonical version). */
int gpuenv_requirement_specset_eq(gpuenv_ctx_t *ctx, const gpuenv_specset_t *a,
	const gpuenv_specset_t *b, bool *equal)
{
	int r = gpuenv_specset_eq(ctx, a, b);

	if (r < 0)
		return r;
	*equal = r == 1;
	return 0;
}

static bool canon_in(gpuenv_arena_t *ar, gpuenv_str_t x, const gpuenv_requirement_t *r, int *err)
{
	gpuenv_str_t cx, cy;

	if (pep508_canon_name(ar, x, &cx)) {
		*err = -ENOMEM;
		return false;
	}
	for (size_t i = 0; i < r->nextras; i++) {
		if (pep508_canon_name(ar, r->extras[i], &cy)) {
			*err = -ENOMEM;
			return false;
		}
		if (gpuenv_str_eq(cx, cy))
			return true;
	}
	return false;
}

int gpuenv_requirement_eq(gpuenv_ctx_t *ctx, const gpuenv_requirement_t *a,
	const gpuenv_requirement_t *b, bool *equal)
{
	gpuenv_arena_t ar;
	gpuenv_str_t na, nb;
	bool same = true;
	int err = 0;

	*equal = false;
	gpuenv_arena_init(&ar, ctx, 0);
	if (pep508_canon_name(&ar, a->name, &na) || pep508_canon_name(&ar, b->name, &nb))
		err = -ENOMEM;
	else
		same = gpuenv_str_eq(na, nb) && gpuenv_str_eq(a->url, b->url);
	for (size_t i = 0; !err && same && i < a->nextras; i++)
		same = canon_in(&ar, a->extras[i], b, &err);
	for (size_t i = 0; !err && same && i < b->nextras; i++)
		same = canon_in(&ar, b->extras[i], a, &err);
	gpuenv_arena_free(&ar);
	if (err)
		return err;
	if (same && (err = gpuenv_requirement_specset_eq(ctx, &a->spec, &b->spec, &same)))
		return err;
	if (same && (err = gpuenv_marker_eq(ctx, a->marker, b->marker, &same)))
		return err;
	*equal = same;
	return 0;
}
