/* Fuzz target: what a registry serves (lib/index/oci.c): image indexes and
 * manifests (the input's first byte picks the Content-Type the parser is
 * told), image configs and token answers.  Besides the sanitizers and the
 * allocation failures of fuzz_alloc.h, invariants abort() on violation:
 *   - a manifest that reads has one of the four media types; an index has
 *     only linux/amd64 and linux/arm64 platforms, each with a valid digest;
 *     an image manifest a valid config digest;
 *   - a config that reads has a non-empty os and architecture;
 *   - a token is non-empty visible ASCII (it goes into a header line);
 *   - every failure leaves an error message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/registry.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static const char *const types[] = { NULL, GPUENV_MT_OCI_INDEX, GPUENV_MT_DOCKER_LIST,
	GPUENV_MT_OCI_MANIFEST, GPUENV_MT_DOCKER_MANIFEST, "application/json; charset=utf-8" };

static const char *ctype(const uint8_t *data, size_t size)
{
	return types[(size ? data[0] : 0) % (sizeof(types) / sizeof(types[0]))];
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_registry_manifest_t m;
	gpuenv_registry_platform_t p;
	gpuenv_str_t body = gpuenv_str_n((const char *)data, size);
	const char *t;

	gpuenv_arena_init(&arena, ctx, 0);
	OOM_CALL(o, ctx, gpuenv_registry_manifest_parse(ctx, &arena, "m", ctype(data, size), body, &m));
	OOM_CALL(o, ctx, gpuenv_registry_config_parse(ctx, &arena, "c", body, &p));
	OOM_CALL(o, ctx, gpuenv_registry_token_parse(ctx, &arena, "t", body, &t));
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_registry_manifest_t m;
	gpuenv_registry_platform_t p;
	gpuenv_str_t body = gpuenv_str_n((const char *)data, size);
	const char *t;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	r = gpuenv_registry_manifest_parse(&ctx, &arena, "m", ctype(data, size), body, &m);
	if (r == 0) {
		CHECK(m.media_type);
		if (m.index) {
			CHECK(!strcmp(m.media_type, GPUENV_MT_OCI_INDEX) ||
				!strcmp(m.media_type, GPUENV_MT_DOCKER_LIST));
			for (size_t i = 0; i < m.nplatforms; i++) {
				CHECK(!strcmp(m.platforms[i].os, "linux"));
				CHECK(!strcmp(m.platforms[i].architecture, "amd64") ||
					!strcmp(m.platforms[i].architecture, "arm64"));
				CHECK(gpuenv_registry_digest_valid(gpuenv_str(m.platforms[i].digest)));
			}
		} else {
			CHECK(!strcmp(m.media_type, GPUENV_MT_OCI_MANIFEST) ||
				!strcmp(m.media_type, GPUENV_MT_DOCKER_MANIFEST));
			CHECK(gpuenv_registry_digest_valid(gpuenv_str(m.config_digest)));
		}
	} else
		CHECK(ctx.err.code == r && ctx.err.msg[0]);
	r = gpuenv_registry_config_parse(&ctx, &arena, "c", body, &p);
	if (r == 0)
		CHECK(p.os[0] && p.architecture[0] && (!p.variant || p.variant[0]));
	else
		CHECK(ctx.err.code == r && ctx.err.msg[0]);
	r = gpuenv_registry_token_parse(&ctx, &arena, "t", body, &t);
	if (r == 0) {
		CHECK(t && t[0]);
		for (const char *c = t; *c; c++)
			CHECK(*c > 0x20 && *c < 0x7f);
	} else
		CHECK(ctx.err.code == r && ctx.err.msg[0]);
	gpuenv_arena_free(&arena);
	fuzz_oom(data, size, oom_run);
	return 0;
}
