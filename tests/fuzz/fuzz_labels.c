/* Fuzz target: gpuenv labels (lib/labels) over arbitrary input.
 *
 * An input that starts with '{' is a facts document (a doctor fixture is a
 * seed as it is): decoded (a missing "schema" added), labelled with the MIG
 * strategy size % 3, sorted, written as text and as an NFD feature file,
 * and the machine's own selector made and written.  Otherwise the first
 * byte picks what the rest is: even, an --expiry value and a label value to
 * escape; odd, a label prefix.  Invariants abort() on violation:
 *   - every label kept has a valid Kubernetes key and value, and the set is
 *     sorted and has no key twice;
 *   - every line of the NFD file is a comment or key=value of such labels,
 *     and the file is within NFD's 64 KiB;
 *   - an escaped value is made of [A-Za-z0-9-_.] with alphanumeric ends;
 *   - a prefix that passes the check is a DNS subdomain that makes valid
 *     keys; a refused one leaves a message and a hint;
 *   - a parsed duration lies between now and a hundred years on.
 * Then the facts path again with an allocation failing (fuzz_alloc.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gpuenv/facts.h"
#include "gpuenv/kb.h"
#include "gpuenv/labels.h"

#include "fuzz_alloc.h"

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

static gpuenv_kb_t *kb;

static void check_set(const gpuenv_labels_t *ls)
{
	for (size_t i = 0; i < ls->n; i++) {
		CHECK(gpuenv_label_key_valid(gpuenv_str(ls->items[i].key), NULL));
		CHECK(gpuenv_label_value_valid(gpuenv_str(ls->items[i].value), NULL));
		if (i)
			CHECK(strcmp(ls->items[i - 1].key, ls->items[i].key) < 0);
	}
}

static void check_nfd(const char *s, size_t n)
{
	CHECK(n <= GPUENV_LABELS_NFD_MAX);
	while (n) {
		const char *nl = memchr(s, '\n', n);
		CHECK(nl); /* every line ends */
		size_t len = (size_t)(nl - s);
		if (len && s[0] != '#') {
			const char *eq = memchr(s, '=', len);
			CHECK(eq && memchr(s, '/', (size_t)(eq - s)));
			CHECK(gpuenv_label_key_valid(gpuenv_str_n(s, (size_t)(eq - s)), NULL));
			CHECK(gpuenv_label_value_valid(gpuenv_str_n(eq + 1, len - (size_t)(eq - s) - 1), NULL));
		}
		n -= len + 1;
		s = nl + 1;
	}
}

/* the facts path, under fuzz_oom's failing allocator too */
static void oom_run(fuzz_oom_t *o, gpuenv_ctx_t *c, const uint8_t *data, size_t size)
{
	gpuenv_arena_t a;
	const gpuenv_facts_t *f;
	json_error_t jerr;
	json_t *doc = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &jerr);
	gpuenv_target_t machine;

	if (!doc)
		return;
	if (json_is_object(doc) && !json_object_get(doc, "schema"))
		json_object_set_new(doc, "schema", json_string("gpuenv.facts/1"));
	gpuenv_arena_init(&a, c, 0);
	if (OOM_CALL(o, c, gpuenv_facts_decode(c, &a, doc, NULL, &f)) == 0 &&
		OOM_CALL(o, c, gpuenv_target_from_facts(c, &a, f, SIZE_MAX, &machine)) == 0) {
		gpuenv_labels_t ls;
		gpuenv_labels_opts_t lo = { .prefix = "fuzz.example.com", .mig_strategy = (int)(size % 3),
			.machine_type = size % 2 ? "Fuzz (Box) 9000" : NULL };
		gpuenv_labels_init(&ls, &a);
		if (OOM_CALL(o, c, gpuenv_labels_from_facts(c, &ls, f, &machine, &lo)) == 0) {
			gpuenv_buf_t b;
			gpuenv_labels_sort(&ls);
			if (!o->t.failures)
				check_set(&ls);
			gpuenv_buf_init(&b, c, GPUENV_LABELS_NFD_MAX * 16);
			int r = OOM_CALL(o, c, gpuenv_labels_write_nfd(c, &ls, 1767225600LL, "fuzz", &b));
			if (!r && !o->t.failures)
				check_nfd(b.data, b.len);
			gpuenv_buf_free(&b);
		}
		gpuenv_selector_t sel;
		if (OOM_CALL(o, c, gpuenv_labels_selector(c, &a, kb, NULL, "fuzz", &machine,
			    size % 2 ? "12.8" : NULL, &sel)) == 0) {
			gpuenv_buf_t b;
			gpuenv_buf_init(&b, c, 1 << 20);
			(void)gpuenv_selector_write_yaml(&sel, "fuzz", &b);
			for (size_t i = 0; i < sel.nsel && !o->t.failures; i++)
				CHECK(gpuenv_label_key_valid(gpuenv_str(sel.sel[i].key), NULL) &&
					gpuenv_label_value_valid(gpuenv_str(sel.sel[i].value), NULL));
			gpuenv_buf_free(&b);
		}
	}
	gpuenv_arena_free(&a);
	json_decref(doc);
}

static void strings(const uint8_t *data, size_t size)
{
	gpuenv_ctx_t ctx;
	gpuenv_arena_t a;
	char *s;

	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&a, &ctx, 0);
	s = gpuenv_arena_strndup(&a, (const char *)data + 1, size - 1);
	CHECK(s);
	if (data[0] % 2 == 0) {
		long long t = 0, now = 1767225600LL;
		if (gpuenv_labels_expiry_parse(&ctx, s, now, &t) == 0) {
			/* a duration (an RFC 3339 time has dashes): now to a hundred years on */
			if (!strchr(s, '-'))
				CHECK(t >= now && t - now <= 3156000000LL);
		} else
			CHECK(ctx.err.code == GPUENV_EUSAGE && ctx.err.hint[0]);
		gpuenv_str_t e = gpuenv_label_sanitize(&a, gpuenv_str_n(s, size - 1));
		CHECK(e.ptr);
		for (size_t i = 0; i < e.len; i++)
			CHECK(strchr("-_.", e.ptr[i]) || (e.ptr[i] >= 'a' && e.ptr[i] <= 'z') ||
				(e.ptr[i] >= 'A' && e.ptr[i] <= 'Z') || (e.ptr[i] >= '0' && e.ptr[i] <= '9'));
		CHECK(gpuenv_label_value_valid(e, NULL) == (e.len <= GPUENV_LABEL_NAME_MAX));
		gpuenv_labels_t ls;
		gpuenv_labels_init(&ls, &a);
		CHECK(gpuenv_labels_set(&ls, "vendor.example.com/x", s) == 0);
		CHECK(ls.n == 1 || ls.nwarnings == 1);
		check_set(&ls);
	} else {
		if (gpuenv_labels_prefix_check(&ctx, s, "fuzz") == 0) {
			CHECK(gpuenv_label_prefix_valid(gpuenv_str(s), NULL));
			gpuenv_str_t k = gpuenv_arena_printf(&a, "%s/present", s);
			CHECK(k.ptr && gpuenv_label_key_valid(k, NULL));
		} else
			CHECK(ctx.err.code == GPUENV_EUSAGE && ctx.err.msg[0] && ctx.err.hint[0]);
	}
	gpuenv_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!kb) {
		static gpuenv_ctx_t kctx;
		gpuenv_ctx_init(&kctx);
		if (gpuenv_kb_load(&kctx, NULL, &kb) != 0)
			abort();
	}
	if (size < 1 || size > (1 << 20))
		return 0;
	if (data[0] != '{') {
		if (size <= 4096)
			strings(data, size);
		return 0;
	}
	fuzz_oom(data, size, oom_run);
	return 0;
}
