/* The facts and knowledge-base loading the verbs share (doctor,
 * preflight, drift, labels, lock, sync, export and the source builds'
 * hardware): a snapshot read from --facts FILE, or this machine probed. */
#include "cli.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuenv/doctor.h"
#include "gpuenv/probe.h"

#ifndef GPUENV_VERSION
#define GPUENV_VERSION "0.0.0"
#endif

int cli_facts_load(struct cli *cli, const char *verb, const char *path, const char *env_dir,
	gpuenv_arena_t *arena, const gpuenv_facts_t **out)
{
	gpuenv_buf_t buf;
	int r;

	(void)verb;
	*out = NULL;
	if (!path) {
		gpuenv_probe_opts_t po;
		struct stat st;
		/* --env of a folder that is not there: say so, not "probe it" */
		if (env_dir && stat(env_dir, &st) != 0) {
			gpuenv_fail(&cli->ctx, -errno, env_dir, 0, 0, "--env: %s", strerror(errno));
			gpuenv_hint(&cli->ctx, "name the folder of a Python environment (the one holding "
					       "pyvenv.cfg or bin/python)");
			return cli_report(cli, CLI_EXIT_CANNOT);
		}
		gpuenv_probe_opts_init(&po);
		po.env_dir = env_dir; /* --env: probe that environment */
		po.version = GPUENV_VERSION;
		/* the typed facts straight from the probe: the struct a snapshot
		 * decodes into, without a JSON document in between */
		if (gpuenv_probe_facts(&cli->ctx, &po, arena, out) != 0)
			return cli_report(cli, CLI_EXIT_CANNOT);
		return 0;
	}
	gpuenv_buf_init(&buf, &cli->ctx, GPUENV_FACTS_MAX);
	if ((r = cli_read_input(cli, path, GPUENV_FACTS_MAX, &buf)) != 0) {
		gpuenv_buf_free(&buf);
		return CLI_EXIT_CANNOT;
	}
	{
		const char *name = strcmp(path, "-") ? path : "<stdin>";
		json_t *doc;
		r = gpuenv_facts_read_json(&cli->ctx, buf.data, buf.len, name, &doc);
		gpuenv_buf_free(&buf);
		if (r == 0) {
			r = gpuenv_facts_decode(&cli->ctx, arena, doc, name, out);
			cli_json_drop(doc);
		}
	}
	return r ? cli_report(cli, CLI_EXIT_CANNOT) : 0;
}

int cli_kb_load(struct cli *cli, const char *dir, gpuenv_kb_t **out)
{
	if (gpuenv_kb_load_files(&cli->ctx, dir, GPUENV_DOCTOR_KB_FILES, out) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return 0;
}
