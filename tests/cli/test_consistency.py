"""One question, one answer (issue 7, item 1): the same compatibility
questions asked through every verb over a grid of drivers, CUDA versions,
GPUs, torch builds and NGC tags must get the same verdicts.

  driver D, CUDA C     kb driver --cuda C, kb driver D, preflight --cuda C,
                       doctor (a framework built with C)
  image T, driver D, GPU G
                       kb image T --driver D --gpu G, preflight --image T
  torch B, GPU G, driver D
                       kb torch --version B, preflight --torch B, doctor (torch B
                       in an environment, the KB's arch list deciding)
  which torch build    kb torch's pick, diagnose's concrete fix ({torch_pick}),
                       doctor's fix for a CPU torch of B's release
  image T, driver D, GPU G, the Dockerfile's base (lib/kb/base_image.c)
                       export --format dockerfile --base T (its "runs", or a
                       refusal for the driver), kb image, preflight --image
  the lock's build     lock's [tool.gpuenv] backend for a target of GPU G and
                       driver D, kb torch's pick

The facts snapshots are the healthy fixture (tests/fixtures/doctor/healthy)
with the GPU and the driver replaced; the driver's own CUDA version is left
out so that the knowledge base decides it, as it does for `kb`.

The tritonserver 24.10 / driver 550.54.15 case has the answer of its release
notes (data/kb/ngc.toml, docs/kb.md "NGC images"): R560 or later, or
R470/R525/R535/R545 on data-center GPUs through forward compatibility; R550
is none of them, so every verb says no.
"""
import copy
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

BIN = os.environ["GPUENV_BIN"]
SRC = Path(os.environ["GPUENV_SRC"]) if "GPUENV_SRC" in os.environ else Path(__file__).resolve().parents[2]
HEALTHY = json.loads((SRC / "tests" / "fixtures" / "doctor" / "healthy" / "facts.json").read_text())
failures = []
asked = 0


def run(*args, stdin=None):
    global asked
    asked += 1
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, timeout=60)


def js(*args, stdin=None):
    r = run("--json", *args, stdin=stdin)
    try:
        return r.returncode, json.loads(r.stdout), r
    except ValueError:
        return r.returncode, None, r


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def ver(s):
    return tuple(int(x) for x in s.split("."))


def mm(s):
    return ver(s)[:2]


DRIVERS = ["470.57.02", "525.60.13", "535.104.05", "550.54.15", "560.28.03", "570.86.10",
           "575.51.03", "580.65.06",
           "595.45.04"]  # CUDA 13.2 GA's minimum: torch 2.12-2.14 ship cu132 builds
CUDAS = ["11.4", "11.8", "12.0", "12.2", "12.4", "12.6", "12.8", "12.9", "13.0"]
GPUS = ["T4", "A100", "H100", "H200", "L4", "RTX 4090", "RTX 5090", "Jetson AGX Orin"]
IMAGES = ["nvcr.io/nvidia/tritonserver:24.10-py3", "nvcr.io/nvidia/tritonserver:24.12-py3",
          "nvcr.io/nvidia/pytorch:25.01-py3", "nvcr.io/nvidia/pytorch:25.12-py3",
          "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "nvidia/cuda:13.0.0-base-ubuntu24.04"]

# the GPUs as the KB names them (so doctor and preflight find the same rows)
gpu = {}
for g in GPUS:
    rc, d, r = js("kb", "gpu", g)
    if rc != 0 or not d:
        check(False, "kb gpu %s: %r" % (g, r.stderr))
        continue
    gpu[g] = d["gpus"][0]

# torch builds with an arch list: the newest release of each CUDA tag
rc, d, r = js("kb", "torch")
newest = {}
for b in d["builds"] if d else []:
    if b["arch_list"] and b["channel"] == "stable" and (
            b["tag"] not in newest or ver(b["torch"]) > ver(newest[b["tag"]]["torch"])):
        newest[b["tag"]] = b
BUILDS = ["%s.0+%s" % (newest[t]["torch"], t) for t in ["cu118", "cu121", "cu124", "cu126", "cu128", "cu130", "cu132"]
          if t in newest]
check(len(BUILDS) >= 5, "torch builds in the grid: %s" % BUILDS)


def facts(g, driver, envs=()):
    f = copy.deepcopy(HEALTHY)
    k = gpu[g]
    f["gpus"][0].update(name=k["name"], compute_capability=k["compute_capability"], sm=k["sm"],
                        architecture=k["architecture"])
    f["driver"].update(version=driver, kernel_module=driver, procfs_version=driver, cuda_version=None,
                       cuda_version_int=None, cuda_version_source=None)
    f["driver"]["procfs"] = None
    f["libraries"] = []
    f["environments"] = list(envs)
    return f


def env(i, frameworks):
    base = copy.deepcopy(HEALTHY["environments"][0]) if HEALTHY.get("environments") else {}
    base.update(prefix="/srv/env%d" % i, interpreter="/srv/env%d/bin/python3" % i, distributions=[],
                frameworks=frameworks, sites=["/srv/env%d/lib/python3.12/site-packages" % i])
    base["python"] = None
    base.pop("python_xy", None)
    return base


def fw_torch(b, cpu=False):
    release, tag = b.split("+")
    if cpu:
        return {"kind": "torch", "dist": "torch", "version": release + "+cpu", "local": "cpu",
                "cuda": None, "gpu": False, "binaries": [], "hip": None}
    return {"kind": "torch", "dist": "torch", "version": b, "local": tag,
            "cuda": "%s.%s" % (tag[2:-1], tag[-1]), "gpu": True, "binaries": [], "hip": None}


def preflight(f, *req):
    return js("preflight", *req, "--facts", "-", stdin=json.dumps(f))


def doctor(f):
    rc, d, r = js("doctor", "--facts", "-", stdin=json.dumps(f))
    check(d is not None, "doctor JSON: %r" % r.stderr[:300])
    return (d or {}).get("verdicts", [])


DRIVER_IDS = {"driver-ok": "yes", "driver-minor-compat": "minor-compat", "driver-too-old": "no",
              "driver-forward-compat": "forward-compat"}


def driver_word(verdicts, env_path=None):
    ids = [v["id"] for v in verdicts if v["id"] in DRIVER_IDS and (env_path is None or v.get("environment") == env_path)]
    return DRIVER_IDS[ids[0]] if ids else None


# ---- 1. driver D and CUDA C ---------------------------------------------------------------
by_cuda = {c: js("kb", "driver", "--cuda", c)[1] for c in CUDAS}
by_driver = {d: js("kb", "driver", d)[1] for d in DRIVERS}
for D in DRIVERS:
    envs = [env(i, [{"kind": "jax", "dist": "jax-cuda", "version": "0.4.30", "cuda": c, "binaries": []}])
            for i, c in enumerate(CUDAS)]
    dv = doctor(facts("H100", D, envs))
    for i, C in enumerate(CUDAS):
        q = "driver %s, CUDA %s" % (D, C)
        a = by_cuda[C]
        mc = a.get("minor_compat")
        w_cuda = "yes" if ver(D) >= ver(a["min_driver"]) else \
            "minor-compat" if mc and ver(D) >= ver(mc["driver_min"]) else "no"
        b = by_driver[D]
        w_drv = "yes" if b["max_cuda"] and mm(C) <= mm(b["max_cuda"]) else \
            "minor-compat" if b["minor_compat"] and b["minor_compat"]["cuda_major"] == mm(C)[0] else "no"
        rc, p, r = preflight(facts("H100", D), "--cuda", C)
        w_pf = driver_word(p["verdicts"]) if p else None
        w_doc = driver_word(dv, "/srv/env%d" % i) or "yes"
        check(w_cuda == w_drv == w_pf == w_doc,
              "%s: kb driver --cuda %s, kb driver %s, preflight %s, doctor %s" % (q, w_cuda, w_drv, w_pf, w_doc))

# ---- 2. images ------------------------------------------------------------------------------
image_words = {}  # (image, driver, GPU) -> (kb image, preflight --image), for section 5
IMG_WORD = {"yes": "yes", "minor-version-compat": "minor-compat", "forward-compat": "forward-compat",
            "no": "no"}
for T in IMAGES:
    for D in DRIVERS:
        for G in ["T4", "H100", "RTX 4090", "RTX 5090"]:
            q = "%s, driver %s, %s" % (T, D, G)
            rc, k, r = js("kb", "image", T, "--driver", D, "--gpu", G)
            w_kb = IMG_WORD.get(k["images"][0]["runs"]) if k else None
            rc, p, r = preflight(facts(G, D), "--image", T)
            w_pf = driver_word(p["verdicts"]) if p else None
            image_words[T, D, G] = (w_kb, w_pf)
            check(w_kb is not None and w_kb == w_pf, "%s: kb image %s, preflight %s" % (q, w_kb, w_pf))
            if T.endswith("tritonserver:24.10-py3") and D == "550.54.15":
                check(w_kb == w_pf == "no" and p and not p["go"] and k["images"][0]["decided_by"] == "release-notes",
                      "%s: the release notes say no (R560, or R470/R525/R535/R545 on data-center GPUs)" % q)

# ---- 3. torch builds, and 4. the build to install ----------------------------------------------
PICK = re.compile(r"a (cu\d+) build \(torch (\d+\.\d+)")
CMD = re.compile(r"torch==(\d+\.\d+)[.\d*]* --index-url \S+/(cu\d+)")
for G in gpu:
    for D in ["470.57.02", "525.60.13", "535.104.05", "550.54.15", "570.86.10", "580.65.06"]:
        envs = [env(i, [fw_torch(b)]) for i, b in enumerate(BUILDS)]
        envs += [env(100 + i, [fw_torch(b, cpu=True)]) for i, b in enumerate(BUILDS)]
        dv = doctor(facts(G, D, envs))
        for i, B in enumerate(BUILDS):
            q = "torch %s on %s, driver %s" % (B, G, D)
            rc, k, r = js("kb", "torch", "--gpu", G, "--driver", D, "--version", B)
            w_kb = k["builds"][0]["verdict"] if k and k.get("builds") else None
            rc, p, r = preflight(facts(G, D), "--torch", B)
            w_pf = ("yes" if p["go"] else "no") if p else None
            # an error of this environment, or of the machine (a driver older than the GPU)
            errs = [v["id"] for v in dv if v["severity"] == "error" and (
                v.get("environment") == "/srv/env%d" % i or v["id"] == "driver-predates-gpu")]
            w_doc = "no" if errs else "yes"
            check(w_kb == w_pf == w_doc, "%s: kb torch %s, preflight %s, doctor %s %s" % (q, w_kb, w_pf, w_doc, errs))
            # no kernel image: preflight's fix and doctor's name the same build (one with a
            # cubin for the GPU), and the same driver upgrade when one is needed
            nki_pf = [v for v in (p["verdicts"] if p else []) if v["id"] == "no-kernel-image"]
            nki_doc = [v for v in dv if v.get("environment") == "/srv/env%d" % i and v["id"] == "no-kernel-image"]
            if nki_pf or nki_doc:
                fx = [CMD.search(x[0]["fix"] or "") if x else None for x in (nki_pf, nki_doc)]
                got = [(m.group(1), m.group(2)) if m else None for m in fx]
                ups = [re.search(r"driver to >= ([0-9.]+), then", x[0]["fix"] or "") if x else None
                       for x in (nki_pf, nki_doc)]
                ups = [m.group(1) if m else None for m in ups]
                check(nki_pf and nki_doc and got[0] == got[1] and ups[0] == ups[1],
                      "%s, no-kernel-image fixes: preflight %s, doctor %s (upgrade %s)" % (q, got[0], got[1], ups))
            # the build gpuenv would install instead: one choice
            pk = k.get("pick") if k else None
            want = (pk["torch"], pk["tag"]) if pk else None
            r = run("diagnose", "--gpu", G, "--driver", D, "--torch", B, "-",
                    stdin="RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
            m = PICK.search(r.stdout)
            got_dg = (m.group(2), m.group(1)) if m else None
            cpu = [v for v in dv if v.get("environment") == "/srv/env%d" % (100 + i) and v["id"] == "cpu-torch-on-gpu-host"]
            m = CMD.search(cpu[0]["fix"] or "") if cpu else None
            got_doc = (m.group(1), m.group(2)) if m else None
            up_kb = pk.get("driver_upgrade") if pk else None
            up_dg = "after upgrading the driver to >= %s" % up_kb in r.stdout if up_kb else \
                "after upgrading the driver" not in r.stdout
            check(cpu and want == got_dg == got_doc and up_dg,
                  "%s, the build to install: kb torch %s, diagnose %s, doctor's cpu-torch fix %s (upgrade %s)"
                  % (q, want, got_dg, got_doc, up_kb))

# ---- 5. export's base image and lock's torch build -------------------------------------------
# a project per (GPU, driver, Python): lock records the torch build lock picks for the
# target; export --format dockerfile --base T judges T for the target with a lock that
# names no CUDA build (so only the driver and the GPU decide)
TMP = tempfile.mkdtemp(prefix="gpuenv-consistency-")
EMPTY = os.path.join(TMP, "empty-index", "simple")
os.makedirs(EMPTY)
UBUNTU_PY = {"22.04": "3.10", "24.04": "3.12"}  # Ubuntu's python3 per release
BASE_DRIVERS = ["470.57.02", "535.104.05", "550.54.15", "580.65.06"]
BASE_GPUS = ["H100", "RTX 5090"]  # a data-center GPU (forward compatibility) and a new one


@functools.lru_cache(maxsize=None)
def image_python(T):
    rc, k, r = js("kb", "image", T)
    i = k["images"][0] if k and k.get("images") else {}
    return i.get("python") or UBUNTU_PY.get(i.get("ubuntu") or "", "3.12")


def target_project(G, D, py):
    d = os.path.join(TMP, "%s-%s-%s" % (G.replace(" ", "_"), D, py))
    if not os.path.isdir(d):
        os.makedirs(d)
        with open(os.path.join(d, "pyproject.toml"), "w") as f:
            f.write('[project]\nname = "c"\nversion = "0.1"\ndependencies = []\n\n[tool.gpuenv.targets.t]\n'
                    'gpu = "%s"\ndriver = "%s"\npython = "%s"\nplatform = "manylinux_2_36_x86_64"\n'
                    % (gpu[G]["name"], D, py))
    return d


for G in BASE_GPUS:
    for D in BASE_DRIVERS:
        # the lock's torch build is kb torch's pick
        d = target_project(G, D, "3.12")
        r = run("lock", "--project", d, "--index-url", "file://" + EMPTY + "/", "--cache-dir", os.path.join(TMP, "c"))
        rc, k, _ = js("kb", "torch", "--gpu", G, "--driver", D)
        pk = k.get("pick") if k else None
        try:
            got = tomllib.loads(open(os.path.join(d, "pylock.t.toml")).read())["tool"]["gpuenv"].get("backend")
        except (OSError, KeyError, ValueError):
            got = None
        # a pick that needs a driver upgrade is no build for this target: the lock records none
        want = pk["tag"] if pk and not pk.get("driver_upgrade") else None
        check(r.returncode == 0 and got == want,
              "%s, driver %s: lock's build %s, kb torch's pick %s (%s)" % (G, D, got, want, r.stderr[-200:]))
        for T in IMAGES:
            d = target_project(G, D, image_python(T))
            with open(os.path.join(d, "pylock.t.toml"), "w") as f:
                f.write('lock-version = "1.0"\ncreated-by = "test"\npackages = []\n\n[tool.gpuenv]\ntarget = "t"\n')
            q = "%s, driver %s, %s" % (T, D, G)
            rc, e, r = js("export", "--project", d, "--target", "t", "--format", "dockerfile", "--base", T)
            if rc == 0 and e:
                w_ex = IMG_WORD.get(e["base"].get("runs"))
            elif rc == 1 and "driver" in r.stderr and "compute capability" not in r.stderr:
                w_ex = "no"
            else:  # refused for the GPU's compute capability, or not judged: not the driver's question
                check(rc == 1 and "compute capability" in r.stderr, "%s: export %d: %s" % (q, rc, r.stderr[-300:]))
                continue
            w_kb, w_pf = image_words[T, D, G]  # asked in section 2
            check(w_ex == w_kb == w_pf, "%s: export's base %s, kb image %s, preflight %s" % (q, w_ex, w_kb, w_pf))
shutil.rmtree(TMP, ignore_errors=True)

print("%d answers compared" % asked)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
