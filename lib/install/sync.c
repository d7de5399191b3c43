/* gpuenv sync: a venv made to hold exactly what a lock names
 * (gpuenv/sync.h). */
#include "gpuenv/sync.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <time.h>

#include "gpuenv/fs.h"
#include "gpuenv/pep440.h"
#include "gpuenv/trace.h"
#include "gpuenv/wheel.h"

struct gpuenv_sync {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	gpuenv_sync_opts_t o;
	gpuenv_txn_t *txn;
	gpuenv_env_list_t installed;
	gpuenv_sync_plan_t plan;
	gpuenv_sync_built_t *built; /* per plan action: what a source build gave */
};

const char *gpuenv_sync_op_name(int op)
{
	static const char *const names[] = { "keep", "install", "upgrade", "reinstall", "remove" };
	return op >= 0 && op < 5 ? names[op] : "?";
}

const gpuenv_sync_plan_t *gpuenv_sync_plan(const gpuenv_sync_t *s)
{
	return &s->plan;
}

static bool same_version_ctx(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *a, const char *b)
{
	gpuenv_version_t va, vb;
	if (!a || !b)
		return false;
	if (!strcmp(a, b))
		return true;
	if (gpuenv_version_parse(ctx, arena, gpuenv_str(a), &va) != 0 ||
		gpuenv_version_parse(ctx, arena, gpuenv_str(b), &vb) != 0) {
		gpuenv_error_clear(ctx);
		return false;
	}
	return gpuenv_version_cmp(&va, &vb) == 0;
}

static bool same_version(gpuenv_sync_t *s, const char *a, const char *b)
{
	return same_version_ctx(s->ctx, s->arena, a, b);
}

static int pkg_fail(gpuenv_sync_t *s, const gpuenv_lock_package_t *p, int code, const char *what)
{
	return gpuenv_fail(s->ctx, code, s->o.lock_path, p->line, 0, "%s%s%s: %s", p->name,
		p->version ? " " : "", p->version ? p->version : "", what);
}

/* The file to install must have a sha256: the download is checked and the
 * cache keyed by it.  PEP 751 lets a lock give any algorithm; say which
 * one gpuenv needs, where the package is. */
static int file_sha256(gpuenv_sync_t *s, const gpuenv_lock_package_t *p, const gpuenv_lock_file_t *f)
{
	char given[200] = "";
	size_t len = 0;

	if (f->sha256)
		return 0;
	for (size_t i = 0; i < f->nother_hashes && len + 40 < sizeof(given); i++) {
		const char *eq = strchr(f->other_hashes[i], '=');
		int w = snprintf(given + len, sizeof(given) - len, "%s%.*s", i ? ", " : "",
			eq ? (int)(eq - f->other_hashes[i]) : 32, f->other_hashes[i]);
		if (w > 0)
			len += (size_t)w;
	}
	pkg_fail(s, p, GPUENV_EUNSUPPORTED, gpuenv_arena_printf(s->arena, "%s has no sha256 hash (the lock "
		"gives %s): gpuenv checks every file and keys its cache by sha256", f->name ? f->name : "the file",
		given[0] ? given : "none").ptr);
	return gpuenv_hint(s->ctx, "lock again with gpuenv lock (it writes sha256), or add hashes.sha256 to "
				   "the file's entry (sha256sum FILE)");
}

/* Does the venv's Python satisfy spec (PEP 440 specifiers)?  A spec the
 * reader let through cannot fail to parse; memory can. */
static int python_fits(gpuenv_sync_t *s, const char *spec, bool *yes)
{
	gpuenv_specset_t ss;
	gpuenv_version_t pv;
	const char *v = s->o.venv->python.version;
	int r;

	*yes = true;
	if (!spec || !v)
		return 0;
	if ((r = gpuenv_specset_parse(s->ctx, s->arena, gpuenv_str(spec), &ss)) != 0 ||
		(r = gpuenv_version_parse(s->ctx, s->arena, gpuenv_str(v), &pv)) != 0)
		return r;
	*yes = gpuenv_specset_contains_ex(&ss, gpuenv_str(v), &pv, GPUENV_PRERELEASES_DEFAULT, true);
	return 0;
}

/* PEP 751's checks before installing: the lock's environments hold for
 * the venv (one of them, when it lists any), and so does its
 * requires-python. */
static int lock_fits(gpuenv_sync_t *s)
{
	const gpuenv_lock_t *lk = s->o.lock;
	gpuenv_ctx_t *ctx = s->ctx;
	bool any = !lk->nenvironments || !s->o.env, yes;
	int r;

	for (size_t i = 0; i < lk->nenvironments && !any; i++) {
		gpuenv_marker_t *m;
		if ((r = gpuenv_marker_parse(ctx, s->arena, gpuenv_str(lk->environments[i]), &m)) != 0 ||
			(r = gpuenv_marker_eval(ctx, m, s->o.env, &any)) != 0)
			return r;
	}
	if (!any) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, ctx, 4096);
		for (size_t i = 0; i < lk->nenvironments; i++)
			gpuenv_buf_printf(&b, "%s\"%s\"", i ? ", " : "", lk->environments[i]);
		if (!b.data) {
			gpuenv_buf_free(&b);
			return gpuenv_oom(ctx, "the sync plan");
		}
		const gpuenv_marker_env_t *e = s->o.env;
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, s->o.lock_path, 0, 0, "the lock covers the environments %s; "
			"the venv %s (Python %s, %s %s) is none of them", b.data, s->o.venv->root,
			e->python_full_version ? e->python_full_version : "?", e->sys_platform ? e->sys_platform : "?",
			e->platform_machine ? e->platform_machine : "?");
		gpuenv_buf_free(&b);
		return gpuenv_hint(ctx, "lock a target for this machine (gpuenv lock), or sync on a machine the "
			"lock is for");
	}
	if ((r = python_fits(s, lk->requires_python, &yes)) != 0)
		return r;
	if (!yes) {
		gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, s->o.lock_path, 0, 0, "the lock requires Python %s; "
			"the venv %s has %s", lk->requires_python, s->o.venv->root, s->o.venv->python.version);
		return gpuenv_hint(ctx, "give --python with a version that fits, or remove the venv");
	}
	return 0;
}

/* Does the package's marker hold for the venv? */
static int pkg_applies(gpuenv_sync_t *s, const gpuenv_lock_package_t *p, bool *yes)
{
	gpuenv_marker_t *m;
	*yes = true;
	for (size_t i = 0; i < s->o.nskip; i++)
		if (!strcmp(s->o.skip[i], p->name)) {
			*yes = false;
			return 0;
		}
	if (!p->marker || !s->o.env)
		return 0;
	if (gpuenv_marker_parse(s->ctx, s->arena, gpuenv_str(p->marker), &m) != 0 ||
		gpuenv_marker_eval(s->ctx, m, s->o.env, yes) != 0) {
		const char *why = gpuenv_arena_printf(s->arena, "marker \"%s\": %s", p->marker, s->ctx->err.msg).ptr;
		return pkg_fail(s, p, GPUENV_EMARKER, why ? why : "a marker that cannot be read");
	}
	return 0;
}

/* The wheel of p the venv's interpreter installs: the best-ranked one. */
/* The version in the chosen wheel's file name (in s's arena), or NULL with
 * the error. */
static const char *wheel_version(gpuenv_sync_t *s, const gpuenv_lock_package_t *p, const gpuenv_lock_file_t *f)
{
	const char *name = f == p->archive ? gpuenv_lock_file_name(s->arena, f) : f->name;
	gpuenv_wheel_name_t wn;
	const char *v;

	if (!name) {
		gpuenv_oom(s->ctx, "the sync plan");
		return NULL;
	}
	if (gpuenv_wheel_name_parse(s->ctx, s->arena, gpuenv_str(name), 0, &wn) != 0)
		return NULL;
	if (!(v = gpuenv_arena_strndup(s->arena, wn.version_text.ptr, wn.version_text.len)))
		gpuenv_oom(s->ctx, "the sync plan");
	return v;
}

static int pkg_wheel(gpuenv_sync_t *s, const gpuenv_lock_package_t *p, const gpuenv_lock_file_t **out)
{
	long best = -1;
	*out = NULL;
	if (p->archive) {
		const char *name = gpuenv_lock_file_name(s->arena, p->archive);
		if (!name)
			return gpuenv_oom(s->ctx, "the sync plan");
		if (gpuenv_lock_file_is_wheel(p->archive)) {
			*out = p->archive;
			return 0;
		}
		if (s->o.builder.build)
			return 0; /* an sdist archive, built from source: plan_source */
		return pkg_fail(s, p, GPUENV_EUNSUPPORTED, gpuenv_arena_printf(s->arena, "the archive %s is not a "
			"wheel, and this sync builds no source (no builder, gpuenv/build.h): build a wheel of it",
			name).ptr);
	}
	if (!p->nwheels && (p->sdist || p->directory || p->vcs) && s->o.builder.build)
		return 0; /* built from source: plan_source (a vcs entry: the builder checks it out) */
	if (!p->nwheels) {
		const char *what = p->sdist ? "locked as a source distribution only, and this sync builds no "
					      "source (no builder, gpuenv/build.h): lock with --only-binary "
					      "for it, or build a wheel and give its folder with --find-links"
				   : p->directory ? "a local source directory, and this sync builds no source (no "
						    "builder, gpuenv/build.h): build a wheel of it"
				   : p->vcs ? "a VCS checkout, and this sync builds no source (no builder, "
					      "gpuenv/build.h): build a wheel of it"
					    : "the lock gives no file to install";
		return pkg_fail(s, p, GPUENV_EUNSUPPORTED, what);
	}
	for (size_t i = 0; i < p->nwheels; i++) {
		gpuenv_wheel_name_t wn;
		long r;
		if (gpuenv_wheel_name_parse(s->ctx, s->arena, gpuenv_str(p->wheels[i].name), 0, &wn) != 0)
			return s->ctx->err.code;
		const char *wver = gpuenv_arena_strndup(s->arena, wn.version_text.ptr, wn.version_text.len);
		if (wn.normalized.len != strlen(p->name) || memcmp(wn.normalized.ptr, p->name, wn.normalized.len) != 0 ||
			(p->version && !same_version(s, wver, p->version))) {
			gpuenv_fail(s->ctx, GPUENV_EFORMAT, s->o.lock_path, 0, 0, "%s %s: the wheel %s is of another "
				"package or version", p->name, p->version ? p->version : "", p->wheels[i].name);
			return gpuenv_hint(s->ctx, "the lock was edited by hand or is damaged: run gpuenv lock again");
		}
		r = s->o.tags ? gpuenv_tagset_rank_wheel(s->o.tags, &wn) : 0;
		if (r >= 0 && (best < 0 || r < best)) {
			best = r;
			*out = &p->wheels[i];
		}
	}
	if (!*out) {
		gpuenv_fail(s->ctx, GPUENV_EUNSUPPORTED, s->o.lock_path, 0, 0, "%s %s: no wheel the lock gives (%s%s) "
			"installs into %s (Python %s on this machine)", p->name, p->version ? p->version : "",
			p->wheels[0].name, p->nwheels > 1 ? ", ..." : "", s->o.venv->root, s->o.venv->python.version);
		return gpuenv_hint(s->ctx, "the lock is for another Python or platform: sync a target whose python "
					 "and platform are this venv's, or give --python");
	}
	return 0;
}

/* The key recorded in an installed dist-info by a source build, or NULL
 * (none, or unreadable: then it is built again). */
static const char *installed_build_key(gpuenv_sync_t *s, const gpuenv_env_dist_t *d)
{
	gpuenv_buf_t b;
	const char *out = NULL, *k;
	if (!d || d->egg_info || !d->is_dir)
		return NULL;
	const char *path = gpuenv_arena_printf(s->arena, "%s/%s", d->path.ptr, GPUENV_SYNC_BUILD_INFO).ptr;
	if (!path)
		return NULL;
	gpuenv_buf_init(&b, s->ctx, 1u << 16);
	if (gpuenv_fs_read(s->ctx, path, 1u << 16, &b) == 0 && b.data && (k = strstr(b.data, "\"key\": \""))) {
		k += 8;
		size_t n = 0;
		while (n < 64 && gpuenv_hex_digit(k[n]) >= 0)
			n++;
		if (n == 64 && k[n] == '"')
			out = gpuenv_arena_strndup(s->arena, k, n);
	}
	gpuenv_error_clear(s->ctx);
	gpuenv_buf_free(&b);
	return out;
}

/* A package built from source: what the builder gets, and its key. */
static int plan_source(gpuenv_sync_t *s, gpuenv_sync_action_t *a)
{
	const gpuenv_lock_package_t *p = a->pkg;
	gpuenv_sync_source_t *src = gpuenv_arena_calloc(s->arena, 1, sizeof(*src));
	if (!src)
		return gpuenv_oom(s->ctx, "the sync plan");
	src->pkg = p;
	if (p->directory) {
		src->directory = p->directory[0] == '/' ? p->directory
			: gpuenv_arena_printf(s->arena, "%s/%s", s->o.lock_dir, p->directory).ptr;
		if (src->directory && p->subdirectory)
			src->directory = gpuenv_arena_printf(s->arena, "%s/%s", src->directory, p->subdirectory).ptr;
		if (!src->directory)
			return gpuenv_oom(s->ctx, "the sync plan");
		gpuenv_fs_tidy_path((char *)src->directory);
		src->editable = p->editable;
	} else if (p->vcs) {
		/* the builder checks the commit out (src->pkg->vcs) */
	} else {
		const gpuenv_lock_file_t *f = p->sdist ? p->sdist : p->archive;
		gpuenv_lock_file_t *c = gpuenv_arena_alloc(s->arena, sizeof(*c));
		if (!c || !(*c = *f, c->name = f->name ? f->name : gpuenv_lock_file_name(s->arena, f)))
			return gpuenv_oom(s->ctx, "the sync plan");
		src->sdist = c;
		if (f->path && !(src->sdist_path = f->path[0] == '/' ? f->path
				     : gpuenv_arena_printf(s->arena, "%s/%s", s->o.lock_dir, f->path).ptr))
			return gpuenv_oom(s->ctx, "the sync plan");
	}
	a->source = src;
	return s->o.builder.key(s->o.builder.self, s->ctx, s->arena, src, &a->build_key);
}

static gpuenv_sync_action_t *plan_push(gpuenv_sync_t *s, gpuenv_sync_action_t **v, size_t *n, size_t *cap)
{
	if (gpuenv_array_grow(s->ctx, s->arena, v, cap, *n + 1, sizeof(**v), SIZE_MAX, "the sync plan"))
		return NULL;
	gpuenv_sync_action_t *a = &(*v)[(*n)++];
	memset(a, 0, sizeof(*a));
	return a;
}

static int plan_remove(gpuenv_sync_t *s, gpuenv_sync_action_t **v, size_t *n, size_t *cap,
	const gpuenv_env_dist_t *d)
{
	gpuenv_sync_action_t *a = plan_push(s, v, n, cap);
	if (!a)
		return gpuenv_oom(s->ctx, "the sync plan");
	a->op = GPUENV_SYNC_REMOVE;
	a->name = d->normalized.ptr;
	a->old_version = d->version.ptr;
	a->dist = d;
	return 0;
}

/* PEP 751: exactly one entry of a name may apply to the venv (the reader
 * refused two without a marker; markers that overlap show only here).
 * Before anything else about the entries is judged. */
static int one_each(gpuenv_sync_t *s)
{
	const gpuenv_lock_t *lk = s->o.lock;
	const gpuenv_lock_package_t *prev = NULL; /* the last one that applies */
	int r;

	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		bool yes;
		if ((r = pkg_applies(s, p, &yes)) != 0)
			return r;
		if (!yes)
			continue;
		if (prev && !strcmp(prev->name, p->name)) {
			gpuenv_fail(s->ctx, GPUENV_EFORMAT, s->o.lock_path, p->line, 0, "%s: two entries of the lock "
				"apply to this venv (%s%s%s at line %u, %s%s%s here): PEP 751 allows one", p->name,
				prev->version ? prev->version : "", prev->marker ? "; " : "",
				prev->marker ? prev->marker : "", prev->line, p->version ? p->version : "",
				p->marker ? "; " : "", p->marker ? p->marker : "");
			return gpuenv_hint(s->ctx, "their markers overlap: two locks merged, or an edit; lock again "
				"(gpuenv lock)");
		}
		prev = p;
	}
	return 0;
}

static int plan_build(gpuenv_sync_t *s)
{
	const gpuenv_lock_t *lk = s->o.lock;
	const gpuenv_env_list_t *in = &s->installed;
	gpuenv_sync_action_t *v = NULL;
	size_t n = 0, cap = 0, j = 0;
	int r;

	/* both sides sorted by normalised name: one merge */
	for (size_t i = 0; i <= lk->npackages; i++) {
		const gpuenv_lock_package_t *p = i < lk->npackages ? &lk->packages[i] : NULL;
		bool yes;
		if (p) {
			if ((r = pkg_applies(s, p, &yes)) != 0)
				return r;
			if (!yes) {
				s->plan.nskipped++;
				continue;
			}
			if ((r = python_fits(s, p->requires_python, &yes)) != 0)
				return r;
			if (!yes) {
				gpuenv_fail(s->ctx, GPUENV_EUNSUPPORTED, s->o.lock_path, p->line, 0, "%s %s requires "
					"Python %s; the venv %s has %s", p->name, p->version ? p->version : "",
					p->requires_python, s->o.venv->root, s->o.venv->python.version);
				return gpuenv_hint(s->ctx, "give --python with a version that fits, or lock for "
					"this venv's Python");
			}
		}
		/* installed names before p's: not in the lock */
		while (j < in->ndists && (!p || strcmp(in->dists[j].normalized.ptr, p->name) < 0))
			if ((r = plan_remove(s, &v, &n, &cap, &in->dists[j++])) != 0)
				return r;
		if (!p)
			break;
		gpuenv_sync_action_t *a = plan_push(s, &v, &n, &cap);
		if (!a)
			return gpuenv_oom(s->ctx, "the sync plan");
		a->name = p->name;
		a->pkg = p;
		a->new_version = p->version;
		if ((r = pkg_wheel(s, p, &a->file)) != 0 || (a->file && (r = file_sha256(s, p, a->file))) != 0)
			return r;
		/* PEP 751's version is optional: a wheel's file name has it */
		if (!a->new_version && a->file && !(a->new_version = wheel_version(s, p, a->file)))
			return s->ctx->err.code;
		if (!a->file && (r = plan_source(s, a)) != 0)
			return r;
		if (j < in->ndists && !strcmp(in->dists[j].normalized.ptr, p->name)) {
			a->dist = &in->dists[j++];
			a->old_version = a->dist->version.ptr;
			/* a source build: the same version of the same build (key) is
			 * kept; a directory's version is whatever its build says */
			const char *ik = a->build_key ? installed_build_key(s, a->dist) : NULL;
			bool same = a->build_key ? ik && !strcmp(ik, a->build_key) &&
							   (!p->version || same_version(s, a->old_version, p->version))
						 : same_version(s, a->old_version, a->new_version);
			a->op = !same && (!a->build_key || (p->version && !same_version(s, a->old_version, p->version)))
					? GPUENV_SYNC_UPGRADE
				: !same || s->o.reinstall ? GPUENV_SYNC_REINSTALL
							  : GPUENV_SYNC_KEEP;
			/* a second copy of the same name (two dist-info folders) goes */
			while (j < in->ndists && !strcmp(in->dists[j].normalized.ptr, p->name))
				if ((r = plan_remove(s, &v, &n, &cap, &in->dists[j++])) != 0)
					return r;
		} else {
			a->op = GPUENV_SYNC_INSTALL;
		}
	}
	s->plan.actions = v;
	s->plan.n = n;
	for (size_t i = 0; i < n; i++)
		s->plan.count[v[i].op]++;
	return 0;
}

int gpuenv_sync_begin(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_sync_opts_t *opts, gpuenv_sync_t **out)
{
	gpuenv_sync_t *s;
	gpuenv_str_t site;
	int r;

	*out = NULL;
	if (!(s = gpuenv_arena_calloc(arena, 1, sizeof(*s))))
		return gpuenv_oom(ctx, "the sync");
	s->ctx = ctx;
	s->arena = arena;
	s->o = *opts;
	/* a venv not made yet (a dry run): nothing to lock or read */
	if (opts->venv->site && opts->venv->broken) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, opts->venv->root, 0, 0, "the venv has no working interpreter: %s",
			opts->venv->broken);
		return gpuenv_hint(ctx, "gpuenv venv %s repairs it (its interpreter links made again, its "
			"packages kept), then sync again", opts->venv->root);
	}
	if (opts->venv->site) {
		if ((r = gpuenv_txn_begin(ctx, &opts->venv->scheme, opts->wait ? GPUENV_TXN_WAIT : 0,
			     &s->plan.recovery, &s->txn)) != 0)
			return r;
		site = gpuenv_str(opts->venv->site);
		if ((r = gpuenv_env_read(ctx, arena, &site, 1, NULL, &s->installed)) != 0)
			goto fail;
	}
	for (size_t i = 0; i < s->installed.nproblems; i++)
		gpuenv_log(ctx, 1, "%s", s->installed.problems[i].ptr);
	if ((r = lock_fits(s)) != 0 || (r = one_each(s)) != 0 || (r = plan_build(s)) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	gpuenv_txn_abort(s->txn);
	s->txn = NULL;
	return r;
}

static bool is_requested(const gpuenv_sync_t *s, const char *name)
{
	for (size_t i = 0; i < s->o.nrequested; i++)
		if (!strcmp(s->o.requested[i], name))
			return true;
	return false;
}

/* JSON string body of text (quotes and backslashes escaped; the paths
 * and keys written here hold no control characters). */
static void json_str(gpuenv_buf_t *b, const char *text)
{
	for (const char *c = text; *c; c++) {
		if (*c == '"' || *c == '\\')
			gpuenv_buf_putc(b, '\\');
		if ((unsigned char)*c < 0x20)
			gpuenv_buf_printf(b, "\\u%04x", (unsigned char)*c);
		else
			gpuenv_buf_putc(b, *c);
	}
}

/* PEP 610 for an archive: its URL and hash. */
static const char *direct_url(gpuenv_sync_t *s, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_lock_file_t *f)
{
	gpuenv_buf_t b;
	const char *out = NULL;
	const char *url = f->url;
	if (!url && f->path) /* a path: its file:// URL */
		url = gpuenv_arena_printf(arena, "file://%s%s%s", f->path[0] == '/' ? "" : s->o.lock_dir,
			f->path[0] == '/' ? "" : "/", f->path).ptr;
	if (!url)
		return NULL;
	gpuenv_buf_init(&b, ctx, 1u << 20);
	gpuenv_buf_puts(&b, "{\"url\": \"");
	json_str(&b, url);
	gpuenv_buf_printf(&b, "\", \"archive_info\": {\"hash\": \"sha256=%s\", \"hashes\": {\"sha256\": \"%s\"}}}\n",
		f->sha256, f->sha256);
	if (b.data)
		out = gpuenv_arena_strndup(arena, b.data, b.len);
	gpuenv_buf_free(&b);
	return out;
}

static bool installs(int op)
{
	return op == GPUENV_SYNC_INSTALL || op == GPUENV_SYNC_UPGRADE || op == GPUENV_SYNC_REINSTALL;
}

static bool in_round(const gpuenv_sync_t *s, const gpuenv_sync_action_t *a, int round);

/* The cache requests of the round's installs, in plan order. */
static int commit_reqs(gpuenv_sync_t *s, gpuenv_cache_req_t *reqs, int round)
{
	size_t k = 0;
	for (size_t i = 0; i < s->plan.n; i++) {
		const gpuenv_sync_action_t *a = &s->plan.actions[i];
		const gpuenv_lock_file_t *f = a->file;
		if (!installs(a->op) || !in_round(s, a, round))
			continue;
		if (a->source) { /* built: the wheel in the build cache */
			const gpuenv_sync_built_t *b = &s->built[i];
			reqs[k] = (gpuenv_cache_req_t){ .name = b->wheel_name, .path = b->wheel, .sha256 = b->sha256,
				.size = -1 };
			k++;
			continue;
		}
		/* an archive: the name its path or URL ends in, as pkg_wheel read it */
		if (!(reqs[k].name = f->name ? f->name : gpuenv_lock_file_name(s->arena, f)))
			return gpuenv_oom(s->ctx, "the sync");
		reqs[k].url = f->url;
		if (f->path && !(reqs[k].path = f->path[0] == '/' ? f->path
				     : gpuenv_arena_printf(s->arena, "%s/%s", s->o.lock_dir, f->path).ptr))
			return gpuenv_oom(s->ctx, "the sync");
		reqs[k].sha256 = f->sha256;
		reqs[k].size = f->size;
		k++;
	}
	return 0;
}

/* A source build's dist-info files: gpuenv-build.json (the key, so the
 * next sync knows the build), and for a directory PEP 610's
 * direct_url.json with dir_info (PEP 660: "editable": true), which is how
 * pip and other tools tell an editable install. */
static int source_meta(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_sync_action_t *a,
	gpuenv_stage_opts_t *so)
{
	const gpuenv_sync_source_t *src = a->source;
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, ctx, 1u << 20);
	gpuenv_buf_puts(&b, "{\"key\": \"");
	json_str(&b, a->build_key ? a->build_key : "");
	gpuenv_buf_printf(&b, "\", \"source\": \"%s\"}\n", src->editable ? "editable" : src->directory ? "directory"
													 : "sdist");
	so->build_info_json = b.data ? gpuenv_arena_strndup(arena, b.data, b.len) : NULL;
	gpuenv_buf_reset(&b);
	if (src->directory) {
		gpuenv_buf_puts(&b, "{\"url\": \"file://");
		json_str(&b, src->directory);
		gpuenv_buf_printf(&b, "\", \"dir_info\": {%s}}\n", src->editable ? "\"editable\": true" : "");
		so->direct_url_json = b.data ? gpuenv_arena_strndup(arena, b.data, b.len) : NULL;
	}
	gpuenv_buf_free(&b);
	if (!so->build_info_json || (src->directory && !so->direct_url_json))
		return gpuenv_oom(ctx, "the sync");
	return 0;
}

/* One package to stage: its action, cache entry and stage folder. */
struct stage_job {
	const gpuenv_sync_action_t *a;
	const gpuenv_cache_entry_t *e;
	const char *stage;
	size_t nfiles;
	int link_mode_used;
	int rc;
	gpuenv_error_t err;
};

struct stage_pool {
	gpuenv_sync_t *s;
	struct stage_job *jobs;
	size_t n;
	size_t next; /* under mu */
	bool failed;
	pthread_mutex_t mu;
};

/* Check the tree is the package's and stage it (any thread: its own
 * context and arena). */
static int stage_one(gpuenv_sync_t *s, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stage_job *j)
{
	const gpuenv_sync_action_t *a = j->a;
	const gpuenv_cache_entry_t *e = j->e;
	gpuenv_stage_opts_t so = { .link_mode = s->o.link_mode, .installer = "gpuenv",
		.requested = is_requested(s, a->name), .compile = s->o.compile };
	gpuenv_staged_t st;
	char norm[256];
	int r;
	gpuenv_name_normalize_to(gpuenv_str(e->tree.name), norm, sizeof(norm));
	if (strcmp(norm, a->name) != 0 || ((a->new_version || !a->source) &&
						  !same_version_ctx(ctx, arena, e->tree.version, a->new_version))) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, s->o.lock_path, a->pkg ? a->pkg->line : 0, 0,
			"%s%s%s: the wheel's METADATA says %s %s", a->name, a->new_version ? " " : "",
			a->new_version ? a->new_version : "", e->tree.name, e->tree.version);
		return gpuenv_hint(ctx, "the lock or the index is wrong about this file: lock again");
	}
	if (a->pkg->archive &&
		!(so.direct_url_json = direct_url(s, ctx, arena, a->file ? a->file : a->source->sdist)))
		return gpuenv_oom(ctx, "the sync");
	if (a->source && (r = source_meta(ctx, arena, a, &so)) != 0)
		return r;
	uint64_t t0 = gpuenv_trace_begin(ctx);
	r = gpuenv_wheel_stage(ctx, arena, &e->tree, e->tree_dir, &s->o.venv->scheme, j->stage, &so, &st);
	gpuenv_trace_end(ctx, "install", "link", a->name, j->stage, t0);
	if (r != 0)
		return r;
	j->nfiles = st.nfiles;
	j->link_mode_used = st.link_mode_used;
	return 0;
}

static void *stage_worker(void *arg)
{
	struct stage_pool *p = arg;
	gpuenv_ctx_t ctx = *p->s->ctx;
	gpuenv_arena_t arena;
	gpuenv_error_clear(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	for (;;) {
		pthread_mutex_lock(&p->mu);
		size_t i = p->failed ? p->n : p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			break;
		struct stage_job *j = &p->jobs[i];
		if ((j->rc = stage_one(p->s, &ctx, &arena, j)) != 0) {
			j->err = ctx.err;
			gpuenv_error_clear(&ctx);
			pthread_mutex_lock(&p->mu);
			p->failed = true;
			pthread_mutex_unlock(&p->mu);
		}
	}
	gpuenv_arena_free(&arena);
	return NULL;
}

/* A thread of its own (the calling thread stages too, under its own name). */
static void *stage_thread(void *arg)
{
	struct stage_pool *p = arg;

	gpuenv_trace_thread_name(p->s->ctx, "stage");
	return stage_worker(arg);
}

#define SYNC_MAX_THREADS 16

/* Stage every job, on up to one thread per CPU (a venv's files are
 * mostly folders and links: the kernel's work, which spreads over cores);
 * the first failure in plan order is the one reported. */
static int stage_all(gpuenv_sync_t *s, struct stage_job *jobs, size_t n)
{
	struct stage_pool p = { .s = s, .jobs = jobs, .n = n };
	pthread_t th[SYNC_MAX_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = cpus < 1 ? 1 : (size_t)cpus, started = 0;
	if (nt > SYNC_MAX_THREADS)
		nt = SYNC_MAX_THREADS;
	if (nt > n)
		nt = n;
	pthread_mutex_init(&p.mu, NULL);
	for (size_t i = 1; i < nt; i++)
		if (pthread_create(&th[started], NULL, stage_thread, &p) == 0)
			started++;
	stage_worker(&p); /* this thread works too */
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.mu);
	for (size_t i = 0; i < n; i++)
		if (jobs[i].rc) {
			s->ctx->err = jobs[i].err;
			return jobs[i].rc;
		}
	return 0;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A source the builder wants built against the venv itself (no
 * isolation): it is installed in a second round, after everything else is
 * in the venv (its build imports torch, say). */
static bool deferred(const gpuenv_sync_t *s, const gpuenv_sync_action_t *a)
{
	return installs(a->op) && a->source && s->o.builder.deferred &&
	       s->o.builder.deferred(s->o.builder.self, a->name);
}

/* Is action a part of round (0: all but the deferred sources, 1: those)? */
static bool in_round(const gpuenv_sync_t *s, const gpuenv_sync_action_t *a, int round)
{
	return deferred(s, a) == (round == 1);
}

/* One round of the commit: its builds, its wheels through the cache, staged,
 * removed and installed in s->txn, committed.  res accumulates. */
static int commit_round(gpuenv_sync_t *s, gpuenv_cache_t *cache, gpuenv_index_t *ix,
	const gpuenv_cache_progress_t *progress, gpuenv_sync_result_t *res, int round)
{
	gpuenv_ctx_t *ctx = s->ctx;
	const gpuenv_sync_plan_t *pl = &s->plan;
	size_t nreq = 0, k = 0;
	gpuenv_cache_req_t *reqs = NULL;
	gpuenv_cache_entry_t *ents = NULL;
	struct stage_job *jobs = NULL;
	int r;

	for (size_t i = 0; i < pl->n; i++)
		nreq += installs(pl->actions[i].op) && in_round(s, &pl->actions[i], round);
	/* source builds first: their wheels then go through the cache as
	 * every other wheel does */
	if (nreq && !s->built && !(s->built = gpuenv_arena_calloc(s->arena, pl->n, sizeof(*s->built))))
		return gpuenv_oom(ctx, "the sync");
	double tb = mono_s();
	for (size_t i = 0; i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		if (!installs(a->op) || !a->source || !in_round(s, a, round))
			continue;
		if ((r = s->o.builder.build(s->o.builder.self, ctx, s->arena, cache, ix, a->source, &s->built[i])) != 0)
			return r;
		res->built++;
	}
	res->secs_build += mono_s() - tb;
	if (nreq) {
		reqs = gpuenv_arena_calloc(s->arena, nreq, sizeof(*reqs));
		ents = gpuenv_arena_calloc(s->arena, nreq, sizeof(*ents));
		jobs = gpuenv_arena_calloc(s->arena, nreq, sizeof(*jobs));
		if (!reqs || !ents || !jobs)
			return gpuenv_oom(ctx, "the sync");
		if ((r = commit_reqs(s, reqs, round)) != 0)
			return r;
		double t0 = mono_s();
		uint64_t tt = gpuenv_trace_begin(ctx);
		r = gpuenv_cache_get(cache, ctx, s->arena, ix, reqs, nreq, s->o.limits, progress, ents);
		gpuenv_trace_end(ctx, "install", "cache", NULL, "download, check and unpack the wheels", tt);
		if (r != 0)
			return r;
		res->secs_cache += mono_s() - t0;
	}
	for (size_t i = 0; i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		if (!installs(a->op) || !in_round(s, a, round))
			continue;
		jobs[k] = (struct stage_job){ .a = a, .e = &ents[k], .stage = gpuenv_txn_stage_dir(s->txn, a->name) };
		if (!jobs[k].stage) /* a full disk says so; else memory ran out */
			return ctx->err.code ? ctx->err.code : gpuenv_oom(ctx, "the sync");
		k++;
	}
	double t1 = mono_s();
	uint64_t ts = gpuenv_trace_begin(ctx);
	r = nreq ? stage_all(s, jobs, nreq) : 0;
	gpuenv_trace_end(ctx, "install", "stage", NULL, "link the packages' files into the transaction", ts);
	if (r != 0)
		return r;
	res->secs_stage += mono_s() - t1;
	k = 0;
	for (size_t i = 0; i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		if (!in_round(s, a, round))
			continue;
		if (a->dist && a->op != GPUENV_SYNC_KEEP) {
			if ((r = gpuenv_txn_remove(s->txn, ctx, a->dist)) != 0)
				return r;
			res->removed++;
		}
		if (!installs(a->op))
			continue;
		struct stage_job *j = &jobs[k];
		const gpuenv_cache_entry_t *e = &ents[k++];
		if ((r = gpuenv_txn_install(s->txn, ctx, j->stage)) != 0)
			return r;
		res->installed++;
		res->files += j->nfiles;
		if (j->link_mode_used > res->link_mode_used)
			res->link_mode_used = j->link_mode_used;
		res->downloaded += e->downloaded;
		res->unpacked += e->unpacked;
		res->repaired += e->repaired;
	}
	double t2 = mono_s();
	gpuenv_txn_report_t rep = { 0 };
	uint64_t tc = gpuenv_trace_begin(ctx);
	r = gpuenv_txn_commit(s->txn, ctx, &rep);
	gpuenv_trace_end(ctx, "install", "commit", NULL, s->o.venv->root, tc);
	s->txn = NULL; /* commit frees it in every case */
	res->txn.renames += rep.renames;
	res->txn.removed_files += rep.removed_files;
	res->txn.ops += rep.ops;
	res->secs_commit += mono_s() - t2;
	return r;
}

int gpuenv_sync_commit(gpuenv_sync_t *s, gpuenv_cache_t *cache, gpuenv_index_t *ix,
	const gpuenv_cache_progress_t *progress, gpuenv_sync_result_t *res)
{
	gpuenv_ctx_t *ctx = s->ctx;
	size_t ndeferred = 0;
	int r;

	memset(res, 0, sizeof(*res));
	if (!s->txn)
		return gpuenv_fail(ctx, -EINVAL, s->o.venv->root, 0, 0, "the sync was already committed");
	res->link_mode_used = s->o.link_mode;
	for (size_t i = 0; i < s->plan.n; i++)
		ndeferred += deferred(s, &s->plan.actions[i]);
	if ((r = commit_round(s, cache, ix, progress, res, 0)) != 0 || !ndeferred)
		return r;
	/* round 2: the builds against the venv, now holding the rest of the
	 * lock; a kill between the rounds leaves round 1 complete, and the
	 * next sync plans what round 2 had left */
	gpuenv_txn_report_t again;
	if ((r = gpuenv_txn_begin(ctx, &s->o.venv->scheme, s->o.wait ? GPUENV_TXN_WAIT : 0, &again, &s->txn)) != 0)
		return r;
	return commit_round(s, cache, ix, progress, res, 1);
}

void gpuenv_sync_end(gpuenv_sync_t *s)
{
	if (!s)
		return;
	if (s->txn)
		gpuenv_txn_abort(s->txn);
	s->txn = NULL;
}
