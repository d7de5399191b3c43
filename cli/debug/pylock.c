/* debug subcommand: pylock.  Read a PEP 751 lock with gpuenv's strict
 * reader and write it back with gpuenv's writer (or as JSON), checking on
 * the way that what was written reads back to the same lock. */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "gpuenv/pylock.h"

static int set_str(json_t *o, const char *key, const char *s)
{
	return s ? json_object_set_new(o, key, json_string(s)) : 0;
}

static json_t *strs(size_t n, const char *const *items)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(items[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *file_json(const gpuenv_lock_file_t *f)
{
	json_t *o = json_object(), *h = json_object();
	int r = !o || !h;

	r = r || set_str(o, "name", f->name) || set_str(o, "url", f->url) ||
		set_str(o, "path", f->path) || set_str(o, "upload-time", f->upload_time);
	if (!r && f->size >= 0)
		r = json_object_set_new(o, "size", json_integer(f->size));
	r = r || set_str(h, "sha256", f->sha256);
	for (size_t i = 0; !r && i < f->nother_hashes; i++) {
		const char *eq = strchr(f->other_hashes[i], '=');
		char algo[40];
		snprintf(algo, sizeof(algo), "%.*s", (int)(eq - f->other_hashes[i]), f->other_hashes[i]);
		r = json_object_set_new(h, algo, json_string(eq + 1));
	}
	if (!r) {
		r = json_object_set_new(o, "hashes", h);
		h = NULL;
	}
	json_decref(h);
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *package_json(const gpuenv_lock_package_t *p)
{
	json_t *o = json_object(), *deps = json_array(), *wheels = json_array();
	int r = !o || !deps || !wheels;

	r = r || set_str(o, "name", p->name) || set_str(o, "version", p->version) ||
		set_str(o, "marker", p->marker) || set_str(o, "requires-python", p->requires_python) ||
		set_str(o, "index", p->index);
	for (size_t i = 0; !r && i < p->ndeps; i++) {
		json_t *d = json_object();
		r = !d || set_str(d, "name", p->deps[i].name) || set_str(d, "version", p->deps[i].version) ||
			json_array_append_new(deps, d);
	}
	for (size_t i = 0; !r && i < p->nwheels; i++)
		r = json_array_append_new(wheels, file_json(&p->wheels[i]));
	r = r || json_object_set(o, "dependencies", deps) || json_object_set(o, "wheels", wheels);
	if (!r && p->sdist)
		r = json_object_set_new(o, "sdist", file_json(p->sdist));
	if (!r && p->archive)
		r = json_object_set_new(o, "archive", file_json(p->archive));
	if (!r && p->directory) {
		json_t *d = json_object();
		r = !d || set_str(d, "path", p->directory) ||
			json_object_set_new(d, "editable", json_boolean(p->editable)) ||
			json_object_set_new(o, "directory", d);
	}
	if (!r && p->vcs) {
		json_t *v = json_object();
		r = !v || set_str(v, "type", p->vcs->type) || set_str(v, "url", p->vcs->url) ||
			set_str(v, "path", p->vcs->path) ||
			set_str(v, "requested-revision", p->vcs->requested_revision) ||
			set_str(v, "commit-id", p->vcs->commit_id) || json_object_set_new(o, "vcs", v);
	}
	r = r || set_str(o, "subdirectory", p->subdirectory) || set_str(o, "reason", p->reason);
	json_decref(deps);
	json_decref(wheels);
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *lock_json(const gpuenv_lock_t *l)
{
	const gpuenv_lock_target_t *t = &l->target;
	json_t *o = json_object(), *pk = json_array(), *tg = json_object();
	int r = !o || !pk || !tg;

	r = r || set_str(o, "lock-version", l->lock_version) ||
		json_object_set_new(o, "environments", strs(l->nenvironments, l->environments)) ||
		set_str(o, "requires-python", l->requires_python) ||
		json_object_set_new(o, "extras", strs(l->nextras, l->extras)) ||
		json_object_set_new(o, "dependency-groups", strs(l->ngroups, l->dependency_groups)) ||
		json_object_set_new(o, "default-groups", strs(l->ndefault_groups, l->default_groups)) ||
		set_str(o, "created-by", l->created_by);
	for (size_t i = 0; !r && i < l->npackages; i++)
		r = json_array_append_new(pk, package_json(&l->packages[i]));
	r = r || json_object_set(o, "packages", pk);
	r = r || set_str(tg, "target", t->name) || set_str(tg, "origin", t->origin) ||
		set_str(tg, "gpu", t->gpu) || set_str(tg, "compute-capability", t->compute_capability) ||
		set_str(tg, "driver", t->driver) || set_str(tg, "cuda", t->cuda) ||
		set_str(tg, "python", t->python) || set_str(tg, "platform", t->platform) ||
		set_str(tg, "backend", t->backend) || set_str(tg, "backend-reason", t->backend_reason) ||
		(t->ngroups && json_object_set_new(tg, "groups", strs(t->ngroups, t->groups))) ||
		(t->nextras && json_object_set_new(tg, "extras", strs(t->nextras, t->extras))) ||
		set_str(tg, "inputs-hash", t->inputs_hash) || set_str(tg, "kb-date", t->kb_date);
	r = r || json_object_set(o, "target", tg);
	json_decref(pk);
	json_decref(tg);
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int cli_debug_pylock(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	gpuenv_buf_t in, out;
	gpuenv_arena_t a;
	gpuenv_lock_t lock, again;
	const char *path;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", NULL, &st)) != -1)
		if (c == CLI_OPT_EXIT)
			return st;
	if (optind + 1 != argc)
		return cli_usage_error(cli, verb, "%s: give one FILE (\"-\" for stdin)", verb->name);
	path = argv[optind];

	gpuenv_buf_init(&in, &cli->ctx, GPUENV_PYLOCK_MAX_SIZE);
	if ((st = cli_read_input(cli, path, GPUENV_PYLOCK_MAX_SIZE, &in))) {
		gpuenv_buf_free(&in);
		return st;
	}
	gpuenv_arena_init(&a, &cli->ctx, 0);
	gpuenv_buf_init(&out, &cli->ctx, 0);
	st = CLI_EXIT_OK;
	if (gpuenv_pylock_parse(&cli->ctx, &a, strcmp(path, "-") ? path : "<stdin>",
		    gpuenv_str_n(in.data ? in.data : "", in.len), &lock)) {
		st = cli_report(cli, cli->ctx.err.code == -ENOMEM ? CLI_EXIT_CANNOT : CLI_EXIT_FAIL);
	} else if (gpuenv_pylock_write(&cli->ctx, &lock, &out)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
	} else if (gpuenv_pylock_parse(&cli->ctx, &a, "<written>", gpuenv_str_n(out.data, out.len),
			   &again)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
	} else if (!gpuenv_pylock_eq(&lock, &again)) {
		st = cli_error(cli, CLI_EXIT_CANNOT,
			"%s: %s: the written lock reads back different (a gpuenv bug)", verb->name, path);
	} else if (cli->json) {
		json_t *j = lock_json(&lock);
		st = j ? cli_print_json(cli, j) : cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
	} else if (fwrite(out.data, 1, out.len, stdout) != out.len) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: write error", verb->name);
	}
	gpuenv_buf_free(&out);
	gpuenv_arena_free(&a);
	gpuenv_buf_free(&in);
	return st;
}

const struct cli_verb cli_verb_debug_pylock = {
	.name = "pylock",
	.run = cli_debug_pylock,
	.summary = "read a PEP 751 lock strictly and write it back as gpuenv writes locks (or as JSON)",
	.usage = "gpuenv debug pylock [--json] FILE (\"-\": stdin)",
	.help = "  exit 1 when the lock is not a valid PEP 751 lock (file:line:col: what is wrong);\n"
		"  the output reads back to the same lock (checked before it is printed)\n",
};
