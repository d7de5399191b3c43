/* Unit tests for PEP 751 lock files (lib/lock/pylock.c): the writer's fixed
 * layout, round trips, other tools' locks, every refusal with its place,
 * and allocation failures. */
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
#include "gpuenv/pylock.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_arena_t arena;
static char logbuf[4096];

static void capture(void *ud, int level, const char *msg)
{
	(void)ud;
	size_t l = strlen(logbuf);
	snprintf(logbuf + l, sizeof(logbuf) - l, "%d %s\n", level, msg);
}

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	ctx.log = capture;
	ctx.verbosity = GPUENV_LOG_DEBUG;
	logbuf[0] = '\0';
	gpuenv_arena_init(&arena, &ctx, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_arena_free(&arena);
	return 0;
}

#define SHA_A "c75a69e28a550a7e93789579c22aa26b0f5b83b75dc4e08fe092980051e1090a"
#define SHA_B "67c7495b760168d931a10233f979b28dc04daf853b30752246f4f8471c6d68d0"
#define SHA_C "6d95f286b8244b3649b477ac066c6906fbb2905f8ac19b170e2175d3d799f4df"

/* A gpuenv lock for one target, its packages out of order on purpose. */
static const gpuenv_lock_dep_t torch_deps[] = {
	{ "nvidia-cudnn-cu12", "9.10.2.21" },
	{ "filelock", NULL },
};
static const gpuenv_lock_file_t torch_wheels[] = {
	{ .name = "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
		.url = "https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl",
		.size = 888000000, .upload_time = "2025-08-06T17:00:00Z", .sha256 = SHA_C },
};
static const gpuenv_lock_file_t filelock_wheels[] = {
	{ .name = "filelock-3.18.0-py3-none-any.whl", .url = "http://127.0.0.1/f/filelock-3.18.0-py3-none-any.whl",
		.size = -1, .sha256 = SHA_A },
};
static const gpuenv_lock_file_t cudnn_wheels[] = {
	{ .name = "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl",
		.url = "http://127.0.0.1/n/nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl",
		.size = 12, .sha256 = SHA_B },
};
static const gpuenv_lock_file_t filelock_sdist = {
	.name = "filelock-3.18.0.tar.gz", .url = "http://127.0.0.1/f/filelock-3.18.0.tar.gz", .size = 5,
	.sha256 = SHA_B,
};
static const gpuenv_lock_package_t pkgs[] = {
	{ .name = "torch", .version = "2.8.0+cu128", .requires_python = ">=3.9",
		.index = "https://download.pytorch.org/whl/cu128", .ndeps = 2, .deps = torch_deps,
		.nwheels = 1, .wheels = torch_wheels, .reason = "torch family from backend cu128" },
	{ .name = "nvidia-cudnn-cu12", .version = "9.10.2.21", .marker = "sys_platform == \"linux\"",
		.nwheels = 1, .wheels = cudnn_wheels },
	{ .name = "filelock", .version = "3.18.0", .index = "http://127.0.0.1/simple/", .nwheels = 1,
		.wheels = filelock_wheels, .sdist = &filelock_sdist },
};
static const char *const groups[] = { "h200" };

static gpuenv_lock_t sample(void)
{
	return (gpuenv_lock_t){
		.lock_version = "1.0",
		.created_by = "gpuenv",
		.requires_python = ">=3.10",
		.npackages = 3,
		.packages = pkgs,
		.target = { .name = "h200", .origin = "declared", .gpu = "H200",
			.compute_capability = "9.0", .driver = "570.86.15", .cuda = "12.8",
			.python = "3.12", .platform = "manylinux_2_28_x86_64", .backend = "cu128",
			.backend_reason = "newest stable build the driver runs fully\n(torch.toml row 2.8.0/cu128)",
			.ngroups = 1, .groups = groups, .inputs_hash = "sha256:0123", .kb_date = "2026-11-30" },
	};
}

static const char sample_toml[] =
	"lock-version = \"1.0\"\n"
	"requires-python = \">=3.10\"\n"
	"extras = []\n"
	"dependency-groups = []\n"
	"created-by = \"gpuenv\"\n"
	"\n"
	"[[packages]]\n"
	"name = \"filelock\"\n"
	"version = \"3.18.0\"\n"
	"index = \"http://127.0.0.1/simple/\"\n"
	"sdist = { name = \"filelock-3.18.0.tar.gz\", url = \"http://127.0.0.1/f/filelock-3.18.0.tar.gz\", size = 5, hashes = { sha256 = \"" SHA_B "\" } }\n"
	"wheels = [\n"
	"    { name = \"filelock-3.18.0-py3-none-any.whl\", url = \"http://127.0.0.1/f/filelock-3.18.0-py3-none-any.whl\", hashes = { sha256 = \"" SHA_A "\" } },\n"
	"]\n"
	"\n"
	"[[packages]]\n"
	"name = \"nvidia-cudnn-cu12\"\n"
	"version = \"9.10.2.21\"\n"
	"marker = \"sys_platform == \\\"linux\\\"\"\n"
	"wheels = [\n"
	"    { name = \"nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl\", url = \"http://127.0.0.1/n/nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl\", size = 12, hashes = { sha256 = \"" SHA_B "\" } },\n"
	"]\n"
	"\n"
	"[[packages]]\n"
	"name = \"torch\"\n"
	"version = \"2.8.0+cu128\"\n"
	"requires-python = \">=3.9\"\n"
	"dependencies = [\n"
	"    { name = \"filelock\" },\n"
	"    { name = \"nvidia-cudnn-cu12\", version = \"9.10.2.21\" },\n"
	"]\n"
	"index = \"https://download.pytorch.org/whl/cu128\"\n"
	"wheels = [\n"
	"    { name = \"torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl\", upload-time = 2025-08-06T17:00:00Z, url = \"https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl\", size = 888000000, hashes = { sha256 = \"" SHA_C "\" } },\n"
	"]\n"
	"\n"
	"[packages.tool.gpuenv]\n"
	"reason = \"torch family from backend cu128\"\n"
	"\n"
	"[tool.gpuenv]\n"
	"target = \"h200\"\n"
	"origin = \"declared\"\n"
	"gpu = \"H200\"\n"
	"compute-capability = \"9.0\"\n"
	"driver = \"570.86.15\"\n"
	"cuda = \"12.8\"\n"
	"python = \"3.12\"\n"
	"platform = \"manylinux_2_28_x86_64\"\n"
	"backend = \"cu128\"\n"
	"backend-reason = \"newest stable build the driver runs fully\\n(torch.toml row 2.8.0/cu128)\"\n"
	"groups = [\"h200\"]\n"
	"inputs-hash = \"sha256:0123\"\n"
	"kb-date = \"2026-11-30\"\n";

static char *write_lock(const gpuenv_lock_t *l, size_t *len)
{
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	int r = gpuenv_pylock_write(&ctx, l, &b);
	if (r)
		fail_msg("write: %d %s", r, ctx.err.msg);
	return gpuenv_buf_steal(&b, len);
}

static void parse_ok(const char *text, size_t len, gpuenv_lock_t *out)
{
	int r = gpuenv_pylock_parse(&ctx, &arena, "pylock.toml", gpuenv_str_n(text, len), out);
	if (r) {
		char msg[900];
		gpuenv_error_format(&ctx.err, msg, sizeof(msg));
		fail_msg("parse: %s", msg);
	}
}

/* ---- the writer's layout ---- */

static void test_write_layout(void **state)
{
	(void)state;
	gpuenv_lock_t l = sample();
	size_t n;
	char *t = write_lock(&l, &n);

	if (strcmp(t, sample_toml))
		fail_msg("layout differs:\n%s", t);
	gpuenv_free(&ctx, t);
}

/* the same lock in another order: the same bytes */
static void test_write_deterministic(void **state)
{
	(void)state;
	gpuenv_lock_t l = sample();
	gpuenv_lock_package_t rev[3] = { pkgs[2], pkgs[0], pkgs[1] };
	gpuenv_lock_dep_t deps[2] = { torch_deps[1], torch_deps[0] };
	size_t n1, n2;

	rev[1].deps = deps;
	l.packages = rev;
	char *a = write_lock(&l, &n1);
	char *b = write_lock(&l, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(a, b, n1);
	assert_string_equal(a, sample_toml);
	gpuenv_free(&ctx, a);
	gpuenv_free(&ctx, b);
}

/* parse(write(x)) == x (x sorted), and write(parse(t)) == t */
static void test_round_trip(void **state)
{
	(void)state;
	gpuenv_lock_t l = sample(), back, again;
	gpuenv_lock_package_t sorted[3] = { pkgs[2], pkgs[1], pkgs[0] };
	gpuenv_lock_dep_t deps[2] = { torch_deps[1], torch_deps[0] };
	size_t n, n2;

	sorted[2].deps = deps;
	l.packages = sorted;
	char *t = write_lock(&l, &n);
	parse_ok(t, n, &back);
	assert_true(gpuenv_pylock_eq(&l, &back));
	assert_string_equal(back.packages[2].wheels[0].upload_time, "2025-08-06T17:00:00Z");
	assert_int_equal(back.packages[0].wheels[0].size, -1);
	assert_string_equal(back.target.backend_reason, l.target.backend_reason);
	char *t2 = write_lock(&back, &n2);
	assert_string_equal(t, t2);
	parse_ok(t2, n2, &again);
	assert_true(gpuenv_pylock_eq(&back, &again));
	/* eq is not vacuous */
	((gpuenv_lock_file_t *)again.packages[2].wheels)[0].size++;
	assert_false(gpuenv_pylock_eq(&back, &again));
	again = back;
	again.target.kb_date = "2026-12-01";
	assert_false(gpuenv_pylock_eq(&back, &again));
	gpuenv_free(&ctx, t);
	gpuenv_free(&ctx, t2);
}

/* strings that need TOML escapes come back byte for byte */
static void test_escapes(void **state)
{
	(void)state;
	static const char *const ex[] = { "a\"b", "c\\d", "tab\there", "\xc3\xa9t\xc3\xa9\x7f\x01" };
	gpuenv_lock_t l = sample(), back;
	size_t n;

	l.nextras = 4;
	l.extras = ex;
	l.target.backend_reason = "line 1\nline 2 \"quoted\" \\ back\r\n";
	char *t = write_lock(&l, &n);
	parse_ok(t, n, &back);
	assert_int_equal(back.nextras, 4);
	for (int i = 0; i < 4; i++)
		assert_string_equal(back.extras[i], ex[i]);
	assert_string_equal(back.target.backend_reason, l.target.backend_reason);
	gpuenv_free(&ctx, t);
}

/* ---- other tools' locks ---- */

static const char pep_example[] =
	"lock-version = '1.0'\n"
	"environments = [\"sys_platform == 'win32'\", \"sys_platform == 'linux'\"]\n"
	"requires-python = '==3.12'\n"
	"created-by = 'mousebender'\n"
	"\n"
	"[[packages]]\n"
	"name = 'attrs'\n"
	"version = '25.1.0'\n"
	"requires-python = '>=3.8'\n"
	"wheels = [\n"
	"  {name = 'attrs-25.1.0-py3-none-any.whl', upload-time = 2025-01-25T11:30:10.164985+00:00, url = 'https://files.example/attrs-25.1.0-py3-none-any.whl', size = 63152, hashes = {sha256 = '" SHA_A "'}},\n"
	"]\n"
	"[[packages.attestation-identities]]\n"
	"environment = 'release-pypi'\n"
	"kind = 'GitHub'\n"
	"repository = 'python-attrs/attrs'\n"
	"\n"
	"[[packages]]\n"
	"name = 'cattrs'\n"
	"version = '24.1.2'\n"
	"dependencies = [\n"
	"    {name = 'attrs'},\n"
	"]\n"
	"wheels = [\n"
	"  {url = 'https://files.example/c/cattrs-24.1.2-py3-none-any.whl?x=1#frag', hashes = {sha256 = '" SHA_B "', md5 = 'abc'}},\n"
	"  {path = 'wheels/cattrs-24.1.2-py2-none-any.whl', hashes = {blake2b = 'ff'}},\n"
	"]\n"
	"\n"
	"[[packages]]\n"
	"name = 'torch'\n"
	"version = '2.8.0+cu128'\n"
	"wheels = [{url = 'https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl', hashes = {sha256 = '" SHA_C "'}}]\n"
	"\n"
	"[[packages]]\n"
	"name = 'myproject'\n"
	"directory = { path = '.', editable = true }\n"
	"\n"
	"[[packages]]\n"
	"name = 'fromgit'\n"
	"vcs = { type = 'git', url = 'https://example.org/x.git', requested-revision = 'main', commit-id = 'deadbeef', subdirectory = 'py' }\n"
	"\n"
	"[[packages]]\n"
	"name = 'tarball'\n"
	"version = '1.0'\n"
	"archive = { url = 'https://example.org/tarball-1.0.tar.gz', size = 10, upload-time = 2024-01-01T00:00:00Z, hashes = { sha256 = '" SHA_A "' }, subdirectory = 'src' }\n"
	"\n"
	"[[packages]]\n"
	"name = 'onlysdist'\n"
	"version = '0.1'\n"
	"sdist = { url = 'https://example.org/onlysdist-0.1.tar.gz', hashes = { sha256 = '" SHA_B "' } }\n"
	"\n"
	"[tool.mousebender]\n"
	"run-on = 2025-03-06T12:28:57.760769\n";

static void test_other_tools(void **state)
{
	(void)state;
	gpuenv_lock_t l, back;
	size_t n;

	parse_ok(pep_example, sizeof(pep_example) - 1, &l);
	assert_string_equal(l.created_by, "mousebender");
	assert_int_equal(l.nenvironments, 2);
	assert_int_equal(l.npackages, 7);
	/* sorted by name */
	const char *names[] = { "attrs", "cattrs", "fromgit", "myproject", "onlysdist", "tarball", "torch" };
	for (int i = 0; i < 7; i++)
		assert_string_equal(l.packages[i].name, names[i]);
	const gpuenv_lock_package_t *c = &l.packages[1];
	assert_int_equal(c->nwheels, 2);
	/* names from the URL (query, fragment dropped) and from the path */
	assert_string_equal(c->wheels[0].name, "cattrs-24.1.2-py2-none-any.whl");
	assert_null(c->wheels[0].sha256);
	assert_int_equal(c->wheels[0].nother_hashes, 1);
	assert_string_equal(c->wheels[0].other_hashes[0], "blake2b=ff");
	assert_string_equal(c->wheels[1].name, "cattrs-24.1.2-py3-none-any.whl");
	assert_string_equal(c->wheels[1].other_hashes[0], "md5=abc");
	assert_string_equal(l.packages[6].wheels[0].name,
		"torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl");
	assert_string_equal(l.packages[3].directory, ".");
	assert_true(l.packages[3].editable);
	assert_null(l.packages[3].version);
	assert_string_equal(l.packages[2].vcs->commit_id, "deadbeef");
	assert_string_equal(l.packages[2].vcs->requested_revision, "main");
	assert_string_equal(l.packages[2].subdirectory, "py");
	assert_string_equal(l.packages[5].archive->upload_time, "2024-01-01T00:00:00Z");
	assert_null(l.packages[5].archive->name);
	assert_string_equal(l.packages[5].subdirectory, "src");
	assert_string_equal(l.packages[4].sdist->name, "onlysdist-0.1.tar.gz");
	assert_null(l.target.name);

	char *t = write_lock(&l, &n);
	parse_ok(t, n, &back);
	assert_true(gpuenv_pylock_eq(&l, &back));
	assert_null(strstr(t, "mousebender]")); /* other tools' tables are not kept */
	gpuenv_free(&ctx, t);
}

/* a newer minor version: unknown keys are warnings, not errors */
static void test_newer_minor(void **state)
{
	(void)state;
	static const char text[] = "lock-version = \"1.3\"\ncreated-by = \"future\"\nshiny = 1\n"
				   "[[packages]]\nname = \"a\"\nnew-key = true\n"
				   "directory = { path = \"a\" }\n";
	gpuenv_lock_t l;

	parse_ok(text, sizeof(text) - 1, &l);
	assert_string_equal(l.lock_version, "1.3");
	assert_non_null(strstr(logbuf, "pylock.toml:3:1: unknown key 'shiny'"));
	assert_non_null(strstr(logbuf, "pylock.toml:6:1: unknown key 'new-key'"));
}

/* ---- refusals: code, place, message ---- */

struct bad_case {
	const char *text;
	int code;
	const char *where; /* "line:col" */
	const char *msg;
};

#define HDR "lock-version = \"1.0\"\ncreated-by = \"t\"\n"
#define W(extra) "[[packages]]\nname = \"a\"\nwheels = [{ name = \"a-1-py3-none-any.whl\", url = \"u/a-1-py3-none-any.whl\"" extra " }]\n"
#define H ", hashes = { sha256 = \"" SHA_A "\" }"

static const struct bad_case bad_cases[] = {
	{ "created-by = \"t\"\npackages = []\n", GPUENV_EFORMAT, NULL, "'lock-version' is missing" },
	{ "lock-version = \"2.0\"\ncreated-by = \"t\"\npackages = []\n", GPUENV_EUNSUPPORTED, "1:16", "newer than" },
	{ "lock-version = \"1\"\ncreated-by = \"t\"\npackages = []\n", GPUENV_EFORMAT, "1:16", "must be \"1.0\"" },
	{ "lock-version = 1.0\ncreated-by = \"t\"\npackages = []\n", GPUENV_ETYPE, "1:16", "must be a string" },
	{ "lock-version = \"1.0\"\npackages = []\n", GPUENV_EFORMAT, NULL, "'created-by' is missing" },
	{ HDR, GPUENV_EFORMAT, "1:1", "no [[packages]]" },
	{ HDR "packages = [1]\n", GPUENV_ETYPE, "3:13", "'packages[0]' must be a table" },
	{ HDR "packages = []\nrequires-python = \">=x\"\n", GPUENV_EFORMAT, "4:19", "not a valid version specifier" },
	{ HDR "packages = []\nenvironments = [\"os_name ==\"]\n", GPUENV_EFORMAT, "4:17", "not a valid PEP 508 marker" },
	{ HDR "packages = []\nextras = \"x\"\n", GPUENV_ETYPE, "4:10", "'extras' must be an array" },
	{ HDR "packages = []\nextras = [1]\n", GPUENV_ETYPE, "4:11", "'extras[0]' must be a string" },
	{ HDR "packages = []\ncreated_by = \"x\"\n", GPUENV_EFORMAT, "4:1", "unknown key 'created_by'" },
	{ HDR "packages = []\nfoo = \"x\\u0000\"\n", GPUENV_EFORMAT, "4:1", "unknown key" },
	{ HDR W(""), GPUENV_EFORMAT, "5:11", "no hash" },
	{ HDR W(", hashes = {}"), GPUENV_EFORMAT, "5:85", "no hash" },
	{ HDR W(", hashes = { sha256 = \"abc\" }"), GPUENV_EFORMAT, "5:96", "64 hexadecimal" },
	{ HDR W(", hashes = { sha256 = 1 }"), GPUENV_ETYPE, "5:96", "must be a string" },
	{ HDR W(", hashes = { \"a b\" = \"1\" }"), GPUENV_EFORMAT, "5:87", "not a hash algorithm" },
	{ HDR W(H ", size = -1"), GPUENV_EFORMAT, "5:173", "must not be negative" },
	{ HDR W(H ", size = \"1\""), GPUENV_ETYPE, "5:173", "must be an integer" },
	{ HDR W(H ", upload-time = \"2024\""), GPUENV_ETYPE, "5:180", "must be an offset date-time" },
	{ HDR W(H ", upload-time = 2024-01-01T00:00:00"), GPUENV_ETYPE, "5:180", "must be an offset date-time" },
	{ HDR W(H ", sizes = 1"), GPUENV_EFORMAT, "5:166", "did you mean 'size'" },
	{ HDR "[[packages]]\nname = \"a\"\nwheels = [{ url = \"u/b-1-py3-none-any.whl\"" H " }]\n",
		GPUENV_EFORMAT, "5:11", "not a wheel of 'a'" },
	{ HDR "[[packages]]\nname = \"a\"\nwheels = [{ url = \"u/\"" H " }]\n", GPUENV_EFORMAT, "5:11", "no name" },
	{ HDR "[[packages]]\nname = \"a\"\nwheels = [{ name = \"a.whl\", url = \"u\"" H " }]\n",
		GPUENV_EFORMAT, "5:20", "not a valid wheel file name" },
	{ HDR "[[packages]]\nname = \"a\"\nwheels = [{ name = \"a-1-py3-none-any.whl\"" H " }]\n",
		GPUENV_EFORMAT, "5:11", "needs a url or a path" },
	{ HDR "[[packages]]\nname = \"A_b\"\ndirectory = { path = \".\" }\n", GPUENV_EFORMAT, "4:8", "normalized" },
	{ HDR "[[packages]]\nname = \"a\"\nversion = \"1.x\"\ndirectory = { path = \".\" }\n", GPUENV_EFORMAT, "5:11", "PEP 440" },
	{ HDR "[[packages]]\nname = \"a\"\nmarker = \"python_version >\"\ndirectory = { path = \".\" }\n", GPUENV_EFORMAT, "5:10", "PEP 508 marker" },
	{ HDR "[[packages]]\nversion = \"1\"\n", GPUENV_EFORMAT, "3:3", "'name' is missing" },
	{ HDR "[[packages]]\nname = \"a\"\n", GPUENV_EFORMAT, "3:3", "has no source" },
	{ HDR "[[packages]]\nname = \"a\"\ndirectory = { path = \".\" }\nvcs = { type = \"git\", url = \"u\", commit-id = \"1\" }\n",
		GPUENV_EFORMAT, "3:3", "exclude every other source" },
	{ HDR "[[packages]]\nname = \"a\"\ndirectory = { path = \".\" }\n" "sdist = { url = \"u/a-1.tar.gz\"" H " }\n",
		GPUENV_EFORMAT, "3:3", "exclude every other source" },
	{ HDR "[[packages]]\nname = \"a\"\nvcs = { type = \"git\", url = \"u\" }\n", GPUENV_EFORMAT, "5:7", "'commit-id' is missing" },
	{ HDR "[[packages]]\nname = \"a\"\nvcs = { type = \"git\", commit-id = \"1\" }\n", GPUENV_EFORMAT, "5:7", "needs a url or a path" },
	{ HDR "[[packages]]\nname = \"a\"\ndirectory = { path = \".\", editable = \"yes\" }\n", GPUENV_ETYPE, "5:38", "must be a bool" },
	{ HDR "[[packages]]\nname = \"a\"\ndirectory = { path = \".\" }\ndependencies = [{ version = \"1\" }]\n", GPUENV_EFORMAT, "6:17", "'name' is missing" },
	{ HDR "[[packages]]\nname = \"a\"\ndirectory = { path = \".\" }\ndependencies = [\"b\"]\n", GPUENV_ETYPE, "6:17", "must be a table" },
	{ HDR "[[packages]]\nname = \"a\"\ndirectory = { path = \".\" }\n[[packages.attestation-identities]]\nx = 1\n",
		GPUENV_EFORMAT, "6:12", "'kind' is missing" },
	{ HDR "[[packages]]\nname = \"a\"\ndirectory = { path = \".\" }\n[packages.tool.gpuenv]\nreasn = \"x\"\n",
		GPUENV_EFORMAT, "7:1", "did you mean 'reason'" },
	{ HDR "packages = []\n[tool.gpuenv]\nbackend = 12\n", GPUENV_ETYPE, "5:11", "'tool.gpuenv.backend' must be a string" },
	{ HDR "packages = []\n[tool.gpuenv]\nbakend = \"cpu\"\n", GPUENV_EFORMAT, "5:1", "did you mean 'backend'" },
	/* even in a newer minor version, [tool.gpuenv] is ours: strict */
	{ "lock-version = \"1.2\"\ncreated-by = \"t\"\npackages = []\n[tool.gpuenv]\nbakend = \"cpu\"\n", GPUENV_EFORMAT, "5:1", "unknown key" },
	{ HDR "packages = []\ntool = 1\n", GPUENV_ETYPE, "4:8", "must be a table" },
	/* TOML errors keep the parser's place */
	{ HDR "packages = [\n", GPUENV_ESYNTAX, "3:12", "" },
};

static void test_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		gpuenv_lock_t l;
		char msg[1200], where[32];
		int r = gpuenv_pylock_parse(&ctx, &arena, "bad.toml", gpuenv_str(c->text), &l);
		gpuenv_error_format(&ctx.err, msg, sizeof(msg) - 300);
		if (ctx.err.hint[0]) /* the hint is part of the story */
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " (hint: %.250s)", ctx.err.hint);
		if (getenv("PYLOCK_SHOW"))
			print_message("case %zu: %s\n", i, msg);
		if (r != c->code)
			fail_msg("case %zu: code %d (%s), want %d", i, r, msg, c->code);
		if (!strstr(msg, c->msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, msg, c->msg);
		assert_int_equal(ctx.err.code, r);
		assert_string_equal(ctx.err.file, "bad.toml");
		snprintf(where, sizeof(where), "%u:%u", ctx.err.line, ctx.err.col);
		if (c->where && strcmp(where, c->where) && getenv("PYLOCK_SHOW"))
			print_message("case %zu: at %s, want %s (%s)\n", i, where, c->where, msg);
		else if (c->where && strcmp(where, c->where))
			fail_msg("case %zu: at %s, want %s (%s)", i, where, c->where, msg);
		assert_null(l.packages);
	}
}

/* archive entries as the lock of a URL dependency writes them (gpuenv's
 * own layout), read back equal; the file-name helpers sync uses */
static void test_archive(void **state)
{
	(void)state;
	static const gpuenv_lock_dep_t adeps[] = { { "filelock", "3.18.0" } };
	static const gpuenv_lock_file_t whl = { .url = "http://127.0.0.1:8000/a/alpha-1.0-py3-none-any.whl",
		.size = 900, .sha256 = SHA_A };
	static const gpuenv_lock_file_t sd = { .url = "https://h/x/beta-2.0.tar.gz?raw=1#frag", .size = 398,
		.sha256 = SHA_B };
	gpuenv_lock_package_t ps[3] = {
		{ .name = "alpha", .version = "1.0", .ndeps = 1, .deps = adeps, .archive = &whl },
		{ .name = "beta", .version = "2.0", .archive = &sd },
		pkgs[2],
	};
	gpuenv_lock_t l = { .lock_version = "1.0", .created_by = "gpuenv", .npackages = 3, .packages = ps }, back;
	size_t n, n2;
	char *t = write_lock(&l, &n);
	const char *want_alpha = "[[packages]]\nname = \"alpha\"\nversion = \"1.0\"\ndependencies = [\n"
		"    { name = \"filelock\", version = \"3.18.0\" },\n]\narchive = { url = "
		"\"http://127.0.0.1:8000/a/alpha-1.0-py3-none-any.whl\", size = 900, hashes = { sha256 = \"" SHA_A
		"\" } }\n";
	if (!strstr(t, want_alpha))
		fail_msg("the archive entry's layout:\n%s", t);
	parse_ok(t, n, &back);
	assert_true(gpuenv_pylock_eq(&l, &back));
	assert_non_null(back.packages[0].archive);
	assert_null(back.packages[0].archive->name);
	assert_int_equal(back.packages[0].archive->size, 900);
	assert_string_equal(back.packages[0].archive->sha256, SHA_A);
	assert_int_equal(back.packages[0].nwheels, 0);
	assert_null(back.packages[0].sdist);
	char *t2 = write_lock(&back, &n2);
	assert_string_equal(t, t2);
	/* another hash makes another lock */
	gpuenv_lock_file_t other = whl;
	other.sha256 = SHA_C;
	ps[0].archive = &other;
	assert_false(gpuenv_pylock_eq(&l, &back));

	/* the name sync installs it by, and whether it is a wheel */
	assert_string_equal(gpuenv_lock_file_name(&arena, &whl), "alpha-1.0-py3-none-any.whl");
	assert_string_equal(gpuenv_lock_file_name(&arena, &sd), "beta-2.0.tar.gz");
	assert_true(gpuenv_lock_file_is_wheel(&whl));
	assert_false(gpuenv_lock_file_is_wheel(&sd));
	gpuenv_lock_file_t up = { .url = "https://h/ALPHA-1.0-PY3-NONE-ANY.WHL?x=1", .sha256 = SHA_A };
	assert_true(gpuenv_lock_file_is_wheel(&up));
	gpuenv_lock_file_t named = { .name = "gamma-1.0.whl.tar.gz", .url = "https://h/x.whl", .sha256 = SHA_A };
	assert_false(gpuenv_lock_file_is_wheel(&named)); /* the name wins over the URL */
	assert_string_equal(gpuenv_lock_file_name(&arena, &named), "gamma-1.0.whl.tar.gz");

	/* an archive with a name key, an archive beside wheels: refused */
	gpuenv_lock_file_t withname = whl;
	withname.name = "alpha-1.0-py3-none-any.whl";
	ps[0].archive = &withname;
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_pylock_write(&ctx, &l, &b), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "an archive has no name key"));
	ps[0].archive = &whl;
	ps[0].nwheels = 1;
	ps[0].wheels = filelock_wheels;
	gpuenv_buf_reset(&b);
	assert_int_not_equal(gpuenv_pylock_write(&ctx, &l, &b), 0);
	assert_non_null(strstr(ctx.err.msg, "exclude every other source"));
	gpuenv_buf_free(&b);
	gpuenv_free(&ctx, t);
	gpuenv_free(&ctx, t2);
}

static void test_size_cap(void **state)
{
	(void)state;
	gpuenv_lock_t l;
	assert_int_equal(gpuenv_pylock_parse(&ctx, &arena, "big.toml",
				 gpuenv_str_n("x", GPUENV_PYLOCK_MAX_SIZE + 1), &l),
		GPUENV_ETOOBIG);
}

/* the writer refuses what the reader would, and writes nothing then */
static const char *const write_refusals[] = {
	"lock-version is required", "newer than", "created-by is required", "no hash",
	"64 hexadecimal", "needs a url or a path", "needs the file's name",
	"not a wheel of 'torch'", "date-time with an offset", "negative", "normalized", "PEP 440",
	"PEP 508 marker", "not valid UTF-8", "has no source", "exclude every other source",
	"only a directory can be editable", "version specifier",
};

static void spoil(int i, gpuenv_lock_t *L, gpuenv_lock_package_t *P, gpuenv_lock_file_t *F)
{
	switch (i) {
	case 0: L->lock_version = NULL; break;
	case 1: L->lock_version = "2.0"; break;
	case 2: L->created_by = ""; break;
	case 3: F->sha256 = NULL; break;
	case 4: F->sha256 = "xyz"; break;
	case 5: F->url = NULL; break;
	case 6: F->name = NULL; break;
	case 7: F->name = "numpy-1-py3-none-any.whl"; break;
	case 8: F->upload_time = "2025-08-06"; break;
	case 9: F->size = -5; break;
	case 10: P->name = "Torch"; break;
	case 11: P->version = "two"; break;
	case 12: P->marker = "os_name =="; break;
	case 13: P->index = "http://\xff"; break;
	case 14: P->nwheels = 0; break;
	case 15: P->directory = "."; break;
	case 16: P->editable = true; break;
	case 17: L->requires_python = "~~3"; break;
	}
}

static void test_write_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(write_refusals) / sizeof(write_refusals[0]); i++) {
		gpuenv_lock_t l = sample();
		gpuenv_lock_file_t wf = torch_wheels[0];
		gpuenv_lock_package_t arr[3] = { pkgs[0], pkgs[1], pkgs[2] };
		gpuenv_buf_t b;

		arr[0].wheels = &wf;
		spoil((int)i, &l, &arr[0], &wf);
		l.packages = arr;
		gpuenv_buf_init(&b, &ctx, 0);
		gpuenv_buf_puts(&b, "keep");
		int r = gpuenv_pylock_write(&ctx, &l, &b);
		if (r != GPUENV_EFORMAT && r != GPUENV_EUNSUPPORTED)
			fail_msg("case %zu (%s): %d %s", i, write_refusals[i], r, ctx.err.msg);
		if (!strstr(ctx.err.msg, write_refusals[i]))
			fail_msg("case %zu: '%s' lacks '%s'", i, ctx.err.msg, write_refusals[i]);
		assert_string_equal(b.data, "keep");
		gpuenv_buf_free(&b);
	}
}

/* every allocation failure is -ENOMEM, recorded, and nothing leaks */
static void test_alloc_failures(void **state)
{
	(void)state;
	gpuenv_lock_t l = sample();
	bool wrote = false, parsed = false;

	for (long k = 0; k < 5000 && !(wrote && parsed); k++) {
		gpuenv_ctx_t c;
		gpuenv_arena_t a;
		gpuenv_buf_t b;
		gpuenv_lock_t out;
		testutil_alloc_t t;
		int r1, r2;

		gpuenv_ctx_init(&c);
		testutil_alloc_reset(&t, k, false);
		c.mem = testutil_allocator(&t);
		gpuenv_buf_init(&b, &c, 0);
		r1 = gpuenv_pylock_write(&c, &l, &b);
		assert_true(r1 == 0 || r1 == -ENOMEM);
		if (r1)
			assert_int_equal(c.err.code, -ENOMEM);
		wrote = wrote || r1 == 0;
		gpuenv_buf_free(&b);

		testutil_alloc_reset(&t, k, false);
		gpuenv_arena_init(&a, &c, 0);
		r2 = gpuenv_pylock_parse(&c, &a, "p.toml", gpuenv_str(pep_example), &out);
		assert_true(r2 == 0 || r2 == -ENOMEM);
		if (r2)
			assert_int_equal(c.err.code, -ENOMEM);
		parsed = parsed || r2 == 0;
		gpuenv_arena_free(&a);
	}
	assert_true(wrote && parsed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_deterministic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_tools, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_minor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
