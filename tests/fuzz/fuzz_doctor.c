/* Fuzz target: doctor and preflight (of a lock too) over arbitrary JSON.  The facts come from
 * anywhere (--facts FILE), so every rule must survive any shape: missing
 * fields, wrong types, huge or negative numbers, strings where arrays go.
 * A document without "schema" gets one, so the rules run on it; the facts
 * written again (gpuenv_facts_json) decode and write to the same bytes.
 * Then the decoder and the rules again with an allocation failing
 * (fuzz_alloc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gpuenv/doctor.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"
#include "gpuenv/pylock.h"

#include "fuzz_alloc.h"

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb; /* loaded once: the harness may keep state, the library does not */

/* preflight --lock over the same facts: a gpuenv lock with torch, a CUDA
 * wheel and a wheel for another machine (read once, like the KB; its
 * allocation failures are fuzz_preflight_lock's and test_doctor's) */
#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"
static const char lock_text[] =
	"lock-version = \"1.0\"\ncreated-by = \"gpuenv\"\nrequires-python = \">=3.10\"\n\n"
	"[[packages]]\nname = \"numpy\"\nversion = \"2.3.5\"\nwheels = [{ name = "
	"\"numpy-2.3.5-cp312-cp312-manylinux_2_28_aarch64.whl\", url = \"https://x/n.whl\", "
	"hashes = { sha256 = \"" Z64 "\" } }]\n\n"
	"[[packages]]\nname = \"nvidia-cudnn-cu12\"\nversion = \"9.5.1.17\"\nwheels = [{ name = "
	"\"nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux_2_27_x86_64.whl\", url = \"https://x/c.whl\", "
	"hashes = { sha256 = \"" Z64 "\" } }]\n\n"
	"[[packages]]\nname = \"torch\"\nversion = \"2.7.0+cu128\"\nwheels = [{ name = "
	"\"torch-2.7.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl\", url = \"https://x/t.whl\", "
	"hashes = { sha256 = \"" Z64 "\" } }]\n\n"
	"[tool.gpuenv]\ntarget = \"h100\"\ngpu = \"NVIDIA H100\"\ncompute-capability = \"9.0\"\n"
	"driver = \"570.133.20\"\npython = \"3.12\"\nbackend = \"cu128\"\n";
static gpuenv_arena_t lock_arena;
static gpuenv_lock_t lock;

/* The facts parsed and decoded, doctor and a preflight, under fuzz_oom's
 * failing allocator: every error recorded, memory running out reported as
 * such (never a syntax error, never success). */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *c, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;
	json_error_t jerr;
	json_t *doc;

	gpuenv_arena_init(&a, c, 0);
	OOM_CALL(o, c, gpuenv_facts_parse(c, &a, (const char *)data, size, "fuzz.json", &f));
	/* with a schema, so the rules run (the document from plain malloc) */
	doc = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &jerr);
	if (json_is_object(doc) && !json_object_get(doc, "schema"))
		json_object_set_new(doc, "schema", json_string("gpuenv.facts/1"));
	if (doc && OOM_CALL(o, c, gpuenv_facts_decode(c, &a, doc, NULL, &f)) == 0) {
		gpuenv_doctor_opts_t opts = { .kb = kb };
		gpuenv_preflight_req_t req = { .torch = "2.7.0+cu128", .kb = kb };
		gpuenv_verdicts_t v;
		gpuenv_preflight_t p;
		OOM_CALL(o, c, gpuenv_doctor_check(c, &a, f, &opts, &v));
		OOM_CALL(o, c, gpuenv_preflight_check(c, &a, f, &req, &p));
	}
	json_decref(doc);
	gpuenv_arena_free(&a);
}

/* The one writer over whatever the decoder made of the input: it
 * succeeds, and what it writes decodes and writes again to the same bytes
 * (the snapshot format's round trip, lib/facts/write.c). */
static void writer_fixed_point(const gpuenv_facts_t *facts)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *again;
	json_t *j1, *j2;
	char *s1, *s2;

	if (gpuenv_facts_json(&ctx, facts, &j1) != 0)
		abort();
	gpuenv_arena_init(&a, &ctx, 0);
	if (gpuenv_facts_decode(&ctx, &a, j1, NULL, &again) != 0 ||
		gpuenv_facts_json(&ctx, again, &j2) != 0)
		abort();
	s1 = json_dumps(j1, JSON_COMPACT);
	s2 = json_dumps(j2, JSON_COMPACT);
	if (!s1 || !s2 || strcmp(s1, s2) != 0)
		abort();
	free(s1);
	free(s2);
	json_decref(j1);
	json_decref(j2);
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const gpuenv_preflight_req_t reqs[] = {
		{ .cuda = "12.2" },
		{ .torch = "2.7.0+cu128" },
		{ .torch = "2.11.0" },
		{ .image = "nvcr.io/nvidia/tritonserver:24.10-py3" },
		{ .image = "nvidia/cuda:12.4.1-runtime-ubuntu22.04" },
		{ .lock = &lock, .lock_path = "pylock.toml" },
	};
	json_error_t jerr;
	json_t *doc, *out;
	const gpuenv_facts_t *facts;
	gpuenv_arena_t fa;

	if (!kb) {
		gpuenv_ctx_init(&ctx);
		if (gpuenv_kb_load_files(&ctx, NULL, GPUENV_DOCTOR_KB_FILES, &kb) != 0)
			abort();
		gpuenv_arena_init(&lock_arena, &ctx, 0);
		if (gpuenv_pylock_parse(&ctx, &lock_arena, "pylock.toml", gpuenv_str(lock_text), &lock) != 0)
			abort();
	}
	/* the text as the verbs read it: every syntax and schema error is
	 * reported, never a crash */
	gpuenv_arena_init(&fa, &ctx, 0);
	if (gpuenv_facts_parse(&ctx, &fa, (const char *)data, size, "fuzz.json", &facts) != 0 &&
		!ctx.err.msg[0])
		abort();
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&fa);
	fuzz_oom(data, size, oom_run);
	doc = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &jerr);
	if (!doc)
		return 0;
	if (json_is_object(doc) && !json_object_get(doc, "schema"))
		json_object_set_new(doc, "schema", json_string("gpuenv.facts/1"));
	gpuenv_arena_init(&fa, &ctx, 0);
	if (gpuenv_facts_decode(&ctx, &fa, doc, NULL, &facts) != 0) {
		gpuenv_error_clear(&ctx);
		gpuenv_arena_free(&fa);
		json_decref(doc);
		return 0;
	}
	writer_fixed_point(facts);

	for (int pass = 0; pass < 2; pass++) {
		gpuenv_arena_t arena;
		gpuenv_doctor_opts_t opts = { .kb = kb, .env = pass ? "/srv/venv" : NULL };
		gpuenv_verdicts_t v;
		gpuenv_arena_init(&arena, &ctx, 0);
		if (gpuenv_doctor_check(&ctx, &arena, facts, &opts, &v) == 0) {
			size_t n = 0;
			for (int s = 0; s < 3; s++)
				n += v.count[s];
			if (n != v.n)
				abort();
			out = gpuenv_verdicts_json(&v);
			json_decref(out);
		}
		gpuenv_error_clear(&ctx);
		gpuenv_arena_free(&arena);
	}
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		gpuenv_arena_t arena;
		gpuenv_preflight_req_t req = reqs[i];
		gpuenv_preflight_t p;
		req.kb = kb;
		gpuenv_arena_init(&arena, &ctx, 0);
		if (gpuenv_preflight_check(&ctx, &arena, facts, &req, &p) == 0) {
			if (p.go != (p.reasons.count[GPUENV_SEV_ERROR] == 0))
				abort();
			out = gpuenv_preflight_json(&p);
			json_decref(out);
		}
		gpuenv_error_clear(&ctx);
		gpuenv_arena_free(&arena);
	}
	gpuenv_arena_free(&fa);
	json_decref(doc);
	return 0;
}
