/* Fuzz target: knowledge-base bundles (lib/kb/bundle.c, gpuenv/kb_bundle.h)
 * as a download may bring them: the input is checked as a bundle file (zip,
 * manifest, signature, hashes, load) and parsed as a MANIFEST alone.
 * Besides the sanitizers, invariants abort() on violation:
 *   - a parsed manifest has a YYYY-MM-DD date, 1..GPUENV_KB_NFILES files,
 *     each a known KB file once, each within the size cap;
 *   - a bundle that checks was signed by a trusted key: random input never
 *     does, so a pass means the signature check let something through;
 *   - every failure leaves an error message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_alloc.h"
#include "gpuenv/kb_bundle.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_kb_manifest_t m;
	gpuenv_kb_bundle_t b;
	gpuenv_arena_t arena;
	int r;

	gpuenv_ctx_init(&ctx);
	r = gpuenv_kb_manifest_parse(&ctx, "MANIFEST", (const char *)data, size, &m);
	if (r == 0) {
		CHECK(strlen(m.date) == 10 && m.date[4] == '-' && m.date[7] == '-');
		CHECK(m.n >= 1 && m.n <= GPUENV_KB_NFILES);
		for (unsigned i = 0; i < m.n; i++) {
			CHECK(gpuenv_kb_file_name(m.file[i].id) != NULL);
			CHECK(m.file[i].size <= GPUENV_KB_MAX_FILE);
			for (unsigned j = 0; j < i; j++)
				CHECK(m.file[i].id != m.file[j].id);
		}
	} else
		CHECK(ctx.err.msg[0]);
	gpuenv_arena_init(&arena, &ctx, 0);
	r = gpuenv_kb_bundle_check(&ctx, &arena, "bundle.zip", data, size, &b);
	CHECK(r != 0 && ctx.err.msg[0]);
	gpuenv_arena_free(&arena);
	return 0;
}
