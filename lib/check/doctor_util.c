/* What doctor and preflight share: small parsers, facts readers, the
 * verdict builder and the rules both run (machine state, driver vs CUDA). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"
#include "gpuenv/kb.h"

/* ==== the knowledge base ================================================= */

int dr_kb_open(gpuenv_ctx_t *ctx, const gpuenv_kb_t *given, unsigned files, gpuenv_kb_t **own,
	const gpuenv_kb_t **out)
{
	int r;

	*own = NULL;
	*out = given;
	if (given)
		return 0;
	if ((r = gpuenv_kb_load_files(ctx, NULL, files, own)) != 0)
		return r;
	*out = *own;
	return 0;
}

const char *dr_kb_cite(drun_t *r, const gpuenv_kb_row_t *row, const char *table)
{
	char where[64];

	if (!row)
		return NULL;
	return dr_fmt(r, "data/kb/%s %s: %.*s", gpuenv_kb_row_where(row, where, sizeof(where)), table,
		GPUENV_STR_ARG(row->source));
}

gpuenv_kb_ver_t dr_cuda_ver(int cuda, char *buf)
{
	gpuenv_kb_ver_t v;

	memset(&v, 0, sizeof(v));
	if (cuda <= 0)
		return v;
	dk_cuda_str(cuda, buf, 16);
	gpuenv_kb_ver_parse(gpuenv_str(buf), &v);
	return v;
}

/* ==== small parsers ====================================================== */

/* The leading dotted number of s ("9.19.0.56", "580.65.06", "2.7.1+cu128"
 * -> "2.7.1"; at most 4 parts) as a KB version. */
static bool lead_ver(const char *s, gpuenv_kb_ver_t *v)
{
	size_t n = 0, parts = 1;

	if (!s || !gpuenv_is_digit(*s))
		return false;
	while (gpuenv_is_digit(s[n]) || (s[n] == '.' && gpuenv_is_digit(s[n + 1]) && ++parts <= 4))
		n++;
	return gpuenv_kb_ver_parse(gpuenv_str_n(s, n), v);
}

int dk_cuda_parse(const char *s)
{
	gpuenv_kb_ver_t v;

	/* the KB's version parser; a bare major ("13", from a package name)
	 * is that major's .0, a third part (12.8.1) the update */
	if (!s || !gpuenv_kb_ver_parse(gpuenv_str(s), &v) || v.n > 3 || v.part[0] == 0 ||
		v.part[0] > 99 || (v.n > 1 && v.part[1] > 9))
		return 0;
	return (int)(v.part[0] * 1000 + (v.n > 1 ? v.part[1] : 0) * 10);
}

void dk_cuda_str(int v, char *out, size_t outsz)
{
	snprintf(out, outsz, "%d.%d", CUDA_MAJOR(v), CUDA_MINOR(v));
}

int dk_vcmp(const char *a, const char *b, bool *ok)
{
	gpuenv_kb_ver_t x, y;
	bool good = lead_ver(a, &x) && lead_ver(b, &y);

	if (ok)
		*ok = good;
	return good ? gpuenv_kb_ver_cmp(&x, &y) : 0;
}

long dk_vmajor(const char *s)
{
	gpuenv_kb_ver_t v;

	return lead_ver(s, &v) ? (long)v.part[0] : -1;
}

/* ---- coverage: gpuenv_kb_code_covers over the lists as given ------------- */

/* a target's text, NUL-terminated, in one of out's buffers */
static const char *sm_text(dk_cov_t *out, int slot, gpuenv_str_t s)
{
	snprintf(out->text[slot], sizeof(out->text[slot]), "%.*s", GPUENV_STR_ARG(s));
	return out->text[slot];
}

static int sm_order(const gpuenv_kb_sm_t *a, const gpuenv_kb_sm_t *b)
{
	return a->major != b->major ? (a->major < b->major ? -1 : 1)
	       : a->minor != b->minor ? (a->minor < b->minor ? -1 : 1)
				      : 0;
}

static void cover(const gpuenv_kb_sm_t *cub, size_t ncub, const gpuenv_kb_sm_t *ptx, size_t nptx,
	int maj, int min, bool ptx_ok, dk_cov_t *out)
{
	const gpuenv_kb_sm_t *lo = NULL, *hi = NULL;
	gpuenv_kb_cover_t c;

	memset(out, 0, sizeof(*out));
	out->ncubins = ncub;
	out->nptx = nptx;
	for (size_t i = 0; i < ncub; i++) {
		if (!lo || sm_order(&cub[i], lo) < 0)
			lo = &cub[i];
		if (!hi || sm_order(&cub[i], hi) > 0)
			hi = &cub[i];
	}
	out->lo = lo ? sm_text(out, 2, lo->str) : NULL;
	out->hi = hi ? sm_text(out, 3, hi->str) : NULL;
	if (maj < 0 || min < 0)
		return;
	if (!gpuenv_kb_code_covers(cub, ncub, ptx, nptx, (unsigned)maj, (unsigned)min, &c))
		return;
	if (!c.via_ptx) {
		out->how = DK_COV_CUBIN;
		out->by = sm_text(out, 0, c.by->str);
	} else if (ptx_ok) {
		out->how = DK_COV_PTX;
		out->by = sm_text(out, 0, c.by->str);
	} else
		out->ptx = sm_text(out, 1, c.by->str);
}

#define MAX_CODE 256 /* targets of one binary looked at */

void dk_cover_strs(const gpuenv_facts_strs_t *cubins, const gpuenv_facts_strs_t *ptx, int maj,
	int min, bool ptx_ok, dk_cov_t *out)
{
	gpuenv_kb_sm_t c[MAX_CODE], p[MAX_CODE];
	size_t nc = 0, np = 0;

	/* "sm_90a" / "compute_90" as the probe writes them; a capability
	 * ("9.0") is not a code target */
	for (size_t i = 0; cubins && i < cubins->n && nc < MAX_CODE; i++) {
		const char *s = cubins->items[i];
		nc += s && !strchr(s, '.') && gpuenv_kb_sm_parse(gpuenv_str(s), &c[nc]);
	}
	for (size_t i = 0; ptx && i < ptx->n && np < MAX_CODE; i++) {
		const char *s = ptx->items[i];
		np += s && !strchr(s, '.') && gpuenv_kb_sm_parse(gpuenv_str(s), &p[np]);
	}
	cover(c, nc, p, np, maj, min, ptx_ok, out);
}

void dk_cover_kb(const gpuenv_kb_sms_t *cubins, const gpuenv_kb_sms_t *ptx, int maj, int min,
	bool ptx_ok, dk_cov_t *out)
{
	cover(cubins->v, cubins->n, ptx->v, ptx->n, maj, min, ptx_ok, out);
}

/* ==== verdicts =========================================================== */

#define MAX_EVIDENCE 16
#define MAX_VERDICTS 4096 /* a facts file cannot make the output unbounded */

const char *dr_fmt(drun_t *r, const char *fmt, ...)
{
	gpuenv_str_t s;
	va_list ap;

	if (r->err)
		return NULL;
	va_start(ap, fmt);
	s = gpuenv_arena_vprintf(r->arena, fmt, ap);
	va_end(ap);
	if (!s.ptr)
		r->err = -ENOMEM;
	return s.ptr;
}

gpuenv_verdict_t *dr_verdict(drun_t *r, const char *id, int severity, const char *subject,
	const char *target)
{
	gpuenv_verdicts_t *o = r->out;
	gpuenv_verdict_t *v;

	if (r->err || o->n >= MAX_VERDICTS)
		return NULL;
	if (gpuenv_array_grow(r->ctx, r->arena, &o->items, &o->cap, o->n + 1, sizeof(*o->items),
		    MAX_VERDICTS, "the verdicts")) {
		r->err = r->ctx->err.code;
		return NULL;
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
	return a && b && gpuenv_str_ieq(gpuenv_str(a), gpuenv_str(b));
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
	const gpuenv_kb_t *kb, gpuenv_verdicts_t *out)
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
	/* the machine and its host as the KB's rules see it (driver, the CUDA
	 * it runs, a forward-compatibility libcuda): the one converter every
	 * verb uses (gpuenv_target_machine, gpuenv_target_kb_host) */
	if (gpuenv_target_machine(ctx, arena, facts, kb, SIZE_MAX, &r->machine) != 0)
		return gpuenv_oom(ctx, "judging the facts");
	gpuenv_target_kb_host(&r->machine, &r->host);
	/* where the driver's CUDA was read, for the evidence */
	r->drv_cuda = cuda_of(r->machine.driver_cuda, -1);
	r->drv_cuda_src = drv->cuda_version_source;
	if (cuda_of(drv->cuda_version, -1) != 0)
		r->drv_cuda_fact = "driver.cuda_version";
	else if (cuda_of(NULL, drv->cuda_version_int) != 0)
		r->drv_cuda_fact = "driver.cuda_version_int";
	else if (r->drv_cuda) {
		r->drv_cuda_fact = "kb:cuda.toml toolkit (newest CUDA whose driver <= driver.version)";
		r->drv_cuda_src = "kb";
	}
	r->compat_cuda = cuda_of(r->machine.compat_cuda, -1);

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
	char cv[24], nb[16];
	const char *what;
	const gpuenv_kb_minor_compat_t *mc;
	const gpuenv_kb_toolkit_t *tk;
	gpuenv_kb_driver_cuda_t dc;
	gpuenv_kb_ver_t nv = dr_cuda_ver(need, nb);
	gpuenv_verdict_t *v;
	char needs[16], has[16], compat[16];
	int mcmajor;

	dk_cuda_str(need, needs, sizeof(needs));
	dk_cuda_str(r->drv_cuda, has, sizeof(has));
	/* "torch 2.2.2+cu121 (CUDA 12.1)", unless what says the version already */
	snprintf(cv, sizeof(cv), "CUDA %s", needs);
	what = strstr(what0, cv) ? what0 : dr_fmt(r, "%s (%s)", what0, cv);
	if (!what)
		return false;
	dk_cuda_str(r->compat_cuda, compat, sizeof(compat));
	/* the answer is the KB's (gpuenv_kb_driver_runs_cuda); the rest is words */
	gpuenv_kb_driver_runs_cuda(r->kb, &r->host, &nv, &dc);
	tk = dc.ga;
	mc = dc.mvc;
	mcmajor = mc ? (int)mc->cuda_major : 0;

#define DRIVER_EVIDENCE(v)                                                                   \
	do {                                                                                 \
		if (r->drv_version)                                                          \
			dr_ev(r, v, "driver.version", drv_src(r), "%s", r->drv_version);     \
		if (r->drv_cuda)                                                             \
			dr_ev(r, v, r->drv_cuda_fact, r->drv_cuda_src, "%s", has);           \
		dr_ev(r, v, need_fact, need_src, "%s", needs);                               \
	} while (0)
#define TK_EVIDENCE(v)                                                                       \
	dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml toolkit cuda=%s", needs),                     \
		dr_kb_cite(r, &tk->row, "[[toolkit]]"), "driver >= %.*s",                     \
		GPUENV_STR_ARG(tk->driver_linux.str))
#define MC_EVIDENCE(v)                                                                       \
	dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml minor_compat cuda_major=%d", mcmajor),        \
		dr_kb_cite(r, &mc->row, "[[minor_compat]]"), "driver >= %.*s",                \
		GPUENV_STR_ARG(mc->driver_min.str))

	if (dc.runs == GPUENV_KB_RUNS_GA) {
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
	if (dc.runs == GPUENV_KB_RUNS_FORWARD_COMPAT) {
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
	if (dc.runs == GPUENV_KB_RUNS_MINOR_COMPAT) {
		v = dr_verdict(r, "driver-minor-compat", GPUENV_SEV_INFO, "driver",
			dr_fmt(r, "driver %s", r->drv_version));
		if (!v)
			return false;
		v->env = env;
		DRIVER_EVIDENCE(v);
		MC_EVIDENCE(v);
		if (tk)
			TK_EVIDENCE(v);
		v->message = dr_fmt(r, "driver %s supports CUDA <= %s; %s runs through minor "
			"version compatibility (any driver >= %.*s runs CUDA %d.x), with its limits: "
			"the driver cannot JIT PTX built by CUDA %s, and a few newer APIs return "
			"cudaErrorCallRequiresNewerDriver",
			r->drv_version, has, what, GPUENV_STR_ARG(mc->driver_min.str), mcmajor, needs);
		if (tk)
			v->fix = dr_fmt(r, "for full CUDA %s support, upgrade the driver to >= %.*s", needs,
				GPUENV_STR_ARG(tk->driver_linux.str));
		return false;
	}
	v = dr_verdict(r, "driver-too-old", GPUENV_SEV_ERROR, "driver",
		dr_fmt(r, "driver %s", r->drv_version ? r->drv_version : "?"));
	if (!v)
		return false;
	v->env = env;
	DRIVER_EVIDENCE(v);
	if (tk)
		TK_EVIDENCE(v);
	if (mc)
		MC_EVIDENCE(v);
	v->message = dr_fmt(r, "driver %s supports CUDA <= %s, not %s (\"CUDA driver "
		"version is insufficient for CUDA runtime version\")%s",
		r->drv_version ? r->drv_version : "?", has, what,
		mc ? dr_fmt(r, ", and minor version compatibility for CUDA %d.x needs a driver >= %.*s",
			   mcmajor, GPUENV_STR_ARG(mc->driver_min.str))
		   : "");
	{
		const char *up = tk && mc ? dr_fmt(r, "upgrade the driver to >= %.*s (the CUDA %s driver; "
						 ">= %.*s runs any CUDA %d.x through minor version "
						 "compatibility)", GPUENV_STR_ARG(tk->driver_linux.str), needs,
					  GPUENV_STR_ARG(mc->driver_min.str), mcmajor)
			: tk ? dr_fmt(r, "upgrade the driver to >= %.*s (the CUDA %s driver)",
				      GPUENV_STR_ARG(tk->driver_linux.str), needs)
			: mc ? dr_fmt(r, "upgrade the driver to >= %.*s (CUDA %d.x through minor version "
				      "compatibility)", GPUENV_STR_ARG(mc->driver_min.str), mcmajor)
			     : dr_fmt(r, "upgrade the driver to one that supports CUDA %s", needs);
		v->fix = fix_alt ? dr_fmt(r, "%s; or %s", fix_alt, up) : up;
	}
	return false;
#undef DRIVER_EVIDENCE
#undef TK_EVIDENCE
#undef MC_EVIDENCE
}

void dr_rule_driver_knows_gpus(drun_t *r, const char *what)
{
	for (size_t i = 0; i < r->ngpus && !r->err; i++) {
		const struct dgpu *g = &r->gpus[i];
		const gpuenv_kb_cuda_arch_list_t *first;
		const gpuenv_kb_toolkit_t *ga;
		gpuenv_kb_target_t t = r->host;
		gpuenv_verdict_t *v;
		bool seen = false;

		if (!g->visible || g->maj < 0)
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = r->gpus[k].visible && r->gpus[k].maj == g->maj && r->gpus[k].min == g->min;
		if (seen)
			continue;
		t.has_cc = true;
		t.cc_major = (unsigned)g->maj;
		t.cc_minor = (unsigned)g->min;
		if (!(ga = gpuenv_kb_driver_predates_gpu(r->kb, &t, &first)))
			continue;
		v = dr_verdict(r, "driver-predates-gpu", GPUENV_SEV_ERROR, "gpu", dr_gpu_label(r, g));
		if (!v)
			return;
		v->gpu = (int)g->i;
		dr_ev(r, v, "driver.version", drv_src(r), "%s", r->drv_version);
		dr_ev(r, v, dr_fmt(r, "gpus[%zu].compute_capability", g->i),
			dr_gpu_src(g, "compute_capability"), "%d.%d", g->maj, g->min);
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml arch_list sm_%d%d", g->maj, g->min),
			dr_kb_cite(r, &first->row, "[[arch_list]]"), "first built by CUDA %.*s",
			GPUENV_STR_ARG(first->cuda_min.str));
		dr_ev_kb(r, v, dr_fmt(r, "kb:cuda.toml toolkit cuda=%.*s", GPUENV_STR_ARG(first->cuda_min.str)),
			dr_kb_cite(r, &ga->row, "[[toolkit]]"), "driver >= %.*s",
			GPUENV_STR_ARG(ga->driver_linux.str));
		v->message = dr_fmt(r, "driver %s predates sm_%d%d (%s): the oldest toolkit that builds "
			"for it is CUDA %.*s, which needs driver >= %.*s; %s cannot run there",
			r->drv_version, g->maj, g->min, dr_gpu_label(r, g),
			GPUENV_STR_ARG(first->cuda_min.str), GPUENV_STR_ARG(ga->driver_linux.str),
			what ? what : "no CUDA application");
		v->fix = dr_fmt(r, "upgrade the driver to >= %.*s", GPUENV_STR_ARG(ga->driver_linux.str));
	}
}

/* ==== choosing a torch build ============================================= */

const gpuenv_kb_torch_variant_t *dr_pick_torch(drun_t *r, const char *current, bool need_cubin,
	const char *python, gpuenv_kb_pick_t *out)
{
	size_t cap = r->machine.ngpus ? r->machine.ngpus : 1;
	gpuenv_kb_target_t *ts = gpuenv_arena_calloc(r->arena, cap, sizeof(*ts));
	gpuenv_kb_pick_req_t req;
	gpuenv_kb_pick_t pk;
	size_t nt;

	if (!ts) {
		r->err = -ENOMEM;
		return NULL;
	}
	/* one target per compute capability of the visible GPUs: the KB's view
	 * of the machine every verb takes (gpuenv_target_kb) */
	nt = gpuenv_target_kb(r->kb, &r->machine, ts, cap);
	memset(&req, 0, sizeof(req));
	req.targets = ts;
	req.n_targets = nt;
	req.current = current;
	req.need_cubin = need_cubin;
	req.python = python;
	req.allow_driver_upgrade = true;
	if (gpuenv_kb_torch_pick(r->kb, &req, r->arena, &pk)) {
		r->err = -ENOMEM;
		return NULL;
	}
	if (out)
		*out = pk;
	return pk.variant;
}

bool dr_same_release(const gpuenv_kb_torch_variant_t *v, const char *version)
{
	gpuenv_kb_ver_t x;

	if (!v || !version)
		return false;
	/* the release of "2.7.1+cu128": its first two parts */
	if (!gpuenv_kb_ver_parse(gpuenv_str_n(version, strspn(version, "0123456789.")), &x))
		return false;
	return x.n >= 2 && x.part[0] == v->torch.part[0] && x.part[1] == v->torch.part[1];
}

const char *dr_torch_cmd(drun_t *r, const gpuenv_kb_torch_variant_t *v, const char *version,
	bool force)
{
	const char *c = gpuenv_kb_torch_install_cmd(r->kb, v, version, force, r->arena);

	if (!c)
		r->err = -ENOMEM;
	return c;
}

int dk_name_cuda_major(const char *n, char *lib, size_t libsz)
{
	const char *p;
	long v;

	lib[0] = '\0';
	if (strncmp(n, "nvidia-", 7) == 0 && (p = strrchr(n, '-')) && strncmp(p, "-cu", 3) == 0 &&
		p[3] >= '1' && p[3] <= '9') {
		const char *q = p + 3;
		v = 0;
		while (*q >= '0' && *q <= '9' && v < 1000)
			v = v * 10 + (*q++ - '0');
		if (*q || v < 9 || v > 99)
			return 0;
		snprintf(lib, libsz, "%.*s", (int)(p - n), n);
		return (int)v;
	}
	if (strncmp(n, "cupy-cuda", 9) == 0 && n[9] >= '1' && n[9] <= '9' && n[10] >= '0' &&
		n[10] <= '9') {
		snprintf(lib, libsz, "cupy");
		return (n[9] - '0') * 10 + (n[10] - '0');
	}
	if ((strncmp(n, "jax-cuda", 8) == 0) && n[8] >= '1' && n[8] <= '9' && n[9] >= '0' &&
		n[9] <= '9' && n[10] == '-') {
		snprintf(lib, libsz, "jax-%s", n + 11);
		return (n[8] - '0') * 10 + (n[9] - '0');
	}
	if (strncmp(n, "tensorrt-cu", 11) == 0 && n[11] >= '1' && n[11] <= '9' && n[12] >= '0' &&
		n[12] <= '9' && (n[13] == '\0' || n[13] == '-')) {
		snprintf(lib, libsz, "tensorrt%s", n + 13);
		return (n[11] - '0') * 10 + (n[12] - '0');
	}
	return 0;
}
