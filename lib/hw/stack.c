/* stack.c: the software-stack probe put together (toolkits, ld.so.cache,
 * Python environments, library copies), and the small helpers its backends
 * share. */
#define _GNU_SOURCE /* memmem */
#include "gpuenv/fs.h"
#include "stack_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		void *p;

		if (cap > SIZE_MAX / elem)
			return NULL;
		p = gpuenv_arena_alloc(a, cap * elem);
		if (!p)
			return NULL;
		if (v->n)
			memcpy(p, v->items, v->n * elem);
		v->items = p;
		v->cap = cap;
	}
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

/* The value of "#define NAME value" (comments cut), or a NULL slice. */
static gpuenv_str_t header_value(const char *text, size_t len, const char *name)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		const char *p = text + i, *end = text + e;
		i = e + 1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p != '#')
			continue;
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(end - p) < 6 || memcmp(p, "define", 6) != 0)
			continue;
		p += 6;
		if (p >= end || (*p != ' ' && *p != '\t'))
			continue;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(end - p) < nl || memcmp(p, name, nl) != 0)
			continue;
		p += nl;
		if (p < end && *p != ' ' && *p != '\t')
			continue; /* a longer name */
		const char *q = p;
		for (; q < end; q++)
			if (q + 1 < end && q[0] == '/' && (q[1] == '*' || q[1] == '/'))
				break;
		return gpuenv_str_trim(gpuenv_str_n(p, (size_t)(q - p)));
	}
	return GPUENV_STR_NULL;
}

bool stack_header_int(const char *text, size_t len, const char *name, long *out)
{
	gpuenv_str_t v = header_value(text, len, name);
	uint64_t n;

	/* "(9)" and "13000U" are how some headers write plain numbers */
	while (v.len && v.ptr[0] == '(' && v.ptr[v.len - 1] == ')')
		v = gpuenv_str_trim(gpuenv_str_n(v.ptr + 1, v.len - 2));
	while (v.len && (v.ptr[v.len - 1] == 'U' || v.ptr[v.len - 1] == 'u' ||
		v.ptr[v.len - 1] == 'L' || v.ptr[v.len - 1] == 'l'))
		v.len--;
	if (!v.ptr || !gpuenv_str_to_u64(v, &n) || n > 0x7fffffff)
		return false;
	*out = (long)n;
	return true;
}

gpuenv_str_t stack_header_str(const char *text, size_t len, const char *name)
{
	gpuenv_str_t v = header_value(text, len, name);

	if (v.len >= 2 && v.ptr[0] == '"' && v.ptr[v.len - 1] == '"')
		return gpuenv_str_n(v.ptr + 1, v.len - 2);
	return GPUENV_STR_NULL;
}

bool stack_is_dotted(gpuenv_str_t s, bool need_dot)
{
	bool dot = false, digit = false;

	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		if (s.ptr[i] >= '0' && s.ptr[i] <= '9') {
			digit = true;
		} else if (s.ptr[i] == '.' && digit) {
			dot = true;
			digit = false;
		} else {
			return false;
		}
	}
	return digit && (dot || !need_dot);
}

/* ---- the whole stack --------------------------------------------------- */

int gpuenv_stack_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_stack_opts_t *opts,
	gpuenv_stack_t *out)
{
	static const gpuenv_stack_opts_t defaults;
	struct stack_warn w = { .arena = arena };
	struct stack_elfcache elfs = { .arena = arena };
	gpuenv_loader_opts_t lopts;
	gpuenv_pyenv_opts_t popts;
	const char *llp;
	int r;

	if (!opts)
		opts = &defaults;
	memset(out, 0, sizeof(*out));
	if ((r = gpuenv_fs_check_root(ctx)) != 0)
		return r;
	llp = gpuenv_ctx_getenv(ctx, "LD_LIBRARY_PATH");
	if (llp)
		out->ld_library_path = stack_strdup(arena, llp, strlen(llp));

	r = stack_toolkit_probe(ctx, arena, &w, &out->ntoolkits, &out->toolkits);
	if (r)
		return r;

	r = gpuenv_ldcache_load(ctx, arena, opts->ldcache, &out->ldcache);
	/* a cache the caller named that cannot be read is an error (ctx->err
	 * has the file and what is wrong); the system's own is a warning */
	if (r == -ENOMEM || (r && opts->ldcache))
		return r;
	out->have_ldcache = r == 0;
	if (r) {
		char msg[1200];
		gpuenv_error_format(&ctx->err, msg, sizeof(msg));
		stack_warn(ctx, &w, "%s", msg);
		gpuenv_error_clear(ctx);
	}

	memset(&lopts, 0, sizeof(lopts));
	lopts.cache = out->have_ldcache ? &out->ldcache : NULL;
	lopts.hwcaps = opts->hwcaps;
	lopts.alternatives = opts->alternatives;
	memset(&popts, 0, sizeof(popts));
	popts.python = opts->python;
	popts.env_dir = opts->env_dir;
	popts.no_user_site = opts->no_user_site;
	popts.loader = opts->no_loader ? NULL : &lopts;
	r = stack_pyenv_probe(ctx, arena, &w, &elfs, &popts, &out->nenvs, &out->envs);
	if (r)
		return r;

	r = stack_libs_probe(ctx, arena, &w, &elfs, out->toolkits, out->ntoolkits,
		out->have_ldcache ? &out->ldcache : NULL, out->envs, out->nenvs, &out->nlibs, &out->libs);
	if (r)
		return r;
	out->nwarnings = w.list.n;
	out->warnings = w.list.items;
	return 0;
}
