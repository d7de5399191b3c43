/* PEP 751 lock files (pylock.toml, pylock.<target>.toml): the data model,
 * a deterministic writer and a strict reader.
 *
 * gpuenv writes one lock per hardware target, so a lock names one wheel
 * per package: the one the target installs.  The target's facts, the torch
 * build chosen and why, and the hash of the manifest inputs go under
 * [tool.gpuenv].  The reader accepts any PEP 751 lock (other tools' too):
 * sdists, archives, directories, VCS entries, several wheels.
 *
 * CONTRACT (cli/lock.c and the installer use exactly this): the structures
 * and functions below.  Their owner may add fields and functions, not
 * change these.
 */
#ifndef GPUENV_PYLOCK_H
#define GPUENV_PYLOCK_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuenv_lock_file {
	const char *name;	 /* file name ("numpy-2.1.0-cp312-...whl") */
	const char *url;	 /* NULL for path-only entries */
	const char *path;	 /* NULL unless a local path */
	int64_t size;		 /* -1: unknown */
	const char *upload_time; /* RFC 3339, NULL: unknown */
	const char *sha256;	 /* hex; the lock requires at least one hash */
	/* other hash algorithms read from a lock, "name=hex" each */
	size_t nother_hashes;
	const char *const *other_hashes;
} gpuenv_lock_file_t;

typedef struct gpuenv_lock_dep {
	const char *name;    /* normalised */
	const char *version; /* NULL: only one package of that name */
} gpuenv_lock_dep_t;

/* [packages.vcs] of another tool's lock (gpuenv writes none itself). */
typedef struct gpuenv_lock_vcs {
	const char *type;	       /* "git", "hg", "svn", "bzr" */
	const char *url;	       /* url or path, at least one */
	const char *path;
	const char *requested_revision; /* NULL: none recorded */
	const char *commit_id;	       /* required */
} gpuenv_lock_vcs_t;

typedef struct gpuenv_lock_package {
	const char *name;	     /* normalised */
	const char *version;	     /* NULL allowed for directories */
	const char *marker;	     /* NULL: always */
	const char *requires_python; /* NULL: none */
	const char *index;	     /* the index URL it came from, or NULL */
	size_t ndeps;
	const gpuenv_lock_dep_t *deps; /* sorted by name */
	size_t nwheels;
	const gpuenv_lock_file_t *wheels;
	const gpuenv_lock_file_t *sdist; /* NULL: none */
	const char *directory;	     /* a directory entry's path, or NULL */
	bool editable;
	/* [packages.tool.gpuenv]: why this build ("torch family from
	 * backend cu126"), NULL: nothing to say */
	const char *reason;
	/* added after the contract: the other sources of PEP 751 (each
	 * excludes every other source), NULL when absent */
	const gpuenv_lock_file_t *archive; /* its name is NULL */
	const gpuenv_lock_vcs_t *vcs;
	const char *subdirectory; /* of the directory, vcs or archive entry */
	unsigned line; /* where its [[packages]] entry begins in the file read; 0: not read */
} gpuenv_lock_package_t;

/* [tool.gpuenv] of a gpuenv lock; all NULL in another tool's lock. */
typedef struct gpuenv_lock_target {
	const char *name;	   /* "t4", or "auto" for the probed machine;
				      the key is "target" in the lock */
	const char *origin;	   /* "declared" / "probe" */
	const char *gpu;	   /* KB name, "none" */
	const char *compute_capability; /* "7.5" */
	const char *driver;
	const char *cuda;	   /* the newest CUDA the driver runs */
	const char *python;	   /* "3.12" */
	const char *platform;	   /* "manylinux_2_28_x86_64" */
	const char *backend;	   /* "cu126", "cpu", NULL: no torch family */
	const char *backend_reason; /* lines citing the KB rows */
	size_t ngroups;
	const char *const *groups;
	size_t nextras;
	const char *const *extras;
	const char *inputs_hash;   /* the manifest's, for staleness */
	const char *kb_date;	   /* the knowledge base's date */
} gpuenv_lock_target_t;

typedef struct gpuenv_lock {
	const char *lock_version;    /* "1.0" */
	const char *created_by;	     /* "gpuenv" */
	const char *requires_python; /* NULL: none */
	size_t nenvironments;
	const char *const *environments; /* marker strings */
	size_t nextras;
	const char *const *extras;
	size_t ngroups;
	const char *const *dependency_groups;
	size_t ndefault_groups;
	const char *const *default_groups;
	size_t npackages;
	const gpuenv_lock_package_t *packages; /* sorted by name, version */
	gpuenv_lock_target_t target;
} gpuenv_lock_t;

/* Largest lock file gpuenv_pylock_parse reads. */
#define GPUENV_PYLOCK_MAX_SIZE ((size_t)64 << 20)

/* The lock as TOML, appended to out: a fixed key order and formatting, so
 * the same lock gives the same bytes.  0 or -ENOMEM / GPUENV_EFORMAT (a
 * value PEP 751 forbids, ctx->err says which).
 * Packages are written sorted by name, then PEP 440 version, then marker;
 * dependencies by name, version; wheels by file name (whatever order the
 * arrays have).  "extras" and "dependency-groups" are always written (PEP
 * 751 asks for an empty array when there are none); environments,
 * default-groups and [tool.gpuenv] only when set.  Everything the reader
 * below refuses is refused here too, so what this writes always reads back
 * equal (gpuenv_pylock_eq). */
GPUENV_API int gpuenv_pylock_write(gpuenv_ctx_t *ctx, const gpuenv_lock_t *lock, gpuenv_buf_t *out);

/* Parse a lock (path for messages).  Strict per PEP 751: unknown
 * lock-version major, missing required keys, a file without a hash are
 * errors with path:line:col.  Everything in arena. */
GPUENV_API int gpuenv_pylock_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, gpuenv_str_t text, gpuenv_lock_t *out);
/* (the reader sorts packages, dependencies and wheels as the writer does;
 * unknown keys are errors in a 1.0 lock and warnings through ctx->log in a
 * newer 1.x one; names, versions, markers, specifiers, wheel file names and
 * sha256 values are checked; attestation identities and other tools' [tool]
 * tables are read past, and not kept.) */

/* Same content, field by field (strings by value, NULL only equal to
 * NULL; arrays in order). */
GPUENV_API bool gpuenv_pylock_eq(const gpuenv_lock_t *a, const gpuenv_lock_t *b);

/* A file entry's file name: its name, else the last part of its path or
 * URL (without query or fragment; an archive has no name key), in arena;
 * NULL: out of memory. */
GPUENV_API const char *gpuenv_lock_file_name(gpuenv_arena_t *arena, const gpuenv_lock_file_t *f);
/* Is the file a wheel (its name, or its path's or URL's, ends in .whl)?
 * An archive entry may be a wheel or an sdist. */
GPUENV_API bool gpuenv_lock_file_is_wheel(const gpuenv_lock_file_t *f);

#ifdef __cplusplus
}
#endif
#endif
