/* diagnose: known failures in an error log, with their causes and fixes.
 *
 * The signatures are knowledge-base rows (data/kb/diagnose.toml).  Each
 * regex is compiled once with the libc's POSIX regcomp; before running a
 * regex on a line, a literal "needle" that every match must contain (the
 * longest plain run of the pattern, found at compile time) is looked for
 * with memmem, so a long log costs a few substring scans per line.
 */
#include "gpuenv/diagnose.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb_trt.h"

#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CAPS 10 /* \0 and {1}..{9} */

struct pattern {
	bool is_regex;
	bool icase;
	gpuenv_str_t lit;    /* the literal, or the regex's needle (may be empty) */
	regex_t re;
	bool compiled;
	unsigned shift; /* groups anchor_lead put in front (1 or 2) */
};

struct sig {
	const gpuenv_kb_signature_t *row;
	struct pattern *pat;
	size_t npat;
	struct pattern *after; /* literals, one of which must lie at most within lines above */
	size_t nafter;
	uint64_t within;
};

struct gpuenv_diag {
	gpuenv_ctx_t *ctx;
	const gpuenv_kb_t *kb;
	struct sig *sigs;
	size_t nsigs;
	gpuenv_arena_t arena; /* patterns as C strings, needles */
};

/* ---- compiling ------------------------------------------------------------- */

static bool is_meta(char c)
{
	return strchr(".[]()*+?{}|^$\\", c) != NULL;
}

/* The index just past the bracket expression that starts at re[i] == '['
 * ([]...] and [^]...] hold a ']' first; [:class:], [.x.], [=x=] inside). */
static size_t bracket_end(const char *re, size_t len, size_t i)
{
	size_t j = i + 1;

	if (j < len && re[j] == '^')
		j++;
	if (j < len && re[j] == ']')
		j++;
	while (j < len && re[j] != ']') {
		if (re[j] == '[' && j + 1 < len && (re[j + 1] == ':' || re[j + 1] == '.' || re[j + 1] == '=')) {
			char close = re[j + 1];
			j += 2;
			while (j + 1 < len && !(re[j] == close && re[j + 1] == ']'))
				j++;
			j += 2;
			continue;
		}
		j++;
	}
	return j + 1;
}

/* Linear time for a regex that starts with a run of a class, C+ or C*
 * ("([A-Za-z0-9_.-]+\.so): undefined symbol"): regexec tries a match from
 * every position of the line and each try runs along the whole run, so a
 * long line of such characters costs its length squared.  A leftmost match
 * of such a pattern starts where the run starts (had it started inside,
 * the run could take one more character), so "(^|[^C])(PATTERN)" finds the
 * same match with every try but those at a run's start dying at once.
 * Writes that pattern into out and returns its length, or 0 when the
 * pattern does not have that shape: an alternation or an optional group
 * around the leading run (a match could then skip it) or a back-reference
 * (the groups are renumbered). */
static size_t anchor_lead(const char *re, size_t len, char *out, size_t cap)
{
	size_t i = 0, k, cls, cls_end, lead_open, n;
	int depth = 0;

	while (i < len && re[i] == '(')
		i++;
	k = i; /* groups open around the leading run */
	cls = i;
	if (i < len && re[i] == '[')
		i = bracket_end(re, len, i);
	else if (i < len && re[i] == '.')
		i++;
	else
		return 0;
	if (i >= len || (re[i] != '+' && re[i] != '*'))
		return 0;
	cls_end = i;
	lead_open = k;
	depth = (int)k;
	for (i = cls_end + 1; i < len; i++) {
		char c = re[i];
		if (c == '\\') {
			if (i + 1 < len && re[i + 1] >= '1' && re[i + 1] <= '9')
				return 0;
			i++;
		} else if (c == '[') {
			i = bracket_end(re, len, i) - 1;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (depth > 0 && (size_t)depth <= lead_open) {
				lead_open = (size_t)depth - 1;
				if (i + 1 < len && (re[i + 1] == '?' || re[i + 1] == '*' || re[i + 1] == '{'))
					return 0;
			}
			if (depth > 0)
				depth--;
		} else if (c == '|' && (size_t)depth <= lead_open) {
			return 0;
		}
	}
	/* "(^|[^" + class body + "])(" + re + ")"; "." has no complement: "^" */
	if (re[cls] == '.')
		n = (size_t)snprintf(out, cap, "^(%.*s)", (int)len, re);
	else if (re[cls + 1] == '^')
		n = (size_t)snprintf(out, cap, "(^|[%.*s)(%.*s)", (int)(cls_end - cls - 2),
			re + cls + 2, (int)len, re);
	else
		n = (size_t)snprintf(out, cap, "(^|[^%.*s)(%.*s)", (int)(cls_end - cls - 1),
			re + cls + 1, (int)len, re);
	return n < cap ? n : 0;
}

/* The longest run of plain characters outside groups and brackets that
 * every match of an ERE must contain; empty when the pattern alternates at
 * its top level (then no single run is required). */
static gpuenv_str_t needle_of(gpuenv_arena_t *a, const char *re, size_t len)
{
	char run[GPUENV_DIAG_MAX_PATTERN], best[GPUENV_DIAG_MAX_PATTERN];
	size_t rl = 0, bl = 0, i = 0;
	int depth = 0;

	while (i < len) {
		char c = re[i];
		bool lit = false;
		char ch = 0;

		if (c == '\\' && i + 1 < len) {
			char n = re[i + 1];
			/* \. \( \[ ...: the character itself; \d etc. are not ERE */
			if (is_meta(n) || n == '/' || n == '-' || n == ':' || n == '\'' || n == '"') {
				lit = depth == 0;
				ch = n;
			}
			i += 2;
		} else if (c == '[') {
			i = bracket_end(re, len, i);
		} else if (c == '(') {
			depth++;
			i++;
		} else if (c == ')') {
			if (depth)
				depth--;
			i++;
		} else if (c == '|') {
			if (depth == 0)
				return GPUENV_STR_NULL;
			i++;
		} else if (c == '*' || c == '?' || c == '{') {
			/* the character before is optional: drop it from the run */
			if (rl)
				rl--;
			if (c == '{')
				while (i < len && re[i] != '}')
					i++;
			i++;
			goto end_run;
		} else if (is_meta(c)) {
			i++;
		} else {
			lit = depth == 0;
			ch = c;
			i++;
		}
		if (lit) {
			/* a quantifier right after a character applies to it alone */
			run[rl++] = ch;
			continue;
		}
	end_run:
		if (rl > bl) {
			memcpy(best, run, rl);
			bl = rl;
		}
		rl = 0;
	}
	if (rl > bl) {
		memcpy(best, run, rl);
		bl = rl;
	}
	if (!bl)
		return GPUENV_STR_NULL;
	return gpuenv_arena_str(a, gpuenv_str_n(best, bl));
}

/* The literals l of row into pat[0..l->n), checked as `what`. */
static int compile_literals(gpuenv_diag_t *d, const gpuenv_kb_signature_t *row,
	const gpuenv_kb_strs_t *l, struct pattern *pat, const char *what)
{
	for (uint32_t i = 0; i < l->n; i++) {
		if (!l->v[i].len || l->v[i].len > GPUENV_DIAG_MAX_PATTERN)
			return gpuenv_fail(d->ctx, GPUENV_EFORMAT, d->kb->files[GPUENV_KB_DIAGNOSE].origin,
				row->row.line, 0, "signature '%.*s': %s must have 1 to %d bytes",
				GPUENV_STR_ARG(row->id), what, GPUENV_DIAG_MAX_PATTERN);
		pat[i].lit = l->v[i];
		pat[i].icase = row->ignore_case == 1;
	}
	return 0;
}

/* `after` and `within`: the lines above a match that must hold one of the
 * literals (the traceback frame above a Python exception). */
static int compile_after(gpuenv_diag_t *d, const gpuenv_kb_signature_t *row, struct sig *s)
{
	const char *file = d->kb->files[GPUENV_KB_DIAGNOSE].origin;

	if (!row->after.n) {
		if (row->within != GPUENV_KB_NONE)
			return gpuenv_fail(d->ctx, GPUENV_EFORMAT, file, row->row.line, 0,
				"signature '%.*s': within without after", GPUENV_STR_ARG(row->id));
		return 0;
	}
	if (row->within != GPUENV_KB_NONE && (row->within < 0 || row->within > GPUENV_DIAG_MAX_WITHIN))
		return gpuenv_fail(d->ctx, GPUENV_EFORMAT, file, row->row.line, 0,
			"signature '%.*s': within must be 0 to %d lines", GPUENV_STR_ARG(row->id),
			GPUENV_DIAG_MAX_WITHIN);
	s->within = row->within == GPUENV_KB_NONE ? GPUENV_DIAG_WITHIN : (uint64_t)row->within;
	s->after = gpuenv_arena_calloc(&d->arena, row->after.n, sizeof(*s->after));
	if (!s->after)
		return gpuenv_fail(d->ctx, -ENOMEM, NULL, 0, 0, "out of memory");
	s->nafter = row->after.n;
	return compile_literals(d, row, &row->after, s->after, "an after literal");
}

static int compile_sig(gpuenv_diag_t *d, const gpuenv_kb_signature_t *row, struct sig *s)
{
	const char *file = d->kb->files[GPUENV_KB_DIAGNOSE].origin;
	size_t n = row->literal.n + row->regex.n, k = 0;
	int err;

	s->row = row;
	s->pat = gpuenv_arena_calloc(&d->arena, n ? n : 1, sizeof(*s->pat));
	if (!s->pat)
		return gpuenv_fail(d->ctx, -ENOMEM, NULL, 0, 0, "out of memory");
	err = compile_literals(d, row, &row->literal, s->pat, "a literal");
	if (err)
		return err;
	k = row->literal.n;
	for (uint32_t i = 0; i < row->regex.n; i++, k++) {
		struct pattern *p = &s->pat[k];
		gpuenv_str_t r = row->regex.v[i];
		char *cre;
		int rc;
		if (!r.len || r.len > GPUENV_DIAG_MAX_PATTERN || memchr(r.ptr, '\0', r.len))
			return gpuenv_fail(d->ctx, GPUENV_EFORMAT, file, row->row.line, 0,
				"signature '%.*s': a regex must have 1 to %d bytes and no NUL",
				GPUENV_STR_ARG(row->id), GPUENV_DIAG_MAX_PATTERN);
		cre = gpuenv_arena_strndup(&d->arena, r.ptr, r.len);
		if (!cre)
			return gpuenv_fail(d->ctx, -ENOMEM, NULL, 0, 0, "out of memory");
		p->is_regex = true;
		p->icase = row->ignore_case == 1;
		rc = regcomp(&p->re, cre, REG_EXTENDED | (p->icase ? REG_ICASE : 0));
		if (rc) {
			char msg[200];
			regerror(rc, &p->re, msg, sizeof(msg));
			return gpuenv_fail(d->ctx, GPUENV_ESYNTAX, file, row->row.line, 0,
				"signature '%.*s': regex '%s': %s", GPUENV_STR_ARG(row->id), cre, msg);
		}
		p->compiled = true;
		if (p->re.re_nsub >= MAX_CAPS) {
			return gpuenv_fail(d->ctx, GPUENV_EFORMAT, file, row->row.line, 0,
				"signature '%.*s': regex '%s' has more than %d groups",
				GPUENV_STR_ARG(row->id), cre, MAX_CAPS - 1);
		}
		p->lit = needle_of(&d->arena, r.ptr, r.len);
		/* the same regex, anchored to the start of its leading run */
		{
			char an[2 * GPUENV_DIAG_MAX_PATTERN + 16];
			size_t al = anchor_lead(r.ptr, r.len, an, sizeof(an));
			regex_t re2;
			if (al && regcomp(&re2, an, REG_EXTENDED | (p->icase ? REG_ICASE : 0)) == 0) {
				regfree(&p->re);
				p->re = re2;
				p->shift = an[0] == '^' ? 1 : 2;
			}
		}
	}
	s->npat = n;
	return compile_after(d, row, s);
}

void gpuenv_diag_free(gpuenv_diag_t *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nsigs; i++)
		for (size_t j = 0; j < d->sigs[i].npat; j++)
			if (d->sigs[i].pat[j].compiled)
				regfree(&d->sigs[i].pat[j].re);
	gpuenv_arena_free(&d->arena);
	gpuenv_free(d->ctx, d);
}

int gpuenv_diag_new(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb, gpuenv_diag_t **out)
{
	gpuenv_diag_t *d = gpuenv_calloc(ctx, 1, sizeof(*d));
	int r = 0;

	*out = NULL;
	if (!d)
		return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
	d->ctx = ctx;
	d->kb = kb;
	gpuenv_arena_init(&d->arena, ctx, 0);
	d->sigs = gpuenv_arena_calloc(&d->arena, kb->n_signature ? kb->n_signature : 1,
		sizeof(*d->sigs));
	if (!d->sigs)
		r = gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
	for (size_t i = 0; i < kb->n_signature && !r; i++) {
		r = compile_sig(d, &kb->signature[i], &d->sigs[i]);
		d->nsigs = i + 1;
	}
	if (r) {
		gpuenv_diag_free(d);
		return r;
	}
	*out = d;
	return 0;
}

/* ---- matching ---------------------------------------------------------------- */

/* memmem is a GNU extension: a plain search, first byte by memchr */
static const char *find_bytes(const char *h, size_t hl, const char *n, size_t nl)
{
	const char *end = h + hl;

	if (nl > hl)
		return NULL;
	while ((size_t)(end - h) >= nl) {
		const char *p = memchr(h, n[0], (size_t)(end - h) - nl + 1);
		if (!p)
			return NULL;
		if (memcmp(p, n, nl) == 0)
			return p;
		h = p + 1;
	}
	return NULL;
}

static const char *find_icase(const char *h, size_t hl, gpuenv_str_t n)
{
	if (n.len > hl)
		return NULL;
	for (size_t i = 0; i + n.len <= hl; i++) {
		size_t j = 0;
		while (j < n.len && gpuenv_to_lower((unsigned char)h[i + j]) == gpuenv_to_lower((unsigned char)n.ptr[j]))
			j++;
		if (j == n.len)
			return h + i;
	}
	return NULL;
}

static const char *find(const char *h, size_t hl, gpuenv_str_t n, bool icase)
{
	if (!n.len)
		return h;
	return icase ? find_icase(h, hl, n) : find_bytes(h, hl, n.ptr, n.len);
}

/* Does pattern p match line (NUL-terminated copy of length len)?  caps[0]
 * is the whole match, caps[1..] the groups (ptr NULL when unset). */
static bool match(const struct pattern *p, const char *line, size_t len, gpuenv_str_t *caps,
	size_t *ncaps)
{
	regmatch_t m[MAX_CAPS + 2];
	const char *at = find(line, len, p->lit, p->icase);

	if (!at)
		return false;
	if (!p->is_regex) {
		caps[0] = gpuenv_str_n(at, p->lit.len);
		*ncaps = 1;
		return true;
	}
	if (regexec(&p->re, line, MAX_CAPS + 2, m, 0) != 0)
		return false;
	/* an anchored regex: its group p->shift is the pattern's whole match */
	*ncaps = p->re.re_nsub + 1 - p->shift;
	for (size_t i = 0; i < *ncaps; i++) {
		const regmatch_t *g = &m[i ? i + p->shift : p->shift];
		caps[i] = g->rm_so < 0 ? GPUENV_STR_NULL
				       : gpuenv_str_n(line + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
	}
	return true;
}

/* ---- templates ----------------------------------------------------------------- */

static const char *afmt(gpuenv_arena_t *a, const char *fmt, ...) GPUENV_PRINTF(2, 3);

static const char *afmt(gpuenv_arena_t *a, const char *fmt, ...)
{
	gpuenv_str_t s;
	va_list ap;

	va_start(ap, fmt);
	s = gpuenv_arena_vprintf(a, fmt, ap);
	va_end(ap);
	/* NULL also for an unknown fact: memory running out is told apart
	 * through ctx->err (record() checks it) */
	if (!s.ptr)
		gpuenv_oom(a->ctx, "matching the log");
	return s.ptr;
}

static bool facts_cc(const gpuenv_diag_facts_t *f)
{
	return f && f->cc_major >= 0 && f->cc_minor >= 0 && f->cc_major < 100 && f->cc_minor < 10;
}

static bool facts_driver(const gpuenv_diag_facts_t *f, gpuenv_kb_ver_t *v)
{
	return f && f->driver && gpuenv_kb_ver_parse(gpuenv_str(f->driver), v);
}

/* The KB's variant for the machine's torch, NULL when unknown. */
static const gpuenv_kb_torch_variant_t *facts_variant(gpuenv_diag_t *d,
	const gpuenv_diag_facts_t *f)
{
	if (!f || !f->torch)
		return NULL;
	return gpuenv_kb_torch_variant(d->kb, gpuenv_str(f->torch));
}

/* "sm_50..sm_90 and no PTX" for the machine's torch: the cubins the probe
 * read from libtorch_cuda.so, else the KB's arch list of its variant. */
static const char *torch_code(gpuenv_diag_t *d, const gpuenv_diag_facts_t *f, gpuenv_arena_t *a)
{
	gpuenv_kb_sm_t sms[64], ptx[64];
	size_t ns = 0, np = 0;
	char r1[64], r2[64];

	if (f && f->torch_code) {
		for (size_t i = 0; i < f->n_torch_cubins && ns < 64; i++)
			if (gpuenv_kb_sm_parse(gpuenv_str(f->torch_cubins[i]), &sms[ns]))
				ns++;
		for (size_t i = 0; i < f->n_torch_ptx && np < 64; i++)
			if (gpuenv_kb_sm_parse(gpuenv_str(f->torch_ptx[i]), &ptx[np]))
				np++;
		gpuenv_kb_sms_range(sms, ns, r1, sizeof(r1));
		if (!np)
			return afmt(a, "%s and no PTX", r1);
		return afmt(a, "%s and PTX %s", r1, gpuenv_kb_sms_range(ptx, np, r2, sizeof(r2)));
	}
	{
		const gpuenv_kb_torch_variant_t *v = facts_variant(d, f);
		const gpuenv_kb_torch_arch_list_t *al = v ? gpuenv_kb_torch_arch(d->kb, v) : NULL;
		if (!al)
			return NULL;
		gpuenv_kb_sms_range(al->sm.v, al->sm.n, r1, sizeof(r1));
		if (!al->ptx.n)
			return afmt(a, "%s and no PTX", r1);
		return afmt(a, "%s and PTX %s", r1,
			gpuenv_kb_sms_range(al->ptx.v, al->ptx.n, r2, sizeof(r2)));
	}
}

/* "a cu128 build (torch 2.7: pip install torch==2.7.1 --index-url ...)" */
static const char *pick_phrase(gpuenv_diag_t *d, const gpuenv_kb_torch_variant_t *v,
	const char *after, gpuenv_arena_t *a)
{
	const char *cmd = gpuenv_kb_torch_install_cmd(d->kb, v, NULL, false, a);

	if (!cmd)
		return NULL;
	return afmt(a, "a %.*s build (torch %.*s: %s)%s", GPUENV_STR_ARG(v->tag),
		GPUENV_STR_ARG(v->torch.str), cmd, after);
}

/* Do the cubins / PTX read from libtorch_cuda.so cover the facts' GPU? */
static bool torch_covers(const gpuenv_diag_facts_t *f)
{
	gpuenv_kb_sm_t sms[64], ptx[64];
	gpuenv_kb_cover_t cov;
	size_t ns = 0, np = 0;

	for (size_t i = 0; i < f->n_torch_cubins && ns < 64; i++)
		ns += gpuenv_kb_sm_parse(gpuenv_str(f->torch_cubins[i]), &sms[ns]);
	for (size_t i = 0; i < f->n_torch_ptx && np < 64; i++)
		np += gpuenv_kb_sm_parse(gpuenv_str(f->torch_ptx[i]), &ptx[np]);
	return gpuenv_kb_code_covers(sms, ns, ptx, np, (unsigned)f->cc_major, (unsigned)f->cc_minor,
		&cov);
}

const char *gpuenv_diag_torch_pick(gpuenv_diag_t *d, const gpuenv_diag_facts_t *f,
	gpuenv_arena_t *a)
{
	gpuenv_kb_target_t t;
	gpuenv_kb_pick_req_t req;
	gpuenv_kb_pick_t pk;

	if (!facts_cc(f))
		return NULL;
	if (f->torch_code && torch_covers(f))
		return NULL; /* torch has code for this GPU: the culprit is another
				binary, and "install another torch" would be wrong */
	memset(&t, 0, sizeof(t));
	t.has_cc = true;
	t.cc_major = (unsigned)f->cc_major;
	t.cc_minor = (unsigned)f->cc_minor;
	t.has_driver = facts_driver(f, &t.driver);
	/* the choice doctor's fixes, preflight and `kb torch` make (kb.h) */
	memset(&req, 0, sizeof(req));
	req.targets = &t;
	req.n_targets = 1;
	req.current = f->torch;
	req.allow_driver_upgrade = true;
	if (gpuenv_kb_torch_pick(d->kb, &req, a, &pk) != 0) {
		gpuenv_oom(d->ctx, "matching the log"); /* its only failure */
		return NULL;
	}
	if (!pk.variant)
		return NULL;
	if (pk.driver_upgrade) {
		char after[128];
		snprintf(after, sizeof(after), " after upgrading the driver to >= %.*s",
			GPUENV_STR_ARG(pk.driver_upgrade->driver_linux.str));
		return pick_phrase(d, pk.variant, after, a);
	}
	return pick_phrase(d, pk.variant, "", a);
}

/* The oldest cuDNN line of the KB that lists the GPU's compute capability. */
static const char *cudnn_for_gpu(gpuenv_diag_t *d, const gpuenv_diag_facts_t *f, gpuenv_arena_t *a)
{
	const gpuenv_kb_cudnn_t *best = NULL;

	if (!facts_cc(f))
		return NULL;
	for (size_t i = 0; i < d->kb->n_cudnn; i++) {
		const gpuenv_kb_cudnn_t *c = &d->kb->cudnn[i];
		for (uint32_t j = 0; j < c->cc.n; j++)
			if (c->cc.v[j].part[0] == (uint32_t)f->cc_major &&
				c->cc.v[j].part[1] == (uint32_t)f->cc_minor &&
				(!best || gpuenv_kb_ver_cmp(&c->cudnn, &best->cudnn) < 0))
				best = c;
	}
	if (!best)
		return NULL;
	{
		char list[256];
		size_t n = 0;
		list[0] = '\0';
		for (uint32_t j = 0; j < best->cuda.n && n + 16 < sizeof(list); j++) {
			int w = snprintf(list + n, sizeof(list) - n, "%s%.*s", j ? ", " : "",
				GPUENV_STR_ARG(best->cuda.v[j].str));
			if (w > 0)
				n += (size_t)w;
		}
		return afmt(a, "%.*s (for CUDA %s)", GPUENV_STR_ARG(best->cudnn.str), list);
	}
}

static const char *fmt_mem(uint64_t b, gpuenv_arena_t *a)
{
	return afmt(a, "%.1f GiB", (double)b / (1024.0 * 1024.0 * 1024.0));
}

/* Does the GPU run FP16 fast in TensorRT, by the KB's hardware precision
 * matrix (any release: the log does not say which TensorRT)?  The fix of
 * TensorRT's Half2 message differs: a T4 has fast FP16, so there the
 * TensorRT in use is older than the GPU, not the GPU too old. */
static const char *gpu_fp16(gpuenv_diag_t *d, const gpuenv_diag_facts_t *f, gpuenv_arena_t *a)
{
	const gpuenv_kb_trt_precision_t *row;

	if (!facts_cc(f))
		return NULL;
	if (gpuenv_kb_trt_precision(d->kb, "fp16", NULL, f->cc_major, f->cc_minor, &row))
		return afmt(a, "has fast FP16: TensorRT's hardware precision matrix lists FP16 for "
			"compute capability %d.%d (in every release the knowledge base covers, from TensorRT %.*s), "
			"so the GPU is not the cause: the TensorRT that printed this is older than the GPU or "
			"was not built for it; keep --fp16 and build with a TensorRT (%.*s or newer) that lists "
			"this GPU (gpuenv trt optimize --gpu writes the line) [tensorrt.toml:%u]", f->cc_major,
			f->cc_minor, GPUENV_STR_ARG(row->tensorrt_min.str), GPUENV_STR_ARG(row->tensorrt_min.str),
			(unsigned)row->row.line);
	return afmt(a, "has no fast FP16 in TensorRT's hardware precision matrix: build the engine "
		"in FP32 (drop --fp16 / the FP16 builder flag) or move to a GPU of compute capability "
		"7.0 or newer, whose Tensor Cores run FP16");
}

/* A facts or KB placeholder by name; NULL when unknown. */
static const char *fact(gpuenv_diag_t *d, gpuenv_str_t name, const gpuenv_diag_facts_t *f,
	gpuenv_arena_t *a)
{
#define IS(s) gpuenv_str_eq_cstr(name, s)
	if (IS("gpu"))
		return f ? f->gpu : NULL;
	if (IS("gpu_cc"))
		return facts_cc(f) ? afmt(a, "%d.%d", f->cc_major, f->cc_minor) : NULL;
	if (IS("gpu_sm"))
		return facts_cc(f) ? afmt(a, "sm_%d%d", f->cc_major, f->cc_minor) : NULL;
	if (IS("gpu_arch")) {
		const gpuenv_kb_arch_t *ar = facts_cc(f)
			? gpuenv_kb_arch(d->kb, (unsigned)f->cc_major, (unsigned)f->cc_minor)
			: NULL;
		return ar ? afmt(a, "%.*s", GPUENV_STR_ARG(ar->architecture)) : NULL;
	}
	if (IS("gpu_mem"))
		return f && f->gpu_mem ? fmt_mem(f->gpu_mem, a) : NULL;
	if (IS("gpu_count"))
		return f && f->gpu_count ? afmt(a, "%u", f->gpu_count) : NULL;
	if (IS("driver"))
		return f ? f->driver : NULL;
	if (IS("driver_cuda")) {
		gpuenv_kb_ver_t dv;
		gpuenv_kb_driver_max_t mx;
		if (f && f->driver_cuda)
			return f->driver_cuda;
		if (!facts_driver(f, &dv))
			return NULL;
		gpuenv_kb_driver_max_cuda(d->kb, &dv, &mx);
		return mx.ga ? afmt(a, "%.*s", GPUENV_STR_ARG(mx.ga->cuda.str)) : NULL;
	}
	if (IS("kernel_module"))
		return f ? f->kernel_module : NULL;
	if (IS("cuda_visible_devices"))
		return f && f->cuda_visible_devices ? f->cuda_visible_devices : NULL;
	if (IS("torch"))
		return f ? f->torch : NULL;
	if (IS("torch_cuda")) {
		const gpuenv_kb_torch_variant_t *v;
		if (f && f->torch_cuda)
			return f->torch_cuda;
		v = facts_variant(d, f);
		return v ? afmt(a, "%.*s", GPUENV_STR_ARG(v->cuda.str)) : NULL;
	}
	if (IS("torch_code"))
		return torch_code(d, f, a);
	if (IS("torch_cudnn")) {
		const gpuenv_kb_torch_variant_t *v = facts_variant(d, f);
		return v && v->cudnn.n ? afmt(a, "%.*s", GPUENV_STR_ARG(v->cudnn.str)) : NULL;
	}
	if (IS("torch_pick"))
		return gpuenv_diag_torch_pick(d, f, a);
	if (IS("cudnn"))
		return f ? f->cudnn : NULL;
	if (IS("cudnn_for_gpu"))
		return cudnn_for_gpu(d, f, a);
	if (IS("gpu_fp16"))
		return gpu_fp16(d, f, a);
	return NULL;
#undef IS
}

/* {N|filter}: a capture turned into a KB fact. */
static const char *filter(gpuenv_diag_t *d, gpuenv_str_t name, gpuenv_str_t val, gpuenv_arena_t *a)
{
	if (gpuenv_str_eq_cstr(name, "cuda_int")) {
		/* a CUDA version integer: 11040 = 11.4, 12080 = 12.8 */
		uint64_t x;
		if (!gpuenv_str_to_u64(val, &x) || x < 1000 || x > 99999)
			return NULL;
		return afmt(a, "%u.%u", (unsigned)(x / 1000), (unsigned)(x % 1000 / 10));
	}
	if (gpuenv_str_eq_cstr(name, "first_cuda") || gpuenv_str_eq_cstr(name, "first_driver")) {
		/* sm_120 / compute_120 / 120 -> the oldest toolkit that builds it */
		gpuenv_kb_sm_t sm;
		char buf[32];
		const gpuenv_kb_toolkit_t *ga;
		const gpuenv_kb_cuda_arch_list_t *al;
		if (val.len > 20)
			return NULL;
		if (val.len && val.ptr[0] >= '0' && val.ptr[0] <= '9') {
			snprintf(buf, sizeof(buf), "sm_%.*s", GPUENV_STR_ARG(val));
			val = gpuenv_str(buf);
		}
		if (!gpuenv_kb_sm_parse(val, &sm))
			return NULL;
		al = gpuenv_kb_arch_first_cuda(d->kb, sm.major, sm.minor, &ga);
		if (!al)
			return NULL;
		if (name.len == 10) /* first_cuda */
			return afmt(a, "%.*s", GPUENV_STR_ARG(al->cuda_min.str));
		return ga ? afmt(a, "%.*s", GPUENV_STR_ARG(ga->driver_linux.str)) : NULL;
	}
	if (gpuenv_str_eq_cstr(name, "min_driver")) {
		const gpuenv_kb_toolkit_t *ga;
		gpuenv_kb_ver_t v;
		if (!gpuenv_kb_ver_parse(val, &v) || v.n < 2)
			return NULL;
		ga = gpuenv_kb_toolkit(d->kb, &v, 0);
		return ga ? afmt(a, "%.*s", GPUENV_STR_ARG(ga->driver_linux.str)) : NULL;
	}
	if (gpuenv_str_eq_cstr(name, "torch_for_sm")) {
		/* the build to install for a GPU the log names ("sm_120") */
		gpuenv_diag_facts_t f;
		gpuenv_kb_sm_t sm;
		if (!gpuenv_kb_sm_parse(val, &sm))
			return NULL;
		memset(&f, 0, sizeof(f));
		f.cc_major = sm.major;
		f.cc_minor = sm.minor;
		return gpuenv_diag_torch_pick(d, &f, a);
	}
	return NULL;
}

/* What expand's *missing says when memory ran out (compared by address). */
static const char expand_nomem[] = "out of memory";

/* Fill a template.  lenient: a placeholder that cannot be filled becomes
 * "?" instead of failing the whole text. */
static const char *expand(gpuenv_diag_t *d, const char *tmpl, size_t len, const gpuenv_str_t *caps,
	size_t ncaps, const gpuenv_diag_facts_t *facts, gpuenv_arena_t *arena, bool lenient,
	const char **missing)
{
	gpuenv_buf_t b;
	const char *out = NULL;
	const char *const nomem = expand_nomem;

	*missing = NULL;
	gpuenv_buf_init(&b, d->ctx, 64 * 1024);
	for (size_t i = 0; i < len;) {
		const char *close;
		gpuenv_str_t name, val = GPUENV_STR_NULL, flt;
		const char *v = NULL;
		if (tmpl[i] != '{' || !(close = memchr(tmpl + i, '}', len - i))) {
			if (gpuenv_buf_putc(&b, tmpl[i]))
				goto oom;
			i++;
			continue;
		}
		name = gpuenv_str_n(tmpl + i + 1, (size_t)(close - tmpl - i - 1));
		flt = gpuenv_str_split(name, '|', &name);
		if (name.len == 1 && name.ptr[0] >= '1' && name.ptr[0] <= '9') {
			size_t k = (size_t)(name.ptr[0] - '0');
			if (k < ncaps && caps[k].ptr)
				val = caps[k];
		} else {
			v = fact(d, name, facts, arena);
			if (v)
				val = gpuenv_str(v);
		}
		if (val.ptr && flt.ptr) {
			v = filter(d, flt, val, arena);
			val = v ? gpuenv_str(v) : GPUENV_STR_NULL;
		}
		if (!val.ptr && lenient)
			val = gpuenv_str("?");
		if (!val.ptr) {
			*missing = afmt(arena, "%.*s", (int)(close - tmpl - i - 1), tmpl + i + 1);
			if (!*missing)
				*missing = nomem;
			gpuenv_buf_free(&b);
			return NULL;
		}
		if (gpuenv_buf_append(&b, val.ptr, val.len))
			goto oom;
		i = (size_t)(close - tmpl) + 1;
	}
	out = gpuenv_arena_strndup(arena, b.data ? b.data : "", b.len);
	gpuenv_buf_free(&b);
	if (!out)
		*missing = nomem;
	return out;
oom:
	gpuenv_buf_free(&b);
	*missing = nomem;
	return NULL;
}

const char *gpuenv_diag_expand(gpuenv_diag_t *d, const char *tmpl, size_t len,
	const gpuenv_str_t *caps, size_t ncaps, const gpuenv_diag_facts_t *facts,
	gpuenv_arena_t *arena, const char **missing)
{
	return expand(d, tmpl, len, caps, ncaps, facts, arena, false, missing);
}

/* ---- scanning ------------------------------------------------------------------------- */

static int record(gpuenv_diag_t *d, const struct sig *s, gpuenv_diag_hit_t *h, uint64_t lineno,
	const char *line, size_t len, const gpuenv_str_t *caps, size_t ncaps,
	const gpuenv_diag_facts_t *facts, gpuenv_arena_t *a)
{
	const gpuenv_kb_signature_t *row = s->row;
	gpuenv_str_t t = gpuenv_str_trim(gpuenv_str_n(line, len)), c[MAX_CAPS];
	const char *miss;

	if (h->count++) {
		if (h->n_lines < GPUENV_DIAG_MAX_LINES)
			h->lines[h->n_lines++] = lineno;
		return 0;
	}
	h->sig = row;
	h->line = lineno;
	h->lines[0] = lineno;
	h->n_lines = 1;
	if (t.len > 400)
		t.len = 400;
	h->text = gpuenv_arena_str(a, t);
	h->match = gpuenv_arena_str(a, gpuenv_str_n(caps[0].ptr, caps[0].len > 400 ? 400 : caps[0].len));
	if ((t.len && !h->text.ptr) || (caps[0].len && !h->match.ptr))
		return -ENOMEM;
	/* the captures point into the scratch line: copy them */
	for (size_t i = 0; i < ncaps; i++) {
		c[i] = caps[i].ptr ? gpuenv_arena_str(a, caps[i]) : GPUENV_STR_NULL;
		if (caps[i].ptr && caps[i].len && !c[i].ptr)
			return -ENOMEM;
		if (caps[i].ptr && !c[i].ptr)
			c[i] = gpuenv_str_n("", 0);
	}
	/* the cause and the generic fix always come out ("?" for what is not
	 * known); the fix from the facts, else from the log, when they fill */
	h->cause = expand(d, row->cause.ptr, row->cause.len, c, ncaps, facts, a, true, &miss);
	if (row->fix_facts.ptr && facts) {
		h->fix = expand(d, row->fix_facts.ptr, row->fix_facts.len, c, ncaps, facts, a, false,
			&miss);
		h->concrete = h->fix != NULL;
		/* a fact that is unknown falls back to the log's fix; memory
		 * running out does not */
		if (!h->fix && miss == expand_nomem)
			return -ENOMEM;
	}
	if (!h->fix && row->fix_log.ptr) {
		h->fix = expand(d, row->fix_log.ptr, row->fix_log.len, c, ncaps, NULL, a, false, &miss);
		if (!h->fix && miss == expand_nomem)
			return -ENOMEM;
	}
	if (!h->fix)
		h->fix = expand(d, row->fix.ptr, row->fix.len, c, ncaps, NULL, a, true, &miss);
	if (!h->cause || !h->fix || d->ctx->err.code == -ENOMEM)
		return -ENOMEM;
	return 0;
}

int gpuenv_diag_scan(gpuenv_diag_t *d, const char *log, size_t len,
	const gpuenv_diag_facts_t *facts, gpuenv_arena_t *arena, gpuenv_diag_result_t *out)
{
	char *scratch;
	gpuenv_diag_hit_t *hits;
	size_t *slot; /* signature -> hit index + 1 */
	uint64_t *seen; /* signature -> the last line holding one of its `after` literals, 0: none */
	uint64_t lineno = 0;
	size_t pos = 0;
	int r = 0;

	memset(out, 0, sizeof(*out));
	/* record() tells memory running out from an unknown fact by ctx->err */
	gpuenv_error_clear(d->ctx);
	hits = gpuenv_arena_calloc(arena, d->nsigs ? d->nsigs : 1, sizeof(*hits));
	slot = gpuenv_calloc(d->ctx, d->nsigs ? d->nsigs : 1, sizeof(*slot));
	seen = gpuenv_calloc(d->ctx, d->nsigs ? d->nsigs : 1, sizeof(*seen));
	scratch = gpuenv_alloc(d->ctx, GPUENV_DIAG_MAX_LINE + 1);
	if (!hits || !slot || !seen || !scratch) {
		r = gpuenv_fail(d->ctx, -ENOMEM, NULL, 0, 0, "out of memory");
		goto done;
	}
	while (pos < len) {
		const char *nl = memchr(log + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - log - pos) : len - pos;
		size_t n = ll;

		lineno++;
		if (n && log[pos + n - 1] == '\r')
			n--;
		/* long lines (a base64 blob, a progress bar) are looked at up to the cap */
		if (n > GPUENV_DIAG_MAX_LINE)
			n = GPUENV_DIAG_MAX_LINE;
		memcpy(scratch, log + pos, n);
		scratch[n] = '\0';
		for (size_t i = 0; i < n; i++)
			if (scratch[i] == '\0')
				scratch[i] = ' ';
		pos += ll + (nl ? 1 : 0);
		if (!n)
			continue;
		for (size_t i = 0; i < d->nsigs; i++)
			for (size_t j = 0; j < d->sigs[i].nafter; j++)
				if (find(scratch, n, d->sigs[i].after[j].lit, d->sigs[i].after[j].icase)) {
					seen[i] = lineno;
					break;
				}
		for (size_t i = 0; i < d->nsigs; i++) {
			const struct sig *s = &d->sigs[i];
			gpuenv_str_t caps[MAX_CAPS];
			size_t ncaps = 0, j;
			if (s->nafter && (!seen[i] || lineno - seen[i] > s->within))
				continue;
			for (j = 0; j < s->npat; j++)
				if (match(&s->pat[j], scratch, n, caps, &ncaps))
					break;
			if (j == s->npat)
				continue;
			if (!slot[i])
				slot[i] = ++out->n;
			r = record(d, s, &hits[slot[i] - 1], lineno, scratch, n, caps, ncaps, facts,
				arena);
			if (r) {
				r = gpuenv_fail(d->ctx, r, NULL, 0, 0, "out of memory");
				goto done;
			}
			break; /* the first signature claims the line */
		}
	}
	out->hits = hits;
	out->lines = lineno;
done:
	gpuenv_free(d->ctx, slot);
	gpuenv_free(d->ctx, seen);
	gpuenv_free(d->ctx, scratch);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

/* ---- facts from `gpuenv probe --json` --------------------------------------------------- */

int gpuenv_diag_facts_from(const gpuenv_facts_t *fa, gpuenv_diag_facts_t *f)
{
	size_t ei = gpuenv_facts_active_env(fa);
	const gpuenv_facts_framework_t *torch = NULL;

	memset(f, 0, sizeof(*f));
	f->cc_major = f->cc_minor = -1;
	for (size_t i = 0; i < fa->ngpus; i++) {
		const gpuenv_facts_gpu_t *g = &fa->gpus[i];
		int maj, min;
		if (g->visible == GPUENV_TRI_FALSE)
			continue;
		f->gpu_count++;
		if (f->gpu)
			continue;
		f->gpu = g->name;
		if (gpuenv_facts_cc(g->compute_capability, &maj, &min)) {
			f->cc_major = maj;
			f->cc_minor = min;
		}
		if (g->memory_total > 0)
			f->gpu_mem = (uint64_t)g->memory_total;
	}
	f->driver = fa->driver.version;
	f->driver_cuda = fa->driver.cuda_version;
	f->kernel_module = fa->driver.kernel_module;
	if (fa->cvd.set == GPUENV_TRI_TRUE)
		f->cuda_visible_devices = fa->cvd.value;
	/* the active environment's torch, else the first torch found */
	for (size_t i = 0; i < fa->nenvs; i++)
		for (size_t j = 0; j < fa->envs[i].nframeworks; j++) {
			const gpuenv_facts_framework_t *fw = &fa->envs[i].frameworks[j];
			if (!fw->dist || strcmp(fw->dist, "torch") != 0)
				continue;
			if (!torch || i == ei)
				torch = fw;
		}
	if (torch) {
		f->torch = torch->version;
		f->torch_cuda = torch->cuda;
		for (size_t i = 0; i < torch->nbinaries; i++) {
			const gpuenv_facts_binary_t *b = &torch->binaries[i];
			/* libtorch_cuda.so holds torch's own kernels */
			if (!b->path || !strstr(b->path, "libtorch_cuda.so"))
				continue;
			if (b->code_state == GPUENV_FACT_SET) {
				f->torch_cubins = b->cubins.items;
				f->n_torch_cubins = b->cubins.n;
				f->torch_ptx = b->ptx.items;
				f->n_torch_ptx = b->ptx.n;
				f->torch_code = f->n_torch_cubins || f->n_torch_ptx;
			}
			break;
		}
	}
	for (size_t i = 0; i < fa->nlibraries; i++) {
		const gpuenv_facts_library_t *l = &fa->libraries[i];
		if (l->family && strcmp(l->family, "cudnn") == 0) {
			f->cudnn = l->version.version;
			break;
		}
	}
	return 0;
}

int gpuenv_diag_facts_parse(gpuenv_ctx_t *ctx, const char *text, size_t len, const char *name,
	gpuenv_arena_t *a, gpuenv_diag_facts_t *f)
{
	const gpuenv_facts_t *fa;
	int rc;

	memset(f, 0, sizeof(*f));
	f->cc_major = f->cc_minor = -1;
	if ((rc = gpuenv_facts_parse(ctx, a, text, len, name, &fa)) != 0)
		return rc;
	return gpuenv_diag_facts_from(fa, f);
}
