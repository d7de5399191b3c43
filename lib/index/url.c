/* URLs as the index client needs them: relative links resolved (RFC 3986
 * 5.2), userinfo removed from everything shown or returned, file:// paths. */
#include <errno.h>
#include <string.h>

#include "gpuenv/pep440.h"

#include "index_int.h"

/* The parts of an absolute URL: scheme ("https"), authority (after "//",
 * userinfo included), the rest (path, query). */
typedef struct url_parts {
	gpuenv_str_t scheme, auth, path, query;
	bool has_auth;
} url_parts_t;

static bool is_scheme_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return !first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

/* Length of the scheme of s (without ':'), 0 when s has none. */
static size_t scheme_len(gpuenv_str_t s)
{
	size_t i = 0;

	while (i < s.len && is_scheme_char(s.ptr[i], i == 0))
		i++;
	return i > 0 && i < s.len && s.ptr[i] == ':' ? i : 0;
}

static void split_url(gpuenv_str_t s, url_parts_t *u)
{
	size_t i = scheme_len(s), k;

	memset(u, 0, sizeof(*u));
	u->scheme = gpuenv_str_n(s.ptr, i);
	if (i)
		i++; /* ':' */
	if (i + 1 < s.len && s.ptr[i] == '/' && s.ptr[i + 1] == '/') {
		i += 2;
		for (k = i; k < s.len && s.ptr[k] != '/' && s.ptr[k] != '?' && s.ptr[k] != '#'; k++)
			;
		u->auth = gpuenv_str_n(s.ptr + i, k - i);
		u->has_auth = true;
		i = k;
	}
	for (k = i; k < s.len && s.ptr[k] != '?' && s.ptr[k] != '#'; k++)
		;
	u->path = gpuenv_str_n(s.ptr + i, k - i);
	i = k;
	if (i < s.len && s.ptr[i] == '?') {
		for (k = i; k < s.len && s.ptr[k] != '#'; k++)
			;
		u->query = gpuenv_str_n(s.ptr + i, k - i);
	}
}

/* Remove "." and ".." segments (RFC 3986 5.2.4) from path into out (which
 * has room for path.len + 1 bytes); returns the length. */
static size_t remove_dots(gpuenv_str_t in, char *out)
{
	size_t n = 0, i = 0;

	while (i < in.len) {
		const char *p = in.ptr + i;
		size_t left = in.len - i;
		if (left >= 3 && !memcmp(p, "../", 3)) {
			i += 3;
		} else if (left >= 2 && !memcmp(p, "./", 2)) {
			i += 2;
		} else if ((left >= 3 && !memcmp(p, "/./", 3)) || (left == 2 && !memcmp(p, "/.", 2))) {
			i += 2;
			if (left == 2) {
				out[n++] = '/';
			}
		} else if ((left >= 4 && !memcmp(p, "/../", 4)) || (left == 3 && !memcmp(p, "/..", 3))) {
			i += 3;
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			if (left == 3)
				out[n++] = '/';
		} else if ((left == 1 && p[0] == '.') || (left == 2 && !memcmp(p, "..", 2))) {
			i += left;
		} else {
			size_t k = (p[0] == '/') ? 1 : 0;
			while (k < left && p[k] != '/')
				k++;
			memcpy(out + n, p, k);
			n += k;
			i += k;
		}
	}
	out[n] = '\0';
	return n;
}

/* The authority without "userinfo@". */
static gpuenv_str_t auth_host(gpuenv_str_t auth)
{
	for (size_t i = auth.len; i > 0; i--)
		if (auth.ptr[i - 1] == '@')
			return gpuenv_str_n(auth.ptr + i, auth.len - i);
	return auth;
}

gpuenv_str_t ix_url_resolve(gpuenv_arena_t *arena, gpuenv_str_t base, gpuenv_str_t ref,
	gpuenv_str_t *frag)
{
	url_parts_t b, r;
	const char *hash = ref.len ? memchr(ref.ptr, '#', ref.len) : NULL;
	gpuenv_str_t scheme, auth, query;
	char *path, *out;
	size_t plen, olen;
	bool has_auth;

	if (frag)
		*frag = hash ? gpuenv_str_n(hash + 1, ref.len - (size_t)(hash + 1 - ref.ptr))
			     : gpuenv_str_n("", 0);
	if (hash)
		ref.len = (size_t)(hash - ref.ptr);
	split_url(base, &b);
	split_url(ref, &r);
	/* room for the merged path: base path + ref path + "/" */
	path = gpuenv_arena_alloc(arena, b.path.len + r.path.len + 2);
	if (!path)
		return GPUENV_STR_NULL;
	if (r.scheme.len) {
		scheme = r.scheme;
		auth = r.auth;
		has_auth = r.has_auth;
		plen = remove_dots(r.path, path);
		query = r.query;
	} else if (r.has_auth) {
		scheme = b.scheme;
		auth = r.auth;
		has_auth = true;
		plen = remove_dots(r.path, path);
		query = r.query;
	} else {
		scheme = b.scheme;
		auth = b.auth;
		has_auth = b.has_auth;
		if (!r.path.len) {
			memcpy(path, b.path.ptr, b.path.len);
			plen = b.path.len;
			path[plen] = '\0';
			query = r.query.len ? r.query : b.query;
		} else {
			char *tmp = gpuenv_arena_alloc(arena, b.path.len + r.path.len + 2);
			size_t tl = 0;
			if (!tmp)
				return GPUENV_STR_NULL;
			if (r.path.ptr[0] == '/') {
				memcpy(tmp, r.path.ptr, r.path.len);
				tl = r.path.len;
			} else {
				size_t dir = b.path.len;
				while (dir > 0 && b.path.ptr[dir - 1] != '/')
					dir--;
				if (!dir && b.has_auth)
					tmp[tl++] = '/';
				memcpy(tmp + tl, b.path.ptr, dir);
				tl += dir;
				memcpy(tmp + tl, r.path.ptr, r.path.len);
				tl += r.path.len;
			}
			plen = remove_dots(gpuenv_str_n(tmp, tl), path);
			query = r.query;
		}
	}
	auth = auth_host(auth);
	olen = scheme.len + 3 + auth.len + plen + query.len + 1;
	out = gpuenv_arena_alloc(arena, olen);
	if (!out)
		return GPUENV_STR_NULL;
	size_t n = 0;
	if (scheme.len) {
		memcpy(out, scheme.ptr, scheme.len);
		n = scheme.len;
		out[n++] = ':';
	}
	if (has_auth) {
		out[n++] = '/';
		out[n++] = '/';
		memcpy(out + n, auth.ptr, auth.len);
		n += auth.len;
	}
	memcpy(out + n, path, plen);
	n += plen;
	if (query.len) {
		memcpy(out + n, query.ptr, query.len);
		n += query.len;
	}
	out[n] = '\0';
	return gpuenv_str_n(out, n);
}

gpuenv_str_t ix_pct_decode(gpuenv_arena_t *arena, gpuenv_str_t s)
{
	char *out = gpuenv_arena_alloc(arena, s.len + 1);
	size_t n = 0;

	if (!out)
		return GPUENV_STR_NULL;
	for (size_t i = 0; i < s.len; i++) {
		int h, l;
		if (s.ptr[i] == '%' && i + 2 < s.len && (h = gpuenv_hex_digit(s.ptr[i + 1])) >= 0 &&
			(l = gpuenv_hex_digit(s.ptr[i + 2])) >= 0) {
			out[n++] = (char)(h << 4 | l);
			i += 2;
		} else {
			out[n++] = s.ptr[i];
		}
	}
	out[n] = '\0';
	return gpuenv_str_n(out, n);
}

gpuenv_str_t ix_url_strip(gpuenv_arena_t *arena, gpuenv_str_t url, gpuenv_str_t *user,
	gpuenv_str_t *pass)
{
	url_parts_t u;
	gpuenv_str_t host;

	split_url(url, &u);
	host = auth_host(u.auth);
	if (user)
		*user = gpuenv_str_n("", 0);
	if (pass)
		*pass = gpuenv_str_n("", 0);
	if (!u.has_auth || host.len == u.auth.len)
		return gpuenv_arena_str(arena, url);
	gpuenv_str_t info = gpuenv_str_n(u.auth.ptr, u.auth.len - host.len - 1), uname;
	gpuenv_str_t pw = gpuenv_str_split(info, ':', &uname);
	if (user)
		*user = ix_pct_decode(arena, uname);
	if (pass && pw.ptr)
		*pass = ix_pct_decode(arena, pw);
	size_t pre = (size_t)(u.auth.ptr - url.ptr), post = (size_t)(host.ptr - url.ptr);
	char *out = gpuenv_arena_alloc(arena, url.len - (post - pre) + 1);
	if (!out)
		return GPUENV_STR_NULL;
	memcpy(out, url.ptr, pre);
	memcpy(out + pre, host.ptr, url.len - post);
	out[pre + url.len - post] = '\0';
	return gpuenv_str_n(out, pre + url.len - post);
}

bool ix_url_host(const char *url, char *out, size_t outsz)
{
	url_parts_t u;
	gpuenv_str_t h;

	split_url(gpuenv_str(url), &u);
	if (!u.has_auth)
		return false;
	h = auth_host(u.auth);
	if (h.len + 1 > outsz)
		return false;
	for (size_t i = 0; i < h.len; i++)
		out[i] = (char)(h.ptr[i] >= 'A' && h.ptr[i] <= 'Z' ? h.ptr[i] + 32 : h.ptr[i]);
	out[h.len] = '\0';
	return true;
}

gpuenv_str_t ix_url_basename(gpuenv_arena_t *arena, gpuenv_str_t url)
{
	url_parts_t u;
	size_t i;

	split_url(url, &u);
	i = u.path.len;
	while (i > 0 && u.path.ptr[i - 1] != '/')
		i--;
	return ix_pct_decode(arena, gpuenv_str_n(u.path.ptr + i, u.path.len - i));
}

gpuenv_str_t ix_file_url_path(gpuenv_arena_t *arena, const char *url)
{
	url_parts_t u;

	split_url(gpuenv_str(url), &u);
	if (!gpuenv_str_ieq(u.scheme, GPUENV_STR_LIT("file")))
		return GPUENV_STR_NULL;
	/* file:///path and file://localhost/path */
	if (u.has_auth && u.auth.len && !gpuenv_str_ieq(u.auth, GPUENV_STR_LIT("localhost")))
		return GPUENV_STR_NULL;
	return ix_pct_decode(arena, u.path);
}

gpuenv_str_t ix_path_to_file_url(gpuenv_arena_t *arena, const char *path)
{
	size_t n = strlen(path), o = 0;
	char *out = gpuenv_arena_alloc(arena, 7 + 3 * n + 1);
	static const char hex[] = "0123456789ABCDEF";

	if (!out)
		return GPUENV_STR_NULL;
	memcpy(out, "file://", 7);
	o = 7;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			strchr("/-._~!$&'()*+,;=:@", c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return gpuenv_str_n(out, o);
}

const char *ix_sha256_hex(gpuenv_arena_t *arena, gpuenv_str_t s)
{
	char *out;

	if (s.len != 64)
		return NULL;
	for (size_t i = 0; i < 64; i++)
		if (gpuenv_hex_digit(s.ptr[i]) < 0)
			return NULL;
	out = gpuenv_arena_alloc(arena, 65);
	if (!out)
		return NULL;
	for (size_t i = 0; i < 64; i++)
		out[i] = (char)(s.ptr[i] >= 'A' && s.ptr[i] <= 'F' ? s.ptr[i] + 32 : s.ptr[i]);
	out[64] = '\0';
	return out;
}

const char *gpuenv_url_public(gpuenv_arena_t *arena, const char *url)
{
	return url ? ix_url_strip(arena, gpuenv_str(url), NULL, NULL).ptr : NULL;
}

const char *gpuenv_file_url_path(gpuenv_arena_t *arena, const char *url)
{
	return url ? ix_file_url_path(arena, url).ptr : NULL;
}

const char *gpuenv_url_basename(gpuenv_arena_t *arena, const char *url)
{
	gpuenv_str_t b = url ? ix_url_basename(arena, gpuenv_str(url)) : GPUENV_STR_NULL;
	return b.ptr && b.len ? b.ptr : NULL;
}

const char *gpuenv_path_file_url(gpuenv_arena_t *arena, const char *path)
{
	return path ? ix_path_to_file_url(arena, path).ptr : NULL;
}
