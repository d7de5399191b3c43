/* gpuenv export's formats, shared by cli/export.c (requirements,
 * constraints) and cli/export_docker.c (dockerfile, compose). */
#ifndef GPUENV_CLI_EXPORT_H
#define GPUENV_CLI_EXPORT_H

#include "cli.h"
#include "gpuenv/pylock.h"
#include "lock_util.h"

/* The lock as pip requirements (constraints: the pins alone; hashes: a
 * --hash for every file) appended to o.  0, or an error recorded in ctx. */
int cli_export_requirements(struct cli *cli, gpuenv_arena_t *a, const gpuenv_lock_t *lk,
	const char *lock_path, bool constraints, bool hashes, gpuenv_buf_t *o);

struct cli_export_docker {
	const struct cli_verb *verb;
	struct cli_project *pj;
	const gpuenv_manifest_target_t *t; /* dockerfile: the target */
	const gpuenv_lock_t *lk;	   /* dockerfile: its lock */
	const char *lock_path;		   /* dockerfile: the lock's path */
	const char *base;		   /* --base IMAGE, or NULL: the rule chooses */
	bool trust_base;		   /* --trust-base */
	const char *image_manifest;	   /* --image-manifest FILE, or NULL: the
					      project's image-manifest.json if any */
	const char *out;		   /* -o FILE, or NULL: standard output */
};

/* --format dockerfile: the Dockerfile of o->t, with its requirements file
 * and .dockerignore beside -o (docs/export.md).  The exit status. */
int cli_export_dockerfile(struct cli *cli, const struct cli_export_docker *o);
/* --format compose: docker-compose.yml, one service per target.  The exit
 * status. */
int cli_export_compose(struct cli *cli, const struct cli_export_docker *o);

#endif
