/* gpuenv export: a target's lock as pip-installable text (docs/export.md).
 *
 * requirements: the index lines of the sources the lock used (--index-url
 * for the one most packages came from, PyPI first when it is one of them,
 * --extra-index-url for the others), then one requirement per package,
 * "name==version ; marker", with a --hash=sha256: for every file the lock
 * has for it (wheels and sdist), so that `pip install --require-hashes -r`
 * installs exactly the lock; a package the lock has from a single URL or
 * path is written "name @ URL" with its hash.  constraints: the same pins
 * without hashes and index lines, as pip's -c takes them (a URL is not a
 * constraint: such packages are left out, with a comment).  Nothing is
 * written when a package cannot be exported (a directory or VCS entry has no
 * hash to enforce): the error names it and says what to do. */
#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/fs.h"
#include "gpuenv/project.h"
#include "gpuenv/pylock.h"

enum { OPT_PROJECT = 0x2201, OPT_TARGET, OPT_LOCK, OPT_FORMAT, OPT_OUT, OPT_NO_HASHES, OPT_BASE,
	OPT_TRUST_BASE, OPT_IMAGE_MANIFEST };

#define PYPI_SIMPLE "https://pypi.org/simple"

struct index_count {
	const char *url;
	size_t n;
};

static bool is_pypi(const char *url)
{
	return strncmp(url, PYPI_SIMPLE, strlen(PYPI_SIMPLE)) == 0;
}

/* The indexes packages came from, the primary first: PyPI when used, else
 * the one most packages came from (ties: the first in package order). */
static size_t collect_indexes(const gpuenv_lock_t *lk, struct index_count *ix, size_t max)
{
	size_t n = 0, best = 0;

	for (size_t i = 0; i < lk->npackages; i++) {
		const char *u = lk->packages[i].index;
		size_t k;
		if (!u)
			continue;
		for (k = 0; k < n && strcmp(ix[k].url, u); k++)
			;
		if (k == n) {
			if (n == max)
				continue;
			ix[n++] = (struct index_count){ u, 0 };
		}
		ix[k].n++;
	}
	for (size_t k = 1; k < n; k++)
		if ((is_pypi(ix[k].url) && !is_pypi(ix[best].url)) ||
			(is_pypi(ix[k].url) == is_pypi(ix[best].url) && ix[k].n > ix[best].n))
			best = k;
	if (best) {
		struct index_count t = ix[0];
		ix[0] = ix[best];
		ix[best] = t;
	}
	return n;
}

/* The one file of a package that has no index (a find-links or path wheel),
 * as a URL, or NULL. */
static const char *single_url(gpuenv_arena_t *a, const gpuenv_lock_package_t *p,
	const gpuenv_lock_file_t **file)
{
	const gpuenv_lock_file_t *f = p->nwheels == 1 && !p->sdist ? &p->wheels[0] :
		!p->nwheels && p->sdist ? p->sdist : p->archive;
	*file = f;
	if (!f)
		return NULL;
	if (f->url)
		return f->url;
	if (f->path)
		return f->path[0] == '/' ? gpuenv_arena_printf(a, "file://%s", f->path).ptr : NULL;
	return NULL;
}

static void put_hash(gpuenv_buf_t *o, const gpuenv_lock_file_t *f)
{
	if (f && f->sha256)
		gpuenv_buf_printf(o, " \\\n    --hash=sha256:%s", f->sha256);
}

int cli_export_requirements(struct cli *cli, gpuenv_arena_t *a, const gpuenv_lock_t *lk, const char *lock_path,
	bool constraints, bool hashes, gpuenv_buf_t *o)
{
	struct index_count ix[32];
	size_t nix = collect_indexes(lk, ix, 32);
	const char *tname = lk->target.name;

	gpuenv_buf_printf(o, "# %s exported by gpuenv from %s%s%s%s\n", constraints ? "constraints" :
		"requirements", lock_path, tname ? " (target " : "", tname ? tname : "", tname ? ")" : "");
	if (!constraints && hashes)
		gpuenv_buf_printf(o, "# pip install --require-hashes -r FILE installs exactly the lock\n");
	if (constraints)
		for (size_t k = 0; k < nix; k++)
			gpuenv_buf_printf(o, "# index: %s\n", ix[k].url);
	else
		for (size_t k = 0; k < nix; k++)
			gpuenv_buf_printf(o, "%s %s\n", k ? "--extra-index-url" : "--index-url", ix[k].url);
	gpuenv_buf_printf(o, "\n");
	for (size_t i = 0; i < lk->npackages; i++) {
		const gpuenv_lock_package_t *p = &lk->packages[i];
		const char *mk = p->marker;
		if (p->directory || p->vcs) {
			if (constraints) {
				gpuenv_buf_printf(o, "# %s: a %s entry, not a constraint\n", p->name,
					p->directory ? "directory" : "VCS");
				continue;
			}
			if (hashes) {
				gpuenv_fail(&cli->ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "package %s is a "
					"%s entry: pip cannot check a hash of it, so --require-hashes would "
					"refuse the file", p->name, p->directory ? "directory" : "VCS");
				return gpuenv_hint(&cli->ctx, "export with --no-hashes, or --format "
							      "constraints");
			}
			if (p->directory)
				gpuenv_buf_printf(o, "%s%s", p->editable ? "-e " : "", p->directory);
			else
				gpuenv_buf_printf(o, "%s @ %s+%s@%s", p->name, p->vcs->type,
					p->vcs->url ? p->vcs->url : p->vcs->path, p->vcs->commit_id);
		} else if (!p->index) {
			const gpuenv_lock_file_t *f;
			const char *url = single_url(a, p, &f);
			if (!url) {
				gpuenv_fail(&cli->ctx, GPUENV_EUNSUPPORTED, lock_path, 0, 0, "package %s %s "
					"has %zu files and no index: pip needs one URL or an index to find "
					"it", p->name, p->version ? p->version : "", p->nwheels +
					(p->sdist != NULL));
				return gpuenv_hint(&cli->ctx, "lock it from an index or find-links source "
							      "(gpuenv lock --find-links DIR)");
			}
			if (constraints) {
				gpuenv_buf_printf(o, "# %s: from %s, a URL is not a constraint\n", p->name, url);
				continue;
			}
			gpuenv_buf_printf(o, "%s @ %s", p->name, url);
			if (mk)
				gpuenv_buf_printf(o, " ; %s", mk);
			if (hashes)
				put_hash(o, f);
			gpuenv_buf_printf(o, "\n");
			continue;
		} else
			gpuenv_buf_printf(o, "%s==%s", p->name, p->version);
		if (mk)
			gpuenv_buf_printf(o, " ; %s", mk);
		if (hashes && !constraints && p->index) {
			for (size_t w = 0; w < p->nwheels; w++)
				put_hash(o, &p->wheels[w]);
			put_hash(o, p->sdist);
		}
		gpuenv_buf_printf(o, "\n");
	}
	return o->len && o->data ? 0 : gpuenv_oom(&cli->ctx, "the export");
}

static int cli_export(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "project", required_argument, NULL, OPT_PROJECT },
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "lock", required_argument, NULL, OPT_LOCK },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, OPT_OUT },
		{ "no-hashes", no_argument, NULL, OPT_NO_HASHES },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "trust-base", no_argument, NULL, OPT_TRUST_BASE },
		{ "image-manifest", required_argument, NULL, OPT_IMAGE_MANIFEST },
		{ NULL, 0, NULL, 0 },
	};
	const char *project = NULL, *target = NULL, *lock = NULL, *format = "requirements", *out = NULL;
	const char *base = NULL, *image_manifest = NULL;
	bool hashes = true, constraints, docker, compose, trust_base = false;
	struct cli_project pj;
	const gpuenv_manifest_target_t *dt = NULL;
	bool have_pj = false;
	gpuenv_arena_t a;
	gpuenv_lock_t lk;
	gpuenv_buf_t o;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "o:", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case OPT_PROJECT:
			project = optarg;
			break;
		case OPT_TARGET:
			target = optarg;
			break;
		case OPT_LOCK:
			lock = optarg;
			break;
		case OPT_FORMAT:
			format = optarg;
			break;
		case 'o':
		case OPT_OUT:
			out = optarg;
			break;
		case OPT_NO_HASHES:
			hashes = false;
			break;
		case OPT_BASE:
			base = optarg;
			break;
		case OPT_TRUST_BASE:
			trust_base = true;
			break;
		case OPT_IMAGE_MANIFEST:
			image_manifest = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (strcmp(format, "requirements") && strcmp(format, "constraints") && strcmp(format, "dockerfile") &&
		strcmp(format, "compose"))
		return cli_usage_error(cli, verb, "%s: --format %s: the formats are requirements, "
			"constraints, dockerfile and compose", verb->name, format);
	if (lock && (project || target))
		return cli_usage_error(cli, verb, "%s: --lock names the lock; --project and --target "
			"choose one: give one or the other", verb->name);
	constraints = !strcmp(format, "constraints");
	docker = !strcmp(format, "dockerfile");
	compose = !strcmp(format, "compose");
	if (lock && (docker || compose))
		return cli_usage_error(cli, verb, "%s: --format %s is made for a project's targets (their "
			"source is the build context): give --project and --target, not --lock", verb->name,
			format);
	if ((base || trust_base || image_manifest) && !docker)
		return cli_usage_error(cli, verb, "%s: --base, --trust-base and --image-manifest are "
			"options of --format dockerfile", verb->name);
	if (compose && target)
		return cli_usage_error(cli, verb, "%s: --format compose has a service for every target: "
			"leave --target out", verb->name);
	if ((docker || compose) && !hashes)
		return cli_usage_error(cli, verb, "%s: --format %s installs with --require-hashes: "
			"--no-hashes does not apply", verb->name, format);
	gpuenv_arena_init(&a, &cli->ctx, 0);
	memset(&lk, 0, sizeof(lk));
	if (compose) {
		if ((st = cli_project_open(cli, verb->name, project, NULL, NULL, NULL, &pj)) == 0) {
			struct cli_export_docker eo = { .verb = verb, .pj = &pj, .out = out };
			st = cli_export_compose(cli, &eo);
		}
		cli_project_close(&pj);
		gpuenv_arena_free(&a);
		return st;
	}
	if (!lock) {
		const gpuenv_manifest_target_t *t = NULL;
		if ((st = cli_project_open(cli, verb->name, project, NULL, NULL, NULL, &pj)) != 0)
			goto done;
		have_pj = true;
		if (target)
			t = cli_project_target(cli, verb, &pj, target, &st);
		else if (pj.ntargets == 1)
			t = &pj.targets[0];
		else
			st = cli_usage_error(cli, verb, "%s: the project declares %zu targets: name one "
				"with --target", verb->name, pj.ntargets);
		if (!t)
			goto done;
		dt = t;
		lock = gpuenv_arena_printf(&a, "%s/%s", pj.dir,
			gpuenv_project_lock_name(&a, &pj.m, t)).ptr;
		{
			const char *detail = NULL;
			const char *state = cli_lock_check_one(cli, &a, &pj.m, t, lock, &detail, &lk);
			if (!strcmp(state, "missing")) {
				st = cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: no lock for target %s (run "
					"gpuenv lock --target %s)", verb->name, lock, t->name, t->name);
				goto done;
			}
			if (!strcmp(state, "stale"))
				fprintf(stderr, "%s: %s: warning: %s is stale (%s): exporting it as it "
					"is; gpuenv lock --target %s brings it up to date\n", cli->prog,
					verb->name, lock, detail ? detail : "the project changed", t->name);
		}
	}
	if (!lk.lock_version && cli_lock_read(cli, &a, lock, &lk)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto done;
	}
	if (docker) {
		struct cli_export_docker eo = { .verb = verb, .pj = &pj, .t = dt, .lk = &lk, .lock_path = lock,
			.base = base, .trust_base = trust_base, .image_manifest = image_manifest, .out = out };
		st = cli_export_dockerfile(cli, &eo);
		goto done;
	}
	gpuenv_buf_init(&o, &cli->ctx, GPUENV_PYLOCK_MAX_SIZE);
	if (cli_export_requirements(cli, &a, &lk, lock, constraints, hashes, &o))
		st = cli_report(cli, CLI_EXIT_CANNOT);
	else if ((st = cli_write_output(cli, verb, out, o.data, o.len, 0)) == CLI_EXIT_OK && out)
		fprintf(stderr, "%s: %zu packages from %s\n", out, lk.npackages, lock);
	gpuenv_buf_free(&o);
done:
	if (have_pj)
		cli_project_close(&pj);
	gpuenv_arena_free(&a);
	return st;
}

const struct cli_verb cli_verb_export = {
	.name = "export",
	.run = cli_export,
	.summary = "a target's lock as pip requirements or constraints, a Dockerfile or a compose file",
	.usage = "gpuenv export [--project DIR] [--target NAME | --lock FILE]\n"
		 "              [--format requirements|constraints] [--no-hashes] [-o FILE]\n"
		 "       gpuenv export [--project DIR] [--target NAME] --format dockerfile\n"
		 "              [--base IMAGE[:TAG][@DIGEST] [--trust-base]] [--image-manifest FILE]\n"
		 "              [-o FILE]\n"
		 "       gpuenv export [--project DIR] --format compose [-o FILE]",
	.help = "  --project DIR      the project (default: .); its lock of --target (or of its one target)\n"
		"  --lock FILE        export this lock instead (requirements, constraints)\n"
		"  --format F         requirements (default): index lines, name==version ; marker and a\n"
		"                     --hash for every file, for pip install --require-hashes -r;\n"
		"                     constraints: the pins alone, for pip install -c;\n"
		"                     dockerfile: a Dockerfile for the target (with -o: its requirements\n"
		"                     file and a .dockerignore beside it); compose: docker-compose.yml,\n"
		"                     one service per target\n"
		"  --no-hashes        requirements without hashes (directory and VCS entries allowed)\n"
		"  --base IMAGE       the Dockerfile's base image instead of the knowledge base's choice,\n"
		"                     checked the same way (the lock's CUDA major, the target's driver\n"
		"                     and Python); refused with the reason when it does not fit\n"
		"  --trust-base       write a --base image the knowledge base does not know, unchecked\n"
		"  --image-manifest FILE  the image lock whose digest FROM writes the base image by\n"
		"                     (default: image-manifest.json in the project, when there)\n"
		"  -o, --output FILE  write FILE atomically (default: standard output)\n"
		"exit status: 0 written, 1 the base image does not fit the target or the lock (the\n"
		"reason is given; nothing is written), 2 usage, 4 no lock, an unreadable lock, a\n"
		"package that cannot be exported, no base image the knowledge base knows fits, or\n"
		"the output could not be written (nothing is written)\n",
};
