/* The bottom of lib/kb: its values (versions, code targets, a CUDA version
 * as written, a torch build tag's CUDA) and the row loader, data/kb/<file>.toml
 * -> typed tables.  No judgement here, and no call to another file of
 * lib/kb (docs/ARCHITECTURE.md, "Inside lib/kb").
 *
 * Each file is parsed with gpuenv's TOML parser; then one table-driven pass
 * maps every [[table]] row onto its struct (a field list per table: key,
 * type, required, offset), so adding a key to the data is one line here and
 * the parsing stays a thin layer over plain C structs.  The documents stay
 * alive with the KB: string values are slices into them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embedded.h"
#include "gpuenv/kb_trt.h"
#include "gpuenv/toml.h"
#include "kb_int.h"

static const char *const file_names[GPUENV_KB_NFILES] = {
	"cuda.toml", "gpus.toml", "torch.toml", "libraries.toml",
	"wheels.toml", "ngc.toml", "diagnose.toml", "images.toml", "about.toml",
	"tensorrt.toml",
};

const char *gpuenv_kb_file_name(int id)
{
	return id >= 0 && id < GPUENV_KB_NFILES ? file_names[id] : NULL;
}

/* ---- values -------------------------------------------------------------- */

bool gpuenv_kb_ver_parse(gpuenv_str_t s, gpuenv_kb_ver_t *out)
{
	gpuenv_kb_ver_t v;
	size_t i = 0;

	memset(&v, 0, sizeof(v));
	v.str = s;
	if (!s.len)
		return false;
	for (;;) {
		uint32_t x = 0;
		size_t start = i;
		if (v.n == 4)
			return false;
		while (i < s.len && s.ptr[i] >= '0' && s.ptr[i] <= '9') {
			if (i - start >= 9)
				return false;
			x = x * 10 + (uint32_t)(s.ptr[i] - '0');
			i++;
		}
		if (i == start)
			return false;
		v.part[v.n++] = x;
		if (i == s.len)
			break;
		if (s.ptr[i] != '.')
			return false;
		i++;
	}
	*out = v;
	return true;
}

int gpuenv_kb_ver_cmp(const gpuenv_kb_ver_t *a, const gpuenv_kb_ver_t *b)
{
	for (int i = 0; i < 4; i++) {
		uint32_t x = i < a->n ? a->part[i] : 0, y = i < b->n ? b->part[i] : 0;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

bool gpuenv_kb_ver_prefix(const gpuenv_kb_ver_t *v, const gpuenv_kb_ver_t *prefix)
{
	if (!prefix->n || prefix->n > v->n)
		return false;
	for (int i = 0; i < prefix->n; i++)
		if (v->part[i] != prefix->part[i])
			return false;
	return true;
}

bool gpuenv_kb_sm_parse(gpuenv_str_t s, gpuenv_kb_sm_t *out)
{
	gpuenv_kb_sm_t r;
	size_t i = 0, nd;
	unsigned x = 0;

	memset(&r, 0, sizeof(r));
	r.str = s;
	/* "X.Y": a compute capability */
	if (s.len >= 3 && memchr(s.ptr, '.', s.len)) {
		gpuenv_kb_ver_t v;
		if (!gpuenv_kb_ver_parse(s, &v) || v.n != 2 || v.part[0] > 99 || v.part[1] > 9)
			return false;
		r.major = (uint8_t)v.part[0];
		r.minor = (uint8_t)v.part[1];
		*out = r;
		return true;
	}
	if (gpuenv_str_startswith(s, "sm_"))
		i = 3;
	else if (gpuenv_str_startswith(s, "compute_"))
		i = 8;
	else
		return false;
	for (nd = 0; i < s.len && s.ptr[i] >= '0' && s.ptr[i] <= '9'; i++, nd++) {
		if (nd >= 3)
			return false;
		x = x * 10 + (unsigned)(s.ptr[i] - '0');
	}
	if (nd < 2)
		return false;
	if (i < s.len && (s.ptr[i] == 'a' || s.ptr[i] == 'f'))
		r.variant = s.ptr[i++];
	if (i != s.len)
		return false;
	r.major = (uint8_t)(x / 10);
	r.minor = (uint8_t)(x % 10);
	*out = r;
	return true;
}

int kb_ver_mm_cmp(const gpuenv_kb_ver_t *a, const gpuenv_kb_ver_t *b)
{
	gpuenv_kb_ver_t x = *a, y = *b;

	if (x.n > 2)
		x.n = 2;
	if (y.n > 2)
		y.n = 2;
	return gpuenv_kb_ver_cmp(&x, &y);
}

int kb_sm_cmp(const gpuenv_kb_sm_t *a, const gpuenv_kb_sm_t *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	/* a plain target before its variants: it is the general one */
	return (a->variant != 0) - (b->variant != 0);
}

const char *gpuenv_kb_sms_range(const gpuenv_kb_sm_t *v, size_t n, char *buf, size_t size)
{
	const gpuenv_kb_sm_t *lo = NULL, *hi = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!lo || kb_sm_cmp(&v[i], lo) < 0)
			lo = &v[i];
		if (!hi || kb_sm_cmp(&v[i], hi) > 0)
			hi = &v[i];
	}
	if (!lo)
		snprintf(buf, size, "none");
	else if (lo == hi)
		snprintf(buf, size, "%.*s", GPUENV_STR_ARG(lo->str));
	else
		snprintf(buf, size, "%.*s..%.*s", GPUENV_STR_ARG(lo->str), GPUENV_STR_ARG(hi->str));
	return buf;
}
int gpuenv_kb_cuda_parse(gpuenv_ctx_t *ctx, gpuenv_str_t s, gpuenv_kb_ver_t *out)
{
	gpuenv_kb_ver_t v;
	int shown = (int)(s.len > 40 ? 40 : s.len);

	memset(out, 0, sizeof(*out));
	if (!gpuenv_kb_ver_parse(s, &v) || v.n < 2 || v.n > 3 || v.part[0] == 0 ||
		v.part[0] > 99 || v.part[1] > 99) {
		gpuenv_fail(ctx, GPUENV_EVERSION, NULL, 0, 0,
			"'%.*s' is not a CUDA version (MAJOR.MINOR, as 12.8)", shown,
			s.ptr ? s.ptr : "");
		if (gpuenv_kb_ver_parse(s, &v) && v.n == 1 && v.part[0] > 0 && v.part[0] <= 99)
			return gpuenv_hint(ctx, "name the minor release: %u.0 for CUDA %u.0 itself, "
						"or the %u.x release meant (as %u.8)",
				v.part[0], v.part[0], v.part[0], v.part[0]);
		return gpuenv_hint(ctx, "a CUDA version is MAJOR.MINOR[.PATCH], as 12.8 or 12.4.1");
	}
	/* the patch ("12.4.1") does not change what a driver must support */
	v.n = 2;
	for (size_t i = 0, dots = 0; i < s.len; i++)
		if (s.ptr[i] == '.' && ++dots == 2)
			v.str.len = i;
	*out = v;
	return 0;
}

const char *gpuenv_kb_cuda_of_tag(gpuenv_str_t tag, char *buf, size_t size, gpuenv_kb_ver_t *out)
{
	size_t n = tag.len >= 2 ? tag.len - 2 : 0;
	int w;

	/* cu + 2 or 3 digits, the first not 0: the last digit is the minor
	 * (the pattern "+cu{major}{minor}" of wheels.toml's [[local_tag]]) */
	if (!gpuenv_str_startswith(tag, "cu") || n < 2 || n > 3 || tag.ptr[2] == '0')
		return NULL;
	for (size_t i = 2; i < tag.len; i++)
		if (!gpuenv_is_digit(tag.ptr[i]))
			return NULL;
	w = snprintf(buf, size, "%.*s.%c", (int)(n - 1), tag.ptr + 2, tag.ptr[tag.len - 1]);
	if (w < 0 || (size_t)w >= size)
		return NULL;
	if (out && !gpuenv_kb_ver_parse(gpuenv_str_n(buf, (size_t)w), out))
		return NULL;
	return buf;
}

/* "2.5.1" of "2.5.1a0" / "2.5.1.dev20240720+cu124": the release, as MAJOR.MINOR */
bool kb_torch_series(gpuenv_str_t head, gpuenv_kb_ver_t *v)
{
	size_t n = 0;

	while (n < head.len && ((head.ptr[n] >= '0' && head.ptr[n] <= '9') || head.ptr[n] == '.'))
		n++;
	while (n && head.ptr[n - 1] == '.')
		n--;
	if (!gpuenv_kb_ver_parse(gpuenv_str_n(head.ptr, n), v) || v->n < 2)
		return false;
	v->n = 2;
	return true;
}

static bool parse_pciid(gpuenv_str_t s, int32_t *out)
{
	int32_t v = 0;

	if (s.len != 6 || s.ptr[0] != '0' || (s.ptr[1] != 'x' && s.ptr[1] != 'X'))
		return false;
	for (size_t i = 2; i < 6; i++) {
		char c = s.ptr[i];
		int d = c >= '0' && c <= '9' ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return false;
		v = v * 16 + d;
	}
	*out = v;
	return true;
}

/* ---- the schema ------------------------------------------------------------ */

enum ftype {
	F_STR,	 /* gpuenv_str_t */
	F_VER,	 /* gpuenv_kb_ver_t from a string */
	F_INT,	 /* int64_t, GPUENV_KB_NONE when absent */
	F_BOOL,	 /* int8_t, -1 when absent */
	F_SM,	 /* gpuenv_kb_sm_t from "sm_XY" */
	F_CC,	 /* gpuenv_kb_ver_t from "X.Y" */
	F_PCIID, /* int32_t from "0x2335", GPUENV_KB_NONE when absent */
	F_STRS,	 /* gpuenv_kb_strs_t */
	F_VERS,	 /* gpuenv_kb_vers_t */
	F_SMS,	 /* gpuenv_kb_sms_t */
	F_INTS,	 /* gpuenv_kb_ints_t */
};

struct field {
	const char *key;
	uint8_t keylen;
	uint8_t type;
	bool required;
	uint16_t off;
};

#define R true
#define O false
#define FLD(T, key, type, req) { #key, sizeof(#key) - 1, type, req, (uint16_t)offsetof(T, key) }
#define END { NULL, 0, 0, false, 0 }

#define T gpuenv_kb_toolkit_t
static const struct field f_toolkit[] = { FLD(T, cuda, F_VER, R), FLD(T, update, F_INT, R),
	FLD(T, label, F_STR, R), FLD(T, driver_linux, F_VER, R), FLD(T, driver_windows, F_VER, O),
	END };
#undef T
#define T gpuenv_kb_toolkit_known_t
static const struct field f_toolkit_known[] = { FLD(T, cuda, F_VER, R), FLD(T, update, F_INT, R),
	FLD(T, label, F_STR, R), END };
#undef T
#define T gpuenv_kb_minor_compat_t
static const struct field f_minor_compat[] = { FLD(T, cuda_major, F_INT, R),
	FLD(T, driver_min, F_VER, R), FLD(T, driver_below, F_VER, O), END };
#undef T
#define T gpuenv_kb_branch_t
static const struct field f_branch[] = { FLD(T, branch, F_STR, R), FLD(T, designation, F_STR, R),
	FLD(T, eol, F_STR, R), FLD(T, max_cuda_major, F_INT, R), END };
#undef T
#define T gpuenv_kb_cuda_arch_list_t
static const struct field f_cuda_arch_list[] = { FLD(T, cuda_min, F_VER, R),
	FLD(T, cuda_max, F_VER, R), FLD(T, sm, F_SMS, R), END };
#undef T
#define T gpuenv_kb_rule_t
static const struct field f_rule[] = { FLD(T, id, F_STR, R), FLD(T, text, F_STR, R), END };
#undef T
#define T gpuenv_kb_driver_observed_t
static const struct field f_driver_observed[] = { FLD(T, driver, F_VER, R), FLD(T, cuda, F_VER, R),
	FLD(T, kernel_module, F_STR, O), END };
#undef T
#define T gpuenv_kb_arch_t
static const struct field f_arch[] = { FLD(T, cc, F_CC, R), FLD(T, sm, F_SM, R),
	FLD(T, architecture, F_STR, R), FLD(T, last_cuda_major, F_INT, O),
	FLD(T, last_driver_branch, F_STR, O), END };
#undef T
#define T gpuenv_kb_gpu_t
static const struct field f_gpu[] = { FLD(T, name, F_STR, R), FLD(T, cc, F_CC, R),
	FLD(T, segment, F_STR, R), END };
#undef T
#define T gpuenv_kb_pci_vendor_t
static const struct field f_pci_vendor[] = { FLD(T, vendor_id, F_PCIID, R), FLD(T, name, F_STR, R),
	END };
#undef T
#define T gpuenv_kb_pci_t
static const struct field f_pci[] = { FLD(T, device_id, F_PCIID, R),
	FLD(T, subsys_vendor, F_PCIID, O), FLD(T, subsys_device, F_PCIID, O),
	FLD(T, name, F_STR, R), FLD(T, gpu, F_STR, R), END };
#undef T
#define T gpuenv_kb_torch_release_t
static const struct field f_torch_release[] = { FLD(T, torch, F_VER, R),
	FLD(T, python_min, F_VER, R), FLD(T, python_max, F_VER, R), FLD(T, python_note, F_STR, O),
	FLD(T, cxx, F_STR, R), FLD(T, released, F_STR, O), END };
#undef T
#define T gpuenv_kb_torch_variant_t
static const struct field f_torch_variant[] = { FLD(T, torch, F_VER, R), FLD(T, tag, F_STR, R),
	FLD(T, cuda, F_VER, R), FLD(T, channel, F_STR, R), FLD(T, cudnn, F_VER, O),
	FLD(T, nccl, F_VER, O), FLD(T, pypi_default, F_BOOL, O), END };
#undef T
#define T gpuenv_kb_torch_arch_list_t
static const struct field f_torch_arch_list[] = { FLD(T, torch, F_VER, R), FLD(T, tag, F_STR, R),
	FLD(T, platform, F_STR, R), FLD(T, sm, F_SMS, R), FLD(T, ptx, F_SMS, R),
	FLD(T, extra_sm, F_SMS, O), END };
#undef T
#define T gpuenv_kb_torch_pin_t
static const struct field f_torch_pin[] = { FLD(T, torch, F_VER, R), FLD(T, tag, F_STR, R),
	FLD(T, package, F_STR, R), FLD(T, extras, F_STRS, O), FLD(T, spec, F_STR, R),
	FLD(T, marker, F_STR, R), END };
#undef T
#define T gpuenv_kb_cudnn_t
static const struct field f_cudnn[] = { FLD(T, cudnn, F_VER, R), FLD(T, cuda_major, F_INT, R),
	FLD(T, cuda, F_VERS, R), FLD(T, static_link, F_BOOL, O), FLD(T, driver_linux, F_VER, R),
	FLD(T, driver_windows, F_VER, O), FLD(T, cc, F_VERS, R), END };
#undef T
#define T gpuenv_kb_nccl_t
static const struct field f_nccl[] = { FLD(T, nccl, F_VER, R), FLD(T, cuda, F_VERS, O),
	FLD(T, cuda_majors, F_INTS, R), END };
#undef T
#define T gpuenv_kb_tensorrt_t
static const struct field f_tensorrt[] = { FLD(T, tensorrt, F_VER, R), FLD(T, cuda, F_VERS, O),
	FLD(T, cuda_majors, F_INTS, R), FLD(T, cudnn_optional, F_VER, O), FLD(T, sm_min, F_SM, O),
	END };
#undef T
#define T gpuenv_kb_version_encoding_t
static const struct field f_version_encoding[] = { FLD(T, library, F_STR, R),
	FLD(T, formula, F_STR, R), FLD(T, major_min, F_INT, O), FLD(T, major_max, F_INT, O),
	FLD(T, example_int, F_INT, O), FLD(T, example_version, F_VER, O), END };
#undef T
#define T gpuenv_kb_soname_t
static const struct field f_soname[] = { FLD(T, soname, F_STR, R), FLD(T, library, F_STR, R),
	FLD(T, major, F_INT, O), FLD(T, cuda_major, F_INT, O), END };
#undef T
#define T gpuenv_kb_local_tag_t
static const struct field f_local_tag[] = { FLD(T, project, F_STR, R), FLD(T, pattern, F_STR, R),
	FLD(T, meaning, F_STR, R), FLD(T, index, F_STR, O), END };
#undef T
#define T gpuenv_kb_wheel_package_t
static const struct field f_wheel_package[] = { FLD(T, name, F_STR, R),
	FLD(T, framework, F_STR, R), FLD(T, cuda_major, F_INT, O), FLD(T, cuda_min, F_VER, O), END };
#undef T
#define T gpuenv_kb_version_rule_t
static const struct field f_version_rule[] = { FLD(T, project, F_STR, R),
	FLD(T, versions, F_STR, R), FLD(T, cuda_major, F_INT, R), FLD(T, cudnn_major, F_INT, O),
	END };
#undef T
#define T gpuenv_kb_wheel_extra_t
static const struct field f_wheel_extra[] = { FLD(T, project, F_STR, R), FLD(T, extra, F_STR, R),
	FLD(T, requires, F_STR, R), FLD(T, cuda_major, F_INT, R), FLD(T, bundles_cuda, F_BOOL, R),
	END };
#undef T
#define T gpuenv_kb_meta_pin_t
static const struct field f_meta_pin[] = { FLD(T, parent, F_STR, R),
	FLD(T, parent_version, F_VER, R), FLD(T, extra, F_STR, R), FLD(T, package, F_STR, R),
	FLD(T, spec, F_STR, R), FLD(T, marker, F_STR, O), END };
#undef T
#define T gpuenv_kb_container_t
static const struct field f_container[] = { FLD(T, image, F_STR, R), FLD(T, tag, F_STR, R),
	FLD(T, release, F_VER, R), FLD(T, cuda, F_VER, R), FLD(T, cuda_full, F_VER, R),
	FLD(T, python, F_VER, O), FLD(T, torch, F_STR, O), FLD(T, tensorrt, F_VER, O),
	FLD(T, tensorrt_llm, F_VER, O), FLD(T, cudnn, F_VER, O), FLD(T, nccl, F_VER, O),
	FLD(T, ubuntu, F_VER, O), FLD(T, cuda_driver, F_VER, O),
	FLD(T, driver_min_branch, F_STR, O), FLD(T, datacenter_drivers, F_VERS, O),
	FLD(T, cc_min, F_CC, O), FLD(T, tensorflow, F_STR, O), FLD(T, jax, F_STR, O),
	FLD(T, triton, F_STR, O), FLD(T, vllm, F_STR, O), FLD(T, jetpack, F_VER, O),
	FLD(T, l4t, F_VER, O), END };
#undef T
#define T gpuenv_kb_cuda_image_t
static const struct field f_cuda_image[] = { FLD(T, cuda_full, F_VER, R), FLD(T, os, F_STRS, R),
	FLD(T, flavours, F_STRS, R), FLD(T, cudnn, F_VER, O), FLD(T, status, F_STR, R), END };
#undef T
#define T gpuenv_kb_pytorch_image_t
static const struct field f_pytorch_image[] = { FLD(T, torch, F_VER, R), FLD(T, cuda, F_VER, R),
	FLD(T, cudnn_major, F_INT, R), FLD(T, flavours, F_STRS, R), FLD(T, python, F_VER, O), END };
#undef T
#define T gpuenv_kb_about_t
static const struct field f_about[] = { FLD(T, date, F_STR, R), END };
#undef T
#define T gpuenv_kb_signature_t
static const struct field f_signature[] = { FLD(T, id, F_STR, R), FLD(T, title, F_STR, R),
	FLD(T, literal, F_STRS, O), FLD(T, regex, F_STRS, O), FLD(T, ignore_case, F_BOOL, O),
	FLD(T, after, F_STRS, O), FLD(T, within, F_INT, O), FLD(T, cause, F_STR, R), FLD(T, fix, F_STR, R), FLD(T, fix_log, F_STR, O),
	FLD(T, fix_facts, F_STR, O), END };
#undef T
/* tensorrt.toml (gpuenv/kb_trt.h) */
#define T gpuenv_kb_trt_release_t
static const struct field f_trt_release[] = { FLD(T, tensorrt, F_VER, R), FLD(T, cuda, F_VERS, O),
	FLD(T, cudnn, F_VER, O), FLD(T, sm_min, F_SM, O), FLD(T, opset_min, F_INT, O),
	FLD(T, opset_max, F_INT, O), END };
#undef T
#define T gpuenv_kb_trt_precision_t
static const struct field f_trt_precision[] = { FLD(T, precision, F_STR, R),
	FLD(T, tensorrt_min, F_VER, R), FLD(T, tensorrt_max, F_VER, O), FLD(T, cc, F_VERS, R), END };
#undef T
#define T gpuenv_kb_trt_flag_t
static const struct field f_trt_flag[] = { FLD(T, flag, F_STR, R), FLD(T, added, F_VER, O),
	FLD(T, deprecated, F_VER, O), FLD(T, removed, F_VER, O), FLD(T, replacement, F_STR, O),
	END };
#undef T
#define T gpuenv_kb_trt_hwcompat_t
static const struct field f_trt_hwcompat[] = { FLD(T, level, F_STR, R), FLD(T, trtexec, F_STR, R),
	FLD(T, added, F_VER, R), FLD(T, cc_min, F_CC, R), FLD(T, runs_on, F_STR, R), END };
#undef T
#define T gpuenv_kb_trt_vcompat_t
static const struct field f_trt_vcompat[] = { FLD(T, tensorrt_min, F_VER, R),
	FLD(T, runtime_min, F_VER, R), END };
#undef T

struct table {
	uint8_t file;
	const char *name;  /* [[name]] in the file */
	size_t size;	   /* of one row */
	size_t rows_off;   /* offsetof(gpuenv_kb_t, <table>) */
	size_t n_off;	   /* offsetof(gpuenv_kb_t, n_<table>) */
	const struct field *fields;
};

#define TBL(file, name, member, type)                                              \
	{ file, name, sizeof(type), offsetof(gpuenv_kb_t, member),                 \
		offsetof(gpuenv_kb_t, n_##member), f_##member }

static const struct table tables[] = {
	TBL(GPUENV_KB_CUDA, "toolkit", toolkit, gpuenv_kb_toolkit_t),
	TBL(GPUENV_KB_CUDA, "minor_compat", minor_compat, gpuenv_kb_minor_compat_t),
	TBL(GPUENV_KB_CUDA, "toolkit_known", toolkit_known, gpuenv_kb_toolkit_known_t),
	TBL(GPUENV_KB_CUDA, "branch", branch, gpuenv_kb_branch_t),
	TBL(GPUENV_KB_CUDA, "arch_list", cuda_arch_list, gpuenv_kb_cuda_arch_list_t),
	TBL(GPUENV_KB_CUDA, "rule", rule, gpuenv_kb_rule_t),
	TBL(GPUENV_KB_CUDA, "driver_observed", driver_observed, gpuenv_kb_driver_observed_t),
	TBL(GPUENV_KB_GPUS, "arch", arch, gpuenv_kb_arch_t),
	TBL(GPUENV_KB_GPUS, "gpu", gpu, gpuenv_kb_gpu_t),
	TBL(GPUENV_KB_GPUS, "pci_vendor", pci_vendor, gpuenv_kb_pci_vendor_t),
	TBL(GPUENV_KB_GPUS, "pci", pci, gpuenv_kb_pci_t),
	TBL(GPUENV_KB_TORCH, "release", torch_release, gpuenv_kb_torch_release_t),
	TBL(GPUENV_KB_TORCH, "variant", torch_variant, gpuenv_kb_torch_variant_t),
	TBL(GPUENV_KB_TORCH, "arch_list", torch_arch_list, gpuenv_kb_torch_arch_list_t),
	TBL(GPUENV_KB_TORCH, "pin", torch_pin, gpuenv_kb_torch_pin_t),
	TBL(GPUENV_KB_LIBRARIES, "cudnn", cudnn, gpuenv_kb_cudnn_t),
	TBL(GPUENV_KB_LIBRARIES, "nccl", nccl, gpuenv_kb_nccl_t),
	TBL(GPUENV_KB_LIBRARIES, "tensorrt", tensorrt, gpuenv_kb_tensorrt_t),
	TBL(GPUENV_KB_LIBRARIES, "version_encoding", version_encoding,
		gpuenv_kb_version_encoding_t),
	TBL(GPUENV_KB_LIBRARIES, "soname", soname, gpuenv_kb_soname_t),
	TBL(GPUENV_KB_WHEELS, "local_tag", local_tag, gpuenv_kb_local_tag_t),
	TBL(GPUENV_KB_WHEELS, "package", wheel_package, gpuenv_kb_wheel_package_t),
	TBL(GPUENV_KB_WHEELS, "version_rule", version_rule, gpuenv_kb_version_rule_t),
	TBL(GPUENV_KB_WHEELS, "extra", wheel_extra, gpuenv_kb_wheel_extra_t),
	TBL(GPUENV_KB_WHEELS, "meta_pin", meta_pin, gpuenv_kb_meta_pin_t),
	TBL(GPUENV_KB_NGC, "container", container, gpuenv_kb_container_t),
	TBL(GPUENV_KB_DIAGNOSE, "signature", signature, gpuenv_kb_signature_t),
	TBL(GPUENV_KB_ABOUT, "about", about, gpuenv_kb_about_t),
	TBL(GPUENV_KB_IMAGES, "cuda_image", cuda_image, gpuenv_kb_cuda_image_t),
	TBL(GPUENV_KB_IMAGES, "pytorch_image", pytorch_image, gpuenv_kb_pytorch_image_t),
	TBL(GPUENV_KB_TENSORRT, "release", trt_release, gpuenv_kb_trt_release_t),
	TBL(GPUENV_KB_TENSORRT, "precision", trt_precision, gpuenv_kb_trt_precision_t),
	TBL(GPUENV_KB_TENSORRT, "flag", trt_flag, gpuenv_kb_trt_flag_t),
	TBL(GPUENV_KB_TENSORRT, "hardware_compat", trt_hwcompat, gpuenv_kb_trt_hwcompat_t),
	TBL(GPUENV_KB_TENSORRT, "version_compat", trt_vcompat, gpuenv_kb_trt_vcompat_t),
};

#define NTABLES (sizeof(tables) / sizeof(tables[0]))

/* ---- loading one file --------------------------------------------------------- */

struct loader {
	gpuenv_kb_t *kb;
	gpuenv_ctx_t *ctx;
	const char *origin; /* the file's name in errors */
	int file;
	gpuenv_str_t last_source; /* rows of a table often share one source */
	const char *text;	  /* the file's bytes, alive as long as the KB */
	size_t len;
};

/* Make a string value the KB's own: the document is freed after mapping.
 * The parse borrows the text, so a string written without escapes is a
 * slice of the text already (no copy, no new memory); the others are
 * copied into the KB's arena. */
static int keep(struct loader *L, gpuenv_str_t *s)
{
	gpuenv_str_t c;

	if (!s->ptr)
		return 0;
	/* as integers: comparing pointers into different objects is undefined */
	uintptr_t p = (uintptr_t)s->ptr, t = (uintptr_t)L->text;
	if (p >= t && s->len <= L->len && p - t <= L->len - s->len)
		return 0;
	c = gpuenv_arena_str(&L->kb->arena, *s);
	if (!c.ptr && s->len)
		return gpuenv_fail(L->ctx, -ENOMEM, L->origin, 0, 0, "out of memory");
	if (!c.ptr)
		c = gpuenv_str_n("", 0);
	*s = c;
	return 0;
}

static int fail_at(struct loader *L, int code, uint32_t line, uint32_t col, const char *fmt, ...)
	GPUENV_PRINTF(5, 6);

static int fail_at(struct loader *L, int code, uint32_t line, uint32_t col, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gpuenv_fail(L->ctx, code, L->origin, line, col, "%s", msg);
}

static const struct table *find_table(int file, gpuenv_str_t name)
{
	for (size_t i = 0; i < NTABLES; i++)
		if (tables[i].file == file && gpuenv_str_eq_cstr(name, tables[i].name))
			return &tables[i];
	return NULL;
}

static const struct field *find_field(const struct field *f, gpuenv_str_t key)
{
	for (; f->key; f++)
		if (key.len == f->keylen && memcmp(key.ptr, f->key, key.len) == 0)
			return f;
	return NULL;
}

static bool key_is(gpuenv_str_t key, const char *lit, size_t n)
{
	return key.len == n && memcmp(key.ptr, lit, n) == 0;
}

static const char *type_word(int type)
{
	switch (type) {
	case F_INT:
		return "an integer";
	case F_BOOL:
		return "a boolean";
	case F_STRS:
	case F_VERS:
	case F_SMS:
		return "an array of strings";
	case F_INTS:
		return "an array of integers";
	default:
		return "a string";
	}
}

/* Convert one string to the field's element type at dst. */
static int convert_str(struct loader *L, const struct field *f, int type,
	const gpuenv_toml_value_t *v, void *dst)
{
	gpuenv_str_t s = v->u.str;
	int r = keep(L, &s);

	if (r)
		return r;

	switch (type) {
	case F_STR:
		if (memchr(s.ptr, '\0', s.len))
			return fail_at(L, GPUENV_EFORMAT, v->line, v->col,
				"'%s' holds a NUL character", f->key);
		*(gpuenv_str_t *)dst = s;
		return 0;
	case F_VER:
		if (!gpuenv_kb_ver_parse(s, dst))
			return fail_at(L, GPUENV_EFORMAT, v->line, v->col,
				"'%s' must be a dotted version like \"12.8\", not \"%.*s\"", f->key,
				(int)(s.len > 40 ? 40 : s.len), s.ptr);
		return 0;
	case F_CC: {
		gpuenv_kb_ver_t *cc = dst;
		if (!gpuenv_kb_ver_parse(s, cc) || cc->n != 2 || cc->part[0] > 99 ||
			cc->part[1] > 9)
			return fail_at(L, GPUENV_EFORMAT, v->line, v->col,
				"'%s' must be a compute capability like \"9.0\", not \"%.*s\"",
				f->key, (int)(s.len > 40 ? 40 : s.len), s.ptr);
		return 0;
	}
	case F_SM: {
		gpuenv_kb_sm_t *sm = dst;
		if (!gpuenv_str_startswith(s, "sm_") || !gpuenv_kb_sm_parse(s, sm))
			return fail_at(L, GPUENV_EFORMAT, v->line, v->col,
				"'%s' must be an architecture like \"sm_90\", not \"%.*s\"", f->key,
				(int)(s.len > 40 ? 40 : s.len), s.ptr);
		return 0;
	}
	case F_PCIID:
		if (!parse_pciid(s, dst))
			return fail_at(L, GPUENV_EFORMAT, v->line, v->col,
				"'%s' must be a PCI id like \"0x2335\", not \"%.*s\"", f->key,
				(int)(s.len > 40 ? 40 : s.len), s.ptr);
		return 0;
	}
	return fail_at(L, GPUENV_EFORMAT, v->line, v->col, "'%s': bad field type", f->key);
}

static int set_field(struct loader *L, const struct field *f, const gpuenv_toml_value_t *v,
	char *row)
{
	void *dst = row + f->off;

	switch (f->type) {
	case F_STR:
	case F_VER:
	case F_CC:
	case F_SM:
	case F_PCIID:
		if (v->type != GPUENV_TOML_STRING)
			break;
		return convert_str(L, f, f->type, v, dst);
	case F_INT:
		if (v->type != GPUENV_TOML_INTEGER)
			break;
		if (v->u.i < 0)
			return fail_at(L, GPUENV_EFORMAT, v->line, v->col, "'%s' must not be negative",
				f->key);
		*(int64_t *)dst = v->u.i;
		return 0;
	case F_BOOL:
		if (v->type != GPUENV_TOML_BOOL)
			break;
		*(int8_t *)dst = v->u.b ? 1 : 0;
		return 0;
	case F_STRS:
	case F_VERS:
	case F_SMS:
	case F_INTS: {
		const gpuenv_toml_array_t *a;
		size_t esz;
		int etype;
		char *items;
		if (v->type != GPUENV_TOML_ARRAY)
			break;
		a = v->u.arr;
		switch (f->type) {
		case F_STRS:
			esz = sizeof(gpuenv_str_t);
			etype = F_STR;
			break;
		case F_VERS:
			esz = sizeof(gpuenv_kb_ver_t);
			etype = F_VER;
			break;
		case F_SMS:
			esz = sizeof(gpuenv_kb_sm_t);
			etype = F_SM;
			break;
		default:
			esz = sizeof(int64_t);
			etype = F_INT;
			break;
		}
		items = a->len ? gpuenv_arena_calloc(&L->kb->arena, a->len, esz) : NULL;
		if (a->len && !items)
			return gpuenv_fail(L->ctx, -ENOMEM, L->origin, v->line, v->col,
				"out of memory");
		for (uint32_t i = 0; i < a->len; i++) {
			const gpuenv_toml_value_t *e = a->items[i];
			int r;
			if (etype == F_INT) {
				if (e->type != GPUENV_TOML_INTEGER)
					return fail_at(L, GPUENV_ETYPE, e->line, e->col,
						"'%s' must be %s", f->key, type_word(f->type));
				((int64_t *)(void *)items)[i] = e->u.i;
				continue;
			}
			if (e->type != GPUENV_TOML_STRING)
				return fail_at(L, GPUENV_ETYPE, e->line, e->col, "'%s' must be %s",
					f->key, type_word(f->type));
			r = convert_str(L, f, etype, e, items + i * esz);
			if (r)
				return r;
		}
		/* all list structs share the layout { const T *v; uint32_t n; } */
		gpuenv_kb_strs_t *list = dst;
		list->v = (const gpuenv_str_t *)(const void *)items;
		list->n = a->len;
		return 0;
	}
	}
	return fail_at(L, GPUENV_ETYPE, v->line, v->col, "'%s' must be %s, not %s", f->key,
		type_word(f->type), gpuenv_toml_type_name(v->type));
}

static int load_row(struct loader *L, const struct table *t, const gpuenv_toml_table_t *tab,
	char *row)
{
	gpuenv_kb_row_t *meta = (gpuenv_kb_row_t *)(void *)row;
	uint64_t seen = 0;
	int r;

	meta->file = (uint8_t)L->file;
	meta->line = tab->line;
	for (const struct field *f = t->fields; f->key; f++) {
		if (f->type == F_INT)
			*(int64_t *)(void *)(row + f->off) = GPUENV_KB_NONE;
		else if (f->type == F_BOOL)
			*(int8_t *)(row + f->off) = -1;
		else if (f->type == F_PCIID)
			*(int32_t *)(void *)(row + f->off) = GPUENV_KB_NONE;
	}
	for (uint32_t i = 0; i < tab->len; i++) {
		const gpuenv_toml_kv_t *kv = tab->items[i];
		const gpuenv_toml_value_t *v = &kv->val;
		const struct field *f;

		if (key_is(kv->key, "source", 6) || key_is(kv->key, "note", 4)) {
			bool src = kv->key.len == 6;
			if (v->type != GPUENV_TOML_STRING)
				return fail_at(L, GPUENV_ETYPE, v->line, v->col,
					"'%s' must be a string, not %s", src ? "source" : "note",
					gpuenv_toml_type_name(v->type));
			if (src && gpuenv_str_eq(v->u.str, L->last_source)) {
				meta->source = L->last_source;
				continue;
			}
			if (src)
				meta->source = v->u.str;
			else
				meta->note = v->u.str;
			r = keep(L, src ? &meta->source : &meta->note);
			if (r)
				return r;
			if (src)
				L->last_source = meta->source;
			continue;
		}
		if (key_is(kv->key, "confidence", 10)) {
			if (v->type != GPUENV_TOML_STRING || !gpuenv_str_eq_cstr(v->u.str, "secondary"))
				return fail_at(L, GPUENV_EFORMAT, v->line, v->col,
					"'confidence' can only be \"secondary\"");
			meta->secondary = true;
			continue;
		}
		f = find_field(t->fields, kv->key);
		if (!f) {
			fail_at(L, GPUENV_EFORMAT, kv->line, kv->col, "unknown key '%.*s' in [[%s]]",
				(int)(kv->key.len > 60 ? 60 : kv->key.len), kv->key.ptr, t->name);
			return gpuenv_hint(L->ctx,
				"a new key goes into docs/kb.md, tests/kb_check.py and lib/kb/kb.c first");
		}
		r = set_field(L, f, v, row);
		if (r)
			return r;
		seen |= (uint64_t)1 << (f - t->fields);
	}
	for (const struct field *f = t->fields; f->key; f++)
		if (f->required && !(seen & ((uint64_t)1 << (f - t->fields))))
			return fail_at(L, GPUENV_EFORMAT, tab->line, tab->col,
				"[[%s]] row without '%s'", t->name, f->key);
	if (!meta->source.ptr || !gpuenv_str_trim(meta->source).len) {
		fail_at(L, GPUENV_EFORMAT, tab->line, tab->col, "[[%s]] row without a source",
			t->name);
		return gpuenv_hint(L->ctx,
			"every knowledge-base row cites where its fact was read (docs/kb.md)");
	}
	return 0;
}

static int map_file(struct loader *L, const gpuenv_toml_table_t *root)
{
	gpuenv_kb_t *kb = L->kb;
	int r;

	for (uint32_t i = 0; i < root->len; i++) {
		const gpuenv_toml_kv_t *kv = root->items[i];
		const struct table *t = find_table(L->file, kv->key);
		const gpuenv_toml_array_t *a;
		char *rows;
		size_t *np;

		if (!t) {
			fail_at(L, GPUENV_EFORMAT, kv->line, kv->col, "unknown table '%.*s' in %s",
				(int)(kv->key.len > 60 ? 60 : kv->key.len), kv->key.ptr,
				file_names[L->file]);
			return gpuenv_hint(kb->ctx, "the tables of each file are listed in docs/kb.md");
		}
		if (kv->val.type != GPUENV_TOML_ARRAY)
			return fail_at(L, GPUENV_EFORMAT, kv->line, kv->col,
				"'%s' must be an array of tables ([[%s]])", t->name, t->name);
		a = kv->val.u.arr;
		rows = a->len ? gpuenv_arena_calloc(&kb->arena, a->len, t->size) : NULL;
		if (a->len && !rows)
			return gpuenv_fail(kb->ctx, -ENOMEM, L->origin, 0, 0, "out of memory");
		L->last_source = GPUENV_STR_NULL;
		for (uint32_t j = 0; j < a->len; j++) {
			const gpuenv_toml_value_t *v = a->items[j];
			if (v->type != GPUENV_TOML_TABLE)
				return fail_at(L, GPUENV_EFORMAT, v->line, v->col,
					"'%s' must be an array of tables ([[%s]])", t->name, t->name);
			r = load_row(L, t, v->u.tab, rows + j * t->size);
			if (r)
				return r;
		}
		memcpy((char *)kb + t->rows_off, &rows, sizeof(rows));
		np = (size_t *)(void *)((char *)kb + t->n_off);
		*np = a->len;
		kb->files[L->file].rows += a->len;
	}
	return 0;
}

/* Parse one file, map its rows into the KB, free the document: only one
 * document is alive at a time, which keeps the load's memory (and its page
 * faults, most of a cold load's cost) small.  text must live as long as the
 * KB and have a NUL at text[len] (the embedded copy, or a copy in the KB's
 * arena): the parse borrows it. */
static int load_file(gpuenv_kb_t *kb, int file, const char *origin, const char *text, size_t len)
{
	struct loader L = { kb, kb->ctx, origin, file, GPUENV_STR_NULL, text, len };
	gpuenv_toml_doc_t doc;
	int r;

	r = gpuenv_toml_doc_init(&doc, kb->ctx, origin);
	if (r)
		return r;
	r = gpuenv_toml_parse_borrowed(&doc, text, len);
	if (!r) {
		kb->files[file].size = len;
		r = map_file(&L, doc.root);
	}
	gpuenv_toml_doc_free(&doc);
	return r;
}

/* Cross-references the queries rely on. */
static int link_tables(gpuenv_kb_t *kb)
{
	for (size_t i = 0; i < kb->n_pci; i++) {
		gpuenv_kb_pci_t *p = (gpuenv_kb_pci_t *)&kb->pci[i];
		for (size_t j = 0; j < kb->n_gpu && !p->gpu_row; j++)
			if (gpuenv_str_eq(kb->gpu[j].name, p->gpu))
				p->gpu_row = &kb->gpu[j];
		if (!p->gpu_row)
			return gpuenv_fail(kb->ctx, GPUENV_EFORMAT, kb->files[GPUENV_KB_GPUS].origin,
				p->row.line, 0, "[[pci]] names gpu '%.*s', which is not a [[gpu]] name",
				GPUENV_STR_ARG(p->gpu));
	}
	for (size_t i = 0; i < kb->n_signature; i++) {
		const gpuenv_kb_signature_t *s = &kb->signature[i];
		if (!s->literal.n && !s->regex.n)
			return gpuenv_fail(kb->ctx, GPUENV_EFORMAT,
				kb->files[GPUENV_KB_DIAGNOSE].origin, s->row.line, 0,
				"[[signature]] '%.*s' has neither 'literal' nor 'regex' patterns",
				GPUENV_STR_ARG(s->id));
		for (size_t j = 0; j < i; j++)
			if (gpuenv_str_eq(kb->signature[j].id, s->id))
				return gpuenv_fail(kb->ctx, GPUENV_EDUPLICATE,
					kb->files[GPUENV_KB_DIAGNOSE].origin, s->row.line, 0,
					"signature id '%.*s' is used twice", GPUENV_STR_ARG(s->id));
	}
	return 0;
}

/* ---- entry points ------------------------------------------------------------------ */

gpuenv_kb_source_t gpuenv_kb_embedded(int id)
{
	gpuenv_kb_source_t s = { NULL, NULL, 0, NULL };

	if (id < 0 || id >= GPUENV_KB_NFILES)
		return s;
	for (size_t i = 0; i < gpuenv_kb_embedded_files_count; i++) {
		const struct gpuenv_embedded_file *e = &gpuenv_kb_embedded_files[i];
		if (strcmp(e->name, file_names[id]) == 0) {
			s.name = e->name;
			s.data = e->data;
			s.len = e->len;
			s.origin = "embedded";
			return s;
		}
	}
	return s;
}

int kb_file_id(gpuenv_str_t name)
{
	for (int i = 0; i < GPUENV_KB_NFILES; i++)
		if (gpuenv_str_eq_cstr(name, file_names[i]))
			return i;
	return -1;
}

void gpuenv_kb_free(gpuenv_kb_t *kb)
{
	gpuenv_ctx_t *ctx;

	if (!kb)
		return;
	ctx = kb->ctx;
	gpuenv_arena_free(&kb->arena);
	gpuenv_free(ctx, kb);
}

static int load_sources(gpuenv_ctx_t *ctx, const gpuenv_kb_source_t *src, size_t n,
	unsigned mask, gpuenv_kb_t **out)
{
	const gpuenv_kb_source_t *use[GPUENV_KB_NFILES] = { NULL };
	gpuenv_kb_source_t emb[GPUENV_KB_NFILES];
	gpuenv_kb_t *kb;
	int r = 0;

	*out = NULL;
	mask |= GPUENV_KB_FILE(GPUENV_KB_ABOUT); /* its date answers "newer than the KB" */
	for (size_t i = 0; i < n; i++) {
		int id = src[i].name ? kb_file_id(gpuenv_str(src[i].name)) : -1;
		if (id < 0) {
			gpuenv_fail(ctx, GPUENV_ENOTFOUND, src[i].origin ? src[i].origin : src[i].name,
				0, 0, "not a knowledge-base file");
			return gpuenv_hint(ctx, "the files are cuda.toml, gpus.toml, torch.toml, "
						"libraries.toml, wheels.toml, ngc.toml, diagnose.toml, "
						"images.toml, about.toml and tensorrt.toml");
		}
		use[id] = &src[i];
	}
	kb = gpuenv_calloc(ctx, 1, sizeof(*kb));
	if (!kb)
		return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
	kb->ctx = ctx;
	gpuenv_arena_init(&kb->arena, ctx, 0);
	for (int i = 0; i < GPUENV_KB_NFILES && !r; i++) {
		const gpuenv_kb_source_t *s = use[i];
		const char *origin, *text;
		kb->files[i].name = file_names[i];
		if (!(mask & (1u << i)))
			continue;
		if (!s) {
			emb[i] = gpuenv_kb_embedded(i);
			s = &emb[i];
			if (!s->data) {
				r = gpuenv_fail(ctx, GPUENV_ENOTFOUND, file_names[i], 0, 0,
					"not embedded in this build");
				break;
			}
			text = s->data; /* static: the KB may point into it */
		} else {
			/* the caller's buffer may go: the KB keeps its own copy */
			text = s->len ? gpuenv_arena_strndup(&kb->arena, s->data, s->len) : "";
			if (!text) {
				r = gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
				break;
			}
		}
		/* errors name the file: "cuda.toml" for the embedded copy, else
		 * the path it came from */
		origin = s->origin && strcmp(s->origin, "embedded") != 0 ? s->origin : file_names[i];
		kb->files[i].origin = gpuenv_arena_strndup(&kb->arena,
			s->origin ? s->origin : file_names[i],
			strlen(s->origin ? s->origin : file_names[i]));
		if (!kb->files[i].origin) {
			r = gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "out of memory");
			break;
		}
		r = load_file(kb, i, origin, text, s->len);
	}
	if (!r)
		r = link_tables(kb);
	if (r) {
		gpuenv_kb_free(kb);
		return r;
	}
	*out = kb;
	return 0;
}

int gpuenv_kb_load_sources(gpuenv_ctx_t *ctx, const gpuenv_kb_source_t *src, size_t n,
	unsigned mask, gpuenv_kb_t **out)
{
	/* a file given is loaded whatever the mask says */
	for (size_t i = 0; i < n; i++) {
		int id = src[i].name ? kb_file_id(gpuenv_str(src[i].name)) : -1;
		if (id >= 0)
			mask |= 1u << id;
	}
	return load_sources(ctx, src, n, mask, out);
}

size_t gpuenv_kb_tables(const gpuenv_kb_t *kb, gpuenv_kb_table_info_t *out, size_t max)
{
	for (size_t i = 0; i < NTABLES && i < max; i++) {
		const struct table *t = &tables[i];
		const char *rows;
		size_t n;
		memcpy(&rows, (const char *)kb + t->rows_off, sizeof(rows));
		memcpy(&n, (const char *)kb + t->n_off, sizeof(n));
		out[i].file = t->file;
		out[i].name = t->name;
		out[i].rows = n;
		out[i].secondary = 0;
		for (size_t j = 0; j < n; j++)
			if (((const gpuenv_kb_row_t *)(const void *)(rows + j * t->size))->secondary)
				out[i].secondary++;
	}
	return NTABLES;
}

void gpuenv_kb_foreach_row(const gpuenv_kb_t *kb, gpuenv_kb_row_fn fn, void *ud)
{
	for (size_t i = 0; i < NTABLES; i++) {
		const struct table *t = &tables[i];
		const char *rows;
		size_t n;
		memcpy(&rows, (const char *)kb + t->rows_off, sizeof(rows));
		memcpy(&n, (const char *)kb + t->n_off, sizeof(n));
		for (size_t j = 0; j < n; j++)
			fn(ud, t->name, (const gpuenv_kb_row_t *)(const void *)(rows + j * t->size));
	}
}

const char *gpuenv_kb_row_where(const gpuenv_kb_row_t *row, char *buf, size_t size)
{
	const char *name = gpuenv_kb_file_name(row->file);

	snprintf(buf, size, "%s:%u", name ? name : "?", (unsigned)row->line);
	return buf;
}
