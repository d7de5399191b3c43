/* The pod placement of a target (gpuenv/labels.h, docs/labels.md): what
 * gpuenv_target_fit asks of a machine, written as Kubernetes node selection
 * over gpuenv's target label and GFD's labels. */
#include "gpuenv/labels.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* kubernetes.io/arch is GOARCH (the kubelet sets it) */
static const char *goarch(const char *machine)
{
	static const struct {
		const char *uname, *go;
	} map[] = { { "x86_64", "amd64" }, { "aarch64", "arm64" }, { "ppc64le", "ppc64le" }, { "s390x", "s390x" },
		{ "riscv64", "riscv64" } };
	for (size_t i = 0; machine && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(machine, map[i].uname))
			return map[i].go;
	return NULL;
}

typedef struct sel_state {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	gpuenv_selector_t *out;
	int rc;
} sel_state_t;

static void req(sel_state_t *S, size_t term, const char *key, const char *op, long long v)
{
	gpuenv_selector_t *o = S->out;
	if (S->rc)
		return;
	if (term >= GPUENV_SELECTOR_MAX_TERMS || o->nreqs[term] >= GPUENV_SELECTOR_MAX_REQS) {
		S->rc = gpuenv_fail(S->ctx, GPUENV_ETOOBIG, NULL, 0, 0, "the selector has too many terms");
		return;
	}
	gpuenv_str_t t = gpuenv_arena_printf(S->arena, "%lld", v);
	if (!t.ptr) {
		S->rc = gpuenv_oom(S->ctx, "the selector");
		return;
	}
	o->terms[term][o->nreqs[term]++] = (gpuenv_selector_req_t){ key, op, t.ptr };
	if (term >= o->nterms)
		o->nterms = term + 1;
}

/* version >= floor over the integer labels keys[0..n): one term per part,
 * ORed: the parts before it equal (Gt p-1 and Lt p+1, integer comparisons,
 * so "04" and "4" are one number), this one greater (the last: at least) */
static void at_least(sel_state_t *S, const char *const *keys, const gpuenv_kb_ver_t *floor, size_t nkeys)
{
	size_t n = floor->n < nkeys ? floor->n : nkeys;
	while (n > 0 && floor->part[n - 1] == 0)
		n--; /* 525.0 is 525 */
	for (size_t t = 0; t < n; t++) {
		for (size_t i = 0; i < t; i++) {
			req(S, t, keys[i], "Gt", (long long)floor->part[i] - 1);
			req(S, t, keys[i], "Lt", (long long)floor->part[i] + 1);
		}
		req(S, t, keys[t], "Gt", (long long)floor->part[t] - (t + 1 == n ? 1 : 0));
	}
}

static void sel(sel_state_t *S, const char *key, const char *value)
{
	gpuenv_selector_t *o = S->out;
	if (S->rc)
		return;
	if (!value) {
		S->rc = gpuenv_oom(S->ctx, "the selector");
		return;
	}
	size_t i = o->nsel++;
	/* sorted by key */
	while (i > 0 && strcmp(o->sel[i - 1].key, key) > 0) {
		o->sel[i] = o->sel[i - 1];
		i--;
	}
	o->sel[i] = (gpuenv_label_t){ key, value };
}

static const char *const DRIVER_KEYS[] = { "nvidia.com/cuda.driver-version.major",
	"nvidia.com/cuda.driver-version.minor", "nvidia.com/cuda.driver-version.revision" };
static const char *const RUNTIME_KEYS[] = { "nvidia.com/cuda.runtime-version.major",
	"nvidia.com/cuda.runtime-version.minor" };

/* The driver range gpuenv_target_fit asks for: with a locked build, a
 * driver that runs its CUDA (the lowest by the KB's rules: the minor-version
 * compatibility floor of its major, else the GA minimum); without one, a
 * driver whose CUDA is at least the target's (cuda = "X.Y"), or at least
 * the target's driver (driver = "535.104.05"). */
static void driver_range(sel_state_t *S, const gpuenv_kb_t *kb, const gpuenv_target_t *w, const char *cuda_build)
{
	gpuenv_kb_ver_t cv, fl;
	if (cuda_build && gpuenv_kb_ver_parse(gpuenv_str(cuda_build), &cv) && cv.n >= 2) {
		const gpuenv_kb_minor_compat_t *mvc = kb ? gpuenv_kb_minor_compat(kb, cv.part[0]) : NULL;
		const gpuenv_kb_toolkit_t *ga = kb ? gpuenv_kb_toolkit(kb, &cv, 0) : NULL;
		if (mvc && mvc->driver_min.n) {
			at_least(S, DRIVER_KEYS, &mvc->driver_min, 3);
			S->out->driver_why = gpuenv_arena_printf(S->arena, "the locked torch build is for CUDA %s; "
				"drivers from %.*s run CUDA %u.x (minor-version compatibility, the knowledge base's "
				"cuda.toml)", cuda_build, (int)mvc->driver_min.str.len, mvc->driver_min.str.ptr,
				cv.part[0]).ptr;
		} else if (ga && ga->driver_linux.n) {
			at_least(S, DRIVER_KEYS, &ga->driver_linux, 3);
			S->out->driver_why = gpuenv_arena_printf(S->arena, "the locked torch build is for CUDA %s; "
				"its minimum Linux driver is %.*s (the knowledge base's cuda.toml)", cuda_build,
				(int)ga->driver_linux.str.len, ga->driver_linux.str.ptr).ptr;
		} else {
			at_least(S, RUNTIME_KEYS, &cv, 2);
			S->out->driver_why = gpuenv_arena_printf(S->arena, "the locked torch build is for CUDA %s, "
				"which the knowledge base does not know: drivers that report CUDA %s or newer", cuda_build,
				cuda_build).ptr;
		}
	} else if (w->driver_cuda && gpuenv_kb_ver_parse(gpuenv_str(w->driver_cuda), &cv)) {
		at_least(S, RUNTIME_KEYS, &cv, 2);
		S->out->driver_why = gpuenv_arena_printf(S->arena, "the target's driver runs CUDA %s (no lock): "
			"drivers that report CUDA %s or newer", w->driver_cuda, w->driver_cuda).ptr;
	} else if (w->driver && gpuenv_kb_ver_parse(gpuenv_str(w->driver), &fl)) {
		at_least(S, DRIVER_KEYS, &fl, 3);
		S->out->driver_why = gpuenv_arena_printf(S->arena, "the target's driver is %s (no lock): that "
			"driver or a newer one", w->driver).ptr;
	}
	if (!S->rc && S->out->nterms && !S->out->driver_why)
		S->rc = gpuenv_oom(S->ctx, "the selector");
}

int gpuenv_labels_selector(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb, const char *prefix,
	const char *name, const gpuenv_target_t *want, const char *cuda_build, gpuenv_selector_t *out)
{
	sel_state_t S = { .ctx = ctx, .arena = arena, .out = out };
	gpuenv_labels_t ls;
	memset(out, 0, sizeof(*out));
	gpuenv_labels_init(&ls, arena);
	const char *key = gpuenv_labels_target_key(&ls, prefix, name);
	if (!key) {
		if (ls.nwarnings)
			return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "%s", ls.warnings[0]);
		return -ENOMEM;
	}
	sel(&S, key, "true");
	const char *arch = goarch(want->machine);
	if (arch)
		sel(&S, "kubernetes.io/arch", arch);
	const gpuenv_target_gpu_t *g = NULL;
	for (size_t i = 0; i < want->ngpus && !g; i++)
		if (want->gpus[i].cc_major >= 0)
			g = &want->gpus[i];
	if (g) {
		sel(&S, "nvidia.com/gpu.compute.major", gpuenv_arena_printf(arena, "%d", g->cc_major).ptr);
		sel(&S, "nvidia.com/gpu.compute.minor", gpuenv_arena_printf(arena, "%d", g->cc_minor).ptr);
		driver_range(&S, kb, want, cuda_build);
	}
	return S.rc;
}

int gpuenv_selector_write_yaml(const gpuenv_selector_t *s, const char *name, gpuenv_buf_t *out)
{
	int r = gpuenv_buf_printf(out, "# gpuenv labels --selector --target %s: the pod spec fields that place "
		"target %s's pods only on nodes that run it\n", name, name);
	if (!r && s->driver_why)
		r = gpuenv_buf_printf(out, "# driver: %s\n", s->driver_why);
	if (!r)
		r = gpuenv_buf_puts(out, "nodeSelector:\n");
	for (size_t i = 0; !r && i < s->nsel; i++)
		r = gpuenv_buf_printf(out, "  %s: \"%s\"\n", s->sel[i].key, s->sel[i].value);
	if (!r && s->nterms)
		r = gpuenv_buf_puts(out, "affinity:\n"
					 "  nodeAffinity:\n"
					 "    requiredDuringSchedulingIgnoredDuringExecution:\n"
					 "      nodeSelectorTerms:\n");
	for (size_t t = 0; !r && t < s->nterms; t++) {
		r = gpuenv_buf_puts(out, "      - matchExpressions:\n");
		for (size_t i = 0; !r && i < s->nreqs[t]; i++) {
			const gpuenv_selector_req_t *q = &s->terms[t][i];
			r = gpuenv_buf_printf(out, "        - key: %s\n          operator: %s\n          values: [\"%s\"]\n",
				q->key, q->op, q->value);
		}
	}
	return r;
}
