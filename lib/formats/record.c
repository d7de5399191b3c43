/* RECORD: the CSV list of a wheel's files with their hashes and sizes.
 *
 * Read as Python's csv module (excel dialect) reads what csv.writer wrote:
 * ',' separates, '"' quotes, '""' inside quotes is one '"', quoted fields may
 * hold line breaks, rows end with LF or CRLF.  We are stricter than csv in
 * one place: text after a closing quote is an error, not appended. */
#include "gpuenv/metadata.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int oom(gpuenv_ctx_t *ctx)
{
	return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
}

/* ---- base64, urlsafe alphabet ---- */

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

int gpuenv_b64url_encode(const unsigned char *p, size_t n, gpuenv_buf_t *out)
{
	char q[4];
	int r;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		size_t k = n - i >= 3 ? 3 : n - i;
		if (k > 1)
			v |= (uint32_t)p[i + 1] << 8;
		if (k > 2)
			v |= p[i + 2];
		q[0] = b64url[(v >> 18) & 63];
		q[1] = b64url[(v >> 12) & 63];
		q[2] = b64url[(v >> 6) & 63];
		q[3] = b64url[v & 63];
		if ((r = gpuenv_buf_append(out, q, k + 1)) != 0)
			return r;
	}
	return 0;
}

bool gpuenv_b64url_decode(gpuenv_str_t s, unsigned char *out, size_t max, size_t *outlen)
{
	uint32_t acc = 0;
	size_t bits = 0, o = 0, n = s.len;

	/* padding is optional, but only at the end and only as much as fits */
	while (n && s.ptr[n - 1] == '=')
		n--;
	if (s.len - n > 2 || (s.len != n && s.len % 4) || n % 4 == 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		int v = b64val((unsigned char)s.ptr[i]);
		if (v < 0)
			return false;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == max)
				return false;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* leftover bits must be zero (canonical encoding) */
	if (acc)
		return false;
	*outlen = o;
	return true;
}

/* ---- CSV ---- */

struct csv {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *file;
	gpuenv_str_t text;
	size_t pos;
	unsigned line;
};

/* Read one field; *end_row is set when the row ended after it. */
static int csv_field(struct csv *c, gpuenv_str_t *out, bool *end_row)
{
	const char *p = c->text.ptr;
	size_t n = c->text.len, i = c->pos;

	*end_row = false;
	if (i < n && p[i] == '"') {
		size_t start = ++i, quotes = 0;
		unsigned l0 = c->line;
		for (;;) {
			if (i >= n)
				return gpuenv_fail(c->ctx, GPUENV_ESYNTAX, c->file, l0, 0,
					"a quoted field is not closed");
			if (p[i] == '"') {
				if (i + 1 < n && p[i + 1] == '"') {
					quotes++;
					i += 2;
					continue;
				}
				break;
			}
			if (p[i] == '\n')
				c->line++;
			i++;
		}
		size_t len = i - start;
		i++; /* the closing quote */
		if (quotes) {
			char *v = gpuenv_arena_alloc(c->arena, len - quotes + 1);
			size_t o = 0;
			if (!v)
				return oom(c->ctx);
			for (size_t k = start; k < start + len; k++) {
				v[o++] = p[k];
				if (p[k] == '"')
					k++;
			}
			v[o] = '\0';
			*out = gpuenv_str_n(v, o);
		} else {
			*out = gpuenv_str_n(p + start, len);
		}
		if (i < n && p[i] != ',' && p[i] != '\n' && p[i] != '\r')
			return gpuenv_fail(c->ctx, GPUENV_ESYNTAX, c->file, c->line, 0,
				"text after a closing quote");
	} else {
		size_t start = i;
		while (i < n && p[i] != ',' && p[i] != '\n' && p[i] != '\r')
			i++;
		*out = gpuenv_str_n(p + start, i - start);
	}
	if (i < n && p[i] == ',') {
		c->pos = i + 1;
		return 0;
	}
	/* end of row: \n, \r\n, a lone \r, or the end of the text */
	if (i < n && p[i] == '\r')
		i++;
	if (i < n && p[i] == '\n')
		i++;
	c->pos = i;
	*end_row = true;
	return 0;
}

static bool is_lower_alnum(gpuenv_str_t s)
{
	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char ch = s.ptr[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
			return false;
	}
	return true;
}

static size_t digest_size(gpuenv_str_t algo)
{
	static const struct {
		const char *name;
		size_t len;
	} known[] = { { "md5", 16 }, { "sha1", 20 }, { "sha224", 28 }, { "sha256", 32 },
		{ "sha384", 48 }, { "sha512", 64 }, { "blake2b", 64 }, { "blake2s", 32 },
		{ "sha3_256", 32 }, { "sha3_384", 48 }, { "sha3_512", 64 } };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (gpuenv_str_eq_cstr(algo, known[i].name))
			return known[i].len;
	return 0;
}

int gpuenv_record_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_record_t *out)
{
	struct csv c = { ctx, arena, file ? file : "RECORD", text, 0, 1 };
	size_t cap = 1;
	int r;

	memset(out, 0, sizeof(*out));
	if (text.len > GPUENV_RECORD_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, c.file, 0, 0,
			"%zu bytes, over the %zu-byte limit", text.len, GPUENV_RECORD_MAX);
	/* rows <= line breaks + 1 */
	for (size_t i = 0; i < text.len; i++)
		cap += text.ptr[i] == '\n' || (text.ptr[i] == '\r' &&
						  (i + 1 == text.len || text.ptr[i + 1] != '\n'));
	if (cap > GPUENV_RECORD_ROWS_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, c.file, 0, 0, "more than %d rows",
			GPUENV_RECORD_ROWS_MAX);
	out->entries = gpuenv_arena_alloc(arena, cap * sizeof(*out->entries));
	if (!out->entries)
		return oom(ctx);

	while (c.pos < text.len) {
		gpuenv_str_t f[3];
		size_t nf = 0;
		unsigned line = c.line;
		bool end = false;
		size_t row_start = c.pos;

		while (!end) {
			gpuenv_str_t v;
			if ((r = csv_field(&c, &v, &end)) != 0)
				return r;
			if (nf < 3)
				f[nf] = v;
			nf++;
		}
		c.line++;
		/* csv.reader gives [] for a blank line: skip it */
		if (nf == 1 && !f[0].len && text.ptr[row_start] != '"')
			continue;
		if (nf != 3)
			return gpuenv_fail(ctx, GPUENV_ESYNTAX, c.file, line, 0,
				"expected 3 fields (path,hash,size), found %zu", nf);
		gpuenv_record_entry_t *e = &out->entries[out->n++];
		memset(e, 0, sizeof(*e));
		e->line = line;
		e->path = f[0];
		if (!f[0].len)
			return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 1, "empty path");
		if (f[1].len) {
			gpuenv_str_t algo, b64 = gpuenv_str_split(f[1], '=', &algo);
			size_t want;
			if (!b64.ptr || !is_lower_alnum(algo))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"hash '%.*s' is not ALGORITHM=DIGEST",
					(int)(f[1].len > 80 ? 80 : f[1].len), f[1].ptr);
			if (!gpuenv_b64url_decode(b64, e->digest, sizeof(e->digest), &e->digest_len))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"the %.*s digest is not urlsafe base64 of at most %d bytes",
					(int)(algo.len > 20 ? 20 : algo.len), algo.ptr,
					GPUENV_DIGEST_MAX);
			want = digest_size(algo);
			if (want && e->digest_len != want)
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"a %.*s digest has %zu bytes, not %zu", (int)algo.len, algo.ptr,
					e->digest_len, want);
			e->hash_algo = algo;
		}
		if (f[2].len) {
			if (!gpuenv_str_to_u64(f[2], &e->size))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, c.file, line, 0,
					"size '%.*s' is not a number",
					(int)(f[2].len > 40 ? 40 : f[2].len), f[2].ptr);
			e->has_size = true;
		}
	}
	return 0;
}

const gpuenv_record_entry_t *gpuenv_record_find(const gpuenv_record_t *rec, gpuenv_str_t path)
{
	for (size_t i = 0; i < rec->n; i++)
		if (gpuenv_str_eq(rec->entries[i].path, path))
			return &rec->entries[i];
	return NULL;
}

int gpuenv_record_check_path(gpuenv_ctx_t *ctx, gpuenv_str_t path)
{
	const char *why = NULL;
	size_t s = 0;

	if (!path.len)
		why = "is empty";
	else if (path.ptr[0] == '/')
		why = "is absolute";
	else if (memchr(path.ptr, '\\', path.len))
		why = "holds a backslash";
	else if (memchr(path.ptr, '\0', path.len))
		why = "holds a NUL byte";
	else if (path.len >= 2 && path.ptr[1] == ':' &&
		 ((path.ptr[0] >= 'a' && path.ptr[0] <= 'z') ||
			 (path.ptr[0] >= 'A' && path.ptr[0] <= 'Z')))
		why = "starts with a drive letter";
	for (size_t i = 0; !why && i <= path.len; i++) {
		if (i < path.len && path.ptr[i] != '/')
			continue;
		if (i - s == 2 && path.ptr[s] == '.' && path.ptr[s + 1] == '.')
			why = "has a '..' component";
		s = i + 1;
	}
	if (!why)
		return 0;
	return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0, "unsafe path '%.*s': it %s",
		(int)(path.len > 200 ? 200 : path.len), path.ptr, why);
}

/* Entries that cannot carry their own hash. */
static bool hash_exempt(gpuenv_str_t p)
{
	gpuenv_str_t base = p;
	for (size_t i = p.len; i > 0; i--)
		if (p.ptr[i - 1] == '/') {
			base = gpuenv_str_n(p.ptr + i, p.len - i);
			break;
		}
	if (gpuenv_str_endswith(p, ".pyc"))
		return true;
	if (base.ptr == p.ptr || !gpuenv_str_endswith(gpuenv_str_n(p.ptr, p.len - base.len - 1),
					     ".dist-info"))
		return false;
	return gpuenv_str_eq_cstr(base, "RECORD") || gpuenv_str_eq_cstr(base, "RECORD.jws") ||
		gpuenv_str_eq_cstr(base, "RECORD.p7s");
}

static uint64_t path_hash(gpuenv_str_t s)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < s.len; i++) {
		h ^= (unsigned char)s.ptr[i];
		h *= 1099511628211ull;
	}
	return h;
}

int gpuenv_record_validate(gpuenv_ctx_t *ctx, const char *file, const gpuenv_record_t *rec)
{
	size_t cap = 16;
	uint32_t *slots;
	int r = 0;

	file = file ? file : "RECORD";
	while (cap < rec->n * 2)
		cap *= 2;
	slots = gpuenv_calloc(ctx, cap, sizeof(*slots));
	if (!slots)
		return oom(ctx);
	for (size_t k = 0; k < rec->n && !r; k++) {
		const gpuenv_record_entry_t *e = &rec->entries[k];
		if (gpuenv_record_check_path(ctx, e->path)) {
			char msg[sizeof(ctx->err.msg)];
			snprintf(msg, sizeof(msg), "%s", ctx->err.msg);
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1, "%s", msg);
			break;
		}
		/* duplicates through an open-addressing set of row indexes */
		size_t i = (size_t)path_hash(e->path) & (cap - 1);
		while (slots[i]) {
			const gpuenv_record_entry_t *o = &rec->entries[slots[i] - 1];
			if (gpuenv_str_eq(o->path, e->path)) {
				r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1,
					"'%.*s' is listed twice (first on line %u)",
					(int)(e->path.len > 200 ? 200 : e->path.len), e->path.ptr,
					o->line);
				break;
			}
			i = (i + 1) & (cap - 1);
		}
		if (r)
			break;
		slots[i] = (uint32_t)(k + 1);
		if (hash_exempt(e->path))
			continue;
		if (!e->hash_algo.len || !e->has_size)
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1,
				"'%.*s' has no %s", (int)(e->path.len > 200 ? 200 : e->path.len),
				e->path.ptr, e->hash_algo.len ? "size" : "hash");
		else if (!gpuenv_str_eq_cstr(e->hash_algo, "sha256") &&
			 !gpuenv_str_eq_cstr(e->hash_algo, "sha384") &&
			 !gpuenv_str_eq_cstr(e->hash_algo, "sha512"))
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 1,
				"'%.*s': hash algorithm %.*s is not allowed (sha256 or stronger)",
				(int)(e->path.len > 200 ? 200 : e->path.len), e->path.ptr,
				(int)e->hash_algo.len, e->hash_algo.ptr);
	}
	gpuenv_free(ctx, slots);
	return r;
}

static int csv_put(gpuenv_buf_t *out, gpuenv_str_t s)
{
	int r;
	bool q = false;

	for (size_t i = 0; i < s.len && !q; i++)
		q = s.ptr[i] == ',' || s.ptr[i] == '"' || s.ptr[i] == '\r' || s.ptr[i] == '\n';
	if (!q)
		return gpuenv_buf_append(out, s.ptr, s.len);
	if ((r = gpuenv_buf_putc(out, '"')) != 0)
		return r;
	for (size_t i = 0; i < s.len; i++) {
		if (s.ptr[i] == '"' && (r = gpuenv_buf_putc(out, '"')) != 0)
			return r;
		if ((r = gpuenv_buf_putc(out, s.ptr[i])) != 0)
			return r;
	}
	return gpuenv_buf_putc(out, '"');
}

int gpuenv_record_format_entry(const gpuenv_record_entry_t *e, gpuenv_buf_t *out)
{
	int r;

	if ((r = csv_put(out, e->path)) != 0 || (r = gpuenv_buf_putc(out, ',')) != 0)
		return r;
	if (e->hash_algo.len) {
		if ((r = gpuenv_buf_append(out, e->hash_algo.ptr, e->hash_algo.len)) != 0 ||
			(r = gpuenv_buf_putc(out, '=')) != 0 ||
			(r = gpuenv_b64url_encode(e->digest, e->digest_len, out)) != 0)
			return r;
	}
	if ((r = gpuenv_buf_putc(out, ',')) != 0)
		return r;
	if (e->has_size && (r = gpuenv_buf_printf(out, "%llu", (unsigned long long)e->size)) != 0)
		return r;
	return gpuenv_buf_putc(out, '\n');
}
