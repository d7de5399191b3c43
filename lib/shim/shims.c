/* The build's tool shims, the builder side (gpuenv/shim.h, docs/profile.md
 * "Tool calls"): the shim folder made for a build, and its calls file turned
 * into "tool" spans of the trace recorder (gpuenv/trace.h). */
#include "gpuenv/shim.h"

#include "gpuenv/fs.h"
#include "gpuenv/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHIM_LINE_MAX GPUENV_SHIM_LINE_MAX
#define SHIM_LOG_MAX ((size_t)256 << 20)

int gpuenv_shim_setup(gpuenv_ctx_t *ctx, const char *dir, const char *self,
	gpuenv_shims_t *out)
{
	const char *const *names = gpuenv_shim_names();
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
	for (size_t i = 0; names[i]; i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", out->path_prefix, names[i]) >= sizeof(p))
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

static void rm_shims(const gpuenv_shims_t *s)
{
	const char *const *names = gpuenv_shim_names();
	char p[PATH_MAX];

	for (size_t i = 0; names[i]; i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", s->path_prefix, names[i]) < sizeof(p))
			unlink(p);
	rmdir(s->path_prefix);
	unlink(s->log);
	rmdir(s->dir);
}

/* The call's args (the buffer is sticky: checked once by the caller). */
static void call_extra(gpuenv_buf_t *x, const gpuenv_shim_call_t *c)
{
	gpuenv_buf_puts(x, "\"tool\":");
	gpuenv_trace_json_str(x, c->tool);
	gpuenv_buf_printf(x, ",\"status\":%d,\"os_pid\":%ld,\"argv\":[", c->status, c->pid);
	for (size_t i = 0; i < c->argc; i++) {
		if (i)
			gpuenv_buf_putc(x, ',');
		gpuenv_trace_json_str(x, c->argv[i]);
	}
	gpuenv_buf_putc(x, ']');
	if (c->truncated)
		gpuenv_buf_puts(x, ",\"argv_truncated\":true");
}

int gpuenv_shim_collect(gpuenv_ctx_t *ctx, gpuenv_shims_t *s, const char *package,
	size_t *skipped)
{
	gpuenv_ctx_t quiet = *ctx; /* the args' buffer: recording never touches ctx->err */
	gpuenv_buf_t log;
	struct call *calls = NULL;
	gpuenv_shim_call_t *one = NULL;
	struct lane lanes[64];
	size_t nlanes = 0, ncalls = 0, nlines = 0, bad = 0;
	int r = 0;

	if (skipped)
		*skipped = 0;
	if (!ctx->trace)
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
	for (size_t i = 0; i < ncalls; i++) {
		struct call *k = &calls[i];
		size_t l;
		if (gpuenv_shim_parse(k->line, k->len, one) != 0) {
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
				if (l)
					snprintf(nm, sizeof(nm), "build %s: tools %zu", package ? package : "", l + 1);
				else
					snprintf(nm, sizeof(nm), "build %s: tools", package ? package : "");
				lanes[l].tid = gpuenv_trace_lane_new(ctx, nm);
				lanes[l].depth = 0;
				nlanes++;
			}
		}
		if (lanes[l].depth < LANE_DEPTH)
			lanes[l].ends[lanes[l].depth++] = k->end;
		gpuenv_buf_t x;
		gpuenv_buf_init(&x, &quiet, SHIM_LINE_MAX * 4);
		/* args that cannot be had (memory): the span without them */
		call_extra(&x, one);
		gpuenv_trace_complete_args(ctx, "tool", one->tool, package, one->cwd, k->start,
			k->end - k->start, lanes[l].tid, gpuenv_buf_failed(&x) ? NULL : x.data);
		gpuenv_buf_free(&x);
	}
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
