/* Stable locks (include/gpuenv/project.h, docs/lock.md "Stable locks"):
 * the versions a target's existing lock holds, given to the resolver as
 * preferences unless an upgrade was asked for; whether the target's
 * hardware changed since that lock (then its torch family is chosen
 * afresh); and what changed between the old lock and the new one. */
#include "gpuenv/project.h"

#include <stdio.h>
#include <string.h>

/* The upgrade asked for name: its index in up, or -1. */
static long upgrade_find(const gpuenv_upgrade_t *up, const char *name)
{
	for (size_t i = 0; up && i < up->n; i++)
		if (!strcmp(up->names[i], name))
			return (long)i;
	return -1;
}

bool gpuenv_upgrade_has(const gpuenv_upgrade_t *up, const char *name)
{
	return up && (up->all || upgrade_find(up, name) >= 0);
}

/* a and b the same text (both NULL counts as the same). */
static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

const char *gpuenv_project_target_change(gpuenv_arena_t *arena, const gpuenv_lock_target_t *old,
	const gpuenv_manifest_target_t *t)
{
	const gpuenv_target_t *x = &t->target;
	const char *gpu = x->ngpus ? x->gpus[0].name : "none";
	char cc[16] = "";
	const char *what = NULL, *from = NULL, *to = NULL;

	if (!old || !old->gpu)
		return NULL; /* no lock, or not gpuenv's: nothing to compare */
	if (x->ngpus && x->gpus[0].cc_major >= 0)
		snprintf(cc, sizeof(cc), "%d.%d", x->gpus[0].cc_major, x->gpus[0].cc_minor);
	if (!same(old->gpu, gpu))
		what = "GPU", from = old->gpu, to = gpu;
	else if (x->ngpus && old->compute_capability && cc[0] && strcmp(old->compute_capability, cc))
		what = "compute capability", from = old->compute_capability, to = cc;
	else if (!same(old->driver, x->driver))
		what = "driver", from = old->driver, to = x->driver;
	if (!what)
		return NULL;
	const char *s = gpuenv_arena_printf(arena, "%s %s -> %s", what, from ? from : "none", to ? to : "none").ptr;
	return s ? s : "the target changed";
}

int gpuenv_project_preferences(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_lock_t *old,
	const gpuenv_upgrade_t *up, bool hw_changed, gpuenv_preference_t **out, size_t *n)
{
	size_t nold = old ? old->npackages : 0, nup = up ? up->n : 0, k = 0;
	gpuenv_preference_t *p = gpuenv_arena_calloc(arena, nold + nup + 1, sizeof(*p));

	*out = NULL;
	*n = 0;
	if (!p)
		return gpuenv_oom(ctx, "for the lock's preferences");
	/* the upgrades asked for: decided first, at the version named or the
	 * newest the requirements allow */
	for (size_t i = 0; i < nup; i++)
		p[k++] = (gpuenv_preference_t){ .name = up->names[i], .version = up->versions[i], .early = true };
	for (size_t i = 0; i < nold && !(up && up->all); i++) {
		const gpuenv_lock_package_t *lp = &old->packages[i];
		if (!lp->version || lp->directory || upgrade_find(up, lp->name) >= 0)
			continue;
		/* a target whose GPU or driver changed gets its torch build
		 * chosen afresh: the torch family's versions are not kept */
		if (hw_changed && gpuenv_project_torch_routed(lp->name))
			continue;
		/* a name locked twice (markers): the first version */
		if (k && !strcmp(p[k - 1].name, lp->name))
			continue;
		p[k++] = (gpuenv_preference_t){ .name = lp->name, .version = lp->version };
	}
	*out = p;
	*n = k;
	return 0;
}

/* The locked packages that count for the diff: named and not the project
 * itself (a directory entry). */
static bool diffed(const gpuenv_lock_package_t *p)
{
	return p->name && !p->directory;
}

int gpuenv_project_lock_diff(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_lock_t *old,
	const gpuenv_lock_t *now, gpuenv_lock_change_t **out, size_t *n)
{
	size_t na = old ? old->npackages : 0, nb = now ? now->npackages : 0, i = 0, j = 0, k = 0;
	gpuenv_lock_change_t *c = gpuenv_arena_calloc(arena, na + nb + 1, sizeof(*c));

	*out = NULL;
	*n = 0;
	if (!c)
		return gpuenv_oom(ctx, "for the lock's changes");
	/* both sorted by name (the lock's order) */
	while (i < na || j < nb) {
		const gpuenv_lock_package_t *a = i < na ? &old->packages[i] : NULL;
		const gpuenv_lock_package_t *b = j < nb ? &now->packages[j] : NULL;
		if (a && !diffed(a)) {
			i++;
			continue;
		}
		if (b && !diffed(b)) {
			j++;
			continue;
		}
		int r = !a ? 1 : !b ? -1 : strcmp(a->name, b->name);
		if (r < 0) {
			c[k++] = (gpuenv_lock_change_t){ .name = a->name, .from = a->version ? a->version : "" };
			i++;
		} else if (r > 0) {
			c[k++] = (gpuenv_lock_change_t){ .name = b->name, .to = b->version ? b->version : "" };
			j++;
		} else {
			if (!same(a->version, b->version))
				c[k++] = (gpuenv_lock_change_t){ .name = a->name, .from = a->version ? a->version : "",
					.to = b->version ? b->version : "" };
			/* the other entries of a name locked more than once */
			for (i++; i < na && !strcmp(old->packages[i].name, a->name); i++)
				;
			for (j++; j < nb && !strcmp(now->packages[j].name, b->name); j++)
				;
		}
	}
	*out = c;
	*n = k;
	return 0;
}
