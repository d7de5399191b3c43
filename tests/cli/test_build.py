"""Source builds (docs/build.md): sdists and source trees a lock names, built
by gpuenv sync through PEP 517 in build venvs gpuenv makes, against a fixture
index whose build backend is Debian's setuptools and wheel wheels
(/usr/share/python-wheels, python3-setuptools-whl / python3-wheel-whl):

  - a pure-Python sdist (setuptools, pyproject.toml) and an sdist with a C
    extension and no pyproject.toml (PEP 517's legacy default) lock, build and
    install; `pip check` is clean; the extension imports and runs;
  - a second sync into a fresh venv reuses the cached builds (no hook runs:
    the build log is not written again); a changed build setting
    (TORCH_CUDA_ARCH_LIST) rebuilds and reinstalls;
  - a failing build exits 1 with the end of its log and the log's path; an
    sdist with a member that climbs out of its folder is refused;
  - a build that imports a package of the target environment fails isolated
    and builds with [tool.gpuenv] build-against-env, after the rest of the
    lock is installed (two rounds);
  - the project's own package is locked as an editable `directory` entry and
    installed editable (PEP 660): it imports, an edit of its source shows
    without a sync; --no-install-project leaves it out; a non-editable
    `directory` entry of another lock builds too;
  - the hook runner's protocol: a backend without build_editable, an
    in-tree backend through backend-path.
"""
import glob
import gzip
import io
import json
import re
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402
from piptool import find_pip  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-build-test-")
CACHE = os.path.join(TMP, "cache")
WHEELS = "/usr/share/python-wheels"
PYXY = "3.11"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def find_python():
    """Debian's CPython 3.11 with its headers (the C extension needs
    Python.h) and its distutils: Debian's setuptools wheel carries Debian's
    install_layout patch, which needs Debian's distutils
    (SETUPTOOLS_USE_DISTUTILS=stdlib, as Debian runs it)."""
    py = "/usr/bin/python3.11"
    if os.path.exists(py) and os.path.exists("/usr/include/python3.11/Python.h") and \
            os.path.exists("/usr/lib/python3.11/distutils/command/install.py"):
        return py
    return None


PY = find_python()
SETUPTOOLS = os.path.join(WHEELS, "setuptools-66.1.1-py3-none-any.whl")
WHEEL = os.path.join(WHEELS, "wheel-0.38.4-py3-none-any.whl")
if not PY or not os.path.exists(SETUPTOOLS) or not os.path.exists(WHEEL) or not shutil.which("gcc"):
    print("SKIP: needs Debian's CPython 3.11 with Python.h and distutils, gcc, python3-setuptools-whl and python3-wheel-whl")
    sys.exit(77)


def run(*args, env=None, timeout=600):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    e.pop("TORCH_CUDA_ARCH_LIST", None)
    e["SETUPTOOLS_USE_DISTUTILS"] = "stdlib"
    e.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def sdist(outdir, name, version, members, requires=(), raw_names=False):
    """<name>-<version>.tar.gz with PKG-INFO (Metadata-Version 2.2, static)
    and the given members {path: text} (raw_names: paths as they are, not
    under the top-level folder)."""
    base = "%s-%s" % (mkwheel.dist_part(name), version)
    md = mkwheel.metadata_text(name, version, requires, None, None, None, "2.2")
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        for p, d in [("PKG-INFO", md)] + sorted(members.items()):
            d = d.encode()
            ti = tarfile.TarInfo(p if raw_names and p != "PKG-INFO" else "%s/%s" % (base, p))
            ti.size, ti.mtime, ti.mode = len(d), 0, 0o644
            t.addfile(ti, io.BytesIO(d))
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, base + ".tar.gz")
    with open(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
            g.write(raw.getvalue())
    return mkwheel.Dist(path, name, version, "sdist", md.encode())


def wheel_dist(path):
    import zipfile
    name, version = os.path.basename(path).split("-")[:2]
    with zipfile.ZipFile(path) as z:
        md = z.read("%s-%s.dist-info/METADATA" % (name, version))
    stage = os.path.join(TMP, "stage")
    os.makedirs(stage, exist_ok=True)
    dest = os.path.join(stage, os.path.basename(path))
    shutil.copy(path, dest)
    return mkwheel.Dist(dest, name, version, "wheel", md)


PYPROJECT = ('[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
             '[project]\nname = "%s"\nversion = "%s"\ndependencies = [%s]\n')
CEXT_C = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b + ARCH_BONUS);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&mod); }
"""
# the extension's answer shows which TORCH_CUDA_ARCH_LIST it was built with
CEXT_SETUP = r"""
import os
from setuptools import setup, Extension
bonus = "1000" if os.environ.get("TORCH_CUDA_ARCH_LIST") else "0"
setup(name="cext", version="1.0", packages=["cext"],
      ext_modules=[Extension("cext._speed", ["cext/_speed.c"], define_macros=[("ARCH_BONUS", bonus)])])
"""

INDEX = os.path.join(TMP, "index")
stage = os.path.join(TMP, "stage")
dists = [wheel_dist(SETUPTOOLS), wheel_dist(WHEEL)]
dists.append(mkwheel.make_wheel(stage, "helper", "1.0"))
dists.append(sdist(stage, "purepkg", "1.0", {
    "pyproject.toml": PYPROJECT % ("purepkg", "1.0", '"helper"'),
    "purepkg/__init__.py": 'import helper\nVALUE = "pure 1.0"\n'}, requires=["helper"]))
dists.append(sdist(stage, "cext", "1.0", {
    "setup.py": CEXT_SETUP, "cext/__init__.py": "from ._speed import add\n", "cext/_speed.c": CEXT_C}))
dists.append(sdist(stage, "broken", "1.0", {
    "pyproject.toml": PYPROJECT % ("broken", "1.0", ""),
    "setup.py": 'import sys\nsys.stderr.write("broken: this package refuses to build (fixture)\\n")\n'
                'raise SystemExit("fixture build failure")\n'}))
# a build that imports a package of the target environment (as flash-attn's
# imports torch): fails isolated, builds with [tool.gpuenv] build-against-env
dists.append(sdist(stage, "needsenv", "1.0", {
    "setup.py": 'import helper  # the target environment\'s\nfrom setuptools import setup\n'
                'setup(name="needsenv", version="1.0", packages=["needsenv"])\n',
    "needsenv/__init__.py": "import helper\nOK = True\n"}, requires=["helper"]))
# an sdist with a member that climbs out of its folder
dists.append(sdist(stage, "evil", "1.0", {"evil-1.0/setup.py": "from setuptools import setup\nsetup()\n",
                                          "evil-1.0/../../escaped.txt": "out\n"}, raw_names=True))
mkwheel.write_index(INDEX, dists)
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"


def project(name, deps, build_system=True, files=None, tool=""):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    text = tool
    if build_system:
        text += '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
    text += '[project]\nname = "%s"\nversion = "0.3"\ndependencies = [%s]\n' % (
        name, ", ".join('"%s"' % x for x in deps))
    text += '\n[tool.gpuenv.targets.cpu]\ngpu = "none"\npython = "%s"\nplatform = "%s"\n' % (PYXY, mkwheel.platform_tag())
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write(text)
    for p, t in (files or {}).items():
        os.makedirs(os.path.dirname(os.path.join(d, p)), exist_ok=True)
        with open(os.path.join(d, p), "w") as f:
            f.write(t)
    return d


def sync(proj, venv, *extra, env=None):
    return run("sync", "--project", proj, "--venv", venv, "--python", PY, "--index-url", SIMPLE,
               "--cache-dir", CACHE, *extra, env=env)


def vpy(venv, code):
    p = subprocess.run([os.path.join(venv, "bin", "python"), "-c", code], capture_output=True, text=True)
    return p.returncode, p.stdout.strip() + p.stderr.strip()


PIP = find_pip()


def pip_check(venv):
    if not PIP:
        return True, "(no pip)"
    p = subprocess.run([PIP, "-m", "pip", "--python", os.path.join(venv, "bin", "python"),
                        "--disable-pip-version-check", "check"], capture_output=True, text=True)
    return p.returncode == 0, p.stdout + p.stderr


def logs():
    d = os.path.join(CACHE, "build-logs")
    return {f: os.stat(os.path.join(d, f)).st_mtime_ns for f in os.listdir(d)} if os.path.isdir(d) else {}


# ---- sdists: lock, build, install ------------------------------------------

APP = project("app", ["purepkg", "cext"], files={"app/__init__.py": 'GREETING = "hello 1"\n'})
V1 = os.path.join(TMP, "v1")
rc, out, err = sync(APP, V1, "--dry-run")
check(rc == 0 and "+ cext 1.0 (source build)" in out and "+ app 0.3 (editable build)" in out,
      "the dry run shows the builds: %s%s" % (out, err))
check(not logs(), "a dry run builds nothing")
rc, out, err = sync(APP, V1, "--json")
check(rc == 0, "sync with two sdists and the project: exit %d\n%s%s" % (rc, out, err))
lock = open(os.path.join(APP, "pylock.cpu.toml")).read()
check('[packages.sdist]' in lock or 'sdist = ' in lock, "the lock names sdists:\n" + lock)
check('directory = { path = ".", editable = true }' in lock, "the lock records the project editable:\n" + lock)
if rc == 0:
    j = json.loads(out)
    builds = {b["name"]: b for b in j["builds"]}
    check(set(builds) == {"purepkg", "cext", "app"}, "three builds: %r" % sorted(builds))
    check(all(not b["cached"] for b in builds.values()), "first builds are not cached")
    check(builds.get("app", {}).get("editable") is True, "the project is built editable")
    check(all(b["log"] and os.path.exists(b["log"]) for b in builds.values()), "every build has its log")
rc2, o2 = vpy(V1, "import purepkg, cext, app; print(purepkg.VALUE, cext.add(2, 3), app.GREETING)")
check(rc2 == 0 and o2 == "pure 1.0 5 hello 1", "the built packages import and run: " + o2)
ok, msg = pip_check(V1)
check(ok, "pip check after the source builds: " + msg)
# editable: an edit shows without a sync
with open(os.path.join(APP, "app", "__init__.py"), "w") as f:
    f.write('GREETING = "hello 2"\n')
rc2, o2 = vpy(V1, "import app; print(app.GREETING)")
check(rc2 == 0 and o2 == "hello 2", "the editable install shows the edit: " + o2)
du = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(V1, "lib")) for f in fs
      if f == "direct_url.json" and "app-0.3" in dp]
check(du and json.load(open(du[0])).get("dir_info", {}).get("editable") is True,
      "the editable install has PEP 610's direct_url.json with dir_info.editable: %r" % du)

# ---- a second sync is a no-op; a fresh venv reuses the build cache ---------

before = logs()
rc, out, err = sync(APP, V1)
check(rc == 0 and "already match" in out, "a second sync changes nothing: %s%s" % (out, err))
V2 = os.path.join(TMP, "v2")
rc, out, err = sync(APP, V2, "--json")
check(rc == 0, "sync into a fresh venv: %s%s" % (out, err))
if rc == 0:
    builds = {b["name"]: b for b in json.loads(out)["builds"]}
    check(all(b["cached"] for b in builds.values()), "the fresh venv's builds come from the cache: %r" % builds)
check(logs() == before, "no hook ran (no build log was written)")
rc2, o2 = vpy(V2, "import purepkg, cext; print(cext.add(1, 1))")
check(rc2 == 0 and o2 == "2", "the cached builds import: " + o2)

# ---- a changed build setting rebuilds ---------------------------------------

rc, out, err = sync(APP, V1, "--json", env={"TORCH_CUDA_ARCH_LIST": "9.0"})
check(rc == 0, "sync with TORCH_CUDA_ARCH_LIST: %s%s" % (out, err))
if rc == 0:
    j = json.loads(out)
    builds = {b["name"]: b for b in j["builds"]}
    check("cext" in builds and not builds["cext"]["cached"], "cext is built again: %r" % builds)
    plan = {a["name"]: a["action"] for a in j["plan"]}
    check(plan.get("cext") == "reinstall", "cext is reinstalled: %r" % plan)
rc2, o2 = vpy(V1, "import cext; print(cext.add(2, 3))")
check(rc2 == 0 and o2 == "1005", "the rebuilt extension has the new setting: " + o2)
rc, out, err = sync(APP, V1, env={"TORCH_CUDA_ARCH_LIST": "9.0"})
check(rc == 0 and "already match" in out, "the same setting again changes nothing: %s%s" % (out, err))

# ---- --no-install-project ---------------------------------------------------

V3 = os.path.join(TMP, "v3")
rc, out, err = sync(APP, V3, "--no-install-project", "--json")
check(rc == 0, "--no-install-project: %s%s" % (out, err))
rc2, o2 = vpy(V3, "import purepkg\ntry:\n import app\n print('app there')\nexcept ImportError:\n print('no app')")
check(rc2 == 0 and o2 == "no app", "--no-install-project leaves the project out: " + o2)
rc, out, err = sync(APP, V1, "--no-install-project")
rc2, o2 = vpy(V1, "try:\n import app\n print('app there')\nexcept ImportError:\n print('no app')")
check(rc == 0 and o2 == "no app", "--no-install-project removes an installed project: %s %s%s" % (o2, out, err))

# ---- a failing build ------------------------------------------------------

BAD = project("bad", ["broken"], build_system=False)
rc, out, err = sync(BAD, os.path.join(TMP, "vbad"))
check(rc == 1, "a failing build exits 1: %d\n%s" % (rc, err))
check("fixture build failure" in err and "refuses to build" in err, "the log's end is shown:\n" + err)
check("build-logs/broken-1.0-" in err, "the log's path is named:\n" + err)

# ---- a hostile sdist is refused before anything runs -----------------------

EVIL = project("evilproj", ["evil"], build_system=False)
rc, out, err = sync(EVIL, os.path.join(TMP, "vevil"))
check(rc == 1 and "leaves the archive's folder" in err, "an sdist member climbing out is refused: %d %s" % (rc, err))
check(not glob.glob(os.path.join(CACHE, "**", "escaped.txt"), recursive=True) and
      not os.path.exists(os.path.join(CACHE, "escaped.txt")) and not os.path.exists(os.path.join(TMP, "escaped.txt")),
      "nothing was written outside the build folder")

# ---- a build that imports the target's environment: isolated it fails, ------
# ---- with build-against-env it builds after the rest is installed -----------

ISO = project("iso", ["needsenv"], build_system=False)
rc, out, err = sync(ISO, os.path.join(TMP, "viso"))
check(rc == 1 and "No module named 'helper'" in err, "an isolated build cannot import the target's packages: %d %s"
      % (rc, err[-600:]))
AGAINST = project("against", ["needsenv", "setuptools", "wheel"], build_system=False,
                  tool='[tool.gpuenv]\nbuild-against-env = ["needsenv"]\n\n')
VA = os.path.join(TMP, "vagainst")
rc, out, err = sync(AGAINST, VA, "--json")
check(rc == 0, "build-against-env builds against the venv: %s%s" % (out, err[-1500:]))
if rc == 0:
    b = json.loads(out)["builds"]
    check(len(b) == 1 and b[0]["name"] == "needsenv" and b[0]["isolated"] is False, "one build, not isolated: %r" % b)
    log = open(b[0]["log"]).read()
    check("no isolation" in log and VA in log, "the log says it ran against the venv")
rc2, o2 = vpy(VA, "import needsenv; print(needsenv.OK)")
check(rc2 == 0 and o2 == "True", "the package built against the venv imports: " + o2)
ok, msg = pip_check(VA)
check(ok, "pip check after a build against the venv: " + msg)
rc, out, err = sync(AGAINST, VA)
check(rc == 0 and "already match" in out, "a second sync keeps it: %s%s" % (out, err))

# ---- a directory entry that is not editable (the lock edited as another ---
# ---- tool would write it): built with build_wheel, rebuilt when it changes --

LIB = project("libdir", [], files={"libdir/__init__.py": "X = 42\n"})
rc, out, err = run("lock", "--project", LIB, "--index-url", SIMPLE, "--cache-dir", CACHE)
check(rc == 0, "lock libdir: %s%s" % (out, err))
lp = os.path.join(LIB, "pylock.cpu.toml")
text = open(lp).read()
check('directory = { path = ".", editable = true }' in text, "libdir locked editable:\n" + text)
with open(lp, "w") as f:
    f.write(text.replace('directory = { path = ".", editable = true }', 'directory = { path = "." }'))
VL = os.path.join(TMP, "vlib")
rc, out, err = sync(LIB, VL, "--locked", "--json")
check(rc == 0, "sync a non-editable directory entry: %s%s" % (out, err))
if rc == 0:
    b = json.loads(out)["builds"]
    check(len(b) == 1 and b[0]["source"] == "directory" and not b[0]["editable"], "one tree build: %r" % b)
rc2, o2 = vpy(VL, "import libdir; print(libdir.X, libdir.__file__)")
check(rc2 == 0 and o2.startswith("42 " + VL), "the tree is installed as a wheel (a copy in the venv): " + o2)
with open(os.path.join(LIB, "libdir", "__init__.py"), "w") as f:
    f.write("X = 43\n")
rc2, o2 = vpy(VL, "import libdir; print(libdir.X)")
check(o2 == "42", "a non-editable install does not follow the tree: " + o2)
rc, out, err = sync(LIB, VL, "--locked", "--json")
plan = {a["name"]: a["action"] for a in json.loads(out)["plan"]} if rc == 0 else {}
check(plan.get("libdir") == "reinstall", "a changed tree is built again: %r %s" % (plan, err))
rc2, o2 = vpy(VL, "import libdir; print(libdir.X)")
check(o2 == "43", "the rebuilt tree is installed: " + o2)

# ---- an sdist given as a PEP 751 archive entry (a direct URL, as another ----
# ---- tool locks `pkg @ https://.../pkg-1.0.tar.gz`): built, not unzipped ----

ARC = project("arcapp", ["purepkg"], build_system=False)
rc, out, err = run("lock", "--project", ARC, "--index-url", SIMPLE, "--cache-dir", CACHE)
check(rc == 0, "lock arcapp: %s%s" % (out, err))
ap = os.path.join(ARC, "pylock.cpu.toml")
text = open(ap).read()
m = re.search(r'^sdist = \{ name = "[^"]+", (.*)$', text, re.M)
check(m is not None, "purepkg locked as an sdist:\n" + text)
if m:
    with open(ap, "w") as f:
        f.write(text.replace(m.group(0), "archive = { " + m.group(1)))
    VA = os.path.join(TMP, "varc")
    rc, out, err = sync(ARC, VA, "--locked", "--json")
    check(rc == 0, "sync an sdist archive entry: %s%s" % (out, err))
    if rc == 0:
        b = json.loads(out)["builds"]
        check(len(b) == 1 and b[0]["name"] == "purepkg", "the archive is built: %r" % b)
    rc2, o2 = vpy(VA, "import purepkg; print(purepkg.VALUE)")
    check(rc2 == 0 and o2 == "pure 1.0", "the built archive imports: " + o2)
    du = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(VA, "lib")) for f in fs
          if f == "direct_url.json" and "purepkg-1.0" in dp]
    check(du and "archive_info" in json.load(open(du[0])), "PEP 610 archive_info for the archive: %r" % du)

# ---- an in-tree backend (backend-path) without build_editable ---------------

BACKEND = r"""
import base64, hashlib, os, zipfile

def _h(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    print("intree backend: building")
    files = {"tinyb/__init__.py": open("tinyb/__init__.py", "rb").read(),
             "tinyb-0.3.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinyb\nVersion: 0.3\n",
             "tinyb-0.3.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: intree\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join("%s,%s,%d\n" % (p, _h(d), len(d)) for p, d in files.items()) + "tinyb-0.3.dist-info/RECORD,,\n"
    name = "tinyb-0.3-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for p, d in files.items():
            z.writestr(p, d)
        z.writestr("tinyb-0.3.dist-info/RECORD", record)
    return name
"""
TB = project("tinyb", [], build_system=False, files={"tinyb/__init__.py": "Y = 7\n",
                                                     "_backend/intree.py": BACKEND})
with open(os.path.join(TB, "pyproject.toml")) as f:
    t = f.read()
with open(os.path.join(TB, "pyproject.toml"), "w") as f:
    f.write('[build-system]\nrequires = []\nbuild-backend = "intree"\nbackend-path = ["_backend"]\n\n' + t)
VT = os.path.join(TMP, "vtiny")
rc, out, err = sync(TB, VT)
check(rc == 1 and "no PEP 660 build_editable hook" in err and "--no-install-project" in err,
      "a backend without build_editable says so: %d %s" % (rc, err))
tl = os.path.join(TB, "pylock.cpu.toml")
with open(tl) as f:
    t = f.read()
with open(tl, "w") as f:
    f.write(t.replace('directory = { path = ".", editable = true }', 'directory = { path = "." }'))
rc, out, err = sync(TB, VT, "--locked", "--json")
check(rc == 0, "the in-tree backend builds the tree: %s%s" % (out, err))
rc2, o2 = vpy(VT, "import tinyb; print(tinyb.Y)")
check(rc2 == 0 and o2 == "7", "the in-tree backend's wheel imports: " + o2)
if rc == 0:
    log = json.loads(out)["builds"][0]["log"]
    check("intree backend: building" in open(log).read(), "the backend's output is in the log")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
shutil.rmtree(TMP, ignore_errors=True)
