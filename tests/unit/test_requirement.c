/* Unit tests for PEP 508: requirement parsing, markers (parse, str(),
 * evaluation), equality, error positions, limits and allocation failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep508.h"

#include "testutil.h"

struct fixture {
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_buf_t buf;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	gpuenv_ctx_init(&f->ctx);
	gpuenv_arena_init(&f->arena, &f->ctx, 0);
	gpuenv_buf_init(&f->buf, &f->ctx, GPUENV_BUF_DEFAULT_MAX);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	gpuenv_buf_free(&f->buf);
	gpuenv_arena_free(&f->arena);
	free(f);
	return 0;
}

static gpuenv_requirement_t req_ok(struct fixture *f, const char *text)
{
	gpuenv_requirement_t r;
	int rc = gpuenv_requirement_parse(&f->ctx, &f->arena, gpuenv_str(text), &r);
	if (rc)
		fail_msg("%s: %s (col %u)", text, f->ctx.err.msg, f->ctx.err.col);
	return r;
}

/* The str() of a requirement. */
static const char *req_str(struct fixture *f, const char *text)
{
	gpuenv_requirement_t r = req_ok(f, text);
	gpuenv_buf_reset(&f->buf);
	assert_int_equal(gpuenv_requirement_format(&r, &f->buf), 0);
	return f->buf.data ? f->buf.data : "";
}

/* Expect a parse error at col with msg in the message. */
static void req_bad(struct fixture *f, const char *text, unsigned col, const char *msg)
{
	gpuenv_requirement_t r;
	int rc = gpuenv_requirement_parse(&f->ctx, &f->arena, gpuenv_str(text), &r);
	if (rc != GPUENV_EREQ)
		fail_msg("%s: accepted (%d)", text, rc);
	if (col && f->ctx.err.col != col)
		fail_msg("%s: col %u, want %u (%s)", text, f->ctx.err.col, col, f->ctx.err.msg);
	if (msg && !strstr(f->ctx.err.msg, msg))
		fail_msg("%s: message '%s' lacks '%s'", text, f->ctx.err.msg, msg);
	assert_null(r.marker);
	assert_int_equal(r.name.len, 0);
}

static gpuenv_marker_t *mk(struct fixture *f, const char *text)
{
	gpuenv_marker_t *m;
	if (gpuenv_marker_parse(&f->ctx, &f->arena, gpuenv_str(text), &m))
		fail_msg("%s: %s (col %u)", text, f->ctx.err.msg, f->ctx.err.col);
	return m;
}

static const char *mk_str(struct fixture *f, const char *text)
{
	gpuenv_buf_reset(&f->buf);
	assert_int_equal(gpuenv_marker_format(mk(f, text), &f->buf), 0);
	return f->buf.data;
}

/* Evaluate: 1 true, 0 false, -1 error. */
static int ev(struct fixture *f, const char *text, const gpuenv_marker_env_t *env)
{
	bool res;
	if (gpuenv_marker_eval(&f->ctx, mk(f, text), env, &res))
		return -1;
	return res;
}

static void test_requirement_fields(void **state)
{
	struct fixture *f = *state;
	gpuenv_requirement_t r;

	r = req_ok(f, "  torch [cuda, Extra_1,cuda] >= 2.1 , <3 ; python_version >= '3.9'");
	assert_true(gpuenv_str_eq_cstr(r.name, "torch"));
	assert_int_equal(r.nextras, 3); /* as written, duplicates kept */
	assert_true(gpuenv_str_eq_cstr(r.extras[1], "Extra_1"));
	assert_int_equal(r.url.len, 0);
	assert_non_null(r.marker);

	r = req_ok(f, "name");
	assert_int_equal(r.nextras, 0);
	assert_int_equal(r.spec.n, 0);
	assert_null(r.marker);

	r = req_ok(f, "pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; os_name == 'nt'");
	assert_true(gpuenv_str_eq_cstr(r.url, "https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee"));
	assert_non_null(r.marker);

	/* a ';' glued to the URL is part of the URL */
	r = req_ok(f, "name @ https://example.com/x;v=1");
	assert_true(gpuenv_str_eq_cstr(r.url, "https://example.com/x;v=1"));
	assert_null(r.marker);

	/* the result does not point into the caller's text */
	char text[] = "abc[x]; extra == 'y'";
	r = req_ok(f, text);
	memset(text, 'z', sizeof(text) - 1);
	assert_true(gpuenv_str_eq_cstr(r.name, "abc"));
	assert_true(gpuenv_str_eq_cstr(r.extras[0], "x"));

	/* names may end in '_' (a word character) but not in '.' or '-' */
	r = req_ok(f, "name_");
	assert_true(gpuenv_str_eq_cstr(r.name, "name_"));
	req_bad(f, "name-", 5, "Expected semicolon");
	r = req_ok(f, "name ()");
	assert_int_equal(r.spec.n, 0);
	r = req_ok(f, "name[]");
	assert_int_equal(r.nextras, 0);
}

static void test_requirement_errors(void **state)
{
	struct fixture *f = *state;

	req_bad(f, "", 1, "Expected package name at the start of dependency specifier");
	req_bad(f, "==0.0", 1, "package name");
	req_bad(f, "name[bar baz]", 10, "Expected comma between extra names");
	req_bad(f, "name[bar, baz,]", 15, "Expected extra name after comma");
	req_bad(f, "name (>= 1.0", 13, "RIGHT_PARENTHESIS");
	req_bad(f, "name[bar, baz", 14, "RIGHT_BRACKET");
	req_bad(f, "black (>=20.*) ; extra == 'format'", 13, "can only be used with `==` or `!=`");
	req_bad(f, "name==1.2.3.post4.*", 19, ".* suffix cannot be used");
	req_bad(f, "name >= 1.0+local.version.label", 12, "Local version label");
	req_bad(f, "name @ https://example.com/; extra == 'example'", 30,
		"Expected semicolon (after URL and whitespace) or end");
	req_bad(f, "name @ ", 8, "Expected URL after @");
	req_bad(f, "name; invalid_name", 7, "Expected a marker variable or quoted string");
	req_bad(f, "name; '3.7' notin python_version", 13, "Expected marker operator");
	req_bad(f, "name; '3.6'inpython_version", 12, "Expected marker operator");
	req_bad(f, "name; '3.7' not python_version", 17, "Expected 'in' after 'not'");
	req_bad(f, "name==1.0.org1", 10, "Expected comma (within version specifier)");
	req_bad(f, "name==", 5, "Expected semicolon (after name with no version specifier)");
	req_bad(f, "name 1.0", 6, NULL);
	req_bad(f, "name>=1\n", 8, NULL);
	req_bad(f, "name; os_name == 'a'\r\n", 21, NULL);
	req_bad(f, "name; os_name == \"C:\\\"", 0, NULL);
	req_bad(f, "name; os_name == \"\\x\"", 19, "truncated \\x escape");
	req_bad(f, "name; (os_name == 'a'", 22, "RIGHT_PARENTHESIS");
	req_bad(f, "namé", 0, NULL);

	/* a line break inside a specifier token is white space for packaging */
	gpuenv_requirement_t r;
	assert_int_equal(gpuenv_requirement_parse(&f->ctx, &f->arena,
				 gpuenv_str("name; os_name == 'a'\nand os_name == 'b'"), &r),
		GPUENV_EREQ);
	assert_int_equal(f->ctx.err.line, 1);
}

static void test_requirement_str(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(req_str(f, "name"), "name");
	assert_string_equal(req_str(f, "name[b, a,b]"), "name[a,b]");
	assert_string_equal(req_str(f, "name @ https://url "), "name @ https://url");
	assert_string_equal(req_str(f, "name[a] @ https://url ;\"3.\" not in python_version"),
		"name[a] @ https://url ; \"3.\" not in python_version");
	assert_string_equal(req_str(f, "mariadb>=1.0.1; extra == \"mariadb_connector\""),
		"mariadb>=1.0.1; extra == \"mariadb-connector\"");
	assert_string_equal(req_str(f, "name; os.name == 'x' and python_implementation=='y'"),
		"name; os_name == \"x\" and platform_python_implementation == \"y\"");
}

static void test_requirement_eq(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *a, *b;
		bool eq;
	} cases[] = {
		{ "scikit-learn==1.0.1", "scikit_learn==1.0.1", true },
		{ "fishtank[all-blue]", "fishtank[ALL___blue]", true },
		{ "a[x,y]", "a[y,x,x]", true },
		{ "a[x]", "a", false },
		{ "a @ https://x", "a @ https://y", false },
		{ "a; os_name == 'x'", "a;os_name=='x'", true },
		{ "a; os_name == 'x'", "a", false },
		{ "a; extra == 'X_y'", "a; extra == 'x-y'", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpuenv_requirement_t a = req_ok(f, cases[i].a), b = req_ok(f, cases[i].b);
		bool eq;
		assert_int_equal(gpuenv_requirement_eq(&f->ctx, &a, &b, &eq), 0);
		if (eq != cases[i].eq)
			fail_msg("%s vs %s: %d", cases[i].a, cases[i].b, eq);
	}
}

static void test_marker_str(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(mk_str(f, "python_version=='2.7'"), "python_version == \"2.7\"");
	assert_string_equal(mk_str(f, "((os_name == 'a'))"), "os_name == \"a\"");
	assert_string_equal(mk_str(f, "os_name == 'a' and ((os_name == 'b' or os_name == 'c'))"),
		"os_name == \"a\" and (os_name == \"b\" or os_name == \"c\")");
	assert_string_equal(mk_str(f, "(os_name == 'a' and os_name == 'b') or os_name == 'c'"),
		"(os_name == \"a\" and os_name == \"b\") or os_name == \"c\"");
	assert_string_equal(mk_str(f, "'S_P__A_M' == extra"), "\"s-p-a-m\" == extra");
	assert_string_equal(mk_str(f, "extra == os_name"), "extra == os_name");
	assert_string_equal(mk_str(f, "\"a'b\" in sys.platform"), "\"a'b\" in sys_platform");
	assert_string_equal(mk_str(f, "'a\"b' not in platform.version"),
		"'a\"b' not in platform_version");
	assert_string_equal(mk_str(f, "os_name == 'extras'"), "os_name == \"extras\"");
	/* Python escapes are decoded; an unknown one stays as written */
	assert_string_equal(mk_str(f, "os_name == '\\x41\\u00e9\\101\\d\\\\w'"),
		"os_name == \"A\xc3\xa9" "A\\d\\w\"");
	/* values packaging could not write back are escaped so they round-trip */
	assert_string_equal(mk_str(f, "os_name == \"a\\x22b'c\""), "os_name == \"a\\x22b'c\"");
	/* packaging's quoted strings end at the first matching quote */
	assert_int_equal(gpuenv_marker_parse(&f->ctx, &f->arena,
				 gpuenv_str("os_name == \"a\\\"b\""), &(gpuenv_marker_t *){ NULL }),
		GPUENV_EMARKER);
	assert_string_equal(mk_str(f, "os_name == 'a\\nb'"), "os_name == \"a\\nb\"");
	assert_string_equal(mk_str(f, "os_name == 'a\\\\nb'"), "os_name == \"a\\\\nb\"");
	assert_string_equal(mk_str(f, "os_name == 'a\\\nb'"), "os_name == \"ab\"");
	const char *tricky[] = { "os_name == 'a\\x27b\"c\\\\'", "os_name == 'a\\x00b\\rc\\\\x'",
		"os_name == 'x\\\\'" };
	for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
		char once[256];
		snprintf(once, sizeof(once), "%s", mk_str(f, tricky[i]));
		assert_string_equal(mk_str(f, once), once);
	}
}

static void test_marker_errors(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *text;
		unsigned col;
	} bad[] = {
		{ "", 1 },
		{ "python_version", 15 },
		{ "(python_version)", 16 },
		{ "this_isnt_a_real_variable >= '1.0'", 1 },
		{ "python_version >= \"3\"\n", 22 },
		{ "os_name == 'a' or", 18 },
		{ "os_name == 'a' andos_name == 'b'", 16 },
		{ "os_name == 'a\nb'", 14 },
		{ "os_name == '\\N{DASH}'", 13 },
		{ "os_name == '\\ud800'", 13 },
		{ "os_name == 'a' ) ", 16 },
		{ "extras in 'a' with", 15 },
	};
	gpuenv_marker_t *m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = gpuenv_marker_parse(&f->ctx, &f->arena, gpuenv_str(bad[i].text), &m);
		if (rc != GPUENV_EMARKER)
			fail_msg("%s: accepted (%d)", bad[i].text, rc);
		if (f->ctx.err.col != bad[i].col)
			fail_msg("%s: col %u, want %u (%s)", bad[i].text, f->ctx.err.col, bad[i].col,
				f->ctx.err.msg);
		assert_null(m);
	}
	/* NUL bytes are data, not the end of the text */
	assert_int_equal(gpuenv_marker_parse(&f->ctx, &f->arena,
				 gpuenv_str_n("os_name == 'a'\0", 15), &m), GPUENV_EMARKER);
}

static void test_marker_depth_and_size(void **state)
{
	struct fixture *f = *state;
	char *deep = malloc(1000);
	gpuenv_marker_t *m;
	size_t n = 0;

	assert_non_null(deep);
	for (int i = 0; i < 64; i++)
		deep[n++] = '(';
	memcpy(deep + n, "os_name=='a'", 12);
	n += 12;
	for (int i = 0; i < 64; i++)
		deep[n++] = ')';
	assert_int_equal(gpuenv_marker_parse(&f->ctx, &f->arena, gpuenv_str_n(deep, n), &m), 0);
	memmove(deep + 1, deep, n);
	deep[0] = '(';
	deep[n + 1] = ')';
	assert_int_equal(gpuenv_marker_parse(&f->ctx, &f->arena, gpuenv_str_n(deep, n + 2), &m),
		GPUENV_EMARKER);
	assert_non_null(strstr(f->ctx.err.msg, "nested deeper"));
	free(deep);

	size_t big = ((size_t)1 << 20) + 1;
	char *huge = malloc(big);
	gpuenv_requirement_t r;
	assert_non_null(huge);
	memset(huge, 'a', big);
	assert_int_equal(gpuenv_requirement_parse(&f->ctx, &f->arena, gpuenv_str_n(huge, big), &r),
		GPUENV_ETOOBIG);
	assert_int_equal(gpuenv_requirement_parse(&f->ctx, &f->arena, gpuenv_str_n(huge, big - 1), &r),
		0);
	free(huge);
}

static void test_marker_eval_strings(void **state)
{
	struct fixture *f = *state;
	gpuenv_marker_env_t env;

	gpuenv_marker_env_default(&env);
	assert_int_equal(ev(f, "os_name == 'posix' and sys_platform == 'linux'", NULL), 1);
	assert_int_equal(ev(f, "platform_machine in 'x86_64 aarch64'", &env), 1);
	assert_int_equal(ev(f, "'86' in platform_machine", &env), 1);
	assert_int_equal(ev(f, "'' in platform_machine", &env), 1);
	assert_int_equal(ev(f, "'arm' not in platform_machine", &env), 1);
	assert_int_equal(ev(f, "os_name != 'nt'", &env), 1);
	/* orderings on strings: false, and <= / >= hold only on equality */
	assert_int_equal(ev(f, "os_name > 'a'", &env), 0);
	assert_int_equal(ev(f, "os_name < 'z'", &env), 0);
	assert_int_equal(ev(f, "os_name >= 'posix'", &env), 1);
	assert_int_equal(ev(f, "os_name <= 'a'", &env), 0);
	assert_int_equal(ev(f, "\"b\" > \"a\"", &env), 0);
	assert_int_equal(ev(f, "\"a\" <= \"a\"", &env), 1);
	/* ~= and === mean nothing on strings */
	assert_int_equal(ev(f, "os_name ~= 'posix'", &env), -1);
	assert_int_equal(f->ctx.err.code, GPUENV_EMARKER);
	assert_int_equal(f->ctx.err.col, 1);
	assert_int_equal(ev(f, "os_name == 'x' and os_name === 'posix'", &env), -1);
	assert_int_equal(f->ctx.err.col, 20);
	/* 'and' binds tighter than 'or' */
	assert_int_equal(ev(f, "os_name == 'x' and os_name == 'y' or os_name == 'posix'", &env), 1);
	assert_int_equal(ev(f, "os_name == 'posix' or os_name == 'y' and os_name == 'x'", &env), 1);
	assert_int_equal(ev(f, "(os_name == 'posix' or os_name == 'y') and os_name == 'x'", &env), 0);
	/* variables on both sides are both read */
	assert_int_equal(ev(f, "os_name == os_name", &env), 1);
	assert_int_equal(ev(f, "sys_platform == os_name", &env), 0);
}

static void test_marker_eval_env(void **state)
{
	struct fixture *f = *state;
	gpuenv_marker_env_t env;
	const char *extras[] = { "Foo_Bar", "cuda", NULL };

	memset(&env, 0, sizeof(env));
	/* an unset variable is an error; extra unset is "" */
	assert_int_equal(ev(f, "os_name == 'posix'", &env), -1);
	assert_non_null(strstr(f->ctx.err.msg, "'os_name' is not set"));
	assert_int_equal(ev(f, "extra == ''", &env), 1);
	assert_int_equal(ev(f, "'cuda' in extras", &env), -1);

	assert_int_equal(gpuenv_marker_env_set_list(&env, "extras", extras), 0);
	assert_int_equal(ev(f, "'foo.bar' in extras", &env), 1);
	assert_int_equal(ev(f, "'CUDA' in extras and 'x' not in extras", &env), 1);
	assert_int_equal(ev(f, "'cuda' == extras", &env), 0);
	assert_int_equal(ev(f, "'cuda' != extras", &env), 1);
	assert_int_equal(ev(f, "'cuda' ~= extras", &env), -1);
	assert_int_equal(ev(f, "extras in 'cuda'", &env), -1);
	assert_int_equal(ev(f, "'g' in dependency_groups", &env), -1);

	assert_int_equal(gpuenv_marker_env_set(&env, "extra", "Security__Fix"), 0);
	assert_int_equal(ev(f, "extra == 'security.fix'", &env), 1);
	assert_int_equal(ev(f, "'fix' in extra", &env), 1);

	assert_int_equal(gpuenv_marker_env_set(&env, "python_versoin", "3"), GPUENV_ENOTFOUND);
	assert_int_equal(gpuenv_marker_env_set(&env, "extras", "3"), GPUENV_ETYPE);
	assert_int_equal(gpuenv_marker_env_set_list(&env, "os_name", extras), GPUENV_ETYPE);
	assert_string_equal(gpuenv_marker_var_name(0), "implementation_name");
	size_t n = 0;
	while (gpuenv_marker_var_name(n))
		n++;
	assert_int_equal(n, 14);
}

static void test_marker_eval_versions(void **state)
{
	struct fixture *f = *state;
	gpuenv_marker_env_t env;

	gpuenv_marker_env_default(&env);
	assert_int_equal(ev(f, "python_version >= '3.8'", &env), 1);
	assert_int_equal(ev(f, "python_version < '3.11'", &env), 0);
	assert_int_equal(ev(f, "python_version == '3.11.*'", &env), 1);
	assert_int_equal(ev(f, "python_full_version ~= '3.11.0'", &env), 1);
	assert_int_equal(ev(f, "'3.9' < python_version", &env), 1);
	/* PEP 440 ordering, not string ordering */
	env.python_version = "3.10";
	assert_int_equal(ev(f, "python_version > '3.9'", &env), 1);
	/* pre-releases are admitted */
	env.python_full_version = "3.13.0rc1";
	assert_int_equal(ev(f, "python_full_version > '3.12'", &env), 1);
	/* an untagged build's "3.11.1+" reads as 3.11.1+local */
	env.python_full_version = "3.11.1+";
	assert_int_equal(ev(f, "python_full_version < '3.12' and python_full_version > '3.11'",
				 &env), 1);
	/* not a specifier: strings */
	env.platform_release = "6.1.0-18-amd64";
	assert_int_equal(ev(f, "platform_release == '6.1.0-18-amd64'", &env), 1);
	assert_int_equal(ev(f, "platform_release >= 'x'", &env), 0);
	assert_int_equal(ev(f, "platform_release ~= 'x'", &env), -1);
	/* a non-version left side never matches a version clause */
	assert_int_equal(ev(f, "platform_release >= '5'", &env), 0);
	/* versions only for the version variables */
	assert_int_equal(ev(f, "os_name == '1.0'", &env), 0);
	env.os_name = "1.0.0";
	assert_int_equal(ev(f, "os_name == '1.0'", &env), 0);
	env.implementation_version = "3.11.0";
	assert_int_equal(ev(f, "implementation_version == '3.11'", &env), 1);
	assert_int_equal(ev(f, "implementation_version === '3.11.0'", &env), 1);
	/* extras look like versions sometimes; they are still names */
	env.extra = "v2";
	assert_int_equal(ev(f, "extra == 'v2.0'", &env), 0);
}

static void test_alloc_failures(void **state)
{
	(void)state;
	const char *text = "torch[a,b,c,d,e,f]>=2.1,<3; (python_version >= '3.9' or "
			   "os_name == 'a\\x41') and extra == 'Cu_Da' and 'x' in extras";
	bool done = false;

	for (int budget = 0; budget < 200 && !done; budget++) {
		testutil_alloc_t b = { .fail_at = budget };
		gpuenv_ctx_t ctx;
		gpuenv_arena_t ar;
		gpuenv_requirement_t r;
		gpuenv_buf_t buf;
		gpuenv_marker_env_t env;
		const char *ex[] = { "x", NULL };
		bool res, eq;
		int rc;

		gpuenv_ctx_init(&ctx);
		ctx.mem = testutil_allocator(&b);
		gpuenv_arena_init(&ar, &ctx, 0);
		gpuenv_buf_init(&buf, &ctx, GPUENV_BUF_DEFAULT_MAX);
		gpuenv_marker_env_default(&env);
		env.extras = ex;
		env.extra = "CU.da";
		rc = gpuenv_requirement_parse(&ctx, &ar, gpuenv_str(text), &r);
		if (rc == 0)
			rc = gpuenv_requirement_format(&r, &buf);
		if (rc == 0)
			rc = gpuenv_marker_eval(&ctx, r.marker, &env, &res);
		if (rc == 0)
			rc = gpuenv_requirement_eq(&ctx, &r, &r, &eq);
		if (rc == 0) {
			assert_true(res);
			assert_true(eq);
			done = true;
		} else {
			assert_int_equal(rc, -ENOMEM);
		}
		gpuenv_buf_free(&buf);
		gpuenv_arena_free(&ar);
	}
	assert_true(done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_requirement_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requirement_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requirement_str, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requirement_eq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marker_str, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marker_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marker_depth_and_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marker_eval_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marker_eval_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marker_eval_versions, setup, teardown),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
