/* The ONNX reader alone, in one process: gpuenv_onnx_inspect over each FILE
 * RUNS times (a fresh arena each time: map, walk, unmap), the median, min
 * and max wall time per file.  bench/onnx.sh builds it against the release
 * library; the whole process is timed by runstat beside it.
 *   onnx_inspect RUNS FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpuenv/onnx.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	gpuenv_ctx_t ctx;
	int runs = argc > 2 ? atoi(argv[1]) : 0;
	double *t;

	if (runs < 1 || runs > 100000) {
		fprintf(stderr, "usage: onnx_inspect RUNS FILE...\n");
		return 2;
	}
	t = calloc((size_t)runs, sizeof(*t));
	if (!t)
		return 4;
	gpuenv_ctx_init(&ctx);
	for (int f = 2; f < argc; f++) {
		gpuenv_onnx_model_t m;
		for (int i = 0; i < runs; i++) {
			gpuenv_arena_t a;
			gpuenv_arena_init(&a, &ctx, 0);
			double t0 = now_ms();
			if (gpuenv_onnx_inspect(&ctx, &a, argv[f], &m)) {
				fprintf(stderr, "%s: %s\n", argv[f], ctx.err.msg);
				return 4;
			}
			t[i] = now_ms() - t0;
			gpuenv_arena_free(&a);
		}
		qsort(t, (size_t)runs, sizeof(*t), cmp);
		printf("{\"file\": \"%s\", \"bytes\": %llu, \"runs\": %d, \"median_ms\": %.3f, \"min_ms\": %.3f, "
		       "\"max_ms\": %.3f}\n", argv[f], (unsigned long long)m.file_size, runs, t[runs / 2], t[0],
			t[runs - 1]);
	}
	free(t);
	return 0;
}
