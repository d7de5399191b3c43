/* CUDA fatbin reader: container and entry headers only (layout in fatbin.h).
 *
 * The walk trusts nothing: every size is checked against what is left of
 * its container and section before it moves the cursor, and each step
 * moves forward by at least an entry header, so damaged input ends in a
 * clean GPUENV_EFORMAT.  Payloads are never read. */
#include "gpuenv/fs.h"
#include "gpuenv/fatbin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONTAINER_MIN 16
#define ENTRY_MIN 64
#define DEFAULT_MAX_ENTRIES ((size_t)1 << 20)

static uint16_t rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

void gpuenv_fatbin_init(gpuenv_fatbin_t *fb, gpuenv_ctx_t *ctx)
{
	memset(fb, 0, sizeof(*fb));
	fb->ctx = ctx;
}

void gpuenv_fatbin_free(gpuenv_fatbin_t *fb)
{
	gpuenv_ctx_t *ctx = fb->ctx;

	if (ctx)
		gpuenv_free(ctx, fb->entries);
	gpuenv_fatbin_init(fb, ctx);
}

/* Where the headers come from: a buffer (a mapped section, a fuzz input),
 * or a file read with pread.  gpuenv_fatbin_open uses pread: one small read
 * per header is cheaper than a page fault per header (which maps pages of
 * payload around it and counts them in the RSS), and a file truncated
 * under us gives an error instead of SIGBUS. */
struct walk {
	gpuenv_fatbin_t *fb;
	const char *name;
	const char *section;
	uint64_t base;		  /* file offset of byte 0 of the walk */
	uint64_t size;		  /* bytes in the walk */
	const unsigned char *mem; /* NULL: pread from fd */
	int fd;
	unsigned char buf[ENTRY_MIN];
};

static int corrupt(struct walk *w, int code, uint64_t at, const char *fmt, ...)
	GPUENV_PRINTF(4, 5);

static int corrupt(struct walk *w, int code, uint64_t at, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (w->section[0])
		return gpuenv_fail(w->fb->ctx, code, w->name, 0, 0,
			"corrupt fatbin in %s at offset 0x%llx (file offset 0x%llx): %s", w->section,
			(unsigned long long)at, (unsigned long long)(w->base + at), msg);
	return gpuenv_fail(w->fb->ctx, code, w->name, 0, 0,
		"corrupt fatbin at offset 0x%llx: %s", (unsigned long long)(w->base + at), msg);
}

/* len (<= ENTRY_MIN) bytes at off, which the caller checked lie inside the
 * walk */
static int get(struct walk *w, uint64_t off, size_t len, const unsigned char **out)
{
	size_t got = 0;

	if (w->mem) {
		*out = w->mem + off;
		return 0;
	}
	while (got < len) {
		ssize_t n = pread(w->fd, w->buf + got, len - got, (off_t)(w->base + off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return gpuenv_fail(w->fb->ctx, -errno, w->name, 0, 0, "read at offset %llu: %s",
				(unsigned long long)(w->base + off + got), strerror(errno));
		if (n == 0)
			return corrupt(w, GPUENV_EFORMAT, off, "the file ends early (changed while read?)");
		got += (size_t)n;
	}
	*out = w->buf;
	return 0;
}

static int push(struct walk *w, const gpuenv_fatbin_entry_t *e)
{
	gpuenv_fatbin_t *fb = w->fb;
	size_t max = fb->max_entries ? fb->max_entries : DEFAULT_MAX_ENTRIES;

	if (fb->n == fb->cap) {
		size_t cap = fb->cap ? fb->cap * 2 : 64;
		void *p;
		if (fb->n >= max)
			return gpuenv_fail(fb->ctx, GPUENV_ETOOBIG, w->name, 0, 0,
				"more than %zu fatbin entries", max);
		if (cap > max)
			cap = max;
		p = gpuenv_realloc(fb->ctx, fb->entries, cap * sizeof(*fb->entries));
		if (!p)
			return gpuenv_fail(fb->ctx, -ENOMEM, w->name, 0, 0, "out of memory");
		fb->entries = p;
		fb->cap = cap;
	}
	fb->entries[fb->n++] = *e;
	return 0;
}

/* the entries of the container whose 16-byte header h sits at p */
static int read_container(struct walk *w, const unsigned char *h, uint64_t p, uint64_t *next)
{
	uint16_t version = rd16(h + 4);
	uint16_t hsize = rd16(h + 6);
	uint64_t fsize = rd64(h + 8);
	uint64_t size = w->size, q, end;
	int r;

	if (version != 1)
		return corrupt(w, GPUENV_EUNSUPPORTED, p, "container version %u (gpuenv reads 1)",
			version);
	if (hsize < CONTAINER_MIN || hsize > size - p)
		return corrupt(w, GPUENV_EFORMAT, p, "container header size %u is invalid", hsize);
	q = p + hsize;
	if (fsize > size - q)
		return corrupt(w, GPUENV_EFORMAT, p,
			"container of %llu bytes runs past the end (%llu bytes left)",
			(unsigned long long)fsize, (unsigned long long)(size - q));
	end = q + fsize;
	while (q < end) {
		gpuenv_fatbin_entry_t e;
		const unsigned char *eh;
		uint32_t ehsize;
		uint64_t psize;

		if (end - q < ENTRY_MIN)
			return corrupt(w, GPUENV_EFORMAT, q,
				"entry header (%d bytes) runs past the end of its container (%llu bytes left)",
				ENTRY_MIN, (unsigned long long)(end - q));
		if ((r = get(w, q, ENTRY_MIN, &eh)))
			return r;
		ehsize = rd32(eh + 4);
		psize = rd64(eh + 8);
		if (ehsize < ENTRY_MIN || ehsize > end - q)
			return corrupt(w, GPUENV_EFORMAT, q, "entry header size %u is invalid", ehsize);
		if (psize > end - q - ehsize)
			return corrupt(w, GPUENV_EFORMAT, q,
				"entry payload of %llu bytes runs past the end of its container (%llu bytes left)",
				(unsigned long long)psize, (unsigned long long)(end - q - ehsize));
		memset(&e, 0, sizeof(e));
		e.kind = rd16(eh);
		e.minor = rd16(eh + 24);
		e.major = rd16(eh + 26);
		e.arch = (uint16_t)(rd32(eh + 28) > UINT16_MAX ? UINT16_MAX : rd32(eh + 28));
		e.flags = rd64(eh + 40);
		e.container = (uint32_t)w->fb->ncontainers;
		e.offset = w->base + q + ehsize;
		e.compressed = (e.flags & (GPUENV_FATBIN_F_COMPRESS_LZ4 |
					      GPUENV_FATBIN_F_COMPRESS_ZSTD)) != 0;
		e.variant = (e.flags & GPUENV_FATBIN_F_ARCH_SPECIFIC) ? 'a' :
			(e.flags & GPUENV_FATBIN_F_FAMILY)	      ? 'f' :
								'\0';
		e.size = psize;
		if (e.compressed) {
			uint32_t csize = rd32(eh + 16);
			/* the payload is padded to 8 bytes: the compressed size is
			 * the true length, and cannot be more than the room */
			if (csize > psize)
				return corrupt(w, GPUENV_EFORMAT, q,
					"compressed size %u is larger than the payload (%llu bytes)", csize,
					(unsigned long long)psize);
			if (csize)
				e.size = csize;
			e.uncompressed_size = rd64(eh + 56);
		}
		if ((r = push(w, &e)))
			return r;
		q += ehsize + psize;
	}
	*next = end;
	return 0;
}

static int walk(struct walk *w)
{
	uint64_t p = 0, size = w->size;
	int r;

	w->fb->nsections++;
	while (p < size) {
		const unsigned char *h;
		size_t n = size - p < CONTAINER_MIN ? (size_t)(size - p) : CONTAINER_MIN;
		size_t zeros = 0;

		if ((r = get(w, p, n, &h)))
			return r;
		if (n >= 4 && rd32(h) == GPUENV_FATBIN_MAGIC) {
			if (n < CONTAINER_MIN)
				return corrupt(w, GPUENV_EFORMAT, p,
					"container header (16 bytes) runs past the end (%zu bytes left)", n);
			if ((r = read_container(w, h, p, &p)))
				return r;
			w->fb->ncontainers++;
			continue;
		}
		/* alignment padding between containers */
		while (zeros < n && h[zeros] == 0)
			zeros++;
		if (!zeros)
			return corrupt(w, GPUENV_EFORMAT, p, "no container header (magic 0x%08x) here",
				GPUENV_FATBIN_MAGIC);
		p += zeros;
	}
	return 0;
}

int gpuenv_fatbin_parse(gpuenv_fatbin_t *fb, const char *name, const char *section,
	const void *data, size_t size, uint64_t base)
{
	struct walk w = { .fb = fb, .name = name ? name : "<memory>",
		.section = section ? section : "", .base = base, .size = size, .mem = data, .fd = -1 };

	if (!w.mem) {
		w.mem = (const unsigned char *)"";
		w.size = 0;
	}
	return walk(&w);
}

/* .nv_fatbin is what the CUDA runtime registers and cuobjdump lists.
 * __nv_relfatbin holds relocatable device code (nvcc -rdc) for the device
 * linker; linked libraries may keep it (libnccl.so.2 does) but it is not
 * loaded from there, so it counts only when there is no .nv_fatbin (an
 * object file compiled with -rdc). */
static const char *fatbin_section_name(const gpuenv_elf_t *elf)
{
	return gpuenv_elf_section(elf, ".nv_fatbin") ? ".nv_fatbin" : "__nv_relfatbin";
}

int gpuenv_fatbin_read_elf(gpuenv_fatbin_t *fb, const gpuenv_elf_t *elf)
{
	const char *want = fatbin_section_name(elf);
	int r;

	for (size_t i = 0; i < elf->nsections; i++) {
		const gpuenv_elf_section_t *sec = &elf->sections[i];
		gpuenv_str_t bytes;

		if (!gpuenv_str_eq_cstr(sec->name, want))
			continue;
		bytes = gpuenv_elf_section_data(elf, sec);
		r = gpuenv_fatbin_parse(fb, elf->name, want, bytes.ptr, bytes.len, sec->offset);
		if (r)
			return r;
	}
	return 0;
}

int gpuenv_fatbin_open(gpuenv_fatbin_t *fb, const char *path)
{
	gpuenv_ctx_t *ctx = fb->ctx;
	struct walk w = { .fb = fb, .name = path, .section = "" };
	const unsigned char *h;
	gpuenv_elf_t elf;
	struct stat st;
	void *map;
	size_t len;
	int fd, r;

	/* a regular file only, checked before a FIFO could block the open */
	fd = gpuenv_fs_open_regular(ctx, AT_FDCWD, path, &st);
	if (fd < 0)
		return fd;
	if (st.st_size == 0) {
		r = gpuenv_fail(ctx, GPUENV_EFORMAT, path, 0, 0, "empty file, not ELF");
		goto out;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		r = gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0, "file too large to map");
		goto out;
	}
	w.fd = fd;
	w.size = (uint64_t)st.st_size;
	if (st.st_size >= 4 && get(&w, 0, 4, &h) == 0 && rd32(h) == GPUENV_FATBIN_MAGIC) {
		/* a bare fatbin (nvcc -fatbin) has no ELF around it */
		r = walk(&w);
		goto out;
	}
	/* the ELF headers through a mapping (a few pages), the fatbin headers
	 * with pread */
	len = (size_t)st.st_size;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		r = gpuenv_fail(ctx, -errno, path, 0, 0, "mmap: %s", strerror(errno));
		goto out;
	}
	madvise(map, len, MADV_RANDOM);
	if ((r = gpuenv_elf_parse(ctx, path, map, len, &elf)) == 0) {
		const char *want = fatbin_section_name(&elf);
		w.section = want;
		for (size_t i = 0; i < elf.nsections && !r; i++) {
			const gpuenv_elf_section_t *sec = &elf.sections[i];
			if (!gpuenv_str_eq_cstr(sec->name, want))
				continue;
			w.base = sec->offset;
			w.size = gpuenv_elf_section_data(&elf, sec).len; /* 0 for NOBITS */
			r = walk(&w);
		}
		gpuenv_elf_close(&elf);
	}
	munmap(map, len);
out:
	close(fd);
	return r;
}

size_t gpuenv_fatbin_arch_name(const gpuenv_fatbin_entry_t *e, const char *prefix, char *out,
	size_t outsz)
{
	int n;

	if (!outsz)
		return 0;
	if (e->variant)
		n = snprintf(out, outsz, "%s%u%c", prefix, e->arch, e->variant);
	else
		n = snprintf(out, outsz, "%s%u", prefix, e->arch);
	if (n < 0) {
		out[0] = '\0';
		return 0;
	}
	return (size_t)n < outsz ? (size_t)n : outsz - 1;
}

/* cuobjdump's stem: the base name less its last extension */
static gpuenv_str_t stem(const char *path)
{
	const char *base = path, *dot = NULL;

	for (const char *p = path; *p; p++)
		if (*p == '/')
			base = p + 1;
	for (const char *p = base; *p; p++)
		if (*p == '.')
			dot = p;
	if (!dot || dot == base)
		return gpuenv_str(base);
	return gpuenv_str_n(base, (size_t)(dot - base));
}

int gpuenv_fatbin_list_cuobjdump(const gpuenv_fatbin_t *fb, const char *path, int kind,
	gpuenv_buf_t *out)
{
	gpuenv_str_t s = stem(path ? path : "");
	const char *what = kind == GPUENV_FATBIN_PTX ? "PTX" : "ELF";
	const char *ext = kind == GPUENV_FATBIN_PTX ? "ptx" : "cubin";
	size_t idx = 0;
	int r;

	for (size_t i = 0; i < fb->n; i++) {
		const gpuenv_fatbin_entry_t *e = &fb->entries[i];
		if (e->kind != kind)
			continue;
		idx++;
		/* CUDA 13.0's cuobjdump names 'a' variants but not 'f' ones */
		r = gpuenv_buf_printf(out, "%s file %4zu: " GPUENV_STR_FMT ".%zu.sm_%u%s.%s\n", what,
			idx, GPUENV_STR_ARG(s), idx, e->arch, e->variant == 'a' ? "a" : "", ext);
		if (r)
			return r;
	}
	return 0;
}

/* The variants the reader produces, in their sort order. */
static int variant_slot(char v)
{
	return v == '\0' ? 0 : v == 'a' ? 1 : v == 'f' ? 2 : -1;
}

size_t gpuenv_fatbin_archs(const gpuenv_fatbin_t *fb, int kind, gpuenv_fatbin_arch_t *out,
	size_t max)
{
	static const char slot_variant[3] = { '\0', 'a', 'f' };
	/* up to 64 distinct (arch, variant) pairs: a sorted array, no clearing
	 * (a real fatbin has a dozen).  Past that, one bit per pair: every u16
	 * arch times three variants is 24 KiB, so a file with any number of
	 * entries costs one pass over them and one over the bits (the old
	 * insertion and recount were quadratic: 50,000 entries took 2.7 s) */
	uint64_t seen[(3u << 16) / 64];
	uint32_t few[64]; /* the distinct bits while there are few (the usual
			     case: a dozen archs), kept sorted */
	size_t total = 0, n = 0, nfew = 0;
	bool many = false;

	for (size_t i = 0; i < fb->n && !many; i++) {
		const gpuenv_fatbin_entry_t *e = &fb->entries[i];
		int s;
		size_t j;
		if (e->kind != kind || (s = variant_slot(e->variant)) < 0)
			continue;
		uint32_t bit = (uint32_t)e->arch * 3 + (uint32_t)s;
		for (j = nfew; j > 0 && few[j - 1] > bit; j--)
			;
		if (j > 0 && few[j - 1] == bit)
			continue;
		if (nfew == sizeof(few) / sizeof(few[0])) {
			many = true;
			break;
		}
		memmove(few + j + 1, few + j, (nfew - j) * sizeof(few[0]));
		few[j] = bit;
		nfew++;
	}
	if (!many) {
		for (size_t j = 0; j < nfew && n < max; j++)
			out[n++] = (gpuenv_fatbin_arch_t){ (uint16_t)(few[j] / 3), slot_variant[few[j] % 3] };
		return nfew;
	}
	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; i < fb->n; i++) {
		const gpuenv_fatbin_entry_t *e = &fb->entries[i];
		int s;
		if (e->kind != kind)
			continue;
		if ((s = variant_slot(e->variant)) < 0)
			continue;
		size_t bit = (size_t)e->arch * 3 + (size_t)s;
		uint64_t m = (uint64_t)1 << (bit & 63);
		if (!(seen[bit >> 6] & m)) {
			seen[bit >> 6] |= m;
			total++;
		}
	}
	/* ascending bit order is (arch, variant) order */
	for (size_t w = 0; w < sizeof(seen) / sizeof(seen[0]) && n < max; w++) {
		for (uint64_t b = seen[w]; b && n < max; b &= b - 1) {
			size_t bit = w * 64 + (size_t)__builtin_ctzll(b);
			out[n++] = (gpuenv_fatbin_arch_t){ (uint16_t)(bit / 3), slot_variant[bit % 3] };
		}
	}
	return total;
}

int gpuenv_fatbin_summary(const gpuenv_fatbin_t *fb, gpuenv_buf_t *out)
{
	static const struct {
		int kind;
		const char *label, *prefix;
	} groups[] = {
		{ GPUENV_FATBIN_CUBIN, "", "sm_" },
		{ GPUENV_FATBIN_PTX, "ptx:", "compute_" },
		{ GPUENV_FATBIN_LTOIR, "lto:", "lto_" },
	};
	gpuenv_fatbin_arch_t archs[64];
	bool any = false;
	int r;

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		size_t n = gpuenv_fatbin_archs(fb, groups[g].kind, archs, 64);
		if (!n)
			continue;
		if (groups[g].label[0]) {
			if ((r = gpuenv_buf_printf(out, "%s%s", any ? " " : "", groups[g].label)))
				return r;
			any = true;
		}
		for (size_t i = 0; i < n && i < 64; i++) {
			gpuenv_fatbin_entry_t e = { .arch = archs[i].arch, .variant = archs[i].variant };
			char name[32];
			gpuenv_fatbin_arch_name(&e, groups[g].prefix, name, sizeof(name));
			if ((r = gpuenv_buf_printf(out, "%s%s", any ? " " : "", name)))
				return r;
			any = true;
		}
		if (n > 64 && (r = gpuenv_buf_printf(out, " (+%zu more)", n - 64)))
			return r;
	}
	if (!any)
		return gpuenv_buf_puts(out, "no CUDA code");
	return 0;
}

static bool cubin_runs(const gpuenv_fatbin_entry_t *e, unsigned cc)
{
	if (e->variant == 'a')
		return e->arch == cc;
	return e->arch / 10 == cc / 10 && e->arch % 10 <= cc % 10;
}

static bool ptx_runs(const gpuenv_fatbin_entry_t *e, unsigned cc)
{
	if (e->variant == 'a')
		return e->arch == cc;
	if (e->variant == 'f')
		return e->arch / 10 == cc / 10 && e->arch % 10 <= cc % 10;
	return e->arch <= cc;
}

int gpuenv_fatbin_runs_on(const gpuenv_fatbin_t *fb, unsigned cc)
{
	bool ptx = false;

	for (size_t i = 0; i < fb->n; i++) {
		const gpuenv_fatbin_entry_t *e = &fb->entries[i];
		if (e->kind == GPUENV_FATBIN_CUBIN && cubin_runs(e, cc))
			return GPUENV_FATBIN_CUBIN;
		if (e->kind == GPUENV_FATBIN_PTX && ptx_runs(e, cc))
			ptx = true;
	}
	return ptx ? GPUENV_FATBIN_PTX : 0;
}
