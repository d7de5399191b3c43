/* gpuenv_kb_load in one process, N times: median / min CPU microseconds of the
 * thread (a loaded machine disturbs it least; bench/kb.sh
 * builds it against each tree's release libgpuenv.a). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpuenv/kb.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 201;
	double *t;
	gpuenv_ctx_t ctx;

	if (n < 1 || n > 100000 || !(t = calloc((size_t)n, sizeof(*t))))
		return 2;
	gpuenv_ctx_init(&ctx);
	for (int i = 0; i < n; i++) {
		struct timespec a, b;
		gpuenv_kb_t *kb;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		if (gpuenv_kb_load(&ctx, NULL, &kb)) {
			fprintf(stderr, "kb_load: %s\n", ctx.err.msg);
			return 1;
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		gpuenv_kb_free(kb);
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%.1f %.1f\n", t[n / 2], t[0]);
	free(t);
	return 0;
}
