/* ldcache.c: /etc/ld.so.cache, read the way glibc's ld.so reads it.
 *
 * Layouts (glibc's sysdeps/generic/dl-cache.h is the reference):
 *  - old: "ld.so-1.7.0", u32 nlibs at offset 12, entries of 12 bytes
 *    {i32 flags; u32 key, value}, string offsets relative to the end of the
 *    entry table;
 *  - new: "glibc-ld.so.cache" "1.1", u32 nlibs, u32 len_strings, u8 flags
 *    (endianness), 3 bytes pad, u32 extension_offset, 3 x u32 unused = 48
 *    bytes, entries of 24 bytes {i32 flags; u32 key, value, osversion; u64
 *    hwcap}, string offsets relative to the start of the new header;
 *  - both: the old part, then the new header at the next 8-byte boundary.
 * The extension directory (glibc >= 2.33): u32 magic 0xeaa42174, u32 count,
 * count x {u32 tag, flags, offset, size} with offsets from the file start;
 * tag 0 = generator string, tag 1 = glibc-hwcaps subfolder names (u32
 * string offsets).  An entry whose hwcap has only bit 62 set in its upper
 * half (ignoring the 10 ISA-level bits) lives in the glibc-hwcaps subfolder
 * numbered by its lower 32 bits.
 *
 * Everything is bounds-checked: the file is untrusted input (fuzzed). */
#include "gpuenv/fs.h"
#include "gpuenv/ldcache.h"
#include "stack_util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HDR 16u
#define OLD_ENTRY 12u
#define NEW_HDR 48u
#define NEW_ENTRY 24u
#define EXT_MAGIC 0xeaa42174u
#define HWCAP_EXT (1ull << 62)
#define ISA_MASK 0x3ffu
#define MAX_ENTRIES (1u << 20)	 /* a real cache has a few thousand */
#define MAX_HWCAPS 64u
#define MAX_CACHE_SIZE (256u << 20)

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* A NUL-terminated string starting at off inside [lo, hi), copied. */
static int get_str(gpuenv_arena_t *a, const unsigned char *data, size_t lo, size_t hi,
	uint64_t off, gpuenv_str_t *out)
{
	const unsigned char *nul;

	if (off < lo || off >= hi)
		return GPUENV_EFORMAT;
	nul = memchr(data + off, '\0', hi - (size_t)off);
	if (!nul)
		return GPUENV_EFORMAT;
	*out = stack_strdup(a, (const char *)data + off, (size_t)(nul - (data + off)));
	return out->ptr ? 0 : -ENOMEM;
}

static int bad(gpuenv_ctx_t *ctx, const char *name, size_t off, const char *what)
{
	return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0,
		"corrupt ld.so.cache at byte %zu: %s", off, what);
}

/* The extension directory: generator string and the glibc-hwcaps table. */
static int parse_ext(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const unsigned char *d, size_t len,
	size_t base, uint32_t ext_off, const char *name, gpuenv_ldcache_t *out)
{
	uint32_t count;
	size_t off = ext_off;

	if (ext_off == 0)
		return 0;
	/* ld.so ignores the whole cache on a malformed directory; we keep the
	 * entries (they are still what ldconfig wrote) and say nothing more */
	if (ext_off % 4 || (uint64_t)off + 8 > len)
		return bad(ctx, name, off, "extension directory out of bounds");
	if (rd32(d + off) != EXT_MAGIC)
		return bad(ctx, name, off, "bad extension magic");
	count = rd32(d + off + 4);
	if ((uint64_t)count * 16 > len - off - 8)
		return bad(ctx, name, off + 4, "extension directory longer than the file");
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *s = d + off + 8 + (size_t)i * 16;
		uint32_t tag = rd32(s), soff = rd32(s + 8), ssize = rd32(s + 12);

		if ((uint64_t)soff + ssize > len)
			return bad(ctx, name, off + 8 + (size_t)i * 16, "extension section out of bounds");
		if (tag == 0 && ssize > 0) {
			size_t n = ssize;
			const unsigned char *nul = memchr(d + soff, '\0', n);
			if (nul)
				n = (size_t)(nul - (d + soff));
			out->generator = stack_strdup(a, (const char *)d + soff, n);
			if (!out->generator.ptr)
				return -ENOMEM;
		} else if (tag == 1) {
			/* glibc drops a misaligned or empty table and keeps going */
			if (ssize == 0 || soff % 4 || ssize % 4)
				continue;
			size_t n = ssize / 4;
			if (n > MAX_HWCAPS)
				return bad(ctx, name, soff, "too many glibc-hwcaps subfolders");
			out->hwcaps = gpuenv_arena_calloc(a, n, sizeof(*out->hwcaps));
			if (!out->hwcaps)
				return -ENOMEM;
			for (size_t k = 0; k < n; k++) {
				int r = get_str(a, d, base, len, (uint64_t)base + rd32(d + soff + 4 * k),
					&out->hwcaps[k]);
				if (r == -ENOMEM)
					return r;
				if (r)
					return bad(ctx, name, soff + 4 * k, "bad glibc-hwcaps name offset");
			}
			out->nhwcaps = n;
		}
	}
	return 0;
}

static int parse_new(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const unsigned char *d, size_t len,
	size_t base, const char *name, gpuenv_ldcache_t *out)
{
	uint32_t nlibs, flags8;
	size_t table;
	int r;

	if (len < base || len - base < NEW_HDR)
		return bad(ctx, name, base, "truncated header");
	nlibs = rd32(d + base + 20);
	flags8 = d[base + 28];
	if ((flags8 & 3) == 1)
		return bad(ctx, name, base + 28, "ldconfig marked the cache invalid");
	if ((flags8 & 3) == 3)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, name, 0, 0,
			"big-endian ld.so.cache: not supported");
	if (nlibs > MAX_ENTRIES)
		return bad(ctx, name, base + 20, "too many entries");
	table = base + NEW_HDR;
	if ((uint64_t)nlibs * NEW_ENTRY > len - table)
		return bad(ctx, name, base + 20, "entry table longer than the file");
	out->entries = gpuenv_arena_calloc(a, nlibs ? nlibs : 1, sizeof(*out->entries));
	if (!out->entries)
		return -ENOMEM;
	for (uint32_t i = 0; i < nlibs; i++) {
		const unsigned char *e = d + table + (size_t)i * NEW_ENTRY;
		gpuenv_ldcache_entry_t *x = &out->entries[i];
		uint32_t hi;

		x->flags = (int32_t)rd32(e);
		x->osversion = rd32(e + 12);
		x->hwcap = rd64(e + 16);
		x->hwcaps_index = -1;
		hi = (uint32_t)(x->hwcap >> 32);
		x->isa_level = hi & ISA_MASK;
		if ((hi & ~ISA_MASK) == (uint32_t)(HWCAP_EXT >> 32)) {
			uint32_t idx = (uint32_t)x->hwcap;
			/* an index past the table: ld.so would never pick it */
			x->hwcaps_index = idx < MAX_HWCAPS ? (int)idx : (int)MAX_HWCAPS;
		}
		if ((r = get_str(a, d, base, len, (uint64_t)base + rd32(e + 4), &x->soname)) ||
			(r = get_str(a, d, base, len, (uint64_t)base + rd32(e + 8), &x->path))) {
			if (r == -ENOMEM)
				return r;
			return bad(ctx, name, table + (size_t)i * NEW_ENTRY, "string offset out of bounds");
		}
	}
	out->n = nlibs;
	out->format |= GPUENV_LDCACHE_NEW;
	return parse_ext(ctx, a, d, len, base, rd32(d + base + 32), name, out);
}

static int parse_cache(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const void *data,
	size_t len, const char *name, gpuenv_ldcache_t *out)
{
	const unsigned char *d = data;
	int r;

	memset(out, 0, sizeof(*out));
	if (!name)
		name = "ld.so.cache";
	out->path = stack_strdup(arena, name, strlen(name));
	if (!out->path.ptr)
		return -ENOMEM;
	if (len >= sizeof(NEW_MAGIC) - 1 && memcmp(d, NEW_MAGIC, sizeof(NEW_MAGIC) - 1) == 0)
		return parse_new(ctx, arena, d, len, 0, name, out);
	if (len >= sizeof(OLD_MAGIC) - 1 && memcmp(d, OLD_MAGIC, sizeof(OLD_MAGIC) - 1) == 0) {
		uint32_t nlibs;
		size_t strtab, newoff;

		if (len < OLD_HDR)
			return bad(ctx, name, 0, "truncated header");
		nlibs = rd32(d + 12);
		if (nlibs > MAX_ENTRIES || (uint64_t)nlibs * OLD_ENTRY > len - OLD_HDR)
			return bad(ctx, name, 12, "entry table longer than the file");
		strtab = OLD_HDR + (size_t)nlibs * OLD_ENTRY;
		newoff = (strtab + 7) & ~(size_t)7;
		/* glibc 2.2 to 2.31 wrote the new format right after the old:
		 * the new one is what ld.so uses then */
		if (newoff <= len && len - newoff >= sizeof(NEW_MAGIC) - 1 &&
			memcmp(d + newoff, NEW_MAGIC, sizeof(NEW_MAGIC) - 1) == 0) {
			r = parse_new(ctx, arena, d, len, newoff, name, out);
			out->format |= GPUENV_LDCACHE_OLD;
			return r;
		}
		out->entries = gpuenv_arena_calloc(arena, nlibs ? nlibs : 1, sizeof(*out->entries));
		if (!out->entries)
			return -ENOMEM;
		for (uint32_t i = 0; i < nlibs; i++) {
			const unsigned char *e = d + OLD_HDR + (size_t)i * OLD_ENTRY;
			gpuenv_ldcache_entry_t *x = &out->entries[i];

			x->flags = (int32_t)rd32(e);
			x->hwcaps_index = -1;
			if ((r = get_str(arena, d, strtab, len, (uint64_t)strtab + rd32(e + 4), &x->soname)) ||
				(r = get_str(arena, d, strtab, len, (uint64_t)strtab + rd32(e + 8), &x->path))) {
				if (r == -ENOMEM)
					return r;
				return bad(ctx, name, OLD_HDR + (size_t)i * OLD_ENTRY,
					"string offset out of bounds");
			}
		}
		out->n = nlibs;
		out->format = GPUENV_LDCACHE_OLD;
		return 0;
	}
	return gpuenv_fail(ctx, GPUENV_EFORMAT, name, 0, 0,
		"not an ld.so.cache (no \"glibc-ld.so.cache1.1\" or \"ld.so-1.7.0\" magic)");
}

int gpuenv_ldcache_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const void *data,
	size_t len, const char *name, gpuenv_ldcache_t *out)
{
	int r = parse_cache(ctx, arena, data, len, name, out);

	/* the helpers above return -ENOMEM bare: recorded here, once */
	return r == -ENOMEM ? gpuenv_oom(ctx, "reading ld.so.cache") : r;
}

int gpuenv_ldcache_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_ldcache_t *out)
{
	char full[PATH_MAX];
	struct stat st;
	void *map;
	int fd, r;

	memset(out, 0, sizeof(*out));
	if (!path)
		path = "/etc/ld.so.cache";
	if (!stack_rooted(ctx, path, full, sizeof(full)))
		return gpuenv_fail(ctx, -ENAMETOOLONG, path, 0, 0, "path too long");
	/* found by itself under --root: a FIFO there must not block the probe */
	fd = gpuenv_fs_open_regular(NULL, AT_FDCWD, full, &st);
	if (fd < 0)
		return gpuenv_fail(ctx, fd, path, 0, 0, "%s", fd == GPUENV_EFORMAT
			? "not a regular file" : strerror(-fd));
	if ((uint64_t)st.st_size > MAX_CACHE_SIZE) {
		close(fd);
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0, "%lld bytes: too big for an ld.so.cache",
			(long long)st.st_size);
	}
	if (st.st_size == 0) {
		close(fd);
		return gpuenv_fail(ctx, GPUENV_EFORMAT, path, 0, 0, "empty file");
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "mmap: %s", strerror(errno));
	r = gpuenv_ldcache_parse(ctx, arena, map, (size_t)st.st_size, path, out);
	munmap(map, (size_t)st.st_size);
	return r;
}

const gpuenv_ldcache_entry_t *gpuenv_ldcache_lookup(const gpuenv_ldcache_t *cache,
	gpuenv_str_t soname, int32_t flags, const char *const *hwcaps)
{
	const gpuenv_ldcache_entry_t *best = NULL;
	size_t best_rank = SIZE_MAX; /* 0 = best hwcaps subfolder; SIZE_MAX-1 = baseline */

	if (!cache)
		return NULL;
	for (size_t i = 0; i < cache->n; i++) {
		const gpuenv_ldcache_entry_t *e = &cache->entries[i];
		size_t rank;

		if (!gpuenv_str_eq(e->soname, soname))
			continue;
		/* x86-64 and the other 64-bit ports accept only their own ABI;
		 * the generic rule also takes plain "ELF" (1) entries */
		if (e->flags != flags && !((flags & GPUENV_LDCACHE_FLAG_ABI_MASK) == 0 &&
			(e->flags == 1 || e->flags == GPUENV_LDCACHE_FLAG_ELF_LIBC6)))
			continue;
		if (e->hwcaps_index >= 0) {
			if (!hwcaps || (size_t)e->hwcaps_index >= cache->nhwcaps)
				continue;
			rank = SIZE_MAX;
			for (size_t k = 0; hwcaps[k]; k++)
				if (gpuenv_str_eq_cstr(cache->hwcaps[e->hwcaps_index], hwcaps[k])) {
					rank = k;
					break;
				}
			if (rank == SIZE_MAX)
				continue;
		} else {
			/* legacy hwcap bits (pre-2.37 "tls", "sse2" folders): ld.so
			 * no longer uses them; keep such entries out */
			if ((e->hwcap & 0xffffffffu) != 0 && (e->hwcap >> 32) == 0)
				continue;
			rank = SIZE_MAX - 1;
		}
		if (rank < best_rank) {
			best = e;
			best_rank = rank;
		}
	}
	return best;
}

int32_t gpuenv_ldcache_flags_for(unsigned e_machine, bool is64)
{
	switch (e_machine) {
	case 62: /* EM_X86_64 */
		return GPUENV_LDCACHE_FLAG_ELF_LIBC6 |
			(is64 ? GPUENV_LDCACHE_FLAG_X8664_LIB64 : GPUENV_LDCACHE_FLAG_X8664_LIBX32);
	case 183: /* EM_AARCH64 */
		return is64 ? GPUENV_LDCACHE_FLAG_ELF_LIBC6 | GPUENV_LDCACHE_FLAG_AARCH64_LIB64
			    : GPUENV_LDCACHE_FLAG_ELF_LIBC6;
	case 21: /* EM_PPC64 */
		return GPUENV_LDCACHE_FLAG_ELF_LIBC6 | GPUENV_LDCACHE_FLAG_POWERPC_LIB64;
	case 22: /* EM_S390 */
		return GPUENV_LDCACHE_FLAG_ELF_LIBC6 | (is64 ? GPUENV_LDCACHE_FLAG_S390_LIB64 : 0);
	case 243: /* EM_RISCV, lp64d */
		return is64 ? GPUENV_LDCACHE_FLAG_ELF_LIBC6 | GPUENV_LDCACHE_FLAG_RISCV_DOUBLE
			    : GPUENV_LDCACHE_FLAG_ELF_LIBC6;
	default: /* i386, 32-bit arm soft-float and the rest */
		return GPUENV_LDCACHE_FLAG_ELF_LIBC6;
	}
}

const char *gpuenv_ldcache_abi_name(int32_t flags)
{
	if ((flags & GPUENV_LDCACHE_FLAG_TYPE_MASK) != GPUENV_LDCACHE_FLAG_ELF_LIBC6 &&
		(flags & GPUENV_LDCACHE_FLAG_TYPE_MASK) != 1)
		return "unknown";
	switch (flags & GPUENV_LDCACHE_FLAG_ABI_MASK) {
	case 0: return "libc6";
	case GPUENV_LDCACHE_FLAG_SPARC_LIB64: return "sparc64";
	case GPUENV_LDCACHE_FLAG_IA64_LIB64: return "ia64";
	case GPUENV_LDCACHE_FLAG_X8664_LIB64: return "x86-64";
	case GPUENV_LDCACHE_FLAG_S390_LIB64: return "s390x";
	case GPUENV_LDCACHE_FLAG_POWERPC_LIB64: return "ppc64";
	case GPUENV_LDCACHE_FLAG_X8664_LIBX32: return "x32";
	case GPUENV_LDCACHE_FLAG_ARM_LIBHF: return "armhf";
	case GPUENV_LDCACHE_FLAG_AARCH64_LIB64: return "aarch64";
	case GPUENV_LDCACHE_FLAG_RISCV_DOUBLE: return "riscv64-lp64d";
	default: return "unknown";
	}
}
