/* The knowledge-base queries doctor and preflight make.
 *
 * Stand-in until the KB loader (lib/kb/, branch kbq) lands: the rows come
 * from doctor_kb_data.h, generated from the TOML files in data/kb by
 * doctor_kb_gen.py, so they are the KB's own rows with their sources.  When
 * include/gpuenv/kb.h exists these functions read through it instead and
 * the generated tables go away; nothing else in lib/check changes.
 */
#include <string.h>

#include "doctor_int.h"

struct dkb {
	int unused;
};

#include "doctor_kb_data.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct dkb builtin = { 0 };

const dkb_t *dkb_get(const struct gpuenv_kb *kb)
{
	/* a loaded KB (--kb-dir) needs lib/kb; until then the built-in rows */
	(void)kb;
	return &builtin;
}

const struct dkb_toolkit *dkb_toolkit(const dkb_t *kb, int cuda)
{
	(void)kb;
	for (size_t i = 0; i < NELEM(kb_toolkits); i++)
		if (kb_toolkits[i].cuda == cuda && kb_toolkits[i].update == 0)
			return &kb_toolkits[i];
	return NULL;
}

const struct dkb_minor *dkb_minor_compat(const dkb_t *kb, int major)
{
	(void)kb;
	for (size_t i = 0; i < NELEM(kb_minor); i++)
		if (kb_minor[i].major == major)
			return &kb_minor[i];
	return NULL;
}

int dkb_driver_max_cuda(const dkb_t *kb, const char *driver, const char **source)
{
	int best = 0;
	bool ok;

	(void)kb;
	if (!driver)
		return 0;
	for (size_t i = 0; i < NELEM(kb_toolkits); i++) {
		const struct dkb_toolkit *t = &kb_toolkits[i];
		if (t->update != 0 || t->cuda <= best)
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
	(void)kb;
	for (size_t i = 0; i < NELEM(kb_nvcc); i++) {
		if (cuda < kb_nvcc[i].cuda_min || cuda > kb_nvcc[i].cuda_max)
			continue;
		if (row)
			*row = &kb_nvcc[i];
		return list_has_cc(kb_nvcc[i].sm, maj, min) ? 1 : 0;
	}
	if (row)
		*row = NULL;
	return -1;
}

int dkb_nvcc_first(const dkb_t *kb, int maj, int min)
{
	int best = 0;

	(void)kb;
	for (size_t i = 0; i < NELEM(kb_nvcc); i++)
		if (list_has_cc(kb_nvcc[i].sm, maj, min) && (!best || kb_nvcc[i].cuda_min < best))
			best = kb_nvcc[i].cuda_min;
	return best;
}

int dkb_nvcc_last(const dkb_t *kb, int maj, int min)
{
	int best = 0;

	(void)kb;
	for (size_t i = 0; i < NELEM(kb_nvcc); i++)
		if (list_has_cc(kb_nvcc[i].sm, maj, min) && kb_nvcc[i].cuda_max > best)
			best = kb_nvcc[i].cuda_max;
	return best;
}

size_t dkb_torch_variants(const dkb_t *kb, const dkb_torch_variant_t **out)
{
	(void)kb;
	*out = kb_torch;
	return NELEM(kb_torch);
}

/* "2.7.1+cu128" / "2.7.1" / "2.7" -> "2.7" into out. */
static bool series_of(const char *version, char *out, size_t outsz)
{
	const char *p = version;
	size_t n;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == version || *p != '.')
		return false;
	p++;
	if (!(*p >= '0' && *p <= '9'))
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	n = (size_t)(p - version);
	if (n >= outsz)
		return false;
	memcpy(out, version, n);
	out[n] = '\0';
	return true;
}

const dkb_torch_variant_t *dkb_torch_find(const dkb_t *kb, const char *version, const char *tag)
{
	char series[32];

	(void)kb;
	if (!version || !series_of(version, series, sizeof(series)))
		return NULL;
	for (size_t i = 0; i < NELEM(kb_torch); i++) {
		if (strcmp(kb_torch[i].series, series) != 0)
			continue;
		if (tag ? strcmp(kb_torch[i].tag, tag) == 0 : kb_torch[i].pypi_default)
			return &kb_torch[i];
	}
	return NULL;
}

const dkb_ngc_t *dkb_ngc_find(const dkb_t *kb, const char *image, const char *tag)
{
	(void)kb;
	for (size_t i = 0; i < NELEM(kb_ngc); i++)
		if (strcmp(kb_ngc[i].image, image) == 0 && strcmp(kb_ngc[i].tag, tag) == 0)
			return &kb_ngc[i];
	return NULL;
}
