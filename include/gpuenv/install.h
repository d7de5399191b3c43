/* gpuenv install: wheels turned into unpacked trees, trees staged into a
 * venv's install scheme, and the link modes that put files there.
 *
 *   wheel (hash checked) ──gpuenv_wheel_unpack──> tree (in the cache)
 *   tree ──gpuenv_wheel_stage──> stage dir (per package, in the venv's
 *   transaction folder) ──gpuenv_txn (txn.h)──> the venv
 *
 * A tree is the wheel's content as the zip holds it (root entries, the
 * NAME-VER.dist-info and NAME-VER.data folders), every file verified
 * against the wheel's RECORD, plus a manifest (GPUENV_TREE_MANIFEST) written
 * last that lists each file with its size, mode, sha256 and the stat it had
 * when unpacked: a tree without a manifest is incomplete, a tree whose
 * files no longer match it is damaged (a hardlinked file edited in a venv
 * edits the cache) and is unpacked again.
 *
 * CONTRACT (the cache, the transaction and sync code against exactly
 * this): the structures and functions below.  Their owner (the "wheel"
 * part; link.c belongs to the "cache" part) may add fields and functions,
 * never rename, remove or change the meaning of what is here.
 */
#ifndef GPUENV_INSTALL_H
#define GPUENV_INSTALL_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- install scheme (a venv's; gpuenv/venv.h fills it) ----------------- */

enum gpuenv_scheme_key {
	GPUENV_SCHEME_PURELIB = 0,
	GPUENV_SCHEME_PLATLIB = 1,
	GPUENV_SCHEME_SCRIPTS = 2,
	GPUENV_SCHEME_DATA = 3,
	GPUENV_SCHEME_HEADERS = 4,
	GPUENV_SCHEME_N = 5,
};

/* "purelib", "platlib", "scripts", "data", "headers": the wheel spec's
 * .data/ folder names, and the sub-folders of a stage dir. */
GPUENV_API const char *gpuenv_scheme_key_name(int key);

typedef struct gpuenv_scheme {
	const char *prefix;		   /* the venv, absolute, no trailing '/' */
	const char *dirs[GPUENV_SCHEME_N]; /* absolute: prefix/lib/pythonX.Y/site-packages
					      (both libs), prefix/bin, prefix,
					      prefix/include/site/pythonX.Y */
	const char *python;		   /* absolute interpreter path for shebangs
					      (prefix/bin/python) */
	const char *python_xy;		   /* "3.12" */
} gpuenv_scheme_t;

/* ---- link modes (lib/install/link.c, the "cache" part) ----------------- */

enum gpuenv_link_mode {
	GPUENV_LINK_AUTO = 0,	  /* hardlink; reflink across file systems; copy */
	GPUENV_LINK_HARDLINK = 1, /* only hardlinks (EXDEV is an error) */
	GPUENV_LINK_REFLINK = 2,  /* FICLONE; EOPNOTSUPP is an error */
	GPUENV_LINK_COPY = 3,	  /* copy_file_range / read-write */
};

/* "auto", "hardlink", "reflink", "copy"; -1 for anything else. */
GPUENV_API int gpuenv_link_mode_parse(const char *text);
GPUENV_API const char *gpuenv_link_mode_name(int mode);

/* Put src (relative to src_dirfd) at dst (relative to dst_dirfd; must not
 * exist) by mode.  A copy gets perm (0644 / 0755); a link shares the
 * source's inode.  *used (may be NULL) receives the mode that worked
 * (AUTO falls back hardlink -> reflink -> copy, and remembers nothing).
 * 0 or -errno, recorded in ctx with both paths. */
GPUENV_API int gpuenv_link_file(gpuenv_ctx_t *ctx, int src_dirfd, const char *src, int dst_dirfd,
	const char *dst, unsigned perm, int mode, int *used);

/* Remove path and everything under it, following no symbolic link (a
 * failed unpack or stage, a pruned tree).  0, or -errno of the first thing
 * that could not be removed, recorded with its path. */
GPUENV_API int gpuenv_install_remove(gpuenv_ctx_t *ctx, const char *path);

/* ---- unpacked trees (lib/install/wheel.c, the "wheel" part) ------------ */

#define GPUENV_TREE_MANIFEST ".gpuenv-tree"

typedef struct gpuenv_tree_file {
	const char *path; /* as in the wheel ("foo/__init__.py",
			     "foo-1.0.data/scripts/run") */
	uint64_t size;
	uint32_t perm;	  /* 0644 or 0755 */
	unsigned char sha256[32];
	int64_t mtime_ns; /* the stat after unpacking: the damage check */
	uint64_t ino;
} gpuenv_tree_file_t;

typedef struct gpuenv_tree_script {
	const char *name;   /* "black" (as written in entry_points.txt) */
	const char *module; /* "black" */
	const char *attr;   /* "patched_main"; NULL: none */
	bool gui;	    /* gui_scripts */
} gpuenv_tree_script_t;

typedef struct gpuenv_wheel_tree {
	const char *name;	  /* the METADATA Name */
	const char *version;	  /* the METADATA Version */
	const char *dist_info;	  /* "foo-1.0.dist-info" */
	const char *data_dir;	  /* "foo-1.0.data", NULL: none */
	bool root_is_purelib;	  /* WHEEL Root-Is-Purelib */
	const char *wheel_sha256; /* hex, of the wheel file */
	uint64_t wheel_size;	  /* its bytes; 0: not recorded (a tree of an older gpuenv) */
	size_t nfiles;
	const gpuenv_tree_file_t *files; /* sorted by path (byte order) */
	size_t nscripts;
	const gpuenv_tree_script_t *scripts; /* console then gui, by name */
} gpuenv_wheel_tree_t;

/* Limits against hostile wheels; 0 in a field: the default. */
typedef struct gpuenv_unpack_limits {
	uint64_t max_files;	 /* 0: 200000 */
	uint64_t max_total;	 /* uncompressed bytes; 0: 16 GiB */
	uint64_t max_file;	 /* one entry; 0: 8 GiB */
	/* uncompressed / compressed of an entry, checked only for entries
	 * over 64 MiB: real wheels hold small files at 300:1 and more (the
	 * benchmark's botocore endpoints.json is 337:1); 0: 1000.  Inflating
	 * past the central directory's declared size is always refused. */
	unsigned max_ratio;
} gpuenv_unpack_limits_t;

/* Unpack the wheel at wheel_path (file_name: its file name, for the name
 * check and for messages) into tree_dir, which must not exist (it is
 * created; on failure it is removed again: nothing is left, and nothing is
 * ever written outside it).  Before anything is written the file's
 * sha256 must equal expect_sha256 (hex; NULL: not checked, only the hash
 * is computed).  The zip is read by its central directory with strict
 * checks (no '..', absolute path, backslash or NUL, no symlink entry, no
 * duplicate name (also after case-folding is NOT required: exact), local
 * header consistent with the central one, sizes and CRC, limits); the
 * wheel's RECORD must list every file with a matching sha256 and size
 * (RECORD itself, its signatures and .pyc excepted); WHEEL must be there
 * with a Wheel-Version gpuenv reads; METADATA's name and version must
 * match the file name's.  The manifest is written last.  Errors are
 * GPUENV_EFORMAT (ctx->err: "WHEEL-FILE: ENTRY: what is wrong"),
 * GPUENV_ETOOBIG, GPUENV_EUNSUPPORTED, -errno. */
GPUENV_API int gpuenv_wheel_unpack(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *wheel_path, const char *file_name, const char *expect_sha256,
	const char *tree_dir, const gpuenv_unpack_limits_t *lim, gpuenv_wheel_tree_t *out);

/* The same unpacking in parts, for a caller with threads (the cache runs
 * the parts of every wheel it unpacks on one pool, costliest first, so
 * the largest files of the largest wheels start first):
 *   begin: the wheel mapped and checked as above (the zip, WHEEL,
 *          METADATA, RECORD), the tree folder made, the files cut into
 *          parts; nothing written yet.  Out of it: 0 and *job, or the
 *          failure (a wheel whose sha256 is not expect_sha256 says that
 *          first, whatever else is wrong with it).
 *   part:  part k of gpuenv_wheel_unpack_parts (any thread, each k once;
 *          ctx: that thread's own): part 0 hashes the wheel, the others
 *          write runs of files.  A failure is kept in the job and the
 *          parts after it return at once.
 *   end:   after every part returned (any thread): the manifest when all
 *          succeeded and the hash is the one expected, else the tree
 *          removed and the failure (the hash's first) in ctx; the job is
 *          freed.  The arena and out must live from begin to end.
 * Files may be written before the hash is known; a tree whose wheel is
 * not the one expected is removed before end returns, and nothing of it
 * is kept. */
typedef struct gpuenv_unpack_job gpuenv_unpack_job_t;
GPUENV_API int gpuenv_wheel_unpack_begin(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *wheel_path, const char *file_name, const char *expect_sha256,
	const char *tree_dir, const gpuenv_unpack_limits_t *lim, gpuenv_wheel_tree_t *out,
	gpuenv_unpack_job_t **job);
GPUENV_API size_t gpuenv_wheel_unpack_parts(const gpuenv_unpack_job_t *job);
/* The work of part k, in about bytes written (for ordering) */
GPUENV_API uint64_t gpuenv_wheel_unpack_part_cost(const gpuenv_unpack_job_t *job, size_t k);
GPUENV_API void gpuenv_wheel_unpack_part(gpuenv_unpack_job_t *job, gpuenv_ctx_t *ctx, size_t k);
/* After every part: the wheel is not the one expected (its hash) */
GPUENV_API bool gpuenv_wheel_unpack_hash_bad(const gpuenv_unpack_job_t *job);
GPUENV_API int gpuenv_wheel_unpack_end(gpuenv_unpack_job_t *job, gpuenv_ctx_t *ctx);

/* Read a tree's manifest.  check: also fstatat every file and compare
 * size, mtime and inode with the manifest (cheap; no content is read);
 * GPUENV_EFORMAT "damaged: PATH changed" when one differs or is missing,
 * GPUENV_ENOTFOUND when there is no manifest (an incomplete tree). */
GPUENV_API int gpuenv_wheel_tree_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *tree_dir, bool check, gpuenv_wheel_tree_t *out);

/* Parse a tree manifest's text (what gpuenv_wheel_tree_load reads; file
 * names it in messages).  The manifest lives in the user's cache and is
 * read as untrusted: every path is checked as a zip entry name is, the
 * files must be sorted and unique, every field well formed.  Slices point
 * into a copy in the arena.  GPUENV_EFORMAT (with the line) or
 * GPUENV_ETOOBIG. */
GPUENV_API int gpuenv_wheel_tree_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, gpuenv_str_t text, gpuenv_wheel_tree_t *out);

typedef struct gpuenv_stage_opts {
	int link_mode;		     /* enum gpuenv_link_mode */
	const char *installer;	     /* INSTALLER's content; NULL: "gpuenv" */
	bool requested;		     /* write REQUESTED (a direct dependency) */
	const char *direct_url_json; /* direct_url.json's content (PEP 610), NULL:
					none (an index install writes none) */
	/* byte-compile the staged .py files (pip's --compile): runs
	 * scheme->python -m compileall over the stage with the final paths
	 * embedded (-d / -s -p), the .pyc files listed in RECORD without a
	 * hash, as pip lists them */
	bool compile;
	/* added: a source build's record (gpuenv/sync.h GPUENV_SYNC_BUILD_INFO,
	 * written into the dist-info and listed in RECORD), NULL: none */
	const char *build_info_json;
} gpuenv_stage_opts_t;

typedef struct gpuenv_staged {
	const char *stage_dir;	/* as given */
	const char *dist_info;	/* "foo-1.0.dist-info" (under stage/purelib or
				   stage/platlib) */
	size_t nfiles;		/* files placed, RECORD included */
	int link_mode_used;	/* the weakest mode any file needed */
} gpuenv_staged_t;

/* Stage a tree for one venv: stage_dir (created; must not exist) gets the
 * sub-folders of gpuenv_scheme_key_name, holding the files as they must
 * land in scheme->dirs[key]: root entries under purelib or platlib (by
 * Root-Is-Purelib), NAME.data/<key>/... under <key> (headers under
 * headers/<name>/), files linked from tree_dir by opts->link_mode, except
 * scripts starting "#!python" (rewritten to scheme->python, as copies) and
 * the generated console / gui script launchers (shebang scheme->python,
 * mode 0755).  The dist-info gets INSTALLER, REQUESTED (when asked),
 * direct_url.json (when given) and a RECORD listing every file with its
 * final path relative to the site folder (scripts as "../../../bin/x"),
 * sha256 and size, as pip writes it, so pip can uninstall it. */
GPUENV_API int gpuenv_wheel_stage(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_wheel_tree_t *tree, const char *tree_dir, const gpuenv_scheme_t *scheme,
	const char *stage_dir, const gpuenv_stage_opts_t *opts, gpuenv_staged_t *out);

#ifdef __cplusplus
}
#endif
#endif
