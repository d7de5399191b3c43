/* Fuzz target for the format-preserving TOML editor (lib/formats/toml_edit.c).
 *
 * Input: "OPS\n" then TOML text; each byte of OPS (up to 16) is one edit:
 * its low 3 bits the kind (array append / remove, set a new key, set an
 * existing one, remove a key with or without pruning, an array of tables'
 * element appended / removed), its high bits which key/value statement it
 * works on.  Checked after every step: the statements cover the text
 * byte for byte, the text parses (the editor's own check, so a refused
 * edit must leave the text exactly as it was), an append makes the array
 * one longer with the new value last, a removal one shorter, a key set
 * reads back with its value.  The same edits run again with allocations
 * failing (fuzz_alloc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/toml_edit.h"

#include "fuzz_alloc.h"

#define CHECK(c)                                                                 \
	do {                                                                     \
		if (!(c)) {                                                      \
			fprintf(stderr, "fuzz_toml_edit: %s failed (line %d)\n", #c, __LINE__); \
			abort();                                                 \
		}                                                                \
	} while (0)

#define MAX_OPS 16
#define MAX_PATH 16

static void covered(const gpuenv_toml_edit_t *ed)
{
	size_t at = 0;
	for (size_t i = 0; i < ed->nnodes; i++) {
		CHECK(ed->nodes[i].start == at && ed->nodes[i].end > at);
		at = ed->nodes[i].end;
	}
	CHECK(at == ed->text.len);
}

/* The path of statement nd as C strings (parts with a NUL byte: none). */
static size_t cpath(const gpuenv_toml_edit_node_t *nd, char bufs[MAX_PATH][64], const char *out[MAX_PATH])
{
	if (nd->npath > MAX_PATH)
		return 0;
	for (uint32_t i = 0; i < nd->npath; i++) {
		if (nd->path[i].len >= 64 || memchr(nd->path[i].ptr, 0, nd->path[i].len))
			return 0;
		memcpy(bufs[i], nd->path[i].ptr, nd->path[i].len);
		bufs[i][nd->path[i].len] = 0;
		out[i] = bufs[i];
	}
	return nd->npath;
}

static size_t nelems(gpuenv_toml_edit_t *ed, const char *const *p, size_t n)
{
	const gpuenv_toml_edit_node_t *kv = gpuenv_toml_edit_find(ed, p, n);
	gpuenv_toml_edit_elem_t *el;
	size_t ne = 0;
	if (!kv || gpuenv_toml_edit_elems(ed, kv, &el, &ne) != 0)
		return SIZE_MAX;
	return ne;
}

static int one_edit(fuzz_oom_t *o, gpuenv_ctx_t *ctx, gpuenv_toml_edit_t *ed, uint8_t op)
{
	char bufs[MAX_PATH][64];
	const char *p[MAX_PATH + 1];
	size_t n = 0, kvs = 0, pick = 0;
	gpuenv_buf_t before;
	int r = 0;

	for (size_t i = 0; i < ed->nnodes; i++)
		kvs += ed->nodes[i].kind == GPUENV_TOML_EDIT_KEYVAL;
	if (!kvs)
		return 0;
	pick = (op >> 3) % kvs;
	for (size_t i = 0, k = 0; i < ed->nnodes; i++)
		if (ed->nodes[i].kind == GPUENV_TOML_EDIT_KEYVAL && k++ == pick) {
			n = cpath(&ed->nodes[i], bufs, p);
			break;
		}
	if (!n)
		return 0;
	gpuenv_buf_init(&before, ctx, 0);
	gpuenv_buf_append(&before, ed->text.data, ed->text.len);
	if (gpuenv_buf_failed(&before)) {
		gpuenv_buf_free(&before);
		return -ENOMEM;
	}
	size_t ne = nelems(ed, p, n);
	switch (op & 7) {
	case 0:
	case 1: {
		r = OOM_CALL(o, ctx, gpuenv_toml_edit_array_append(ed, p, n, GPUENV_STR_LIT("\"fz\"")));
		if (!r && o->pass == 0) {
			CHECK(ne != SIZE_MAX && nelems(ed, p, n) == ne + 1);
			gpuenv_toml_value_t *v = gpuenv_toml_get(ed->doc.root, p[0]);
			for (size_t i = 1; v && i < n; i++)
				v = v->type == GPUENV_TOML_TABLE ? gpuenv_toml_get(v->u.tab, p[i]) : NULL;
			CHECK(v && v->type == GPUENV_TOML_ARRAY && v->u.arr->len == ne + 1);
			const gpuenv_toml_value_t *last = v->u.arr->items[ne];
			CHECK(last->type == GPUENV_TOML_STRING && gpuenv_str_eq_cstr(last->u.str, "fz"));
		}
		break;
	}
	case 2:
		if (ne != SIZE_MAX && ne) {
			r = OOM_CALL(o, ctx, gpuenv_toml_edit_array_remove(ed, p, n, (op >> 3) % ne));
			if (!r && o->pass == 0)
				CHECK(nelems(ed, p, n) == ne - 1);
		}
		break;
	case 3:
	case 4: {
		/* a new key beside this one, or this one's value replaced */
		static const char val[] = "{ version = \"^2\", source = \"x\" }";
		if ((op & 7) == 3)
			p[n - 1] = "fuzz-new";
		r = OOM_CALL(o, ctx, gpuenv_toml_edit_set(ed, p, n, GPUENV_STR_LIT(val)));
		if (!r && o->pass == 0) {
			const gpuenv_toml_edit_node_t *kv = gpuenv_toml_edit_find(ed, p, n);
			CHECK(kv && kv->vend - kv->vstart == sizeof(val) - 1);
		}
		break;
	}
	case 5:
	case 6:
		r = OOM_CALL(o, ctx, gpuenv_toml_edit_remove(ed, p, n, (op & 7) == 6 ? GPUENV_TOML_EDIT_PRUNE : 0));
		if (!r && o->pass == 0)
			CHECK(!gpuenv_toml_edit_find(ed, p, n));
		break;
	default: {
		/* the statement's table as an array of tables */
		size_t c = gpuenv_toml_edit_aot_count(ed, p, n - 1, NULL, 0);
		if (c && (op & 8))
			r = OOM_CALL(o, ctx, gpuenv_toml_edit_aot_remove(ed, p, n - 1, c - 1));
		else if (n > 1)
			r = OOM_CALL(o, ctx, gpuenv_toml_edit_aot_append(ed, p, n - 1, GPUENV_STR_LIT("name = \"fz\"\n")));
		if (!r && o->pass == 0 && n > 1)
			CHECK(gpuenv_toml_edit_aot_count(ed, p, n - 1, NULL, 0) != c);
		break;
	}
	}
	/* refused: the text as it was */
	if (r && r != -ENOMEM)
		CHECK(ed->text.len == before.len && !memcmp(ed->text.data, before.data, before.len));
	gpuenv_buf_free(&before);
	if (ed->nodes || !ed->text.len)
		covered(ed);
	return r == -ENOMEM ? r : 0;
}

static void run(fuzz_oom_t *o, gpuenv_ctx_t *ctx, const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size < MAX_OPS + 1 ? size : MAX_OPS + 1);
	size_t nops = nl ? (size_t)(nl - data) : 0, off = nl ? nops + 1 : 0;
	gpuenv_toml_edit_t ed;

	if (OOM_CALL(o, ctx, gpuenv_toml_edit_open(&ed, ctx, "fuzz.toml", (const char *)data + off, size - off)) == 0) {
		covered(&ed);
		if (o->pass == 0)
			CHECK(ed.text.len == size - off && !memcmp(ed.text.data, data + off, size - off));
		for (size_t i = 0; i < nops; i++)
			if (one_edit(o, ctx, &ed, data[i]) != 0)
				break;
	}
	gpuenv_toml_edit_free(&ed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_oom(data, size, run);
	return 0;
}
