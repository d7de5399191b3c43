/* gpuenv zip: a strict reader of a zip file held in memory (a wheel mapped
 * read-only), by its central directory (APPNOTE.TXT 6.3).
 *
 * gpuenv_zip_open checks the whole archive before anything is extracted:
 * the end record (zip64 too), every central directory entry, each entry's
 * local header against its central one, where its data lies (inside the
 * file, before the central directory, overlapping no other entry), its
 * name (relative, no '..' or '.' component, no backslash, NUL, control
 * character or drive letter, valid UTF-8), no symlink, no name twice (a
 * file and a folder of one name included), only stored and deflated
 * entries, and the caps.  gpuenv_zip_extract then inflates one entry in
 * chunks into a sink, checking CRC-32 and the size as it goes: an entry
 * that inflates past its declared size is refused at that point, so a zip
 * bomb never fills a disk.  Every error names the file and the entry
 * ("WHEEL: ENTRY: what is wrong"); names that are not text are escaped
 * (gpuenv_text_escape) in messages. */
#ifndef GPUENV_ZIP_H
#define GPUENV_ZIP_H

#include "gpuenv/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuenv_zip_entry {
	gpuenv_str_t name; /* as stored (points into the archive), no trailing '/' */
	uint64_t csize, usize;
	uint64_t data_off; /* first byte of the (compressed) data */
	uint64_t lho;	   /* the local header */
	uint32_t crc;
	uint16_t method; /* 0 stored, 8 deflated */
	uint16_t flags;
	uint32_t mode;	 /* unix st_mode from the external attributes; 0: none */
	bool is_dir;	 /* the name ended with '/' */
} gpuenv_zip_entry_t;

/* Caps; 0 in a field: the default. */
typedef struct gpuenv_zip_limits {
	uint64_t max_entries; /* 0: 200000 */
	uint64_t max_total;   /* uncompressed bytes of all entries; 0: 16 GiB */
	uint64_t max_entry;   /* uncompressed bytes of one entry; 0: 8 GiB */
	unsigned max_ratio;   /* uncompressed / compressed of an entry larger
				 than GPUENV_ZIP_RATIO_MIN; 0: 1000 */
} gpuenv_zip_limits_t;

/* Entries up to this size are not held to max_ratio: real wheels hold
 * files that compress 300:1 and more (botocore's endpoints.json is 337:1),
 * and inflating past the declared size is refused at any size anyway. */
#define GPUENV_ZIP_RATIO_MIN ((uint64_t)64 << 20)

typedef struct gpuenv_zip {
	const char *file;	  /* for messages */
	const unsigned char *data; /* the archive, not owned */
	uint64_t size;
	gpuenv_zip_limits_t lim;  /* with the defaults filled in */
	size_t n;
	gpuenv_zip_entry_t *entries; /* central directory order, in the arena */
	size_t *sorted;		     /* indexes of entries by name (byte order) */
	uint64_t total;		     /* sum of usize */
} gpuenv_zip_t;

/* Check and index the archive data[0..size) (see above).  file names it in
 * messages.  GPUENV_EFORMAT, GPUENV_ETOOBIG, GPUENV_EUNSUPPORTED
 * (encrypted, another method), GPUENV_EDUPLICATE, -ENOMEM; ctx->err set. */
GPUENV_API int gpuenv_zip_open(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *file,
	const void *data, uint64_t size, const gpuenv_zip_limits_t *lim, gpuenv_zip_t *out);

/* The entry called name (exact), or NULL. */
GPUENV_API const gpuenv_zip_entry_t *gpuenv_zip_find(const gpuenv_zip_t *z, gpuenv_str_t name);

/* Receives the uncompressed bytes in order; a non-zero return stops the
 * extraction and is returned (record it in ctx first). */
typedef int (*gpuenv_zip_sink_fn)(void *ud, const void *p, size_t n);

/* Inflate (or copy) one entry into sink, checking CRC-32 and the size.
 * GPUENV_EFORMAT / GPUENV_ETOOBIG with "FILE: ENTRY: ..." in ctx->err. */
GPUENV_API int gpuenv_zip_extract(gpuenv_ctx_t *ctx, const gpuenv_zip_t *z,
	const gpuenv_zip_entry_t *e, gpuenv_zip_sink_fn sink, void *ud);

/* One entry inflated whole into out, which has exactly e->usize bytes of
 * room (a large file written in one piece; about twice zlib's speed), with
 * the checks of gpuenv_zip_extract.  inflater: gpuenv_zip_inflater_new's,
 * one per thread (NULL from it: out of memory). */
GPUENV_API int gpuenv_zip_inflate_to(gpuenv_ctx_t *ctx, const gpuenv_zip_t *z,
	const gpuenv_zip_entry_t *e, void *inflater, void *out);
GPUENV_API void *gpuenv_zip_inflater_new(void);
GPUENV_API void gpuenv_zip_inflater_free(void *inflater);

/* One entry into memory (arena, NUL-terminated), refused with GPUENV_ETOOBIG
 * above max bytes. */
GPUENV_API int gpuenv_zip_read(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const gpuenv_zip_t *z,
	const gpuenv_zip_entry_t *e, size_t max, gpuenv_str_t *out);

/* ---- pieces for a reader that sees the archive in ranges --------------
 * (lib/index reads a remote wheel's METADATA by HTTP ranges with these;
 * gpuenv_zip_open is built on them too.) */

typedef struct gpuenv_zip_end {
	uint64_t cd_off, cd_size, count; /* the central directory */
	uint64_t end_at;   /* offset of the end record (zip64's, once read) */
	uint64_t end64_at; /* not 0: the zip64 end record still to be read
			      there (56 bytes) with gpuenv_zip_end64 */
} gpuenv_zip_end_t;

/* The end record in tail[0..n), the file's bytes from tail_off on (its
 * last 64 KiB + 42 hold it).  exact: nothing may follow the record's
 * comment (the installer's rule); otherwise trailing bytes are allowed.
 * GPUENV_EFORMAT "not a readable wheel: ...", GPUENV_EUNSUPPORTED. */
GPUENV_API int gpuenv_zip_end(gpuenv_ctx_t *ctx, const char *file, const void *tail, size_t n,
	uint64_t tail_off, bool exact, gpuenv_zip_end_t *out);
/* The zip64 end record rec[0..n) (read at out->end64_at) into out. */
GPUENV_API int gpuenv_zip_end64(gpuenv_ctx_t *ctx, const char *file, const void *rec, size_t n,
	gpuenv_zip_end_t *out);
/* The central directory entry at p[0..n) into e (the name as stored, less
 * a trailing '/'; sizes and offset with zip64's extra field applied; the
 * unix mode) and its length into *len.  No name, local header or cap
 * check: gpuenv_zip_open does those. */
GPUENV_API int gpuenv_zip_cd_entry(gpuenv_ctx_t *ctx, const char *file, const void *p, size_t n,
	gpuenv_zip_entry_t *e, size_t *len);

/* The length of the local header at p[0..n) (30 bytes, the name and the
 * extra field: where the entry's data starts); 0 when p does not start
 * with a local header's signature or is shorter than 30 bytes. */
GPUENV_API uint64_t gpuenv_zip_local_len(const void *p, size_t n);

/* Is this a name gpuenv writes to disk (the name rules above)?  0, or
 * GPUENV_EFORMAT with "FILE: NAME: why" recorded (file may be NULL). */
GPUENV_API int gpuenv_zip_check_name(gpuenv_ctx_t *ctx, const char *file, gpuenv_str_t name);

#ifdef __cplusplus
}
#endif
#endif
