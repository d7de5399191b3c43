/* Fuzz target: the JSON pull parser (lib/formats/json_pull.c), against
 * jansson.  Its limits are jansson's (gpuenv/json_pull.h), so for any input:
 *   - it accepts exactly what json_loadb(JSON_DECODE_ANY) accepts, and
 *   - the tree built from its tokens (a repeated key replacing the value,
 *     as jansson does) is json_equal to jansson's;
 *   - every failure is recorded (code, message, the file's name) with a
 *     position inside the text, at most one line past the last;
 *   - skipping every container gives the same verdict as reading it;
 *   - allocation failures are reported as -ENOMEM (fuzz_oom).
 * One known difference is left out: jansson takes a NUL byte right after a
 * number or a literal ("[14\0]" is [14] to it); RFC 8259 allows a raw NUL
 * nowhere, and the pull parser refuses every text that has one.
 * Any violation abort()s. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/json.h"
#include "gpuenv/json_pull.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

/* The value whose first token is tok, as a jansson tree; NULL with *r set
 * on an error. */
static json_t *build(gpuenv_jp_t *p, int tok, int *r)
{
	json_t *v = NULL, *c;
	char *key;

	switch (tok) {
	case GPUENV_JP_OBJECT:
		v = json_object();
		while ((tok = gpuenv_jp_next(p)) == GPUENV_JP_KEY) {
			CHECK(!memchr(p->str.ptr, '\0', p->str.len));
			key = malloc(p->str.len + 1);
			CHECK(key);
			memcpy(key, p->str.ptr, p->str.len);
			key[p->str.len] = '\0';
			if (!(c = build(p, gpuenv_jp_next(p), r))) {
				free(key);
				json_decref(v);
				return NULL;
			}
			json_object_set_new(v, key, c);
			free(key);
		}
		if (tok < 0) {
			*r = tok;
			json_decref(v);
			return NULL;
		}
		CHECK(tok == GPUENV_JP_OBJECT_END);
		return v;
	case GPUENV_JP_ARRAY:
		v = json_array();
		while ((tok = gpuenv_jp_next(p)) >= 0 && tok != GPUENV_JP_ARRAY_END) {
			if (!(c = build(p, tok, r))) {
				json_decref(v);
				return NULL;
			}
			json_array_append_new(v, c);
		}
		if (tok < 0) {
			*r = tok;
			json_decref(v);
			return NULL;
		}
		return v;
	case GPUENV_JP_STRING:
		return json_stringn(p->str.ptr, p->str.len);
	case GPUENV_JP_INTEGER:
		return json_integer((json_int_t)p->i);
	case GPUENV_JP_REAL:
		return json_real(p->d);
	case GPUENV_JP_TRUE:
		return json_true();
	case GPUENV_JP_FALSE:
		return json_false();
	case GPUENV_JP_NULL:
		return json_null();
	default:
		CHECK(tok < 0); /* a value cannot start with anything else */
		*r = tok;
		return NULL;
	}
}

static void check_error(const gpuenv_ctx_t *ctx, int r, const uint8_t *data, size_t size)
{
	unsigned lines = 1;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	CHECK(r < 0 && ctx->err.code == r && ctx->err.msg[0]);
	if (r == GPUENV_ESYNTAX)
		CHECK(!strcmp(ctx->err.file, "t.json") && ctx->err.line >= 1 && ctx->err.line <= lines &&
			ctx->err.col >= 1 && !strncmp(ctx->err.msg, "bad: ", 5));
}

/* The whole text token by token with every container skipped: 0 or the error. */
static int skim(gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_jp_t p;
	int r;

	gpuenv_jp_init(&p, ctx, gpuenv_str_n((const char *)data, size), "t.json", "bad");
	r = gpuenv_jp_next(&p);
	if (r >= 0)
		r = gpuenv_jp_skip(&p, r);
	if (r >= 0)
		r = gpuenv_jp_next(&p);
	gpuenv_jp_free(&p);
	return r < 0 ? r : 0;
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	OOM_CALL(o, ctx, skim(ctx, data, size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_jp_t p;
	json_error_t je;
	json_t *mine, *theirs;
	int r = 0, tok;

	gpuenv_ctx_init(&ctx);
	gpuenv_jp_init(&p, &ctx, gpuenv_str_n((const char *)data, size), "t.json", "bad");
	mine = build(&p, gpuenv_jp_next(&p), &r);
	if (mine && (tok = gpuenv_jp_next(&p)) != GPUENV_JP_END) {
		CHECK(tok < 0);
		r = tok;
		json_decref(mine);
		mine = NULL;
	}
	if (!mine)
		check_error(&ctx, r, data, size);
	else
		CHECK(gpuenv_jp_next(&p) == GPUENV_JP_END && p.depth == 0); /* END stays END */
	gpuenv_jp_free(&p);
	theirs = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
	if (size && memchr(data, '\0', size)) { /* RFC 8259: never valid; jansson's quirk above */
		CHECK(!mine);
		json_decref(theirs);
		theirs = NULL;
	}
	CHECK(!mine == !theirs);
	if (mine)
		CHECK(json_equal(mine, theirs));
	json_decref(mine);
	json_decref(theirs);
	r = skim(&ctx, data, size);
	CHECK(!r == !!theirs);
	fuzz_oom(data, size, oom_run);
	return 0;
}
