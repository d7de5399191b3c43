/* libcurl through dlopen (curl_dl.c): loaded when the first index or
 * registry is opened, not at every start of gpuenv.  libcurl brings about
 * thirty libraries with it (TLS, Kerberos, LDAP, SSH, IDN, ...); linking it
 * made the dynamic loader map and relocate all of them before probe and
 * doctor, which never touch the network, could start (issue 26: the probe
 * at the NVML floor).  Only http.c includes this: it is written against
 * libcurl's own names, which the macros below send to the table. */
#ifndef GPUENV_INDEX_CURL_DL_H
#define GPUENV_INDEX_CURL_DL_H

/* curl's typecheck macros wrap the names redefined below */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "gpuenv/core.h"

/* X(name, return type, parameters): every libcurl call gpuenv makes */
#define IX_CURL_CALLS(X)                                                                 \
	X(curl_global_init, CURLcode, (long flags))                                        \
	X(curl_easy_init, CURL *, (void))                                                  \
	X(curl_easy_reset, void, (CURL * e))                                               \
	X(curl_easy_cleanup, void, (CURL * e))                                             \
	X(curl_easy_setopt, CURLcode, (CURL * e, CURLoption o, ...))                       \
	X(curl_easy_getinfo, CURLcode, (CURL * e, CURLINFO i, ...))                        \
	X(curl_easy_strerror, const char *, (CURLcode c))                                  \
	X(curl_multi_init, CURLM *, (void))                                                \
	X(curl_multi_cleanup, CURLMcode, (CURLM * m))                                      \
	X(curl_multi_setopt, CURLMcode, (CURLM * m, CURLMoption o, ...))                   \
	X(curl_multi_add_handle, CURLMcode, (CURLM * m, CURL * e))                         \
	X(curl_multi_remove_handle, CURLMcode, (CURLM * m, CURL * e))                      \
	X(curl_multi_perform, CURLMcode, (CURLM * m, int *running))                        \
	X(curl_multi_poll, CURLMcode,                                                      \
		(CURLM * m, struct curl_waitfd * fds, unsigned int n, int ms, int *numfds)) \
	X(curl_multi_info_read, CURLMsg *, (CURLM * m, int *left))                         \
	X(curl_slist_append, struct curl_slist *, (struct curl_slist * l, const char *s))  \
	X(curl_slist_free_all, void, (struct curl_slist * l))                              \
	X(curl_getdate, time_t, (const char *s, const time_t *unused))

#define IX_CURL_FIELD_(name, ret, params) ret(*name) params;
struct ix_curl_api {
	IX_CURL_CALLS(IX_CURL_FIELD_)
};
#undef IX_CURL_FIELD_
extern struct ix_curl_api ix_curl;

/* Load libcurl (libcurl.so.4, else libcurl-gnutls.so.4: the same ABI) and
 * every call above, once per process; 0, or an error in ctx with the
 * package to install.  Nothing of the table may be called before it. */
int ix_curl_load(gpuenv_ctx_t *ctx);

/* curl.h's own three-argument guards of the variadic calls, replaced */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define curl_global_init (ix_curl.curl_global_init)
#define curl_easy_init (ix_curl.curl_easy_init)
#define curl_easy_reset (ix_curl.curl_easy_reset)
#define curl_easy_cleanup (ix_curl.curl_easy_cleanup)
#define curl_easy_setopt (ix_curl.curl_easy_setopt)
#define curl_easy_getinfo (ix_curl.curl_easy_getinfo)
#define curl_easy_strerror (ix_curl.curl_easy_strerror)
#define curl_multi_init (ix_curl.curl_multi_init)
#define curl_multi_cleanup (ix_curl.curl_multi_cleanup)
#define curl_multi_setopt (ix_curl.curl_multi_setopt)
#define curl_multi_add_handle (ix_curl.curl_multi_add_handle)
#define curl_multi_remove_handle (ix_curl.curl_multi_remove_handle)
#define curl_multi_perform (ix_curl.curl_multi_perform)
#define curl_multi_poll (ix_curl.curl_multi_poll)
#define curl_multi_info_read (ix_curl.curl_multi_info_read)
#define curl_slist_append (ix_curl.curl_slist_append)
/* a list is freed where nothing may have loaded libcurl yet (a request
 * reset before its first transfer): an empty one needs no call */
static inline void ix_curl_slist_free_all(struct curl_slist *l)
{
	if (l)
		ix_curl.curl_slist_free_all(l);
}
#define curl_slist_free_all ix_curl_slist_free_all
#define curl_getdate (ix_curl.curl_getdate)

#endif
