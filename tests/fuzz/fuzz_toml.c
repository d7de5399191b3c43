/* Fuzz target for the TOML parser and writer.
 *
 * Any bytes: the parser must not crash, read out of bounds or leak.  When
 * the input parses, the writer must succeed, its output must parse back to
 * the same document, and writing that again must give the same text (the
 * writer is a fixed point after one round).  Lookups and the date/time parser
 * get the input too. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/toml.h"

#include "fuzz_alloc.h"


static void die(const char *what, gpuenv_ctx_t *ctx, const gpuenv_buf_t *text)
{
	char msg[1200];
	gpuenv_error_format(&ctx->err, msg, sizeof(msg));
	fprintf(stderr, "fuzz_toml: %s (%s)\n--- written ---\n%.*s\n", what, msg,
		(int)(text->len > 4000 ? 4000 : text->len), text->data ? text->data : "");
	abort();
}

/* The parsers again, with an allocation failing (fuzz_alloc.h). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_toml_doc_t doc;

	if (OOM_CALL(o, ctx, gpuenv_toml_doc_init(&doc, ctx, "fuzz.toml")))
		return;
	if (OOM_CALL(o, ctx, gpuenv_toml_parse(&doc, (const char *)data, size)) == 0) {
		gpuenv_toml_table_t *t;
		gpuenv_buf_t w;
		gpuenv_buf_init(&w, ctx, 0);
		/* lookups by the first keys, as TOML keys */
		for (uint32_t i = 0; i < doc.root->len && i < 4; i++) {
			gpuenv_str_t str;
			gpuenv_buf_reset(&w);
			if (OOM_CALL(o, ctx, gpuenv_toml_write_key(&w, doc.root->items[i]->key)) == 0 && w.data)
				OOM_CALL(o, ctx, gpuenv_toml_get_string(&doc, doc.root, w.data, &str));
		}
		/* the builder: a NULL table must come with ctx->err set */
		t = gpuenv_toml_add_table(&doc, doc.root, "fuzz-built", 0);
		OOM_CALL(o, ctx, t ? 0 : ctx->err.code ? ctx->err.code : -1);
		if (t) {
			OOM_CALL(o, ctx, gpuenv_toml_add_string(&doc, t, "s", "v\u00e9"));
			OOM_CALL(o, ctx, gpuenv_toml_add_integer(&doc, t, "i", 42));
		}
		gpuenv_buf_reset(&w);
		OOM_CALL(o, ctx, gpuenv_toml_write(ctx, doc.root, &w));
		gpuenv_buf_free(&w);
	}
	gpuenv_toml_doc_free(&doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_toml_doc_t doc, again;
	gpuenv_buf_t w1, w2;

	gpuenv_ctx_init(&ctx);
	gpuenv_toml_datetime_parse(gpuenv_str_n((const char *)data, size > 64 ? 64 : size), NULL);
	if (gpuenv_toml_doc_init(&doc, &ctx, "fuzz.toml"))
		return 0;
	if (gpuenv_toml_parse(&doc, (const char *)data, size)) {
		gpuenv_toml_doc_free(&doc);
		return 0;
	}
	/* lookups over the first keys, written as TOML keys: bare and quoted
	 * keys without escapes must be found again */
	for (uint32_t i = 0; i < doc.root->len && i < 4; i++) {
		const gpuenv_toml_kv_t *kv = doc.root->items[i];
		gpuenv_buf_t pb;
		gpuenv_str_t s;
		gpuenv_buf_init(&pb, &ctx, 256);
		if (gpuenv_toml_write_key(&pb, kv->key) == 0 && pb.data) {
			gpuenv_toml_value_t *v = gpuenv_toml_get_path(doc.root, pb.data);
			if (!memchr(pb.data, '\\', pb.len) && v != &kv->val)
				die("get_path missed a key", &ctx, &pb);
			gpuenv_toml_get_string(&doc, doc.root, pb.data, &s);
		}
		gpuenv_buf_free(&pb);
	}

	gpuenv_buf_init(&w1, &ctx, 0);
	gpuenv_buf_init(&w2, &ctx, 0);
	if (gpuenv_toml_write(&ctx, doc.root, &w1))
		die("writer failed on a parsed document", &ctx, &w1);
	if (gpuenv_toml_doc_init(&again, &ctx, "written.toml"))
		goto out;
	if (gpuenv_toml_parse(&again, w1.data ? w1.data : "", w1.len))
		die("written TOML does not parse", &ctx, &w1);
	if (!gpuenv_toml_table_eq(doc.root, again.root))
		die("written TOML reads back different", &ctx, &w1);
	if (gpuenv_toml_write(&ctx, again.root, &w2))
		die("second write failed", &ctx, &w2);
	if (w1.len != w2.len || (w1.len && memcmp(w1.data, w2.data, w1.len) != 0))
		die("writing twice gives different text", &ctx, &w2);
	gpuenv_toml_doc_free(&again);
out:
	gpuenv_buf_free(&w1);
	gpuenv_buf_free(&w2);
	gpuenv_toml_doc_free(&doc);
	fuzz_oom(data, size, oom_run);
	return 0;
}
