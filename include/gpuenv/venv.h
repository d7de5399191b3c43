/* gpuenv venv: Python interpreters found on this machine, and virtual
 * environments made for one without starting it.
 *
 * An interpreter's version is read from disk where it can be: the file
 * name (python3.12), the pyvenv.cfg of a venv's interpreter, the
 * lib/pythonX.Y folder and its os.py beside the real binary, a pyenv
 * version folder's name (3.12.1), include/pythonX.Y/patchlevel.h; only when
 * none says it is the interpreter started (`-c` printing sys.version_info,
 * with a timeout), and the answer says which source gave it.
 *
 * CONTRACT (sync and the CLI code against exactly this): the structures
 * and functions below.  Their owner (the "venv" part) may add fields and
 * functions, never rename, remove or change the meaning of these.
 */
#ifndef GPUENV_VENV_H
#define GPUENV_VENV_H

#include "gpuenv/core.h"
#include "gpuenv/install.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuenv_python {
	const char *path;     /* as found or given ("/usr/bin/python3.12") */
	const char *real;     /* symlinks and pyenv shims resolved */
	const char *found_by; /* "--python", "PATH", "pyenv", "/usr/bin" */
	const char *version;  /* "3.12.1", or "3.12" when only that is known */
	const char *version_source; /* "file name", "patchlevel.h", "pyvenv.cfg",
				       "pyenv folder", "started" */
	unsigned major, minor;
	bool free_threaded; /* python3.13t */
	const char *home;   /* the folder of the real binary (pyvenv.cfg home) */
} gpuenv_python_t;

/* Find an interpreter.  want: NULL (the newest found; a free-threaded
 * build only when no other fits), "3.12" / "3.12.1" /
 * "python3.12" (a version or a name, looked up on PATH, in pyenv's
 * versions ($PYENV_ROOT or ~/.pyenv) and /usr/bin, in that order of
 * preference), or a path (contains '/': that file, which must run).
 * "3.13t" / "python3.13t" ask for a free-threaded build (and "3.13" for
 * one that is not).  /usr/bin is looked for under ctx->root when that is
 * set (test trees); the found paths then include the root.
 * fits: a PEP 440 specifier set ("==3.12.*", ">=3.10,<3.13"; NULL: any)
 * the version must satisfy; the first interpreter in preference order that
 * fits wins.  found/nfound (may be NULL): every interpreter seen, in
 * preference order, for the error message and `--json`.  GPUENV_ENOTFOUND
 * when none fits: ctx->err says what was wanted and lists what was found
 * ("found: /usr/bin/python3.11 (3.11.2), ~/.pyenv/versions/3.12.1/bin/python
 * (3.12.1)") with a hint. */
GPUENV_API int gpuenv_python_find(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *want,
	const char *fits, gpuenv_python_t *out, size_t *nfound, gpuenv_python_t **found);

typedef struct gpuenv_venv {
	const char *root;	 /* absolute, no trailing '/' */
	gpuenv_python_t python;	 /* the base interpreter (pyvenv.cfg home + version) */
	gpuenv_scheme_t scheme;	 /* where wheels install */
	const char *site;	 /* = scheme.dirs[GPUENV_SCHEME_PURELIB] */
	const char *bin;	 /* = scheme.dirs[GPUENV_SCHEME_SCRIPTS] */
	/* what gpuenv_venv_create did: "created", "completed" (a create that
	 * was killed half way), "cleared" (CLEAR: emptied and made again),
	 * "kept" (already a venv of that Python); NULL from gpuenv_venv_open */
	const char *action;
	/* what is wrong with its interpreter, NULL when nothing: "bin/python
	 * is missing", "bin/python3 is a link to something that is gone";
	 * gpuenv_venv_create repairs it ("repaired"), sync refuses it */
	const char *broken;
} gpuenv_venv_t;

enum {
	GPUENV_VENV_CLEAR = 1u << 0, /* an existing venv's content is removed first */
	GPUENV_VENV_COPIES = 1u << 1, /* copy the interpreter instead of symlinks */
};

/* Make a venv at dir for py, as `python -m venv --without-pip` does:
 * pyvenv.cfg (home, include-system-site-packages = false, version,
 * executable, command), bin/python, bin/pythonX, bin/pythonX.Y links to the
 * real interpreter, lib/pythonX.Y/site-packages, lib64 -> lib on 64-bit,
 * activate scripts for bash/zsh (activate), fish (activate.fish) and csh
 * (activate.csh).  An existing venv of the same interpreter is reused as it
 * is (not cleared unless asked); an existing folder that is not a venv, or
 * a venv of another Python X.Y, is an error that says so (unless CLEAR).
 * An existing venv whose interpreter links are broken (bin/python removed)
 * is repaired: its links and scripts made again, its packages kept.
 * The venv is described in out as gpuenv_venv_open would. */
GPUENV_API int gpuenv_venv_create(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir,
	const gpuenv_python_t *py, unsigned flags, gpuenv_venv_t *out);

/* Describe an existing venv from its pyvenv.cfg and layout (nothing is
 * started; out->broken says when its interpreter links do not lead to a
 * program).  GPUENV_ENOTFOUND when dir has no pyvenv.cfg, GPUENV_EFORMAT
 * when it cannot be read (the file and line named). */
GPUENV_API int gpuenv_venv_open(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir,
	gpuenv_venv_t *out);

/* Is rel[0..n) (a path relative to a venv's folder) one of the files the
 * venv itself is made of: pyvenv.cfg, bin/python and every bin/pythonX[.Y][t]
 * link, the activate scripts?  No wheel may replace or remove them (the
 * transaction refuses them, as it refuses .gpuenv/). */
GPUENV_API bool gpuenv_venv_own_file(const char *rel, size_t n);

#ifdef __cplusplus
}
#endif
#endif
