/* gpuenv kb bundles: a newer knowledge base, signed, installed per user
 * (docs/kb.md, "Updating the knowledge base").
 *
 * A bundle is one zip file (stored or deflated entries) holding
 *
 *   MANIFEST      text, one item a line:
 *                   gpuenv-kb-bundle 1
 *                   date YYYY-MM-DD            the date of its about.toml
 *                   key KEYID                  16 hex digits: the signer
 *                   file NAME SIZE SHA256HEX   one per KB file it carries
 *   MANIFEST.sig  the Ed25519 signature (64 raw bytes) of MANIFEST's bytes
 *   NAME ...      the TOML files the manifest lists, and nothing else
 *
 * A bundle is accepted only when all of it holds: the zip reads strictly
 * (lib/formats/zip.c), the manifest parses, its signature verifies with a
 * key compiled into this binary (gpuenv_kb_trusted_keys), every listed
 * file is there with its size and SHA-256 and nothing else is, the files
 * load as a knowledge base (the embedded copy standing in for a file the
 * bundle does not carry), and their about.toml has the manifest's date.
 *
 * Installed bundles live in folders <bundles>/<date>-<id>/ (MANIFEST,
 * MANIFEST.sig, the files), <bundles> being gpuenv_kb_bundle_dir's answer;
 * a folder appears by one rename of a complete, fsynced staging folder, so
 * a crash leaves the old state.  Every load of the knowledge base without
 * --kb-dir uses the newest installed bundle that is newer than the
 * embedded knowledge base and still checks (the signature and the hashes of
 * the files it reads, again, at every load): a damaged one is passed over
 * with a warning, and with none the embedded knowledge base is used. */
#ifndef GPUENV_KB_BUNDLE_H
#define GPUENV_KB_BUNDLE_H

#include "gpuenv/core.h"
#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUENV_KB_BUNDLE_MAX ((size_t)64 << 20) /* a bundle file */
#define GPUENV_KB_MANIFEST_MAX ((size_t)16 << 10)
#define GPUENV_KB_SIG_LEN 64
#define GPUENV_KB_KEY_LEN 32

typedef struct gpuenv_kb_key {
	const char *name; /* "release", "test" */
	unsigned char pub[GPUENV_KB_KEY_LEN];
	char id[17];	  /* hex of the first 8 bytes of SHA-256(pub) */
} gpuenv_kb_key_t;

/* The Ed25519 public keys this binary trusts (the release key; the test
 * key too in a build configured with -Dkb_test_key=true). */
GPUENV_API size_t gpuenv_kb_trusted_keys(const gpuenv_kb_key_t **out);

typedef struct gpuenv_kb_manifest_file {
	int id; /* enum gpuenv_kb_file_id */
	uint64_t size;
	unsigned char sha256[32];
} gpuenv_kb_manifest_file_t;

typedef struct gpuenv_kb_manifest {
	char date[11];	 /* "2026-12-01" */
	char key_id[17];
	gpuenv_kb_manifest_file_t file[GPUENV_KB_NFILES];
	unsigned n;
} gpuenv_kb_manifest_t;

/* Parse a MANIFEST (above).  origin names it in errors ("ORIGIN:LINE:
 * what is wrong").  GPUENV_EFORMAT / GPUENV_ETOOBIG. */
GPUENV_API int gpuenv_kb_manifest_parse(gpuenv_ctx_t *ctx, const char *origin, const char *text,
	size_t len, gpuenv_kb_manifest_t *out);

/* A checked bundle: its manifest, the key that signed it, and the bytes of
 * the files it carries (in the arena given to the function that made it). */
typedef struct gpuenv_kb_bundle {
	gpuenv_kb_manifest_t m;
	const gpuenv_kb_key_t *key;
	gpuenv_str_t manifest;
	unsigned char sig[GPUENV_KB_SIG_LEN];
	gpuenv_kb_source_t src[GPUENV_KB_NFILES];
	size_t n;
} gpuenv_kb_bundle_t;

/* Check a bundle file held in memory (everything above, the load
 * included).  origin: the file or URL, for messages.  GPUENV_EFORMAT (not
 * a bundle, a hash or size that differs, a file too many or missing),
 * -EPERM (no valid signature by a trusted key), GPUENV_ETOOBIG, or
 * the load's error; ctx->err says which part failed and how to fix it. */
GPUENV_API int gpuenv_kb_bundle_check(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *origin,
	const void *data, size_t size, gpuenv_kb_bundle_t *out);

/* The folder of installed bundles: $GPUENV_DATA_DIR/kb, else
 * $XDG_DATA_HOME/gpuenv/kb (an absolute XDG_DATA_HOME), else
 * $HOME/.local/share/gpuenv/kb.  GPUENV_ENOTFOUND when none is set. */
GPUENV_API int gpuenv_kb_bundle_dir(gpuenv_ctx_t *ctx, char *out, size_t size);

/* Install a checked bundle into bundles (created as needed) as
 * <date>-<id>/, atomically and durably; path_out gets the folder.  0 when
 * installed, 1 when that bundle was installed already; <0 on error, with
 * nothing left behind. */
GPUENV_API int gpuenv_kb_bundle_install(gpuenv_ctx_t *ctx, const gpuenv_kb_bundle_t *b,
	const char *bundles, char *path_out, size_t size);

/* One installed bundle, as the folder says. */
typedef struct gpuenv_kb_installed {
	char path[4096];
	char date[11];	 /* from its MANIFEST; "" when that does not parse */
	int err;	 /* 0: it checks; else why not, in why */
	char why[512];
} gpuenv_kb_installed_t;

/* The installed bundles in bundles, newest date first (at most max; *n
 * gets how many there are).  mask: the files whose hashes are checked.
 * A missing folder is no bundle (0). */
GPUENV_API int gpuenv_kb_bundle_list(gpuenv_ctx_t *ctx, const char *bundles, unsigned mask,
	gpuenv_kb_installed_t *out, size_t max, size_t *n);

/* Read and check the installed bundle in dir: the manifest, the signature
 * and the files in mask (read into arena; files the manifest has but mask
 * leaves out are not read).  The load itself is the caller's. */
GPUENV_API int gpuenv_kb_bundle_read_dir(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir,
	unsigned mask, gpuenv_kb_bundle_t *out);

/* The embedded knowledge base's date (its about.toml), "" if it has none. */
GPUENV_API const char *gpuenv_kb_embedded_date(void);

/* Make a bundle (the maintainer's side, and the tests'): every KB file in
 * dir (as --kb-dir reads them; at least about.toml), dated by dir's
 * about.toml, signed with the Ed25519 private key in the PEM file key_pem;
 * the zip is appended to out.  The result passes gpuenv_kb_bundle_check
 * when the key is trusted. */
GPUENV_API int gpuenv_kb_bundle_make(gpuenv_ctx_t *ctx, const char *dir, const char *key_pem,
	gpuenv_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif
