/* Is a target's lock fresh: there, readable, and made from the inputs the
 * manifest and the target give now ([tool.gpuenv] inputs-hash; lock
 * --check, sync, export). */
#include "gpuenv/project.h"

#include <errno.h>
#include <string.h>

const char *gpuenv_lock_state_name(int state)
{
	static const char *const names[] = { "fresh", "stale", "missing", "unreadable" };
	return state >= 0 && state < 4 ? names[state] : "unreadable";
}

/* ctx->err as one line with its hint, in arena. */
static const char *err_line(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena)
{
	char buf[1024];
	gpuenv_error_format(&ctx->err, buf, sizeof(buf));
	if (ctx->err.hint[0])
		return gpuenv_arena_printf(arena, "%s; %s", buf, ctx->err.hint).ptr;
	return gpuenv_arena_strndup(arena, buf, strlen(buf));
}

int gpuenv_project_lock_state(gpuenv_project_t *pj, const gpuenv_manifest_target_t *t, const char *path,
	gpuenv_lock_t *lkp, const char **detail)
{
	gpuenv_ctx_t *ctx = pj->ctx;
	gpuenv_lock_t lk;

	*detail = NULL;
	if (lkp && lkp->lock_version) {
		lk = *lkp; /* read already */
	} else if (gpuenv_project_read_lock(ctx, &pj->arena, path, &lk) != 0) {
		if (ctx->err.code == -ENOMEM)
			return -ENOMEM;
		int st = ctx->err.code == -ENOENT ? GPUENV_LOCK_MISSING : GPUENV_LOCK_UNREADABLE;
		if (!(*detail = err_line(ctx, &pj->arena)))
			return gpuenv_oom(ctx, "for the lock's state");
		gpuenv_error_clear(ctx);
		if (lkp)
			memset(lkp, 0, sizeof(*lkp));
		return st;
	}
	if (lkp)
		*lkp = lk;
	const char *want = gpuenv_project_inputs_hash(&pj->arena, &pj->m, t);
	if (!want)
		return gpuenv_oom(ctx, "for the lock's inputs hash");
	if (lk.target.inputs_hash && !strcmp(lk.target.inputs_hash, want))
		return GPUENV_LOCK_FRESH;
	*detail = "the manifest or the target changed since the lock was written";
	return GPUENV_LOCK_STALE;
}
