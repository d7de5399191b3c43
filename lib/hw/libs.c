#define _GNU_SOURCE /* memmem */
/* libs.c: every copy of the NVIDIA libraries that decide whether a GPU
 * stack runs (cudart, cuBLAS, cuDNN, NCCL, TensorRT, NVRTC, nvJitLink),
 * where it was found and which version it is.
 *
 * Places: ld.so.cache entries, $LD_LIBRARY_PATH folders, the toolkits' lib
 * folders, the Python environments' wheel folders (site-packages/nvidia/
 * * /lib, tensorrt_libs, torch/lib, *.libs), the default system folders, and
 * any folder a framework's RPATH/RUNPATH led the loader emulation to.  A copy
 * is a distinct file (device + inode); symlinks and symlinked folders that
 * reach it are its aliases.
 *
 * Versions, without dlopen, best first: the file name's full version
 * (libcudnn.so.9.19.0); the version header in the include folder beside the
 * lib folder (cudnn_version.h, nccl.h, cublas_api.h, NvInferVersion.h,
 * cuda_runtime_api.h); the owning wheel's version (nvidia-cudnn-cu13
 * 9.19.0.56); the toolkit's version.json component or dist-info; an ELF
 * version definition that carries a version; the soname's major.  Each with
 * its source, so `doctor` can weigh them. */
#include "stack_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_COPIES 4096

const char *gpuenv_libfamily_name(int family)
{
	static const char *const names[GPUENV_LIB_COUNT] = {
		[GPUENV_LIB_CUDART] = "cudart",
		[GPUENV_LIB_CUBLAS] = "cublas",
		[GPUENV_LIB_CUBLASLT] = "cublasLt",
		[GPUENV_LIB_CUDNN] = "cudnn",
		[GPUENV_LIB_NCCL] = "nccl",
		[GPUENV_LIB_NVINFER] = "nvinfer",
		[GPUENV_LIB_NVRTC] = "nvrtc",
		[GPUENV_LIB_NVJITLINK] = "nvJitLink",
	};
	return family >= 0 && family < GPUENV_LIB_COUNT ? names[family] : "unknown";
}

int gpuenv_libfamily_of(gpuenv_str_t fn)
{
	static const struct { const char *base; int fam; bool parts; } tab[] = {
		{ "libcudart", GPUENV_LIB_CUDART, false },
		{ "libcublas", GPUENV_LIB_CUBLAS, false },
		{ "libcublasLt", GPUENV_LIB_CUBLASLT, false },
		{ "libcudnn", GPUENV_LIB_CUDNN, true },	  /* libcudnn_ops ... */
		{ "libnccl", GPUENV_LIB_NCCL, false },
		{ "libnvinfer", GPUENV_LIB_NVINFER, true }, /* libnvinfer_plugin ... */
		{ "libnvrtc", GPUENV_LIB_NVRTC, false },
		{ "libnvrtc.alt", GPUENV_LIB_NVRTC, false },
		{ "libnvrtc-builtins", GPUENV_LIB_NVRTC, false },
		{ "libnvrtc-builtins.alt", GPUENV_LIB_NVRTC, false },
		{ "libnvJitLink", GPUENV_LIB_NVJITLINK, false },
	};
	size_t base = SIZE_MAX;

	/* "NAME.so" or "NAME.so.N[.N...]" (not "libnccl.so.2.txt") */
	for (size_t i = 0; i + 3 <= fn.len; i++)
		if (memcmp(fn.ptr + i, ".so", 3) == 0 && (i + 3 == fn.len || (fn.ptr[i + 3] == '.' &&
			gpuenv_dotted_valid(gpuenv_str_n(fn.ptr + i + 4, fn.len - i - 4), false)))) {
			base = i;
			break;
		}
	if (base == SIZE_MAX)
		return -1;
	for (size_t t = 0; t < sizeof(tab) / sizeof(tab[0]); t++) {
		size_t bl = strlen(tab[t].base);
		if (bl > base || memcmp(fn.ptr, tab[t].base, bl) != 0)
			continue;
		if (bl == base || (tab[t].parts && fn.ptr[bl] == '_'))
			return tab[t].fam;
	}
	return -1;
}

/* wheel distributions and toolkit components that ship each family */
static bool dist_matches(int fam, gpuenv_str_t norm)
{
	static const char *const bases[GPUENV_LIB_COUNT] = {
		[GPUENV_LIB_CUDART] = "nvidia-cuda-runtime",
		[GPUENV_LIB_CUBLAS] = "nvidia-cublas",
		[GPUENV_LIB_CUBLASLT] = "nvidia-cublas",
		[GPUENV_LIB_CUDNN] = "nvidia-cudnn",
		[GPUENV_LIB_NCCL] = "nvidia-nccl",
		[GPUENV_LIB_NVINFER] = NULL,
		[GPUENV_LIB_NVRTC] = "nvidia-cuda-nvrtc",
		[GPUENV_LIB_NVJITLINK] = "nvidia-nvjitlink",
	};
	if (fam == GPUENV_LIB_NVINFER) /* tensorrt-cu12-libs, tensorrt-libs */
		return gpuenv_str_startswith(norm, "tensorrt") && gpuenv_str_endswith(norm, "-libs");
	const char *b = bases[fam];
	size_t bl = strlen(b);
	return norm.len >= bl && memcmp(norm.ptr, b, bl) == 0 &&
		(norm.len == bl || (norm.len > bl + 3 && memcmp(norm.ptr + bl, "-cu", 3) == 0));
}

static const char *json_component(int fam)
{
	switch (fam) {
	case GPUENV_LIB_CUDART: return "cuda_cudart";
	case GPUENV_LIB_CUBLAS:
	case GPUENV_LIB_CUBLASLT: return "libcublas";
	case GPUENV_LIB_NVRTC: return "cuda_nvrtc";
	case GPUENV_LIB_NVJITLINK: return "libnvjitlink";
	default: return NULL;
	}
}

/* ---- collection ------------------------------------------------------------- */

struct copyx {
	gpuenv_libcopy_t c;
	dev_t dev;
	ino_t ino;
	struct svec aliases;  /* gpuenv_str_t */
	struct svec versions; /* gpuenv_stack_version_t */
};

struct hdrmemo {
	gpuenv_str_t incdir;
	int fam;
	gpuenv_str_t version, origin; /* version NULL: no header there */
};

struct scan {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	struct stack_warn *w;
	struct stack_elfcache *cache;
	struct svec copies; /* struct copyx */
	bool capped;	    /* MAX_COPIES was reached (said once) */
	struct svec memo;   /* struct hdrmemo */
	struct svec dirs;   /* gpuenv_str_t: folders already listed */
	gpuenv_buf_t buf;
};

#define CX(S, i) (((struct copyx *)(S)->copies.items)[i])

static int add_alias(struct scan *S, struct copyx *x, gpuenv_str_t path)
{
	if (gpuenv_str_eq(x->c.path, path))
		return 0;
	for (size_t i = 0; i < x->aliases.n; i++)
		if (gpuenv_str_eq(((gpuenv_str_t *)x->aliases.items)[i], path))
			return 0;
	gpuenv_str_t *s = stack_vec_push(S->a, &x->aliases, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = gpuenv_arena_str(S->a, path);
	return s->ptr ? 0 : -ENOMEM;
}

/* One path (a file or a symlink to one) that looks like a family member. */
static int add_file(struct scan *S, gpuenv_str_t path, unsigned where)
{
	char full[PATH_MAX];
	struct stat st;

	if (!stack_rooted(S->ctx, path.ptr, full, sizeof(full)) || stat(full, &st) != 0 ||
		!S_ISREG(st.st_mode))
		return 0;
	for (size_t i = 0; i < S->copies.n; i++) {
		struct copyx *x = &CX(S, i);
		if (x->dev == st.st_dev && x->ino == st.st_ino) {
			x->c.where |= where;
			return add_alias(S, x, path);
		}
	}
	if (S->copies.n >= MAX_COPIES) {
		if (!S->capped)
			stack_warn(S->ctx, S->w, "%s: more than %d NVIDIA library copies: the rest "
				"are left out", path.ptr, MAX_COPIES);
		S->capped = true;
		return 0;
	}
	/* the canonical path (symlinks and symlinked folders resolved); the
	 * ways in become aliases */
	gpuenv_str_t real = stack_realpath(S->ctx, S->a, path.ptr);
	if (!real.ptr)
		real = gpuenv_arena_str(S->a, path);
	if (!real.ptr)
		return -ENOMEM;
	const char *slash = strrchr(real.ptr, '/');
	gpuenv_str_t name = gpuenv_str(slash ? slash + 1 : real.ptr);
	int fam = gpuenv_libfamily_of(name);
	if (fam < 0) {
		const char *ls = strrchr(path.ptr, '/');
		fam = gpuenv_libfamily_of(gpuenv_str(ls ? ls + 1 : path.ptr));
	}
	if (fam < 0)
		return 0;
	struct copyx *x = stack_vec_push(S->a, &S->copies, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->dev = st.st_dev;
	x->ino = st.st_ino;
	x->c.family = fam;
	x->c.path = real;
	x->c.name = name;
	x->c.where = where;
	x->c.size = (uint64_t)st.st_size;
	return add_alias(S, x, path);
}

static int scan_dir(struct scan *S, const char *dir, unsigned where)
{
	char full[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (!dir || dir[0] != '/')
		return 0;
	/* a folder listed before only needs its new "where" bit */
	for (size_t i = 0; i < S->dirs.n; i++)
		if (gpuenv_str_eq_cstr(((gpuenv_str_t *)S->dirs.items)[i], dir)) {
			gpuenv_str_t pre = gpuenv_arena_printf(S->a, "%s/", dir);
			if (!pre.ptr)
				return -ENOMEM;
			for (size_t k = 0; k < S->copies.n; k++) {
				struct copyx *x = &CX(S, k);
				bool in = gpuenv_str_startswith(x->c.path, pre.ptr) &&
					!memchr(x->c.path.ptr + pre.len, '/', x->c.path.len - pre.len);
				for (size_t a = 0; a < x->aliases.n && !in; a++) {
					gpuenv_str_t al = ((gpuenv_str_t *)x->aliases.items)[a];
					in = gpuenv_str_startswith(al, pre.ptr) &&
						!memchr(al.ptr + pre.len, '/', al.len - pre.len);
				}
				if (in)
					x->c.where |= where;
			}
			return 0;
		}
	gpuenv_str_t *seen = stack_vec_push(S->a, &S->dirs, sizeof(*seen));
	if (!seen || !(*seen = stack_strdup(S->a, dir, strlen(dir))).ptr)
		return -ENOMEM;
	if (!stack_rooted(S->ctx, dir, full, sizeof(full)) || !(d = opendir(full)))
		return 0;
	while ((e = readdir(d)) != NULL) {
		gpuenv_str_t n = gpuenv_str(e->d_name);
		if (e->d_name[0] != 'l' || gpuenv_libfamily_of(n) < 0)
			continue;
		gpuenv_str_t p = stack_join(S->a, dir, e->d_name);
		if (!p.ptr) {
			r = -ENOMEM;
			break;
		}
		if ((r = add_file(S, p, where)))
			break;
	}
	closedir(d);
	return r;
}

/* The Python environments' library folders. */
static int scan_site(struct scan *S, const char *site)
{
	char full[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int r = 0;

	static const char *const fixed[] = { "tensorrt_libs", "tensorrt", "torch/lib" };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		gpuenv_str_t p = stack_join(S->a, site, fixed[i]);
		if (!p.ptr)
			return -ENOMEM;
		if ((r = scan_dir(S, p.ptr, GPUENV_LIBLOC_WHEEL)))
			return r;
	}
	/* nvidia/<component>/lib (cu12 wheels: nvidia/cudnn/lib; cu13 wheels:
	 * nvidia/cu13/lib) */
	gpuenv_str_t nv = stack_join(S->a, site, "nvidia");
	if (!nv.ptr)
		return -ENOMEM;
	if (stack_rooted(S->ctx, nv.ptr, full, sizeof(full)) && (d = opendir(full))) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.' || e->d_name[0] == '_')
				continue;
			gpuenv_str_t p = gpuenv_arena_printf(S->a, "%s/%s/lib", nv.ptr, e->d_name);
			if (!p.ptr) {
				r = -ENOMEM;
				break;
			}
			if ((r = scan_dir(S, p.ptr, GPUENV_LIBLOC_WHEEL)))
				break;
		}
		closedir(d);
		if (r)
			return r;
	}
	/* auditwheel's vendored folders: cupy_cuda13x.libs, ... */
	if (stack_rooted(S->ctx, site, full, sizeof(full)) && (d = opendir(full))) {
		while ((e = readdir(d)) != NULL) {
			if (!gpuenv_str_endswith(gpuenv_str(e->d_name), ".libs"))
				continue;
			gpuenv_str_t p = stack_join(S->a, site, e->d_name);
			if (!p.ptr) {
				r = -ENOMEM;
				break;
			}
			if ((r = scan_dir(S, p.ptr, GPUENV_LIBLOC_WHEEL)))
				break;
		}
		closedir(d);
	}
	return r;
}

/* ---- versions ---------------------------------------------------------------- */

static int add_version(struct scan *S, struct copyx *x, gpuenv_str_t text, int src, gpuenv_str_t origin)
{
	gpuenv_stack_version_t *v;

	if (!text.ptr || !text.len)
		return 0;
	v = stack_vec_push(S->a, &x->versions, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->text = gpuenv_arena_str(S->a, text);
	v->src = src;
	v->origin = origin;
	return v->text.ptr ? 0 : -ENOMEM;
}

/* The version a family's header states, read from incdir. */
static int header_version(struct scan *S, const char *incdir, int fam, gpuenv_str_t *ver,
	gpuenv_str_t *origin)
{
	static const struct {
		int fam;
		const char *file;
		const char *m[4]; /* major, minor, patch, build (NULL: absent) */
		const char *suffix;
	} hs[] = {
		{ GPUENV_LIB_CUDNN, "cudnn_version.h", { "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL", NULL }, NULL },
		{ GPUENV_LIB_CUDNN, "cudnn.h", { "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL", NULL }, NULL },
		{ GPUENV_LIB_NCCL, "nccl.h", { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH", NULL }, "NCCL_SUFFIX" },
		{ GPUENV_LIB_CUBLAS, "cublas_api.h", { "CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH", "CUBLAS_VER_BUILD" }, NULL },
		{ GPUENV_LIB_CUBLASLT, "cublas_api.h", { "CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH", "CUBLAS_VER_BUILD" }, NULL },
		{ GPUENV_LIB_NVINFER, "NvInferVersion.h", { "NV_TENSORRT_MAJOR", "NV_TENSORRT_MINOR", "NV_TENSORRT_PATCH", "NV_TENSORRT_BUILD" }, NULL },
		/* TensorRT 10 defines NV_TENSORRT_MAJOR through these */
		{ GPUENV_LIB_NVINFER, "NvInferVersion.h", { "TRT_MAJOR_ENTERPRISE", "TRT_MINOR_ENTERPRISE", "TRT_PATCH_ENTERPRISE", "TRT_BUILD_ENTERPRISE" }, NULL },
		{ GPUENV_LIB_CUDART, "cuda_runtime_api.h", { "CUDART_VERSION", NULL, NULL, NULL }, NULL },
	};

	*ver = *origin = GPUENV_STR_NULL;
	for (size_t i = 0; i < S->memo.n; i++) {
		struct hdrmemo *m = &((struct hdrmemo *)S->memo.items)[i];
		if (m->fam == fam && gpuenv_str_eq_cstr(m->incdir, incdir)) {
			*ver = m->version;
			*origin = m->origin;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]) && !ver->ptr; i++) {
		if (hs[i].fam != fam)
			continue;
		gpuenv_str_t path = stack_join(S->a, incdir, hs[i].file);
		if (!path.ptr)
			return -ENOMEM;
		if (stack_read_head(S->ctx, path.ptr, STACK_TEXT_MAX, &S->buf) != 0 || !S->buf.len)
			continue;
		long v[4];
		size_t nv = 0;
		for (; nv < 4 && hs[i].m[nv]; nv++)
			if (!gpuenv_cdefine_int(S->buf.data, S->buf.len, hs[i].m[nv], &v[nv]))
				break;
		if (nv == 0 || (nv < 4 && hs[i].m[nv]))
			continue;
		if (fam == GPUENV_LIB_CUDART) /* 13000 -> 13.0 */
			*ver = gpuenv_arena_printf(S->a, "%ld.%ld", v[0] / 1000, (v[0] % 1000) / 10);
		else if (nv == 4)
			*ver = gpuenv_arena_printf(S->a, "%ld.%ld.%ld.%ld", v[0], v[1], v[2], v[3]);
		else {
			gpuenv_str_t suf = hs[i].suffix ? gpuenv_cdefine_str(S->buf.data, S->buf.len, hs[i].suffix)
							: GPUENV_STR_NULL;
			*ver = gpuenv_arena_printf(S->a, "%ld.%ld.%ld" GPUENV_STR_FMT, v[0], v[1], v[2],
				GPUENV_STR_ARG(suf.ptr ? suf : GPUENV_STR_LIT("")));
		}
		*origin = path;
	}
	struct hdrmemo *m = stack_vec_push(S->a, &S->memo, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->incdir = stack_strdup(S->a, incdir, strlen(incdir));
	m->fam = fam;
	m->version = *ver;
	m->origin = *origin;
	return 0;
}

/* include folders that belong to a lib folder: ../include, and for Debian's
 * /usr/lib/<triplet>: /usr/include and /usr/include/<triplet> */
static int header_evidence(struct scan *S, struct copyx *x)
{
	gpuenv_str_t dir = stack_dirname(S->a, x->c.path.ptr);
	gpuenv_str_t parent = dir.ptr ? stack_dirname(S->a, dir.ptr) : dir;
	gpuenv_str_t incs[3];
	size_t ni = 0;

	if (!parent.ptr)
		return -ENOMEM;
	const char *base = strrchr(dir.ptr, '/');
	base = base ? base + 1 : dir.ptr;
	if (strstr(base, "-linux-gnu")) {
		gpuenv_str_t top = stack_dirname(S->a, parent.ptr);
		if (!top.ptr)
			return -ENOMEM;
		incs[ni++] = gpuenv_arena_printf(S->a, "%s/include/%s", top.ptr, base);
		incs[ni++] = stack_join(S->a, top.ptr, "include");
	}
	incs[ni++] = stack_join(S->a, parent.ptr, "include");
	for (size_t i = 0; i < ni; i++) {
		gpuenv_str_t v, o;
		int r;
		if (!incs[i].ptr)
			return -ENOMEM;
		if ((r = header_version(S, incs[i].ptr, x->c.family, &v, &o)))
			return r;
		if (v.ptr)
			return add_version(S, x, v, GPUENV_VSRC_HEADER, o);
	}
	return 0;
}

/* Which wheel installed this file: the family's distributions among the
 * environment's (RECORD decides between several). */
static int wheel_evidence(struct scan *S, struct copyx *x, const gpuenv_pyenv_t *envs, size_t nenvs)
{
	for (size_t e = 0; e < nenvs; e++) {
		const gpuenv_pyenv_t *env = &envs[e];
		for (size_t s = 0; s < env->nsites; s++) {
			gpuenv_str_t site = env->sites[s];
			if (!gpuenv_str_startswith(x->c.path, site.ptr) || x->c.path.len <= site.len ||
				x->c.path.ptr[site.len] != '/')
				continue;
			x->c.site = site;
			gpuenv_str_t rel = gpuenv_str_n(x->c.path.ptr + site.len + 1, x->c.path.len - site.len - 1);
			bool vendor = gpuenv_str_startswith(rel, "nvidia/") ||
				gpuenv_str_startswith(rel, "tensorrt_libs/") || gpuenv_str_startswith(rel, "tensorrt/");
			if (!vendor) {
				/* torch/lib -> torch; cupy_cuda13x.libs -> cupy-cuda13x */
				gpuenv_str_t top;
				char norm[128];
				gpuenv_str_split(rel, '/', &top);
				if (gpuenv_str_endswith(top, ".libs"))
					top.len -= 5;
				if (gpuenv_name_normalize_to(top, norm, sizeof(norm)) != SIZE_MAX) {
					const gpuenv_pydist_t *d = gpuenv_pyenv_find(env, norm);
					if (d)
						x->c.dist = d->normalized;
				}
				return 0;
			}
			const gpuenv_pydist_t *best = NULL;
			size_t ncand = 0;
			for (size_t i = 0; i < env->ndists; i++) {
				const gpuenv_pydist_t *d = &env->dists[i];
				if (d->shadowed || d->site != s)
					continue;
				if (x->c.family == GPUENV_LIB_NVINFER && gpuenv_str_startswith(rel, "tensorrt/")
						? gpuenv_str_eq_cstr(d->normalized, "tensorrt")
						: dist_matches(x->c.family, d->normalized)) {
					ncand++;
					if (!best)
						best = d;
					if (ncand > 1) {
						/* several (cu12 and cu13 side by side): RECORD says */
						gpuenv_str_t rec = stack_join(S->a, d->path.ptr, "RECORD");
						if (rec.ptr && stack_read_head(S->ctx, rec.ptr, 4u << 20, &S->buf) == 0 &&
							S->buf.len && memmem(S->buf.data, S->buf.len, rel.ptr, rel.len))
							best = d;
					}
				}
			}
			if (!best)
				return 0;
			x->c.dist = best->normalized;
			return add_version(S, x, best->version, GPUENV_VSRC_METADATA,
				gpuenv_arena_printf(S->a, "%s %s", best->normalized.ptr,
					best->version.ptr ? best->version.ptr : "?"));
		}
	}
	return 0;
}

static bool under(gpuenv_str_t path, gpuenv_str_t dir)
{
	return dir.ptr && path.len > dir.len && gpuenv_str_startswith(path, dir.ptr) &&
		path.ptr[dir.len] == '/';
}

static int toolkit_evidence(struct scan *S, struct copyx *x, const gpuenv_toolkit_t *tks, size_t ntk)
{
	for (size_t t = 0; t < ntk; t++) {
		const gpuenv_toolkit_t *tk = &tks[t];
		bool in = under(x->c.path, tk->realpath) || under(x->c.path, tk->path);
		for (size_t a = 0; a < x->aliases.n && !in; a++) {
			gpuenv_str_t al = ((gpuenv_str_t *)x->aliases.items)[a];
			in = under(al, tk->realpath) || under(al, tk->path);
		}
		if (!in)
			continue;
		x->c.toolkit = tk->path;
		const char *key = json_component(x->c.family);
		for (size_t i = 0; i < tk->ncomponents; i++) {
			const gpuenv_tk_component_t *c = &tk->components[i];
			bool hit = c->src == GPUENV_VSRC_VERSION_JSON ? key && gpuenv_str_eq_cstr(c->name, key)
								      : dist_matches(x->c.family, c->name);
			if (!hit)
				continue;
			gpuenv_str_t origin = c->src == GPUENV_VSRC_VERSION_JSON
				? gpuenv_arena_printf(S->a, "%s/version.json %s", tk->realpath.ptr, c->name.ptr)
				: gpuenv_arena_printf(S->a, "%s/dist-info %s %s", tk->realpath.ptr, c->name.ptr, c->version.ptr);
			return add_version(S, x, c->version, c->src, origin);
		}
		return 0;
	}
	return 0;
}

/* "libcudnn.so.9.19.0" -> "9.19.0" (NULL unless at least X.Y) */
static gpuenv_str_t so_version(gpuenv_str_t name, bool need_dot)
{
	for (size_t i = 0; i + 4 <= name.len; i++)
		if (memcmp(name.ptr + i, ".so.", 4) == 0) {
			gpuenv_str_t v = gpuenv_str_n(name.ptr + i + 4, name.len - i - 4);
			return gpuenv_dotted_valid(v, need_dot) ? v : GPUENV_STR_NULL;
		}
	return GPUENV_STR_NULL;
}

/* precision of a piece of evidence: dotted components, soname lowest */
static size_t rank(const gpuenv_stack_version_t *v)
{
	size_t n = 1;

	if (v->src == GPUENV_VSRC_SONAME)
		return 0;
	for (size_t i = 0; i < v->text.len; i++)
		n += v->text.ptr[i] == '.';
	return n;
}

static int finish_copy(struct scan *S, struct copyx *x, const gpuenv_toolkit_t *tks, size_t ntk,
	const gpuenv_pyenv_t *envs, size_t nenvs)
{
	const gpuenv_ld_elf_t *ep;
	gpuenv_ld_elf_t elf;
	int r;

	r = stack_elf_get(S->ctx, S->cache, x->c.path.ptr, x->dev, x->ino, &ep);
	if (r == -ENOMEM)
		return r;
	if (r) {
		char msg[1200];
		gpuenv_error_format(&S->ctx->err, msg, sizeof(msg));
		if (S->ctx->err.code == r)
			stack_warn(S->ctx, S->w, "%s", msg);
		else /* met before, told before */
			gpuenv_log(S->ctx, GPUENV_LOG_DEBUG, "%s: %s", x->c.path.ptr, gpuenv_strerror(r));
		gpuenv_error_clear(S->ctx);
		memset(&elf, 0, sizeof(elf));
	} else {
		elf = *ep;
	}
	x->c.soname = elf.soname;
	x->c.verdefs = elf.verdefs;
	x->c.nverdefs = elf.nverdefs;

	if ((r = add_version(S, x, so_version(x->c.name, true), GPUENV_VSRC_FILENAME, x->c.path)) ||
		(r = header_evidence(S, x)) || (r = wheel_evidence(S, x, envs, nenvs)) ||
		(r = toolkit_evidence(S, x, tks, ntk)))
		return r;
	/* a version definition carrying more than the soname: "libfoo_9.1.0" */
	for (size_t i = 0; i < elf.nverdefs; i++) {
		gpuenv_str_t d = elf.verdefs[i];
		if (elf.soname.ptr && gpuenv_str_eq(d, elf.soname))
			continue;
		size_t k = d.len;
		while (k > 0 && ((d.ptr[k - 1] >= '0' && d.ptr[k - 1] <= '9') || d.ptr[k - 1] == '.'))
			k--;
		gpuenv_str_t v = gpuenv_str_n(d.ptr + k, d.len - k);
		if (k > 0 && (d.ptr[k - 1] == '_' || d.ptr[k - 1] == '.') && gpuenv_dotted_valid(v, true)) {
			if ((r = add_version(S, x, v, GPUENV_VSRC_VERDEF, d)))
				return r;
			break;
		}
	}
	gpuenv_str_t sv = so_version(elf.soname.ptr ? elf.soname : x->c.name, false);
	if (sv.ptr && (r = add_version(S, x, sv, GPUENV_VSRC_SONAME,
			       elf.soname.ptr ? elf.soname : x->c.name)))
		return r;
	/* the most precise first ("13.0.96" from a wheel beats "13.0" from
	 * cuda_runtime_api.h); among equals, the order above; the soname last */
	gpuenv_stack_version_t *v = x->versions.items;
	for (size_t i = 1; i < x->versions.n; i++)
		for (size_t k = i; k > 0 && rank(&v[k]) > rank(&v[k - 1]); k--) {
			gpuenv_stack_version_t t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	x->c.versions = v;
	x->c.nversions = x->versions.n;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return gpuenv_str_cmp(*(const gpuenv_str_t *)a, *(const gpuenv_str_t *)b);
}

static int copy_cmp(const void *a, const void *b)
{
	const gpuenv_libcopy_t *x = a, *y = b;
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return gpuenv_str_cmp(x->path, y->path);
}

static int loader_paths(struct scan *S, const gpuenv_pyenv_t *envs, size_t nenvs)
{
	int r;

	for (size_t e = 0; e < nenvs; e++)
		for (size_t f = 0; f < envs[e].nframeworks; f++) {
			const gpuenv_framework_t *fw = &envs[e].frameworks[f];
			for (size_t b = 0; fw->loads && b < fw->nbinaries; b++)
				for (size_t o = 0; o < fw->loads[b].nobjects; o++) {
					const gpuenv_ld_object_t *obj = &fw->loads[b].objects[o];
					const char *sl = strrchr(obj->path.ptr, '/');
					if (gpuenv_libfamily_of(gpuenv_str(sl ? sl + 1 : obj->path.ptr)) < 0)
						continue;
					if ((r = add_file(S, obj->path, GPUENV_LIBLOC_LOADER)))
						return r;
				}
		}
	return 0;
}

int stack_libs_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_warn *w,
	struct stack_elfcache *elfcache, const gpuenv_toolkit_t *toolkits, size_t ntoolkits,
	const gpuenv_ldcache_t *cache, const gpuenv_pyenv_t *envs, size_t nenvs, size_t *n,
	gpuenv_libcopy_t **out)
{
	struct stack_elfcache local = { .arena = arena };
	struct scan S = { .ctx = ctx, .a = arena, .w = w, .cache = elfcache ? elfcache : &local };
	int r = 0;

	*n = 0;
	*out = NULL;
	gpuenv_buf_init(&S.buf, ctx, (4u << 20) + 1);

	/* 1. ld.so.cache */
	for (size_t i = 0; cache && i < cache->n; i++) {
		const gpuenv_ldcache_entry_t *e = &cache->entries[i];
		if (gpuenv_libfamily_of(e->soname) < 0)
			continue;
		if ((r = add_file(&S, e->path, GPUENV_LIBLOC_LDCACHE)))
			goto done;
	}
	/* 2. LD_LIBRARY_PATH */
	const char *llp = gpuenv_ctx_getenv(ctx, "LD_LIBRARY_PATH");
	for (gpuenv_str_t rest = llp ? gpuenv_str(llp) : GPUENV_STR_NULL; rest.ptr;) {
		gpuenv_str_t elem;
		rest = gpuenv_str_split(rest, ':', &elem);
		gpuenv_str_t dir = gpuenv_arena_str(arena, elem);
		if (!dir.ptr) {
			r = -ENOMEM;
			goto done;
		}
		if ((r = scan_dir(&S, dir.ptr, GPUENV_LIBLOC_LD_LIBRARY_PATH)))
			goto done;
	}
	/* 3. toolkits */
	for (size_t t = 0; t < ntoolkits; t++)
		if (toolkits[t].lib_dir.ptr && (r = scan_dir(&S, toolkits[t].lib_dir.ptr, GPUENV_LIBLOC_TOOLKIT)))
			goto done;
	/* 4. Python environments */
	for (size_t e = 0; e < nenvs; e++)
		for (size_t s = 0; s < envs[e].nsites; s++)
			if ((r = scan_site(&S, envs[e].sites[s].ptr)))
				goto done;
	/* 5. what the loader emulation reached */
	if ((r = loader_paths(&S, envs, nenvs)))
		goto done;
	/* 6. default folders of this machine's loader */
#if defined(__aarch64__)
	const char *const *defs = stack_default_dirs(183, true);
#else
	const char *const *defs = stack_default_dirs(62, true);
#endif
	for (size_t i = 0; defs[i]; i++)
		if ((r = scan_dir(&S, defs[i], GPUENV_LIBLOC_DEFAULT)))
			goto done;

	gpuenv_libcopy_t *res = gpuenv_arena_calloc(arena, S.copies.n ? S.copies.n : 1, sizeof(*res));
	if (!res) {
		r = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < S.copies.n; i++) {
		struct copyx *x = &CX(&S, i);
		if ((r = finish_copy(&S, x, toolkits, ntoolkits, envs, nenvs)))
			goto done;
		if (x->aliases.n > 1)
			qsort(x->aliases.items, x->aliases.n, sizeof(gpuenv_str_t), str_cmp);
		x->c.aliases = x->aliases.items;
		x->c.naliases = x->aliases.n;
		res[i] = x->c;
	}
	if (S.copies.n > 1)
		qsort(res, S.copies.n, sizeof(*res), copy_cmp);
	*n = S.copies.n;
	*out = res;
done:
	gpuenv_buf_free(&S.buf);
	return r;
}

int gpuenv_libs_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_toolkit_t *toolkits,
	size_t ntoolkits, const gpuenv_ldcache_t *cache, const gpuenv_pyenv_t *envs, size_t nenvs,
	size_t *n, gpuenv_libcopy_t **out)
{
	return stack_libs_probe(ctx, arena, NULL, NULL, toolkits, ntoolkits, cache, envs, nenvs, n, out);
}
