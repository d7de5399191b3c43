/* What doctor and preflight share: small parsers, facts readers, the
 * verdict builder and the rules both run (machine state, driver vs CUDA). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"
#include "gpuenv/kb.h"

/* ==== small parsers ====================================================== */

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal number of at most 9 digits at *p; advances *p. */
static bool num(const char **p, long *out)
{
	long v = 0;
	int n = 0;

	while (isdig(**p)) {
		if (++n > 9)
			return false;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*out = v;
	return n > 0;
}

int dk_cuda_parse(const char *s)
{
	long maj, min = 0;

	if (!s || !num(&s, &maj) || maj <= 0 || maj > 99)
		return 0;
	if (*s == '.') {
		s++;
		if (!num(&s, &min) || min > 9)
			return 0;
		/* a third part (12.8.1) is the update: ignored */
		if (*s == '.') {
			long upd;
			s++;
			if (!num(&s, &upd))
				return 0;
		}
	}
	if (*s)
		return 0;
	return (int)(maj * 1000 + min * 10);
}

void dk_cuda_str(int v, char *out, size_t outsz)
{
	snprintf(out, outsz, "%d.%d", CUDA_MAJOR(v), CUDA_MINOR(v));
}

int dk_vcmp(const char *a, const char *b, bool *ok)
{
	long x, y;
	bool ax = true, bx = true;

	if (ok)
		*ok = false;
	if (!a || !b || !isdig(*a) || !isdig(*b))
		return 0;
	if (ok)
		*ok = true;
	for (int i = 0; i < 8; i++) {
		x = y = 0;
		if (ax && isdig(*a))
			ax = num(&a, &x);
		else
			ax = false;
		if (bx && isdig(*b))
			bx = num(&b, &y);
		else
			bx = false;
		if (x != y)
			return x < y ? -1 : 1;
		if (ax && *a == '.' && isdig(a[1]))
			a++;
		else
			ax = false;
		if (bx && *b == '.' && isdig(b[1]))
			b++;
		else
			bx = false;
		if (!ax && !bx)
			break;
	}
	return 0;
}

long dk_vmajor(const char *s)
{
	long v;

	if (!s || !num(&s, &v))
		return -1;
	return v;
}

bool dk_cc_parse(const char *s, int *maj, int *min)
{
	long a, b;

	if (!s || !num(&s, &a) || *s != '.')
		return false;
	s++;
	if (!num(&s, &b) || *s || a > 99 || b > 9)
		return false;
	*maj = (int)a;
	*min = (int)b;
	return true;
}

bool dk_arch_parse(const char *s, dk_arch_t *out)
{
	long n;

	if (!s)
		return false;
	memset(out, 0, sizeof(*out));
	if (strncmp(s, "sm_", 3) == 0)
		s += 3;
	else if (strncmp(s, "compute_", 8) == 0) {
		s += 8;
		out->ptx = true;
	} else
		return false;
	if (!num(&s, &n) || n < 10 || n > 999)
		return false;
	if (*s == 'a' || *s == 'f')
		out->suffix = *s++;
	if (*s)
		return false;
	out->maj = (int)(n / 10);
	out->min = (int)(n % 10);
	return true;
}

/* The rule itself is the KB's (gpuenv_kb_sm_runs_on, rules
 * cubin-binary-compat, ptx-jit and arch-specific-targets of cuda.toml). */
static bool runs(const dk_arch_t *a, bool ptx, int maj, int min)
{
	gpuenv_kb_sm_t sm = { .major = (uint8_t)a->maj, .minor = (uint8_t)a->min,
		.variant = a->suffix };

	if (maj < 0 || min < 0)
		return false;
	return gpuenv_kb_sm_runs_on(&sm, ptx, (unsigned)maj, (unsigned)min);
}

bool dk_cubin_runs(const dk_arch_t *a, int maj, int min)
{
	return runs(a, false, maj, min);
}

bool dk_ptx_runs(const dk_arch_t *a, int maj, int min)
{
	return runs(a, true, maj, min);
}

static int arch_cmp(const dk_arch_t *x, const dk_arch_t *y)
{
	if (x->maj != y->maj)
		return x->maj < y->maj ? -1 : 1;
	if (x->min != y->min)
		return x->min < y->min ? -1 : 1;
	return 0;
}

typedef const char *(*item_fn)(const void *list, size_t i);

static const char *strs_item(const void *list, size_t i)
{
	return ((const gpuenv_facts_strs_t *)list)->items[i];
}

static const char *c_item(const void *list, size_t i)
{
	return ((const char *const *)list)[i];
}

static void cover(item_fn get, const void *cub, size_t ncub, const void *ptx, size_t nptx,
	int maj, int min, bool ptx_ok, dk_cov_t *out)
{
	dk_arch_t a, best = { 0 }, lo = { 0 }, hi = { 0 };
	bool have_best = false;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ncub; i++) {
		const char *s = get(cub, i);
		if (!dk_arch_parse(s, &a))
			continue;
		if (out->ncubins++ == 0 || arch_cmp(&a, &lo) < 0) {
			lo = a;
			out->lo = s;
		}
		if (out->ncubins == 1 || arch_cmp(&a, &hi) > 0) {
			hi = a;
			out->hi = s;
		}
		/* the closest cubin that runs: the highest one */
		if (dk_cubin_runs(&a, maj, min) && (!have_best || arch_cmp(&a, &best) > 0)) {
			best = a;
			have_best = true;
			out->by = s;
			out->how = DK_COV_CUBIN;
		}
	}
	if (have_best) {
		for (size_t i = 0; i < nptx; i++)
			if (dk_arch_parse(get(ptx, i), &a))
				out->nptx++;
		return;
	}
	for (size_t i = 0; i < nptx; i++) {
		const char *s = get(ptx, i);
		if (!dk_arch_parse(s, &a))
			continue;
		out->nptx++;
		a.ptx = true;
		if (!dk_ptx_runs(&a, maj, min))
			continue;
		if (!have_best || arch_cmp(&a, &best) > 0) {
			best = a;
			have_best = true;
			if (ptx_ok) {
				out->how = DK_COV_PTX;
				out->by = s;
			} else
				out->ptx = s;
		}
	}
}

void dk_cover_strs(const gpuenv_facts_strs_t *cubins, const gpuenv_facts_strs_t *ptx, int maj,
	int min, bool ptx_ok, dk_cov_t *out)
{
	cover(strs_item, cubins, cubins ? cubins->n : 0, ptx, ptx ? ptx->n : 0, maj, min, ptx_ok,
		out);
}

static size_t clist_len(const char *const *l)
{
	size_t n = 0;

	while (l && l[n])
		n++;
	return n;
}

void dk_cover_list(const char *const *cubins, const char *const *ptx, int maj, int min,
	bool ptx_ok, dk_cov_t *out)
{
	cover(c_item, cubins, clist_len(cubins), ptx, clist_len(ptx), maj, min, ptx_ok, out);
}

/* ==== verdicts =========================================================== */

#define MAX_EVIDENCE 16
#define MAX_VERDICTS 4096 /* a facts file cannot make the output unbounded */

const char *dr_fmt(drun_t *r, const char *fmt, ...)
{
	va_list ap;
	char small[256], *p;
	int n;

	if (r->err)
		return NULL;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		r->err = -EINVAL;
		return NULL;
	}
	p = gpuenv_arena_alloc(r->arena, (size_t)n + 1);
	if (!p) {
		r->err = -ENOMEM;
		return NULL;
	}
	if ((size_t)n < sizeof(small))
		memcpy(p, small, (size_t)n + 1);
	else {
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	return p;
}

gpuenv_verdict_t *dr_verdict(drun_t *r, const char *id, int severity, const char *subject,
	const char *target)
{
	gpuenv_verdicts_t *o = r->out;
	gpuenv_verdict_t *v;

	if (r->err || o->n >= MAX_VERDICTS)
		return NULL;
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 16;
		gpuenv_verdict_t *items = gpuenv_arena_calloc(r->arena, cap, sizeof(*items));
		if (!items) {
			r->err = -ENOMEM;
			return NULL;
		}
		if (o->n)
			memcpy(items, o->items, o->n * sizeof(*items));
		o->items = items;
		o->cap = cap;
	}
	v = &o->items[o->n];
	memset(v, 0, sizeof(*v));
	v->evidence = gpuenv_arena_calloc(r->arena, MAX_EVIDENCE, sizeof(*v->evidence));
	if (!v->evidence) {
		r->err = -ENOMEM;
		return NULL;
	}
	o->n++;
	v->id = id;
	v->severity = severity;
	v->subject = subject;
	v->target = target;
	v->gpu = -1;
	return v;
}

static void ev_add(drun_t *r, gpuenv_verdict_t *v, const char *fact, const char *source,
	const char *kb_source, const char *value)
{
	if (!v || !value || v->nevidence >= MAX_EVIDENCE)
		return;
	v->evidence[v->nevidence++] = (gpuenv_evidence_t){
		.fact = fact,
		.value = value,
		.source = source ? source : "facts",
		.kb_source = kb_source,
	};
	(void)r;
}

void dr_ev(drun_t *r, gpuenv_verdict_t *v, const char *fact, const char *source,
	const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (!v || r->err)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ev_add(r, v, fact, source, NULL, dr_fmt(r, "%s", buf));
}

void dr_ev_kb(drun_t *r, gpuenv_verdict_t *v, const char *fact, const char *kb_source,
	const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (!v || r->err)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ev_add(r, v, fact, "kb", kb_source, dr_fmt(r, "%s", buf));
}

void dr_finish(drun_t *r)
{
	gpuenv_verdicts_t *o = r->out;
	gpuenv_verdict_t *sorted;
	size_t k = 0;

	memset(o->count, 0, sizeof(o->count));
	for (size_t i = 0; i < o->n; i++)
		o->count[o->items[i].severity]++;
	if (o->n < 2)
		return;
	sorted = gpuenv_arena_calloc(r->arena, o->n, sizeof(*sorted));
	if (!sorted) {
		r->err = -ENOMEM;
		return;
	}
	for (int sev = GPUENV_SEV_ERROR; sev >= GPUENV_SEV_INFO; sev--)
		for (size_t i = 0; i < o->n; i++)
			if (o->items[i].severity == sev)
				sorted[k++] = o->items[i];
	o->items = sorted;
	o->cap = o->n;
}

const char *dr_gpu_label(drun_t *r, const struct dgpu *g)
{
	long long idx = g->index;
	const char *name = g->name ? g->name : "(unknown name)";

	if (g->maj < 0)
		return dr_fmt(r, "GPU %lld %s", idx, name);
	return dr_fmt(r, "GPU %lld %s (sm_%d%d)", idx, name, g->maj, g->min);
}

/* ==== the shared derived facts =========================================== */

static bool streq_ci(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
		char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
		if (x != y)
			return false;
	}
	return *a == *b;
}

/* The CUDA version of a driver's facts: "13.0", else 13000. */
static int cuda_of(const char *s, long long v)
{
	if (s && dk_cuda_parse(s))
		return dk_cuda_parse(s);
	if (v > 0 && v < 100000)
		return (int)v;
	return 0;
}

const char *dr_gpu_src(const struct dgpu *g, const char *key)
{
	return gpuenv_facts_source(&g->fg->sources, key);
}

int dr_done(gpuenv_ctx_t *ctx, int rc)
{
	if (rc == -ENOMEM && ctx->err.code != -ENOMEM)
		return gpuenv_oom(ctx, "judging the facts");
	if (rc < 0 && ctx->err.code != rc)
		return gpuenv_fail(ctx, rc, NULL, 0, 0, "%s", gpuenv_strerror(rc));
	return rc;
}

#define MAX_GPUS 1024

int drun_init(drun_t *r, gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_facts_t *facts,
	const dkb_t *kb, gpuenv_verdicts_t *out)
{
	const gpuenv_facts_driver_t *drv = &facts->driver;
	const gpuenv_facts_cvd_t *cvd = &facts->cvd;
	size_t n = facts->ngpus, i;

	memset(r, 0, sizeof(*r));
	memset(out, 0, sizeof(*out));
	r->ctx = ctx;
	r->arena = arena;
	r->facts = facts;
	r->kb = kb;
	r->out = out;

	r->drv_version = drv->version;
	r->drv_state = drv->state;
	if ((r->drv_cuda = cuda_of(drv->cuda_version, -1)) != 0) {
		r->drv_cuda_fact = "driver.cuda_version";
		r->drv_cuda_src = drv->cuda_version_source;
	} else if ((r->drv_cuda = cuda_of(NULL, drv->cuda_version_int)) != 0) {
		r->drv_cuda_fact = "driver.cuda_version_int";
		r->drv_cuda_src = drv->cuda_version_source;
	} else if (r->drv_version) {
		const char *src = NULL;
		r->drv_cuda = dkb_driver_max_cuda(kb, r->drv_version, &src);
		r->drv_cuda_fact = "kb:cuda.toml toolkit (newest CUDA whose GA driver <= driver.version)";
		r->drv_cuda_src = "kb";
	}
	/* a libcuda newer than the kernel driver: the forward-compatibility
	 * package (cuda-compat-X-Y) is what applications load */
	if (streq_ci(drv->libcuda.state, "driver")) {
		int c = cuda_of(drv->libcuda.cuda_version, -1);
		if (c > r->drv_cuda)
			r->compat_cuda = c;
	}

	if (n > MAX_GPUS)
		n = MAX_GPUS;
	r->gpus = n ? gpuenv_arena_calloc(arena, n, sizeof(*r->gpus)) : NULL;
	if (n && !r->gpus)
		return gpuenv_oom(ctx, "judging the facts");
	for (i = 0; i < n; i++) {
		const gpuenv_facts_gpu_t *g = &facts->gpus[i];
		struct dgpu *d = &r->gpus[r->ngpus++];
		d->i = g->at;
		d->fg = g;
		d->index = g->index >= 0 ? g->index : (long long)g->at;
		d->name = g->name;
		d->uuid = g->uuid;
		if (!gpuenv_facts_gpu_cc(g, &d->maj, &d->min))
			d->maj = d->min = -1;
		d->visible = gpuenv_facts_gpu_visible(facts, g);
		d->mig = streq_ci(g->mig_current, "enabled");
		if (d->mig) {
			for (size_t k = 0; k < g->nmig_instances; k++) {
				const gpuenv_facts_mig_instance_t *m = &g->mig_instances[k];
				d->mig_instances++;
				if (m->visible != GPUENV_TRI_UNKNOWN ? m->visible == GPUENV_TRI_TRUE : d->visible)
					d->mig_visible++;
			}
			r->visible_devices += d->mig_visible;
		} else if (d->visible)
			r->visible_devices++;
	}
	/* what CUDA will enumerate, when the probe listed it */
	if (cvd->have_devices)
		r->visible_devices = cvd->ndevices;
	r->gpu_host = r->ngpus > 0;
	for (i = 0; i < facts->npci; i++) {
		const gpuenv_facts_pci_t *e = &facts->pci[i];
		if (((e->class_ && strncmp(e->class_, "0x03", 4) == 0) || streq_ci(e->kind, "gpu")) &&
			(!e->vendor || streq_ci(e->vendor, "0x10de")))
			r->gpu_host = true;
	}
	return 0;
}

/* ==== machine rules ====================================================== */

static void rule_driver_not_loaded(drun_t *r)
{
	gpuenv_verdict_t *v;
	const char *bound = NULL;
	size_t i, ngpu = 0;

	if (!r->drv_state || strcmp(r->drv_state, "not-loaded") != 0)
		return;
	v = dr_verdict(r, "driver-not-loaded", GPUENV_SEV_ERROR, "driver", "NVIDIA kernel driver");
	if (!v)
		return;
	dr_ev(r, v, "driver.state", NULL, "%s", r->drv_state);
	for (i = 0; i < r->facts->npci; i++) {
		const gpuenv_facts_pci_t *e = &r->facts->pci[i];
		const char *cls = e->class_;
		const char *drv = e->driver;
		if (!(cls && strncmp(cls, "0x03", 4) == 0) && !streq_ci(e->kind, "gpu"))
			continue;
		ngpu++;
		if (drv && strcmp(drv, "nvidia") != 0)
			bound = drv;
		dr_ev(r, v, dr_fmt(r, "pci[%zu]", e->at), "sysfs", "%s device %s class %s driver %s",
			e->bus_id ? e->bus_id : "?", e->device ? e->device : "?", cls ? cls : "?",
			drv ? drv : "none");
	}
	v->message = dr_fmt(r, "%zu NVIDIA GPU%s on the PCI bus but the NVIDIA kernel driver is not "
		"loaded%s%s%s: CUDA finds no device (\"Found no NVIDIA driver on your system\")",
		ngpu, ngpu == 1 ? "" : "s", bound ? " (the GPU is bound to " : "", bound ? bound : "",
		bound ? ")" : "");
	v->fix = bound && strcmp(bound, "vfio-pci") != 0
		? dr_fmt(r, "install the NVIDIA driver and keep %s off the GPU (blacklist it: "
			"echo 'blacklist %s' | sudo tee /etc/modprobe.d/blacklist-%s.conf; reboot)",
			bound, bound, bound)
		: bound ? dr_fmt(r, "the GPU is passed through (vfio-pci): run on the guest that owns it, "
			"or unbind it from vfio-pci and load nvidia")
		: dr_fmt(r, "load the driver: sudo modprobe nvidia (install it first if 'modinfo "
			"nvidia' finds none), then check with nvidia-smi");
}

static void rule_cvd(drun_t *r)
{
	const gpuenv_facts_cvd_t *cvd = &r->facts->cvd;
	const char *value = cvd->value;
	const char *invalid = cvd->invalid;
	gpuenv_verdict_t *v;
	size_t mig_empty = 0, mig_with = 0;

	if (cvd->set != GPUENV_TRI_TRUE || r->ngpus == 0)
		return;
	for (size_t i = 0; i < r->ngpus; i++) {
		if (r->gpus[i].mig && r->gpus[i].mig_instances == 0)
			mig_empty++;
		else if (r->gpus[i].mig)
			mig_with++;
	}
	if (r->visible_devices == 0 && mig_empty < r->ngpus) {
		v = dr_verdict(r, "cuda-visible-devices-hides-all", GPUENV_SEV_ERROR, "machine",
			"CUDA_VISIBLE_DEVICES");
		if (!v)
			return;
		dr_ev(r, v, "cuda_visible_devices.value", "env", "%s", value ? value : "(empty)");
		dr_ev(r, v, "cuda_visible_devices.visible", "env", "[]");
		for (size_t i = 0; i < r->ngpus; i++)
			dr_ev(r, v, dr_fmt(r, "gpus[%zu].uuid", r->gpus[i].i),
				dr_gpu_src(&r->gpus[i], "uuid"), "%s",
				r->gpus[i].uuid ? r->gpus[i].uuid : "?");
		v->message = dr_fmt(r, "CUDA_VISIBLE_DEVICES=\"%s\" hides every one of the %zu GPU%s: "
			"CUDA reports no device (cudaErrorNoDevice, torch.cuda.is_available() is "
			"False)%s",
			value ? value : "", r->ngpus, r->ngpus == 1 ? "" : "s",
			mig_with ? "; a GPU in MIG mode is seen only through its MIG devices, named "
				   "MIG-<uuid> (nvidia-smi -L)" : "");
		if (mig_with) {
			const char *uuid = NULL;
			for (size_t i = 0; i < r->ngpus && !uuid; i++) {
				const gpuenv_facts_gpu_t *g = r->gpus[i].fg;
				for (size_t k = 0; k < g->nmig_instances && !uuid; k++)
					uuid = g->mig_instances[k].uuid;
			}
			v->fix = uuid ? dr_fmt(r, "export CUDA_VISIBLE_DEVICES=%s (or unset "
						  "CUDA_VISIBLE_DEVICES)", uuid)
				      : dr_fmt(r, "name the MIG devices: export CUDA_VISIBLE_DEVICES=MIG-<uuid> "
						  "(from nvidia-smi -L), or unset CUDA_VISIBLE_DEVICES");
		} else
			v->fix = r->ngpus == 1
				? dr_fmt(r, "unset CUDA_VISIBLE_DEVICES, or export CUDA_VISIBLE_DEVICES=0")
				: dr_fmt(r, "unset CUDA_VISIBLE_DEVICES, or name GPUs that exist: export "
					    "CUDA_VISIBLE_DEVICES=0,1 (indexes 0-%zu or GPU UUIDs from "
					    "nvidia-smi -L)", r->ngpus - 1);
		return;
	}
	if (invalid && r->visible_devices > 0) {
		v = dr_verdict(r, "cuda-visible-devices-invalid", GPUENV_SEV_WARNING, "machine",
			"CUDA_VISIBLE_DEVICES");
		if (!v)
			return;
		dr_ev(r, v, "cuda_visible_devices.value", "env", "%s", value ? value : "");
		dr_ev(r, v, "cuda_visible_devices.invalid", "env", "%s", invalid);
		v->message = dr_fmt(r, "entry \"%s\" of CUDA_VISIBLE_DEVICES=\"%s\" names no GPU of this "
			"machine: CUDA stops reading the list there, so only %zu of the %zu GPU%s %s "
			"visible",
			invalid, value ? value : "", r->visible_devices, r->ngpus,
			r->ngpus == 1 ? "" : "s", r->visible_devices == 1 ? "is" : "are");
		v->fix = dr_fmt(r, "use indexes 0-%zu or GPU UUIDs from nvidia-smi -L in "
			"CUDA_VISIBLE_DEVICES, or unset it", r->ngpus - 1);
	}
}

static void rule_mig(drun_t *r)
{
	for (size_t i = 0; i < r->ngpus; i++) {
		const struct dgpu *g = &r->gpus[i];
		long long idx = g->index;
		gpuenv_verdict_t *v;

		if (!g->mig || g->mig_instances > 0)
			continue;
		v = dr_verdict(r, "mig-no-device",
			r->visible_devices == 0 ? GPUENV_SEV_ERROR : GPUENV_SEV_WARNING, "gpu",
			dr_gpu_label(r, g));
		if (!v)
			return;
		v->gpu = (int)g->i;
		dr_ev(r, v, dr_fmt(r, "gpus[%zu].mig.current", g->i), dr_gpu_src(g, "mig"), "%s",
			g->fg->mig_current);
		dr_ev(r, v, dr_fmt(r, "gpus[%zu].mig.instances", g->i), dr_gpu_src(g, "mig"), "[]");
		v->message = r->visible_devices == 0
			? dr_fmt(r, "MIG mode is enabled on GPU %lld but it has no MIG instance: CUDA "
				    "sees no device at all (cudaErrorNoDevice)", idx)
			: dr_fmt(r, "MIG mode is enabled on GPU %lld but it has no MIG instance: CUDA "
				    "does not see that GPU (%zu other device%s visible)", idx,
				    r->visible_devices, r->visible_devices == 1 ? " is" : "s are");
		v->fix = dr_fmt(r, "create instances: sudo nvidia-smi mig -i %lld -cgi <profile> -C "
			"(profiles: nvidia-smi mig -i %lld -lgip); or disable MIG: sudo nvidia-smi -i "
			"%lld -mig 0 and reset the GPU", idx, idx, idx);
	}
}

/* The kernel driver is loaded but neither NVML nor libcuda could be
 * loaded: nvidia-smi and every CUDA application fail, whatever the
 * driver's version says (a container started without the NVIDIA runtime, a
 * driver installed without its user-space part). */
static void rule_driver_libs(drun_t *r)
{
	const gpuenv_facts_driver_t *d = &r->facts->driver;
	static const char *const nvml_gone[] = { "missing", "not-nvml", NULL };
	static const char *const cuda_gone[] = { "missing", "not-libcuda", "stub", NULL };
	bool nvml = false, cuda = false;
	gpuenv_verdict_t *v;
	const char *ver = d->kernel_module ? d->kernel_module : d->version;

	if (d->loaded != GPUENV_TRI_TRUE && !streq_ci(d->state, "nvml-unavailable"))
		return;
	for (const char *const *p = nvml_gone; *p; p++)
		nvml |= streq_ci(d->nvml.state, *p);
	for (const char *const *p = cuda_gone; *p; p++)
		cuda |= streq_ci(d->libcuda.state, *p);
	if (!nvml || !cuda)
		return;
	r->drv_libs_missing = true;
	v = dr_verdict(r, "driver-libraries-missing", GPUENV_SEV_ERROR, "driver",
		dr_fmt(r, "NVIDIA driver%s%s", ver ? " " : "", ver ? ver : ""));
	if (!v)
		return;
	dr_ev(r, v, "driver.loaded", NULL, "%s", d->loaded == GPUENV_TRI_TRUE ? "true" : "unknown");
	if (d->state)
		dr_ev(r, v, "driver.state", NULL, "%s", d->state);
	dr_ev(r, v, "driver.nvml.state", "nvml", "%s%s%s", d->nvml.state,
		d->nvml.message ? ": " : "", d->nvml.message ? d->nvml.message : "");
	dr_ev(r, v, "driver.libcuda.state", "libcuda", "%s%s%s", d->libcuda.state,
		d->libcuda.message ? ": " : "", d->libcuda.message ? d->libcuda.message : "");
	v->message = dr_fmt(r, "the NVIDIA kernel driver%s%s is loaded but its user-space libraries "
		"are not: neither NVML (libnvidia-ml.so.1) nor libcuda.so.1 %s, so nvidia-smi fails and "
		"every CUDA application fails to start (\"CUDA driver version is insufficient\" or "
		"\"libcuda.so.1: cannot open shared object file\")",
		ver ? " " : "", ver ? ver : "",
		streq_ci(d->libcuda.state, "stub") ? "can be loaded (the libcuda found is the toolkit's "
						   "stub)" : "can be loaded");
	v->fix = dr_fmt(r, "install the driver's user-space libraries of the same version as the "
		"kernel module%s%s (e.g. sudo apt install libnvidia-compute-%ld on Ubuntu); in a "
		"container, start it with the NVIDIA Container Toolkit (docker run --gpus all, or "
		"the nvidia runtime) so the host's libraries are mounted",
		ver ? " " : "", ver ? ver : "", ver && dk_vmajor(ver) > 0 ? dk_vmajor(ver) : 580L);
}

void dr_rules_machine(drun_t *r)
{
	rule_driver_not_loaded(r);
	rule_driver_libs(r);
	rule_cvd(r);
	rule_mig(r);
}

/* ==== driver vs CUDA ===================================================== */

static const char *drv_src(drun_t *r)
{
	const gpuenv_facts_driver_t *drv = &r->facts->driver;

	if (drv->version_source)
		return drv->version_source;
	/* the facts name no source: NVML when it answered */
	return drv->nvml.loaded == GPUENV_TRI_TRUE ? "nvml" : NULL;
}

static bool driver_judge(drun_t *r, int need, const char *what, const char *need_fact,
	const char *need_src, const char *env, const char *fix_alt, bool ok_info);

bool dr_rule_driver(drun_t *r, int need, const char *what, const char *need_fact,
	const char *need_src, const char *env, const char *fix_alt, bool ok_info)
{

	if (need <= 0 || (!r->drv_version && !r->drv_cuda))
		return false;
	for (size_t i = 0; i < r->ndrv_seen; i++) {
		if (r->drv_seen[i].need != need || !((!env && !r->drv_seen[i].env) ||
				(env && r->drv_seen[i].env && strcmp(env, r->drv_seen[i].env) == 0)))
			continue;
		/* judged already: name this one in the same verdict */
		if (r->drv_seen[i].vi != SIZE_MAX)
			dr_ev(r, &r->out->items[r->drv_seen[i].vi], need_fact, need_src, "%s also needs it",
				what);
		return r->drv_seen[i].ptx_ok;
	}
	{
		size_t before = r->out->n;
		bool res = driver_judge(r, need, what, need_fact, need_src, env, fix_alt, ok_info);
		if (r->ndrv_seen < sizeof(r->drv_seen) / sizeof(r->drv_seen[0])) {
			r->drv_seen[r->ndrv_seen].need = need;
			r->drv_seen[r->ndrv_seen].env = env;
			r->drv_seen[r->ndrv_seen].vi = r->out->n > before ? before : SIZE_MAX;
			r->drv_seen[r->ndrv_seen].ptx_ok = res;
			r->ndrv_seen++;
		}
		return res;
	}
}

static bool driver_judge(drun_t *r, int need, const char *what0, const char *need_fact,
	const char *need_src, const char *env, const char *fix_alt, bool ok_info)
{
	char cv[24];
	const char *what;
	const struct dkb_minor *mc;
	const struct dkb_toolkit *tk;
	gpuenv_verdict_t *v;
	char needs[16], has[16], compat[16];
	bool ok;

	dk_cuda_str(need, needs, sizeof(needs));
	dk_cuda_str(r->drv_cuda, has, sizeof(has));
	/* "torch 2.2.2+cu121 (CUDA 12.1)", unless what says the version already */
	snprintf(cv, sizeof(cv), "CUDA %s", needs);
	what = strstr(what0, cv) ? what0 : dr_fmt(r, "%s (%s)", what0, cv);
	if (!what)
		return false;
	dk_cuda_str(r->compat_cuda, compat, sizeof(compat));
	tk = dkb_toolkit(r->kb, need);
	mc = dkb_minor_compat(r->kb, CUDA_MAJOR(need));

#define DRIVER_EVIDENCE(v)                                                                   \
	do {                                                                                 \
		if (r->drv_version)                                                          \
			dr_ev(r, v, "driver.version", drv_src(r), "%s", r->drv_version);     \
		if (r->drv_cuda)                                                             \
			dr_ev(r, v, r->drv_cuda_fact, r->drv_cuda_src, "%s", has);           \
		dr_ev(r, v, need_fact, need_src, "%s", needs);                               \
	} while (0)

	if (r->drv_cuda >= need) {
		if (!ok_info)
			return true;
		v = dr_verdict(r, "driver-ok", GPUENV_SEV_INFO, "driver",
			dr_fmt(r, "driver %s", r->drv_version ? r->drv_version : "?"));
		if (!v)
			return true;
		v->env = env;
		DRIVER_EVIDENCE(v);
		v->message = dr_fmt(r, "driver %s supports CUDA <= %s, enough for %s",
			r->drv_version ? r->drv_version : "?", has, what0);
		return true;
	}
	if (r->compat_cuda >= need) {
		const char *lcpath = r->facts->driver.libcuda.path;
		v = dr_verdict(r, "driver-forward-compat", GPUENV_SEV_INFO, "driver",
			dr_fmt(r, "driver %s", r->drv_version ? r->drv_version : "?"));
		if (!v)
			return true;
		v->env = env;
		DRIVER_EVIDENCE(v);
		dr_ev(r, v, "driver.libcuda.path", "libcuda", "%s", lcpath ? lcpath : "?");
		dr_ev(r, v, "driver.libcuda.cuda_version", "libcuda", "%s", compat);
		v->message = dr_fmt(r, "driver %s supports CUDA <= %s, but the libcuda loaded (%s) is "
			"the forward-compatibility package for CUDA %s: %s runs through it "
			"(data-center GPUs only)",
			r->drv_version ? r->drv_version : "?", has,
			lcpath ? lcpath : "?", compat, what);
		return true;
	}
	if (mc && r->drv_version && dk_vcmp(r->drv_version, mc->driver_min, &ok) >= 0 && ok) {
		v = dr_verdict(r, "driver-minor-compat", GPUENV_SEV_INFO, "driver",
			dr_fmt(r, "driver %s", r->drv_version));
		if (!v)
			return false;
		v->env = env;
		DRIVER_EVIDENCE(v);
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml minor_compat cuda_major=%d", mc->major),
			mc->source, "driver >= %s", mc->driver_min);
		if (tk)
			dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml toolkit cuda=%s", needs), tk->source,
				"driver >= %s", tk->driver);
		v->message = dr_fmt(r, "driver %s supports CUDA <= %s; %s runs through minor "
			"version compatibility (any driver >= %s runs CUDA %d.x), with its limits: "
			"the driver cannot JIT PTX built by CUDA %s, and a few newer APIs return "
			"cudaErrorCallRequiresNewerDriver",
			r->drv_version, has, what, mc->driver_min, mc->major, needs);
		if (tk)
			v->fix = dr_fmt(r, "for full CUDA %s support, upgrade the driver to >= %s", needs,
				tk->driver);
		return false;
	}
	v = dr_verdict(r, "driver-too-old", GPUENV_SEV_ERROR, "driver",
		dr_fmt(r, "driver %s", r->drv_version ? r->drv_version : "?"));
	if (!v)
		return false;
	v->env = env;
	DRIVER_EVIDENCE(v);
	if (tk)
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml toolkit cuda=%s", needs), tk->source,
			"driver >= %s", tk->driver);
	if (mc)
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml minor_compat cuda_major=%d", mc->major),
			mc->source, "driver >= %s", mc->driver_min);
	v->message = dr_fmt(r, "driver %s supports CUDA <= %s, not %s (\"CUDA driver "
		"version is insufficient for CUDA runtime version\")%s",
		r->drv_version ? r->drv_version : "?", has, what,
		mc ? dr_fmt(r, ", and minor version compatibility for CUDA %d.x needs a driver >= %s",
			   mc->major, mc->driver_min)
		   : "");
	{
		const char *up = tk && mc ? dr_fmt(r, "upgrade the driver to >= %s (the CUDA %s driver; "
						 ">= %s runs any CUDA %d.x through minor version "
						 "compatibility)", tk->driver, needs,
					  mc->driver_min, mc->major)
			: tk ? dr_fmt(r, "upgrade the driver to >= %s (the CUDA %s driver)", tk->driver,
				      needs)
			: mc ? dr_fmt(r, "upgrade the driver to >= %s (CUDA %d.x through minor version "
				      "compatibility)", mc->driver_min, mc->major)
			     : dr_fmt(r, "upgrade the driver to one that supports CUDA %s", needs);
		v->fix = fix_alt ? dr_fmt(r, "%s; or %s", fix_alt, up) : up;
	}
	return false;
#undef DRIVER_EVIDENCE
}

/* ==== choosing a torch build ============================================= */

static bool driver_runs(drun_t *r, int cuda)
{
	const struct dkb_minor *mc;
	bool ok;

	if (!r->drv_version && !r->drv_cuda)
		return true; /* nothing to judge by */
	if (r->drv_cuda >= cuda || r->compat_cuda >= cuda)
		return true;
	mc = dkb_minor_compat(r->kb, CUDA_MAJOR(cuda));
	return mc && r->drv_version && dk_vcmp(r->drv_version, mc->driver_min, &ok) >= 0 && ok;
}

/* Python "3.12.3" within "3.9".."3.13" (major.minor only). */
static bool python_ok(const char *py, const char *lo, const char *hi)
{
	char mm[16];
	const char *p = py;
	size_t n;
	int dots = 0;

	if (!py || !lo || !hi)
		return true;
	while (*p && (isdig(*p) || (*p == '.' && ++dots < 2)))
		p++;
	n = (size_t)(p - py);
	if (n == 0 || n >= sizeof(mm))
		return true;
	memcpy(mm, py, n);
	mm[n] = '\0';
	return dk_vcmp(mm, lo, NULL) >= 0 && dk_vcmp(mm, hi, NULL) <= 0;
}

static bool covers_gpus(drun_t *r, const dkb_torch_variant_t *v)
{
	for (size_t i = 0; i < r->ngpus; i++) {
		dk_cov_t c;
		if (!r->gpus[i].visible || r->gpus[i].maj < 0)
			continue;
		dk_cover_list(v->sm, v->ptx, r->gpus[i].maj, r->gpus[i].min, true, &c);
		if (c.how != DK_COV_CUBIN)
			return false;
	}
	return true;
}

bool dk_same_series(const char *series, const char *version)
{
	size_t n;

	if (!series || !version)
		return false;
	n = strlen(series);
	return strncmp(series, version, n) == 0 &&
		(version[n] == '\0' || version[n] == '.' || version[n] == '+');
}

/* "2.7.1+cu128" -> "2.7" (into out). */
static const char *series_of(const char *v, char *out, size_t outsz)
{
	const char *p = v;
	int dots = 0;
	size_t n;

	while (*p && (isdig(*p) || (*p == '.' && ++dots < 2)))
		p++;
	n = (size_t)(p - v);
	if (n == 0 || n >= outsz)
		return NULL;
	memcpy(out, v, n);
	out[n] = '\0';
	return out;
}

const dkb_torch_variant_t *dr_pick_torch(drun_t *r, const char *from, bool same_series,
	bool need_arch, const char *python)
{
	const dkb_torch_variant_t *all, *best = NULL;
	size_t n = dkb_torch_variants(r->kb, &all);
	char sbuf[32];
	const char *from_series = from ? series_of(from, sbuf, sizeof(sbuf)) : NULL;

	if (from && !from_series)
		return NULL;
	/* first only builds whose arch list is known to cover the GPUs; then,
	 * unless need_arch, builds whose arch list the KB lacks */
	for (int pass = 0; pass < (need_arch ? 1 : 2) && !best; pass++) {
		for (size_t i = 0; i < n; i++) {
			const dkb_torch_variant_t *v = &all[i];
			int c = from_series ? dk_vcmp(v->series, from_series, NULL) : 0;
			if (c < 0 || (same_series && c != 0))
				continue;
			if (pass == 0 ? !v->have_arch || !covers_gpus(r, v) : v->have_arch)
				continue;
			/* the release in use already runs on this Python */
			if (!driver_runs(r, v->cuda) ||
				(!same_series && !python_ok(python, v->python_min, v->python_max)))
				continue;
			if (!best) {
				best = v;
				continue;
			}
			c = dk_vcmp(v->series, best->series, NULL);
			if (c < 0 || (c == 0 && v->cuda > best->cuda))
				best = v;
		}
	}
	return best;
}

const char *dr_torch_cmd(drun_t *r, const dkb_torch_variant_t *v, const char *version, bool force)
{
	const char *ver = version ? version : v->latest;

	return dr_fmt(r, "pip install %storch==%s%s --index-url https://download.pytorch.org/whl/%s",
		force ? "--force-reinstall " : "", ver ? ver : v->series, ver ? "" : ".*", v->tag);
}
