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


def tree_dirs(cache):
    out = []
    top = os.path.join(cache, "trees")
    for aa in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        for e in sorted(os.listdir(os.path.join(top, aa))):
            if not e.endswith(".used"):
                out.append(os.path.join(top, aa, e))
    return out


def wheel_entries(cache):
    top = os.path.join(cache, "wheels")
    return [os.path.join(top, aa, e) for aa in sorted(os.listdir(top)) for e in sorted(os.listdir(os.path.join(top, aa)))]


def get(cache, *wheels, args=(), extra_env=None):
    return run("--json", "debug", "cache-get", "--cache-dir", cache, *FAST, *args,
               *[arg(d) if not isinstance(d, str) else d for d in wheels], extra_env=extra_env)


def entries(r):
    try:
        return {e["name"]: e for e in json.loads(r.stdout)}
    except ValueError:
        return {}


def flags(e):
    return "".join(k[0] for k in ("downloaded", "unpacked", "repaired") if e[k])


def du(path):
    seen, total = set(), 0
    for d, _, files in os.walk(path):
        for f in files:
            st = os.lstat(os.path.join(d, f))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def cache_tests():
    import fcntl
    import time
    cache = os.path.join(TMP, "cache")

    # four processes at once, the same wheels, one cache: all succeed, one tree each
    reset_log()
    procs = [subprocess.Popen([BIN, "--json", "debug", "cache-get", "--cache-dir", cache, *FAST,
                               *[arg(d) for d in WHEELS]], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env()) for _ in range(4)]
    outs = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    for out, err, rc in outs:
        check(rc == 0, "concurrent cache-get: exit %d %r" % (rc, err))
    got = [{e["name"]: e["tree_dir"] for e in json.loads(o)} for o, _, rc in outs if rc == 0]
    check(len(got) == 4 and all(g == got[0] for g in got), "the same tree dirs for every process")
    trees = tree_dirs(cache)
    check(len(trees) == len(WHEELS), "one tree per wheel: %r" % trees)
    check(len(wheel_entries(cache)) == len(WHEELS), "one wheel entry per wheel")
    check(os.listdir(os.path.join(cache, "tmp")) == [], "nothing left in tmp/: %r" % os.listdir(os.path.join(cache, "tmp")))
    for d in WHEELS:
        t = got[0].get(d.filename) if got else None
        check(t and os.path.basename(t) == d.sha256 and os.path.isfile(os.path.join(t, ".gpuenv-tree")),
              "tree of %s by its hash: %r" % (d.filename, t))
    n_dl = sum(1 for o, _, rc in outs if rc == 0 for e in json.loads(o) if e["downloaded"])
    check(len(WHEELS) <= n_dl <= 4 * len(WHEELS), "downloads counted: %d" % n_dl)
    e0 = json.loads(outs[0][0])[0] if outs[0][2] == 0 else {}
    check(e0.get("project") == "bigpkg" and e0.get("version") == "1.0" and e0.get("files", 0) >= 4,
          "the tree's manifest: %r" % e0)

    # warm: nothing fetched, nothing unpacked
    reset_log()
    r = get(cache, *WHEELS)
    es = entries(r)
    check(r.returncode == 0 and all(flags(e) == "" for e in es.values()) and len(es) == len(WHEELS),
          "warm get: %r %r" % (r.stdout, r.stderr))
    check(log_paths() == [], "warm get asks the server nothing: %r" % log_paths())
    # offline and warm: fine; the same wheel twice in one call: one entry
    r = get(cache, small[0], small[0], args=["--offline"])
    check(r.returncode == 0 and len(json.loads(r.stdout)) == 2, "--offline warm, a wheel twice: %r" % r.stderr)

    # a tree file modified after unpacking (a hardlinked file edited in a venv): re-unpacked
    t = entries(r)[small[0].filename]["tree_dir"]
    init = os.path.join(t, "pkg0", "__init__.py")
    with open(init) as f:
        orig = f.read()
    with open(init, "a") as f:
        f.write("import os; os.system('evil')\n")
    reset_log()
    r = get(cache, small[0])
    e = entries(r).get(small[0].filename, {})
    check(r.returncode == 0 and flags(e) == "ur", "damaged tree: unpacked again, repaired: %r %r" % (e, r.stderr))
    with open(init) as f:
        check(f.read() == orig, "the tree file is the wheel's again")
    check(log_paths() == [], "a damaged tree with an intact wheel needs no download")
    # a tree without its manifest: incomplete, made again
    os.unlink(os.path.join(t, ".gpuenv-tree"))
    r = get(cache, small[0])
    check(r.returncode == 0 and flags(entries(r).get(small[0].filename, {})) == "ur", "no manifest: %r" % r.stdout)

    # a cached wheel corrupted (and its tree damaged): fetched again, never unpacked as it is
    wpath = os.path.join(cache, "wheels", small[1].sha256[:2], small[1].sha256, small[1].filename)
    with open(wpath, "r+b") as f:
        f.seek(10)
        b = f.read(1)
        f.seek(10)
        f.write(bytes([b[0] ^ 0xff]))
    t1 = os.path.join(cache, "trees", small[1].sha256[:2], small[1].sha256)
    os.unlink(os.path.join(t1, "pkg1", "__init__.py"))
    reset_log()
    r = get(cache, small[1])
    e = entries(r).get(small[1].filename, {})
    check(r.returncode == 0 and flags(e) == "dur", "corrupt wheel: downloaded, unpacked, repaired: %r %r" % (e, r.stderr))
    check(sha(wpath) == small[1].sha256, "the cached wheel is whole again")
    check(log_paths() == ["/files/" + small[1].filename], "one download: %r" % log_paths())
    # corrupt wheel, the server serving it wrong too: an error, nothing installed or kept
    with open(wpath, "r+b") as f:
        f.write(b"XX")
    shutil.rmtree(t1)
    faults({"/files/" + small[1].filename: {"wrong_hash": True}})
    r = get(cache, small[1])
    faults({})
    check(r.returncode == 4 and "hash mismatch" in r.stderr and small[1].sha256 in r.stderr,
          "wrong bytes from the server: %d %r" % (r.returncode, r.stderr))
    check(not os.path.exists(t1) and not os.path.exists(wpath), "no tree, no wheel after a mismatch")
    check(os.listdir(os.path.join(cache, "tmp")) == [], "tmp/ empty after a mismatch")
    r = get(cache, small[1], args=["--offline"])
    check(r.returncode == 4 and "--offline" in r.stderr, "offline and not cached: %r" % r.stderr)
    r = get(cache, small[1])
    check(r.returncode == 0 and flags(entries(r).get(small[1].filename, {})) == "du", "fetched again: %r" % r.stdout)

    # a local path (a lock's path entry) and a file:// URL
    r = get(cache, "%s=%s" % (small[2].path, small[2].sha256), "file://%s=%s" % (small[3].path, small[3].sha256))
    check(r.returncode == 0 and all(flags(e) == "" for e in entries(r).values()),
          "path and file:// of cached wheels: %r %r" % (r.stdout, r.stderr))
    other = mkwheel.make_wheel(os.path.join(TMP, "local"), "localpkg", "2.0")
    r = get(cache, "%s=%s" % (other.path, other.sha256))
    check(r.returncode == 0 and flags(entries(r).get(other.filename, {})) == "du", "a new local wheel: %r" % r.stderr)
    r = get(cache, "%s=%s" % (other.path, "0" * 64))
    check(r.returncode == 4 and "hash mismatch" in r.stderr and other.path in r.stderr, "a local wheel's hash: %r" % r.stderr)
    # requests the cache refuses
    r = get(cache, BASE + "/files/notawheel.tar.gz=" + "a" * 64)
    check(r.returncode == 4 and "not a wheel file name" in r.stderr, "not a wheel: %r" % r.stderr)

    # size: by kind, a hardlinked file counted once
    allw = WHEELS + [other]
    http = os.path.join(cache, "http-v1", "ab")
    os.makedirs(http, exist_ok=True)
    with open(os.path.join(http, "entry"), "wb") as f:
        f.write(b"h" * 1000)
    with open(os.path.join(cache, "tmp", "leftover"), "wb") as f:
        f.write(b"t" * 300)
    os.link(init, os.path.join(cache, "tmp", "a-hardlink"))
    r = run("--json", "cache", "size", "--cache-dir", cache)
    u = json.loads(r.stdout) if r.returncode == 0 else {}
    tree_bytes = sum(du(t) for t in tree_dirs(cache))
    check(u.get("wheels") == len(allw) and u.get("wheel_bytes") == sum(d.size for d in allw),
          "size: wheels %r (want %d, %d)" % (u, len(allw), sum(d.size for d in allw)))
    check(u.get("trees") == len(allw) and u.get("tree_bytes") == tree_bytes, "size: trees %r (want %d)" % (u, tree_bytes))
    check(u.get("http_bytes") == 1000 and u.get("other_bytes") == 300, "size: http, other (hardlink once): %r" % u)
    check(u.get("total_bytes") == u.get("wheel_bytes", 0) + tree_bytes + 1300 and u.get("dir") == cache, "size: total %r" % u)
    r = run("cache", "size", "--cache-dir", cache)
    check(r.returncode == 0 and r.stdout.startswith("wheels  %d (" % len(allw)) and "http    1000 bytes" in r.stdout,
          "size as text: %r" % r.stdout)

    # prune: entries unused for 40 days go (30 by default), trees whose wheel is gone, tmp/
    old = time.time() - 40 * 86400
    for d in small[:2]:
        for stamp in (os.path.join(cache, "wheels", d.sha256[:2], d.sha256, ".used"),
                      os.path.join(cache, "trees", d.sha256[:2], d.sha256 + ".used")):
            os.utime(stamp, (old, old))
    shutil.rmtree(os.path.join(cache, "wheels", small[2].sha256[:2], small[2].sha256))
    want = sum(d.size for d in small[:2]) + sum(du(os.path.join(cache, "trees", d.sha256[:2], d.sha256))
                                               for d in small[:3]) + 300
    # (init's second link, tmp/a-hardlink, goes too: its bytes are freed once);
    # a file hardlinked into a venv stays there, and frees nothing
    venv_file = os.path.join(TMP, "venv-file.py")
    os.link(os.path.join(cache, "trees", small[1].sha256[:2], small[1].sha256, "pkg1", "__init__.py"), venv_file)
    want -= os.path.getsize(venv_file)
    r = run("--json", "cache", "prune", "--cache-dir", cache)
    freed = json.loads(r.stdout).get("freed_bytes") if r.returncode == 0 else None
    check(freed == want, "prune freed %r bytes, want %d: %r" % (freed, want, r.stderr))
    with open(venv_file) as f:
        check(f.read() == '__version__ = "1.1"\n', "a venv's hardlinked file outlives the prune")
    left = {os.path.basename(t) for t in tree_dirs(cache)}
    check(left == {d.sha256 for d in allw if d not in small[:3]}, "prune kept the used trees: %r" % left)
    check(len(wheel_entries(cache)) == len(allw) - 3, "prune kept the used wheels")
    check(os.listdir(os.path.join(cache, "tmp")) == [], "prune emptied tmp/")
    r = run("cache", "prune", "--cache-dir", cache, "--older-than", "1")
    check(r.returncode == 0 and r.stdout == "prune: freed 0 bytes\n", "nothing more to prune: %r" % r.stdout)
    r = get(cache, *small[:3])
    check(r.returncode == 0 and all(flags(e) == "du" for e in entries(r).values()), "pruned wheels come back: %r" % r.stdout)

    # clean while another process holds the cache: refused at once; --wait waits
    lockf = open(os.path.join(cache, ".lock"), "a")
    fcntl.flock(lockf, fcntl.LOCK_SH)
    r = run("cache", "clean", "--cache-dir", cache)
    check(r.returncode == 4 and "in use by another gpuenv" in r.stderr and "--wait" in r.stderr,
          "clean while in use: %d %r" % (r.returncode, r.stderr))
    r = run("cache", "prune", "--cache-dir", cache)
    check(r.returncode == 4 and "in use" in r.stderr, "prune while in use: %r" % r.stderr)
    check(len(tree_dirs(cache)) == len(allw), "nothing removed while in use")
    r = get(cache, small[0])
    check(r.returncode == 0, "a shared user meanwhile: fine: %r" % r.stderr)
    waiter = subprocess.Popen([BIN, "--json", "cache", "clean", "--wait", "--cache-dir", cache],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    time.sleep(0.5)
    check(waiter.poll() is None, "clean --wait waits for the lock")
    total = json.loads(run("--json", "cache", "size", "--cache-dir", cache).stdout)["total_bytes"]
    fcntl.flock(lockf, fcntl.LOCK_UN)
    lockf.close()
    out, err = waiter.communicate(timeout=60)
    check(waiter.returncode == 0 and json.loads(out or "{}").get("freed_bytes") == total,
          "clean --wait, then everything freed: %r %r (want %d)" % (out, err, total))
    u = json.loads(run("--json", "cache", "size", "--cache-dir", cache).stdout)
    check(all(u[k] == 0 for k in u if k != "dir"), "empty after clean: %r" % u)

    # the folder: --cache-dir, GPUENV_CACHE_DIR, XDG_CACHE_HOME, HOME
    check(run("cache", "dir", "--cache-dir", "/x/y").stdout == "/x/y\n", "cache dir --cache-dir")
    check(run("cache", "dir", extra_env={"GPUENV_CACHE_DIR": "/g/c"}).stdout == "/g/c\n", "GPUENV_CACHE_DIR")
    check(run("cache", "dir").stdout == os.path.join(TMP, "xdg", "gpuenv") + "\n", "XDG_CACHE_HOME")
    r = run("cache", "dir", extra_env={"XDG_CACHE_HOME": "relative"})
    check(r.stdout == os.path.join(TMP, "home", ".cache", "gpuenv") + "\n", "HOME (a relative XDG is ignored): %r" % r.stdout)
    r = run("--json", "cache", "dir", extra_env={"GPUENV_CACHE_DIR": "/g/c"})
    check(r.returncode == 0 and json.loads(r.stdout) == {"dir": "/g/c"}, "cache dir --json: %r" % r.stdout)

    # usage
    r = run("cache", "dir", "--older-than", "3")
    check(r.returncode == 2 and "does not apply" in r.stderr, "an option of another sub-verb: %r" % r.stderr)
    r = run("cache", "prune", "--older-than", "soon", "--cache-dir", cache)
    check(r.returncode == 2 and "number of days" in r.stderr, "--older-than soon: %r" % r.stderr)
    r = run("cache", "prnue")
    check(r.returncode == 2 and "did you mean 'prune'" in r.stderr, "a typo: %r" % r.stderr)
    r = run("cache")
    check(r.returncode == 2, "no sub-verb: %r" % r.stderr)
    for sub in ("dir", "size", "prune", "clean"):
        r = run("cache", sub, "--help")
        check(r.returncode == 0 and r.stdout.startswith("usage: gpuenv cache " + sub), "cache %s --help" % sub)
    r = run("cache", "size", "--cache-dir", "/proc/nope/cache")
    check(r.returncode == 4 and "/proc/nope" in r.stderr, "an unusable cache folder: %r" % r.stderr)


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

    # ---- the cache ---------------------------------------------------------------
    if "cache" in run("--help").stdout:
        cache_tests()
finally:
    for p in (proc, aproc):
        p.terminate()
        p.wait()
    shutil.rmtree(TMP, ignore_errors=True)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
