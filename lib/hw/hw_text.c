/* hw_text.c: the text parsers of the driver/GPU probe (include/gpuenv/hw.h):
 * PCI bus ids, the NVRM version line, "Key: value" fields of
 * /proc/driver/nvidia files, the Jetson L4T release and Tegra SoC names.
 * Pure functions over slices: no files, no allocation (fuzz_hwtext.c runs
 * them), called by the backends and the orchestrator. */
#define _GNU_SOURCE /* memmem */
#include "hw_text.h"

#include <stdio.h>
#include <string.h>

/* ---- parsers ------------------------------------------------------------ */

/* Exactly n hex digits (1 <= n <= 8) at s[0..n). */
bool hw_hexn(const char *s, size_t n, uint32_t *out)
{
	uint32_t v = 0;

	for (size_t i = 0; i < n; i++) {
		int d = gpuenv_hex_digit(s[i]);
		if (d < 0)
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return true;
}

bool gpuenv_hw_parse_bus_id(gpuenv_str_t s, gpuenv_hw_busid_t *out)
{
	uint32_t dom = 0, bus, dev, fn;
	size_t dlen;
	const char *p;

	s = gpuenv_str_trim(s);
	/* [domain:]bus:dev.fn with a 1-8 digit domain, 2-digit bus and dev */
	if (s.len < 7 || s.len > 17)
		return false;
	p = s.ptr + s.len - 7; /* "BB:DD.F" */
	if (p[2] != ':' || p[5] != '.')
		return false;
	if (!hw_hexn(p, 2, &bus) || !hw_hexn(p + 3, 2, &dev) || !hw_hexn(p + 6, 1, &fn))
		return false;
	if (dev > 0x1f || fn > 7)
		return false;
	if (s.len > 7) {
		dlen = s.len - 8;
		if (dlen < 1 || dlen > 8 || s.ptr[dlen] != ':' || !hw_hexn(s.ptr, dlen, &dom))
			return false;
	}
	out->domain = dom;
	out->bus = (uint8_t)bus;
	out->dev = (uint8_t)dev;
	out->fn = (uint8_t)fn;
	return true;
}

void gpuenv_hw_bus_id_str(const gpuenv_hw_busid_t *id, char *out, size_t outsz)
{
	snprintf(out, outsz, "%08X:%02X:%02X.%X", (unsigned)id->domain, id->bus, id->dev,
		id->fn);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next line of *text (without its newline); false at the end. */
bool hw_next_line(gpuenv_str_t *text, gpuenv_str_t *line)
{
	const char *nl;

	if (!text->len)
		return false;
	nl = memchr(text->ptr, '\n', text->len);
	if (nl) {
		*line = gpuenv_str_n(text->ptr, (size_t)(nl - text->ptr));
		text->len -= (size_t)(nl - text->ptr) + 1;
		text->ptr = nl + 1;
	} else {
		*line = *text;
		text->ptr += text->len;
		text->len = 0;
	}
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0';
}

/* Trim blanks, newlines and NULs (device-tree strings end in one). */
gpuenv_str_t hw_trim_blanks(gpuenv_str_t s)
{
	while (s.len && is_space(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	while (s.len && is_space(s.ptr[s.len - 1]))
		s.len--;
	return s;
}

/* The next blank-separated word of *s; empty at the end. */
static gpuenv_str_t next_word(gpuenv_str_t *s)
{
	gpuenv_str_t w;
	size_t i = 0;

	while (i < s->len && is_blank(s->ptr[i]))
		i++;
	w.ptr = s->ptr + i;
	while (i < s->len && !is_blank(s->ptr[i]))
		i++;
	w.len = (size_t)(s->ptr + i - w.ptr);
	s->ptr += i;
	s->len -= i;
	return w;
}

bool hw_is_version_word(gpuenv_str_t w)
{
	bool dot = false;

	if (!w.len || w.ptr[0] < '0' || w.ptr[0] > '9')
		return false;
	for (size_t i = 0; i < w.len; i++) {
		if (w.ptr[i] == '.')
			dot = true;
		else if (w.ptr[i] < '0' || w.ptr[i] > '9')
			return false;
	}
	return dot && w.ptr[w.len - 1] != '.';
}

static bool is_arch_word(gpuenv_str_t w)
{
	return gpuenv_str_eq_cstr(w, "x86_64") || gpuenv_str_eq_cstr(w, "aarch64") ||
		gpuenv_str_eq_cstr(w, "ppc64le") || gpuenv_str_eq_cstr(w, "arm64") ||
		gpuenv_str_eq_cstr(w, "riscv64");
}

bool gpuenv_hw_parse_nvrm(gpuenv_str_t text, gpuenv_hw_nvrm_t *out)
{
	gpuenv_str_t line = GPUENV_STR_NULL, rest, w;
	bool found = false;

	memset(out, 0, sizeof(*out));
	while (!found && hw_next_line(&text, &line)) {
		line = hw_trim_blanks(line);
		found = gpuenv_str_startswith(line, "NVRM version:");
	}
	if (!found)
		return false;
	out->line = line;
	rest = gpuenv_str_n(line.ptr + 13, line.len - 13);
	/* "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build"
	 * "NVIDIA UNIX x86_64 Kernel Module  535.216.03  Wed Nov 13 ..." */
	while ((w = next_word(&rest)).len) {
		if (gpuenv_str_eq_cstr(w, "Open"))
			out->open = true;
		else if (is_arch_word(w) && !out->arch.len)
			out->arch = w;
		else if (hw_is_version_word(w)) {
			out->version = w;
			return true;
		}
	}
	return false;
}

gpuenv_str_t gpuenv_hw_text_field(gpuenv_str_t text, const char *key)
{
	size_t klen = strlen(key);
	gpuenv_str_t line;

	while (hw_next_line(&text, &line)) {
		if (line.len > klen && memcmp(line.ptr, key, klen) == 0 && line.ptr[klen] == ':')
			return hw_trim_blanks(gpuenv_str_n(line.ptr + klen + 1, line.len - klen - 1));
	}
	return GPUENV_STR_NULL;
}

/* The decimal number at the start of s (at most 6 digits); false if none. */
static bool lead_num(gpuenv_str_t s, unsigned *out, size_t *used)
{
	size_t i = 0;
	unsigned v = 0;

	while (i < s.len && i < 6 && s.ptr[i] >= '0' && s.ptr[i] <= '9')
		v = v * 10 + (unsigned)(s.ptr[i++] - '0');
	if (!i)
		return false;
	*out = v;
	*used = i;
	return true;
}

bool gpuenv_hw_parse_l4t(gpuenv_str_t text, char *out, size_t outsz)
{
	gpuenv_str_t line, s, rev;
	unsigned major, mi, pa = 0;
	size_t used;
	const char *r;

	if (!outsz)
		return false;
	out[0] = '\0';
	if (!hw_next_line(&text, &line))
		return false;
	s = hw_trim_blanks(line);
	/* "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, ..." */
	if (s.len && s.ptr[0] == '#')
		s = hw_trim_blanks(gpuenv_str_n(s.ptr + 1, s.len - 1));
	if (!s.len || s.ptr[0] != 'R')
		return false;
	s = gpuenv_str_n(s.ptr + 1, s.len - 1);
	if (!lead_num(s, &major, &used))
		return false;
	r = s.len >= 9 ? memmem(s.ptr, s.len, "REVISION:", 9) : NULL;
	if (!r)
		return false;
	rev = hw_trim_blanks(gpuenv_str_n(r + 9, s.len - (size_t)(r + 9 - s.ptr)));
	if (!lead_num(rev, &mi, &used))
		return false;
	if (used < rev.len && rev.ptr[used] == '.') {
		rev = gpuenv_str_n(rev.ptr + used + 1, rev.len - used - 1);
		if (!lead_num(rev, &pa, &used))
			pa = 0;
	}
	snprintf(out, outsz, "%u.%u.%u", major, mi, pa);
	return true;
}

gpuenv_str_t gpuenv_hw_parse_tegra_soc(gpuenv_str_t compatible)
{
	size_t i = 0;

	while (i < compatible.len) {
		const char *s = compatible.ptr + i;
		const char *z = memchr(s, '\0', compatible.len - i);
		size_t n = z ? (size_t)(z - s) : compatible.len - i;
		if (n > 13 && memcmp(s, "nvidia,tegra", 12) == 0 && s[12] >= '0' && s[12] <= '9') {
			size_t k = 12;
			while (k < n && s[k] >= '0' && s[k] <= '9')
				k++;
			if (k == n)
				return gpuenv_str_n(s + 7, n - 7); /* "tegra234" */
		}
		i += n + 1;
	}
	return GPUENV_STR_NULL;
}

/* ---- the scan ------------------------------------------------------------ */
