/* Unit tests for lib/manifest: Poetry's constraint language, [project] and
 * [dependency-groups], Poetry's tables, the sources rule, targets, the
 * dependencies of a target, the torch build each target gets (and that it
 * is the answer `gpuenv kb torch` gives), the inputs hash, and allocation
 * failures. */
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
#include "gpuenv/kb.h"
#include "gpuenv/kb_answer.h"
#include "gpuenv/manifest.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb;
static gpuenv_arena_t arena;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	return gpuenv_kb_load(&ctx, NULL, &kb);
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&arena);
	return 0;
}

static char *read_satellite(size_t *len)
{
	const char *shared = getenv("GPUENV_SHARED");
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/examples/satellite-classifier/pyproject.toml", shared ? shared : "../shared");
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot read %s\n", path);
		abort();
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static int load(const char *text, gpuenv_manifest_t *m)
{
	return gpuenv_manifest_parse(&ctx, &arena, "pyproject.toml", text, strlen(text), kb, m);
}

static const char *fmt_dep(const gpuenv_dep_t *d)
{
	gpuenv_buf_t b;
	const char *s;

	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_requirement_format(&d->req, &b), 0);
	s = gpuenv_arena_strndup(&arena, b.data, b.len);
	gpuenv_buf_free(&b);
	return s;
}

static const gpuenv_manifest_target_t *target(const gpuenv_manifest_t *m, const char *name)
{
	for (size_t i = 0; i < m->ntargets; i++)
		if (!strcmp(m->targets[i].name, name))
			return &m->targets[i];
	fail_msg("no target %s", name);
	return NULL;
}

static void expect_err(const char *text, int code, unsigned line, unsigned col, const char *needle)
{
	gpuenv_manifest_t m;
	int r = load(text, &m);

	if (r != code || ctx.err.line != line || (col && ctx.err.col != col) ||
		(needle && !strstr(ctx.err.msg, needle) && !strstr(ctx.err.hint, needle))) {
		char msg[1200];
		gpuenv_error_format(&ctx.err, msg, sizeof(msg));
		fail_msg("got %d (%s) hint '%s'; wanted %d at %u:%u with '%s'", r, msg, ctx.err.hint, code, line,
			col, needle ? needle : "");
	}
	assert_string_equal(ctx.err.file, "pyproject.toml");
}

/* ---- Poetry's constraints ------------------------------------------------------ */

static void test_poetry_constraints(void **state)
{
	static const char *const table[][2] = {
		{ "^1.2.3", ">=1.2.3,<2.0.0" },
		{ "^1.2", ">=1.2,<2.0" },
		{ "^1", ">=1,<2" },
		{ "^0.2.3", ">=0.2.3,<0.3.0" },
		{ "^0.0.3", ">=0.0.3,<0.0.4" },
		{ "^0.0", ">=0.0,<0.1" },
		{ "^0", ">=0,<1" },
		{ "^2.1.0", ">=2.1.0,<3.0.0" },
		{ "^1.24", ">=1.24,<2.0" },
		{ "~1.2.3", ">=1.2.3,<1.3.0" },
		{ "~1.2", ">=1.2,<1.3" },
		{ "~1", ">=1,<2" },
		{ "~=1.2", "~=1.2" },
		{ "~=1.2.3", "~=1.2.3" },
		{ "1.2.*", "==1.2.*" },
		{ "1.2.x", "==1.2.*" },
		{ "==1.2.*", "==1.2.*" },
		{ "!=1.2.*", "!=1.2.*" },
		{ "*", "" },
		{ "", "" },
		{ "1.2.3", "==1.2.3" },
		{ "=1.2.3", "==1.2.3" },
		{ "v1.2", "==1.2" },
		{ ">=1.2,<2.0", ">=1.2,<2.0" },
		{ ">= 1.2, < 2.0", ">=1.2,<2.0" },
		{ ">=1.2 <2.0", ">=1.2,<2.0" },
		{ "^1.2 !=1.3.1", ">=1.2,<2.0,!=1.3.1" },
		{ "<>1.0", "!=1.0" },
		{ "8.9.2.26", "==8.9.2.26" },
		{ "^1.0.0a1", ">=1.0.0a1,<2.0.0" },
		{ "===foo", "===foo" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const char *out;
		int r = gpuenv_manifest_poetry_constraint(&ctx, &arena, gpuenv_str(table[i][0]), &out);
		if (r || strcmp(out, table[i][1]))
			fail_msg("'%s': got %d '%s', wanted '%s' (%s)", table[i][0], r, r ? "" : out, table[i][1],
				ctx.err.msg);
	}
	/* unions are not one PEP 440 set; garbage is an error that says so */
	const char *out;
	assert_int_equal(gpuenv_manifest_poetry_constraint(&ctx, &arena, gpuenv_str("^1.0 || ^2.0"), &out),
		GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "union"));
	assert_int_equal(gpuenv_manifest_poetry_constraint(&ctx, &arena, gpuenv_str("^1.0 | ^2.0"), &out),
		GPUENV_EUNSUPPORTED);
	static const char *const bad[] = { "abc", "^", "~", ">=", ">=1.2.*", "!= *", "1.2.3 ||", "^x.y" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gpuenv_manifest_poetry_constraint(&ctx, &arena, gpuenv_str(bad[i]), &out) != GPUENV_ESPEC)
			fail_msg("'%s' accepted", bad[i]);
}

static void test_python_markers(void **state)
{
	static const char *const table[][2] = {
		{ "^3.10", "python_version >= \"3.10\" and python_version < \"4.0\"" },
		{ "~3.8", "python_version == \"3.8\"" },
		{ ">=3.8.1", "python_full_version >= \"3.8.1\"" },
		{ ">=3.8", "python_version >= \"3.8\"" },
		{ "~2.7 || ^3.6", "python_version == \"2.7\" or (python_version >= \"3.6\" and python_version < \"4.0\")" },
		{ "3.10.*", "python_version == \"3.10.*\"" },
	};
	const char *m;
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int r = gpuenv_manifest_python_marker(&ctx, &arena, gpuenv_str(table[i][0]), &m);
		if (r || !m || strcmp(m, table[i][1]))
			fail_msg("'%s': got %d '%s', wanted '%s'", table[i][0], r, m ? m : "(null)", table[i][1]);
	}
	assert_int_equal(gpuenv_manifest_python_marker(&ctx, &arena, gpuenv_str("*"), &m), 0);
	assert_null(m);
}

/* ---- [project], groups, Poetry ------------------------------------------------------ */

static void test_pep621_groups(void **state)
{
	gpuenv_manifest_t m;
	(void)state;
	assert_int_equal(load("[project]\nname = \"demo\"\nversion = \"1.0\"\nrequires-python = \">=3.9\"\n"
			      "dependencies = [\"requests>=2\", \"Foo_Bar[x] ; python_version < '3.12'\"]\n"
			      "[project.optional-dependencies]\nGPU = [\"cupy-cuda12x\"]\n"
			      "[dependency-groups]\nTest = [\"pytest\", {include-group = \"lint\"}]\n"
			      "lint = [\"ruff\"]\nall = [{include-group = \"test\"}, \"mypy\"]\n",
			 &m), 0);
	assert_string_equal(m.name, "demo");
	assert_string_equal(m.requires_python, ">=3.9");
	assert_int_equal(m.ndeps, 3);
	assert_string_equal(m.deps[0].name, "cupy-cuda12x"); /* sorted */
	assert_true(m.deps[0].optional);
	assert_string_equal(m.deps[0].extra, "gpu");
	assert_string_equal(m.deps[1].name, "foo-bar");
	assert_int_equal(m.ngroups, 3);
	/* include-group expanded, names normalised */
	for (size_t i = 0; i < m.ngroups; i++) {
		if (!strcmp(m.groups[i].name, "test"))
			assert_int_equal(m.groups[i].ndeps, 2);
		if (!strcmp(m.groups[i].name, "all"))
			assert_int_equal(m.groups[i].ndeps, 3);
	}
	assert_int_equal(m.nextras, 1);
	assert_string_equal(m.extras[0].name, "gpu");
	/* only PyPI */
	assert_int_equal(m.nsources, 1);
	assert_string_equal(m.sources[0].url, "https://pypi.org/simple/");
	assert_int_equal(m.ntargets, 0);

	expect_err("[dependency-groups]\na = [{include-group = \"b\"}]\nb = [{include-group = \"a\"}]\n",
		GPUENV_ESYNTAX, 3, 23, "cycle");
	expect_err("[dependency-groups]\na = [{include-group = \"nope\"}]\n", GPUENV_ENOTFOUND, 2, 23, "nope");
	expect_err("[dependency-groups]\nA_b = []\na-B = []\n", GPUENV_EDUPLICATE, 3, 1, "twice");
	expect_err("[project]\ndependencies = [\"requests >=\"]\n", GPUENV_EREQ, 2, 0, "requests");
	expect_err("[project]\ndependencies = \"requests\"\n", GPUENV_ETYPE, 2, 16, "array");
	expect_err("[project]\nrequires-python = \">=3.x\"\n", GPUENV_ESPEC, 2, 19, "requires-python");
}

static void test_poetry(void **state)
{
	gpuenv_manifest_t m;
	(void)state;
	assert_int_equal(load("[tool.poetry]\nname = \"p\"\nversion = \"0.1\"\n"
			      "[tool.poetry.dependencies]\npython = \"^3.10\"\n"
			      "requests = \"^2.31\"\n"
			      "numpy = [{version = \"^1.26\", python = \">=3.9\"}, {version = \"^1.24\", markers = \"python_version < '3.9'\"}]\n"
			      "rich = {version = \"^13\", optional = true, extras = [\"jupyter\"], allow-prereleases = true}\n"
			      "attrs = {version = \"*\", python = \"^3.10\", platform = \"linux\"}\n"
			      "[tool.poetry.dev-dependencies]\nblack = \"^23\"\n"
			      "[tool.poetry.group.docs]\noptional = true\n"
			      "[tool.poetry.group.docs.dependencies]\nsphinx = \"~7.2\"\n"
			      "[tool.poetry.extras]\nfancy = [\"rich\"]\n",
			 &m), 0);
	assert_string_equal(m.name, "p");
	assert_string_equal(m.requires_python, ">=3.10,<4.0");
	assert_int_equal(m.ndeps, 5);
	assert_string_equal(m.deps[0].name, "attrs");
	assert_string_equal(fmt_dep(&m.deps[0]),
		"attrs; (python_version >= \"3.10\" and python_version < \"4.0\") and sys_platform == \"linux\"");
	assert_string_equal(fmt_dep(&m.deps[1]), "numpy<2.0,>=1.26; python_version >= \"3.9\"");
	assert_string_equal(fmt_dep(&m.deps[2]), "numpy<2.0,>=1.24; python_version < \"3.9\"");
	assert_string_equal(fmt_dep(&m.deps[4]), "rich[jupyter]<14,>=13");
	assert_true(m.deps[4].optional && m.deps[4].allow_prereleases && !m.deps[4].extra);
	assert_int_equal(m.ngroups, 2);
	assert_string_equal(m.groups[0].name, "dev");
	assert_string_equal(m.groups[1].name, "docs");
	assert_true(m.groups[1].optional);
	assert_string_equal(fmt_dep(&m.groups[1].deps[0]), "sphinx<7.3,>=7.2");
	assert_int_equal(m.nextras, 1);
	assert_string_equal(m.extras[0].names[0], "rich");

	/* errors at the value, saying what is wrong */
	expect_err("[tool.poetry.dependencies]\nfoo = \"^1.0 || ^2.0\"\n", GPUENV_EUNSUPPORTED, 2, 7, "union");
	expect_err("[tool.poetry.dependencies]\nfoo = \">=banana\"\n", GPUENV_ESPEC, 2, 7, "banana");
	expect_err("[tool.poetry.dependencies]\npython = \"~2.7 || ^3.6\"\n", GPUENV_EUNSUPPORTED, 2, 10,
		"one range");
	expect_err("[tool.poetry.dependencies]\nfoo = {version = \"1\", sorce = \"x\"}\n", GPUENV_ENOTFOUND, 2, 23,
		"did you mean 'source'");
	expect_err("[tool.poetry.dependencies]\nfoo = {git = \"https://x/y.git\", tag = \"v1\", rev = \"abc\"}\n",
		GPUENV_ESYNTAX, 2, 39, "one ref");
	expect_err("[tool.poetry.dependencies]\nfoo = {path = \"../foo\", tag = \"v1\"}\n", GPUENV_ESYNTAX, 2, 31,
		"goes with git");
	expect_err("[tool.poetry.dependencies]\nfoo = \"^1\"\n[tool.poetry.extras]\nx = [\"bar\"]\n",
		GPUENV_ENOTFOUND, 4, 6, "bar");
	expect_err("[tool.poetry.dependencies]\nfoo = 3\n", GPUENV_ETYPE, 2, 7, "foo");
}

/* Poetry's and uv's git and path dependencies: the one representation
 * (gpuenv_direct_t), field for field */
static void test_direct_refs(void **state)
{
	gpuenv_manifest_t m;
	(void)state;
	assert_int_equal(load("[tool.poetry.dependencies]\n"
			      "foo = {git = \"https://x/y.git\", tag = \"v1\", subdirectory = \"py\"}\n"
			      "bar = {path = \"../bar\", develop = true}\n",
			 &m), 0);
	assert_int_equal(m.ndeps, 2);
	const gpuenv_direct_t *pb = m.deps[0].direct, *pf = m.deps[1].direct;
	assert_non_null(pb);
	assert_non_null(pf);
	assert_int_equal(pf->kind, GPUENV_DIRECT_GIT);
	assert_string_equal(pf->url, "https://x/y.git");
	assert_string_equal(pf->tag, "v1");
	assert_string_equal(pf->subdirectory, "py");
	assert_int_equal(pb->kind, GPUENV_DIRECT_PATH);
	assert_string_equal(pb->path, "../bar");
	assert_true(pb->editable);
	assert_string_equal(fmt_dep(&m.deps[1]), "foo");

	assert_int_equal(load("[project]\ndependencies = [\"foo\", \"bar\", \"baz @ git+https://h/r.git@v2\"]\n"
			      "[tool.uv.sources]\n"
			      "foo = { git = \"https://x/y.git\", tag = \"v1\", subdirectory = \"py\" }\n"
			      "bar = { path = \"../bar\", editable = true }\n",
			 &m), 0);
	assert_int_equal(m.ndeps, 3);
	const gpuenv_direct_t *ub = m.deps[0].direct, *uz = m.deps[1].direct, *uf = m.deps[2].direct;
	assert_non_null(ub);
	assert_non_null(uf);
	assert_non_null(uz);
	assert_int_equal(uf->kind, pf->kind);
	assert_string_equal(uf->url, pf->url);
	assert_string_equal(uf->tag, pf->tag);
	assert_string_equal(uf->subdirectory, pf->subdirectory);
	assert_int_equal(ub->kind, pb->kind);
	assert_string_equal(ub->path, pb->path);
	assert_true(ub->editable);
	assert_string_equal(uf->from, "tool.uv.sources");
	assert_int_equal(uz->kind, GPUENV_DIRECT_GIT);
	assert_string_equal(uz->url, "https://h/r.git");
	assert_string_equal(uz->rev, "v2");
	assert_string_equal(uz->from, "project.dependencies");

	/* archives by URL, three spellings: the URL without its fragment, the
	 * fragment's #sha256= (and another hash's name) kept for the lock */
	assert_int_equal(load("[project]\ndependencies = [\n"
			      "  \"a @ https://h/a-1.0-py3-none-any.whl#sha256=ABCD\",\n"
			      "  \"b\",\n"
			      "  \"c @ https://h/c-1.0.tar.gz#md5=00&subdirectory=sub\",\n]\n"
			      "[tool.uv.sources]\nb = { url = \"https://h/b-2.0.tar.gz#sha256=ef01\" }\n",
			 &m), 0);
	assert_int_equal(m.ndeps, 3);
	const gpuenv_direct_t *aa = m.deps[0].direct, *ab = m.deps[1].direct, *ac = m.deps[2].direct;
	assert_non_null(aa);
	assert_non_null(ab);
	assert_non_null(ac);
	assert_int_equal(aa->kind, GPUENV_DIRECT_URL);
	assert_string_equal(aa->url, "https://h/a-1.0-py3-none-any.whl");
	assert_string_equal(aa->sha256, "ABCD");
	assert_null(aa->hash_other);
	assert_int_equal(ab->kind, GPUENV_DIRECT_URL);
	assert_string_equal(ab->url, "https://h/b-2.0.tar.gz");
	assert_string_equal(ab->sha256, "ef01");
	assert_string_equal(ab->from, "tool.uv.sources");
	assert_string_equal(ac->url, "https://h/c-1.0.tar.gz");
	assert_null(ac->sha256);
	assert_string_equal(ac->hash_other, "md5");
	assert_string_equal(ac->subdirectory, "sub");
	const char *h1 = m.inputs_hash;
	assert_int_equal(load("[project]\ndependencies = [\n"
			      "  \"a @ https://h/a-1.0-py3-none-any.whl#sha256=ABCD\",\n"
			      "  \"b\",\n"
			      "  \"c @ https://h/c-1.0.tar.gz#md5=00&subdirectory=sub\",\n]\n"
			      "[tool.uv.sources]\nb = { url = \"https://h/b-2.0.tar.gz#sha256=ef02\" }\n",
			 &m), 0);
	assert_string_not_equal(h1, m.inputs_hash); /* a new pinned hash: a new input */
	assert_int_equal(load("[tool.poetry.dependencies]\nd = { url = \"https://h/d-1.0-py3-none-any.whl#sha256=aa\" }\n",
			 &m), 0);
	assert_int_equal(m.deps[0].direct->kind, GPUENV_DIRECT_URL);
	assert_string_equal(m.deps[0].direct->url, "https://h/d-1.0-py3-none-any.whl");
	assert_string_equal(m.deps[0].direct->sha256, "aa");
	/* a repository's fragment is no file hash */
	assert_int_equal(load("[project]\ndependencies = [\"g @ git+https://h/g.git@v1#sha256=aa\"]\n", &m), 0);
	assert_null(m.deps[0].direct->sha256);
}

/* uv's indexes and sources by marker, PDM's sources */
static void test_uv_pdm(void **state)
{
	gpuenv_manifest_t m;
	(void)state;
	assert_int_equal(load("[project]\ndependencies = [\"torch\", \"numpy\"]\n"
			      "[[tool.uv.index]]\nname = \"cpu\"\nurl = \"https://download.pytorch.org/whl/cpu\"\nexplicit = true\n"
			      "[[tool.uv.index]]\nname = \"cu128\"\nurl = \"https://download.pytorch.org/whl/cu128\"\nexplicit = true\n"
			      "[[tool.uv.index]]\nname = \"mirror\"\nurl = \"https://m/simple\"\n"
			      "[tool.uv.sources]\ntorch = [\n"
			      "  { index = \"cpu\", marker = \"sys_platform != 'linux'\" },\n"
			      "  { index = \"cu128\", marker = \"sys_platform == 'linux'\" },\n]\n",
			 &m), 0);
	assert_int_equal(m.nsources, 4);
	assert_int_equal(m.sources[0].priority, GPUENV_SOURCE_EXPLICIT);
	assert_int_equal(m.sources[2].priority, GPUENV_SOURCE_PRIMARY);
	assert_string_equal(m.sources[3].name, "pypi");
	assert_int_equal(m.sources[3].priority, GPUENV_SOURCE_DEFAULT);
	assert_string_equal(m.source_info[1].from, "[[tool.uv.index]]");
	assert_int_equal(m.deps[1].nsources_by, 2);
	assert_null(m.deps[1].source);
	/* a default index replaces PyPI */
	assert_int_equal(load("[[tool.uv.index]]\nname = \"corp\"\nurl = \"https://corp/simple\"\ndefault = true\n", &m),
		0);
	assert_int_equal(m.nsources, 1);
	assert_int_equal(m.sources[0].priority, GPUENV_SOURCE_DEFAULT);
	expect_err("[project]\ndependencies = [\"torch\"]\n[tool.uv.sources]\ntorch = { index = \"pytroch\" }\n",
		GPUENV_ENOTFOUND, 4, 19, "not declared");
	expect_err("[project]\ndependencies = [\"torch\"]\n[[tool.uv.index]]\nname = \"a\"\nurl = \"https://a/\"\n"
		   "[[tool.uv.index]]\nname = \"b\"\nurl = \"https://b/\"\n[tool.uv.sources]\ntorch = [\n"
		   "  { index = \"a\", marker = \"python_version >= '3.10'\" },\n"
		   "  { index = \"b\", marker = \"python_version < '3.12'\" },\n]\n",
		GPUENV_ESYNTAX, 12, 3, "disjoint");
	expect_err("[[tool.uv.index]]\nname = \"a\"\nurl = \"https://a/\"\nexplicitt = true\n", GPUENV_ENOTFOUND, 4, 1,
		"did you mean 'explicit'");
	/* PDM: a source after PyPI, include_packages normalised; "pypi" replaces it */
	assert_int_equal(load("[[tool.pdm.source]]\nname = \"private\"\nurl = \"https://p/simple\"\n"
			      "include_packages = [\"Foo_Bar\", \"corp-*\"]\ntype = \"find_links\"\n",
			 &m), 0);
	assert_int_equal(m.nsources, 2);
	assert_int_equal(m.sources[0].priority, GPUENV_SOURCE_SUPPLEMENTAL);
	assert_true(m.sources[0].find_links);
	assert_int_equal(m.source_info[0].ninclude, 2);
	assert_string_equal(m.source_info[0].include[0], "foo-bar");
	assert_int_equal(load("[[tool.pdm.source]]\nname = \"pypi\"\nurl = \"https://p/simple\"\n", &m), 0);
	assert_int_equal(m.nsources, 1);
	expect_err("[[tool.pdm.source]]\nname = \"x\"\nurl = \"https://p/simple\"\nexclude_packages = [\"a\"]\n",
		GPUENV_EUNSUPPORTED, 4, 20, "exclude_packages");
}

static void test_sources(void **state)
{
	gpuenv_manifest_t m;
	(void)state;
	/* explicit sources only: PyPI stays the default */
	assert_int_equal(load("[[tool.poetry.source]]\nname = \"torch\"\nurl = \"https://download.pytorch.org/whl/cu121\"\n"
			      "priority = \"explicit\"\n",
			 &m), 0);
	assert_int_equal(m.nsources, 2);
	assert_int_equal(m.sources[0].priority, GPUENV_SOURCE_EXPLICIT);
	assert_string_equal(m.sources[1].name, "pypi");
	assert_int_equal(m.sources[1].priority, GPUENV_SOURCE_DEFAULT);
	/* a primary source: PyPI is no longer used (Poetry's rule) */
	assert_int_equal(load("[[tool.poetry.source]]\nname = \"corp\"\nurl = \"https://pypi.corp/simple/\"\n"
			      "priority = \"primary\"\n[[tool.poetry.source]]\nname = \"extra\"\n"
			      "url = \"https://x/simple/\"\npriority = \"supplemental\"\n",
			 &m), 0);
	assert_int_equal(m.nsources, 2);
	assert_int_equal(m.sources[0].priority, GPUENV_SOURCE_PRIMARY);
	assert_int_equal(m.sources[1].priority, GPUENV_SOURCE_SUPPLEMENTAL);
	/* no priority: primary, as Poetry's default */
	assert_int_equal(load("[[tool.poetry.source]]\nname = \"corp\"\nurl = \"https://pypi.corp/simple/\"\n", &m), 0);
	assert_int_equal(m.nsources, 1);
	/* Poetry 1.x: default = true replaces PyPI, secondary = true is supplemental */
	assert_int_equal(load("[[tool.poetry.source]]\nname = \"a\"\nurl = \"https://a/simple/\"\ndefault = true\n"
			      "[[tool.poetry.source]]\nname = \"b\"\nurl = \"https://b/simple/\"\nsecondary = true\n",
			 &m), 0);
	assert_int_equal(m.nsources, 2);
	assert_int_equal(m.sources[0].priority, GPUENV_SOURCE_DEFAULT);
	assert_int_equal(m.sources[1].priority, GPUENV_SOURCE_SUPPLEMENTAL);
	/* PyPI declared with a priority and no url */
	assert_int_equal(load("[[tool.poetry.source]]\nname = \"corp\"\nurl = \"https://c/simple/\"\n"
			      "[[tool.poetry.source]]\nname = \"PyPI\"\npriority = \"supplemental\"\n",
			 &m), 0);
	assert_int_equal(m.nsources, 2);
	assert_string_equal(m.sources[1].url, "https://pypi.org/simple/");
	/* a dependency naming an unknown source: at the value, listing the declared ones */
	expect_err("[tool.poetry.dependencies]\ntorch = {version = \"^2\", source = \"pytorh\"}\n"
		   "[[tool.poetry.source]]\nname = \"pytorch\"\nurl = \"https://download.pytorch.org/whl/cu121\"\n"
		   "priority = \"explicit\"\n",
		GPUENV_ENOTFOUND, 2, 35, "'pytorch', 'pypi'");
	expect_err("[[tool.poetry.source]]\nname = \"a\"\nurl = \"https://a/\"\npriority = \"first\"\n",
		GPUENV_EUNSUPPORTED, 4, 12, "priority");
	expect_err("[[tool.poetry.source]]\nname = \"a\"\nurl = \"ftp://a/\"\n", GPUENV_EUNSUPPORTED, 3, 7, "ftp");
	expect_err("[[tool.poetry.source]]\nname = \"a\"\n", GPUENV_ENOTFOUND, 1, 0, "no url");
}

/* ---- targets -------------------------------------------------------------------------- */

static const char *const BASE = "[tool.poetry.dependencies]\ntorch = \">=2.1\"\n"
				"[tool.poetry.group.g.dependencies]\nnumpy = \"^1\"\n";

static void expect_target_err(const char *target, int code, unsigned line, unsigned col, const char *needle)
{
	char text[2048];

	snprintf(text, sizeof(text), "%s[tool.gpuenv.targets.t]\n%s", BASE, target);
	expect_err(text, code, line, col, needle);
}

static void test_targets(void **state)
{
	gpuenv_manifest_t m;
	const gpuenv_manifest_target_t *t;
	const gpuenv_dep_t *deps;
	size_t n;
	size_t len;
	char *text = read_satellite(&len);
	(void)state;

	assert_int_equal(gpuenv_manifest_parse(&ctx, &arena, "satellite.toml", text, len, kb, &m), 0);
	free(text);
	assert_string_equal(m.name, "satellite-classifier");
	assert_int_equal(m.ntargets, 4);
	assert_string_equal(m.targets[0].name, "a100"); /* sorted */
	assert_string_equal(m.targets[3].name, "t4");
	t = target(&m, "t4");
	assert_string_equal(t->target.origin, "declared");
	assert_int_equal(t->target.ngpus, 1);
	assert_string_equal(t->target.gpus[0].name, "NVIDIA T4");
	assert_int_equal(t->target.gpus[0].cc_major, 7);
	assert_int_equal(t->target.gpus[0].cc_minor, 5);
	assert_string_equal(t->target.driver, "525.85.12");
	assert_string_equal(t->target.machine, "x86_64");
	assert_string_equal(t->target.libc, "glibc");
	assert_string_equal(t->target.libc_version, "2.28");
	t = target(&m, "jetson");
	assert_string_equal(t->target.driver_cuda, "12.6");
	assert_null(t->target.driver);
	assert_string_equal(t->target.machine, "aarch64");
	assert_null(t->target.libc);

	/* the group's torch replaces the main one for t4; main deps come along */
	assert_int_equal(gpuenv_manifest_target_deps(&ctx, &arena, &m, target(&m, "t4"), &deps, &n), 0);
	bool torch = false, cudnn = false;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(deps[i].name, "torch")) {
			assert_false(torch);
			torch = true;
			assert_string_equal(deps[i].group, "t4");
			assert_string_equal(fmt_dep(&deps[i]), "torch<3.0.0,>=2.0.1");
		}
		cudnn |= !strcmp(deps[i].name, "nvidia-cudnn-cu11");
		assert_string_not_equal(deps[i].name, "triton"); /* optional, no extra */
		assert_string_not_equal(deps[i].name, "pytest"); /* dev is not t4's */
	}
	assert_true(torch && cudnn);
	/* h200 has no groups: the main torch, from the pytorch source */
	assert_int_equal(gpuenv_manifest_target_deps(&ctx, &arena, &m, target(&m, "h200"), &deps, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(deps[2].name, "torch");
	assert_string_equal(deps[2].source, "pytorch");

	/* bad targets: the key, the position, what is wrong */
	expect_target_err("gpu = \"T5\"\ndriver = \"550.54.15\"\npython = \"3.12\"\nplatform = \"linux_x86_64\"\n",
		GPUENV_ENOTFOUND, 6, 7, "did you mean 'NVIDIA T4'");
	assert_non_null(strstr(ctx.err.msg, "[tool.gpuenv.targets.t] gpu = \"T5\""));
	expect_target_err("gpu = \"T4\"\npython = \"3.12\"\nplatform = \"linux_x86_64\"\n", GPUENV_ENOTFOUND, 5, 0,
		"driver");
	expect_target_err("gpu = \"T4\"\ndriver = \"550.54.15\"\nplatform = \"linux_x86_64\"\n", GPUENV_ENOTFOUND, 5,
		0, "missing python");
	expect_target_err("gpu = \"T4\"\ndriver = \"550.54.15\"\npython = \"3.12\"\n", GPUENV_ENOTFOUND, 5, 0,
		"missing platform");
	expect_target_err("gpu = \"T4\"\ndriver = \"550.54.15\"\npython = \"3.12\"\nplatform = \"win_amd64\"\n",
		GPUENV_ESYNTAX, 9, 12, "platform tag");
	expect_target_err("gpu = \"T4\"\ndrivr = \"550.54.15\"\n", GPUENV_ENOTFOUND, 7, 1, "did you mean 'driver'");
	expect_target_err("python = \"3.12\"\n", GPUENV_ENOTFOUND, 5, 0, "compute_capability");
	expect_target_err("gpu = \"none\"\npython = \"3.12\"\nplatform = \"linux_x86_64\"\ngroups = [\"h\"]\n",
		GPUENV_ENOTFOUND, 9, 11, "no group 'h'");
	expect_target_err("gpu = \"none\"\npython = \"3.12\"\nplatform = \"linux_x86_64\"\ntorch-backend = \"rocm6\"\n",
		GPUENV_EUNSUPPORTED, 9, 17, "torch backend");
	expect_target_err("compute_capability = \"3.1\"\n", GPUENV_ENOTFOUND, 6, 22, "architecture");
	expect_target_err("gpu = \"A100\"\ncuda = \"12\"\n", GPUENV_EVERSION, 7, 8, "cuda");
	expect_target_err("gpu = \"none\"\npython = \"three\"\nplatform = \"linux_x86_64\"\n", GPUENV_ESYNTAX, 7, 10,
		"Python version");

	/* compute_capability alone, musllinux, the legacy manylinux names */
	char buf[2048];
	snprintf(buf, sizeof(buf), "%s[tool.gpuenv.targets.x]\ncompute_capability = \"8.6\"\ncuda = \"12.4.1\"\n"
		 "python = \"3.11\"\nplatform = \"musllinux_1_2_x86_64\"\n[tool.gpuenv.targets.y]\ngpu = \"none\"\n"
		 "python = \"3.12\"\nplatform = \"manylinux2014_aarch64\"\nextras = []\n", BASE);
	assert_int_equal(load(buf, &m), 0);
	t = target(&m, "x");
	assert_int_equal(t->target.gpus[0].cc_major, 8);
	assert_null(t->target.gpus[0].name);
	assert_string_equal(t->target.driver_cuda, "12.4"); /* the patch level dropped */
	assert_string_equal(t->target.libc, "musl");
	assert_string_equal(t->target.libc_version, "1.2");
	t = target(&m, "y");
	assert_int_equal(t->target.ngpus, 0);
	assert_string_equal(t->target.libc_version, "2.17");
	assert_string_equal(t->torch_backend, "auto");
}

/* ---- the torch build -------------------------------------------------------------------- */

static gpuenv_manifest_t one_target(const char *deps, const char *tbl)
{
	char buf[4096];
	gpuenv_manifest_t m;

	snprintf(buf, sizeof(buf), "[tool.poetry.dependencies]\n%s\n[tool.gpuenv.targets.t]\n%s\n", deps, tbl);
	if (load(buf, &m))
		fail_msg("%s: %s", buf, ctx.err.msg);
	return m;
}

static int backend_of(const char *deps, const char *tbl, gpuenv_backend_choice_t *bc)
{
	gpuenv_manifest_t m = one_target(deps, tbl);
	return gpuenv_manifest_backend(&ctx, &arena, &m, &m.targets[0], kb, bc);
}

static void test_backend_satellite(void **state)
{
	static const struct {
		const char *target, *backend, *url;
		bool pinned;
	} want[] = {
		/* the cu118 pin of the pytorch source: the A100's 535 driver runs CUDA 11.8 */
		{ "a100", "cu118", "https://download.pytorch.org/whl/cu118", true },
		/* the group's nvidia-jetpack source ends in /cu126; CUDA 12.6 is what the Orin runs */
		{ "jetson", "cu126", "https://pypi.jetson-ai-lab.io/jp6/cu126", true },
		/* no group: the main torch from the cu118 source; 580 runs CUDA 11.8 */
		{ "h200", "cu118", "https://download.pytorch.org/whl/cu118", true },
		/* 525.85.12 >= 520.61.05, the minimum for CUDA 11.8: accepted */
		{ "t4", "cu118", "https://download.pytorch.org/whl/cu118", true },
	};
	gpuenv_manifest_t m;
	size_t len;
	char *text = read_satellite(&len);
	(void)state;

	assert_int_equal(gpuenv_manifest_parse(&ctx, &arena, "satellite.toml", text, len, kb, &m), 0);
	free(text);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		gpuenv_backend_choice_t bc;
		int r = gpuenv_manifest_backend(&ctx, &arena, &m, target(&m, want[i].target), kb, &bc);
		if (r)
			fail_msg("%s: %s", want[i].target, ctx.err.msg);
		assert_string_equal(bc.backend, want[i].backend);
		assert_string_equal(bc.index_url, want[i].url);
		assert_int_equal(bc.user_pinned, want[i].pinned);
		assert_non_null(strstr(bc.reason, "[torch.toml:"));
		assert_non_null(strstr(bc.reason, "[cuda.toml:"));
	}
}

/* the pick `gpuenv kb torch --gpu G --driver D` reports */
static const gpuenv_kb_torch_variant_t *kb_torch_pick(const char *gpu, const char *driver)
{
	gpuenv_kb_target_t t;
	gpuenv_kb_gpu_match_t gm;
	gpuenv_kb_torch_question_t q = { &t, NULL };
	gpuenv_kb_torch_answer_t ans;

	memset(&t, 0, sizeof(t));
	assert_int_equal(gpuenv_kb_gpu_lookup(kb, gpu, &gm), 0);
	t.has_cc = true;
	t.cc_major = gm.gpu->cc.part[0];
	t.cc_minor = gm.gpu->cc.part[1];
	t.gpu = gm.gpu;
	assert_true(gpuenv_kb_ver_parse(gpuenv_str(driver), &t.driver));
	t.has_driver = true;
	assert_int_equal(gpuenv_kb_ask_torch(kb, &q, &arena, &ans), 0);
	return ans.pick.driver_upgrade ? NULL : ans.pick.variant;
}

static void test_backend_matches_kb_torch(void **state)
{
	static const char *const cases[][2] = {
		{ "RTX 5090", "570.133.07" },
		{ "T4", "560.35.03" },
		{ "T4", "525.85.12" },
		{ "H200", "580.159.04" },
		{ "A100", "535.104.05" },
		{ "H100", "550.54.15" },
		{ "RTX 4090", "545.23.08" },
		{ "V100", "470.82.01" },
		{ "L4", "535.104.05" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char tbl[512];
		gpuenv_backend_choice_t bc;
		const gpuenv_kb_torch_variant_t *v = kb_torch_pick(cases[i][0], cases[i][1]);
		snprintf(tbl, sizeof(tbl), "gpu = \"%s\"\ndriver = \"%s\"\npython = \"3.12\"\nplatform = \"manylinux_2_28_x86_64\"",
			cases[i][0], cases[i][1]);
		int r = backend_of("torch = \"*\"", tbl, &bc);
		if (!v) {
			assert_int_not_equal(r, 0);
			continue;
		}
		if (r)
			fail_msg("%s on %s: %s", cases[i][0], cases[i][1], ctx.err.msg);
		if (!gpuenv_str_eq_cstr(v->tag, bc.backend) || !strstr(bc.reason, "auto: torch "))
			fail_msg("%s on %s: kb torch picks %.*s, lock %s", cases[i][0], cases[i][1],
				GPUENV_STR_ARG(v->tag), bc.backend);
		char want[64];
		snprintf(want, sizeof(want), "torch %.*s %.*s", GPUENV_STR_ARG(v->torch.str), GPUENV_STR_ARG(v->tag));
		assert_non_null(strstr(bc.reason, want));
		assert_non_null(strstr(bc.index_url, "https://download.pytorch.org/whl/cu"));
	}
}

static void test_backend_rules(void **state)
{
	gpuenv_backend_choice_t bc;
	(void)state;
	/* T4 on 525: the newest build the driver fully runs (cu118), not a cu12x
	 * build through minor-version compatibility */
	assert_int_equal(backend_of("torch = \"*\"", "gpu = \"T4\"\ndriver = \"525.85.12\"\npython = \"3.10\"\n"
						   "platform = \"manylinux_2_28_x86_64\"", &bc), 0);
	assert_string_equal(bc.backend, "cu118");
	assert_string_equal(bc.cuda, "11.8");
	/* a CPU target gets cpu */
	assert_int_equal(backend_of("torch = \"*\"", "gpu = \"none\"\npython = \"3.12\"\nplatform = \"linux_x86_64\"",
				 &bc), 0);
	assert_string_equal(bc.backend, "cpu");
	assert_string_equal(bc.index_url, "https://download.pytorch.org/whl/cpu/");
	assert_null(bc.cuda);
	/* a named build the target cannot run: why, and which would */
	assert_int_equal(backend_of("torch = \"*\"", "gpu = \"T4\"\ndriver = \"470.82.01\"\npython = \"3.10\"\n"
						   "platform = \"manylinux_2_28_x86_64\"\ntorch-backend = \"cu128\"", &bc),
		GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "cannot run the cu128 build"));
	assert_non_null(strstr(ctx.err.msg, "470.82.01"));
	assert_non_null(strstr(ctx.err.hint, "cu118"));
	assert_int_equal(ctx.err.line, 3);
	/* a named build that runs: kept */
	assert_int_equal(backend_of("torch = \"*\"", "gpu = \"H200\"\ndriver = \"580.159.04\"\npython = \"3.12\"\n"
						   "platform = \"manylinux_2_28_x86_64\"\ntorch-backend = \"cu126\"", &bc), 0);
	assert_string_equal(bc.backend, "cu126");
	assert_false(bc.user_pinned);
	/* a build no torch release has: an error where it is written, when
	 * the manifest is read (issue 22 item 13), in a target or for all */
	{
		gpuenv_manifest_t m;
		assert_int_equal(load("[tool.gpuenv.targets.t]\ngpu = \"H200\"\ndriver = \"580.159.04\"\n"
				      "python = \"3.12\"\nplatform = \"manylinux_2_28_x86_64\"\ntorch-backend = \"cu119\"\n", &m),
			GPUENV_ENOTFOUND);
		assert_non_null(strstr(ctx.err.msg, "torch-backend = \"cu119\": no torch release has a cu119 build"));
		assert_non_null(strstr(ctx.err.hint, "cu118"));
		assert_string_equal(ctx.err.file, "pyproject.toml");
		assert_int_equal(ctx.err.line, 6);
		assert_int_equal(ctx.err.col, 17);
		assert_int_equal(load("[tool.gpuenv]\ntorch-backend = \"cu999\"\n", &m), GPUENV_ENOTFOUND);
		assert_int_equal(ctx.err.line, 2);
	}
	/* a pinned source the target cannot run */
	assert_int_equal(backend_of("torch = {version = \"*\", source = \"t\"}\n[[tool.poetry.source]]\nname = \"t\"\n"
				    "url = \"https://download.pytorch.org/whl/cu128\"\npriority = \"explicit\"",
				 "gpu = \"T4\"\ndriver = \"470.82.01\"\npython = \"3.10\"\nplatform = \"manylinux_2_28_x86_64\"", &bc),
		GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "pinned to source 't'"));
	/* the project's torch constraint bounds the pick */
	assert_int_equal(backend_of("torch = \">=2.8\"", "gpu = \"T4\"\ndriver = \"525.85.12\"\npython = \"3.10\"\n"
						      "platform = \"manylinux_2_28_x86_64\"", &bc), 0);
	assert_true(!strncmp(bc.cuda, "12.", 3)); /* 2.8+ have no cu118: minor-version compatibility */
	assert_non_null(strstr(bc.reason, "minor-version"));
	/* Kepler with today's torch: impossible, explained */
	assert_int_equal(backend_of("torch = \">=2.8\"", "gpu = \"Tesla K80\"\ndriver = \"470.82.01\"\npython = \"3.10\"\n"
						      "platform = \"manylinux_2_28_x86_64\"", &bc), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "no torch build within torch>=2.8"));
	assert_non_null(strstr(ctx.err.msg, "sm_37"));
	assert_non_null(strstr(ctx.err.hint, "outside the project's torch constraint"));
	/* a CUDA 12 package on a driver that runs CUDA 11 only */
	assert_int_equal(backend_of("torch = \"*\"\nnvidia-cudnn-cu12 = \"*\"",
				 "gpu = \"T4\"\ndriver = \"470.82.01\"\npython = \"3.10\"\nplatform = \"manylinux_2_28_x86_64\"", &bc),
		GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "nvidia-cudnn-cu12 is built for CUDA 12"));
	assert_int_equal(ctx.err.line, 3);
	/* and named cpu on a GPU target is refused */
	assert_int_equal(backend_of("torch = \"*\"", "gpu = \"A100\"\ndriver = \"535.104.05\"\npython = \"3.12\"\n"
						   "platform = \"manylinux_2_28_x86_64\"\ntorch-backend = \"cpu\"", &bc),
		GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "never gives a GPU target"));
}

/* Poetry's multiple-constraint form pins torch per platform: each target
 * gets the source its marker selects */
static void test_backend_marker_pins(void **state)
{
	static const char *const text =
		"[tool.poetry.dependencies]\n"
		"torch = [{version = \"^2.1\", source = \"jp\", markers = \"platform_machine == 'aarch64'\"},\n"
		"         {version = \"^2.1\", source = \"pt\", markers = \"platform_machine == 'x86_64'\"}]\n"
		"[[tool.poetry.source]]\nname = \"jp\"\nurl = \"https://pypi.jetson-ai-lab.io/jp6/cu126/\"\npriority = \"explicit\"\n"
		"[[tool.poetry.source]]\nname = \"pt\"\nurl = \"https://download.pytorch.org/whl/cu121\"\npriority = \"explicit\"\n"
		"[tool.gpuenv.targets.orin]\ngpu = \"Jetson AGX Orin\"\ncuda = \"12.6\"\npython = \"3.10\"\nplatform = \"linux_aarch64\"\n"
		"[tool.gpuenv.targets.l4]\ngpu = \"L4\"\ndriver = \"535.104.05\"\npython = \"3.10\"\nplatform = \"manylinux_2_28_x86_64\"\n";
	gpuenv_manifest_t m;
	gpuenv_backend_choice_t bc;
	(void)state;
	assert_int_equal(load(text, &m), 0);
	assert_int_equal(m.ndeps, 2);
	assert_int_equal(gpuenv_manifest_backend(&ctx, &arena, &m, target(&m, "orin"), kb, &bc), 0);
	assert_string_equal(bc.backend, "cu126");
	assert_string_equal(bc.source, "jp");
	assert_int_equal(gpuenv_manifest_backend(&ctx, &arena, &m, target(&m, "l4"), kb, &bc), 0);
	assert_string_equal(bc.backend, "cu121");
	assert_string_equal(bc.source, "pt");
	assert_string_equal(bc.index_url, "https://download.pytorch.org/whl/cu121");
	/* a pin and a named backend that disagree */
	char buf[2048];
	snprintf(buf, sizeof(buf), "%s[tool.gpuenv]\ntorch-backend = \"cu128\"\n", text);
	assert_int_equal(load(buf, &m), 0);
	assert_int_equal(gpuenv_manifest_backend(&ctx, &arena, &m, target(&m, "l4"), kb, &bc), GPUENV_EUNSUPPORTED);
	assert_non_null(strstr(ctx.err.msg, "torch-backend = \"cu128\""));
	assert_int_equal(ctx.err.line, 3);
}

/* every GPU the KB knows, on a driver new enough for it: never cpu */
static void test_gpu_target_never_cpu(void **state)
{
	size_t checked = 0;
	(void)state;
	for (size_t i = 0; i < kb->n_gpu; i++) {
		const gpuenv_kb_gpu_t *g = &kb->gpu[i];
		char tbl[512];
		gpuenv_backend_choice_t bc;
		snprintf(tbl, sizeof(tbl), "compute_capability = \"%.*s\"\ndriver = \"580.159.04\"\npython = \"3.12\"\n"
			 "platform = \"manylinux_2_28_x86_64\"", GPUENV_STR_ARG(g->cc.str));
		if (backend_of("torch = \"*\"", tbl, &bc) == 0) {
			assert_string_not_equal(bc.backend, "cpu");
			assert_non_null(bc.cuda);
			checked++;
		} else
			assert_int_equal(ctx.err.code, GPUENV_EUNSUPPORTED);
	}
	assert_true(checked > 10);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(gpuenv_manifest_cuda_major("nvidia-cudnn-cu12"), 12);
	assert_int_equal(gpuenv_manifest_cuda_major("nvidia_cublas_cu11"), 11);
	assert_int_equal(gpuenv_manifest_cuda_major("nvidia-nccl-cu13"), 13);
	assert_int_equal(gpuenv_manifest_cuda_major("cupy-cuda12x"), 12);
	assert_int_equal(gpuenv_manifest_cuda_major("cupy-cuda117"), 11);
	assert_int_equal(gpuenv_manifest_cuda_major("cupy-cuda102"), 10);
	assert_int_equal(gpuenv_manifest_cuda_major("jax-cuda12-plugin"), 12);
	assert_int_equal(gpuenv_manifest_cuda_major("jax-cuda12-pjrt"), 12);
	assert_int_equal(gpuenv_manifest_cuda_major("nvidia-ml-py"), 0);
	assert_int_equal(gpuenv_manifest_cuda_major("jax"), 0);
	assert_int_equal(gpuenv_manifest_cuda_major("cupy"), 0);
	assert_true(gpuenv_manifest_torch_family("torch"));
	assert_true(gpuenv_manifest_torch_family("TorchVision"));
	assert_true(gpuenv_manifest_torch_family("pytorch-triton"));
	assert_true(gpuenv_manifest_torch_family("nvidia-cudnn-cu12"));
	assert_false(gpuenv_manifest_torch_family("triton"));
	assert_true(gpuenv_manifest_torch_index_package("triton"));
	assert_false(gpuenv_manifest_torch_family("numpy"));
}

/* ---- inputs hash ------------------------------------------------------------------------- */

static void test_inputs_hash(void **state)
{
	gpuenv_manifest_t a, b, c;
	(void)state;
	assert_int_equal(load("[project]\nname = \"x\"\ndependencies = [\"a>=1\", \"b\"]\n"
			      "[tool.gpuenv]\ntorch-backend = \"auto\"\n", &a), 0);
	/* comments, spacing, key order and dependency order change nothing */
	assert_int_equal(load("# hi\n[tool.gpuenv]\ntorch-backend   = 'auto' # c\n[project]\n"
			      "dependencies = [ \"b\",\n  \"a >= 1\" ]\nname = \"x\"\n", &b), 0);
	assert_string_equal(a.inputs_hash, b.inputs_hash);
	assert_int_equal(strlen(a.inputs_hash), 64);
	/* a changed constraint, backend or source does */
	assert_int_equal(load("[project]\nname = \"x\"\ndependencies = [\"a>=2\", \"b\"]\n", &c), 0);
	assert_string_not_equal(a.inputs_hash, c.inputs_hash);
	assert_int_equal(load("[project]\nname = \"x\"\ndependencies = [\"a>=1\", \"b\"]\n"
			      "[tool.gpuenv]\ntorch-backend = \"cpu\"\n", &c), 0);
	assert_string_not_equal(a.inputs_hash, c.inputs_hash);
}

/* ---- allocation failures ----------------------------------------------------------------- */

static int run_all(gpuenv_ctx_t *c, const char *text, size_t len)
{
	gpuenv_arena_t a;
	gpuenv_manifest_t m;
	int r;

	gpuenv_arena_init(&a, c, 0);
	r = gpuenv_manifest_parse(c, &a, "satellite.toml", text, len, kb, &m);
	for (size_t i = 0; !r && i < m.ntargets; i++) {
		const gpuenv_dep_t *d;
		size_t n;
		gpuenv_backend_choice_t bc;
		r = gpuenv_manifest_target_deps(c, &a, &m, &m.targets[i], &d, &n);
		if (!r)
			r = gpuenv_manifest_backend(c, &a, &m, &m.targets[i], kb, &bc);
	}
	gpuenv_arena_free(&a);
	return r;
}

/* [tool.gpuenv] keys of the fleet, image and build verbs */
static void test_tool_keys(void **state)
{
	gpuenv_manifest_t m;
	(void)state;

	assert_int_equal(load("[project]\nname = \"x\"\n[tool.gpuenv]\nlabel-prefix = \"gpuenv.example.com\"\n"
			      "build-against-env = [\"Flash_Attn\", \"apex\"]\n"
			      "[tool.gpuenv.registries]\n\"nvcr.io\" = \"http://127.0.0.1:5000\"\n"
			      "\"docker.io\" = \"https://mirror.example.com\"\n",
			     &m),
		0);
	assert_string_equal(m.label_prefix, "gpuenv.example.com");
	assert_int_equal(m.nbuild_against_env, 2);
	assert_string_equal(m.build_against_env[0], "flash-attn");
	assert_string_equal(m.build_against_env[1], "apex");
	assert_int_equal(m.nregistries, 2);
	assert_string_equal(m.registries[0].host, "nvcr.io");
	assert_string_equal(m.registries[0].url, "http://127.0.0.1:5000");
	assert_string_equal(m.registries[1].host, "docker.io");
	assert_int_equal(load("[project]\nname = \"x\"\n", &m), 0);
	assert_null(m.label_prefix);
	assert_int_equal(m.nregistries, 0);
	assert_int_equal(m.nbuild_against_env, 0);
	expect_err("[tool.gpuenv.registries]\n\"nvcr.io\" = \"ftp://x\"\n", GPUENV_EUNSUPPORTED, 2, 13,
		"not an http(s):// URL");
	expect_err("[tool.gpuenv.registries]\n\"nvcr.io/x\" = \"http://x\"\n", GPUENV_ESYNTAX, 2, 1,
		"registry host");
	expect_err("[tool.gpuenv]\nbuild-against-env = \"flash-attn\"\n", GPUENV_ETYPE, 2, 21, "array");
}

static void test_alloc_failures(void **state)
{
	testutil_alloc_t t;
	gpuenv_ctx_t c;
	size_t len;
	char *text = read_satellite(&len);
	long total;
	(void)state;

	gpuenv_ctx_init(&c);
	testutil_alloc_reset(&t, TESTUTIL_NEVER, false);
	c.mem = testutil_allocator(&t);
	assert_int_equal(run_all(&c, text, len), 0);
	total = t.calls;
	assert_true(total > 10);
	for (long i = 0; i < total; i++) {
		int r;
		testutil_alloc_reset(&t, i, false);
		memset(&c.err, 0, sizeof(c.err));
		r = run_all(&c, text, len);
		if (r != -ENOMEM || c.err.code != -ENOMEM)
			fail_msg("allocation %ld of %ld failing: %d (%s)", i, total, r, c.err.msg);
		/* that one alone: reported, never worked around into another answer */
		testutil_alloc_reset(&t, i, true);
		memset(&c.err, 0, sizeof(c.err));
		r = run_all(&c, text, len);
		if (r != -ENOMEM || c.err.code != -ENOMEM)
			fail_msg("allocation %ld of %ld failing alone: %d (%s)", i, total, r, c.err.msg);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poetry_constraints),
		cmocka_unit_test(test_python_markers),
		cmocka_unit_test(test_pep621_groups),
		cmocka_unit_test(test_poetry),
		cmocka_unit_test(test_direct_refs),
		cmocka_unit_test(test_uv_pdm),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_tool_keys),
		cmocka_unit_test(test_backend_satellite),
		cmocka_unit_test(test_backend_matches_kb_torch),
		cmocka_unit_test(test_backend_rules),
		cmocka_unit_test(test_backend_marker_pins),
		cmocka_unit_test(test_gpu_target_never_cpu),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_inputs_hash),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
