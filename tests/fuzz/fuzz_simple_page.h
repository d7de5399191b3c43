/* The body of the two simple-page fuzz targets (fuzz_simple_html.c and
 * fuzz_simple_json.c), which define SIMPLE_PARSE as their parser.  The input
 * is the page body (ptr, len), not NUL-terminated; the base URL carries
 * userinfo, which no returned URL or message may keep. */
#ifndef GPUENV_FUZZ_SIMPLE_PAGE_H
#define GPUENV_FUZZ_SIMPLE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpuenv/index.h"

#include "fuzz_alloc.h"

#define BASE "https://user:secret@index.example/simple/some-project/"

/* No userinfo in a URL's authority ("scheme://" up to '/', '?' or '#'):
 * neither the base's nor one a link of the page carries. */
static bool has_userinfo(const char *url)
{
	const char *a = url;

	while ((*a >= 'a' && *a <= 'z') || (*a >= 'A' && *a <= 'Z') ||
		(a > url && ((*a >= '0' && *a <= '9') || *a == '+' || *a == '-' || *a == '.')))
		a++;
	if (a == url || strncmp(a, "://", 3))
		return false;
	for (a += 3; *a && *a != '/' && *a != '?' && *a != '#'; a++)
		if (*a == '@')
			return true;
	return false;
}

static void check(const gpuenv_index_project_t *p)
{
	if (!p->name || !p->page_url || has_userinfo(p->page_url))
		__builtin_trap();
	for (size_t i = 0; i < p->nfiles; i++) {
		const gpuenv_index_file_t *f = &p->files[i];
		if (!f->filename || !f->url || !f->filename[0] || has_userinfo(f->url))
			__builtin_trap();
		if (f->sha256 && strlen(f->sha256) != 64)
			__builtin_trap();
		if (f->metadata_sha256 && (strlen(f->metadata_sha256) != 64 || !f->has_metadata))
			__builtin_trap();
		if (f->size < -1)
			__builtin_trap();
	}
}

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	gpuenv_arena_t arena;
	gpuenv_index_project_t p;

	gpuenv_arena_init(&arena, ctx, (size_t)256 << 20);
	OOM_CALL(o, ctx, SIMPLE_PARSE(ctx, &arena, BASE,
		gpuenv_str_n((const char *)data, size), &p));
	gpuenv_arena_free(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_index_project_t p;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, (size_t)256 << 20);
	r = SIMPLE_PARSE(&ctx, &arena, BASE, gpuenv_str_n((const char *)data, size), &p);
	if (r == 0)
		check(&p);
	else if (ctx.err.code != r || !ctx.err.msg[0] || strstr(ctx.err.file, "secret"))
		__builtin_trap();
	gpuenv_arena_free(&arena);
#ifdef SIMPLE_REFERENCE
	/* the same files, warnings and first error as the reference reader */
	char why[2048];
	if (SIMPLE_REFERENCE(BASE, gpuenv_str_n((const char *)data, size), why, sizeof(why))) {
		fprintf(stderr, "differs from the reference: %s\n", why);
		abort();
	}
#endif
	fuzz_oom(data, size, oom_run);
	return 0;
}

#endif
