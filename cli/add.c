/* gpuenv add / gpuenv remove (docs/workflow.md): pyproject.toml edited in
 * the project's own dialect by lib/manifest's editor (gpuenv/manifest_edit.h,
 * format-preserving), then the targets locked and the one this machine is
 * synced, as lock and sync do it (cli_lock_targets, cli_sync_do).  A plain
 * name added gets the bound of the version the lock chose, as Poetry and uv
 * write it (">=X.Y.Z", Poetry's "^X.Y.Z"), and the targets are locked again
 * for it (stable: the same versions).  The file and the locks change
 * together: a lock that fails puts the file and the locks back. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edit_util.h"
#include "gpuenv/fs.h"
#include "gpuenv/manifest_edit.h"
#include "gpuenv/pep440.h"
#include "gpuenv/pep508.h"
#include "gpuenv/project.h"
#include "lock_util.h"

struct add_opts {
	struct cli_lock_opts lo;
	const char *group, *extra, *source, *target;
	bool no_lock, no_sync;
	/* --json: the one object printed at the end (docs/workflow.md, "--json") */
	json_t *json, *j_edits, *j_bounds, *j_locks;
	bool locked_ok; /* the locks (and the bounds) written */
};

/* add's and remove's --json object: the file, then what each step did. */
static int json_start(struct cli *cli, const struct cli_verb *verb, struct add_opts *o, const struct cli_pyproject *pp)
{
	o->j_edits = json_array();
	o->j_bounds = json_array();
	o->j_locks = json_array();
	o->json = json_pack("{s:s, s:s, s:O, s:O, s:O}", "verb", verb->name, "file", pp->path, "edits", o->j_edits,
		"bounds", o->j_bounds, "locks", o->j_locks);
	json_decref(o->j_edits);
	json_decref(o->j_bounds);
	json_decref(o->j_locks);
	if (!o->json || !o->j_edits || !o->j_bounds || !o->j_locks)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory writing the JSON", verb->name);
	return 0;
}

static int parse_opts(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, bool add,
	struct add_opts *o, int *st)
{
	static const struct option add_opts[] = {
		CLI_LOCK_OPTIONS,
		{ "group", required_argument, NULL, 'g' },
		{ "optional", required_argument, NULL, 'x' },
		{ "source", required_argument, NULL, 'u' },
		{ "target", required_argument, NULL, 't' },
		{ "no-lock", no_argument, NULL, 'n' },
		{ "no-sync", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option rm_opts[] = {
		CLI_LOCK_OPTIONS,
		{ "group", required_argument, NULL, 'g' },
		{ "target", required_argument, NULL, 't' },
		{ "no-lock", no_argument, NULL, 'n' },
		{ "no-sync", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int c, h;
	*st = CLI_EXIT_USAGE;
	while ((c = cli_getopt(cli, verb, argc, argv, "", add ? add_opts : rm_opts, st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return -1;
		if ((h = cli_lock_opt(cli, verb, c, optarg, &o->lo, st)) < 0)
			return -1;
		if (h)
			continue;
		switch (c) {
		case 'g': o->group = optarg; break;
		case 'x': o->extra = optarg; break;
		case 'u': o->source = optarg; break;
		case 't': o->target = optarg; break;
		case 'n': o->no_lock = true; break;
		case 'N': o->no_sync = true; break;
		default:
			return *st = cli_usage_error(cli, verb, "%s: unexpected option", verb->name), -1;
		}
	}
	if (optind >= argc)
		return *st = cli_usage_error(cli, verb, "%s: which %s?", verb->name, add ? "requirement" : "package"), -1;
	return 0;
}

/* A dependency added by its name alone ("pillow", "torch[opt]; marker",
 * not "pillow>=10" or "pillow@^10"): its bound is written once locked. */
struct plain_add {
	const char *req;  /* as typed */
	const char *name; /* normalised */
	const char *version; /* the lowest locked across the targets, public part; NULL: none */
	bool bare;	  /* no extras and no marker (Poetry's string form) */
};

/* The locks of the picked targets as they were before this verb: put back
 * when a lock fails, so that the file and the locks change together. */
struct lock_keep {
	const char *path;
	gpuenv_buf_t text;
	bool existed;
};

/* The picked targets: the named one, or every one; 0 or an exit status. */
static int pick_targets(struct cli *cli, const struct cli_verb *verb, const struct add_opts *o, gpuenv_project_t *pj,
	const gpuenv_manifest_target_t **all, size_t *npick)
{
	const gpuenv_manifest_target_t *one = NULL;
	int st = 0;

	if (o->target && strcmp(o->target, "auto") != 0 && !(one = cli_project_target(cli, verb, pj, o->target, &st)))
		return st;
	if (one) {
		all[0] = one;
		*npick = 1;
		return 0;
	}
	*npick = pj->ntargets > CLI_LOCK_MAX_ARGS ? CLI_LOCK_MAX_ARGS : pj->ntargets;
	for (size_t i = 0; i < *npick; i++)
		all[i] = &pj->targets[i];
	return 0;
}

/* Open the project and lock the picked targets (keep: their locks as they
 * were are read first, when keep is given).  0 or an exit status. */
static int lock_once(struct cli *cli, const struct cli_verb *verb, struct add_opts *o, gpuenv_arena_t *arena,
	struct lock_keep *keep, size_t *nkeep, struct plain_add *plain, size_t nplain)
{
	gpuenv_project_t pj;
	gpuenv_index_t *ix = NULL;
	const gpuenv_manifest_target_t *all[CLI_LOCK_MAX_ARGS];
	size_t npick = 0;
	int st;

	if ((st = cli_project_open(cli, verb->name, o->lo.project, o->lo.facts_path, o->lo.kb_dir, o->lo.torch_index,
		     0, &pj)) == 0 && (st = pick_targets(cli, verb, o, &pj, all, &npick)) == 0 && keep) {
		for (size_t i = 0; i < npick && !st; i++) {
			struct lock_keep *k = &keep[(*nkeep)++];
			const char *path = gpuenv_project_lock_path(&pj, all[i]);
			gpuenv_buf_init(&k->text, &cli->ctx, 256u << 20);
			if (!path || !(k->path = gpuenv_arena_strndup(arena, path, strlen(path)))) {
				st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory keeping the locks", verb->name);
				break;
			}
			int r = gpuenv_fs_read(&cli->ctx, k->path, 256u << 20, &k->text);
			k->existed = r == 0;
			if (r != 0 && r != -ENOENT)
				st = cli_report(cli, CLI_EXIT_CANNOT);
			gpuenv_error_clear(&cli->ctx);
		}
	}
	if (!st)
		st = cli_lock_targets(cli, verb, &o->lo, &pj, all, npick, &ix);
	/* each plain name's version: the lowest any target locked */
	for (size_t i = 0; !st && i < npick; i++) {
		const char *path = gpuenv_project_lock_path(&pj, all[i]), *detail;
		gpuenv_lock_t lk = { 0 };
		if (!nplain || !path || gpuenv_project_lock_state(&pj, all[i], path, &lk, &detail) < 0)
			continue;
		for (size_t k = 0; k < lk.npackages; k++)
			for (size_t j = 0; j < nplain; j++) {
				const char *v = lk.packages[k].version;
				gpuenv_version_t a, b;
				if (!v || strcmp(lk.packages[k].name, plain[j].name) != 0)
					continue;
				size_t n = strcspn(v, "+"); /* the public version: no local part in a bound */
				if (plain[j].version && gpuenv_version_parse(&cli->ctx, arena, gpuenv_str_n(v, n), &a) == 0 &&
					gpuenv_version_parse(&cli->ctx, arena, gpuenv_str(plain[j].version), &b) == 0 &&
					gpuenv_version_cmp(&a, &b) >= 0)
					continue;
				plain[j].version = gpuenv_arena_strndup(arena, v, n);
			}
	}
	gpuenv_error_clear(&cli->ctx);
	gpuenv_index_close(ix);
	gpuenv_project_close(&pj);
	return st;
}

/* The locked bounds written into the editor: PEP 621 "name[x]>=V; marker",
 * Poetry "name@^V" (a name with extras or a marker keeps Poetry's "*").
 * *changed: any written.  0 or an exit status. */
static int write_bounds(struct cli *cli, struct add_opts *o, struct cli_pyproject *pp, gpuenv_arena_t *arena,
	const struct plain_add *plain, size_t nplain, bool *changed)
{
	bool poetry = gpuenv_manifest_edit_dialect(&pp->ed, o->group != NULL) == GPUENV_DIALECT_POETRY;

	*changed = false;
	for (size_t i = 0; i < nplain; i++) {
		const struct plain_add *p = &plain[i];
		const char *semi = strchr(p->req, ';'), *what, *text;
		size_t head = semi ? (size_t)(semi - p->req) : strlen(p->req);
		while (head && (p->req[head - 1] == ' ' || p->req[head - 1] == '\t'))
			head--;
		if (!p->version || (poetry && !p->bare))
			continue;
		text = poetry ? gpuenv_arena_printf(arena, "%.*s@^%s", (int)head, p->req, p->version).ptr
			      : gpuenv_arena_printf(arena, "%.*s>=%s%s%s", (int)head, p->req, p->version, semi ? "; " : "",
				      semi ? semi + 1 : "").ptr;
		if (!text)
			return cli_error(cli, CLI_EXIT_CANNOT, "add: out of memory writing the bounds");
		gpuenv_manifest_add_t a = { .req = text, .group = o->group, .extra = o->extra, .source = o->source };
		if (gpuenv_manifest_edit_add(&pp->ed, arena, &a, &what) != 0)
			return cli_pyproject_edit_error(cli, cli->ctx.err.code);
		if (o->j_bounds)
			json_array_append_new(o->j_bounds, json_pack("{s:s, s:s, s:s}", "name", p->name, "version",
				p->version, "written", what));
		else if (!cli->json && cli->verbose >= 0)
			printf("~ %s (the locked version's bound)\n", what);
		*changed = true;
	}
	return 0;
}

/* The locks put back as they were (removed where there was none). */
static void locks_restore(struct cli *cli, struct lock_keep *keep, size_t nkeep)
{
	for (size_t i = 0; i < nkeep; i++) {
		if (!keep[i].path)
			continue;
		if (!keep[i].existed)
			unlink(keep[i].path);
		else if (gpuenv_fs_write_atomic(&cli->ctx, keep[i].path, keep[i].text.data ? keep[i].text.data : "",
				 keep[i].text.len, 0644) != 0)
			cli_report(cli, CLI_EXIT_CANNOT);
	}
}

/* Lock (the named target, or every one), write the plain names' bounds and
 * lock again for them, then sync the target this machine is; a lock that
 * fails puts pyproject.toml and the locks back. */
static int lock_and_sync(struct cli *cli, const struct cli_verb *verb, struct add_opts *o, struct cli_pyproject *pp,
	struct plain_add *plain, size_t nplain)
{
	struct lock_keep keep[CLI_LOCK_MAX_ARGS];
	size_t nkeep = 0;
	gpuenv_arena_t arena;
	bool changed = false;
	int st;

	if (o->no_lock)
		return CLI_EXIT_OK;
	o->lo.project = pp->path;
	memset(keep, 0, sizeof(keep));
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	o->lo.json_into = o->j_locks; /* --json: each target's outcome in add's object */
	st = lock_once(cli, verb, o, &arena, keep, &nkeep, plain, nplain);
	if (!st && nplain && (st = write_bounds(cli, o, pp, &arena, plain, nplain, &changed)) == 0 && changed &&
		(st = cli_pyproject_write(cli, verb->name, pp)) == 0) {
		/* the bounds are new inputs: the same versions locked again for them */
		o->lo.silent = true;
		st = lock_once(cli, verb, o, &arena, NULL, NULL, NULL, 0);
		o->lo.silent = false;
	}
	o->locked_ok = st == 0;
	if (st != 0) {
		int r = cli_pyproject_restore(cli, verb->name, pp);
		locks_restore(cli, keep, nkeep);
		fprintf(stderr, "%s: %s: %s%s\n", cli->prog, verb->name, pp->path,
			r ? " is the edited one: the original could not be written back"
			  : " left as it was, and its locks: the lock did not succeed");
		st = r ? r : st;
	}
	for (size_t i = 0; i < nkeep; i++)
		gpuenv_buf_free(&keep[i].text);
	gpuenv_arena_free(&arena);
	if (st != 0)
		return st;
	if (o->no_sync)
		return CLI_EXIT_OK;
	json_t *sj = NULL;
	struct cli_sync_opts so = { .verb = verb, .lo = o->lo, .target = o->target, .json_out = o->json ? &sj : NULL };
	const char *root = NULL;
	so.lo.json_into = NULL;
	st = cli_sync_do(cli, &so, &root);
	if (o->json) {
		json_object_set_new(o->json, "synced", json_boolean(st == 0));
		json_object_set_new(o->json, "sync", sj ? sj : json_null());
	}
	free((void *)root);
	if (st != 0)
		fprintf(stderr, "note: %s and its locks are updated; the sync did not succeed (gpuenv sync to retry)\n",
			pp->path);
	return st;
}

/* add (requirements) or remove (names): every edit made, the file
 * written, then the locks and the sync. */
static int edit_verb(struct cli *cli, const struct cli_verb *verb, int argc, char **argv, bool add)
{
	struct add_opts o = { 0 };
	struct cli_pyproject pp;
	gpuenv_arena_t arena;
	int st;

	if (parse_opts(cli, verb, argc, argv, add, &o, &st) != 0)
		return st;
	if ((st = cli_pyproject_open(cli, verb->name, o.lo.project, &pp)) != 0) {
		cli_pyproject_close(&pp);
		return st;
	}
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	struct plain_add *plain = gpuenv_arena_calloc(&arena, (size_t)argc, sizeof(*plain));
	size_t nplain = 0;
	if (!plain)
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
	if (!st && cli->json && !(st = json_start(cli, verb, &o, &pp)))
		json_object_set_new(o.json, "dialect", json_string(gpuenv_manifest_edit_dialect(&pp.ed, o.group != NULL)
			== GPUENV_DIALECT_POETRY ? "poetry" : "pep621"));
	for (int i = optind; i < argc && !st; i++) {
		gpuenv_manifest_add_t a = { .req = argv[i], .group = o.group, .extra = o.extra, .source = o.source };
		const char *what;
		gpuenv_requirement_t rq;
		int r = add ? gpuenv_manifest_edit_add(&pp.ed, &arena, &a, &what)
			    : gpuenv_manifest_edit_remove(&pp.ed, &arena, argv[i], o.group, &what);
		if (r)
			st = cli_pyproject_edit_error(cli, cli->ctx.err.code);
		else if (o.j_edits)
			json_array_append_new(o.j_edits, json_pack("{s:s, s:s, s:s}", "requirement", argv[i], "change",
				add ? "+" : "-", add ? "written" : "from", what));
		else if (!cli->json && cli->verbose >= 0 && add)
			printf("+ %s\n", what);
		else if (!cli->json && cli->verbose >= 0)
			printf("- %s (%s)\n", argv[i], what);
		/* a plain name: no '@' (a URL, Poetry's NAME@CONSTRAINT), no specifier */
		if (!r && add && !strchr(argv[i], '@') &&
			gpuenv_requirement_parse(&cli->ctx, &arena, gpuenv_str(argv[i]), &rq) == 0 && !rq.spec.n &&
			!rq.url.len) {
			struct plain_add *p = &plain[nplain++];
			char norm[256];
			gpuenv_name_normalize_to(rq.name, norm, sizeof(norm));
			p->req = argv[i];
			p->bare = !rq.nextras && !rq.marker;
			if (!(p->name = gpuenv_arena_strndup(&arena, norm, strlen(norm))))
				st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
		}
		gpuenv_error_clear(&cli->ctx);
	}
	bool written = false;
	if (!st && !(st = cli_pyproject_write(cli, verb->name, &pp))) {
		written = true;
		st = lock_and_sync(cli, verb, &o, &pp, plain, nplain);
	}
	if (o.json) {
		/* what was done: also after a failed lock (the file put back) or
		 * sync (the edit and the locks kept), so a caller knows which */
		json_object_set_new(o.json, "locked", json_boolean(written && !o.no_lock && o.locked_ok));
		json_object_set_new(o.json, "restored", json_boolean(written && !o.no_lock && !o.locked_ok));
		if (!json_object_get(o.json, "synced"))
			json_object_set_new(o.json, "synced", json_false());
		if (written && cli_print_json(cli, o.json) != 0 && !st)
			st = CLI_EXIT_CANNOT;
		else if (!written)
			cli_json_drop(o.json);
	}
	gpuenv_arena_free(&arena);
	cli_pyproject_close(&pp);
	return st;
}

static int cli_add(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return edit_verb(cli, verb, argc, argv, true);
}

static int cli_remove(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return edit_verb(cli, verb, argc, argv, false);
}

#define ADD_LOCK_HELP \
	"  --target NAME      lock only this target, and sync it (default: lock every\n" \
	"                     target, sync the one this machine is, as sync --target auto)\n" \
	"  --no-lock          only edit pyproject.toml\n" \
	"  --no-sync          edit and lock; leave the venv alone\n" \
	"  --project DIR      the project (its pyproject.toml); default: .\n" \
	"  --offline, --refresh, --index-url, --source-url, --torch-index, --find-links,\n" \
	"  --cache-dir, --facts, --kb-dir, --retries, --timeout, --build-timeout, --pre,\n" \
	"  --only-binary, --no-binary: as for gpuenv lock\n" \
	"  --json             one object on stdout: file, dialect, edits (requirement,\n" \
	"                     change + or -, written or from), bounds (name, version,\n" \
	"                     written),\n" \
	"                     locks (each target's, as lock --json: packages, changes\n" \
	"                     ~ + - from the previous lock), locked, restored (a failed\n" \
	"                     lock put the file back), synced, sync (as sync --json)\n"

const struct cli_verb cli_verb_add = {
	.name = "add",
	.run = cli_add,
	.summary = "add dependencies to pyproject.toml (its format kept), lock and sync",
	.usage = "gpuenv add REQ... [--group G] [--optional EXTRA] [--source NAME] [--target T]\n"
		 "                [--no-lock] [--no-sync] [--project DIR] [lock's options]",
	.help = "  REQ                a PEP 508 requirement (\"numpy>=2\", \"torch[opt]; sys_platform\n"
		"                     == 'linux'\"), or in a Poetry project NAME@CONSTRAINT\n"
		"                     (\"pillow@^10\"); a plain name gets the bound of the version\n"
		"                     the lock chose, as Poetry and uv write it (pillow = \"^10.4.0\",\n"
		"                     \"pillow>=10.4.0\"; with --no-lock: \"*\" / unbounded); a name\n"
		"                     already there is updated where it is\n"
		"  --group G          into group G: [dependency-groups] (PEP 735) or\n"
		"                     [tool.poetry.group.G.dependencies]; made when missing\n"
		"  --optional EXTRA   an optional dependency of EXTRA ([project.optional-\n"
		"                     dependencies], or Poetry's optional = true and [tool.poetry.extras])\n"
		"  --source NAME      Poetry: from this [[tool.poetry.source]] (an inline table\n"
		"                     { version = ..., source = NAME })\n"
		ADD_LOCK_HELP
		"\n"
		"The rest of the file stays byte for byte (comments, order, quoting, an array's\n"
		"layout); gpuenv remove of what add wrote gives the original file back. When a\n"
		"lock fails (no solution, an index error) pyproject.toml and the locks are put\n"
		"back as they were.\n"
		"exit status: 0 added, locked and synced, 1 no solution (the file put back) or the\n"
		"sync failed, 2 usage (an invalid requirement or constraint, an unknown source),\n"
		"4 pyproject.toml missing, unreadable, read-only or malformed (file:line:col;\n"
		"nothing written), a lock or the venv could not be made",
};

const struct cli_verb cli_verb_remove = {
	.name = "remove",
	.run = cli_remove,
	.summary = "remove dependencies from pyproject.toml (its format kept), lock and sync",
	.usage = "gpuenv remove NAME... [--group G] [--target T] [--no-lock] [--no-sync]\n"
		 "                   [--project DIR] [lock's options]",
	.help = "  NAME               a package name, any spelling (PEP 503)\n"
		"  --group G          from group G (a PEP 735 group left empty goes, and so does\n"
		"                     a Poetry group's table); default: the main dependencies and\n"
		"                     their extras\n" ADD_LOCK_HELP
		"\n"
		"Only the lines of what is removed go; the comments of the others stay.\n"
		"exit status: 0 removed, locked and synced, 1 no solution (the file put back) or\n"
		"the sync failed, 2 usage (not a dependency, no such group), 4 pyproject.toml\n"
		"missing, unreadable, read-only or malformed, a lock or the venv could not be made",
};
