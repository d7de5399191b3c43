/* Allocation failures on demand in the test build (cli/alloc_inject.c). */
#ifndef GPUENV_CLI_ALLOC_INJECT_H
#define GPUENV_CLI_ALLOC_INJECT_H

#include "cli.h"

/* With GPUENV_TEST_ALLOC_FAIL=N in the environment of a sanitizer build:
 * the context's allocations fail from the Nth on.  Nothing otherwise. */
void cli_alloc_inject(struct cli *cli);

#endif
