/* lib/manifest's private interface: the loader's state, shared by the files
 * of the module (manifest.c: [project], Poetry, sources; targets.c:
 * [tool.gpuenv]; poetry.c: the constraint language; manifest_util.c: the
 * helpers below, which the others call). */
#ifndef GPUENV_MANIFEST_INT_H
#define GPUENV_MANIFEST_INT_H

#include <errno.h>
#include <stdio.h>

#include "gpuenv/manifest.h"
#include "gpuenv/toml.h"

/* caps on what one manifest may declare */
#define MF_MAX_DEPS 20000
#define MF_MAX_GROUPS 1000
#define MF_MAX_SOURCES 256
#define MF_MAX_TARGETS 256
#define MF_MAX_STR 8192

typedef struct mf_load {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	gpuenv_toml_doc_t *doc;
	const char *file;
	const gpuenv_kb_t *kb;
	gpuenv_manifest_t *m;
	/* growing arrays (in the arena) */
	gpuenv_dep_t *deps;
	size_t ndeps, capdeps;
	gpuenv_group_t *groups;
	size_t cap_groups;
	gpuenv_extra_t *extras;
	size_t cap_extras;
	gpuenv_index_source_t *sources;
	size_t cap_sources;
	gpuenv_manifest_source_info_t *source_info;
	size_t cap_source_info;
	const char **warnings;
	size_t cap_warnings;
	bool no_pypi; /* a uv default index or a PDM source named pypi
			 replaces PyPI */
	const char **dialects; /* in the arena, NULL-terminated, 3 at most */
	size_t ndialects;
} mf_load_t;

/* An error at v's position (or the key's when kv is given). */
int mf_err(mf_load_t *L, int code, unsigned line, unsigned col, const char *fmt, ...)
	GPUENV_PRINTF(5, 6);
/* v as a C string in the arena (no NUL inside, at most MF_MAX_STR bytes);
 * what names it in the type error. */
int mf_cstr(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const char **out);
/* A list of strings (an array of them). */
int mf_strs(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const char ***out,
	size_t *n);
/* The PEP 503 normal form of s, in the arena. */
const char *mf_norm(mf_load_t *L, const char *s);
/* Make room for one more element in an arena array. */
void *mf_grow(mf_load_t *L, void *arr, size_t *cap, size_t n, size_t size, size_t max,
	const char *what);
/* Append ", 'name'" (the first without the comma, quoted when quote) to
 * list[0..size) holding *len bytes; a name that does not fit is left out. */
void mf_list_add(char *list, size_t size, size_t *len, const char *name, bool quote);
/* Does the KB have a torch build tagged tag ("cu126")?  tags[0..size):
 * every tag it has, "cu118, cu126, ..." (for the hint). */
bool mf_backend_known(const gpuenv_kb_t *kb, const char *tag, char *tags, size_t size);
/* Fail on a key of t not in known[] (NULL-terminated), suggesting the
 * nearest; where names the table ("[tool.gpuenv.targets.t4]"). */
int mf_check_keys(mf_load_t *L, const gpuenv_toml_table_t *t, const char *const *known,
	const char *where);

/* Add a source (name and url in the arena) read from the table from at
 * (line, col); 0 or the error. */
int mf_add_source(mf_load_t *L, const char *name, const char *url, int prio, bool find_links,
	const char *from, unsigned line, unsigned col);
/* The index of the source named name (case-insensitive), or -1. */
long mf_source_find(const mf_load_t *L, const char *name);
/* A finding that does not stop the load, at (line, col) of the file. */
int mf_warn(mf_load_t *L, unsigned line, unsigned col, const char *fmt, ...) GPUENV_PRINTF(4, 5);
/* Is s one of l[0..n)? */
bool mf_in_list(const char *const *l, size_t n, const char *s);
/* Note that a dialect's tables were read ("uv", "pdm", "poetry"). */
void mf_dialect(mf_load_t *L, const char *name);
/* The direct reference a PEP 508 URL names ("git+https://h/r@v1",
 * "file:///p", "https://h/x.whl"), read from the table from at (line,
 * col); NULL only when memory runs out (recorded). */
gpuenv_direct_t *mf_direct_of_url(mf_load_t *L, const char *url, const char *from, unsigned line,
	unsigned col);
/* A URL's fragment (after its '#'): "subdirectory=", "sha256=" and other
 * hash names into d.  0, or out of memory (recorded). */
int mf_url_fragment(mf_load_t *L, gpuenv_direct_t *d, const char *frag);

/* [[tool.uv.index]] as sources (uv.c): declaration order, explicit ones
 * EXPLICIT, a default = true one DEFAULT (L->no_pypi), the others PRIMARY,
 * as uv asks them */
int mf_uv_indexes(mf_load_t *L, const gpuenv_toml_value_t *uv);
/* [tool.uv.sources] attached to the dependencies read (before the groups
 * are split out) */
int mf_uv_sources(mf_load_t *L, const gpuenv_toml_value_t *uv);
/* [tool.uv] conflicts, environments and required-environments against the
 * declared targets (after [tool.gpuenv]) */
int mf_uv_targets(mf_load_t *L, const gpuenv_toml_value_t *uv);
/* [[tool.pdm.source]] as sources (pdm.c) */
int mf_pdm_sources(mf_load_t *L, const gpuenv_toml_value_t *pdm);

/* [tool.gpuenv] (targets.c) */
bool gpuenv_manifest_backend_valid(const char *s);
int mf_load_gpuenv(mf_load_t *L, const gpuenv_toml_table_t *root);

/* Poetry constraint split at "||" / "|" into PEP 440 sets (poetry.c). */
int gpuenv_manifest_poetry_split(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t c,
	const char ***out, size_t *n);

#endif
