/* What the verbs that edit pyproject.toml share (add, remove, source;
 * cli/edit_util.c): the file found, read, checked writable and opened in
 * the format-preserving editor; the edited text checked as a manifest and
 * written atomically with the file's mode; the original put back. */
#ifndef GPUENV_CLI_EDIT_UTIL_H
#define GPUENV_CLI_EDIT_UTIL_H

#include "cli.h"
#include "gpuenv/toml_edit.h"

struct cli_pyproject {
	char *path;	    /* PROJECT/pyproject.toml (malloc'd) */
	gpuenv_buf_t orig;  /* its bytes as read */
	unsigned mode;	    /* its permission bits */
	gpuenv_toml_edit_t ed;
};

/* Find (project: a folder or the file; NULL: "."), read and open
 * pyproject.toml: 0, or an exit status (reported: 4 when it is missing,
 * unreadable, read-only or does not parse, with file:line:col). */
int cli_pyproject_open(struct cli *cli, const char *verb, const char *project, struct cli_pyproject *pp);
/* The editor's text checked as a manifest and written over the file
 * (atomically; the original's mode).  0 or an exit status (reported). */
int cli_pyproject_write(struct cli *cli, const char *verb, struct cli_pyproject *pp);
/* The original bytes written back (after a failed lock).  0 or 4. */
int cli_pyproject_restore(struct cli *cli, const char *verb, struct cli_pyproject *pp);
void cli_pyproject_close(struct cli_pyproject *pp);
/* An editor error as the exit status it earns: 2 for what the command line
 * said (an invalid requirement, an unknown group or source), 4 otherwise. */
int cli_pyproject_edit_error(struct cli *cli, int code);

#endif
