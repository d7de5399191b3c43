/* Unit tests for the cache part of the installer: the link modes
 * (lib/install/link.c) on one file system and across two (a small tmpfs
 * mounted for the test where the process may mount one), and the global
 * cache (lib/install/cache.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/cache.h"
#include "gpuenv/core.h"
#include "gpuenv/hash.h"
#include "gpuenv/install.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static char tmp[256];
static int tmpfd = -1;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	snprintf(tmp, sizeof(tmp), "/tmp/gpuenv-test-cache-XXXXXX");
	assert_non_null(mkdtemp(tmp));
	tmpfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(tmpfd >= 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	close(tmpfd);
	snprintf(cmd, sizeof(cmd), "%s/mnt", tmp);
	umount2(cmd, MNT_DETACH); /* a test that stopped half-way */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void write_file(int dirfd, const char *name, const char *data, size_t len, mode_t mode)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* The whole file, malloc'd; its length in *len. */
static char *read_file(int dirfd, const char *name, size_t *len)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	char *p = malloc((size_t)st.st_size + 1);
	assert_non_null(p);
	assert_int_equal(read(fd, p, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return p;
}

static void same_content(int a_dir, const char *a, int b_dir, const char *b)
{
	size_t la, lb;
	char *pa = read_file(a_dir, a, &la), *pb = read_file(b_dir, b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(pa, pb, la);
	free(pa);
	free(pb);
}

static ino_t ino_of(int dirfd, const char *name)
{
	struct stat st;
	assert_int_equal(fstatat(dirfd, name, &st, 0), 0);
	return st.st_ino;
}

static void test_mode_names(void **state)
{
	(void)state;
	const char *names[] = { "auto", "hardlink", "reflink", "copy" };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(gpuenv_link_mode_parse(names[i]), i);
		assert_string_equal(gpuenv_link_mode_name(i), names[i]);
	}
	assert_int_equal(GPUENV_LINK_AUTO, gpuenv_link_mode_parse("auto"));
	assert_int_equal(GPUENV_LINK_COPY, gpuenv_link_mode_parse("copy"));
	assert_int_equal(gpuenv_link_mode_parse("Copy"), -1);
	assert_int_equal(gpuenv_link_mode_parse("symlink"), -1);
	assert_int_equal(gpuenv_link_mode_parse(""), -1);
	assert_int_equal(gpuenv_link_mode_parse(NULL), -1);
	assert_string_equal(gpuenv_link_mode_name(7), "unknown");
	assert_string_equal(gpuenv_link_mode_name(-1), "unknown");
}

static void test_hardlink_and_copy(void **state)
{
	(void)state;
	int used = -5;
	mode_t um = umask(022);
	/* bigger than one copy_file_range / read-write round */
	size_t big = 3u << 20;
	char *data = malloc(big);
	assert_non_null(data);
	for (size_t i = 0; i < big; i++)
		data[i] = (char)(i * 7919 % 251);
	write_file(tmpfd, "src", data, big, 0644);
	write_file(tmpfd, "empty", "", 0, 0644);

	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "src", tmpfd, "hard", 0644,
				 GPUENV_LINK_HARDLINK, &used), 0);
	assert_int_equal(used, GPUENV_LINK_HARDLINK);
	assert_int_equal(ino_of(tmpfd, "hard"), ino_of(tmpfd, "src"));

	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "src", tmpfd, "copy", 0755, GPUENV_LINK_COPY,
				 &used), 0);
	assert_int_equal(used, GPUENV_LINK_COPY);
	assert_int_not_equal(ino_of(tmpfd, "copy"), ino_of(tmpfd, "src"));
	same_content(tmpfd, "src", tmpfd, "copy");
	struct stat st;
	assert_int_equal(fstatat(tmpfd, "copy", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0755);

	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "empty", tmpfd, "empty-copy", 0644,
				 GPUENV_LINK_COPY, NULL), 0);
	assert_int_equal(fstatat(tmpfd, "empty-copy", &st, 0), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	/* auto on one file system: a hardlink */
	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "src", tmpfd, "auto", 0644, GPUENV_LINK_AUTO,
				 &used), 0);
	assert_int_equal(used, GPUENV_LINK_HARDLINK);
	assert_int_equal(ino_of(tmpfd, "auto"), ino_of(tmpfd, "src"));

	/* the destination must not exist, in every mode; it is left as it was */
	write_file(tmpfd, "taken", "mine", 4, 0644);
	for (int m = 0; m < 4; m++) {
		used = -5;
		int r = gpuenv_link_file(&ctx, tmpfd, "src", tmpfd, "taken", 0644, m, &used);
		if (m == GPUENV_LINK_REFLINK && r == -EOPNOTSUPP)
			continue; /* no clone support: refused before the name is looked at */
		assert_int_equal(r, -EEXIST);
		assert_int_equal(used, -1);
		/* named by full paths: the source in the message, the
		 * destination as the error's file (issue 22 item 14) */
		assert_non_null(strstr(ctx.err.msg, "/src here"));
		assert_non_null(strstr(ctx.err.file, "/taken"));
		size_t len;
		char *p = read_file(tmpfd, "taken", &len);
		assert_int_equal(len, 4);
		assert_memory_equal(p, "mine", 4);
		free(p);
	}
	/* a missing source, an unknown mode */
	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "nope", tmpfd, "x", 0644, GPUENV_LINK_COPY,
				 NULL), -ENOENT);
	assert_non_null(strstr(ctx.err.msg, "nope"));
	assert_int_equal(faccessat(tmpfd, "x", F_OK, 0), -1);
	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "src", tmpfd, "x", 0644, 9, NULL),
		GPUENV_EUSAGE);
	/* a folder is not a file to copy */
	assert_int_equal(mkdirat(tmpfd, "dir", 0755), 0);
	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "dir", tmpfd, "x", 0644, GPUENV_LINK_COPY,
				 NULL), -EINVAL);
	assert_int_equal(faccessat(tmpfd, "x", F_OK, 0), -1);
	free(data);
	umask(um);
}

/* A reflink where the file system has them; else the clean refusal. */
static void test_reflink(void **state)
{
	(void)state;
	int used = -5;
	write_file(tmpfd, "src", "clone me\n", 9, 0644);
	int r = gpuenv_link_file(&ctx, tmpfd, "src", tmpfd, "clone", 0644, GPUENV_LINK_REFLINK, &used);
	if (r == 0) {
		assert_int_equal(used, GPUENV_LINK_REFLINK);
		assert_int_not_equal(ino_of(tmpfd, "clone"), ino_of(tmpfd, "src"));
		same_content(tmpfd, "src", tmpfd, "clone");
		return;
	}
	assert_true(r == -EOPNOTSUPP || r == -EINVAL || r == -ENOTTY);
	assert_int_equal(used, -1);
	assert_non_null(strstr(ctx.err.msg, "cannot reflink "));
	assert_non_null(strstr(ctx.err.msg, "/src here"));
	assert_non_null(strstr(ctx.err.file, "/clone"));
	assert_non_null(strstr(ctx.err.hint, "copy"));
	/* nothing is left behind */
	assert_int_equal(faccessat(tmpfd, "clone", F_OK, 0), -1);
}

/* Across two file systems: hardlink is refused with EXDEV; auto falls
 * back (a reflink cannot cross file systems either: a copy). */
static void test_cross_fs(void **state)
{
	(void)state;
	char mnt[300];
	int used = -5;

	snprintf(mnt, sizeof(mnt), "%s/mnt", tmp);
	assert_int_equal(mkdir(mnt, 0755), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=8m") != 0) {
		fprintf(stderr, "test_cross_fs: skipped: cannot mount a tmpfs on %s (%s); the "
				"cross-file-system fallback is not tested here (run as root)\n",
			mnt, strerror(errno));
		skip();
	}
	int mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(mfd >= 0);
	write_file(tmpfd, "src", "across\n", 7, 0644);

	int r = gpuenv_link_file(&ctx, tmpfd, "src", mfd, "hard", 0644, GPUENV_LINK_HARDLINK, &used);
	assert_int_equal(r, -EXDEV);
	assert_int_equal(used, -1);
	assert_non_null(strstr(ctx.err.msg, "cannot hardlink "));
	assert_non_null(strstr(ctx.err.msg, "/src here"));
	assert_non_null(strstr(ctx.err.file, "/hard"));
	assert_non_null(strstr(ctx.err.hint, "different file systems"));
	assert_int_equal(faccessat(mfd, "hard", F_OK, 0), -1);

	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "src", mfd, "auto", 0755, GPUENV_LINK_AUTO,
				 &used), 0);
	assert_true(used == GPUENV_LINK_COPY || used == GPUENV_LINK_REFLINK);
	assert_int_equal(used, GPUENV_LINK_COPY); /* tmpfs has no clones */
	same_content(tmpfd, "src", mfd, "auto");
	struct stat st;
	assert_int_equal(fstatat(mfd, "auto", &st, 0), 0);
	assert_int_equal(st.st_mode & 0111, 0111);

	/* and back: the fallback is decided per file, nothing is remembered */
	assert_int_equal(gpuenv_link_file(&ctx, tmpfd, "src", tmpfd, "auto2", 0644, GPUENV_LINK_AUTO,
				 &used), 0);
	assert_int_equal(used, GPUENV_LINK_HARDLINK);

	/* a full tmpfs: the copy fails with ENOSPC and leaves nothing */
	size_t big = 9u << 20;
	char *data = calloc(1, big);
	assert_non_null(data);
	write_file(tmpfd, "big", data, big, 0644);
	free(data);
	r = gpuenv_link_file(&ctx, tmpfd, "big", mfd, "big", 0644, GPUENV_LINK_AUTO, &used);
	assert_int_equal(r, -ENOSPC);
	assert_non_null(strstr(ctx.err.hint, "space"));
	assert_int_equal(faccessat(mfd, "big", F_OK, 0), -1);

	close(mfd);
	assert_int_equal(umount2(mnt, MNT_DETACH), 0);
}


/* ---- the cache ------------------------------------------------------------- */

struct fake_env {
	const char *names[4], *values[4];
};

static const char *fake_getenv(void *ud, const char *name)
{
	struct fake_env *e = ud;
	for (int i = 0; i < 4 && e->names[i]; i++)
		if (!strcmp(e->names[i], name))
			return e->values[i];
	return NULL;
}

static void test_default_dir(void **state)
{
	(void)state;
	struct fake_env e = { { "GPUENV_CACHE_DIR", "XDG_CACHE_HOME", "HOME" }, { "/c", "/x", "/h" } };
	gpuenv_ctx_t c;
	char out[64];

	gpuenv_ctx_init(&c);
	c.getenv = fake_getenv;
	c.getenv_ud = &e;
	assert_int_equal(gpuenv_cache_default_dir(&c, out, sizeof(out)), 0);
	assert_string_equal(out, "/c");
	e.values[0] = "";
	assert_int_equal(gpuenv_cache_default_dir(&c, out, sizeof(out)), 0);
	assert_string_equal(out, "/x/gpuenv");
	e.values[1] = "relative/xdg"; /* the XDG spec: relative paths are ignored */
	assert_int_equal(gpuenv_cache_default_dir(&c, out, sizeof(out)), 0);
	assert_string_equal(out, "/h/.cache/gpuenv");
	e.values[2] = NULL;
	assert_int_equal(gpuenv_cache_default_dir(&c, out, sizeof(out)), GPUENV_ENOTFOUND);
	assert_non_null(strstr(c.err.msg, "GPUENV_CACHE_DIR"));
	e.values[0] = "/a/very/long/path/that/does/not/fit/in/the/output/buffer/of/sixty-four";
	assert_int_equal(gpuenv_cache_default_dir(&c, out, sizeof(out)), -ENAMETOOLONG);
}

/* A fixture wheel from tests/fixtures/mkwheel.py: its path and sha256. */
static void make_wheel(const char *name, const char *version, char *path, size_t pathsz,
	char sha[65])
{
	char cmd[1024];
	const char *src = getenv("GPUENV_SRC");
	unsigned char d[GPUENV_SHA256_LEN];

	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/fixtures/mkwheel.py' wheel '%s/w' %s %s >/dev/null",
		src ? src : ".", tmp, name, version);
	assert_int_equal(system(cmd), 0);
	snprintf(path, pathsz, "%s/w/%s-%s-py3-none-any.whl", tmp, name, version);
	assert_int_equal(gpuenv_sha256_file(&ctx, path, d), 0);
	gpuenv_hex(d, sizeof(d), sha);
}

struct progress_log {
	size_t calls, last_done, last_n;
	bool unpack_seen, download_seen;
};

static void on_progress(void *arg, const char *phase, size_t done, size_t n, uint64_t bytes,
	uint64_t total)
{
	struct progress_log *p = arg;
	(void)bytes;
	(void)total;
	p->calls++;
	if (!strcmp(phase, "unpack")) {
		p->unpack_seen = true;
		p->last_done = done;
		p->last_n = n;
	} else {
		assert_string_equal(phase, "download");
		p->download_seen = true;
	}
}

#define NWHEELS 10

static void test_cache_get(void **state)
{
	(void)state;
	char cdir[300], paths[NWHEELS][300], shas[NWHEELS][65], name[NWHEELS][64];
	gpuenv_cache_req_t reqs[NWHEELS + 1];
	gpuenv_cache_entry_t out[NWHEELS + 1];
	gpuenv_cache_t *c;
	gpuenv_arena_t arena;
	struct progress_log pl = { 0 };
	gpuenv_cache_progress_t prog = { on_progress, &pl };

	gpuenv_arena_init(&arena, &ctx, 0);
	snprintf(cdir, sizeof(cdir), "%s/cache/deep/er", tmp);
	assert_int_equal(gpuenv_cache_open(&ctx, cdir, &c), 0);
	assert_string_equal(gpuenv_cache_dir(c), cdir);
	for (int i = 0; i < NWHEELS; i++) {
		char pkg[16];
		snprintf(pkg, sizeof(pkg), "pkg%d", i);
		make_wheel(pkg, "1.0", paths[i], sizeof(paths[i]), shas[i]);
		snprintf(name[i], sizeof(name[i]), "%s-1.0-py3-none-any.whl", pkg);
		reqs[i] = (gpuenv_cache_req_t){ .name = name[i], .path = paths[i], .sha256 = shas[i],
			.size = -1 };
	}
	reqs[NWHEELS] = reqs[3]; /* the same wheel twice */
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, reqs, NWHEELS + 1, NULL, &prog, out), 0);
	for (int i = 0; i < NWHEELS; i++) {
		char want[1024];
		snprintf(want, sizeof(want), "%s/trees/%.2s/%s", cdir, shas[i], shas[i]);
		assert_string_equal(out[i].tree_dir, want);
		assert_true(out[i].downloaded && out[i].unpacked && !out[i].repaired);
		assert_string_equal(out[i].tree.wheel_sha256, shas[i]);
		assert_string_equal(out[i].tree.version, "1.0");
		assert_true(out[i].tree.nfiles >= 4);
	}
	assert_string_equal(out[NWHEELS].tree_dir, out[3].tree_dir);
	assert_false(out[NWHEELS].downloaded || out[NWHEELS].unpacked);
	/* local wheels are unpacked from where they lie (and copied beside):
	 * nothing to download, no download progress */
	assert_true(pl.unpack_seen && !pl.download_seen);
	for (int i = 0; i < NWHEELS; i++) {
		char w[2048];
		snprintf(w, sizeof(w), "%s/wheels/%.2s/%s/%s", cdir, shas[i], shas[i], name[i]);
		assert_int_equal(access(w, R_OK), 0);
	}
	assert_int_equal(pl.last_done, NWHEELS);
	assert_int_equal(pl.last_n, NWHEELS);

	/* warm: nothing to do */
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, reqs, NWHEELS, NULL, NULL, out), 0);
	for (int i = 0; i < NWHEELS; i++)
		assert_false(out[i].downloaded || out[i].unpacked || out[i].repaired);

	/* a damaged tree: unpacked again from the cached wheel */
	char f[600];
	snprintf(f, sizeof(f), "%s/pkg2/__init__.py", out[2].tree_dir);
	write_file(AT_FDCWD, f, "changed = True\n", 15, 0644);
	/* a damaged wheel and a damaged tree: fetched again (from the path) */
	snprintf(f, sizeof(f), "%s/wheels/%.2s/%s/%s", cdir, shas[5], shas[5], name[5]);
	write_file(AT_FDCWD, f, "not a zip", 9, 0644);
	snprintf(f, sizeof(f), "%s/" GPUENV_TREE_MANIFEST, out[5].tree_dir);
	assert_int_equal(unlink(f), 0);
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, reqs, NWHEELS, NULL, NULL, out), 0);
	for (int i = 0; i < NWHEELS; i++) {
		bool d = i == 5, u = i == 2 || i == 5;
		assert_int_equal(out[i].downloaded, d);
		assert_int_equal(out[i].unpacked, u);
		assert_int_equal(out[i].repaired, u);
	}
	size_t len;
	snprintf(f, sizeof(f), "%s/pkg2/__init__.py", out[2].tree_dir);
	char *p = read_file(AT_FDCWD, f, &len);
	assert_memory_equal(p, "__version__", 11);
	free(p);

	/* a wheel whose bytes are not a wheel (its hash right): the unpack's
	 * error, naming it, carried back from its thread; nothing left in tmp/ */
	char bad[300], badsha[65];
	unsigned char dg[GPUENV_SHA256_LEN];
	snprintf(bad, sizeof(bad), "%s/w/broken-1.0-py3-none-any.whl", tmp);
	write_file(AT_FDCWD, bad, "PK\x03\x04 truncated", 14, 0644);
	assert_int_equal(gpuenv_sha256_file(&ctx, bad, dg), 0);
	gpuenv_hex(dg, sizeof(dg), badsha);
	reqs[0] = (gpuenv_cache_req_t){ .name = "broken-1.0-py3-none-any.whl", .path = bad,
		.sha256 = badsha, .size = -1 };
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, reqs, NWHEELS, NULL, NULL, out),
		GPUENV_EFORMAT);
	assert_true(strstr(ctx.err.msg, "broken-1.0") || strstr(ctx.err.file, "broken-1.0"));
	snprintf(f, sizeof(f), "%s/tmp", cdir);
	DIR *d = opendir(f);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		assert_true(e->d_name[0] == '.');
	closedir(d);
	snprintf(f, sizeof(f), "%s/trees/%.2s/%s", cdir, badsha, badsha);
	assert_int_equal(access(f, F_OK), -1);

	/* requests refused before any work */
	gpuenv_cache_req_t r1 = { .name = "x/../y.whl", .path = bad, .sha256 = badsha, .size = -1 };
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &r1, 1, NULL, NULL, out), GPUENV_EUSAGE);
	assert_non_null(strstr(ctx.err.msg, "not a wheel file name"));
	r1 = (gpuenv_cache_req_t){ .name = "y-1.0-py3-none-any.whl", .path = bad, .sha256 = "abc", .size = -1 };
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &r1, 1, NULL, NULL, out), GPUENV_EUSAGE);
	assert_non_null(strstr(ctx.err.msg, "64 hex digits"));
	r1 = (gpuenv_cache_req_t){ .name = "y-1.0-py3-none-any.whl", .sha256 = badsha, .size = -1 };
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &r1, 1, NULL, NULL, out), GPUENV_EUSAGE);
	/* an http URL without an index client */
	r1 = (gpuenv_cache_req_t){ .name = "y-1.0-py3-none-any.whl", .url = "https://h/y-1.0-py3-none-any.whl",
		.sha256 = badsha, .size = -1 };
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &r1, 1, NULL, NULL, out), GPUENV_EUSAGE);
	assert_non_null(strstr(ctx.err.msg, "no index client"));
	/* upper-case hex is the same hash */
	for (char *q = shas[1]; *q; q++)
		if (*q >= 'a' && *q <= 'f')
			*q = (char)(*q - 32);
	reqs[1].sha256 = shas[1];
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &reqs[1], 1, NULL, NULL, out), 0);
	assert_false(out[0].downloaded || out[0].unpacked);

	gpuenv_cache_close(c);
	gpuenv_arena_free(&arena);
}

static void test_cache_prune_clean(void **state)
{
	(void)state;
	char cdir[300], path[300], sha[65], f[700];
	gpuenv_cache_t *c, *other;
	gpuenv_cache_entry_t out[1];
	gpuenv_cache_usage_t u;
	gpuenv_arena_t arena;
	uint64_t freed = 7;
	struct stat st;

	gpuenv_arena_init(&arena, &ctx, 0);
	snprintf(cdir, sizeof(cdir), "%s/cache", tmp);
	assert_int_equal(gpuenv_cache_open(&ctx, cdir, &c), 0);
	assert_int_equal(gpuenv_cache_size(c, &ctx, &u), 0);
	assert_true(u.wheels == 0 && u.trees == 0 && u.wheel_bytes == 0 && u.tree_bytes == 0);
	make_wheel("solo", "2.0", path, sizeof(path), sha);
	gpuenv_cache_req_t req = { .name = "solo-2.0-py3-none-any.whl", .path = path, .sha256 = sha, .size = -1 };
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &req, 1, NULL, NULL, out), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(gpuenv_cache_size(c, &ctx, &u), 0);
	assert_int_equal(u.wheels, 1);
	assert_int_equal(u.wheel_bytes, (uint64_t)st.st_size);
	assert_int_equal(u.trees, 1);
	uint64_t tree_bytes = 0;
	for (size_t i = 0; i < out[0].tree.nfiles; i++)
		tree_bytes += out[0].tree.files[i].size;
	snprintf(f, sizeof(f), "%s/" GPUENV_TREE_MANIFEST, out[0].tree_dir);
	struct stat ms;
	assert_int_equal(stat(f, &ms), 0);
	assert_int_equal(u.tree_bytes, tree_bytes + (uint64_t)ms.st_size);

	/* used just now: prune keeps it */
	assert_int_equal(gpuenv_cache_prune(c, &ctx, 3600, false, &freed), 0);
	assert_int_equal(freed, 0);
	/* another user holds the cache: prune and clean refuse without wait */
	assert_int_equal(gpuenv_cache_open(&ctx, cdir, &other), 0);
	assert_int_equal(gpuenv_cache_prune(c, &ctx, 0, false, &freed), GPUENV_ELOCKED);
	assert_int_equal(gpuenv_cache_clean(c, &ctx, false, &freed), GPUENV_ELOCKED);
	assert_non_null(strstr(ctx.err.msg, "in use by another gpuenv"));
	/* ... and the shared lock is still ours: a third user can come, an
	 * exclusive one from outside cannot */
	snprintf(f, sizeof(f), "%s/.lock", cdir);
	int fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	gpuenv_cache_close(other);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1); /* c still holds it shared */
	close(fd);

	/* unused for an hour: pruned, the bytes counted */
	struct timespec old[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
	snprintf(f, sizeof(f), "%s/wheels/%.2s/%s/.used", cdir, sha, sha);
	assert_int_equal(utimensat(AT_FDCWD, f, old, 0), 0);
	snprintf(f, sizeof(f), "%s.used", out[0].tree_dir);
	assert_int_equal(utimensat(AT_FDCWD, f, old, 0), 0);
	assert_int_equal(gpuenv_cache_prune(c, &ctx, 3600, false, &freed), 0);
	assert_int_equal(freed, (uint64_t)st.st_size + u.tree_bytes);
	assert_int_equal(access(out[0].tree_dir, F_OK), -1);
	assert_int_equal(gpuenv_cache_size(c, &ctx, &u), 0);
	assert_true(u.wheels == 0 && u.trees == 0);

	/* clean: everything, the HTTP cache too */
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &req, 1, NULL, NULL, out), 0);
	snprintf(f, sizeof(f), "%s/http-v1", cdir);
	assert_int_equal(mkdir(f, 0755), 0);
	snprintf(f, sizeof(f), "%s/http-v1/entry", cdir);
	write_file(AT_FDCWD, f, "0123456789", 10, 0644);
	assert_int_equal(gpuenv_cache_size(c, &ctx, &u), 0);
	assert_int_equal(u.http_bytes, 10);
	assert_int_equal(gpuenv_cache_clean(c, &ctx, false, &freed), 0);
	assert_int_equal(freed, u.wheel_bytes + u.tree_bytes + 10);
	assert_int_equal(gpuenv_cache_size(c, &ctx, &u), 0);
	assert_true(u.wheels == 0 && u.trees == 0 && u.http_bytes == 0 && u.other_bytes == 0);
	/* and it works after */
	assert_int_equal(gpuenv_cache_get(c, &ctx, &arena, NULL, &req, 1, NULL, NULL, out), 0);
	assert_true(out[0].unpacked);
	gpuenv_cache_close(c);

	/* a folder that cannot be made */
	assert_int_equal(gpuenv_cache_open(&ctx, "/proc/no/cache", &c), -ENOENT);
	assert_non_null(strstr(ctx.err.file, "/proc/no"));
	assert_null(c);
	gpuenv_arena_free(&arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_names),
		cmocka_unit_test_setup_teardown(test_hardlink_and_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reflink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_fs, setup, teardown),
		cmocka_unit_test(test_default_dir),
		cmocka_unit_test_setup_teardown(test_cache_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_prune_clean, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
