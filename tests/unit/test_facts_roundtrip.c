/* The facts' one typed path: probe -> JSON -> decode -> JSON gives the same
 * bytes (lib/hw/probe.c fills gpuenv_facts_t, lib/facts/write.c writes it,
 * lib/facts/decode.c reads it back into the same struct).  Over the real
 * H200 snapshots and every doctor fixture, a live probe of this machine
 * (its CUDA toolkit in /usr/local/cuda when there is one), and the probe
 * of the H200 test tree with the fake NVML in its scenarios; the writer
 * with every allocation failing in turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/facts.h"
#include "gpuenv/probe.h"
#include "testutil.h"

static char *dump(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2));

	assert_non_null(s);
	return s;
}

/* The document's three parts, each written alone (as probe --json writes
 * the stack's while NVML starts), one after the other: the whole text. */
static void assert_parts(gpuenv_ctx_t *ctx, const gpuenv_facts_t *f, const char *whole,
	const char *name)
{
	static const unsigned parts[] = { GPUENV_FACTS_HEAD, GPUENV_FACTS_STACK, GPUENV_FACTS_TAIL };
	gpuenv_buf_t b;

	gpuenv_buf_init(&b, ctx, GPUENV_BUF_DEFAULT_MAX);
	for (size_t i = 0; i < 3; i++)
		if (gpuenv_facts_write_parts(ctx, f, &b, 2, parts[i]) != 0)
			fail_msg("%s: write part %zu: %s", name, i, ctx->err.msg);
	if (strcmp(b.data ? b.data : "", whole) != 0)
		fail_msg("%s: the parts written alone are not the document:\n%.300s", name,
			b.data ? b.data : "");
	gpuenv_buf_free(&b);
}

/* decode(doc) written again: the text, malloc'd. */
static char *rewrite(gpuenv_ctx_t *ctx, const json_t *doc, const char *name)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;
	json_t *out;
	char *s;

	gpuenv_arena_init(&a, ctx, 0);
	if (gpuenv_facts_decode(ctx, &a, doc, name, &f) != 0)
		fail_msg("%s: decode: %s", name, ctx->err.msg);
	if (gpuenv_facts_json(ctx, f, &out) != 0)
		fail_msg("%s: write: %s", name, ctx->err.msg);
	s = dump(out);
	json_decref(out);
	/* the writer's own text (what probe --json prints, no tree between)
	 * is jansson's text of the same document, byte for byte */
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, ctx, GPUENV_BUF_DEFAULT_MAX);
	if (gpuenv_facts_write(ctx, f, &b, 2) != 0)
		fail_msg("%s: write text: %s", name, ctx->err.msg);
	if (strcmp(b.data, s) != 0)
		fail_msg("%s: the written text is not jansson's:\n%.300s\nvs\n%.300s", name, b.data, s);
	assert_parts(ctx, f, b.data, name);
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&a);
	return s;
}

/* The document doc, decoded and written, is doc again, byte for byte. */
static void assert_round_trip(gpuenv_ctx_t *ctx, const json_t *doc, const char *name)
{
	char *a = dump(doc), *b = rewrite(ctx, doc, name);

	if (strcmp(a, b) != 0) {
		size_t i = 0;
		while (a[i] && a[i] == b[i])
			i++;
		fail_msg("%s: the round trip differs at byte %zu:\n...%.200s\nvs\n...%.200s", name, i,
			a + (i > 80 ? i - 80 : 0), b + (i > 80 ? i - 80 : 0));
	}
	free(a);
	free(b);
}

/* ---- snapshots ---------------------------------------------------------- */

/* A snapshot file: the same facts as a JSON value (written with the keys
 * in the schema's order, so compared as values), and written twice the
 * same bytes. */
static void snapshot(const char *rel)
{
	gpuenv_ctx_t ctx;
	json_error_t je;
	size_t len;
	char *text = testutil_read_source(&len, "%s", rel), *s;
	json_t *doc = json_loadb(text, len, 0, &je), *again;

	free(text);
	if (!doc)
		fail_msg("%s: %s", rel, je.text);
	gpuenv_ctx_init(&ctx);
	s = rewrite(&ctx, doc, rel);
	again = json_loads(s, 0, &je);
	assert_non_null(again);
	if (!json_equal(doc, again))
		fail_msg("%s: decode -> JSON lost or changed a fact", rel);
	assert_round_trip(&ctx, again, rel);
	json_decref(again);
	json_decref(doc);
	free(s);
}

static void test_h200_snapshots(void **state)
{
	(void)state;
	snapshot("tests/fixtures/doctor/h200-probe-2026-11-29/facts.json");
	snapshot("tests/fixtures/doctor/h200-2026-11-29/facts.json");
}

static void test_doctor_fixtures(void **state)
{
	const char *src = getenv("GPUENV_SRC");
	char dir[4096], rel[4096];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tests/fixtures/doctor", src && *src ? src : ".");
	assert_non_null(d = opendir(dir));
	while ((e = readdir(d)) != NULL) {
		char path[8192];
		FILE *fp;
		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "tests/fixtures/doctor/%s/facts.json", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(path, sizeof(path), "%s/%s/facts.json", dir, e->d_name);
		if (!(fp = fopen(path, "r")))
			continue;
		fclose(fp);
		snapshot(rel);
		n++;
	}
	closedir(d);
	assert_true(n >= 20); /* the scenarios are there */
}

/* ---- live probes -------------------------------------------------------- */

/* Probe with opts under ctx, and check the document's round trip and that
 * the typed facts the probe gives write the same document (taken_at and
 * probe_ms aside: two probes). */
static void probe_round_trip(gpuenv_ctx_t *ctx, const gpuenv_probe_opts_t *po, const char *what)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;
	json_t *doc, *typed;

	if (gpuenv_probe_facts_json(ctx, po, &doc) != 0)
		fail_msg("%s: probe: %s", what, ctx->err.msg);
	assert_round_trip(ctx, doc, what);
	gpuenv_arena_init(&a, ctx, 0);
	assert_int_equal(gpuenv_probe_facts(ctx, po, &a, &f), 0);
	assert_int_equal(gpuenv_facts_json(ctx, f, &typed), 0);
	gpuenv_arena_free(&a);
	json_object_del(doc, "taken_at");
	json_object_del(doc, "probe_ms");
	json_object_del(typed, "taken_at");
	json_object_del(typed, "probe_ms");
	if (!json_equal(doc, typed))
		fail_msg("%s: two probes of one machine differ", what);
	json_decref(typed);

	/* in two halves (probe --json): the partial facts are the final
	 * struct, its stack already complete, and the same document */
	const gpuenv_facts_t *partial, *whole;
	gpuenv_probe_t *P;
	gpuenv_buf_t early, late;
	gpuenv_arena_init(&a, ctx, 0);
	assert_int_equal(gpuenv_probe_begin(ctx, po, &a, &P, &partial), 0);
	assert_non_null(partial);
	assert_int_equal(partial->ngpus, 0);
	gpuenv_buf_init(&early, ctx, GPUENV_BUF_DEFAULT_MAX);
	gpuenv_buf_init(&late, ctx, GPUENV_BUF_DEFAULT_MAX);
	assert_int_equal(gpuenv_facts_write_parts(ctx, partial, &early, 2, GPUENV_FACTS_STACK), 0);
	assert_int_equal(gpuenv_probe_end(P, ctx, &whole), 0);
	assert_ptr_equal(partial, whole);
	assert_int_equal(gpuenv_facts_write_parts(ctx, whole, &late, 2, GPUENV_FACTS_STACK), 0);
	assert_string_equal(early.data ? early.data : "", late.data ? late.data : "");
	assert_int_equal(gpuenv_facts_json(ctx, whole, &typed), 0);
	json_object_del(typed, "taken_at");
	json_object_del(typed, "probe_ms");
	if (!json_equal(doc, typed))
		fail_msg("%s: the probe in two halves differs", what);
	json_decref(typed);
	gpuenv_buf_free(&early);
	gpuenv_buf_free(&late);
	gpuenv_arena_free(&a);
	json_decref(doc);
}

static void test_this_machine(void **state)
{
	gpuenv_ctx_t ctx;
	gpuenv_probe_opts_t po;

	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_probe_opts_init(&po);
	po.version = "0.0.0-test";
	probe_round_trip(&ctx, &po, "this machine");
	po.flags |= GPUENV_PROBE_ALL_BINARIES;
	probe_round_trip(&ctx, &po, "this machine --all-binaries");
	po.flags = GPUENV_PROBE_NO_LIBS;
	probe_round_trip(&ctx, &po, "this machine --gpus-only");
}

static void test_fake_nvml(void **state)
{
	static const char *const scenarios[] = { "h200", "mig", "nvlink", "lost" };
	const char *src = getenv("GPUENV_SRC"), *fake = getenv("GPUENV_FAKE_NVML");
	char root[4096];
	gpuenv_ctx_t ctx;
	gpuenv_probe_opts_t po;

	(void)state;
	assert_non_null(fake);
	snprintf(root, sizeof(root), "%s/tests/fixtures/hw/h200", src && *src ? src : ".");
	gpuenv_ctx_init(&ctx);
	ctx.root = root;
	gpuenv_probe_opts_init(&po);
	po.hw.nvml_lib = fake;
	po.hw.cuda_lib = fake;
	po.flags |= GPUENV_PROBE_DEEP;
	setenv("FAKE_CUDA_SCENARIO", "driver", 1);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		json_t *doc;
		setenv("FAKE_NVML_SCENARIO", scenarios[i], 1);
		probe_round_trip(&ctx, &po, scenarios[i]);
		/* the scenario is what the probe saw: GPUs listed */
		assert_int_equal(gpuenv_probe_facts_json(&ctx, &po, &doc), 0);
		assert_true(json_array_size(json_object_get(doc, "gpus")) > 0);
		if (i == 0) /* the fake NVML answered, not sysfs alone */
			assert_string_equal(json_string_value(json_object_get(json_object_get(
				json_object_get(doc, "driver"), "nvml"), "state")), "ok");
		json_decref(doc);
	}
}

/* ---- the writer when memory runs out ------------------------------------ */

static void test_write_oom(void **state)
{
	const char *src = getenv("GPUENV_SRC");
	char root[4096];
	gpuenv_ctx_t ctx, c;
	gpuenv_arena_t a;
	gpuenv_probe_opts_t po;
	const gpuenv_facts_t *f;
	testutil_alloc_t t;
	json_t *out;
	long n;

	(void)state;
	/* the H200 test tree's driver and GPUs (sysfs and procfs) */
	snprintf(root, sizeof(root), "%s/tests/fixtures/hw/h200", src && *src ? src : ".");
	gpuenv_ctx_init(&ctx);
	ctx.root = root;
	gpuenv_probe_opts_init(&po);
	po.flags = GPUENV_PROBE_NO_LIBS;
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_probe_facts(&ctx, &po, &a, &f), 0);
	gpuenv_ctx_init(&c);
	c.mem = testutil_allocator(&t);
	for (n = 0;; n++) {
		int rc;
		testutil_alloc_reset(&t, n, false);
		rc = gpuenv_facts_json(&c, f, &out);
		if (rc == 0) {
			json_decref(out);
			break;
		}
		assert_int_equal(rc, -ENOMEM);
		assert_null(out);
		assert_int_equal(c.err.code, -ENOMEM);
	}
	assert_true(n > 50); /* every allocation of the document failed once */
	gpuenv_arena_free(&a);
}

/* A key a list gives twice (a GPU's sources, a toolkit's components) is
 * one member, at its first place with its last value: what jansson's
 * object holds after setting each in turn, and so what the text says. */
static void test_write_repeated_keys(void **state)
{
	gpuenv_ctx_t ctx;
	gpuenv_facts_t f;
	gpuenv_facts_gpu_t g;
	gpuenv_facts_toolkit_t tk;
	const gpuenv_facts_kv_t src[] = { { "name", "nvml" }, { "memory", "sysfs" }, { "name", "kb" } };
	const gpuenv_facts_component_t comps[] = { { "nvcc", "13.0", "a" }, { "cudart", "13.0", "b" },
		{ "nvcc", "13.1", "c" } };
	json_t *doc;
	gpuenv_buf_t b;
	char *want;

	(void)state;
	gpuenv_ctx_init(&ctx);
	memset(&f, 0, sizeof(f));
	memset(&g, 0, sizeof(g));
	memset(&tk, 0, sizeof(tk));
	f.schema = "gpuenv.facts/1";
	f.probe_ms = -1;
	g.index = 0;
	g.sources.items = src;
	g.sources.n = 3;
	f.gpus = &g;
	f.ngpus = 1;
	tk.components = comps;
	tk.ncomponents = 3;
	f.toolkits = &tk;
	f.ntoolkits = 1;
	f.have_toolkits = true;
	assert_int_equal(gpuenv_facts_json(&ctx, &f, &doc), 0);
	json_t *s = json_object_get(json_array_get(json_object_get(doc, "gpus"), 0), "sources");
	assert_int_equal(json_object_size(s), 2);
	assert_string_equal(json_string_value(json_object_get(s, "name")), "kb");
	assert_string_equal(json_string_value(json_object_iter_value(json_object_iter(s))), "kb");
	json_t *c = json_object_get(json_array_get(json_object_get(doc, "toolkits"), 0), "components");
	assert_int_equal(json_object_size(c), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(c, "nvcc"), "version")), "13.1");
	want = dump(doc);
	json_decref(doc);
	gpuenv_buf_init(&b, &ctx, GPUENV_BUF_DEFAULT_MAX);
	assert_int_equal(gpuenv_facts_write(&ctx, &f, &b, 2), 0);
	assert_string_equal(b.data, want);
	gpuenv_buf_free(&b);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h200_snapshots),
		cmocka_unit_test(test_doctor_fixtures),
		cmocka_unit_test(test_this_machine),
		cmocka_unit_test(test_fake_nvml),
		cmocka_unit_test(test_write_oom),
		cmocka_unit_test(test_write_repeated_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
