/* Unit tests for the software-stack probe: ld.so.cache, loader emulation,
 * CUDA toolkits, Python environments and library copies.
 *
 * Most tests build a fake machine in a temporary folder (ctx->root): tiny
 * ELF files written by elf_write() below with the DT_NEEDED / RPATH /
 * RUNPATH / SONAME they need, ld.so.cache files written by cache_build() in
 * glibc's "glibc-ld.so.cache1.1" layout, toolkits, venvs and site-packages
 * with dist-info folders copied from $GPUENV_SHARED/corpus/h200-env.  A few
 * check the real machine against ldconfig -p and ldd. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/env.h"
#include "gpuenv/stack.h"

#include "testutil.h"

/* ---- fake environment --------------------------------------------------- */

#define MAXVARS 16
struct fakeenv {
	const char *names[MAXVARS];
	const char *values[MAXVARS];
	size_t n;
};

static const char *fake_getenv(void *ud, const char *name)
{
	struct fakeenv *e = ud;
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->names[i], name) == 0)
			return e->values[i];
	return NULL;
}

static void setvar(struct fakeenv *e, const char *name, const char *value)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->names[i], name) == 0) {
			e->values[i] = value;
			return;
		}
	assert_true(e->n < MAXVARS);
	e->names[e->n] = name;
	e->values[e->n++] = value;
}

static void ctx_fake(gpuenv_ctx_t *ctx, struct fakeenv *env, const char *root)
{
	gpuenv_ctx_init(ctx);
	memset(env, 0, sizeof(*env));
	ctx->getenv = fake_getenv;
	ctx->getenv_ud = env;
	ctx->root = root;
}

/* ---- files ----------------------------------------------------------------- */

static char *mk_tmp(void)
{
	char *t = strdup("/tmp/gpuenv-stack-XXXXXX");
	assert_non_null(t);
	assert_non_null(mkdtemp(t));
	return t;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_rf(char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

static void mkdirs(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	mkdir(tmp, 0755);
}

static void parent_dirs(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	char *s = strrchr(tmp, '/');
	if (s && s != tmp) {
		*s = '\0';
		mkdirs(tmp);
	}
}

static void wbytes(const char *root, const char *rel, const void *data, size_t len)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	parent_dirs(p);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void wfile(const char *root, const char *rel, const char *text)
{
	wbytes(root, rel, text, strlen(text));
}

static void wlink(const char *root, const char *rel, const char *target)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	parent_dirs(p);
	assert_int_equal(symlink(target, p), 0);
}

static void wdir(const char *root, const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	mkdirs(p);
}

static void wexec(const char *root, const char *rel, const char *text)
{
	char p[4096];
	wfile(root, rel, text);
	snprintf(p, sizeof(p), "%s%s", root, rel);
	chmod(p, 0755);
}

/* copy a file from the shared corpus */
static void wcopy(const char *root, const char *rel, const char *src)
{
	FILE *f = fopen(src, "rb");
	static char buf[1 << 20];
	size_t n;
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	wbytes(root, rel, buf, n);
}

static const char *shared(void)
{
	const char *s = getenv("GPUENV_SHARED");
	return s ? s : "../shared";
}

/* ---- tiny ELF writer ---------------------------------------------------------- */

struct elfspec {
	unsigned machine; /* 0 = x86-64 */
	bool is32;
	const char *soname, *rpath, *runpath;
	const char *needed[12];
	const char *verdefs[4]; /* [0] is the base (soname) entry */
	bool nodeflib;
};

struct bytes {
	unsigned char *d;
	size_t n, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->d = realloc(b->d, b->cap);
		assert_non_null(b->d);
	}
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void put_le(struct bytes *b, uint64_t v, int n)
{
	unsigned char t[8];
	for (int i = 0; i < n; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	put(b, t, (size_t)n);
}

static void set_le(struct bytes *b, size_t off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b->d[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void pad(struct bytes *b, size_t align)
{
	while (b->n % align)
		put_le(b, 0, 1);
}

static size_t add_str(struct bytes *strs, const char *s)
{
	size_t off = strs->n;
	put(strs, s, strlen(s) + 1);
	return off;
}

/* An ET_DYN ELF with one PT_LOAD mapping the whole file at vaddr 0 and a
 * PT_DYNAMIC; what ld.so and our reader need, nothing else. */
static struct bytes elf_build(const struct elfspec *s)
{
	struct bytes f = { 0 }, strs = { 0 }, dyn = { 0 }, vd = { 0 };
	bool is64 = !s->is32;
	int w = is64 ? 8 : 4;
	size_t ehsize = is64 ? 64 : 52, phent = is64 ? 56 : 32;
	size_t stroff, dynoff, vdoff = 0;
	size_t needed_off[12], soname_off = 0, rpath_off = 0, runpath_off = 0, vdn[4];
	size_t nneeded = 0, nvd = 0;

	put_le(&strs, 0, 1);
	for (; nneeded < 12 && s->needed[nneeded]; nneeded++)
		needed_off[nneeded] = add_str(&strs, s->needed[nneeded]);
	if (s->soname)
		soname_off = add_str(&strs, s->soname);
	if (s->rpath)
		rpath_off = add_str(&strs, s->rpath);
	if (s->runpath)
		runpath_off = add_str(&strs, s->runpath);
	for (; nvd < 4 && s->verdefs[nvd]; nvd++)
		vdn[nvd] = add_str(&strs, s->verdefs[nvd]);

	stroff = ehsize + 2 * phent;
	/* verdefs after the strings */
	size_t after_str = stroff + strs.n;
	after_str = (after_str + 7) & ~(size_t)7;
	if (nvd) {
		vdoff = after_str;
		for (size_t i = 0; i < nvd; i++) {
			put_le(&vd, 1, 2);		    /* vd_version */
			put_le(&vd, i == 0 ? 1 : 0, 2);	    /* vd_flags: BASE */
			put_le(&vd, i + 1, 2);		    /* vd_ndx */
			put_le(&vd, 1, 2);		    /* vd_cnt */
			put_le(&vd, 0, 4);		    /* vd_hash */
			put_le(&vd, 20, 4);		    /* vd_aux */
			put_le(&vd, i + 1 < nvd ? 28 : 0, 4); /* vd_next */
			put_le(&vd, vdn[i], 4);		    /* vda_name */
			put_le(&vd, 0, 4);		    /* vda_next */
		}
	}
	dynoff = (after_str + vd.n + 7) & ~(size_t)7;
#define DYN(tag, val) (put_le(&dyn, (tag), w), put_le(&dyn, (val), w))
	for (size_t i = 0; i < nneeded; i++)
		DYN(1, needed_off[i]);
	if (s->soname)
		DYN(14, soname_off);
	if (s->rpath)
		DYN(15, rpath_off);
	if (s->runpath)
		DYN(29, runpath_off);
	if (s->nodeflib)
		DYN(0x6ffffffb, 0x800);
	if (nvd) {
		DYN(0x6ffffffc, vdoff);
		DYN(0x6ffffffd, nvd);
	}
	DYN(5, stroff);
	DYN(10, strs.n);
	DYN(0, 0);
#undef DYN
	size_t total = dynoff + dyn.n;

	/* ELF header */
	put(&f, "\177ELF", 4);
	put_le(&f, is64 ? 2 : 1, 1);
	put_le(&f, 1, 1); /* little-endian */
	put_le(&f, 1, 1); /* EV_CURRENT */
	while (f.n < 16)
		put_le(&f, 0, 1);
	put_le(&f, 3, 2); /* ET_DYN */
	put_le(&f, s->machine ? s->machine : (s->is32 ? 3 : 62), 2);
	put_le(&f, 1, 4);
	put_le(&f, 0, w);      /* e_entry */
	put_le(&f, ehsize, w); /* e_phoff */
	put_le(&f, 0, w);      /* e_shoff */
	put_le(&f, 0, 4);      /* e_flags */
	put_le(&f, ehsize, 2);
	put_le(&f, phent, 2);
	put_le(&f, 2, 2); /* e_phnum */
	put_le(&f, is64 ? 64 : 40, 2);
	put_le(&f, 0, 2);
	put_le(&f, 0, 2);
	assert_int_equal(f.n, ehsize);
	/* PT_LOAD, PT_DYNAMIC */
	for (int k = 0; k < 2; k++) {
		uint64_t off = k ? dynoff : 0, sz = k ? dyn.n : total;
		put_le(&f, k ? 2 : 1, 4);
		if (is64) {
			put_le(&f, 6, 4); /* p_flags */
			put_le(&f, off, 8);
			put_le(&f, off, 8);
			put_le(&f, off, 8);
			put_le(&f, sz, 8);
			put_le(&f, sz, 8);
			put_le(&f, 8, 8);
		} else {
			put_le(&f, off, 4);
			put_le(&f, off, 4);
			put_le(&f, off, 4);
			put_le(&f, sz, 4);
			put_le(&f, sz, 4);
			put_le(&f, 6, 4);
			put_le(&f, 4, 4);
		}
	}
	put(&f, strs.d, strs.n);
	pad(&f, 8);
	if (vd.n)
		put(&f, vd.d, vd.n);
	pad(&f, 8);
	assert_int_equal(f.n, dynoff);
	put(&f, dyn.d, dyn.n);
	free(strs.d);
	free(dyn.d);
	free(vd.d);
	return f;
}

static void welf(const char *root, const char *rel, const struct elfspec *s)
{
	struct bytes b = elf_build(s);
	wbytes(root, rel, b.d, b.n);
	free(b.d);
}

/* ---- ld.so.cache writer ------------------------------------------------------------ */

struct centry {
	const char *key, *value;
	int32_t flags;
	uint64_t hwcap;
};

/* glibc-ld.so.cache1.1 (optionally after an "ld.so-1.7.0" part), with the
 * extension directory when hwcaps or a generator are given. */
static struct bytes cache_build(const struct centry *e, size_t n, const char *const *hwcaps,
	size_t nh, const char *generator, bool old)
{
	struct bytes f = { 0 }, strs = { 0 };
	size_t base = 0, oldstr = 0;
	size_t koff[64], voff[64], hoff[8];

	assert_true(n <= 64 && nh <= 8);
	if (old) {
		put(&f, "ld.so-1.7.0", 11);
		put_le(&f, 0, 1);
		put_le(&f, n, 4);
		for (size_t i = 0; i < n; i++) {
			put_le(&f, (uint32_t)e[i].flags, 4);
			put_le(&f, 0, 4);
			put_le(&f, 0, 4);
		}
		oldstr = f.n;
		pad(&f, 8);
		base = f.n;
	}
	size_t strbase = 48 + n * 24; /* relative to the new header */
	for (size_t i = 0; i < n; i++) {
		koff[i] = strbase + add_str(&strs, e[i].key);
		voff[i] = strbase + add_str(&strs, e[i].value);
	}
	for (size_t i = 0; i < nh; i++)
		hoff[i] = strbase + add_str(&strs, hwcaps[i]);
	size_t ext = 0, extsize = 0;
	if (nh || generator) {
		ext = (base + strbase + strs.n + 3) & ~(size_t)3;
		extsize = 8 + 16 * ((nh ? 1 : 0) + (generator ? 1 : 0));
	}
	put(&f, "glibc-ld.so.cache1.1", 20);
	put_le(&f, n, 4);
	put_le(&f, strs.n, 4);
	put_le(&f, 2, 1); /* little-endian */
	put_le(&f, 0, 3);
	put_le(&f, ext, 4);
	for (int k = 0; k < 3; k++)
		put_le(&f, 0, 4);
	for (size_t i = 0; i < n; i++) {
		put_le(&f, (uint32_t)e[i].flags, 4);
		put_le(&f, koff[i], 4);
		put_le(&f, voff[i], 4);
		put_le(&f, 0, 4);
		put_le(&f, e[i].hwcap, 8);
	}
	put(&f, strs.d, strs.n);
	if (old) /* the old entries point into the same strings */
		for (size_t i = 0; i < n; i++) {
			set_le(&f, 16 + i * 12 + 4, base + koff[i] - oldstr, 4);
			set_le(&f, 16 + i * 12 + 8, base + voff[i] - oldstr, 4);
		}
	if (ext) {
		while (f.n < ext)
			put_le(&f, 0, 1);
		size_t data = ext + extsize, gen_off = data, hw_off;
		size_t glen = generator ? strlen(generator) : 0;
		hw_off = (gen_off + glen + 3) & ~(size_t)3;
		put_le(&f, 0xeaa42174u, 4);
		put_le(&f, (nh ? 1 : 0) + (generator ? 1 : 0), 4);
		if (generator) {
			put_le(&f, 0, 4);
			put_le(&f, 0, 4);
			put_le(&f, gen_off, 4);
			put_le(&f, glen, 4);
		}
		if (nh) {
			put_le(&f, 1, 4);
			put_le(&f, 0, 4);
			put_le(&f, hw_off, 4);
			put_le(&f, 4 * nh, 4);
		}
		if (generator)
			put(&f, generator, glen);
		while (f.n < hw_off)
			put_le(&f, 0, 1);
		for (size_t i = 0; i < nh; i++)
			put_le(&f, hoff[i], 4);
	}
	free(strs.d);
	return f;
}

#define X64 0x0303
#define HWEXT(i) ((1ull << 62) | (uint64_t)(i))

/* ---- ld.so.cache ------------------------------------------------------------ */

static void test_ldcache_generated(void **state)
{
	(void)state;
	static const struct centry ents[] = {
		{ "libfoo.so.1", "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1", X64, HWEXT(0) },
		{ "libfoo.so.1", "/usr/lib/x86_64-linux-gnu/libfoo.so.1", X64, 0 },
		{ "libfoo.so.1", "/usr/lib32/libfoo.so.1", 0x0003, 0 },
		{ "libbar.so", "/lib/x86_64-linux-gnu/libbar.so", X64, 0 },
	};
	static const char *const hw[] = { "x86-64-v3", "x86-64-v4" };
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_ldcache_t c;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	for (int old = 0; old < 2; old++) {
		struct bytes b = cache_build(ents, 4, hw, 2, "ldconfig (GNU libc) test", old);
		assert_int_equal(gpuenv_ldcache_parse(&ctx, &a, b.d, b.n, "t", &c), 0);
		assert_int_equal(c.format, old ? 3 : GPUENV_LDCACHE_NEW);
		assert_int_equal(c.n, 4);
		assert_int_equal(c.nhwcaps, 2);
		assert_string_equal(c.hwcaps[0].ptr, "x86-64-v3");
		assert_string_equal(c.generator.ptr, "ldconfig (GNU libc) test");
		assert_string_equal(c.entries[3].soname.ptr, "libbar.so");
		assert_string_equal(c.entries[3].path.ptr, "/lib/x86_64-linux-gnu/libbar.so");
		assert_int_equal(c.entries[0].hwcaps_index, 0);
		assert_int_equal(c.entries[1].hwcaps_index, -1);

		/* no hwcaps supported: the baseline x86-64 entry */
		const gpuenv_ldcache_entry_t *e = gpuenv_ldcache_lookup(&c, gpuenv_str("libfoo.so.1"),
			gpuenv_ldcache_flags_for(62, true), NULL);
		assert_non_null(e);
		assert_string_equal(e->path.ptr, "/usr/lib/x86_64-linux-gnu/libfoo.so.1");
		/* x86-64-v3 supported: that folder wins */
		const char *const sup[] = { "x86-64-v4", "x86-64-v3", "x86-64-v2", NULL };
		e = gpuenv_ldcache_lookup(&c, gpuenv_str("libfoo.so.1"), X64, sup);
		assert_string_equal(e->path.ptr, "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1");
		/* i386 program: the 32-bit entry */
		e = gpuenv_ldcache_lookup(&c, gpuenv_str("libfoo.so.1"), gpuenv_ldcache_flags_for(3, false), NULL);
		assert_string_equal(e->path.ptr, "/usr/lib32/libfoo.so.1");
		assert_null(gpuenv_ldcache_lookup(&c, gpuenv_str("libnone.so"), X64, NULL));
		assert_string_equal(gpuenv_ldcache_abi_name(c.entries[2].flags), "libc6");
		assert_string_equal(gpuenv_ldcache_abi_name(c.entries[1].flags), "x86-64");
		free(b.d);
	}

	/* the old format alone */
	{
		struct bytes f = { 0 };
		put(&f, "ld.so-1.7.0", 11);
		put_le(&f, 0, 1);
		put_le(&f, 1, 4);
		put_le(&f, 0x0303, 4);
		put_le(&f, 0, 4);
		put_le(&f, 8, 4);
		put(&f, "libx.so\0/lib/libx.so", 21);
		assert_int_equal(gpuenv_ldcache_parse(&ctx, &a, f.d, f.n, "old", &c), 0);
		assert_int_equal(c.format, GPUENV_LDCACHE_OLD);
		assert_int_equal(c.n, 1);
		assert_string_equal(c.entries[0].path.ptr, "/lib/libx.so");
		free(f.d);
	}
	gpuenv_arena_free(&a);
}

static void test_ldcache_corrupt(void **state)
{
	(void)state;
	static const struct centry ents[] = {
		{ "libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", X64, 0 },
		{ "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", X64, HWEXT(1) },
	};
	static const char *const hw[] = { "a", "b" };
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_ldcache_t c;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	struct bytes b = cache_build(ents, 2, hw, 2, "gen", false);
	/* every truncation: an error or a clean parse, never a crash */
	for (size_t cut = 0; cut < b.n; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);
		memcpy(copy, b.d, cut);
		int r = gpuenv_ldcache_parse(&ctx, &a, copy, cut, "cut", &c);
		if (cut < 48 + 2 * 24)
			assert_int_equal(r, GPUENV_EFORMAT);
		free(copy);
	}
	/* every byte flipped */
	for (size_t i = 0; i < b.n; i++) {
		unsigned char *copy = malloc(b.n);
		memcpy(copy, b.d, b.n);
		copy[i] ^= 0xff;
		int r = gpuenv_ldcache_parse(&ctx, &a, copy, b.n, "flip", &c);
		assert_true(r == 0 || r == GPUENV_EFORMAT || r == GPUENV_EUNSUPPORTED);
		if (r == 0)
			(void)gpuenv_ldcache_lookup(&c, gpuenv_str("libc.so.6"), X64, (const char *const[]){ "b", NULL });
		free(copy);
	}
	/* errors say where */
	b.d[20] = 0xff; /* nlibs huge */
	b.d[21] = 0xff;
	assert_int_equal(gpuenv_ldcache_parse(&ctx, &a, b.d, b.n, "big", &c), GPUENV_EFORMAT);
	assert_non_null(strstr(ctx.err.msg, "byte 20"));
	assert_int_equal(gpuenv_ldcache_parse(&ctx, &a, "hello", 5, "x", &c), GPUENV_EFORMAT);
	free(b.d);
	gpuenv_arena_free(&a);
}

/* Our parse of a cache file against `ldconfig -p -C FILE` (glibc's own
 * reader): the same entries in the same order.  -1 when ldconfig refuses
 * the file or is missing, else the number of entries compared. */
static long compare_with_ldconfig(const char *file)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_ldcache_t c;
	char cmd[4200], line[4096];
	size_t i = 0;
	FILE *p;

	if (access("/sbin/ldconfig", X_OK) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "/sbin/ldconfig -p -C '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!fgets(line, sizeof(line), p) || !strstr(line, " libs found in cache")) {
		pclose(p);
		return -1;
	}
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	int r = gpuenv_ldcache_load(&ctx, &a, file, &c);
	if (r != 0 && strtoul(line, NULL, 10) == 0) {
		/* ldconfig -p lists nothing from a bare header that ld.so
		 * refuses; so do we, with an error */
		pclose(p);
		gpuenv_arena_free(&a);
		return 0;
	}
	if (r != 0)
		fail_msg("%s: ldconfig reads it, we say %s", file, ctx.err.msg);
	assert_int_equal(strtoul(line, NULL, 10), c.n);
	while (fgets(line, sizeof(line), p)) {
		char *arrow = strstr(line, " => ");
		if (line[0] != '\t' || !arrow)
			continue;
		char *key = line + 1, *sp = strchr(key, ' ');
		*sp = '\0';
		char *path = arrow + 4;
		path[strcspn(path, "\n")] = '\0';
		assert_true(i < c.n);
		assert_string_equal(c.entries[i].soname.ptr, key);
		assert_string_equal(c.entries[i].path.ptr, path);
		/* hwcap: "x86-64-v3" */
		char *hw = strstr(sp + 1, "hwcap: \"");
		if (hw && hw < arrow) {
			hw += 8;
			*strchr(hw, '"') = '\0';
			assert_true(c.entries[i].hwcaps_index >= 0 && (size_t)c.entries[i].hwcaps_index < c.nhwcaps);
			assert_string_equal(c.hwcaps[c.entries[i].hwcaps_index].ptr, hw);
		}
		i++;
	}
	pclose(p);
	assert_int_equal(i, c.n);
	gpuenv_arena_free(&a);
	return (long)i;
}

static void test_ldcache_real(void **state)
{
	(void)state;
	char dir[4096];
	const char *src = getenv("GPUENV_SRC");
	size_t files = 0, entries = 0;

	long n = access("/etc/ld.so.cache", R_OK) == 0 ? compare_with_ldconfig("/etc/ld.so.cache") : -1;
	if (n < 0)
		printf("no ldconfig or /etc/ld.so.cache here: real-cache check skipped\n");
	else
		printf("/etc/ld.so.cache: %ld entries, same as ldconfig -p\n", n);
	/* every hand-made seed of the fuzz corpus that glibc's ldconfig accepts
	 * (tests/fuzz/gen_ldcache_seeds.py).  Inputs libFuzzer added (named by
	 * their SHA-1) are left out: ldconfig -p prints from caches with string
	 * offsets past the end, which gpuenv refuses as corrupt, on purpose. */
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/ldcache", src ? src : "..");
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char path[4400];
		if (e->d_name[0] == '.' || (strlen(e->d_name) == 40 &&
			strspn(e->d_name, "0123456789abcdef") == 40))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		long k = compare_with_ldconfig(path);
		if (k >= 0) {
			files++;
			entries += (size_t)k;
		}
	}
	if (d)
		closedir(d);
	printf("ld.so.cache corpus: %zu files (%zu entries) read as ldconfig -p -C reads them\n", files,
		entries);
}

/* ---- ELF ------------------------------------------------------------------------- */

static void test_elf_parse(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_ld_elf_t e;
	struct elfspec s = { .soname = "libx.so.1", .rpath = "$ORIGIN/r", .runpath = "/rp",
		.needed = { "liba.so.1", "libb.so.2" }, .verdefs = { "libx.so.1", "LIBX_1.2.3" },
		.nodeflib = true };
	struct bytes b = elf_build(&s);

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_ld_parse_elf(&ctx, &a, b.d, b.n, "x", &e), 0);
	assert_int_equal(e.machine, 62);
	assert_true(e.is64 && e.is_dso && e.nodeflib);
	assert_string_equal(e.soname.ptr, "libx.so.1");
	assert_string_equal(e.rpath.ptr, "$ORIGIN/r");
	assert_string_equal(e.runpath.ptr, "/rp");
	assert_int_equal(e.nneeded, 2);
	assert_string_equal(e.needed[1].ptr, "libb.so.2");
	assert_int_equal(e.nverdefs, 1);
	assert_string_equal(e.verdefs[0].ptr, "LIBX_1.2.3");

	/* 32-bit files are not read (the loader still skips them as
	 * candidates of the wrong class: test_loader_order) */
	struct elfspec s32 = { .is32 = true, .soname = "liby.so", .needed = { "libc.so.6" } };
	struct bytes b32 = elf_build(&s32);
	assert_int_equal(gpuenv_ld_parse_elf(&ctx, &a, b32.d, b32.n, "y", &e), GPUENV_EUNSUPPORTED);

	/* truncations, flips and a seeded random mutation storm: errors only */
	for (size_t cut = 0; cut < b.n; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);
		memcpy(copy, b.d, cut);
		int r = gpuenv_ld_parse_elf(&ctx, &a, copy, cut, "cut", &e);
		assert_true(r == 0 || r == GPUENV_EFORMAT || r == GPUENV_EUNSUPPORTED);
		free(copy);
	}
	uint32_t seed = 12345;
	for (int it = 0; it < 4000; it++) {
		unsigned char *copy = malloc(b.n);
		memcpy(copy, b.d, b.n);
		for (int k = 0; k < 1 + it % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % b.n] = (unsigned char)(seed >> 24);
		}
		int r = gpuenv_ld_parse_elf(&ctx, &a, copy, b.n, "mut", &e);
		assert_true(r == 0 || r == GPUENV_EFORMAT || r == GPUENV_EUNSUPPORTED);
		free(copy);
		if (it % 500 == 0) {
			gpuenv_arena_free(&a);
			gpuenv_arena_init(&a, &ctx, 0);
		}
	}
	assert_int_equal(gpuenv_ld_parse_elf(&ctx, &a, "#!/bin/sh\n", 10, "sh", &e), GPUENV_EUNSUPPORTED);
	free(b.d);
	free(b32.d);
	gpuenv_arena_free(&a);
}

/* ---- loader --------------------------------------------------------------------------- */

static const gpuenv_ld_need_t *need_of(const gpuenv_ld_resolution_t *r, size_t obj, const char *name)
{
	for (size_t k = 0; k < r->objects[obj].elf.nneeded; k++)
		if (strcmp(r->objects[obj].needs[k].name.ptr, name) == 0)
			return &r->objects[obj].needs[k];
	fail_msg("no need %s in object %zu", name, obj);
	return NULL;
}

static size_t obj_of(const gpuenv_ld_resolution_t *r, const char *path)
{
	for (size_t i = 0; i < r->nobjects; i++)
		if (strcmp(r->objects[i].path.ptr, path) == 0)
			return i;
	fail_msg("no object %s", path);
	return 0;
}

static void test_loader_order(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_ld_resolution_t r;
	gpuenv_loader_opts_t o = { 0 };
	const char *defs[] = { "/sys/lib", NULL };

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	o.default_dirs = defs;

	/* app: RPATH $ORIGIN/rp; needs liba (in rp and in LD_LIBRARY_PATH) */
	welf(root, "/app/bin/app.so", &(struct elfspec){ .rpath = "$ORIGIN/rp:${ORIGIN}/../rp2",
		.needed = { "liba.so.1", "libb.so.1", "libgone.so.1", "libsys.so.1" } });
	/* liba has RUNPATH (its RPATH is ignored) and needs libc2 which only the
	 * app's RPATH has: RUNPATH objects do not inherit RPATH */
	welf(root, "/app/bin/rp/liba.so.1", &(struct elfspec){ .soname = "liba.so.1",
		.rpath = "/nowhere", .runpath = "$ORIGIN/../rp3", .needed = { "libc2.so.1", "libd.so.1" } });
	welf(root, "/app/bin/rp/libc2.so.1", &(struct elfspec){ .soname = "libc2.so.1" });
	welf(root, "/app/rp2/libb.so.1", &(struct elfspec){ .soname = "libb.so.1", .needed = { "libe.so.1" } });
	/* libb has no RPATH: libe comes from the app's (the loader chain) */
	welf(root, "/app/bin/rp/libe.so.1", &(struct elfspec){ .soname = "libe.so.1", .needed = { "liba.so.1" } });
	welf(root, "/app/bin/rp3/libd.so.1", &(struct elfspec){ .soname = "libd.so.1" });
	welf(root, "/llp/liba.so.1", &(struct elfspec){ .soname = "liba.so.1" });
	welf(root, "/llp/libd.so.1", &(struct elfspec){ .soname = "libd.so.1" });
	welf(root, "/sys/lib/libsys.so.1", &(struct elfspec){ .soname = "libsys.so.1" });
	/* a 32-bit copy first in LD_LIBRARY_PATH: skipped */
	welf(root, "/llp32/libsys.so.1", &(struct elfspec){ .is32 = true, .soname = "libsys.so.1" });

	setvar(&env, "LD_LIBRARY_PATH", "/llp32:/llp");
	assert_int_equal(gpuenv_loader_resolve(&ctx, &a, "/app/bin/app.so", &o, &r), 0);
	const gpuenv_ld_need_t *n = need_of(&r, 0, "liba.so.1");
	/* RPATH comes before LD_LIBRARY_PATH */
	assert_int_equal(n->how, GPUENV_LDSRC_RPATH);
	assert_string_equal(n->path.ptr, "/app/bin/rp/liba.so.1");
	assert_string_equal(n->rule.ptr, "$ORIGIN/rp");
	assert_int_equal(n->rule_owner, 0);
	n = need_of(&r, 0, "libb.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_RPATH);
	assert_string_equal(n->path.ptr, "/app/rp2/libb.so.1"); /* tidied: same file */
	assert_string_equal(n->rule.ptr, "${ORIGIN}/../rp2");
	n = need_of(&r, 0, "libgone.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_NOTFOUND);
	assert_null(n->path.ptr);
	n = need_of(&r, 0, "libsys.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_DEFAULT);
	assert_string_equal(n->path.ptr, "/sys/lib/libsys.so.1");

	size_t ia = obj_of(&r, "/app/bin/rp/liba.so.1");
	/* liba has RUNPATH: no RPATH at all, LD_LIBRARY_PATH then its RUNPATH */
	n = need_of(&r, ia, "libc2.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_NOTFOUND);
	n = need_of(&r, ia, "libd.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_LD_LIBRARY_PATH);
	assert_string_equal(n->path.ptr, "/llp/libd.so.1");
	size_t ib = obj_of(&r, "/app/rp2/libb.so.1");
	n = need_of(&r, ib, "libe.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_RPATH);
	assert_int_equal(n->rule_owner, 0); /* the app's RPATH */
	size_t ie = obj_of(&r, "/app/bin/rp/libe.so.1");
	n = need_of(&r, ie, "liba.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_LOADED);
	assert_int_equal(n->object, ia);
	assert_int_equal(r.nmissing, 2);
	assert_int_equal(r.objects[ia].depth, 1);
	assert_int_equal(r.objects[ia].parent, 0);

	/* without LD_LIBRARY_PATH, liba's RUNPATH finds libd */
	setvar(&env, "LD_LIBRARY_PATH", NULL);
	assert_int_equal(gpuenv_loader_resolve(&ctx, &a, "/app/bin/app.so", &o, &r), 0);
	ia = obj_of(&r, "/app/bin/rp/liba.so.1");
	n = need_of(&r, ia, "libd.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_RUNPATH);
	assert_string_equal(n->path.ptr, "/app/bin/rp3/libd.so.1");

	/* alternatives: the copies the winner hides */
	setvar(&env, "LD_LIBRARY_PATH", "/llp");
	o.alternatives = true;
	assert_int_equal(gpuenv_loader_resolve(&ctx, &a, "/app/bin/app.so", &o, &r), 0);
	n = need_of(&r, 0, "liba.so.1");
	assert_int_equal(n->nshadowed, 1);
	assert_string_equal(n->shadowed[0].ptr, "/llp/liba.so.1");

	/* a missing binary is an error */
	assert_true(gpuenv_loader_resolve(&ctx, &a, "/app/none.so", &o, &r) < 0);
	gpuenv_arena_free(&a);
	rm_rf(root);
}

static void test_loader_cache_hwcaps(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_ld_resolution_t r;
	gpuenv_ldcache_t cache;
	gpuenv_loader_opts_t o = { 0 };
	const char *defs[] = { "/usr/lib/x86_64-linux-gnu", NULL };
	static const struct centry ents[] = {
		{ "libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", X64, 0 },
		{ "libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6", X64, 0 },
		{ "libgone.so.1", "/usr/lib/x86_64-linux-gnu/libgone.so.1", X64, 0 },
	};

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	struct bytes b = cache_build(ents, 3, NULL, 0, NULL, false);
	wbytes(root, "/etc/ld.so.cache", b.d, b.n);
	free(b.d);
	assert_int_equal(gpuenv_ldcache_load(&ctx, &a, NULL, &cache), 0);
	welf(root, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0", &(struct elfspec){ .soname = "libcudnn.so.9" });
	wlink(root, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "libcudnn.so.9.1.0");
	welf(root, "/usr/lib/x86_64-linux-gnu/libm.so.6", &(struct elfspec){ .soname = "libm.so.6" });
	welf(root, "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libm.so.6", &(struct elfspec){ .soname = "libm.so.6" });
	welf(root, "/usr/lib/x86_64-linux-gnu/libgone2.so.1", &(struct elfspec){ .soname = "libgone2.so.1" });
	welf(root, "/opt/x/libtool.so", &(struct elfspec){ .needed = { "libcudnn.so.9", "libm.so.6", "libgone.so.1" } });
	welf(root, "/opt/x/libnodef.so", &(struct elfspec){ .nodeflib = true, .needed = { "libcudnn.so.9" } });
	o.cache = &cache;
	o.default_dirs = defs;
	assert_int_equal(gpuenv_loader_resolve(&ctx, &a, "/opt/x/libtool.so", &o, &r), 0);
	const gpuenv_ld_need_t *n = need_of(&r, 0, "libcudnn.so.9");
	assert_int_equal(n->how, GPUENV_LDSRC_LDCACHE);
	assert_string_equal(n->path.ptr, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
	/* a cache entry whose file is gone: ld.so falls back to the folders */
	n = need_of(&r, 0, "libgone.so.1");
	assert_int_equal(n->how, GPUENV_LDSRC_NOTFOUND);
	n = need_of(&r, 0, "libm.so.6");
	assert_int_equal(n->how, GPUENV_LDSRC_LDCACHE);
	assert_string_equal(n->path.ptr, "/usr/lib/x86_64-linux-gnu/libm.so.6");
	/* hwcaps subfolders in search folders */
	const char *hw[] = { "x86-64-v3", NULL };
	o.hwcaps = hw;
	o.cache = NULL;
	assert_int_equal(gpuenv_loader_resolve(&ctx, &a, "/opt/x/libtool.so", &o, &r), 0);
	n = need_of(&r, 0, "libm.so.6");
	assert_int_equal(n->how, GPUENV_LDSRC_DEFAULT);
	assert_string_equal(n->path.ptr, "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libm.so.6");
	assert_string_equal(n->dir.ptr, "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3");
	/* DF_1_NODEFLIB: neither the cache nor the default folders */
	o.cache = &cache;
	o.hwcaps = NULL;
	assert_int_equal(gpuenv_loader_resolve(&ctx, &a, "/opt/x/libnodef.so", &o, &r), 0);
	assert_int_equal(need_of(&r, 0, "libcudnn.so.9")->how, GPUENV_LDSRC_NOTFOUND);
	gpuenv_arena_free(&a);
	rm_rf(root);
}

/* The emulation against the real ld.so (`ldd`) on this machine's libraries. */
static void test_loader_vs_ldd(void **state)
{
	(void)state;
	static const char *const bins[] = {
		"/usr/lib/x86_64-linux-gnu/libcurl.so.4", "/usr/bin/python3",
		"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcudnn_ops.so.9",
		"/usr/lib/x86_64-linux-gnu/libgnutls.so.30", "/usr/bin/ls",
	};
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_ldcache_t cache;
	size_t checked = 0;

	ctx_fake(&ctx, &env, "");
	gpuenv_arena_init(&a, &ctx, 0);
	if (gpuenv_ldcache_load(&ctx, &a, NULL, &cache) != 0 || access("/usr/bin/ldd", X_OK) != 0) {
		printf("no ld.so.cache or ldd here: comparison skipped\n");
		gpuenv_arena_free(&a);
		return;
	}
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		char cmd[512], line[4096];
		gpuenv_ld_resolution_t r;
		gpuenv_loader_opts_t o = { .cache = &cache, .ld_library_path = "" };
		if (access(bins[i], R_OK) != 0)
			continue;
		assert_int_equal(gpuenv_loader_resolve(&ctx, &a, bins[i], &o, &r), 0);
		snprintf(cmd, sizeof(cmd), "env -u LD_LIBRARY_PATH -u LD_PRELOAD /usr/bin/ldd %s 2>/dev/null", bins[i]);
		FILE *p = popen(cmd, "r");
		assert_non_null(p);
		size_t lines = 0;
		while (fgets(line, sizeof(line), p)) {
			char *arrow = strstr(line, " => ");
			char name[512], path[2048];
			if (!arrow)
				continue; /* linux-vdso, the interpreter */
			snprintf(name, sizeof(name), "%.*s", (int)(arrow - line - 1), line + 1);
			char *paren = strstr(arrow, " (");
			snprintf(path, sizeof(path), "%.*s", paren ? (int)(paren - arrow - 4) : 0, arrow + 4);
			if (strncmp(name, "ld-linux", 8) == 0)
				continue; /* the interpreter is loaded already in a process */
			/* our first resolution of that name */
			const char *ours = NULL;
			for (size_t o2 = 0; o2 < r.nobjects && !ours; o2++)
				for (size_t k = 0; k < r.objects[o2].elf.nneeded && !ours; k++)
					if (strcmp(r.objects[o2].needs[k].name.ptr, name) == 0)
						ours = r.objects[o2].needs[k].path.ptr ? r.objects[o2].needs[k].path.ptr
										      : "not found";
			if (strcmp(path, "not found") == 0 || path[0] == '\0')
				snprintf(path, sizeof(path), "not found");
			if (!ours || strcmp(ours, path) != 0)
				fail_msg("%s: %s: ldd says %s, we say %s", bins[i], name, path, ours ? ours : "nothing");
			lines++;
		}
		pclose(p);
		assert_true(lines > 0);
		checked++;
	}
	printf("loader emulation equals ldd on %zu binaries\n", checked);
	assert_true(checked > 0);
	gpuenv_arena_free(&a);
}

/* ---- toolkits -------------------------------------------------------------------------- */

static void test_toolkits(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_toolkit_t *tks;
	size_t n;

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	wfile(root, "/usr/local/cuda-12.8/version.json",
		"{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"12.8.1\"},\n"
		" \"cuda_cudart\": {\"name\": \"CUDA Runtime (cudart)\", \"version\": \"12.8.90\"},\n"
		" \"cuda_nvcc\": {\"name\": \"CUDA NVCC\", \"version\": \"12.8.93\"},\n"
		" \"libcublas\": {\"name\": \"CUDA cuBLAS\", \"version\": \"12.8.4.1\"}}\n");
	wexec(root, "/usr/local/cuda-12.8/bin/nvcc", "#!/bin/sh\n");
	wdir(root, "/usr/local/cuda-12.8/lib64");
	wlink(root, "/usr/local/cuda", "cuda-12.8");
	wfile(root, "/usr/local/cuda-11.8/version.txt", "CUDA Version 11.8.89\n");
	wfile(root, "/usr/local/cuda-11.8/include/cuda.h", "#define CUDA_VERSION 11080\n");
	wfile(root, "/usr/local/cuda-12.10/include/cuda.h", "/* x */\n#  define  CUDA_VERSION 12100 /* comment */\n");
	wdir(root, "/usr/local/cuda-9.not");
	wfile(root, "/opt/mycuda/include/cuda.h", "#define CUDA_VERSION 13000\n");
	wdir(root, "/opt/mycuda/targets/x86_64-linux/lib");
	wexec(root, "/opt/tk/bin/nvcc", "#!/bin/sh\n");
	wfile(root, "/opt/tk/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info/METADATA", "Name: nvidia-cuda-nvcc\n");
	wdir(root, "/empty");
	setvar(&env, "CUDA_HOME", "/opt/mycuda");
	setvar(&env, "CUDA_PATH", "/empty");
	setvar(&env, "PATH", "/usr/bin:/opt/tk/bin:/usr/local/cuda/bin");

	assert_int_equal(gpuenv_toolkit_probe(&ctx, &a, &n, &tks), 0);
	assert_int_equal(n, 5);
	/* /usr/local/cuda first, resolved */
	assert_string_equal(tks[0].path.ptr, "/usr/local/cuda");
	assert_string_equal(tks[0].realpath.ptr, "/usr/local/cuda-12.8");
	assert_string_equal(tks[0].version.text.ptr, "12.8.1");
	assert_int_equal(tks[0].version.src, GPUENV_VSRC_VERSION_JSON);
	assert_string_equal(tks[0].nvcc_version.ptr, "12.8.93");
	assert_string_equal(tks[0].lib_dir.ptr, "/usr/local/cuda-12.8/lib64");
	assert_int_equal(tks[0].ncomponents, 3);
	assert_string_equal(tks[0].components[0].name.ptr, "cuda_cudart");
	assert_int_equal(tks[0].naliases, 1);
	assert_string_equal(tks[0].aliases[0].ptr, "/usr/local/cuda-12.8");
	/* newest versioned folder next, by number */
	assert_string_equal(tks[1].path.ptr, "/usr/local/cuda-12.10");
	assert_string_equal(tks[1].version.text.ptr, "12.10");
	assert_int_equal(tks[1].version.src, GPUENV_VSRC_HEADER);
	assert_string_equal(tks[2].path.ptr, "/usr/local/cuda-11.8");
	assert_string_equal(tks[2].version.text.ptr, "11.8.89");
	assert_int_equal(tks[2].version.src, GPUENV_VSRC_VERSION_TXT);
	assert_string_equal(tks[3].path.ptr, "/opt/mycuda");
	assert_int_equal(tks[3].found_by, GPUENV_TK_CUDA_HOME);
	assert_string_equal(tks[3].version.text.ptr, "13.0");
	assert_string_equal(tks[3].lib_dir.ptr, "/opt/mycuda/targets/x86_64-linux/lib");
	assert_string_equal(tks[4].path.ptr, "/opt/tk");
	assert_int_equal(tks[4].found_by, GPUENV_TK_NVCC_PATH);
	assert_null(tks[4].version.text.ptr);
	assert_string_equal(tks[4].nvcc_version.ptr, "13.0.88");
	/* the nvcc under /usr/local/cuda/bin comes after /opt/tk on PATH: not
	 * counted; CUDA_PATH=/empty is no toolkit */
	assert_int_equal(tks[0].found_by, GPUENV_TK_USR_LOCAL);
	gpuenv_arena_free(&a);
	rm_rf(root);
}

static void test_toolkit_real(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_toolkit_t tk;

	if (access("/usr/local/cuda/include/cuda.h", R_OK) != 0) {
		printf("no /usr/local/cuda here: skipped\n");
		return;
	}
	ctx_fake(&ctx, &env, "");
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_toolkit_inspect(&ctx, &a, "/usr/local/cuda", &tk), 0);
	assert_non_null(tk.version.text.ptr);
	assert_non_null(tk.lib_dir.ptr);
	printf("/usr/local/cuda: CUDA %s (%s), nvcc %s\n", tk.version.text.ptr,
		gpuenv_vsrc_name(tk.version.src), tk.nvcc_version.ptr ? tk.nvcc_version.ptr : "?");
	gpuenv_arena_free(&a);
}

/* ---- Python environments and library copies --------------------------------------------- */

#define SITE "/venv/lib/python3.12/site-packages"

static void copy_dist(const char *root, const char *site, const char *dist)
{
	char src[4096], rel[4096];
	snprintf(src, sizeof(src), "%s/corpus/h200-env/%s/METADATA", shared(), dist);
	snprintf(rel, sizeof(rel), "%s/%s/METADATA", site, dist);
	wcopy(root, rel, src);
}

/* A venv with torch 2.11.0+cu130, cuDNN / cuBLAS / NCCL wheels, jax and its
 * CUDA 13 plugins, cupy, onnxruntime (CPU), triton: the h200-env corpus's
 * METADATA with fake payloads. */
static void build_venv(const char *root)
{
	static const char *const dists[] = {
		"torch-2.11.0.dist-info", "nvidia_cudnn_cu13-9.19.0.56.dist-info",
		"nvidia_cublas-13.1.0.3.dist-info", "nvidia_nccl_cu13-2.28.9.dist-info",
		"nvidia_cuda_runtime-13.0.96.dist-info", "jax-0.11.2.dist-info", "jaxlib-0.11.2.dist-info",
		"jax_cuda13_plugin-0.11.2.dist-info", "jax_cuda13_pjrt-0.11.2.dist-info",
		"cupy_cuda13x-14.2.0.dist-info", "onnxruntime-1.30.0.dist-info", "triton-3.6.0.dist-info",
		"numpy-2.5.2.dist-info",
	};
	for (size_t i = 0; i < sizeof(dists) / sizeof(dists[0]); i++)
		copy_dist(root, SITE, dists[i]);
	wexec(root, "/usr/bin/python3.12", "\177ELF fake interpreter");
	wlink(root, "/venv/bin/python3", "../../usr/bin/python3.12" /* relative: an absolute link would leave the fake root */);
	wlink(root, "/venv/bin/python", "python3");
	wfile(root, "/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n");
	wfile(root, SITE "/torch/version.py",
		"from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
		"__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n"
		"git_version = 'abc'\nhip: Optional[str] = None\n");
	welf(root, SITE "/torch/lib/libtorch_cuda.so", &(struct elfspec){
		.rpath = "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/nccl/lib:$ORIGIN",
		.needed = { "libc10_cuda.so", "libcudnn.so.9", "libcublas.so.13", "libcudart.so.13", "libnccl.so.2" } });
	welf(root, SITE "/torch/lib/libc10_cuda.so", &(struct elfspec){ .soname = "libc10_cuda.so",
		.needed = { "libcudart.so.13" } });
	welf(root, SITE "/nvidia/cudnn/lib/libcudnn.so.9", &(struct elfspec){ .soname = "libcudnn.so.9" });
	welf(root, SITE "/nvidia/cudnn/lib/libcudnn_ops.so.9", &(struct elfspec){ .soname = "libcudnn_ops.so.9" });
	wfile(root, SITE "/nvidia/cudnn/include/cudnn_version.h",
		"#ifndef CUDNN_VERSION_H_\n#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n"
		"#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n#endif\n");
	welf(root, SITE "/nvidia/cu13/lib/libcublas.so.13", &(struct elfspec){ .soname = "libcublas.so.13",
		.runpath = "$ORIGIN", .needed = { "libcublasLt.so.13" } });
	welf(root, SITE "/nvidia/cu13/lib/libcublasLt.so.13", &(struct elfspec){ .soname = "libcublasLt.so.13" });
	welf(root, SITE "/nvidia/cu13/lib/libcudart.so.13", &(struct elfspec){ .soname = "libcudart.so.13",
		.verdefs = { "libcudart.so.13", "libcudart.so.13" } });
	welf(root, SITE "/nvidia/nccl/lib/libnccl.so.2", &(struct elfspec){ .soname = "libnccl.so.2" });
	welf(root, SITE "/jax_plugins/xla_cuda13/xla_cuda_plugin.so", &(struct elfspec){
		.rpath = "$ORIGIN/../../nvidia/cu13/lib", .needed = { "libcudart.so.13", "libcuda.so.1" } });
	welf(root, SITE "/jax_cuda13_plugin/_triton.so", &(struct elfspec){ .needed = { "libcudart.so.13" } });
	welf(root, SITE "/cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so",
		&(struct elfspec){ .needed = { "libcudart.so.13" } });
}

static const gpuenv_framework_t *fw_of(const gpuenv_pyenv_t *e, int kind, const char *dist)
{
	for (size_t i = 0; i < e->nframeworks; i++)
		if (e->frameworks[i].kind == kind &&
			(!dist || strcmp(e->dists[e->frameworks[i].dist].normalized.ptr, dist) == 0))
			return &e->frameworks[i];
	fail_msg("no framework %s", dist ? dist : gpuenv_fw_kind_name(kind));
	return NULL;
}

/* The one reader of installed environments (lib/env, gpuenv/env.h): what it
 * cannot read is reported, not skipped; files are only read when regular
 * (a FIFO METADATA cannot block it); a folder name stands in for a broken
 * METADATA; the distribution cap is a reported truncation; RECORD is read
 * relative to the distribution's folder. */
static void test_env_reader(void **state)
{
	(void)state;
	char *root = mk_tmp();
	char p[4096];
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_env_list_t l;
	const gpuenv_str_t sites[] = { GPUENV_STR_LIT("/s1"), GPUENV_STR_LIT("/s2"),
		GPUENV_STR_LIT("/missing") };

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	wfile(root, "/s1/Good_Pkg-1.0.dist-info/METADATA",
		"Metadata-Version: 2.1\nName: Good_Pkg\nVersion: 1.0\nRequires-Dist: numpy>=1\n"
		"Requires-Dist: b; extra == 'x'\n\nlong description: not read\n");
	wfile(root, "/s1/Good_Pkg-1.0.dist-info/RECORD",
		"good_pkg/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
		"good_pkg-1.0.dist-info/RECORD,,\n");
	/* the later site's copy is shadowed */
	wfile(root, "/s2/good.pkg-2.0.dist-info/METADATA", "Name: good.pkg\nVersion: 2.0\n\n");
	/* a header line without ':' : a problem, the folder name stands in */
	wfile(root, "/s1/broken-3.1.dist-info/METADATA", "Name: broken\nthis is no header\n\n");
	/* a FIFO METADATA is refused before it is read */
	snprintf(p, sizeof(p), "%s/s1/fifo-0.1.dist-info", root);
	mkdirs(p);
	snprintf(p, sizeof(p), "%s/s1/fifo-0.1.dist-info/METADATA", root);
	assert_int_equal(mkfifo(p, 0644), 0);
	/* an egg-info folder with requires.txt, and an egg-info file */
	wfile(root, "/s2/eggy-0.5-py3.12.egg-info/PKG-INFO", "Name: eggy\nVersion: 0.5\n\n");
	wfile(root, "/s2/eggy-0.5-py3.12.egg-info/requires.txt", "six\n\n[cuda:sys_platform == \"linux\"]\ncupy\n");
	wfile(root, "/s2/flat-1.2.egg-info", "Name: flat\nVersion: 1.2\n");

	assert_int_equal(gpuenv_env_read(&ctx, &a, sites, 3, NULL, &l), 0);
	assert_int_equal(l.ndists, 6);
	assert_false(l.truncated);
	const gpuenv_env_dist_t *d = gpuenv_env_find(l.dists, l.ndists, "GOOD-pkg");
	assert_non_null(d);
	assert_string_equal(d->normalized.ptr, "good-pkg");
	assert_string_equal(d->version.ptr, "1.0");
	assert_int_equal(d->site, 0);
	assert_false(d->shadowed);
	assert_int_equal(d->nrequires, 2);
	assert_string_equal(d->requires[1].ptr, "b; extra == 'x'");
	assert_true(d[1].shadowed);
	assert_string_equal(d[1].version.ptr, "2.0");
	d = gpuenv_env_find(l.dists, l.ndists, "broken");
	assert_non_null(d);
	assert_string_equal(d->version.ptr, "3.1");
	d = gpuenv_env_find(l.dists, l.ndists, "fifo");
	assert_non_null(d);
	assert_string_equal(d->version.ptr, "0.1");
	d = gpuenv_env_find(l.dists, l.ndists, "eggy");
	assert_non_null(d);
	assert_true(d->egg_info && d->is_dir);
	assert_int_equal(d->nrequires, 2);
	assert_string_equal(d->requires[1].ptr, "cupy; (sys_platform == \"linux\") and extra == \"cuda\"");
	d = gpuenv_env_find(l.dists, l.ndists, "flat");
	assert_non_null(d);
	assert_false(d->is_dir);
	assert_string_equal(d->version.ptr, "1.2");
	/* three problems, each naming its file */
	assert_int_equal(l.nproblems, 3);
	bool broken = false, fifo = false, missing = false;
	for (size_t i = 0; i < l.nproblems; i++) {
		const char *m = l.problems[i].ptr;
		broken |= strstr(m, "/s1/broken-3.1.dist-info/METADATA:2:") != NULL;
		fifo |= strstr(m, "/s1/fifo-0.1.dist-info/METADATA: cannot read: not a regular file") != NULL;
		missing |= strstr(m, "/missing: cannot list") != NULL;
	}
	assert_true(broken && fifo && missing);
	assert_int_equal(ctx.err.code, 0);

	/* RECORD, relative to the distribution's folder */
	gpuenv_record_t rec;
	d = gpuenv_env_find(l.dists, l.ndists, "good-pkg");
	assert_int_equal(gpuenv_env_read_record(&ctx, &a, d, &rec), 0);
	assert_int_equal(rec.n, 2);
	assert_true(gpuenv_str_eq_cstr(rec.entries[0].path, "good_pkg/__init__.py"));
	assert_int_equal(gpuenv_env_read_record(&ctx, &a, gpuenv_env_find(l.dists, l.ndists, "flat"), &rec),
		-ENOENT);
	assert_int_equal(gpuenv_env_read_record(&ctx, &a, gpuenv_env_find(l.dists, l.ndists, "broken"), &rec),
		-ENOENT);
	char em[1200];
	gpuenv_error_format(&ctx.err, em, sizeof(em));
	assert_non_null(strstr(em, "/s1/broken-3.1.dist-info/RECORD"));
	gpuenv_error_clear(&ctx);

	/* the cap is a reported truncation, said once per environment */
	gpuenv_env_opts_t eo = { .max_dists = 2 };
	assert_int_equal(gpuenv_env_read(&ctx, &a, sites, 2, &eo, &l), 0);
	assert_int_equal(l.ndists, 2);
	assert_true(l.truncated);
	size_t said = 0;
	for (size_t i = 0; i < l.nproblems; i++)
		said += strstr(l.problems[i].ptr, "more than 2 distributions: the rest are left out") != NULL;
	assert_int_equal(said, 1);
	/* and reaches the probe's warnings */
	wfile(root, "/venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.12.3\n");
	wfile(root, "/venv/lib/python3.12/site-packages/a-1.dist-info/METADATA", "Name: a\nVersion: 1\n\n");
	wfile(root, "/venv/lib/python3.12/site-packages/b-1.dist-info/METADATA", "Name: b\nVersion: 1\n\n");
	gpuenv_stack_t st;
	gpuenv_stack_opts_t so = { .env_dir = "/venv" };
	assert_int_equal(gpuenv_stack_probe(&ctx, &a, &so, &st), 0);
	assert_int_equal(st.nenvs, 1);
	assert_int_equal(st.envs[0].ndists, 2);
	gpuenv_pyenv_t *pe;
	size_t npe;
	gpuenv_pyenv_opts_t po = { .env_dir = "/venv", .max_dists = 1 };
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, &po, &npe, &pe), 0);
	assert_int_equal(pe[0].ndists, 1);
	gpuenv_arena_free(&a);
	rm_rf(root);
}

static void test_pyenv_venv(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_pyenv_t *envs;
	size_t n;
	gpuenv_loader_opts_t lo = { 0 };
	const char *defs[] = { "/usr/lib/x86_64-linux-gnu", NULL };

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	build_venv(root);
	/* the same venv named twice (VIRTUAL_ENV and PATH) is one environment */
	setvar(&env, "VIRTUAL_ENV", "/venv");
	setvar(&env, "PATH", "/venv/bin:/usr/bin");
	setvar(&env, "HOME", "/home/u");
	lo.default_dirs = defs;
	gpuenv_pyenv_opts_t po = { .loader = &lo };
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, &po, &n, &envs), 0);
	assert_int_equal(n, 1);
	gpuenv_pyenv_t *e = &envs[0];
	assert_int_equal(e->found_by, GPUENV_PYENV_VIRTUAL_ENV);
	assert_int_equal(e->kind, GPUENV_PYENV_VENV);
	assert_string_equal(e->prefix.ptr, "/venv");
	assert_string_equal(e->base_prefix.ptr, "/usr");
	assert_string_equal(e->interpreter.ptr, "/venv/bin/python3");
	assert_string_equal(e->real_interpreter.ptr, "/usr/bin/python3.12");
	assert_string_equal(e->python.text.ptr, "3.12.3");
	assert_int_equal(e->python.src, GPUENV_VSRC_PYVENV_CFG);
	assert_string_equal(e->python_xy.ptr, "3.12");
	assert_int_equal(e->nsites, 1); /* no user site in a plain venv */
	assert_string_equal(e->sites[0].ptr, SITE);
	assert_int_equal(e->ndists, 13);

	const gpuenv_pydist_t *torch = gpuenv_pyenv_find(e, "Torch");
	assert_non_null(torch);
	assert_string_equal(torch->version.ptr, "2.11.0");
	assert_true(torch->nrequires > 10);
	assert_non_null(gpuenv_pyenv_find(e, "nvidia_cudnn_cu13"));
	assert_null(gpuenv_pyenv_find(e, "tensorflow"));

	const gpuenv_framework_t *fw = fw_of(e, GPUENV_FW_TORCH, NULL);
	assert_string_equal(fw->version.ptr, "2.11.0+cu130");
	assert_int_equal(fw->version_src, GPUENV_VSRC_VERSION_PY);
	assert_string_equal(fw->local.ptr, "cu130");
	assert_string_equal(fw->cuda.ptr, "13.0");
	assert_int_equal(fw->cuda_src, GPUENV_VSRC_VERSION_PY);
	assert_null(fw->hip.ptr);
	assert_true(fw->gpu);
	assert_int_equal(fw->nbinaries, 1);
	const gpuenv_ld_resolution_t *r = &fw->loads[0];
	assert_int_equal(r->nmissing, 0);
	const gpuenv_ld_need_t *nd = need_of(r, 0, "libcudnn.so.9");
	assert_int_equal(nd->how, GPUENV_LDSRC_RPATH);
	assert_string_equal(nd->path.ptr, SITE "/nvidia/cudnn/lib/libcudnn.so.9");
	assert_string_equal(nd->rule.ptr, "$ORIGIN/../../nvidia/cudnn/lib");
	nd = need_of(r, 0, "libc10_cuda.so");
	assert_string_equal(nd->rule.ptr, "$ORIGIN");
	/* breadth first: libtorch_cuda's own needs are all loaded before
	 * libc10_cuda's, whose libcudart is then the loaded one */
	nd = need_of(r, 0, "libcudart.so.13");
	assert_int_equal(nd->how, GPUENV_LDSRC_RPATH);
	assert_int_equal(nd->rule_owner, 0);
	size_t c10 = obj_of(r, SITE "/torch/lib/libc10_cuda.so");
	nd = need_of(r, c10, "libcudart.so.13");
	assert_int_equal(nd->how, GPUENV_LDSRC_LOADED);
	assert_int_equal(nd->object, obj_of(r, SITE "/nvidia/cu13/lib/libcudart.so.13"));
	size_t cublas = obj_of(r, SITE "/nvidia/cu13/lib/libcublas.so.13");
	assert_int_equal(need_of(r, cublas, "libcublasLt.so.13")->how, GPUENV_LDSRC_RUNPATH);

	fw = fw_of(e, GPUENV_FW_JAX_CUDA_PJRT, NULL);
	assert_string_equal(fw->cuda.ptr, "13");
	assert_int_equal(fw->nbinaries, 1);
	assert_int_equal(fw->loads[0].nmissing, 1); /* libcuda.so.1: no driver in the fake */
	fw = fw_of(e, GPUENV_FW_JAX_CUDA_PLUGIN, NULL);
	assert_int_equal(fw->nbinaries, 1);
	fw = fw_of(e, GPUENV_FW_CUPY, NULL);
	assert_string_equal(fw->cuda.ptr, "13");
	assert_int_equal(fw->nbinaries, 1);
	assert_int_equal(fw->loads[0].nmissing, 1); /* no RPATH to the wheel */
	fw = fw_of(e, GPUENV_FW_ONNXRUNTIME, NULL);
	assert_false(fw->gpu);
	fw = fw_of(e, GPUENV_FW_NVIDIA_WHEEL, "nvidia-cudnn-cu13");
	assert_string_equal(fw->cuda.ptr, "13");
	fw = fw_of(e, GPUENV_FW_NVIDIA_WHEEL, "nvidia-cuda-runtime");
	assert_string_equal(fw->cuda.ptr, "13.0");
	fw = fw_of(e, GPUENV_FW_TRITON, NULL);
	assert_string_equal(fw->version.ptr, "3.6.0");
	/* enum order */
	for (size_t i = 1; i < e->nframeworks; i++)
		assert_true(e->frameworks[i - 1].kind <= e->frameworks[i].kind);

	/* --python names the same venv's interpreter */
	gpuenv_pyenv_opts_t po2 = { .python = "/venv/bin/python" };
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, &po2, &n, &envs), 0);
	assert_int_equal(n, 1);
	assert_int_equal(envs[0].found_by, GPUENV_PYENV_ARG_PYTHON);
	assert_string_equal(envs[0].prefix.ptr, "/venv");
	assert_int_equal(envs[0].ndists, 13);
	assert_null(envs[0].frameworks[0].loads);
	/* --python that does not exist is an error */
	gpuenv_pyenv_opts_t po3 = { .python = "/nope/python3" };
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, &po3, &n, &envs), -ENOENT);
	gpuenv_pyenv_opts_t po4 = { .env_dir = "/nope" };
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, &po4, &n, &envs), -ENOENT);
	gpuenv_arena_free(&a);
	rm_rf(root);
}

static void test_pyenv_system(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_pyenv_t *envs;
	size_t n;

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	/* Debian-style system Python with a user site that shadows a system
	 * distribution, an egg-info folder and an egg-info file */
	wexec(root, "/usr/bin/python3.11", "\177ELF");
	wlink(root, "/usr/bin/python3", "python3.11");
	wfile(root, "/usr/include/python3.11/patchlevel.h", "#define PY_VERSION              \"3.11.2\"\n");
	wfile(root, "/usr/lib/python3/dist-packages/requests-2.28.1.egg-info/PKG-INFO",
		"Metadata-Version: 2.1\nName: requests\nVersion: 2.28.1\n");
	wfile(root, "/usr/lib/python3/dist-packages/requests-2.28.1.egg-info/requires.txt",
		"charset_normalizer<4,>=2\nidna<4,>=2.5\n\n[socks]\nPySocks!=1.5.7,>=1.5.6\n\n[use_chardet_on_py3:python_version >= \"3\"]\nchardet<6,>=3.0.2\n");
	wfile(root, "/usr/lib/python3/dist-packages/six-1.16.0.egg-info", "Metadata-Version: 1.2\nName: six\nVersion: 1.16.0\n");
	wfile(root, "/usr/lib/python3/dist-packages/numpy-1.24.2.dist-info/METADATA", "Name: numpy\nVersion: 1.24.2\n");
	wfile(root, "/home/u/.local/lib/python3.11/site-packages/numpy-2.1.0.dist-info/METADATA",
		"Name: numpy\nVersion: 2.1.0\nRequires-Dist: foo ; extra == \"x\"\n\nbody\nRequires-Dist: nope\n");
	setvar(&env, "PATH", "/usr/local/bin:/usr/bin");
	setvar(&env, "HOME", "/home/u");
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, NULL, &n, &envs), 0);
	assert_int_equal(n, 1);
	gpuenv_pyenv_t *e = &envs[0];
	assert_int_equal(e->found_by, GPUENV_PYENV_PATH);
	assert_int_equal(e->kind, GPUENV_PYENV_SYSTEM);
	assert_string_equal(e->prefix.ptr, "/usr");
	assert_string_equal(e->python.text.ptr, "3.11.2");
	assert_int_equal(e->python.src, GPUENV_VSRC_HEADER);
	assert_int_equal(e->nsites, 2);
	assert_string_equal(e->sites[0].ptr, "/home/u/.local/lib/python3.11/site-packages");
	assert_string_equal(e->sites[1].ptr, "/usr/lib/python3/dist-packages");
	assert_int_equal(e->ndists, 4);
	const gpuenv_pydist_t *np = gpuenv_pyenv_find(e, "numpy");
	assert_string_equal(np->version.ptr, "2.1.0");
	assert_false(np->shadowed);
	assert_int_equal(np->nrequires, 1);
	assert_string_equal(np->requires[0].ptr, "foo ; extra == \"x\"");
	assert_true(np[1].shadowed);
	assert_string_equal(np[1].version.ptr, "1.24.2");
	const gpuenv_pydist_t *rq = gpuenv_pyenv_find(e, "requests");
	assert_true(rq->egg_info);
	assert_int_equal(rq->nrequires, 4);
	assert_string_equal(rq->requires[2].ptr, "PySocks!=1.5.7,>=1.5.6; extra == \"socks\"");
	assert_string_equal(rq->requires[3].ptr,
		"chardet<6,>=3.0.2; (python_version >= \"3\") and extra == \"use_chardet_on_py3\"");
	assert_string_equal(gpuenv_pyenv_find(e, "six")->version.ptr, "1.16.0");

	/* no_user_site drops the shadowing copy */
	gpuenv_pyenv_opts_t po = { .no_user_site = true };
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, &po, &n, &envs), 0);
	assert_string_equal(gpuenv_pyenv_find(&envs[0], "numpy")->version.ptr, "1.24.2");
	gpuenv_arena_free(&a);
	rm_rf(root);
}

static void test_pyenv_shim_conda(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_pyenv_t *envs;
	size_t n;

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	wexec(root, "/home/u/.pyenv/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec \"$0\"\n");
	wfile(root, "/home/u/.pyenv/version", "3.12.1\n");
	wexec(root, "/home/u/.pyenv/versions/3.12.1/bin/python3.12", "\177ELF");
	wlink(root, "/home/u/.pyenv/versions/3.12.1/bin/python3", "python3.12");
	wdir(root, "/home/u/.pyenv/versions/3.12.1/lib/python3.12/site-packages");
	wexec(root, "/conda/envs/x/bin/python3.10", "\177ELF");
	wlink(root, "/conda/envs/x/bin/python", "python3.10");
	wfile(root, "/conda/envs/x/conda-meta/python-3.10.14-h955ad1f_1.json", "{}");
	wfile(root, "/conda/envs/x/lib/python3.10/site-packages/cupy_cuda12x-13.3.0.dist-info/METADATA",
		"Name: cupy-cuda12x\nVersion: 13.3.0\n");
	setvar(&env, "PATH", "/home/u/.pyenv/shims:/usr/bin");
	setvar(&env, "CONDA_PREFIX", "/conda/envs/x");
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, NULL, &n, &envs), 0);
	assert_int_equal(n, 2);
	assert_int_equal(envs[0].found_by, GPUENV_PYENV_CONDA_PREFIX);
	assert_int_equal(envs[0].kind, GPUENV_PYENV_CONDA);
	assert_string_equal(envs[0].python.text.ptr, "3.10.14");
	assert_string_equal(envs[0].python_xy.ptr, "3.10");
	assert_string_equal(fw_of(&envs[0], GPUENV_FW_CUPY, NULL)->cuda.ptr, "12");
	assert_int_equal(envs[1].found_by, GPUENV_PYENV_PATH);
	assert_string_equal(envs[1].interpreter.ptr, "/home/u/.pyenv/shims/python3");
	assert_string_equal(envs[1].real_interpreter.ptr, "/home/u/.pyenv/versions/3.12.1/bin/python3.12");
	assert_string_equal(envs[1].prefix.ptr, "/home/u/.pyenv/versions/3.12.1");
	assert_string_equal(envs[1].python.text.ptr, "3.12.1");
	assert_int_equal(envs[1].python.src, GPUENV_VSRC_PATH);
	/* PYENV_VERSION wins over the version file */
	wexec(root, "/home/u/.pyenv/versions/3.9.18/bin/python3", "\177ELF");
	setvar(&env, "PYENV_VERSION", "3.9.18");
	setvar(&env, "CONDA_PREFIX", NULL);
	assert_int_equal(gpuenv_pyenv_probe(&ctx, &a, NULL, &n, &envs), 0);
	assert_string_equal(envs[0].real_interpreter.ptr, "/home/u/.pyenv/versions/3.9.18/bin/python3");
	gpuenv_arena_free(&a);
	rm_rf(root);
}

static const gpuenv_libcopy_t *copy_at(const gpuenv_stack_t *st, const char *path)
{
	for (size_t i = 0; i < st->nlibs; i++)
		if (strcmp(st->libs[i].path.ptr, path) == 0)
			return &st->libs[i];
	fail_msg("no library copy %s", path);
	return NULL;
}

static void test_stack_fake(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	gpuenv_arena_t a;
	gpuenv_stack_t st;
	static const struct centry ents[] = {
		{ "libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", X64, 0 },
		{ "libcudnn_ops.so.9", "/usr/local/cuda-12.8/lib64/libcudnn_ops.so.9", X64, 0 },
	};

	ctx_fake(&ctx, &env, root);
	gpuenv_arena_init(&a, &ctx, 0);
	build_venv(root);
	struct bytes b = cache_build(ents, 2, NULL, 0, NULL, false);
	wbytes(root, "/etc/ld.so.cache", b.d, b.n);
	free(b.d);
	welf(root, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7", &(struct elfspec){ .soname = "libcudnn.so.8" });
	wlink(root, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", "libcudnn.so.8.9.7");
	wfile(root, "/usr/include/x86_64-linux-gnu/cudnn_version_v8.h", "x");
	wfile(root, "/usr/include/cudnn_version.h", "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n");
	wfile(root, "/usr/local/cuda-12.8/version.json",
		"{\"cuda\": {\"version\": \"12.8.1\"}, \"libcublas\": {\"version\": \"12.8.4.1\"}}");
	wfile(root, "/usr/local/cuda-12.8/include/cuda.h", "#define CUDA_VERSION 12080\n");
	welf(root, "/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1", &(struct elfspec){ .soname = "libcublas.so.12" });
	wlink(root, "/usr/local/cuda-12.8/lib64/libcublas.so.12", "libcublas.so.12.8.4.1");
	wlink(root, "/usr/local/cuda-12.8/lib64/libcublas.so", "libcublas.so.12");
	welf(root, "/usr/local/cuda-12.8/lib64/libcudnn_ops.so.9", &(struct elfspec){ .soname = "libcudnn_ops.so.9" });
	wlink(root, "/usr/local/cuda", "cuda-12.8");
	welf(root, "/llp/libnccl.so.2.21.5", &(struct elfspec){ .soname = "libnccl.so.2" });
	wfile(root, "/llp/libnccl.so.2.txt", "not a library");
	setvar(&env, "VIRTUAL_ENV", "/venv");
	setvar(&env, "LD_LIBRARY_PATH", "/llp:/usr/local/cuda/lib64");

	gpuenv_stack_opts_t so = { 0 };
	assert_int_equal(gpuenv_stack_probe(&ctx, &a, &so, &st), 0);
	assert_int_equal(st.ntoolkits, 1);
	assert_true(st.have_ldcache);
	assert_int_equal(st.nenvs, 1);
	assert_string_equal(st.ld_library_path.ptr, "/llp:/usr/local/cuda/lib64");

	/* the system cuDNN 8: version from the file name, header beside */
	const gpuenv_libcopy_t *c = copy_at(&st, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7");
	assert_int_equal(c->family, GPUENV_LIB_CUDNN);
	assert_true(c->where & GPUENV_LIBLOC_LDCACHE);
	assert_true(c->where & GPUENV_LIBLOC_DEFAULT);
	assert_string_equal(c->soname.ptr, "libcudnn.so.8");
	assert_int_equal(c->naliases, 1);
	assert_string_equal(c->aliases[0].ptr, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8");
	assert_string_equal(c->versions[0].text.ptr, "8.9.7");
	assert_int_equal(c->versions[0].src, GPUENV_VSRC_FILENAME);
	assert_int_equal(c->versions[1].src, GPUENV_VSRC_HEADER);
	assert_string_equal(c->versions[1].origin.ptr, "/usr/include/cudnn_version.h");
	assert_int_equal(c->versions[c->nversions - 1].src, GPUENV_VSRC_SONAME);
	assert_string_equal(c->versions[c->nversions - 1].text.ptr, "8");

	/* the wheel's cuDNN 9: METADATA beats the header's three parts */
	c = copy_at(&st, SITE "/nvidia/cudnn/lib/libcudnn.so.9");
	assert_int_equal(c->where, GPUENV_LIBLOC_WHEEL | GPUENV_LIBLOC_LOADER);
	assert_string_equal(c->dist.ptr, "nvidia-cudnn-cu13");
	assert_string_equal(c->site.ptr, SITE);
	assert_string_equal(c->versions[0].text.ptr, "9.19.0.56");
	assert_int_equal(c->versions[0].src, GPUENV_VSRC_METADATA);
	assert_string_equal(c->versions[0].origin.ptr, "nvidia-cudnn-cu13 9.19.0.56");
	assert_string_equal(c->versions[1].text.ptr, "9.19.0");
	assert_int_equal(c->versions[1].src, GPUENV_VSRC_HEADER);

	/* CUDA 13 wheels share nvidia/cu13/lib: the family says which wheel */
	c = copy_at(&st, SITE "/nvidia/cu13/lib/libcudart.so.13");
	assert_string_equal(c->dist.ptr, "nvidia-cuda-runtime");
	assert_string_equal(c->versions[0].text.ptr, "13.0.96");
	c = copy_at(&st, SITE "/nvidia/cu13/lib/libcublasLt.so.13");
	assert_string_equal(c->dist.ptr, "nvidia-cublas");

	/* the toolkit's cuBLAS, reached as /usr/local/cuda/lib64 through
	 * LD_LIBRARY_PATH too */
	c = copy_at(&st, "/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1");
	assert_int_equal(c->where, GPUENV_LIBLOC_TOOLKIT | GPUENV_LIBLOC_LD_LIBRARY_PATH);
	assert_string_equal(c->toolkit.ptr, "/usr/local/cuda");
	assert_int_equal(c->naliases, 5); /* 3 names under cuda/lib64, 2 links beside it */
	assert_string_equal(c->versions[0].text.ptr, "12.8.4.1");
	assert_int_equal(c->versions[0].src, GPUENV_VSRC_FILENAME);
	assert_int_equal(c->versions[1].src, GPUENV_VSRC_VERSION_JSON);
	c = copy_at(&st, "/usr/local/cuda-12.8/lib64/libcudnn_ops.so.9");
	assert_true(c->where & GPUENV_LIBLOC_LDCACHE);
	/* LD_LIBRARY_PATH's NCCL */
	c = copy_at(&st, "/llp/libnccl.so.2.21.5");
	assert_int_equal(c->where, GPUENV_LIBLOC_LD_LIBRARY_PATH);
	assert_string_equal(c->versions[0].text.ptr, "2.21.5");
	/* sorted by family then path */
	for (size_t i = 1; i < st.nlibs; i++)
		assert_true(st.libs[i - 1].family < st.libs[i].family ||
			(st.libs[i - 1].family == st.libs[i].family &&
				strcmp(st.libs[i - 1].path.ptr, st.libs[i].path.ptr) < 0));

	/* and torch loads the wheel's cuDNN, not the system one */
	const gpuenv_framework_t *fw = fw_of(&st.envs[0], GPUENV_FW_TORCH, NULL);
	const gpuenv_ld_need_t *nd = need_of(&fw->loads[0], 0, "libcudnn.so.9");
	assert_string_equal(nd->path.ptr, SITE "/nvidia/cudnn/lib/libcudnn.so.9");
	assert_int_equal(st.nwarnings, 0);
	gpuenv_arena_free(&a);
	rm_rf(root);
}

/* Out of memory at every allocation: an error, never a crash or a leak. */
static void test_stack_oom(void **state)
{
	(void)state;
	char *root = mk_tmp();
	gpuenv_ctx_t ctx;
	struct fakeenv env;
	testutil_alloc_t bud;
	long calls;

	build_venv(root);
	welf(root, "/usr/local/cuda-12.8/lib64/libcublas.so.12.8.4.1", &(struct elfspec){ .soname = "libcublas.so.12" });
	wfile(root, "/usr/local/cuda-12.8/include/cuda.h", "#define CUDA_VERSION 12080\n");
	ctx_fake(&ctx, &env, root);
	setvar(&env, "VIRTUAL_ENV", "/venv");
	ctx.mem = testutil_allocator(&bud);
	/* how many allocations a full run takes */
	testutil_alloc_reset(&bud, TESTUTIL_NEVER, false);
	{
		gpuenv_arena_t a;
		gpuenv_stack_t st;
		gpuenv_arena_init(&a, &ctx, 0);
		assert_int_equal(gpuenv_stack_probe(&ctx, &a, NULL, &st), 0);
		gpuenv_arena_free(&a);
	}
	calls = bud.calls;
	for (long k = 0; k < calls; k++) {
		gpuenv_arena_t a;
		gpuenv_stack_t st;
		testutil_alloc_reset(&bud, k, false);
		gpuenv_arena_init(&a, &ctx, 0);
		int r = gpuenv_stack_probe(&ctx, &a, NULL, &st);
		assert_true(r == 0 || r == -ENOMEM);
		gpuenv_arena_free(&a);
	}
	/* and an arena that runs dry at every point of a full run */
	testutil_alloc_reset(&bud, TESTUTIL_NEVER, false);
	size_t used;
	{
		gpuenv_arena_t a;
		gpuenv_stack_t st;
		gpuenv_arena_init(&a, &ctx, 0);
		assert_int_equal(gpuenv_stack_probe(&ctx, &a, NULL, &st), 0);
		used = a.used;
		gpuenv_arena_free(&a);
	}
	size_t runs = 0;
	for (size_t lim = 16; lim < used; lim += 16 + lim / 512, runs++) {
		gpuenv_arena_t a;
		gpuenv_stack_t st;
		gpuenv_arena_init(&a, &ctx, lim);
		int r = gpuenv_stack_probe(&ctx, &a, NULL, &st);
		assert_true(r == 0 || r == -ENOMEM);
		gpuenv_arena_free(&a);
	}
	printf("stack probe: %ld allocation failures and %zu arena limits (of %zu bytes) survived\n",
		calls, runs, used);
	rm_rf(root);
}

/* The real machine: the probe runs, and finds the toolkit's cuDNN with its
 * exact version when /usr/local/cuda has one. */
static void test_stack_real(void **state)
{
	(void)state;
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	gpuenv_stack_t st;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	assert_int_equal(gpuenv_stack_probe(&ctx, &a, NULL, &st), 0);
	printf("real machine: %zu toolkits, %zu library copies, %zu Python environments, %zu warnings\n",
		st.ntoolkits, st.nlibs, st.nenvs, st.nwarnings);
	if (access("/usr/local/cuda/include/cudnn_version.h", R_OK) == 0) {
		bool found = false;
		for (size_t i = 0; i < st.nlibs; i++)
			if (st.libs[i].family == GPUENV_LIB_CUDNN && strcmp(st.libs[i].name.ptr, "libcudnn.so.9") == 0 &&
				st.libs[i].toolkit.ptr) {
				found = true;
				assert_true(st.libs[i].nversions >= 2);
				printf("toolkit cuDNN %s (%s)\n", st.libs[i].versions[0].text.ptr,
					gpuenv_vsrc_name(st.libs[i].versions[0].src));
			}
		assert_true(found);
	}
	gpuenv_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ldcache_generated),
		cmocka_unit_test(test_ldcache_corrupt),
		cmocka_unit_test(test_ldcache_real),
		cmocka_unit_test(test_elf_parse),
		cmocka_unit_test(test_loader_order),
		cmocka_unit_test(test_loader_cache_hwcaps),
		cmocka_unit_test(test_loader_vs_ldd),
		cmocka_unit_test(test_toolkits),
		cmocka_unit_test(test_toolkit_real),
		cmocka_unit_test(test_env_reader),
		cmocka_unit_test(test_pyenv_venv),
		cmocka_unit_test(test_pyenv_system),
		cmocka_unit_test(test_pyenv_shim_conda),
		cmocka_unit_test(test_stack_fake),
		cmocka_unit_test(test_stack_oom),
		cmocka_unit_test(test_stack_real),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
