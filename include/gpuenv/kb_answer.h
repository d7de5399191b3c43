/* gpuenv kb answers: the questions `gpuenv kb` asks, answered by the
 * library as query results and as the JSON documents docs/kb.md describes,
 * so every client (the CLI, and next the resolver and the lock) gets the
 * same answer in the same shape.  The CLI keeps option parsing and text.
 *
 * JSON builders return a new reference, or NULL when jansson runs out of
 * memory.  Every fact in them carries a "source" object (file, line,
 * source, secondary[, note]) naming the knowledge-base row it comes from.
 */
#ifndef GPUENV_KB_ANSWER_H
#define GPUENV_KB_ANSWER_H

#include <jansson.h>

#include "gpuenv/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* {"file", "line", "source", "secondary"[, "note"]} of a row; null for NULL. */
GPUENV_API json_t *gpuenv_kb_row_json(const gpuenv_kb_row_t *row);

/* ---- kb torch ------------------------------------------------------------------ */

typedef struct gpuenv_kb_torch_question {
	const gpuenv_kb_target_t *target; /* GPU and driver, each optional */
	const char *version; /* "2.5", "2.5.1", "2.5.1+cu124"; NULL: every release */
} gpuenv_kb_torch_question_t;

typedef struct gpuenv_kb_torch_answer {
	const gpuenv_kb_torch_variant_t **builds; /* newest release, then newest CUDA, first */
	gpuenv_kb_torch_verdict_t *verdicts;	  /* one per build */
	size_t n, yes;
	bool judged;	       /* the target has a GPU or a driver */
	gpuenv_kb_pick_t pick; /* judged only: gpuenv_kb_torch_pick for someone on version */
} gpuenv_kb_torch_answer_t;

/* The builds of version and their verdicts on the target; in arena.
 * GPUENV_EVERSION (not a torch version), GPUENV_ENOTFOUND (no such build),
 * -ENOMEM, each recorded in kb->ctx->err. */
GPUENV_API int gpuenv_kb_ask_torch(const gpuenv_kb_t *kb, const gpuenv_kb_torch_question_t *q,
	gpuenv_arena_t *arena, gpuenv_kb_torch_answer_t *out);
/* {"gpu", "driver", "builds": [...], "runs": ["2.7 cu128", ...], "pick"}; gpu
 * is the match the question's GPU came from (NULL: none). */
GPUENV_API json_t *gpuenv_kb_torch_json(const gpuenv_kb_t *kb, const gpuenv_kb_torch_question_t *q,
	const gpuenv_kb_torch_answer_t *a, const gpuenv_kb_gpu_match_t *gpu);

/* ---- kb driver ------------------------------------------------------------------ */

/* {"version", "max_cuda", "max_release", "minor_compat", "branch"} */
GPUENV_API json_t *gpuenv_kb_driver_json(const gpuenv_kb_t *kb, const gpuenv_kb_ver_t *driver);
/* {"cuda", "min_driver", "min_driver_windows", "source", "releases", "minor_compat"}
 * for the GA row of a CUDA version (gpuenv_kb_cuda_min_driver). */
GPUENV_API json_t *gpuenv_kb_cuda_json(const gpuenv_kb_t *kb, const gpuenv_kb_toolkit_t *ga);

/* ---- kb gpu ------------------------------------------------------------------------- */

/* One GPU: name, compute capability, sm, architecture, segment, PCI rows,
 * first / last CUDA, the torch builds with code for it, how it matched. */
GPUENV_API json_t *gpuenv_kb_gpu_json(const gpuenv_kb_t *kb, const gpuenv_kb_gpu_match_t *m);
/* {"query", "ambiguous", "gpus": [...]} */
GPUENV_API json_t *gpuenv_kb_gpus_json(const gpuenv_kb_t *kb, const char *query,
	const gpuenv_kb_gpu_match_t *m, size_t n, bool ambiguous);

/* ---- kb image ------------------------------------------------------------------------- */

/* {"query", "images": [...]}: each image's contents and, when the question
 * named a driver (and a GPU), the verdict of gpuenv_kb_image_check. */
GPUENV_API json_t *gpuenv_kb_images_json(const gpuenv_kb_t *kb, const char *query,
	const gpuenv_kb_image_ref_t *img, const gpuenv_kb_image_verdict_t *iv, size_t n, bool driver,
	bool gpu);
/* "yes", "minor-version-compat", "forward-compat", "no", "unknown" */
GPUENV_API const char *gpuenv_kb_runs_name(int runs);

/* ---- kb sources ------------------------------------------------------------------------ */

/* {"files": [{"name", "origin", "bytes", "rows", "tables"}], "rows"} */
GPUENV_API json_t *gpuenv_kb_sources_json(const gpuenv_kb_t *kb);

/* `kb info`: the date, where the files come from (embedded, a bundle,
 * --kb-dir), the row counts, the documents the rows cite (grouped by host),
 * the newest release of each kind, the installed bundles and the trusted
 * keys (lib/kb/info.c). bundles: the bundle folder, NULL to leave them out. */
GPUENV_API json_t *gpuenv_kb_info_json(const gpuenv_kb_t *kb, const char *bundles);

#ifdef __cplusplus
}
#endif
#endif
