"""gpuenv debug index against tests/fixtures/index_server.py on 127.0.0.1:
HTML and JSON pages, PEP 658 metadata vs range requests vs the whole file,
the HTTP cache (warm runs, revalidation, --offline), every fault the server
injects, credentials that never show, several sources (the first that has a
project wins; --merge-sources merges), find-links folders and file:// indexes,
connection reuse."""
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-index-test-")
SECRET = "s3cr3t-pa55"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# ---- a fixture index ----------------------------------------------------------

def make_wheel(name, version, requires=(), payload=0, nfiles=0, metadata_first=False):
    """A wheel (bytes) and its METADATA (bytes).  payload: an incompressible
    file of that many bytes after METADATA (so METADATA is not in the last
    64 KiB); nfiles: that many small files (a central directory past 64 KiB)."""
    dn = name.replace("-", "_")
    di = "%s-%s.dist-info" % (dn, version)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
    meta += "".join("Requires-Dist: %s\n" % r for r in requires)
    meta += "\nA description.\n"
    meta = meta.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        entries = []
        if metadata_first:
            entries.append((di + "/METADATA", meta))
        entries.append(("%s/__init__.py" % dn, b"# stub\n"))
        for i in range(nfiles):
            entries.append(("%s/module_with_a_long_name_%05d.py" % (dn, i), b"x = %d\n" % i))
        if payload:
            entries.append(("%s/blob.bin" % dn, os.urandom(payload)))
        if not metadata_first:
            entries.append((di + "/METADATA", meta))
        entries.append((di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
        for p, b in entries:
            zi = zipfile.ZipInfo(p, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_STORED if p.endswith(".bin") else zipfile.ZIP_DEFLATED
            z.writestr(zi, b)
        z.writestr(di + "/RECORD", "")
    return buf.getvalue(), meta


def make_zip64_wheel(name, version, requires=()):
    """A wheel written by hand in the zip64 form (as writers of files over
    4 GiB do): the central directory's sizes and offset at 0xFFFFFFFF with a
    zip64 extra field, a zip64 end record and its locator."""
    import struct
    import zlib
    dn = name.replace("-", "_")
    meta = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version) +
            "".join("Requires-Dist: %s\n" % r for r in requires)).encode()
    entries = [("%s/__init__.py" % dn, b"# stub\n"), ("%s-%s.dist-info/METADATA" % (dn, version), meta)]
    out, cd = bytearray(), bytearray()
    for path, data in entries:
        comp = zlib.compressobj(9, zlib.DEFLATED, -15)
        c = comp.compress(data) + comp.flush()
        crc = zlib.crc32(data)
        off = len(out)
        p = path.encode()
        out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 8, 0, 0, crc, len(c), len(data), len(p), 0) + p + c
        x = struct.pack("<HHQQQ", 1, 24, len(data), len(c), off)
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                          len(p), len(x), 0, 0, 0, 0, 0xFFFFFFFF) + p + x
    cd_off = len(out)
    out += cd
    e64 = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, len(entries), len(entries), len(cd), cd_off)
    out += struct.pack("<IIQI", 0x07064b50, 0, e64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return bytes(out), meta


def make_index(root, projects, metadata=True, yank=()):
    """projects: {name: [(version, wheel kwargs)]} -> ROOT/simple, ROOT/files."""
    os.makedirs(os.path.join(root, "files"), exist_ok=True)
    os.makedirs(os.path.join(root, "simple"), exist_ok=True)
    info = {}
    for name, versions in projects.items():
        links = []
        for version, kw in versions:
            whl, meta = make_zip64_wheel(name, version, kw.get("requires", ())) if kw.get("zip64") \
                else make_wheel(name, version, **kw)
            fn = "%s-%s-py3-none-any.whl" % (name.replace("-", "_"), version)
            with open(os.path.join(root, "files", fn), "wb") as f:
                f.write(whl)
            attrs = ' data-requires-python="&gt;=3.8"'
            if metadata:
                with open(os.path.join(root, "files", fn + ".metadata"), "wb") as f:
                    f.write(meta)
                attrs += ' data-core-metadata="sha256=%s"' % hashlib.sha256(meta).hexdigest()
            if (name, version) in yank:
                attrs += ' data-yanked="broken build"'
            links.append('<a href="../../files/%s#sha256=%s"%s>%s</a>' % (
                fn, hashlib.sha256(whl).hexdigest(), attrs, fn))
            info[fn] = (whl, meta)
        d = os.path.join(root, "simple", name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "index.html"), "w") as f:
            f.write("<!DOCTYPE html>\n<html><body>\n%s\n</body></html>\n" % "\n".join(links))
    return info


MAIN = os.path.join(TMP, "main")
info = make_index(MAIN, {
    "alpha": [("1.0", {}), ("2.0", {"requires": ["beta>=1", "gamma; extra == 'x'"]})],
    "beta": [("1.5", {"requires": ["alpha"]})],
    "big-cd": [("1.0", {"nfiles": 1500, "requires": ["alpha"]})],
    "big-payload": [("3.0", {"payload": 200000, "metadata_first": True, "requires": ["beta"]})],
    "zip-sixty-four": [("6.4", {"zip64": True, "requires": ["alpha>=2"]})],
}, yank={("alpha", "1.0")})
for i in range(30):
    make_index(MAIN, {"many-%02d" % i: [("1.%d" % i, {})]})
OTHER = os.path.join(TMP, "other")
make_index(OTHER, {"alpha": [("9.0", {})], "only-other": [("0.1", {})]})

servers = []


def serve(root, *opts):
    proc, port = index_server.start(root, *opts)
    servers.append(proc)
    return proc, "http://127.0.0.1:%d" % port


def stop(proc):
    proc.terminate()
    proc.wait(timeout=10)


def stats(url, reset=True):
    with urllib.request.urlopen(url + "/_stats") as r:
        d = json.load(r)
    if reset:
        urllib.request.urlopen(url + "/_reset").read()
    return d["log"]


def run(*args, env=None, timeout=120):
    e = dict(os.environ)
    e.pop("NETRC", None)
    e["HOME"] = os.path.join(TMP, "home")
    e.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, env=e)


def ix(*args, cache=None, env=None, timeout=120):
    """gpuenv --json debug index ...: (exit status, parsed JSON or None, stderr)."""
    cache = cache or tempfile.mkdtemp(dir=TMP)
    r = run("--json", "debug", "index", "--cache-dir", cache, "--retry-base-ms", "10", *args,
            env=env, timeout=timeout)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        j = None
    return r.returncode, j, r.stderr, r


def files_of(j, i=0):
    p = j["projects"][i]
    return p["files"]


def set_faults(path, faults):
    with open(path, "w") as f:
        json.dump(faults, f)


try:
    FAULTS = os.path.join(TMP, "faults.json")
    set_faults(FAULTS, {})
    proc, URL = serve(MAIN, "--faults", FAULTS)
    SIMPLE = URL + "/simple/"

    # ---- HTML and JSON -------------------------------------------------------
    rc, j, err, _ = ix("--index-url", SIMPLE, "alpha")
    check(rc == 0 and j, "alpha from the JSON page: %d %s" % (rc, err))
    log = stats(URL)
    check([e["json"] for e in log if e["path"] == "/simple/alpha/"] == [True], "the JSON page was asked for and served")
    check(len(files_of(j)) == 2 and files_of(j)[0]["yanked"] and files_of(j)[0]["yanked_reason"] == "broken build",
          "two files, the first yanked with its reason: %s" % files_of(j))
    f2 = files_of(j)[1]
    fn2 = "alpha-2.0-py3-none-any.whl"
    check(f2["filename"] == fn2 and f2["sha256"] == hashlib.sha256(info[fn2][0]).hexdigest(), "sha256 of alpha 2.0")
    check(f2["url"] == URL + "/files/" + fn2, "absolute file URL: %s" % f2["url"])
    check(f2["requires_python"] == ">=3.8" and f2["has_metadata"] and
          f2["metadata_sha256"] == hashlib.sha256(info[fn2][1]).hexdigest(), "requires-python and core-metadata")
    check(f2["size"] == len(info[fn2][0]), "size from the JSON page")
    jfiles = files_of(j)
    hproc, HURL = serve(MAIN, "--formats", "html", "--faults", FAULTS)
    rc, j, err, _ = ix("--index-url", HURL + "/simple/", "alpha")
    log = stats(HURL)
    check(rc == 0 and [e["json"] for e in log if e["path"] == "/simple/alpha/"] == [False], "an HTML-only server")
    hfiles = files_of(j) if j else []
    strip = lambda fs: [{k: v for k, v in f.items() if k not in ("size", "url")} for f in fs]
    check(strip(hfiles) == strip(jfiles), "HTML and JSON pages give the same files")

    # ---- metadata: PEP 658, ranges, the whole file -----------------------------
    rc, j, err, _ = ix("--index-url", SIMPLE, "--metadata", "alpha", "beta")
    log = stats(URL)
    md = j["projects"][0]["metadata"] if j else {}
    check(rc == 0 and md.get("version") == "2.0" and md.get("requires_dist") == ["beta>=1", "gamma; extra == 'x'"],
          "alpha 2.0 METADATA (the newest, not yanked): %s %s" % (md, err))
    check(sorted(e["path"] for e in log if e["path"].startswith("/files/")) ==
          ["/files/alpha-2.0-py3-none-any.whl.metadata", "/files/beta-1.5-py3-none-any.whl.metadata"],
          "PEP 658 files only: %s" % [e["path"] for e in log])

    nproc, NURL = serve(MAIN, "--no-metadata", "--faults", FAULTS)
    rc, j, err, _ = ix("--index-url", NURL + "/simple/", "--metadata", "alpha", "big-cd", "big-payload",
                       "zip-sixty-four")
    log = stats(NURL)
    mds = [p.get("metadata") or {} for p in (j or {"projects": []})["projects"]]
    check(rc == 0 and [m.get("version") for m in mds] == ["2.0", "1.0", "3.0", "6.4"],
          "METADATA through ranges: %s %s" % (mds, err))
    check(len(mds) == 4 and mds[3].get("requires_dist") == ["alpha>=2"], "a zip64 wheel through ranges")
    with zipfile.ZipFile(io.BytesIO(info["zip_sixty_four-6.4-py3-none-any.whl"][0])) as z:
        check(z.read("zip_sixty_four-6.4.dist-info/METADATA") == info["zip_sixty_four-6.4-py3-none-any.whl"][1],
              "the hand-made zip64 wheel is a zip Python reads")
    check(mds and mds[1].get("requires_dist") == ["alpha"] and mds[2].get("requires_dist") == ["beta"],
          "Requires-Dist through ranges")
    wl = [e for e in log if e["path"].startswith("/files/")]
    check(all(e["status"] == 206 and e["range"] for e in wl), "only range requests: %s" % wl)
    per = {}
    for e in wl:
        per.setdefault(e["path"], []).append(e["range"])
    check(per.get("/files/alpha-2.0-py3-none-any.whl") == ["bytes=-65536"], "a small wheel: one range")
    check(len(per.get("/files/big_cd-1.0-py3-none-any.whl", [])) >= 2,
          "a central directory past the tail: another range: %s" % per)
    check(len(per.get("/files/big_payload-3.0-py3-none-any.whl", [])) == 2,
          "METADATA before a big payload: a second range: %s" % per)

    set_faults(FAULTS, {"/files/*.whl": {"ignore_range": True}})
    rc, j, err, _ = ix("--index-url", NURL + "/simple/", "--metadata", "big-payload")
    log = stats(NURL)
    check(rc == 0 and j["projects"][0]["metadata"]["version"] == "3.0", "a server that ignores Range: %s" % err)
    check([e["status"] for e in log if e["path"].startswith("/files/")] == [200],
          "... answered by one 200 with the whole file: %s" % log)
    set_faults(FAULTS, {})

    # ---- the cache -----------------------------------------------------------
    cache = os.path.join(TMP, "cache-warm")
    rc, j1, err, _ = ix("--index-url", SIMPLE, "--metadata", "alpha", "beta", "nope", cache=cache)
    cold = stats(URL)
    check(rc == 1 and j1 and j1["projects"][2]["files"] is None, "nope is in no source (exit 1): %d %s" % (rc, err))
    check(j1 and j1["stats"]["requests"] == len(cold) == 5, "cold: 3 pages + 2 metadata files: %s" % (j1 or {}).get("stats"))
    rc, j2, err, _ = ix("--index-url", SIMPLE, "--metadata", "alpha", "beta", "nope", cache=cache)
    check(rc == 1 and stats(URL) == [] and j2["stats"]["requests"] == 0 and j2["stats"]["cache_hits"] == 5,
          "warm (max-age 600): no request at all: %s" % (j2 or {}).get("stats"))
    check(j2 and j2["projects"] == j1["projects"], "warm answers equal cold ones")
    rproc, RURL = serve(MAIN, "--max-age", "0")
    cache = os.path.join(TMP, "cache-reval")
    rc, j1, err, _ = ix("--index-url", RURL + "/simple/", "--metadata", "alpha", "beta", cache=cache)
    stats(RURL)
    rc, j2, err, _ = ix("--index-url", RURL + "/simple/", "--metadata", "alpha", "beta", cache=cache)
    log = stats(RURL)
    check(rc == 0 and len(log) == 2 and all(e["conditional"] and e["status"] == 304 for e in log),
          "max-age 0: only conditional page requests, answered 304; metadata never again: %s" % log)
    check(j2 and j2["stats"]["revalidated"] == 2 and j2["stats"]["not_modified"] == 2, "revalidation counters")
    # a damaged entry is fetched again
    for d, _, fs in os.walk(cache):
        for f in fs:
            p = os.path.join(d, f)
            with open(p, "r+b") as fh:
                data = fh.read()
                fh.seek(len(data) - 3)
                fh.write(b"XYZ")
    rc, j3, err, _ = ix("--index-url", RURL + "/simple/", "--metadata", "alpha", "beta", cache=cache)
    log = stats(RURL)
    check(rc == 0 and j3["projects"] == j1["projects"] and len(log) == 4 and not any(e["conditional"] for e in log),
          "damaged cache entries are refetched whole: %s" % log)
    # two processes filling one cache at once: both right, the cache whole
    shared = os.path.join(TMP, "cache-shared")
    names = ["alpha", "beta", "big-cd", "big-payload"] + ["many-%02d" % i for i in range(30)]
    cmd = [BIN, "--json", "debug", "index", "--cache-dir", shared, "--index-url", RURL + "/simple/", "--metadata", *names]
    env = dict(os.environ, HOME=os.path.join(TMP, "home"))
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    check(all(p.returncode == 0 for p in procs), "three processes on one cache: %s" % [o[1] for o in outs])
    vers = [[(p["metadata"] or {}).get("version") for p in json.loads(o[0])["projects"]] for o in outs if o[0]]
    check(len(vers) == 3 and vers[0] == vers[1] == vers[2] and None not in vers[0], "... with the same answers")
    rc, j, err, _ = ix("--offline", "--index-url", RURL + "/simple/", "--metadata", *names, cache=shared)
    check(rc == 0 and j["stats"]["cache_hits"] == 2 * len(names), "... and a cache that answers everything offline: %r" % err)
    check(not [f for d, _, fs in os.walk(shared) for f in fs if ".tmp." in f], "no temporary file left in the cache")
    stats(RURL)
    # offline
    stop(rproc)
    rc, j4, err, _ = ix("--offline", "--index-url", RURL + "/simple/", "--metadata", "alpha", "beta", cache=cache)
    check(rc == 0 and j4["projects"] == j1["projects"] and j4["stats"]["requests"] == 0, "--offline from the cache: %s" % err)
    rc, j5, err, _ = ix("--offline", "--index-url", RURL + "/simple/", "alpha")
    check(rc == 4 and "not in the cache" in err and "without --offline" in err and "/simple/alpha/" in err,
          "--offline with an empty cache: %r" % err)

    # ---- faults --------------------------------------------------------------
    def fault(faults, *args, names=("alpha",), url=SIMPLE, base=URL, **kw):
        set_faults(FAULTS, faults)
        stats(base)
        t = time.monotonic()
        out = ix("--index-url", url, *args, *names, **kw)
        el = time.monotonic() - t
        for v in faults.values():
            time.sleep(v.get("delay", 0) * 1.5)  # let the delayed answers finish
        log = stats(base)
        set_faults(FAULTS, {})
        return out + (log, el)

    rc, j, err, _, log, el = fault({"/simple/alpha/": {"status": [503, 500, 502]}})
    check(rc == 0 and len(log) == 4 and [e["status"] for e in log] == [503, 500, 502, 200],
          "503, 500, 502 retried, then served: %s %s" % ([e["status"] for e in log], err))
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"status": [429], "retry_after": 1}})
    check(rc == 0 and len(log) == 2 and el >= 0.9, "429 with Retry-After: 1 waited %.2f s" % el)
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"status": [429], "retry_after": 3600}},
                                   "--timeout-ms", "20000", timeout=60)
    check(rc == 0 and el < 15, "a Retry-After of an hour is capped (10 s): %.1f s" % el)
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"status": [503], "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT"}})
    check(rc == 0 and len(log) == 2 and el < 5, "a Retry-After date in the past: retried at once (%.2f s)" % el)
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"status": [503] * 10}}, "--retries", "2")
    check(rc == 4 and len(log) == 3 and "/simple/alpha/" in err and "HTTP 503" in err and "after 3 attempts" in err,
          "503 for good: a clear error after the retries: %r (%d requests)" % (err, len(log)))
    check(el < 5, "small backoff with --retry-base-ms 10: %.2f s" % el)
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"delay": 1.5}}, "--timeout-ms", "300", "--retries", "1")
    check(rc == 4 and "timed out" in err and "/simple/alpha/" in err and len(log) >= 1,
          "a server that does not answer: %r" % err)
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"truncate": 20, "truncate_times": 1}})
    check(rc == 0 and len(log) == 2 and j and len(files_of(j)) == 2, "a truncated body is retried: %s %r" % (log, err))
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"truncate": 20}}, "--retries", "1")
    check(rc == 4 and "cut short" in err and "/simple/alpha/" in err, "truncated for good: %r" % err)
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"malformed": True}})
    check(rc == 4 and "malformed index page" in err and URL + "/simple/alpha/" in err, "a malformed JSON page: %r" % err)
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"malformed": True}}, url=HURL + "/simple/", base=HURL)
    check(rc == 4 and "malformed index page" in err and "/simple/alpha/" in err, "a malformed HTML page: %r" % err)
    os.makedirs(os.path.join(MAIN, "m", "alpha"))
    with open(os.path.join(MAIN, "m", "alpha", "index.html"), "w") as f:
        f.write('<a href="%s#sha256=%s">x</a>' % (fn2, hashlib.sha256(info[fn2][0]).hexdigest()))
    shutil.copy(os.path.join(MAIN, "files", fn2), os.path.join(MAIN, "m", "alpha", fn2))
    cache = tempfile.mkdtemp(dir=TMP)
    for run_no in range(2):
        rc, j, err, _, log, el = fault({"/simple/alpha/": {"redirect": "/m/alpha/"}}, "--metadata", cache=cache)
        check(rc == 0 and files_of(j)[0]["url"] == URL + "/m/alpha/" + fn2 and j["projects"][0]["metadata"]["version"] == "2.0",
              "a redirected page: links resolve against where it was served from (run %d): %s %r" % (run_no, j and files_of(j), err))
    rc, j, err, _, log, el = fault({"/simple/alpha/": {"not_found": True}})
    check(rc == 1 and err == "" and j["projects"][0]["files"] is None, "404: the source does not have it: %r" % err)
    rc, j, err, _, log, el = fault({"*.metadata": {"wrong_hash": True}}, "--metadata")
    want = hashlib.sha256(info[fn2][1]).hexdigest()
    check(rc == 4 and "hash mismatch" in err and fn2 + ".metadata" in err and want in err,
          "a metadata file with the wrong hash: %r" % err)
    rc, j, err, _, log, el = fault({"/files/*.whl": {"wrong_hash": True, "ignore_range": True}}, "--metadata",
                                   url=NURL + "/simple/", base=NURL)
    check(rc == 4 and "hash mismatch" in err and fn2 in err and hashlib.sha256(info[fn2][0]).hexdigest() in err,
          "a whole wheel with the wrong hash: %r" % err)
    rc, j, err, _, log, el = fault({"/files/*.whl": {"malformed": True, "ignore_range": True}}, "--metadata",
                                   url=NURL + "/simple/", base=NURL)
    check(rc == 4 and "not a readable wheel" in err or "hash mismatch" in err, "a wheel that is not a zip: %r" % err)
    rc, j, err, _ = ix("--index-url", SIMPLE, "--max-page-bytes", "100", "alpha")
    check(rc == 4 and "/simple/alpha/" in err and "larger than the limit of 100 bytes" in err, "a page over its cap: %r" % err)
    rc, j, err, _ = ix("--index-url", SIMPLE, "--max-metadata-bytes", "50", "--metadata", "alpha")
    check(rc == 4 and fn2 + ".metadata" in err and "limit of 50 bytes" in err, "a metadata file over its cap: %r" % err)
    rc, j, err, _ = ix("--index-url", NURL + "/simple/", "--max-metadata-bytes", "50", "--metadata", "alpha")
    check(rc == 4 and fn2 in err and "limit of 50 bytes" in err, "METADATA in a wheel over its cap: %r" % err)
    # metadata that is not METADATA: a page without hashes
    GARB = os.path.join(TMP, "garbage")
    make_index(GARB, {"gar": [("1.0", {})]})
    page = os.path.join(GARB, "simple", "gar", "index.html")
    with open(page) as f:
        t = f.read()
    import re
    with open(page, "w") as f:
        f.write(re.sub(r'data-core-metadata="[^"]*"', 'data-core-metadata="true"', t))
    gproc, GURL = serve(GARB, "--faults", FAULTS)
    set_faults(FAULTS, {"*.metadata": {"malformed": True}})
    rc, j, err, _ = ix("--index-url", GURL + "/simple/", "--metadata", "gar")
    set_faults(FAULTS, {})
    check(rc == 1 and "gar-1.0-py3-none-any.whl" in err, "malformed METADATA names the file: %d %r" % (rc, err))

    # ---- credentials -----------------------------------------------------------
    aproc, AURL = serve(MAIN, "--auth", "alice:" + SECRET)
    host = AURL[len("http://"):]
    rc, j, err, r = ix("--index-url", "http://alice:%s@%s/simple/" % (SECRET, host), "--metadata", "alpha")
    check(rc == 0 and j["projects"][0]["metadata"]["version"] == "2.0", "user:pass in the URL: %r" % err)
    check(SECRET not in r.stdout + r.stderr and "alice" not in r.stdout, "the URL's credentials never show")
    log = stats(AURL)
    check(log and all(e["auth"] for e in log), "every request (page, metadata) carried them")
    rc, j, err, r = ix("--index-url", "http://alice:wrong-%s@%s/simple/" % (SECRET, host), "alpha")
    check(rc == 4 and "401" in err and "netrc" in err and SECRET not in err and "alice" not in err,
          "a wrong password: 401, a hint, no credentials shown: %r" % err)
    netrc = os.path.join(TMP, "netrc")
    with open(netrc, "w") as f:
        f.write("machine 127.0.0.1 login alice password %s\n" % SECRET)
    os.chmod(netrc, 0o600)
    rc, j, err, r = ix("--index-url", AURL + "/simple/", "alpha", env={"NETRC": netrc})
    check(rc == 0 and SECRET not in r.stdout + r.stderr, "credentials from $NETRC: %r" % err)
    os.makedirs(os.path.join(TMP, "home"), exist_ok=True)
    shutil.copy(netrc, os.path.join(TMP, "home", ".netrc"))
    os.chmod(os.path.join(TMP, "home", ".netrc"), 0o600)
    rc, j, err, r = ix("--index-url", AURL + "/simple/", "alpha")
    check(rc == 0, "credentials from ~/.netrc: %r" % err)
    os.unlink(os.path.join(TMP, "home", ".netrc"))
    rc, j, err, r = ix("--source", "priv=" + AURL + "/simple/", "alpha",
                       env={"GPUENV_INDEX_PRIV_USERNAME": "alice", "GPUENV_INDEX_PRIV_PASSWORD": SECRET})
    check(rc == 0 and j["projects"][0]["source"] == "priv" and SECRET not in r.stdout + r.stderr,
          "credentials from GPUENV_INDEX_PRIV_USERNAME / _PASSWORD: %r" % err)
    rc, j, err, r = ix("--index-url", AURL + "/simple/", "alpha")
    check(rc == 4 and "401" in err, "no credentials: 401: %r" % err)
    r = run("debug", "index", "--cache-dir", os.path.join(TMP, "c-text"), "--index-url",
            "http://alice:%s@%s/simple/" % (SECRET, host), "alpha", "nope")
    check(r.returncode == 1 and SECRET not in r.stdout + r.stderr and "127.0.0.1" in r.stdout,
          "text output: no credentials either")
    for d, _, fs in os.walk(os.path.join(TMP, "c-text")):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                check(SECRET.encode() not in fh.read(), "no credentials in the cache")

    # ---- several sources -------------------------------------------------------
    oproc, OURL = serve(OTHER)
    stats(URL)
    rc, j, err, _ = ix("--source", "other=" + OURL + "/simple/", "--index-url", SIMPLE, "alpha", "beta", "only-other")
    lm, lo = stats(URL), stats(OURL)
    ps = j["projects"] if j else []
    check(rc == 0 and [p["source"] for p in ps] == ["other", "pypi", "other"], "primary first: %s" % [p.get("source") for p in ps])
    check(ps and [f["filename"] for f in ps[0]["files"]] == ["alpha-9.0-py3-none-any.whl"],
          "alpha only from the first source that has it")
    check(sorted(e["path"] for e in lm) == ["/simple/beta/"], "the default index was not asked for alpha: %s" % lm)
    rc, j, err, _ = ix("--source", "other=" + OURL + "/simple/", "--index-url", SIMPLE, "--merge-sources", "alpha")
    check(rc == 0 and [f["filename"] for f in files_of(j)] ==
          ["alpha-9.0-py3-none-any.whl", "alpha-1.0-py3-none-any.whl", "alpha-2.0-py3-none-any.whl"],
          "--merge-sources: every source's files: %s" % (j and [f["filename"] for f in files_of(j)]))
    rc, j, err, _ = ix("--index-url", SIMPLE, "--index-url", OURL + "/simple/", "alpha", "only-other")
    check(rc == 0 and [p["source"] for p in j["projects"]] == ["pypi", "index-2"] and
          len(files_of(j)) == 2, "two --index-url: asked in order, the first that has a project wins")
    rc, j, err, _ = ix("--supplemental", "other=" + OURL + "/simple/", "--index-url", SIMPLE, "alpha", "only-other")
    check(rc == 0 and [p["source"] for p in j["projects"]] == ["pypi", "other"], "supplemental after the default")
    rc, j, err, _ = ix("--explicit", "other=" + OURL + "/simple/", "--index-url", SIMPLE, "only-other")
    check(rc == 1 and j["projects"][0]["files"] is None, "an explicit source is not asked by default")
    rc, j, err, _ = ix("--explicit", "other=" + OURL + "/simple/", "--index-url", SIMPLE, "--only-source", "other", "alpha")
    check(rc == 0 and j["projects"][0]["source"] == "other", "... only with --only-source")
    rc, j, err, _ = ix("--index-url", SIMPLE, "--only-source", "pipy", "alpha")
    check(rc == 4 and "no source is named pipy" in err and "did you mean pypi" in err, "an unknown source: %r" % err)

    # ---- find-links and file:// --------------------------------------------------
    FL = os.path.join(TMP, "fl")
    os.makedirs(FL)
    for fn in ("alpha-2.0-py3-none-any.whl", "beta-1.5-py3-none-any.whl"):
        with open(os.path.join(FL, fn), "wb") as f:
            f.write(info[fn][0])
    with open(os.path.join(FL, "alpha-0.5.tar.gz"), "wb") as f:
        f.write(b"not really")
    with open(os.path.join(FL, "README.txt"), "w") as f:
        f.write("not a distribution")
    rc, j, err, _ = ix("--find-links", FL, "--metadata", "alpha", "beta")
    ps = j["projects"] if j else []
    check(rc == 0 and [f["filename"] for f in ps[0]["files"]] == ["alpha-0.5.tar.gz", "alpha-2.0-py3-none-any.whl"],
          "a find-links folder: %s %r" % (ps and ps[0], err))
    check(ps and ps[0]["files"][1]["url"].startswith("file:///") and
          ps[0]["files"][1]["sha256"] == hashlib.sha256(info[fn2][0]).hexdigest(), "file:// URLs with hashes")
    check(ps and ps[0]["metadata"]["version"] == "2.0" and ps[1]["metadata"]["requires_dist"] == ["alpha"],
          "METADATA read from the local wheels")
    r = subprocess.run([BIN, "--json", "debug", "index", "--cache-dir", os.path.join(TMP, "c-rel"),
                        "--find-links", "file://fl", "--find-links", "fl", "--merge-sources", "beta"],
                       capture_output=True, text=True, cwd=TMP, timeout=60)
    j = json.loads(r.stdout) if r.returncode == 0 else None
    check(j and [f["url"] for f in files_of(j)] == ["file://" + FL + "/beta-1.5-py3-none-any.whl"],
          "relative find-links folders (fl, file://fl): %r" % r.stderr)
    rc, j, err, _ = ix("--index-url", "file://" + MAIN + "/simple/", "--metadata", "alpha", "big-payload", "nope")
    ps = j["projects"] if j else []
    check(rc == 1 and ps[0]["files"][1]["url"] == "file://" + MAIN + "/files/" + fn2 and
          ps[0]["metadata"]["version"] == "2.0" and ps[1]["metadata"]["version"] == "3.0" and ps[2]["files"] is None,
          "a file:// index: %r" % err)
    ZFL = os.path.join(TMP, "zfl")
    os.makedirs(ZFL)
    for fn in ("zip_sixty_four-6.4-py3-none-any.whl", "big_cd-1.0-py3-none-any.whl"):
        with open(os.path.join(ZFL, fn), "wb") as f:
            f.write(info[fn][0])
    rc, j, err, _ = ix("--find-links", ZFL, "--metadata", "zip-sixty-four", "big-cd")
    check(rc == 0 and [p["metadata"]["version"] for p in j["projects"]] == ["6.4", "1.0"],
          "zip64 and a big central directory read from disk (no .metadata files): %r" % err)
    check(j and j["stats"]["requests"] == 0, "file:// needs no request")
    rc, j, err, _ = ix("--find-links", SIMPLE + "alpha/", "alpha")
    check(rc == 0 and [f["filename"] for f in files_of(j)] == ["alpha-1.0-py3-none-any.whl", "alpha-2.0-py3-none-any.whl"],
          "a find-links page over HTTP: %r" % err)

    # ---- parallel transfers reuse connections -----------------------------------
    names = ["many-%02d" % i for i in range(30)]
    stats(URL)
    rc, j, err, _ = ix("--index-url", SIMPLE, "--max-parallel", "4", "--metadata", *names)
    log = stats(URL)
    conns = {e["conn"] for e in log}
    check(rc == 0 and len(log) == 60, "30 pages and 30 metadata files: %d requests %r" % (len(log), err))
    check(len(conns) <= 4, "at most 4 connections, reused: %d" % len(conns))
    check([p["metadata"]["version"] for p in j["projects"]] == ["1.%d" % i for i in range(30)], "answers in order")

    # ---- usage ---------------------------------------------------------------------
    r = run("debug", "index")
    check(r.returncode == 2 and "no project NAME" in r.stderr, "no NAME: usage error")
    r = run("debug", "index", "--source", "nourl", "x")
    check(r.returncode == 2 and "NAME=URL" in r.stderr, "--source without =")
    r = run("debug", "index", "--help")
    check(r.returncode == 0 and "--find-links" in r.stdout and "--offline" in r.stdout, "--help")
finally:
    for p in servers:
        if p.poll() is None:
            p.terminate()
            p.wait(timeout=10)
    shutil.rmtree(TMP, ignore_errors=True)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
