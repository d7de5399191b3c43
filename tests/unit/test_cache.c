/* Unit tests for the cache part of the installer: the link modes
 * (lib/install/link.c) on one file system and across two (a small tmpfs
 * mounted for the test where the process may mount one), and the global
 * cache (lib/install/cache.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/core.h"
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
		assert_non_null(strstr(ctx.err.msg, "src"));
		assert_non_null(strstr(ctx.err.msg, "taken"));
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
	assert_non_null(strstr(ctx.err.msg, "reflink src to clone"));
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
	assert_non_null(strstr(ctx.err.msg, "hardlink src to hard"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_names),
		cmocka_unit_test_setup_teardown(test_hardlink_and_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reflink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_fs, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
