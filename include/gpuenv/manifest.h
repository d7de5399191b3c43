/* The project manifest: pyproject.toml with [project] (PEP 621),
 * [dependency-groups] (PEP 735), Poetry's tables as Poetry users write
 * them, and [tool.gpuenv] (torch backend, hardware targets).
 *
 * Every dependency comes out as a PEP 508 requirement (Poetry's caret,
 * tilde, wildcard and multiple-constraint forms converted the way Poetry
 * converts them) with the Poetry extras that go with it: the source it
 * must come from, optional, the group.
 *
 * CONTRACT (lib/resolve/provider.c and cli/lock.c use exactly this): the
 * structures and functions below.  Their owner may add fields and
 * functions, not change these.
 */
#ifndef GPUENV_MANIFEST_H
#define GPUENV_MANIFEST_H

#include "gpuenv/core.h"
#include "gpuenv/facts.h"
#include "gpuenv/index.h"
#include "gpuenv/kb.h"
#include "gpuenv/pep508.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A direct reference: a dependency that does not come from an index
 * (Poetry's path / develop / git / url keys, uv's path / editable / git /
 * url / workspace sources, a PEP 508 "name @ URL").  The manifest reads
 * them; the lock refuses them (file:line:col) until it can lock them. */
enum gpuenv_direct_kind {
	GPUENV_DIRECT_PATH = 1,	 /* a local folder, wheel or sdist */
	GPUENV_DIRECT_GIT,	 /* a git repository at a ref */
	GPUENV_DIRECT_URL,	 /* an archive (wheel, sdist) by URL */
	GPUENV_DIRECT_WORKSPACE, /* uv's { workspace = true } */
};

typedef struct gpuenv_direct {
	int kind;		/* enum gpuenv_direct_kind */
	const char *path;	/* PATH: as written (relative: to the
				   manifest's folder) */
	const char *url;	/* GIT: the repository (without "git+"); URL:
				   the archive */
	const char *rev, *tag, *branch; /* GIT: the ref asked, at most one set */
	const char *subdirectory; /* GIT, URL: the project inside, or NULL */
	/* URL: the "#sha256=HEX" of the URL's fragment (as written, checked by
	 * the lock), or NULL; hash_other: the name of another hash the
	 * fragment gives ("md5"), which the lock refuses (it checks sha256) */
	const char *sha256, *hash_other;
	bool editable;		/* uv editable = true, Poetry develop = true */
	const char *from;	/* the table it was read from
				   ("tool.uv.sources", "tool.poetry.dependencies",
				   "project.dependencies") */
	unsigned line, col;	/* where it is written */
} gpuenv_direct_t;

/* One of uv's sources of a dependency (a [tool.uv.sources] entry, or one
 * entry of a list of them): it applies to a target when its marker holds
 * there and its extra / group is the one the dependency comes through. */
typedef struct gpuenv_dep_source {
	const char *index;		/* a source's name (the manifest's
					   sources), or NULL for a direct
					   reference */
	const gpuenv_direct_t *direct;	/* or NULL */
	const gpuenv_marker_t *marker;	/* NULL: always */
	const char *marker_text;	/* as written, or NULL */
	const char *extra, *group;	/* normalised, or NULL */
	unsigned line, col;
} gpuenv_dep_source_t;

typedef struct gpuenv_dep {
	gpuenv_requirement_t req; /* PEP 508; marker includes Poetry's
				     `python` and `markers` */
	const char *name;	  /* normalised */
	const char *source;	  /* the source's name it must come from, or
				     NULL */
	bool optional;		  /* only through an extra */
	const char *group;	  /* NULL: main dependencies */
	unsigned line, col;	  /* where it is declared (for messages) */
	/* added by the manifest module: */
	const char *extra;	  /* the [project.optional-dependencies] extra
				     that brings it (normalised), or NULL
				     (Poetry's optional deps are named by
				     gpuenv_extra_t.names) */
	bool allow_prereleases;	  /* Poetry's allow-prereleases = true */
	const gpuenv_direct_t *direct; /* not from an index, or NULL */
	/* uv's sources by marker / extra / group: gpuenv_manifest_target_deps
	 * sets source (or direct) from the first that applies to the target
	 * (they are disjoint: the loader checks); none applies: the default
	 * indexes, as uv falls back.  0 when the dependency has none or one
	 * without conditions (then source / direct carry it). */
	size_t nsources_by;
	const gpuenv_dep_source_t *sources_by;
	const char *from;	  /* the table it was read from
				     ("project.dependencies",
				     "tool.poetry.group.gpu.dependencies") */
} gpuenv_dep_t;

typedef struct gpuenv_group {
	const char *name;	/* normalised (PEP 735) */
	bool optional;		/* Poetry `optional = true` */
	size_t ndeps;
	const gpuenv_dep_t *deps; /* include-group already expanded */
} gpuenv_group_t;

typedef struct gpuenv_extra {
	const char *name;	 /* normalised */
	size_t nnames;
	const char *const *names; /* the optional dependencies it turns on
				     (normalised names) */
} gpuenv_extra_t;

typedef struct gpuenv_manifest_target {
	const char *name;	  /* the table's key */
	gpuenv_target_t target;	  /* the same structure as a probed machine
				     (origin "declared"; "probe" for the
				     implicit one) */
	const char *platform;	  /* the wheel platform tag declared, or NULL */
	size_t ngroups;
	const char *const *groups; /* normalised */
	size_t nextras;
	const char *const *extras;
	const char *torch_backend; /* "auto" (default), "cpu", "cu126", ... */
	unsigned line;		  /* the table's line; 0 for the probed one */
	/* the target's own canonical inputs (one line), which with the
	 * manifest's common_inputs_hash make this target's lock inputs; NULL
	 * for the probed one */
	const char *inputs_line;
} gpuenv_manifest_target_t;

/* Where a source was read (parallel to gpuenv_manifest_t.sources). */
typedef struct gpuenv_manifest_source_info {
	const char *from;  /* "[[tool.uv.index]]", "[[tool.pdm.source]]",
			      "[[tool.poetry.source]]", or "implicit" (PyPI) */
	unsigned line, col; /* 0 for the implicit one */
	bool verify_ssl;   /* PDM's verify_ssl (true unless written false) */
	size_t ninclude;   /* PDM's include_packages: glob patterns of the
			      names that come from this source alone */
	const char *const *include;
} gpuenv_manifest_source_info_t;

typedef struct gpuenv_manifest_registry {
	const char *host; /* "nvcr.io" */
	const char *url;  /* "http://127.0.0.1:5000" */
} gpuenv_manifest_registry_t;

typedef struct gpuenv_manifest {
	const char *path;	     /* as given */
	const char *name, *version;  /* the project's; may be NULL */
	const char *requires_python; /* PEP 440 specifier text, or NULL */
	size_t ndeps;
	const gpuenv_dep_t *deps;    /* main dependencies, optional ones too */
	size_t ngroups;
	const gpuenv_group_t *groups;
	size_t nextras;
	const gpuenv_extra_t *extras;
	/* sources in declaration order; PyPI included (priority DEFAULT)
	 * unless a primary source is declared (Poetry's rule) */
	size_t nsources;
	const gpuenv_index_source_t *sources;
	const char *torch_backend;   /* [tool.gpuenv] torch-backend, "auto" */
	const char *torch_index;     /* default https://download.pytorch.org/whl */
	size_t ntargets;
	const gpuenv_manifest_target_t *targets; /* sorted by name; 0: none
						    declared */
	/* [tool.gpuenv] registries = { HOST = "URL" }: a registry's requests
	 * sent to a mirror (`gpuenv image`), in declaration order */
	size_t nregistries;
	const gpuenv_manifest_registry_t *registries;
	/* [tool.gpuenv] build-against-env = ["flash-attn"]: PEP 503 names of
	 * packages built without isolation against the target's environment */
	size_t nbuild_against_env;
	const char *const *build_against_env;
	/* [tool.gpuenv] label-prefix = "gpuenv.example.com": the prefix of
	 * `gpuenv labels`' own labels, or NULL (the default) */
	const char *label_prefix;
	/* where each source was read (nsources of them) */
	const gpuenv_manifest_source_info_t *source_info;
	/* the dialects read: "poetry", "uv", "pdm" (NULL-terminated) */
	const char *const *dialects;
	/* findings that do not stop the load ("pyproject.toml:12:1: target
	 * t4: none of [tool.uv] required-environments holds for it"), for the
	 * verbs to print */
	size_t nwarnings;
	const char *const *warnings;
	/* sha-256 (hex) of everything in the manifest that a lock depends
	 * on, stable across formatting and comment changes */
	const char *inputs_hash;
	/* the same without the targets' lines: what every target's lock
	 * shares (one target's edit leaves the others' locks fresh) */
	const char *common_inputs_hash;
} gpuenv_manifest_t;

/* Load path.  kb checks the targets (unknown GPU names get the nearest KB
 * names); it may be NULL to skip target checks.  Errors: file:line:col and
 * what is wrong in ctx->err (GPUENV_ESYNTAX from the TOML parser,
 * GPUENV_ETYPE / GPUENV_ENOTFOUND / GPUENV_EUNSUPPORTED for bad values). */
GPUENV_API int gpuenv_manifest_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, const gpuenv_kb_t *kb, gpuenv_manifest_t *out);

/* The dependencies one target resolves: the main ones (optional ones only
 * through the target's extras), plus its groups, where a group's
 * declaration of a name replaces the main one.  Sorted by name. */
GPUENV_API int gpuenv_manifest_target_deps(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_manifest_t *m, const gpuenv_manifest_target_t *t,
	const gpuenv_dep_t **out, size_t *n);

/* The torch build one target gets, and why. */
typedef struct gpuenv_backend_choice {
	const char *backend;	/* "cu126", "cpu" */
	const char *index_url;	/* <torch-index>/<backend>/, or the user's
				   source URL when a dependency pins one */
	const char *source;	/* the user's source name when pinned, or NULL */
	bool user_pinned;	/* the user's source decided, gpuenv checked */
	const char *reason;	/* one or more lines citing the KB rows */
	const char *cuda;	/* the build's CUDA ("12.6"), NULL for cpu */
	/* the KB's row of the build picked or checked (NULL for cpu); how:
	 * what decided it ("auto", "torch-backend = \"cu126\"", "torch pinned
	 * to source 'pytorch' (URL)") */
	const struct gpuenv_kb_torch_variant *variant;
	const char *how;
	/* "auto" on a GPU target: the tags of every stable KB build within
	 * the project's torch constraint that runs there, the favourite's
	 * first: the builds a torch index is asked for (docs/lock.md) */
	const char *const *offer_tags;
	size_t noffer_tags;
} gpuenv_backend_choice_t;

/* The backend for target t: torch-backend "auto" asks the KB
 * (gpuenv_kb_torch_pick, as `kb torch --gpu G --driver D` judges); a
 * named backend or a pinned source is checked against the target.
 * GPUENV_ENOTFOUND / GPUENV_EUNSUPPORTED with ctx->err saying why and which
 * backend would run, when the target cannot run one. */
GPUENV_API int gpuenv_manifest_backend(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_manifest_t *m, const gpuenv_manifest_target_t *t,
	const gpuenv_kb_t *kb, gpuenv_backend_choice_t *out);

/* The reason a lock gives for the torch build it holds: torch version (as
 * locked: "2.1.2+cu118", "2.8.0") of build tag ("cu118", read from the
 * wheel), decided as bc says, with the KB's judgement of that release's
 * build on the target; note (may be NULL): why it is not the KB's
 * favourite ("cu130 is not on <index>; took ...").  *out in arena.  0, or
 * -ENOMEM. */
GPUENV_API int gpuenv_manifest_backend_locked(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_manifest_target_t *t, const gpuenv_kb_t *kb, const gpuenv_backend_choice_t *bc,
	const char *version, const char *tag, const char *note, const char **out);

/* Packages published per torch build on the torch index (torch,
 * torchvision, torchaudio, triton's pytorch-triton, ...) and the
 * CUDA-suffixed families (nvidia-*-cu12, cupy-cuda12x,
 * jax-cuda12-plugin): true when name follows the backend. */
GPUENV_API bool gpuenv_manifest_torch_family(const char *name);

/* ---- added by the manifest module ------------------------------------- */

/* As gpuenv_manifest_load, from text in memory (len bytes; path names it
 * in messages and is the project's file).  Input above
 * GPUENV_MANIFEST_MAX_SIZE is GPUENV_ETOOBIG. */
#define GPUENV_MANIFEST_MAX_SIZE ((size_t)4 << 20)
GPUENV_API int gpuenv_manifest_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, const char *text, size_t len, const gpuenv_kb_t *kb,
	gpuenv_manifest_t *out);

/* A Poetry version constraint ("^1.2.3", "~1.2", "1.2.*", ">= 1.2, < 2",
 * "*") as a PEP 440 specifier set, the way Poetry converts it (caret:
 * ">=1.2.3,<2.0.0"); "" for any version.  Unions ("||", "|") cannot be one
 * specifier: GPUENV_EUNSUPPORTED; anything else malformed GPUENV_ESPEC.
 * ctx->err says what is wrong (no position: the caller adds it). */
GPUENV_API int gpuenv_manifest_poetry_constraint(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t constraint, const char **pep440);

/* A Poetry `python` constraint as the marker Poetry writes for it
 * ("^3.10" -> python_version >= "3.10" and python_version < "4.0";
 * versions with three parts use python_full_version; "~3.8" ->
 * python_version == "3.8"; unions become "or").  *marker NULL for "*". */
GPUENV_API int gpuenv_manifest_python_marker(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	gpuenv_str_t constraint, const char **marker);

/* The CUDA major a package name is built for: nvidia-*-cu12 -> 12,
 * cupy-cuda12x -> 12, cupy-cuda117 -> 11, jax-cuda12-plugin /
 * jax-cuda12-pjrt -> 12; 0 for other names. */
GPUENV_API int gpuenv_manifest_cuda_major(const char *name);

/* Can target t run the package name (CUDA-suffixed: its CUDA major through
 * the KB's driver rule, minor-version compatibility included)?  0 (also for
 * names without a CUDA suffix), or GPUENV_EUNSUPPORTED with ctx->err saying
 * why and what would run. */
GPUENV_API int gpuenv_manifest_cuda_check(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb,
	const gpuenv_manifest_target_t *t, const char *name);

/* gpuenv_manifest_torch_family, plus the packages the torch index
 * publishes beside the builds that come from it when it has them (triton). */
GPUENV_API bool gpuenv_manifest_torch_index_package(const char *name);

#ifdef __cplusplus
}
#endif
#endif
