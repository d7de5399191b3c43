"""The cache part of the installer through the CLI:

  - gpuenv debug download (lib/index/download.c) against
    tests/fixtures/index_server.py: parallel downloads, 500s then success,
    a truncated body (retried, and for good), a wrong hash, a wrong size,
    a 404, --offline, file:// URLs, credentials that never show;
  - gpuenv cache and gpuenv debug cache-get (lib/install/cache.c), when the
    binary has them: concurrent processes filling one cache, damaged trees
    and wheels, size / prune / clean, the exclusive lock."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402
import mkwheel  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-cache-test-")
SECRET = "pa55-s3cr3t"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def env(**extra):
    e = dict(os.environ)
    e["XDG_CACHE_HOME"] = os.path.join(TMP, "xdg")
    e["HOME"] = os.path.join(TMP, "home")
    e.pop("GPUENV_CACHE_DIR", None)
    e["NETRC"] = os.path.join(TMP, "no-netrc")
    e.update(extra)
    return e


def run(*args, extra_env=None, timeout=120):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout,
                          env=env(**(extra_env or {})))


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fresh(name):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


# ---- fixtures: wheels served by the index server --------------------------------

ROOT = os.path.join(TMP, "root")
FILES = os.path.join(ROOT, "files")
big = mkwheel.make_wheel(FILES, "bigpkg", "1.0", files={"bigpkg/blob.bin": os.urandom(3 << 20)})
small = [mkwheel.make_wheel(FILES, "pkg%d" % i, "1.%d" % i) for i in range(4)]
WHEELS = [big] + small
FAULTS = os.path.join(TMP, "faults.json")


def faults(spec):
    with open(FAULTS, "w") as f:
        json.dump(spec, f)


faults({})
proc, port = index_server.start(ROOT, "--faults", FAULTS)
AUTH_ROOT = os.path.join(TMP, "auth-root")
shutil.copytree(ROOT, AUTH_ROOT)
aproc, aport = index_server.start(AUTH_ROOT, "--auth", "alice:" + SECRET)
BASE = "http://127.0.0.1:%d" % port


def url(d, base=BASE):
    return "%s/files/%s" % (base, d.filename)


def arg(d, base=BASE, digest=None, size=None):
    s = "%s=%s" % (url(d, base), digest or d.sha256)
    return s + (":%d" % size if size is not None else "")


def log_paths():
    import urllib.request
    with urllib.request.urlopen(BASE + "/_stats") as r:
        return [e["path"] for e in json.load(r)["log"]]


def reset_log():
    import urllib.request
    urllib.request.urlopen(BASE + "/_reset").read()


FAST = ["--retry-base-ms", "5"]

try:
    # ---- downloads -------------------------------------------------------------
    dest = fresh("dl-all")
    r = run("debug", "download", "--dest", dest, "--progress", *[arg(d) for d in WHEELS])
    check(r.returncode == 0, "parallel downloads: exit %d %r" % (r.returncode, r.stderr))
    for d in WHEELS:
        p = os.path.join(dest, d.filename)
        check(os.path.exists(p) and sha(p) == d.sha256, "downloaded %s intact" % d.filename)
        check("%s: %d bytes" % (d.filename, d.size) in r.stdout, "bytes of %s: %r" % (d.filename, r.stdout))
    total = sum(d.size for d in WHEELS)
    lines = [l for l in r.stderr.splitlines() if l.startswith("download ")]
    check(lines and lines[-1] == "download %d/%d %d/%d bytes" % (len(WHEELS), len(WHEELS), total, 0),
          "progress ends with every byte: %r" % lines[-3:])
    check(len(lines) >= 3, "progress while the bytes arrive: %d lines" % len(lines))

    # sizes given: the progress total is known
    dest = fresh("dl-size")
    r = run("debug", "download", "--dest", dest, "--progress", *[arg(d, size=d.size) for d in WHEELS])
    check(r.returncode == 0 and "download %d/%d %d/%d bytes" % (len(WHEELS), len(WHEELS), total, total)
          in r.stderr, "progress total from sizes: %r" % r.stderr[-300:])

    # --json
    dest = fresh("dl-json")
    r = run("--json", "debug", "download", "--dest", dest, arg(small[0]))
    out = json.loads(r.stdout) if r.returncode == 0 else None
    check(out == [{"name": small[0].filename, "sha256": small[0].sha256, "bytes": small[0].size,
                   "error": None}], "--json: %r %r" % (r.stdout, r.stderr))

    # 500s, then success: retried with the client's backoff
    faults({"/files/" + small[1].filename: {"status": [500, 503]}})
    reset_log()
    dest = fresh("dl-500")
    r = run("debug", "download", "--dest", dest, *FAST, arg(small[1]), arg(small[2]))
    check(r.returncode == 0 and sha(os.path.join(dest, small[1].filename)) == small[1].sha256,
          "500, 503, then 200: %d %r" % (r.returncode, r.stderr))
    check(log_paths().count("/files/" + small[1].filename) == 3,
          "three requests for the failing file: %r" % log_paths())
    # 500 for good: the story after the retries
    faults({"/files/" + small[1].filename: {"status": [500] * 10}})
    dest = fresh("dl-500-forever")
    r = run("debug", "download", "--dest", dest, *FAST, "--retries", "2", arg(small[1]), arg(small[2]))
    check(r.returncode == 4 and "HTTP 500" in r.stderr and "after 3 attempts" in r.stderr
          and small[1].filename in r.stderr, "500 for good: %d %r" % (r.returncode, r.stderr))
    check(not os.path.exists(os.path.join(dest, small[1].filename)), "a failed download is removed")
    check(os.path.exists(os.path.join(dest, small[2].filename)), "the other download still lands")

    # a truncated body: retried, and the file starts again (the hash too)
    faults({"/files/" + big.filename: {"truncate": 100000, "truncate_times": 1}})
    dest = fresh("dl-trunc")
    r = run("debug", "download", "--dest", dest, *FAST, arg(big))
    check(r.returncode == 0 and sha(os.path.join(dest, big.filename)) == big.sha256,
          "a truncated body, retried: %d %r" % (r.returncode, r.stderr))
    faults({"/files/" + big.filename: {"truncate": 100000}})
    dest = fresh("dl-trunc-forever")
    r = run("debug", "download", "--dest", dest, *FAST, "--retries", "1", arg(big))
    check(r.returncode == 4 and "cut short" in r.stderr and url(big) in r.stderr,
          "truncated for good: %d %r" % (r.returncode, r.stderr))
    check(not os.listdir(dest), "nothing left of a truncated download: %r" % os.listdir(dest))

    # a wrong hash: both hashes and the URL, nothing left
    faults({"/files/" + small[3].filename: {"wrong_hash": True}})
    dest = fresh("dl-hash")
    r = run("debug", "download", "--dest", dest, arg(small[3]))
    with open(small[3].path, "rb") as f:
        data = bytearray(f.read())
    data[0] ^= 0x20
    got = hashlib.sha256(data).hexdigest()
    check(r.returncode == 4 and url(small[3]) in r.stderr and small[3].sha256 in r.stderr
          and got in r.stderr and "hash mismatch" in r.stderr and "lock" in r.stderr,
          "wrong hash: %d %r" % (r.returncode, r.stderr))
    check(not os.listdir(dest), "nothing left of a download with a wrong hash")
    faults({})

    # a wrong size, either way; a 404; a malformed hash
    dest = fresh("dl-size-bad")
    r = run("debug", "download", "--dest", dest, arg(small[0], size=small[0].size - 1))
    check(r.returncode == 4 and "larger than the %d bytes expected" % (small[0].size - 1) in r.stderr,
          "too big for its size: %r" % r.stderr)
    r = run("debug", "download", "--dest", dest, arg(small[0], size=small[0].size + 1))
    check(r.returncode == 4 and "expected %d" % (small[0].size + 1) in r.stderr, "short of its size: %r" % r.stderr)
    r = run("debug", "download", "--dest", dest, BASE + "/files/nope-1.0-py3-none-any.whl=" + "a" * 64)
    check(r.returncode == 4 and "HTTP 404" in r.stderr and "nope-1.0" in r.stderr, "404: %r" % r.stderr)
    r = run("debug", "download", "--dest", dest, url(small[0]) + "=abc")
    check(r.returncode == 4 and "64 hex digits" in r.stderr, "bad sha256: %r" % r.stderr)
    check(not os.listdir(dest), "nothing left of the failures: %r" % os.listdir(dest))
    r = run("debug", "download", "--dest", dest, url(small[0]))
    check(r.returncode == 2 and "URL=SHA256" in r.stderr, "no sha256: usage: %r" % r.stderr)
    # the destination exists already
    dest = fresh("dl-exists")
    open(os.path.join(dest, small[0].filename), "w").close()
    r = run("debug", "download", "--dest", dest, arg(small[0]))
    check(r.returncode == 4 and "File exists" in r.stderr, "destination exists: %r" % r.stderr)

    # --offline refuses http, file:// still works
    dest = fresh("dl-offline")
    r = run("debug", "download", "--offline", "--dest", dest, arg(small[0]))
    check(r.returncode == 4 and "--offline" in r.stderr and small[0].filename in r.stderr,
          "--offline: %r" % r.stderr)
    furl = "file://" + small[0].path
    r = run("debug", "download", "--offline", "--dest", dest, "%s=%s" % (furl, small[0].sha256))
    check(r.returncode == 0 and sha(os.path.join(dest, small[0].filename)) == small[0].sha256,
          "file:// offline: %r" % r.stderr)
    r = run("debug", "download", "--dest", fresh("dl-file-bad"), "%s=%s" % (furl, "b" * 64))
    check(r.returncode == 4 and "hash mismatch" in r.stderr and small[0].sha256 in r.stderr,
          "file:// wrong hash: %r" % r.stderr)

    # credentials: the URL's userinfo, or the index's (environment); never shown
    ABASE = "http://127.0.0.1:%d" % aport
    dest = fresh("dl-auth")
    r = run("debug", "download", "--dest", dest, arg(small[0], base="http://alice:%s@127.0.0.1:%d" % (SECRET, aport)))
    check(r.returncode == 0 and os.path.exists(os.path.join(dest, small[0].filename)),
          "userinfo credentials: %r" % r.stderr)
    r = run("debug", "download", "--dest", fresh("dl-auth2"), "--index-url", ABASE + "/simple/", arg(small[1], base=ABASE),
            extra_env={"GPUENV_INDEX_PYPI_USERNAME": "alice", "GPUENV_INDEX_PYPI_PASSWORD": SECRET})
    check(r.returncode == 0, "the index's credentials from the environment: %r" % r.stderr)
    r = run("debug", "download", "--dest", fresh("dl-auth3"), arg(small[1], base="http://alice:wrong@127.0.0.1:%d" % aport))
    check(r.returncode == 4 and "401" in r.stderr and "wrong" not in r.stderr, "401: %r" % r.stderr)
    r = run("debug", "download", "--dest", fresh("dl-auth4"),
            arg(small[1], base="http://alice:%s@127.0.0.1:%d" % (SECRET, aport), digest="c" * 64))
    check(r.returncode == 4 and "hash mismatch" in r.stderr and SECRET not in r.stderr + r.stdout,
          "no password in messages: %r" % r.stderr)

    # one at a time works too
    dest = fresh("dl-serial")
    r = run("debug", "download", "--dest", dest, "--max-parallel", "1", *[arg(d) for d in small])
    check(r.returncode == 0 and len(os.listdir(dest)) == len(small), "--max-parallel 1: %r" % r.stderr)
finally:
    for p in (proc, aproc):
        p.terminate()
        p.wait()
    shutil.rmtree(TMP, ignore_errors=True)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
