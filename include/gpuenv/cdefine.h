/* gpuenv cdefine: "#define NAME value" in C headers (cudnn_version.h,
 * nccl.h, cuda.h, Python's patchlevel.h) and the dotted version numbers
 * they and file names carry.  Pure functions over bytes: the probe
 * (lib/hw) and the installer (lib/install) read versions from disk with
 * them. */
#ifndef GPUENV_CDEFINE_H
#define GPUENV_CDEFINE_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The integer of "#define NAME 12" ("(12)", "12U" too); false when NAME is
 * not defined so, or the value is not a number below 2^31. */
GPUENV_API bool gpuenv_cdefine_int(const char *text, size_t len, const char *name, long *out);
/* The string of "#define NAME "text"" (without the quotes), or a NULL
 * slice (pointing into text). */
GPUENV_API gpuenv_str_t gpuenv_cdefine_str(const char *text, size_t len, const char *name);

/* Version-shaped: digits separated by single dots ("3.12.1"; at least one
 * dot when need_dot). */
GPUENV_API bool gpuenv_dotted_valid(gpuenv_str_t s, bool need_dot);

#ifdef __cplusplus
}
#endif
#endif
