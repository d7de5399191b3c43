/* gpuenv image lock (include/gpuenv/image.h): references resolved by the
 * registry client, components from the knowledge base's one image lookup
 * (gpuenv_kb_image_lookup, as `gpuenv kb image` uses it). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuenv/image.h"

static const char *ver(gpuenv_arena_t *a, const gpuenv_kb_ver_t *v)
{
	return v && v->n && v->str.ptr ? gpuenv_arena_strndup(a, v->str.ptr, v->str.len) : NULL;
}

static const char *str(gpuenv_arena_t *a, gpuenv_str_t s)
{
	return s.ptr && s.len ? gpuenv_arena_strndup(a, s.ptr, s.len) : NULL;
}

int gpuenv_image_components(gpuenv_ctx_t *ctx, const gpuenv_kb_t *kb, gpuenv_arena_t *arena,
	const gpuenv_image_ref_t *ref, gpuenv_image_components_t *out)
{
	gpuenv_kb_image_ref_t img;
	const gpuenv_kb_toolkit_t *ga;
	gpuenv_image_components_t c;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	/* the KB reports through its own context */
	if ((r = gpuenv_kb_image_lookup(kb, ref->ref, &img))) {
		if (kb->ctx != ctx)
			ctx->err = kb->ctx->err;
		return r;
	}
	if (img.row) {
		const gpuenv_kb_container_t *k = img.row;
		c.cuda = ver(arena, k->cuda_full.n ? &k->cuda_full : &k->cuda);
		c.cudnn = ver(arena, &k->cudnn);
		c.nccl = ver(arena, &k->nccl);
		c.tensorrt = ver(arena, &k->tensorrt);
		c.torch = str(arena, k->torch);
		c.python = ver(arena, &k->python);
		c.ubuntu = ver(arena, &k->ubuntu);
	} else if (img.hub.kind == GPUENV_KB_HUB_CUDA) {
		const gpuenv_kb_hub_match_t *m = &img.match;
		c.cuda = ver(arena, &img.hub.cuda_full);
		/* a row's cuDNN is that of its cudnn flavours, so of a listed tag only */
		if (m->known && m->cuda_row && img.hub.has_cudnn)
			c.cudnn = ver(arena, &m->cuda_row->cudnn);
		c.ubuntu = str(arena, img.hub.ubuntu);
	} else if (img.hub.kind == GPUENV_KB_HUB_PYTHON) {
		c.python = ver(arena, &img.hub.python);
	} else if (img.hub.kind == GPUENV_KB_HUB_PYTORCH) {
		const gpuenv_kb_hub_match_t *m = &img.match;
		c.cuda = ver(arena, &img.hub.cuda);
		c.torch = ver(arena, &img.hub.torch);
		if (img.hub.cudnn_major >= 0)
			c.cudnn = gpuenv_arena_printf(arena, "%d", img.hub.cudnn_major).ptr;
		if (m->known && m->pytorch_row)
			c.python = ver(arena, &m->pytorch_row->python);
	}
	if ((ga = gpuenv_kb_toolkit(kb, &img.cuda, 0)))
		c.driver_min = ver(arena, &ga->driver_linux);
	/* a NULL from a copy that had something to copy is memory running out */
	if ((img.row && img.row->cuda.n && !c.cuda) || (ga && ga->driver_linux.n && !c.driver_min))
		return gpuenv_oom(ctx, "for an image's components");
	*out = c;
	return 0;
}

int gpuenv_image_lock(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_registry_opts_t *ro,
	const gpuenv_kb_t *kb, const gpuenv_image_ref_t *refs, size_t n, gpuenv_image_entry_t *out,
	gpuenv_image_result_t *res)
{
	gpuenv_registry_query_t *q;
	int r;

	if (!n)
		return 0;
	if (!(q = gpuenv_calloc(ctx, n, sizeof(*q))))
		return gpuenv_oom(ctx, "for the image lock");
	for (size_t i = 0; i < n; i++) {
		q[i].registry = refs[i].registry;
		q[i].repository = refs[i].repository;
		q[i].reference = refs[i].tag;
		memset(&out[i], 0, sizeof(out[i]));
		memset(&res[i], 0, sizeof(res[i]));
	}
	if ((r = gpuenv_registry_resolve(ctx, arena, ro, q, n)))
		goto done;
	for (size_t i = 0; i < n; i++) {
		gpuenv_image_entry_t *e = &out[i];
		res[i].sent_credentials = q[i].sent_credentials;
		e->ref = refs[i].ref;
		e->registry = refs[i].registry;
		e->repository = refs[i].repository;
		e->tag = refs[i].tag;
		if (q[i].err) {
			res[i].err = q[i].err;
			res[i].error = q[i].error;
			continue;
		}
		e->digest = q[i].digest;
		e->media_type = q[i].media_type;
		e->nplatforms = q[i].nplatforms;
		if (e->nplatforms &&
			!(e->platforms = gpuenv_arena_calloc(arena, e->nplatforms, sizeof(*e->platforms)))) {
			r = gpuenv_oom(ctx, "for the image lock");
			goto done;
		}
		for (size_t k = 0; k < e->nplatforms; k++) {
			e->platforms[k].os = q[i].platforms[k].os;
			e->platforms[k].architecture = q[i].platforms[k].architecture;
			e->platforms[k].variant = q[i].platforms[k].variant;
			e->platforms[k].digest = q[i].platforms[k].digest;
		}
		if (!kb)
			continue;
		gpuenv_error_t keep = ctx->err;
		r = gpuenv_image_components(ctx, kb, arena, &refs[i], &e->components);
		if (r == -ENOMEM)
			goto done;
		res[i].kb_known = r == 0;
		if (r) {
			gpuenv_error_format(&ctx->err, res[i].kb_note, sizeof(res[i].kb_note));
			r = 0;
		}
		ctx->err = keep;
	}
	/* an index that lists one platform twice: the first in its order wins
	 * (a manifest would not read back otherwise) */
	for (size_t i = 0; i < n; i++) {
		gpuenv_image_entry_t *e = &out[i];
		gpuenv_image_manifest_t one = { e, 1 };
		size_t k = 0;
		for (size_t j = 0; j < e->nplatforms; j++) {
			const gpuenv_image_platform_t *p = &e->platforms[j];
			bool seen = false;
			for (size_t m = 0; m < k && !seen; m++)
				seen = !strcmp(p->os, e->platforms[m].os) &&
					!strcmp(p->architecture, e->platforms[m].architecture) &&
					!strcmp(p->variant ? p->variant : "",
						e->platforms[m].variant ? e->platforms[m].variant : "");
			if (!seen)
				e->platforms[k++] = *p;
		}
		e->nplatforms = k;
		gpuenv_image_manifest_sort(&one);
	}
done:
	gpuenv_free(ctx, q);
	return r;
}
