/* Helpers shared by version.c, specifier.c and name.c; not installed. */
#ifndef GPUENV_PEP440_INTERNAL_H
#define GPUENV_PEP440_INTERNAL_H

#include "gpuenv/pep440.h"

/* Length of the white-space character at p[0..n) as Python's str.isspace()
 * sees it (ASCII and the UTF-8 encoded Unicode spaces); 0 when none. */
size_t pep440_space_at(const char *p, size_t n);
/* Length of the white-space character that ends p[0..n); 0 when none. */
size_t pep440_space_before(const char *p, size_t n);
/* Python's str.strip(): drop leading and trailing white space. */
gpuenv_str_t pep440_strip(gpuenv_str_t s);

/* Parse a version that fills s exactly (no white space).  text/off name the
 * whole input for error messages (s starts at byte off of text); code is the
 * error to report: GPUENV_EVERSION, or GPUENV_ESPEC when the version is part
 * of a specifier. */
int pep440_version_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, gpuenv_str_t text,
	size_t off, gpuenv_str_t s, int code, gpuenv_version_t *out);

#endif
