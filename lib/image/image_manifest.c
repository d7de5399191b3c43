/* Image references and image-manifest.json (include/gpuenv/image_manifest.h):
 * the reference grammar of docker pull, the strict reader, the deterministic
 * writer and the lookup the Dockerfile export uses.  jansson decodes and
 * encodes; values are copied into the caller's arena. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpuenv/json.h"
#include "gpuenv/fs.h"
#include "gpuenv/image_manifest.h"
#include "gpuenv/registry.h"

/* ---- references ---------------------------------------------------------- */

#define REF_MAX 512 /* the grammar allows 255 for the name, 128 for the tag */

/* OCI's lower-case alphanumerics (repository path components) */
static bool lower_alnum(char c)
{
	return gpuenv_is_lower(c) || gpuenv_is_digit(c);
}

/* path-component: [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)* */
static bool path_component_ok(gpuenv_str_t s)
{
	size_t i = 0;

	if (!s.len || !lower_alnum(s.ptr[0]) || !lower_alnum(s.ptr[s.len - 1]))
		return false;
	while (i < s.len) {
		if (lower_alnum(s.ptr[i])) {
			i++;
			continue;
		}
		/* a separator between two alpha-numeric runs */
		size_t j = i;
		if (s.ptr[i] == '.')
			j = i + 1;
		else if (s.ptr[i] == '_')
			j = i + 1 + (i + 1 < s.len && s.ptr[i + 1] == '_');
		else if (s.ptr[i] == '-')
			while (j < s.len && s.ptr[j] == '-')
				j++;
		else
			return false;
		if (j >= s.len || !lower_alnum(s.ptr[j]))
			return false;
		i = j;
	}
	return true;
}

/* domain: components of [A-Za-z0-9-] not starting or ending with '-',
 * joined by '.', then an optional :PORT */
static bool domain_ok(gpuenv_str_t s)
{
	gpuenv_str_t host = s, port = GPUENV_STR_NULL;
	uint64_t p;

	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] == ':') {
			host = gpuenv_str_n(s.ptr, i);
			port = gpuenv_str_n(s.ptr + i + 1, s.len - i - 1);
			if (!gpuenv_str_to_u64(port, &p) || p > 65535 || port.len > 5)
				return false;
			break;
		}
	if (!host.len)
		return false;
	for (size_t i = 0, start = 0; i <= host.len; i++) {
		if (i < host.len && host.ptr[i] != '.') {
			if (!gpuenv_is_alnum(host.ptr[i]) && host.ptr[i] != '-')
				return false;
			continue;
		}
		if (i == start || host.ptr[start] == '-' || host.ptr[i - 1] == '-')
			return false;
		start = i + 1;
	}
	return true;
}

static bool tag_ok(gpuenv_str_t s)
{
	if (!s.len || s.len > 128)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (!gpuenv_is_alnum(c) && c != '_' && (i == 0 || (c != '.' && c != '-')))
			return false;
	}
	return true;
}

bool gpuenv_image_digest_valid(gpuenv_str_t s)
{
	/* the rule's one copy is the registry client's (lib/index/oci.c) */
	return gpuenv_registry_digest_valid(s);
}

static int bad_ref(gpuenv_ctx_t *ctx, gpuenv_str_t text, const char *what)
{
	gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "'%.*s' is not an image reference: %s",
		(int)(text.len > 200 ? 200 : text.len), text.ptr ? text.ptr : "", what);
	return gpuenv_hint(ctx, "write [REGISTRY/]REPOSITORY[:TAG][@sha256:DIGEST], as "
				"nvcr.io/nvidia/pytorch:25.01-py3 or nvidia/cuda:12.4.1-runtime-ubuntu22.04");
}

int gpuenv_image_ref_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	gpuenv_image_ref_t *out)
{
	gpuenv_str_t s = text, digest = GPUENV_STR_NULL, tag = GPUENV_STR_LIT("latest");
	gpuenv_str_t domain = GPUENV_STR_LIT("docker.io"), name;
	size_t slash = 0;
	bool hub, has_slash = false;
	char dom[256];

	memset(out, 0, sizeof(*out));
	if (!s.ptr || !s.len)
		return bad_ref(ctx, text, "it is empty");
	if (s.len > REF_MAX)
		return bad_ref(ctx, text, "it is longer than 512 bytes");
	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] == '@') {
			digest = gpuenv_str_n(s.ptr + i + 1, s.len - i - 1);
			s.len = i;
			if (!gpuenv_image_digest_valid(digest))
				return bad_ref(ctx, text, "the digest is not sha256: and 64 lower-case hex digits");
			break;
		}
	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] == '/') {
			slash = i + 1;
			has_slash = true;
		}
	for (size_t i = slash; i < s.len; i++)
		if (s.ptr[i] == ':') {
			tag = gpuenv_str_n(s.ptr + i + 1, s.len - i - 1);
			s.len = i;
			if (!tag_ok(tag))
				return bad_ref(ctx, text, "the tag is not 1-128 of [A-Za-z0-9_.-], starting "
							  "with a letter, digit or '_'");
			break;
		}
	name = s;
	if (has_slash) {
		size_t i = 0;
		while (s.ptr[i] != '/')
			i++;
		gpuenv_str_t first = gpuenv_str_n(s.ptr, i);
		bool upper = false;
		for (size_t k = 0; k < first.len; k++)
			upper |= first.ptr[k] >= 'A' && first.ptr[k] <= 'Z';
		if (memchr(first.ptr, '.', first.len) || memchr(first.ptr, ':', first.len) ||
			gpuenv_str_eq_cstr(first, "localhost") || upper) {
			if (!domain_ok(first) || first.len >= sizeof(dom))
				return bad_ref(ctx, text, "the registry is not HOST[:PORT]");
			/* host names are case-blind: lower-case, unless only the
			 * upper case makes it a registry ("Host/x" must read back so) */
			bool lower = memchr(first.ptr, '.', first.len) || memchr(first.ptr, ':', first.len) ||
				(first.len == 9 && !strncasecmp(first.ptr, "localhost", 9));
			for (size_t k = 0; k < first.len; k++)
				dom[k] = lower && first.ptr[k] >= 'A' && first.ptr[k] <= 'Z'
					? (char)(first.ptr[k] + 32) : first.ptr[k];
			dom[first.len] = '\0';
			domain = gpuenv_str(dom);
			if (!strcmp(dom, "index.docker.io") || !strcmp(dom, "registry-1.docker.io"))
				domain = GPUENV_STR_LIT("docker.io");
			name = gpuenv_str_n(s.ptr + i + 1, s.len - i - 1);
		}
	}
	if (!name.len)
		return bad_ref(ctx, text, "the repository name is empty");
	for (size_t i = 0, start = 0; i <= name.len; i++) {
		if (i < name.len && name.ptr[i] != '/')
			continue;
		if (!path_component_ok(gpuenv_str_n(name.ptr + start, i - start)))
			return bad_ref(ctx, text, "a repository component is not lower-case letters and "
						  "digits joined by '.', '_', '__' or '-'");
		start = i + 1;
	}
	hub = gpuenv_str_eq_cstr(domain, "docker.io");
	/* the cap applies to the name as normalized ("library/" included), so
	 * that a normalized ref always reads back */
	if (name.len + (hub && !memchr(name.ptr, '/', name.len) ? 8 : 0) > 255)
		return bad_ref(ctx, text, "the repository name is longer than 255 bytes");
	out->registry = gpuenv_arena_strndup(arena, domain.ptr, domain.len);
	if (hub && !memchr(name.ptr, '/', name.len))
		out->repository = gpuenv_arena_printf(arena, "library/%.*s", GPUENV_STR_ARG(name)).ptr;
	else
		out->repository = gpuenv_arena_strndup(arena, name.ptr, name.len);
	out->tag = gpuenv_arena_strndup(arena, tag.ptr, tag.len);
	out->digest = digest.ptr ? gpuenv_arena_strndup(arena, digest.ptr, digest.len) : NULL;
	if (out->repository)
		out->ref = gpuenv_arena_printf(arena, "%s/%s:%.*s", out->registry ? out->registry : "",
			out->repository, GPUENV_STR_ARG(tag)).ptr;
	if (!out->registry || !out->repository || !out->tag || !out->ref || (digest.ptr && !out->digest))
		return gpuenv_oom(ctx, "for an image reference");
	return 0;
}

/* ---- components ----------------------------------------------------------- */

static const char *const component_names[GPUENV_IMAGE_NCOMPONENTS] = {
	"cuda", "cudnn", "nccl", "tensorrt", "torch", "python", "ubuntu", "driver_min",
};

const char *gpuenv_image_component_name(size_t i)
{
	return i < GPUENV_IMAGE_NCOMPONENTS ? component_names[i] : NULL;
}

const char **gpuenv_image_component(gpuenv_image_components_t *c, size_t i)
{
	switch (i) {
	case 0: return &c->cuda;
	case 1: return &c->cudnn;
	case 2: return &c->nccl;
	case 3: return &c->tensorrt;
	case 4: return &c->torch;
	case 5: return &c->python;
	case 6: return &c->ubuntu;
	case 7: return &c->driver_min;
	default: return NULL;
	}
}

/* ---- the reader ------------------------------------------------------------ */

typedef struct rd {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *name;
} rd_t;

#define HINT_FORMAT "the file is the JSON `gpuenv image lock` writes (docs/image.md); lock again"

static int bad(rd_t *p, const char *where, const char *fmt, ...) GPUENV_PRINTF(3, 4);
static int bad(rd_t *p, const char *where, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->name, 0, 0, "%s%s%s", where ? where : "",
		where ? ": " : "", msg);
	return gpuenv_hint(p->ctx, HINT_FORMAT);
}

/* A string value of o[key]: *out set (NULL when absent and optional). */
static int get_str(rd_t *p, json_t *o, const char *key, const char *where, bool optional,
	const char **out)
{
	json_t *v = json_object_get(o, key);
	char w[128];

	*out = NULL;
	snprintf(w, sizeof(w), "%s.%s", where, key);
	if (!v) {
		if (optional)
			return 0;
		return bad(p, w, "missing");
	}
	if (!json_is_string(v) || !json_string_length(v))
		return bad(p, w, "expected a non-empty string");
	if (json_string_length(v) > 1024 || strlen(json_string_value(v)) != json_string_length(v))
		return bad(p, w, "longer than 1024 bytes or holds a NUL");
	if (!(*out = gpuenv_arena_strndup(p->arena, json_string_value(v), json_string_length(v))))
		return gpuenv_oom(p->ctx, "reading an image manifest");
	return 0;
}

/* Every key of o is one of keys (NULL-terminated). */
static int only_keys(rd_t *p, json_t *o, const char *where, const char *const *keys)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v) {
		bool ok = false;
		for (size_t i = 0; keys[i] && !ok; i++)
			ok = !strcmp(k, keys[i]);
		if (!ok)
			return bad(p, where, "unknown key '%.60s'", k);
	}
	return 0;
}

static int get_digest(rd_t *p, json_t *o, const char *where, const char **out)
{
	char w[128];
	int r;

	if ((r = get_str(p, o, "digest", where, false, out)))
		return r;
	snprintf(w, sizeof(w), "%s.digest", where);
	if (!gpuenv_image_digest_valid(gpuenv_str(*out)))
		return bad(p, w, "'%.80s' is not sha256: and 64 lower-case hex digits", *out);
	return 0;
}

/* os, architecture, variant: lower-case letters, digits, '_', '.' and '-' */
static bool platform_word(const char *s)
{
	for (; *s; s++)
		if (!lower_alnum(*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

static int platform_cmp(const void *a, const void *b)
{
	const gpuenv_image_platform_t *x = a, *y = b;
	int c = strcmp(x->os, y->os);

	if (!c)
		c = strcmp(x->architecture, y->architecture);
	if (!c)
		c = strcmp(x->variant ? x->variant : "", y->variant ? y->variant : "");
	return c;
}

static int entry_cmp(const void *a, const void *b)
{
	const gpuenv_image_entry_t *x = a, *y = b;

	return strcmp(x->ref, y->ref);
}

static int one_platform(rd_t *p, json_t *o, const char *where, gpuenv_image_platform_t *pl)
{
	static const char *const keys[] = { "os", "architecture", "variant", "digest", NULL };
	int r;

	if (!json_is_object(o))
		return bad(p, where, "expected an object");
	if ((r = only_keys(p, o, where, keys)) || (r = get_str(p, o, "os", where, false, &pl->os)) ||
		(r = get_str(p, o, "architecture", where, false, &pl->architecture)) ||
		(r = get_str(p, o, "variant", where, true, &pl->variant)) ||
		(r = get_digest(p, o, where, &pl->digest)))
		return r;
	if (!platform_word(pl->os) || !platform_word(pl->architecture) ||
		(pl->variant && !platform_word(pl->variant)))
		return bad(p, where, "os, architecture and variant are lower-case words "
				     "(linux, amd64, arm64, v8)");
	return 0;
}

static int one_image(rd_t *p, json_t *o, size_t i, gpuenv_image_entry_t *e)
{
	static const char *const keys[] = { "ref", "registry", "repository", "tag", "digest",
		"media_type", "platforms", "components", NULL };
	char w[64], w2[96];
	gpuenv_image_ref_t ref;
	json_t *v;
	int r;

	snprintf(w, sizeof(w), "images[%zu]", i);
	if (!json_is_object(o))
		return bad(p, w, "expected an object");
	if ((r = only_keys(p, o, w, keys)) || (r = get_str(p, o, "ref", w, false, &e->ref)) ||
		(r = get_str(p, o, "registry", w, false, &e->registry)) ||
		(r = get_str(p, o, "repository", w, false, &e->repository)) ||
		(r = get_str(p, o, "tag", w, false, &e->tag)) || (r = get_digest(p, o, w, &e->digest)) ||
		(r = get_str(p, o, "media_type", w, true, &e->media_type)))
		return r;
	snprintf(w2, sizeof(w2), "%s.ref", w);
	if ((r = gpuenv_image_ref_parse(p->ctx, p->arena, gpuenv_str(e->ref), &ref))) {
		if (r == -ENOMEM)
			return r;
		return bad(p, w2, "%s", p->ctx->err.msg);
	}
	if (ref.digest || strcmp(ref.ref, e->ref))
		return bad(p, w2, "'%.200s' is not written normalized (registry/repository:tag: %.200s)",
			e->ref, ref.ref);
	if (strcmp(ref.registry, e->registry) || strcmp(ref.repository, e->repository) ||
		strcmp(ref.tag, e->tag))
		return bad(p, w, "registry, repository and tag do not match the ref '%.200s'", e->ref);
	v = json_object_get(o, "platforms");
	if (!json_is_array(v))
		return bad(p, w, "platforms: expected an array");
	if (json_array_size(v) > GPUENV_IMAGE_MAX_PLATFORMS)
		return bad(p, w, "platforms: more than %d", GPUENV_IMAGE_MAX_PLATFORMS);
	e->nplatforms = json_array_size(v);
	if (e->nplatforms &&
		!(e->platforms = gpuenv_arena_calloc(p->arena, e->nplatforms, sizeof(*e->platforms))))
		return gpuenv_oom(p->ctx, "reading an image manifest");
	for (size_t k = 0; k < e->nplatforms; k++) {
		snprintf(w2, sizeof(w2), "%s.platforms[%zu]", w, k);
		if ((r = one_platform(p, json_array_get(v, k), w2, &e->platforms[k])))
			return r;
		for (size_t j = 0; j < k; j++)
			if (!platform_cmp(&e->platforms[j], &e->platforms[k]))
				return bad(p, w2, "platform %s/%s%s%s given twice", e->platforms[k].os,
					e->platforms[k].architecture, e->platforms[k].variant ? "/" : "",
					e->platforms[k].variant ? e->platforms[k].variant : "");
	}
	v = json_object_get(o, "components");
	snprintf(w2, sizeof(w2), "%s.components", w);
	if (!json_is_object(v))
		return bad(p, w2, "expected an object");
	{
		const char *keys2[GPUENV_IMAGE_NCOMPONENTS + 1];
		for (size_t k = 0; k < GPUENV_IMAGE_NCOMPONENTS; k++)
			keys2[k] = component_names[k];
		keys2[GPUENV_IMAGE_NCOMPONENTS] = NULL;
		if ((r = only_keys(p, v, w2, keys2)))
			return r;
	}
	for (size_t k = 0; k < GPUENV_IMAGE_NCOMPONENTS; k++)
		if ((r = get_str(p, v, component_names[k], w2, true,
			     gpuenv_image_component(&e->components, k))))
			return r;
	return 0;
}

static int decode(rd_t *p, json_t *root, gpuenv_image_manifest_t *out)
{
	static const char *const keys[] = { "schema", "images", NULL };
	const char *schema;
	json_t *imgs;
	int r;

	if (!json_is_object(root))
		return bad(p, NULL, "expected a JSON object with \"schema\" and \"images\"");
	if ((r = only_keys(p, root, "the document", keys)))
		return r;
	if ((r = get_str(p, root, "schema", "the document", false, &schema)))
		return r;
	if (strcmp(schema, GPUENV_IMAGE_MANIFEST_SCHEMA)) {
		gpuenv_fail(p->ctx, GPUENV_ESYNTAX, p->name, 0, 0,
			"schema '%.100s' is not %s (this gpuenv reads that one)", schema,
			GPUENV_IMAGE_MANIFEST_SCHEMA);
		return gpuenv_hint(p->ctx, "lock again with this gpuenv, or use the gpuenv that wrote it");
	}
	imgs = json_object_get(root, "images");
	if (!json_is_array(imgs))
		return bad(p, "images", "expected an array");
	if (json_array_size(imgs) > GPUENV_IMAGE_MAX_IMAGES)
		return bad(p, "images", "more than %d images", GPUENV_IMAGE_MAX_IMAGES);
	out->nimages = json_array_size(imgs);
	if (out->nimages && !(out->images = gpuenv_arena_calloc(p->arena, out->nimages,
				      sizeof(*out->images))))
		return gpuenv_oom(p->ctx, "reading an image manifest");
	for (size_t i = 0; i < out->nimages; i++)
		if ((r = one_image(p, json_array_get(imgs, i), i, &out->images[i])))
			return r;
	gpuenv_image_manifest_sort(out);
	for (size_t i = 1; i < out->nimages; i++)
		if (!strcmp(out->images[i - 1].ref, out->images[i].ref))
			return bad(p, "images", "%.200s is given twice", out->images[i].ref);
	return 0;
}

int gpuenv_image_manifest_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *name,
	const char *text, size_t len, gpuenv_image_manifest_t *out)
{
	rd_t p = { ctx, arena, name && name[0] ? name : "image-manifest.json" };
	gpuenv_json_scope_t scope;
	json_error_t je;
	json_t *root;
	bool oom;
	int r;

	memset(out, 0, sizeof(*out));
	if (len > GPUENV_IMAGE_MANIFEST_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, p.name, 0, 0,
			"%zu bytes, more than the %zu MiB an image manifest may have", len,
			GPUENV_IMAGE_MANIFEST_MAX >> 20);
	gpuenv_json_enter(ctx, &scope);
	root = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		oom = gpuenv_json_leave(&scope);
		if (oom || json_error_code(&je) == json_error_out_of_memory)
			return gpuenv_oom(ctx, "reading an image manifest");
		gpuenv_fail(ctx, GPUENV_ESYNTAX, p.name, je.line > 0 ? (unsigned)je.line : 0,
			je.column > 0 ? (unsigned)je.column : 0, "malformed JSON: %s", je.text);
		return gpuenv_hint(ctx, HINT_FORMAT);
	}
	r = decode(&p, root, out);
	json_decref(root);
	oom = gpuenv_json_leave(&scope);
	if (oom && r != -ENOMEM)
		r = gpuenv_oom(ctx, "reading an image manifest");
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

int gpuenv_image_manifest_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_image_manifest_t *out)
{
	gpuenv_buf_t b;
	int r;

	memset(out, 0, sizeof(*out));
	gpuenv_buf_init(&b, ctx, GPUENV_IMAGE_MANIFEST_MAX + 1);
	if ((r = gpuenv_fs_read(ctx, path, GPUENV_IMAGE_MANIFEST_MAX, &b)) == 0)
		r = gpuenv_image_manifest_parse(ctx, arena, path, b.data, b.len, out);
	gpuenv_buf_free(&b);
	return r;
}

/* ---- lookup ---------------------------------------------------------------- */

const gpuenv_image_entry_t *gpuenv_image_manifest_find(const gpuenv_image_manifest_t *m,
	const char *ref)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_image_ref_t r;
	const gpuenv_image_entry_t *found = NULL;

	if (!m || !ref)
		return NULL;
	/* a private context: a miss is an answer, not an error of the caller's */
	gpuenv_ctx_init(&ctx);
	ctx.getenv = NULL;
	gpuenv_arena_init(&a, &ctx, 0);
	if (gpuenv_image_ref_parse(&ctx, &a, gpuenv_str(ref), &r) == 0) {
		size_t lo = 0, hi = m->nimages;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int c = strcmp(m->images[mid].ref, r.ref);
			if (!c) {
				found = &m->images[mid];
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!found) /* not sorted by gpuenv_image_manifest_sort: look at all */
			for (size_t i = 0; i < m->nimages && !found; i++)
				if (!strcmp(m->images[i].ref, r.ref))
					found = &m->images[i];
		if (found && r.digest && strcmp(found->digest, r.digest))
			found = NULL;
	}
	gpuenv_arena_free(&a);
	return found;
}

const char *gpuenv_image_manifest_digest(const gpuenv_image_manifest_t *m, const char *ref)
{
	const gpuenv_image_entry_t *e = gpuenv_image_manifest_find(m, ref);

	return e ? e->digest : NULL;
}

void gpuenv_image_manifest_sort(gpuenv_image_manifest_t *m)
{
	if (m->nimages > 1)
		qsort(m->images, m->nimages, sizeof(*m->images), entry_cmp);
	for (size_t i = 0; i < m->nimages; i++)
		if (m->images[i].nplatforms > 1)
			qsort(m->images[i].platforms, m->images[i].nplatforms,
				sizeof(*m->images[i].platforms), platform_cmp);
}

/* ---- the writer ------------------------------------------------------------ */

/* o[key] = s (skipped when s is NULL); false when memory ran out */
static bool put(json_t *o, const char *key, const char *s)
{
	return !s || (o && json_object_set_new(o, key, json_string(s)) == 0);
}

static json_t *entry_json(const gpuenv_image_entry_t *e)
{
	json_t *o = json_object(), *pl = json_array(), *c = json_object();
	gpuenv_image_components_t comp = e->components;
	bool ok = o && pl && c;

	/* the seam's order: what identifies the image, then what it holds */
	ok = ok && put(o, "ref", e->ref) && put(o, "registry", e->registry) &&
		put(o, "repository", e->repository) && put(o, "tag", e->tag) &&
		put(o, "digest", e->digest) && put(o, "media_type", e->media_type);
	for (size_t i = 0; ok && i < e->nplatforms; i++) {
		const gpuenv_image_platform_t *p = &e->platforms[i];
		json_t *po = json_object();
		ok = po && put(po, "os", p->os) && put(po, "architecture", p->architecture) &&
			put(po, "variant", p->variant) && put(po, "digest", p->digest);
		if (!po || json_array_append_new(pl, po))
			ok = false;
	}
	for (size_t i = 0; ok && i < GPUENV_IMAGE_NCOMPONENTS; i++)
		ok = put(c, component_names[i], *gpuenv_image_component(&comp, i));
	if (ok && json_object_set(o, "platforms", pl) == 0 && json_object_set(o, "components", c) == 0) {
		json_decref(pl);
		json_decref(c);
		return o;
	}
	json_decref(o);
	json_decref(pl);
	json_decref(c);
	return NULL;
}

int gpuenv_image_manifest_format(gpuenv_ctx_t *ctx, const gpuenv_image_manifest_t *m,
	gpuenv_buf_t *out)
{
	gpuenv_json_scope_t scope;
	gpuenv_image_manifest_t sorted = *m;
	gpuenv_image_entry_t *copy = NULL;
	gpuenv_image_platform_t *plats = NULL;
	json_t *root = NULL, *imgs;
	size_t np = 0, need = 0;
	bool ok, oom;
	int r = 0;

	/* sort a copy: the caller's manifest stays as it is */
	for (size_t i = 0; i < m->nimages; i++)
		np += m->images[i].nplatforms;
	if ((m->nimages && !(copy = gpuenv_calloc(ctx, m->nimages, sizeof(*copy)))) ||
		(np && !(plats = gpuenv_calloc(ctx, np, sizeof(*plats))))) {
		gpuenv_free(ctx, copy);
		return gpuenv_oom(ctx, "writing an image manifest");
	}
	np = 0;
	for (size_t i = 0; i < m->nimages; i++) {
		copy[i] = m->images[i];
		if (copy[i].nplatforms)
			memcpy(plats + np, m->images[i].platforms, copy[i].nplatforms * sizeof(*plats));
		copy[i].platforms = plats + np;
		np += copy[i].nplatforms;
	}
	sorted.images = copy;
	gpuenv_image_manifest_sort(&sorted);
	gpuenv_json_enter(ctx, &scope);
	root = json_object();
	imgs = json_array();
	ok = root && imgs && put(root, "schema", GPUENV_IMAGE_MANIFEST_SCHEMA) &&
		json_object_set(root, "images", imgs) == 0;
	for (size_t i = 0; ok && i < sorted.nimages; i++)
		ok = json_array_append_new(imgs, entry_json(&sorted.images[i])) == 0;
	/* the text straight into out: its size first, then the bytes */
	if (ok && (need = json_dumpb(root, NULL, 0, JSON_INDENT(2) | JSON_ENSURE_ASCII)) == 0)
		ok = false;
	if (ok && (r = gpuenv_buf_reserve(out, need + 1)) == 0) {
		json_dumpb(root, out->data + out->len, need, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		out->len += need;
		out->data[out->len++] = '\n';
		out->data[out->len] = '\0';
	}
	json_decref(imgs);
	json_decref(root);
	oom = gpuenv_json_leave(&scope);
	if (r == GPUENV_ETOOBIG)
		r = gpuenv_fail(ctx, r, NULL, 0, 0, "the image manifest is larger than %zu MiB",
			out->max >> 20);
	else if (r || !ok || oom)
		r = gpuenv_oom(ctx, "writing an image manifest");
	gpuenv_free(ctx, plats);
	gpuenv_free(ctx, copy);
	return r;
}

int gpuenv_image_manifest_write(gpuenv_ctx_t *ctx, const gpuenv_image_manifest_t *m,
	const char *path)
{
	gpuenv_buf_t b;
	int r;

	gpuenv_buf_init(&b, ctx, GPUENV_IMAGE_MANIFEST_MAX);
	if ((r = gpuenv_image_manifest_format(ctx, m, &b)) == 0)
		r = gpuenv_fs_write_buf(ctx, path, &b, 0644, 0);
	gpuenv_buf_free(&b);
	return r;
}
