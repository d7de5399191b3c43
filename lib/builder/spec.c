/* What a source build is, before anything runs (include/gpuenv/build.h):
 * pyproject.toml's [build-system], the hook runner's answer, the
 * environment a build sees, and the cache key.  Pure parts: the unit test
 * and the fuzz targets call them without a Python. */
#include "gpuenv/build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build_int.h"
#include "gpuenv/json.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/pep440.h"
#include "gpuenv/project.h"
#include "gpuenv/toml.h"
#include "gpuenv/wheel.h"

/* ---- [build-system] ------------------------------------------------------ */

/* "module.path" or "module.path:object.path": dotted Python identifiers. */
static bool backend_ok(const char *s)
{
	bool colon = false, start = true;
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ':' && !colon && !start) {
			colon = start = true;
			continue;
		}
		if (c == '.' && !start) {
			start = true;
			continue;
		}
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80 ||
			    (!start && c >= '0' && c <= '9')))
			return false;
		start = false;
	}
	return !start;
}

/* A backend-path entry: relative, no "..", inside the tree (PEP 517). */
static bool rel_path_ok(gpuenv_str_t p)
{
	if (!p.len || p.ptr[0] == '/' || memchr(p.ptr, '\0', p.len) || memchr(p.ptr, '\\', p.len))
		return false;
	for (size_t i = 0; i < p.len;) {
		size_t j = i;
		while (j < p.len && p.ptr[j] != '/')
			j++;
		if (j - i == 2 && p.ptr[i] == '.' && p.ptr[i + 1] == '.')
			return false;
		i = j + 1;
	}
	return true;
}

static int str_array(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_toml_doc_t *doc, const gpuenv_toml_value_t *v,
	const char *what, bool reqs, const char *const **out, size_t *n)
{
	gpuenv_toml_array_t *a;
	const char **list;
	if (gpuenv_toml_expect(doc, v, GPUENV_TOML_ARRAY, what) != 0)
		return ctx->err.code;
	a = v->u.arr;
	if (a->len > GPUENV_BUILD_MAX_REQUIRES)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, doc->file, v->line, v->col, "'%s' has %u entries; at most %d",
			what, a->len, GPUENV_BUILD_MAX_REQUIRES);
	if (!(list = gpuenv_arena_calloc(arena, a->len ? a->len : 1, sizeof(*list))))
		return gpuenv_oom(ctx, "[build-system]");
	for (uint32_t i = 0; i < a->len; i++) {
		const gpuenv_toml_value_t *e = a->items[i];
		char w[96];
		snprintf(w, sizeof(w), "%s[%u]", what, i);
		if (gpuenv_toml_expect(doc, e, GPUENV_TOML_STRING, w) != 0)
			return ctx->err.code;
		if (memchr(e->u.str.ptr, '\0', e->u.str.len))
			return gpuenv_fail(ctx, GPUENV_ETYPE, doc->file, e->line, e->col, "'%s' holds a NUL byte", w);
		if (reqs) {
			gpuenv_requirement_t r;
			if (gpuenv_requirement_parse(ctx, arena, e->u.str, &r) != 0) {
				char msg[sizeof(ctx->err.msg)];
				snprintf(msg, sizeof(msg), "%s", ctx->err.msg);
				gpuenv_fail(ctx, GPUENV_EREQ, doc->file, e->line, e->col, "'%s' is not a PEP 508 "
					"requirement: %s", w, msg);
				return gpuenv_hint(ctx, "write it as pip would take it: \"setuptools>=61\"");
			}
		} else if (!rel_path_ok(e->u.str)) {
			gpuenv_fail(ctx, GPUENV_ETYPE, doc->file, e->line, e->col, "'%s' (\"%.*s\") must be a path "
				"relative to the source tree that stays inside it", w, (int)(e->u.str.len > 80 ? 80 : e->u.str.len),
				e->u.str.ptr);
			return gpuenv_hint(ctx, "PEP 517: backend-path entries are relative to the project root");
		}
		if (!(list[i] = gpuenv_arena_strndup(arena, e->u.str.ptr, e->u.str.len)))
			return gpuenv_oom(ctx, "[build-system]");
	}
	*out = list;
	*n = a->len;
	return 0;
}

int gpuenv_build_system_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file, gpuenv_str_t text,
	gpuenv_build_system_t *out)
{
	static const char *const legacy_reqs[] = { GPUENV_BUILD_LEGACY_REQUIRES };
	gpuenv_toml_doc_t doc;
	gpuenv_toml_value_t *bs, *v;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (text.len > GPUENV_BUILD_MAX_PYPROJECT)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0, "pyproject.toml of %zu bytes; at most %zu MiB",
			text.len, GPUENV_BUILD_MAX_PYPROJECT >> 20);
	if (gpuenv_toml_doc_init(&doc, ctx, file) != 0)
		return gpuenv_oom(ctx, "pyproject.toml");
	if (text.len && (r = gpuenv_toml_parse(&doc, text.ptr, text.len)) != 0)
		goto out;
	bs = gpuenv_toml_get(doc.root, "build-system");
	if (bs && (r = gpuenv_toml_expect(&doc, bs, GPUENV_TOML_TABLE, "build-system")) != 0)
		goto out;
	/* PEP 518: no [build-system] or no requires: setuptools' legacy
	 * default; PEP 517: no build-backend: the legacy setup.py path */
	if (bs && (v = gpuenv_toml_get(bs->u.tab, "requires"))) {
		if ((r = str_array(ctx, arena, &doc, v, "build-system.requires", true, &out->requires, &out->nrequires)))
			goto out;
	} else {
		out->requires = legacy_reqs;
		out->nrequires = 1;
		out->legacy = true;
	}
	if (bs && (v = gpuenv_toml_get(bs->u.tab, "build-backend"))) {
		if ((r = gpuenv_toml_expect(&doc, v, GPUENV_TOML_STRING, "build-system.build-backend")) != 0)
			goto out;
		if (!(out->backend = gpuenv_arena_strndup(arena, v->u.str.ptr, v->u.str.len))) {
			r = gpuenv_oom(ctx, "[build-system]");
			goto out;
		}
		if (strlen(out->backend) != v->u.str.len || !backend_ok(out->backend)) {
			r = gpuenv_fail(ctx, GPUENV_ETYPE, file, v->line, v->col, "build-system.build-backend \"%.80s\" "
				"is not \"module.path\" or \"module.path:object\"", out->backend);
			gpuenv_hint(ctx, "PEP 517: for example \"setuptools.build_meta\"");
			goto out;
		}
	} else {
		out->backend = GPUENV_BUILD_LEGACY_BACKEND;
		out->legacy = true;
	}
	if (bs && (v = gpuenv_toml_get(bs->u.tab, "backend-path")) &&
		(r = str_array(ctx, arena, &doc, v, "build-system.backend-path", false, &out->backend_path,
			 &out->nbackend_path)))
		goto out;
out:
	gpuenv_toml_doc_free(&doc);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

/* ---- the runner's result --------------------------------------------------- */

static int res_bad(gpuenv_ctx_t *ctx, const char *file, const char *what)
{
	gpuenv_fail(ctx, GPUENV_EFORMAT, file, 0, 0, "the hook runner's result is not what gpuenv writes: %s", what);
	return gpuenv_hint(ctx, "the build folder was changed while the build ran, or the runner is not gpuenv's");
}

static const char *jstr(gpuenv_arena_t *arena, json_t *v)
{
	return gpuenv_arena_strndup(arena, json_string_value(v), json_string_length(v));
}

static int result_decode(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file, json_t *root,
	gpuenv_hook_result_t *out)
{
	json_t *ok = json_object_get(root, "ok"), *v;
	if (!json_is_object(root))
		return res_bad(ctx, file, "not a JSON object");
	if (!json_is_boolean(ok))
		return res_bad(ctx, file, "\"ok\" is not true or false");
	out->ok = json_is_true(ok);
	if (out->ok) {
		v = json_object_get(root, "return");
		if (json_is_string(v)) {
			if (!(out->str = jstr(arena, v)))
				return gpuenv_oom(ctx, "the hook's result");
			if (strlen(out->str) != json_string_length(v))
				return res_bad(ctx, file, "\"return\" holds a NUL byte");
			return 0;
		}
		if (!json_is_array(v))
			return res_bad(ctx, file, "\"return\" is neither a string nor a list");
		size_t n = json_array_size(v);
		if (n > GPUENV_BUILD_MAX_REQUIRES)
			return res_bad(ctx, file, "\"return\" has too many entries");
		const char **list = gpuenv_arena_calloc(arena, n ? n : 1, sizeof(*list));
		if (!list)
			return gpuenv_oom(ctx, "the hook's result");
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_array_get(v, i);
			if (!json_is_string(e))
				return res_bad(ctx, file, "\"return\" holds something else than strings");
			if (!(list[i] = jstr(arena, e)))
				return gpuenv_oom(ctx, "the hook's result");
			if (strlen(list[i]) != json_string_length(e))
				return res_bad(ctx, file, "\"return\" holds a NUL byte");
		}
		out->is_list = true;
		out->nlist = n;
		out->list = list;
		return 0;
	}
	static const char *const kinds[] = { "missing", "error", "unsupported" };
	v = json_object_get(root, "kind");
	if (!json_is_string(v))
		return res_bad(ctx, file, "\"kind\" is missing");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(json_string_value(v), kinds[i]))
			out->kind = kinds[i];
	if (!out->kind)
		return res_bad(ctx, file, "\"kind\" is none of missing, error, unsupported");
	v = json_object_get(root, "message");
	if (!json_is_string(v))
		return res_bad(ctx, file, "\"message\" is missing");
	if (!(out->message = jstr(arena, v)))
		return gpuenv_oom(ctx, "the hook's result");
	v = json_object_get(root, "traceback");
	if (v && !json_is_string(v))
		return res_bad(ctx, file, "\"traceback\" is not a string");
	if (v && !(out->traceback = jstr(arena, v)))
		return gpuenv_oom(ctx, "the hook's result");
	return 0;
}

int gpuenv_hook_result_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file, gpuenv_str_t text,
	gpuenv_hook_result_t *out)
{
	gpuenv_json_scope_t scope;
	json_error_t je;
	json_t *root;
	int r;

	memset(out, 0, sizeof(*out));
	if (text.len > GPUENV_BUILD_MAX_RESULT)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0, "the hook runner's result has %zu bytes; at most "
			"%zu", text.len, GPUENV_BUILD_MAX_RESULT);
	gpuenv_json_enter(ctx, &scope);
	root = json_loadb(text.ptr ? text.ptr : "", text.len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (gpuenv_json_leave(&scope))
			return gpuenv_oom(ctx, "the hook's result");
		return gpuenv_fail(ctx, GPUENV_EFORMAT, file, je.line > 0 ? (unsigned)je.line : 0,
			je.column > 0 ? (unsigned)je.column : 0, "the hook runner's result is not JSON: %s", je.text);
	}
	r = result_decode(ctx, arena, file, root, out);
	json_decref(root);
	if (gpuenv_json_leave(&scope) && r != -ENOMEM)
		r = gpuenv_oom(ctx, "the hook's result");
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

/* ---- the environment a build sees ---------------------------------------- */

/* The variables that change what a build makes, besides the options' own
 * (docs/build.md, "The cache key"). */
static const char *const key_vars[] = { "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED",
	"CUDA_HOME", "CUDA_PATH", "CUDACXX", "TORCH_CUDA_ARCH_LIST", "NVCC_FLAGS", "NVCC_APPEND_FLAGS",
	"NVCC_PREPEND_FLAGS", "FORCE_CUDA", "SETUPTOOLS_SCM_PRETEND_VERSION", "SETUPTOOLS_USE_DISTUTILS", NULL };
/* ...and the ones that only change how fast it runs */
static const char *const speed_vars[] = { "MAX_JOBS", "NVCC_THREADS", "CMAKE_BUILD_PARALLEL_LEVEL", "MAKEFLAGS",
	NULL };
/* what an isolated build never inherits */
static const char *const dropped_vars[] = { "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONUSERBASE",
	"VIRTUAL_ENV", "CONDA_PREFIX", "__PYVENV_LAUNCHER__", "PYTHONNOUSERSITE", NULL };

static bool in_list(const char *const *l, const char *name, size_t n)
{
	for (; *l; l++)
		if (strlen(*l) == n && !memcmp(*l, name, n))
			return true;
	return false;
}

/* The value of name the build gets: the options' env, else base_env. */
static const char *env_value(const gpuenv_build_opts_t *o, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = o->nenv; i-- > 0;)
		if (!strncmp(o->env[i], name, n) && o->env[i][n] == '=')
			return o->env[i] + n + 1;
	for (const char *const *e = o->base_env; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

int gpuenv_build_envp(gpuenv_arena_t *arena, const gpuenv_build_opts_t *o, const char *venv_bin,
	const char *virtual_env, char ***out)
{
	size_t nb = 0, k = 0;
	for (const char *const *e = o->base_env; e && *e; e++)
		nb++;
	char **envp = gpuenv_arena_calloc(arena, nb + o->nenv + 4, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	for (const char *const *e = o->base_env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		if (!eq || in_list(dropped_vars, *e, n) || !strncmp(*e, "PIP_", 4) || (n == 4 && !memcmp(*e, "PATH", 4)))
			continue;
		bool over = false;
		for (size_t i = 0; i < o->nenv && !over; i++)
			over = !strncmp(o->env[i], *e, n + 1);
		if (!over)
			envp[k++] = (char *)*e;
	}
	for (size_t i = 0; i < o->nenv; i++)
		if (strchr(o->env[i], '=') && strncmp(o->env[i], "PATH=", 5) != 0)
			envp[k++] = (char *)o->env[i];
	const char *path = env_value(o, "PATH");
	gpuenv_str_t p = gpuenv_arena_printf(arena, "PATH=%s%s%s%s%s", o->path_prefix ? o->path_prefix : "",
		o->path_prefix && *o->path_prefix ? ":" : "", venv_bin ? venv_bin : "", venv_bin ? ":" : "",
		path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!p.ptr)
		return -ENOMEM;
	envp[k++] = (char *)p.ptr;
	if (virtual_env) {
		gpuenv_str_t v = gpuenv_arena_printf(arena, "VIRTUAL_ENV=%s", virtual_env);
		if (!v.ptr)
			return -ENOMEM;
		envp[k++] = (char *)v.ptr;
	}
	envp[k] = NULL;
	*out = envp;
	return 0;
}

/* ---- the cache key ---------------------------------------------------------- */


/* Folders a source tree's hash leaves out: VCS data, caches, build
 * outputs, environments (what changes without the source changing). */
static const char *const skip_dirs[] = { ".git", ".hg", ".svn", "__pycache__", "build", "dist", ".venv", "venv",
	".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules", NULL };

struct tree_walk {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char **paths;
	size_t n, cap;
};

#define TREE_MAX_FILES 200000
#define TREE_MAX_DEPTH 64

static int walk_add(struct tree_walk *w, const char *rel)
{
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 256;
		if (nc > TREE_MAX_FILES)
			return gpuenv_fail(w->ctx, GPUENV_ETOOBIG, rel, 0, 0, "the source tree has more than %d files",
				TREE_MAX_FILES);
		const char **np = gpuenv_arena_calloc(w->arena, nc, sizeof(*np));
		if (!np)
			return gpuenv_oom(w->ctx, "the source tree's hash");
		if (w->n)
			memcpy(np, w->paths, w->n * sizeof(*np));
		w->paths = np;
		w->cap = nc;
	}
	if (!(w->paths[w->n++] = gpuenv_arena_strndup(w->arena, rel, strlen(rel))))
		return gpuenv_oom(w->ctx, "the source tree's hash");
	return 0;
}

static int walk(struct tree_walk *w, const char *root, const char *rel, unsigned depth)
{
	const char *dir = rel[0] ? gpuenv_arena_printf(w->arena, "%s/%s", root, rel).ptr : root;
	DIR *d;
	struct dirent *de;
	int r = 0;
	if (!dir)
		return gpuenv_oom(w->ctx, "the source tree's hash");
	if (depth > TREE_MAX_DEPTH)
		return gpuenv_fail(w->ctx, GPUENV_ETOOBIG, dir, 0, 0, "folders nested deeper than %d", TREE_MAX_DEPTH);
	if (!(d = opendir(dir)))
		return gpuenv_fail(w->ctx, -errno, dir, 0, 0, "cannot read the folder: %s", strerror(errno));
	while (!r && (de = readdir(d))) {
		const char *nm = de->d_name;
		size_t nl = strlen(nm);
		struct stat st;
		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		const char *sub = rel[0] ? gpuenv_arena_printf(w->arena, "%s/%s", rel, nm).ptr : nm;
		const char *full = gpuenv_arena_printf(w->arena, "%s/%s", dir, nm).ptr;
		if (!sub || !full) {
			r = gpuenv_oom(w->ctx, "the source tree's hash");
			break;
		}
		if (lstat(full, &st) != 0)
			continue; /* gone while we looked */
		if (S_ISDIR(st.st_mode)) {
			if (in_list(skip_dirs, nm, nl) || (nl > 9 && !strcmp(nm + nl - 9, ".egg-info")))
				continue;
			r = walk(w, root, sub, depth + 1);
		} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
			if (nl > 4 && (!strcmp(nm + nl - 4, ".pyc") || !strcmp(nm + nl - 4, ".pyo")))
				continue;
			r = walk_add(w, sub);
		}
	}
	closedir(d);
	return r;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The hash of a tree's files: each path, then its content (a link: its
 * target), in byte order of the paths. */
static int tree_hash(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *root, gpuenv_sha256_t *h)
{
	struct tree_walk w = { .ctx = ctx, .arena = arena };
	int r;
	if ((r = walk(&w, root, "", 0)) != 0)
		return r;
	qsort(w.paths, w.n, sizeof(*w.paths), cmp_path);
	for (size_t i = 0; i < w.n; i++) {
		const char *full = gpuenv_arena_printf(arena, "%s/%s", root, w.paths[i]).ptr;
		unsigned char d[GPUENV_SHA256_LEN];
		char hex[2 * GPUENV_SHA256_LEN + 1], link[4096];
		struct stat st;
		if (!full)
			return gpuenv_oom(ctx, "the source tree's hash");
		gpuenv_sha256_field(h, "file", w.paths[i]);
		if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(full, link, sizeof(link) - 1);
			link[n < 0 ? 0 : n] = '\0';
			gpuenv_sha256_field(h, "link", link);
			continue;
		}
		if ((r = gpuenv_sha256_file(ctx, full, d)) != 0)
			return r;
		gpuenv_hex(d, sizeof(d), hex);
		gpuenv_sha256_field(h, "sha256", hex);
	}
	return 0;
}

bool gpuenv_build_against(const gpuenv_build_opts_t *o, const char *name)
{
	for (size_t i = 0; o->against && i < o->nagainst; i++)
		if (!strcmp(o->against_names[i], name))
			return true;
	return false;
}

/* What the key hashes, into h (the caller finishes h in every case). */
static int key_inputs(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_opts_t *o,
	const gpuenv_build_req_t *req, gpuenv_sha256_t *hp)
{
	gpuenv_sha256_t h = *hp; /* a handle: the copy updates the same state */
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	struct utsname u;
	int r;

	gpuenv_sha256_field(&h, "gpuenv-build", "1");
	if (req->sdist_sha256) {
		gpuenv_sha256_field(&h, "sdist", req->sdist_sha256);
	} else if (req->directory && req->editable) {
		/* an editable install follows its tree: only what the build reads
		 * to make the editable wheel counts */
		static const char *const files[] = { "pyproject.toml", "setup.py", "setup.cfg", NULL };
		gpuenv_sha256_field(&h, "editable", req->directory);
		for (size_t i = 0; files[i]; i++) {
			const char *p = gpuenv_arena_printf(arena, "%s/%s", req->directory, files[i]).ptr;
			if (!p)
				return gpuenv_oom(ctx, "the build key");
			gpuenv_sha256_field(&h, "file", files[i]);
			if (gpuenv_sha256_file(ctx, p, d) == 0) {
				gpuenv_hex(d, sizeof(d), hex);
				gpuenv_sha256_field(&h, "sha256", hex);
			} else {
				gpuenv_error_clear(ctx);
				gpuenv_sha256_field(&h, "absent", NULL);
			}
		}
	} else if (req->directory) {
		gpuenv_sha256_field(&h, "directory", NULL);
		if ((r = tree_hash(ctx, arena, req->directory, &h)) != 0)
			return r;
	} else {
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "%s: a build needs an sdist's sha256 or a directory",
			req->name ? req->name : "?");
	}
	gpuenv_sha256_field(&h, "python", o->python ? o->python->version : NULL);
	gpuenv_sha256_field(&h, "free-threaded", o->python && o->python->free_threaded ? "1" : "0");
	gpuenv_sha256_field(&h, "machine", uname(&u) == 0 ? u.machine : NULL);
	if (gpuenv_build_against(o, req->name))
		gpuenv_sha256_field(&h, "against", o->against->root);
	else
		gpuenv_sha256_field(&h, "isolated", NULL);
	gpuenv_sha256_field(&h, "cuda", o->cuda_version);
	/* the variables, by name: the options' env (but the speed ones), then
	 * the key_vars of the base environment not set there */
	const char **names = gpuenv_arena_calloc(arena, o->nenv + sizeof(key_vars) / sizeof(key_vars[0]), sizeof(*names));
	size_t nn = 0;
	if (!names)
		return gpuenv_oom(ctx, "the build key");
	for (size_t i = 0; i < o->nenv; i++) {
		const char *eq = strchr(o->env[i], '=');
		if (!eq || in_list(speed_vars, o->env[i], (size_t)(eq - o->env[i])))
			continue;
		if (!(names[nn++] = gpuenv_arena_strndup(arena, o->env[i], (size_t)(eq - o->env[i]))))
			return gpuenv_oom(ctx, "the build key");
	}
	for (size_t i = 0; key_vars[i]; i++)
		names[nn++] = key_vars[i];
	qsort(names, nn, sizeof(*names), cmp_path);
	for (size_t i = 0; i < nn; i++) {
		if (i && !strcmp(names[i], names[i - 1]))
			continue;
		gpuenv_sha256_field(&h, names[i], env_value(o, names[i]));
	}
	return 0;
}

int gpuenv_build_key(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_opts_t *o,
	const gpuenv_build_req_t *req, const char **key)
{
	gpuenv_sha256_t h;
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	int r;

	*key = NULL;
	if (gpuenv_sha256_init(&h) != 0)
		return gpuenv_oom(ctx, "the build key");
	r = key_inputs(ctx, arena, o, req, &h);
	int e = gpuenv_sha256_final(&h, d); /* releases the state in every case */
	if (r)
		return r;
	if (e)
		return gpuenv_sha256_fail(ctx, e, "the build key");
	gpuenv_hex(d, sizeof(d), hex);
	if (!(*key = gpuenv_arena_strndup(arena, hex, strlen(hex))))
		return gpuenv_oom(ctx, "the build key");
	return 0;
}
