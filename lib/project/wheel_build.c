/* A torch-family wheel's build, read from the wheel rather than assumed
 * from where it came from, and the lock-time check of a target's stack
 * (include/gpuenv/project.h).
 *
 * The build: the local version ("+cu128", "+cpu") where there is one;
 * otherwise the wheel's requirements: PyPI's Linux torch declares
 * nvidia-cuda-runtime-cu12==12.8.90 (CUDA 12.8) or cuda-toolkit[...]==13.0.2
 * (CUDA 13.0), an older one only CUDA-suffixed nvidia-* packages (a CUDA
 * major: the KB's PyPI build of the release names the tag); a manylinux
 * wheel with none of them has no CUDA code; a plain linux_aarch64 wheel is
 * a JetPack build with L4T CUDA.  Every "cu126" goes through
 * gpuenv_kb_cuda_of_tag. */
#include "gpuenv/project.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/wheel.h"

/* "12.8.90" -> "cu128" into tag (two parts at least), false otherwise; the
 * tag is checked by gpuenv_kb_cuda_of_tag, the one reader of such tags */
static bool tag_of_cuda(gpuenv_str_t ver, char *tag, size_t size)
{
	gpuenv_kb_ver_t v;
	char cuda[16];
	size_t n = 0;

	while (n < ver.len && ver.ptr[n] != '+') /* a local part is not the CUDA's */
		n++;
	for (size_t dots = 0, i = 0; i < n; i++)
		if (ver.ptr[i] == '.' && ++dots == 3)
			n = i;
	if (!gpuenv_kb_ver_parse(gpuenv_str_n(ver.ptr, n), &v) || v.n < 2 || v.part[1] > 9)
		return false;
	snprintf(tag, size, "cu%u%u", v.part[0], v.part[1]);
	return gpuenv_kb_cuda_of_tag(gpuenv_str(tag), cuda, sizeof(cuda), NULL) != NULL;
}

/* The version an exact pin names ("==12.8.90"), or an empty slice. */
static gpuenv_str_t pinned_version(const gpuenv_requirement_t *r)
{
	for (size_t i = 0; i < r->spec.n; i++)
		if (r->spec.items[i].op == GPUENV_OP_EQ && !r->spec.items[i].wildcard)
			return r->spec.items[i].text;
	return (gpuenv_str_t){ 0 };
}

static bool applies(gpuenv_ctx_t *ctx, const gpuenv_requirement_t *r, const gpuenv_marker_env_t *env)
{
	gpuenv_error_t keep = ctx->err;
	bool yes = true;

	if (!r->marker || !env)
		return true;
	if (gpuenv_marker_eval(ctx, r->marker, env, &yes) != 0) {
		ctx->err = keep; /* a marker it cannot judge: it may apply */
		return true;
	}
	return yes;
}

/* The KB's PyPI build of the release of version (its tag) when its CUDA
 * major is major, else NULL. */
static const gpuenv_kb_torch_variant_t *pypi_build(const gpuenv_kb_t *kb, gpuenv_str_t version, int major)
{
	gpuenv_str_t head;
	const gpuenv_kb_torch_variant_t *v;

	if (!kb)
		return NULL;
	gpuenv_str_split(version, '+', &head);
	v = gpuenv_kb_torch_variant(kb, head);
	return v && v->pypi_default == 1 && v->cuda.n && (int)v->cuda.part[0] == major ? v : NULL;
}

/* The wheel's platforms: any manylinux / musllinux, any plain linux_aarch64,
 * any x86_64 */
static void platforms(const gpuenv_wheel_name_t *wn, bool *many, bool *l4t)
{
	*many = *l4t = false;
	for (size_t i = 0; i < wn->ntags; i++) {
		gpuenv_str_t p = wn->tags[i].platform;
		if ((p.len > 9 && !memcmp(p.ptr, "manylinux", 9)) || (p.len > 9 && !memcmp(p.ptr, "musllinux", 9)))
			*many = true;
		if (gpuenv_str_eq_cstr(p, "linux_aarch64"))
			*l4t = true;
	}
}

int gpuenv_project_wheel_build(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const char *filename, const gpuenv_requirement_t *reqs, size_t nreqs, const gpuenv_marker_env_t *env,
	const char *source_url, gpuenv_wheel_build_t *out)
{
	gpuenv_wheel_name_t wn;
	gpuenv_error_t keep = ctx->err;
	char cuda[16];
	int major = 0;
	const char *via = NULL;
	bool many, l4t;

	memset(out, 0, sizeof(*out));
	if (gpuenv_wheel_name_parse(ctx, arena, gpuenv_str(filename), 0, &wn) != 0) {
		if (ctx->err.code == -ENOMEM)
			return ctx->err.code;
		ctx->err = keep;
		out->how = "a file name that is not a wheel's";
		return 0;
	}
	gpuenv_str_t local = wn.version.local;
	if (local.len) {
		snprintf(out->tag, sizeof(out->tag), "%.*s", (int)local.len, local.ptr);
		out->how = "its local version";
		if (gpuenv_str_eq_cstr(local, "cpu"))
			out->kind = GPUENV_BUILD_CPU;
		else if (gpuenv_kb_cuda_of_tag(local, cuda, sizeof(cuda), NULL)) {
			out->kind = GPUENV_BUILD_CUDA;
			out->cuda_major = (int)strtol(cuda, NULL, 10);
		} else
			out->kind = GPUENV_BUILD_OTHER;
		return 0;
	}
	if (!reqs) {
		out->how = "no local version, and its requirements were not read";
		return 0;
	}
	for (size_t i = 0; i < nreqs; i++) {
		const gpuenv_requirement_t *r = &reqs[i];
		char name[128];
		if (r->name.len >= sizeof(name) || !applies(ctx, r, env))
			continue;
		gpuenv_name_normalize_to(r->name, name, sizeof(name));
		gpuenv_str_t pin = pinned_version(r);
		bool runtime = !strncmp(name, "nvidia-cuda-runtime", 19) || !strcmp(name, "cuda-toolkit");
		if (runtime && pin.len && tag_of_cuda(pin, out->tag, sizeof(out->tag))) {
			out->kind = GPUENV_BUILD_CUDA;
			gpuenv_kb_cuda_of_tag(gpuenv_str(out->tag), cuda, sizeof(cuda), NULL);
			out->cuda_major = (int)strtol(cuda, NULL, 10);
			out->how = gpuenv_arena_printf(arena, "its requirement %s==%.*s", name, (int)pin.len, pin.ptr).ptr;
			return out->how ? 0 : gpuenv_oom(ctx, "a wheel's build");
		}
		int m = gpuenv_manifest_cuda_major(name);
		if (m > 0 && !major) {
			major = m;
			via = gpuenv_arena_printf(arena, "its requirement %s", name).ptr;
			if (!via)
				return gpuenv_oom(ctx, "a wheel's build");
		}
	}
	if (major) {
		const gpuenv_kb_torch_variant_t *v = pypi_build(kb, wn.version_text, major);
		out->kind = GPUENV_BUILD_CUDA;
		out->cuda_major = major;
		if (v)
			snprintf(out->tag, sizeof(out->tag), "%.*s", GPUENV_STR_ARG(v->tag));
		out->how = v ? gpuenv_arena_printf(arena, "%s (CUDA %d; the knowledge base's PyPI build of the "
			"release is %.*s)", via, major, GPUENV_STR_ARG(v->tag)).ptr : via;
		return out->how ? 0 : gpuenv_oom(ctx, "a wheel's build");
	}
	platforms(&wn, &many, &l4t);
	if (l4t && !many) {
		/* JetPack's builds: plain linux_aarch64, CUDA from L4T, the
		 * index's last part names it (".../jp6/cu126") */
		out->kind = GPUENV_BUILD_CUDA;
		out->how = "a linux_aarch64 wheel without nvidia-* requirements: a JetPack build with L4T CUDA";
		if (source_url) {
			size_t n = strlen(source_url), s;
			while (n && source_url[n - 1] == '/')
				n--;
			for (s = n; s && source_url[s - 1] != '/'; s--)
				;
			if (n - s < sizeof(out->tag)) {
				char tail[sizeof(out->tag)];
				memcpy(tail, source_url + s, n - s);
				tail[n - s] = '\0';
				if (gpuenv_kb_cuda_of_tag(gpuenv_str(tail), cuda, sizeof(cuda), NULL)) {
					memcpy(out->tag, tail, n - s + 1);
					out->cuda_major = (int)strtol(cuda, NULL, 10);
				}
			}
		}
		return 0;
	}
	if (many) {
		out->kind = GPUENV_BUILD_CPU;
		snprintf(out->tag, sizeof(out->tag), "cpu");
		out->how = "no local version and no nvidia-* or cuda-toolkit requirement: a build without CUDA code";
		return 0;
	}
	out->how = "no local version and no nvidia-* requirement on a platform gpuenv cannot judge";
	return 0;
}

/* ---- the stack check ------------------------------------------------------------------ */

static const gpuenv_resolved_t *locked(const gpuenv_resolution_t *res, const char *name)
{
	for (size_t i = 0; i < res->npkgs; i++)
		if (!strcmp(res->pkgs[i].name, name))
			return &res->pkgs[i];
	return NULL;
}

static bool torch_requires(const gpuenv_resolution_t *res, const gpuenv_resolved_t *torch, const char *name)
{
	for (size_t i = 0; i < torch->ndeps; i++)
		if (!strcmp(res->pkgs[torch->deps[i]].name, name))
			return true;
	return false;
}

/* Do a (a package's version) and b (the KB's) differ in their first n parts? */
static bool differs(const char *a, const gpuenv_kb_ver_t *b, unsigned n)
{
	gpuenv_kb_ver_t v;
	size_t l = 0, dots = 0;

	while (a[l] && (a[l] != '.' || ++dots < 4) && a[l] != '+')
		l++;
	if (!gpuenv_kb_ver_parse(gpuenv_str_n(a, l), &v))
		return false;
	for (unsigned i = 0; i < n && i < v.n && i < b->n; i++)
		if (v.part[i] != b->part[i])
			return true;
	return false;
}

static int add(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_stack_warning_t **out, size_t *n,
	const char *pkg, const char *text)
{
	gpuenv_stack_warning_t *w = gpuenv_arena_calloc(arena, *n + 1, sizeof(*w));
	if (!w || !text)
		return gpuenv_oom(ctx, "the stack check");
	if (*n)
		memcpy(w, *out, *n * sizeof(*w));
	w[*n].package = pkg;
	w[(*n)++].text = text;
	*out = w;
	return 0;
}

int gpuenv_project_stack_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const char *target, const gpuenv_requirement_t *roots, size_t nroots, const gpuenv_resolution_t *res,
	const gpuenv_resolved_t *torch, const char *tag, gpuenv_stack_warning_t **out, size_t *nout)
{
	const char *torch_version = torch ? torch->cand->version : NULL;
	const gpuenv_kb_torch_variant_t *var;
	char vt[96], c1[64];
	gpuenv_str_t head;

	*out = NULL;
	*nout = 0;
	if (!kb || !torch_version || !tag || !tag[0] || !strcmp(tag, "cpu"))
		return 0;
	gpuenv_str_split(gpuenv_str(torch_version), '+', &head);
	snprintf(vt, sizeof(vt), "%.*s+%s", (int)head.len, head.ptr, tag);
	if (!(var = gpuenv_kb_torch_variant(kb, gpuenv_str(vt))))
		return 0;
	gpuenv_kb_row_where(&var->row, c1, sizeof(c1));
	for (size_t i = 0; i < nroots; i++) {
		char name[128];
		const gpuenv_resolved_t *r;
		const gpuenv_kb_ver_t *built = NULL;
		const char *lib = NULL;
		if (roots[i].name.len >= sizeof(name))
			continue;
		gpuenv_name_normalize_to(roots[i].name, name, sizeof(name));
		if (!strncmp(name, "nvidia-cudnn-", 13))
			built = &var->cudnn, lib = "cuDNN";
		else if (!strncmp(name, "nvidia-nccl-", 12))
			built = &var->nccl, lib = "NCCL";
		else if (!strcmp(name, "tensorrt") || !strncmp(name, "tensorrt-cu", 11)) {
			/* TensorRT: a build for other CUDA majors than torch's */
			if (!(r = locked(res, name)))
				continue;
			for (size_t k = 0; k < kb->n_tensorrt; k++) {
				const gpuenv_kb_tensorrt_t *x = &kb->tensorrt[k];
				bool ok = false;
				char c2[64];
				if (!x->cuda_majors.n || differs(r->cand->version, &x->tensorrt, x->tensorrt.n))
					continue;
				for (size_t j = 0; j < x->cuda_majors.n; j++)
					ok |= x->cuda_majors.v[j] == (int64_t)var->cuda.part[0];
				if (ok)
					break;
				gpuenv_kb_row_where(&x->row, c2, sizeof(c2));
				if (add(ctx, arena, out, nout, r->name, gpuenv_arena_printf(arena, "target %s: %s %s "
					"is built for other CUDA majors than torch %s (CUDA %.*s) [%s]: the process loads "
					"two CUDA runtimes; fix: pin a tensorrt release for CUDA %u", target, name,
					r->cand->version, torch_version, GPUENV_STR_ARG(var->cuda.str), c2,
					var->cuda.part[0]).ptr))
					return -ENOMEM;
				break;
			}
			continue;
		} else
			continue;
		if (!built->n || !(r = locked(res, name)) || !differs(r->cand->version, built, 2))
			continue;
		if (torch_requires(res, torch, name))
			continue; /* torch loads the package's copy: the resolver made them agree */
		if (add(ctx, arena, out, nout, r->name, gpuenv_arena_printf(arena, "target %s: %s %s is locked "
			"beside torch %s, which was built with %s %.*s [%s] and carries its own copy (its wheel "
			"requires no %s): the environment holds two %s copies and torch loads its own, %.*s; fix: "
			"drop the %s pin (or pin %.*s), or take a torch build made with %s %s (`gpuenv kb torch`)",
			target, name, r->cand->version, torch_version, lib, GPUENV_STR_ARG(built->str), c1, name, lib,
			GPUENV_STR_ARG(built->str), name, GPUENV_STR_ARG(built->str), lib, r->cand->version).ptr))
			return -ENOMEM;
	}
	return 0;
}
