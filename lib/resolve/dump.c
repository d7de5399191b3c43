/* A request and everything a provider offers for it, written as a
 * packse-format scenario (libsolv's testcase_write): a failing real
 * resolution becomes a small file that `gpuenv debug resolve` and the
 * tests replay without an index. */
#include "gpuenv/resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/toml.h"

#define DUMP_NAME_MAX 512

typedef struct dump {
	gpuenv_ctx_t *ctx;
	const gpuenv_provider_t *prov;
	gpuenv_buf_t *out;
	char **names; /* queue of normalised names, in discovery order */
	size_t n, cap;
	size_t max_versions;
} dump_t;

static int queue(dump_t *d, gpuenv_str_t raw)
{
	char name[DUMP_NAME_MAX];

	if (raw.len >= sizeof(name) || gpuenv_name_normalize_to(raw, name, sizeof(name)) == SIZE_MAX)
		return gpuenv_fail(d->ctx, GPUENV_ETOOBIG, NULL, 0, 0,
			"a requirement's name is longer than %d bytes", DUMP_NAME_MAX);
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return 0;
	if (gpuenv_array_grow(d->ctx, NULL, &d->names, &d->cap, d->n + 1, sizeof(char *), SIZE_MAX,
		    "writing a scenario"))
		return d->ctx->err.code;
	d->names[d->n] = gpuenv_strndup(d->ctx, name, strlen(name));
	if (!d->names[d->n])
		return gpuenv_oom(d->ctx, "writing a scenario");
	d->n++;
	return 0;
}

/* "requires = [...]" with each requirement as packaging writes it */
static int write_reqs(dump_t *d, const char *key, const gpuenv_requirement_t *rq, size_t n)
{
	gpuenv_buf_t one;
	int r;

	if ((r = gpuenv_buf_printf(d->out, "%s = [", key)))
		return r;
	gpuenv_buf_init(&one, d->ctx, 1 << 20);
	for (size_t i = 0; i < n; i++) {
		gpuenv_buf_reset(&one);
		if ((r = gpuenv_requirement_format(&rq[i], &one)) ||
			(r = gpuenv_buf_puts(d->out, i ? ",\n  " : "\n  ")) ||
			(r = gpuenv_toml_write_string(d->out, gpuenv_str_n(one.data ? one.data : "", one.len))))
			break;
	}
	gpuenv_buf_free(&one);
	if (r)
		return r;
	return gpuenv_buf_puts(d->out, n ? ",\n]\n" : "]\n");
}

/* python_platform for the markers (the provider already judged wheel
 * tags: the candidates written are usable as they are) */
static const char *platform_of(const gpuenv_marker_env_t *env)
{
	const char *sys = env && env->sys_platform ? env->sys_platform : "linux";
	const char *m = env && env->platform_machine ? env->platform_machine : "x86_64";
	bool arm = !strcmp(m, "aarch64") || !strcmp(m, "arm64");
	if (!strcmp(sys, "darwin"))
		return arm ? "aarch64-apple-darwin" : "x86_64-apple-darwin";
	if (!strcmp(sys, "win32"))
		return "x86_64-pc-windows-msvc";
	return arm ? "aarch64-unknown-linux-gnu" : "x86_64-unknown-linux-gnu";
}

static int write_all(dump_t *d, const gpuenv_resolve_req_t *req, const char *name)
{
	gpuenv_buf_t *o = d->out;
	const gpuenv_marker_env_t *env = req->env;
	const char *py = env && env->python_full_version ? env->python_full_version
		       : env && env->python_version	  ? env->python_version
							  : "3.12";
	int r;

	if ((r = gpuenv_buf_puts(o, "name = ")) ||
		(r = gpuenv_toml_write_string(o, gpuenv_str(name ? name : "dump"))) ||
		(r = gpuenv_buf_puts(o, "\ndescription = \"Written by gpuenv from a resolution's "
					"inputs: the candidates the provider offered (already filtered "
					"for the target) and their requirements.\"\n\n[root]\n")) ||
		(r = write_reqs(d, "requires", req->roots, req->nroots)) ||
		(r = gpuenv_buf_puts(o, "\n[environment]\npython = ")) ||
		(r = gpuenv_toml_write_string(o, gpuenv_str(py))) ||
		(r = gpuenv_buf_printf(o, "\n\n[resolver_options]\npython_platform = \"%s\"\n%s",
			 platform_of(env),
			 req->prereleases == GPUENV_PRERELEASES_YES ? "prereleases = true\n" : "")))
		return r;
	for (size_t i = 0; i < req->nroots; i++)
		if ((r = queue(d, req->roots[i].name)))
			return r;
	for (size_t i = 0; i < d->n; i++) {
		const gpuenv_candidate_t *cs;
		size_t nc;
		char *pn = d->names[i];
		r = d->prov->versions(d->prov->self, d->ctx, pn, &cs, &nc);
		if (r == GPUENV_ENOTFOUND) {
			gpuenv_error_clear(d->ctx);
			if ((r = gpuenv_buf_printf(o, "\n# %s: no index has it\n", pn)))
				return r;
			continue;
		}
		if (r)
			return r;
		const char *why = d->prov->excluded ? d->prov->excluded(d->prov->self, pn) : NULL;
		if (why && why[0]) {
			/* a comment: one line, whatever the text holds */
			if ((r = gpuenv_buf_puts(o, "\n# left out: ")))
				return r;
			for (const char *c = why; *c; c++)
				if ((r = gpuenv_buf_putc(o, *c == '\n' || *c == '\r' ? ' ' : *c)))
					return r;
			if ((r = gpuenv_buf_putc(o, '\n')))
				return r;
		}
		if (!nc && (r = gpuenv_buf_printf(o, "\n[packages.%s]\nversions = {}\n", pn)))
			return r;
		for (size_t k = 0; k < nc && (!d->max_versions || k < d->max_versions); k++) {
			const gpuenv_candidate_t *c = &cs[k];
			const gpuenv_requirement_t *rq;
			size_t nr;
			if ((r = gpuenv_buf_printf(o, "\n[packages.%s.versions.", pn)) ||
				(r = gpuenv_toml_write_string(o, gpuenv_str(c->version))) ||
				(r = gpuenv_buf_puts(o, "]\n")))
				return r;
			if (c->yanked && (r = gpuenv_buf_puts(o, "yanked = true\n")))
				return r;
			if (c->requires_python &&
				((r = gpuenv_buf_puts(o, "requires_python = ")) ||
					(r = gpuenv_toml_write_string(o, gpuenv_str(c->requires_python))) ||
					(r = gpuenv_buf_putc(o, '\n'))))
				return r;
			if ((r = d->prov->requires(d->prov->self, d->ctx, pn, c, &rq, &nr)))
				return r;
			if (nr && (r = write_reqs(d, "requires", rq, nr)))
				return r;
			for (size_t q = 0; q < nr; q++)
				if ((r = queue(d, rq[q].name)))
					return r;
		}
	}
	return 0;
}

int gpuenv_scenario_write(gpuenv_ctx_t *ctx, const gpuenv_resolve_req_t *req,
	const gpuenv_provider_t *provider, const char *name, size_t max_versions, gpuenv_buf_t *out)
{
	dump_t d;
	int r;

	if (!req || !provider || !provider->versions || !provider->requires)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"gpuenv_scenario_write: a request and a provider are needed");
	memset(&d, 0, sizeof(d));
	d.ctx = ctx;
	d.prov = provider;
	d.out = out;
	d.max_versions = max_versions;
	r = write_all(&d, req, name);
	if (r == -ENOMEM && ctx->err.code != r)
		gpuenv_oom(ctx, "writing a scenario");
	else if (r == GPUENV_ETOOBIG && ctx->err.code != r)
		gpuenv_fail(ctx, r, NULL, 0, 0, "the scenario is larger than its buffer allows (%zu bytes)",
			out->max);
	for (size_t i = 0; i < d.n; i++)
		gpuenv_free(ctx, d.names[i]);
	gpuenv_free(ctx, d.names);
	return r;
}
