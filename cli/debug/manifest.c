/* debug manifest: the project manifest as gpuenv reads it (lib/manifest):
 * the dependencies, groups, extras and sources, and for each target its
 * resolved dependencies and the torch build it gets, with the reason. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/kb.h"
#include "gpuenv/manifest.h"

static const char *prio_name(int p)
{
	switch (p) {
	case GPUENV_SOURCE_PRIMARY:
		return "primary";
	case GPUENV_SOURCE_DEFAULT:
		return "default";
	case GPUENV_SOURCE_SUPPLEMENTAL:
		return "supplemental";
	default:
		return "explicit";
	}
}

/* a source's URL without user:password@ (a PDM ${TOKEN} expanded, a
 * Poetry URL with credentials): never printed */
static const char *public_url(gpuenv_arena_t *a, const char *url)
{
	const char *p = gpuenv_url_public(a, url);
	return p ? p : "(a URL)";
}

/* packaging's str() of the requirement, in arena */
static const char *req_text(struct cli *cli, gpuenv_arena_t *a, const gpuenv_dep_t *d)
{
	gpuenv_buf_t b;
	const char *s = NULL;

	gpuenv_buf_init(&b, &cli->ctx, 0);
	if (gpuenv_requirement_format(&d->req, &b) == 0 && b.data)
		s = gpuenv_arena_strndup(a, b.data, b.len);
	gpuenv_buf_free(&b);
	return s ? s : "?";
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static const char *const DIRECT_KINDS[] = { "?", "path", "git", "url", "workspace" };

static const char *direct_kind(const gpuenv_direct_t *x)
{
	return x->kind >= 1 && x->kind <= 4 ? DIRECT_KINDS[x->kind] : "?";
}

static json_t *direct_json(const gpuenv_direct_t *x)
{
	if (!x)
		return json_null();
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:i, s:i}", "kind", direct_kind(x), "path",
		jstr(x->path), "url", jstr(x->url), "rev", jstr(x->rev), "tag", jstr(x->tag), "branch",
		jstr(x->branch), "subdirectory", jstr(x->subdirectory), "sha256", jstr(x->sha256), "editable",
		x->editable, "from", jstr(x->from), "line", (json_int_t)x->line, "col", (json_int_t)x->col);
}

static json_t *dep_json(struct cli *cli, gpuenv_arena_t *a, const gpuenv_dep_t *d)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:b, s:o, s:o, s:b, s:i, s:i, s:o, s:o}", "name", d->name,
		"requirement", req_text(cli, a, d), "source", jstr(d->source), "optional", d->optional, "extra",
		jstr(d->extra), "group", jstr(d->group), "allow_prereleases", d->allow_prereleases, "line",
		(json_int_t)d->line, "col", (json_int_t)d->col, "from", jstr(d->from), "direct",
		direct_json(d->direct));
	json_t *by = json_array();
	for (size_t i = 0; o && by && i < d->nsources_by; i++) {
		const gpuenv_dep_source_t *e = &d->sources_by[i];
		json_array_append_new(by, json_pack("{s:o, s:o, s:o, s:o, s:o, s:i, s:i}", "index", jstr(e->index),
						  "direct", direct_json(e->direct), "marker", jstr(e->marker_text),
						  "extra", jstr(e->extra), "group", jstr(e->group), "line",
						  (json_int_t)e->line, "col", (json_int_t)e->col));
	}
	if (o)
		json_object_set_new(o, "sources_by", by ? by : json_null());
	return o;
}

static void print_direct(const gpuenv_direct_t *x)
{
	printf("%s %s", direct_kind(x), x->path ? x->path : x->url ? x->url : "(workspace)");
	if (x->rev || x->tag || x->branch)
		printf(" %s %s", x->rev ? "rev" : x->tag ? "tag" : "branch", x->rev ? x->rev : x->tag ? x->tag : x->branch);
	if (x->subdirectory)
		printf(" subdirectory %s", x->subdirectory);
	if (x->sha256)
		printf(" sha256 %s", x->sha256);
	if (x->editable)
		printf(" editable");
}

static json_t *deps_json(struct cli *cli, gpuenv_arena_t *a, const gpuenv_dep_t *d, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, dep_json(cli, a, &d[i]));
	return arr;
}

static json_t *strs_json(const char *const *s, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_string(s[i]));
	return arr;
}

static void print_dep(struct cli *cli, gpuenv_arena_t *a, const gpuenv_dep_t *d, const char *indent)
{
	printf("%s%s", indent, req_text(cli, a, d));
	if (d->source)
		printf("  (source %s)", d->source);
	if (d->direct) {
		printf("  (");
		print_direct(d->direct);
		printf(", %s:%u)", d->direct->from ? d->direct->from : "?", d->direct->line);
	}
	for (size_t i = 0; i < d->nsources_by; i++) {
		const gpuenv_dep_source_t *e = &d->sources_by[i];
		printf("%s", i ? "; " : "  (tool.uv.sources: ");
		if (e->index)
			printf("index %s", e->index);
		else
			print_direct(e->direct);
		if (e->marker_text)
			printf(" where %s", e->marker_text);
		if (e->extra)
			printf(" with extra %s", e->extra);
		if (e->group)
			printf(" in group %s", e->group);
		printf("%s", i + 1 == d->nsources_by ? ")" : "");
	}
	if (d->from)
		printf("  (from %s)", d->from);
	if (d->optional)
		printf("  (optional%s%s)", d->extra ? ", extra " : "", d->extra ? d->extra : "");
	if (d->allow_prereleases)
		printf("  (pre-releases allowed)");
	printf("\n");
}

static void print_target(const gpuenv_manifest_target_t *t)
{
	const gpuenv_target_t *x = &t->target;

	printf("  %s:", t->name);
	if (!x->ngpus)
		printf(" no GPU");
	for (size_t i = 0; i < x->ngpus; i++)
		printf(" %s (compute capability %d.%d)", x->gpus[i].name ? x->gpus[i].name : "GPU",
			x->gpus[i].cc_major, x->gpus[i].cc_minor);
	if (x->driver)
		printf(", driver %s", x->driver);
	if (x->driver_cuda)
		printf(", CUDA <= %s", x->driver_cuda);
	printf(", python %s, %s", x->python ? x->python : "?", t->platform ? t->platform : "?");
	for (size_t i = 0; i < t->ngroups; i++)
		printf("%s%s", i ? ", " : ", groups ", t->groups[i]);
	for (size_t i = 0; i < t->nextras; i++)
		printf("%s%s", i ? ", " : ", extras ", t->extras[i]);
	printf("\n");
}

static void print_indented(const char *s, const char *indent)
{
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		printf("%s%.*s\n", indent, (int)n, s);
		s += n + (nl ? 1 : 0);
	}
}

static int cli_debug_manifest(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	const char *project, *kb_dir;
	char path[4096];
	struct stat sb;
	gpuenv_manifest_t m;
	gpuenv_kb_t *kb = NULL;
	gpuenv_arena_t a;
	json_t *out = NULL, *targets = NULL;
	int c, st = CLI_EXIT_OK;

	while ((c = cli_getopt(cli, verb, argc, argv, "", NULL, &st)) != -1)
		if (c == CLI_OPT_EXIT)
			return st;
	project = cli->opt.project ? cli->opt.project : ".";
	kb_dir = cli->opt.kb_dir;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (stat(project, &sb) == 0 && S_ISDIR(sb.st_mode))
		snprintf(path, sizeof(path), "%s/pyproject.toml", project);
	else
		snprintf(path, sizeof(path), "%s", project);
	if (gpuenv_kb_load_files(&cli->ctx, kb_dir,
		    GPUENV_KB_FILE(GPUENV_KB_TORCH) | GPUENV_KB_FILE(GPUENV_KB_CUDA) | GPUENV_KB_FILE(GPUENV_KB_GPUS) |
			    GPUENV_KB_FILE(GPUENV_KB_WHEELS),
		    &kb))
		return cli_report(cli, CLI_EXIT_CANNOT);
	gpuenv_arena_init(&a, &cli->ctx, 0);
	if (gpuenv_manifest_load(&cli->ctx, &a, path, kb, &m)) {
		st = cli_report(cli, CLI_EXIT_FAIL);
		goto done;
	}
	if (cli->json) {
		json_t *src = json_array(), *groups = json_array(), *extras = json_array();
		for (size_t i = 0; i < m.nsources; i++) {
			const gpuenv_manifest_source_info_t *si = m.source_info ? &m.source_info[i] : NULL;
			json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:o, s:i, s:b}", "name", m.sources[i].name, "url",
				public_url(&a, m.sources[i].url), "priority", prio_name(m.sources[i].priority), "find_links",
				m.sources[i].find_links, "from", jstr(si ? si->from : NULL), "line",
				(json_int_t)(si ? si->line : 0), "verify_ssl", si ? si->verify_ssl : true);
			if (o)
				json_object_set_new(o, "include_packages",
					strs_json(si ? si->include : NULL, si ? si->ninclude : 0));
			json_array_append_new(src, o);
		}
		for (size_t i = 0; i < m.ngroups; i++)
			json_array_append_new(groups, json_pack("{s:s, s:b, s:o}", "name", m.groups[i].name,
							      "optional", m.groups[i].optional, "dependencies",
							      deps_json(cli, &a, m.groups[i].deps, m.groups[i].ndeps)));
		for (size_t i = 0; i < m.nextras; i++)
			json_array_append_new(extras, json_pack("{s:s, s:o}", "name", m.extras[i].name, "dependencies",
							      strs_json(m.extras[i].names, m.extras[i].nnames)));
		targets = json_array();
		out = json_pack("{s:s, s:o, s:o, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "path", m.path, "name",
			jstr(m.name), "version", jstr(m.version), "requires_python", jstr(m.requires_python),
			"inputs_hash", m.inputs_hash, "torch_backend", m.torch_backend, "torch_index", m.torch_index,
			"sources", src, "dependencies", deps_json(cli, &a, m.deps, m.ndeps), "groups", groups,
			"extras", extras);
		json_object_set_new(out, "targets", targets);
		size_t nd = 0;
		while (m.dialects && m.dialects[nd])
			nd++;
		json_object_set_new(out, "dialects", strs_json(m.dialects, nd));
		json_object_set_new(out, "warnings", strs_json(m.warnings, m.nwarnings));
	} else {
		printf("manifest %s: %s %s\n", m.path, m.name ? m.name : "(no name)", m.version ? m.version : "");
		printf("requires-python: %s\n", m.requires_python ? m.requires_python : "(any)");
		printf("inputs-hash: %s\n", m.inputs_hash);
		printf("torch-backend: %s, torch-index: %s\n", m.torch_backend, m.torch_index);
		printf("read:");
		for (size_t i = 0; m.dialects && m.dialects[i]; i++)
			printf(" %s", m.dialects[i]);
		printf("%s\n", m.dialects && m.dialects[0] ? "'s tables, [project], [tool.gpuenv]" : " [project], [tool.gpuenv]");
		printf("sources:\n");
		for (size_t i = 0; i < m.nsources; i++) {
			const gpuenv_manifest_source_info_t *si = m.source_info ? &m.source_info[i] : NULL;
			printf("  %s  %s  %s%s", m.sources[i].name, public_url(&a, m.sources[i].url), prio_name(m.sources[i].priority),
				m.sources[i].find_links ? " find-links" : "");
			for (size_t k = 0; si && k < si->ninclude; k++)
				printf("%s%s", k ? ", " : "  include ", si->include[k]);
			if (si && si->line)
				printf("  (from %s, line %u)", si->from, si->line);
			else if (si)
				printf("  (%s)", si->from);
			printf("\n");
		}
		printf("dependencies:\n");
		for (size_t i = 0; i < m.ndeps; i++)
			print_dep(cli, &a, &m.deps[i], "  ");
		for (size_t g = 0; g < m.ngroups; g++) {
			printf("group %s%s:\n", m.groups[g].name, m.groups[g].optional ? " (optional)" : "");
			for (size_t i = 0; i < m.groups[g].ndeps; i++)
				print_dep(cli, &a, &m.groups[g].deps[i], "  ");
		}
		for (size_t e = 0; e < m.nextras; e++) {
			printf("extra %s:", m.extras[e].name);
			for (size_t i = 0; i < m.extras[e].nnames; i++)
				printf(" %s", m.extras[e].names[i]);
			printf("\n");
		}
		for (size_t i = 0; i < m.nwarnings; i++)
			printf("warning: %s\n", m.warnings[i]);
		printf("targets:%s\n", m.ntargets ? "" : " none declared (lock uses this machine, probed)");
	}
	for (size_t i = 0; i < m.ntargets; i++) {
		const gpuenv_manifest_target_t *t = &m.targets[i];
		const gpuenv_dep_t *deps;
		gpuenv_backend_choice_t bc;
		size_t n = 0;
		int r = gpuenv_manifest_target_deps(&cli->ctx, &a, &m, t, &deps, &n);
		if (!r)
			r = gpuenv_manifest_backend(&cli->ctx, &a, &m, t, kb, &bc);
		if (cli->json) {
			const gpuenv_target_t *x = &t->target;
			json_t *gpus = json_array(), *o;
			for (size_t k = 0; k < x->ngpus; k++) {
				char cc[16];
				snprintf(cc, sizeof(cc), "%d.%d", x->gpus[k].cc_major, x->gpus[k].cc_minor);
				json_array_append_new(gpus, json_pack("{s:o, s:s}", "name", jstr(x->gpus[k].name),
								    "compute_capability", cc));
			}
			o = json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "name",
				t->name, "line", (json_int_t)t->line, "gpus", gpus, "driver", jstr(x->driver),
				"driver_cuda", jstr(x->driver_cuda), "python", jstr(x->python), "platform",
				jstr(t->platform), "machine", jstr(x->machine), "libc", jstr(x->libc), "libc_version",
				jstr(x->libc_version), "groups", strs_json(t->groups, t->ngroups), "extras",
				strs_json(t->extras, t->nextras), "torch_backend", t->torch_backend);
			json_t *dl = json_array();
			for (size_t k = 0; k < n && !r; k++)
				json_array_append_new(dl, json_string(req_text(cli, &a, &deps[k])));
			json_object_set_new(o, "dependencies", dl);
			if (r) {
				char msg[1200];
				gpuenv_error_format(&cli->ctx.err, msg, sizeof(msg));
				json_object_set_new(o, "error", json_pack("{s:s, s:s}", "message", msg, "hint",
									 cli->ctx.err.hint));
				st = CLI_EXIT_FAIL;
			} else
				json_object_set_new(o, "backend",
					json_pack("{s:s, s:s, s:o, s:b, s:o, s:s}", "backend", bc.backend, "index_url",
						bc.index_url, "source", jstr(bc.source), "user_pinned", bc.user_pinned,
						"cuda", jstr(bc.cuda), "reason", bc.reason));
			json_array_append_new(targets, o);
			continue;
		}
		print_target(t);
		for (size_t k = 0; k < n && !r; k++)
			print_dep(cli, &a, &deps[k], "    ");
		if (r) {
			st = cli_report(cli, CLI_EXIT_FAIL);
			continue;
		}
		printf("    torch build: %s (%s)%s%s\n", bc.backend, bc.index_url, bc.user_pinned ? ", the user's source " : "",
			bc.user_pinned && bc.source ? bc.source : "");
		print_indented(bc.reason, "      ");
	}
	if (cli->json) {
		int js = cli_print_json(cli, out);
		if (js)
			st = js;
	}
done:
	gpuenv_arena_free(&a);
	gpuenv_kb_free(kb);
	return st;
}

const struct cli_verb cli_verb_debug_manifest = {
	.name = "manifest",
	.run = cli_debug_manifest,
	.summary = "the project manifest as gpuenv reads it: dependencies, targets, torch builds",
	.usage = "gpuenv debug manifest [--project DIR|FILE] [--kb-dir DIR] [--json]",
	.help = "exit status 1 when the manifest or a target's torch build is in error\n",
	.groups = CLI_G_PROJECT | CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_PROJECT, "  --project DIR|FILE  the project (DIR/pyproject.toml) or its manifest; default .\n" },
		{ 0, NULL },
	},
};
