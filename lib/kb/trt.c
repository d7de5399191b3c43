/* The TensorRT rows of the knowledge base (data/kb/tensorrt.toml) and the
 * questions asked of them (include/gpuenv/kb_trt.h). */
#include "gpuenv/kb_trt.h"

#include <string.h>

bool gpuenv_kb_trt_info(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *v, gpuenv_kb_trt_info_t *out)
{
	memset(out, 0, sizeof(*out));
	out->opset_min = out->opset_max = GPUENV_KB_NONE;
	if (!v->n)
		return false;
	for (size_t i = 0; i < kb->n_trt_release; i++) {
		const gpuenv_kb_trt_release_t *r = &kb->trt_release[i];
		if (r->tensorrt.part[0] != v->part[0] || gpuenv_kb_ver_cmp(&r->tensorrt, v) > 0)
			continue;
		/* the newest row at or below v gives each key */
#define NEWER(cur) (!(cur) || gpuenv_kb_ver_cmp(&r->tensorrt, &(cur)->tensorrt) > 0)
		if (NEWER(out->line))
			out->line = r;
		if (r->sm_min.str.ptr && NEWER(out->sm_row))
			out->sm_row = r;
		if (r->opset_max != GPUENV_KB_NONE && NEWER(out->opset_row))
			out->opset_row = r;
		if (r->cuda.n && NEWER(out->cuda_row))
			out->cuda_row = r;
#undef NEWER
	}
	if (out->sm_row)
		out->sm_min = out->sm_row->sm_min;
	if (out->opset_row) {
		out->opset_min = out->opset_row->opset_min;
		out->opset_max = out->opset_row->opset_max;
	}
	return out->line != NULL;
}

int gpuenv_kb_trt_flag(const gpuenv_kb_t *kb, gpuenv_str_t flag, const gpuenv_kb_ver_t *v,
	const gpuenv_kb_trt_flag_t **row)
{
	*row = NULL;
	for (size_t i = 0; i < kb->n_trt_flag; i++) {
		const gpuenv_kb_trt_flag_t *f = &kb->trt_flag[i];
		if (!gpuenv_str_eq(f->flag, flag))
			continue;
		*row = f;
		if (f->removed.n && gpuenv_kb_ver_cmp(v, &f->removed) >= 0)
			return GPUENV_KB_TRT_FLAG_REMOVED;
		if (f->added.n && gpuenv_kb_ver_cmp(v, &f->added) < 0)
			return GPUENV_KB_TRT_FLAG_NOT_YET;
		if (f->deprecated.n && gpuenv_kb_ver_cmp(v, &f->deprecated) >= 0)
			return GPUENV_KB_TRT_FLAG_DEPRECATED;
		return GPUENV_KB_TRT_FLAG_OK;
	}
	return GPUENV_KB_TRT_FLAG_UNKNOWN;
}

bool gpuenv_kb_trt_precision(const gpuenv_kb_t *kb, const char *p, const gpuenv_kb_ver_t *v,
	int cc_major, int cc_minor, const gpuenv_kb_trt_precision_t **row)
{
	*row = NULL;
	for (size_t i = 0; i < kb->n_trt_precision; i++) {
		const gpuenv_kb_trt_precision_t *r = &kb->trt_precision[i];
		if (!gpuenv_str_eq_cstr(r->precision, p) || (v && gpuenv_kb_ver_cmp(v, &r->tensorrt_min) < 0) ||
			(v && r->tensorrt_max.n && gpuenv_kb_ver_cmp(v, &r->tensorrt_max) > 0))
			continue;
		for (uint32_t k = 0; k < r->cc.n; k++)
			if (r->cc.v[k].part[0] == (uint32_t)cc_major &&
				r->cc.v[k].part[1] == (uint32_t)cc_minor) {
				*row = r;
				return true;
			}
	}
	return false;
}

const gpuenv_kb_trt_hwcompat_t *gpuenv_kb_trt_hwcompat(const gpuenv_kb_t *kb, gpuenv_str_t level)
{
	for (size_t i = 0; i < kb->n_trt_hwcompat; i++)
		if (gpuenv_str_eq(kb->trt_hwcompat[i].level, level) ||
			gpuenv_str_eq(kb->trt_hwcompat[i].trtexec, level))
			return &kb->trt_hwcompat[i];
	return NULL;
}

const gpuenv_kb_trt_vcompat_t *gpuenv_kb_trt_vcompat(const gpuenv_kb_t *kb)
{
	return kb->n_trt_vcompat ? &kb->trt_vcompat[0] : NULL;
}

bool gpuenv_kb_trt_version_from_int(long long n, gpuenv_kb_ver_t *out)
{
	memset(out, 0, sizeof(*out));
	if (n >= 1000 && n < 10000) { /* 8503: 8.5.3 */
		out->part[0] = (uint32_t)(n / 1000);
		out->part[1] = (uint32_t)(n / 100 % 10);
		out->part[2] = (uint32_t)(n % 100);
	} else if (n >= 100000 && n < 1000000) { /* 100300: 10.3.0 */
		out->part[0] = (uint32_t)(n / 10000);
		out->part[1] = (uint32_t)(n / 100 % 100);
		out->part[2] = (uint32_t)(n % 100);
	} else {
		return false;
	}
	out->n = 3;
	return true;
}
