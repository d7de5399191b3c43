/* pypa/packaging's test vectors for versions, specifiers and names, read from
 * $GPUENV_SHARED/testdata/packaging/{versions_sorted,specifiers,utils}.json.
 *
 * Every case of the kinds this module owns is run; the counts per kind are
 * printed and checked against the files' own "counts", so a case cannot be
 * skipped silently.  A case we believe upstream gets wrong goes in
 * `disputed` below with the reason (mirrored in docs/packaging-vectors.md):
 * it must then fail here, or the entry is stale and the test fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep440.h"

/* ---- disputed cases ------------------------------------------------------ */

struct disputed {
	const char *file;
	const char *kind;
	size_t index; /* position in the file's "cases" array */
	const char *reason;
};

/* None so far: every case of ours passes as upstream states it. */
static const struct disputed disputed[] = {
	{ NULL, NULL, 0, NULL },
};

static const struct disputed *find_disputed(const char *file, size_t index)
{
	for (size_t i = 0; i < sizeof(disputed) / sizeof(disputed[0]); i++)
		if (disputed[i].file && strcmp(disputed[i].file, file) == 0 &&
			disputed[i].index == index)
			return &disputed[i];
	return NULL;
}

/* ---- bookkeeping --------------------------------------------------------- */

#define MAXKINDS 40

struct tally {
	const char *file;
	struct {
		char kind[48];
		size_t run, pass, disputed;
	} k[MAXKINDS];
	size_t nk;
	size_t failures, other; /* other: kinds another module owns */
};

static size_t kind_slot(struct tally *t, const char *kind)
{
	for (size_t i = 0; i < t->nk; i++)
		if (strcmp(t->k[i].kind, kind) == 0)
			return i;
	assert_true(t->nk < MAXKINDS);
	snprintf(t->k[t->nk].kind, sizeof(t->k[t->nk].kind), "%s", kind);
	return t->nk++;
}

static void record(struct tally *t, const char *kind, size_t index, bool ok, const char *what,
	json_t *c)
{
	size_t s = kind_slot(t, kind);
	const struct disputed *d = find_disputed(t->file, index);

	t->k[s].run++;
	if (d) {
		if (ok) {
			fprintf(stderr, "%s case %zu (%s): listed as disputed but passes; remove it\n",
				t->file, index, kind);
			t->failures++;
		} else {
			t->k[s].disputed++;
		}
		return;
	}
	if (ok) {
		t->k[s].pass++;
		return;
	}
	t->failures++;
	if (t->failures <= 40) {
		char *dump = json_dumps(c, JSON_COMPACT | JSON_ENSURE_ASCII);
		fprintf(stderr, "FAIL %s case %zu (%s): %s\n  %s\n", t->file, index, kind, what,
			dump ? dump : "?");
		free(dump);
	}
}

static void report(struct tally *t, json_t *root)
{
	json_t *counts = json_object_get(root, "counts");
	size_t run = 0, pass = 0, disp = 0;

	printf("%s:\n", t->file);
	for (size_t i = 0; i < t->nk; i++) {
		json_t *want = json_object_get(counts, t->k[i].kind);
		printf("  %-28s %4zu/%-4zu passed%s", t->k[i].kind, t->k[i].pass, t->k[i].run,
			t->k[i].disputed ? " (disputed: " : "");
		if (t->k[i].disputed)
			printf("%zu)", t->k[i].disputed);
		printf("\n");
		/* every case the file declares was run */
		if (!json_is_integer(want) || (size_t)json_integer_value(want) != t->k[i].run) {
			fprintf(stderr, "%s: kind %s: ran %zu cases, the file declares %lld\n", t->file,
				t->k[i].kind, t->k[i].run,
				json_is_integer(want) ? (long long)json_integer_value(want) : -1LL);
			t->failures++;
		}
		run += t->k[i].run;
		pass += t->k[i].pass;
		disp += t->k[i].disputed;
	}
	printf("  total %zu/%zu passed, %zu disputed, %zu of other modules' kinds not run here\n",
		pass, run, disp, t->other);
	fflush(stdout);
}

static json_t *load(const char *name)
{
	const char *shared = getenv("GPUENV_SHARED");
	char path[4096];
	json_error_t err;
	json_t *root;

	if (!shared)
		shared = "../shared";
	snprintf(path, sizeof(path), "%s/testdata/packaging/%s", shared, name);
	root = json_load_file(path, JSON_DECODE_ANY, &err);
	if (!root)
		fail_msg("%s:%d: %s", path, err.line, err.text);
	return root;
}

/* ---- helpers ------------------------------------------------------------- */

static gpuenv_str_t jstr(json_t *j)
{
	if (!json_is_string(j))
		return GPUENV_STR_NULL;
	return gpuenv_str_n(json_string_value(j), json_string_length(j));
}

static bool jstr_eq(json_t *j, gpuenv_str_t s)
{
	return json_is_string(j) && gpuenv_str_eq(jstr(j), s);
}

/* null -> DEFAULT, true/false -> YES/NO */
static int jpre(json_t *j)
{
	if (json_is_true(j))
		return GPUENV_PRERELEASES_YES;
	if (json_is_false(j))
		return GPUENV_PRERELEASES_NO;
	return GPUENV_PRERELEASES_DEFAULT;
}

/* A candidate: a plain string (text as given, parsed when valid) or a
 * {"Version": s} object (parsed, and its text is the normalized form, as
 * str(Version(s)) is). */
struct cand {
	gpuenv_str_t text;
	gpuenv_version_t v;
	bool valid;
	char norm[256];
};

static bool cand_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, json_t *j, struct cand *c)
{
	memset(c, 0, sizeof(*c));
	if (json_is_object(j)) {
		gpuenv_buf_t b;
		if (gpuenv_version_parse(ctx, a, jstr(json_object_get(j, "Version")), &c->v))
			return false;
		c->valid = true;
		gpuenv_buf_init(&b, ctx, 0);
		gpuenv_version_format(&c->v, &b);
		snprintf(c->norm, sizeof(c->norm), "%s", b.data ? b.data : "");
		gpuenv_buf_free(&b);
		c->text = gpuenv_str(c->norm);
		return true;
	}
	if (!json_is_string(j))
		return false;
	c->text = jstr(j);
	c->valid = gpuenv_version_parse(ctx, a, c->text, &c->v) == 0;
	return true;
}

static bool fmt_eq(const gpuenv_version_t *v, unsigned flags, json_t *want)
{
	gpuenv_ctx_t ctx;
	gpuenv_buf_t b;
	bool ok;

	gpuenv_ctx_init(&ctx);
	gpuenv_buf_init(&b, &ctx, 0);
	ok = gpuenv_version_format_ex(v, flags, &b) == 0 &&
		jstr_eq(want, gpuenv_str_n(b.data ? b.data : "", b.len));
	gpuenv_buf_free(&b);
	return ok;
}

static bool jnum_eq(json_t *want, bool present, uint64_t value)
{
	if (!present)
		return json_is_null(want);
	return json_is_integer(want) && (uint64_t)json_integer_value(want) == value;
}

/* ---- versions_sorted.json ------------------------------------------------ */

static bool accessor(const gpuenv_version_t *v, const char *name, json_t *want)
{
	static const char *const pre_names[] = { "", "a", "b", "rc" };

	if (strcmp(name, "public") == 0)
		return fmt_eq(v, GPUENV_VFMT_PUBLIC, want);
	if (strcmp(name, "base_version") == 0)
		return fmt_eq(v, GPUENV_VFMT_BASE, want);
	if (strcmp(name, "epoch") == 0)
		return jnum_eq(want, true, v->epoch);
	if (strcmp(name, "release") == 0) {
		if (!json_is_array(want) || json_array_size(want) != v->nrelease)
			return false;
		for (size_t i = 0; i < v->nrelease; i++)
			if (!jnum_eq(json_array_get(want, i), true, v->release[i]))
				return false;
		return true;
	}
	if (strcmp(name, "local") == 0)
		return v->local.len ? jstr_eq(want, v->local) : json_is_null(want);
	if (strcmp(name, "pre") == 0) {
		if (!v->pre_kind)
			return json_is_null(want);
		return json_is_array(want) && json_array_size(want) == 2 &&
			jstr_eq(json_array_get(want, 0), gpuenv_str(pre_names[v->pre_kind])) &&
			jnum_eq(json_array_get(want, 1), true, v->pre);
	}
	if (strcmp(name, "post") == 0)
		return jnum_eq(want, v->has_post, v->post);
	if (strcmp(name, "dev") == 0)
		return jnum_eq(want, v->has_dev, v->dev);
	if (strcmp(name, "is_prerelease") == 0)
		return json_is_boolean(want) &&
			json_is_true(want) == gpuenv_version_is_prerelease(v);
	if (strcmp(name, "is_devrelease") == 0)
		return json_is_boolean(want) && json_is_true(want) == v->has_dev;
	if (strcmp(name, "is_postrelease") == 0)
		return json_is_boolean(want) && json_is_true(want) == v->has_post;
	if (strcmp(name, "major") == 0 || strcmp(name, "minor") == 0 ||
		strcmp(name, "micro") == 0) {
		size_t i = name[1] == 'a' ? 0 : name[1] == 'i' && name[2] == 'n' ? 1 : 2;
		return jnum_eq(want, true, i < v->nrelease ? v->release[i] : 0);
	}
	return false;
}

static void test_versions(void **state)
{
	(void)state;
	json_t *root = load("versions_sorted.json"), *cases, *asc, *c;
	struct tally t = { .file = "versions_sorted.json" };
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	size_t i;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);

	/* the ascending list: every pair in order, each equal to itself */
	asc = json_object_get(root, "versions_ascending");
	{
		size_t n = json_array_size(asc);
		gpuenv_version_t *vs = calloc(n ? n : 1, sizeof(*vs));
		bool *okv = calloc(n ? n : 1, sizeof(*okv));
		assert_non_null(vs);
		assert_non_null(okv);
		for (i = 0; i < n; i++)
			okv[i] = gpuenv_version_parse(&ctx, &a, jstr(json_array_get(asc, i)), &vs[i]) == 0;
		for (i = 0; i < n; i++) {
			bool ok = okv[i] && gpuenv_version_cmp(&vs[i], &vs[i]) == 0;
			for (size_t j = 0; ok && j < n; j++) {
				if (!okv[j])
					ok = false;
				else if (j != i) {
					int want = i < j ? -1 : 1, got = gpuenv_version_cmp(&vs[i], &vs[j]);
					ok = (got > 0) - (got < 0) == want;
				}
			}
			/* no index: the ascending list is not in "cases" */
			t.k[kind_slot(&t, "versions_ascending")].run++;
			if (ok)
				t.k[kind_slot(&t, "versions_ascending")].pass++;
			else {
				t.failures++;
				fprintf(stderr, "FAIL versions_ascending[%zu] %s out of order\n", i,
					json_string_value(json_array_get(asc, i)));
			}
		}
		free(vs);
		free(okv);
	}

	cases = json_object_get(root, "cases");
	json_array_foreach(cases, i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		gpuenv_version_t v, w;
		char slot[48];
		bool ok = false;

		assert_non_null(kind);
		if (strcmp(kind, "invalid") == 0) {
			ok = gpuenv_version_parse(&ctx, &a, jstr(json_object_get(c, "version")), &v) ==
				GPUENV_EVERSION;
			record(&t, kind, i, ok, "should be invalid", c);
		} else if (strcmp(kind, "normalize") == 0) {
			ok = gpuenv_version_parse(&ctx, &a, jstr(json_object_get(c, "version")), &v) == 0 &&
				fmt_eq(&v, 0, json_object_get(c, "expected"));
			record(&t, kind, i, ok, "normalized form differs", c);
		} else if (strcmp(kind, "equal") == 0) {
			ok = gpuenv_version_parse(&ctx, &a, jstr(json_object_get(c, "left")), &v) == 0 &&
				gpuenv_version_parse(&ctx, &a, jstr(json_object_get(c, "right")), &w) == 0 &&
				(gpuenv_version_cmp(&v, &w) == 0) == json_is_true(json_object_get(c, "expected"));
			record(&t, kind, i, ok, "equality differs", c);
		} else if (strcmp(kind, "accessor") == 0) {
			const char *name = json_string_value(json_object_get(c, "accessor"));
			assert_non_null(name);
			snprintf(slot, sizeof(slot), "accessor:%s", name);
			ok = gpuenv_version_parse(&ctx, &a, jstr(json_object_get(c, "version")), &v) == 0 &&
				accessor(&v, name, json_object_get(c, "expected"));
			record(&t, slot, i, ok, "accessor differs", c);
		} else {
			fprintf(stderr, "versions_sorted.json: unknown kind '%s'\n", kind);
			t.failures++;
		}
	}
	report(&t, root);
	gpuenv_arena_free(&a);
	json_decref(root);
	assert_int_equal(t.failures, 0);
}

/* ---- specifiers.json ----------------------------------------------------- */

struct spec {
	bool is_set;
	gpuenv_specifier_t one;
	gpuenv_specset_t set;
};

static int spec_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, json_t *c, const char *field,
	struct spec *s)
{
	const char *type = json_string_value(json_object_get(c, "type"));

	s->is_set = type && strcmp(type, "SpecifierSet") == 0;
	if (s->is_set)
		return gpuenv_specset_parse(ctx, a, jstr(json_object_get(c, field)), &s->set);
	return gpuenv_specifier_parse(ctx, a, jstr(json_object_get(c, field)), &s->one);
}

static bool spec_str_eq(gpuenv_ctx_t *ctx, struct spec *s, json_t *want)
{
	gpuenv_buf_t b;
	bool ok;

	gpuenv_buf_init(&b, ctx, 0);
	ok = (s->is_set ? gpuenv_specset_format(&s->set, &b) : gpuenv_specifier_format(&s->one, &b)) ==
			0 &&
		jstr_eq(want, gpuenv_str_n(b.data ? b.data : "", b.len));
	gpuenv_buf_free(&b);
	return ok;
}

static bool case_contains(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, json_t *c)
{
	struct spec s;
	struct cand cd;
	int sp = jpre(json_object_get(c, "spec_prereleases"));
	int p = jpre(json_object_get(c, "prereleases"));
	bool got;

	if (spec_parse(ctx, a, c, "specifier", &s) || !cand_load(ctx, a, json_object_get(c, "version"), &cd))
		return false;
	if (s.is_set) {
		s.set.prereleases = sp;
		got = gpuenv_specset_contains_ex(&s.set, cd.text, cd.valid ? &cd.v : NULL, p,
			json_is_true(json_object_get(c, "installed")));
		/* without an installed flag, the plain call must agree */
		if (!json_is_true(json_object_get(c, "installed")) &&
			got != gpuenv_specset_contains(&s.set, cd.text, cd.valid ? &cd.v : NULL, p))
			return false;
	} else {
		s.one.prereleases = sp;
		got = gpuenv_specifier_contains(&s.one, cd.text, cd.valid ? &cd.v : NULL, p);
	}
	return got == json_is_true(json_object_get(c, "expected"));
}

static bool case_filter(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, json_t *c)
{
	json_t *input = json_object_get(c, "input"), *want = json_object_get(c, "expected");
	size_t n = json_array_size(input), m;
	struct spec s;
	struct cand *cd;
	gpuenv_str_t *texts;
	const gpuenv_version_t **vs;
	size_t *idx;
	bool ok = true;

	if (spec_parse(ctx, a, c, "specifier", &s))
		return false;
	cd = calloc(n + 1, sizeof(*cd));
	texts = calloc(n + 1, sizeof(*texts));
	vs = calloc(n + 1, sizeof(*vs));
	idx = calloc(n + 1, sizeof(*idx));
	assert_true(cd && texts && vs && idx);
	for (size_t i = 0; i < n && ok; i++) {
		ok = cand_load(ctx, a, json_array_get(input, i), &cd[i]);
		texts[i] = cd[i].text;
		vs[i] = cd[i].valid ? &cd[i].v : NULL;
	}
	if (ok) {
		int sp = jpre(json_object_get(c, "spec_prereleases"));
		int p = jpre(json_object_get(c, "prereleases"));
		if (s.is_set) {
			s.set.prereleases = sp;
			m = gpuenv_specset_filter(&s.set, texts, vs, n, p, idx);
		} else {
			s.one.prereleases = sp;
			m = gpuenv_specifier_filter(&s.one, texts, vs, n, p, idx);
		}
		ok = m == json_array_size(want);
		for (size_t i = 0; ok && i < m; i++)
			ok = json_equal(json_array_get(input, idx[i]), json_array_get(want, i));
	}
	free(cd);
	free(texts);
	free(vs);
	free(idx);
	return ok;
}

static int cmp_cstr(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool case_set_items(gpuenv_ctx_t *ctx, struct spec *s, json_t *want)
{
	char *strs[64];
	size_t n = s->set.n;
	bool ok = json_is_array(want) && json_array_size(want) == n && n <= 64;

	for (size_t i = 0; ok && i < n; i++) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, ctx, 0);
		gpuenv_specifier_format(&s->set.items[i], &b);
		strs[i] = gpuenv_buf_steal(&b, NULL);
		if (!strs[i])
			strs[i] = strdup("");
	}
	if (!ok)
		return false;
	qsort(strs, n, sizeof(strs[0]), cmp_cstr);
	for (size_t i = 0; i < n; i++) {
		ok = ok && jstr_eq(json_array_get(want, i), gpuenv_str(strs[i]));
		free(strs[i]);
	}
	return ok;
}

static void test_specifiers(void **state)
{
	(void)state;
	json_t *root = load("specifiers.json"), *c;
	struct tally t = { .file = "specifiers.json" };
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	size_t i;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	json_array_foreach(json_object_get(root, "cases"), i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		json_t *want = json_object_get(c, "expected");
		struct spec s, r;
		bool ok = false;

		assert_non_null(kind);
		if (strcmp(kind, "valid") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == 0;
		} else if (strcmp(kind, "invalid") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == GPUENV_ESPEC;
		} else if (strcmp(kind, "str") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == 0 && spec_str_eq(&ctx, &s, want);
		} else if (strcmp(kind, "equal") == 0) {
			ok = spec_parse(&ctx, &a, c, "left", &s) == 0 &&
				spec_parse(&ctx, &a, c, "right", &r) == 0;
			if (ok && s.is_set)
				ok = gpuenv_specset_eq(&ctx, &s.set, &r.set) == json_is_true(want);
			else if (ok)
				ok = gpuenv_specifier_eq(&s.one, &r.one) == json_is_true(want) &&
					gpuenv_specifier_eq(&r.one, &s.one) == json_is_true(want);
		} else if (strcmp(kind, "contains") == 0) {
			ok = case_contains(&ctx, &a, c);
		} else if (strcmp(kind, "filter") == 0) {
			ok = case_filter(&ctx, &a, c);
		} else if (strcmp(kind, "prereleases_property") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == 0 && !s.is_set &&
				gpuenv_specifier_prereleases(&s.one) == json_is_true(want);
		} else if (strcmp(kind, "operator") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == 0 && !s.is_set &&
				jstr_eq(want, gpuenv_str(gpuenv_spec_op_str(s.one.op)));
		} else if (strcmp(kind, "spec_version") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == 0 && !s.is_set &&
				jstr_eq(want, s.one.text);
		} else if (strcmp(kind, "set_length") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == 0 && s.is_set &&
				json_is_integer(want) && (size_t)json_integer_value(want) == s.set.n;
		} else if (strcmp(kind, "set_items") == 0) {
			ok = spec_parse(&ctx, &a, c, "specifier", &s) == 0 && s.is_set &&
				case_set_items(&ctx, &s, want);
		} else {
			fprintf(stderr, "specifiers.json: unknown kind '%s'\n", kind);
			t.failures++;
			continue;
		}
		record(&t, kind, i, ok, ctx.err.msg[0] ? ctx.err.msg : "result differs", c);
		gpuenv_error_clear(&ctx);
	}
	report(&t, root);
	gpuenv_arena_free(&a);
	json_decref(root);
	assert_int_equal(t.failures, 0);
}

/* ---- utils.json ---------------------------------------------------------- */

static void test_utils(void **state)
{
	(void)state;
	json_t *root = load("utils.json"), *c;
	struct tally t = { .file = "utils.json" };
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	size_t i;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	json_array_foreach(json_object_get(root, "cases"), i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		json_t *want = json_object_get(c, "expected");
		gpuenv_str_t name = jstr(json_object_get(c, "name"));
		bool ok = false;

		assert_non_null(kind);
		if (strcmp(kind, "canonicalize_name") == 0) {
			gpuenv_buf_t b;
			gpuenv_buf_init(&b, &ctx, 0);
			ok = gpuenv_name_normalize(name, &b) == 0 &&
				jstr_eq(want, gpuenv_str_n(b.data ? b.data : "", b.len));
			gpuenv_buf_free(&b);
		} else if (strcmp(kind, "invalid_name") == 0) {
			ok = !gpuenv_name_is_valid(name);
		} else if (strcmp(kind, "is_normalized_name") == 0) {
			ok = gpuenv_name_is_normalized(name) == json_is_true(want);
		} else if (strcmp(kind, "canonicalize_version") == 0) {
			struct cand cd;
			unsigned flags = json_is_true(json_object_get(c, "strip_trailing_zero"))
				? GPUENV_VFMT_TRIM_ZEROS
				: 0;
			ok = cand_load(&ctx, &a, json_object_get(c, "version"), &cd);
			if (ok && cd.valid)
				ok = fmt_eq(&cd.v, flags, want);
			else if (ok) /* not a version: returned unchanged */
				ok = jstr_eq(want, cd.text);
		} else if (strncmp(kind, "wheel_filename", 14) == 0 ||
			strncmp(kind, "sdist_filename", 14) == 0) {
			t.other++; /* the wheel module's cases */
			continue;
		} else {
			fprintf(stderr, "utils.json: unknown kind '%s'\n", kind);
			t.failures++;
			continue;
		}
		record(&t, kind, i, ok, "result differs", c);
	}
	report(&t, root);
	gpuenv_arena_free(&a);
	json_decref(root);
	assert_int_equal(t.failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_specifiers),
		cmocka_unit_test(test_utils),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
