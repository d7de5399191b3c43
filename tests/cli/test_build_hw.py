"""The target's hardware in source builds (docs/build.md, "The target's
hardware"), through `gpuenv sync` against fixture indexes: Debian's
setuptools and wheel wheels for the build backend, a fake torch 2.11.0+cu130
(a module that says its CUDA is 13.0) on a PyTorch-shaped index, and sdists
built by the tests:

  - `needsenv`, whose setup.py imports torch (as flash-attn's does) and
    writes the build's environment to a file: listed in `[tool.gpuenv]
    build-against-env` it builds against the target venv with torch already
    installed, with CUDA_HOME = CUDA_PATH = the real CUDA 13.0 toolkit in
    /usr/local/cuda (its bin first on PATH: `nvcc --version` says 13.0),
    TORCH_CUDA_ARCH_LIST of the target's GPU (an H200: 9.0; several
    targets sharing a build, "8.0;8.6", are the unit test's), NVCC_THREADS
    and MAX_JOBS; its setup.py compiles a kernel with that nvcc for those
    architectures;
  - the same sdist built with isolation fails, and the error says why
    (diagnose's build-isolation-no-torch, its fix naming build-against-env);
  - a machine whose facts show no CUDA toolkit, or only a CUDA 12.1 one,
    fails before building with a message naming what is missing and what
    would fit (both versions);
  - `cudaext`, an isolated sdist that needs CUDA_HOME as torch's
    cpp_extension does: with no toolkit that fits it builds without CUDA
    variables, fails, and the error carries the toolkit problem and
    diagnose's cause and fix.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-buildhw-test-")
WHEELS = "/usr/share/python-wheels"
PY = "/usr/bin/python3.11"
PYXY = "3.11"
SETUPTOOLS = os.path.join(WHEELS, "setuptools-66.1.1-py3-none-any.whl")
WHEEL = os.path.join(WHEELS, "wheel-0.38.4-py3-none-any.whl")
NVCC = "/usr/local/cuda/bin/nvcc"
if not os.path.exists(PY) or not os.path.exists(SETUPTOOLS) or not os.path.exists(WHEEL) or \
        not os.path.exists("/usr/lib/python3.11/distutils/command/install.py"):
    print("SKIP: needs Debian's CPython 3.11 with distutils, python3-setuptools-whl and python3-wheel-whl")
    sys.exit(77)
HAVE_NVCC = os.access(NVCC, os.X_OK)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None, timeout=900):
    e = dict(os.environ)
    for k in ("VIRTUAL_ENV", "TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "NVCC_THREADS", "CUDA_HOME", "CUDA_PATH"):
        e.pop(k, None)
    e["SETUPTOOLS_USE_DISTUTILS"] = "stdlib"  # Debian's setuptools wheel wants Debian's distutils
    e["GPUENV_TEST_OUT"] = OUT
    e.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


platform_tag = mkwheel.platform_tag

OUT = os.path.join(TMP, "out")
os.makedirs(OUT)
STAGE = os.path.join(TMP, "stage")

# ---- the indexes --------------------------------------------------------------

# torch 2.11.0+cu130 on a PyTorch-shaped index (<torch-index>/cu130/)
TORCH_INIT = '__version__ = "2.11.0+cu130"\nclass version:\n    cuda = "13.0"\n'
torch = mkwheel.make_wheel(STAGE, "torch", "2.11.0+cu130", tags="cp311-cp311-" + platform_tag(),
                           files={"torch/__init__.py": TORCH_INIT})
TORCH_ROOT = os.path.join(TMP, "torchidx")
cu130 = os.path.join(TORCH_ROOT, "cu130")
mkwheel.write_index(TORCH_ROOT, [torch], pages=cu130, files=cu130)

# the build's own environment, as the build sees it, and a kernel compiled
# for TORCH_CUDA_ARCH_LIST with the nvcc on PATH (torch's cpp_extension
# makes -gencode=arch=compute_XY,code=sm_XY of each entry)
ENV_REPORT = r'''
import json, os, shutil, subprocess
def report(name):
    env = {k: os.environ.get(k) for k in ("CUDA_HOME", "CUDA_PATH", "TORCH_CUDA_ARCH_LIST", "MAX_JOBS",
                                          "NVCC_THREADS")}
    env["PATH"] = os.environ.get("PATH", "").split(":")
    nvcc = shutil.which("nvcc")
    env["nvcc"] = nvcc
    if nvcc:
        env["nvcc_version"] = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        archs = (os.environ.get("TORCH_CUDA_ARCH_LIST") or "").split(";")
        if archs != [""]:
            with open("k.cu", "w") as f:
                f.write("__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n")
            cmd = [nvcc, "-c", "k.cu", "-o", "k.o"]
            for a in archs:
                n = a.replace(".", "")
                cmd.append("-gencode=arch=compute_%s,code=sm_%s" % (n, n))
            p = subprocess.run(cmd, capture_output=True, text=True)
            env["nvcc_compile"] = [p.returncode, p.stderr[-2000:], cmd]
    with open(os.path.join(os.environ["GPUENV_TEST_OUT"], name + ".json"), "w") as f:
        json.dump(env, f)
'''
NEEDSENV_SETUP = ENV_REPORT + r'''
import torch  # flash-attn's setup.py does this: the build needs the target's torch
print("building against torch", torch.__version__, "for CUDA", torch.version.cuda)
report("needsenv")
from setuptools import setup
setup(name="needsenv", version="1.0", packages=["needsenv"])
'''
# like torch's _join_cuda_home: no CUDA_HOME, no CUDA extension
CUDAEXT_SETUP = ENV_REPORT + r'''
import os
report("cudaext")
if not os.environ.get("CUDA_HOME"):
    raise OSError("CUDA_HOME environment variable is not set. Please set it to your CUDA install root.")
from setuptools import setup
setup(name="cudaext", version="1.0", packages=["cudaext"])
'''
LEGACY = {"pyproject.toml": ""}  # no [build-system]: setup.py through PEP 517's legacy backend
dists = [mkwheel.Dist(SETUPTOOLS, "setuptools", "66.1.1", "wheel", b""),
         mkwheel.Dist(WHEEL, "wheel", "0.38.4", "wheel", b"")]
for d in dists:  # the index wants their METADATA beside them (PEP 658)
    import zipfile
    with zipfile.ZipFile(d.path) as z:
        d.metadata = z.read("%s-%s.dist-info/METADATA" % (d.name, d.version))
    dest = os.path.join(STAGE, os.path.basename(d.path))
    os.makedirs(STAGE, exist_ok=True)
    shutil.copy(d.path, dest)
    d.path = dest
dists.append(mkwheel.make_sdist(STAGE, "needsenv", "1.0", files=dict(LEGACY, **{"setup.py": NEEDSENV_SETUP})))
dists.append(mkwheel.make_sdist(STAGE, "cudaext", "1.0", files=dict(LEGACY, **{"setup.py": CUDAEXT_SETUP})))
INDEX = os.path.join(TMP, "index")
mkwheel.write_index(INDEX, dists)
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"


def project(name, deps, gpus, against=()):
    """A project with one GPU target, 'gpu', locked to torch's cu130 build."""
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    text = '[project]\nname = "%s"\nversion = "0.1"\ndependencies = [%s]\n\n' % (
        name, ", ".join('"%s"' % x for x in deps))
    text += '[tool.gpuenv]\ntorch-index = "file://%s"\n' % TORCH_ROOT
    if against:
        text += "build-against-env = [%s]\n" % ", ".join('"%s"' % x for x in against)
    text += ('\n[tool.gpuenv.targets.gpu]\n%s\ndriver = "580.95.05"\npython = "%s"\nplatform = "%s"\n'
             'torch-backend = "cu130"\n' % (gpus, PYXY, platform_tag()))
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write(text)
    return d


def sync(proj, venv, *extra, env=None):
    return run("sync", "--project", proj, "--target", "gpu", "--venv", os.path.join(TMP, venv), "--python", PY,
               "--index-url", SIMPLE, "--cache-dir", os.path.join(TMP, "cache-" + venv), *extra, env=env)


def report(name):
    p = os.path.join(OUT, name + ".json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        r = json.load(f)
    os.unlink(p)
    return r


def facts_with(toolkits):
    """The H200 snapshot with other toolkits: this machine as --facts says it is."""
    with open(os.path.join(SRC, "tests", "fixtures", "doctor", "h200-2026-11-29", "facts.json")) as f:
        d = json.load(f)
    d["toolkits"] = toolkits
    p = os.path.join(TMP, "facts-%d.json" % len(os.listdir(TMP)))
    with open(p, "w") as f:
        json.dump(d, f)
    return p


# ---- build-against-env: torch installed first, the toolkit, the arch list -----

APP = project("app", ["torch", "setuptools", "wheel", "needsenv"], 'gpu = "H200"', against=["needsenv"])
rc, out, err = sync(APP, "v1")
check(rc == 0, "sync with needsenv built against the venv: exit %d\n%s%s" % (rc, out, err))
r = report("needsenv")
check(r is not None, "needsenv's setup.py ran and reported its environment")
if r and HAVE_NVCC:
    check(r["CUDA_HOME"] == "/usr/local/cuda" and r["CUDA_PATH"] == "/usr/local/cuda",
          "CUDA_HOME and CUDA_PATH are the CUDA 13.0 toolkit: %r" % r)
    check(r["TORCH_CUDA_ARCH_LIST"] == "9.0", "the H200 target's arch list: %r" % r["TORCH_CUDA_ARCH_LIST"])
    check(r["NVCC_THREADS"] == "1", "one architecture, one nvcc thread: %r" % r["NVCC_THREADS"])
    jobs = int(r["MAX_JOBS"] or 0)
    check(1 <= jobs <= (os.cpu_count() or 1), "MAX_JOBS from the CPUs and memory: %r" % r["MAX_JOBS"])
    check(r["nvcc"] == "/usr/local/cuda/bin/nvcc" and "release 13.0" in r.get("nvcc_version", ""),
          "nvcc on the build's PATH is the toolkit's: %r" % r["nvcc"])
    rc2, msg, cmd = r.get("nvcc_compile", [1, "not compiled", []])
    check(rc2 == 0, "nvcc compiled a kernel for TORCH_CUDA_ARCH_LIST (%s): %s" % (" ".join(cmd), msg))
vpy = os.path.join(TMP, "v1", "bin", "python")
p = subprocess.run([vpy, "-c", "import torch, needsenv; print(torch.version.cuda)"], capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.strip() == "13.0", "torch and needsenv import: %s%s" % (p.stdout, p.stderr))

# a second sync changes nothing; --reinstall takes both rounds again, the
# build from the build cache
rc, out, err = sync(APP, "v1")
check(rc == 0 and "already match" in out, "a second sync changes nothing: %s%s" % (out, err))
rc, out, err = sync(APP, "v1", "--reinstall", "--json")
check(rc == 0, "--reinstall: %s%s" % (out, err))
if rc == 0:
    j = json.loads(out)
    b = {x["name"]: x for x in j["builds"]}
    check("needsenv" in b and b["needsenv"]["cached"] and not b["needsenv"]["isolated"],
          "needsenv comes from the build cache, built against the venv: %r" % j["builds"])
    check(j["counts"]["upgrade"] == 4, "all four packages reinstalled once: %r" % j["counts"])
check(report("needsenv") is None, "the cached build ran no hook")

# ---- the same sdist with isolation: torch is not there, and diagnose says why --

ISO = project("iso", ["torch", "needsenv"], 'gpu = "H200"')
rc, out, err = sync(ISO, "v2")
check(rc == 1, "an isolated build that imports torch fails: exit %d\n%s" % (rc, err))
check("No module named 'torch'" in err, "the log's end shows the import error:\n" + err)
check("build-isolation" in err or "build isolation" in err, "diagnose's cause is in the error:\n" + err)
check("build-against-env" in err, "the fix names build-against-env:\n" + err)

# ---- no toolkit, or one of another CUDA major: named before building ---------

rc, out, err = sync(APP, "v3", "--facts", facts_with([]))
check(rc == 1, "no toolkit: exit %d\n%s%s" % (rc, out, err))
check("no CUDA toolkit found" in err and "CUDA 13.0" in err and "cuda-toolkit-13-0" in err,
      "no toolkit: what is missing and what would fit:\n" + err)
check(report("needsenv") is None, "nothing was built without a toolkit")

FAKE = os.path.join(TMP, "cuda-12.1")
os.makedirs(os.path.join(FAKE, "bin"))
with open(os.path.join(FAKE, "bin", "nvcc"), "w") as f:
    f.write("#!/bin/sh\necho 'Cuda compilation tools, release 12.1, V12.1.105'\n")
os.chmod(os.path.join(FAKE, "bin", "nvcc"), 0o755)
tk121 = {"path": FAKE, "realpath": FAKE, "aliases": [], "found_by": ["CUDA_HOME"],
         "version": {"version": "12.1.105", "source": "version.json", "from": FAKE + "/version.json"},
         "nvcc": FAKE + "/bin/nvcc", "nvcc_version": None, "lib_dir": None, "include_dir": None,
         "components": {}}
rc, out, err = sync(APP, "v4", "--facts", facts_with([tk121]))
check(rc == 1, "a CUDA 12.1 toolkit for a cu130 lock: exit %d\n%s%s" % (rc, out, err))
check("12.1.105" in err and "CUDA 13.0" in err and FAKE in err, "both versions are named:\n" + err)

# ---- an isolated CUDA build without a toolkit that fits: built without CUDA --
# ---- variables, it fails, and the error carries the toolkit problem and   ----
# ---- diagnose's cause and fix                                              ----

EXT = project("ext", ["torch", "cudaext"], 'gpu = "H200"')
rc, out, err = sync(EXT, "v5", "--facts", facts_with([tk121]))
check(rc == 1, "cudaext without a fitting toolkit fails: exit %d\n%s" % (rc, err))
r = report("cudaext")
check(r is not None and r["CUDA_HOME"] is None and r["TORCH_CUDA_ARCH_LIST"] is None and r["MAX_JOBS"],
      "it was built with MAX_JOBS and no CUDA variable: %r" % r)
check("12.1.105" in err and "13.0" in err, "the toolkit problem is in the error:\n" + err)
check("CUDA_HOME environment variable is not set" in err and "cause:" in err and "fix:" in err,
      "diagnose's cause and fix of the log are in the error:\n" + err)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
shutil.rmtree(TMP, ignore_errors=True)
