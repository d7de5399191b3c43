/* Wheel and sdist file names and their compatibility tags.
 *
 * The rules follow the binary distribution format spec and packaging's
 * parse_wheel_filename / parse_tag (the version the shared test vectors come
 * from): a name part of word characters, '.' and '_' without "__"; a PEP 440
 * version; an optional build tag starting with a digit; a tag set of exactly
 * three non-empty components whose interpreters are identifiers.
 *
 * Non-ASCII: Python's \w and str.isidentifier() know all of Unicode; we
 * accept any well-formed UTF-8 letter-ish code point (everything from U+00C0
 * up, minus a few symbols and the space/punctuation blocks) and lower-case
 * ASCII only.  Names on an index are ASCII, so this only matters for odd
 * local files. */
#include "gpuenv/wheel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- small helpers ---- */

/* Length of the well-formed UTF-8 sequence at p (1..4), 0 when malformed;
 * *cp gets the code point. */
static size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	uint32_t c;
	size_t len;

	if (!n)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		c = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
		(c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* A non-ASCII code point that Python's \w would (very likely) match. */
static bool unicode_word(uint32_t c)
{
	if (c < 0xc0)
		return c == 0xaa || c == 0xb5 || c == 0xba || c == 0xb2 || c == 0xb3 ||
			c == 0xb9 || c == 0xbc || c == 0xbd || c == 0xbe;
	if (c == 0xd7 || c == 0xf7)
		return false;
	if (c >= 0x2000 && c <= 0x206f) /* spaces and general punctuation */
		return false;
	if (c == 0x3000 || c == 0xfeff || (c >= 0xfff0 && c <= 0xffff))
		return false;
	return true;
}

/* "'text'" with control bytes escaped and the length capped, for messages. */
static const char *quote(gpuenv_str_t s, char *out, size_t outsz)
{
	size_t o = 0;

	out[o++] = '\'';
	for (size_t i = 0; i < s.len && o + 8 < outsz; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c < 0x20 || c == 0x7f || c == '\\' || c == '\'')
			o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
		if (i + 1 < s.len && o + 8 >= outsz) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
	}
	out[o++] = '\'';
	out[o] = '\0';
	return out;
}

/* A lower-cased copy in the arena, or the slice itself when already lower. */
static int lower_str(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t s,
	gpuenv_str_t *out)
{
	size_t i;

	for (i = 0; i < s.len; i++)
		if (s.ptr[i] >= 'A' && s.ptr[i] <= 'Z')
			break;
	if (i == s.len) {
		*out = s;
		return 0;
	}
	char *p = gpuenv_arena_alloc(arena, s.len + 1);
	if (!p)
		return gpuenv_oom(ctx, "reading a wheel's file name");
	for (i = 0; i < s.len; i++)
		p[i] = (char)gpuenv_to_lower(s.ptr[i]);
	p[s.len] = '\0';
	*out = gpuenv_str_n(p, s.len);
	return 0;
}

/* packaging's canonicalize_name (gpuenv_name_normalize_to), in the arena. */
static int normalize_name(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t s,
	gpuenv_str_t *out)
{
	char *p = gpuenv_arena_alloc(arena, s.len + 1);

	if (!p)
		return gpuenv_oom(ctx, "reading a wheel's file name");
	*out = gpuenv_str_n(p, gpuenv_name_normalize_to(s, p, s.len + 1));
	return 0;
}

/* ---- tags ---- */

/* Error about a wheel file name (or a bare tag set): col is 1-based within
 * whole, 0 when not about one place. */
static int name_fail(gpuenv_ctx_t *ctx, gpuenv_str_t whole, size_t col, const char *what,
	const char *detail)
{
	char q[300];

	gpuenv_fail(ctx, GPUENV_EWHEELNAME, NULL, 0, (unsigned)col, "invalid %s %s: %s", what,
		quote(whole, q, sizeof(q)), detail);
	return GPUENV_EWHEELNAME;
}

/* Split one tag component at '.', checking each part. */
struct comp {
	size_t n;	      /* parts as written */
	gpuenv_str_t *parts;  /* lower-cased, duplicates dropped */
	size_t nuniq;
};

static bool is_identifier(gpuenv_str_t s)
{
	const unsigned char *p = (const unsigned char *)s.ptr;
	size_t i = 0;

	if (!s.len)
		return false;
	while (i < s.len) {
		uint32_t cp;
		size_t l = utf8_seq(p + i, s.len - i, &cp);
		if (!l)
			return false;
		if (cp < 0x80) {
			if (!(gpuenv_is_alpha((unsigned char)cp) || cp == '_' || (i > 0 && gpuenv_is_digit((unsigned char)cp))))
				return false;
		} else if (!unicode_word(cp)) {
			return false;
		}
		i += l;
	}
	return true;
}

static int tag_parse_at(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	unsigned flags, gpuenv_str_t whole, size_t base, const char *what, size_t *ntags,
	gpuenv_tag_t **tags)
{
	gpuenv_str_t compstr[3];
	struct comp comps[3];
	size_t ncomp = 0, start = 0, total = 1;

	*ntags = 0;
	*tags = NULL;
	/* components: empty parts are reported first, as packaging does */
	for (size_t i = 0; i <= text.len; i++) {
		if (i < text.len && text.ptr[i] != '-')
			continue;
		gpuenv_str_t c = gpuenv_str_n(text.ptr + start, i - start);
		size_t ps = 0;
		for (size_t j = 0; j <= c.len; j++) {
			if (j < c.len && c.ptr[j] != '.')
				continue;
			if (j == ps)
				return name_fail(ctx, whole, base + start + j + 1, what,
					"the tag set has an empty part");
			ps = j + 1;
		}
		if (ncomp < 3)
			compstr[ncomp] = c;
		ncomp++;
		start = i + 1;
	}
	if (ncomp != 3)
		return name_fail(ctx, whole, base + 1, what,
			"the tag set must have exactly three parts (python-abi-platform)");

	for (size_t k = 0; k < 3; k++) {
		gpuenv_str_t c = compstr[k];
		size_t n = 1;
		for (size_t j = 0; j < c.len; j++)
			n += c.ptr[j] == '.';
		comps[k].n = n;
		if (total > SIZE_MAX / n)
			total = SIZE_MAX;
		else
			total *= n;
	}
	if (total > GPUENV_TAGS_MAX) {
		char q[300];
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, (unsigned)(base + 1),
			"invalid %s %s: the compressed tag set expands to more than %d tags", what,
			quote(whole, q, sizeof(q)), GPUENV_TAGS_MAX);
	}

	for (size_t k = 0; k < 3; k++) {
		gpuenv_str_t c = compstr[k], prev = GPUENV_STR_NULL;
		size_t ps = 0, idx = 0;
		comps[k].parts = gpuenv_arena_alloc(arena, comps[k].n * sizeof(gpuenv_str_t));
		if (!comps[k].parts)
			return gpuenv_oom(ctx, "reading a wheel's file name");
		comps[k].nuniq = 0;
		for (size_t j = 0; j <= c.len; j++) {
			if (j < c.len && c.ptr[j] != '.')
				continue;
			gpuenv_str_t part = gpuenv_str_n(c.ptr + ps, j - ps), low;
			size_t col = base + (size_t)(c.ptr - text.ptr) + ps + 1;
			if ((flags & GPUENV_TAG_VALIDATE_ORDER) && idx > 0 &&
				gpuenv_str_cmp(prev, part) > 0)
				return name_fail(ctx, whole, col, what,
					"the parts of a compressed tag set must be sorted (PEP 425)");
			if (k == 0 && !is_identifier(part))
				return name_fail(ctx, whole, col, what,
					"the python tag is not an identifier");
			int r = lower_str(ctx, arena, part, &low);
			if (r)
				return r;
			bool dup = false;
			for (size_t u = 0; u < comps[k].nuniq && !dup; u++)
				dup = gpuenv_str_eq(comps[k].parts[u], low);
			if (!dup)
				comps[k].parts[comps[k].nuniq++] = low;
			prev = part;
			ps = j + 1;
			idx++;
		}
	}

	size_t n = comps[0].nuniq * comps[1].nuniq * comps[2].nuniq;
	gpuenv_tag_t *t = gpuenv_arena_alloc(arena, n * sizeof(*t));
	if (!t)
		return gpuenv_oom(ctx, "reading a wheel's file name");
	size_t o = 0;
	for (size_t a = 0; a < comps[0].nuniq; a++)
		for (size_t b = 0; b < comps[1].nuniq; b++)
			for (size_t c = 0; c < comps[2].nuniq; c++)
				t[o++] = (gpuenv_tag_t){ comps[0].parts[a], comps[1].parts[b],
					comps[2].parts[c] };
	*ntags = n;
	*tags = t;
	return 0;
}

int gpuenv_tag_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	unsigned flags, size_t *ntags, gpuenv_tag_t **tags)
{
	if (text.len > GPUENV_WHEEL_NAME_MAX) {
		*ntags = 0;
		*tags = NULL;
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"tag set longer than %d bytes", GPUENV_WHEEL_NAME_MAX);
	}
	return tag_parse_at(ctx, arena, text, flags, text, 0, "tag set", ntags, tags);
}

int gpuenv_tag_format(const gpuenv_tag_t *tag, gpuenv_buf_t *out)
{
	return gpuenv_buf_printf(out, GPUENV_STR_FMT "-" GPUENV_STR_FMT "-" GPUENV_STR_FMT,
		GPUENV_STR_ARG(tag->interpreter), GPUENV_STR_ARG(tag->abi),
		GPUENV_STR_ARG(tag->platform));
}

/* Cursor over the virtual string "interpreter-abi-platform". */
struct tagcur {
	gpuenv_str_t seg[5];
	size_t k, i;
};

static void tagcur_init(struct tagcur *c, const gpuenv_tag_t *t)
{
	c->seg[0] = t->interpreter;
	c->seg[1] = GPUENV_STR_LIT("-");
	c->seg[2] = t->abi;
	c->seg[3] = GPUENV_STR_LIT("-");
	c->seg[4] = t->platform;
	c->k = 0;
	c->i = 0;
}

/* Next byte (0..255), or -1 at the end. */
static int tagcur_next(struct tagcur *c)
{
	while (c->k < 5 && c->i >= c->seg[c->k].len) {
		c->k++;
		c->i = 0;
	}
	if (c->k == 5)
		return -1;
	return (unsigned char)c->seg[c->k].ptr[c->i++];
}

int gpuenv_tag_cmp(const gpuenv_tag_t *a, const gpuenv_tag_t *b)
{
	struct tagcur ca, cb;

	tagcur_init(&ca, a);
	tagcur_init(&cb, b);
	for (;;) {
		int x = tagcur_next(&ca), y = tagcur_next(&cb);
		if (x != y)
			return x < y ? -1 : 1;
		if (x < 0)
			return 0;
	}
}

/* ---- wheel and sdist file names ---- */

/* The name part of a wheel file name: [\w._]+ without "__" (PEP 427 escaping). */
static size_t wheel_name_bad_at(gpuenv_str_t s)
{
	const unsigned char *p = (const unsigned char *)s.ptr;
	size_t i = 0;

	while (i < s.len) {
		uint32_t cp;
		size_t l = utf8_seq(p + i, s.len - i, &cp);
		if (!l)
			return i + 1;
		if (cp < 0x80) {
			if (!(gpuenv_is_alpha((unsigned char)cp) || gpuenv_is_digit((unsigned char)cp) || cp == '_' ||
				    cp == '.'))
				return i + 1;
			if (cp == '_' && i + 1 < s.len && s.ptr[i + 1] == '_')
				return i + 2;
		} else if (!unicode_word(cp)) {
			return i + 1;
		}
		i += l;
	}
	return 0;
}

static int parse_version_part(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t whole,
	gpuenv_str_t text, const char *what, gpuenv_version_t *out)
{
	char q[300], msg[sizeof(ctx->err.msg)];
	size_t col = (size_t)(text.ptr - whole.ptr) + 1;
	int r = gpuenv_version_parse(ctx, arena, text, out);

	if (r == 0)
		return 0;
	if (r == -ENOMEM)
		return r;
	snprintf(msg, sizeof(msg), "%s", ctx->err.msg);
	return gpuenv_fail(ctx, GPUENV_EWHEELNAME, NULL, 0, (unsigned)col,
		"invalid %s %s: the version %s is not a PEP 440 version (%s)", what,
		quote(whole, q, sizeof(q)), quote(text, q + 150, 150), msg);
}

int gpuenv_wheel_name_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t filename,
	unsigned flags, gpuenv_wheel_name_t *out)
{
	const char *what = "wheel file name";
	gpuenv_str_t stem, parts[3];
	size_t dashes = 0, bad;
	int r;

	memset(out, 0, sizeof(*out));
	if (filename.len > GPUENV_WHEEL_NAME_MAX) {
		char q[300];
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"wheel file name %s is longer than %d bytes", quote(filename, q, sizeof(q)),
			GPUENV_WHEEL_NAME_MAX);
	}
	if (!gpuenv_str_endswith(filename, ".whl"))
		return name_fail(ctx, filename, 0, what, "the extension must be '.whl'");
	stem = gpuenv_str_n(filename.ptr, filename.len - 4);
	for (size_t i = 0; i < stem.len; i++)
		dashes += stem.ptr[i] == '-';
	if (dashes != 4 && dashes != 5)
		return name_fail(ctx, filename, 0, what,
			"expected NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl (wrong number of '-')");

	/* name, version and (with 5 dashes) build end at the first dashes */
	size_t np = dashes - 2, start = 0, k = 0;
	for (size_t i = 0; i < stem.len && k < np; i++) {
		if (stem.ptr[i] != '-')
			continue;
		parts[k++] = gpuenv_str_n(stem.ptr + start, i - start);
		start = i + 1;
	}
	gpuenv_str_t tagstr = gpuenv_str_n(stem.ptr + start, stem.len - start);

	out->name = parts[0];
	if (!parts[0].len)
		return name_fail(ctx, filename, 1, what, "the project name is empty");
	if ((bad = wheel_name_bad_at(parts[0])) != 0)
		return name_fail(ctx, filename, bad, what,
			"the project name may only hold letters, digits, '.' and single '_'");
	r = normalize_name(ctx, arena, parts[0], &out->normalized);
	if (r)
		return r;

	out->version_text = parts[1];
	r = parse_version_part(ctx, arena, filename, parts[1], what, &out->version);
	if (r)
		return r;

	if (dashes == 5) {
		gpuenv_str_t b = parts[2];
		size_t col = (size_t)(b.ptr - filename.ptr) + 1, d = 0;
		uint64_t num = 0;
		while (d < b.len && gpuenv_is_digit((unsigned char)b.ptr[d]))
			d++;
		if (d == 0)
			return name_fail(ctx, filename, col, what,
				"the build tag must start with a digit");
		if (!gpuenv_str_to_u64(gpuenv_str_n(b.ptr, d), &num))
			return name_fail(ctx, filename, col, what, "the build number is too large");
		out->has_build = true;
		out->build_number = num;
		out->build_suffix = gpuenv_str_n(b.ptr + d, b.len - d);
	}

	out->tag_text = tagstr;
	return tag_parse_at(ctx, arena, tagstr, flags, filename,
		(size_t)(tagstr.ptr - filename.ptr), what, &out->ntags, &out->tags);
}

int gpuenv_wheel_build_cmp(const gpuenv_wheel_name_t *a, const gpuenv_wheel_name_t *b)
{
	if (a->has_build != b->has_build)
		return a->has_build ? 1 : -1;
	if (!a->has_build)
		return 0;
	if (a->build_number != b->build_number)
		return a->build_number < b->build_number ? -1 : 1;
	return gpuenv_str_cmp(a->build_suffix, b->build_suffix);
}

int gpuenv_sdist_name_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t filename,
	gpuenv_sdist_name_t *out)
{
	const char *what = "sdist file name";
	gpuenv_str_t stem;
	size_t dash;
	int r;

	memset(out, 0, sizeof(*out));
	if (filename.len > GPUENV_WHEEL_NAME_MAX) {
		char q[300];
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"sdist file name %s is longer than %d bytes", quote(filename, q, sizeof(q)),
			GPUENV_WHEEL_NAME_MAX);
	}
	if (gpuenv_str_endswith(filename, ".tar.gz"))
		stem = gpuenv_str_n(filename.ptr, filename.len - 7);
	else if (gpuenv_str_endswith(filename, ".zip"))
		stem = gpuenv_str_n(filename.ptr, filename.len - 4);
	else
		return name_fail(ctx, filename, 0, what,
			"the extension must be '.tar.gz' or '.zip'");
	/* a PEP 440 version holds no '-', so the name ends at the last one */
	for (dash = stem.len; dash > 0 && stem.ptr[dash - 1] != '-'; dash--)
		;
	if (dash == 0)
		return name_fail(ctx, filename, 0, what, "expected NAME-VERSION");
	out->name = gpuenv_str_n(stem.ptr, dash - 1);
	out->version_text = gpuenv_str_n(stem.ptr + dash, stem.len - dash);
	if (!gpuenv_name_is_valid(out->name))
		return name_fail(ctx, filename, 1, what,
			"the project name is not a valid distribution name");
	r = normalize_name(ctx, arena, out->name, &out->normalized);
	if (r)
		return r;
	return parse_version_part(ctx, arena, filename, out->version_text, what, &out->version);
}

/* ---- targets ---- */

static int target_fail(gpuenv_ctx_t *ctx, gpuenv_str_t spec, size_t col, const char *detail)
{
	char q[300];

	gpuenv_fail(ctx, GPUENV_ESYNTAX, NULL, 0, (unsigned)col, "invalid target %s: %s",
		quote(spec, q, sizeof(q)), detail);
	gpuenv_hint(ctx, "write PYTHON-PLATFORM, e.g. cp312-manylinux_2_35_x86_64, "
			 "cp313t-musllinux_1_2_aarch64, pp310-macosx_14_0_arm64, cp311-win_amd64");
	return GPUENV_ESYNTAX;
}

/* Read "N_" (a number then '_') at *s; false when absent. */
static bool take_num(gpuenv_str_t *s, unsigned *out)
{
	size_t d = 0;
	uint64_t v;

	while (d < s->len && gpuenv_is_digit((unsigned char)s->ptr[d]))
		d++;
	if (d == 0 || d >= s->len || s->ptr[d] != '_' || d > 6)
		return false;
	if (!gpuenv_str_to_u64(gpuenv_str_n(s->ptr, d), &v))
		return false;
	*out = (unsigned)v;
	s->ptr += d + 1;
	s->len -= d + 1;
	return true;
}

static bool set_arch(gpuenv_wheel_target_t *t, gpuenv_str_t a)
{
	if (!a.len || a.len >= sizeof(t->arch))
		return false;
	for (size_t i = 0; i < a.len; i++) {
		unsigned char c = (unsigned char)a.ptr[i];
		if (!(gpuenv_is_alpha(c) || gpuenv_is_digit(c) || c == '_'))
			return false;
		t->arch[i] = (char)gpuenv_to_lower((char)c);
	}
	t->arch[a.len] = '\0';
	return true;
}

int gpuenv_wheel_target_parse(gpuenv_ctx_t *ctx, gpuenv_str_t spec, gpuenv_wheel_target_t *out)
{
	gpuenv_str_t py, plat;
	size_t i, d;
	uint64_t minor;

	memset(out, 0, sizeof(*out));
	if (spec.len > 256)
		return target_fail(ctx, spec, 0, "too long");
	plat = gpuenv_str_split(spec, '-', &py);
	if (!plat.ptr)
		return target_fail(ctx, spec, 0, "expected PYTHON-PLATFORM");

	/* python: cpXY[t][d] or ppXY */
	if (gpuenv_str_startswith(py, "cp"))
		out->impl = GPUENV_IMPL_CPYTHON;
	else if (gpuenv_str_startswith(py, "pp"))
		out->impl = GPUENV_IMPL_PYPY;
	else
		return target_fail(ctx, spec, 1, "the python part must start with cp or pp");
	i = 2;
	if (i >= py.len || py.ptr[i] != '3')
		return target_fail(ctx, spec, i + 1, "only Python 3 is supported");
	out->py_major = 3;
	i++;
	for (d = i; d < py.len && gpuenv_is_digit((unsigned char)py.ptr[d]); d++)
		;
	if (d == i || d - i > 3 || !gpuenv_str_to_u64(gpuenv_str_n(py.ptr + i, d - i), &minor))
		return target_fail(ctx, spec, i + 1, "expected the minor version (cp312)");
	out->py_minor = (unsigned)minor;
	for (; d < py.len; d++) {
		if (py.ptr[d] == 't' && out->impl == GPUENV_IMPL_CPYTHON && !out->free_threaded &&
			!out->debug)
			out->free_threaded = true;
		else if (py.ptr[d] == 'd' && out->impl == GPUENV_IMPL_CPYTHON && !out->debug)
			out->debug = true;
		else
			return target_fail(ctx, spec, d + 1,
				"unknown ABI flag (t = free-threaded, d = debug)");
	}
	if (out->free_threaded && out->py_minor < 13)
		return target_fail(ctx, spec, 1, "free-threaded builds start at Python 3.13");

	size_t pcol = (size_t)(plat.ptr - spec.ptr) + 1;
	gpuenv_str_t rest = plat;
	if (gpuenv_str_startswith(plat, "manylinux_")) {
		rest.ptr += 10;
		rest.len -= 10;
		out->os = GPUENV_OS_LINUX;
		if (!take_num(&rest, &out->libc_major) || !take_num(&rest, &out->libc_minor) ||
			out->libc_major < 2)
			return target_fail(ctx, spec, pcol, "expected manylinux_2_MINOR_ARCH");
	} else if (gpuenv_str_startswith(plat, "manylinux1_") ||
		   gpuenv_str_startswith(plat, "manylinux2010_") ||
		   gpuenv_str_startswith(plat, "manylinux2014_")) {
		static const struct {
			const char *p;
			unsigned minor;
		} legacy[] = { { "manylinux1_", 5 }, { "manylinux2010_", 12 },
			{ "manylinux2014_", 17 } };
		out->os = GPUENV_OS_LINUX;
		out->libc_major = 2;
		for (size_t k = 0; k < 3; k++)
			if (gpuenv_str_startswith(plat, legacy[k].p)) {
				size_t l = strlen(legacy[k].p);
				rest = gpuenv_str_n(plat.ptr + l, plat.len - l);
				out->libc_minor = legacy[k].minor;
			}
	} else if (gpuenv_str_startswith(plat, "musllinux_")) {
		rest.ptr += 10;
		rest.len -= 10;
		out->os = GPUENV_OS_MUSL;
		if (!take_num(&rest, &out->libc_major) || !take_num(&rest, &out->libc_minor) ||
			out->libc_major < 1)
			return target_fail(ctx, spec, pcol, "expected musllinux_1_MINOR_ARCH");
	} else if (gpuenv_str_startswith(plat, "linux_")) {
		rest.ptr += 6;
		rest.len -= 6;
		out->os = GPUENV_OS_LINUX;
	} else if (gpuenv_str_startswith(plat, "macosx_")) {
		rest.ptr += 7;
		rest.len -= 7;
		out->os = GPUENV_OS_MACOS;
		if (!take_num(&rest, &out->os_major) || !take_num(&rest, &out->os_minor) ||
			out->os_major < 10)
			return target_fail(ctx, spec, pcol, "expected macosx_MAJOR_MINOR_ARCH");
	} else if (gpuenv_str_eq_cstr(plat, "win32")) {
		out->os = GPUENV_OS_WINDOWS;
		rest = GPUENV_STR_LIT("x86");
	} else if (gpuenv_str_startswith(plat, "win_")) {
		rest.ptr += 4;
		rest.len -= 4;
		out->os = GPUENV_OS_WINDOWS;
	} else {
		return target_fail(ctx, spec, pcol,
			"unknown platform (manylinux_, musllinux_, linux_, macosx_, win_)");
	}
	if (!set_arch(out, rest))
		return target_fail(ctx, spec, pcol, "expected an architecture (x86_64, aarch64, ...)");
	return 0;
}

/* ---- tag sets ---- */

struct gpuenv_tagset {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t arena;
	size_t n, cap;
	const char **tags; /* NUL-terminated, lower case */
	size_t *lens;
	/* open addressing: slot holds index+1, 0 = empty; hcap a power of 2 */
	size_t hcap;
	uint32_t *slots;
	uint64_t *hashes;
};

#define FNV_OFF 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)(char)gpuenv_to_lower(p[i]);
		h *= FNV_PRIME;
	}
	return h;
}

static uint64_t tag_hash(const gpuenv_tag_t *t)
{
	uint64_t h = fnv(FNV_OFF, t->interpreter.ptr, t->interpreter.len);
	h = fnv(h, "-", 1);
	h = fnv(h, t->abi.ptr, t->abi.len);
	h = fnv(h, "-", 1);
	return fnv(h, t->platform.ptr, t->platform.len);
}

/* Case-insensitive match of s (len n) against the tag's "i-a-p" form. */
static bool tag_matches(const char *s, size_t n, const gpuenv_tag_t *t)
{
	struct tagcur c;
	size_t i = 0;
	int x;

	if (n != t->interpreter.len + t->abi.len + t->platform.len + 2)
		return false;
	tagcur_init(&c, t);
	while ((x = tagcur_next(&c)) >= 0)
		if ((unsigned char)s[i++] != (unsigned char)(char)gpuenv_to_lower((char)x))
			return false;
	return true;
}

static long lookup(const gpuenv_tagset_t *set, const gpuenv_tag_t *t, uint64_t h)
{
	size_t mask = set->hcap - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		uint32_t s = set->slots[i];
		if (!s)
			return -1;
		if (set->hashes[s - 1] == h && tag_matches(set->tags[s - 1], set->lens[s - 1], t))
			return (long)(s - 1);
	}
}

static int rehash(gpuenv_tagset_t *set, size_t ncap)
{
	uint32_t *slots = gpuenv_calloc(set->ctx, ncap, sizeof(*slots));

	if (!slots)
		return gpuenv_oom(set->ctx, "reading a wheel's file name");
	for (size_t k = 0; k < set->n; k++) {
		size_t i = (size_t)set->hashes[k] & (ncap - 1);
		while (slots[i])
			i = (i + 1) & (ncap - 1);
		slots[i] = (uint32_t)(k + 1);
	}
	gpuenv_free(set->ctx, set->slots);
	set->slots = slots;
	set->hcap = ncap;
	return 0;
}

/* Append a tag unless already present (packaging keeps the first rank). */
static int add_tag(gpuenv_tagset_t *set, const char *interp, const char *abi, const char *plat)
{
	gpuenv_tag_t t = { gpuenv_str(interp), gpuenv_str(abi), gpuenv_str(plat) };
	uint64_t h = tag_hash(&t);
	int r;

	if (lookup(set, &t, h) >= 0)
		return 0;
	if (set->n == set->cap) {
		size_t ncap = set->cap ? set->cap * 2 : 256;
		const char **tags = gpuenv_realloc(set->ctx, set->tags, ncap * sizeof(*tags));
		if (!tags)
			return gpuenv_oom(set->ctx, "reading a wheel's file name");
		set->tags = tags;
		size_t *lens = gpuenv_realloc(set->ctx, set->lens, ncap * sizeof(*lens));
		if (!lens)
			return gpuenv_oom(set->ctx, "reading a wheel's file name");
		set->lens = lens;
		uint64_t *hs = gpuenv_realloc(set->ctx, set->hashes, ncap * sizeof(*hs));
		if (!hs)
			return gpuenv_oom(set->ctx, "reading a wheel's file name");
		set->hashes = hs;
		set->cap = ncap;
	}
	if ((set->n + 1) * 2 > set->hcap && (r = rehash(set, set->hcap * 2)) != 0)
		return r;
	size_t len = t.interpreter.len + t.abi.len + t.platform.len + 2;
	char *s = gpuenv_arena_alloc(&set->arena, len + 1);
	if (!s)
		return gpuenv_oom(set->ctx, "reading a wheel's file name");
	snprintf(s, len + 1, "%s-%s-%s", interp, abi, plat);
	for (size_t i = 0; i < len; i++)
		s[i] = (char)gpuenv_to_lower(s[i]);
	set->tags[set->n] = s;
	set->lens[set->n] = len;
	set->hashes[set->n] = h;
	size_t i = (size_t)h & (set->hcap - 1);
	while (set->slots[i])
		i = (i + 1) & (set->hcap - 1);
	set->slots[i] = (uint32_t)(set->n + 1);
	set->n++;
	return 0;
}

/* A list of platform strings, in the set's arena. */
struct plats {
	size_t n, cap;
	const char **v;
};

static int plat_add(gpuenv_tagset_t *set, struct plats *p, const char *fmt, ...)
	GPUENV_PRINTF(3, 4);

static int plat_add(gpuenv_tagset_t *set, struct plats *p, const char *fmt, ...)
{
	char tmp[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 64;
		const char **v = gpuenv_realloc(set->ctx, p->v, ncap * sizeof(*v));
		if (!v)
			return gpuenv_oom(set->ctx, "reading a wheel's file name");
		p->v = v;
		p->cap = ncap;
	}
	char *s = gpuenv_arena_strndup(&set->arena, tmp, strlen(tmp));
	if (!s)
		return gpuenv_oom(set->ctx, "reading a wheel's file name");
	p->v[p->n++] = s;
	return 0;
}

/* packaging's _manylinux: architectures whose manylinux ABI is defined. */
static bool manylinux_arch(const char *a)
{
	static const char *const ok[] = { "x86_64", "i686", "aarch64", "armv7l", "ppc64",
		"ppc64le", "s390x", "loongarch64", "riscv64" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(a, ok[i]) == 0)
			return true;
	return false;
}

static int linux_platforms(gpuenv_tagset_t *set, const gpuenv_wheel_target_t *t,
	struct plats *p)
{
	const char *archs[2] = { t->arch, NULL };
	size_t narch = 1;
	int r;

	/* a 32-bit userland on armv8 runs armv7l wheels too */
	if (strcmp(t->arch, "armv8l") == 0) {
		archs[1] = "armv7l";
		narch = 2;
	}
	if (t->linux_first)
		for (size_t a = 0; a < narch; a++)
			if ((r = plat_add(set, p, "linux_%s", archs[a])) != 0)
				return r;
	if (t->os == GPUENV_OS_LINUX && t->libc_major >= 2) {
		bool any_ok = false, x86 = false;
		for (size_t a = 0; a < narch; a++) {
			any_ok |= manylinux_arch(archs[a]);
			x86 |= strcmp(archs[a], "x86_64") == 0 || strcmp(archs[a], "i686") == 0;
		}
		/* oldest glibc: 2.5 on x86, 2.17 elsewhere (PEP 600, PEP 599) */
		unsigned old_major = 2;
		int old_minor = x86 ? 4 : 16;
		for (size_t a = 0; any_ok && a < narch; a++) {
			for (unsigned major = t->libc_major; major >= 2; major--) {
				/* an older glibc major is assumed to end at minor 50 */
				int top = major == t->libc_major ? (int)t->libc_minor : 50;
				int low = major == old_major ? old_minor : -1;
				for (int minor = top; minor > low; minor--) {
					if ((r = plat_add(set, p, "manylinux_%u_%d_%s", major, minor,
						     archs[a])) != 0)
						return r;
					const char *legacy = NULL;
					if (major == 2 && minor == 17)
						legacy = "manylinux2014";
					else if (major == 2 && minor == 12)
						legacy = "manylinux2010";
					else if (major == 2 && minor == 5)
						legacy = "manylinux1";
					if (legacy && (r = plat_add(set, p, "%s_%s", legacy, archs[a])) != 0)
						return r;
				}
			}
		}
	}
	if (t->os == GPUENV_OS_MUSL)
		for (size_t a = 0; a < narch; a++)
			for (int minor = (int)t->libc_minor; minor >= 0; minor--)
				if ((r = plat_add(set, p, "musllinux_%u_%d_%s", t->libc_major, minor,
					     archs[a])) != 0)
					return r;
	if (!t->linux_first)
		for (size_t a = 0; a < narch; a++)
			if ((r = plat_add(set, p, "linux_%s", archs[a])) != 0)
				return r;
	return 0;
}

/* packaging's _mac_binary_formats. */
static size_t mac_formats(unsigned major, unsigned minor, const char *arch, const char **out)
{
	size_t n = 0;
	bool before_10_4 = major == 10 && minor < 4;

	out[n++] = arch;
	if (strcmp(arch, "x86_64") == 0) {
		if (before_10_4)
			return 0;
		out[n++] = "intel";
		out[n++] = "fat64";
		out[n++] = "fat3";
	} else if (strcmp(arch, "i386") == 0) {
		if (before_10_4)
			return 0;
		out[n++] = "intel";
		out[n++] = "fat3";
		out[n++] = "fat";
	} else if (strcmp(arch, "ppc64") == 0) {
		if ((major == 10 && minor > 5) || major > 10 || before_10_4)
			return 0;
		out[n++] = "fat64";
	} else if (strcmp(arch, "ppc") == 0) {
		if ((major == 10 && minor > 6) || major > 10)
			return 0;
		out[n++] = "fat3";
		out[n++] = "fat";
	}
	if (strcmp(arch, "arm64") == 0 || strcmp(arch, "x86_64") == 0)
		out[n++] = "universal2";
	if (strcmp(arch, "x86_64") == 0 || strcmp(arch, "i386") == 0 ||
		strcmp(arch, "ppc64") == 0 || strcmp(arch, "ppc") == 0 || strcmp(arch, "intel") == 0)
		out[n++] = "universal";
	return n;
}

static int mac_emit(gpuenv_tagset_t *set, struct plats *p, unsigned major, unsigned minor,
	const char *arch)
{
	const char *f[8];
	size_t n = mac_formats(major, minor, arch, f);
	int r;

	for (size_t i = 0; i < n; i++)
		if ((r = plat_add(set, p, "macosx_%u_%u_%s", major, minor, f[i])) != 0)
			return r;
	return 0;
}

static int mac_platforms(gpuenv_tagset_t *set, const gpuenv_wheel_target_t *t, struct plats *p)
{
	int r;

	if (t->os_major == 10) {
		for (int minor = (int)t->os_minor; minor >= 0; minor--)
			if ((r = mac_emit(set, p, 10, (unsigned)minor, t->arch)) != 0)
				return r;
	} else if (t->os_major >= 11) {
		/* from 11 on the major moves each year; minor 0 stands for all */
		for (unsigned major = t->os_major; major > 10; major--)
			if ((r = mac_emit(set, p, major, 0, t->arch)) != 0)
				return r;
		for (unsigned minor = 16; minor > 3; minor--) {
			if (strcmp(t->arch, "x86_64") == 0)
				r = mac_emit(set, p, 10, minor, t->arch);
			else
				r = plat_add(set, p, "macosx_10_%u_universal2", minor);
			if (r)
				return r;
		}
	}
	return 0;
}

static int platforms(gpuenv_tagset_t *set, const gpuenv_wheel_target_t *t, struct plats *p)
{
	switch (t->os) {
	case GPUENV_OS_LINUX:
	case GPUENV_OS_MUSL:
		return linux_platforms(set, t, p);
	case GPUENV_OS_MACOS:
		return mac_platforms(set, t, p);
	case GPUENV_OS_WINDOWS:
		if (strcmp(t->arch, "x86") == 0 || strcmp(t->arch, "i686") == 0 ||
			strcmp(t->arch, "win32") == 0)
			return plat_add(set, p, "win32");
		if (strcmp(t->arch, "x86_64") == 0)
			return plat_add(set, p, "win_amd64");
		if (strcmp(t->arch, "aarch64") == 0)
			return plat_add(set, p, "win_arm64");
		return plat_add(set, p, "win_%s", t->arch);
	default:
		return gpuenv_fail(set->ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"unknown operating system %d in the target", t->os);
	}
}

static int emit_all(gpuenv_tagset_t *set, const char *interp, const char *abi,
	const struct plats *p)
{
	int r;

	for (size_t i = 0; i < p->n; i++)
		if ((r = add_tag(set, interp, abi, p->v[i])) != 0)
			return r;
	return 0;
}

static int build_tags(gpuenv_tagset_t *set, const gpuenv_wheel_target_t *t, struct plats *p)
{
	unsigned maj = t->py_major, min = t->py_minor;
	char interp[32], abi[48], buf[32];
	int r;

	if ((r = platforms(set, t, p)) != 0)
		return r;
	if (t->impl == GPUENV_IMPL_CPYTHON) {
		/* cpython_tags */
		const char *ft = t->free_threaded ? "t" : "";
		bool old = maj == 3 && min < 8; /* pymalloc 'm' flag before 3.8 */
		snprintf(interp, sizeof(interp), "cp%u%u", maj, min);
		snprintf(abi, sizeof(abi), "cp%u%u%s%s%s", maj, min, ft, t->debug ? "d" : "",
			old ? "m" : "");
		if ((r = emit_all(set, interp, abi, p)) != 0)
			return r;
		if (t->debug && !old) {
			/* debug builds load normal extension modules too */
			snprintf(abi, sizeof(abi), "cp%u%u%s", maj, min, ft);
			if ((r = emit_all(set, interp, abi, p)) != 0)
				return r;
		}
		bool stable = maj > 3 || (maj == 3 && min >= 2);
		const char *stable_abi = t->free_threaded ? "abi3t" : "abi3";
		if (stable && (r = emit_all(set, interp, stable_abi, p)) != 0)
			return r;
		if ((r = emit_all(set, interp, "none", p)) != 0)
			return r;
		if (stable) {
			for (int m = (int)min - 1; m > 1; m--) {
				snprintf(buf, sizeof(buf), "cp%u%d", maj, m);
				if ((r = emit_all(set, buf, stable_abi, p)) != 0)
					return r;
			}
		}
		snprintf(interp, sizeof(interp), "cp%u%u", maj, min);
	} else {
		/* generic_tags with PyPy's abi, then 'none' */
		snprintf(interp, sizeof(interp), "pp%u%u", maj, min);
		if (t->pypy_abi[0])
			snprintf(abi, sizeof(abi), "%s", t->pypy_abi);
		else
			snprintf(abi, sizeof(abi), "pypy%u%u_pp73", maj, min);
		if ((r = emit_all(set, interp, abi, p)) != 0)
			return r;
		if ((r = emit_all(set, interp, "none", p)) != 0)
			return r;
		snprintf(interp, sizeof(interp), "pp%u", maj);
	}

	/* compatible_tags: pyXY, pyX, pyX(Y-1) ... pyX0 on each platform, then
	 * <interp>-none-any, then the same py list with any */
	for (int pass = 0; pass < 2; pass++) {
		const struct plats any = { 1, 1, (const char *[]){ "any" } };
		const struct plats *pp = pass ? &any : p;
		if (pass && (r = add_tag(set, interp, "none", "any")) != 0)
			return r;
		snprintf(buf, sizeof(buf), "py%u%u", maj, min);
		if ((r = emit_all(set, buf, "none", pp)) != 0)
			return r;
		snprintf(buf, sizeof(buf), "py%u", maj);
		if ((r = emit_all(set, buf, "none", pp)) != 0)
			return r;
		for (int m = (int)min - 1; m >= 0; m--) {
			snprintf(buf, sizeof(buf), "py%u%d", maj, m);
			if ((r = emit_all(set, buf, "none", pp)) != 0)
				return r;
		}
	}
	return 0;
}

int gpuenv_tagset_build(gpuenv_ctx_t *ctx, const gpuenv_wheel_target_t *target,
	gpuenv_tagset_t **out)
{
	gpuenv_tagset_t *set;
	struct plats p = { 0, 0, NULL };
	int r;

	*out = NULL;
	if (target->py_major != 3 || target->py_minor > 99)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"target Python %u.%u: only Python 3.0 to 3.99 is supported", target->py_major,
			target->py_minor);
	if (!target->arch[0] || memchr(target->arch, '\0', sizeof(target->arch)) == NULL)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"the target names no architecture");
	if (target->libc_major > 9 || target->libc_minor > 999 || target->os_major > 99 ||
		target->os_minor > 99)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0,
			"the target's libc or OS version is out of range");
	set = gpuenv_calloc(ctx, 1, sizeof(*set));
	if (!set)
		return gpuenv_oom(ctx, "reading a wheel's file name");
	set->ctx = ctx;
	gpuenv_arena_init(&set->arena, ctx, 0);
	if ((r = rehash(set, 1024)) == 0)
		r = build_tags(set, target, &p);
	gpuenv_free(ctx, p.v);
	if (r) {
		gpuenv_tagset_free(set);
		return r;
	}
	*out = set;
	return 0;
}

void gpuenv_tagset_free(gpuenv_tagset_t *set)
{
	if (!set)
		return;
	gpuenv_ctx_t *ctx = set->ctx;
	gpuenv_arena_free(&set->arena);
	gpuenv_free(ctx, set->tags);
	gpuenv_free(ctx, set->lens);
	gpuenv_free(ctx, set->hashes);
	gpuenv_free(ctx, set->slots);
	gpuenv_free(ctx, set);
}

size_t gpuenv_tagset_count(const gpuenv_tagset_t *set)
{
	return set->n;
}

const char *gpuenv_tagset_get(const gpuenv_tagset_t *set, size_t i)
{
	return i < set->n ? set->tags[i] : NULL;
}

long gpuenv_tagset_rank(const gpuenv_tagset_t *set, const gpuenv_tag_t *tag)
{
	return lookup(set, tag, tag_hash(tag));
}

long gpuenv_tagset_rank_wheel(const gpuenv_tagset_t *set, const gpuenv_wheel_name_t *wheel)
{
	long best = -1;

	for (size_t i = 0; i < wheel->ntags; i++) {
		long r = gpuenv_tagset_rank(set, &wheel->tags[i]);
		if (r >= 0 && (best < 0 || r < best))
			best = r;
	}
	return best;
}
