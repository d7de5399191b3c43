/* Queries over the knowledge base: drivers and CUDA, GPUs by name or PCI
 * id, which CUDA code runs on which compute capability, torch builds on a
 * machine, NGC image tags.  The tables are small (hundreds of rows), so
 * every query is a linear scan: no index to build at load time. */
#include "gpuenv/kb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- CUDA and the driver ---------------------------------------------------- */

static bool same_cuda(const gpuenv_kb_ver_t *a, const gpuenv_kb_ver_t *b)
{
	uint32_t am = a->n > 1 ? a->part[1] : 0, bm = b->n > 1 ? b->part[1] : 0;

	return a->n && b->n && a->part[0] == b->part[0] && am == bm;
}

const gpuenv_kb_toolkit_t *gpuenv_kb_toolkit(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *cuda,
	int update)
{
	for (size_t i = 0; i < kb->n_toolkit; i++)
		if (same_cuda(&kb->toolkit[i].cuda, cuda) && kb->toolkit[i].update == update)
			return &kb->toolkit[i];
	return NULL;
}

const gpuenv_kb_wheel_package_t *gpuenv_kb_wheel_package(const gpuenv_kb_t *kb,
	const char *normalized_name)
{
	for (size_t i = 0; normalized_name && i < kb->n_wheel_package; i++)
		if (gpuenv_str_eq_cstr(kb->wheel_package[i].name, normalized_name))
			return &kb->wheel_package[i];
	return NULL;
}

int gpuenv_kb_cuda_min_driver(const gpuenv_kb_t *kb, gpuenv_str_t cuda,
	const gpuenv_kb_toolkit_t **ga)
{
	gpuenv_kb_ver_t v;
	char known[512];
	size_t n = 0;

	*ga = NULL;
	if (gpuenv_kb_cuda_parse(kb->ctx, cuda, &v))
		return kb->ctx->err.code;
	*ga = gpuenv_kb_toolkit(kb, &v, 0);
	if (*ga)
		return 0;
	known[0] = '\0';
	for (size_t i = 0; i < kb->n_toolkit && n + 8 < sizeof(known); i++)
		if (kb->toolkit[i].update == 0) {
			int w = snprintf(known + n, sizeof(known) - n, "%s%.*s", n ? " " : "",
				GPUENV_STR_ARG(kb->toolkit[i].cuda.str));
			if (w > 0)
				n += (size_t)w;
		}
	if (gpuenv_kb_fail_newer(kb, GPUENV_ENOTFOUND, GPUENV_KB_KIND_CUDA, &v, gpuenv_str_n(NULL, 0)))
		return kb->ctx->err.code;
	for (size_t i = 0; i < kb->n_toolkit_known; i++) {
		const gpuenv_kb_toolkit_known_t *k = &kb->toolkit_known[i];
		const gpuenv_kb_minor_compat_t *mc = NULL;
		char where[64];
		if (k->update != 0 || gpuenv_kb_ver_cmp(&k->cuda, &v) != 0)
			continue;
		for (size_t j = 0; j < kb->n_minor_compat; j++)
			if (kb->minor_compat[j].cuda_major == (int64_t)v.part[0])
				mc = &kb->minor_compat[j];
		gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "%.*s is a release the knowledge "
			"base knows (%s), but not its minimum driver: no stored source gives its row of "
			"the release notes' driver table", GPUENV_STR_ARG(k->label),
			gpuenv_kb_row_where(&k->row, where, sizeof(where)));
		if (mc)
			return gpuenv_hint(kb->ctx, "through minor-version compatibility a driver >= %.*s "
				"runs CUDA %lld.x applications, with that rule's limits (`gpuenv kb driver "
				"%.*s`); the release notes give the driver that runs everything",
				GPUENV_STR_ARG(mc->driver_min.str), (long long)mc->cuda_major,
				GPUENV_STR_ARG(mc->driver_min.str));
		return gpuenv_hint(kb->ctx, "the release notes give the minimum driver");
	}
	gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
		"CUDA %u.%u is not a toolkit release the knowledge base knows", v.part[0], v.part[1]);
	return gpuenv_hint(kb->ctx, "known: %s", known);
}

const gpuenv_kb_minor_compat_t *gpuenv_kb_minor_compat(const gpuenv_kb_t *kb, int64_t major)
{
	for (size_t i = 0; i < kb->n_minor_compat; i++)
		if (kb->minor_compat[i].cuda_major == major)
			return &kb->minor_compat[i];
	return NULL;
}

const gpuenv_kb_branch_t *gpuenv_kb_driver_branch(const gpuenv_kb_t *kb,
	const gpuenv_kb_ver_t *driver)
{
	char name[16];

	if (!driver->n)
		return NULL;
	snprintf(name, sizeof(name), "R%u", driver->part[0]);
	for (size_t i = 0; i < kb->n_branch; i++)
		if (gpuenv_str_eq_cstr(kb->branch[i].branch, name))
			return &kb->branch[i];
	return NULL;
}

static int tk_cmp(const gpuenv_kb_toolkit_t *a, const gpuenv_kb_toolkit_t *b)
{
	int c = gpuenv_kb_ver_cmp(&a->cuda, &b->cuda);

	return c ? c : (a->update > b->update) - (a->update < b->update);
}

static bool in_mvc_range(const gpuenv_kb_minor_compat_t *m, const gpuenv_kb_ver_t *driver)
{
	return gpuenv_kb_ver_cmp(driver, &m->driver_min) >= 0 &&
		(!m->driver_below.n || gpuenv_kb_ver_cmp(driver, &m->driver_below) < 0);
}

void gpuenv_kb_driver_max_cuda(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *driver,
	gpuenv_kb_driver_max_t *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < kb->n_toolkit; i++) {
		const gpuenv_kb_toolkit_t *t = &kb->toolkit[i];
		if (gpuenv_kb_ver_cmp(&t->driver_linux, driver) <= 0 &&
			(!out->ga || tk_cmp(t, out->ga) > 0))
			out->ga = t;
	}
	for (size_t i = 0; i < kb->n_minor_compat; i++) {
		const gpuenv_kb_minor_compat_t *m = &kb->minor_compat[i];
		if (in_mvc_range(m, driver) && (!out->mvc || m->cuda_major > out->mvc->cuda_major))
			out->mvc = m;
	}
	out->branch = gpuenv_kb_driver_branch(kb, driver);
}

const gpuenv_kb_rule_t *gpuenv_kb_rule(const gpuenv_kb_t *kb, const char *id)
{
	for (size_t i = 0; i < kb->n_rule; i++)
		if (gpuenv_str_eq_cstr(kb->rule[i].id, id))
			return &kb->rule[i];
	return NULL;
}

/* ---- GPUs --------------------------------------------------------------------------- */

const gpuenv_kb_arch_t *gpuenv_kb_arch(const gpuenv_kb_t *kb, unsigned major, unsigned minor)
{
	for (size_t i = 0; i < kb->n_arch; i++)
		if (kb->arch[i].cc.part[0] == major && kb->arch[i].cc.part[1] == minor)
			return &kb->arch[i];
	return NULL;
}

/* A name as tokens: lower case, split at anything not a letter or digit and
 * between letters and digits ("A100-SXM4" -> a 100 sxm 4), brand words
 * dropped, so "NVIDIA GeForce RTX 5090" and "rtx5090" compare equal. */
#define MAX_TOK 16
#define TOK_LEN 24
struct toks {
	char t[MAX_TOK][TOK_LEN];
	size_t n;
	bool overflow;
};

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void tokenize(gpuenv_str_t s, struct toks *out)
{
	size_t i = 0;

	out->n = 0;
	out->overflow = false;
	while (i < s.len) {
		char buf[TOK_LEN];
		size_t l = 0;
		bool digit;
		if (!is_alpha(s.ptr[i]) && !is_digit(s.ptr[i])) {
			i++;
			continue;
		}
		digit = is_digit(s.ptr[i]);
		while (i < s.len && (digit ? is_digit(s.ptr[i]) : is_alpha(s.ptr[i]))) {
			if (l + 1 < TOK_LEN)
				buf[l++] = (char)(s.ptr[i] | (digit ? 0 : 0x20));
			i++;
		}
		buf[l] = '\0';
		if (!strcmp(buf, "nvidia") || !strcmp(buf, "geforce") || !strcmp(buf, "tesla"))
			continue;
		if (out->n == MAX_TOK) {
			out->overflow = true;
			return;
		}
		memcpy(out->t[out->n++], buf, l + 1);
	}
}

/* a's tokens start b's (a->n <= b->n) */
static bool toks_prefix(const struct toks *a, const struct toks *b)
{
	if (!a->n || a->n > b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->t[i], b->t[i]))
			return false;
	return true;
}

static bool toks_equal(const struct toks *a, const struct toks *b)
{
	return a->n == b->n && toks_prefix(a, b);
}

/* The same tokens without the word Quadro: NVIDIA's lists write "Quadro RTX
 * 8000" and "T1000", the driver "NVIDIA RTX A6000" and "Quadro T1000", and
 * people type "RTX 8000". */
static void toks_unquadro(const struct toks *in, struct toks *out)
{
	out->n = 0;
	out->overflow = in->overflow;
	for (size_t i = 0; i < in->n; i++)
		if (strcmp(in->t[i], "quadro"))
			memcpy(out->t[out->n++], in->t[i], TOK_LEN);
}

/* q starts name n, and what follows is not a model suffix: "GTX 1650" is
 * not a start of "GTX 1650 Ti" nor "GTX 980" of "GTX 980M" (other
 * products), while "RTX PRO 6000" starts "RTX PRO 6000 Blackwell ...". */
static bool toks_starts(const struct toks *q, const struct toks *n)
{
	const char *next;

	if (!toks_prefix(q, n) || q->n == n->n)
		return false;
	next = n->t[q->n];
	if (!is_digit(q->t[q->n - 1][0]))
		return true;
	return strcmp(next, "ti") && strcmp(next, "super") && strcmp(next, "m");
}

static bool parse_hex16(gpuenv_str_t s, int32_t *out)
{
	int32_t v = 0;

	if (s.len != 4)
		return false;
	for (size_t i = 0; i < 4; i++) {
		char c = s.ptr[i] | 0x20;
		int d = is_digit(s.ptr[i]) ? s.ptr[i] - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return false;
		v = v * 16 + d;
	}
	*out = v;
	return true;
}

/* "0x2335", "2335", "10de:2335", "0x233510de" (NVML's pciDeviceId) */
static bool query_pci(gpuenv_str_t q, bool *sure, int32_t *dev)
{
	*sure = false;
	if (q.len == 9 && q.ptr[4] == ':') {
		int32_t ven;
		if (!parse_hex16(gpuenv_str_n(q.ptr, 4), &ven) || ven != 0x10de)
			return false;
		*sure = true;
		return parse_hex16(gpuenv_str_n(q.ptr + 5, 4), dev);
	}
	if (q.len >= 2 && q.ptr[0] == '0' && (q.ptr[1] == 'x' || q.ptr[1] == 'X')) {
		q.ptr += 2;
		q.len -= 2;
		*sure = true;
		if (q.len == 8) {
			int32_t ven;
			if (!parse_hex16(gpuenv_str_n(q.ptr + 4, 4), &ven) || ven != 0x10de)
				return false;
			q.len = 4;
		}
	}
	return parse_hex16(q, dev);
}

static size_t add_match(gpuenv_kb_gpu_match_t *out, size_t max, size_t n,
	const gpuenv_kb_gpu_t *g, const gpuenv_kb_pci_t *p, int how)
{
	for (size_t i = 0; i < n && i < max; i++)
		if (out[i].gpu == g)
			return n;
	if (n < max)
		out[n] = (gpuenv_kb_gpu_match_t){ g, p, how };
	return n + 1;
}

/* the whole name of a [[gpu]] row (pass 0) or a [[pci]] row (pass 1) */
static size_t match_names(const gpuenv_kb_t *kb, const struct toks *qt, bool unquadro,
	gpuenv_kb_gpu_match_t *out, size_t max)
{
	struct toks nt, ns;
	size_t n = 0;

	for (int pass = 0; pass < 2 && !n; pass++) {
		size_t rows = pass ? kb->n_pci : kb->n_gpu;
		for (size_t i = 0; i < rows; i++) {
			tokenize(pass ? kb->pci[i].name : kb->gpu[i].name, &nt);
			if (unquadro) {
				toks_unquadro(&nt, &ns);
				nt = ns;
			}
			if (toks_equal(&nt, qt))
				n = add_match(out, max, n, pass ? kb->pci[i].gpu_row : &kb->gpu[i],
					pass ? &kb->pci[i] : NULL, GPUENV_KB_MATCH_EXACT);
		}
	}
	return n;
}

/* every [[gpu]] name the query starts ("RTX PRO 6000") */
static size_t match_starts(const gpuenv_kb_t *kb, const struct toks *qt,
	gpuenv_kb_gpu_match_t *out, size_t max, size_t n)
{
	struct toks nt;

	for (size_t i = 0; i < kb->n_gpu; i++) {
		tokenize(kb->gpu[i].name, &nt);
		if (toks_starts(qt, &nt))
			n = add_match(out, max, n, &kb->gpu[i], NULL, GPUENV_KB_MATCH_PARTIAL);
	}
	return n;
}

size_t gpuenv_kb_gpu_find(const gpuenv_kb_t *kb, const char *query, gpuenv_kb_gpu_match_t *out,
	size_t max)
{
	gpuenv_str_t q = gpuenv_str_trim(gpuenv_str(query));
	struct toks qt, qs, nt;
	size_t n = 0, best;
	int32_t dev;
	bool sure;

	/* a PCI device id */
	if (query_pci(q, &sure, &dev)) {
		for (size_t i = 0; i < kb->n_pci; i++)
			if (kb->pci[i].device_id == dev)
				n = add_match(out, max, n, kb->pci[i].gpu_row, &kb->pci[i],
					GPUENV_KB_MATCH_PCI);
		if (n || sure)
			return n;
	}
	tokenize(q, &qt);
	if (!qt.n || qt.overflow)
		return 0;
	/* the whole name, as NVIDIA's GPU lists or the driver's table write it */
	if ((n = match_names(kb, &qt, false, out, max)))
		return n;
	/* the same, Quadro aside ("RTX 8000", "Quadro T1000"); a name the query
	 * starts is as good a reading ("RTX 6000": Quadro RTX 6000 or RTX 6000
	 * Ada), so those come too and the answer is ambiguous */
	toks_unquadro(&qt, &qs);
	if (qs.n && (n = match_names(kb, &qs, true, out, max)))
		return match_starts(kb, &qt, out, max, n);
	/* a longer product name: the longest known name it starts with, Quadro
	 * aside only when nothing matched with it */
	for (int unq = 0; unq < 2 && !n; unq++) {
		const struct toks *query_toks = unq ? &qs : &qt;
		best = 0;
		for (int pass = 0; pass < 2; pass++) {
			size_t rows = pass ? kb->n_pci : kb->n_gpu;
			for (size_t i = 0; i < rows; i++) {
				tokenize(pass ? kb->pci[i].name : kb->gpu[i].name, &nt);
				if (unq) {
					struct toks ns;
					toks_unquadro(&nt, &ns);
					nt = ns;
				}
				if (!toks_prefix(&nt, query_toks) || nt.n < best)
					continue;
				if (nt.n > best) {
					best = nt.n;
					n = 0;
				}
				n = add_match(out, max, n, pass ? kb->pci[i].gpu_row : &kb->gpu[i],
					pass ? &kb->pci[i] : NULL, GPUENV_KB_MATCH_PREFIX);
			}
		}
	}
	if (n)
		return n;
	/* the start of names ("RTX PRO 6000"): every one it starts */
	return match_starts(kb, &qt, out, max, 0);
}

static void joined(const struct toks *t, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n; i++) {
		int w = snprintf(buf + n, size - n, "%s%s", i ? " " : "", t->t[i]);
		if (w < 0 || (size_t)w >= size - n)
			return;
		n += (size_t)w;
	}
}

int gpuenv_kb_gpu_lookup(const gpuenv_kb_t *kb, const char *query, gpuenv_kb_gpu_match_t *out)
{
	gpuenv_kb_gpu_match_t m[8];
	size_t n = gpuenv_kb_gpu_find(kb, query, m, 8);

	if (n == 1) {
		*out = m[0];
		return 0;
	}
	memset(out, 0, sizeof(*out));
	if (n > 1) {
		char list[400];
		size_t len = 0;
		for (size_t i = 0; i < n && i < 8; i++) {
			int w = snprintf(list + len, sizeof(list) - len, "%s'%.*s'", i ? ", " : "",
				GPUENV_STR_ARG(m[i].gpu->name));
			if (w < 0 || (size_t)w >= sizeof(list) - len)
				break;
			len += (size_t)w;
		}
		gpuenv_fail(kb->ctx, GPUENV_EDUPLICATE, NULL, 0, 0,
			"'%s' matches %zu GPUs", query, n);
		return gpuenv_hint(kb->ctx, "be more specific: %s%s", list, n > 8 ? ", ..." : "");
	}
	{
		struct toks qt, nt;
		char qs[400], ns[400];
		size_t bestd = SIZE_MAX;
		const gpuenv_kb_gpu_t *best = NULL;
		tokenize(gpuenv_str(query), &qt);
		joined(&qt, qs, sizeof(qs));
		for (size_t i = 0; i < kb->n_gpu && qs[0]; i++) {
			size_t d;
			tokenize(kb->gpu[i].name, &nt);
			joined(&nt, ns, sizeof(ns));
			/* a name the query starts ("GTX 1650" of "GTX 1650 Ti") first */
			d = toks_prefix(&qt, &nt) ? 0 : gpuenv_edit_distance(qs, ns);
			if (d < bestd) {
				bestd = d;
				best = &kb->gpu[i];
			}
		}
		gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
			"no GPU named '%s' in the knowledge base", query);
		if (best && bestd <= 1 + strlen(qs) / 3)
			return gpuenv_hint(kb->ctx, "did you mean '%.*s'?", GPUENV_STR_ARG(best->name));
		return gpuenv_hint(kb->ctx,
			"names as NVIDIA's CUDA GPUs page writes them (\"RTX 5090\", \"H100\") "
			"or a PCI device id (\"0x2335\")");
	}
}

/* ---- CUDA code ------------------------------------------------------------------------ */

bool gpuenv_kb_sm_runs_on(const gpuenv_kb_sm_t *sm, bool ptx, unsigned major, unsigned minor)
{
	if (sm->variant == 'a')
		return sm->major == major && sm->minor == minor;
	if (sm->variant == 'f' || !ptx)
		return sm->major == major && sm->minor <= minor;
	return sm->major < major || (sm->major == major && sm->minor <= minor);
}

static int sm_cmp(const gpuenv_kb_sm_t *a, const gpuenv_kb_sm_t *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	/* a plain target before its variants: it is the general one */
	return (a->variant != 0) - (b->variant != 0);
}

bool gpuenv_kb_code_covers(const gpuenv_kb_sm_t *cubins, size_t ncubins, const gpuenv_kb_sm_t *ptx,
	size_t nptx, unsigned major, unsigned minor, gpuenv_kb_cover_t *out)
{
	const gpuenv_kb_sm_t *best = NULL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ncubins; i++)
		if (gpuenv_kb_sm_runs_on(&cubins[i], false, major, minor) &&
			(!best || sm_cmp(&cubins[i], best) > 0))
			best = &cubins[i];
	if (best) {
		out->ok = true;
		out->by = best;
		return true;
	}
	for (size_t i = 0; i < nptx; i++)
		if (gpuenv_kb_sm_runs_on(&ptx[i], true, major, minor) &&
			(!best || sm_cmp(&ptx[i], best) > 0))
			best = &ptx[i];
	if (best) {
		out->ok = true;
		out->via_ptx = true;
		out->by = best;
	}
	return out->ok;
}

const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_arch_first_cuda(const gpuenv_kb_t *kb,
	unsigned major, unsigned minor, const gpuenv_kb_toolkit_t **ga)
{
	const gpuenv_kb_cuda_arch_list_t *first = NULL;

	for (size_t i = 0; i < kb->n_cuda_arch_list; i++) {
		const gpuenv_kb_cuda_arch_list_t *a = &kb->cuda_arch_list[i];
		for (uint32_t j = 0; j < a->sm.n; j++) {
			const gpuenv_kb_sm_t *s = &a->sm.v[j];
			if (s->major == major && s->minor == minor && !s->variant &&
				(!first || gpuenv_kb_ver_cmp(&a->cuda_min, &first->cuda_min) < 0))
				first = a;
		}
	}
	if (ga)
		*ga = first ? gpuenv_kb_toolkit(kb, &first->cuda_min, 0) : NULL;
	return first;
}

const char *gpuenv_kb_sms_range(const gpuenv_kb_sm_t *v, size_t n, char *buf, size_t size)
{
	const gpuenv_kb_sm_t *lo = NULL, *hi = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!lo || sm_cmp(&v[i], lo) < 0)
			lo = &v[i];
		if (!hi || sm_cmp(&v[i], hi) > 0)
			hi = &v[i];
	}
	if (!lo)
		snprintf(buf, size, "none");
	else if (lo == hi)
		snprintf(buf, size, "%.*s", GPUENV_STR_ARG(lo->str));
	else
		snprintf(buf, size, "%.*s..%.*s", GPUENV_STR_ARG(lo->str), GPUENV_STR_ARG(hi->str));
	return buf;
}

/* ---- torch ------------------------------------------------------------------------------ */

const gpuenv_kb_torch_arch_list_t *gpuenv_kb_torch_arch(const gpuenv_kb_t *kb,
	const gpuenv_kb_torch_variant_t *v)
{
	for (size_t i = 0; i < kb->n_torch_arch_list; i++) {
		const gpuenv_kb_torch_arch_list_t *a = &kb->torch_arch_list[i];
		if (gpuenv_kb_ver_cmp(&a->torch, &v->torch) == 0 && gpuenv_str_eq(a->tag, v->tag))
			return a;
	}
	return NULL;
}

struct rctx {
	gpuenv_arena_t *arena;
	gpuenv_kb_torch_verdict_t *out;
	int err;
};

static void reason(struct rctx *rc, int verdict, const gpuenv_kb_row_t *src,
	const gpuenv_kb_row_t *src2, const char *fmt, ...) GPUENV_PRINTF(5, 6);

static void reason(struct rctx *rc, int verdict, const gpuenv_kb_row_t *src,
	const gpuenv_kb_row_t *src2, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	gpuenv_kb_reason_t *r;

	if (rc->out->n_reason >= GPUENV_KB_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r = &rc->out->reason[rc->out->n_reason];
	r->text = gpuenv_arena_strndup(rc->arena, buf, strlen(buf));
	if (!r->text) {
		rc->err = -ENOMEM;
		return;
	}
	r->verdict = verdict;
	r->src = src;
	r->src2 = src2;
	rc->out->n_reason++;
	if (verdict == GPUENV_KB_NO)
		rc->out->verdict = GPUENV_KB_NO;
	else if (verdict == GPUENV_KB_UNKNOWN && rc->out->verdict == GPUENV_KB_YES)
		rc->out->verdict = GPUENV_KB_UNKNOWN;
}

#define V(x) GPUENV_STR_ARG((x).str)

const gpuenv_kb_toolkit_t *gpuenv_kb_driver_predates_gpu(const gpuenv_kb_t *kb,
	const gpuenv_kb_target_t *t, const gpuenv_kb_cuda_arch_list_t **first)
{
	const gpuenv_kb_toolkit_t *ga = NULL;
	const gpuenv_kb_cuda_arch_list_t *f = NULL;

	if (t->has_cc && t->has_driver)
		f = gpuenv_kb_arch_first_cuda(kb, t->cc_major, t->cc_minor, &ga);
	if (first)
		*first = f;
	if (!f || !ga || gpuenv_kb_ver_cmp(&t->driver, &ga->driver_linux) >= 0)
		return NULL;
	return ga;
}

/* The GPU must be one the driver knows: a driver older than the first
 * toolkit that builds for its architecture predates it. */
static void check_driver_knows_gpu(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	struct rctx *rc)
{
	const gpuenv_kb_cuda_arch_list_t *first;
	const gpuenv_kb_toolkit_t *ga = gpuenv_kb_driver_predates_gpu(kb, t, &first);

	if (!ga)
		return;
	reason(rc, GPUENV_KB_NO, &first->row, &ga->row,
		"driver %.*s predates sm_%u%u: the oldest toolkit that builds for it is CUDA %.*s, "
		"which needs driver >= %.*s",
		V(t->driver), t->cc_major, t->cc_minor, V(first->cuda_min), V(ga->driver_linux));
}

static void check_driver_cuda(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_torch_variant_t *v, const gpuenv_kb_driver_cuda_t *dc, struct rctx *rc)
{
	const gpuenv_kb_rule_t *fwd = gpuenv_kb_rule(kb, "forward-compat");
	bool dc_gpu = gpuenv_kb_target_datacenter(t) == 1;
	const char *fc = dc_gpu ? " (a data-center GPU can use the CUDA forward-compatibility package)" : "";
	char drv[48];

	if (t->has_driver)
		snprintf(drv, sizeof(drv), "driver %.*s", V(t->driver));
	else
		snprintf(drv, sizeof(drv), "the driver (CUDA <= %.*s)", V(t->driver_cuda));
	switch (dc->runs) {
	case GPUENV_KB_RUNS_GA:
		if (dc->ga && t->has_driver && !t->driver_cuda.n)
			reason(rc, GPUENV_KB_YES, &dc->ga->row, NULL,
				"driver %.*s >= %.*s, the minimum for CUDA %.*s", V(t->driver),
				V(dc->ga->driver_linux), V(v->cuda));
		else
			reason(rc, GPUENV_KB_YES, dc->ga ? &dc->ga->row : NULL, NULL,
				"%s supports CUDA <= %.*s, enough for CUDA %.*s", drv, V(dc->max),
				V(v->cuda));
		break;
	case GPUENV_KB_RUNS_FORWARD_COMPAT:
		reason(rc, GPUENV_KB_YES, fwd ? &fwd->row : NULL, dc->ga ? &dc->ga->row : NULL,
			"%s supports CUDA <= %.*s; the forward-compatibility libcuda in use runs "
			"CUDA %.*s",
			drv, dc->max.n ? (int)dc->max.str.len : 1, dc->max.n ? dc->max.str.ptr : "?",
			V(t->compat_cuda));
		break;
	case GPUENV_KB_RUNS_MINOR_COMPAT:
		reason(rc, GPUENV_KB_YES, &dc->mvc->row, dc->ga ? &dc->ga->row : NULL,
			"driver %.*s < %.*s (CUDA %.*s) but >= %.*s: CUDA %u.x runs through "
			"minor-version compatibility, with its limits (no JIT of newer PTX)",
			V(t->driver), dc->ga ? (int)dc->ga->driver_linux.str.len : 1,
			dc->ga ? dc->ga->driver_linux.str.ptr : "?", V(v->cuda), V(dc->mvc->driver_min),
			v->cuda.part[0]);
		break;
	case GPUENV_KB_RUNS_NO:
		if (!dc->ga)
			reason(rc, GPUENV_KB_NO, NULL, NULL, "%s supports CUDA <= %.*s, not %.*s%s", drv,
				V(dc->max), V(v->cuda), fc);
		else if (dc->mvc && t->has_driver)
			reason(rc, GPUENV_KB_NO, &dc->ga->row, &dc->mvc->row,
				"%s < %.*s, the minimum for CUDA %.*s, and below %.*s, where "
				"minor-version compatibility for CUDA %u.x starts%s",
				drv, V(dc->ga->driver_linux), V(v->cuda), V(dc->mvc->driver_min),
				v->cuda.part[0], fc);
		else
			reason(rc, GPUENV_KB_NO, &dc->ga->row, dc_gpu && fwd ? &fwd->row : NULL,
				"%s < %.*s, the minimum for CUDA %.*s%s", drv, V(dc->ga->driver_linux),
				V(v->cuda), fc);
		break;
	default:
		reason(rc, GPUENV_KB_UNKNOWN, &v->row, NULL,
			"CUDA %.*s has no toolkit row in cuda.toml", V(v->cuda));
		break;
	}
}

static void check_code(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_torch_variant_t *v, const gpuenv_kb_torch_arch_list_t *al,
	const gpuenv_kb_driver_cuda_t *dc, struct rctx *rc)
{
	const gpuenv_kb_arch_t *arch = gpuenv_kb_arch(kb, t->cc_major, t->cc_minor);
	gpuenv_kb_cover_t cov;
	char range[64];

	if (arch && arch->last_cuda_major != GPUENV_KB_NONE && v->cuda.n &&
		v->cuda.part[0] > arch->last_cuda_major) {
		reason(rc, GPUENV_KB_NO, &arch->row, NULL,
			"%.*s (%.*s) is supported up to CUDA %lld.x; this build is CUDA %.*s",
			GPUENV_STR_ARG(arch->sm.str), GPUENV_STR_ARG(arch->architecture),
			(long long)arch->last_cuda_major, V(v->cuda));
	}
	if (!al) {
		const gpuenv_kb_cuda_arch_list_t *tl = gpuenv_kb_cuda_arch_list(kb, &v->cuda);
		rc->out->code = GPUENV_KB_CODE_UNKNOWN;
		if (tl && !gpuenv_kb_code_covers(tl->sm.v, tl->sm.n, NULL, 0, t->cc_major,
				  t->cc_minor, &cov))
			reason(rc, GPUENV_KB_UNKNOWN, &v->row, &tl->row,
				"no arch list for torch %.*s %.*s in the knowledge base; CUDA %.*s "
				"builds no cubin that runs on sm_%u%u, so only PTX could",
				V(v->torch), GPUENV_STR_ARG(v->tag), V(v->cuda), t->cc_major, t->cc_minor);
		else if (tl)
			reason(rc, GPUENV_KB_UNKNOWN, &v->row, &tl->row,
				"no arch list for torch %.*s %.*s in the knowledge base; CUDA %.*s can "
				"build %.*s cubins, which run on sm_%u%u",
				V(v->torch), GPUENV_STR_ARG(v->tag), V(v->cuda),
				GPUENV_STR_ARG(cov.by->str), t->cc_major, t->cc_minor);
		else
			reason(rc, GPUENV_KB_UNKNOWN, &v->row, NULL,
				"no arch list for torch %.*s %.*s in the knowledge base", V(v->torch),
				GPUENV_STR_ARG(v->tag));
		return;
	}
	gpuenv_kb_sms_range(al->sm.v, al->sm.n, range, sizeof(range));
	if (!gpuenv_kb_code_covers(al->sm.v, al->sm.n, al->ptx.v, al->ptx.n, t->cc_major,
		    t->cc_minor, &cov)) {
		rc->out->code = GPUENV_KB_CODE_NONE;
		if (al->ptx.n) {
			char pr[64];
			gpuenv_kb_sms_range(al->ptx.v, al->ptx.n, pr, sizeof(pr));
			reason(rc, GPUENV_KB_NO, &al->row, NULL,
				"carries cubins %s and PTX %s: none runs on sm_%u%u", range, pr,
				t->cc_major, t->cc_minor);
		} else
			reason(rc, GPUENV_KB_NO, &al->row, NULL,
				"carries %s and no PTX: nothing runs on sm_%u%u", range, t->cc_major,
				t->cc_minor);
		return;
	}
	rc->out->code = cov.via_ptx ? GPUENV_KB_CODE_PTX : GPUENV_KB_CODE_CUBIN;
	if (!cov.via_ptx) {
		reason(rc, GPUENV_KB_YES, &al->row, NULL, "carries a %.*s cubin, which runs on sm_%u%u",
			GPUENV_STR_ARG(cov.by->str), t->cc_major, t->cc_minor);
		return;
	}
	/* PTX is compiled by the driver, which must know that PTX version:
	 * the driver of the toolkit that wrote it (minor-version
	 * compatibility does not cover JIT) */
	if (dc->runs != GPUENV_KB_RUNS_UNKNOWN && dc->runs != GPUENV_KB_RUNS_GA &&
		dc->runs != GPUENV_KB_RUNS_FORWARD_COMPAT) {
		const gpuenv_kb_rule_t *jit = gpuenv_kb_rule(kb, "ptx-jit");
		reason(rc, GPUENV_KB_NO, &al->row, jit ? &jit->row : NULL,
			"no cubin for sm_%u%u (carries %s); its PTX for %.*s needs the driver to "
			"JIT-compile CUDA %.*s PTX, which needs driver >= %.*s",
			t->cc_major, t->cc_minor, range, GPUENV_STR_ARG(cov.by->str), V(v->cuda),
			dc->ga ? (int)dc->ga->driver_linux.str.len : 1,
			dc->ga ? dc->ga->driver_linux.str.ptr : "?");
		return;
	}
	reason(rc, GPUENV_KB_YES, &al->row, NULL,
		"no cubin for sm_%u%u, but its PTX for %.*s is JIT-compiled by the driver "
		"(slower first start)",
		t->cc_major, t->cc_minor, GPUENV_STR_ARG(cov.by->str));
}

int gpuenv_kb_torch_check(const gpuenv_kb_t *kb, const gpuenv_kb_target_t *t,
	const gpuenv_kb_torch_variant_t *v, gpuenv_arena_t *arena, gpuenv_kb_torch_verdict_t *out)
{
	struct rctx rc = { arena, out, 0 };
	gpuenv_kb_driver_cuda_t dc;
	bool drv = t->has_driver || t->driver_cuda.n;

	memset(out, 0, sizeof(*out));
	out->variant = v;
	out->arch = gpuenv_kb_torch_arch(kb, v);
	out->verdict = GPUENV_KB_YES;
	gpuenv_kb_driver_runs_cuda(kb, t, &v->cuda, &dc);
	out->runs = dc.runs;
	if (t->has_cc && t->has_driver)
		check_driver_knows_gpu(kb, t, &rc);
	if (drv)
		check_driver_cuda(kb, t, v, &dc, &rc);
	if (t->has_cc)
		check_code(kb, t, v, out->arch, &dc, &rc);
	if (!t->has_cc && !drv)
		out->verdict = GPUENV_KB_UNKNOWN;
	if (rc.err)
		return gpuenv_oom(kb->ctx, "judging a torch build");
	return 0;
}

/* ---- NGC images ------------------------------------------------------------------------ */

size_t gpuenv_kb_image_find(const gpuenv_kb_t *kb, const char *ref,
	const gpuenv_kb_container_t **out, size_t max)
{
	gpuenv_str_t r = gpuenv_str_trim(gpuenv_str(ref)), image, tag = GPUENV_STR_NULL;
	const char *slash, *colon = NULL;
	char full[256];
	size_t n = 0;

	if (!r.len || r.len >= 200 + 72)
		return 0;
	/* IMAGE:TAG@sha256:...: the tag is what the knowledge base knows */
	if ((slash = memchr(r.ptr, '@', r.len)) != NULL)
		r.len = (size_t)(slash - r.ptr);
	if (!r.len || r.len >= 200)
		return 0;
	/* the tag follows the last ':' after the last '/' (a registry may have a port) */
	slash = NULL;
	for (size_t i = 0; i < r.len; i++)
		if (r.ptr[i] == '/')
			slash = r.ptr + i;
	for (const char *p = slash ? slash : r.ptr; p < r.ptr + r.len; p++)
		if (*p == ':')
			colon = p;
	image = colon ? gpuenv_str_n(r.ptr, (size_t)(colon - r.ptr)) : r;
	if (colon)
		tag = gpuenv_str_n(colon + 1, (size_t)(r.ptr + r.len - colon - 1));
	/* "pytorch" and "nvidia/pytorch" are short for nvcr.io/nvidia/pytorch */
	if (!memchr(image.ptr, '/', image.len))
		snprintf(full, sizeof(full), "nvcr.io/nvidia/%.*s", GPUENV_STR_ARG(image));
	else if (gpuenv_str_startswith(image, "nvidia/"))
		snprintf(full, sizeof(full), "nvcr.io/%.*s", GPUENV_STR_ARG(image));
	else
		snprintf(full, sizeof(full), "%.*s", GPUENV_STR_ARG(image));
	for (size_t i = 0; i < kb->n_container; i++) {
		const gpuenv_kb_container_t *c = &kb->container[i];
		if (!gpuenv_str_ieq(c->image, gpuenv_str(full)))
			continue;
		if (tag.ptr && !gpuenv_str_eq(c->tag, tag))
			continue;
		if (n < max)
			out[n] = c;
		n++;
	}
	return n;
}
