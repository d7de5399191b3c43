/* Fuzz target: the text the GPU probe reads from the machine.  The input
 * goes through every parser (it is cheap): PCI bus ids, the NVRM line of
 * /proc/driver/nvidia/version, "Key: value" files, /etc/nv_tegra_release,
 * /proc/device-tree/compatible, and CUDA_VISIBLE_DEVICES against a fixed
 * set of GPUs and MIG devices. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/hw.h"

#include "fuzz_alloc.h"

static void fake_gpus(gpuenv_arena_t *a, gpuenv_hw_facts_t *f)
{
	static const char *const uuids[] = {
		"GPU-11111111-2222-3333-4444-555555555501",
		"GPU-11111111-2222-3333-4444-555555555502",
		"GPU-aaaaaaaa-0000-0000-0000-000000000001",
	};
	f->gpus = gpuenv_arena_calloc(a, 3, sizeof(*f->gpus));
	if (!f->gpus)
		return;
	f->n_gpus = 3;
	f->nvml.state = GPUENV_HW_LIB_OK;
	f->nvml.device_count = 3;
	for (int i = 0; i < 3; i++) {
		gpuenv_hw_gpu_t *g = &f->gpus[i];
		g->index = i;
		g->uuid = uuids[i];
		g->name = i == 1 ? "Tesla T4" : "NVIDIA A100";
		g->cc_major = g->cc_minor = -1;
		g->mig_current = i == 2;
	}
	gpuenv_hw_mig_t *m = gpuenv_arena_calloc(a, 2, sizeof(*m));
	if (!m)
		return;
	m[0].uuid = "MIG-aaaaaaaa-1111-0000-0000-000000000001";
	m[0].gi_id = 1;
	m[0].ci_id = 0;
	m[1].uuid = "MIG-aaaaaaaa-1111-0000-0000-000000000002";
	m[1].gi_id = 5;
	m[1].ci_id = 0;
	f->gpus[2].mig = m;
	f->gpus[2].n_mig = 2;
}

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_hw_facts_t *f;
	char *cstr = malloc(size + 1);

	if (!cstr)
		return;
	memcpy(cstr, data, size);
	cstr[size] = '\0';
	gpuenv_arena_init(&arena, ctx, 0);
	if ((f = gpuenv_hw_facts_new(&arena))) {
		fake_gpus(&arena, f);
		if (f->n_gpus)
			OOM_CALL(o, ctx, gpuenv_hw_apply_visible(&arena, f, cstr, size & 1 ? "PCI_BUS_ID" : NULL));
	}
	gpuenv_arena_free(&arena);
	free(cstr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_hw_busid_t id;
	gpuenv_hw_nvrm_t v;
	gpuenv_hw_facts_t *f;
	char out[64], *copy, *cstr;
	gpuenv_str_t s;

	if (size > 65536)
		return 0;
	/* an exact-size copy, so reading past the end is caught */
	copy = malloc(size ? size : 1);
	cstr = malloc(size + 1);
	if (!copy || !cstr) {
		free(copy);
		free(cstr);
		return 0;
	}
	memcpy(copy, data, size);
	memcpy(cstr, data, size);
	cstr[size] = '\0';
	s = gpuenv_str_n(copy, size);

	if (gpuenv_hw_parse_bus_id(s, &id))
		gpuenv_hw_bus_id_str(&id, out, sizeof(out));
	gpuenv_hw_parse_nvrm(s, &v);
	gpuenv_hw_text_field(s, "Model");
	gpuenv_hw_text_field(s, "MemTotal");
	gpuenv_hw_parse_l4t(s, out, sizeof(out));
	gpuenv_hw_parse_tegra_soc(s);

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	if ((f = gpuenv_hw_facts_new(&arena))) {
		fake_gpus(&arena, f);
		if (f->n_gpus)
			gpuenv_hw_apply_visible(&arena, f, cstr, size & 1 ? "PCI_BUS_ID" : NULL);
	}
	gpuenv_arena_free(&arena);
	free(copy);
	free(cstr);
	fuzz_oom(data, size, oom_run);
	return 0;
}
