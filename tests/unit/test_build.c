/* Unit tests for the pure parts of source builds (lib/builder/spec.c):
 * pyproject.toml's [build-system] with PEP 517/518's defaults and refusals,
 * the hook runner's result file, the build environment, and the cache key
 * (what changes it and what does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/builder/build_int.h"
#include "gpuenv/build.h"

static gpuenv_ctx_t ctx;
static gpuenv_arena_t arena;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_arena_free(&arena);
	return 0;
}

static int bs_parse(const char *text, gpuenv_build_system_t *bs)
{
	gpuenv_error_clear(&ctx);
	return gpuenv_build_system_parse(&ctx, &arena, "pyproject.toml", gpuenv_str(text), bs);
}

static void test_build_system(void **state)
{
	gpuenv_build_system_t bs;
	(void)state;
	/* declared */
	assert_int_equal(bs_parse("[build-system]\nrequires = [\"setuptools>=61\", \"wheel\"]\n"
				  "build-backend = \"setuptools.build_meta\"\n", &bs), 0);
	assert_int_equal(bs.nrequires, 2);
	assert_string_equal(bs.requires[0], "setuptools>=61");
	assert_string_equal(bs.backend, "setuptools.build_meta");
	assert_false(bs.legacy);
	assert_int_equal(bs.nbackend_path, 0);
	/* an object path and backend-path */
	assert_int_equal(bs_parse("[build-system]\nrequires = []\nbuild-backend = \"backend:Obj.sub\"\n"
				  "backend-path = [\"_build\", \"tools/b\"]\n", &bs), 0);
	assert_int_equal(bs.nrequires, 0);
	assert_string_equal(bs.backend, "backend:Obj.sub");
	assert_int_equal(bs.nbackend_path, 2);
	assert_string_equal(bs.backend_path[1], "tools/b");
	/* PEP 518: no [build-system]: setuptools' legacy default */
	assert_int_equal(bs_parse("[project]\nname = \"x\"\n", &bs), 0);
	assert_true(bs.legacy);
	assert_int_equal(bs.nrequires, 1);
	assert_string_equal(bs.requires[0], GPUENV_BUILD_LEGACY_REQUIRES);
	assert_string_equal(bs.backend, GPUENV_BUILD_LEGACY_BACKEND);
	/* no file at all */
	assert_int_equal(bs_parse("", &bs), 0);
	assert_true(bs.legacy);
	/* PEP 517: requires without build-backend: the legacy backend, the
	 * declared requirements */
	assert_int_equal(bs_parse("[build-system]\nrequires = [\"setuptools\", \"cython\"]\n", &bs), 0);
	assert_true(bs.legacy);
	assert_int_equal(bs.nrequires, 2);
	assert_string_equal(bs.backend, GPUENV_BUILD_LEGACY_BACKEND);
}

static void test_build_system_refused(void **state)
{
	gpuenv_build_system_t bs;
	(void)state;
	assert_int_equal(bs_parse("[build-system]\nrequires = \"setuptools\"\n", &bs), GPUENV_ETYPE);
	assert_non_null(strstr(ctx.err.msg, "build-system.requires"));
	assert_int_equal(ctx.err.line, 2);
	assert_int_equal(bs_parse("[build-system]\nrequires = [\"setuptools >=\"]\n", &bs), GPUENV_EREQ);
	assert_non_null(strstr(ctx.err.msg, "build-system.requires[0]"));
	assert_int_equal(bs_parse("[build-system]\nrequires = [1]\n", &bs), GPUENV_ETYPE);
	assert_int_equal(bs_parse("[build-system]\nbuild-backend = \"1bad\"\n", &bs), GPUENV_ETYPE);
	assert_non_null(strstr(ctx.err.msg, "build-backend"));
	assert_int_equal(bs_parse("[build-system]\nbuild-backend = \"a..b\"\n", &bs), GPUENV_ETYPE);
	assert_int_equal(bs_parse("[build-system]\nbuild-backend = \"a:\"\n", &bs), GPUENV_ETYPE);
	assert_int_equal(bs_parse("[build-system]\nbuild-backend = \"a:b:c\"\n", &bs), GPUENV_ETYPE);
	assert_int_equal(bs_parse("[build-system]\nbackend-path = [\"../out\"]\n", &bs), GPUENV_ETYPE);
	assert_non_null(strstr(ctx.err.msg, "inside"));
	assert_int_equal(bs_parse("[build-system]\nbackend-path = [\"/abs\"]\n", &bs), GPUENV_ETYPE);
	assert_int_equal(bs_parse("[build-system]\nbackend-path = [\"a/../..\"]\n", &bs), GPUENV_ETYPE);
	assert_int_equal(bs_parse("build-system = 3\n", &bs), GPUENV_ETYPE);
	assert_int_equal(bs_parse("[build-system\n", &bs), GPUENV_ESYNTAX);
	assert_true(ctx.err.line == 1);
}

static int res_parse(const char *text, gpuenv_hook_result_t *r)
{
	gpuenv_error_clear(&ctx);
	return gpuenv_hook_result_parse(&ctx, &arena, "result.json", gpuenv_str(text), r);
}

static void test_hook_result(void **state)
{
	gpuenv_hook_result_t r;
	(void)state;
	assert_int_equal(res_parse("{\"ok\": true, \"return\": \"x-1.0-py3-none-any.whl\"}", &r), 0);
	assert_true(r.ok);
	assert_false(r.is_list);
	assert_string_equal(r.str, "x-1.0-py3-none-any.whl");
	assert_int_equal(res_parse("{\"ok\": true, \"return\": [\"wheel\", \"cython>=3\"]}", &r), 0);
	assert_true(r.is_list);
	assert_int_equal(r.nlist, 2);
	assert_string_equal(r.list[1], "cython>=3");
	assert_int_equal(res_parse("{\"ok\": true, \"return\": []}", &r), 0);
	assert_true(r.is_list && r.nlist == 0);
	assert_int_equal(res_parse("{\"ok\": false, \"kind\": \"missing\", \"message\": \"no hook\"}", &r), 0);
	assert_false(r.ok);
	assert_string_equal(r.kind, "missing");
	assert_null(r.traceback);
	assert_int_equal(res_parse("{\"ok\": false, \"kind\": \"error\", \"message\": \"E\", \"traceback\": \"T\"}",
				 &r), 0);
	assert_string_equal(r.traceback, "T");
	/* refusals */
	static const char *const bad[] = { "", "[]", "{}", "{\"ok\": 1}", "{\"ok\": true}",
		"{\"ok\": true, \"return\": 3}", "{\"ok\": true, \"return\": [1]}",
		"{\"ok\": true, \"return\": \"a\\u0000b\"}", "{\"ok\": false, \"message\": \"m\"}",
		"{\"ok\": false, \"kind\": \"other\", \"message\": \"m\"}", "{\"ok\": false, \"kind\": \"error\"}",
		"{\"ok\": true, \"ok\": false, \"return\": \"x\"}", "{\"ok\": false, \"kind\": \"error\", \"message\": \"m\", "
		"\"traceback\": 1}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int e = res_parse(bad[i], &r);
		if (e != GPUENV_EFORMAT)
			fail_msg("'%s' gave %d", bad[i], e);
		assert_true(ctx.err.msg[0] != '\0');
	}
}

static const char *key_of(const gpuenv_build_opts_t *o, const gpuenv_build_req_t *q)
{
	const char *k = NULL;
	gpuenv_error_clear(&ctx);
	assert_int_equal(gpuenv_build_key(&ctx, &arena, o, q, &k), 0);
	assert_non_null(k);
	assert_int_equal(strlen(k), 64);
	return k;
}

static void test_key(void **state)
{
	(void)state;
	gpuenv_python_t py = { .path = "/usr/bin/python3.11", .version = "3.11.2", .major = 3, .minor = 11 };
	const char *base[] = { "PATH=/usr/bin", "CC=gcc", "HOME=/root", NULL };
	const char *extra[] = { "TORCH_CUDA_ARCH_LIST=9.0", "MAX_JOBS=4" };
	gpuenv_build_opts_t o = { .python = &py, .base_env = base, .env = extra, .nenv = 2, .cuda_version = "13.0" };
	gpuenv_build_req_t q = { .name = "foo", .version = "1.0", .sdist_sha256 =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	const char *k0 = key_of(&o, &q);
	assert_string_equal(k0, key_of(&o, &q)); /* deterministic */

	/* MAX_JOBS: speed only, not in the key */
	const char *extra2[] = { "TORCH_CUDA_ARCH_LIST=9.0", "MAX_JOBS=64" };
	o.env = extra2;
	assert_string_equal(k0, key_of(&o, &q));
	/* an arch list changes it */
	const char *extra3[] = { "TORCH_CUDA_ARCH_LIST=8.0;8.6", "MAX_JOBS=4" };
	o.env = extra3;
	assert_string_not_equal(k0, key_of(&o, &q));
	o.env = extra;
	/* so does the base environment's CC, the CUDA, the Python, the sdist */
	const char *base2[] = { "PATH=/usr/bin", "CC=clang", "HOME=/root", NULL };
	o.base_env = base2;
	assert_string_not_equal(k0, key_of(&o, &q));
	o.base_env = base;
	/* ...but not HOME */
	const char *base3[] = { "PATH=/usr/bin", "CC=gcc", "HOME=/home/x", NULL };
	o.base_env = base3;
	assert_string_equal(k0, key_of(&o, &q));
	o.base_env = base;
	o.cuda_version = "12.8";
	assert_string_not_equal(k0, key_of(&o, &q));
	o.cuda_version = "13.0";
	py.version = "3.11.7";
	assert_string_not_equal(k0, key_of(&o, &q));
	py.version = "3.11.2";
	q.sdist_sha256 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	assert_string_not_equal(k0, key_of(&o, &q));
	q.sdist_sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	/* an extra variable overrides the base one of the same name */
	const char *extra4[] = { "TORCH_CUDA_ARCH_LIST=9.0", "MAX_JOBS=4", "CC=gcc" };
	o.env = extra4;
	o.nenv = 3;
	assert_string_equal(k0, key_of(&o, &q));
	o.env = extra;
	o.nenv = 2;
	/* no isolation against a venv is another build */
	gpuenv_venv_t v = { .root = "/p/.venv" };
	const char *names[] = { "foo" };
	o.against = &v;
	o.against_names = names;
	o.nagainst = 1;
	assert_string_not_equal(k0, key_of(&o, &q));
	o.against = NULL;
	assert_string_equal(k0, key_of(&o, &q));
	/* neither sdist nor directory */
	gpuenv_build_req_t none = { .name = "foo" };
	const char *k = NULL;
	assert_int_equal(gpuenv_build_key(&ctx, &arena, &o, &none, &k), -EINVAL);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_key_directory(void **state)
{
	(void)state;
	char dir[] = "/tmp/build-unit-XXXXXX", p[256];
	assert_non_null(mkdtemp(dir));
	gpuenv_python_t py = { .version = "3.11.2" };
	gpuenv_build_opts_t o = { .python = &py };
	gpuenv_build_req_t tree = { .name = "foo", .directory = dir };
	gpuenv_build_req_t ed = { .name = "foo", .directory = dir, .editable = true };
	snprintf(p, sizeof(p), "%s/pyproject.toml", dir);
	write_file(p, "[project]\nname = \"foo\"\n");
	snprintf(p, sizeof(p), "%s/foo.py", dir);
	write_file(p, "X = 1\n");
	const char *t0 = key_of(&o, &tree), *e0 = key_of(&o, &ed);
	assert_string_not_equal(t0, e0);
	/* a source edit: another tree build, the same editable one */
	write_file(p, "X = 2\n");
	assert_string_not_equal(t0, key_of(&o, &tree));
	assert_string_equal(e0, key_of(&o, &ed));
	/* the build files change both */
	snprintf(p, sizeof(p), "%s/pyproject.toml", dir);
	write_file(p, "[project]\nname = \"foo\"\nversion = \"2\"\n");
	assert_string_not_equal(e0, key_of(&o, &ed));
	/* caches and VCS folders do not count */
	const char *t1 = key_of(&o, &tree);
	snprintf(p, sizeof(p), "%s/__pycache__", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/__pycache__/foo.cpython-311.pyc", dir);
	write_file(p, "junk");
	snprintf(p, sizeof(p), "%s/.git", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/.git/HEAD", dir);
	write_file(p, "ref: x\n");
	assert_string_equal(t1, key_of(&o, &tree));
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_envp(void **state)
{
	(void)state;
	const char *base[] = { "PATH=/usr/bin", "PYTHONPATH=/evil", "VIRTUAL_ENV=/other", "PIP_INDEX_URL=x",
		"HOME=/root", "CUDA_HOME=/old", NULL };
	const char *extra[] = { "CUDA_HOME=/usr/local/cuda", "MAX_JOBS=3" };
	gpuenv_build_opts_t o = { .base_env = base, .env = extra, .nenv = 2, .path_prefix = "/shims" };
	char **envp;
	assert_int_equal(gpuenv_build_envp(&arena, &o, "/b/env/bin", "/b/env", &envp), 0);
	size_t n = 0;
	bool home = false, cuda = false, path = false, venv = false, jobs = false;
	for (; envp[n]; n++) {
		assert_null(strstr(envp[n], "PYTHONPATH"));
		assert_null(strstr(envp[n], "PIP_"));
		assert_null(strstr(envp[n], "/old"));
		assert_null(strstr(envp[n], "/other"));
		home |= !strcmp(envp[n], "HOME=/root");
		cuda |= !strcmp(envp[n], "CUDA_HOME=/usr/local/cuda");
		jobs |= !strcmp(envp[n], "MAX_JOBS=3");
		path |= !strcmp(envp[n], "PATH=/shims:/b/env/bin:/usr/bin");
		venv |= !strcmp(envp[n], "VIRTUAL_ENV=/b/env");
	}
	assert_true(home && cuda && path && venv && jobs);
	assert_int_equal(n, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_build_system, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_system_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_envp, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
