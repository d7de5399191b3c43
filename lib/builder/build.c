/* PEP 517 builds of sdists and source trees (include/gpuenv/build.h,
 * docs/build.md).
 *
 *   <cache>/builds/<key[0:2]>/<key>/<wheel>   a built wheel, and SHA256
 *                                            ("<hex>  <file name>\n")
 *   <cache>/sdists/<sha[0:2]>/<sha>/<sdist>   a fetched sdist (hash checked)
 *   <cache>/build-logs/<name>-<ver>-<key[0:12]>.log   the last build's log
 *   <cache>/tmp/build-XXXXXX/                 one build: hook_runner.py,
 *                                            src/, env/ (the build venv),
 *                                            out/ (renamed into builds/)
 *
 * Every step writes a "== gpuenv: ... ==" line into the log before it runs,
 * so the log reads as the build's story; the backend's own output lands
 * between them. */
#include "gpuenv/build.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build_int.h"
#include "gpuenv/git.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/pep440.h"
#include "gpuenv/project.h"
#include "gpuenv/shim.h"
#include "gpuenv/trace.h"
#include "gpuenv/wheel.h"

/* scripts/embed.py's output (build_embedded.c): lib/builder/hook_runner.py */
struct gpuenv_embedded_file {
	const char *name;
	const unsigned char *data;
	size_t len;
};
extern const struct gpuenv_embedded_file gpuenv_build_embedded_files[];
extern const size_t gpuenv_build_embedded_files_count;

#define RUNNER "hook_runner.py"


static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gpuenv_build_logf(struct gpuenv_bctx *b, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	if (b->logfd < 0)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (write(b->logfd, line, (size_t)n) < 0) {
		/* a log that cannot be written costs the log, not the build */
	}
}

/* The log's last lines (at most GPUENV_BUILD_LOG_TAIL bytes, starting at a
 * line), in arena; NULL when there is no log. */
static const char *log_tail(gpuenv_arena_t *arena, const char *path)
{
	char buf[GPUENV_BUILD_LOG_TAIL + 1];
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return NULL;
	}
	off_t off = st.st_size > GPUENV_BUILD_LOG_TAIL ? st.st_size - GPUENV_BUILD_LOG_TAIL : 0;
	ssize_t n = pread(fd, buf, GPUENV_BUILD_LOG_TAIL, off);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	const char *start = buf;
	if (off > 0 && (start = strchr(buf, '\n')))
		start++;
	else if (!start)
		start = buf;
	return gpuenv_arena_strndup(arena, start, strlen(start));
}

/* ---- running the interpreter ------------------------------------------------ */

/* Run argv (argv[0] a path) with the build's environment, stdin from
 * /dev/null, stdout and stderr into the log, in a process group of its own
 * (a timeout kills the compilers too).  *status: the exit status, -1 when
 * killed by a signal.  0, or an error (spawn failed, timed out). */
static int spawn_wait(struct gpuenv_bctx *b, char *const argv[], int *status)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	pid_t pid;
	int st = 0, r;
	unsigned limit = b->o->timeout_s ? b->o->timeout_s : 3600;
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (devnull < 0)
		return gpuenv_fail(b->ctx, -errno, "/dev/null", 0, 0, "cannot open: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, devnull, 0);
	posix_spawn_file_actions_adddup2(&fa, b->logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, b->logfd, 2);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = posix_spawn(&pid, argv[0], &fa, &at, argv, b->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(devnull);
	if (r != 0)
		return gpuenv_fail(b->ctx, -r, argv[0], 0, 0, "%s: cannot start the interpreter: %s", b->what,
			strerror(r));
	double t0 = mono_s();
	long wait_ns = 1000000; /* 1 ms, doubling to 50 ms */
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			r = -errno;
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			return gpuenv_fail(b->ctx, r, argv[0], 0, 0, "%s: waiting for the build: %s", b->what, strerror(-r));
		}
		if (mono_s() - t0 > limit) {
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			gpuenv_build_logf(b, "\n== gpuenv: killed after %u s (the build's time limit) ==\n", limit);
			gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: the build ran past its limit of %u s and "
				"was stopped", b->what, limit);
			return gpuenv_hint(b->ctx, "the build log: %s", b->log);
		}
		struct timespec ts = { 0, wait_ns };
		nanosleep(&ts, NULL);
		if (wait_ns < 50000000)
			wait_ns *= 2;
	}
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (WIFSIGNALED(st))
		gpuenv_build_logf(b, "\n== gpuenv: the interpreter died of signal %d ==\n", WTERMSIG(st));
	return 0;
}

/* Write a request as JSON into the build folder, run the runner with
 * python on it, read its answer.  A runner that exits without an answer
 * (killed, the interpreter broken) is a build failure. */
int gpuenv_build_run_hook(struct gpuenv_bctx *b, const char *python, const char *hook, const char *req_json,
	gpuenv_hook_result_t *res)
{
	unsigned k = b->seq++;
	const char *rq = gpuenv_arena_printf(b->arena, "%s/request-%u.json", b->tmp, k).ptr;
	const char *rs = gpuenv_arena_printf(b->arena, "%s/result-%u.json", b->tmp, k).ptr;
	gpuenv_buf_t text;
	int status = 0, r;
	if (!rq || !rs)
		return gpuenv_oom(b->ctx, "the build");
	if ((r = gpuenv_fs_write_atomic_ex(b->ctx, rq, req_json, strlen(req_json), 0600, GPUENV_FS_NOSYNC)) != 0)
		return r;
	gpuenv_build_logf(b, "\n== gpuenv: %s (%s %s) ==\n", hook, python, RUNNER);
	char *argv[] = { (char *)python, "-I", (char *)b->runner, (char *)rq, (char *)rs, NULL };
	uint64_t t0 = gpuenv_trace_begin(b->ctx);
	r = spawn_wait(b, argv, &status);
	gpuenv_trace_end(b->ctx, "build", hook, b->req->name, NULL, t0);
	if (r)
		return r;
	gpuenv_buf_init(&text, b->ctx, GPUENV_BUILD_MAX_RESULT);
	r = gpuenv_fs_read(b->ctx, rs, GPUENV_BUILD_MAX_RESULT, &text);
	if (r == -ENOENT) {
		gpuenv_buf_free(&text);
		gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: %s: the interpreter %s exited (status %d) "
			"without an answer", b->what, hook, python, status);
		return gpuenv_hint(b->ctx, "the build log: %s", b->log);
	}
	if (r == 0)
		r = gpuenv_hook_result_parse(b->ctx, b->arena, rs, gpuenv_str_n(text.data ? text.data : "", text.len),
			res);
	gpuenv_buf_free(&text);
	return r;
}

/* A JSON string literal of s (in arena). */
static const char *jq(gpuenv_arena_t *arena, const char *s)
{
	gpuenv_buf_t b;
	const char *out;
	gpuenv_buf_init(&b, arena->ctx, 1u << 20);
	gpuenv_buf_putc(&b, '"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			gpuenv_buf_printf(&b, "\\%c", *c);
		else if (*c < 0x20)
			gpuenv_buf_printf(&b, "\\u%04x", *c);
		else
			gpuenv_buf_putc(&b, (char)*c);
	}
	gpuenv_buf_putc(&b, '"');
	out = b.data ? gpuenv_arena_strndup(arena, b.data, b.len) : NULL;
	gpuenv_buf_free(&b);
	return out;
}

int gpuenv_build_hook_failed(struct gpuenv_bctx *b, const char *hook, const gpuenv_hook_result_t *res)
{
	gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: the build backend's %s failed: %s", b->what, hook,
		res->message ? res->message : "no message");
	return gpuenv_hint(b->ctx, "the build log: %s", b->log);
}

/* ---- the source -------------------------------------------------------- */

static int sha_matches(gpuenv_ctx_t *ctx, const char *path, const char *want, bool *yes)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	int r;
	*yes = false;
	if ((r = gpuenv_sha256_file(ctx, path, d)) != 0)
		return r;
	gpuenv_hex(d, sizeof(d), hex);
	*yes = !strcasecmp(hex, want);
	return 0;
}

/* The sdist as a local file whose sha256 is the lock's. */
static int sdist_local(struct gpuenv_bctx *b, const char **out)
{
	const gpuenv_build_req_t *q = b->req;
	const char *cdir = gpuenv_cache_dir(b->cache);
	bool yes;
	int r;
	if (q->sdist_path) {
		if ((r = sha_matches(b->ctx, q->sdist_path, q->sdist_sha256, &yes)) != 0)
			return r;
		if (!yes) {
			gpuenv_fail(b->ctx, GPUENV_EFORMAT, q->sdist_path, 0, 0, "%s: the file's sha256 is not the "
				"lock's (%s)", b->what, q->sdist_sha256);
			return gpuenv_hint(b->ctx, "the file changed since it was locked: lock again");
		}
		*out = q->sdist_path;
		return 0;
	}
	if (!q->sdist_url)
		return gpuenv_fail(b->ctx, -EINVAL, NULL, 0, 0, "%s: the sdist has no url or path", b->what);
	const char *name = q->sdist_name;
	if (!name || strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, "."))
		name = "sdist.tar.gz";
	const char *dir = gpuenv_arena_printf(b->arena, "%s/sdists/%.2s/%s", cdir, q->sdist_sha256, q->sdist_sha256).ptr;
	const char *path = dir ? gpuenv_arena_printf(b->arena, "%s/%s", dir, name).ptr : NULL;
	const char *tmp = dir ? gpuenv_arena_printf(b->arena, "%s/download.part", b->tmp).ptr : NULL;
	if (!path || !tmp)
		return gpuenv_oom(b->ctx, "the build");
	if (access(path, F_OK) == 0) {
		if (sha_matches(b->ctx, path, q->sdist_sha256, &yes) == 0 && yes) {
			*out = path;
			return 0;
		}
		gpuenv_error_clear(b->ctx);
		unlink(path); /* damaged: fetched again */
	}
	gpuenv_build_logf(b, "== gpuenv: fetching %s ==\n", name);
	gpuenv_download_t dl = { .url = q->sdist_url, .name = name, .fd = -1, .path = tmp, .sha256 = q->sdist_sha256,
		.size = q->sdist_size };
	if ((r = gpuenv_index_download(b->ix, b->ctx, &dl, 1, NULL)) != 0)
		return r;
	if ((r = gpuenv_fs_mkdirs(b->ctx, dir, 0755)) != 0)
		return r;
	if (rename(tmp, path) != 0)
		return gpuenv_fail(b->ctx, -errno, path, 0, 0, "cannot enter the sdist into the cache: %s", strerror(errno));
	*out = path;
	return 0;
}

/* ---- the build environment ---------------------------------------------- */

/* Lock reqs for the build interpreter with gpuenv's resolver and install
 * them into venv with gpuenv's installer. */
static int install_reqs(struct gpuenv_bctx *b, const gpuenv_venv_t *venv, const char *const *reqs, size_t n,
	const char *why)
{
	gpuenv_requirement_t *roots = gpuenv_arena_calloc(b->arena, n ? n : 1, sizeof(*roots));
	gpuenv_project_lock_out_t lo;
	gpuenv_sync_t *s = NULL;
	gpuenv_sync_result_t sr;
	int r;

	if (!roots)
		return gpuenv_oom(b->ctx, "the build");
	gpuenv_build_logf(b, "\n== gpuenv: installing %s:", why);
	for (size_t i = 0; i < n; i++) {
		gpuenv_build_logf(b, " %s", reqs[i]);
		if ((r = gpuenv_requirement_parse(b->ctx, b->arena, gpuenv_str(reqs[i]), &roots[i])) != 0) {
			char msg[sizeof(b->ctx->err.msg)];
			snprintf(msg, sizeof(msg), "%s", b->ctx->err.msg);
			gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: the build backend asked for \"%s\", which is "
				"not a PEP 508 requirement: %s", b->what, reqs[i], msg);
			return gpuenv_hint(b->ctx, "the build log: %s", b->log);
		}
	}
	gpuenv_build_logf(b, " ==\n");
	uint64_t t0 = gpuenv_trace_begin(b->ctx);
	const char *what = gpuenv_arena_printf(b->arena, "the %s of %s", why, b->what).ptr;
	gpuenv_project_reqs_t pr = { .ix = b->ix, .tags = b->o->tags, .python = b->o->python->version,
		.env = b->o->marker_env, .what = what, .roots = roots, .nroots = n };
	r = gpuenv_project_lock_reqs(b->ctx, b->arena, &pr, &lo);
	if (r == GPUENV_ENOSOLUTION) {
		gpuenv_build_logf(b, "%s\n", lo.res.explanation ? lo.res.explanation : "");
		gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: no wheels of the %s fit Python %s: %.300s", b->what, why,
			b->o->python->version, lo.res.explanation ? lo.res.explanation : "no solution");
		gpuenv_hint(b->ctx, "build requirements come as wheels from the project's indexes (--find-links adds "
				   "a folder); the build log: %s", b->log);
		goto out;
	}
	if (r)
		goto out;
	for (size_t i = 0; i < lo.lock.npackages; i++)
		gpuenv_build_logf(b, "   %s %s\n", lo.lock.packages[i].name, lo.lock.packages[i].version);
	gpuenv_sync_opts_t so = { .lock = &lo.lock, .lock_path = what, .lock_dir = b->tmp, .venv = venv,
		.env = b->o->marker_env, .tags = b->o->tags, .link_mode = GPUENV_LINK_AUTO, .wait = true,
		.limits = b->o->limits };
	if ((r = gpuenv_sync_begin(b->ctx, b->arena, &so, &s)) != 0)
		goto out;
	r = gpuenv_sync_commit(s, b->cache, b->ix, NULL, &sr);
out:
	gpuenv_sync_end(s);
	gpuenv_project_lock_out_free(&lo);
	gpuenv_trace_end(b->ctx, "build", "build-env", b->req->name, why, t0);
	return r;
}

/* ---- the wheel cache of builds --------------------------------------------- */

/* A cached build of key: its SHA256 file names the wheel. */
static bool cached(struct gpuenv_bctx *b, const char *key, gpuenv_build_result_t *res)
{
	const char *dir = gpuenv_arena_printf(b->arena, "%s/builds/%.2s/%s", gpuenv_cache_dir(b->cache), key, key).ptr;
	const char *f = dir ? gpuenv_arena_printf(b->arena, "%s/SHA256", dir).ptr : NULL;
	gpuenv_buf_t t;
	bool ok = false;
	if (!f)
		return false;
	gpuenv_buf_init(&t, b->ctx, 4096);
	if (gpuenv_fs_read(b->ctx, f, 4096, &t) == 0 && t.data && t.len > 68 && t.data[64] == ' ' &&
		t.data[65] == ' ' && t.data[t.len - 1] == '\n') {
		const char *name = gpuenv_arena_strndup(b->arena, t.data + 66, t.len - 67);
		const char *w = name ? gpuenv_arena_printf(b->arena, "%s/%s", dir, name).ptr : NULL;
		if (w && !strchr(name, '/') && access(w, R_OK) == 0) {
			res->wheel = w;
			res->wheel_name = name;
			res->sha256 = gpuenv_arena_strndup(b->arena, t.data, 64);
			ok = res->sha256 != NULL;
		}
	}
	gpuenv_error_clear(b->ctx);
	gpuenv_buf_free(&t);
	return ok;
}

/* The wheel in out/ checked and entered into the cache. */
static int enter(struct gpuenv_bctx *b, const char *key, const char *outdir, const char *name, gpuenv_build_result_t *res)
{
	gpuenv_wheel_name_t wn;
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1], norm[256];
	const char *q = b->req->version;
	int r;
	if (strchr(name, '/') || gpuenv_wheel_name_parse(b->ctx, b->arena, gpuenv_str(name), 0, &wn) != 0) {
		gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: the build backend made \"%s\", not a wheel file name",
			b->what, name);
		return gpuenv_hint(b->ctx, "the build log: %s", b->log);
	}
	gpuenv_name_normalize_to(wn.normalized, norm, sizeof(norm));
	const char *wver = gpuenv_arena_strndup(b->arena, wn.version_text.ptr, wn.version_text.len);
	gpuenv_version_t va, vb;
	bool same_ver = !q || (wver && gpuenv_version_parse(b->ctx, b->arena, gpuenv_str(wver), &va) == 0 &&
				      gpuenv_version_parse(b->ctx, b->arena, gpuenv_str(q), &vb) == 0 &&
				      gpuenv_version_cmp(&va, &vb) == 0);
	gpuenv_error_clear(b->ctx);
	if (strcmp(norm, b->req->name) != 0 || !same_ver) {
		gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: the build made %s, a wheel of another %s", b->what,
			name, strcmp(norm, b->req->name) ? "project" : "version");
		return gpuenv_hint(b->ctx, "the lock says %s %s: the source is not what was locked; lock again",
			b->req->name, q ? q : "");
	}
	const char *w = gpuenv_arena_printf(b->arena, "%s/%s", outdir, name).ptr;
	if (!w)
		return gpuenv_oom(b->ctx, "the build");
	if ((r = gpuenv_sha256_file(b->ctx, w, d)) != 0)
		return r;
	gpuenv_hex(d, sizeof(d), hex);
	gpuenv_str_t line = gpuenv_arena_printf(b->arena, "%s  %s\n", hex, name);
	const char *sf = gpuenv_arena_printf(b->arena, "%s/SHA256", outdir).ptr;
	const char *top = gpuenv_arena_printf(b->arena, "%s/builds/%.2s", gpuenv_cache_dir(b->cache), key).ptr;
	const char *dest = top ? gpuenv_arena_printf(b->arena, "%s/%s", top, key).ptr : NULL;
	if (!line.ptr || !sf || !dest)
		return gpuenv_oom(b->ctx, "the build");
	if ((r = gpuenv_fs_write_atomic_ex(b->ctx, sf, line.ptr, line.len, 0644, GPUENV_FS_NOSYNC)) != 0 ||
		(r = gpuenv_fs_mkdirs(b->ctx, top, 0755)) != 0)
		return r;
	if (rename(outdir, dest) != 0) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			return gpuenv_fail(b->ctx, -errno, dest, 0, 0, "cannot enter the build into the cache: %s",
				strerror(errno));
		/* another gpuenv built the same at the same time: its copy is used */
		gpuenv_build_result_t other = { 0 };
		if (!cached(b, key, &other))
			return gpuenv_fail(b->ctx, -EEXIST, dest, 0, 0, "a damaged build is in the way: remove it");
		*res = other;
		return 0;
	}
	res->wheel = gpuenv_arena_printf(b->arena, "%s/%s", dest, name).ptr;
	res->wheel_name = gpuenv_arena_strndup(b->arena, name, strlen(name));
	res->sha256 = gpuenv_arena_strndup(b->arena, hex, strlen(hex));
	return res->wheel && res->wheel_name && res->sha256 ? 0 : gpuenv_oom(b->ctx, "the build");
}

/* ---- the build ------------------------------------------------------------- */

const char *gpuenv_build_hook_request(struct gpuenv_bctx *b, const char *hook, const char *src,
	const gpuenv_build_system_t *bs, const char *wheel_dir, const char *metadata_dir)
{
	gpuenv_buf_t t;
	const char *out;
	gpuenv_buf_init(&t, b->ctx, 1u << 20);
	gpuenv_buf_printf(&t, "{\"hook\": \"%s\", \"source_dir\": %s, \"backend\": %s, \"backend_path\": [", hook,
		jq(b->arena, src), jq(b->arena, bs->backend));
	for (size_t i = 0; i < bs->nbackend_path; i++)
		gpuenv_buf_printf(&t, "%s%s", i ? ", " : "", jq(b->arena, bs->backend_path[i]));
	gpuenv_buf_printf(&t, "], \"config_settings\": null");
	if (wheel_dir)
		gpuenv_buf_printf(&t, ", \"wheel_directory\": %s", jq(b->arena, wheel_dir));
	if (metadata_dir)
		gpuenv_buf_printf(&t, ", \"metadata_directory\": %s", jq(b->arena, metadata_dir));
	gpuenv_buf_puts(&t, "}\n");
	out = t.data ? gpuenv_arena_strndup(b->arena, t.data, t.len) : NULL;
	gpuenv_buf_free(&t);
	return out;
}

static int write_runner(struct gpuenv_bctx *b)
{
	for (size_t i = 0; i < gpuenv_build_embedded_files_count; i++)
		if (!strcmp(gpuenv_build_embedded_files[i].name, RUNNER)) {
			if (!(b->runner = gpuenv_arena_printf(b->arena, "%s/%s", b->tmp, RUNNER).ptr))
				return gpuenv_oom(b->ctx, "the build");
			return gpuenv_fs_write_atomic_ex(b->ctx, b->runner, gpuenv_build_embedded_files[i].data,
				gpuenv_build_embedded_files[i].len, 0644, GPUENV_FS_NOSYNC);
		}
	return gpuenv_fail(b->ctx, -ENOENT, RUNNER, 0, 0, "the hook runner is not in this gpuenv");
}

static int open_log(struct gpuenv_bctx *b, const char *key)
{
	const char *dir = b->o->log_dir ? b->o->log_dir
		: gpuenv_arena_printf(b->arena, "%s/build-logs", gpuenv_cache_dir(b->cache)).ptr;
	const gpuenv_build_req_t *q = b->req;
	int r;
	if (!dir)
		return gpuenv_oom(b->ctx, "the build");
	if ((r = gpuenv_fs_mkdirs(b->ctx, dir, 0755)) != 0)
		return r;
	if (!(b->log = gpuenv_arena_printf(b->arena, "%s/%s-%s-%s%.12s.log", dir, q->name,
		      q->version ? q->version : q->editable ? "editable" : "dir", b->log_kind ? b->log_kind : "", key).ptr))
		return gpuenv_oom(b->ctx, "the build");
	if ((b->logfd = open(b->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return gpuenv_fail(b->ctx, -errno, b->log, 0, 0, "cannot write the build log: %s", strerror(errno));
	return 0;
}

/* --profile (ctx->trace set): the compiler shims in the build's folder,
 * first on its PATH, their two variables set, so every cc, nvcc, ld call
 * of the build is a span (gpuenv/trace.h).  b->o becomes a copy that says
 * so; the key was made from the caller's options. */
static int trace_shims(struct gpuenv_bctx *b)
{
	const char *dir;
	int r;
	if (!b->ctx->trace)
		return 0;
	if (!(dir = gpuenv_arena_printf(b->arena, "%s/shims", b->tmp).ptr))
		return gpuenv_oom(b->ctx, "the build");
	if ((r = gpuenv_shim_setup(b->ctx, dir, NULL, &b->shims)) != 0)
		return r;
	b->have_shims = true;
	b->traced = *b->o;
	const char **env = gpuenv_arena_calloc(b->arena, b->o->nenv + b->shims.nenv, sizeof(*env));
	if (!env)
		return gpuenv_oom(b->ctx, "the build");
	for (size_t i = 0; i < b->o->nenv; i++)
		env[i] = b->o->env[i];
	for (size_t i = 0; i < b->shims.nenv; i++)
		if (!(env[b->o->nenv + i] = gpuenv_arena_printf(b->arena, "%s=%s", b->shims.env[i].name,
			      b->shims.env[i].value).ptr))
			return gpuenv_oom(b->ctx, "the build");
	b->traced.env = env;
	b->traced.nenv = b->o->nenv + b->shims.nenv;
	b->traced.path_prefix = b->o->path_prefix && *b->o->path_prefix
		? gpuenv_arena_printf(b->arena, "%s:%s", b->shims.path_prefix, b->o->path_prefix).ptr
		: b->shims.path_prefix;
	if (!b->traced.path_prefix)
		return gpuenv_oom(b->ctx, "the build");
	gpuenv_build_logf(b, "== gpuenv: --profile: compiler shims first on PATH (%s) ==\n", b->shims.path_prefix);
	b->o = &b->traced;
	return 0;
}

int gpuenv_build_prepare(struct gpuenv_bctx *b, const char *key, const char **srcp, gpuenv_build_system_t *bs,
	const char **pyp)
{
	const gpuenv_build_opts_t *o = b->o;
	const gpuenv_build_req_t *q = b->req;
	const bool against = gpuenv_build_against(o, q->name);
	const char *base_py = o->python->real ? o->python->real : o->python->path;
	const char *src = q->directory, *py = base_py;
	gpuenv_hook_result_t hr;
	gpuenv_venv_t *venv = &b->venv;
	gpuenv_buf_t text;
	int r;

	gpuenv_build_logf(b, "== gpuenv: %s %s (%s%s), key %s ==\n", b->doing ? b->doing : "building", b->what, q->editable ? "editable, " : "",
		against ? "no isolation" : "isolated", key);
	if ((r = write_runner(b)) != 0)
		return r;
	if ((r = gpuenv_build_envp(b->arena, o, NULL, NULL, &b->envp)) != 0)
		return gpuenv_oom(b->ctx, "the build");
	if (!src) { /* an sdist: fetched and unpacked */
		const char *sd = NULL, *dest = gpuenv_arena_printf(b->arena, "%s/src", b->tmp).ptr, *rq;
		if ((r = sdist_local(b, &sd)) != 0)
			return r;
		if (!dest || !(rq = gpuenv_arena_printf(b->arena, "{\"hook\": \"_unpack\", \"sdist\": %s, \"dest\": %s}\n",
				       jq(b->arena, sd), jq(b->arena, dest)).ptr))
			return gpuenv_oom(b->ctx, "the build");
		if ((r = gpuenv_build_run_hook(b, base_py, "unpack", rq, &hr)) != 0)
			return r;
		if (!hr.ok || !hr.str) {
			gpuenv_fail(b->ctx, GPUENV_EBUILD, sd, 0, 0, "%s: the sdist cannot be unpacked: %s", b->what,
				hr.message ? hr.message : "no folder");
			return gpuenv_hint(b->ctx, "the build log: %s", b->log);
		}
		src = hr.str;
	}
	/* [build-system] */
	const char *pp = gpuenv_arena_printf(b->arena, "%s/pyproject.toml", src).ptr;
	if (!pp)
		return gpuenv_oom(b->ctx, "the build");
	gpuenv_buf_init(&text, b->ctx, GPUENV_BUILD_MAX_PYPROJECT);
	r = gpuenv_fs_read(b->ctx, pp, GPUENV_BUILD_MAX_PYPROJECT, &text);
	if (r == -ENOENT) {
		gpuenv_error_clear(b->ctx);
		r = 0;
	}
	if (!r)
		r = gpuenv_build_system_parse(b->ctx, b->arena, pp, gpuenv_str_n(text.data ? text.data : "", text.len), bs);
	gpuenv_buf_free(&text);
	if (r)
		return r;
	gpuenv_build_logf(b, "== gpuenv: backend %s%s ==\n", bs->backend, bs->legacy ? " (the PEP 517 default)" : "");
	/* the interpreter: a fresh venv with the requirements, or the target's */
	if (against) {
		py = o->against->scheme.python;
		if ((r = gpuenv_build_envp(b->arena, o, o->against->bin, o->against->root, &b->envp)) != 0)
			return gpuenv_oom(b->ctx, "the build");
	} else {
		const char *vd = gpuenv_arena_printf(b->arena, "%s/env", b->tmp).ptr;
		if (!vd)
			return gpuenv_oom(b->ctx, "the build");
		if ((r = gpuenv_venv_create(b->ctx, b->arena, vd, o->python, 0, venv)) != 0)
			return r;
		py = venv->scheme.python;
		if ((r = gpuenv_build_envp(b->arena, o, venv->bin, venv->root, &b->envp)) != 0)
			return gpuenv_oom(b->ctx, "the build");
		if (bs->nrequires && (r = install_reqs(b, venv, bs->requires, bs->nrequires, "build requirements")) != 0)
			return r;
	}
	/* the backend's extra requirements */
	const char *gr = q->editable ? "get_requires_for_build_editable" : "get_requires_for_build_wheel";
	const char *rq = gpuenv_build_hook_request(b, gr, src, bs, NULL, NULL);
	if (!rq)
		return gpuenv_oom(b->ctx, "the build");
	if ((r = gpuenv_build_run_hook(b, py, gr, rq, &hr)) != 0)
		return r;
	if (!hr.ok && strcmp(hr.kind, "missing") != 0)
		return gpuenv_build_hook_failed(b, gr, &hr);
	if (hr.ok && hr.nlist) {
		if (against) {
			gpuenv_build_logf(b, "== gpuenv: no isolation: the backend's requirements are the environment's to have:");
			for (size_t i = 0; i < hr.nlist; i++)
				gpuenv_build_logf(b, " %s", hr.list[i]);
			gpuenv_build_logf(b, " ==\n");
		} else {
			const char **all = gpuenv_arena_calloc(b->arena, bs->nrequires + hr.nlist, sizeof(*all));
			if (!all)
				return gpuenv_oom(b->ctx, "the build");
			memcpy(all, bs->requires, bs->nrequires * sizeof(*all));
			memcpy(all + bs->nrequires, hr.list, hr.nlist * sizeof(*all));
			if ((r = install_reqs(b, venv, all, bs->nrequires + hr.nlist, "backend's requirements")) != 0)
				return r;
		}
	}
	*srcp = src;
	*pyp = py;
	return 0;
}

static int do_build(struct gpuenv_bctx *b, const char *key, void *arg)
{
	gpuenv_build_result_t *res = arg;
	const gpuenv_build_req_t *q = b->req;
	const char *src, *py, *rq;
	gpuenv_build_system_t bs;
	gpuenv_hook_result_t hr;
	int r;

	res->isolated = !gpuenv_build_against(b->o, q->name);
	if ((r = gpuenv_build_prepare(b, key, &src, &bs, &py)) != 0)
		return r;
	/* the wheel */
	const char *outdir = gpuenv_arena_printf(b->arena, "%s/out", b->tmp).ptr;
	if (!outdir)
		return gpuenv_oom(b->ctx, "the build");
	if (mkdir(outdir, 0755) != 0)
		return gpuenv_fail(b->ctx, -errno, outdir, 0, 0, "cannot create the folder: %s", strerror(errno));
	const char *bh = q->editable ? "build_editable" : "build_wheel";
	if (!(rq = gpuenv_build_hook_request(b, bh, src, &bs, outdir, NULL)))
		return gpuenv_oom(b->ctx, "the build");
	if ((r = gpuenv_build_run_hook(b, py, bh, rq, &hr)) != 0)
		return r;
	if (!hr.ok && q->editable && !strcmp(hr.kind, "missing")) {
		gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: the build backend %s cannot make editable installs "
			"(it has no PEP 660 build_editable hook)", b->what, bs.backend);
		return gpuenv_hint(b->ctx, "use a backend version that has it (setuptools >= 64), or sync with "
				   "--no-install-project");
	}
	if (!hr.ok)
		return gpuenv_build_hook_failed(b, bh, &hr);
	if (!hr.str) {
		gpuenv_fail(b->ctx, GPUENV_EBUILD, NULL, 0, 0, "%s: %s returned no file name", b->what, bh);
		return gpuenv_hint(b->ctx, "the build log: %s", b->log);
	}
	gpuenv_build_logf(b, "== gpuenv: built %s ==\n", hr.str);
	return enter(b, key, outdir, hr.str, res);
}

int gpuenv_build_session(struct gpuenv_bctx *b, const char *key,
	int (*work)(struct gpuenv_bctx *b, const char *key, void *arg), void *arg)
{
	gpuenv_ctx_t *ctx = b->ctx;
	gpuenv_arena_t *arena = b->arena;
	int r;
	const char *tmpl = gpuenv_arena_printf(arena, "%s/tmp/build-XXXXXX", gpuenv_cache_dir(b->cache)).ptr;
	const char *tdir = tmpl ? gpuenv_arena_printf(arena, "%s/tmp", gpuenv_cache_dir(b->cache)).ptr : NULL;
	if (!tmpl || !tdir)
		return gpuenv_oom(ctx, "the build");
	if ((r = gpuenv_fs_mkdirs(ctx, tdir, 0755)) != 0)
		return r;
	gpuenv_cache_tmp_ready(b->cache); /* a dead build's leftovers go before ours arrive */
	if (!(b->tmp = mkdtemp((char *)tmpl)))
		return gpuenv_fail(ctx, -errno, tmpl, 0, 0, "cannot create the build folder: %s", strerror(errno));
	if ((r = open_log(b, key)) == 0 && (r = trace_shims(b)) == 0)
		r = work(b, key, arg);
	if (b->have_shims) {
		gpuenv_error_t keep = ctx->err;
		size_t skipped = 0;
		if (gpuenv_shim_collect(ctx, &b->shims, b->req->name, &skipped) != 0)
			gpuenv_log(ctx, GPUENV_LOG_WARN, "%s: the compiler calls were not all recorded: %s", b->what,
				ctx->err.msg);
		ctx->err = keep;
	}
	if (r == GPUENV_EBUILD)
		b->log_tail = log_tail(arena, b->log);
	if (b->logfd >= 0)
		close(b->logfd);
	b->logfd = -1;
	/* the build folder goes in every case (the log stays) */
	gpuenv_error_t keep = ctx->err;
	if (gpuenv_install_remove(ctx, b->tmp) != 0 && !r)
		gpuenv_log(ctx, GPUENV_LOG_WARN, "%s", ctx->err.msg);
	ctx->err = keep;
	return r;
}

int gpuenv_build_wheel(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_build_opts_t *o,
	gpuenv_cache_t *cache, gpuenv_index_t *ix, const gpuenv_build_req_t *req, gpuenv_build_result_t *res)
{
	struct gpuenv_bctx b = { .ctx = ctx, .arena = arena, .o = o, .req = req, .cache = cache, .ix = ix, .logfd = -1 };
	const char *key;
	double t0 = mono_s();
	int r;

	memset(res, 0, sizeof(*res));
	if (!o->python || !o->python->version)
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "%s: a build needs the interpreter it builds for",
			req->name ? req->name : "?");
	if (!req->name || (!req->directory && !req->sdist_sha256))
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "a build needs a name and an sdist or a directory");
	uint64_t tr0 = gpuenv_trace_begin(ctx);
	if (!(b.what = gpuenv_arena_printf(arena, "%s %s", req->name, req->version ? req->version
		      : req->directory ? req->directory : "").ptr))
		return gpuenv_oom(ctx, "the build");
	if ((r = gpuenv_build_key(ctx, arena, o, req, &key)) != 0)
		return r;
	res->key = key;
	res->isolated = !gpuenv_build_against(o, req->name);
	if (cached(&b, key, res)) {
		res->cached = true;
		res->secs = mono_s() - t0;
		gpuenv_trace_end(ctx, "build", "build", req->name, "cached", tr0);
		return 0;
	}
	r = gpuenv_build_session(&b, key, do_build, res);
	res->log = b.log;
	res->log_tail = b.log_tail;
	res->secs = mono_s() - t0;
	gpuenv_trace_end(ctx, "build", "build", req->name, r ? "failed" : res->wheel_name, tr0);
	return r;
}

/* ---- the builder: sync's hook ------------------------------------------------ */

struct gpuenv_builder {
	gpuenv_ctx_t *ctx;
	gpuenv_build_opts_t o;
	gpuenv_arena_t arena; /* the results */
	gpuenv_build_result_t *res;
	gpuenv_build_req_t *reqs;
	size_t n, cap;
	gpuenv_build_result_t failure;
	gpuenv_build_req_t failure_req;
	bool failed;
};

int gpuenv_builder_new(gpuenv_ctx_t *ctx, const gpuenv_build_opts_t *o, gpuenv_builder_t **out)
{
	gpuenv_builder_t *b = gpuenv_calloc(ctx, 1, sizeof(*b));
	*out = NULL;
	if (!b)
		return gpuenv_oom(ctx, "the builder");
	b->ctx = ctx;
	b->o = *o;
	gpuenv_arena_init(&b->arena, ctx, 0);
	*out = b;
	return 0;
}

void gpuenv_builder_free(gpuenv_builder_t *b)
{
	if (!b)
		return;
	gpuenv_arena_free(&b->arena);
	gpuenv_free(b->ctx, b);
}

size_t gpuenv_builder_results(const gpuenv_builder_t *b, const gpuenv_build_result_t **out,
	const gpuenv_build_req_t **reqs)
{
	*out = b->res;
	if (reqs)
		*reqs = b->reqs;
	return b->n;
}

const gpuenv_build_result_t *gpuenv_builder_failure(const gpuenv_builder_t *b, const gpuenv_build_req_t **req)
{
	if (req)
		*req = b->failed ? &b->failure_req : NULL;
	return b->failed ? &b->failure : NULL;
}

/* What src builds; a vcs entry is named by its commit (gpuenv_git_tree_key,
 * in key) until hook_build checks it out. */
static int req_of(gpuenv_ctx_t *ctx, const gpuenv_sync_source_t *src, gpuenv_build_req_t *q, char key[65])
{
	const gpuenv_lock_package_t *p = src->pkg;
	memset(q, 0, sizeof(*q));
	q->name = p->name;
	q->version = p->version;
	if (src->directory) {
		q->directory = src->directory;
		q->editable = src->editable;
	} else if (!src->sdist && !p->sdist && p->vcs) {
		const gpuenv_lock_vcs_t *vc = p->vcs;
		if (!vc->type || strcmp(vc->type, "git") != 0 || !vc->url) {
			gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "%s: a %s checkout%s; gpuenv checks out git "
				"repositories by URL", p->name, vc->type ? vc->type : "VCS", vc->url ? "" : " by path");
			return gpuenv_hint(ctx, "build a wheel of it, or lock it from a git URL");
		}
		if (gpuenv_git_tree_key(ctx, vc->url, vc->commit_id, p->subdirectory, key) != 0)
			return ctx->err.code;
		q->sdist_sha256 = key; /* the tree at the commit: the build's key */
	} else {
		const gpuenv_lock_file_t *f = src->sdist ? src->sdist : p->sdist;
		q->sdist_url = f->url;
		q->sdist_path = src->sdist_path;
		q->sdist_name = f->name;
		q->sdist_sha256 = f->sha256;
		q->sdist_size = f->size;
	}
	return 0;
}

static int hook_key(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_sync_source_t *src,
	const char **key)
{
	gpuenv_builder_t *b = self;
	gpuenv_build_req_t q;
	char vkey[65];
	if (req_of(ctx, src, &q, vkey) != 0)
		return ctx->err.code;
	return gpuenv_build_key(ctx, arena, &b->o, &q, key);
}

static int hook_build(void *self, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_cache_t *cache, gpuenv_index_t *ix,
	const gpuenv_sync_source_t *src, gpuenv_sync_built_t *out)
{
	gpuenv_builder_t *b = self;
	gpuenv_build_req_t q;
	gpuenv_build_result_t res;
	char vkey[65];
	int r;
	if ((r = req_of(ctx, src, &q, vkey)) != 0)
		return r;
	if (!q.directory && src->pkg->vcs && !src->sdist && !src->pkg->sdist) {
		/* a vcs entry: its commit checked out into the cache, built as a
		 * folder (the key stays its commit's) */
		const gpuenv_lock_vcs_t *vc = src->pkg->vcs;
		const char *dir;
		if ((r = gpuenv_git_checkout(ctx, &b->arena, gpuenv_cache_dir(cache), vc->url, vc->commit_id, &dir)) != 0)
			return gpuenv_fail_prefix(ctx, r, NULL, 0, 0, "%s", src->pkg->name);
		if (src->pkg->subdirectory && !(dir = gpuenv_arena_printf(&b->arena, "%s/%s", dir,
							src->pkg->subdirectory).ptr))
			return gpuenv_oom(ctx, "the builder");
		if (!(q.sdist_sha256 = gpuenv_arena_strndup(&b->arena, vkey, strlen(vkey))))
			return gpuenv_oom(ctx, "the builder");
		q.directory = dir;
	}
	r = gpuenv_build_wheel(ctx, &b->arena, &b->o, cache, ix, &q, &res);
	if (r) {
		b->failed = true;
		b->failure = res;
		b->failure_req = q;
		return r;
	}
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 8;
		gpuenv_build_result_t *nr = gpuenv_arena_calloc(&b->arena, nc, sizeof(*nr));
		gpuenv_build_req_t *nq = gpuenv_arena_calloc(&b->arena, nc, sizeof(*nq));
		if (!nr || !nq)
			return gpuenv_oom(ctx, "the builder");
		if (b->n) {
			memcpy(nr, b->res, b->n * sizeof(*nr));
			memcpy(nq, b->reqs, b->n * sizeof(*nq));
		}
		b->res = nr;
		b->reqs = nq;
		b->cap = nc;
	}
	b->res[b->n] = res;
	b->reqs[b->n++] = q;
	out->wheel = res.wheel;
	out->wheel_name = res.wheel_name;
	out->sha256 = res.sha256;
	out->key = res.key;
	(void)arena;
	return 0;
}

static bool hook_deferred(void *self, const char *name)
{
	const gpuenv_builder_t *b = self;
	return gpuenv_build_against(&b->o, name);
}

void gpuenv_builder_sync_hook(gpuenv_builder_t *b, gpuenv_sync_builder_t *out)
{
	out->self = b;
	out->key = hook_key;
	out->build = hook_build;
	out->deferred = hook_deferred;
}
