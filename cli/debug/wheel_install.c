/* debug wheel-install: one wheel through gpuenv_wheel_unpack (or
 * gpuenv_wheel_tree_load of a tree already there) and gpuenv_wheel_stage,
 * and with --prefix the staged folders moved into the venv.  The move is a
 * plain rename, for tests only: sync's transaction (txn.h) is the real one.
 * The scheme is the venv's (gpuenv_venv_open); with --stage alone, one is
 * made up from --python-xy under a prefix that does not exist. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/fs.h"
#include "gpuenv/install.h"
#include "gpuenv/venv.h"

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Move everything in src (a folder fd) into dst, merging folders that are
 * there already and replacing files. */
static int move_into(int src, int dst, int depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0, fd = dup(src);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (!r && (de = readdir(d)) != NULL) {
		struct stat ss, ds;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(src, de->d_name, &ss, AT_SYMLINK_NOFOLLOW) != 0) {
			r = -errno;
			break;
		}
		if (S_ISDIR(ss.st_mode) && fstatat(dst, de->d_name, &ds, AT_SYMLINK_NOFOLLOW) == 0 &&
			S_ISDIR(ds.st_mode) && depth < 256) {
			int a = openat(src, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			int b = openat(dst, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			r = a < 0 || b < 0 ? -errno : move_into(a, b, depth + 1);
			if (a >= 0)
				close(a);
			if (b >= 0)
				close(b);
			if (!r && unlinkat(src, de->d_name, AT_REMOVEDIR) != 0)
				r = -errno;
		} else if (renameat(src, de->d_name, dst, de->d_name) != 0) {
			r = -errno;
		}
	}
	closedir(d);
	return r;
}

static const char *dup_printf(gpuenv_arena_t *a, const char *fmt, const char *x, const char *y)
{
	return gpuenv_arena_printf(a, fmt, x, y).ptr;
}

static int cli_debug_wheel_install(struct cli *cli, const struct cli_verb *verb, int argc,
	char **argv)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'P' },
		{ "python", required_argument, NULL, 'p' },
		{ "python-xy", required_argument, NULL, 'x' },
		{ "sha256", required_argument, NULL, 's' },
		{ "tree", required_argument, NULL, 't' },
		{ "stage", required_argument, NULL, 'S' },
		{ "compile", no_argument, NULL, 'c' },
		{ "requested", no_argument, NULL, 'r' },
		{ "installer", required_argument, NULL, 'i' },
		{ "direct-url", required_argument, NULL, 'd' },
		{ "copy", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prefix_arg = NULL, *python = NULL, *xy_arg = NULL, *sha = NULL, *tree_arg = NULL,
		   *stage_arg = NULL, *installer = NULL, *direct_url = NULL;
	bool compile = false, requested = false, copy = false;
	int c, st;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case 'P': prefix_arg = optarg; break;
		case 'p': python = optarg; break;
		case 'x': xy_arg = optarg; break;
		case 's': sha = optarg; break;
		case 't': tree_arg = optarg; break;
		case 'S': stage_arg = optarg; break;
		case 'c': compile = true; break;
		case 'r': requested = true; break;
		case 'i': installer = optarg; break;
		case 'd': direct_url = optarg; break;
		case 'C': copy = true; break;
		}
	}
	if (optind != argc - 1)
		return cli_usage_error(cli, verb, "%s: give one WHEEL", verb->name);
	const char *wheel = argv[optind];

	gpuenv_arena_t arena;
	gpuenv_wheel_tree_t tree;
	gpuenv_staged_t staged = { 0 };
	char tmp_tree[64] = "", prefix[4096] = "", xy[32] = "";
	const char *tree_dir = tree_arg, *stage_dir = stage_arg;
	bool loaded = false;
	int status = CLI_EXIT_OK, r;

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	gpuenv_venv_t venv;
	if (prefix_arg) {
		if (gpuenv_venv_open(&cli->ctx, &arena, prefix_arg, &venv)) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		snprintf(prefix, sizeof(prefix), "%s", venv.root);
	}
	if (!tree_dir) {
		const char *tmpdir = gpuenv_ctx_getenv(&cli->ctx, "TMPDIR");
		char tpl[4096];
		snprintf(tpl, sizeof(tpl), "%s/gpuenv-tree-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
		if (!mkdtemp(tpl) || rmdir(tpl) != 0) {
			status = cli_error(cli, CLI_EXIT_CANNOT, "cannot make a temporary folder: %s",
				strerror(errno));
			goto out;
		}
		snprintf(tmp_tree, sizeof(tmp_tree), "%.63s", tpl);
		tree_dir = tmp_tree;
	}
	r = GPUENV_ENOTFOUND;
	if (tree_arg) {
		r = gpuenv_wheel_tree_load(&cli->ctx, &arena, tree_dir, true, &tree);
		if (r && r != GPUENV_ENOTFOUND) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		loaded = r == 0;
	}
	if (!loaded && r == GPUENV_ENOTFOUND) {
		struct stat sb;
		if (tree_arg && stat(tree_dir, &sb) == 0) {
			status = cli_error(cli, CLI_EXIT_FAIL, "%s: exists but is not a complete tree",
				tree_dir);
			goto out;
		}
		gpuenv_error_clear(&cli->ctx);
		if (gpuenv_wheel_unpack(&cli->ctx, &arena, wheel, NULL, sha, tree_dir, NULL, &tree)) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
	}
	if (prefix[0] || stage_dir) {
		gpuenv_scheme_t sc = { 0 };
		if (prefix[0]) {
			sc = venv.scheme;
		} else {
			const char *p = "/nonexistent-prefix";
			snprintf(xy, sizeof(xy), "%s", xy_arg ? xy_arg : "3");
			sc.prefix = p;
			sc.python_xy = xy;
			sc.dirs[GPUENV_SCHEME_PURELIB] =
				dup_printf(&arena, "%s/lib/python%s/site-packages", p, xy);
			sc.dirs[GPUENV_SCHEME_PLATLIB] = sc.dirs[GPUENV_SCHEME_PURELIB];
			sc.dirs[GPUENV_SCHEME_SCRIPTS] = dup_printf(&arena, "%s/bin%s", p, "");
			sc.dirs[GPUENV_SCHEME_DATA] = p;
			sc.dirs[GPUENV_SCHEME_HEADERS] =
				dup_printf(&arena, "%s/include/site/python%s", p, xy);
			sc.python = dup_printf(&arena, "%s/bin/python%s", p, "");
		}
		if (python)
			sc.python = python;
		const char *p = sc.prefix;
		if (!stage_dir)
			stage_dir = dup_printf(&arena, "%s/.gpuenv-stage-%s", p, tree.dist_info);
		gpuenv_stage_opts_t so = {
			.link_mode = copy ? GPUENV_LINK_COPY : GPUENV_LINK_AUTO,
			.installer = installer,
			.requested = requested,
			.direct_url_json = direct_url,
			.compile = compile,
		};
		if (gpuenv_wheel_stage(&cli->ctx, &arena, &tree, tree_dir, &sc, stage_dir, &so, &staged)) {
			status = cli_report(cli, CLI_EXIT_FAIL);
			goto out;
		}
		if (prefix[0]) {
			int sfd = open(stage_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			for (int k = 0; sfd >= 0 && k < GPUENV_SCHEME_N && !status; k++) {
				char dst[4096];
				const char *kn = gpuenv_scheme_key_name(k);
				int kfd = openat(sfd, kn, O_RDONLY | O_DIRECTORY | O_CLOEXEC), dfd;
				if (kfd < 0)
					continue;
				snprintf(dst, sizeof(dst), "%s", sc.dirs[k]);
				r = mkdir_p(dst);
				dfd = r ? -1 : open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (dfd < 0 || (r = move_into(kfd, dfd, 0)) || unlinkat(sfd, kn, AT_REMOVEDIR))
					status = cli_error(cli, CLI_EXIT_CANNOT, "cannot move %s/%s into %s: %s",
						stage_dir, kn, dst, strerror(r ? -r : errno));
				if (dfd >= 0)
					close(dfd);
				close(kfd);
			}
			if (sfd >= 0)
				close(sfd);
			if (!status && rmdir(stage_dir) != 0)
				status = cli_error(cli, CLI_EXIT_CANNOT, "cannot remove %s: %s", stage_dir,
					strerror(errno));
		}
	}
	if (status)
		goto out;
	if (cli->json) {
		json_t *o = json_object(), *scripts = json_array();
		for (size_t i = 0; i < tree.nscripts; i++)
			json_array_append_new(scripts,
				json_pack("{s:s, s:s, s:s?, s:b}", "name", tree.scripts[i].name, "module",
					tree.scripts[i].module, "attr", tree.scripts[i].attr, "gui",
					tree.scripts[i].gui));
		json_object_set_new(o, "name", json_string(tree.name));
		json_object_set_new(o, "version", json_string(tree.version));
		json_object_set_new(o, "dist_info", json_string(tree.dist_info));
		json_object_set_new(o, "data_dir", tree.data_dir ? json_string(tree.data_dir) : json_null());
		json_object_set_new(o, "root_is_purelib", json_boolean(tree.root_is_purelib));
		json_object_set_new(o, "wheel_sha256", json_string(tree.wheel_sha256));
		json_object_set_new(o, "files", json_integer((json_int_t)tree.nfiles));
		json_object_set_new(o, "scripts", scripts);
		json_object_set_new(o, "tree", tree_arg ? json_string(tree_arg) : json_null());
		json_object_set_new(o, "tree_reused", json_boolean(loaded));
		json_object_set_new(o, "staged_files",
			staged.stage_dir ? json_integer((json_int_t)staged.nfiles) : json_null());
		json_object_set_new(o, "link_mode",
			staged.stage_dir ? json_integer(staged.link_mode_used) : json_null());
		json_object_set_new(o, "prefix", prefix[0] ? json_string(prefix) : json_null());
		status = cli_print_json(cli, o);
	} else {
		printf("%s %s: %zu files %s %s\n", tree.name, tree.version, tree.nfiles,
			loaded ? "in the tree" : "unpacked to", tree_arg ? tree_arg : "a temporary tree");
		if (staged.stage_dir)
			printf("%s %zu files into %s\n", prefix[0] ? "installed" : "staged", staged.nfiles,
				prefix[0] ? prefix : staged.stage_dir);
	}
out:
	if (tmp_tree[0]) /* our own tree: the venv holds links to its files, so it can go */
		gpuenv_install_remove(&cli->ctx, tmp_tree);
	gpuenv_arena_free(&arena);
	return status;
}

const struct cli_verb cli_verb_debug_wheel_install = {
	.name = "wheel-install",
	.run = cli_debug_wheel_install,
	.summary = "unpack a wheel to a tree, stage it, and move it into a venv (tests)",
	.usage = "gpuenv debug wheel-install [--prefix VENV] [--tree DIR] [--stage DIR] [--sha256 HEX]\n"
		 "       [--python PATH] [--python-xy X.Y] [--compile] [--requested] [--installer NAME]\n"
		 "       [--direct-url JSON] [--copy] [--json] WHEEL",
	.help = "  --tree DIR        the unpacked tree: reused (checked) when complete, else\n"
		"                    unpacked there (default: a temporary folder)\n"
		"  --stage DIR       stage into DIR (default with --prefix: VENV/.gpuenv-stage-*)\n"
		"  --prefix VENV     move the staged folders into VENV's scheme (a plain move,\n"
		"                    for tests; sync's transaction is the real one)\n"
		"  --sha256 HEX      the wheel's expected sha256, checked before anything is written\n"
		"  --python PATH     the interpreter for shebangs (default VENV/bin/python)\n"
		"  --python-xy X.Y   with --stage and no --prefix: the Python version of the\n"
		"                    made-up scheme (under /nonexistent-prefix)\n"
		"  --compile         byte-compile the staged .py files (python -m compileall)\n"
		"  --requested       write REQUESTED\n"
		"  --installer NAME  INSTALLER's content (default gpuenv)\n"
		"  --direct-url JSON direct_url.json's content\n"
		"  --copy            copy files instead of hardlinking them\n",
};
