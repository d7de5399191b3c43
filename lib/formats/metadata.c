/* Core metadata (METADATA / PKG-INFO), WHEEL, entry_points.txt and the
 * dist-info folder loader.
 *
 * The header syntax is the subset of RFC 822 that Python's email parser
 * (compat32 policy, which packaging and pip use) accepts in practice: "Name:
 * value" lines, continuation lines starting with a space or tab, an empty
 * line before the body.  Unlike email we refuse a line that is neither a
 * header nor a continuation instead of silently starting the body there: in
 * a METADATA file that is corruption, not style. */
#include "gpuenv/metadata.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/fs.h"

static int oom(gpuenv_ctx_t *ctx)
{
	return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
}

static const char *fname(const char *file, const char *dflt)
{
	return file ? file : dflt;
}

static void warn(gpuenv_ctx_t *ctx, unsigned *count, const char *file, unsigned line,
	const char *fmt, ...) GPUENV_PRINTF(5, 6);

static void warn(gpuenv_ctx_t *ctx, unsigned *count, const char *file, unsigned line,
	const char *fmt, ...)
{
	char msg[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(*count)++;
	if (line)
		gpuenv_log(ctx, GPUENV_LOG_WARN, "%s:%u: %s", file, line, msg);
	else
		gpuenv_log(ctx, GPUENV_LOG_WARN, "%s: %s", file, msg);
}

/* A slice shortened for messages: at most 120 bytes. */
#define SHORT(s) (int)((s).len > 120 ? 120 : (s).len), (s).ptr

static gpuenv_str_t rtrim(gpuenv_str_t s)
{
	while (s.len && (gpuenv_is_blank(s.ptr[s.len - 1]) || s.ptr[s.len - 1] == '\r'))
		s.len--;
	return s;
}

static gpuenv_str_t ltrim(gpuenv_str_t s)
{
	while (s.len && gpuenv_is_blank(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	return s;
}

/* Next line of text from *pos: without its "\n" or "\r\n". */
static gpuenv_str_t next_line(gpuenv_str_t text, size_t *pos)
{
	size_t s = *pos, e;
	const char *nl = memchr(text.ptr + s, '\n', text.len - s);

	e = nl ? (size_t)(nl - text.ptr) : text.len;
	*pos = nl ? e + 1 : e;
	if (e > s && text.ptr[e - 1] == '\r')
		e--;
	return gpuenv_str_n(text.ptr + s, e - s);
}

/* "N.M" into major/minor. */
static bool parse_mm(gpuenv_str_t s, unsigned *major, unsigned *minor)
{
	gpuenv_str_t a, b;
	uint64_t x, y;

	b = gpuenv_str_split(s, '.', &a);
	if (!b.ptr || a.len > 6 || b.len > 6 || !gpuenv_str_to_u64(a, &x) ||
		!gpuenv_str_to_u64(b, &y))
		return false;
	*major = (unsigned)x;
	*minor = (unsigned)y;
	return true;
}

/* ---- the header block ---- */

int gpuenv_headers_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, size_t *nfields, gpuenv_md_field_t **fields, gpuenv_str_t *body,
	unsigned *body_line)
{
	size_t pos = 0, cap = 0, n = 0;
	unsigned line = 0;
	gpuenv_md_field_t *f;

	file = fname(file, "METADATA");
	*nfields = 0;
	*fields = NULL;
	*body = GPUENV_STR_NULL;
	*body_line = 0;
	if (text.len > GPUENV_METADATA_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0,
			"%zu bytes, over the %zu-byte limit", text.len, GPUENV_METADATA_MAX);

	/* count the header lines first so the array is allocated once */
	while (pos < text.len) {
		gpuenv_str_t l = next_line(text, &pos);
		if (!l.len)
			break;
		if (!gpuenv_is_blank(l.ptr[0]))
			cap++;
	}
	if (cap > GPUENV_METADATA_FIELDS_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0,
			"more than %d header fields", GPUENV_METADATA_FIELDS_MAX);
	f = gpuenv_arena_alloc(arena, (cap ? cap : 1) * sizeof(*f));
	if (!f)
		return oom(ctx);

	pos = 0;
	while (pos < text.len) {
		gpuenv_str_t l = next_line(text, &pos);
		line++;
		if (!l.len) {
			/* the body starts after the empty line */
			*body = gpuenv_str_n(text.ptr + pos, text.len - pos);
			*body_line = line + 1;
			break;
		}
		if (gpuenv_is_blank(l.ptr[0])) {
			if (!n)
				return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 1,
					"a continuation line before any header");
			/* folded: the field's raw value grows to the end of this line */
			gpuenv_md_field_t *p = &f[n - 1];
			p->raw.len = (size_t)(l.ptr + l.len - p->raw.ptr);
			continue;
		}
		size_t i = 0;
		while (i < l.len && l.ptr[i] != ':' && (unsigned char)l.ptr[i] > 0x20 &&
			(unsigned char)l.ptr[i] < 0x7f)
			i++;
		if (i == 0 || i == l.len || l.ptr[i] != ':')
			return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line,
				       (unsigned)(i < l.len ? i + 1 : 1),
				       "expected a header line 'Name: value'"),
			       gpuenv_hint(ctx, "an empty line must separate the headers from the "
						"description body");
		f[n].name = gpuenv_str_n(l.ptr, i);
		f[n].raw = ltrim(gpuenv_str_n(l.ptr + i + 1, l.len - i - 1));
		f[n].line = line;
		n++;
	}

	/* unfold: drop the line breaks, keep the indentation (RFC 5322) */
	for (size_t k = 0; k < n; k++) {
		gpuenv_str_t raw = f[k].raw;
		if (!memchr(raw.ptr, '\n', raw.len)) {
			f[k].raw = rtrim(raw);
			f[k].value = f[k].raw;
			continue;
		}
		char *v = gpuenv_arena_alloc(arena, raw.len + 1);
		size_t o = 0;
		if (!v)
			return oom(ctx);
		for (size_t i = 0; i < raw.len; i++) {
			if (raw.ptr[i] == '\n' || (raw.ptr[i] == '\r' && i + 1 < raw.len &&
							  raw.ptr[i + 1] == '\n'))
				continue;
			v[o++] = raw.ptr[i];
		}
		v[o] = '\0';
		f[k].value = rtrim(gpuenv_str_n(v, o));
		f[k].raw = rtrim(raw);
	}
	*nfields = n;
	*fields = f;
	return 0;
}

/* ---- METADATA ---- */

enum fid {
	F_UNKNOWN,
	F_METADATA_VERSION,
	F_NAME,
	F_VERSION,
	F_SUMMARY,
	F_DESCRIPTION,
	F_DESC_CT,
	F_KEYWORDS,
	F_HOME_PAGE,
	F_DOWNLOAD_URL,
	F_AUTHOR,
	F_AUTHOR_EMAIL,
	F_MAINTAINER,
	F_MAINTAINER_EMAIL,
	F_LICENSE,
	F_LICENSE_EXPRESSION,
	F_REQUIRES_PYTHON,
	F_FIRST_MULTI,
	F_REQUIRES_DIST = F_FIRST_MULTI,
	F_PROJECT_URL,
	F_PROVIDES_EXTRA,
	F_CLASSIFIER,
	F_PLATFORM,
	F_SUPPORTED_PLATFORM,
	F_LICENSE_FILE,
	F_DYNAMIC,
	F_REQUIRES_EXTERNAL,
	F_PROVIDES_DIST,
	F_OBSOLETES_DIST,
	F_IMPORT_NAME,
	F_IMPORT_NAMESPACE,
	F_COUNT
};

/* lower-case names with their lengths */
#define FN(s) { s, sizeof(s) - 1 }
static const struct {
	const char *s;
	size_t len;
} field_names[F_COUNT] = {
	[F_METADATA_VERSION] = FN("metadata-version"),
	[F_NAME] = FN("name"),
	[F_VERSION] = FN("version"),
	[F_SUMMARY] = FN("summary"),
	[F_DESCRIPTION] = FN("description"),
	[F_DESC_CT] = FN("description-content-type"),
	[F_KEYWORDS] = FN("keywords"),
	[F_HOME_PAGE] = FN("home-page"),
	[F_DOWNLOAD_URL] = FN("download-url"),
	[F_AUTHOR] = FN("author"),
	[F_AUTHOR_EMAIL] = FN("author-email"),
	[F_MAINTAINER] = FN("maintainer"),
	[F_MAINTAINER_EMAIL] = FN("maintainer-email"),
	[F_LICENSE] = FN("license"),
	[F_LICENSE_EXPRESSION] = FN("license-expression"),
	[F_REQUIRES_PYTHON] = FN("requires-python"),
	[F_REQUIRES_DIST] = FN("requires-dist"),
	[F_PROJECT_URL] = FN("project-url"),
	[F_PROVIDES_EXTRA] = FN("provides-extra"),
	[F_CLASSIFIER] = FN("classifier"),
	[F_PLATFORM] = FN("platform"),
	[F_SUPPORTED_PLATFORM] = FN("supported-platform"),
	[F_LICENSE_FILE] = FN("license-file"),
	[F_DYNAMIC] = FN("dynamic"),
	[F_REQUIRES_EXTERNAL] = FN("requires-external"),
	[F_PROVIDES_DIST] = FN("provides-dist"),
	[F_OBSOLETES_DIST] = FN("obsoletes-dist"),
	[F_IMPORT_NAME] = FN("import-name"),
	[F_IMPORT_NAMESPACE] = FN("import-namespace"),
};

/* Known fields by first letter and length before comparing: Classifier and
 * Requires-Dist lines are most of a METADATA file. */
static enum fid field_id(gpuenv_str_t name)
{
	if (!name.len)
		return F_UNKNOWN;
	char c0 = (char)gpuenv_to_lower(name.ptr[0]);
	for (int i = 1; i < F_COUNT; i++) {
		const char *f = field_names[i].s;
		if (f[0] != c0 || field_names[i].len != name.len)
			continue;
		size_t k = 1;
		while (k < name.len && (char)gpuenv_to_lower(name.ptr[k]) == f[k])
			k++;
		if (k == name.len)
			return (enum fid)i;
	}
	return F_UNKNOWN;
}

static gpuenv_str_t *single_slot(gpuenv_metadata_t *md, enum fid id)
{
	switch (id) {
	case F_METADATA_VERSION: return &md->metadata_version;
	case F_NAME: return &md->name;
	case F_VERSION: return &md->version_text;
	case F_SUMMARY: return &md->summary;
	case F_DESCRIPTION: return &md->description;
	case F_DESC_CT: return &md->description_content_type;
	case F_KEYWORDS: return &md->keywords;
	case F_HOME_PAGE: return &md->home_page;
	case F_DOWNLOAD_URL: return &md->download_url;
	case F_AUTHOR: return &md->author;
	case F_AUTHOR_EMAIL: return &md->author_email;
	case F_MAINTAINER: return &md->maintainer;
	case F_MAINTAINER_EMAIL: return &md->maintainer_email;
	case F_LICENSE: return &md->license;
	case F_LICENSE_EXPRESSION: return &md->license_expression;
	case F_REQUIRES_PYTHON: return &md->requires_python_text;
	default: return NULL;
	}
}

static gpuenv_md_list_t *list_slot(gpuenv_metadata_t *md, enum fid id)
{
	switch (id) {
	case F_PROVIDES_EXTRA: return &md->provides_extra;
	case F_CLASSIFIER: return &md->classifiers;
	case F_PLATFORM: return &md->platforms;
	case F_SUPPORTED_PLATFORM: return &md->supported_platforms;
	case F_LICENSE_FILE: return &md->license_files;
	case F_DYNAMIC: return &md->dynamic;
	case F_REQUIRES_EXTERNAL: return &md->requires_external;
	case F_PROVIDES_DIST: return &md->provides_dist;
	case F_OBSOLETES_DIST: return &md->obsoletes_dist;
	case F_IMPORT_NAME: return &md->import_names;
	case F_IMPORT_NAMESPACE: return &md->import_namespaces;
	default: return NULL;
	}
}

/* The Description header's text: continuation lines lose the "       |"
 * (setuptools) or 8-space (distutils) indentation; lines join with '\n'. */
static int description_text(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t raw,
	gpuenv_str_t *out)
{
	size_t pos = 0, o = 0;
	bool first = true;
	char *v;

	if (!memchr(raw.ptr, '\n', raw.len)) {
		*out = raw;
		return 0;
	}
	v = gpuenv_arena_alloc(arena, raw.len + 1);
	if (!v)
		return oom(ctx);
	while (pos < raw.len) {
		gpuenv_str_t l = next_line(raw, &pos);
		if (!first) {
			size_t k = 0;
			while (k < 8 && k < l.len && l.ptr[k] == ' ')
				k++;
			/* the spec says 7 spaces and '|'; accept 8 as well */
			if (k < l.len && k >= 7 && l.ptr[k] == '|')
				k++;
			else if (k == 0 && l.len && l.ptr[0] == '\t')
				k = 1;
			l.ptr += k;
			l.len -= k;
			v[o++] = '\n';
		}
		memcpy(v + o, l.ptr, l.len);
		o += l.len;
		first = false;
	}
	v[o] = '\0';
	*out = gpuenv_str_n(v, o);
	return 0;
}

/* Metadata-Version values that exist (2.0 was never a standard, but
 * bdist_wheel wrote it for years). */
static bool known_mv(unsigned major, unsigned minor)
{
	return (major == 1 && minor <= 2) || (major == 2 && minor <= 5);
}

int gpuenv_metadata_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, unsigned flags, gpuenv_metadata_t *out)
{
	gpuenv_str_t body;
	unsigned body_line, counts[F_COUNT] = { 0 }, lines[F_COUNT] = { 0 };
	int r;

	memset(out, 0, sizeof(*out));
	file = fname(file, "METADATA");
	r = gpuenv_headers_parse(ctx, arena, file, text, &out->nfields, &out->fields, &body,
		&body_line);
	if (r)
		return r;

	/* first pass: single fields and the sizes of the lists */
	unsigned char *ids = gpuenv_arena_alloc(arena, out->nfields ? out->nfields : 1);
	if (!ids)
		return oom(ctx);
	for (size_t i = 0; i < out->nfields; i++) {
		gpuenv_md_field_t *f = &out->fields[i];
		enum fid id = field_id(f->name);
		ids[i] = (unsigned char)id;
		if (id == F_UNKNOWN)
			continue;
		counts[id]++;
		if (id >= F_FIRST_MULTI)
			continue;
		if (counts[id] > 1) {
			if (id == F_NAME || id == F_VERSION || id == F_METADATA_VERSION)
				return gpuenv_fail(ctx, GPUENV_EFORMAT, file, f->line, 1,
					"%s given twice (first on line %u)", field_names[id].s,
					lines[id]);
			warn(ctx, &out->nwarnings, file, f->line,
				"'" GPUENV_STR_FMT "' given twice (first on line %u); the first is kept",
				GPUENV_STR_ARG(f->name), lines[id]);
			continue;
		}
		lines[id] = f->line;
		*single_slot(out, id) = f->value;
		if (id == F_DESCRIPTION && (r = description_text(ctx, arena, f->raw,
						    &out->description)) != 0)
			return r;
	}

	/* Metadata-Version: fail only on a major we do not know (the spec's MUST) */
	if (!counts[F_METADATA_VERSION]) {
		warn(ctx, &out->nwarnings, file, 0, "no Metadata-Version field");
	} else if (!parse_mm(out->metadata_version, &out->mv_major, &out->mv_minor)) {
		warn(ctx, &out->nwarnings, file, lines[F_METADATA_VERSION],
			"Metadata-Version '%.*s' is not MAJOR.MINOR", SHORT(out->metadata_version));
	} else if (out->mv_major > 2) {
		return gpuenv_fail(ctx, GPUENV_EFORMAT, file, lines[F_METADATA_VERSION], 1,
			       "Metadata-Version %u.%u is newer than any gpuenv knows (2.5)",
			       out->mv_major, out->mv_minor),
		       gpuenv_hint(ctx, "upgrade gpuenv");
	} else if (!known_mv(out->mv_major, out->mv_minor)) {
		warn(ctx, &out->nwarnings, file, lines[F_METADATA_VERSION],
			"unknown Metadata-Version %u.%u; reading it as 2.5", out->mv_major,
			out->mv_minor);
	}

	if (!counts[F_NAME])
		return gpuenv_fail(ctx, GPUENV_EFORMAT, file, 0, 0, "no Name field");
	if (!gpuenv_name_is_valid(out->name))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, file, lines[F_NAME], 7,
			"Name '%.*s' is not a valid distribution name", SHORT(out->name));
	if (!counts[F_VERSION])
		return gpuenv_fail(ctx, GPUENV_EFORMAT, file, 0, 0, "no Version field");
	r = gpuenv_version_parse(ctx, arena, out->version_text, &out->version);
	if (r == -ENOMEM)
		return r;
	if (r) {
		if (!(flags & GPUENV_METADATA_LENIENT_VERSION))
			return gpuenv_fail(ctx, GPUENV_EVERSION, file, lines[F_VERSION], 10,
				"Version '%.*s' is not a PEP 440 version", SHORT(out->version_text));
		gpuenv_error_clear(ctx);
		warn(ctx, &out->nwarnings, file, lines[F_VERSION],
			"Version '%.*s' is not a PEP 440 version", SHORT(out->version_text));
	} else {
		out->version_valid = true;
	}

	if (counts[F_REQUIRES_PYTHON]) {
		r = gpuenv_specset_parse(ctx, arena, out->requires_python_text,
			&out->requires_python);
		if (r == -ENOMEM)
			return r;
		if (r) {
			warn(ctx, &out->nwarnings, file, lines[F_REQUIRES_PYTHON],
				"invalid Requires-Python '%.*s' (%s); ignored",
				SHORT(out->requires_python_text), ctx->err.msg);
			gpuenv_error_clear(ctx);
			memset(&out->requires_python, 0, sizeof(out->requires_python));
		} else {
			out->requires_python_valid = true;
		}
	}

	/* the body is the description (2.1+); a header one wins when both exist */
	gpuenv_str_t tb = rtrim(body);
	while (tb.len && (tb.ptr[tb.len - 1] == '\n' || tb.ptr[tb.len - 1] == '\r' ||
			     gpuenv_is_blank(tb.ptr[tb.len - 1])))
		tb.len--;
	if (tb.len) {
		if (counts[F_DESCRIPTION]) {
			warn(ctx, &out->nwarnings, file, body_line,
				"both a Description header and a message body; the header is kept");
		} else {
			out->description = body;
			out->description_in_body = true;
		}
	}

	/* second pass: the multiple-use fields */
	for (int id = F_FIRST_MULTI; id < F_COUNT; id++) {
		if (!counts[id])
			continue;
		if (id == F_REQUIRES_DIST) {
			out->requires_dist = gpuenv_arena_calloc(arena, counts[id],
				sizeof(*out->requires_dist));
			if (!out->requires_dist)
				return oom(ctx);
		} else if (id == F_PROJECT_URL) {
			out->project_urls = gpuenv_arena_calloc(arena, counts[id],
				sizeof(*out->project_urls));
			if (!out->project_urls)
				return oom(ctx);
		} else {
			gpuenv_md_list_t *l = list_slot(out, (enum fid)id);
			l->items = gpuenv_arena_alloc(arena, counts[id] * sizeof(gpuenv_str_t));
			if (!l->items)
				return oom(ctx);
		}
	}
	for (size_t i = 0; i < out->nfields; i++) {
		gpuenv_md_field_t *f = &out->fields[i];
		enum fid id = (enum fid)ids[i];
		if (id < F_FIRST_MULTI)
			continue;
		if (id == F_REQUIRES_DIST) {
			gpuenv_md_requirement_t *q = &out->requires_dist[out->nrequires_dist++];
			q->text = f->value;
			q->line = f->line;
			r = gpuenv_requirement_parse(ctx, arena, f->value, &q->req);
			if (r == -ENOMEM)
				return r;
			if (r) {
				warn(ctx, &out->nwarnings, file, f->line,
					"invalid Requires-Dist '%.*s' (%s); ignored", SHORT(f->value),
					ctx->err.msg);
				gpuenv_error_clear(ctx);
				memset(&q->req, 0, sizeof(q->req));
			} else {
				q->valid = true;
			}
		} else if (id == F_PROJECT_URL) {
			gpuenv_md_url_t *u = &out->project_urls[out->nproject_urls++];
			gpuenv_str_t label, rest = gpuenv_str_split(f->value, ',', &label);
			if (rest.ptr) {
				u->label = gpuenv_str_trim(label);
				u->url = gpuenv_str_trim(rest);
			} else {
				u->url = f->value;
			}
		} else {
			gpuenv_md_list_t *l = list_slot(out, id);
			l->items[l->n++] = f->value;
		}
	}
	return 0;
}

size_t gpuenv_metadata_get_all(const gpuenv_metadata_t *md, const char *name,
	gpuenv_str_t *values, size_t max)
{
	size_t n = 0;
	gpuenv_str_t want = gpuenv_str(name);

	for (size_t i = 0; i < md->nfields; i++) {
		if (!gpuenv_str_ieq(md->fields[i].name, want))
			continue;
		if (n < max)
			values[n] = md->fields[i].value;
		n++;
	}
	return n;
}

/* ---- WHEEL ---- */

int gpuenv_wheelfile_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_wheelfile_t *out)
{
	gpuenv_str_t body;
	unsigned body_line, wv_line = 0;
	size_t ntagfields = 0, ntags = 0;
	int r;

	memset(out, 0, sizeof(*out));
	file = fname(file, "WHEEL");
	r = gpuenv_headers_parse(ctx, arena, file, text, &out->nfields, &out->fields, &body,
		&body_line);
	if (r)
		return r;

	for (size_t i = 0; i < out->nfields; i++)
		ntagfields += gpuenv_str_ieq(out->fields[i].name, GPUENV_STR_LIT("Tag"));
	gpuenv_tag_t **tagv = ntagfields ? gpuenv_arena_alloc(arena, ntagfields * sizeof(*tagv))
					 : NULL;
	size_t *tagn = ntagfields ? gpuenv_arena_alloc(arena, ntagfields * sizeof(*tagn)) : NULL;
	if (ntagfields && (!tagv || !tagn))
		return oom(ctx);
	ntagfields = 0;

	for (size_t i = 0; i < out->nfields; i++) {
		gpuenv_md_field_t *f = &out->fields[i];
		if (gpuenv_str_ieq(f->name, GPUENV_STR_LIT("Wheel-Version"))) {
			if (wv_line)
				return gpuenv_fail(ctx, GPUENV_EFORMAT, file, f->line, 1,
					"Wheel-Version given twice (first on line %u)", wv_line);
			wv_line = f->line;
			out->wheel_version = f->value;
			if (!parse_mm(f->value, &out->wv_major, &out->wv_minor))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, file, f->line, 16,
					"Wheel-Version '%.*s' is not MAJOR.MINOR", SHORT(f->value));
		} else if (gpuenv_str_ieq(f->name, GPUENV_STR_LIT("Generator"))) {
			if (!out->generator.ptr)
				out->generator = f->value;
		} else if (gpuenv_str_ieq(f->name, GPUENV_STR_LIT("Root-Is-Purelib"))) {
			if (gpuenv_str_ieq(f->value, GPUENV_STR_LIT("true")))
				out->root_is_purelib = true;
			else if (!gpuenv_str_ieq(f->value, GPUENV_STR_LIT("false")))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, file, f->line, 18,
					"Root-Is-Purelib must be true or false, not '%.*s'",
					SHORT(f->value));
			out->has_root_is_purelib = true;
		} else if (gpuenv_str_ieq(f->name, GPUENV_STR_LIT("Tag"))) {
			size_t n;
			gpuenv_tag_t *t;
			r = gpuenv_tag_parse(ctx, arena, f->value, 0, &n, &t);
			if (r == -ENOMEM)
				return r;
			if (r)
				return gpuenv_fail(ctx, GPUENV_EFORMAT, file, f->line, 6,
					"invalid Tag '%.*s'", SHORT(f->value));
			tagv[ntagfields] = t;
			tagn[ntagfields++] = n;
			ntags += n;
		} else if (gpuenv_str_ieq(f->name, GPUENV_STR_LIT("Build"))) {
			gpuenv_str_t b = f->value;
			size_t d = 0;
			while (d < b.len && b.ptr[d] >= '0' && b.ptr[d] <= '9')
				d++;
			if (!d || !gpuenv_str_to_u64(gpuenv_str_n(b.ptr, d), &out->build_number))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, file, f->line, 8,
					"Build '%.*s' must start with a number", SHORT(b));
			out->has_build = true;
			out->build = b;
			out->build_suffix = gpuenv_str_n(b.ptr + d, b.len - d);
		}
	}
	if (!wv_line)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, file, 0, 0, "no Wheel-Version field");
	if (out->wv_major > 1)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, file, wv_line, 16,
			"Wheel-Version %u.%u: gpuenv reads wheels of version 1.x", out->wv_major,
			out->wv_minor);
	if (out->wv_major == 1 && out->wv_minor > 0)
		warn(ctx, &out->nwarnings, file, wv_line,
			"Wheel-Version %u.%u is newer than 1.0; reading it as 1.0", out->wv_major,
			out->wv_minor);
	if (!out->has_root_is_purelib)
		warn(ctx, &out->nwarnings, file, 0, "no Root-Is-Purelib field");

	if (ntags) {
		out->tags = gpuenv_arena_alloc(arena, ntags * sizeof(*out->tags));
		if (!out->tags)
			return oom(ctx);
		for (size_t i = 0; i < ntagfields; i++)
			for (size_t k = 0; k < tagn[i]; k++)
				out->tags[out->ntags++] = tagv[i][k];
	}
	return 0;
}

/* ---- entry_points.txt ---- */

static bool ep_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '.' || c >= 0x80;
}

/* importlib.metadata's pattern:
 * (?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$ */
static int parse_object_ref(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_entry_point_t *e)
{
	gpuenv_str_t v = e->value;
	size_t i = 0, s;

	while (i < v.len && ep_word((unsigned char)v.ptr[i]))
		i++;
	if (!i)
		return 0;
	e->module = gpuenv_str_n(v.ptr, i);
	while (i < v.len && gpuenv_is_blank(v.ptr[i]))
		i++;
	if (i < v.len && v.ptr[i] == ':') {
		i++;
		while (i < v.len && gpuenv_is_blank(v.ptr[i]))
			i++;
		s = i;
		while (i < v.len && ep_word((unsigned char)v.ptr[i]))
			i++;
		if (i == s) {
			e->module = GPUENV_STR_NULL;
			return 0;
		}
		e->attr = gpuenv_str_n(v.ptr + s, i - s);
		while (i < v.len && gpuenv_is_blank(v.ptr[i]))
			i++;
	}
	if (i < v.len && v.ptr[i] == '[') {
		gpuenv_str_t rest = rtrim(gpuenv_str_n(v.ptr + i, v.len - i));
		if (!rest.len || rest.ptr[rest.len - 1] != ']') {
			e->module = e->attr = GPUENV_STR_NULL;
			return 0;
		}
		gpuenv_str_t inner = gpuenv_str_n(rest.ptr + 1, rest.len - 2);
		size_t n = 1;
		for (size_t k = 0; k < inner.len; k++)
			n += inner.ptr[k] == ',';
		e->extras = gpuenv_arena_alloc(arena, n * sizeof(*e->extras));
		if (!e->extras)
			return oom(ctx);
		while (inner.ptr) {
			gpuenv_str_t head, tail = gpuenv_str_split(inner, ',', &head);
			head = gpuenv_str_trim(head);
			if (head.len)
				e->extras[e->nextras++] = head;
			inner = tail;
		}
		i = v.len;
	}
	if (i != v.len) {
		e->module = e->attr = GPUENV_STR_NULL;
		e->nextras = 0;
		return 0;
	}
	e->valid = true;
	return 0;
}

int gpuenv_entry_points_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_entry_points_t *out)
{
	size_t pos = 0, cap = 0;
	unsigned line = 0;
	gpuenv_str_t group = GPUENV_STR_NULL;
	int r;

	memset(out, 0, sizeof(*out));
	file = fname(file, "entry_points.txt");
	if (text.len > GPUENV_ENTRY_POINTS_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0,
			"%zu bytes, over the %zu-byte limit", text.len, GPUENV_ENTRY_POINTS_MAX);
	for (size_t i = 0; i < text.len; i++)
		cap += text.ptr[i] == '\n';
	cap++;
	out->items = gpuenv_arena_calloc(arena, cap, sizeof(*out->items));
	if (!out->items)
		return oom(ctx);

	while (pos < text.len) {
		gpuenv_str_t l = gpuenv_str_trim(next_line(text, &pos));
		line++;
		if (!l.len || l.ptr[0] == '#' || l.ptr[0] == ';')
			continue;
		if (l.ptr[0] == '[') {
			if (l.ptr[l.len - 1] != ']' || l.len < 3)
				return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 1,
					"expected a group header '[name]'");
			group = gpuenv_str_trim(gpuenv_str_n(l.ptr + 1, l.len - 2));
			continue;
		}
		if (!group.ptr)
			return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 1,
				"an entry before any [group] header");
		gpuenv_str_t name, value = gpuenv_str_split(l, '=', &name);
		if (!value.ptr)
			return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 1,
				"expected 'name = module:attr'");
		name = gpuenv_str_trim(name);
		if (!name.len)
			return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 1,
				"an entry point without a name");
		gpuenv_entry_point_t *e = &out->items[out->n++];
		e->group = group;
		e->name = name;
		e->value = gpuenv_str_trim(value);
		e->line = line;
		if ((r = parse_object_ref(ctx, arena, e)) != 0)
			return r;
	}
	return 0;
}

/* ---- a dist-info folder ---- */

/* Read dir/name into the arena; *found false when the file does not exist. */
static int read_into(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path, size_t max,
	gpuenv_str_t *out, bool *found)
{
	gpuenv_buf_t b;
	int r;

	*found = false;
	*out = GPUENV_STR_NULL;
	gpuenv_buf_init(&b, ctx, max + 1);
	r = gpuenv_fs_read(ctx, path, max, &b);
	if (r == -ENOENT) {
		gpuenv_buf_free(&b);
		gpuenv_error_clear(ctx);
		return 0;
	}
	if (r) {
		gpuenv_buf_free(&b);
		return r;
	}
	char *p = gpuenv_arena_strndup(arena, b.data ? b.data : "", b.len);
	size_t len = b.len;
	gpuenv_buf_free(&b);
	if (!p)
		return oom(ctx);
	*out = gpuenv_str_n(p, len);
	*found = true;
	return 0;
}

int gpuenv_distinfo_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir,
	unsigned flags, gpuenv_distinfo_t *out)
{
	static const char *const names[4] = { "METADATA", "WHEEL", "RECORD", "entry_points.txt" };
	static const size_t caps[4] = { GPUENV_METADATA_MAX, GPUENV_METADATA_MAX,
		GPUENV_RECORD_MAX, GPUENV_ENTRY_POINTS_MAX };
	char *paths[4];
	gpuenv_str_t text[4];
	bool found[4];
	int r;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 4; i++) {
		size_t n = strlen(dir) + strlen(names[i]) + 2;
		paths[i] = gpuenv_arena_alloc(arena, n);
		if (!paths[i])
			return oom(ctx);
		snprintf(paths[i], n, "%s/%s", dir, names[i]);
		if ((r = read_into(ctx, arena, paths[i], caps[i], &text[i], &found[i])) != 0)
			return r;
	}
	if (!found[0])
		return gpuenv_fail(ctx, -ENOENT, paths[0], 0, 0,
			       "no METADATA file: not a .dist-info folder"),
		       gpuenv_hint(ctx, "give the path of a NAME-VERSION.dist-info folder");
	if ((r = gpuenv_metadata_parse(ctx, arena, paths[0], text[0], flags, &out->metadata)))
		return r;
	if (found[1]) {
		out->has_wheel = true;
		if ((r = gpuenv_wheelfile_parse(ctx, arena, paths[1], text[1], &out->wheel)))
			return r;
	}
	if (found[2]) {
		out->has_record = true;
		if ((r = gpuenv_record_parse(ctx, arena, paths[2], text[2], &out->record)))
			return r;
	}
	if (found[3]) {
		out->has_entry_points = true;
		if ((r = gpuenv_entry_points_parse(ctx, arena, paths[3], text[3],
			     &out->entry_points)))
			return r;
	}
	return 0;
}

bool gpuenv_metadata_deps_static(const gpuenv_metadata_t *md)
{
	if (md->mv_major < 2 || (md->mv_major == 2 && md->mv_minor < 2))
		return false;
	for (size_t i = 0; i < md->dynamic.n; i++)
		if (gpuenv_str_ieq(md->dynamic.items[i], GPUENV_STR_LIT("Requires-Dist")))
			return false;
	return true;
}
