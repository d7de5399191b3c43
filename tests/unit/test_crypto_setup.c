/* Issue 22, item 3: libcrypto set up at start-up (gpuenv_hash_setup) and
 * checked.  OpenSSL's lazy set-up at the first digest dereferenced a NULL
 * lock when one of its allocations failed (SIGSEGV in `tree`, `lock
 * --check`).  Each case is a child process whose libcrypto allocation N
 * fails (CRYPTO_set_mem_functions, before libcrypto allocates anything):
 * set-up then a digest, as the CLI does; never a crash, an error is "out
 * of memory", a digest given is right. */
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuenv/core.h"
#include "gpuenv/hash.h"

static long calls, fail_at;

static void *cm(size_t n, const char *f, int l)
{
	(void)f;
	(void)l;
	return calls++ == fail_at ? NULL : malloc(n);
}

static void *cr(void *p, size_t n, const char *f, int l)
{
	(void)f;
	(void)l;
	return calls++ == fail_at ? NULL : realloc(p, n);
}

static void cf(void *p, const char *f, int l)
{
	(void)f;
	(void)l;
	free(p);
}

static int child(long n)
{
	unsigned char d[GPUENV_SHA256_LEN];
	char hex[65];
	gpuenv_ctx_t ctx;

	fail_at = n;
	if (!CRYPTO_set_mem_functions(cm, cr, cf))
		return 10;
	gpuenv_ctx_init(&ctx);
	if (gpuenv_hash_setup(&ctx) != 0)
		return ctx.err.code == -ENOMEM && strstr(ctx.err.msg, "out of memory") ? 0 : 11;
	if (gpuenv_sha256("abc", 3, d) != 0)
		return 0; /* an error, reported: fine */
	gpuenv_hex(d, sizeof(d), hex);
	return strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") ? 12 : 0;
}

int main(void)
{
	int bad = 0;

	/* the first allocations one by one, then a spread up to past the
	 * ~5,000 libcrypto makes for its first digest */
	for (long n = 0; n < 5200; n += n < 64 ? 1 : 97) {
		pid_t p = fork();
		if (p < 0)
			return 2;
		if (p == 0)
			_exit(child(n));
		int st;
		if (waitpid(p, &st, 0) != p)
			return 2;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "libcrypto allocation %ld failing: %s %d\n", n,
				WIFSIGNALED(st) ? "killed by signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st)
												: WEXITSTATUS(st));
			bad++;
		}
	}
	printf("%s\n", bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}
