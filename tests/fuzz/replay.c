/* Replays fuzz corpora without libFuzzer: every file under the folders (or
 * files) named on the command line goes through LLVMFuzzerTestOneInput once.
 * Run by the normal test suite, under the sanitizers of the test build. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	uint8_t *buf;

	if (!f) {
		perror(path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		fprintf(stderr, "%s: read failed\n", path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int bad = 0;

	if (stat(path, &st) != 0) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	d = opendir(path);
	if (!d) {
		perror(path);
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		char sub[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		bad |= run_path(sub, count);
	}
	closedir(d);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0, count = 0;

	for (int i = 1; i < argc; i++)
		bad |= run_path(argv[i], &count);
	printf("replayed %d inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "no corpus inputs found\n");
		return 1;
	}
	return bad;
}
