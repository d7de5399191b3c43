/* pyproject.toml read, edited and written back for add, remove and source
 * (cli/edit_util.h). */
#include "edit_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/manifest.h"

int cli_pyproject_open(struct cli *cli, const char *verb, const char *project, struct cli_pyproject *pp)
{
	struct stat st;
	const char *p = project ? project : ".";
	size_t n = strlen(p);

	memset(pp, 0, sizeof(*pp));
	gpuenv_buf_init(&pp->orig, &cli->ctx, GPUENV_MANIFEST_MAX_SIZE);
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!(pp->path = malloc(n + sizeof("/pyproject.toml"))))
			return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb);
		memcpy(pp->path, p, n);
		strcpy(pp->path + n, n && p[n - 1] == '/' ? "pyproject.toml" : "/pyproject.toml");
	} else if (!(pp->path = strdup(p))) {
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb);
	}
	if (stat(pp->path, &st) != 0) {
		fprintf(stderr, "%s: %s: %s: %s\nhint: run gpuenv init to start a project, or name one with "
				"--project DIR\n", cli->prog, verb, pp->path, strerror(errno));
		return CLI_EXIT_CANNOT;
	}
	pp->mode = st.st_mode & 07777;
	/* the atomic write would replace a read-only file: refuse it first */
	if (access(pp->path, W_OK) != 0 || !(pp->mode & 0222))
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: read-only (%s); nothing changed", verb, pp->path,
			access(pp->path, W_OK) != 0 ? strerror(errno) : "no write permission bit");
	if (gpuenv_fs_read(&cli->ctx, pp->path, GPUENV_MANIFEST_MAX_SIZE, &pp->orig) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (gpuenv_toml_edit_open(&pp->ed, &cli->ctx, pp->path, pp->orig.data ? pp->orig.data : "", pp->orig.len) != 0) {
		gpuenv_hint(&cli->ctx, "fix the file first; gpuenv %s changed nothing", verb);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	return 0;
}

int cli_pyproject_write(struct cli *cli, const char *verb, struct cli_pyproject *pp)
{
	gpuenv_arena_t arena;
	gpuenv_manifest_t m;
	gpuenv_buf_t out;
	int st = 0;

	(void)verb;
	gpuenv_buf_init(&out, &cli->ctx, GPUENV_MANIFEST_MAX_SIZE);
	gpuenv_arena_init(&arena, &cli->ctx, 0);
	if (gpuenv_toml_edit_write(&pp->ed, &out) != 0 || gpuenv_buf_failed(&out) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
	} else if (gpuenv_manifest_parse(&cli->ctx, &arena, pp->path, out.data ? out.data : "", out.len, NULL, &m) != 0) {
		/* the edit made a manifest gpuenv cannot read: nothing written */
		gpuenv_hint(&cli->ctx, "%s left as it was", pp->path);
		st = cli_report(cli, CLI_EXIT_CANNOT);
	} else if (gpuenv_fs_write_buf(&cli->ctx, pp->path, &out, pp->mode, 0) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
	}
	gpuenv_arena_free(&arena);
	gpuenv_buf_free(&out);
	return st;
}

int cli_pyproject_restore(struct cli *cli, const char *verb, struct cli_pyproject *pp)
{
	if (gpuenv_fs_write_atomic(&cli->ctx, pp->path, pp->orig.data ? pp->orig.data : "", pp->orig.len,
		    pp->mode) != 0) {
		fprintf(stderr, "%s: %s: %s could not be put back as it was\n", cli->prog, verb, pp->path);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	return 0;
}

void cli_pyproject_close(struct cli_pyproject *pp)
{
	gpuenv_toml_edit_free(&pp->ed);
	gpuenv_buf_free(&pp->orig);
	free(pp->path);
	pp->path = NULL;
}

int cli_pyproject_edit_error(struct cli *cli, int code)
{
	switch (code) {
	case GPUENV_EREQ:
	case GPUENV_ESPEC:
	case GPUENV_EVERSION:
	case GPUENV_EMARKER:
	case GPUENV_ENOTFOUND:
	case GPUENV_EUSAGE:
	case GPUENV_EDUPLICATE:
		return cli_report(cli, CLI_EXIT_USAGE);
	default:
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
}
