/* jansson's allocations through the calling context (include/gpuenv/json.h).
 *
 * json_set_alloc_funcs is process-wide, so it is set once, to a trampoline
 * that reads a thread-local "current context" set by gpuenv_json_enter.
 * Two kinds of block, told apart by their address:
 *
 *  - when the current context uses plain malloc (gpuenv_ctx_init's), or
 *    there is none, the block is malloc's own, with no header: malloc's
 *    blocks are 16-byte aligned, so the address is 0 mod 16.  This is the
 *    common case (every CLI run), and it costs what jansson alone costs:
 *    a 16-byte header on each of a facts document's ~100,000 small blocks
 *    was 1 MB and 200 page faults more per run;
 *  - when the context has an allocator of its own (a failing allocator in
 *    tests, an accounting one), the block starts with a header naming that
 *    allocator and where the allocation began, and the address handed to
 *    jansson is 8 mod 16 (jansson needs 8-byte alignment: pointers, double,
 *    long long).  It is freed by the same allocator whatever context is
 *    current at json_decref.
 *
 * A malloc block that is not 16-byte aligned (not on the platforms gpuenv
 * builds for, but not assumed) takes the header path too.  The trampoline is
 * set before main (a constructor), so no block jansson made lacks it. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/json.h"

typedef struct hdr {
	void *base; /* what the allocator returned */
	void (*free)(void *ud, void *p);
	void *ud;
} hdr_t;

/* room for the header and the realignment to 8 mod 16 */
#define HDR_ROOM (sizeof(hdr_t) + 16)

static _Thread_local gpuenv_ctx_t *cur;
static _Thread_local bool cur_failed;
static _Thread_local bool cur_plain = true; /* cur is NULL or uses malloc */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool plain(uintptr_t p)
{
	return (p & 15) == 0;
}

/* The block at base (n + HDR_ROOM bytes, at least 8-byte aligned) with its
 * header: the address returned is the first one past the header that is
 * 8 mod 16. */
static void *with_header(void *base, void (*fr)(void *, void *), void *ud)
{
	uintptr_t p = (uintptr_t)base + sizeof(hdr_t);
	hdr_t h = { base, fr, ud };

	p += (8 - (p & 15)) & 15;
	memcpy((char *)p - sizeof(hdr_t), &h, sizeof(h));
	return (void *)p;
}

static void *from_malloc(size_t n)
{
	void *p = malloc(n ? n : 1), *q;

	if (p && !plain((uintptr_t)p)) {
		free(p);
		q = malloc(n + HDR_ROOM);
		p = q ? with_header(q, NULL, NULL) : NULL;
	}
	return p;
}

static void *tramp_malloc(size_t n)
{
	void *p;

	if (n > SIZE_MAX - HDR_ROOM)
		return NULL;
	if (cur_plain) {
		if (!(p = from_malloc(n)) && cur)
			cur_failed = true;
		return p;
	}
	if ((p = cur->mem.alloc(cur->mem.ud, n + HDR_ROOM)) != NULL && ((uintptr_t)p & 7) == 0)
		return with_header(p, cur->mem.free, cur->mem.ud);
	if (p)
		cur->mem.free(cur->mem.ud, p);
	/* The context refused.  jansson 2.14's lexer does not survive a NULL
	 * here (it keeps scanning a token it failed to save and runs off its
	 * buffer), so the block comes from malloc, and the refusal is
	 * recorded: gpuenv_json_leave reports it and the caller fails with
	 * -ENOMEM. */
	cur_failed = true;
	return from_malloc(n);
}

static void tramp_free(void *p)
{
	hdr_t h;

	if (!p)
		return;
	if (plain((uintptr_t)p)) {
		free(p);
		return;
	}
	memcpy(&h, (char *)p - sizeof(hdr_t), sizeof(h));
	if (h.free)
		h.free(h.ud, h.base);
	else
		free(h.base);
}

static void install(void)
{
	json_set_alloc_funcs(tramp_malloc, tramp_free);
}

/* Before main: a block jansson took from plain malloc before the trampoline
 * was set would later reach tramp_free without its header. */
__attribute__((constructor)) static void install_early(void)
{
	pthread_once(&once, install);
}

void gpuenv_json_enter(gpuenv_ctx_t *ctx, gpuenv_json_scope_t *scope)
{
	pthread_once(&once, install);
	scope->prev = cur;
	scope->prev_failed = cur_failed;
	cur = ctx;
	cur_plain = !ctx || gpuenv_allocator_is_malloc(&ctx->mem);
	cur_failed = false;
}

bool gpuenv_json_leave(gpuenv_json_scope_t *scope)
{
	bool failed = cur_failed;

	cur = scope->prev;
	cur_plain = !cur || gpuenv_allocator_is_malloc(&cur->mem);
	cur_failed = scope->prev_failed || failed;
	return failed;
}
