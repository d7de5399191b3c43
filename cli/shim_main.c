/* gpuenv-shim: the build's tool shim as a small executable of its own
 * (cli/shim.c): only libc is loaded, so a compiler call costs a fork and an
 * exec more, not the start of the whole gpuenv binary (docs/profile.md,
 * "Tool calls").  gpuenv_shim_setup links cc, gcc, nvcc... to it. */
#include "cli.h"

int main(int argc, char **argv)
{
	return cli_shim_main(argc, argv);
}
