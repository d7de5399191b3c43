#!/bin/sh
# gpuenv trt inspect on models torch exports on the GPU machine (issue 24,
# "What must show"; docs/trt.md, docs/hardware-results.md).  The machine's
# torch (/opt/torch/.venv) exports, with both exporters (torch.onnx.export
# dynamo=False: TorchScript, one file; dynamo=True: IR 10, weights in
# MODEL.onnx.data):
#   conv     a conv net, dynamic batch            input [batch, 3, 64, 64]
#   encoder  a TransformerEncoderLayer, dynamic seq  input_ids, attention_mask [batch, seq]
#   big      one 16384 x 16384 Linear (1 GiB of FP32 weights), dynamic batch
# Each model is read by `gpuenv trt inspect --json` and, when `import onnx`
# works in that python, by onnx.load(load_external_data=False) (the oracle of
# tests/cli/onnx_oracle.py); the two are compared and the inspect times (the
# median of 20 runs, build/runstat) printed.  TensorRT is not needed (and not
# on that machine).
# usage, from the repository root with the release build in build/:
#   sh bench/gpu/trt-inspect-h200.sh        (OUT: folder for the results)
set -u
R=$(pwd)
G=${GPUENV:-$R/build/gpuenv}
RUNSTAT=$R/build/runstat
PY=${PY:-/opt/torch/.venv/bin/python}
O=${OUT:-/tmp/trt-inspect-h200}; mkdir -p "$O"
W=/tmp/gpuenv-trt-inspect; rm -rf "$W"; mkdir -p "$W"
{
	date -u +%FT%TZ; nproc; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
	"$PY" -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
	"$PY" -c 'import onnx; print("onnx", onnx.__version__)' 2>&1 | tail -1
	"$PY" -c 'import onnxscript; print("onnxscript", onnxscript.__version__)' 2>&1 | tail -1
	command -v trtexec || echo "trtexec: not on PATH"
	"$PY" -c 'import tensorrt' 2>&1 | tail -1
	"$G" --version
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"

# ---- export ----
"$PY" - "$W" > "$O/export.txt" 2>&1 <<'EOPY'
import os, sys, time, traceback
import torch
from torch import nn

out = sys.argv[1]

class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1, stride=2)
        self.fc = nn.Linear(32, 10)
    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = torch.relu(self.c2(x))
        return self.fc(x.mean(dim=(2, 3)))

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
        self.head = nn.Linear(64, 2)
    def forward(self, input_ids, attention_mask):
        h = self.layer(self.emb(input_ids), src_key_padding_mask=attention_mask == 0)
        return self.head(h.mean(dim=1))

class Big(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16384, 16384, bias=False)
    def forward(self, x):
        return self.fc(x)

B = torch.export.Dim("batch", min=1, max=64) if hasattr(torch, "export") else None
S = torch.export.Dim("seq", min=2, max=512) if hasattr(torch, "export") else None
ids = torch.randint(0, 1000, (2, 16)); mask = torch.ones(2, 16, dtype=torch.int64)
cases = {
    "conv": (Conv(), (torch.randn(2, 3, 64, 64),), ["input"], ["logits"],
             {"input": {0: "batch"}, "logits": {0: "batch"}}, {"x": {0: B}}),
    "encoder": (Encoder(), (ids, mask), ["input_ids", "attention_mask"], ["logits"],
                {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                 "logits": {0: "batch"}},
                {"input_ids": {0: B, 1: S}, "attention_mask": {0: B, 1: S}}),
    "big": (Big(), (torch.randn(2, 16384),), ["input"], ["y"],
            {"input": {0: "batch"}, "y": {0: "batch"}}, {"x": {0: B}}),
}
for name, (m, args, ins, outs, axes, shapes) in cases.items():
    m.eval()
    for dynamo in (False, True):
        p = os.path.join(out, "%s%s.onnx" % (name, "_dynamo" if dynamo else ""))
        t0 = time.monotonic()
        try:
            if dynamo:
                torch.onnx.export(m, args, p, input_names=ins, output_names=outs, dynamo=True,
                                  dynamic_shapes=shapes, opset_version=18)
            else:
                torch.onnx.export(m, args, p, input_names=ins, output_names=outs, dynamo=False,
                                  dynamic_axes=axes, opset_version=18)
            print("exported %s in %.1f s: %d bytes%s" % (p, time.monotonic() - t0, os.path.getsize(p),
                  ", data %d bytes" % os.path.getsize(p + ".data") if os.path.exists(p + ".data") else ""))
        except Exception:
            print("EXPORT FAILED %s (dynamo=%s):" % (name, dynamo))
            traceback.print_exc()
EOPY
cat "$O/export.txt" | grep -v "^ " | tail -20

# ---- inspect, compare, time ----
if ! ls "$W"/*.onnx > /dev/null 2>&1; then
	echo "no model was exported: see $O/export.txt"
	exit 1
fi
for m in "$W"/*.onnx; do
	b=$(basename "$m" .onnx)
	"$G" trt inspect --json "$m" > "$O/$b.json" 2> "$O/$b.err"
	echo "$b: gpuenv trt inspect exit $?"
	"$G" trt inspect "$m" > "$O/$b.txt" 2>&1
	if [ -x "$RUNSTAT" ]; then
		"$RUNSTAT" -n 20 -w 2 -l "trt inspect $b" -- "$G" trt inspect --json "$m" | tee -a "$O/timings.txt"
	fi
done
"$PY" - "$W" "$O" "$R/tests/cli" <<'EOPY' | tee "$O/compare.txt"
import glob, json, os, sys
w, o, tests = sys.argv[1:4]
sys.path.insert(0, tests)
try:
    import onnx
    import onnx_oracle
except ImportError as e:
    print("oracle: onnx is not importable here (%s): gpuenv's reading is shown, not compared" % e)
    onnx = None
bad = 0
for p in sorted(glob.glob(os.path.join(w, "*.onnx"))):
    b = os.path.basename(p)[:-5]
    try:
        j = json.load(open(os.path.join(o, b + ".json")))
    except ValueError:
        print("%s: gpuenv gave no JSON: %s" % (b, open(os.path.join(o, b + ".err")).read().strip()))
        bad += 1
        continue
    ext = j["initializers"]["external"]
    print("%s: IR %d, opset %s, producer %r, inputs %s, %d nodes, %d operator types, "
          "%d initializers (%d bytes inside, %d external in %d files)" % (
              b, j["ir_version"], j["opset"], j["producer"],
              [(v["name"], v["dtype"], v["shape"]) for v in j["inputs"]], j["nodes"], len(j["operators"]),
              j["initializers"]["count"], j["initializers"]["bytes"], ext["bytes"], len(ext["files"])))
    if onnx:
        d = onnx_oracle.diff(onnx_oracle.ours(j), onnx_oracle.oracle(onnx.load(p, load_external_data=False)))
        print("  onnx %s: %s" % (onnx.__version__, "equal" if not d else "DIFFERS: " + "; ".join(d)))
        bad += bool(d)
print("compare: %d model(s) differ or failed" % bad)
EOPY
echo "results in $O"
