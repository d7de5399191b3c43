/* A lock as pip requirements or constraints (include/gpuenv/export.h;
 * docs/export.md).
 *
 * requirements: the index lines of the sources the lock used (--index-url
 * for the one most packages came from, PyPI first when it is one of them,
 * --extra-index-url for the others), then one requirement per package,
 * "name==version ; marker", with a --hash=sha256: for every file the lock
 * has for it (wheels and sdist), so that `pip install --require-hashes -r`
 * installs exactly the lock; a package the lock has from a single URL or
 * path is written "name @ URL" with its hash.  constraints: the same pins
 * without hashes and index lines, as pip's -c takes them (a URL is not a
 * constraint: such packages are left out, with a comment).  A package that
 * cannot be exported (a directory or VCS entry has no hash to enforce)
 * fails the call: the error names it and says what to do. */
#include "gpuenv/export.h"

#include <string.h>

#include "export_int.h"

#define PYPI_SIMPLE "https://pypi.org/simple"

struct index_count {
	const char *url;
	size_t n;
};

static bool is_pypi(const char *url)
{
	return strncmp(url, PYPI_SIMPLE, strlen(PYPI_SIMPLE)) == 0;
}

/* The indexes packages came from, the primary first: PyPI when used, else
 * the one most packages came from (ties: the first in package order). */
static size_t collect_indexes(const gpuenv_lock_t *lk, struct index_count *ix, size_t max)
{
	size_t n = 0, best = 0;

	for (size_t i = 0; i < lk->npackages; i++) {
		const char *u = lk->packages[i].index;
		size_t k;
		if (!u)
			continue;
		for (k = 0; k < n && strcmp(ix[k].url, u); k++)
			;
		if (k == n) {
			if (n == max)
				continue;
			ix[n++] = (struct index_count){ u, 0 };
		}
		ix[k].n++;
	}
	for (size_t k = 1; k < n; k++)
		if ((is_pypi(ix[k].url) && !is_pypi(ix[best].url)) ||
			(is_pypi(ix[k].url) == is_pypi(ix[best].url) && ix[k].n > ix[best].n))
			best = k;
	if (best) {
		struct index_count t = ix[0];
		ix[0] = ix[best];
		ix[best] = t;
	}
	return n;
}

/* The one file of a package that has no index (a find-links or path wheel),
 * as a URL, or NULL. */
static const char *single_url(gpuenv_arena_t *a, const gpuenv_lock_package_t *p,
	const gpuenv_lock_file_t **file)
{
	const gpuenv_lock_file_t *f = p->nwheels == 1 && !p->sdist ? &p->wheels[0] :
		!p->nwheels && p->sdist ? p->sdist : p->archive;
	*file = f;
	if (!f)
		return NULL;
	if (f->url)
		return f->url;
	if (f->path)
		return f->path[0] == '/' ? gpuenv_arena_printf(a, "file://%s", f->path).ptr : NULL;
	return NULL;
}

static void put_hash(export_text_t *o, const gpuenv_lock_file_t *f)
{
	if (f && f->sha256)
		export_put(o, " \\\n    --hash=sha256:%s", f->sha256);
}

int gpuenv_export_requirements(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_lock_t *lk, const char *lock_path,
	bool constraints, bool hashes, gpuenv_buf_t *out)
{
	export_text_t text = { .b = out }, *o = &text;
	struct index_count ix[32];
	size_t nix = collect_indexes(lk, ix, 32);
	const char *tname = lk->target.name;

	export_put(o, "# %s exported by gpuenv from %s%s%s%s\n", constraints ? "constraints" :
		"requirements", lock_path, tname ? " (target " : "", tname ? tname : "", tname ? ")" : "");
	if (!constraints && hashes)
		export_put(o, "# pip install --require-hashes -r FILE installs exactly the lock\n");
	if (constraints)
		for (size_t k = 0; k < nix; k++)
			export_put(o, "# index: %s\n", ix[k].url);
	else
		for (size_t k = 0; k < nix; k++)
			export_put(o, "%s %s\n", k ? "--extra-index-url" : "--index-url", ix[k].url);
	export_put(o, "\n");
	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		const char *mk = p->marker;
		if (p->directory || p->vcs) {
			if (constraints) {
				export_put(o, "# %s: a %s entry, not a constraint\n", p->name,
					p->directory ? "directory" : "VCS");
				continue;
			}
			if (hashes) {
				gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "package %s is a "
					"%s entry: pip cannot check a hash of it, so --require-hashes would "
					"refuse the file", p->name, p->directory ? "directory" : "VCS");
				return gpuenv_hint(ctx, "export with --no-hashes, or --format "
							      "constraints");
			}
			if (p->directory)
				export_put(o, "%s%s", p->editable ? "-e " : "", p->directory);
			else
				export_put(o, "%s @ %s+%s@%s", p->name, p->vcs->type,
					p->vcs->url ? p->vcs->url : p->vcs->path, p->vcs->commit_id);
		} else if (!p->index) {
			const gpuenv_lock_file_t *f;
			const char *url = single_url(a, p, &f);
			if (!url && f && !f->url && f->path && f->path[0] == '/')
				return gpuenv_oom(ctx, "for the requirements");
			if (!url) {
				gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "package %s %s "
					"has %zu files and no index: pip needs one URL or an index to find "
					"it", p->name, p->version ? p->version : "", p->nwheels +
					(p->sdist != NULL));
				return gpuenv_hint(ctx, "lock it from an index or find-links source "
							      "(gpuenv lock --find-links DIR)");
			}
			if (constraints) {
				export_put(o, "# %s: from %s, a URL is not a constraint\n", p->name, url);
				continue;
			}
			export_put(o, "%s @ %s", p->name, url);
			if (mk)
				export_put(o, " ; %s", mk);
			if (hashes)
				put_hash(o, f);
			export_put(o, "\n");
			continue;
		} else
			export_put(o, "%s==%s", p->name, p->version);
		if (mk)
			export_put(o, " ; %s", mk);
		if (hashes && !constraints && p->index) {
			for (size_t w = 0; w < p->nwheels; w++)
				put_hash(o, &p->wheels[w]);
			put_hash(o, p->sdist);
		}
		export_put(o, "\n");
	}
	return export_done(ctx, o, "for the requirements");
}

