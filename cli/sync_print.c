/* How a sync's plan and outcome are shown (cli/sync.c, cli/run.c): the
 * progress of the cache's phases, the plan as lines or JSON, the summary
 * line and the JSON object of `sync --json`. */
#include "sync_print.h"

#include <stdio.h>
#include <string.h>

void cli_sync_progress(void *arg, const char *phase, size_t done, size_t n, uint64_t bytes, uint64_t total)
{
	struct cli_sync_progress *ps = arg;
	if (ps->tty) {
		int width = 24, fill = n ? (int)((double)done / (double)n * width) : width;
		fprintf(stderr, "\r\033[K  %-9s [%.*s%*s] %zu/%zu", phase, fill, "########################",
			width - fill, "", done, n);
		if (total)
			fprintf(stderr, "  %.1f/%.1f MB", (double)bytes / 1e6, (double)total / 1e6);
		else if (bytes)
			fprintf(stderr, "  %.1f MB", (double)bytes / 1e6);
		if (done == n)
			fprintf(stderr, "\r\033[K");
		fflush(stderr);
		return;
	}
	/* plain lines: one per phase, when it ends */
	if (done == n && n && (ps->last_phase != phase || ps->last_done != done)) {
		if (bytes)
			fprintf(stderr, "%s: %zu of %zu (%.1f MB)\n", phase, done, n, (double)bytes / 1e6);
		else
			fprintf(stderr, "%s: %zu of %zu\n", phase, done, n);
		ps->last_phase = phase;
		ps->last_done = done;
	}
}

/* ---- the whole sync ---------------------------------------------------- */

json_t *cli_sync_plan_json(const gpuenv_sync_plan_t *pl)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		const char *src = !a->source ? NULL : a->source->editable ? "editable" : a->source->directory ? "directory"
														   : "sdist";
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?}", "name", a->name, "action",
			gpuenv_sync_op_name(a->op), "installed", a->old_version, "locked", a->new_version, "file",
			a->file ? a->file->name : NULL, "build", src, "build_key", a->build_key));
	}
	return arr;
}

void cli_sync_print_plan(const gpuenv_sync_plan_t *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		const gpuenv_sync_action_t *a = &pl->actions[i];
		const char *nv = a->new_version ? a->new_version : "(its source tree's version)";
		const char *how = !a->source ? "" : a->source->editable ? " (editable build)" : " (source build)";
		switch (a->op) {
		case GPUENV_SYNC_INSTALL: printf("  + %s %s%s\n", a->name, nv, how); break;
		case GPUENV_SYNC_UPGRADE: printf("  ~ %s %s -> %s%s\n", a->name, a->old_version, nv, how); break;
		case GPUENV_SYNC_REINSTALL: printf("  = %s %s (reinstall)%s\n", a->name, nv, how); break;
		case GPUENV_SYNC_REMOVE: printf("  - %s %s\n", a->name, a->old_version); break;
		default: break;
		}
	}
}

/* The builds of the sync, for --json. */
static json_t *sync_builds_json(const gpuenv_builder_t *b)
{
	const gpuenv_build_result_t *r;
	const gpuenv_build_req_t *q;
	size_t n = b ? gpuenv_builder_results(b, &r, &q) : 0;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s?, s:s, s:s, s:s, s:b, s:b, s:b, s:s?, s:f}", "name",
			q[i].name, "version", q[i].version, "source", q[i].directory ? "directory" : "sdist", "key",
			r[i].key, "wheel", r[i].wheel, "editable", q[i].editable, "cached", r[i].cached, "isolated",
			r[i].isolated, "log", r[i].log, "seconds", r[i].secs));
	return arr;
}

static const char *sync_plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* The plan's summary line (text output). */
void cli_sync_print_done(struct cli *cli, const struct cli_sync_opts *o, const gpuenv_sync_plan_t *pl,
	const gpuenv_sync_result_t *res, const gpuenv_builder_t *builder, const char *lock_path, const char *target,
	const char *root, double secs)
{
	FILE *f = o->quiet ? stderr : stdout;
	size_t nin = pl->count[GPUENV_SYNC_INSTALL], nup = pl->count[GPUENV_SYNC_UPGRADE] +
		pl->count[GPUENV_SYNC_REINSTALL], changes = nin + nup + pl->count[GPUENV_SYNC_REMOVE];
	size_t nlocked = pl->n - pl->count[GPUENV_SYNC_REMOVE];

	if (o->quiet && !changes)
		return;
	if (!changes) {
		fprintf(f, "%zu package%s already match %s (target %s) in %.3f s\n", nlocked, sync_plural(nlocked),
			strrchr(lock_path, '/') ? strrchr(lock_path, '/') + 1 : lock_path, target, secs);
		return;
	}
	if (cli->verbose > 0)
		cli_sync_print_plan(pl);
	fprintf(f, "installed %zu package%s", nin + nup, sync_plural(nin + nup));
	if (nup)
		fprintf(f, " (%zu upgraded)", nup);
	if (pl->count[GPUENV_SYNC_REMOVE])
		fprintf(f, ", removed %zu", pl->count[GPUENV_SYNC_REMOVE]);
	fprintf(f, " in %.2f s", secs);
	if (res->downloaded)
		fprintf(f, "; %zu downloaded", res->downloaded);
	if (res->built) {
		const gpuenv_build_result_t *br;
		size_t nb = gpuenv_builder_results(builder, &br, NULL), nc = 0;
		for (size_t i = 0; i < nb; i++)
			nc += br[i].cached;
		fprintf(f, "; %zu built from source", res->built);
		if (nc)
			fprintf(f, " (%zu from the build cache)", nc);
	}
	fprintf(f, " (target %s, %s)\n", target, root);
}

json_t *cli_sync_json(const struct cli_sync_opts *o, const gpuenv_sync_plan_t *pl, const gpuenv_sync_result_t *res,
	const gpuenv_builder_t *builder, const char *lock_path, const char *target, const char *root, double secs)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s?, s:o, s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I}, s:s, s:f}",
		"target", target, "lock", lock_path, "venv", root, "foreign_hardware", o->foreign,
		"plan", cli_sync_plan_json(pl), "counts", "install", (json_int_t)pl->count[GPUENV_SYNC_INSTALL], "upgrade",
		(json_int_t)(pl->count[GPUENV_SYNC_UPGRADE] + pl->count[GPUENV_SYNC_REINSTALL]), "remove",
		(json_int_t)pl->count[GPUENV_SYNC_REMOVE], "keep", (json_int_t)pl->count[GPUENV_SYNC_KEEP],
		"cache", "downloaded", (json_int_t)res->downloaded, "unpacked", (json_int_t)res->unpacked,
		"repaired", (json_int_t)res->repaired, "files", (json_int_t)res->files, "link_mode",
		gpuenv_link_mode_name(res->link_mode_used), "seconds", secs);
	if (j)
		json_object_set_new(j, "phases", json_pack("{s:f, s:f, s:f, s:f}", "build", res->secs_build, "cache",
			res->secs_cache, "stage", res->secs_stage, "commit", res->secs_commit));
	if (j)
		json_object_set_new(j, "builds", sync_builds_json(builder));
	return j;
}

