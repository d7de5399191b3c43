/* Does this machine run a target (gpuenv/fit.h)? */
#include "gpuenv/fit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct fit_state {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	gpuenv_fit_t *out;
	size_t nbad; /* failing reasons, kept first */
	int rc;
} fit_state_t;

static void GPUENV_PRINTF(3, 4) say(fit_state_t *s, int verdict, const char *fmt, ...)
{
	va_list ap;
	gpuenv_str_t t;
	if (s->rc || s->out->nreasons == GPUENV_FIT_MAX_REASONS)
		return;
	va_start(ap, fmt);
	t = gpuenv_arena_vprintf(s->arena, fmt, ap);
	va_end(ap);
	if (!t.ptr) {
		s->rc = gpuenv_oom(s->ctx, "the target check");
		return;
	}
	gpuenv_fit_t *o = s->out;
	if (verdict == GPUENV_KB_NO) {
		memmove(&o->reasons[s->nbad + 1], &o->reasons[s->nbad],
			(o->nreasons - s->nbad) * sizeof(o->reasons[0]));
		o->reasons[s->nbad++] = t.ptr;
		o->verdict = GPUENV_KB_NO;
	} else {
		o->reasons[o->nreasons] = t.ptr;
		if (verdict == GPUENV_KB_UNKNOWN && o->verdict == GPUENV_KB_YES)
			o->verdict = GPUENV_KB_UNKNOWN;
	}
	o->nreasons++;
}

const char *gpuenv_fit_backend_cuda(const char *backend, char *buf, size_t bufsz)
{
	return gpuenv_kb_cuda_of_tag(gpuenv_str(backend), buf, bufsz, NULL);
}

static bool visible(const gpuenv_target_gpu_t *g)
{
	return g->visible && g->cc_major >= 0;
}

const char *gpuenv_target_describe(gpuenv_arena_t *arena, const gpuenv_target_t *t)
{
	gpuenv_buf_t b;
	const char *out;
	size_t shown = 0;
	int rc = 0; /* a failed append (out of memory) gives NULL, not a cut line */
	gpuenv_buf_init(&b, arena->ctx, 4096);
	for (size_t i = 0; i < t->ngpus; i++) {
		const gpuenv_target_gpu_t *g = &t->gpus[i];
		if (!visible(g))
			continue;
		if (shown++)
			rc |= gpuenv_buf_puts(&b, ", ");
		rc |= gpuenv_buf_printf(&b, "%s (sm %d.%d)", g->name ? g->name : "GPU", g->cc_major, g->cc_minor);
	}
	if (!shown)
		rc |= gpuenv_buf_puts(&b, "no NVIDIA GPU");
	if (t->driver)
		rc |= gpuenv_buf_printf(&b, ", driver %s", t->driver);
	else if (t->driver_cuda)
		rc |= gpuenv_buf_printf(&b, ", a driver for CUDA %s", t->driver_cuda);
	if (t->machine)
		rc |= gpuenv_buf_printf(&b, ", %s", t->machine);
	out = b.data && !rc ? gpuenv_arena_strndup(arena, b.data, b.len) : NULL;
	gpuenv_buf_free(&b);
	return out;
}

/* "2.28" <= "2.35"? (MAJOR.MINOR of a C library) */
static int libc_cmp(const char *a, const char *b)
{
	unsigned a1 = 0, a2 = 0, b1 = 0, b2 = 0;
	if (sscanf(a, "%u.%u", &a1, &a2) < 1 || sscanf(b, "%u.%u", &b1, &b2) < 1)
		return 0;
	return a1 != b1 ? (a1 < b1 ? -1 : 1) : a2 != b2 ? (a2 < b2 ? -1 : 1) : 0;
}

static void fit_platform(fit_state_t *s, const gpuenv_target_t *m, const gpuenv_target_t *w)
{
	if (w->machine && m->machine && strcmp(w->machine, m->machine) != 0)
		say(s, GPUENV_KB_NO, "the target is %s; this machine is %s", w->machine, m->machine);
	if (w->libc && m->libc && strcmp(w->libc, m->libc) != 0)
		say(s, GPUENV_KB_NO, "the target's wheels are for %s; this machine has %s", w->libc, m->libc);
	else if (w->libc && w->libc_version && m->libc_version && libc_cmp(m->libc_version, w->libc_version) < 0)
		say(s, GPUENV_KB_NO, "the target's wheels need %s %s; this machine has %s", w->libc,
			w->libc_version, m->libc_version);
}

/* The target's GPUs against the visible ones: the score, 0 when they differ. */
static int fit_gpus(fit_state_t *s, const gpuenv_kb_t *kb, const gpuenv_target_t *m, const gpuenv_target_t *w)
{
	const gpuenv_target_gpu_t *want = NULL;
	size_t nvis = 0, same_cc = 0, same_name = 0;
	for (size_t i = 0; i < w->ngpus && !want; i++)
		if (w->gpus[i].cc_major >= 0)
			want = &w->gpus[i];
	for (size_t i = 0; i < m->ngpus; i++)
		nvis += visible(&m->gpus[i]);
	if (!want) {
		say(s, GPUENV_KB_YES, "a CPU target runs on any machine");
		return 1;
	}
	if (!nvis) {
		say(s, GPUENV_KB_NO, "the target is a %s (sm %d.%d); this machine has no NVIDIA GPU that CUDA sees",
			want->name ? want->name : "GPU", want->cc_major, want->cc_minor);
		return 0;
	}
	gpuenv_kb_gpu_match_t wm, mm;
	const gpuenv_kb_gpu_t *wg = kb && want->name && gpuenv_kb_gpu_find(kb, want->name, &wm, 1) == 1 ? wm.gpu : NULL;
	for (size_t i = 0; i < m->ngpus; i++) {
		const gpuenv_target_gpu_t *g = &m->gpus[i];
		if (!visible(g))
			continue;
		if (g->cc_major != want->cc_major || g->cc_minor != want->cc_minor) {
			say(s, GPUENV_KB_NO, "the target is a %s (sm %d.%d); GPU %zu of this machine is a %s (sm %d.%d)",
				want->name ? want->name : "GPU", want->cc_major, want->cc_minor, i,
				g->name ? g->name : "GPU", g->cc_major, g->cc_minor);
			continue;
		}
		same_cc++;
		if (wg && g->name && gpuenv_kb_gpu_find(kb, g->name, &mm, 1) == 1 && mm.gpu == wg)
			same_name++;
	}
	if (same_cc != nvis)
		return 0;
	if (same_name == nvis) {
		say(s, GPUENV_KB_YES, "this machine's GPU%s %s the target's, %s", nvis > 1 ? "s" : "",
			nvis > 1 ? "are" : "is", want->name);
		return 3;
	}
	say(s, GPUENV_KB_YES, "this machine's GPU%s the target's compute capability, sm %d.%d",
		nvis > 1 ? "s have" : " has", want->cc_major, want->cc_minor);
	return 2;
}

static void fit_driver(fit_state_t *s, const gpuenv_kb_t *kb, const gpuenv_target_t *m, const gpuenv_target_t *w,
	const char *cuda_build)
{
	gpuenv_kb_target_t kt[1];
	gpuenv_kb_ver_t cv, mc, wc;
	if (!m->driver && !m->driver_cuda) {
		say(s, GPUENV_KB_NO, "the target needs an NVIDIA driver; this machine has none loaded");
		return;
	}
	if (cuda_build && kb && gpuenv_kb_ver_parse(gpuenv_str(cuda_build), &cv)) {
		gpuenv_kb_driver_cuda_t dc;
		gpuenv_target_kb(kb, m, kt, 1);
		switch (gpuenv_kb_driver_runs_cuda(kb, &kt[0], &cv, &dc)) {
		case GPUENV_KB_RUNS_NO:
			say(s, GPUENV_KB_NO, "the locked torch build is for CUDA %s; this machine's driver %s runs CUDA "
				"%.*s at most", cuda_build, m->driver ? m->driver : "", (int)dc.max.str.len,
				dc.max.str.ptr ? dc.max.str.ptr : "?");
			return;
		case GPUENV_KB_RUNS_UNKNOWN:
			say(s, GPUENV_KB_UNKNOWN, "the knowledge base cannot tell whether driver %s runs CUDA %s",
				m->driver ? m->driver : "?", cuda_build);
			return;
		default:
			say(s, GPUENV_KB_YES, "this machine's driver runs the locked torch build's CUDA %s", cuda_build);
			return;
		}
	}
	if (w->driver_cuda && m->driver_cuda && gpuenv_kb_ver_parse(gpuenv_str(w->driver_cuda), &wc) &&
		gpuenv_kb_ver_parse(gpuenv_str(m->driver_cuda), &mc)) {
		if (gpuenv_kb_ver_cmp(&mc, &wc) < 0)
			say(s, GPUENV_KB_NO, "the target's driver runs CUDA %s; this machine's runs CUDA %s",
				w->driver_cuda, m->driver_cuda);
		else
			say(s, GPUENV_KB_YES, "this machine's driver runs CUDA %s (the target's: %s)", m->driver_cuda,
				w->driver_cuda);
		return;
	}
	if (w->driver && m->driver && gpuenv_kb_ver_parse(gpuenv_str(w->driver), &wc) &&
		gpuenv_kb_ver_parse(gpuenv_str(m->driver), &mc)) {
		/* a declared driver without a lock: the machine runs what the
		 * target's driver runs when its own is as new, or when the KB
		 * says it runs CUDA releases at least as new */
		gpuenv_kb_driver_max_t wm, mm;
		if (gpuenv_kb_ver_cmp(&mc, &wc) >= 0) {
			say(s, GPUENV_KB_YES, "this machine's driver %s is at least the target's, %s", m->driver,
				w->driver);
			return;
		}
		if (!kb) {
			say(s, GPUENV_KB_UNKNOWN, "this machine's driver %s is older than the target's, %s", m->driver,
				w->driver);
			return;
		}
		gpuenv_kb_driver_max_cuda(kb, &wc, &wm);
		gpuenv_kb_driver_max_cuda(kb, &mc, &mm);
		if (!wm.ga)
			say(s, GPUENV_KB_UNKNOWN, "the knowledge base cannot tell what the target's driver %s runs",
				w->driver);
		else if (mm.ga && gpuenv_kb_ver_cmp(&mm.ga->cuda, &wm.ga->cuda) >= 0)
			say(s, GPUENV_KB_YES, "this machine's driver %s runs CUDA %.*s, as the target's %s does",
				m->driver, (int)mm.ga->cuda.str.len, mm.ga->cuda.str.ptr, w->driver);
		else
			say(s, GPUENV_KB_NO, "the target's driver %s runs CUDA %.*s; this machine's %s runs %s%.*s",
				w->driver, (int)wm.ga->cuda.str.len, wm.ga->cuda.str.ptr, m->driver,
				mm.ga ? "CUDA " : "no CUDA release the knowledge base lists", mm.ga ? (int)mm.ga->cuda.str.len : 0,
				mm.ga ? mm.ga->cuda.str.ptr : "");
		return;
	}
	if (w->driver_cuda || w->driver)
		say(s, GPUENV_KB_UNKNOWN, "the CUDA %s driver runs is unknown",
			m->driver || m->driver_cuda ? "the target's" : "this machine's");
}

int gpuenv_target_fit(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_kb_t *kb,
	const gpuenv_target_t *machine, const gpuenv_target_t *want, const char *cuda_build, gpuenv_fit_t *out)
{
	fit_state_t s = { .ctx = ctx, .arena = arena, .out = out };
	int score;
	memset(out, 0, sizeof(*out));
	out->verdict = GPUENV_KB_YES;
	fit_platform(&s, machine, want);
	score = fit_gpus(&s, kb, machine, want);
	if (score > 1)
		fit_driver(&s, kb, machine, want, cuda_build);
	if (s.rc)
		return s.rc;
	out->score = out->verdict == GPUENV_KB_NO ? 0 : score;
	return 0;
}
