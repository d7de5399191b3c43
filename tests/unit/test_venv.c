/* Unit tests for interpreters and venvs (lib/install/python.c, venv.c).
 *
 * A fake machine in a temporary folder: interpreters are small shell
 * scripts (a started one prints what `-c` would and leaves a file saying
 * it ran, so a test sees which were started), found through PATH,
 * PYENV_ROOT and ctx->root's usr/bin given by the context's getenv. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/pycfg.h"
#include "gpuenv/venv.h"

#include "testutil.h"

#define MAXVARS 8
struct fake {
	char root[256];
	char path[2048];
	char vars[4][512]; /* values setvar points at */
	const char *names[MAXVARS];
	const char *values[MAXVARS];
	size_t n;
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
};

static const char *fake_getenv(void *ud, const char *name)
{
	struct fake *f = ud;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], name))
			return f->values[i];
	return NULL;
}

static void setvar(struct fake *f, const char *name, const char *value)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], name)) {
			f->values[i] = value;
			return;
		}
	assert_true(f->n < MAXVARS);
	f->names[f->n] = name;
	f->values[f->n++] = value;
}

/* root/rel in a ring of buffers: valid for the next 15 calls (copy what
 * must live longer) */
static const char *at(struct fake *f, const char *rel)
{
	static char ring[16][512];
	static int k;
	char *b = ring[k++ % 16];
	snprintf(b, 512, "%s/%s", f->root, rel);
	return b;
}

static void mkdirs(const char *path)
{
	char b[512];
	snprintf(b, sizeof(b), "%s", path);
	for (char *p = b + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(b, 0755);
			*p = '/';
		}
	mkdir(b, 0755);
}

static void put(struct fake *f, const char *rel, const char *text, unsigned mode)
{
	const char *p = at(f, rel);
	char dir[512];
	snprintf(dir, sizeof(dir), "%s", p);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	FILE *fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	chmod(p, mode);
}

/* An interpreter: a script that, when started, leaves started.NAME and
 * prints the answer (NULL: fails as a broken binary would). */
static void interp(struct fake *f, const char *rel, const char *name, const char *answer)
{
	char text[1024];
	snprintf(text, sizeof(text), "#!/bin/sh\n: > '%s/started.%s'\n%s%s%s\n", f->root, name,
		answer ? "echo '" : "exit 3", answer ? answer : "", answer ? "'" : "");
	put(f, rel, text, 0755);
}

static void link_rel(struct fake *f, const char *target, const char *rel)
{
	assert_int_equal(symlink(target, at(f, rel)), 0);
}

static bool started(struct fake *f, const char *name)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "started.%s", name);
	return access(at(f, rel), F_OK) == 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

/* The fake machine of the finder tests. */
static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/gpuenv-venv-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	gpuenv_ctx_init(&f->ctx);
	f->ctx.getenv = fake_getenv;
	f->ctx.getenv_ud = f;
	f->ctx.root = f->root;
	gpuenv_arena_init(&f->a, &f->ctx, 0);

	/* a venv of opt/py39 (pyvenv.cfg says 3.9.7) */
	interp(f, "opt/py39/bin/python3.9", "py39", NULL);
	put(f, "opt/py39/lib/python3.9/os.py", "", 0644);
	mkdirs(at(f, "venvs/v/bin"));
	link_rel(f, at(f, "opt/py39/bin/python3.9"), "venvs/v/bin/python");
	put(f, "venvs/v/pyvenv.cfg", "home = /x\ninclude-system-site-packages = false\nversion = 3.9.7\n", 0644);
	/* pyenv: a shim, 3.12.1, a free-threaded 3.13.0t */
	put(f, "pyenv/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec \"$0\" \"$@\"\n", 0755);
	interp(f, "pyenv/versions/3.12.1/bin/python3.12", "pyenv312", NULL);
	link_rel(f, "python3.12", "pyenv/versions/3.12.1/bin/python3");
	interp(f, "pyenv/versions/3.13.0t/bin/python3.13t", "pyenv313t", NULL);
	/* a "python" with only lib/python3.8/os.py to say what it is */
	interp(f, "opt/custom/bin/python", "custom", NULL);
	put(f, "opt/custom/lib/python3.8/os.py", "", 0644);
	/* a "python" nothing on disk describes: started */
	interp(f, "opt/started/bin/python", "started", "3 7 9 final 0 -");
	/* a free-threaded build that only says so when started */
	interp(f, "opt/ftstart/bin/python", "ftstart", "3 14 0 candidate 2 t");
	/* python3.11 by name only; started only when a question needs 3.11.Z */
	interp(f, "opt/xy/bin/python3.11", "xy", "3 11 5 final 0 -");
	/* /usr/bin (under ctx->root): python3 -> python3.10, patchlevel.h */
	interp(f, "usr/bin/python3.10", "usr310", NULL);
	link_rel(f, "python3.10", "usr/bin/python3");
	put(f, "usr/include/python3.10/patchlevel.h",
		"#define PY_MAJOR_VERSION 3\n#define PY_VERSION \"3.10.4\"\n", 0644);
	put(f, "usr/bin/python3-config", "#!/bin/sh\n", 0755);

	snprintf(f->path, sizeof(f->path), "%s/venvs/v/bin:%s/pyenv/shims:%s/opt/py39/bin:%s/opt/custom/bin:"
		"%s/opt/started/bin:%s/opt/xy/bin:relative/bin:%s/opt/ftstart/bin", f->root, f->root, f->root, f->root,
		f->root, f->root, f->root);
	setvar(f, "PATH", f->path);
	snprintf(f->vars[0], sizeof(f->vars[0]), "%s", at(f, "pyenv"));
	snprintf(f->vars[1], sizeof(f->vars[1]), "%s", at(f, "home"));
	setvar(f, "PYENV_ROOT", f->vars[0]);
	setvar(f, "PYENV_VERSION", "3.12.1");
	setvar(f, "HOME", f->vars[1]);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	gpuenv_arena_free(&f->a);
	nftw(f->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static const gpuenv_python_t *by_path(const gpuenv_python_t *all, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(all[i].path, path))
			return &all[i];
	return NULL;
}

/* ---- finding ----------------------------------------------------------------- */

static void test_find_list(void **state)
{
	struct fake *f = *state;
	gpuenv_python_t py, *all;
	size_t n;

	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, NULL, NULL, &py, &n, &all), 0);
	/* preference order: PATH (in its order), pyenv, /usr/bin; one per binary */
	const char *order[] = { "venvs/v/bin/python", "pyenv/shims/python3", "opt/custom/bin/python",
		"opt/started/bin/python", "opt/xy/bin/python3.11", "opt/ftstart/bin/python",
		"pyenv/versions/3.13.0t/bin/python3.13t",
		"usr/bin/python3" };
	assert_int_equal(n, sizeof(order) / sizeof(order[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(all[i].path, at(f, order[i]));

	const gpuenv_python_t *p = by_path(all, n, at(f, "venvs/v/bin/python"));
	assert_string_equal(p->version, "3.9.7");
	assert_string_equal(p->version_source, "pyvenv.cfg");
	assert_string_equal(p->real, at(f, "opt/py39/bin/python3.9"));
	assert_string_equal(p->home, at(f, "opt/py39/bin"));
	assert_string_equal(p->found_by, "PATH");
	p = by_path(all, n, at(f, "pyenv/shims/python3"));
	assert_string_equal(p->real, at(f, "pyenv/versions/3.12.1/bin/python3.12"));
	assert_string_equal(p->version, "3.12.1");
	assert_string_equal(p->version_source, "pyenv folder");
	p = by_path(all, n, at(f, "opt/custom/bin/python"));
	assert_string_equal(p->version, "3.8");
	assert_string_equal(p->version_source, "lib/pythonX.Y");
	p = by_path(all, n, at(f, "opt/started/bin/python"));
	assert_string_equal(p->version, "3.7.9");
	assert_string_equal(p->version_source, "started");
	p = by_path(all, n, at(f, "opt/ftstart/bin/python"));
	assert_string_equal(p->version, "3.14.0rc2");
	assert_true(p->free_threaded);
	assert_string_equal(p->version_source, "started");
	p = by_path(all, n, at(f, "opt/xy/bin/python3.11"));
	assert_string_equal(p->version, "3.11");
	assert_string_equal(p->version_source, "file name");
	p = by_path(all, n, at(f, "pyenv/versions/3.13.0t/bin/python3.13t"));
	assert_string_equal(p->version, "3.13.0");
	assert_true(p->free_threaded);
	assert_string_equal(p->found_by, "pyenv");
	p = by_path(all, n, at(f, "usr/bin/python3"));
	assert_string_equal(p->version, "3.10.4");
	assert_string_equal(p->version_source, "patchlevel.h");
	assert_string_equal(p->real, at(f, "usr/bin/python3.10"));
	assert_string_equal(p->found_by, "/usr/bin");
	assert_int_equal(p->major, 3);
	assert_int_equal(p->minor, 10);

	/* the newest, a GIL build first */
	assert_string_equal(py.version, "3.12.1");
	/* only the one nothing on disk describes was started */
	assert_true(started(f, "started"));
	const char *never[] = { "py39", "pyenv312", "pyenv313t", "custom", "xy", "usr310" };
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		assert_false(started(f, never[i]));
}

static void want_is(struct fake *f, const char *want, const char *fits, const char *path)
{
	gpuenv_python_t py;
	int r = gpuenv_python_find(&f->ctx, &f->a, want, fits, &py, NULL, NULL);
	if (r)
		fail_msg("want %s fits %s: %s", want ? want : "-", fits ? fits : "-", f->ctx.err.msg);
	assert_string_equal(py.path, at(f, path));
}

static void want_none(struct fake *f, const char *want, const char *fits)
{
	gpuenv_python_t py;
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, want, fits, &py, NULL, NULL), GPUENV_ENOTFOUND);
}

static void test_find_want(void **state)
{
	struct fake *f = *state;

	want_is(f, "3.10", NULL, "usr/bin/python3");
	want_is(f, "python3.10", NULL, "usr/bin/python3");
	want_is(f, "3.10.4", NULL, "usr/bin/python3");
	want_none(f, "3.10.5", NULL);
	want_is(f, "3.9.7", NULL, "venvs/v/bin/python");
	want_is(f, "3.13t", NULL, "pyenv/versions/3.13.0t/bin/python3.13t");
	want_is(f, "python3.13t", NULL, "pyenv/versions/3.13.0t/bin/python3.13t");
	want_none(f, "3.13", NULL); /* only a free-threaded 3.13 */
	want_is(f, "3.8", NULL, "opt/custom/bin/python");
	want_is(f, "python3", NULL, "pyenv/shims/python3");
	want_is(f, "python", NULL, "venvs/v/bin/python");
	want_is(f, "3", NULL, "venvs/v/bin/python");
	want_is(f, at(f, "opt/custom/bin/python"), NULL, "opt/custom/bin/python");

	gpuenv_python_t py;
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, at(f, "opt/custom/bin/python"), NULL, &py, NULL, NULL), 0);
	assert_string_equal(py.found_by, "--python");
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, at(f, "nope/python"), NULL, &py, NULL, NULL), -ENOENT);
	assert_non_null(strstr(f->ctx.err.file, "nope/python"));
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, "snake", NULL, &py, NULL, NULL), GPUENV_EUSAGE);
	assert_non_null(strstr(f->ctx.err.msg, "'snake'"));
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, NULL, ">=3.x", &py, NULL, NULL), GPUENV_ESPEC);
	assert_false(started(f, "xy"));
}

static void test_find_fits(void **state)
{
	struct fake *f = *state;

	want_is(f, NULL, ">=3.10,<3.12", "opt/xy/bin/python3.11"); /* the newest that fits */
	want_is(f, NULL, "==3.9.*", "venvs/v/bin/python");
	want_is(f, "3.12", "==3.12.*", "pyenv/shims/python3");
	want_none(f, "3.12", "<3.12");
	/* X.Y alone answers ">=3.11" and "<3.12" without starting anything */
	want_is(f, NULL, ">=3.11,<3.12", "opt/xy/bin/python3.11");
	assert_false(started(f, "xy"));
	/* ... but ">=3.11.4" needs the micro version: then it is started */
	want_is(f, "3.11", ">=3.11.4", "opt/xy/bin/python3.11");
	assert_true(started(f, "xy"));
	/* as does a want of X.Y.Z */
	want_is(f, "3.11.5", NULL, "opt/xy/bin/python3.11");
	want_none(f, "3.11", ">=3.11.6");
	/* a path must fit too */
	gpuenv_python_t py;
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, at(f, "usr/bin/python3"), "==3.12.*", &py, NULL, NULL),
		GPUENV_ENOTFOUND);
	assert_non_null(strstr(f->ctx.err.msg, "is Python 3.10.4 (patchlevel.h), which does not fit ==3.12.*"));
	char hint[600];
	snprintf(hint, sizeof(hint), "--python %s (3.12.1) fits", at(f, "pyenv/shims/python3"));
	assert_string_equal(f->ctx.err.hint, hint);
}

static void test_find_not_found(void **state)
{
	struct fake *f = *state;
	gpuenv_python_t py, *all;
	size_t n;

	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, NULL, ">=3.14", &py, &n, &all), GPUENV_ENOTFOUND);
	assert_int_equal(n, 8); /* the list still comes back */
	const char *m = f->ctx.err.msg;
	assert_non_null(strstr(m, "no Python interpreter fits >=3.14; found: "));
	/* each one with its version, in order, until the message is full
	 * (ctx->err.msg is 512 bytes): then ", and N more" */
	size_t shown = 0;
	const char *pos = m;
	char want[600];
	for (size_t i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "%s (%s", all[i].path, all[i].version);
		const char *hit = strstr(pos, want);
		if (!hit)
			break;
		pos = hit + strlen(want);
		shown++;
	}
	assert_true(shown >= 4);
	if (shown < n) {
		snprintf(want, sizeof(want), ", and %zu more", n - shown);
		assert_non_null(strstr(m, want));
	}
	snprintf(want, sizeof(want), "%s (3.13.0, free-threaded)", at(f, "pyenv/versions/3.13.0t/bin/python3.13t"));
	assert_non_null(strstr(m, want));
	snprintf(want, sizeof(want), "%s (3.9.7)", at(f, "venvs/v/bin/python"));
	assert_non_null(strstr(m, want));
	assert_non_null(strstr(f->ctx.err.hint, "pyenv install 3.14"));
	assert_non_null(strstr(f->ctx.err.hint, "apt install python3.14"));
	assert_non_null(strstr(f->ctx.err.hint, "--python PATH"));

	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, "3.6", NULL, &py, NULL, NULL), GPUENV_ENOTFOUND);
	assert_non_null(strstr(f->ctx.err.msg, "no Python interpreter 3.6; found: "));
	assert_non_null(strstr(f->ctx.err.hint, "pyenv install 3.6"));

	/* HOME shortened to ~ */
	setvar(f, "HOME", f->vars[0]);
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, "3.6", NULL, &py, NULL, NULL), GPUENV_ENOTFOUND);
	assert_non_null(strstr(f->ctx.err.msg, "~/versions/3.13.0t/bin/python3.13t (3.13.0"));

	/* nothing at all */
	setvar(f, "PATH", "");
	snprintf(f->vars[2], sizeof(f->vars[2]), "%s", at(f, "none"));
	setvar(f, "PYENV_ROOT", f->vars[2]);
	f->ctx.root = f->vars[2];
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, NULL, NULL, &py, &n, &all), GPUENV_ENOTFOUND);
	assert_int_equal(n, 0);
	assert_non_null(strstr(f->ctx.err.msg, "found: none"));
}

/* A shim follows PYENV_VERSION, then PYENV_ROOT/version; "system" and a
 * version without that binary mean the shim is not this interpreter. */
static void test_find_shims(void **state)
{
	struct fake *f = *state;
	gpuenv_python_t py, *all;
	size_t n;

	setvar(f, "PYENV_VERSION", "system");
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, NULL, NULL, &py, &n, &all), 0);
	assert_null(by_path(all, n, at(f, "pyenv/shims/python3")));
	/* the pyenv scan still finds 3.12.1 itself */
	assert_non_null(by_path(all, n, at(f, "pyenv/versions/3.12.1/bin/python3.12")));
	setvar(f, "PYENV_VERSION", "3.13.0t:3.12.1");
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, "python3", NULL, &py, NULL, NULL), 0);
	assert_string_equal(py.real, at(f, "pyenv/versions/3.12.1/bin/python3.12")); /* 3.13.0t has no python3 */
	setvar(f, "PYENV_VERSION", NULL);
	put(f, "pyenv/version", "3.12.1\n", 0644);
	assert_int_equal(gpuenv_python_find(&f->ctx, &f->a, "python3", NULL, &py, NULL, NULL), 0);
	assert_string_equal(py.path, at(f, "pyenv/shims/python3"));
	assert_string_equal(py.real, at(f, "pyenv/versions/3.12.1/bin/python3.12"));
}

/* ---- venvs ----------------------------------------------------------------------- */

static gpuenv_python_t fake_python(struct fake *f, const char *want)
{
	gpuenv_python_t py;
	if (gpuenv_python_find(&f->ctx, &f->a, want, NULL, &py, NULL, NULL))
		fail_msg("%s: %s", want, f->ctx.err.msg);
	return py;
}

static char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(k >= 0);
	buf[k] = '\0';
	return buf;
}

static void link_is(const char *path, const char *target)
{
	char b[512];
	ssize_t k = readlink(path, b, sizeof(b) - 1);
	assert_true(k > 0);
	b[k] = '\0';
	assert_string_equal(b, target);
}

static void test_venv_create(void **state)
{
	struct fake *f = *state;
	gpuenv_python_t py = fake_python(f, "3.12");
	gpuenv_venv_t v;
	char dir[512];
	snprintf(dir, sizeof(dir), "%s", at(f, "work/.venv"));

	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, dir, &py, 0, &v), 0);
	assert_string_equal(v.action, "created");
	assert_string_equal(v.root, dir);
	link_is(at(f, "work/.venv/bin/python"), at(f, "pyenv/versions/3.12.1/bin/python3.12"));
	link_is(at(f, "work/.venv/bin/python3"), "python");
	link_is(at(f, "work/.venv/bin/python3.12"), "python");
	link_is(at(f, "work/.venv/lib64"), "lib");
	struct stat st;
	assert_int_equal(stat(at(f, "work/.venv/lib/python3.12/site-packages"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(stat(at(f, "work/.venv/include"), &st), 0);
	assert_int_equal(access(at(f, "work/.venv/.gpuenv-venv-partial"), F_OK), -1);
	assert_int_equal(access(at(f, "work/.venv/.gitignore"), F_OK), -1); /* venv writes one from 3.13 */
	const char *cfg = slurp(at(f, "work/.venv/pyvenv.cfg"));
	gpuenv_str_t t = gpuenv_str(cfg);
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_get(t, "home"), at(f, "pyenv/versions/3.12.1/bin")));
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_get(t, "include-system-site-packages"), "false"));
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_get(t, "version"), "3.12.1"));
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_get(t, "executable"), at(f, "pyenv/versions/3.12.1/bin/python3.12")));
	assert_non_null(gpuenv_pycfg_get(t, "command").ptr);
	/* the scheme */
	assert_string_equal(v.site, at(f, "work/.venv/lib/python3.12/site-packages"));
	assert_string_equal(v.scheme.dirs[GPUENV_SCHEME_PLATLIB], v.site);
	assert_string_equal(v.bin, at(f, "work/.venv/bin"));
	assert_string_equal(v.scheme.dirs[GPUENV_SCHEME_DATA], dir);
	assert_string_equal(v.scheme.dirs[GPUENV_SCHEME_HEADERS], at(f, "work/.venv/include/site/python3.12"));
	assert_string_equal(v.scheme.python, at(f, "work/.venv/bin/python"));
	assert_string_equal(v.scheme.python_xy, "3.12");
	assert_string_equal(v.python.version, "3.12.1");
	assert_string_equal(v.python.home, at(f, "pyenv/versions/3.12.1/bin"));
	assert_string_equal(v.python.path, at(f, "pyenv/versions/3.12.1/bin/python3.12"));
	/* the activate scripts name the venv */
	char want[600];
	snprintf(want, sizeof(want), "VIRTUAL_ENV='%s'\n", dir);
	assert_non_null(strstr(slurp(at(f, "work/.venv/bin/activate")), want));
	assert_non_null(strstr(slurp(at(f, "work/.venv/bin/activate")), "VIRTUAL_ENV_PROMPT='(.venv) '"));
	snprintf(want, sizeof(want), "set -gx VIRTUAL_ENV '%s'\n", dir);
	assert_non_null(strstr(slurp(at(f, "work/.venv/bin/activate.fish")), want));
	snprintf(want, sizeof(want), "setenv VIRTUAL_ENV '%s'\n", dir);
	assert_non_null(strstr(slurp(at(f, "work/.venv/bin/activate.csh")), want));
	/* nothing was started */
	assert_false(started(f, "pyenv312"));

	/* again: kept as it is */
	struct stat before, after;
	assert_int_equal(stat(at(f, "work/.venv/pyvenv.cfg"), &before), 0);
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, dir, &py, 0, &v), 0);
	assert_string_equal(v.action, "kept");
	assert_int_equal(stat(at(f, "work/.venv/pyvenv.cfg"), &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);

	/* open says the same */
	gpuenv_venv_t o;
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, dir, &o), 0);
	assert_null(o.action);
	assert_string_equal(o.site, v.site);
	assert_string_equal(o.python.version, "3.12.1");
	assert_string_equal(o.python.real, at(f, "pyenv/versions/3.12.1/bin/python3.12"));
	assert_string_equal(o.python.version_source, "pyvenv.cfg");

	/* another X.Y: refused, then --clear */
	gpuenv_python_t other = fake_python(f, "3.10");
	put(f, "work/.venv/lib/python3.12/site-packages/mine.py", "", 0644);
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, dir, &other, 0, &v), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(f->ctx.err.msg, "a venv of Python 3.12.1 (pyvenv.cfg), not of Python 3.10.4"));
	assert_non_null(strstr(f->ctx.err.hint, "--clear"));
	assert_int_equal(access(at(f, "work/.venv/lib/python3.12/site-packages/mine.py"), F_OK), 0);
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, dir, &other, GPUENV_VENV_CLEAR, &v), 0);
	assert_string_equal(v.action, "cleared");
	assert_int_equal(access(at(f, "work/.venv/lib/python3.12"), F_OK), -1);
	assert_string_equal(v.site, at(f, "work/.venv/lib/python3.10/site-packages"));
	link_is(at(f, "work/.venv/bin/python"), at(f, "usr/bin/python3.10"));
	assert_int_equal(access(at(f, "work/.venv/bin/python3.12"), F_OK), -1);
}

static void test_venv_partial(void **state)
{
	struct fake *f = *state;
	gpuenv_python_t py = fake_python(f, "3.12");
	gpuenv_venv_t v;
	char dir[512];
	snprintf(dir, sizeof(dir), "%s", at(f, "half"));

	/* what a create killed before pyvenv.cfg leaves */
	put(f, "half/.gpuenv-venv-partial", "", 0644);
	mkdirs(at(f, "half/bin"));
	mkdirs(at(f, "half/lib/python3.12"));
	link_rel(f, "/wrong/target", "half/bin/python");
	put(f, "half/bin/.activate.tmp12345", "half", 0644);
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, dir, &v), GPUENV_ENOTFOUND);
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, dir, &py, 0, &v), 0);
	assert_string_equal(v.action, "completed");
	link_is(at(f, "half/bin/python"), at(f, "pyenv/versions/3.12.1/bin/python3.12"));
	assert_int_equal(access(at(f, "half/lib/python3.12/site-packages"), F_OK), 0);
	assert_int_equal(access(at(f, "half/pyvenv.cfg"), F_OK), 0);
	assert_int_equal(access(at(f, "half/.gpuenv-venv-partial"), F_OK), -1);
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, dir, &v), 0);

	/* a folder that is not a venv is left alone */
	put(f, "notvenv/bin/tool", "x", 0755);
	put(f, "notvenv/README", "x", 0644);
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, at(f, "notvenv"), &py, 0, &v), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(f->ctx.err.msg, "not empty and not a venv (no pyvenv.cfg; it holds README)"));
	assert_int_equal(access(at(f, "notvenv/bin/tool"), F_OK), 0);
	assert_int_equal(access(at(f, "notvenv/bin/python"), F_OK), -1);
	/* an empty folder is fine */
	mkdirs(at(f, "empty"));
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, at(f, "empty"), &py, 0, &v), 0);
	assert_string_equal(v.action, "created");
	/* the free-threaded layout, and 3.13's .gitignore */
	gpuenv_python_t ft = fake_python(f, "3.13t");
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, at(f, "ft"), &ft, 0, &v), 0);
	assert_string_equal(v.site, at(f, "ft/lib/python3.13t/site-packages"));
	link_is(at(f, "ft/bin/python3.13t"), "python");
	assert_int_equal(access(at(f, "ft/.gitignore"), F_OK), 0);
	assert_true(v.python.free_threaded);
	assert_string_equal(v.scheme.python_xy, "3.13");
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, at(f, "ft"), &v), 0);
	assert_true(v.python.free_threaded);
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, at(f, "ft"), &py, 0, &v), GPUENV_EUNSUPPORTED);
	/* copies */
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, at(f, "copies"), &py, GPUENV_VENV_COPIES, &v), 0);
	struct stat st;
	assert_int_equal(lstat(at(f, "copies/bin/python"), &st), 0);
	assert_true(S_ISREG(st.st_mode) && (st.st_mode & 0111));
	/* a path with a quote is quoted in the scripts */
	assert_int_equal(gpuenv_venv_create(&f->ctx, &f->a, at(f, "it's"), &py, 0, &v), 0);
	assert_non_null(strstr(slurp(at(f, "it's/bin/activate")), "it'\\''s"));
	assert_non_null(strstr(slurp(at(f, "it's/bin/activate.fish")), "it\\'s"));
}

static void test_venv_open_errors(void **state)
{
	struct fake *f = *state;
	gpuenv_venv_t v;

	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, at(f, "missing"), &v), GPUENV_ENOTFOUND);
	put(f, "bad1/pyvenv.cfg", "include-system-site-packages = false\nversion = 3.12.1\n", 0644);
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, at(f, "bad1"), &v), GPUENV_EFORMAT);
	assert_non_null(strstr(f->ctx.err.msg, "no `home = FOLDER` line"));
	assert_non_null(strstr(f->ctx.err.file, "bad1/pyvenv.cfg"));
	put(f, "bad2/pyvenv.cfg", "home = /usr/bin\nversion = three\n", 0644);
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, at(f, "bad2"), &v), GPUENV_EFORMAT);
	assert_int_equal(f->ctx.err.line, 2);
	put(f, "bad3/pyvenv.cfg", "home = usr/bin\nversion = 3.12.1\n", 0644);
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, at(f, "bad3"), &v), GPUENV_EFORMAT);
	assert_int_equal(f->ctx.err.line, 1);
	/* uv's and virtualenv's keys */
	put(f, "uv/pyvenv.cfg", "home = /usr/bin\nimplementation = CPython\nuv = 0.5.0\nversion_info = 3.12.3\n", 0644);
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, at(f, "uv"), &v), 0);
	assert_string_equal(v.python.version, "3.12.3");
	put(f, "ve/pyvenv.cfg", "home = /usr/bin\nversion_info = 3.11.2.final.0\n", 0644);
	assert_int_equal(gpuenv_venv_open(&f->ctx, &f->a, at(f, "ve"), &v), 0);
	assert_string_equal(v.python.version, "3.11.2");
	assert_string_equal(v.scheme.python_xy, "3.11");
}

static void test_pycfg(void **state)
{
	(void)state;
	gpuenv_str_t t = gpuenv_str("home=/a\n  Version =  3.12.1  \nnoequals\nx = y = z\n");
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_get(t, "home"), "/a"));
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_get(t, "x"), "y = z"));
	assert_null(gpuenv_pycfg_get(t, "noequals").ptr);
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_version(t), "3.12.1"));
	assert_true(gpuenv_str_eq_cstr(gpuenv_pycfg_version(gpuenv_str("version = 3.13.0rc1\n")), "3.13.0"));
	assert_null(gpuenv_pycfg_version(gpuenv_str("version = 3\n")).ptr);
	assert_null(gpuenv_pycfg_version(gpuenv_str("version = .3.1\n")).ptr);
}

/* Every allocation failing in turn: an error, never a crash or a leak. */
static void test_find_alloc_failures(void **state)
{
	struct fake *f = *state;
	testutil_alloc_t t;
	gpuenv_allocator_t saved = f->ctx.mem;
	long total;

	f->ctx.mem = testutil_allocator(&t);
	testutil_alloc_reset(&t, TESTUTIL_NEVER, false);
	{
		gpuenv_arena_t a;
		gpuenv_python_t py;
		gpuenv_venv_t v;
		gpuenv_arena_init(&a, &f->ctx, 0);
		assert_int_equal(gpuenv_python_find(&f->ctx, &a, "3.12", NULL, &py, NULL, NULL), 0);
		assert_int_equal(gpuenv_venv_create(&f->ctx, &a, at(f, "oom/v"), &py, 0, &v), 0);
		gpuenv_arena_free(&a);
	}
	total = t.calls;
	for (long i = 0; i < total; i++) {
		gpuenv_arena_t a;
		gpuenv_python_t py;
		gpuenv_venv_t v;
		char dir[64];
		snprintf(dir, sizeof(dir), "oom/%ld", i);
		testutil_alloc_reset(&t, i, false);
		gpuenv_arena_init(&a, &f->ctx, 0);
		int r = gpuenv_python_find(&f->ctx, &a, "3.12", NULL, &py, NULL, NULL);
		if (r == 0)
			r = gpuenv_venv_create(&f->ctx, &a, at(f, dir), &py, 0, &v);
		assert_true(r == 0 || r == -ENOMEM);
		gpuenv_arena_free(&a);
	}
	f->ctx.mem = saved;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_find_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_want, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_fits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_not_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_shims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_venv_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_venv_partial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_venv_open_errors, setup, teardown),
		cmocka_unit_test(test_pycfg),
		cmocka_unit_test_setup_teardown(test_find_alloc_failures, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
