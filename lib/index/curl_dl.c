/* libcurl loaded on first use (curl_dl.h says why). */
#include "curl_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

struct ix_curl_api ix_curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_rc;
static char load_err[256];

/* the real libcurl names, not the macros of curl_dl.h */
#define IX_CURL_NAME_(name, ret, params) #name,
static const char *const names[] = { IX_CURL_CALLS(IX_CURL_NAME_) };
#undef IX_CURL_NAME_

static void load(void)
{
	static const char *const sonames[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };
	void *so = NULL;
	void **slot = (void **)&ix_curl;
	const char *e = NULL;

	for (size_t i = 0; !so && i < sizeof(sonames) / sizeof(sonames[0]); i++)
		if (!(so = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL)))
			e = dlerror();
	if (!so) {
		load_rc = GPUENV_ENOTFOUND;
		snprintf(load_err, sizeof(load_err), "libcurl.so.4 cannot be loaded: %s", e ? e : "?");
		return;
	}
	_Static_assert(sizeof(ix_curl) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
		"one function pointer per name");
	if (!gpuenv_dl_syms(so, names, sizeof(names) / sizeof(names[0]), slot, &e)) {
		load_rc = GPUENV_EUNSUPPORTED;
		/* the handle stays open: a process loads it once */
		snprintf(load_err, sizeof(load_err), "the libcurl loaded has no %s", e);
	}
}

int ix_curl_load(gpuenv_ctx_t *ctx)
{
	if (pthread_once(&load_once, load) != 0)
		return gpuenv_fail(ctx, GPUENV_EUNSUPPORTED, NULL, 0, 0, "libcurl cannot be loaded");
	if (!load_rc)
		return 0;
	gpuenv_fail(ctx, load_rc, NULL, 0, 0, "%s", load_err);
	return gpuenv_hint(ctx, "gpuenv reaches package indexes and registries through libcurl: install "
		"Debian's libcurl4 (apt-get install libcurl4)");
}
