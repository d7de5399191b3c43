/* TOML writer: a document back to text that the parser reads back to the
 * same document.
 *
 * Layout, for each table written as a section: first its plain key/values
 * (dotted tables inline as `a.b = 1` lines), then its sub-tables as [header]
 * sections and its arrays of tables as [[header]] sections, all in insertion
 * order.  Tables that only hold sub-tables get no header of their own unless
 * they had one.  Arrays directly under a section go one element per line when
 * they hold tables or arrays or would make a long line.
 */
#include "gpuenv/toml.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LONG_LINE 100 /* arrays longer than this go one element per line */

struct writer {
	gpuenv_ctx_t *ctx;
	gpuenv_buf_t *out;
	const gpuenv_str_t **path; /* keys of the current section header */
	unsigned npath;
	const gpuenv_str_t **dots; /* keys of the dotted prefix of a line */
	size_t start;		   /* out->len before the document */
	int err;
};

static bool is_bare(gpuenv_str_t k)
{
	if (k.len == 0)
		return false;
	for (size_t i = 0; i < k.len; i++) {
		char c = k.ptr[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			c == '_' || c == '-'))
			return false;
	}
	return true;
}

int gpuenv_toml_write_string(gpuenv_buf_t *out, gpuenv_str_t s)
{
	static const char hex[] = "0123456789ABCDEF";
	int r;
	size_t run = 0;

	if ((r = gpuenv_buf_putc(out, '"')))
		return r;
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		char esc[7];
		size_t n = 2;
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		if (i > run && (r = gpuenv_buf_append(out, s.ptr + run, i - run)))
			return r;
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\t': esc[1] = 't'; break;
		case '\n': esc[1] = 'n'; break;
		case '\f': esc[1] = 'f'; break;
		case '\r': esc[1] = 'r'; break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		if ((r = gpuenv_buf_append(out, esc, n)))
			return r;
	}
	if (s.len > run && (r = gpuenv_buf_append(out, s.ptr + run, s.len - run)))
		return r;
	return gpuenv_buf_putc(out, '"');
}

int gpuenv_toml_write_key(gpuenv_buf_t *out, gpuenv_str_t key)
{
	if (is_bare(key))
		return gpuenv_buf_append(out, key.ptr, key.len);
	return gpuenv_toml_write_string(out, key);
}

size_t gpuenv_toml_format_float(double f, char *buf)
{
	size_t n;

	if (isnan(f) || isinf(f)) {
		const char *s = isnan(f) ? (signbit(f) ? "-nan" : "nan") : (f < 0 ? "-inf" : "inf");
		n = strlen(s);
		memcpy(buf, s, n + 1);
		return n;
	}
	/* printf and strtod follow LC_NUMERIC: switch to "C" around them */
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	locale_t old = c ? uselocale(c) : (locale_t)0;
	int prec, exp10;
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, 32, "%.*e", prec - 1, f);
		if (strtod(buf, NULL) == f)
			break;
	}
	snprintf(buf, 32, "%.*e", prec - 1, f);
	exp10 = (int)strtol(strchr(buf, 'e') + 1, NULL, 10);
	/* plain notation for everyday magnitudes, exponents beyond */
	if (exp10 >= -5 && exp10 < 16)
		snprintf(buf, 32, "%.*f", prec - 1 - exp10 > 0 ? prec - 1 - exp10 : 0, f);
	else
		snprintf(buf, 32, "%.*g", prec, f);
	if (c) {
		uselocale(old);
		freelocale(c);
	}
	n = strlen(buf);
	if (!strpbrk(buf, ".e")) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	return n;
}

static int fail(struct writer *w, int code, const char *msg, gpuenv_str_t key)
{
	if (!w->err)
		w->err = gpuenv_fail(w->ctx, code, NULL, 0, 0, "%s '%.*s'", msg,
			(int)(key.len > 60 ? 60 : key.len), key.ptr ? key.ptr : "");
	return w->err;
}

static int buf_err(struct writer *w, int r)
{
	if (!w->err)
		w->err = gpuenv_fail(w->ctx, r, NULL, 0, 0, "writing TOML: %s", gpuenv_strerror(r));
	return w->err;
}

static bool is_section(const gpuenv_toml_value_t *v)
{
	return v->type == GPUENV_TOML_TABLE && !(v->flags & GPUENV_TOML_INLINE);
}

static bool is_aot(const gpuenv_toml_value_t *v)
{
	if (v->type != GPUENV_TOML_ARRAY || !(v->flags & GPUENV_TOML_AOT) || !v->u.arr->len)
		return false;
	for (uint32_t i = 0; i < v->u.arr->len; i++)
		if (v->u.arr->items[i]->type != GPUENV_TOML_TABLE)
			return false;
	return true;
}

/* Would the key/value phase of t write anything? */
static bool emits_kv(const gpuenv_toml_table_t *t, unsigned depth)
{
	if (depth > GPUENV_TOML_DEPTH_LIMIT)
		return true; /* write_kvs reports the depth */
	for (uint32_t i = 0; i < t->len; i++) {
		const gpuenv_toml_value_t *v = &t->items[i]->val;
		if (is_section(v)) {
			if ((v->flags & GPUENV_TOML_DOTTED) && emits_kv(v->u.tab, depth + 1))
				return true;
			continue;
		}
		if (!is_aot(v))
			return true;
	}
	return false;
}

static bool as_dotted(const gpuenv_toml_value_t *v, unsigned depth)
{
	return is_section(v) && (v->flags & GPUENV_TOML_DOTTED) && emits_kv(v->u.tab, depth);
}

static int put(struct writer *w, const char *s, size_t n)
{
	int r = gpuenv_buf_append(w->out, s, n);
	return r ? buf_err(w, r) : 0;
}

#define PUTS(w, lit) put((w), (lit), sizeof(lit) - 1)

static int inline_value(struct writer *w, const gpuenv_toml_value_t *v, gpuenv_str_t key,
	unsigned depth);

static int inline_array(struct writer *w, const gpuenv_toml_array_t *a, gpuenv_str_t key,
	unsigned depth)
{
	int r;

	if ((r = PUTS(w, "[")))
		return r;
	for (uint32_t i = 0; i < a->len; i++) {
		if (i && (r = PUTS(w, ", ")))
			return r;
		if ((r = inline_value(w, a->items[i], key, depth + 1)))
			return r;
	}
	return PUTS(w, "]");
}

static int inline_table(struct writer *w, const gpuenv_toml_table_t *t, unsigned depth)
{
	int r;

	if (!t->len)
		return PUTS(w, "{}");
	if ((r = PUTS(w, "{ ")))
		return r;
	for (uint32_t i = 0; i < t->len; i++) {
		const gpuenv_toml_kv_t *kv = t->items[i];
		if (i && (r = PUTS(w, ", ")))
			return r;
		if ((r = gpuenv_toml_write_key(w->out, kv->key)))
			return buf_err(w, r);
		if ((r = PUTS(w, " = ")))
			return r;
		if ((r = inline_value(w, &kv->val, kv->key, depth + 1)))
			return r;
	}
	return PUTS(w, " }");
}

static int inline_value(struct writer *w, const gpuenv_toml_value_t *v, gpuenv_str_t key,
	unsigned depth)
{
	char num[40];
	size_t n;
	int r;

	if (depth > GPUENV_TOML_DEPTH_LIMIT)
		return fail(w, GPUENV_EFORMAT, "TOML document nested too deeply at", key);
	switch (v->type) {
	case GPUENV_TOML_STRING:
		r = gpuenv_toml_write_string(w->out, v->u.str);
		return r ? buf_err(w, r) : 0;
	case GPUENV_TOML_INTEGER:
		n = (size_t)snprintf(num, sizeof(num), "%" PRId64, v->u.i);
		return put(w, num, n);
	case GPUENV_TOML_FLOAT:
		n = gpuenv_toml_format_float(v->u.f, num);
		return put(w, num, n);
	case GPUENV_TOML_BOOL:
		return v->u.b ? PUTS(w, "true") : PUTS(w, "false");
	case GPUENV_TOML_DATETIME:
	case GPUENV_TOML_DATETIME_LOCAL:
	case GPUENV_TOML_DATE_LOCAL:
	case GPUENV_TOML_TIME_LOCAL:
		return put(w, v->u.str.ptr, v->u.str.len);
	case GPUENV_TOML_ARRAY:
		return inline_array(w, v->u.arr, key, depth);
	case GPUENV_TOML_TABLE:
		return inline_table(w, v->u.tab, depth);
	default:
		return fail(w, GPUENV_EFORMAT, "TOML value not set for key", key);
	}
}

/* An array right under a section: inline when short and flat, else one
 * element per line. */
static int section_array(struct writer *w, const gpuenv_toml_array_t *a, gpuenv_str_t key,
	size_t line_start, unsigned depth)
{
	size_t start = w->out->len;
	bool nested = false;
	int r;

	for (uint32_t i = 0; i < a->len; i++)
		if (a->items[i]->type == GPUENV_TOML_ARRAY || a->items[i]->type == GPUENV_TOML_TABLE)
			nested = true;
	if (!nested) {
		if ((r = inline_array(w, a, key, depth)))
			return r;
		if (w->out->len - line_start <= LONG_LINE)
			return 0;
		w->out->len = start; /* too long: again, one per line */
		w->out->data[start] = '\0';
	}
	if ((r = PUTS(w, "[\n")))
		return r;
	for (uint32_t i = 0; i < a->len; i++) {
		if ((r = PUTS(w, "    ")))
			return r;
		if ((r = inline_value(w, a->items[i], key, depth + 1)))
			return r;
		if ((r = PUTS(w, ",\n")))
			return r;
	}
	return PUTS(w, "]");
}

/* The key/value lines of a section; dotted tables become a.b = ... lines. */
static int write_kvs(struct writer *w, const gpuenv_toml_table_t *t, unsigned ndots,
	unsigned depth)
{
	int r;

	if (depth > GPUENV_TOML_DEPTH_LIMIT || ndots > GPUENV_TOML_DEPTH_LIMIT)
		return fail(w, GPUENV_EFORMAT, "TOML document nested too deeply at",
			t->len ? t->items[0]->key : GPUENV_STR_LIT(""));
	for (uint32_t i = 0; i < t->len; i++) {
		const gpuenv_toml_kv_t *kv = t->items[i];
		const gpuenv_toml_value_t *v = &kv->val;
		if (is_section(v)) {
			if (as_dotted(v, depth + 1)) {
				w->dots[ndots] = &kv->key;
				if ((r = write_kvs(w, v->u.tab, ndots + 1, depth + 1)))
					return r;
			}
			continue;
		}
		if (is_aot(v))
			continue;
		size_t line_start = w->out->len;
		for (unsigned d = 0; d < ndots; d++) {
			if ((r = gpuenv_toml_write_key(w->out, *w->dots[d])) ||
				(r = gpuenv_buf_putc(w->out, '.')))
				return buf_err(w, r);
		}
		if ((r = gpuenv_toml_write_key(w->out, kv->key)))
			return buf_err(w, r);
		if ((r = PUTS(w, " = ")))
			return r;
		if (v->type == GPUENV_TOML_ARRAY)
			r = section_array(w, v->u.arr, kv->key, line_start, depth + 1);
		else
			r = inline_value(w, v, kv->key, depth + 1);
		if (r || (r = PUTS(w, "\n")))
			return r;
	}
	return 0;
}

static int header(struct writer *w, bool aot)
{
	int r;

	if (w->out->len > w->start && (r = PUTS(w, "\n")))
		return r;
	if ((r = aot ? PUTS(w, "[[") : PUTS(w, "[")))
		return r;
	for (unsigned i = 0; i < w->npath; i++) {
		if (i && (r = PUTS(w, ".")))
			return r;
		if ((r = gpuenv_toml_write_key(w->out, *w->path[i])))
			return buf_err(w, r);
	}
	return aot ? PUTS(w, "]]\n") : PUTS(w, "]\n");
}

/* The sub-table sections of t (whose own lines are written). */
static int write_sections(struct writer *w, const gpuenv_toml_table_t *t, unsigned depth)
{
	int r;

	if (depth > GPUENV_TOML_DEPTH_LIMIT || w->npath >= GPUENV_TOML_DEPTH_LIMIT)
		return fail(w, GPUENV_EFORMAT, "TOML document nested too deeply at",
			t->len ? t->items[0]->key : GPUENV_STR_LIT(""));
	for (uint32_t i = 0; i < t->len; i++) {
		const gpuenv_toml_kv_t *kv = t->items[i];
		const gpuenv_toml_value_t *v = &kv->val;
		if (is_section(v)) {
			const gpuenv_toml_table_t *sub = v->u.tab;
			w->path[w->npath++] = &kv->key;
			if (!as_dotted(v, depth + 1) &&
				((v->flags & GPUENV_TOML_DEFINED) || !sub->len ||
					emits_kv(sub, depth + 1))) {
				if ((r = header(w, false)) || (r = write_kvs(w, sub, 0, depth + 1)))
					return r;
			}
			if ((r = write_sections(w, sub, depth + 1)))
				return r;
			w->npath--;
		} else if (is_aot(v)) {
			const gpuenv_toml_array_t *a = v->u.arr;
			w->path[w->npath++] = &kv->key;
			for (uint32_t j = 0; j < a->len; j++) {
				const gpuenv_toml_table_t *el = a->items[j]->u.tab;
				if ((r = header(w, true)) || (r = write_kvs(w, el, 0, depth + 2)) ||
					(r = write_sections(w, el, depth + 2)))
					return r;
			}
			w->npath--;
		}
	}
	return 0;
}

int gpuenv_toml_write(gpuenv_ctx_t *ctx, const gpuenv_toml_table_t *root, gpuenv_buf_t *out)
{
	struct writer w;
	size_t start = out->len;
	int r;

	memset(&w, 0, sizeof(w));
	w.ctx = ctx;
	w.out = out;
	w.start = start;
	w.path = gpuenv_calloc(ctx, GPUENV_TOML_DEPTH_LIMIT + 2, sizeof(*w.path));
	w.dots = gpuenv_calloc(ctx, GPUENV_TOML_DEPTH_LIMIT + 2, sizeof(*w.dots));
	if (!w.path || !w.dots) {
		gpuenv_free(ctx, w.path);
		gpuenv_free(ctx, w.dots);
		return gpuenv_oom(ctx, "writing TOML");
	}
	r = write_kvs(&w, root, 0, 0);
	if (!r)
		r = write_sections(&w, root, 0);
	gpuenv_free(ctx, w.path);
	gpuenv_free(ctx, w.dots);
	if (r && out->data) {
		/* leave the buffer as it was */
		out->len = start;
		out->data[start] = '\0';
	}
	return r;
}
