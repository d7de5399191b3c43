/* The text parsers of stack_text.c (C headers, version-shaped strings).
 * Not installed. */
#ifndef GPUENV_STACK_TEXT_H
#define GPUENV_STACK_TEXT_H

#include "gpuenv/core.h"

/* Read "#define NAME value" integers / strings from header text. */
bool stack_header_int(const char *text, size_t len, const char *name, long *out);
gpuenv_str_t stack_header_str(const char *text, size_t len, const char *name);

/* Version-shaped: digits separated by dots (at least one dot when
 * need_dot). */
bool stack_is_dotted(gpuenv_str_t s, bool need_dot);

#endif
