/* runstat: run a command N times, report median / min / max wall time and the
 * peak RSS of the child (from wait4's rusage), as one line of text or JSON.
 *
 *   runstat [-n RUNS] [-w WARMUP] [-o] [-l LABEL] -- COMMAND [ARGS...]
 *
 * -o keeps the command's stdout (default: sent to /dev/null).  Used by the
 * benchmarks under bench/ so that every peer is timed the same way, here and
 * on the GPU machine (which has no hyperfine or GNU time). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

static int run_once(char **argv, int keep_out, double *secs, long *rss_kb)
{
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!keep_out) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, 1);
				close(fd);
			}
		}
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	*secs = now() - t0;
	*rss_kb = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	int runs = 5, warm = 1, keep = 0, c;
	const char *label = NULL;

	while ((c = getopt(argc, argv, "+n:w:ol:")) != -1) {
		switch (c) {
		case 'n': runs = atoi(optarg); break;
		case 'w': warm = atoi(optarg); break;
		case 'o': keep = 1; break;
		case 'l': label = optarg; break;
		default:
			fprintf(stderr, "usage: runstat [-n RUNS] [-w WARMUP] [-o] [-l LABEL] -- CMD...\n");
			return 2;
		}
	}
	if (optind >= argc || runs < 1 || runs > 1000) {
		fprintf(stderr, "usage: runstat [-n RUNS] [-w WARMUP] [-o] [-l LABEL] -- CMD...\n");
		return 2;
	}
	char **cmd = argv + optind;
	double *t = calloc((size_t)runs, sizeof(*t));
	long *m = calloc((size_t)runs, sizeof(*m));
	int status = 0;
	for (int i = 0; i < warm; i++) {
		double s;
		long r;
		run_once(cmd, keep, &s, &r);
	}
	for (int i = 0; i < runs; i++) {
		int rc = run_once(cmd, keep, &t[i], &m[i]);
		if (rc)
			status = rc;
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	qsort(m, (size_t)runs, sizeof(*m), cmp_long);
	printf("{\"label\": \"%s\", \"runs\": %d, \"median_s\": %.6f, \"min_s\": %.6f, "
		"\"max_s\": %.6f, \"peak_rss_mb\": %.1f, \"exit\": %d}\n",
		label ? label : cmd[0], runs, t[runs / 2], t[0], t[runs - 1],
		(double)m[runs - 1] / 1024.0, status);
	free(t);
	free(m);
	return 0;
}
