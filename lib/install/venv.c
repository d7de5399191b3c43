/* venv.c: virtual environments made without starting Python
 * (gpuenv/venv.h).
 *
 * The layout is `python3 -m venv --without-pip`'s on Linux: pyvenv.cfg,
 * bin/python (a link to the base interpreter) with bin/pythonX and
 * bin/pythonX.Y linked to it, lib/pythonX.Y/site-packages, lib64 -> lib,
 * include/, and the activate scripts.  Everything is written relative to
 * the venv's directory descriptor.
 *
 * A venv being made carries GPUENV_VENV_PARTIAL from the first write until
 * pyvenv.cfg (written last, by rename) is in place: a create killed half
 * way leaves that marker, and the next create completes the venv (every
 * step is idempotent: folders kept, links checked, scripts rewritten).  A
 * folder with neither pyvenv.cfg nor the marker, and not empty, is not a
 * venv and is left alone. */
#include "gpuenv/venv.h"

#include "gpuenv/fs.h"
#include "gpuenv/install.h" /* the scheme filled here */
#include "gpuenv/pycfg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* the marker of a venv whose creation has not finished */
#define GPUENV_VENV_PARTIAL ".gpuenv-venv-partial"
#define CLEAR_DEPTH_MAX 256

/* ---- paths and small writes ------------------------------------------------ */

/* dir made absolute (from the current folder; links kept, as venv's
 * os.path.abspath), tidied, without a trailing '/'. */
static const char *absolute(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *dir)
{
	char buf[PATH_MAX];

	if (!dir || !dir[0]) {
		gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "no venv folder given");
		return NULL;
	}
	if (dir[0] == '/') {
		size_t n = strlen(dir);
		if (n >= sizeof(buf)) {
			gpuenv_fail(ctx, -ENAMETOOLONG, dir, 0, 0, "path too long");
			return NULL;
		}
		memcpy(buf, dir, n + 1);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd))) {
			gpuenv_fail(ctx, -errno, dir, 0, 0, "the current folder: %s", strerror(errno));
			return NULL;
		}
		if (snprintf(buf, sizeof(buf), "%s/%s", cwd, dir) >= (int)sizeof(buf)) {
			gpuenv_fail(ctx, -ENAMETOOLONG, dir, 0, 0, "path too long");
			return NULL;
		}
	}
	gpuenv_fs_tidy_path(buf);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	char *out = gpuenv_arena_strndup(a, buf, n);
	if (!out)
		gpuenv_oom(ctx, "venv path");
	return out;
}


/* mkdirat that accepts an existing folder (not an existing file). */
static int mkdir_at(gpuenv_ctx_t *ctx, int dfd, const char *root, const char *name)
{
	struct stat st;

	if (mkdirat(dfd, name, 0777) == 0)
		return 0;
	if (errno == EEXIST && fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode))
		return 0;
	int e = errno == EEXIST ? ENOTDIR : errno;
	return gpuenv_fail(ctx, -e, root, 0, 0, "%s: cannot create the folder: %s", name, strerror(e));
}

/* A symbolic link name -> target; an existing link elsewhere (or a copy,
 * in copies mode) is replaced, anything else is an error. */
static int link_at(gpuenv_ctx_t *ctx, int dfd, const char *root, const char *target, const char *name)
{
	char cur[PATH_MAX];
	struct stat st;

	for (int tries = 0; tries < 2; tries++) {
		if (symlinkat(target, dfd, name) == 0)
			return 0;
		if (errno != EEXIST)
			break;
		ssize_t k = readlinkat(dfd, name, cur, sizeof(cur) - 1);
		if (k >= 0) {
			cur[k] = '\0';
			if (!strcmp(cur, target))
				return 0;
		} else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
			errno = EEXIST;
			break;
		}
		if (unlinkat(dfd, name, 0) != 0)
			break;
	}
	return gpuenv_fail(ctx, -errno, root, 0, 0, "%s: cannot link it to %s: %s", name, target, strerror(errno));
}

/* Write name (relative to dfd) whole: a temporary file renamed over it. */
static int write_at(gpuenv_ctx_t *ctx, int dfd, const char *root, const char *name, const void *data,
	size_t len, unsigned mode)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(name, '/');
	int fd = -1;

	snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp%ld", slash ? (int)(slash - name + 1) : 0, name,
		slash ? slash + 1 : name, (long)getpid());
	for (int tries = 0; tries < 2 && fd < 0; tries++) {
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd < 0 && errno == EEXIST)
			unlinkat(dfd, tmp, 0); /* left by a killed run of this pid */
		else if (fd < 0)
			break;
	}
	if (fd < 0)
		return gpuenv_fail(ctx, -errno, root, 0, 0, "%s: cannot write it: %s", name, strerror(errno));
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t k = write(fd, p, left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = k < 0 ? errno : ENOSPC;
			close(fd);
			unlinkat(dfd, tmp, 0);
			return gpuenv_fail(ctx, -e, root, 0, 0, "%s: cannot write it: %s", name, strerror(e));
		}
		p += k;
		left -= (size_t)k;
	}
	/* the umask applied to openat's mode; scripts must stay executable */
	if (fchmod(fd, mode) != 0 || close(fd) != 0 || renameat(dfd, tmp, dfd, name) != 0) {
		int e = errno;
		unlinkat(dfd, tmp, 0);
		return gpuenv_fail(ctx, -e, root, 0, 0, "%s: cannot write it: %s", name, strerror(e));
	}
	return 0;
}

/* Copy the file src (absolute) to name (copies mode). */
static int copy_at(gpuenv_ctx_t *ctx, int dfd, const char *root, const char *src, const char *name)
{
	gpuenv_buf_t b;
	int r;

	gpuenv_buf_init(&b, ctx, (size_t)1 << 30);
	if ((r = gpuenv_fs_read(ctx, src, (size_t)1 << 30, &b)) == 0) {
		unlinkat(dfd, name, 0); /* a link from an earlier venv */
		r = write_at(ctx, dfd, root, name, b.data, b.len, 0755);
	}
	gpuenv_buf_free(&b);
	return r;
}

/* Remove everything below the folder fd (not fd itself). */
static int clear_fd(gpuenv_ctx_t *ctx, const char *root, int fd, int depth)
{
	if (depth > CLEAR_DEPTH_MAX)
		return gpuenv_fail(ctx, GPUENV_ETOOBIG, root, 0, 0, "more than %d folders deep: not cleared",
			CLEAR_DEPTH_MAX);
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return gpuenv_fail(ctx, -errno, root, 0, 0, "cannot list it: %s", strerror(errno));
	}
	while (!r && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			(depth == 0 && !strcmp(e->d_name, GPUENV_VENV_PARTIAL)))
			continue;
		if (unlinkat(fd, e->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			r = gpuenv_fail(ctx, -errno, root, 0, 0, "%s: cannot remove it: %s", e->d_name, strerror(errno));
			break;
		}
		int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			r = gpuenv_fail(ctx, -errno, root, 0, 0, "%s: cannot remove it: %s", e->d_name, strerror(errno));
			break;
		}
		r = clear_fd(ctx, root, sub, depth + 1);
		close(sub);
		if (!r && unlinkat(fd, e->d_name, AT_REMOVEDIR) != 0)
			r = gpuenv_fail(ctx, -errno, root, 0, 0, "%s: cannot remove it: %s", e->d_name, strerror(errno));
	}
	closedir(d);
	return r;
}

/* ---- activate scripts ------------------------------------------------------------ */

/* s quoted for a shell: 'it'\''s' (sh, csh: csh also needs \! for '!'),
 * 'it\'s' (fish). */
enum { Q_SH, Q_CSH, Q_FISH };

static int put_quoted(gpuenv_buf_t *b, const char *s, int kind)
{
	int r = gpuenv_buf_putc(b, '\'');
	for (; *s && !r; s++) {
		if (*s == '\'')
			r = gpuenv_buf_puts(b, kind == Q_FISH ? "\\'" : "'\\''");
		else if (*s == '\\' && kind == Q_FISH)
			r = gpuenv_buf_puts(b, "\\\\");
		else if (*s == '!' && kind == Q_CSH)
			r = gpuenv_buf_puts(b, "\\!");
		else
			r = gpuenv_buf_putc(b, *s);
	}
	return r ? r : gpuenv_buf_putc(b, '\'');
}

/* bash and zsh (the same script).  What venv's activate does: deactivate
 * (also run first, "nondestructive", to leave another venv) restores
 * PATH, PYTHONHOME and PS1 and forgets the command hash. */
static int script_sh(gpuenv_buf_t *b, const char *root, const char *prompt)
{
	int r = gpuenv_buf_puts(b,
		"# Activate this virtual environment in bash or zsh (made by gpuenv):\n"
		"#   . bin/activate        (sourced, not run)\n"
		"# `deactivate` leaves it again.\n\n"
		"deactivate () {\n"
		"    if [ -n \"${_OLD_VIRTUAL_PATH+set}\" ]; then\n"
		"        PATH=\"$_OLD_VIRTUAL_PATH\"\n"
		"        export PATH\n"
		"        unset _OLD_VIRTUAL_PATH\n"
		"    fi\n"
		"    if [ -n \"${_OLD_VIRTUAL_PYTHONHOME+set}\" ]; then\n"
		"        PYTHONHOME=\"$_OLD_VIRTUAL_PYTHONHOME\"\n"
		"        export PYTHONHOME\n"
		"        unset _OLD_VIRTUAL_PYTHONHOME\n"
		"    fi\n"
		"    if [ -n \"${_OLD_VIRTUAL_PS1+set}\" ]; then\n"
		"        PS1=\"$_OLD_VIRTUAL_PS1\"\n"
		"        export PS1\n"
		"        unset _OLD_VIRTUAL_PS1\n"
		"    fi\n"
		"    unset VIRTUAL_ENV VIRTUAL_ENV_PROMPT\n"
		"    # commands looked up through the old PATH are forgotten\n"
		"    hash -r 2>/dev/null\n"
		"    if [ \"${1:-}\" != nondestructive ]; then\n"
		"        unset -f deactivate\n"
		"    fi\n"
		"}\n\n"
		"deactivate nondestructive\n\n"
		"VIRTUAL_ENV=");
	r = r ? r : put_quoted(b, root, Q_SH);
	r = r ? r : gpuenv_buf_puts(b, "\nexport VIRTUAL_ENV\nVIRTUAL_ENV_PROMPT=");
	r = r ? r : put_quoted(b, prompt, Q_SH);
	r = r ? r : gpuenv_buf_puts(b,
		"\nexport VIRTUAL_ENV_PROMPT\n\n"
		"_OLD_VIRTUAL_PATH=\"$PATH\"\n"
		"PATH=\"$VIRTUAL_ENV/bin:$PATH\"\n"
		"export PATH\n\n"
		"if [ -n \"${PYTHONHOME+set}\" ]; then\n"
		"    _OLD_VIRTUAL_PYTHONHOME=\"$PYTHONHOME\"\n"
		"    unset PYTHONHOME\n"
		"fi\n\n"
		"if [ -z \"${VIRTUAL_ENV_DISABLE_PROMPT:-}\" ]; then\n"
		"    _OLD_VIRTUAL_PS1=\"${PS1:-}\"\n"
		"    PS1=\"$VIRTUAL_ENV_PROMPT${PS1:-}\"\n"
		"    export PS1\n"
		"fi\n\n"
		"hash -r 2>/dev/null\n");
	return r;
}

static int script_fish(gpuenv_buf_t *b, const char *root, const char *prompt)
{
	int r = gpuenv_buf_puts(b,
		"# Activate this virtual environment in fish (made by gpuenv):\n"
		"#   source bin/activate.fish\n"
		"# `deactivate` leaves it again.\n\n"
		"function deactivate --description 'leave the virtual environment'\n"
		"    if set -q _OLD_VIRTUAL_PATH\n"
		"        set -gx PATH $_OLD_VIRTUAL_PATH\n"
		"        set -e _OLD_VIRTUAL_PATH\n"
		"    end\n"
		"    if set -q _OLD_VIRTUAL_PYTHONHOME\n"
		"        set -gx PYTHONHOME $_OLD_VIRTUAL_PYTHONHOME\n"
		"        set -e _OLD_VIRTUAL_PYTHONHOME\n"
		"    end\n"
		"    if functions -q _venv_old_fish_prompt\n"
		"        functions -e fish_prompt\n"
		"        functions -c _venv_old_fish_prompt fish_prompt\n"
		"        functions -e _venv_old_fish_prompt\n"
		"    end\n"
		"    set -e VIRTUAL_ENV\n"
		"    set -e VIRTUAL_ENV_PROMPT\n"
		"    if test \"$argv[1]\" != nondestructive\n"
		"        functions -e deactivate\n"
		"    end\n"
		"end\n\n"
		"deactivate nondestructive\n\n"
		"set -gx VIRTUAL_ENV ");
	r = r ? r : put_quoted(b, root, Q_FISH);
	r = r ? r : gpuenv_buf_puts(b, "\nset -gx VIRTUAL_ENV_PROMPT ");
	r = r ? r : put_quoted(b, prompt, Q_FISH);
	r = r ? r : gpuenv_buf_puts(b,
		"\nset -gx _OLD_VIRTUAL_PATH $PATH\n"
		"set -gx PATH \"$VIRTUAL_ENV/bin\" $PATH\n\n"
		"if set -q PYTHONHOME\n"
		"    set -gx _OLD_VIRTUAL_PYTHONHOME $PYTHONHOME\n"
		"    set -e PYTHONHOME\n"
		"end\n\n"
		"if test -z \"$VIRTUAL_ENV_DISABLE_PROMPT\"; and functions -q fish_prompt\n"
		"    functions -c fish_prompt _venv_old_fish_prompt\n"
		"    function _venv_status\n"
		"        return $argv[1]\n"
		"    end\n"
		"    function fish_prompt\n"
		"        # the old prompt sees the status of the user's last command\n"
		"        set -l last $status\n"
		"        printf '%s' $VIRTUAL_ENV_PROMPT\n"
		"        _venv_status $last\n"
		"        _venv_old_fish_prompt\n"
		"    end\n"
		"end\n");
	return r;
}

static int script_csh(gpuenv_buf_t *b, const char *root, const char *prompt)
{
	int r = gpuenv_buf_puts(b,
		"# Activate this virtual environment in csh or tcsh (made by gpuenv):\n"
		"#   source bin/activate.csh\n"
		"# `deactivate` leaves it again.\n\n"
		/* csh substitutes a whole `if` line before it tests: a variable
		 * that may be unset is read only behind `test ... &&` */
		"alias deactivate 'unsetenv VIRTUAL_ENV; unsetenv VIRTUAL_ENV_PROMPT; "
		"test $?_OLD_VIRTUAL_PATH != 0 && setenv PATH \"$_OLD_VIRTUAL_PATH:q\" && unset _OLD_VIRTUAL_PATH; "
		"test $?_OLD_VIRTUAL_PROMPT != 0 && set prompt=\"$_OLD_VIRTUAL_PROMPT:q\" && unset _OLD_VIRTUAL_PROMPT; "
		"rehash; test \"\\!:*\" != nondestructive && unalias deactivate'\n\n"
		"deactivate nondestructive\n\n"
		"setenv VIRTUAL_ENV ");
	r = r ? r : put_quoted(b, root, Q_CSH);
	r = r ? r : gpuenv_buf_puts(b, "\nsetenv VIRTUAL_ENV_PROMPT ");
	r = r ? r : put_quoted(b, prompt, Q_CSH);
	r = r ? r : gpuenv_buf_puts(b,
		"\nset _OLD_VIRTUAL_PATH=\"$PATH:q\"\n"
		"setenv PATH \"$VIRTUAL_ENV:q/bin:$PATH:q\"\n\n"
		"if (! $?VIRTUAL_ENV_DISABLE_PROMPT && $?prompt) then\n"
		"    set _OLD_VIRTUAL_PROMPT=\"$prompt:q\"\n"
		"    set prompt = \"$VIRTUAL_ENV_PROMPT:q$prompt:q\"\n"
		"endif\n\n"
		"rehash\n");
	return r;
}

/* ---- reading one ------------------------------------------------------------------ */

static int read_cfg(gpuenv_ctx_t *ctx, int dfd, const char *root, gpuenv_buf_t *b)
{
	int fd = gpuenv_fs_open_regular(NULL, dfd, "pyvenv.cfg", NULL);
	if (fd < 0) {
		if (fd == -ENOENT)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, root, 0, 0, "not a venv: no pyvenv.cfg");
		return gpuenv_fail(ctx, fd, root, 0, 0, "pyvenv.cfg: cannot read it: %s", gpuenv_strerror(fd));
	}
	struct stat st;
	int r = fstat(fd, &st) == 0 && (size_t)st.st_size > GPUENV_PYCFG_MAX ? GPUENV_ETOOBIG
		: gpuenv_fs_read_head(fd, GPUENV_PYCFG_MAX, NULL, b);
	close(fd);
	if (r == GPUENV_ETOOBIG)
		return gpuenv_fail(ctx, r, root, 0, 0, "pyvenv.cfg: larger than %zu KiB: not a venv's",
			GPUENV_PYCFG_MAX >> 10);
	if (r)
		return gpuenv_fail(ctx, r, root, 0, 0, "pyvenv.cfg: cannot read it: %s", gpuenv_strerror(r));
	return 0;
}

/* The line number of key in text (for messages), 0 when absent. */
static unsigned cfg_line(gpuenv_str_t text, gpuenv_str_t value)
{
	unsigned line = 1;
	if (!value.ptr)
		return 0;
	for (const char *p = text.ptr; p < value.ptr; p++)
		line += *p == '\n';
	return line;
}

static bool dir_exists_at(int dfd, const char *name)
{
	struct stat st;
	return fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* What is wrong with the venv's interpreter names (bin/python and its
 * pythonX, pythonX.Y[t] links), NULL when each leads to a program. */
static const char *interpreter_broken(gpuenv_arena_t *a, int dfd, const gpuenv_python_t *py)
{
	char names[3][32];
	struct stat st;

	snprintf(names[0], sizeof(names[0]), "bin/python");
	snprintf(names[1], sizeof(names[1]), "bin/python%u", py->major);
	snprintf(names[2], sizeof(names[2]), "bin/python%u.%u%s", py->major, py->minor,
		py->free_threaded ? "t" : "");
	for (int i = 0; i < 3; i++) {
		if (faccessat(dfd, names[i], X_OK, 0) == 0 && fstatat(dfd, names[i], &st, 0) == 0 &&
			S_ISREG(st.st_mode))
			continue;
		int e = errno;
		const char *why = fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0 ? "is missing"
			: S_ISLNK(st.st_mode) && (e == ENOENT || e == ELOOP) ? "is a link to something that is gone"
			: "is not a program";
		const char *out = gpuenv_arena_printf(a, "%s %s", names[i], why).ptr;
		return out ? out : "bin/python is broken";
	}
	return NULL;
}

static int describe(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *root, int dfd, gpuenv_venv_t *out)
{
	gpuenv_buf_t b;
	const char *cfgpath = gpuenv_arena_printf(a, "%s/pyvenv.cfg", root).ptr;
	int r;

	memset(out, 0, sizeof(*out));
	if (!cfgpath)
		return gpuenv_oom(ctx, "venv");
	gpuenv_buf_init(&b, ctx, GPUENV_PYCFG_MAX + 1);
	if ((r = read_cfg(ctx, dfd, root, &b)))
		goto done;
	gpuenv_str_t text = gpuenv_str_n(b.data, b.len);
	if (!gpuenv_text_valid(b.data, b.len, 0) || memchr(b.data, '\0', b.len)) {
		r = gpuenv_fail(ctx, GPUENV_EFORMAT, cfgpath, 0, 0, "not text (bytes that are not UTF-8)");
		goto done;
	}
	gpuenv_str_t home = gpuenv_pycfg_get(text, "home");
	gpuenv_str_t ver = gpuenv_pycfg_version(text);
	if (!home.len || home.ptr[0] != '/') {
		r = gpuenv_fail(ctx, GPUENV_EFORMAT, cfgpath, cfg_line(text, home), 0, "%s",
			home.ptr ? "home is not an absolute folder" : "no `home = FOLDER` line");
		gpuenv_hint(ctx, "make the venv again: gpuenv venv --clear %s", root);
		goto done;
	}
	unsigned maj = 0, min = 0;
	char vbuf[32];
	if (ver.ptr && ver.len < sizeof(vbuf)) {
		memcpy(vbuf, ver.ptr, ver.len);
		vbuf[ver.len] = '\0';
		if (sscanf(vbuf, "%u.%u", &maj, &min) != 2)
			maj = 0;
	}
	if (!maj) {
		gpuenv_str_t v = gpuenv_pycfg_get(text, "version");
		r = gpuenv_fail(ctx, GPUENV_EFORMAT, cfgpath, cfg_line(text, v), 0, "%s",
			v.ptr ? "version is not X.Y.Z" : "no `version = X.Y.Z` line");
		gpuenv_hint(ctx, "make the venv again: gpuenv venv --clear %s", root);
		goto done;
	}
	gpuenv_python_t *py = &out->python;
	py->home = gpuenv_arena_str(a, home).ptr;
	py->version = gpuenv_arena_strndup(a, vbuf, ver.len);
	py->version_source = "pyvenv.cfg";
	py->found_by = "pyvenv.cfg";
	py->major = maj;
	py->minor = min;
	char xyt[32];
	snprintf(xyt, sizeof(xyt), "lib/python%u.%ut", maj, min);
	py->free_threaded = dir_exists_at(dfd, xyt);
	/* the base interpreter: home/pythonX.Y, else home/python3, home/python */
	const char *names[3] = {
		gpuenv_arena_printf(a, "%s/python%u.%u%s", py->home, maj, min, py->free_threaded ? "t" : "").ptr,
		gpuenv_arena_printf(a, "%s/python3", py->home).ptr,
		gpuenv_arena_printf(a, "%s/python", py->home).ptr,
	};
	for (int i = 0; i < 3 && !py->path; i++)
		if (names[i] && access(names[i], X_OK) == 0)
			py->path = names[i];
	if (!py->path)
		py->path = names[0]; /* gone: the venv says which it was */
	char real[PATH_MAX];
	py->real = py->path && realpath(py->path, real) ? gpuenv_arena_strndup(a, real, strlen(real)) : py->path;
	const char *xy = gpuenv_arena_printf(a, "%u.%u", maj, min).ptr;
	const char *site = gpuenv_arena_printf(a, "%s/lib/python%u.%u%s/site-packages", root, maj, min,
		py->free_threaded ? "t" : "").ptr;
	out->root = root;
	out->scheme.prefix = root;
	out->scheme.dirs[GPUENV_SCHEME_PURELIB] = site;
	out->scheme.dirs[GPUENV_SCHEME_PLATLIB] = site;
	out->scheme.dirs[GPUENV_SCHEME_SCRIPTS] = gpuenv_arena_printf(a, "%s/bin", root).ptr;
	out->scheme.dirs[GPUENV_SCHEME_DATA] = root;
	out->scheme.dirs[GPUENV_SCHEME_HEADERS] = gpuenv_arena_printf(a, "%s/include/site/python%s", root, xy).ptr;
	out->scheme.python = gpuenv_arena_printf(a, "%s/bin/python", root).ptr;
	out->scheme.python_xy = xy;
	out->site = site;
	out->bin = out->scheme.dirs[GPUENV_SCHEME_SCRIPTS];
	out->broken = interpreter_broken(a, dfd, py);
	if (!py->home || !py->version || !py->real || !xy || !site || !out->bin || !out->scheme.python ||
		!out->scheme.dirs[GPUENV_SCHEME_HEADERS])
		r = gpuenv_oom(ctx, "venv");
done:
	gpuenv_buf_free(&b);
	return r;
}

int gpuenv_venv_open(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir, gpuenv_venv_t *out)
{
	const char *root = absolute(ctx, arena, dir);
	if (!root)
		return ctx->err.code;
	int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT)
			return gpuenv_fail(ctx, GPUENV_ENOTFOUND, root, 0, 0, "no such venv folder");
		return gpuenv_fail(ctx, -errno, root, 0, 0, "cannot open the venv folder: %s", strerror(errno));
	}
	int r = describe(ctx, arena, root, dfd, out);
	close(dfd);
	return r;
}

bool gpuenv_venv_own_file(const char *rel, size_t n)
{
	static const char *const files[] = { "pyvenv.cfg", "bin/activate", "bin/activate.fish",
		"bin/activate.csh", "bin/Activate.ps1" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (n == strlen(files[i]) && !memcmp(rel, files[i], n))
			return true;
	/* bin/python, bin/python3, bin/python3.12, bin/python3.13t: any
	 * interpreter name, whatever the venv's version */
	if (n < 10 || memcmp(rel, "bin/python", 10))
		return false;
	size_t i = 10;
	while (i < n && ((rel[i] >= '0' && rel[i] <= '9') || rel[i] == '.'))
		i++;
	if (i < n && i > 10 && rel[i] == 't')
		i++;
	return i == n;
}

/* ---- making one ------------------------------------------------------------------- */

/* What the folder holds: EMPTY, a VENV (pyvenv.cfg), PARTIAL (our marker),
 * or OTHER (*what: one of its entries, for the message). */
enum { F_EMPTY, F_VENV, F_PARTIAL, F_OTHER };

static int folder_state(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *root, int dfd, const char **what)
{
	struct stat st;
	if (fstatat(dfd, "pyvenv.cfg", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return F_VENV;
	if (fstatat(dfd, GPUENV_VENV_PARTIAL, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return F_PARTIAL;
	int d2 = dup(dfd);
	DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	if (!d) {
		if (d2 >= 0)
			close(d2);
		return gpuenv_fail(ctx, -errno, root, 0, 0, "cannot list it: %s", strerror(errno));
	}
	struct dirent *e;
	const char *first = NULL;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* the smallest name, so the message does not depend on readdir's order */
		if (!first || strcmp(e->d_name, first) < 0)
			first = gpuenv_arena_strndup(a, e->d_name, strlen(e->d_name));
	}
	closedir(d);
	*what = first;
	return first ? F_OTHER : F_EMPTY;
}

static int put_cfg(gpuenv_buf_t *b, const gpuenv_python_t *py, const char *root)
{
	return gpuenv_buf_printf(b,
		"home = %s\n"
		"include-system-site-packages = false\n"
		"version = %s\n"
		"executable = %s\n"
		"command = %s -m venv --without-pip %s\n", /* the same venv, made by venv */
		py->home, py->version, py->real, py->real, root);
}

static int build(gpuenv_ctx_t *ctx, gpuenv_arena_t *a, const char *root, int dfd, const gpuenv_python_t *py,
	unsigned flags)
{
	char xy[32], site[96], lib[64], name[64];
	const char *prompt;
	gpuenv_buf_t b;
	int r;

	snprintf(xy, sizeof(xy), "%u.%u%s", py->major, py->minor, py->free_threaded ? "t" : "");
	snprintf(lib, sizeof(lib), "lib/python%s", xy);
	snprintf(site, sizeof(site), "%s/site-packages", lib);
	/* the prompt: the folder's name, as venv's default */
	const char *base = strrchr(root, '/');
	prompt = gpuenv_arena_printf(a, "(%s) ", base && base[1] ? base + 1 : root).ptr;
	if (!prompt)
		return gpuenv_oom(ctx, "venv");
	if ((r = write_at(ctx, dfd, root, GPUENV_VENV_PARTIAL, "", 0, 0644)))
		return r;
	if ((r = mkdir_at(ctx, dfd, root, "bin")) || (r = mkdir_at(ctx, dfd, root, "include")) ||
		(r = mkdir_at(ctx, dfd, root, "lib")) || (r = mkdir_at(ctx, dfd, root, lib)) ||
		(r = mkdir_at(ctx, dfd, root, site)))
		return r;
	if (sizeof(void *) == 8 && (r = link_at(ctx, dfd, root, "lib", "lib64")))
		return r;
	/* bin/python -> the base interpreter; python3, python3.Y (python3.Yt) -> python */
	if (flags & GPUENV_VENV_COPIES)
		r = copy_at(ctx, dfd, root, py->real, "bin/python");
	else
		r = link_at(ctx, dfd, root, py->real, "bin/python");
	if (r)
		return r;
	snprintf(name, sizeof(name), "bin/python%u", py->major);
	if ((r = link_at(ctx, dfd, root, "python", name)))
		return r;
	snprintf(name, sizeof(name), "bin/python%u.%u", py->major, py->minor);
	if ((r = link_at(ctx, dfd, root, "python", name)))
		return r;
	snprintf(name, sizeof(name), "bin/python%u.%ut", py->major, py->minor);
	if (py->free_threaded && (r = link_at(ctx, dfd, root, "python", name)))
		return r;
	gpuenv_buf_init(&b, ctx, (size_t)1 << 20);
	static const struct {
		const char *name;
		int (*write)(gpuenv_buf_t *b, const char *root, const char *prompt);
	} scripts[] = {
		{ "bin/activate", script_sh },
		{ "bin/activate.fish", script_fish },
		{ "bin/activate.csh", script_csh },
	};
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]) && !r; i++) {
		gpuenv_buf_reset(&b);
		if ((r = scripts[i].write(&b, root, prompt)))
			r = gpuenv_oom(ctx, scripts[i].name);
		else
			r = write_at(ctx, dfd, root, scripts[i].name, b.data, b.len, 0644);
	}
	/* venv of 3.13 and later keeps the folder out of git */
	if (!r && (py->major > 3 || (py->major == 3 && py->minor >= 13))) {
		static const char gi[] = "# a virtual environment (made by gpuenv): not for version control\n*\n";
		r = write_at(ctx, dfd, root, ".gitignore", gi, sizeof(gi) - 1, 0644);
	}
	/* last: pyvenv.cfg makes it a venv */
	if (!r) {
		gpuenv_buf_reset(&b);
		r = put_cfg(&b, py, root) ? gpuenv_oom(ctx, "pyvenv.cfg")
					  : write_at(ctx, dfd, root, "pyvenv.cfg", b.data, b.len, 0644);
	}
	gpuenv_buf_free(&b);
	if (!r)
		unlinkat(dfd, GPUENV_VENV_PARTIAL, 0);
	return r;
}

int gpuenv_venv_create(gpuenv_ctx_t *ctx, gpuenv_arena_t *arena, const char *dir, const gpuenv_python_t *py,
	unsigned flags, gpuenv_venv_t *out)
{
	const char *root, *what = NULL;
	int dfd = -1, r;

	if (!py || !py->real || !py->home || !py->version || !py->major)
		return gpuenv_fail(ctx, GPUENV_EUSAGE, NULL, 0, 0, "no interpreter given for the venv");
	if (!(root = absolute(ctx, arena, dir)))
		return ctx->err.code;
	for (const char *p = root; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, root, 0, 0,
				"a control character in the path: the activate scripts could not name it");
	if ((r = gpuenv_fs_mkdirs(ctx, root, 0777)))
		return r;
	if ((dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return gpuenv_fail(ctx, -errno, root, 0, 0, "cannot open the venv folder: %s", strerror(errno));
	int state = folder_state(ctx, arena, root, dfd, &what);
	if (state < 0) {
		r = state;
		goto done;
	}
	if (state == F_VENV && !(flags & GPUENV_VENV_CLEAR)) {
		gpuenv_venv_t cur;
		if ((r = describe(ctx, arena, root, dfd, &cur)))
			goto done;
		if (cur.python.major != py->major || cur.python.minor != py->minor ||
			cur.python.free_threaded != py->free_threaded) {
			r = gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, root, 0, 0,
				"a venv of Python %s%s (pyvenv.cfg), not of Python %s%s (%s)", cur.python.version,
				cur.python.free_threaded ? " free-threaded" : "", py->version,
				py->free_threaded ? " free-threaded" : "", py->path);
			gpuenv_hint(ctx, "use --python %u.%u%s for it, or --clear to make it again for %s",
				cur.python.major, cur.python.minor, cur.python.free_threaded ? "t" : "", py->version);
			goto done;
		}
		unlinkat(dfd, GPUENV_VENV_PARTIAL, 0); /* killed after pyvenv.cfg */
		if (!cur.broken) {
			*out = cur;
			out->action = "kept";
			goto done;
		}
		/* bin/python removed, or its base gone: every step of build is
		 * idempotent, so building again puts the links back */
		if ((r = build(ctx, arena, root, dfd, py, flags)) == 0 &&
			(r = describe(ctx, arena, root, dfd, out)) == 0) {
			if (out->broken)
				r = gpuenv_fail(ctx, GPUENV_EFORMAT, root, 0, 0, "%s, even after making it again",
					out->broken);
			out->action = "repaired";
		}
		goto done;
	}
	if (state == F_OTHER && !(flags & GPUENV_VENV_CLEAR)) {
		r = gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, root, 0, 0,
			"not empty and not a venv (no pyvenv.cfg; it holds %s)", what);
		gpuenv_hint(ctx, "choose another folder, or --clear to empty this one (everything in it is removed)");
		goto done;
	}
	if ((flags & GPUENV_VENV_CLEAR) && state != F_EMPTY) {
		/* marked first, pyvenv.cfg gone next: a clear killed half way is
		 * a partial venv, never one that looks whole */
		if ((r = write_at(ctx, dfd, root, GPUENV_VENV_PARTIAL, "", 0, 0644)))
			goto done;
		if (unlinkat(dfd, "pyvenv.cfg", 0) != 0 && errno != ENOENT) {
			r = gpuenv_fail(ctx, -errno, root, 0, 0, "pyvenv.cfg: cannot remove it: %s", strerror(errno));
			goto done;
		}
		if ((r = clear_fd(ctx, root, dfd, 0)))
			goto done;
	}
	if ((r = build(ctx, arena, root, dfd, py, flags)))
		goto done;
	if ((r = describe(ctx, arena, root, dfd, out)) == 0)
		out->action = flags & GPUENV_VENV_CLEAR && state != F_EMPTY ? "cleared"
			: state == F_PARTIAL ? "completed" : "created";
done:
	if (dfd >= 0)
		close(dfd);
	return r;
}
