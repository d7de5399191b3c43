"""gpuenv lock takes the torch build from what the indexes offer, reads each
wheel's build from the wheel, and names what it locked (issue 21, items 1, 2
and 5), on fixture indexes built as company mirrors are (tests/fixtures/
mkwheel.py; served over HTTP by index_server.py where it matters):

  - a torch mirror without the knowledge base's favourite (cu130 for an
    H200 on driver 580): the best build there that runs is locked and the
    terminal and the lock say so; the plain CPU torch of the primary index
    is never taken;
  - a mirror with CPU builds only: a GPU target fails (exit 1, the previous
    lock untouched) naming the index and what it offers; a CPU target locks;
  - a primary index whose torch is a CUDA 12.8 build as PyPI's is (its
    requirement nvidia-cuda-runtime-cu12==12.8.90): an H200 locks it as
    cu128, a T4 on driver 470 is refused with the driver rule;
  - the plain CPU torch trap, whatever the sources: auto, a named backend
    whose index lacks torch, no torch index at all;
  - the satellite example: every reason names the locked release; the a100
    lock warns about its two cuDNN copies."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402
import mkwheel  # noqa: E402
import torch_index  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-lock-offer-")
X86 = "cp312-cp312-manylinux_2_28_x86_64"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def lock_of(project, target):
    with open(os.path.join(project, "pylock.%s.toml" % target), "rb") as f:
        return tomllib.load(f)


def pkgs(lk):
    return {p["name"]: p for p in lk["packages"]}


def torch_mirror(root, builds):
    """A torch index with torch and torchvision of each (version, tag) in
    builds, under root/whl/<tag>/ as download.pytorch.org lays them out."""
    stage = os.path.join(root, ".stage")
    by_tag = {}
    for version, tag in builds:
        vision = "0.%d.%s" % (int(version.split(".")[1]) + 15, version.split(".")[2])
        by_tag.setdefault(tag, []).extend([
            mkwheel.make_wheel(stage, "torch", "%s+%s" % (version, tag), tags=X86, requires=["filelock"]),
            mkwheel.make_wheel(stage, "torchvision", "%s+%s" % (vision, tag), tags=X86,
                               requires=["torch==" + version])])
    os.makedirs(os.path.join(root, "whl"), exist_ok=True)
    for tag, dists in by_tag.items():
        d = os.path.join(root, "whl", tag)
        mkwheel.write_index(root, dists, pages=d, files=d)
    return "file://" + os.path.join(root, "whl")


def primary(root, torch_reqs=None):
    """A PyPI-like index: filelock, numpy, and when torch_reqs is not None a
    plain torch 2.8.0 (and torchvision 0.23.0) requiring torch_reqs."""
    stage = os.path.join(root, ".stage")
    dists = [mkwheel.make_wheel(stage, "filelock", "3.16.1"), mkwheel.make_wheel(stage, "numpy", "2.2.6", tags=X86),
             mkwheel.make_wheel(stage, "nvidia-cuda-runtime-cu12", "12.8.90",
                                tags="py3-none-manylinux_2_28_x86_64")]
    if torch_reqs is not None:
        dists.append(mkwheel.make_wheel(stage, "torch", "2.8.0", tags=X86, requires=["filelock"] + torch_reqs))
        dists.append(mkwheel.make_wheel(stage, "torchvision", "0.23.0", tags=X86, requires=["torch==2.8.0"]))
    mkwheel.write_index(root, dists)
    return "file://" + os.path.join(root, "simple") + "/"


TARGETS = {
    "h200": 'gpu = "H200"\ndriver = "580.159.04"',
    "t4old": 'gpu = "T4"\ndriver = "470.82.01"',
    "cpu": 'gpu = "none"',
}


def project(name, targets, deps='"torch>=2.7", "torchvision", "numpy"', extra=""):
    d = os.path.join(TMP, "project-" + name)
    os.makedirs(d)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "%s"\nversion = "1.0"\nrequires-python = ">=3.10"\ndependencies = [%s]\n%s'
                % (name, deps, extra))
        for t in targets:
            f.write('\n[tool.gpuenv.targets.%s]\n%s\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n'
                    % (t, TARGETS[t]))
    return d


def lock(proj, torch, pypi, *extra):
    return run("lock", "--project", proj, "--index-url", pypi, "--torch-index", torch,
               "--cache-dir", os.path.join(TMP, "cache"), *extra)


# ---- a mirror without the KB's favourite (cu130) ------------------------------------------

MIRROR = torch_mirror(os.path.join(TMP, "mirror"), [("2.8.0", "cu126"), ("2.8.0", "cu128"), ("2.8.0", "cu129")])
TRAP = primary(os.path.join(TMP, "pypi-cpu-torch"), torch_reqs=[])  # the plain CPU torch
P = project("mirror", ["h200"])
proc, port = index_server.start(os.path.join(TMP, "mirror"), "--max-age", "0")
try:
    http_mirror = "http://127.0.0.1:%d/whl" % port
    rc, out, err = lock(P, http_mirror, TRAP)
    check(rc == 0, "mirror: h200 locks: %d %s%s" % (rc, out, err))
    if rc == 0:
        lk = lock_of(P, "h200")
        k, g = pkgs(lk), lk["tool"]["gpuenv"]
        tv = k["torch"]["version"]
        # 2.8's cu129 is experimental in the KB: cu128 is the best stable build there
        check(tv == "2.8.0+cu128", "mirror: the best offered build that runs, 2.8.0+cu128: %s" % tv)
        check(k["torchvision"]["version"] == "0.23.0+cu128", "mirror: torchvision of torch's build")
        check("/whl/cu128/" in k["torch"]["index"], "mirror: torch from the mirror's cu128 index")
        check(g["backend"] == "cu128", "mirror: [tool.gpuenv] backend is the locked build: %s" % g["backend"])
        br = g["backend-reason"]
        check("cu130 is not on" in br and http_mirror in br and "took 2.8.0+cu128" in br
              and "sm_90 with driver 580.159.04" in br,
              "mirror: the lock says cu130 is missing and what it took: %s" % br)
        check("torch 2.8.0+cu128 locked" in br and "2.14" not in br.split("\n")[1:],
              "mirror: the reason names the locked release: %s" % br)
        check("2.8.0+cu128" in k["torchvision"]["tool"]["gpuenv"]["reason"],
              "mirror: torchvision's reason names the locked torch")
        check("cu130 is not on" in out and "took 2.8.0+cu128" in out and "(build cu128" in out,
              "mirror: the terminal says so too: %s" % out)
finally:
    proc.terminate()
    proc.wait()

# ---- a mirror with CPU builds only ----------------------------------------------------------

CPUONLY = torch_mirror(os.path.join(TMP, "cpuonly"), [("2.8.0", "cpu")])
NOTORCH = primary(os.path.join(TMP, "pypi-plain"))
P = project("cpuonly", ["h200", "cpu"])
with open(os.path.join(P, "pylock.h200.toml"), "w") as f:
    f.write("# the previous lock\n")
rc, out, err = lock(P, CPUONLY, NOTORCH)
check(rc == 1, "cpu-only mirror: exit 1 (h200 has no build): %d %s%s" % (rc, out, err))
check(open(os.path.join(P, "pylock.h200.toml")).read() == "# the previous lock\n",
      "cpu-only mirror: h200's previous lock untouched")
check(re.search(r"h200: no solution", out) and CPUONLY in out and "2.8.0+cpu" in out and "sm_90" in out
      and "cu130" in out, "cpu-only mirror: the explanation names the index, what it offers and what the "
      "target needs: %s" % out)
if os.path.exists(os.path.join(P, "pylock.cpu.toml")):
    k = pkgs(lock_of(P, "cpu"))
    check(k["torch"]["version"] == "2.8.0+cpu", "cpu-only mirror: the CPU target locks +cpu")
else:
    check(False, "cpu-only mirror: pylock.cpu.toml written: %s" % out)

# ---- a primary index whose torch is a CUDA 12.8 build, as PyPI's ------------------------------

EMPTY = os.path.join(TMP, "empty-torch-index")
os.makedirs(os.path.join(EMPTY, "whl"))
PYPI128 = primary(os.path.join(TMP, "pypi-cu128"), torch_reqs=["nvidia-cuda-runtime-cu12==12.8.90; "
                                                              "platform_system == 'Linux'"])
P = project("pypi128", ["h200", "t4old"])
rc, out, err = lock(P, "file://" + EMPTY + "/whl", PYPI128)
check(rc == 1 and os.path.exists(os.path.join(P, "pylock.h200.toml"))
      and not os.path.exists(os.path.join(P, "pylock.t4old.toml")),
      "PyPI's cu128 torch: h200 locks, t4 on 470 does not: %d %s%s" % (rc, out, err))
if os.path.exists(os.path.join(P, "pylock.h200.toml")):
    lk = lock_of(P, "h200")
    k, g = pkgs(lk), lk["tool"]["gpuenv"]
    check(k["torch"]["version"] == "2.8.0" and "pypi-cu128" in k["torch"]["index"],
          "PyPI's cu128 torch: h200 gets the plain 2.8.0 of the primary index")
    check(g["backend"] == "cu128", "PyPI's cu128 torch: recognised as cu128 from its requirements: %s" % g)
    check("torch 2.8.0 locked, build cu128" in g["backend-reason"] and "(build cu128)" in g["backend-reason"],
          "PyPI's cu128 torch: the reason names it: %s" % g["backend-reason"])
    check("build cu128" in k["torch"]["tool"]["gpuenv"]["reason"], "torch's own reason names cu128")
check(re.search(r"t4old: no solution", out) and "470.82.01" in out and "the minimum for CUDA 12.8" in out,
      "PyPI's cu128 torch on driver 470: refused with the driver rule: %s" % out)

# ---- the plain CPU torch trap, whatever the sources --------------------------------------------

P = project("trap", ["h200"])
rc, out, err = lock(P, "file://" + EMPTY + "/whl", TRAP)
check(rc == 1 and not os.path.exists(os.path.join(P, "pylock.h200.toml")),
      "trap (auto): the primary's plain CPU torch is not locked for a GPU target: %d %s%s" % (rc, out, err))
check("CPU-only build" in out and "no nvidia-*" in out, "trap (auto): says why: %s" % out)
P = project("trap-named", ["h200"], extra='\n[tool.gpuenv]\ntorch-backend = "cu128"\n')
rc, out, err = lock(P, "file://" + EMPTY + "/whl", TRAP)
check(rc == 1 and not os.path.exists(os.path.join(P, "pylock.h200.toml")) and "CPU-only build" in out,
      "trap (named cu128, its index lacks torch): the fallback's CPU torch refused: %d %s%s" % (rc, out, err))
P = project("trap-cpu-target", ["cpu"])
rc, out, err = lock(P, "file://" + EMPTY + "/whl", TRAP)
check(rc == 0 and pkgs(lock_of(P, "cpu"))["torch"]["version"] == "2.8.0",
      "trap: a CPU target may take the plain CPU torch: %d %s%s" % (rc, out, err))

# ---- the satellite example: reasons name the locked release; two cuDNN copies --------------------

ROOT = os.path.join(TMP, "torch-index")
URLS = torch_index.build(ROOT, series=["2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7"])
SAT = os.path.join(TMP, "satellite")
os.makedirs(SAT)
shutil.copy(os.path.join(SHARED, "examples", "satellite-classifier", "pyproject.toml"), SAT)
rc, out, err = run("lock", "--project", SAT, "--index-url", URLS["pypi"], "--torch-index", URLS["torch-index"],
                   "--cache-dir", os.path.join(TMP, "cache"), "--source-url",
                   "pytorch=%s/cu118/" % URLS["torch-index"], "--source-url", "nvidia-jetpack=" + URLS["jetpack"],
                   "--target", "a100", "--target", "t4", "--json")
res = {x["target"]: x for x in json.loads(out)} if out.startswith("[") else {}
check(rc == 0 and set(res) == {"a100", "t4"}, "satellite: a100 and t4 lock: %d %s%s" % (rc, out[:400], err))
for t in ("a100", "t4"):
    if not os.path.exists(os.path.join(SAT, "pylock.%s.toml" % t)):
        continue
    lk = lock_of(SAT, t)
    k, g = pkgs(lk), lk["tool"]["gpuenv"]
    tv = k["torch"]["version"]
    check(("torch %s locked" % tv) in g["backend-reason"] and "torch 2.7" not in g["backend-reason"],
          "satellite %s: backend-reason names the locked %s, not another release: %s" % (t, tv, g["backend-reason"]))
    for name, p in k.items():
        r = p.get("tool", {}).get("gpuenv", {}).get("reason")
        if r and name.startswith("torch"):
            check(tv in r and "2.7" not in r, "satellite %s: %s's reason names torch %s: %s" % (t, name, tv, r))
    check(res.get(t, {}).get("backend") == "cu118" and tv in res.get(t, {}).get("backend_reason", ""),
          "satellite %s: --json's backend reason names the locked release" % t)
if os.path.exists(os.path.join(SAT, "pylock.a100.toml")):
    lk = lock_of(SAT, "a100")
    k, g = pkgs(lk), lk["tool"]["gpuenv"]
    w = res.get("a100", {}).get("warnings", "")
    check("nvidia-cudnn-cu11 8.9.2.26" in w and "cuDNN 8.7.0.84" in w and "two cuDNN copies" in w
          and "torch loads its own, 8.7.0.84" in w and "fix:" in w,
          "satellite a100: the two cuDNN copies warned about: %s" % w)
    check("warning: " in g["backend-reason"] and "8.9.2.26" in g["backend-reason"],
          "satellite a100: the warning is in the lock's backend-reason")
    check(k["nvidia-cudnn-cu11"].get("tool", {}).get("gpuenv", {}).get("reason", "").startswith("warning: "),
          "satellite a100: and in nvidia-cudnn-cu11's reason")
    check(not res.get("t4", {}).get("warnings"), "satellite t4: cuDNN 8.7.0.84 beside a cuDNN 8.7 torch: no "
          "warning: %s" % res.get("t4", {}).get("warnings"))
rc, out, err = run("lock", "--project", SAT, "--index-url", URLS["pypi"], "--torch-index", URLS["torch-index"],
                   "--cache-dir", os.path.join(TMP, "cache"), "--source-url",
                   "pytorch=%s/cu118/" % URLS["torch-index"], "--target", "a100")
check(rc == 0 and "  warning: target a100: nvidia-cudnn-cu11 8.9.2.26" in out,
      "satellite a100: the terminal shows the warning: %s%s" % (out, err))

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
