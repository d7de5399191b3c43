/* gpuenv elf: a validating reader for 64-bit little-endian ELF files.
 *
 * Files are mapped read-only (mmap) and only the headers asked for are read,
 * so listing a 500 MB library touches a few pages.  Every offset and size is
 * checked against the file before it is used; a damaged file gives
 * GPUENV_EFORMAT with the file name and what is wrong, never a crash.  Names
 * and strings are slices into the mapping: valid until gpuenv_elf_close.
 *
 * 32-bit and big-endian files give GPUENV_EUNSUPPORTED (gpuenv runs on
 * x86_64 and aarch64 hosts, whose libraries are ELF64 little-endian). */
#ifndef GPUENV_ELF_H
#define GPUENV_ELF_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Section types and dynamic tags the readers use (values from the ELF gABI
 * and the GNU extensions). */
enum {
	GPUENV_SHT_NULL = 0,
	GPUENV_SHT_STRTAB = 3,
	GPUENV_SHT_DYNAMIC = 6,
	GPUENV_SHT_NOBITS = 8,
	GPUENV_SHT_GNU_VERDEF = 0x6ffffffd,
	GPUENV_SHT_GNU_VERNEED = 0x6ffffffe,
};

enum {
	GPUENV_ET_REL = 1,
	GPUENV_ET_EXEC = 2,
	GPUENV_ET_DYN = 3,
};

typedef struct gpuenv_elf_section {
	gpuenv_str_t name; /* into the mapping; "" when the section has none */
	uint32_t type;	   /* GPUENV_SHT_* or another sh_type */
	uint64_t flags;
	uint64_t addr;
	uint64_t offset; /* file offset */
	uint64_t size;	 /* sh_size; offset + size <= file size was checked,
			  * except for SHT_NOBITS, which has no bytes in the file */
	uint32_t link, info;
	uint64_t addralign, entsize;
} gpuenv_elf_section_t;

typedef struct gpuenv_elf_segment {
	uint32_t type; /* PT_LOAD = 1, PT_DYNAMIC = 2, ... */
	uint32_t flags;
	uint64_t offset, vaddr, filesz, memsz; /* offset + filesz checked */
} gpuenv_elf_segment_t;

typedef struct gpuenv_elf {
	const char *name; /* for messages: the path, or the name given */
	const unsigned char *data;
	size_t size;
	uint16_t type;	  /* GPUENV_ET_* */
	uint16_t machine; /* e_machine: 62 x86_64, 183 aarch64, 190 CUDA */
	uint32_t eflags;
	size_t nsections;
	gpuenv_elf_section_t *sections; /* nsections entries (ctx memory) */
	size_t nsegments;
	gpuenv_elf_segment_t *segments; /* nsegments entries (ctx memory) */
	/* private */
	gpuenv_ctx_t *ctx;
	bool mapped;
} gpuenv_elf_t;

/* Map the file at path and read its ELF, section and program headers.
 * Errors: -errno for open/stat/mmap failures, GPUENV_EFORMAT for files that
 * are empty, not ELF or damaged, GPUENV_EUNSUPPORTED for 32-bit or
 * big-endian ELF; ctx->err says what and where.  On error nothing needs to
 * be closed.  path is kept as elf->name: it must outlive elf. */
GPUENV_API int gpuenv_elf_open(gpuenv_ctx_t *ctx, const char *path,
	gpuenv_elf_t *elf);

/* The same over bytes already in memory (they must outlive elf; they are
 * not copied).  name is used in messages and kept, like the bytes. */
GPUENV_API int gpuenv_elf_parse(gpuenv_ctx_t *ctx, const char *name,
	const void *data, size_t size, gpuenv_elf_t *elf);

/* Release what open/parse allocated (and the mapping).  Safe on a zeroed
 * struct and after a failed open. */
GPUENV_API void gpuenv_elf_close(gpuenv_elf_t *elf);

/* The first section called name, or NULL. */
GPUENV_API const gpuenv_elf_section_t *gpuenv_elf_section(const gpuenv_elf_t *elf,
	const char *name);

/* A section's bytes (empty for SHT_NOBITS).  The bounds were checked when the
 * file was read, so this cannot fail. */
GPUENV_API gpuenv_str_t gpuenv_elf_section_data(const gpuenv_elf_t *elf,
	const gpuenv_elf_section_t *sec);

/* ---- the dynamic section ------------------------------------------------
 * What the dynamic loader reads: DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH,
 * and the GNU symbol versions a library defines (.gnu.version_d: its own
 * name first, then version nodes such as "libcudart.so.13") and requires
 * from others (.gnu.version_r: "GLIBC_2.34" from "libc.so.6").  Read
 * through the program headers (PT_DYNAMIC and the PT_LOAD that hold
 * DT_STRTAB), as the loader does, so stripped section tables do not
 * matter. */
typedef struct gpuenv_elf_verneed {
	gpuenv_str_t file;    /* the library the version is required from */
	gpuenv_str_t version; /* "GLIBC_2.34", "libcudart.so.12" */
} gpuenv_elf_verneed_t;

typedef struct gpuenv_elf_dynamic {
	gpuenv_str_t soname; /* ptr NULL when absent */
	gpuenv_str_t rpath;
	gpuenv_str_t runpath;
	size_t nneeded;
	gpuenv_str_t *needed; /* in file order */
	size_t nverdef;
	gpuenv_str_t *verdef; /* defined version names, in file order */
	size_t nverneed;
	gpuenv_elf_verneed_t *verneed;
} gpuenv_elf_dynamic_t;

/* Read the dynamic section into out (arrays in arena, strings into the
 * mapping).  A file without PT_DYNAMIC (an object file, a static
 * executable) gives GPUENV_ENOTFOUND; damaged tables GPUENV_EFORMAT. */
GPUENV_API int gpuenv_elf_dynamic(gpuenv_ctx_t *ctx, const gpuenv_elf_t *elf,
	gpuenv_arena_t *arena, gpuenv_elf_dynamic_t *out);

#ifdef __cplusplus
}
#endif
#endif
