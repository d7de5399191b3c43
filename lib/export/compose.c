/* gpuenv export --format compose (include/gpuenv/export.h; docs/export.md):
 * docker-compose.yml, one service per target, each building the Dockerfile
 * `export --format dockerfile` writes for it, with a GPU reservation for
 * the targets that have GPUs; and a Triton Inference Server service when
 * pyproject.toml declares its model repository ([tool.gpuenv.triton]). */
#include "gpuenv/export.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "export_int.h"
#include "gpuenv/facts.h"
#include "gpuenv/fs.h"
#include "gpuenv/toml.h"

/* [tool.gpuenv.triton] of pyproject.toml: repository (required), image and
 * target (optional).  0 with *repo NULL when the table is absent. */
struct triton_decl {
	const char *repo, *image, *target;
};

static int triton_decl(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *project_dir, struct triton_decl *td)
{
	const char *path = gpuenv_arena_printf(a, "%s/pyproject.toml", project_dir).ptr;
	gpuenv_toml_doc_t doc;
	gpuenv_toml_table_t *t;
	gpuenv_buf_t b;
	gpuenv_str_t v;
	int r;

	memset(td, 0, sizeof(*td));
	if (!path)
		return gpuenv_oom(ctx, "for the compose file");
	gpuenv_buf_init(&b, ctx, GPUENV_TOML_MAX_SIZE);
	if ((r = gpuenv_fs_read(ctx, path, GPUENV_TOML_MAX_SIZE, &b)) != 0) {
		gpuenv_buf_free(&b);
		return r;
	}
	if ((r = gpuenv_toml_doc_init(&doc, ctx, path)) != 0) {
		gpuenv_buf_free(&b);
		return gpuenv_oom(ctx, "for the compose file");
	}
	r = gpuenv_toml_parse(&doc, b.data ? b.data : "", b.len);
	gpuenv_buf_free(&b);
	if (!r && gpuenv_toml_get_path(doc.root, "tool.gpuenv.triton") &&
		!(r = gpuenv_toml_get_table(&doc, doc.root, "tool.gpuenv.triton", &t))) {
		const char *keys[] = { "repository", "image", "target" };
		const char **outs[] = { &td->repo, &td->image, &td->target };
		for (size_t i = 0; i < 3 && !r; i++) {
			if (i && !gpuenv_toml_get(t, keys[i]))
				continue;
			if ((r = gpuenv_toml_get_string(&doc, t, keys[i], &v)) != 0)
				break;
			if (!v.len || memchr(v.ptr, '"', v.len) || memchr(v.ptr, '\\', v.len) || memchr(v.ptr, '\n', v.len))
				r = gpuenv_fail(ctx, GPUENV_ESYNTAX, path, t->line, 0, "[tool.gpuenv.triton] %s: empty, or a "
					"quote, backslash or newline in it", keys[i]);
			else if (!(*outs[i] = gpuenv_arena_strndup(a, v.ptr, v.len)))
				r = gpuenv_oom(ctx, "for the compose file");
		}
		if (r == GPUENV_ENOTFOUND)
			gpuenv_hint(ctx, "declare the model repository: [tool.gpuenv.triton] repository = \"models\"");
	}
	gpuenv_toml_doc_free(&doc);
	return r;
}

/* The tritonserver image for a target: the newest "YY.MM-py3" release of
 * ngc.toml whose driver rule the target's driver meets on each of its GPUs
 * by itself (release notes or the CUDA rule: gpuenv_kb_image_check, as
 * `preflight --image` judges it). */
static const gpuenv_kb_container_t *triton_image(const gpuenv_kb_t *kb, const gpuenv_manifest_target_t *t)
{
	gpuenv_kb_target_t kts[8];
	size_t n = gpuenv_target_kb(kb, &t->target, kts, 8);
	const gpuenv_kb_container_t *best = NULL;

	if (n > 8)
		n = 8;
	for (size_t i = 0; i < kb->n_container; i++) {
		const gpuenv_kb_container_t *c = &kb->container[i];
		gpuenv_kb_image_ref_t img = { .row = c, .cuda = c->cuda };
		bool ok = n > 0;
		/* the plain server ("25.01-py3"), not its -trtllm-, -vllm- or -igpu- builds */
		if (!gpuenv_str_eq_cstr(c->image, "nvcr.io/nvidia/tritonserver") ||
			c->tag.len != c->release.str.len + 4 || !gpuenv_str_endswith(c->tag, "-py3"))
			continue;
		img.cuda.n = img.cuda.n > 2 ? 2 : img.cuda.n;
		for (size_t k = 0; k < n && ok; k++) {
			gpuenv_kb_image_verdict_t iv;
			gpuenv_kb_image_check(kb, &kts[k], &img, &iv);
			ok = iv.runs == GPUENV_KB_RUNS_GA && iv.cc_ok != 0;
		}
		if (ok && (!best || gpuenv_kb_ver_cmp(&c->release, &best->release) > 0))
			best = c;
	}
	return best;
}

/* The Triton service: Triton's documentation runs the server with
 * --shm-size=1g --ulimit memlock=-1 --ulimit stack=67108864 (recommended
 * "to improve performance"; 1g the minimum shared memory) and serves HTTP
 * on 8000, gRPC on 8001 and metrics on 8002. */
static int put_triton(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_kb_t *kb, const struct triton_decl *td,
	const gpuenv_manifest_target_t *targets, size_t ntargets, const char *ctxdir, export_text_t *y,
	gpuenv_export_compose_t *out)
{
	const gpuenv_manifest_target_t *t = NULL;
	const char *image = td->image;
	char row[64] = "";

	for (size_t i = 0; i < ntargets && !t; i++)
		if (td->target ? !strcmp(targets[i].name, td->target) : targets[i].target.ngpus > 0)
			t = &targets[i];
	if (!t && td->target)
		return gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "[tool.gpuenv.triton] target = \"%s\": the "
			"project has no such target", td->target);
	if (!image) {
		const gpuenv_kb_container_t *c = t && kb ? triton_image(kb, t) : NULL;
		if (!c) {
			gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0, "[tool.gpuenv.triton]: %s", t
				? "no tritonserver release of the knowledge base runs on the target's driver"
				: "no target with a GPU to run the Triton server");
			return gpuenv_hint(ctx, "name the server's image: [tool.gpuenv.triton] image = "
						"\"nvcr.io/nvidia/tritonserver:YY.MM-py3\"");
		}
		image = gpuenv_arena_printf(a, "%.*s:%.*s", GPUENV_STR_ARG(c->image), GPUENV_STR_ARG(c->tag)).ptr;
		{
			char w[48];
			snprintf(row, sizeof(row), "[%s]", gpuenv_kb_row_where(&c->row, w, sizeof(w)));
		}
		if (!image)
			return gpuenv_oom(ctx, "for the compose file");
	}
	out->triton_image = image;
	out->triton_target = t ? t->name : NULL;
	export_put(y, "  # Triton Inference Server over the model repository %s: %s%s%s%s.\n"
		      "  # Check the repository on the node before the image is built or pulled:\n"
		      "  #   gpuenv triton check %s --image %s --facts facts.%s.json\n"
		      "  # (exit 1: a model would fail to load; docs/export.md, \"Triton\").\n"
		      "  # shm_size and ulimits as Triton's documentation runs the server (--shm-size=1g\n"
		      "  # --ulimit memlock=-1 --ulimit stack=67108864); ports 8000 HTTP, 8001 gRPC, 8002 metrics.\n"
		      "  triton:\n"
		      "    image: \"%s\"\n"
		      "    command: [\"tritonserver\", \"--model-repository=/models\"]\n"
		      "    volumes:\n"
		      "      - \"%s/%s:/models:ro\"\n"
		      "    shm_size: \"1gb\"\n"
		      "    ulimits:\n"
		      "      memlock: -1\n"
		      "      stack: 67108864\n"
		      "    ports:\n"
		      "      - \"8000:8000\"\n"
		      "      - \"8001:8001\"\n"
		      "      - \"8002:8002\"\n",
		td->repo, td->image ? "the image [tool.gpuenv.triton] names" : "the newest release the knowledge base says ",
		td->image ? "" : (t ? t->name : ""), td->image ? "" : "'s driver runs by itself ", td->image ? "" : row,
		td->repo, image, t ? t->name : "TARGET", image, ctxdir, td->repo);
	if (t && t->target.ngpus)
		export_put(y, "    deploy:\n"
			       "      resources:\n"
			       "        reservations:\n"
			       "          devices:\n"
			       "            - driver: nvidia\n"
			       "              count: all\n"
			       "              capabilities: [gpu]\n");
	return 0;
}

int gpuenv_export_compose(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const gpuenv_kb_t *kb, const gpuenv_manifest_t *m,
	const char *project_dir, const gpuenv_manifest_target_t *targets, size_t ntargets, const char *out_path,
	gpuenv_export_compose_t *out)
{
	const char *img, *ctxdir = ".", *rel = "";
	export_text_t y = { .b = &out->text };
	struct triton_decl td;
	bool oom = false;

	memset(out, 0, sizeof(*out));
	gpuenv_buf_init(&out->text, ctx, 1u << 20);
	out->nservices = ntargets;
	if (!(img = export_docker_name(a, m->name)) ||
		!(out->missing = gpuenv_arena_calloc(a, ntargets + 1, sizeof(*out->missing))))
		return gpuenv_oom(ctx, "for the compose file");
	if (out_path) {
		if (export_rel_dir(ctx, a, project_dir, out_path, &rel) != 0)
			return ctx->err.code;
		/* the context: the project directory, from the compose file's */
		if (*rel) {
			gpuenv_buf_t up;
			export_text_t u = { .b = &up };
			gpuenv_buf_init(&up, ctx, PATH_MAX);
			for (const char *p = rel; *p; p++)
				if (*p == '/')
					export_put(&u, "%s", up.len ? "/.." : "..");
			ctxdir = !u.err && up.data ? gpuenv_arena_strndup(a, up.data, up.len) : NULL;
			gpuenv_buf_free(&up);
			if (!ctxdir)
				return gpuenv_oom(ctx, "for the compose file");
		}
	}
	export_put(&y, "# docker-compose.yml of %s: one service per target, generated by gpuenv\n"
		       "# export --format compose.  Each service builds the Dockerfile that\n"
		       "#   gpuenv export --target TARGET --format dockerfile -o Dockerfile.TARGET\n"
		       "# writes in the project directory; the GPU targets reserve the node's GPUs.\n"
		       "services:\n", m->name ? m->name : "the project");
	for (size_t i = 0; i < ntargets; i++) {
		const gpuenv_manifest_target_t *t = &targets[i];
		const char *plat = export_platform(t);
		const char *df = gpuenv_arena_printf(a, "%s/Dockerfile.%s", project_dir, t->name).ptr;
		export_put(&y, "  %s:\n"
			       "    build:\n"
			       "      context: \"%s\"\n"
			       "      dockerfile: \"Dockerfile.%s\"\n"
			       "    image: \"%s:%s\"\n", t->name, ctxdir, t->name, img, t->name);
		if (plat)
			export_put(&y, "    platform: \"%s\"\n", plat);
		if (t->target.ngpus)
			export_put(&y, "    deploy:\n"
				       "      resources:\n"
				       "        reservations:\n"
				       "          devices:\n"
				       "            - driver: nvidia\n"
				       "              count: all\n"
				       "              capabilities: [gpu]\n");
		oom |= !df;
		if (df && !export_exists(df))
			out->missing[out->nmissing++] = t->name;
	}
	if (oom)
		return gpuenv_oom(ctx, "for the compose file");
	if (triton_decl(ctx, a, project_dir, &td) != 0)
		return ctx->err.code;
	if (td.repo && put_triton(ctx, a, kb, &td, targets, ntargets, ctxdir, &y, out) != 0)
		return ctx->err.code;
	return export_done(ctx, &y, "for the compose file");
}
