/* Fuzz target: preflight --lock over arbitrary lock text (lib/check/
 * preflight_lock.c over lib/lock's reader).  A lock comes from anywhere
 * (another tool wrote it, someone edited it), so whatever the reader
 * accepts must be judged without a crash on two fixed nodes (an H100 with
 * Python 3.12 on x86_64 glibc 2.35, and an aarch64 machine without GPU or
 * Python environment): a result of 0, go exactly when no verdict is an
 * error, every error with a fix.  Then the reader and the judgement again
 * with an allocation failing (fuzz_alloc.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/doctor.h"
#include "gpuenv/facts.h"
#include "gpuenv/kb.h"
#include "gpuenv/pylock.h"

#include "fuzz_alloc.h"

static const char *const nodes[] = {
	"{\"schema\": \"gpuenv.facts/1\", \"host\": {\"machine\": \"x86_64\", \"kernel\": \"6.8.0\", "
	"\"libc\": \"glibc\", \"libc_version\": \"2.35\"}, \"driver\": {\"state\": \"ok\", \"loaded\": true, "
	"\"version\": \"570.133.20\", \"cuda_version\": \"12.8\", \"cuda_version_int\": 12080}, "
	"\"gpus\": [{\"index\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"compute_capability\": \"9.0\", "
	"\"visible\": true}], \"environments\": [{\"found_by\": \"VIRTUAL_ENV\", \"prefix\": \"/srv/venv\", "
	"\"python\": {\"version\": \"3.12.3\"}, \"python_xy\": \"3.12\"}]}",
	"{\"schema\": \"gpuenv.facts/1\", \"host\": {\"machine\": \"aarch64\"}, \"driver\": "
	"{\"state\": \"no-hardware\"}, \"gpus\": [], \"pci\": []}",
};
#define NNODES (sizeof(nodes) / sizeof(nodes[0]))

static gpuenv_ctx_t ctx;
static gpuenv_kb_t *kb; /* loaded once: the harness may keep state, the library does not */
static gpuenv_arena_t node_arena;
static const gpuenv_facts_t *facts[NNODES];

static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *c, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_lock_t lk;

	gpuenv_arena_init(&a, c, 0);
	if (OOM_CALL(o, c, gpuenv_pylock_parse(c, &a, "pylock.toml", gpuenv_str_n((const char *)data, size),
			     &lk)) == 0)
		for (size_t k = 0; k < NNODES; k++) {
			gpuenv_preflight_req_t req = { .lock = &lk, .lock_path = "pylock.toml", .kb = kb };
			gpuenv_preflight_t p;
			OOM_CALL(o, c, gpuenv_preflight_check(c, &a, facts[k], &req, &p));
		}
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	gpuenv_lock_t lk;

	if (!kb) {
		gpuenv_ctx_init(&ctx);
		gpuenv_arena_init(&node_arena, &ctx, 0);
		if (gpuenv_kb_load_files(&ctx, NULL, GPUENV_DOCTOR_KB_FILES, &kb) != 0)
			abort();
		for (size_t k = 0; k < NNODES; k++)
			if (gpuenv_facts_parse(&ctx, &node_arena, nodes[k], strlen(nodes[k]), "node.json",
				    &facts[k]) != 0)
				abort();
	}
	gpuenv_arena_init(&a, &ctx, 0);
	if (gpuenv_pylock_parse(&ctx, &a, "pylock.toml", gpuenv_str_n((const char *)data, size), &lk) == 0) {
		for (size_t k = 0; k < NNODES; k++) {
			gpuenv_preflight_req_t req = { .lock = &lk, .lock_path = "pylock.toml", .kb = kb };
			gpuenv_preflight_t p;
			json_t *j;
			if (gpuenv_preflight_check(&ctx, &a, facts[k], &req, &p) != 0)
				abort();
			if (p.go != (p.reasons.count[GPUENV_SEV_ERROR] == 0) || !p.what)
				abort();
			for (size_t i = 0; i < p.reasons.n; i++)
				if (!p.reasons.items[i].message ||
					(p.reasons.items[i].severity == GPUENV_SEV_ERROR && !p.reasons.items[i].fix))
					abort();
			if (!(j = gpuenv_preflight_json(&p)))
				abort();
			json_decref(j);
		}
	}
	gpuenv_error_clear(&ctx);
	gpuenv_arena_free(&a);
	fuzz_oom(data, size, oom_run);
	return 0;
}
