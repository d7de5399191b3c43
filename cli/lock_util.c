/* The project verbs' shared opening (cli/lock_util.h). */
#include "lock_util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/facts.h"
#include "gpuenv/fs.h"
#include "gpuenv/trace.h"

/* The machine itself as the one target of a project that declares none. */
static int project_probed_target(struct cli *cli, const char *verb, const char *facts_path,
	struct cli_project *pj)
{
	const gpuenv_facts_t *facts = NULL;
	gpuenv_manifest_target_t *t;
	int st;

	if ((st = cli_facts_load(cli, verb, facts_path, NULL, &pj->arena, &facts)) != 0)
		return st;
	if (!(t = gpuenv_arena_calloc(&pj->arena, 1, sizeof(*t))))
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (gpuenv_target_from_facts(&cli->ctx, &pj->arena, facts, SIZE_MAX, &t->target) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	/* the wheel platform it supports, as a declared target would say it */
	if (t->target.libc && !strcmp(t->target.libc, "glibc") && t->target.libc_version) {
		unsigned a, b;
		if (sscanf(t->target.libc_version, "%u.%u", &a, &b) == 2)
			t->platform = gpuenv_arena_printf(&pj->arena, "manylinux_%u_%u_%s", a, b,
				t->target.machine ? t->target.machine : "x86_64").ptr;
	}
	if (!t->platform && t->target.machine)
		t->platform = gpuenv_arena_printf(&pj->arena, "linux_%s", t->target.machine).ptr;
	t->name = "auto";
	t->target.name = "auto";
	t->torch_backend = pj->m.torch_backend ? pj->m.torch_backend : "auto";
	if (!t->target.python || !t->target.machine)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s declares no [tool.gpuenv.targets] and the probe "
			"found no Python environment on this machine to lock for; declare a target (python, "
			"platform, gpu, driver) or run inside a virtual environment", verb, pj->path);
	pj->targets = t;
	pj->ntargets = 1;
	return 0;
}

int cli_project_open(struct cli *cli, const char *verb, const char *project, const char *facts_path,
	const char *kb_dir, const char *torch_index, struct cli_project *pj)
{
	return cli_project_open_ex(cli, verb, project, facts_path, kb_dir, torch_index, 0, pj);
}

int cli_project_open_ex(struct cli *cli, const char *verb, const char *project, const char *facts_path,
	const char *kb_dir, const char *torch_index, unsigned flags, struct cli_project *pj)
{
	struct stat sb;
	int st;

	memset(pj, 0, sizeof(*pj));
	gpuenv_arena_init(&pj->arena, &cli->ctx, 0);
	if (!project)
		project = ".";
	if (stat(project, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		pj->dir = project;
		pj->path = gpuenv_arena_printf(&pj->arena, "%s/pyproject.toml", project).ptr;
	} else {
		const char *slash = strrchr(project, '/');
		pj->path = project;
		pj->dir = slash ? gpuenv_arena_strndup(&pj->arena, project, (size_t)(slash - project)) : ".";
		if (slash == project)
			pj->dir = "/";
	}
	if (!pj->path || !pj->dir)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (gpuenv_kb_load(&cli->ctx, kb_dir, &pj->kb) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (gpuenv_manifest_load(&cli->ctx, &pj->arena, pj->path, pj->kb, &pj->m) != 0) {
		if (cli->ctx.err.code == -ENOENT)
			gpuenv_hint(&cli->ctx, "run in the project's directory or give --project DIR");
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	if (torch_index)
		pj->m.torch_index = torch_index;
	if (pj->m.ntargets) {
		pj->targets = pj->m.targets;
		pj->ntargets = pj->m.ntargets;
		return 0;
	}
	if (flags & CLI_PROJECT_DECLARED)
		return 0;
	if ((st = project_probed_target(cli, verb, facts_path, pj)) != 0)
		return st;
	(void)st;
	return 0;
}

void cli_project_close(struct cli_project *pj)
{
	gpuenv_kb_free(pj->kb);
	pj->kb = NULL;
	gpuenv_arena_free(&pj->arena);
}

int cli_profile_start(struct cli *cli, const char *verb, const char *path)
{
	char cmd[64];

	if (!path)
		return 0;
	snprintf(cmd, sizeof(cmd), "gpuenv %s", verb);
	if (gpuenv_trace_new(&cli->ctx, cmd, &cli->ctx.trace) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return 0;
}

int cli_profile_finish(struct cli *cli, const char *path, int st)
{
	gpuenv_trace_t *t = cli->ctx.trace;

	if (!t)
		return st;
	cli->ctx.trace = NULL;
	/* a failed run's trace is written too: it shows where the time went */
	gpuenv_error_t saved = cli->ctx.err;
	gpuenv_error_clear(&cli->ctx);
	if (gpuenv_trace_write(&cli->ctx, t, path) != 0) {
		cli_report(cli, CLI_EXIT_CANNOT);
		st = CLI_EXIT_CANNOT;
	}
	gpuenv_trace_free(&cli->ctx, t);
	cli->ctx.err = saved;
	return st;
}

const char *cli_err_text(struct cli *cli, gpuenv_arena_t *arena, bool with_hint)
{
	char buf[1024];
	const char *s;
	gpuenv_error_format(&cli->ctx.err, buf, sizeof(buf));
	if (with_hint && cli->ctx.err.hint[0])
		s = gpuenv_arena_printf(arena, "%s; %s", buf, cli->ctx.err.hint).ptr;
	else
		s = gpuenv_arena_strndup(arena, buf, strlen(buf));
	return s ? s : "out of memory";
}

const gpuenv_manifest_target_t *cli_project_target(struct cli *cli, const struct cli_verb *verb,
	const struct cli_project *pj, const char *name, int *st)
{
	const char *names[256];
	size_t n = pj->ntargets < 256 ? pj->ntargets : 256;

	for (size_t i = 0; i < pj->ntargets; i++)
		if (!strcmp(pj->targets[i].name, name))
			return &pj->targets[i];
	for (size_t i = 0; i < n; i++)
		names[i] = pj->targets[i].name;
	const char *s = cli_suggest(name, names, n);
	*st = cli_usage_error(cli, verb, "%s: --target: the project declares no target '%s'%s%s%s", verb->name,
		name, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
	return NULL;
}

int cli_lock_read(struct cli *cli, gpuenv_arena_t *arena, const char *path, gpuenv_lock_t *lk)
{
	gpuenv_buf_t b;
	int r;
	gpuenv_buf_init(&b, &cli->ctx, GPUENV_PYLOCK_MAX_SIZE);
	if ((r = gpuenv_fs_read(&cli->ctx, path, GPUENV_PYLOCK_MAX_SIZE, &b)) == 0)
		r = gpuenv_pylock_parse(&cli->ctx, arena, path, (gpuenv_str_t){ b.data, b.len }, lk);
	gpuenv_buf_free(&b); /* the lock's strings live in the arena */
	return r;
}
