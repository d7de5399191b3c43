/* gpuenv env: the distributions installed in a Python environment, read
 * from disk as importlib.metadata sees them, without starting Python.
 *
 * The one reader of installed environments: the probe (gpuenv/stack.h
 * builds its Python environments on it), doctor and the installer share it.
 * A site folder's entries are *.dist-info folders (METADATA, RECORD) and
 * *.egg-info folders (PKG-INFO, requires.txt) or files (PKG-INFO itself).
 * Files are opened relative to the folder's directory descriptor (openat,
 * fdopendir: a folder renamed or replaced while it is read cannot send the
 * reads elsewhere), only regular files are read (a FIFO cannot block the
 * read), and the headers go through the one header parser,
 * gpuenv_headers_parse (gpuenv/metadata.h).  What cannot be read is not
 * skipped silently: each problem is reported ("path: what is wrong"). */
#ifndef GPUENV_ENV_H
#define GPUENV_ENV_H

#include "gpuenv/core.h"
#include "gpuenv/metadata.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Distributions read from one environment; past it the rest are left out
 * and a problem says so (a real environment has a few hundred). */
#define GPUENV_ENV_MAX_DISTS 20000

typedef struct gpuenv_env_dist {
	gpuenv_str_t name;	 /* Name as written in METADATA (else the folder's) */
	gpuenv_str_t normalized; /* PEP 503 form ("nvidia-cudnn-cu13") */
	gpuenv_str_t version;	 /* Version from METADATA (the folder name's if absent) */
	gpuenv_str_t path;	 /* the .dist-info / .egg-info folder or file */
	gpuenv_str_t entry;	 /* its name in the site folder ("torch-2.11.0.dist-info") */
	size_t site;		 /* index in the sites given to gpuenv_env_read */
	bool egg_info;		 /* .egg-info (PKG-INFO) rather than .dist-info */
	bool is_dir;		 /* a folder (a .egg-info may be a file) */
	bool shadowed;		 /* an earlier site folder has the same name:
				    Python imports that one, not this */
	size_t nrequires;
	gpuenv_str_t *requires; /* Requires-Dist values, verbatim, in order (an
				   egg's requires.txt turned into that form) */
} gpuenv_env_dist_t;

typedef struct gpuenv_env_opts {
	size_t max_dists; /* 0 = GPUENV_ENV_MAX_DISTS */
} gpuenv_env_opts_t;

typedef struct gpuenv_env_list {
	size_t ndists;
	gpuenv_env_dist_t *dists; /* sorted by normalized name, then site order
				     (shadowed copies after the one that wins) */
	size_t nproblems;
	gpuenv_str_t *problems;	  /* "path: what could not be read" */
	bool truncated;		  /* max_dists was reached */
} gpuenv_env_list_t;

/* Read the distributions of the site folders sites[0..nsites) (absolute
 * paths read under ctx->root; every string NUL-terminated, in arena).  A
 * site folder that cannot be listed, a METADATA that cannot be read or
 * parsed (the folder name then gives name and version) are problems, not
 * errors: the return is 0, or -ENOMEM (recorded in ctx). */
GPUENV_API int gpuenv_env_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_str_t *sites,
	size_t nsites, const gpuenv_env_opts_t *opts, gpuenv_env_list_t *out);

/* The distribution of that name (any spelling) that Python imports, or NULL. */
GPUENV_API const gpuenv_env_dist_t *gpuenv_env_find(const gpuenv_env_dist_t *dists, size_t n,
	const char *name);

/* Read and parse the RECORD of a .dist-info distribution (gpuenv/metadata.h
 * gpuenv_record_parse), opened relative to its folder.  -ENOENT when there
 * is none (an egg-info never has one); errors recorded in ctx with the
 * path. */
GPUENV_API int gpuenv_env_read_record(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_env_dist_t *dist, gpuenv_record_t *out);

#ifdef __cplusplus
}
#endif
#endif
