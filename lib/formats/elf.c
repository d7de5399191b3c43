/* ELF64 little-endian reader: headers, sections by name, the dynamic section.
 *
 * Layouts from the System V gABI (ELF-64 Object File Format) and the LSB's
 * GNU symbol versioning.  All reads go through rd16/rd32/rd64 over
 * bounds-checked offsets: files are untrusted, and unaligned loads are
 * undefined behaviour in C, so fields are copied out with memcpy. */
#include "gpuenv/fs.h"
#include "gpuenv/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define EHDR_SIZE 64
#define SHDR_SIZE 64
#define PHDR_SIZE 56
#define DYN_SIZE 16
#define SHN_XINDEX 0xffff
#define PN_XNUM 0xffff

#define PT_LOAD 1
#define PT_DYNAMIC 2

#define DT_NULL 0
#define DT_NEEDED 1
#define DT_STRTAB 5
#define DT_STRSZ 10
#define DT_SONAME 14
#define DT_RPATH 15
#define DT_RUNPATH 29
#define DT_VERDEF 0x6ffffffc
#define DT_VERDEFNUM 0x6ffffffd
#define DT_VERNEED 0x6ffffffe
#define DT_VERNEEDNUM 0x6fffffff

/* version tables count entries in 16-bit fields; anything above is damage */
#define MAX_VERSIONS 65535

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

/* [off, off+len) lies inside [0, size), without overflow */
static bool in_bounds(uint64_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static int bad(gpuenv_elf_t *elf, gpuenv_ctx_t *ctx, const char *fmt, ...)
	GPUENV_PRINTF(3, 4);

static int bad(gpuenv_elf_t *elf, gpuenv_ctx_t *ctx, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(ctx, GPUENV_EFORMAT, elf->name, 0, 0, "corrupt ELF: %s", msg);
}

static int read_sections(gpuenv_elf_t *elf, gpuenv_ctx_t *ctx, uint64_t shoff,
	uint64_t shnum, unsigned shentsize, uint64_t shstrndx)
{
	const unsigned char *d = elf->data;
	const unsigned char *tab;
	uint64_t strsz = 0;
	const unsigned char *strtab = NULL;

	if (shoff == 0) {
		/* no section header table: legal (a stripped image) */
		return 0;
	}
	if (shentsize != SHDR_SIZE)
		return bad(elf, ctx, "section header size is %u, expected %u", shentsize,
			SHDR_SIZE);
	if (!in_bounds(elf->size, shoff, SHDR_SIZE))
		return bad(elf, ctx,
			"section header table at offset %llu lies beyond the end of the file (%zu bytes)",
			(unsigned long long)shoff, elf->size);
	tab = d + shoff;
	/* extended numbering: the real counts live in section 0 */
	if (shnum == 0)
		shnum = rd64(tab + 32);
	if (shstrndx == SHN_XINDEX)
		shstrndx = rd32(tab + 40);
	if (shnum == 0)
		return 0;
	if (shnum > (elf->size - shoff) / SHDR_SIZE)
		return bad(elf, ctx,
			"section header table (%llu entries at offset %llu) runs past the end of the file (%zu bytes)",
			(unsigned long long)shnum, (unsigned long long)shoff, elf->size);
	elf->sections = gpuenv_calloc(ctx, (size_t)shnum, sizeof(*elf->sections));
	if (!elf->sections)
		return gpuenv_fail(ctx, -ENOMEM, elf->name, 0, 0, "out of memory");
	elf->nsections = (size_t)shnum;
	for (size_t i = 0; i < elf->nsections; i++) {
		const unsigned char *s = tab + i * SHDR_SIZE;
		gpuenv_elf_section_t *sec = &elf->sections[i];

		sec->type = rd32(s + 4);
		sec->flags = rd64(s + 8);
		sec->addr = rd64(s + 16);
		sec->offset = rd64(s + 24);
		sec->size = rd64(s + 32);
		sec->link = rd32(s + 40);
		sec->info = rd32(s + 44);
		sec->addralign = rd64(s + 48);
		sec->entsize = rd64(s + 56);
		sec->name = gpuenv_str_n("", 0);
		if (i == 0 || sec->type == GPUENV_SHT_NULL || sec->type == GPUENV_SHT_NOBITS)
			continue;
		if (!in_bounds(elf->size, sec->offset, sec->size))
			return bad(elf, ctx,
				"section %zu (offset %llu, %llu bytes) runs past the end of the file (%zu bytes)",
				i, (unsigned long long)sec->offset, (unsigned long long)sec->size,
				elf->size);
	}
	if (shstrndx == 0)
		return 0; /* no names */
	if (shstrndx >= shnum)
		return bad(elf, ctx, "section name table index %llu is out of range (%zu sections)",
			(unsigned long long)shstrndx, elf->nsections);
	{
		const gpuenv_elf_section_t *ss = &elf->sections[shstrndx];
		if (ss->type == GPUENV_SHT_NOBITS || ss->type == GPUENV_SHT_NULL)
			return bad(elf, ctx, "section name table (section %llu) has no contents",
				(unsigned long long)shstrndx);
		strtab = d + ss->offset;
		strsz = ss->size;
	}
	for (size_t i = 1; i < elf->nsections; i++) {
		uint32_t off = rd32(tab + i * SHDR_SIZE);
		const unsigned char *nul;

		if (off >= strsz)
			return bad(elf, ctx,
				"section %zu: name offset %u is outside the name table (%llu bytes)", i, off,
				(unsigned long long)strsz);
		nul = memchr(strtab + off, '\0', (size_t)(strsz - off));
		if (!nul)
			return bad(elf, ctx, "section %zu: name runs past the end of the name table", i);
		elf->sections[i].name =
			gpuenv_str_n((const char *)strtab + off, (size_t)(nul - (strtab + off)));
	}
	return 0;
}

static int read_segments(gpuenv_elf_t *elf, gpuenv_ctx_t *ctx, uint64_t phoff,
	uint64_t phnum, unsigned phentsize)
{
	if (phnum == PN_XNUM && elf->nsections > 0)
		phnum = elf->sections[0].info;
	if (phnum == 0 || phoff == 0)
		return 0;
	if (phentsize != PHDR_SIZE)
		return bad(elf, ctx, "program header size is %u, expected %u", phentsize, PHDR_SIZE);
	if (!in_bounds(elf->size, phoff, 0) || phnum > (elf->size - phoff) / PHDR_SIZE)
		return bad(elf, ctx,
			"program header table (%llu entries at offset %llu) runs past the end of the file (%zu bytes)",
			(unsigned long long)phnum, (unsigned long long)phoff, elf->size);
	elf->segments = gpuenv_calloc(ctx, (size_t)phnum, sizeof(*elf->segments));
	if (!elf->segments)
		return gpuenv_fail(ctx, -ENOMEM, elf->name, 0, 0, "out of memory");
	elf->nsegments = (size_t)phnum;
	for (size_t i = 0; i < elf->nsegments; i++) {
		const unsigned char *p = elf->data + phoff + i * PHDR_SIZE;
		gpuenv_elf_segment_t *seg = &elf->segments[i];

		seg->type = rd32(p);
		seg->flags = rd32(p + 4);
		seg->offset = rd64(p + 8);
		seg->vaddr = rd64(p + 16);
		seg->filesz = rd64(p + 32);
		seg->memsz = rd64(p + 40);
		if ((seg->type == PT_LOAD || seg->type == PT_DYNAMIC) &&
			!in_bounds(elf->size, seg->offset, seg->filesz))
			return bad(elf, ctx,
				"program header %zu (offset %llu, %llu bytes) runs past the end of the file (%zu bytes)",
				i, (unsigned long long)seg->offset, (unsigned long long)seg->filesz,
				elf->size);
	}
	return 0;
}

int gpuenv_elf_parse(gpuenv_ctx_t *ctx, const char *name, const void *data, size_t size,
	gpuenv_elf_t *elf)
{
	const unsigned char *d = data;
	int r;

	memset(elf, 0, sizeof(*elf));
	elf->ctx = ctx;
	elf->name = name ? name : "<memory>";
	elf->data = d;
	elf->size = size;
	if (size == 0)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, elf->name, 0, 0, "empty file, not ELF");
	/* not ELF at all is "not a file we read" (a probe skips it quietly),
	 * unlike a damaged ELF file (GPUENV_EFORMAT, worth a warning) */
	if (size < 4 || memcmp(d, "\177ELF", 4) != 0)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, elf->name, 0, 0,
			"not an ELF file (no \\177ELF magic at offset 0)");
	if (size < EHDR_SIZE)
		return bad(elf, ctx, "file is %zu bytes, shorter than the %d-byte ELF header", size,
			EHDR_SIZE);
	if (d[4] != 2 || d[5] != 1) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, elf->name, 0, 0,
			"ELF class %u, data encoding %u: only 64-bit little-endian ELF is read", d[4], d[5]);
		return ctx->err.code;
	}
	if (d[6] != 1)
		return bad(elf, ctx, "ELF identification version %u, expected 1", d[6]);
	elf->type = rd16(d + 16);
	elf->machine = rd16(d + 18);
	elf->eflags = rd32(d + 48);
	if (rd16(d + 52) < EHDR_SIZE)
		return bad(elf, ctx, "ELF header size field is %u, expected %d", rd16(d + 52),
			EHDR_SIZE);
	r = read_sections(elf, ctx, rd64(d + 40), rd16(d + 60), rd16(d + 58), rd16(d + 62));
	if (!r)
		r = read_segments(elf, ctx, rd64(d + 32), rd16(d + 56), rd16(d + 54));
	if (r) {
		gpuenv_elf_close(elf);
		elf->name = name ? name : "<memory>";
	}
	return r;
}

int gpuenv_elf_open(gpuenv_ctx_t *ctx, const char *path, gpuenv_elf_t *elf)
{
	struct stat st;
	void *map;
	int fd, r;

	memset(elf, 0, sizeof(*elf));
	/* a regular file only, checked before a FIFO could block the open */
	fd = gpuenv_fs_open_regular(ctx, AT_FDCWD, path, &st);
	if (fd < 0)
		return fd;
	if (st.st_size == 0) {
		close(fd);
		return gpuenv_fail(ctx, GPUENV_EFORMAT, path, 0, 0, "empty file, not ELF");
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0, "file too large to map");
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	r = -errno;
	close(fd);
	if (map == MAP_FAILED)
		return gpuenv_fail(ctx, r, path, 0, 0, "mmap: %s", strerror(-r));
	/* only headers are read, scattered over the file: no read-ahead of the
	 * payloads between them */
	madvise(map, (size_t)st.st_size, MADV_RANDOM);
	r = gpuenv_elf_parse(ctx, path, map, (size_t)st.st_size, elf);
	if (r) {
		munmap(map, (size_t)st.st_size);
		memset(elf, 0, sizeof(*elf));
		return r;
	}
	elf->mapped = true;
	return 0;
}

void gpuenv_elf_close(gpuenv_elf_t *elf)
{
	if (elf->ctx) {
		gpuenv_free(elf->ctx, elf->sections);
		gpuenv_free(elf->ctx, elf->segments);
	}
	if (elf->mapped && elf->data)
		munmap((void *)elf->data, elf->size);
	memset(elf, 0, sizeof(*elf));
}

const gpuenv_elf_section_t *gpuenv_elf_section(const gpuenv_elf_t *elf, const char *name)
{
	for (size_t i = 0; i < elf->nsections; i++)
		if (gpuenv_str_eq_cstr(elf->sections[i].name, name))
			return &elf->sections[i];
	return NULL;
}

gpuenv_str_t gpuenv_elf_section_data(const gpuenv_elf_t *elf, const gpuenv_elf_section_t *sec)
{
	if (!sec || sec->type == GPUENV_SHT_NOBITS || sec->type == GPUENV_SHT_NULL)
		return gpuenv_str_n((const char *)elf->data, 0);
	return gpuenv_str_n((const char *)elf->data + sec->offset, (size_t)sec->size);
}

/* ---- dynamic section ---- */

struct dynread {
	gpuenv_ctx_t *ctx;
	const gpuenv_elf_t *elf;
	const unsigned char *strtab;
	uint64_t strsz;
};

static int dbad(struct dynread *dr, const char *fmt, ...) GPUENV_PRINTF(2, 3);

static int dbad(struct dynread *dr, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(dr->ctx, GPUENV_EFORMAT, dr->elf->name, 0, 0,
		"corrupt ELF dynamic section: %s", msg);
}

/* file offset of a virtual address, through the PT_LOAD that maps it with
 * at least len bytes from the file; false when none does */
static bool vaddr_to_off(const gpuenv_elf_t *elf, uint64_t va, uint64_t len, uint64_t *off)
{
	for (size_t i = 0; i < elf->nsegments; i++) {
		const gpuenv_elf_segment_t *s = &elf->segments[i];
		if (s->type != PT_LOAD || va < s->vaddr)
			continue;
		uint64_t rel = va - s->vaddr;
		if (!in_bounds(s->filesz, rel, len))
			continue;
		*off = s->offset + rel;
		return true;
	}
	return false;
}

static int dstr(struct dynread *dr, uint64_t off, const char *what, gpuenv_str_t *out)
{
	const unsigned char *nul;

	if (!dr->strtab)
		return dbad(dr, "%s given but no string table (DT_STRTAB)", what);
	if (off >= dr->strsz)
		return dbad(dr, "%s: string offset %llu is outside the string table (%llu bytes)",
			what, (unsigned long long)off, (unsigned long long)dr->strsz);
	nul = memchr(dr->strtab + off, '\0', (size_t)(dr->strsz - off));
	if (!nul)
		return dbad(dr, "%s: string runs past the end of the string table", what);
	*out = gpuenv_str_n((const char *)dr->strtab + off, (size_t)(nul - (dr->strtab + off)));
	return 0;
}

/* Walk .gnu.version_d: count entries (out NULL) or fill out. */
static int walk_verdef(struct dynread *dr, uint64_t off, uint64_t num, gpuenv_str_t *out,
	size_t *count)
{
	const gpuenv_elf_t *elf = dr->elf;
	size_t n = 0;
	int r;

	if (num > MAX_VERSIONS)
		return dbad(dr, "%llu version definitions", (unsigned long long)num);
	for (uint64_t i = 0; i < num; i++) {
		if (!in_bounds(elf->size, off, 20))
			return dbad(dr, "version definition %llu at offset %llu lies outside the file",
				(unsigned long long)i, (unsigned long long)off);
		const unsigned char *v = elf->data + off;
		uint16_t cnt = rd16(v + 6);
		uint32_t aux = rd32(v + 12), next = rd32(v + 16);
		if (rd16(v) != 1)
			return dbad(dr, "version definition %llu has revision %u, expected 1",
				(unsigned long long)i, rd16(v));
		if (cnt > 0) {
			uint64_t a = off + aux;
			if (a < off || !in_bounds(elf->size, a, 8))
				return dbad(dr, "version definition %llu: auxiliary entry outside the file",
					(unsigned long long)i);
			gpuenv_str_t name;
			if ((r = dstr(dr, rd32(elf->data + a), "version definition", &name)))
				return r;
			if (out)
				out[n] = name;
			n++;
		}
		if (next == 0)
			break;
		off += next;
	}
	*count = n;
	return 0;
}

/* Walk .gnu.version_r: count (file, version) pairs (out NULL) or fill out. */
static int walk_verneed(struct dynread *dr, uint64_t off, uint64_t num,
	gpuenv_elf_verneed_t *out, size_t *count)
{
	const gpuenv_elf_t *elf = dr->elf;
	size_t n = 0;
	int r;

	if (num > MAX_VERSIONS)
		return dbad(dr, "%llu version requirements", (unsigned long long)num);
	for (uint64_t i = 0; i < num; i++) {
		if (!in_bounds(elf->size, off, 16))
			return dbad(dr, "version requirement %llu at offset %llu lies outside the file",
				(unsigned long long)i, (unsigned long long)off);
		const unsigned char *v = elf->data + off;
		uint16_t cnt = rd16(v + 2);
		uint32_t next = rd32(v + 12);
		uint64_t a = off + rd32(v + 8);
		gpuenv_str_t file;

		if (rd16(v) != 1)
			return dbad(dr, "version requirement %llu has revision %u, expected 1",
				(unsigned long long)i, rd16(v));
		if ((r = dstr(dr, rd32(v + 4), "version requirement file", &file)))
			return r;
		for (uint16_t j = 0; j < cnt; j++) {
			if (a < off || !in_bounds(elf->size, a, 16))
				return dbad(dr, "version requirement %llu: auxiliary entry outside the file",
					(unsigned long long)i);
			if (n >= MAX_VERSIONS)
				return dbad(dr, "more than %d required versions", MAX_VERSIONS);
			gpuenv_str_t ver;
			if ((r = dstr(dr, rd32(elf->data + a + 8), "version requirement", &ver)))
				return r;
			if (out) {
				out[n].file = file;
				out[n].version = ver;
			}
			n++;
			uint32_t anext = rd32(elf->data + a + 12);
			if (anext == 0)
				break;
			a += anext;
		}
		if (next == 0)
			break;
		off += next;
	}
	*count = n;
	return 0;
}

int gpuenv_elf_dynamic(gpuenv_ctx_t *ctx, const gpuenv_elf_t *elf, gpuenv_arena_t *arena,
	gpuenv_elf_dynamic_t *out)
{
	const gpuenv_elf_segment_t *dyn = NULL;
	struct dynread dr = { ctx, elf, NULL, 0 };
	uint64_t strtab_va = 0, strsz = 0, verdef_va = 0, verdefnum = 0;
	uint64_t verneed_va = 0, verneednum = 0;
	bool has_strtab = false, has_soname = false, has_rpath = false, has_runpath = false;
	uint64_t soname = 0, rpath = 0, runpath = 0;
	size_t ndyn, nneeded = 0;
	int r;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < elf->nsegments; i++)
		if (elf->segments[i].type == PT_DYNAMIC) {
			dyn = &elf->segments[i];
			break;
		}
	if (!dyn)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, elf->name, 0, 0,
			"no dynamic section (PT_DYNAMIC): not a dynamically linked file");
	ndyn = (size_t)(dyn->filesz / DYN_SIZE);
	/* pass 1: the scalar tags, and how many DT_NEEDED */
	for (size_t i = 0; i < ndyn; i++) {
		const unsigned char *e = elf->data + dyn->offset + i * DYN_SIZE;
		uint64_t tag = rd64(e), val = rd64(e + 8);
		if (tag == DT_NULL) {
			ndyn = i;
			break;
		}
		switch (tag) {
		case DT_NEEDED: nneeded++; break;
		case DT_STRTAB: strtab_va = val; has_strtab = true; break;
		case DT_STRSZ: strsz = val; break;
		case DT_SONAME: soname = val; has_soname = true; break;
		case DT_RPATH: rpath = val; has_rpath = true; break;
		case DT_RUNPATH: runpath = val; has_runpath = true; break;
		case DT_VERDEF: verdef_va = val; break;
		case DT_VERDEFNUM: verdefnum = val; break;
		case DT_VERNEED: verneed_va = val; break;
		case DT_VERNEEDNUM: verneednum = val; break;
		default: break;
		}
	}
	if (has_strtab) {
		uint64_t off;
		if (!vaddr_to_off(elf, strtab_va, strsz, &off))
			return dbad(&dr,
				"string table (address 0x%llx, %llu bytes) is not inside a loaded segment",
				(unsigned long long)strtab_va, (unsigned long long)strsz);
		dr.strtab = elf->data + off;
		dr.strsz = strsz;
	}
	if (has_soname && (r = dstr(&dr, soname, "DT_SONAME", &out->soname)))
		return r;
	if (has_rpath && (r = dstr(&dr, rpath, "DT_RPATH", &out->rpath)))
		return r;
	if (has_runpath && (r = dstr(&dr, runpath, "DT_RUNPATH", &out->runpath)))
		return r;
	if (nneeded) {
		out->needed = gpuenv_arena_calloc(arena, nneeded, sizeof(*out->needed));
		if (!out->needed)
			return gpuenv_fail(ctx, -ENOMEM, elf->name, 0, 0, "out of memory");
		for (size_t i = 0; i < ndyn; i++) {
			const unsigned char *e = elf->data + dyn->offset + i * DYN_SIZE;
			if (rd64(e) != DT_NEEDED)
				continue;
			if ((r = dstr(&dr, rd64(e + 8), "DT_NEEDED", &out->needed[out->nneeded])))
				return r;
			out->nneeded++;
		}
	}
	if (verdefnum) {
		uint64_t off;
		size_t n;
		if (!vaddr_to_off(elf, verdef_va, 20, &off))
			return dbad(&dr, "version definitions (address 0x%llx) not inside a loaded segment",
				(unsigned long long)verdef_va);
		if ((r = walk_verdef(&dr, off, verdefnum, NULL, &n)))
			return r;
		if (n) {
			out->verdef = gpuenv_arena_calloc(arena, n, sizeof(*out->verdef));
			if (!out->verdef)
				return gpuenv_fail(ctx, -ENOMEM, elf->name, 0, 0, "out of memory");
			if ((r = walk_verdef(&dr, off, verdefnum, out->verdef, &out->nverdef)))
				return r;
		}
	}
	if (verneednum) {
		uint64_t off;
		size_t n;
		if (!vaddr_to_off(elf, verneed_va, 16, &off))
			return dbad(&dr,
				"version requirements (address 0x%llx) not inside a loaded segment",
				(unsigned long long)verneed_va);
		if ((r = walk_verneed(&dr, off, verneednum, NULL, &n)))
			return r;
		if (n) {
			out->verneed = gpuenv_arena_calloc(arena, n, sizeof(*out->verneed));
			if (!out->verneed)
				return gpuenv_fail(ctx, -ENOMEM, elf->name, 0, 0, "out of memory");
			if ((r = walk_verneed(&dr, off, verneednum, out->verneed, &out->nverneed)))
				return r;
		}
	}
	return 0;
}
