/* ELF and fatbin readers.
 *
 * 1. Exactness: for each CUDA library in $GPUENV_SHARED/testdata/fatbin/
 *    index.tsv, /usr/local/cuda/lib64/NAME must have the recorded size and
 *    SHA-256 (else the test fails loudly: the listings would not apply), and
 *    gpuenv's cuobjdump --list-elf / --list-ptx lines must equal the
 *    recorded ones byte for byte.
 * 2. Robustness: truncated copies of real libraries at many cut points,
 *    flipped header bytes, empty and non-ELF files, a section header table
 *    beyond EOF: each fails cleanly with a message that says where.
 * 3. Synthetic ELF and fatbin images for what the real files do not show:
 *    'a'/'f' variants, LTO-IR, padding, extended section numbering, the
 *    dynamic section, allocation failures.
 *
 * Without /usr/local/cuda the synthetic tests still run; the program then
 * says why and exits 77 (skipped) if they passed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/elf.h"
#include "gpuenv/fatbin.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"

#include "testutil.h"

#define CUDA_LIB "/usr/local/cuda/lib64"

static const char *shared_dir(void)
{
	const char *s = getenv("GPUENV_SHARED");
	return s && *s ? s : "../shared";
}

/* ---- little-endian writers for the synthetic images ---- */

static void wr16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void wr32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void wr64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

struct ent {
	uint16_t kind;
	uint32_t arch;
	uint64_t flags;
	uint32_t payload; /* payload bytes (room) */
	uint32_t csize;	  /* compressed size, 0 = none */
	uint32_t ehsize;  /* 0 = 64 */
};

/* one container holding ents; returns its size */
static size_t put_container(unsigned char *out, const struct ent *e, size_t n)
{
	size_t p = 16;

	for (size_t i = 0; i < n; i++) {
		uint32_t eh = e[i].ehsize ? e[i].ehsize : 64;
		memset(out + p, 0, eh);
		wr16(out + p, e[i].kind);
		wr16(out + p + 2, 0x0101);
		wr32(out + p + 4, eh);
		wr64(out + p + 8, e[i].payload);
		wr32(out + p + 16, e[i].csize);
		wr16(out + p + 24, e[i].kind == GPUENV_FATBIN_PTX ? 0 : 8);
		wr16(out + p + 26, e[i].kind == GPUENV_FATBIN_PTX ? 9 : 1);
		wr32(out + p + 28, e[i].arch);
		wr64(out + p + 40, e[i].flags);
		wr64(out + p + 56, e[i].csize ? 4 * (uint64_t)e[i].csize : 0);
		memset(out + p + eh, 0xcc, e[i].payload);
		p += eh + e[i].payload;
	}
	wr32(out, GPUENV_FATBIN_MAGIC);
	wr16(out + 4, 1);
	wr16(out + 6, 16);
	wr64(out + 8, p - 16);
	return p;
}

struct sec {
	const char *name;
	uint32_t type;
	const unsigned char *data;
	size_t size;
};

enum { ELF_EXTNUM = 1 };

/* ELF header, section contents, .shstrtab, section header table */
static size_t make_elf(unsigned char *out, size_t cap, const struct sec *s, size_t n, int mode)
{
	size_t p = 64, nsec = n + 2, shstr_off, shstr_len = 1, shoff;
	size_t offs[16], names[16];

	assert_true(n + 2 <= 16);
	memset(out, 0, cap);
	for (size_t i = 0; i < n; i++) {
		p = (p + 7) & ~(size_t)7;
		offs[i] = p;
		assert_true(p + s[i].size < cap);
		if (s[i].data)
			memcpy(out + p, s[i].data, s[i].size);
		p += s[i].size;
	}
	shstr_off = p;
	for (size_t i = 0; i < n; i++) {
		names[i] = shstr_len;
		memcpy(out + p + shstr_len, s[i].name, strlen(s[i].name) + 1);
		shstr_len += strlen(s[i].name) + 1;
	}
	names[n] = shstr_len;
	memcpy(out + p + shstr_len, ".shstrtab", 10);
	shstr_len += 10;
	p += shstr_len;
	shoff = (p + 7) & ~(size_t)7;
	assert_true(shoff + nsec * 64 <= cap);
	memcpy(out, "\177ELF\2\1\1", 7);
	wr16(out + 16, GPUENV_ET_DYN);
	wr16(out + 18, 62);
	wr32(out + 20, 1);
	wr64(out + 40, shoff);
	wr16(out + 52, 64);
	wr16(out + 58, 64);
	if (mode & ELF_EXTNUM) {
		wr16(out + 60, 0);
		wr16(out + 62, 0xffff);
		wr64(out + shoff + 32, nsec);
		wr32(out + shoff + 40, (uint32_t)(n + 1));
	} else {
		wr16(out + 60, (uint16_t)nsec);
		wr16(out + 62, (uint16_t)(n + 1));
	}
	for (size_t i = 0; i <= n; i++) {
		unsigned char *h = out + shoff + (i + 1) * 64;
		wr32(h, (uint32_t)names[i]);
		wr32(h + 4, i < n ? s[i].type : GPUENV_SHT_STRTAB);
		wr64(h + 24, i < n ? offs[i] : shstr_off);
		wr64(h + 32, i < n ? s[i].size : shstr_len);
		wr64(h + 48, 8);
	}
	return shoff + nsec * 64;
}

/* ---- failing allocator (pkgconf's alloc-inject) ---- */

/* ---- synthetic: fatbin fields, listing, summary, compatibility ---- */

static const struct ent mixed[] = {
	{ GPUENV_FATBIN_CUBIN, 75, 0x11, 40, 0, 0 },
	{ GPUENV_FATBIN_CUBIN, 90, 0x108011, 48, 45, 0 },
	{ GPUENV_FATBIN_CUBIN, 100, 0x1208011, 16, 9, 112 },
	{ GPUENV_FATBIN_PTX, 120, 0x8011, 24, 20, 80 },
	{ GPUENV_FATBIN_LTOIR, 90, 0x18011, 8, 8, 120 },
	{ 0x40, 61, 0x11, 8, 0, 0 },
	{ GPUENV_FATBIN_CUBIN, 75, 0x11, 0, 0, 0 },
};

static void test_synthetic_fatbin(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_fatbin_t fb;
	gpuenv_buf_t out;
	unsigned char img[4096];
	size_t len = put_container(img, mixed, sizeof(mixed) / sizeof(mixed[0]));

	gpuenv_ctx_init(&ctx);
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_parse(&fb, "x.fatbin", "", img, len, 1000), 0);
	assert_int_equal(fb.n, 7);
	assert_int_equal(fb.ncontainers, 1);
	assert_int_equal(fb.entries[0].kind, GPUENV_FATBIN_CUBIN);
	assert_int_equal(fb.entries[0].arch, 75);
	assert_int_equal(fb.entries[0].variant, 0);
	assert_false(fb.entries[0].compressed);
	assert_int_equal(fb.entries[0].offset, 1000 + 16 + 64);
	assert_int_equal(fb.entries[0].size, 40);
	assert_int_equal(fb.entries[0].major, 1);
	assert_int_equal(fb.entries[0].minor, 8);
	assert_int_equal(fb.entries[1].variant, 'a');
	assert_true(fb.entries[1].compressed);
	assert_int_equal(fb.entries[1].size, 45);
	assert_int_equal(fb.entries[1].uncompressed_size, 180);
	assert_int_equal(fb.entries[2].variant, 'f');
	assert_int_equal(fb.entries[2].offset, 1000 + 16 + 64 + 40 + 64 + 48 + 112);
	assert_int_equal(fb.entries[3].kind, GPUENV_FATBIN_PTX);
	assert_int_equal(fb.entries[3].major, 9);
	assert_int_equal(fb.entries[4].kind, GPUENV_FATBIN_LTOIR);
	assert_int_equal(fb.entries[5].kind, 0x40);

	gpuenv_buf_init(&out, &ctx, 1 << 20);
	assert_int_equal(gpuenv_fatbin_list_cuobjdump(&fb, "/some/dir/libx.so.12", GPUENV_FATBIN_CUBIN, &out), 0);
	assert_string_equal(out.data,
		"ELF file    1: libx.so.1.sm_75.cubin\n"
		"ELF file    2: libx.so.2.sm_90a.cubin\n"
		"ELF file    3: libx.so.3.sm_100.cubin\n"
		"ELF file    4: libx.so.4.sm_75.cubin\n");
	gpuenv_buf_reset(&out);
	assert_int_equal(gpuenv_fatbin_list_cuobjdump(&fb, "a.out", GPUENV_FATBIN_PTX, &out), 0);
	assert_string_equal(out.data, "PTX file    1: a.1.sm_120.ptx\n");
	gpuenv_buf_reset(&out);
	/* stems: no extension, a leading dot, dots in folder names */
	gpuenv_fatbin_list_cuobjdump(&fb, "dir.d/noext", GPUENV_FATBIN_PTX, &out);
	gpuenv_fatbin_list_cuobjdump(&fb, ".hidden", GPUENV_FATBIN_PTX, &out);
	gpuenv_fatbin_list_cuobjdump(&fb, "", GPUENV_FATBIN_PTX, &out);
	assert_string_equal(out.data,
		"PTX file    1: noext.1.sm_120.ptx\n"
		"PTX file    1: .hidden.1.sm_120.ptx\n"
		"PTX file    1: .1.sm_120.ptx\n");
	gpuenv_buf_reset(&out);
	assert_int_equal(gpuenv_fatbin_summary(&fb, &out), 0);
	assert_string_equal(out.data, "sm_75 sm_90a sm_100f ptx: compute_120 lto: lto_90");

	gpuenv_fatbin_arch_t archs[8];
	assert_int_equal(gpuenv_fatbin_archs(&fb, GPUENV_FATBIN_CUBIN, archs, 8), 3);
	assert_int_equal(archs[0].arch, 75);
	assert_int_equal(archs[1].arch, 90);
	assert_int_equal(archs[1].variant, 'a');
	assert_int_equal(archs[2].variant, 'f');
	/* a short out array keeps the smallest and still counts them all */
	assert_int_equal(gpuenv_fatbin_archs(&fb, GPUENV_FATBIN_CUBIN, archs, 2), 3);
	assert_int_equal(archs[0].arch, 75);
	assert_int_equal(archs[1].arch, 90);
	assert_int_equal(gpuenv_fatbin_archs(&fb, GPUENV_FATBIN_CUBIN, NULL, 0), 3);

	char name[16];
	assert_int_equal(gpuenv_fatbin_arch_name(&fb.entries[1], "sm_", name, sizeof(name)), 6);
	assert_string_equal(name, "sm_90a");
	assert_int_equal(gpuenv_fatbin_arch_name(&fb.entries[2], "compute_", name, 8), 7);
	assert_string_equal(name, "compute");

	/* compatibility: sm_75 cubin runs on 7.5 only (no 7.x above it here);
	 * sm_90a on 9.0 exactly; sm_100f on 10.x; compute_120 PTX from 12.0 */
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 75), GPUENV_FATBIN_CUBIN);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 86), 0);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 90), GPUENV_FATBIN_CUBIN);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 100), GPUENV_FATBIN_CUBIN);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 103), GPUENV_FATBIN_CUBIN);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 110), 0);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 120), GPUENV_FATBIN_PTX);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 121), GPUENV_FATBIN_PTX);

	gpuenv_fatbin_free(&fb);
	gpuenv_buf_reset(&out);
	assert_int_equal(gpuenv_fatbin_summary(&fb, &out), 0);
	assert_string_equal(out.data, "no CUDA code");
	gpuenv_buf_free(&out);
}

static void test_ptx_variants(void **state)
{
	(void)state;
	static const struct ent ptx[] = {
		{ GPUENV_FATBIN_PTX, 90, 0x108011, 8, 0, 0 },	/* compute_90a */
		{ GPUENV_FATBIN_PTX, 100, 0x208011, 8, 0, 0 },	/* compute_100f */
		{ GPUENV_FATBIN_CUBIN, 80, 0x11, 8, 0, 0 },
	};
	gpuenv_ctx_t ctx;
	gpuenv_fatbin_t fb;
	unsigned char img[1024];
	size_t len = put_container(img, ptx, 3);

	gpuenv_ctx_init(&ctx);
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_parse(&fb, "p", "", img, len, 0), 0);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 86), GPUENV_FATBIN_CUBIN); /* sm_80 on 8.6 */
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 89), GPUENV_FATBIN_CUBIN);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 90), GPUENV_FATBIN_PTX);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 100), GPUENV_FATBIN_PTX);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 103), GPUENV_FATBIN_PTX);
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 120), 0); /* 'f' stays in its family */
	assert_int_equal(gpuenv_fatbin_runs_on(&fb, 75), 0);
	gpuenv_fatbin_free(&fb);
}

static void expect_bad(const unsigned char *img, size_t len, int code, const char *needle)
{
	gpuenv_ctx_t ctx;
	gpuenv_fatbin_t fb;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_fatbin_init(&fb, &ctx);
	r = gpuenv_fatbin_parse(&fb, "bad.so", ".nv_fatbin", img, len, 0x4000);
	if (r != code || !strstr(ctx.err.msg, needle))
		fail_msg("expected %d with \"%s\", got %d: %s", code, needle, r, ctx.err.msg);
	assert_string_equal(ctx.err.file, "bad.so");
	gpuenv_fatbin_free(&fb);
}

static void test_fatbin_damage(void **state)
{
	(void)state;
	static const struct ent two[] = {
		{ GPUENV_FATBIN_CUBIN, 80, 0x11, 32, 0, 0 },
		{ GPUENV_FATBIN_PTX, 80, 0x8011, 16, 10, 0 },
	};
	unsigned char img[2048], bad[2048];
	size_t len = put_container(img, two, 2), len2;
	gpuenv_ctx_t ctx;
	gpuenv_fatbin_t fb;

	gpuenv_ctx_init(&ctx);
	/* zero padding between containers is skipped; so is trailing padding */
	memcpy(bad, img, len);
	memset(bad + len, 0, 24);
	memcpy(bad + len + 24, img, len);
	memset(bad + 2 * len + 24, 0, 5);
	len2 = 2 * len + 29;
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_parse(&fb, "pad", "", bad, len2, 0), 0);
	assert_int_equal(fb.ncontainers, 2);
	assert_int_equal(fb.n, 4);
	assert_int_equal(fb.entries[3].container, 1);
	gpuenv_fatbin_free(&fb);

	/* garbage between containers: error at its offset, entries before kept */
	bad[len + 3] = 0x7f;
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_parse(&fb, "pad", ".nv_fatbin", bad, len2, 0x100),
		GPUENV_EFORMAT);
	assert_int_equal(fb.n, 2);
	char want[64];
	snprintf(want, sizeof(want), "offset 0x%zx (file offset 0x%zx)", len + 3, len + 3 + 0x100);
	if (!strstr(ctx.err.msg, want))
		fail_msg("no position in: %s", ctx.err.msg);
	gpuenv_fatbin_free(&fb);

	memcpy(bad, img, len);
	wr16(bad + 4, 2);
	expect_bad(bad, len, GPUENV_EUNSUPPORTED, "container version 2");
	memcpy(bad, img, len);
	wr16(bad + 6, 8);
	expect_bad(bad, len, GPUENV_EFORMAT, "container header size 8");
	memcpy(bad, img, len);
	wr64(bad + 8, len);
	expect_bad(bad, len, GPUENV_EFORMAT, "runs past the end");
	memcpy(bad, img, len);
	wr64(bad + 8, UINT64_MAX);
	expect_bad(bad, len, GPUENV_EFORMAT, "runs past the end");
	memcpy(bad, img, len);
	wr32(bad + 16 + 4, 63);
	expect_bad(bad, len, GPUENV_EFORMAT, "entry header size 63");
	memcpy(bad, img, len);
	wr32(bad + 16 + 4, UINT32_MAX);
	expect_bad(bad, len, GPUENV_EFORMAT, "entry header size");
	memcpy(bad, img, len);
	wr64(bad + 16 + 8, UINT64_MAX - 10);
	expect_bad(bad, len, GPUENV_EFORMAT, "payload");
	memcpy(bad, img, len);
	wr32(bad + 16 + 64 + 32 + 16, 17); /* PTX compressed size > payload */
	expect_bad(bad, len, GPUENV_EFORMAT, "compressed size 17");
	/* a container whose size leaves a partial entry header */
	memcpy(bad, img, len);
	wr64(bad + 8, len - 16 + 8);
	memset(bad + len, 0, 8);
	expect_bad(bad, len + 8, GPUENV_EFORMAT, "entry header (64 bytes)");
	/* a container header cut short */
	expect_bad(img, 10, GPUENV_EFORMAT, "container header (16 bytes)");
	expect_bad((const unsigned char *)"\x01", 1, GPUENV_EFORMAT, "no container header");

	/* the entry cap */
	gpuenv_fatbin_init(&fb, &ctx);
	fb.max_entries = 1;
	assert_int_equal(gpuenv_fatbin_parse(&fb, "cap", "", img, len, 0), GPUENV_ETOOBIG);
	assert_int_equal(fb.n, 1);
	gpuenv_fatbin_free(&fb);
}

static void test_synthetic_elf(void **state)
{
	(void)state;
	static const struct ent e80[] = { { GPUENV_FATBIN_CUBIN, 80, 0x11, 8, 0, 0 } };
	static const struct ent e90[] = { { GPUENV_FATBIN_CUBIN, 90, 0x11, 8, 0, 0 } };
	unsigned char fb80[256], fb90[256];
	size_t n80 = put_container(fb80, e80, 1), n90 = put_container(fb90, e90, 1);
	unsigned char *img = calloc(1, 8192);
	gpuenv_ctx_t ctx;
	gpuenv_elf_t elf;
	gpuenv_fatbin_t fb;
	size_t len;

	assert_non_null(img);
	gpuenv_ctx_init(&ctx);
	/* both sections: only .nv_fatbin counts (libnccl.so.2 keeps both) */
	struct sec both[] = {
		{ ".text", 1, (const unsigned char *)"\x90\x90", 2 },
		{ "__nv_relfatbin", 1, fb90, n90 },
		{ ".nv_fatbin", 1, fb80, n80 },
		{ ".bss", GPUENV_SHT_NOBITS, NULL, 0 },
	};
	len = make_elf(img, 8192, both, 4, 0);
	assert_int_equal(gpuenv_elf_parse(&ctx, "both.so", img, len, &elf), 0);
	assert_int_equal(elf.nsections, 6);
	assert_int_equal(elf.type, GPUENV_ET_DYN);
	assert_int_equal(elf.machine, 62);
	assert_non_null(gpuenv_elf_section(&elf, ".shstrtab"));
	assert_null(gpuenv_elf_section(&elf, ".nope"));
	const gpuenv_elf_section_t *t = gpuenv_elf_section(&elf, ".text");
	assert_non_null(t);
	gpuenv_str_t tb = gpuenv_elf_section_data(&elf, t);
	assert_int_equal(tb.len, 2);
	assert_memory_equal(tb.ptr, "\x90\x90", 2);
	assert_int_equal(gpuenv_elf_section_data(&elf, gpuenv_elf_section(&elf, ".bss")).len, 0);
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_read_elf(&fb, &elf), 0);
	assert_int_equal(fb.n, 1);
	assert_int_equal(fb.entries[0].arch, 80);
	assert_int_equal(fb.entries[0].offset,
		gpuenv_elf_section(&elf, ".nv_fatbin")->offset + 16 + 64);
	gpuenv_fatbin_free(&fb);
	/* dynamic info: this image has no program headers */
	gpuenv_arena_t arena;
	gpuenv_elf_dynamic_t dyn;
	gpuenv_arena_init(&arena, &ctx, 0);
	assert_int_equal(gpuenv_elf_dynamic(&ctx, &elf, &arena, &dyn), GPUENV_ENOTFOUND);
	gpuenv_arena_free(&arena);
	gpuenv_elf_close(&elf);

	/* relocatable device code only (an object built with nvcc -rdc) */
	struct sec rel[] = { { "__nv_relfatbin", 1, fb90, n90 } };
	len = make_elf(img, 8192, rel, 1, ELF_EXTNUM);
	assert_int_equal(gpuenv_elf_parse(&ctx, "rdc.o", img, len, &elf), 0);
	assert_int_equal(elf.nsections, 3); /* from section 0: extended numbering */
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_read_elf(&fb, &elf), 0);
	assert_int_equal(fb.n, 1);
	assert_int_equal(fb.entries[0].arch, 90);
	gpuenv_fatbin_free(&fb);
	gpuenv_elf_close(&elf);

	/* no CUDA code at all */
	struct sec none[] = { { ".text", 1, (const unsigned char *)"\xc3", 1 } };
	len = make_elf(img, 8192, none, 1, 0);
	assert_int_equal(gpuenv_elf_parse(&ctx, "plain.so", img, len, &elf), 0);
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_read_elf(&fb, &elf), 0);
	assert_int_equal(fb.n, 0);
	assert_int_equal(fb.nsections, 0);
	gpuenv_elf_close(&elf);
	gpuenv_elf_close(&elf); /* twice is harmless */

	/* damage in the synthetic ELF */
	struct {
		size_t at;
		int width;
		uint64_t val;
		int code;
		const char *needle;
	} cases[] = {
		{ 4, 1, 1, GPUENV_EUNSUPPORTED, "only 64-bit little-endian" },
		{ 5, 1, 2, GPUENV_EUNSUPPORTED, "only 64-bit little-endian" },
		{ 6, 1, 0, GPUENV_EFORMAT, "identification version" },
		{ 52, 2, 10, GPUENV_EFORMAT, "ELF header size" },
		{ 40, 8, 1u << 20, GPUENV_EFORMAT, "section header table at offset 1048576 lies beyond" },
		{ 40, 8, UINT64_MAX - 3, GPUENV_EFORMAT, "beyond the end of the file" },
		{ 58, 2, 40, GPUENV_EFORMAT, "section header size is 40" },
		{ 60, 2, 500, GPUENV_EFORMAT, "500 entries" },
		{ 62, 2, 77, GPUENV_EFORMAT, "section name table index 77" },
		{ 62, 2, 0, 0, "" }, /* no names: fine */
		{ 32, 8, 64, GPUENV_EFORMAT, "program header size is 0" },
	};
	len = make_elf(img, 8192, both, 4, 0);
	unsigned char *copy = malloc(len);
	assert_non_null(copy);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(copy, img, len);
		if (cases[i].width == 1)
			copy[cases[i].at] = (unsigned char)cases[i].val;
		else if (cases[i].width == 2)
			wr16(copy + cases[i].at, (uint16_t)cases[i].val);
		else
			wr64(copy + cases[i].at, cases[i].val);
		if (cases[i].at == 32)
			wr16(copy + 56, 1); /* one program header, size field 0 */
		int r = gpuenv_elf_parse(&ctx, "syn.so", copy, len, &elf);
		if (r != cases[i].code || !strstr(ctx.err.msg, cases[i].needle))
			fail_msg("case %zu: expected %d \"%s\", got %d: %s", i, cases[i].code,
				cases[i].needle, r, r ? ctx.err.msg : "");
		if (r)
			assert_string_equal(ctx.err.file, "syn.so");
		gpuenv_elf_close(&elf);
	}
	/* a section running past EOF, a name outside the name table, a name
	 * without its NUL */
	uint64_t shoff;
	memcpy(copy, img, len);
	shoff = (uint64_t)copy[40] | (uint64_t)copy[41] << 8;
	wr64(copy + shoff + 2 * 64 + 32, len);
	assert_int_equal(gpuenv_elf_parse(&ctx, "syn.so", copy, len, &elf), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "section 2 (offset"));
	memcpy(copy, img, len);
	wr32(copy + shoff + 64, 5000);
	assert_int_equal(gpuenv_elf_parse(&ctx, "syn.so", copy, len, &elf), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "name offset 5000"));
	memcpy(copy, img, len);
	{
		/* shrink .shstrtab so the last name loses its NUL */
		unsigned char *h = copy + shoff + 5 * 64;
		uint64_t sz = (uint64_t)h[32] | (uint64_t)h[33] << 8;
		wr64(h + 32, sz - 1);
	}
	assert_int_equal(gpuenv_elf_parse(&ctx, "syn.so", copy, len, &elf), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "runs past the end of the name table"));
	/* a fatbin section whose content is damaged: read_elf reports it with
	 * the section name */
	memcpy(copy, img, len);
	assert_int_equal(gpuenv_elf_parse(&ctx, "syn.so", copy, len, &elf), 0);
	((unsigned char *)copy)[gpuenv_elf_section(&elf, ".nv_fatbin")->offset + 16 + 4] = 1;
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_read_elf(&fb, &elf), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "corrupt fatbin in .nv_fatbin at offset 0x10"));
	gpuenv_fatbin_free(&fb);
	gpuenv_elf_close(&elf);
	free(copy);
	free(img);
}

/* An ELF with program headers and a dynamic section, laid out by hand:
 * PT_LOAD maps the whole file at 0x400000. */
#define VBASE 0x400000u
static const char dynstr[] = "\0libfoo.so.1\0libbar.so.2\0libc.so.6\0$ORIGIN/../lib\0/opt/rp\0"
			     "FOO_1.0\0GLIBC_2.34\0GLIBC_2.17";
enum { S_FOO = 1, S_BAR = 13, S_LIBC = 25, S_ORIGIN = 35, S_OPT = 50, S_FOOV = 58,
	S_G234 = 66, S_G217 = 77 };

static size_t make_dyn_elf(unsigned char *out, size_t cap, size_t *dyn_at, size_t *vd_at,
	size_t *vn_at)
{
	const size_t ph = 64, str = 64 + 2 * 56, vd = 272, vn = 336, dy = 400;
	const uint64_t tags[][2] = {
		{ 1, S_BAR }, { 1, S_LIBC }, { 14, S_FOO }, { 15, S_OPT }, { 29, S_ORIGIN },
		{ 5, VBASE + str }, { 10, sizeof(dynstr) }, { 0x6ffffffc, VBASE + vd },
		{ 0x6ffffffd, 2 }, { 0x6ffffffe, VBASE + vn }, { 0x6fffffff, 1 }, { 0, 0 },
	};
	size_t ntags = sizeof(tags) / sizeof(tags[0]), len = dy + ntags * 16;

	assert_true(len <= cap);
	memset(out, 0, len);
	memcpy(out, "\177ELF\2\1\1", 7);
	wr16(out + 16, GPUENV_ET_DYN);
	wr16(out + 18, 183);
	wr64(out + 32, ph);
	wr16(out + 52, 64);
	wr16(out + 54, 56);
	wr16(out + 56, 2);
	wr32(out + ph, 1); /* PT_LOAD */
	wr64(out + ph + 8, 0);
	wr64(out + ph + 16, VBASE);
	wr64(out + ph + 32, len);
	wr64(out + ph + 40, len);
	wr32(out + ph + 56, 2); /* PT_DYNAMIC */
	wr64(out + ph + 56 + 8, dy);
	wr64(out + ph + 56 + 16, VBASE + dy);
	wr64(out + ph + 56 + 32, ntags * 16);
	memcpy(out + str, dynstr, sizeof(dynstr));
	/* verdef: base "libfoo.so.1", then "FOO_1.0" */
	wr16(out + vd, 1);
	wr16(out + vd + 2, 1);
	wr16(out + vd + 4, 1);
	wr16(out + vd + 6, 1);
	wr32(out + vd + 12, 20);
	wr32(out + vd + 16, 28);
	wr32(out + vd + 20, S_FOO);
	wr16(out + vd + 28, 1);
	wr16(out + vd + 32, 2);
	wr16(out + vd + 34, 1);
	wr32(out + vd + 40, 20);
	wr32(out + vd + 48, S_FOOV);
	/* verneed: libc.so.6 -> GLIBC_2.34, GLIBC_2.17 */
	wr16(out + vn, 1);
	wr16(out + vn + 2, 2);
	wr32(out + vn + 4, S_LIBC);
	wr32(out + vn + 8, 16);
	wr32(out + vn + 16 + 8, S_G234);
	wr32(out + vn + 16 + 12, 16);
	wr32(out + vn + 32 + 8, S_G217);
	for (size_t i = 0; i < ntags; i++) {
		wr64(out + dy + i * 16, tags[i][0]);
		wr64(out + dy + i * 16 + 8, tags[i][1]);
	}
	*dyn_at = dy;
	*vd_at = vd;
	*vn_at = vn;
	return len;
}

static int dyn_of(gpuenv_ctx_t *ctx, const unsigned char *img, size_t len, gpuenv_arena_t *a,
	gpuenv_elf_dynamic_t *dyn)
{
	gpuenv_elf_t elf;
	int r = gpuenv_elf_parse(ctx, "dyn.so", img, len, &elf);
	if (!r)
		r = gpuenv_elf_dynamic(ctx, &elf, a, dyn);
	gpuenv_elf_close(&elf);
	return r;
}

static void test_dynamic_synthetic(void **state)
{
	(void)state;
	unsigned char img[1024], bad[1024];
	size_t dy, vd, vn, len = make_dyn_elf(img, sizeof(img), &dy, &vd, &vn);
	gpuenv_ctx_t ctx;
	gpuenv_arena_t arena;
	gpuenv_elf_dynamic_t dyn;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	assert_int_equal(dyn_of(&ctx, img, len, &arena, &dyn), 0);
	assert_true(gpuenv_str_eq_cstr(dyn.soname, "libfoo.so.1"));
	assert_true(gpuenv_str_eq_cstr(dyn.rpath, "/opt/rp"));
	assert_true(gpuenv_str_eq_cstr(dyn.runpath, "$ORIGIN/../lib"));
	assert_int_equal(dyn.nneeded, 2);
	assert_true(gpuenv_str_eq_cstr(dyn.needed[0], "libbar.so.2"));
	assert_true(gpuenv_str_eq_cstr(dyn.needed[1], "libc.so.6"));
	assert_int_equal(dyn.nverdef, 2);
	assert_true(gpuenv_str_eq_cstr(dyn.verdef[0], "libfoo.so.1"));
	assert_true(gpuenv_str_eq_cstr(dyn.verdef[1], "FOO_1.0"));
	assert_int_equal(dyn.nverneed, 2);
	assert_true(gpuenv_str_eq_cstr(dyn.verneed[0].file, "libc.so.6"));
	assert_true(gpuenv_str_eq_cstr(dyn.verneed[0].version, "GLIBC_2.34"));
	assert_true(gpuenv_str_eq_cstr(dyn.verneed[1].version, "GLIBC_2.17"));

	struct {
		size_t at;
		int width;
		uint64_t val;
		const char *needle;
	} cases[] = {
		{ dy + 8, 8, 4000, "DT_NEEDED: string offset 4000" },
		{ dy + 2 * 16 + 8, 8, sizeof(dynstr) - 1, "" },	/* "" at the end: valid */
		{ dy + 5 * 16 + 8, 8, VBASE + 5000, "string table (address" },
		{ dy + 5 * 16 + 8, 8, 0, "string table (address" },
		{ dy + 6 * 16 + 8, 8, 3, "DT_SONAME: string runs past" },
		{ dy + 7 * 16 + 8, 8, 12, "version definitions (address" },
		{ dy + 8 * 16 + 8, 8, 70000, "70000 version definitions" },
		{ dy + 10 * 16 + 8, 8, 1u << 20, "1048576 version requirements" },
		{ vd, 2, 2, "revision 2" },
		{ vd + 12, 4, 9000, "auxiliary entry outside" },
		{ vd + 16, 4, 9000, "version definition 1 at offset" },
		{ vn + 8, 4, 9000, "auxiliary entry outside" },
		{ vn + 4, 4, 9000, "version requirement file" },
		{ vn, 2, 0, "revision 0" },
		{ vn + 16 + 8, 4, 9000, "version requirement: string offset 9000" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(bad, img, len);
		if (cases[i].width == 2)
			wr16(bad + cases[i].at, (uint16_t)cases[i].val);
		else if (cases[i].width == 4)
			wr32(bad + cases[i].at, (uint32_t)cases[i].val);
		else
			wr64(bad + cases[i].at, cases[i].val);
		int r = dyn_of(&ctx, bad, len, &arena, &dyn);
		int want = cases[i].needle[0] ? GPUENV_EFORMAT : 0;
		if (r != want || (want && !strstr(ctx.err.msg, cases[i].needle)))
			fail_msg("case %zu: expected \"%s\", got %d: %s", i, cases[i].needle, r,
				r ? ctx.err.msg : "");
	}
	/* DT_NULL ends the table: nothing after it counts */
	memcpy(bad, img, len);
	wr64(bad + dy + 7 * 16, 0);
	assert_int_equal(dyn_of(&ctx, bad, len, &arena, &dyn), 0);
	assert_int_equal(dyn.nneeded, 2);
	assert_true(gpuenv_str_eq_cstr(dyn.soname, "libfoo.so.1"));
	assert_int_equal(dyn.nverdef, 0);
	assert_int_equal(dyn.nverneed, 0);
	/* ... even DT_STRTAB, which the strings before it need */
	memcpy(bad, img, len);
	wr64(bad + dy + 2 * 16, 0);
	assert_int_equal(dyn_of(&ctx, bad, len, &arena, &dyn), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "DT_NEEDED given but no string table"));
	/* a PT_LOAD running past EOF is caught when the headers are read */
	memcpy(bad, img, len);
	wr64(bad + 64 + 32, len + 1);
	gpuenv_elf_t elf;
	assert_int_equal(gpuenv_elf_parse(&ctx, "dyn.so", bad, len, &elf), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "program header 0"));
	/* allocation failures anywhere: clean -ENOMEM, nothing leaked */
	for (int budget = 0; budget < 12; budget++) {
		testutil_alloc_t b = { .fail_at = budget };
		gpuenv_ctx_t fctx;
		gpuenv_arena_t fa;
		gpuenv_ctx_init(&fctx);
		fctx.mem = testutil_allocator(&b);
		gpuenv_arena_init(&fa, &fctx, 0);
		int r = dyn_of(&fctx, img, len, &fa, &dyn);
		assert_true(r == 0 || r == -ENOMEM);
		gpuenv_arena_free(&fa);
	}
	gpuenv_arena_free(&arena);
}

static void test_alloc_failure(void **state)
{
	(void)state;
	unsigned char img[64 * 200];
	struct ent many[150];

	for (size_t i = 0; i < 150; i++)
		many[i] = (struct ent){ GPUENV_FATBIN_CUBIN, (uint32_t)(50 + i % 80), 0x11, 8, 0, 0 };
	size_t len = put_container(img, many, 150);
	for (int budget = 0; budget < 5; budget++) {
		testutil_alloc_t b = { .fail_at = budget };
		gpuenv_ctx_t ctx;
		gpuenv_fatbin_t fb;
		gpuenv_ctx_init(&ctx);
		ctx.mem = testutil_allocator(&b);
		gpuenv_fatbin_init(&fb, &ctx);
		int r = gpuenv_fatbin_parse(&fb, "m", "", img, len, 0);
		assert_int_equal(r, budget < 3 ? -ENOMEM : 0); /* 64, 128, 256 */
		if (!r)
			assert_int_equal(fb.n, 150);
		gpuenv_fatbin_free(&fb);
	}
}

/* ---- files on disk: empty, not ELF, section table beyond EOF, bare fatbin ---- */

static char tmpdir[256];

static const char *tmp_file(const char *name, const void *data, size_t len)
{
	static char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_true(write(fd, data, len) == (ssize_t)len);
	close(fd);
	return path;
}

static void expect_open_fails(const char *path, int code, const char *needle)
{
	gpuenv_ctx_t ctx;
	gpuenv_fatbin_t fb;
	gpuenv_elf_t elf;
	int r;

	gpuenv_ctx_init(&ctx);
	gpuenv_fatbin_init(&fb, &ctx);
	r = gpuenv_fatbin_open(&fb, path);
	if (r != code || !strstr(ctx.err.msg, needle) || strcmp(ctx.err.file, path) != 0)
		fail_msg("%s: expected %d \"%s\", got %d: %s: %s", path, code, needle, r,
			ctx.err.file, ctx.err.msg);
	gpuenv_fatbin_free(&fb);
	r = gpuenv_elf_open(&ctx, path, &elf);
	assert_int_not_equal(r, 0);
	assert_string_equal(ctx.err.file, path);
	gpuenv_elf_close(&elf);
}

static void test_files(void **state)
{
	(void)state;
	static const struct ent e[] = { { GPUENV_FATBIN_CUBIN, 86, 0x11, 16, 0, 0 } };
	unsigned char fbin[256], img[4096];
	size_t nfb = put_container(fbin, e, 1), len;
	gpuenv_ctx_t ctx;
	gpuenv_fatbin_t fb;
	gpuenv_buf_t out;
	const char *p;

	gpuenv_ctx_init(&ctx);
	expect_open_fails(tmp_file("empty.so", "", 0), GPUENV_EFORMAT, "empty file");
	expect_open_fails(tmp_file("text.so", "#!/bin/sh\necho hi\n", 18), GPUENV_EUNSUPPORTED,
		"not an ELF file");
	expect_open_fails(tmp_file("text.so", "\177EL", 3), GPUENV_EUNSUPPORTED, "not an ELF file");
	expect_open_fails(tmp_file("short.so", "\177ELF\2\1\1", 7), GPUENV_EFORMAT,
		"shorter than the 64-byte ELF header");
	expect_open_fails(tmpdir, -EISDIR, "directory");
	expect_open_fails("/nonexistent/libx.so", -ENOENT, "No such file");
	expect_open_fails("/dev/null", GPUENV_EFORMAT, "not a regular file");

	struct sec s[] = { { ".nv_fatbin", 1, fbin, nfb } };
	len = make_elf(img, sizeof(img), s, 1, 0);
	/* the section header table sits at the end: cut the file inside it */
	expect_open_fails(tmp_file("cut.so", img, len - 10), GPUENV_EFORMAT,
		"runs past the end of the file");
	/* or point it past the end */
	unsigned char moved[4096];
	memcpy(moved, img, len);
	wr64(moved + 40, len + 64);
	expect_open_fails(tmp_file("shoff.so", moved, len), GPUENV_EFORMAT,
		"section header table at offset");

	p = tmp_file("libgood.so.3", img, len);
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_open(&fb, p), 0);
	assert_int_equal(fb.n, 1);
	gpuenv_buf_init(&out, &ctx, 1 << 16);
	assert_int_equal(gpuenv_fatbin_list_cuobjdump(&fb, p, GPUENV_FATBIN_CUBIN, &out), 0);
	assert_string_equal(out.data, "ELF file    1: libgood.so.1.sm_86.cubin\n");
	gpuenv_fatbin_free(&fb);

	/* a bare fatbin (nvcc -fatbin) */
	p = tmp_file("k.fatbin", fbin, nfb);
	gpuenv_fatbin_init(&fb, &ctx);
	assert_int_equal(gpuenv_fatbin_open(&fb, p), 0);
	assert_int_equal(fb.n, 1);
	assert_int_equal(fb.entries[0].offset, 16 + 64);
	gpuenv_fatbin_free(&fb);
	expect_open_fails(tmp_file("cut.fatbin", fbin, nfb - 1), GPUENV_EFORMAT,
		"corrupt fatbin at offset 0x0");

	/* gpuenv_elf_open maps and reads; close unmaps */
	gpuenv_elf_t elf;
	assert_int_equal(gpuenv_elf_open(&ctx, tmp_file("libgood.so.3", img, len), &elf), 0);
	assert_int_equal(elf.size, len);
	assert_non_null(gpuenv_elf_section(&elf, ".nv_fatbin"));
	gpuenv_elf_close(&elf);
	gpuenv_buf_free(&out);
}

/* the test program itself: a real dynamically linked executable */
static void test_dynamic_self(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_elf_t elf;
	gpuenv_arena_t arena;
	gpuenv_elf_dynamic_t dyn;
	bool libc = false, glibc = false;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	assert_int_equal(gpuenv_elf_open(&ctx, "/proc/self/exe", &elf), 0);
	assert_int_equal(gpuenv_elf_dynamic(&ctx, &elf, &arena, &dyn), 0);
	for (size_t i = 0; i < dyn.nneeded; i++)
		libc |= gpuenv_str_eq_cstr(dyn.needed[i], "libc.so.6");
	for (size_t i = 0; i < dyn.nverneed; i++)
		glibc |= gpuenv_str_eq_cstr(dyn.verneed[i].file, "libc.so.6") &&
			gpuenv_str_startswith(dyn.verneed[i].version, "GLIBC_2.");
	assert_true(libc);
	assert_true(glibc);
	assert_null(dyn.soname.ptr);
	gpuenv_elf_close(&elf);
	gpuenv_arena_free(&arena);
}

/* ---- the real CUDA libraries ---- */

struct lib {
	char name[128];
	char sha[65];
	uint64_t size;
};

static struct lib libs[32];
static size_t nlibs;
static bool have_cuda;

static void read_file(const char *path, gpuenv_buf_t *buf)
{
	gpuenv_ctx_t *ctx = buf->ctx;
	if (gpuenv_fs_read(ctx, path, (size_t)1 << 28, buf) != 0)
		fail_msg("%s: %s", path, ctx->err.msg);
}

static void compare_lines(const char *what, const char *got, size_t gotlen, const char *want,
	size_t wantlen)
{
	size_t line = 1, i = 0;

	if (gotlen == wantlen && memcmp(got, want, gotlen) == 0)
		return;
	while (i < gotlen && i < wantlen && got[i] == want[i]) {
		if (got[i] == '\n')
			line++;
		i++;
	}
	size_t gs = i, ws = i;
	while (gs > 0 && got[gs - 1] != '\n')
		gs--;
	ws = gs;
	const char *ge = memchr(got + gs, '\n', gotlen - gs);
	const char *we = memchr(want + ws, '\n', wantlen - ws);
	int gl = ge ? (int)(ge - (got + gs)) : (int)(gotlen - gs);
	int wl = we ? (int)(we - (want + ws)) : (int)(wantlen - ws);
	fail_msg("%s: line %zu differs:\n  gpuenv:    %.*s\n  cuobjdump: %.*s", what, line, gl,
		got + gs, wl, want + ws);
}

static void test_library(void **state)
{
	const struct lib *lib = *state;
	char path[512], listing[512];
	struct stat st;
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	gpuenv_ctx_t ctx;
	gpuenv_fatbin_t fb;
	gpuenv_buf_t got, want;
	static const struct {
		int kind;
		const char *ext;
	} kinds[] = { { GPUENV_FATBIN_CUBIN, "list-elf" }, { GPUENV_FATBIN_PTX, "list-ptx" } };

	gpuenv_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/%s", CUDA_LIB, lib->name);
	/* the listings are only ground truth for byte-identical files */
	if (stat(path, &st) != 0)
		fail_msg("%s: %s: the listing in testdata/fatbin cannot be checked "
			 "(install the CUDA 13.0 libraries it was recorded from)",
			path, strerror(errno));
	if ((uint64_t)st.st_size != lib->size)
		fail_msg("%s is %lld bytes, index.tsv says %llu: not the file the listing was recorded from",
			path, (long long)st.st_size, (unsigned long long)lib->size);
	if (gpuenv_sha256_file(&ctx, path, d) != 0)
		fail_msg("%s: %s", path, ctx.err.msg);
	gpuenv_hex(d, sizeof(d), hex);
	if (strcmp(hex, lib->sha) != 0)
		fail_msg("%s has SHA-256 %s, index.tsv says %s: not the file the listing was recorded from",
			path, hex, lib->sha);

	gpuenv_fatbin_init(&fb, &ctx);
	if (gpuenv_fatbin_open(&fb, path) != 0)
		fail_msg("%s: %s", path, ctx.err.msg);
	for (size_t k = 0; k < 2; k++) {
		gpuenv_buf_init(&got, &ctx, (size_t)1 << 28);
		gpuenv_buf_init(&want, &ctx, (size_t)1 << 28);
		snprintf(listing, sizeof(listing), "%s/testdata/fatbin/%s.%s", shared_dir(), lib->name,
			kinds[k].ext);
		read_file(listing, &want);
		assert_int_equal(gpuenv_fatbin_list_cuobjdump(&fb, path, kinds[k].kind, &got), 0);
		compare_lines(listing, got.data ? got.data : "", got.len, want.data ? want.data : "",
			want.len);
		gpuenv_buf_free(&got);
		gpuenv_buf_free(&want);
	}
	gpuenv_fatbin_free(&fb);
}

/* map a real library privately and writable: pages we flip are copied, the
 * file is untouched */
static unsigned char *map_copy(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0 || fstat(fd, &st) != 0)
		fail_msg("%s: %s", path, strerror(errno));
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		fail_msg("%s: mmap: %s", path, strerror(errno));
	*len = (size_t)st.st_size;
	return p;
}

/* everything a reader can be asked about a buffer; must never crash, and an
 * error must say something */
static int read_all(gpuenv_ctx_t *ctx, const unsigned char *p, size_t len)
{
	gpuenv_elf_t elf;
	gpuenv_fatbin_t fb;
	gpuenv_arena_t arena;
	gpuenv_elf_dynamic_t dyn;
	int r;

	gpuenv_error_clear(ctx);
	r = gpuenv_elf_parse(ctx, "lib.so", p, len, &elf);
	if (!r) {
		gpuenv_fatbin_init(&fb, ctx);
		r = gpuenv_fatbin_read_elf(&fb, &elf);
		gpuenv_fatbin_free(&fb);
		gpuenv_arena_init(&arena, ctx, 0);
		int d = gpuenv_elf_dynamic(ctx, &elf, &arena, &dyn);
		if (d && d != GPUENV_ENOTFOUND && !r)
			r = d;
		gpuenv_arena_free(&arena);
		gpuenv_elf_close(&elf);
	}
	if (r && !ctx->err.msg[0])
		fail_msg("error %d without a message", r);
	return r;
}

static void test_truncated(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	size_t len, cuts = 0;
	unsigned char *p = map_copy(CUDA_LIB "/libcufftw.so.12", &len);

	gpuenv_ctx_init(&ctx);
	assert_int_equal(read_all(&ctx, p, len), 0);
	/* every cut short of the end loses the section header table (it sits
	 * at the end): a clean error every time */
	for (size_t cut = 0; cut < len; cut += (cut < 4096 ? 1 : 997)) {
		int r = read_all(&ctx, p, cut);
		/* under 4 bytes there is no ELF magic left: not ELF at all */
		if (r != (cut > 0 && cut < 4 ? GPUENV_EUNSUPPORTED : GPUENV_EFORMAT))
			fail_msg("cut at %zu: got %d: %s", cut, r, ctx.err.msg);
		cuts++;
	}
	/* and a truncated copy on disk, through the file path */
	expect_open_fails(tmp_file("libcufftw.so.12", p, len / 2), GPUENV_EFORMAT,
		"section header table");
	munmap(p, len);
	print_message("[          ] %zu cut points of libcufftw.so.12\n", cuts);
}

/* the containers of a real .nv_fatbin, walked by hand for cut and flip points */
struct hdrs {
	size_t n;
	uint64_t at[4096];
	uint16_t size[4096];
};

static void find_headers(const unsigned char *d, size_t len, struct hdrs *h)
{
	size_t p = 0;

	h->n = 0;
	while (p + 16 <= len && h->n < 4096) {
		uint64_t end = p + 16 + ((uint64_t)d[p + 8] | (uint64_t)d[p + 9] << 8 |
						(uint64_t)d[p + 10] << 16 | (uint64_t)d[p + 11] << 24);
		h->at[h->n] = p;
		h->size[h->n++] = 16;
		p += 16;
		while (p < end && h->n < 4096) {
			uint32_t eh = d[p + 4] | (uint32_t)d[p + 5] << 8;
			uint64_t ps = (uint64_t)d[p + 8] | (uint64_t)d[p + 9] << 8 |
				(uint64_t)d[p + 10] << 16 | (uint64_t)d[p + 11] << 24;
			h->at[h->n] = p;
			h->size[h->n++] = (uint16_t)eh;
			p += eh + ps;
		}
	}
}

static void test_fatbin_cuts_and_flips(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_elf_t elf;
	gpuenv_fatbin_t full, fb;
	static struct hdrs h;
	size_t len, cuts = 0, flips = 0, failed = 0;
	unsigned char *p = map_copy(CUDA_LIB "/libcurand.so.10", &len);

	gpuenv_ctx_init(&ctx);
	assert_int_equal(gpuenv_elf_parse(&ctx, "libcurand.so.10", p, len, &elf), 0);
	const gpuenv_elf_section_t *sec = gpuenv_elf_section(&elf, ".nv_fatbin");
	assert_non_null(sec);
	unsigned char *d = p + sec->offset;
	size_t dlen = (size_t)sec->size;
	gpuenv_fatbin_init(&full, &ctx);
	assert_int_equal(gpuenv_fatbin_parse(&full, "libcurand.so.10", ".nv_fatbin", d, dlen, 0), 0);
	find_headers(d, dlen, &h);
	assert_int_equal(h.n, full.n + full.ncontainers);

	/* cuts around every header and at 512 spread points */
	for (size_t i = 0; i < h.n + 512; i++) {
		uint64_t base = i < h.n ? h.at[i] : (uint64_t)dlen * (i - h.n) / 512;
		for (int delta = -1; delta <= (i < h.n ? 65 : 0); delta += (i < h.n ? 3 : 1)) {
			if ((int64_t)base + delta < 0)
				continue;
			size_t cut = (size_t)(base + (uint64_t)(int64_t)delta);
			gpuenv_fatbin_init(&fb, &ctx);
			gpuenv_error_clear(&ctx);
			int r = gpuenv_fatbin_parse(&fb, "libcurand.so.10", ".nv_fatbin", d, cut, 0);
			if (r != 0 && (r != GPUENV_EFORMAT || !strstr(ctx.err.msg, "corrupt fatbin")))
				fail_msg("cut at %zu: %d: %s", cut, r, ctx.err.msg);
			/* what was read before the cut is a prefix of the whole */
			assert_true(fb.n <= full.n);
			for (size_t k = 0; k < fb.n; k++) {
				const gpuenv_fatbin_entry_t *a = &fb.entries[k], *b = &full.entries[k];
				assert_true(a->kind == b->kind && a->arch == b->arch &&
					a->variant == b->variant && a->offset == b->offset &&
					a->size == b->size && a->flags == b->flags);
			}
			failed += r != 0;
			gpuenv_fatbin_free(&fb);
			cuts++;
		}
	}
	/* every byte of every container and entry header flipped */
	for (size_t i = 0; i < h.n; i++) {
		for (size_t b = 0; b < h.size[i] && b < 112; b++) {
			unsigned char *x = d + h.at[i] + b, old = *x;
			*x ^= 0xff;
			gpuenv_fatbin_init(&fb, &ctx);
			gpuenv_error_clear(&ctx);
			int r = gpuenv_fatbin_parse(&fb, "libcurand.so.10", ".nv_fatbin", d, dlen, 0);
			if (r && !ctx.err.msg[0])
				fail_msg("flip at %zu: error %d without a message", (size_t)(h.at[i] + b), r);
			gpuenv_fatbin_free(&fb);
			*x = old;
			flips++;
		}
	}
	gpuenv_fatbin_free(&full);
	gpuenv_elf_close(&elf);
	munmap(p, len);
	print_message("[          ] libcurand.so.10: %zu cuts (%zu errors), %zu header byte flips\n",
		cuts, failed, flips);
}

static void test_elf_flips(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_elf_t elf;
	size_t len, flips = 0, errors = 0;
	unsigned char *p = map_copy(CUDA_LIB "/libcufftw.so.12", &len);
	uint64_t shoff, phoff;
	unsigned shnum, phnum;

	gpuenv_ctx_init(&ctx);
	assert_int_equal(gpuenv_elf_parse(&ctx, "libcufftw.so.12", p, len, &elf), 0);
	shoff = (uint64_t)p[40] | (uint64_t)p[41] << 8 | (uint64_t)p[42] << 16 |
		(uint64_t)p[43] << 24;
	phoff = p[32];
	shnum = (unsigned)elf.nsections;
	phnum = (unsigned)elf.nsegments;
	gpuenv_elf_close(&elf);
	/* ELF header, program headers, section headers: each byte flipped */
	struct {
		uint64_t at, n;
	} ranges[] = { { 0, 64 }, { phoff, (uint64_t)phnum * 56 }, { shoff, (uint64_t)shnum * 64 } };
	for (size_t r = 0; r < 3; r++) {
		for (uint64_t b = 0; b < ranges[r].n; b++) {
			unsigned char *x = p + ranges[r].at + b, old = *x;
			for (int m = 0; m < 2; m++) {
				*x = m ? (unsigned char)(old ^ 0xff) : (unsigned char)(old ^ 0x01);
				errors += read_all(&ctx, p, len) != 0;
				flips++;
			}
			*x = old;
		}
	}
	/* the dynamic section's and the fatbin's bytes too */
	assert_int_equal(gpuenv_elf_parse(&ctx, "libcufftw.so.12", p, len, &elf), 0);
	const gpuenv_elf_section_t *secs[] = { gpuenv_elf_section(&elf, ".dynamic"),
		gpuenv_elf_section(&elf, ".gnu.version_d"), gpuenv_elf_section(&elf, ".gnu.version_r"),
		gpuenv_elf_section(&elf, ".nv_fatbin") };
	uint64_t at[4], n[4];
	for (size_t s = 0; s < 4; s++) {
		assert_non_null(secs[s]);
		at[s] = secs[s]->offset;
		n[s] = secs[s]->size < 200 ? secs[s]->size : 200;
	}
	gpuenv_elf_close(&elf);
	for (size_t s = 0; s < 4; s++)
		for (uint64_t b = 0; b < n[s]; b++) {
			unsigned char *x = p + at[s] + b, old = *x;
			*x ^= 0xff;
			errors += read_all(&ctx, p, len) != 0;
			flips++;
			*x = old;
		}
	munmap(p, len);
	print_message("[          ] libcufftw.so.12: %zu header byte flips, %zu gave errors\n", flips,
		errors);
}

/* gpuenv_fatbin_open reads the fatbin headers with pread; read_elf walks a
 * mapping: both must give the same entries */
static void test_paths_agree(void **state)
{
	(void)state;
	static const char *const names[] = { "libcurand.so.10", "libnccl.so.2", "libcudnn_ops.so.9" };
	gpuenv_ctx_t ctx;

	gpuenv_ctx_init(&ctx);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];
		gpuenv_fatbin_t a, b;
		gpuenv_elf_t elf;

		snprintf(path, sizeof(path), "%s/%s", CUDA_LIB, names[i]);
		gpuenv_fatbin_init(&a, &ctx);
		gpuenv_fatbin_init(&b, &ctx);
		assert_int_equal(gpuenv_fatbin_open(&a, path), 0);
		assert_int_equal(gpuenv_elf_open(&ctx, path, &elf), 0);
		assert_int_equal(gpuenv_fatbin_read_elf(&b, &elf), 0);
		gpuenv_elf_close(&elf);
		assert_int_equal(a.n, b.n);
		assert_int_equal(a.ncontainers, b.ncontainers);
		assert_int_equal(a.nsections, b.nsections);
		assert_true(a.n > 0);
		for (size_t k = 0; k < a.n; k++) {
			const gpuenv_fatbin_entry_t *x = &a.entries[k], *y = &b.entries[k];
			assert_true(x->kind == y->kind && x->arch == y->arch && x->variant == y->variant &&
				x->compressed == y->compressed && x->major == y->major &&
				x->minor == y->minor && x->container == y->container &&
				x->flags == y->flags && x->offset == y->offset && x->size == y->size &&
				x->uncompressed_size == y->uncompressed_size);
		}
		gpuenv_fatbin_free(&a);
		gpuenv_fatbin_free(&b);
	}
}

/* the dynamic section of real CUDA libraries, against readelf -d / -V */
static void test_dynamic_cuda(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_elf_t elf;
	gpuenv_arena_t arena;
	gpuenv_elf_dynamic_t dyn;
	static const char *const needed[] = { "libc.so.6", "ld-linux-x86-64.so.2", "libdl.so.2",
		"libpthread.so.0", "librt.so.1" };

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	assert_int_equal(gpuenv_elf_open(&ctx, CUDA_LIB "/libcudart.so.13", &elf), 0);
	assert_int_equal(gpuenv_elf_dynamic(&ctx, &elf, &arena, &dyn), 0);
	assert_true(gpuenv_str_eq_cstr(dyn.soname, "libcudart.so.13"));
	assert_int_equal(dyn.nneeded, 5);
	for (size_t i = 0; i < 5; i++)
		assert_true(gpuenv_str_eq_cstr(dyn.needed[i], needed[i]));
	assert_int_equal(dyn.nverdef, 2);
	assert_true(gpuenv_str_eq_cstr(dyn.verdef[0], "libcudart.so.13"));
	assert_true(gpuenv_str_eq_cstr(dyn.verdef[1], "libcudart.so.13"));
	assert_int_equal(dyn.nverneed, 11);
	assert_true(gpuenv_str_eq_cstr(dyn.verneed[0].file, "libdl.so.2"));
	assert_true(gpuenv_str_eq_cstr(dyn.verneed[0].version, "GLIBC_2.3.4"));
	assert_true(gpuenv_str_eq_cstr(dyn.verneed[10].file, "libc.so.6"));
	assert_true(gpuenv_str_eq_cstr(dyn.verneed[10].version, "GLIBC_2.2.5"));
	assert_null(dyn.runpath.ptr);
	gpuenv_elf_close(&elf);

	assert_int_equal(gpuenv_elf_open(&ctx, CUDA_LIB "/libcublas.so.13", &elf), 0);
	assert_int_equal(gpuenv_elf_dynamic(&ctx, &elf, &arena, &dyn), 0);
	assert_true(gpuenv_str_eq_cstr(dyn.soname, "libcublas.so.13"));
	assert_true(gpuenv_str_eq_cstr(dyn.runpath, "$ORIGIN"));
	assert_null(dyn.rpath.ptr);
	assert_true(gpuenv_str_eq_cstr(dyn.needed[0], "libcublasLt.so.13"));
	gpuenv_elf_close(&elf);
	gpuenv_arena_free(&arena);
}

static int load_index(void)
{
	char path[512];
	gpuenv_ctx_t ctx;
	gpuenv_buf_t buf;
	gpuenv_str_t rest, line;

	gpuenv_ctx_init(&ctx);
	gpuenv_buf_init(&buf, &ctx, 1 << 20);
	snprintf(path, sizeof(path), "%s/testdata/fatbin/index.tsv", shared_dir());
	if (gpuenv_fs_read(&ctx, path, 1 << 20, &buf) != 0) {
		fprintf(stderr, "%s: %s\n", path, ctx.err.msg);
		return -1;
	}
	rest = gpuenv_str_n(buf.data, buf.len);
	while (rest.len && nlibs < sizeof(libs) / sizeof(libs[0])) {
		gpuenv_str_t name, sha, size;
		rest = gpuenv_str_split(rest, '\n', &line);
		if (!rest.ptr)
			rest = GPUENV_STR_NULL;
		line = gpuenv_str_trim(line);
		if (!line.len)
			continue;
		gpuenv_str_t t = gpuenv_str_split(line, '\t', &name);
		t = gpuenv_str_split(t, '\t', &sha);
		size = t;
		struct lib *l = &libs[nlibs];
		if (!t.ptr || name.len >= sizeof(l->name) || sha.len != 64 ||
			!gpuenv_str_to_u64(size, &l->size)) {
			fprintf(stderr, "%s: malformed line: %.*s\n", path, (int)line.len, line.ptr);
			gpuenv_buf_free(&buf);
			return -1;
		}
		memcpy(l->name, name.ptr, name.len);
		l->name[name.len] = '\0';
		memcpy(l->sha, sha.ptr, 64);
		l->sha[64] = '\0';
		nlibs++;
	}
	gpuenv_buf_free(&buf);
	return 0;
}

/* Distinct archs in linear time: the old insertion plus recount was
 * quadratic (50,000 entries: 2.7 s).  A hundred times the entries must cost
 * about a hundred times as much (up to 400 measured: the big array leaves
 * the caches), not ten thousand; the bound, 2,500, leaves room for a loaded
 * machine (timing on 2 shared cores is noisy, the gap between the two laws
 * is not).  And the answer must match a count done here by other means. */
static double archs_seconds(gpuenv_fatbin_t *fb, size_t *count)
{
	gpuenv_fatbin_arch_t out[8];
	struct timespec a, b;
	double best = 1e9;

	for (int rep = 0; rep < 5; rep++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int k = 0; k < 2; k++)
			*count = gpuenv_fatbin_archs(fb, GPUENV_FATBIN_CUBIN, out, 8);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
		if (t < best)
			best = t;
	}
	/* the smallest first, in (arch, variant) order */
	assert_int_equal(out[0].arch, 0);
	assert_int_equal(out[0].variant, 0);
	assert_int_equal(out[1].arch, 0);
	assert_int_equal(out[1].variant, 'a');
	assert_int_equal(out[2].variant, 'f');
	assert_int_equal(out[3].arch, 1);
	return best;
}

static void fill_distinct(gpuenv_fatbin_t *fb, size_t n)
{
	static const char variants[3] = { 0, 'a', 'f' };

	fb->n = 0;
	for (size_t i = 0; i < n; i++) {
		/* every entry a new (arch, variant), written in descending order
		 * (the worst case for an insertion sort), plus a PTX entry to skip */
		size_t k = n - 1 - i;
		fb->entries[fb->n++] = (gpuenv_fatbin_entry_t){ .kind = GPUENV_FATBIN_CUBIN,
			.arch = (uint16_t)(k / 3), .variant = variants[k % 3] };
		if (i % 16 == 0)
			fb->entries[fb->n++] = (gpuenv_fatbin_entry_t){ .kind = GPUENV_FATBIN_PTX,
				.arch = 7 };
	}
}

static void test_archs_scaling(void **state)
{
	gpuenv_fatbin_t fb;
	size_t small = 1500, big = small * 100, count; /* big: within the 3 x 65,536 (arch, variant) pairs */

	(void)state;
	memset(&fb, 0, sizeof(fb));
	fb.entries = calloc(big + big / 16 + 2, sizeof(*fb.entries));
	assert_non_null(fb.entries);
	fill_distinct(&fb, small);
	double ts = archs_seconds(&fb, &count);
	assert_int_equal(count, small);
	fill_distinct(&fb, big);
	double tb = archs_seconds(&fb, &count);
	assert_int_equal(count, big);
	/* duplicates count once */
	for (size_t i = 0; i < fb.n; i++)
		fb.entries[i].arch = (uint16_t)(fb.entries[i].arch % 100);
	assert_int_equal(gpuenv_fatbin_archs(&fb, GPUENV_FATBIN_CUBIN, NULL, 0), 300);
	assert_int_equal(gpuenv_fatbin_archs(&fb, GPUENV_FATBIN_PTX, NULL, 0), 1);
	free(fb.entries);
	/* linear: 100 to 400; quadratic: about 10,000.  A floor on the small
	 * time keeps a timer tick from deciding. */
	if (ts < 2e-5)
		ts = 2e-5;
	print_message("archs: %zu entries %.2f ms, %zu entries %.2f ms (ratio %.1f)\n", small,
		ts * 1e3, big, tb * 1e3, tb / ts);
	assert_true(tb / ts < 2500.0);
	assert_true(tb < 5.0);
}

int main(void)
{
	struct stat st;
	int failed;
	const struct CMUnitTest synthetic[] = {
		cmocka_unit_test(test_synthetic_fatbin),
		cmocka_unit_test(test_ptx_variants),
		cmocka_unit_test(test_archs_scaling),
		cmocka_unit_test(test_fatbin_damage),
		cmocka_unit_test(test_synthetic_elf),
		cmocka_unit_test(test_dynamic_synthetic),
		cmocka_unit_test(test_alloc_failure),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_dynamic_self),
	};
	const struct CMUnitTest robustness[] = {
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_fatbin_cuts_and_flips),
		cmocka_unit_test(test_elf_flips),
		cmocka_unit_test(test_dynamic_cuda),
		cmocka_unit_test(test_paths_agree),
	};
	struct CMUnitTest exact[32];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gpuenv-test-fatbin-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	failed = cmocka_run_group_tests_name("synthetic", synthetic, NULL, NULL);
	have_cuda = stat("/usr/local/cuda", &st) == 0;
	if (!have_cuda) {
		fprintf(stderr, "test-fatbin: /usr/local/cuda is absent: the cuobjdump listings of "
				"testdata/fatbin and the real-library robustness tests cannot run here\n");
	} else {
		if (load_index() != 0)
			return 1;
		for (size_t i = 0; i < nlibs; i++)
			exact[i] = (struct CMUnitTest){ libs[i].name, test_library, NULL, NULL, &libs[i] };
		failed += _cmocka_run_group_tests("exactness", exact, nlibs, NULL, NULL);
		failed += cmocka_run_group_tests_name("robustness", robustness, NULL, NULL);
	}
	/* the temporary files */
	{
		static const char *const names[] = { "empty.so", "text.so", "short.so", "cut.so",
			"shoff.so", "libgood.so.3", "k.fatbin", "cut.fatbin", "libcufftw.so.12" };
		char p[512];
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", tmpdir, names[i]);
			unlink(p);
		}
		rmdir(tmpdir);
	}
	if (failed)
		return 1;
	return have_cuda ? 0 : 77;
}
