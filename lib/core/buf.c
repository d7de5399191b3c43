/* Arenas and capped growable buffers. */
#include "gpuenv/core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct gpuenv_arena_chunk {
	gpuenv_arena_chunk_t *next;
	size_t size, used;
	max_align_t data[];
};

#define ARENA_ALIGN (sizeof(max_align_t))
#define ARENA_MIN_CHUNK ((size_t)16384)

void gpuenv_arena_init(gpuenv_arena_t *a, gpuenv_ctx_t *ctx, size_t limit)
{
	memset(a, 0, sizeof(*a));
	a->ctx = ctx;
	a->limit = limit;
	a->chunk_size = ARENA_MIN_CHUNK;
}

void *gpuenv_arena_alloc(gpuenv_arena_t *a, size_t size)
{
	gpuenv_arena_chunk_t *c = a->head;
	size_t need;

	if (size > SIZE_MAX - ARENA_ALIGN)
		return NULL;
	need = (size + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
	if (!need)
		need = ARENA_ALIGN;
	if (a->limit && (need > a->limit || a->used > a->limit - need))
		return NULL;
	if (!c || c->size - c->used < need) {
		size_t csz = a->chunk_size;
		while (csz < need) {
			if (csz > SIZE_MAX / 2)
				return NULL;
			csz *= 2;
		}
		if (csz > SIZE_MAX - sizeof(*c))
			return NULL;
		c = gpuenv_alloc(a->ctx, sizeof(*c) + csz);
		if (!c)
			return NULL;
		c->size = csz;
		c->used = 0;
		c->next = a->head;
		a->head = c;
		/* grow chunks geometrically up to 1 MiB so big parses make few calls */
		if (a->chunk_size < ((size_t)1 << 20))
			a->chunk_size *= 2;
	}
	void *p = (char *)c->data + c->used;
	c->used += need;
	a->used += need;
	return p;
}

void *gpuenv_arena_calloc(gpuenv_arena_t *a, size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = gpuenv_arena_alloc(a, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

char *gpuenv_arena_strndup(gpuenv_arena_t *a, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX)
		return NULL;
	p = gpuenv_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

gpuenv_str_t gpuenv_arena_str(gpuenv_arena_t *a, gpuenv_str_t s)
{
	char *p = gpuenv_arena_strndup(a, s.ptr, s.len);

	return p ? (gpuenv_str_t){ p, s.len } : GPUENV_STR_NULL;
}

gpuenv_str_t gpuenv_arena_vprintf(gpuenv_arena_t *a, const char *fmt, va_list ap)
{
	char small[512];
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0 || (size_t)n < sizeof(small)) {
		va_end(again);
		return n < 0 ? GPUENV_STR_NULL : gpuenv_arena_str(a, gpuenv_str_n(small, (size_t)n));
	}
	char *p = gpuenv_arena_alloc(a, (size_t)n + 1);
	if (p)
		vsnprintf(p, (size_t)n + 1, fmt, again);
	va_end(again);
	return p ? gpuenv_str_n(p, (size_t)n) : GPUENV_STR_NULL;
}

gpuenv_str_t gpuenv_arena_printf(gpuenv_arena_t *a, const char *fmt, ...)
{
	gpuenv_str_t s;
	va_list ap;

	va_start(ap, fmt);
	s = gpuenv_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return s;
}

void gpuenv_arena_free(gpuenv_arena_t *a)
{
	gpuenv_arena_chunk_t *c = a->head, *n;

	while (c) {
		n = c->next;
		gpuenv_free(a->ctx, c);
		c = n;
	}
	a->head = NULL;
	a->used = 0;
}

/* ---- buffers ---- */

void gpuenv_buf_init(gpuenv_buf_t *b, gpuenv_ctx_t *ctx, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->ctx = ctx;
	b->max = max ? max : GPUENV_BUF_DEFAULT_MAX;
}

/* The buffer failed: the code kept for gpuenv_buf_failed, every later
 * append a no-op. */
static int stick(gpuenv_buf_t *b, int code)
{
	b->err = code;
	return code;
}

/* The buffer cannot grow: recorded in the context, as every error. */
static int too_big(gpuenv_buf_t *b)
{
	if (!b->ctx)
		return GPUENV_ETOOBIG;
	return gpuenv_fail(b->ctx, GPUENV_ETOOBIG, NULL, 0, 0, "text longer than the %zu-byte limit",
		b->max);
}

/* Room for extra more bytes and the NUL.  Not sticky by itself: a reserve
 * that fails loses no text; an append that fails does (stick). */
static int grow(gpuenv_buf_t *b, size_t extra)
{
	size_t need, ncap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return too_big(b);
	need = b->len + extra + 1;
	if (need - 1 > b->max)
		return too_big(b);
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap - 1 > b->max)
		ncap = b->max + 1;
	p = gpuenv_realloc(b->ctx, b->data, ncap);
	if (!p)
		return gpuenv_oom(b->ctx, NULL);
	b->data = p;
	b->cap = ncap;
	b->data[b->len] = '\0'; /* data is a C string from its first allocation */
	return 0;
}

int gpuenv_buf_reserve(gpuenv_buf_t *b, size_t extra)
{
	return b->err ? gpuenv_buf_failed(b) : grow(b, extra);
}

int gpuenv_buf_append(gpuenv_buf_t *b, const void *p, size_t n)
{
	int r = b->err ? gpuenv_buf_failed(b) : grow(b, n);

	if (r)
		return stick(b, r);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int gpuenv_buf_puts(gpuenv_buf_t *b, const char *s)
{
	return gpuenv_buf_append(b, s, strlen(s));
}

int gpuenv_buf_putc(gpuenv_buf_t *b, char c)
{
	return gpuenv_buf_append(b, &c, 1);
}

int gpuenv_buf_vprintf(gpuenv_buf_t *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, r;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (b->err)
		return gpuenv_buf_failed(b); /* said again: every failed call leaves its error */
	if (n < 0)
		return stick(b, b->ctx ? gpuenv_fail(b->ctx, -EINVAL, NULL, 0, 0, "cannot format '%s'", fmt)
				      : -EINVAL);
	r = grow(b, (size_t)n);
	if (r)
		return stick(b, r);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int gpuenv_buf_printf(gpuenv_buf_t *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = gpuenv_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

int gpuenv_buf_failed(gpuenv_buf_t *b)
{
	if (b->err && b->ctx && b->ctx->err.code != b->err) {
		if (b->err == -ENOMEM)
			gpuenv_oom(b->ctx, NULL);
		else
			gpuenv_fail(b->ctx, b->err, NULL, 0, 0, NULL);
	}
	return b->err;
}

void gpuenv_buf_reset(gpuenv_buf_t *b)
{
	b->err = 0;
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

char *gpuenv_buf_steal(gpuenv_buf_t *b, size_t *len)
{
	char *p = b->data;

	if (b->err) {
		gpuenv_buf_free(b);
		return NULL;
	}
	if (!p)
		p = gpuenv_strndup(b->ctx, "", 0);
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void gpuenv_buf_free(gpuenv_buf_t *b)
{
	gpuenv_free(b->ctx, b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}

/* ---- arrays ---- */

int gpuenv_array_grow(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, void *pv, size_t *cap,
	size_t need, size_t size, size_t max, const char *what)
{
	void *old, *p;
	size_t ncap;

	if (need <= *cap)
		return 0;
	if (need > max)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "more than %zu %s", max, what);
	ncap = *cap;
	do
		ncap = !ncap ? 8 : ncap > SIZE_MAX / 2 ? need : ncap * 2;
	while (ncap < need);
	if (ncap > max)
		ncap = max;
	if (!size || ncap > SIZE_MAX / size)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "more than %zu %s", ncap, what);
	memcpy(&old, pv, sizeof(old)); /* pv is a T **: no aliasing through void ** */
	if (arena) {
		p = gpuenv_arena_alloc(arena, ncap * size);
		if (p && *cap)
			memcpy(p, old, *cap * size);
	} else {
		p = gpuenv_realloc(ctx, old, ncap * size);
	}
	if (!p)
		return gpuenv_oom(ctx, what);
	memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
	memcpy(pv, &p, sizeof(p));
	*cap = ncap;
	return 0;
}
