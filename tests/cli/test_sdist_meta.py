"""Sdists whose dependencies are known only after a build (docs/build.md,
"Metadata for the lock"): a setup.py with install_requires and a PKG-INFO of
Metadata-Version 2.1 (as setuptools before 68 writes it) is locked by asking
its build backend (PEP 517 prepare_metadata_for_build_wheel) in a build venv
gpuenv fills from a fixture index whose setuptools and wheel are Debian's
(/usr/share/python-wheels):

  - the lock has the sdist's dependencies; sync builds and installs it and
    `import` works;
  - a second lock runs no hook (the fixture's setup.py counts its runs in a
    file) and is measured against the first;
  - PEP 517's fallback: a backend without prepare_metadata_for_build_wheel
    is asked for the wheel, whose METADATA is read;
  - bad input: a failing hook (exit 1, the package and the log named), a
    hanging hook (--build-timeout), an sdist that is not a tarball, an
    answer that names another project or version (refused).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-sdist-meta-test-")
CACHE = os.path.join(TMP, "cache")
WHEELS = "/usr/share/python-wheels"
PY = "/usr/bin/python3.11"
SETUPTOOLS = os.path.join(WHEELS, "setuptools-66.1.1-py3-none-any.whl")
WHEEL = os.path.join(WHEELS, "wheel-0.38.4-py3-none-any.whl")
if not os.path.exists(PY) or not os.path.exists(SETUPTOOLS) or not os.path.exists(WHEEL) or \
        not os.path.exists("/usr/lib/python3.11/distutils/command/install.py"):
    print("SKIP: needs Debian's CPython 3.11 with distutils, python3-setuptools-whl and python3-wheel-whl")
    sys.exit(77)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None, timeout=600):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    # Debian's setuptools wheel needs Debian's distutils, as Debian runs it
    e["SETUPTOOLS_USE_DISTUTILS"] = "stdlib"
    e.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


COUNTER = os.path.join(TMP, "setup-runs.txt")
LEGACY = '[build-system]\nrequires = ["setuptools>=40.8.0"]\nbuild-backend = "setuptools.build_meta:__legacy__"\n'


def setup_py(name, version, body="", requires=()):
    """A setup.py that counts its runs in COUNTER, then does body, then
    setup() with install_requires."""
    return ('with open(%r, "a") as f:\n    f.write("%s\\n")\n%s\nfrom setuptools import setup\n'
            'setup(name=%r, version=%r, packages=[%r], install_requires=%r)\n'
            % (COUNTER, name, body, name, version, mkwheel.module_name(name), list(requires)))


def dyn_sdist(stage, name, version, body="", setup_name=None, setup_version=None, requires=("helper>=1.0",)):
    """An sdist with PKG-INFO 2.1 and no Requires-Dist: its dependencies are
    setup.py's install_requires."""
    return mkwheel.make_sdist(stage, name, version, metadata_version="2.1", files={
        "pyproject.toml": LEGACY,
        "setup.py": setup_py(setup_name or name, setup_version or version, body, requires),
        "%s/__init__.py" % mkwheel.module_name(setup_name or name):
            "import helper\nVALUE = %r\n" % ("%s %s" % (name, version))})


# an in-tree backend without prepare_metadata_for_build_wheel: its wheel's
# METADATA is the answer (PEP 517's fallback)
FB_BACKEND = r'''
import base64, hashlib, os, zipfile
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open(%r, "a") as f:
        f.write("fbpkg wheel\n")
    name = "fbpkg-1.0-py3-none-any.whl"
    files = {"fbpkg/__init__.py": b"VALUE = 'fb'\n",
             "fbpkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: fbpkg\nVersion: 1.0\nRequires-Dist: helper\n\n",
             "fbpkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: fixture\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n"}
    rec = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for p, d in files.items():
            z.writestr(p, d)
            h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
            rec.append("%%s,sha256=%%s,%%d" %% (p, h, len(d)))
        rec.append("fbpkg-1.0.dist-info/RECORD,,")
        z.writestr("fbpkg-1.0.dist-info/RECORD", "\n".join(rec) + "\n")
    return name
''' % COUNTER

stage = os.path.join(TMP, "stage")
dists = [mkwheel.wheel_from_file(SETUPTOOLS, stage), mkwheel.wheel_from_file(WHEEL, stage),
         mkwheel.make_wheel(stage, "helper", "1.0")]
dists.append(dyn_sdist(stage, "dynpkg", "1.0"))
dists.append(dyn_sdist(stage, "dynfail", "1.0", body='raise SystemExit("dynfail: fixture metadata failure")'))
dists.append(dyn_sdist(stage, "dynhang", "1.0", body="import time\ntime.sleep(600)"))
dists.append(dyn_sdist(stage, "dynother", "1.0", setup_name="otherpkg"))
dists.append(dyn_sdist(stage, "dynver", "1.0", setup_version="2.0"))
dists.append(mkwheel.make_sdist(stage, "fbpkg", "1.0", dynamic=("Requires-Dist",), files={
    "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "fbbackend"\nbackend-path = ["."]\n',
    "fbbackend.py": FB_BACKEND}))
notar = mkwheel.make_sdist(stage, "notar", "1.0", metadata_version="2.1")
with open(notar.path, "wb") as f:
    f.write(b"this is not a gzip'd tar archive\n" * 8)
dists.append(notar)  # its page gives the hash of these bytes
INDEX = os.path.join(TMP, "index")
mkwheel.write_index(INDEX, dists)
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"


def project(name, deps):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "%s"\nversion = "0.1"\ndependencies = [%s]\n'
                '\n[tool.gpuenv.targets.cpu]\ngpu = "none"\npython = "3.11"\nplatform = "%s"\n'
                % (name, ", ".join('"%s"' % x for x in deps), mkwheel.platform_tag()))
    return d


def lock(proj, *extra):
    return run("lock", "--project", proj, "--index-url", SIMPLE, "--cache-dir", CACHE, *extra)


def runs(name):
    if not os.path.exists(COUNTER):
        return 0
    return sum(1 for line in open(COUNTER) if line.split()[0] == name)


def meta_logs():
    d = os.path.join(CACHE, "build-logs")
    return sorted(f for f in os.listdir(d) if "-metadata-" in f) if os.path.isdir(d) else []


# ---- a setup.py sdist locks with its dependencies ------------------------

APP = project("app", ["dynpkg"])
t0 = time.monotonic()
rc, out, err = lock(APP)
cold = time.monotonic() - t0
check(rc == 0, "a dynamic sdist locks: exit %d\n%s%s" % (rc, out, err))
lockf = os.path.join(APP, "pylock.cpu.toml")
text = open(lockf).read() if os.path.exists(lockf) else ""
check('name = "helper"' in text, "the lock has the sdist's install_requires (helper):\n" + text)
check('dynpkg-1.0.tar.gz' in text, "the lock names the sdist:\n" + text)
n1 = runs("dynpkg")
check(n1 > 0, "the build backend was asked (setup.py ran %d times)" % n1)
check(meta_logs() and meta_logs()[0].startswith("dynpkg-1.0-metadata-"), "the metadata build has its log: %r"
      % meta_logs())
cached = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(CACHE, "sdist-meta")) for f in fs]
check(len(cached) == 1 and "Requires-Dist: helper" in open(cached[0]).read(),
      "the answer is cached by the sdist's sha256: %r" % cached)

# ---- a re-lock runs no hook ----------------------------------------------

os.remove(lockf)
t0 = time.monotonic()
rc, out, err = lock(APP)
warm = time.monotonic() - t0
check(rc == 0 and runs("dynpkg") == n1, "a re-lock does not ask the backend again: exit %d, setup.py ran %d "
      "more times\n%s%s" % (rc, runs("dynpkg") - n1, out, err))
check(open(lockf).read() == text if os.path.exists(lockf) else False, "the re-lock writes the same lock")
print("figures: lock with one dynamic sdist: cold %.2f s, warm %.2f s" % (cold, warm))

# ---- sync builds and installs it ---------------------------------------

VENV = os.path.join(TMP, "venv")
rc, out, err = run("sync", "--project", APP, "--venv", VENV, "--python", PY, "--index-url", SIMPLE,
                   "--cache-dir", CACHE)
check(rc == 0, "sync builds and installs the sdist: exit %d\n%s%s" % (rc, out, err))
p = subprocess.run([os.path.join(VENV, "bin", "python"), "-c", "import dynpkg; print(dynpkg.VALUE)"],
                   capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.strip() == "dynpkg 1.0", "the built sdist imports: %s%s"
      % (p.stdout, p.stderr))

# ---- PEP 517's fallback: the wheel's METADATA --------------------------

FB = project("fbapp", ["fbpkg"])
rc, out, err = lock(FB)
text = open(os.path.join(FB, "pylock.cpu.toml")).read() if rc == 0 else ""
check(rc == 0 and 'name = "helper"' in text, "a backend without prepare_metadata_for_build_wheel: its "
      "wheel's dependencies: exit %d\n%s%s%s" % (rc, out, err, text))
check(runs("fbpkg") == 1, "the fallback built the wheel once: %d" % runs("fbpkg"))

# ---- bad input -----------------------------------------------------------

BAD = project("bad", ["dynfail"])
rc, out, err = lock(BAD)
check(rc == 1, "a failing metadata hook exits 1: %d\n%s" % (rc, err))
check("dynfail 1.0" in err and "fixture metadata failure" in err, "the error names the package and why:\n" + err)
check("build-logs/dynfail-1.0-metadata-" in err, "the error names the log:\n" + err)
check(not os.path.exists(os.path.join(BAD, "pylock.cpu.toml")), "no lock is written")

HANG = project("hang", ["dynhang"])
t0 = time.monotonic()
rc, out, err = lock(HANG, "--build-timeout", "5")
took = time.monotonic() - t0
check(rc == 1 and "dynhang 1.0" in err and "limit of 5 s" in err, "a hanging hook is stopped: exit %d\n%s"
      % (rc, err))
check(took < 120, "the hanging hook was stopped in time (%.1f s)" % took)
check("build-logs/dynhang-1.0-metadata-" in err, "the hang names the log:\n" + err)
rc, out, err = lock(HANG, "--build-timeout", "0")
check(rc == 2 and "--build-timeout" in err, "--build-timeout 0 is a usage error: %d %s" % (rc, err))

NOTAR = project("notarapp", ["notar"])
rc, out, err = lock(NOTAR)
check(rc == 4 and "notar-1.0.tar.gz" in err, "an sdist that is not a tarball: exit %d\n%s" % (rc, err))

for name, word in (("dynother", "otherpkg"), ("dynver", "2.0")):
    P = project(name + "app", [name])
    rc, out, err = lock(P)
    check(rc == 1 and "%s 1.0" % name in err and word in err and "another" in err,
          "metadata naming another %s is refused: exit %d\n%s" % ("project" if word == "otherpkg" else "version",
                                                                   rc, err))
    check(not os.path.exists(os.path.join(P, "pylock.cpu.toml")), "no lock for %s" % name)
check(len([f for dp, _, fs in os.walk(os.path.join(CACHE, "sdist-meta")) for f in fs]) == 2,
      "only the good answers are cached")

if failures:
    print("%d failure(s); kept %s" % (len(failures), TMP))
    sys.exit(1)
shutil.rmtree(TMP, ignore_errors=True)
print("ok")
