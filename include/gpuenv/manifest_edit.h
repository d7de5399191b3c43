/* gpuenv manifest_edit: pyproject.toml's dependencies and sources changed
 * in the project's own dialect, format-preserving (gpuenv/toml_edit.h):
 * what `gpuenv add`, `remove` and `source` write (docs/workflow.md).
 *
 *   PEP 621 / 735: [project] dependencies, [project.optional-dependencies]
 *                  EXTRA, [dependency-groups] G: PEP 508 strings
 *   Poetry:        [tool.poetry.dependencies] / [tool.poetry.group.G.dependencies]
 *                  NAME = "constraint" or { version = ..., source = ...,
 *                  extras = [...], markers = ..., optional = true },
 *                  [tool.poetry.extras], [[tool.poetry.source]]
 *
 * The dialect is the project's: Poetry when it has [tool.poetry] and no
 * [project] dependencies (a project with both is PEP 621 for its main
 * dependencies, Poetry 2's layout, and Poetry's groups when it has some).
 */
#ifndef GPUENV_MANIFEST_EDIT_H
#define GPUENV_MANIFEST_EDIT_H

#include "gpuenv/core.h"
#include "gpuenv/toml_edit.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gpuenv_manifest_dialect {
	GPUENV_DIALECT_PEP621 = 0,
	GPUENV_DIALECT_POETRY = 1,
};

/* The dialect of the main dependencies and of the groups. */
GPUENV_API int gpuenv_manifest_edit_dialect(const gpuenv_toml_edit_t *ed, bool groups);

typedef struct gpuenv_manifest_add {
	/* what the user typed: a PEP 508 requirement ("numpy>=2",
	 * "torch[opt]>=2; sys_platform == 'linux'"), or Poetry's NAME@CONSTRAINT
	 * ("pillow@^10") */
	const char *req;
	const char *group;  /* NULL: the main dependencies */
	const char *extra;  /* an optional dependency of this extra, or NULL */
	const char *source; /* Poetry: the [[tool.poetry.source]] it comes from */
} gpuenv_manifest_add_t;

/* Add (or replace: the same name, PEP 503-normalised, is updated where it
 * is) one dependency.  *what (in arena) says what was written and where
 * ("[tool.poetry.group.t4.dependencies] pillow = \"^10\"").  0;
 * GPUENV_EREQ (not a requirement; ctx->err has the column), GPUENV_ESPEC
 * (a Poetry constraint that is not one), GPUENV_ENOTFOUND (an unknown
 * source, with the declared ones), GPUENV_EUSAGE (an option the dialect
 * has no place for), or the editor's errors. */
GPUENV_API int gpuenv_manifest_edit_add(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena,
	const gpuenv_manifest_add_t *add, const char **what) GPUENV_NODISCARD;

/* Remove the dependency name (any spelling of it) from the main
 * dependencies and their extras, or from group (a PEP 735 group left empty
 * goes, and so does a Poetry group table).  *what says where it was.
 * GPUENV_ENOTFOUND: not there (ctx->err says where it is, if anywhere) or
 * no such group (with the declared ones). */
GPUENV_API int gpuenv_manifest_edit_remove(gpuenv_toml_edit_t *ed, gpuenv_arena_t *arena, const char *name,
	const char *group, const char **what) GPUENV_NODISCARD;

/* Poetry's sources: add [[tool.poetry.source]] name, url, priority
 * (NULL: Poetry's default, none written) after the last one; GPUENV_EDUPLICATE
 * when the name is declared.  Remove by name: GPUENV_ENOTFOUND when it is
 * not declared, GPUENV_EUSAGE while a dependency still names it. */
GPUENV_API int gpuenv_manifest_edit_source_add(gpuenv_toml_edit_t *ed, const char *name, const char *url,
	const char *priority) GPUENV_NODISCARD;
GPUENV_API int gpuenv_manifest_edit_source_remove(gpuenv_toml_edit_t *ed, const char *name) GPUENV_NODISCARD;

#ifdef __cplusplus
}
#endif
#endif
