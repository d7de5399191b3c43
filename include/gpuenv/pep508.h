/* gpuenv pep508: dependency specifiers (requirements) and environment markers.
 *
 * Contract between modules: these signatures stay; struct layouts may grow.
 * Everything variable-sized lives in the caller's arena. */
#ifndef GPUENV_PEP508_H
#define GPUENV_PEP508_H

#include "gpuenv/core.h"
#include "gpuenv/pep440.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed marker expression (opaque tree, in the arena). */
typedef struct gpuenv_marker gpuenv_marker_t;

/* The environment markers are evaluated against.  Each field is a string
 * (NULL = not given).  extras / dependency_groups are sets used with 'in'. */
typedef struct gpuenv_marker_env {
	const char *os_name;
	const char *sys_platform;
	const char *platform_machine;
	const char *platform_python_implementation;
	const char *platform_release;
	const char *platform_system;
	const char *platform_version;
	const char *python_version;
	const char *python_full_version;
	const char *implementation_name;
	const char *implementation_version;
	const char *extra; /* the 'extra' variable; NULL behaves as "" */
	const char *const *extras; /* NULL-terminated, or NULL */
	const char *const *dependency_groups; /* NULL-terminated, or NULL */
} gpuenv_marker_env_t;

typedef struct gpuenv_requirement {
	gpuenv_str_t name;	  /* as written */
	size_t nextras;
	gpuenv_str_t *extras;	  /* as written, in order, duplicates kept */
	gpuenv_specset_t spec;	  /* empty when absent */
	gpuenv_str_t url;	  /* len 0 when absent */
	gpuenv_marker_t *marker;  /* NULL when absent */
} gpuenv_requirement_t;

/* Parse a PEP 508 requirement with packaging's grammar:
 *   name [extras] (specifier | '(' specifier ')' | '@' URL) [';' marker]
 * A URL runs to the next space or tab, so a marker after it needs a space
 * before the ';'.  The text is copied into the arena; the fields slice the
 * copy.  GPUENV_EREQ with ctx->err (line, column, message) set;
 * GPUENV_ETOOBIG past 1 MiB. */
GPUENV_API int gpuenv_requirement_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_requirement_t *out);

/* packaging's str(Requirement), appended to out: name, sorted unique
 * extras, the specifier set, " @ URL", "; marker". */
GPUENV_API int gpuenv_requirement_format(const gpuenv_requirement_t *r, gpuenv_buf_t *out);

/* packaging's Requirement == Requirement: names and extras compared
 * PEP 503-normalised (extras as sets), specifier sets as sets of canonical
 * clauses, URLs as strings, markers by their str(). */
GPUENV_API int gpuenv_requirement_eq(gpuenv_ctx_t *ctx, const gpuenv_requirement_t *a,
	const gpuenv_requirement_t *b, bool *equal);

/* packaging's SpecifierSet == SpecifierSet: the same set of clauses, each
 * compared as (operator, canonical version): "==1.0" equals "==1.0.0",
 * "~=1.0" does not equal "~=1.0.0"; === and wildcard clauses compare their
 * text. */
GPUENV_API int gpuenv_requirement_specset_eq(gpuenv_ctx_t *ctx, const gpuenv_specset_t *a,
	const gpuenv_specset_t *b, bool *equal);

/* Parse a marker expression alone.  GPUENV_EMARKER with ctx->err set. */
GPUENV_API int gpuenv_marker_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_marker_t **out);

/* Evaluate; *result gets the truth value.  env NULL: the default
 * environment (gpuenv_marker_env_default).  Rules (packaging's): for
 * python_version, python_full_version, implementation_version and
 * platform_release a comparison is PEP 440 ("OP value" parsed as a
 * specifier, pre-releases admitted) when the right side makes a valid
 * specifier; otherwise strings: ==, != and in / not in as usual, <= and >=
 * hold on equality, < and > are false, ~= and === are undefined.  'extra'
 * and the members of extras / dependency_groups compare PEP 503-normalised.
 * Fails (GPUENV_EMARKER, with the atom's position) for an undefined
 * comparison or a variable that env leaves NULL (extra NULL counts as ""). */
GPUENV_API int gpuenv_marker_eval(gpuenv_ctx_t *ctx, const gpuenv_marker_t *m,
	const gpuenv_marker_env_t *env, bool *result);

/* packaging's str(Marker), appended to out.  A value that packaging could
 * not write back faithfully (both quote kinds, a line break, a backslash
 * that would read as an escape) is written with Python escapes instead, so
 * the text always parses back to the same marker. */
GPUENV_API int gpuenv_marker_format(const gpuenv_marker_t *m, gpuenv_buf_t *out);

/* packaging's Marker == Marker: the str() forms are equal.  NULL markers
 * (absent) equal each other only. */
GPUENV_API int gpuenv_marker_eq(gpuenv_ctx_t *ctx, const gpuenv_marker_t *a,
	const gpuenv_marker_t *b, bool *equal);

/* The fixed default environment used when gpuenv_marker_eval gets NULL:
 * CPython 3.11.2 on Linux x86_64 (Debian 12), extra "", extras and
 * dependency_groups unset.  Fixed so results never depend on the host. */
GPUENV_API void gpuenv_marker_env_default(gpuenv_marker_env_t *env);

/* Set a string variable by its PEP 508 name ("python_version", "extra").
 * GPUENV_ENOTFOUND for an unknown name, GPUENV_ETYPE for extras /
 * dependency_groups, which take gpuenv_marker_env_set_list.  The env keeps
 * the pointers: the strings must outlive it. */
GPUENV_API int gpuenv_marker_env_set(gpuenv_marker_env_t *env, const char *name,
	const char *value);
GPUENV_API int gpuenv_marker_env_set_list(gpuenv_marker_env_t *env, const char *name,
	const char *const *values);

/* The i-th marker variable name (canonical spelling), NULL past the end. */
GPUENV_API const char *gpuenv_marker_var_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif
