/* Unit tests for the format-preserving TOML editor (lib/formats/toml_edit.c):
 * every valid file of toml-test cut into statements that give the file
 * back byte for byte, each key/value's span reading back as the parser's
 * value; and the edits the workflow verbs make, each checked byte for byte
 * and undone back to the original. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/toml_edit.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;

static char *text_of(gpuenv_toml_edit_t *ed)
{
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_toml_edit_write(ed, &b), 0);
	char *s = strndup(b.data ? b.data : "", b.len);
	gpuenv_buf_free(&b);
	return s;
}

static void assert_text(gpuenv_toml_edit_t *ed, const char *want)
{
	char *got = text_of(ed);
	assert_string_equal(got, want);
	free(got);
}

static void open_text(gpuenv_toml_edit_t *ed, const char *text)
{
	int r = gpuenv_toml_edit_open(ed, &ctx, "p.toml", text, strlen(text));
	if (r) {
		char m[1200];
		gpuenv_error_format(&ctx.err, m, sizeof(m));
		fail_msg("open: %s", m);
	}
}

#define P(...) ((const char *const[]){ __VA_ARGS__ }), (sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *))

/* ---- toml-test: the statements are the file; each value's span is its value ---- */

/* The value text [a, b) of ed read on its own equals v. */
static void check_span(gpuenv_toml_edit_t *ed, size_t a, size_t b, const gpuenv_toml_value_t *v, const char *file)
{
	gpuenv_buf_t t;
	gpuenv_toml_doc_t d;
	gpuenv_buf_init(&t, &ctx, 0);
	gpuenv_buf_puts(&t, "x = ");
	gpuenv_buf_append(&t, ed->text.data + a, b - a);
	gpuenv_buf_puts(&t, "\n");
	assert_int_equal(gpuenv_buf_failed(&t), 0);
	assert_int_equal(gpuenv_toml_doc_init(&d, &ctx, "span"), 0);
	if (gpuenv_toml_parse(&d, t.data, t.len) != 0)
		fail_msg("%s: value span %.*s does not parse", file, (int)(b - a), ed->text.data + a);
	if (!gpuenv_toml_value_eq(&d.root->items[0]->val, v))
		fail_msg("%s: value span %.*s is not the parser's value", file, (int)(b - a), ed->text.data + a);
	gpuenv_toml_doc_free(&d);
	gpuenv_buf_free(&t);
}

static char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n = -1;
	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
		!(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n)
		fail_msg("%s: cannot read", path);
	fclose(f);
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

static size_t check_file(const char *rel, const char *file)
{
	size_t len, checked = 0;
	char *text = read_whole(file, &len);
	gpuenv_toml_edit_t ed;
	(void)rel;
	assert_int_equal(gpuenv_toml_edit_open(&ed, &ctx, file, text, len), 0);
	/* contiguous statements, the file byte for byte */
	size_t at = 0;
	for (size_t i = 0; i < ed.nnodes; i++) {
		assert_int_equal(ed.nodes[i].start, at);
		assert_true(ed.nodes[i].end > at);
		at = ed.nodes[i].end;
	}
	assert_int_equal(at, len);
	gpuenv_buf_t out;
	gpuenv_buf_init(&out, &ctx, 0);
	assert_int_equal(gpuenv_toml_edit_write(&ed, &out), 0);
	assert_int_equal(out.len, len);
	assert_true(len == 0 || memcmp(out.data, text, len) == 0);
	gpuenv_buf_free(&out);
	/* each key/value of a [table] section or the root: its decoded path
	 * finds the parser's value, and its span reads back as that value */
	for (size_t i = 0; i < ed.nnodes; i++) {
		const gpuenv_toml_edit_node_t *nd = &ed.nodes[i];
		if (nd->kind != GPUENV_TOML_EDIT_KEYVAL)
			continue;
		if (nd->header != UINT32_MAX && ed.nodes[nd->header].kind != GPUENV_TOML_EDIT_TABLE)
			continue;
		const gpuenv_toml_table_t *t = ed.doc.root;
		const gpuenv_toml_kv_t *kv = NULL;
		for (uint32_t k = 0; k < nd->npath; k++) {
			kv = gpuenv_toml_find(t, nd->path[k]);
			if (!kv)
				fail_msg("%s: key part %u of statement %zu not found", file, k, i);
			if (k + 1 < nd->npath) {
				if (kv->val.type == GPUENV_TOML_ARRAY) /* [a.b] under [[a]]: an element's */
					break;
				assert_int_equal(kv->val.type, GPUENV_TOML_TABLE);
				t = kv->val.u.tab;
			}
		}
		if (kv->key.ptr != NULL && !gpuenv_str_eq(kv->key, nd->path[nd->npath - 1]))
			continue;
		check_span(&ed, nd->vstart, nd->vend, &kv->val, file);
		if (kv->val.type == GPUENV_TOML_ARRAY) {
			gpuenv_toml_edit_elem_t *el;
			size_t ne;
			assert_int_equal(gpuenv_toml_edit_elems(&ed, nd, &el, &ne), 0);
			if (ne != kv->val.u.arr->len)
				fail_msg("%s: statement %zu: %zu elements, the parser has %u", file, i, ne, kv->val.u.arr->len);
			for (size_t k = 0; k < ne; k++)
				check_span(&ed, el[k].start, el[k].end, kv->val.u.arr->items[k], file);
		}
		checked++;
	}
	gpuenv_toml_edit_free(&ed);
	free(text);
	return checked;
}

static void test_toml_test_roundtrip(void **state)
{
	(void)state;
	const char *shared = getenv("GPUENV_SHARED");
	char list[4096], line[1024], path[4096];
	size_t files = 0, kvs = 0;
	if (!shared)
		shared = "../shared";
	snprintf(list, sizeof(list), "%s/testdata/toml-test/tests/files-toml-1.0.0", shared);
	FILE *f = fopen(list, "r");
	if (!f)
		fail_msg("%s: not readable (GPUENV_SHARED)", list);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		size_t n = strlen(line);
		if (strncmp(line, "valid/", 6) != 0 || n < 5 || strcmp(line + n - 5, ".toml") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/testdata/toml-test/tests/%s", shared, line);
		kvs += check_file(line, path);
		files++;
	}
	fclose(f);
	assert_true(files >= 200);
	assert_true(kvs >= 500);
	printf("toml-test: %zu valid files byte-identical, %zu key/values checked\n", files, kvs);
}

/* ---- edits ---- */

static void test_array_multiline(void **state)
{
	(void)state;
	const char *orig = "[project]\n"
			   "name = \"x\"\n"
			   "dependencies = [\n"
			   "  # the numerics\n"
			   "  \"numpy>=1.24\",  # pinned below 2 elsewhere\n"
			   "  \"pillow\",\n"
			   "]\n"
			   "\n"
			   "# tail\n";
	gpuenv_toml_edit_t ed;
	open_text(&ed, orig);
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("project", "dependencies"), GPUENV_STR_LIT("\"torch>=2\"")), 0);
	assert_text(&ed, "[project]\n"
			 "name = \"x\"\n"
			 "dependencies = [\n"
			 "  # the numerics\n"
			 "  \"numpy>=1.24\",  # pinned below 2 elsewhere\n"
			 "  \"pillow\",\n"
			 "  \"torch>=2\",\n"
			 "]\n"
			 "\n"
			 "# tail\n");
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("project", "dependencies"), 2), 0);
	assert_text(&ed, orig);
	/* the first element goes with its line's comment; the others' stay */
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("project", "dependencies"), 0), 0);
	assert_text(&ed, "[project]\n"
			 "name = \"x\"\n"
			 "dependencies = [\n"
			 "  # the numerics\n"
			 "  \"pillow\",\n"
			 "]\n"
			 "\n"
			 "# tail\n");
	gpuenv_toml_edit_free(&ed);
}

static void test_array_multiline_no_trailing_comma(void **state)
{
	(void)state;
	const char *orig = "deps = [\n\t\"a\",  # one\n\t\"b\"\n]\n";
	gpuenv_toml_edit_t ed;
	open_text(&ed, orig);
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("deps"), GPUENV_STR_LIT("\"c\"")), 0);
	assert_text(&ed, "deps = [\n\t\"a\",  # one\n\t\"b\",\n\t\"c\"\n]\n");
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("deps"), 2), 0);
	assert_text(&ed, orig);
	gpuenv_toml_edit_free(&ed);
	/* an empty multi-line array: four spaces and a comma */
	open_text(&ed, "deps = [\n]\n");
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("deps"), GPUENV_STR_LIT("\"c\"")), 0);
	assert_text(&ed, "deps = [\n    \"c\",\n]\n");
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("deps"), 0), 0);
	assert_text(&ed, "deps = [\n]\n");
	gpuenv_toml_edit_free(&ed);
}

static void test_array_one_line(void **state)
{
	(void)state;
	gpuenv_toml_edit_t ed;
	const char *orig = "[dependency-groups]\ndev = [\"pytest\", 'ruff'] # lint\n";
	open_text(&ed, orig);
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("dependency-groups", "dev"), GPUENV_STR_LIT("\"mypy\"")), 0);
	assert_text(&ed, "[dependency-groups]\ndev = [\"pytest\", 'ruff', \"mypy\"] # lint\n");
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("dependency-groups", "dev"), 2), 0);
	assert_text(&ed, orig);
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("dependency-groups", "dev"), 0), 0);
	assert_text(&ed, "[dependency-groups]\ndev = ['ruff'] # lint\n");
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("dependency-groups", "dev"), 0), 0);
	assert_text(&ed, "[dependency-groups]\ndev = [] # lint\n");
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("dependency-groups", "dev"), GPUENV_STR_LIT("\"a\"")), 0);
	assert_text(&ed, "[dependency-groups]\ndev = [\"a\"] # lint\n");
	gpuenv_toml_edit_free(&ed);
	/* compact separators and a trailing comma stay */
	open_text(&ed, "a = [1,2,]\n");
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("a"), GPUENV_STR_LIT("3")), 0);
	assert_text(&ed, "a = [1,2,3,]\n");
	assert_int_equal(gpuenv_toml_edit_array_remove(&ed, P("a"), 2), 0);
	assert_text(&ed, "a = [1,2,]\n");
	gpuenv_toml_edit_free(&ed);
}

static const char poetry[] = "[tool.poetry]\n"
			     "name = \"sat\"\n"
			     "\n"
			     "[tool.poetry.dependencies]\n"
			     "python = \"^3.10\"\n"
			     "torch = { version = \"^2.1.0\", source = \"pytorch\" }  # the GPU build\n"
			     "numpy = \"^1.24\"\n"
			     "\n"
			     "[[tool.poetry.source]]\n"
			     "name = \"pytorch\"\n"
			     "url = \"https://download.pytorch.org/whl/cu118\"\n"
			     "priority = \"explicit\"\n"
			     "\n"
			     "# the end\n";

static void test_table_keys(void **state)
{
	(void)state;
	gpuenv_toml_edit_t ed;
	open_text(&ed, poetry);
	/* a key after the section's last key/value, before its blank line */
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("tool", "poetry", "dependencies", "pillow"),
				 GPUENV_STR_LIT("{ version = \"^10\", source = \"pytorch\" }")), 0);
	char *t = text_of(&ed);
	assert_non_null(strstr(t, "numpy = \"^1.24\"\npillow = { version = \"^10\", source = \"pytorch\" }\n\n[[tool"));
	free(t);
	assert_int_equal(gpuenv_toml_edit_remove(&ed, P("tool", "poetry", "dependencies", "pillow"), GPUENV_TOML_EDIT_PRUNE), 0);
	assert_text(&ed, poetry);
	/* a value replaced in place, its comment kept */
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("tool", "poetry", "dependencies", "torch"), GPUENV_STR_LIT("\"^2.4\"")), 0);
	t = text_of(&ed);
	assert_non_null(strstr(t, "\ntorch = \"^2.4\"  # the GPU build\n"));
	free(t);
	gpuenv_toml_edit_free(&ed);
	/* a table that is missing: a section at the end, pruned back away */
	open_text(&ed, poetry);
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("tool", "poetry", "group", "t4", "dependencies", "onnx"),
				 GPUENV_STR_LIT("\"*\"")), 0);
	t = text_of(&ed);
	assert_non_null(strstr(t, "# the end\n\n[tool.poetry.group.t4.dependencies]\nonnx = \"*\"\n"));
	free(t);
	assert_int_equal(gpuenv_toml_edit_remove(&ed, P("tool", "poetry", "group", "t4", "dependencies", "onnx"),
				 GPUENV_TOML_EDIT_PRUNE), 0);
	assert_text(&ed, poetry);
	/* removing a key keeps the comments of the others */
	assert_int_equal(gpuenv_toml_edit_remove(&ed, P("tool", "poetry", "dependencies", "python"), 0), 0);
	t = text_of(&ed);
	assert_non_null(strstr(t, "[tool.poetry.dependencies]\ntorch = { version = \"^2.1.0\", source = \"pytorch\" }  # the GPU build\n"));
	free(t);
	assert_int_equal(gpuenv_toml_edit_remove(&ed, P("tool", "poetry", "dependencies", "python"), 0), GPUENV_ENOTFOUND);
	gpuenv_toml_edit_free(&ed);
}

static void test_aot(void **state)
{
	(void)state;
	gpuenv_toml_edit_t ed;
	open_text(&ed, poetry);
	assert_int_equal(gpuenv_toml_edit_aot_count(&ed, P("tool", "poetry", "source"), NULL, 0), 1);
	assert_int_equal(gpuenv_toml_edit_aot_append(&ed, P("tool", "poetry", "source"),
				 GPUENV_STR_LIT("name = \"ngc\"\nurl = \"https://pypi.ngc.nvidia.com\"\n")), 0);
	char *t = text_of(&ed);
	assert_non_null(strstr(t, "priority = \"explicit\"\n\n[[tool.poetry.source]]\nname = \"ngc\"\n"
				  "url = \"https://pypi.ngc.nvidia.com\"\n\n# the end\n"));
	free(t);
	assert_int_equal(gpuenv_toml_edit_aot_count(&ed, P("tool", "poetry", "source"), NULL, 0), 2);
	assert_int_equal(gpuenv_toml_edit_aot_remove(&ed, P("tool", "poetry", "source"), 1), 0);
	assert_text(&ed, poetry);
	assert_int_equal(gpuenv_toml_edit_aot_remove(&ed, P("tool", "poetry", "source"), 3), GPUENV_ENOTFOUND);
	gpuenv_toml_edit_free(&ed);
	/* none yet: a first one at the end */
	open_text(&ed, "[tool.poetry]\nname = \"x\"\n");
	assert_int_equal(gpuenv_toml_edit_aot_append(&ed, P("tool", "poetry", "source"), GPUENV_STR_LIT("name = \"a\"\n")), 0);
	assert_text(&ed, "[tool.poetry]\nname = \"x\"\n\n[[tool.poetry.source]]\nname = \"a\"\n");
	assert_int_equal(gpuenv_toml_edit_aot_remove(&ed, P("tool", "poetry", "source"), 0), 0);
	assert_text(&ed, "[tool.poetry]\nname = \"x\"\n");
	gpuenv_toml_edit_free(&ed);
}

static void test_dotted_quoted_crlf(void **state)
{
	(void)state;
	gpuenv_toml_edit_t ed;
	/* a table made by dotted keys gets a dotted line */
	open_text(&ed, "[project]\nname = \"x\"\noptional-dependencies.gpu = [\"cupy\"]\n\n[tool.x]\n");
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("project", "optional-dependencies", "cpu"), GPUENV_STR_LIT("[\"numpy\"]")), 0);
	assert_text(&ed, "[project]\nname = \"x\"\noptional-dependencies.gpu = [\"cupy\"]\noptional-dependencies.cpu = [\"numpy\"]\n\n[tool.x]\n");
	gpuenv_toml_edit_free(&ed);
	/* quoted keys and headers decode; the file's CRLF is kept */
	open_text(&ed, "[ \"tool\" . 'poetry'.\"dependen\\u0063ies\" ]\r\n\"numpy\" = \"*\"\r\n");
	assert_non_null(gpuenv_toml_edit_find(&ed, P("tool", "poetry", "dependencies", "numpy")));
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("tool", "poetry", "dependencies", "a.b"), GPUENV_STR_LIT("\"1\"")), 0);
	assert_text(&ed, "[ \"tool\" . 'poetry'.\"dependen\\u0063ies\" ]\r\n\"numpy\" = \"*\"\r\n\"a.b\" = \"1\"\r\n");
	gpuenv_toml_edit_free(&ed);
	/* no newline at the end: a key after it, removed back */
	open_text(&ed, "[a]\nx = 1");
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("a", "y"), GPUENV_STR_LIT("2")), 0);
	assert_text(&ed, "[a]\nx = 1\ny = 2\n");
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("a", "y"), GPUENV_STR_LIT("2")), GPUENV_ETYPE);
	gpuenv_toml_edit_free(&ed);
}

static void test_refused(void **state)
{
	(void)state;
	gpuenv_toml_edit_t ed;
	const char *orig = "[a]\nx = { y = 1 }\nz = [1]\n";
	open_text(&ed, orig);
	/* a value that does not parse: refused, the text as it was */
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("a", "w"), GPUENV_STR_LIT("[1,")), GPUENV_ESYNTAX);
	assert_string_equal(ctx.err.file, "p.toml");
	assert_text(&ed, orig);
	/* a key inside an inline table */
	assert_int_equal(gpuenv_toml_edit_set(&ed, P("a", "x", "q"), GPUENV_STR_LIT("1")), GPUENV_EUNSUPPORTED);
	assert_text(&ed, orig);
	assert_int_equal(gpuenv_toml_edit_array_append(&ed, P("a", "nope"), GPUENV_STR_LIT("1")), GPUENV_ENOTFOUND);
	gpuenv_toml_edit_free(&ed);
	/* a file that does not parse: file:line:col */
	assert_int_not_equal(gpuenv_toml_edit_open(&ed, &ctx, "bad.toml", "a = 1\nb = \n", 11), 0);
	assert_int_equal(ctx.err.line, 2);
	assert_string_equal(ctx.err.file, "bad.toml");
	gpuenv_toml_edit_free(&ed);
}

/* every allocation failing in turn: an error, never a crash or a leak */
static void test_alloc_failures(void **state)
{
	(void)state;
	testutil_alloc_t ta;
	gpuenv_ctx_t c2;
	gpuenv_ctx_init(&c2);
	c2.mem = testutil_allocator(&ta);
	for (long i = 0;; i++) {
		gpuenv_toml_edit_t ed;
		testutil_alloc_reset(&ta, i, false);
		int r = gpuenv_toml_edit_open(&ed, &c2, "p.toml", poetry, strlen(poetry));
		if (!r)
			r = gpuenv_toml_edit_set(&ed, P("tool", "poetry", "dependencies", "x"), GPUENV_STR_LIT("\"1\""));
		if (!r)
			r = gpuenv_toml_edit_aot_append(&ed, P("tool", "poetry", "source"), GPUENV_STR_LIT("name = \"a\"\n"));
		gpuenv_toml_edit_free(&ed);
		if (!ta.failures) {
			assert_int_equal(r, 0);
			break;
		}
		assert_int_not_equal(r, 0);
	}
}

int main(void)
{
	gpuenv_ctx_init(&ctx);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toml_test_roundtrip),
		cmocka_unit_test(test_array_multiline),
		cmocka_unit_test(test_array_multiline_no_trailing_comma),
		cmocka_unit_test(test_array_one_line),
		cmocka_unit_test(test_table_keys),
		cmocka_unit_test(test_aot),
		cmocka_unit_test(test_dotted_quoted_crlf),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
