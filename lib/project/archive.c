/* Archives by URL (include/gpuenv/project.h, "archives by URL"; docs/lock.md
 * "Direct references"): a wheel or an sdist a dependency names by its URL,
 * fetched once into the cache through the index client's download (hashed
 * while the bytes arrive, checked against the URL's #sha256= when it has
 * one), so that the lock reads its metadata from the copy and records its
 * hash and size, and lock --check can ask the server for it again.
 *
 *   <cache>/archives/<aa>/<sha256(url)>/<file name>
 */
#include "gpuenv/project.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"

/* The sha256 of the file at path in hex, into out. */
static int file_sha(gpuenv_ctx_t *ctx, const char *path, char out[65])
{
	unsigned char d[GPUENV_SHA256_LEN];
	int r = gpuenv_sha256_file(ctx, path, d);

	if (r)
		return r;
	gpuenv_hex(d, sizeof(d), out);
	return 0;
}

int gpuenv_project_archive(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_index_t *ix, const char *cache_dir,
	const char *url, const char *want_sha256, bool refresh, gpuenv_archive_t *out)
{
	char top[PATH_MAX], key[2 * GPUENV_SHA256_LEN + 1];
	unsigned char d[GPUENV_SHA256_LEN];
	struct stat st;
	int r;

	memset(out, 0, sizeof(*out));
	out->size = -1;
	if (!cache_dir) {
		if ((r = gpuenv_index_cache_dir(ctx, top, sizeof(top))) != 0)
			return r;
		cache_dir = top;
	}
	const char *name = gpuenv_url_basename(arena, url);
	if (!name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		if (!name && ctx->err.code == -ENOMEM)
			return ctx->err.code;
		gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0, "the URL %s names no file", url);
		return gpuenv_hint(ctx, "give the URL of the archive itself (…/name-1.0-py3-none-any.whl or "
			"…/name-1.0.tar.gz)");
	}
	if ((r = gpuenv_sha256(url, strlen(url), d)) != 0)
		return gpuenv_sha256_fail(ctx, r, "an archive's URL");
	gpuenv_hex(d, sizeof(d), key);
	const char *dir = gpuenv_arena_printf(arena, "%s/archives/%.2s/%s", cache_dir, key, key).ptr;
	const char *path = dir ? gpuenv_arena_printf(arena, "%s/%s", dir, name).ptr : NULL;
	const char *tmp = dir ? gpuenv_arena_printf(arena, "%s/.%s.part.%ld", dir, name, (long)getpid()).ptr : NULL;
	if (!tmp)
		return gpuenv_oom(ctx, "an archive's place in the cache");
	out->name = name;
	out->path = path;
	/* the copy of an earlier lock, when it is still the one asked for */
	if (!refresh && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((r = file_sha(ctx, path, out->sha256)) != 0)
			return r;
		if (!want_sha256 || !strcmp(want_sha256, out->sha256)) {
			out->size = (int64_t)st.st_size;
			return 0;
		}
	}
	if ((r = gpuenv_fs_mkdirs(ctx, dir, 0755)) != 0)
		return r;
	unlink(tmp); /* a leftover of this pid's earlier life */
	gpuenv_download_t dl = { .url = url, .name = name, .fd = -1, .path = tmp, .sha256 = want_sha256,
		.unhashed = !want_sha256, .size = -1 };
	if ((r = gpuenv_index_download(ix, ctx, &dl, 1, NULL)) != 0) {
		unlink(tmp);
		return r;
	}
	if (rename(tmp, path) != 0) {
		r = -errno;
		unlink(tmp);
		return gpuenv_fail(ctx, r, path, 0, 0, "cannot put %s into the cache: %s", name, strerror(-r));
	}
	memcpy(out->sha256, dl.got_sha256, sizeof(out->sha256));
	out->size = (int64_t)dl.bytes;
	out->fetched = true;
	return 0;
}
