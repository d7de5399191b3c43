/* PEP 751 lock files: the writer (model -> TOML through the document
 * builder of gpuenv/toml.h, so every string is escaped by the TOML writer)
 * and the strict reader (TOML -> model, every value checked, errors at the
 * value's line:col).
 *
 * The two share their rules: each check below takes the place to blame (a
 * TOML value when reading, nothing when writing), so whatever the writer
 * accepts the reader accepts too and a written lock always reads back equal.
 */
#include "gpuenv/pylock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/toml.h"
#include "gpuenv/wheel.h"

/* ---- shared rules --------------------------------------------------------
 * A place to blame: the file and a TOML value's position, or nothing (the
 * writer).  `what` names the key in the message ("packages[2].version"). */
struct loc {
	const char *file;
	unsigned line, col;
};

#define NOWHERE ((struct loc){ NULL, 0, 0 })

static int bad(gpuenv_ctx_t *ctx, struct loc at, const char *fmt, ...) GPUENV_PRINTF(3, 4);

static int bad(gpuenv_ctx_t *ctx, struct loc at, const char *fmt, ...)
{
	char msg[sizeof(ctx->err.msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(ctx, GPUENV_EFORMAT, at.file, at.line, at.col, "%s", msg);
}

/* A parser of lib/pep failed: keep -ENOMEM, turn anything else into
 * EFORMAT at our place, with the parser's message. */
static int bad_value(gpuenv_ctx_t *ctx, struct loc at, int r, const char *what, const char *value,
	const char *kind)
{
	if (r == -ENOMEM)
		return r;
	return gpuenv_fail_prefix(ctx, GPUENV_EFORMAT, at.file, at.line, at.col,
		"'%s' is not a valid %s ('%.80s')", what, kind, value);
}

static bool is_lock_version(const char *s, unsigned long *minor)
{
	if (s[0] != '1' || s[1] != '.' || !s[2])
		return false;
	for (const char *p = s + 2; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	*minor = strtoul(s + 2, NULL, 10);
	return true;
}

static int check_lock_version(gpuenv_ctx_t *ctx, struct loc at, const char *v, unsigned long *minor)
{
	if (is_lock_version(v, minor))
		return 0;
	if (v[0] >= '2' && v[0] <= '9' && strchr(v, '.')) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, at.file, at.line, at.col,
			"lock-version '%.40s' is newer than this gpuenv reads (1.x)", v);
		return gpuenv_hint(ctx, "upgrade gpuenv, or lock again with this version");
	}
	return bad(ctx, at, "lock-version must be \"1.0\" (PEP 751), not '%.40s'", v);
}

static int check_name(gpuenv_ctx_t *ctx, struct loc at, const char *what, const char *name)
{
	gpuenv_str_t s = gpuenv_str(name);
	char norm[256];

	if (gpuenv_name_is_normalized(s))
		return 0;
	if (!gpuenv_name_is_valid(s) || s.len >= sizeof(norm))
		return bad(ctx, at, "'%s' is not a valid package name: '%.80s'", what, name);
	gpuenv_name_normalize_to(s, norm, sizeof(norm));
	bad(ctx, at, "'%s' must be a normalized name: '%.80s'", what, name);
	return gpuenv_hint(ctx, "write \"%s\" (PEP 503)", norm);
}

static int check_version(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, struct loc at, const char *what,
	const char *v, gpuenv_version_t *out)
{
	gpuenv_version_t tmp;
	int r = gpuenv_version_parse(ctx, a, gpuenv_str(v), out ? out : &tmp);
	return r ? bad_value(ctx, at, r, what, v, "PEP 440 version") : 0;
}

static int check_marker(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, struct loc at, const char *what,
	const char *m)
{
	gpuenv_marker_t *out;
	int r = gpuenv_marker_parse(ctx, a, gpuenv_str(m), &out);
	return r ? bad_value(ctx, at, r, what, m, "PEP 508 marker") : 0;
}

static int check_specset(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, struct loc at, const char *what,
	const char *spec)
{
	gpuenv_specset_t out;
	int r = gpuenv_specset_parse(ctx, a, gpuenv_str(spec), &out);
	return r ? bad_value(ctx, at, r, what, spec, "version specifier") : 0;
}

static int check_sha256(gpuenv_ctx_t *ctx, struct loc at, const char *what, const char *hex)
{
	size_t n = strlen(hex);
	bool ok = n == 64;

	for (size_t i = 0; ok && i < n; i++)
		ok = gpuenv_hex_digit(hex[i]) >= 0;
	return ok ? 0 : bad(ctx, at, "'%s' must be 64 hexadecimal digits, not '%.80s'", what, hex);
}

/* a hash algorithm name: the key of hashes = { ... } ("sha256", "blake2b") */
static bool is_algo(const char *s, size_t n)
{
	if (!n || n > 32)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '_' || c == '-'))
			return false;
	}
	return true;
}

static int check_other_hash(gpuenv_ctx_t *ctx, struct loc at, const char *what, const char *h)
{
	const char *eq = strchr(h, '=');
	if (!eq || !is_algo(h, (size_t)(eq - h)) || !eq[1])
		return bad(ctx, at, "'%s': a hash must be \"algorithm=value\", not '%.80s'", what, h);
	if ((size_t)(eq - h) == 6 && !memcmp(h, "sha256", 6))
		return bad(ctx, at, "'%s': the sha256 hash goes in its own field", what);
	return 0;
}

/* A wheel's file name must parse and name the package it is listed under. */
static int check_wheel_name(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, struct loc at, const char *what,
	const char *file, const char *pkg)
{
	gpuenv_wheel_name_t wn;
	int r = gpuenv_wheel_name_parse(ctx, a, gpuenv_str(file), 0, &wn);

	if (r)
		return bad_value(ctx, at, r, what, file, "wheel file name");
	if (pkg && !gpuenv_str_eq_cstr(wn.normalized, pkg))
		return bad(ctx, at, "'%s': wheel '%.80s' is not a wheel of '%.80s'", what, file, pkg);
	return 0;
}

static int check_time(gpuenv_ctx_t *ctx, struct loc at, const char *what, const char *t)
{
	if (gpuenv_toml_datetime_parse(gpuenv_str(t), NULL) == GPUENV_TOML_DATETIME)
		return 0;
	return bad(ctx, at, "'%s' must be a date-time with an offset (2025-01-25T11:30:10Z), not '%.60s'",
		what, t);
}

/* Which sources a package has; PEP 751: vcs, directory and archive each
 * exclude every other one; sdist and wheels may go together. */
static int check_sources(gpuenv_ctx_t *ctx, struct loc at, const char *what,
	const gpuenv_lock_package_t *p)
{
	int exclusive = !!p->vcs + !!p->directory + !!p->archive;
	bool files = p->sdist || p->nwheels;

	if (exclusive > 1 || (exclusive && files))
		return bad(ctx, at, "%s ('%.80s'): vcs, directory and archive exclude every other source",
			what, p->name);
	if (!exclusive && !files) {
		bad(ctx, at, "%s ('%.80s') has no source", what, p->name);
		return gpuenv_hint(ctx, "give it wheels, an sdist, an archive, a directory or a vcs entry");
	}
	if (p->editable && !p->directory)
		return bad(ctx, at, "%s ('%.80s'): only a directory can be editable", what, p->name);
	if (p->subdirectory && !exclusive)
		return bad(ctx, at, "%s ('%.80s'): a subdirectory needs a vcs, directory or archive entry",
			what, p->name);
	return 0;
}

/* ---- order ---------------------------------------------------------------
 * Packages by name, PEP 440 version (none first), marker (none first), then
 * as given; dependencies by name, version; wheels by file name. */
struct pkg_key {
	const gpuenv_lock_package_t *p;
	gpuenv_version_t v;
	bool has_v;
	size_t i;
};

static int cmp_cstr(const char *a, const char *b)
{
	if (!a || !b)
		return a ? 1 : b ? -1 : 0;
	return strcmp(a, b);
}

static int cmp_pkg(const void *x, const void *y)
{
	const struct pkg_key *a = x, *b = y;
	int c = cmp_cstr(a->p->name, b->p->name);

	if (c)
		return c;
	if (a->has_v != b->has_v)
		return a->has_v ? 1 : -1;
	if (a->has_v && (c = gpuenv_version_cmp(&a->v, &b->v)))
		return c;
	if ((c = cmp_cstr(a->p->version, b->p->version))) /* "1.0" and "1.0.0" */
		return c;
	if ((c = cmp_cstr(a->p->marker, b->p->marker)))
		return c;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int cmp_dep(const void *x, const void *y)
{
	const gpuenv_lock_dep_t *a = x, *b = y;
	int c = cmp_cstr(a->name, b->name);
	return c ? c : cmp_cstr(a->version, b->version);
}

static int cmp_file(const void *x, const void *y)
{
	const gpuenv_lock_file_t *a = x, *b = y;
	int c = cmp_cstr(a->name, b->name);
	if (c)
		return c;
	if ((c = cmp_cstr(a->url, b->url)))
		return c;
	return cmp_cstr(a->path, b->path);
}

/* The packages' order, in the arena (versions already checked). */
static struct pkg_key *sort_packages(gpuenv_ctx_t *ctx, gpuenv_arena_t *a,
	const gpuenv_lock_package_t *pkgs, size_t n)
{
	struct pkg_key *keys = gpuenv_arena_calloc(a, n ? n : 1, sizeof(*keys));

	if (!keys)
		return gpuenv_oom(ctx, "sorting the lock's packages"), NULL;
	for (size_t i = 0; i < n; i++) {
		keys[i].p = &pkgs[i];
		keys[i].i = i;
		int r = pkgs[i].version ?
			gpuenv_version_parse(ctx, a, gpuenv_str(pkgs[i].version), &keys[i].v) : 1;
		if (r == -ENOMEM)
			return NULL;
		keys[i].has_v = r == 0;
	}
	gpuenv_error_clear(ctx);
	qsort(keys, n, sizeof(*keys), cmp_pkg);
	return keys;
}

/* PEP 751: a name may appear more than once only when markers tell its
 * entries apart; two entries of one name without a marker always both
 * apply.  keys sorted; true with the first two such entries (as given). */
static bool unmarked_twice(const struct pkg_key *keys, size_t n, size_t *first, size_t *second)
{
	for (size_t g = 0; g < n;) {
		size_t end = g + 1, a = SIZE_MAX, b = SIZE_MAX;
		while (end < n && !cmp_cstr(keys[end].p->name, keys[g].p->name))
			end++;
		for (size_t i = g; i < end; i++) {
			size_t k = keys[i].i;
			if (keys[i].p->marker)
				continue;
			if (k < a) {
				b = a;
				a = k;
			} else if (k < b) {
				b = k;
			}
		}
		if (b != SIZE_MAX) {
			*first = a;
			*second = b;
			return true;
		}
		g = end;
	}
	return false;
}

static int twice(gpuenv_ctx_t *ctx, struct loc at, const char *name, size_t first, size_t second,
	unsigned first_line)
{
	char line[32] = "";

	if (first_line)
		snprintf(line, sizeof(line), ", line %u", first_line);
	bad(ctx, at, "packages[%zu]: '%s' is locked twice without a marker (also packages[%zu]%s): PEP 751 "
		"lets a name appear more than once only with markers that tell its entries apart", second, name,
		first, line);
	return gpuenv_hint(ctx, "two locks merged, or an entry copied: keep one of them, or lock again "
		"(gpuenv lock)");
}

/* ---- writer ---------------------------------------------------------------- */

struct wr {
	gpuenv_ctx_t *ctx;
	gpuenv_toml_doc_t doc;
	gpuenv_arena_t scratch;
	char what[256];
};

static bool utf8_ok(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t k = gpuenv_utf8_seq(s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

static const char *wh(struct wr *w, const char *prefix, const char *key)
{
	if (snprintf(w->what, sizeof(w->what), "%s%s%s", prefix, *prefix ? "." : "", key) < 0)
		w->what[0] = '\0'; /* a long key path is cut: it only names the key */
	return w->what;
}

/* key = "s" when s is set */
static int w_str(struct wr *w, gpuenv_toml_table_t *t, const char *prefix, const char *key,
	const char *s)
{
	if (!s)
		return 0;
	if (!utf8_ok(s))
		return bad(w->ctx, NOWHERE, "'%s' is not valid UTF-8", wh(w, prefix, key));
	return gpuenv_toml_add_string(&w->doc, t, key, s);
}

static int w_strs(struct wr *w, gpuenv_toml_table_t *t, const char *prefix, const char *key,
	size_t n, const char *const *items, bool always)
{
	gpuenv_toml_array_t *a;
	int r;

	if (!n && !always)
		return 0;
	if (n && !items)
		return bad(w->ctx, NOWHERE, "'%s' has %zu entries and no array", wh(w, prefix, key), n);
	if (!(a = gpuenv_toml_add_array(&w->doc, t, key, 0)))
		return w->ctx->err.code;
	for (size_t i = 0; i < n; i++) {
		gpuenv_toml_value_t *v;
		if (!items[i])
			return bad(w->ctx, NOWHERE, "'%s[%zu]' is NULL", wh(w, prefix, key), i);
		if (!utf8_ok(items[i]))
			return bad(w->ctx, NOWHERE, "'%s[%zu]' is not valid UTF-8", wh(w, prefix, key), i);
		if (!(v = gpuenv_toml_array_push(&w->doc, a)))
			return gpuenv_oom(w->ctx, "writing the lock");
		if ((r = gpuenv_toml_set_string(&w->doc, v, gpuenv_str(items[i]))))
			return r;
	}
	return 0;
}

enum { F_WHEEL, F_SDIST, F_ARCHIVE };

/* upload-time = <TOML offset date-time> when set (checked before) */
static int w_time(struct wr *w, gpuenv_toml_table_t *t, const char *time)
{
	gpuenv_toml_value_t *tv;

	if (!time)
		return 0;
	tv = gpuenv_toml_table_add(&w->doc, t, GPUENV_STR_LIT("upload-time"));
	if (!tv || gpuenv_toml_set_datetime(&w->doc, tv, gpuenv_str(time)))
		return w->ctx->err.code;
	return 0;
}

/* One file entry as an inline table in v. */
static int w_file(struct wr *w, gpuenv_toml_value_t *v, const char *prefix, int kind,
	const gpuenv_lock_file_t *f, const char *pkg, const char *subdir)
{
	gpuenv_ctx_t *ctx = w->ctx;
	gpuenv_toml_table_t *t, *h;
	char pre[160];
	int r;

	snprintf(pre, sizeof(pre), "%s", prefix);
	if (!f->url && !f->path)
		return bad(ctx, NOWHERE, "'%s' needs a url or a path", pre);
	if (kind != F_ARCHIVE && (!f->name || !f->name[0]))
		return bad(ctx, NOWHERE, "'%s' needs the file's name", pre);
	if (kind == F_WHEEL && (r = check_wheel_name(ctx, &w->scratch, NOWHERE, wh(w, pre, "name"),
					f->name, pkg)))
		return r;
	if (kind == F_ARCHIVE && f->name)
		return bad(ctx, NOWHERE, "'%s': an archive has no name key in PEP 751", pre);
	if (!f->sha256 && !f->nother_hashes)
		return bad(ctx, NOWHERE, "'%s' has no hash: PEP 751 requires one for every file", pre);
	if (f->sha256 && (r = check_sha256(ctx, NOWHERE, wh(w, pre, "hashes.sha256"), f->sha256)))
		return r;
	if (f->nother_hashes && !f->other_hashes)
		return bad(ctx, NOWHERE, "'%s': other_hashes is NULL", pre);
	for (size_t i = 0; i < f->nother_hashes; i++)
		if (!f->other_hashes[i] ||
			(r = check_other_hash(ctx, NOWHERE, wh(w, pre, "hashes"), f->other_hashes[i])))
			return f->other_hashes[i] ? r : bad(ctx, NOWHERE, "'%s': a NULL hash", pre);
	if (f->size < -1)
		return bad(ctx, NOWHERE, "'%s': size %lld is negative", pre, (long long)f->size);
	if (f->upload_time && (r = check_time(ctx, NOWHERE, wh(w, pre, "upload-time"), f->upload_time)))
		return r;

	if (!(t = gpuenv_toml_set_table(&w->doc, v, GPUENV_TOML_INLINE)))
		return gpuenv_oom(ctx, "writing the lock");
	if ((r = w_str(w, t, pre, "name", f->name)))
		return r;
	if (kind != F_ARCHIVE && (r = w_time(w, t, f->upload_time)))
		return r;
	if ((r = w_str(w, t, pre, "url", f->url)) || (r = w_str(w, t, pre, "path", f->path)))
		return r;
	if (f->size >= 0 && (r = gpuenv_toml_add_integer(&w->doc, t, "size", f->size)))
		return r;
	if (kind == F_ARCHIVE && (r = w_time(w, t, f->upload_time)))
		return r;
	if (!(h = gpuenv_toml_add_table(&w->doc, t, "hashes", GPUENV_TOML_INLINE)))
		return ctx->err.code;
	if ((r = w_str(w, h, pre, "sha256", f->sha256)))
		return r;
	for (size_t i = 0; i < f->nother_hashes; i++) {
		const char *eq = strchr(f->other_hashes[i], '=');
		gpuenv_str_t algo = gpuenv_str_n(f->other_hashes[i], (size_t)(eq - f->other_hashes[i]));
		gpuenv_toml_value_t *hv = gpuenv_toml_table_add(&w->doc, h, algo);
		if (!hv)
			return ctx->err.code == GPUENV_EDUPLICATE ?
				bad(ctx, NOWHERE, "'%s': hash '%.*s' given twice", pre, GPUENV_STR_ARG(algo)) :
				ctx->err.code;
		if (!utf8_ok(eq + 1))
			return bad(ctx, NOWHERE, "'%s': a hash is not valid UTF-8", pre);
		if ((r = gpuenv_toml_set_string(&w->doc, hv, gpuenv_str(eq + 1))))
			return r;
	}
	if (kind == F_ARCHIVE && (r = w_str(w, t, pre, "subdirectory", subdir)))
		return r;
	return 0;
}

/* key = { file entry } in t */
static int w_file_at(struct wr *w, gpuenv_toml_table_t *t, const char *pre, const char *key, int kind,
	const gpuenv_lock_file_t *f, const char *pkg, const char *subdir)
{
	gpuenv_toml_value_t *v = gpuenv_toml_table_add(&w->doc, t, gpuenv_str(key));
	char fw[128];

	snprintf(fw, sizeof(fw), "%s.%s", pre, key);
	return v ? w_file(w, v, fw, kind, f, pkg, subdir) : w->ctx->err.code;
}

static int w_package(struct wr *w, gpuenv_toml_table_t *t, size_t idx, const gpuenv_lock_package_t *p)
{
	gpuenv_ctx_t *ctx = w->ctx;
	char pre[64];
	int r;

	snprintf(pre, sizeof(pre), "packages[%zu]", idx);
	if (!p->name)
		return bad(ctx, NOWHERE, "'%s' has no name", pre);
	if ((r = check_name(ctx, NOWHERE, wh(w, pre, "name"), p->name)))
		return r;
	if (p->version && (r = check_version(ctx, &w->scratch, NOWHERE, wh(w, pre, "version"), p->version, NULL)))
		return r;
	if (p->marker && (r = check_marker(ctx, &w->scratch, NOWHERE, wh(w, pre, "marker"), p->marker)))
		return r;
	if (p->requires_python &&
		(r = check_specset(ctx, &w->scratch, NOWHERE, wh(w, pre, "requires-python"), p->requires_python)))
		return r;
	if ((r = check_sources(ctx, NOWHERE, pre, p)))
		return r;

	if ((r = w_str(w, t, pre, "name", p->name)) || (r = w_str(w, t, pre, "version", p->version)) ||
		(r = w_str(w, t, pre, "marker", p->marker)) ||
		(r = w_str(w, t, pre, "requires-python", p->requires_python)))
		return r;
	if (p->ndeps) {
		gpuenv_lock_dep_t *deps;
		gpuenv_toml_array_t *a;
		if (!p->deps)
			return bad(ctx, NOWHERE, "'%s': deps is NULL", pre);
		if (!(deps = gpuenv_arena_alloc(&w->scratch, p->ndeps * sizeof(*deps))))
			return gpuenv_oom(ctx, "writing the lock");
		memcpy(deps, p->deps, p->ndeps * sizeof(*deps));
		for (size_t i = 0; i < p->ndeps; i++) {
			char dw[128];
			snprintf(dw, sizeof(dw), "%s.dependencies[%zu]", pre, i);
			if (!deps[i].name)
				return bad(ctx, NOWHERE, "'%s' has no name", dw);
			if ((r = check_name(ctx, NOWHERE, wh(w, dw, "name"), deps[i].name)))
				return r;
			if (deps[i].version &&
				(r = check_version(ctx, &w->scratch, NOWHERE, wh(w, dw, "version"), deps[i].version, NULL)))
				return r;
		}
		qsort(deps, p->ndeps, sizeof(*deps), cmp_dep);
		if (!(a = gpuenv_toml_add_array(&w->doc, t, "dependencies", 0)))
			return ctx->err.code;
		for (size_t i = 0; i < p->ndeps; i++) {
			gpuenv_toml_value_t *v = gpuenv_toml_array_push(&w->doc, a);
			gpuenv_toml_table_t *d = v ? gpuenv_toml_set_table(&w->doc, v, GPUENV_TOML_INLINE) : NULL;
			if (!d)
				return gpuenv_oom(ctx, "writing the lock");
			if ((r = w_str(w, d, pre, "name", deps[i].name)) ||
				(r = w_str(w, d, pre, "version", deps[i].version)))
				return r;
		}
	}
	if (p->vcs) {
		const gpuenv_lock_vcs_t *vc = p->vcs;
		gpuenv_toml_table_t *v;
		if (!vc->type || !vc->commit_id || (!vc->url && !vc->path))
			return bad(ctx, NOWHERE, "'%s.vcs' needs a type, a commit-id and a url or a path", pre);
		if (!(v = gpuenv_toml_add_table(&w->doc, t, "vcs", GPUENV_TOML_INLINE)))
			return ctx->err.code;
		if ((r = w_str(w, v, pre, "type", vc->type)) || (r = w_str(w, v, pre, "url", vc->url)) ||
			(r = w_str(w, v, pre, "path", vc->path)) ||
			(r = w_str(w, v, pre, "requested-revision", vc->requested_revision)) ||
			(r = w_str(w, v, pre, "commit-id", vc->commit_id)) ||
			(r = w_str(w, v, pre, "subdirectory", p->subdirectory)))
			return r;
	}
	if (p->directory) {
		gpuenv_toml_table_t *d = gpuenv_toml_add_table(&w->doc, t, "directory", GPUENV_TOML_INLINE);
		if (!d)
			return ctx->err.code;
		if ((r = w_str(w, d, pre, "path", p->directory)))
			return r;
		if (p->editable && (r = gpuenv_toml_add_bool(&w->doc, d, "editable", true)))
			return r;
		if ((r = w_str(w, d, pre, "subdirectory", p->subdirectory)))
			return r;
	}
	if (p->archive && (r = w_file_at(w, t, pre, "archive", F_ARCHIVE, p->archive, p->name, p->subdirectory)))
		return r;
	if ((r = w_str(w, t, pre, "index", p->index)))
		return r;
	if (p->sdist && (r = w_file_at(w, t, pre, "sdist", F_SDIST, p->sdist, p->name, NULL)))
		return r;
	if (p->nwheels) {
		gpuenv_lock_file_t *wheels;
		gpuenv_toml_array_t *a;
		if (!p->wheels)
			return bad(ctx, NOWHERE, "'%s': wheels is NULL", pre);
		if (!(wheels = gpuenv_arena_alloc(&w->scratch, p->nwheels * sizeof(*wheels))))
			return gpuenv_oom(ctx, "writing the lock");
		memcpy(wheels, p->wheels, p->nwheels * sizeof(*wheels));
		qsort(wheels, p->nwheels, sizeof(*wheels), cmp_file);
		if (!(a = gpuenv_toml_add_array(&w->doc, t, "wheels", 0)))
			return ctx->err.code;
		for (size_t i = 0; i < p->nwheels; i++) {
			gpuenv_toml_value_t *v = gpuenv_toml_array_push(&w->doc, a);
			char fw[128];
			snprintf(fw, sizeof(fw), "%s.wheels[%zu]", pre, i);
			if (!v)
				return gpuenv_oom(ctx, "writing the lock");
			if ((r = w_file(w, v, fw, F_WHEEL, &wheels[i], p->name, NULL)))
				return r;
		}
	}
	if (p->reason) {
		gpuenv_toml_table_t *tool = gpuenv_toml_add_table(&w->doc, t, "tool", 0);
		gpuenv_toml_table_t *g = tool ? gpuenv_toml_add_table(&w->doc, tool, "gpuenv", 0) : NULL;
		if (!g)
			return ctx->err.code;
		if ((r = w_str(w, g, pre, "reason", p->reason)))
			return r;
	}
	return 0;
}

static bool target_empty(const gpuenv_lock_target_t *t)
{
	return !t->name && !t->origin && !t->gpu && !t->compute_capability && !t->driver &&
		!t->cuda && !t->python && !t->platform && !t->backend && !t->backend_reason &&
		!t->ngroups && !t->nextras && !t->inputs_hash && !t->kb_date;
}

static int w_target(struct wr *w, const gpuenv_lock_target_t *tg)
{
	static const char pre[] = "tool.gpuenv";
	gpuenv_toml_table_t *tool, *g;
	int r;

	if (target_empty(tg))
		return 0;
	if (!(tool = gpuenv_toml_add_table(&w->doc, w->doc.root, "tool", 0)) ||
		!(g = gpuenv_toml_add_table(&w->doc, tool, "gpuenv", 0)))
		return w->ctx->err.code;
	if ((r = w_str(w, g, pre, "target", tg->name)) || (r = w_str(w, g, pre, "origin", tg->origin)) ||
		(r = w_str(w, g, pre, "gpu", tg->gpu)) ||
		(r = w_str(w, g, pre, "compute-capability", tg->compute_capability)) ||
		(r = w_str(w, g, pre, "driver", tg->driver)) || (r = w_str(w, g, pre, "cuda", tg->cuda)) ||
		(r = w_str(w, g, pre, "python", tg->python)) ||
		(r = w_str(w, g, pre, "platform", tg->platform)) ||
		(r = w_str(w, g, pre, "backend", tg->backend)) ||
		(r = w_str(w, g, pre, "backend-reason", tg->backend_reason)) ||
		(r = w_strs(w, g, pre, "groups", tg->ngroups, tg->groups, false)) ||
		(r = w_strs(w, g, pre, "extras", tg->nextras, tg->extras, false)) ||
		(r = w_str(w, g, pre, "inputs-hash", tg->inputs_hash)) ||
		(r = w_str(w, g, pre, "kb-date", tg->kb_date)))
		return r;
	return 0;
}

static int write_doc(struct wr *w, const gpuenv_lock_t *lock, gpuenv_buf_t *out)
{
	gpuenv_ctx_t *ctx = w->ctx;
	gpuenv_toml_table_t *root = w->doc.root;
	gpuenv_toml_array_t *pa;
	unsigned long minor;
	int r;

	if (!lock->lock_version)
		return bad(ctx, NOWHERE, "lock-version is required (\"1.0\")");
	if ((r = check_lock_version(ctx, NOWHERE, lock->lock_version, &minor)))
		return r;
	if (!lock->created_by || !lock->created_by[0])
		return bad(ctx, NOWHERE, "created-by is required (the tool's name)");
	if (lock->requires_python &&
		(r = check_specset(ctx, &w->scratch, NOWHERE, "requires-python", lock->requires_python)))
		return r;
	for (size_t i = 0; i < lock->nenvironments; i++)
		if (lock->environments && lock->environments[i] &&
			(r = check_marker(ctx, &w->scratch, NOWHERE, "environments", lock->environments[i])))
			return r;
	if ((r = w_str(w, root, "", "lock-version", lock->lock_version)) ||
		(r = w_strs(w, root, "", "environments", lock->nenvironments, lock->environments, false)) ||
		(r = w_str(w, root, "", "requires-python", lock->requires_python)) ||
		(r = w_strs(w, root, "", "extras", lock->nextras, lock->extras, true)) ||
		(r = w_strs(w, root, "", "dependency-groups", lock->ngroups, lock->dependency_groups, true)) ||
		(r = w_strs(w, root, "", "default-groups", lock->ndefault_groups, lock->default_groups, false)) ||
		(r = w_str(w, root, "", "created-by", lock->created_by)))
		return r;

	if (lock->npackages && !lock->packages)
		return bad(ctx, NOWHERE, "npackages is %zu and packages is NULL", lock->npackages);
	struct pkg_key *order = sort_packages(ctx, &w->scratch, lock->packages, lock->npackages);
	size_t first, second;
	if (!order)
		return -ENOMEM;
	if (unmarked_twice(order, lock->npackages, &first, &second))
		return twice(ctx, NOWHERE, lock->packages[second].name, first, second, 0);
	if (!(pa = gpuenv_toml_add_array(&w->doc, root, "packages", GPUENV_TOML_AOT)))
		return ctx->err.code;
	for (size_t i = 0; i < lock->npackages; i++) {
		gpuenv_toml_value_t *v = gpuenv_toml_array_push(&w->doc, pa);
		gpuenv_toml_table_t *t = v ? gpuenv_toml_set_table(&w->doc, v, 0) : NULL;
		if (!t)
			return gpuenv_oom(ctx, "writing the lock");
		if ((r = w_package(w, t, order[i].i, order[i].p)))
			return r;
	}
	if ((r = w_target(w, &lock->target)))
		return r;
	return gpuenv_toml_write(ctx, root, out);
}

int gpuenv_pylock_write(gpuenv_ctx_t *ctx, const gpuenv_lock_t *lock, gpuenv_buf_t *out)
{
	struct wr w = { .ctx = ctx };
	size_t start = out->len;
	int r;

	if ((r = gpuenv_toml_doc_init(&w.doc, ctx, NULL)))
		return r;
	gpuenv_arena_init(&w.scratch, ctx, 0);
	r = write_doc(&w, lock, out);
	if (r && out->len > start) { /* nothing half-written */
		out->len = start;
		out->data[start] = '\0';
	}
	if (r == -ENOMEM && ctx->err.code != -ENOMEM)
		gpuenv_oom(ctx, "writing a lock");
	gpuenv_arena_free(&w.scratch);
	gpuenv_toml_doc_free(&w.doc);
	return r;
}

/* ---- reader ---------------------------------------------------------------- */

struct rd {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena; /* the model */
	gpuenv_arena_t scratch;
	gpuenv_toml_doc_t doc;
	unsigned long minor; /* lock-version's: unknown keys are warnings past 1.0 */
	char what[256];
};

static struct loc at_v(struct rd *r, const gpuenv_toml_value_t *v)
{
	return (struct loc){ r->doc.file, v->line, v->col };
}

static struct loc at_t(struct rd *r, const gpuenv_toml_table_t *t)
{
	return (struct loc){ r->doc.file, t->line, t->col };
}

static const char *rwh(struct rd *r, const char *prefix, const char *key)
{
	if (snprintf(r->what, sizeof(r->what), "%s%s%s", prefix, *prefix ? "." : "", key) < 0)
		r->what[0] = '\0'; /* a long key path is cut: it only names the key */
	return r->what;
}

/* Keys a table may hold; an unknown one is an error in a 1.0 lock (with the
 * nearest known key as a hint), a warning in a newer minor version. */
static int r_keys(struct rd *r, const gpuenv_toml_table_t *t, const char *prefix,
	const char *const *known, bool ours)
{
	for (uint32_t i = 0; i < t->len; i++) {
		const gpuenv_toml_kv_t *kv = t->items[i];
		const char *best = NULL;
		size_t bestd = SIZE_MAX;
		char key[96];
		bool found = false;

		for (const char *const *k = known; *k && !found; k++)
			found = gpuenv_str_eq_cstr(kv->key, *k);
		if (found)
			continue;
		gpuenv_buf_t kb;
		gpuenv_buf_init(&kb, r->ctx, sizeof(key) - 1);
		if (gpuenv_toml_write_key(&kb, kv->key) == -ENOMEM) {
			gpuenv_buf_free(&kb);
			return gpuenv_oom(r->ctx, "reading the lock");
		}
		snprintf(key, sizeof(key), "%s", kb.data ? kb.data : "...");
		gpuenv_buf_free(&kb);
		if (!ours && r->minor > 0) {
			gpuenv_log(r->ctx, GPUENV_LOG_WARN, "%s:%u:%u: unknown key '%s' in %s (lock-version 1.%lu is newer than 1.0): ignored",
				r->doc.file, kv->line, kv->col, key, *prefix ? prefix : "the top level", r->minor);
			continue;
		}
		for (const char *const *k = known; *k; k++) {
			size_t d = gpuenv_edit_distance(key, *k);
			if (d < bestd) {
				bestd = d;
				best = *k;
			}
		}
		gpuenv_fail(r->ctx, GPUENV_EFORMAT, r->doc.file, kv->line, kv->col,
			"unknown key '%s' in %s", key, *prefix ? prefix : "the top level of the lock");
		if (best && bestd <= 3)
			return gpuenv_hint(r->ctx, "did you mean '%s'?", best);
		return gpuenv_hint(r->ctx, "PEP 751 keys here: see the pylock.toml specification; tools keep their own data under [tool]");
	}
	return 0;
}

/* The value of key when present (checked to be of type), else NULL. */
static int r_get(struct rd *r, const gpuenv_toml_table_t *t, const char *prefix, const char *key,
	int type, const gpuenv_toml_value_t **out)
{
	const gpuenv_toml_value_t *v = gpuenv_toml_get(t, key);

	*out = NULL;
	if (!v)
		return 0;
	int e = v->type == type ? 0 : gpuenv_toml_expect(&r->doc, v, type, rwh(r, prefix, key));
	if (!e)
		*out = v;
	return e;
}

static int r_cstr(struct rd *r, const gpuenv_toml_value_t *v, const char *what, const char **out)
{
	gpuenv_str_t s = v->u.str;

	if (memchr(s.ptr, '\0', s.len))
		return bad(r->ctx, at_v(r, v), "'%s' holds a NUL character", what);
	if (!(*out = gpuenv_arena_strndup(r->arena, s.ptr, s.len)))
		return gpuenv_oom(r->ctx, "reading the lock");
	return 0;
}

/* An optional (or required) string. */
static int r_str(struct rd *r, const gpuenv_toml_table_t *t, const char *prefix, const char *key,
	bool required, const char **out, const gpuenv_toml_value_t **vout)
{
	const gpuenv_toml_value_t *v;
	int e;

	*out = NULL;
	if (vout)
		*vout = NULL;
	if ((e = r_get(r, t, prefix, key, GPUENV_TOML_STRING, &v)))
		return e;
	if (!v) {
		if (!required)
			return 0;
		return bad(r->ctx, at_t(r, t), "%s: the required key '%s' is missing",
			*prefix ? prefix : "the lock", key);
	}
	if (vout)
		*vout = v;
	/* the key's name is formatted only for a message: a lock has
	 * thousands of strings */
	if (memchr(v->u.str.ptr, '\0', v->u.str.len))
		return r_cstr(r, v, rwh(r, prefix, key), out);
	if (!(*out = gpuenv_arena_strndup(r->arena, v->u.str.ptr, v->u.str.len)))
		return gpuenv_oom(r->ctx, "reading the lock");
	return 0;
}

static int r_strs(struct rd *r, const gpuenv_toml_table_t *t, const char *prefix, const char *key,
	size_t *n, const char *const **out, const gpuenv_toml_value_t ***vals)
{
	const gpuenv_toml_value_t *v;
	const char **items;
	char what[256];
	int e;

	*n = 0;
	*out = NULL;
	if ((e = r_get(r, t, prefix, key, GPUENV_TOML_ARRAY, &v)) || !v)
		return e;
	snprintf(what, sizeof(what), "%s", rwh(r, prefix, key));
	if (!(items = gpuenv_arena_calloc(r->arena, v->u.arr->len + 1, sizeof(*items))))
		return gpuenv_oom(r->ctx, "reading the lock");
	for (uint32_t i = 0; i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *it = v->u.arr->items[i];
		char iw[280];
		if (it->type == GPUENV_TOML_STRING && !memchr(it->u.str.ptr, '\0', it->u.str.len)) {
			if (!(items[i] = gpuenv_arena_strndup(r->arena, it->u.str.ptr, it->u.str.len)))
				return gpuenv_oom(r->ctx, "reading the lock");
			continue;
		}
		snprintf(iw, sizeof(iw), "%s[%u]", what, i);
		if ((e = gpuenv_toml_expect(&r->doc, it, GPUENV_TOML_STRING, iw)) ||
			(e = r_cstr(r, it, iw, &items[i])))
			return e;
	}
	if (vals)
		*vals = (const gpuenv_toml_value_t **)v->u.arr->items;
	*n = v->u.arr->len;
	*out = items;
	return 0;
}

/* The last component of a URL (percent-decoded: the PyTorch index writes
 * "torch-2.8.0%2Bcu128-...whl") or a path; query and fragment dropped.
 * NULL when there is none or on -ENOMEM (told apart by ctx->err). */
static const char *last_component(struct rd *r, const char *s, bool url)
{
	size_t n = url ? strcspn(s, "?#") : strlen(s);
	size_t b = n, k = 0;
	char *out;

	while (b && s[b - 1] != '/' && (url || s[b - 1] != '\\'))
		b--;
	if (b == n)
		return NULL;
	if (!(out = gpuenv_arena_alloc(r->arena, n - b + 1))) {
		gpuenv_oom(r->ctx, "reading the lock");
		return NULL;
	}
	for (size_t i = b; i < n; i++) {
		int hi, lo;
		if (url && s[i] == '%' && i + 2 < n &&
			(hi = gpuenv_hex_digit(s[i + 1])) >= 0 && (lo = gpuenv_hex_digit(s[i + 2])) >= 0 &&
			(hi || lo)) {
			out[k++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[k++] = s[i];
		}
	}
	out[k] = '\0';
	return out;
}

static const char *const wheel_keys[] = { "name", "upload-time", "url", "path", "size", "hashes", NULL };
static const char *const archive_keys[] = { "url", "path", "size", "upload-time", "hashes",
	"subdirectory", NULL };

static int r_file(struct rd *r, const gpuenv_toml_value_t *tv, const char *what, int kind,
	const char *pkg, gpuenv_lock_file_t *f, const char **subdir)
{
	const gpuenv_toml_value_t *v, *namev;
	const gpuenv_toml_table_t *t;
	char pre[160];
	int e;

	snprintf(pre, sizeof(pre), "%s", what);
	if ((e = gpuenv_toml_expect(&r->doc, tv, GPUENV_TOML_TABLE, pre)))
		return e;
	t = tv->u.tab;
	memset(f, 0, sizeof(*f));
	f->size = -1;
	if ((e = r_keys(r, t, pre, kind == F_ARCHIVE ? archive_keys : wheel_keys, false)))
		return e;
	if ((e = r_str(r, t, pre, "url", false, &f->url, NULL)) ||
		(e = r_str(r, t, pre, "path", false, &f->path, NULL)))
		return e;
	if (!f->url && !f->path)
		return bad(r->ctx, at_v(r, tv), "'%s' needs a url or a path", pre);
	if (kind != F_ARCHIVE) {
		if ((e = r_str(r, t, pre, "name", false, &f->name, &namev)))
			return e;
		if (f->name && !f->name[0])
			return bad(r->ctx, at_v(r, namev), "'%s' is empty", rwh(r, pre, "name"));
		if (!f->name) {
			gpuenv_error_clear(r->ctx);
			f->name = f->url ? last_component(r, f->url, true) : last_component(r, f->path, false);
			if (!f->name && r->ctx->err.code == -ENOMEM)
				return -ENOMEM;
			if (!f->name)
				return bad(r->ctx, at_v(r, tv), "'%s': no name and none in its url or path", pre);
		}
		if (kind == F_WHEEL &&
			(e = check_wheel_name(r->ctx, &r->scratch, at_v(r, namev ? namev : tv),
				 rwh(r, pre, "name"), f->name, pkg)))
			return e;
	}
	if ((e = r_get(r, t, pre, "size", GPUENV_TOML_INTEGER, &v)))
		return e;
	if (v) {
		if (v->u.i < 0)
			return bad(r->ctx, at_v(r, v), "'%s' must not be negative", rwh(r, pre, "size"));
		f->size = v->u.i;
	}
	if ((e = r_get(r, t, pre, "upload-time", GPUENV_TOML_DATETIME, &v)))
		return e;
	if (v && (e = r_cstr(r, v, rwh(r, pre, "upload-time"), &f->upload_time)))
		return e;
	if (kind == F_ARCHIVE && (e = r_str(r, t, pre, "subdirectory", false, subdir, NULL)))
		return e;
	if ((e = r_get(r, t, pre, "hashes", GPUENV_TOML_TABLE, &v)))
		return e;
	if (!v || !v->u.tab->len) {
		bad(r->ctx, v ? at_v(r, v) : at_v(r, tv), "'%s' has no hash: PEP 751 requires one for every file", pre);
		return gpuenv_hint(r->ctx, "add hashes = { sha256 = \"...\" }");
	}
	const gpuenv_toml_table_t *h = v->u.tab;
	const char **others = gpuenv_arena_calloc(r->arena, h->len, sizeof(*others));
	if (!others)
		return gpuenv_oom(r->ctx, "reading the lock");
	for (uint32_t i = 0; i < h->len; i++) {
		const gpuenv_toml_kv_t *kv = h->items[i];
		char hw[256];
		const char *val;
		snprintf(hw, sizeof(hw), "%s.hashes.%.*s", pre, (int)(kv->key.len > 32 ? 32 : kv->key.len),
			kv->key.ptr);
		if ((e = gpuenv_toml_expect(&r->doc, &kv->val, GPUENV_TOML_STRING, hw)) ||
			(e = r_cstr(r, &kv->val, hw, &val)))
			return e;
		if (gpuenv_str_eq_cstr(kv->key, "sha256")) {
			if ((e = check_sha256(r->ctx, at_v(r, &kv->val), hw, val)))
				return e;
			f->sha256 = val;
			continue;
		}
		if (!is_algo(kv->key.ptr, kv->key.len))
			return bad(r->ctx, (struct loc){ r->doc.file, kv->line, kv->col },
				"'%s.hashes': '%.40s' is not a hash algorithm name", pre,
				gpuenv_arena_strndup(&r->scratch, kv->key.ptr, kv->key.len > 40 ? 40 : kv->key.len));
		if (!val[0])
			return bad(r->ctx, at_v(r, &kv->val), "'%s' is empty", hw);
		gpuenv_str_t s = gpuenv_arena_printf(r->arena, "%.*s=%s", GPUENV_STR_ARG(kv->key), val);
		if (!s.ptr)
			return gpuenv_oom(r->ctx, "reading the lock");
		others[f->nother_hashes++] = s.ptr;
	}
	f->other_hashes = f->nother_hashes ? others : NULL;
	return 0;
}

static const char *const package_keys[] = { "name", "version", "marker", "requires-python",
	"dependencies", "vcs", "directory", "archive", "index", "sdist", "wheels",
	"attestation-identities", "tool", NULL };

static int r_package(struct rd *r, const gpuenv_toml_value_t *pv, size_t idx, gpuenv_lock_package_t *p)
{
	gpuenv_ctx_t *ctx = r->ctx;
	const gpuenv_toml_value_t *v, *namev, *verv, *mv, *rpv;
	const gpuenv_toml_table_t *t;
	char pre[64];
	int e;

	snprintf(pre, sizeof(pre), "packages[%zu]", idx);
	if ((e = gpuenv_toml_expect(&r->doc, pv, GPUENV_TOML_TABLE, pre)))
		return e;
	t = pv->u.tab;
	memset(p, 0, sizeof(*p));
	p->line = pv->line;
	if ((e = r_keys(r, t, pre, package_keys, false)))
		return e;
	if ((e = r_str(r, t, pre, "name", true, &p->name, &namev)) ||
		(e = check_name(ctx, at_v(r, namev), rwh(r, pre, "name"), p->name)))
		return e;
	if ((e = r_str(r, t, pre, "version", false, &p->version, &verv)) ||
		(p->version && (e = check_version(ctx, &r->scratch, at_v(r, verv), rwh(r, pre, "version"),
					p->version, NULL))))
		return e;
	if ((e = r_str(r, t, pre, "marker", false, &p->marker, &mv)) ||
		(p->marker && (e = check_marker(ctx, &r->scratch, at_v(r, mv), rwh(r, pre, "marker"), p->marker))))
		return e;
	if ((e = r_str(r, t, pre, "requires-python", false, &p->requires_python, &rpv)) ||
		(p->requires_python && (e = check_specset(ctx, &r->scratch, at_v(r, rpv),
						rwh(r, pre, "requires-python"), p->requires_python))))
		return e;
	if ((e = r_str(r, t, pre, "index", false, &p->index, NULL)))
		return e;

	/* dependencies: tables that pick another package entry; PEP 751 lets
	 * them use any of a package's keys, gpuenv keeps name and version */
	if ((e = r_get(r, t, pre, "dependencies", GPUENV_TOML_ARRAY, &v)))
		return e;
	if (v && v->u.arr->len) {
		gpuenv_lock_dep_t *deps = gpuenv_arena_calloc(r->arena, v->u.arr->len, sizeof(*deps));
		if (!deps)
			return gpuenv_oom(ctx, "reading the lock");
		for (uint32_t i = 0; i < v->u.arr->len; i++) {
			const gpuenv_toml_value_t *dv = v->u.arr->items[i], *dn, *dver;
			char dw[128];
			snprintf(dw, sizeof(dw), "%s.dependencies[%u]", pre, i);
			if ((e = gpuenv_toml_expect(&r->doc, dv, GPUENV_TOML_TABLE, dw)) ||
				(e = r_keys(r, dv->u.tab, dw, package_keys, false)) ||
				(e = r_str(r, dv->u.tab, dw, "name", true, &deps[i].name, &dn)) ||
				(e = check_name(ctx, at_v(r, dn), rwh(r, dw, "name"), deps[i].name)) ||
				(e = r_str(r, dv->u.tab, dw, "version", false, &deps[i].version, &dver)) ||
				(deps[i].version && (e = check_version(ctx, &r->scratch, at_v(r, dver),
							     rwh(r, dw, "version"), deps[i].version, NULL))))
				return e;
		}
		qsort(deps, v->u.arr->len, sizeof(*deps), cmp_dep);
		p->deps = deps;
		p->ndeps = v->u.arr->len;
	}

	if ((e = r_get(r, t, pre, "vcs", GPUENV_TOML_TABLE, &v)))
		return e;
	if (v) {
		static const char *const vcs_keys[] = { "type", "url", "path", "requested-revision",
			"commit-id", "subdirectory", NULL };
		gpuenv_lock_vcs_t *vc = gpuenv_arena_calloc(r->arena, 1, sizeof(*vc));
		char vw[128];
		snprintf(vw, sizeof(vw), "%s.vcs", pre);
		if (!vc)
			return gpuenv_oom(ctx, "reading the lock");
		if ((e = r_keys(r, v->u.tab, vw, vcs_keys, false)) ||
			(e = r_str(r, v->u.tab, vw, "type", true, &vc->type, NULL)) ||
			(e = r_str(r, v->u.tab, vw, "url", false, &vc->url, NULL)) ||
			(e = r_str(r, v->u.tab, vw, "path", false, &vc->path, NULL)) ||
			(e = r_str(r, v->u.tab, vw, "requested-revision", false, &vc->requested_revision, NULL)) ||
			(e = r_str(r, v->u.tab, vw, "commit-id", true, &vc->commit_id, NULL)) ||
			(e = r_str(r, v->u.tab, vw, "subdirectory", false, &p->subdirectory, NULL)))
			return e;
		if (!vc->url && !vc->path)
			return bad(ctx, at_v(r, v), "'%s' needs a url or a path", vw);
		p->vcs = vc;
	}
	if ((e = r_get(r, t, pre, "directory", GPUENV_TOML_TABLE, &v)))
		return e;
	if (v) {
		static const char *const dir_keys[] = { "path", "editable", "subdirectory", NULL };
		const gpuenv_toml_value_t *ev;
		char dw[128];
		snprintf(dw, sizeof(dw), "%s.directory", pre);
		if ((e = r_keys(r, v->u.tab, dw, dir_keys, false)) ||
			(e = r_str(r, v->u.tab, dw, "path", true, &p->directory, NULL)) ||
			(e = r_get(r, v->u.tab, dw, "editable", GPUENV_TOML_BOOL, &ev)))
			return e;
		p->editable = ev && ev->u.b;
		if (p->subdirectory)
			return bad(ctx, at_v(r, v), "%s: a subdirectory for two sources", pre);
		if ((e = r_str(r, v->u.tab, dw, "subdirectory", false, &p->subdirectory, NULL)))
			return e;
	}
	if ((e = r_get(r, t, pre, "archive", GPUENV_TOML_TABLE, &v)))
		return e;
	if (v) {
		gpuenv_lock_file_t *f = gpuenv_arena_calloc(r->arena, 1, sizeof(*f));
		const char *sub = NULL;
		char aw[128];
		snprintf(aw, sizeof(aw), "%s.archive", pre);
		if (!f)
			return gpuenv_oom(ctx, "reading the lock");
		if ((e = r_file(r, v, aw, F_ARCHIVE, p->name, f, &sub)))
			return e;
		if (sub && p->subdirectory)
			return bad(ctx, at_v(r, v), "%s: a subdirectory for two sources", pre);
		if (sub)
			p->subdirectory = sub;
		p->archive = f;
	}
	if ((e = r_get(r, t, pre, "sdist", GPUENV_TOML_TABLE, &v)))
		return e;
	if (v) {
		gpuenv_lock_file_t *f = gpuenv_arena_calloc(r->arena, 1, sizeof(*f));
		char sw[128];
		snprintf(sw, sizeof(sw), "%s.sdist", pre);
		if (!f)
			return gpuenv_oom(ctx, "reading the lock");
		if ((e = r_file(r, v, sw, F_SDIST, p->name, f, NULL)))
			return e;
		p->sdist = f;
	}
	if ((e = r_get(r, t, pre, "wheels", GPUENV_TOML_ARRAY, &v)))
		return e;
	if (v && v->u.arr->len) {
		gpuenv_lock_file_t *wheels = gpuenv_arena_calloc(r->arena, v->u.arr->len, sizeof(*wheels));
		if (!wheels)
			return gpuenv_oom(ctx, "reading the lock");
		for (uint32_t i = 0; i < v->u.arr->len; i++) {
			char ww[128];
			snprintf(ww, sizeof(ww), "%s.wheels[%u]", pre, i);
			if ((e = r_file(r, v->u.arr->items[i], ww, F_WHEEL, p->name, &wheels[i], NULL)))
				return e;
		}
		qsort(wheels, v->u.arr->len, sizeof(*wheels), cmp_file);
		p->wheels = wheels;
		p->nwheels = v->u.arr->len;
	}
	/* attestation identities: checked, not kept */
	if ((e = r_get(r, t, pre, "attestation-identities", GPUENV_TOML_ARRAY, &v)))
		return e;
	for (uint32_t i = 0; v && i < v->u.arr->len; i++) {
		const char *kind;
		char aw[128];
		snprintf(aw, sizeof(aw), "%s.attestation-identities[%u]", pre, i);
		if ((e = gpuenv_toml_expect(&r->doc, v->u.arr->items[i], GPUENV_TOML_TABLE, aw)) ||
			(e = r_str(r, v->u.arr->items[i]->u.tab, aw, "kind", true, &kind, NULL)))
			return e;
	}
	if ((e = r_get(r, t, pre, "tool", GPUENV_TOML_TABLE, &v)))
		return e;
	if (v) {
		const gpuenv_toml_value_t *g;
		char tw[128];
		snprintf(tw, sizeof(tw), "%s.tool", pre);
		if ((e = r_get(r, v->u.tab, tw, "gpuenv", GPUENV_TOML_TABLE, &g)))
			return e;
		if (g) {
			static const char *const pkg_tool_keys[] = { "reason", NULL };
			snprintf(tw, sizeof(tw), "%s.tool.gpuenv", pre);
			if ((e = r_keys(r, g->u.tab, tw, pkg_tool_keys, true)) ||
				(e = r_str(r, g->u.tab, tw, "reason", false, &p->reason, NULL)))
				return e;
		}
	}
	return check_sources(ctx, at_v(r, pv), pre, p);
}

static int r_target(struct rd *r, gpuenv_lock_target_t *tg)
{
	static const char *const keys[] = { "target", "origin", "gpu", "compute-capability", "driver",
		"cuda", "python", "platform", "backend", "backend-reason", "groups", "extras",
		"inputs-hash", "kb-date", NULL };
	static const char pre[] = "tool.gpuenv";
	const gpuenv_toml_value_t *tool, *g;
	const gpuenv_toml_table_t *t;
	int e;

	if ((e = r_get(r, r->doc.root, "", "tool", GPUENV_TOML_TABLE, &tool)) || !tool)
		return e;
	if ((e = r_get(r, tool->u.tab, "tool", "gpuenv", GPUENV_TOML_TABLE, &g)) || !g)
		return e;
	t = g->u.tab;
	if ((e = r_keys(r, t, pre, keys, true)))
		return e;
	if ((e = r_str(r, t, pre, "target", false, &tg->name, NULL)) ||
		(e = r_str(r, t, pre, "origin", false, &tg->origin, NULL)) ||
		(e = r_str(r, t, pre, "gpu", false, &tg->gpu, NULL)) ||
		(e = r_str(r, t, pre, "compute-capability", false, &tg->compute_capability, NULL)) ||
		(e = r_str(r, t, pre, "driver", false, &tg->driver, NULL)) ||
		(e = r_str(r, t, pre, "cuda", false, &tg->cuda, NULL)) ||
		(e = r_str(r, t, pre, "python", false, &tg->python, NULL)) ||
		(e = r_str(r, t, pre, "platform", false, &tg->platform, NULL)) ||
		(e = r_str(r, t, pre, "backend", false, &tg->backend, NULL)) ||
		(e = r_str(r, t, pre, "backend-reason", false, &tg->backend_reason, NULL)) ||
		(e = r_strs(r, t, pre, "groups", &tg->ngroups, &tg->groups, NULL)) ||
		(e = r_strs(r, t, pre, "extras", &tg->nextras, &tg->extras, NULL)) ||
		(e = r_str(r, t, pre, "inputs-hash", false, &tg->inputs_hash, NULL)) ||
		(e = r_str(r, t, pre, "kb-date", false, &tg->kb_date, NULL)))
		return e;
	return 0;
}

static const char *const top_keys[] = { "lock-version", "environments", "requires-python",
	"extras", "dependency-groups", "default-groups", "created-by", "packages", "tool", NULL };

static int read_doc(struct rd *r, gpuenv_lock_t *out)
{
	gpuenv_ctx_t *ctx = r->ctx;
	const gpuenv_toml_table_t *root = r->doc.root;
	const gpuenv_toml_value_t *v, **envv;
	int e;

	/* lock-version first: it decides how strict the rest is */
	if ((e = r_str(r, root, "", "lock-version", true, &out->lock_version, &v)) ||
		(e = check_lock_version(ctx, at_v(r, v), out->lock_version, &r->minor)))
		return e;
	if ((e = r_keys(r, root, "", top_keys, false)))
		return e;
	if ((e = r_str(r, root, "", "created-by", true, &out->created_by, &v)))
		return e;
	if (!out->created_by[0])
		return bad(ctx, at_v(r, v), "'created-by' is empty: it names the tool that wrote the lock");
	if ((e = r_str(r, root, "", "requires-python", false, &out->requires_python, &v)) ||
		(out->requires_python &&
			(e = check_specset(ctx, &r->scratch, at_v(r, v), "requires-python", out->requires_python))))
		return e;
	if ((e = r_strs(r, root, "", "environments", &out->nenvironments, &out->environments, &envv)))
		return e;
	for (size_t i = 0; i < out->nenvironments; i++)
		if ((e = check_marker(ctx, &r->scratch, at_v(r, envv[i]), "environments", out->environments[i])))
			return e;
	if ((e = r_strs(r, root, "", "extras", &out->nextras, &out->extras, NULL)) ||
		(e = r_strs(r, root, "", "dependency-groups", &out->ngroups, &out->dependency_groups, NULL)) ||
		(e = r_strs(r, root, "", "default-groups", &out->ndefault_groups, &out->default_groups, NULL)))
		return e;

	v = gpuenv_toml_get(root, "packages");
	if (!v)
		return bad(ctx, (struct loc){ r->doc.file, 1, 1 }, "the lock has no [[packages]]: PEP 751 requires the array (it may be empty)");
	if ((e = gpuenv_toml_expect(&r->doc, v, GPUENV_TOML_ARRAY, "packages")))
		return e;
	size_t n = v->u.arr->len;
	gpuenv_lock_package_t *pkgs = gpuenv_arena_calloc(&r->scratch, n ? n : 1, sizeof(*pkgs));
	if (!pkgs)
		return gpuenv_oom(ctx, "reading the lock");
	for (size_t i = 0; i < n; i++)
		if ((e = r_package(r, v->u.arr->items[i], i, &pkgs[i])))
			return e;
	struct pkg_key *order = sort_packages(ctx, &r->scratch, pkgs, n);
	gpuenv_lock_package_t *sorted = gpuenv_arena_calloc(r->arena, n ? n : 1, sizeof(*sorted));
	size_t first, second;
	if (!order || !sorted)
		return gpuenv_oom(ctx, "reading the lock");
	if (unmarked_twice(order, n, &first, &second))
		return twice(ctx, at_v(r, v->u.arr->items[second]), pkgs[second].name, first, second,
			v->u.arr->items[first]->line);
	for (size_t i = 0; i < n; i++)
		sorted[i] = *order[i].p;
	out->packages = sorted;
	out->npackages = n;
	return r_target(r, &out->target);
}

int gpuenv_pylock_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_str_t text, gpuenv_lock_t *out)
{
	struct rd r = { .ctx = ctx, .arena = arena };
	int e;

	memset(out, 0, sizeof(*out));
	if (text.len > GPUENV_PYLOCK_MAX_SIZE)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0,
			"the lock file is %zu bytes; gpuenv reads locks up to %zu MiB", text.len,
			GPUENV_PYLOCK_MAX_SIZE >> 20);
	if ((e = gpuenv_toml_doc_init(&r.doc, ctx, path ? path : "pylock.toml")))
		return e;
	r.doc.max_size = GPUENV_PYLOCK_MAX_SIZE;
	gpuenv_arena_init(&r.scratch, ctx, 0);
	e = gpuenv_toml_parse(&r.doc, text.ptr ? text.ptr : "", text.len);
	if (!e)
		e = read_doc(&r, out);
	if (e)
		memset(out, 0, sizeof(*out));
	if (e == -ENOMEM && ctx->err.code != -ENOMEM)
		gpuenv_oom(ctx, "reading a lock");
	gpuenv_arena_free(&r.scratch);
	gpuenv_toml_doc_free(&r.doc);
	return e;
}

/* ---- equality ---------------------------------------------------------------- */

static bool s_eq(const char *a, const char *b)
{
	return cmp_cstr(a, b) == 0;
}

static bool strs_eq(size_t na, const char *const *a, size_t nb, const char *const *b)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!s_eq(a[i], b[i]))
			return false;
	return true;
}

static bool file_eq(const gpuenv_lock_file_t *a, const gpuenv_lock_file_t *b)
{
	if (!a || !b)
		return a == b;
	return s_eq(a->name, b->name) && s_eq(a->url, b->url) && s_eq(a->path, b->path) &&
		a->size == b->size && s_eq(a->upload_time, b->upload_time) &&
		s_eq(a->sha256, b->sha256) &&
		strs_eq(a->nother_hashes, a->other_hashes, b->nother_hashes, b->other_hashes);
}

static bool vcs_eq(const gpuenv_lock_vcs_t *a, const gpuenv_lock_vcs_t *b)
{
	if (!a || !b)
		return a == b;
	return s_eq(a->type, b->type) && s_eq(a->url, b->url) && s_eq(a->path, b->path) &&
		s_eq(a->requested_revision, b->requested_revision) && s_eq(a->commit_id, b->commit_id);
}

static bool package_eq(const gpuenv_lock_package_t *a, const gpuenv_lock_package_t *b)
{
	if (!s_eq(a->name, b->name) || !s_eq(a->version, b->version) || !s_eq(a->marker, b->marker) ||
		!s_eq(a->requires_python, b->requires_python) || !s_eq(a->index, b->index) ||
		a->ndeps != b->ndeps || a->nwheels != b->nwheels || !file_eq(a->sdist, b->sdist) ||
		!s_eq(a->directory, b->directory) || a->editable != b->editable ||
		!s_eq(a->reason, b->reason) || !file_eq(a->archive, b->archive) ||
		!vcs_eq(a->vcs, b->vcs) || !s_eq(a->subdirectory, b->subdirectory))
		return false;
	for (size_t i = 0; i < a->ndeps; i++)
		if (!s_eq(a->deps[i].name, b->deps[i].name) || !s_eq(a->deps[i].version, b->deps[i].version))
			return false;
	for (size_t i = 0; i < a->nwheels; i++)
		if (!file_eq(&a->wheels[i], &b->wheels[i]))
			return false;
	return true;
}

static bool target_eq(const gpuenv_lock_target_t *a, const gpuenv_lock_target_t *b)
{
	return s_eq(a->name, b->name) && s_eq(a->origin, b->origin) && s_eq(a->gpu, b->gpu) &&
		s_eq(a->compute_capability, b->compute_capability) && s_eq(a->driver, b->driver) &&
		s_eq(a->cuda, b->cuda) && s_eq(a->python, b->python) && s_eq(a->platform, b->platform) &&
		s_eq(a->backend, b->backend) && s_eq(a->backend_reason, b->backend_reason) &&
		strs_eq(a->ngroups, a->groups, b->ngroups, b->groups) &&
		strs_eq(a->nextras, a->extras, b->nextras, b->extras) &&
		s_eq(a->inputs_hash, b->inputs_hash) && s_eq(a->kb_date, b->kb_date);
}

bool gpuenv_pylock_eq(const gpuenv_lock_t *a, const gpuenv_lock_t *b)
{
	if (!s_eq(a->lock_version, b->lock_version) || !s_eq(a->created_by, b->created_by) ||
		!s_eq(a->requires_python, b->requires_python) ||
		!strs_eq(a->nenvironments, a->environments, b->nenvironments, b->environments) ||
		!strs_eq(a->nextras, a->extras, b->nextras, b->extras) ||
		!strs_eq(a->ngroups, a->dependency_groups, b->ngroups, b->dependency_groups) ||
		!strs_eq(a->ndefault_groups, a->default_groups, b->ndefault_groups, b->default_groups) ||
		a->npackages != b->npackages || !target_eq(&a->target, &b->target))
		return false;
	for (size_t i = 0; i < a->npackages; i++)
		if (!package_eq(&a->packages[i], &b->packages[i]))
			return false;
	return true;
}

/* The last part of a path or URL, [*b, *b + *n) without query or fragment. */
static void file_part(const gpuenv_lock_file_t *f, const char **b, size_t *n)
{
	const char *u = f->name ? f->name : f->path ? f->path : f->url ? f->url : "";
	size_t e = f->name ? strlen(u) : strcspn(u, "?#");

	*b = u;
	for (size_t i = 0; i < e; i++)
		if (u[i] == '/')
			*b = u + i + 1;
	*n = e - (size_t)(*b - u);
}

const char *gpuenv_lock_file_name(gpuenv_arena_t *arena, const gpuenv_lock_file_t *f)
{
	const char *b;
	size_t n;

	file_part(f, &b, &n);
	return gpuenv_arena_strndup(arena, b, n);
}

bool gpuenv_lock_file_is_wheel(const gpuenv_lock_file_t *f)
{
	const char *b;
	size_t n;

	file_part(f, &b, &n);
	return n > 4 && !strncasecmp(b + n - 4, ".whl", 4);
}
