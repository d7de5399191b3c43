/* gpuenv loader: an emulation of glibc's dynamic loader over files read
 * from disk (lib/hw/loader.c): which copy of each DT_NEEDED a binary loads.
 * Conventions of every struct (see gpuenv/stack.h): results live in the
 * caller's arena; every gpuenv_str_t is NUL-terminated or GPUENV_STR_NULL
 * (unknown); paths are as seen on the probed machine, without ctx->root. */
#ifndef GPUENV_LOADER_H
#define GPUENV_LOADER_H

#include "gpuenv/core.h"
#include "gpuenv/ldcache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== dynamic loader emulation ========================================== */

/* What the loader needs from one ELF object. */
typedef struct gpuenv_ld_elf {
	unsigned machine;     /* e_machine (62 x86-64, 183 aarch64, ...) */
	bool is64;	      /* ELFCLASS64 (always: 32-bit files are refused) */
	bool is_dso;	      /* ET_DYN */
	gpuenv_str_t soname;  /* DT_SONAME, or NULL */
	gpuenv_str_t rpath;   /* DT_RPATH as written (colon-separated), or NULL */
	gpuenv_str_t runpath; /* DT_RUNPATH as written, or NULL */
	bool nodeflib;	      /* DF_1_NODEFLIB: no ld.so.cache, no default folders */
	size_t nneeded;
	gpuenv_str_t *needed; /* DT_NEEDED in order */
	size_t nverdefs;
	gpuenv_str_t *verdefs; /* GNU version definitions, base (soname) entry
				  excluded, in file order */
} gpuenv_ld_elf_t;

/* Read the dynamic-linking facts of one ELF file (path is read under
 * ctx->root) with the shared ELF reader (gpuenv/elf.h): mmap, headers only.
 * GPUENV_EFORMAT for a file that is not a valid ELF, GPUENV_EUNSUPPORTED
 * for 32-bit or big-endian ones; an ELF without a dynamic section succeeds
 * with empty lists. */
GPUENV_API int gpuenv_ld_read_elf(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, gpuenv_ld_elf_t *out);

/* The same from an image in memory (for tests and fuzzing). */
GPUENV_API int gpuenv_ld_parse_elf(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const void *data, size_t len, const char *name, gpuenv_ld_elf_t *out);

/* Why the loader picked a path for a DT_NEEDED entry, in ld.so's order. */
enum gpuenv_ldsrc {
	GPUENV_LDSRC_NOTFOUND = 0, /* no search location had it: the load fails */
	GPUENV_LDSRC_LOADED,	   /* an object with this soname/name is already
				      loaded: it is reused */
	GPUENV_LDSRC_DIRECT,	   /* the name holds a '/': used as a path */
	GPUENV_LDSRC_RPATH,	   /* DT_RPATH of the needing object or of an
				      object that loaded it (none with RUNPATH) */
	GPUENV_LDSRC_LD_LIBRARY_PATH,
	GPUENV_LDSRC_RUNPATH,	   /* DT_RUNPATH of the needing object */
	GPUENV_LDSRC_LDCACHE,	   /* /etc/ld.so.cache */
	GPUENV_LDSRC_DEFAULT,	   /* a default system folder */
	GPUENV_LDSRC_COUNT
};

/* "not found", "already loaded", "direct", "rpath", "LD_LIBRARY_PATH",
 * "runpath", "ld.so.cache", "default". */
GPUENV_API const char *gpuenv_ldsrc_name(int how);

typedef struct gpuenv_ld_need {
	gpuenv_str_t name; /* the DT_NEEDED string */
	int how;	   /* enum gpuenv_ldsrc */
	gpuenv_str_t path; /* the file the loader opens; NULL when not found */
	size_t object;	   /* index of that object in the resolution's
			      objects; SIZE_MAX when not found */
	gpuenv_str_t dir;  /* RPATH / RUNPATH / LD_LIBRARY_PATH / default: the
			      folder (after $ORIGIN expansion) that held it */
	gpuenv_str_t rule; /* RPATH / RUNPATH: the element as written
			      ("$ORIGIN/../../nvidia/cudnn/lib") */
	size_t rule_owner; /* RPATH: index of the object whose DT_RPATH matched
			      (the needing one or an ancestor); else SIZE_MAX */
	size_t nshadowed;
	gpuenv_str_t *shadowed; /* with opts.alternatives: other files the same
				   search would have reached later, in order
				   (the copies this choice hides) */
} gpuenv_ld_need_t;

typedef struct gpuenv_ld_object {
	gpuenv_str_t path;   /* as the loader names it (not symlink-resolved) */
	size_t parent;	     /* the object whose DT_NEEDED loaded it first;
				SIZE_MAX for the root */
	unsigned depth;	     /* 0 for the root */
	int error;	     /* 0, or why its dependencies are unknown:
				-errno, GPUENV_EFORMAT */
	gpuenv_ld_elf_t elf; /* its dynamic facts (empty on error) */
	gpuenv_ld_need_t *needs; /* elf.nneeded entries */
} gpuenv_ld_object_t;

typedef struct gpuenv_ld_resolution {
	gpuenv_str_t binary; /* the object resolved (as given) */
	size_t nobjects;
	gpuenv_ld_object_t *objects; /* breadth-first load order; [0] = binary */
	size_t nmissing;	     /* DT_NEEDED entries not found (all objects) */
	bool truncated;		     /* opts.max_objects was reached */
} gpuenv_ld_resolution_t;

typedef struct gpuenv_loader_opts {
	/* LD_LIBRARY_PATH to use; NULL = read it through gpuenv_ctx_getenv */
	const char *ld_library_path;
	/* the parsed ld.so.cache; NULL = no cache (as ld.so with none) */
	const gpuenv_ldcache_t *cache;
	/* glibc-hwcaps subfolders the CPU supports, best first, NULL-terminated;
	 * NULL = none (only baseline folders and cache entries) */
	const char *const *hwcaps;
	/* default system folders, NULL-terminated; NULL = the usual ones for
	 * the binary's machine (Debian multiarch first, then lib64 / lib) */
	const char *const *default_dirs;
	/* $PLATFORM and $LIB for DT_RPATH / DT_RUNPATH; NULL = from machine */
	const char *platform, *lib;
	/* stop after this many objects (0 = 512) */
	size_t max_objects;
	/* fill gpuenv_ld_need_t.shadowed (a few more opens per need) */
	bool alternatives;
} gpuenv_loader_opts_t;

/* Emulate `dlopen(binary)` from a program without RPATH: breadth-first over
 * DT_NEEDED, each name searched as glibc's ld.so does (already-loaded
 * sonames, RPATH chain unless the needing object has RUNPATH,
 * LD_LIBRARY_PATH, RUNPATH, ld.so.cache unless DF_1_NODEFLIB, default
 * folders; glibc-hwcaps subfolders first in each folder; files of another
 * ELF class or machine skipped).  binary is read under ctx->root.  Returns
 * 0 even when some dependencies are missing (see nmissing); an error only
 * when binary itself cannot be read as ELF. */
GPUENV_API int gpuenv_loader_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *binary, const gpuenv_loader_opts_t *opts, gpuenv_ld_resolution_t *out);

#ifdef __cplusplus
}
#endif
#endif
