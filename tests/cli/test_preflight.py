"""gpuenv preflight: go / no-go for a CUDA version, a torch build or an image
on the node a facts snapshot describes (tests/fixtures/doctor/*/facts.json,
some changed here on the fly)."""
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

BIN = os.environ["GPUENV_BIN"]
SRC = Path(os.environ.get("GPUENV_SRC", Path(__file__).resolve().parents[2]))
FIX = SRC / "tests" / "fixtures" / "doctor"
failures = []


def run(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def facts(name):
    return json.loads((FIX / name / "facts.json").read_text())


def preflight(f, *req):
    """Run preflight --json on facts f (a dict); (exit, parsed output or None)."""
    r = run("preflight", *req, "--facts", "-", "--json", stdin=json.dumps(f))
    try:
        return r.returncode, json.loads(r.stdout), r
    except ValueError:
        return r.returncode, None, r


def ids(out):
    return sorted((v["id"], v["severity"]) for v in out["verdicts"])


def case(name, f, req, status, want, fix=None):
    rc, out, r = preflight(f, *req)
    check(rc == status, "%s: exit %d, expected %d (%r)" % (name, rc, status, r.stderr[:300]))
    if out is None:
        check(False, "%s: no JSON" % name)
        return None
    check(out["go"] == (status == 0), "%s: go=%r" % (name, out["go"]))
    got = ids(out)
    for w in want:
        check(w in got, "%s: %s not among %s" % (name, w, got))
    if fix:
        fixes = " | ".join(v["fix"] or "" for v in out["verdicts"])
        check(fix in fixes, "%s: no fix contains %r (%s)" % (name, fix, fixes))
    for v in out["verdicts"]:
        if v["severity"] == "error":
            check(bool(v["fix"]), "%s: error %s without a fix" % (name, v["id"]))
    return out


h200 = facts("h200-2026-11-29")
out = case("H200 --cuda 12.2", h200, ["--cuda", "12.2"], 0,
           [("driver-ok", "info"), ("arch-ok", "info")])
check(out and out["request"] == "CUDA 12.2" and out["cuda"] == "12.2", "request and cuda in JSON")
case("H200 --cuda 13.0", h200, ["--cuda", "13.0"], 0, [("driver-ok", "info")])
case("H200 --torch 2.7.0+cu128", h200, ["--torch", "2.7.0+cu128"], 0, [("arch-ok", "info")])
out = case("H200 --torch 2.11.0 (PyPI build)", h200, ["--torch", "2.11.0"], 0, [("arch-ok", "info")])
check(out and "+cu130" in out["request"], "PyPI build of 2.11 is cu130: %r" % (out or {}).get("request"))
case("H200 --image NGC pytorch", h200, ["--image", "nvcr.io/nvidia/pytorch:25.01-py3"], 0,
     [("driver-ok", "info")])
case("H200 --image nvidia/cuda", h200, ["--image", "nvidia/cuda:12.4.1-runtime-ubuntu22.04"], 0,
     [("driver-ok", "info"), ("arch-ok", "info")])
case("H200 --image short NGC name", h200, ["--image", "pytorch:25.01-py3"], 0, [("driver-ok", "info")])
case("--torch +cpu", h200, ["--torch", "2.7.0+cpu"], 0, [("cpu-build", "info")])

sm120 = facts("sm120-torch-cu124")
case("RTX 5090 --torch 2.6.0+cu124", sm120, ["--torch", "2.6.0+cu124"], 1,
     [("no-kernel-image", "error")], "whl/cu128")
case("RTX 5090 --torch 2.7.1+cu128", sm120, ["--torch", "2.7.1+cu128"], 0, [("arch-ok", "info")])
case("RTX 5090 --cuda 12.2", sm120, ["--cuda", "12.2"], 0, [("arch-too-new", "warning")])

old = facts("driver470-cu121")
case("driver 470 --cuda 12.1", old, ["--cuda", "12.1"], 1, [("driver-too-old", "error")],
     "upgrade the driver to >= 530.30.02")
case("driver 470 --cuda 11.8 (minor version compatibility)", old, ["--cuda", "11.8"], 0,
     [("driver-minor-compat", "info")])
case("driver 470 --torch 2.3.1+cu121", old, ["--torch", "2.3.1+cu121"], 1, [("driver-too-old", "error")])

# a Pascal GPU: CUDA 13.0 dropped it
pascal = facts("healthy")
pascal["gpus"][0].update(name="Tesla P100-PCIE-16GB", compute_capability="6.0", sm="sm_60",
                         architecture="Pascal")
pascal["driver"].update(version="580.82.07", cuda_version="13.0", cuda_version_int=13000)
case("P100 --cuda 13.0", pascal, ["--cuda", "13.0"], 1, [("arch-unsupported", "error")],
     "use CUDA <= 12.9")
case("P100 --cuda 12.8", pascal, ["--cuda", "12.8"], 0, [("arch-ok", "info")])
case("P100 --torch 2.7.0+cu128 (no sm_60)", pascal, ["--torch", "2.7.0+cu128"], 1,
     [("no-kernel-image", "error")])

# NGC release notes: branch R560, older data-center branches through forward compatibility
h100_535 = facts("driver-minor-compat")
case("Triton 24.10 on driver 535.104.05", h100_535, ["--image", "nvcr.io/nvidia/tritonserver:24.10-py3"],
     0, [("driver-forward-compat", "info")])
h100_550 = copy.deepcopy(h100_535)
h100_550["driver"].update(version="550.54.15", cuda_version="12.4", cuda_version_int=12040)
case("Triton 24.10 on driver 550", h100_550, ["--image", "nvcr.io/nvidia/tritonserver:24.10-py3"],
     1, [("driver-too-old", "error")], "R560")
# forward compatibility holds on data-center GPUs only (the release notes' words)
rtx_535 = copy.deepcopy(h100_535)
rtx_535["gpus"][0].update(name="NVIDIA GeForce RTX 4090", compute_capability="8.9", sm="sm_89",
                          architecture="Ada Lovelace")
case("Triton 24.10 on driver 535 with an RTX 4090", rtx_535,
     ["--image", "nvcr.io/nvidia/tritonserver:24.10-py3"], 1, [("driver-too-old", "error")], "R560")
# a driver older than the GPU runs nothing there (kb torch said so; preflight said go)
b_535 = copy.deepcopy(h100_535)
b_535["gpus"][0].update(name="NVIDIA GeForce RTX 5090", compute_capability="12.0", sm="sm_120",
                        architecture="Blackwell")
case("RTX 5090 on driver 535 --torch 2.7.1+cu128", b_535, ["--torch", "2.7.1+cu128"], 1,
     [("driver-predates-gpu", "error")], "570.26")
maxwell = facts("healthy")
maxwell["gpus"][0].update(name="Tesla M40", compute_capability="5.2", sm="sm_52", architecture="Maxwell")
case("Triton 24.10 on sm_52", maxwell, ["--image", "nvcr.io/nvidia/tritonserver:24.10-py3"], 1,
     [("arch-unsupported", "error")])

# the machine itself
case("MIG without instances", facts("mig-no-instances"), ["--cuda", "12.2"], 1,
     [("mig-no-device", "error")])
case("CUDA_VISIBLE_DEVICES hides all", facts("cuda-visible-devices-hides-all"), ["--cuda", "12.2"], 1,
     [("cuda-visible-devices-hides-all", "error")])
case("driver not loaded", facts("driver-not-loaded"), ["--cuda", "12.2"], 1,
     [("driver-not-loaded", "error")])
nogpu = facts("healthy")
nogpu.update(gpus=[], pci=[])
nogpu["driver"].update(state="no-hardware", version=None, cuda_version=None, cuda_version_int=None)
case("no GPU", nogpu, ["--cuda", "12.2"], 1, [("no-gpu", "error")])

# requests the knowledge base does not know, and usage
rc, out, r = preflight(h200, "--torch", "2.7.0+cu999")
check(rc == 4 and "cu128" in r.stderr, "unknown torch build -> 4 with the known ones: %r" % r.stderr)
rc, out, r = preflight(h200, "--image", "example.com/foo:bar")
check(rc == 4 and "not in the knowledge base" in r.stderr, "unknown image -> 4")
rc, out, r = preflight(h200, "--cuda", "12.7")
check(rc == 4, "unknown CUDA release -> 4")
rc, out, r = preflight(h200, "--cuda", "twelve")
check(rc == 2 and "twelve" in r.stderr, "malformed --cuda -> 2")
rc, out, r = preflight(h200, "--image", "no-tag")
check(rc == 2, "image without a tag -> 2")
# one parse of a CUDA version, as `kb driver --cuda` (issue 7: --cuda 12 silently meant 12.0)
rc, out, r = preflight(h200, "--cuda", "12")
k = run("kb", "driver", "--cuda", "12")
check(rc == 2 and k.returncode == 2 and "not a CUDA version" in r.stderr and "12.0" in r.stderr
      and r.stderr.splitlines()[:2] == k.stderr.splitlines()[:2],
      "--cuda 12 -> 2, as kb driver --cuda 12: %r / %r" % (r.stderr, k.stderr))
out = case("--cuda 12.4.1 is CUDA 12.4", h200, ["--cuda", "12.4.1"], 0, [("driver-ok", "info")])
check(out and out["cuda"] == "12.4", "--cuda 12.4.1 -> 12.4")
# a version without +cuXYZ means the PyPI build (issue 7: 2.5.1 said "no such build");
# the KB does not record which build PyPI ships for 2.5, and says so
rc, out, r = preflight(h200, "--torch", "2.5.1")
check(rc == 4 and "PyPI" in r.stderr and "no such build" not in r.stderr and "2.5.1+cu124" in r.stderr,
      "--torch 2.5.1: the PyPI build, unknown to the KB, named builds: %r" % r.stderr)
rc, out, r = preflight(h200, "--torch", "2.7.1")
check(rc == 0 and out and "+cu126" in out["request"], "--torch 2.7.1 is the PyPI cu126 build: %r" % (out or r.stderr))
r = run("preflight", "--facts", str(FIX / "healthy" / "facts.json"))
check(r.returncode == 2 and "--cuda" in r.stderr, "no request -> 2")
r = run("preflight", "--cuda", "12.2", "--torch", "2.7.0", "--facts", str(FIX / "healthy" / "facts.json"))
check(r.returncode == 2, "two requests -> 2")
# --lock FILE: tests/cli/test_preflight_lock.py; a lock that is not there cannot be judged
r = run("preflight", "--lock", "no-such-pylock.toml", "--facts", str(FIX / "healthy" / "facts.json"))
check(r.returncode == 4 and "no-such-pylock.toml" in r.stderr, "a missing --lock -> 4: %r" % r.stderr)
r = run("preflight", "--help")
check(r.returncode == 0 and "exit status" in r.stdout, "--help")

# human output
r = run("preflight", "--torch", "2.6.0+cu124", "--facts", str(FIX / "sm120-torch-cu124" / "facts.json"))
check(r.returncode == 1 and r.stdout.startswith("no-go: this node cannot run torch 2.6.0+cu124") and
      "no-kernel-image" in r.stdout and "fix:" in r.stdout, "human no-go: %r" % r.stdout[:200])
r = run("preflight", "--cuda", "12.2", "--facts", str(FIX / "h200-2026-11-29" / "facts.json"))
check(r.returncode == 0 and r.stdout.startswith("go: this node can run CUDA 12.2"), "human go")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
