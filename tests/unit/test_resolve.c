/* Unit tests for the resolver (lib/resolve): the term algebra, propagation
 * and backjumping, the rules (extras, markers, yanked, pre-releases, local
 * versions), the explanation's wording, the provider contract (errors,
 * prefetch, excluded), scenario parse errors, speed, and allocation
 * failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuenv/core.h"
#include "gpuenv/resolve.h"

#include "../../lib/resolve/resolve_int.h"
#include "testutil.h"

static gpuenv_ctx_t ctx;
static gpuenv_arena_t arena;

static int setup(void **state)
{
	(void)state;
	gpuenv_ctx_init(&ctx);
	gpuenv_arena_init(&arena, &ctx, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gpuenv_arena_free(&arena);
	return 0;
}

/* ---- algebra ------------------------------------------------------------- */

static void test_term_algebra(void **state)
{
	(void)state;
	/* universe of 70 candidates: two words */
	rs_word_t a[2] = { 0x0f, 0 }, b[2] = { 0x3c, 1 }, out[2];
	bool p;

	rs_term_and(true, a, true, b, 2, &p, out);
	assert_true(p);
	assert_true(out[0] == 0x0c && out[1] == 0);
	rs_term_and(true, a, false, b, 2, &p, out); /* a minus b */
	assert_true(p);
	assert_true(out[0] == 0x03 && out[1] == 0);
	rs_term_and(false, a, true, b, 2, &p, out); /* b minus a */
	assert_true(p);
	assert_true(out[0] == 0x30 && out[1] == 1);
	rs_term_and(false, a, false, b, 2, &p, out); /* not a, not b: not (a | b) */
	assert_false(p);
	assert_true(out[0] == 0x3f && out[1] == 1);
	rs_term_or(true, a, true, b, 2, &p, out);
	assert_true(p);
	assert_true(out[0] == 0x3f && out[1] == 1);
	rs_term_or(true, a, false, b, 2, &p, out); /* a or not b = not (b - a) */
	assert_false(p);
	assert_true(out[0] == 0x30 && out[1] == 1);

	/* subset and disjoint across polarities */
	rs_word_t s1[2] = { 0x03, 0 }, s2[2] = { 0x0f, 0 }, s3[2] = { 0x30, 0 }, none[2] = { 0, 0 };
	assert_true(rs_term_subset(true, s1, true, s2, 2));
	assert_false(rs_term_subset(true, s2, true, s1, 2));
	assert_true(rs_term_subset(true, s1, false, s3, 2));  /* {0,1} avoids {4,5} */
	assert_false(rs_term_subset(true, s1, false, s2, 2));
	assert_false(rs_term_subset(false, s1, true, s2, 2)); /* absent is not selected */
	assert_true(rs_term_subset(false, s2, false, s1, 2)); /* not s2 implies not s1 */
	assert_true(rs_term_disjoint(true, s1, true, s3, 2));
	assert_true(rs_term_disjoint(true, s1, false, s2, 2));
	assert_false(rs_term_disjoint(true, s3, false, s2, 2));
	assert_false(rs_term_disjoint(false, s1, false, s3, 2)); /* both allow absent */
	assert_true(rs_set_empty(none, 2));
	assert_int_equal(rs_set_count(b, 2), 5);
	assert_int_equal(rs_set_first(s3, 2), 4);
	rs_set_bit(none, 69);
	assert_int_equal(rs_set_first(none, 2), 69);
	assert_int_equal(rs_words(0), 0);
	assert_int_equal(rs_words(64), 1);
	assert_int_equal(rs_words(65), 2);
}

/* ---- scenarios ------------------------------------------------------------- */

typedef struct run {
	int rc;
	gpuenv_resolution_t res;
	gpuenv_scenario_t sc;
	char text[8192]; /* name==version lines, or the explanation */
} run_t;

/* allow: NULL, or Poetry's allow-prereleases per root requirement;
 * prefer: NULL, or preferred versions (nprefer of them) */
static void run_text_prefer(const char *toml, const bool *allow, const gpuenv_preference_t *prefer,
	size_t nprefer, run_t *r)
{
	gpuenv_resolve_req_t req;
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	assert_int_equal(gpuenv_scenario_parse(&ctx, &arena, "t.toml", toml, strlen(toml), &r->sc), 0);
	gpuenv_scenario_request(&r->sc, &req);
	req.allow_prereleases = allow;
	req.prefer = prefer;
	req.nprefer = nprefer;
	r->rc = gpuenv_resolve(&ctx, &arena, &req, &r->sc.provider, &r->res);
	if (r->rc == 0)
		for (size_t i = 0; i < r->res.npkgs; i++)
			n += (size_t)snprintf(r->text + n, sizeof(r->text) - n, "%s==%s\n",
				r->res.pkgs[i].name, r->res.pkgs[i].cand->version);
	else if (r->rc == GPUENV_ENOSOLUTION)
		snprintf(r->text, sizeof(r->text), "%s", r->res.explanation);
}

static void run_text_allow(const char *toml, const bool *allow, run_t *r)
{
	run_text_prefer(toml, allow, NULL, 0, r);
}

static void run_text(const char *toml, run_t *r)
{
	run_text_allow(toml, NULL, r);
}

static const gpuenv_resolved_t *find(const run_t *r, const char *name)
{
	for (size_t i = 0; i < r->res.npkgs; i++)
		if (!strcmp(r->res.pkgs[i].name, name))
			return &r->res.pkgs[i];
	return NULL;
}

static void test_chain_and_graph(void **state)
{
	(void)state;
	run_t r;
	run_text("[root]\nrequires = [\"A_Pkg\"]\n"
		 "[packages.a-pkg.versions.\"1.0\"]\nrequires = [\"b>=1\", \"c\"]\n"
		 "[packages.a-pkg.versions.\"2.0\"]\nrequires = [\"b>=2\", \"c<2\"]\n"
		 "[packages.b.versions.\"1.0\"]\n[packages.b.versions.\"2.5\"]\nrequires = [\"c\"]\n"
		 "[packages.c.versions.\"1.0\"]\n[packages.c.versions.\"3.0\"]\n",
		&r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.text, "a-pkg==2.0\nb==2.5\nc==1.0\n");
	const gpuenv_resolved_t *a = find(&r, "a-pkg"), *b = find(&r, "b");
	assert_true(a->root);
	assert_false(b->root);
	assert_int_equal(a->ndeps, 2); /* b and c, sorted by name */
	assert_string_equal(r.res.pkgs[a->deps[0]].name, "b");
	assert_string_equal(r.res.pkgs[a->deps[1]].name, "c");
	assert_int_equal(b->ndeps, 1);
	assert_true(r.res.decisions >= 4);
	assert_int_equal(r.res.packages_asked, 3);
}

/* a 2 needs c 2 which is missing from d's range: a backjump past b */
static void test_backjump(void **state)
{
	(void)state;
	run_t r;
	run_text("[root]\nrequires = [\"a\", \"d\"]\n"
		 "[packages.a.versions.\"1\"]\nrequires = [\"b\"]\n"
		 "[packages.a.versions.\"2\"]\nrequires = [\"b\", \"c==2\"]\n"
		 "[packages.b.versions.\"1\"]\n[packages.b.versions.\"2\"]\n"
		 "[packages.c.versions.\"1\"]\n[packages.c.versions.\"2\"]\n"
		 "[packages.d.versions.\"1\"]\nrequires = [\"c<2\"]\n",
		&r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.text, "a==1\nb==2\nc==1\nd==1\n");
}

static void test_extras_and_markers(void **state)
{
	(void)state;
	run_t r;
	run_text("[root]\nrequires = [\"a[Gpu,docs]\", \"w ; sys_platform == 'win32'\"]\n"
		 "[packages.a.versions.\"1\"]\nrequires = [\"m ; python_version < '3'\"]\n"
		 "[packages.a.versions.\"1\".extras]\ngpu = [\"g>=2 ; sys_platform == 'linux'\"]\n"
		 "docs = [\"d ; sys_platform == 'darwin'\"]\n"
		 "[packages.g.versions.\"1\"]\n[packages.g.versions.\"2\"]\n",
		&r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.text, "a==1\ng==2\n");
	const gpuenv_resolved_t *a = find(&r, "a");
	assert_int_equal(a->nextras, 2);
	assert_string_equal(a->extras[0], "docs");
	assert_string_equal(a->extras[1], "gpu");
	assert_int_equal(a->ndeps, 1);
	assert_string_equal(r.res.pkgs[a->deps[0]].name, "g");
}

static void test_yanked_prerelease_local(void **state)
{
	(void)state;
	run_t r;
	/* yanked only when the root pins it; a transitive pin does not */
	run_text("[root]\nrequires = [\"a==2\"]\n"
		 "[packages.a.versions.\"1\"]\n[packages.a.versions.\"2\"]\nyanked = true\n",
		&r);
	assert_string_equal(r.text, "a==2\n");
	run_text("[root]\nrequires = [\"b\"]\n[packages.b.versions.\"1\"]\nrequires = [\"a==2\"]\n"
		 "[packages.a.versions.\"1\"]\n[packages.a.versions.\"2\"]\nyanked = true\n",
		&r);
	assert_int_equal(r.rc, GPUENV_ENOSOLUTION);
	assert_non_null(strstr(r.text, "note: a 2 is yanked"));
	/* pre-releases rank after the stable versions: one is chosen when it
	 * is all there is, or all a specifier leaves; naming one in a
	 * specifier the stable version also meets does not prefer it */
	run_text("[root]\nrequires = [\"a\", \"b>=1.0b1\"]\n"
		 "[packages.a.versions.\"1.0a1\"]\n"
		 "[packages.b.versions.\"1.0\"]\n[packages.b.versions.\"1.1b1\"]\n",
		&r);
	assert_string_equal(r.text, "a==1.0a1\nb==1.0\n");
	run_text("[root]\nrequires = [\"x\"]\n[packages.x.versions.\"1\"]\nrequires = [\"b>1.0\"]\n"
		 "[packages.b.versions.\"1.0\"]\n[packages.b.versions.\"1.1b1\"]\n",
		&r);
	assert_string_equal(r.text, "b==1.1b1\nx==1\n");
	/* after a conflict rules the stable version out */
	run_text("[root]\nrequires = [\"b\", \"y\"]\n"
		 "[packages.b.versions.\"1.0\"]\nrequires = [\"y<2\"]\n[packages.b.versions.\"1.1b1\"]\n"
		 "[packages.y.versions.\"1\"]\n[packages.y.versions.\"2\"]\n",
		&r);
	assert_string_equal(r.text, "b==1.0\ny==1\n");
	run_text("[root]\nrequires = [\"b\", \"y==2\"]\n"
		 "[packages.b.versions.\"1.0\"]\nrequires = [\"y<2\"]\n[packages.b.versions.\"1.1b1\"]\n"
		 "[packages.y.versions.\"1\"]\n[packages.y.versions.\"2\"]\n",
		&r);
	assert_string_equal(r.text, "b==1.1b1\ny==2\n");
	/* Poetry's allow-prereleases on the root requirement: by version */
	const char *pre2 = "[root]\nrequires = [\"b\", \"c\"]\n"
			   "[packages.b.versions.\"1.0\"]\n[packages.b.versions.\"1.1b1\"]\n"
			   "[packages.c.versions.\"1.0\"]\n[packages.c.versions.\"1.1b1\"]\n";
	const bool allow[2] = { true, false };
	run_text_allow(pre2, allow, &r);
	assert_string_equal(r.text, "b==1.1b1\nc==1.0\n");
	run_text(pre2, &r);
	assert_string_equal(r.text, "b==1.0\nc==1.0\n");
	/* resolver_options.prereleases = true: by version everywhere */
	run_text("[resolver_options]\nprereleases = true\n[root]\nrequires = [\"b\"]\n"
		 "[packages.b.versions.\"1.0\"]\n[packages.b.versions.\"1.1b1\"]\n",
		&r);
	assert_string_equal(r.text, "b==1.1b1\n");
	/* local versions: ==1.0 matches +cu118, ==1.0+cpu pins */
	run_text("[root]\nrequires = [\"t==1.0\"]\n"
		 "[packages.t.versions.\"1.0+cpu\"]\n[packages.t.versions.\"1.0+cu118\"]\n",
		&r);
	assert_string_equal(r.text, "t==1.0+cu118\n");
	run_text("[root]\nrequires = [\"t==1.0+cpu\"]\n"
		 "[packages.t.versions.\"1.0+cpu\"]\n[packages.t.versions.\"1.0+cu118\"]\n",
		&r);
	assert_string_equal(r.text, "t==1.0+cpu\n");
}

/* Preferred versions (a stable lock's): kept while the ranges allow them,
 * the newest otherwise; never a failure a resolution without them avoids. */
static void test_preferences(void **state)
{
	(void)state;
	run_t r;
	const char *base = "[root]\nrequires = [\"alpha\", \"beta>=1\"]\n"
			   "[packages.alpha.versions.\"1.0\"]\n[packages.alpha.versions.\"1.1\"]\n"
			   "[packages.alpha.versions.\"1.2\"]\n"
			   "[packages.beta.versions.\"1.0\"]\nrequires = [\"gamma<2\"]\n"
			   "[packages.beta.versions.\"2.0\"]\nrequires = [\"gamma>=2\"]\n"
			   "[packages.gamma.versions.\"1.0\"]\n[packages.gamma.versions.\"2.0\"]\n";
	/* without: the newest */
	run_text(base, &r);
	assert_string_equal(r.text, "alpha==1.2\nbeta==2.0\ngamma==2.0\n");
	/* kept: alpha 1.0 and beta 1.0 (with what it needs); a version
	 * spelt another way (1.0.0) is the same version */
	const gpuenv_preference_t keep[] = { { "alpha", "1.0.0", false }, { "beta", "1.0", false }, { "gamma", "1.0", false } };
	run_text_prefer(base, NULL, keep, 3, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.text, "alpha==1.0\nbeta==1.0\ngamma==1.0\n");
	/* the range no longer allows the preferred version: the newest that fits */
	const char *moved = "[root]\nrequires = [\"alpha>=1.1\"]\n"
			    "[packages.alpha.versions.\"1.0\"]\n[packages.alpha.versions.\"1.1\"]\n"
			    "[packages.alpha.versions.\"1.2\"]\n";
	run_text_prefer(moved, NULL, keep, 1, &r);
	assert_string_equal(r.text, "alpha==1.2\n");
	/* a version that is gone, yanked or not a version at all: ignored */
	const gpuenv_preference_t gone[] = { { "alpha", "0.9", false }, { "beta", "not a version", false } };
	run_text_prefer(base, NULL, gone, 2, &r);
	assert_string_equal(r.text, "alpha==1.2\nbeta==2.0\ngamma==2.0\n");
	const gpuenv_preference_t yanked[] = { { "a", "2", false } };
	run_text_prefer("[root]\nrequires = [\"a\"]\n[packages.a.versions.\"1\"]\n"
			"[packages.a.versions.\"2\"]\nyanked = true\n[packages.a.versions.\"3\"]\n",
		NULL, yanked, 1, &r);
	assert_string_equal(r.text, "a==3\n");
	/* a preference that conflicts is backtracked over, never a failure:
	 * gamma 1.0 preferred, but beta 2.0 (preferred too) needs gamma >= 2 */
	const gpuenv_preference_t clash[] = { { "gamma", "1.0", false }, { "beta", "2.0", false } };
	run_text_prefer("[root]\nrequires = [\"beta==2.0\", \"gamma\"]\n"
			"[packages.beta.versions.\"1.0\"]\n"
			"[packages.beta.versions.\"2.0\"]\nrequires = [\"gamma>=2\"]\n"
			"[packages.gamma.versions.\"1.0\"]\n[packages.gamma.versions.\"2.0\"]\n",
		NULL, clash, 2, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.text, "beta==2.0\ngamma==2.0\n");
	/* an upgrade asked for (no version, early) drags what it needs
	 * along: alpha 2 needs beta >= 2, and beta's preference gives way */
	const char *drag = "[root]\nrequires = [\"beta\", \"alpha\"]\n"
			   "[packages.alpha.versions.\"1\"]\nrequires = [\"beta<2\"]\n"
			   "[packages.alpha.versions.\"2\"]\nrequires = [\"beta>=2\"]\n"
			   "[packages.beta.versions.\"1\"]\n[packages.beta.versions.\"2\"]\n";
	const gpuenv_preference_t held[] = { { "alpha", "1", false }, { "beta", "1", false } };
	run_text_prefer(drag, NULL, held, 2, &r);
	assert_string_equal(r.text, "alpha==1\nbeta==1\n");
	/* (beta is registered first, so without early it would be decided
	 * first, at its preferred 1, and hold alpha at 1) */
	const gpuenv_preference_t late[] = { { "alpha", NULL, false }, { "beta", "1", false } };
	run_text_prefer(drag, NULL, late, 2, &r);
	assert_string_equal(r.text, "alpha==1\nbeta==1\n");
	const gpuenv_preference_t up[] = { { "alpha", NULL, true }, { "beta", "1", false } };
	run_text_prefer(drag, NULL, up, 2, &r);
	assert_string_equal(r.text, "alpha==2\nbeta==2\n");
	/* an upgrade to a version named (NAME==VERSION) */
	const gpuenv_preference_t to1[] = { { "alpha", "1", true } };
	run_text_prefer(drag, NULL, to1, 1, &r);
	assert_string_equal(r.text, "alpha==1\nbeta==1\n");
	/* a local build version is matched exactly before by PEP 440 equality */
	const gpuenv_preference_t local[] = { { "t", "1.0+cpu", false } };
	run_text_prefer("[root]\nrequires = [\"t\"]\n[packages.t.versions.\"1.0+cpu\"]\n"
			"[packages.t.versions.\"1.0+cu118\"]\n[packages.t.versions.\"1.1+cu118\"]\n",
		NULL, local, 1, &r);
	assert_string_equal(r.text, "t==1.0+cpu\n");
	/* an extra's package follows its base's preference */
	const gpuenv_preference_t ex[] = { { "a", "1", false } };
	run_text_prefer("[root]\nrequires = [\"a[x]\"]\n[packages.a.versions.\"1\"]\n"
			"[packages.a.versions.\"1\".extras]\nx = [\"b\"]\n"
			"[packages.a.versions.\"2\"]\n[packages.a.versions.\"2\".extras]\nx = [\"b\"]\n"
			"[packages.b.versions.\"1\"]\n",
		NULL, ex, 1, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.text, "a==1\n"));
	assert_null(strstr(r.text, "a==2"));
}

/* The explanation, word for word. */
static void test_explanation_wording(void **state)
{
	(void)state;
	run_t r;
	run_text("[root]\nrequires = [\"a\", \"b==1\"]\n"
		 "[packages.a.versions.\"1\"]\nrequires = [\"b>=2\"]\n"
		 "[packages.a.versions.\"2\"]\nrequires = [\"b>=2\", \"z\"]\n"
		 "[packages.b.versions.\"1\"]\n[packages.b.versions.\"2\"]\n"
		 "[packages.b.versions.\"3\"]\nrequires_python = \">=3.13\"\n",
		&r);
	assert_int_equal(r.rc, GPUENV_ENOSOLUTION);
	assert_int_equal(ctx.err.code, GPUENV_ENOSOLUTION);
	assert_string_equal(r.text,
		"Because a 2 depends on z and no index offers z, a 2 is forbidden.\n"
		"And because a 1 depends on b >=2, a requires b 2.\n"
		"So, because the project depends on both a and b ==1, version solving failed.\n"
		"note: b 3 needs Python >=3.13 (the target has 3.12.0)");
	/* a missing package, and numbered lines for a cause used twice */
	run_text("[root]\nrequires = [\"x\"]\n[packages.x.versions.\"1\"]\nrequires = [\"nope\"]\n", &r);
	assert_string_equal(r.text,
		"Because x 1 depends on nope and no index offers nope, x 1 is forbidden.\n"
		"So, because the project depends on x, version solving failed.");
}

/* ---- a hand-made provider: errors, prefetch, excluded ------------------------ */

typedef struct hand {
	gpuenv_candidate_t c[2];
	gpuenv_requirement_t req;
	int fail_versions;
	size_t prefetched;
	char last_prefetch[64];
} hand_t;

static int hand_versions(void *self, gpuenv_ctx_t *c, const char *name,
	const gpuenv_candidate_t **out, size_t *n)
{
	hand_t *h = self;
	if (!strcmp(name, "broken") && h->fail_versions)
		return gpuenv_fail(c, -EIO, "http://127.0.0.1/simple/broken/", 0, 0, "read failed");
	if (strcmp(name, "top") && strcmp(name, "broken"))
		return gpuenv_fail(c, GPUENV_ENOTFOUND, NULL, 0, 0, "no %s", name);
	*out = h->c;
	*n = 2;
	return 0;
}

static int hand_requires(void *self, gpuenv_ctx_t *c, const char *name, const gpuenv_candidate_t *cand,
	const gpuenv_requirement_t **out, size_t *n)
{
	hand_t *h = self;
	(void)c;
	*n = !strcmp(name, "top");
	*out = &h->req;
	(void)cand;
	return 0;
}

static void hand_prefetch(void *self, gpuenv_ctx_t *c, const char *const *names, size_t n)
{
	hand_t *h = self;
	(void)c;
	h->prefetched += n;
	snprintf(h->last_prefetch, sizeof(h->last_prefetch), "%s", n ? names[0] : "");
}

static const char *hand_excluded(void *self, const char *name)
{
	(void)self;
	return !strcmp(name, "broken") ? "broken 3.0+cu128 needs a driver >= 570.26 and target t4 has 560.35.03"
				      : NULL;
}

static void hand_init(hand_t *h, gpuenv_provider_t *p)
{
	memset(h, 0, sizeof(*h));
	h->c[0].version = "2.0";
	h->c[1].version = "1.0";
	assert_int_equal(gpuenv_version_parse(&ctx, &arena, gpuenv_str("2.0"), &h->c[0].v), 0);
	assert_int_equal(gpuenv_version_parse(&ctx, &arena, gpuenv_str("1.0"), &h->c[1].v), 0);
	assert_int_equal(gpuenv_requirement_parse(&ctx, &arena, gpuenv_str("Broken>=2"), &h->req), 0);
	p->self = h;
	p->versions = hand_versions;
	p->requires = hand_requires;
	p->prefetch = hand_prefetch;
	p->excluded = hand_excluded;
}

static void test_provider_contract(void **state)
{
	(void)state;
	hand_t h;
	gpuenv_provider_t p;
	gpuenv_requirement_t root;
	gpuenv_resolve_req_t req = { .roots = &root, .nroots = 1,
		.prereleases = GPUENV_PRERELEASES_DEFAULT };
	gpuenv_resolution_t res;

	hand_init(&h, &p);
	assert_int_equal(gpuenv_requirement_parse(&ctx, &arena, gpuenv_str("top"), &root), 0);
	assert_int_equal(gpuenv_resolve(&ctx, &arena, &req, &p, &res), 0);
	assert_int_equal(res.npkgs, 2);
	assert_int_equal(h.prefetched, 1);
	assert_string_equal(h.last_prefetch, "broken");
	/* the provider's error is the resolution's */
	h.fail_versions = 1;
	assert_int_equal(gpuenv_resolve(&ctx, &arena, &req, &p, &res), -EIO);
	assert_string_equal(ctx.err.msg, "read failed");
	/* excluded() reaches the explanation for a package it names */
	h.fail_versions = 0;
	assert_int_equal(gpuenv_requirement_parse(&ctx, &arena, gpuenv_str("broken>=3"), &root), 0);
	assert_int_equal(gpuenv_resolve(&ctx, &arena, &req, &p, &res), GPUENV_ENOSOLUTION);
	assert_string_equal(res.explanation,
		"Because the project depends on broken >=3 and no versions of broken match >=3, "
		"version solving failed.\n"
		"note: broken 3.0+cu128 needs a driver >= 570.26 and target t4 has 560.35.03");
	/* a provider without requires() is a usage error */
	p.requires = NULL;
	assert_int_equal(gpuenv_resolve(&ctx, &arena, &req, &p, &res), GPUENV_EUSAGE);
}

/* ---- scenario parse errors ---------------------------------------------------- */

static void expect_error(const char *toml, int code, unsigned line, const char *msg_part)
{
	gpuenv_scenario_t sc;
	int r = gpuenv_scenario_parse(&ctx, &arena, "bad.toml", toml, strlen(toml), &sc);
	assert_int_equal(r, code);
	assert_int_equal(ctx.err.code, code);
	assert_string_equal(ctx.err.file, "bad.toml");
	assert_int_equal(ctx.err.line, line);
	if (!strstr(ctx.err.msg, msg_part))
		fail_msg("'%s' not in '%s'", msg_part, ctx.err.msg);
}

static void test_scenario_errors(void **state)
{
	(void)state;
	expect_error("[root]\nrequires = [\"a >=< 1\"]\n", GPUENV_EREQ, 2, "root.requires: 'a >=< 1'");
	expect_error("[root]\nrequires = \"a\"\n", GPUENV_ETYPE, 2, "'root.requires' must be an array");
	expect_error("[packages.a.versions.\"1.x\"]\n", GPUENV_EVERSION, 1, "not a PEP 440 version");
	expect_error("[packages.a_b.versions.\"1\"]\n[packages.A-B.versions.\"1\"]\n", GPUENV_EDUPLICATE,
		1, "defined twice");
	expect_error("[resolver_options]\npython = \"2.7\"\n", GPUENV_ESYNTAX, 2, "not a Python 3");
	expect_error("[resolver_options]\npython_platform = \"amiga\"\n", GPUENV_EUNSUPPORTED, 2,
		"python_platform 'amiga'");
	expect_error("[packages.a.versions.\"1\"]\nrequires_python = \">=>3\"\n", GPUENV_ESPEC, 2,
		"requires_python of a 1");
	expect_error("x = [\n", GPUENV_ESYNTAX, 1, "array is not closed");
}

/* ---- determinism, speed --------------------------------------------------------- */

/* A layered graph: npk packages of nver versions, each version depending on
 * three later packages with lower bounds (and some upper bounds). */
static char *synthetic(unsigned npk, unsigned nver, size_t *len)
{
	gpuenv_buf_t b;
	unsigned seed = 12345;
	gpuenv_buf_init(&b, &ctx, (size_t)64 << 20);
	assert_int_equal(gpuenv_buf_puts(&b, "[root]\nrequires = ["), 0);
	for (unsigned i = 0; i < npk; i += 10)
		assert_int_equal(gpuenv_buf_printf(&b, "%s\"p%u\"", i ? ", " : "", i), 0);
	assert_int_equal(gpuenv_buf_puts(&b, "]\n"), 0);
	for (unsigned i = 0; i < npk; i++)
		for (unsigned v = 0; v < nver; v++) {
			assert_int_equal(gpuenv_buf_printf(&b, "[packages.p%u.versions.\"%u.%u\"]\nrequires = [",
						 i, v / 10 + 1, v % 10),
				0);
			for (unsigned d = 0, n = 0; d < 3; d++) {
				seed = seed * 1103515245u + 12345u;
				unsigned j = i + 1 + (seed >> 8) % 40;
				unsigned lo = (seed >> 20) % (nver / 2);
				if (j >= npk)
					continue;
				assert_int_equal(gpuenv_buf_printf(&b, "%s\"p%u>=%u.%u%s\"", n++ ? ", " : "", j,
							 lo / 10 + 1, lo % 10, (seed >> 4) % 7 == 0 ? ",<3" : ""),
					0);
			}
			assert_int_equal(gpuenv_buf_puts(&b, "]\n"), 0);
		}
	return gpuenv_buf_steal(&b, len);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_determinism_and_speed(void **state)
{
	(void)state;
	size_t len;
	char *text = synthetic(300, 30, &len);
	gpuenv_scenario_t sc;
	gpuenv_resolve_req_t req;
	gpuenv_resolution_t r1, r2;

	assert_int_equal(gpuenv_scenario_parse(&ctx, &arena, "syn.toml", text, len, &sc), 0);
	assert_int_equal(sc.npackages, 300);
	gpuenv_scenario_request(&sc, &req);
	double t0 = now_ms();
	assert_int_equal(gpuenv_resolve(&ctx, &arena, &req, &sc.provider, &r1), 0);
	double t1 = now_ms();
	assert_int_equal(gpuenv_resolve(&ctx, &arena, &req, &sc.provider, &r2), 0);
	print_message("synthetic 300 x 30: %zu packages, %zu decisions, %zu conflicts, %.1f ms\n",
		r1.npkgs, r1.decisions, r1.conflicts, t1 - t0);
	assert_true(r1.npkgs > 100);
	assert_int_equal(r1.npkgs, r2.npkgs);
	assert_int_equal(r1.decisions, r2.decisions);
	for (size_t i = 0; i < r1.npkgs; i++) {
		assert_string_equal(r1.pkgs[i].name, r2.pkgs[i].name);
		assert_ptr_equal(r1.pkgs[i].cand, r2.pkgs[i].cand);
		assert_int_equal(r1.pkgs[i].ndeps, r2.pkgs[i].ndeps);
	}
	/* a sanitizer build is slower; the bound is for it (docs/resolver.md
	 * has the release figures) */
	assert_true(t1 - t0 < 1000.0);
	free(text);
}

/* ---- adversarial graphs -------------------------------------------------- */

/* The pigeonhole principle as a scenario (bench/resolver_gen.py's php):
 * pigeons packages p1..pP of versions 1.0..H.0 (the holes), each version
 * v of one depending on every other "!= v", all asked for: no solution
 * when P > H.  pad: more versions of each, 100.0 and up (tried first),
 * each depending on a package nobody offers. */
static char *pigeonhole(unsigned pigeons, unsigned holes, unsigned pad, size_t *len)
{
	gpuenv_buf_t b;
	gpuenv_buf_init(&b, &ctx, (size_t)16 << 20);
	assert_int_equal(gpuenv_buf_puts(&b, "[root]\nrequires = ["), 0);
	for (unsigned i = 1; i <= pigeons; i++)
		assert_int_equal(gpuenv_buf_printf(&b, "%s\"p%u\"", i > 1 ? ", " : "", i), 0);
	assert_int_equal(gpuenv_buf_puts(&b, "]\n"), 0);
	for (unsigned i = 1; i <= pigeons; i++) {
		for (unsigned h = 1; h <= holes; h++) {
			assert_int_equal(gpuenv_buf_printf(&b, "[packages.p%u.versions.\"%u.0\"]\nrequires = [",
						 i, h), 0);
			for (unsigned j = 1, n = 0; j <= pigeons; j++)
				if (j != i)
					assert_int_equal(gpuenv_buf_printf(&b, "%s\"p%u!=%u.0\"", n++ ? ", " : "",
								 j, h), 0);
			assert_int_equal(gpuenv_buf_puts(&b, "]\n"), 0);
		}
		for (unsigned v = 0; v < pad; v++)
			assert_int_equal(gpuenv_buf_printf(&b, "[packages.p%u.versions.\"%u.0\"]\n"
							      "requires = [\"nobody-offers-it\"]\n",
						 i, 100 + v), 0);
	}
	return gpuenv_buf_steal(&b, len);
}

static void run_pigeonhole(unsigned pigeons, unsigned holes, unsigned pad, run_t *r)
{
	size_t len;
	char *text = pigeonhole(pigeons, holes, pad, &len);
	run_text(text, r);
	free(text);
}

/* No solution, exit 1, and an explanation bounded however many conflicts
 * were learned (docs/resolver.md "Bounded"). */
static void assert_bounded_failure(const run_t *r)
{
	size_t lines = 0;
	assert_int_equal(r->rc, GPUENV_ENOSOLUTION);
	assert_non_null(r->res.explanation);
	for (const char *c = r->res.explanation; *c; c++)
		lines += *c == '\n';
	assert_true(lines <= 60);
	assert_true(strlen(r->res.explanation) < 8192);
	assert_non_null(strstr(r->res.explanation, "version solving failed"));
	assert_non_null(strstr(r->res.explanation, "more steps of the derivation"));
}

static void test_pigeonhole(void **state)
{
	(void)state;
	run_t r;

	/* 7 pigeons, 6 holes: the search learns its way to the failure (130
	 * conflicts is this search's count, the same before and after the
	 * watch lists were indexed: a change to that is a change of search) */
	run_pigeonhole(7, 6, 0, &r);
	assert_bounded_failure(&r);
	assert_int_equal(r.res.conflicts, 130);
	/* a learned incompatibility per conflict but the last (the failure),
	 * none dropped: the first reduction comes at 2,000 conflicts */
	assert_int_equal(r.res.learned, 129);
	assert_int_equal(r.res.reductions, 0);
	assert_int_equal(r.res.learned_dropped, 0);
	/* the propagation's work is counted: at least a look per conflict,
	 * and of the entries found, some passed on their blocker, not all */
	assert_true(r.res.watch_looks >= r.res.conflicts);
	assert_true(r.res.watch_passed > 0 && r.res.watch_passed < r.res.watch_found);
	/* wide universes: 44 candidates (the watch index's look at every
	 * entry while more than 32 versions are left) and 70 (two words, no
	 * index) find the same failure */
	run_pigeonhole(5, 4, 40, &r);
	assert_bounded_failure(&r);
	assert_true(r.res.conflicts >= 10);
	size_t narrow = r.res.conflicts;
	run_pigeonhole(5, 4, 66, &r);
	assert_bounded_failure(&r);
	assert_int_equal(r.res.conflicts, narrow);
}

/* The partial solution's sets are reused after each backjump: the most
 * held at once stays within what the packages can have assigned at once
 * (each assignment narrows its package, so at most ncand + 2 of them per
 * package), far below what every assignment made would take. */
static void test_backjump_reuses_memory(void **state)
{
	(void)state;
	run_t r;
	const size_t pkgs = 8, ncand = 6, per = 2 * sizeof(uint64_t); /* two one-word sets */

	run_pigeonhole(7, 6, 0, &r);
	assert_int_equal(r.rc, GPUENV_ENOSOLUTION);
	print_message("PHP(7,6): %zu conflicts, %zu assignments, %zu bytes of sets at most\n",
		r.res.conflicts, r.res.assignments, r.res.partial_bytes_peak);
	assert_true(r.res.assignments > 1000);
	assert_true(r.res.partial_bytes_peak > 0);
	assert_true(r.res.partial_bytes_peak <= pkgs * (ncand + 2) * per);
	assert_true(r.res.partial_bytes_peak * 10 < r.res.assignments * per);
	/* a larger graph: more conflicts, the same bound per package */
	run_pigeonhole(8, 7, 0, &r);
	assert_int_equal(r.rc, GPUENV_ENOSOLUTION);
	assert_true(r.res.partial_bytes_peak <= 9 * (7 + 2) * per);
}

/* ---- dumps: a resolution's inputs written as a scenario read back -------- */

static void test_dump_round_trip(void **state)
{
	(void)state;
	run_t a, b;
	gpuenv_resolve_req_t req;
	gpuenv_buf_t out;
	const char *text =
		"name = \"dumped\"\n[root]\nrequires = [\"a[x]\", \"c==1 ; sys_platform == 'linux'\"]\n"
		"[resolver_options]\npython = \"3.11\"\n"
		"[packages.a.versions.\"1\"]\nrequires_python = \">=3.8\"\n"
		"[packages.a.versions.\"1\".extras]\nx = [\"b>=2 ; python_version >= '3.10'\"]\n"
		"[packages.a.versions.\"2\"]\nrequires_python = \">=3.12\"\n"
		"[packages.b.versions.\"2\"]\nrequires = [\"nowhere ; os_name == 'nt'\"]\n"
		"[packages.b.versions.\"3\"]\nyanked = true\n"
		"[packages.c.versions.\"1\"]\nyanked = true\n";

	run_text(text, &a);
	assert_int_equal(a.rc, 0);
	assert_string_equal(a.text, "a==1\nb==2\nc==1\n");
	gpuenv_scenario_request(&a.sc, &req);
	gpuenv_buf_init(&out, &ctx, 1 << 20);
	assert_int_equal(gpuenv_scenario_write(&ctx, &req, &a.sc.provider, a.sc.name, 0, &out), 0);
	/* the filtered candidates, the flags, the target, the exclusion */
	assert_non_null(strstr(out.data, "# left out: a 2 needs Python >=3.12 (the target has 3.11.0)"));
	assert_non_null(strstr(out.data, "[packages.b.versions.\"3\"]\nyanked = true\n"));
	assert_non_null(strstr(out.data, "python = \"3.11.0\""));
	assert_non_null(strstr(out.data, "# nowhere: no index has it"));
	run_text(out.data, &b);
	assert_int_equal(b.rc, 0);
	assert_string_equal(b.text, a.text);
	assert_string_equal(b.sc.name, "dumped");
	gpuenv_buf_free(&out);
}

/* ---- allocation failures ------------------------------------------------------------ */

static const char *oom_scenario =
	"[root]\nrequires = [\"a[x]\", \"c\"]\n"
	"[packages.a.versions.\"1\"]\nrequires = [\"b>=2\"]\n"
	"[packages.a.versions.\"2\"]\nrequires = [\"b>=3\"]\n"
	"[packages.a.versions.\"2\".extras]\nx = [\"d ; python_version >= '3'\"]\n"
	"[packages.b.versions.\"2\"]\n[packages.b.versions.\"3\"]\nrequires = [\"c<1\"]\n"
	"[packages.c.versions.\"0.5\"]\nyanked = true\n[packages.c.versions.\"1\"]\n"
	"[packages.d.versions.\"1.0a1\"]\n";

static void test_alloc_failures(void **state)
{
	(void)state;
	testutil_alloc_t t;
	long total;
	const char *texts[] = { oom_scenario,
		"[root]\nrequires = [\"a\", \"b\"]\n[packages.a.versions.\"1\"]\nrequires = [\"b<1\"]\n"
		"[packages.b.versions.\"1\"]\nrequires = [\"zz\"]\n" };

	const int want[] = { 0, GPUENV_ENOSOLUTION };

	for (size_t k = 0; k < 2; k++) {
		for (long i = 0;; i++) {
			gpuenv_ctx_t c;
			gpuenv_arena_t ar;
			gpuenv_scenario_t sc;
			gpuenv_resolve_req_t req;
			gpuenv_resolution_t res;
			int r;

			gpuenv_ctx_init(&c);
			testutil_alloc_reset(&t, i, false);
			c.mem = testutil_allocator(&t);
			gpuenv_arena_init(&ar, &c, 0);
			r = gpuenv_scenario_parse(&c, &ar, "oom.toml", texts[k], strlen(texts[k]), &sc);
			if (!r) {
				gpuenv_buf_t out;
				gpuenv_scenario_request(&sc, &req);
				gpuenv_buf_init(&out, &c, 1 << 20);
				r = gpuenv_scenario_write(&c, &req, &sc.provider, "oom", 0, &out);
				gpuenv_buf_free(&out);
				if (!r)
					r = gpuenv_resolve(&c, &ar, &req, &sc.provider, &res);
			}
			if (t.failures == 0) {
				total = t.calls;
				assert_int_equal(r, want[k]);
				gpuenv_arena_free(&ar);
				break;
			}
			if (r != -ENOMEM && !(i >= 0 && r == want[k] && t.failures == 0))
				fail_msg("allocation %ld failed: got %d (%s), not -ENOMEM", i, r, c.err.msg);
			assert_int_equal(c.err.code, -ENOMEM);
			assert_true(c.err.msg[0] != '\0');
			gpuenv_arena_free(&ar);
		}
		assert_true(total > 10);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term_algebra),
		cmocka_unit_test_setup_teardown(test_chain_and_graph, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backjump, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extras_and_markers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_yanked_prerelease_local, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preferences, setup, teardown),
		cmocka_unit_test_setup_teardown(test_explanation_wording, setup, teardown),
		cmocka_unit_test_setup_teardown(test_provider_contract, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scenario_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_determinism_and_speed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pigeonhole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backjump_reuses_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_round_trip, setup, teardown),
		cmocka_unit_test(test_alloc_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
