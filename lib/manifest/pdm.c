/* PDM's [[tool.pdm.source]] (docs/manifest.md, "PDM"), as PDM's
 * configuration documentation describes it: name, url (with ${VAR} from
 * the environment and ${PROJECT_ROOT}), verify_ssl, type = "index" |
 * "find_links", include_packages (glob patterns of the names that come
 * from this source alone).  A source named "pypi" replaces PyPI; the
 * others are asked after it, in declaration order (PDM's own order of its
 * source list; gpuenv takes a package from the first source that has it,
 * as PDM's respect-source-order does). */
#include "manifest_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const PDM_SOURCE_KEYS[] = { "name", "url", "verify_ssl", "type", "include_packages",
	"exclude_packages", "username", "password", NULL };

/* ${VAR} in a source's URL: ${PROJECT_ROOT} the manifest's folder, others
 * the environment's; an unset one is an error at the url */
static int expand(mf_load_t *L, const gpuenv_toml_value_t *v, const char *u, const char **out)
{
	gpuenv_buf_t b;
	const char *p = u;

	gpuenv_buf_init(&b, L->ctx, 4 * MF_MAX_STR);
	while (*p) {
		const char *end;
		char var[128];
		if (p[0] != '$' || p[1] != '{' || !(end = strchr(p, '}')) || (size_t)(end - p - 2) >= sizeof(var)) {
			gpuenv_buf_putc(&b, *p++);
			continue;
		}
		memcpy(var, p + 2, (size_t)(end - p - 2));
		var[end - p - 2] = '\0';
		if (!strcmp(var, "PROJECT_ROOT")) {
			char dir[PATH_MAX], real[PATH_MAX];
			const char *slash = strrchr(L->file, '/');
			snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - L->file) : 1, slash ? L->file : ".");
			if (!realpath(dir[0] ? dir : "/", real)) {
				gpuenv_buf_free(&b);
				return mf_err(L, GPUENV_ENOTFOUND, v->line, v->col, "url '%s': the project's folder "
											 "cannot be found", u);
			}
			/* "file:///${PROJECT_ROOT}/x": the folder is absolute already */
			gpuenv_buf_puts(&b, b.len && b.data[b.len - 1] == '/' && real[0] == '/' ? real + 1 : real);
		} else {
			const char *val = gpuenv_ctx_getenv(L->ctx, var);
			if (!val) {
				gpuenv_buf_free(&b);
				mf_err(L, GPUENV_ENOTFOUND, v->line, v->col, "url '%s': ${%s} is not set", u, var);
				return gpuenv_hint(L->ctx, "set %s in the environment, as PDM reads it", var);
			}
			gpuenv_buf_puts(&b, val);
		}
		p = end + 1;
	}
	if (gpuenv_buf_failed(&b)) {
		gpuenv_buf_free(&b);
		return gpuenv_oom(L->ctx, "the manifest");
	}
	*out = gpuenv_arena_strndup(L->arena, b.data ? b.data : "", b.len);
	gpuenv_buf_free(&b);
	return *out ? 0 : gpuenv_oom(L->ctx, "the manifest");
}

int mf_pdm_sources(mf_load_t *L, const gpuenv_toml_value_t *pdm)
{
	const gpuenv_toml_value_t *v, *x;
	int r;

	if ((r = gpuenv_toml_expect(L->doc, pdm, GPUENV_TOML_TABLE, "tool.pdm")))
		return r;
	mf_dialect(L, "pdm");
	if (!(v = gpuenv_toml_get(pdm->u.tab, "source")))
		return 0;
	if ((r = gpuenv_toml_expect(L->doc, v, GPUENV_TOML_ARRAY, "tool.pdm.source")))
		return r;
	for (uint32_t i = 0; i < v->u.arr->len; i++) {
		const gpuenv_toml_value_t *e = v->u.arr->items[i];
		const char *name, *raw, *url, *type = "index";
		gpuenv_manifest_source_info_t *info;
		bool pypi, verify = true;
		if (e->type != GPUENV_TOML_TABLE)
			return mf_err(L, GPUENV_ETYPE, e->line, e->col, "[[tool.pdm.source]] entries are tables");
		if ((r = mf_check_keys(L, e->u.tab, PDM_SOURCE_KEYS, "[[tool.pdm.source]]")))
			return r;
		if (!(x = gpuenv_toml_get(e->u.tab, "name")))
			return mf_err(L, GPUENV_ENOTFOUND, e->line, e->col, "[[tool.pdm.source]] without a name");
		if ((r = mf_cstr(L, x, "name", &name)))
			return r;
		if (mf_source_find(L, name) >= 0)
			return mf_err(L, GPUENV_EDUPLICATE, x->line, x->col, "source '%s' is declared twice", name);
		pypi = gpuenv_str_ieq(gpuenv_str(name), gpuenv_str("pypi"));
		if (!(x = gpuenv_toml_get(e->u.tab, "url")))
			return mf_err(L, GPUENV_ENOTFOUND, e->line, e->col, "source '%s' has no url", name);
		if ((r = mf_cstr(L, x, "url", &raw)) || (r = expand(L, x, raw, &url)))
			return r;
		if (strncmp(url, "https://", 8) && strncmp(url, "http://", 7) && strncmp(url, "file://", 7))
			return mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col,
				"source '%s': '%s' is not an http(s):// or file:// URL", name, url);
		if ((x = gpuenv_toml_get(e->u.tab, "type"))) {
			if ((r = mf_cstr(L, x, "type", &type)))
				return r;
			if (strcmp(type, "index") && strcmp(type, "find_links")) {
				mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col, "source '%s': unknown type '%s'", name,
					type);
				return gpuenv_hint(L->ctx, "\"index\" (PEP 503, the default) or \"find_links\"");
			}
		}
		if ((x = gpuenv_toml_get(e->u.tab, "exclude_packages")) && x->type == GPUENV_TOML_ARRAY &&
			x->u.arr->len) {
			mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col,
				"source '%s': exclude_packages is not supported (gpuenv's index client cannot leave one "
				"source out for some names)", name);
			return gpuenv_hint(L->ctx, "pin the other packages with include_packages on their own "
						   "source, or drop the pattern");
		}
		if ((x = gpuenv_toml_get(e->u.tab, "username")) || (x = gpuenv_toml_get(e->u.tab, "password"))) {
			mf_err(L, GPUENV_EUNSUPPORTED, x->line, x->col,
				"source '%s': credentials are not read from pyproject.toml", name);
			return gpuenv_hint(L->ctx, "put them in the URL as ${VAR} (\"https://${USER}:${TOKEN}@host/"
						   "simple\"), or in ~/.netrc");
		}
		if ((x = gpuenv_toml_get(e->u.tab, "verify_ssl"))) {
			if ((r = gpuenv_toml_expect(L->doc, x, GPUENV_TOML_BOOL, "verify_ssl")))
				return r;
			verify = x->u.b;
			if (!verify && (r = mf_warn(L, x->line, x->col,
						"source '%s': verify_ssl = false is not honoured: gpuenv verifies "
						"every TLS certificate (a private CA goes in SSL_CERT_FILE)", name)))
				return r;
		}
		if (pypi)
			L->no_pypi = true;
		if ((r = mf_add_source(L, name, url, pypi ? GPUENV_SOURCE_DEFAULT : GPUENV_SOURCE_SUPPLEMENTAL,
			     !strcmp(type, "find_links"), "[[tool.pdm.source]]", e->line, e->col)))
			return r;
		info = &L->source_info[L->m->nsources - 1];
		info->verify_ssl = verify;
		if ((x = gpuenv_toml_get(e->u.tab, "include_packages"))) {
			const char **pats;
			size_t n;
			if ((r = mf_strs(L, x, "include_packages", &pats, &n)))
				return r;
			for (size_t k = 0; k < n; k++)
				if (!(pats[k] = mf_norm(L, pats[k])))
					return -ENOMEM;
			info->include = pats;
			info->ninclude = n;
		}
	}
	return 0;
}
