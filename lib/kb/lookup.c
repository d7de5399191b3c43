/* Lookups over the knowledge base: rows found by what names them, nothing
 * judged (the judgements are compat.c's, above).  Toolkits and their minimum
 * drivers, minor-version rows, driver branches, rules, GPUs by name or PCI
 * id, which architectures a toolkit builds for, torch builds by version
 * and their indexes, images by reference (NGC rows, Docker Hub tags through
 * hub.c).  The tables are small (hundreds of rows), so every lookup is a
 * linear scan: no index to build at load time. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kb_int.h"

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

static void tokenize(gpuenv_str_t s, struct toks *out)
{
	size_t i = 0;

	out->n = 0;
	out->overflow = false;
	while (i < s.len) {
		char buf[TOK_LEN];
		size_t l = 0;
		bool digit;
		if (!gpuenv_is_alpha(s.ptr[i]) && !gpuenv_is_digit(s.ptr[i])) {
			i++;
			continue;
		}
		digit = gpuenv_is_digit(s.ptr[i]);
		while (i < s.len && (digit ? gpuenv_is_digit(s.ptr[i]) : gpuenv_is_alpha(s.ptr[i]))) {
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
	if (!gpuenv_is_digit(q->t[q->n - 1][0]))
		return true;
	return strcmp(next, "ti") && strcmp(next, "super") && strcmp(next, "m");
}

/* The words a driver or a vendor adds after a product's name: the board
 * ("SXM4", "PCIe", "NVL", "HBM3", "80GB"), a MIG profile ("MIG 1g.5gb"),
 * the laptop and cooling variants ("Laptop GPU", "with Max-Q Design",
 * "Passive").  A name known to the KB followed by anything else is not
 * that GPU: "T4 H100", "A100 or T4", "T4; rm -rf /" name no one GPU. */
static bool suffix_word(const char *w)
{
	static const char *const words[] = { "sxm", "pcie", "nvl", "hbm", "e", "gb", "g", "mb", "mig", "laptop",
		"gpu", "with", "max", "q", "design", "mobile", "passive", "active", "super", "oem", "lp" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(w, words[i]))
			return true;
	return false;
}

/* q's tokens from `from` on are all board words; a number only as part of
 * one ("SXM 4", "HBM 3", "80 GB", "1 g"), never alone ("T4 100"). */
static bool toks_suffix_ok(const struct toks *q, size_t from)
{
	for (size_t i = from; i < q->n; i++) {
		const char *w = q->t[i];
		if (!gpuenv_is_digit(w[0])) {
			if (!suffix_word(w))
				return false;
			continue;
		}
		bool after = i > from && (!strcmp(q->t[i - 1], "sxm") || !strcmp(q->t[i - 1], "hbm") ||
			!strcmp(q->t[i - 1], "pcie"));
		bool before = i + 1 < q->n && (!strcmp(q->t[i + 1], "gb") || !strcmp(q->t[i + 1], "g") ||
			!strcmp(q->t[i + 1], "mb"));
		if (!after && !before)
			return false;
	}
	return true;
}

static bool parse_hex16(gpuenv_str_t s, int32_t *out)
{
	int32_t v = 0;

	if (s.len != 4)
		return false;
	for (size_t i = 0; i < 4; i++) {
		char c = s.ptr[i] | 0x20;
		int d = gpuenv_is_digit(s.ptr[i]) ? s.ptr[i] - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
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

/* A trailing remark in parentheses of words alone, as NVIDIA's own lists
 * write a system beside its GPU ("NVIDIA GB10 (DGX Spark)"), is not part of
 * the name; one with other characters ("T4 (rm -rf /)") stays and fails the
 * name as any other extra text does. */
static gpuenv_str_t drop_remark(gpuenv_str_t q)
{
	size_t open;

	if (!q.len || q.ptr[q.len - 1] != ')')
		return q;
	for (open = q.len - 1; open > 0 && q.ptr[open] != '('; open--)
		;
	if (!open || q.ptr[open] != '(')
		return q;
	for (size_t i = open + 1; i + 1 < q.len; i++)
		if (!gpuenv_is_alnum(q.ptr[i]) && q.ptr[i] != ' ')
			return q;
	return gpuenv_str_trim(gpuenv_str_n(q.ptr, open));
}

static size_t find_q(const gpuenv_kb_t *kb, gpuenv_str_t q, gpuenv_kb_gpu_match_t *out, size_t max);

size_t gpuenv_kb_gpu_find(const gpuenv_kb_t *kb, const char *query, gpuenv_kb_gpu_match_t *out,
	size_t max)
{
	gpuenv_str_t q = gpuenv_str_trim(gpuenv_str(query)), bare = drop_remark(q);
	size_t n = find_q(kb, q, out, max);

	/* names with parentheses of their own ("GeForce GT 640 (GDDR5)") first */
	if (!n && bare.len != q.len)
		n = find_q(kb, bare, out, max);
	return n;
}

static size_t find_q(const gpuenv_kb_t *kb, gpuenv_str_t q, gpuenv_kb_gpu_match_t *out, size_t max)
{
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
				if (!toks_prefix(&nt, query_toks) || nt.n < best ||
					!toks_suffix_ok(query_toks, nt.n))
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

/* The GPUs named inside a query that names none as a whole ("A100 or
 * T4": A100, T4): at each word the longest known name that starts there.
 * How many (found[0..max) filled, each once). */
static size_t names_inside(const gpuenv_kb_t *kb, const struct toks *qt, const gpuenv_kb_gpu_t **found,
	size_t max)
{
	struct toks nt;
	size_t n = 0;

	for (size_t at = 0; at < qt->n;) {
		const gpuenv_kb_gpu_t *best = NULL;
		size_t len = 0;
		for (size_t i = 0; i < kb->n_gpu; i++) {
			tokenize(kb->gpu[i].name, &nt);
			if (nt.n <= len || at + nt.n > qt->n)
				continue;
			size_t k = 0;
			while (k < nt.n && !strcmp(nt.t[k], qt->t[at + k]))
				k++;
			if (k == nt.n) {
				best = &kb->gpu[i];
				len = nt.n;
			}
		}
		if (!best) {
			at++;
			continue;
		}
		size_t j = 0;
		while (j < n && found[j] != best)
			j++;
		if (j == n && n < max)
			found[n++] = best;
		at += len;
	}
	return n;
}

/* "'A', 'B', 'C'" into list (truncated with ", ..." when it does not fit) */
static void name_list(char *list, size_t size, const gpuenv_kb_gpu_t *const *g, size_t n, const char *last)
{
	size_t len = 0;

	list[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(list + len, size - len, "%s'%.*s'", !i ? "" : i + 1 == n ? last : ", ",
			GPUENV_STR_ARG(g[i]->name));
		if (w < 0 || (size_t)w >= size - len) {
			if (size - len > 5)
				memcpy(list + len, ", ...", 6);
			return;
		}
		len += (size_t)w;
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
		const gpuenv_kb_gpu_t *g[8];
		char list[400];
		for (size_t i = 0; i < n && i < 8; i++)
			g[i] = m[i].gpu;
		name_list(list, sizeof(list), g, n < 8 ? n : 8, ", ");
		gpuenv_fail(kb->ctx, GPUENV_EDUPLICATE, NULL, 0, 0,
			"'%s' matches %zu GPUs", query, n);
		return gpuenv_hint(kb->ctx, "be more specific: %s%s", list, n > 8 ? ", ..." : "");
	}
	{
		struct toks qt, nt;
		char qs[400], ns[400], list[400];
		size_t bestd = SIZE_MAX;
		const gpuenv_kb_gpu_t *best = NULL, *inside[8];
		tokenize(gpuenv_str(query), &qt);
		joined(&qt, qs, sizeof(qs));
		/* names of GPUs with other words around them: several GPUs are
		 * no one GPU; one is what was meant, the rest is not its name */
		size_t ninside = qt.overflow ? 0 : names_inside(kb, &qt, inside, 8);
		if (ninside > 1) {
			name_list(list, sizeof(list), inside, ninside, " or ");
			gpuenv_fail(kb->ctx, GPUENV_EDUPLICATE, NULL, 0, 0,
				"'%s' names %zu GPUs, not one", query, ninside);
			return gpuenv_hint(kb->ctx, "give one name: %s", list);
		}
		if (ninside == 1) {
			gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
				"no GPU named '%s' in the knowledge base: words around '%.*s' are not "
				"part of a GPU's name", query, GPUENV_STR_ARG(inside[0]->name));
			return gpuenv_hint(kb->ctx, "did you mean '%.*s'?", GPUENV_STR_ARG(inside[0]->name));
		}
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

/* ---- toolkits and architectures: what a toolkit's arch list holds ----------------- */

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

const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_cuda_arch_list(const gpuenv_kb_t *kb,
	const gpuenv_kb_ver_t *cuda)
{
	for (size_t i = 0; i < kb->n_cuda_arch_list; i++) {
		const gpuenv_kb_cuda_arch_list_t *a = &kb->cuda_arch_list[i];
		if (kb_ver_mm_cmp(cuda, &a->cuda_min) >= 0 && kb_ver_mm_cmp(cuda, &a->cuda_max) <= 0)
			return a;
	}
	return NULL;
}

static bool list_builds(const gpuenv_kb_cuda_arch_list_t *a, unsigned major, unsigned minor)
{
	for (uint32_t j = 0; j < a->sm.n; j++)
		if (a->sm.v[j].major == major && a->sm.v[j].minor == minor && !a->sm.v[j].variant)
			return true;
	return false;
}

int gpuenv_kb_cuda_builds_for(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *cuda, unsigned major,
	unsigned minor, const gpuenv_kb_cuda_arch_list_t **row)
{
	const gpuenv_kb_cuda_arch_list_t *a = gpuenv_kb_cuda_arch_list(kb, cuda);

	if (row)
		*row = a;
	if (!a)
		return -1;
	return list_builds(a, major, minor) ? 1 : 0;
}

const gpuenv_kb_cuda_arch_list_t *gpuenv_kb_arch_last_cuda(const gpuenv_kb_t *kb, unsigned major,
	unsigned minor)
{
	const gpuenv_kb_cuda_arch_list_t *last = NULL;

	for (size_t i = 0; i < kb->n_cuda_arch_list; i++) {
		const gpuenv_kb_cuda_arch_list_t *a = &kb->cuda_arch_list[i];
		if (list_builds(a, major, minor) &&
			(!last || gpuenv_kb_ver_cmp(&a->cuda_max, &last->cuda_max) > 0))
			last = a;
	}
	return last;
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

const gpuenv_kb_ver_t *gpuenv_kb_torch_latest(const gpuenv_kb_t *kb,
	const gpuenv_kb_torch_variant_t *v)
{
	const gpuenv_kb_ver_t *latest = NULL;

	for (size_t k = 0; k < kb->n_torch_pin; k++) {
		const gpuenv_kb_ver_t *p = &kb->torch_pin[k].torch;
		if (gpuenv_kb_ver_prefix(p, &v->torch) && p->n > v->torch.n &&
			(!latest || gpuenv_kb_ver_cmp(p, latest) > 0))
			latest = p;
	}
	return latest;
}

const char *gpuenv_kb_torch_index(const gpuenv_kb_t *kb, const gpuenv_kb_torch_variant_t *v,
	char *buf, size_t size)
{
	static const char pat[] = "cu{major}{minor}";

	for (size_t i = 0; i < kb->n_local_tag; i++) {
		const gpuenv_kb_local_tag_t *t = &kb->local_tag[i];
		const char *at = NULL;
		if (!gpuenv_str_eq_cstr(t->project, "torch") || !t->index.ptr ||
			!gpuenv_str_startswith(t->pattern, "+cu"))
			continue;
		for (size_t k = 0; k + sizeof(pat) - 1 <= t->index.len && !at; k++)
			if (!memcmp(t->index.ptr + k, pat, sizeof(pat) - 1))
				at = t->index.ptr + k;
		if (!at)
			continue;
		snprintf(buf, size, "%.*s%.*s%.*s", (int)(at - t->index.ptr), t->index.ptr,
			GPUENV_STR_ARG(v->tag),
			(int)(t->index.len - (size_t)(at - t->index.ptr) - (sizeof(pat) - 1)),
			at + sizeof(pat) - 1);
		return buf;
	}
	/* wheels.toml not loaded: the pattern its [[local_tag]] row records */
	snprintf(buf, size, "https://download.pytorch.org/whl/%.*s", GPUENV_STR_ARG(v->tag));
	return buf;
}

const char *gpuenv_kb_torch_install_cmd(const gpuenv_kb_t *kb, const gpuenv_kb_torch_variant_t *v,
	const char *version, bool force, gpuenv_arena_t *arena)
{
	const gpuenv_kb_ver_t *latest = version ? NULL : gpuenv_kb_torch_latest(kb, v);
	char url[256], buf[512];

	gpuenv_kb_torch_index(kb, v, url, sizeof(url));
	if (version)
		snprintf(buf, sizeof(buf), "pip install %storch==%s --index-url %s",
			force ? "--force-reinstall " : "", version, url);
	else if (latest)
		snprintf(buf, sizeof(buf), "pip install %storch==%.*s --index-url %s",
			force ? "--force-reinstall " : "", GPUENV_STR_ARG(latest->str), url);
	else
		snprintf(buf, sizeof(buf), "pip install %storch==%.*s.* --index-url %s",
			force ? "--force-reinstall " : "", GPUENV_STR_ARG(v->torch.str), url);
	return gpuenv_arena_strndup(arena, buf, strlen(buf));
}

/* The variant of release v with local tag local (NULL: the PyPI default). */
static const gpuenv_kb_torch_variant_t *variant_of(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *v,
	gpuenv_str_t local)
{
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *t = &kb->torch_variant[i];
		if (gpuenv_kb_ver_cmp(&t->torch, v) == 0 &&
			(local.ptr ? gpuenv_str_eq(t->tag, local) : t->pypi_default == 1))
			return t;
	}
	return NULL;
}

const gpuenv_kb_torch_variant_t *gpuenv_kb_torch_variant(const gpuenv_kb_t *kb,
	gpuenv_str_t version)
{
	gpuenv_str_t head, local = gpuenv_str_split(gpuenv_str_trim(version), '+', &head);
	gpuenv_kb_ver_t v;

	return kb_torch_series(head, &v) ? variant_of(kb, &v, local) : NULL;
}

int gpuenv_kb_torch_lookup(const gpuenv_kb_t *kb, gpuenv_str_t version,
	const gpuenv_kb_torch_variant_t **out)
{
	gpuenv_str_t head, local = gpuenv_str_split(gpuenv_str_trim(version), '+', &head);
	gpuenv_kb_ver_t v;
	char tags[256];
	size_t n = 0, known = 0;
	int shown = (int)(version.len > 60 ? 60 : version.len);

	*out = NULL;
	if (!kb_torch_series(head, &v) || (local.ptr && !local.len))
		return gpuenv_fail(kb->ctx, GPUENV_EVERSION, NULL, 0, 0,
			"'%.*s' is not a torch version (as 2.7.1 or 2.7.1+cu128)", shown,
			version.ptr ? version.ptr : "");
	if ((*out = variant_of(kb, &v, local)) != NULL)
		return 0;
	tags[0] = '\0';
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *t = &kb->torch_variant[i];
		int w;
		if (gpuenv_kb_ver_cmp(&t->torch, &v) != 0)
			continue;
		known++;
		w = snprintf(tags + n, sizeof(tags) - n, "%s%.*s+%.*s", n ? ", " : "",
			GPUENV_STR_ARG(head), GPUENV_STR_ARG(t->tag));
		if (w > 0 && (size_t)w < sizeof(tags) - n)
			n += (size_t)w;
	}
	if (!local.ptr && known) {
		gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
			"torch %.*s without a local tag means the build on PyPI, and the knowledge "
			"base does not record which CUDA build PyPI ships for torch %u.%u", shown,
			version.ptr, v.part[0], v.part[1]);
		return gpuenv_hint(kb->ctx, "name the build: %s", tags);
	}
	if (!known) {
		gpuenv_kb_ver_t full;
		if (gpuenv_kb_ver_parse(head, &full) &&
			gpuenv_kb_fail_newer(kb, GPUENV_ENOTFOUND, GPUENV_KB_KIND_TORCH, &full,
				gpuenv_str_n(NULL, 0)))
			return kb->ctx->err.code;
	}
	gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
		"torch %.*s: no such build in the knowledge base", shown, version.ptr);
	if (known)
		return gpuenv_hint(kb->ctx, "builds of that release: %s", tags);
	return gpuenv_hint(kb->ctx, "`gpuenv kb torch` lists the builds it knows");
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

int gpuenv_kb_image_lookup(const gpuenv_kb_t *kb, const char *ref, gpuenv_kb_image_ref_t *out)
{
	gpuenv_str_t r = gpuenv_str_trim(gpuenv_str(ref)), image, tag;
	const gpuenv_kb_container_t *row = NULL;
	const char *at = r.len ? memchr(r.ptr, '@', r.len) : NULL;
	size_t slash = 0, colon = 0;
	int kind;

	memset(out, 0, sizeof(*out));
	/* IMAGE:TAG@sha256:...: the digest pins the bytes, the tag is what the
	 * knowledge base knows them by (gpuenv_kb_image_find reads it so too) */
	if (at)
		r.len = (size_t)(at - r.ptr);
	/* the tag follows the last ':' after the last '/' (a registry may have a port) */
	for (size_t i = 0; i < r.len; i++)
		if (r.ptr[i] == '/')
			slash = i + 1;
	for (size_t i = slash; i < r.len; i++)
		if (r.ptr[i] == ':')
			colon = i + 1;
	if (!colon || colon == 1 || colon == r.len)
		return gpuenv_fail(kb->ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"'%.*s' is not IMAGE:TAG (as nvcr.io/nvidia/pytorch:25.01-py3)",
			(int)(r.len > 200 ? 200 : r.len), r.ptr ? r.ptr : "");
	image = gpuenv_str_n(r.ptr, colon - 1);
	tag = gpuenv_str_n(r.ptr + colon, r.len - colon);
	if (gpuenv_kb_image_find(kb, ref, &row, 1) >= 1 && row) {
		out->row = row;
		out->cuda = row->cuda;
		if (out->cuda.n > 2)
			out->cuda.n = 2;
		return 0;
	}
	if ((kind = gpuenv_kb_hub_kind(image)) != GPUENV_KB_HUB_NONE) {
		/* the tag's grammar, then images.toml (lib/kb/hub.c) */
		int rc = gpuenv_kb_hub_parse(kb->ctx, kind, tag, &out->hub);
		if (rc)
			return rc;
		out->hub.image = image;
		gpuenv_kb_hub_find(kb, &out->match, &out->hub);
		out->cuda = out->hub.cuda;
		return 0;
	}
	{
		/* an NGC release ("27.01-py3") after the newest the KB knows of that image */
		gpuenv_kb_ver_t rel;
		size_t n = 0;
		while (n < tag.len && tag.ptr[n] != '-')
			n++;
		if (gpuenv_kb_ver_parse(gpuenv_str_n(tag.ptr, n), &rel) && rel.n == 2 &&
			gpuenv_kb_fail_newer(kb, GPUENV_ENOTFOUND, GPUENV_KB_KIND_NGC, &rel, image))
			return kb->ctx->err.code;
	}
	gpuenv_fail(kb->ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
		"image %.*s is not in the knowledge base (NGC containers, nvidia/cuda and "
		"pytorch/pytorch tags are)",
		(int)(r.len > 200 ? 200 : r.len), r.ptr);
	return gpuenv_hint(kb->ctx, "the knowledge base has %zu NGC tags; `gpuenv kb image "
				    "nvcr.io/nvidia/pytorch` lists one image's", kb->n_container);
}
