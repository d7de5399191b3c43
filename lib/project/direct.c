/* Direct references made ready for the lock (include/gpuenv/project.h,
 * docs/lock.md "Direct references"): a path dependency is a source tree
 * in place, a git dependency a checkout of the commit its ref names (the
 * git program, lib/project/git.c), either one's metadata from its build
 * backend through the provider's hook, as an sdist's is; an archive by
 * URL is fetched into the cache (lib/project/archive.c) and read as the
 * index's files are: a wheel's METADATA, an sdist's PKG-INFO or its build
 * backend's answer. */
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
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/wheel.h"

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

/* The candidate of dependency d from its metadata text (what: the tree or
 * the file it was read from), into r: its name checked against d's. */
static int direct_meta(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_dep_t *d, const char *what, gpuenv_str_t text, gpuenv_pv_direct_t *r)
{
	const gpuenv_manifest_t *m = req->m;
	const gpuenv_direct_t *x = d->direct;
	const char *whose = x->kind == GPUENV_DIRECT_URL ? "metadata" : "build backend";
	gpuenv_metadata_t md;
	char norm[256];

	if (gpuenv_metadata_parse(ctx, arena, what, text, GPUENV_METADATA_LENIENT_VERSION, &md) != 0)
		return at_ref(ctx, m, req->t, d);
	gpuenv_name_normalize_to(md.name, norm, sizeof(norm));
	if (strcmp(norm, d->name) != 0) {
		gpuenv_fail(ctx, GPUENV_EREQ, m->path, x->line, x->col, "target %s: %s: the %s dependency's project "
			"is named '%.*s' (its %s says), not %s", req->t->name, d->name, kind_name(x->kind),
			(int)md.name.len, md.name.ptr, whose, d->name);
		return gpuenv_hint(ctx, "name the dependency as the project at %s names itself", what);
	}
	if (!md.version_valid) {
		gpuenv_fail(ctx, GPUENV_EVERSION, m->path, x->line, x->col, "target %s: %s: its %s gives "
			"the version '%.*s', which is not PEP 440", req->t->name, d->name, whose,
			(int)md.version_text.len, md.version_text.ptr);
		return gpuenv_hint(ctx, "fix the project's version at %s", what);
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
	if (!r->version || (md.requires_python_valid && !r->requires_python))
		return gpuenv_oom(ctx, "a direct reference");
	return 0;
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
	gpuenv_str_t text;

	if (!req->sdist_meta.tree) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, m->path, x->line, x->col, "target %s: %s is a %s dependency, "
			"whose metadata comes from its build backend, and this lock runs none", req->t->name, d->name,
			kind_name(x->kind));
		return gpuenv_hint(ctx, "lock with gpuenv lock (it asks the build backend)");
	}
	if (req->sdist_meta.tree(req->sdist_meta.self, ctx, arena, req->ix, &tr, &text) != 0)
		return at_ref(ctx, m, req->t, d);
	if (direct_meta(ctx, arena, req, d, dir, text, r) != 0)
		return ctx->err.code;
	r->tree = dir;
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

/* The #sha256= of x in lower case, into out; 0 or the error at x. */
static int url_sha(gpuenv_ctx_t *ctx, const gpuenv_project_lock_req_t *req, const gpuenv_dep_t *d, char out[65])
{
	const gpuenv_direct_t *x = d->direct;
	const char *h = x->sha256;
	size_t n = strlen(h);
	bool ok = n == 64;

	for (size_t i = 0; ok && i < n; i++)
		ok = gpuenv_hex_digit(h[i]) >= 0;
	if (!ok) {
		gpuenv_fail(ctx, GPUENV_ESYNTAX, req->m->path, x->line, x->col, "target %s: %s: '#sha256=%.80s' of "
			"its URL is not a sha256 (64 hex digits)", req->t->name, d->name, h);
		return gpuenv_hint(ctx, "write the archive's sha256 after #sha256= (sha256sum FILE gives it)");
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (char)gpuenv_to_lower(h[i]);
	out[n] = '\0';
	return 0;
}

/* The archive's file name checked: a wheel of d that installs on the
 * target (tags), or a .tar.gz sdist of d; *version its version, *wheel
 * which one. */
static int url_file(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const struct gpuenv_tagset *tags, const gpuenv_dep_t *d, const char *name, gpuenv_str_t *version,
	bool *wheel)
{
	const gpuenv_direct_t *x = d->direct;
	size_t n = strlen(name);
	char norm[256];
	gpuenv_str_t pname;

	*wheel = n > 4 && !strcmp(name + n - 4, ".whl");
	if (*wheel) {
		gpuenv_wheel_name_t wn;
		if (gpuenv_wheel_name_parse(ctx, arena, gpuenv_str(name), 0, &wn) != 0)
			return at_ref(ctx, req->m, req->t, d);
		if (tags && gpuenv_tagset_rank_wheel(tags, &wn) < 0) {
			gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, req->m->path, x->line, x->col, "target %s: %s: the wheel "
				"%s does not install there (its tags %.*s; the target's first is %s)", req->t->name,
				d->name, name, (int)wn.tag_text.len, wn.tag_text.ptr,
				gpuenv_tagset_get(tags, 0) ? gpuenv_tagset_get(tags, 0) : "none");
			return gpuenv_hint(ctx, "give the URL of a wheel built for the target's Python and platform, "
				"or of the sdist");
		}
		pname = wn.normalized;
		*version = wn.version_text;
	} else if (n > 7 && !strcmp(name + n - 7, ".tar.gz")) {
		gpuenv_sdist_name_t sn;
		if (gpuenv_sdist_name_parse(ctx, arena, gpuenv_str(name), &sn) != 0)
			return at_ref(ctx, req->m, req->t, d);
		pname = sn.normalized;
		*version = sn.version_text;
	} else {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, req->m->path, x->line, x->col, "target %s: %s: the URL's file "
			"'%s' is neither a wheel (.whl) nor a .tar.gz sdist", req->t->name, d->name, name);
		return gpuenv_hint(ctx, "give the URL of the project's wheel or .tar.gz sdist, or a git or path "
			"dependency");
	}
	gpuenv_name_normalize_to(pname, norm, sizeof(norm));
	if (strcmp(norm, d->name) != 0) {
		gpuenv_fail(ctx, GPUENV_EREQ, req->m->path, x->line, x->col, "target %s: %s: the URL's file %s is "
			"of the project %s", req->t->name, d->name, name, norm);
		return gpuenv_hint(ctx, "name the dependency as the archive names its project, or fix the URL");
	}
	return 0;
}

/* An archive by URL: fetched into the cache (its #sha256= checked), its
 * metadata read from the copy, recorded as a PEP 751 archive entry. */
static int prep_url(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const struct gpuenv_tagset *tags, const gpuenv_dep_t *d, gpuenv_pv_direct_t *r)
{
	const gpuenv_manifest_t *m = req->m;
	const gpuenv_direct_t *x = d->direct;
	char want[2 * GPUENV_SHA256_LEN + 1];
	gpuenv_archive_t a;
	gpuenv_str_t version, text;
	bool wheel;
	int rc;

	if (x->hash_other && !x->sha256) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, m->path, x->line, x->col, "target %s: %s: its URL gives a "
			"#%s= hash, and gpuenv checks archives by sha256", req->t->name, d->name, x->hash_other);
		return gpuenv_hint(ctx, "write #sha256=HEX instead (sha256sum FILE gives it), or no hash");
	}
	if (x->subdirectory) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, m->path, x->line, x->col, "target %s: %s: a subdirectory "
			"inside an archive by URL is not supported", req->t->name, d->name);
		return gpuenv_hint(ctx, "give the project's own wheel or sdist, or a git dependency with its "
			"subdirectory");
	}
	if (x->sha256 && url_sha(ctx, req, d, want) != 0)
		return ctx->err.code;
	const char *name = gpuenv_url_basename(arena, x->url);
	if (!name) {
		if (ctx->err.code == -ENOMEM)
			return ctx->err.code;
		gpuenv_fail(ctx, GPUENV_EREQ, m->path, x->line, x->col, "target %s: %s: the URL %s names no file",
			req->t->name, d->name, x->url);
		return gpuenv_hint(ctx, "give the URL of the archive itself (…/NAME-1.0-py3-none-any.whl or "
			"…/NAME-1.0.tar.gz)");
	}
	if (url_file(ctx, arena, req, tags, d, name, &version, &wheel) != 0)
		return ctx->err.code;
	if (gpuenv_project_archive(ctx, arena, req->ix, req->cache_dir, x->url, x->sha256 ? want : NULL,
		    req->refresh, &a) != 0) {
		int code = ctx->err.code;
		bool mismatch = x->sha256 && code == GPUENV_EFORMAT && strstr(ctx->err.msg, "hash mismatch");
		at_ref(ctx, m, req->t, d);
		if (code == -ENOMEM)
			return code;
		if (mismatch)
			return gpuenv_hint(ctx, "the server serves other bytes than the #sha256= in %s says: check "
				"the URL, or write the new file's sha256 there once you trust it", m->path);
		if (code == GPUENV_ENOTFOUND)
			return gpuenv_hint(ctx, "the server has no file at that URL: fix the URL in %s", m->path);
		return gpuenv_hint(ctx, "check that the server answers and that the URL in %s is right "
			"(a file once fetched is kept in the cache)", m->path);
	}
	/* its metadata, read from the copy as the index client reads a file */
	const char *furl = gpuenv_path_file_url(arena, a.path);
	gpuenv_index_file_t f = { .filename = name, .url = furl, .sha256 = a.sha256, .size = a.size };
	const gpuenv_index_file_t *fp = &f;
	if (!furl)
		return gpuenv_oom(ctx, "an archive's metadata");
	if (gpuenv_index_metadata(req->ix, ctx, &fp, 1, &text) != 0)
		return at_ref(ctx, m, req->t, d);
	if (!wheel) {
		gpuenv_metadata_t md;
		if (gpuenv_metadata_parse(ctx, arena, name, text, GPUENV_METADATA_LENIENT_VERSION, &md) != 0)
			return at_ref(ctx, m, req->t, d);
		if (!gpuenv_metadata_deps_static(&md)) { /* PEP 643: its build backend says */
			gpuenv_pv_sdist_t sd = { .file = &f, .python = req->t->target.python, .target_name = req->t->name,
				.name = d->name, .version = gpuenv_arena_strndup(arena, version.ptr, version.len) };
			if (!sd.version)
				return gpuenv_oom(ctx, "an archive's metadata");
			if (!req->sdist_meta.metadata) {
				gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, m->path, x->line, x->col, "target %s: %s: the sdist "
					"%s gives its dependencies only through its build backend, and this lock runs "
					"none", req->t->name, d->name, name);
				return gpuenv_hint(ctx, "lock with gpuenv lock (it asks the build backend)");
			}
			if (req->sdist_meta.metadata(req->sdist_meta.self, ctx, arena, req->ix, &sd, &text) != 0)
				return at_ref(ctx, m, req->t, d);
		}
	}
	if ((rc = direct_meta(ctx, arena, req, d, name, text, r)) != 0)
		return rc;
	gpuenv_version_t v1, v2;
	if (gpuenv_version_parse(ctx, arena, version, &v1) != 0 ||
		gpuenv_version_parse(ctx, arena, gpuenv_str(r->version), &v2) != 0)
		return at_ref(ctx, m, req->t, d);
	if (gpuenv_version_cmp(&v1, &v2) != 0) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, m->path, x->line, x->col, "target %s: %s: the archive %s says "
			"version %s inside", req->t->name, d->name, name, r->version);
		return gpuenv_hint(ctx, "the archive is damaged or misnamed: give the URL of a good one");
	}
	gpuenv_lock_file_t *lf = gpuenv_arena_calloc(arena, 1, sizeof(*lf));
	if (!lf || !(lf->url = gpuenv_url_public(arena, x->url)) ||
		!(lf->sha256 = gpuenv_arena_strndup(arena, a.sha256, strlen(a.sha256))))
		return gpuenv_oom(ctx, "an archive entry");
	lf->size = a.size;
	r->archive = lf;
	return 0;
}

int gpuenv_project_direct(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const struct gpuenv_tagset *tags, const gpuenv_dep_t *deps, size_t ndeps, gpuenv_pv_direct_t **out,
	size_t *n)
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
		case GPUENV_DIRECT_URL:
			r = prep_url(ctx, arena, req, tags, &deps[i], &v[k]);
			break;
		default:
			gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, req->m->path, x->line, x->col, "target %s: %s is a %s "
				"dependency (%s), which gpuenv's lock cannot lock yet", req->t->name, deps[i].name,
				kind_name(x->kind), x->from ? x->from : "?");
			r = gpuenv_hint(ctx, "publish it to an index or a find-links folder (gpuenv lock --find-links "
				"DIR) and depend on it by version, or give it as a path dependency");
		}
		k++;
	}
	if (r)
		return r;
	*out = v;
	*n = k;
	return 0;
}

/* Is the archive entry of p at its URL still what the lock records? */
static int archive_moved(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix, const char *cache_dir,
	const gpuenv_lock_package_t *p, const char **detail)
{
	const gpuenv_lock_file_t *f = p->archive;
	gpuenv_archive_t a;

	if (gpuenv_project_archive(ctx, arena, ix, cache_dir, f->url, NULL, true, &a) != 0)
		return gpuenv_fail_prefix(ctx, ctx->err.code, NULL, 0, 0, "%s", p->name);
	if (!f->sha256 || !strcmp(a.sha256, f->sha256))
		return 0;
	*detail = gpuenv_arena_printf(arena, "%s: the archive at %s changed since it was locked (sha256 %.12s -> "
		"%.12s): lock again", p->name, f->url, f->sha256, a.sha256).ptr;
	return *detail ? 0 : gpuenv_oom(ctx, "the lock's state");
}

bool gpuenv_project_lock_has_remote_archive(const gpuenv_lock_t *lk)
{
	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_file_t *f = lk->packages[i].archive;
		if (f && f->url && (!strncmp(f->url, "http://", 7) || !strncmp(f->url, "https://", 8)))
			return true;
	}
	return false;
}

int gpuenv_project_lock_refs(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix, const char *cache_dir,
	const gpuenv_lock_t *lk, const char **detail)
{
	*detail = NULL;
	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		const gpuenv_lock_vcs_t *vc = p->vcs;
		const char *now;
		if (p->archive && p->archive->url) {
			if (archive_moved(ctx, arena, ix, cache_dir, p, detail) != 0)
				return ctx->err.code;
			if (*detail)
				return 0;
			continue;
		}
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
