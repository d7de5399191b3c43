/* toolkit.c: CUDA toolkits on disk, and their versions, without running
 * nvcc.
 *
 * Places, in order: /usr/local/cuda, /usr/local/cuda-X.Y (newest first),
 * $CUDA_HOME, $CUDA_PATH, the folder above the first nvcc on $PATH,
 * /opt/cuda and /usr/lib/cuda.  One entry per real folder.
 *
 * Version, best first: version.json ("cuda": {"version": "12.4.1"}, the
 * runfile and the deb/rpm packages since 11.1), version.txt ("CUDA Version
 * 10.2.89", older toolkits), then cuda.h's CUDA_VERSION (13000 -> "13.0").
 * Components (cudart, cuBLAS, nvcc ...) come from version.json, and from a
 * dist-info/ folder when the toolkit was assembled from NVIDIA's wheels (as
 * this project's build machine's is). */
#include "stack_int.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX (1u << 20)

static int add_component(gpuenv_arena_t *a, struct svec *v, const char *name, size_t nlen,
	const char *version, size_t vlen, int src)
{
	gpuenv_tk_component_t *c = stack_vec_push(a, v, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->name = stack_strdup(a, name, nlen);
	c->version = stack_strdup(a, version, vlen);
	c->src = src;
	return c->name.ptr && c->version.ptr ? 0 : -ENOMEM;
}

static int read_version_json(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *dir,
	gpuenv_buf_t *buf, gpuenv_toolkit_t *tk, struct svec *comps)
{
	gpuenv_str_t path = stack_join(a, dir, "version.json");
	json_error_t jerr;
	json_t *root;
	const char *key;
	json_t *val;
	int r = 0;

	if (!path.ptr)
		return -ENOMEM;
	if (stack_read_head(ctx, path.ptr, JSON_MAX, buf) != 0 || !buf->data)
		return 0;
	root = json_loadb(buf->data, buf->len, 0, &jerr);
	if (!root)
		return 0;
	if (!json_is_object(root)) {
		json_decref(root);
		return 0;
	}
	json_object_foreach(root, key, val) {
		json_t *v = json_is_object(val) ? json_object_get(val, "version") : NULL;
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;
		if (!s)
			continue;
		if (strcmp(key, "cuda") == 0) {
			tk->version.text = stack_strdup(a, s, strlen(s));
			tk->version.src = GPUENV_VSRC_VERSION_JSON;
			tk->version.origin = path;
			if (!tk->version.text.ptr)
				r = -ENOMEM;
			continue;
		}
		if ((r = add_component(a, comps, key, strlen(key), s, strlen(s),
			     GPUENV_VSRC_VERSION_JSON)))
			break;
	}
	json_decref(root);
	return r;
}

static int read_version_txt(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *dir,
	gpuenv_buf_t *buf, gpuenv_toolkit_t *tk)
{
	gpuenv_str_t path = stack_join(a, dir, "version.txt");

	if (!path.ptr)
		return -ENOMEM;
	if (stack_read_head(ctx, path.ptr, 4096, buf) != 0 || !buf->data)
		return 0;
	/* "CUDA Version 10.2.89" */
	const char *p = strstr(buf->data, "CUDA Version ");
	if (!p)
		return 0;
	p += strlen("CUDA Version ");
	size_t n = 0;
	while (p[n] && ((p[n] >= '0' && p[n] <= '9') || p[n] == '.'))
		n++;
	if (!gpuenv_dotted_valid(gpuenv_str_n(p, n), true))
		return 0;
	tk->version.text = stack_strdup(a, p, n);
	tk->version.src = GPUENV_VSRC_VERSION_TXT;
	tk->version.origin = path;
	return tk->version.text.ptr ? 0 : -ENOMEM;
}

static int read_cuda_h(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, gpuenv_str_t incdir,
	gpuenv_buf_t *buf, gpuenv_toolkit_t *tk)
{
	static const struct { const char *file, *macro; } srcs[] = {
		{ "cuda.h", "CUDA_VERSION" },
		{ "cuda_runtime_api.h", "CUDART_VERSION" },
	};
	long v;

	if (!incdir.ptr)
		return 0;
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		gpuenv_str_t path = stack_join(a, incdir.ptr, srcs[i].file);
		if (!path.ptr)
			return -ENOMEM;
		if (stack_read_head(ctx, path.ptr, STACK_TEXT_MAX, buf) != 0 || !buf->data)
			continue;
		if (!gpuenv_cdefine_int(buf->data, buf->len, srcs[i].macro, &v) || v <= 0)
			continue;
		tk->version.text = gpuenv_arena_printf(a, "%ld.%ld", v / 1000, (v % 1000) / 10);
		tk->version.src = GPUENV_VSRC_HEADER;
		tk->version.origin = path;
		return tk->version.text.ptr ? 0 : -ENOMEM;
	}
	return 0;
}

/* "nvidia_cuda_nvcc-13.0.88.dist-info" -> "nvidia-cuda-nvcc", "13.0.88" */
static bool split_distinfo(const char *dname, gpuenv_str_t *name, gpuenv_str_t *version)
{
	gpuenv_str_t s = gpuenv_str(dname);

	if (!gpuenv_str_endswith(s, ".dist-info"))
		return false;
	s.len -= strlen(".dist-info");
	const char *dash = memchr(s.ptr, '-', s.len);
	if (!dash)
		return false;
	*name = gpuenv_str_n(s.ptr, (size_t)(dash - s.ptr));
	*version = gpuenv_str_n(dash + 1, s.len - (size_t)(dash - s.ptr) - 1);
	return name->len && version->len;
}

static int read_dist_info(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *dir, struct svec *comps)
{
	char full[PATH_MAX];
	gpuenv_str_t di = stack_join(a, dir, "dist-info");
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (!di.ptr)
		return -ENOMEM;
	if (!stack_rooted(ctx, di.ptr, full, sizeof(full)) || !(d = opendir(full)))
		return 0;
	while ((e = readdir(d)) != NULL) {
		gpuenv_str_t name, version;
		char norm[128];
		if (!split_distinfo(e->d_name, &name, &version) ||
			gpuenv_name_normalize_to(name, norm, sizeof(norm)) == SIZE_MAX)
			continue;
		if ((r = add_component(a, comps, norm, strlen(norm), version.ptr, version.len,
			     GPUENV_VSRC_METADATA)))
			break;
	}
	closedir(d);
	return r;
}

static int comp_cmp(const void *x, const void *y)
{
	const gpuenv_tk_component_t *a = x, *b = y;
	return gpuenv_str_cmp(a->name, b->name);
}

static const char *target_dir(void)
{
#if defined(__aarch64__)
	return "targets/sbsa-linux";
#else
	return "targets/x86_64-linux";
#endif
}

int gpuenv_toolkit_inspect(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir,
	gpuenv_toolkit_t *out)
{
	gpuenv_buf_t buf;
	struct svec comps = { 0 };
	gpuenv_str_t p;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->path = stack_strdup(arena, dir, strlen(dir));
	out->realpath = stack_realpath(ctx, arena, dir);
	if (!out->path.ptr)
		return -ENOMEM;
	if (!out->realpath.ptr)
		return -ENOENT;
	const char *rd = out->realpath.ptr;

	/* what makes a folder a toolkit: nvcc, cuda.h or a version file */
	p = stack_join(arena, rd, "bin/nvcc");
	if (p.ptr && stack_is_file(ctx, p.ptr))
		out->nvcc = p;
	char tinc[64], tlib[64];
	snprintf(tinc, sizeof(tinc), "%s/include", target_dir());
	snprintf(tlib, sizeof(tlib), "%s/lib", target_dir());
	const char *const incs[] = { "include", tinc, NULL };
	const char *const libs[] = { "lib64", tlib, "lib", NULL };
	for (size_t i = 0; incs[i] && !out->include_dir.ptr; i++) {
		p = stack_join(arena, rd, incs[i]);
		gpuenv_str_t h = p.ptr ? stack_join(arena, p.ptr, "cuda.h") : p;
		if (!h.ptr)
			return -ENOMEM;
		if (stack_is_file(ctx, h.ptr))
			out->include_dir = p;
	}
	for (size_t i = 0; libs[i] && !out->lib_dir.ptr; i++) {
		p = stack_join(arena, rd, libs[i]);
		if (!p.ptr)
			return -ENOMEM;
		if (stack_is_dir(ctx, p.ptr))
			out->lib_dir = stack_realpath(ctx, arena, p.ptr);
	}

	gpuenv_buf_init(&buf, ctx, JSON_MAX + 1);
	if ((r = read_version_json(ctx, arena, rd, &buf, out, &comps)))
		goto done;
	if (!out->version.text.ptr && (r = read_version_txt(ctx, arena, rd, &buf, out)))
		goto done;
	bool has_version_file = out->version.text.ptr != NULL;
	if ((r = read_dist_info(ctx, arena, rd, &comps)))
		goto done;
	if (!out->nvcc.ptr && !out->include_dir.ptr && !has_version_file) {
		r = -ENOENT;
		goto done;
	}
	if (!out->version.text.ptr && (r = read_cuda_h(ctx, arena, out->include_dir, &buf, out)))
		goto done;
	if (comps.n)
		qsort(comps.items, comps.n, sizeof(gpuenv_tk_component_t), comp_cmp);
	out->components = comps.items;
	out->ncomponents = comps.n;
	for (size_t i = 0; i < comps.n; i++) {
		gpuenv_tk_component_t *c = &out->components[i];
		if (gpuenv_str_eq_cstr(c->name, "cuda_nvcc") ||
			gpuenv_str_eq_cstr(c->name, "nvidia-cuda-nvcc") ||
			gpuenv_str_startswith(c->name, "nvidia-cuda-nvcc-cu"))
			out->nvcc_version = c->version;
	}
done:
	gpuenv_buf_free(&buf);
	return r;
}

/* "cuda-12.4" > "cuda-12.10"? no: compare numerically, newest first */
static int cuda_dir_cmp(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;

	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			char *ea, *eb;
			unsigned long na = strtoul(a, &ea, 10), nb = strtoul(b, &eb, 10);
			if (na != nb)
				return na < nb ? 1 : -1;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return *a < *b ? -1 : 1;
		a++, b++;
	}
	return *a ? -1 : *b ? 1 : 0;
}

struct cand {
	const char *path;
	unsigned bit;
	const char *var; /* the variable that named it, for the warning */
};

static int consider(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, struct stack_warn *w, struct svec *tks,
	const struct cand *c)
{
	gpuenv_str_t real = stack_realpath(ctx, a, c->path);
	gpuenv_toolkit_t tk;
	int r;

	if (!real.ptr) {
		if (c->var)
			stack_warn(ctx, w, "%s=%s: no such folder", c->var, c->path);
		return 0;
	}
	for (size_t i = 0; i < tks->n; i++) {
		gpuenv_toolkit_t *t = &((gpuenv_toolkit_t *)tks->items)[i];
		if (!gpuenv_str_eq(t->realpath, real))
			continue;
		t->found_by |= c->bit;
		if (!gpuenv_str_eq_cstr(t->path, c->path)) {
			bool dup = false;
			for (size_t k = 0; k < t->naliases; k++)
				dup |= gpuenv_str_eq_cstr(t->aliases[k], c->path);
			if (!dup) {
				gpuenv_str_t *na = gpuenv_arena_alloc(a, (t->naliases + 1) * sizeof(*na));
				if (!na)
					return -ENOMEM;
				if (t->naliases)
					memcpy(na, t->aliases, t->naliases * sizeof(*na));
				na[t->naliases] = stack_strdup(a, c->path, strlen(c->path));
				t->aliases = na;
				t->naliases++;
			}
		}
		return 0;
	}
	r = gpuenv_toolkit_inspect(ctx, a, c->path, &tk);
	if (r == -ENOMEM)
		return r;
	if (r) {
		if (c->var)
			stack_warn(ctx, w, "%s=%s: not a CUDA toolkit (no bin/nvcc, include/cuda.h or version file)",
				c->var, c->path);
		return 0;
	}
	tk.found_by = c->bit;
	gpuenv_toolkit_t *slot = stack_vec_push(a, tks, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = tk;
	return 0;
}

int stack_toolkit_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_warn *w,
	size_t *n, gpuenv_toolkit_t **out)
{
	struct svec tks = { 0 };
	struct cand c;
	char full[PATH_MAX];
	DIR *d;
	int r;

	*n = 0;
	*out = NULL;
	/* /usr/local/cuda, then the versioned folders, newest first */
	c = (struct cand){ "/usr/local/cuda", GPUENV_TK_USR_LOCAL, NULL };
	if ((r = consider(ctx, arena, w, &tks, &c)))
		return r;
	if (stack_rooted(ctx, "/usr/local", full, sizeof(full)) && (d = opendir(full))) {
		struct svec names = { 0 };
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, "cuda-", 5) != 0)
				continue;
			const char **s = stack_vec_push(arena, &names, sizeof(*s));
			gpuenv_str_t p = stack_join(arena, "/usr/local", e->d_name);
			if (!s || !p.ptr) {
				closedir(d);
				return -ENOMEM;
			}
			*s = p.ptr;
		}
		closedir(d);
		if (names.n)
			qsort(names.items, names.n, sizeof(char *), cuda_dir_cmp);
		for (size_t i = 0; i < names.n; i++) {
			c = (struct cand){ ((const char **)names.items)[i], GPUENV_TK_USR_LOCAL, NULL };
			if ((r = consider(ctx, arena, w, &tks, &c)))
				return r;
		}
	}
	static const struct { const char *var; unsigned bit; } vars[] = {
		{ "CUDA_HOME", GPUENV_TK_CUDA_HOME },
		{ "CUDA_PATH", GPUENV_TK_CUDA_PATH },
	};
	for (size_t i = 0; i < 2; i++) {
		const char *v = gpuenv_ctx_getenv(ctx, vars[i].var);
		if (!v || !v[0])
			continue;
		c = (struct cand){ v, vars[i].bit, vars[i].var };
		if ((r = consider(ctx, arena, w, &tks, &c)))
			return r;
	}
	/* nvcc on PATH: the toolkit is two levels above the real nvcc */
	const char *path = gpuenv_ctx_getenv(ctx, "PATH");
	for (gpuenv_str_t rest = path ? gpuenv_str(path) : GPUENV_STR_NULL; rest.ptr;) {
		gpuenv_str_t elem;
		rest = gpuenv_str_split(rest, ':', &elem);
		if (!elem.len || elem.ptr[0] != '/')
			continue;
		gpuenv_str_t dir = gpuenv_arena_str(arena, elem);
		gpuenv_str_t nvcc = dir.ptr ? stack_join(arena, dir.ptr, "nvcc") : dir;
		if (!nvcc.ptr)
			return -ENOMEM;
		if (!stack_is_file(ctx, nvcc.ptr))
			continue;
		gpuenv_str_t real = stack_realpath(ctx, arena, nvcc.ptr);
		if (!real.ptr)
			break;
		gpuenv_str_t bin = stack_dirname(arena, real.ptr);
		gpuenv_str_t top = bin.ptr ? stack_dirname(arena, bin.ptr) : bin;
		if (!top.ptr)
			return -ENOMEM;
		c = (struct cand){ top.ptr, GPUENV_TK_NVCC_PATH, NULL };
		if ((r = consider(ctx, arena, w, &tks, &c)))
			return r;
		break; /* only the nvcc a shell would run */
	}
	static const char *const dist[] = { "/opt/cuda", "/usr/lib/cuda" };
	for (size_t i = 0; i < 2; i++) {
		c = (struct cand){ dist[i], GPUENV_TK_OPT, NULL };
		if ((r = consider(ctx, arena, w, &tks, &c)))
			return r;
	}
	*n = tks.n;
	*out = tks.items;
	return 0;
}

int gpuenv_toolkit_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, size_t *n, gpuenv_toolkit_t **out)
{
	return stack_toolkit_probe(ctx, arena, NULL, n, out);
}
