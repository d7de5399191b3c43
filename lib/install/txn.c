/* txn.c: a venv's set of distributions changed as one transaction
 * (include/gpuenv/txn.h; docs/install.md, "Transactions and crash safety").
 *
 * Everything happens relative to one descriptor of the venv (renameat,
 * fstatat, openat), with paths relative to the venv: the same strings go
 * into the journal.  A commit is planned first against a virtual view of
 * the venv (the disk plus an overlay of what the earlier operations of the
 * plan did), so the journal lists every operation before the first one
 * runs; then the journal is written and made durable, and the operations
 * run in order. */
#define _GNU_SOURCE
#include "gpuenv/txn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/hash.h"
#include "gpuenv/metadata.h"
#include "gpuenv/venv.h" /* the venv's own files */

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#define TXN_DIR ".gpuenv/txn"
#define STAGE_DIR TXN_DIR "/stage"
#define TRASH_DIR TXN_DIR "/trash"
#define JOURNAL TXN_DIR "/journal"
#define JOURNAL_HEADER "gpuenv-txn 1"

/* ---- paths ------------------------------------------------------------- */

static bool has_prefix(const char *p, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n > k && !memcmp(p, pre, k) && p[k] == '/';
}

static bool in_gpuenv(const char *p, size_t n)
{
	return (n == 7 && !memcmp(p, ".gpuenv", 7)) || has_prefix(p, n, ".gpuenv");
}

static bool in_stage(const char *p)
{
	return has_prefix(p, strlen(p), STAGE_DIR);
}

static bool in_trash(const char *p)
{
	return has_prefix(p, strlen(p), TRASH_DIR);
}

/* A path the journal may hold: relative, no empty, "." or ".." component,
 * no NUL, at most GPUENV_TXN_PATH_MAX bytes. */
static bool path_ok(const char *p, size_t n)
{
	size_t start = 0;

	if (!n || n > GPUENV_TXN_PATH_MAX || memchr(p, 0, n))
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != '/')
			continue;
		size_t len = i - start;
		if (!len || (len == 1 && p[start] == '.') ||
			(len == 2 && p[start] == '.' && p[start + 1] == '.'))
			return false;
		start = i + 1;
	}
	return true;
}

static bool op_ok(const gpuenv_txn_op_t *op)
{
	size_t dn = strlen(op->dst);

	if (!path_ok(op->dst, dn))
		return false;
	if (op->kind == GPUENV_TXN_MKDIR)
		return !in_gpuenv(op->dst, dn);
	if (op->kind != GPUENV_TXN_MOVE || !path_ok(op->src, strlen(op->src)))
		return false;
	return (in_stage(op->src) && !in_gpuenv(op->dst, dn)) ||
		(!in_gpuenv(op->src, strlen(op->src)) && in_trash(op->dst));
}

/* The length of the parent of p[0..n) ("" for a top-level name). */
static size_t parent_len(const char *p, size_t n)
{
	while (n > 0 && p[n - 1] != '/')
		n--;
	return n ? n - 1 : 0;
}

/* ---- the journal ------------------------------------------------------- */

static int put_path(gpuenv_buf_t *b, const char *p)
{
	static const char hex[] = "0123456789ABCDEF";
	int r = 0;

	for (const unsigned char *s = (const unsigned char *)p; !r && *s; s++) {
		if (*s <= 0x20 || *s == '%' || *s == 0x7f) {
			char e[3] = { '%', hex[*s >> 4], hex[*s & 15] };
			r = gpuenv_buf_append(b, e, 3);
		} else {
			r = gpuenv_buf_putc(b, (char)*s);
		}
	}
	return r;
}

int gpuenv_txn_journal_format(gpuenv_ctx_t *ctx, const gpuenv_txn_op_t *ops, size_t nops,
	gpuenv_buf_t *out)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[2 * GPUENV_SHA256_LEN + 1];
	size_t start = out->len;
	int r = gpuenv_buf_puts(out, JOURNAL_HEADER "\n");

	for (size_t i = 0; !r && i < nops; i++) {
		const gpuenv_txn_op_t *op = &ops[i];
		if (!op_ok(op))
			return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0,
				"transaction operation %zu (%s) cannot be journaled", i, op->dst);
		if (op->kind == GPUENV_TXN_MKDIR) {
			r = gpuenv_buf_puts(out, "mkdir ");
		} else {
			r = gpuenv_buf_puts(out, "mv ");
			r = r || put_path(out, op->src) || gpuenv_buf_putc(out, ' ');
		}
		r = r || put_path(out, op->dst) || gpuenv_buf_putc(out, '\n');
	}
	if (!r && gpuenv_sha256(out->data + start, out->len - start, d))
		return gpuenv_fail(ctx, -ENOMEM, NULL, 0, 0, "sha256 of the journal failed");
	gpuenv_hex(d, sizeof(d), hex);
	r = r || gpuenv_buf_printf(out, "commit %zu %s\n", nops, hex);
	if (r == GPUENV_ETOOBIG)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "transaction journal too large");
	return r ? gpuenv_oom(ctx, "transaction journal") : 0;
}

/* Decode one %XX-escaped path token into the arena; NULL when malformed
 * (*oom set when memory ran out). */
static const char *get_path(gpuenv_arena_t *a, gpuenv_str_t tok, bool *oom)
{
	char *out, *o;

	if (!tok.len || tok.len > 3 * GPUENV_TXN_PATH_MAX)
		return NULL;
	out = gpuenv_arena_alloc(a, tok.len + 1);
	if (!out) {
		*oom = true;
		return NULL;
	}
	o = out;
	for (size_t i = 0; i < tok.len; i++) {
		unsigned char c = (unsigned char)tok.ptr[i];
		if (c == '%') {
			int hi = i + 2 < tok.len ? gpuenv_hex_digit(tok.ptr[i + 1]) : -1;
			int lo = hi >= 0 ? gpuenv_hex_digit(tok.ptr[i + 2]) : -1;
			if (lo < 0 || (hi << 4 | lo) == 0)
				return NULL;
			*o++ = (char)(hi << 4 | lo);
			i += 2;
		} else if (c <= 0x20 || c == 0x7f) {
			return NULL;
		} else {
			*o++ = (char)c;
		}
	}
	*o = 0;
	return path_ok(out, (size_t)(o - out)) ? out : NULL;
}

/* Parse one op line (without its '\n'); 1 parsed, 0 not an op, -ENOMEM. */
static int parse_op(gpuenv_arena_t *a, gpuenv_str_t line, gpuenv_txn_op_t *op)
{
	gpuenv_str_t verb, rest = gpuenv_str_split(line, ' ', &verb), t1, t2;
	bool oom = false;

	if (!rest.ptr)
		return 0;
	memset(op, 0, sizeof(*op));
	if (gpuenv_str_eq_cstr(verb, "mkdir")) {
		op->kind = GPUENV_TXN_MKDIR;
		op->dst = get_path(a, rest, &oom);
	} else if (gpuenv_str_eq_cstr(verb, "mv")) {
		t2 = gpuenv_str_split(rest, ' ', &t1);
		if (!t2.ptr)
			return 0;
		op->kind = GPUENV_TXN_MOVE;
		op->src = get_path(a, t1, &oom);
		op->dst = op->src ? get_path(a, t2, &oom) : NULL;
	} else {
		return 0;
	}
	if (oom)
		return -ENOMEM;
	return op->dst && op_ok(op);
}

static bool find_commit_after(gpuenv_str_t text, size_t pos)
{
	for (size_t i = pos; i + 7 <= text.len; i++)
		if ((i == 0 || text.ptr[i - 1] == '\n') && !memcmp(text.ptr + i, "commit ", 7))
			return true;
	return false;
}

static int damaged(gpuenv_ctx_t *ctx, const char *file, unsigned line, const char *what)
{
	gpuenv_fail(ctx, GPUENV_EFORMAT, file, line, 0, "damaged transaction journal: %s", what);
	return gpuenv_hint(ctx, "the venv may be partly changed and gpuenv will not guess: "
		"recreate the venv (remove it, then gpuenv sync), or put it right by hand and remove "
		"its .gpuenv/txn folder");
}

int gpuenv_txn_journal_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	gpuenv_str_t text, gpuenv_txn_journal_t *out)
{
	size_t hlen = sizeof(JOURNAL_HEADER), pos, cap = 1, commit_at = 0;
	unsigned line = 1;
	bool committed = false;

	memset(out, 0, sizeof(*out));
	if (text.len > GPUENV_TXN_JOURNAL_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, file, 0, 0,
			"transaction journal larger than %zu bytes", GPUENV_TXN_JOURNAL_MAX);
	/* header: a prefix of it is a journal torn while it was written */
	if (text.len < hlen || memcmp(text.ptr, JOURNAL_HEADER "\n", hlen)) {
		size_t k = text.len < hlen ? text.len : hlen;
		if (!memcmp(text.ptr ? text.ptr : "", JOURNAL_HEADER "\n", k) ||
			!find_commit_after(text, 0)) {
			if (text.len >= hlen && !memcmp(text.ptr, "gpuenv-txn ", 11) &&
				memchr(text.ptr, '\n', text.len))
				return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, file, 1, 0,
					"transaction journal of another version (%.*s)",
					(int)(strchr(text.ptr, '\n') - text.ptr), text.ptr);
			out->torn_line = 1;
			return 0;
		}
		return damaged(ctx, file, 1, "no gpuenv-txn header");
	}
	for (size_t i = 0; i < text.len; i++)
		cap += text.ptr[i] == '\n';
	out->ops = gpuenv_arena_calloc(arena, cap, sizeof(*out->ops));
	if (!out->ops)
		return gpuenv_oom(ctx, "transaction journal");
	for (pos = hlen, line = 2; pos < text.len; line++) {
		const char *nl = memchr(text.ptr + pos, '\n', text.len - pos);
		gpuenv_str_t l;
		if (!nl) {
			/* an incomplete last line: torn while written, whatever it is */
			if (!committed)
				out->torn_line = line;
			break;
		}
		l = gpuenv_str_n(text.ptr + pos, (size_t)(nl - (text.ptr + pos)));
		size_t next = (size_t)(nl - text.ptr) + 1;
		if (committed) {
			if (out->state == GPUENV_TXN_COMMITTED && gpuenv_str_eq_cstr(l, "rollback")) {
				out->state = GPUENV_TXN_ROLLBACK;
				pos = next;
				continue;
			}
			return damaged(ctx, file, line, "a line after the commit mark");
		}
		if (gpuenv_str_startswith(l, "commit ")) {
			unsigned char d[GPUENV_SHA256_LEN];
			char hex[2 * GPUENV_SHA256_LEN + 1], num[32];
			commit_at = pos;
			if (gpuenv_sha256(text.ptr, commit_at, d))
				return gpuenv_oom(ctx, "transaction journal checksum");
			gpuenv_hex(d, sizeof(d), hex);
			snprintf(num, sizeof(num), "%zu", out->nops);
			gpuenv_str_t want = gpuenv_arena_printf(arena, "commit %s %s", num, hex);
			if (!want.ptr)
				return gpuenv_oom(ctx, "transaction journal");
			if (!gpuenv_str_eq(l, want))
				return damaged(ctx, file, line,
					"the commit mark does not match the operations above it "
					"(count or checksum)");
			committed = true;
			out->state = GPUENV_TXN_COMMITTED;
			pos = next;
			continue;
		}
		int r = parse_op(arena, l, &out->ops[out->nops]);
		if (r < 0)
			return gpuenv_oom(ctx, "transaction journal");
		if (r == 0) {
			if (find_commit_after(text, next))
				return damaged(ctx, file, line, "an operation that does not parse");
			out->torn_line = line;
			break;
		}
		out->nops++;
		pos = next;
	}
	if (!committed)
		out->state = GPUENV_TXN_UNFINISHED;
	return 0;
}

/* ---- the file system ---------------------------------------------------- */

enum { T_ABSENT = 0, T_FILE = 1, T_DIR = 2 };

/* The type of rel (relative to dirfd; "" is dirfd itself), symlinks not
 * followed: T_* or -errno. */
static int type_at(int dirfd, const char *rel)
{
	struct stat st;

	if (fstatat(dirfd, rel[0] ? rel : ".", &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT || errno == ENOTDIR ? T_ABSENT : -errno;
	return S_ISDIR(st.st_mode) ? T_DIR : T_FILE;
}

static int rename_noreplace(int dirfd, const char *from, const char *to)
{
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL)
		return -errno;
#endif
	/* no renameat2 here: the lock keeps other gpuenv processes out */
	if (type_at(dirfd, to) != T_ABSENT)
		return -EEXIST;
	return renameat(dirfd, from, dirfd, to) ? -errno : 0;
}

static int fsync_at(int dirfd, const char *rel)
{
	int fd = openat(dirfd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		r = -errno;
	close(fd);
	return r;
}

/* Remove rel (under dirfd) and everything below it; a missing one is fine.
 * is_dir: known to be a folder (readdir said so): no unlink tried first. */
static int rm_tree_at(int dirfd, const char *rel, bool is_dir)
{
	int fd, r = 0;
	DIR *d;
	struct dirent *e;

	if (!is_dir) {
		if (unlinkat(dirfd, rel, 0) == 0 || errno == ENOENT)
			return 0;
		if (errno != EISDIR && errno != EPERM)
			return -errno;
	}
	fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) {
			if (unlinkat(fd, e->d_name, 0) != 0 && errno != ENOENT && !r)
				r = -errno;
			continue;
		}
		int rr = rm_tree_at(fd, e->d_name, e->d_type == DT_DIR);
		if (rr && !r)
			r = rr;
	}
	closedir(d);
	if (unlinkat(dirfd, rel, AT_REMOVEDIR) != 0 && errno != ENOENT && !r)
		r = -errno;
	return r;
}

static int rm_tree(int dirfd, const char *rel)
{
	return rm_tree_at(dirfd, rel, false);
}

struct dent {
	const char *name;
	int type; /* T_FILE or T_DIR */
};

static int dent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

/* The entries of rel (relative to dirfd) into the arena, sorted when asked.
 * A missing folder or a non-folder: -ENOENT / -ENOTDIR (no error
 * recorded); others -errno. */
static int list_dir(gpuenv_arena_t *a, int dirfd, const char *rel, bool sorted, struct dent **out,
	size_t *n)
{
	size_t cap = 16, k = 0;
	struct dent *v = NULL;
	struct dirent *e;
	DIR *d;
	int fd = openat(dirfd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -ENOMEM;
	}
	v = gpuenv_arena_alloc(a, cap * sizeof(*v));
	while (v && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (k == cap) {
			struct dent *nv = gpuenv_arena_alloc(a, 2 * cap * sizeof(*v));
			if (nv)
				memcpy(nv, v, cap * sizeof(*v));
			v = nv;
			cap *= 2;
			if (!v)
				break;
		}
		int t = e->d_type == DT_DIR ? T_DIR : T_FILE;
		if (e->d_type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
				continue;
			t = S_ISDIR(st.st_mode) ? T_DIR : T_FILE;
		}
		v[k].name = gpuenv_arena_strndup(a, e->d_name, strlen(e->d_name));
		v[k++].type = t;
		if (!v[k - 1].name)
			v = NULL;
	}
	closedir(d);
	if (!v)
		return -ENOMEM;
	if (sorted)
		qsort(v, k, sizeof(*v), dent_cmp);
	*out = v;
	*n = k;
	return 0;
}

/* ---- the transaction ---------------------------------------------------- */

struct rmfile {
	const char *path; /* relative to the venv */
	unsigned line;	  /* RECORD line (0: a .pyc found beside) */
	bool present;	  /* seen on disk (a regular file, link, ...) */
};

enum { OV_ABSENT = 1, OV_MKDIR = 2, OV_ALIAS = 3 };

struct overlay {
	int kind;
	int type;	   /* OV_ALIAS: T_FILE or T_DIR */
	const char *alias; /* OV_ALIAS: the staged path now there */
};

/* D's values (folders that hold files to remove) */
enum { D_UNKNOWN = 1, D_OWNED = 2, D_NOT = 3 };

struct gpuenv_txn {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t arena;
	char *prefix;
	int vfd, lockfd;
	const char *rel[GPUENV_SCHEME_N]; /* scheme folders relative to the venv */
	gpuenv_strmap_t protect;	  /* the scheme folders and their parents */
	unsigned nstage;
	int stage_err; /* the stage area could not be made */
	/* removals */
	gpuenv_strmap_t rset; /* path -> struct rmfile */
	struct rmfile **rm;
	size_t nrm, caprm;
	const char **dist_infos; /* removed dist-info folders: always whole */
	size_t ndist_infos, capdist_infos;
	/* installs */
	const char **stages; /* relative to the venv */
	size_t nstages, capstages;
	/* the plan */
	gpuenv_strmap_t dset, overlay, pyparents;
	gpuenv_txn_op_t *ops;
	size_t nops, capops;
	size_t removed_files;
};

/* Room for item n of an arena array (*items a T **; core's growth rule). */
static bool grow(gpuenv_arena_t *a, void *items, size_t *cap, size_t n, size_t elem)
{
	return gpuenv_array_grow(a->ctx, a, items, cap, n + 1, elem, SIZE_MAX, "transaction plan") == 0;
}

static bool map_has(const gpuenv_strmap_t *m, const char *k, size_t n)
{
	bool found;
	gpuenv_strmap_get(m, k, n, &found);
	return found;
}

static const char *adup(gpuenv_txn_t *T, const char *s, size_t n)
{
	return gpuenv_arena_strndup(&T->arena, s, n);
}

/* "a/b" from a and b ("" + b is b) */
static const char *join(gpuenv_txn_t *T, const char *a, const char *b)
{
	gpuenv_str_t s = a[0] ? gpuenv_arena_printf(&T->arena, "%s/%s", a, b)
			       : gpuenv_arena_printf(&T->arena, "%s", b);
	return s.ptr;
}

static int sys_fail(gpuenv_ctx_t *ctx, gpuenv_txn_t *T, int err, const char *rel, const char *what)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s%s%s", T->prefix, rel[0] ? "/" : "", rel);
	gpuenv_fail(ctx, err, path, 0, 0, "%s: %s", what, strerror(-err));
	return gpuenv_fs_full_hint(ctx, err, AT_FDCWD, path, -1, NULL);
}

static void txn_free(gpuenv_txn_t *T)
{
	gpuenv_ctx_t *ctx = T->ctx;

	gpuenv_strmap_free(&T->protect);
	gpuenv_strmap_free(&T->rset);
	gpuenv_strmap_free(&T->dset);
	gpuenv_strmap_free(&T->overlay);
	gpuenv_strmap_free(&T->pyparents);
	gpuenv_free(ctx, T->ops);
	if (T->vfd >= 0)
		close(T->vfd);
	gpuenv_fs_unlock(T->lockfd);
	gpuenv_arena_free(&T->arena);
	gpuenv_free(ctx, T);
}

/* Make rel (a folder under the venv) unless it exists; a new one is made
 * durable in its parent (this happens once in a venv's life). */
static int ensure_dir(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const char *rel)
{
	if (mkdirat(T->vfd, rel, 0755) == 0) {
		char parent[64];
		snprintf(parent, sizeof(parent), "%.*s", (int)parent_len(rel, strlen(rel)), rel);
		fsync_at(T->vfd, parent);
		return 0;
	}
	if (errno == EEXIST && type_at(T->vfd, rel) == T_DIR)
		return 0;
	return sys_fail(ctx, T, errno == EEXIST ? -ENOTDIR : -errno, rel, "cannot make the folder");
}

static long lock_holder(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	uint64_t pid;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	gpuenv_str_t s = gpuenv_str_trim(gpuenv_str_n(buf, (size_t)n));
	return gpuenv_str_to_u64(s, &pid) && pid < LONG_MAX ? (long)pid : 0;
}

static int lock_venv(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, unsigned flags)
{
	char path[PATH_MAX], pid[32];
	int r;

	if ((r = ensure_dir(T, ctx, ".gpuenv")))
		return r;
	snprintf(path, sizeof(path), "%s/.gpuenv/lock", T->prefix);
	r = gpuenv_fs_lock(ctx, path, true, false, &T->lockfd);
	if (r == GPUENV_ELOCKED) {
		long holder = lock_holder(path);
		char who[48] = "";
		if (holder)
			snprintf(who, sizeof(who), " (pid %ld)", holder);
		if (!(flags & GPUENV_TXN_WAIT)) {
			gpuenv_fail(ctx, GPUENV_ELOCKED, path, 0, 0, "another gpuenv is changing %s%s",
				T->prefix, who);
			return gpuenv_hint(ctx, "wait for it to finish and run this again (a sync "
				"waits when asked to)");
		}
		gpuenv_log(ctx, GPUENV_LOG_INFO, "waiting for another gpuenv%s changing %s", who,
			T->prefix);
		gpuenv_error_clear(ctx);
		r = gpuenv_fs_lock(ctx, path, true, true, &T->lockfd);
	}
	if (r) {
		T->lockfd = -1;
		return r;
	}
	/* the holder's pid, for the message of the next one (no fsync: a
	 * lock dies with its process) */
	int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(T->lockfd, 0) == 0 && pwrite(T->lockfd, pid, (size_t)n, 0) != n)
		gpuenv_log(ctx, GPUENV_LOG_DEBUG, "%s: cannot write the pid", path);
	return 0;
}

static int txn_open(gpuenv_ctx_t *ctx, const char *venv, unsigned flags, gpuenv_txn_t **out)
{
	gpuenv_txn_t *T = gpuenv_calloc(ctx, 1, sizeof(*T));
	size_t n = strlen(venv);
	int r;

	*out = NULL;
	if (!T)
		return gpuenv_oom(ctx, "transaction");
	T->ctx = ctx;
	T->vfd = T->lockfd = -1;
	gpuenv_arena_init(&T->arena, ctx, 0);
	T->protect.ctx = T->rset.ctx = T->dset.ctx = T->overlay.ctx = T->pyparents.ctx = ctx;
	while (n > 1 && venv[n - 1] == '/')
		n--;
	T->prefix = gpuenv_arena_strndup(&T->arena, venv, n);
	if (!T->prefix) {
		txn_free(T);
		return gpuenv_oom(ctx, "transaction");
	}
	if (n + 64 >= PATH_MAX) {
		txn_free(T);
		return gpuenv_fail(ctx, -ENAMETOOLONG, venv, 0, 0, "venv path too long");
	}
	T->vfd = open(T->prefix, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (T->vfd < 0) {
		r = gpuenv_fail(ctx, -errno, T->prefix, 0, 0, "cannot open the venv: %s",
			strerror(errno));
		txn_free(T);
		return r;
	}
	if ((r = lock_venv(T, ctx, flags))) {
		txn_free(T);
		return r;
	}
	*out = T;
	return 0;
}

/* ---- executing operations ---------------------------------------------- */

static int op_do(gpuenv_txn_t *T, const gpuenv_txn_op_t *op)
{
	if (op->kind == GPUENV_TXN_MKDIR) {
		if (mkdirat(T->vfd, op->dst, 0755) == 0)
			return 0;
		return errno == EEXIST && type_at(T->vfd, op->dst) == T_DIR ? 0 : -errno;
	}
	return rename_noreplace(T->vfd, op->src, op->dst);
}

static int op_undo(gpuenv_txn_t *T, const gpuenv_txn_op_t *op)
{
	if (op->kind == GPUENV_TXN_MKDIR)
		return unlinkat(T->vfd, op->dst, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -errno;
	return rename_noreplace(T->vfd, op->dst, op->src);
}

/* Is op done, judged from the disk: a staged source gone, a trash entry
 * there, a folder made.  1, 0 or -errno. */
static int op_done(gpuenv_txn_t *T, const gpuenv_txn_op_t *op)
{
	int t;

	if (op->kind == GPUENV_TXN_MKDIR) {
		t = type_at(T->vfd, op->dst);
		return t < 0 ? t : t == T_DIR;
	}
	if (in_stage(op->src)) {
		t = type_at(T->vfd, op->src);
		return t < 0 ? t : t == T_ABSENT;
	}
	t = type_at(T->vfd, op->dst);
	return t < 0 ? t : t != T_ABSENT;
}

static int op_fail(gpuenv_ctx_t *ctx, gpuenv_txn_t *T, const gpuenv_txn_op_t *op, size_t i,
	int err, const char *doing)
{
	if (op->kind == GPUENV_TXN_MKDIR)
		return gpuenv_fail(ctx, err, NULL, 0, 0, "%s: %s operation %zu: mkdir %s/%s: %s",
			T->prefix, doing, i, T->prefix, op->dst, gpuenv_strerror(err));
	return gpuenv_fail(ctx, err, NULL, 0, 0, "%s: %s operation %zu: rename %s to %s: %s",
		T->prefix, doing, i, op->src, op->dst, gpuenv_strerror(err));
}

/* The test hooks (docs/install.md): read through the context. */
struct hooks {
	long crash_at;	     /* -1: none */
	bool journal_half, after_journal, before_cleanup;
	bool rollback_half; /* "rollback-half": in the roll back of an error */
	long fail_at;	     /* GPUENV_TEST_TXN_FAIL_AT: op that fails with EIO */
	unsigned long step_us;
};

static void hooks_read(gpuenv_ctx_t *ctx, struct hooks *h)
{
	const char *c = gpuenv_ctx_getenv(ctx, "GPUENV_TEST_TXN_CRASH_AT");
	const char *f = gpuenv_ctx_getenv(ctx, "GPUENV_TEST_TXN_FAIL_AT");
	const char *s = gpuenv_ctx_getenv(ctx, "GPUENV_TEST_TXN_STEP_US");
	uint64_t v;

	memset(h, 0, sizeof(*h));
	h->crash_at = h->fail_at = -1;
	if (c) {
		if (gpuenv_str_to_u64(gpuenv_str(c), &v) && v < LONG_MAX)
			h->crash_at = (long)v;
		h->journal_half = !strcmp(c, "journal-half");
		h->after_journal = !strcmp(c, "after-journal");
		h->before_cleanup = !strcmp(c, "before-cleanup");
		h->rollback_half = !strcmp(c, "rollback-half");
	}
	if (f && gpuenv_str_to_u64(gpuenv_str(f), &v) && v < LONG_MAX)
		h->fail_at = (long)v;
	if (s && gpuenv_str_to_u64(gpuenv_str(s), &v) && v < 10000000)
		h->step_us = (unsigned long)v;
}

static void crash(void)
{
	_exit(137); /* as a kill -9 would leave it: nothing flushed, nothing cleaned */
}

/* After the last operation (or a complete roll back): the renames made
 * durable, the journal removed, then the trash and the staging. */
static int finish(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const gpuenv_txn_op_t *ops, size_t nops)
{
	gpuenv_strmap_t dirs = { .ctx = ctx };
	int r = 0;

	/* the folders whose entries changed, each once */
	for (size_t i = 0; !r && i < nops; i++) {
		const char *p = ops[i].kind == GPUENV_TXN_MOVE && in_trash(ops[i].dst) ? ops[i].src
										    : ops[i].dst;
		size_t n = parent_len(p, strlen(p));
		if (!map_has(&dirs, p, n)) {
			r = gpuenv_strmap_put(&dirs, p, n, NULL);
			if (!r) {
				char d[GPUENV_TXN_PATH_MAX + 1];
				snprintf(d, sizeof(d), "%.*s", (int)n, p);
				fsync_at(T->vfd, d);
			}
		}
	}
	gpuenv_strmap_free(&dirs);
	if (r)
		return r;
	fsync_at(T->vfd, TRASH_DIR);
	if (unlinkat(T->vfd, JOURNAL, 0) != 0 && errno != ENOENT)
		return sys_fail(ctx, T, -errno, JOURNAL, "cannot remove the journal");
	fsync_at(T->vfd, TXN_DIR);
	rm_tree(T->vfd, TRASH_DIR);
	rm_tree(T->vfd, STAGE_DIR);
	return 0;
}

/* Mark the journal for roll back (durable before the first undo). */
static int mark_rollback(gpuenv_txn_t *T, gpuenv_ctx_t *ctx)
{
	int fd = openat(T->vfd, JOURNAL, O_WRONLY | O_APPEND | O_CLOEXEC), r = 0;

	if (fd < 0)
		return sys_fail(ctx, T, -errno, JOURNAL, "cannot mark the journal for roll back");
	if (write(fd, "rollback\n", 9) != 9 || fsync(fd) != 0)
		r = sys_fail(ctx, T, errno ? -errno : -EIO, JOURNAL,
			"cannot mark the journal for roll back");
	close(fd);
	return r;
}

/* Undo every done operation of ops, last first (judged from the disk). */
static int rollback_all(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const gpuenv_txn_op_t *ops,
	size_t nops, size_t *undone, long crash_at, unsigned long step_us)
{
	for (size_t i = nops; i-- > 0;) {
		if (crash_at == (long)i)
			crash();
		if (step_us)
			usleep((useconds_t)step_us);
		int d = op_done(T, &ops[i]), r;
		if (d < 0)
			return op_fail(ctx, T, &ops[i], i, d, "rolling back");
		if (!d)
			continue;
		if ((r = op_undo(T, &ops[i])))
			return op_fail(ctx, T, &ops[i], i, r, "rolling back");
		if (undone)
			(*undone)++;
	}
	return 0;
}

static int rollback_failed(gpuenv_ctx_t *ctx, gpuenv_txn_t *T)
{
	return gpuenv_hint(ctx, "the roll back stopped; the journal %s/" JOURNAL " stays: the next "
		"gpuenv run on this venv finishes it", T->prefix);
}

/* ---- recovery ----------------------------------------------------------- */

static int txn_recover(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, gpuenv_txn_report_t *rep)
{
	gpuenv_arena_t a;
	gpuenv_buf_t buf;
	gpuenv_txn_journal_t j;
	char jpath[PATH_MAX];
	int r, fd, tj, ts, tt;

	tj = type_at(T->vfd, JOURNAL);
	ts = type_at(T->vfd, STAGE_DIR);
	tt = type_at(T->vfd, TRASH_DIR);
	if (tj < 0 || ts < 0 || tt < 0)
		return sys_fail(ctx, T, tj < 0 ? tj : ts < 0 ? ts : tt, TXN_DIR, "cannot read");
	if (tj == T_ABSENT && ts == T_ABSENT && tt == T_ABSENT)
		return 0; /* the common case: nothing pending, nothing written */
	rep->recovered = true;
	if (tj == T_ABSENT) {
		/* no journal: staging never committed, or the cleanup of a
		 * finished commit interrupted (the trash alone) */
		rep->rolled_forward = ts == T_ABSENT;
		rm_tree(T->vfd, TRASH_DIR);
		rm_tree(T->vfd, STAGE_DIR);
		return 0;
	}
	snprintf(jpath, sizeof(jpath), "%s/" JOURNAL, T->prefix);
	fd = gpuenv_fs_open_regular(ctx, T->vfd, JOURNAL, NULL);
	if (fd < 0)
		return fd;
	gpuenv_buf_init(&buf, ctx, GPUENV_TXN_JOURNAL_MAX + 1);
	r = gpuenv_fs_read_fd(ctx, fd, jpath, GPUENV_TXN_JOURNAL_MAX, &buf);
	close(fd);
	gpuenv_arena_init(&a, ctx, 0);
	if (!r)
		r = gpuenv_txn_journal_parse(ctx, &a, jpath,
			gpuenv_str_n(buf.data ? buf.data : "", buf.len), &j);
	gpuenv_buf_free(&buf);
	if (r)
		goto out;
	rep->ops = j.nops;
	if (j.state == GPUENV_TXN_UNFINISHED) {
		/* never committed, so nothing was renamed: check that the disk
		 * agrees before the staging goes */
		struct dent *v;
		size_t n;
		if (list_dir(&a, T->vfd, TRASH_DIR, false, &v, &n) == 0 && n) {
			r = damaged(ctx, jpath, 0, "no commit mark, yet files were moved to the trash");
			goto out;
		}
		for (size_t i = 0; i < j.nops; i++) {
			const gpuenv_txn_op_t *op = &j.ops[i];
			if (op->kind != GPUENV_TXN_MOVE)
				continue;
			int t = type_at(T->vfd, in_stage(op->src) ? op->src : op->dst);
			if (t < 0 || (t == T_ABSENT) == in_stage(op->src)) {
				r = damaged(ctx, jpath, (unsigned)i + 2,
					"no commit mark, yet this operation looks done");
				goto out;
			}
		}
		r = finish(T, ctx, NULL, 0);
		goto out;
	}
	/* the test hooks of a recovery: a crash before op N, a sleep before each */
	struct hooks h;
	hooks_read(ctx, &h);
	long crash_at = -1;
	const char *c = gpuenv_ctx_getenv(ctx, "GPUENV_TEST_TXN_RECOVER_CRASH_AT");
	uint64_t v;
	if (c && gpuenv_str_to_u64(gpuenv_str(c), &v) && v < LONG_MAX)
		crash_at = (long)v;
	if (j.state == GPUENV_TXN_COMMITTED) {
		size_t i;
		for (i = 0; i < j.nops; i++) {
			if (crash_at == (long)i)
				crash();
			if (h.step_us)
				usleep((useconds_t)h.step_us);
			int d = op_done(T, &j.ops[i]);
			if (d < 0 || (!d && (d = op_do(T, &j.ops[i])) != 0)) {
				r = op_fail(ctx, T, &j.ops[i], i, d, "rolling forward");
				break;
			}
			rep->renames += !d && j.ops[i].kind == GPUENV_TXN_MOVE;
		}
		if (i == j.nops) {
			rep->rolled_forward = true;
			r = finish(T, ctx, j.ops, j.nops);
			goto out;
		}
		/* it cannot be finished (the same full disk, say): back then */
		gpuenv_error_t ferr = ctx->err;
		if (mark_rollback(T, ctx) == 0) {
			ctx->err = ferr;
			j.state = GPUENV_TXN_ROLLBACK;
		}
		if (j.state != GPUENV_TXN_ROLLBACK)
			goto out;
	}
	gpuenv_error_t err = ctx->err;
	int first = r;
	r = rollback_all(T, ctx, j.ops, j.nops, &rep->renames, crash_at, h.step_us);
	if (r) {
		rollback_failed(ctx, T);
		goto out;
	}
	r = finish(T, ctx, j.ops, j.nops);
	if (!r && first) {
		ctx->err = err; /* the roll forward's error says why */
		r = first;
	}
out:
	gpuenv_arena_free(&a);
	return r;
}

/* ---- the public functions ------------------------------------------------ */

static int protect_path(gpuenv_txn_t *T, const char *rel)
{
	size_t n = strlen(rel);
	int r = 0;

	for (; !r && n > 0; n = parent_len(rel, n))
		if (!map_has(&T->protect, rel, n))
			r = gpuenv_strmap_put(&T->protect, rel, n, NULL);
	return r;
}

int gpuenv_txn_begin(gpuenv_ctx_t *ctx, const gpuenv_scheme_t *scheme, unsigned flags,
	gpuenv_txn_report_t *rep, gpuenv_txn_t **out)
{
	gpuenv_txn_report_t dummy;
	gpuenv_txn_t *T;
	int r;

	*out = NULL;
	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	if (!scheme || !scheme->prefix || scheme->prefix[0] != '/')
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0,
			"a transaction needs the venv's absolute path");
	if ((r = txn_open(ctx, scheme->prefix, flags, &T)))
		return r;
	size_t pn = strlen(T->prefix);
	for (int k = 0; k < GPUENV_SCHEME_N; k++) {
		const char *d = scheme->dirs[k];
		size_t dn = d ? strlen(d) : 0;
		while (dn > 1 && d[dn - 1] == '/')
			dn--;
		if (!d || dn < pn || memcmp(d, T->prefix, pn) || (dn > pn && d[pn] != '/')) {
			r = gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, d, 0, 0,
				"the %s folder of the scheme is not inside the venv %s", gpuenv_scheme_key_name(k),
				T->prefix);
			goto fail;
		}
		T->rel[k] = dn > pn ? adup(T, d + pn + 1, dn - pn - 1) : "";
		if (!T->rel[k] || (T->rel[k][0] && !path_ok(T->rel[k], strlen(T->rel[k])))) {
			r = T->rel[k] ? gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, d, 0, 0,
						"the %s folder of the scheme is not a plain path",
						gpuenv_scheme_key_name(k))
				      : gpuenv_oom(ctx, "transaction");
			goto fail;
		}
		if ((r = protect_path(T, T->rel[k])))
			goto fail;
	}
	if ((r = protect_path(T, ".gpuenv")) || (r = txn_recover(T, ctx, rep)))
		goto fail;
	*out = T;
	return 0;
fail:
	txn_free(T);
	return r;
}

const char *gpuenv_txn_stage_dir(gpuenv_txn_t *T, const char *name)
{
	char clean[64];
	size_t k = 0;

	if (!T->stage_err && (T->stage_err = ensure_dir(T, T->ctx, TXN_DIR)) == 0 &&
		mkdirat(T->vfd, STAGE_DIR, 0755) != 0 && errno != EEXIST)
		T->stage_err = sys_fail(T->ctx, T, -errno, STAGE_DIR, "cannot make the folder");
	if (T->stage_err)
		return NULL; /* the reason is in the context's error */
	for (const char *p = name ? name : ""; *p && k + 1 < sizeof(clean); p++)
		clean[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
					(*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'
			? *p
			: '_';
	clean[k] = 0;
	gpuenv_str_t s = gpuenv_arena_printf(&T->arena, "%s/" STAGE_DIR "/%u-%s", T->prefix,
		T->nstage++, k ? clean : "dist");
	if (!s.ptr)
		gpuenv_oom(T->ctx, "stage folder");
	return s.ptr;
}

int gpuenv_txn_install(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const char *stage_dir)
{
	size_t pn = strlen(T->prefix), n = strlen(stage_dir);
	const char *rel;

	if (T->stage_err)
		return T->stage_err;
	rel = n > pn && !memcmp(stage_dir, T->prefix, pn) && stage_dir[pn] == '/'
		? stage_dir + pn + 1
		: NULL;
	if (!rel || !in_stage(rel) || strchr(rel + sizeof(STAGE_DIR), '/'))
		return gpuenv_fail(ctx, GPUENV_EUSAGE, stage_dir, 0, 0,
			"not a stage folder of this transaction (gpuenv_txn_stage_dir gives them)");
	int t = type_at(T->vfd, rel);
	if (t != T_DIR)
		return t < 0 ? sys_fail(ctx, T, t, rel, "cannot read the stage folder")
			     : gpuenv_fail(ctx, GPUENV_ENOTFOUND, stage_dir, 0, 0,
				       "the stage folder was not filled");
	if (!grow(&T->arena, &T->stages, &T->capstages, T->nstages, sizeof(*T->stages)) ||
		!(T->stages[T->nstages] = adup(T, rel, strlen(rel))))
		return gpuenv_oom(ctx, "transaction");
	T->nstages++;
	return 0;
}

/* The RECORD path p of a file of the site folder site_rel, resolved
 * lexically, relative to the venv; NULL when it leaves the venv (or names
 * the venv itself or the transaction area). */
static const char *record_target(gpuenv_txn_t *T, const char *site_rel, gpuenv_str_t p)
{
	size_t pn = strlen(T->prefix);
	gpuenv_str_t s;

	if (!p.len || memchr(p.ptr, 0, p.len))
		return NULL;
	if (p.ptr[0] == '/') {
		if (p.len <= pn + 1 || memcmp(p.ptr, T->prefix, pn) || p.ptr[pn] != '/')
			return NULL;
		s = gpuenv_arena_printf(&T->arena, "%.*s", (int)(p.len - pn - 1), p.ptr + pn + 1);
	} else {
		s = gpuenv_arena_printf(&T->arena, "%s%s" GPUENV_STR_FMT, site_rel,
			site_rel[0] ? "/" : "", GPUENV_STR_ARG(p));
	}
	if (!s.ptr)
		return NULL;
	char *t = (char *)s.ptr;
	gpuenv_fs_tidy_path(t);
	size_t n = strlen(t);
	while (n > 0 && t[n - 1] == '/')
		t[--n] = 0;
	if (!path_ok(t, n) || in_gpuenv(t, n))
		return NULL;
	return t;
}

int gpuenv_txn_remove(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const gpuenv_env_dist_t *dist)
{
	gpuenv_record_t rec;
	size_t pn = strlen(T->prefix);
	char file[PATH_MAX];
	int r;

	snprintf(file, sizeof(file), "%.*s/RECORD", GPUENV_STR_ARG(dist->path));
	if (dist->egg_info || !dist->is_dir) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, dist->path.ptr, 0, 0,
			"%.*s %.*s is an egg-info install: it has no RECORD, so its files are unknown",
			GPUENV_STR_ARG(dist->name), GPUENV_STR_ARG(dist->version));
		return gpuenv_hint(ctx, "reinstall it with an installer that writes RECORD (pip), "
			"or remove it by hand");
	}
	/* the site folder is the dist-info's parent */
	size_t sn = parent_len(dist->path.ptr, dist->path.len);
	if (sn < pn || memcmp(dist->path.ptr, T->prefix, pn) || (sn > pn && dist->path.ptr[pn] != '/'))
		return gpuenv_fail(ctx, GPUENV_EUSAGE, dist->path.ptr, 0, 0,
			"%.*s is not installed in the venv %s", GPUENV_STR_ARG(dist->name), T->prefix);
	const char *site_rel = sn > pn ? adup(T, dist->path.ptr + pn + 1, sn - pn - 1) : "";
	const char *di = site_rel ? join(T, site_rel, dist->entry.ptr) : NULL;
	if (!di)
		return gpuenv_oom(ctx, "transaction");
	r = gpuenv_env_read_record(ctx, &T->arena, dist, &rec);
	if (r == -ENOENT) {
		gpuenv_fail(ctx, GPUENV_EFORMAT, file, 0, 0,
			"%.*s %.*s has no RECORD: its files are unknown, it cannot be removed safely",
			GPUENV_STR_ARG(dist->name), GPUENV_STR_ARG(dist->version));
		return gpuenv_hint(ctx, "reinstall it with an installer that writes RECORD (pip), "
			"or remove it by hand");
	}
	if (r)
		return r;
	/* all checked before any is taken: a refusal leaves the plan as it was */
	const char **paths = rec.n ? gpuenv_arena_calloc(&T->arena, rec.n, sizeof(*paths)) : NULL;
	if (rec.n && !paths)
		return gpuenv_oom(ctx, "transaction");
	for (size_t i = 0; i < rec.n; i++) {
		const gpuenv_record_entry_t *e = &rec.entries[i];
		paths[i] = record_target(T, site_rel, e->path);
		if (paths[i] && gpuenv_venv_own_file(paths[i], strlen(paths[i]))) {
			/* installed over the venv's own file by another installer:
			 * the venv keeps it */
			gpuenv_log(ctx, GPUENV_LOG_WARN, "%s:%u: %s is the venv's own file: kept", file, e->line,
				paths[i]);
			paths[i] = "";
			continue;
		}
		if (!paths[i]) {
			gpuenv_fail(ctx, GPUENV_EFORMAT, file, e->line, 0,
				"'%.*s' is outside the venv %s (or in its .gpuenv folder): refused",
				GPUENV_STR_ARG(e->path), T->prefix);
			return gpuenv_hint(ctx, "this RECORD is damaged or hostile: nothing was removed; "
				"remove %.*s's files by hand", GPUENV_STR_ARG(dist->name));
		}
	}
	for (size_t i = 0; i <= rec.n; i++) {
		/* RECORD itself last, listed or not: the dist-info then always
		 * holds a file to remove, and goes whole */
		const char *p = i < rec.n ? paths[i] : join(T, di, "RECORD");
		size_t n = p ? strlen(p) : 0;
		if (!p)
			return gpuenv_oom(ctx, "transaction");
		if (!n)
			continue; /* the venv's own file */
		if (map_has(&T->rset, p, n))
			continue;
		struct rmfile *f = gpuenv_arena_calloc(&T->arena, 1, sizeof(*f));
		if (!f || !grow(&T->arena, &T->rm, &T->caprm, T->nrm, sizeof(*T->rm)) ||
			gpuenv_strmap_put(&T->rset, p, n, f))
			return gpuenv_oom(ctx, "transaction");
		f->path = p;
		f->line = i < rec.n ? rec.entries[i].line : 0;
		T->rm[T->nrm++] = f;
	}
	if (!grow(&T->arena, &T->dist_infos, &T->capdist_infos, T->ndist_infos,
		    sizeof(*T->dist_infos)))
		return gpuenv_oom(ctx, "transaction");
	T->dist_infos[T->ndist_infos++] = di;
	return 0;
}

/* ---- planning ------------------------------------------------------------ */

static int emit(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, int kind, const char *src, const char *dst)
{
	if (gpuenv_array_grow(ctx, NULL, &T->ops, &T->capops, T->nops + 1, sizeof(*T->ops), SIZE_MAX,
		    "transaction plan"))
		return ctx->err.code;
	if (!dst) {
		gpuenv_str_t t = gpuenv_arena_printf(&T->arena, TRASH_DIR "/%zu", T->nops);
		if (!(dst = t.ptr))
			return gpuenv_oom(ctx, "transaction plan");
	}
	T->ops[T->nops++] = (gpuenv_txn_op_t){ kind, src, dst };
	return 0;
}

static int ov_set(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const char *path, int kind, int type,
	const char *alias)
{
	struct overlay *o = gpuenv_arena_alloc(&T->arena, sizeof(*o));
	if (!o || gpuenv_strmap_put(&T->overlay, path, strlen(path), o))
		return gpuenv_oom(ctx, "transaction plan");
	*o = (struct overlay){ kind, type, alias };
	return 0;
}

/* The type of p in the venv as the operations planned so far leave it. */
static int vstat(gpuenv_txn_t *T, const char *p, int *type)
{
	size_t n = strlen(p);

	for (size_t len = n; len > 0; len = parent_len(p, len)) {
		bool found;
		struct overlay *o = gpuenv_strmap_get(&T->overlay, p, len, &found);
		if (!found)
			continue;
		if (o->kind == OV_ABSENT) {
			*type = T_ABSENT;
		} else if (o->kind == OV_MKDIR) {
			*type = len == n ? T_DIR : T_ABSENT;
		} else if (len == n) {
			*type = o->type;
		} else {
			char path[2 * GPUENV_TXN_PATH_MAX + 2];
			snprintf(path, sizeof(path), "%s%s", o->alias, p + len);
			*type = type_at(T->vfd, path);
		}
		return *type < 0 ? *type : 0;
	}
	*type = type_at(T->vfd, p);
	return *type < 0 ? *type : 0;
}

/* Add the folders from rel up to the first protected one to D. */
static int d_add(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const char *rel, size_t n)
{
	for (; n > 0 && !map_has(&T->protect, rel, n); n = parent_len(rel, n)) {
		if (map_has(&T->dset, rel, n))
			return 0;
		const char *k = adup(T, rel, n);
		int *st = gpuenv_arena_alloc(&T->arena, sizeof(*st));
		if (!k || !st || gpuenv_strmap_put(&T->dset, k, n, st))
			return gpuenv_oom(ctx, "transaction plan");
		*st = D_UNKNOWN;
	}
	return 0;
}

/* The state of a folder of D (its value points into the arena, so that
 * setting it never touches the map); NULL: not in D. */
static int *d_state(gpuenv_txn_t *T, const char *rel, size_t n)
{
	bool found;
	int *v = gpuenv_strmap_get(&T->dset, rel, n, &found);
	return found ? v : NULL;
}

static int d_get(gpuenv_txn_t *T, const char *rel, size_t n)
{
	int *v = d_state(T, rel, n);
	return v ? *v : 0;
}

/* Does every entry under folder d (in D) go: files to remove, folders of
 * D that go, empty folders?  Marks the files seen as present.  Each
 * folder of D is listed once. */
static int owned(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const char *d, int *res)
{
	struct dent *v;
	size_t n;
	bool all = true;
	int r, *st = d_state(T, d, strlen(d));

	if (*st == D_OWNED || *st == D_NOT) {
		*res = *st;
		return 0;
	}
	r = list_dir(&T->arena, T->vfd, d, false, &v, &n);
	if (r == -ENOENT || r == -ENOTDIR) {
		n = 0;
		all = false;
	} else if (r) {
		return sys_fail(ctx, T, r, d, "cannot list");
	}
	for (size_t i = 0; i < n; i++) {
		const char *c = join(T, d, v[i].name);
		size_t cn;
		if (!c)
			return gpuenv_oom(ctx, "transaction plan");
		cn = strlen(c);
		if (v[i].type == T_DIR) {
			int sub;
			if (d_get(T, c, cn)) {
				if ((r = owned(T, ctx, c, &sub)))
					return r;
				all = all && sub == D_OWNED;
			} else if (all) {
				struct dent *e;
				size_t en;
				all = list_dir(&T->arena, T->vfd, c, false, &e, &en) == 0 && en == 0;
			}
			continue;
		}
		bool found;
		struct rmfile *f = gpuenv_strmap_get(&T->rset, c, cn, &found);
		if (found)
			f->present = true;
		else
			all = false;
	}
	*res = *st = all ? D_OWNED : D_NOT;
	return 0;
}

static int rm_cmp(const void *a, const void *b)
{
	return strcmp((*(struct rmfile *const *)a)->path, (*(struct rmfile *const *)b)->path);
}

/* The .pyc files of the .py files to remove: __pycache__/NAME.*.pyc beside
 * each (any interpreter's, any optimisation level). */
static int plan_pyc(gpuenv_txn_t *T, gpuenv_ctx_t *ctx)
{
	size_t n0 = T->nrm;
	int r;

	for (size_t i = 0; i < n0; i++) {
		const char *p = T->rm[i]->path;
		size_t n = strlen(p), pl = parent_len(p, n);
		if (n < 3 || strcmp(p + n - 3, ".py") || map_has(&T->pyparents, p, pl))
			continue;
		if ((r = gpuenv_strmap_put(&T->pyparents, p, pl, NULL)))
			return r;
		gpuenv_str_t pc = gpuenv_arena_printf(&T->arena, "%.*s%s__pycache__", (int)pl, p,
			pl ? "/" : "");
		struct dent *v;
		size_t nv;
		if (!pc.ptr)
			return gpuenv_oom(ctx, "transaction plan");
		r = list_dir(&T->arena, T->vfd, pc.ptr, false, &v, &nv);
		if (r == -ENOENT || r == -ENOTDIR)
			continue;
		if (r)
			return sys_fail(ctx, T, r, pc.ptr, "cannot list");
		for (size_t k = 0; k < nv; k++) {
			const char *name = v[k].name;
			size_t nn = strlen(name);
			if (v[k].type != T_FILE || nn < 5 || strcmp(name + nn - 4, ".pyc"))
				continue;
			/* NAME.TAG.pyc, NAME.TAG.opt-1.pyc: NAME is a prefix before a dot */
			for (size_t dot = 1; dot < nn - 4; dot++) {
				if (name[dot] != '.')
					continue;
				char py[GPUENV_TXN_PATH_MAX + 1];
				int m = snprintf(py, sizeof(py), "%.*s%s%.*s.py", (int)pl, p, pl ? "/" : "",
					(int)dot, name);
				if (m <= 0 || (size_t)m >= sizeof(py) || !map_has(&T->rset, py, (size_t)m))
					continue;
				const char *c = join(T, pc.ptr, name);
				struct rmfile *f = gpuenv_arena_calloc(&T->arena, 1, sizeof(*f));
				if (!c || !f)
					return gpuenv_oom(ctx, "transaction plan");
				if (map_has(&T->rset, c, strlen(c)))
					break;
				if (!grow(&T->arena, &T->rm, &T->caprm, T->nrm, sizeof(*T->rm)) ||
					gpuenv_strmap_put(&T->rset, c, strlen(c), f))
					return gpuenv_oom(ctx, "transaction plan");
				f->path = c;
				f->present = true;
				T->rm[T->nrm++] = f;
				break;
			}
		}
	}
	return 0;
}

static int plan_removals(gpuenv_txn_t *T, gpuenv_ctx_t *ctx)
{
	gpuenv_strmap_t emitted = { .ctx = ctx };
	int r, res;

	if (!T->nrm)
		return 0;
	if ((r = plan_pyc(T, ctx)))
		return r;
	/* which files are there: folders of D are listed (once each), files
	 * right in a protected folder (bin/x, site-packages/six.py) looked at */
	for (size_t i = 0; i < T->nrm; i++) {
		struct rmfile *f = T->rm[i];
		size_t n = strlen(f->path), pl = parent_len(f->path, n);
		if (pl == 0 || map_has(&T->protect, f->path, pl)) {
			int t = type_at(T->vfd, f->path);
			if (t < 0)
				return sys_fail(ctx, T, t, f->path, "cannot read");
			f->present = t == T_FILE;
		} else if ((r = d_add(T, ctx, f->path, pl))) {
			return r;
		}
	}
	for (size_t i = 0; i < T->dset.cap; i++)
		if (T->dset.v[i].key && (r = owned(T, ctx, T->dset.v[i].key, &res)))
			return r;
	/* a removed dist-info goes whole, whatever else is in it */
	for (size_t i = 0; i < T->ndist_infos; i++) {
		int *st = d_state(T, T->dist_infos[i], strlen(T->dist_infos[i]));
		if (st)
			*st = D_OWNED;
	}
	qsort(T->rm, T->nrm, sizeof(*T->rm), rm_cmp);
	for (size_t i = 0; !r && i < T->nrm; i++) {
		const char *p = T->rm[i]->path;
		size_t n = strlen(p), top = n;
		if (!T->rm[i]->present)
			continue;
		T->removed_files++;
		/* the highest folder that goes whole: owned folders form a chain
		 * from the file up */
		for (size_t a = parent_len(p, n); a > 0 && d_get(T, p, a) == D_OWNED;
			a = parent_len(p, a))
			top = a;
		if (map_has(&emitted, p, top))
			continue;
		const char *what = top == n ? p : adup(T, p, top);
		r = !what ? gpuenv_oom(ctx, "planning the removals") : gpuenv_strmap_put(&emitted, what, top, NULL);
		if (!r)
			r = emit(T, ctx, GPUENV_TXN_MOVE, what, NULL);
		if (!r)
			r = ov_set(T, ctx, what, OV_ABSENT, 0, NULL);
	}
	gpuenv_strmap_free(&emitted);
	return r;
}

static int mkdirs_for(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const char *dst)
{
	size_t pl = parent_len(dst, strlen(dst));
	int t, r;

	if (!pl)
		return 0;
	const char *p = adup(T, dst, pl);
	if (!p)
		return gpuenv_oom(ctx, "making the venv's folders");
	if ((r = vstat(T, p, &t)))
		return sys_fail(ctx, T, r, p, "cannot read");
	if (t == T_DIR)
		return 0;
	if (t == T_FILE)
		return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0,
			"%s/%s is a file where a folder is needed", T->prefix, p);
	if ((r = mkdirs_for(T, ctx, p)) || (r = emit(T, ctx, GPUENV_TXN_MKDIR, NULL, p)))
		return r;
	return ov_set(T, ctx, p, OV_MKDIR, T_DIR, NULL);
}

/* Merge the staged src (type stype) into dst. */
static int merge(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const char *src, int stype, const char *dst)
{
	int t, r;

	if (in_gpuenv(dst, strlen(dst)))
		return gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0,
			"%s/%s: a staged file would land in the venv's .gpuenv folder: refused",
			T->prefix, src);
	if (gpuenv_venv_own_file(dst, strlen(dst))) {
		/* the stage folder is "N-name" (gpuenv_txn_stage_dir), then KEY/PATH */
		const char *pkg = src + sizeof(STAGE_DIR);
		pkg += strspn(pkg, "0123456789");
		pkg += *pkg == '-';
		size_t pn = strcspn(pkg, "/");
		gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0,
			"%.*s: its file %s would replace the venv's own %s/%s: refused", (int)pn, pkg,
			pkg[pn] ? pkg + pn + 1 : pkg, T->prefix, dst);
		return gpuenv_hint(ctx, "a script or data file of a wheel may not be named like the venv's "
			"interpreter, activate scripts or pyvenv.cfg; nothing was changed: ask the package's "
			"authors to rename it, or install it outside a venv");
	}
	if ((r = vstat(T, dst, &t)))
		return sys_fail(ctx, T, r, dst, "cannot read");
	if (t == T_ABSENT) {
		if ((r = mkdirs_for(T, ctx, dst)) || (r = emit(T, ctx, GPUENV_TXN_MOVE, src, dst)))
			return r;
		return ov_set(T, ctx, dst, OV_ALIAS, stype, src);
	}
	if (t == T_DIR && stype == T_DIR) {
		struct dent *v;
		size_t n;
		r = list_dir(&T->arena, T->vfd, src, true, &v, &n);
		if (r)
			return sys_fail(ctx, T, r, src, "cannot list the stage folder");
		for (size_t i = 0; !r && i < n; i++) {
			const char *s = join(T, src, v[i].name), *d = join(T, dst, v[i].name);
			r = s && d ? merge(T, ctx, s, v[i].type, d) : gpuenv_oom(ctx, "merging a staged folder");
		}
		return r;
	}
	if (t != T_DIR && stype != T_DIR) {
		/* a file another distribution owns: replaced, the old one kept in
		 * the trash until the commit ends (pip does the same) */
		if ((r = emit(T, ctx, GPUENV_TXN_MOVE, dst, NULL)) ||
			(r = emit(T, ctx, GPUENV_TXN_MOVE, src, dst)))
			return r;
		return ov_set(T, ctx, dst, OV_ALIAS, stype, src);
	}
	gpuenv_fail(ctx, GPUENV_EFORMAT, NULL, 0, 0, "%s/%s is a %s, the staged %s is a %s",
		T->prefix, dst, t == T_DIR ? "folder" : "file", src, stype == T_DIR ? "folder" : "file");
	return gpuenv_hint(ctx, "nothing was changed; remove %s/%s by hand if it is not needed",
		T->prefix, dst);
}

static int plan_installs(gpuenv_txn_t *T, gpuenv_ctx_t *ctx)
{
	int r = 0;

	for (size_t i = 0; !r && i < T->nstages; i++) {
		for (int k = 0; !r && k < GPUENV_SCHEME_N; k++) {
			const char *src = join(T, T->stages[i], gpuenv_scheme_key_name(k));
			int t;
			if (!src)
				return gpuenv_oom(ctx, "planning the installs");
			if ((t = type_at(T->vfd, src)) < 0)
				return sys_fail(ctx, T, t, src, "cannot read");
			if (t == T_ABSENT)
				continue;
			if (T->rel[k][0]) {
				r = merge(T, ctx, src, t, T->rel[k]);
				continue;
			}
			/* the venv itself (data): its entries one by one */
			struct dent *v;
			size_t n;
			if ((r = list_dir(&T->arena, T->vfd, src, true, &v, &n)))
				return sys_fail(ctx, T, r, src, "cannot list the stage folder");
			for (size_t e = 0; !r && e < n; e++) {
				const char *s = join(T, src, v[e].name);
				r = s ? merge(T, ctx, s, v[e].type, v[e].name) : gpuenv_oom(ctx, "planning the installs");
			}
		}
	}
	return r;
}

/* ---- commit ------------------------------------------------------------- */

static int write_journal(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, const struct hooks *h)
{
	gpuenv_buf_t b;
	int fd, r;

	gpuenv_buf_init(&b, ctx, GPUENV_TXN_JOURNAL_MAX);
	if ((r = gpuenv_txn_journal_format(ctx, T->ops, T->nops, &b))) {
		gpuenv_buf_free(&b);
		return r;
	}
	fd = openat(T->vfd, JOURNAL, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = sys_fail(ctx, T, -errno, JOURNAL, "cannot write the journal");
		gpuenv_buf_free(&b);
		return r;
	}
	size_t len = h->journal_half ? b.len / 2 : b.len;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, b.data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = sys_fail(ctx, T, w < 0 ? -errno : -ENOSPC, JOURNAL, "cannot write the journal");
			break;
		}
		off += (size_t)w;
	}
	gpuenv_buf_free(&b);
	if (h->journal_half)
		crash();
	if (!r && fsync(fd) != 0)
		r = sys_fail(ctx, T, -errno, JOURNAL, "cannot write the journal");
	close(fd);
	if (!r && (r = fsync_at(T->vfd, TXN_DIR)))
		r = sys_fail(ctx, T, r, TXN_DIR, "cannot make the journal durable");
	if (r)
		unlinkat(T->vfd, JOURNAL, 0); /* never committed: the venv is untouched */
	return r;
}

int gpuenv_txn_commit(gpuenv_txn_t *T, gpuenv_ctx_t *ctx, gpuenv_txn_report_t *rep)
{
	gpuenv_txn_report_t dummy;
	struct hooks h;
	size_t i;
	int r;

	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	r = T->stage_err;
	if (!r)
		r = plan_removals(T, ctx);
	if (!r)
		r = plan_installs(T, ctx);
	if (r || !T->nops) {
		/* refused while planning, or nothing to do: no journal, no fsync */
		if (T->nstage)
			rm_tree(T->vfd, STAGE_DIR);
		txn_free(T);
		return r;
	}
	rep->ops = T->nops;
	rep->removed_files = T->removed_files;
	for (i = 0; ctx->verbosity >= GPUENV_LOG_DEBUG && i < T->nops; i++)
		gpuenv_log(ctx, GPUENV_LOG_DEBUG, "txn op %zu: %s%s%s %s", i,
			T->ops[i].kind == GPUENV_TXN_MKDIR ? "mkdir" : "mv",
			T->ops[i].src ? " " : "", T->ops[i].src ? T->ops[i].src : "", T->ops[i].dst);
	hooks_read(ctx, &h);
	if ((r = ensure_dir(T, ctx, TXN_DIR)) ||
		(mkdirat(T->vfd, TRASH_DIR, 0755) != 0 && errno != EEXIST &&
			(r = sys_fail(ctx, T, -errno, TRASH_DIR, "cannot make the folder"))) ||
		(r = write_journal(T, ctx, &h))) {
		rm_tree(T->vfd, TRASH_DIR);
		rm_tree(T->vfd, STAGE_DIR);
		txn_free(T);
		return r;
	}
	if (h.after_journal)
		crash();
	for (i = 0; i < T->nops; i++) {
		if (h.crash_at == (long)i)
			crash();
		if (h.step_us)
			usleep((useconds_t)h.step_us);
		r = h.fail_at == (long)i ? -EIO : op_do(T, &T->ops[i]);
		if (r) {
			op_fail(ctx, T, &T->ops[i], i, r, "committing");
			if (h.fail_at == (long)i)
				gpuenv_hint(ctx, "GPUENV_TEST_TXN_FAIL_AT=%ld made it fail", h.fail_at);
			break;
		}
		rep->renames += T->ops[i].kind == GPUENV_TXN_MOVE;
	}
	if (i == T->nops) {
		if (h.crash_at == (long)i || h.before_cleanup)
			crash();
		r = finish(T, ctx, T->ops, T->nops);
		txn_free(T);
		return r;
	}
	/* roll back what was done, last first, after marking the journal so
	 * that a crash on the way back is rolled back too */
	gpuenv_error_t err = ctx->err;
	int rr = mark_rollback(T, ctx);
	for (size_t k = i; !rr && k-- > 0;) {
		if (h.rollback_half && k == i / 2)
			crash();
		if ((rr = op_undo(T, &T->ops[k]))) {
			op_fail(ctx, T, &T->ops[k], k, rr, "rolling back");
			break;
		}
		rep->renames -= T->ops[k].kind == GPUENV_TXN_MOVE;
	}
	if (rr) {
		rollback_failed(ctx, T);
		txn_free(T);
		return rr;
	}
	finish(T, ctx, T->ops, i);
	ctx->err = err;
	txn_free(T);
	return r;
}

void gpuenv_txn_abort(gpuenv_txn_t *T)
{
	if (!T)
		return;
	if (T->nstage)
		rm_tree(T->vfd, STAGE_DIR);
	txn_free(T);
}

int gpuenv_txn_recover(gpuenv_ctx_t *ctx, const char *venv_root, unsigned flags,
	gpuenv_txn_report_t *rep)
{
	gpuenv_txn_report_t dummy;
	gpuenv_txn_t *T;
	int r;

	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	if ((r = txn_open(ctx, venv_root, flags, &T)))
		return r;
	r = txn_recover(T, ctx, rep);
	txn_free(T);
	return r;
}
