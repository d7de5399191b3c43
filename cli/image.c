/* gpuenv image: container images locked by digest (docs/image.md).
 *
 * lock: each IMAGE[:TAG] resolved through its registry (lib/index's OCI
 * client, the token flow, ~/.docker/config.json credentials), its
 * platforms and the knowledge base's components recorded in
 * image-manifest.json (lib/image), entries of the file for other images
 * kept; nothing is written unless every image resolved.
 * check: every image of a manifest resolved again; exit 1 when a tag names
 * another digest now. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "gpuenv/image.h"
#include "gpuenv/kb.h"
#include "gpuenv/manifest.h"

enum { OPT_REGISTRY = 0x2401 };

#define MAX_MIRRORS 64
#define MAX_REFS 256

struct iopts {
	const char *out, *project, *kb_dir;
	gpuenv_registry_mirror_t mirrors[MAX_MIRRORS];
	size_t nmirrors;
	gpuenv_registry_opts_t ro;
};

static const struct option image_opts[] = {
	{ "registry", required_argument, NULL, OPT_REGISTRY },
	{ NULL, 0, NULL, 0 },
};

/* --registry HOST=URL: the later of two for one host is a usage error */
static int add_mirror(struct cli *cli, const struct cli_verb *verb, struct iopts *o, char *arg,
	bool from_project)
{
	char *eq = strchr(arg, '=');

	if (!from_project && (!eq || eq == arg || !eq[1]))
		return cli_usage_error(cli, verb, "%s: --registry %s: write HOST=URL "
			"(nvcr.io=http://127.0.0.1:5000)", verb->name, arg);
	if (o->nmirrors == MAX_MIRRORS)
		return cli_usage_error(cli, verb, "%s: more than %d registries", verb->name, MAX_MIRRORS);
	if (eq)
		*eq = '\0';
	for (size_t i = 0; i < o->nmirrors; i++)
		if (!strcasecmp(o->mirrors[i].host, arg))
			return cli_usage_error(cli, verb, "%s: --registry %s is given twice", verb->name, arg);
	o->mirrors[o->nmirrors].host = arg;
	o->mirrors[o->nmirrors].url = eq + 1;
	o->nmirrors++;
	return 0;
}

static int parse_opts(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	struct iopts *o)
{
	int c, st = 0;

	memset(o, 0, sizeof(*o));
	while ((c = cli_getopt(cli, verb, argc, argv, "", image_opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st ? st : -1;
		case OPT_REGISTRY:
			if ((st = add_mirror(cli, verb, o, optarg, false)))
				return st;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	o->project = cli->opt.project;
	o->kb_dir = cli->opt.kb_dir;
	o->out = cli->opt.output;
	return 0;
}

/* [tool.gpuenv] registries of --project DIR (or ./pyproject.toml when there
 * is one): mirrors for the hosts --registry did not name */
static int project_mirrors(struct cli *cli, const struct cli_verb *verb, struct iopts *o,
	gpuenv_arena_t *arena)
{
	const char *path;
	struct stat sb;
	gpuenv_manifest_t m;

	if (o->project) {
		if (stat(o->project, &sb) == 0 && S_ISDIR(sb.st_mode))
			path = gpuenv_arena_printf(arena, "%s/pyproject.toml", o->project).ptr;
		else
			path = o->project;
	} else {
		path = "pyproject.toml";
		if (stat(path, &sb) != 0)
			return 0;
	}
	if (!path)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (gpuenv_manifest_load(&cli->ctx, arena, path, NULL, &m)) {
		char msg[1200];
		if (o->project || cli->ctx.err.code == -ENOMEM)
			return cli_report(cli, CLI_EXIT_CANNOT);
		/* a pyproject.toml found, not named: its mirrors are not used */
		gpuenv_error_format(&cli->ctx.err, msg, sizeof(msg));
		fprintf(stderr, "%s: image: warning: %s; its [tool.gpuenv] registries are not used "
				"(--project names the project)\n", cli->prog, msg);
		return 0;
	}
	for (size_t i = 0; i < m.nregistries; i++) {
		bool named = false;
		for (size_t k = 0; k < o->nmirrors && !named; k++)
			named = !strcasecmp(o->mirrors[k].host, m.registries[i].host);
		if (named)
			continue;
		if (o->nmirrors == MAX_MIRRORS)
			return cli_usage_error(cli, verb, "%s: more than %d registries", verb->name,
				MAX_MIRRORS);
		o->mirrors[o->nmirrors].host = m.registries[i].host;
		o->mirrors[o->nmirrors].url = m.registries[i].url;
		o->nmirrors++;
	}
	return 0;
}

static void setup_registry(struct iopts *o)
{
	o->ro.mirrors = o->mirrors;
	o->ro.nmirrors = o->nmirrors;
}

/* one failed reference on stderr: the story, then its hint */
static void report_one(struct cli *cli, const gpuenv_error_t *e)
{
	char msg[1200];

	gpuenv_error_format(e, msg, sizeof(msg));
	fprintf(stderr, "%s: image: %s\n", cli->prog, msg);
	if (e->hint[0])
		fprintf(stderr, "hint: %s\n", e->hint);
}

static const char *errtext(const gpuenv_error_t *e, char *buf, size_t n)
{
	gpuenv_error_format(e, buf, n);
	return buf;
}

/* ---- image lock ------------------------------------------------------------------ */

static int image_lock(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct iopts o;
	gpuenv_arena_t a;
	gpuenv_kb_t *kb = NULL;
	gpuenv_image_ref_t refs[MAX_REFS];
	gpuenv_image_entry_t ent[MAX_REFS];
	gpuenv_image_result_t res[MAX_REFS];
	gpuenv_image_manifest_t old = { NULL, 0 }, m = { NULL, 0 };
	size_t n = 0, failed = 0;
	int st;

	if ((st = parse_opts(cli, verb, argc, argv, &o)))
		return st < 0 ? 0 : st;
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: which images (nvcr.io/nvidia/pytorch:25.01-py3)?",
			verb->name);
	if (argc - optind > MAX_REFS)
		return cli_usage_error(cli, verb, "%s: more than %d images", verb->name, MAX_REFS);
	gpuenv_arena_init(&a, &cli->ctx, 0);
	for (int i = optind; i < argc; i++) {
		if (gpuenv_image_ref_parse(&cli->ctx, &a, gpuenv_str(argv[i]), &refs[n])) {
			st = cli_report(cli, cli->ctx.err.code == -ENOMEM ? CLI_EXIT_CANNOT : CLI_EXIT_USAGE);
			goto out;
		}
		if (refs[n].digest) {
			st = cli_usage_error(cli, verb, "%s: %s is already pinned by digest: give "
				"IMAGE:TAG to lock", verb->name, argv[i]);
			goto out;
		}
		bool dup = false;
		for (size_t k = 0; k < n && !dup; k++)
			dup = !strcmp(refs[k].ref, refs[n].ref);
		if (!dup)
			n++;
	}
	if ((st = project_mirrors(cli, verb, &o, &a)))
		goto out;
	setup_registry(&o);
	/* the entries of an existing output for other images are kept */
	if (o.out) {
		struct stat sb;
		if (stat(o.out, &sb) == 0 && gpuenv_image_manifest_read(&cli->ctx, &a, o.out, &old)) {
			gpuenv_hint(&cli->ctx, "image lock keeps the other entries of %s: fix or remove it "
						"first", o.out);
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
	}
	if (gpuenv_kb_load(&cli->ctx, o.kb_dir, &kb)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (gpuenv_image_lock(&cli->ctx, &a, &o.ro, kb, refs, n, ent, res)) {
		st = cli_report(cli, cli->ctx.err.code == GPUENV_EUSAGE ? CLI_EXIT_USAGE : CLI_EXIT_CANNOT);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (res[i].err) {
			report_one(cli, &res[i].error);
			failed++;
		} else if (!res[i].kb_known)
			fprintf(stderr, "%s: image: warning: %s: locked by digest without components: %s\n",
				cli->prog, refs[i].ref, res[i].kb_note);
	}
	if (failed) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "image lock: %zu of %zu images could not be "
			"resolved; nothing written", failed, n);
		goto out;
	}
	/* the new entries, then the old ones for other refs */
	m.images = gpuenv_arena_calloc(&a, n + old.nimages, sizeof(*m.images));
	if (!m.images) {
		st = cli_report(cli, (gpuenv_oom(&cli->ctx, NULL), CLI_EXIT_CANNOT));
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		m.images[m.nimages++] = ent[i];
	for (size_t i = 0; i < old.nimages; i++) {
		bool again = false;
		for (size_t k = 0; k < n && !again; k++)
			again = !strcmp(old.images[i].ref, ent[k].ref);
		if (!again)
			m.images[m.nimages++] = old.images[i];
	}
	if (!o.out) {
		gpuenv_buf_t b;
		gpuenv_buf_init(&b, &cli->ctx, GPUENV_IMAGE_MANIFEST_MAX);
		if (gpuenv_image_manifest_format(&cli->ctx, &m, &b))
			st = cli_report(cli, CLI_EXIT_CANNOT);
		else if (gpuenv_buf_failed(&b))
			st = cli_report(cli, CLI_EXIT_CANNOT);
		else if (fwrite(b.data, 1, b.len, stdout) != b.len)
			st = cli_error(cli, CLI_EXIT_CANNOT, "image lock: cannot write the output");
		gpuenv_buf_free(&b);
		goto out;
	}
	if (gpuenv_image_manifest_write(&cli->ctx, &m, o.out)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (cli->json) {
		json_t *arr = json_array();
		for (size_t i = 0; arr && i < n; i++)
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s?, s:I, s:b, s:s?}", "ref",
				ent[i].ref, "digest", ent[i].digest, "media_type", ent[i].media_type,
				"platforms", (json_int_t)ent[i].nplatforms, "components_known",
				res[i].kb_known, "warning", res[i].kb_known ? NULL : res[i].kb_note));
		st = cli_print_json(cli, json_pack("{s:s, s:o, s:I}", "file", o.out, "locked",
			arr ? arr : json_null(), "images", (json_int_t)m.nimages));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const gpuenv_image_components_t *c = &ent[i].components;
		printf("%s %s", ent[i].ref, ent[i].digest);
		for (size_t k = 0; k < ent[i].nplatforms; k++)
			printf("%s%s/%s%s%s", k ? ", " : " (", ent[i].platforms[k].os,
				ent[i].platforms[k].architecture, ent[i].platforms[k].variant ? "/" : "",
				ent[i].platforms[k].variant ? ent[i].platforms[k].variant : "");
		printf("%s\n", ent[i].nplatforms ? ")" : "");
		if (c->cuda || c->torch)
			printf("  %s%s%s%s%s%s%s%s\n", c->cuda ? "CUDA " : "", c->cuda ? c->cuda : "",
				c->torch ? (c->cuda ? ", torch " : "torch ") : "", c->torch ? c->torch : "",
				c->python ? ", Python " : "", c->python ? c->python : "",
				c->driver_min ? ", driver >= " : "", c->driver_min ? c->driver_min : "");
	}
	printf("%s: %zu image%s\n", o.out, m.nimages, m.nimages == 1 ? "" : "s");
out:
	gpuenv_kb_free(kb);
	gpuenv_arena_free(&a);
	return st;
}

/* ---- image check ------------------------------------------------------------------ */

static int image_check(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct iopts o;
	gpuenv_arena_t a;
	gpuenv_image_manifest_t m;
	gpuenv_image_ref_t *refs = NULL;
	gpuenv_image_entry_t *now = NULL;
	gpuenv_image_result_t *res = NULL;
	const char *path = "image-manifest.json";
	size_t drift = 0, errors = 0;
	json_t *arr = NULL;
	int st;

	if ((st = parse_opts(cli, verb, argc, argv, &o)))
		return st < 0 ? 0 : st;
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	gpuenv_arena_init(&a, &cli->ctx, 0);
	if (gpuenv_image_manifest_read(&cli->ctx, &a, path, &m)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if ((st = project_mirrors(cli, verb, &o, &a)))
		goto out;
	setup_registry(&o);
	if (m.nimages) {
		refs = gpuenv_arena_calloc(&a, m.nimages, sizeof(*refs));
		now = gpuenv_arena_calloc(&a, m.nimages, sizeof(*now));
		res = gpuenv_arena_calloc(&a, m.nimages, sizeof(*res));
		if (!refs || !now || !res) {
			st = cli_report(cli, (gpuenv_oom(&cli->ctx, NULL), CLI_EXIT_CANNOT));
			goto out;
		}
	}
	for (size_t i = 0; i < m.nimages; i++) {
		refs[i].registry = m.images[i].registry;
		refs[i].repository = m.images[i].repository;
		refs[i].tag = m.images[i].tag;
		refs[i].ref = m.images[i].ref;
	}
	if (gpuenv_image_lock(&cli->ctx, &a, &o.ro, NULL, refs, m.nimages, now, res)) {
		st = cli_report(cli, cli->ctx.err.code == GPUENV_EUSAGE ? CLI_EXIT_USAGE : CLI_EXIT_CANNOT);
		goto out;
	}
	if (cli->json)
		arr = json_array();
	for (size_t i = 0; i < m.nimages; i++) {
		const gpuenv_image_entry_t *e = &m.images[i];
		char buf[1200];
		const char *state = res[i].err ? "error" : strcmp(e->digest, now[i].digest) ? "drift"
											      : "unchanged";
		if (res[i].err) {
			errors++;
			if (!cli->json)
				report_one(cli, &res[i].error);
		} else if (!strcmp(state, "drift")) {
			drift++;
			if (!cli->json)
				printf("drift %s: recorded %s, now %s\n", e->ref, e->digest, now[i].digest);
		} else if (!cli->json)
			printf("ok %s %s\n", e->ref, e->digest);
		if (arr)
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s?, s:s?}", "ref", e->ref,
				"status", state, "recorded", e->digest, "current",
				res[i].err ? NULL : now[i].digest, "error",
				res[i].err ? errtext(&res[i].error, buf, sizeof(buf)) : NULL));
	}
	if (arr)
		st = cli_print_json(cli, json_pack("{s:s, s:o, s:I, s:I, s:I}", "file", path, "images",
			arr, "unchanged", (json_int_t)(m.nimages - drift - errors), "drift",
			(json_int_t)drift, "errors", (json_int_t)errors));
	else
		printf("%s: %zu image%s, %zu unchanged, %zu moved, %zu could not be checked\n", path,
			m.nimages, m.nimages == 1 ? "" : "s", m.nimages - drift - errors, drift, errors);
	if (!st)
		st = errors ? CLI_EXIT_CANNOT : drift ? CLI_EXIT_FAIL : CLI_EXIT_OK;
out:
	gpuenv_arena_free(&a);
	return st;
}

/* ---- dispatch ------------------------------------------------------------------------ */

#define REGISTRY_HELP                                                                        \
	"  --registry HOST=URL  send HOST's requests to URL, a mirror (repeatable; also\n"     \
	"                     [tool.gpuenv] registries in pyproject.toml); the manifest keeps\n" \
	"                     the original reference\n"

static const struct cli_group_help image_group_help[] = {
	{ CLI_G_PROJECT, "  --project DIR      read [tool.gpuenv] registries from DIR/pyproject.toml (default:\n"
			 "                     ./pyproject.toml when there is one)\n" },
	{ CLI_G_OUTPUT, "  -o, --output FILE  write the image manifest to FILE atomically, keeping its\n"
			"                     entries for other images (default: standard output)\n" },
	{ 0, NULL },
};

static const struct cli_verb image_lock_verb = {
	.name = "lock",
	.run = image_lock,
	.summary = "resolve tags to digests (per platform) with the KB's components",
	.usage = "gpuenv image lock IMAGE[:TAG]... [-o FILE] [--registry HOST=URL]... [--project DIR]",
	.help = REGISTRY_HELP
		"credentials: ~/.docker/config.json ($DOCKER_CONFIG/config.json) \"auths\", sent only\n"
		"over https or to a loopback host, never written out\n"
		"exit status: 0 locked, 2 usage, 4 an image could not be resolved (no credentials,\n"
		"no such tag, a malformed registry answer) or the manifest not written (nothing\n"
		"is written then)\n",
	.groups = CLI_G_PROJECT | CLI_G_OUTPUT | CLI_G_KB_DIR,
	.group_help = image_group_help,
};

static const struct cli_verb image_check_verb = {
	.name = "check",
	.run = image_check,
	.summary = "say which tags of an image manifest point at another digest now",
	.usage = "gpuenv image check [FILE] [--registry HOST=URL]... [--project DIR]",
	.help = "  FILE               the image manifest (default: image-manifest.json)\n"
		REGISTRY_HELP
		"exit status: 0 every digest unchanged, 1 a tag points at another digest (drift),\n"
		"2 usage, 4 the manifest could not be read or an image could not be resolved\n",
	.groups = CLI_G_PROJECT | CLI_G_KB_DIR,
	.group_help = image_group_help,
};

static const struct cli_verb *const subs[] = { &image_lock_verb, &image_check_verb };

static int cli_image(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, subs, sizeof(subs) / sizeof(subs[0]), "subcommand", argc, argv);
}

const struct cli_verb cli_verb_image = {
	.name = "image",
	.run = cli_image,
	.summary = "lock container images by digest (image-manifest.json) and check for drift",
	.usage = "gpuenv image lock|check [ARGS...]",
	.help = "subcommands (each takes --help and --json):\n"
		"  lock IMAGE[:TAG]... [-o FILE]   resolve tags through their registries, per platform,\n"
		"                                  with the knowledge base's components\n"
		"  check [FILE]                    resolve them again: exit 1 when a tag moved\n",
};
