/* Direct references made ready for the lock (include/gpuenv/project.h,
 * docs/lock.md "Direct references"): a path dependency is a source tree
 * in place, a git dependency a checkout of the commit its ref names (the
 * git program, lib/project/git.c), and either one's metadata comes from
 * its build backend through the provider's hook, as an sdist's does. */
#include "gpuenv/project.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/fs.h"
#include "gpuenv/git.h"
#include "gpuenv/hash.h"
#include "gpuenv/metadata.h"
#include "gpuenv/pep508.h"

static const char *const KINDS[] = { "", "path", "git", "url", "workspace" };

static const char *kind_name(int k)
{
	return k >= 1 && k <= 4 ? KINDS[k] : "direct";
}

/* ctx->err again at the reference's place in the manifest. */
static int at_ref(gpuenv_ctx_t *ctx, const gpuenv_manifest_t *m, const gpuenv_manifest_target_t *t,
	const gpuenv_dep_t *d)
{
	const gpuenv_direct_t *x = d->direct;
	if (ctx->err.code == -ENOMEM)
		return ctx->err.code;
	return gpuenv_fail_prefix(ctx, ctx->err.code, m->path, x->line, x->col, "target %s: %s (a %s dependency)",
		t->name, d->name, kind_name(x->kind));
}

/* The folder of the manifest (its path as given), in arena. */
static const char *manifest_dir(gpuenv_arena_t *arena, const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash)
		return ".";
	if (slash == path)
		return "/";
	return gpuenv_arena_strndup(arena, path, (size_t)(slash - path));
}

/* The tree's METADATA through the hook, checked to name the dependency,
 * into r's candidate. */
static int tree_meta(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_dep_t *d, const char *dir, const char *key, gpuenv_pv_direct_t *r)
{
	const gpuenv_manifest_t *m = req->m;
	const gpuenv_direct_t *x = d->direct;
	gpuenv_pv_tree_t tr = { .name = d->name, .dir = dir, .key = key, .python = req->t->target.python,
		.target_name = req->t->name };
	gpuenv_metadata_t md;
	gpuenv_str_t text;
	char norm[256];

	if (!req->sdist_meta.tree) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, m->path, x->line, x->col, "target %s: %s is a %s dependency, "
			"whose metadata comes from its build backend, and this lock runs none", req->t->name, d->name,
			kind_name(x->kind));
		return gpuenv_hint(ctx, "lock with gpuenv lock (it asks the build backend)");
	}
	if (req->sdist_meta.tree(req->sdist_meta.self, ctx, arena, req->ix, &tr, &text) != 0)
		return at_ref(ctx, m, req->t, d);
	if (gpuenv_metadata_parse(ctx, arena, dir, text, GPUENV_METADATA_LENIENT_VERSION, &md) != 0)
		return at_ref(ctx, m, req->t, d);
	gpuenv_name_normalize_to(md.name, norm, sizeof(norm));
	if (strcmp(norm, d->name) != 0) {
		gpuenv_fail(ctx, GPUENV_EREQ, m->path, x->line, x->col, "target %s: %s: the %s dependency's project "
			"is named '%.*s' (its build backend says), not %s", req->t->name, d->name, kind_name(x->kind),
			(int)md.name.len, md.name.ptr, d->name);
		return gpuenv_hint(ctx, "name the dependency as the project at %s names itself", dir);
	}
	if (!md.version_valid) {
		gpuenv_fail(ctx, GPUENV_EVERSION, m->path, x->line, x->col, "target %s: %s: its build backend gives "
			"the version '%.*s', which is not PEP 440", req->t->name, d->name, (int)md.version_text.len,
			md.version_text.ptr);
		return gpuenv_hint(ctx, "fix the project's version at %s", dir);
	}
	gpuenv_requirement_t *rq = gpuenv_arena_calloc(arena, md.nrequires_dist ? md.nrequires_dist : 1, sizeof(*rq));
	if (!rq)
		return gpuenv_oom(ctx, "a direct reference's requirements");
	size_t n = 0;
	for (size_t i = 0; i < md.nrequires_dist; i++)
		if (md.requires_dist[i].valid)
			rq[n++] = md.requires_dist[i].req;
	r->name = d->name;
	r->version = gpuenv_arena_strndup(arena, md.version_text.ptr, md.version_text.len);
	r->requires_python = md.requires_python_valid
		? gpuenv_arena_strndup(arena, md.requires_python_text.ptr, md.requires_python_text.len) : NULL;
	r->reqs = rq;
	r->nreqs = n;
	r->tree = dir;
	if (!r->version || (md.requires_python_valid && !r->requires_python))
		return gpuenv_oom(ctx, "a direct reference");
	return 0;
}

static int prep_path(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_dep_t *d, gpuenv_pv_direct_t *r)
{
	const gpuenv_manifest_t *m = req->m;
	const gpuenv_direct_t *x = d->direct;
	const char *p = x->path;
	struct stat sb;

	const char *abs = p[0] == '/' ? gpuenv_arena_strndup(arena, p, strlen(p))
		: gpuenv_arena_printf(arena, "%s/%s", manifest_dir(arena, m->path), p).ptr;
	if (abs && x->subdirectory)
		abs = gpuenv_arena_printf(arena, "%s/%s", abs, x->subdirectory).ptr;
	if (!abs)
		return gpuenv_oom(ctx, "a path dependency");
	gpuenv_fs_tidy_path((char *)abs);
	if (stat(abs, &sb) != 0) {
		int e = errno;
		gpuenv_fail(ctx, e == ENOENT ? GPUENV_ENOTFOUND : -e, m->path, x->line, x->col, "target %s: %s: the "
			"path '%s' (%s) %s", req->t->name, d->name, p, abs, e == ENOENT ? "does not exist" : strerror(e));
		return gpuenv_hint(ctx, "a relative path starts at the folder of %s", m->path);
	}
	if (abs[0] != '/') { /* the manifest named relative to the working folder: the build needs it whole */
		char full[PATH_MAX];
		if (!realpath(abs, full))
			return gpuenv_fail(ctx, -errno, m->path, x->line, x->col, "target %s: %s: the path '%s': %s",
				req->t->name, d->name, p, strerror(errno));
		if (!(abs = gpuenv_arena_strndup(arena, full, strlen(full))))
			return gpuenv_oom(ctx, "a path dependency");
	}
	if (!S_ISDIR(sb.st_mode)) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, m->path, x->line, x->col, "target %s: %s: the path '%s' is a "
			"file; gpuenv locks path dependencies on source folders", req->t->name, d->name, p);
		return gpuenv_hint(ctx, "give the folder of the project (the one with its pyproject.toml), or put "
			"the wheel in a folder and lock with --find-links DIR");
	}
	r->directory = p;
	r->editable = x->editable;
	r->subdirectory = x->subdirectory;
	return tree_meta(ctx, arena, req, d, abs, NULL, r);
}

static int prep_git(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_dep_t *d, gpuenv_pv_direct_t *r)
{
	const gpuenv_direct_t *x = d->direct;
	const char *ref = x->rev ? x->rev : x->tag ? x->tag : x->branch, *commit, *dir;
	gpuenv_lock_vcs_t *vc = gpuenv_arena_calloc(arena, 1, sizeof(*vc));
	char key[2 * GPUENV_SHA256_LEN + 1];

	if (!vc)
		return gpuenv_oom(ctx, "a git dependency");
	if (gpuenv_git_resolve(ctx, arena, req->cache_dir, x->url, ref, &commit) != 0 ||
		gpuenv_git_checkout(ctx, arena, req->cache_dir, x->url, commit, &dir) != 0)
		return at_ref(ctx, req->m, req->t, d);
	if (x->subdirectory && !(dir = gpuenv_arena_printf(arena, "%s/%s", dir, x->subdirectory).ptr))
		return gpuenv_oom(ctx, "a git dependency");
	if (gpuenv_git_tree_key(ctx, x->url, commit, x->subdirectory, key) != 0)
		return ctx->err.code;
	vc->type = "git";
	vc->url = x->url;
	vc->requested_revision = ref;
	vc->commit_id = commit;
	r->vcs = vc;
	r->subdirectory = x->subdirectory;
	return tree_meta(ctx, arena, req, d, dir, gpuenv_arena_strndup(arena, key, strlen(key)), r);
}

int gpuenv_project_direct(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_dep_t *deps, size_t ndeps, gpuenv_pv_direct_t **out, size_t *n)
{
	size_t k = 0;
	gpuenv_pv_direct_t *v;
	int r = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < ndeps; i++)
		k += deps[i].direct != NULL;
	if (!k)
		return 0;
	if (!(v = gpuenv_arena_calloc(arena, k, sizeof(*v))))
		return gpuenv_oom(ctx, "the direct references");
	k = 0;
	for (size_t i = 0; !r && i < ndeps; i++) {
		const gpuenv_direct_t *x = deps[i].direct;
		if (!x)
			continue;
		for (size_t j = 0; j < k; j++)
			if (!strcmp(v[j].name, deps[i].name)) {
				gpuenv_fail(ctx, GPUENV_EDUPLICATE, req->m->path, x->line, x->col, "target %s: %s has two "
					"direct references for this target", req->t->name, deps[i].name);
				return gpuenv_hint(ctx, "give it one (markers that exclude each other are not "
					"supported for direct references)");
			}
		switch (x->kind) {
		case GPUENV_DIRECT_PATH:
			r = prep_path(ctx, arena, req, &deps[i], &v[k]);
			break;
		case GPUENV_DIRECT_GIT:
			r = prep_git(ctx, arena, req, &deps[i], &v[k]);
			break;
		default:
			gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, req->m->path, x->line, x->col, "target %s: %s is a %s "
				"dependency (%s), which gpuenv's lock cannot lock yet", req->t->name, deps[i].name,
				kind_name(x->kind), x->from ? x->from : "?");
			r = gpuenv_hint(ctx, x->kind == GPUENV_DIRECT_URL ? "download the archive into a folder and "
				"lock with --find-links DIR, or use a path or git dependency"
				: "publish it to an index or a find-links folder (gpuenv lock --find-links DIR) and depend "
				"on it by version, or give it as a path dependency");
		}
		k++;
	}
	if (r)
		return r;
	*out = v;
	*n = k;
	return 0;
}

int gpuenv_project_lock_refs(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_lock_t *lk, const char **detail)
{
	*detail = NULL;
	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		const gpuenv_lock_vcs_t *vc = p->vcs;
		const char *now;
		if (!vc || !vc->type || strcmp(vc->type, "git") != 0 || !vc->url)
			continue; /* another VCS, or a path-only entry: nothing to ask */
		if (gpuenv_git_ls_remote(ctx, arena, vc->url, vc->requested_revision, &now) != 0)
			return gpuenv_fail_prefix(ctx, ctx->err.code, NULL, 0, 0, "%s", p->name);
		if (now && !strcmp(now, vc->commit_id))
			continue;
		*detail = now ? gpuenv_arena_printf(arena, "%s: the git ref '%s' of %s moved from %.12s to %.12s",
					p->name, vc->requested_revision ? vc->requested_revision : "HEAD", vc->url,
					vc->commit_id, now).ptr
			      : gpuenv_arena_printf(arena, "%s: the git ref '%s' is no longer in %s", p->name,
					vc->requested_revision ? vc->requested_revision : "HEAD", vc->url).ptr;
		return *detail ? 0 : gpuenv_oom(ctx, "the lock's state");
	}
	return 0;
}
