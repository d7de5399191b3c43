/* Docker Hub images whose tags have a grammar: nvidia/cuda
 * ("<cuda>-<flavour>-<os>"), pytorch/pytorch
 * ("<torch>-cuda<X.Y>-cudnn<N>-<runtime|devel>") and Docker's official
 * python images ("<X.Y[.Z]>[-slim][-<debian>]": no CUDA of their own, the
 * export's base when the lock brings the CUDA runtime as wheels).  A tag is read by its
 * grammar first, then looked up in images.toml: a tag the data list is
 * answered from the data, one that fits the grammar but that the data lack
 * from the grammar alone (and says so), a malformed one is refused with the
 * part that is wrong.  docs/kb.md, "images.toml". */
#include "gpuenv/kb.h"

#include <errno.h>
#include <string.h>

#define HUB_MAX_TAG 128 /* Docker allows 128 characters in a tag */

static const char g_cuda[] = "<cuda>-<base|runtime|devel|cudnn-runtime|cudnn-devel>-<os>";
static const char g_pytorch[] = "<torch>-cuda<X.Y>-cudnn<N>-<runtime|devel>";
static const char g_python[] = "<X.Y[.Z]>[-slim][-<bookworm|bullseye|trixie>]";

const char *gpuenv_kb_hub_grammar(int kind)
{
	return kind == GPUENV_KB_HUB_CUDA	 ? g_cuda
	       : kind == GPUENV_KB_HUB_PYTORCH ? g_pytorch
	       : kind == GPUENV_KB_HUB_PYTHON  ? g_python
					       : NULL;
}

int gpuenv_kb_hub_kind(gpuenv_str_t image)
{
	static const struct {
		const char *name;
		int kind;
	} names[] = {
		{ "nvidia/cuda", GPUENV_KB_HUB_CUDA },
		{ "docker.io/nvidia/cuda", GPUENV_KB_HUB_CUDA },
		{ "nvcr.io/nvidia/cuda", GPUENV_KB_HUB_CUDA },
		{ "pytorch/pytorch", GPUENV_KB_HUB_PYTORCH },
		{ "docker.io/pytorch/pytorch", GPUENV_KB_HUB_PYTORCH },
		{ "python", GPUENV_KB_HUB_PYTHON },
		{ "library/python", GPUENV_KB_HUB_PYTHON },
		{ "docker.io/python", GPUENV_KB_HUB_PYTHON },
		{ "docker.io/library/python", GPUENV_KB_HUB_PYTHON },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (gpuenv_str_ieq(image, gpuenv_str(names[i].name)))
			return names[i].kind;
	return GPUENV_KB_HUB_NONE;
}

static bool all_digits(gpuenv_str_t s)
{
	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] < '0' || s.ptr[i] > '9')
			return false;
	return true;
}

/* "12.4.1" with nparts in [min, max], each part at most 4 digits */
static bool dotted(gpuenv_str_t s, unsigned min, unsigned max, gpuenv_kb_ver_t *v)
{
	for (size_t i = 0, run = 0; i < s.len; i++) {
		run = s.ptr[i] == '.' ? 0 : run + 1;
		if (run > 4)
			return false;
	}
	return gpuenv_kb_ver_parse(s, v) && v->n >= min && v->n <= max;
}

/* MAJOR.MINOR of v, its text cut to the first two parts */
static gpuenv_kb_ver_t major_minor(gpuenv_kb_ver_t v)
{
	size_t dots = 0;

	for (size_t i = 0; i < v.str.len; i++)
		if (v.str.ptr[i] == '.' && ++dots == 2)
			v.str.len = i;
	v.n = 2;
	v.part[2] = v.part[3] = 0;
	return v;
}

/* "ubuntu22.04", "ubi9", "rockylinux10", "amzn2023": letters, then a version */
static bool os_ok(gpuenv_str_t s)
{
	size_t n = 0;
	gpuenv_kb_ver_t v;

	while (n < s.len && s.ptr[n] >= 'a' && s.ptr[n] <= 'z')
		n++;
	return n >= 2 && n < s.len && dotted(gpuenv_str_n(s.ptr + n, s.len - n), 1, 2, &v);
}

static int bad(gpuenv_ctx_t *ctx, int kind, gpuenv_str_t tag, const char *fmt_part,
	gpuenv_str_t part, const char *why)
{
	const char *image = kind == GPUENV_KB_HUB_CUDA	  ? "nvidia/cuda"
			    : kind == GPUENV_KB_HUB_PYTHON ? "python"
							   : "pytorch/pytorch";
	const char *example = kind == GPUENV_KB_HUB_CUDA	? "12.4.1-cudnn-devel-ubuntu22.04"
			      : kind == GPUENV_KB_HUB_PYTHON ? "3.11-slim-bookworm"
							     : "2.5.1-cuda12.4-cudnn9-runtime";
	int tl = (int)(tag.len > 64 ? 64 : tag.len), pl = (int)(part.len > 64 ? 64 : part.len);

	if (fmt_part)
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s tag '%.*s': %s '%.*s' %s", image, tl,
			tag.ptr ? tag.ptr : "", fmt_part, pl, part.ptr ? part.ptr : "", why);
	else
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s tag '%.*s': %s", image, tl,
			tag.ptr ? tag.ptr : "", why);
	return gpuenv_hint(ctx, "%s tags are %s, as %s:%s", image, gpuenv_kb_hub_grammar(kind),
		image, example);
}

static int parse_cuda(gpuenv_ctx_t *ctx, gpuenv_str_t tag, gpuenv_kb_hub_tag_t *out)
{
	const char *dash = memchr(tag.ptr, '-', tag.len), *last = NULL;
	gpuenv_str_t ver, flav, os;
	gpuenv_kb_ver_t v;

	for (size_t i = 0; i < tag.len; i++)
		if (tag.ptr[i] == '-')
			last = tag.ptr + i;
	ver = gpuenv_str_n(tag.ptr, dash ? (size_t)(dash - tag.ptr) : tag.len);
	if (!dotted(ver, 2, 3, &v) || v.part[0] == 0 || v.part[0] > 99 || v.part[1] > 99)
		return bad(ctx, GPUENV_KB_HUB_CUDA, tag, "the CUDA version", ver,
			"is not MAJOR.MINOR[.PATCH] (as 12.4.1)");
	if (!dash || dash == last)
		return bad(ctx, GPUENV_KB_HUB_CUDA, tag, NULL, GPUENV_STR_NULL,
			"it does not have the three parts CUDA version, flavour and OS");
	flav = gpuenv_str_n(dash + 1, (size_t)(last - dash - 1));
	os = gpuenv_str_n(last + 1, (size_t)(tag.ptr + tag.len - last - 1));
	if (!os_ok(os))
		return bad(ctx, GPUENV_KB_HUB_CUDA, tag, "the OS", os,
			"is not an OS name and version (as ubuntu22.04, ubi9, rockylinux9)");
	out->cudnn_major = -1;
	if (gpuenv_str_eq_cstr(flav, "base") || gpuenv_str_eq_cstr(flav, "runtime") ||
		gpuenv_str_eq_cstr(flav, "devel"))
		;
	else {
		const char *d = memchr(flav.ptr, '-', flav.len);
		gpuenv_str_t lib = gpuenv_str_n(flav.ptr, d ? (size_t)(d - flav.ptr) : flav.len);
		gpuenv_str_t kind = d ? gpuenv_str_n(d + 1, (size_t)(flav.ptr + flav.len - d - 1))
				      : GPUENV_STR_NULL;
		bool kind_ok = gpuenv_str_eq_cstr(kind, "runtime") || gpuenv_str_eq_cstr(kind, "devel");
		if (kind_ok && gpuenv_str_startswith(lib, "cudnn") &&
			(lib.len == 5 || (lib.len <= 7 && all_digits(gpuenv_str_n(lib.ptr + 5, lib.len - 5))))) {
			out->has_cudnn = true;
			if (lib.len > 5) {
				out->cudnn_major = 0;
				for (size_t i = 5; i < lib.len; i++)
					out->cudnn_major = out->cudnn_major * 10 + (lib.ptr[i] - '0');
			}
		} else if (!(kind_ok && gpuenv_str_eq_cstr(lib, "tensorrt")))
			return bad(ctx, GPUENV_KB_HUB_CUDA, tag, "the flavour", flav,
				"is not one (base, runtime, devel, cudnn-runtime, cudnn-devel; cudnn8-runtime "
				"and the like in the 11.x to 12.3 tags)");
	}
	out->kind = GPUENV_KB_HUB_CUDA;
	out->cuda_full = v;
	out->cuda = major_minor(v);
	out->flavour = flav;
	out->os = os;
	if (gpuenv_str_startswith(os, "ubuntu"))
		out->ubuntu = gpuenv_str_n(os.ptr + 6, os.len - 6);
	return 0;
}

static int parse_pytorch(gpuenv_ctx_t *ctx, gpuenv_str_t tag, gpuenv_kb_hub_tag_t *out)
{
	gpuenv_str_t part[4];
	size_t n = 0, start = 0;
	gpuenv_kb_ver_t torch, cuda;

	for (size_t i = 0; i <= tag.len; i++) {
		if (i < tag.len && tag.ptr[i] != '-')
			continue;
		if (n == 4)
			return bad(ctx, GPUENV_KB_HUB_PYTORCH, tag, NULL, GPUENV_STR_NULL,
				"it has more than four '-'-separated parts");
		part[n++] = gpuenv_str_n(tag.ptr + start, i - start);
		start = i + 1;
	}
	if (!dotted(part[0], 3, 3, &torch))
		return bad(ctx, GPUENV_KB_HUB_PYTORCH, tag, "the torch version", part[0],
			"is not MAJOR.MINOR.PATCH (as 2.5.1)");
	if (n < 4)
		return bad(ctx, GPUENV_KB_HUB_PYTORCH, tag, NULL, GPUENV_STR_NULL,
			"it does not have the four parts torch, CUDA, cuDNN and flavour");
	if (!gpuenv_str_startswith(part[1], "cuda") ||
		!dotted(gpuenv_str_n(part[1].ptr + 4, part[1].len - 4), 2, 2, &cuda) ||
		cuda.part[0] == 0 || cuda.part[0] > 99 || cuda.part[1] > 99)
		return bad(ctx, GPUENV_KB_HUB_PYTORCH, tag, "the CUDA part", part[1],
			"is not cuda<MAJOR.MINOR> (as cuda12.4)");
	if (!gpuenv_str_startswith(part[2], "cudnn") || part[2].len > 7 ||
		!all_digits(gpuenv_str_n(part[2].ptr + 5, part[2].len - 5)))
		return bad(ctx, GPUENV_KB_HUB_PYTORCH, tag, "the cuDNN part", part[2],
			"is not cudnn<MAJOR> (as cudnn9)");
	if (!gpuenv_str_eq_cstr(part[3], "runtime") && !gpuenv_str_eq_cstr(part[3], "devel"))
		return bad(ctx, GPUENV_KB_HUB_PYTORCH, tag, "the flavour", part[3],
			"is not runtime or devel");
	out->kind = GPUENV_KB_HUB_PYTORCH;
	out->torch = torch;
	out->cuda = cuda;
	out->has_cudnn = true;
	out->cudnn_major = 0;
	for (size_t i = 5; i < part[2].len; i++)
		out->cudnn_major = out->cudnn_major * 10 + (part[2].ptr[i] - '0');
	out->flavour = part[3];
	return 0;
}

/* Docker's official python images: the Debian releases their glibc tags are
 * built on (alpine and windows variants cannot install manylinux wheels). */
static int parse_python(gpuenv_ctx_t *ctx, gpuenv_str_t tag, gpuenv_kb_hub_tag_t *out)
{
	static const char *const debian[] = { "bookworm", "bullseye", "trixie" };
	const char *dash = memchr(tag.ptr, '-', tag.len);
	gpuenv_str_t ver = gpuenv_str_n(tag.ptr, dash ? (size_t)(dash - tag.ptr) : tag.len);
	gpuenv_str_t rest = dash ? gpuenv_str_n(dash + 1, (size_t)(tag.ptr + tag.len - dash - 1)) : GPUENV_STR_NULL;
	gpuenv_kb_ver_t v;

	if (!dotted(ver, 2, 3, &v) || v.part[0] != 3)
		return bad(ctx, GPUENV_KB_HUB_PYTHON, tag, "the Python version", ver,
			"is not 3.MINOR[.PATCH] (as 3.11)");
	if (gpuenv_str_startswith(rest, "slim")) {
		out->flavour = gpuenv_str_n(rest.ptr, 4);
		rest = rest.len > 4 && rest.ptr[4] == '-' ? gpuenv_str_n(rest.ptr + 5, rest.len - 5)
			 : gpuenv_str_n(rest.ptr + 4, rest.len - 4);
	}
	if (rest.len) {
		bool ok = false;
		for (size_t i = 0; i < sizeof(debian) / sizeof(debian[0]); i++)
			ok |= gpuenv_str_eq_cstr(rest, debian[i]);
		if (!ok)
			return bad(ctx, GPUENV_KB_HUB_PYTHON, tag, "the variant", rest,
				"is not a Debian release (bookworm, bullseye, trixie): alpine's musl and "
				"windows images cannot install the lock's manylinux wheels");
		out->os = rest;
	}
	out->kind = GPUENV_KB_HUB_PYTHON;
	out->python = major_minor(v);
	return 0;
}

int gpuenv_kb_hub_parse(gpuenv_ctx_t *ctx, int kind, gpuenv_str_t tag, gpuenv_kb_hub_tag_t *out)
{
	memset(out, 0, sizeof(*out));
	out->cudnn_major = -1;
	out->tag = tag;
	if (kind != GPUENV_KB_HUB_CUDA && kind != GPUENV_KB_HUB_PYTORCH && kind != GPUENV_KB_HUB_PYTHON)
		return gpuenv_fail(ctx, -EINVAL, NULL, 0, 0, "not an image with a tag grammar");
	if (!tag.ptr || !tag.len)
		return bad(ctx, kind, tag, NULL, GPUENV_STR_NULL, "the tag is empty");
	if (tag.len > HUB_MAX_TAG)
		return bad(ctx, kind, tag, NULL, GPUENV_STR_NULL,
			"longer than the 128 characters a tag may have");
	if (gpuenv_str_eq_cstr(tag, "latest"))
		return bad(ctx, kind, tag, NULL, GPUENV_STR_NULL,
			"'latest' moves from release to release; name a versioned tag");
	return kind == GPUENV_KB_HUB_CUDA     ? parse_cuda(ctx, tag, out)
	       : kind == GPUENV_KB_HUB_PYTHON ? parse_python(ctx, tag, out)
					      : parse_pytorch(ctx, tag, out);
}

static bool has(const gpuenv_kb_strs_t *l, gpuenv_str_t s)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (gpuenv_str_eq(l->v[i], s))
			return true;
	return false;
}

void gpuenv_kb_hub_find(const gpuenv_kb_t *kb, gpuenv_kb_hub_match_t *m, const gpuenv_kb_hub_tag_t *t)
{
	memset(m, 0, sizeof(*m));
	if (t->kind == GPUENV_KB_HUB_CUDA) {
		for (size_t i = 0; i < kb->n_cuda_image; i++) {
			const gpuenv_kb_cuda_image_t *r = &kb->cuda_image[i];
			if (gpuenv_kb_ver_cmp(&r->cuda_full, &t->cuda_full) != 0 || r->cuda_full.n != t->cuda_full.n)
				continue;
			m->release_known = true;
			if (has(&r->os, t->os)) {
				m->cuda_row = r;
				m->known = has(&r->flavours, t->flavour);
				return;
			}
		}
	} else if (t->kind == GPUENV_KB_HUB_PYTORCH) {
		for (size_t i = 0; i < kb->n_pytorch_image; i++) {
			const gpuenv_kb_pytorch_image_t *r = &kb->pytorch_image[i];
			if (gpuenv_kb_ver_cmp(&r->torch, &t->torch) != 0)
				continue;
			m->release_known = true;
			if (gpuenv_kb_ver_cmp(&r->cuda, &t->cuda) != 0)
				continue;
			m->pytorch_row = r;
			m->known = r->cudnn_major == t->cudnn_major && has(&r->flavours, t->flavour);
			return;
		}
	}
}

bool gpuenv_kb_hub_newer(const gpuenv_kb_t *kb, const gpuenv_kb_hub_tag_t *t, char *buf, size_t size)
{
	if (t->kind == GPUENV_KB_HUB_PYTORCH &&
		gpuenv_kb_newer(kb, GPUENV_KB_KIND_TORCH, &t->torch, GPUENV_STR_NULL, buf, size))
		return true;
	return t->kind != GPUENV_KB_HUB_NONE && t->kind != GPUENV_KB_HUB_PYTHON &&
		gpuenv_kb_newer(kb, GPUENV_KB_KIND_CUDA, &t->cuda, GPUENV_STR_NULL, buf, size);
}
