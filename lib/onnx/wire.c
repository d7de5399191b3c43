/* The protobuf wire format, read-only (wire.h). */
#include "wire.h"

#include <string.h>

void onnx_wire_init(onnx_wire_t *w, const void *base, size_t size)
{
	memset(w, 0, sizeof(*w));
	w->base = base;
	w->end = size;
}

int onnx_wire_varint(const uint8_t *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 10; i++) {
		if (i == n)
			return 0;
		/* the tenth byte holds bit 63 alone: more is not a 64-bit value */
		if (i == 9 && p[i] > 1)
			return -1;
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*out = v;
			return (int)i + 1;
		}
	}
	return -1;
}

static bool fail(onnx_wire_t *w, size_t off, const char *why)
{
	w->err = why;
	w->err_off = off;
	w->pos = w->end; /* a failed reader stays at its end */
	return false;
}

bool onnx_wire_next(onnx_wire_t *w, onnx_wire_field_t *f)
{
	const uint8_t *p = w->base;
	size_t left, start = w->pos;
	uint64_t tag, v;
	int n;

	if (w->err || w->pos >= w->end)
		return false;
	left = w->end - w->pos;
	n = onnx_wire_varint(p + w->pos, left, &tag);
	if (n <= 0)
		return fail(w, start, n == 0 ? "truncated field tag" : "malformed varint in a field tag");
	if (tag >> 32)
		return fail(w, start, "field tag larger than 32 bits");
	f->tag_off = start;
	f->num = (uint32_t)(tag >> 3);
	f->wire = (unsigned)(tag & 7);
	if (f->num == 0)
		return fail(w, start, "field number 0");
	w->pos += (size_t)n;
	left -= (size_t)n;
	f->off = w->pos;
	switch (f->wire) {
	case ONNX_WIRE_VARINT:
		n = onnx_wire_varint(p + w->pos, left, &v);
		if (n <= 0)
			return fail(w, w->pos, n == 0 ? "truncated varint" : "malformed varint (more than 10 bytes)");
		f->u = v;
		f->len = (size_t)n;
		break;
	case ONNX_WIRE_I64:
	case ONNX_WIRE_I32: {
		size_t width = f->wire == ONNX_WIRE_I64 ? 8 : 4;
		if (left < width)
			return fail(w, w->pos, width == 8 ? "truncated 64-bit value" : "truncated 32-bit value");
		v = 0; /* little-endian */
		for (size_t i = width; i-- > 0;)
			v = v << 8 | p[w->pos + i];
		f->u = v;
		f->len = width;
		break;
	}
	case ONNX_WIRE_LEN:
		n = onnx_wire_varint(p + w->pos, left, &v);
		if (n <= 0)
			return fail(w, w->pos, n == 0 ? "truncated length" : "malformed varint in a length");
		left -= (size_t)n;
		if (v > left)
			return fail(w, w->pos, "length runs past the end of its message");
		f->off = w->pos + (size_t)n;
		f->len = (size_t)v;
		f->u = v;
		break;
	case ONNX_WIRE_SGROUP:
	case ONNX_WIRE_EGROUP:
		return fail(w, start, "a group (wire type 3 or 4): onnx.proto has none");
	default:
		return fail(w, start, "invalid wire type 6 or 7");
	}
	w->pos = f->off + f->len;
	return true;
}

onnx_wire_t onnx_wire_sub(const onnx_wire_t *w, const onnx_wire_field_t *f)
{
	onnx_wire_t s = { .base = w->base, .pos = f->off, .end = f->off + f->len };
	return s;
}

const char *onnx_wire_type_name(unsigned wire)
{
	static const char *const names[] = { "varint", "64-bit", "length-delimited", "group start",
		"group end", "32-bit", "invalid (6)", "invalid (7)" };
	return wire < 8 ? names[wire] : "invalid";
}
