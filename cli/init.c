/* gpuenv init (docs/workflow.md): a new project's pyproject.toml, PEP 621
 * or Poetry's tables, with this machine as a [tool.gpuenv.targets.NAME]
 * when asked (or by default when it has a GPU): GPU, driver, Python and
 * wheel platform from the facts model (the probe, or --facts), and a
 * .gitignore for .venv.  Nothing that exists is overwritten. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/facts.h"
#include "gpuenv/fs.h"
#include "gpuenv/pep440.h"
#include "gpuenv/toml.h"

struct init_opts {
	const char *dir, *name, *python, *target;
	bool poetry;
};

/* The project's name from the folder's: a valid distribution name. */
static const char *project_name(gpuenv_arena_t *arena, const char *dir)
{
	char *abs = realpath(dir, NULL);
	const char *base = abs ? strrchr(abs, '/') : NULL;
	base = base && base[1] ? base + 1 : "project";
	char *out = gpuenv_arena_strndup(arena, base, strlen(base));
	free(abs);
	for (char *c = out; c && *c; c++)
		if (!gpuenv_is_alnum(*c) && *c != '-' && *c != '_' && *c != '.')
			*c = '-';
	if (out && (!gpuenv_is_alnum(out[0]) || !gpuenv_is_alnum(out[strlen(out) - 1])))
		return "project";
	return out;
}

/* "3.12.3" -> "3.12" */
static const char *python_xy(gpuenv_arena_t *arena, const char *v)
{
	const char *d1 = v ? strchr(v, '.') : NULL, *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	return !v ? NULL : d2 ? gpuenv_arena_strndup(arena, v, (size_t)(d2 - v)) : v;
}

/* A target name from the GPU's: "NVIDIA H200" -> "h200", "Tesla T4" -> "t4". */
static const char *target_name(gpuenv_arena_t *arena, const char *gpu)
{
	const char *w = strrchr(gpu, ' ');
	w = w && w[1] ? w + 1 : gpu;
	char *out = gpuenv_arena_strndup(arena, w, strlen(w));
	for (char *c = out; c && *c; c++)
		*c = gpuenv_is_alnum(*c) ? gpuenv_to_lower(*c) : '-';
	return out && *out ? out : "gpu";
}

static int write_new(struct cli *cli, const char *verb, const char *path, gpuenv_buf_t *b)
{
	int fd;
	if (gpuenv_buf_failed(b))
		return cli_report(cli, CLI_EXIT_CANNOT);
	/* O_EXCL: never over a file that appeared meanwhile */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: %s", verb, path, strerror(errno));
	ssize_t w = write(fd, b->data, b->len);
	if (w != (ssize_t)b->len || fsync(fd) != 0) {
		int e = w < 0 ? errno : EIO;
		close(fd);
		unlink(path);
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: %s", verb, path, strerror(e));
	}
	if (close(fd) != 0)
		return cli_error(cli, CLI_EXIT_CANNOT, "%s: %s: %s", verb, path, strerror(errno));
	return 0;
}

static int cli_init(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "python", required_argument, NULL, 'y' },
		{ "target", required_argument, NULL, 't' },
		{ "poetry", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	struct init_opts o = { .dir = "." };
	gpuenv_arena_t arena;
	gpuenv_buf_t b;
	gpuenv_target_t t;
	const gpuenv_facts_t *facts = NULL;
	const char *path = NULL, *gi = NULL;
	struct stat st_;
	int c, st = CLI_EXIT_USAGE;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT: return st;
		case 'n': o.name = optarg; break;
		case 'y': o.python = optarg; break;
		case 't': o.target = optarg; break;
		case 'P': o.poetry = true; break;
		default: return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (argc - optind > 1)
		return cli_usage_error(cli, verb, "%s: one folder, please", verb->name);
	if (optind < argc)
		o.dir = argv[optind];
	if (o.name && !gpuenv_name_is_valid(gpuenv_str(o.name)))
		return cli_usage_error(cli, verb, "%s: --name %s: not a valid project name (letters, digits, '.', '_', "
			"'-'; a letter or digit at each end)", verb->name, o.name);
	if (o.python) {
		const char *d = strchr(o.python, '.');
		if (!d || d == o.python || !d[1] || strspn(o.python, "0123456789.") != strlen(o.python) || strchr(d + 1, '.'))
			return cli_usage_error(cli, verb, "%s: --python %s: not X.Y (\"3.12\")", verb->name, o.python);
	}
	if (o.target && strcmp(o.target, "none") && strcmp(o.target, "auto") &&
		!gpuenv_name_is_valid(gpuenv_str(o.target)))
		return cli_usage_error(cli, verb, "%s: --target %s: auto, none, or a name (letters, digits, '-', '_')",
			verb->name, o.target);

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	gpuenv_buf_init(&b, &cli->ctx, 1 << 20);
	if (gpuenv_fs_mkdirs(&cli->ctx, o.dir, 0755) != 0) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	path = gpuenv_arena_printf(&arena, "%s/pyproject.toml", o.dir).ptr;
	gi = gpuenv_arena_printf(&arena, "%s/.gitignore", o.dir).ptr;
	if (!path || !gi) {
		st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
		goto out;
	}
	if (lstat(path, &st_) == 0) {
		fprintf(stderr, "%s: %s: %s exists; nothing written\nhint: gpuenv add changes a project's "
				"dependencies\n", cli->prog, verb->name, path);
		st = CLI_EXIT_CANNOT;
		goto out;
	}
	/* this machine, unless told not to look */
	bool want = !o.target || strcmp(o.target, "none");
	memset(&t, 0, sizeof(t));
	if (want || !o.python) {
		if ((st = cli_facts_load(cli, verb->name, cli->opt.facts, NULL, &arena, &facts)) != 0)
			goto out;
		if (gpuenv_target_machine(&cli->ctx, &arena, facts, NULL, SIZE_MAX, &t) != 0) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
	}
	const char *py = o.python ? o.python : python_xy(&arena, t.python);
	bool gpu = t.ngpus > 0 && t.gpus[0].name;
	/* default: a target on a GPU machine; --target NAME|auto asks for one */
	bool target = want && (o.target || gpu);
	if (target && !py) {
		st = cli_error(cli, CLI_EXIT_FAIL, "%s: no Python found on this machine for the target; name one with "
			"--python X.Y", verb->name);
		goto out;
	}
	const char *name = o.name ? o.name : project_name(&arena, o.dir);
	if (o.poetry) {
		gpuenv_buf_puts(&b, "[tool.poetry]\nname = ");
		gpuenv_toml_write_string(&b, gpuenv_str(name));
		gpuenv_buf_puts(&b, "\nversion = \"0.1.0\"\ndescription = \"\"\nauthors = []\npackage-mode = false\n\n"
				    "[tool.poetry.dependencies]\n");
		if (py)
			gpuenv_buf_printf(&b, "python = \"^%s\"\n", py);
	} else {
		gpuenv_buf_puts(&b, "[project]\nname = ");
		gpuenv_toml_write_string(&b, gpuenv_str(name));
		gpuenv_buf_puts(&b, "\nversion = \"0.1.0\"\n");
		if (py)
			gpuenv_buf_printf(&b, "requires-python = \">=%s\"\n", py);
		gpuenv_buf_puts(&b, "dependencies = []\n");
	}
	const char *tname = NULL;
	if (target) {
		tname = o.target && strcmp(o.target, "auto") ? o.target : gpu ? target_name(&arena, t.gpus[0].name) : "cpu";
		const char *plat = gpuenv_target_platform(&arena, &t);
		gpuenv_buf_puts(&b, "\n# This machine, as gpuenv probed it: lock and sync for it (docs/workflow.md).\n"
				    "[tool.gpuenv.targets.");
		gpuenv_toml_write_key(&b, gpuenv_str(tname));
		gpuenv_buf_puts(&b, "]\ngpu = ");
		gpuenv_toml_write_string(&b, gpuenv_str(gpu ? t.gpus[0].name : "none"));
		if (gpu && t.driver) {
			gpuenv_buf_puts(&b, "\ndriver = ");
			gpuenv_toml_write_string(&b, gpuenv_str(t.driver));
		} else if (gpu && t.driver_cuda) {
			gpuenv_buf_puts(&b, "\ncuda = ");
			gpuenv_toml_write_string(&b, gpuenv_str(t.driver_cuda));
		}
		gpuenv_buf_printf(&b, "\npython = \"%s\"\n", py);
		if (plat) {
			gpuenv_buf_puts(&b, "platform = ");
			gpuenv_toml_write_string(&b, gpuenv_str(plat));
			gpuenv_buf_puts(&b, "\n");
		}
	}
	if ((st = write_new(cli, verb->name, path, &b)) != 0)
		goto out;
	if (!cli->json)
		printf("created %s (%s%s%s%s)\n", path, o.poetry ? "Poetry" : "PEP 621", tname ? ", target " : "",
			tname ? tname : "", tname && gpu ? ": this machine's GPU" : "");
	bool gi_made = false;
	if (lstat(gi, &st_) == 0) {
		if (!cli->json)
			printf("%s exists: left as it is (add .venv/ to it if it is missing)\n", gi);
	} else {
		gpuenv_buf_reset(&b);
		gpuenv_buf_puts(&b, ".venv/\n");
		if ((st = write_new(cli, verb->name, gi, &b)) != 0)
			goto out;
		gi_made = true;
		if (!cli->json)
			printf("created %s\n", gi);
	}
	st = CLI_EXIT_OK;
	if (cli->json) { /* what was written, for scripts (docs/workflow.md, "--json") */
		json_t *tj = !tname ? json_null() : json_pack("{s:s, s:s, s:s?, s:s?}", "name", tname, "gpu",
			gpu ? t.gpus[0].name : "none", "python", py, "platform", gpuenv_target_platform(&arena, &t));
		json_t *j = json_pack("{s:s, s:s, s:s, s:s?, s:o, s:{s:s, s:b}}", "verb", verb->name, "file", path,
			"dialect", o.poetry ? "poetry" : "pep621", "python", py, "target", tj, "gitignore",
			"file", gi, "created", gi_made);
		st = j ? (cli_print_json(cli, j) ? CLI_EXIT_CANNOT : CLI_EXIT_OK)
		       : cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory writing the JSON", verb->name);
	}
out:
	gpuenv_buf_free(&b);
	gpuenv_arena_free(&arena);
	return st;
}

const struct cli_verb cli_verb_init = {
	.name = "init",
	.run = cli_init,
	.summary = "start a project: pyproject.toml (with this machine as a target) and .gitignore",
	.usage = "gpuenv init [DIR] [--name N] [--python X.Y] [--target auto|none|NAME] [--poetry]\n"
		 "                 [--facts FILE.json]",
	.help = "  DIR                the project's folder (made when missing); default: .\n"
		"  --name N           the project's name (default: the folder's)\n"
		"  --python X.Y       requires-python >= X.Y and the target's Python (default: the\n"
		"                     Python the probe finds)\n"
		"  --target T         auto: this machine as [tool.gpuenv.targets.NAME] (NAME from\n"
		"                     its GPU: h200, t4; cpu without one); NAME: the same, called\n"
		"                     NAME; none: no target (the default without a GPU: the\n"
		"                     machine is then the project's one implicit target)\n"
		"  --poetry           Poetry's tables ([tool.poetry], package-mode = false)\n"
		"  --json             one object on stdout: the file, its dialect, the Python X.Y,\n"
		"                     the target written (name, gpu, python, platform; null: none),\n"
		"                     the .gitignore and whether it was created\n"
		"exit status: 0 created, 1 no Python found for a target (use --python), 2 usage,\n"
		"4 pyproject.toml exists (nothing written), the facts could not be read, or a\n"
		"file could not be written",
	.groups = CLI_G_FACTS,
};
