/* jansson's allocations through the calling context (include/gpuenv/facts.h,
 * "jansson's memory").
 *
 * json_set_alloc_funcs is process-wide, so it is set once, to a trampoline
 * that reads a thread-local "current context" set by gpuenv_json_enter.
 * Each block starts with a header naming the allocator that made it, so it
 * is freed by the same one whatever context is current at json_decref.  The
 * header keeps max_align_t alignment for what follows.  The trampoline is
 * set before main (a constructor), so no block jansson made lacks it. */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>

#include "gpuenv/facts.h"

typedef union hdr {
	struct {
		void (*free)(void *ud, void *p);
		void *ud;
	} a;
	max_align_t align;
} hdr_t;

static _Thread_local gpuenv_ctx_t *cur;
static _Thread_local bool cur_failed;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *tramp_malloc(size_t n)
{
	hdr_t *h;

	if (n > SIZE_MAX - sizeof(hdr_t))
		return NULL;
	if (cur && (h = cur->mem.alloc(cur->mem.ud, n + sizeof(hdr_t))) != NULL) {
		h->a.free = cur->mem.free;
		h->a.ud = cur->mem.ud;
		return h + 1;
	}
	/* The context refused (or there is none).  jansson 2.14's lexer does
	 * not survive a NULL here (it keeps scanning a token it failed to
	 * save and runs off its buffer), so the block comes from malloc, and
	 * the refusal is recorded: gpuenv_json_leave reports it and the
	 * caller fails with -ENOMEM. */
	if (cur)
		cur_failed = true;
	if (!(h = malloc(n + sizeof(hdr_t)))) {
		cur_failed = true;
		return NULL;
	}
	h->a.free = NULL;
	h->a.ud = NULL;
	return h + 1;
}

static void tramp_free(void *p)
{
	hdr_t *h;

	if (!p)
		return;
	h = (hdr_t *)p - 1;
	if (h->a.free)
		h->a.free(h->a.ud, h);
	else
		free(h);
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
	cur_failed = false;
}

bool gpuenv_json_leave(gpuenv_json_scope_t *scope)
{
	bool failed = cur_failed;

	cur = scope->prev;
	cur_failed = scope->prev_failed || failed;
	return failed;
}
