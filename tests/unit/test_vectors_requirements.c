/* pypa/packaging's PEP 508 vectors: requirements.json and markers.json from
 * $GPUENV_SHARED/testdata/packaging.  Every case runs; the counts by kind are
 * printed; any mismatch fails.  A case we believe upstream gets wrong would
 * go in `disputed` below with the reason (mirrored in
 * docs/packaging-vectors.md); none is there today. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep508.h"

/* Cases we believe upstream gets wrong: file, input, reason. */
static const struct {
	const char *file, *input, *reason;
} disputed[] = {
	{ NULL, NULL, NULL },
};

#define MAX_SHOWN 25

struct tally {
	const char *file;
	char kinds[8][16];
	unsigned run[8], pass[8];
	size_t nkinds;
	unsigned failed, shown, skipped;
};

static size_t kind_slot(struct tally *t, const char *kind)
{
	for (size_t i = 0; i < t->nkinds; i++)
		if (strcmp(t->kinds[i], kind) == 0)
			return i;
	assert_true(t->nkinds < 8);
	snprintf(t->kinds[t->nkinds], sizeof(t->kinds[0]), "%s", kind);
	return t->nkinds++;
}

static bool is_disputed(const char *file, const char *input)
{
	for (size_t i = 0; disputed[i].file; i++)
		if (strcmp(disputed[i].file, file) == 0 && strcmp(disputed[i].input, input) == 0)
			return true;
	return false;
}

static void report(struct tally *t, const char *kind, const char *input, const char *fmt, ...)
	GPUENV_PRINTF(4, 5);

static void report(struct tally *t, const char *kind, const char *input, const char *fmt, ...)
{
	va_list ap;

	t->failed++;
	if (t->shown++ >= MAX_SHOWN)
		return;
	printf("FAIL %s %s: %s: ", t->file, kind, input);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void print_tally(const struct tally *t)
{
	unsigned run = 0, pass = 0;

	printf("%s:", t->file);
	for (size_t i = 0; i < t->nkinds; i++) {
		printf(" %s %u/%u", t->kinds[i], t->pass[i], t->run[i]);
		run += t->run[i];
		pass += t->pass[i];
	}
	printf("; total %u/%u passed, %u disputed\n", pass, run, t->skipped);
}

static json_t *load(const char *name)
{
	const char *dir = getenv("GPUENV_SHARED");
	char path[4096];
	json_error_t err;
	json_t *root;

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/testdata/packaging/%s", dir, name);
	root = json_load_file(path, 0, &err);
	if (!root)
		fail_msg("%s:%d: %s", path, err.line, err.text);
	return root;
}

static gpuenv_str_t jstr(json_t *v)
{
	return gpuenv_str_n(json_string_value(v), json_string_length(v));
}

/* ---- requirements -------------------------------------------------------- */

static bool str_in(gpuenv_str_t s, json_t *arr)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (gpuenv_str_eq(s, jstr(v)))
			return true;
	return false;
}

/* One 'parse' case: each field present in the case must match. */
static bool check_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *ar, const gpuenv_requirement_t *r,
	json_t *c, char *why, size_t whysz)
{
	json_t *v;

	if ((v = json_object_get(c, "name")) && !gpuenv_str_eq(r->name, jstr(v))) {
		snprintf(why, whysz, "name " GPUENV_STR_FMT, GPUENV_STR_ARG(r->name));
		return false;
	}
	if ((v = json_object_get(c, "url"))) {
		bool ok = json_is_null(v) ? r->url.len == 0 : gpuenv_str_eq(r->url, jstr(v));
		if (!ok) {
			snprintf(why, whysz, "url " GPUENV_STR_FMT, GPUENV_STR_ARG(r->url));
			return false;
		}
	}
	if ((v = json_object_get(c, "extras"))) {
		/* as sets: every extra written is expected, every expected is written */
		bool ok = true;
		for (size_t i = 0; i < r->nextras && ok; i++)
			ok = str_in(r->extras[i], v);
		for (size_t i = 0; i < json_array_size(v) && ok; i++) {
			bool found = false;
			for (size_t k = 0; k < r->nextras && !found; k++)
				found = gpuenv_str_eq(r->extras[k], jstr(json_array_get(v, i)));
			ok = found;
		}
		if (!ok) {
			snprintf(why, whysz, "extras differ (%zu written)", r->nextras);
			return false;
		}
	}
	if ((v = json_object_get(c, "specifier"))) {
		gpuenv_specset_t want;
		bool eq = false;
		int rc = gpuenv_specset_parse(ctx, ar, jstr(v), &want);
		if (rc == 0)
			rc = gpuenv_requirement_specset_eq(ctx, &r->spec, &want, &eq);
		if (rc || !eq) {
			snprintf(why, whysz, "specifier differs from %s (%d)", json_string_value(v), rc);
			return false;
		}
	}
	if ((v = json_object_get(c, "marker"))) {
		gpuenv_marker_t *want = NULL;
		bool eq = false;
		int rc = 0;
		if (!json_is_null(v))
			rc = gpuenv_marker_parse(ctx, ar, jstr(v), &want);
		if (rc == 0)
			rc = gpuenv_marker_eq(ctx, r->marker, want, &eq);
		if (rc || !eq) {
			snprintf(why, whysz, "marker differs (%d)", rc);
			return false;
		}
	}
	return true;
}

static void test_requirements(void **state)
{
	(void)state;
	struct tally t = { .file = "requirements.json" };
	json_t *root = load("requirements.json"), *cases = json_object_get(root, "cases"), *c;
	gpuenv_ctx_t ctx;
	size_t idx;

	gpuenv_ctx_init(&ctx);
	assert_true(json_is_array(cases));
	json_array_foreach(cases, idx, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		json_t *in = json_object_get(c, "requirement");
		const char *input = in ? json_string_value(in)
				       : json_string_value(json_object_get(c, "left"));
		size_t slot = kind_slot(&t, kind);
		gpuenv_arena_t ar;
		gpuenv_requirement_t r;
		gpuenv_buf_t b;
		char why[600] = "";
		bool ok = false;
		int rc;

		if (is_disputed(t.file, input)) {
			t.skipped++;
			continue;
		}
		t.run[slot]++;
		gpuenv_arena_init(&ar, &ctx, 0);
		gpuenv_buf_init(&b, &ctx, GPUENV_BUF_DEFAULT_MAX);
		if (strcmp(kind, "parse") == 0) {
			rc = gpuenv_requirement_parse(&ctx, &ar, jstr(in), &r);
			if (rc)
				snprintf(why, sizeof(why), "rejected: %s", ctx.err.msg);
			else
				ok = check_parse(&ctx, &ar, &r, c, why, sizeof(why));
		} else if (strcmp(kind, "valid") == 0) {
			rc = gpuenv_requirement_parse(&ctx, &ar, jstr(in), &r);
			ok = rc == 0;
			if (!ok)
				snprintf(why, sizeof(why), "rejected: %s", ctx.err.msg);
		} else if (strcmp(kind, "invalid") == 0) {
			rc = gpuenv_requirement_parse(&ctx, &ar, jstr(in), &r);
			ok = rc == GPUENV_EREQ;
			if (!ok)
				snprintf(why, sizeof(why), "accepted (%d)", rc);
		} else if (strcmp(kind, "str") == 0) {
			rc = gpuenv_requirement_parse(&ctx, &ar, jstr(in), &r);
			if (rc == 0)
				rc = gpuenv_requirement_format(&r, &b);
			ok = rc == 0 && gpuenv_str_eq(gpuenv_str_n(b.data, b.len),
						jstr(json_object_get(c, "expected")));
			snprintf(why, sizeof(why), "got '%s' (%d %s)", b.data ? b.data : "", rc,
				ctx.err.msg);
		} else if (strcmp(kind, "equal") == 0) {
			gpuenv_requirement_t l2;
			bool eq = false, want = json_is_true(json_object_get(c, "expected"));
			rc = gpuenv_requirement_parse(&ctx, &ar, jstr(json_object_get(c, "left")), &r);
			if (rc == 0)
				rc = gpuenv_requirement_parse(&ctx, &ar,
					jstr(json_object_get(c, "right")), &l2);
			if (rc == 0)
				rc = gpuenv_requirement_eq(&ctx, &r, &l2, &eq);
			ok = rc == 0 && eq == want;
			if (ok && json_is_true(json_object_get(c, "str_differs"))) {
				gpuenv_buf_t b2;
				gpuenv_buf_init(&b2, &ctx, GPUENV_BUF_DEFAULT_MAX);
				ok = gpuenv_requirement_format(&r, &b) == 0 &&
					gpuenv_requirement_format(&l2, &b2) == 0 &&
					strcmp(b.data, b2.data) != 0;
				gpuenv_buf_free(&b2);
			}
			snprintf(why, sizeof(why), "equal=%d, rc %d %s", eq, rc, ctx.err.msg);
		} else {
			snprintf(why, sizeof(why), "unknown kind");
		}
		if (ok)
			t.pass[slot]++;
		else
			report(&t, kind, input, "%s", why);
		gpuenv_buf_free(&b);
		gpuenv_arena_free(&ar);
	}
	print_tally(&t);
	json_decref(root);
	assert_int_equal(t.failed, 0);
}

/* ---- markers --------------------------------------------------------------- */

/* The case's environment over the default one.  Strings live in the JSON;
 * lists get NULL-terminated arrays in the arena.  Keys that are not marker
 * variables are ignored (upstream reads them only through its quirk of
 * treating the right-hand string of '"b" > "a"' as a variable name). */
static bool build_env(gpuenv_arena_t *ar, json_t *obj, gpuenv_marker_env_t *env)
{
	const char *key;
	json_t *v;

	gpuenv_marker_env_default(env);
	if (json_is_null(obj))
		return true;
	json_object_foreach(obj, key, v) {
		if (json_is_array(v)) {
			const char **list = gpuenv_arena_calloc(ar, json_array_size(v) + 1, sizeof(*list));
			for (size_t i = 0; i < json_array_size(v); i++)
				list[i] = json_string_value(json_array_get(v, i));
			if (gpuenv_marker_env_set_list(env, key, list) == GPUENV_ETYPE)
				return false;
		} else if (json_is_string(v) || json_is_null(v)) {
			if (gpuenv_marker_env_set(env, key, json_string_value(v)) == GPUENV_ETYPE)
				return false;
		} else {
			return false;
		}
	}
	return true;
}

static void test_markers(void **state)
{
	(void)state;
	struct tally t = { .file = "markers.json" };
	json_t *root = load("markers.json"), *cases = json_object_get(root, "cases"), *c;
	gpuenv_ctx_t ctx;
	size_t idx;

	gpuenv_ctx_init(&ctx);
	assert_true(json_is_array(cases));
	json_array_foreach(cases, idx, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		json_t *in = json_object_get(c, "marker");
		const char *input = in ? json_string_value(in)
				       : json_string_value(json_object_get(c, "left"));
		size_t slot = kind_slot(&t, kind);
		gpuenv_arena_t ar;
		gpuenv_marker_t *m = NULL, *m2 = NULL;
		gpuenv_buf_t b;
		char why[600] = "";
		bool ok = false;
		int rc;

		if (is_disputed(t.file, input)) {
			t.skipped++;
			continue;
		}
		t.run[slot]++;
		gpuenv_arena_init(&ar, &ctx, 0);
		gpuenv_buf_init(&b, &ctx, GPUENV_BUF_DEFAULT_MAX);
		if (strcmp(kind, "valid") == 0) {
			rc = gpuenv_marker_parse(&ctx, &ar, jstr(in), &m);
			ok = rc == 0;
			snprintf(why, sizeof(why), "rejected: %s", ctx.err.msg);
		} else if (strcmp(kind, "invalid") == 0) {
			rc = gpuenv_marker_parse(&ctx, &ar, jstr(in), &m);
			ok = rc == GPUENV_EMARKER;
			snprintf(why, sizeof(why), "accepted (%d)", rc);
		} else if (strcmp(kind, "str") == 0) {
			rc = gpuenv_marker_parse(&ctx, &ar, jstr(in), &m);
			if (rc == 0)
				rc = gpuenv_marker_format(m, &b);
			ok = rc == 0 && gpuenv_str_eq(gpuenv_str_n(b.data, b.len),
						jstr(json_object_get(c, "expected")));
			snprintf(why, sizeof(why), "got '%s' (%d %s)", b.data ? b.data : "", rc,
				ctx.err.msg);
		} else if (strcmp(kind, "equal") == 0) {
			bool eq = false, want = json_is_true(json_object_get(c, "expected"));
			rc = gpuenv_marker_parse(&ctx, &ar, jstr(json_object_get(c, "left")), &m);
			if (rc == 0)
				rc = gpuenv_marker_parse(&ctx, &ar, jstr(json_object_get(c, "right")),
					&m2);
			if (rc == 0)
				rc = gpuenv_marker_eq(&ctx, m, m2, &eq);
			ok = rc == 0 && eq == want;
			snprintf(why, sizeof(why), "equal=%d, rc %d %s", eq, rc, ctx.err.msg);
		} else if (strcmp(kind, "evaluate") == 0) {
			gpuenv_marker_env_t env;
			bool res = false, want = json_is_true(json_object_get(c, "expected"));
			rc = gpuenv_marker_parse(&ctx, &ar, jstr(in), &m);
			if (rc == 0 && !build_env(&ar, json_object_get(c, "environment"), &env))
				rc = GPUENV_ETYPE;
			if (rc == 0)
				rc = gpuenv_marker_eval(&ctx, m, &env, &res);
			ok = rc == 0 && res == want;
			snprintf(why, sizeof(why), "result %d, rc %d %s", res, rc, ctx.err.msg);
		} else {
			snprintf(why, sizeof(why), "unknown kind");
		}
		if (ok)
			t.pass[slot]++;
		else
			report(&t, kind, input, "%s", why);
		gpuenv_buf_free(&b);
		gpuenv_arena_free(&ar);
	}
	print_tally(&t);
	json_decref(root);
	assert_int_equal(t.failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requirements),
		cmocka_unit_test(test_markers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
