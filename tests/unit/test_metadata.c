/* Unit tests for METADATA, WHEEL, RECORD and entry_points.txt parsing. */
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
#include "gpuenv/hash.h"
#include "gpuenv/metadata.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_arena_t arena;
static char logbuf[8192];
static size_t nlogs;

static void capture(void *ud, int level, const char *msg)
{
	(void)ud;
	size_t l = strlen(logbuf);
	snprintf(logbuf + l, sizeof(logbuf) - l, "%d %s\n", level, msg);
	nlogs++;
}

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	ctx.log = capture;
	ctx.verbosity = GPUENV_LOG_DEBUG;
	logbuf[0] = '\0';
	nlogs = 0;
	gpuenv_arena_init(&arena, &ctx, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_arena_free(&arena);
	return 0;
}

static int md_parse(const char *text, unsigned flags, gpuenv_metadata_t *md)
{
	return gpuenv_metadata_parse(&ctx, &arena, "METADATA", gpuenv_str(text), flags, md);
}

/* ---- METADATA ---- */

static const char torch_like[] =
	"Metadata-Version: 2.4\r\n"
	"Name: torch\r\n"
	"Version: 2.11.0\r\n"
	"Summary: Tensors and Dynamic neural networks\r\n"
	"Project-URL: Homepage, https://pytorch.org\r\n"
	"Project-URL: https://example.org/no-label\r\n"
	"Keywords: pytorch,machine learning\r\n"
	"Classifier: Programming Language :: Python :: 3\r\n"
	"Classifier: Topic :: Software Development\r\n"
	"Requires-Python: >=3.10\r\n"
	"License-Expression: BSD-3-Clause\r\n"
	"License-File: LICENSE\r\n"
	"License-File: NOTICE\r\n"
	"Requires-Dist: filelock\r\n"
	"Requires-Dist: nvidia-nccl-cu13==2.28.9;\r\n"
	"  platform_system == \"Linux\"\r\n"
	"Provides-Extra: opt-einsum\r\n"
	"Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\r\n"
	"X-Custom: kept\r\n"
	"Dynamic: license-file\r\n"
	"\r\n"
	"# PyTorch\r\n\r\nbody text\r\n";

static void test_metadata_basic(void **state)
{
	(void)state;
	gpuenv_metadata_t md;
	gpuenv_str_t v[4];

	assert_int_equal(md_parse(torch_like, 0, &md), 0);
	assert_true(gpuenv_str_eq_cstr(md.metadata_version, "2.4"));
	assert_int_equal(md.mv_major, 2);
	assert_int_equal(md.mv_minor, 4);
	assert_true(gpuenv_str_eq_cstr(md.name, "torch"));
	assert_true(gpuenv_str_eq_cstr(md.version_text, "2.11.0"));
	assert_true(md.version_valid);
	assert_int_equal(md.version.nrelease, 3);
	assert_true(gpuenv_str_eq_cstr(md.summary, "Tensors and Dynamic neural networks"));
	assert_true(md.requires_python_valid);
	assert_true(gpuenv_str_eq_cstr(md.requires_python_text, ">=3.10"));
	assert_true(gpuenv_str_eq_cstr(md.license_expression, "BSD-3-Clause"));
	assert_int_equal(md.license_files.n, 2);
	assert_true(gpuenv_str_eq_cstr(md.license_files.items[1], "NOTICE"));
	assert_int_equal(md.classifiers.n, 2);
	assert_int_equal(md.provides_extra.n, 1);
	assert_int_equal(md.dynamic.n, 1);
	assert_int_equal(md.nproject_urls, 2);
	assert_true(gpuenv_str_eq_cstr(md.project_urls[0].label, "Homepage"));
	assert_true(gpuenv_str_eq_cstr(md.project_urls[0].url, "https://pytorch.org"));
	assert_int_equal(md.project_urls[1].label.len, 0);
	assert_int_equal(md.nrequires_dist, 3);
	for (size_t i = 0; i < md.nrequires_dist; i++)
		assert_true(md.requires_dist[i].valid);
	/* a folded Requires-Dist: line breaks go, the indentation stays */
	assert_true(gpuenv_str_eq_cstr(md.requires_dist[1].text,
		"nvidia-nccl-cu13==2.28.9;  platform_system == \"Linux\""));
	assert_int_equal(md.requires_dist[1].line, 15);
	assert_true(gpuenv_str_eq_cstr(md.requires_dist[1].req.name, "nvidia-nccl-cu13"));
	assert_true(gpuenv_str_eq_cstr(md.requires_dist[2].req.name, "opt-einsum"));
	/* the body is the description */
	assert_true(md.description_in_body);
	assert_true(gpuenv_str_startswith(md.description, "# PyTorch"));
	/* unknown fields are kept, lookups are case-insensitive */
	assert_int_equal(gpuenv_metadata_get_all(&md, "x-custom", v, 4), 1);
	assert_true(gpuenv_str_eq_cstr(v[0], "kept"));
	assert_int_equal(gpuenv_metadata_get_all(&md, "REQUIRES-DIST", v, 2), 3);
	assert_int_equal(md.nwarnings, 0);
	assert_int_equal(nlogs, 0);
}

static void test_metadata_old_styles(void **state)
{
	(void)state;
	gpuenv_metadata_t md;

	/* 1.x with a folded Description header in both historic indentations */
	const char *old =
		"Metadata-Version: 1.1\n"
		"Name: simple.dist\n"
		"Version: 0.1\n"
		"Description: First line\n"
		"       |  indented by setuptools\n"
		"        |\n"
		"        second paragraph by distutils\n"
		"Platform: UNKNOWN\n"
		"Requires: os\n";
	assert_int_equal(md_parse(old, 0, &md), 0);
	assert_false(md.description_in_body);
	assert_true(gpuenv_str_eq_cstr(md.description,
		"First line\n  indented by setuptools\n\nsecond paragraph by distutils"));
	assert_int_equal(md.platforms.n, 1);
	assert_int_equal(md.nwarnings, 0);

	/* both a Description header and a body: a warning, the header wins */
	assert_int_equal(md_parse("Metadata-Version: 2.1\nName: a\nVersion: 1\n"
				  "Description: head\n\nbody\n", 0, &md), 0);
	assert_true(gpuenv_str_eq_cstr(md.description, "head"));
	assert_int_equal(md.nwarnings, 1);

	/* Metadata-Version 2.0 (bdist_wheel's) and 2.5 are fine, 1.3 and 2.6 warn,
	 * 3.0 fails */
	assert_int_equal(md_parse("Metadata-Version: 2.5\nName: a\nVersion: 1\n"
				  "Import-Name: a\nImport-Name: a_private; private\n"
				  "Import-Namespace: ns\n", 0, &md), 0);
	assert_int_equal(md.nwarnings, 0);
	assert_int_equal(md.import_names.n, 2);
	assert_true(gpuenv_str_eq_cstr(md.import_names.items[1], "a_private; private"));
	assert_int_equal(md.import_namespaces.n, 1);
	assert_int_equal(md_parse("Metadata-Version: 2.0\nName: a\nVersion: 1\n", 0, &md), 0);
	assert_int_equal(md.nwarnings, 0);
	assert_int_equal(md_parse("Metadata-Version: 1.3\nName: a\nVersion: 1\n", 0, &md), 0);
	assert_int_equal(md.nwarnings, 1);
	assert_int_equal(md_parse("Metadata-Version: 2.6\nName: a\nVersion: 1\n", 0, &md), 0);
	assert_int_equal(md.nwarnings, 1);
	assert_int_equal(md_parse("Metadata-Version: 3.0\nName: a\nVersion: 1\n", 0, &md),
		GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 1);
	assert_int_equal(md_parse("Name: a\nVersion: 1\n", 0, &md), 0);
	assert_int_equal(md.nwarnings, 1);
	assert_non_null(strstr(logbuf, "METADATA: no Metadata-Version"));
}

static void test_metadata_errors(void **state)
{
	(void)state;
	gpuenv_metadata_t md;

	/* Name and Version are required, once */
	assert_int_equal(md_parse("Metadata-Version: 2.1\nVersion: 1\n", 0, &md), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "no Name"));
	assert_int_equal(md_parse("Metadata-Version: 2.1\nName: a\n", 0, &md), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "no Version"));
	assert_int_equal(md_parse("Name: a\nName: b\nVersion: 1\n", 0, &md), GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 2);
	assert_int_equal(md_parse("Name: -bad-\nVersion: 1\n", 0, &md), GPUENV_EFORMAT);
	/* an invalid version fails unless asked to be lenient */
	assert_int_equal(md_parse("Metadata-Version: 2.1\nName: invalid-version\nVersion: 2010i\n",
				 0, &md), GPUENV_EVERSION);
	assert_int_equal(ctx.err.line, 3);
	assert_string_equal(ctx.err.file, "METADATA");
	assert_int_equal(md_parse("Metadata-Version: 2.1\nName: invalid-version\nVersion: 2010i\n",
				 GPUENV_METADATA_LENIENT_VERSION, &md), 0);
	assert_false(md.version_valid);
	assert_int_equal(md.nwarnings, 1);
	/* not a header, a continuation with nothing to continue */
	assert_int_equal(md_parse("Name: a\nnot a header\n", 0, &md), GPUENV_ESYNTAX);
	assert_int_equal(ctx.err.line, 2);
	assert_non_null(strstr(ctx.err.hint, "empty line"));
	assert_int_equal(md_parse(" Name: a\n", 0, &md), GPUENV_ESYNTAX);
	assert_int_equal(md_parse("", 0, &md), GPUENV_EFORMAT);
	/* a second single-use field warns and keeps the first */
	assert_int_equal(md_parse("Name: a\nVersion: 1\nSummary: one\nSummary: two\n", 0, &md), 0);
	assert_true(gpuenv_str_eq_cstr(md.summary, "one"));
	assert_int_equal(md.nwarnings, 2); /* + no Metadata-Version */
}

static void test_metadata_lenient_requirements(void **state)
{
	(void)state;
	gpuenv_metadata_t md;

	/* pip's require_invalid_version wheel: a warning with the line, not a failure */
	assert_int_equal(md_parse("Metadata-Version: 2.1\nName: require-invalid-version\n"
				  "Version: 1.0\nRequires-Dist: invalid-version ==2010i\n"
				  "Requires-Dist: ok\nRequires-Python: >=3.x\n", 0, &md), 0);
	assert_int_equal(md.nrequires_dist, 2);
	assert_false(md.requires_dist[0].valid);
	assert_true(md.requires_dist[1].valid);
	assert_false(md.requires_python_valid);
	assert_int_equal(md.nwarnings, 2);
	assert_non_null(strstr(logbuf, "METADATA:4: invalid Requires-Dist 'invalid-version ==2010i'"));
	assert_non_null(strstr(logbuf, "METADATA:6: invalid Requires-Python"));
	assert_int_equal(ctx.err.code, 0); /* the failures were turned into warnings */
}

/* ---- allocation failures: every one is reported, nothing leaks ---- */

static void test_alloc_failures(void **state)
{
	(void)state;
	const char *record = "a/b.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
			     "\"q,\"\"x\"\"\",,\n";
	const char *ep = "[console_scripts]\nfoo = foo.cli:main [extra]\n";
	bool done = false;

	for (int budget = 0; budget < 200 && !done; budget++) {
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		testutil_alloc_t b = { .fail_at = budget };
		gpuenv_metadata_t md;
		gpuenv_record_t rec;
		gpuenv_entry_points_t eps;
		gpuenv_wheelfile_t wf;
		int r1, r2, r3, r4;

		gpuenv_ctx_init(&c);
		c.mem = testutil_allocator(&b);
		gpuenv_arena_init(&a, &c, 0);
		r1 = gpuenv_metadata_parse(&c, &a, NULL, gpuenv_str(torch_like), 0, &md);
		r2 = gpuenv_record_parse(&c, &a, NULL, gpuenv_str(record), &rec);
		r3 = gpuenv_entry_points_parse(&c, &a, NULL, gpuenv_str(ep), &eps);
		r4 = gpuenv_wheelfile_parse(&c, &a, NULL,
			gpuenv_str("Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py2.py3-none-any\n"),
			&wf);
		if (r2 == 0 && r3 == 0)
			assert_int_equal(gpuenv_record_validate(&c, NULL, &rec) == 0 ||
				c.err.code == -ENOMEM, 1);
		for (int r = 0; r < 4; r++) {
			int v = r == 0 ? r1 : r == 1 ? r2 : r == 2 ? r3 : r4;
			assert_true(v == 0 || v == -ENOMEM);
		}
		done = !r1 && !r2 && !r3 && !r4;
		gpuenv_arena_free(&a);
	}
	assert_true(done);
}

/* ---- WHEEL ---- */

static void test_wheelfile(void **state)
{
	(void)state;
	gpuenv_wheelfile_t w;

	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, NULL,
		gpuenv_str("Wheel-Version: 1.0\nGenerator: bdist_wheel (0.30.0)\n"
			   "Root-Is-Purelib: true\nBuild: 1\nTag: py2-none-any\nTag: py3-none-any\n\n"),
		&w), 0);
	assert_int_equal(w.wv_major, 1);
	assert_true(w.has_root_is_purelib && w.root_is_purelib);
	assert_true(gpuenv_str_eq_cstr(w.generator, "bdist_wheel (0.30.0)"));
	assert_true(w.has_build && w.build_number == 1 && w.build_suffix.len == 0);
	assert_int_equal(w.ntags, 2);
	assert_true(gpuenv_str_eq_cstr(w.tags[1].interpreter, "py3"));
	assert_int_equal(w.nwarnings, 0);

	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, NULL,
		gpuenv_str("Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
			   "Tag: cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64\n"), &w), 0);
	assert_false(w.root_is_purelib);
	assert_int_equal(w.ntags, 2);

	/* pip's complex_dist: Wheel-Version 0.1, no tags: fine */
	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, NULL,
		gpuenv_str("Wheel-Version: 0.1\nGenerator: bdist_wheel\nRoot-Is-Purelib: true\n"), &w), 0);
	assert_int_equal(w.ntags, 0);

	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, "W",
		gpuenv_str("Wheel-Version: 2.0\nRoot-Is-Purelib: true\n"), &w), GPUENV_EUNSUPPORTED);
	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, "W",
		gpuenv_str("Wheel-Version: 1.9\nRoot-Is-Purelib: true\n"), &w), 0);
	assert_int_equal(w.nwarnings, 1);
	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, "W",
		gpuenv_str("Generator: x\nRoot-Is-Purelib: true\n"), &w), GPUENV_EFORMAT);
	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, "W",
		gpuenv_str("Wheel-Version: 1.0\nRoot-Is-Purelib: yes\n"), &w), GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 2);
	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, "W",
		gpuenv_str("Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none\n"), &w),
		GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 3);
	assert_int_equal(gpuenv_wheelfile_parse(&ctx, &arena, "W",
		gpuenv_str("Wheel-Version: 1.0\nRoot-Is-Purelib: true\nBuild: b1\n"), &w),
		GPUENV_EFORMAT);
}

/* ---- RECORD ---- */

static void test_record(void **state)
{
	(void)state;
	gpuenv_record_t rec;
	const char *text =
		"simpledist/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\r\n"
		"\"odd, name \"\"q\"\".py\",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,12\r\n"
		"\r\n"
		"\"multi\nline\",,\n"
		"pkg/__pycache__/x.cpython-312.pyc,,\n"
		"simple.dist-0.1.dist-info/RECORD,,";
	unsigned char empty[GPUENV_SHA256_LEN];

	assert_int_equal(gpuenv_record_parse(&ctx, &arena, NULL, gpuenv_str(text), &rec), 0);
	assert_int_equal(rec.n, 5);
	assert_true(gpuenv_str_eq_cstr(rec.entries[0].hash_algo, "sha256"));
	assert_int_equal(gpuenv_sha256("", 0, empty), 0);
	assert_int_equal(rec.entries[0].digest_len, 32);
	assert_memory_equal(rec.entries[0].digest, empty, 32);
	assert_true(rec.entries[0].has_size && rec.entries[0].size == 0);
	assert_true(gpuenv_str_eq_cstr(rec.entries[1].path, "odd, name \"q\".py"));
	assert_int_equal(rec.entries[1].size, 12);
	assert_int_equal(rec.entries[2].line, 4);
	assert_true(gpuenv_str_eq_cstr(rec.entries[2].path, "multi\nline"));
	assert_int_equal(rec.entries[3].line, 6);
	assert_false(rec.entries[3].has_size);
	assert_int_equal(rec.entries[3].hash_algo.len, 0);
	assert_non_null(gpuenv_record_find(&rec, gpuenv_str("simple.dist-0.1.dist-info/RECORD")));
	assert_null(gpuenv_record_find(&rec, gpuenv_str("nope")));
	/* "multi\nline" has no hash and is not exempt */
	assert_int_equal(gpuenv_record_validate(&ctx, "RECORD", &rec), GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 4);

	/* round trip through the writer */
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	for (size_t i = 0; i < rec.n; i++)
		assert_int_equal(gpuenv_record_format_entry(&rec.entries[i], &b), 0);
	gpuenv_record_t back;
	assert_int_equal(gpuenv_record_parse(&ctx, &arena, NULL, gpuenv_str_n(b.data, b.len), &back), 0);
	assert_int_equal(back.n, rec.n);
	for (size_t i = 0; i < rec.n; i++) {
		assert_true(gpuenv_str_eq(back.entries[i].path, rec.entries[i].path));
		assert_int_equal(back.entries[i].digest_len, rec.entries[i].digest_len);
		assert_memory_equal(back.entries[i].digest, rec.entries[i].digest,
			rec.entries[i].digest_len);
	}
	assert_non_null(strstr(b.data, "\"odd, name \"\"q\"\".py\",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,12\n"));
	gpuenv_buf_free(&b);

	static const char *const bad[] = {
		"a,b\n",			  /* two fields */
		"a,sha256=x,1,extra\n",		  /* four */
		"\"open,,\n",			  /* unclosed quote */
		"\"a\"x,,\n",			  /* text after the quote */
		"a,sha256=47DEQpj8HBSa,0\n",	  /* digest too short for sha256 */
		"a,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,-1\n", /* size */
		"a,md5,1\n",			  /* no '=' */
		"a,SHA256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,1\n", /* upper case algo */
		"a,sha256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU,1\n", /* not urlsafe */
		",,\n",				  /* empty path */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gpuenv_record_parse(&ctx, &arena, NULL, gpuenv_str(bad[i]), &rec) == 0)
			fail_msg("RECORD row %zu should fail: %s", i, bad[i]);

	/* unsafe paths */
	static const char *const unsafe[] = { "/etc/passwd", "../x", "a/../../x", "a/..",
		"C:/x", "a\\b", "" };
	for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++)
		assert_int_equal(gpuenv_record_check_path(&ctx, gpuenv_str(unsafe[i])), GPUENV_EFORMAT);
	assert_int_equal(gpuenv_record_check_path(&ctx, gpuenv_str("a/..b/c..")), 0);
	assert_int_equal(gpuenv_record_check_path(&ctx, gpuenv_str("pkg-1.0.data/scripts/x")), 0);

	/* validation: duplicates, weak hashes, exemptions */
	assert_int_equal(gpuenv_record_parse(&ctx, &arena, NULL,
		gpuenv_str("a,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
			   "x-1.dist-info/RECORD,,\nx-1.dist-info/RECORD.jws,,\n"
			   "a,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"), &rec), 0);
	assert_int_equal(gpuenv_record_validate(&ctx, "RECORD", &rec), GPUENV_EFORMAT);
	assert_int_equal(ctx.err.line, 4);
	assert_non_null(strstr(ctx.err.msg, "twice"));
	assert_int_equal(gpuenv_record_parse(&ctx, &arena, NULL,
		gpuenv_str("a,md5=1B2M2Y8AsgTpgAmY7PhCfg,0\n"), &rec), 0);
	assert_int_equal(gpuenv_record_validate(&ctx, "RECORD", &rec), GPUENV_EFORMAT);
	assert_int_equal(gpuenv_record_parse(&ctx, &arena, NULL,
		gpuenv_str("a,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\nx-1.dist-info/RECORD,,\n"),
		&rec), 0);
	assert_int_equal(gpuenv_record_validate(&ctx, "RECORD", &rec), 0);
	assert_int_equal(gpuenv_record_parse(&ctx, &arena, NULL, gpuenv_str(""), &rec), 0);
	assert_int_equal(rec.n, 0);
}

static void test_b64(void **state)
{
	(void)state;
	unsigned char out[8];
	size_t n;
	gpuenv_buf_t b;

	assert_true(gpuenv_b64url_decode(gpuenv_str("AAE"), out, sizeof(out), &n));
	assert_int_equal(n, 2);
	assert_true(out[0] == 0 && out[1] == 1);
	assert_true(gpuenv_b64url_decode(gpuenv_str("AAE="), out, sizeof(out), &n));
	assert_false(gpuenv_b64url_decode(gpuenv_str("AAF"), out, sizeof(out), &n)); /* stray bits */
	assert_false(gpuenv_b64url_decode(gpuenv_str("A"), out, sizeof(out), &n));
	assert_false(gpuenv_b64url_decode(gpuenv_str("AA=E"), out, sizeof(out), &n));
	assert_false(gpuenv_b64url_decode(gpuenv_str("AAAAAAAAAAAAAA"), out, sizeof(out), &n));
	assert_true(gpuenv_b64url_decode(gpuenv_str(""), out, sizeof(out), &n));
	assert_int_equal(n, 0);
	gpuenv_buf_init(&b, &ctx, 0);
	const unsigned char in[] = { 0xfb, 0xff, 0x00, 0x10 };
	assert_int_equal(gpuenv_b64url_encode(in, 4, &b), 0);
	assert_string_equal(b.data, "-_8AEA");
	gpuenv_buf_free(&b);
}

/* ---- entry_points.txt ---- */

static void test_entry_points(void **state)
{
	(void)state;
	gpuenv_entry_points_t ep;
	const char *text =
		"# comment\n"
		"[console_scripts]\n"
		"cmdName = cmdmod:cmd\n"
		"torchrun=torch.distributed.run:main\n"
		"  spaced  =  pkg.mod : obj.attr  [ex1, ex2]  \n"
		"\n"
		"; another comment\n"
		"[torchrun.logs_specs]\n"
		"default = torch.distributed.elastic.multiprocessing:DefaultLogsSpecs\n"
		"[paste.app_factory]\n"
		"main = not a reference!\n"
		"mod = only_module\n";

	assert_int_equal(gpuenv_entry_points_parse(&ctx, &arena, NULL, gpuenv_str(text), &ep), 0);
	assert_int_equal(ep.n, 6);
	assert_true(gpuenv_str_eq_cstr(ep.items[0].group, "console_scripts"));
	assert_true(gpuenv_str_eq_cstr(ep.items[0].name, "cmdName"));
	assert_true(gpuenv_str_eq_cstr(ep.items[0].module, "cmdmod"));
	assert_true(gpuenv_str_eq_cstr(ep.items[0].attr, "cmd"));
	assert_int_equal(ep.items[0].line, 3);
	assert_true(gpuenv_str_eq_cstr(ep.items[2].name, "spaced"));
	assert_true(gpuenv_str_eq_cstr(ep.items[2].module, "pkg.mod"));
	assert_true(gpuenv_str_eq_cstr(ep.items[2].attr, "obj.attr"));
	assert_int_equal(ep.items[2].nextras, 2);
	assert_true(gpuenv_str_eq_cstr(ep.items[2].extras[1], "ex2"));
	assert_true(gpuenv_str_eq_cstr(ep.items[3].group, "torchrun.logs_specs"));
	assert_false(ep.items[4].valid);
	assert_true(gpuenv_str_eq_cstr(ep.items[4].value, "not a reference!"));
	assert_true(ep.items[5].valid);
	assert_int_equal(ep.items[5].attr.len, 0);

	assert_int_equal(gpuenv_entry_points_parse(&ctx, &arena, "ep", gpuenv_str("a = b:c\n"), &ep),
		GPUENV_ESYNTAX);
	assert_int_equal(gpuenv_entry_points_parse(&ctx, &arena, "ep",
		gpuenv_str("[g]\nno equals sign\n"), &ep), GPUENV_ESYNTAX);
	assert_int_equal(ctx.err.line, 2);
	assert_int_equal(gpuenv_entry_points_parse(&ctx, &arena, "ep", gpuenv_str("[g\n"), &ep),
		GPUENV_ESYNTAX);
	assert_int_equal(gpuenv_entry_points_parse(&ctx, &arena, "ep", gpuenv_str("[g]\n = x:y\n"), &ep),
		GPUENV_ESYNTAX);
	assert_int_equal(gpuenv_entry_points_parse(&ctx, &arena, "ep", gpuenv_str(""), &ep), 0);
	assert_int_equal(ep.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metadata_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata_old_styles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata_lenient_requirements, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wheelfile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_b64, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entry_points, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
