/* pyenv.c: Python environments read from disk, without starting Python.
 *
 * Which environment: the interpreter or folder the caller names, else
 * $VIRTUAL_ENV, $CONDA_PREFIX and the first python3 on $PATH (pyenv shims
 * are followed through $PYENV_VERSION or $PYENV_ROOT/version).
 *
 * sys.prefix: a venv is recognised by pyvenv.cfg beside or above the
 * interpreter (as CPython's getpath does), and its prefix is the folder
 * above bin/ *without* resolving symlinks (bin/python is a link to the base
 * interpreter); other interpreters are resolved first.
 *
 * sys.path's site folders, in order: $PYTHONPATH, the user site (not in a
 * venv unless it includes system site-packages), the prefix's
 * lib/pythonX.Y/site-packages (and Debian's dist-packages folders), then a
 * venv's base installation when include-system-site-packages is true.
 *
 * The distributions are the *.dist-info and *.egg-info entries of those
 * folders, read by lib/env (gpuenv/env.h); the first of a name wins, as
 * importlib.metadata sees them.  This file adds what is about GPU
 * frameworks: which distributions are torch, jax, cupy, ... and what their
 * builds target. */
#include "stack_int.h"

#include "gpuenv/fs.h"

#include "gpuenv/env.h"
#include "gpuenv/pycfg.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


struct penv {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	struct stack_warn *w;
	struct stack_elfcache *cache;
	const gpuenv_pyenv_opts_t *o;
	gpuenv_buf_t buf;
};

const char *gpuenv_pyenv_found_name(int found_by)
{
	switch (found_by) {
	case GPUENV_PYENV_ARG_PYTHON: return "--python";
	case GPUENV_PYENV_ARG_ENV: return "--env";
	case GPUENV_PYENV_VIRTUAL_ENV: return "VIRTUAL_ENV";
	case GPUENV_PYENV_CONDA_PREFIX: return "CONDA_PREFIX";
	case GPUENV_PYENV_PATH: return "PATH";
	default: return "unknown";
	}
}

const char *gpuenv_fw_kind_name(int kind)
{
	static const char *const names[GPUENV_FW_COUNT] = {
		[GPUENV_FW_TORCH] = "torch",
		[GPUENV_FW_JAX] = "jax",
		[GPUENV_FW_JAXLIB] = "jaxlib",
		[GPUENV_FW_JAX_CUDA_PLUGIN] = "jax-cuda-plugin",
		[GPUENV_FW_JAX_CUDA_PJRT] = "jax-cuda-pjrt",
		[GPUENV_FW_CUPY] = "cupy",
		[GPUENV_FW_TENSORRT] = "tensorrt",
		[GPUENV_FW_ONNXRUNTIME] = "onnxruntime",
		[GPUENV_FW_TRITON] = "triton",
		[GPUENV_FW_NVIDIA_WHEEL] = "nvidia-wheel",
	};
	return kind > 0 && kind < GPUENV_FW_COUNT && names[kind] ? names[kind] : "unknown";
}

/* ---- small parsers --------------------------------------------------------- */

/* A simple Python assignment `NAME[: annotation] = 'str' | "str" | None |
 * True | False` at the start of a line.  found: the name is assigned;
 * *out is the string (NULL slice for None and the rest). */
static bool py_assign(const char *text, size_t len, const char *name, gpuenv_str_t *out)
{
	size_t nl = strlen(name);
	gpuenv_str_t rest = gpuenv_str_n(text, len);

	*out = GPUENV_STR_NULL;
	while (rest.ptr) {
		gpuenv_str_t line;
		rest = gpuenv_str_split(rest, '\n', &line);
		if (line.len <= nl || memcmp(line.ptr, name, nl) != 0)
			continue;
		gpuenv_str_t after = gpuenv_str_n(line.ptr + nl, line.len - nl);
		char c = after.ptr[0];
		if (c != ' ' && c != '\t' && c != ':' && c != '=')
			continue; /* a longer name */
		const char *eq = memchr(after.ptr, '=', after.len);
		if (!eq || (eq + 1 < after.ptr + after.len && eq[1] == '='))
			continue;
		gpuenv_str_t v = gpuenv_str_trim(gpuenv_str_n(eq + 1, (size_t)(after.ptr + after.len - eq - 1)));
		if (v.len >= 2 && (v.ptr[0] == '\'' || v.ptr[0] == '"')) {
			const char *close = memchr(v.ptr + 1, v.ptr[0], v.len - 1);
			if (close)
				*out = gpuenv_str_n(v.ptr + 1, (size_t)(close - v.ptr - 1));
		}
		return true;
	}
	return false;
}

/* ---- paths --------------------------------------------------------------- */

static bool is_exec_file(gpuenv_ctx_t *ctx, const char *path)
{
	char full[PATH_MAX];
	struct stat st;

	return stack_rooted(ctx, path, full, sizeof(full)) && stat(full, &st) == 0 &&
		S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

/* The first `name` on $PATH, skipping the folder `skip` (a shim folder). */
static gpuenv_str_t which(struct penv *P, const char *name, const char *skip)
{
	const char *path = gpuenv_ctx_getenv(P->ctx, "PATH");

	for (gpuenv_str_t rest = path ? gpuenv_str(path) : GPUENV_STR_NULL; rest.ptr;) {
		gpuenv_str_t elem;
		rest = gpuenv_str_split(rest, ':', &elem);
		if (!elem.len || elem.ptr[0] != '/')
			continue;
		if (skip && gpuenv_str_eq_cstr(elem, skip))
			continue;
		gpuenv_str_t p = gpuenv_arena_printf(P->a, GPUENV_STR_FMT "/%s", GPUENV_STR_ARG(elem), name);
		if (p.ptr && is_exec_file(P->ctx, p.ptr))
			return p;
	}
	return GPUENV_STR_NULL;
}

/* A pyenv shim: the binary it runs (gpuenv_pyenv_shim_target); one that
 * stands for "system" runs the next interpreter on $PATH. */
static gpuenv_str_t follow_shim(struct penv *P, gpuenv_str_t interp)
{
	bool is_shim;
	const char *t = gpuenv_pyenv_shim_target(P->ctx, P->a, P->ctx->root, interp.ptr, &is_shim);

	if (t)
		return gpuenv_str(t);
	if (!is_shim)
		return interp;
	gpuenv_str_t dir = stack_dirname(P->a, interp.ptr);
	gpuenv_str_t next = dir.ptr ? which(P, strrchr(interp.ptr, '/') + 1, dir.ptr) : GPUENV_STR_NULL;
	return next.ptr ? next : interp;
}

/* ---- environment skeleton ------------------------------------------------- */

static int add_site(struct penv *P, struct svec *sites, const char *dir)
{
	gpuenv_str_t real;

	if (!stack_is_dir(P->ctx, dir))
		return 0;
	real = stack_realpath(P->ctx, P->a, dir);
	for (size_t i = 0; i < sites->n; i++) {
		gpuenv_str_t s = ((gpuenv_str_t *)sites->items)[i];
		if (gpuenv_str_eq_cstr(s, dir))
			return 0;
		if (real.ptr) {
			gpuenv_str_t sr = stack_realpath(P->ctx, P->a, s.ptr);
			if (sr.ptr && gpuenv_str_eq(sr, real))
				return 0;
		}
	}
	gpuenv_str_t *slot = stack_vec_push(P->a, sites, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = stack_strdup(P->a, dir, strlen(dir));
	return slot->ptr ? 0 : -ENOMEM;
}

/* "3.12.1" -> "3.12" */
static gpuenv_str_t xy_of(gpuenv_arena_t *a, gpuenv_str_t v)
{
	const char *dot = memchr(v.ptr, '.', v.len);
	if (!dot)
		return GPUENV_STR_NULL;
	size_t n = (size_t)(dot - v.ptr) + 1;
	while (n < v.len && v.ptr[n] >= '0' && v.ptr[n] <= '9')
		n++;
	gpuenv_str_t xy = gpuenv_str_n(v.ptr, n);
	return gpuenv_dotted_valid(xy, true) ? gpuenv_arena_str(a, xy) : GPUENV_STR_NULL;
}

/* The pythonX.Y folder under prefix/lib: the highest one that has
 * site-packages (a prefix normally has one). */
static gpuenv_str_t xy_from_lib(struct penv *P, const char *prefix)
{
	char full[PATH_MAX];
	gpuenv_str_t lib = stack_join(P->a, prefix, "lib"), best = GPUENV_STR_NULL;
	unsigned long bmin = 0;
	DIR *d;
	struct dirent *e;

	if (!lib.ptr || !stack_rooted(P->ctx, lib.ptr, full, sizeof(full)) || !(d = opendir(full)))
		return best;
	while ((e = readdir(d)) != NULL) {
		gpuenv_str_t v;
		if (strncmp(e->d_name, "python3.", 8) != 0)
			continue;
		v = gpuenv_str(e->d_name + 6);
		if (!gpuenv_dotted_valid(v, true))
			continue;
		unsigned long minor = strtoul(e->d_name + 8, NULL, 10);
		gpuenv_str_t sp = gpuenv_arena_printf(P->a, "%s/%s/site-packages", lib.ptr, e->d_name);
		if (!sp.ptr || !stack_is_dir(P->ctx, sp.ptr))
			continue;
		if (!best.ptr || minor > bmin) {
			best = stack_strdup(P->a, v.ptr, v.len);
			bmin = minor;
		}
	}
	closedir(d);
	return best;
}

/* pyenv's ".../versions/3.12.1/..." or conda-meta/python-3.12.1-*.json */
static gpuenv_str_t version_from_path(struct penv *P, gpuenv_pyenv_t *env, gpuenv_str_t *origin)
{
	const char *real = env->real_interpreter.ptr;
	char full[PATH_MAX];

	if (real) {
		const char *v = strstr(real, "/versions/");
		if (v) {
			v += strlen("/versions/");
			size_t n = 0;
			while (v[n] && v[n] != '/')
				n++;
			gpuenv_str_t s = gpuenv_str_n(v, n);
			if (gpuenv_dotted_valid(s, true)) {
				*origin = env->real_interpreter;
				return stack_strdup(P->a, v, n);
			}
		}
	}
	gpuenv_str_t cm = stack_join(P->a, env->prefix.ptr, "conda-meta");
	DIR *d;
	if (cm.ptr && stack_rooted(P->ctx, cm.ptr, full, sizeof(full)) && (d = opendir(full))) {
		struct dirent *e;
		gpuenv_str_t found = GPUENV_STR_NULL;
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, "python-", 7) != 0)
				continue;
			const char *v = e->d_name + 7;
			size_t n = 0;
			while (v[n] && v[n] != '-')
				n++;
			if (gpuenv_dotted_valid(gpuenv_str_n(v, n), true)) {
				found = stack_strdup(P->a, v, n);
				*origin = stack_join(P->a, cm.ptr, e->d_name);
				break;
			}
		}
		closedir(d);
		if (found.ptr)
			return found;
	}
	return GPUENV_STR_NULL;
}

static int fill_version(struct penv *P, gpuenv_pyenv_t *env, gpuenv_str_t cfgver, gpuenv_str_t cfgpath)
{
	/* 1. pyvenv.cfg */
	if (cfgver.ptr && gpuenv_dotted_valid(cfgver, true)) {
		env->python.text = cfgver;
		env->python.src = GPUENV_VSRC_PYVENV_CFG;
		env->python.origin = cfgpath;
	}
	/* X.Y: from that, the interpreter's name, or lib/pythonX.Y */
	if (env->python.text.ptr)
		env->python_xy = xy_of(P->a, env->python.text);
	if (!env->python_xy.ptr && env->real_interpreter.ptr) {
		const char *b = strrchr(env->real_interpreter.ptr, '/');
		b = b ? b + 1 : env->real_interpreter.ptr;
		if (strncmp(b, "python", 6) == 0 && gpuenv_dotted_valid(gpuenv_str(b + 6), true))
			env->python_xy = xy_of(P->a, gpuenv_str(b + 6));
	}
	if (!env->python_xy.ptr)
		env->python_xy = xy_from_lib(P, env->prefix.ptr);
	if (!env->python_xy.ptr && env->base_prefix.ptr)
		env->python_xy = xy_from_lib(P, env->base_prefix.ptr);
	if (env->python.text.ptr && env->python.text.len > env->python_xy.len)
		return 0; /* a full X.Y.Z already */

	/* 2. patchlevel.h of the (base) installation */
	const char *inst = env->base_prefix.ptr ? env->base_prefix.ptr : env->prefix.ptr;
	if (env->python_xy.ptr) {
		gpuenv_str_t pl = gpuenv_arena_printf(P->a, "%s/include/python%s/patchlevel.h", inst, env->python_xy.ptr);
		if (pl.ptr && stack_read_head(P->ctx, pl.ptr, STACK_TEXT_MAX, &P->buf) == 0 && P->buf.len) {
			gpuenv_str_t v = gpuenv_cdefine_str(P->buf.data, P->buf.len, "PY_VERSION");
			if (v.ptr) {
				env->python.text = gpuenv_arena_str(P->a, v);
				env->python.src = GPUENV_VSRC_HEADER;
				env->python.origin = pl;
				return 0;
			}
		}
	}
	/* 3. pyenv / conda folder names */
	gpuenv_str_t origin = GPUENV_STR_NULL;
	gpuenv_str_t v = version_from_path(P, env, &origin);
	if (v.ptr && (!env->python_xy.ptr || gpuenv_str_startswith(v, env->python_xy.ptr))) {
		env->python.text = v;
		env->python.src = GPUENV_VSRC_PATH;
		env->python.origin = origin;
		if (!env->python_xy.ptr)
			env->python_xy = xy_of(P->a, v);
		return 0;
	}
	/* 4. X.Y alone */
	if (!env->python.text.ptr && env->python_xy.ptr) {
		env->python.text = env->python_xy;
		env->python.src = GPUENV_VSRC_PATH;
		env->python.origin = env->real_interpreter.ptr ? env->real_interpreter : env->prefix;
	}
	return 0;
}

static int fill_sites(struct penv *P, gpuenv_pyenv_t *env)
{
	struct svec sites = { 0 };
	const char *xy = env->python_xy.ptr;
	int r;

	const char *pp = gpuenv_ctx_getenv(P->ctx, "PYTHONPATH");
	for (gpuenv_str_t rest = pp ? gpuenv_str(pp) : GPUENV_STR_NULL; rest.ptr;) {
		gpuenv_str_t elem;
		rest = gpuenv_str_split(rest, ':', &elem);
		if (!elem.len || elem.ptr[0] != '/')
			continue;
		gpuenv_str_t e = gpuenv_arena_str(P->a, elem);
		if (!e.ptr)
			return -ENOMEM;
		if ((r = add_site(P, &sites, e.ptr)))
			return r;
	}
	if (!xy) {
		env->sites = sites.items;
		env->nsites = sites.n;
		return 0;
	}
	bool venv = env->kind == GPUENV_PYENV_VENV;
	bool user = !P->o->no_user_site && (!venv || env->system_site_packages);
	if (user) {
		const char *ub = gpuenv_ctx_getenv(P->ctx, "PYTHONUSERBASE");
		const char *home = gpuenv_ctx_getenv(P->ctx, "HOME");
		gpuenv_str_t us = ub && ub[0] ? gpuenv_arena_printf(P->a, "%s/lib/python%s/site-packages", ub, xy)
			: home && home[0] ? gpuenv_arena_printf(P->a, "%s/.local/lib/python%s/site-packages", home, xy)
			: GPUENV_STR_NULL;
		if (us.ptr && (r = add_site(P, &sites, us.ptr)))
			return r;
	}
	const char *prefixes[2] = { env->prefix.ptr, venv && env->system_site_packages ? env->base_prefix.ptr : NULL };
	for (size_t i = 0; i < 2; i++) {
		const char *pre = prefixes[i];
		if (!pre)
			continue;
		gpuenv_str_t cands[5];
		size_t nc = 0;
		cands[nc++] = gpuenv_arena_printf(P->a, "%s/lib/python%s/site-packages", pre, xy);
		cands[nc++] = gpuenv_arena_printf(P->a, "%s/lib64/python%s/site-packages", pre, xy);
		if (strcmp(pre, "/usr") == 0) {
			/* Debian's site.py: /usr/local/lib/pythonX.Y/dist-packages,
			 * /usr/lib/python3/dist-packages, /usr/lib/pythonX.Y/dist-packages */
			cands[nc++] = gpuenv_arena_printf(P->a, "/usr/local/lib/python%s/dist-packages", xy);
			cands[nc++] = stack_strdup(P->a, "/usr/lib/python3/dist-packages", 30);
			cands[nc++] = gpuenv_arena_printf(P->a, "/usr/lib/python%s/dist-packages", xy);
		}
		for (size_t k = 0; k < nc; k++) {
			if (!cands[k].ptr)
				return -ENOMEM;
			if ((r = add_site(P, &sites, cands[k].ptr)))
				return r;
		}
	}
	env->sites = sites.items;
	env->nsites = sites.n;
	return 0;
}

/* ---- distributions --------------------------------------------------------- */

/* The distributions of the site folders, through the one reader of
 * installed environments (gpuenv/env.h); what it could not read becomes a
 * warning of the probe. */
static int read_dists(struct penv *P, gpuenv_pyenv_t *env)
{
	gpuenv_env_opts_t eo = { .max_dists = P->o->max_dists };
	gpuenv_env_list_t list;
	int r;

	if ((r = gpuenv_env_read(P->ctx, P->a, env->sites, env->nsites, &eo, &list)))
		return r;
	for (size_t i = 0; i < list.nproblems; i++)
		stack_warn(P->ctx, P->w, "%s", list.problems[i].ptr);
	env->dists = list.dists;
	env->ndists = list.ndists;
	return 0;
}

const gpuenv_pydist_t *gpuenv_pyenv_find(const gpuenv_pyenv_t *env, const char *name)
{
	return gpuenv_env_find(env->dists, env->ndists, name);
}

/* ---- frameworks ------------------------------------------------------------ */

/* Every "*.so" (and "*.so.*") in a folder of a site, sorted. */
static int so_files(struct penv *P, const char *site, const char *sub, struct svec *out)
{
	char full[PATH_MAX];
	gpuenv_str_t dir = stack_join(P->a, site, sub);
	struct svec found = { 0 };
	DIR *d;
	struct dirent *e;

	if (!dir.ptr)
		return -ENOMEM;
	if (!stack_rooted(P->ctx, dir.ptr, full, sizeof(full)) || !(d = opendir(full)))
		return 0;
	while ((e = readdir(d)) != NULL) {
		gpuenv_str_t n = gpuenv_str(e->d_name);
		if (!gpuenv_str_endswith(n, ".so") || e->d_name[0] == '.')
			continue;
		gpuenv_str_t *s = stack_vec_push(P->a, &found, sizeof(*s));
		if (!s || !(*s = stack_join(P->a, dir.ptr, e->d_name)).ptr) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	if (found.n > 1) {
		gpuenv_str_t *v = found.items;
		for (size_t i = 1; i < found.n; i++)
			for (size_t k = i; k > 0 && gpuenv_str_cmp(v[k - 1], v[k]) > 0; k--) {
				gpuenv_str_t t = v[k];
				v[k] = v[k - 1];
				v[k - 1] = t;
			}
	}
	for (size_t i = 0; i < found.n; i++) {
		gpuenv_str_t *s = stack_vec_push(P->a, out, sizeof(*s));
		if (!s)
			return -ENOMEM;
		*s = ((gpuenv_str_t *)found.items)[i];
	}
	return 0;
}

static int one_file(struct penv *P, const char *site, const char *rel, struct svec *out)
{
	gpuenv_str_t p = stack_join(P->a, site, rel);
	if (!p.ptr)
		return -ENOMEM;
	if (!stack_is_file(P->ctx, p.ptr))
		return 0;
	gpuenv_str_t *s = stack_vec_push(P->a, out, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = p;
	return 0;
}

/* "cupy-cuda13x" -> "13", "cupy-cuda102" -> "10.2", "cupy-cuda110" -> "11.0";
 * "...-cu12" / "-cuda12-" -> "12" */
static gpuenv_str_t cuda_from_name(gpuenv_arena_t *a, gpuenv_str_t norm)
{
	for (size_t i = 0; i + 3 < norm.len; i++) {
		if (!(i == 0 || norm.ptr[i - 1] == '-') || memcmp(norm.ptr + i, "cu", 2) != 0)
			continue;
		size_t k = i + 2;
		if (k + 2 <= norm.len && memcmp(norm.ptr + k, "da", 2) == 0)
			k += 2;
		size_t ds = k;
		while (k < norm.len && norm.ptr[k] >= '0' && norm.ptr[k] <= '9')
			k++;
		size_t nd = k - ds;
		if (nd == 0)
			continue;
		bool x = k < norm.len && norm.ptr[k] == 'x';
		if (x)
			k++;
		if (k != norm.len && norm.ptr[k] != '-')
			continue;
		if (nd == 3 && !x) /* cupy-cuda102 */
			return gpuenv_arena_printf(a, "%.*s.%c", 2, norm.ptr + ds, norm.ptr[ds + 2]);
		if (nd <= 2)
			return stack_strdup(a, norm.ptr + ds, nd);
	}
	return GPUENV_STR_NULL;
}

static int classify(const gpuenv_pydist_t *dist)
{
	const char *n = dist->normalized.ptr;
	int kind = 0;

	if (strcmp(n, "torch") == 0)
		kind = GPUENV_FW_TORCH;
	else if (strcmp(n, "jax") == 0)
		kind = GPUENV_FW_JAX;
	else if (strcmp(n, "jaxlib") == 0)
		kind = GPUENV_FW_JAXLIB;
	else if (strncmp(n, "jax-cuda", 8) == 0 && gpuenv_str_endswith(dist->normalized, "-plugin"))
		kind = GPUENV_FW_JAX_CUDA_PLUGIN;
	else if (strncmp(n, "jax-cuda", 8) == 0 && gpuenv_str_endswith(dist->normalized, "-pjrt"))
		kind = GPUENV_FW_JAX_CUDA_PJRT;
	else if (strcmp(n, "cupy") == 0 || strncmp(n, "cupy-cuda", 9) == 0 || strncmp(n, "cupy-rocm", 9) == 0)
		kind = GPUENV_FW_CUPY;
	else if (strcmp(n, "tensorrt") == 0 || strncmp(n, "tensorrt-", 9) == 0)
		kind = GPUENV_FW_TENSORRT;
	else if (strcmp(n, "onnxruntime") == 0 || strcmp(n, "onnxruntime-gpu") == 0)
		kind = GPUENV_FW_ONNXRUNTIME;
	else if (strcmp(n, "triton") == 0 || strcmp(n, "pytorch-triton") == 0)
		kind = GPUENV_FW_TRITON;
	else if (strncmp(n, "nvidia-", 7) == 0)
		kind = GPUENV_FW_NVIDIA_WHEEL;
	return kind;
}

static int add_framework(struct penv *P, gpuenv_pyenv_t *env, size_t di, int kind, struct svec *fws)
{
	const gpuenv_pydist_t *dist = &env->dists[di];
	const char *n = dist->normalized.ptr;
	const char *site = env->sites[dist->site].ptr;
	struct svec bins = { 0 };
	int r;

	gpuenv_framework_t *fw = stack_vec_push(P->a, fws, sizeof(*fw));
	if (!fw)
		return -ENOMEM;
	fw->kind = kind;
	fw->dist = di;
	fw->version = dist->version;
	fw->version_src = GPUENV_VSRC_METADATA;
	fw->cuda = cuda_from_name(P->a, dist->normalized);
	fw->cuda_src = fw->cuda.ptr ? GPUENV_VSRC_METADATA : GPUENV_VSRC_NONE;
	fw->gpu = true;

	switch (kind) {
	case GPUENV_FW_TORCH: {
		gpuenv_str_t vp = stack_join(P->a, site, "torch/version.py"), s;
		if (vp.ptr && stack_read_head(P->ctx, vp.ptr, STACK_TEXT_MAX, &P->buf) == 0 && P->buf.len) {
			if (py_assign(P->buf.data, P->buf.len, "__version__", &s) && s.ptr) {
				fw->version = gpuenv_arena_str(P->a, s);
				fw->version_src = GPUENV_VSRC_VERSION_PY;
			}
			if (py_assign(P->buf.data, P->buf.len, "cuda", &s)) {
				fw->cuda = s.ptr ? gpuenv_arena_str(P->a, s) : GPUENV_STR_NULL;
				fw->cuda_src = GPUENV_VSRC_VERSION_PY;
			}
			if (py_assign(P->buf.data, P->buf.len, "hip", &s) && s.ptr)
				fw->hip = gpuenv_arena_str(P->a, s);
		}
		fw->gpu = fw->cuda.ptr || fw->hip.ptr;
		if ((r = one_file(P, site, "torch/lib/libtorch_cuda.so", &bins)) ||
			(r = one_file(P, site, "torch/lib/libtorch_hip.so", &bins)))
			return r;
		break;
	}
	case GPUENV_FW_JAX:
	case GPUENV_FW_JAXLIB:
		fw->gpu = false; /* the CUDA part is in the plugins */
		break;
	case GPUENV_FW_JAX_CUDA_PLUGIN: {
		/* jax-cuda13-plugin -> jax_cuda13_plugin/ */
		char mod[128];
		snprintf(mod, sizeof(mod), "%s", n);
		for (char *c = mod; *c; c++)
			if (*c == '-')
				*c = '_';
		if ((r = so_files(P, site, mod, &bins)))
			return r;
		break;
	}
	case GPUENV_FW_JAX_CUDA_PJRT:
		if (fw->cuda.ptr) {
			gpuenv_str_t rel = gpuenv_arena_printf(P->a, "jax_plugins/xla_cuda%s/xla_cuda_plugin.so",
				fw->cuda.ptr);
			if (!rel.ptr || (r = one_file(P, site, rel.ptr, &bins)))
				return rel.ptr ? r : -ENOMEM;
		}
		break;
	case GPUENV_FW_CUPY:
		if ((r = so_files(P, site, "cupy_backends/cuda/api", &bins)) ||
			(r = so_files(P, site, "cupy_backends/cuda/libs", &bins)))
			return r;
		break;
	case GPUENV_FW_TENSORRT:
		if ((r = so_files(P, site, "tensorrt_bindings", &bins)) ||
			(r = so_files(P, site, "tensorrt", &bins)))
			return r;
		break;
	case GPUENV_FW_ONNXRUNTIME: {
		fw->gpu = strcmp(n, "onnxruntime-gpu") == 0;
		gpuenv_str_t vp = stack_join(P->a, site, "onnxruntime/capi/version_info.py"), s;
		if (fw->gpu && vp.ptr && stack_read_head(P->ctx, vp.ptr, STACK_TEXT_MAX, &P->buf) == 0 &&
			P->buf.len) {
			if (py_assign(P->buf.data, P->buf.len, "cuda_version", &s) && s.len) {
				fw->cuda = gpuenv_arena_str(P->a, s);
				fw->cuda_src = GPUENV_VSRC_VERSION_PY;
			}
			if (py_assign(P->buf.data, P->buf.len, "cudnn_version", &s) && s.len)
				fw->cudnn = gpuenv_arena_str(P->a, s);
		}
		if (fw->gpu && (r = one_file(P, site, "onnxruntime/capi/libonnxruntime_providers_cuda.so", &bins)))
			return r;
		break;
	}
	case GPUENV_FW_TRITON:
		break;
	case GPUENV_FW_NVIDIA_WHEEL:
		/* the CUDA components carry the CUDA release in their version:
		 * nvidia-cuda-runtime 13.0.96 is CUDA 13.0 (not so cuBLAS, cuFFT) */
		if (!fw->cuda.ptr && (strncmp(n, "nvidia-cuda-", 12) == 0 ||
			strcmp(n, "nvidia-nvjitlink") == 0 || strcmp(n, "nvidia-nvtx") == 0) &&
			dist->version.ptr) {
			fw->cuda = xy_of(P->a, dist->version);
			fw->cuda_src = fw->cuda.ptr ? GPUENV_VSRC_METADATA : GPUENV_VSRC_NONE;
		}
		break;
	}
	/* the local label of the reported version ("+cu130") */
	const char *plus = fw->version.ptr ? memchr(fw->version.ptr, '+', fw->version.len) : NULL;
	if (plus) {
		fw->local = stack_strdup(P->a, plus + 1, fw->version.len - (size_t)(plus + 1 - fw->version.ptr));
		if (kind == GPUENV_FW_TORCH && gpuenv_str_eq_cstr(fw->local, "cpu"))
			fw->gpu = false;
	}
	fw->binaries = bins.items;
	fw->nbinaries = bins.n;
	if (P->o->loader && bins.n) {
		fw->loads = gpuenv_arena_calloc(P->a, bins.n, sizeof(*fw->loads));
		if (!fw->loads)
			return -ENOMEM;
		for (size_t i = 0; i < bins.n; i++) {
			r = stack_loader_resolve(P->ctx, P->a, P->cache, fw->binaries[i].ptr, P->o->loader,
				&fw->loads[i]);
			if (r == -ENOMEM)
				return r;
			if (r) {
				char msg[1200];
				gpuenv_error_format(&P->ctx->err, msg, sizeof(msg));
				stack_warn(P->ctx, P->w, "%s", msg);
				gpuenv_error_clear(P->ctx);
				fw->loads[i].binary = fw->binaries[i];
			}
		}
	}
	return 0;
}

static int fill_frameworks(struct penv *P, gpuenv_pyenv_t *env)
{
	struct svec fws = { 0 };
	int r;

	for (int kind = 1; kind < GPUENV_FW_COUNT; kind++) {
		for (size_t i = 0; i < env->ndists; i++) {
			if (env->dists[i].shadowed || classify(&env->dists[i]) != kind)
				continue;
			if ((r = add_framework(P, env, i, kind, &fws)))
				return r;
		}
	}
	env->frameworks = fws.items;
	env->nframeworks = fws.n;
	return 0;
}

/* ---- one environment ---------------------------------------------------- */

static int build_env(struct penv *P, int found_by, const char *interp, const char *prefix_arg,
	gpuenv_pyenv_t *env)
{
	gpuenv_str_t cfgpath = GPUENV_STR_NULL, cfgver = GPUENV_STR_NULL;
	int r;

	memset(env, 0, sizeof(*env));
	env->found_by = found_by;
	if (interp) {
		env->interpreter = stack_strdup(P->a, interp, strlen(interp));
		gpuenv_str_t followed = follow_shim(P, env->interpreter);
		env->real_interpreter = stack_realpath(P->ctx, P->a, followed.ptr);
		if (!env->real_interpreter.ptr)
			return -ENOENT;
		/* pyvenv.cfg beside the interpreter or one folder up */
		gpuenv_str_t bindir = stack_dirname(P->a, followed.ptr);
		gpuenv_str_t up = bindir.ptr ? stack_dirname(P->a, bindir.ptr) : bindir;
		if (!up.ptr)
			return -ENOMEM;
		const char *cfgdirs[2] = { bindir.ptr, up.ptr };
		for (size_t i = 0; i < 2 && !cfgpath.ptr; i++) {
			gpuenv_str_t c = stack_join(P->a, cfgdirs[i], "pyvenv.cfg");
			if (c.ptr && stack_is_file(P->ctx, c.ptr))
				cfgpath = c;
		}
		if (prefix_arg)
			env->prefix = stack_strdup(P->a, prefix_arg, strlen(prefix_arg));
		else if (cfgpath.ptr)
			env->prefix = up;
		else {
			gpuenv_str_t rb = stack_dirname(P->a, env->real_interpreter.ptr);
			env->prefix = rb.ptr ? stack_dirname(P->a, rb.ptr) : rb;
		}
	} else {
		env->prefix = stack_strdup(P->a, prefix_arg, strlen(prefix_arg));
		gpuenv_str_t c = stack_join(P->a, prefix_arg, "pyvenv.cfg");
		if (c.ptr && stack_is_file(P->ctx, c.ptr))
			cfgpath = c;
	}
	if (!env->prefix.ptr)
		return -ENOMEM;
	if (!stack_is_dir(P->ctx, env->prefix.ptr))
		return -ENOENT;
	if (cfgpath.ptr) {
		env->kind = GPUENV_PYENV_VENV;
		if (stack_read_head(P->ctx, cfgpath.ptr, STACK_TEXT_MAX, &P->buf) == 0 && P->buf.len) {
			char *cfg = gpuenv_arena_strndup(P->a, P->buf.data, P->buf.len);
			size_t clen = P->buf.len;
			if (!cfg)
				return -ENOMEM;
			gpuenv_str_t text = gpuenv_str_n(cfg, clen);
			gpuenv_str_t home = gpuenv_pycfg_get(text, "home");
			gpuenv_str_t inc = gpuenv_pycfg_get(text, "include-system-site-packages");
			cfgver = gpuenv_pycfg_version(text);
			if (cfgver.ptr)
				cfgver = gpuenv_arena_str(P->a, cfgver);
			env->system_site_packages = inc.ptr && gpuenv_str_ieq(inc, GPUENV_STR_LIT("true"));
			if (home.ptr && home.len && home.ptr[0] == '/') {
				/* home is the base interpreter's folder (its bin/) */
				gpuenv_str_t h = gpuenv_arena_str(P->a, home);
				env->base_prefix = h.ptr ? stack_dirname(P->a, h.ptr) : h;
			}
		}
	} else {
		gpuenv_str_t cm = stack_join(P->a, env->prefix.ptr, "conda-meta");
		if (cm.ptr && stack_is_dir(P->ctx, cm.ptr))
			env->kind = GPUENV_PYENV_CONDA;
	}
	if (!env->interpreter.ptr) {
		/* --env DIR / VIRTUAL_ENV: its own interpreter, when there is one */
		static const char *const names[] = { "bin/python3", "bin/python" };
		for (size_t i = 0; i < 2 && !env->interpreter.ptr; i++) {
			gpuenv_str_t p = stack_join(P->a, env->prefix.ptr, names[i]);
			if (p.ptr && stack_realpath(P->ctx, P->a, p.ptr).ptr) {
				env->interpreter = p;
				env->real_interpreter = stack_realpath(P->ctx, P->a, p.ptr);
			}
		}
	}
	if ((r = fill_version(P, env, cfgver, cfgpath)) || (r = fill_sites(P, env)) ||
		(r = read_dists(P, env)) || (r = fill_frameworks(P, env)))
		return r;
	return 0;
}

static bool same_prefix(struct penv *P, const gpuenv_pyenv_t *a, const gpuenv_pyenv_t *b)
{
	gpuenv_str_t ra = stack_realpath(P->ctx, P->a, a->prefix.ptr);
	gpuenv_str_t rb = stack_realpath(P->ctx, P->a, b->prefix.ptr);
	return ra.ptr && rb.ptr && gpuenv_str_eq(ra, rb);
}

int stack_pyenv_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_warn *w,
	struct stack_elfcache *cache, const gpuenv_pyenv_opts_t *opts, size_t *n, gpuenv_pyenv_t **out)
{
	static const gpuenv_pyenv_opts_t defaults;
	struct stack_elfcache local = { .arena = arena };
	struct penv P = { ctx, arena, w, cache ? cache : &local, opts ? opts : &defaults, { 0 } };
	struct svec envs = { 0 };
	gpuenv_pyenv_t env;
	int r = 0;

	*n = 0;
	*out = NULL;
	gpuenv_buf_init(&P.buf, ctx, STACK_TEXT_MAX + 1);
	if (P.o->python || P.o->env_dir) {
		const char *py = P.o->python;
		gpuenv_str_t found = GPUENV_STR_NULL;
		if (py && !strchr(py, '/')) {
			found = which(&P, py, NULL);
			if (!found.ptr) {
				r = gpuenv_fail(ctx, -ENOENT, py, 0, 0, "no such interpreter on PATH");
				goto done;
			}
			py = found.ptr;
		}
		const char *dir = py ? NULL : P.o->env_dir;
		/* a relative name is the caller's, from its current folder: made
		 * absolute without resolving links (a venv's python is one); under
		 * a --root it stays as given (stack_rooted leaves it alone) */
		char cwd[PATH_MAX];
		bool real_root = !ctx->root || !ctx->root[0];
		if (real_root && ((py && py[0] != '/') || (dir && dir[0] != '/'))) {
			if (!getcwd(cwd, sizeof(cwd))) {
				r = gpuenv_fail(ctx, -errno, py ? py : dir, 0, 0, "getcwd: %s", strerror(errno));
				goto done;
			}
			char abs[PATH_MAX];
			int len = snprintf(abs, sizeof(abs), "%s/%s", cwd, py ? py : dir);
			if (len < 0 || (size_t)len >= sizeof(abs)) {
				r = gpuenv_fail(ctx, -ENAMETOOLONG, py ? py : dir, 0, 0, "path too long");
				goto done;
			}
			gpuenv_fs_tidy_path(abs);
			gpuenv_str_t a = stack_strdup(arena, abs, strlen(abs));
			if (!a.ptr) {
				r = -ENOMEM;
				goto done;
			}
			if (py)
				py = a.ptr;
			else
				dir = a.ptr;
		}
		r = build_env(&P, py ? GPUENV_PYENV_ARG_PYTHON : GPUENV_PYENV_ARG_ENV, py, dir, &env);
		if (r == -ENOENT) {
			const char *what = py ? py : P.o->env_dir;
			r = gpuenv_fail(ctx, -ENOENT, what, 0, 0, "%s",
				py ? "no such Python interpreter" : "no such environment folder");
			goto done;
		}
		if (r)
			goto done;
		gpuenv_pyenv_t *slot = stack_vec_push(arena, &envs, sizeof(*slot));
		if (!slot) {
			r = -ENOMEM;
			goto done;
		}
		*slot = env;
	} else {
		struct cand {
			int found_by;
			const char *interp, *prefix;
		} cands[3];
		size_t nc = 0;
		const char *ve = gpuenv_ctx_getenv(ctx, "VIRTUAL_ENV");
		const char *cp = gpuenv_ctx_getenv(ctx, "CONDA_PREFIX");
		if (ve && ve[0])
			cands[nc++] = (struct cand){ GPUENV_PYENV_VIRTUAL_ENV, NULL, ve };
		if (cp && cp[0])
			cands[nc++] = (struct cand){ GPUENV_PYENV_CONDA_PREFIX, NULL, cp };
		gpuenv_str_t py3 = which(&P, "python3", NULL);
		if (py3.ptr)
			cands[nc++] = (struct cand){ GPUENV_PYENV_PATH, py3.ptr, NULL };
		for (size_t i = 0; i < nc; i++) {
			r = build_env(&P, cands[i].found_by, cands[i].interp, cands[i].prefix, &env);
			if (r == -ENOMEM)
				goto done;
			if (r) {
				stack_warn(ctx, w, "%s: %s: cannot read this Python environment",
					gpuenv_pyenv_found_name(cands[i].found_by),
					cands[i].interp ? cands[i].interp : cands[i].prefix);
				r = 0;
				continue;
			}
			bool dup = false;
			for (size_t k = 0; k < envs.n && !dup; k++)
				dup = same_prefix(&P, &((gpuenv_pyenv_t *)envs.items)[k], &env);
			if (dup)
				continue;
			gpuenv_pyenv_t *slot = stack_vec_push(arena, &envs, sizeof(*slot));
			if (!slot) {
				r = -ENOMEM;
				goto done;
			}
			*slot = env;
		}
	}
	*n = envs.n;
	*out = envs.items;
done:
	gpuenv_buf_free(&P.buf);
	return r;
}

int gpuenv_pyenv_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_pyenv_opts_t *opts,
	size_t *n, gpuenv_pyenv_t **out)
{
	return stack_pyenv_probe(ctx, arena, NULL, NULL, opts, n, out);
}
