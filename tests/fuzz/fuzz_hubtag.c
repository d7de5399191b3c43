/* Fuzz target: Docker Hub tags by their grammar (lib/kb/hub.c).
 *
 * The first byte picks the grammar (even: nvidia/cuda, odd: pytorch/pytorch),
 * the rest is the tag.  Besides the sanitizers, invariants abort() on
 * violation:
 *   - a tag that parses is made of its parts: nvidia/cuda's
 *     "<cuda_full>-<flavour>-<os>", pytorch/pytorch's
 *     "<torch>-cuda<cuda>-cudnn<N>-<flavour>", and every slice lies in it;
 *   - cuda is MAJOR.MINOR of cuda_full; a cudnn flavour says so;
 *   - a refused tag leaves an error with a hint (the grammar);
 *   - the lookup in the embedded images.toml agrees with itself: a known tag
 *     has its row, and the row lists the tag's flavour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static bool inside(gpuenv_str_t part, gpuenv_str_t all)
{
	return !part.ptr || (part.ptr >= all.ptr && part.ptr + part.len <= all.ptr + all.len);
}

static bool listed(const gpuenv_kb_strs_t *l, gpuenv_str_t s)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (gpuenv_str_eq(l->v[i], s))
			return true;
	return false;
}

static const gpuenv_kb_t *the_kb(void)
{
	static gpuenv_ctx_t ctx;
	static gpuenv_kb_t *kb;
	static bool tried;

	if (!tried) {
		tried = true;
		gpuenv_ctx_init(&ctx);
		if (gpuenv_kb_load(&ctx, NULL, &kb))
			kb = NULL;
	}
	return kb;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_kb_hub_tag_t t;
	gpuenv_str_t tag;
	int kind;
	char buf[512];
	int n;
	const gpuenv_kb_t *kb;

	if (size < 1 || size > 4096)
		return 0;
	gpuenv_ctx_init(&ctx);
	kind = data[0] % 2 ? GPUENV_KB_HUB_PYTORCH : GPUENV_KB_HUB_CUDA;
	tag = gpuenv_str_n((const char *)data + 1, size - 1);
	if (gpuenv_kb_hub_parse(&ctx, kind, tag, &t) != 0) {
		CHECK(ctx.err.code == GPUENV_EUSAGE && ctx.err.msg[0] && ctx.err.hint[0]);
		return 0;
	}
	CHECK(t.kind == kind && t.tag.ptr == tag.ptr && t.tag.len == tag.len);
	CHECK(size - 1 <= 128);
	CHECK(inside(t.flavour, tag) && inside(t.os, tag) && inside(t.ubuntu, tag));
	CHECK(t.cuda.n == 2 && t.cuda.part[0] > 0);
	if (kind == GPUENV_KB_HUB_CUDA) {
		CHECK(t.cuda_full.n >= 2 && t.cuda_full.part[0] == t.cuda.part[0] &&
			t.cuda_full.part[1] == t.cuda.part[1]);
		n = snprintf(buf, sizeof(buf), "%.*s-%.*s-%.*s", GPUENV_STR_ARG(t.cuda_full.str),
			GPUENV_STR_ARG(t.flavour), GPUENV_STR_ARG(t.os));
		CHECK(t.has_cudnn == gpuenv_str_startswith(t.flavour, "cudnn"));
	} else {
		CHECK(t.torch.n == 3 && t.has_cudnn && t.cudnn_major >= 0);
		n = snprintf(buf, sizeof(buf), "%.*s-cuda%.*s-cudnn%d-%.*s", GPUENV_STR_ARG(t.torch.str),
			GPUENV_STR_ARG(t.cuda.str), t.cudnn_major, GPUENV_STR_ARG(t.flavour));
	}
	/* pytorch's cuDNN part may have leading zeros ("cudnn09"): compare the rest */
	if (kind == GPUENV_KB_HUB_CUDA)
		CHECK(n >= 0 && (size_t)n == tag.len && memcmp(buf, tag.ptr, tag.len) == 0);

	kb = the_kb();
	if (kb) {
		gpuenv_kb_hub_match_t m;
		gpuenv_kb_hub_find(kb, &m, &t);
		CHECK(!m.known || m.release_known);
		CHECK(!m.cuda_row || kind == GPUENV_KB_HUB_CUDA);
		CHECK(!m.pytorch_row || kind == GPUENV_KB_HUB_PYTORCH);
		if (m.known && m.cuda_row)
			CHECK(listed(&m.cuda_row->flavours, t.flavour) && listed(&m.cuda_row->os, t.os));
		if (m.known && m.pytorch_row)
			CHECK(listed(&m.pytorch_row->flavours, t.flavour) &&
				m.pytorch_row->cudnn_major == t.cudnn_major);
		CHECK(m.known || kind != GPUENV_KB_HUB_CUDA || !m.cuda_row ||
			!listed(&m.cuda_row->flavours, t.flavour));
	}
	return 0;
}
