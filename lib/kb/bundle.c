/* Knowledge-base bundles: checked, signed, installed per user
 * (include/gpuenv/kb_bundle.h says what a bundle is and when one is used).
 * Over the row loader (kb.c: a bundle is checked by loading it) and age.c;
 * under load.c, which picks the installed bundle at every load. */
#include "gpuenv/kb_bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "gpuenv/crypto.h" /* after OpenSSL's: libcrypto loaded on first use */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/toml.h"
#include "gpuenv/zip.h"
#include "kb_int.h"

#define MANIFEST_NAME "MANIFEST"
#define SIG_NAME "MANIFEST.sig"
#define MANIFEST_HEAD "gpuenv-kb-bundle 1"

/* ---- the keys ------------------------------------------------------------------ */

/* The release key signs the bundles this project publishes; its private
 * half is kept off the repository.  The test key's private half is
 * tests/fixtures/kb-keys/test-signing-key.pem: only a build configured
 * with -Dkb_test_key=true (the test build) trusts it. */
static gpuenv_kb_key_t keys[] = {
	{ "release",
		{ 0xfb, 0xe4, 0xa7, 0x67, 0x53, 0x27, 0x0e, 0x07, 0xb7, 0x53, 0xcc, 0x77, 0x48,
			0xe3, 0x43, 0xdb, 0x83, 0x94, 0xc9, 0x33, 0xcf, 0x7b, 0x25, 0xe3, 0x17,
			0xed, 0x26, 0xa5, 0x10, 0x46, 0x19, 0x0f },
		"" },
#ifdef GPUENV_KB_TEST_KEY
	{ "test",
		{ 0x8b, 0x7c, 0xc4, 0xee, 0x83, 0x59, 0xb1, 0xf9, 0xd6, 0xad, 0xe6, 0x9d, 0xb7,
			0xa0, 0x2a, 0xfa, 0x16, 0xa5, 0xf1, 0x9e, 0x51, 0x5b, 0xbc, 0x37, 0x04,
			0xac, 0x91, 0x84, 0x62, 0x21, 0x90, 0xc6 },
		"" },
#endif
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

/* A key's id: the first 8 bytes of its SHA-256 in hex; 0 or the digest's
 * failure (out is "" then: an id no bundle names). */
static int key_id(const unsigned char *pub, char out[17])
{
	unsigned char dg[GPUENV_SHA256_LEN];
	int r = gpuenv_sha256(pub, GPUENV_KB_KEY_LEN, dg);

	if (r)
		out[0] = '\0';
	else
		gpuenv_hex(dg, 8, out);
	return r;
}

static void keys_init(void)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (key_id(keys[i].pub, keys[i].id) != 0)
			keys[i].id[0] = '\0'; /* no memory: an id no bundle names, so
						   its bundles are refused, never trusted */
}

size_t gpuenv_kb_trusted_keys(const gpuenv_kb_key_t **out)
{
	pthread_once(&keys_once, keys_init);
	*out = keys;
	return NKEYS;
}

static bool ed25519_verify(const unsigned char *pub, const void *msg, size_t len,
	const unsigned char *sig)
{
	EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, GPUENV_KB_KEY_LEN);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = pk && md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, pk) == 1 &&
		EVP_DigestVerify(md, sig, GPUENV_KB_SIG_LEN, msg, len) == 1;

	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	return ok;
}

/* The trusted key whose signature sig of msg is, or NULL. */
static const gpuenv_kb_key_t *verify_any(const char *key_id_hint, const void *msg, size_t len,
	const unsigned char *sig)
{
	const gpuenv_kb_key_t *k;
	size_t n = gpuenv_kb_trusted_keys(&k);

	for (size_t i = 0; i < n; i++)
		if ((!key_id_hint[0] || strcmp(key_id_hint, k[i].id) == 0) &&
			ed25519_verify(k[i].pub, msg, len, sig))
			return &k[i];
	return NULL;
}

static int no_signature(gpuenv_ctx_t *ctx, const char *origin, const gpuenv_kb_manifest_t *m)
{
	const gpuenv_kb_key_t *k;
	size_t n = gpuenv_kb_trusted_keys(&k);
	char ids[128] = "";

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(ids);
		snprintf(ids + l, sizeof(ids) - l, "%s%s (%s)", i ? ", " : "", k[i].id, k[i].name);
	}
	gpuenv_fail(ctx, -EPERM, origin, 0, 0,
		"the signature of the bundle's MANIFEST does not verify with a key this gpuenv "
		"trusts (the manifest names key %s; trusted: %s)", m->key_id[0] ? m->key_id : "none",
		ids);
	return gpuenv_hint(ctx, "the bundle was changed after it was signed, or signed by another "
				"key: get it again from where this gpuenv's bundles are published");
}

/* ---- the manifest ----------------------------------------------------------------- */

static bool is_date(gpuenv_str_t s)
{
	static const char pat[] = "dddd-dd-dd";

	if (s.len != 10)
		return false;
	for (size_t i = 0; i < 10; i++)
		if (pat[i] == 'd' ? (s.ptr[i] < '0' || s.ptr[i] > '9') : s.ptr[i] != '-')
			return false;
	return true;
}

static bool all_hex(gpuenv_str_t s, size_t n)
{
	if (s.len != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (gpuenv_hex_digit(s.ptr[i]) < 0 || (s.ptr[i] >= 'A' && s.ptr[i] <= 'F'))
			return false;
	return true;
}

/* The next space-separated word of *rest. */
static gpuenv_str_t word(gpuenv_str_t *rest)
{
	size_t i = 0;
	gpuenv_str_t w;

	while (i < rest->len && rest->ptr[i] != ' ')
		i++;
	w = gpuenv_str_n(rest->ptr, i);
	*rest = i < rest->len ? gpuenv_str_n(rest->ptr + i + 1, rest->len - i - 1)
			      : gpuenv_str_n(rest->ptr + rest->len, 0);
	return w;
}

int gpuenv_kb_manifest_parse(gpuenv_ctx_t *ctx, const char *origin, const char *text, size_t len,
	gpuenv_kb_manifest_t *out)
{
	gpuenv_str_t rest = gpuenv_str_n(text, len);
	unsigned line = 0;
	bool have_date = false;

	memset(out, 0, sizeof(*out));
	if (len > GPUENV_KB_MANIFEST_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, origin, 0, 0, "the manifest has %zu bytes, "
			"more than %zu", len, GPUENV_KB_MANIFEST_MAX);
	while (rest.len) {
		size_t nl = 0;
		gpuenv_str_t l, kw;
		while (nl < rest.len && rest.ptr[nl] != '\n')
			nl++;
		if (nl == rest.len)
			return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line + 1, 0,
				"the last line does not end with a newline (a cut manifest?)");
		l = gpuenv_str_n(rest.ptr, nl);
		rest = gpuenv_str_n(rest.ptr + nl + 1, rest.len - nl - 1);
		line++;
		if (!gpuenv_text_valid(l.ptr, l.len, 0) || memchr(l.ptr, '\r', l.len) ||
			memchr(l.ptr, '\t', l.len))
			return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 0,
				"not a line of printable text");
		if (line == 1) {
			if (!gpuenv_str_eq_cstr(l, MANIFEST_HEAD))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 1, 0, "the manifest "
					"starts with '%.40s', not '" MANIFEST_HEAD "'", l.ptr);
			continue;
		}
		kw = word(&l);
		if (gpuenv_str_eq_cstr(kw, "date")) {
			if (have_date || !is_date(l))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 6, have_date ?
					"a second date" : "the date must be YYYY-MM-DD");
			memcpy(out->date, l.ptr, 10);
			have_date = true;
		} else if (gpuenv_str_eq_cstr(kw, "key")) {
			if (out->key_id[0] || !all_hex(l, 16))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 5, out->key_id[0] ?
					"a second key" : "the key id must be 16 lower-case hex digits");
			memcpy(out->key_id, l.ptr, 16);
		} else if (gpuenv_str_eq_cstr(kw, "file")) {
			gpuenv_str_t name = word(&l), size = word(&l), sha = l;
			gpuenv_kb_manifest_file_t *f;
			int id = kb_file_id(name);
			uint64_t sz;
			if (id < 0) {
				gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 6, "'%.*s' is not a "
					"knowledge-base file of this gpuenv", (int)(name.len > 64 ? 64 :
					name.len), name.ptr);
				return gpuenv_hint(ctx, "a bundle made for a newer gpuenv: upgrade gpuenv");
			}
			for (unsigned i = 0; i < out->n; i++)
				if (out->file[i].id == id)
					return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 6,
						"%.*s is listed twice", GPUENV_STR_ARG(name));
			if (!gpuenv_str_to_u64(size, &sz) || sz > GPUENV_KB_MAX_FILE)
				return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 0, "%.*s: the "
					"size must be a number of bytes up to %zu", GPUENV_STR_ARG(name),
					GPUENV_KB_MAX_FILE);
			if (!all_hex(sha, 64))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 0, "%.*s: the "
					"SHA-256 must be 64 lower-case hex digits", GPUENV_STR_ARG(name));
			f = &out->file[out->n++];
			f->id = id;
			f->size = sz;
			for (size_t i = 0; i < 32; i++)
				f->sha256[i] = (unsigned char)(gpuenv_hex_digit(sha.ptr[2 * i]) << 4 |
					gpuenv_hex_digit(sha.ptr[2 * i + 1]));
		} else
			return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, line, 1, "unknown line '%.*s' "
				"(the lines are date, key and file)", (int)(kw.len > 32 ? 32 : kw.len),
				kw.ptr);
	}
	if (line == 0)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "the manifest is empty");
	if (!have_date)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "the manifest has no date");
	if (!out->n)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "the manifest lists no file");
	return 0;
}

/* ---- checking ------------------------------------------------------------------------ */

static const gpuenv_kb_manifest_file_t *listed(const gpuenv_kb_manifest_t *m, int id)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->file[i].id == id)
			return &m->file[i];
	return NULL;
}

static int check_bytes(gpuenv_ctx_t *ctx, const char *origin, const gpuenv_kb_manifest_file_t *f,
	const char *data, size_t len)
{
	unsigned char dg[GPUENV_SHA256_LEN];
	const char *name = gpuenv_kb_file_name(f->id);

	if (len != f->size) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "%s has %zu bytes, the manifest says "
			"%llu", name, len, (unsigned long long)f->size);
		return gpuenv_hint(ctx, "the bundle was changed or cut after it was made");
	}
	int r = gpuenv_sha256(data, len, dg);
	if (r)
		return gpuenv_sha256_fail(ctx, r, name);
	if (memcmp(dg, f->sha256, sizeof(dg))) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "%s does not have the SHA-256 the "
			"signed manifest gives", name);
		return gpuenv_hint(ctx, "the bundle was changed after it was signed");
	}
	return 0;
}

/* The files load, and about.toml has the manifest's date. */
static int check_loads(gpuenv_ctx_t *ctx, const char *origin, const gpuenv_kb_bundle_t *b)
{
	gpuenv_kb_t *kb;
	gpuenv_str_t d;
	int r = gpuenv_kb_load_sources(ctx, b->src, b->n, GPUENV_KB_ALL, &kb);

	if (r)
		return gpuenv_hint(ctx, "the bundle %s is signed but its files do not load in this "
					"gpuenv (made for another version?)", origin);
	d = gpuenv_kb_date(kb);
	if (!d.ptr || !gpuenv_str_eq_cstr(d, b->m.date)) {
		if (!d.ptr)
			d = gpuenv_str("none");
		gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "its about.toml is dated %.*s, the "
			"manifest %s", GPUENV_STR_ARG(d), b->m.date);
		gpuenv_kb_free(kb);
		return gpuenv_hint(ctx, "make the bundle again (`gpuenv kb bundle`)");
	}
	gpuenv_kb_free(kb);
	return 0;
}

static int read_entry(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_zip_t *z,
	const char *name, size_t max, gpuenv_str_t *out)
{
	const gpuenv_zip_entry_t *e = gpuenv_zip_find(z, gpuenv_str(name));

	if (!e || e->is_dir) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, z->file, 0, 0, "no %s in the bundle", name);
		return gpuenv_hint(ctx, "%s", strcmp(name, SIG_NAME) == 0 ?
			"an unsigned bundle is never installed" : "not a gpuenv knowledge-base bundle");
	}
	return gpuenv_zip_read(ctx, arena, z, e, max, out);
}

int gpuenv_kb_bundle_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *origin,
	const void *data, size_t size, gpuenv_kb_bundle_t *out)
{
	gpuenv_zip_limits_t lim = { .max_entries = 64, .max_total = GPUENV_KB_BUNDLE_MAX,
		.max_entry = GPUENV_KB_MAX_FILE, .max_ratio = 0 };
	gpuenv_zip_t z;
	gpuenv_str_t sig;
	int r;

	memset(out, 0, sizeof(*out));
	if (size > GPUENV_KB_BUNDLE_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, origin, 0, 0, "%zu bytes, more than a bundle "
			"may have (%zu)", size, GPUENV_KB_BUNDLE_MAX);
	r = gpuenv_zip_open(ctx, arena, origin, data, size, &lim, &z);
	if (r && strncmp(ctx->err.msg, "not a readable wheel: ", 22) == 0) {
		/* the zip reader's words are a wheel's */
		char m[sizeof(ctx->err.msg)];
		snprintf(m, sizeof(m), "not a readable zip file: %s", ctx->err.msg + 22);
		memcpy(ctx->err.msg, m, sizeof(m));
	}
	if (r)
		return gpuenv_hint(ctx, "not a complete zip file: a cut download, or not a gpuenv "
					"knowledge-base bundle");
	if ((r = read_entry(ctx, arena, &z, MANIFEST_NAME, GPUENV_KB_MANIFEST_MAX, &out->manifest)) ||
		(r = read_entry(ctx, arena, &z, SIG_NAME, GPUENV_KB_SIG_LEN + 1, &sig)))
		return r;
	if (sig.len != GPUENV_KB_SIG_LEN)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, SIG_NAME " has %zu bytes, an "
			"Ed25519 signature %d", sig.len, GPUENV_KB_SIG_LEN);
	memcpy(out->sig, sig.ptr, GPUENV_KB_SIG_LEN);
	{
		char where[4200];
		snprintf(where, sizeof(where), "%s: " MANIFEST_NAME, origin);
		if ((r = gpuenv_kb_manifest_parse(ctx, where, out->manifest.ptr, out->manifest.len,
			     &out->m)))
			return r;
	}
	out->key = verify_any(out->m.key_id, out->manifest.ptr, out->manifest.len, out->sig);
	if (!out->key)
		return no_signature(ctx, origin, &out->m);
	for (size_t i = 0; i < z.n; i++) {
		const gpuenv_zip_entry_t *e = &z.entries[i];
		const gpuenv_kb_manifest_file_t *f;
		gpuenv_str_t text;
		if (gpuenv_str_eq_cstr(e->name, MANIFEST_NAME) || gpuenv_str_eq_cstr(e->name, SIG_NAME))
			continue;
		f = e->is_dir ? NULL : listed(&out->m, kb_file_id(e->name));
		if (!f)
			return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "%.*s is in the bundle "
				"but not in its signed manifest", (int)(e->name.len > 64 ? 64 :
				e->name.len), e->name.ptr);
		if ((r = gpuenv_zip_read(ctx, arena, &z, e, GPUENV_KB_MAX_FILE, &text)) ||
			(r = check_bytes(ctx, origin, f, text.ptr, text.len)))
			return r;
		out->src[out->n++] = (gpuenv_kb_source_t){ gpuenv_kb_file_name(f->id), text.ptr,
			text.len, gpuenv_kb_file_name(f->id) };
	}
	if (out->n != out->m.n) {
		for (unsigned i = 0; i < out->m.n; i++) {
			const char *name = gpuenv_kb_file_name(out->m.file[i].id);
			if (!gpuenv_zip_find(&z, gpuenv_str(name)))
				return gpuenv_fail(ctx, GPUENV_EFORMAT, origin, 0, 0, "the manifest "
					"lists %s, which is not in the bundle", name);
		}
	}
	return check_loads(ctx, origin, out);
}

/* ---- where bundles live ------------------------------------------------------------------- */

int gpuenv_kb_bundle_dir(gpuenv_ctx_t *ctx, char *out, size_t size)
{
	const char *v = gpuenv_ctx_getenv(ctx, "GPUENV_DATA_DIR");
	int n;

	if (v && *v)
		n = snprintf(out, size, "%s/kb", v);
	else if ((v = gpuenv_ctx_getenv(ctx, "XDG_DATA_HOME")) && v[0] == '/')
		n = snprintf(out, size, "%s/gpuenv/kb", v);
	else if ((v = gpuenv_ctx_getenv(ctx, "HOME")) && *v)
		n = snprintf(out, size, "%s/.local/share/gpuenv/kb", v);
	else {
		gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "no folder for knowledge-base bundles: "
			"none of GPUENV_DATA_DIR, XDG_DATA_HOME and HOME is set");
		return gpuenv_hint(ctx, "set GPUENV_DATA_DIR");
	}
	if (n < 0 || (size_t)n >= size)
		return gpuenv_fail(ctx, -ENAMETOOLONG, NULL, 0, 0, "the data folder's path is too long");
	return 0;
}

/* ---- installing --------------------------------------------------------------------------- */


static int write_file(gpuenv_ctx_t *ctx, int dirfd, const char *dir, const char *name,
	const void *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	const char *p = data;
	int r = 0;

	if (fd < 0)
		return gpuenv_fail(ctx, -errno, dir, 0, 0, "%s: %s", name, strerror(errno));
	while (len && !r) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = gpuenv_fail(ctx, w < 0 ? -errno : -EIO, dir, 0, 0, "%s: %s", name,
				w < 0 ? strerror(errno) : "short write");
		else {
			p += w;
			len -= (size_t)w;
		}
	}
	if (!r && fsync(fd) != 0)
		r = gpuenv_fail(ctx, -errno, dir, 0, 0, "%s: fsync: %s", name, strerror(errno));
	close(fd);
	return r;
}

static void remove_tree_flat(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

static int fsync_dir(gpuenv_ctx_t *ctx, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0 || fsync(fd) != 0)
		r = gpuenv_fail(ctx, -errno, dir, 0, 0, "fsync: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return r;
}

int gpuenv_kb_bundle_install(gpuenv_ctx_t *ctx, const gpuenv_kb_bundle_t *b, const char *bundles,
	char *path_out, size_t size)
{
	unsigned char dg[GPUENV_SHA256_LEN];
	char id[2 * GPUENV_SHA256_LEN + 1], stage[4096];
	struct stat st;
	int r, fd, n;

	if ((r = gpuenv_sha256(b->manifest.ptr, b->manifest.len, dg)))
		return gpuenv_sha256_fail(ctx, r, "the bundle's manifest");
	gpuenv_hex(dg, sizeof(dg), id);
	n = snprintf(path_out, size, "%s/%s-%.12s", bundles, b->m.date, id);
	if (n < 0 || (size_t)n >= size ||
		(size_t)snprintf(stage, sizeof(stage), "%s/.stage-%ld-%.12s", bundles, (long)getpid(),
			id) >= sizeof(stage))
		return gpuenv_fail(ctx, -ENAMETOOLONG, bundles, 0, 0, "path too long");
	if (stat(path_out, &st) == 0) {
		/* there already: sound, or damaged since (then it is replaced) */
		gpuenv_arena_t a;
		gpuenv_kb_bundle_t old;
		gpuenv_error_t saved = ctx->err;
		char aside[4096 + 64];
		gpuenv_arena_init(&a, ctx, 0);
		r = gpuenv_kb_bundle_read_dir(ctx, &a, path_out, GPUENV_KB_ALL, &old);
		gpuenv_arena_free(&a);
		ctx->err = saved;
		if (!r)
			return 1;
		snprintf(aside, sizeof(aside), "%s/.damaged-%ld-%.12s", bundles, (long)getpid(), id);
		if (rename(path_out, aside) != 0)
			return gpuenv_fail(ctx, -errno, path_out, 0, 0, "a damaged copy is in the way "
				"and cannot be moved: %s", strerror(errno));
		remove_tree_flat(aside);
	}
	if ((r = gpuenv_fs_mkdirs(ctx, bundles, 0755)))
		return r;
	remove_tree_flat(stage); /* a stage this pid left, if any */
	if (mkdir(stage, 0755) != 0)
		return gpuenv_fail(ctx, -errno, stage, 0, 0, "cannot create: %s", strerror(errno));
	fd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		r = gpuenv_fail(ctx, -errno, stage, 0, 0, "%s", strerror(errno));
	else {
		r = write_file(ctx, fd, stage, MANIFEST_NAME, b->manifest.ptr, b->manifest.len);
		if (!r)
			r = write_file(ctx, fd, stage, SIG_NAME, b->sig, GPUENV_KB_SIG_LEN);
		for (size_t i = 0; i < b->n && !r; i++)
			r = write_file(ctx, fd, stage, b->src[i].name, b->src[i].data, b->src[i].len);
		if (!r && fsync(fd) != 0)
			r = gpuenv_fail(ctx, -errno, stage, 0, 0, "fsync: %s", strerror(errno));
		close(fd);
	}
	if (!r && rename(stage, path_out) != 0) {
		if (errno == EEXIST || errno == ENOTEMPTY) {
			remove_tree_flat(stage); /* another process installed it meanwhile */
			return 1;
		}
		r = gpuenv_fail(ctx, -errno, path_out, 0, 0, "rename: %s", strerror(errno));
	}
	if (r) {
		remove_tree_flat(stage);
		return r;
	}
	return fsync_dir(ctx, bundles);
}

/* ---- installed bundles ----------------------------------------------------------------------- */

static int read_small(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir, const char *name,
	size_t max, gpuenv_str_t *out)
{
	char path[4200];
	gpuenv_buf_t b;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	gpuenv_buf_init(&b, ctx, max);
	r = gpuenv_fs_read(ctx, path, max, &b);
	if (!r) {
		char *p = gpuenv_arena_strndup(arena, b.len ? b.data : "", b.len);
		if (!p)
			r = gpuenv_oom(ctx, "a knowledge-base file");
		else
			*out = gpuenv_str_n(p, b.len);
	}
	gpuenv_buf_free(&b);
	return r;
}

int gpuenv_kb_bundle_read_dir(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir,
	unsigned mask, gpuenv_kb_bundle_t *out)
{
	gpuenv_str_t sig;
	char where[4200];
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = read_small(ctx, arena, dir, MANIFEST_NAME, GPUENV_KB_MANIFEST_MAX, &out->manifest)) ||
		(r = read_small(ctx, arena, dir, SIG_NAME, GPUENV_KB_SIG_LEN + 1, &sig)))
		return r;
	if (sig.len != GPUENV_KB_SIG_LEN)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, dir, 0, 0, SIG_NAME " has %zu bytes, an "
			"Ed25519 signature %d", sig.len, GPUENV_KB_SIG_LEN);
	memcpy(out->sig, sig.ptr, GPUENV_KB_SIG_LEN);
	snprintf(where, sizeof(where), "%s/" MANIFEST_NAME, dir);
	if ((r = gpuenv_kb_manifest_parse(ctx, where, out->manifest.ptr, out->manifest.len, &out->m)))
		return r;
	out->key = verify_any(out->m.key_id, out->manifest.ptr, out->manifest.len, out->sig);
	if (!out->key)
		return no_signature(ctx, dir, &out->m);
	for (unsigned i = 0; i < out->m.n; i++) {
		const gpuenv_kb_manifest_file_t *f = &out->m.file[i];
		const char *name = gpuenv_kb_file_name(f->id);
		gpuenv_str_t text;
		const char *origin;
		if (!(mask & GPUENV_KB_FILE(f->id)))
			continue;
		if ((r = read_small(ctx, arena, dir, name, GPUENV_KB_MAX_FILE, &text)) ||
			(r = check_bytes(ctx, dir, f, text.ptr, text.len)))
			return r;
		origin = gpuenv_arena_printf(arena, "%s/%s", dir, name).ptr;
		if (!origin)
			return gpuenv_oom(ctx, "a path");
		out->src[out->n++] = (gpuenv_kb_source_t){ name, text.ptr, text.len, origin };
	}
	return 0;
}

static int by_date_desc(const void *a, const void *b)
{
	const gpuenv_kb_installed_t *x = a, *y = b;
	int c = strcmp(y->date, x->date);
	return c ? c : strcmp(y->path, x->path);
}

int gpuenv_kb_bundle_list(gpuenv_ctx_t *ctx, const char *bundles, unsigned mask,
	gpuenv_kb_installed_t *out, size_t max, size_t *n)
{
	DIR *d = opendir(bundles);
	struct dirent *e;
	size_t k = 0;

	*n = 0;
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
			gpuenv_fail(ctx, -errno, bundles, 0, 0, "%s", strerror(errno));
	while ((e = readdir(d)) != NULL) {
		gpuenv_kb_installed_t *it;
		gpuenv_kb_bundle_t b;
		gpuenv_arena_t arena;
		gpuenv_error_t saved = ctx->err;
		if (e->d_name[0] == '.')
			continue;
		(*n)++;
		if (k == max)
			continue;
		it = &out[k++];
		memset(it, 0, sizeof(*it));
		snprintf(it->path, sizeof(it->path), "%s/%s", bundles, e->d_name);
		gpuenv_arena_init(&arena, ctx, 0);
		it->err = gpuenv_kb_bundle_read_dir(ctx, &arena, it->path, mask, &b);
		if (b.m.date[0])
			memcpy(it->date, b.m.date, sizeof(it->date));
		if (it->err) {
			gpuenv_error_format(&ctx->err, it->why, sizeof(it->why));
			ctx->err = saved;
		}
		gpuenv_arena_free(&arena);
	}
	closedir(d);
	qsort(out, k, sizeof(*out), by_date_desc);
	return 0;
}

/* ---- the embedded date ------------------------------------------------------------------------ */

static char embedded_date[11];
static pthread_once_t date_once = PTHREAD_ONCE_INIT;

/* The date of an about.toml text, into out (11 bytes), or "". */
static void about_date(gpuenv_ctx_t *ctx, const char *text, size_t len, char *out)
{
	gpuenv_toml_doc_t doc;
	const gpuenv_toml_value_t *a, *v;

	out[0] = '\0';
	if (gpuenv_toml_doc_init(&doc, ctx, "about.toml"))
		return;
	if (!gpuenv_toml_parse(&doc, text, len) && (a = gpuenv_toml_get(doc.root, "about")) &&
		a->type == GPUENV_TOML_ARRAY && a->u.arr->len && a->u.arr->items[0]->type ==
		GPUENV_TOML_TABLE && (v = gpuenv_toml_get(a->u.arr->items[0]->u.tab, "date")) &&
		v->type == GPUENV_TOML_STRING && is_date(v->u.str))
		memcpy(out, v->u.str.ptr, 10), out[10] = '\0';
	gpuenv_toml_doc_free(&doc);
}

static void date_init(void)
{
	gpuenv_ctx_t ctx;
	gpuenv_kb_source_t s = gpuenv_kb_embedded(GPUENV_KB_ABOUT);

	gpuenv_ctx_init(&ctx);
	if (s.data)
		about_date(&ctx, s.data, s.len, embedded_date);
}

const char *gpuenv_kb_embedded_date(void)
{
	pthread_once(&date_once, date_init);
	return embedded_date;
}

/* ---- making a bundle --------------------------------------------------------------------------- */

static void put16(gpuenv_buf_t *b, unsigned v)
{
	unsigned char x[2] = { (unsigned char)v, (unsigned char)(v >> 8) };
	gpuenv_buf_append(b, x, 2);
}

static void put32(gpuenv_buf_t *b, uint32_t v)
{
	put16(b, v & 0xffff);
	put16(b, v >> 16);
}

struct zent {
	const char *name;
	const void *data;
	size_t len;
	uint32_t crc, off;
};

/* Stored entries, a central directory, the end record (APPNOTE.TXT 4.3). */
static int zip_write(gpuenv_ctx_t *ctx, const struct zent *e, size_t n, gpuenv_buf_t *out)
{
	size_t base = out->len, cd, cd_size, need = 22;
	struct zent z[GPUENV_KB_NFILES + 2];

	if (n > sizeof(z) / sizeof(z[0]))
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, NULL, 0, 0, "too many entries");
	for (size_t i = 0; i < n; i++)
		need += 30 + 46 + 2 * strlen(e[i].name) + e[i].len;
	/* every append below then fits */
	if (gpuenv_buf_reserve(out, need))
		return gpuenv_oom(ctx, "the bundle");
	for (size_t i = 0; i < n; i++) {
		z[i] = e[i];
		z[i].crc = (uint32_t)crc32(0, e[i].data, (uInt)e[i].len);
		z[i].off = (uint32_t)(out->len - base);
		put32(out, 0x04034b50);
		put16(out, 20), put16(out, 0), put16(out, 0); /* version, flags, stored */
		put16(out, 0), put16(out, 0x21);	     /* 1980-01-01 00:00 */
		put32(out, z[i].crc), put32(out, (uint32_t)e[i].len), put32(out, (uint32_t)e[i].len);
		put16(out, (unsigned)strlen(e[i].name)), put16(out, 0);
		gpuenv_buf_puts(out, e[i].name);
		gpuenv_buf_append(out, e[i].data, e[i].len);
	}
	cd = out->len - base;
	for (size_t i = 0; i < n; i++) {
		put32(out, 0x02014b50);
		put16(out, 3 << 8 | 20), put16(out, 20), put16(out, 0), put16(out, 0);
		put16(out, 0), put16(out, 0x21);
		put32(out, z[i].crc), put32(out, (uint32_t)z[i].len), put32(out, (uint32_t)z[i].len);
		put16(out, (unsigned)strlen(z[i].name)), put16(out, 0), put16(out, 0);
		put16(out, 0), put16(out, 0), put32(out, (uint32_t)0100644 << 16);
		put32(out, z[i].off);
		gpuenv_buf_puts(out, z[i].name);
	}
	cd_size = out->len - base - cd;
	put32(out, 0x06054b50);
	put16(out, 0), put16(out, 0), put16(out, (unsigned)n), put16(out, (unsigned)n);
	put32(out, (uint32_t)cd_size), put32(out, (uint32_t)cd);
	put16(out, 0);
	return 0;
}

static int sign(gpuenv_ctx_t *ctx, const char *key_pem, const void *msg, size_t len,
	unsigned char *sig, unsigned char *pub)
{
	FILE *f = fopen(key_pem, "re");
	EVP_PKEY *pk;
	EVP_MD_CTX *md;
	size_t sl = GPUENV_KB_SIG_LEN, pl = GPUENV_KB_KEY_LEN;
	int r = 0;

	if (!f)
		return gpuenv_fail(ctx, -errno, key_pem, 0, 0, "%s", strerror(errno));
	pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!pk || EVP_PKEY_id(pk) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(pk);
		gpuenv_fail(ctx, GPUENV_EFORMAT, key_pem, 0, 0, "not an Ed25519 private key in PEM");
		return gpuenv_hint(ctx, "make one with `openssl genpkey -algorithm ed25519 -out KEY.pem`");
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, pk) != 1 ||
		EVP_DigestSign(md, sig, &sl, msg, len) != 1 || sl != GPUENV_KB_SIG_LEN ||
		EVP_PKEY_get_raw_public_key(pk, pub, &pl) != 1 || pl != GPUENV_KB_KEY_LEN)
		r = gpuenv_fail(ctx, GPUENV_EFORMAT, key_pem, 0, 0, "signing failed");
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	return r;
}

int gpuenv_kb_bundle_make(gpuenv_ctx_t *ctx, const char *dir, const char *key_pem,
	gpuenv_buf_t *out)
{
	gpuenv_buf_t files[GPUENV_KB_NFILES], man;
	struct zent ent[GPUENV_KB_NFILES + 2];
	unsigned char sig[GPUENV_KB_SIG_LEN], pub[GPUENV_KB_KEY_LEN];
	char date[11] = "", kid[17];
	bool have[GPUENV_KB_NFILES] = { false };
	size_t nf = 2;
	int r;

	gpuenv_buf_init(&man, ctx, GPUENV_KB_MANIFEST_MAX);
	for (int i = 0; i < GPUENV_KB_NFILES; i++)
		gpuenv_buf_init(&files[i], ctx, GPUENV_KB_MAX_FILE);
	/* the key first: its id goes into the manifest it then signs */
	r = sign(ctx, key_pem, "", 0, sig, pub);
	for (int i = 0; i < GPUENV_KB_NFILES && !r; i++) {
		char path[4200];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, gpuenv_kb_file_name(i));
		if (stat(path, &st) != 0 && errno == ENOENT)
			continue;
		if ((r = gpuenv_fs_read(ctx, path, GPUENV_KB_MAX_FILE, &files[i])))
			break;
		have[i] = true;
		if (i == GPUENV_KB_ABOUT)
			about_date(ctx, files[i].data, files[i].len, date);
	}
	if (!r && !date[0]) {
		r = gpuenv_fail(ctx, GPUENV_ENOTFOUND, dir, 0, 0, "no about.toml with a date "
			"(YYYY-MM-DD) in the folder");
		gpuenv_hint(ctx, "a bundle is dated by its about.toml: add or fix it");
	}
	if (!r && (r = key_id(pub, kid)))
		gpuenv_sha256_fail(ctx, r, "the key's id");
	if (!r)
		r = gpuenv_buf_printf(&man, MANIFEST_HEAD "\ndate %s\nkey %s\n", date, kid);
	for (int i = 0; i < GPUENV_KB_NFILES && !r; i++) {
		unsigned char dg[GPUENV_SHA256_LEN];
		char hex[65];
		const char *data = files[i].len ? files[i].data : "";
		if (!have[i])
			continue;
		if ((r = gpuenv_sha256(data, files[i].len, dg))) {
			gpuenv_sha256_fail(ctx, r, gpuenv_kb_file_name(i));
			break;
		}
		gpuenv_hex(dg, sizeof(dg), hex);
		r = gpuenv_buf_printf(&man, "file %s %zu %s\n", gpuenv_kb_file_name(i), files[i].len,
			hex);
		ent[nf++] = (struct zent){ gpuenv_kb_file_name(i), data, files[i].len, 0, 0 };
	}
	if (!r)
		r = sign(ctx, key_pem, man.data, man.len, sig, pub);
	if (!r) {
		ent[0] = (struct zent){ MANIFEST_NAME, man.data, man.len, 0, 0 };
		ent[1] = (struct zent){ SIG_NAME, sig, sizeof(sig), 0, 0 };
		r = zip_write(ctx, ent, nf, out);
	}
	for (int i = 0; i < GPUENV_KB_NFILES; i++)
		gpuenv_buf_free(&files[i]);
	gpuenv_buf_free(&man);
	return r;
}
