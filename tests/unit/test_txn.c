/* Unit tests for lib/install/txn.c: installs, removals through RECORD,
 * upgrades, namespace folders, replaced files, refusals, the journal's
 * reader, an injected error rolled back, a crash before every operation
 * (forked children) recovered to exactly the new set, the venv lock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/env.h"
#include "gpuenv/fs.h"
#include "gpuenv/txn.h"

#include "testutil.h"

/* ---- a venv on disk ---------------------------------------------------- */

struct venv {
	char root[256], site[320], bin[320], inc[320];
	gpuenv_scheme_t s;
	gpuenv_ctx_t ctx;
	const char *env[8]; /* NAME=VALUE pairs the context's getenv sees */
};

static const char *fake_getenv(void *ud, const char *name)
{
	struct venv *v = ud;
	size_t n = strlen(name);
	for (size_t i = 0; i < 8 && v->env[i]; i++)
		if (!strncmp(v->env[i], name, n) && v->env[i][n] == '=')
			return v->env[i] + n + 1;
	return NULL;
}

static void mkdirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

static void put(const char *path, const char *content)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	mkdirs(dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static bool exists(const char *fmt, const char *a, const char *b)
{
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), fmt, a, b);
	return lstat(p, &st) == 0;
}

static void rmrf(const char *path)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static void venv_make(struct venv *v)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->root, sizeof(v->root), "/tmp/gpuenv-test-txn-XXXXXX");
	assert_non_null(mkdtemp(v->root));
	snprintf(v->site, sizeof(v->site), "%s/lib/python3.12/site-packages", v->root);
	snprintf(v->bin, sizeof(v->bin), "%s/bin", v->root);
	snprintf(v->inc, sizeof(v->inc), "%s/include/site/python3.12", v->root);
	mkdirs(v->site);
	mkdirs(v->bin);
}

static void log_stderr(void *ud, int level, const char *msg)
{
	(void)ud;
	fprintf(stderr, "[%d] %s\n", level, msg);
}

static void venv_init(struct venv *v)
{
	venv_make(v);
	v->s.prefix = v->root;
	v->s.dirs[GPUENV_SCHEME_PURELIB] = v->site;
	v->s.dirs[GPUENV_SCHEME_PLATLIB] = v->site;
	v->s.dirs[GPUENV_SCHEME_SCRIPTS] = v->bin;
	v->s.dirs[GPUENV_SCHEME_DATA] = v->root;
	v->s.dirs[GPUENV_SCHEME_HEADERS] = v->inc;
	v->s.python_xy = "3.12";
	gpuenv_ctx_init(&v->ctx);
	v->ctx.getenv = fake_getenv;
	v->ctx.getenv_ud = v;
	if (getenv("TEST_TXN_DEBUG")) {
		v->ctx.log = log_stderr;
		v->ctx.verbosity = GPUENV_LOG_DEBUG;
	}
}

static void venv_done(struct venv *v)
{
	rmrf(v->root);
}

/* One staged distribution: files "KEY/PATH=CONTENT" (KEY a scheme key
 * name), its dist-info (METADATA, RECORD) under purelib. */
static void stage(struct venv *v, gpuenv_txn_t *T, const char *name, const char *ver,
	const char *const *files)
{
	static const char *const up[] = { "purelib", "", "platlib", "", "scripts", "../../../bin/",
		"data", "../../../", "headers", "../../../include/site/python3.12/" };
	const char *dir = gpuenv_txn_stage_dir(T, name);
	char path[PATH_MAX], record[8192] = "", di[128];
	assert_non_null(dir);
	mkdirs(dir);
	snprintf(di, sizeof(di), "%s-%s.dist-info", name, ver);
	for (size_t i = 0; files[i]; i++) {
		const char *eq = strchr(files[i], '='), *slash = strchr(files[i], '/');
		const char *pre = NULL;
		for (size_t k = 0; k < 10; k += 2)
			if ((size_t)(slash - files[i]) == strlen(up[k]) &&
				!strncmp(files[i], up[k], strlen(up[k])))
				pre = up[k + 1];
		assert_non_null(pre);
		snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(eq - files[i]), files[i]);
		put(path, eq + 1);
		size_t rl = strlen(record);
		snprintf(record + rl, sizeof(record) - rl, "%s%.*s,,\n", pre, (int)(eq - slash - 1),
			slash + 1);
	}
	snprintf(path, sizeof(path), "%s/purelib/%s/METADATA", dir, di);
	char md[256];
	snprintf(md, sizeof(md), "Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, ver);
	put(path, md);
	size_t rl = strlen(record);
	snprintf(record + rl, sizeof(record) - rl, "%s/METADATA,,\n%s/RECORD,,\n", di, di);
	snprintf(path, sizeof(path), "%s/purelib/%s/RECORD", dir, di);
	put(path, record);
	assert_int_equal(gpuenv_txn_install(T, &v->ctx, dir), 0);
}

static void remove_dist(struct venv *v, gpuenv_txn_t *T, gpuenv_arena_t *a, const char *name,
	int expect)
{
	gpuenv_str_t site = gpuenv_str(v->site);
	gpuenv_env_list_t l;
	assert_int_equal(gpuenv_env_read(&v->ctx, a, &site, 1, NULL, &l), 0);
	const gpuenv_env_dist_t *d = gpuenv_env_find(l.dists, l.ndists, name);
	assert_non_null(d);
	assert_int_equal(gpuenv_txn_remove(T, &v->ctx, d), expect);
}

/* Every entry under dir but .gpuenv, sorted: "D path" or "F path=content". */
static void snap_dir(const char *root, const char *rel, gpuenv_buf_t *out)
{
	char path[PATH_MAX];
	struct dirent **v;
	snprintf(path, sizeof(path), "%s%s%s", root, rel[0] ? "/" : "", rel);
	int n = scandir(path, &v, NULL, alphasort);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		char sub[PATH_MAX], full[2 * PATH_MAX];
		struct stat st;
		const char *name = v[i]->d_name;
		if (!strcmp(name, ".") || !strcmp(name, "..") || (!rel[0] && !strcmp(name, ".gpuenv"))) {
			free(v[i]);
			continue;
		}
		snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", name);
		snprintf(full, sizeof(full), "%s/%s", root, sub);
		assert_int_equal(lstat(full, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			gpuenv_buf_printf(out, "D %s\n", sub);
			snap_dir(root, sub, out);
		} else {
			gpuenv_buf_printf(out, "F %s=", sub);
			assert_int_equal(gpuenv_fs_read(NULL, full, 1 << 20, out), 0);
			gpuenv_buf_putc(out, '\n');
		}
		free(v[i]);
	}
	free(v);
}

static char *snapshot(struct venv *v)
{
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &v->ctx, 0);
	gpuenv_buf_puts(&b, "");
	snap_dir(v->root, "", &b);
	return gpuenv_buf_steal(&b, NULL);
}

/* the transaction area holds nothing once a transaction is over */
static void assert_clean(struct venv *v)
{
	assert_false(exists("%s/.gpuenv/txn/journal%s", v->root, ""));
	assert_false(exists("%s/.gpuenv/txn/stage%s", v->root, ""));
	assert_false(exists("%s/.gpuenv/txn/trash%s", v->root, ""));
}

static gpuenv_txn_t *begin(struct venv *v)
{
	gpuenv_txn_t *T = NULL;
	gpuenv_txn_report_t rep;
	assert_int_equal(gpuenv_txn_begin(&v->ctx, &v->s, 0, &rep, &T), 0);
	assert_false(rep.recovered);
	return T;
}

static const char *const foo1[] = { "purelib/foo/__init__.py=v1", "purelib/foo/core.py=core1",
	"purelib/foo/sub/x.py=x1", "scripts/foo=#!/bin/sh\necho 1\n", NULL };
static const char *const foo2[] = { "purelib/foo/__init__.py=v2", "purelib/foo/new.py=new2",
	"scripts/foo=#!/bin/sh\necho 2\n", "headers/foo.h=int foo;", NULL };
static const char *const cublas[] = { "platlib/nvidia/__init__.py=",
	"platlib/nvidia/cublas/lib/libcublas.so=ELF-cublas", NULL };
static const char *const cudnn[] = { "platlib/nvidia/__init__.py=",
	"platlib/nvidia/cudnn/lib/libcudnn.so=ELF-cudnn", NULL };

static void install_one(struct venv *v, const char *name, const char *ver, const char *const *files)
{
	gpuenv_txn_t *T = begin(v);
	gpuenv_txn_report_t rep;
	stage(v, T, name, ver, files);
	assert_int_equal(gpuenv_txn_commit(T, &v->ctx, &rep), 0);
	assert_clean(v);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_install_remove(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_arena_t a;
	gpuenv_txn_report_t rep;
	venv_init(&v);
	gpuenv_arena_init(&a, &v.ctx, 0);
	char *empty = snapshot(&v);

	gpuenv_txn_t *T = begin(&v);
	stage(&v, T, "foo", "1.0", foo1);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	/* foo/, the dist-info and bin/foo: three renames, whatever foo holds */
	assert_int_equal(rep.renames, 3);
	assert_int_equal(rep.ops, 3);
	assert_clean(&v);
	assert_true(exists("%s/foo/sub/x.py%s", v.site, ""));
	assert_true(exists("%s/foo%s", v.bin, ""));

	/* .pyc files beside, as an import leaves them */
	put(strcat(strcpy((char[PATH_MAX]){ 0 }, v.site), "/foo/__pycache__/core.cpython-312.pyc"), "pyc");
	put(strcat(strcpy((char[PATH_MAX]){ 0 }, v.site), "/foo/__pycache__/core.cpython-311.opt-1.pyc"), "pyc");
	T = begin(&v);
	remove_dist(&v, T, &a, "foo", 0);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	/* foo/ goes whole (every file is foo's), the dist-info, bin/foo */
	assert_int_equal(rep.renames, 3);
	assert_int_equal(rep.removed_files, 8);
	assert_clean(&v);
	char *after = snapshot(&v);
	assert_string_equal(after, empty);
	free(after);
	free(empty);
	gpuenv_arena_free(&a);
	venv_done(&v);
}

static void test_upgrade_and_foreign_file(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_arena_t a;
	gpuenv_txn_report_t rep;
	venv_init(&v);
	gpuenv_arena_init(&a, &v.ctx, 0);
	install_one(&v, "foo", "1.0", foo1);
	/* a file nobody's RECORD lists keeps foo/ (and foo/sub/ goes whole) */
	char keep[PATH_MAX];
	snprintf(keep, sizeof(keep), "%s/foo/user.txt", v.site);
	put(keep, "mine");

	gpuenv_txn_t *T = begin(&v);
	remove_dist(&v, T, &a, "foo", 0);
	stage(&v, T, "foo", "2.0", foo2);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	assert_clean(&v);
	char *s = snapshot(&v);
	assert_non_null(strstr(s, "F lib/python3.12/site-packages/foo/__init__.py=v2\n"));
	assert_non_null(strstr(s, "F lib/python3.12/site-packages/foo/new.py=new2\n"));
	assert_non_null(strstr(s, "F lib/python3.12/site-packages/foo/user.txt=mine\n"));
	assert_null(strstr(s, "foo/core.py"));
	assert_null(strstr(s, "foo/sub"));
	assert_null(strstr(s, "foo-1.0.dist-info"));
	assert_non_null(strstr(s, "F lib/python3.12/site-packages/foo-2.0.dist-info/METADATA="));
	assert_non_null(strstr(s, "F bin/foo=#!/bin/sh\necho 2\n"));
	/* include/site/python3.12 did not exist: made, then the headers moved in */
	assert_non_null(strstr(s, "F include/site/python3.12/foo.h=int foo;\n"));
	free(s);

	/* bar ships foo/new.py too: it replaces foo's (as pip does) */
	static const char *const bar[] = { "purelib/foo/new.py=bar's", NULL };
	install_one(&v, "bar", "1.0", bar);
	s = snapshot(&v);
	assert_non_null(strstr(s, "F lib/python3.12/site-packages/foo/new.py=bar's\n"));
	free(s);
	gpuenv_arena_free(&a);
	venv_done(&v);
}

static void test_namespace_merge(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_arena_t a;
	gpuenv_txn_report_t rep;
	venv_init(&v);
	gpuenv_arena_init(&a, &v.ctx, 0);
	/* both in one transaction: the second merges into the nvidia/ the
	 * first moves in */
	gpuenv_txn_t *T = begin(&v);
	stage(&v, T, "nvidia-cublas", "12.0", cublas);
	stage(&v, T, "nvidia-cudnn", "9.0", cudnn);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	assert_clean(&v);
	char *s = snapshot(&v);
	assert_non_null(strstr(s, "F lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so=ELF-cublas\n"));
	assert_non_null(strstr(s, "F lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so=ELF-cudnn\n"));
	free(s);

	/* cublas goes: nvidia/ stays (cudnn's), nvidia/cublas goes whole */
	T = begin(&v);
	remove_dist(&v, T, &a, "nvidia-cublas", 0);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	s = snapshot(&v);
	assert_null(strstr(s, "cublas"));
	assert_non_null(strstr(s, "nvidia/cudnn/lib/libcudnn.so"));
	/* the shared __init__.py was in both RECORDs: pip removes it too */
	assert_null(strstr(s, "site-packages/nvidia/__init__.py="));
	free(s);
	install_one(&v, "nvidia-cublas", "12.0", cublas);
	gpuenv_arena_free(&a);
	venv_done(&v);
}

static void test_refusals(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_arena_t a;
	gpuenv_txn_report_t rep;
	char path[PATH_MAX];
	venv_init(&v);
	gpuenv_arena_init(&a, &v.ctx, 0);
	install_one(&v, "foo", "1.0", foo1);
	char *before = snapshot(&v);

	/* a RECORD path that leaves the venv */
	snprintf(path, sizeof(path), "%s/foo-1.0.dist-info/RECORD", v.site);
	put(path, "foo/__init__.py,,\n../../../../outside.txt,,\n");
	gpuenv_txn_t *T = begin(&v);
	remove_dist(&v, T, &a, "foo", GPUENV_EFORMAT);
	assert_non_null(strstr(v.ctx.err.msg, "outside the venv"));
	assert_int_equal(v.ctx.err.line, 2);
	gpuenv_txn_abort(T);
	/* and one into the transaction area */
	put(path, "../../../.gpuenv/lock,,\n");
	T = begin(&v);
	remove_dist(&v, T, &a, "foo", GPUENV_EFORMAT);
	gpuenv_txn_abort(T);

	/* no RECORD */
	unlink(path);
	T = begin(&v);
	remove_dist(&v, T, &a, "foo", GPUENV_EFORMAT);
	assert_non_null(strstr(v.ctx.err.msg, "no RECORD"));
	assert_non_null(strstr(v.ctx.err.hint, "reinstall"));
	gpuenv_txn_abort(T);

	/* files RECORD lists that are gone are no error */
	put(path, "foo/__init__.py,,\nfoo/gone.py,,\n../../../bin/gone,,\n");
	T = begin(&v);
	remove_dist(&v, T, &a, "foo", 0);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	assert_int_equal(rep.removed_files, 2); /* and RECORD */
	assert_false(exists("%s/foo/__init__.py%s", v.site, ""));
	assert_true(exists("%s/foo/core.py%s", v.site, ""));
	assert_false(exists("%s/foo-1.0.dist-info%s", v.site, ""));

	/* a staged folder where the venv has a file: refused, nothing moved */
	put(strcat(strcpy(path, v.site), "/clash"), "a file");
	free(before);
	before = snapshot(&v);
	static const char *const clash[] = { "purelib/clash/x.py=x", NULL };
	T = begin(&v);
	stage(&v, T, "clash", "1.0", clash);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), GPUENV_EFORMAT);
	assert_non_null(strstr(v.ctx.err.msg, "clash is a file"));
	assert_clean(&v);
	char *after = snapshot(&v);
	assert_string_equal(after, before);
	free(after);
	free(before);
	gpuenv_arena_free(&a);
	venv_done(&v);
}

static void test_noop_and_lock(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_txn_report_t rep;
	venv_init(&v);
	gpuenv_txn_t *T = begin(&v), *T2 = NULL;
	/* a second one (another open file description) finds the lock held,
	 * by this pid */
	assert_int_equal(gpuenv_txn_begin(&v.ctx, &v.s, 0, NULL, &T2), GPUENV_ELOCKED);
	assert_null(T2);
	char pid[32];
	snprintf(pid, sizeof(pid), "(pid %ld)", (long)getpid());
	assert_non_null(strstr(v.ctx.err.msg, pid));
	assert_int_equal(gpuenv_txn_recover(&v.ctx, v.root, 0, &rep), GPUENV_ELOCKED);
	/* nothing to do: no journal, not even the transaction folder */
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	assert_int_equal(rep.ops, 0);
	assert_false(exists("%s/.gpuenv/txn%s", v.root, ""));
	/* the lock is free again */
	assert_int_equal(gpuenv_txn_recover(&v.ctx, v.root, GPUENV_TXN_WAIT, &rep), 0);
	assert_false(rep.recovered);
	/* a staged-then-aborted one leaves nothing */
	T = begin(&v);
	stage(&v, T, "foo", "1.0", foo1);
	gpuenv_txn_abort(T);
	assert_clean(&v);
	venv_done(&v);
}

/* The old state: foo 1.0, nvidia-cublas; the new: foo 2.0 (upgrade),
 * cublas removed, cudnn added (nvidia/ shared), bar replacing a file. */
static void old_state(struct venv *v)
{
	install_one(v, "foo", "1.0", foo1);
	install_one(v, "nvidia-cublas", "12.0", cublas);
}

static gpuenv_txn_t *new_txn(struct venv *v, gpuenv_arena_t *a)
{
	static const char *const bar[] = { "purelib/foo/new.py=bar's", "data/share/bar.txt=bar",
		NULL };
	gpuenv_txn_t *T = begin(v);
	remove_dist(v, T, a, "foo", 0);
	remove_dist(v, T, a, "nvidia-cublas", 0);
	stage(v, T, "foo", "2.0", foo2);
	stage(v, T, "nvidia-cudnn", "9.0", cudnn);
	stage(v, T, "bar", "1.0", bar);
	return T;
}

/* Recover in a child with env set; its exit status. */
static int child_recover(struct venv *v, const char *e1)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		gpuenv_txn_report_t rep;
		v->env[0] = e1;
		_exit(gpuenv_txn_recover(&v->ctx, v->root, 0, &rep) ? 3 : 0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Run the new transaction in a child with env set; its exit status. */
static int child_commit(struct venv *v, const char *e1, const char *e2)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		gpuenv_arena_t a;
		gpuenv_txn_report_t rep;
		v->env[0] = e1;
		v->env[1] = e2;
		gpuenv_arena_init(&a, &v->ctx, 0);
		gpuenv_txn_t *T = new_txn(v, &a);
		_exit(gpuenv_txn_commit(T, &v->ctx, &rep) ? 3 : 0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_crash_every_op(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_arena_t a;
	gpuenv_txn_report_t rep;
	char *old_snap, *new_snap;
	size_t nops;

	/* the reference: the old set, and the new one after a clean commit */
	venv_init(&v);
	gpuenv_arena_init(&a, &v.ctx, 0);
	old_state(&v);
	old_snap = snapshot(&v);
	gpuenv_txn_t *T = new_txn(&v, &a);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), 0);
	nops = rep.ops;
	assert_true(nops >= 8);
	new_snap = snapshot(&v);
	assert_non_null(strstr(new_snap, "F share/bar.txt=bar\n"));
	assert_string_not_equal(old_snap, new_snap);
	gpuenv_arena_free(&a);
	venv_done(&v);

	for (size_t n = 0; n <= nops + 3; n++) {
		char crash[64];
		venv_init(&v);
		old_state(&v);
		if (n <= nops)
			snprintf(crash, sizeof(crash), "GPUENV_TEST_TXN_CRASH_AT=%zu", n);
		else
			snprintf(crash, sizeof(crash), "GPUENV_TEST_TXN_CRASH_AT=%s",
				n == nops + 1 ? "journal-half" : n == nops + 2 ? "after-journal"
									    : "before-cleanup");
		assert_int_equal(child_commit(&v, crash, "GPUENV_TEST_TXN_STEP_US=0"), 137);
		assert_true(exists("%s/.gpuenv/txn/journal%s", v.root, ""));
		/* and the recovery killed too, halfway (an op index below nops
		 * crashes; the next recovery goes on from the disk) */
		bool pending = true;
		if (n <= nops) {
			char rc[64];
			snprintf(rc, sizeof(rc), "GPUENV_TEST_TXN_RECOVER_CRASH_AT=%zu", (n + nops) / 2);
			int st = child_recover(&v, rc);
			assert_true(st == 137 || ((n + nops) / 2 >= nops && st == 0));
			pending = st == 137;
		}
		assert_int_equal(gpuenv_txn_recover(&v.ctx, v.root, 0, &rep), 0);
		assert_true(rep.recovered == pending);
		char *s = snapshot(&v);
		if (n == nops + 1) {
			/* torn while written: never committed, the old set */
			assert_false(rep.rolled_forward);
			assert_string_equal(s, old_snap);
		} else {
			assert_true(rep.rolled_forward == pending);
			assert_string_equal(s, new_snap);
		}
		free(s);
		assert_clean(&v);
		venv_done(&v);
	}

	/* an error before any operation: rolled back in the process */
	for (size_t n = 0; n < nops; n++) {
		char fail[64];
		venv_init(&v);
		old_state(&v);
		snprintf(fail, sizeof(fail), "GPUENV_TEST_TXN_FAIL_AT=%zu", n);
		assert_int_equal(child_commit(&v, fail, NULL), 3);
		char *s = snapshot(&v);
		assert_string_equal(s, old_snap);
		free(s);
		assert_clean(&v);
		venv_done(&v);

		/* killed in the middle of that roll back, then killed again in
		 * the recovery's: the journal's roll back mark wins */
		if (n < 2)
			continue;
		venv_init(&v);
		old_state(&v);
		assert_int_equal(child_commit(&v, fail, "GPUENV_TEST_TXN_CRASH_AT=rollback-half"), 137);
		char rc[64];
		snprintf(rc, sizeof(rc), "GPUENV_TEST_TXN_RECOVER_CRASH_AT=%zu", n / 4);
		assert_int_equal(child_recover(&v, rc), 137);
		assert_int_equal(gpuenv_txn_recover(&v.ctx, v.root, 0, &rep), 0);
		assert_true(rep.recovered);
		assert_false(rep.rolled_forward);
		s = snapshot(&v);
		assert_string_equal(s, old_snap);
		free(s);
		assert_clean(&v);
		venv_done(&v);
	}
	free(old_snap);
	free(new_snap);
}

static void test_injected_error(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_arena_t a;
	gpuenv_txn_report_t rep;
	venv_init(&v);
	gpuenv_arena_init(&a, &v.ctx, 0);
	old_state(&v);
	char *old_snap = snapshot(&v);
	v.env[0] = "GPUENV_TEST_TXN_FAIL_AT=5";
	gpuenv_txn_t *T = new_txn(&v, &a);
	assert_int_equal(gpuenv_txn_commit(T, &v.ctx, &rep), -EIO);
	assert_non_null(strstr(v.ctx.err.msg, "operation 5"));
	assert_int_equal(rep.renames, 0);
	char *s = snapshot(&v);
	assert_string_equal(s, old_snap);
	assert_clean(&v);
	free(s);
	free(old_snap);
	gpuenv_arena_free(&a);
	venv_done(&v);
}

/* A journal on disk, hand-made: recovery of a rollback-marked one and a
 * damaged one. */
static void write_file(struct venv *v, const char *rel, const char *data, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", v->root, rel);
	assert_int_equal(gpuenv_fs_write_atomic(&v->ctx, path, data, n, 0644), 0);
}

static void test_journal_recovery(void **state)
{
	(void)state;
	struct venv v;
	gpuenv_txn_report_t rep;
	gpuenv_buf_t b;
	char path[PATH_MAX];
	venv_init(&v);
	/* the venv as a commit left it after op 0 of 2: a.txt in the trash */
	snprintf(path, sizeof(path), "%s/.gpuenv/txn/trash/0", v.root);
	put(path, "old");
	snprintf(path, sizeof(path), "%s/.gpuenv/txn/stage/0-a/purelib/a.txt", v.root);
	put(path, "new");
	gpuenv_txn_op_t ops[2] = {
		{ GPUENV_TXN_MOVE, "a.txt", ".gpuenv/txn/trash/0" },
		{ GPUENV_TXN_MOVE, ".gpuenv/txn/stage/0-a/purelib/a.txt", "a.txt" },
	};
	gpuenv_buf_init(&b, &v.ctx, 0);
	assert_int_equal(gpuenv_txn_journal_format(&v.ctx, ops, 2, &b), 0);
	gpuenv_buf_puts(&b, "rollback\n");
	write_file(&v, ".gpuenv/txn/journal", b.data, b.len);
	assert_int_equal(gpuenv_txn_recover(&v.ctx, v.root, 0, &rep), 0);
	assert_true(rep.recovered);
	assert_false(rep.rolled_forward);
	char *s = snapshot(&v);
	assert_non_null(strstr(s, "F a.txt=old\n"));
	free(s);
	assert_clean(&v);

	/* damaged: one byte of an op changed under the commit mark */
	snprintf(path, sizeof(path), "%s/.gpuenv/txn/stage/0-a/purelib/a.txt", v.root);
	put(path, "new");
	mkdirs(strcat(strcpy(path, v.root), "/.gpuenv/txn/trash"));
	gpuenv_buf_reset(&b);
	assert_int_equal(gpuenv_txn_journal_format(&v.ctx, ops, 2, &b), 0);
	strstr(b.data, "a.txt")[0] = 'b';
	write_file(&v, ".gpuenv/txn/journal", b.data, b.len);
	gpuenv_txn_t *T = NULL;
	assert_int_equal(gpuenv_txn_begin(&v.ctx, &v.s, 0, &rep, &T), GPUENV_EFORMAT);
	assert_null(T);
	assert_non_null(strstr(v.ctx.err.msg, "damaged transaction journal"));
	assert_non_null(strstr(v.ctx.err.hint, "recreate the venv"));
	/* nothing was touched */
	assert_true(exists("%s/a.txt%s", v.root, ""));
	assert_true(exists("%s/.gpuenv/txn/stage/0-a/purelib/a.txt%s", v.root, ""));
	gpuenv_buf_free(&b);
	venv_done(&v);
}

static void test_journal_parse(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_buf_t b;
	gpuenv_txn_journal_t j;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	gpuenv_buf_init(&b, &ctx, 0);
	gpuenv_txn_op_t ops[3] = {
		{ GPUENV_TXN_MKDIR, NULL, "include/site/python3.12" },
		{ GPUENV_TXN_MOVE, "lib/a b%c\n", ".gpuenv/txn/trash/1" },
		{ GPUENV_TXN_MOVE, ".gpuenv/txn/stage/0-x/purelib/a b%c\n", "lib/a b%c\n" },
	};
	assert_int_equal(gpuenv_txn_journal_format(&ctx, ops, 3, &b), 0);
	assert_non_null(strstr(b.data, "mv lib/a%20b%25c%0A .gpuenv/txn/trash/1\n"));
	assert_int_equal(gpuenv_txn_journal_parse(&ctx, &a, "j", gpuenv_str_n(b.data, b.len), &j), 0);
	assert_int_equal(j.state, GPUENV_TXN_COMMITTED);
	assert_int_equal(j.nops, 3);
	assert_string_equal(j.ops[1].src, "lib/a b%c\n");
	assert_string_equal(j.ops[0].dst, "include/site/python3.12");
	/* every prefix is an unfinished journal (a crash while writing) */
	for (size_t n = 0; n < b.len; n++) {
		assert_int_equal(gpuenv_txn_journal_parse(&ctx, &a, "j", gpuenv_str_n(b.data, n), &j), 0);
		assert_int_equal(j.state, GPUENV_TXN_UNFINISHED);
		assert_true(j.nops <= 3);
	}
	/* a commit mark that does not match */
	gpuenv_buf_t c;
	gpuenv_buf_init(&c, &ctx, 0);
	gpuenv_buf_append(&c, b.data, b.len);
	strstr(c.data, "commit 3")[7] = '2';
	assert_int_equal(gpuenv_txn_journal_parse(&ctx, &a, "j", gpuenv_str_n(c.data, c.len), &j),
		GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 5);
	/* garbage after the mark, an op that does not parse above it */
	gpuenv_buf_reset(&c);
	gpuenv_buf_printf(&c, "%sxyz\n", b.data);
	assert_int_equal(gpuenv_txn_journal_parse(&ctx, &a, "j", gpuenv_str_n(c.data, c.len), &j),
		GPUENV_EFORMAT);
	gpuenv_buf_reset(&c);
	gpuenv_buf_printf(&c, "gpuenv-txn 1\nmv ../etc/passwd .gpuenv/txn/trash/0\ncommit 1 00\n");
	assert_int_equal(gpuenv_txn_journal_parse(&ctx, &a, "j", gpuenv_str_n(c.data, c.len), &j),
		GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 2);
	/* an op line that does not parse and no mark: torn there */
	gpuenv_buf_reset(&c);
	gpuenv_buf_append(&c, "gpuenv-txn 1\nmkdir a\n\0\0\0\n", 26);
	assert_int_equal(gpuenv_txn_journal_parse(&ctx, &a, "j", gpuenv_str_n(c.data, c.len), &j), 0);
	assert_int_equal(j.nops, 1);
	assert_int_equal(j.torn_line, 3);
	/* another version */
	assert_int_equal(gpuenv_txn_journal_parse(&ctx, &a, "j", gpuenv_str("gpuenv-txn 2\n"), &j),
		GPUENV_EUNSUPPORTED);
	/* paths the journal refuses to write */
	gpuenv_txn_op_t bad = { GPUENV_TXN_MOVE, "a/../b", ".gpuenv/txn/trash/0" };
	assert_int_equal(gpuenv_txn_journal_format(&ctx, &bad, 1, &c), GPUENV_EFORMAT);
	bad = (gpuenv_txn_op_t){ GPUENV_TXN_MOVE, "lib/x", "bin/x" };
	assert_int_equal(gpuenv_txn_journal_format(&ctx, &bad, 1, &c), GPUENV_EFORMAT);
	gpuenv_buf_free(&c);
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_parse),
		cmocka_unit_test(test_install_remove),
		cmocka_unit_test(test_upgrade_and_foreign_file),
		cmocka_unit_test(test_namespace_merge),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_noop_and_lock),
		cmocka_unit_test(test_injected_error),
		cmocka_unit_test(test_journal_recovery),
		cmocka_unit_test(test_crash_every_op),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
