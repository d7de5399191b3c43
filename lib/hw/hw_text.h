/* Private text helpers of hw_text.c that the sysfs backend reuses on the
 * files it reads.  Not installed. */
#ifndef GPUENV_HW_TEXT_H
#define GPUENV_HW_TEXT_H

#include "gpuenv/hw.h"

/* Exactly n hex digits (1 <= n <= 8) at s[0..n). */
bool hw_hexn(const char *s, size_t n, uint32_t *out);
/* The next line of *text (without its newline); false at the end. */
bool hw_next_line(gpuenv_str_t *text, gpuenv_str_t *line);
/* Trim blanks, newlines and NULs (device-tree strings end in one). */
gpuenv_str_t hw_trim_blanks(gpuenv_str_t s);
/* A driver version word: digits and dots ("580.105.08"). */
bool hw_is_version_word(gpuenv_str_t w);

#endif
