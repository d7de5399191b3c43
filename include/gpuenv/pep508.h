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

/* Parse a PEP 508 requirement.  GPUENV_EREQ with ctx->err (column) set. */
GPUENV_API int gpuenv_requirement_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_requirement_t *out);

/* packaging's str(Requirement) into out. */
GPUENV_API int gpuenv_requirement_format(const gpuenv_requirement_t *r, gpuenv_buf_t *out);

/* Parse a marker expression alone.  GPUENV_EMARKER with ctx->err set. */
GPUENV_API int gpuenv_marker_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t text, gpuenv_marker_t **out);

/* Evaluate; *result gets the truth value.  Fails (GPUENV_EMARKER) only for
 * comparisons PEP 508 leaves undefined. */
GPUENV_API int gpuenv_marker_eval(gpuenv_ctx_t *ctx, const gpuenv_marker_t *m,
	const gpuenv_marker_env_t *env, bool *result);

/* packaging's str(Marker) into out. */
GPUENV_API int gpuenv_marker_format(const gpuenv_marker_t *m, gpuenv_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif
