/* Fuzz the knowledge-base loader: the first byte picks which KB file the rest
 * replaces; a file that loads is then asked the queries the verbs ask. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuenv/kb.h"

#include "fuzz_alloc.h"

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_kb_t *kb = NULL;
	gpuenv_kb_source_t src = { gpuenv_kb_file_name(data[0] % GPUENV_KB_NFILES), data + 1, size - 1,
		"fuzz.toml" };

	if (OOM_CALL(o, ctx, gpuenv_kb_load_sources(ctx, &src, 1, 0, &kb)) == 0)
		gpuenv_kb_free(kb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_kb_t *kb = NULL;
	gpuenv_kb_source_t src;
	gpuenv_arena_t a;
	gpuenv_kb_target_t t;
	gpuenv_kb_gpu_match_t m[4];
	const gpuenv_kb_container_t *c[4];
	gpuenv_kb_driver_max_t mx;
	gpuenv_kb_table_info_t ti[64];

	if (size < 1 || size > (1 << 20))
		return 0;
	gpuenv_ctx_init(&ctx);
	src.name = gpuenv_kb_file_name(data[0] % GPUENV_KB_NFILES);
	src.data = data + 1;
	src.len = size - 1;
	src.origin = "fuzz.toml";
	/* that file alone: the others would only slow the fuzzer down */
	if (gpuenv_kb_load_sources(&ctx, &src, 1, 0, &kb))
		return 0;
	gpuenv_kb_tables(kb, ti, 64);
	gpuenv_kb_gpu_find(kb, "RTX 5090", m, 4);
	gpuenv_kb_gpu_find(kb, "0x2335", m, 4);
	gpuenv_kb_gpu_lookup(kb, "H1000", &m[0]);
	gpuenv_kb_image_find(kb, "nvcr.io/nvidia/pytorch:24.05-py3", c, 4);
	memset(&t, 0, sizeof(t));
	gpuenv_kb_ver_parse(gpuenv_str("535.104.05"), &t.driver);
	t.has_driver = true;
	t.has_cc = true;
	t.cc_major = 12;
	gpuenv_kb_driver_max_cuda(kb, &t.driver, &mx);
	gpuenv_arena_init(&a, &ctx, 0);
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		gpuenv_kb_torch_verdict_t vd;
		gpuenv_kb_torch_check(kb, &t, &kb->torch_variant[i], &a, &vd);
	}
	gpuenv_arena_free(&a);
	gpuenv_kb_free(kb);
	fuzz_oom(data, size, oom_run);
	return 0;
}
