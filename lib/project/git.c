/* git dependencies through the `git` program (include/gpuenv/git.h). */
#include "gpuenv/git.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/index.h"
#include "gpuenv/install.h"

extern char **environ;

#define GIT_OUT_MAX ((size_t)16 << 20) /* bytes of one answer (ls-remote of a big repository) */
#define GIT_ARGS 16

bool gpuenv_git_is_commit(const char *s)
{
	size_t n = 0;
	while (s && gpuenv_is_xdigit((unsigned char)s[n]) && !gpuenv_is_upper((unsigned char)s[n]))
		n++;
	return s && n == 40 && !s[n];
}

int gpuenv_git_tree_key(gpuenv_ctx_t *ctx, const char *url, const char *commit, const char *subdirectory,
	char out[65])
{
	gpuenv_sha256_t h;
	unsigned char d[GPUENV_SHA256_LEN];
	gpuenv_sha256_init(&h);
	gpuenv_sha256_field(&h, "kind", "git");
	gpuenv_sha256_field(&h, "url", url);
	gpuenv_sha256_field(&h, "commit", commit);
	gpuenv_sha256_field(&h, "subdirectory", subdirectory ? subdirectory : "");
	int r = gpuenv_sha256_final(&h, d);
	if (r != 0)
		return gpuenv_sha256_fail(ctx, r, "a git tree's key");
	gpuenv_hex(d, sizeof(d), out);
	return 0;
}

/* git's message: its first "fatal:" or "error:" line (what went wrong;
 * the lines after it are advice), else its last non-empty line; at most
 * 300 bytes. */
static const char *git_message(gpuenv_arena_t *arena, const char *text, size_t len)
{
	size_t b = 0, e = 0;
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		size_t k = j;
		while (k > i && (text[k - 1] == '\r' || text[k - 1] == ' '))
			k--;
		if (k > i) {
			b = i;
			e = k;
			if ((k - i > 7 && !memcmp(text + i, "fatal: ", 7)) || (k - i > 7 && !memcmp(text + i, "error: ", 7)))
				break;
		}
		i = j + 1;
	}
	if (e - b > 300)
		e = b + 300;
	return e > b ? gpuenv_arena_strndup(arena, text + b, e - b) : "no message";
}

/* Read fd to its end into out (capped). */
static int slurp(gpuenv_ctx_t *ctx, int fd, gpuenv_buf_t *out)
{
	char chunk[8192];
	for (;;) {
		ssize_t k = read(fd, chunk, sizeof(chunk));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return gpuenv_fail(ctx, -errno, NULL, 0, 0, "reading git's output: %s", strerror(errno));
		if (k == 0)
			return 0;
		if (out && gpuenv_buf_append(out, chunk, (size_t)k) != 0)
			out = NULL; /* past the cap: the rest is read and dropped (sticky) */
	}
}

/* Run git with args (NULL-terminated, without "git"), stdout into out,
 * stderr's message into *msg (arena).  *status: git's exit status.
 * 0, or the error (no git on PATH, a pipe). */
static int git_run(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *const *args, gpuenv_buf_t *out,
	int *status, const char **msg)
{
	char *argv[GIT_ARGS + 2];
	size_t n = 0, nenv = 0;
	int po[2] = { -1, -1 }, pe = -1, devnull = -1, st = 0, r;
	char errpath[] = "/tmp/gpuenv-git-XXXXXX";
	pid_t pid;

	argv[n++] = (char *)"git";
	for (; args[n - 1] && n <= GIT_ARGS; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	while (environ[nenv])
		nenv++;
	char **envp = gpuenv_arena_calloc(arena, nenv + 3, sizeof(*envp));
	if (!envp)
		return gpuenv_oom(ctx, "git's environment");
	size_t k = 0;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], "GIT_TERMINAL_PROMPT=", 20) && strncmp(environ[i], "GIT_ASKPASS=", 12) &&
			strncmp(environ[i], "GIT_DIR=", 8) && strncmp(environ[i], "GIT_WORK_TREE=", 14))
			envp[k++] = environ[i];
	envp[k++] = (char *)"GIT_TERMINAL_PROMPT=0";
	envp[k] = NULL;

	if (pipe(po) != 0)
		return gpuenv_fail(ctx, -errno, NULL, 0, 0, "a pipe for git: %s", strerror(errno));
	fcntl(po[0], F_SETFD, FD_CLOEXEC);
	fcntl(po[1], F_SETFD, FD_CLOEXEC);
	if ((pe = mkstemp(errpath)) < 0 || fcntl(pe, F_SETFD, FD_CLOEXEC) != 0 ||
		(devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		r = -errno;
		close(po[0]), close(po[1]);
		if (pe >= 0) {
			unlink(errpath);
			close(pe);
		}
		return gpuenv_fail(ctx, r, NULL, 0, 0, "a file for git's messages: %s", strerror(-r));
	}
	unlink(errpath);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, devnull, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe, 2);
	r = posix_spawnp(&pid, "git", &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(devnull);
	if (r != 0) {
		close(po[0]), close(pe);
		if (r == ENOENT) {
			gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "the git program is not on PATH, and a git "
				"dependency is fetched with it");
			return gpuenv_hint(ctx, "install git (apt-get install git), or depend on a published version");
		}
		return gpuenv_fail(ctx, -r, NULL, 0, 0, "cannot start git: %s", strerror(r));
	}
	r = slurp(ctx, po[0], out);
	close(po[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	gpuenv_buf_t e;
	gpuenv_buf_init(&e, ctx, 1u << 16);
	if (lseek(pe, 0, SEEK_SET) == 0)
		(void)slurp(ctx, pe, &e);
	close(pe);
	gpuenv_error_clear(ctx);
	*msg = git_message(arena, e.data ? e.data : "", e.len);
	gpuenv_buf_free(&e);
	if (!*msg)
		return gpuenv_oom(ctx, "git's message");
	return r;
}

/* git args, where a failure is an error saying what was done. */
static int git_must(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *what, const char *url,
	const char *const *args, gpuenv_buf_t *out)
{
	int st = 0, r;
	const char *msg = NULL;
	if ((r = git_run(ctx, arena, args, out, &st, &msg)) != 0)
		return r;
	if (st == 0)
		return 0;
	gpuenv_fail(ctx, -EIO, NULL, 0, 0, "git %s of %s failed: %s", what, url, msg);
	return gpuenv_hint(ctx, "check the URL and that this machine can reach it (git ls-remote %s)", url);
}

static const char *cache_root(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *cache_dir)
{
	char def[4096];
	if (!cache_dir) {
		if (gpuenv_index_cache_dir(ctx, def, sizeof(def)) != 0)
			return NULL;
		cache_dir = def;
	}
	const char *s = gpuenv_arena_printf(arena, "%s/git", cache_dir).ptr;
	if (!s)
		gpuenv_oom(ctx, "the git cache's path");
	return s;
}

/* The bare copy of url in the cache, fetched now. */
static int git_db(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *cache_dir, const char *url, const char **out)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	const char *root = cache_root(ctx, arena, cache_dir);
	int r;
	if (!root)
		return ctx->err.code;
	if ((r = gpuenv_sha256(url, strlen(url), d)) != 0)
		return gpuenv_sha256_fail(ctx, r, "a git URL");
	gpuenv_hex(d, sizeof(d), hex);
	const char *db = gpuenv_arena_printf(arena, "%s/db/%.24s", root, hex).ptr;
	if (!db)
		return gpuenv_oom(ctx, "the git cache's path");
	struct stat sb;
	if (stat(db, &sb) != 0) {
		const char *init[] = { "init", "--bare", "-q", db, NULL };
		if ((r = gpuenv_fs_mkdirs(ctx, db, 0755)) != 0 || (r = git_must(ctx, arena, "init", db, init, NULL)) != 0)
			return r;
	}
	const char *fetch[] = { "-C", db, "fetch", "-q", "--force", "--no-tags", "--", url, "+HEAD:refs/gpuenv/HEAD",
		"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", NULL };
	if ((r = git_must(ctx, arena, "fetch", url, fetch, NULL)) != 0) {
		/* a repository without a HEAD (an empty one, or a bare one whose
		 * HEAD names no branch) fetches its branches and tags alone */
		const char *fetch2[] = { "-C", db, "fetch", "-q", "--force", "--no-tags", "--", url,
			"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", NULL };
		gpuenv_error_t first = ctx->err;
		if (ctx->err.code == -ENOMEM || git_must(ctx, arena, "fetch", url, fetch2, NULL) != 0) {
			ctx->err = first;
			return first.code;
		}
	}
	*out = db;
	return 0;
}

int gpuenv_git_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *cache_dir, const char *url,
	const char *ref, const char **commit)
{
	const char *db;
	gpuenv_buf_t out;
	int st = 0, r;
	const char *msg = NULL;

	*commit = NULL;
	if (ref && (!*ref || ref[0] == '-' || strpbrk(ref, " \t\n:^~?*[\\")))
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, NULL, 0, 0, "'%s' is not a git ref", ref);
	if ((r = git_db(ctx, arena, cache_dir, url, &db)) != 0)
		return r;
	const char *spec = gpuenv_arena_printf(arena, "%s^{commit}", ref ? ref : "refs/gpuenv/HEAD").ptr;
	if (!spec)
		return gpuenv_oom(ctx, "a git ref");
	const char *args[] = { "-C", db, "rev-parse", "-q", "--verify", "--end-of-options", spec, NULL };
	gpuenv_buf_init(&out, ctx, 4096);
	r = git_run(ctx, arena, args, &out, &st, &msg);
	if (!r && st == 0 && out.len >= 40 && out.data) {
		char *c = gpuenv_arena_strndup(arena, out.data, 40);
		if (!c)
			r = gpuenv_oom(ctx, "a commit id");
		else if (gpuenv_git_is_commit(c))
			*commit = c;
	}
	gpuenv_buf_free(&out);
	if (r)
		return r;
	if (!*commit) {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "the git ref '%s' is not in %s", ref ? ref : "HEAD", url);
		return gpuenv_hint(ctx, "name a branch, a tag or a commit the repository has (git ls-remote %s)", url);
	}
	return 0;
}

int gpuenv_git_checkout(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *cache_dir, const char *url,
	const char *commit, const char **dir)
{
	const char *root, *db, *tmp, *final;
	struct stat sb;
	int r;

	*dir = NULL;
	if (!gpuenv_git_is_commit(commit))
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, NULL, 0, 0, "'%s' is not a git commit id", commit);
	if (!(root = cache_root(ctx, arena, cache_dir)))
		return ctx->err.code;
	if (!(final = gpuenv_arena_printf(arena, "%s/checkouts/%s", root, commit).ptr) ||
		!(tmp = gpuenv_arena_printf(arena, "%s/checkouts/.%s.%ld", root, commit, (long)getpid()).ptr))
		return gpuenv_oom(ctx, "the git cache's path");
	if (stat(final, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		*dir = final;
		return 0;
	}
	if ((r = git_db(ctx, arena, cache_dir, url, &db)) != 0)
		return r;
	if (stat(tmp, &sb) == 0 && (r = gpuenv_install_remove(ctx, tmp)) != 0)
		return r;
	const char *clone[] = { "-c", "advice.detachedHead=false", "clone", "-q", "--no-checkout", "--shared", "--",
		db, tmp, NULL };
	const char *co[] = { "-C", tmp, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit, NULL };
	if ((r = gpuenv_fs_mkdirs(ctx, gpuenv_arena_printf(arena, "%s/checkouts", root).ptr, 0755)) != 0 ||
		(r = git_must(ctx, arena, "clone", url, clone, NULL)) != 0 ||
		(r = git_must(ctx, arena, "checkout", url, co, NULL)) != 0) {
		gpuenv_error_t keep = ctx->err;
		(void)gpuenv_install_remove(ctx, tmp);
		ctx->err = keep;
		if (r != -ENOMEM && strstr(keep.msg, "checkout"))
			gpuenv_hint(ctx, "the commit %s is not in %s any more (a force-push?): lock again", commit, url);
		return r;
	}
	if (rename(tmp, final) != 0) {
		int e = errno;
		(void)gpuenv_install_remove(ctx, tmp);
		gpuenv_error_clear(ctx);
		if (!(stat(final, &sb) == 0 && S_ISDIR(sb.st_mode))) /* another process made it first: fine */
			return gpuenv_fail(ctx, -e, final, 0, 0, "cannot put the checkout in place: %s", strerror(e));
	}
	*dir = final;
	return 0;
}

int gpuenv_git_ls_remote(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *url, const char *ref,
	const char **commit)
{
	gpuenv_buf_t out;
	int r;

	*commit = NULL;
	if (ref && gpuenv_git_is_commit(ref)) {
		*commit = ref;
		return 0;
	}
	const char *args[] = { "ls-remote", "--", url, ref ? ref : "HEAD", NULL };
	gpuenv_buf_init(&out, ctx, GIT_OUT_MAX);
	if ((r = git_must(ctx, arena, "ls-remote", url, args, &out)) != 0 || gpuenv_buf_failed(&out)) {
		gpuenv_buf_free(&out);
		return r ? r : gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "git ls-remote of %s: more than %zu "
			"bytes", url, GIT_OUT_MAX);
	}
	/* the best of "<sha>\t<ref>" lines: a tag's commit (^{}), the tag,
	 * a branch, the name as given (HEAD, refs/...) */
	static const char *const pre[] = { "refs/tags/", "refs/tags/", "refs/heads/", "" };
	static const char *const post[] = { "^{}", "", "", "" };
	int best = 4;
	const char *q = ref ? ref : "HEAD";
	for (const char *l = out.data ? out.data : ""; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (len > 41 && l[40] == '\t') {
			const char *name = l + 41;
			size_t nlen = len - 41;
			for (int k = 0; k < best; k++) {
				size_t a = strlen(pre[k]), b = strlen(q), c = strlen(post[k]);
				if (nlen == a + b + c && !memcmp(name, pre[k], a) && !memcmp(name + a, q, b) &&
					!memcmp(name + a + b, post[k], c)) {
					best = k;
					*commit = gpuenv_arena_strndup(arena, l, 40);
					if (!*commit)
						r = gpuenv_oom(ctx, "a commit id");
				}
			}
		}
		l += len + (nl ? 1 : 0);
	}
	gpuenv_buf_free(&out);
	return r;
}
