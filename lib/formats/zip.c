/* A strict zip reader over an archive in memory (APPNOTE.TXT 6.3.x): the
 * end record (and zip64's), the central directory, each local header
 * checked against its central entry, names checked, data ranges checked for
 * overlap (the "overlapping files" zip bomb), caps, and extraction through
 * zlib with CRC-32 and size checked while inflating.  See gpuenv/zip.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include <libdeflate.h>

#include "gpuenv/zip.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define SIG_DESC 0x08074b50u

#define F_ENCRYPTED 0x0001u
#define F_DESCRIPTOR 0x0008u
#define F_STRONG 0x0040u

#define NAME_MAX_BYTES 4096
#define COMPONENT_MAX 255

static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The entry name as text for a message (escaped, cut at 200 bytes). */
static void ename(gpuenv_ctx_t *ctx, gpuenv_str_t name, char *out, size_t outsz)
{
	gpuenv_buf_t b;
	size_t n = name.len > 200 ? 200 : name.len;

	gpuenv_buf_init(&b, ctx, 1024);
	if (gpuenv_text_escape(&b, name.ptr, n, GPUENV_ESC_CONTROL) == 0 && b.data)
		snprintf(out, outsz, "%s%s", b.data, n < name.len ? "..." : "");
	else
		snprintf(out, outsz, "(a name that is not text)");
	gpuenv_buf_free(&b);
}

static int fail_entry(gpuenv_ctx_t *ctx, int code, const char *file, gpuenv_str_t name,
	const char *fmt, ...) GPUENV_PRINTF(5, 6);

static int fail_entry(gpuenv_ctx_t *ctx, int code, const char *file, gpuenv_str_t name,
	const char *fmt, ...)
{
	char en[300], why[400];
	va_list ap;

	ename(ctx, name, en, sizeof(en));
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return gpuenv_fail(ctx, code, file, 0, 0, "%s: %s", en, why);
}

static int fail_zip(gpuenv_ctx_t *ctx, const char *file, const char *what)
{
	return gpuenv_fail(ctx, GPUENV_EFORMAT, file, 0, 0, "not a readable wheel: %s", what);
}

int gpuenv_zip_check_name(gpuenv_ctx_t *ctx, const char *file, gpuenv_str_t name)
{
	const char *p = name.ptr;
	size_t n = name.len, start = 0;

	if (n == 0)
		return fail_entry(ctx, GPUENV_EFORMAT, file, name, "an entry with an empty name");
	if (n > NAME_MAX_BYTES)
		return fail_entry(ctx, GPUENV_EFORMAT, file, name, "a name of %zu bytes (at most %d)", n,
			NAME_MAX_BYTES);
	if (p[0] == '/')
		return fail_entry(ctx, GPUENV_EFORMAT, file, name, "an absolute path");
	if (n >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z')))
		return fail_entry(ctx, GPUENV_EFORMAT, file, name, "a path with a drive letter");
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\\')
			return fail_entry(ctx, GPUENV_EFORMAT, file, name, "a backslash in the path");
		if (c == 0)
			return fail_entry(ctx, GPUENV_EFORMAT, file, name, "a NUL byte in the path");
		if (c < 0x20 || c == 0x7f)
			return fail_entry(ctx, GPUENV_EFORMAT, file, name,
				"a control character in the path");
		size_t l = gpuenv_utf8_seq(p + i, n - i);
		if (!l)
			return fail_entry(ctx, GPUENV_EFORMAT, file, name, "a path that is not UTF-8");
		i += l;
	}
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != '/')
			continue;
		size_t cl = i - start;
		if (cl == 0)
			return fail_entry(ctx, GPUENV_EFORMAT, file, name, "an empty path component");
		if (cl == 1 && p[start] == '.')
			return fail_entry(ctx, GPUENV_EFORMAT, file, name, "a '.' path component");
		if (cl == 2 && p[start] == '.' && p[start + 1] == '.')
			return fail_entry(ctx, GPUENV_EFORMAT, file, name,
				"a '..' component (the path leaves the install folder)");
		if (cl > COMPONENT_MAX)
			return fail_entry(ctx, GPUENV_EFORMAT, file, name,
				"a path component of %zu bytes (at most %d)", cl, COMPONENT_MAX);
		start = i + 1;
	}
	return 0;
}

/* The zip64 extended information of an entry: the fields that are ~0 in
 * the fixed header, in the order usize, csize, lho. */
static int zip64_extra(const unsigned char *x, size_t xl, uint64_t *usize, uint64_t *csize,
	uint64_t *lho, bool *bad)
{
	const unsigned char *end = x + xl;

	*bad = false;
	while (x + 4 <= end) {
		size_t id = le16(x), sz = le16(x + 2);
		const unsigned char *v = x + 4, *ve = v + sz;
		if (ve > end) {
			*bad = true;
			return 0;
		}
		if (id == 1) {
			if (*usize == 0xffffffffu) {
				if (v + 8 > ve)
					goto short_;
				*usize = le64(v);
				v += 8;
			}
			if (*csize == 0xffffffffu) {
				if (v + 8 > ve)
					goto short_;
				*csize = le64(v);
				v += 8;
			}
			if (lho && *lho == 0xffffffffu) {
				if (v + 8 > ve)
					goto short_;
				*lho = le64(v);
			}
			return 1;
		}
		x = ve;
	}
	return 0;
short_:
	*bad = true;
	return 0;
}

typedef struct span {
	uint64_t start, end;
	size_t idx;
} span_t;

static int cmp_span(const void *a, const void *b)
{
	const span_t *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort idx[0..n) by entry name: a merge sort (stable, no global for a
 * comparison function to reach the entries through). */
static void sort_names(const gpuenv_zip_entry_t *e, size_t *idx, size_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	sort_names(e, idx, tmp, h);
	sort_names(e, idx + h, tmp, n - h);
	if (gpuenv_str_cmp(e[idx[h - 1]].name, e[idx[h]].name) <= 0)
		return;
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = gpuenv_str_cmp(e[idx[i]].name, e[idx[j]].name) <= 0 ? idx[i++] : idx[j++];
	while (i < h)
		tmp[k++] = idx[i++];
	while (j < n)
		tmp[k++] = idx[j++];
	memcpy(idx, tmp, n * sizeof(*idx));
}

static void limits_fill(gpuenv_zip_limits_t *l, const gpuenv_zip_limits_t *in)
{
	memset(l, 0, sizeof(*l));
	if (in)
		*l = *in;
	if (!l->max_entries)
		l->max_entries = 200000;
	if (!l->max_total)
		l->max_total = (uint64_t)16 << 30;
	if (!l->max_entry)
		l->max_entry = (uint64_t)8 << 30;
	if (!l->max_ratio)
		l->max_ratio = 1000;
}

int gpuenv_zip_end(gpuenv_ctx_t *ctx, const char *file, const void *tail, size_t n,
	uint64_t tail_off, bool exact, gpuenv_zip_end_t *out)
{
	const unsigned char *d = tail;
	size_t p;

	memset(out, 0, sizeof(*out));
	if (n < 22)
		return fail_zip(ctx, file, "shorter than a zip's end record");
	for (p = n - 22;; p--) {
		if (le32(d + p) == SIG_EOCD &&
			(exact ? p + 22 + le16(d + p + 20) == n : p + 22 + le16(d + p + 20) <= n))
			break;
		if (p == 0 || n - p >= 22 + 65535)
			return fail_zip(ctx, file, exact ? "no end-of-central-directory record at the end"
						       : "no end-of-central-directory record");
	}
	if (le16(d + p + 4) != 0 || le16(d + p + 6) != 0)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, file, 0, 0,
			"a zip split over several disks");
	out->count = le16(d + p + 10);
	out->cd_size = le32(d + p + 12);
	out->cd_off = le32(d + p + 16);
	out->end_at = tail_off + p;
	if (out->count == 0xffff || out->cd_size == 0xffffffffu || out->cd_off == 0xffffffffu) {
		/* zip64: the locator sits just before the end record */
		if (p < 20 || le32(d + p - 20) != SIG_LOC64)
			return fail_zip(ctx, file, "a zip64 end record without its locator");
		out->end64_at = le64(d + p - 12);
		if (out->end64_at > out->end_at - 20 || out->end_at - 20 - out->end64_at < 56)
			return fail_zip(ctx, file, "a bad zip64 end record");
	}
	return 0;
}

int gpuenv_zip_end64(gpuenv_ctx_t *ctx, const char *file, const void *rec, size_t n,
	gpuenv_zip_end_t *out)
{
	const unsigned char *d = rec;

	if (n < 56 || le32(d) != SIG_EOCD64)
		return fail_zip(ctx, file, "a bad zip64 end record");
	if (le32(d + 16) != 0 || le32(d + 20) != 0)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, file, 0, 0,
			"a zip split over several disks");
	out->count = le64(d + 32);
	out->cd_size = le64(d + 40);
	out->cd_off = le64(d + 48);
	out->end_at = out->end64_at;
	out->end64_at = 0;
	return 0;
}

int gpuenv_zip_cd_entry(gpuenv_ctx_t *ctx, const char *file, const void *p, size_t n,
	gpuenv_zip_entry_t *e, size_t *len)
{
	const unsigned char *c = p;
	bool bad;

	memset(e, 0, sizeof(*e));
	if (n < 46 || le32(c) != SIG_CENTRAL)
		return fail_zip(ctx, file, "a central directory entry is missing or cut short");
	size_t nl = le16(c + 28), xl = le16(c + 30), cl = le16(c + 32);
	if (n - 46 < nl + xl + cl)
		return fail_zip(ctx, file, "a central directory entry runs past its end");
	e->name = gpuenv_str_n((const char *)c + 46, nl);
	e->flags = (uint16_t)le16(c + 8);
	e->method = (uint16_t)le16(c + 10);
	e->crc = le32(c + 16);
	e->csize = le32(c + 20);
	e->usize = le32(c + 24);
	e->lho = le32(c + 42);
	if (le16(c + 34) != 0 && le16(c + 34) != 0xffff)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, file, 0, 0, "a zip split over several disks");
	zip64_extra(c + 46 + nl, xl, &e->usize, &e->csize, &e->lho, &bad);
	if (bad || e->usize == 0xffffffffu || e->csize == 0xffffffffu || e->lho == 0xffffffffu)
		return fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
			"a missing or malformed zip64 extra field");
	if (nl && e->name.ptr[nl - 1] == '/') {
		e->is_dir = true;
		e->name.len--;
	}
	/* st_mode in the high half: unix and OS X write it, and so do some
	 * tools that say "MS-DOS" (pip reads it whatever the system says, so
	 * a symlink is looked for whatever it says) */
	e->mode = le32(c + 38) >> 16;
	*len = 46 + nl + xl + cl;
	return 0;
}

/* Where the central directory is, strictly: nothing after the end record,
 * and the central directory ends where the end record starts (no data
 * prepended or slipped in between, as a self-extractor has). */
static int find_cd(gpuenv_ctx_t *ctx, const char *file, const unsigned char *d, uint64_t size,
	uint64_t *cd_off, uint64_t *cd_size, uint64_t *count)
{
	uint64_t tail_off = size > 22 + 65535 + 20 ? size - (22 + 65535 + 20) : 0;
	gpuenv_zip_end_t e;
	int r;

	if ((r = gpuenv_zip_end(ctx, file, d + tail_off, (size_t)(size - tail_off), tail_off, true, &e)))
		return r;
	if (e.end64_at && (r = gpuenv_zip_end64(ctx, file, d + e.end64_at,
				   (size_t)(size - e.end64_at), &e)))
		return r;
	if (e.cd_off > e.end_at || e.end_at - e.cd_off != e.cd_size)
		return fail_zip(ctx, file, "the central directory does not end at the end record");
	*cd_off = e.cd_off;
	*cd_size = e.cd_size;
	*count = e.count;
	return 0;
}

uint64_t gpuenv_zip_local_len(const void *p, size_t n)
{
	const unsigned char *l = p;

	if (n < 30 || le32(l) != SIG_LOCAL)
		return 0;
	return 30 + (uint64_t)le16(l + 26) + le16(l + 28);
}

/* Check one entry's local header against the central one; sets data_off. */
static int check_local(gpuenv_ctx_t *ctx, const gpuenv_zip_t *z, gpuenv_zip_entry_t *e,
	uint64_t cd_off, uint64_t *data_end)
{
	const unsigned char *d = z->data, *l;
	const char *file = z->file;

	if (e->lho > cd_off || cd_off - e->lho < 30 || le32(d + e->lho) != SIG_LOCAL)
		return fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
			"no local header where the central directory says");
	l = d + e->lho;
	uint32_t lflags = le16(l + 6), lmethod = le16(l + 8);
	size_t nl = le16(l + 26), xl = le16(l + 28);
	if (e->lho + 30 + nl + xl > cd_off)
		return fail_entry(ctx, GPUENV_EFORMAT, file, e->name, "a local header that runs past its end");
	gpuenv_str_t lname = gpuenv_str_n((const char *)l + 30, nl);
	gpuenv_str_t cname = e->is_dir ? gpuenv_str_n(e->name.ptr, e->name.len + 1) : e->name;
	if (!gpuenv_str_eq(lname, cname))
		return fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
			"the local header names another file than the central directory");
	if (lmethod != e->method || (lflags & F_DESCRIPTOR) != (e->flags & F_DESCRIPTOR) ||
		(lflags & F_ENCRYPTED) != (e->flags & F_ENCRYPTED))
		return fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
			"the local header's method or flags differ from the central directory's");
	uint64_t lus = le32(l + 22), lcs = le32(l + 18);
	uint32_t lcrc = le32(l + 14);
	bool bad;
	zip64_extra(l + 30 + nl, xl, &lus, &lcs, NULL, &bad);
	if (bad)
		return fail_entry(ctx, GPUENV_EFORMAT, file, e->name, "a malformed local extra field");
	if (!(e->flags & F_DESCRIPTOR) || lcrc || lus || lcs) {
		if (lcrc != e->crc || lus != e->usize || lcs != e->csize)
			return fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
				"the local header's CRC-32 and sizes (%08x, %llu/%llu) differ from the "
				"central directory's (%08x, %llu/%llu)",
				(unsigned)lcrc, (unsigned long long)lcs, (unsigned long long)lus,
				(unsigned)e->crc, (unsigned long long)e->csize, (unsigned long long)e->usize);
	}
	e->data_off = e->lho + 30 + nl + xl;
	if (e->csize > cd_off - e->data_off)
		return fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
			"its data runs past the start of the central directory");
	*data_end = e->data_off + e->csize;
	if (e->flags & F_DESCRIPTOR) {
		/* crc, csize, usize, optionally after a signature; 32-bit sizes
		 * at the least (the zip64 form is longer) */
		uint64_t at = *data_end, need = 12;
		if (cd_off - at >= 4 && le32(d + at) == SIG_DESC)
			at += 4;
		if (cd_off - at < need)
			return fail_entry(ctx, GPUENV_EFORMAT, file, e->name, "its data descriptor is cut short");
		if (le32(d + at) != e->crc)
			return fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
				"its data descriptor's CRC differs from the central directory's");
		*data_end = at + need;
	}
	return 0;
}

int gpuenv_zip_open(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file, const void *data,
	uint64_t size, const gpuenv_zip_limits_t *lim, gpuenv_zip_t *out)
{
	const unsigned char *d = data;
	uint64_t cd_off = 0, cd_size = 0, count = 0, total = 0;
	gpuenv_strmap_t names = { .ctx = ctx };
	span_t *spans = NULL;
	size_t *tmp = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	out->file = file;
	out->data = d;
	out->size = size;
	limits_fill(&out->lim, lim);
	if ((r = find_cd(ctx, file, d, size, &cd_off, &cd_size, &count)))
		return r;
	if (count > out->lim.max_entries)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0,
			"%llu entries in the zip (the limit is %llu)", (unsigned long long)count,
			(unsigned long long)out->lim.max_entries);
	if (count > cd_size / 46)
		return fail_zip(ctx, file, "more entries than the central directory can hold");
	out->entries = gpuenv_arena_calloc(arena, count ? count : 1, sizeof(*out->entries));
	out->sorted = gpuenv_arena_calloc(arena, count ? count : 1, sizeof(*out->sorted));
	spans = gpuenv_calloc(ctx, count ? count : 1, sizeof(*spans));
	tmp = gpuenv_calloc(ctx, count ? count : 1, sizeof(*tmp));
	if (!out->entries || !out->sorted || !spans || !tmp) {
		r = gpuenv_oom(ctx, "for a zip's central directory");
		goto done;
	}
	uint64_t at = cd_off;
	for (size_t i = 0; i < count; i++) {
		gpuenv_zip_entry_t *e = &out->entries[i];
		size_t len;
		if ((r = gpuenv_zip_cd_entry(ctx, file, d + at, (size_t)(cd_off + cd_size - at), e, &len)))
			goto done;
		at += len;
		if ((r = gpuenv_zip_check_name(ctx, file, e->name)))
			goto done;
		uint32_t fmt = e->mode & S_IFMT;
		if (fmt == S_IFLNK) {
			r = fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
				"a symbolic link (wheels hold files only)");
			goto done;
		}
		if (fmt == S_IFDIR && !e->is_dir) {
			r = fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
				"a folder whose name does not end with '/'");
			goto done;
		}
		if (fmt && fmt != S_IFREG && fmt != S_IFDIR) {
			r = fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
				"a device, FIFO or socket (wheels hold files only)");
			goto done;
		}
		if (e->flags & (F_ENCRYPTED | F_STRONG)) {
			r = fail_entry(ctx, GPUENV_EUNSUPPORTED, file, e->name, "an encrypted entry");
			goto done;
		}
		if (e->method != 0 && e->method != 8) {
			r = fail_entry(ctx, GPUENV_EUNSUPPORTED, file, e->name,
				"compressed with zip method %u (only stored and deflated are read)",
				e->method);
			goto done;
		}
		if (e->is_dir && e->usize) {
			r = fail_entry(ctx, GPUENV_EFORMAT, file, e->name, "a folder entry with content");
			goto done;
		}
		if (e->method == 0 && e->csize != e->usize) {
			r = fail_entry(ctx, GPUENV_EFORMAT, file, e->name,
				"a stored entry whose sizes differ (%llu and %llu)",
				(unsigned long long)e->csize, (unsigned long long)e->usize);
			goto done;
		}
		if (e->usize > out->lim.max_entry) {
			r = fail_entry(ctx, GPUENV_ETOOBIG, file, e->name,
				"%llu bytes uncompressed (the limit for one entry is %llu)",
				(unsigned long long)e->usize, (unsigned long long)out->lim.max_entry);
			goto done;
		}
		if (e->usize > GPUENV_ZIP_RATIO_MIN &&
			e->usize / (e->csize ? e->csize : 1) >= out->lim.max_ratio) {
			r = fail_entry(ctx, GPUENV_ETOOBIG, file, e->name,
				"compressed %llu:1 (%llu bytes to %llu; the limit is %u:1): a zip bomb?",
				(unsigned long long)(e->usize / (e->csize ? e->csize : 1)),
				(unsigned long long)e->csize, (unsigned long long)e->usize,
				out->lim.max_ratio);
			goto done;
		}
		total += e->usize;
		if (total > out->lim.max_total) {
			r = fail_entry(ctx, GPUENV_ETOOBIG, file, e->name,
				"the entries up to this one hold %llu bytes uncompressed (the limit is %llu)",
				(unsigned long long)total, (unsigned long long)out->lim.max_total);
			goto done;
		}
		bool found;
		gpuenv_strmap_get(&names, e->name.ptr, e->name.len, &found);
		if (found) {
			r = fail_entry(ctx, GPUENV_EDUPLICATE, file, e->name,
				"the name is in the zip twice");
			goto done;
		}
		if ((r = gpuenv_strmap_put(&names, e->name.ptr, e->name.len, e)))
			goto done;
		uint64_t dend = 0;
		if ((r = check_local(ctx, out, e, cd_off, &dend)))
			goto done;
		spans[i] = (span_t){ e->lho, dend, i };
		out->sorted[i] = i;
	}
	if (at != cd_off + cd_size) {
		r = fail_zip(ctx, file, "the central directory holds more than its entries");
		goto done;
	}
	out->n = (size_t)count;
	out->total = total;
	/* a file used as a folder by another entry ("a" and "a/b") */
	for (size_t i = 0; i < out->n; i++) {
		gpuenv_str_t nm = out->entries[i].name;
		for (size_t k = 0; k < nm.len; k++) {
			if (nm.ptr[k] != '/')
				continue;
			bool found;
			const gpuenv_zip_entry_t *p = gpuenv_strmap_get(&names, nm.ptr, k, &found);
			if (found && !p->is_dir) {
				r = fail_entry(ctx, GPUENV_EDUPLICATE, file, nm,
					"its folder is also a file in the zip");
				goto done;
			}
		}
	}
	/* no two entries' data overlap (one compressed stream shared by many
	 * entries is the overlapping-files zip bomb) */
	qsort(spans, out->n, sizeof(*spans), cmp_span);
	for (size_t i = 1; i < out->n; i++)
		if (spans[i].start < spans[i - 1].end) {
			r = fail_entry(ctx, GPUENV_EFORMAT, file, out->entries[spans[i].idx].name,
				"its data overlaps another entry's");
			goto done;
		}
	sort_names(out->entries, out->sorted, tmp, out->n);
	r = 0;
done:
	gpuenv_strmap_free(&names);
	gpuenv_free(ctx, spans);
	gpuenv_free(ctx, tmp);
	return r;
}

const gpuenv_zip_entry_t *gpuenv_zip_find(const gpuenv_zip_t *z, gpuenv_str_t name)
{
	size_t lo = 0, hi = z->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = gpuenv_str_cmp(z->entries[z->sorted[mid]].name, name);
		if (c == 0)
			return &z->entries[z->sorted[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

#define CHUNK ((size_t)64 << 10)

/* An entry extracted (streamed or whole): all of its compressed bytes
 * used, its declared size, its CRC-32. */
static int entry_done(gpuenv_ctx_t *ctx, const gpuenv_zip_t *z, const gpuenv_zip_entry_t *e, uint64_t used,
	uint64_t got, uint32_t crc)
{
	if (used != e->csize)
		return fail_entry(ctx, GPUENV_EFORMAT, z->file, e->name,
			"its deflate stream ends %llu bytes before its compressed size says",
			(unsigned long long)(e->csize - used));
	if (got != e->usize)
		return fail_entry(ctx, GPUENV_EFORMAT, z->file, e->name,
			"inflates to %llu bytes, not the %llu its header says", (unsigned long long)got,
			(unsigned long long)e->usize);
	if (crc != e->crc)
		return fail_entry(ctx, GPUENV_EFORMAT, z->file, e->name,
			"fails its CRC-32 check (the wheel is damaged)");
	return 0;
}

int gpuenv_zip_extract(gpuenv_ctx_t *ctx, const gpuenv_zip_t *z, const gpuenv_zip_entry_t *e,
	gpuenv_zip_sink_fn sink, void *ud)
{
	const unsigned char *src = z->data + e->data_off;
	uint32_t crc = 0; /* libdeflate's CRC-32: two to three times zlib's speed */
	uint64_t done = 0;
	int r;

	if (e->method == 0) {
		while (done < e->usize) {
			size_t n = e->usize - done > CHUNK ? CHUNK : (size_t)(e->usize - done);
			crc = libdeflate_crc32(crc, src + done, n);
			if ((r = sink(ud, src + done, n)))
				return r;
			done += n;
		}
	} else {
		unsigned char out[CHUNK];
		z_stream s;
		uint64_t in_left = e->csize;
		int zr = Z_OK;

		memset(&s, 0, sizeof(s));
		if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
			return gpuenv_oom(ctx, "for zlib");
		s.next_in = (unsigned char *)(uintptr_t)src;
		for (;;) {
			if (s.avail_in == 0 && in_left) {
				uInt n = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
				s.avail_in = n;
				in_left -= n;
			}
			s.next_out = out;
			s.avail_out = (uInt)sizeof(out);
			zr = inflate(&s, Z_NO_FLUSH);
			size_t got = sizeof(out) - s.avail_out;
			if (got) {
				if (got > e->usize - done) {
					inflateEnd(&s);
					return fail_entry(ctx, GPUENV_ETOOBIG, z->file, e->name,
						"inflates past its declared size of %llu bytes (refused "
						"before writing more: a zip bomb?)",
						(unsigned long long)e->usize);
				}
				crc = libdeflate_crc32(crc, out, got);
				if ((r = sink(ud, out, got))) {
					inflateEnd(&s);
					return r;
				}
				done += got;
			}
			if (zr == Z_STREAM_END)
				break;
			if (zr == Z_BUF_ERROR && s.avail_in == 0 && in_left == 0)
				break; /* input ran out: reported below */
			if (zr != Z_OK && zr != Z_BUF_ERROR) {
				inflateEnd(&s);
				if (zr == Z_MEM_ERROR)
					return gpuenv_oom(ctx, "for zlib");
				return fail_entry(ctx, GPUENV_EFORMAT, z->file, e->name,
					"corrupt deflate data (%s)", s.msg ? s.msg : "zlib error");
			}
		}
		uint64_t consumed = s.total_in;
		inflateEnd(&s);
		if (zr != Z_STREAM_END)
			return fail_entry(ctx, GPUENV_EFORMAT, z->file, e->name,
				"its deflate data is cut short");
		return entry_done(ctx, z, e, consumed, done, crc);
	}
	return entry_done(ctx, z, e, e->csize, done, crc);
}

/* Inflate one entry whole into out[0..e->usize) with libdeflate (twice
 * zlib's speed on one core, measured on the H200 machine's CPU: 386-511
 * MB/s against 189-254 MB/s on libcublasLt.so.13 and libtorch_cuda.so), the
 * same checks as gpuenv_zip_extract: never past the declared size (out has
 * exactly that room), all of the compressed bytes used, the CRC-32. */
int gpuenv_zip_inflate_to(gpuenv_ctx_t *ctx, const gpuenv_zip_t *z, const gpuenv_zip_entry_t *e,
	void *inflater, void *out)
{
	const unsigned char *src = z->data + e->data_off;
	size_t in_used = 0, got = 0;

	if (e->method == 0) {
		memcpy(out, src, (size_t)e->usize);
		got = (size_t)e->usize;
		in_used = (size_t)e->csize;
	} else {
		switch (libdeflate_deflate_decompress_ex(inflater, src, (size_t)e->csize, out,
			(size_t)e->usize, &in_used, &got)) {
		case LIBDEFLATE_SUCCESS:
			break;
		case LIBDEFLATE_INSUFFICIENT_SPACE:
			return fail_entry(ctx, GPUENV_ETOOBIG, z->file, e->name,
				"inflates past its declared size of %llu bytes (refused before writing "
				"more: a zip bomb?)", (unsigned long long)e->usize);
		default:
			return fail_entry(ctx, GPUENV_EFORMAT, z->file, e->name,
				"corrupt deflate data (or cut short)");
		}
	}
	return entry_done(ctx, z, e, in_used, got, libdeflate_crc32(0, out, got));
}

void *gpuenv_zip_inflater_new(void)
{
	return libdeflate_alloc_decompressor();
}

void gpuenv_zip_inflater_free(void *inflater)
{
	if (inflater)
		libdeflate_free_decompressor(inflater);
}

typedef struct membuf {
	char *p;
	size_t n;
} membuf_t;

static int mem_sink(void *ud, const void *p, size_t n)
{
	membuf_t *m = ud;
	memcpy(m->p + m->n, p, n);
	m->n += n;
	return 0;
}

int gpuenv_zip_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_zip_t *z,
	const gpuenv_zip_entry_t *e, size_t max, gpuenv_str_t *out)
{
	membuf_t m = { NULL, 0 };
	int r;

	if (e->usize > max)
		return fail_entry(ctx, GPUENV_ETOOBIG, z->file, e->name,
			"%llu bytes (the limit for this file is %zu)", (unsigned long long)e->usize, max);
	m.p = gpuenv_arena_alloc(arena, (size_t)e->usize + 1);
	if (!m.p)
		return gpuenv_oom(ctx, "for a zip entry");
	if ((r = gpuenv_zip_extract(ctx, z, e, mem_sink, &m)))
		return r;
	m.p[m.n] = '\0';
	*out = gpuenv_str_n(m.p, m.n);
	return 0;
}
