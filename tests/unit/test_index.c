/* Unit tests for lib/index's pure parts: the PEP 503 HTML and PEP 691 JSON
 * page parsers, relative URL resolution (RFC 3986 section 5.4's examples),
 * userinfo stripping, and allocation failures in both parsers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/core.h"
#include "gpuenv/index.h"

#include "../../lib/index/index_int.h"
#include "testutil.h"

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

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_html_page(void **state)
{
	(void)state;
	const char *page =
		"<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\">"
		"<title>Links for torch</title></head><body>\n"
		"<!-- a comment with <a href=\"nope.whl\">nope</a> -->\n"
		"<a href=\"../../files/torch-2.8.0%2Bcu128-cp312-cp312-linux_x86_64.whl#sha256=" SHA_A "\" "
		"data-requires-python=\"&gt;=3.9\" data-core-metadata=\"sha256=" SHA_B "\">"
		"torch-2.8.0+cu128-cp312-cp312-linux_x86_64.whl</a><br/>\n"
		"<A HREF='/abs/torch-1.0.tar.gz' data-yanked=\"broken &amp; bad\">torch-1.0.tar.gz</A>\n"
		"<a href=https://other.example/x/torch-0.9-py3-none-any.whl data-yanked "
		"data-dist-info-metadata=true>t</a>\n"
		"<a href=\"torch-0.8-py3-none-any.whl#md5=abc\" data-yanked=\"\">t</a>\n"
		"<script>if (a < b) { x = '<a href=\"fake.whl\">'; }</script>\n"
		"</body></html>\n";
	gpuenv_index_project_t p;

	assert_int_equal(gpuenv_simple_html_parse(&ctx, &arena,
				 "https://user:secret@host.example/simple/Torch/", gpuenv_str(page), &p),
		0);
	assert_string_equal(p.name, "torch");
	assert_string_equal(p.page_url, "https://host.example/simple/Torch/");
	assert_int_equal(p.nfiles, 4);
	const gpuenv_index_file_t *f = &p.files[0];
	assert_string_equal(f->filename, "torch-2.8.0+cu128-cp312-cp312-linux_x86_64.whl");
	assert_string_equal(f->url,
		"https://host.example/files/torch-2.8.0%2Bcu128-cp312-cp312-linux_x86_64.whl");
	assert_string_equal(f->sha256, SHA_A);
	assert_string_equal(f->requires_python, ">=3.9");
	assert_false(f->yanked);
	assert_true(f->has_metadata);
	assert_string_equal(f->metadata_sha256, SHA_B);
	assert_int_equal(f->size, -1);
	f = &p.files[1];
	assert_string_equal(f->url, "https://host.example/abs/torch-1.0.tar.gz");
	assert_null(f->sha256);
	assert_true(f->yanked);
	assert_string_equal(f->yanked_reason, "broken & bad");
	assert_false(f->has_metadata);
	f = &p.files[2];
	assert_string_equal(f->url, "https://other.example/x/torch-0.9-py3-none-any.whl");
	assert_true(f->yanked);
	assert_null(f->yanked_reason);
	assert_true(f->has_metadata);
	assert_null(f->metadata_sha256);
	f = &p.files[3];
	assert_string_equal(f->url, "https://host.example/simple/Torch/torch-0.8-py3-none-any.whl");
	assert_null(f->sha256); /* md5 is not kept */
	assert_true(f->yanked);
	assert_null(f->yanked_reason);
}

static void test_html_base_and_list(void **state)
{
	(void)state;
	const char *page = "<html><head><base href=\"https://cdn.example/pkgs/\"></head>"
			   "<a href=\"a-1.0-py3-none-any.whl\">a</a><a href=\"../\">parent</a>"
			   "<a href=\"b/\">b</a><a href=\"\">   </a><a>no href</a>";
	gpuenv_index_project_t p;

	assert_int_equal(gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/a/", gpuenv_str(page), &p), 0);
	assert_int_equal(p.nfiles, 3);
	assert_string_equal(p.files[0].url, "https://cdn.example/pkgs/a-1.0-py3-none-any.whl");
	assert_string_equal(p.files[1].url, "https://cdn.example/");
	assert_string_equal(p.files[1].filename, "parent");
	assert_string_equal(p.files[2].filename, "b");
}

static void test_html_errors(void **state)
{
	(void)state;
	gpuenv_index_project_t p;
	int r;

	r = gpuenv_simple_html_parse(&ctx, &arena, "https://u:pw@h/simple/x/",
		gpuenv_str("<html>\n<body>\n  <a href=\"x.whl>x</a>\n"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	assert_string_equal(ctx.err.file, "https://h/simple/x/");
	assert_int_equal(ctx.err.line, 3);
	assert_int_equal(ctx.err.col, 11);
	assert_non_null(strstr(ctx.err.msg, "quote"));
	assert_int_equal(p.nfiles, 0);

	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("<a href=\"x.whl#sha256=zz\">x</a>"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "sha256"));

	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("<a href=\"x.whl\" data-core-metadata=\"sha256=12\">x</a>"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);

	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/", gpuenv_str("<!-- open"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/", gpuenv_str("<a href=x"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);

	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("<meta name=\"pypi:repository-version\" content=\"2.0\">"), &p);
	assert_int_equal(r, GPUENV_EUNSUPPORTED);

	/* the cap is checked before a byte is read */
	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str_n("", IX_PAGE_MAX + 1), &p);
	assert_int_equal(r, GPUENV_ETOOBIG);
	assert_string_equal(ctx.err.file, "https://h/simple/x/");

	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str_n("<a href=\"x.whl\">\n\0</a>", 20), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	assert_int_equal(ctx.err.line, 2);
	r = gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("<a href=\"%00x.whl\">x</a>"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);

	/* a bare '<' and an unknown reference are text */
	assert_int_equal(gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/x/",
				 gpuenv_str("a < b &bogus; <a href=\"x-1.whl\" data-requires-python=\"&#62;=3&#x2e;8\">x</a>"),
				 &p),
		0);
	assert_int_equal(p.nfiles, 1);
	assert_string_equal(p.files[0].requires_python, ">=3.8");
}

static void test_json_page(void **state)
{
	(void)state;
	const char *page =
		"{\"meta\": {\"api-version\": \"1.1\"}, \"name\": \"Foo_Bar\", \"versions\": [\"1.0\"],\n"
		" \"files\": [\n"
		"  {\"filename\": \"foo_bar-1.0-py3-none-any.whl\", \"url\": \"../../f/foo_bar-1.0-py3-none-any.whl\",\n"
		"   \"hashes\": {\"sha256\": \"" SHA_B "\", \"md5\": \"x\"}, \"requires-python\": \">=3.8\",\n"
		"   \"core-metadata\": {\"sha256\": \"" SHA_A "\"}, \"size\": 1234,\n"
		"   \"upload-time\": \"2024-01-01T00:00:00.000000Z\", \"yanked\": false},\n"
		"  {\"filename\": \"foo_bar-0.9.tar.gz\", \"url\": \"https://files.example/foo_bar-0.9.tar.gz\",\n"
		"   \"hashes\": {}, \"yanked\": \"bad build\", \"dist-info-metadata\": true, \"requires-python\": null},\n"
		"  {\"filename\": \"foo_bar-0.8.tar.gz\", \"url\": \"foo_bar-0.8.tar.gz\", \"hashes\": {},\n"
		"   \"yanked\": true, \"core-metadata\": false}\n"
		" ]}";
	gpuenv_index_project_t p;

	assert_int_equal(gpuenv_simple_json_parse(&ctx, &arena, "https://u:p@h.example/simple/foo-bar/",
				 gpuenv_str(page), &p),
		0);
	assert_string_equal(p.name, "foo-bar");
	assert_string_equal(p.page_url, "https://h.example/simple/foo-bar/");
	assert_int_equal(p.nfiles, 3);
	assert_string_equal(p.files[0].url, "https://h.example/f/foo_bar-1.0-py3-none-any.whl");
	assert_string_equal(p.files[0].sha256, SHA_B);
	assert_string_equal(p.files[0].requires_python, ">=3.8");
	assert_true(p.files[0].has_metadata);
	assert_string_equal(p.files[0].metadata_sha256, SHA_A);
	assert_int_equal(p.files[0].size, 1234);
	assert_string_equal(p.files[0].upload_time, "2024-01-01T00:00:00.000000Z");
	assert_false(p.files[0].yanked);
	assert_true(p.files[1].yanked);
	assert_string_equal(p.files[1].yanked_reason, "bad build");
	assert_true(p.files[1].has_metadata);
	assert_null(p.files[1].metadata_sha256);
	assert_null(p.files[1].requires_python);
	assert_null(p.files[1].sha256);
	assert_string_equal(p.files[2].url, "https://h.example/simple/foo-bar/foo_bar-0.8.tar.gz");
	assert_true(p.files[2].yanked);
	assert_false(p.files[2].has_metadata);
	assert_int_equal(p.files[2].size, -1);
}

static void test_json_errors(void **state)
{
	(void)state;
	gpuenv_index_project_t p;
	int r;

	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("{\"meta\": {\"api-version\": \"1.0\"},\n \"files\": [}"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	assert_string_equal(ctx.err.file, "https://h/simple/x/");
	assert_int_equal(ctx.err.line, 2);
	assert_true(ctx.err.col > 0);

	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("{\"meta\": {\"api-version\": \"1.0\"}, \"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\"},"
			   " {\"filename\": \"b.whl\"}]}"),
		&p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "files[1].url"));

	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("{\"meta\": {\"api-version\": \"1.0\"}, \"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\","
			   " \"hashes\": {\"sha256\": \"nothex\"}}]}"),
		&p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	assert_non_null(strstr(ctx.err.msg, "files[0].hashes"));

	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("{\"meta\": {\"api-version\": \"2.0\"}, \"files\": []}"), &p);
	assert_int_equal(r, GPUENV_EUNSUPPORTED);
	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/", gpuenv_str("{\"files\": []}"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/", gpuenv_str("[]"), &p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/",
		gpuenv_str("{\"meta\": {\"api-version\": \"1.0\"}, \"files\": [{\"filename\": \"a.whl\", \"url\": \"a.whl\", \"size\": -1}]}"),
		&p);
	assert_int_equal(r, GPUENV_ESYNTAX);
	r = gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/x/", gpuenv_str_n("", IX_PAGE_MAX + 1), &p);
	assert_int_equal(r, GPUENV_ETOOBIG);
}

static char logged[2048];

static void log_keep(void *ud, int level, const char *msg)
{
	(void)ud;
	if (level == GPUENV_LOG_WARN)
		snprintf(logged + strlen(logged), sizeof(logged) - strlen(logged), "%s\n", msg);
}

/* A page's bad requires-python or upload-time is dropped with one warning
 * naming the page and the file, as pip ignores it; the page still parses
 * (issue 22 item 15: a bad attribute failed the whole lock). */
static void test_bad_attributes(void **state)
{
	(void)state;
	gpuenv_index_project_t p;
	const char *html = "<a href=\"a-1.0-py3-none-any.whl\" data-requires-python=\"&gt;=3.x\">a</a>"
			   "<a href=\"a-1.1-py3-none-any.whl\" data-requires-python=\"&gt;=3.8\">a</a>"
			   "<a href=\"a-1.2-py3-none-any.whl\" data-requires-python=\"~=3\">a</a>";
	const char *json = "{\"meta\": {\"api-version\": \"1.1\"}, \"files\": ["
			   "{\"filename\": \"a-1.0-py3-none-any.whl\", \"url\": \"a.whl\", \"upload-time\": \"yesterday\","
			   " \"requires-python\": 3},"
			   "{\"filename\": \"a-1.1-py3-none-any.whl\", \"url\": \"b.whl\", \"upload-time\": 17,"
			   " \"requires-python\": \">=3.8\"},"
			   "{\"filename\": \"a-1.2-py3-none-any.whl\", \"url\": \"c.whl\","
			   " \"upload-time\": \"2024-01-01T00:00:00.5Z\"}]}";

	ctx.log = log_keep;
	logged[0] = '\0';
	assert_int_equal(gpuenv_simple_html_parse(&ctx, &arena, "https://h/simple/a/", gpuenv_str(html), &p), 0);
	assert_int_equal(p.nfiles, 3);
	assert_null(p.files[0].requires_python);
	assert_string_equal(p.files[1].requires_python, ">=3.8");
	assert_null(p.files[2].requires_python);
	assert_non_null(strstr(logged, "https://h/simple/a/: the requires-python of 2 files ignored"));
	assert_non_null(strstr(logged, "a-1.0-py3-none-any.whl: '>=3.x'"));

	logged[0] = '\0';
	assert_int_equal(gpuenv_simple_json_parse(&ctx, &arena, "https://h/simple/a/", gpuenv_str(json), &p), 0);
	assert_int_equal(p.nfiles, 3);
	assert_null(p.files[0].upload_time);
	assert_null(p.files[0].requires_python);
	assert_null(p.files[1].upload_time);
	assert_string_equal(p.files[1].requires_python, ">=3.8");
	assert_string_equal(p.files[2].upload_time, "2024-01-01T00:00:00.5Z");
	assert_non_null(strstr(logged, "the upload-time of 2 files ignored"));
	assert_non_null(strstr(logged, "a-1.1-py3-none-any.whl: 'a number': expected a string"));
	assert_non_null(strstr(logged, "the requires-python of 1 file ignored"));
	ctx.log = NULL;
}

/* RFC 3986 5.4.1 and 5.4.2, base http://a/b/c/d;p?q */
static void test_url_resolve(void **state)
{
	(void)state;
	static const char *const v[][2] = {
		{ "g", "http://a/b/c/g" }, { "./g", "http://a/b/c/g" }, { "g/", "http://a/b/c/g/" },
		{ "/g", "http://a/g" }, { "//g", "http://g" }, { "?y", "http://a/b/c/d;p?y" },
		{ "g?y", "http://a/b/c/g?y" }, { "#s", "http://a/b/c/d;p?q" }, { "g#s", "http://a/b/c/g" },
		{ ";x", "http://a/b/c/;x" }, { "", "http://a/b/c/d;p?q" }, { ".", "http://a/b/c/" },
		{ "./", "http://a/b/c/" }, { "..", "http://a/b/" }, { "../", "http://a/b/" },
		{ "../g", "http://a/b/g" }, { "../..", "http://a/" }, { "../../", "http://a/" },
		{ "../../g", "http://a/g" }, { "../../../g", "http://a/g" }, { "/./g", "http://a/g" },
		{ "/../g", "http://a/g" }, { "g.", "http://a/b/c/g." }, { "..g", "http://a/b/c/..g" },
		{ "./../g", "http://a/b/g" }, { "g/./h", "http://a/b/c/g/h" }, { "g/../h", "http://a/b/c/h" },
		{ "https://x:y@other/p", "https://other/p" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		gpuenv_str_t frag;
		gpuenv_str_t u = ix_url_resolve(&arena, gpuenv_str("http://a/b/c/d;p?q"), gpuenv_str(v[i][0]), &frag);
		assert_non_null(u.ptr);
		if (strcmp(u.ptr, v[i][1])) {
			print_error("resolve '%s': got '%s', want '%s'\n", v[i][0], u.ptr, v[i][1]);
			fail();
		}
	}
	gpuenv_str_t user, pass;
	gpuenv_str_t s = ix_url_strip(&arena, gpuenv_str("https://us%40er:p%3Aw@h:8080/simple/?a=b"), &user, &pass);
	assert_string_equal(s.ptr, "https://h:8080/simple/?a=b");
	assert_string_equal(user.ptr, "us@er");
	assert_string_equal(pass.ptr, "p:w");
	s = ix_url_strip(&arena, gpuenv_str("file:///tmp/x"), &user, &pass);
	assert_string_equal(s.ptr, "file:///tmp/x");
	assert_int_equal(user.len, 0);
	char host[64];
	assert_true(ix_url_host("https://u:p@Host.Example:8443/x", host, sizeof(host)));
	assert_string_equal(host, "host.example:8443");
	assert_string_equal(ix_file_url_path(&arena, "file:///a%20b/c").ptr, "/a b/c");
	assert_null(ix_file_url_path(&arena, "https://h/x").ptr);
	assert_string_equal(ix_path_to_file_url(&arena, "/a b/c+d").ptr, "file:///a%20b/c+d");
}

/* Every allocation of both parsers failing in turn: -ENOMEM, recorded. */
static void test_parsers_oom(void **state)
{
	(void)state;
	const char *html = "<a href=\"../f/a-1.0-py3-none-any.whl#sha256=" SHA_A "\" data-requires-python=\"&gt;=3\""
			   " data-yanked=\"x\" data-core-metadata=\"sha256=" SHA_B "\">a</a>";
	const char *json = "{\"meta\": {\"api-version\": \"1.0\"}, \"name\": \"a\", \"files\": [{\"filename\": \"a.whl\","
			   " \"url\": \"a.whl\", \"hashes\": {\"sha256\": \"" SHA_A "\"}, \"yanked\": \"why\"}]}";
	for (int which = 0; which < 2; which++) {
		for (long k = 0;; k++) {
			testutil_alloc_t t;
			gpuenv_ctx_t c;
			gpuenv_arena_t a;
			gpuenv_index_project_t p;
			int r;
			gpuenv_ctx_init(&c);
			testutil_alloc_reset(&t, k, false);
			c.mem = testutil_allocator(&t);
			gpuenv_arena_init(&a, &c, 0);
			r = which ? gpuenv_simple_json_parse(&c, &a, "https://h/simple/a/", gpuenv_str(json), &p)
				  : gpuenv_simple_html_parse(&c, &a, "https://h/simple/a/", gpuenv_str(html), &p);
			gpuenv_arena_free(&a);
			if (!t.failures) {
				assert_int_equal(r, 0);
				break;
			}
			assert_int_equal(r, -ENOMEM);
			assert_int_equal(c.err.code, -ENOMEM);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_html_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_html_base_and_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_html_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_attributes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_url_resolve, setup, teardown),
		cmocka_unit_test(test_parsers_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
