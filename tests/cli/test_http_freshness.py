"""The HTTP cache's freshness rules (RFC 9111 section 4.2; docs/index-client.md,
"What is cached") against tests/fixtures/index_server.py sending the headers
PyPI and the CDNs in front of mirrors send, every request counted:

  - Cache-Control: max-age=600, public (PyPI's simple pages): a warm run
    within the window makes no request at all; once it has passed, only
    conditional requests, answered 304, after which the entry is fresh again;
  - Age (a CDN's copy already that old) and Date count against max-age;
    Expires without max-age gives the lifetime; no-cache means "revalidate
    every time" whatever max-age says, in either order; no-store is never
    stored; a stale must-revalidate page is never used when the server fails;
  - a 404 is cached by the same rules, and a 404 that says nothing (as a
    bucket behind a CDN answers) for 600 s: a warm re-lock against a torch
    mirror that lacks builds asks it nothing;
  - --refresh revalidates every page, fresh or not (304s, no file fetched
    again); with --offline it is a usage error."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402
import mkwheel  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-freshness-")
PYPI_CC = "max-age=600, public"
X86 = "cp312-cp312-manylinux_2_28_x86_64"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def log_of(url, reset=True):
    """The server's request log since the last reset (then reset it)."""
    with urllib.request.urlopen(url + "/_stats") as f:
        log = json.load(f)["log"]
    if reset:
        urllib.request.urlopen(url + "/_reset").read()
    return log


SERVERS = []


def serve(root, *opts):
    proc, port = index_server.start(root, *opts)
    SERVERS.append(proc)
    return "http://127.0.0.1:%d" % port


def set_faults(path, faults):
    with open(path + ".tmp", "w") as f:
        json.dump(faults, f)
    os.replace(path + ".tmp", path)


def ix(url, cache, *args):
    """gpuenv debug index --json: (rc, the JSON or None, stderr)."""
    p = subprocess.run([BIN, "debug", "index", "--json", "--index-url", url + "/simple/", "--cache-dir",
                        os.path.join(TMP, cache), "--retry-base-ms", "1", *args],
                       capture_output=True, text=True, timeout=120)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        j = None
    return p.returncode, j, p.stderr


def pages_only(log):
    return [e for e in log if "/simple/" in e["path"]]


# ---- a small index: alpha and beta, PEP 658 metadata; "nope" is in it nowhere --------------

INDEX = os.path.join(TMP, "index")
mkwheel.build_index(INDEX, [{"name": "alpha", "version": "1.0", "requires": ["beta"], "sdist": False},
                            {"name": "beta", "version": "2.0", "sdist": False}])
FAULTS = os.path.join(TMP, "faults.json")
set_faults(FAULTS, {})
NAMES = ("alpha", "beta", "nope")

try:
    # ---- PyPI's headers: warm within max-age, nothing asked --------------------------------
    URL = serve(INDEX, "--cache-control", PYPI_CC, "--faults", FAULTS)
    rc, j1, err = ix(URL, "c-pypi", "--metadata", *NAMES)
    cold = log_of(URL)
    check(rc == 1 and j1 and len(cold) == 5, "PyPI's headers, cold: 3 pages (one 404) and 2 metadata files: "
          "%d %s %s" % (rc, cold, err))
    rc, j2, err = ix(URL, "c-pypi", "--metadata", *NAMES)
    check(rc == 1 and log_of(URL) == [] and j2 and j2["stats"]["requests"] == 0
          and j2["stats"]["cache_hits"] == 5, "PyPI's headers, warm: no request at all: %s" % (j2 or {}).get("stats"))
    check(j2 and j1 and j2["projects"] == j1["projects"], "warm answers equal cold ones")

    # --refresh: every page asked again (conditionally: 304), nothing else
    rc, j3, err = ix(URL, "c-pypi", "--metadata", "--refresh", *NAMES)
    log = log_of(URL)
    check(rc == 1 and len(log) == 3 and len(pages_only(log)) == 3, "--refresh: the 3 pages asked again, no "
          "metadata file: %s" % log)
    check(sorted((e["path"], e["status"], e["conditional"]) for e in log) ==
          [("/simple/alpha/", 304, True), ("/simple/beta/", 304, True), ("/simple/nope/", 404, False)],
          "--refresh: the pages revalidated (304), the 404 asked again: %s" % log)
    check(j3 and j3["projects"] == j1["projects"], "--refresh: the same answers")
    rc, j4, err = ix(URL, "c-pypi", "--metadata", *NAMES)
    check(log_of(URL) == [] and j4 and j4["stats"]["requests"] == 0, "after --refresh: fresh again, no request")

    # ---- Age: a CDN's copy already 600 s old is stale at once; 300 s old is not ------------
    for age, stale in ((600, True), (300, False), (590, False)):
        set_faults(FAULTS, {"/simple/*": {"age": age}})
        cache = "c-age%d" % age
        ix(URL, cache, *NAMES)
        log_of(URL)
        rc, j, err = ix(URL, cache, *NAMES)
        log = log_of(URL)
        if stale:
            check(len(log) == 3 and all(e["conditional"] for e in log if e["status"] != 404),
                  "Age %d of max-age 600: stale, revalidated: %s" % (age, log))
        else:
            check(log == [], "Age %d of max-age 600: fresh, no request: %s" % (age, log))

    # ---- Date: an answer dated 700 s ago is already stale -----------------------------------
    set_faults(FAULTS, {"/simple/*": {"date_offset": -700}})
    ix(URL, "c-date", *NAMES)
    log_of(URL)
    ix(URL, "c-date", *NAMES)
    check(len(log_of(URL)) == 3, "Date 700 s ago with max-age 600: stale, asked again")

    # ---- Expires without max-age; no-cache in either order; no-store ----------------------
    cases = [
        ("expires", {"cache_control": "", "expires_in": 600}, "fresh"),
        ("expired", {"cache_control": "", "expires_in": -1}, "revalidated"),
        ("nocache-first", {"cache_control": "no-cache, max-age=600"}, "revalidated"),
        ("nocache-last", {"cache_control": "max-age=600, no-cache"}, "revalidated"),
        ("quoted", {"cache_control": 'public, max-age="600"'}, "fresh"),
        ("bad-max-age", {"cache_control": "max-age=soon"}, "revalidated"),
        ("two-max-ages", {"cache_control": "max-age=600, max-age=0"}, "fresh"),
        ("nostore", {"cache_control": "no-store, max-age=600"}, "fetched"),
    ]
    for name, fault, want in cases:
        set_faults(FAULTS, {"/simple/alpha/": fault})
        ix(URL, "c-" + name, "alpha")
        log_of(URL)
        rc, j, err = ix(URL, "c-" + name, "alpha")
        log = log_of(URL)
        got = ("fresh" if log == [] else "revalidated" if len(log) == 1 and log[0]["conditional"]
               and log[0]["status"] == 304 else "fetched" if len(log) == 1 and not log[0]["conditional"]
               and log[0]["status"] == 200 else repr(log))
        check(rc == 0 and got == want, "%s (%s): the warm run %s, not %s" % (name, fault, want, got))

    # ---- max-age runs out: conditional requests, then fresh again --------------------------
    set_faults(FAULTS, {"/simple/*": {"cache_control": "max-age=2"}})
    ix(URL, "c-short", *NAMES)
    log_of(URL)
    ix(URL, "c-short", *NAMES)
    check(log_of(URL) == [], "max-age 2: a run at once asks nothing")
    time.sleep(2.5)
    rc, j, err = ix(URL, "c-short", *NAMES)
    log = log_of(URL)
    check(sorted((e["path"], e["status"], e["conditional"]) for e in log) ==
          [("/simple/alpha/", 304, True), ("/simple/beta/", 304, True), ("/simple/nope/", 404, False)],
          "max-age 2, 2.5 s later: conditional requests answered 304 (the 404 asked again): %s" % log)
    check(j and j["stats"]["revalidated"] == 2 and j["stats"]["not_modified"] == 2, "the counters say so")
    ix(URL, "c-short", *NAMES)
    check(log_of(URL) == [], "after the 304s: fresh for max-age again, no request")

    # ---- 404s: their own Cache-Control, else 600 s -----------------------------------------
    for name, fault, asked in (("bare", {"cache_control": ""}, 0), ("nocache", {"cache_control": "no-cache"}, 1),
                               ("zero", {"cache_control": "max-age=0"}, 1),
                               ("pypi", {"cache_control": PYPI_CC}, 0)):
        set_faults(FAULTS, {"/simple/nope/": fault})
        ix(URL, "c-404-" + name, "nope")
        first = log_of(URL)
        rc, j, err = ix(URL, "c-404-" + name, "nope")
        log = log_of(URL)
        check(rc == 1 and [e["status"] for e in first] == [404] and len(log) == asked,
              "a 404 with Cache-Control %r: the warm run asks %d times, not %d: %s" %
              (fault["cache_control"], asked, len(log), log))

    # ---- must-revalidate: a stale page is not used when the server fails -------------------
    set_faults(FAULTS, {"/simple/alpha/": {"cache_control": "max-age=0, must-revalidate"}})
    ix(URL, "c-mustrev", "alpha")
    set_faults(FAULTS, {"/simple/alpha/": {"cache_control": "max-age=0, must-revalidate",
                                           "status": [503, 503, 503, 503]}})
    rc, j, err = ix(URL, "c-mustrev", "alpha")
    check(rc not in (0, 1) and "503" in err, "must-revalidate, the server failing: an error, not the stale "
          "page: %d %s" % (rc, err))
    rc, j, err = ix(URL, "c-mustrev", "--offline", "alpha")
    check(rc == 0 and j and j["projects"][0]["files"], "--offline still reads it (asked for): %d %s" % (rc, err))
    set_faults(FAULTS, {})
    log_of(URL)

    # ---- a lock: PyPI-like primary and a torch mirror lacking builds -----------------------
    PRIMARY = os.path.join(TMP, "pypi")
    stage = os.path.join(TMP, "stage")
    mkwheel.write_index(PRIMARY, [mkwheel.make_wheel(stage, "filelock", "3.16.1"),
                                  mkwheel.make_wheel(stage, "numpy", "2.2.6", tags=X86)])
    MIRROR = os.path.join(TMP, "mirror")
    d = os.path.join(MIRROR, "whl", "cu126")
    mkwheel.write_index(MIRROR, [mkwheel.make_wheel(stage, "torch", "2.8.0+cu126", tags=X86,
                                                    requires=["filelock"])], pages=d, files=d)
    PURL = serve(PRIMARY, "--cache-control", PYPI_CC)
    MURL = serve(MIRROR, "--cache-control", PYPI_CC, "--not-found-cache-control", "")
    proj = os.path.join(TMP, "project")
    os.makedirs(proj)
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "p"\nversion = "1.0"\nrequires-python = ">=3.10"\n'
                'dependencies = ["torch>=2.7", "numpy"]\n\n[tool.gpuenv.targets.h200]\ngpu = "H200"\n'
                'driver = "580.159.04"\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n')
    lockfile = os.path.join(proj, "pylock.h200.toml")

    def lock(*extra):
        p = subprocess.run([BIN, "lock", "--json", "--project", proj, "--index-url", PURL + "/simple/",
                            "--torch-index", MURL + "/whl", "--cache-dir", os.path.join(TMP, "c-lock"), *extra],
                           capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout, p.stderr

    rc, out, err = lock()
    mlog, plog = log_of(MURL), log_of(PURL)
    missing = [e["path"] for e in mlog if e["status"] == 404]
    check(rc == 0 and os.path.exists(lockfile), "the lock against the mirror: %d %s%s" % (rc, out, err))
    check(missing and all("/torch/" in p for p in missing) and not any("/cu126/" in p for p in missing),
          "cold: the mirror was asked for the builds it lacks (404): %s" % mlog)
    os.remove(lockfile)
    rc, out, err = lock()
    mlog, plog = log_of(MURL), log_of(PURL)
    check(rc == 0 and mlog == [] and plog == [], "a warm lock from scratch within max-age: no request to the "
          "mirror (its 404s cached 600 s) nor the primary: %s %s" % (mlog, plog))
    rc, out, err = lock()
    mlog, plog = log_of(MURL), log_of(PURL)
    check(rc == 0 and mlog == [] and plog == [], "a warm re-lock: no request: %s %s" % (mlog, plog))
    os.remove(lockfile)
    rc, out, err = lock("--refresh")
    mlog, plog = log_of(MURL), log_of(PURL)
    asked = sorted(e["path"] for e in mlog if e["status"] == 404)
    check(rc == 0 and asked == sorted(missing), "--refresh: the missing builds asked again: %s" % mlog)
    check(all(e["status"] == 304 and e["conditional"] for e in mlog + plog if e["status"] != 404)
          and plog and all("/simple/" in e["path"] for e in plog),
          "--refresh: every page revalidated (304), no file fetched again: %s %s" % (mlog, plog))
    rc, out, err = lock("--refresh", "--offline")
    check(rc == 2 and "--refresh" in err and "--offline" in err, "--refresh with --offline: a usage error (2): "
          "%d %s" % (rc, err))
finally:
    for p in SERVERS:
        p.terminate()
        p.wait()

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
