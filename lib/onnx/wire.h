/* The protobuf wire format, read-only (lib/onnx's private header).
 *
 * Just enough of https://protobuf.dev/programming-guides/encoding/ to walk
 * onnx.proto's messages: varints, fixed32/64, length-delimited fields; the
 * deprecated groups (wire types 3 and 4) and wire types 6 and 7 are refused.
 * A reader is a window [pos, end) of one buffer; offsets are from the
 * buffer's start, so an error names the byte of the file where it is.
 * Pure: no context, no allocation (tests/unit/test_onnx.c, fuzz_onnx.c). */
#ifndef GPUENV_ONNX_WIRE_H
#define GPUENV_ONNX_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	ONNX_WIRE_VARINT = 0,
	ONNX_WIRE_I64 = 1,
	ONNX_WIRE_LEN = 2,
	ONNX_WIRE_SGROUP = 3,
	ONNX_WIRE_EGROUP = 4,
	ONNX_WIRE_I32 = 5,
};

typedef struct onnx_wire {
	const uint8_t *base; /* the whole buffer */
	size_t pos, end;     /* this message: bytes [pos, end) of base */
	/* after a false onnx_wire_next with err set: what and where */
	const char *err;
	size_t err_off;
} onnx_wire_t;

typedef struct onnx_wire_field {
	uint32_t num;	/* field number, 1 .. 2^29-1 */
	unsigned wire;	/* ONNX_WIRE_VARINT, _I64, _LEN or _I32 */
	uint64_t u;	/* VARINT, I64, I32: the value */
	size_t off;	/* LEN: offset of the payload; others: of the value */
	size_t len;	/* LEN: payload bytes; others: bytes of the value */
	size_t tag_off; /* offset of the field's tag */
} onnx_wire_field_t;

/* A reader over all of base[0, size). */
void onnx_wire_init(onnx_wire_t *w, const void *base, size_t size);

/* Decode the varint at p (at most n bytes) into *out: the bytes it took
 * (1..10), 0 when it runs past n, -1 when it is longer than 10 bytes or its
 * tenth byte sets bits above 64. */
int onnx_wire_varint(const uint8_t *p, size_t n, uint64_t *out);

/* The next field of w into *f: true; false at the end of the message
 * (w->err NULL) or on a malformed field (w->err and w->err_off set).  The
 * payload of a LEN field is skipped, never read: its length is checked
 * against the bytes left in the message. */
bool onnx_wire_next(onnx_wire_t *w, onnx_wire_field_t *f);

/* A reader over the payload of the LEN field f of w. */
onnx_wire_t onnx_wire_sub(const onnx_wire_t *w, const onnx_wire_field_t *f);

/* The payload of a LEN field as bytes of base. */
static inline const char *onnx_wire_bytes(const onnx_wire_t *w, const onnx_wire_field_t *f)
{
	return (const char *)w->base + f->off;
}

/* The name of a wire type for messages ("varint", "64-bit", ...). */
const char *onnx_wire_type_name(unsigned wire);

#endif
