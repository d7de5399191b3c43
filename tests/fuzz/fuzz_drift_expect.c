/* Fuzz target: any bytes as a `gpuenv drift --expect` file (lib/check/drift.c:
 * a schema over the TOML parser, or a facts snapshot through the facts
 * decoder), judged against a fixed H200 node, and the report written as
 * Prometheus text.  Besides the sanitizers, invariants abort() on violation:
 *   - a failure leaves a message naming the file;
 *   - a success names at least one check, each with its text;
 *   - the report has one item per expected check, in check order, each with
 *     expected and actual text, and a reason when it fails;
 *   - the metrics have one gpuenv_drift sample per check and every line is
 *     a # HELP / # TYPE line or a gpuenv_ sample (label values escaped: no
 *     raw line feed splits a sample).
 * Then the same with an allocation failing (fuzz_alloc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/drift.h"
#include "gpuenv/kb.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb; /* loaded once: the harness may keep state, the library does not */

static const gpuenv_target_gpu_t node_gpus[2] = {
	{ "NVIDIA H200", 9, 0, 150754820096LL, true },
	{ "NVIDIA H200", 9, 0, 150754820096LL, true },
};
static const gpuenv_target_lib_t node_libs[2] = { { "cudnn", "9.19.0.56" }, { "nccl", "2.28.9" } };
static const gpuenv_target_t node = {
	.name = "auto", .origin = "probe", .ngpus = 2, .gpus = node_gpus,
	.driver = "580.159.04", .driver_cuda = "13.0", .nlibs = 2, .libs = node_libs,
};

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *c, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_drift_expect_t e;
	gpuenv_drift_report_t r;

	gpuenv_arena_init(&a, c, 0);
	if (OOM_CALL(o, c, gpuenv_drift_expect_parse(c, &a, kb, "expect.toml", (const char *)data, size, &e)) == 0)
		OOM_CALL(o, c, gpuenv_drift_check(c, &a, kb, &e, &node, &r));
	gpuenv_arena_free(&a);
}

static void check_metrics(const gpuenv_drift_report_t *r)
{
	gpuenv_buf_t b;
	size_t samples = 0;

	gpuenv_buf_init(&b, &ctx, 0);
	CHECK(gpuenv_drift_metrics(r, 0.5, &b) == 0 && b.len && b.data[b.len - 1] == '\n');
	for (const char *p = b.data; p < b.data + b.len;) {
		const char *nl = memchr(p, '\n', (size_t)(b.data + b.len - p));
		CHECK(nl);
		CHECK(!strncmp(p, "# HELP gpuenv_", 14) || !strncmp(p, "# TYPE gpuenv_", 14) ||
			!strncmp(p, "gpuenv_", 7));
		samples += !strncmp(p, "gpuenv_drift{", 13);
		p = nl + 1;
	}
	CHECK(samples == r->n);
	gpuenv_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_drift_expect_t e;
	gpuenv_drift_report_t r;

	if (!kb) {
		gpuenv_ctx_init(&ctx);
		if (gpuenv_kb_load(&ctx, NULL, &kb) != 0)
			abort();
	}
	gpuenv_arena_init(&a, &ctx, 0);
	if (gpuenv_drift_expect_parse(&ctx, &a, kb, "expect.toml", (const char *)data, size, &e) != 0) {
		CHECK(ctx.err.msg[0] && !strcmp(ctx.err.file, "expect.toml"));
	} else {
		size_t set = 0;
		CHECK(e.nwant >= 1 && e.nwant <= GPUENV_DRIFT_NCHECKS);
		CHECK(e.from == GPUENV_DRIFT_FROM_TOML || e.from == GPUENV_DRIFT_FROM_SNAPSHOT);
		for (int c = 0; c < GPUENV_DRIFT_NCHECKS; c++)
			if (e.want[c].how != GPUENV_DRIFT_UNSET) {
				CHECK(e.want[c].text);
				set++;
			}
		CHECK(set == e.nwant);
		CHECK(gpuenv_drift_check(&ctx, &a, kb, &e, &node, &r) == 0);
		CHECK(r.n == set && r.nfailed <= r.n);
		for (size_t i = 0; i < r.n; i++) {
			CHECK(r.items[i].expected && r.items[i].actual);
			CHECK(r.items[i].holds || r.items[i].why);
			CHECK(i == 0 || r.items[i - 1].check < r.items[i].check);
		}
		check_metrics(&r);
	}
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
