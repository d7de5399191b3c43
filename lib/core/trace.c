/* The trace recorder and the build shims (gpuenv/trace.h, docs/profile.md).
 *
 * Spans are serialized to JSON as they are recorded, under one mutex, into
 * one capped buffer: the write at the end is then one pass, and a span
 * costs one allocation at most.  The format is Chrome's Trace Event Format
 * (complete events "ph":"X", metadata events "ph":"M" for names). */
#include "gpuenv/trace.h"

#include "gpuenv/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GPUENV_VERSION
#define GPUENV_VERSION "0.0.0"
#endif

#define TRACE_MAX ((size_t)256 << 20)  /* the serialized spans */
#define TRACE_MAX_THREADS 4096	       /* named threads */
#define SHIM_LINE_MAX ((size_t)64 << 10) /* one call's line; PIPE_BUF-free: one write() */
#define SHIM_LOG_MAX ((size_t)256 << 20)
#define VTID_BASE 100000000L /* tool lanes: above any Linux tid (pid_max <= 2^22) */

struct trace_thread {
	long tid;
	char *name;
};

#define LANE_GROUPS 16
#define GROUP_LANES 64
struct lane_group {
	char *name;
	long tid[GROUP_LANES];
	uint64_t last_end[GROUP_LANES];
	size_t n;
};

struct gpuenv_trace {
	pthread_mutex_t mu;
	gpuenv_ctx_t mem; /* the creating context's allocator (copied) */
	uint64_t epoch;
	long pid;
	char *command;
	gpuenv_buf_t events; /* ",\n"-separated event objects */
	size_t nevents, dropped;
	bool oom;
	struct trace_thread *threads;
	size_t nthreads, cap;
	long next_vtid;
	struct lane_group groups[LANE_GROUPS];
	size_t ngroups;
};

uint64_t gpuenv_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static long this_tid(void)
{
	return (long)syscall(SYS_gettid);
}

/* A JSON string: valid UTF-8 copied (", \ and controls escaped), any other
 * byte written as the text \xHH (docs/probe-schema.md, "Strings"). */
static int json_str(gpuenv_buf_t *b, const char *s)
{
	int r = gpuenv_buf_putc(b, '"');
	size_t n = s ? strlen(s) : 0;

	for (size_t i = 0; i < n && !r;) {
		unsigned char c = (unsigned char)s[i];
		size_t k = gpuenv_utf8_seq(s + i, n - i);
		if (c == '"' || c == '\\') {
			r = gpuenv_buf_putc(b, '\\');
			if (!r)
				r = gpuenv_buf_putc(b, (char)c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			r = gpuenv_buf_printf(b, "\\u%04x", c);
			i++;
		} else if (k == 0) {
			r = gpuenv_buf_printf(b, "\\\\x%02x", c);
			i++;
		} else {
			r = gpuenv_buf_append(b, s + i, k);
			i += k;
		}
	}
	return r ? r : gpuenv_buf_putc(b, '"');
}

int gpuenv_trace_new(gpuenv_ctx_t *ctx, const char *command, gpuenv_trace_t **out)
{
	gpuenv_trace_t *t = gpuenv_calloc(ctx, 1, sizeof(*t));

	*out = NULL;
	if (!t)
		return gpuenv_oom(ctx, "the trace");
	gpuenv_ctx_init(&t->mem);
	t->mem.mem = ctx->mem;
	t->epoch = gpuenv_trace_now();
	t->pid = (long)getpid();
	t->next_vtid = VTID_BASE;
	gpuenv_buf_init(&t->events, &t->mem, TRACE_MAX);
	if (!(t->command = gpuenv_strndup(ctx, command ? command : "gpuenv", strlen(command ? command : "gpuenv")))) {
		gpuenv_free(ctx, t);
		return gpuenv_oom(ctx, "the trace");
	}
	pthread_mutex_init(&t->mu, NULL);
	*out = t;
	gpuenv_ctx_t c = *ctx;
	c.trace = t;
	gpuenv_trace_thread_name(&c, "main");
	return 0;
}

void gpuenv_trace_free(gpuenv_ctx_t *ctx, gpuenv_trace_t *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nthreads; i++)
		gpuenv_free(&t->mem, t->threads[i].name);
	for (size_t i = 0; i < t->ngroups; i++)
		gpuenv_free(&t->mem, t->groups[i].name);
	gpuenv_free(&t->mem, t->threads);
	gpuenv_buf_free(&t->events);
	gpuenv_free(ctx, t->command);
	pthread_mutex_destroy(&t->mu);
	gpuenv_free(ctx, t);
}

/* Name tid (under mu); a later name replaces an earlier one. */
static void name_thread_locked(gpuenv_trace_t *t, long tid, const char *name)
{
	size_t i;
	char *copy;

	for (i = 0; i < t->nthreads && t->threads[i].tid != tid; i++)
		;
	if (i == t->nthreads) {
		if (t->nthreads == TRACE_MAX_THREADS)
			return;
		if (t->nthreads == t->cap) {
			size_t nc = t->cap ? 2 * t->cap : 16;
			struct trace_thread *v = gpuenv_realloc(&t->mem, t->threads, nc * sizeof(*v));
			if (!v) {
				t->oom = true;
				return;
			}
			t->threads = v;
			t->cap = nc;
		}
		t->threads[t->nthreads].tid = tid;
		t->threads[t->nthreads].name = NULL;
		t->nthreads++;
	}
	if (!(copy = gpuenv_strndup(&t->mem, name, strlen(name)))) {
		t->oom = true;
		return;
	}
	gpuenv_free(&t->mem, t->threads[i].name);
	t->threads[i].name = copy;
}

void gpuenv_trace_thread_name(const gpuenv_ctx_t *ctx, const char *name)
{
	gpuenv_trace_t *t = ctx->trace;

	if (!t)
		return;
	long tid = this_tid();
	pthread_mutex_lock(&t->mu);
	name_thread_locked(t, tid, name);
	pthread_mutex_unlock(&t->mu);
}

/* Append one event (under mu): the common fields, then extra (a JSON
 * object's members, without braces, or NULL).  On failure the buffer is
 * cut back and the event counted as dropped. */
static void emit_locked(gpuenv_trace_t *t, const char *cat, const char *phase, const char *package,
	const char *detail, uint64_t start, uint64_t dur, long tid, const char *extra)
{
	gpuenv_buf_t *b = &t->events;
	size_t mark = b->len;
	uint64_t ts = start > t->epoch ? start - t->epoch : 0;
	int r = 0;

	if (t->nevents)
		r = gpuenv_buf_puts(b, ",\n");
	if (!r)
		r = gpuenv_buf_printf(b, "{\"ph\":\"X\",\"pid\":%ld,\"tid\":%ld,\"ts\":%llu,\"dur\":%llu,\"cat\":",
			t->pid, tid, (unsigned long long)ts, (unsigned long long)dur);
	if (!r)
		r = json_str(b, cat ? cat : "gpuenv");
	if (!r)
		r = gpuenv_buf_puts(b, ",\"name\":");
	if (!r && package && *package) {
		char name[512];
		snprintf(name, sizeof(name), "%s %s", phase, package);
		r = json_str(b, name);
	} else if (!r)
		r = json_str(b, phase);
	if (!r)
		r = gpuenv_buf_puts(b, ",\"args\":{\"phase\":");
	if (!r)
		r = json_str(b, phase);
	if (!r && package && *package) {
		r = gpuenv_buf_puts(b, ",\"package\":");
		if (!r)
			r = json_str(b, package);
	}
	if (!r && detail && *detail) {
		r = gpuenv_buf_puts(b, ",\"detail\":");
		if (!r)
			r = json_str(b, detail);
	}
	if (!r && extra && *extra) {
		r = gpuenv_buf_putc(b, ',');
		if (!r)
			r = gpuenv_buf_puts(b, extra);
	}
	if (!r)
		r = gpuenv_buf_puts(b, "}}");
	if (r) {
		b->len = mark;
		if (b->data)
			b->data[mark] = '\0';
		t->dropped++;
		if (r == -ENOMEM)
			t->oom = true;
		return;
	}
	t->nevents++;
}

void gpuenv_trace_complete(const gpuenv_ctx_t *ctx, const char *cat, const char *phase,
	const char *package, const char *detail, uint64_t start, uint64_t dur, long tid)
{
	gpuenv_trace_t *t = ctx->trace;

	if (!t)
		return;
	if (!tid)
		tid = this_tid();
	pthread_mutex_lock(&t->mu);
	emit_locked(t, cat, phase ? phase : "span", package, detail, start, dur, tid, NULL);
	pthread_mutex_unlock(&t->mu);
}

/* A lane of group for [start, end) (under mu): the first whose spans
 * all ended by start, else a new one; 0 when none can be had. */
static long lane_locked(gpuenv_trace_t *t, const char *group, uint64_t start, uint64_t end)
{
	struct lane_group *g = NULL;
	char nm[160];

	for (size_t i = 0; i < t->ngroups && !g; i++)
		if (strcmp(t->groups[i].name, group) == 0)
			g = &t->groups[i];
	if (!g) {
		if (t->ngroups == LANE_GROUPS)
			return 0;
		g = &t->groups[t->ngroups];
		if (!(g->name = gpuenv_strndup(&t->mem, group, strlen(group)))) {
			t->oom = true;
			return 0;
		}
		g->n = 0;
		t->ngroups++;
	}
	for (size_t i = 0; i < g->n; i++)
		if (g->last_end[i] <= start) {
			g->last_end[i] = end;
			return g->tid[i];
		}
	if (g->n == GROUP_LANES) { /* 64 at once: the last lane takes the overlap */
		if (g->last_end[g->n - 1] < end)
			g->last_end[g->n - 1] = end;
		return g->tid[g->n - 1];
	}
	g->tid[g->n] = t->next_vtid++;
	g->last_end[g->n] = end;
	snprintf(nm, sizeof(nm), "%s %zu", group, g->n + 1);
	name_thread_locked(t, g->tid[g->n], nm);
	return g->tid[g->n++];
}

void gpuenv_trace_complete_lane(const gpuenv_ctx_t *ctx, const char *group, const char *cat,
	const char *phase, const char *package, const char *detail, uint64_t start, uint64_t dur)
{
	gpuenv_trace_t *t = ctx->trace;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	long tid = lane_locked(t, group, start, start + dur);
	emit_locked(t, cat, phase ? phase : "span", package, detail, start, dur, tid ? tid : this_tid(), NULL);
	pthread_mutex_unlock(&t->mu);
}

void gpuenv_trace_end(const gpuenv_ctx_t *ctx, const char *cat, const char *phase,
	const char *package, const char *detail, uint64_t start)
{
	if (!ctx->trace)
		return;
	uint64_t now = gpuenv_trace_now();
	gpuenv_trace_complete(ctx, cat, phase, package, detail, start, now > start ? now - start : 0, 0);
}

void gpuenv_trace_counts(const gpuenv_trace_t *t, size_t *events, size_t *dropped)
{
	*events = t->nevents;
	*dropped = t->dropped;
}

static int meta(gpuenv_buf_t *b, long pid, long tid, const char *what, const char *name)
{
	int r = gpuenv_buf_printf(b, "{\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,\"name\":\"%s\",\"args\":{\"name\":",
		pid, tid, what);
	if (!r)
		r = json_str(b, name);
	return r ? r : gpuenv_buf_puts(b, "}},\n");
}

int gpuenv_trace_write(gpuenv_ctx_t *ctx, gpuenv_trace_t *t, const char *path)
{
	gpuenv_buf_t b;
	int r;

	gpuenv_buf_init(&b, ctx, TRACE_MAX + ((size_t)16 << 20));
	pthread_mutex_lock(&t->mu);
	r = gpuenv_buf_puts(&b, "{\"traceEvents\":[\n");
	if (!r)
		r = meta(&b, t->pid, t->pid, "process_name", t->command);
	for (size_t i = 0; i < t->nthreads && !r; i++)
		if (t->threads[i].name)
			r = meta(&b, t->pid, t->threads[i].tid, "thread_name", t->threads[i].name);
	if (!r && t->nevents)
		r = gpuenv_buf_append(&b, t->events.data, t->events.len);
	else if (!r && b.len >= 2)
		b.len -= 2; /* the last metadata event's ",\n" */
	if (!r)
		r = gpuenv_buf_puts(&b, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"tool\":\"gpuenv\",\"version\":\"" GPUENV_VERSION "\",\"command\":");
	if (!r)
		r = json_str(&b, t->command);
	if (!r)
		r = gpuenv_buf_printf(&b, ",\"clock\":\"CLOCK_MONOTONIC, microseconds since the trace began\",\"events\":%zu,\"dropped\":%zu}}\n",
			t->nevents, t->dropped);
	size_t dropped = t->dropped;
	bool oom = t->oom;
	pthread_mutex_unlock(&t->mu);
	if (r) {
		gpuenv_buf_free(&b);
		return r == -ENOMEM ? gpuenv_oom(ctx, "the trace")
				    : gpuenv_fail(ctx, r, path, 0, 0, "the trace is too large to write");
	}
	r = gpuenv_fs_write_atomic(ctx, path, b.data, b.len, 0644);
	gpuenv_buf_free(&b);
	if (r)
		return r;
	if (dropped || oom) {
		gpuenv_fail(ctx, oom ? -ENOMEM : GPUENV_ETOOBIG, path, 0, 0,
			"the trace was written without %zu span(s): %s", dropped,
			oom ? "out of memory" : "over the 256 MiB cap");
		return gpuenv_hint(ctx, "profile a smaller part of the work");
	}
	return 0;
}

/* ---- shims ---------------------------------------------------------------- */

static const char *const shim_names[] = {
	"cc", "c++", "gcc", "g++", "clang", "clang++", "nvcc", "ld", "ld.bfd", "ld.gold",
	"ld.lld", "ar", "as", "ranlib", "nm", "strip", "cpp",
	/* Debian's Python compiles with the triplet names (sysconfig CC) */
	"x86_64-linux-gnu-gcc", "x86_64-linux-gnu-g++", "x86_64-linux-gnu-c++",
	"aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "aarch64-linux-gnu-c++",
	NULL,
};

const char *const *gpuenv_trace_shim_names(void)
{
	return shim_names;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

bool gpuenv_trace_is_shim(const char *argv0)
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

int gpuenv_trace_shims_setup(gpuenv_ctx_t *ctx, const char *dir, const char *self,
	gpuenv_trace_shims_t *out)
{
	char exe[PATH_MAX], p[PATH_MAX];
	int r, fd;

	memset(out, 0, sizeof(*out));
	if (!self) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return gpuenv_fail(ctx, -errno, "/proc/self/exe", 0, 0,
				"cannot find the gpuenv executable for the build's tool shims: %s", strerror(errno));
		exe[n] = '\0';
		self = exe;
		/* gpuenv-shim next to it starts faster (it loads only libc) */
		char *slash = strrchr(exe, '/');
		if (slash && (size_t)(slash - exe) + sizeof("/gpuenv-shim") <= sizeof(p)) {
			memcpy(p, exe, (size_t)(slash - exe));
			memcpy(p + (slash - exe), "/gpuenv-shim", sizeof("/gpuenv-shim"));
			if (access(p, X_OK) == 0) {
				memcpy(exe, p, strlen(p) + 1);
			}
		}
	}
	if ((size_t)snprintf(out->dir, sizeof(out->dir), "%s", dir) >= sizeof(out->dir) ||
		(size_t)snprintf(out->path_prefix, sizeof(out->path_prefix), "%s/bin", dir) >= sizeof(out->path_prefix) ||
		(size_t)snprintf(out->log, sizeof(out->log), "%s/calls.log", dir) >= sizeof(out->log))
		return gpuenv_fail(ctx, -ENAMETOOLONG, dir, 0, 0, "the shim folder's path is too long");
	if ((r = gpuenv_fs_mkdirs(ctx, out->path_prefix, 0755)))
		return r;
	for (size_t i = 0; shim_names[i]; i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", out->path_prefix, shim_names[i]) >= sizeof(p))
			return gpuenv_fail(ctx, -ENAMETOOLONG, dir, 0, 0, "the shim folder's path is too long");
		if (unlink(p) < 0 && errno != ENOENT)
			return gpuenv_fail(ctx, -errno, p, 0, 0, "cannot replace the shim: %s", strerror(errno));
		if (symlink(self, p) < 0)
			return gpuenv_fail(ctx, -errno, p, 0, 0, "cannot make the shim: %s", strerror(errno));
	}
	if ((fd = open(out->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return gpuenv_fail(ctx, -errno, out->log, 0, 0, "cannot create the calls file: %s", strerror(errno));
	close(fd);
	out->env[0].name = GPUENV_SHIM_LOG_ENV;
	out->env[0].value = out->log;
	out->env[1].name = GPUENV_SHIM_DIR_ENV;
	out->env[1].value = out->path_prefix;
	out->nenv = 2;
	return 0;
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

int gpuenv_trace_shim_parse(char *line, size_t len, gpuenv_shim_call_t *out)
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

int gpuenv_trace_shim_run(gpuenv_ctx_t *ctx, int argc, char **argv, char *const *envp,
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

/* ---- collecting the calls --------------------------------------------------- */

struct call {
	uint64_t start, end;
	char *line; /* in the calls file's buffer */
	size_t len;
};

/* start and duration of a line without changing it (digits only: no escapes) */
static bool peek_times(const char *p, size_t n, uint64_t *start, uint64_t *end)
{
	uint64_t v[2] = { 0, 0 };
	size_t i = 3;

	if (n < 3 || memcmp(p, "v1\t", 3) != 0)
		return false;
	for (int k = 0; k < 2; k++) {
		size_t d = 0;
		for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, d++) {
			if (v[k] > (UINT64_MAX - 9) / 10)
				return false;
			v[k] = v[k] * 10 + (uint64_t)(p[i] - '0');
		}
		if (!d || i >= n || p[i++] != '\t')
			return false;
	}
	if (v[1] > UINT64_MAX - v[0])
		return false;
	*start = v[0];
	*end = v[0] + v[1];
	return true;
}

static int by_start(const void *a, const void *b)
{
	const struct call *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the longer (outer) first */
}

#define LANE_DEPTH 32
struct lane {
	long tid;
	uint64_t ends[LANE_DEPTH];
	size_t depth;
};

static void rm_shims(const gpuenv_trace_shims_t *s)
{
	char p[PATH_MAX];

	for (size_t i = 0; shim_names[i]; i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", s->path_prefix, shim_names[i]) < sizeof(p))
			unlink(p);
	rmdir(s->path_prefix);
	unlink(s->log);
	rmdir(s->dir);
}

static int call_extra(gpuenv_buf_t *x, const gpuenv_shim_call_t *c)
{
	int r = gpuenv_buf_printf(x, "\"tool\":");

	if (!r)
		r = json_str(x, c->tool);
	if (!r)
		r = gpuenv_buf_printf(x, ",\"status\":%d,\"os_pid\":%ld,\"argv\":[", c->status, c->pid);
	for (size_t i = 0; i < c->argc && !r; i++) {
		if (i)
			r = gpuenv_buf_putc(x, ',');
		if (!r)
			r = json_str(x, c->argv[i]);
	}
	if (!r)
		r = gpuenv_buf_putc(x, ']');
	if (!r && c->truncated)
		r = gpuenv_buf_puts(x, ",\"argv_truncated\":true");
	return r;
}

int gpuenv_trace_shims_collect(gpuenv_ctx_t *ctx, gpuenv_trace_shims_t *s, const char *package,
	size_t *skipped)
{
	gpuenv_trace_t *t = ctx->trace;
	gpuenv_buf_t log;
	struct call *calls = NULL;
	gpuenv_shim_call_t *one = NULL;
	struct lane lanes[64];
	size_t nlanes = 0, ncalls = 0, nlines = 0, bad = 0;
	int r = 0;

	if (skipped)
		*skipped = 0;
	if (!t)
		goto out;
	gpuenv_buf_init(&log, ctx, SHIM_LOG_MAX);
	if ((r = gpuenv_fs_read(ctx, s->log, SHIM_LOG_MAX, &log)))
		goto out_buf;
	for (size_t i = 0; i < log.len; i++)
		nlines += log.data[i] == '\n';
	nlines += log.len && log.data[log.len - 1] != '\n';
	if (!(one = gpuenv_alloc(ctx, sizeof(*one))) ||
		(nlines && !(calls = gpuenv_calloc(ctx, nlines, sizeof(*calls))))) {
		r = gpuenv_oom(ctx, "the build's tool calls");
		goto out_buf;
	}
	for (char *p = log.data; p && p < log.data + log.len;) {
		char *nl = memchr(p, '\n', (size_t)(log.data + log.len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(log.data + log.len - p);
		/* a line without its newline was cut by a killed shim */
		if (nl && peek_times(p, n, &calls[ncalls].start, &calls[ncalls].end)) {
			calls[ncalls].line = p;
			calls[ncalls].len = n;
			ncalls++;
		} else
			bad++;
		p = nl ? nl + 1 : NULL;
	}
	if (ncalls)
		qsort(calls, ncalls, sizeof(*calls), by_start);
	pthread_mutex_lock(&t->mu);
	for (size_t i = 0; i < ncalls; i++) {
		struct call *k = &calls[i];
		size_t l;
		if (gpuenv_trace_shim_parse(k->line, k->len, one) != 0) {
			bad++;
			continue;
		}
		/* a lane where the call follows the open ones' ends or nests in the innermost */
		for (l = 0; l < nlanes; l++) {
			struct lane *ln = &lanes[l];
			while (ln->depth && ln->ends[ln->depth - 1] <= k->start)
				ln->depth--;
			if (!ln->depth || (k->end <= ln->ends[ln->depth - 1] && ln->depth < LANE_DEPTH))
				break;
		}
		if (l == nlanes) {
			if (nlanes == sizeof(lanes) / sizeof(lanes[0]))
				l = nlanes - 1; /* 64 lanes busy at once: overlap in the last */
			else {
				char nm[300];
				lanes[l].tid = t->next_vtid++;
				lanes[l].depth = 0;
				nlanes++;
				if (l)
					snprintf(nm, sizeof(nm), "build %s: tools %zu", package ? package : "", l + 1);
				else
					snprintf(nm, sizeof(nm), "build %s: tools", package ? package : "");
				name_thread_locked(t, lanes[l].tid, nm);
			}
		}
		if (lanes[l].depth < LANE_DEPTH)
			lanes[l].ends[lanes[l].depth++] = k->end;
		gpuenv_buf_t x;
		gpuenv_buf_init(&x, &t->mem, SHIM_LINE_MAX * 4);
		if (call_extra(&x, one) == 0)
			emit_locked(t, "tool", one->tool, package, one->cwd, k->start, k->end - k->start,
				lanes[l].tid, x.data);
		else
			t->dropped++;
		gpuenv_buf_free(&x);
	}
	pthread_mutex_unlock(&t->mu);
	if (skipped)
		*skipped = bad;
	if (bad)
		gpuenv_log(ctx, GPUENV_LOG_WARN, "%s: %zu tool call line(s) of the build of %s were cut short or malformed and left out of the trace",
			s->log, bad, package ? package : "a package");
out_buf:
	gpuenv_free(ctx, calls);
	gpuenv_free(ctx, one);
	gpuenv_buf_free(&log);
out:
	rm_shims(s);
	return r;
}
