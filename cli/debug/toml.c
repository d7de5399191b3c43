/* debug subcommands: toml-decode and toml-encode, the two sides of the
 * toml-test protocol (https://github.com/toml-lang/toml-test): TOML in,
 * tagged JSON out, and back. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/toml.h"

/* ---- TOML -> tagged JSON ---- */

static json_t *tagged(const char *type, const char *value, size_t len)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(o, "type", json_string(type)) ||
		json_object_set_new(o, "value", json_stringn(value, len))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* toml-test writes date/times with 'T' and 'Z'; the document keeps the text
 * as written ('t', ' ', 'z' are valid too). */
static json_t *tagged_datetime(const char *type, gpuenv_str_t s)
{
	char buf[64];
	size_t n = s.len < sizeof(buf) ? s.len : sizeof(buf) - 1;

	memcpy(buf, s.ptr, n);
	for (size_t i = 0; i < n; i++) {
		if (i == 10 && (buf[i] == ' ' || buf[i] == 't'))
			buf[i] = 'T';
		else if (buf[i] == 'z')
			buf[i] = 'Z';
	}
	return tagged(type, buf, n);
}

static json_t *to_json(const gpuenv_toml_value_t *v)
{
	char num[40];
	size_t n;

	switch (v->type) {
	case GPUENV_TOML_STRING:
		return tagged("string", v->u.str.ptr, v->u.str.len);
	case GPUENV_TOML_INTEGER:
		n = (size_t)snprintf(num, sizeof(num), "%" PRId64, v->u.i);
		return tagged("integer", num, n);
	case GPUENV_TOML_FLOAT:
		n = gpuenv_toml_format_float(v->u.f, num);
		if (num[0] == '-' && num[1] == 'n') /* toml-test has one nan */
			return tagged("float", "nan", 3);
		return tagged("float", num, n);
	case GPUENV_TOML_BOOL:
		return v->u.b ? tagged("bool", "true", 4) : tagged("bool", "false", 5);
	case GPUENV_TOML_DATETIME:
		return tagged_datetime("datetime", v->u.str);
	case GPUENV_TOML_DATETIME_LOCAL:
		return tagged_datetime("datetime-local", v->u.str);
	case GPUENV_TOML_DATE_LOCAL:
		return tagged_datetime("date-local", v->u.str);
	case GPUENV_TOML_TIME_LOCAL:
		return tagged_datetime("time-local", v->u.str);
	case GPUENV_TOML_ARRAY: {
		json_t *a = json_array();
		for (uint32_t i = 0; a && i < v->u.arr->len; i++) {
			if (json_array_append_new(a, to_json(v->u.arr->items[i]))) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	case GPUENV_TOML_TABLE: {
		json_t *o = json_object();
		const gpuenv_toml_table_t *t = v->u.tab;
		for (uint32_t i = 0; o && i < t->len; i++) {
			const gpuenv_toml_kv_t *kv = t->items[i];
			if (json_object_setn_new_nocheck(o, kv->key.ptr, kv->key.len,
				    to_json(&kv->val))) {
				json_decref(o);
				return NULL;
			}
		}
		return o;
	}
	default:
		return NULL;
	}
}

/* CPU time of the process (user + system), for runs on a busy machine */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int toml_decode(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "time", no_argument, NULL, 't' },
		{ "copy", no_argument, NULL, 'C' },
		{ "repeat", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	bool check = false, timing = false, copy = false;
	uint64_t repeat = 1;
	const char *path = "-";
	gpuenv_buf_t in;
	gpuenv_toml_doc_t doc;
	int c, st, r;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'c')
			check = true;
		else if (c == 't')
			timing = true;
		else if (c == 'C')
			copy = true;
		else if (c == 'r' && (!gpuenv_str_to_u64(gpuenv_str(optarg), &repeat) || !repeat ||
					     repeat > 1000))
			return cli_usage_error(cli, verb, "%s: --repeat needs a number from 1 to 1000",
				verb->name);
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: one FILE at most", verb->name);

	gpuenv_buf_init(&in, &cli->ctx, GPUENV_TOML_MAX_SIZE);
	if ((st = cli_read_input(cli, path, GPUENV_TOML_MAX_SIZE, &in))) {
		gpuenv_buf_free(&in);
		return st;
	}
	/* the read buffer is NUL-terminated and outlives the document: no copy
	 * needed unless --copy asks for the library's default path.  --repeat
	 * parses again (freeing in between) to time a warm process. */
	/* (an empty read may leave data[0] unset: gpuenv_buf_reserve does not
	 * write the terminator) */
	const char *text = in.data && in.len ? in.data : "";
	for (uint64_t i = 0;; i++) {
		if (gpuenv_toml_doc_init(&doc, &cli->ctx, strcmp(path, "-") ? path : "<stdin>")) {
			gpuenv_buf_free(&in);
			return cli_report(cli, CLI_EXIT_FAIL);
		}
		double t0 = cli_now_s(), c0 = cpu_s();
		r = copy ? gpuenv_toml_parse(&doc, text, in.len) :
			gpuenv_toml_parse_borrowed(&doc, text, in.len);
		double t1 = cli_now_s(), c1 = cpu_s();
		if (timing)
			fprintf(stderr, "%s: parsed %zu bytes in %.3f ms (%.1f MB/s), cpu %.3f ms%s\n",
				verb->name, in.len, (t1 - t0) * 1e3,
				t1 > t0 ? (double)in.len / (t1 - t0) / 1e6 : 0.0, (c1 - c0) * 1e3,
				copy ? " (with copy)" : "");
		if (r || i + 1 >= repeat)
			break;
		gpuenv_toml_doc_free(&doc);
	}
	if (r) {
		st = cli_report(cli, CLI_EXIT_FAIL);
	} else if (check) {
		st = CLI_EXIT_OK;
	} else {
		gpuenv_toml_value_t root = { .type = GPUENV_TOML_TABLE, .u.tab = doc.root };
		st = cli_print_json(cli, to_json(&root));
	}
	gpuenv_toml_doc_free(&doc);
	gpuenv_buf_free(&in);
	return st;
}

/* ---- tagged JSON -> TOML ----
 * A small JSON reader of our own: toml-test's keys may hold U+0000, which
 * jansson refuses in object keys. */

enum { J_OBJ, J_ARR, J_STR, J_OTHER };

struct jnode {
	int kind;
	gpuenv_str_t s; /* J_STR: the decoded string; J_OTHER: the token */
	struct jnode **items;
	gpuenv_str_t *keys; /* J_OBJ */
	size_t n, cap;
};

struct jp {
	const char *p, *end;
	gpuenv_arena_t *a;
	const char *err;
};

#define JSON_MAX_DEPTH 256

static void jws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int jhex4(const char *p, const char *end, uint32_t *out)
{
	uint32_t v = 0;
	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (uint32_t)((c | 0x20) - 'a' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static bool jstring(struct jp *j, gpuenv_str_t *out)
{
	const char *p = j->p + 1;
	char *o = gpuenv_arena_alloc(j->a, (size_t)(j->end - p) + 1);
	size_t n = 0;

	if (!o)
		return (j->err = "out of memory"), false;
	while (p < j->end && *p != '"') {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20)
			return (j->err = "control character in a JSON string"), false;
		if (c != '\\') {
			o[n++] = (char)c;
			p++;
			continue;
		}
		if (++p >= j->end)
			break;
		char e = *p++;
		const char *simple = strchr("\"\\/bfnrt", e);
		if (simple && e) {
			static const char to[] = "\"\\/\b\f\n\r\t";
			o[n++] = to[simple - "\"\\/bfnrt"];
			continue;
		}
		uint32_t cp, lo;
		if (e != 'u' || jhex4(p, j->end, &cp))
			return (j->err = "invalid escape in a JSON string"), false;
		p += 4;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (j->end - p < 6 || p[0] != '\\' || p[1] != 'u' || jhex4(p + 2, j->end, &lo) ||
				lo < 0xdc00 || lo > 0xdfff)
				return (j->err = "unpaired surrogate in a JSON string"), false;
			p += 6;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			return (j->err = "unpaired surrogate in a JSON string"), false;
		}
		if (cp < 0x80) {
			o[n++] = (char)cp;
		} else if (cp < 0x800) {
			o[n++] = (char)(0xc0 | (cp >> 6));
			o[n++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			o[n++] = (char)(0xe0 | (cp >> 12));
			o[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			o[n++] = (char)(0x80 | (cp & 0x3f));
		} else {
			o[n++] = (char)(0xf0 | (cp >> 18));
			o[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			o[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			o[n++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	if (p >= j->end)
		return (j->err = "unterminated JSON string"), false;
	j->p = p + 1;
	o[n] = '\0';
	*out = (gpuenv_str_t){ o, n };
	return true;
}

static bool jappend(struct jp *j, struct jnode *parent, gpuenv_str_t key, struct jnode *child)
{
	if (parent->n == parent->cap) {
		size_t ncap = parent->cap ? parent->cap * 2 : 8;
		struct jnode **ni = gpuenv_arena_alloc(j->a, ncap * sizeof(*ni));
		gpuenv_str_t *nk = gpuenv_arena_alloc(j->a, ncap * sizeof(*nk));
		if (!ni || !nk)
			return (j->err = "out of memory"), false;
		if (parent->n) {
			memcpy(ni, parent->items, parent->n * sizeof(*ni));
			memcpy(nk, parent->keys, parent->n * sizeof(*nk));
		}
		parent->items = ni;
		parent->keys = nk;
		parent->cap = ncap;
	}
	parent->items[parent->n] = child;
	parent->keys[parent->n++] = key;
	return true;
}

static struct jnode *jvalue(struct jp *j, int depth)
{
	struct jnode *nd;

	if (depth > JSON_MAX_DEPTH)
		return (j->err = "JSON nested too deeply"), NULL;
	jws(j);
	if (j->p >= j->end)
		return (j->err = "unexpected end of JSON"), NULL;
	nd = gpuenv_arena_calloc(j->a, 1, sizeof(*nd));
	if (!nd)
		return (j->err = "out of memory"), NULL;
	char c = *j->p;
	if (c == '"') {
		nd->kind = J_STR;
		return jstring(j, &nd->s) ? nd : NULL;
	}
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		nd->kind = c == '{' ? J_OBJ : J_ARR;
		j->p++;
		jws(j);
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return nd;
		}
		for (;;) {
			gpuenv_str_t key = GPUENV_STR_NULL;
			jws(j);
			if (nd->kind == J_OBJ) {
				if (j->p >= j->end || *j->p != '"')
					return (j->err = "expected a key string"), NULL;
				if (!jstring(j, &key))
					return NULL;
				jws(j);
				if (j->p >= j->end || *j->p != ':')
					return (j->err = "expected ':'"), NULL;
				j->p++;
			}
			struct jnode *child = jvalue(j, depth + 1);
			if (!child || !jappend(j, nd, key, child))
				return NULL;
			jws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == close) {
				j->p++;
				return nd;
			}
			return (j->err = "expected ',' or a closing bracket"), NULL;
		}
	}
	/* numbers, true, false, null: kept as text, refused later */
	const char *s = j->p;
	while (j->p < j->end && strchr(",]} \t\r\n", *j->p) == NULL)
		j->p++;
	nd->kind = J_OTHER;
	nd->s = (gpuenv_str_t){ s, (size_t)(j->p - s) };
	return nd;
}

struct enc {
	struct cli *cli;
	gpuenv_toml_doc_t *doc;
};

/* {"type": "...", "value": "..."}: returns the two strings */
static bool is_tagged(const struct jnode *nd, gpuenv_str_t *type, gpuenv_str_t *value)
{
	int got = 0;

	if (nd->kind != J_OBJ || nd->n != 2)
		return false;
	for (size_t i = 0; i < 2; i++) {
		if (nd->items[i]->kind != J_STR)
			return false;
		if (gpuenv_str_eq_cstr(nd->keys[i], "type")) {
			*type = nd->items[i]->s;
			got |= 1;
		} else if (gpuenv_str_eq_cstr(nd->keys[i], "value")) {
			*value = nd->items[i]->s;
			got |= 2;
		}
	}
	return got == 3;
}

static int enc_fail(struct enc *e, const char *what, gpuenv_str_t s)
{
	return gpuenv_fail(&e->cli->ctx, GPUENV_EFORMAT, NULL, 0, 0, "%s '%.*s'", what,
		(int)(s.len > 60 ? 60 : s.len), s.ptr);
}

static int enc_scalar(struct enc *e, gpuenv_str_t type, gpuenv_str_t val, gpuenv_toml_value_t *v)
{
	char buf[512];
	char *end;

	if (gpuenv_str_eq_cstr(type, "string"))
		return gpuenv_toml_set_string(e->doc, v, val);
	if (val.len >= sizeof(buf) || memchr(val.ptr, '\0', val.len))
		return enc_fail(e, "invalid value", val);
	memcpy(buf, val.ptr, val.len);
	buf[val.len] = '\0';
	if (gpuenv_str_eq_cstr(type, "integer")) {
		errno = 0;
		long long i = strtoll(buf, &end, 10);
		if (errno || end == buf || *end)
			return enc_fail(e, "invalid integer value", val);
		gpuenv_toml_set_integer(v, (int64_t)i);
		return 0;
	}
	if (gpuenv_str_eq_cstr(type, "float")) {
		const char *p = buf + (buf[0] == '+' || buf[0] == '-');
		double f;
		if (strcmp(p, "inf") == 0)
			f = buf[0] == '-' ? -__builtin_inf() : __builtin_inf();
		else if (strcmp(p, "nan") == 0)
			f = buf[0] == '-' ? -__builtin_nan("") : __builtin_nan("");
		else {
			f = strtod(buf, &end);
			if (end == buf || *end)
				return enc_fail(e, "invalid float value", val);
		}
		gpuenv_toml_set_float(v, f);
		return 0;
	}
	if (gpuenv_str_eq_cstr(type, "bool")) {
		if (strcmp(buf, "true") && strcmp(buf, "false"))
			return enc_fail(e, "invalid bool value", val);
		gpuenv_toml_set_bool(v, buf[0] == 't');
		return 0;
	}
	int want = gpuenv_str_eq_cstr(type, "datetime") ? GPUENV_TOML_DATETIME :
		gpuenv_str_eq_cstr(type, "datetime-local") ? GPUENV_TOML_DATETIME_LOCAL :
		gpuenv_str_eq_cstr(type, "date-local")	   ? GPUENV_TOML_DATE_LOCAL :
		gpuenv_str_eq_cstr(type, "time-local")	   ? GPUENV_TOML_TIME_LOCAL :
							     0;
	if (!want)
		return enc_fail(e, "unknown type", type);
	int r = gpuenv_toml_set_datetime(e->doc, v, val);
	if (r)
		return r;
	if (v->type != want)
		return enc_fail(e, "date/time does not match its type", val);
	return 0;
}

static int enc_value(struct enc *e, const struct jnode *nd, gpuenv_toml_value_t *v, bool in_array)
{
	gpuenv_str_t type, val;
	int r;

	if (is_tagged(nd, &type, &val))
		return enc_scalar(e, type, val, v);
	if (nd->kind == J_OBJ) {
		gpuenv_toml_table_t *t = gpuenv_toml_set_table(e->doc, v,
			in_array ? GPUENV_TOML_INLINE : 0);
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < nd->n; i++) {
			gpuenv_toml_value_t *nv = gpuenv_toml_table_add(e->doc, t, nd->keys[i]);
			if (!nv)
				return e->cli->ctx.err.code;
			if ((r = enc_value(e, nd->items[i], nv, in_array)))
				return r;
		}
		return 0;
	}
	if (nd->kind == J_ARR) {
		/* a non-empty array of plain tables becomes [[sections]] */
		bool aot = !in_array && nd->n > 0;
		for (size_t i = 0; i < nd->n; i++)
			if (nd->items[i]->kind != J_OBJ || is_tagged(nd->items[i], &type, &val))
				aot = false;
		gpuenv_toml_array_t *a = gpuenv_toml_set_array(e->doc, v, aot ? GPUENV_TOML_AOT : 0);
		if (!a)
			return -ENOMEM;
		for (size_t i = 0; i < nd->n; i++) {
			gpuenv_toml_value_t *nv = gpuenv_toml_array_push(e->doc, a);
			if (!nv)
				return -ENOMEM;
			if ((r = enc_value(e, nd->items[i], nv, !aot)))
				return r;
		}
		return 0;
	}
	return enc_fail(e, "expected an object, an array or a {\"type\", \"value\"} pair, not",
		nd->s);
}

static int cli_debug_toml_encode(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	gpuenv_buf_t in, out;
	gpuenv_toml_doc_t doc;
	gpuenv_arena_t ja;
	const char *path = "-";
	int c, st, r;

	while ((c = cli_getopt(cli, verb, argc, argv, "", NULL, &st)) != -1)
		if (c == CLI_OPT_EXIT)
			return st;
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: one FILE at most", verb->name);

	gpuenv_buf_init(&in, &cli->ctx, GPUENV_TOML_MAX_SIZE);
	if ((st = cli_read_input(cli, path, GPUENV_TOML_MAX_SIZE, &in))) {
		gpuenv_buf_free(&in);
		return st;
	}
	gpuenv_arena_init(&ja, &cli->ctx, 0);
	struct jp j = { in.data ? in.data : "", (in.data ? in.data : "") + in.len, &ja, NULL };
	struct jnode *top = jvalue(&j, 0);
	if (top) {
		jws(&j);
		if (j.p != j.end) {
			j.err = "text after the JSON value";
			top = NULL;
		}
	}
	if (!top) {
		st = cli_error(cli, CLI_EXIT_FAIL, "%s: invalid JSON at byte %zu: %s", verb->name,
			(size_t)(j.p - (in.data ? in.data : "")), j.err);
		gpuenv_arena_free(&ja);
		gpuenv_buf_free(&in);
		return st;
	}
	gpuenv_str_t type, val;
	if (top->kind != J_OBJ || is_tagged(top, &type, &val)) {
		gpuenv_arena_free(&ja);
		gpuenv_buf_free(&in);
		return cli_error(cli, CLI_EXIT_FAIL, "%s: the JSON must be an object (a table)",
			verb->name);
	}
	r = gpuenv_toml_doc_init(&doc, &cli->ctx, NULL);
	gpuenv_toml_value_t root = { .type = GPUENV_TOML_TABLE, .u.tab = doc.root };
	struct enc e = { cli, &doc };
	for (size_t i = 0; !r && i < top->n; i++) {
		gpuenv_toml_value_t *nv = gpuenv_toml_table_add(&doc, root.u.tab, top->keys[i]);
		r = nv ? enc_value(&e, top->items[i], nv, false) : cli->ctx.err.code;
	}
	gpuenv_arena_free(&ja);
	gpuenv_buf_free(&in);
	gpuenv_buf_init(&out, &cli->ctx, 0);
	if (!r)
		r = gpuenv_toml_write(&cli->ctx, doc.root, &out);
	gpuenv_toml_doc_free(&doc);
	if (r) {
		gpuenv_buf_free(&out);
		if (r == -ENOMEM && cli->ctx.err.code != -ENOMEM)
			return cli_error(cli, CLI_EXIT_FAIL, "%s: out of memory", verb->name);
		return cli_report(cli, CLI_EXIT_FAIL);
	}
	if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len)
		st = cli_error(cli, CLI_EXIT_FAIL, "%s: write error", verb->name);
	else
		st = CLI_EXIT_OK;
	gpuenv_buf_free(&out);
	return st;
}

/* Big documents fault in tens of MB of fresh memory: parse with the bulk
 * (huge-page) allocator, as version-sort does. */
static int cli_debug_toml_decode(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	gpuenv_allocator_t saved = cli->ctx.mem;
	int status;

	gpuenv_allocator_bulk(&cli->ctx.mem);
	status = toml_decode(cli, verb, argc, argv);
	cli->ctx.mem = saved;
	return status;
}

const struct cli_verb cli_verb_debug_toml_decode = {
	.name = "toml-decode",
	.run = cli_debug_toml_decode,
	.summary = "read TOML on stdin and write toml-test's tagged JSON on stdout; exit 1 on invalid TOML",
	.usage = "gpuenv debug toml-decode [--check] [--time] [--copy] [--repeat N] [FILE.toml] (default: stdin)",
	.help = "  --check   parse only: no output, the exit status says whether it is valid\n"
		"  --time    print the parse time and throughput on stderr\n"
		"  --copy    parse through gpuenv_toml_parse (copies the input) instead of\n"
		"            gpuenv_toml_parse_borrowed (benchmarks)\n"
		"  --repeat N  parse N times in this process (benchmarks, with --time)\n",
};

const struct cli_verb cli_verb_debug_toml_encode = {
	.name = "toml-encode",
	.run = cli_debug_toml_encode,
	.summary = "read toml-test's tagged JSON on stdin and write TOML on stdout",
	.usage = "gpuenv debug toml-encode [FILE.json] (default: stdin)",
	.help = NULL,
};
