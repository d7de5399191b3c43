"""gpuenv trt optimize / build / check and preflight --engine (issue 24, items
3-5; docs/trt.md).

- optimize: a dynamic-batch model for the satellite example's t4 target
  (TensorRT 8.5.3.1 from its lock, and from its group's pin without a lock)
  gives --fp16, the three shape flags, --memPoolSize and no flag TensorRT
  8.5 lacks (every flag checked against tensorrt.toml's [[flag]] rows, read
  here with tomllib); the same on the H200 with TensorRT 10.x; a static
  model no shape flags; --portable-gpus refused on a T4 (8.5: no hardware
  compatibility; 8.6: sm_75 < sm_80) and ampere+ on an A100 with 8.6; two
  inputs both in each shape flag; [tool.gpuenv.trt] shapes; several targets
  and which share an engine; refusals (bf16 on 8.6, fp8 on a T4, precision
  flags on 11.x, a GPU older than the release).
- --check-command on the trtexec line of ../shared/examples/triton-deploy
  (its --workspace against 8.5 deprecated, against 10.x removed, the line
  gpuenv would write instead).
- build with a stand-in trtexec (prints TensorRT's banner, writes the engine)
  and a faked GPU (a facts snapshot): the record's fields; no record when
  trtexec fails or writes nothing; no trtexec: exit 4 naming where it looked.
- preflight --engine / trt check over a grid of records x nodes (T4, A100,
  H200; TensorRT 8.5, 8.6, 10.x; hardware and version compatibility on and
  off) against an oracle written here from TensorRT's documentation, and the
  seed's case message; no record: exit 4 saying what is missing.
"""
import copy
import hashlib
import itertools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(__file__))
try:
    import onnx
    from onnx import TensorProto, helper as h
except ImportError as e:  # scripts/dev test installs python3-onnx
    print("FAIL: python3-onnx is needed (apt-get install python3-onnx): %s" % e)
    sys.exit(1)

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.abspath(os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared")))
TMP = tempfile.mkdtemp(prefix="gpuenv-trt-engine-")
failures = []
KB = tomllib.load(open(os.path.join(SRC, "data", "kb", "tensorrt.toml"), "rb"))


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None, cwd=None):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    e.pop("TENSORRT_HOME", None)
    e.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=300)


def js(*args, **kw):
    p = run(*args, "--json", **kw)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        return p, None


def vkey(v):
    return tuple(int(x) for x in v.split("."))


# ---- models ----------------------------------------------------------------------------

def model(path, inputs, opset=17):
    """inputs: [(name, dims)]; one Identity/Relu per input."""
    nodes, ins, outs = [], [], []
    for i, (name, dims) in enumerate(inputs):
        ins.append(h.make_tensor_value_info(name, TensorProto.FLOAT, dims))
        outs.append(h.make_tensor_value_info("out%d" % i, TensorProto.FLOAT, dims))
        nodes.append(h.make_node("Relu", [name], ["out%d" % i]))
    m = h.make_model(h.make_graph(nodes, "g", ins, outs), opset_imports=[h.make_opsetid("", opset)],
                     producer_name="gpuenv-tests")
    m.ir_version = 8
    onnx.save(m, path)
    return path


DYN = model(os.path.join(TMP, "dynbatch.onnx"), [("images", ["batch", 3, 224, 224])])
STATIC = model(os.path.join(TMP, "static.onnx"), [("images", [1, 3, 224, 224])])
TWO = model(os.path.join(TMP, "two.onnx"), [("ids", ["N", "S"]), ("mask", ["N", "S"])])
NEWOPS = model(os.path.join(TMP, "opset19.onnx"), [("x", ["batch", 8])], opset=19)


def flag_rows():
    return {r["flag"]: r for r in KB["flag"]}


def flags_exist_in(cmd, trt):
    """Every --flag of cmd has a [[flag]] row, added <= trt, not removed."""
    rows, bad = flag_rows(), []
    for a in cmd[1:]:
        name = a.split("=", 1)[0]
        r = rows.get(name)
        if r is None:
            bad.append("%s: no [[flag]] row" % name)
        elif "added" in r and vkey(trt) < vkey(r["added"]):
            bad.append("%s: added in %s" % (name, r["added"]))
        elif "removed" in r and vkey(trt) >= vkey(r["removed"]):
            bad.append("%s: removed in %s" % (name, r["removed"]))
    return bad


def arg(cmd, prefix):
    return [a for a in cmd if a.startswith(prefix)]


# ---- a project: the satellite example ------------------------------------------------

PROJ = os.path.join(TMP, "satellite")
os.makedirs(PROJ)
shutil.copy(os.path.join(SHARED, "examples", "satellite-classifier", "pyproject.toml"), PROJ)
H = "0" * 64


def lock(target, version):
    with open(os.path.join(PROJ, "pylock.%s.toml" % target), "w") as f:
        f.write('lock-version = "1.0"\ncreated-by = "gpuenv-tests"\n\n[[packages]]\nname = "tensorrt"\n'
                'version = "%s"\nwheels = [{ name = "tensorrt-%s-cp310-none-linux_x86_64.whl", url = '
                '"https://files.example/t.whl", hashes = { sha256 = "%s" } }]\n' % (version, version, H))


# t4 with no lock: the group's pin tensorrt = "8.5.3.1"
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "t4")
check(p.returncode == 0 and o, "t4 from its pin: %s %s" % (p.returncode, p.stderr))
if o:
    check(o["tensorrt"] == "8.5.3.1" and "pyproject.toml" in o["tensorrt_from"], "the pin read: %s" % o)
lock("t4", "8.5.3.1")
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "t4")
check(p.returncode == 0 and o, "t4 from its lock: %s %s" % (p.returncode, p.stderr))
if o:
    cmd = o["command"]
    check(o["tensorrt"] == "8.5.3.1" and o["tensorrt_from"].endswith("pylock.t4.toml"), "the lock read: %s" % o)
    check(cmd[0] == "trtexec" and "--fp16" in cmd, "T4: --fp16: %s" % cmd)
    check(arg(cmd, "--minShapes=") == ["--minShapes=images:1x3x224x224"] and
          arg(cmd, "--optShapes=") == ["--optShapes=images:8x3x224x224"] and
          arg(cmd, "--maxShapes=") == ["--maxShapes=images:32x3x224x224"], "T4: the three shape flags: %s" % cmd)
    check(arg(cmd, "--memPoolSize=workspace:"), "T4: --memPoolSize: %s" % cmd)
    check(not arg(cmd, "--workspace") and not arg(cmd, "--hardwareCompatibilityLevel") and
          "--versionCompatible" not in cmd and "--bf16" not in cmd, "T4: no 8.6-only or removed flags: %s" % cmd)
    check(flags_exist_in(cmd, "8.5.3.1") == [], "T4: every flag in trtexec 8.5: %s" % flags_exist_in(cmd, "8.5.3.1"))
    check(any("default" in n["text"] for n in o["notes"]), "the default profile said as such: %s" % o["notes"])
    check(any(n["source"] and "tensorrt.toml:" in n["source"] for n in o["notes"]), "notes cite the KB: %s" % o["notes"])
# the lock wins over the pin
lock("a100", "8.6.1.6")
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "a100")
check(o and o["tensorrt"] == "8.6.1.6", "a100 from its lock: %s" % (o or p.stderr))

# the H200 target with TensorRT 10.x
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "h200", "--tensorrt", "10.13.3.9")
check(p.returncode == 0 and o, "h200: %s %s" % (p.returncode, p.stderr))
if o:
    cmd = o["command"]
    check("--fp16" in cmd and len(arg(cmd, "--minShapes=images:")) == 1 and arg(cmd, "--memPoolSize="),
          "H200 10.x: fp16, shapes, memPoolSize: %s" % cmd)
    check(flags_exist_in(cmd, "10.13.3.9") == [], "H200: flags of 10.13: %s" % flags_exist_in(cmd, "10.13.3.9"))
    check(o["compute_capability"] == "9.0", "H200 is 9.0: %s" % o)
# h200 locks no tensorrt and pins none: a usage error naming what to do
p = run("trt", "optimize", DYN, "--project", PROJ, "--target", "h200")
check(p.returncode == 2 and "--tensorrt" in p.stderr, "h200 without TensorRT: %s %s" % (p.returncode, p.stderr))

# static model: no shape flags
p, o = js("trt", "optimize", STATIC, "--gpu", "T4", "--tensorrt", "8.5.3.1")
check(o and not arg(o["command"], "--minShapes") and not arg(o["command"], "--optShapes")
      and not arg(o["command"], "--maxShapes"), "static: no shape flags: %s" % (o or p.stderr))

# two inputs: both in each shape flag
p, o = js("trt", "optimize", TWO, "--gpu", "A100", "--tensorrt", "8.6.1.6",
          "--shapes", "ids:1x8..4x128..8x512", "--shapes", "mask:1x8..4x128..8x512")
check(o and arg(o["command"], "--minShapes=") == ["--minShapes=ids:1x8,mask:1x8"]
      and arg(o["command"], "--optShapes=") == ["--optShapes=ids:4x128,mask:4x128"]
      and arg(o["command"], "--maxShapes=") == ["--maxShapes=ids:8x512,mask:8x512"], "two inputs: %s" % (o or p.stderr))
# a dynamic dim other than the batch, no profile: usage error naming the input
p = run("trt", "optimize", TWO, "--gpu", "A100", "--tensorrt", "8.6.1.6")
check(p.returncode == 2 and "'ids'" in p.stderr and "--shapes" in p.stderr, "no profile for seq: %s" % p.stderr)
# a profile for no input, a bad one, a static dim contradicted
for bad, what in (("nope:1x8", "no input"), ("ids:1x8..4x128", "two shapes"), ("ids:8x1..4x1..2x1", "min>opt"),
                  ("ids:1xx8", "syntax")):
    p = run("trt", "optimize", TWO, "--gpu", "A100", "--tensorrt", "8.6.1.6", "--shapes", bad,
            "--shapes", "mask:1x8..4x128..8x512")
    check(p.returncode == 2 and p.stderr, "bad --shapes (%s): %s %s" % (what, p.returncode, p.stderr))
p = run("trt", "optimize", DYN, "--gpu", "T4", "--tensorrt", "8.5.3.1", "--shapes", "images:1x4x224x224")
check(p.returncode == 2 and "fixed at 3" in p.stderr, "a fixed dim contradicted: %s" % p.stderr)

# [tool.gpuenv.trt] shapes from pyproject.toml
with open(os.path.join(PROJ, "pyproject.toml"), "a") as f:
    f.write('\n[tool.gpuenv.trt]\nshapes = ["images:2x3x224x224..16x3x224x224..64x3x224x224"]\n')
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "t4")
check(o and arg(o["command"], "--maxShapes=") == ["--maxShapes=images:64x3x224x224"]
      and any("pyproject.toml:" in n["text"] for n in o["notes"]), "pyproject shapes: %s" % (o or p.stderr))
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "t4", "--shapes", "images:1x3x224x224..2x3x224x224..4x3x224x224")
check(o and arg(o["command"], "--maxShapes=") == ["--maxShapes=images:4x3x224x224"], "--shapes wins: %s" % (o or p.stderr))

# --portable-gpus
p = run("trt", "optimize", DYN, "--gpu", "T4", "--tensorrt", "8.5.3.1", "--portable-gpus")
check(p.returncode == 1 and "8.6" in p.stderr and not p.stdout, "T4 8.5 portable refused: %s" % p.stderr)
p = run("trt", "optimize", DYN, "--gpu", "T4", "--tensorrt", "8.6.1.6", "--portable-gpus")
check(p.returncode == 1 and "8.0" in p.stderr and "sm_75" in p.stderr, "T4 8.6 portable refused: %s" % p.stderr)
p, o = js("trt", "optimize", DYN, "--gpu", "A100", "--tensorrt", "8.6.1.6", "--portable-gpus")
check(o and "--hardwareCompatibilityLevel=ampere+" in o["command"] and o["hardware_compatibility"] == "ampere+",
      "A100 8.6 ampere+: %s" % (o or p.stderr))
p, o = js("trt", "optimize", DYN, "--gpu", "T4", "--tensorrt", "10.9.0.34", "--portable-gpus")
check(o and "--hardwareCompatibilityLevel=sameComputeCapability" in o["command"], "T4 10.9 same-cc: %s" % (o or p.stderr))
p, o = js("trt", "optimize", DYN, "--gpu", "A100", "--tensorrt", "8.6.1.6", "--portable-tensorrt")
check(o and "--versionCompatible" in o["command"] and o["version_compatible"], "8.6 vc: %s" % (o or p.stderr))
p = run("trt", "optimize", DYN, "--gpu", "A100", "--tensorrt", "8.5.3.1", "--portable-tensorrt")
check(p.returncode == 1 and "8.6" in p.stderr, "8.5 vc refused: %s" % p.stderr)

# precisions
p = run("trt", "optimize", DYN, "--gpu", "A100", "--tensorrt", "8.6.1.6", "--precision", "bf16")
check(p.returncode == 1 and "--bf16" in p.stderr and "10.0" in p.stderr, "bf16 on 8.6 refused: %s" % p.stderr)
p, o = js("trt", "optimize", DYN, "--gpu", "A100", "--tensorrt", "10.3.0", "--precision", "bf16")
check(o and "--bf16" in o["command"] and "--fp16" not in o["command"], "bf16 on A100 10.3: %s" % (o or p.stderr))
p = run("trt", "optimize", DYN, "--gpu", "T4", "--tensorrt", "10.3.0", "--precision", "fp8")
check(p.returncode == 1 and "7.5" in p.stderr, "fp8 on a T4 refused: %s" % p.stderr)
p, o = js("trt", "optimize", DYN, "--gpu", "H200", "--tensorrt", "10.3.0", "--precision", "fp8")
check(o and "--fp8" in o["command"] and any("quantized" in n["text"] for n in o["notes"]), "fp8 on H200: %s" % (o or p.stderr))
p, o = js("trt", "optimize", DYN, "--gpu", "Tesla P4", "--tensorrt", "8.6.1.6")
check(o and "--fp16" not in o["command"], "P4 (6.1): no --fp16: %s" % (o or p.stderr))
p, o = js("trt", "optimize", DYN, "--gpu", "H200", "--tensorrt", "11.0.0")
check(o and not [a for a in o["command"] if a in ("--fp16", "--bf16", "--int8", "--fp8", "--best")],
      "11.x: no precision flags: %s" % (o or p.stderr))
p = run("trt", "optimize", DYN, "--gpu", "H200", "--tensorrt", "11.0.0", "--precision", "fp16")
check(p.returncode == 1 and "11.0" in p.stderr and "modelopt" in p.stderr.lower(), "fp16 on 11 refused: %s" % p.stderr)
p = run("trt", "optimize", DYN, "--gpu", "V100", "--tensorrt", "10.5.0")
check(p.returncode == 1 and "sm_75" in p.stderr, "V100 on 10.5 refused: %s" % p.stderr)
# opset newer than the parser: a warning naming both
p, o = js("trt", "optimize", NEWOPS, "--gpu", "T4", "--tensorrt", "8.5.3.1")
check(o and any(n["kind"] == "warning" and "19" in n["text"] and "17" in n["text"] for n in o["notes"]),
      "opset 19 on 8.5 (parser 17): %s" % (o or p.stderr))
p = run("trt", "optimize", DYN, "--gpu", "T4", "--tensorrt", "7.2.3")
check(p.returncode == 4 and "knows no" in p.stderr, "TensorRT 7: unknown to the KB: %s" % p.stderr)

# several targets: which share an engine
lock("a100", "8.6.1.6")
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "t4", "--target", "a100",
          "--target", "h200", "--tensorrt", "8.6.1.6", "--portable-gpus")
check(p.returncode == 1, "t4 refused among them with --portable-gpus: %s" % p.stderr)
p, o = js("trt", "optimize", DYN, "--project", PROJ, "--target", "a100", "--target", "h200",
          "--tensorrt", "8.6.1.6", "--portable-gpus")
check(o and len(o["targets"]) == 2 and o["targets"][0]["shares_with"] == o["targets"][1]["shares_with"],
      "a100 + h200 share an ampere+ engine: %s" % (o or p.stderr))
p = run("trt", "optimize", DYN, "--project", PROJ, "--target", "a100", "--target", "h200", "--tensorrt", "8.6.1.6")
check(p.returncode == 0 and "sm_80: a100" in p.stdout and "sm_90: h200" in p.stdout, "no portability: two engines: %s" % p.stdout)

# ---- --check-command on the triton-deploy README's line ---------------------------------

readme = open(os.path.join(SHARED, "examples", "triton-deploy", "README.md")).read()
start = readme.index("trtexec --onnx=yolov8m_sim.onnx")
line = readme[start:readme.index("timing.cache", start) + len("timing.cache")]
p, o = js("trt", "optimize", "--check-command", line, "--project", PROJ, "--target", "t4")
check(p.returncode == 1 and o, "README line vs 8.5: %s %s" % (p.returncode, p.stderr))
if o:
    ws = [f for f in o["findings"] if f["arg"] == "--workspace=4096"]
    check(ws and ws[0]["state"] == "deprecated" and "--memPoolSize=workspace:" in ws[0]["text"],
          "--workspace deprecated in 8.5: %s" % o["findings"])
    check("--memPoolSize=workspace:4096" in o["rewritten"] and "--workspace" not in o["rewritten"]
          and "--minShapes=input:1x3x640x640" in o["rewritten"], "the line instead: %s" % o["rewritten"])
    check(any(f["arg"].startswith("--shapes=") and "inference run" in f["text"] for f in o["findings"]),
          "--shapes explained: %s" % o["findings"])
p, o = js("trt", "optimize", "--check-command", line, "--tensorrt", "10.13.3.9")
check(p.returncode == 1 and o and o["removed"] == 1 and
      any(f["arg"] == "--workspace=4096" and f["state"] == "removed" for f in o["findings"]),
      "README line vs 10.x: --workspace removed: %s" % (o or p.stderr))
p, o = js("trt", "optimize", "--check-command", "trtexec --onnx=m.onnx --saveEngine=m.plan --fp16",
          "--tensorrt", "10.13.3.9")
check(p.returncode == 0 and o and o["removed"] == 0, "a clean line: 0: %s" % (o or p.stderr))
p = run("trt", "optimize", "--check-command", "trtexec --onnx='m.onnx", "--tensorrt", "10.3")
check(p.returncode == 4 and "quote" in p.stderr, "an open quote: %s %s" % (p.returncode, p.stderr))

# ---- build ---------------------------------------------------------------------------------

FIX = os.path.join(SRC, "tests", "fixtures", "doctor")
BASE = json.load(open(os.path.join(FIX, "healthy", "facts.json")))
GPUS = {"T4": ("Tesla T4", "7.5", "Turing"), "A100": ("NVIDIA A100-SXM4-80GB", "8.0", "Ampere"),
        "H200": ("NVIDIA H200", "9.0", "Hopper"), "3090": ("NVIDIA GeForce RTX 3090", "8.6", "Ampere")}


def node(gpu, trt):
    d = copy.deepcopy(BASE)
    name, cc, arch = GPUS[gpu]
    d["gpus"][0].update(name=name, compute_capability=cc, sm="sm_" + cc.replace(".", ""), architecture=arch)
    if trt:
        lib = copy.deepcopy(d["libraries"][0])
        lib.update(family="nvinfer", name="libnvinfer.so.%s" % trt.split(".")[0],
                   soname="libnvinfer.so.%s" % trt.split(".")[0], dist="tensorrt-libs",
                   path="/srv/venv/lib/python3.12/site-packages/tensorrt_libs/libnvinfer.so.%s" % trt.split(".")[0])
        lib["version"] = {"version": trt, "source": "metadata", "from": "tensorrt-libs %s" % trt}
        lib["versions"] = [lib["version"]]
        d["libraries"].append(lib)
    path = os.path.join(TMP, "node-%s-%s.json" % (gpu, trt))
    json.dump(d, open(path, "w"))
    return path


BINDIR = os.path.join(TMP, "bin")
os.makedirs(BINDIR)
TRTEXEC = os.path.join(BINDIR, "trtexec")


def stand_in(banner, rc=0, write=True):
    with open(TRTEXEC, "w") as f:
        f.write("#!/bin/sh\necho '&&&& RUNNING TensorRT.trtexec [TensorRT v%s] # trtexec' \"$@\"\n" % banner)
        f.write("echo '[I] [TRT] Loaded engine size: 1 MiB'\n")
        if write:
            f.write('for a; do case "$a" in --saveEngine=*) printf "engine-bytes" > "${a#--saveEngine=}";; esac; done\n')
        f.write("echo '&&&& PASSED TensorRT.trtexec'\nexit %d\n" % rc)
    os.chmod(TRTEXEC, 0o755)


WORK = os.path.join(TMP, "work")
os.makedirs(WORK)
shutil.copy(DYN, WORK)
BENV = {"PATH": BINDIR + ":/usr/bin:/bin", "SOURCE_DATE_EPOCH": "1764633600"}
stand_in("8503")
t4 = node("T4", "8.5.3.1")
p = run("trt", "build", "dynbatch.onnx", "--facts", t4, "-o", "m.plan", "--", "--verbose", env=BENV, cwd=WORK)
check(p.returncode == 0 and "[TensorRT v8503]" in p.stdout, "build streams trtexec's output: %s %s" % (p.returncode, p.stderr))
rec = None
try:
    rec = json.load(open(os.path.join(WORK, "m.plan.gpuenv.json")))
except (OSError, ValueError) as e:
    check(False, "the record: %s" % e)
if rec:
    check(list(rec) == ["schema", "tensorrt", "gpu", "compute_capability", "hardware_compatibility",
                        "version_compatible", "precisions", "onnx", "engine_sha256", "trtexec", "built_at"],
          "record keys in order: %s" % list(rec))
    check(rec["schema"] == "gpuenv.engine/1" and rec["tensorrt"] == "8.5.3" and rec["gpu"] == "Tesla T4"
          and rec["compute_capability"] == "7.5" and rec["hardware_compatibility"] == "none"
          and rec["version_compatible"] is False and rec["precisions"] == ["fp16"], "record fields: %s" % rec)
    check(rec["engine_sha256"] == hashlib.sha256(b"engine-bytes").hexdigest(), "engine sha256")
    check(rec["onnx"] == {"path": "dynbatch.onnx", "sha256": hashlib.sha256(open(DYN, "rb").read()).hexdigest()},
          "onnx path and sha256: %s" % rec["onnx"])
    check(rec["trtexec"][0] == TRTEXEC and "--saveEngine=m.plan" in rec["trtexec"] and rec["trtexec"][-1] == "--verbose",
          "argv with the extra args: %s" % rec["trtexec"])
    check(rec["built_at"] == "2025-12-02T00:00:00Z", "built_at from SOURCE_DATE_EPOCH: %s" % rec["built_at"])
check(sorted(os.listdir(WORK)) == ["dynbatch.onnx", "m.plan", "m.plan.gpuenv.json"], "no temporary files: %s" % os.listdir(WORK))
# the record goes with the engine: a failing build leaves neither; the old record is not touched
stand_in("8503", rc=1)
p = run("trt", "build", "dynbatch.onnx", "--facts", t4, "-o", "m.plan", env=BENV, cwd=WORK)
check(p.returncode == 4 and "exit status 1" in p.stderr, "trtexec failing: 4: %s" % p.stderr)
check(not os.path.exists(os.path.join(WORK, "m.plan")),
      "a failed build leaves no engine (the stand-in wrote one before failing)")
check(not os.path.exists(os.path.join(WORK, "m.plan.gpuenv.json")),
      "nor the record of the engine it replaced (it would pass for the missing engine)")
stand_in("8503", write=False)
p = run("trt", "build", "dynbatch.onnx", "--facts", t4, "-o", "n.plan", env=BENV, cwd=WORK)
check(p.returncode == 4 and "wrote no" in p.stderr and not os.path.exists(os.path.join(WORK, "n.plan.gpuenv.json")),
      "no engine written: no record: %s" % p.stderr)
# TensorRT 10 banner, ampere+ on an A100
stand_in("100300")
p, o = js("trt", "build", "dynbatch.onnx", "--facts", node("A100", "10.3.0"), "-o", "a.plan", "--portable-gpus",
          env=BENV, cwd=WORK)
check(p.returncode == 0 and o and o["tensorrt"] == "10.3.0", "10.x banner: %s %s" % (o, p.stderr))
r2 = json.load(open(os.path.join(WORK, "a.plan.gpuenv.json"))) if o else {}
check(r2.get("hardware_compatibility") == "ampere+" and "--hardwareCompatibilityLevel=ampere+" in r2.get("trtexec", []),
      "ampere+ recorded: %s" % r2)
# the target's GPU must be this one
p = run("trt", "build", "dynbatch.onnx", "--facts", t4, "--project", PROJ, "--target", "a100", env=BENV, cwd=WORK)
check(p.returncode == 1 and "sm_80" in p.stderr and "sm_75" in p.stderr, "target a100 on a T4: %s" % p.stderr)
# no trtexec: 4, where it looked
p = run("trt", "build", "dynbatch.onnx", "--facts", t4, env={"PATH": "/nonexistent"}, cwd=WORK)
check(p.returncode == 4 and "/nonexistent" in p.stderr and "TENSORRT_HOME" in p.stderr and "/usr/src/tensorrt/bin" in p.stderr,
      "no trtexec: %s %s" % (p.returncode, p.stderr))
p = run("trt", "build", "dynbatch.onnx", "--facts", t4, env={"PATH": "/nonexistent", "TENSORRT_HOME": TMP}, cwd=WORK)
check(p.returncode == 0, "trtexec from $TENSORRT_HOME/bin: %s" % p.stderr)

# ---- preflight --engine over records x nodes -------------------------------------------------

def oracle(r, gpu, trt):
    """TensorRT's documentation, 'Version Compatibility' and 'Hardware
    Compatibility' (docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/advanced.html):
    an engine runs only on the TensorRT release that built it, unless built
    version-compatible (from 8.6), then on runtimes at least as new as the
    builder, never older; only on the GPU architecture (compute capability)
    it was built on, unless built hardware-compatible: ampere+ runs on
    Ampere and newer (compute capability >= 8.0), same-compute-capability on
    GPUs of the build GPU's compute capability (10.9 release notes)."""
    if trt is None:
        return False
    e, n = vkey(r["tensorrt"])[:3], vkey(trt)[:3]
    if r["version_compatible"]:
        trt_ok = e >= (8, 6) and n >= e
    else:
        trt_ok = e == n
    bcc, gcc = vkey(r["compute_capability"]), vkey(GPUS[gpu][1])
    if r["hardware_compatibility"] == "ampere+":
        hw_ok = gcc >= (8, 0)
    else:
        hw_ok = bcc == gcc
    return trt_ok and hw_ok


GRID = os.path.join(TMP, "grid")
os.makedirs(GRID)
records = []
for bgpu, trt in itertools.product(("T4", "3090", "A100", "H200"), ("8.5.3", "8.6.1", "10.3.0")):
    cc = GPUS[bgpu][1]
    for hw, vc in itertools.product(("none", "ampere+", "same-compute-capability"), (False, True)):
        if trt == "8.5.3" and (hw != "none" or vc):
            continue  # 8.5 builds neither
        if hw == "ampere+" and vkey(cc) < (8, 0):
            continue  # ampere+ is built on sm_80+ only
        if hw == "same-compute-capability" and trt != "10.3.0":
            continue
        records.append({"schema": "gpuenv.engine/1", "tensorrt": trt, "gpu": GPUS[bgpu][0], "compute_capability": cc,
                        "hardware_compatibility": hw, "version_compatible": vc, "precisions": ["fp16"],
                        "onnx": {"path": "m.onnx", "sha256": H}, "engine_sha256": H, "trtexec": ["trtexec"],
                        "built_at": "2026-12-01T00:00:00Z"})
nodes = {(g, t): node(g, t) for g in ("T4", "A100", "H200") for t in ("8.5.3.1", "8.6.1.6", "10.3.0.26", None)}
agree = total = 0
engines = []
for i, r in enumerate(records):
    eng = os.path.join(GRID, "e%d.plan" % i)
    json.dump(r, open(eng + ".gpuenv.json", "w"))
    engines.append(eng)
for (g, t), facts in nodes.items():
    # every record on this node in one run (trt check takes several engines)
    p, o = js("trt", "check", *engines, "--facts", facts)
    wants = [oracle(r, g, t) for r in records]
    check(p.returncode == (0 if all(wants) else 1) and isinstance(o, list) and len(o) == len(records),
          "trt check on %s/%s: %s %s" % (g, t, p.returncode, p.stderr))
    for r, want, got in zip(records, wants, o if isinstance(o, list) else []):
        total += 1
        ok = got["go"] == want and bool(got["reasons"])
        agree += ok
        check(ok, "record %s x node %s/%s: got %s (%s) want %s" % (
            {k: r[k] for k in ("tensorrt", "compute_capability", "hardware_compatibility", "version_compatible")},
            g, t, got["go"], got["reasons"], want))
print("trt check grid: %d of %d record x node cases agree with the oracle (%d records, %d nodes)"
      % (agree, total, len(records), len(nodes)))
# preflight --engine is the same judgement, one engine at a time: one record per node
for k, ((g, t), facts) in enumerate(sorted(nodes.items(), key=str)):
    r = records[(k * 7) % len(records)]
    p, o = js("preflight", "--engine", engines[(k * 7) % len(records)], "--facts", facts)
    want = oracle(r, g, t)
    check(p.returncode == (0 if want else 1) and o and o["go"] == want and o["engine"],
          "preflight --engine %s on %s/%s: %s want %s" % (r, g, t, p.returncode, want))

# the seed's case: built on an RTX 3090 with 8.5.3, run on a T4
seed = os.path.join(GRID, "seed.plan")
json.dump(dict(records[0], tensorrt="8.5.3", gpu=GPUS["3090"][0], compute_capability="8.6"),
          open(seed + ".gpuenv.json", "w"))
p = run("trt", "check", seed, "--facts", nodes[("T4", "8.5.3.1")])
check(p.returncode == 1 and "sm_86" in p.stdout and "8.5.3" in p.stdout and "sm_75" in p.stdout
      and "rebuild on a Tesla T4" in p.stdout and "ampere+" in p.stdout and "needs sm_80+" in p.stdout
      and "not for a Tesla T4" in p.stdout, "the seed's case: %s" % p.stdout)
# no record: 4, what is missing
p = run("preflight", "--engine", os.path.join(GRID, "none.plan"), "--facts", nodes[("T4", "8.5.3.1")])
check(p.returncode == 4 and "no record" in p.stderr and "--getPlanVersionOnly" in p.stderr, "no record: %s" % p.stderr)
# a broken record: 4 with the field
bad = os.path.join(GRID, "bad.plan")
for text, what in (('{"schema": "gpuenv.engine/1"', "not JSON"), ('{"schema": "other/1"}', "schema"),
                   (json.dumps(dict(records[0], compute_capability="sm_86")), "compute_capability"),
                   (json.dumps(dict(records[0], precisions=["fp12"])), "precisions")):
    open(bad + ".gpuenv.json", "w").write(text)
    p = run("trt", "check", bad, "--facts", nodes[("T4", "8.5.3.1")])
    check(p.returncode == 4 and what in p.stderr, "broken record (%s): %s %s" % (what, p.returncode, p.stderr))

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
