/* python.c: the Python interpreters of this machine (gpuenv/venv.h).
 *
 * Where: $PATH (python3, python3.X, python3.Xt, python; pyenv's shims
 * followed to the version folder they would run), pyenv's versions
 * ($PYENV_ROOT or ~/.pyenv, versions/STAR/bin/python3.X) and /usr/bin (under
 * ctx->root when set: the tests' fake trees), in that order of preference;
 * one entry per real binary.
 *
 * The version comes from disk: X.Y from the binary's name (or its
 * lib/pythonX.Y/os.py), X.Y.Z from a venv's pyvenv.cfg, pyenv's version
 * folder or include/pythonX.Y/patchlevel.h.  An interpreter is started
 * (-I -S -c, with a timeout) only when none of those says, or when only
 * X.Y is known and the question needs the micro version (want "3.12.1",
 * fits ">=3.11.4"). */
#include "gpuenv/venv.h"

#include "gpuenv/cdefine.h"
#include "gpuenv/fs.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pycfg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define FIND_MAX 512	       /* interpreters kept; past it the rest are ignored */
#define PATH_DIRS_MAX 256      /* $PATH folders looked at */
#define TEXT_MAX ((size_t)64 << 10) /* patchlevel.h, pyenv's version file */
#define START_TIMEOUT_MS 10000 /* a started interpreter's time to answer */

struct cand {
	gpuenv_python_t py;
	bool xy_only;	/* only X.Y known (version == "X.Y") */
	bool started;	/* already asked (answer or not) */
	bool unknown;	/* no version at all (start failed) */
	const char *name; /* basename of path */
};

struct finder {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	gpuenv_buf_t buf;
	struct cand *v;
	size_t n;
	const char *home;
	const char *pyenv_root;
};

/* ---- names and versions ------------------------------------------------------ */

/* "python3.12" / "python3.13t" -> 3, 12, t; false for anything else
 * (python3, python3-config, python3.12-config, python3.12m). */
static bool name_xy(const char *base, unsigned *maj, unsigned *min, bool *ft)
{
	if (strncmp(base, "python", 6) != 0)
		return false;
	const char *p = base + 6;
	char *end;
	if (*p < '0' || *p > '9')
		return false;
	unsigned long x = strtoul(p, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	unsigned long y = strtoul(end + 1, &end, 10);
	bool t = *end == 't';
	if (t)
		end++;
	if (*end || x > 99 || y > 999)
		return false;
	*maj = (unsigned)x;
	*min = (unsigned)y;
	*ft = t;
	return true;
}

/* The numbers of a version text "3.12.1" (missing parts 0); false when it
 * does not start with X.Y. */
static bool version_nums(const char *v, unsigned n[3])
{
	char *end;
	n[0] = n[1] = n[2] = 0;
	if (*v < '0' || *v > '9')
		return false;
	n[0] = (unsigned)strtoul(v, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	n[1] = (unsigned)strtoul(end + 1, &end, 10);
	if (*end == '.' && end[1] >= '0' && end[1] <= '9')
		n[2] = (unsigned)strtoul(end + 1, &end, 10);
	return true;
}

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static const char *dir_of(gpuenv_arena_t *a, const char *path)
{
	const char *b = strrchr(path, '/');
	if (!b)
		return ".";
	if (b == path)
		return "/";
	return gpuenv_arena_strndup(a, path, (size_t)(b - path));
}

/* Only X.Y known (version "3.12"; NULL when out of memory: then the
 * interpreter is left out, as one that cannot be described). */
static void set_xy(struct finder *F, struct cand *c, unsigned maj, unsigned min, bool ft, const char *source)
{
	c->py.major = maj;
	c->py.minor = min;
	c->py.free_threaded = ft;
	c->py.version = gpuenv_arena_printf(F->a, "%u.%u", maj, min).ptr;
	c->py.version_source = source;
	c->xy_only = true;
}

/* Read at most TEXT_MAX bytes of a regular file into F->buf; false when
 * there is none. */
static bool read_small(struct finder *F, const char *path)
{
	int fd = gpuenv_fs_open_regular(NULL, AT_FDCWD, path, NULL);
	if (fd < 0)
		return false;
	int r = gpuenv_fs_read_head(fd, TEXT_MAX, NULL, &F->buf);
	close(fd);
	return r == 0;
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Set the version from a text "3.12.1" (or "3.12.1rc1", from
 * patchlevel.h) that must agree with the X.Y already known. */
static bool take_version(struct finder *F, struct cand *c, gpuenv_str_t v, const char *source)
{
	unsigned n[3];
	char tmp[64];
	if (!v.ptr || v.len >= sizeof(tmp))
		return false;
	memcpy(tmp, v.ptr, v.len);
	tmp[v.len] = '\0';
	if (!version_nums(tmp, n))
		return false;
	if (c->py.major && (n[0] != c->py.major || n[1] != c->py.minor))
		return false; /* another interpreter's (a stale pyvenv.cfg) */
	c->py.version = gpuenv_arena_strndup(F->a, tmp, v.len);
	c->py.version_source = source;
	c->py.major = n[0];
	c->py.minor = n[1];
	c->xy_only = false;
	return c->py.version != NULL;
}

/* The version of c from disk (see the top of the file). */
static void version_from_disk(struct finder *F, struct cand *c)
{
	const char *real = c->py.real;
	unsigned maj, min;
	bool ft;

	if (name_xy(base_of(real), &maj, &min, &ft) || name_xy(base_of(c->py.path), &maj, &min, &ft))
		set_xy(F, c, maj, min, ft, "file name");
	/* a venv's interpreter: its pyvenv.cfg (beside bin/ or in it) */
	const char *pdir = dir_of(F->a, c->py.path);
	if (pdir && strcmp(pdir, c->py.home) != 0) {
		const char *cands[2] = { gpuenv_arena_printf(F->a, "%s/pyvenv.cfg", pdir).ptr,
			gpuenv_arena_printf(F->a, "%s/../pyvenv.cfg", pdir).ptr };
		for (int i = 0; i < 2; i++) {
			if (!cands[i] || !read_small(F, cands[i]))
				continue;
			if (take_version(F, c, gpuenv_pycfg_version(gpuenv_str_n(F->buf.data, F->buf.len)),
				    "pyvenv.cfg"))
				return;
			break;
		}
	}
	/* pyenv: .../versions/3.12.1/bin/python3.12 (3.13.0t: free-threaded) */
	const char *vs = strstr(real, "/versions/");
	if (vs) {
		vs += strlen("/versions/");
		const char *slash = strchr(vs, '/');
		if (slash && strncmp(slash, "/bin/", 5) == 0 && !strchr(slash + 5, '/')) {
			size_t n = (size_t)(slash - vs);
			bool t = n > 0 && vs[n - 1] == 't';
			gpuenv_str_t v = gpuenv_str_n(vs, t ? n - 1 : n);
			if (gpuenv_dotted_valid(v, true) && take_version(F, c, v, "pyenv folder")) {
				c->py.free_threaded = c->py.free_threaded || t;
				return;
			}
		}
	}
	/* the installation's prefix: include/pythonX.Y/patchlevel.h, lib/pythonX.Y/os.py */
	const char *prefix = dir_of(F->a, c->py.home);
	if (!prefix)
		return;
	if (!c->py.major) {
		DIR *d;
		const char *lib = gpuenv_arena_printf(F->a, "%s/lib", prefix).ptr;
		if (lib && (d = opendir(lib))) {
			struct dirent *e;
			unsigned bmin = 0, bmaj = 0;
			bool bft = false;
			while ((e = readdir(d)) != NULL) {
				if (!name_xy(e->d_name, &maj, &min, &ft) || maj < 3)
					continue;
				const char *os = gpuenv_arena_printf(F->a, "%s/%s/os.py", lib, e->d_name).ptr;
				if (os && is_file(os) && (!bmaj || min > bmin)) {
					bmaj = maj, bmin = min, bft = ft;
				}
			}
			closedir(d);
			if (bmaj)
				set_xy(F, c, bmaj, bmin, bft, "lib/pythonX.Y");
		}
	}
	if (c->py.major) {
		const char *pl = gpuenv_arena_printf(F->a, "%s/include/python%u.%u%s/patchlevel.h", prefix,
			c->py.major, c->py.minor, c->py.free_threaded ? "t" : "").ptr;
		if (pl && read_small(F, pl)) {
			gpuenv_str_t v = gpuenv_cdefine_str(F->buf.data, F->buf.len, "PY_VERSION");
			/* "3.13.0+" is a build from a development tree: its number */
			if (v.len && v.ptr[v.len - 1] == '+')
				v.len--;
			take_version(F, c, v, "patchlevel.h");
		}
	}
}

/* ---- starting one ------------------------------------------------------------ */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run `real -I -S -c ...` and read "3 12 1 final 0 t"; 0 with c filled,
 * or an error recorded in ctx. */
static int start_python(struct finder *F, struct cand *c)
{
	static const char code[] = "import sys; v = sys.version_info; "
				   "print(v[0], v[1], v[2], v[3], v[4], getattr(sys, 'abiflags', '') or '-')";
	char *argv[] = { (char *)c->py.real, (char *)"-I", (char *)"-S", (char *)"-c", (char *)code, NULL };
	char path_env[] = "PATH=/usr/bin:/bin";
	char *envp[3] = { path_env, NULL, NULL };
	const char *ldp = gpuenv_ctx_getenv(F->ctx, "LD_LIBRARY_PATH");
	gpuenv_str_t ld = ldp ? gpuenv_arena_printf(F->a, "LD_LIBRARY_PATH=%s", ldp) : GPUENV_STR_NULL;
	posix_spawn_file_actions_t fa;
	int pipefd[2], devnull, r, status = 0;
	pid_t pid;
	char out[256];
	size_t len = 0;

	c->started = true;
	if (ld.ptr)
		envp[1] = (char *)ld.ptr;
	if (pipe(pipefd) != 0)
		return gpuenv_fail(F->ctx, -errno, c->py.real, 0, 0, "pipe: %s", strerror(errno));
	/* the child gets the write end as its stdout, nothing else */
	fcntl(pipefd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pipefd[1], F_SETFD, FD_CLOEXEC);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	if (devnull >= 0) {
		posix_spawn_file_actions_adddup2(&fa, devnull, 0);
		posix_spawn_file_actions_adddup2(&fa, devnull, 2);
	}
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	r = posix_spawn(&pid, c->py.real, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (devnull >= 0)
		close(devnull);
	if (r != 0) {
		close(pipefd[0]);
		return gpuenv_fail(F->ctx, -r, c->py.real, 0, 0, "cannot start it: %s", strerror(r));
	}
	long long deadline = now_ms() + START_TIMEOUT_MS;
	bool timed_out = false;
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			timed_out = pr == 0;
			break;
		}
		ssize_t k = read(pipefd[0], out + len, sizeof(out) - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		len += (size_t)k;
		if (len == sizeof(out) - 1)
			break;
	}
	close(pipefd[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[len] = '\0';
	if (timed_out)
		return gpuenv_fail(F->ctx, GPUENV_EFORMAT, c->py.real, 0, 0,
			"did not say its version within %d s (started with -I -S -c)", START_TIMEOUT_MS / 1000);
	unsigned maj, min, mic, serial;
	char level[16], abi[16];
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
		sscanf(out, "%u %u %u %15s %u %15s", &maj, &min, &mic, level, &serial, abi) != 6)
		return gpuenv_fail(F->ctx, GPUENV_EFORMAT, c->py.real, 0, 0,
			"not a Python interpreter: `-c` printing sys.version_info %s",
			WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "printed something else" : "failed");
	const char *pre = !strcmp(level, "alpha") ? "a" : !strcmp(level, "beta") ? "b"
		: !strcmp(level, "candidate") ? "rc" : "";
	c->py.version = pre[0] ? gpuenv_arena_printf(F->a, "%u.%u.%u%s%u", maj, min, mic, pre, serial).ptr
			       : gpuenv_arena_printf(F->a, "%u.%u.%u", maj, min, mic).ptr;
	if (!c->py.version)
		return gpuenv_oom(F->ctx, "python version");
	c->py.major = maj;
	c->py.minor = min;
	c->py.free_threaded = strchr(abi, 't') != NULL;
	c->py.version_source = "started";
	c->xy_only = false;
	c->unknown = false;
	return 0;
}

/* ---- candidates ---------------------------------------------------------------- */

/* Add the interpreter at path (found_by) unless its real binary is
 * already there.  0, or -ENOMEM. */
static int add(struct finder *F, const char *path, const char *found_by)
{
	char real[PATH_MAX];
	struct stat st;

	if (F->n >= FIND_MAX)
		return 0;
	bool is_shim;
	const char *run = gpuenv_pyenv_shim_target(F->ctx, F->a, NULL, path, &is_shim);
	if (!run && !is_shim)
		run = path;
	if (!run || !realpath(run, real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode) ||
		!(st.st_mode & 0111))
		return 0;
	for (size_t i = 0; i < F->n; i++)
		if (!strcmp(F->v[i].py.real, real))
			return 0;
	struct cand *c = &F->v[F->n];
	memset(c, 0, sizeof(*c));
	c->py.path = gpuenv_arena_strndup(F->a, path, strlen(path));
	c->py.real = gpuenv_arena_strndup(F->a, real, strlen(real));
	c->py.home = dir_of(F->a, real);
	c->py.found_by = found_by;
	if (!c->py.path || !c->py.real || !c->py.home)
		return gpuenv_oom(F->ctx, "python list");
	c->name = base_of(c->py.path);
	version_from_disk(F, c);
	if (!c->py.version) {
		/* nothing on disk says: ask it (rare: a lone "python" binary) */
		if (start_python(F, c) != 0) {
			if (F->ctx->err.code == -ENOMEM)
				return -ENOMEM;
			gpuenv_error_clear(F->ctx);
			return 0; /* not a Python we can use */
		}
	}
	F->n++;
	return 0;
}

/* Order of names in one folder: python3, python3.X newest first (the GIL
 * build before the free-threaded one), python. */
static int name_rank(const char *name, unsigned *minor, bool *ft)
{
	unsigned maj;
	*minor = 0;
	*ft = false;
	if (!strcmp(name, "python3"))
		return 0;
	if (name_xy(name, &maj, minor, ft))
		return maj == 3 ? 1 : -1;
	if (!strcmp(name, "python"))
		return 2;
	return -1;
}

static int name_cmp(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
	unsigned ma, mb;
	bool fa, fb;
	int ra = name_rank(a, &ma, &fa), rb = name_rank(b, &mb, &fb);
	if (ra != rb)
		return ra - rb;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	if (fa != fb)
		return fa ? 1 : -1;
	return strcmp(a, b);
}

/* The interpreters of one folder (only_xy: python3.X names only). */
static int scan_dir(struct finder *F, const char *dir, const char *found_by, bool only_xy)
{
	const char *names[128];
	size_t nn = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && nn < sizeof(names) / sizeof(names[0])) {
		unsigned minor;
		bool ft;
		int rank = name_rank(e->d_name, &minor, &ft);
		if (rank < 0 || (only_xy && rank != 1))
			continue;
		if (!(names[nn++] = gpuenv_arena_strndup(F->a, e->d_name, strlen(e->d_name)))) {
			closedir(d);
			return gpuenv_oom(F->ctx, "python list");
		}
	}
	closedir(d);
	qsort(names, nn, sizeof(names[0]), name_cmp);
	for (size_t i = 0; i < nn && !r; i++) {
		const char *p = gpuenv_arena_printf(F->a, "%s%s%s", dir, dir[1] ? "/" : "", names[i]).ptr;
		r = p ? add(F, p, found_by) : gpuenv_oom(F->ctx, "python list");
	}
	return r;
}

struct vdir {
	const char *name;
	unsigned n[3];
};

static int vdir_cmp(const void *pa, const void *pb)
{
	const struct vdir *a = pa, *b = pb;
	for (int i = 0; i < 3; i++)
		if (a->n[i] != b->n[i])
			return a->n[i] > b->n[i] ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* pyenv's versions/STAR/bin, newest version first. */
static int scan_pyenv(struct finder *F)
{
	const char *vroot = gpuenv_arena_printf(F->a, "%s/versions", F->pyenv_root).ptr;
	struct vdir vs[256];
	size_t nv = 0;
	DIR *d = vroot ? opendir(vroot) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && nv < sizeof(vs) / sizeof(vs[0])) {
		if (e->d_name[0] == '.')
			continue;
		struct vdir *v = &vs[nv];
		if (!(v->name = gpuenv_arena_strndup(F->a, e->d_name, strlen(e->d_name)))) {
			closedir(d);
			return gpuenv_oom(F->ctx, "python list");
		}
		if (!version_nums(v->name, v->n))
			v->n[0] = v->n[1] = v->n[2] = 0; /* "miniconda3-latest": last */
		nv++;
	}
	closedir(d);
	qsort(vs, nv, sizeof(vs[0]), vdir_cmp);
	for (size_t i = 0; i < nv && !r; i++) {
		const char *bin = gpuenv_arena_printf(F->a, "%s/%s/bin", vroot, vs[i].name).ptr;
		r = bin ? scan_dir(F, bin, "pyenv", true) : gpuenv_oom(F->ctx, "python list");
	}
	return r;
}

static int scan_all(struct finder *F)
{
	const char *path = gpuenv_ctx_getenv(F->ctx, "PATH");
	const char *seen[PATH_DIRS_MAX];
	size_t nseen = 0;
	int r;

	for (gpuenv_str_t rest = path ? gpuenv_str(path) : GPUENV_STR_NULL; rest.ptr && nseen < PATH_DIRS_MAX;) {
		gpuenv_str_t elem;
		rest = gpuenv_str_split(rest, ':', &elem);
		if (!elem.len || elem.ptr[0] != '/')
			continue; /* a relative $PATH entry depends on the folder gpuenv runs in */
		while (elem.len > 1 && elem.ptr[elem.len - 1] == '/')
			elem.len--;
		const char *dir = gpuenv_arena_strndup(F->a, elem.ptr, elem.len);
		if (!dir)
			return gpuenv_oom(F->ctx, "python list");
		bool dup = false;
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = !strcmp(seen[i], dir);
		if (dup)
			continue;
		seen[nseen++] = dir;
		if ((r = scan_dir(F, dir, "PATH", false)))
			return r;
	}
	if ((r = scan_pyenv(F)))
		return r;
	const char *root = F->ctx->root && F->ctx->root[0] ? F->ctx->root : "";
	const char *usr = gpuenv_arena_printf(F->a, "%s/usr/bin", root).ptr;
	return usr ? scan_dir(F, usr, "/usr/bin", false) : gpuenv_oom(F->ctx, "python list");
}

/* ---- the question ---------------------------------------------------------------- */

enum want_kind { WANT_ANY, WANT_PATH, WANT_VERSION, WANT_NAME };

struct want {
	int kind;
	unsigned n[3];
	int parts; /* numbers given: 1 ("3"), 2 ("3.12"), 3 ("3.12.1") */
	bool ft;
	const char *text;
};

static int parse_want(gpuenv_ctx_t *ctx, const char *text, struct want *w)
{
	memset(w, 0, sizeof(*w));
	w->text = text;
	if (!text || !text[0]) {
		w->kind = WANT_ANY;
		return 0;
	}
	if (strchr(text, '/')) {
		w->kind = WANT_PATH;
		return 0;
	}
	const char *p = text;
	if (!strncmp(p, "python", 6)) {
		p += 6;
		if (!*p || !strcmp(p, "3")) {
			w->kind = WANT_NAME;
			return 0;
		}
	}
	/* X[.Y[.Z]][t] */
	size_t len = strlen(p);
	bool ft = len && p[len - 1] == 't';
	gpuenv_str_t nums = gpuenv_str_n(p, ft ? len - 1 : len);
	if (len < 32 && gpuenv_dotted_valid(nums, false)) {
		char tmp[32];
		memcpy(tmp, nums.ptr, nums.len);
		tmp[nums.len] = '\0';
		char *q = tmp;
		for (w->parts = 0; w->parts < 3 && *q;) {
			w->n[w->parts++] = (unsigned)strtoul(q, &q, 10);
			if (*q == '.')
				q++;
		}
		if (!*q && (!ft || w->parts >= 2)) {
			w->kind = WANT_VERSION;
			w->ft = ft;
			return 0;
		}
	}
	gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
		"'%s' is not a Python version, interpreter name or path", text);
	return gpuenv_hint(ctx, "give X.Y (3.12), X.Y.Z (3.12.1), a name (python3.12) or a path (/usr/bin/python3)");
}

/* Whether the set admits the version text (a parse the set can judge): 1,
 * 0, or -ENOMEM (recorded: out of memory is not "no interpreter fits"). */
static int set_admits(gpuenv_ctx_t *ctx, const gpuenv_specset_t *set, const char *text)
{
	gpuenv_arena_t tmp;
	gpuenv_version_t v;
	gpuenv_arena_init(&tmp, ctx, 0);
	int r = gpuenv_version_parse(ctx, &tmp, gpuenv_str(text), &v);
	int ok = r == 0 && gpuenv_specset_contains(set, gpuenv_str(text), &v, GPUENV_PRERELEASES_YES);
	gpuenv_arena_free(&tmp);
	if (r == -ENOMEM)
		return -ENOMEM;
	if (r)
		gpuenv_error_clear(ctx);
	return ok;
}

/* Whether c answers the want and the specifier set; may start c when
 * only X.Y is known and the answer needs more.  -ENOMEM, or 0 with *ok. */
static int judge(struct finder *F, struct cand *c, const struct want *w, const gpuenv_specset_t *set,
	bool *ok)
{
	*ok = false;
	if (w->kind == WANT_NAME && strcmp(c->name, w->text) != 0)
		return 0;
	if (w->kind == WANT_VERSION) {
		if (c->py.major != w->n[0] || (w->parts >= 2 && c->py.minor != w->n[1]))
			return 0;
		if (w->parts >= 2 && c->py.free_threaded != w->ft)
			return 0;
		if (w->parts == 3) {
			if (c->xy_only && !c->started && start_python(F, c) != 0) {
				if (F->ctx->err.code == -ENOMEM)
					return -ENOMEM;
				gpuenv_error_clear(F->ctx);
			}
			unsigned n[3];
			if (c->xy_only || !version_nums(c->py.version, n) || n[2] != w->n[2])
				return 0;
		}
	}
	if (set && set->n) {
		if (c->xy_only) {
			/* X.Y alone: the set must say the same of X.Y.0 and of any later X.Y.Z */
			char lo[32], hi[32];
			snprintf(lo, sizeof(lo), "%u.%u.0", c->py.major, c->py.minor);
			snprintf(hi, sizeof(hi), "%u.%u.9999", c->py.major, c->py.minor);
			int a = set_admits(F->ctx, set, lo), b = set_admits(F->ctx, set, hi);
			if (a < 0 || b < 0)
				return -ENOMEM;
			if (a == b) {
				*ok = a;
				return 0;
			}
			if (!c->started && start_python(F, c) != 0) {
				if (F->ctx->err.code == -ENOMEM)
					return -ENOMEM;
				gpuenv_error_clear(F->ctx);
			}
			if (c->xy_only)
				return 0; /* cannot tell: not a fit */
		}
		int admits = set_admits(F->ctx, set, c->py.version);
		*ok = admits > 0;
		return admits < 0 ? -ENOMEM : 0;
	}
	*ok = true;
	return 0;
}

/* For "the newest": a GIL build before any free-threaded one (those are
 * asked for by name), then the higher version. */
static int cand_newer(const struct cand *a, const struct cand *b)
{
	unsigned na[3], nb[3];
	if (a->py.free_threaded != b->py.free_threaded)
		return b->py.free_threaded;
	version_nums(a->py.version, na);
	version_nums(b->py.version, nb);
	for (int i = 0; i < 3; i++)
		if (na[i] != nb[i])
			return na[i] > nb[i];
	return 0;
}

/* "/root/.pyenv/x" -> "~/.pyenv/x" when $HOME is /root (for messages) */
static const char *tilde(struct finder *F, const char *path)
{
	size_t hl = F->home ? strlen(F->home) : 0;
	if (hl > 1 && !strncmp(path, F->home, hl) && path[hl] == '/')
		return gpuenv_arena_printf(F->a, "~%s", path + hl).ptr;
	return path;
}

static int not_found(struct finder *F, const struct want *w, const char *fits)
{
	gpuenv_buf_t b;
	unsigned hx = 3, hy = 0;

	gpuenv_buf_init(&b, F->ctx, sizeof(F->ctx->err.msg));
	int r = w->kind == WANT_PATH && F->n
		? gpuenv_buf_printf(&b, "%s is Python %s (%s), which does not fit %s", w->text, F->v[0].py.version,
			F->v[0].py.version_source, fits ? fits : "")
		: gpuenv_buf_printf(&b, "no Python interpreter");
	if (w->kind == WANT_VERSION || w->kind == WANT_NAME)
		r = r ? r : gpuenv_buf_printf(&b, " %s%s", w->kind == WANT_NAME ? "named " : "", w->text);
	if (fits && fits[0] && w->kind != WANT_PATH)
		r = r ? r : gpuenv_buf_printf(&b, " fits %s", fits);
	r = r ? r : gpuenv_buf_printf(&b, "; found: ");
	if (!F->n)
		r = r ? r : gpuenv_buf_printf(&b, "none (on PATH, in %s/versions, in /usr/bin)", tilde(F, F->pyenv_root));
	for (size_t i = 0; i < F->n && !r; i++) {
		gpuenv_str_t item = gpuenv_arena_printf(F->a, "%s%s (%s%s)", i ? ", " : "", tilde(F, F->v[i].py.path),
			F->v[i].py.version, F->v[i].py.free_threaded ? ", free-threaded" : "");
		if (b.len + item.len + 24 >= sizeof(F->ctx->err.msg)) {
			r = gpuenv_buf_printf(&b, ", and %zu more", F->n - i);
			break;
		}
		r = gpuenv_buf_append(&b, item.ptr, item.len);
	}
	/* the X.Y to suggest: the one asked for, else the oldest the set admits */
	if (w->kind == WANT_VERSION && w->parts >= 2) {
		hx = w->n[0];
		hy = w->n[1];
	} else if (fits && fits[0]) {
		gpuenv_specset_t set;
		if (gpuenv_specset_parse(F->ctx, F->a, gpuenv_str(fits), &set) == 0) {
			for (unsigned y = 6; y <= 40 && !hy; y++) {
				char lo[16], hi[16];
				snprintf(lo, sizeof(lo), "3.%u.0", y);
				snprintf(hi, sizeof(hi), "3.%u.9999", y);
				if (set_admits(F->ctx, &set, lo) > 0 || set_admits(F->ctx, &set, hi) > 0)
					hy = y;
			}
		}
		gpuenv_error_clear(F->ctx);
	}
	/* a --python that does not fit, and one found that does: name it */
	const struct cand *alt = NULL;
	if (w->kind == WANT_PATH && fits && fits[0]) {
		gpuenv_specset_t set;
		struct want any = { .kind = WANT_ANY };
		if (gpuenv_specset_parse(F->ctx, F->a, gpuenv_str(fits), &set) == 0)
			for (size_t i = 1; i < F->n && !alt; i++) {
				bool ok = false;
				if (judge(F, &F->v[i], &any, &set, &ok) == 0 && ok)
					alt = &F->v[i];
			}
		gpuenv_error_clear(F->ctx);
	}
	gpuenv_fail(F->ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "%s", b.data ? b.data : "no Python interpreter found");
	gpuenv_buf_free(&b);
	if (alt)
		gpuenv_hint(F->ctx, "--python %s (%s) fits", tilde(F, alt->py.path), alt->py.version);
	else if (hy)
		gpuenv_hint(F->ctx, "install one (`pyenv install %u.%u`, `apt install python%u.%u`) or name one with --python PATH",
			hx, hy, hx, hy);
	else
		gpuenv_hint(F->ctx, "install one (`pyenv install 3.X`, `apt install python3.X`) or name one with --python PATH");
	return GPUENV_ENOTFOUND;
}

int gpuenv_python_find(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *want, const char *fits,
	gpuenv_python_t *out, size_t *nfound, gpuenv_python_t **found)
{
	struct finder F = { .ctx = ctx, .a = arena };
	struct want w;
	gpuenv_specset_t set = { 0 };
	int r;

	if (nfound)
		*nfound = 0;
	if (found)
		*found = NULL;
	if (out)
		memset(out, 0, sizeof(*out));
	if ((r = parse_want(ctx, want, &w)))
		return r;
	if (fits && fits[0] && (r = gpuenv_specset_parse(ctx, arena, gpuenv_str(fits), &set)))
		return r;
	F.home = gpuenv_ctx_getenv(ctx, "HOME");
	const char *pr = gpuenv_ctx_getenv(ctx, "PYENV_ROOT");
	F.pyenv_root = pr && pr[0] ? pr : gpuenv_arena_printf(arena, "%s/.pyenv", F.home ? F.home : "").ptr;
	F.v = gpuenv_arena_calloc(arena, FIND_MAX, sizeof(*F.v));
	if (!F.v || !F.pyenv_root)
		return gpuenv_oom(ctx, "python list");
	gpuenv_buf_init(&F.buf, ctx, TEXT_MAX + 1);

	if (w.kind == WANT_PATH) {
		/* that file: relative to the current folder, links kept in path */
		char abs[PATH_MAX];
		const char *p = want;
		if (want[0] != '/') {
			char cwd[PATH_MAX];
			if (!getcwd(cwd, sizeof(cwd)) || snprintf(abs, sizeof(abs), "%s/%s", cwd, want) >= (int)sizeof(abs)) {
				r = gpuenv_fail(ctx, -ENAMETOOLONG, want, 0, 0, "path too long");
				goto done;
			}
			gpuenv_fs_tidy_path(abs);
			p = abs;
		}
		struct stat st;
		if (stat(p, &st) != 0) {
			r = gpuenv_fail(ctx, -errno, want, 0, 0, "no such Python interpreter: %s", strerror(errno));
			goto done;
		}
		if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
			r = gpuenv_fail(ctx, -EACCES, want, 0, 0, "not an executable file");
			goto done;
		}
		if ((r = add(&F, p, "--python")))
			goto done;
		if (!F.n || strcmp(F.v[0].py.found_by, "--python") != 0) {
			/* add() refuses what it cannot read or start: say why */
			struct cand c = { 0 };
			char real[PATH_MAX];
			c.py.real = realpath(p, real) ? real : p;
			c.py.path = p;
			r = start_python(&F, &c);
			if (r == 0)
				r = gpuenv_fail(ctx, GPUENV_EFORMAT, want, 0, 0, "not usable as a Python interpreter");
			goto done;
		}
		bool ok;
		if ((r = judge(&F, &F.v[0], &w, &set, &ok)))
			goto done;
		if (ok) {
			if (out)
				*out = F.v[0].py;
			goto list;
		}
		/* it does not fit: say what else there is */
		if ((r = scan_all(&F)))
			goto done;
		r = not_found(&F, &w, fits);
		goto list_err;
	}

	if ((r = scan_all(&F)))
		goto done;
	struct cand *best = NULL;
	for (size_t i = 0; i < F.n; i++) {
		bool ok;
		if ((r = judge(&F, &F.v[i], &w, &set, &ok)))
			goto done;
		if (!ok)
			continue;
		if (w.kind != WANT_ANY) {
			best = &F.v[i];
			break;
		}
		if (!best || cand_newer(&F.v[i], best))
			best = &F.v[i];
	}
	if (!best) {
		r = not_found(&F, &w, fits);
		goto list_err;
	}
	if (out)
		*out = best->py;
list:
	r = 0;
list_err:
	if (nfound && found) {
		gpuenv_python_t *list = gpuenv_arena_calloc(arena, F.n ? F.n : 1, sizeof(*list));
		if (!list) {
			r = gpuenv_oom(ctx, "python list");
			goto done;
		}
		for (size_t i = 0; i < F.n; i++)
			list[i] = F.v[i].py;
		*nfound = F.n;
		*found = list;
	}
done:
	gpuenv_buf_free(&F.buf);
	return r;
}
