/* lib/kb's private helpers, shared by its files (defined in kb.c, the
 * bottom layer: values and rows).  Not installed. */
#ifndef GPUENV_KB_INT_H
#define GPUENV_KB_INT_H

#include "gpuenv/kb.h"

/* The id of a knowledge-base file by its name ("cuda.toml"), -1 when it is
 * not one. */
int kb_file_id(gpuenv_str_t name);

/* MAJOR.MINOR of a against b (further parts ignored). */
int kb_ver_mm_cmp(const gpuenv_kb_ver_t *a, const gpuenv_kb_ver_t *b);

/* Code targets in order: major, minor, then a plain target before its
 * variants (it is the general one). */
int kb_sm_cmp(const gpuenv_kb_sm_t *a, const gpuenv_kb_sm_t *b);

/* The release series of a torch version's public part, MAJOR.MINOR:
 * "2.5.1a0", "2.5.1.dev20240720" -> 2.5.  false when it has no minor. */
bool kb_torch_series(gpuenv_str_t head, gpuenv_kb_ver_t *v);

/* Return the greatest version field of count rows (none: NULL). */
#define KB_NEWEST(rows, count, field)                                                 \
	do {                                                                      \
		const gpuenv_kb_ver_t *best = NULL;                               \
		for (size_t i_ = 0; i_ < (count); i_++)                               \
			if ((rows)[i_].field.n &&                                 \
				(!best || gpuenv_kb_ver_cmp(&(rows)[i_].field, best) > 0)) \
				best = &(rows)[i_].field;                         \
		return best;                                                      \
	} while (0)

#endif
