/* The real dist-info corpus: every folder under $GPUENV_SHARED/corpus/
 * {h200-env,local-env} must load (METADATA, WHEEL, RECORD, entry_points.txt)
 * without an error or a warning, with spot checks on torch 2.11.0 and a
 * RECORD entry.  Prints how long the parsing took (files already read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/core.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/metadata.h"

static unsigned nwarn;

static void count_warnings(void *ud, int level, const char *msg)
{
	(void)ud;
	if (level <= GPUENV_LOG_WARN) {
		nwarn++;
		fprintf(stderr, "warning: %s\n", msg);
	}
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folders' file contents, read once so the timing is parsing alone. */
struct dist {
	char *dir;
	gpuenv_buf_t files[4]; /* METADATA, WHEEL, RECORD, entry_points.txt */
	bool has[4];
};

static const char *const fnames[4] = { "METADATA", "WHEEL", "RECORD", "entry_points.txt" };

static size_t list_dists(gpuenv_ctx_t *ctx, const char *shared, struct dist **out)
{
	static const char *const envs[] = { "h200-env", "local-env" };
	size_t n = 0, cap = 512;
	struct dist *d = calloc(cap, sizeof(*d));

	for (size_t e = 0; e < 2; e++) {
		char base[1024];
		char *names[1024];
		size_t nn = 0;
		snprintf(base, sizeof(base), "%s/corpus/%s", shared, envs[e]);
		DIR *dp = opendir(base);
		assert_non_null(dp);
		struct dirent *de;
		while ((de = readdir(dp)) != NULL && nn < 1024) {
			size_t l = strlen(de->d_name);
			if (l > 10 && strcmp(de->d_name + l - 10, ".dist-info") == 0)
				names[nn++] = strdup(de->d_name);
		}
		closedir(dp);
		qsort(names, nn, sizeof(*names), cmp_cstr);
		for (size_t i = 0; i < nn; i++) {
			assert_true(n < cap);
			struct dist *x = &d[n++];
			size_t l = strlen(base) + strlen(names[i]) + 2;
			x->dir = malloc(l);
			snprintf(x->dir, l, "%s/%s", base, names[i]);
			free(names[i]);
			for (int f = 0; f < 4; f++) {
				char p[2048];
				snprintf(p, sizeof(p), "%s/%s", x->dir, fnames[f]);
				gpuenv_buf_init(&x->files[f], ctx, 0);
				x->has[f] = gpuenv_fs_read(ctx, p, GPUENV_RECORD_MAX, &x->files[f]) == 0;
				gpuenv_error_clear(ctx);
			}
		}
	}
	*out = d;
	return n;
}

static double now(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static gpuenv_str_t text_of(const gpuenv_buf_t *b)
{
	return gpuenv_str_n(b->data ? b->data : "", b->len);
}

static bool marker_true(gpuenv_ctx_t *ctx, const gpuenv_md_requirement_t *q, const char *system,
	const char *extra)
{
	gpuenv_marker_env_t env = { 0 };
	bool res = false;

	env.platform_system = system;
	env.sys_platform = strcmp(system, "Linux") == 0 ? "linux" : "win32";
	env.os_name = strcmp(system, "Linux") == 0 ? "posix" : "nt";
	env.platform_machine = "x86_64";
	env.python_version = "3.12";
	env.python_full_version = "3.12.3";
	env.implementation_name = "cpython";
	env.platform_python_implementation = "CPython";
	env.extra = extra;
	if (!q->req.marker)
		return true;
	if (gpuenv_marker_eval(ctx, q->req.marker, &env, &res))
		fail_msg("marker of '%.*s': %s", (int)q->text.len, q->text.ptr, ctx->err.msg);
	return res;
}

static bool contains(gpuenv_str_t s, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= s.len; i++)
		if (memcmp(s.ptr + i, needle, n) == 0)
			return true;
	return false;
}

static void torch_checks(gpuenv_ctx_t *ctx, const gpuenv_metadata_t *md)
{
	size_t nvidia = 0, nlinux = 0, nunconditional = 0;
	bool opt_einsum = false, optree = false;
	gpuenv_version_t v311, v310;
	gpuenv_arena_t a;

	assert_true(gpuenv_str_eq_cstr(md->version_text, "2.11.0"));
	assert_int_equal(md->nrequires_dist, 17);
	for (size_t i = 0; i < md->nrequires_dist; i++) {
		const gpuenv_md_requirement_t *q = &md->requires_dist[i];
		assert_true(q->valid);
		bool on_linux = marker_true(ctx, q, "Linux", NULL);
		bool on_windows = marker_true(ctx, q, "Windows", NULL);
		if (gpuenv_str_startswith(q->req.name, "nvidia-")) {
			nvidia++;
			/* nvidia pins: exactly one == clause, Linux only */
			assert_int_equal(q->req.spec.n, 1);
			assert_int_equal(q->req.spec.items[0].op, GPUENV_OP_EQ);
			assert_true(on_linux);
			assert_false(on_windows);
			assert_true(contains(q->text, "platform_system == \"Linux\""));
		}
		if (on_linux && !on_windows)
			nlinux++;
		if (on_linux && on_windows)
			nunconditional++;
		if (gpuenv_str_eq_cstr(q->req.name, "opt-einsum")) {
			opt_einsum = true;
			assert_false(on_linux); /* only with the extra */
			assert_true(marker_true(ctx, q, "Linux", "opt-einsum"));
			assert_false(marker_true(ctx, q, "Linux", "optree"));
		}
		if (gpuenv_str_eq_cstr(q->req.name, "optree")) {
			optree = true;
			assert_true(marker_true(ctx, q, "Windows", "optree"));
		}
		if (gpuenv_str_eq_cstr(q->req.name, "cuda-toolkit")) {
			assert_int_equal(q->req.nextras, 11);
			assert_true(gpuenv_str_eq_cstr(q->req.extras[0], "cublas"));
		}
	}
	assert_int_equal(nvidia, 4);
	assert_int_equal(nlinux, 7);
	assert_int_equal(nunconditional, 7);
	assert_true(opt_einsum && optree);
	assert_int_equal(md->provides_extra.n, 3);

	/* Requires-Python: >=3.10 */
	assert_true(md->requires_python_valid);
	gpuenv_arena_init(&a, ctx, 0);
	assert_int_equal(gpuenv_version_parse(ctx, &a, gpuenv_str("3.11"), &v311), 0);
	assert_int_equal(gpuenv_version_parse(ctx, &a, gpuenv_str("3.9"), &v310), 0);
	assert_true(gpuenv_specset_contains(&md->requires_python, gpuenv_str("3.11"), &v311,
		GPUENV_PRERELEASES_DEFAULT));
	assert_false(gpuenv_specset_contains(&md->requires_python, gpuenv_str("3.9"), &v310,
		GPUENV_PRERELEASES_DEFAULT));
	gpuenv_arena_free(&a);
}

static void test_corpus(void **state)
{
	(void)state;
	const char *shared = getenv("GPUENV_SHARED");
	gpuenv_ctx_t ctx;
	struct dist *d;
	size_t n, counts[4] = { 0 }, rows = 0, eps = 0, reqs = 0, bytes = 0;
	bool saw_torch = false, saw_record_check = false;

	if (!shared)
		skip();
	gpuenv_ctx_init(&ctx);
	ctx.log = count_warnings;
	ctx.verbosity = GPUENV_LOG_WARN;
	n = list_dists(&ctx, shared, &d);
	assert_int_equal(n, 291);

	gpuenv_arena_t arena;
	gpuenv_arena_init(&arena, &ctx, 0);
	double best = 1e9, best_cpu = 1e9;
	for (int round = 0; round < 10; round++) {
		double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		for (size_t i = 0; i < n; i++) {
			gpuenv_metadata_t md;
			gpuenv_wheelfile_t wf;
			gpuenv_record_t rec;
			gpuenv_entry_points_t ep;
			char p[2048];
			int r;

			assert_true(d[i].has[0]);
			snprintf(p, sizeof(p), "%s/METADATA", d[i].dir);
			r = gpuenv_metadata_parse(&ctx, &arena, p, text_of(&d[i].files[0]), 0, &md);
			if (r)
				fail_msg("%s:%u: %s", p, ctx.err.line, ctx.err.msg);
			if (d[i].has[1]) {
				snprintf(p, sizeof(p), "%s/WHEEL", d[i].dir);
				r = gpuenv_wheelfile_parse(&ctx, &arena, p, text_of(&d[i].files[1]), &wf);
				if (r)
					fail_msg("%s:%u: %s", p, ctx.err.line, ctx.err.msg);
			}
			if (d[i].has[2]) {
				snprintf(p, sizeof(p), "%s/RECORD", d[i].dir);
				r = gpuenv_record_parse(&ctx, &arena, p, text_of(&d[i].files[2]), &rec);
				if (r)
					fail_msg("%s:%u: %s", p, ctx.err.line, ctx.err.msg);
			}
			if (d[i].has[3]) {
				snprintf(p, sizeof(p), "%s/entry_points.txt", d[i].dir);
				r = gpuenv_entry_points_parse(&ctx, &arena, p, text_of(&d[i].files[3]), &ep);
				if (r)
					fail_msg("%s:%u: %s", p, ctx.err.line, ctx.err.msg);
			}
			if (round > 0)
				continue;
			/* checks and counts, first round only */
			for (int f = 0; f < 4; f++) {
				counts[f] += d[i].has[f];
				bytes += d[i].has[f] ? d[i].files[f].len : 0;
			}
			reqs += md.nrequires_dist;
			if (d[i].has[2])
				rows += rec.n;
			if (d[i].has[3])
				eps += ep.n;
			if (d[i].has[1])
				assert_true(wf.ntags >= 1);
			if (strstr(d[i].dir, "/h200-env/torch-2.11.0.dist-info")) {
				saw_torch = true;
				torch_checks(&ctx, &md);
				assert_true(d[i].has[1] && !wf.root_is_purelib);
				assert_int_equal(wf.ntags, 1);
				assert_true(gpuenv_str_eq_cstr(wf.tags[0].platform, "manylinux_2_28_x86_64"));
				assert_true(d[i].has[3] && ep.n == 3);
				assert_true(gpuenv_str_eq_cstr(ep.items[1].name, "torchrun"));
				assert_true(gpuenv_str_eq_cstr(ep.items[1].module, "torch.distributed.run"));
			}
			if (strstr(d[i].dir, "/local-env/boto3-") && d[i].has[2]) {
				/* boto3-1.43.11.dist-info/INSTALLER,sha256=zuuue4kn...,4: "pip\n" */
				unsigned char want[GPUENV_SHA256_LEN];
				const gpuenv_record_entry_t *e = NULL;
				for (size_t k = 0; k < rec.n && !e; k++)
					if (gpuenv_str_endswith(rec.entries[k].path, ".dist-info/INSTALLER"))
						e = &rec.entries[k];
				assert_non_null(e);
				assert_true(gpuenv_str_eq_cstr(e->hash_algo, "sha256"));
				assert_true(e->has_size && e->size == 4);
				assert_int_equal(gpuenv_sha256("pip\n", 4, want), 0);
				assert_int_equal(e->digest_len, 32);
				assert_memory_equal(e->digest, want, 32);
				const gpuenv_record_entry_t *self = NULL;
				for (size_t k = 0; k < rec.n && !self; k++)
					if (gpuenv_str_endswith(rec.entries[k].path, ".dist-info/RECORD"))
						self = &rec.entries[k];
				assert_non_null(self);
				assert_false(self->has_size);
				assert_int_equal(self->hash_algo.len, 0);
				saw_record_check = true;
			}
		}
		double dt = now(CLOCK_MONOTONIC) - t0, dc = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (dt < best)
			best = dt;
		if (dc < best_cpu)
			best_cpu = dc;
		gpuenv_arena_free(&arena);
		gpuenv_arena_init(&arena, &ctx, 0);
	}
	gpuenv_arena_free(&arena);
	assert_true(saw_torch);
	assert_true(saw_record_check);
	assert_int_equal(nwarn, 0);
	printf("corpus: %zu dist-info folders: %zu METADATA (%zu Requires-Dist), %zu WHEEL, "
	       "%zu RECORD (%zu rows), %zu entry_points.txt (%zu entry points); %.1f MB\n",
		n, counts[0], reqs, counts[1], counts[2], rows, counts[3], eps, (double)bytes / 1e6);
	printf("corpus: parse time of all four files in every folder, files in memory, best of "
	       "10 rounds: %.2f ms wall, %.2f ms CPU\n", best * 1e3, best_cpu * 1e3);
	for (size_t i = 0; i < n; i++) {
		free(d[i].dir);
		for (int f = 0; f < 4; f++)
			gpuenv_buf_free(&d[i].files[f]);
	}
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
