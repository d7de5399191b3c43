"""gpuenv triton check: a fixture repository with one healthy model per
backend and one broken model per check, each finding naming its model, file
and line; the healthy repository exits 0; the triton-deploy example (as a GPU
team wrote it) gets the errors Triton's parser gives, each with its line.

The ONNX models are the real torch 2.11 exports of ../shared/testdata/onnx:
conv_dynbatch.onnx (input 'input' FLOAT [batch,3,64,64], output 'logits'
FLOAT [batch,10]) and encoder_dynseq.onnx (input_ids / attention_mask INT64
[batch,seq], logits FLOAT [batch,2])."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
ONNX = os.path.join(SHARED, "testdata", "onnx")
FIX = os.path.join(SRC, "tests", "fixtures", "doctor")
TMP = tempfile.mkdtemp(prefix="gpuenv-triton-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def model(repo, name, config=None, files=(), versions=(1,)):
    d = os.path.join(repo, name)
    os.makedirs(d, exist_ok=True)
    if config is not None:
        with open(os.path.join(d, "config.pbtxt"), "w") as f:
            f.write(config)
    for v in versions:
        os.makedirs(os.path.join(d, str(v)), exist_ok=True)
        for dst, src in files:
            p = os.path.join(d, str(v), dst)
            if src is None:
                open(p, "w").close()
            else:
                shutil.copy(src, p)
    return d


CONV = os.path.join(ONNX, "conv_dynbatch.onnx")
ENC = os.path.join(ONNX, "encoder_dynseq.onnx")

CONV_OK = '''name: "%s"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "input" data_type: TYPE_FP32 dims: [ 3, 64, 64 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 10 ] } ]
dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }
instance_group [ { count: 2 kind: KIND_GPU gpus: [ 0 ] } ]
'''


def record(plan, tensorrt, cc, gpu):
    """The engine record `gpuenv trt build` writes beside a plan (schema
    gpuenv.engine/1, docs/trt.md): it stands in for a TensorRT build, as in
    test_trt_engine.py; the plan itself is opaque to gpuenv."""
    with open(plan + ".gpuenv.json", "w") as f:
        json.dump({"schema": "gpuenv.engine/1", "tensorrt": tensorrt, "gpu": gpu, "compute_capability": cc,
                   "hardware_compatibility": "none", "version_compatible": False, "precisions": ["fp16"],
                   "onnx": {"path": "model.onnx", "sha256": "0" * 64}, "engine_sha256": "0" * 64,
                   "trtexec": ["trtexec", "--onnx=model.onnx", "--fp16"], "built_at": "2026-12-02T13:00:00Z"}, f)


# the server image of the fixtures: TensorRT 10.8.0.43 by the KB's row (Triton's
# Release Compatibility Matrix), CUDA 12.8, runs on the H200 snapshot's driver 580
IMAGE = "nvcr.io/nvidia/tritonserver:25.01-trtllm-python-py3"
H200 = os.path.join(FIX, "h200-2026-11-29", "facts.json")


def healthy(repo):
    model(repo, "conv", CONV_OK % "conv", [("model.onnx", CONV)])
    model(repo, "encoder", '''backend: "onnxruntime"
max_batch_size: 4
input [
  { name: "input_ids" data_type: TYPE_INT64 dims: [ -1 ] },
  { name: "attention_mask" data_type: TYPE_INT64 dims: [ -1 ] }
]
output { name: "logits" data_type: TYPE_FP32 dims: [ 2 ] }
''', [("model.onnx", ENC)])
    model(repo, "autocomplete", None, [("model.onnx", CONV)])
    model(repo, "engine", '''platform: "tensorrt_plan"
max_batch_size: 8
input [ { name: "images" data_type: TYPE_FP16 dims: [ 3, 640, 640 ] } ]
output [ { name: "boxes" data_type: TYPE_FP32 dims: [ -1, 6 ] } ]
instance_group [ { kind: KIND_GPU } ]
''', [("model.plan", None)])
    # built for the H200 with the image's TensorRT
    record(os.path.join(repo, "engine", "1", "model.plan"), "10.8.0.43", "9.0", "NVIDIA H200")
    model(repo, "pre", '''backend: "python"
max_batch_size: 0
input [ { name: "raw" data_type: TYPE_UINT8 dims: [ -1 ] } ]
output [ { name: "input" data_type: TYPE_FP32 dims: [ 1, 3, 64, 64 ] } ]
''', [("model.py", None)])
    model(repo, "pipeline", '''platform: "ensemble"
max_batch_size: 0
input [ { name: "RAW" data_type: TYPE_UINT8 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 1, 10 ] } ]
ensemble_scheduling {
  step [
    { model_name: "pre" model_version: -1 input_map { key: "raw" value: "RAW" } output_map { key: "input" value: "img" } },
    { model_name: "conv" model_version: -1 input_map { key: "input" value: "img" } output_map { key: "logits" value: "OUT" } }
  ]
}
''', [])


# ---- a healthy repository: exit 0, every model loads, info where Triton fills in ----
GOOD = os.path.join(TMP, "good")
healthy(GOOD)
r = run("triton", "check", GOOD, "--json", "--facts", H200, "--image", IMAGE)
check(r.returncode == 0, "healthy repository exits 0: %d %s %s" % (r.returncode, r.stdout[-2000:], r.stderr))
rep = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
check(rep.get("errors") == 0 and len(rep.get("models", [])) == 6 and all(m["loads"] for m in rep.get("models", [])),
      "six models, all load: %s" % rep.get("models"))
ids = {(f["model"], f["id"]) for f in rep.get("findings", [])}
check(("autocomplete", "auto-complete") in ids, "a model without config.pbtxt: Triton auto-completes it: %s" % ids)
check(rep.get("image") == IMAGE and rep.get("image_tensorrt") == "10.8.0.43", "the image's TensorRT: %s" %
      {k: rep.get(k) for k in ("image", "image_tensorrt")})
check(not [f for f in rep.get("findings", []) if f["id"].startswith(("plan-", "image-"))],
      "the plan built with the image's TensorRT for the node's GPU: no plan or image finding: %s" % ids)
backends = {m["name"]: m["backend"] for m in rep.get("models", [])}
check(backends.get("conv") == "onnxruntime" and backends.get("engine") == "tensorrt" and
      backends.get("pre") == "python" and backends.get("pipeline") == "ensemble", "backends: %s" % backends)
r = run("triton", "check", GOOD)
check(r.returncode == 0 and "6 models, 0 errors" in r.stdout, "text summary: %s" % r.stdout[-300:])

# a model with a fixed batch dimension (input 'input' FLOAT [1,3,64,64]),
# protobuf written by hand (field numbers of onnx.proto) so the test needs
# nothing beyond Python
def _varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _f(num, payload):  # a length-delimited field
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _i(num, v):  # a varint field
    return _varint(num << 3) + _varint(v)


def _value_info(name, dims):
    shape = b"".join(_f(1, _i(1, d)) for d in dims)
    return _f(1, name.encode()) + _f(2, _f(1, _i(1, 1) + _f(2, shape)))


graph = (_f(1, _f(1, b"input") + _f(2, b"out") + _f(4, b"Relu")) + _f(2, b"g") +
         _f(11, _value_info("input", [1, 3, 64, 64])) + _f(12, _value_info("out", [1, 3, 64, 64])))
with open(os.path.join(TMP, "fixed.onnx"), "wb") as fh:
    fh.write(_i(1, 8) + _f(8, _i(2, 18)) + _f(7, graph))

# ---- one broken model per check --------------------------------------------------------
BAD = os.path.join(TMP, "bad")
healthy(BAD)
cases = {}  # model -> (finding id, line of the config it points at, or 0)


def broken(name, config, files, fid, line, versions=(1,)):
    model(BAD, name, config, files, versions)
    cases[name] = (fid, line)


broken("wrong-input-name", (CONV_OK % "wrong-input-name").replace('name: "input"', 'name: "images"'),
       [("model.onnx", CONV)], "input-name", 4)
broken("batch-fixed", '''max_batch_size: 8
platform: "onnxruntime_onnx"
input [ { name: "input" data_type: TYPE_FP32 dims: [ 3, 64, 64 ] } ]
''', [("model.onnx", os.path.join(TMP, "fixed.onnx"))], "batch-dim-fixed", 3)
broken("platform-file", '''platform: "onnxruntime_onnx"
max_batch_size: 8
''', [("model.plan", None)], "platform-file", 1)
broken("no-version", CONV_OK % "no-version", [], "no-version", 0, versions=())
broken("wrong-type", (CONV_OK % "wrong-type").replace("TYPE_FP32 dims: [ 3", "TYPE_FP16 dims: [ 3"),
       [("model.onnx", CONV)], "tensor-type", 4)
broken("wrong-dims", (CONV_OK % "wrong-dims").replace("[ 3, 64, 64 ]", "[ 3, 224, 224 ]"),
       [("model.onnx", CONV)], "tensor-dims", 4)
broken("gpu-missing", (CONV_OK % "gpu-missing").replace("gpus: [ 0 ]", "gpus: [ 0, 3 ]"),
       [("model.onnx", CONV)], "instance-gpu", 7)
broken("preferred-too-big", (CONV_OK % "preferred-too-big").replace("[ 4, 8 ]", "[ 4, 16 ]"),
       [("model.onnx", CONV)], "preferred-batch-size", 6)
broken("unparseable", 'name: "unparseable"\nmax_batch_size 8\n', [("model.onnx", CONV)], "config-syntax", 2)
broken("bad-ensemble", '''platform: "ensemble"
max_batch_size: 0
input [ { name: "RAW" data_type: TYPE_UINT8 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 1, 10 ] } ]
ensemble_scheduling {
  step [ { model_name: "missing_model" input_map { key: "raw" value: "RAW" } output_map { key: "y" value: "OUT" } } ]
}
''', [], "ensemble-model", 6)
broken("name-mismatch", CONV_OK % "other", [("model.onnx", CONV)], "config-name", 1)
PLAN_CFG = '''platform: "tensorrt_plan"
max_batch_size: 8
instance_group [ { kind: KIND_GPU } ]
'''
# a plan built with another TensorRT than the image's (for the node's GPU)
broken("plan-other-trt", PLAN_CFG, [("model.plan", None)], "plan-tensorrt", 0)
record(os.path.join(BAD, "plan-other-trt", "1", "model.plan"), "10.3.0.26", "9.0", "NVIDIA H200")
# a plan with the image's TensorRT, built for another GPU than the node's
broken("plan-other-gpu", PLAN_CFG, [("model.plan", None)], "plan-gpu", 0)
record(os.path.join(BAD, "plan-other-gpu", "1", "model.plan"), "10.8.0.43", "8.6", "NVIDIA GeForce RTX 3090")

r = run("triton", "check", BAD, "--json", "--facts", H200, "--image", IMAGE)
check(r.returncode == 1, "a broken repository exits 1: %d %s" % (r.returncode, r.stderr))
rep = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
loads = {m["name"]: m["loads"] for m in rep.get("models", [])}
for name in ("conv", "encoder", "autocomplete", "engine", "pre", "pipeline"):
    check(loads.get(name) is True, "%s still loads beside the broken ones" % name)
for name, (fid, line) in cases.items():
    fs = [f for f in rep.get("findings", []) if f["model"] == name and f["severity"] == "error"]
    check(loads.get(name) is False, "%s would fail to load" % name)
    hit = [f for f in fs if f["id"] == fid]
    check(hit, "%s: finding %s among %s" % (name, fid, [(f["id"], f["message"]) for f in fs]))
    if hit and line:
        check(hit[0]["line"] == line and hit[0]["file"].endswith(name + "/config.pbtxt"),
              "%s: %s at config.pbtxt:%s, got %s:%s" % (name, fid, line, hit[0]["file"], hit[0]["line"]))
    if hit:
        check(hit[0]["fix"], "%s: %s has a fix" % (name, fid))
msg = {f["model"]: f["message"] for f in rep.get("findings", [])
       if f["severity"] == "error" and cases.get(f["model"], ("",))[0] == f["id"]}
check("unexpected inference input 'images', allowed inputs are: input" in msg.get("wrong-input-name", ""),
      "Triton's own words for a wrong input name: %s" % msg.get("wrong-input-name"))
check("expecting TYPE_FP32" in msg.get("wrong-type", ""), "the type the model wants: %s" % msg.get("wrong-type"))
check("the node has 1 GPU" in msg.get("gpu-missing", ""), "the node's GPU count: %s" % msg.get("gpu-missing"))
# the plan: both TensorRT releases, the image, and the tags whose TensorRT built it
m = msg.get("plan-other-trt", "")
fx = [f["fix"] for f in rep.get("findings", []) if f["model"] == "plan-other-trt" and f["id"] == "plan-tensorrt"]
check("TensorRT 10.3.0.26" in m and "TensorRT 10.8.0.43" in m and IMAGE in m and
      "plan-other-trt/1/model.plan" in str([f["file"] for f in rep.get("findings", []) if f["id"] == "plan-tensorrt"]),
      "the plan's finding names both TensorRT releases, the image and the file: %s" % m)
check(fx and "TensorRT 10.8.0.43" in fx[0] and "nvcr.io/nvidia/tritonserver:24.08-trtllm-python-py3" in fx[0],
      "the fix: rebuild with the image's TensorRT, or the tag whose TensorRT (10.3.0) built it: %s" % fx)
check("sm_86" in msg.get("plan-other-gpu", "") and "sm_90" in msg.get("plan-other-gpu", ""),
      "a plan for another GPU: lib/trt's reason, both compute capabilities: %s" % msg.get("plan-other-gpu"))

# the image the KB has no TensorRT for: said so, no error (the engine model loads)
r = run("triton", "check", GOOD, "--json", "--image", "nvcr.io/nvidia/tritonserver:24.10-py3")
rep2 = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
unk = [f for f in rep2.get("findings", []) if f["id"] == "plan-tensorrt"]
check(r.returncode == 0 and rep2.get("image_tensorrt") is None and unk and unk[0]["severity"] == "info" and
      "unknown" in unk[0]["message"], "no TensorRT in the KB for 24.10-py3: unknown, not a finding: %d %s" %
      (r.returncode, unk))
# an image the KB does not know: a warning, the models still checked
r = run("triton", "check", GOOD, "--json", "--image", "nvcr.io/nvidia/tritonserver:99.01-py3")
rep2 = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
check(r.returncode == 0 and [f for f in rep2.get("findings", []) if f["id"] == "image-unknown" and f["model"] is None],
      "an unknown image: a warning about the repository: %d %s" % (r.returncode, rep2.get("findings")))

# ---- the image against the node: preflight --image's verdict, in its words ----------
# tritonserver 25.08 (CUDA 13.0, no driver rule in its notes: the CUDA rule) on a
# driver 470 node
SLOW = os.path.join(FIX, "driver470-cu121", "facts.json")
r = run("triton", "check", GOOD, "--json", "--facts", SLOW, "--image", "nvcr.io/nvidia/tritonserver:25.08-py3")
rep2 = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
node = [f for f in rep2.get("findings", []) if f["id"] == "image-node"]
pf = run("preflight", "--json", "--facts", SLOW, "--image", "nvcr.io/nvidia/tritonserver:25.08-py3")
pfj = json.loads(pf.stdout) if pf.stdout.strip().startswith("{") else {}
pf_errors = [v for v in pfj.get("verdicts", []) if v["severity"] == "error"]
check(r.returncode == 1 and len(node) == 1 and node[0]["severity"] == "error" and node[0]["model"] is None,
      "an image the node cannot run: one error about the repository: %d %s" % (r.returncode, rep2.get("findings")))
check(pf.returncode == 1 and pf_errors and node and all(v["message"] in node[0]["message"] for v in pf_errors) and
      node[0]["fix"] == pf_errors[0]["fix"], "preflight's wording and fix: %s / %s" % (node, pf_errors))
r = run("triton", "check", GOOD, "--facts", SLOW, "--image", "nvcr.io/nvidia/tritonserver:25.08-py3")
check("image-node" in r.stdout and "driver 470.82.01" in r.stdout, "the text names the finding: %s" % r.stdout[:600])

# without --facts the GPU check is not made (no node to judge)
r = run("triton", "check", BAD, "--json")
rep2 = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
check(not [f for f in rep2.get("findings", []) if f["id"] == "instance-gpu"], "no GPU finding without --facts")

# ---- the triton-deploy example, as written ---------------------------------------------
EX = os.path.join(SHARED, "examples", "triton-deploy", "models")
r = run("triton", "check", EX, "--json")
rep = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
check(r.returncode == 1, "the example would not load: %d" % r.returncode)
got = {(f["model"], f["id"], f["line"]) for f in rep.get("findings", [])}
check(("resnet50", "config-syntax", 18) in got and ("yolov8m", "config-syntax", 1) in got,
      "dynamic_batching [ ... ] named at its line in both configs: %s" % got)

# ---- bad input ------------------------------------------------------------------------------
r = run("triton", "check", os.path.join(TMP, "nope"))
check(r.returncode == 4 and "no such folder" in r.stderr, "missing repository: exit 4: %s" % r.stderr)
r = run("triton", "check")
check(r.returncode == 2, "no repository: usage error")
r = run("triton", "check", "--help")
check(r.returncode == 0 and "exit status" in r.stdout, "--help")

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
