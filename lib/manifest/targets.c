/* [tool.gpuenv]: the torch backend, the torch index and the hardware
 * targets.  A declared target becomes the gpuenv_target_t a probed machine
 * is (origin "declared"), so the wheel-tag, marker and KB views of
 * lib/facts/target.c work on it unchanged.  And the dependencies one
 * target resolves (gpuenv_manifest_target_deps). */
#include "manifest_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"

#define TORCH_INDEX "https://download.pytorch.org/whl"

static const char *const GPUENV_KEYS[] = { "torch-backend", "torch-index", "targets", "registries",
	"build-against-env", "label-prefix",
	"trt", /* [tool.gpuenv.trt]: gpuenv trt's shapes, read by the trt verbs (docs/trt.md) */
	"triton", /* [tool.gpuenv.triton]: the model repository, read by export --format compose (docs/export.md) */
	NULL };
static const char *const TARGET_KEYS[] = { "gpu", "compute_capability", "driver", "cuda", "python",
	"platform", "groups", "extras", "torch-backend", NULL };

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* "auto", "cpu", "cu118": what torch-backend takes */
bool gpuenv_manifest_backend_valid(const char *s)
{
	char cuda[16];

	return !strcmp(s, "auto") || !strcmp(s, "cpu") ||
		gpuenv_kb_cuda_of_tag(gpuenv_str(s), cuda, sizeof(cuda), NULL);
}

bool mf_backend_known(const gpuenv_kb_t *kb, const char *tag, char *tags, size_t size)
{
	size_t len = 0;
	bool known = false;

	tags[0] = '\0';
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &kb->torch_variant[i];
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = gpuenv_str_eq(kb->torch_variant[k].tag, v->tag);
		known |= gpuenv_str_eq_cstr(v->tag, tag);
		if (!seen) {
			char t[16];
			snprintf(t, sizeof(t), "%.*s", GPUENV_STR_ARG(v->tag));
			mf_list_add(tags, size, &len, t, false);
		}
	}
	return known;
}

static int backend_at(mf_load_t *L, const gpuenv_toml_value_t *v, const char *what, const char **out)
{
	char tags[200];
	int r = mf_cstr(L, v, what, out);

	if (r)
		return r;
	if (!gpuenv_manifest_backend_valid(*out)) {
		mf_err(L, GPUENV_EUNSUPPORTED, v->line, v->col, "%s = \"%s\": not a torch backend", what, *out);
		return gpuenv_hint(L->ctx, "\"auto\" (the hardware decides), \"cpu\", or a CUDA build "
					   "of the torch index: \"cu118\", \"cu126\", \"cu128\", ...");
	}
	/* a CUDA build no torch release has: an error here, where it is
	 * written, not a lock without torch (issue 22 item 13) */
	if (L->kb && strcmp(*out, "auto") && strcmp(*out, "cpu") && !mf_backend_known(L->kb, *out, tags, sizeof(tags))) {
		gpuenv_str_t date = gpuenv_kb_date(L->kb);
		mf_err(L, GPUENV_ENOTFOUND, v->line, v->col, "%s = \"%s\": no torch release has a %s build in the "
			"knowledge base", what, *out, *out);
		return gpuenv_hint(L->ctx, "builds it knows: %s%s%.*s%s", tags,
			date.ptr ? "; if it is newer than the knowledge base (" : "", date.ptr ? 7 : 0,
			date.ptr ? date.ptr : "", date.ptr ? "), `gpuenv kb update`" : "");
	}
	return 0;
}

/* ---- wheel platform tags ------------------------------------------------------ */

static bool arch_ok(const char *a)
{
	if (!*a || strlen(a) > 31)
		return false;
	for (; *a; a++)
		if (!((*a >= 'a' && *a <= 'z') || (*a >= '0' && *a <= '9') || *a == '_'))
			return false;
	return true;
}

/* manylinux_X_Y_ARCH, musllinux_X_Y_ARCH, manylinux1/2010/2014_ARCH, linux_ARCH */
static bool platform_parse(mf_load_t *L, const char *p, gpuenv_target_t *t, bool *oom)
{
	static const struct {
		const char *prefix, *glibc;
	} legacy[] = { { "manylinux1_", "2.5" }, { "manylinux2010_", "2.12" }, { "manylinux2014_", "2.17" } };
	const char *rest;
	bool musl = !strncmp(p, "musllinux_", 10);

	for (size_t i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++)
		if (!strncmp(p, legacy[i].prefix, strlen(legacy[i].prefix))) {
			t->libc = "glibc";
			t->libc_version = legacy[i].glibc;
			t->machine = p + strlen(legacy[i].prefix);
			return arch_ok(t->machine);
		}
	if (musl || !strncmp(p, "manylinux_", 10)) {
		const char *a = p + 10, *u1 = strchr(a, '_'), *u2 = u1 ? strchr(u1 + 1, '_') : NULL;
		if (!u1 || !u2 || !all_digits(a, (size_t)(u1 - a)) || !all_digits(u1 + 1, (size_t)(u2 - u1 - 1)) ||
			u1 - a > 3 || u2 - u1 - 1 > 3)
			return false;
		t->libc = musl ? "musl" : "glibc";
		t->libc_version = gpuenv_arena_printf(L->arena, "%.*s.%.*s", (int)(u1 - a), a,
			(int)(u2 - u1 - 1), u1 + 1).ptr;
		t->machine = u2 + 1;
		if (!t->libc_version)
			*oom = true;
		return t->libc_version && arch_ok(t->machine);
	}
	if (!strncmp(p, "linux_", 6)) {
		rest = p + 6;
		t->machine = rest;
		t->libc = NULL;
		return arch_ok(rest);
	}
	return false;
}

/* ---- one target ------------------------------------------------------------------- */

static bool name_ok(gpuenv_str_t k)
{
	if (!k.len || k.len > 64)
		return false;
	for (size_t i = 0; i < k.len; i++) {
		char c = k.ptr[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
			    c == '_' || (c == '.' && i > 0)))
			return false;
	}
	return true;
}

/* the error the KB's lookup recorded, moved to the gpu value's position */
static int gpu_not_found(mf_load_t *L, const char *where, const gpuenv_toml_value_t *v, const char *q)
{
	gpuenv_error_t e = L->kb->ctx->err;

	mf_err(L, e.code ? e.code : GPUENV_ENOTFOUND, v->line, v->col, "%s gpu = \"%s\": %s", where, q, e.msg);
	if (e.hint[0])
		gpuenv_hint(L->ctx, "%s (`gpuenv kb gpu NAME` looks names up)", e.hint);
	return L->ctx->err.code;
}

static int list_member(mf_load_t *L, const gpuenv_toml_value_t *v, const char *where, const char *key,
	const char ***out, size_t *n)
{
	const char **raw;
	int r = mf_strs(L, v, key, &raw, n);

	if (r)
		return r;
	for (size_t i = 0; i < *n; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const char *norm = mf_norm(L, raw[i]);
		bool found = false;
		if (!norm)
			return -ENOMEM;
		if (!strcmp(key, "groups")) {
			for (size_t k = 0; k < L->m->ngroups && !found; k++)
				found = !strcmp(L->m->groups[k].name, norm);
		} else
			for (size_t k = 0; k < L->m->nextras && !found; k++)
				found = !strcmp(L->m->extras[k].name, norm);
		if (!found) {
			char list[300] = "";
			size_t len = 0, cnt = !strcmp(key, "groups") ? L->m->ngroups : L->m->nextras;
			for (size_t k = 0; k < cnt; k++)
				mf_list_add(list, sizeof(list), &len,
					!strcmp(key, "groups") ? L->m->groups[k].name : L->m->extras[k].name, true);
			mf_err(L, GPUENV_ENOTFOUND, e->line, e->col, "%s %s: the project declares no %s '%s'",
				where, key, !strcmp(key, "groups") ? "group" : "extra", raw[i]);
			return gpuenv_hint(L->ctx, "%s declared: %s", key, cnt ? list : "none");
		}
		raw[i] = norm;
	}
	*out = raw;
	return 0;
}

static int target_load(mf_load_t *L, const gpuenv_toml_kv_t *kv, gpuenv_manifest_target_t *mt)
{
	const gpuenv_toml_table_t *t;
	const gpuenv_toml_value_t *gpu, *cc, *drv, *cuda, *py, *plat, *x;
	gpuenv_target_t *tg = &mt->target;
	gpuenv_target_gpu_t *g = NULL;
	char where[128];
	const char *s;
	int r;

	snprintf(where, sizeof(where), "[tool.gpuenv.targets.%.*s]", (int)(kv->key.len > 64 ? 64 : kv->key.len),
		kv->key.ptr);
	if (!name_ok(kv->key))
		return mf_err(L, GPUENV_ESYNTAX, kv->line, kv->col,
			"%s: a target name is 1 to 64 letters, digits, '-', '_' or '.' (it names "
			"its lock file, pylock.NAME.toml)", where);
	if ((r = gpuenv_toml_expect(L->doc, &kv->val, GPUENV_TOML_TABLE, where + 1)))
		return r;
	t = kv->val.u.tab;
	if ((r = mf_check_keys(L, t, TARGET_KEYS, where)))
		return r;
	memset(mt, 0, sizeof(*mt));
	mt->name = gpuenv_arena_strndup(L->arena, kv->key.ptr, kv->key.len);
	if (!mt->name)
		return gpuenv_oom(L->ctx, "the manifest");
	mt->line = t->line ? t->line : kv->line;
	tg->name = mt->name;
	tg->origin = "declared";
	tg->os = "linux";
	tg->implementation = "cpython";

	gpu = gpuenv_toml_get(t, "gpu");
	cc = gpuenv_toml_get(t, "compute_capability");
	if (!gpu && !cc)
		return mf_err(L, GPUENV_ENOTFOUND, mt->line, t->col ? t->col : 1,
			"%s needs gpu (a GPU the knowledge base knows, or \"none\" for a CPU target) or "
			"compute_capability (\"8.6\")", where);
	if (gpu) {
		if ((r = mf_cstr(L, gpu, "gpu", &s)))
			return r;
		if (strcmp(s, "none")) {
			g = gpuenv_arena_calloc(L->arena, 1, sizeof(*g));
			if (!g)
				return gpuenv_oom(L->ctx, "the manifest");
			g->name = s;
			g->cc_major = g->cc_minor = -1;
			g->memory = -1;
			g->visible = true;
			if (L->kb) {
				gpuenv_kb_gpu_match_t m;
				if (gpuenv_kb_gpu_lookup(L->kb, s, &m))
					return gpu_not_found(L, where, gpu, s);
				g->name = gpuenv_arena_strndup(L->arena, m.gpu->name.ptr, m.gpu->name.len);
				if (!g->name)
					return gpuenv_oom(L->ctx, "the manifest");
				g->cc_major = (int)m.gpu->cc.part[0];
				g->cc_minor = (int)m.gpu->cc.part[1];
			}
		} else if (cc)
			return mf_err(L, GPUENV_EDUPLICATE, cc->line, cc->col,
				"%s: gpu = \"none\" is a CPU target; compute_capability does not go with it", where);
	}
	if (cc) {
		int maj, min;
		if ((r = mf_cstr(L, cc, "compute_capability", &s)))
			return r;
		if (!gpuenv_facts_cc(s, &maj, &min))
			return mf_err(L, GPUENV_ESYNTAX, cc->line, cc->col,
				"%s compute_capability = \"%s\": not MAJOR.MINOR (\"8.6\")", where, s);
		if (L->kb && !gpuenv_kb_arch(L->kb, (unsigned)maj, (unsigned)min)) {
			mf_err(L, GPUENV_ENOTFOUND, cc->line, cc->col,
				"%s compute_capability = \"%s\": no such architecture in the knowledge base",
				where, s);
			return gpuenv_hint(L->ctx, "`gpuenv kb gpu NAME` gives a GPU's compute capability");
		}
		if (g && g->cc_major >= 0 && (g->cc_major != maj || g->cc_minor != min))
			return mf_err(L, GPUENV_EDUPLICATE, cc->line, cc->col,
				"%s: compute_capability = \"%s\" but the knowledge base says %s is %d.%d", where,
				s, g->name, g->cc_major, g->cc_minor);
		if (!g) {
			g = gpuenv_arena_calloc(L->arena, 1, sizeof(*g));
			if (!g)
				return gpuenv_oom(L->ctx, "the manifest");
			g->memory = -1;
			g->visible = true;
		}
		g->cc_major = maj;
		g->cc_minor = min;
	}
	if (g) {
		tg->gpus = g;
		tg->ngpus = 1;
	}

	drv = gpuenv_toml_get(t, "driver");
	cuda = gpuenv_toml_get(t, "cuda");
	if (drv) {
		gpuenv_kb_ver_t v;
		if ((r = mf_cstr(L, drv, "driver", &tg->driver)))
			return r;
		if (!gpuenv_kb_ver_parse(gpuenv_str(tg->driver), &v) || v.n < 2)
			return mf_err(L, GPUENV_ESYNTAX, drv->line, drv->col,
				"%s driver = \"%s\": not a driver version (\"535.104.05\")", where, tg->driver);
	}
	if (cuda) {
		gpuenv_kb_ver_t v;
		if ((r = mf_cstr(L, cuda, "cuda", &s)))
			return r;
		if ((r = gpuenv_kb_cuda_parse(L->ctx, gpuenv_str(s), &v))) {
			return gpuenv_fail_prefix(L->ctx, r, L->file, cuda->line, cuda->col, "%s cuda = \"%s\"",
				where, s);
		}
		/* MAJOR.MINOR, as NVML reports it (a patch level is dropped) */
		tg->driver_cuda = gpuenv_arena_printf(L->arena, "%u.%u", v.part[0], v.part[1]).ptr;
		if (!tg->driver_cuda)
			return gpuenv_oom(L->ctx, "the manifest");
	}
	if (g && !drv && !cuda)
		return mf_err(L, GPUENV_ENOTFOUND, mt->line, t->col ? t->col : 1,
			"%s: a GPU target needs driver (its driver version, \"535.104.05\") or cuda (the "
			"newest CUDA its driver runs, \"12.2\")", where);
	if (!(py = gpuenv_toml_get(t, "python")))
		return mf_err(L, GPUENV_ENOTFOUND, mt->line, t->col ? t->col : 1,
			"%s: missing python (the target's Python version, \"3.12\")", where);
	if ((r = mf_cstr(L, py, "python", &tg->python)))
		return r;
	{
		const char *d1 = strchr(tg->python, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
		size_t l2 = d2 ? (size_t)(d2 - d1 - 1) : d1 ? strlen(d1 + 1) : 0;
		if (!d1 || !all_digits(tg->python, (size_t)(d1 - tg->python)) || !all_digits(d1 + 1, l2) ||
			(d2 && !all_digits(d2 + 1, strlen(d2 + 1))) || strlen(tg->python) > 16)
			return mf_err(L, GPUENV_ESYNTAX, py->line, py->col,
				"%s python = \"%s\": not a Python version X.Y (\"3.12\")", where, tg->python);
		/* the wheel tags of a target are Python 3's (cp30 to cp399) */
		if (strncmp(tg->python, "3.", 2) || l2 > 2) {
			mf_err(L, GPUENV_EUNSUPPORTED, py->line, py->col,
				"%s python = \"%s\": gpuenv locks for Python 3.0 to 3.99 only", where, tg->python);
			return gpuenv_hint(L->ctx, "the Python the target runs, \"3.10\" to \"3.14\" today; a "
						   "Python 2 project needs another tool (pip 20.3 was the last for it)");
		}
	}
	if (!(plat = gpuenv_toml_get(t, "platform")))
		return mf_err(L, GPUENV_ENOTFOUND, mt->line, t->col ? t->col : 1,
			"%s: missing platform (a wheel platform tag: \"manylinux_2_28_x86_64\", "
			"\"musllinux_1_2_x86_64\", \"linux_aarch64\")", where);
	if ((r = mf_cstr(L, plat, "platform", &mt->platform)))
		return r;
	bool oom = false;
	if (!platform_parse(L, mt->platform, tg, &oom)) {
		if (oom)
			return gpuenv_oom(L->ctx, "the manifest");
		mf_err(L, GPUENV_ESYNTAX, plat->line, plat->col,
			"%s platform = \"%s\": not a Linux wheel platform tag", where, mt->platform);
		return gpuenv_hint(L->ctx, "manylinux_X_Y_ARCH (glibc X.Y), musllinux_X_Y_ARCH or linux_ARCH: "
					   "\"manylinux_2_28_x86_64\", \"linux_aarch64\"");
	}
	if ((x = gpuenv_toml_get(t, "groups")) && (r = list_member(L, x, where, "groups",
							   (const char ***)&mt->groups, &mt->ngroups)))
		return r;
	if ((x = gpuenv_toml_get(t, "extras")) && (r = list_member(L, x, where, "extras",
							   (const char ***)&mt->extras, &mt->nextras)))
		return r;
	if ((x = gpuenv_toml_get(t, "torch-backend")) && (r = backend_at(L, x, "torch-backend", &mt->torch_backend)))
		return r;
	if (!mt->torch_backend)
		mt->torch_backend = L->m->torch_backend;
	return 0;
}

static int target_cmp(const void *a, const void *b)
{
	return strcmp(((const gpuenv_manifest_target_t *)a)->name, ((const gpuenv_manifest_target_t *)b)->name);
}

/* [tool.gpuenv.registries]: HOST = "URL" (a registry's requests sent to a
 * mirror; `gpuenv image`) */
static int registries_load(mf_load_t *L, const gpuenv_toml_value_t *x)
{
	gpuenv_manifest_registry_t *rs;
	int r;

	if (!x)
		return 0;
	if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_TABLE, "tool.gpuenv.registries")))
		return r;
	if (x->u.tab->len > MF_MAX_SOURCES)
		return mf_err(L, GPUENV_ETOOBIG, x->line, x->col, "more than %d registries", MF_MAX_SOURCES);
	if (!(rs = gpuenv_arena_calloc(L->arena, x->u.tab->len + 1, sizeof(*rs))))
		return gpuenv_oom(L->ctx, "the manifest");
	for (uint32_t i = 0; i < x->u.tab->len; i++) {
		const gpuenv_toml_kv_t *kv = x->u.tab->items[i];
		const char *u;
		if (!kv->key.len || memchr(kv->key.ptr, '\0', kv->key.len) || memchr(kv->key.ptr, '/', kv->key.len))
			return mf_err(L, GPUENV_ESYNTAX, kv->line, kv->col,
				"[tool.gpuenv.registries]: a key is a registry host such as \"nvcr.io\"");
		if ((r = mf_cstr(L, &kv->val, "a registry URL", &u)))
			return r;
		if (strncmp(u, "https://", 8) && strncmp(u, "http://", 7))
			return mf_err(L, GPUENV_EUNSUPPORTED, kv->val.line, kv->val.col,
				"registries.%.*s = \"%s\": not an http(s):// URL", (int)kv->key.len,
				kv->key.ptr, u);
		if (!(rs[i].host = gpuenv_arena_strndup(L->arena, kv->key.ptr, kv->key.len)))
			return gpuenv_oom(L->ctx, "the manifest");
		rs[i].url = u;
	}
	L->m->registries = rs;
	L->m->nregistries = x->u.tab->len;
	return 0;
}

int mf_load_gpuenv(mf_load_t *L, const gpuenv_toml_table_t *root)
{
	const gpuenv_toml_value_t *g = gpuenv_toml_get_path(root, "tool.gpuenv"), *x;
	gpuenv_manifest_target_t *ts;
	int r;

	L->m->torch_backend = "auto";
	L->m->torch_index = TORCH_INDEX;
	if (!g)
		return 0;
	if ((r = gpuenv_toml_expect(L->doc, g, GPUENV_TOML_TABLE, "tool.gpuenv")) ||
		(r = mf_check_keys(L, g->u.tab, GPUENV_KEYS, "[tool.gpuenv]")))
		return r;
	if ((x = gpuenv_toml_get(g->u.tab, "torch-backend")) &&
		(r = backend_at(L, x, "torch-backend", &L->m->torch_backend)))
		return r;
	if ((x = gpuenv_toml_get(g->u.tab, "torch-index"))) {
		const char *u;
		size_t n;
		if ((r = mf_cstr(L, x, "torch-index", &u)))
			return r;
		if (strncmp(u, "https://", 8) && strncmp(u, "http://", 7) && strncmp(u, "file://", 7))
			return mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col,
				"torch-index = \"%s\": not an http(s):// or file:// URL", u);
		n = strlen(u);
		while (n > 8 && u[n - 1] == '/')
			n--;
		if (!(L->m->torch_index = gpuenv_arena_strndup(L->arena, u, n)))
			return gpuenv_oom(L->ctx, "the manifest");
	}
	if ((r = registries_load(L, gpuenv_toml_get(g->u.tab, "registries"))))
		return r;
	if ((x = gpuenv_toml_get(g->u.tab, "build-against-env"))) {
		const char **names;
		size_t n;
		if ((r = mf_strs(L, x, "build-against-env", &names, &n)))
			return r;
		for (size_t i = 0; i < n; i++)
			if (!(names[i] = mf_norm(L, names[i])))
				return -ENOMEM;
		L->m->build_against_env = names;
		L->m->nbuild_against_env = n;
	}
	if ((x = gpuenv_toml_get(g->u.tab, "label-prefix")) &&
		(r = mf_cstr(L, x, "label-prefix", &L->m->label_prefix)))
		return r;
	if (!(x = gpuenv_toml_get(g->u.tab, "targets")))
		return 0;
	if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_TABLE, "tool.gpuenv.targets")))
		return r;
	if (x->u.tab->len > MF_MAX_TARGETS)
		return mf_err(L, GPUENV_ETOOBIG, x->line, x->col, "more than %d targets", MF_MAX_TARGETS);
	ts = gpuenv_arena_calloc(L->arena, x->u.tab->len ? x->u.tab->len : 1, sizeof(*ts));
	if (!ts)
		return gpuenv_oom(L->ctx, "the manifest");
	for (uint32_t i = 0; i < x->u.tab->len; i++)
		if ((r = target_load(L, x->u.tab->items[i], &ts[i])))
			return r;
	qsort(ts, x->u.tab->len, sizeof(*ts), target_cmp);
	L->m->targets = ts;
	L->m->ntargets = x->u.tab->len;
	return 0;
}

/* ---- the dependencies of one target ------------------------------------------------ */


static const gpuenv_group_t *find_group(const gpuenv_manifest_t *m, const char *name)
{
	for (size_t i = 0; i < m->ngroups; i++)
		if (!strcmp(m->groups[i].name, name))
			return &m->groups[i];
	return NULL;
}

static const gpuenv_extra_t *find_extra(const gpuenv_manifest_t *m, const char *name)
{
	for (size_t i = 0; i < m->nextras; i++)
		if (!strcmp(m->extras[i].name, name))
			return &m->extras[i];
	return NULL;
}

/* an optional main dependency the target's extras turn on */
static bool extra_on(const gpuenv_manifest_t *m, const gpuenv_manifest_target_t *t, const gpuenv_dep_t *d)
{
	if (d->extra)
		return mf_in_list(t->extras, t->nextras, d->extra);
	for (size_t i = 0; i < t->nextras; i++) {
		const gpuenv_extra_t *e = find_extra(m, t->extras[i]);
		if (e && mf_in_list(e->names, e->nnames, d->name))
			return true;
	}
	return false;
}

static int deps_cmp(const void *a, const void *b)
{
	const gpuenv_dep_t *x = *(const gpuenv_dep_t *const *)a, *y = *(const gpuenv_dep_t *const *)b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	c = strcmp(x->group ? x->group : "", y->group ? y->group : "");
	if (c)
		return c;
	return x->line != y->line ? (x->line < y->line ? -1 : 1) : (x->col < y->col ? -1 : x->col > y->col);
}

/* uv's sources by marker / extra / group: the first that applies to the
 * target gives the dependency's source (or direct reference); none: the
 * default indexes, as uv falls back to them */
static int sources_by_target(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t, gpuenv_dep_t *deps, size_t n)
{
	gpuenv_marker_env_t env;
	bool have_env = false;
	int r;

	for (size_t i = 0; i < n; i++) {
		gpuenv_dep_t *d = &deps[i];
		for (size_t k = 0; k < d->nsources_by; k++) {
			const gpuenv_dep_source_t *e = &d->sources_by[k];
			bool holds = true;
			if ((e->extra && (!d->extra || strcmp(d->extra, e->extra))) ||
				(e->group && (!d->group || strcmp(d->group, e->group))))
				continue;
			if (e->marker && !have_env) {
				gpuenv_marker_env_default(&env);
				if ((r = gpuenv_target_marker_env(ctx, arena, &t->target, &env)))
					return r;
				have_env = true;
			}
			if (e->marker && (r = gpuenv_marker_eval(ctx, e->marker, &env, &holds))) {
				if (r == -ENOMEM)
					return r;
				return gpuenv_fail_prefix(ctx, r, m->path, e->line, e->col,
					"target %s: whether the source of %s applies (marker '%s')", t->name, d->name,
					e->marker_text);
			}
			if (!holds)
				continue;
			d->source = e->index;
			d->direct = e->direct;
			d->line = e->line;
			d->col = e->col;
			break;
		}
	}
	return 0;
}

int gpuenv_manifest_target_deps(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t, const gpuenv_dep_t **out, size_t *n)
{
	const gpuenv_dep_t **ptrs;
	gpuenv_dep_t *res;
	size_t cap = m->ndeps, k = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < t->ngroups; i++) {
		const gpuenv_group_t *g = find_group(m, t->groups[i]);
		if (!g)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, m->path, t->line, 0,
				"target %s: the project declares no group '%s'", t->name, t->groups[i]);
		cap += g->ndeps;
	}
	for (size_t i = 0; i < t->nextras; i++)
		if (!find_extra(m, t->extras[i]))
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, m->path, t->line, 0,
				"target %s: the project declares no extra '%s'", t->name, t->extras[i]);
	ptrs = gpuenv_arena_calloc(arena, cap ? cap : 1, sizeof(*ptrs));
	res = gpuenv_arena_calloc(arena, cap ? cap : 1, sizeof(*res));
	if (!ptrs || !res)
		return gpuenv_oom(ctx, "a target's dependencies");
	for (size_t i = 0; i < m->ndeps; i++) {
		const gpuenv_dep_t *d = &m->deps[i];
		bool replaced = false;
		if (d->optional && !extra_on(m, t, d))
			continue;
		/* a group's declaration of the name replaces the main one */
		for (size_t g = 0; g < t->ngroups && !replaced; g++) {
			const gpuenv_group_t *gr = find_group(m, t->groups[g]);
			for (size_t j = 0; j < gr->ndeps && !replaced; j++)
				replaced = !strcmp(gr->deps[j].name, d->name);
		}
		if (!replaced)
			ptrs[k++] = d;
	}
	for (size_t g = 0; g < t->ngroups; g++) {
		const gpuenv_group_t *gr = find_group(m, t->groups[g]);
		bool dup = false;
		for (size_t p = 0; p < g; p++)
			dup |= !strcmp(t->groups[p], t->groups[g]);
		for (size_t j = 0; !dup && j < gr->ndeps; j++)
			ptrs[k++] = &gr->deps[j];
	}
	qsort(ptrs, k, sizeof(*ptrs), deps_cmp);
	for (size_t i = 0; i < k; i++)
		res[i] = *ptrs[i];
	int r = sources_by_target(ctx, arena, m, t, res, k);
	if (r)
		return r;
	*out = res;
	*n = k;
	return 0;
}
