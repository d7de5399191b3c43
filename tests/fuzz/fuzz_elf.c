/* Fuzz the ELF and fatbin readers from a memory buffer: the input is read as
 * an ELF file (sections, fatbin sections, dynamic section and symbol
 * versions) and, whatever it is, as a bare fatbin; every listing the CLI
 * prints is produced from the result. */
#include <stddef.h>
#include <stdint.h>

#include "gpuenv/core.h"
#include "gpuenv/elf.h"
#include "gpuenv/fatbin.h"

#include "fuzz_alloc.h"

static void use_fatbin(gpuenv_ctx_t *ctx, const gpuenv_fatbin_t *fb)
{
	static const unsigned ccs[] = { 50, 75, 80, 86, 90, 100, 103, 120, 121, 255 };
	gpuenv_fatbin_arch_t archs[4];
	gpuenv_buf_t out;
	char name[32];

	gpuenv_buf_init(&out, ctx, (size_t)1 << 22);
	gpuenv_fatbin_list_cuobjdump(fb, "dir/libfuzz.so.1", GPUENV_FATBIN_CUBIN, &out);
	gpuenv_fatbin_list_cuobjdump(fb, "dir/libfuzz.so.1", GPUENV_FATBIN_PTX, &out);
	gpuenv_fatbin_summary(fb, &out);
	gpuenv_fatbin_archs(fb, GPUENV_FATBIN_CUBIN, archs, 4);
	for (size_t i = 0; i < fb->n && i < 16; i++)
		gpuenv_fatbin_arch_name(&fb->entries[i], "compute_", name, sizeof(name));
	for (size_t i = 0; i < sizeof(ccs) / sizeof(ccs[0]); i++)
		gpuenv_fatbin_runs_on(fb, ccs[i]);
	gpuenv_buf_free(&out);
}

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_elf_t elf;
	gpuenv_fatbin_t fb;

	if (OOM_CALL(o, ctx, gpuenv_elf_parse(ctx, "fuzz.so", data, size, &elf)) == 0) {
		gpuenv_arena_t arena;
		gpuenv_elf_dynamic_t dyn;
		gpuenv_fatbin_init(&fb, ctx);
		OOM_CALL(o, ctx, gpuenv_fatbin_read_elf(&fb, &elf));
		gpuenv_fatbin_free(&fb);
		gpuenv_arena_init(&arena, ctx, (size_t)1 << 24);
		OOM_CALL(o, ctx, gpuenv_elf_dynamic(ctx, &elf, &arena, &dyn));
		gpuenv_arena_free(&arena);
		gpuenv_elf_close(&elf);
	}
	gpuenv_fatbin_init(&fb, ctx);
	OOM_CALL(o, ctx, gpuenv_fatbin_parse(&fb, "fuzz.fatbin", ".nv_fatbin", data, size, 4096));
	gpuenv_fatbin_free(&fb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_elf_t elf;
	gpuenv_fatbin_t fb;

	gpuenv_ctx_init(&ctx);
	if (gpuenv_elf_parse(&ctx, "fuzz.so", data, size, &elf) == 0) {
		gpuenv_arena_t arena;
		gpuenv_elf_dynamic_t dyn;
		size_t total = 0;

		for (size_t i = 0; i < elf.nsections; i++)
			total += gpuenv_elf_section_data(&elf, &elf.sections[i]).len;
		(void)total;
		gpuenv_elf_section(&elf, ".nv_fatbin");
		gpuenv_fatbin_init(&fb, &ctx);
		gpuenv_fatbin_read_elf(&fb, &elf);
		use_fatbin(&ctx, &fb);
		gpuenv_fatbin_free(&fb);
		gpuenv_arena_init(&arena, &ctx, (size_t)1 << 24);
		if (gpuenv_elf_dynamic(&ctx, &elf, &arena, &dyn) == 0) {
			for (size_t i = 0; i < dyn.nneeded; i++)
				total += dyn.needed[i].len;
			for (size_t i = 0; i < dyn.nverdef; i++)
				total += dyn.verdef[i].len;
			for (size_t i = 0; i < dyn.nverneed; i++)
				total += dyn.verneed[i].file.len + dyn.verneed[i].version.len;
			total += dyn.soname.len + dyn.rpath.len + dyn.runpath.len;
		}
		gpuenv_arena_free(&arena);
		gpuenv_elf_close(&elf);
	}
	/* the same bytes as a bare fatbin, found in a section at offset 4096 */
	gpuenv_fatbin_init(&fb, &ctx);
	gpuenv_fatbin_parse(&fb, "fuzz.fatbin", ".nv_fatbin", data, size, 4096);
	use_fatbin(&ctx, &fb);
	gpuenv_fatbin_free(&fb);
	fuzz_oom(data, size, oom_run);
	return 0;
}
