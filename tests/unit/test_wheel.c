/* Unit tests for wheel file names, tag sets, targets and tag ranking.
 *
 * The packaging vectors come from $GPUENV_SHARED/testdata/packaging/utils.json.
 * The supported-tag lists are checked against packaging 23.0 (Debian's
 * python3-packaging, the order pip uses: linux_ARCH after manylinux): count,
 * first and last tag, and the SHA-256 of the list joined with "\n" (plus a
 * final "\n").  They were produced with cpython_tags(version, [abi],
 * platforms) + compatible_tags(version, interpreter, platforms) (generic_tags
 * and "pp3" for PyPy), the platforms from _manylinux.platform_tags with the
 * glibc version patched in, mac_platforms(version, arch), or the one Windows /
 * linux platform.  One correction: packaging 23.0 names the three-way macOS
 * universal binary "fat32"; later packaging (and the test vectors' version)
 * fixed it to "fat3", which we follow, so the macOS lists were hashed with
 * that replacement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/hash.h"
#include "gpuenv/wheel.h"

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

static int parse(const char *name, unsigned flags, gpuenv_wheel_name_t *w)
{
	return gpuenv_wheel_name_parse(&ctx, &arena, gpuenv_str(name), flags, w);
}

static char *fmt_tag(const gpuenv_tag_t *t, char *out, size_t n)
{
	snprintf(out, n, GPUENV_STR_FMT "-" GPUENV_STR_FMT "-" GPUENV_STR_FMT,
		GPUENV_STR_ARG(t->interpreter), GPUENV_STR_ARG(t->abi), GPUENV_STR_ARG(t->platform));
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- the packaging vectors ---- */

static void test_packaging_vectors(void **state)
{
	(void)state;
	const char *shared = getenv("GPUENV_SHARED");
	char path[1024];
	json_error_t jerr;
	size_t counts[8] = { 0 }, total = 0;

	if (!shared)
		skip();
	snprintf(path, sizeof(path), "%s/testdata/packaging/utils.json", shared);
	json_t *root = json_load_file(path, 0, &jerr);
	assert_non_null(root);
	json_t *cases = json_object_get(root, "cases");
	size_t i;
	json_t *c;
	json_array_foreach(cases, i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *fn = json_string_value(json_object_get(c, "filename"));
		unsigned flags = json_is_true(json_object_get(c, "validate_order"))
			? GPUENV_TAG_VALIDATE_ORDER : 0;
		gpuenv_wheel_name_t w;
		gpuenv_sdist_name_t sd;
		int r;

		if (strcmp(kind, "wheel_filename") == 0) {
			r = parse(fn, flags, &w);
			if (r)
				fail_msg("%s: %s", fn, ctx.err.msg);
			assert_true(gpuenv_str_eq_cstr(w.normalized,
				json_string_value(json_object_get(c, "name"))));
			gpuenv_version_t want;
			assert_int_equal(gpuenv_version_parse(&ctx, &arena,
				gpuenv_str(json_string_value(json_object_get(c, "version"))), &want), 0);
			assert_int_equal(gpuenv_version_cmp(&w.version, &want), 0);
			json_t *b = json_object_get(c, "build");
			if (json_array_size(b) == 0) {
				assert_false(w.has_build);
			} else {
				assert_true(w.has_build);
				assert_true(w.build_number ==
					(uint64_t)json_integer_value(json_array_get(b, 0)));
				assert_true(gpuenv_str_eq_cstr(w.build_suffix,
					json_string_value(json_array_get(b, 1))));
			}
			json_t *tags = json_object_get(c, "tags");
			assert_int_equal(w.ntags, json_array_size(tags));
			char **got = calloc(w.ntags, sizeof(*got));
			for (size_t k = 0; k < w.ntags; k++) {
				got[k] = malloc(256);
				fmt_tag(&w.tags[k], got[k], 256);
			}
			qsort(got, w.ntags, sizeof(*got), cmp_str);
			for (size_t k = 0; k < w.ntags; k++) {
				assert_string_equal(got[k], json_string_value(json_array_get(tags, k)));
				free(got[k]);
			}
			free(got);
			counts[0]++;
		} else if (strcmp(kind, "wheel_filename_valid") == 0) {
			r = parse(fn, flags, &w);
			if (r)
				fail_msg("%s: %s", fn, ctx.err.msg);
			counts[1]++;
		} else if (strcmp(kind, "wheel_filename_invalid") == 0) {
			r = parse(fn, flags, &w);
			if (r != GPUENV_EWHEELNAME)
				fail_msg("%s (validate_order=%u) should be invalid", fn, flags);
			counts[2]++;
		} else if (strcmp(kind, "sdist_filename") == 0) {
			r = gpuenv_sdist_name_parse(&ctx, &arena, gpuenv_str(fn), &sd);
			if (r)
				fail_msg("%s: %s", fn, ctx.err.msg);
			assert_true(gpuenv_str_eq_cstr(sd.normalized,
				json_string_value(json_object_get(c, "name"))));
			gpuenv_version_t want;
			assert_int_equal(gpuenv_version_parse(&ctx, &arena,
				gpuenv_str(json_string_value(json_object_get(c, "version"))), &want), 0);
			assert_int_equal(gpuenv_version_cmp(&sd.version, &want), 0);
			counts[3]++;
		} else if (strcmp(kind, "sdist_filename_invalid") == 0) {
			r = gpuenv_sdist_name_parse(&ctx, &arena, gpuenv_str(fn), &sd);
			if (r != GPUENV_EWHEELNAME)
				fail_msg("%s should be an invalid sdist name", fn);
			counts[4]++;
		} else {
			continue;
		}
		total++;
	}
	printf("packaging utils.json: wheel_filename %zu, wheel_filename_valid %zu, "
	       "wheel_filename_invalid %zu, sdist_filename %zu, sdist_filename_invalid %zu: "
	       "%zu/%zu pass\n",
		counts[0], counts[1], counts[2], counts[3], counts[4], total, total);
	assert_int_equal(counts[0], 8);
	assert_int_equal(counts[1], 2);
	assert_int_equal(counts[2], 16);
	assert_int_equal(counts[3], 2);
	assert_int_equal(counts[4], 5);
	json_decref(root);
}

/* ---- names: details beyond the vectors ---- */

static void test_wheel_names(void **state)
{
	(void)state;
	gpuenv_wheel_name_t w, w2;
	char buf[256];

	assert_int_equal(parse("torch-2.5.1+cu121-cp312-cp312-linux_x86_64.whl", 0, &w), 0);
	assert_true(gpuenv_str_eq_cstr(w.name, "torch"));
	assert_true(gpuenv_str_eq_cstr(w.version_text, "2.5.1+cu121"));
	assert_int_equal(w.ntags, 1);
	assert_string_equal(fmt_tag(&w.tags[0], buf, sizeof(buf)), "cp312-cp312-linux_x86_64");

	/* tags are lower-cased and duplicates dropped, as packaging's Tag/frozenset */
	assert_int_equal(parse("Foo.Bar-1.0-PY3.py3.py2-None-ANY.whl", 0, &w), 0);
	assert_true(gpuenv_str_eq_cstr(w.normalized, "foo-bar"));
	assert_int_equal(w.ntags, 2);
	assert_string_equal(fmt_tag(&w.tags[0], buf, sizeof(buf)), "py3-none-any");
	assert_string_equal(fmt_tag(&w.tags[1], buf, sizeof(buf)), "py2-none-any");

	/* build tags */
	assert_int_equal(parse("simplewheel-2.0-1-py2.py3-none-any.whl", 0, &w), 0);
	assert_true(w.has_build && w.build_number == 1 && w.build_suffix.len == 0);
	assert_int_equal(parse("simplewheel-2.0-py2.py3-none-any.whl", 0, &w2), 0);
	assert_true(gpuenv_wheel_build_cmp(&w2, &w) < 0);
	assert_int_equal(parse("a-1-2b-py3-none-any.whl", 0, &w2), 0);
	assert_true(gpuenv_wheel_build_cmp(&w, &w2) < 0);
	assert_int_equal(parse("a-1-18446744073709551616-py3-none-any.whl", 0, &w), GPUENV_EWHEELNAME);

	/* errors carry a column and a readable message */
	assert_int_equal(parse("foo-1.0-py3.-none-any.whl", 0, &w), GPUENV_EWHEELNAME);
	assert_int_equal(ctx.err.col, 13);
	assert_non_null(strstr(ctx.err.msg, "empty part"));
	assert_int_equal(parse("foo-1.x-py3-none-any.whl", 0, &w), GPUENV_EWHEELNAME);
	assert_int_equal(ctx.err.col, 5);
	assert_int_equal(parse("foo\x01-1.0-py3-none-any.whl", 0, &w), GPUENV_EWHEELNAME);
	assert_non_null(strstr(ctx.err.msg, "\\x01"));

	/* non-ASCII word characters pass; malformed UTF-8 and punctuation do not */
	assert_int_equal(parse("caf\xc3\xa9-1.0-py3-none-any.whl", 0, &w), 0);
	assert_int_equal(parse("caf\xc3-1.0-py3-none-any.whl", 0, &w), GPUENV_EWHEELNAME);
	assert_int_equal(parse("a\xe2\x80\x94" "b-1.0-py3-none-any.whl", 0, &w), GPUENV_EWHEELNAME);

	/* a tag-set bomb stops at the cap */
	char big[GPUENV_WHEEL_NAME_MAX];
	size_t o = (size_t)snprintf(big, sizeof(big), "a-1-");
	for (int k = 0; k < 70; k++)
		o += (size_t)snprintf(big + o, sizeof(big) - o, "%sp%d", k ? "." : "", k);
	o += (size_t)snprintf(big + o, sizeof(big) - o, "-");
	for (int k = 0; k < 70; k++)
		o += (size_t)snprintf(big + o, sizeof(big) - o, "%sa%d", k ? "." : "", k);
	snprintf(big + o, sizeof(big) - o, "-any.whl");
	assert_int_equal(parse(big, 0, &w), GPUENV_ETOOBIG);

	/* bare tag sets */
	size_t n;
	gpuenv_tag_t *t;
	assert_int_equal(gpuenv_tag_parse(&ctx, &arena, gpuenv_str("cp39.cp38-abi3-manylinux1_x86_64"),
		GPUENV_TAG_VALIDATE_ORDER, &n, &t), GPUENV_EWHEELNAME);
	assert_int_equal(gpuenv_tag_parse(&ctx, &arena, gpuenv_str("cp38.cp39-abi3-manylinux1_x86_64"),
		GPUENV_TAG_VALIDATE_ORDER, &n, &t), 0);
	assert_int_equal(n, 2);
	assert_int_equal(gpuenv_tag_parse(&ctx, &arena, gpuenv_str("py3-none"), 0, &n, &t),
		GPUENV_EWHEELNAME);
	assert_int_equal(gpuenv_tag_parse(&ctx, &arena, gpuenv_str("3py-none-any"), 0, &n, &t),
		GPUENV_EWHEELNAME);
	gpuenv_tag_t a = { GPUENV_STR_LIT("py3"), GPUENV_STR_LIT("none"), GPUENV_STR_LIT("any") };
	gpuenv_tag_t b = { GPUENV_STR_LIT("py3"), GPUENV_STR_LIT("none-"), GPUENV_STR_LIT("") };
	assert_true(gpuenv_tag_cmp(&a, &a) == 0);
	assert_true(gpuenv_tag_cmp(&a, &b) != 0);

	/* sdists: the version follows the last dash */
	gpuenv_sdist_name_t sd;
	assert_int_equal(gpuenv_sdist_name_parse(&ctx, &arena, gpuenv_str("zope.interface-6.0.tar.gz"),
		&sd), 0);
	assert_true(gpuenv_str_eq_cstr(sd.normalized, "zope-interface"));
	assert_int_equal(gpuenv_sdist_name_parse(&ctx, &arena, gpuenv_str("my-pkg-1.0.zip"), &sd), 0);
	assert_true(gpuenv_str_eq_cstr(sd.name, "my-pkg"));
}

/* ---- supported tags ---- */

static const struct golden {
	const char *target;
	size_t count;
	const char *sha256, *first, *last;
} goldens[] = {
	{ "cp312-manylinux_2_35_x86_64", 960, "5ded0135db89e19a4794d67dcd444a99470b55be3964379e75b5783916d2c262", "cp312-cp312-manylinux_2_35_x86_64", "py30-none-any" },
	{ "cp311-manylinux_2_28_aarch64", 364, "a1f8de93e22199f585b7af895dd36422d54384a59f47afcc36690284a6cadc38", "cp311-cp311-manylinux_2_28_aarch64", "py30-none-any" },
	{ "cp310-manylinux2014_x86_64", 404, "859974f5cc76ab78bd82b2310597e4134f41139c379a85654c4ebb74f2f532c4", "cp310-cp310-manylinux_2_17_x86_64", "py30-none-any" },
	{ "cp39-musllinux_1_2_x86_64", 96, "228b639f746c50db943dcd47040865ebe55ede92618ee0a84765dabaf295cd49", "cp39-cp39-musllinux_1_2_x86_64", "py30-none-any" },
	{ "cp37-manylinux1_x86_64", 61, "995a945c2f6b098d49e76fefbf2ecec64a718489d53e4735afd01724112b273f", "cp37-cp37m-manylinux_2_5_x86_64", "py30-none-any" },
	{ "pp310-manylinux_2_17_x86_64", 251, "eb0732223378770ca635b12edb17fbb6ffccc9819bd13ea79f89de7f367b7116", "pp310-pypy310_pp73-manylinux_2_17_x86_64", "py30-none-any" },
	{ "cp312-macosx_14_0_arm64", 582, "0fc0d703a059b8bc8e07a002201125119054fc650ee3ac5809304b87d07a2296", "cp312-cp312-macosx_14_0_arm64", "py30-none-any" },
	{ "cp39-macosx_10_9_x86_64", 768, "5daf783d0b4e475c5816a202428fa11e30b7e9806025d02f4e0e6a117f2267ed", "cp39-cp39-macosx_10_9_x86_64", "py30-none-any" },
	{ "cp312-macosx_11_0_x86_64", 2283, "23c2934a077242dd55f4725e2f45fb5e0a9acce4b86e6268a86d20a87f5c024d", "cp312-cp312-macosx_11_0_x86_64", "py30-none-any" },
	{ "cp311-win_amd64", 39, "8e4e9da1703608e5b5ef85f26bf8702f08b1d7c91bec263db128f3ce94061376", "cp311-cp311-win_amd64", "py30-none-any" },
	{ "cp312-linux_x86_64", 42, "0d9cdc0f40f3f6dbf4e04110bc371c5afe0dd50e0463f32827217d8eb1f22467", "cp312-cp312-linux_x86_64", "py30-none-any" },
};

static gpuenv_tagset_t *build(const char *spec)
{
	gpuenv_wheel_target_t t;
	gpuenv_tagset_t *set = NULL;

	if (gpuenv_wheel_target_parse(&ctx, gpuenv_str(spec), &t))
		fail_msg("%s: %s", spec, ctx.err.msg);
	if (gpuenv_tagset_build(&ctx, &t, &set))
		fail_msg("%s: %s", spec, ctx.err.msg);
	return set;
}

static void test_sys_tags_golden(void **state)
{
	(void)state;
	for (size_t g = 0; g < sizeof(goldens) / sizeof(goldens[0]); g++) {
		gpuenv_tagset_t *set = build(goldens[g].target);
		gpuenv_sha256_t h;
		unsigned char d[GPUENV_SHA256_LEN];
		char hex[2 * GPUENV_SHA256_LEN + 1];
		size_t n = gpuenv_tagset_count(set);

		if (n != goldens[g].count)
			fail_msg("%s: %zu tags, packaging gives %zu", goldens[g].target, n,
				goldens[g].count);
		assert_string_equal(gpuenv_tagset_get(set, 0), goldens[g].first);
		assert_string_equal(gpuenv_tagset_get(set, n - 1), goldens[g].last);
		assert_null(gpuenv_tagset_get(set, n));
		assert_int_equal(gpuenv_sha256_init(&h), 0);
		for (size_t i = 0; i < n; i++) {
			const char *s = gpuenv_tagset_get(set, i);
			gpuenv_sha256_update(&h, s, strlen(s));
			gpuenv_sha256_update(&h, "\n", 1);
		}
		assert_int_equal(gpuenv_sha256_final(&h, d), 0);
		gpuenv_hex(d, sizeof(d), hex);
		if (strcmp(hex, goldens[g].sha256) != 0)
			fail_msg("%s: tag list differs from packaging's", goldens[g].target);
		/* every tag ranks at its own index */
		for (size_t i = 0; i < n; i++) {
			gpuenv_wheel_name_t w;
			char name[256];
			snprintf(name, sizeof(name), "x-1-%s.whl", gpuenv_tagset_get(set, i));
			assert_int_equal(parse(name, 0, &w), 0);
			assert_int_equal(gpuenv_tagset_rank_wheel(set, &w), (long)i);
		}
		gpuenv_tagset_free(set);
	}
}

static long rank(gpuenv_tagset_t *set, const char *file)
{
	gpuenv_wheel_name_t w;
	if (parse(file, 0, &w))
		fail_msg("%s: %s", file, ctx.err.msg);
	return gpuenv_tagset_rank_wheel(set, &w);
}

static void test_ranking(void **state)
{
	(void)state;
	gpuenv_tagset_t *set = build("cp312-manylinux_2_35_x86_64");
	long native = rank(set, "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl");
	long abi3 = rank(set, "cryptography-44.0.0-cp39-abi3-manylinux_2_28_x86_64.whl");
	long legacy = rank(set, "numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
	long pure = rank(set, "six-1.16.0-py2.py3-none-any.whl");
	long local = rank(set, "mypkg-1.0-cp312-cp312-linux_x86_64.whl");

	assert_true(native >= 0 && abi3 > native && pure > abi3);
	assert_true(legacy > native && legacy < abi3);
	assert_true(local > legacy && local < abi3);
	assert_int_equal(rank(set, "x-1-cp311-cp311-manylinux_2_17_x86_64.whl"), -1);
	assert_int_equal(rank(set, "x-1-cp312-cp312-manylinux_2_36_x86_64.whl"), -1);
	assert_int_equal(rank(set, "x-1-cp312-cp312-musllinux_1_2_x86_64.whl"), -1);
	assert_int_equal(rank(set, "x-1-cp312-cp312-manylinux_2_17_aarch64.whl"), -1);
	assert_int_equal(rank(set, "x-1-cp312-cp312t-manylinux_2_17_x86_64.whl"), -1);
	assert_true(rank(set, "x-1-cp312-cp312-MANYLINUX_2_17_X86_64.whl") >= 0);
	gpuenv_tag_t up = { GPUENV_STR_LIT("CP312"), GPUENV_STR_LIT("Cp312"),
		GPUENV_STR_LIT("manylinux_2_35_X86_64") };
	assert_int_equal(gpuenv_tagset_rank(set, &up), 0);
	gpuenv_tagset_free(set);

	/* aarch64: manylinux starts at 2.17 */
	set = build("cp311-manylinux_2_28_aarch64");
	assert_int_equal(rank(set, "x-1-cp311-cp311-manylinux_2_12_aarch64.whl"), -1);
	assert_true(rank(set, "x-1-cp311-cp311-manylinux2014_aarch64.whl") >= 0);
	gpuenv_tagset_free(set);

	/* free-threaded: cp313t and abi3t, never abi3 */
	set = build("cp313t-manylinux_2_28_x86_64");
	assert_string_equal(gpuenv_tagset_get(set, 0), "cp313-cp313t-manylinux_2_28_x86_64");
	assert_int_equal(rank(set, "x-1-cp313-cp313-manylinux_2_28_x86_64.whl"), -1);
	assert_int_equal(rank(set, "x-1-cp39-abi3-manylinux_2_28_x86_64.whl"), -1);
	assert_true(rank(set, "x-1-cp39-abi3t-manylinux_2_28_x86_64.whl") >= 0);
	assert_true(rank(set, "x-1-py3-none-any.whl") >= 0);
	gpuenv_tagset_free(set);

	/* debug builds take the d ABI first, then the normal one */
	set = build("cp312d-linux_x86_64");
	assert_string_equal(gpuenv_tagset_get(set, 0), "cp312-cp312d-linux_x86_64");
	assert_string_equal(gpuenv_tagset_get(set, 1), "cp312-cp312-linux_x86_64");
	gpuenv_tagset_free(set);

	/* musl */
	set = build("cp312-musllinux_1_2_aarch64");
	assert_true(rank(set, "x-1-cp312-cp312-musllinux_1_1_aarch64.whl") >= 0);
	assert_int_equal(rank(set, "x-1-cp312-cp312-manylinux_2_17_aarch64.whl"), -1);
	gpuenv_tagset_free(set);

	/* packaging >= 26.3 order: linux_ARCH first */
	gpuenv_wheel_target_t t;
	assert_int_equal(gpuenv_wheel_target_parse(&ctx, gpuenv_str("cp312-manylinux_2_17_x86_64"), &t), 0);
	t.linux_first = true;
	assert_int_equal(gpuenv_tagset_build(&ctx, &t, &set), 0);
	assert_string_equal(gpuenv_tagset_get(set, 0), "cp312-cp312-linux_x86_64");
	assert_string_equal(gpuenv_tagset_get(set, 1), "cp312-cp312-manylinux_2_17_x86_64");
	gpuenv_tagset_free(set);

	/* armv8l: armv7l wheels too */
	set = build("cp311-manylinux_2_31_armv8l");
	assert_true(rank(set, "x-1-cp311-cp311-manylinux_2_31_armv7l.whl") >= 0);
	assert_true(rank(set, "x-1-cp311-cp311-linux_armv7l.whl") >= 0);
	gpuenv_tagset_free(set);

	/* Windows */
	set = build("cp311-win32");
	assert_string_equal(gpuenv_tagset_get(set, 0), "cp311-cp311-win32");
	gpuenv_tagset_free(set);
}

static void test_target_parse(void **state)
{
	(void)state;
	gpuenv_wheel_target_t t;

	assert_int_equal(gpuenv_wheel_target_parse(&ctx, gpuenv_str("cp312-manylinux_2_35_x86_64"), &t), 0);
	assert_int_equal(t.impl, GPUENV_IMPL_CPYTHON);
	assert_int_equal(t.py_minor, 12);
	assert_int_equal(t.os, GPUENV_OS_LINUX);
	assert_int_equal(t.libc_major, 2);
	assert_int_equal(t.libc_minor, 35);
	assert_string_equal(t.arch, "x86_64");
	assert_int_equal(gpuenv_wheel_target_parse(&ctx, gpuenv_str("cp310-manylinux2010_i686"), &t), 0);
	assert_int_equal(t.libc_minor, 12);
	assert_string_equal(t.arch, "i686");
	assert_int_equal(gpuenv_wheel_target_parse(&ctx, gpuenv_str("pp39-macosx_10_15_x86_64"), &t), 0);
	assert_int_equal(t.impl, GPUENV_IMPL_PYPY);
	assert_int_equal(t.os, GPUENV_OS_MACOS);
	assert_int_equal(t.os_major, 10);
	assert_int_equal(t.os_minor, 15);

	static const char *const bad[] = { "", "cp312", "py312-linux_x86_64", "cp2-linux_x86_64",
		"cp312x-linux_x86_64", "cp311t-linux_x86_64", "cp312-manylinux_2_x86_64",
		"cp312-freebsd_13_amd64", "cp312-linux_", "cp312-linux_x86-64", "pp310t-linux_x86_64",
		"cp312-musllinux_x_1_x86_64", "cp312-macosx_9_0_x86_64" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (gpuenv_wheel_target_parse(&ctx, gpuenv_str(bad[i]), &t) != GPUENV_ESYNTAX)
			fail_msg("'%s' should be refused", bad[i]);
		assert_true(ctx.err.hint[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_packaging_vectors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wheel_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sys_tags_golden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranking, setup, teardown),
		cmocka_unit_test_setup_teardown(test_target_parse, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
