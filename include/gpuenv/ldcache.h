/* gpuenv ldcache: glibc's ld.so.cache parsed directly (lib/hw/ldcache.c).
 * Conventions of every struct (see gpuenv/stack.h): results live in the
 * caller's arena; every gpuenv_str_t is NUL-terminated or GPUENV_STR_NULL
 * (unknown); paths are as seen on the probed machine, without ctx->root. */
#ifndef GPUENV_LDCACHE_H
#define GPUENV_LDCACHE_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ld.so.cache ======================================================== */

/* Entry flags as ldconfig writes them: the low byte is the library type
 * (3 = ELF for glibc), the next byte the ABI. */
#define GPUENV_LDCACHE_FLAG_TYPE_MASK 0x00ff
#define GPUENV_LDCACHE_FLAG_ELF_LIBC6 0x0003
#define GPUENV_LDCACHE_FLAG_ABI_MASK 0xff00
#define GPUENV_LDCACHE_FLAG_SPARC_LIB64 0x0100
#define GPUENV_LDCACHE_FLAG_IA64_LIB64 0x0200
#define GPUENV_LDCACHE_FLAG_X8664_LIB64 0x0300
#define GPUENV_LDCACHE_FLAG_S390_LIB64 0x0400
#define GPUENV_LDCACHE_FLAG_POWERPC_LIB64 0x0500
#define GPUENV_LDCACHE_FLAG_X8664_LIBX32 0x0800
#define GPUENV_LDCACHE_FLAG_ARM_LIBHF 0x0900
#define GPUENV_LDCACHE_FLAG_AARCH64_LIB64 0x0a00
#define GPUENV_LDCACHE_FLAG_RISCV_DOUBLE 0x1000

/* Which layouts a cache file held (bits). */
enum {
	GPUENV_LDCACHE_OLD = 1, /* "ld.so-1.7.0" (libc5 / glibc < 2.32 compat part) */
	GPUENV_LDCACHE_NEW = 2, /* "glibc-ld.so.cache1.1" */
};

typedef struct gpuenv_ldcache_entry {
	gpuenv_str_t soname; /* the key: "libcudnn.so.9" */
	gpuenv_str_t path;   /* the value: "/usr/lib/x86_64-linux-gnu/libcudnn.so.9" */
	int32_t flags;	     /* GPUENV_LDCACHE_FLAG_* type | ABI */
	uint32_t osversion;  /* minimum kernel version (0 = any), new format only */
	uint64_t hwcap;	     /* the raw hwcap word, new format only */
	int hwcaps_index;    /* -1: a baseline entry; else the index in
				gpuenv_ldcache_t.hwcaps of the glibc-hwcaps
				subfolder the entry lives in (>= nhwcaps
				when the table does not name it: ld.so
				never picks such an entry) */
	unsigned isa_level;  /* x86 ISA level bits of hwcap (0 = none) */
} gpuenv_ldcache_entry_t;

typedef struct gpuenv_ldcache {
	gpuenv_str_t path; /* the file read ("/etc/ld.so.cache"), or the name given */
	int format;	   /* GPUENV_LDCACHE_OLD | GPUENV_LDCACHE_NEW bits */
	size_t n;
	gpuenv_ldcache_entry_t *entries; /* in file order (ldconfig's sort order)
					    of the new part when present,
					    else of the old part */
	size_t nhwcaps;
	gpuenv_str_t *hwcaps;	/* glibc-hwcaps subfolder names ("x86-64-v3") */
	gpuenv_str_t generator; /* "ldconfig (GNU libc) 2.36", or NULL */
} gpuenv_ldcache_t;

/* Parse an ld.so.cache image held in memory (data need not be
 * NUL-terminated or aligned).  name is used in error messages.  Both the
 * new format (with the glibc 2.33 extension directory and its hwcaps table)
 * and the old "ld.so-1.7.0" one (alone or followed by the new one) are
 * understood; a big-endian cache is refused with GPUENV_EUNSUPPORTED.
 * Strings are copied into the arena.  Corrupt input: GPUENV_EFORMAT with
 * the byte offset in the message. */
GPUENV_API int gpuenv_ldcache_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const void *data, size_t len, const char *name, gpuenv_ldcache_t *out);

/* mmap and parse a cache file; path NULL means "/etc/ld.so.cache".  The
 * path is read under ctx->root.  A missing file gives -ENOENT. */
GPUENV_API int gpuenv_ldcache_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, gpuenv_ldcache_t *out);

/* What ld.so would take from the cache for soname, for a program whose
 * cache flags are flags (see gpuenv_ldcache_flags_for): among the entries
 * with that key and those flags, the one in the best-ranked glibc-hwcaps
 * subfolder named in hwcaps (a NULL-terminated list, best first, of the
 * subfolders the CPU supports; NULL = none), else the first baseline entry.
 * NULL when there is none. */
GPUENV_API const gpuenv_ldcache_entry_t *gpuenv_ldcache_lookup(const gpuenv_ldcache_t *cache,
	gpuenv_str_t soname, int32_t flags, const char *const *hwcaps);

/* The cache flags ld.so accepts for an ELF object of this machine (e_machine)
 * and class (64-bit or not); GPUENV_LDCACHE_FLAG_ELF_LIBC6 alone for
 * machines it does not know. */
GPUENV_API int32_t gpuenv_ldcache_flags_for(unsigned e_machine, bool is64);

/* A short name of the flags' ABI ("x86-64", "i386", "aarch64", "x32",
 * "libc6"; "unknown"). */
GPUENV_API const char *gpuenv_ldcache_abi_name(int32_t flags);

#ifdef __cplusplus
}
#endif
#endif
