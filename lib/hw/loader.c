/* loader.c: which copy of each DT_NEEDED library glibc's ld.so would load.
 *
 * The search follows glibc's _dl_map_object (elf/dl-load.c), in order:
 *  0. a name with a '/' is a path;
 *  1. an already-loaded object whose soname, path or earlier request name
 *     equals the name is reused;
 *  2. unless the needing object has DT_RUNPATH: DT_RPATH of the needing
 *     object, then of the object that loaded it, and so on up to the root
 *     (an object with both RPATH and RUNPATH has its RPATH ignored);
 *  3. LD_LIBRARY_PATH;
 *  4. DT_RUNPATH of the needing object only;
 *  5. /etc/ld.so.cache, unless the needing object has DF_1_NODEFLIB;
 *  6. the default folders, same exception.
 * In every folder of 2-4 and 6, glibc-hwcaps/<sub>/ for each supported
 * subfolder is tried first.  A candidate that is not an ELF of the root's
 * class and machine is skipped (ld.so's open_verify), as is a cache entry
 * whose file is gone.  $ORIGIN is the folder of the path the object was
 * opened under (not symlink-resolved), as in ld.so.
 *
 * Not modelled: LD_PRELOAD, the legacy hwcap folders (tls, x86_64 ...) that
 * glibc < 2.37 still searched, secure (setuid) mode, dlopen flags.
 *
 * ELF files are read with gpuenv/elf.h: mmap, headers, dynamic section and
 * dynamic strings only, so a 1 GB libtorch_cuda.so costs a few page faults.
 * Candidates are checked with a 20-byte pread of their ELF header. */
#include "gpuenv/fs.h"
#include "stack_int.h"

#include "gpuenv/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* ---- ELF ------------------------------------------------------------------
 * The shared ELF reader (gpuenv/elf.h) does the parsing; what the loader
 * needs is copied into the caller's arena so the mapping can go at once. */

static uint64_t rd(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int copy_strs(gpuenv_arena_t *a, const gpuenv_str_t *in, size_t n, size_t skip,
	gpuenv_str_t **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	if (n <= skip)
		return 0;
	*out = gpuenv_arena_calloc(a, n - skip, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = skip; i < n; i++) {
		(*out)[i - skip] = gpuenv_arena_str(a, in[i]);
		if (!(*out)[i - skip].ptr)
			return -ENOMEM;
	}
	*nout = n - skip;
	return 0;
}

static int from_elf(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_elf_t *elf,
	gpuenv_ld_elf_t *out)
{
	gpuenv_elf_dynamic_t dyn;
	int r;

	out->machine = elf->machine;
	out->is64 = true; /* the reader takes ELF64 only */
	out->is_dso = elf->type == GPUENV_ET_DYN;
	r = gpuenv_elf_dynamic(ctx, elf, arena, &dyn);
	if (r == GPUENV_ENOTFOUND) {
		gpuenv_error_clear(ctx); /* a static executable or an object file */
		return 0;
	}
	if (r)
		return r;
	/* DF_1_NODEFLIB lives in DT_FLAGS_1, which the reader leaves alone */
	for (size_t i = 0; i < elf->nsegments; i++) {
		const gpuenv_elf_segment_t *sg = &elf->segments[i];
		if (sg->type != 2) /* PT_DYNAMIC, bounds checked by the reader */
			continue;
		for (uint64_t o = 0; o + 16 <= sg->filesz; o += 16) {
			uint64_t tag = rd(elf->data + sg->offset + o, 8);
			if (tag == 0)
				break;
			if (tag == 0x6ffffffb) /* DT_FLAGS_1 */
				out->nodeflib = (rd(elf->data + sg->offset + o + 8, 8) & 0x800) != 0;
		}
		break;
	}
	if (dyn.soname.ptr && !(out->soname = gpuenv_arena_str(arena, dyn.soname)).ptr)
		return -ENOMEM;
	if (dyn.rpath.ptr && !(out->rpath = gpuenv_arena_str(arena, dyn.rpath)).ptr)
		return -ENOMEM;
	if (dyn.runpath.ptr && !(out->runpath = gpuenv_arena_str(arena, dyn.runpath)).ptr)
		return -ENOMEM;
	if ((r = copy_strs(arena, dyn.needed, dyn.nneeded, 0, &out->needed, &out->nneeded)))
		return r;
	/* the first version definition is the file's own name (VER_FLG_BASE) */
	return copy_strs(arena, dyn.verdef, dyn.nverdef, 1, &out->verdefs, &out->nverdefs);
}

int gpuenv_ld_parse_elf(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const void *data, size_t len,
	const char *name, gpuenv_ld_elf_t *out)
{
	gpuenv_elf_t elf;
	int r;

	memset(out, 0, sizeof(*out));
	r = gpuenv_elf_parse(ctx, name ? name : "ELF", data, len, &elf);
	if (r)
		return r;
	r = from_elf(ctx, arena, &elf, out);
	gpuenv_elf_close(&elf);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

int gpuenv_ld_read_elf(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *path,
	gpuenv_ld_elf_t *out)
{
	char full[PATH_MAX];
	gpuenv_elf_t elf;
	int r;

	memset(out, 0, sizeof(*out));
	if (!stack_rooted(ctx, path, full, sizeof(full)))
		return gpuenv_fail(ctx, -ENAMETOOLONG, path, 0, 0, "path too long");
	r = gpuenv_elf_open(ctx, full, &elf);
	if (r)
		return r;
	r = from_elf(ctx, arena, &elf, out);
	gpuenv_elf_close(&elf);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

/* ---- the per-probe cache of ELF facts ------------------------------------- */

struct stack_elfitem {
	dev_t dev;
	ino_t ino;
	int error;
	gpuenv_ld_elf_t elf;
};

int stack_elf_get(gpuenv_ctx_t *ctx, struct stack_elfcache *c, const char *path, dev_t dev,
	ino_t ino, const gpuenv_ld_elf_t **out)
{
	struct stack_elfitem *it = c->items.items;
	int r;

	for (size_t i = 0; i < c->items.n; i++)
		if (it[i].dev == dev && it[i].ino == ino) {
			*out = &it[i].elf;
			return it[i].error;
		}
	gpuenv_ld_elf_t elf;
	r = gpuenv_ld_read_elf(ctx, c->arena, path, &elf);
	if (r == -ENOMEM)
		return r;
	struct stack_elfitem *slot = stack_vec_push(c->arena, &c->items, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	slot->dev = dev;
	slot->ino = ino;
	slot->error = r;
	slot->elf = elf;
	*out = &slot->elf;
	return r;
}

/* ---- the search ----------------------------------------------------------- */

const char *gpuenv_ldsrc_name(int how)
{
	static const char *const names[GPUENV_LDSRC_COUNT] = {
		[GPUENV_LDSRC_NOTFOUND] = "not found",
		[GPUENV_LDSRC_LOADED] = "already loaded",
		[GPUENV_LDSRC_DIRECT] = "direct",
		[GPUENV_LDSRC_RPATH] = "rpath",
		[GPUENV_LDSRC_LD_LIBRARY_PATH] = "LD_LIBRARY_PATH",
		[GPUENV_LDSRC_RUNPATH] = "runpath",
		[GPUENV_LDSRC_LDCACHE] = "ld.so.cache",
		[GPUENV_LDSRC_DEFAULT] = "default",
	};
	return how >= 0 && how < GPUENV_LDSRC_COUNT ? names[how] : "unknown";
}

const char *const *stack_default_dirs(unsigned machine, bool is64)
{
	/* Debian/Ubuntu multiarch folders first (their ld.so's system path),
	 * then the lib64 / lib of Fedora, SUSE and upstream glibc */
	static const char *const x86_64[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL };
	static const char *const aarch64[] = { "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL };
	static const char *const ppc64le[] = { "/lib/powerpc64le-linux-gnu",
		"/usr/lib/powerpc64le-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL };
	static const char *const i386[] = { "/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu",
		"/lib32", "/usr/lib32", "/lib", "/usr/lib", NULL };
	static const char *const other64[] = { "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL };
	static const char *const other32[] = { "/lib", "/usr/lib", NULL };

	switch (machine) {
	case 62: return is64 ? x86_64 : other32;
	case 183: return aarch64;
	case 21: return ppc64le;
	case 3: return i386;
	default: return is64 ? other64 : other32;
	}
}

static const char *platform_of(unsigned machine)
{
	switch (machine) {
	case 62: return "x86_64";
	case 183: return "aarch64";
	case 21: return "powerpc64le";
	case 3: return "i686";
	default: return "";
	}
}

static const char *lib_of(unsigned machine, bool is64)
{
	switch (machine) {
	case 62: return is64 ? "lib/x86_64-linux-gnu" : "lib";
	case 183: return "lib/aarch64-linux-gnu";
	default: return is64 ? "lib64" : "lib";
	}
}

struct known {
	gpuenv_str_t name;
	size_t object;
};

struct lctx {
	gpuenv_ctx_t *ctx;
	gpuenv_arena_t *a;
	const gpuenv_loader_opts_t *o;
	unsigned machine;
	bool is64;
	const char *platform, *lib;
	const char *const *defaults;
	const char *llp;
	struct svec objects; /* gpuenv_ld_object_t */
	struct svec ids;     /* struct fileid, parallel to objects */
	struct svec known;   /* struct known */
	struct stack_elfcache *cache;
};

struct fileid {
	dev_t dev;
	ino_t ino;
};

#define OBJ(L, i) (((gpuenv_ld_object_t *)(L)->objects.items)[i])

/* Candidate checks are remembered by path for the whole probe: every
 * framework binary asks for libc.so.6 & co. through the same folders. */
struct stack_verified {
	uint64_t hash;
	gpuenv_str_t path;
	bool exists; /* a regular file with an ELF header */
	unsigned char cls, data;
	unsigned machine;
	dev_t dev;
	ino_t ino;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Is this file an ELF of the root's class and machine?  (dev, ino) out. */
static bool verify(struct lctx *L, const char *path, dev_t *dev, ino_t *ino)
{
	char full[PATH_MAX];
	unsigned char h[20];
	struct stat st;
	struct stack_verified *v = L->cache->verified.items, *slot = NULL;
	uint64_t hash = fnv(path);
	int fd;

	for (size_t i = 0; i < L->cache->verified.n; i++)
		if (v[i].hash == hash && strcmp(v[i].path.ptr, path) == 0) {
			slot = &v[i];
			goto answer;
		}
	slot = stack_vec_push(L->a, &L->cache->verified, sizeof(*slot));
	if (slot) {
		slot->path = stack_strdup(L->a, path, strlen(path));
		if (!slot->path.ptr) {
			L->cache->verified.n--;
			slot = NULL;
		}
	}
	struct stack_verified tmp = { 0 };
	if (!slot)
		slot = &tmp; /* out of memory: check without remembering */
	slot->hash = hash;
	if (!stack_rooted(L->ctx, path, full, sizeof(full)))
		goto answer;
	/* a candidate of a search: a FIFO or device there is skipped unopened
	 * for reading, as it must not block */
	fd = gpuenv_fs_open_regular(NULL, AT_FDCWD, full, &st);
	if (fd < 0)
		goto answer;
	if (pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		memcmp(h, "\177ELF", 4) == 0) {
		slot->exists = true;
		slot->cls = h[4];
		slot->data = h[5];
		slot->machine = (unsigned)rd(h + 18, 2);
		slot->dev = st.st_dev;
		slot->ino = st.st_ino;
	}
	close(fd);
answer:
	if (!slot->exists || slot->cls != (L->is64 ? 2 : 1) || slot->data != 1 || slot->machine != L->machine)
		return false;
	*dev = slot->dev;
	*ino = slot->ino;
	return true;
}

/* Expand $ORIGIN, $PLATFORM, $LIB (also as ${...}) in one path element;
 * false for an unknown token (ld.so drops such an element). */
static bool expand(struct lctx *L, gpuenv_str_t elem, const char *origin, char *out, size_t outsz)
{
	size_t o = 0;

	for (size_t i = 0; i < elem.len;) {
		const char *val = NULL;
		size_t skip = 0;
		if (elem.ptr[i] == '$') {
			static const struct { const char *tok; int id; } toks[] = {
				{ "ORIGIN", 0 }, { "PLATFORM", 1 }, { "LIB", 2 } };
			gpuenv_str_t rest = gpuenv_str_n(elem.ptr + i + 1, elem.len - i - 1);
			for (size_t t = 0; t < 3 && !val; t++) {
				size_t tl = strlen(toks[t].tok);
				const char *v = toks[t].id == 0 ? origin : toks[t].id == 1 ? L->platform : L->lib;
				if (!v)
					continue;
				if (rest.len >= tl && memcmp(rest.ptr, toks[t].tok, tl) == 0 &&
					(rest.len == tl || !((rest.ptr[tl] >= 'A' && rest.ptr[tl] <= 'Z') ||
						(rest.ptr[tl] >= 'a' && rest.ptr[tl] <= 'z') ||
						(rest.ptr[tl] >= '0' && rest.ptr[tl] <= '9') || rest.ptr[tl] == '_'))) {
					val = v;
					skip = 1 + tl;
				} else if (rest.len >= tl + 2 && rest.ptr[0] == '{' &&
					memcmp(rest.ptr + 1, toks[t].tok, tl) == 0 && rest.ptr[tl + 1] == '}') {
					val = v;
					skip = 3 + tl;
				}
			}
			if (!val)
				return false;
			size_t vl = strlen(val);
			if (o + vl >= outsz)
				return false;
			memcpy(out + o, val, vl);
			o += vl;
			i += skip;
		} else {
			if (o + 1 >= outsz)
				return false;
			out[o++] = elem.ptr[i++];
		}
	}
	out[o] = '\0';
	return true;
}

struct hit {
	gpuenv_str_t path, dir, rule;
	dev_t dev;
	ino_t ino;
};

/* Try name in one folder (glibc-hwcaps subfolders first): 1 found, 0 not,
 * -ENOMEM. */
static int try_dir(struct lctx *L, const char *dir, gpuenv_str_t name, struct hit *h)
{
	char p[PATH_MAX];
	int n;

	if (!dir[0])
		dir = "."; /* an empty element means the current folder */
	for (size_t k = 0; L->o->hwcaps && L->o->hwcaps[k]; k++) {
		n = snprintf(p, sizeof(p), "%s/glibc-hwcaps/%s/%.*s", dir, L->o->hwcaps[k],
			GPUENV_STR_ARG(name));
		if (n > 0 && (size_t)n < sizeof(p) && verify(L, p, &h->dev, &h->ino)) {
			h->dir = gpuenv_arena_printf(L->a, "%s/glibc-hwcaps/%s", dir, L->o->hwcaps[k]);
			h->path = stack_strdup(L->a, p, (size_t)n);
			return h->dir.ptr && h->path.ptr ? 1 : -ENOMEM;
		}
	}
	n = snprintf(p, sizeof(p), "%s%s%.*s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		GPUENV_STR_ARG(name));
	if (n > 0 && (size_t)n < sizeof(p) && verify(L, p, &h->dev, &h->ino)) {
		h->dir = stack_strdup(L->a, dir, strlen(dir));
		h->path = stack_strdup(L->a, p, (size_t)n);
		return h->dir.ptr && h->path.ptr ? 1 : -ENOMEM;
	}
	return 0;
}

/* Same file as the winner? */
static bool same(const struct hit *a, const struct hit *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* The outcome of one search: the first hit wins, the later ones (with
 * opts.alternatives) are the copies it hides. */
struct search_out {
	int how;
	size_t rule_owner;
	struct hit win;
	struct svec shadowed; /* gpuenv_str_t */
	bool found;
};

static int record(struct lctx *L, struct search_out *s, int how, size_t owner, const struct hit *h)
{
	if (!s->found) {
		s->found = true;
		s->how = how;
		s->rule_owner = owner;
		s->win = *h;
		return 0;
	}
	if (same(&s->win, h))
		return 0;
	for (size_t i = 0; i < s->shadowed.n; i++)
		if (gpuenv_str_eq(((gpuenv_str_t *)s->shadowed.items)[i], h->path))
			return 0;
	gpuenv_str_t *p = stack_vec_push(L->a, &s->shadowed, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = h->path;
	return 0;
}

/* Search a colon list (RPATH, RUNPATH, LD_LIBRARY_PATH), recording hits;
 * 1 when the search is over (a hit and no alternatives wanted). */
static int try_list(struct lctx *L, struct search_out *s, int how, size_t owner, gpuenv_str_t list,
	const char *origin, gpuenv_str_t name)
{
	gpuenv_str_t rest = list;

	while (rest.ptr) {
		gpuenv_str_t elem;
		char dir[PATH_MAX];
		struct hit h;
		size_t i = 0;
		int r;
		while (i < rest.len && rest.ptr[i] != ':' && rest.ptr[i] != ';')
			i++;
		elem = gpuenv_str_n(rest.ptr, i);
		rest = i < rest.len ? gpuenv_str_n(rest.ptr + i + 1, rest.len - i - 1) : GPUENV_STR_NULL;
		if (!expand(L, elem, origin, dir, sizeof(dir)))
			continue;
		memset(&h, 0, sizeof(h));
		if ((r = try_dir(L, dir, name, &h)) < 0)
			return r;
		if (!r)
			continue;
		h.rule = gpuenv_arena_str(L->a, elem);
		if (!h.rule.ptr || (r = record(L, s, how, owner, &h)))
			return h.rule.ptr ? r : -ENOMEM;
		if (!L->o->alternatives)
			return 1;
	}
	return 0;
}

static int search(struct lctx *L, size_t obj, gpuenv_str_t name, struct search_out *s)
{
	const gpuenv_ld_elf_t *e = &OBJ(L, obj).elf;
	bool all = L->o->alternatives;
	struct hit h;
	int r;

	memset(s, 0, sizeof(*s));
	s->rule_owner = SIZE_MAX;
	/* 2: RPATH chain, only when the needing object has no RUNPATH */
	if (!e->runpath.ptr) {
		for (size_t o = obj; o != SIZE_MAX; o = OBJ(L, o).parent) {
			const gpuenv_ld_elf_t *oe = &OBJ(L, o).elf;
			if (!oe->rpath.ptr || oe->runpath.ptr)
				continue;
			gpuenv_str_t origin = stack_dirname(L->a, OBJ(L, o).path.ptr);
			if (!origin.ptr)
				return -ENOMEM;
			if ((r = try_list(L, s, GPUENV_LDSRC_RPATH, o, oe->rpath, origin.ptr, name)))
				return r < 0 ? r : 0;
		}
	}
	/* 3: LD_LIBRARY_PATH ($ORIGIN there would be the main program's:
	 * unknown, so such elements are dropped) */
	if (L->llp && L->llp[0] &&
		(r = try_list(L, s, GPUENV_LDSRC_LD_LIBRARY_PATH, SIZE_MAX, gpuenv_str(L->llp), NULL, name)))
		return r < 0 ? r : 0;
	/* 4: RUNPATH of the needing object */
	if (e->runpath.ptr) {
		gpuenv_str_t origin = stack_dirname(L->a, OBJ(L, obj).path.ptr);
		if (!origin.ptr)
			return -ENOMEM;
		if ((r = try_list(L, s, GPUENV_LDSRC_RUNPATH, SIZE_MAX, e->runpath, origin.ptr, name)))
			return r < 0 ? r : 0;
	}
	if (e->nodeflib)
		return 0;
	/* 5: ld.so.cache */
	if (L->o->cache) {
		const gpuenv_ldcache_entry_t *ce = gpuenv_ldcache_lookup(L->o->cache, name,
			gpuenv_ldcache_flags_for(L->machine, L->is64), L->o->hwcaps);
		memset(&h, 0, sizeof(h));
		if (ce && verify(L, ce->path.ptr, &h.dev, &h.ino)) {
			h.path = ce->path;
			h.dir = stack_dirname(L->a, ce->path.ptr);
			if (!h.dir.ptr)
				return -ENOMEM;
			if ((r = record(L, s, GPUENV_LDSRC_LDCACHE, SIZE_MAX, &h)))
				return r;
			if (!all)
				return 0;
		}
	}
	/* 6: default folders */
	for (size_t i = 0; L->defaults[i]; i++) {
		memset(&h, 0, sizeof(h));
		if ((r = try_dir(L, L->defaults[i], name, &h)) < 0)
			return r;
		if (!r)
			continue;
		if ((r = record(L, s, GPUENV_LDSRC_DEFAULT, SIZE_MAX, &h)))
			return r;
		if (!all)
			return 0;
	}
	return 0;
}

/* A lexically tidied path when it names the same file, else the path as is. */
static gpuenv_str_t tidy_same(struct lctx *L, gpuenv_str_t path, dev_t dev, ino_t ino)
{
	char t[PATH_MAX], full[PATH_MAX];
	struct stat st;

	if (path.len >= sizeof(t))
		return path;
	memcpy(t, path.ptr, path.len + 1);
	gpuenv_fs_tidy_path(t);
	if (strcmp(t, path.ptr) == 0)
		return path;
	if (!stack_rooted(L->ctx, t, full, sizeof(full)) || stat(full, &st) != 0 ||
		st.st_dev != dev || st.st_ino != ino)
		return path;
	return stack_strdup(L->a, t, strlen(t));
}

static int add_known(struct lctx *L, gpuenv_str_t name, size_t obj)
{
	struct known *k;

	if (!name.ptr)
		return 0;
	k = stack_vec_push(L->a, &L->known, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->name = name;
	k->object = obj;
	return 0;
}

static size_t find_known(struct lctx *L, gpuenv_str_t name)
{
	const struct known *k = L->known.items;
	for (size_t i = 0; i < L->known.n; i++)
		if (gpuenv_str_eq(k[i].name, name))
			return k[i].object;
	return SIZE_MAX;
}

/* An object already loaded from the same file (ld.so compares device and
 * inode after opening), or SIZE_MAX. */
static size_t find_file(struct lctx *L, dev_t dev, ino_t ino)
{
	const struct fileid *f = L->ids.items;
	for (size_t i = 0; i < L->ids.n; i++)
		if (f[i].dev == dev && f[i].ino == ino)
			return i;
	return SIZE_MAX;
}

/* Append an object; reads its ELF facts. */
static int add_object(struct lctx *L, gpuenv_str_t path, dev_t dev, ino_t ino, size_t parent,
	unsigned depth, size_t *idx)
{
	gpuenv_ld_object_t *o = stack_vec_push(L->a, &L->objects, sizeof(*o));
	struct fileid *f = stack_vec_push(L->a, &L->ids, sizeof(*f));
	int r;

	if (!o || !f)
		return -ENOMEM;
	f->dev = dev;
	f->ino = ino;
	o->path = path;
	o->parent = parent;
	o->depth = depth;
	*idx = L->objects.n - 1;
	const gpuenv_ld_elf_t *elf;
	r = stack_elf_get(L->ctx, L->cache, path.ptr, dev, ino, &elf);
	if (r == -ENOMEM)
		return r;
	o = &OBJ(L, *idx);
	if (r) {
		o->error = r;
		gpuenv_error_clear(L->ctx);
	} else {
		o->elf = *elf; /* arrays shared with the cache, same arena lifetime */
	}
	if ((r = add_known(L, path, *idx)) || (r = add_known(L, o->elf.soname, *idx)))
		return r;
	return 0;
}

int gpuenv_loader_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *binary,
	const gpuenv_loader_opts_t *opts, gpuenv_ld_resolution_t *out)
{
	return stack_loader_resolve(ctx, arena, NULL, binary, opts, out);
}

int stack_loader_resolve(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, struct stack_elfcache *cache,
	const char *binary, const gpuenv_loader_opts_t *opts, gpuenv_ld_resolution_t *out)
{
	static const gpuenv_loader_opts_t defaults;
	struct stack_elfcache local = { .arena = arena };
	struct lctx L;
	size_t root, max;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&L, 0, sizeof(L));
	L.ctx = ctx;
	L.a = arena;
	L.cache = cache ? cache : &local;
	L.o = opts ? opts : &defaults;
	max = L.o->max_objects ? L.o->max_objects : 512;
	out->binary = stack_strdup(arena, binary, strlen(binary));
	if (!out->binary.ptr)
		return -ENOMEM;
	{
		char full[PATH_MAX];
		struct stat st;
		if (!stack_rooted(ctx, binary, full, sizeof(full)))
			return gpuenv_fail(ctx, -ENAMETOOLONG, binary, 0, 0, "path too long");
		if (stat(full, &st) != 0)
			return gpuenv_fail(ctx, -errno, binary, 0, 0, "%s", strerror(errno));
		if ((r = add_object(&L, out->binary, st.st_dev, st.st_ino, SIZE_MAX, 0, &root)))
			return r;
	}
	if (OBJ(&L, root).error) {
		/* read again to give the caller the story */
		gpuenv_ld_elf_t tmp;
		r = gpuenv_ld_read_elf(ctx, arena, binary, &tmp);
		return r ? r : OBJ(&L, root).error;
	}
	L.machine = OBJ(&L, root).elf.machine;
	L.is64 = OBJ(&L, root).elf.is64;
	L.platform = L.o->platform ? L.o->platform : platform_of(L.machine);
	L.lib = L.o->lib ? L.o->lib : lib_of(L.machine, L.is64);
	L.defaults = L.o->default_dirs ? L.o->default_dirs : stack_default_dirs(L.machine, L.is64);
	L.llp = L.o->ld_library_path ? L.o->ld_library_path : gpuenv_ctx_getenv(ctx, "LD_LIBRARY_PATH");

	for (size_t i = 0; i < L.objects.n; i++) {
		size_t nneeded = OBJ(&L, i).elf.nneeded;
		gpuenv_ld_need_t *needs = gpuenv_arena_calloc(arena, nneeded ? nneeded : 1, sizeof(*needs));
		if (!needs)
			return -ENOMEM;
		OBJ(&L, i).needs = needs;
		for (size_t k = 0; k < nneeded; k++) {
			gpuenv_ld_need_t *n = &needs[k];
			struct search_out s;
			size_t idx;

			n->name = OBJ(&L, i).elf.needed[k];
			n->object = SIZE_MAX;
			n->rule_owner = SIZE_MAX;
			idx = find_known(&L, n->name);
			if (idx != SIZE_MAX) {
				n->how = GPUENV_LDSRC_LOADED;
				n->object = idx;
				n->path = OBJ(&L, idx).path;
				continue;
			}
			if (memchr(n->name.ptr, '/', n->name.len)) {
				struct hit h;
				memset(&h, 0, sizeof(h));
				memset(&s, 0, sizeof(s));
				if (verify(&L, n->name.ptr, &h.dev, &h.ino)) {
					s.found = true;
					s.how = GPUENV_LDSRC_DIRECT;
					s.rule_owner = SIZE_MAX;
					h.path = n->name;
					s.win = h;
				}
			} else if ((r = search(&L, i, n->name, &s))) {
				return r;
			}
			if (!s.found) {
				n->how = GPUENV_LDSRC_NOTFOUND;
				out->nmissing++;
				continue;
			}
			n->how = s.how;
			n->path = tidy_same(&L, s.win.path, s.win.dev, s.win.ino);
			if (!n->path.ptr)
				return -ENOMEM;
			n->dir = s.win.dir;
			n->rule = s.win.rule;
			n->rule_owner = s.rule_owner;
			n->shadowed = s.shadowed.items;
			n->nshadowed = s.shadowed.n;
			/* the same file under another name or path is the object
			 * already loaded */
			idx = find_file(&L, s.win.dev, s.win.ino);
			if (idx == SIZE_MAX) {
				if (L.objects.n >= max) {
					out->truncated = true;
					n->how = GPUENV_LDSRC_NOTFOUND;
					n->path = GPUENV_STR_NULL;
					continue;
				}
				if ((r = add_object(&L, n->path, s.win.dev, s.win.ino, i,
					     OBJ(&L, i).depth + 1, &idx)))
					return r;
			} else {
				n->how = GPUENV_LDSRC_LOADED;
				n->path = OBJ(&L, idx).path;
			}
			n->object = idx;
			if ((r = add_known(&L, n->name, idx)))
				return r;
		}
	}
	out->objects = L.objects.items;
	out->nobjects = L.objects.n;
	return 0;
}
