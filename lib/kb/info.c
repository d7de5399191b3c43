/* The knowledge base about itself: its date, what it holds, what it cites,
 * and "newer than the knowledge base" answers (kb.h, kb_answer.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"
#include "gpuenv/kb_answer.h"
#include "gpuenv/kb_bundle.h"

gpuenv_str_t gpuenv_kb_date(const gpuenv_kb_t *kb)
{
	return kb->n_about ? kb->about[0].date : gpuenv_str_n(NULL, 0);
}

/* The greatest version at offset off of rows of size sz. */
#define NEWEST(rows, count, field)                                                    \
	do {                                                                      \
		const gpuenv_kb_ver_t *best = NULL;                               \
		for (size_t i_ = 0; i_ < (count); i_++)                               \
			if ((rows)[i_].field.n &&                                 \
				(!best || gpuenv_kb_ver_cmp(&(rows)[i_].field, best) > 0)) \
				best = &(rows)[i_].field;                         \
		return best;                                                      \
	} while (0)

const gpuenv_kb_ver_t *gpuenv_kb_newest_torch(const gpuenv_kb_t *kb)
{
	NEWEST(kb->torch_release, kb->n_torch_release, torch);
}

static const gpuenv_kb_ver_t *newest_toolkit(const gpuenv_kb_t *kb)
{
	NEWEST(kb->toolkit, kb->n_toolkit, cuda);
}

static const gpuenv_kb_ver_t *newest_known(const gpuenv_kb_t *kb)
{
	NEWEST(kb->toolkit_known, kb->n_toolkit_known, cuda);
}

/* a release known without its driver counts: it is not "newer than the KB" */
const gpuenv_kb_ver_t *gpuenv_kb_newest_cuda(const gpuenv_kb_t *kb)
{
	const gpuenv_kb_ver_t *a = newest_toolkit(kb), *b = newest_known(kb);
	return !a ? b : !b ? a : gpuenv_kb_ver_cmp(b, a) > 0 ? b : a;
}

static const gpuenv_kb_ver_t *newest_cudnn(const gpuenv_kb_t *kb)
{
	NEWEST(kb->cudnn, kb->n_cudnn, cudnn);
}

static const gpuenv_kb_ver_t *newest_nccl(const gpuenv_kb_t *kb)
{
	NEWEST(kb->nccl, kb->n_nccl, nccl);
}

static const gpuenv_kb_ver_t *newest_tensorrt(const gpuenv_kb_t *kb)
{
	NEWEST(kb->tensorrt, kb->n_tensorrt, tensorrt);
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

/* ---- kb info ------------------------------------------------------------------ */

/* The document a source names: its URL (to the first blank or comma), or
 * the text before the first comma, " (" or ": ". */
static gpuenv_str_t source_document(gpuenv_str_t s, gpuenv_str_t *host)
{
	size_t n = 0;

	*host = gpuenv_str_n(NULL, 0);
	if (gpuenv_str_startswith(s, "https://") || gpuenv_str_startswith(s, "http://")) {
		size_t h = gpuenv_str_startswith(s, "https://") ? 8 : 7, e = h;
		while (n < s.len && s.ptr[n] != ' ' && s.ptr[n] != ',' && s.ptr[n] != ';')
			n++;
		while (n && (s.ptr[n - 1] == ')' || s.ptr[n - 1] == '.'))
			n--;
		while (e < n && s.ptr[e] != '/')
			e++;
		*host = gpuenv_str_n(s.ptr + h, e - h);
		return gpuenv_str_n(s.ptr, n);
	}
	while (n < s.len && s.ptr[n] != ',' && !(s.ptr[n] == ' ' && n + 1 < s.len &&
		s.ptr[n + 1] == '(') && !(s.ptr[n] == ':' && n + 1 < s.len && s.ptr[n + 1] == ' '))
		n++;
	/* the host of a document named without a scheme: "developer.nvidia.com/cuda-gpus";
	 * "pytorch/pytorch RELEASE.md" is a GitHub repository's file */
	{
		size_t w = 0, slash = 0, dot = 0;
		while (w < n && s.ptr[w] != ' ') {
			if (s.ptr[w] == '/' && !slash)
				slash = w;
			if (s.ptr[w] == '.' && !slash && !dot)
				dot = w;
			w++;
		}
		if (slash && dot)
			*host = gpuenv_str_n(s.ptr, slash);
		else if (slash && w < n && !gpuenv_str_startswith(s, "shared/") &&
			memchr(s.ptr + slash + 1, '/', w - slash - 1) == NULL)
			*host = gpuenv_str_n(s.ptr, w); /* owner/repo */
	}
	return gpuenv_str_n(s.ptr, n);
}

struct docs {
	json_t *docs;  /* document -> {rows, secondary, host} */
	json_t *hosts; /* host -> {rows, documents} */
	size_t rows, secondary;
};

static void count_row(void *ud, const char *table, const gpuenv_kb_row_t *row)
{
	struct docs *d = ud;
	gpuenv_str_t host, doc = source_document(row->source, &host);
	char key[1024], hk[256];
	json_t *o, *h;

	(void)table;
	d->rows++;
	d->secondary += row->secondary;
	snprintf(key, sizeof(key), "%.*s", GPUENV_STR_ARG(doc));
	if (host.ptr && host.ptr != row->source.ptr + 8 && host.ptr != row->source.ptr + 7 &&
		memchr(host.ptr, '.', host.len) == NULL)
		snprintf(hk, sizeof(hk), "github.com/%.*s", GPUENV_STR_ARG(host));
	else
		snprintf(hk, sizeof(hk), "%.*s", host.ptr ? (int)host.len : 7,
			host.ptr ? host.ptr : "(other)");
	o = json_object_get(d->docs, key);
	if (!o) {
		o = json_pack("{s:I, s:I, s:s}", "rows", (json_int_t)0, "secondary", (json_int_t)0,
			"host", hk);
		json_object_set_new(d->docs, key, o);
		h = json_object_get(d->hosts, hk);
		if (!h) {
			h = json_pack("{s:I, s:I}", "rows", (json_int_t)0, "documents", (json_int_t)0);
			json_object_set_new(d->hosts, hk, h);
		}
		if (h)
			json_object_set_new(h, "documents",
				json_integer(json_integer_value(json_object_get(h, "documents")) + 1));
	}
	h = json_object_get(d->hosts, hk);
	if (o)
		json_object_set_new(o, "rows", json_integer(json_integer_value(json_object_get(o,
			"rows")) + 1));
	if (o && row->secondary)
		json_object_set_new(o, "secondary", json_integer(json_integer_value(
			json_object_get(o, "secondary")) + 1));
	if (h)
		json_object_set_new(h, "rows", json_integer(json_integer_value(json_object_get(h,
			"rows")) + 1));
}

static json_t *jv(const gpuenv_kb_ver_t *v)
{
	return v && v->n ? json_stringn(v->str.ptr, v->str.len) : json_null();
}

static json_t *newest_ngc_json(const gpuenv_kb_t *kb)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < kb->n_container; i++) {
		const gpuenv_kb_container_t *c = &kb->container[i];
		char img[256];
		snprintf(img, sizeof(img), "%.*s", GPUENV_STR_ARG(c->image));
		if (!json_object_get(o, img))
			json_object_set_new(o, img, jv(gpuenv_kb_newest_ngc(kb, c->image)));
	}
	return o;
}

static json_t *bundles_json(const gpuenv_kb_t *kb, const char *dir)
{
	gpuenv_kb_installed_t *it = gpuenv_calloc(kb->ctx, 16, sizeof(*it));
	json_t *arr = json_array();
	gpuenv_error_t saved = kb->ctx->err;
	size_t n = 0;

	if (it && !gpuenv_kb_bundle_list(kb->ctx, dir, GPUENV_KB_ALL, it, 16, &n))
		for (size_t i = 0; i < n && i < 16; i++)
			json_array_append_new(arr, json_pack("{s:s, s:s?, s:b, s:s?, s:b}", "path",
				it[i].path, "date", it[i].date[0] ? it[i].date : NULL, "valid",
				!it[i].err, "error", it[i].err ? it[i].why : NULL, "in_use",
				kb->bundle && strcmp(kb->bundle, it[i].path) == 0));
	kb->ctx->err = saved;
	gpuenv_free(kb->ctx, it);
	return arr;
}

json_t *gpuenv_kb_info_json(const gpuenv_kb_t *kb, const char *bundles)
{
	struct docs d = { json_object(), json_object(), 0, 0 };
	json_t *src = gpuenv_kb_sources_json(kb), *keys = json_array(), *o;
	const gpuenv_kb_key_t *k;
	size_t nk = gpuenv_kb_trusted_keys(&k);
	gpuenv_str_t date = gpuenv_kb_date(kb);
	const char *from = kb->bundle ? "bundle" : "embedded";

	for (int i = 0; i < GPUENV_KB_NFILES; i++)
		if (kb->files[i].origin && strcmp(kb->files[i].origin, "embedded") != 0 && !kb->bundle)
			from = "kb-dir";
	gpuenv_kb_foreach_row(kb, count_row, &d);
	for (size_t i = 0; i < nk; i++)
		json_array_append_new(keys, json_pack("{s:s, s:s}", "name", k[i].name, "id", k[i].id));
	o = json_pack("{s:o, s:s, s:s, s:o, s:o, s:o, s:I, s:I, s:O, s:o, s:o, s:{s:o, s:o, s:o, "
		      "s:o, s:o, s:o}}",
		"date", date.ptr ? json_stringn(date.ptr, date.len) : json_null(),
		"embedded_date", gpuenv_kb_embedded_date(), "from", from,
		"bundle", kb->bundle ? json_pack("{s:s, s:s?}", "path", kb->bundle, "key",
			kb->bundle_key) : json_null(),
		"bundles", bundles ? bundles_json(kb, bundles) : json_array(),
		"trusted_keys", keys,
		"rows", (json_int_t)d.rows, "secondary", (json_int_t)d.secondary,
		"files", src ? json_object_get(src, "files") : NULL,
		"documents", d.docs, "hosts", d.hosts,
		"newest", "torch", jv(gpuenv_kb_newest_torch(kb)), "cuda", jv(gpuenv_kb_newest_cuda(kb)),
		"cudnn", jv(newest_cudnn(kb)), "nccl", jv(newest_nccl(kb)), "tensorrt",
		jv(newest_tensorrt(kb)), "ngc", newest_ngc_json(kb));
	json_decref(src);
	return o;
}
