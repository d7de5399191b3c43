/* Shared between requirement.c and marker.c: the scanner state and the
 * character classes of packaging's tokenizer (which is regex based; these
 * helpers reproduce its rules byte by byte). Not installed. */
#ifndef GPUENV_PEP508_INTERNAL_H
#define GPUENV_PEP508_INTERNAL_H

#include "gpuenv/pep508.h"

/* Longest requirement or marker text accepted (a URL can be long, but a
 * megabyte is far beyond any real one). */
#define PEP508_MAX_TEXT ((size_t)1 << 20)
/* Deepest nesting of parentheses in a marker. */
#define PEP508_MAX_DEPTH 64

struct pep508_lex {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *s; /* the text, copied into the arena */
	size_t n, pos;
	int code;       /* GPUENV_EREQ or GPUENV_EMARKER */
	unsigned depth; /* parentheses open right now */
};

/* packaging's WS token: spaces and tabs only (a line break is an error). */
static inline bool pep508_is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static inline void pep508_skip_ws(struct pep508_lex *lx)
{
	while (lx->pos < lx->n && pep508_is_ws(lx->s[lx->pos]))
		lx->pos++;
}

/* Python's \w for str patterns, approximated: ASCII letters, digits, '_'
 * and every non-ASCII byte (a non-ASCII character can never start or end a
 * valid token, so the approximation changes error positions only). */
static inline bool pep508_is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c >= 0x80;
}

/* \b at pos: a word character on exactly one side. */
static inline bool pep508_boundary(const char *s, size_t n, size_t pos)
{
	bool before = pos > 0 && pep508_is_word((unsigned char)s[pos - 1]);
	bool after = pos < n && pep508_is_word((unsigned char)s[pos]);
	return before != after;
}

/* Record a positioned error (line and column counted from the start of the
 * text) and return lx->code. */
int pep508_fail(struct pep508_lex *lx, size_t pos, const char *fmt, ...) GPUENV_PRINTF(3, 4);

/* Parse packaging's `marker` production at lx->pos (no check for the end of
 * the text); lx->pos is left after the marker. */
int pep508_parse_marker(struct pep508_lex *lx, gpuenv_marker_t **out);

/* PEP 503 normalisation (ASCII lower case, runs of -_. to one '-'), into the
 * arena. */
int pep508_canon_name(gpuenv_arena_t *arena, gpuenv_str_t in, gpuenv_str_t *out);

#endif
