/* gpuenv fatbin: which CUDA code (sm_XX cubins, PTX, LTO-IR) a binary carries.
 *
 * CUDA binaries hold their device code in ELF sections (.nv_fatbin, and
 * __nv_relfatbin for relocatable device code) as a run of fatbin containers:
 *
 *   container header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1),
 *     u16 header size, u64 size of the entries that follow
 *   entry header, >= 64 bytes: u16 kind (1 PTX, 2 cubin, 8 LTO-IR),
 *     u16 format (0x0101), u32 header size (the payload follows it),
 *     u64 payload size, u32 compressed size, u32 options offset,
 *     u16 minor, u16 major (cubin ABI 1.8, PTX ISA 9.0), u32 arch (75, 90,
 *     100, 121), u32 identifier offset, u32 identifier size, u64 flags,
 *     u64 (unused here), u64 uncompressed size
 *
 * NVIDIA does not document the layout; it was read off CUDA 13.0 binaries
 * and checked against cuobjdump's listings of 14 CUDA libraries.  Only the
 * headers are read: the payloads (cubins, compressed or not) are skipped by
 * their sizes, never decompressed, never read. */
#ifndef GPUENV_FATBIN_H
#define GPUENV_FATBIN_H

#include "gpuenv/core.h"
#include "gpuenv/elf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_FATBIN_MAGIC 0xBA55ED50u

enum gpuenv_fatbin_kind {
	GPUENV_FATBIN_PTX = 1,
	GPUENV_FATBIN_CUBIN = 2,
	GPUENV_FATBIN_LTOIR = 8, /* nvcc -gencode code=lto_XX */
};

/* entry flags */
#define GPUENV_FATBIN_F_64BIT 0x1ull
#define GPUENV_FATBIN_F_DEBUG 0x2ull
#define GPUENV_FATBIN_F_LINUX 0x10ull
#define GPUENV_FATBIN_F_COMPRESS_LZ4 0x2000ull  /* CUDA 11.x compression */
#define GPUENV_FATBIN_F_COMPRESS_ZSTD 0x8000ull /* CUDA 12.8+ compression */
#define GPUENV_FATBIN_F_ARCH_SPECIFIC 0x100000ull /* sm_90a, sm_100a */
#define GPUENV_FATBIN_F_FAMILY 0x200000ull	   /* sm_100f, sm_120f */

typedef struct gpuenv_fatbin_entry {
	uint16_t kind;	       /* enum gpuenv_fatbin_kind, or another value */
	uint16_t arch;	       /* 75, 90, 100, 121: major * 10 + minor */
	char variant;	       /* '\0', 'a' (arch-specific) or 'f' (family) */
	bool compressed;
	uint16_t major, minor; /* cubin: ELF ABI ("code version [1,8]"); PTX: ISA */
	uint32_t container;    /* index of its container, from 0 */
	uint64_t flags;	       /* GPUENV_FATBIN_F_* and bits not understood */
	uint64_t offset;       /* payload offset in the file (or parsed buffer) */
	uint64_t size;	       /* payload bytes as stored (compressed size) */
	uint64_t uncompressed_size; /* 0 when not compressed */
} gpuenv_fatbin_entry_t;

/* The entries of one file, in file order: one array, nothing else. */
typedef struct gpuenv_fatbin {
	gpuenv_ctx_t *ctx;
	size_t n, cap;
	gpuenv_fatbin_entry_t *entries;
	size_t ncontainers;
	size_t nsections;   /* fatbin sections read */
	size_t max_entries; /* cap (GPUENV_ETOOBIG beyond); 0 = 1 << 20 */
} gpuenv_fatbin_t;

GPUENV_API void gpuenv_fatbin_init(gpuenv_fatbin_t *fb, gpuenv_ctx_t *ctx);
GPUENV_API void gpuenv_fatbin_free(gpuenv_fatbin_t *fb);

/* Read the containers in data[0..size) (one section's bytes, or a .fatbin
 * file) and append their entries to fb.  base is added to the entries'
 * payload offsets (the section's file offset).  name (a file name, for
 * messages) and section ("" for a bare fatbin) say where the bytes are from.
 * Zero bytes between containers are skipped.  Errors: GPUENV_EFORMAT with
 * the offset of the damage (entries before it stay in fb),
 * GPUENV_EUNSUPPORTED for a container version other than 1, GPUENV_ETOOBIG,
 * -ENOMEM. */
GPUENV_API int gpuenv_fatbin_parse(gpuenv_fatbin_t *fb, const char *name,
	const char *section, const void *data, size_t size, uint64_t base);

/* Read the fatbin sections of an ELF file: the .nv_fatbin sections (what the
 * CUDA runtime loads and cuobjdump lists), or, in a file without any, the
 * __nv_relfatbin ones (relocatable device code of an object compiled with
 * nvcc -rdc).  A file with neither gives 0 and no entries. */
GPUENV_API int gpuenv_fatbin_read_elf(gpuenv_fatbin_t *fb, const gpuenv_elf_t *elf);

/* Read the entries of the file at path (an ELF file, or a bare fatbin such
 * as nvcc -fatbin writes) into fb: the ELF headers through a read-only
 * mapping, the fatbin headers with one pread each (cheaper than a page
 * fault per header, no payload pages in the RSS, and a file truncated
 * meanwhile gives an error rather than SIGBUS).  Errors as for
 * gpuenv_elf_open and gpuenv_fatbin_parse. */
GPUENV_API int gpuenv_fatbin_open(gpuenv_fatbin_t *fb, const char *path);

/* "sm_90a", "compute_120f", "lto_90" (prefix + arch + variant) into out;
 * returns the length (truncated to outsz - 1). */
GPUENV_API size_t gpuenv_fatbin_arch_name(const gpuenv_fatbin_entry_t *e,
	const char *prefix, char *out, size_t outsz);

/* cuobjdump's listing of kind (GPUENV_FATBIN_CUBIN: --list-elf,
 * GPUENV_FATBIN_PTX: --list-ptx) appended to out, line for line:
 * "ELF file    1: libcurand.so.1.sm_100.cubin".  Names are the file's base
 * name less its last extension, the running number of that kind and the
 * arch; like CUDA 13.0's cuobjdump, 'a' variants are named (sm_90a) and 'f'
 * variants are not (sm_100f is listed as sm_100). */
GPUENV_API int gpuenv_fatbin_list_cuobjdump(const gpuenv_fatbin_t *fb,
	const char *path, int kind, gpuenv_buf_t *out);

/* The distinct archs of entries of kind, sorted (sm_90 < sm_90a < sm_100 <
 * sm_100f), into out[0..max); returns how many there are (may exceed max).
 * Linear in the entries (a bit set over every arch and variant); entries
 * with a variant other than '\0', 'a' and 'f' (the reader writes no other)
 * are not counted. */
typedef struct gpuenv_fatbin_arch {
	uint16_t arch;
	char variant;
} gpuenv_fatbin_arch_t;
GPUENV_API size_t gpuenv_fatbin_archs(const gpuenv_fatbin_t *fb, int kind,
	gpuenv_fatbin_arch_t *out, size_t max);

/* One line for people: "sm_75 sm_80 sm_90a sm_100f ptx: compute_121"
 * ("lto: lto_90" when there is LTO-IR; "no CUDA code" when empty),
 * appended to out without a newline. */
GPUENV_API int gpuenv_fatbin_summary(const gpuenv_fatbin_t *fb, gpuenv_buf_t *out);

/* Can a GPU of compute capability cc (major * 10 + minor: 75, 86, 90, 120)
 * run this code?  A cubin runs on the same major and an equal or higher
 * minor ('a': that exact cc only); PTX is compiled by the driver for any cc
 * at or above its arch ('a': that cc only; 'f': the same major).  Returns
 * the kind that serves it (GPUENV_FATBIN_CUBIN before GPUENV_FATBIN_PTX), or
 * 0 when nothing does. */
GPUENV_API int gpuenv_fatbin_runs_on(const gpuenv_fatbin_t *fb, unsigned cc);

#ifdef __cplusplus
}
#endif
#endif
