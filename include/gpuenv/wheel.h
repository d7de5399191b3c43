/* gpuenv wheel: wheel and sdist file names, platform compatibility tags, and
 * the ordered list of tags an interpreter supports.
 *
 * References: the binary distribution format spec (PEP 427, wheel file
 * names), platform compatibility tags (PEP 425, PEP 600 manylinux, PEP 656
 * musllinux) and packaging's parse_wheel_filename / sys_tags, which define
 * the behaviour we follow.  Everything variable-sized lives in the caller's
 * arena, except a tag set, which owns its memory. */
#ifndef GPUENV_WHEEL_H
#define GPUENV_WHEEL_H

#include "gpuenv/core.h"
#include "gpuenv/pep440.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tags -------------------------------------------------------------- */

/* One interpreter-abi-platform triple, lower case (as packaging's Tag). */
typedef struct gpuenv_tag {
	gpuenv_str_t interpreter; /* "cp312", "py3" */
	gpuenv_str_t abi;	  /* "cp312", "abi3", "none" */
	gpuenv_str_t platform;	  /* "manylinux_2_17_x86_64", "any" */
} gpuenv_tag_t;

/* Limits that keep hostile names cheap. */
#define GPUENV_WHEEL_NAME_MAX 4096 /* bytes in a file name */
#define GPUENV_TAGS_MAX 4096	   /* tags one compressed tag set may expand to */

enum {
	/* PEP 425: the dotted parts of a compressed tag set must be sorted
	 * (packaging's validate_order=True). */
	GPUENV_TAG_VALIDATE_ORDER = 1u << 0,
};

/* Parse a (possibly compressed) tag set, "py2.py3-none-any", into its
 * expansion: interpreters x abis x platforms, in that nesting order, without
 * duplicates, lower-cased.  Each part must be non-empty and each interpreter
 * an identifier.  GPUENV_EWHEELNAME (ctx->err set) or GPUENV_ETOOBIG. */
GPUENV_API int gpuenv_tag_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, unsigned flags, size_t *ntags, gpuenv_tag_t **tags);

/* "interpreter-abi-platform" appended to out. */
GPUENV_API int gpuenv_tag_format(const gpuenv_tag_t *tag, gpuenv_buf_t *out);

/* Byte-wise order of the formatted tags (strcmp of "i-a-p"). */
GPUENV_API int gpuenv_tag_cmp(const gpuenv_tag_t *a, const gpuenv_tag_t *b);

/* ---- wheel and sdist file names ---------------------------------------- */

typedef struct gpuenv_wheel_name {
	gpuenv_str_t name;	 /* the name part as written ("some_PACKAGE") */
	gpuenv_str_t normalized; /* PEP 503 form ("some-package"), in the arena */
	gpuenv_str_t version_text; /* as written */
	gpuenv_version_t version;
	bool has_build;
	uint64_t build_number; /* "1000abc" -> 1000 and "abc" */
	gpuenv_str_t build_suffix;
	gpuenv_str_t tag_text; /* the compressed tag set as written */
	size_t ntags;
	gpuenv_tag_t *tags; /* expanded, as gpuenv_tag_parse gives them */
} gpuenv_wheel_name_t;

/* Parse a wheel file name ("torch-2.5.1+cu121-cp312-cp312-linux_x86_64.whl";
 * no directory part) as packaging's parse_wheel_filename does.  flags:
 * GPUENV_TAG_VALIDATE_ORDER.  GPUENV_EWHEELNAME with ctx->err (column) set. */
GPUENV_API int gpuenv_wheel_name_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t filename, unsigned flags, gpuenv_wheel_name_t *out);

/* Order of two build tags as installers use it: no build tag sorts first,
 * then by number, then by suffix (byte-wise).  <0, 0, >0. */
GPUENV_API int gpuenv_wheel_build_cmp(const gpuenv_wheel_name_t *a,
	const gpuenv_wheel_name_t *b);

typedef struct gpuenv_sdist_name {
	gpuenv_str_t name;	 /* as written */
	gpuenv_str_t normalized; /* PEP 503 form, in the arena */
	gpuenv_str_t version_text;
	gpuenv_version_t version;
} gpuenv_sdist_name_t;

/* Parse a source distribution file name ("foo-1.0.tar.gz" or ".zip"; the
 * version follows the last '-'), as packaging's parse_sdist_filename.
 * GPUENV_EWHEELNAME with ctx->err set. */
GPUENV_API int gpuenv_sdist_name_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t filename, gpuenv_sdist_name_t *out);

/* ---- targets and supported tags ---------------------------------------- */

enum gpuenv_impl {
	GPUENV_IMPL_CPYTHON = 0,
	GPUENV_IMPL_PYPY = 1,
};

enum gpuenv_os {
	GPUENV_OS_LINUX = 0, /* glibc when libc_major > 0, else only linux_ARCH */
	GPUENV_OS_MUSL = 1,  /* Linux with musl libc_major.libc_minor */
	GPUENV_OS_MACOS = 2, /* os_major.os_minor: 10.9, 14.0 */
	GPUENV_OS_WINDOWS = 3,
};

/* What a wheel has to run on: the interpreter and the platform.  Zero-fill,
 * then set the fields (or use gpuenv_wheel_target_parse).  The GPU side of a
 * target (CUDA variants) will rank on top of the tag order, not inside it. */
typedef struct gpuenv_wheel_target {
	int impl;		/* enum gpuenv_impl */
	unsigned py_major, py_minor; /* 3, 12 */
	bool free_threaded;	/* cp313t: abi cp313t and abi3t instead of abi3 */
	bool debug;		/* a Py_DEBUG build: abi cp312d then cp312 */
	char pypy_abi[32];	/* PyPy's abi tag; "" = "pypy<XY>_pp73" */
	int os;			/* enum gpuenv_os */
	unsigned libc_major, libc_minor; /* glibc 2.35, musl 1.2 */
	unsigned os_major, os_minor;	 /* macOS version */
	char arch[32]; /* as in platform tags: x86_64, aarch64, i686, arm64 (macOS),
			  amd64 / win32 / arm64 (Windows) */
	/* packaging >= 26.3 puts linux_ARCH before the manylinux tags; pip,
	 * uv and earlier packaging put it last (the default here). */
	bool linux_first;
} gpuenv_wheel_target_t;

/* Parse a target spec: "<python>-<platform>" where python is cpXY, cpXYt
 * (free-threaded), cpXYd (debug) or ppXY, and platform a platform tag naming
 * the newest one the target runs: manylinux_2_35_x86_64 (or the legacy
 * aliases manylinux1 / manylinux2010 / manylinux2014), musllinux_1_2_aarch64,
 * linux_x86_64 (no manylinux), macosx_14_0_arm64, win_amd64, win32,
 * win_arm64.  GPUENV_ESYNTAX with ctx->err set. */
GPUENV_API int gpuenv_wheel_target_parse(gpuenv_ctx_t *ctx, gpuenv_str_t spec,
	gpuenv_wheel_target_t *out);

/* The ordered tags a target supports, best first, with a hash index so a
 * resolver can rank thousands of files cheaply. */
typedef struct gpuenv_tagset gpuenv_tagset_t;

/* Build the list packaging.tags.sys_tags() gives on that interpreter and
 * platform (cpython_tags or generic_tags for PyPy, then compatible_tags).
 * Free with gpuenv_tagset_free. */
GPUENV_API int gpuenv_tagset_build(gpuenv_ctx_t *ctx,
	const gpuenv_wheel_target_t *target, gpuenv_tagset_t **out);
GPUENV_API void gpuenv_tagset_free(gpuenv_tagset_t *set);

GPUENV_API size_t gpuenv_tagset_count(const gpuenv_tagset_t *set);
/* The i-th tag ("cp312-cp312-manylinux_2_35_x86_64"), NUL-terminated; NULL
 * past the end. */
GPUENV_API const char *gpuenv_tagset_get(const gpuenv_tagset_t *set, size_t i);

/* Rank of one tag (0 = best) or -1 when the target does not support it.
 * Matching is case-insensitive, as packaging's Tag lower-cases. */
GPUENV_API long gpuenv_tagset_rank(const gpuenv_tagset_t *set, const gpuenv_tag_t *tag);

/* A wheel is compatible when one of its tags is supported; its preference is
 * the best rank among them (lower is better).  -1 = incompatible. */
GPUENV_API long gpuenv_tagset_rank_wheel(const gpuenv_tagset_t *set,
	const gpuenv_wheel_name_t *wheel);

#ifdef __cplusplus
}
#endif
#endif
