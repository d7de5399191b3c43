/* The build's tool shims, the tool side (gpuenv/shim.h, docs/profile.md
 * "Tool calls"): the names a shim answers to, the calls file's line (written
 * here, parsed here for the collector), and the run of the real tool.  What
 * the gpuenv-shim executable links: this file and core's, nothing else. */
#include "gpuenv/shim.h"

#include "gpuenv/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHIM_LINE_MAX GPUENV_SHIM_LINE_MAX

static const char *const shim_names[] = {
	"cc", "c++", "gcc", "g++", "clang", "clang++", "nvcc", "ld", "ld.bfd", "ld.gold",
	"ld.lld", "ar", "as", "ranlib", "nm", "strip", "cpp",
	/* Debian's Python compiles with the triplet names (sysconfig CC) */
	"x86_64-linux-gnu-gcc", "x86_64-linux-gnu-g++", "x86_64-linux-gnu-c++",
	"aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "aarch64-linux-gnu-c++",
	NULL,
};

const char *const *gpuenv_shim_names(void)
{
	return shim_names;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

bool gpuenv_shim_is_tool(const char *argv0)
{
	const char *b;

	if (!argv0)
		return false;
	b = base_name(argv0);
	for (size_t i = 0; shim_names[i]; i++)
		if (strcmp(b, shim_names[i]) == 0)
			return true;
	return false;
}

/* The calls file's line:  v1 TAB start TAB dur TAB pid TAB status TAB flags
 * TAB tool TAB cwd (TAB arg)* LF, every field with \ TAB LF CR written as
 * \\ \t \n \r; flags "t" when the argv was cut to fit SHIM_LINE_MAX. */
static int put_field(gpuenv_buf_t *b, const char *s)
{
	int r = gpuenv_buf_putc(b, '\t');

	for (; *s && !r; s++) {
		switch (*s) {
		case '\\': r = gpuenv_buf_puts(b, "\\\\"); break;
		case '\t': r = gpuenv_buf_puts(b, "\\t"); break;
		case '\n': r = gpuenv_buf_puts(b, "\\n"); break;
		case '\r': r = gpuenv_buf_puts(b, "\\r"); break;
		default: r = gpuenv_buf_putc(b, *s);
		}
	}
	return r;
}

static bool unescape_field(char *s)
{
	char *w = s;

	for (char *p = s; *p; p++) {
		if (*p != '\\') {
			*w++ = *p;
			continue;
		}
		switch (*++p) {
		case '\\': *w++ = '\\'; break;
		case 't': *w++ = '\t'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		default: return false;
		}
	}
	*w = '\0';
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	return gpuenv_str_to_u64(gpuenv_str(s), out);
}

int gpuenv_shim_parse(char *line, size_t len, gpuenv_shim_call_t *out)
{
	char *f[8 + GPUENV_SHIM_MAX_ARGS];
	size_t nf = 0;
	uint64_t v;

	memset(out, 0, offsetof(gpuenv_shim_call_t, argv));
	if (len && line[len - 1] == '\n')
		len--;
	if (memchr(line, '\0', len))
		return GPUENV_ESYNTAX;
	line[len] = '\0';
	for (char *p = line;;) {
		if (nf == sizeof(f) / sizeof(f[0]))
			return GPUENV_ESYNTAX;
		f[nf++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	if (nf < 8 || strcmp(f[0], "v1") != 0 || strchr(line + len, '\n'))
		return GPUENV_ESYNTAX;
	for (size_t i = 1; i < nf; i++)
		if (strchr(f[i], '\n') || !unescape_field(f[i]))
			return GPUENV_ESYNTAX;
	if (!parse_u64(f[1], &out->start) || !parse_u64(f[2], &out->dur))
		return GPUENV_ESYNTAX;
	if (!parse_u64(f[3], &v) || v > (uint64_t)LONG_MAX)
		return GPUENV_ESYNTAX;
	out->pid = (long)v;
	if (!parse_u64(f[4], &v) || v > 255 + 128)
		return GPUENV_ESYNTAX;
	out->status = (int)v;
	if (strcmp(f[5], "") && strcmp(f[5], "t"))
		return GPUENV_ESYNTAX;
	out->truncated = f[5][0] == 't';
	if (!*f[6] || strchr(f[6], '/'))
		return GPUENV_ESYNTAX;
	out->tool = f[6];
	out->cwd = f[7];
	out->argc = nf - 8;
	for (size_t i = 8; i < nf; i++)
		out->argv[i - 8] = f[i];
	return 0;
}

/* Is path an executable regular file that is not this executable? */
static bool is_other_tool(const char *path, const struct stat *self)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return false;
	return !(self && st.st_dev == self->st_dev && st.st_ino == self->st_ino);
}

static int find_real(gpuenv_ctx_t *ctx, const char *name, char *out, size_t outsz)
{
	const char *path = gpuenv_ctx_getenv(ctx, "PATH");
	const char *skip = gpuenv_ctx_getenv(ctx, GPUENV_SHIM_DIR_ENV);
	struct stat self, skipst;
	bool have_self = stat("/proc/self/exe", &self) == 0;
	bool have_skip = skip && *skip && stat(skip, &skipst) == 0;

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		char d[PATH_MAX];
		struct stat dst;
		snprintf(d, sizeof(d), "%.*s", (int)(n ? n : 1), n ? p : ".");
		if (!(have_skip && stat(d, &dst) == 0 && dst.st_dev == skipst.st_dev && dst.st_ino == skipst.st_ino) &&
			(size_t)snprintf(out, outsz, "%s/%s", d, name) < outsz &&
			is_other_tool(out, have_self ? &self : NULL))
			return 0;
		if (!colon)
			break;
		p = colon + 1;
	}
	gpuenv_fail(ctx, GPUENV_ENOTFOUND, NULL, 0, 0,
		"%s: no such tool on PATH after the gpuenv shims (PATH=%s)", name, path);
	return gpuenv_hint(ctx, "install %s, or put the folder that has it on PATH", name);
}

static int append_call(gpuenv_ctx_t *ctx, const char *log, const char *tool, int argc, char **argv,
	uint64_t start, uint64_t dur, long pid, int status)
{
	gpuenv_buf_t b;
	char cwd[PATH_MAX];
	size_t flags_at;
	int r, fd;

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	gpuenv_buf_init(&b, ctx, SHIM_LINE_MAX * 2);
	r = gpuenv_buf_printf(&b, "v1\t%llu\t%llu\t%ld\t%d\t", (unsigned long long)start,
		(unsigned long long)dur, pid, status);
	flags_at = b.len;
	if (!r)
		r = put_field(&b, tool);
	if (!r)
		r = put_field(&b, cwd);
	for (int i = 1; i < argc && !r; i++) {
		size_t before = b.len;
		r = put_field(&b, argv[i]);
		if (!r && b.len + 1 > SHIM_LINE_MAX) { /* cut: the call still counts */
			b.len = before;
			r = gpuenv_buf_puts(&b, "\n");
			if (!r) {
				/* insert the flag: rebuild with "t" (rare path) */
				gpuenv_buf_t c;
				gpuenv_buf_init(&c, ctx, SHIM_LINE_MAX * 2);
				r = gpuenv_buf_append(&c, b.data, flags_at);
				if (!r)
					r = gpuenv_buf_putc(&c, 't');
				if (!r)
					r = gpuenv_buf_append(&c, b.data + flags_at, b.len - flags_at);
				gpuenv_buf_free(&b);
				b = c;
			}
			goto write;
		}
	}
	if (!r)
		r = gpuenv_buf_putc(&b, '\n');
write:
	if (r) {
		gpuenv_buf_free(&b);
		return r == -ENOMEM ? gpuenv_oom(ctx, "the shim's call line") : r;
	}
	if ((fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0) {
		r = gpuenv_fail(ctx, -errno, log, 0, 0, "cannot open the calls file: %s", strerror(errno));
		gpuenv_buf_free(&b);
		return r;
	}
	/* one write() of the whole line: O_APPEND puts it at the end in one
	 * piece while other shims of a parallel build write theirs */
	ssize_t w = write(fd, b.data, b.len);
	if (w < 0 || (size_t)w != b.len)
		r = gpuenv_fail(ctx, w < 0 ? -errno : -EIO, log, 0, 0, "cannot append to the calls file: %s",
			w < 0 ? strerror(errno) : "short write");
	close(fd);
	gpuenv_buf_free(&b);
	return r;
}

int gpuenv_shim_run(gpuenv_ctx_t *ctx, int argc, char **argv, char *const *envp,
	int *status, int *signo)
{
	const char *tool = base_name(argv[0]);
	const char *log = gpuenv_ctx_getenv(ctx, GPUENV_SHIM_LOG_ENV);
	char real[PATH_MAX];
	char *saved0 = argv[0];
	struct sigaction ign, old_int, old_quit;
	pid_t pid;
	int r, ws;

	*status = 127;
	*signo = 0;
	if ((r = find_real(ctx, tool, real, sizeof(real))))
		return r;
	/* as system() does: ^C goes to the tool, the shim waits to record it */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	sigset_t def;
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGQUIT);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	argv[0] = real; /* the real path: gcc and nvcc find their own files from it */
	uint64_t t0 = gpuenv_trace_now();
	r = posix_spawn(&pid, real, NULL, &attr, argv, envp);
	argv[0] = saved0;
	posix_spawnattr_destroy(&attr);
	if (r) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		return gpuenv_fail(ctx, -r, real, 0, 0, "cannot run %s: %s", tool, strerror(r));
	}
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR) {
			r = -errno;
			break;
		}
	uint64_t dur = gpuenv_trace_now() - t0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (r)
		return gpuenv_fail(ctx, r, real, 0, 0, "cannot wait for %s: %s", tool, strerror(-r));
	if (WIFSIGNALED(ws)) {
		*signo = WTERMSIG(ws);
		*status = 128 + *signo;
	} else
		*status = WEXITSTATUS(ws);
	if (log && *log)
		return append_call(ctx, log, tool, argc, argv, t0, dur, (long)pid, *status);
	return 0;
}
