/* gpuenv lock: pyproject.toml + hardware targets -> one PEP 751 lock per
 * target (docs/lock.md).  The locking is lib/project's (gpuenv_project_lock,
 * gpuenv_project_lock_state); this file reads the options and prints each
 * target's outcome. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/build.h"
#include "gpuenv/facts.h"
#include "gpuenv/fs.h"
#include "gpuenv/project.h"
#include "lock_util.h"

extern char **environ;

static void progress(void *arg, size_t done, size_t total, uint64_t bytes)
{
	(void)arg;
	fprintf(stderr, "\r\033[K  fetching %zu/%zu (%.1f MB)", done, total, (double)bytes / 1e6);
	if (done == total)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

/* The targets to lock: the named ones, or all. */
static int lock_pick_targets(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	gpuenv_project_t *pj, const gpuenv_manifest_target_t ***outp, size_t *n)
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

struct lock_print {
	struct cli *cli;
	json_t *json;	 /* --json: one object per target */
	FILE *out;	 /* sync locking first: its own output stays on stdout */
	bool silent;	 /* cli_lock_opts.silent */
};

/* What changed from the target's previous lock: one object per package,
 * "change" "~", "+" or "-". */
static json_t *changes_json(const gpuenv_project_locked_t *r)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < r->nchanges; i++) {
		const gpuenv_lock_change_t *c = &r->changes[i];
		json_array_append_new(a, json_pack("{s:s, s:s, s:s?, s:s?}", "name", c->name, "change",
			!c->from ? "+" : !c->to ? "-" : "~", "from", c->from, "to", c->to));
	}
	return a;
}

/* The lines of what changed since the previous lock: the target's hardware
 * (its torch build chosen afresh), then `~ alpha 1.0 -> 1.1`, `+ gamma
 * 1.1`, `- delta 1.0` per package. */
static void print_changes(FILE *f, const gpuenv_project_locked_t *r)
{
	const gpuenv_backend_choice_t *bc = r->backend;

	if (r->target_change)
		fprintf(f, "  the target changed since the lock (%s): its torch build chosen afresh: %s -> %s\n",
			r->target_change, r->old_backend ? r->old_backend : "none", bc ? bc->backend : "none");
	for (size_t i = 0; i < r->nchanges; i++) {
		const gpuenv_lock_change_t *c = &r->changes[i];
		if (!c->from)
			fprintf(f, "  + %s %s\n", c->name, c->to);
		else if (!c->to)
			fprintf(f, "  - %s %s\n", c->name, c->from);
		else
			fprintf(f, "  ~ %s %s -> %s\n", c->name, c->from, c->to);
	}
}

/* One target's outcome, as text or JSON (gpuenv_project_lock's callback). */
static void lock_print(void *ud, const gpuenv_project_locked_t *r)
{
	struct lock_print *lp = ud;
	struct cli *cli = lp->cli;
	const gpuenv_manifest_target_t *t = r->t;
	const gpuenv_backend_choice_t *bc = r->backend;
	FILE *out_f = lp->out;

	if (lp->silent && r->rc == 0)
		return;

	if (r->dump_error)
		fprintf(stderr, "%s: %s: --dump: %s\n", cli->prog, t->name, r->dump_error);
	else if (r->dump_path && !lp->json)
		fprintf(stderr, "%s: the resolution's inputs: %s (gpuenv debug resolve %s)\n", t->name, r->dump_path,
			r->dump_path);
	if (lp->json) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:f}", "target", t->name, "lock", r->lock_name, "status",
			r->status, "seconds", r->secs);
		if (!o)
			return;
		if (bc) {
			json_object_set_new(o, "backend", json_string(bc->backend));
			json_object_set_new(o, "backend_reason", json_string(bc->reason ? bc->reason : ""));
			json_object_set_new(o, "user_pinned", json_boolean(bc->user_pinned));
		} else if (r->torch_error) {
			json_object_set_new(o, "backend_error", json_string(r->torch_error));
		}
		if (r->warnings)
			json_object_set_new(o, "warnings", json_string(r->warnings));
		if (r->rc == 0) {
			json_t *pk = json_object();
			for (size_t i = 0; pk && i < r->res->npkgs; i++)
				json_object_set_new(pk, r->res->pkgs[i].name, json_string(r->res->pkgs[i].cand->version));
			json_object_set_new(o, "packages", pk);
		}
		if (r->rc == 0 && r->old_lock)
			json_object_set_new(o, "changes", changes_json(r));
		if (r->target_change)
			json_object_set_new(o, "target_change", json_string(r->target_change));
		if (r->old_backend)
			json_object_set_new(o, "previous_backend", json_string(r->old_backend));
		if (r->backend_kept)
			json_object_set_new(o, "backend_pick", json_string(r->backend_pick));
		if (r->rc == GPUENV_ENOSOLUTION && r->res->explanation)
			json_object_set_new(o, "explanation", json_string(r->res->explanation));
		if (r->error)
			json_object_set_new(o, "error", json_string(r->error));
		json_array_append_new(lp->json, o);
		return;
	}
	if (r->rc == 0) {
		size_t n = r->res->npkgs;
		fprintf(out_f, "%s: %zu package%s", t->name, n, n == 1 ? "" : "s");
		if (r->torch)
			fprintf(out_f, ", torch %s", r->torch);
		if (bc && r->torch)
			fprintf(out_f, " (build %s%s)", bc->backend, bc->user_pinned ? ", the project's source" : "");
		fprintf(out_f, " -> %s (%s) in %.2f s\n", r->lock_name, r->status, r->secs);
		if (bc && r->torch && bc->reason && cli->verbose >= 0) {
			fprintf(out_f, "  why %s: ", bc->backend);
			for (const char *c = bc->reason; *c; c++) {
				fputc(*c, out_f);
				if (*c == '\n' && c[1])
					fputs("    ", out_f);
			}
			fputc('\n', out_f);
		}
		for (const char *w = r->warnings; w && *w;) {
			const char *e = strchr(w, '\n');
			int l = e ? (int)(e - w) : (int)strlen(w);
			fprintf(out_f, "  warning: %.*s\n", l, w);
			w += l + (e ? 1 : 0);
		}
		print_changes(out_f, r);
	}
	if (r->rc == GPUENV_ENOSOLUTION)
		fprintf(out_f, "%s: no solution; %s left as it was\n%s\n", t->name, r->lock_name,
			r->res->explanation ? r->res->explanation : "");
	if (r->error) {
		fprintf(stderr, "%s: %s: %s\n", cli->prog, t->name, r->error);
		if (r->hint && r->hint[0])
			fprintf(stderr, "hint: %s\n", r->hint);
	}
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
		{ "upgrade", no_argument, NULL, 'U' },
		{ "upgrade-package", required_argument, NULL, 'u' },
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
				return *exit_st = cli_usage_error(cli, verb, "%s: too many --target options",
					       verb->name), -1;
			o->targets[o->ntargets++] = optarg;
			break;
		case 'a': break;
		case 'c': o->check = true; break;
		case 'D': o->dump_dir = optarg; break;
		case 'U': o->upgrade = true; break;
		case 'u':
			if (o->nupgrade == CLI_LOCK_MAX_ARGS)
				return *exit_st = cli_usage_error(cli, verb, "%s: too many --upgrade-package options",
					       verb->name), -1;
			o->upgrade_pkgs[o->nupgrade++] = optarg;
			break;
		default:
			return *exit_st = cli_usage_error(cli, verb, "%s: unexpected option", verb->name), -1;
		}
	}
	if (optind < argc) {
		*exit_st = cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
		return -1;
	}
	if (o->check && (o->upgrade || o->nupgrade))
		return *exit_st = cli_usage_error(cli, verb, "%s: --check writes nothing; --upgrade and "
			"--upgrade-package go without it", verb->name), -1;
	return 0;
}

/* --upgrade-package NAME[==VERSION] as the library's upgrade: names
 * normalised, versions checked.  0, or an exit status (reported). */
static int lock_upgrade(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	gpuenv_arena_t *arena, gpuenv_upgrade_t *up)
{
	const char **names = gpuenv_arena_calloc(arena, o->nupgrade + 1, sizeof(*names));
	const char **versions = gpuenv_arena_calloc(arena, o->nupgrade + 1, sizeof(*versions));

	*up = (gpuenv_upgrade_t){ .all = o->upgrade, .n = o->nupgrade, .names = names, .versions = versions };
	if (!names || !versions)
		return cli_report(cli, CLI_EXIT_CANNOT);
	for (size_t i = 0; i < o->nupgrade; i++) {
		const char *arg = o->upgrade_pkgs[i], *eq = strstr(arg, "==");
		size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
		char nm[256];
		gpuenv_version_t v;
		if (!gpuenv_name_is_valid((gpuenv_str_t){ arg, nl }) ||
			gpuenv_name_normalize_to((gpuenv_str_t){ arg, nl }, nm, sizeof(nm)) == SIZE_MAX)
			return cli_usage_error(cli, verb, "%s: --upgrade-package '%s': not a package name "
				"(NAME or NAME==VERSION)", verb->name, arg);
		if (eq && gpuenv_version_parse(&cli->ctx, arena, gpuenv_str(eq + 2), &v) != 0) {
			gpuenv_error_clear(&cli->ctx);
			return cli_usage_error(cli, verb, "%s: --upgrade-package '%s': '%s' is not a PEP 440 "
				"version", verb->name, arg, eq + 2);
		}
		names[i] = gpuenv_arena_strndup(arena, nm, strlen(nm));
		versions[i] = eq ? eq + 2 : NULL;
		if (!names[i])
			return cli_report(cli, CLI_EXIT_CANNOT);
	}
	return 0;
}

int cli_lock_lib_opts(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	gpuenv_project_t *pj, gpuenv_project_lock_opts_t *lo)
{
	gpuenv_index_source_t *src = gpuenv_arena_calloc(&pj->arena, CLI_LOCK_MAX_SOURCES + CLI_LOCK_MAX_ARGS,
		sizeof(*src));
	size_t nsrc = 0;
	int st;

	if (!src)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (o->offline && o->refresh)
		return cli_usage_error(cli, verb, "%s: --refresh asks the index again and --offline never "
			"does: give one of them", verb->name);
	if ((st = cli_lock_sources(cli, verb, o, &pj->m, &pj->arena, src, &nsrc)) != 0)
		return st;
	*lo = (gpuenv_project_lock_opts_t){ .index = { .sources = src, .nsources = nsrc, .cache_dir = o->cache_dir,
		.offline = o->offline, .refresh = o->refresh, .timeout_ms = o->timeout_s * 1000,
		.retries = o->retries },
		.pre = o->pre, .only_binary = o->only_binary, .nonly_binary = o->nonly_binary,
		.no_binary = o->no_binary, .nno_binary = o->nno_binary, .dump_dir = o->dump_dir };
	if ((st = lock_upgrade(cli, verb, o, &pj->arena, &lo->upgrade)) != 0)
		return st;
	if (isatty(STDERR_FILENO) && !cli->json && cli->verbose >= 0)
		lo->index.progress = progress;
	return 0;
}

int cli_lock_targets(struct cli *cli, const struct cli_verb *verb, const struct cli_lock_opts *o,
	gpuenv_project_t *pj, const gpuenv_manifest_target_t *const *pick, size_t npick, gpuenv_index_t **ix_out)
{
	gpuenv_project_lock_opts_t lo;
	gpuenv_meta_builder_t *mb = NULL;
	struct lock_print lp = { .cli = cli, .json = o->json_into ? o->json_into
		: cli->json && !o->quiet_json && !o->silent ? json_array() : NULL,
		.out = o->quiet_json ? stderr : stdout, .silent = o->silent };
	json_t *own = o->json_into ? NULL : lp.json; /* printed (or dropped) here */
	int st, worst = 0;

	*ix_out = NULL;
	if ((st = cli_lock_lib_opts(cli, verb, o, pj, &lo)) != 0) {
		cli_json_drop(own);
		return st;
	}
	lo.done = lock_print;
	lo.ud = &lp;
	/* sdists with dynamic metadata: their build backends asked (docs/build.md) */
	gpuenv_meta_builder_opts_t mo = { .cache_dir = o->cache_dir, .base_env = (const char *const *)environ,
		.timeout_s = o->build_timeout_s };
	if (gpuenv_meta_builder_new(&cli->ctx, &mo, &mb) != 0) {
		cli_json_drop(own);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	gpuenv_meta_builder_hook(mb, &lo.sdist_meta);
	if (gpuenv_project_lock(pj, &lo, pick, npick, ix_out, &worst) != 0) {
		gpuenv_meta_builder_free(mb);
		cli_json_drop(own);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	gpuenv_meta_builder_free(mb);
	st = worst;
	if (own && cli_print_json(cli, own) != 0)
		st = CLI_EXIT_CANNOT;
	return st;
}

static int cli_lock(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct cli_lock_opts o = { 0 };
	gpuenv_project_t pj;
	size_t npick = 0;
	const gpuenv_manifest_target_t **pick = NULL;
	gpuenv_index_t *ix = NULL;
	int st;

	if (lock_parse_opts(cli, verb, argc, argv, &o, &st) != 0)
		return st;
	if ((st = cli_profile_start(cli, verb->name, o.profile)) != 0)
		return st;
	if ((st = cli_project_open(cli, verb->name, o.project, o.facts_path, o.kb_dir, o.torch_index, 0, &pj)) != 0)
		goto out;
	if ((st = lock_pick_targets(cli, verb, &o, &pj, &pick, &npick)) != 0)
		goto out;

	if (o.check) {
		json_t *arr = cli->json ? json_array() : NULL;
		st = CLI_EXIT_OK;
		for (size_t i = 0; i < npick; i++) {
			const char *name = gpuenv_project_lock_name(&pj.arena, &pj.m, pick[i]), *detail;
			const char *path = gpuenv_project_lock_path(&pj, pick[i]);
			gpuenv_lock_t lk = { 0 };
			int state = path ? gpuenv_project_lock_state(&pj, pick[i], path, &lk, &detail) : -ENOMEM;
			/* a git ref that moved since, an archive by URL whose bytes
			 * changed: stale too (the remote asked, through an index
			 * client for http(s) archives) */
			if (state == GPUENV_LOCK_FRESH && !ix && gpuenv_project_lock_has_remote_archive(&lk)) {
				gpuenv_project_lock_opts_t lo;
				if ((st = cli_lock_lib_opts(cli, verb, &o, &pj, &lo)) != 0)
					break;
				if (gpuenv_index_open(&cli->ctx, &lo.index, &ix) != 0)
					state = -1;
			}
			if (state == GPUENV_LOCK_FRESH && gpuenv_project_lock_refs(&cli->ctx, &pj.arena, ix, o.cache_dir,
								&lk, &detail) != 0)
				state = -1;
			else if (state == GPUENV_LOCK_FRESH && detail)
				state = GPUENV_LOCK_STALE;
			if (state < 0) {
				st = cli_report(cli, CLI_EXIT_CANNOT);
				break;
			}
			const char *s = gpuenv_lock_state_name(state);
			if (state != GPUENV_LOCK_FRESH)
				st = CLI_EXIT_FAIL;
			if (arr)
				json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s?}", "target", pick[i]->name,
					"lock", name, "status", s, "detail", detail));
			else
				printf("%s: %s %s%s%s\n", pick[i]->name, name, s, detail ? ": " : "", detail ? detail : "");
		}
		if (arr && st != CLI_EXIT_CANNOT && cli_print_json(cli, arr) != 0)
			st = CLI_EXIT_CANNOT;
		goto out;
	}
	st = cli_lock_targets(cli, verb, &o, &pj, pick, npick, &ix);
out:
	gpuenv_index_close(ix);
	gpuenv_project_close(&pj);
	return cli_profile_finish(cli, o.profile, st);
}

const struct cli_verb cli_verb_lock = {
	.name = "lock",
	.run = cli_lock,
	.summary = "resolve the project for each hardware target into pylock.<target>.toml",
	.usage = "gpuenv lock [--project DIR] [--target NAME]... [--all] [--check] [--offline]\n"
		 "                 [--refresh] [--index-url URL] [--source-url NAME=URL]...\n"
		 "                 [--torch-index URL] [--find-links DIR]... [--cache-dir DIR]\n"
		 "                 [--facts FILE.json] [--kb-dir DIR] [--pre] [--only-binary NAMES]\n"
		 "                 [--no-binary NAMES] [--upgrade] [--upgrade-package NAME[==VERSION]]...\n"
		 "                 [--dump DIR] [--retries N] [--timeout SECONDS] [--build-timeout SECONDS]\n"
		 "                 [--profile FILE] [--json]",
	.help = "  --project DIR      the project (its pyproject.toml); default: .\n"
		"  --target NAME      lock this declared target (repeatable); default: all\n"
		"  --all              lock every declared target (the default)\n"
		"  --check            write nothing; exit 1 when a lock is missing or stale (git\n"
		"                     refs and archives by URL are asked of their servers)\n"
		CLI_LOCK_INDEX_HELP
		"  --facts FILE.json  with no targets declared: lock for the machine a probe\n"
		"                     snapshot describes instead of this one\n"
		"  --kb-dir DIR       knowledge-base files that replace the built-in ones\n"
		"  --pre              allow pre-releases everywhere (PEP 440's rule otherwise:\n"
		"                     only where a specifier names one or nothing else fits)\n"
		"  --only-binary NAMES  never lock an sdist of these (comma-separated, or :all:)\n"
		"  --no-binary NAMES  never lock a wheel of these (comma-separated, or :all:)\n"
		"  --upgrade          take the newest versions of everything; without it, each\n"
		"                     target's existing lock is kept where the requirements allow\n"
		"  --upgrade-package NAME[==VERSION]  move NAME to VERSION or the newest that\n"
		"                     fits, and what it needs along with it (repeatable)\n"
		"  --dump DIR         also write each target's resolution inputs as a packse\n"
		"                     scenario, DIR/scenario.<target>.toml, solved or not\n"
		"                     (replay: gpuenv debug resolve FILE); it fetches the\n"
		"                     metadata of every candidate, slow on large graphs\n"
		"  --retries N        retry a failed transfer N times (1-20, default 3), with backoff\n"
		"  --timeout SECONDS  give up on a transfer after this long (default 30); a\n"
		"                     download: below 1 KiB/s for this long, or past this\n"
		"                     plus its size at 64 KiB/s\n"
		"  --build-timeout SECONDS  stop a build backend asked for an sdist's dependencies\n"
		"                     after this long (default 3600; docs/build.md)\n"
		CLI_PROFILE_HELP
		"  --json             one object per target on stdout\n"
		"\n"
		"A target locked before keeps its locked versions while its requirements allow\n"
		"them; new or changed requirements get the newest that fits; each change is\n"
		"printed (~ alpha 1.0 -> 1.1, + gamma 1.1, - delta 1.0).  Its torch build is kept\n"
		"too unless the target's GPU or driver changed (then it is chosen afresh).\n"
		"Each target's torch family (torch, torchvision, torchaudio, ...) comes from one\n"
		"build, chosen by the knowledge base for the target's GPU and driver, unless a\n"
		"dependency pins a source (then that source is checked against the target).\n"
		"An sdist whose dependencies are known only after a build (setup.py projects)\n"
		"is asked of its build backend (PEP 517), the answer cached by its sha256.\n"
		"Path, git and URL dependencies (name @ https://h/x-1.0-py3-none-any.whl, with\n"
		"an optional #sha256=HEX that is checked) are locked as PEP 751 directory, vcs\n"
		"and archive entries (docs/lock.md, \"Direct references\").\n"
		"exit status: 0 every target locked (or fresh with --check), 1 a target has no\n"
		"solution, a lock is missing or stale, or a build backend failed or ran past\n"
		"--build-timeout on an sdist's metadata, 2 usage, 4 an input could not be\n"
		"read or fetched, or a lock (or the --profile trace) could not be written",
};
