/* PKG-INFO out of a .tar.gz source distribution (include/gpuenv/sdist.h).
 *
 * The gzip stream is inflated in pieces and the tar (POSIX ustar, with GNU
 * and pax extended headers skipped) is walked header by header; only the
 * member "<top>/PKG-INFO" is kept, so memory stays at one block plus
 * PKG-INFO whatever the archive's size. */
#include "gpuenv/sdist.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

#define TAR_BLOCK 512

struct tar_walk {
	gpuenv_ctx_t *ctx;
	const char *file;
	z_stream z;
	unsigned char in_done; /* the gzip stream ended */
	uint64_t total;	       /* tar bytes produced */
};

static int sd_fail(struct tar_walk *w, int code, const char *what)
{
	return gpuenv_fail(w->ctx, code, w->file, 0, 0, "%s: %s", w->file, what);
}

/* Exactly n bytes of the tar stream into out (NULL: skip them).  1 at a
 * clean end of the stream before any byte, 0 when read, <0 on error. */
static int tar_read(struct tar_walk *w, unsigned char *out, size_t n)
{
	unsigned char skip[4096];
	size_t got = 0;
	while (got < n) {
		size_t want = n - got;
		unsigned char *dst = out ? out + got : skip;
		if (!out && want > sizeof(skip))
			want = sizeof(skip);
		if (w->in_done)
			return got == 0 ? 1 : sd_fail(w, GPUENV_EFORMAT, "the tar stream ends inside a member");
		w->z.next_out = dst;
		w->z.avail_out = (uInt)want;
		int r = inflate(&w->z, Z_NO_FLUSH);
		size_t made = want - w->z.avail_out;
		if (r == Z_STREAM_END)
			w->in_done = 1;
		else if (r != Z_OK && !(r == Z_BUF_ERROR && made))
			return sd_fail(w, GPUENV_EFORMAT, r == Z_BUF_ERROR ? "the gzip stream is truncated"
										 : "the gzip stream is damaged");
		got += made;
		w->total += made;
		if (w->total > GPUENV_SDIST_MAX_UNPACKED)
			return sd_fail(w, GPUENV_ETOOBIG, "more than 1 GiB unpacked before PKG-INFO");
	}
	return 0;
}

/* An octal tar number field. */
static bool tar_octal(const unsigned char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	if (n && (p[0] & 0x80)) /* base-256 (GNU): sizes past 8 GiB; refuse */
		return false;
	while (i < n && p[i] == ' ')
		i++;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
		if (v >> 60)
			return false;
		v = v * 8 + (uint64_t)(p[i] - '0');
	}
	for (; i < n; i++)
		if (p[i] != ' ' && p[i] != '\0')
			return false;
	*out = v;
	return true;
}

static bool tar_checksum_ok(const unsigned char *h)
{
	uint64_t want, sum = 0;
	if (!tar_octal(h + 148, 8, &want))
		return false;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum == want;
}

/* Is the member "<one component>/PKG-INFO"? */
static bool is_top_pkg_info(const unsigned char *h)
{
	char name[256 + 156];
	size_t pl = strnlen((const char *)h + 345, 155), nl = strnlen((const char *)h, 100);
	size_t k = 0;
	if (memcmp(h + 257, "ustar", 5) == 0 && pl) {
		memcpy(name, h + 345, pl);
		name[pl] = '/';
		k = pl + 1;
	}
	memcpy(name + k, h, nl);
	name[k + nl] = '\0';
	const char *p = name;
	if (p[0] == '.' && p[1] == '/')
		p += 2;
	const char *slash = strchr(p, '/');
	return slash && slash != p && !strcmp(slash + 1, "PKG-INFO");
}

int gpuenv_sdist_pkg_info(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file, const void *data,
	size_t len, size_t max, gpuenv_str_t *out)
{
	struct tar_walk w = { .ctx = ctx, .file = file ? file : "sdist" };
	unsigned char h[TAR_BLOCK];
	int r;

	*out = (gpuenv_str_t){ NULL, 0 };
	if (len > UINT32_MAX)
		return sd_fail(&w, GPUENV_ETOOBIG, "larger than 4 GiB");
	if (inflateInit2(&w.z, 16 + MAX_WBITS) != Z_OK) /* gzip framing only */
		return gpuenv_oom(ctx, "a gzip stream");
	w.z.next_in = (Bytef *)data;
	w.z.avail_in = (uInt)len;
	for (;;) {
		uint64_t size;
		if ((r = tar_read(&w, h, TAR_BLOCK)) != 0) {
			if (r == 1)
				r = sd_fail(&w, GPUENV_EFORMAT, "the tar stream ends without an end marker");
			break;
		}
		bool zero = true;
		for (size_t i = 0; i < TAR_BLOCK && zero; i++)
			zero = h[i] == 0;
		if (zero) {
			r = gpuenv_fail(ctx, GPUENV_ENOTFOUND, w.file, 0, 0, "%s: no PKG-INFO in the archive's "
				"top-level directory", w.file);
			break;
		}
		if (!tar_checksum_ok(h) || !tar_octal(h + 124, 12, &size)) {
			r = sd_fail(&w, GPUENV_EFORMAT, "a damaged tar header");
			break;
		}
		uint64_t padded = (size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
		char type = (char)h[156];
		if ((type == '0' || type == '\0') && is_top_pkg_info(h)) {
			if (size > max) {
				r = sd_fail(&w, GPUENV_ETOOBIG, "PKG-INFO is larger than the metadata limit");
				break;
			}
			char *p = gpuenv_arena_alloc(arena, (size_t)size + 1);
			if (!p) {
				r = gpuenv_oom(ctx, "PKG-INFO");
				break;
			}
			if ((r = tar_read(&w, (unsigned char *)p, (size_t)size)) != 0) {
				if (r == 1)
					r = sd_fail(&w, GPUENV_EFORMAT, "the tar stream ends inside PKG-INFO");
				break;
			}
			p[size] = '\0';
			*out = (gpuenv_str_t){ p, (size_t)size };
			break;
		}
		if ((r = tar_read(&w, NULL, (size_t)padded)) != 0) {
			if (r == 1)
				r = sd_fail(&w, GPUENV_EFORMAT, "the tar stream ends inside a member");
			break;
		}
	}
	inflateEnd(&w.z);
	return r;
}
