/* stack.c: the software-stack probe put together: toolkits, ld.so.cache,
 * Python environments, library copies (the orchestrator on top of the
 * backends ldcache.c, loader.c, toolkit.c, pyenv.c, libs.c). */
#include "gpuenv/stack.h"
#include "stack_int.h"

#include <errno.h>
#include <string.h>

#include "gpuenv/fs.h"
#include "gpuenv/trace.h"

/* ---- the whole stack --------------------------------------------------- */

int gpuenv_stack_probe(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_stack_opts_t *opts,
	gpuenv_stack_t *out)
{
	static const gpuenv_stack_opts_t defaults;
	struct stack_warn w = { .arena = arena };
	struct stack_elfcache elfs = { .arena = arena };
	gpuenv_loader_opts_t lopts;
	gpuenv_pyenv_opts_t popts;
	const char *llp;
	uint64_t t0;
	int r;

	if (!opts)
		opts = &defaults;
	memset(out, 0, sizeof(*out));
	if ((r = gpuenv_fs_check_root(ctx)) != 0)
		return r;
	llp = gpuenv_ctx_getenv(ctx, "LD_LIBRARY_PATH");
	if (llp)
		out->ld_library_path = stack_strdup(arena, llp, strlen(llp));

	t0 = gpuenv_trace_begin(ctx);
	r = stack_toolkit_probe(ctx, arena, &w, &out->ntoolkits, &out->toolkits);
	gpuenv_trace_end(ctx, "probe", "toolkits", NULL, NULL, t0);
	if (r)
		return r;

	t0 = gpuenv_trace_begin(ctx);
	r = gpuenv_ldcache_load(ctx, arena, opts->ldcache, &out->ldcache);
	gpuenv_trace_end(ctx, "probe", "ld.so.cache", NULL, NULL, t0);
	/* a cache the caller named that cannot be read is an error (ctx->err
	 * has the file and what is wrong); the system's own is a warning */
	if (r == -ENOMEM || (r && opts->ldcache))
		return r;
	out->have_ldcache = r == 0;
	if (r) {
		char msg[1200];
		gpuenv_error_format(&ctx->err, msg, sizeof(msg));
		stack_warn(ctx, &w, "%s", msg);
		gpuenv_error_clear(ctx);
	}

	memset(&lopts, 0, sizeof(lopts));
	lopts.cache = out->have_ldcache ? &out->ldcache : NULL;
	lopts.hwcaps = opts->hwcaps;
	lopts.alternatives = opts->alternatives;
	memset(&popts, 0, sizeof(popts));
	popts.python = opts->python;
	popts.env_dir = opts->env_dir;
	popts.no_user_site = opts->no_user_site;
	popts.loader = opts->no_loader ? NULL : &lopts;
	t0 = gpuenv_trace_begin(ctx);
	r = stack_pyenv_probe(ctx, arena, &w, &elfs, &popts, &out->nenvs, &out->envs);
	gpuenv_trace_end(ctx, "probe", "environments", NULL, NULL, t0);
	if (r)
		return r;

	t0 = gpuenv_trace_begin(ctx);
	r = stack_libs_probe(ctx, arena, &w, &elfs, out->toolkits, out->ntoolkits,
		out->have_ldcache ? &out->ldcache : NULL, out->envs, out->nenvs, &out->nlibs, &out->libs);
	gpuenv_trace_end(ctx, "probe", "libraries", NULL, NULL, t0);
	if (r)
		return r;
	out->nwarnings = w.list.n;
	out->warnings = w.list.items;
	return 0;
}
