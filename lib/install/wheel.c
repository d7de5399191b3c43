/* Wheels into trees, trees into stage folders (the wheel spec, PEP 427 and
 * the binary distribution format page; pip 23.2.1's installer for what
 * "as pip does" means).  See gpuenv/install.h.
 *
 *   unpack:  the file mapped read-only, its sha256 checked first; the zip
 *            checked as a whole (lib/formats/zip.c); WHEEL, METADATA,
 *            RECORD and entry_points.txt read from it; every entry written
 *            with openat relative to its folder's descriptor, hashed while
 *            it is written and compared with RECORD; the manifest last.
 *   load:    the manifest parsed; with check, one fstatat per file
 *            relative to its folder's descriptor.
 *   stage:   one pass over the sorted files: folders made once (the paths
 *            are sorted, so each folder is entered once per scheme key),
 *            files linked, scripts rewritten, launchers and RECORD
 *            written from one buffer each. */
#define _GNU_SOURCE /* fallocate */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "gpuenv/crypto.h" /* after OpenSSL's: libcrypto loaded on first use */

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/install.h"
#include "gpuenv/metadata.h"
#include "gpuenv/pep440.h"
#include "gpuenv/wheel.h"
#include "gpuenv/zip.h"

extern char **environ;

static const char *const scheme_names[GPUENV_SCHEME_N] = {
	"purelib", "platlib", "scripts", "data", "headers",
};

const char *gpuenv_scheme_key_name(int key)
{
	return key >= 0 && key < GPUENV_SCHEME_N ? scheme_names[key] : NULL;
}

static int scheme_key(gpuenv_str_t s)
{
	for (int k = 0; k < GPUENV_SCHEME_N; k++)
		if (gpuenv_str_eq_cstr(s, scheme_names[k]))
			return k;
	return -1;
}

#define MANIFEST_TMP GPUENV_TREE_MANIFEST ".tmp"
#define MANIFEST_MAX ((size_t)256 << 20)
#define SCRIPT_MAX ((size_t)64 << 20)

/* ---- folders by descriptor ------------------------------------------------
 * The open folders of the current path, root first.  Sorted paths enter
 * each folder once: the stack keeps the common part and opens (or makes)
 * only what differs from the previous path. */
#define DS_DEPTH 128
/* unpacking in parts: a part holds up to PART_BYTES (a file is counted
 * as its bytes and PART_FILE_COST more) or PART_FILES files; a deflated
 * file over WHOLE_MIN is inflated whole into its own pages */
#define PART_BYTES ((uint64_t)16 << 20)
#define PART_FILE_COST ((uint64_t)16 << 10)
#define PART_FILES 256
#define WHOLE_MIN ((size_t)1 << 20)

typedef struct dirstack {
	gpuenv_ctx_t *ctx;
	const char *root_name; /* for messages */
	int root;
	bool create;
	size_t depth;
	int fd[DS_DEPTH];
	size_t end[DS_DEPTH]; /* cur[0..end[i]) is fd[i]'s path */
	char cur[4097];
} dirstack_t;

static void ds_init(dirstack_t *ds, gpuenv_ctx_t *ctx, int root, bool create, const char *root_name)
{
	ds->ctx = ctx;
	ds->root = root;
	ds->create = create;
	ds->root_name = root_name;
	ds->depth = 0;
}

static void ds_close(dirstack_t *ds)
{
	while (ds->depth)
		close(ds->fd[--ds->depth]);
}

/* The descriptor of folder dir (len bytes, relative, no trailing '/';
 * len 0: the root).  -errno / GPUENV_ETOOBIG recorded. */
static int ds_dir(dirstack_t *ds, const char *dir, size_t len, int *out)
{
	while (ds->depth) {
		size_t e = ds->end[ds->depth - 1];
		if (e <= len && !memcmp(ds->cur, dir, e) && (e == len || dir[e] == '/'))
			break;
		close(ds->fd[--ds->depth]);
	}
	size_t pos = ds->depth ? ds->end[ds->depth - 1] : 0;
	int parent = ds->depth ? ds->fd[ds->depth - 1] : ds->root;
	if (len >= sizeof(ds->cur))
		return gpuenv_fail(ds->ctx, GPUENV_ETOOBIG, ds->root_name, 0, 0,
			"%.*s: a path of more than %zu bytes", (int)len, dir, sizeof(ds->cur) - 1);
	memcpy(ds->cur, dir, len);
	while (pos < len) {
		size_t s = ds->depth ? pos + 1 : 0, e = s;
		char name[256];
		while (e < len && dir[e] != '/')
			e++;
		if (e - s >= sizeof(name) || e == s)
			return gpuenv_fail(ds->ctx, GPUENV_EFORMAT, ds->root_name, 0, 0,
				"%.*s: a bad folder name", (int)len, dir);
		memcpy(name, dir + s, e - s);
		name[e - s] = '\0';
		if (ds->depth == DS_DEPTH)
			return gpuenv_fail(ds->ctx, GPUENV_ETOOBIG, ds->root_name, 0, 0,
				"%.*s: folders nested more than %d deep", (int)len, dir, DS_DEPTH);
		if (ds->create && mkdirat(parent, name, 0755) != 0 && errno != EEXIST)
			return gpuenv_fail(ds->ctx, -errno, ds->root_name, 0, 0,
				"%.*s: cannot create the folder: %s", (int)e, dir, strerror(errno));
		int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return gpuenv_fail(ds->ctx, -errno, ds->root_name, 0, 0,
				"%.*s: cannot open the folder: %s", (int)e, dir, strerror(errno));
		ds->fd[ds->depth] = fd;
		ds->end[ds->depth] = e;
		ds->depth++;
		parent = fd;
		pos = e;
	}
	*out = parent;
	return 0;
}

/* The folder part and the last component of path. */
static size_t dir_len(const char *path, size_t len, const char **base)
{
	size_t i = len;
	while (i && path[i - 1] != '/')
		i--;
	*base = path + i;
	return i ? i - 1 : 0;
}

/* Remove name (relative to dirfd) and everything under it; the first
 * error is kept in *err (with its name in what) and the rest goes on. */
static void rm_at(int dirfd, const char *name, int depth, int *err, char *what, size_t whatsz)
{
	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return;
	if (errno != EISDIR && errno != EPERM) {
		if (!*err) {
			*err = -errno;
			snprintf(what, whatsz, "%s", name);
		}
		return;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (!*err) {
			*err = -errno;
			snprintf(what, whatsz, "%s", name);
		}
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *de;
	while (depth < 4 * DS_DEPTH && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rm_at(fd, de->d_name, depth + 1, err, what, whatsz);
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && !*err) {
		*err = -errno;
		snprintf(what, whatsz, "%s", name);
	}
}

int gpuenv_install_remove(gpuenv_ctx_t *ctx, const char *path)
{
	char what[256] = "";
	int err = 0;

	rm_at(AT_FDCWD, path, 0, &err, what, sizeof(what));
	if (err)
		return gpuenv_fail(ctx, err, path, 0, 0, "cannot remove %s: %s", what, strerror(-err));
	return 0;
}

/* Cleanup after a failure already reported: ctx->err keeps that one. */
static void rm_tree(const char *path)
{
	char what[256];
	int err = 0;

	rm_at(AT_FDCWD, path, 0, &err, what, sizeof(what));
}

/* Make path (it must not exist) and open it: the descriptor, or -errno
 * recorded.  *created says whether there is something to remove. */
static int new_folder(gpuenv_ctx_t *ctx, const char *path, const char *what, bool *created)
{
	int fd;

	if (mkdir(path, 0755) != 0)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "cannot create the %s folder: %s", what,
			strerror(errno));
	*created = true;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "cannot open the %s folder: %s", what,
			strerror(errno));
	return fd;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* ---- the manifest ---------------------------------------------------------
 * Text, one record a line, fields separated by one space, the free-text
 * field last:
 *   gpuenv-tree 1
 *   name NAME / version VERSION / dist-info DIR / data DIR (when any)
 *   purelib true|false / wheel-sha256 HEX / wheel-size BYTES (trees made
 *   before gpuenv recorded it lack it)
 *   script console|gui MODULE ATTR|- NAME      (console first, by name)
 *   file PERM SIZE MTIME_NS INO SHA256 PATH    (by path, byte order)
 *   end NFILES NSCRIPTS
 * Only gpuenv writes it, but it sits in the user's cache: the reader
 * trusts nothing (docs/install.md, "Wheels"). */

static int manifest_format(const gpuenv_wheel_tree_t *t, gpuenv_buf_t *b)
{
	int r = gpuenv_buf_printf(b, "gpuenv-tree 1\nname %s\nversion %s\ndist-info %s\n", t->name,
		t->version, t->dist_info);
	if (!r && t->data_dir)
		r = gpuenv_buf_printf(b, "data %s\n", t->data_dir);
	if (!r)
		r = gpuenv_buf_printf(b, "purelib %s\nwheel-sha256 %s\n",
			t->root_is_purelib ? "true" : "false", t->wheel_sha256);
	if (!r && t->wheel_size)
		r = gpuenv_buf_printf(b, "wheel-size %llu\n", (unsigned long long)t->wheel_size);
	for (size_t i = 0; !r && i < t->nscripts; i++) {
		const gpuenv_tree_script_t *s = &t->scripts[i];
		r = gpuenv_buf_printf(b, "script %s %s %s %s\n", s->gui ? "gui" : "console", s->module,
			s->attr ? s->attr : "-", s->name);
	}
	for (size_t i = 0; !r && i < t->nfiles; i++) {
		const gpuenv_tree_file_t *f = &t->files[i];
		char hex[65];
		gpuenv_hex(f->sha256, 32, hex);
		r = gpuenv_buf_printf(b, "file %o %llu %lld %llu %s %s\n", (unsigned)f->perm,
			(unsigned long long)f->size, (long long)f->mtime_ns,
			(unsigned long long)f->ino, hex, f->path);
	}
	if (!r)
		r = gpuenv_buf_printf(b, "end %zu %zu\n", t->nfiles, t->nscripts);
	return r;
}

static bool is_ident_path(gpuenv_str_t s)
{
	/* a dotted Python identifier (ASCII letters, digits, '_'), as a module
	 * or attribute of an entry point; non-ASCII names pass through */
	bool start = true;
	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c == '.') {
			if (start)
				return false;
			start = true;
			continue;
		}
		if (!(c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (!start && c >= '0' && c <= '9')))
			return false;
		start = false;
	}
	return !start;
}

/* A console script's name is a file name in bin/. */
static bool script_name_ok(gpuenv_str_t s)
{
	if (!s.len || s.len > 255 || gpuenv_str_eq_cstr(s, ".") || gpuenv_str_eq_cstr(s, ".."))
		return false;
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c <= 0x20 || c == 0x7f || c == '/' || c == '\\')
			return false;
	}
	return gpuenv_text_valid(s.ptr, s.len, 0);
}

static int mfail(gpuenv_ctx_t *ctx, const char *file, unsigned line, const char *what)
{
	gpuenv_fail(ctx, GPUENV_EFORMAT, file, line, 0, "a damaged tree manifest: %s", what);
	return gpuenv_hint(ctx, "the tree is incomplete or was edited; it is unpacked again "
				"(remove the folder to force that)");
}

/* Lower-case hex digits only (the manifest writes gpuenv_hex's); a table,
 * not gpuenv_hex_digit: 36.9k files are 2.4M digits, and the call was 40%
 * of loading a tree. */
static const signed char hexval[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16,
};

static bool hex32(gpuenv_str_t s, unsigned char out[32])
{
	const unsigned char *p = (const unsigned char *)s.ptr;
	int bad = 0;

	if (s.len != 64)
		return false;
	for (size_t i = 0; i < 32; i++) {
		int a = hexval[p[2 * i]], b = hexval[p[2 * i + 1]];
		bad |= !a | !b;
		out[i] = (unsigned char)(((unsigned)(a - 1) & 15) << 4 | ((unsigned)(b - 1) & 15));
	}
	return !bad;
}

static gpuenv_str_t next_field(gpuenv_str_t *rest)
{
	gpuenv_str_t head;
	*rest = gpuenv_str_split(*rest, ' ', &head);
	return head;
}

int gpuenv_wheel_tree_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_wheel_tree_t *out)
{
	size_t nfile_lines = 0, nscript_lines = 0, nf = 0, ns = 0;
	gpuenv_tree_file_t *files;
	gpuenv_tree_script_t *scripts;
	char *copy;
	unsigned line = 0;
	bool ended = false, have_purelib = false;

	memset(out, 0, sizeof(*out));
	if (!file)
		file = GPUENV_TREE_MANIFEST;
	if (text.len > MANIFEST_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0,
			"a tree manifest of %zu bytes (the limit is %zu)", text.len, MANIFEST_MAX);
	if (!text.len || text.ptr[text.len - 1] != '\n')
		return mfail(ctx, file, 0, "it does not end with a line break (cut short?)");
	if (memchr(text.ptr, '\0', text.len))
		return mfail(ctx, file, 0, "a NUL byte");
	for (const char *p = text.ptr, *end = text.ptr + text.len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl - p >= 5 && !memcmp(p, "file ", 5))
			nfile_lines++;
		else if (nl - p >= 7 && !memcmp(p, "script ", 7))
			nscript_lines++;
		p = nl + 1;
	}
	copy = gpuenv_arena_strndup(arena, text.ptr, text.len);
	files = gpuenv_arena_calloc(arena, nfile_lines ? nfile_lines : 1, sizeof(*files));
	scripts = gpuenv_arena_calloc(arena, nscript_lines ? nscript_lines : 1, sizeof(*scripts));
	if (!copy || !files || !scripts)
		return gpuenv_oom(ctx, "for a tree manifest");
	for (char *p = copy, *end = copy + text.len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		*nl = '\0';
		gpuenv_str_t l = gpuenv_str_n(p, (size_t)(nl - p)), rest = l;
		p = nl + 1;
		line++;
		if (ended)
			return mfail(ctx, file, line, "lines after 'end'");
		if (line == 1) {
			if (!gpuenv_str_eq_cstr(l, "gpuenv-tree 1"))
				return mfail(ctx, file, line, "not 'gpuenv-tree 1' (another format version?)");
			continue;
		}
		gpuenv_str_t key = next_field(&rest);
		if (!rest.ptr || !rest.len)
			return mfail(ctx, file, line, "a line without a value");
		if (gpuenv_str_eq_cstr(key, "name") || gpuenv_str_eq_cstr(key, "version") ||
			gpuenv_str_eq_cstr(key, "dist-info") || gpuenv_str_eq_cstr(key, "data") ||
			gpuenv_str_eq_cstr(key, "wheel-sha256")) {
			const char **slot = key.ptr[0] == 'n' ? &out->name
					    : key.ptr[0] == 'v' ? &out->version
					    : key.ptr[0] == 'w' ? &out->wheel_sha256
					    : key.len == 4 ? &out->data_dir
							   : &out->dist_info;
			if (*slot)
				return mfail(ctx, file, line, "a key given twice");
			if (!gpuenv_text_valid(rest.ptr, rest.len, GPUENV_ESC_CONTROL))
				return mfail(ctx, file, line, "a value that is not text");
			*slot = rest.ptr;
			if (slot == &out->dist_info || slot == &out->data_dir) {
				if (memchr(rest.ptr, '/', rest.len) || gpuenv_zip_check_name(ctx, file, rest))
					return mfail(ctx, file, line, "a bad folder name");
				if (!gpuenv_str_endswith(rest, slot == &out->dist_info ? ".dist-info" : ".data"))
					return mfail(ctx, file, line, "a folder name without its suffix");
			}
			if (slot == &out->wheel_sha256) {
				unsigned char d[32];
				if (!hex32(rest, d))
					return mfail(ctx, file, line, "a sha256 that is not 64 hex digits");
			}
		} else if (gpuenv_str_eq_cstr(key, "wheel-size")) {
			if (out->wheel_size)
				return mfail(ctx, file, line, "a key given twice");
			if (!gpuenv_str_to_u64(rest, &out->wheel_size) || !out->wheel_size)
				return mfail(ctx, file, line, "a wheel size that is not a number");
		} else if (gpuenv_str_eq_cstr(key, "purelib")) {
			if (have_purelib)
				return mfail(ctx, file, line, "a key given twice");
			have_purelib = true;
			if (gpuenv_str_eq_cstr(rest, "true"))
				out->root_is_purelib = true;
			else if (!gpuenv_str_eq_cstr(rest, "false"))
				return mfail(ctx, file, line, "purelib is not true or false");
		} else if (gpuenv_str_eq_cstr(key, "script")) {
			gpuenv_str_t kind = next_field(&rest), mod = next_field(&rest),
				     attr = next_field(&rest);
			gpuenv_tree_script_t *s = &scripts[ns];
			if (!rest.ptr || ns >= nscript_lines)
				return mfail(ctx, file, line, "a script line with missing fields");
			if (nf)
				return mfail(ctx, file, line, "a script after the files");
			s->gui = gpuenv_str_eq_cstr(kind, "gui");
			if (!s->gui && !gpuenv_str_eq_cstr(kind, "console"))
				return mfail(ctx, file, line, "a script neither console nor gui");
			if (!is_ident_path(mod) || (!gpuenv_str_eq_cstr(attr, "-") && !is_ident_path(attr)) ||
				!script_name_ok(rest))
				return mfail(ctx, file, line, "a bad script name, module or attribute");
			((char *)mod.ptr)[mod.len] = '\0';
			((char *)attr.ptr)[attr.len] = '\0';
			s->module = mod.ptr;
			s->attr = gpuenv_str_eq_cstr(attr, "-") ? NULL : attr.ptr;
			s->name = rest.ptr;
			if (ns) {
				const gpuenv_tree_script_t *prev = &scripts[ns - 1];
				int c = prev->gui != s->gui ? (prev->gui ? 1 : -1)
							    : strcmp(prev->name, s->name);
				if (c >= 0)
					return mfail(ctx, file, line, "scripts out of order or twice");
			}
			ns++;
		} else if (gpuenv_str_eq_cstr(key, "file")) {
			gpuenv_str_t perm = next_field(&rest), size = next_field(&rest),
				     mt = next_field(&rest), ino = next_field(&rest),
				     sha = next_field(&rest);
			gpuenv_tree_file_t *f = &files[nf];
			uint64_t v;
			if (!rest.ptr || nf >= nfile_lines)
				return mfail(ctx, file, line, "a file line with missing fields");
			if (gpuenv_str_eq_cstr(perm, "644"))
				f->perm = 0644;
			else if (gpuenv_str_eq_cstr(perm, "755"))
				f->perm = 0755;
			else
				return mfail(ctx, file, line, "a mode other than 644 or 755");
			if (!gpuenv_str_to_u64(size, &f->size) || !gpuenv_str_to_u64(ino, &f->ino))
				return mfail(ctx, file, line, "a size or inode that is not a number");
			bool neg = mt.len && mt.ptr[0] == '-';
			if (!gpuenv_str_to_u64(neg ? gpuenv_str_n(mt.ptr + 1, mt.len - 1) : mt, &v) ||
				v > (uint64_t)INT64_MAX)
				return mfail(ctx, file, line, "an mtime that is not a number");
			f->mtime_ns = neg ? -(int64_t)v : (int64_t)v;
			if (!hex32(sha, f->sha256))
				return mfail(ctx, file, line, "a sha256 that is not 64 hex digits");
			if (gpuenv_zip_check_name(ctx, file, rest))
				return mfail(ctx, file, line, "an unsafe path");
			if (nf && strcmp(files[nf - 1].path, rest.ptr) >= 0)
				return mfail(ctx, file, line, "files out of order or twice");
			if (gpuenv_str_eq_cstr(rest, GPUENV_TREE_MANIFEST) ||
				gpuenv_str_eq_cstr(rest, MANIFEST_TMP))
				return mfail(ctx, file, line, "the manifest lists itself");
			f->path = rest.ptr;
			nf++;
		} else if (gpuenv_str_eq_cstr(key, "end")) {
			gpuenv_str_t a = next_field(&rest);
			uint64_t x, y;
			if (!rest.ptr || !gpuenv_str_to_u64(a, &x) || !gpuenv_str_to_u64(rest, &y) ||
				x != nf || y != ns)
				return mfail(ctx, file, line, "the counts at 'end' differ from the lines");
			ended = true;
		} else {
			return mfail(ctx, file, line, "an unknown key");
		}
	}
	if (!ended)
		return mfail(ctx, file, line, "no 'end' line (cut short?)");
	if (!out->name || !out->version || !out->dist_info || !out->wheel_sha256 || !have_purelib)
		return mfail(ctx, file, line, "a required key is missing");
	out->files = files;
	out->nfiles = nf;
	out->scripts = scripts;
	out->nscripts = ns;
	return 0;
}

/* ---- unpacking ------------------------------------------------------------ */

typedef struct fsink {
	gpuenv_ctx_t *ctx;
	const gpuenv_zip_t *zip;
	const gpuenv_zip_entry_t *e;
	int fd;
	gpuenv_sha256_t h;
	EVP_MD_CTX *alt; /* RECORD's algorithm when it is not sha256 */
} fsink_t;

static int file_sink(void *ud, const void *p, size_t n)
{
	fsink_t *s = ud;
	int r;

	if (gpuenv_sha256_update(&s->h, p, n) || (s->alt && !EVP_DigestUpdate(s->alt, p, n)))
		return gpuenv_oom(s->ctx, "for a digest");
	if ((r = write_all(s->fd, p, n))) {
		gpuenv_fail(s->ctx, r, s->zip->file, 0, 0, "%.*s: cannot write: %s",
			GPUENV_STR_ARG(s->e->name), strerror(-r));
		/* the unpacked tree is the cache's: pruning it frees space there */
		return gpuenv_fs_full_hint(s->ctx, r, s->fd, NULL, -1,
			"`gpuenv cache prune` frees unused cache entries");
	}
	return 0;
}

typedef struct unpack {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const char *wheel; /* for messages */
	gpuenv_zip_t zip;
	gpuenv_str_t dist_info, data_dir;
	gpuenv_record_t record;
	const gpuenv_record_entry_t **rec_of; /* by entry index */
	gpuenv_wheel_tree_t *out;
} unpack_t;

static int efail(unpack_t *u, int code, gpuenv_str_t entry, const char *fmt, ...)
	GPUENV_PRINTF(4, 5);

static int efail(unpack_t *u, int code, gpuenv_str_t entry, const char *fmt, ...)
{
	char why[400];
	gpuenv_buf_t b;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	gpuenv_buf_init(&b, u->ctx, 1024);
	if (entry.ptr && gpuenv_text_escape(&b, entry.ptr, entry.len > 200 ? 200 : entry.len,
				 GPUENV_ESC_CONTROL) == 0 && b.data)
		gpuenv_fail(u->ctx, code, u->wheel, 0, 0, "%s: %s", b.data, why);
	else
		gpuenv_fail(u->ctx, code, u->wheel, 0, 0, "%s", why);
	gpuenv_buf_free(&b);
	return code;
}

static gpuenv_str_t top_component(gpuenv_str_t name, bool *has_more)
{
	gpuenv_str_t head;
	gpuenv_str_t rest = gpuenv_str_split(name, '/', &head);
	*has_more = rest.ptr != NULL;
	return head;
}

/* The .dist-info and .data folders, as pip's wheel_dist_info_dir finds them. */
static int find_layout(unpack_t *u, const gpuenv_wheel_name_t *wn)
{
	gpuenv_str_t prev = GPUENV_STR_NULL;
	size_t ninfo = 0, ndata = 0;

	for (size_t i = 0; i < u->zip.n; i++) {
		const gpuenv_zip_entry_t *e = &u->zip.entries[u->zip.sorted[i]];
		bool more;
		gpuenv_str_t top = top_component(e->name, &more);
		if (!more && (gpuenv_str_eq_cstr(top, GPUENV_TREE_MANIFEST) ||
				     gpuenv_str_eq_cstr(top, MANIFEST_TMP)))
			return efail(u, GPUENV_EFORMAT, e->name, "a name gpuenv keeps for itself");
		if (prev.ptr && gpuenv_str_eq(prev, top))
			continue;
		prev = top;
		if (gpuenv_str_endswith(top, ".dist-info")) {
			if (ninfo++)
				return efail(u, GPUENV_EFORMAT, top,
					"a second .dist-info folder (after %.*s): pip refuses this too",
					GPUENV_STR_ARG(u->dist_info));
			u->dist_info = top;
		} else if (gpuenv_str_endswith(top, ".data") && (more || e->is_dir)) {
			if (ndata++)
				return efail(u, GPUENV_EUNSUPPORTED, top, "a second .data folder (after %.*s)",
					GPUENV_STR_ARG(u->data_dir));
			u->data_dir = top;
		}
	}
	if (!ninfo)
		return efail(u, GPUENV_EFORMAT, GPUENV_STR_NULL,
			"no .dist-info folder in the wheel (pip: \".dist-info directory not found\")");
	char a[256], b[256];
	gpuenv_str_t head;
	gpuenv_str_split(u->dist_info, '-', &head);
	if (head.len == u->dist_info.len)
		head.len -= strlen(".dist-info");
	if (gpuenv_name_normalize_to(head, a, sizeof(a)) == SIZE_MAX ||
		gpuenv_name_normalize_to(wn->name, b, sizeof(b)) == SIZE_MAX || strcmp(a, b))
		return efail(u, GPUENV_EFORMAT, u->dist_info,
			"the .dist-info folder does not name the wheel's project '%.*s'",
			GPUENV_STR_ARG(wn->normalized));
	return 0;
}

static int read_member(unpack_t *u, const char *leaf, bool required, size_t max, gpuenv_str_t *out,
	const char **label)
{
	gpuenv_str_t path = gpuenv_arena_printf(u->arena, "%.*s/%s", GPUENV_STR_ARG(u->dist_info), leaf);
	const gpuenv_zip_entry_t *e;

	*out = GPUENV_STR_NULL;
	if (!path.ptr)
		return gpuenv_oom(u->ctx, "reading the wheel's dist-info");
	*label = gpuenv_arena_printf(u->arena, "%s: %s", u->wheel, path.ptr).ptr;
	if (!*label)
		return gpuenv_oom(u->ctx, "reading the wheel's dist-info");
	e = gpuenv_zip_find(&u->zip, path);
	if (!e || e->is_dir) {
		if (!required)
			return 0;
		return efail(u, GPUENV_EFORMAT, path, "missing (every wheel has one)");
	}
	return gpuenv_zip_read(u->ctx, u->arena, &u->zip, e, max, out);
}

static bool is_unhashed(gpuenv_str_t path, gpuenv_str_t dist_info)
{
	gpuenv_str_t head, rest = gpuenv_str_split(path, '/', &head);
	if (rest.ptr && gpuenv_str_eq(head, dist_info) &&
		(gpuenv_str_eq_cstr(rest, "RECORD") || gpuenv_str_eq_cstr(rest, "RECORD.jws") ||
			gpuenv_str_eq_cstr(rest, "RECORD.p7s")))
		return true;
	return gpuenv_str_endswith(path, ".pyc");
}

static int script_cmp(const void *a, const void *b)
{
	const gpuenv_tree_script_t *x = a, *y = b;
	if (x->gui != y->gui)
		return x->gui ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int read_dist_info(unpack_t *u, const gpuenv_wheel_name_t *wn)
{
	gpuenv_ctx_t *ctx = u->ctx;
	gpuenv_str_t text;
	const char *label;
	gpuenv_wheelfile_t wf;
	gpuenv_metadata_t md;
	gpuenv_entry_points_t eps;
	int r;

	if ((r = read_member(u, "WHEEL", true, GPUENV_METADATA_MAX, &text, &label)))
		return r;
	if ((r = gpuenv_wheelfile_parse(ctx, u->arena, label, text, &wf)))
		return r;
	u->out->root_is_purelib = wf.has_root_is_purelib && wf.root_is_purelib;
	if ((r = read_member(u, "METADATA", true, GPUENV_METADATA_MAX, &text, &label)))
		return r;
	if ((r = gpuenv_metadata_parse(ctx, u->arena, label, text, 0, &md)))
		return r;
	char a[256], b[256];
	if (gpuenv_name_normalize_to(md.name, a, sizeof(a)) == SIZE_MAX ||
		gpuenv_name_normalize_to(wn->name, b, sizeof(b)) == SIZE_MAX || strcmp(a, b)) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, label, 0, 0,
			"Name '%.*s' is not the wheel file name's '%.*s'", GPUENV_STR_ARG(md.name),
			GPUENV_STR_ARG(wn->name));
		return gpuenv_hint(ctx, "the file was renamed or built wrong (pip refuses it too: "
					"\"metadata has inconsistent name\")");
	}
	if (gpuenv_version_cmp(&md.version, &wn->version) != 0) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, label, 0, 0,
			"Version '%.*s' is not the wheel file name's '%.*s'",
			GPUENV_STR_ARG(md.version_text), GPUENV_STR_ARG(wn->version_text));
		return gpuenv_hint(ctx, "the file was renamed or built wrong (pip refuses it too: "
					"\"metadata has inconsistent version\")");
	}
	u->out->name = gpuenv_arena_strndup(u->arena, md.name.ptr, md.name.len);
	u->out->version = gpuenv_arena_strndup(u->arena, md.version_text.ptr, md.version_text.len);
	if (!u->out->name || !u->out->version)
		return gpuenv_oom(ctx, "reading the wheel's dist-info");

	if ((r = read_member(u, "RECORD", true, GPUENV_RECORD_MAX, &text, &label)))
		return r;
	if ((r = gpuenv_record_parse(ctx, u->arena, label, text, &u->record)) ||
		(r = gpuenv_record_validate(ctx, label, &u->record)))
		return r;

	if ((r = read_member(u, "entry_points.txt", false, GPUENV_ENTRY_POINTS_MAX, &text, &label)))
		return r;
	if (!text.ptr)
		return 0;
	if ((r = gpuenv_entry_points_parse(ctx, u->arena, label, text, &eps)))
		return r;
	size_t n = 0;
	gpuenv_tree_script_t *s = gpuenv_arena_calloc(u->arena, eps.n ? eps.n : 1, sizeof(*s));
	if (!s)
		return gpuenv_oom(ctx, "reading the wheel's dist-info");
	for (size_t i = 0; i < eps.n; i++) {
		const gpuenv_entry_point_t *ep = &eps.items[i];
		bool gui = gpuenv_str_eq_cstr(ep->group, "gui_scripts");
		if (!gui && !gpuenv_str_eq_cstr(ep->group, "console_scripts"))
			continue;
		if (!script_name_ok(ep->name))
			return gpuenv_fail(ctx, GPUENV_EFORMAT, label, ep->line, 0,
				"'%.*s' cannot be a script's file name", GPUENV_STR_ARG(ep->name));
		if (!ep->valid || !is_ident_path(ep->module) || !ep->attr.len ||
			!is_ident_path(ep->attr)) {
			gpuenv_fail(ctx, GPUENV_EFORMAT, label, ep->line, 0,
				"script '%.*s' = '%.*s' is not module:function", GPUENV_STR_ARG(ep->name),
				GPUENV_STR_ARG(ep->value));
			return gpuenv_hint(ctx, "pip refuses it too (\"Invalid script entry point: "
						"A callable suffix is required\")");
		}
		for (size_t k = 0; k < n; k++)
			if (s[k].gui == gui && gpuenv_str_eq_cstr(ep->name, s[k].name)) {
				/* importlib keeps the last one; so does pip */
				s[k] = s[--n];
				break;
			}
		s[n].name = gpuenv_arena_strndup(u->arena, ep->name.ptr, ep->name.len);
		s[n].module = gpuenv_arena_strndup(u->arena, ep->module.ptr, ep->module.len);
		s[n].attr = gpuenv_arena_strndup(u->arena, ep->attr.ptr, ep->attr.len);
		s[n].gui = gui;
		if (!s[n].name || !s[n].module || !s[n].attr)
			return gpuenv_oom(ctx, "reading the wheel's dist-info");
		n++;
	}
	qsort(s, n, sizeof(*s), script_cmp);
	u->out->scripts = s;
	u->out->nscripts = n;
	return 0;
}

/* Every file in RECORD with a size that agrees, every hashed RECORD row in
 * the zip, and the .data folder laid out by scheme key: all before
 * anything is written. */
static int check_record(unpack_t *u)
{
	u->rec_of = gpuenv_arena_calloc(u->arena, u->zip.n ? u->zip.n : 1, sizeof(*u->rec_of));
	if (!u->rec_of)
		return gpuenv_oom(u->ctx, "reading the wheel's dist-info");
	for (size_t i = 0; i < u->record.n; i++) {
		const gpuenv_record_entry_t *re = &u->record.entries[i];
		const gpuenv_zip_entry_t *e = gpuenv_zip_find(&u->zip, re->path);
		if (!e || e->is_dir) {
			/* nothing is installed from it, so nothing is at risk: pip
			 * keeps the row, gpuenv lists only what it installs */
			if (re->digest)
				gpuenv_log(u->ctx, GPUENV_LOG_WARN,
					"%s: %.*s: listed in RECORD (line %u) but not in the wheel; ignored",
					u->wheel, GPUENV_STR_ARG(re->path), re->line);
			continue;
		}
		u->rec_of[e - u->zip.entries] = re;
		if (re->has_size && re->size != e->usize)
			return efail(u, GPUENV_EFORMAT, re->path,
				"%llu bytes, but RECORD (line %u) says %llu", (unsigned long long)e->usize,
				re->line, (unsigned long long)re->size);
	}
	for (size_t i = 0; i < u->zip.n; i++) {
		const gpuenv_zip_entry_t *e = &u->zip.entries[i];
		if (e->is_dir)
			continue;
		if (!u->rec_of[i] && !is_unhashed(e->name, u->dist_info))
			return efail(u, GPUENV_EFORMAT, e->name,
				"not listed in the wheel's RECORD (a file RECORD does not vouch for)");
		if (u->data_dir.ptr && e->name.len > u->data_dir.len &&
			!memcmp(e->name.ptr, u->data_dir.ptr, u->data_dir.len) &&
			e->name.ptr[u->data_dir.len] == '/') {
			gpuenv_str_t rest = gpuenv_str_n(e->name.ptr + u->data_dir.len + 1,
				e->name.len - u->data_dir.len - 1), key;
			gpuenv_str_t sub = gpuenv_str_split(rest, '/', &key);
			if (!sub.ptr)
				return efail(u, GPUENV_EFORMAT, e->name,
					"a file directly in the .data folder (it belongs in "
					"<scheme key>/<path>)");
			if (scheme_key(key) < 0)
				return efail(u, GPUENV_EFORMAT, e->name,
					"unknown scheme key '%.*s' (valid: data, headers, platlib, "
					"purelib, scripts)", GPUENV_STR_ARG(key));
		}
	}
	return 0;
}

static int digest_cmp(unpack_t *u, const gpuenv_zip_entry_t *e, const gpuenv_record_entry_t *re,
	const unsigned char *sha256, EVP_MD_CTX *alt)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned dl = 0;
	const unsigned char *have = sha256;
	size_t hl = 32;

	if (!re || !re->digest)
		return 0;
	if (alt) {
		if (!EVP_DigestFinal_ex(alt, d, &dl))
			return gpuenv_oom(u->ctx, "for a digest");
		have = d;
		hl = dl;
	}
	if (hl != re->digest_len || memcmp(have, re->digest, hl) != 0)
		return efail(u, GPUENV_EFORMAT, e->name,
			"its %.*s differs from the wheel's RECORD (line %u): the file was altered "
			"after the wheel was built", GPUENV_STR_ARG(re->hash_algo), re->line);
	return 0;
}

/* What a part reuses from one file to the next: libdeflate's state and a
 * buffer for the small files (inflated whole, then written). */
typedef struct scratch {
	void *inflater; /* NULL: not made yet, or out of memory (zlib streams) */
	unsigned char *buf;
	bool tried;
} scratch_t;

static void scratch_free(gpuenv_ctx_t *ctx, scratch_t *sc)
{
	gpuenv_zip_inflater_free(sc->inflater);
	gpuenv_free(ctx, sc->buf);
}

/* The write failure of an entry, with the fix when the disk is full. */
static int write_fail(unpack_t *u, int fd, const gpuenv_zip_entry_t *e, int r)
{
	gpuenv_fail(u->ctx, r, u->wheel, 0, 0, "%.*s: cannot write: %s", GPUENV_STR_ARG(e->name),
		strerror(-r));
	/* the unpacked tree is the cache's: pruning it frees space there */
	return gpuenv_fs_full_hint(u->ctx, r, fd, NULL, -1, "`gpuenv cache prune` frees unused cache entries");
}

/* A large deflated entry inflated whole into the file's own pages: the
 * file's blocks reserved first (a full disk is an error here, not a
 * SIGBUS at a page of the mapping), mapped, inflated into, hashed there.
 * 0, 1: not possible here (a file system without fallocate, no mapping):
 * the caller streams it, or the failure (recorded). */
static int write_whole(unpack_t *u, int fd, const gpuenv_zip_entry_t *e, void *inflater, fsink_t *s)
{
	size_t n = (size_t)e->usize;
	void *map;
	int r;

	if (fallocate(fd, 0, 0, (off_t)n) != 0) {
		if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)
			return 1;
		return write_fail(u, fd, e, -errno);
	}
	map = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return ftruncate(fd, 0) == 0 ? 1 : write_fail(u, fd, e, -errno);
	if (!(r = gpuenv_zip_inflate_to(u->ctx, &u->zip, e, inflater, map)) &&
		(gpuenv_sha256_update(&s->h, map, n) || (s->alt && !EVP_DigestUpdate(s->alt, map, n))))
		r = gpuenv_oom(u->ctx, "for a digest");
	munmap(map, n);
	return r;
}

/* An entry's bytes into fd and the digests: inflated whole by libdeflate
 * (small files through the scratch buffer, large ones into the file's
 * pages), else streamed through zlib. */
static int extract_entry(unpack_t *u, int fd, const gpuenv_zip_entry_t *e, scratch_t *sc, fsink_t *s)
{
	int r;

	if (e->method == 8 && !sc->tried) {
		sc->tried = true;
		sc->inflater = gpuenv_zip_inflater_new();
		sc->buf = gpuenv_alloc(u->ctx, WHOLE_MIN);
	}
	if (e->method == 8 && sc->inflater && e->usize > WHOLE_MIN && (r = write_whole(u, fd, e, sc->inflater, s)) != 1)
		return r;
	if (e->method == 8 && sc->inflater && sc->buf && e->usize <= WHOLE_MIN) {
		if ((r = gpuenv_zip_inflate_to(u->ctx, &u->zip, e, sc->inflater, sc->buf)))
			return r;
		return file_sink(s, sc->buf, (size_t)e->usize);
	}
	return gpuenv_zip_extract(u->ctx, &u->zip, e, file_sink, s);
}

static int write_entry(unpack_t *u, int dirfd, const char *base, const gpuenv_zip_entry_t *e,
	gpuenv_tree_file_t *f, scratch_t *sc)
{
	const gpuenv_record_entry_t *re = u->rec_of[e - u->zip.entries];
	fsink_t s = { .ctx = u->ctx, .zip = &u->zip, .e = e, .fd = -1 };
	struct stat st;
	int r;

	f->perm = (e->mode & 0111) ? 0755 : 0644;
	s.fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->perm);
	if (s.fd < 0)
		return efail(u, -errno, e->name, "cannot create: %s", strerror(errno));
	if ((r = gpuenv_sha256_init(&s.h))) {
		close(s.fd);
		return gpuenv_oom(u->ctx, "for a digest");
	}
	if (re && re->digest && !gpuenv_str_eq_cstr(re->hash_algo, "sha256")) {
		char algo[16];
		snprintf(algo, sizeof(algo), "%.*s", GPUENV_STR_ARG(re->hash_algo));
		const EVP_MD *md = EVP_get_digestbyname(algo);
		s.alt = EVP_MD_CTX_new();
		if (!md || !s.alt || !EVP_DigestInit_ex(s.alt, md, NULL)) {
			r = gpuenv_oom(u->ctx, "for a digest");
			goto done;
		}
	}
	if ((r = extract_entry(u, s.fd, e, sc, &s)))
		goto done;
	if ((r = gpuenv_sha256_final(&s.h, f->sha256))) {
		r = gpuenv_oom(u->ctx, "for a digest");
		goto done_final;
	}
	if ((r = digest_cmp(u, e, re, f->sha256, s.alt)))
		goto done_final;
	if (fstat(s.fd, &st) != 0) {
		r = efail(u, -errno, e->name, "cannot stat: %s", strerror(errno));
		goto done_final;
	}
	f->size = (uint64_t)st.st_size;
	f->mtime_ns = mtime_ns(&st);
	f->ino = (uint64_t)st.st_ino;
	goto done_final;
done:
	gpuenv_sha256_drop(&s.h);
done_final:
	EVP_MD_CTX_free(s.alt);
	if (close(s.fd) != 0 && !r)
		r = efail(u, -errno, e->name, "cannot write: %s", strerror(errno));
	return r;
}

static int write_manifest(unpack_t *u, int treefd)
{
	gpuenv_buf_t b;
	int fd, r;

	gpuenv_buf_init(&b, u->ctx, MANIFEST_MAX);
	if ((r = manifest_format(u->out, &b))) {
		gpuenv_buf_free(&b);
		return r == -ENOMEM ? gpuenv_oom(u->ctx, "for a tree manifest")
				    : gpuenv_fail(u->ctx, r, u->wheel, 0, 0, "the tree manifest is too big");
	}
	fd = openat(treefd, MANIFEST_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		gpuenv_buf_free(&b);
		return gpuenv_fail(u->ctx, -errno, u->wheel, 0, 0, "cannot write the tree manifest: %s",
			strerror(errno));
	}
	r = write_all(fd, b.data, b.len);
	if (close(fd) != 0 && !r)
		r = -errno;
	gpuenv_buf_free(&b);
	if (!r && renameat(treefd, MANIFEST_TMP, treefd, GPUENV_TREE_MANIFEST) != 0)
		r = -errno;
	if (r)
		return gpuenv_fail(u->ctx, r, u->wheel, 0, 0, "cannot write the tree manifest: %s",
			strerror(-r));
	return 0;
}

static int map_file(gpuenv_ctx_t *ctx, const char *path, uint64_t max, void **map, uint64_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "cannot open the wheel: %s", strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = errno;
		close(fd);
		return gpuenv_fail(ctx, S_ISREG(st.st_mode) ? -e : GPUENV_EFORMAT, path, 0, 0,
			"not a regular file");
	}
	if (st.st_size == 0) {
		close(fd);
		return gpuenv_fail(ctx, GPUENV_EFORMAT, path, 0, 0, "an empty file, not a wheel");
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, path, 0, 0,
			"a wheel of %llu bytes (the limit is %llu)", (unsigned long long)st.st_size,
			(unsigned long long)max);
	}
	*map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (*map == MAP_FAILED)
		return gpuenv_fail(ctx, -errno, path, 0, 0, "cannot map the wheel: %s", strerror(errno));
	*size = (uint64_t)st.st_size;
	return 0;
}

/* ---- a wheel unpacked in parts ------------------------------------------
 * begin (one thread): the wheel mapped, the zip, WHEEL, METADATA and RECORD
 * checked, the tree folder made, the files cut into parts; then the parts
 * on any threads (part 0 the wheel's sha256, the others runs of files in
 * name order, each with its own folder descriptors); end: the manifest
 * when every part succeeded and the hash is the one expected, else the
 * tree removed.  A large file is a part of its own, so a caller that runs
 * the costliest parts first starts it first. */
struct gpuenv_unpack_job {
	unpack_t u;
	gpuenv_ctx_t *ctx;	/* the beginner's: memory of the job itself */
	void *map;
	uint64_t size;
	const char *tree_dir;
	int treefd;
	bool created;
	const char *expect;	/* NULL: the hash is computed only */
	char *hex;		/* the hash found, in the arena */
	const gpuenv_zip_entry_t **ent; /* by file */
	gpuenv_tree_file_t *files;	/* = out->files, written by the parts */
	size_t nparts;		/* parts of files; part 0, the hash, is one more */
	size_t *part_end;	/* files [part_end[k-1], part_end[k]) */
	uint64_t *part_cost;
	pthread_mutex_t mu;
	bool failed, hash_bad;
	int err;
	gpuenv_error_t error;
};

/* The first failure of a job (ctx holds its story); the rest of its parts
 * return at once. */
static void job_fail(gpuenv_unpack_job_t *j, gpuenv_ctx_t *ctx, int r, bool hash)
{
	pthread_mutex_lock(&j->mu);
	if (!j->err || (hash && !j->hash_bad)) {
		j->err = r;
		j->error = ctx->err;
		j->hash_bad = hash;
	}
	__atomic_store_n(&j->failed, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&j->mu);
}

/* The files cut into parts: a file over PART_BYTES is a part of its own,
 * the others are gathered up to PART_BYTES or PART_FILES. */
static int cut_parts(gpuenv_unpack_job_t *j)
{
	unpack_t *u = &j->u;
	size_t nf = 0, np = 0, start = 0; /* start: the open part's first file */
	uint64_t acc = 0;
	gpuenv_tree_file_t *files = gpuenv_arena_calloc(u->arena, u->zip.n ? u->zip.n : 1, sizeof(*files));

	j->ent = gpuenv_arena_calloc(u->arena, u->zip.n ? u->zip.n : 1, sizeof(*j->ent));
	j->part_end = gpuenv_arena_calloc(u->arena, u->zip.n + 1, sizeof(*j->part_end));
	j->part_cost = gpuenv_arena_calloc(u->arena, u->zip.n + 1, sizeof(*j->part_cost));
	if (!files || !j->ent || !j->part_end || !j->part_cost)
		return gpuenv_oom(u->ctx, "unpacking a wheel");
	for (size_t i = 0; i <= u->zip.n; i++) {
		const gpuenv_zip_entry_t *e = i < u->zip.n ? &u->zip.entries[u->zip.sorted[i]] : NULL;
		uint64_t cost = e ? e->usize + PART_FILE_COST : 0;
		if (e && e->is_dir)
			continue; /* folders come with their files; empty ones are not installed */
		/* close the open part: at the end, before a large file, when full */
		if (nf > start && (!e || cost >= PART_BYTES || acc + cost > PART_BYTES || nf - start >= PART_FILES)) {
			j->part_end[np] = nf;
			j->part_cost[np++] = acc;
			start = nf;
			acc = 0;
		}
		if (!e)
			break;
		if (!(files[nf].path = gpuenv_arena_strndup(u->arena, e->name.ptr, e->name.len)))
			return gpuenv_oom(u->ctx, "unpacking a wheel");
		j->ent[nf++] = e;
		acc += cost;
	}
	j->nparts = np;
	j->files = files;
	u->out->files = files;
	u->out->nfiles = nf;
	return 0;
}

int gpuenv_wheel_unpack_begin(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *wheel_path,
	const char *file_name, const char *expect_sha256, const char *tree_dir,
	const gpuenv_unpack_limits_t *lim, gpuenv_wheel_tree_t *out, gpuenv_unpack_job_t **jobp)
{
	gpuenv_unpack_job_t *j;
	gpuenv_wheel_name_t wn;
	gpuenv_zip_limits_t zl = { 0 };
	int r;

	*jobp = NULL;
	memset(out, 0, sizeof(*out));
	if (lim) {
		zl.max_entries = lim->max_files;
		zl.max_total = lim->max_total;
		zl.max_entry = lim->max_file;
		zl.max_ratio = lim->max_ratio;
	}
	if (!file_name) {
		file_name = strrchr(wheel_path, '/');
		file_name = file_name ? file_name + 1 : wheel_path;
	}
	if ((r = gpuenv_wheel_name_parse(ctx, arena, gpuenv_str(file_name), 0, &wn)))
		return r;
	if (!(j = gpuenv_calloc(ctx, 1, sizeof(*j))))
		return gpuenv_oom(ctx, "unpacking a wheel");
	j->u = (unpack_t){ .ctx = ctx, .arena = arena, .wheel = wheel_path, .out = out };
	j->ctx = ctx;
	j->treefd = -1;
	j->tree_dir = tree_dir;
	j->expect = expect_sha256;
	pthread_mutex_init(&j->mu, NULL);
	if (!(j->hex = gpuenv_arena_alloc(arena, 65))) {
		r = gpuenv_oom(ctx, "unpacking a wheel");
		goto fail;
	}
	if ((r = map_file(ctx, wheel_path, (uint64_t)64 << 30, &j->map, &j->size)))
		goto fail;
	madvise(j->map, (size_t)j->size, MADV_WILLNEED);
	if ((r = gpuenv_zip_open(ctx, arena, wheel_path, j->map, j->size, &zl, &j->u.zip)) ||
		(r = find_layout(&j->u, &wn)) || (r = read_dist_info(&j->u, &wn)) || (r = check_record(&j->u)))
		goto fail;
	out->dist_info = gpuenv_arena_strndup(arena, j->u.dist_info.ptr, j->u.dist_info.len);
	out->data_dir = j->u.data_dir.ptr ? gpuenv_arena_strndup(arena, j->u.data_dir.ptr, j->u.data_dir.len)
					  : NULL;
	if (!out->dist_info || (j->u.data_dir.ptr && !out->data_dir)) {
		r = gpuenv_oom(ctx, "unpacking a wheel");
		goto fail;
	}
	if ((r = cut_parts(j)))
		goto fail;
	if ((j->treefd = new_folder(ctx, tree_dir, "tree", &j->created)) < 0) {
		r = j->treefd;
		goto fail;
	}
	*jobp = j;
	return 0;
fail:
	/* a wheel that is not the one expected says so first, whatever else is wrong */
	if (j->map && expect_sha256) {
		gpuenv_ctx_t c2 = *ctx;
		gpuenv_error_clear(&c2);
		gpuenv_wheel_unpack_part(j, &c2, 0);
		if (j->hash_bad) {
			ctx->err = j->error;
			r = j->err;
		}
	}
	j->failed = true;
	gpuenv_wheel_unpack_end(j, ctx);
	memset(out, 0, sizeof(*out));
	return r;
}

size_t gpuenv_wheel_unpack_parts(const gpuenv_unpack_job_t *j)
{
	return j->nparts + 1;
}

uint64_t gpuenv_wheel_unpack_part_cost(const gpuenv_unpack_job_t *j, size_t k)
{
	/* hashing runs at about three times inflating's pace */
	return k ? j->part_cost[k - 1] : j->size / 3;
}

static void hash_part(gpuenv_unpack_job_t *j, gpuenv_ctx_t *ctx)
{
	unsigned char digest[32];
	int r;

	if ((r = gpuenv_sha256(j->map, (size_t)j->size, digest))) {
		job_fail(j, ctx, gpuenv_sha256_fail(ctx, r, j->u.wheel), false);
		return;
	}
	gpuenv_hex(digest, 32, j->hex);
	if (j->expect && strcasecmp(j->hex, j->expect) != 0) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, j->u.wheel, 0, 0,
			"hash mismatch: expected sha256 %s, got %s (nothing was kept)", j->expect, j->hex);
		gpuenv_hint(ctx, "the file is damaged or another build than the one locked: fetch "
				 "it again, or lock again if the index changed it");
		job_fail(j, ctx, GPUENV_EFORMAT, true);
	}
}

void gpuenv_wheel_unpack_part(gpuenv_unpack_job_t *j, gpuenv_ctx_t *ctx, size_t k)
{
	if (k == 0) {
		hash_part(j, ctx);
		return;
	}
	if (__atomic_load_n(&j->failed, __ATOMIC_ACQUIRE))
		return;
	unpack_t u = j->u; /* this thread's context in messages */
	dirstack_t ds;
	scratch_t sc = { 0 };
	size_t from = k > 1 ? j->part_end[k - 2] : 0, to = j->part_end[k - 1];
	int r = 0;

	u.ctx = ctx;
	ds_init(&ds, ctx, j->treefd, true, j->tree_dir);
	for (size_t i = from; i < to && !r; i++) {
		gpuenv_tree_file_t *f = &j->files[i];
		const char *base;
		int dirfd;
		size_t dl = dir_len(f->path, j->ent[i]->name.len, &base);
		if ((r = ds_dir(&ds, f->path, dl, &dirfd)))
			break;
		r = write_entry(&u, dirfd, base, j->ent[i], f, &sc);
		if (!r && __atomic_load_n(&j->failed, __ATOMIC_ACQUIRE))
			break;
	}
	ds_close(&ds);
	scratch_free(ctx, &sc);
	if (r)
		job_fail(j, ctx, r, false);
}

bool gpuenv_wheel_unpack_hash_bad(const gpuenv_unpack_job_t *j)
{
	return j->hash_bad;
}

int gpuenv_wheel_unpack_end(gpuenv_unpack_job_t *j, gpuenv_ctx_t *ctx)
{
	gpuenv_ctx_t *own = j->ctx;
	int r = j->err;

	if (r)
		ctx->err = j->error;
	else if (j->failed)
		r = GPUENV_EUSAGE; /* begin's own failure: its story is already in ctx */
	if (!r) {
		j->u.ctx = ctx;
		j->u.out->wheel_sha256 = j->hex;
		j->u.out->wheel_size = j->size;
		r = write_manifest(&j->u, j->treefd);
	}
	if (j->treefd >= 0)
		close(j->treefd);
	if (r && j->created)
		rm_tree(j->tree_dir);
	if (j->map)
		munmap(j->map, (size_t)j->size);
	pthread_mutex_destroy(&j->mu);
	if (r)
		memset(j->u.out, 0, sizeof(*j->u.out));
	gpuenv_free(own, j);
	return r;
}

int gpuenv_wheel_unpack(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *wheel_path,
	const char *file_name, const char *expect_sha256, const char *tree_dir,
	const gpuenv_unpack_limits_t *lim, gpuenv_wheel_tree_t *out)
{
	gpuenv_unpack_job_t *j;
	int r;

	if ((r = gpuenv_wheel_unpack_begin(ctx, arena, wheel_path, file_name, expect_sha256, tree_dir, lim,
		     out, &j)))
		return r;
	/* the hash first: on one thread, nothing is written for a wheel that
	 * is not the one expected */
	for (size_t k = 0; k < gpuenv_wheel_unpack_parts(j); k++)
		gpuenv_wheel_unpack_part(j, ctx, k);
	return gpuenv_wheel_unpack_end(j, ctx);
}

/* ---- loading ---------------------------------------------------------------- */

static int tree_check(gpuenv_ctx_t *ctx, const char *tree_dir, int treefd,
	const gpuenv_wheel_tree_t *t)
{
	dirstack_t ds;
	int r = 0;

	ds_init(&ds, ctx, treefd, false, tree_dir);
	for (size_t i = 0; i < t->nfiles && !r; i++) {
		const gpuenv_tree_file_t *f = &t->files[i];
		const char *base;
		size_t dl = dir_len(f->path, strlen(f->path), &base);
		struct stat st;
		int dirfd;
		const char *why = NULL;
		if (ds_dir(&ds, f->path, dl, &dirfd))
			why = "its folder is missing";
		else if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
			why = "it is missing";
		else if (!S_ISREG(st.st_mode))
			why = "it is no longer a regular file";
		else if ((uint64_t)st.st_size != f->size)
			why = "its size changed";
		else if ((uint64_t)st.st_ino != f->ino)
			why = "it was replaced (another inode)";
		else if (mtime_ns(&st) != f->mtime_ns)
			why = "it was modified (its mtime changed)";
		if (why) {
			gpuenv_error_clear(ctx);
			r = gpuenv_fail(ctx, GPUENV_EFORMAT, tree_dir, 0, 0, "damaged: %s changed: %s",
				f->path, why);
			gpuenv_hint(ctx, "a file linked into a venv was edited, or the cache was; the "
					 "tree is unpacked again from its wheel");
		}
	}
	ds_close(&ds);
	return r;
}

int gpuenv_wheel_tree_load(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *tree_dir,
	bool check, gpuenv_wheel_tree_t *out)
{
	gpuenv_buf_t b;
	struct stat st;
	int treefd, fd, r;
	const char *label;

	memset(out, 0, sizeof(*out));
	treefd = open(tree_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (treefd < 0) {
		if (errno == ENOENT)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, tree_dir, 0, 0, "no such tree");
		return gpuenv_fail(ctx, -errno, tree_dir, 0, 0, "cannot open the tree: %s",
			strerror(errno));
	}
	fd = gpuenv_fs_open_regular(NULL, treefd, GPUENV_TREE_MANIFEST, &st);
	if (fd < 0) {
		close(treefd);
		if (fd == -ENOENT)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, tree_dir, 0, 0,
				"an incomplete tree (no %s)", GPUENV_TREE_MANIFEST);
		return gpuenv_fail(ctx, fd < -4096 ? fd : fd, tree_dir, 0, 0,
			"cannot read the tree manifest: %s", gpuenv_strerror(fd));
	}
	gpuenv_buf_init(&b, ctx, MANIFEST_MAX);
	label = gpuenv_arena_printf(arena, "%s/%s", tree_dir, GPUENV_TREE_MANIFEST).ptr;
	if (!label) {
		close(fd);
		close(treefd);
		return gpuenv_oom(ctx, "reading a tree's manifest");
	}
	r = gpuenv_fs_read_fd(ctx, fd, label, MANIFEST_MAX, &b);
	close(fd);
	if (!r)
		r = gpuenv_wheel_tree_parse(ctx, arena, label, gpuenv_str_n(b.data ? b.data : "", b.len),
			out);
	gpuenv_buf_free(&b);
	if (!r && check)
		r = tree_check(ctx, tree_dir, treefd, out);
	close(treefd);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

/* ---- staging ---------------------------------------------------------------- */

typedef struct row {
	const char *path; /* relative to the site folder */
	const unsigned char *sha256; /* NULL: no hash and size (RECORD, .pyc) */
	uint64_t size;
} row_t;

typedef struct stage {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *arena;
	const gpuenv_wheel_tree_t *tree;
	const gpuenv_scheme_t *scheme;
	const gpuenv_stage_opts_t *opts;
	const char *stage_dir;
	int stagefd, treefd;
	dirstack_t ds, src; /* the stage's folders (made), the tree's (opened) */
	int lib_key;
	const char *rel[GPUENV_SCHEME_N]; /* scheme dir relative to the site folder, "" for it */
	bool used_key[GPUENV_SCHEME_N];
	row_t *rows;
	size_t nrows, caprows;
	size_t nplaced;
	int weakest;
	gpuenv_buf_t path; /* scratch: a stage-relative path */
	const char *stage_abs; /* with compile: the stage folder, absolute */
	gpuenv_buf_t compile;  /* "STAGE-PATH\tFINAL-FOLDER\n" of each .py placed */
	size_t npy;
} stage_t;

static int add_row(stage_t *s, const char *path, const unsigned char *sha, uint64_t size)
{
	if (gpuenv_array_grow(s->ctx, s->arena, &s->rows, &s->caprows, s->nrows + 1, sizeof(*s->rows), SIZE_MAX,
		    "for RECORD"))
		return s->ctx->err.code;
	s->rows[s->nrows++] = (row_t){ path, sha, size };
	return 0;
}

/* "a/b/c" relative to "a/x": "../b/c"; both absolute and tidy. */
static const char *rel_path(gpuenv_arena_t *arena, const char *to, const char *from)
{
	size_t i = 0, common = 0;
	gpuenv_buf_t b;
	const char *res;

	while (to[i] && from[i] && to[i] == from[i]) {
		i++;
		if (to[i] == '/' || !to[i] || from[i] == '/' || !from[i])
			if ((to[i] == '/' || !to[i]) && (from[i] == '/' || !from[i]))
				common = i;
	}
	gpuenv_buf_init(&b, arena->ctx, 0);
	for (const char *p = from + common; *p; p++)
		if (*p == '/')
			gpuenv_buf_puts(&b, b.len ? "/.." : "..");
	const char *rest = to + common;
	if (*rest == '/')
		rest++;
	if (*rest) {
		if (b.len)
			gpuenv_buf_putc(&b, '/');
		gpuenv_buf_puts(&b, rest);
	}
	res = gpuenv_arena_strndup(arena, b.data ? b.data : "", b.len);
	gpuenv_buf_free(&b);
	return res;
}

/* The record path of a stage-relative path key/sub. */
static const char *record_path(stage_t *s, int key, const char *sub, size_t sublen)
{
	const char *r = s->rel[key];
	gpuenv_str_t p = *r ? gpuenv_arena_printf(s->arena, "%s/%.*s", r, (int)sublen, sub)
			    : gpuenv_arena_printf(s->arena, "%.*s", (int)sublen, sub);
	return p.ptr;
}

/* The folder of stage path key/sub (created), and its last component. */
static int stage_dir_of(stage_t *s, const char *spath, size_t len, int *dirfd, const char **base)
{
	size_t dl = dir_len(spath, len, base);
	return ds_dir(&s->ds, spath, dl, dirfd);
}

static int write_new(stage_t *s, int dirfd, const char *base, const char *shown, const void *p,
	size_t n, unsigned perm)
{
	int fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perm);
	int r;

	if (fd < 0) {
		r = -errno;
		gpuenv_fail(s->ctx, r, s->stage_dir, 0, 0, "%s: cannot create: %s%s", shown,
			strerror(-r), r == -EEXIST ? " (the wheel ships a file of this name and a script too)" : "");
		return gpuenv_fs_full_hint(s->ctx, r, dirfd, base, -1, NULL);
	}
	r = write_all(fd, p, n);
	if (close(fd) != 0 && !r)
		r = -errno;
	if (r) {
		gpuenv_fail(s->ctx, r, s->stage_dir, 0, 0, "%s: cannot write: %s", shown, strerror(-r));
		return gpuenv_fs_full_hint(s->ctx, r, dirfd, base, -1, NULL);
	}
	if (perm & 0111)
		fchmodat(dirfd, base, perm, 0); /* as pip: the umask does not drop x */
	s->nplaced++;
	return 0;
}

/* A script whose first line starts "#!python": that line becomes
 * "#!<python>\n" (pip's fix_script).  *done false: not such a script. */
static int fix_script(stage_t *s, const gpuenv_tree_file_t *f, int dirfd, const char *base,
	const char *shown, unsigned char sha[32], uint64_t *size, bool *done)
{
	gpuenv_buf_t in, outb;
	int fd, r;

	*done = false;
	fd = openat(s->treefd, f->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return gpuenv_fail(s->ctx, -errno, s->stage_dir, 0, 0, "%s: cannot read %s: %s", shown,
			f->path, strerror(errno));
	gpuenv_buf_init(&in, s->ctx, SCRIPT_MAX);
	r = gpuenv_fs_read_head(fd, 8, NULL, &in);
	if (r || in.len < 8 || memcmp(in.data, "#!python", 8) != 0) {
		close(fd);
		gpuenv_buf_free(&in);
		return r ? gpuenv_fail(s->ctx, r, s->stage_dir, 0, 0, "%s: cannot read: %s", shown,
				   strerror(-r))
			 : 0;
	}
	lseek(fd, 0, SEEK_SET);
	gpuenv_buf_reset(&in);
	r = gpuenv_fs_read_fd(s->ctx, fd, f->path, SCRIPT_MAX, &in);
	close(fd);
	if (r) {
		gpuenv_buf_free(&in);
		return r;
	}
	const char *nl = memchr(in.data, '\n', in.len);
	size_t rest = nl ? (size_t)(nl + 1 - in.data) : in.len;
	gpuenv_buf_init(&outb, s->ctx, SCRIPT_MAX + PATH_MAX);
	r = gpuenv_buf_printf(&outb, "#!%s\n", s->scheme->python);
	if (!r)
		r = gpuenv_buf_append(&outb, in.data + rest, in.len - rest);
	gpuenv_buf_free(&in);
	if (r) {
		gpuenv_buf_free(&outb);
		return gpuenv_oom(s->ctx, "for a script");
	}
	if ((r = gpuenv_sha256(outb.data, outb.len, sha))) {
		gpuenv_buf_free(&outb);
		return gpuenv_sha256_fail(s->ctx, r, shown);
	}
	*size = outb.len;
	r = write_new(s, dirfd, base, shown, outb.data, outb.len, f->perm);
	gpuenv_buf_free(&outb);
	*done = !r;
	return r;
}

/* The stage-relative path of a tree file and its scheme key; false: not
 * installed (RECORD and the files the installer writes itself). */
static bool dest_of(stage_t *s, const gpuenv_tree_file_t *f, int *key, const char **sub,
	size_t *sublen)
{
	const gpuenv_wheel_tree_t *t = s->tree;
	const char *p = f->path;
	size_t dl = strlen(t->dist_info);

	if (!strncmp(p, t->dist_info, dl) && p[dl] == '/') {
		const char *leaf = p + dl + 1;
		if (!strcmp(leaf, "RECORD") || !strcmp(leaf, "INSTALLER") || !strcmp(leaf, "REQUESTED") ||
			!strcmp(leaf, "direct_url.json") || !strcmp(leaf, "gpuenv-build.json"))
			return false;
	}
	if (t->data_dir) {
		size_t l = strlen(t->data_dir);
		if (!strncmp(p, t->data_dir, l) && p[l] == '/') {
			const char *k = p + l + 1, *slash = strchr(k, '/');
			/* the unpacker refused anything else */
			*key = scheme_key(gpuenv_str_n(k, slash ? (size_t)(slash - k) : 0));
			*sub = slash ? slash + 1 : k;
			*sublen = strlen(*sub);
			return *key >= 0;
		}
	}
	*key = s->lib_key;
	*sub = p;
	*sublen = strlen(p);
	return true;
}

/* A .data/scripts file that setuptools generated for an entry point (EP,
 * EP.exe, EP-script.py, EP.pya): pip leaves it out and writes its own
 * launcher (is_entrypoint_wrapper), and so does gpuenv. */
static bool is_entry_point_wrapper(const gpuenv_wheel_tree_t *t, const char *sub, size_t len)
{
	static const char *const suffixes[] = { ".exe", "-script.py", ".pya" };
	const char *name = sub;
	size_t l;

	dir_len(sub, len, &name);
	l = strlen(name);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i]);
		if (l > sl && !strcasecmp(name + l - sl, suffixes[i])) {
			l -= sl;
			break;
		}
	}
	for (size_t i = 0; i < t->nscripts; i++)
		if (strlen(t->scripts[i].name) == l && !strncmp(t->scripts[i].name, name, l))
			return true;
	return false;
}

/* A .py file placed: with compile, one line for the compiler.  pip
 * compiles every .py file it installed, wherever it went (scripts and
 * data included), but not the launchers it generated. */
static int note_py(stage_t *s, int key, const char *sub, size_t sublen)
{
	const char *base;
	size_t dl = dir_len(sub, sublen, &base);

	if (!s->stage_abs || sublen < 4 || strcmp(sub + sublen - 3, ".py"))
		return 0;
	s->npy++;
	if (gpuenv_buf_printf(&s->compile, "%s/%s\t%s%s%s%s%.*s\n", s->stage_abs, s->path.data,
		    s->scheme->dirs[key], key == GPUENV_SCHEME_HEADERS ? "/" : "",
		    key == GPUENV_SCHEME_HEADERS ? s->tree->name : "", dl ? "/" : "", (int)dl, sub))
		return gpuenv_oom(s->ctx, "for the compile list");
	return 0;
}

static int place_files(stage_t *s)
{
	const gpuenv_wheel_tree_t *t = s->tree;
	int r;

	for (size_t i = 0; i < t->nfiles; i++) {
		const gpuenv_tree_file_t *f = &t->files[i];
		const char *sub, *base;
		size_t sublen;
		int key, dirfd, used = GPUENV_LINK_HARDLINK;
		if (!dest_of(s, f, &key, &sub, &sublen))
			continue;
		gpuenv_buf_reset(&s->path);
		if (key == GPUENV_SCHEME_HEADERS)
			r = gpuenv_buf_printf(&s->path, "headers/%s/%.*s", t->name, (int)sublen, sub);
		else
			r = gpuenv_buf_printf(&s->path, "%s/%.*s", scheme_names[key], (int)sublen, sub);
		if (r)
			return gpuenv_oom(s->ctx, "staging a package's files");
		if (key == GPUENV_SCHEME_SCRIPTS && is_entry_point_wrapper(t, sub, sublen))
			continue;
		s->used_key[key] = true;
		if ((r = stage_dir_of(s, s->path.data, s->path.len, &dirfd, &base)))
			return r;
		const char *rp = key == GPUENV_SCHEME_HEADERS
					 ? record_path(s, key, s->path.data + strlen("headers/"),
						   s->path.len - strlen("headers/"))
					 : record_path(s, key, sub, sublen);
		if (!rp)
			return gpuenv_oom(s->ctx, "staging a package's files");
		bool fixed = false;
		if (key == GPUENV_SCHEME_SCRIPTS) {
			unsigned char *sha = gpuenv_arena_alloc(s->arena, 32);
			uint64_t size;
			if (!sha)
				return gpuenv_oom(s->ctx, "staging a package's files");
			if ((r = fix_script(s, f, dirfd, base, s->path.data, sha, &size, &fixed)))
				return r;
			if (fixed) {
				if ((r = add_row(s, rp, sha, size)) || (r = note_py(s, key, sub, sublen)))
					return r;
				if (s->weakest < GPUENV_LINK_COPY)
					s->weakest = GPUENV_LINK_COPY;
				continue;
			}
		}
		const char *sbase;
		int sfd;
		/* the source by its folder's descriptor too: one component to
		 * look up per file instead of the whole path */
		if ((r = ds_dir(&s->src, f->path, dir_len(f->path, strlen(f->path), &sbase), &sfd)))
			return r;
		if ((r = gpuenv_link_file(s->ctx, sfd, sbase, dirfd, base, f->perm,
			     s->opts ? s->opts->link_mode : GPUENV_LINK_AUTO, &used)))
			return r;
		if (used > s->weakest)
			s->weakest = used;
		s->nplaced++;
		if ((r = add_row(s, rp, f->sha256, f->size)))
			return r;
		if ((r = note_py(s, key, sub, sublen)))
			return r;
	}
	return 0;
}

/* A launcher as pip 23.2.1 writes it (distlib's ScriptMaker with pip's
 * options): the shebang, then the import and the call. */
static int launcher_text(stage_t *s, const char *module, const char *attr, gpuenv_buf_t *b)
{
	const char *py = s->scheme->python;
	size_t pl = strlen(py);
	bool space = strchr(py, ' ') != NULL;
	char quoted[PATH_MAX + 3];
	int r;

	snprintf(quoted, sizeof(quoted), space && py[0] != '"' ? "\"%s\"" : "%s", py);
	/* "#!" + executable + "\n" at most 127 bytes and no space: plain */
	if (!space && pl + 3 <= 127)
		r = gpuenv_buf_printf(b, "#!%s\n", quoted);
	else
		r = gpuenv_buf_printf(b, "#!/bin/sh\n'''exec' %s \"$0\" \"$@\"\n' '''\n", quoted);
	const char *dot = strchr(attr, '.');
	if (!r)
		r = gpuenv_buf_printf(b,
			"# -*- coding: utf-8 -*-\n"
			"import re\n"
			"import sys\n"
			"from %s import %.*s\n"
			"if __name__ == '__main__':\n"
			"    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
			"    sys.exit(%s())\n",
			module, dot ? (int)(dot - attr) : (int)strlen(attr), attr, attr);
	return r;
}

static int write_launcher(stage_t *s, const char *name, const gpuenv_tree_script_t *sc)
{
	gpuenv_buf_t b;
	const char *base;
	int dirfd, r;
	unsigned char *sha;

	gpuenv_buf_reset(&s->path);
	if (gpuenv_buf_printf(&s->path, "scripts/%s", name))
		return gpuenv_oom(s->ctx, "writing a launcher");
	s->used_key[GPUENV_SCHEME_SCRIPTS] = true;
	if ((r = stage_dir_of(s, s->path.data, s->path.len, &dirfd, &base)))
		return r;
	gpuenv_buf_init(&b, s->ctx, 0);
	if (launcher_text(s, sc->module, sc->attr, &b)) {
		gpuenv_buf_free(&b);
		return gpuenv_oom(s->ctx, "for a script");
	}
	sha = gpuenv_arena_alloc(s->arena, 32);
	const char *rp = record_path(s, GPUENV_SCHEME_SCRIPTS, name, strlen(name));
	if (!sha || !rp) {
		gpuenv_buf_free(&b);
		return gpuenv_oom(s->ctx, "writing a launcher");
	}
	if ((r = gpuenv_sha256(b.data, b.len, sha)))
		r = gpuenv_sha256_fail(s->ctx, r, s->path.data);
	else
		r = write_new(s, dirfd, base, s->path.data, b.data, b.len, 0755);
	if (!r)
		r = add_row(s, rp, sha, b.len);
	gpuenv_buf_free(&b);
	return r;
}

static bool matches_versioned(const char *name, const char *stem, bool dash)
{
	/* pip(\d+(\.\d+)?)?$ / easy_install(-\d+\.\d+)?$ */
	size_t l = strlen(stem);
	const char *p = name + l;
	if (strncmp(name, stem, l))
		return false;
	if (!*p)
		return true;
	if (dash) {
		if (*p++ != '-')
			return false;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p++ != '.' || !(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
		return !*p;
	}
	if (!(*p >= '0' && *p <= '9'))
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (!*p)
		return true;
	if (*p++ != '.' || !(*p >= '0' && *p <= '9'))
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return !*p;
}

/* Console then gui launchers; pip's special names: "pip" becomes pip,
 * pipX, pipX.Y and "easy_install" easy_install, easy_install-X.Y, and the
 * other versioned names of those are dropped (get_console_script_specs). */
static int write_launchers(stage_t *s)
{
	const gpuenv_wheel_tree_t *t = s->tree;
	const gpuenv_tree_script_t *pip = NULL, *ei = NULL;
	const char *xy = s->scheme->python_xy ? s->scheme->python_xy : "";
	char major[16], name[300];
	int r;

	snprintf(major, sizeof(major), "%.*s", (int)strcspn(xy, "."), xy);
	for (size_t i = 0; i < t->nscripts; i++) {
		if (t->scripts[i].gui)
			continue;
		if (!strcmp(t->scripts[i].name, "pip"))
			pip = &t->scripts[i];
		else if (!strcmp(t->scripts[i].name, "easy_install"))
			ei = &t->scripts[i];
	}
	if (pip) {
		if ((r = write_launcher(s, "pip", pip)))
			return r;
		snprintf(name, sizeof(name), "pip%s", major);
		if ((r = write_launcher(s, name, pip)))
			return r;
		snprintf(name, sizeof(name), "pip%s", xy);
		if (strcmp(xy, major) && (r = write_launcher(s, name, pip)))
			return r;
	}
	if (ei) {
		if ((r = write_launcher(s, "easy_install", ei)))
			return r;
		snprintf(name, sizeof(name), "easy_install-%s", xy);
		if ((r = write_launcher(s, name, ei)))
			return r;
	}
	for (size_t i = 0; i < t->nscripts; i++) {
		const gpuenv_tree_script_t *sc = &t->scripts[i];
		if (!sc->gui && ((pip && matches_versioned(sc->name, "pip", false)) ||
				     (ei && matches_versioned(sc->name, "easy_install", true))))
			continue;
		if (!sc->attr)
			return gpuenv_fail(s->ctx, GPUENV_EFORMAT, s->stage_dir, 0, 0,
				"script '%s' has no function to call", sc->name);
		if ((r = write_launcher(s, sc->name, sc)))
			return r;
	}
	return 0;
}

static int write_meta(stage_t *s, const char *leaf, const char *text, size_t n)
{
	const char *base;
	int dirfd, r;
	unsigned char *sha = gpuenv_arena_alloc(s->arena, 32);
	gpuenv_str_t sub = gpuenv_arena_printf(s->arena, "%s/%s", s->tree->dist_info, leaf);

	if (!sha || !sub.ptr)
		return gpuenv_oom(s->ctx, "writing the package's metadata");
	gpuenv_buf_reset(&s->path);
	if (gpuenv_buf_printf(&s->path, "%s/%s", scheme_names[s->lib_key], sub.ptr))
		return gpuenv_oom(s->ctx, "writing the package's metadata");
	s->used_key[s->lib_key] = true;
	if ((r = stage_dir_of(s, s->path.data, s->path.len, &dirfd, &base)))
		return r;
	if (!text)
		return 0;
	if ((r = gpuenv_sha256(text, n, sha)))
		return gpuenv_sha256_fail(s->ctx, r, s->path.data);
	if ((r = write_new(s, dirfd, base, s->path.data, text, n, 0644)))
		return r;
	const char *rp = record_path(s, s->lib_key, sub.ptr, sub.len);
	return rp ? add_row(s, rp, sha, n) : gpuenv_oom(s->ctx, "writing the package's metadata");
}

/* Byte-compile the .py files placed, in one interpreter run, as pip does
 * (compileall.compile_file(path, force=True, quiet) for each, the final
 * folder embedded as ddir so tracebacks name the installed file); the
 * interpreter prints the .pyc paths it wrote (its own cache tag), and each
 * is listed in RECORD without a hash, as pip lists them.  A file that does
 * not compile (Python 2 syntax) is skipped, as pip skips it. */
static const char compile_py[] =
	"import sys, compileall, importlib.util\n"
	"data = sys.stdin.buffer.read().decode('utf-8', 'surrogateescape')\n"
	"for line in data.split('\\n'):\n"
	"    if not line:\n"
	"        continue\n"
	"    src, ddir = line.split('\\t')\n"
	"    if compileall.compile_file(src, ddir=ddir, force=True, quiet=2):\n"
	"        pyc = importlib.util.cache_from_source(src)\n"
	"        sys.stdout.buffer.write(pyc.encode('utf-8', 'surrogateescape') + b'\\n')\n";

static int run_compile(stage_t *s, gpuenv_buf_t *out)
{
	const char *argv[] = { s->scheme->python, "-I", "-c", compile_py, NULL };
	posix_spawn_file_actions_t fa;
	int in[2], outp[2], status = 0, r, w;
	pid_t pid;

	if (pipe(in) != 0)
		return gpuenv_fail(s->ctx, -errno, s->stage_dir, 0, 0, "cannot compile: %s",
			strerror(errno));
	if (pipe(outp) != 0) {
		r = -errno;
		close(in[0]);
		close(in[1]);
		return gpuenv_fail(s->ctx, r, s->stage_dir, 0, 0, "cannot compile: %s", strerror(-r));
	}
	fcntl(in[1], F_SETFD, FD_CLOEXEC);
	fcntl(outp[0], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, in[0]);
	posix_spawn_file_actions_addclose(&fa, outp[1]);
	r = posix_spawn(&pid, s->scheme->python, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(outp[1]);
	if (r != 0) {
		close(in[1]);
		close(outp[0]);
		return gpuenv_fail(s->ctx, -r, s->scheme->python, 0, 0,
			"cannot run it to byte-compile: %s", strerror(r));
	}
	/* the child reads all of its input before it writes: no deadlock */
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	w = write_all(in[1], s->compile.data, s->compile.len);
	close(in[1]);
	r = gpuenv_fs_read_fd(s->ctx, outp[0], "compileall", (size_t)256 << 20, out);
	close(outp[0]);
	signal(SIGPIPE, old);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || w)
		return gpuenv_fail(s->ctx, GPUENV_EFORMAT, s->scheme->python, 0, 0,
			"byte-compiling failed (%s %d): is it a working Python 3?",
			WIFEXITED(status) ? "exit status" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return r;
}

static int compile_stage(stage_t *s)
{
	gpuenv_buf_t out;
	size_t sl = strlen(s->stage_abs);
	int r;

	gpuenv_buf_init(&out, s->ctx, (size_t)256 << 20);
	if ((r = run_compile(s, &out))) {
		gpuenv_buf_free(&out);
		return r;
	}
	for (char *p = out.data, *end = out.data + out.len; p && p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *line = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
		/* STAGE/<key>/<sub>: only paths inside the stage are believed */
		if (strncmp(line, s->stage_abs, sl) || line[sl] != '/')
			continue;
		const char *rel = line + sl + 1, *slash = strchr(rel, '/');
		int key = slash ? scheme_key(gpuenv_str_n(rel, (size_t)(slash - rel))) : -1;
		struct stat st;
		if (key < 0 || fstatat(s->stagefd, rel, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			!S_ISREG(st.st_mode))
			continue;
		const char *sub = slash + 1;
		if (key == GPUENV_SCHEME_HEADERS) /* headers/<name>/... */
			sub = rel + strlen("headers/");
		const char *rp = record_path(s, key, sub, strlen(sub));
		if (!rp || (r = add_row(s, rp, NULL, 0))) {
			gpuenv_buf_free(&out);
			return rp ? r : gpuenv_oom(s->ctx, "byte-compiling the stage");
		}
		s->nplaced++;
	}
	gpuenv_buf_free(&out);
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const row_t *)a)->path, ((const row_t *)b)->path);
}

static int write_record(stage_t *s)
{
	gpuenv_buf_t b, line;
	gpuenv_str_t sub = gpuenv_arena_printf(s->arena, "%s/RECORD", s->tree->dist_info);
	const char *rp, *base;
	int dirfd, r = 0;

	if (!sub.ptr || !(rp = record_path(s, s->lib_key, sub.ptr, sub.len)))
		return gpuenv_oom(s->ctx, "writing the package's RECORD");
	if ((r = add_row(s, rp, NULL, 0)))
		return r;
	qsort(s->rows, s->nrows, sizeof(*s->rows), row_cmp);
	gpuenv_buf_init(&b, s->ctx, GPUENV_RECORD_MAX);
	gpuenv_buf_init(&line, s->ctx, 0);
	for (size_t i = 0; i < s->nrows && !r; i++) {
		const row_t *w = &s->rows[i];
		gpuenv_record_entry_t e = { .path = gpuenv_str(w->path) };
		if (w->sha256) {
			e.hash_algo = GPUENV_STR_LIT("sha256");
			e.digest = w->sha256;
			e.digest_len = 32;
			e.size = w->size;
			e.has_size = true;
		}
		gpuenv_buf_reset(&line);
		/* csv.writer's default line end, which pip's RECORD has */
		r = gpuenv_record_format_entry(&e, &line);
		if (!r && line.len && line.data[line.len - 1] == '\n')
			line.len--;
		if (!r)
			r = gpuenv_buf_append(&b, line.data, line.len);
		if (!r)
			r = gpuenv_buf_append(&b, "\r\n", 2);
	}
	gpuenv_buf_free(&line);
	if (r) {
		gpuenv_buf_free(&b);
		return r == -ENOMEM ? gpuenv_oom(s->ctx, "for RECORD")
				    : gpuenv_fail(s->ctx, r, s->stage_dir, 0, 0, "RECORD is too big");
	}
	gpuenv_buf_reset(&s->path);
	if (gpuenv_buf_printf(&s->path, "%s/%s", scheme_names[s->lib_key], sub.ptr)) {
		gpuenv_buf_free(&b);
		return gpuenv_oom(s->ctx, "writing the package's RECORD");
	}
	if (!(r = stage_dir_of(s, s->path.data, s->path.len, &dirfd, &base)))
		r = write_new(s, dirfd, base, s->path.data, b.data ? b.data : "", b.len, 0644);
	gpuenv_buf_free(&b);
	return r;
}

static int check_scheme(gpuenv_ctx_t *ctx, const gpuenv_scheme_t *sc)
{
	if (!sc || !sc->prefix || sc->prefix[0] != '/' || !sc->python || sc->python[0] != '/')
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"an install scheme needs an absolute prefix and python");
	for (int k = 0; k < GPUENV_SCHEME_N; k++)
		if (!sc->dirs[k] || sc->dirs[k][0] != '/')
			return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
				"the install scheme's %s folder is not an absolute path", scheme_names[k]);
	if (strchr(sc->python, '\n'))
		return gpuenv_fail(ctx, GPUENV_EUSAGE, sc->python, 0, 0,
			"an interpreter path with a line break cannot be a shebang");
	return 0;
}

int gpuenv_wheel_stage(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_wheel_tree_t *tree,
	const char *tree_dir, const gpuenv_scheme_t *scheme, const char *stage_dir,
	const gpuenv_stage_opts_t *opts, gpuenv_staged_t *out)
{
	stage_t s = { .ctx = ctx, .arena = arena, .tree = tree, .scheme = scheme, .opts = opts,
		.stage_dir = stage_dir, .stagefd = -1, .treefd = -1, .weakest = GPUENV_LINK_HARDLINK };
	bool created = false;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = check_scheme(ctx, scheme)))
		return r;
	s.lib_key = tree->root_is_purelib ? GPUENV_SCHEME_PURELIB : GPUENV_SCHEME_PLATLIB;
	for (int k = 0; k < GPUENV_SCHEME_N; k++) {
		char a[PATH_MAX], b[PATH_MAX];
		snprintf(a, sizeof(a), "%s", scheme->dirs[k]);
		snprintf(b, sizeof(b), "%s", scheme->dirs[s.lib_key]);
		gpuenv_fs_tidy_path(a);
		gpuenv_fs_tidy_path(b);
		if (!(s.rel[k] = rel_path(arena, a, b)))
			return gpuenv_oom(ctx, "staging a package");
	}
	gpuenv_buf_init(&s.path, ctx, 0);
	gpuenv_buf_init(&s.compile, ctx, 0);
	s.treefd = open(tree_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s.treefd < 0) {
		r = gpuenv_fail(ctx, -errno, tree_dir, 0, 0, "cannot open the tree: %s", strerror(errno));
		goto done;
	}
	if ((s.stagefd = new_folder(ctx, stage_dir, "stage", &created)) < 0) {
		r = s.stagefd;
		goto done;
	}
	ds_init(&s.ds, ctx, s.stagefd, true, stage_dir);
	ds_init(&s.src, ctx, s.treefd, false, tree_dir);
	if (opts && opts->compile) {
		char cwd[PATH_MAX];
		gpuenv_str_t abs = stage_dir[0] == '/' ? gpuenv_arena_printf(arena, "%s", stage_dir)
			: getcwd(cwd, sizeof(cwd)) ? gpuenv_arena_printf(arena, "%s/%s", cwd, stage_dir)
						  : GPUENV_STR_NULL;
		if (!abs.ptr) {
			r = gpuenv_fail(ctx, -errno, stage_dir, 0, 0, "cannot make the path absolute: %s",
				strerror(errno));
			goto done_ds;
		}
		gpuenv_fs_tidy_path((char *)abs.ptr);
		s.stage_abs = abs.ptr;
	}
	const char *installer = opts && opts->installer ? opts->installer : "gpuenv";
	gpuenv_str_t inst = gpuenv_arena_printf(arena, "%s%s", installer,
		*installer && installer[strlen(installer) - 1] == '\n' ? "" : "\n");
	if (!inst.ptr) {
		r = gpuenv_oom(ctx, "staging a package");
		goto done_ds;
	}
	if ((r = place_files(&s)) || (r = write_launchers(&s)) ||
		(r = write_meta(&s, "INSTALLER", inst.ptr, inst.len)) ||
		(opts && opts->requested && (r = write_meta(&s, "REQUESTED", "", 0))) ||
		(opts && opts->direct_url_json &&
			(r = write_meta(&s, "direct_url.json", opts->direct_url_json,
				 strlen(opts->direct_url_json)))) ||
		(opts && opts->build_info_json &&
			(r = write_meta(&s, "gpuenv-build.json", opts->build_info_json,
				 strlen(opts->build_info_json)))))
		goto done_ds;
	if (s.npy && (r = compile_stage(&s)))
		goto done_ds;
	if ((r = write_record(&s)))
		goto done_ds;
	out->stage_dir = stage_dir;
	out->dist_info = tree->dist_info;
	out->nfiles = s.nplaced;
	out->link_mode_used = s.weakest;
done_ds:
	ds_close(&s.ds);
	ds_close(&s.src);
done:
	if (s.stagefd >= 0)
		close(s.stagefd);
	if (s.treefd >= 0)
		close(s.treefd);
	gpuenv_buf_free(&s.path);
	gpuenv_buf_free(&s.compile);
	if (r && created)
		rm_tree(stage_dir);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}
