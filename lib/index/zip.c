/* A wheel's METADATA from a few byte ranges of the zip (APPNOTE.TXT): the
 * end-of-central-directory record in the last 64 KiB, the central directory
 * (often inside that same tail), then the local header and compressed data
 * of *.dist-info/METADATA, inflated with zlib.  The same machine reads a
 * wheel on disk with pread, so every path shares one zip reader. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gpuenv/pep440.h"

#include "index_int.h"

enum { Z_TAIL, Z_EOCD64, Z_CD, Z_LOCAL, Z_DONE };

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

static int corrupt(gpuenv_ctx_t *ctx, const ix_zip_t *z, const char *what)
{
	return gpuenv_fail(ctx, GPUENV_EFORMAT, z->file, 0, 0, "not a readable wheel: %s", what);
}

void ix_zip_init(ix_zip_t *z, gpuenv_ctx_t *ctx, const char *file, const char *want_name,
	size_t max, uint64_t total)
{
	memset(z, 0, sizeof(*z));
	z->file = file;
	z->want_name = want_name;
	z->max = max;
	z->total = total;
	z->step = Z_TAIL;
	gpuenv_buf_init(&z->keep, ctx, max + IX_ZIP_TAIL + 4096);
	if (total) {
		z->want_off = total > IX_ZIP_TAIL ? total - IX_ZIP_TAIL : 0;
		z->want_len = total - z->want_off;
	}
}

void ix_zip_free(ix_zip_t *z)
{
	gpuenv_buf_free(&z->keep);
}

/* Is [off, off + n) inside what was kept? */
static const unsigned char *kept(const ix_zip_t *z, uint64_t off, uint64_t n)
{
	if (!z->keep.data || off < z->keep_off || off + n > z->keep_off + z->keep.len ||
		off + n < off)
		return NULL;
	return (const unsigned char *)z->keep.data + (off - z->keep_off);
}

static int want(ix_zip_t *z, int step, uint64_t off, uint64_t len)
{
	z->step = step;
	z->want_off = off;
	z->want_len = len;
	return 1;
}

/* The dist-info folder name "name-version.dist-info" names want? */
static bool names_project(gpuenv_str_t dir, const char *want_name)
{
	char norm[256];
	gpuenv_str_t head;

	gpuenv_str_split(dir, '-', &head);
	if (gpuenv_name_normalize_to(head, norm, sizeof(norm)) == SIZE_MAX)
		return false;
	return !strcmp(norm, want_name);
}

static int inflate_entry(gpuenv_ctx_t *ctx, ix_zip_t *z, gpuenv_arena_t *arena,
	const unsigned char *data, gpuenv_str_t *out)
{
	char *buf;
	z_stream s;
	int zr;

	if (z->usize > z->max)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, z->file, 0, 0,
			"METADATA of %llu bytes is larger than the limit of %zu bytes",
			(unsigned long long)z->usize, z->max);
	buf = gpuenv_arena_alloc(arena, (size_t)z->usize + 1);
	if (!buf)
		return gpuenv_oom(ctx, "for a wheel's METADATA");
	if (z->method == 0) {
		if (z->csize != z->usize)
			return corrupt(ctx, z, "a stored METADATA whose sizes differ");
		memcpy(buf, data, (size_t)z->usize);
	} else if (z->method == 8) {
		memset(&s, 0, sizeof(s));
		if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
			return gpuenv_oom(ctx, "for zlib");
		s.next_in = (unsigned char *)(uintptr_t)data;
		s.avail_in = (uInt)z->csize;
		s.next_out = (unsigned char *)buf;
		s.avail_out = (uInt)z->usize;
		zr = inflate(&s, Z_FINISH);
		inflateEnd(&s);
		if (zr != Z_STREAM_END || s.total_out != z->usize)
			return corrupt(ctx, z, "METADATA does not inflate to its size");
	} else {
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, z->file, 0, 0,
			"METADATA is compressed with zip method %u (only stored and deflate are read)",
			z->method);
	}
	if (crc32(0, (const unsigned char *)buf, (uInt)z->usize) != z->crc)
		return corrupt(ctx, z, "METADATA fails its CRC-32");
	buf[z->usize] = '\0';
	*out = gpuenv_str_n(buf, (size_t)z->usize);
	z->step = Z_DONE;
	return 0;
}

/* Find METADATA in the central directory cd (n bytes). */
static int scan_cd(gpuenv_ctx_t *ctx, ix_zip_t *z, const unsigned char *cd, size_t n)
{
	size_t i = 0, found = 0, matched = 0;
	uint64_t best_lho = 0, best_cs = 0, best_us = 0;
	uint32_t best_crc = 0;
	unsigned best_m = 0;

	while (i + 46 <= n && le32(cd + i) == 0x02014b50) {
		const unsigned char *e = cd + i;
		size_t nl = le16(e + 28), xl = le16(e + 30), cl = le16(e + 32);
		uint64_t cs = le32(e + 20), us = le32(e + 24), lho = le32(e + 42);
		if (i + 46 + nl + xl + cl > n)
			return corrupt(ctx, z, "a central directory entry runs past its end");
		gpuenv_str_t name = gpuenv_str_n((const char *)e + 46, nl), dir;
		gpuenv_str_t rest = gpuenv_str_split(name, '/', &dir);
		if (rest.ptr && gpuenv_str_eq_cstr(rest, "METADATA") &&
			gpuenv_str_endswith(dir, ".dist-info")) {
			/* zip64 sizes and offset, in this order, for the fields at ~0 */
			const unsigned char *x = e + 46 + nl, *xe = x + xl;
			while (x + 4 <= xe) {
				size_t id = le16(x), sz = le16(x + 2);
				const unsigned char *v = x + 4;
				if (v + sz > xe)
					break;
				if (id == 1) {
					const unsigned char *ve = v + sz;
					if (us == 0xffffffffu && v + 8 <= ve) {
						us = le64(v);
						v += 8;
					}
					if (cs == 0xffffffffu && v + 8 <= ve) {
						cs = le64(v);
						v += 8;
					}
					if (lho == 0xffffffffu && v + 8 <= ve)
						lho = le64(v);
				}
				x += 4 + sz;
			}
			bool m = z->want_name && names_project(dir, z->want_name);
			found++;
			if (m)
				matched++;
			if (m || found == 1) {
				best_lho = lho;
				best_cs = cs;
				best_us = us;
				best_crc = le32(e + 16);
				best_m = le16(e + 10);
			}
		}
		i += 46 + nl + xl + cl;
	}
	if (!found)
		return corrupt(ctx, z, "no *.dist-info/METADATA in the wheel");
	if (matched != 1 && found > 1)
		return corrupt(ctx, z, "more than one *.dist-info/METADATA and none names the project");
	z->lho = best_lho;
	z->csize = best_cs;
	z->usize = best_us;
	z->crc = best_crc;
	z->method = best_m;
	if (z->csize > z->max || z->usize > z->max)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, z->file, 0, 0,
			"METADATA of %llu bytes is larger than the limit of %zu bytes",
			(unsigned long long)(z->usize > z->csize ? z->usize : z->csize), z->max);
	return 0;
}

/* The local header and data of METADATA: from what was kept, else asked. */
static int local(gpuenv_ctx_t *ctx, ix_zip_t *z, gpuenv_arena_t *arena, const unsigned char *p,
	uint64_t have, gpuenv_str_t *out)
{
	if (p && have >= 30) {
		if (le32(p) != 0x04034b50)
			return corrupt(ctx, z, "METADATA's local header is missing");
		uint64_t start = 30 + (uint64_t)le16(p + 26) + le16(p + 28);
		if (start + z->csize <= have)
			return inflate_entry(ctx, z, arena, p + start, out);
		if (z->step == Z_LOCAL && z->want_len >= start + z->csize)
			return corrupt(ctx, z, "METADATA's data is cut short");
		return want(z, Z_LOCAL, z->lho, start + z->csize);
	}
	if (z->step == Z_LOCAL)
		return corrupt(ctx, z, "METADATA's local header is cut short");
	/* name and extra of the local header are usually the central one's:
	 * ask for a little more so one range is enough */
	return want(z, Z_LOCAL, z->lho, 30 + 1024 + z->csize);
}

static int after_cd(gpuenv_ctx_t *ctx, ix_zip_t *z, gpuenv_arena_t *arena, gpuenv_str_t *out)
{
	const unsigned char *p = kept(z, z->lho, 30);
	uint64_t have = p ? z->keep_off + z->keep.len - z->lho : 0;

	return local(ctx, z, arena, p, have, out);
}

static int locate_cd(gpuenv_ctx_t *ctx, ix_zip_t *z, gpuenv_arena_t *arena, gpuenv_str_t *out)
{
	const unsigned char *cd;
	int r;

	if (z->cd_off + z->cd_size > z->total || z->cd_off + z->cd_size < z->cd_off)
		return corrupt(ctx, z, "the central directory lies outside the file");
	if (z->cd_size > z->max)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, z->file, 0, 0,
			"a central directory of %llu bytes is larger than the limit of %zu bytes",
			(unsigned long long)z->cd_size, z->max);
	cd = kept(z, z->cd_off, z->cd_size);
	if (!cd)
		return want(z, Z_CD, z->cd_off, z->cd_size);
	if ((r = scan_cd(ctx, z, cd, (size_t)z->cd_size)))
		return r;
	return after_cd(ctx, z, arena, out);
}

static int tail(gpuenv_ctx_t *ctx, ix_zip_t *z, gpuenv_arena_t *arena, gpuenv_str_t *out)
{
	const unsigned char *d = (const unsigned char *)z->keep.data;
	size_t n = z->keep.len, p;

	if (n < 22)
		return corrupt(ctx, z, "shorter than a zip's end record");
	for (p = n - 22;; p--) {
		if (le32(d + p) == 0x06054b50 && p + 22 + le16(d + p + 20) <= n)
			break;
		if (p == 0 || n - p > 22 + 65535)
			return corrupt(ctx, z, "no zip end-of-central-directory record");
	}
	z->cd_size = le32(d + p + 12);
	z->cd_off = le32(d + p + 16);
	if (z->cd_size == 0xffffffffu || z->cd_off == 0xffffffffu || le16(d + p + 10) == 0xffff) {
		/* zip64: the locator sits just before the end record */
		if (p < 20 || le32(d + p - 20) != 0x07064b50)
			return corrupt(ctx, z, "a zip64 end record without its locator");
		uint64_t at = le64(d + p - 12);
		const unsigned char *e = kept(z, at, 56);
		if (!e)
			return want(z, Z_EOCD64, at, 56);
		if (le32(e) != 0x06064b50)
			return corrupt(ctx, z, "a bad zip64 end record");
		z->cd_size = le64(e + 40);
		z->cd_off = le64(e + 48);
	}
	return locate_cd(ctx, z, arena, out);
}

int ix_zip_feed(ix_zip_t *z, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, uint64_t off,
	const char *data, size_t len, uint64_t total, gpuenv_str_t *out)
{
	int r;

	if (total)
		z->total = total;
	switch (z->step) {
	case Z_TAIL:
		if (!z->total)
			z->total = off + len;
		gpuenv_buf_reset(&z->keep);
		if ((r = gpuenv_buf_append(&z->keep, data, len)))
			return r == -ENOMEM ? gpuenv_oom(ctx, "for a wheel's tail")
					    : gpuenv_fail(ctx, r, z->file, 0, 0, "a wheel's tail is too big");
		z->keep_off = off;
		if (off + len != z->total)
			return corrupt(ctx, z, "the server sent a range that is not the file's end");
		return tail(ctx, z, arena, out);
	case Z_EOCD64:
		if (len < 56 || le32((const unsigned char *)data) != 0x06064b50)
			return corrupt(ctx, z, "a bad zip64 end record");
		z->cd_size = le64((const unsigned char *)data + 40);
		z->cd_off = le64((const unsigned char *)data + 48);
		return locate_cd(ctx, z, arena, out);
	case Z_CD:
		if (len < z->cd_size)
			return corrupt(ctx, z, "the central directory is cut short");
		if ((r = scan_cd(ctx, z, (const unsigned char *)data, (size_t)z->cd_size)))
			return r;
		return after_cd(ctx, z, arena, out);
	case Z_LOCAL:
		return local(ctx, z, arena, (const unsigned char *)data, len, out);
	default:
		return corrupt(ctx, z, "read past its end");
	}
}

/* Drive the machine over a reader of [off, off + len) into b. */
typedef int (*zip_read_fn)(void *ud, uint64_t off, size_t len, gpuenv_buf_t *b);

static int zip_drive(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const char *want_name, size_t max, uint64_t total, zip_read_fn rd, void *ud,
	gpuenv_str_t *out)
{
	ix_zip_t z;
	gpuenv_buf_t b;
	int r;

	if (!total)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, file, 0, 0, "not a readable wheel: empty");
	ix_zip_init(&z, ctx, file, want_name, max, total);
	gpuenv_buf_init(&b, ctx, max + IX_ZIP_TAIL + 4096);
	for (;;) {
		uint64_t len = z.want_len;
		if (z.want_off >= z.total) {
			r = corrupt(ctx, &z, "a range past the file's end");
			break;
		}
		if (z.want_off + len > z.total)
			len = z.total - z.want_off;
		gpuenv_buf_reset(&b);
		if ((r = gpuenv_buf_reserve(&b, (size_t)len + 1))) {
			r = r == -ENOMEM ? gpuenv_oom(ctx, "for a wheel")
					 : gpuenv_fail(ctx, r, file, 0, 0, "a zip range is too big");
			break;
		}
		if ((r = rd(ud, z.want_off, (size_t)len, &b))) {
			r = gpuenv_fail(ctx, r, file, 0, 0, "cannot read: %s", strerror(-r));
			break;
		}
		r = ix_zip_feed(&z, ctx, arena, z.want_off, b.data, b.len, z.total, out);
		if (r <= 0)
			break;
	}
	gpuenv_buf_free(&b);
	ix_zip_free(&z);
	return r;
}

static int read_fd(void *ud, uint64_t off, size_t len, gpuenv_buf_t *b)
{
	ssize_t got = pread(*(int *)ud, b->data, len, (off_t)off);

	if (got < 0)
		return -errno;
	b->len = (size_t)got;
	b->data[b->len] = '\0';
	return 0;
}

typedef struct mem {
	const char *p;
	size_t n;
} mem_t;

static int read_mem(void *ud, uint64_t off, size_t len, gpuenv_buf_t *b)
{
	const mem_t *m = ud;

	if (off > m->n)
		len = 0;
	else if (len > m->n - off)
		len = m->n - (size_t)off;
	memcpy(b->data, m->p + off, len);
	b->len = len;
	b->data[len] = '\0';
	return 0;
}

int ix_zip_read_fd(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, int fd, const char *file,
	const char *want_name, size_t max, gpuenv_str_t *out)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return gpuenv_fail(ctx, -errno, file, 0, 0, "cannot read: %s", strerror(errno));
	return zip_drive(ctx, arena, file, want_name, max, st.st_size > 0 ? (uint64_t)st.st_size : 0,
		read_fd, &fd, out);
}

int ix_zip_read_mem(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *data, size_t len,
	const char *file, const char *want_name, size_t max, gpuenv_str_t *out)
{
	mem_t m = { data, len };

	return zip_drive(ctx, arena, file, want_name, max, len, read_mem, &m, out);
}
