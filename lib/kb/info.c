/* `gpuenv kb info` (kb_answer.h): what the knowledge base holds, what it
 * cites, where it comes from (the installed bundles, the trusted keys).  The
 * top of lib/kb: over bundle.c, age.c and answer.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb_answer.h"
#include "gpuenv/kb_bundle.h"

#include "kb_int.h"

static const gpuenv_kb_ver_t *newest_cudnn(const gpuenv_kb_t *kb)
{
	KB_NEWEST(kb->cudnn, kb->n_cudnn, cudnn);
}

static const gpuenv_kb_ver_t *newest_nccl(const gpuenv_kb_t *kb)
{
	KB_NEWEST(kb->nccl, kb->n_nccl, nccl);
}

static const gpuenv_kb_ver_t *newest_tensorrt(const gpuenv_kb_t *kb)
{
	KB_NEWEST(kb->tensorrt, kb->n_tensorrt, tensorrt);
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
