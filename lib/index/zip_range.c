/* A wheel's METADATA from a few byte ranges of the zip (APPNOTE.TXT): the
 * end-of-central-directory record in the last 64 KiB, the central directory
 * (often inside that same tail), then the local header and compressed data
 * of *.dist-info/METADATA, inflated with zlib.  The same machine reads a
 * wheel on disk with pread, so every path shares one zip reader; the
 * records themselves are parsed, and the data inflated and checked, by the
 * strict zip reader's pieces (gpuenv/zip.h), the installer's too. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gpuenv/pep440.h"
#include "gpuenv/zip.h"

#include "index_int.h"

enum { Z_TAIL, Z_EOCD64, Z_CD, Z_LOCAL, Z_DONE };

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
	gpuenv_zip_t zz = { .file = z->file, .data = data, .size = z->csize };
	gpuenv_zip_entry_t e = { .name = GPUENV_STR_LIT("METADATA"), .csize = z->csize,
		.usize = z->usize, .crc = z->crc, .method = (uint16_t)z->method };
	int r;

	if (z->method != 0 && z->method != 8)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, z->file, 0, 0,
			"METADATA is compressed with zip method %u (only stored and deflate are read)",
			z->method);
	if (z->method == 0 && z->csize != z->usize)
		return corrupt(ctx, z, "a stored METADATA whose sizes differ");
	if ((r = gpuenv_zip_read(ctx, arena, &zz, &e, z->max, out)))
		return r;
	z->step = Z_DONE;
	return 0;
}

/* Find METADATA in the central directory cd (n bytes). */
static int scan_cd(gpuenv_ctx_t *ctx, ix_zip_t *z, const unsigned char *cd, size_t n)
{
	size_t i = 0, found = 0, matched = 0;
	gpuenv_zip_entry_t best = { 0 };
	int r;

	while (i < n) {
		gpuenv_zip_entry_t e;
		size_t len;
		if ((r = gpuenv_zip_cd_entry(ctx, z->file, cd + i, n - i, &e, &len)))
			return r;
		i += len;
		gpuenv_str_t dir, rest = gpuenv_str_split(e.name, '/', &dir);
		if (e.is_dir || !rest.ptr || !gpuenv_str_eq_cstr(rest, "METADATA") ||
			!gpuenv_str_endswith(dir, ".dist-info"))
			continue;
		bool m = z->want_name && names_project(dir, z->want_name);
		found++;
		if (m)
			matched++;
		if (m || found == 1)
			best = e;
	}
	if (!found)
		return corrupt(ctx, z, "no *.dist-info/METADATA in the wheel");
	if (matched != 1 && found > 1)
		return corrupt(ctx, z, "more than one *.dist-info/METADATA and none names the project");
	z->lho = best.lho;
	z->csize = best.csize;
	z->usize = best.usize;
	z->crc = best.crc;
	z->method = best.method;
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
		uint64_t start = gpuenv_zip_local_len(p, (size_t)have);
		if (!start)
			return corrupt(ctx, z, "METADATA's local header is missing");
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

static int end64(gpuenv_ctx_t *ctx, ix_zip_t *z, gpuenv_arena_t *arena, const void *rec, size_t n,
	uint64_t at, gpuenv_str_t *out)
{
	gpuenv_zip_end_t e = { .end64_at = at };
	int r;

	if ((r = gpuenv_zip_end64(ctx, z->file, rec, n, &e)))
		return r;
	z->cd_size = e.cd_size;
	z->cd_off = e.cd_off;
	return locate_cd(ctx, z, arena, out);
}

static int tail(gpuenv_ctx_t *ctx, ix_zip_t *z, gpuenv_arena_t *arena, gpuenv_str_t *out)
{
	gpuenv_zip_end_t e;
	int r;

	/* trailing bytes after the end record are allowed here, as zipfile
	 * allows them: this only reads METADATA (the installer is strict) */
	if ((r = gpuenv_zip_end(ctx, z->file, z->keep.data, z->keep.len, z->keep_off, false, &e)))
		return r;
	z->cd_size = e.cd_size;
	z->cd_off = e.cd_off;
	if (e.end64_at) {
		const unsigned char *p = kept(z, e.end64_at, 56);
		if (!p)
			return want(z, Z_EOCD64, e.end64_at, 56);
		return end64(ctx, z, arena, p, 56, e.end64_at, out);
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
		return end64(ctx, z, arena, data, len, z->want_off, out);
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
