/* The base image of a Dockerfile's final stage (gpuenv/dockerfile.h). */
#include "gpuenv/dockerfile.h"

#include <errno.h>
#include <strings.h>
#include <string.h>

#define MAX_ARGS 64
#define MAX_STAGES 64

struct kv {
	gpuenv_str_t name, value;
	bool has_value;
};

struct stage {
	gpuenv_str_t image, alias, platform;
	unsigned line;
};

static gpuenv_str_t trim(gpuenv_str_t s)
{
	while (s.len && (gpuenv_is_blank(s.ptr[0]) || s.ptr[0] == '\r'))
		s.ptr++, s.len--;
	while (s.len && (gpuenv_is_blank(s.ptr[s.len - 1]) || s.ptr[s.len - 1] == '\r'))
		s.len--;
	return s;
}

static gpuenv_str_t next_word(gpuenv_str_t *rest)
{
	size_t i = 0;
	gpuenv_str_t w;

	*rest = trim(*rest);
	while (i < rest->len && !gpuenv_is_blank(rest->ptr[i]))
		i++;
	w = gpuenv_str_n(rest->ptr, i);
	*rest = gpuenv_str_n(rest->ptr + i, rest->len - i);
	return w;
}

static bool is_name_char(char c, bool first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

static const struct kv *find_arg(const struct kv *args, size_t n, gpuenv_str_t name)
{
	for (size_t i = n; i-- > 0;)
		if (gpuenv_str_eq(args[i].name, name))
			return &args[i];
	return NULL;
}

/* $NAME, ${NAME}, ${NAME:-word}, ${NAME:+word} with the global ARGs. */
static int substitute(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *file, unsigned line,
	gpuenv_str_t s, const struct kv *args, size_t nargs, char esc, gpuenv_str_t *out)
{
	gpuenv_buf_t b;
	int r = 0;

	gpuenv_buf_init(&b, ctx, 4096);
	for (size_t i = 0; i < s.len && !r; i++) {
		char c = s.ptr[i];
		gpuenv_str_t name, word = gpuenv_str_n(NULL, 0);
		char op = 0;
		const struct kv *v;
		if (c == esc && i + 1 < s.len && s.ptr[i + 1] == '$') {
			r = gpuenv_buf_putc(&b, '$');
			i++;
			continue;
		}
		if (c != '$') {
			r = gpuenv_buf_putc(&b, c);
			continue;
		}
		if (i + 1 < s.len && s.ptr[i + 1] == '{') {
			size_t j = i + 2, k;
			while (j < s.len && s.ptr[j] != '}')
				j++;
			if (j == s.len) {
				r = gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 0, "an unclosed ${ in FROM");
				break;
			}
			name = gpuenv_str_n(s.ptr + i + 2, j - i - 2);
			for (k = 0; k < name.len && is_name_char(name.ptr[k], k == 0); k++)
				;
			if (k + 1 < name.len && name.ptr[k] == ':' && (name.ptr[k + 1] == '-' || name.ptr[k + 1] == '+')) {
				op = name.ptr[k + 1];
				word = gpuenv_str_n(name.ptr + k + 2, name.len - k - 2);
				name.len = k;
			} else if (k != name.len || !k) {
				r = gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 0, "'${%.*s}' in FROM is not a "
					"variable gpuenv can substitute", (int)(name.len > 40 ? 40 : name.len), name.ptr);
				break;
			}
			i = j;
		} else {
			size_t j = i + 1;
			while (j < s.len && is_name_char(s.ptr[j], j == i + 1))
				j++;
			if (j == i + 1) {
				r = gpuenv_buf_putc(&b, '$');
				continue;
			}
			name = gpuenv_str_n(s.ptr + i + 1, j - i - 1);
			i = j - 1;
		}
		v = find_arg(args, nargs, name);
		if (op == '-' && (!v || !v->has_value || !v->value.len))
			r = gpuenv_buf_append(&b, word.ptr, word.len);
		else if (op == '+')
			r = v && v->has_value && v->value.len ? gpuenv_buf_append(&b, word.ptr, word.len) : 0;
		else if (v && v->has_value)
			r = gpuenv_buf_append(&b, v->value.ptr, v->value.len);
		else {
			gpuenv_fail(ctx, GPUENV_ESYNTAX, file, line, 0, "FROM uses $%.*s, which %s", GPUENV_STR_ARG(name),
				v ? "is declared without a default" : "no ARG before the first FROM declares");
			r = gpuenv_hint(ctx, "give it a default (ARG %.*s=VALUE), as the build would need "
					     "--build-arg otherwise", GPUENV_STR_ARG(name));
		}
	}
	if (!r) {
		char *p = gpuenv_arena_strndup(a, b.len ? b.data : "", b.len);
		if (!p)
			r = gpuenv_oom(ctx, "a Dockerfile");
		else
			*out = gpuenv_str_n(p, b.len);
	} else if (r == -ENOMEM || r == GPUENV_ETOOBIG)
		r = gpuenv_fail(ctx, r, file, line, 0, "FROM is too long");
	gpuenv_buf_free(&b);
	return r;
}

int gpuenv_dockerfile_base(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const char *text, size_t len, gpuenv_dockerfile_base_t *out)
{
	struct kv args[MAX_ARGS];
	struct stage st[MAX_STAGES];
	size_t nargs = 0, nst = 0, pos = 0;
	unsigned line = 0;
	char esc = '\\';
	bool directives = true;
	gpuenv_buf_t logical;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (len > GPUENV_DOCKERFILE_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0, "%zu bytes, more than a Dockerfile "
			"gpuenv reads (%zu)", len, GPUENV_DOCKERFILE_MAX);
	if (memchr(text, '\0', len))
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, 0, 0, "a NUL byte: not a Dockerfile");
	gpuenv_buf_init(&logical, ctx, GPUENV_DOCKERFILE_MAX);
	while (pos < len && !r) {
		unsigned start = 0;
		gpuenv_buf_reset(&logical);
		/* one logical line: physical lines joined where one ends with the escape */
		for (;;) {
			size_t e = pos;
			gpuenv_str_t l;
			while (e < len && text[e] != '\n')
				e++;
			l = gpuenv_str_n(text + pos, e - pos);
			pos = e < len ? e + 1 : e;
			line++;
			if (!start)
				start = line;
			{
				gpuenv_str_t t = trim(l);
				/* comment lines inside a continued instruction are dropped */
				if (logical.len && t.len && t.ptr[0] == '#')
					continue;
				if (t.len && t.ptr[t.len - 1] == esc) {
					gpuenv_buf_append(&logical, t.ptr, t.len - 1);
					gpuenv_buf_putc(&logical, ' ');
					if (pos >= len)
						break;
					continue;
				}
				gpuenv_buf_append(&logical, t.ptr, t.len);
			}
			break;
		}
		{
			gpuenv_str_t l = trim(gpuenv_str_n(logical.data ? logical.data : "", logical.len)), kw, rest;
			if (!l.len)
				continue;
			if (l.ptr[0] == '#') {
				/* parser directives: "# escape=`" before any instruction */
				gpuenv_str_t d = trim(gpuenv_str_n(l.ptr + 1, l.len - 1));
				if (directives && d.len > 7 && !strncmp(d.ptr, "escape=", 7) && d.len == 8 &&
					(d.ptr[7] == '`' || d.ptr[7] == '\\'))
					esc = d.ptr[7];
				else if (!(directives && (d.len > 7 && !strncmp(d.ptr, "syntax=", 7))))
					directives = false;
				continue;
			}
			directives = false;
			rest = l;
			kw = next_word(&rest);
			rest = trim(rest);
			if (kw.len == 3 && !strncasecmp(kw.ptr, "ARG", 3) && nst == 0) {
				/* ARG NAME[=VALUE] ... before the first FROM: for FROM lines */
				while (rest.len && nargs < MAX_ARGS) {
					gpuenv_str_t w = next_word(&rest);
					const char *eq = memchr(w.ptr, '=', w.len);
					struct kv *k = &args[nargs++];
					k->name = eq ? gpuenv_str_n(w.ptr, (size_t)(eq - w.ptr)) : w;
					k->has_value = eq != NULL;
					k->value = eq ? gpuenv_str_n(eq + 1, w.len - (size_t)(eq - w.ptr) - 1) : gpuenv_str_n(NULL, 0);
					if (k->value.len >= 2 && (k->value.ptr[0] == '"' || k->value.ptr[0] == '\'') &&
						k->value.ptr[k->value.len - 1] == k->value.ptr[0])
						k->value = gpuenv_str_n(k->value.ptr + 1, k->value.len - 2);
					/* the line's buffer is reused: the arena keeps them */
					k->name = gpuenv_arena_str(arena, k->name);
					if (k->has_value)
						k->value = gpuenv_arena_str(arena, k->value);
					if (!k->name.ptr || (k->has_value && !k->value.ptr)) {
						r = gpuenv_oom(ctx, "a Dockerfile");
						break;
					}
					rest = trim(rest);
				}
			} else if (kw.len == 4 && !strncasecmp(kw.ptr, "FROM", 4)) {
				struct stage *s;
				gpuenv_str_t w = next_word(&rest), img;
				if (nst == MAX_STAGES) {
					r = gpuenv_fail(ctx, GPUENV_ETOOBIG, file, start, 0, "more than %d stages",
						MAX_STAGES);
					break;
				}
				s = &st[nst];
				memset(s, 0, sizeof(*s));
				s->line = start;
				while (w.len > 2 && w.ptr[0] == '-' && w.ptr[1] == '-') {
					if (w.len > 11 && !strncmp(w.ptr, "--platform=", 11))
						s->platform = gpuenv_str_n(w.ptr + 11, w.len - 11);
					w = next_word(&rest);
				}
				if (!w.len) {
					r = gpuenv_fail(ctx, GPUENV_ESYNTAX, file, start, 0, "FROM without an image");
					break;
				}
				img = w;
				w = next_word(&rest);
				if (w.len) {
					if (!(w.len == 2 && !strncasecmp(w.ptr, "AS", 2)) || !(s->alias = next_word(&rest)).len ||
						next_word(&rest).len) {
						r = gpuenv_fail(ctx, GPUENV_ESYNTAX, file, start, 0, "FROM takes IMAGE "
							"[AS NAME], not '%.*s'", (int)(l.len > 80 ? 80 : l.len), l.ptr);
						break;
					}
				}
				if (s->alias.len && !(s->alias = gpuenv_arena_str(arena, s->alias)).ptr) {
					r = gpuenv_oom(ctx, "a Dockerfile");
					break;
				}
				if ((r = substitute(ctx, arena, file, start, img, args, nargs, esc, &s->image)))
					break;
				if (s->platform.len &&
					(r = substitute(ctx, arena, file, start, s->platform, args, nargs, esc, &s->platform)))
					break;
				nst++;
			}
		}
	}
	gpuenv_buf_free(&logical);
	if (r)
		return r;
	if (!nst)
		return gpuenv_fail(ctx, GPUENV_ESYNTAX, file, 0, 0, "no FROM instruction: not a Dockerfile");
	out->stages = (unsigned)nst;
	{
		size_t cur = nst - 1;
		out->stage = st[cur].alias.len ? gpuenv_arena_strndup(arena, st[cur].alias.ptr, st[cur].alias.len) : NULL;
		/* a stage FROM an earlier stage: follow it (each hop goes to an earlier stage) */
		for (;;) {
			size_t k;
			for (k = 0; k < cur; k++)
				if (st[k].alias.len && gpuenv_str_ieq(st[k].alias, st[cur].image))
					break;
			if (k == cur)
				break;
			cur = k;
		}
		if (gpuenv_str_eq_cstr(st[cur].image, "scratch")) {
			gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, file, st[cur].line, 0, "the final stage is FROM "
				"scratch: there is no base image to judge");
			return gpuenv_hint(ctx, "preflight the image the binary needs instead (--image)");
		}
		out->image = gpuenv_arena_strndup(arena, st[cur].image.ptr, st[cur].image.len);
		out->platform = st[cur].platform.len ?
			gpuenv_arena_strndup(arena, st[cur].platform.ptr, st[cur].platform.len) : NULL;
		out->line = st[cur].line;
		if (!out->image)
			return gpuenv_oom(ctx, "a Dockerfile");
	}
	return 0;
}
