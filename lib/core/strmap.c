/* A string-keyed hash map (include/gpuenv/core.h): open addressing over a
 * power-of-two table kept at most half full, FNV-1a hashes stored with the
 * keys so growth and lookups compare hashes first. */
#include "gpuenv/core.h"

#include <errno.h>
#include <string.h>

static uint64_t sm_hash(const char *k, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
	return h;
}

static gpuenv_strmap_slot_t *sm_slot(const gpuenv_strmap_t *m, const char *k, size_t n, uint64_t h)
{
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		gpuenv_strmap_slot_t *s = &m->v[i];
		if (!s->key || (s->hash == h && s->klen == n && !memcmp(s->key, k, n)))
			return s;
	}
}

void *gpuenv_strmap_get(const gpuenv_strmap_t *m, const char *k, size_t n, bool *found)
{
	gpuenv_strmap_slot_t *s;

	*found = false;
	if (!m->cap)
		return NULL;
	s = sm_slot(m, k, n, sm_hash(k, n));
	*found = s->key != NULL;
	return s->val;
}

int gpuenv_strmap_put(gpuenv_strmap_t *m, const char *k, size_t n, void *val)
{
	uint64_t h = sm_hash(k, n);
	gpuenv_strmap_slot_t *s;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64, oc = m->cap;
		gpuenv_strmap_slot_t *v = gpuenv_calloc(m->ctx, cap, sizeof(*v)), *old = m->v;
		if (!v)
			return gpuenv_oom(m->ctx, "a hash table");
		m->v = v;
		m->cap = cap;
		for (size_t i = 0; i < oc; i++)
			if (old[i].key)
				*sm_slot(m, old[i].key, old[i].klen, old[i].hash) = old[i];
		gpuenv_free(m->ctx, old);
	}
	s = sm_slot(m, k, n, h);
	if (!s->key)
		m->n++;
	s->key = k;
	s->klen = n;
	s->hash = h;
	s->val = val;
	return 0;
}

void gpuenv_strmap_free(gpuenv_strmap_t *m)
{
	gpuenv_free(m->ctx, m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}
