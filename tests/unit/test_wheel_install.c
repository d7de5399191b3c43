/* Unit tests for the strict zip reader (lib/formats/zip.c) and wheels into
 * trees and stages (lib/install/wheel.c).  Wheels are written here by a
 * small zip writer, so each hostile case is one field away from a good
 * wheel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <zlib.h>

#include "gpuenv/core.h"
#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/install.h"
#include "gpuenv/metadata.h"
#include "gpuenv/zip.h"

#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_arena_t arena;
static char tmp[256];

/* ---- a zip writer ----------------------------------------------------- */

typedef struct zent {
	const char *name;
	const unsigned char *data;
	size_t len;
	bool deflate;
	uint32_t mode;	    /* st_mode for the external attributes; 0: 0100644 */
	const char *lname;  /* the local header's name; NULL: name */
	uint32_t crc_xor;   /* flipped in the local header's CRC */
	uint32_t lie_usize; /* declared uncompressed size, 0: the truth */
	uint32_t csize_add; /* added to the compressed size in both headers */
} zent_t;

typedef struct zbuf {
	unsigned char *p;
	size_t n, cap;
} zbuf_t;

static void zput(zbuf_t *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 1024;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void z16(zbuf_t *b, uint32_t v)
{
	unsigned char c[2] = { (unsigned char)v, (unsigned char)(v >> 8) };
	zput(b, c, 2);
}

static void z32(zbuf_t *b, uint32_t v)
{
	z16(b, v & 0xffff);
	z16(b, v >> 16);
}

static unsigned char *deflate_raw(const unsigned char *p, size_t n, size_t *out)
{
	z_stream s;
	memset(&s, 0, sizeof(s));
	assert_int_equal(deflateInit2(&s, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&s, n);
	unsigned char *o = malloc(cap + 1);
	s.next_in = (unsigned char *)(uintptr_t)p;
	s.avail_in = (uInt)n;
	s.next_out = o;
	s.avail_out = (uInt)cap;
	assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
	*out = s.total_out;
	deflateEnd(&s);
	return o;
}

static void zip_write(const char *path, const zent_t *e, size_t n)
{
	zbuf_t b = { 0 }, cd = { 0 };

	for (size_t i = 0; i < n; i++) {
		size_t clen = e[i].len;
		unsigned char *c = NULL;
		const unsigned char *data = e[i].data;
		if (e[i].deflate) {
			c = deflate_raw(e[i].data, e[i].len, &clen);
			data = c;
		}
		uint32_t crc = (uint32_t)crc32(0, e[i].data, (uInt)e[i].len);
		uint32_t us = e[i].lie_usize ? e[i].lie_usize : (uint32_t)e[i].len;
		const char *ln = e[i].lname ? e[i].lname : e[i].name;
		uint32_t off = (uint32_t)b.n;
		z32(&b, 0x04034b50);
		z16(&b, 20);
		z16(&b, 0);
		z16(&b, e[i].deflate ? 8 : 0);
		z16(&b, 0);
		z16(&b, 0x21);
		z32(&b, crc ^ e[i].crc_xor);
		z32(&b, (uint32_t)clen + e[i].csize_add);
		z32(&b, us);
		z16(&b, (uint32_t)strlen(ln));
		z16(&b, 0);
		zput(&b, ln, strlen(ln));
		zput(&b, data, clen);
		z32(&cd, 0x02014b50);
		z16(&cd, 3 << 8 | 20);
		z16(&cd, 20);
		z16(&cd, 0);
		z16(&cd, e[i].deflate ? 8 : 0);
		z16(&cd, 0);
		z16(&cd, 0x21);
		z32(&cd, crc);
		z32(&cd, (uint32_t)clen + e[i].csize_add);
		z32(&cd, us);
		z16(&cd, (uint32_t)strlen(e[i].name));
		z16(&cd, 0);
		z16(&cd, 0);
		z16(&cd, 0);
		z16(&cd, 0);
		z32(&cd, (e[i].mode ? e[i].mode : 0100644) << 16);
		z32(&cd, off);
		zput(&cd, e[i].name, strlen(e[i].name));
		free(c);
	}
	uint32_t cdoff = (uint32_t)b.n;
	zput(&b, cd.p, cd.n);
	z32(&b, 0x06054b50);
	z16(&b, 0);
	z16(&b, 0);
	z16(&b, (uint32_t)n);
	z16(&b, (uint32_t)n);
	z32(&b, (uint32_t)cd.n);
	z32(&b, cdoff);
	z16(&b, 0);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.p, 1, b.n, f), b.n);
	fclose(f);
	free(b.p);
	free(cd.p);
}

/* ---- a wheel writer --------------------------------------------------- */

#define MAXE 32

typedef struct wheel {
	zent_t e[MAXE];
	size_t n;
	const char *skip_record; /* a file RECORD leaves out */
	const char *bad_hash;	 /* a file RECORD has a wrong hash for */
	char record[8192];
	char name[512];
} wheel_t;

static void w_add(wheel_t *w, const char *name, const char *text)
{
	w->e[w->n++] = (zent_t){ .name = name, .data = (const unsigned char *)text,
		.len = strlen(text), .deflate = true };
}

static void w_base(wheel_t *w)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s/foo-1.0-py3-none-any.whl", tmp);
	w_add(w, "foo/__init__.py", "def main():\n    print('hello')\n    return 0\n");
	w_add(w, "foo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n\n");
	w_add(w, "foo-1.0.dist-info/WHEEL",
		"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n");
}

/* RECORD from the entries, then the zip. */
static void w_write(wheel_t *w)
{
	gpuenv_buf_t b;
	size_t l = 0;

	gpuenv_buf_init(&b, &ctx, 0);
	for (size_t i = 0; i < w->n; i++) {
		unsigned char d[32];
		if (w->skip_record && !strcmp(w->e[i].name, w->skip_record))
			continue;
		if (w->e[i].name[strlen(w->e[i].name) - 1] == '/')
			continue;
		assert_int_equal(gpuenv_sha256(w->e[i].data, w->e[i].len, d), 0);
		if (w->bad_hash && !strcmp(w->e[i].name, w->bad_hash))
			d[0] ^= 1;
		gpuenv_buf_reset(&b);
		gpuenv_b64url_encode(d, 32, &b);
		const char *q = strchr(w->e[i].name, ',') ? "\"" : "";
		l += (size_t)snprintf(w->record + l, sizeof(w->record) - l, "%s%s%s,sha256=%s,%zu\n", q,
			w->e[i].name, q, b.data, w->e[i].len);
	}
	snprintf(w->record + l, sizeof(w->record) - l, "foo-1.0.dist-info/RECORD,,\n");
	gpuenv_buf_free(&b);
	assert_true(w->n < MAXE);
	w->e[w->n] = (zent_t){ .name = "foo-1.0.dist-info/RECORD",
		.data = (const unsigned char *)w->record, .len = strlen(w->record), .deflate = true };
	zip_write(w->name, w->e, w->n + 1);
}

/* ---- helpers ---------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	const char *t = getenv("TMPDIR");
	snprintf(tmp, sizeof(tmp), "%s/gpuenv-test-wheel-XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(tmp));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_install_remove(&ctx, tmp);
	gpuenv_arena_free(&arena);
	return 0;
}

static char *path_in(const char *rel)
{
	return (char *)gpuenv_arena_printf(&arena, "%s/%s", tmp, rel).ptr;
}

static bool exists(const char *rel)
{
	struct stat st;
	return lstat(path_in(rel), &st) == 0;
}

/* The names in tmp (one level), sorted, joined by spaces. */
static const char *listing(void)
{
	static char out[1024];
	struct dirent **list;
	int n = scandir(tmp, &list, NULL, alphasort);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.') {
			strncat(out, list[i]->d_name, sizeof(out) - strlen(out) - 2);
			strcat(out, " ");
		}
		free(list[i]);
	}
	free(list);
	return out;
}

static char *slurp(const char *rel, size_t *len)
{
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_fs_read(&ctx, path_in(rel), 1 << 24, &b), 0);
	*len = b.len;
	return b.data;
}

static int unpack(wheel_t *w, const char *expect, gpuenv_wheel_tree_t *t)
{
	gpuenv_error_clear(&ctx);
	return gpuenv_wheel_unpack(&ctx, &arena, w->name, NULL, expect, path_in("tree"), NULL, t);
}

/* ---- tests ------------------------------------------------------------ */

static void test_unpack_and_load(void **state)
{
	(void)state;
	wheel_t w;
	gpuenv_wheel_tree_t t, l;

	w_base(&w);
	w_add(&w, "foo/sub/mod.py", "X = 1\n");
	w.e[w.n++] = (zent_t){ .name = "foo/run.sh", .data = (const unsigned char *)"#!/bin/sh\n",
		.len = 10, .mode = 0100755 };
	w_add(&w, "foo-1.0.dist-info/entry_points.txt",
		"[console_scripts]\nzed = foo:main\nfoo = foo:main\n[gui_scripts]\nfoog = foo.sub:C.run\n"
		"[other]\nx = not a reference\n");
	w_add(&w, "foo/", "");
	w_write(&w);
	assert_int_equal(unpack(&w, NULL, &t), 0);
	assert_string_equal(t.name, "foo");
	assert_string_equal(t.version, "1.0");
	assert_string_equal(t.dist_info, "foo-1.0.dist-info");
	assert_null(t.data_dir);
	assert_true(t.root_is_purelib);
	assert_int_equal(strlen(t.wheel_sha256), 64);
	assert_int_equal(t.nfiles, 7);
	for (size_t i = 1; i < t.nfiles; i++)
		assert_true(strcmp(t.files[i - 1].path, t.files[i].path) < 0);
	assert_string_equal(t.files[0].path, "foo-1.0.dist-info/METADATA");
	for (size_t i = 0; i < t.nfiles; i++)
		assert_int_equal(t.files[i].perm, !strcmp(t.files[i].path, "foo/run.sh") ? 0755 : 0644);
	assert_int_equal(t.nscripts, 3);
	assert_string_equal(t.scripts[0].name, "foo");
	assert_string_equal(t.scripts[1].name, "zed");
	assert_string_equal(t.scripts[2].name, "foog");
	assert_true(t.scripts[2].gui);
	assert_string_equal(t.scripts[2].module, "foo.sub");
	assert_string_equal(t.scripts[2].attr, "C.run");
	assert_true(exists("tree/" GPUENV_TREE_MANIFEST));
	assert_false(exists("tree/" GPUENV_TREE_MANIFEST ".tmp"));

	/* the manifest gives the same tree back, and the check passes */
	assert_int_equal(gpuenv_wheel_tree_load(&ctx, &arena, path_in("tree"), true, &l), 0);
	assert_string_equal(l.name, t.name);
	assert_string_equal(l.wheel_sha256, t.wheel_sha256);
	assert_int_equal(l.nfiles, t.nfiles);
	assert_int_equal(l.nscripts, t.nscripts);
	for (size_t i = 0; i < t.nfiles; i++) {
		assert_string_equal(l.files[i].path, t.files[i].path);
		assert_int_equal(l.files[i].ino, t.files[i].ino);
		assert_int_equal(l.files[i].mtime_ns, t.files[i].mtime_ns);
		assert_memory_equal(l.files[i].sha256, t.files[i].sha256, 32);
	}
	for (size_t i = 0; i < t.nscripts; i++) {
		assert_string_equal(l.scripts[i].name, t.scripts[i].name);
		assert_int_equal(l.scripts[i].gui, t.scripts[i].gui);
	}

	/* an edit through a hardlink: damaged */
	FILE *f = fopen(path_in("tree/foo/sub/mod.py"), "a");
	fputs("Y = 2\n", f);
	fclose(f);
	assert_int_equal(gpuenv_wheel_tree_load(&ctx, &arena, path_in("tree"), true, &l),
		GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "foo/sub/mod.py"));
	assert_non_null(strstr(ctx.err.msg, "damaged"));
	/* without the check the manifest still reads */
	assert_int_equal(gpuenv_wheel_tree_load(&ctx, &arena, path_in("tree"), false, &l), 0);
	/* a missing file, then no manifest: incomplete */
	assert_int_equal(unlink(path_in("tree/foo/run.sh")), 0);
	assert_int_equal(gpuenv_wheel_tree_load(&ctx, &arena, path_in("tree"), true, &l),
		GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "foo/run.sh"));
	assert_int_equal(unlink(path_in("tree/" GPUENV_TREE_MANIFEST)), 0);
	assert_int_equal(gpuenv_wheel_tree_load(&ctx, &arena, path_in("tree"), true, &l),
		GPUENV_ENOTFOUND);
	/* the tree folder must not exist before an unpack */
	assert_int_equal(unpack(&w, NULL, &t), -EEXIST);
	assert_true(exists("tree/foo/__init__.py"));
}

static void test_expected_sha256(void **state)
{
	(void)state;
	wheel_t w;
	gpuenv_wheel_tree_t t;
	char want[65];

	w_base(&w);
	w_write(&w);
	assert_int_equal(unpack(&w, NULL, &t), 0);
	snprintf(want, sizeof(want), "%s", t.wheel_sha256);
	gpuenv_install_remove(&ctx, path_in("tree"));
	/* upper case is the same hash */
	for (char *p = want; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	assert_int_equal(unpack(&w, want, &t), 0);
	gpuenv_install_remove(&ctx, path_in("tree"));
	want[0] = want[0] == '0' ? '1' : '0';
	assert_int_equal(unpack(&w, want, &t), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.file, "foo-1.0-py3-none-any.whl"));
	assert_non_null(strstr(ctx.err.msg, "sha256"));
	assert_string_equal(listing(), "foo-1.0-py3-none-any.whl ");
}

/* One hostile wheel: refused with code, the message naming entry, and
 * nothing left but the wheel itself. */
static void refused(wheel_t *w, int code, const char *entry)
{
	gpuenv_wheel_tree_t t;
	int r = unpack(w, NULL, &t);
	if (r != code || !strstr(ctx.err.msg, entry))
		fail_msg("expected %d naming '%s', got %d: %s", code, entry, r, ctx.err.msg);
	assert_non_null(strstr(ctx.err.file, "foo-1.0-py3-none-any.whl"));
	assert_string_equal(listing(), "foo-1.0-py3-none-any.whl ");
	assert_null(t.name);
}

static void test_hostile(void **state)
{
	(void)state;
	wheel_t w;
	static const char *const bad_names[] = {
		"foo/../../evil.py", "/etc/evil.py", "foo\\evil.py", "C:/evil.py", "foo//evil.py",
		"foo/./evil.py", "..", "foo/ev\x01il.py", "foo/\xff.py",
	};

	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		w_base(&w);
		w_add(&w, bad_names[i], "x\n");
		w_write(&w);
		gpuenv_wheel_tree_t t;
		assert_int_equal(unpack(&w, NULL, &t), GPUENV_EFORMAT);
		assert_string_equal(listing(), "foo-1.0-py3-none-any.whl ");
	}
	w_base(&w);
	w_add(&w, "foo/../../evil.py", "x\n");
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo/../../evil.py");

	w_base(&w);
	w.e[w.n++] = (zent_t){ .name = "foo/link", .data = (const unsigned char *)"/etc/passwd",
		.len = 11, .mode = 0120777 };
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo/link");

	w_base(&w);
	w_add(&w, "foo/__init__.py", "X = 2\n");
	w_write(&w);
	refused(&w, GPUENV_EDUPLICATE, "foo/__init__.py");

	w_base(&w);
	w_add(&w, "foo/x", "file\n");
	w_add(&w, "foo/x/y", "under a file\n");
	w_write(&w);
	refused(&w, GPUENV_EDUPLICATE, "foo/x/y");

	w_base(&w);
	w.e[0].lname = "foo/__init__.pz";
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo/__init__.py");

	w_base(&w);
	w.e[0].crc_xor = 0x10;
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo/__init__.py");

	/* the first entry's data reaches over the next one's header */
	w_base(&w);
	w.e[0].csize_add = 20;
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo-1.0.dist-info/METADATA");

	w_base(&w);
	w_add(&w, "foo/mod.py", "X = 1\n");
	w.bad_hash = "foo/mod.py";
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo/mod.py");

	w_base(&w);
	w_add(&w, "foo/extra.py", "X = 1\n");
	w.skip_record = "foo/extra.py";
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo/extra.py");

	/* a bomb: 72 MiB of zeros, ~1030:1 (over the 1000:1 cap, which holds
	 * above 64 MiB), honestly declared, and the same declaring 100 bytes
	 * (found while inflating) */
	size_t big = (size_t)72 << 20;
	char *zeros = calloc(1, big + 1);
	w_base(&w);
	w.e[w.n++] = (zent_t){ .name = "foo/zeros", .data = (unsigned char *)zeros, .len = big,
		.deflate = true };
	w_write(&w);
	refused(&w, GPUENV_ETOOBIG, "foo/zeros");
	w_base(&w);
	w.e[w.n++] = (zent_t){ .name = "foo/zeros", .data = (unsigned char *)zeros, .len = big,
		.deflate = true, .lie_usize = 100 };
	w.skip_record = "foo/zeros";
	w_write(&w);
	/* RECORD must agree with the declared size to get that far */
	{
		char *rec = w.record + strlen(w.record);
		snprintf(rec, sizeof(w.record) - strlen(w.record), "foo/zeros,sha256=%s,100\n",
			"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
		w.e[w.n].len = strlen(w.record);
		zip_write(w.name, w.e, w.n + 1);
	}
	refused(&w, GPUENV_ETOOBIG, "foo/zeros");
	free(zeros);

	/* no RECORD, no WHEEL, METADATA naming another project */
	w_base(&w);
	w.n--; /* WHEEL */
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo-1.0.dist-info/WHEEL");
	w_base(&w);
	w.e[1].data = (const unsigned char *)"Metadata-Version: 2.1\nName: bar\nVersion: 1.0\n\n";
	w.e[1].len = strlen((const char *)w.e[1].data);
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "bar");
	w_base(&w);
	w.e[1].data = (const unsigned char *)"Metadata-Version: 2.1\nName: foo\nVersion: 1.0.0.1\n\n";
	w.e[1].len = strlen((const char *)w.e[1].data);
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "1.0.0.1");
	/* 1.0.0 is 1.0 (PEP 440) */
	w.e[1].data = (const unsigned char *)"Metadata-Version: 2.1\nName: Foo\nVersion: 1.0.0\n\n";
	w.e[1].len = strlen((const char *)w.e[1].data);
	w_write(&w);
	gpuenv_wheel_tree_t t;
	assert_int_equal(unpack(&w, NULL, &t), 0);
	gpuenv_install_remove(&ctx, path_in("tree"));
	/* the manifest's name is reserved */
	w_base(&w);
	w_add(&w, GPUENV_TREE_MANIFEST, "gpuenv-tree 1\n");
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, GPUENV_TREE_MANIFEST);
	/* a .data folder with an unknown key */
	w_base(&w);
	w_add(&w, "foo-1.0.data/lib/x", "x\n");
	w_write(&w);
	refused(&w, GPUENV_EFORMAT, "foo-1.0.data/lib/x");
}

static void test_limits(void **state)
{
	(void)state;
	wheel_t w;
	gpuenv_wheel_tree_t t;
	gpuenv_unpack_limits_t lim = { .max_files = 3 };

	w_base(&w);
	w_write(&w);
	gpuenv_error_clear(&ctx);
	assert_int_equal(gpuenv_wheel_unpack(&ctx, &arena, w.name, NULL, NULL, path_in("tree"), &lim, &t),
		GPUENV_ETOOBIG);
	lim = (gpuenv_unpack_limits_t){ .max_file = 20 };
	assert_int_equal(gpuenv_wheel_unpack(&ctx, &arena, w.name, NULL, NULL, path_in("tree"), &lim, &t),
		GPUENV_ETOOBIG);
	assert_non_null(strstr(ctx.err.msg, "foo"));
	lim = (gpuenv_unpack_limits_t){ .max_total = 100 };
	assert_int_equal(gpuenv_wheel_unpack(&ctx, &arena, w.name, NULL, NULL, path_in("tree"), &lim, &t),
		GPUENV_ETOOBIG);
	assert_string_equal(listing(), "foo-1.0-py3-none-any.whl ");
}

static bool has_line(const char *text, const char *line)
{
	size_t l = strlen(line);
	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && !strncmp(p + l, "\r\n", 2))
			return true;
	return false;
}

static void stage_scheme(gpuenv_scheme_t *sc, const char *prefix, const char *python)
{
	memset(sc, 0, sizeof(*sc));
	sc->prefix = prefix;
	sc->dirs[GPUENV_SCHEME_PURELIB] = gpuenv_arena_printf(&arena, "%s/lib/python3.12/site-packages", prefix).ptr;
	sc->dirs[GPUENV_SCHEME_PLATLIB] = sc->dirs[GPUENV_SCHEME_PURELIB];
	sc->dirs[GPUENV_SCHEME_SCRIPTS] = gpuenv_arena_printf(&arena, "%s/bin", prefix).ptr;
	sc->dirs[GPUENV_SCHEME_DATA] = prefix;
	sc->dirs[GPUENV_SCHEME_HEADERS] = gpuenv_arena_printf(&arena, "%s/include/site/python3.12", prefix).ptr;
	sc->python = python;
	sc->python_xy = "3.12";
}

static void test_stage(void **state)
{
	(void)state;
	wheel_t w;
	gpuenv_wheel_tree_t t;
	gpuenv_scheme_t sc;
	gpuenv_staged_t st;
	gpuenv_stage_opts_t so = { .requested = true, .direct_url_json = "{\"url\": \"file:///x\"}" };
	size_t len;

	w_base(&w);
	w_add(&w, "foo-1.0.data/scripts/tool", "#!python -u\nprint('tool')\n");
	w_add(&w, "foo-1.0.data/scripts/plain", "#!/bin/sh\necho plain\n");
	w_add(&w, "foo-1.0.data/headers/foo.h", "int foo;\n");
	w_add(&w, "foo-1.0.data/data/share/foo/a,b.txt", "data\n");
	w_add(&w, "foo-1.0.data/purelib/foo_extra.py", "E = 1\n");
	w_add(&w, "foo-1.0.dist-info/INSTALLER", "someone\n");
	w_add(&w, "foo-1.0.dist-info/entry_points.txt",
		"[console_scripts]\nfoo = foo:main\n[gui_scripts]\nfoo-gui = foo:main\n");
	w_write(&w);
	assert_int_equal(unpack(&w, NULL, &t), 0);
	assert_string_equal(t.data_dir, "foo-1.0.data");
	stage_scheme(&sc, "/venv", "/venv/bin/python");
	assert_int_equal(gpuenv_wheel_stage(&ctx, &arena, &t, path_in("tree"), &sc, path_in("stage"),
				 &so, &st), 0);
	assert_string_equal(st.dist_info, "foo-1.0.dist-info");
	assert_int_equal(st.link_mode_used, GPUENV_LINK_COPY); /* the rewritten script */
	/* root files and purelib/ data: the same inode as the tree's */
	struct stat a, b;
	assert_int_equal(stat(path_in("tree/foo/__init__.py"), &a), 0);
	assert_int_equal(stat(path_in("stage/purelib/foo/__init__.py"), &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_true(exists("stage/purelib/foo_extra.py"));
	assert_true(exists("stage/headers/foo/foo.h"));
	assert_true(exists("stage/data/share/foo/a,b.txt"));
	assert_true(exists("stage/scripts/plain"));
	char *s = slurp("stage/scripts/tool", &len);
	assert_string_equal(s, "#!/venv/bin/python\nprint('tool')\n");
	free(s);
	s = slurp("stage/scripts/foo", &len);
	assert_non_null(strstr(s, "#!/venv/bin/python\n# -*- coding: utf-8 -*-\n"));
	assert_non_null(strstr(s, "from foo import main\n"));
	assert_non_null(strstr(s, "sys.exit(main())\n"));
	free(s);
	assert_int_equal(stat(path_in("stage/scripts/foo-gui"), &b), 0);
	assert_int_equal(b.st_mode & 0777, 0755);
	s = slurp("stage/purelib/foo-1.0.dist-info/INSTALLER", &len);
	assert_string_equal(s, "gpuenv\n");
	free(s);
	assert_true(exists("stage/purelib/foo-1.0.dist-info/REQUESTED"));
	assert_true(exists("stage/purelib/foo-1.0.dist-info/direct_url.json"));
	char *rec = slurp("stage/purelib/foo-1.0.dist-info/RECORD", &len);
	assert_true(has_line(rec, "foo-1.0.dist-info/RECORD,,"));
	assert_true(has_line(rec, "foo-1.0.dist-info/INSTALLER,sha256=_LqD40-WpcbEHMAVR1Xm8Ng6_KQpCvqWWbnomwjRNeM,7"));
	assert_non_null(strstr(rec, "../../../bin/tool,sha256="));
	assert_non_null(strstr(rec, "../../../bin/foo,sha256="));
	assert_non_null(strstr(rec, "\n../../../include/site/python3.12/foo/foo.h,sha256="));
	assert_non_null(strstr(rec, "\n\"../../../share/foo/a,b.txt\",sha256="));
	assert_non_null(strstr(rec, "\nfoo_extra.py,sha256="));
	assert_null(strstr(rec, "foo-1.0.data"));
	/* sorted rows (by path: the quoted one sorts by its quote, as pip's
	 * sorted() of the unquoted paths would not; none here starts alike) */
	size_t nrows = 0;
	for (char *p = rec, *nl; (nl = strstr(p, "\r\n")) != NULL; p = nl + 2) {
		char *q = nl + 2, *qe = strstr(q, "\r\n");
		nrows++;
		if (!qe)
			break;
		const char *x = p[0] == '"' ? p + 1 : p, *y = q[0] == '"' ? q + 1 : q;
		assert_true(strcmp(x, y) < 0);
	}
	assert_int_equal(nrows, 15);
	free(rec);
	/* the stage must not exist before */
	assert_int_equal(gpuenv_wheel_stage(&ctx, &arena, &t, path_in("tree"), &sc, path_in("stage"),
				 &so, &st), -EEXIST);

	/* a long interpreter path: the /bin/sh exec trick */
	char longpy[200];
	memset(longpy, 'p', sizeof(longpy));
	longpy[0] = '/';
	memcpy(longpy + sizeof(longpy) - 8, "/python", 8);
	stage_scheme(&sc, "/venv", longpy);
	assert_int_equal(gpuenv_wheel_stage(&ctx, &arena, &t, path_in("tree"), &sc, path_in("stage2"),
				 NULL, &st), 0);
	s = slurp("stage2/scripts/foo", &len);
	assert_true(!strncmp(s, "#!/bin/sh\n'''exec' /ppp", 23));
	assert_non_null(strstr(s, "/python \"$0\" \"$@\"\n' '''\n# -*- coding"));
	free(s);
	assert_false(exists("stage2/purelib/foo-1.0.dist-info/REQUESTED"));
	/* a relative interpreter is refused */
	stage_scheme(&sc, "/venv", "python");
	assert_int_equal(gpuenv_wheel_stage(&ctx, &arena, &t, path_in("tree"), &sc, path_in("stage3"),
				 NULL, &st), GPUENV_EUSAGE);
	assert_false(exists("stage3"));
}

static void test_manifest_parse(void **state)
{
	(void)state;
	gpuenv_wheel_tree_t t;
	const char *good =
		"gpuenv-tree 1\nname foo\nversion 1.0\ndist-info foo-1.0.dist-info\npurelib true\n"
		"wheel-sha256 0000000000000000000000000000000000000000000000000000000000000000\n"
		"script console foo main foo\n"
		"file 644 3 -5 7 1111111111111111111111111111111111111111111111111111111111111111 a b/c d\n"
		"file 755 0 0 0 1111111111111111111111111111111111111111111111111111111111111111 z\n"
		"end 2 1\n";
	assert_int_equal(gpuenv_wheel_tree_parse(&ctx, &arena, NULL, gpuenv_str(good), &t), 0);
	assert_int_equal(t.nfiles, 2);
	assert_string_equal(t.files[0].path, "a b/c d");
	assert_int_equal(t.files[0].mtime_ns, -5);
	assert_int_equal(t.files[1].perm, 0755);
	assert_string_equal(t.scripts[0].module, "foo");
	assert_string_equal(t.scripts[0].attr, "main");
	static const struct {
		const char *from, *to;
	} bad[] = {
		{ "gpuenv-tree 1", "gpuenv-tree 2" },
		{ "end 2 1\n", "end 3 1\n" },
		{ "end 2 1\n", "" },
		{ "end 2 1\n", "end 2 1\nname x\n" },
		{ "file 755 0 0 0 1111111111111111111111111111111111111111111111111111111111111111 z",
			"file 755 0 0 0 1111111111111111111111111111111111111111111111111111111111111111 a b/c d" },
		{ " a b/c d", " ../x" },
		{ " a b/c d", " /etc/x" },
		{ "file 644", "file 600" },
		{ "file 644 3", "file 644 x" },
		{ "1111111111111111111111111111111111111111111111111111111111111111 z", "11 z" },
		{ "purelib true", "purelib yes" },
		{ "dist-info foo-1.0.dist-info", "dist-info ../foo.dist-info" },
		{ "script console foo main foo", "script console foo main ../foo" },
		{ "script console foo main foo", "script console foo- main foo" },
		{ "name foo\n", "" },
		{ "name foo\n", "name foo\nname bar\n" },
		{ "version 1.0\n", "version 1.0\nbogus x\n" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[2048];
		const char *at = strstr(good, bad[i].from);
		assert_non_null(at);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - good), good, bad[i].to,
			at + strlen(bad[i].from));
		int r = gpuenv_wheel_tree_parse(&ctx, &arena, NULL, gpuenv_str(text), &t);
		if (r != GPUENV_EFORMAT)
			fail_msg("case %zu accepted (%d)", i, r);
	}
}

static void test_zip_reader(void **state)
{
	(void)state;
	gpuenv_zip_t z;
	/* an empty zip: only the end record */
	static const unsigned char empty[22] = { 0x50, 0x4b, 0x05, 0x06 };
	assert_int_equal(gpuenv_zip_open(&ctx, &arena, "e.zip", empty, sizeof(empty), NULL, &z), 0);
	assert_int_equal(z.n, 0);
	assert_int_equal(gpuenv_zip_open(&ctx, &arena, "e.zip", empty, 21, NULL, &z), GPUENV_EFORMAT);
	/* trailing bytes after the end record */
	unsigned char more[23];
	memcpy(more, empty, 22);
	more[22] = 0;
	assert_int_equal(gpuenv_zip_open(&ctx, &arena, "e.zip", more, sizeof(more), NULL, &z),
		GPUENV_EFORMAT);
	/* names */
	assert_int_equal(gpuenv_zip_check_name(&ctx, "w", GPUENV_STR_LIT("a/b.py")), 0);
	assert_int_equal(gpuenv_zip_check_name(&ctx, "w", GPUENV_STR_LIT("a/\xc3\xa9.py")), 0);
	assert_int_equal(gpuenv_zip_check_name(&ctx, "w", GPUENV_STR_LIT("a/..b/c")), 0);
	assert_int_equal(gpuenv_zip_check_name(&ctx, "w", GPUENV_STR_LIT("a/../b")), GPUENV_EFORMAT);
	assert_int_equal(gpuenv_zip_check_name(&ctx, "w", gpuenv_str_n("a\0b", 3)), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "a\\x00b"));
	/* a stored entry read back */
	wheel_t w;
	w_base(&w);
	w.e[0].deflate = false;
	w_write(&w);
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, 0);
	assert_int_equal(gpuenv_fs_read(&ctx, w.name, 1 << 20, &b), 0);
	assert_int_equal(gpuenv_zip_open(&ctx, &arena, w.name, b.data, b.len, NULL, &z), 0);
	assert_int_equal(z.n, 4);
	const gpuenv_zip_entry_t *e = gpuenv_zip_find(&z, GPUENV_STR_LIT("foo/__init__.py"));
	assert_non_null(e);
	gpuenv_str_t text;
	assert_int_equal(gpuenv_zip_read(&ctx, &arena, &z, e, 1 << 20, &text), 0);
	assert_true(gpuenv_str_startswith(text, "def main():"));
	assert_int_equal(gpuenv_zip_read(&ctx, &arena, &z, e, 4, &text), GPUENV_ETOOBIG);
	assert_null(gpuenv_zip_find(&z, GPUENV_STR_LIT("foo/__init__.pyc")));
	/* damage the stored data: the CRC check */
	b.data[e->data_off] ^= 1;
	assert_int_equal(gpuenv_zip_read(&ctx, &arena, &z, e, 1 << 20, &text), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "CRC"));
	gpuenv_buf_free(&b);
}

/* Every allocation failing in turn: -ENOMEM, recorded, nothing left. */
/* ---- in parts, on threads -------------------------------------------- */

typedef struct parts_run {
	gpuenv_unpack_job_t *job;
	size_t next, n;
} parts_run_t;

static void *parts_worker(void *arg)
{
	parts_run_t *p = arg;
	gpuenv_ctx_t c;

	gpuenv_ctx_init(&c);
	for (size_t k; (k = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n;)
		gpuenv_wheel_unpack_part(p->job, &c, p->n - 1 - k); /* last part first */
	return NULL;
}

/* begin, every part on four threads, end */
static int unpack_threads(wheel_t *w, const char *expect, const char *dir, gpuenv_wheel_tree_t *t)
{
	parts_run_t p = { 0 };
	pthread_t th[4];
	int r;

	gpuenv_error_clear(&ctx);
	if ((r = gpuenv_wheel_unpack_begin(&ctx, &arena, w->name, NULL, expect, path_in(dir), NULL, t, &p.job)))
		return r;
	p.n = gpuenv_wheel_unpack_parts(p.job);
	assert_true(p.n >= 4); /* the hash, the large file alone, the small ones around it */
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, parts_worker, &p), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return gpuenv_wheel_unpack_end(p.job, &ctx);
}

/* A wheel with large files (inflated whole into their own pages, a part of
 * their own) among small ones (several parts): the tree made on four
 * threads is the tree made on one, file for file; a wrong hash, or a large
 * file that differs from RECORD, leaves nothing. */
static void test_parts(void **state)
{
	(void)state;
	wheel_t w;
	gpuenv_wheel_tree_t one, four;
	size_t big = (size_t)3 << 20, huge = (size_t)17 << 20;
	unsigned char *a = malloc(big), *b = malloc(huge);
	char names[16][32];
	uint32_t x = 12345;

	assert_true(a && b);
	for (size_t i = 0; i < huge; i++) { /* text-like: deflates 2-3:1 */
		x = x * 1103515245u + 12345u;
		b[i] = (unsigned char)('a' + (x >> 16) % 16);
		if (i < big)
			a[i] = (unsigned char)(i % 251 < 200 ? 'x' : b[i]);
	}
	w_base(&w);
	for (int i = 0; i < 12; i++) {
		snprintf(names[i], sizeof(names[i]), "foo/m%02d.py", i);
		w_add(&w, names[i], i % 2 ? "A = 1\n" : "B = [1, 2, 3]\n");
	}
	w.e[w.n++] = (zent_t){ .name = "foo/big.bin", .data = a, .len = big, .deflate = true };
	w.e[w.n++] = (zent_t){ .name = "foo/lib/huge.so", .data = b, .len = huge, .deflate = true, .mode = 0100755 };
	w.e[w.n++] = (zent_t){ .name = "foo/stored.bin", .data = a, .len = big };
	w_write(&w);
	assert_int_equal(unpack(&w, NULL, &one), 0);
	assert_int_equal(unpack_threads(&w, one.wheel_sha256, "tree4", &four), 0);
	assert_int_equal(one.nfiles, four.nfiles);
	assert_string_equal(one.wheel_sha256, four.wheel_sha256);
	for (size_t i = 0; i < one.nfiles; i++) {
		assert_string_equal(one.files[i].path, four.files[i].path);
		assert_memory_equal(one.files[i].sha256, four.files[i].sha256, 32);
		assert_int_equal(one.files[i].size, four.files[i].size);
		assert_int_equal(one.files[i].perm, four.files[i].perm);
	}
	for (int k = 0; k < 2; k++) {
		gpuenv_buf_t got;
		gpuenv_buf_init(&got, &ctx, 0);
		assert_int_equal(gpuenv_fs_read(&ctx, path_in(k ? "tree4/foo/lib/huge.so" : "tree/foo/lib/huge.so"),
					 (size_t)64 << 20, &got), 0);
		assert_int_equal(got.len, huge);
		assert_memory_equal(got.data, b, huge);
		gpuenv_buf_free(&got);
	}
	gpuenv_wheel_tree_t l;
	assert_int_equal(gpuenv_wheel_tree_load(&ctx, &arena, path_in("tree4"), true, &l), 0);
	assert_int_equal(l.nfiles, one.nfiles);
	gpuenv_install_remove(&ctx, path_in("tree4"));

	/* the hash not the one expected: nothing kept */
	char wrong[65];
	snprintf(wrong, sizeof(wrong), "%s", one.wheel_sha256);
	wrong[5] = wrong[5] == '0' ? '1' : '0';
	assert_int_equal(unpack_threads(&w, wrong, "tree4", &four), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "hash mismatch: expected sha256"));
	assert_false(exists("tree4"));
	assert_null(four.name);

	/* the large file is not what RECORD says */
	w.bad_hash = "foo/lib/huge.so"; /* RECORD is written again */
	w_write(&w);
	assert_int_equal(unpack_threads(&w, NULL, "tree4", &four), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "foo/lib/huge.so"));
	assert_false(exists("tree4"));
	free(a);
	free(b);
}

static void test_alloc_failures(void **state)
{
	(void)state;
	wheel_t w;
	testutil_alloc_t ta;
	gpuenv_ctx_t c2;
	long total;

	w_base(&w);
	w_add(&w, "foo-1.0.dist-info/entry_points.txt", "[console_scripts]\nfoo = foo:main\n");
	w_write(&w);
	gpuenv_ctx_init(&c2);
	c2.mem = testutil_allocator(&ta);
	testutil_alloc_reset(&ta, TESTUTIL_NEVER, false);
	{
		gpuenv_arena_t a;
		gpuenv_wheel_tree_t t;
		gpuenv_arena_init(&a, &c2, 0);
		assert_int_equal(gpuenv_wheel_unpack(&c2, &a, w.name, NULL, NULL, path_in("tree"), NULL, &t), 0);
		gpuenv_arena_free(&a);
		gpuenv_install_remove(&ctx, path_in("tree"));
	}
	total = ta.calls;
	for (long i = 0; i < total; i++) {
		gpuenv_arena_t a;
		gpuenv_wheel_tree_t t;
		testutil_alloc_reset(&ta, i, false);
		gpuenv_arena_init(&a, &c2, 0);
		memset(&c2.err, 0, sizeof(c2.err));
		int r = gpuenv_wheel_unpack(&c2, &a, w.name, NULL, NULL, path_in("tree"), NULL, &t);
		gpuenv_arena_free(&a);
		if (r == 0) {
			gpuenv_install_remove(&ctx, path_in("tree"));
			continue;
		}
		if (r != -ENOMEM || c2.err.code != -ENOMEM)
			fail_msg("allocation %ld: %d (%s)", i, r, c2.err.msg);
		assert_false(exists("tree"));
	}
}

/* libcrypto's own allocations (CRYPTO_set_mem_functions, set first thing
 * in main): failing while crypto_fail is set. */
static bool crypto_fail;

static void *crypto_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return crypto_fail ? NULL : malloc(n);
}

static void *crypto_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return crypto_fail ? NULL : realloc(p, n);
}

static void crypto_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

/* Issue 22, item 4: a digest that cannot be made (libcrypto out of memory)
 * fails the stage with "out of memory"; RECORD never gets the rows of
 * INSTALLER, REQUESTED and the scripts with hashes nobody computed. */
static void test_stage_digest_fails(void **state)
{
	(void)state;
	wheel_t w;
	gpuenv_wheel_tree_t t;
	gpuenv_scheme_t sc;
	gpuenv_staged_t st;
	gpuenv_stage_opts_t so = { .requested = true };

	w_base(&w);
	w_add(&w, "foo-1.0.data/scripts/tool", "#!python\nprint('tool')\n");
	w_add(&w, "foo-1.0.dist-info/entry_points.txt", "[console_scripts]\nfoo = foo:main\n");
	w_write(&w);
	assert_int_equal(unpack(&w, NULL, &t), 0);
	stage_scheme(&sc, "/venv", "/venv/bin/python");
	crypto_fail = true;
	memset(&ctx.err, 0, sizeof(ctx.err));
	int r = gpuenv_wheel_stage(&ctx, &arena, &t, path_in("tree"), &sc, path_in("stage"), &so, &st);
	crypto_fail = false;
	assert_int_equal(r, -ENOMEM);
	assert_int_equal(ctx.err.code, -ENOMEM);
	assert_non_null(strstr(ctx.err.msg, "out of memory"));
	assert_false(exists("stage/purelib/foo-1.0.dist-info/RECORD"));
}

int main(void)
{
	/* before anything of libcrypto allocates */
	if (!CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc, crypto_free))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unpack_and_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expected_sha256, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_manifest_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zip_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stage_digest_fails, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
