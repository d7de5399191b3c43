/* Unit tests for the trace recorder and the shims' calls file (lib/core/trace.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/fs.h"
#include "gpuenv/shim.h"
#include "gpuenv/trace.h"

#include "testutil.h"

static void tmpdir(char *out, size_t n)
{
	snprintf(out, n, "/tmp/profile-unit-XXXXXX");
	assert_non_null(mkdtemp(out));
}

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j)
		fail_msg("%s:%d: %s", path, je.line, je.text);
	return j;
}

/* X events of the trace (metadata left out) */
static size_t count_ph(json_t *doc, const char *ph)
{
	json_t *ev = json_object_get(doc, "traceEvents");
	size_t n = 0, i;
	json_t *e;
	json_array_foreach(ev, i, e)
		n += strcmp(json_string_value(json_object_get(e, "ph")), ph) == 0;
	return n;
}

static void test_off(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_ctx_init(&ctx);
	assert_null(ctx.trace);
	assert_int_equal(gpuenv_trace_begin(&ctx), 0);
	gpuenv_trace_end(&ctx, "install", "download", "numpy", NULL, 0);
	gpuenv_trace_thread_name(&ctx, "x");
	gpuenv_shims_t sh = { .dir = "/nonexistent/profile-x" };
	assert_int_equal(gpuenv_shim_collect(&ctx, &sh, "numpy", NULL), 0);
}

struct worker_arg {
	gpuenv_ctx_t ctx;
	int id;
};

static void *worker(void *p)
{
	struct worker_arg *a = p;
	char name[32], pkg[32];
	snprintf(name, sizeof(name), "stage %d", a->id);
	gpuenv_trace_thread_name(&a->ctx, name);
	for (int i = 0; i < 500; i++) {
		snprintf(pkg, sizeof(pkg), "pkg-%d-%d", a->id, i);
		uint64_t t0 = gpuenv_trace_begin(&a->ctx);
		gpuenv_trace_end(&a->ctx, "install", "link", pkg, NULL, t0);
	}
	return NULL;
}

static void test_threads_and_write(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_trace_t *t;
	char dir[64], path[128];
	pthread_t th[4];
	struct worker_arg args[4];

	gpuenv_ctx_init(&ctx);
	tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	assert_int_equal(gpuenv_trace_new(&ctx, "gpuenv sync", &t), 0);
	ctx.trace = t;
	uint64_t t0 = gpuenv_trace_begin(&ctx);
	assert_true(t0 > 0);
	for (int i = 0; i < 4; i++) {
		args[i].ctx = ctx; /* the workers copy the context, as sync's do */
		args[i].id = i;
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* strings that need escaping: quotes, a newline, a byte that is not UTF-8 */
	gpuenv_trace_end(&ctx, "index", "metadata", "we\"ird", "a\nb\xff\\c", t0);
	size_t n, dropped;
	gpuenv_trace_counts(t, &n, &dropped);
	assert_int_equal(n, 2001);
	assert_int_equal(dropped, 0);
	assert_int_equal(gpuenv_trace_write(&ctx, t, path), 0);

	json_t *doc = load(path);
	assert_string_equal(json_string_value(json_object_get(doc, "displayTimeUnit")), "ms");
	json_t *other = json_object_get(doc, "otherData");
	assert_string_equal(json_string_value(json_object_get(other, "command")), "gpuenv sync");
	assert_int_equal(json_integer_value(json_object_get(other, "events")), 2001);
	assert_int_equal(count_ph(doc, "X"), 2001);
	assert_int_equal(count_ph(doc, "M"), 1 + 1 + 4); /* process, main, 4 stages */
	json_t *ev = json_object_get(doc, "traceEvents"), *e;
	size_t i;
	bool seen = false;
	json_array_foreach(ev, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
			continue;
		assert_true(json_is_integer(json_object_get(e, "ts")));
		assert_true(json_is_integer(json_object_get(e, "dur")));
		assert_int_equal(json_integer_value(json_object_get(e, "pid")), getpid());
		json_t *a = json_object_get(e, "args");
		if (strcmp(json_string_value(json_object_get(a, "package")), "we\"ird") == 0) {
			seen = true;
			assert_string_equal(json_string_value(json_object_get(e, "name")), "metadata we\"ird");
			assert_string_equal(json_string_value(json_object_get(a, "detail")), "a\nb\\xff\\c");
		}
	}
	assert_true(seen);
	json_decref(doc);
	gpuenv_trace_free(&ctx, t);
	unlink(path);
	rmdir(dir);
}

static void test_empty_trace(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_trace_t *t;
	char dir[64], path[128];

	gpuenv_ctx_init(&ctx);
	tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.json", dir);
	assert_int_equal(gpuenv_trace_new(&ctx, "gpuenv lock", &t), 0);
	assert_int_equal(gpuenv_trace_write(&ctx, t, path), 0);
	json_t *doc = load(path);
	assert_int_equal(count_ph(doc, "X"), 0);
	assert_int_equal(count_ph(doc, "M"), 2);
	json_decref(doc);
	gpuenv_trace_free(&ctx, t);
	unlink(path);
	rmdir(dir);
}

static void test_shim_parse(void **state)
{
	(void)state;
	gpuenv_shim_call_t *c = malloc(sizeof(*c));
	char good[] = "v1\t100\t25\t4242\t0\t\tnvcc\t/src/a\\tb\t--version\t-x\\\\y\\n\n";
	assert_int_equal(gpuenv_shim_parse(good, strlen(good), c), 0);
	assert_int_equal(c->start, 100);
	assert_int_equal(c->dur, 25);
	assert_int_equal(c->pid, 4242);
	assert_int_equal(c->status, 0);
	assert_string_equal(c->tool, "nvcc");
	assert_string_equal(c->cwd, "/src/a\tb");
	assert_int_equal(c->argc, 2);
	assert_string_equal(c->argv[0], "--version");
	assert_string_equal(c->argv[1], "-x\\y\n");
	assert_false(c->truncated);

	char trunc[] = "v1\t1\t2\t3\t139\tt\tgcc\t/\n";
	assert_int_equal(gpuenv_shim_parse(trunc, strlen(trunc), c), 0);
	assert_true(c->truncated);
	assert_int_equal(c->status, 139);
	assert_int_equal(c->argc, 0);

	const char *bad[] = {
		"v2\t1\t2\t3\t0\t\tgcc\t/\n",	   /* unknown version */
		"v1\t1\t2\t3\t0\t\tgcc\n",	   /* no cwd */
		"v1\tx\t2\t3\t0\t\tgcc\t/\n",	   /* start not a number */
		"v1\t1\t2\t3\t999\t\tgcc\t/\n",	   /* status out of range */
		"v1\t1\t2\t3\t0\tq\tgcc\t/\n",	   /* unknown flag */
		"v1\t1\t2\t3\t0\t\t\t/\n",	   /* no tool */
		"v1\t1\t2\t3\t0\t\t../gcc\t/\n",   /* a path for a tool */
		"v1\t1\t2\t3\t0\t\tgcc\t/\\q\n",   /* unknown escape */
		"v1\t1\t2\t3\t0\t\tgcc\t/\\\n",	   /* escape at the end */
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		assert_int_equal(gpuenv_shim_parse(buf, strlen(buf), c), GPUENV_ESYNTAX);
	}
	free(c);
}

static long tid_of(json_t *doc, const char *tool, uint64_t ts)
{
	json_t *ev = json_object_get(doc, "traceEvents"), *e;
	size_t i;
	json_array_foreach(ev, i, e) {
		json_t *a = json_object_get(e, "args");
		if (a && json_object_get(a, "tool") &&
			strcmp(json_string_value(json_object_get(a, "tool")), tool) == 0 &&
			(uint64_t)json_integer_value(json_object_get(e, "ts")) == ts)
			return (long)json_integer_value(json_object_get(e, "tid"));
	}
	fail_msg("no %s call at %llu", tool, (unsigned long long)ts);
	return 0;
}

static void test_shims_collect(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_trace_t *t;
	gpuenv_shims_t sh;
	char dir[64], sdir[128], path[128], link[PATH_MAX + 8];
	struct stat st;

	gpuenv_ctx_init(&ctx);
	ctx.verbosity = -1;
	tmpdir(dir, sizeof(dir));
	snprintf(sdir, sizeof(sdir), "%s/shims", dir);
	snprintf(path, sizeof(path), "%s/t.json", dir);
	assert_int_equal(gpuenv_trace_new(&ctx, "gpuenv sync", &t), 0);
	ctx.trace = t;
	assert_int_equal(gpuenv_shim_setup(&ctx, sdir, "/usr/bin/true", &sh), 0);
	assert_int_equal(sh.nenv, 2);
	assert_string_equal(sh.env[0].name, "GPUENV_SHIM_LOG");
	for (const char *const *n = gpuenv_shim_names(); *n; n++) {
		snprintf(link, sizeof(link), "%s/%s", sh.path_prefix, *n);
		assert_int_equal(lstat(link, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_true(gpuenv_shim_is_tool(link));
	}
	assert_false(gpuenv_shim_is_tool("/usr/bin/gpuenv"));
	/* times are absolute (the recorder's epoch + x): nvcc [10,100) with its
	 * gcc [20,50) inside; ld [60,70) overlaps nvcc without nesting in gcc
	 * (nests in nvcc); ar [90,120) overlaps nvcc's end: a second lane; a
	 * cut line and a malformed one skipped */
	FILE *f = fopen(sh.log, "w");
	uint64_t e0 = gpuenv_trace_now();
	fprintf(f, "v1\t%llu\t30\t2\t0\t\tgcc\t/b\t-c\n", (unsigned long long)(e0 + 20));
	fprintf(f, "v1\t%llu\t90\t1\t0\t\tnvcc\t/b\t--version\n", (unsigned long long)(e0 + 10));
	fprintf(f, "v1\t%llu\t10\t3\t1\t\tld\t/b\n", (unsigned long long)(e0 + 60));
	fprintf(f, "v1\t%llu\t30\t4\t0\t\tar\t/b\trcs\n", (unsigned long long)(e0 + 90));
	fprintf(f, "garbage\n");
	fprintf(f, "v1\t%llu\t30\t5\t0\t\tnvcc\t/b", (unsigned long long)(e0 + 200));
	fclose(f);
	size_t skipped = 99;
	assert_int_equal(gpuenv_shim_collect(&ctx, &sh, "flash-attn", &skipped), 0);
	assert_int_equal(skipped, 2);
	assert_int_equal(stat(sdir, &st), -1); /* the shim folder is gone */
	assert_int_equal(gpuenv_trace_write(&ctx, t, path), 0);
	json_t *doc = load(path);
	assert_int_equal(count_ph(doc, "X"), 4);
	/* find the epoch from nvcc's ts: the others are relative to it */
	json_t *ev = json_object_get(doc, "traceEvents"), *e;
	size_t i;
	uint64_t nvts = 0;
	json_array_foreach(ev, i, e) {
		json_t *a = json_object_get(e, "args");
		if (a && json_object_get(a, "tool") && strcmp(json_string_value(json_object_get(a, "tool")), "nvcc") == 0) {
			nvts = (uint64_t)json_integer_value(json_object_get(e, "ts"));
			assert_string_equal(json_string_value(json_object_get(e, "name")), "nvcc flash-attn");
			assert_string_equal(json_string_value(json_object_get(e, "cat")), "tool");
			assert_string_equal(json_string_value(json_array_get(json_object_get(a, "argv"), 0)), "--version");
		}
	}
	long nv = tid_of(doc, "nvcc", nvts), gcc = tid_of(doc, "gcc", nvts + 10);
	long ld = tid_of(doc, "ld", nvts + 50), ar = tid_of(doc, "ar", nvts + 80);
	assert_int_equal(nv, gcc);
	assert_int_equal(nv, ld);
	assert_int_not_equal(nv, ar);
	json_decref(doc);
	gpuenv_trace_free(&ctx, t);
	unlink(path);
	rmdir(dir);
}

/* A build that called no tool: an empty calls file, no span, the folder gone. */
static void test_shims_none(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_trace_t *t;
	gpuenv_shims_t sh;
	char dir[64], sdir[128];
	struct stat st;
	size_t n, dropped, skipped = 9;

	gpuenv_ctx_init(&ctx);
	tmpdir(dir, sizeof(dir));
	snprintf(sdir, sizeof(sdir), "%s/s", dir);
	assert_int_equal(gpuenv_trace_new(&ctx, "x", &t), 0);
	ctx.trace = t;
	assert_int_equal(gpuenv_shim_setup(&ctx, sdir, NULL, &sh), 0);
	assert_int_equal(gpuenv_shim_collect(&ctx, &sh, "p", &skipped), 0);
	assert_int_equal(skipped, 0);
	gpuenv_trace_counts(t, &n, &dropped);
	assert_int_equal(n, 0);
	assert_int_equal(stat(sdir, &st), -1);
	gpuenv_trace_free(&ctx, t);
	rmdir(dir);
}

/* Every allocation of recording and writing fails in turn: the write
 * reports it, nothing crashes, nothing leaks. */
static void test_alloc_failures(void **state)
{
	(void)state;
	testutil_alloc_t ta;
	char dir[64], path[128];

	tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.json", dir);
	for (long k = 0;; k++) {
		gpuenv_ctx_t ctx;
		gpuenv_trace_t *t;
		gpuenv_ctx_init(&ctx);
		testutil_alloc_reset(&ta, k, false);
		ctx.mem = testutil_allocator(&ta);
		int r = gpuenv_trace_new(&ctx, "gpuenv sync", &t);
		if (r) {
			assert_int_equal(r, -ENOMEM);
			continue;
		}
		ctx.trace = t;
		for (int i = 0; i < 50; i++)
			gpuenv_trace_end(&ctx, "install", "unpack", "numpy", "numpy-2.0.whl", gpuenv_trace_begin(&ctx));
		r = gpuenv_trace_write(&ctx, t, path);
		gpuenv_trace_free(&ctx, t);
		if (ta.failures == 0) {
			assert_int_equal(r, 0);
			break;
		}
		assert_int_equal(r, -ENOMEM);
	}
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_threads_and_write),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_shim_parse),
		cmocka_unit_test(test_shims_collect),
		cmocka_unit_test(test_shims_none),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
