/* TensorRT engines in the CLI (cli/trt_engine.c): shared with preflight. */
#ifndef GPUENV_CLI_TRT_ENGINE_H
#define GPUENV_CLI_TRT_ENGINE_H

#include "cli.h"

/* `preflight --engine ENGINE` and `trt check ENGINE...`: each engine's
 * record judged on this node (or the one facts_path describes); kb_dir
 * replaces built-in KB files.  --json: one object, or an array for several.
 * The exit status: 0 go, 1 no-go (any), 4 no record or a record or facts
 * that cannot be read. */
int cli_trt_engine_check(struct cli *cli, const struct cli_verb *verb, const char *const *engines,
	size_t nengines, const char *facts_path, const char *kb_dir);

#endif
