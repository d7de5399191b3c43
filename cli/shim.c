/* gpuenv as a build's tool shim: run under the name of a compiler (cc, gcc,
 * nvcc, ld... symlinks made by gpuenv_shim_setup), it runs the real
 * tool and records the call (gpuenv/trace.h, docs/profile.md "Tool calls"). */
#include "cli.h"

#include "gpuenv/shim.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int cli_shim_main(int argc, char **argv)
{
	gpuenv_ctx_t ctx;
	char msg[1024];
	int status, signo;

	gpuenv_ctx_init(&ctx);
	if (gpuenv_shim_run(&ctx, argc, argv, environ, &status, &signo) != 0) {
		gpuenv_error_format(&ctx.err, msg, sizeof(msg));
		fprintf(stderr, "gpuenv shim: %s\n", msg);
		if (ctx.err.hint[0])
			fprintf(stderr, "hint: %s\n", ctx.err.hint);
		/* the tool ran: its status stands; else "command not found" */
		if (ctx.err.code == GPUENV_ENOTFOUND)
			return 127;
		if (status == 127 && !signo)
			return 126;
	}
	if (signo) { /* die the way the tool died, so make and ninja see it */
		signal(signo, SIG_DFL);
		raise(signo);
	}
	return status;
}
