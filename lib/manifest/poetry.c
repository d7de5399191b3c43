/* Poetry's version constraint language, converted to PEP 440 the way
 * poetry-core converts it (poetry.core.constraints.version.parser):
 *
 *   ^1.2.3 -> >=1.2.3,<2.0.0   ^0.2.3 -> >=0.2.3,<0.3.0   ^0.0.3 -> >=0.0.3,<0.0.4
 *   ^0     -> >=0,<1           ^0.0   -> >=0.0,<0.1
 *   ~1.2.3 -> >=1.2.3,<1.3.0   ~1.2   -> >=1.2,<1.3        ~1     -> >=1,<2
 *   1.2.*  -> ==1.2.*          *      -> any               1.2.3  -> ==1.2.3
 *   =1.2   -> ==1.2            <>1.2  -> !=1.2             ~=, ==, !=, <, <=, >, >= as they are
 *
 * Clauses are ANDed with commas or spaces ("^1.2 !=1.3.1", ">= 1.2, < 2");
 * "||" and "|" make unions, which one PEP 440 specifier set cannot hold.
 * The upper bound keeps the precision of the version written (^1.24 ->
 * <2.0, as Poetry's Release.next_major does). */
#include "manifest_int.h"

#include <string.h>

#define MAX_CONSTRAINT 4096
#define MAX_PARTS 8

/* The release numbers at the start of v ("1.2.3rc1" -> 1, 2, 3; *end past
 * them).  false when v does not start with a number or has too many. */
static bool release_of(gpuenv_str_t v, uint64_t *parts, size_t *n, size_t *end)
{
	size_t i = 0;

	*n = 0;
	while (i < v.len && gpuenv_is_digit(v.ptr[i])) {
		uint64_t x = 0;
		size_t start = i;
		while (i < v.len && gpuenv_is_digit(v.ptr[i])) {
			if (i - start >= 18)
				return false;
			x = x * 10 + (uint64_t)(v.ptr[i++] - '0');
		}
		if (*n == MAX_PARTS)
			return false;
		parts[(*n)++] = x;
		if (i + 1 < v.len && v.ptr[i] == '.' && gpuenv_is_digit(v.ptr[i + 1]))
			i++;
		else
			break;
	}
	*end = i;
	return *n > 0;
}

static int put_release(gpuenv_buf_t *b, const uint64_t *parts, size_t n)
{
	int r = 0;

	for (size_t i = 0; i < n && !r; i++)
		r = gpuenv_buf_printf(b, "%s%llu", i ? "." : "", (unsigned long long)parts[i]);
	return r;
}

static int bad(gpuenv_ctx_t *ctx, gpuenv_str_t tok, const char *why)
{
	return gpuenv_fail(ctx, GPUENV_ESPEC, NULL, 0, 0, "'%.*s' is not a Poetry version constraint: %s",
		(int)(tok.len > 100 ? 100 : tok.len), tok.ptr, why);
}

/* ^V and ~V: ">=V,<upper" */
static int put_range(gpuenv_ctx_t *ctx, gpuenv_buf_t *b, gpuenv_str_t v, bool caret, gpuenv_str_t tok)
{
	uint64_t p[MAX_PARTS], u[MAX_PARTS];
	size_t n, end, bump;

	if (!release_of(v, p, &n, &end))
		return bad(ctx, tok, caret ? "'^' needs a version" : "'~' needs a version");
	if (caret) {
		/* next_breaking: the first non-zero part (the major when only it is given) */
		if (p[0] > 0 || n == 1)
			bump = 0;
		else if (p[1] > 0 || n == 2)
			bump = 1;
		else
			bump = 2;
	} else
		bump = n == 1 ? 0 : 1;
	for (size_t i = 0; i < n; i++)
		u[i] = i < bump ? p[i] : i == bump ? p[i] + 1 : 0;
	if (gpuenv_buf_printf(b, ">=%.*s,<", GPUENV_STR_ARG(v)) || put_release(b, u, n))
		return gpuenv_oom(ctx, "a Poetry constraint");
	return 0;
}

/* "1.2.*", "1.2.x": the version before the wildcard, or false */
static bool wildcard(gpuenv_str_t v, gpuenv_str_t *head)
{
	uint64_t p[MAX_PARTS];
	size_t n, end;

	if (v.len == 1 && (v.ptr[0] == '*' || v.ptr[0] == 'x' || v.ptr[0] == 'X')) {
		*head = GPUENV_STR_NULL;
		return true;
	}
	if (v.len < 3 || !strchr("*xX", v.ptr[v.len - 1]) || v.ptr[v.len - 2] != '.')
		return false;
	if (!release_of(v, p, &n, &end) || end != v.len - 2)
		return false;
	*head = gpuenv_str_n(v.ptr, v.len - 2);
	return true;
}

static const char *const OPS[] = { "===", "~=", "==", "!=", "<>", ">=", "<=", "^", "~", "=", ">",
	"<" };

static size_t op_len(gpuenv_str_t t)
{
	for (size_t i = 0; i < sizeof(OPS) / sizeof(OPS[0]); i++)
		if (gpuenv_str_startswith(t, OPS[i]))
			return strlen(OPS[i]);
	return 0;
}

/* One clause (operator and version, spaces between them removed). */
static int clause(gpuenv_ctx_t *ctx, gpuenv_buf_t *b, gpuenv_str_t tok)
{
	size_t ol = op_len(tok);
	gpuenv_str_t op = gpuenv_str_n(tok.ptr, ol), v = gpuenv_str_trim(gpuenv_str_n(tok.ptr + ol, tok.len - ol)), head;
	bool first = b->len == 0;
	int r;

	if (v.len > 1 && (v.ptr[0] == 'v' || v.ptr[0] == 'V') && gpuenv_is_digit(v.ptr[1]))
		v = gpuenv_str_n(v.ptr + 1, v.len - 1); /* Poetry reads "v1.2" as 1.2 */
	if (!v.len)
		return bad(ctx, tok, "no version after the operator");
	if (wildcard(v, &head)) {
		if (ol && !gpuenv_str_eq_cstr(op, "==") && !gpuenv_str_eq_cstr(op, "!=") &&
			!gpuenv_str_eq_cstr(op, "="))
			return bad(ctx, tok, "a wildcard goes with ==, != or nothing");
		if (!head.ptr) {
			if (gpuenv_str_eq_cstr(op, "!="))
				return bad(ctx, tok, "'!= *' excludes every version");
			return 0; /* any version */
		}
		r = gpuenv_buf_printf(b, "%s%s%.*s.*", first ? "" : ",",
			gpuenv_str_eq_cstr(op, "!=") ? "!=" : "==", GPUENV_STR_ARG(head));
		return r ? gpuenv_oom(ctx, "a Poetry constraint") : 0;
	}
	if (!gpuenv_is_digit(v.ptr[0]) && !gpuenv_str_eq_cstr(op, "==="))
		return bad(ctx, tok, "a version starts with a digit");
	if (!first && gpuenv_buf_putc(b, ','))
		return gpuenv_oom(ctx, "a Poetry constraint");
	if (gpuenv_str_eq_cstr(op, "^") || gpuenv_str_eq_cstr(op, "~"))
		return put_range(ctx, b, v, op.ptr[0] == '^', tok);
	if (!ol || gpuenv_str_eq_cstr(op, "="))
		op = gpuenv_str("==");
	else if (gpuenv_str_eq_cstr(op, "<>"))
		op = gpuenv_str("!=");
	r = gpuenv_buf_printf(b, "%.*s%.*s", GPUENV_STR_ARG(op), GPUENV_STR_ARG(v));
	return r ? gpuenv_oom(ctx, "a Poetry constraint") : 0;
}

/* One side of a union: clauses split by commas, then by spaces, an
 * operator written apart from its version (">= 1.2") joined to it. */
static int conjunction(gpuenv_ctx_t *ctx, gpuenv_buf_t *b, gpuenv_str_t s)
{
	size_t i = 0;

	while (i < s.len) {
		size_t start, ol;
		while (i < s.len && (gpuenv_is_blank(s.ptr[i]) || s.ptr[i] == ','))
			i++;
		if (i >= s.len)
			break;
		start = i;
		ol = op_len(gpuenv_str_n(s.ptr + i, s.len - i));
		i += ol;
		while (ol && i < s.len && gpuenv_is_blank(s.ptr[i]))
			i++;
		while (i < s.len && !gpuenv_is_blank(s.ptr[i]) && s.ptr[i] != ',')
			i++;
		int r = clause(ctx, b, gpuenv_str_n(s.ptr + start, i - start));
		if (r)
			return r;
	}
	return 0;
}

int gpuenv_manifest_poetry_split(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t c,
	const char ***out, size_t *n)
{
	gpuenv_buf_t b;
	size_t cap = 1, k = 0;
	const char **parts;
	int r = 0;

	*out = NULL;
	*n = 0;
	if (c.len > MAX_CONSTRAINT)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"a version constraint of %zu bytes (at most %d)", c.len, MAX_CONSTRAINT);
	if (memchr(c.ptr, '\0', c.len))
		return gpuenv_fail(ctx, GPUENV_ESPEC, NULL, 0, 0, "a version constraint holds a NUL byte");
	for (size_t i = 0; i < c.len; i++)
		cap += c.ptr[i] == '|';
	parts = gpuenv_arena_calloc(arena, cap, sizeof(*parts));
	if (!parts)
		return gpuenv_oom(ctx, "a Poetry constraint");
	gpuenv_buf_init(&b, ctx, 4 * MAX_CONSTRAINT);
	for (size_t i = 0; i <= c.len && !r;) {
		size_t j = i;
		while (j < c.len && c.ptr[j] != '|')
			j++;
		gpuenv_buf_reset(&b);
		if ((cap > 1) && !gpuenv_str_trim(gpuenv_str_n(c.ptr + i, j - i)).len) {
			r = gpuenv_fail(ctx, GPUENV_ESPEC, NULL, 0, 0,
				"'%.*s' is not a Poetry version constraint: an empty side of '||'",
				(int)(c.len > 100 ? 100 : c.len), c.ptr);
			break;
		}
		r = conjunction(ctx, &b, gpuenv_str_n(c.ptr + i, j - i));
		if (r)
			break;
		parts[k] = gpuenv_arena_strndup(arena, b.data ? b.data : "", b.len);
		if (!parts[k]) {
			r = gpuenv_oom(ctx, "a Poetry constraint");
			break;
		}
		k++;
		if (j >= c.len)
			break;
		i = j + 1 + (j + 1 < c.len && c.ptr[j + 1] == '|');
	}
	gpuenv_buf_free(&b);
	if (r)
		return r;
	*out = parts;
	*n = k;
	return 0;
}

int gpuenv_manifest_poetry_constraint(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t constraint, const char **pep440)
{
	const char **parts;
	size_t n;
	gpuenv_specset_t set;
	int r;

	*pep440 = NULL;
	if ((r = gpuenv_manifest_poetry_split(ctx, arena, constraint, &parts, &n)))
		return r;
	if (n > 1) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"'%.*s' is a union of ranges, and a PEP 440 specifier cannot say 'or'",
			(int)(constraint.len > 100 ? 100 : constraint.len), constraint.ptr);
		return gpuenv_hint(ctx, "use one range, or a multiple-constraint list "
					"[{version = \"...\", markers = \"...\"}, ...] with one entry per case");
	}
	/* what Poetry accepts must also be a valid PEP 440 set */
	if ((r = gpuenv_specset_parse(ctx, arena, gpuenv_str(parts[0]), &set))) {
		return gpuenv_fail_prefix(ctx, GPUENV_ESPEC, NULL, 0, 0,
			"'%.*s' converts to '%s', which is not a PEP 440 specifier",
			(int)(constraint.len > 100 ? 100 : constraint.len), constraint.ptr, parts[0]);
	}
	*pep440 = parts[0];
	return 0;
}

/* python_version for X.Y, python_full_version for X.Y.Z */
static const char *py_var(const char *v)
{
	int dots = 0;

	for (; *v && *v != '*'; v++)
		dots += *v == '.';
	if (*v == '*')
		dots--; /* "3.10.*" is a Python minor */
	return dots >= 2 ? "python_full_version" : "python_version";
}

/* one AND side: ">=3.10,<4.0" -> python_version >= "3.10" and python_version < "4.0" */
static int py_side(gpuenv_buf_t *b, const char *spec, size_t *nterms)
{
	char lo[64], hi[64];
	uint64_t a[MAX_PARTS], z[MAX_PARTS];
	size_t na, nz, e1, e2;
	const char *comma = strchr(spec, ',');
	int r = 0;

	*nterms = 0;
	/* ">=X.Y,<X.Y+1" is one minor: Poetry writes python_version == "X.Y" */
	if (comma && !strchr(comma + 1, ',') && !strncmp(spec, ">=", 2) && comma[1] == '<' &&
		comma[2] != '=' && (size_t)(comma - spec - 2) < sizeof(lo) && strlen(comma + 2) < sizeof(hi)) {
		memcpy(lo, spec + 2, (size_t)(comma - spec - 2));
		lo[comma - spec - 2] = '\0';
		snprintf(hi, sizeof(hi), "%s", comma + 2);
		if (release_of(gpuenv_str(lo), a, &na, &e1) && e1 == strlen(lo) &&
			release_of(gpuenv_str(hi), z, &nz, &e2) && e2 == strlen(hi) && na == 2 && nz == 2 &&
			a[0] == z[0] && z[1] == a[1] + 1) {
			*nterms = 1;
			return gpuenv_buf_printf(b, "python_version == \"%s\"", lo);
		}
	}
	for (const char *p = spec; *p && !r;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p), ol;
		char clause[160];
		if (len >= sizeof(clause))
			return GPUENV_ETOOBIG;
		memcpy(clause, p, len);
		clause[len] = '\0';
		ol = op_len(gpuenv_str(clause));
		r = gpuenv_buf_printf(b, "%s%s %.*s \"%s\"", *nterms ? " and " : "", py_var(clause + ol),
			(int)ol, clause, clause + ol);
		(*nterms)++;
		p = end ? end + 1 : p + len;
	}
	return r;
}

int gpuenv_manifest_python_marker(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t constraint,
	const char **marker)
{
	const char **parts;
	size_t n;
	gpuenv_buf_t b;
	int r;

	*marker = NULL;
	if ((r = gpuenv_manifest_poetry_split(ctx, arena, constraint, &parts, &n)))
		return r;
	for (size_t i = 0; i < n; i++)
		if (!parts[i][0])
			return 0; /* one side takes any Python: no marker */
	gpuenv_buf_init(&b, ctx, 16 * MAX_CONSTRAINT);
	for (size_t i = 0; i < n && !r; i++) {
		gpuenv_buf_t side;
		size_t terms;
		gpuenv_buf_init(&side, ctx, 8 * MAX_CONSTRAINT);
		r = py_side(&side, parts[i], &terms);
		if (!r && n > 1 && terms > 1)
			r = gpuenv_buf_printf(&b, "%s(%s)", i ? " or " : "", side.data);
		else if (!r)
			r = gpuenv_buf_printf(&b, "%s%s", i ? " or " : "", side.data ? side.data : "");
		gpuenv_buf_free(&side);
	}
	if (!r && b.data) {
		gpuenv_marker_t *m;
		*marker = gpuenv_arena_strndup(arena, b.data, b.len);
		if (!*marker)
			r = -ENOMEM;
		else if ((r = gpuenv_marker_parse(ctx, arena, gpuenv_str(*marker), &m))) {
			*marker = NULL;
			gpuenv_buf_free(&b);
			return r == -ENOMEM ? r
					     : gpuenv_fail_prefix(ctx, GPUENV_ESPEC, NULL, 0, 0,
						       "python constraint '%.*s' makes no valid marker",
						       (int)(constraint.len > 100 ? 100 : constraint.len),
						       constraint.ptr);
		}
	}
	gpuenv_buf_free(&b);
	if (r == GPUENV_ETOOBIG && ctx->err.code != GPUENV_ETOOBIG)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "python constraint '%.*s': a clause of more than 150 "
						      "characters", (int)(constraint.len > 100 ? 100 : constraint.len),
			constraint.ptr);
	if (r == -ENOMEM)
		return gpuenv_oom(ctx, "a python marker");
	return r;
}
