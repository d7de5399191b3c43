/* Unit tests for the TOML module: parser, positions, errors, lookups,
 * date/times, builder, writer, round trips over toml-test, limits and
 * allocation failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/fs.h"
#include "gpuenv/toml.h"

#include "testutil.h"

/* ---- helpers ---- */

static gpuenv_ctx_t ctx;

static int parse(gpuenv_toml_doc_t *doc, const char *text)
{
	assert_int_equal(gpuenv_toml_doc_init(doc, &ctx, "t.toml"), 0);
	return gpuenv_toml_parse(doc, text, strlen(text));
}

static const char *errmsg(void)
{
	static char out[1200];
	gpuenv_error_format(&ctx.err, out, sizeof(out));
	return out;
}

/* the error for text, as "file:line:col: message" */
static const char *parse_error(const char *text)
{
	gpuenv_toml_doc_t doc;
	int r = parse(&doc, text);
	gpuenv_toml_doc_free(&doc);
	if (r == 0)
		return "(no error)";
	return errmsg();
}


static char *write_doc(const gpuenv_toml_table_t *root)
{
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_toml_write(&ctx, root, &b), 0);
	if (!b.data)
		assert_int_equal(gpuenv_buf_puts(&b, ""), 0);
	return gpuenv_buf_steal(&b, NULL);
}

/* ---- parsing ---- */

static void test_values(void **state)
{
	(void)state;
	gpuenv_toml_doc_t doc;
	const char *text =
		"# a comment\n"
		"s = \"basic \\\"q\\\" \\u00e9\\U0001F600\"\n"
		"l = 'C:\\path'\n"
		"ml = \"\"\"\nline1\n  line2 \\\n    joined\"\"\"\n"
		"i = -1_000\n"
		"h = 0xdead_BEEF\n"
		"f = 6.626e-34\n"
		"inf = -inf\n"
		"b = true\n"
		"odt = 1979-05-27 07:32:00.5-07:00\n"
		"ldt = 1979-05-27T07:32:00\n"
		"ld = 1979-05-27\n"
		"lt = 07:32:00.999999\n"
		"arr = [ 1, 'two', [3.0], {x = 4} ,]\n"
		"[t]\n"
		"a.b = 1\n";
	assert_int_equal(parse(&doc, text), 0);
	gpuenv_str_t s;
	int64_t i;
	double f;
	bool b;
	assert_int_equal(gpuenv_toml_get_string(&doc, doc.root, "s", &s), 0);
	assert_true(gpuenv_str_eq_cstr(s, "basic \"q\" \xc3\xa9\xf0\x9f\x98\x80"));
	assert_int_equal(gpuenv_toml_get_string(&doc, doc.root, "l", &s), 0);
	assert_true(gpuenv_str_eq_cstr(s, "C:\\path"));
	assert_int_equal(gpuenv_toml_get_string(&doc, doc.root, "ml", &s), 0);
	assert_true(gpuenv_str_eq_cstr(s, "line1\n  line2 joined"));
	assert_int_equal(gpuenv_toml_get_integer(&doc, doc.root, "i", &i), 0);
	assert_int_equal(i, -1000);
	assert_int_equal(gpuenv_toml_get_integer(&doc, doc.root, "h", &i), 0);
	assert_int_equal(i, 0xdeadbeef);
	assert_int_equal(gpuenv_toml_get_float(&doc, doc.root, "f", &f), 0);
	assert_true(f == 6.626e-34);
	assert_int_equal(gpuenv_toml_get_float(&doc, doc.root, "inf", &f), 0);
	assert_true(isinf(f) && f < 0);
	assert_int_equal(gpuenv_toml_get_float(&doc, doc.root, "i", &f), 0); /* integers too */
	assert_true(f == -1000.0);
	assert_int_equal(gpuenv_toml_get_bool(&doc, doc.root, "b", &b), 0);
	assert_true(b);
	assert_int_equal(gpuenv_toml_get(doc.root, "odt")->type, GPUENV_TOML_DATETIME);
	assert_true(gpuenv_str_eq_cstr(gpuenv_toml_get(doc.root, "odt")->u.str,
		"1979-05-27 07:32:00.5-07:00"));
	assert_int_equal(gpuenv_toml_get(doc.root, "ldt")->type, GPUENV_TOML_DATETIME_LOCAL);
	assert_int_equal(gpuenv_toml_get(doc.root, "ld")->type, GPUENV_TOML_DATE_LOCAL);
	assert_int_equal(gpuenv_toml_get(doc.root, "lt")->type, GPUENV_TOML_TIME_LOCAL);
	gpuenv_toml_array_t *arr;
	assert_int_equal(gpuenv_toml_get_array(&doc, doc.root, "arr", &arr), 0);
	assert_int_equal(arr->len, 4);
	assert_int_equal(arr->items[2]->type, GPUENV_TOML_ARRAY);
	assert_int_equal(arr->items[3]->type, GPUENV_TOML_TABLE);
	assert_true(arr->items[3]->flags & GPUENV_TOML_INLINE);
	assert_int_equal(gpuenv_toml_get_integer(&doc, doc.root, "t.a.b", &i), 0);
	assert_int_equal(i, 1);
	gpuenv_toml_value_t *t = gpuenv_toml_get(doc.root, "t");
	assert_true(t->flags & GPUENV_TOML_DEFINED);
	assert_true(gpuenv_toml_get(t->u.tab, "a")->flags & GPUENV_TOML_DOTTED);
	/* insertion order */
	assert_true(gpuenv_str_eq_cstr(doc.root->items[0]->key, "s"));
	assert_true(gpuenv_str_eq_cstr(doc.root->items[doc.root->len - 1]->key, "t"));
	gpuenv_toml_doc_free(&doc);
}

static void test_positions(void **state)
{
	(void)state;
	gpuenv_toml_doc_t doc;
	/* columns count characters: 'é' is one */
	assert_int_equal(parse(&doc, "\n[project]\nname = \"x\"\n\"é\" = 1\n  deps = [\n    'a',\n  'b']\n"), 0);
	gpuenv_toml_table_t *p;
	assert_int_equal(gpuenv_toml_get_table(&doc, doc.root, "project", &p), 0);
	assert_int_equal(p->line, 2);
	assert_int_equal(p->col, 2);
	gpuenv_toml_kv_t *kv = gpuenv_toml_find(p, gpuenv_str("name"));
	assert_int_equal(kv->line, 3);
	assert_int_equal(kv->col, 1);
	assert_int_equal(kv->val.line, 3);
	assert_int_equal(kv->val.col, 8);
	kv = gpuenv_toml_find(p, gpuenv_str("\xc3\xa9"));
	assert_int_equal(kv->val.col, 7);
	kv = gpuenv_toml_find(p, gpuenv_str("deps"));
	assert_int_equal(kv->line, 5);
	assert_int_equal(kv->col, 3);
	assert_int_equal(kv->val.u.arr->items[0]->line, 6);
	assert_int_equal(kv->val.u.arr->items[0]->col, 5);
	assert_int_equal(kv->val.u.arr->items[1]->line, 7);
	assert_int_equal(kv->val.u.arr->items[1]->col, 3);

	/* typed getters say where and what */
	int64_t i;
	assert_int_equal(gpuenv_toml_get_integer(&doc, doc.root, "project.name", &i), GPUENV_ETYPE);
	assert_string_equal(errmsg(), "t.toml:3:8: 'project.name' must be an integer, not a string");
	assert_int_equal(gpuenv_toml_get_integer(&doc, p, "version", &i), GPUENV_ENOTFOUND);
	assert_string_equal(errmsg(), "t.toml:2:2: missing key 'version'");
	gpuenv_toml_doc_free(&doc);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "a = 1\nb = \"open\n", "t.toml:2:10: newline in a single-line string" },
		{ "a = 1\na = 2\n", "t.toml:2:1: duplicate key 'a': already defined at line 1 as integer" },
		{ "[x]\n[x]\n", "t.toml:2:2: cannot define table 'x': already defined at line 1 as a table" },
		{ "key value\n", "t.toml:1:5: unexpected 'v'; expected '=' after the key (keys with spaces need quotes)" },
		{ "a = \"\\e\"\n", "t.toml:1:6: invalid escape sequence '\\' followed by 'e' (\\e and \\x are TOML 1.1, not 1.0)" },
		{ "a = {b = 1,\n c = 2}\n", "t.toml:1:12: inline table must close with '}' on the same line" },
		{ "a = {b = 1,}\n", "t.toml:1:12: trailing comma in inline table" },
		{ "a = 9223372036854775808\n", "t.toml:1:5: integer does not fit in 64 bits" },
		{ "a = 07\n", "t.toml:1:5: leading zeros are not allowed in '07'" },
		{ "a = 2023-02-29\n", "t.toml:1:5: invalid date/time '2023-02-29'" },
		{ "a = 07:32\n", "t.toml:1:5: invalid date/time '07:32'" },
		{ "a = [1 2]\n", "t.toml:1:8: unexpected '2'; expected ',' or ']' in array" },
		{ "a = tru\n", "t.toml:1:5: invalid value 'tru'" },
		{ "a = 1 b = 2\n", "t.toml:1:7: unexpected 'b'; expected a newline after the value" },
		{ "a = 'x'\n\xc3\xa9\xff = 1\n", "t.toml:2:2: invalid UTF-8 (byte 0xFF)" },
		{ "a = \"\"\"\nabc\ndef", "t.toml:1:5: unterminated multi-line string" },
		{ "a = \"\"\"\nabc\n \\q\"\"\"\n", "t.toml:3:2: invalid escape sequence" },
		{ "x = 1\r\ny = 2\r", "t.toml:2:6: unexpected control character U+000D; expected a newline" },
		{ "a = [\n1,\n# c\n", "t.toml:1:5: array is not closed with ']'" },
		{ "[a]\nb.c = 1\n[a.b]\n", "t.toml:3:4: cannot define table 'b': already defined at line 2 as a table" },
		{ "a = {}\n[a.b]\n", "t.toml:2:2: cannot add to 'a': already defined at line 1 as an inline table" },
		{ "[[a]]\n[a]\n", "t.toml:2:2: cannot define table 'a': already defined at line 1 as an array of tables" },
		{ "a = []\n[[a]]\n", "t.toml:2:3: cannot define array of tables 'a': already defined at line 1 as an array" },
		{ "\"\"\"k\"\"\" = 1\n", "t.toml:1:1: a multi-line string cannot be a key" },
		{ "a = 1 # \x01\n", "t.toml:1:9: control character U+0001 is not allowed in a comment" },
		{ "\xff\xfe""a\0 = 1", "t.toml:1:1: invalid UTF-8 (byte 0xFF): TOML must be UTF-8, this looks like UTF-16" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = parse_error(cases[i].text);
		if (strncmp(got, cases[i].want, strlen(cases[i].want)) != 0)
			fail_msg("case %zu: %s\n  got:  %s\n  want: %s", i, cases[i].text, got,
				cases[i].want);
	}
}

static void test_table_rules(void **state)
{
	(void)state;
	static const char *ok[] = {
		"[a.b.c]\n[a]\nb.d = 1\n",	/* implicit table extended by dotted keys */
		"a.b = 1\n[a.c]\n",		/* sub-table of a dotted table */
		"[a]\nb.c = 1\n[a.b.d]\n",
		"[[a]]\n[a.b]\nc = 1\n[[a]]\n[a.b]\nc = 2\n", /* one b per a */
		"[x.y]\n[x]\n",
		"t = {a.b = 1, a.c = 2}\n",
	};
	static const char *bad[] = {
		"[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n",
		"[[a.b]]\n[a]\nb.y = 2\n",
		"a.b.c = 1\na.b = 2\n",
		"a = {k1 = 1, k1.name = 'joe'}\n",
		"[t1]\nt2.t3.v = 0\n[t1.t2]\n",
		"[a]\nb = { c = 2, d = {} }\n[a.b]\n",
		"a = []\n[[a.b]]\n",
		"[a]\n[a.b]\n[a]\n",
	};
	gpuenv_toml_doc_t doc;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (parse(&doc, ok[i]))
			fail_msg("should parse: %s\n%s", ok[i], errmsg());
		gpuenv_toml_doc_free(&doc);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!parse(&doc, bad[i]))
			fail_msg("should fail: %s", bad[i]);
		gpuenv_toml_doc_free(&doc);
	}
	assert_int_equal(parse(&doc, "[[a]]\n[a.b]\nc = 1\n[[a]]\n[a.b]\nc = 2\n"), 0);
	gpuenv_toml_value_t *a = gpuenv_toml_get(doc.root, "a");
	assert_int_equal(a->type, GPUENV_TOML_ARRAY);
	assert_true(a->flags & GPUENV_TOML_AOT);
	assert_int_equal(a->u.arr->len, 2);
	int64_t c;
	assert_int_equal(gpuenv_toml_get_integer(&doc, a->u.arr->items[1]->u.tab, "b.c", &c), 0);
	assert_int_equal(c, 2);
	gpuenv_toml_doc_free(&doc);
}

static void test_lookup_paths(void **state)
{
	(void)state;
	gpuenv_toml_doc_t doc;
	assert_int_equal(parse(&doc, "[tool.\"a.b\".'c d']\nx = 1\n[tool.gpuenv.targets.a100]\ncuda = '12.4'\n"), 0);
	assert_non_null(gpuenv_toml_get_path(doc.root, "tool.\"a.b\".'c d'.x"));
	assert_non_null(gpuenv_toml_get_path(doc.root, "tool . 'a.b' . \"c d\" . x"));
	assert_null(gpuenv_toml_get_path(doc.root, "tool.a.b"));
	assert_null(gpuenv_toml_get_path(doc.root, "tool..gpuenv"));
	assert_null(gpuenv_toml_get_path(doc.root, "tool.gpuenv.targets.a100.cuda.x"));
	assert_null(gpuenv_toml_get_path(doc.root, ""));
	gpuenv_str_t s;
	assert_int_equal(gpuenv_toml_get_string(&doc, doc.root, "tool.gpuenv.targets.a100.cuda", &s), 0);
	assert_true(gpuenv_str_eq_cstr(s, "12.4"));
	gpuenv_toml_doc_free(&doc);
}

static void test_big_table(void **state)
{
	(void)state;
	gpuenv_buf_t b;
	gpuenv_toml_doc_t doc;
	gpuenv_buf_init(&b, &ctx, 0);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(gpuenv_buf_printf(&b, "key-%d = %d\n", i, i), 0);
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, b.data, b.len), 0);
	assert_int_equal(doc.root->len, 5000);
	for (int i = 0; i < 5000; i += 7) {
		char k[32];
		snprintf(k, sizeof(k), "key-%d", i);
		gpuenv_toml_value_t *v = gpuenv_toml_get(doc.root, k);
		assert_non_null(v);
		assert_int_equal(v->u.i, i);
	}
	assert_null(gpuenv_toml_get(doc.root, "key-5000"));
	gpuenv_toml_doc_free(&doc);
	/* a duplicate far down is still found */
	assert_int_equal(gpuenv_buf_puts(&b, "key-1234 = 0\n"), 0);
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, b.data, b.len), GPUENV_EDUPLICATE);
	gpuenv_toml_doc_free(&doc);
	gpuenv_buf_free(&b);
}

static void test_limits(void **state)
{
	(void)state;
	gpuenv_toml_doc_t doc;
	char deep[1000];
	/* arrays nested past the limit */
	size_t n = 0;
	n += (size_t)snprintf(deep, sizeof(deep), "a = ");
	for (int i = 0; i < 200; i++)
		deep[n++] = '[';
	for (int i = 0; i < 200; i++)
		deep[n++] = ']';
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, deep, n), GPUENV_ETOOBIG);
	gpuenv_toml_doc_free(&doc);
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	doc.max_depth = 300;
	assert_int_equal(gpuenv_toml_parse(&doc, deep, n), 0);
	gpuenv_toml_doc_free(&doc);
	/* dotted keys count as nesting too */
	n = 0;
	for (int i = 0; i < 150; i++) {
		deep[n++] = 'k';
		deep[n++] = '.';
	}
	memcpy(deep + n, "k = 1", 5);
	n += 5;
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, deep, n), GPUENV_ETOOBIG);
	gpuenv_toml_doc_free(&doc);
	/* input size */
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, "big.toml"), 0);
	doc.max_size = 4;
	assert_int_equal(gpuenv_toml_parse(&doc, "a = 1", 5), GPUENV_ETOOBIG);
	gpuenv_toml_doc_free(&doc);
	/* input that is not NUL-terminated: an exact-size heap copy */
	char *exact = malloc(7);
	memcpy(exact, "a = 'x", 6);
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, exact, 6), GPUENV_ESYNTAX);
	gpuenv_toml_doc_free(&doc);
	memcpy(exact, "a = 12", 6);
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, exact, 6), 0);
	assert_int_equal(gpuenv_toml_get(doc.root, "a")->u.i, 12);
	gpuenv_toml_doc_free(&doc);
	free(exact);
}

static void test_borrowed_and_columns(void **state)
{
	(void)state;
	gpuenv_toml_doc_t doc;
	/* borrowed: strings are slices of the caller's text */
	static const char text[] = "a = 'x'\nb = \"esc\\t\"\n";
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse_borrowed(&doc, text, sizeof(text) - 1), 0);
	gpuenv_toml_value_t *a = gpuenv_toml_get(doc.root, "a");
	assert_ptr_equal(a->u.str.ptr, text + 5);
	assert_true(gpuenv_str_eq_cstr(gpuenv_toml_get(doc.root, "b")->u.str, "esc\t"));
	gpuenv_toml_doc_free(&doc);
	/* text[len] must be NUL */
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	assert_int_equal(gpuenv_toml_parse_borrowed(&doc, "a = 1\nb = 2", 5), GPUENV_EUSAGE);
	gpuenv_toml_doc_free(&doc);

	/* a very long line: stored columns stop at GPUENV_TOML_COL_MAX, errors
	 * keep the exact column */
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_buf_puts(&b, "a = ["), 0);
	for (int i = 0; i < 25000; i++)
		assert_int_equal(gpuenv_buf_puts(&b, "1, "), 0);
	assert_int_equal(gpuenv_buf_puts(&b, "2]\nb = 1"), 0);
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, "long.toml"), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, b.data, b.len), 0);
	gpuenv_toml_array_t *arr = gpuenv_toml_get(doc.root, "a")->u.arr;
	assert_int_equal(arr->items[0]->col, 6);
	assert_int_equal(arr->items[25000]->col, GPUENV_TOML_COL_MAX);
	assert_int_equal(gpuenv_toml_get(doc.root, "b")->line, 2);
	gpuenv_toml_doc_free(&doc);
	b.len -= 2; /* "...2]\nb = " : a value is missing at the very end */
	b.data[b.len] = '\0';
	b.data[5 + 3 * 25000] = 'x'; /* "x]" instead of "2]" */
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, "long.toml"), 0);
	assert_int_equal(gpuenv_toml_parse(&doc, b.data, b.len), GPUENV_ESYNTAX);
	assert_int_equal(ctx.err.line, 1);
	assert_int_equal(ctx.err.col, 6 + 3 * 25000);
	assert_int_equal(doc.root->len, 0); /* nothing half-made stays reachable */
	gpuenv_toml_doc_free(&doc);
	gpuenv_buf_free(&b);
}

static void test_datetime(void **state)
{
	(void)state;
	gpuenv_toml_datetime_t dt;
	assert_int_equal(gpuenv_toml_datetime_parse(gpuenv_str("1979-05-27T07:32:00.123456789999-08:30"), &dt),
		GPUENV_TOML_DATETIME);
	assert_int_equal(dt.year, 1979);
	assert_int_equal(dt.month, 5);
	assert_int_equal(dt.day, 27);
	assert_int_equal(dt.hour, 7);
	assert_int_equal(dt.minute, 32);
	assert_int_equal(dt.nanosecond, 123456789);
	assert_int_equal(dt.offset_minutes, -510);
	assert_int_equal(gpuenv_toml_datetime_parse(gpuenv_str("2000-02-29 23:59:60z"), &dt),
		GPUENV_TOML_DATETIME);
	assert_int_equal(gpuenv_toml_datetime_parse(gpuenv_str("07:32:00.5"), &dt), GPUENV_TOML_TIME_LOCAL);
	assert_int_equal(dt.nanosecond, 500000000);
	assert_int_equal(gpuenv_toml_datetime_parse(gpuenv_str("1979-05-27"), NULL), GPUENV_TOML_DATE_LOCAL);
	assert_int_equal(gpuenv_toml_datetime_parse(gpuenv_str("1979-05-27t07:32:00"), NULL),
		GPUENV_TOML_DATETIME_LOCAL);
	static const char *bad[] = { "1900-02-29", "2023-04-31", "2023-00-01", "2023-01-00",
		"24:00:00", "12:60:00", "12:00:61", "12:00", "12:00:00.", "1979-05-27T07:32:00+24:00",
		"1979-05-27T07:32:00+01", "1979-05-27X07:32:00", "10000-01-01", "979-05-27",
		"1979-05-27T07:32:00Zx", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gpuenv_toml_datetime_parse(gpuenv_str(bad[i]), NULL) >= 0)
			fail_msg("accepted '%s'", bad[i]);
}

static void test_format_float(void **state)
{
	(void)state;
	static const struct {
		double f;
		const char *want;
	} cases[] = {
		{ 0.1, "0.1" }, { 100.0, "100.0" }, { -0.0, "-0.0" }, { 1e300, "1e+300" },
		{ 5e-324, "5e-324" }, { 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 3.14159, "3.14159" }, { 1.0 / 3, "0.3333333333333333" }, { 1e16, "1e+16" },
	};
	char buf[32];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpuenv_toml_format_float(cases[i].f, buf);
		assert_string_equal(buf, cases[i].want);
	}
	gpuenv_toml_format_float(-__builtin_inf(), buf);
	assert_string_equal(buf, "-inf");
	gpuenv_toml_format_float(__builtin_nan(""), buf);
	assert_string_equal(buf, "nan");
}

/* ---- builder and writer ---- */

static void test_build_and_write(void **state)
{
	(void)state;
	gpuenv_toml_doc_t doc;
	assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, NULL), 0);
	gpuenv_toml_table_t *root = doc.root;
	assert_int_equal(gpuenv_toml_add_string(&doc, root, "lock-version", "1.0"), 0);
	assert_int_equal(gpuenv_toml_add_string(&doc, root, "created-by", "gpuenv \"dev\"\n"), 0);
	assert_int_equal(gpuenv_toml_add_integer(&doc, root, "lock-version", 2), GPUENV_EDUPLICATE);
	gpuenv_toml_array_t *pk = gpuenv_toml_add_array(&doc, root, "packages", GPUENV_TOML_AOT);
	assert_non_null(pk);
	for (int i = 0; i < 2; i++) {
		gpuenv_toml_value_t *v = gpuenv_toml_array_push(&doc, pk);
		gpuenv_toml_table_t *p = gpuenv_toml_set_table(&doc, v, 0);
		assert_int_equal(gpuenv_toml_add_string(&doc, p, "name", i ? "numpy" : "torch"), 0);
		assert_int_equal(gpuenv_toml_add_bool(&doc, p, "gpu", i == 0), 0);
		gpuenv_toml_array_t *w = gpuenv_toml_add_array(&doc, p, "wheels", 0);
		gpuenv_toml_table_t *wt = gpuenv_toml_set_table(&doc, gpuenv_toml_array_push(&doc, w),
			GPUENV_TOML_INLINE);
		assert_int_equal(gpuenv_toml_add_string(&doc, wt, "url", "https://x/a.whl"), 0);
		assert_int_equal(gpuenv_toml_add_integer(&doc, wt, "size", 12345), 0);
		gpuenv_toml_value_t *t = gpuenv_toml_table_add(&doc, wt, gpuenv_str("upload-time"));
		assert_int_equal(gpuenv_toml_set_datetime(&doc, t, gpuenv_str("2024-10-29T17:00:00Z")), 0);
		gpuenv_toml_table_t *tool = gpuenv_toml_add_table(&doc, p, "tool", GPUENV_TOML_DOTTED);
		gpuenv_toml_table_t *g = gpuenv_toml_add_table(&doc, tool, "gpuenv", GPUENV_TOML_DOTTED);
		gpuenv_toml_value_t *sm = gpuenv_toml_table_add(&doc, g, gpuenv_str("sm"));
		gpuenv_toml_array_t *sa = gpuenv_toml_set_array(&doc, sm, 0);
		gpuenv_toml_set_float(gpuenv_toml_array_push(&doc, sa), 8.0);
		gpuenv_toml_set_float(gpuenv_toml_array_push(&doc, sa), 9.5);
	}
	gpuenv_toml_table_t *meta = gpuenv_toml_add_table(&doc, root, "tool", 0);
	gpuenv_toml_table_t *ge = gpuenv_toml_add_table(&doc, meta, "gpuenv", 0);
	assert_int_equal(gpuenv_toml_add_string(&doc, ge, "target", "a100"), 0);
	gpuenv_toml_value_t *bad = gpuenv_toml_table_add(&doc, ge, gpuenv_str("bad"));
	assert_int_equal(gpuenv_toml_set_string(&doc, bad, gpuenv_str("\xff")), GPUENV_ESYNTAX);
	assert_int_equal(gpuenv_toml_set_datetime(&doc, bad, gpuenv_str("2024-02-30")), GPUENV_ESYNTAX);
	/* an unset value is an error for the writer */
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_buf_puts(&b, "keep"), 0);
	assert_int_equal(gpuenv_toml_write(&ctx, root, &b), GPUENV_EFORMAT);
	assert_string_equal(b.data, "keep");
	gpuenv_buf_free(&b);
	gpuenv_toml_set_string(&doc, bad, gpuenv_str("tab\there \x7f"));

	char *text = write_doc(root);
	assert_string_equal(text,
		"lock-version = \"1.0\"\n"
		"created-by = \"gpuenv \\\"dev\\\"\\n\"\n"
		"\n"
		"[[packages]]\n"
		"name = \"torch\"\n"
		"gpu = true\n"
		"wheels = [\n"
		"    { url = \"https://x/a.whl\", size = 12345, upload-time = 2024-10-29T17:00:00Z },\n"
		"]\n"
		"tool.gpuenv.sm = [8.0, 9.5]\n"
		"\n"
		"[[packages]]\n"
		"name = \"numpy\"\n"
		"gpu = false\n"
		"wheels = [\n"
		"    { url = \"https://x/a.whl\", size = 12345, upload-time = 2024-10-29T17:00:00Z },\n"
		"]\n"
		"tool.gpuenv.sm = [8.0, 9.5]\n"
		"\n"
		"[tool.gpuenv]\n"
		"target = \"a100\"\n"
		"bad = \"tab\\there \\u007F\"\n");
	gpuenv_toml_doc_t back;
	assert_int_equal(gpuenv_toml_doc_init(&back, &ctx, "back.toml"), 0);
	assert_int_equal(gpuenv_toml_parse(&back, text, strlen(text)), 0);
	assert_true(gpuenv_toml_table_eq(root, back.root));
	char *again = write_doc(back.root);
	assert_string_equal(text, again);
	free(text);
	free(again);
	gpuenv_toml_doc_free(&back);
	gpuenv_toml_doc_free(&doc);
}

static void test_write_forms(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		/* sections after key/values, implicit parents get no header */
		{ "[a.b]\nx = 1\n[a]\ny = 2\n", "[a]\ny = 2\n\n[a.b]\nx = 1\n" },
		{ "[a.b.c]\n", "[a.b.c]\n" },
		{ "[x]\n", "[x]\n" },
		{ "a.b = 1\n[a.c]\nd = 2\n", "a.b = 1\n\n[a.c]\nd = 2\n" },
		{ "\"k y\" = 'v'\n\"\" = 1\n", "\"k y\" = \"v\"\n\"\" = 1\n" },
		{ "s = '''\nx\ty'''\n", "s = \"x\\ty\"\n" },
		{ "a = [[1, 2], []]\n", "a = [\n    [1, 2],\n    [],\n]\n" },
		{ "t = {a.b = 1}\n", "t = { a = { b = 1 } }\n" },
		{ "e = []\nf = {}\n", "e = []\nf = {}\n" },
		{ "[[a]]\n[[a]]\nx = 1\n", "[[a]]\n\n[[a]]\nx = 1\n" },
		{ "f = [1e10, -0.0, nan, -inf]\n", "f = [10000000000.0, -0.0, nan, -inf]\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpuenv_toml_doc_t doc;
		if (parse(&doc, cases[i].in))
			fail_msg("case %zu: %s", i, errmsg());
		char *text = write_doc(doc.root);
		if (strcmp(text, cases[i].out) != 0)
			fail_msg("case %zu:\n--- got ---\n%s--- want ---\n%s", i, text, cases[i].out);
		free(text);
		gpuenv_toml_doc_free(&doc);
	}
	/* long arrays go one element per line */
	gpuenv_toml_doc_t doc;
	assert_int_equal(parse(&doc, "a = ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccccccccc']\n"), 0);
	char *text = write_doc(doc.root);
	assert_string_equal(text, "a = [\n    \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\n"
		"    \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\",\n    \"cccccccccccccccccccccccccc\",\n]\n");
	free(text);
	gpuenv_toml_doc_free(&doc);
}

/* ---- toml-test files, in process ---- */

static int suite_files(const char *kind, char names[][1024], int max)
{
	char list[1024];
	const char *shared = getenv("GPUENV_SHARED");
	FILE *f;
	int n = 0;
	char line[256];

	if (!shared)
		return -1;
	snprintf(list, sizeof(list), "%s/testdata/toml-test/tests/files-toml-1.0.0", shared);
	f = fopen(list, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		size_t l = strcspn(line, "\r\n");
		line[l] = '\0';
		if (strncmp(line, kind, strlen(kind)) == 0 && l > 5 && strcmp(line + l - 5, ".toml") == 0)
			snprintf(names[n++], 1024, "%s/testdata/toml-test/tests/%s", shared, line);
	}
	fclose(f);
	return n;
}

static char names[1000][1024];

static void test_suite_roundtrip(void **state)
{
	(void)state;
	int n = suite_files("valid/", names, 1000);
	if (n < 0)
		skip();
	assert_true(n > 200);
	for (int i = 0; i < n; i++) {
		gpuenv_buf_t in;
		gpuenv_toml_doc_t doc, back;
		gpuenv_buf_init(&in, &ctx, 0);
		assert_int_equal(gpuenv_fs_read(&ctx, names[i], 1 << 20, &in), 0);
		assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, names[i]), 0);
		if (gpuenv_toml_parse(&doc, in.data ? in.data : "", in.len))
			fail_msg("%s", errmsg());
		char *text = write_doc(doc.root);
		assert_int_equal(gpuenv_toml_doc_init(&back, &ctx, "written"), 0);
		if (gpuenv_toml_parse(&back, text, strlen(text)))
			fail_msg("%s: written TOML does not parse: %s\n%s", names[i], errmsg(), text);
		if (!gpuenv_toml_table_eq(doc.root, back.root))
			fail_msg("%s: round trip differs:\n%s", names[i], text);
		char *again = write_doc(back.root);
		if (strcmp(text, again) != 0)
			fail_msg("%s: second write differs:\n%s\n---\n%s", names[i], text, again);
		free(text);
		free(again);
		gpuenv_toml_doc_free(&back);
		gpuenv_toml_doc_free(&doc);
		gpuenv_buf_free(&in);
	}
	print_message("round trip of %d valid toml-test files\n", n);
}

static void test_suite_invalid(void **state)
{
	(void)state;
	int n = suite_files("invalid/", names, 1000);
	if (n < 0)
		skip();
	assert_true(n > 400);
	for (int i = 0; i < n; i++) {
		gpuenv_buf_t in;
		gpuenv_toml_doc_t doc;
		gpuenv_buf_init(&in, &ctx, 0);
		assert_int_equal(gpuenv_fs_read(&ctx, names[i], 1 << 20, &in), 0);
		assert_int_equal(gpuenv_toml_doc_init(&doc, &ctx, "x.toml"), 0);
		int r = gpuenv_toml_parse(&doc, in.data ? in.data : "", in.len);
		if (r == 0)
			fail_msg("%s: accepted", names[i]);
		if (ctx.err.line == 0 || ctx.err.col == 0)
			fail_msg("%s: error without a position: %s", names[i], errmsg());
		gpuenv_toml_doc_free(&doc);
		gpuenv_buf_free(&in);
	}
}

/* ---- allocation failures ---- */

static void test_alloc_failure(void **state)
{
	(void)state;
	gpuenv_buf_t text;
	gpuenv_buf_init(&text, &ctx, 0);
	/* big enough to need several arena chunks, an index and the array stack */
	for (int i = 0; i < 400; i++)
		assert_int_equal(gpuenv_buf_printf(&text,
			"[[p]]\nname = \"pkg-%d\"\nv = [%d, %d, 'x\\ty', {a = %d}]\nk%d.z = 1.5\n", i, i,
			i + 1, i, i), 0);
	bool done = false;
	for (long budget = 0; !done; budget++) {
		testutil_alloc_t bud = { .fail_at = budget };
		gpuenv_ctx_t fctx;
		gpuenv_toml_doc_t doc;
		gpuenv_ctx_init(&fctx);
		fctx.mem = testutil_allocator(&bud);
		if (gpuenv_toml_doc_init(&doc, &fctx, "f.toml") == 0) {
			int r = gpuenv_toml_parse(&doc, text.data, text.len);
			if (r == 0) {
				gpuenv_buf_t out;
				gpuenv_buf_init(&out, &fctx, 0);
				r = gpuenv_toml_write(&fctx, doc.root, &out);
				assert_true(r == 0 || r == -ENOMEM);
				done = r == 0;
				gpuenv_buf_free(&out);
			} else {
				assert_int_equal(r, -ENOMEM);
			}
		}
		gpuenv_toml_doc_free(&doc);
		assert_true(budget < 100000);
	}
	gpuenv_buf_free(&text);
}

int main(void)
{
	gpuenv_ctx_init(&ctx);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_positions),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_table_rules),
		cmocka_unit_test(test_lookup_paths),
		cmocka_unit_test(test_big_table),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_borrowed_and_columns),
		cmocka_unit_test(test_datetime),
		cmocka_unit_test(test_format_float),
		cmocka_unit_test(test_build_and_write),
		cmocka_unit_test(test_write_forms),
		cmocka_unit_test(test_suite_roundtrip),
		cmocka_unit_test(test_suite_invalid),
		cmocka_unit_test(test_alloc_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
