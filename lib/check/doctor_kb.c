/* The knowledge-base rows doctor and preflight query, read through the KB
 * loader (include/gpuenv/kb.h) into the few flat tables the rules need:
 * NUL-terminated strings, CUDA versions as ints, each row's citation as
 * "data/kb/FILE:LINE: source".  Copying them once per run keeps the rules
 * independent of how the KB is stored; it costs a few hundred rows. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "doctor_int.h"
#include "gpuenv/kb.h"

struct dkb {
	struct dkb_toolkit *tk;
	size_t ntk;
	struct dkb_minor *mc;
	size_t nmc;
	struct dkb_nvcc *nvcc;
	size_t nnvcc;
	dkb_torch_variant_t *torch;
	size_t ntorch;
	dkb_ngc_t *ngc;
	size_t nngc;
};

/* ==== conversion ========================================================= */

struct conv {
	gpuenv_arena_t *arena;
	int err;
};

static const char *sdup(struct conv *c, gpuenv_str_t s)
{
	char *p;

	if (!s.ptr)
		return NULL;
	p = gpuenv_arena_strndup(c->arena, s.ptr, s.len);
	if (!p)
		c->err = -ENOMEM;
	return p;
}

static const char *cite(struct conv *c, const gpuenv_kb_row_t *row, const char *what)
{
	char where[64];
	size_t n;
	char *p;

	/* "data/kb/cuda.toml:412 [[toolkit]]: <source>", without printf: one
	 * per row of every table used */
	gpuenv_kb_row_where(row, where, sizeof(where));
	n = 8 + strlen(where) + 1 + strlen(what) + 2 + row->source.len;
	if (!(p = gpuenv_arena_alloc(c->arena, n + 1))) {
		c->err = -ENOMEM;
		return NULL;
	}
	memcpy(p, "data/kb/", 8);
	n = 8;
	memcpy(p + n, where, strlen(where));
	n += strlen(where);
	p[n++] = ' ';
	memcpy(p + n, what, strlen(what));
	n += strlen(what);
	p[n++] = ':';
	p[n++] = ' ';
	memcpy(p + n, row->source.ptr, row->source.len);
	n += row->source.len;
	p[n] = '\0';
	return p;
}

static int cuda_of(const gpuenv_kb_ver_t *v)
{
	if (v->n == 0 || v->part[0] > 99)
		return 0;
	return (int)(v->part[0] * 1000 + (v->n > 1 && v->part[1] < 10 ? v->part[1] : 0) * 10);
}

/* A NULL-terminated copy of up to two lists of targets. */
static const char *const *sm_list(struct conv *c, const gpuenv_kb_sms_t *a,
	const gpuenv_kb_sms_t *b)
{
	size_t n = a->n + (b ? b->n : 0), k = 0;
	const char **l = gpuenv_arena_calloc(c->arena, n + 1, sizeof(*l));

	if (!l) {
		c->err = -ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < a->n; i++)
		l[k++] = sdup(c, a->v[i].str);
	for (uint32_t i = 0; b && i < b->n; i++)
		l[k++] = sdup(c, b->v[i].str);
	return l;
}

static const char *const *ver_list(struct conv *c, const gpuenv_kb_vers_t *a)
{
	const char **l = gpuenv_arena_calloc(c->arena, (size_t)a->n + 1, sizeof(*l));

	if (!l) {
		c->err = -ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < a->n; i++)
		l[i] = sdup(c, a->v[i].str);
	return l;
}

static bool str_is(gpuenv_str_t s, const char *lit)
{
	return s.ptr && gpuenv_str_eq_cstr(s, lit);
}

static int convert(gpuenv_arena_t *arena, const gpuenv_kb_t *kb, dkb_t *d)
{
	struct conv c = { arena, 0 };

#define ALLOC(field, count)                                                          \
	do {                                                                         \
		d->field = (count) ? gpuenv_arena_calloc(arena, (count), sizeof(*d->field)) \
				   : NULL;                                           \
		if ((count) && !d->field)                                            \
			return -ENOMEM;                                              \
	} while (0)

	ALLOC(tk, kb->n_toolkit);
	for (size_t i = 0; i < kb->n_toolkit; i++) {
		const gpuenv_kb_toolkit_t *t = &kb->toolkit[i];
		d->tk[d->ntk++] = (struct dkb_toolkit){
			.cuda = cuda_of(&t->cuda),
			.update = (int)t->update,
			.driver = sdup(&c, t->driver_linux.str),
			.source = cite(&c, &t->row, "[[toolkit]]"),
		};
	}
	ALLOC(mc, kb->n_minor_compat);
	for (size_t i = 0; i < kb->n_minor_compat; i++) {
		const gpuenv_kb_minor_compat_t *m = &kb->minor_compat[i];
		d->mc[d->nmc++] = (struct dkb_minor){
			.major = (int)m->cuda_major,
			.driver_min = sdup(&c, m->driver_min.str),
			.driver_below = sdup(&c, m->driver_below.str),
			.source = cite(&c, &m->row, "[[minor_compat]]"),
		};
	}
	ALLOC(nvcc, kb->n_cuda_arch_list);
	for (size_t i = 0; i < kb->n_cuda_arch_list; i++) {
		const gpuenv_kb_cuda_arch_list_t *a = &kb->cuda_arch_list[i];
		d->nvcc[d->nnvcc++] = (struct dkb_nvcc){
			.cuda_min = cuda_of(&a->cuda_min),
			.cuda_max = cuda_of(&a->cuda_max),
			.sm = sm_list(&c, &a->sm, NULL),
			.source = cite(&c, &a->row, "[[arch_list]]"),
		};
	}
	ALLOC(torch, kb->n_torch_variant);
	for (size_t i = 0; i < kb->n_torch_variant; i++) {
		const gpuenv_kb_torch_variant_t *v = &kb->torch_variant[i];
		const gpuenv_kb_torch_arch_list_t *a = gpuenv_kb_torch_arch(kb, v);
		const gpuenv_kb_ver_t *latest = NULL;
		dkb_torch_variant_t *o = &d->torch[d->ntorch++];

		o->series = sdup(&c, v->torch.str);
		o->tag = sdup(&c, v->tag);
		o->cuda = cuda_of(&v->cuda);
		o->pypi_default = v->pypi_default == 1;
		o->stable = str_is(v->channel, "stable");
		o->have_arch = a != NULL;
		if (a) {
			o->sm = sm_list(&c, &a->sm, &a->extra_sm);
			o->ptx = sm_list(&c, &a->ptx, NULL);
		}
		/* the newest exact release the KB has pins for */
		for (size_t k = 0; k < kb->n_torch_pin; k++) {
			const gpuenv_kb_ver_t *p = &kb->torch_pin[k].torch;
			if (gpuenv_kb_ver_prefix(p, &v->torch) && p->n > v->torch.n &&
				(!latest || gpuenv_kb_ver_cmp(p, latest) > 0))
				latest = p;
		}
		o->latest = latest ? sdup(&c, latest->str) : NULL;
		for (size_t k = 0; k < kb->n_torch_release; k++) {
			const gpuenv_kb_torch_release_t *r = &kb->torch_release[k];
			if (gpuenv_kb_ver_cmp(&r->torch, &v->torch) == 0) {
				o->python_min = sdup(&c, r->python_min.str);
				o->python_max = sdup(&c, r->python_max.str);
			}
		}
		o->source = cite(&c, &v->row, "[[variant]]");
		if (a && o->source) {
			const char *as = cite(&c, &a->row, "[[arch_list]]");
			char *both;
			size_t n1 = strlen(o->source), n2 = as ? strlen(as) : 0;
			if ((both = gpuenv_arena_alloc(arena, n1 + n2 + 3)) != NULL) {
				memcpy(both, o->source, n1);
				memcpy(both + n1, "; ", 2);
				memcpy(both + n1 + 2, as ? as : "", n2 + 1);
				o->source = both;
			} else
				c.err = -ENOMEM;
		}
	}
	ALLOC(ngc, kb->n_container);
	for (size_t i = 0; i < kb->n_container; i++) {
		const gpuenv_kb_container_t *k = &kb->container[i];
		d->ngc[d->nngc++] = (dkb_ngc_t){
			.image = sdup(&c, k->image),
			.tag = sdup(&c, k->tag),
			.release = sdup(&c, k->release.str),
			.cuda = cuda_of(&k->cuda),
			.torch = sdup(&c, k->torch),
			.driver_min_branch = sdup(&c, k->driver_min_branch),
			.datacenter_drivers = k->datacenter_drivers.n ? ver_list(&c, &k->datacenter_drivers)
								      : NULL,
			.cc_min = sdup(&c, k->cc_min.str),
			.source = cite(&c, &k->row, "[[container]]"),
		};
	}
#undef ALLOC
	return c.err;
}

int dkb_open(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const struct gpuenv_kb *kb,
	const dkb_t **out)
{
	gpuenv_kb_t *own = NULL;
	dkb_t *d;
	int r;

	*out = NULL;
	if (!kb) {
		if ((r = gpuenv_kb_load_files(ctx, NULL, GPUENV_DOCTOR_KB_FILES, &own)) != 0)
			return r;
		kb = own;
	}
	d = gpuenv_arena_calloc(arena, 1, sizeof(*d));
	r = d ? convert(arena, kb, d) : -ENOMEM;
	gpuenv_kb_free(own);
	if (r)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "out of memory reading the knowledge base");
	*out = d;
	return 0;
}

/* ==== queries ============================================================ */

const struct dkb_toolkit *dkb_toolkit(const dkb_t *kb, int cuda)
{
	for (size_t i = 0; i < kb->ntk; i++)
		if (kb->tk[i].cuda == cuda && kb->tk[i].update == 0 && kb->tk[i].driver)
			return &kb->tk[i];
	return NULL;
}

const struct dkb_minor *dkb_minor_compat(const dkb_t *kb, int major)
{
	for (size_t i = 0; i < kb->nmc; i++)
		if (kb->mc[i].major == major && kb->mc[i].driver_min)
			return &kb->mc[i];
	return NULL;
}

int dkb_driver_max_cuda(const dkb_t *kb, const char *driver, const char **source)
{
	int best = 0;
	bool ok;

	if (!driver)
		return 0;
	for (size_t i = 0; i < kb->ntk; i++) {
		const struct dkb_toolkit *t = &kb->tk[i];
		if (t->update != 0 || t->cuda <= best || !t->driver)
			continue;
		if (dk_vcmp(driver, t->driver, &ok) >= 0 && ok) {
			best = t->cuda;
			if (source)
				*source = t->source;
		}
	}
	return best;
}

static bool list_has_cc(const char *const *sm, int maj, int min)
{
	dk_arch_t a;

	for (; sm && *sm; sm++)
		if (dk_arch_parse(*sm, &a) && !a.ptx && !a.suffix && a.maj == maj && a.min == min)
			return true;
	return false;
}

int dkb_nvcc_builds(const dkb_t *kb, int cuda, int maj, int min, const struct dkb_nvcc **row)
{
	for (size_t i = 0; i < kb->nnvcc; i++) {
		if (cuda < kb->nvcc[i].cuda_min || cuda > kb->nvcc[i].cuda_max)
			continue;
		if (row)
			*row = &kb->nvcc[i];
		return list_has_cc(kb->nvcc[i].sm, maj, min) ? 1 : 0;
	}
	if (row)
		*row = NULL;
	return -1;
}

int dkb_nvcc_first(const dkb_t *kb, int maj, int min)
{
	int best = 0;

	for (size_t i = 0; i < kb->nnvcc; i++)
		if (list_has_cc(kb->nvcc[i].sm, maj, min) && (!best || kb->nvcc[i].cuda_min < best))
			best = kb->nvcc[i].cuda_min;
	return best;
}

int dkb_nvcc_last(const dkb_t *kb, int maj, int min)
{
	int best = 0;

	for (size_t i = 0; i < kb->nnvcc; i++)
		if (list_has_cc(kb->nvcc[i].sm, maj, min) && kb->nvcc[i].cuda_max > best)
			best = kb->nvcc[i].cuda_max;
	return best;
}

size_t dkb_torch_variants(const dkb_t *kb, const dkb_torch_variant_t **out)
{
	*out = kb->torch;
	return kb->ntorch;
}

const dkb_torch_variant_t *dkb_torch_find(const dkb_t *kb, const char *version, const char *tag)
{
	if (!version)
		return NULL;
	for (size_t i = 0; i < kb->ntorch; i++) {
		const dkb_torch_variant_t *v = &kb->torch[i];
		if (!v->series || !v->tag || !dk_same_series(v->series, version))
			continue;
		if (tag ? strcmp(v->tag, tag) == 0 : v->pypi_default)
			return v;
	}
	return NULL;
}

const dkb_ngc_t *dkb_ngc_find(const dkb_t *kb, const char *image, const char *tag)
{
	for (size_t i = 0; i < kb->nngc; i++)
		if (kb->ngc[i].image && kb->ngc[i].tag && strcmp(kb->ngc[i].image, image) == 0 &&
			strcmp(kb->ngc[i].tag, tag) == 0)
			return &kb->ngc[i];
	return NULL;
}
