/* Context, errors, memory and string slices. */
#include "gpuenv/core.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *std_alloc(void *ud, size_t size)
{
	(void)ud;
	return malloc(size ? size : 1);
}

static void *std_realloc(void *ud, void *p, size_t size)
{
	(void)ud;
	return realloc(p, size ? size : 1);
}

static void std_free(void *ud, void *p)
{
	(void)ud;
	free(p);
}

bool gpuenv_allocator_is_malloc(const gpuenv_allocator_t *a)
{
	return a->alloc == std_alloc && a->free == std_free;
}

static const char *std_getenv(void *ud, const char *name)
{
	(void)ud;
	return getenv(name);
}

void gpuenv_ctx_init(gpuenv_ctx_t *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->mem.alloc = std_alloc;
	ctx->mem.realloc = std_realloc;
	ctx->mem.free = std_free;
	ctx->verbosity = GPUENV_LOG_WARN;
	ctx->getenv = std_getenv;
	ctx->root = "";
}

const char *gpuenv_ctx_getenv(gpuenv_ctx_t *ctx, const char *name)
{
	return ctx->getenv ? ctx->getenv(ctx->getenv_ud, name) : NULL;
}

void gpuenv_log(gpuenv_ctx_t *ctx, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!ctx->log || level > ctx->verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->log(ctx->log_ud, level, msg);
}

const char *gpuenv_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case -ENOMEM: /* one wording for every allocation failure (gpuenv_oom's) */
		return "out of memory";
#define ERROR_TEXT(name, value, text) \
	case name:                     \
		return text;
		GPUENV_ERRORS(ERROR_TEXT)
#undef ERROR_TEXT
	default:
		break;
	}
	if (code < 0 && code > GPUENV_E_BASE)
		return strerror(-code);
	return "unknown error";
}

int gpuenv_fail(gpuenv_ctx_t *ctx, int code, const char *file, unsigned line,
	unsigned col, const char *fmt, ...)
{
	gpuenv_error_t *e = &ctx->err;
	va_list ap;

	e->code = code;
	snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	e->line = line;
	e->col = col;
	e->hint[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	} else {
		snprintf(e->msg, sizeof(e->msg), "%s", gpuenv_strerror(code));
	}
	return code;
}

int gpuenv_hint(gpuenv_ctx_t *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err.hint, sizeof(ctx->err.hint), fmt, ap);
	va_end(ap);
	return ctx->err.code;
}

/* The one out-of-memory report: every allocation failure says "out of
 * memory" and, where the caller knows it, what was being done. */
int gpuenv_oom(gpuenv_ctx_t *ctx, const char *what)
{
	if (!ctx)
		return -ENOMEM;
	if (what)
		return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory %s", what);
	return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
}

int gpuenv_fail_prefix(gpuenv_ctx_t *ctx, int code, const char *file, unsigned line,
	unsigned col, const char *fmt, ...)
{
	gpuenv_error_t *e = &ctx->err;
	char inner[sizeof(e->msg)];
	va_list ap;
	int n;

	memcpy(inner, e->msg, sizeof(inner));
	inner[sizeof(inner) - 1] = '\0';
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n + 2 < sizeof(e->msg)) { /* ": inner", cut to fit */
		const char *tail = inner[0] ? inner : gpuenv_strerror(e->code);
		size_t at = (size_t)n + 2, k = strlen(tail);
		if (k > sizeof(e->msg) - 1 - at)
			k = sizeof(e->msg) - 1 - at;
		memcpy(e->msg + n, ": ", 2);
		memcpy(e->msg + at, tail, k);
		e->msg[at + k] = '\0';
	}
	e->code = code;
	if (file != e->file) /* keeping the file the inner error named */
		snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	e->line = line;
	e->col = col;
	return code;
}

void gpuenv_error_clear(gpuenv_ctx_t *ctx)
{
	memset(&ctx->err, 0, sizeof(ctx->err));
}

void gpuenv_error_format(const gpuenv_error_t *e, char *out, size_t outsz)
{
	size_t n = 0;
	int r;

	if (!outsz)
		return;
	out[0] = '\0';
	if (e->file[0]) {
		if (e->line && e->col)
			r = snprintf(out, outsz, "%s:%u:%u: ", e->file, e->line, e->col);
		else if (e->line)
			r = snprintf(out, outsz, "%s:%u: ", e->file, e->line);
		else
			r = snprintf(out, outsz, "%s: ", e->file);
		n = r < 0 ? 0 : (size_t)r;
		if (n >= outsz)
			return;
	}
	snprintf(out + n, outsz - n, "%s", e->msg[0] ? e->msg : gpuenv_strerror(e->code));
}

void *gpuenv_alloc(gpuenv_ctx_t *ctx, size_t size)
{
	return ctx->mem.alloc(ctx->mem.ud, size);
}

void *gpuenv_calloc(gpuenv_ctx_t *ctx, size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = ctx->mem.alloc(ctx->mem.ud, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *gpuenv_realloc(gpuenv_ctx_t *ctx, void *p, size_t size)
{
	return ctx->mem.realloc(ctx->mem.ud, p, size);
}

void gpuenv_free(gpuenv_ctx_t *ctx, void *p)
{
	if (p)
		ctx->mem.free(ctx->mem.ud, p);
}

char *gpuenv_strndup(gpuenv_ctx_t *ctx, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX)
		return NULL;
	p = gpuenv_alloc(ctx, n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* ---- slices ---- */

gpuenv_str_t gpuenv_str(const char *cstr)
{
	return (gpuenv_str_t){ cstr, cstr ? strlen(cstr) : 0 };
}

gpuenv_str_t gpuenv_str_n(const char *p, size_t n)
{
	return (gpuenv_str_t){ p, n };
}

bool gpuenv_str_eq(gpuenv_str_t a, gpuenv_str_t b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

bool gpuenv_str_eq_cstr(gpuenv_str_t a, const char *b)
{
	return gpuenv_str_eq(a, gpuenv_str(b));
}

bool gpuenv_str_ieq(gpuenv_str_t a, gpuenv_str_t b)
{
	if (a.len != b.len)
		return false;
	for (size_t i = 0; i < a.len; i++)
		if (gpuenv_to_lower((unsigned char)a.ptr[i]) != gpuenv_to_lower((unsigned char)b.ptr[i]))
			return false;
	return true;
}

int gpuenv_str_cmp(gpuenv_str_t a, gpuenv_str_t b)
{
	size_t n = a.len < b.len ? a.len : b.len;
	int r = n ? memcmp(a.ptr, b.ptr, n) : 0;

	if (r)
		return r;
	return a.len < b.len ? -1 : a.len > b.len;
}

bool gpuenv_str_startswith(gpuenv_str_t s, const char *prefix)
{
	size_t n = strlen(prefix);

	return s.len >= n && memcmp(s.ptr, prefix, n) == 0;
}

bool gpuenv_str_endswith(gpuenv_str_t s, const char *suffix)
{
	size_t n = strlen(suffix);

	return s.len >= n && memcmp(s.ptr + s.len - n, suffix, n) == 0;
}

gpuenv_str_t gpuenv_str_trim(gpuenv_str_t s)
{
	while (s.len && gpuenv_is_space(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	while (s.len && gpuenv_is_space(s.ptr[s.len - 1]))
		s.len--;
	return s;
}

gpuenv_str_t gpuenv_str_split(gpuenv_str_t s, char c, gpuenv_str_t *head)
{
	const char *p = s.len ? memchr(s.ptr, c, s.len) : NULL;

	if (!p) {
		*head = s;
		return GPUENV_STR_NULL;
	}
	*head = (gpuenv_str_t){ s.ptr, (size_t)(p - s.ptr) };
	return (gpuenv_str_t){ p + 1, s.len - (size_t)(p - s.ptr) - 1 };
}

bool gpuenv_str_to_u64(gpuenv_str_t s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		unsigned d = (unsigned char)s.ptr[i] - '0';
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool gpuenv_dl_syms(void *so, const char *const *names, size_t n, void **slots, const char **missing)
{
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(so, names[i]);
		if (!f) {
			*missing = names[i];
			memset(slots, 0, n * sizeof(*slots));
			return false;
		}
		memcpy(&slots[i], &f, sizeof(f));
	}
	return true;
}
