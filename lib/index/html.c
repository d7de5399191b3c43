/* PEP 503 simple index pages (HTML): the anchors, their hash fragments and
 * the data-* attributes of PEP 592 (yanked), PEP 629 (repository version),
 * PEP 658 / 714 (core metadata) and requires-python.  A small tokenizer,
 * not an HTML parser: tags, quoted and bare attributes, comments, character
 * references; it never needs more than one pass over the bytes. */
#include <errno.h>
#include <string.h>

#include "index_int.h"

typedef struct hp {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *url; /* for messages */
	gpuenv_str_t body;
	gpuenv_str_t base; /* links resolve against it (<base href> changes it) */
	gpuenv_arena_t scratch; /* what one link needs while it is read */
	/* ix_simple_html_parse_owned: the body's bytes given back behind the
	 * tag being read; the line and column of mark counted before */
	char *release;
	size_t mark;
	unsigned mark_line, mark_col;
} hp_t;

/* Line and column (1-based, in bytes) of offset pos, counted from the mark. */
static void line_col(const hp_t *p, size_t pos, unsigned *line, unsigned *col)
{
	gpuenv_str_t s = p->body;
	unsigned l = p->mark_line, c = p->mark_col;

	for (size_t i = p->mark; i < pos && i < s.len; i++) {
		if (s.ptr[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static int syntax(hp_t *p, size_t pos, const char *what)
{
	unsigned line, col;

	line_col(p, pos, &line, &col);
	return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, line, col, "malformed index page: %s",
		what);
}

/* HTML's ASCII white space: C's without \v */
static bool is_space(char c)
{
	return gpuenv_is_space(c) && c != '\v';
}

/* A character reference's code point: U+FFFD for what is not a character. */
static size_t put_utf8(char *out, unsigned long cp)
{
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	return gpuenv_utf8_put(out, (uint32_t)cp);
}

static const struct {
	const char *name;
	unsigned long cp;
} named_refs[] = {
	{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' },
	{ "nbsp", 0xa0 },
};

/* Character references decoded (the result never grows: a reference is at
 * least as long as its UTF-8), NUL-terminated in the arena. */
static gpuenv_str_t decode_refs(gpuenv_arena_t *arena, gpuenv_str_t s)
{
	char *out = gpuenv_arena_alloc(arena, s.len + 1);
	size_t n = 0;

	if (!out)
		return GPUENV_STR_NULL;
	for (size_t i = 0; i < s.len;) {
		if (s.ptr[i] != '&') {
			out[n++] = s.ptr[i++];
			continue;
		}
		const char *semi = memchr(s.ptr + i, ';', s.len - i < 12 ? s.len - i : 12);
		size_t rl = semi ? (size_t)(semi - (s.ptr + i)) : 0; /* "&...;" minus ';' */
		bool done = false;
		if (semi && rl > 2 && s.ptr[i + 1] == '#') {
			unsigned long cp = 0;
			bool hex = s.ptr[i + 2] == 'x' || s.ptr[i + 2] == 'X', ok = true;
			size_t k = i + 2 + hex;
			if (k == i + rl)
				ok = false;
			for (; ok && k < i + rl; k++) {
				int d = hex ? gpuenv_hex_digit(s.ptr[k])
					    : (s.ptr[k] >= '0' && s.ptr[k] <= '9' ? s.ptr[k] - '0' : -1);
				if (d < 0)
					ok = false;
				else if (cp < 0x110000)
					cp = cp * (hex ? 16 : 10) + (unsigned long)d;
			}
			if (ok) {
				n += put_utf8(out + n, cp);
				i += rl + 1;
				done = true;
			}
		} else if (semi && rl > 1) {
			for (size_t k = 0; k < sizeof(named_refs) / sizeof(named_refs[0]); k++)
				if (strlen(named_refs[k].name) == rl - 1 &&
					!memcmp(named_refs[k].name, s.ptr + i + 1, rl - 1)) {
					n += put_utf8(out + n, named_refs[k].cp);
					i += rl + 1;
					done = true;
					break;
				}
		}
		if (!done)
			out[n++] = s.ptr[i++];
	}
	out[n] = '\0';
	return gpuenv_str_n(out, n);
}

typedef struct attr {
	gpuenv_str_t name, value; /* value raw (not decoded) */
	bool has_value;
} attr_t;

#define MAX_ATTRS 16

typedef struct tag {
	gpuenv_str_t name;
	attr_t attrs[MAX_ATTRS]; /* the ones past MAX_ATTRS are read and dropped */
	size_t nattrs;
	size_t end; /* offset just past '>' */
} tag_t;

static const attr_t *find_attr(const tag_t *t, const char *name)
{
	for (size_t i = 0; i < t->nattrs; i++)
		if (gpuenv_str_ieq(t->attrs[i].name, gpuenv_str(name)))
			return &t->attrs[i];
	return NULL;
}

/* The tag whose name starts at i (just past '<'). */
static int read_tag(hp_t *p, size_t start, size_t i, tag_t *t)
{
	const char *s = p->body.ptr;
	size_t n = p->body.len, k = i;

	t->nattrs = 0;
	while (k < n && !is_space(s[k]) && s[k] != '>' && s[k] != '/')
		k++;
	t->name = gpuenv_str_n(s + i, k - i);
	for (;;) {
		while (k < n && (is_space(s[k]) || s[k] == '/'))
			k++;
		if (k >= n)
			return syntax(p, start, "a tag is not closed with '>'");
		if (s[k] == '>') {
			t->end = k + 1;
			return 0;
		}
		size_t a = k;
		while (k < n && !is_space(s[k]) && s[k] != '>' && s[k] != '=' && s[k] != '/')
			k++;
		if (k == a)
			k++; /* a stray '=': skip it */
		attr_t at = { gpuenv_str_n(s + a, k - a), GPUENV_STR_NULL, false };
		size_t j = k;
		while (j < n && is_space(s[j]))
			j++;
		if (j < n && s[j] == '=') {
			j++;
			while (j < n && is_space(s[j]))
				j++;
			if (j >= n)
				return syntax(p, start, "a tag is not closed with '>'");
			if (s[j] == '"' || s[j] == '\'') {
				const char *q = memchr(s + j + 1, s[j], n - j - 1);
				if (!q)
					return syntax(p, j, "an attribute value's quote is not closed");
				at.value = gpuenv_str_n(s + j + 1, (size_t)(q - (s + j + 1)));
				k = (size_t)(q - s) + 1;
			} else {
				size_t v = j;
				while (j < n && !is_space(s[j]) && s[j] != '>')
					j++;
				at.value = gpuenv_str_n(s + v, j - v);
				k = j;
			}
			at.has_value = true;
		}
		if (t->nattrs < MAX_ATTRS && at.name.len)
			t->attrs[t->nattrs++] = at;
	}
}

/* Offset of the first case-insensitive "</name" at or after i, or n. */
static size_t find_close(gpuenv_str_t body, size_t i, const char *name)
{
	size_t nl = strlen(name);

	for (; i + 2 + nl <= body.len; i++) {
		const char *q = memchr(body.ptr + i, '<', body.len - i);
		if (!q)
			break;
		i = (size_t)(q - body.ptr);
		if (i + 2 + nl <= body.len && body.ptr[i + 1] == '/' &&
			gpuenv_str_ieq(gpuenv_str_n(body.ptr + i + 2, nl), gpuenv_str(name)))
			return i;
	}
	return body.len;
}

static int metadata_attr(hp_t *p, ix_files_t *files, const attr_t *a, gpuenv_index_file_t *f, size_t pos)
{
	gpuenv_str_t v, algo, hash;
	int r;

	if (!a)
		return 0;
	v = decode_refs(&p->scratch, a->value);
	if (!v.ptr)
		return gpuenv_oom(p->ctx, "for an index page");
	if (gpuenv_str_eq_cstr(v, "false"))
		return 0;
	f->has_metadata = true;
	if (!v.len || gpuenv_str_eq_cstr(v, "true"))
		return 0;
	hash = gpuenv_str_split(v, '=', &algo);
	if (hash.ptr && gpuenv_str_eq_cstr(algo, "sha256")) {
		if ((r = ix_files_sha256(files, hash, &f->metadata_sha256)) < 0)
			return gpuenv_oom(p->ctx, "for an index page");
		if (r)
			return syntax(p, pos, "the core-metadata sha256 is not 64 hex digits");
	}
	return 0;
}

/* One <a>: a file of the page.  What reading it takes goes into the
 * scratch arena, what the file keeps into the list's strings. */
static int anchor(hp_t *p, ix_files_t *files, const tag_t *t, size_t pos)
{
	const attr_t *href = find_attr(t, "href"), *a;
	gpuenv_index_file_t *f;
	gpuenv_str_t ref, url, frag, name;
	int r = 0;

	if (!href || !href->has_value)
		return 0;
	if (p->scratch.used > ((size_t)1 << 20)) { /* bounded on any page */
		gpuenv_arena_free(&p->scratch);
		gpuenv_arena_init(&p->scratch, p->ctx, 0);
	}
	ref = decode_refs(&p->scratch, gpuenv_str_trim(href->value));
	if (!ref.ptr || !(url = ix_url_resolve(&p->scratch, p->base, ref, &frag)).ptr)
		return gpuenv_oom(p->ctx, "for an index page");
	name = ix_url_basename(&p->scratch, url);
	if (!name.ptr)
		return gpuenv_oom(p->ctx, "for an index page");
	if (memchr(name.ptr, '\0', name.len))
		return syntax(p, pos, "a link's file name has a NUL byte (%00)");
	if (!name.len) {
		/* a project list links folders: the text names them */
		size_t close = find_close(p->body, t->end, "a");
		name = decode_refs(&p->scratch,
			gpuenv_str_trim(gpuenv_str_n(p->body.ptr + t->end, close - t->end)));
		if (!name.ptr)
			return gpuenv_oom(p->ctx, "for an index page");
		if (!name.len)
			return 0;
	}
	if (!(f = ix_files_push(files, p->url, &r)))
		return r;
	if (!(f->url = ix_files_str(files, url)) || !(f->filename = ix_files_name(files, f->url, name)))
		return gpuenv_oom(p->ctx, "for an index page");
	if (frag.len) {
		gpuenv_str_t algo, hash = gpuenv_str_split(frag, '=', &algo);
		if (hash.ptr && gpuenv_str_eq_cstr(algo, "sha256")) {
			if ((r = ix_files_sha256(files, hash, &f->sha256)) < 0)
				return gpuenv_oom(p->ctx, "for an index page");
			if (r)
				return syntax(p, pos, "the link's #sha256= is not 64 hex digits");
		}
	}
	if ((a = find_attr(t, "data-requires-python")) && a->has_value) {
		gpuenv_str_t v = decode_refs(&p->scratch, gpuenv_str_trim(a->value));
		if (!v.ptr || (v.len && !(f->requires_python = ix_files_intern(files, v))))
			return gpuenv_oom(p->ctx, "for an index page");
	}
	if ((a = find_attr(t, "data-yanked"))) {
		f->yanked = true;
		if (a->has_value && a->value.len) {
			gpuenv_str_t v = decode_refs(&p->scratch, a->value);
			if (!v.ptr || !(f->yanked_reason = ix_files_intern(files, v)))
				return gpuenv_oom(p->ctx, "for an index page");
		}
	}
	/* PEP 714: data-core-metadata, and the older name as a fallback */
	a = find_attr(t, "data-core-metadata");
	if (!a)
		a = find_attr(t, "data-dist-info-metadata");
	return metadata_attr(p, files, a, f, pos);
}

/* <meta name="pypi:repository-version" content="1.x"> (PEP 629) */
static int meta_tag(hp_t *p, const tag_t *t, size_t pos)
{
	const attr_t *n = find_attr(t, "name"), *c = find_attr(t, "content");
	gpuenv_str_t major;

	if (!n || !c || !gpuenv_str_eq_cstr(n->value, "pypi:repository-version"))
		return 0;
	gpuenv_str_split(c->value, '.', &major);
	if (!gpuenv_str_eq_cstr(gpuenv_str_trim(major), "1")) {
		unsigned line, col;
		line_col(p, pos, &line, &col);
		gpuenv_fail(p->ctx, GPUENV_EUNSUPPORTED, p->url, line, col,
			"repository version " GPUENV_STR_FMT " of the simple API is not supported",
			GPUENV_STR_ARG(c->value));
		return gpuenv_hint(p->ctx, "gpuenv reads version 1.x (PEP 503 / 629)");
	}
	return 0;
}

/* Bytes given back at a time (ix_simple_html_parse_owned). */
#define RELEASE_STEP ((size_t)1 << 20)

/* The bytes before i (the next tag's search starts there) given back. */
static void release_behind(hp_t *p, size_t i)
{
	if (!p->release || i < p->mark + RELEASE_STEP)
		return;
	line_col(p, i, &p->mark_line, &p->mark_col);
	gpuenv_mem_release(p->release, p->body.len, p->mark, i);
	p->mark = i;
}

static int parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url, gpuenv_str_t body,
	char *release, gpuenv_index_project_t *out)
{
	ix_files_t files = { .ctx = ctx, .arena = arena };
	hp_t p = { ctx, arena, base_url ? base_url : "index page", body, GPUENV_STR_NULL, { 0 }, release, 0, 1, 1 };
	const char *s = body.ptr;
	size_t n = body.len, i = 0;
	gpuenv_str_t page;
	int r = 0;

	memset(out, 0, sizeof(*out));
	page = ix_url_strip(arena, gpuenv_str(base_url ? base_url : ""), NULL, NULL);
	if (!page.ptr)
		return gpuenv_oom(ctx, "for an index page");
	p.url = page.len ? page.ptr : "index page";
	if (n > IX_PAGE_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, p.url, 0, 0,
			"index page of %zu bytes is larger than the %zu MiB limit", n,
			IX_PAGE_MAX >> 20);
	p.base = page;
	const char *nul = n ? memchr(s, '\0', n) : NULL;
	if (nul)
		return syntax(&p, (size_t)(nul - s), "a NUL byte (not a text page)");
	out->page_url = page.ptr;
	if (!(out->name = ix_page_name(arena, page.ptr)))
		return gpuenv_oom(ctx, "for an index page");
	gpuenv_arena_init(&p.scratch, ctx, 0);
	while (i < n) {
		release_behind(&p, i);
		const char *lt = memchr(s + i, '<', n - i);
		size_t start;
		if (!lt)
			break;
		start = (size_t)(lt - s);
		i = start + 1;
		if (n - i >= 3 && !memcmp(s + i, "!--", 3)) {
			size_t k = i + 3;
			bool closed = false;
			for (; k + 3 <= n; k++)
				if (!memcmp(s + k, "-->", 3)) {
					closed = true;
					break;
				}
			if (!closed) {
				r = syntax(&p, start, "a comment is not closed with '-->'");
				goto fail;
			}
			i = k + 3;
			continue;
		}
		if (i < n && (s[i] == '!' || s[i] == '?' || s[i] == '/')) {
			const char *gt = memchr(s + i, '>', n - i);
			if (!gt) {
				r = syntax(&p, start, "a tag is not closed with '>'");
				goto fail;
			}
			i = (size_t)(gt - s) + 1;
			continue;
		}
		if (i >= n || !gpuenv_is_alpha(s[i]))
			continue; /* a bare '<' in text */
		tag_t t = { .end = 0 };
		if ((r = read_tag(&p, start, i, &t)))
			goto fail;
		i = t.end;
		if (gpuenv_str_ieq(t.name, GPUENV_STR_LIT("a"))) {
			if ((r = anchor(&p, &files, &t, start)))
				goto fail;
		} else if (gpuenv_str_ieq(t.name, GPUENV_STR_LIT("base"))) {
			const attr_t *h = find_attr(&t, "href");
			if (h && h->has_value) {
				gpuenv_str_t ref = decode_refs(arena, gpuenv_str_trim(h->value));
				if (!ref.ptr || !(p.base = ix_url_resolve(arena, p.base, ref, NULL)).ptr) {
					r = gpuenv_oom(ctx, "for an index page");
					goto fail;
				}
			}
		} else if (gpuenv_str_ieq(t.name, GPUENV_STR_LIT("meta"))) {
			if ((r = meta_tag(&p, &t, start)))
				goto fail;
		} else if (gpuenv_str_ieq(t.name, GPUENV_STR_LIT("script")) ||
			   gpuenv_str_ieq(t.name, GPUENV_STR_LIT("style"))) {
			/* raw text: a '<' inside is not a tag */
			i = find_close(body, i, gpuenv_str_ieq(t.name, GPUENV_STR_LIT("script")) ? "script"
												: "style");
		}
	}
	gpuenv_arena_free(&p.scratch);
	return ix_files_finish(&files, arena, out, p.url);
fail:
	gpuenv_arena_free(&p.scratch);
	ix_files_free(&files);
	out->nfiles = 0;
	out->files = NULL;
	return r;
}

int gpuenv_simple_html_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url,
	gpuenv_str_t body, gpuenv_index_project_t *out)
{
	return parse(ctx, arena, base_url, body, NULL, out);
}

int ix_simple_html_parse_owned(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *base_url, char *body,
	size_t len, gpuenv_index_project_t *out)
{
	return parse(ctx, arena, base_url, gpuenv_str_n(body ? body : "", len), body, out);
}
