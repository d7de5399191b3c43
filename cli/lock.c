/* gpuenv lock: pyproject.toml + hardware targets -> one PEP 751 lock per
 * target (docs/lock.md). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/facts.h"
#include "gpuenv/fs.h"
#include "gpuenv/project.h"
#include "lock_util.h"

static void progress(void *arg, size_t done, size_t total, uint64_t bytes)
{
	(void)arg;
	fprintf(stderr, "\r\033[K  fetching %zu/%zu (%.1f MB)", done, total, (double)bytes / 1e6);
	if (done == total)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
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

/* The targets to lock: the named ones, or all. */
static int lock_pick_targets(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	struct cli_project *pj, const gpuenv_manifest_target_t ***outp, size_t *n)
{
	int st = 0;
	size_t cap = o->ntargets ? o->ntargets : pj->ntargets;
	const gpuenv_manifest_target_t **out = gpuenv_arena_calloc(&pj->arena, cap ? cap : 1, sizeof(*out));
	*n = 0;
	if (!(*outp = out))
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (!o->ntargets) {
		for (size_t i = 0; i < pj->ntargets; i++)
			out[(*n)++] = &pj->targets[i];
		return 0;
	}
	for (size_t j = 0; j < o->ntargets; j++)
		if (!(out[(*n)++] = cli_project_target(cli, verb, pj, o->targets[j], &st)))
			return st;
	return 0;
}

/* --check: is the lock on disk there and made from these inputs? */
const char *cli_lock_check_one(struct cli *cli, gpuenv_arena_t *arena, const gpuenv_manifest_t *m,
	const gpuenv_manifest_target_t *t, const char *path, const char **detail, gpuenv_lock_t *lkp)
{
	gpuenv_lock_t lk;
	const char *st;
	*detail = NULL;
	if (lkp && lkp->lock_version) {
		lk = *lkp; /* read already */
	} else if (cli_lock_read(cli, arena, path, &lk) != 0) {
		st = cli->ctx.err.code == -ENOENT ? "missing" : "unreadable";
		*detail = cli_err_text(cli, arena, true);
		gpuenv_error_clear(&cli->ctx);
		return st;
	}
	if (lkp)
		*lkp = lk;
	const char *want = gpuenv_project_inputs_hash(arena, m, t);
	st = lk.target.inputs_hash && want && !strcmp(lk.target.inputs_hash, want) ? "fresh" : "stale";
	if (!strcmp(st, "stale"))
		*detail = "the manifest or the target changed since the lock was written";
	return st;
}

struct lock_ctx {
	struct cli *cli;
	gpuenv_arena_t *arena;
	const gpuenv_manifest_t *m;
	gpuenv_index_t *ix;
	const gpuenv_kb_t *kb;
	const char *dir;
	json_t *json;
	const struct cli_lock_opts *o;
};

/* Lock one target; returns the exit status it earns. */
static int lock_one(struct lock_ctx *lc, const gpuenv_manifest_target_t *t, const gpuenv_backend_choice_t *bc,
	const char *torch_error, const char *torch_source)
{
	struct cli *cli = lc->cli;
	gpuenv_project_lock_req_t rq = { .m = lc->m, .t = t, .backend = bc, .torch_error = torch_error,
		.torch_source = torch_source, .ix = lc->ix, .kb = lc->kb, .pre = lc->o->pre,
		.only_binary = lc->o->only_binary, .nonly_binary = lc->o->nonly_binary,
		.no_binary = lc->o->no_binary, .nno_binary = lc->o->nno_binary };
	gpuenv_project_lock_out_t out;
	gpuenv_buf_t dump;
	const char *name = gpuenv_project_lock_name(lc->arena, lc->m, t);
	const char *path = gpuenv_arena_printf(lc->arena, "%s/%s", lc->dir, name).ptr;
	double t0 = cli_now_s();
	gpuenv_buf_init(&dump, &cli->ctx, 256u << 20);
	if (lc->o->dump_dir)
		rq.dump = &dump;
	int rc = gpuenv_project_lock_target(&cli->ctx, lc->arena, &rq, &out);
	if (lc->o->dump_dir && dump.len) {
		gpuenv_error_t saved = cli->ctx.err;
		const char *dp = gpuenv_arena_printf(lc->arena, "%s/scenario.%s.toml", lc->o->dump_dir, t->name).ptr;
		if (!dp || gpuenv_fs_write_atomic(&cli->ctx, dp, dump.data, dump.len, 0644) != 0) {
			fprintf(stderr, "%s: %s: --dump: %s\n", cli->prog, t->name, cli_err_text(cli, lc->arena, false));
		} else if (!lc->json) {
			fprintf(stderr, "%s: the resolution's inputs: %s (gpuenv debug resolve %s)\n", t->name, dp, dp);
		}
		cli->ctx.err = saved;
	}
	gpuenv_buf_free(&dump);
	const char *status, *err = NULL;
	int st = CLI_EXIT_OK;
	gpuenv_buf_t old;
	/* sync locking first: its own output stays on stdout */
	FILE *out_f = lc->o->quiet_json ? stderr : stdout;

	gpuenv_buf_init(&old, &cli->ctx, 64u << 20);
	if (rc == GPUENV_ENOSOLUTION) {
		status = "no-solution";
		st = CLI_EXIT_FAIL;
	} else if (rc != 0) {
		status = "error";
		err = cli_err_text(cli, lc->arena, false);
		st = CLI_EXIT_CANNOT;
	} else if (gpuenv_fs_read(&cli->ctx, path, 64u << 20, &old) == 0 && old.len == out.text.len
		   && !memcmp(old.data, out.text.data, old.len)) {
		status = "unchanged";
	} else {
		gpuenv_error_clear(&cli->ctx);
		if (gpuenv_fs_write_atomic(&cli->ctx, path, out.text.data, out.text.len, 0644) != 0) {
			status = "error";
			err = cli_err_text(cli, lc->arena, false);
			st = CLI_EXIT_CANNOT;
		} else {
			status = "written";
		}
	}
	double secs = cli_now_s() - t0;
	const char *torch = NULL;
	if (rc == 0)
		for (size_t i = 0; i < out.res.npkgs; i++)
			if (!strcmp(out.res.pkgs[i].name, "torch"))
				torch = out.res.pkgs[i].cand->version;
	if (lc->json) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:f}", "target", t->name, "lock", name, "status", status,
			"seconds", secs);
		if (o) {
			if (bc) {
				json_object_set_new(o, "backend", json_string(bc->backend));
				json_object_set_new(o, "backend_reason", json_string(bc->reason ? bc->reason : ""));
				json_object_set_new(o, "user_pinned", json_boolean(bc->user_pinned));
			} else if (torch_error) {
				json_object_set_new(o, "backend_error", json_string(torch_error));
			}
			if (rc == 0) {
				json_t *pk = json_object();
				for (size_t i = 0; pk && i < out.res.npkgs; i++)
					json_object_set_new(pk, out.res.pkgs[i].name,
						json_string(out.res.pkgs[i].cand->version));
				json_object_set_new(o, "packages", pk);
			}
			if (rc == GPUENV_ENOSOLUTION && out.res.explanation)
				json_object_set_new(o, "explanation", json_string(out.res.explanation));
			if (err)
				json_object_set_new(o, "error", json_string(err));
			json_array_append_new(lc->json, o);
		}
	} else {
		if (rc == 0) {
			fprintf(out_f, "%s: %zu package%s", t->name, out.res.npkgs, out.res.npkgs == 1 ? "" : "s");
			if (torch)
				fprintf(out_f, ", torch %s", torch);
			if (bc && torch)
				fprintf(out_f, " (build %s%s)", bc->backend, bc->user_pinned ? ", the project's source" : "");
			fprintf(out_f, " -> %s (%s) in %.2f s\n", name, status, secs);
			if (bc && torch && bc->reason && cli->verbose >= 0) {
				fprintf(out_f, "  why %s: ", bc->backend);
				for (const char *r = bc->reason; *r; r++) {
					fputc(*r, out_f);
					if (*r == '\n' && r[1])
						fputs("    ", out_f);
				}
				fputc('\n', out_f);
			}
		}
		if (rc == GPUENV_ENOSOLUTION) {
			fprintf(out_f, "%s: no solution; %s left as it was\n%s\n", t->name, name,
				out.res.explanation ? out.res.explanation : "");
		}
		if (err) {
			fprintf(stderr, "%s: %s: %s\n", cli->prog, t->name, err);
			if (cli->ctx.err.hint[0])
				fprintf(stderr, "hint: %s\n", cli->ctx.err.hint);
		}
	}
	gpuenv_error_clear(&cli->ctx);
	gpuenv_buf_free(&old);
	gpuenv_project_lock_out_free(&out);
	return st;
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

/* 0 to go on, or -1 with *exit_st the exit status (help printed, a usage
 * error). */
static int lock_parse_opts(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	struct cli_lock_opts *o, int *exit_st)
{
	static const struct option opts[] = {
		CLI_LOCK_OPTIONS,
		{ "target", required_argument, NULL, 't' },
		{ "all", no_argument, NULL, 'a' },
		{ "check", no_argument, NULL, 'c' },
		{ "dump", required_argument, NULL, 'D' },
		CLI_PROFILE_OPTION,
		{ NULL, 0, NULL, 0 },
	};
	int c, h;
	*exit_st = CLI_EXIT_USAGE;
	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, exit_st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return -1;
		if ((h = cli_lock_opt(cli, verb, c, optarg, o, exit_st)) < 0)
			return -1;
		if (h)
			continue;
		switch (c) {
		case 't':
			if (o->ntargets == CLI_LOCK_MAX_ARGS)
				return opt_fail(exit_st, cli_usage_error(cli, verb, "%s: too many --target options", verb->name));
			o->targets[o->ntargets++] = optarg;
			break;
		case 'a': break;
		case 'c': o->check = true; break;
		case 'D': o->dump_dir = optarg; break;
		default:
			return opt_fail(exit_st, cli_usage_error(cli, verb, "%s: unexpected option", verb->name));
		}
	}
	if (optind < argc) {
		*exit_st = cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
		return -1;
	}
	return 0;
}

int cli_lock_index_open(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	struct cli_project *pj, const gpuenv_index_source_t *extra, size_t nextra, gpuenv_index_t **ix)
{
	gpuenv_index_source_t *src = gpuenv_arena_calloc(&pj->arena, CLI_LOCK_MAX_SOURCES + CLI_LOCK_MAX_ARGS + nextra,
		sizeof(*src));
	size_t nsrc = 0;
	int st;
	*ix = NULL;
	if (!src)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if ((st = cli_lock_sources(cli, verb, o, &pj->m, &pj->arena, src, &nsrc)) != 0)
		return st;
	for (size_t i = 0; i < nextra; i++)
		src[nsrc++] = extra[i];
	gpuenv_index_opts_t io = { .sources = src, .nsources = nsrc, .cache_dir = o->cache_dir,
		.offline = o->offline, .timeout_ms = o->timeout_s * 1000 };
	io.retries = o->retries;
	if (isatty(STDERR_FILENO) && !cli->json && cli->verbose >= 0)
		io.progress = progress;
	if (gpuenv_index_open(&cli->ctx, &io, ix) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return 0;
}

int cli_lock_targets(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	struct cli_project *pj, const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_index_t **ix_out)
{
	gpuenv_index_source_t src[CLI_LOCK_MAX_SOURCES + CLI_LOCK_MAX_ARGS];
	size_t nsrc = 0, nextra = 0;
	gpuenv_backend_choice_t *bc = NULL;
	const char **terr = NULL, **tsrc = NULL;
	gpuenv_index_t *ix = NULL;
	gpuenv_manifest_t *m = &pj->m;
	int st;

	*ix_out = NULL;
	/* the sources' names first: a torch build's index may be one of them */
	if ((st = cli_lock_sources(cli, verb, o, m, &pj->arena, src, &nsrc)) != 0)
		return st;
	bc = gpuenv_arena_calloc(&pj->arena, npick ? npick : 1, sizeof(*bc));
	terr = gpuenv_arena_calloc(&pj->arena, npick ? npick : 1, sizeof(*terr));
	tsrc = gpuenv_arena_calloc(&pj->arena, npick ? npick : 1, sizeof(*tsrc));
	gpuenv_index_source_t *extra = gpuenv_arena_calloc(&pj->arena, npick ? npick : 1, sizeof(*extra));
	if (!bc || !terr || !tsrc || !extra)
		return cli_report(cli, CLI_EXIT_CANNOT);
	/* every target's torch build first: their indexes are sources too */
	for (size_t i = 0; i < npick; i++) {
		if (gpuenv_manifest_backend(&cli->ctx, &pj->arena, m, pick[i], pj->kb, &bc[i]) != 0) {
			if (cli->ctx.err.code == -ENOMEM)
				return cli_report(cli, CLI_EXIT_CANNOT);
			terr[i] = cli_err_text(cli, &pj->arena, true);
			gpuenv_error_clear(&cli->ctx);
			continue;
		}
		if (bc[i].user_pinned) {
			tsrc[i] = bc[i].source;
			continue;
		}
		size_t k;
		for (k = 0; k < nsrc + nextra; k++) {
			const gpuenv_index_source_t *x = k < nsrc ? &src[k] : &extra[k - nsrc];
			if (x->url && bc[i].index_url && !strcmp(x->url, bc[i].index_url))
				break;
		}
		if (k == nsrc + nextra)
			extra[nextra++] = (gpuenv_index_source_t){
				.name = gpuenv_arena_printf(&pj->arena, "torch-%s", bc[i].backend).ptr,
				.url = bc[i].index_url, .priority = GPUENV_SOURCE_EXPLICIT };
		tsrc[i] = k < nsrc ? src[k].name : extra[k - nsrc].name;
	}
	if ((st = cli_lock_index_open(cli, verb, o, pj, extra, nextra, &ix)) != 0)
		return st;
	struct lock_ctx lc = { .cli = cli, .arena = &pj->arena, .m = m, .ix = ix, .kb = pj->kb, .dir = pj->dir,
		.json = cli->json && !o->quiet_json ? json_array() : NULL, .o = o };
	st = CLI_EXIT_OK;
	for (size_t i = 0; i < npick; i++) {
		int s = lock_one(&lc, pick[i], terr[i] ? NULL : &bc[i], terr[i], tsrc[i]);
		if (s > st)
			st = s;
	}
	if (lc.json && cli_print_json(cli, lc.json) != 0)
		st = CLI_EXIT_CANNOT;
	*ix_out = ix;
	return st;
}

static int cli_lock(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct cli_lock_opts o = { 0 };
	struct cli_project pj;
	size_t npick = 0;
	const gpuenv_manifest_target_t **pick = NULL;
	gpuenv_index_t *ix = NULL;
	int st;

	if (lock_parse_opts(cli, verb, argc, argv, &o, &st) != 0)
		return st;
	if ((st = cli_profile_start(cli, verb->name, o.profile)) != 0)
		return st;
	if ((st = cli_project_open(cli, verb->name, o.project, o.facts_path, o.kb_dir, o.torch_index, &pj)) != 0)
		goto out;
	gpuenv_manifest_t *m = &pj.m;
	if ((st = lock_pick_targets(cli, verb, &o, &pj, &pick, &npick)) != 0)
		goto out;

	if (o.check) {
		json_t *arr = cli->json ? json_array() : NULL;
		st = CLI_EXIT_OK;
		for (size_t i = 0; i < npick; i++) {
			const char *name = gpuenv_project_lock_name(&pj.arena, m, pick[i]);
			const char *path = gpuenv_arena_printf(&pj.arena, "%s/%s", pj.dir, name).ptr, *detail;
			const char *s = cli_lock_check_one(cli, &pj.arena, m, pick[i], path, &detail, NULL);
			if (strcmp(s, "fresh") != 0)
				st = CLI_EXIT_FAIL;
			if (arr)
				json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s?}", "target", pick[i]->name,
					"lock", name, "status", s, "detail", detail));
			else
				printf("%s: %s %s%s%s\n", pick[i]->name, name, s, detail ? ": " : "", detail ? detail : "");
		}
		if (arr && cli_print_json(cli, arr) != 0)
			st = CLI_EXIT_CANNOT;
		goto out;
	}
	st = cli_lock_targets(cli, verb, &o, &pj, pick, npick, &ix);
out:
	gpuenv_index_close(ix);
	cli_project_close(&pj);
	return cli_profile_finish(cli, o.profile, st);
}

const struct cli_verb cli_verb_lock = {
	.name = "lock",
	.run = cli_lock,
	.summary = "resolve the project for each hardware target into pylock.<target>.toml",
	.usage = "gpuenv lock [--project DIR] [--target NAME]... [--all] [--check] [--offline]\n"
		 "                 [--index-url URL] [--source-url NAME=URL]... [--torch-index URL]\n"
		 "                 [--find-links DIR]... [--cache-dir DIR] [--facts FILE.json]\n"
		 "                 [--kb-dir DIR] [--pre] [--only-binary NAMES] [--no-binary NAMES]\n"
		 "                 [--dump DIR] [--retries N] [--timeout SECONDS] [--profile FILE] [--json]",
	.help = "  --project DIR      the project (its pyproject.toml); default: .\n"
		"  --target NAME      lock this declared target (repeatable); default: all\n"
		"  --all              lock every declared target (the default)\n"
		"  --check            write nothing; exit 1 when a lock is missing or stale\n"
		"  --offline          use the HTTP cache only\n"
		"  --index-url URL    replace the default index (PyPI), as pip's option does\n"
		"  --source-url NAME=URL  send a declared source's requests to URL (a mirror)\n"
		"  --torch-index URL  the torch builds' index root instead of [tool.gpuenv]\n"
		"                     torch-index (<URL>/<backend>/ per build)\n"
		"  --find-links DIR   also look for wheels in DIR (a folder or a page of links)\n"
		"  --cache-dir DIR    the HTTP cache (default $XDG_CACHE_HOME/gpuenv)\n"
		"  --facts FILE.json  with no targets declared: lock for the machine a probe\n"
		"                     snapshot describes instead of this one\n"
		"  --kb-dir DIR       knowledge-base files that replace the built-in ones\n"
		"  --pre              allow pre-releases everywhere (PEP 440's rule otherwise:\n"
		"                     only where a specifier names one or nothing else fits)\n"
		"  --only-binary NAMES  never lock an sdist of these (comma-separated, or :all:)\n"
		"  --no-binary NAMES  never lock a wheel of these (comma-separated, or :all:)\n"
		"  --dump DIR         also write each target's resolution inputs as a packse\n"
		"                     scenario, DIR/scenario.<target>.toml, solved or not\n"
		"                     (replay: gpuenv debug resolve FILE); it fetches the\n"
		"                     metadata of every candidate, slow on large graphs\n"
		"  --retries N        retry a failed transfer N times (1-20, default 3), with backoff\n"
		"  --timeout SECONDS  give up on a transfer after this long (default 30)\n"
		CLI_PROFILE_HELP
		"  --json             one object per target on stdout\n"
		"\n"
		"Each target's torch family (torch, torchvision, torchaudio, ...) comes from one\n"
		"build, chosen by the knowledge base for the target's GPU and driver, unless a\n"
		"dependency pins a source (then that source is checked against the target).\n"
		"exit status: 0 every target locked (or fresh with --check), 1 a target has no\n"
		"solution or a lock is missing or stale, 2 usage, 4 an input could not be\n"
		"read or fetched, or a lock (or the --profile trace) could not be written",
};
