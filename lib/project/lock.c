/* Locking one target: the manifest's dependencies for it, the provider
 * over the index, the resolver, and the PEP 751 lock that records the
 * result with the target's hardware and the torch build's reason
 * (include/gpuenv/project.h). */
#include "gpuenv/project.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/toml.h"
#include "gpuenv/trace.h"
#include "gpuenv/wheel.h"

#define LOCK_MAX_KBT 8

const char *gpuenv_project_inputs_hash(gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t)
{
	gpuenv_sha256_t h;
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	const gpuenv_target_t *x = &t->target;

	gpuenv_sha256_init(&h);
	gpuenv_sha256_field(&h, "lock-format", "gpuenv-pylock-1");
	/* what every target shares, and this target's own line: editing
	 * another target leaves this lock fresh */
	if (m->common_inputs_hash && t->inputs_line) {
		gpuenv_sha256_field(&h, "manifest-common", m->common_inputs_hash);
		gpuenv_sha256_field(&h, "target-line", t->inputs_line);
	} else {
		gpuenv_sha256_field(&h, "manifest", m->inputs_hash);
	}
	gpuenv_sha256_field(&h, "target", t->name);
	if (!x->origin || strcmp(x->origin, "declared") != 0) {
		/* a probed machine (or a snapshot of one): what the lock depends
		 * on of it */
		for (size_t i = 0; i < x->ngpus; i++) {
			char cc[32];
			snprintf(cc, sizeof(cc), "%d.%d", x->gpus[i].cc_major, x->gpus[i].cc_minor);
			gpuenv_sha256_field(&h, "gpu", x->gpus[i].name);
			gpuenv_sha256_field(&h, "cc", cc);
		}
		gpuenv_sha256_field(&h, "driver", x->driver);
		gpuenv_sha256_field(&h, "driver_cuda", x->driver_cuda);
		gpuenv_sha256_field(&h, "python", x->python);
		gpuenv_sha256_field(&h, "machine", x->machine);
		gpuenv_sha256_field(&h, "libc", x->libc);
		gpuenv_sha256_field(&h, "libc_version", x->libc_version);
	}
	if (gpuenv_sha256_final(&h, d) != 0)
		return NULL; /* no memory: as the copy below */
	gpuenv_hex(d, sizeof(d), hex);
	return gpuenv_arena_strndup(arena, hex, strlen(hex));
}

const char *gpuenv_project_lock_name(gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t)
{
	if (!m->ntargets)
		return "pylock.toml";
	return gpuenv_arena_printf(arena, "pylock.%s.toml", t->name).ptr;
}

/* The target as one PEP 508 marker (PEP 751 environments). */
static const char *lock_environment(gpuenv_arena_t *arena, const gpuenv_marker_env_t *env)
{
	return gpuenv_arena_printf(arena,
		"implementation_name == '%s' and sys_platform == '%s' and platform_machine == '%s' and "
		"python_version == '%s'",
		env->implementation_name ? env->implementation_name : "cpython",
		env->sys_platform ? env->sys_platform : "linux",
		env->platform_machine ? env->platform_machine : "x86_64",
		env->python_version ? env->python_version : "3").ptr;
}

/* The sha256 of a local file:// wheel whose page gave none. */
static const char *lock_file_sha256(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *url)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	const char *path = gpuenv_file_url_path(arena, url);
	if (!path)
		return NULL;
	if (gpuenv_sha256_file(ctx, path, d) != 0)
		return NULL;
	gpuenv_hex(d, sizeof(d), hex);
	return gpuenv_arena_strndup(arena, hex, strlen(hex));
}

/* Why this torch-family wheel: the build locked (tag, read from the locked
 * torch wheel) beside the torch release locked, and for torch the
 * knowledge base's judgement of that release's build on the target's GPUs
 * and driver (kbt: the target's KB view, as the provider judged with). */
static const char *lock_torch_reason(gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_kb_target_t *kbt, size_t nkbt, const char *name, const char *version, const char *tag,
	const char *torch)
{
	const gpuenv_kb_torch_variant_t *var = NULL;
	gpuenv_buf_t b;
	gpuenv_str_t head;
	char vt[96];
	const char *out;

	gpuenv_buf_init(&b, arena->ctx, 1 << 16);
	gpuenv_buf_printf(&b, "%s %s, build %s for target %s%s", name, version, tag, req->t->name,
		req->backend->user_pinned ? " (the project's source)" : "");
	if (strcmp(name, "torch") != 0 && torch)
		gpuenv_buf_printf(&b, ", beside torch %s", torch);
	gpuenv_str_split(gpuenv_str(version), '+', &head);
	snprintf(vt, sizeof(vt), "%.*s+%s", (int)head.len, head.ptr, tag);
	if (!strcmp(name, "torch") && req->kb && (var = gpuenv_kb_torch_variant(req->kb, gpuenv_str(vt))) != NULL)
		for (size_t i = 0; i < nkbt; i++) {
			gpuenv_kb_torch_verdict_t vd;
			if (gpuenv_kb_torch_check(req->kb, &kbt[i], var, arena, &vd) != 0)
				break;
			for (size_t k = 0; k < vd.n_reason; k++)
				if (vd.reason[k].text)
					gpuenv_buf_printf(&b, "; %s%s", vd.reason[k].verdict == GPUENV_KB_NO ? "no: "
							: vd.reason[k].verdict == GPUENV_KB_UNKNOWN ? "unknown: " : "",
						vd.reason[k].text);
		}
	out = b.data && !gpuenv_buf_failed(&b) ? gpuenv_arena_strndup(arena, b.data, b.len) : NULL;
	gpuenv_buf_free(&b);
	return out;
}

/* The torch build the resolution locked, its reason naming the release
 * locked (and, when the KB's favourite was not offered, what was taken
 * instead), and the stack check's warnings: into out->locked and
 * out->warnings. */
static int lock_locked_build(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_requirement_t *roots, size_t nroots, gpuenv_project_lock_out_t *out,
	gpuenv_stack_warning_t **warn, size_t *nwarn)
{
	const gpuenv_resolution_t *res = &out->res;
	const gpuenv_resolved_t *torch = NULL;
	const gpuenv_pv_torch_offer_t *of = gpuenv_pv_torch_offer(out->pv);
	const char *note = NULL, *tag;
	char cuda[16];

	*warn = NULL;
	*nwarn = 0;
	out->locked = *req->backend;
	for (size_t i = 0; i < res->npkgs; i++)
		if (!strcmp(res->pkgs[i].name, "torch"))
			torch = &res->pkgs[i];
	if (!torch)
		return 0;
	const gpuenv_pv_file_t *pf = torch->cand->data;
	tag = pf->build ? pf->build : req->backend->backend;
	out->locked.backend = tag;
	out->locked.cuda = gpuenv_kb_cuda_of_tag(gpuenv_str(tag), cuda, sizeof(cuda), NULL)
		? gpuenv_arena_strndup(arena, cuda, strlen(cuda)) : NULL;
	if (of && req->backend->backend && (strcmp(tag, req->backend->backend) != 0 || !of->fav_offered)) {
		const char *v = torch->cand->version;
		bool plain = !strchr(v, '+');
		char fav[64] = "";
		if (req->backend->variant)
			snprintf(fav, sizeof(fav), "torch %.*s %s", GPUENV_STR_ARG(req->backend->variant->torch.str),
				req->backend->backend);
		note = gpuenv_arena_printf(arena, "%s is not on %s; took %s%s%s%s, the newest build there that runs on "
			"%s (the knowledge base's favourite%s%s)", of->fav_tag_offered && fav[0] ? fav
			: req->backend->backend, of->where, v, plain ? " (build " : "", plain ? tag : "", plain ? ")" : "",
			of->runs_on, fav[0] ? " is " : "", fav).ptr;
		if (!note)
			return gpuenv_oom(ctx, "the torch build's reason");
	}
	if (gpuenv_manifest_backend_locked(ctx, arena, req->t, req->kb, req->backend, torch->cand->version, tag,
		    note, &out->locked.reason) != 0)
		return ctx->err.code;
	if (gpuenv_project_stack_check(ctx, arena, req->kb, req->t->name, roots, nroots, res, torch, tag, warn,
		    nwarn) != 0)
		return ctx->err.code;
	if (*nwarn) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, ctx, 1 << 16);
		for (size_t i = 0; i < *nwarn; i++)
			gpuenv_buf_printf(&b, "%s%s", i ? "\n" : "", (*warn)[i].text);
		out->warnings = b.data && !gpuenv_buf_failed(&b) ? gpuenv_arena_strndup(arena, b.data, b.len) : NULL;
		out->locked.reason = out->warnings ? gpuenv_arena_printf(arena, "%s\nwarning: %s", out->locked.reason,
			out->warnings).ptr : NULL;
		gpuenv_buf_free(&b);
		if (!out->warnings || !out->locked.reason)
			return gpuenv_oom(ctx, "the stack check");
	}
	return 0;
}

/* The resolution's packages as lock entries (one file each), into lock:
 * what every lock gpuenv makes shares. */
static int lock_packages(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_marker_env_t *env,
	const gpuenv_resolution_t *res, gpuenv_lock_t *lock)
{
	gpuenv_lock_package_t *pk = gpuenv_arena_calloc(arena, res->npkgs ? res->npkgs : 1, sizeof(*pk));
	const char **envs = gpuenv_arena_calloc(arena, 1, sizeof(*envs));

	if (!pk || !envs)
		return gpuenv_oom(ctx, "the lock");
	memset(lock, 0, sizeof(*lock));
	lock->lock_version = "1.0";
	lock->created_by = "gpuenv";
	envs[0] = lock_environment(arena, env);
	if (!envs[0])
		return gpuenv_oom(ctx, "the lock");
	lock->nenvironments = 1;
	lock->environments = envs;

	for (size_t i = 0; i < res->npkgs; i++) {
		const gpuenv_resolved_t *r = &res->pkgs[i];
		const gpuenv_pv_file_t *pf = r->cand->data;
		gpuenv_lock_package_t *p = &pk[i];
		gpuenv_lock_file_t *w = gpuenv_arena_calloc(arena, 1, sizeof(*w));
		gpuenv_lock_dep_t *d = gpuenv_arena_calloc(arena, r->ndeps ? r->ndeps : 1, sizeof(*d));
		if (!w || !d)
			return gpuenv_oom(ctx, "the lock");
		p->name = r->name;
		p->version = r->cand->version;
		for (size_t k = 0; k < r->ndeps; k++) {
			d[k].name = res->pkgs[r->deps[k]].name;
			d[k].version = res->pkgs[r->deps[k]].cand->version;
		}
		p->ndeps = r->ndeps;
		p->deps = d;
		if (pf->direct) {
			/* PEP 751: a directory's version is its build's (left out: the
			 * folder may change); a vcs entry's is its commit's */
			const gpuenv_pv_direct_t *x = pf->direct;
			p->requires_python = x->requires_python;
			p->directory = x->directory;
			p->editable = x->editable;
			p->vcs = x->vcs;
			p->archive = x->archive;
			p->subdirectory = x->subdirectory;
			if (x->directory)
				p->version = NULL;
			continue;
		}
		p->requires_python = pf->file->requires_python;
		p->index = pf->project->source ? gpuenv_url_public(arena, pf->project->source->url) : NULL;
		w->name = pf->file->filename;
		w->url = gpuenv_url_public(arena, pf->file->url);
		w->size = pf->file->size;
		const char *local = w->size < 0 ? gpuenv_file_url_path(arena, pf->file->url) : NULL;
		struct stat sb;
		if (local && stat(local, &sb) == 0)
			w->size = (int64_t)sb.st_size;
		w->upload_time = pf->file->upload_time;
		w->sha256 = pf->file->sha256;
		if (!w->sha256 && !(w->sha256 = lock_file_sha256(ctx, arena, pf->file->url))) {
			if (ctx->err.code == -ENOMEM)
				return ctx->err.code;
			gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0, "%s: the index gives no sha256 for %s, and "
				"a lock must hash every file", p->index ? p->index : "index", w->name);
			return gpuenv_hint(ctx, "use an index that publishes hashes (PEP 503 #sha256= fragments "
				"or PEP 691 hashes)");
		}
		if (pf->sdist) {
			p->sdist = w;
		} else {
			p->nwheels = 1;
			p->wheels = w;
		}
	}
	lock->npackages = res->npkgs;
	lock->packages = pk;
	return 0;
}

/* Does the manifest declare a build backend (PEP 517 [build-system])?
 * Then the project is a package of its own (uv's rule too), locked as an
 * editable directory entry that sync installs (docs/build.md). */
static bool has_build_system(gpuenv_ctx_t *ctx, const gpuenv_manifest_t *m)
{
	gpuenv_buf_t b;
	gpuenv_toml_doc_t doc;
	bool yes = false;
	if (!m->path || !m->name)
		return false;
	gpuenv_buf_init(&b, ctx, GPUENV_TOML_MAX_SIZE);
	if (gpuenv_fs_read(ctx, m->path, GPUENV_TOML_MAX_SIZE, &b) == 0 && gpuenv_toml_doc_init(&doc, ctx, m->path) == 0) {
		if (gpuenv_toml_parse(&doc, b.data ? b.data : "", b.len) == 0) {
			const gpuenv_toml_value_t *v = gpuenv_toml_get(doc.root, "build-system");
			yes = v && v->type == GPUENV_TOML_TABLE;
		}
		gpuenv_toml_doc_free(&doc);
	}
	gpuenv_buf_free(&b);
	gpuenv_error_clear(ctx); /* the manifest loaded already: what fails here is a miss */
	return yes;
}

/* The project itself as PEP 751 directory entry {path = ".", editable =
 * true}, its dependencies the resolution's roots; inserted in name order. */
static int lock_project(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_resolution_t *res, gpuenv_lock_t *lock)
{
	char norm[256];
	size_t at = 0, nroot = 0;
	gpuenv_name_normalize_to(gpuenv_str(m->name), norm, sizeof(norm));
	for (size_t i = 0; i < lock->npackages; i++) {
		int c = strcmp(lock->packages[i].name, norm);
		if (!c)
			return 0; /* a dependency of the same name: left as it is */
		if (c < 0)
			at = i + 1;
	}
	for (size_t i = 0; i < res->npkgs; i++)
		nroot += res->pkgs[i].root;
	gpuenv_lock_package_t *pk = gpuenv_arena_calloc(arena, lock->npackages + 1, sizeof(*pk));
	gpuenv_lock_dep_t *d = gpuenv_arena_calloc(arena, nroot ? nroot : 1, sizeof(*d));
	if (!pk || !d)
		return gpuenv_oom(ctx, "the lock");
	size_t k = 0;
	for (size_t i = 0; i < res->npkgs; i++)
		if (res->pkgs[i].root) {
			d[k].name = res->pkgs[i].name;
			d[k++].version = res->pkgs[i].cand->version;
		}
	if (at)
		memcpy(pk, lock->packages, at * sizeof(*pk));
	gpuenv_lock_package_t *p = &pk[at];
	if (!(p->name = gpuenv_arena_strndup(arena, norm, strlen(norm))))
		return gpuenv_oom(ctx, "the lock");
	p->version = m->version;
	p->requires_python = m->requires_python;
	p->directory = ".";
	p->editable = true;
	p->ndeps = k;
	p->deps = d;
	if (lock->npackages > at)
		memcpy(pk + at + 1, lock->packages + at, (lock->npackages - at) * sizeof(*pk));
	lock->packages = pk;
	lock->npackages++;
	return 0;
}

static int lock_build(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	const gpuenv_kb_target_t *kbt, size_t nkbt, const gpuenv_marker_env_t *env,
	const gpuenv_requirement_t *roots, size_t nroots, gpuenv_project_lock_out_t *out)
{
	const gpuenv_resolution_t *res = &out->res;
	gpuenv_lock_t *lock = &out->lock;
	gpuenv_stack_warning_t *warn = NULL;
	size_t nwarn = 0;
	const char *torch = NULL;
	const gpuenv_manifest_target_t *t = req->t;
	char cc[16] = "";
	int rc;

	if ((rc = lock_packages(ctx, arena, env, res, lock)) != 0)
		return rc;
	if (has_build_system(ctx, req->m) && (rc = lock_project(ctx, arena, req->m, res, lock)) != 0)
		return rc;
	lock->requires_python = req->m->requires_python;
	lock->nextras = t->nextras;
	lock->extras = t->extras;
	lock->ngroups = t->ngroups;
	lock->dependency_groups = t->groups;
	lock->ndefault_groups = t->ngroups;
	lock->default_groups = t->groups;
	if (req->backend && (rc = lock_locked_build(ctx, arena, req, roots, nroots, out, &warn, &nwarn)) != 0)
		return rc;
	for (size_t i = 0; i < res->npkgs; i++)
		if (!strcmp(res->pkgs[i].name, "torch"))
			torch = res->pkgs[i].cand->version;
	for (size_t i = 0; req->backend && i < lock->npackages; i++) {
		gpuenv_lock_package_t *p = (gpuenv_lock_package_t *)&lock->packages[i];
		if (gpuenv_project_torch_routed(p->name)
			&& !(p->reason = lock_torch_reason(arena, req, kbt, nkbt, p->name, p->version,
				     out->locked.backend, torch)))
			return gpuenv_oom(ctx, "the lock");
		for (size_t k = 0; k < nwarn; k++)
			if (!strcmp(warn[k].package, p->name)
				&& !(p->reason = gpuenv_arena_printf(arena, "warning: %s", warn[k].text).ptr))
				return gpuenv_oom(ctx, "the lock");
	}

	gpuenv_lock_target_t *lt = &lock->target;
	const gpuenv_target_t *x = &t->target;
	lt->name = t->name;
	lt->origin = x->origin;
	if (x->ngpus) {
		lt->gpu = x->gpus[0].name;
		if (x->gpus[0].cc_major >= 0) {
			snprintf(cc, sizeof(cc), "%d.%d", x->gpus[0].cc_major, x->gpus[0].cc_minor);
			lt->compute_capability = gpuenv_arena_strndup(arena, cc, strlen(cc));
		}
	} else {
		lt->gpu = "none";
	}
	lt->driver = x->driver;
	lt->cuda = x->driver_cuda;
	lt->python = x->python;
	lt->platform = t->platform;
	if (req->backend) {
		lt->backend = out->locked.backend;
		lt->backend_reason = out->locked.reason;
	} else if (req->torch_error) {
		lt->backend_reason = req->torch_error;
	}
	lt->ngroups = t->ngroups;
	lt->groups = t->groups;
	lt->nextras = t->nextras;
	lt->extras = t->extras;
	lt->inputs_hash = gpuenv_project_inputs_hash(arena, req->m, t);
	return lt->inputs_hash ? 0 : gpuenv_oom(ctx, "the lock");
}

int gpuenv_project_lock_target(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_lock_req_t *req,
	gpuenv_project_lock_out_t *out)
{
	const gpuenv_manifest_target_t *t = req->t;
	gpuenv_wheel_target_t wt;
	gpuenv_tagset_t *tags = NULL;
	gpuenv_marker_env_t env;
	gpuenv_kb_target_t kbt[LOCK_MAX_KBT];
	size_t nkbt = 0;
	const gpuenv_dep_t *deps;
	size_t ndeps;
	gpuenv_pv_t *pv = NULL;
	gpuenv_provider_t prov;
	int rc;

	memset(out, 0, sizeof(*out));
	gpuenv_buf_init(&out->text, ctx, 64u << 20);
	if ((rc = gpuenv_manifest_target_deps(ctx, arena, req->m, t, &deps, &ndeps)) != 0)
		return rc;
	if ((rc = gpuenv_target_wheel(ctx, &t->target, &wt)) != 0)
		return rc;
	/* A declared Linux platform without a glibc version (linux_aarch64):
	 * the manylinux2014 floor, glibc 2.17, which every glibc distribution
	 * of the architecture still supported meets; what the lock picks then
	 * installs on any of them (docs/lock.md). */
	if (wt.os == GPUENV_OS_LINUX && !wt.libc_major && !t->target.libc) {
		wt.libc_major = 2;
		wt.libc_minor = 17;
	}
	if ((rc = gpuenv_tagset_build(ctx, &wt, &tags)) != 0)
		return rc;
	gpuenv_marker_env_default(&env);
	if ((rc = gpuenv_target_marker_env(ctx, arena, &t->target, &env)) != 0)
		goto out;
	if (req->kb) {
		nkbt = gpuenv_target_kb(req->kb, &t->target, kbt, LOCK_MAX_KBT);
		if (nkbt > LOCK_MAX_KBT)
			nkbt = LOCK_MAX_KBT;
	}

	/* direct references (path, git, archives by URL): each one candidate,
	 * its metadata from its build backend or the archive */
	gpuenv_pv_direct_t *direct = NULL;
	size_t ndirect = 0;
	if ((rc = gpuenv_project_direct(ctx, arena, req, tags, deps, ndeps, &direct, &ndirect)) != 0)
		goto out;
	/* routes: PDM's include_packages patterns first, so that a
	 * dependency's own source (later) wins */
	size_t nincl = 0;
	for (size_t i = 0; req->m->source_info && i < req->m->nsources; i++)
		nincl += req->m->source_info[i].ninclude;
	gpuenv_requirement_t *roots = gpuenv_arena_calloc(arena, ndeps ? ndeps : 1, sizeof(*roots));
	const char **rn = gpuenv_arena_calloc(arena, ndeps + nincl + 1, sizeof(*rn));
	const char **rs = gpuenv_arena_calloc(arena, ndeps + nincl + 1, sizeof(*rs));
	/* Poetry's allow-prereleases, per root, for the resolver */
	bool *pre = gpuenv_arena_calloc(arena, ndeps ? ndeps : 1, sizeof(*pre));
	size_t nroutes = 0;
	if (!roots || !rn || !rs || !pre) {
		rc = gpuenv_oom(ctx, "the root requirements");
		goto out;
	}
	for (size_t i = 0; req->m->source_info && i < req->m->nsources; i++)
		for (size_t k = 0; k < req->m->source_info[i].ninclude; k++) {
			rn[nroutes] = req->m->source_info[i].include[k];
			rs[nroutes++] = req->m->sources[i].name;
		}
	for (size_t i = 0; i < ndeps; i++) {
		roots[i] = deps[i].req;
		pre[i] = deps[i].allow_prereleases;
		if (deps[i].source) {
			rn[nroutes] = deps[i].name;
			rs[nroutes++] = deps[i].source;
		}
	}

	gpuenv_pv_opts_t po = {
		.ix = req->ix,
		.tags = tags,
		.python = t->target.python,
		.target_name = t->name,
		.env = &env,
		.nroutes = nroutes,
		.route_names = rn,
		.route_sources = rs,
		.torch_source = req->torch_source,
		.backend = req->backend ? req->backend->backend : NULL,
		.gpu = t->target.ngpus > 0,
		.torch_error = req->torch_error,
		.kb = req->kb,
		.mtarget = t,
		.kbt = kbt,
		.nkbt = nkbt,
		.roots = roots,
		.nroots = ndeps,
		.only_binary = req->only_binary,
		.nonly_binary = req->nonly_binary,
		.no_binary = req->no_binary,
		.nno_binary = req->nno_binary,
		.noffers = req->noffers,
		.offer_sources = req->offer_sources,
		.torch_index = req->m->torch_index,
		.fav_series = req->backend && req->backend->variant ? &req->backend->variant->torch : NULL,
		.sdist_meta = req->sdist_meta,
		.ndirect = ndirect,
		.direct = direct,
	};
	/* the torch builds the KB confirms for the target first; the ones it
	 * cannot judge only when those give no solution (the order
	 * gpuenv_kb_torch_pick ranks them in) */
	po.experimental = (t->torch_backend && strcmp(t->torch_backend, "auto") != 0)
		|| (req->backend && req->backend->user_pinned);
	gpuenv_resolve_req_t rq = { .roots = roots, .nroots = ndeps, .env = &env,
		.prereleases = req->pre ? GPUENV_PRERELEASES_YES : GPUENV_PRERELEASES_DEFAULT,
		.allow_prereleases = pre, .prefer = req->prefer, .nprefer = req->nprefer };
	for (int pass = req->kb && req->backend ? 0 : 1; pass < 2; pass++) {
		po.hw_strict = pass == 0;
		gpuenv_pv_free(pv);
		pv = NULL;
		if ((rc = gpuenv_pv_new(ctx, &po, &pv)) != 0)
			goto out;
		gpuenv_pv_provider(pv, &prov);
		uint64_t t0 = gpuenv_trace_begin(ctx);
		rc = gpuenv_resolve(ctx, arena, &rq, &prov, &out->res);
		gpuenv_trace_end(ctx, "lock", "resolve", NULL, t->name, t0);
		if (rc != GPUENV_ENOSOLUTION || pass == 1)
			break;
		gpuenv_error_clear(ctx);
	}
	if (req->dump && (rc == 0 || rc == GPUENV_ENOSOLUTION)) {
		gpuenv_error_t saved = ctx->err;
		int d = gpuenv_scenario_write(ctx, &rq, &prov, t->name, 0, req->dump);
		if (d) {
			rc = d;
			goto out;
		}
		ctx->err = saved;
	}
	if (rc)
		goto out;
	out->pv = pv;
	if ((rc = lock_build(ctx, arena, req, kbt, nkbt, &env, roots, ndeps, out)) != 0)
		goto out;
	rc = gpuenv_pylock_write(ctx, &out->lock, &out->text);
out:
	out->pv = pv; /* the lock's strings point into its pages */
	gpuenv_tagset_free(tags);
	return rc;
}

int gpuenv_project_lock_reqs(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_project_reqs_t *req,
	gpuenv_project_lock_out_t *out)
{
	static const char *const all[] = { ":all:" };
	gpuenv_provider_t prov;
	int rc;

	memset(out, 0, sizeof(*out));
	gpuenv_buf_init(&out->text, ctx, 64u << 20);
	gpuenv_pv_opts_t po = { .ix = req->ix, .tags = req->tags, .python = req->python,
		.target_name = req->what, .env = req->env, .roots = req->roots, .nroots = req->nroots,
		.only_binary = all, .nonly_binary = 1 };
	gpuenv_resolve_req_t rq = { .roots = req->roots, .nroots = req->nroots, .env = req->env,
		.prereleases = GPUENV_PRERELEASES_DEFAULT };
	if ((rc = gpuenv_pv_new(ctx, &po, &out->pv)) != 0)
		return rc;
	gpuenv_pv_provider(out->pv, &prov);
	if ((rc = gpuenv_resolve(ctx, arena, &rq, &prov, &out->res)) != 0)
		return rc;
	if ((rc = lock_packages(ctx, arena, req->env, &out->res, &out->lock)) != 0)
		return rc;
	return gpuenv_pylock_write(ctx, &out->lock, &out->text);
}

void gpuenv_project_lock_out_free(gpuenv_project_lock_out_t *out)
{
	gpuenv_pv_free(out->pv);
	out->pv = NULL;
	gpuenv_buf_free(&out->text);
}
