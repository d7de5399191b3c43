/* Kubernetes node labels from the facts (gpuenv/labels.h, docs/labels.md).
 *
 * GFD's label names and value formats are those of NVIDIA/k8s-device-plugin's
 * docs/gpu-feature-discovery/README.md ("Generated Labels") and of how its
 * labelers form the values (internal/lm): the driver version split at its
 * dots (the revision kept as written, "04"), the CUDA version the driver
 * reports as MAJOR and MINOR, memory in MiB (bytes / 2^20), the product
 * sanitised, the family from the compute capability.  The syntax checks
 * follow Kubernetes' apimachinery (IsQualifiedName, IsValidLabelValue) and
 * NFD's namespace rules (pkg/apis/nfd/validate). */
#include "gpuenv/labels.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void gpuenv_labels_init(gpuenv_labels_t *ls, gpuenv_arena_t *arena)
{
	memset(ls, 0, sizeof(*ls));
	ls->arena = arena;
}

/* ---- syntax ---------------------------------------------------------------- */

static bool inner(char c)
{
	return gpuenv_is_alnum(c) || c == '-' || c == '_' || c == '.';
}

static bool say(const char **why, const char *s)
{
	if (why)
		*why = s;
	return false;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63; empty when allow_empty */
static bool segment_valid(gpuenv_str_t s, bool allow_empty, const char **why)
{
	if (!s.len)
		return allow_empty ? true : say(why, "it is empty");
	if (s.len > GPUENV_LABEL_NAME_MAX)
		return say(why, "it is longer than 63 characters");
	if (!gpuenv_is_alnum(s.ptr[0]) || !gpuenv_is_alnum(s.ptr[s.len - 1]))
		return say(why, "it must begin and end with a letter or a digit");
	for (size_t i = 0; i < s.len; i++)
		if (!inner(s.ptr[i]))
			return say(why, "only letters, digits, '-', '_' and '.' are allowed");
	return true;
}

bool gpuenv_label_name_valid(gpuenv_str_t s, const char **why)
{
	return segment_valid(s, false, why);
}

bool gpuenv_label_value_valid(gpuenv_str_t s, const char **why)
{
	return segment_valid(s, true, why);
}

/* RFC 1123 subdomain: lower-case labels [a-z0-9]([-a-z0-9]*[a-z0-9])? joined
 * by dots, at most 253 in all */
bool gpuenv_label_prefix_valid(gpuenv_str_t s, const char **why)
{
	size_t start = 0;
	if (!s.len)
		return say(why, "it is empty");
	if (s.len > GPUENV_LABEL_PREFIX_MAX)
		return say(why, "a DNS subdomain is at most 253 characters");
	for (size_t i = 0; i <= s.len; i++) {
		if (i < s.len && s.ptr[i] != '.') {
			char c = s.ptr[i];
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
				return say(why, "a DNS subdomain has only lower-case letters, digits, '-' and '.'");
			continue;
		}
		if (i == start)
			return say(why, "a DNS subdomain has no empty part between dots");
		if (s.ptr[start] == '-' || s.ptr[i - 1] == '-')
			return say(why, "each part of a DNS subdomain begins and ends with a letter or a digit");
		if (i - start > 63)
			return say(why, "each part of a DNS subdomain is at most 63 characters");
		start = i + 1;
	}
	return true;
}

bool gpuenv_label_key_valid(gpuenv_str_t s, const char **why)
{
	const char *slash = memchr(s.ptr, '/', s.len);
	if (!slash)
		return gpuenv_label_name_valid(s, why);
	size_t pl = (size_t)(slash - s.ptr);
	if (!gpuenv_label_prefix_valid(gpuenv_str_n(s.ptr, pl), why))
		return false;
	return gpuenv_label_name_valid(gpuenv_str_n(slash + 1, s.len - pl - 1), why);
}

int gpuenv_labels_prefix_check(gpuenv_ctx_t *ctx, const char *prefix, const char *what)
{
	const char *why = NULL;
	if (!gpuenv_label_prefix_valid(gpuenv_str(prefix), &why)) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s \"%s\": not a label prefix: %s", what, prefix, why);
		return gpuenv_hint(ctx, "a label prefix is a DNS subdomain you own, as \"%s\" or \"gpuenv.example.com\"",
			GPUENV_LABELS_DEFAULT_PREFIX);
	}
	/* NFD: kubernetes.io and its subdomains are always denied, but for its
	 * own feature. and profile.node.kubernetes.io namespaces */
	if ((!strcmp(prefix, "kubernetes.io") || gpuenv_str_endswith(gpuenv_str(prefix), ".kubernetes.io")) &&
		strcmp(prefix, "feature.node.kubernetes.io") && strcmp(prefix, "profile.node.kubernetes.io") &&
		!gpuenv_str_endswith(gpuenv_str(prefix), ".feature.node.kubernetes.io") &&
		!gpuenv_str_endswith(gpuenv_str(prefix), ".profile.node.kubernetes.io")) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s \"%s\": node-feature-discovery never publishes labels "
			"under kubernetes.io or its subdomains", what, prefix);
		return gpuenv_hint(ctx, "use a domain of your own, \"%s\", or a subdomain of "
			"feature.node.kubernetes.io", GPUENV_LABELS_DEFAULT_PREFIX);
	}
	if (!strcmp(prefix, "k8s.io") || gpuenv_str_endswith(gpuenv_str(prefix), ".k8s.io")) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s \"%s\": Kubernetes reserves k8s.io and its "
			"subdomains for its own components", what, prefix);
		return gpuenv_hint(ctx, "use a domain of your own, as \"%s\"", GPUENV_LABELS_DEFAULT_PREFIX);
	}
	if (!strcmp(prefix, "nvidia.com")) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "%s \"%s\": GPU Feature Discovery's namespace; gpuenv's "
			"own labels would mix with its labels", what, prefix);
		return gpuenv_hint(ctx, "use a domain of your own, as \"%s\"", GPUENV_LABELS_DEFAULT_PREFIX);
	}
	return 0;
}

/* GFD's sanitise: drop what is not [A-Za-z0-9-_. ], then the remaining
 * words joined by single dashes; our addition: the ends trimmed to
 * alphanumerics (a value may not begin or end otherwise). */
gpuenv_str_t gpuenv_label_sanitize(gpuenv_arena_t *arena, gpuenv_str_t s)
{
	char *t = gpuenv_arena_strndup(arena, s.ptr ? s.ptr : "", s.ptr ? s.len : 0);
	if (!t)
		return (gpuenv_str_t){ NULL, 0 };
	size_t n = gpuenv_text_unescape(t, s.ptr ? s.len : 0), o = 0;
	bool gap = false;
	for (size_t i = 0; i < n; i++) {
		char c = t[i];
		if (c == ' ') {
			gap = o > 0;
			continue;
		}
		if (!inner(c))
			continue;
		if (gap)
			t[o++] = '-';
		gap = false;
		t[o++] = c;
	}
	size_t b = 0;
	while (b < o && !gpuenv_is_alnum(t[b]))
		b++;
	while (o > b && !gpuenv_is_alnum(t[o - 1]))
		o--;
	t[o] = '\0';
	return gpuenv_str_n(t + b, o - b);
}

/* ---- the set ------------------------------------------------------------------ */

static int vwarn(gpuenv_labels_t *ls, const char *fmt, va_list ap)
{
	if (ls->nwarnings == ls->capwarnings) {
		size_t cap = ls->capwarnings ? 2 * ls->capwarnings : 8;
		if (cap > GPUENV_LABELS_MAX)
			return 0; /* enough said */
		const char **w = gpuenv_arena_alloc(ls->arena, cap * sizeof(*w));
		if (!w)
			return gpuenv_oom(ls->arena->ctx, "the labels");
		if (ls->nwarnings)
			memcpy(w, ls->warnings, ls->nwarnings * sizeof(*w));
		ls->warnings = w;
		ls->capwarnings = cap;
	}
	gpuenv_str_t t = gpuenv_arena_vprintf(ls->arena, fmt, ap);
	if (!t.ptr)
		return gpuenv_oom(ls->arena->ctx, "the labels");
	ls->warnings[ls->nwarnings++] = t.ptr;
	return 0;
}

int gpuenv_labels_warn(gpuenv_labels_t *ls, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vwarn(ls, fmt, ap);
	va_end(ap);
	return r;
}

const char *gpuenv_labels_get(const gpuenv_labels_t *ls, const char *key)
{
	for (size_t i = 0; i < ls->n; i++)
		if (!strcmp(ls->items[i].key, key))
			return ls->items[i].value;
	return NULL;
}

int gpuenv_labels_set(gpuenv_labels_t *ls, const char *key, const char *value)
{
	gpuenv_ctx_t *ctx = ls->arena->ctx;
	const char *why = NULL;
	gpuenv_str_t v = gpuenv_str(value ? value : "");

	if (!gpuenv_label_key_valid(gpuenv_str(key), &why))
		return gpuenv_labels_warn(ls, "label %s left out: not a label name (%s)", key, why);
	if (!gpuenv_label_value_valid(v, NULL)) {
		gpuenv_str_t e = gpuenv_label_sanitize(ls->arena, v);
		if (!e.ptr)
			return gpuenv_oom(ctx, "the labels");
		if (!gpuenv_label_value_valid(e, &why))
			return gpuenv_labels_warn(ls, "label %s left out: its value \"%s\" is not a label value "
				"even escaped (%s)", key, value, why);
		if (gpuenv_labels_warn(ls, "label %s: value \"%s\" escaped to \"%s\"", key, value, e.ptr))
			return -ENOMEM;
		v = e;
	}
	for (size_t i = 0; i < ls->n; i++)
		if (!strcmp(ls->items[i].key, key)) {
			if (!(ls->items[i].value = gpuenv_arena_strndup(ls->arena, v.ptr, v.len)))
				return gpuenv_oom(ctx, "the labels");
			return 0;
		}
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? 2 * ls->cap : 32;
		if (cap > GPUENV_LABELS_MAX)
			return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "more than %d labels", GPUENV_LABELS_MAX);
		gpuenv_label_t *it = gpuenv_arena_alloc(ls->arena, cap * sizeof(*it));
		if (!it)
			return gpuenv_oom(ctx, "the labels");
		if (ls->n)
			memcpy(it, ls->items, ls->n * sizeof(*it));
		ls->items = it;
		ls->cap = cap;
	}
	gpuenv_label_t *l = &ls->items[ls->n];
	if (!(l->key = gpuenv_arena_strndup(ls->arena, key, strlen(key))) ||
		!(l->value = gpuenv_arena_strndup(ls->arena, v.ptr, v.len)))
		return gpuenv_oom(ctx, "the labels");
	ls->n++;
	return 0;
}

int gpuenv_labels_setf(gpuenv_labels_t *ls, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gpuenv_str_t v = gpuenv_arena_vprintf(ls->arena, fmt, ap);
	va_end(ap);
	if (!v.ptr)
		return gpuenv_oom(ls->arena->ctx, "the labels");
	return gpuenv_labels_set(ls, key, v.ptr);
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const gpuenv_label_t *)a)->key, ((const gpuenv_label_t *)b)->key);
}

void gpuenv_labels_sort(gpuenv_labels_t *ls)
{
	if (ls->n > 1)
		qsort(ls->items, ls->n, sizeof(ls->items[0]), label_cmp);
}

int gpuenv_mig_strategy_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "none"))
		return GPUENV_MIG_NONE;
	if (!strcmp(s, "single"))
		return GPUENV_MIG_SINGLE;
	if (!strcmp(s, "mixed"))
		return GPUENV_MIG_MIXED;
	return -1;
}

const char *gpuenv_labels_target_key(gpuenv_labels_t *ls, const char *prefix, const char *name)
{
	const char *why = NULL;
	gpuenv_str_t n = gpuenv_arena_printf(ls->arena, "target.%s", name);
	if (!n.ptr) {
		gpuenv_oom(ls->arena->ctx, "the labels");
		return NULL;
	}
	if (!gpuenv_label_name_valid(n, &why)) {
		gpuenv_labels_warn(ls, "target %s has no label: %s is not a label name (%s); a target name of "
			"at most 56 letters, digits, '-', '_' or '.' has one", name, n.ptr, why);
		return NULL;
	}
	gpuenv_str_t k = gpuenv_arena_printf(ls->arena, "%s/%s", prefix ? prefix : GPUENV_LABELS_DEFAULT_PREFIX, n.ptr);
	if (!k.ptr)
		gpuenv_oom(ls->arena->ctx, "the labels");
	return k.ptr;
}

/* ---- GFD's labels ---------------------------------------------------------------- */

/* GFD's family of a compute capability (internal/lm/resource.go getArchFamily) */
static const char *gfd_family(int major, int minor)
{
	switch (major) {
	case 1:
		return "tesla";
	case 2:
		return "fermi";
	case 3:
		return "kepler";
	case 5:
		return "maxwell";
	case 6:
		return "pascal";
	case 7:
		return minor < 5 ? "volta" : "turing";
	case 8:
		return minor < 9 ? "ampere" : "ada-lovelace";
	case 9:
		return "hopper";
	case 10:
	case 12:
		return "blackwell";
	case 13:
		return "rubin";
	default:
		return "undefined";
	}
}

/* The GPUs GFD labels: those NVML lists (an NVML index), with a name; on a
 * Jetson, which has no NVML, the GPU CUDA enumerates (GFD's Tegra path,
 * internal/resource/cuda-lib.go) */
static bool gfd_device(const gpuenv_facts_t *f, const gpuenv_facts_gpu_t *g)
{
	return g->name && (g->index >= 0 || (f->jetson.present && g->integrated != GPUENV_TRI_FALSE));
}

static bool mig_enabled(const gpuenv_facts_gpu_t *g)
{
	return g->have_mig && g->mig_current && !strcmp(g->mig_current, "enabled");
}

/* A MIG device's profile as GFD names it: NVML calls the device "NVIDIA
 * A100-SXM4-40GB MIG 1g.5gb"; GFD takes the profile "1g.5gb" ('+' of
 * "+me" profiles as '.'). */
static const char *mig_profile(gpuenv_arena_t *a, const char *name)
{
	const char *p = name, *m;
	for (const char *s = name; (m = strstr(s, "MIG ")); s = m + 4)
		p = m + 4;
	char *t = gpuenv_arena_strndup(a, p, strlen(p));
	for (char *c = t; c && *c; c++)
		if (*c == '+')
			*c = '.';
	return t;
}

/* "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb": the parts sanitised, joined by '-' */
static const char *product(gpuenv_arena_t *a, const char *model, const char *mig, const char *profile)
{
	gpuenv_str_t m = gpuenv_label_sanitize(a, gpuenv_str(model));
	gpuenv_str_t p = profile ? gpuenv_label_sanitize(a, gpuenv_str(profile)) : gpuenv_str("");
	if (!m.ptr || !p.ptr)
		return NULL;
	if (!mig)
		return m.ptr;
	return gpuenv_arena_printf(a, "%.*s%sMIG%s%.*s", (int)m.len, m.ptr, m.len ? "-" : "", p.len ? "-" : "",
		(int)p.len, p.ptr).ptr;
}

typedef struct lab {
	gpuenv_ctx_t *ctx;
	gpuenv_labels_t *ls;
	const gpuenv_facts_t *f;
	const char *prefix;
	int rc;
} lab_t;

static void put(lab_t *L, const char *key, const char *value)
{
	if (!L->rc && !value)
		L->rc = gpuenv_oom(L->ctx, "the labels");
	if (!L->rc)
		L->rc = gpuenv_labels_set(L->ls, key, value);
}

static void GPUENV_PRINTF(3, 4) putf(lab_t *L, const char *key, const char *fmt, ...)
{
	va_list ap;
	if (L->rc)
		return;
	va_start(ap, fmt);
	gpuenv_str_t v = gpuenv_arena_vprintf(L->ls->arena, fmt, ap);
	va_end(ap);
	put(L, key, v.ptr);
}

static void own(lab_t *L, const char *name, const char *value)
{
	if (L->rc)
		return;
	gpuenv_str_t k = gpuenv_arena_printf(L->ls->arena, "%s/%s", L->prefix, name);
	if (!k.ptr)
		L->rc = gpuenv_oom(L->ctx, "the labels");
	else
		put(L, k.ptr, value);
}

static void GPUENV_PRINTF(2, 3) warn(lab_t *L, const char *fmt, ...)
{
	va_list ap;
	if (L->rc)
		return;
	va_start(ap, fmt);
	L->rc = vwarn(L->ls, fmt, ap);
	va_end(ap);
}

/* nvidia.com/cuda.driver*, cuda.runtime*: the driver's version split at its
 * dots ("X.Y[.Z]", as GFD refuses others), the CUDA it reports */
static void gfd_versions(lab_t *L, size_t ndev)
{
	const gpuenv_facts_driver_t *d = &L->f->driver;
	/* GFD on a Jetson (no NVML) writes the driver version as
	 * "unknown.unknown.unknown" (cuda-lib.go GetDriverVersion) */
	const char *ver = d->version ? d->version : L->f->jetson.present && ndev ? "unknown.unknown.unknown" : NULL;
	if (ver) {
		const char *v = ver, *d1 = strchr(v, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
		if (!d1 || (d2 && strchr(d2 + 1, '.')))
			warn(L, "driver version \"%s\" is not X.Y[.Z]: no driver labels (GFD writes none either)", v);
		else {
			int n1 = (int)(d1 - v), n2 = d2 ? (int)(d2 - d1 - 1) : (int)strlen(d1 + 1);
			const char *rev = d2 ? d2 + 1 : "";
			putf(L, "nvidia.com/cuda.driver.major", "%.*s", n1, v);
			putf(L, "nvidia.com/cuda.driver.minor", "%.*s", n2, d1 + 1);
			put(L, "nvidia.com/cuda.driver.rev", rev);
			putf(L, "nvidia.com/cuda.driver-version.major", "%.*s", n1, v);
			putf(L, "nvidia.com/cuda.driver-version.minor", "%.*s", n2, d1 + 1);
			put(L, "nvidia.com/cuda.driver-version.revision", rev);
			put(L, "nvidia.com/cuda.driver-version.full", v);
		}
	}
	long long cv = d->cuda_version_int;
	unsigned cmaj = 0, cmin = 0;
	if (cv <= 0 && d->cuda_version && sscanf(d->cuda_version, "%u.%u", &cmaj, &cmin) == 2)
		cv = (long long)cmaj * 1000 + (long long)cmin * 10;
	if (cv > 0) {
		/* NVML's systemGetCudaDriverVersion: 1000 * major + 10 * minor */
		putf(L, "nvidia.com/cuda.runtime.major", "%lld", cv / 1000);
		putf(L, "nvidia.com/cuda.runtime.minor", "%lld", cv % 1000 / 10);
		putf(L, "nvidia.com/cuda.runtime-version.major", "%lld", cv / 1000);
		putf(L, "nvidia.com/cuda.runtime-version.minor", "%lld", cv % 1000 / 10);
		putf(L, "nvidia.com/cuda.runtime-version.full", "%lld.%lld", cv / 1000, cv % 1000 / 10);
	}
}

/* gpu.mode: every GPU's PCI class one of VGA (graphics) or 3D controller
 * (compute), else unknown */
static const char *gfd_mode(const gpuenv_facts_t *f)
{
	const char *cls = NULL;
	for (size_t i = 0; i < f->npci; i++) {
		const gpuenv_facts_pci_t *p = &f->pci[i];
		if (!p->kind || strcmp(p->kind, "gpu"))
			continue;
		if (!p->class_)
			return "unknown";
		if (cls && strcmp(cls, p->class_))
			return "unknown";
		cls = p->class_;
	}
	if (!cls)
		return "unknown";
	unsigned long c = strtoul(cls, NULL, 16);
	return c == 0x030000 ? "graphics" : c == 0x030200 ? "compute" : "unknown";
}

/* The labels of one kind of full GPU: product, count, memory, compute
 * capability and family (GFD's resource labeler) */
static void gfd_gpu(lab_t *L, const gpuenv_facts_gpu_t *g, size_t count)
{
	int maj, min;
	put(L, "nvidia.com/gpu.product", product(L->ls->arena, g->name, NULL, NULL));
	putf(L, "nvidia.com/gpu.count", "%zu", count);
	if (g->memory_total > 0 && g->memory_total / (1024 * 1024) > 0)
		putf(L, "nvidia.com/gpu.memory", "%lld", g->memory_total / (1024 * 1024));
	if (gpuenv_facts_gpu_cc(g, &maj, &min) && maj > 0) {
		putf(L, "nvidia.com/gpu.compute.major", "%d", maj);
		putf(L, "nvidia.com/gpu.compute.minor", "%d", min);
		put(L, "nvidia.com/gpu.family", gfd_family(maj, min));
	}
}

/* single strategy, a configuration GFD calls invalid */
static void mig_invalid(lab_t *L, const gpuenv_facts_gpu_t *g, const char *why)
{
	warn(L, "MIG strategy single: %s: GFD's mig-strategy-invalid labels", why);
	put(L, "nvidia.com/gpu.product", product(L->ls->arena, g->name, "MIG", "INVALID"));
	put(L, "nvidia.com/gpu.count", "0");
	put(L, "nvidia.com/gpu.replicas", "0");
	put(L, "nvidia.com/gpu.sharing-strategy", "");
	put(L, "nvidia.com/gpu.memory", "0");
}

static void mig_labels(lab_t *L, int strategy)
{
	const gpuenv_facts_t *f = L->f;
	const gpuenv_facts_gpu_t *first = NULL;
	size_t enabled = 0, disabled = 0, empty = 0;
	for (size_t i = 0; i < f->ngpus; i++) {
		const gpuenv_facts_gpu_t *g = &f->gpus[i];
		if (!gfd_device(f, g))
			continue;
		if (mig_enabled(g)) {
			first = first ? first : g;
			enabled++;
			empty += g->nmig_instances == 0;
		} else
			disabled++;
	}
	put(L, "nvidia.com/mig.strategy", strategy == GPUENV_MIG_SINGLE ? "single" : "mixed");
	if (!enabled)
		return; /* no MIG-enabled GPU: as strategy none */
	/* the MIG devices by profile, in the order met */
	const char *names[64];
	size_t counts[64], nprof = 0;
	const gpuenv_facts_gpu_t *parent[64];
	for (size_t i = 0; i < f->ngpus && !L->rc; i++) {
		const gpuenv_facts_gpu_t *g = &f->gpus[i];
		if (!gfd_device(f, g) || !mig_enabled(g))
			continue;
		for (size_t j = 0; j < g->nmig_instances; j++) {
			const char *nm = g->mig_instances[j].name;
			if (!nm)
				continue;
			const char *p = mig_profile(L->ls->arena, nm);
			size_t k;
			if (!p) {
				L->rc = gpuenv_oom(L->ctx, "the labels");
				return;
			}
			for (k = 0; k < nprof && strcmp(names[k], p); k++)
				;
			if (k == nprof) {
				if (nprof == sizeof(names) / sizeof(names[0]))
					continue;
				names[nprof] = p;
				parent[nprof] = g;
				counts[nprof++] = 0;
			}
			counts[k]++;
		}
	}
	if (strategy == GPUENV_MIG_SINGLE) {
		const char *bad = empty ? "at least one MIG-enabled GPU has no MIG device"
			: disabled	 ? "GPUs with MIG enabled and disabled on one node"
			: nprof != 1	 ? "more than one MIG profile on the node"
					 : NULL;
		if (bad) {
			mig_invalid(L, first, bad);
			return;
		}
		put(L, "nvidia.com/gpu.product", product(L->ls->arena, parent[0]->name, "MIG", names[0]));
		putf(L, "nvidia.com/gpu.count", "%zu", counts[0]);
		/* gpu.memory would be the MIG device's, from NVML's device
		 * attributes, which the probe does not read: the whole GPU's
		 * would mislead */
		for (size_t i = 0; i < L->ls->n; i++)
			if (!strcmp(L->ls->items[i].key, "nvidia.com/gpu.memory")) {
				L->ls->items[i] = L->ls->items[--L->ls->n];
				break;
			}
		warn(L, "MIG strategy single: nvidia.com/gpu.memory, gpu.multiprocessors, gpu.slices.* and "
			"gpu.engines.* left out: they are NVML's MIG device attributes, which the probe does not read");
		return;
	}
	for (size_t k = 0; k < nprof && !L->rc; k++) {
		gpuenv_str_t base = gpuenv_arena_printf(L->ls->arena, "nvidia.com/mig-%s", names[k]);
		if (!base.ptr) {
			L->rc = gpuenv_oom(L->ctx, "the labels");
			return;
		}
		gpuenv_str_t kc = gpuenv_arena_printf(L->ls->arena, "%s.count", base.ptr);
		gpuenv_str_t kp = gpuenv_arena_printf(L->ls->arena, "%s.product", base.ptr);
		if (!kc.ptr || !kp.ptr) {
			L->rc = gpuenv_oom(L->ctx, "the labels");
			return;
		}
		putf(L, kc.ptr, "%zu", counts[k]);
		put(L, kp.ptr, product(L->ls->arena, parent[k]->name, "MIG", names[k]));
	}
	if (nprof)
		warn(L, "MIG strategy mixed: the nvidia.com/mig-<profile>.memory, .multiprocessors, .slices.* and "
			".engines.* labels left out: they are NVML's MIG device attributes, which the probe does not read");
}

static void gfd_labels(lab_t *L, const gpuenv_labels_opts_t *o, size_t *ndev)
{
	const gpuenv_facts_t *f = L->f;
	/* the kinds of GPU, by name; GFD labels one of them when they differ
	 * (which one, its map order decides): gpuenv the most numerous, the
	 * first listed on a tie */
	const gpuenv_facts_gpu_t *best = NULL;
	size_t bestn = 0, kinds = 0;
	*ndev = 0;
	for (size_t i = 0; i < f->ngpus; i++) {
		const gpuenv_facts_gpu_t *g = &f->gpus[i];
		size_t n = 0;
		bool seen = false;
		if (!gfd_device(f, g))
			continue;
		(*ndev)++;
		for (size_t j = 0; j < f->ngpus; j++) {
			if (!gfd_device(f, &f->gpus[j]) || strcmp(f->gpus[j].name, g->name))
				continue;
			seen |= j < i;
			n++;
		}
		if (seen)
			continue;
		kinds++;
		if (n > bestn) {
			best = g;
			bestn = n;
		}
	}
	gfd_versions(L, *ndev);
	if (!best) {
		/* GFD writes nothing on a node without GPUs; the count says so
		 * to a selector (docs/labels.md) */
		put(L, "nvidia.com/gpu.count", "0");
		return;
	}
	if (kinds > 1)
		warn(L, "GPUs of %zu models on this node: GFD's nvidia.com/gpu.* labels describe one, here the "
			"most numerous (%s)", kinds, best->name);
	gfd_gpu(L, best, bestn);
	put(L, "nvidia.com/gpu.machine",
		product(L->ls->arena, o->machine_type && *o->machine_type ? o->machine_type : "unknown", NULL, NULL));
	bool capable = false;
	for (size_t i = 0; i < f->ngpus; i++)
		capable |= gfd_device(f, &f->gpus[i]) && f->gpus[i].have_mig && f->gpus[i].mig_current;
	put(L, "nvidia.com/mig.capable", capable ? "true" : "false");
	put(L, "nvidia.com/gpu.mode", gfd_mode(f));
	if (o->mig_strategy != GPUENV_MIG_NONE)
		mig_labels(L, o->mig_strategy);
}

/* ---- gpuenv's own ---------------------------------------------------------------- */

static const char *lib_version(const gpuenv_target_t *t, const char *family)
{
	for (size_t i = 0; t && i < t->nlibs; i++)
		if (t->libs[i].name && !strcmp(t->libs[i].name, family))
			return t->libs[i].version;
	return NULL;
}

static void own_labels(lab_t *L, const gpuenv_target_t *m, size_t ndev)
{
	const gpuenv_facts_t *f = L->f;
	bool ok = f->driver.state && !strcmp(f->driver.state, "ok");
	own(L, "present", ok && ndev ? "true" : "false");
	if (f->driver.state)
		own(L, "driver.state", f->driver.state);
	/* the SM architecture, when the GPUs share one */
	int maj = -1, min = -1;
	bool mixed = false;
	for (size_t i = 0; i < f->ngpus; i++) {
		int a, b;
		if (!gfd_device(f, &f->gpus[i]) || !gpuenv_facts_gpu_cc(&f->gpus[i], &a, &b))
			continue;
		if (maj >= 0 && (a != maj || b != min))
			mixed = true;
		maj = a;
		min = b;
	}
	if (mixed)
		warn(L, "GPUs of more than one compute capability: no %s/gpu.sm label", L->prefix);
	else if (maj >= 0) {
		gpuenv_str_t v = gpuenv_arena_printf(L->ls->arena, "sm_%d%d", maj, min);
		own(L, "gpu.sm", v.ptr);
	}
	for (size_t i = 0; f->have_toolkits && i < f->ntoolkits; i++)
		if (f->toolkits[i].version.version) {
			own(L, "cuda.toolkit", f->toolkits[i].version.version);
			break;
		}
	static const struct {
		const char *family, *label;
	} libs[] = { { "cudnn", "cudnn" }, { "nccl", "nccl" }, { "nvinfer", "tensorrt" } };
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		const char *v = lib_version(m, libs[i].family);
		if (v)
			own(L, libs[i].label, v);
	}
}

int gpuenv_labels_from_facts(gpuenv_ctx_t *ctx, gpuenv_labels_t *ls, const gpuenv_facts_t *f,
	const gpuenv_target_t *machine, const gpuenv_labels_opts_t *opts)
{
	gpuenv_labels_opts_t def = { 0 };
	lab_t L = { .ctx = ctx, .ls = ls, .f = f };
	size_t ndev = 0;
	if (!opts)
		opts = &def;
	L.prefix = opts->prefix ? opts->prefix : GPUENV_LABELS_DEFAULT_PREFIX;
	if (opts->no_gfd) {
		for (size_t i = 0; i < f->ngpus; i++)
			ndev += gfd_device(f, &f->gpus[i]);
	} else
		gfd_labels(&L, opts, &ndev);
	own_labels(&L, machine, ndev);
	return L.rc;
}

/* ---- writers ------------------------------------------------------------------ */

int gpuenv_labels_write_text(const gpuenv_labels_t *ls, gpuenv_buf_t *out)
{
	for (size_t i = 0; i < ls->n; i++) {
		int r = gpuenv_buf_printf(out, "%s=%s\n", ls->items[i].key, ls->items[i].value);
		if (r)
			return r;
	}
	return 0;
}

static bool rfc3339(long long t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	return gmtime_r(&tt, &tm) && strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
}

int gpuenv_labels_write_nfd(gpuenv_ctx_t *ctx, const gpuenv_labels_t *ls, long long expiry, const char *source,
	gpuenv_buf_t *out)
{
	char when[64];
	size_t start = out->len;
	int r = gpuenv_buf_printf(out, "# node-feature-discovery local feature file written by gpuenv labels%s%s\n",
		source ? " from " : "", source ? source : "");
	if (!r && expiry != -1) {
		if (!rfc3339(expiry, when, sizeof(when)))
			return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "expiry time %lld is out of range", expiry);
		r = gpuenv_buf_printf(out, "# +expiry-time=%s\n", when);
	}
	if (!r)
		r = gpuenv_labels_write_text(ls, out);
	if (r)
		return r == -ENOMEM ? gpuenv_oom(ctx, "the feature file") : r;
	if (out->len - start > GPUENV_LABELS_NFD_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "the feature file would be %zu bytes; "
			"node-feature-discovery ignores feature files over %d", out->len - start, GPUENV_LABELS_NFD_MAX);
	return 0;
}

/* ---- --expiry ------------------------------------------------------------------ */

static bool digits(const char *s, size_t n, int *out)
{
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return n > 0;
}

/* days since 1970-01-01 of a proleptic Gregorian date */
static long long days_from_civil(long long y, int m, int d)
{
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	long long yoe = y - era * 400;
	long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM), as Go's
 * time.RFC3339 parses it (NFD's format); 't' and 'z' allowed as RFC 3339
 * allows. */
static bool parse_rfc3339(const char *s, long long *out)
{
	size_t n = strlen(s), i = 19;
	int Y, M, D, h, m, sec, oh = 0, om = 0, sign = 0;
	if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
		s[16] != ':' || !digits(s, 4, &Y) || !digits(s + 5, 2, &M) || !digits(s + 8, 2, &D) ||
		!digits(s + 11, 2, &h) || !digits(s + 14, 2, &m) || !digits(s + 17, 2, &sec))
		return false;
	if (s[i] == '.') {
		size_t j = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == j)
			return false;
	}
	if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == n)
		sign = 0;
	else if ((s[i] == '+' || s[i] == '-') && n - i == 6 && s[i + 3] == ':' && digits(s + i + 1, 2, &oh) &&
		 digits(s + i + 4, 2, &om))
		sign = s[i] == '+' ? 1 : -1;
	else
		return false;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || (M == 2 && D == 29 && !leap) || h > 23 || m > 59 ||
		sec > 59 || oh > 23 || om > 59)
		return false;
	*out = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec - sign * (oh * 3600 + om * 60);
	return true;
}

int gpuenv_labels_expiry_parse(gpuenv_ctx_t *ctx, const char *s, long long now, long long *out)
{
	size_t n = strlen(s), k = 0;
	unsigned long long v = 0;
	while (k < n && k < 12 && s[k] >= '0' && s[k] <= '9')
		v = v * 10 + (unsigned long long)(s[k++] - '0');
	if (k && (k == n || (k + 1 == n && strchr("smhd", s[k])))) {
		unsigned long long mul = k == n || s[k] == 's' ? 1 : s[k] == 'm' ? 60 : s[k] == 'h' ? 3600 : 86400;
		/* at most a hundred years ahead */
		if (v > 3156000000ULL / mul)
			goto bad;
		*out = now + (long long)(v * mul);
		return 0;
	}
	if (parse_rfc3339(s, out))
		return 0;
bad:
	gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "--expiry %s: not a duration or an RFC 3339 time", s);
	return gpuenv_hint(ctx, "a duration from now (\"90s\", \"15m\", \"1h\", \"2d\") or a time as NFD's "
		"+expiry-time takes it (\"2026-12-01T20:00:00Z\")");
}
