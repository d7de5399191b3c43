/* Unit tests for diagnose's scanning (lib/check/diagnose.c): a regex that
 * starts with a run of a class ("[A-Za-z0-9_.-]+\.so: ...") is run anchored
 * to the start of that run, which must find exactly what plain regexec
 * finds (the match and every group) and take time linear in the line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/diagnose.h"
#include "gpuenv/fs.h"
#include "gpuenv/kb.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;

/* A knowledge base of one signature: regex re, cause "[{1}][{2}][{3}]". */
static gpuenv_diag_t *one_signature(const char *re, bool icase, gpuenv_kb_t **kb)
{
	char toml[4096];
	gpuenv_kb_source_t s = { "diagnose.toml", toml, 0, NULL };
	gpuenv_diag_t *d;

	snprintf(toml, sizeof(toml),
		"[[signature]]\nid = \"t\"\ntitle = \"t\"\nregex = ['%s']\n%s"
		"cause = \"[{1}][{2}][{3}]\"\nfix = \"f\"\nsource = \"s\"\n",
		re, icase ? "ignore_case = true\n" : "");
	s.len = strlen(toml);
	if (gpuenv_kb_load_sources(&ctx, &s, 1, GPUENV_KB_FILE(GPUENV_KB_DIAGNOSE), kb))
		fail_msg("%s: %s", re, ctx.err.msg);
	if (gpuenv_diag_new(&ctx, *kb, &d))
		fail_msg("%s: %s", re, ctx.err.msg);
	return d;
}

/* What POSIX regexec says of re on line: "-" or "MATCH|[g1][g2][g3]" with
 * "?" for a group that is unset or not in the pattern. */
static void expected(const regex_t *r, const char *line, char *out, size_t cap)
{
	regmatch_t m[10];
	size_t n = 0;

	if (regexec(r, line, 10, m, 0) != 0) {
		snprintf(out, cap, "-");
		return;
	}
	n += (size_t)snprintf(out + n, cap - n, "%.*s|", (int)(m[0].rm_eo - m[0].rm_so), line + m[0].rm_so);
	for (size_t g = 1; g <= 3; g++) {
		if (g <= r->re_nsub && m[g].rm_so >= 0)
			n += (size_t)snprintf(out + n, cap - n, "[%.*s]", (int)(m[g].rm_eo - m[g].rm_so),
				line + m[g].rm_so);
		else
			n += (size_t)snprintf(out + n, cap - n, "[?]");
	}
}

static void scanned(gpuenv_diag_t *d, const char *line, char *out, size_t cap)
{
	gpuenv_arena_t a;
	gpuenv_diag_result_t res;

	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_diag_scan(d, line, strlen(line), NULL, &a, &res), 0);
	if (!res.n)
		snprintf(out, cap, "-");
	else
		snprintf(out, cap, "%.*s|%s", GPUENV_STR_ARG(res.hits[0].match), res.hits[0].cause);
	gpuenv_arena_free(&a);
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Random lines from pieces that these patterns care about: every pattern,
 * anchored or not, gives what regexec gives. */
static void test_anchored_same_matches(void **state)
{
	static const struct {
		const char *re;
		bool icase;
	} pats[] = {
		{ "([A-Za-z0-9_.-]+\\.so): undefined symbol: (_ZN(3c10|2at|5torch)[A-Za-z0-9_]*)", false },
		{ "[a-z]+\\.so", false },
		{ "[a-z]*x", false },
		{ "([a-z]+)(\\.so)+", false },
		{ "[^:]+: b", false },
		{ "[^ ]* b", false },
		{ ".*so", false },
		{ ".+x", false },
		{ "[]a]+b", false },
		{ "[^]a]+b", false },
		{ "[[:alpha:]]+[.]so", false },
		{ "([a-z]+|x)y", false },   /* alternation around the run: not anchored */
		{ "([a-z]+x)?so", false },  /* an optional group around it: not anchored */
		{ "[a-z]+x|so", false },    /* alternation at the top */
		{ "(([a-z]+)\\.)+so", false },
		{ "[a-z]+(x|so)", false },
		{ "([a-z]+(x|s)o)", false },
		{ "[a-z]+\\.SO", true },
		{ "[-a-z]+:", false },
		{ "[a-z]+ *[.]so", false },
		{ "([a-z])+\\1", false },   /* a back-reference: not anchored */
	};
	static const char *const pieces[] = { "a", "b", "x", "y", "so", ".so", ".", ":", " ", "-",
		"]", "A", "SO", ": undefined symbol: ", "_ZN3c10", "_ZN2at", "lib", "_", "1", "ab" };
	uint32_t seed = 0x9e3779b9u;
	size_t matched = 0;

	(void)state;
	for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
		gpuenv_kb_t *kb;
		gpuenv_diag_t *d = one_signature(pats[p].re, pats[p].icase, &kb);
		regex_t r;
		assert_int_equal(regcomp(&r, pats[p].re, REG_EXTENDED | (pats[p].icase ? REG_ICASE : 0)), 0);
		for (int k = 0; k < 3000; k++) {
			char line[512], want[1024], got[1024];
			size_t n = 0, np = 1 + rnd(&seed) % 12;
			for (size_t i = 0; i < np; i++) {
				const char *pc = pieces[rnd(&seed) % (sizeof(pieces) / sizeof(pieces[0]))];
				n += (size_t)snprintf(line + n, sizeof(line) - n, "%s", pc);
			}
			expected(&r, line, want, sizeof(want));
			scanned(d, line, got, sizeof(got));
			if (strcmp(want, got))
				fail_msg("%s on '%s': regexec %s, diagnose %s", pats[p].re, line, want, got);
			matched += want[0] != '-';
		}
		regfree(&r);
		gpuenv_diag_free(d);
		gpuenv_kb_free(kb);
	}
	/* the lines exercised the patterns, not only their failures */
	assert_true(matched > 10000);
}

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Best of three scans of nlines lines, each a run of len letters then tail. */
static double scan_time(gpuenv_diag_t *d, size_t nlines, size_t len, const char *tail)
{
	size_t tl = strlen(tail), ll = len + tl + 1;
	char *log = malloc(nlines * ll);
	double best = 1e9;

	assert_non_null(log);
	for (size_t i = 0; i < nlines; i++) {
		memset(log + i * ll, 'a', len);
		memcpy(log + i * ll + len, tail, tl);
		log[i * ll + ll - 1] = '\n';
	}
	for (int rep = 0; rep < 3; rep++) {
		gpuenv_arena_t a;
		gpuenv_diag_result_t res;
		double t0 = seconds();
		gpuenv_arena_init(&a, &ctx, 0);
		assert_int_equal(gpuenv_diag_scan(d, log, nlines * ll, NULL, &a, &res), 0);
		assert_int_equal(res.n, 0); /* the needle is there, the regex fails */
		gpuenv_arena_free(&a);
		if (seconds() - t0 < best)
			best = seconds() - t0;
	}
	free(log);
	return best;
}

/* 20 lines of 8 KB took 13 s (quadratic: regexec retried the leading run
 * from each of its positions); now lines 8x longer take about 8x the time,
 * not 64x, and 50 lines of 8 KB well under a second (sanitizer build). */
static void test_scan_linear(void **state)
{
	gpuenv_kb_t *kb, *own;
	gpuenv_diag_t *d, *d2;

	(void)state;
	assert_int_equal(gpuenv_kb_load_files(&ctx, NULL, GPUENV_KB_ALL, &kb), 0);
	assert_int_equal(gpuenv_diag_new(&ctx, kb, &d), 0);
	d2 = one_signature("[^:]*[0-9]: nope", false, &own);
	for (int which = 0; which < 2; which++) {
		gpuenv_diag_t *dd = which ? d2 : d;
		const char *tail = which ? ": nope" : ": undefined symbol: x";
		double t1 = scan_time(dd, 50, 1000, tail), t8 = scan_time(dd, 50, 8000, tail);
		printf("%s: 50 lines of 1000 bytes %.4f s, of 8000 bytes %.4f s (x%.1f)\n",
			which ? "[^:]*[0-9]: nope" : "the knowledge base", t1, t8, t8 / t1);
		if (t8 > 1.0)
			fail_msg("50 lines of 8000 bytes: %.3f s", t8);
		/* linear: 8; quadratic: 64 (10 s before); a busy machine makes the
		 * short run noisy, so the ratio counts only past 0.3 s */
		if (t8 > 30 * t1 && t8 > 0.3)
			fail_msg("8x longer lines took %.1fx the time (%.4f s, %.4f s)", t8 / t1, t1, t8);
	}
	gpuenv_diag_free(d2);
	gpuenv_kb_free(own);
	gpuenv_diag_free(d);
	gpuenv_kb_free(kb);
}

/* The findings as text, to compare two scans. */
static void render(const gpuenv_diag_result_t *res, gpuenv_buf_t *out)
{
	for (size_t i = 0; i < res->n; i++) {
		const gpuenv_diag_hit_t *h = &res->hits[i];
		assert_int_equal(gpuenv_buf_printf(out, "%.*s:%llu:%llu|%.*s|%.*s|%s|%s|%d\n",
			GPUENV_STR_ARG(h->sig->id), (unsigned long long)h->line,
			(unsigned long long)h->count, GPUENV_STR_ARG(h->match), GPUENV_STR_ARG(h->text),
			h->cause, h->fix, h->concrete), 0);
	}
}

/* Out of memory at each allocation of diagnose, one at a time: reported as
 * such (-ENOMEM, "out of memory" in ctx->err), never a crash, and never a
 * half answer (a scan that succeeds gives exactly the findings of a scan
 * without failures, concrete fixes included). */
static void test_alloc_failures(void **state)
{
	static const char *const cub[] = { "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90" };
	const char *src = getenv("GPUENV_SRC");
	char path[4096];
	gpuenv_buf_t log, want, got;
	gpuenv_kb_t *kb;
	gpuenv_diag_facts_t f;
	long n, reported = 0;
	bool done = false;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/fixtures/logs/mixed-rtx5090.log", src ? src : ".");
	gpuenv_buf_init(&log, &ctx, 0);
	gpuenv_buf_init(&want, &ctx, 0);
	gpuenv_buf_init(&got, &ctx, 0);
	assert_int_equal(gpuenv_fs_read(&ctx, path, 1 << 20, &log), 0);
	assert_int_equal(gpuenv_kb_load(&ctx, NULL, &kb), 0);
	memset(&f, 0, sizeof(f));
	f.gpu = "NVIDIA GeForce RTX 5090";
	f.cc_major = 12;
	f.cc_minor = 0;
	f.gpu_count = 1;
	f.gpu_mem = 34190917632ULL;
	f.driver = "570.133.07";
	f.torch = "2.5.1+cu124";
	f.torch_code = true;
	f.torch_cubins = cub;
	f.n_torch_cubins = sizeof(cub) / sizeof(cub[0]);
	for (n = -1; !done; n++) {
		testutil_alloc_t t = { .fail_at = n < 0 ? TESTUTIL_NEVER : n, .only_one = true };
		gpuenv_ctx_t c;
		gpuenv_diag_t *d = NULL;
		gpuenv_arena_t a;
		gpuenv_diag_result_t res;
		int r;

		gpuenv_ctx_init(&c);
		c.mem = testutil_allocator(&t);
		gpuenv_arena_init(&a, &c, 0);
		r = gpuenv_diag_new(&c, kb, &d);
		if (r == 0)
			r = gpuenv_diag_scan(d, log.data, log.len, &f, &a, &res);
		if (r) {
			if (r != -ENOMEM || c.err.code != -ENOMEM || !strstr(c.err.msg, "out of memory"))
				fail_msg("allocation %ld: %d, ctx->err %d '%s'", n, r, c.err.code, c.err.msg);
			assert_true(t.failures > 0);
			reported++;
		} else {
			gpuenv_buf_t *out = n < 0 ? &want : &got;
			gpuenv_buf_reset(out);
			render(&res, out);
			if (n >= 0 && (got.len != want.len || memcmp(got.data, want.data, want.len)))
				fail_msg("allocation %ld failed unreported: the findings differ\n%s---\n%s", n,
					got.data, want.data);
			assert_true(n >= 0 || res.n >= 2); /* the log shows two failures */
			done = n >= 0 && !t.failures; /* past the last allocation */
		}
		gpuenv_diag_free(d);
		gpuenv_arena_free(&a);
		assert_true(n < 100000);
	}
	printf("diagnose: %ld allocations, each failure reported or harmless (%ld reported)\n", n - 1,
		reported);
	assert_true(reported > 0);
	gpuenv_kb_free(kb);
	gpuenv_buf_free(&log);
	gpuenv_buf_free(&want);
	gpuenv_buf_free(&got);
}

/* `after` and `within`: the row claims an exception line only when one of
 * its literals lies on that line or at most `within` lines above it; a
 * within without after, or one out of range, is refused at load. */
static int after_scan(const char *rows, const char *log, size_t *n)
{
	char toml[1024];
	gpuenv_kb_source_t s = { "diagnose.toml", toml, 0, NULL };
	gpuenv_kb_t *kb;
	gpuenv_diag_t *d;
	gpuenv_arena_t a;
	gpuenv_diag_result_t res;
	int r;

	snprintf(toml, sizeof(toml),
		"[[signature]]\nid = \"t\"\ntitle = \"t\"\nliteral = [\"NoPermission\"]\n%s"
		"cause = \"c\"\nfix = \"f\"\nsource = \"s\"\n",
		rows);
	s.len = strlen(toml);
	if (gpuenv_kb_load_sources(&ctx, &s, 1, GPUENV_KB_FILE(GPUENV_KB_DIAGNOSE), &kb))
		fail_msg("%s: %s", rows, ctx.err.msg);
	r = gpuenv_diag_new(&ctx, kb, &d);
	if (!r) {
		gpuenv_arena_init(&a, &ctx, 0);
		assert_int_equal(gpuenv_diag_scan(d, log, strlen(log), NULL, &a, &res), 0);
		*n = res.n ? (size_t)res.hits[0].line : 0;
		gpuenv_arena_free(&a);
		gpuenv_diag_free(d);
	}
	gpuenv_kb_free(kb);
	return r;
}

static void test_after_within(void **state)
{
	const char *log = "x NoPermission\n"		  /* 1: no frame above */
			  "  in nvmlDeviceGetMemoryInfo\n" /* 2 */
			  "a\n\nb\n"		  /* 3..5 */
			  "E: NoPermission\n";		  /* 6: 4 lines below the frame */
	size_t line = 99;

	(void)state;
	assert_int_equal(after_scan("after = [\"GetMemoryInfo\"]\n", log, &line), 0);
	assert_int_equal(line, 6); /* line 1 is not claimed: nothing above it */
	assert_int_equal(after_scan("after = [\"GetMemoryInfo\"]\nwithin = 4\n", log, &line), 0);
	assert_int_equal(line, 6);
	assert_int_equal(after_scan("after = [\"GetMemoryInfo\"]\nwithin = 3\n", log, &line), 0);
	assert_int_equal(line, 0); /* 4 lines above is too far */
	assert_int_equal(after_scan("after = [\"Other\"]\n", log, &line), 0);
	assert_int_equal(line, 0);
	assert_int_equal(after_scan("", log, &line), 0);
	assert_int_equal(line, 1); /* without after, every line */
	assert_int_equal(after_scan("within = 3\n", log, &line), GPUENV_EFORMAT);
	assert_int_equal(after_scan("after = [\"x\"]\nwithin = 17\n", log, &line), GPUENV_EFORMAT);
	assert_int_equal(after_scan("after = [\"\"]\n", log, &line), GPUENV_EFORMAT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anchored_same_matches),
		cmocka_unit_test(test_scan_linear),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_after_within),
	};

	gpuenv_ctx_init(&ctx);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
