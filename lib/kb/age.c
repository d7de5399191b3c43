/* The knowledge base's age (kb.h, "the knowledge base's age"): its date,
 * the newest release of each kind it knows, and the "newer than the
 * knowledge base" answer a lookup gives for a release it does not know.
 * Below the lookups (lookup.c, hub.c) and bundle.c, which use it. */
#include <stdio.h>
#include <string.h>

#include "kb_int.h"

gpuenv_str_t gpuenv_kb_date(const gpuenv_kb_t *kb)
{
	return kb->n_about ? kb->about[0].date : gpuenv_str_n(NULL, 0);
}

const gpuenv_kb_ver_t *gpuenv_kb_newest_torch(const gpuenv_kb_t *kb)
{
	KB_NEWEST(kb->torch_release, kb->n_torch_release, torch);
}

static const gpuenv_kb_ver_t *newest_toolkit(const gpuenv_kb_t *kb)
{
	KB_NEWEST(kb->toolkit, kb->n_toolkit, cuda);
}

static const gpuenv_kb_ver_t *newest_known(const gpuenv_kb_t *kb)
{
	KB_NEWEST(kb->toolkit_known, kb->n_toolkit_known, cuda);
}

/* a release known without its driver counts: it is not "newer than the KB" */
const gpuenv_kb_ver_t *gpuenv_kb_newest_cuda(const gpuenv_kb_t *kb)
{
	const gpuenv_kb_ver_t *a = newest_toolkit(kb), *b = newest_known(kb);
	return !a ? b : !b ? a : gpuenv_kb_ver_cmp(b, a) > 0 ? b : a;
}

/* nvcr.io/nvidia/pytorch and nvidia/pytorch name one image */
static gpuenv_str_t image_key(gpuenv_str_t image)
{
	if (gpuenv_str_startswith(image, "nvcr.io/"))
		return gpuenv_str_n(image.ptr + 8, image.len - 8);
	return image;
}

const gpuenv_kb_ver_t *gpuenv_kb_newest_ngc(const gpuenv_kb_t *kb, gpuenv_str_t image)
{
	const gpuenv_kb_ver_t *best = NULL;
	gpuenv_str_t want = image_key(image);

	for (size_t i = 0; i < kb->n_container; i++) {
		const gpuenv_kb_container_t *c = &kb->container[i];
		if (!gpuenv_str_eq(image_key(c->image), want))
			continue;
		if (!best || gpuenv_kb_ver_cmp(&c->release, best) > 0)
			best = &c->release;
	}
	return best;
}

static const char *kind_word(int kind)
{
	switch (kind) {
	case GPUENV_KB_KIND_TORCH:
		return "torch";
	case GPUENV_KB_KIND_CUDA:
		return "CUDA";
	default:
		return "release";
	}
}

bool gpuenv_kb_newer(const gpuenv_kb_t *kb, int kind, const gpuenv_kb_ver_t *v, gpuenv_str_t image,
	char *buf, size_t size)
{
	const gpuenv_kb_ver_t *newest = kind == GPUENV_KB_KIND_TORCH ? gpuenv_kb_newest_torch(kb) :
		kind == GPUENV_KB_KIND_CUDA ? gpuenv_kb_newest_cuda(kb) : gpuenv_kb_newest_ngc(kb, image);
	gpuenv_str_t date = gpuenv_kb_date(kb);
	char what[320];
	gpuenv_kb_ver_t cut = *v;

	if (!newest || !v->n)
		return false;
	/* torch 2.15.1 and CUDA 13.9.1 compare by their series */
	if (kind != GPUENV_KB_KIND_NGC && cut.n > 2)
		cut.n = 2;
	if (gpuenv_kb_ver_cmp(&cut, newest) <= 0)
		return false;
	if (kind == GPUENV_KB_KIND_NGC)
		snprintf(what, sizeof(what), "%.*s release %.*s", (int)(image.len > 200 ? 200 :
			image.len), image.ptr, GPUENV_STR_ARG(v->str));
	else
		snprintf(what, sizeof(what), "%s %.*s", kind_word(kind), GPUENV_STR_ARG(v->str));
	snprintf(buf, size, "the knowledge base is from %.*s; %s is newer than the newest it "
		"knows, %.*s", date.len >= 7 ? 7 : (int)date.len, date.ptr ? date.ptr : "",
		what, GPUENV_STR_ARG(newest->str));
	return true;
}

int gpuenv_kb_fail_newer(const gpuenv_kb_t *kb, int code, int kind, const gpuenv_kb_ver_t *v,
	gpuenv_str_t image)
{
	char msg[480];

	if (!gpuenv_kb_newer(kb, kind, v, image, msg, sizeof(msg)))
		return 0;
	gpuenv_fail(kb->ctx, code, NULL, 0, 0, "%s", msg);
	return gpuenv_hint(kb->ctx, "`gpuenv kb update` installs a newer knowledge base; "
				    "`gpuenv kb info` shows what this one holds");
}
