/* The registry client's pure parsers (include/gpuenv/registry.h): RFC 7235
 * challenges of WWW-Authenticate, image indexes and manifests (OCI image
 * spec; Docker's manifest list and image manifest v2 schema 2), image
 * configs, token answers and docker's config.json.  jansson decodes; values
 * are copied into the caller's arena.  No credential reaches a message. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gpuenv/json.h"
#include "gpuenv/metadata.h"
#include "gpuenv/registry.h"

#define CHALLENGE_MAX 8192
#define TOKEN_LEN_MAX 16384
#define DOCKER_CONFIG_MAX ((size_t)1 << 20)

bool gpuenv_registry_digest_valid(gpuenv_str_t s)
{
	if (s.len != 7 + 64 || memcmp(s.ptr, "sha256:", 7))
		return false;
	for (size_t i = 7; i < s.len; i++)
		if (!((s.ptr[i] >= '0' && s.ptr[i] <= '9') || (s.ptr[i] >= 'a' && s.ptr[i] <= 'f')))
			return false;
	return true;
}

/* ---- WWW-Authenticate ------------------------------------------------------ */

static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		(c && strchr("!#$%&'*+-.^_`|~", c));
}

typedef struct chal {
	gpuenv_str_t scheme, realm, service, scope;
} chal_t;

#define MAX_CHALLENGES 16

static int chal_bad(gpuenv_ctx_t *ctx, size_t at, const char *what)
{
	gpuenv_fail(ctx, GPUENV_ESYNTAX, "WWW-Authenticate", 0, (unsigned)at + 1,
		"malformed challenge: %s", what);
	return gpuenv_hint(ctx, "the registry's 401 answer is not an RFC 7235 challenge "
				"(Bearer realm=\"...\",service=\"...\",scope=\"...\")");
}

int gpuenv_registry_challenge_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t header,
	gpuenv_registry_challenge_t *out)
{
	chal_t ch[MAX_CHALLENGES];
	const char *s = header.ptr ? header.ptr : "";
	size_t n = header.len, i = 0, nch = 0;
	/* quoted values are unescaped into this copy */
	char *buf;
	size_t bl = 0;

	memset(out, 0, sizeof(*out));
	if (n > CHALLENGE_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, "WWW-Authenticate", 0, 0,
			"the challenge is %zu bytes, more than %d", n, CHALLENGE_MAX);
	if (!(buf = gpuenv_arena_alloc(arena, n + 1)))
		return gpuenv_oom(ctx, "for a registry challenge");
	memset(ch, 0, sizeof(ch));
	for (;;) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		if (i >= n)
			break;
		size_t t0 = i;
		while (i < n && (tchar(s[i]) || s[i] == '/'))
			i++;
		if (i == t0)
			return chal_bad(ctx, i, "expected a scheme or a parameter name");
		gpuenv_str_t tok = gpuenv_str_n(s + t0, i - t0);
		size_t j = i;
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j >= n || s[j] != '=') {
			/* a new challenge */
			if (memchr(tok.ptr, '/', tok.len))
				return chal_bad(ctx, t0, "a scheme is a token");
			if (nch == MAX_CHALLENGES)
				return chal_bad(ctx, t0, "more than 16 challenges");
			ch[nch++].scheme = tok;
			continue;
		}
		if (!nch)
			return chal_bad(ctx, t0, "a parameter before any scheme");
		i = j + 1;
		{
			/* token68 ("abc=="): '='s then the end or a comma */
			size_t k = i;
			while (k < n && s[k] == '=')
				k++;
			size_t e = k;
			while (e < n && (s[e] == ' ' || s[e] == '\t'))
				e++;
			if (e >= n || s[e] == ',') {
				i = e;
				continue;
			}
		}
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		gpuenv_str_t val;
		if (i < n && s[i] == '"') {
			size_t v0 = bl;
			i++;
			for (;;) {
				if (i >= n)
					return chal_bad(ctx, i, "a quoted value is not closed");
				if (s[i] == '"')
					break;
				if (s[i] == '\\') {
					if (++i >= n)
						return chal_bad(ctx, i, "a quoted value is not closed");
				}
				if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
					return chal_bad(ctx, i, "a control character in a quoted value");
				buf[bl++] = s[i++];
			}
			i++;
			val = gpuenv_str_n(buf + v0, bl - v0);
		} else {
			size_t v0 = i;
			while (i < n && tchar(s[i]))
				i++;
			if (i == v0)
				return chal_bad(ctx, i, "expected a token or a quoted value");
			val = gpuenv_str_n(s + v0, i - v0);
		}
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i < n && s[i] != ',')
			return chal_bad(ctx, i, "expected ',' after a parameter");
		chal_t *c = &ch[nch - 1];
		gpuenv_str_t *slot = NULL;
		if (gpuenv_str_ieq(tok, GPUENV_STR_LIT("realm")))
			slot = &c->realm;
		else if (gpuenv_str_ieq(tok, GPUENV_STR_LIT("service")))
			slot = &c->service;
		else if (gpuenv_str_ieq(tok, GPUENV_STR_LIT("scope")))
			slot = &c->scope;
		if (slot && slot->ptr)
			return chal_bad(ctx, t0, "a parameter given twice in one challenge");
		if (slot)
			*slot = val.len ? val : GPUENV_STR_LIT("");
	}
	if (!nch)
		return chal_bad(ctx, 0, "no challenge");
	/* Bearer, else Basic, else the first */
	size_t pick = 0;
	for (size_t k = nch; k-- > 0;)
		if (gpuenv_str_ieq(ch[k].scheme, GPUENV_STR_LIT("basic")))
			pick = k;
	for (size_t k = nch; k-- > 0;)
		if (gpuenv_str_ieq(ch[k].scheme, GPUENV_STR_LIT("bearer")))
			pick = k;
	chal_t *c = &ch[pick];
	out->bearer = gpuenv_str_ieq(c->scheme, GPUENV_STR_LIT("bearer"));
	out->basic = gpuenv_str_ieq(c->scheme, GPUENV_STR_LIT("basic"));
	if (out->bearer && (!c->realm.ptr || !c->realm.len))
		return chal_bad(ctx, 0, "a Bearer challenge without a realm");
	out->scheme = gpuenv_arena_strndup(arena, c->scheme.ptr, c->scheme.len);
	if (!out->scheme)
		return gpuenv_oom(ctx, "for a registry challenge");
#define COPY(f)                                                                      \
	do {                                                                         \
		if (c->f.ptr && !(out->f = gpuenv_arena_strndup(arena, c->f.ptr, c->f.len))) \
			return gpuenv_oom(ctx, "for a registry challenge");               \
	} while (0)
	COPY(realm);
	COPY(service);
	COPY(scope);
#undef COPY
	return 0;
}

/* ---- JSON documents --------------------------------------------------------- */

typedef struct jd {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *url;
	const char *what; /* "manifest", "image config", ... */
	bool secret;	  /* the text may hold credentials: quote none of it */
} jd_t;

static int jbad(jd_t *p, const char *fmt, ...) GPUENV_PRINTF(2, 3);
static int jbad(jd_t *p, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, 0, 0, "malformed %s: %s", p->what, msg);
}

/* Decode body, run fn over the root, free; the scope's failures as ENOMEM. */
static int with_json(jd_t *p, gpuenv_str_t body, size_t max, int (*fn)(jd_t *, json_t *, void *),
	void *arg)
{
	gpuenv_json_scope_t scope;
	json_error_t je;
	json_t *root;
	bool oom;
	int r;

	if (body.len > max)
		return gpuenv_fail(p->ctx, GPUENV_ETOOBIG, p->url, 0, 0,
			"the %s is %zu bytes, more than the %zu KiB gpuenv reads", p->what, body.len,
			max >> 10);
	gpuenv_json_enter(p->ctx, &scope);
	root = json_loadb(body.ptr ? body.ptr : "", body.len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		oom = gpuenv_json_leave(&scope);
		if (oom || json_error_code(&je) == json_error_out_of_memory)
			return gpuenv_oom(p->ctx, "reading a registry answer");
		return gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->url, je.line > 0 ? (unsigned)je.line : 0,
			je.column > 0 ? (unsigned)je.column : 0, "malformed %s: not JSON%s%s%s", p->what,
			p->secret ? "" : " (", p->secret ? "" : je.text, p->secret ? "" : ")");
	}
	if (!json_is_object(root))
		r = jbad(p, "expected a JSON object");
	else
		r = fn(p, root, arg);
	json_decref(root);
	oom = gpuenv_json_leave(&scope);
	if (oom && r != -ENOMEM)
		r = gpuenv_oom(p->ctx, "reading a registry answer");
	return r;
}

/* o[key] as a string copied into the arena: NULL when absent (optional),
 * else an error */
static int jstr(jd_t *p, json_t *o, const char *where, const char *key, bool optional,
	const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || (optional && json_is_null(v))) {
		if (optional)
			return 0;
		return jbad(p, "%s%s\"%s\" is missing", where, where[0] ? ": " : "", key);
	}
	if (!json_is_string(v) || json_string_length(v) > 4096 ||
		strlen(json_string_value(v)) != json_string_length(v))
		return jbad(p, "%s%s\"%s\" is not a string of at most 4096 bytes", where,
			where[0] ? ": " : "", key);
	if (!(*out = gpuenv_arena_strndup(p->arena, json_string_value(v), json_string_length(v))))
		return gpuenv_oom(p->ctx, "reading a registry answer");
	return 0;
}

static int jdigest(jd_t *p, json_t *o, const char *where, const char **out)
{
	int r = jstr(p, o, where, "digest", false, out);

	if (r)
		return r;
	if (!strncmp(*out, "sha256:", 7) && !gpuenv_registry_digest_valid(gpuenv_str(*out)))
		return jbad(p, "%s: digest '%.80s' is not sha256: and 64 lower-case hex digits", where,
			*out);
	if (!gpuenv_registry_digest_valid(gpuenv_str(*out))) {
		gpuenv_fail(p->ctx, GPUENV_EUNSUPPORTED, p->url, 0, 0,
			"%s: digest '%.80s' is not a sha256 one, the only kind gpuenv checks", where, *out);
		return gpuenv_hint(p->ctx, "lock a tag whose manifests use sha256 digests");
	}
	return 0;
}

static bool is_index_type(const char *mt)
{
	return !strcmp(mt, GPUENV_MT_OCI_INDEX) || !strcmp(mt, GPUENV_MT_DOCKER_LIST);
}

static bool is_manifest_type(const char *mt)
{
	return !strcmp(mt, GPUENV_MT_OCI_MANIFEST) || !strcmp(mt, GPUENV_MT_DOCKER_MANIFEST);
}

/* "type/subtype; charset=..." -> "type/subtype", lower-case, into out */
static void media_type_of(const char *ct, char *out, size_t outsz)
{
	size_t n = 0;

	while (*ct == ' ' || *ct == '\t')
		ct++;
	while (ct[n] && ct[n] != ';' && ct[n] != ' ' && ct[n] != '\t' && n + 1 < outsz) {
		out[n] = (ct[n] >= 'A' && ct[n] <= 'Z') ? (char)(ct[n] + 32) : ct[n];
		n++;
	}
	out[n] = '\0';
}

typedef struct mf_arg {
	const char *content_type;
	gpuenv_registry_manifest_t *out;
} mf_arg_t;

static int index_entries(jd_t *p, json_t *list, gpuenv_registry_manifest_t *out)
{
	size_t n = json_array_size(list), k = 0;
	char where[64];
	int r;

	if (n > GPUENV_REGISTRY_MAX_ENTRIES)
		return jbad(p, "\"manifests\" has %zu entries, more than %d", n,
			GPUENV_REGISTRY_MAX_ENTRIES);
	if (n && !(out->platforms = gpuenv_arena_calloc(p->arena, n, sizeof(*out->platforms))))
		return gpuenv_oom(p->ctx, "reading a registry answer");
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(list, i), *pl;
		gpuenv_registry_platform_t *d = &out->platforms[k];
		snprintf(where, sizeof(where), "manifests[%zu]", i);
		if (!json_is_object(e))
			return jbad(p, "%s is not an object", where);
		if ((r = jstr(p, e, where, "mediaType", true, &d->media_type)) ||
			(r = jdigest(p, e, where, &d->digest)))
			return r;
		pl = json_object_get(e, "platform");
		if (!pl || json_is_null(pl)) {
			out->nother++;
			continue;
		}
		if (!json_is_object(pl))
			return jbad(p, "%s: \"platform\" is not an object", where);
		if ((r = jstr(p, pl, where, "os", false, &d->os)) ||
			(r = jstr(p, pl, where, "architecture", false, &d->architecture)) ||
			(r = jstr(p, pl, where, "variant", true, &d->variant)))
			return r;
		if (d->variant && !d->variant[0])
			d->variant = NULL;
		if (!strcmp(d->os, "linux") &&
			(!strcmp(d->architecture, "amd64") || !strcmp(d->architecture, "arm64")) &&
			(!d->media_type || is_manifest_type(d->media_type)))
			k++;
		else
			out->nother++;
	}
	out->nplatforms = k;
	return 0;
}

static int manifest_root(jd_t *p, json_t *root, void *arg)
{
	mf_arg_t *a = arg;
	gpuenv_registry_manifest_t *out = a->out;
	json_t *sv = json_object_get(root, "schemaVersion"), *v;
	const char *mt;
	char ct[128] = "";
	int r;

	if (a->content_type)
		media_type_of(a->content_type, ct, sizeof(ct));
	if (json_is_integer(sv) && json_integer_value(sv) == 1) {
		gpuenv_fail(p->ctx, GPUENV_EUNSUPPORTED, p->url, 0, 0,
			"a Docker image manifest of schema 1, which registries have deprecated");
		return gpuenv_hint(p->ctx, "lock a tag pushed with a current client (schema 2 or OCI)");
	}
	if (!json_is_integer(sv) || json_integer_value(sv) != 2)
		return jbad(p, "\"schemaVersion\" is not 2");
	if ((r = jstr(p, root, "", "mediaType", true, &mt)))
		return r;
	if (mt && ct[0] && strcmp(mt, ct) && (is_index_type(ct) || is_manifest_type(ct)))
		return jbad(p, "the Content-Type says %.100s, the document says %.100s", ct, mt);
	if (!mt && (is_index_type(ct) || is_manifest_type(ct)))
		mt = ct;
	if (!mt) /* the OCI spec makes mediaType optional: the shape says */
		mt = json_object_get(root, "manifests") ? GPUENV_MT_OCI_INDEX : GPUENV_MT_OCI_MANIFEST;
	if (is_index_type(mt)) {
		out->index = true;
		out->media_type = !strcmp(mt, GPUENV_MT_OCI_INDEX) ? GPUENV_MT_OCI_INDEX
								     : GPUENV_MT_DOCKER_LIST;
		v = json_object_get(root, "manifests");
		if (!json_is_array(v))
			return jbad(p, "an index without a \"manifests\" array");
		return index_entries(p, v, out);
	}
	if (!is_manifest_type(mt)) {
		gpuenv_fail(p->ctx, GPUENV_EUNSUPPORTED, p->url, 0, 0,
			"media type '%.100s' is not an image index or an image manifest", mt);
		return gpuenv_hint(p->ctx, "the tag names something other than a container image "
					   "(an artifact?)");
	}
	out->media_type = !strcmp(mt, GPUENV_MT_OCI_MANIFEST) ? GPUENV_MT_OCI_MANIFEST
								 : GPUENV_MT_DOCKER_MANIFEST;
	v = json_object_get(root, "config");
	if (!json_is_object(v))
		return jbad(p, "an image manifest without a \"config\" object");
	if ((r = jdigest(p, v, "config", &out->config_digest)))
		return r;
	if (!json_is_array(json_object_get(root, "layers")))
		return jbad(p, "an image manifest without a \"layers\" array");
	return 0;
}

int gpuenv_registry_manifest_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *url,
	const char *content_type, gpuenv_str_t body, gpuenv_registry_manifest_t *out)
{
	jd_t p = { ctx, arena, url && url[0] ? url : "manifest", "manifest", false };
	mf_arg_t a = { content_type, out };
	int r;

	memset(out, 0, sizeof(*out));
	r = with_json(&p, body, GPUENV_REGISTRY_MANIFEST_MAX, manifest_root, &a);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

static int config_root(jd_t *p, json_t *root, void *arg)
{
	gpuenv_registry_platform_t *out = arg;
	int r;

	if ((r = jstr(p, root, "", "os", false, &out->os)) ||
		(r = jstr(p, root, "", "architecture", false, &out->architecture)) ||
		(r = jstr(p, root, "", "variant", true, &out->variant)))
		return r;
	if (out->variant && !out->variant[0])
		out->variant = NULL;
	if (!out->os[0] || !out->architecture[0])
		return jbad(p, "\"os\" and \"architecture\" are empty");
	return 0;
}

int gpuenv_registry_config_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *url,
	gpuenv_str_t body, gpuenv_registry_platform_t *out)
{
	jd_t p = { ctx, arena, url && url[0] ? url : "image config", "image config", false };
	int r;

	memset(out, 0, sizeof(*out));
	r = with_json(&p, body, GPUENV_REGISTRY_CONFIG_MAX, config_root, out);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

static int token_root(jd_t *p, json_t *root, void *arg)
{
	const char **out = arg, *t;
	int r;

	if ((r = jstr(p, root, "", "token", true, &t)))
		return r;
	if (!t || !t[0]) {
		if ((r = jstr(p, root, "", "access_token", true, &t)))
			return r;
	}
	if (!t || !t[0])
		return jbad(p, "neither \"token\" nor \"access_token\" is given");
	if (strlen(t) > TOKEN_LEN_MAX)
		return jbad(p, "the token is longer than %d bytes", TOKEN_LEN_MAX);
	/* it goes into a header line: visible ASCII only */
	for (const char *c = t; *c; c++)
		if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e)
			return jbad(p, "the token holds a character that is not visible ASCII");
	*out = t;
	return 0;
}

int gpuenv_registry_token_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *url,
	gpuenv_str_t body, const char **token)
{
	jd_t p = { ctx, arena, url && url[0] ? url : "token service", "token answer", true };

	*token = NULL;
	return with_json(&p, body, GPUENV_REGISTRY_TOKEN_MAX, token_root, token);
}

/* ---- docker config.json --------------------------------------------------------- */

/* an auths key ("https://index.docker.io/v1/", "nvcr.io", "http://h:5000/x")
 * as a host, lower-case, into out; Docker Hub's names as docker.io */
static void auth_key_host(const char *key, char *out, size_t outsz)
{
	const char *s = key, *e;
	size_t n;

	if (!strncasecmp(s, "https://", 8))
		s += 8;
	else if (!strncasecmp(s, "http://", 7))
		s += 7;
	e = s;
	while (*e && *e != '/')
		e++;
	n = (size_t)(e - s) < outsz - 1 ? (size_t)(e - s) : outsz - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] + 32) : s[i];
	out[n] = '\0';
	if (!strcmp(out, "index.docker.io") || !strcmp(out, "registry-1.docker.io"))
		snprintf(out, outsz, "docker.io");
}

typedef struct dc_arg {
	const char *registry;
	gpuenv_docker_creds_t *out;
} dc_arg_t;

static int dc_entry(jd_t *p, json_t *e, const char *key, gpuenv_docker_creds_t *out)
{
	const char *auth, *user, *pass;
	int r;

	if (!json_is_object(e))
		return jbad(p, "auths[\"%.100s\"] is not an object", key);
	if ((r = jstr(p, e, "auths entry", "auth", true, &auth)) ||
		(r = jstr(p, e, "auths entry", "username", true, &user)) ||
		(r = jstr(p, e, "auths entry", "password", true, &pass)))
		return r;
	if (auth && auth[0]) {
		/* standard base64 of "user:password" (the urlsafe decoder, '+' '/' mapped) */
		size_t n = strlen(auth), len = 0;
		char *t = gpuenv_arena_strndup(p->arena, auth, n);
		unsigned char *dec = gpuenv_arena_alloc(p->arena, n + 1);
		if (!t || !dec)
			return gpuenv_oom(p->ctx, "reading the docker config");
		for (size_t i = 0; i < n; i++)
			t[i] = t[i] == '+' ? '-' : t[i] == '/' ? '_' : (t[i] == '-' || t[i] == '_') ? '!' : t[i];
		if (!gpuenv_b64url_decode(gpuenv_str_n(t, n), dec, n, &len))
			return jbad(p, "auths[\"%.100s\"].auth is not base64", key);
		dec[len] = '\0';
		char *colon = memchr(dec, ':', len);
		if (!colon || strlen((char *)dec) != len)
			return jbad(p, "auths[\"%.100s\"].auth is not base64 of \"user:password\"", key);
		*colon = '\0';
		out->user = (const char *)dec;
		out->pass = colon + 1;
		return 0;
	}
	if (user && pass) {
		out->user = user;
		out->pass = pass;
	}
	return 0;
}

static int dc_root(jd_t *p, json_t *root, void *arg)
{
	dc_arg_t *a = arg;
	json_t *auths = json_object_get(root, "auths"), *helpers = json_object_get(root, "credHelpers");
	const char *store, *k;
	char host[256], want[256];
	json_t *v;
	int r;

	auth_key_host(a->registry, want, sizeof(want));
	if ((r = jstr(p, root, "", "credsStore", true, &store)))
		return r;
	if (helpers && !json_is_object(helpers))
		return jbad(p, "\"credHelpers\" is not an object");
	if (auths && !json_is_null(auths) && !json_is_object(auths))
		return jbad(p, "\"auths\" is not an object");
	json_object_foreach(auths, k, v) {
		auth_key_host(k, host, sizeof(host));
		if (strcmp(host, want))
			continue;
		if ((r = dc_entry(p, v, k, a->out)))
			return r;
		if (a->out->user)
			break;
	}
	json_object_foreach(helpers, k, v) {
		auth_key_host(k, host, sizeof(host));
		if (strcmp(host, want))
			continue;
		if (!json_is_string(v))
			return jbad(p, "credHelpers[\"%.100s\"] is not a string", k);
		if (!(a->out->helper = gpuenv_arena_strndup(p->arena, json_string_value(v),
			      json_string_length(v))))
			return gpuenv_oom(p->ctx, "reading the docker config");
	}
	if (!a->out->helper && store && store[0])
		a->out->helper = store;
	return 0;
}

int gpuenv_docker_config_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *name,
	gpuenv_str_t text, const char *registry, gpuenv_docker_creds_t *out)
{
	jd_t p = { ctx, arena, name && name[0] ? name : "config.json", "docker config", true };
	dc_arg_t a = { registry ? registry : "", out };
	int r;

	memset(out, 0, sizeof(*out));
	r = with_json(&p, text, DOCKER_CONFIG_MAX, dc_root, &a);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}
