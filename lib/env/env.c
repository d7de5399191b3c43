/* env.c: the distributions of a Python environment's site folders (see
 * include/gpuenv/env.h).  Each site folder is opened once; its entries,
 * their METADATA / PKG-INFO and requires.txt are opened relative to it. */
#define _GNU_SOURCE
#include "gpuenv/env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/pep440.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* requires.txt of an egg: a small text file */
#define REQUIRES_TXT_MAX ((size_t)64 << 10)

struct reader {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	gpuenv_arena_t scratch; /* one METADATA's parsed headers, freed after it */
	gpuenv_buf_t buf;
	size_t max;
	/* growing arrays in the arena (old blocks stay behind: lists are short) */
	gpuenv_env_dist_t *dists;
	size_t ndists, capdists;
	gpuenv_str_t *problems;
	size_t nproblems, capproblems;
	bool truncated;
};

/* Room for item n of an arena array (*items a T **; core's growth rule). */
static bool grow(gpuenv_arena_t *a, void *items, size_t *cap, size_t n, size_t elem)
{
	return gpuenv_array_grow(a->ctx, a, items, cap, n + 1, elem, SIZE_MAX, "an environment") == 0;
}


/* A NUL-terminated copy in the arena; an empty slice stays empty, not NULL. */
static gpuenv_str_t sdup(gpuenv_arena_t *a, gpuenv_str_t s)
{
	char *p = gpuenv_arena_strndup(a, s.ptr ? s.ptr : "", s.len);
	return p ? gpuenv_str_n(p, s.len) : GPUENV_STR_NULL;
}

/* A problem "path: message"; -ENOMEM only. */
static int problem(struct reader *R, const char *path, const char *fmt, ...) GPUENV_PRINTF(3, 4);
static int problem(struct reader *R, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!grow(R->a, &R->problems, &R->capproblems, R->nproblems, sizeof(gpuenv_str_t)))
		return gpuenv_oom(R->ctx, "environment problems");
	gpuenv_str_t s = gpuenv_arena_printf(R->a, "%s: %s", path, msg);
	if (!s.ptr)
		return gpuenv_oom(R->ctx, "environment problems");
	R->problems[R->nproblems++] = s;
	return 0;
}

/* The context's error as a problem, then cleared (a file that does not
 * parse is one problem among the environment's). */
static int problem_from_ctx(struct reader *R, const char *path)
{
	char msg[1200];

	gpuenv_error_format(&R->ctx->err, msg, sizeof(msg));
	gpuenv_error_clear(R->ctx);
	if (!grow(R->a, &R->problems, &R->capproblems, R->nproblems, sizeof(gpuenv_str_t)))
		return gpuenv_oom(R->ctx, "environment problems");
	/* the message starts with the file it names already */
	gpuenv_str_t s = strncmp(msg, path, strlen(path)) == 0
		? gpuenv_arena_printf(R->a, "%s", msg) : gpuenv_arena_printf(R->a, "%s: %s", path, msg);
	if (!s.ptr)
		return gpuenv_oom(R->ctx, "environment problems");
	R->problems[R->nproblems++] = s;
	return 0;
}

/* Read the start of dirfd/name (a regular file only) into R->buf: 0, or
 * -errno / GPUENV_EFORMAT (not a regular file). */
static int read_at(struct reader *R, int dirfd, const char *name, size_t max, const char *stop)
{
	int fd = gpuenv_fs_open_regular(NULL, dirfd, name, NULL), r;

	gpuenv_buf_reset(&R->buf);
	if (fd < 0)
		return fd;
	r = gpuenv_fs_read_head(fd, max, stop, &R->buf);
	close(fd);
	return r;
}

static bool add_require(struct reader *R, gpuenv_str_t **v, size_t *n, size_t *cap, gpuenv_str_t s)
{
	if (!s.ptr || !grow(R->a, v, cap, *n, sizeof(**v)))
		return false;
	(*v)[(*n)++] = s;
	return true;
}

/* An egg's requires.txt turned into Requires-Dist strings: "[extra:marker]"
 * sections become markers. */
static int egg_requires(struct reader *R, int sitefd, const char *path, gpuenv_env_dist_t *d)
{
	gpuenv_str_t extra = GPUENV_STR_NULL, marker = GPUENV_STR_NULL;
	size_t cap = 0;
	char rel[NAME_MAX + 16];
	int r;

	snprintf(rel, sizeof(rel), "%s/requires.txt", d->entry.ptr);
	r = read_at(R, sitefd, rel, REQUIRES_TXT_MAX, NULL);

	if (r == -ENOENT)
		return 0;
	if (r == -ENOMEM)
		return gpuenv_oom(R->ctx, "requires.txt");
	if (r)
		return problem(R, path, "requires.txt: %s", r == GPUENV_EFORMAT
			? "not a regular file" : strerror(-r));
	gpuenv_str_t text = sdup(R->a, gpuenv_str_n(R->buf.data, R->buf.len));
	if (!text.ptr)
		return gpuenv_oom(R->ctx, "requires.txt");
	for (gpuenv_str_t rest = text; rest.ptr;) {
		gpuenv_str_t line, s;
		rest = gpuenv_str_split(rest, '\n', &line);
		line = gpuenv_str_trim(line);
		if (!line.len || line.ptr[0] == '#')
			continue;
		if (line.ptr[0] == '[' && line.ptr[line.len - 1] == ']') {
			gpuenv_str_t in = gpuenv_str_n(line.ptr + 1, line.len - 2), m;
			m = gpuenv_str_split(in, ':', &extra);
			extra = gpuenv_str_trim(extra);
			marker = m.ptr ? gpuenv_str_trim(m) : GPUENV_STR_NULL;
			continue;
		}
		if (extra.len && marker.len)
			s = gpuenv_arena_printf(R->a, GPUENV_STR_FMT "; (" GPUENV_STR_FMT ") and extra == \"" GPUENV_STR_FMT "\"",
				GPUENV_STR_ARG(line), GPUENV_STR_ARG(marker), GPUENV_STR_ARG(extra));
		else if (extra.len)
			s = gpuenv_arena_printf(R->a, GPUENV_STR_FMT "; extra == \"" GPUENV_STR_FMT "\"",
				GPUENV_STR_ARG(line), GPUENV_STR_ARG(extra));
		else if (marker.len)
			s = gpuenv_arena_printf(R->a, GPUENV_STR_FMT "; " GPUENV_STR_FMT, GPUENV_STR_ARG(line),
				GPUENV_STR_ARG(marker));
		else
			s = sdup(R->a, line);
		if (!add_require(R, &d->requires, &d->nrequires, &cap, s))
			return gpuenv_oom(R->ctx, "requires.txt");
	}
	return 0;
}

/* Name, Version and every Requires-Dist of a header block, through the one
 * header parser; a block that does not parse is a problem (the folder name
 * then stands in). */
static int parse_headers(struct reader *R, const char *metapath, gpuenv_env_dist_t *d)
{
	gpuenv_md_field_t *f;
	gpuenv_str_t body;
	size_t nf, cap = 0;
	unsigned body_line;
	int r;

	/* the headers only: the long description after the blank line can be
	 * 100 KB and is not needed (gpuenv_fs_read_head stopped at it) */
	/* the field table is scratch (every header of every distribution kept
	 * in the result arena cost a third more page faults): what is kept is
	 * copied out below */
	gpuenv_arena_free(&R->scratch);
	gpuenv_arena_init(&R->scratch, R->ctx, 0);
	r = gpuenv_headers_parse(R->ctx, &R->scratch, metapath,
		gpuenv_str_n(R->buf.data, R->buf.len), &nf, &f, &body, &body_line);
	if (r == -ENOMEM)
		return r;
	if (r)
		return problem_from_ctx(R, metapath);
	for (size_t i = 0; i < nf; i++) {
		gpuenv_str_t *slot = NULL;
		if (gpuenv_str_ieq(f[i].name, GPUENV_STR_LIT("Name")))
			slot = &d->name;
		else if (gpuenv_str_ieq(f[i].name, GPUENV_STR_LIT("Version")))
			slot = &d->version;
		if (slot) {
			if (!slot->ptr && !(*slot = sdup(R->a, f[i].value)).ptr)
				return gpuenv_oom(R->ctx, "METADATA");
		} else if (gpuenv_str_ieq(f[i].name, GPUENV_STR_LIT("Requires-Dist"))) {
			if (!add_require(R, &d->requires, &d->nrequires, &cap, sdup(R->a, f[i].value)))
				return gpuenv_oom(R->ctx, "METADATA");
		}
	}
	return 0;
}

static int read_dist(struct reader *R, const char *site, size_t site_idx, int sitefd,
	const char *ename, bool isdir)
{
	gpuenv_str_t en = gpuenv_str(ename);
	bool egg = gpuenv_str_endswith(en, ".egg-info");
	gpuenv_env_dist_t d;
	char norm[256], rel[NAME_MAX + 16];
	int r;

	memset(&d, 0, sizeof(d));
	d.path = gpuenv_arena_printf(R->a, "%s%s%s", site, site[0] && site[strlen(site) - 1] == '/' ? "" : "/", ename);
	d.entry = sdup(R->a, en);
	if (!d.path.ptr || !d.entry.ptr)
		return gpuenv_oom(R->ctx, "environment");
	d.site = site_idx;
	d.egg_info = egg;
	d.is_dir = isdir;
	/* an egg-info file is PKG-INFO itself; the files inside a folder are
	 * opened relative to the site folder too ("x.dist-info/METADATA": one
	 * open a distribution, not three) */
	const char *meta = !isdir ? ename : egg ? "PKG-INFO" : "METADATA";
	if (isdir)
		snprintf(rel, sizeof(rel), "%s/%s", ename, meta);
	r = read_at(R, sitefd, isdir ? rel : ename, GPUENV_METADATA_MAX, "\n\n");
	/* for messages only: on the stack, not in the result arena */
	char metapath[PATH_MAX];
	snprintf(metapath, sizeof(metapath), "%s%s%s", d.path.ptr, isdir ? "/" : "", isdir ? meta : "");
	if (r == -ENOMEM) {
		r = gpuenv_oom(R->ctx, "METADATA");
		goto out;
	}
	if (r)
		r = problem(R, metapath, "cannot read: %s",
			r == GPUENV_EFORMAT ? "not a regular file" : strerror(-r));
	else if (R->buf.len)
		r = parse_headers(R, metapath, &d);
	if (r)
		goto out;
	/* the folder name "name-version.dist-info" stands in for what is missing */
	gpuenv_str_t stem = gpuenv_str_n(ename, en.len - (egg ? 9 : 10));
	gpuenv_str_t fname, fver = gpuenv_str_split(stem, '-', &fname);
	if (!d.name.ptr && fname.len && !(d.name = sdup(R->a, fname)).ptr)
		goto oom;
	if (!d.version.ptr && fver.ptr) {
		gpuenv_str_t v;
		gpuenv_str_split(fver, '-', &v); /* egg: name-1.0-py3.11 */
		if (!(d.version = sdup(R->a, v)).ptr)
			goto oom;
	}
	if (!d.name.len) {
		r = problem(R, d.path.ptr, "no distribution name (neither in %s nor in the "
			"folder name): left out", meta);
		goto out;
	}
	if (egg && isdir && !d.nrequires && (r = egg_requires(R, sitefd, d.path.ptr, &d)))
		goto out;
	size_t nlen = gpuenv_name_normalize_to(d.name, norm, sizeof(norm));
	if (nlen == SIZE_MAX) {
		r = problem(R, d.path.ptr, "name of %zu bytes, over the %zu-byte limit: left out",
			d.name.len, sizeof(norm) - 1);
		goto out;
	}
	if (R->ndists >= R->max) {
		if (!R->truncated)
			r = problem(R, site, "more than %zu distributions: the rest are left out",
				R->max);
		R->truncated = true;
		goto out;
	}
	if (!(d.normalized = sdup(R->a, gpuenv_str_n(norm, nlen))).ptr ||
		!grow(R->a, &R->dists, &R->capdists, R->ndists, sizeof(d)))
		goto oom;
	R->dists[R->ndists++] = d;
	r = 0;
	goto out;
oom:
	r = gpuenv_oom(R->ctx, "environment");
out:
	return r;
}

static int dist_cmp(const void *x, const void *y)
{
	const gpuenv_env_dist_t *a = x, *b = y;
	int c = gpuenv_str_cmp(a->normalized, b->normalized);
	if (c)
		return c;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return gpuenv_str_cmp(a->path, b->path);
}

static int read_site(struct reader *R, const char *site, size_t idx)
{
	char full[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int fd, r = 0;

	/* symlinks of the site path resolved inside ctx->root; below the site
	 * folder everything is opened relative to it */
	if (gpuenv_fs_resolve_in_root(R->ctx->root, site, full, sizeof(full)) != 0)
		return problem(R, site, "cannot list: path too long");
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return problem(R, site, "cannot list: %s", strerror(err));
	}
	while ((e = readdir(d)) != NULL && !r) {
		gpuenv_str_t n = gpuenv_str(e->d_name);
		bool dist = gpuenv_str_endswith(n, ".dist-info");
		if (!dist && !gpuenv_str_endswith(n, ".egg-info"))
			continue;
		bool isdir = e->d_type == DT_DIR;
		if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
			struct stat st;
			isdir = fstatat(fd, e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
		}
		if (!isdir && dist)
			continue; /* a .dist-info must be a folder */
		r = read_dist(R, site, idx, fd, e->d_name, isdir);
	}
	closedir(d);
	return r;
}

int gpuenv_env_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_str_t *sites,
	size_t nsites, const gpuenv_env_opts_t *opts, gpuenv_env_list_t *out)
{
	struct reader R;
	int r = 0;

	memset(out, 0, sizeof(*out));
	memset(&R, 0, sizeof(R));
	R.ctx = ctx;
	R.a = arena;
	R.max = opts && opts->max_dists ? opts->max_dists : GPUENV_ENV_MAX_DISTS;
	gpuenv_buf_init(&R.buf, ctx, GPUENV_METADATA_MAX + 1);
	gpuenv_arena_init(&R.scratch, ctx, 0);
	for (size_t s = 0; s < nsites && !r; s++)
		r = read_site(&R, sites[s].ptr, s);
	gpuenv_arena_free(&R.scratch);
	gpuenv_buf_free(&R.buf);
	if (r)
		return r;
	if (R.ndists)
		qsort(R.dists, R.ndists, sizeof(*R.dists), dist_cmp);
	for (size_t i = 1; i < R.ndists; i++)
		if (gpuenv_str_eq(R.dists[i].normalized, R.dists[i - 1].normalized))
			R.dists[i].shadowed = true;
	out->dists = R.dists;
	out->ndists = R.ndists;
	out->problems = R.problems;
	out->nproblems = R.nproblems;
	out->truncated = R.truncated;
	return 0;
}

const gpuenv_env_dist_t *gpuenv_env_find(const gpuenv_env_dist_t *dists, size_t n,
	const char *name)
{
	char norm[256];
	size_t lo = 0, hi = n;

	if (gpuenv_name_normalize_to(gpuenv_str(name), norm, sizeof(norm)) == SIZE_MAX)
		return NULL;
	/* sorted by normalized name, the winner first among equals */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (gpuenv_str_cmp(dists[mid].normalized, gpuenv_str(norm)) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && gpuenv_str_eq_cstr(dists[lo].normalized, norm))
		return &dists[lo];
	return NULL;
}

int gpuenv_env_read_record(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const gpuenv_env_dist_t *dist, gpuenv_record_t *out)
{
	char full[PATH_MAX], file[PATH_MAX];
	gpuenv_buf_t buf;
	int dfd, fd, r;

	memset(out, 0, sizeof(*out));
	snprintf(file, sizeof(file), "%s/RECORD", dist->path.ptr);
	if (!dist->is_dir || dist->egg_info)
		return gpuenv_fail(ctx, -ENOENT, file, 0, 0, "an egg-info has no RECORD");
	if (gpuenv_fs_resolve_in_root(ctx->root, dist->path.ptr, full, sizeof(full)) != 0)
		return gpuenv_fail(ctx, -ENAMETOOLONG, file, 0, 0, "path too long");
	dfd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return gpuenv_fail(ctx, -errno, dist->path.ptr, 0, 0, "%s", strerror(errno));
	fd = gpuenv_fs_open_regular(NULL, dfd, "RECORD", NULL);
	close(dfd);
	if (fd < 0)
		return gpuenv_fail(ctx, fd, file, 0, 0, "%s",
			fd == GPUENV_EFORMAT ? "not a regular file" : strerror(-fd));
	gpuenv_buf_init(&buf, ctx, GPUENV_RECORD_MAX + 1);
	r = gpuenv_fs_read_fd(ctx, fd, file, GPUENV_RECORD_MAX, &buf);
	close(fd);
	if (!r) {
		/* the entries' paths point into the text: it lives in the arena */
		char *text = gpuenv_arena_strndup(arena, buf.data ? buf.data : "", buf.len);
		r = text ? gpuenv_record_parse(ctx, arena, file, gpuenv_str_n(text, buf.len), out)
			 : gpuenv_oom(ctx, "RECORD");
	}
	gpuenv_buf_free(&buf);
	return r;
}
