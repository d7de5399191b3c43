/* gpuenv debug txn: one transaction on a venv (lib/install/txn.c) from
 * the command line: distributions removed by name, stage folders made by
 * hand (or by a test) installed, or a pending transaction recovered, so
 * the crash tests drive real processes (docs/install.md, "Transactions and
 * crash safety"). */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuenv/env.h"
#include "gpuenv/txn.h"

#define DEBUG_TXN_MAX 256 /* --remove / --install each */

static int copy_file(int sfd, const char *name, int dfd, mode_t mode)
{
	char buf[1 << 16];
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out, r = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w <= 0) {
				r = w < 0 ? -errno : -ENOSPC;
				break;
			}
			off += w;
		}
		if (r)
			break;
	}
	if (n < 0 && !r)
		r = -errno;
	close(in);
	if (close(out) != 0 && !r)
		r = -errno;
	return r;
}

/* Copy the folder src into dst (made): files, folders, symlinks, modes. */
static int copy_tree(int sparent, const char *src, int dparent, const char *dst, char *where,
	size_t wsz)
{
	int sfd, dfd, r = 0;
	DIR *d;
	struct dirent *e;
	struct stat st;

	if (fstatat(sparent, src, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (mkdirat(dparent, dst, st.st_mode & 07777) != 0) {
		snprintf(where, wsz, "%s", dst);
		return -errno;
	}
	sfd = openat(sparent, src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dfd = openat(dparent, dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0 || dfd < 0 || !(d = fdopendir(sfd))) {
		r = -errno;
		if (sfd >= 0)
			close(sfd);
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	while (!r && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(sfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			r = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			r = copy_tree(sfd, e->d_name, dfd, e->d_name, where, wsz);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(sfd, e->d_name, target, sizeof(target) - 1);
			if (n < 0)
				r = -errno;
			else if ((target[n] = 0, symlinkat(target, dfd, e->d_name)) != 0)
				r = -errno;
		} else if (S_ISREG(st.st_mode)) {
			r = copy_file(sfd, e->d_name, dfd, st.st_mode);
		}
		if (r && !where[0])
			snprintf(where, wsz, "%s", e->d_name);
	}
	closedir(d);
	close(dfd);
	return r;
}

/* Put the hand-made stage folder src at the transaction's stage path dst:
 * renamed (--move), or copied. */
static int place_stage(struct cli *cli, const char *src, const char *dst, bool move)
{
	char where[PATH_MAX] = "";
	int r;

	if (move) {
		if (rename(src, dst) == 0)
			return 0;
		if (errno != EXDEV)
			return gpuenv_fail(&cli->ctx, -errno, src, 0, 0, "cannot move it to %s: %s", dst,
				strerror(errno));
	}
	r = copy_tree(AT_FDCWD, src, AT_FDCWD, dst, where, sizeof(where));
	if (r)
		return gpuenv_fail(&cli->ctx, r, src, 0, 0, "cannot copy it to %s (at %s): %s", dst,
			where[0] ? where : "the start", strerror(-r));
	return 0;
}

static void report_text(const char *what, const gpuenv_txn_report_t *r)
{
	printf("%s: %zu operations, %zu renames, %zu files removed\n", what, r->ops, r->renames,
		r->removed_files);
}

static json_t *report_json(const gpuenv_txn_report_t *r)
{
	return json_pack("{s:b,s:b,s:I,s:I,s:I}", "recovered", r->recovered, "rolled_forward",
		r->rolled_forward, "ops", (json_int_t)r->ops, "renames", (json_int_t)r->renames,
		"removed_files", (json_int_t)r->removed_files);
}

static int cli_debug_txn(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	const char *prefix = NULL, *xy = NULL, *removes[DEBUG_TXN_MAX], *installs[DEBUG_TXN_MAX];
	size_t nrm = 0, nin = 0;
	bool recover_only = false, move = false;
	unsigned flags = 0;
	int c, st;
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' },
		{ "python-xy", required_argument, NULL, 'x' },
		{ "remove", required_argument, NULL, 'r' },
		{ "install", required_argument, NULL, 'i' },
		{ "move", no_argument, NULL, 'm' },
		{ "recover", no_argument, NULL, 'R' },
		{ "wait", no_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if ((c == 'r' && nrm == DEBUG_TXN_MAX) || (c == 'i' && nin == DEBUG_TXN_MAX))
			return cli_usage_error(cli, verb, "at most %d --remove and %d --install",
				DEBUG_TXN_MAX, DEBUG_TXN_MAX);
		switch (c) {
		case 'p': prefix = optarg; break;
		case 'x': xy = optarg; break;
		case 'r': removes[nrm++] = optarg; break;
		case 'i': installs[nin++] = optarg; break;
		case 'm': move = true; break;
		case 'R': recover_only = true; break;
		case 'w': flags |= GPUENV_TXN_WAIT; break;
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (!prefix || prefix[0] != '/')
		return cli_usage_error(cli, verb, "%s: --prefix VENV (an absolute path) is needed",
			verb->name);
	if (recover_only && (nrm || nin))
		return cli_usage_error(cli, verb, "%s: --recover alone, or --remove / --install",
			verb->name);

	gpuenv_txn_report_t rec, done;
	memset(&done, 0, sizeof(done));
	if (recover_only) {
		if (gpuenv_txn_recover(&cli->ctx, prefix, flags, &rec))
			return cli_report(cli, CLI_EXIT_CANNOT);
		if (cli->json)
			return cli_print_json(cli, json_pack("{s:o}", "recovery", report_json(&rec)));
		if (!rec.recovered)
			printf("nothing to recover\n");
		else
			report_text(rec.rolled_forward ? "rolled forward" : "rolled back", &rec);
		return CLI_EXIT_OK;
	}
	unsigned major, minor;
	char tail;
	if (!xy || sscanf(xy, "%u.%u%c", &major, &minor, &tail) != 2)
		return cli_usage_error(cli, verb, "%s: --python-xy X.Y is needed (the venv's lib/pythonX.Y)",
			verb->name);

	gpuenv_arena_t a;
	gpuenv_scheme_t s;
	gpuenv_txn_t *T;
	gpuenv_arena_init(&a, &cli->ctx, 0);
	s.prefix = prefix;
	s.python_xy = xy;
	s.dirs[GPUENV_SCHEME_PURELIB] = s.dirs[GPUENV_SCHEME_PLATLIB] =
		gpuenv_arena_printf(&a, "%s/lib/python%s/site-packages", prefix, xy).ptr;
	s.dirs[GPUENV_SCHEME_SCRIPTS] = gpuenv_arena_printf(&a, "%s/bin", prefix).ptr;
	s.dirs[GPUENV_SCHEME_DATA] = prefix;
	s.dirs[GPUENV_SCHEME_HEADERS] = gpuenv_arena_printf(&a, "%s/include/site/python%s", prefix, xy).ptr;
	s.python = gpuenv_arena_printf(&a, "%s/bin/python", prefix).ptr;
	if (!s.dirs[GPUENV_SCHEME_PURELIB] || !s.dirs[GPUENV_SCHEME_SCRIPTS] ||
		!s.dirs[GPUENV_SCHEME_HEADERS] || !s.python) {
		gpuenv_arena_free(&a);
		return cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
	}
	if (gpuenv_txn_begin(&cli->ctx, &s, flags, &rec, &T)) {
		gpuenv_arena_free(&a);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	st = CLI_EXIT_OK;
	if (nrm) {
		gpuenv_str_t site = gpuenv_str(s.dirs[GPUENV_SCHEME_PURELIB]);
		gpuenv_env_list_t l;
		if (gpuenv_env_read(&cli->ctx, &a, &site, 1, NULL, &l))
			st = cli_report(cli, CLI_EXIT_CANNOT);
		for (size_t i = 0; !st && i < nrm; i++) {
			const gpuenv_env_dist_t *d = gpuenv_env_find(l.dists, l.ndists, removes[i]);
			if (!d)
				st = cli_error(cli, CLI_EXIT_CANNOT, "%s: %s is not installed in %s",
					verb->name, removes[i], prefix);
			else if (gpuenv_txn_remove(T, &cli->ctx, d))
				st = cli_report(cli, CLI_EXIT_CANNOT);
		}
	}
	for (size_t i = 0; !st && i < nin; i++) {
		const char *base = strrchr(installs[i], '/');
		const char *dst = gpuenv_txn_stage_dir(T, base && base[1] ? base + 1 : installs[i]);
		if (!dst)
			st = cli_report(cli, CLI_EXIT_CANNOT);
		else if (place_stage(cli, installs[i], dst, move) || gpuenv_txn_install(T, &cli->ctx, dst))
			st = cli_report(cli, CLI_EXIT_CANNOT);
	}
	if (st) {
		gpuenv_txn_abort(T);
		gpuenv_arena_free(&a);
		return st;
	}
	int r = gpuenv_txn_commit(T, &cli->ctx, &done);
	gpuenv_arena_free(&a);
	if (r)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (cli->json)
		return cli_print_json(cli, json_pack("{s:o,s:o}", "recovery", report_json(&rec), "commit",
						   report_json(&done)));
	if (rec.recovered)
		report_text(rec.rolled_forward ? "recovered a pending transaction: rolled forward"
					       : "recovered a pending transaction: rolled back",
			&rec);
	if (!done.ops)
		printf("nothing to do\n");
	else
		report_text("committed", &done);
	return CLI_EXIT_OK;
}

const struct cli_verb cli_verb_debug_txn = {
	.name = "txn",
	.run = cli_debug_txn,
	.summary = "change a venv's distributions as one transaction (journal, commit, recovery)",
	.usage = "gpuenv debug txn --prefix VENV --python-xy X.Y [--remove NAME]... [--install STAGE]...\n"
		 "       [--move] [--wait] [--json]\n"
		 "gpuenv debug txn --prefix VENV --recover [--wait] [--json]",
	.help = "  --remove NAME   a distribution of VENV's site-packages, removed through its RECORD\n"
		"  --install STAGE a stage folder (purelib/ platlib/ scripts/ data/ headers/ with a\n"
		"                  NAME-VER.dist-info), copied into the transaction's stage area\n"
		"  --move          rename the stage folders there instead of copying them\n"
		"  --recover       only recover a pending transaction (roll forward or back)\n"
		"  --wait          wait for another gpuenv changing VENV (else: exit 4, its pid named)\n"
		"  test hooks: GPUENV_TEST_TXN_CRASH_AT, GPUENV_TEST_TXN_STEP_US, GPUENV_TEST_TXN_FAIL_AT\n"
		"  (docs/install.md, \"Transactions and crash safety\")\n",
};
