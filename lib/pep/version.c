/* PEP 440 versions: parse, compare, format.
 *
 * The grammar and the order are pypa/packaging's (the reference the resolver
 * ecosystem agrees on): an optional 'v', epoch 'N!', release 'N(.N)*', then
 * optional pre-release (a|alpha|b|beta|c|rc|pre|preview), post-release
 * (-N or post|rev|r) and dev-release parts, each with an optional '.', '_' or
 * '-' before and after its letters and an implicit 0 when the number is
 * missing, and a local label '+[a-z0-9]+([._-][a-z0-9]+)*'.  Letters are
 * ASCII and case-insensitive; surrounding white space is Python's (Unicode)
 * white space.  Numbers are uint64_t (see pep440.h).
 *
 * The comparison needs no allocation: it walks the fields in place, with
 * trailing zeros of the release ignored and the suffix ranked as packaging's
 * _cmpkey does (dev-only < a < b < rc < final, then post, then dev). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/pep440.h"
#include "pep440_internal.h"

/* ---- white space --------------------------------------------------------- */

size_t pep440_space_at(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;

	if (!n)
		return 0;
	if (u[0] == ' ' || (u[0] >= 0x09 && u[0] <= 0x0d) || (u[0] >= 0x1c && u[0] <= 0x1f))
		return 1;
	if (u[0] == 0xc2 && n >= 2 && (u[1] == 0x85 || u[1] == 0xa0))
		return 2; /* U+0085, U+00A0 */
	if (n < 3)
		return 0;
	if (u[0] == 0xe1 && u[1] == 0x9a && u[2] == 0x80)
		return 3; /* U+1680 */
	if (u[0] == 0xe2 && u[1] == 0x80 &&
		((u[2] >= 0x80 && u[2] <= 0x8a) || u[2] == 0xa8 || u[2] == 0xa9 || u[2] == 0xaf))
		return 3; /* U+2000..U+200A, U+2028, U+2029, U+202F */
	if (u[0] == 0xe2 && u[1] == 0x81 && u[2] == 0x9f)
		return 3; /* U+205F */
	if (u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x80)
		return 3; /* U+3000 */
	return 0;
}

size_t pep440_space_before(const char *p, size_t n)
{
	if (n >= 1 && pep440_space_at(p + n - 1, 1) == 1)
		return 1;
	if (n >= 2 && pep440_space_at(p + n - 2, 2) == 2)
		return 2;
	if (n >= 3 && pep440_space_at(p + n - 3, 3) == 3)
		return 3;
	return 0;
}

gpuenv_str_t pep440_strip(gpuenv_str_t s)
{
	size_t k;

	if (!s.ptr)
		return s;
	while (s.len && (k = pep440_space_at(s.ptr, s.len)) != 0) {
		s.ptr += k;
		s.len -= k;
	}
	while (s.len && (k = pep440_space_before(s.ptr, s.len)) != 0)
		s.len -= k;
	return s;
}

/* ---- parsing ------------------------------------------------------------- */

static inline bool is_sep(int c)
{
	return c == '.' || c == '_' || c == '-';
}

/* Case-insensitive: does s[i..n) start with word? */
static bool starts_with(const char *s, size_t n, size_t i, const char *word, size_t wlen)
{
	if (n - i < wlen)
		return false;
	for (size_t k = 0; k < wlen; k++)
		if (gpuenv_to_lower((unsigned char)s[i + k]) != word[k])
			return false;
	return true;
}

struct word {
	const char *w;
	size_t len;
	int kind;
};

/* packaging's alternation order: the first word that matches wins */
static const struct word pre_words[] = {
	{ "alpha", 5, GPUENV_PRE_A },
	{ "a", 1, GPUENV_PRE_A },
	{ "beta", 4, GPUENV_PRE_B },
	{ "b", 1, GPUENV_PRE_B },
	{ "preview", 7, GPUENV_PRE_RC },
	{ "pre", 3, GPUENV_PRE_RC },
	{ "c", 1, GPUENV_PRE_RC },
	{ "rc", 2, GPUENV_PRE_RC },
};

static const struct word post_words[] = {
	{ "post", 4, 1 },
	{ "rev", 3, 1 },
	{ "r", 1, 1 },
};

static const struct word *match_word(const struct word *words, size_t nwords, const char *s,
	size_t n, size_t i)
{
	for (size_t k = 0; k < nwords; k++)
		if (starts_with(s, n, i, words[k].w, words[k].len))
			return &words[k];
	return NULL;
}

struct vparse {
	gpuenv_ctx_t *ctx;
	gpuenv_str_t text; /* the whole input, for messages */
	size_t off;	   /* where s starts in text */
	int code;	   /* GPUENV_EVERSION or GPUENV_ESPEC */
	const char *s;
	size_t n;
};

static int fail_at(struct vparse *p, size_t i, const char *why)
{
	size_t col = p->off + i + 1;
	int shown = p->text.len > 80 ? 80 : (int)p->text.len;

	return gpuenv_fail(p->ctx, p->code, NULL, 1, col > 65535 ? 65535u : (unsigned)col,
		"invalid %s '%.*s%s': %s at column %zu",
		p->code == GPUENV_ESPEC ? "specifier" : "version", shown, p->text.ptr,
		p->text.len > 80 ? "..." : "", why, col);
}

/* Digits at s[*i..) into *out; false on overflow (the digits are consumed
 * either way). The caller has checked there is at least one digit. */
static bool number(struct vparse *p, size_t *i, uint64_t *out)
{
	uint64_t v = 0;
	bool ok = true;

	while (*i < p->n && gpuenv_is_digit((unsigned char)p->s[*i])) {
		unsigned d = (unsigned)(p->s[*i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			ok = false;
		else
			v = v * 10 + d;
		(*i)++;
	}
	*out = v;
	return ok;
}

static int num_or_fail(struct vparse *p, size_t *i, uint64_t *out)
{
	size_t start = *i;

	if (!number(p, i, out))
		return fail_at(p, start, "number larger than 18446744073709551615");
	return 0;
}

/* An optional separator then digits: the implicit-0 tail of pre/post/dev. */
static int opt_sep_num(struct vparse *p, size_t *i, uint64_t *out)
{
	*out = 0;
	if (*i < p->n && is_sep((unsigned char)p->s[*i]))
		(*i)++;
	if (*i < p->n && gpuenv_is_digit((unsigned char)p->s[*i]))
		return num_or_fail(p, i, out);
	return 0;
}

/* Local label at s[i..): copy it normalized into the arena. */
static int parse_local(struct vparse *p, gpuenv_arena_t *arena, size_t *i, gpuenv_str_t *out)
{
	size_t start = *i, j = *i, end;
	char *dst;
	size_t w = 0;

	for (;;) {
		if (j >= p->n || !gpuenv_is_alnum((unsigned char)p->s[j]))
			return fail_at(p, j, j == start ? "expected a local label after '+'"
							 : "expected letters or digits in the local label");
		while (j < p->n && gpuenv_is_alnum((unsigned char)p->s[j]))
			j++;
		if (j + 1 < p->n && is_sep((unsigned char)p->s[j]) &&
			gpuenv_is_alnum((unsigned char)p->s[j + 1])) {
			j++;
			continue;
		}
		break;
	}
	end = j;
	dst = gpuenv_arena_alloc(arena, end - start + 1);
	if (!dst)
		return gpuenv_oom(p->ctx, "parsing a version");
	/* segment by segment: lower case, '.' between, numbers without their
	 * leading zeros (packaging turns numeric segments into ints) */
	for (j = start; j < end;) {
		size_t seg = j, k;
		bool numeric = true;
		while (j < end && !is_sep((unsigned char)p->s[j])) {
			if (!gpuenv_is_digit((unsigned char)p->s[j]))
				numeric = false;
			j++;
		}
		k = seg;
		if (numeric)
			while (k + 1 < j && p->s[k] == '0')
				k++;
		for (; k < j; k++)
			dst[w++] = (char)gpuenv_to_lower((unsigned char)p->s[k]);
		if (j < end) {
			dst[w++] = '.';
			j++;
		}
	}
	dst[w] = '\0';
	*out = gpuenv_str_n(dst, w);
	*i = end;
	return 0;
}

int pep440_version_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	size_t off, gpuenv_str_t str, int code, gpuenv_version_t *out)
{
	struct vparse p = { ctx, text, off, code, str.ptr, str.len };
	const char *s = str.ptr;
	size_t n = str.len, i = 0, j, count, rstart;
	const struct word *w;
	uint64_t *rel;
	int r;

	memset(out, 0, sizeof(*out));
	if (!n)
		return fail_at(&p, 0, "empty version");
	if (gpuenv_to_lower((unsigned char)s[0]) == 'v')
		i++;
	if (i >= n || !gpuenv_is_digit((unsigned char)s[i]))
		return fail_at(&p, i, "expected a release number");

	/* epoch: digits then '!' */
	j = i;
	while (j < n && gpuenv_is_digit((unsigned char)s[j]))
		j++;
	if (j < n && s[j] == '!') {
		if ((r = num_or_fail(&p, &i, &out->epoch)))
			return r;
		i++;
		if (i >= n || !gpuenv_is_digit((unsigned char)s[i]))
			return fail_at(&p, i, "expected a release number after the epoch");
	}

	/* release: count the parts, then convert them into the arena */
	rstart = i;
	count = 1;
	j = i;
	while (j < n && gpuenv_is_digit((unsigned char)s[j]))
		j++;
	while (j + 1 < n && s[j] == '.' && gpuenv_is_digit((unsigned char)s[j + 1])) {
		j++;
		count++;
		while (j < n && gpuenv_is_digit((unsigned char)s[j]))
			j++;
	}
	rel = gpuenv_arena_alloc(arena, count * sizeof(*rel));
	if (!rel)
		return gpuenv_oom(ctx, "parsing a version");
	i = rstart;
	for (size_t k = 0; k < count; k++) {
		if (k)
			i++; /* the '.' */
		if ((r = num_or_fail(&p, &i, &rel[k])))
			return r;
	}
	out->release = rel;
	out->nrelease = count;

	/* pre-release */
	j = i;
	if (j < n && is_sep((unsigned char)s[j]))
		j++;
	if ((w = match_word(pre_words, sizeof(pre_words) / sizeof(pre_words[0]), s, n, j))) {
		j += w->len;
		out->pre_kind = w->kind;
		if ((r = opt_sep_num(&p, &j, &out->pre)))
			return r;
		i = j;
	}

	/* post-release: "-N", or [sep](post|rev|r)[sep][N] */
	if (i + 1 < n && s[i] == '-' && gpuenv_is_digit((unsigned char)s[i + 1])) {
		i++;
		if ((r = num_or_fail(&p, &i, &out->post)))
			return r;
		out->has_post = true;
	} else {
		j = i;
		if (j < n && is_sep((unsigned char)s[j]))
			j++;
		if ((w = match_word(post_words, sizeof(post_words) / sizeof(post_words[0]), s, n, j))) {
			j += w->len;
			if ((r = opt_sep_num(&p, &j, &out->post)))
				return r;
			out->has_post = true;
			i = j;
		}
	}

	/* dev-release */
	j = i;
	if (j < n && is_sep((unsigned char)s[j]))
		j++;
	if (starts_with(s, n, j, "dev", 3)) {
		j += 3;
		if ((r = opt_sep_num(&p, &j, &out->dev)))
			return r;
		out->has_dev = true;
		i = j;
	}

	/* local label */
	if (i < n && s[i] == '+') {
		i++;
		if ((r = parse_local(&p, arena, &i, &out->local)))
			return r;
	}

	if (i < n) {
		char why[64];
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f)
			snprintf(why, sizeof(why), "unexpected '%c'", c);
		else
			snprintf(why, sizeof(why), "unexpected byte 0x%02x", c);
		return fail_at(&p, i, why);
	}
	return 0;
}

int gpuenv_version_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	gpuenv_version_t *out)
{
	gpuenv_str_t s;

	if (!text.ptr)
		text = GPUENV_STR_LIT("");
	s = pep440_strip(text);
	return pep440_version_parse(ctx, arena, text, (size_t)(s.ptr - text.ptr), s,
		GPUENV_EVERSION, out);
}

/* ---- comparison ---------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* Release parts with trailing zeros ignored: 1.0 == 1.0.0 < 1.0.1. */
static int cmp_release(const gpuenv_version_t *a, const gpuenv_version_t *b)
{
	size_t n = a->nrelease < b->nrelease ? a->nrelease : b->nrelease;

	for (size_t i = 0; i < n; i++)
		if (a->release[i] != b->release[i])
			return cmp_u64(a->release[i], b->release[i]);
	for (size_t i = n; i < a->nrelease; i++)
		if (a->release[i])
			return 1;
	for (size_t i = n; i < b->nrelease; i++)
		if (b->release[i])
			return -1;
	return 0;
}

/* packaging's _cmpkey pre slot: a bare .devN sorts before any pre-release,
 * no pre-release after all of them. */
static int pre_rank(const gpuenv_version_t *v)
{
	if (v->pre_kind == GPUENV_PRE_NONE)
		return !v->has_post && v->has_dev ? 0 : 4;
	return v->pre_kind;
}

static int cmp_suffix(const gpuenv_version_t *a, const gpuenv_version_t *b)
{
	int ra = pre_rank(a), rb = pre_rank(b);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra >= 1 && ra <= 3 && a->pre != b->pre)
		return cmp_u64(a->pre, b->pre);
	if (a->has_post != b->has_post)
		return a->has_post ? 1 : -1;
	if (a->has_post && a->post != b->post)
		return cmp_u64(a->post, b->post);
	if (a->has_dev != b->has_dev)
		return a->has_dev ? -1 : 1;
	if (a->has_dev && a->dev != b->dev)
		return cmp_u64(a->dev, b->dev);
	return 0;
}

/* Local labels, segment by segment: numbers compare as numbers and sort
 * after words, words compare as bytes, a shorter label that is a prefix of
 * the other sorts first; no label sorts before any label.  Labels are
 * normalized, so numbers have no leading zeros. */
static int cmp_local(gpuenv_str_t a, gpuenv_str_t b)
{
	size_t i = 0, j = 0;

	if (!a.len || !b.len)
		return (a.len != 0) - (b.len != 0);
	for (;;) {
		size_t ai = i, bj = j;
		bool an = true, bn = true;
		while (i < a.len && a.ptr[i] != '.') {
			an = an && gpuenv_is_digit((unsigned char)a.ptr[i]);
			i++;
		}
		while (j < b.len && b.ptr[j] != '.') {
			bn = bn && gpuenv_is_digit((unsigned char)b.ptr[j]);
			j++;
		}
		size_t la = i - ai, lb = j - bj;
		if (an != bn)
			return an ? 1 : -1;
		if (an && la != lb)
			return la < lb ? -1 : 1;
		size_t m = la < lb ? la : lb;
		int c = memcmp(a.ptr + ai, b.ptr + bj, m);
		if (c)
			return c < 0 ? -1 : 1;
		if (la != lb)
			return la < lb ? -1 : 1;
		bool aend = i >= a.len, bend = j >= b.len;
		if (aend || bend)
			return (int)!aend - (int)!bend;
		i++;
		j++;
	}
}

int gpuenv_version_cmp_public(const gpuenv_version_t *a, const gpuenv_version_t *b)
{
	int r;

	if (a->epoch != b->epoch)
		return cmp_u64(a->epoch, b->epoch);
	if ((r = cmp_release(a, b)))
		return r;
	return cmp_suffix(a, b);
}

int gpuenv_version_cmp(const gpuenv_version_t *a, const gpuenv_version_t *b)
{
	int r = gpuenv_version_cmp_public(a, b);

	return r ? r : cmp_local(a->local, b->local);
}

/* Append a number of `bits` bits to the packed word; a number too big for
 * its field is written as all ones and ends the packing (what follows would
 * mislead: only versions with the same true number may compare the rest). */
static bool pack(uint64_t *w, unsigned *used, unsigned bits, uint64_t x)
{
	uint64_t max = ((uint64_t)1 << bits) - 1;
	bool fits = x < max;

	*used += bits;
	*w |= (fits ? x : max) << (64 - *used);
	return fits;
}

void gpuenv_version_key(const gpuenv_version_t *v, gpuenv_version_key_t *key)
{
	uint64_t w = 0;
	unsigned used = 0;
	bool more = false;
	int rank = pre_rank(v);

	key->k[0] = v->epoch;
	for (size_t i = 0; i < 3; i++)
		key->k[i + 1] = i < v->nrelease ? v->release[i] : 0;
	/* k[4], from the top bit: more release numbers (then nothing else),
	 * pre rank 3, pre 16, post flag 1, post 16, no-dev flag 1, dev 25,
	 * local flag 1 */
	for (size_t i = 3; i < v->nrelease; i++)
		more |= v->release[i] != 0;
	if (more || !pack(&w, &used, 1, 0))
		goto done;
	pack(&w, &used, 3, (uint64_t)rank);
	if (!pack(&w, &used, 16, rank >= 1 && rank <= 3 ? v->pre : 0))
		goto done;
	pack(&w, &used, 1, v->has_post);
	if (!pack(&w, &used, 16, v->has_post ? v->post : 0))
		goto done;
	pack(&w, &used, 1, !v->has_dev);
	if (!pack(&w, &used, 25, v->has_dev ? v->dev : 0))
		goto done;
	pack(&w, &used, 1, v->local.len != 0);
done:
	if (more)
		w = (uint64_t)1 << 63;
	key->k[4] = w;
}

bool gpuenv_version_is_prerelease(const gpuenv_version_t *v)
{
	return v->pre_kind != GPUENV_PRE_NONE || v->has_dev;
}

/* ---- formatting ---------------------------------------------------------- */

static int put_u64(gpuenv_buf_t *out, uint64_t v)
{
	char tmp[24];
	size_t k = sizeof(tmp);

	do {
		tmp[--k] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return gpuenv_buf_append(out, tmp + k, sizeof(tmp) - k);
}

int gpuenv_version_format_ex(const gpuenv_version_t *v, unsigned flags, gpuenv_buf_t *out)
{
	static const char *const pre_names[] = { "", "a", "b", "rc" };
	size_t nrel = v->nrelease;
	size_t start = out->len;
	int r;

/* on the first failure, leave the buffer as it was */
#define PUT(call)                                  \
	do {                                       \
		if ((r = (call)) != 0)             \
			goto fail;                 \
	} while (0)

	if (flags & GPUENV_VFMT_TRIM_ZEROS)
		while (nrel > 1 && v->release[nrel - 1] == 0)
			nrel--;
	if (v->epoch) {
		PUT(put_u64(out, v->epoch));
		PUT(gpuenv_buf_putc(out, '!'));
	}
	for (size_t i = 0; i < nrel; i++) {
		if (i)
			PUT(gpuenv_buf_putc(out, '.'));
		PUT(put_u64(out, v->release[i]));
	}
	if (flags & GPUENV_VFMT_BASE)
		return 0;
	if (v->pre_kind >= GPUENV_PRE_A && v->pre_kind <= GPUENV_PRE_RC) {
		PUT(gpuenv_buf_puts(out, pre_names[v->pre_kind]));
		PUT(put_u64(out, v->pre));
	}
	if (v->has_post) {
		PUT(gpuenv_buf_puts(out, ".post"));
		PUT(put_u64(out, v->post));
	}
	if (v->has_dev) {
		PUT(gpuenv_buf_puts(out, ".dev"));
		PUT(put_u64(out, v->dev));
	}
	if (v->local.len && !(flags & GPUENV_VFMT_PUBLIC)) {
		PUT(gpuenv_buf_putc(out, '+'));
		PUT(gpuenv_buf_append(out, v->local.ptr, v->local.len));
	}
	return 0;
#undef PUT
fail:
	out->len = start;
	if (out->data)
		out->data[start] = '\0';
	return r;
}

int gpuenv_version_format(const gpuenv_version_t *v, gpuenv_buf_t *out)
{
	return gpuenv_version_format_ex(v, 0, out);
}
