/* stack_util.c: the helpers every stack backend shares (arena vectors,
 * warnings, paths under ctx->root, capped reads, path pieces) and the names
 * of version sources.  Calls nothing else in lib/hw. */
#define _GNU_SOURCE
#include "stack_util.h"
#include "hw_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"

/* ---- names ------------------------------------------------------------- */

const char *gpuenv_vsrc_name(int src)
{
	static const char *const names[GPUENV_VSRC_COUNT] = {
		[GPUENV_VSRC_NONE] = "none",
		[GPUENV_VSRC_FILENAME] = "filename",
		[GPUENV_VSRC_HEADER] = "header",
		[GPUENV_VSRC_METADATA] = "metadata",
		[GPUENV_VSRC_VERSION_JSON] = "version.json",
		[GPUENV_VSRC_VERSION_TXT] = "version.txt",
		[GPUENV_VSRC_VERDEF] = "verdef",
		[GPUENV_VSRC_SONAME] = "soname",
		[GPUENV_VSRC_PYVENV_CFG] = "pyvenv.cfg",
		[GPUENV_VSRC_PATH] = "path",
		[GPUENV_VSRC_VERSION_PY] = "version.py",
	};
	return src >= 0 && src < GPUENV_VSRC_COUNT && names[src] ? names[src] : "none";
}

/* ---- helpers ----------------------------------------------------------- */

void *stack_vec_push(gpuenv_arena_t *a, struct svec *v, size_t elem)
{
	if (hw_grow(a, &v->items, &v->cap, v->n, elem))
		return NULL;
	void *e = (char *)v->items + v->n * elem;
	memset(e, 0, elem);
	v->n++;
	return e;
}

void stack_warn(gpuenv_ctx_t *ctx, struct stack_warn *w, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gpuenv_log(ctx, GPUENV_LOG_INFO, "%s", msg);
	if (w) {
		gpuenv_str_t *s = stack_vec_push(w->arena, &w->list, sizeof(*s));
		if (s)
			*s = stack_strdup(w->arena, msg, strlen(msg));
	}
}

bool stack_rooted(gpuenv_ctx_t *ctx, const char *path, char *out, size_t outsz)
{
	/* relative paths (a --python argument) are the caller's, not the probed
	 * machine's: they are used as they are; absolute ones are resolved
	 * inside ctx->root, so an absolute symlink of the tree stays in it */
	return gpuenv_fs_resolve_in_root(path[0] == '/' ? ctx->root : NULL, path, out, outsz) == 0;
}

gpuenv_str_t stack_strdup(gpuenv_arena_t *a, const char *s, size_t n)
{
	char *p = gpuenv_arena_strndup(a, s, n);
	return p ? (gpuenv_str_t){ p, n } : GPUENV_STR_NULL;
}


int stack_read_head(gpuenv_ctx_t *ctx, const char *path, size_t max, gpuenv_buf_t *buf)
{
	return stack_read_until(ctx, path, max, NULL, buf);
}

int stack_read_until(gpuenv_ctx_t *ctx, const char *path, size_t max, const char *stop,
	gpuenv_buf_t *buf)
{
	char full[PATH_MAX];
	int fd, r;

	gpuenv_buf_reset(buf);
	if (!stack_rooted(ctx, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	fd = gpuenv_fs_open_regular(NULL, AT_FDCWD, full, NULL);
	if (fd < 0)
		return fd;
	r = gpuenv_fs_read_head(fd, max, stop, buf);
	close(fd);
	return r;
}

static int rooted_stat(gpuenv_ctx_t *ctx, const char *path, struct stat *st)
{
	char full[PATH_MAX];

	if (!stack_rooted(ctx, path, full, sizeof(full)))
		return -1;
	return stat(full, st);
}

bool stack_is_file(gpuenv_ctx_t *ctx, const char *path)
{
	struct stat st;
	return rooted_stat(ctx, path, &st) == 0 && S_ISREG(st.st_mode);
}

bool stack_is_dir(gpuenv_ctx_t *ctx, const char *path)
{
	struct stat st;
	return rooted_stat(ctx, path, &st) == 0 && S_ISDIR(st.st_mode);
}

gpuenv_str_t stack_realpath(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *path)
{
	char full[PATH_MAX], res[PATH_MAX];
	const char *root = ctx->root ? ctx->root : "";
	struct stat st;

	if (!root[0] || path[0] != '/')
		return realpath(path, res) ? stack_strdup(a, res, strlen(res)) : GPUENV_STR_NULL;
	/* resolved inside the tree (absolute links included), never on the host */
	if (!stack_rooted(ctx, path, full, sizeof(full)) || stat(full, &st) != 0)
		return GPUENV_STR_NULL;
	size_t rl = strlen(root);
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	if (!full[rl])
		return stack_strdup(a, "/", 1);
	return stack_strdup(a, full + rl, strlen(full + rl));
}

gpuenv_str_t stack_dirname(gpuenv_arena_t *a, const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	while (n > 0 && path[n - 1] != '/')
		n--;
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0)
		return stack_strdup(a, ".", 1);
	return stack_strdup(a, path, n);
}

gpuenv_str_t stack_join(gpuenv_arena_t *a, const char *dir, const char *name)
{
	size_t n = strlen(dir);
	bool slash = n > 0 && dir[n - 1] == '/';

	return gpuenv_arena_printf(a, "%s%s%s", dir, slash ? "" : "/", name);
}
