/* gpuenv txn: changing a venv's set of distributions as one transaction.
 *
 * A sync stages every new distribution first (gpuenv_wheel_stage into
 * gpuenv_txn_stage_dir: nothing visible changes), then commits: the
 * journal (VENV/.gpuenv/txn/journal) lists every rename the commit will do,
 * old files moved to VENV/.gpuenv/txn/trash and staged entries moved into
 * place, and is made durable before the first rename.  A staged folder
 * whose destination does not exist moves as one rename; one that exists
 * (site-packages, bin, a namespace package such as nvidia/) is merged entry
 * by entry, so a package costs a few renames, not one per file.
 *
 * Recovery (gpuenv_txn_recover, run by gpuenv_txn_begin and by every verb
 * that opens a venv gpuenv manages): a journal that was not completely
 * written (no commit mark) means the venv was never touched: the staging
 * is removed (rolled back); a committed journal is replayed to its end
 * (rolled forward: every step is idempotent: a rename whose source is gone
 * and whose destination exists is done).  So after a kill -9 at any instant
 * the next run leaves the old set or the new set, never a mix.  An error
 * in the middle of a commit (a full disk while making a folder) rolls the
 * renames done so far back, in reverse order.
 *
 * One process at a time changes a venv: VENV/.gpuenv/lock (flock,
 * exclusive) is held from gpuenv_txn_begin to commit or abort.
 *
 * CONTRACT (sync codes against exactly this): the structures and functions
 * below.  Their owner (the "txn" part) may add fields and functions, never
 * rename, remove or change the meaning of these.
 */
#ifndef GPUENV_TXN_H
#define GPUENV_TXN_H

#include "gpuenv/core.h"
#include "gpuenv/env.h"
#include "gpuenv/install.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpuenv_txn gpuenv_txn_t;

typedef struct gpuenv_txn_report {
	bool recovered;	     /* a pending transaction was found */
	bool rolled_forward; /* ... and completed (else rolled back) */
	size_t renames;	     /* renames this call did */
	size_t removed_files; /* files of removed distributions */
	/* added by the txn part: */
	size_t ops;	     /* operations in the journal of this call's commit
			        (or of the recovered one); 0: nothing to do */
} gpuenv_txn_report_t;

enum {
	GPUENV_TXN_WAIT = 1u << 0, /* wait for the venv's lock (else GPUENV_ELOCKED) */
};

/* Lock the venv (scheme->prefix), recover a pending transaction (rep, may
 * be NULL, says what was done), and start a new one.  0, GPUENV_ELOCKED
 * ("another gpuenv is changing VENV (pid N)"), or -errno. */
GPUENV_API int gpuenv_txn_begin(gpuenv_ctx_t *ctx, const gpuenv_scheme_t *scheme, unsigned flags,
	gpuenv_txn_report_t *rep, gpuenv_txn_t **out);

/* A fresh stage folder path for one distribution (not created: give it to
 * gpuenv_wheel_stage), under the transaction's folder on the venv's file
 * system.  Valid until commit or abort.  NULL on out of memory, or (added
 * by the txn part) when the stage area cannot be made (a full disk): then
 * the error is recorded in the context given to gpuenv_txn_begin. */
GPUENV_API const char *gpuenv_txn_stage_dir(gpuenv_txn_t *txn, const char *name);

/* Plan the removal of an installed distribution: every file its RECORD
 * lists (paths relative to its site folder; a path that leaves the venv is
 * refused: GPUENV_EFORMAT), the .pyc files of its .py files, and the
 * folders that become empty.  A dist-info without RECORD cannot be
 * removed safely: GPUENV_EFORMAT naming it (and the fix: reinstall it with
 * an installer that writes RECORD, or remove it by hand). */
GPUENV_API int gpuenv_txn_remove(gpuenv_txn_t *txn, gpuenv_ctx_t *ctx, const gpuenv_env_dist_t *dist);

/* Plan the install of a staged distribution (stage_dir from
 * gpuenv_txn_stage_dir, filled by gpuenv_wheel_stage). */
GPUENV_API int gpuenv_txn_install(gpuenv_txn_t *txn, gpuenv_ctx_t *ctx, const char *stage_dir);

/* Journal, rename, clean up, unlock, free txn (in every case).  Removals
 * happen before installs; a file of an installed distribution that
 * another distribution also owns is replaced (pip's behaviour), the old
 * one kept in the trash until the commit ends.  0, or an error after which
 * the venv is as it was before the commit (rolled back). */
GPUENV_API int gpuenv_txn_commit(gpuenv_txn_t *txn, gpuenv_ctx_t *ctx, gpuenv_txn_report_t *rep);

/* Drop the transaction before its commit: staging removed, lock released,
 * txn freed. */
GPUENV_API void gpuenv_txn_abort(gpuenv_txn_t *txn);

/* Recover a pending transaction without starting one (takes and releases
 * the lock).  0 when there was none or it was recovered. */
GPUENV_API int gpuenv_txn_recover(gpuenv_ctx_t *ctx, const char *venv_root, unsigned flags,
	gpuenv_txn_report_t *rep);

/* ---- the journal (added by the txn part; docs/install.md, "Transactions
 * and crash safety") ------------------------------------------------------
 * VENV/.gpuenv/txn/journal, text, one operation a line, paths relative to
 * the venv with the bytes ' ', '%', controls and DEL written %XX:
 *
 *   gpuenv-txn 1
 *   mkdir include/site/python3.12
 *   mv lib/python3.12/site-packages/torch .gpuenv/txn/trash/1
 *   mv .gpuenv/txn/stage/0-torch/platlib/torch lib/python3.12/site-packages/torch
 *   commit 3 SHA256-HEX-OF-THE-LINES-ABOVE
 *   rollback                      (only after an error in the commit)
 *
 * Every mv has exactly one side in the transaction folder: a source under
 * .gpuenv/txn/stage/ (done once that source is gone) or a destination
 * under .gpuenv/txn/trash/ (done once that destination exists), so each
 * step can be judged done or not from the disk alone. */
#define GPUENV_TXN_JOURNAL_MAX ((size_t)256 << 20)
#define GPUENV_TXN_PATH_MAX 4096

enum gpuenv_txn_op_kind {
	GPUENV_TXN_MKDIR = 1, /* dst made (a missing scheme folder) */
	GPUENV_TXN_MOVE = 2,  /* src renamed to dst (dst absent) */
};

typedef struct gpuenv_txn_op {
	int kind;
	const char *src; /* MOVE only */
	const char *dst;
} gpuenv_txn_op_t;

enum gpuenv_txn_state {
	GPUENV_TXN_UNFINISHED = 0, /* no commit mark (a torn tail is allowed) */
	GPUENV_TXN_COMMITTED = 1,  /* commit mark, checksum right: roll forward */
	GPUENV_TXN_ROLLBACK = 2,   /* committed, then marked for roll back */
};

typedef struct gpuenv_txn_journal {
	int state;
	size_t nops;
	gpuenv_txn_op_t *ops;
	unsigned torn_line; /* UNFINISHED: the line where the readable part ends
			       (a torn or missing tail), 0: none */
} gpuenv_txn_journal_t;

/* Read a journal (text of len bytes; file names it in messages).  A
 * journal without its commit mark is UNFINISHED: the ops read up to the
 * first line that is incomplete or does not parse (a crash while it was
 * written).  A journal with a commit mark must be exact: the count and the
 * checksum must match, every line parse, nothing but "rollback" follow;
 * anything else is GPUENV_EFORMAT with the line ("damaged journal"), and a
 * header of another version GPUENV_EUNSUPPORTED. */
GPUENV_API int gpuenv_txn_journal_parse(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena,
	const char *file, gpuenv_str_t text, gpuenv_txn_journal_t *out);

/* Append the journal of ops (header, ops, commit mark) to out.
 * GPUENV_EFORMAT for a path the parser would refuse. */
GPUENV_API int gpuenv_txn_journal_format(gpuenv_ctx_t *ctx, const gpuenv_txn_op_t *ops,
	size_t nops, gpuenv_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif
