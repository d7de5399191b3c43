/* The resolver: PubGrub over a provider's candidates, for one target.
 *
 * The resolver knows nothing of indexes, files or hardware.  A provider
 * (lib/resolve/provider.c over lib/index, or the in-memory one the tests
 * and `gpuenv debug resolve` build from a packse-format TOML file) answers
 * two questions: which versions of a package may be used on this target,
 * newest first, and what one of them requires.  Everything hardware-specific
 * (wheel tags, requires-python, the torch build) is decided by the provider
 * before a candidate reaches the resolver; the provider says, per package,
 * why candidates were left out, so an explanation can name the hardware.
 *
 * Names are PEP 503-normalised ("nvidia-cudnn-cu12") everywhere in this
 * interface.  Extras are resolved PubGrub-style: "a[x]" is its own package
 * whose version v depends on a == v and on a's requirements with extra == x.
 */
#ifndef GPUENV_RESOLVE_H
#define GPUENV_RESOLVE_H

#include "gpuenv/core.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPUENV_ENOSOLUTION (core.h's error table): no version assignment satisfies the requirements; the explanation is in the resolution */

/* One version of a package the provider offers. */
typedef struct gpuenv_candidate {
	const char *version;	 /* as published: "2.8.0+cu128" */
	gpuenv_version_t v;	 /* parsed */
	bool yanked;		 /* PEP 592: chosen only when a requirement
				    pins it with == or === */
	const char *requires_python; /* the file's, NULL: none.  Informative:
					the provider already dropped the
					files whose requires-python the
					target's Python does not meet */
	void *data;		 /* the provider's (the file the lock names) */
} gpuenv_candidate_t;

typedef struct gpuenv_provider {
	void *self;
	/* The candidates of name usable on the target, newest first (PEP 440
	 * order; the resolver applies pre-release, yanked and specifier rules
	 * itself).  *out stays valid until the provider is destroyed.
	 * 0 (n may be 0: the package exists, nothing fits the target),
	 * GPUENV_ENOTFOUND (no index has the name), or an error with ctx->err
	 * set (the resolution stops with it). */
	int (*versions)(void *self, gpuenv_ctx_t *ctx, const char *name,
		const gpuenv_candidate_t **out, size_t *n);
	/* The Requires-Dist of one candidate, unevaluated (the resolver
	 * evaluates markers with the target's environment and the extra).
	 * 0 or an error with ctx->err set. */
	int (*requires)(void *self, gpuenv_ctx_t *ctx, const char *name,
		const gpuenv_candidate_t *c, const gpuenv_requirement_t **out, size_t *n);
	/* Optional (may be NULL): names the resolver will probably ask for
	 * soon, so a provider over the network fetches them in one parallel
	 * batch.  Never fails: a failure shows when the name is asked for. */
	void (*prefetch)(void *self, gpuenv_ctx_t *ctx, const char *const *names, size_t n);
	/* Optional: one line saying why versions of name were left out for
	 * this target ("14 files of torch 2.8.0 have no wheel for cp312
	 * manylinux_2_28_x86_64; torch 2.8.0+cu128 needs a driver >= 570.26
	 * and target t4 has 560.35.03"), or NULL when nothing was. */
	const char *(*excluded)(void *self, const char *name);
} gpuenv_provider_t;

/* A version to keep while the requirements still allow it (a stable lock:
 * the version the target's existing lock has). */
typedef struct gpuenv_preference {
	const char *name;    /* normalised */
	const char *version; /* as locked: "1.0", "2.8.0+cu128"; NULL: the
				usual order (newest first) */
	/* decided before the packages that are not (an upgrade the user
	 * asked for: what it needs then follows it instead of holding it
	 * back at the versions the others prefer) */
	bool early;
} gpuenv_preference_t;

typedef struct gpuenv_resolve_req {
	const gpuenv_requirement_t *roots; /* the root requirements */
	size_t nroots;
	/* the target's marker environment; extra and extras are ignored (the
	 * resolver sets extra per requirement it evaluates) */
	const gpuenv_marker_env_t *env;
	/* GPUENV_PRERELEASES_DEFAULT: pre-releases rank after every stable
	 * version of their package, so one is chosen only when no stable
	 * version the requirements allow is left (uv's `if-necessary`: a
	 * specifier such as `>=2.0b1` that only pre-releases meet, or
	 * conflicts that rule the stable ones out); YES: pre-releases rank by
	 * version with the rest, everywhere; NO: never candidates */
	int prereleases;
	/* NULL, or one flag per root: Poetry's `allow-prereleases = true`,
	 * the package's pre-releases rank by version with the rest */
	const bool *allow_prereleases;
	/* NULL, or preferred versions (a name at most once): when the
	 * resolver decides a package it tries the preferred version first if
	 * it is a candidate (after the yanked and pre-release rules) and in
	 * the package's current range, else the usual order; backtracking is
	 * PubGrub's as always, so a preference never makes a resolution fail
	 * that would succeed without it (it may only pick another solution) */
	const gpuenv_preference_t *prefer;
	size_t nprefer;
} gpuenv_resolve_req_t;

typedef struct gpuenv_resolved {
	const char *name;	       /* normalised */
	const gpuenv_candidate_t *cand; /* the provider's */
	size_t nextras;
	const char *const *extras;     /* the extras activated, sorted */
	size_t ndeps;
	const size_t *deps;	       /* indexes into the resolution's pkgs:
					  what this package's requirements
					  (with its extras) resolved to, sorted
					  by name */
	bool root;		       /* a root requirement names it */
} gpuenv_resolved_t;

typedef struct gpuenv_resolution {
	size_t npkgs;
	const gpuenv_resolved_t *pkgs; /* sorted by name */
	/* GPUENV_ENOSOLUTION: a readable explanation, several lines, derived
	 * from the incompatibilities (PubGrub's report), each exclusion the
	 * provider reported for a package it names included */
	const char *explanation;
	/* counters for --json and benchmarks */
	size_t decisions, conflicts, packages_asked;
	/* assignments made, and the most bytes their sets held at once (the
	 * partial solution's storage is reused after each backjump) */
	size_t assignments, partial_bytes_peak;
	/* incompatibilities learned from conflicts, those the learned
	 * database's reductions dropped from the watch lists, and the
	 * reductions run (docs/resolver.md) */
	size_t learned, learned_dropped, reductions;
	/* the propagation's work: looks at a package's watch list, the
	 * entries those looks found (their term newly satisfied), and those
	 * of them passed on their blocker without reading the
	 * incompatibility (docs/resolver.md) */
	size_t watch_looks, watch_found, watch_passed;
} gpuenv_resolution_t;

/* Resolve req against provider.  Deterministic: the same inputs give the
 * same resolution.  Everything is allocated in arena.  0, GPUENV_ENOSOLUTION
 * (out->explanation set; ctx->err says "no solution"), or the provider's
 * error. */
GPUENV_API int gpuenv_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_resolve_req_t *req, const gpuenv_provider_t *provider,
	gpuenv_resolution_t *out);

/* ---- packse-format scenarios: an in-memory provider ----------------------
 * A scenario file (the format of astral-sh/packse: [root] requires,
 * [packages.NAME.versions."V"] with requires, requires_python, yanked,
 * extras, wheel_tags, sdist, wheel; [environment] python;
 * [resolver_options] python, python_platform, prereleases, no_build,
 * no_binary, universal; [expected] satisfiable, packages) becomes a
 * provider over its packages and a request for its target, so the resolver
 * runs without an index (tests, `gpuenv debug resolve`, fuzzing).
 *
 * The target is the scenario's Python (resolver_options.python, else
 * environment.python, else 3.12) on CPython, Linux x86_64 with glibc 2.28
 * (manylinux_2_28) unless resolver_options.python_platform names another
 * ("x86_64-manylinux2014", "x86_64-manylinux_2_39", "aarch64-unknown-linux-gnu",
 * "x86_64-apple-darwin", "x86_64-pc-windows-msvc", ...).  A version is offered when the target's
 * Python meets its requires_python and it has a usable distribution: a
 * wheel (wheel != false, not in no_binary) with a tag the target supports
 * (wheel_tags, default py3-none-any), or an sdist (sdist != false, not in
 * no_build).  The versions left out, and why, are the provider's
 * excluded() text. */
typedef struct gpuenv_scenario {
	const char *name;	 /* the scenario's name ("" when absent) */
	const char *file;	 /* as given */
	size_t nroots;
	gpuenv_requirement_t *roots; /* root.requires */
	gpuenv_marker_env_t env; /* the target's marker environment */
	const char *python;	 /* "3.12" */
	const char *platform;	 /* the target's newest platform tag */
	int prereleases;	 /* GPUENV_PRERELEASES_YES with prereleases = true */
	bool universal;		 /* resolver_options.universal: gpuenv locks per
				    target, so a runner skips these */
	bool has_expected;	 /* expected.satisfiable is given */
	bool expected_satisfiable;
	size_t nexpected;	 /* expected.packages, sorted by name */
	const char *const *expected_names;
	const char *const *expected_versions;
	size_t npackages;	 /* packages defined */
	gpuenv_provider_t provider; /* valid while the arena lives */
} gpuenv_scenario_t;

/* Largest scenario text read (GPUENV_ETOOBIG beyond). */
#define GPUENV_SCENARIO_MAX ((size_t)16 << 20)

/* Parse a scenario from TOML text; file names it in messages.  Everything
 * lives in arena.  0, or an error with ctx->err set ("file:line:col: what
 * is wrong"): GPUENV_ESYNTAX, GPUENV_ETYPE, GPUENV_EREQ, GPUENV_ESPEC,
 * GPUENV_EVERSION, GPUENV_EDUPLICATE, GPUENV_ETOOBIG, -ENOMEM. */
GPUENV_API int gpuenv_scenario_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, const char *text, size_t len, gpuenv_scenario_t *out);
/* Read and parse a scenario file (at most GPUENV_SCENARIO_MAX bytes). */
GPUENV_API int gpuenv_scenario_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *path, gpuenv_scenario_t *out);
/* The request a scenario asks for (roots, the target's environment, the
 * pre-release policy); req points into sc. */
GPUENV_API void gpuenv_scenario_request(const gpuenv_scenario_t *sc, gpuenv_resolve_req_t *req);

/* Write req and what provider offers for it as a scenario in the same
 * format, appended to out: every name reachable from the roots (in the
 * order found), each one's candidates newest first (at most max_versions of
 * them; 0: all) with yanked, requires_python and their requirements as
 * published, the excluded() text as a comment, the target's Python and
 * platform.  The candidates are the provider's, already filtered for the
 * target, so the file replays the same resolution with no index
 * (`gpuenv debug resolve FILE`): how a failing real resolution becomes a
 * fixture.  name: the scenario's name (NULL: "dump").  0 or the provider's
 * error, -ENOMEM, GPUENV_ETOOBIG (out's cap). */
GPUENV_API int gpuenv_scenario_write(gpuenv_ctx_t *ctx, const gpuenv_resolve_req_t *req,
	const gpuenv_provider_t *provider, const char *name, size_t max_versions,
	gpuenv_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif
