/* PEP 508 environment markers: parser, str() and evaluation.
 *
 * The grammar, the str() form and the evaluation rules follow pypa/packaging
 * (the reference the vectors in testdata/packaging come from):
 *   marker = atom (BOOLOP atom)*
 *   atom   = WS? ( '(' WS? marker WS? ')' | item ) WS?
 *   item   = var WS? op WS? var        var = VARIABLE | QUOTED_STRING
 * A marker is kept as packaging keeps it: a flat list of atoms joined by
 * and/or (an atom is a comparison or a parenthesised list), so str() puts
 * parentheses exactly where the text had them. Quoted strings are Python
 * string literals (packaging reads them with ast.literal_eval), so escapes
 * are decoded here too. */
#include "pep508_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum {
	VAR_NONE = -1,
	VAR_IMPLEMENTATION_NAME,
	VAR_IMPLEMENTATION_VERSION,
	VAR_OS_NAME,
	VAR_PLATFORM_MACHINE,
	VAR_PLATFORM_PYTHON_IMPLEMENTATION,
	VAR_PLATFORM_RELEASE,
	VAR_PLATFORM_SYSTEM,
	VAR_PLATFORM_VERSION,
	VAR_PYTHON_FULL_VERSION,
	VAR_PYTHON_VERSION,
	VAR_SYS_PLATFORM,
	VAR_EXTRA,
	VAR_EXTRAS,
	VAR_DEPENDENCY_GROUPS,
	NVARS
};

static const char *const var_names[NVARS] = {
	"implementation_name", "implementation_version", "os_name", "platform_machine",
	"platform_python_implementation", "platform_release", "platform_system",
	"platform_version", "python_full_version", "python_version", "sys_platform", "extra",
	"extras", "dependency_groups",
};

/* Every spelling packaging's VARIABLE token accepts, legacy ones included
 * (PEP 345's dotted names and setuptools' python_implementation). */
static const struct {
	const char *text;
	int var;
} spellings[] = {
	{ "python_version", VAR_PYTHON_VERSION },
	{ "python_full_version", VAR_PYTHON_FULL_VERSION },
	{ "os_name", VAR_OS_NAME },
	{ "os.name", VAR_OS_NAME },
	{ "sys_platform", VAR_SYS_PLATFORM },
	{ "sys.platform", VAR_SYS_PLATFORM },
	{ "platform_release", VAR_PLATFORM_RELEASE },
	{ "platform_system", VAR_PLATFORM_SYSTEM },
	{ "platform_version", VAR_PLATFORM_VERSION },
	{ "platform.version", VAR_PLATFORM_VERSION },
	{ "platform_machine", VAR_PLATFORM_MACHINE },
	{ "platform.machine", VAR_PLATFORM_MACHINE },
	{ "platform_python_implementation", VAR_PLATFORM_PYTHON_IMPLEMENTATION },
	{ "platform.python_implementation", VAR_PLATFORM_PYTHON_IMPLEMENTATION },
	{ "python_implementation", VAR_PLATFORM_PYTHON_IMPLEMENTATION },
	{ "implementation_name", VAR_IMPLEMENTATION_NAME },
	{ "implementation_version", VAR_IMPLEMENTATION_VERSION },
	{ "extras", VAR_EXTRAS },
	{ "extra", VAR_EXTRA },
	{ "dependency_groups", VAR_DEPENDENCY_GROUPS },
};

enum { OP_LT, OP_LE, OP_EQ, OP_NE, OP_GE, OP_GT, OP_COMPAT, OP_ARBITRARY, OP_IN, OP_NOT_IN };
static const char *const op_text[] = { "<", "<=", "==", "!=", ">=", ">", "~=", "===", "in",
	"not in" };

enum { NODE_CMP, NODE_GROUP };

struct operand {
	int var;	    /* VAR_NONE for a quoted string */
	gpuenv_str_t value; /* the decoded string */
};

struct item {
	gpuenv_marker_t *node;
	bool or_before; /* joined to the previous atom by 'or' (else 'and') */
	struct item *next;
};

struct gpuenv_marker {
	int kind;
	/* where the atom starts, for evaluation errors (line and column are
	 * counted only then: counting per node would be quadratic) */
	const char *src;
	size_t pos;
	/* NODE_CMP */
	struct operand lhs, rhs;
	int op;
	/* NODE_GROUP */
	struct item *items;
	size_t nitems;
};

/* ---- errors -------------------------------------------------------------- */

static void line_col(const char *s, size_t pos, unsigned *line, unsigned *col)
{
	unsigned l = 1;
	size_t start = 0;

	for (size_t i = 0; i < pos; i++)
		if (s[i] == '\n') {
			l++;
			start = i + 1;
		}
	*line = l;
	*col = (unsigned)(pos - start + 1);
}

int pep508_fail(struct pep508_lex *lx, size_t pos, const char *fmt, ...)
{
	char msg[sizeof(lx->ctx->err.msg)];
	unsigned line, col;
	va_list ap;

	if (pos > lx->n)
		pos = lx->n;
	line_col(lx->s, pos, &line, &col);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(lx->ctx, lx->code, NULL, line, col, "%s", msg);
}

/* ---- names ---------------------------------------------------------------- */

int pep508_canon_name(gpuenv_arena_t *arena, gpuenv_str_t in, gpuenv_str_t *out)
{
	char *p = gpuenv_arena_alloc(arena, in.len + 1);

	if (!p)
		return gpuenv_oom(arena->ctx, "parsing an environment marker");
	*out = gpuenv_str_n(p, gpuenv_name_normalize_to(in, p, in.len + 1));
	return 0;
}

/* ---- quoted strings ------------------------------------------------------- */

static unsigned hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	return (unsigned)(c - 'A' + 10);
}

static size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decode the Python string literal s[start..end) (quotes included) the way
 * ast.literal_eval does.  Raw line breaks and NUL bytes are errors, as in
 * Python; so are \N{...} escapes and lone surrogates, which a C string
 * cannot carry faithfully (see docs/packaging-vectors.md). */
static int decode_quoted(struct pep508_lex *lx, size_t start, size_t end, gpuenv_str_t *out)
{
	const char *s = lx->s;
	size_t i = start + 1, last = end - 1, n = 0;
	bool plain = true;
	char *buf;

	for (size_t k = i; k < last; k++) {
		if (s[k] == '\0')
			return pep508_fail(lx, k, "Invalid quoted string: NUL byte inside the quotes");
		if (s[k] == '\\') {
			/* a backslash before a line break continues the line */
			plain = false;
			if (k + 1 < last && s[k + 1] != '\0')
				k++;
		} else if (s[k] == '\n' || s[k] == '\r') {
			return pep508_fail(lx, k, "Invalid quoted string: line break inside the quotes");
		}
	}
	if (plain) {
		*out = gpuenv_str_n(s + i, last - i);
		return 0;
	}
	/* escapes never make the text longer than the source */
	buf = gpuenv_arena_alloc(lx->arena, last - i + 1);
	if (!buf)
		return gpuenv_oom(lx->ctx, "parsing an environment marker");
	while (i < last) {
		char c = s[i];
		if (c != '\\') {
			buf[n++] = c;
			i++;
			continue;
		}
		if (i + 1 >= last) /* the backslash escapes the closing quote */
			return pep508_fail(lx, end, "Invalid quoted string: unterminated string");
		size_t esc = i;
		char e = s[i + 1];
		i += 2;
		switch (e) {
		case '\n':
			continue;
		case '\r':
			if (i < last && s[i] == '\n')
				i++;
			continue;
		case '\\': buf[n++] = '\\'; continue;
		case '\'': buf[n++] = '\''; continue;
		case '"': buf[n++] = '"'; continue;
		case 'a': buf[n++] = '\a'; continue;
		case 'b': buf[n++] = '\b'; continue;
		case 'f': buf[n++] = '\f'; continue;
		case 'n': buf[n++] = '\n'; continue;
		case 'r': buf[n++] = '\r'; continue;
		case 't': buf[n++] = '\t'; continue;
		case 'v': buf[n++] = '\v'; continue;
		default: break;
		}
		uint32_t cp = 0;
		if (e >= '0' && e <= '7') {
			cp = (uint32_t)(e - '0');
			for (int k = 0; k < 2 && i < last && s[i] >= '0' && s[i] <= '7'; k++, i++)
				cp = cp * 8 + (uint32_t)(s[i] - '0');
		} else if (e == 'x' || e == 'u' || e == 'U') {
			int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
			for (int k = 0; k < digits; k++, i++) {
				if (i >= last || !gpuenv_is_xdigit(s[i]))
					return pep508_fail(lx, esc,
						"Invalid quoted string: truncated \\%c escape", e);
				cp = cp * 16 + hex_val(s[i]);
			}
			if (cp > 0x10ffff)
				return pep508_fail(lx, esc,
					"Invalid quoted string: \\U escape beyond U+10FFFF");
		} else if (e == 'N') {
			return pep508_fail(lx, esc,
				"Invalid quoted string: \\N{...} escapes are not supported");
		} else {
			/* unknown escapes stay as written, as in Python */
			buf[n++] = '\\';
			i--;
			continue;
		}
		if (cp >= 0xd800 && cp <= 0xdfff)
			return pep508_fail(lx, esc,
				"Invalid quoted string: lone surrogates are not supported");
		/* an escape is at least 2 source bytes (octal) and makes at most
		 * 2 bytes below U+0800; \u (6 bytes) and \U (10) fit too */
		n += utf8_put(buf + n, cp);
	}
	buf[n] = '\0';
	*out = gpuenv_str_n(buf, n);
	return 0;
}

/* ---- parser --------------------------------------------------------------- */

static bool match_word(const struct pep508_lex *lx, const char *w)
{
	size_t k = strlen(w);

	return lx->n - lx->pos >= k && memcmp(lx->s + lx->pos, w, k) == 0 &&
		pep508_boundary(lx->s, lx->n, lx->pos) && pep508_boundary(lx->s, lx->n, lx->pos + k);
}

static int parse_var(struct pep508_lex *lx, struct operand *o)
{
	size_t pos = lx->pos;

	if (pos >= lx->n)
		return pep508_fail(lx, pos, "Expected a marker variable or quoted string");
	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		if (match_word(lx, spellings[i].text)) {
			o->var = spellings[i].var;
			o->value = gpuenv_str(var_names[o->var]);
			lx->pos += strlen(spellings[i].text);
			return 0;
		}
	}
	char q = lx->s[pos];
	if (q == '\'' || q == '"') {
		const char *close = memchr(lx->s + pos + 1, q, lx->n - pos - 1);
		if (close) {
			size_t end = (size_t)(close - lx->s) + 1;
			o->var = VAR_NONE;
			int r = decode_quoted(lx, pos, end, &o->value);
			if (r)
				return r;
			lx->pos = end;
			return 0;
		}
	}
	return pep508_fail(lx, pos, "Expected a marker variable or quoted string");
}

static int parse_op(struct pep508_lex *lx, int *op)
{
	static const struct {
		const char *text;
		int op;
	} ops[] = {
		{ "===", OP_ARBITRARY }, { "==", OP_EQ }, { "~=", OP_COMPAT }, { "!=", OP_NE },
		{ "<=", OP_LE }, { ">=", OP_GE }, { "<", OP_LT }, { ">", OP_GT },
	};

	if (match_word(lx, "in")) {
		lx->pos += 2;
		*op = OP_IN;
		return 0;
	}
	if (match_word(lx, "not")) {
		lx->pos += 3;
		if (lx->pos >= lx->n || !pep508_is_ws(lx->s[lx->pos]))
			return pep508_fail(lx, lx->pos, "Expected whitespace after 'not'");
		pep508_skip_ws(lx);
		if (!match_word(lx, "in"))
			return pep508_fail(lx, lx->pos, "Expected 'in' after 'not'");
		lx->pos += 2;
		*op = OP_NOT_IN;
		return 0;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t k = strlen(ops[i].text);
		if (lx->n - lx->pos >= k && memcmp(lx->s + lx->pos, ops[i].text, k) == 0) {
			lx->pos += k;
			*op = ops[i].op;
			return 0;
		}
	}
	return pep508_fail(lx, lx->pos,
		"Expected marker operator, one of <=, <, !=, ==, >=, >, ~=, ===, in, not in");
}

static gpuenv_marker_t *new_node(struct pep508_lex *lx, int kind, size_t pos)
{
	gpuenv_marker_t *m = gpuenv_arena_calloc(lx->arena, 1, sizeof(*m));

	if (m) {
		m->kind = kind;
		m->src = lx->s;
		m->pos = pos;
	}
	return m;
}

static int parse_item(struct pep508_lex *lx, gpuenv_marker_t **out)
{
	gpuenv_marker_t *m = new_node(lx, NODE_CMP, lx->pos);
	int r;

	if (!m)
		return gpuenv_oom(lx->ctx, "parsing an environment marker");
	pep508_skip_ws(lx);
	if ((r = parse_var(lx, &m->lhs)))
		return r;
	pep508_skip_ws(lx);
	if ((r = parse_op(lx, &m->op)))
		return r;
	pep508_skip_ws(lx);
	if ((r = parse_var(lx, &m->rhs)))
		return r;
	pep508_skip_ws(lx);
	/* PEP 685: a literal compared with 'extra' is kept normalised, so
	 * str() shows the normalised name and evaluation compares those */
	if (m->lhs.var == VAR_EXTRA && m->rhs.var == VAR_NONE)
		r = pep508_canon_name(lx->arena, m->rhs.value, &m->rhs.value);
	else if (m->rhs.var == VAR_EXTRA && m->lhs.var == VAR_NONE)
		r = pep508_canon_name(lx->arena, m->lhs.value, &m->lhs.value);
	if (r)
		return gpuenv_oom(lx->ctx, "parsing an environment marker");
	*out = m;
	return 0;
}

static int parse_atom(struct pep508_lex *lx, gpuenv_marker_t **out)
{
	int r;

	pep508_skip_ws(lx);
	if (lx->pos < lx->n && lx->s[lx->pos] == '(') {
		size_t open = lx->pos;
		if (lx->depth >= PEP508_MAX_DEPTH)
			return pep508_fail(lx, open, "marker nested deeper than %d parentheses",
				PEP508_MAX_DEPTH);
		lx->depth++;
		lx->pos++;
		pep508_skip_ws(lx);
		if ((r = pep508_parse_marker(lx, out)))
			return r;
		pep508_skip_ws(lx);
		if (lx->pos >= lx->n || lx->s[lx->pos] != ')')
			return pep508_fail(lx, lx->pos,
				"Expected matching RIGHT_PARENTHESIS for LEFT_PARENTHESIS, after marker expression");
		lx->pos++;
		lx->depth--;
	} else if ((r = parse_item(lx, out))) {
		return r;
	}
	pep508_skip_ws(lx);
	return 0;
}

int pep508_parse_marker(struct pep508_lex *lx, gpuenv_marker_t **out)
{
	gpuenv_marker_t *g = new_node(lx, NODE_GROUP, lx->pos);
	struct item **tail;
	bool or_before = false;
	int r;

	if (!g)
		return gpuenv_oom(lx->ctx, "parsing an environment marker");
	tail = &g->items;
	for (;;) {
		struct item *it = gpuenv_arena_calloc(lx->arena, 1, sizeof(*it));
		if (!it)
			return gpuenv_oom(lx->ctx, "parsing an environment marker");
		if ((r = parse_atom(lx, &it->node)))
			return r;
		it->or_before = or_before;
		*tail = it;
		tail = &it->next;
		g->nitems++;
		if (match_word(lx, "or")) {
			or_before = true;
			lx->pos += 2;
		} else if (match_word(lx, "and")) {
			or_before = false;
			lx->pos += 3;
		} else {
			break;
		}
	}
	*out = g;
	return 0;
}

int gpuenv_marker_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	gpuenv_marker_t **out)
{
	struct pep508_lex lx = { .ctx = ctx, .arena = arena, .code = GPUENV_EMARKER };
	int r;

	*out = NULL;
	if (text.len > PEP508_MAX_TEXT)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"marker longer than %zu bytes", PEP508_MAX_TEXT);
	/* the tree slices into this copy, so it outlives the caller's text */
	lx.s = gpuenv_arena_strndup(arena, text.len ? text.ptr : "", text.len);
	if (!lx.s)
		return gpuenv_oom(ctx, "parsing an environment marker");
	lx.n = text.len;
	if ((r = pep508_parse_marker(&lx, out)))
		return r;
	if (lx.pos != lx.n) {
		*out = NULL;
		return pep508_fail(&lx, lx.pos, "Expected end of marker expression");
	}
	return 0;
}

/* ---- str() ------------------------------------------------------------------ */

/* Would the bytes between the quotes read back as themselves? */
static bool plain_roundtrip(gpuenv_str_t v)
{
	for (size_t i = 0; i < v.len; i++) {
		char c = v.ptr[i];
		if (c == '\n' || c == '\r' || c == '\0')
			return false;
		if (c == '\\') {
			if (i + 1 == v.len)
				return false;
			if (strchr("\\'\"abfnrtvxNuU01234567\n\r", v.ptr[i + 1]))
				return false;
		}
	}
	return true;
}

/* packaging writes values in double quotes, or single quotes when the value
 * holds a double quote.  Where that text would not read back as the same
 * value (both quote kinds, line breaks, backslashes forming an escape;
 * packaging raises or writes something that re-parses differently), the
 * value is written with escapes instead. */
static int fmt_value(gpuenv_str_t v, gpuenv_buf_t *b)
{
	bool dq = v.len && memchr(v.ptr, '"', v.len), sq = v.len && memchr(v.ptr, '\'', v.len);
	int r;

	if (!(dq && sq) && plain_roundtrip(v)) {
		char q = dq ? '\'' : '"';
		if ((r = gpuenv_buf_putc(b, q)) || (r = gpuenv_buf_append(b, v.ptr, v.len)))
			return r;
		return gpuenv_buf_putc(b, q);
	}
	if ((r = gpuenv_buf_putc(b, '"')))
		return r;
	for (size_t i = 0; i < v.len; i++) {
		char c = v.ptr[i];
		switch (c) {
		case '\\': r = gpuenv_buf_puts(b, "\\\\"); break;
		case '"': r = gpuenv_buf_puts(b, "\\x22"); break;
		case '\n': r = gpuenv_buf_puts(b, "\\n"); break;
		case '\r': r = gpuenv_buf_puts(b, "\\r"); break;
		case '\0': r = gpuenv_buf_puts(b, "\\x00"); break;
		default: r = gpuenv_buf_putc(b, c); break;
		}
		if (r)
			return r;
	}
	return gpuenv_buf_putc(b, '"');
}

static int fmt_operand(const struct operand *o, gpuenv_buf_t *b)
{
	if (o->var != VAR_NONE)
		return gpuenv_buf_puts(b, var_names[o->var]);
	return fmt_value(o->value, b);
}

static int fmt_node(const gpuenv_marker_t *m, gpuenv_buf_t *b, bool first)
{
	int r;

	if (m->kind == NODE_CMP) {
		if ((r = fmt_operand(&m->lhs, b)) || (r = gpuenv_buf_putc(b, ' ')) ||
			(r = gpuenv_buf_puts(b, op_text[m->op])) || (r = gpuenv_buf_putc(b, ' ')))
			return r;
		return fmt_operand(&m->rhs, b);
	}
	/* a list of one atom prints as that atom: "((a))" is "a".  The outer
	 * position (first) is passed down so "a and ((b or c))" keeps its
	 * parentheses. */
	if (m->nitems == 1)
		return fmt_node(m->items->node, b, first);
	if (!first && (r = gpuenv_buf_putc(b, '(')))
		return r;
	for (const struct item *it = m->items; it; it = it->next) {
		if (it != m->items && (r = gpuenv_buf_puts(b, it->or_before ? " or " : " and ")))
			return r;
		if ((r = fmt_node(it->node, b, false)))
			return r;
	}
	return first ? 0 : gpuenv_buf_putc(b, ')');
}

int gpuenv_marker_format(const gpuenv_marker_t *m, gpuenv_buf_t *out)
{
	return fmt_node(m, out, true);
}

int gpuenv_marker_eq(gpuenv_ctx_t *ctx, const gpuenv_marker_t *a, const gpuenv_marker_t *b,
	bool *equal)
{
	gpuenv_buf_t ba, bb;
	int r;

	*equal = false;
	if (!a || !b) {
		*equal = a == b;
		return 0;
	}
	gpuenv_buf_init(&ba, ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_buf_init(&bb, ctx, GPUENV_BUF_DEFAULT_MAX);
	r = gpuenv_marker_format(a, &ba);
	if (!r)
		r = gpuenv_marker_format(b, &bb);
	if (!r)
		*equal = ba.len == bb.len && (ba.len == 0 || memcmp(ba.data, bb.data, ba.len) == 0);
	gpuenv_buf_free(&ba);
	gpuenv_buf_free(&bb);
	return r;
}

/* ---- environments ------------------------------------------------------- */

void gpuenv_marker_env_default(gpuenv_marker_env_t *env)
{
	/* A fixed environment: CPython 3.11.2 on Debian 12, x86_64.  Fixed so
	 * that results never depend on the machine gpuenv runs on; callers
	 * describing a real target fill the fields from the probe. */
	memset(env, 0, sizeof(*env));
	env->implementation_name = "cpython";
	env->implementation_version = "3.11.2";
	env->os_name = "posix";
	env->platform_machine = "x86_64";
	env->platform_python_implementation = "CPython";
	env->platform_release = "6.1.0-18-amd64";
	env->platform_system = "Linux";
	env->platform_version = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)";
	env->python_full_version = "3.11.2";
	env->python_version = "3.11";
	env->sys_platform = "linux";
	env->extra = "";
}

/* Where each string variable lives in the environment (0: a set). */
static const size_t str_off[NVARS] = {
	[VAR_IMPLEMENTATION_NAME] = offsetof(gpuenv_marker_env_t, implementation_name),
	[VAR_IMPLEMENTATION_VERSION] = offsetof(gpuenv_marker_env_t, implementation_version),
	[VAR_OS_NAME] = offsetof(gpuenv_marker_env_t, os_name),
	[VAR_PLATFORM_MACHINE] = offsetof(gpuenv_marker_env_t, platform_machine),
	[VAR_PLATFORM_PYTHON_IMPLEMENTATION] =
		offsetof(gpuenv_marker_env_t, platform_python_implementation),
	[VAR_PLATFORM_RELEASE] = offsetof(gpuenv_marker_env_t, platform_release),
	[VAR_PLATFORM_SYSTEM] = offsetof(gpuenv_marker_env_t, platform_system),
	[VAR_PLATFORM_VERSION] = offsetof(gpuenv_marker_env_t, platform_version),
	[VAR_PYTHON_FULL_VERSION] = offsetof(gpuenv_marker_env_t, python_full_version),
	[VAR_PYTHON_VERSION] = offsetof(gpuenv_marker_env_t, python_version),
	[VAR_SYS_PLATFORM] = offsetof(gpuenv_marker_env_t, sys_platform),
	[VAR_EXTRA] = offsetof(gpuenv_marker_env_t, extra),
};

static bool is_set_var(int var)
{
	return var == VAR_EXTRAS || var == VAR_DEPENDENCY_GROUPS;
}

static const char *env_get(const gpuenv_marker_env_t *env, int var)
{
	const char *const *f = (const char *const *)(const void *)((const char *)env + str_off[var]);

	return *f;
}

static int var_lookup(const char *name)
{
	for (int i = 0; i < NVARS; i++)
		if (strcmp(var_names[i], name) == 0)
			return i;
	return VAR_NONE;
}

int gpuenv_marker_env_set(gpuenv_marker_env_t *env, const char *name, const char *value)
{
	int v = var_lookup(name);

	if (v == VAR_NONE)
		return GPUENV_ENOTFOUND;
	if (is_set_var(v))
		return GPUENV_ETYPE;
	*(const char **)(void *)((char *)env + str_off[v]) = value;
	return 0;
}

int gpuenv_marker_env_set_list(gpuenv_marker_env_t *env, const char *name,
	const char *const *values)
{
	int v = var_lookup(name);

	if (v == VAR_NONE)
		return GPUENV_ENOTFOUND;
	if (v == VAR_EXTRAS)
		env->extras = values;
	else if (v == VAR_DEPENDENCY_GROUPS)
		env->dependency_groups = values;
	else
		return GPUENV_ETYPE;
	return 0;
}

const char *gpuenv_marker_var_name(size_t i)
{
	return i < NVARS ? var_names[i] : NULL;
}

/* ---- evaluation ------------------------------------------------------------ */

struct eval {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *scratch;
	const gpuenv_marker_env_t *env;
};

struct val {
	gpuenv_str_t s;
	const char *const *set; /* for extras / dependency_groups; else NULL */
};

static int eval_fail(struct eval *ev, const gpuenv_marker_t *m, const char *fmt, ...)
	GPUENV_PRINTF(3, 4);

static int eval_fail(struct eval *ev, const gpuenv_marker_t *m, const char *fmt, ...)
{
	char msg[sizeof(ev->ctx->err.msg)];
	unsigned line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line_col(m->src, m->pos, &line, &col);
	return gpuenv_fail(ev->ctx, GPUENV_EMARKER, NULL, line, col, "%s", msg);
}

static bool is_version_var(int var)
{
	return var == VAR_IMPLEMENTATION_VERSION || var == VAR_PLATFORM_RELEASE ||
		var == VAR_PYTHON_FULL_VERSION || var == VAR_PYTHON_VERSION;
}

static int operand_value(struct eval *ev, const gpuenv_marker_t *m, const struct operand *o,
	struct val *out)
{
	const gpuenv_marker_env_t *env = ev->env;
	const char *s;

	out->set = NULL;
	if (o->var == VAR_NONE) {
		out->s = o->value;
		return 0;
	}
	if (is_set_var(o->var)) {
		out->set = o->var == VAR_EXTRAS ? env->extras : env->dependency_groups;
		if (!out->set)
			return eval_fail(ev, m, "marker variable '%s' is not set in the environment",
				var_names[o->var]);
		out->s = GPUENV_STR_NULL;
		return 0;
	}
	s = env_get(env, o->var);
	if (o->var == VAR_EXTRA) {
		/* PEP 685: the environment's extra is compared normalised */
		if (!s || !*s) {
			out->s = gpuenv_str("");
			return 0;
		}
		return pep508_canon_name(ev->scratch, gpuenv_str(s), &out->s) ? gpuenv_oom(ev->ctx, "parsing an environment marker") : 0;
	}
	if (!s)
		return eval_fail(ev, m, "marker variable '%s' is not set in the environment",
			var_names[o->var]);
	out->s = gpuenv_str(s);
	if (o->var == VAR_PYTHON_FULL_VERSION && gpuenv_str_endswith(out->s, "+")) {
		/* builds from an untagged checkout report "3.11.1+", not a PEP 440
		 * version; packaging reads it as "3.11.1+local" */
		char *p = gpuenv_arena_alloc(ev->scratch, out->s.len + 6);
		if (!p)
			return gpuenv_oom(ev->ctx, "parsing an environment marker");
		memcpy(p, out->s.ptr, out->s.len);
		memcpy(p + out->s.len, "local", 6);
		out->s = gpuenv_str_n(p, out->s.len + 5);
	}
	return 0;
}

static bool contains_sub(gpuenv_str_t hay, gpuenv_str_t needle)
{
	if (needle.len == 0)
		return true;
	for (size_t i = 0; i + needle.len <= hay.len; i++)
		if (memcmp(hay.ptr + i, needle.ptr, needle.len) == 0)
			return true;
	return false;
}

/* PEP 440 comparison: is "OP rhs" a valid specifier, and does lhs match it
 * (pre-releases allowed)?  *applies is false when it is not a specifier. */
static int version_op(struct eval *ev, int op, gpuenv_str_t lhs, gpuenv_str_t rhs,
	bool *applies, bool *result)
{
	gpuenv_error_t saved = ev->ctx->err;
	gpuenv_specifier_t spec;
	gpuenv_version_t v;
	size_t ol = strlen(op_text[op]);
	char *text;
	int r;

	*applies = false;
	if (op == OP_IN || op == OP_NOT_IN)
		return 0;
	text = gpuenv_arena_alloc(ev->scratch, ol + rhs.len + 1);
	if (!text)
		return gpuenv_oom(ev->ctx, "parsing an environment marker");
	memcpy(text, op_text[op], ol);
	if (rhs.len)
		memcpy(text + ol, rhs.ptr, rhs.len);
	text[ol + rhs.len] = '\0';
	r = gpuenv_specifier_parse(ev->ctx, ev->scratch, gpuenv_str_n(text, ol + rhs.len), &spec);
	if (r == -ENOMEM)
		return r;
	if (r) {
		ev->ctx->err = saved;
		return 0;
	}
	r = gpuenv_version_parse(ev->ctx, ev->scratch, lhs, &v);
	if (r == -ENOMEM)
		return r;
	ev->ctx->err = saved;
	*applies = true;
	*result = gpuenv_specifier_contains(&spec, lhs, r ? NULL : &v, GPUENV_PRERELEASES_YES);
	return 0;
}

static bool set_has(struct eval *ev, const char *const *set, gpuenv_str_t item, int *err)
{
	for (size_t i = 0; set[i]; i++) {
		gpuenv_str_t c;
		if (pep508_canon_name(ev->scratch, gpuenv_str(set[i]), &c)) {
			*err = -ENOMEM;
			return false;
		}
		if (gpuenv_str_eq(c, item))
			return true;
	}
	return false;
}

/* printf arguments for a value in a message, cut at 60 bytes */
#define STR_SHORT(s) (int)((s).len > 60 ? 60 : (s).len), (s).ptr

static int eval_cmp(struct eval *ev, const gpuenv_marker_t *m, bool *result)
{
	struct val l, r;
	int key, rc;

	if ((rc = operand_value(ev, m, &m->lhs, &l)) || (rc = operand_value(ev, m, &m->rhs, &r)))
		return rc;
	/* the variable decides the rules: the left one when both sides are
	 * variables; two quoted strings compare as plain strings */
	key = m->lhs.var != VAR_NONE ? m->lhs.var : m->rhs.var;
	if (l.set)
		return eval_fail(ev, m, "'%s' can only be the right side of 'in' or 'not in'",
			var_names[m->lhs.var]);
	if (r.set) {
		/* extras / dependency_groups: names compared normalised (PEP 685) */
		gpuenv_str_t item;
		int err = 0;
		bool has;
		if (pep508_canon_name(ev->scratch, l.s, &item))
			return gpuenv_oom(ev->ctx, "parsing an environment marker");
		switch (m->op) {
		case OP_IN:
		case OP_NOT_IN:
			has = set_has(ev, r.set, item, &err);
			if (err)
				return gpuenv_oom(ev->ctx, "parsing an environment marker");
			*result = m->op == OP_IN ? has : !has;
			return 0;
		case OP_NE:
			*result = true; /* a string never equals a set */
			return 0;
		case OP_COMPAT:
		case OP_ARBITRARY:
			return eval_fail(ev, m, "undefined comparison '%s' against the set '%s'",
				op_text[m->op], var_names[m->rhs.var]);
		default:
			*result = false;
			return 0;
		}
	}
	if (key != VAR_NONE && is_version_var(key)) {
		bool applies;
		if ((rc = version_op(ev, m->op, l.s, r.s, &applies, result)))
			return rc;
		if (applies)
			return 0;
	}
	/* strings: only equality and containment mean something; packaging
	 * answers false for the orderings, and '<=' / '>=' hold on equality */
	switch (m->op) {
	case OP_IN: *result = contains_sub(r.s, l.s); return 0;
	case OP_NOT_IN: *result = !contains_sub(r.s, l.s); return 0;
	case OP_EQ:
	case OP_LE:
	case OP_GE: *result = gpuenv_str_eq(l.s, r.s); return 0;
	case OP_NE: *result = !gpuenv_str_eq(l.s, r.s); return 0;
	case OP_LT:
	case OP_GT: *result = false; return 0;
	default:
		if (key != VAR_NONE && is_version_var(key))
			return eval_fail(ev, m, "undefined comparison: '%.*s' %s '%.*s' ('%s%.*s' is not "
				"a valid PEP 440 specifier)", STR_SHORT(l.s), op_text[m->op],
				STR_SHORT(r.s), op_text[m->op], STR_SHORT(r.s));
		return eval_fail(ev, m, "undefined comparison: '%.*s' %s '%.*s' (%s compares PEP 440 "
			"versions: python_version, python_full_version, implementation_version or "
			"platform_release)", STR_SHORT(l.s), op_text[m->op], STR_SHORT(r.s),
			op_text[m->op]);
	}
}

static int eval_node(struct eval *ev, const gpuenv_marker_t *m, bool *result)
{
	bool any = false, all = true;
	int r;

	if (m->kind == NODE_CMP)
		return eval_cmp(ev, m, result);
	/* 'and' binds tighter than 'or'.  Every atom is evaluated, as packaging
	 * does, so an undefined comparison is reported even where the outcome
	 * is already known. */
	for (const struct item *it = m->items; it; it = it->next) {
		bool v;
		if (it->or_before) {
			any = any || all;
			all = true;
		}
		if ((r = eval_node(ev, it->node, &v)))
			return r;
		all = all && v;
	}
	*result = any || all;
	return 0;
}

int gpuenv_marker_eval(gpuenv_ctx_t *ctx, const gpuenv_marker_t *m,
	const gpuenv_marker_env_t *env, bool *result)
{
	gpuenv_marker_env_t def;
	gpuenv_arena_t scratch;
	struct eval ev;
	int r;

	*result = false;
	if (!env) {
		gpuenv_marker_env_default(&def);
		env = &def;
	}
	gpuenv_arena_init(&scratch, ctx, 0);
	ev = (struct eval){ .ctx = ctx, .scratch = &scratch, .env = env };
	r = eval_node(&ev, m, result);
	gpuenv_arena_free(&scratch);
	return r;
}
