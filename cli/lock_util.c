/* The project verbs' shared front-end (cli/lock_util.h): the project opened
 * through the library with the probed machine when none is declared, a
 * target named on the command line, --profile. */
#include "lock_util.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "gpuenv/facts.h"
#include "gpuenv/install.h"

int cli_project_open(struct cli *cli, const char *verb, const char *project, const char *facts_path,
	const char *kb_dir, const char *torch_index, unsigned flags, gpuenv_project_t *pj)
{
	const gpuenv_facts_t *facts = NULL;
	int st;

	if (gpuenv_project_open(&cli->ctx, project, kb_dir, torch_index, pj) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	for (size_t i = 0; i < pj->m.nwarnings; i++)
		fprintf(stderr, "%s: %s: warning: %s\n", cli->prog, verb, pj->m.warnings[i]);
	if (pj->ntargets || (flags & CLI_PROJECT_DECLARED))
		return 0;
	/* the machine itself as the one target of a project that declares none */
	if ((st = cli_facts_load(cli, verb, facts_path, NULL, &pj->arena, &facts)) != 0)
		return st;
	if (gpuenv_project_add_machine(pj, facts) == 0)
		return 0;
	if (cli->ctx.err.code == GPUENV_ENOTFOUND)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s", verb, cli->ctx.err.msg);
	return cli_report(cli, CLI_EXIT_CANNOT);
}

const gpuenv_manifest_target_t *cli_project_target(struct cli *cli, const struct cli_verb *verb,
	const gpuenv_project_t *pj, const char *name, int *st)
{
	const gpuenv_manifest_target_t *t = gpuenv_project_find_target(pj, name);
	const char *names[256];
	size_t n = pj->ntargets < 256 ? pj->ntargets : 256;

	if (t)
		return t;
	for (size_t i = 0; i < n; i++)
		names[i] = pj->targets[i].name;
	const char *s = cli_suggest(name, names, n);
	*st = cli_usage_error(cli, verb, "%s: --target: the project declares no target '%s'%s%s%s", verb->name,
		name, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
	return NULL;
}

/* The sources the index client asks: the manifest's with the command
 * line's replacements, find-links folders first, the torch builds' indexes
 * last (explicit). */
int cli_lock_sources(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	const gpuenv_manifest_t *m, gpuenv_arena_t *arena, gpuenv_index_source_t *src, size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i < o->nfind_links && k < CLI_LOCK_MAX_SOURCES; i++) {
		const char *p = o->find_links[i];
		src[k++] = (gpuenv_index_source_t){ .name = gpuenv_arena_printf(arena, "find-links-%zu", i + 1).ptr,
			.url = strstr(p, "://") ? p : gpuenv_arena_printf(arena, "file://%s", p).ptr,
			.priority = GPUENV_SOURCE_PRIMARY, .find_links = true };
	}
	bool replaced = false;
	for (size_t i = 0; i < m->nsources && k < CLI_LOCK_MAX_SOURCES; i++) {
		src[k] = m->sources[i];
		if (o->index_url && src[k].priority == GPUENV_SOURCE_DEFAULT) {
			src[k].url = o->index_url;
			replaced = true;
		}
		k++;
	}
	if (o->index_url && !replaced && k < CLI_LOCK_MAX_SOURCES)
		src[k++] = (gpuenv_index_source_t){ .name = "index-url", .url = o->index_url,
			.priority = GPUENV_SOURCE_DEFAULT };
	for (size_t j = 0; j < o->nsource_urls; j++) {
		const char *eq = strchr(o->source_urls[j], '=');
		size_t i;
		if (!eq || eq == o->source_urls[j] || !eq[1])
			return cli_usage_error(cli, verb, "%s: --source-url wants NAME=URL, not '%s'", verb->name,
				o->source_urls[j]);
		for (i = 0; i < k; i++)
			if (strlen(src[i].name) == (size_t)(eq - o->source_urls[j])
				&& !memcmp(src[i].name, o->source_urls[j], (size_t)(eq - o->source_urls[j])))
				break;
		if (i == k) {
			const char *names[CLI_LOCK_MAX_SOURCES];
			for (i = 0; i < k; i++)
				names[i] = src[i].name;
			char *nm = gpuenv_arena_strndup(arena, o->source_urls[j], (size_t)(eq - o->source_urls[j]));
			const char *s = nm ? cli_suggest(nm, names, k) : NULL;
			return cli_usage_error(cli, verb, "%s: --source-url: the project declares no source '%s'%s%s%s",
				verb->name, nm ? nm : "?", s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
		}
		src[i].url = eq + 1;
	}
	*n = k;
	return 0;
}

/* "a,B_c" or ":all:" -> normalised names appended to list; -1 when malformed
 * or too many. */
static int lock_format_control(struct cli *cli, const char **list, size_t *n, char *arg)
{
	(void)cli;
	for (char *save = NULL, *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == CLI_LOCK_MAX_ARGS || !*tok)
			return -1;
		if (strcmp(tok, ":all:") != 0) {
			if (!gpuenv_name_is_valid(gpuenv_str(tok)))
				return -1;
			gpuenv_name_normalize_to(gpuenv_str(tok), tok, strlen(tok) + 1);
		}
		list[(*n)++] = tok;
	}
	return *n ? 0 : -1;
}

static int opt_fail(int *exit_st, int st)
{
	*exit_st = st;
	return -1;
}

int cli_lock_opt(struct cli *cli, const struct cli_verb *verb, int c, char *arg, struct cli_lock_opts *o,
	int *exit_st)
{
	uint64_t u;
	switch (c) {
	case 'p': o->project = arg; break;
	case 'o': o->offline = true; break;
	case 'E': o->refresh = true; break;
	case 'P': o->pre = true; break;
	case 'B':
	case 'S':
		if (lock_format_control(cli, c == 'B' ? o->only_binary : o->no_binary,
			    c == 'B' ? &o->nonly_binary : &o->nno_binary, arg) != 0)
			return opt_fail(exit_st, cli_usage_error(cli, verb, "%s: --%s wants NAME[,NAME...] or "
				":all:, not '%s'", verb->name, c == 'B' ? "only-binary" : "no-binary", arg));
		break;
	case 'i': o->index_url = arg; break;
	case 's':
		if (o->nsource_urls == CLI_LOCK_MAX_ARGS)
			return opt_fail(exit_st, cli_usage_error(cli, verb, "%s: too many --source-url options", verb->name));
		o->source_urls[o->nsource_urls++] = arg;
		break;
	case 'T': o->torch_index = arg; break;
	case 'f':
		if (o->nfind_links == CLI_LOCK_MAX_ARGS)
			return opt_fail(exit_st, cli_usage_error(cli, verb, "%s: too many --find-links options", verb->name));
		o->find_links[o->nfind_links++] = arg;
		break;
	case 'C': o->cache_dir = arg; break;
	case 'F': o->facts_path = arg; break;
	case 'k': o->kb_dir = arg; break;
	case 'X': o->profile = arg; break;
	case 'Z':
		if (!gpuenv_str_to_u64(gpuenv_str(arg), &u) || !u || u > 86400)
			return opt_fail(exit_st, cli_usage_error(cli, verb, "%s: --build-timeout wants 1 to 86400 "
				"seconds, not '%s'", verb->name, arg));
		o->build_timeout_s = (unsigned)u;
		break;
	case 'r':
	case 'w':
		if (!gpuenv_str_to_u64(gpuenv_str(arg), &u) || !u || u > (c == 'r' ? 20 : 3600))
			return opt_fail(exit_st, cli_usage_error(cli, verb, "%s: --%s wants %s, not '%s'", verb->name,
				c == 'r' ? "retries" : "timeout", c == 'r' ? "1 to 20" : "1 to 3600 seconds", arg));
		if (c == 'r')
			o->retries = (unsigned)u;
		else
			o->timeout_s = (unsigned)u;
		break;
	default:
		return 0;
	}
	return 1;
}

/* Options of sync (and run) into o: 1 taken, 0 not one, -1 usage error. */
int cli_sync_opt(struct cli *cli, int c, char *arg, struct cli_sync_opts *o, int *exit_st)
{
	int h = cli_lock_opt(cli, o->verb, c, arg, &o->lo, exit_st);
	if (h)
		return h;
	switch (c) {
	case 't': o->target = arg; break;
	case 'V': o->venv_dir = arg; break;
	case 'y': o->python = arg; break;
	case 'W':
		if (o->nwith == CLI_LOCK_MAX_ARGS) {
			*exit_st = cli_usage_error(cli, o->verb, "%s: too many --with options", o->verb->name);
			return -1;
		}
		o->with[o->nwith++] = arg;
		break;
	case 'n': o->dry_run = true; break;
	case 'L': o->locked = true; break;
	case 'm': o->compile = true; break;
	case 'R': o->reinstall = true; break;
	case 'N': o->no_wait = true; break;
	case 'I': o->no_install_project = true; break;
	case 'l':
		if ((o->link_mode = gpuenv_link_mode_parse(arg)) < 0) {
			*exit_st = cli_usage_error(cli, o->verb, "%s: --link-mode wants auto, hardlink, reflink or copy, "
				"not '%s'", o->verb->name, arg);
			return -1;
		}
		break;
	default:
		return 0;
	}
	return 1;
}
