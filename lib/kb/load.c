/* Where the knowledge base comes from (kb.h, "loading"): the files of
 * --kb-dir, else the newest sound installed bundle newer than the embedded
 * files (gpuenv/kb_bundle.h), else the embedded copy; each handed to the
 * row loader (kb.c).  Above bundle.c, which reads and checks bundles. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/fs.h"
#include "gpuenv/kb_bundle.h"

#include "kb_int.h"

/* The newest installed bundle newer than the embedded files and still
 * sound (gpuenv/kb_bundle.h), loaded into *out; *out stays NULL when there
 * is none (a damaged one is passed over with a warning).  Only an
 * out-of-memory is an error. */
static int load_bundle(gpuenv_ctx_t *ctx, unsigned mask, gpuenv_kb_t **out)
{
	const char *off = gpuenv_ctx_getenv(ctx, "GPUENV_NO_KB_BUNDLE");
	const char *emb = gpuenv_kb_embedded_date();
	char dir[4096], path[4096 + 260];
	gpuenv_error_t saved = ctx->err;
	struct dirent **names = NULL;
	int n, r = 0;

	if ((off && *off && strcmp(off, "0") != 0) || gpuenv_kb_bundle_dir(ctx, dir, sizeof(dir))) {
		ctx->err = saved;
		return 0;
	}
	n = scandir(dir, &names, NULL, alphasort);
	/* folder names start with the date: the newest is last */
	for (int i = n - 1; i >= 0 && !*out && !r; i--) {
		const char *name = names[i]->d_name;
		gpuenv_kb_bundle_t b;
		gpuenv_arena_t arena;
		char why[1024];
		if (name[0] == '.' || strlen(name) < 10 || strncmp(name, emb, 10) <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		gpuenv_arena_init(&arena, ctx, 0);
		r = gpuenv_kb_bundle_read_dir(ctx, &arena, path, mask, &b);
		if (!r && strncmp(b.m.date, name, 10) != 0)
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, path, 0, 0, "the folder's name does "
				"not start with the manifest's date %s", b.m.date);
		if (!r)
			r = gpuenv_kb_load_sources(ctx, b.src, b.n, mask, out);
		if (!r) {
			(*out)->bundle = gpuenv_arena_strndup(&(*out)->arena, path, strlen(path));
			(*out)->bundle_key = b.key->name;
		} else if (r != -ENOMEM) {
			gpuenv_error_format(&ctx->err, why, sizeof(why));
			gpuenv_log(ctx, GPUENV_LOG_WARN, "knowledge-base bundle not used: %s "
				"(`gpuenv kb update` installs a sound one)", why);
			r = 0;
		}
		gpuenv_arena_free(&arena);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	ctx->err = saved;
	return r;
}

int gpuenv_kb_load(gpuenv_ctx_t *ctx, const char *dir, gpuenv_kb_t **out)
{
	return gpuenv_kb_load_files(ctx, dir, GPUENV_KB_ALL, out);
}

int gpuenv_kb_load_files(gpuenv_ctx_t *ctx, const char *dir, unsigned mask, gpuenv_kb_t **out)
{
	gpuenv_buf_t bufs[GPUENV_KB_NFILES];
	gpuenv_kb_source_t src[GPUENV_KB_NFILES];
	char paths[GPUENV_KB_NFILES][4096];
	size_t n = 0;
	struct stat st;
	int r = 0;

	*out = NULL;
	if (!dir) {
		r = load_bundle(ctx, mask, out);
		return r || *out ? r : gpuenv_kb_load_sources(ctx, NULL, 0, mask, out);
	}
	if (stat(dir, &st) != 0)
		return gpuenv_fail(ctx, -errno, dir, 0, 0, "%s", strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gpuenv_fail(ctx, -ENOTDIR, dir, 0, 0, "not a directory");
	for (int i = 0; i < GPUENV_KB_NFILES; i++) {
		int len;
		if (!(mask & (1u << i)))
			continue;
		len = snprintf(paths[n], sizeof(paths[n]), "%s/%s", dir, gpuenv_kb_file_name(i));
		if (len < 0 || (size_t)len >= sizeof(paths[n])) {
			r = gpuenv_fail(ctx, -ENAMETOOLONG, dir, 0, 0, "path too long");
			break;
		}
		if (stat(paths[n], &st) != 0 && errno == ENOENT) {
			gpuenv_log(ctx, GPUENV_LOG_INFO, "%s: not there, using the embedded %s",
				paths[n], gpuenv_kb_file_name(i));
			continue;
		}
		gpuenv_buf_init(&bufs[n], ctx, GPUENV_KB_MAX_FILE);
		r = gpuenv_fs_read(ctx, paths[n], GPUENV_KB_MAX_FILE, &bufs[n]);
		if (r) {
			gpuenv_buf_free(&bufs[n]);
			break;
		}
		src[n] = (gpuenv_kb_source_t){ gpuenv_kb_file_name(i), bufs[n].data, bufs[n].len, paths[n] };
		n++;
	}
	if (!r) {
		/* a .toml the loader would not read is most likely a typo */
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			size_t l = strlen(e->d_name);
			if (l > 5 && strcmp(e->d_name + l - 5, ".toml") == 0 && kb_file_id(gpuenv_str(e->d_name)) < 0)
				gpuenv_log(ctx, GPUENV_LOG_WARN,
					"%s/%s: not a knowledge-base file; ignored", dir, e->d_name);
		}
		if (d)
			closedir(d);
		r = gpuenv_kb_load_sources(ctx, src, n, mask, out);
	}
	for (size_t i = 0; i < n; i++)
		gpuenv_buf_free(&bufs[i]);
	return r;
}
