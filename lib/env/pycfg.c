/* pycfg.c: pyvenv.cfg read as CPython's site.py reads it, pyenv's shims
 * followed as pyenv follows them (gpuenv/pycfg.h). */
#include "gpuenv/pycfg.h"

#include "gpuenv/fs.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* pyenv's version files are a line or a few */
#define VERSION_FILE_MAX 4096

gpuenv_str_t gpuenv_pycfg_get(gpuenv_str_t text, const char *key)
{
	gpuenv_str_t rest = text;

	while (rest.ptr) {
		gpuenv_str_t line;
		rest = gpuenv_str_split(rest, '\n', &line);
		gpuenv_str_t k, v = gpuenv_str_split(line, '=', &k);
		if (!v.ptr)
			continue;
		if (gpuenv_str_ieq(gpuenv_str_trim(k), gpuenv_str(key)))
			return gpuenv_str_trim(v);
	}
	return GPUENV_STR_NULL;
}

gpuenv_str_t gpuenv_pycfg_version(gpuenv_str_t text)
{
	gpuenv_str_t v = gpuenv_pycfg_get(text, "version");

	if (!v.ptr)
		v = gpuenv_pycfg_get(text, "version_info");
	if (!v.ptr)
		return GPUENV_STR_NULL;
	/* up to three numbers: "3.12.1.final.0" -> "3.12.1", "3.13.0rc1" -> "3.13.0" */
	size_t k = 0, parts = 0;
	while (parts < 3 && k < v.len && v.ptr[k] >= '0' && v.ptr[k] <= '9') {
		while (k < v.len && v.ptr[k] >= '0' && v.ptr[k] <= '9')
			k++;
		parts++;
		if (parts < 3 && k + 1 < v.len && v.ptr[k] == '.' && v.ptr[k + 1] >= '0' && v.ptr[k + 1] <= '9')
			k++;
		else
			break;
	}
	return parts >= 2 ? gpuenv_str_n(v.ptr, k) : GPUENV_STR_NULL;
}

/* Read the beginning of root + path into b; false when it is not a
 * regular file. */
static bool read_rooted(const char *root, const char *path, gpuenv_buf_t *b)
{
	char full[PATH_MAX];
	if (snprintf(full, sizeof(full), "%s%s", root, path) >= (int)sizeof(full))
		return false;
	int fd = gpuenv_fs_open_regular(NULL, AT_FDCWD, full, NULL);
	if (fd < 0)
		return false;
	int r = gpuenv_fs_read_head(fd, VERSION_FILE_MAX, NULL, b);
	close(fd);
	return r == 0;
}

/* The versions pyenv would pick, as text ("3.12.1:3.11.7", lines), in
 * arena; NULL when nothing says. */
static const char *shim_versions(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *root, const char *proot,
	gpuenv_buf_t *b)
{
	const char *pv = gpuenv_ctx_getenv(ctx, "PYENV_VERSION");
	if (pv && pv[0])
		return pv;
	if (!root[0]) {
		/* `pyenv local`: the nearest .python-version (not under a --root:
		 * the current folder is this machine's) */
		char cwd[PATH_MAX], f[PATH_MAX + 32];
		if (getcwd(cwd, sizeof(cwd))) {
			for (size_t depth = 0; depth < 256; depth++) {
				snprintf(f, sizeof(f), "%s/.python-version", cwd[1] ? cwd : "");
				if (read_rooted("", f, b))
					return gpuenv_arena_strndup(a, b->data, b->len);
				char *sl = strrchr(cwd, '/');
				if (!sl || sl == cwd)
					break;
				*sl = '\0';
			}
		}
	}
	gpuenv_str_t vf = gpuenv_arena_printf(a, "%s/version", proot);
	if (vf.ptr && read_rooted(root, vf.ptr, b))
		return gpuenv_arena_strndup(a, b->data, b->len);
	return NULL;
}

const char *gpuenv_pyenv_shim_target(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *root,
	const char *shim, bool *is_shim)
{
	const char *slash = strrchr(shim, '/');
	gpuenv_buf_t b;
	const char *out = NULL;

	*is_shim = false;
	root = root ? root : "";
	if (!slash || slash - shim < 6 || memcmp(slash - 6, "/shims", 6) != 0)
		return NULL;
	gpuenv_buf_init(&b, ctx, VERSION_FILE_MAX + 1);
	if (!read_rooted(root, shim, &b) || b.len < 2 || memcmp(b.data, "#!", 2) != 0)
		goto done;
	*is_shim = true;
	const char *pr = gpuenv_ctx_getenv(ctx, "PYENV_ROOT");
	const char *proot = pr && pr[0] ? pr : gpuenv_arena_strndup(arena, shim, (size_t)(slash - 6 - shim));
	const char *vers = proot ? shim_versions(ctx, arena, root, proot, &b) : NULL;
	for (gpuenv_str_t rest = vers ? gpuenv_str(vers) : GPUENV_STR_NULL; rest.ptr && !out;) {
		size_t n = strcspn(rest.ptr, ": \t\r\n");
		gpuenv_str_t v = gpuenv_str_n(rest.ptr, n);
		rest = rest.ptr[n] ? gpuenv_str(rest.ptr + n + 1) : GPUENV_STR_NULL;
		if (!v.len || gpuenv_str_eq_cstr(v, "system") || memchr(v.ptr, '/', v.len) ||
			gpuenv_str_eq_cstr(v, "..") || gpuenv_str_eq_cstr(v, "."))
			continue;
		gpuenv_str_t p = gpuenv_arena_printf(arena, "%s/versions/" GPUENV_STR_FMT "/bin/%s", proot,
			GPUENV_STR_ARG(v), slash + 1);
		char full[PATH_MAX];
		struct stat st;
		if (p.ptr && snprintf(full, sizeof(full), "%s%s", root, p.ptr) < (int)sizeof(full) &&
			stat(full, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			out = p.ptr;
	}
done:
	gpuenv_buf_free(&b);
	return out;
}
