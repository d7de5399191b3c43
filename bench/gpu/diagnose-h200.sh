#!/bin/sh
# Real failures made on a real GPU machine, fed to `gpuenv diagnose`: each
# case runs a command that fails the way users' jobs fail (torch on the
# H200 of docs/hardware-results.md), keeps its output, and compares what
# diagnose names with the cause the case was built to produce; clean cases
# (nvidia-smi, collect_env, a training step that works) must give no
# finding. Writes $OUT/summary.txt and one .log/.json per case.
#   usage: bench/gpu/diagnose-h200.sh GPUENV-BINARY [PYTHON]
set -u
BIN=${1:?usage: $0 GPUENV-BINARY [PYTHON]}
PY=${2:-/opt/torch/.venv/bin/python}
OUT=${OUT:-/tmp/diagnose-h200}
mkdir -p "$OUT"
: > "$OUT/summary.txt"
right=0 total=0 fp=0

one() { # NAME EXPECTED-ID|clean COMMAND...
	name=$1 want=$2
	shift 2
	"$@" > "$OUT/$name.log" 2>&1
	"$BIN" diagnose --json "$OUT/$name.log" > "$OUT/$name.json" 2>/dev/null
	found=$("$PY" -c 'import json,sys; print(" ".join(f["id"] for f in json.load(open(sys.argv[1]))["findings"]))' "$OUT/$name.json" 2>/dev/null)
	total=$((total + 1))
	if [ "$want" = clean ]; then
		if [ -z "$found" ]; then verdict=ok; right=$((right + 1)); else verdict="FALSE-POSITIVE"; fp=$((fp + 1)); fi
	else
		case " $found " in *" $want "*) verdict=ok; right=$((right + 1)) ;; *) verdict=MISS ;; esac
	fi
	printf '%-22s want %-24s found %-40s %s\n' "$name" "$want" "${found:-nothing}" "$verdict" >> "$OUT/summary.txt"
}

T="import torch"
one no-cuda-gpus no-cuda-gpus env CUDA_VISIBLE_DEVICES= "$PY" -c "$T; torch.zeros(1).cuda()"
one no-cuda-gpus-minus1 no-cuda-gpus env CUDA_VISIBLE_DEVICES=-1 "$PY" -c "$T; torch.ones(2, device='cuda')"
one invalid-ordinal invalid-device-ordinal "$PY" -c "$T; torch.zeros(1, device='cuda:7')"
one oom cuda-oom "$PY" -c "$T; x = torch.empty(400 * 2**30, dtype=torch.uint8, device='cuda')"
one device-assert device-side-assert env CUDA_LAUNCH_BLOCKING=1 "$PY" -c "$T; a = torch.zeros(3, device='cuda'); i = torch.tensor([5], device='cuda'); print(a[i])"
one cudnn8-missing cudnn-lib-missing "$PY" -c "import ctypes; ctypes.CDLL('libcudnn.so.8')"
one cublas11-missing cuda-lib-missing "$PY" -c "import ctypes; ctypes.CDLL('libcublas.so.11')"
one nvidia-smi clean nvidia-smi
one nvidia-smi-q clean nvidia-smi -q
one collect-env clean "$PY" -m torch.utils.collect_env
one train-step clean "$PY" -c "
$T
m = torch.nn.Linear(1024, 1024).cuda(); o = torch.optim.SGD(m.parameters(), lr=0.1)
for s in range(5):
    x = torch.randn(64, 1024, device='cuda'); l = m(x).pow(2).mean(); o.zero_grad(); l.backward(); o.step()
    print('step', s, 'loss', round(l.item(), 4), 'mem', torch.cuda.memory_allocated())
print(torch.cuda.get_device_name(0), torch.version.cuda, torch.backends.cudnn.version())"
one pip-list clean "$PY" -m pip list
echo "named correctly (clean: no finding): $right of $total; false positives: $fp" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
