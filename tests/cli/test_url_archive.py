"""Archives by URL in the lock (issue 23 item 5; docs/lock.md "Direct
references"): a wheel or an sdist a dependency names by its URL (PEP 508
`name @ https://...`, Poetry `{ url = "..." }`, uv `[tool.uv.sources]
name = { url = "..." }`) is fetched into the cache, its metadata read (a
wheel's METADATA, a static PKG-INFO, or the build backend's answer), and
locked as a PEP 751 `archive` entry with its size and sha256; sync installs
it (a wheel checked and installed, an sdist built first).  Offline: the
archives on index_server.py on 127.0.0.1, Debian's setuptools and wheel on a
file:// index for the builds.

  - lock writes archive entries with the served bytes' size and sha256 (a
    #sha256= fragment checked); their dependencies come from their metadata;
  - lock --check is fresh, then stale when the server serves other bytes
    (naming both hashes), fresh again after a re-lock;
  - sync installs them; `import` works; direct_url.json records the URL and
    hash (PEP 610);
  - a lock whose hash is not the served file's: sync refuses, nothing
    installed;
  - bad input at pyproject.toml:LINE:COL, no lock written: a #sha256= that
    does not match (hash mismatch), a 404, an unreachable server, a file
    that is no archive, a #md5= hash, a wheel for another platform;
  - Poetry's and uv's spellings lock the same entry.
"""
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402
import mkwheel  # noqa: E402
from buildtest import PY, SETUPTOOLS, WHEEL, check, cpu_project, entries, finish, need_build_tools, run  # noqa: E402

need_build_tools(git=False)
TMP = tempfile.mkdtemp(prefix="gpuenv-url-archive-test-")
CACHE = os.path.join(TMP, "cache")


LEGACY = '[build-system]\nrequires = ["setuptools>=40.8.0"]\nbuild-backend = "setuptools.build_meta:__legacy__"\n'


def sdist(outdir, name, version, requires=(), metadata_version="2.2", value=None, pkg_info_requires=None):
    """An sdist built by its setup.py (install_requires: requires); PKG-INFO
    (Requires-Dist: pkg_info_requires, default requires) static from 2.2 on
    (PEP 643)."""
    mod = mkwheel.module_name(name)
    pir = requires if pkg_info_requires is None else pkg_info_requires
    return mkwheel.make_sdist(outdir, name, version, requires=pir, metadata_version=metadata_version, files={
        "pyproject.toml": LEGACY,
        "setup.py": "from setuptools import setup\nsetup(name=%r, version=%r, packages=[%r], install_requires=%r)\n"
                    % (name, version, mod, list(requires)),
        "%s/__init__.py" % mod: "VALUE = %r\n" % (value or "%s %s" % (name, version))})


# the index: what the builds and the archives' dependencies need
stage = os.path.join(TMP, "stage")
INDEX = os.path.join(TMP, "index")
mkwheel.write_index(INDEX, [mkwheel.wheel_from_file(SETUPTOOLS, stage), mkwheel.wheel_from_file(WHEEL, stage),
                            mkwheel.make_wheel(stage, "helper", "1.0"), mkwheel.make_wheel(stage, "other", "2.0")])
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"

# the archives, served over HTTP from their own folder
SERVED = os.path.join(TMP, "served")
ARCH = os.path.join(SERVED, "archives")
alpha = mkwheel.make_wheel(ARCH, "alpha", "1.0", requires=["helper>=1.0"],
                           files={"alpha/__init__.py": "VALUE = 'alpha 1.0 from a URL'\n"})
beta = sdist(ARCH, "beta", "2.0", requires=["other"])
# PKG-INFO 2.1 that names no dependency: only its build backend knows helper
gamma = sdist(ARCH, "gamma", "0.3", requires=["helper"], metadata_version="2.1", pkg_info_requires=())
winwheel = mkwheel.make_wheel(ARCH, "delta", "1.0", tags="cp311-cp311-win_amd64")
with open(os.path.join(ARCH, "notes.txt"), "w") as f:
    f.write("not an archive\n")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


proc, PORT = index_server.start(SERVED)
BASE = "http://127.0.0.1:%d/archives/" % PORT
A_URL = BASE + os.path.basename(alpha.path)
B_URL = BASE + os.path.basename(beta.path)
G_URL = BASE + os.path.basename(gamma.path)
A_SHA, B_SHA, G_SHA = sha(alpha.path), sha(beta.path), sha(gamma.path)


def project(name, body):
    return cpu_project(TMP, name, body, mkwheel.platform_tag())


def lock(proj, *extra, cache=CACHE):
    return run("lock", "--project", proj, "--index-url", SIMPLE, "--cache-dir", cache, *extra)


def archive_line(url, path, digest=None):
    return 'archive = { url = "%s", size = %d, hashes = { sha256 = "%s" } }' % (url, os.path.getsize(path),
                                                                               digest or sha(path))


def site_has(venv, name):
    site = os.path.join(venv, "lib", "python3.11", "site-packages")
    return os.path.isdir(site) and any(d.startswith(name + "-") and d.endswith(".dist-info") for d in os.listdir(site))


try:
    # ---- PEP 621: a wheel (with #sha256=), a static sdist, a dynamic sdist ----
    APP = project("app", '[project]\nname = "app"\nversion = "0.1"\ndependencies = [\n'
                  '  "alpha @ %s#sha256=%s",\n  "beta @ %s",\n  "gamma @ %s",\n]\n' % (A_URL, A_SHA.upper(), B_URL, G_URL))
    rc, out, err = lock(APP)
    check(rc == 0, "three archives by URL lock: exit %d\n%s%s" % (rc, out, err))
    LOCKF = os.path.join(APP, "pylock.cpu.toml")
    text = open(LOCKF).read() if os.path.exists(LOCKF) else ""
    pk = entries(text)
    check(archive_line(A_URL, alpha.path) in pk.get("alpha", ""), "alpha: an archive entry with size and sha256:\n" + text)
    check(archive_line(B_URL, beta.path) in pk.get("beta", ""), "beta: an archive entry:\n" + text)
    check(archive_line(G_URL, gamma.path) in pk.get("gamma", ""), "gamma: an archive entry:\n" + text)
    check('version = "1.0"' in pk.get("alpha", "") and 'version = "2.0"' in pk.get("beta", "")
          and 'version = "0.3"' in pk.get("gamma", ""), "their versions are their metadata's:\n" + text)
    check("helper" in pk and "other" in pk, "their dependencies come from their metadata (helper from alpha's "
          "METADATA and gamma's build backend, other from beta's PKG-INFO):\n" + text)
    check(all("wheels" not in pk.get(n, "") and "sdist" not in pk.get(n, "") for n in ("alpha", "beta", "gamma")),
          "an archive entry has no other source:\n" + text)
    check(re.search(r'dependencies = \[\s*\{ name = "helper"', pk.get("gamma", "")) is not None,
          "gamma's dependency (known only to its build backend) is in its entry:\n" + pk.get("gamma", ""))

    # the strict reader reads them back
    rc, out, err = run("debug", "pylock", LOCKF, "--json")
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    check(rc == 0 and doc is not None and A_SHA in json.dumps(doc), "debug pylock reads the archive entries: exit %d\n%s%s"
          % (rc, out[:2000], err))

    # a second lock: the same bytes (the cache's copies, nothing fetched again)
    before = open(LOCKF).read()
    rc, out, err = lock(APP)
    check(rc == 0 and open(LOCKF).read() == before, "a re-lock gives the same lock: exit %d\n%s%s" % (rc, out, err))

    rc, out, err = run("lock", "--check", "--project", APP, "--cache-dir", CACHE)
    check(rc == 0 and "fresh" in out, "lock --check: fresh while the server serves the same bytes: exit %d\n%s%s"
          % (rc, out, err))

    VENV = os.path.join(TMP, "venv")
    rc, out, err = run("sync", "--project", APP, "--venv", VENV, "--python", PY, "--index-url", SIMPLE,
                       "--cache-dir", CACHE)
    check(rc == 0, "sync installs the wheel and builds the sdists: exit %d\n%s%s" % (rc, out, err))
    VPY = os.path.join(VENV, "bin", "python")
    p = subprocess.run([VPY, "-c", "import alpha, beta, gamma, helper, other; print(alpha.VALUE, '|', beta.VALUE, '|', "
                        "gamma.VALUE)"], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.strip() == "alpha 1.0 from a URL | beta 2.0 | gamma 0.3",
          "import works through the venv's python: %s%s" % (p.stdout, p.stderr))
    site = os.path.join(VENV, "lib", "python3.11", "site-packages")
    dj = {}
    for d in os.listdir(site) if os.path.isdir(site) else []:
        if d.startswith("alpha-") and d.endswith(".dist-info") and os.path.exists(os.path.join(site, d, "direct_url.json")):
            dj = json.load(open(os.path.join(site, d, "direct_url.json")))
    check(dj.get("url") == A_URL and dj.get("archive_info", {}).get("hashes", {}).get("sha256") == A_SHA,
          "alpha's direct_url.json records its URL and hash (PEP 610): %r" % dj)

    # ---- the server serves other bytes: stale, then a re-lock takes them ----
    beta2 = sdist(os.path.join(TMP, "beta2"), "beta", "2.0", requires=["other"], value="beta 2.0, rebuilt")
    shutil.copy(beta2.path, beta.path)
    B2_SHA = sha(beta.path)
    rc, out, err = run("lock", "--check", "--project", APP, "--cache-dir", CACHE)
    check(rc == 1 and "stale" in out and "beta" in out and B_SHA[:12] in out and B2_SHA[:12] in out,
          "changed bytes at the URL make the lock stale, naming both hashes: exit %d\n%s%s" % (rc, out, err))
    rc, out, err = lock(APP)
    text = open(LOCKF).read() if os.path.exists(LOCKF) else ""
    check(rc == 0 and archive_line(B_URL, beta.path, B2_SHA) in text, "a re-lock records the new hash: exit %d\n%s%s"
          % (rc, out, err))
    rc, out, err = run("lock", "--check", "--project", APP, "--cache-dir", CACHE)
    check(rc == 0, "fresh again after the re-lock: exit %d\n%s%s" % (rc, out, err))

    # a new #sha256= in the manifest: stale by the inputs
    with open(os.path.join(APP, "pyproject.toml")) as f:
        body = f.read()
    with open(os.path.join(APP, "pyproject.toml"), "w") as f:
        f.write(body.replace(A_SHA.upper(), A_SHA))
    rc, out, err = run("lock", "--check", "--project", APP, "--cache-dir", CACHE)
    check(rc == 1 and "stale" in out, "another #sha256= in pyproject.toml: stale: exit %d\n%s%s" % (rc, out, err))

    # ---- a lock whose hash is not the served file's: nothing installed ----
    TAMPER = project("tamper", '[project]\nname = "tamper"\nversion = "0.1"\ndependencies = ["alpha @ %s"]\n' % A_URL)
    rc, out, err = lock(TAMPER)
    TLOCK = os.path.join(TAMPER, "pylock.cpu.toml")
    check(rc == 0 and os.path.exists(TLOCK), "tamper: locked: exit %d\n%s%s" % (rc, out, err))
    if os.path.exists(TLOCK):
        t = open(TLOCK).read()
        with open(TLOCK, "w") as f:
            f.write(t.replace(A_SHA, "0" * 64))
    TVENV = os.path.join(TMP, "tvenv")
    rc, out, err = run("sync", "--project", TAMPER, "--venv", TVENV, "--python", PY, "--index-url", SIMPLE,
                       "--cache-dir", os.path.join(TMP, "cache-tamper"))
    check(rc != 0 and "hash mismatch" in err and A_SHA in err, "sync refuses a file whose hash is not the lock's: "
          "exit %d\n%s%s" % (rc, out, err))
    check(not site_has(TVENV, "alpha") and not site_has(TVENV, "helper"), "nothing installed after the refusal")

    # ---- Poetry and uv spellings -------------------------------------------
    POETRY = project("poetryapp", '[tool.poetry]\nname = "poetryapp"\nversion = "0.1.0"\ndescription = ""\n'
                     'authors = []\n\n[tool.poetry.dependencies]\npython = "^3.11"\n'
                     'alpha = { url = "%s" }\n' % A_URL)
    rc, out, err = lock(POETRY)
    text = open(os.path.join(POETRY, "pylock.cpu.toml")).read() if os.path.exists(os.path.join(POETRY, "pylock.cpu.toml")) else ""
    check(rc == 0 and archive_line(A_URL, alpha.path) in entries(text).get("alpha", "") and "helper" in entries(text),
          "Poetry's { url = ... }: an archive entry: exit %d\n%s%s%s" % (rc, out, err, text))
    UV = project("uvapp", '[project]\nname = "uvapp"\nversion = "0.1"\ndependencies = ["alpha", "beta"]\n\n'
                 '[tool.uv.sources]\nalpha = { url = "%s#sha256=%s" }\nbeta = { url = "%s" }\n' % (A_URL, A_SHA, B_URL))
    rc, out, err = lock(UV)
    text = open(os.path.join(UV, "pylock.cpu.toml")).read() if os.path.exists(os.path.join(UV, "pylock.cpu.toml")) else ""
    check(rc == 0 and archive_line(A_URL, alpha.path) in entries(text).get("alpha", "")
          and archive_line(B_URL, beta.path) in entries(text).get("beta", ""),
          "uv's [tool.uv.sources] url: archive entries (the fragment is not part of the URL): exit %d\n%s%s%s"
          % (rc, out, err, text))

    # ---- bad input ----------------------------------------------------------
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    DEAD = "http://127.0.0.1:%d/alpha-1.0-py3-none-any.whl" % free.getsockname()[1]
    free.close()

    def bad(name, dep, want, want_rc=4, nothing_in_cache=False):
        d = project(name, '[project]\nname = "%s"\nversion = "0.1"\ndependencies = [\n  "%s",\n]\n' % (name, dep))
        cache = os.path.join(TMP, "cache-" + name)
        rc, out, err = lock(d, "--retries", "1", cache=cache)
        pos = "%s:5:3" % os.path.join(d, "pyproject.toml")
        check(rc == want_rc and pos in err and all(w in err for w in want),
              "%s: exit %d (want %d), the error at %s saying %r:\n%s%s" % (name, rc, want_rc, pos, want, out, err))
        check(not os.path.exists(os.path.join(d, "pylock.cpu.toml")), "%s: no lock is written" % name)
        if nothing_in_cache:
            kept = [f for _, _, fs in os.walk(os.path.join(cache, "archives")) for f in fs]
            check(not kept, "%s: nothing kept in the cache: %r" % (name, kept))
        return d

    bad("mismatch", "alpha @ %s#sha256=%s" % (A_URL, "ab" * 32), ["hash mismatch", "ab" * 32, A_SHA, "#sha256="],
        nothing_in_cache=True)
    bad("notfound", "alpha @ %s" % (BASE + "alpha-9.9-py3-none-any.whl"), ["HTTP 404", "fix the URL"])
    bad("dead", "alpha @ %s" % DEAD, ["127.0.0.1", "check that the server answers"])
    bad("notarchive", "alpha @ %s" % (BASE + "notes.txt"), ["neither a wheel (.whl) nor a .tar.gz sdist"])
    bad("md5", "alpha @ %s#md5=%s" % (A_URL, "0" * 32), ["#md5= hash", "sha256"])
    bad("badhash", "alpha @ %s#sha256=xyz" % A_URL, ["is not a sha256"])
    bad("othername", "beta @ %s" % A_URL, ["is of the project alpha"])
    bad("platform", "delta @ %s" % (BASE + os.path.basename(winwheel.path)), ["does not install there", "win_amd64"])

    # a sync of a project whose archive does not match: refused, nothing installed
    MIS = os.path.join(TMP, "proj", "mismatch")
    MVENV = os.path.join(TMP, "mvenv")
    rc, out, err = run("sync", "--project", MIS, "--venv", MVENV, "--python", PY, "--index-url", SIMPLE,
                       "--cache-dir", os.path.join(TMP, "cache-mismatch"))
    check(rc != 0 and "hash mismatch" in err, "sync of a mismatching archive: refused: exit %d\n%s%s" % (rc, out, err))
    check(not site_has(MVENV, "alpha") and not site_has(MVENV, "helper"), "nothing installed after the mismatch")
finally:
    proc.terminate()
    proc.wait()
    shutil.rmtree(TMP, ignore_errors=True)

finish()
