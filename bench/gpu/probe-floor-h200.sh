#!/bin/bash
# On the H200 machine, issue 26 items 3 and 4: gpuenv probe against the NVML
# floor (bench/gpu/nvml_floor.c) and the fatbin listing of libtorch_cuda.so,
# for several builds of gpuenv side by side, interleaved per round (A B C A B
# C ...), so that the machine's drift falls on all of them alike.
#
#   bench/gpu/probe-floor-h200.sh RUNSTAT NVML_FLOOR RUNS ROUNDS LABEL=GPUENV...
#
# Prints one JSON line per (round, build, command) from bench/runstat.c, then
# a Markdown table of the medians over rounds and each build's ratio of
# probe --json to the floor.  The --gpus-only (NVML and sysfs alone) and
# --no-fatbin rows split the probe's time by subtraction.
set -u
runstat=$1 floor=$2 runs=$3 rounds=$4
shift 4
py=/opt/torch/.venv/bin/python
site=$($py -c 'import site; print(site.getsitepackages()[0])')
lt="$site/torch/lib/libtorch_cuda.so"
out=${OUT:-/tmp/probe-floor}
mkdir -p "$out"
: > "$out/lines.json"
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for r in $(seq 1 "$rounds"); do
	"$runstat" -n "$runs" -w 2 -l "r$r nvml-floor floor" -- "$floor" | tee -a "$out/lines.json"
	for b in "$@"; do
		lab=${b%%=*} bin=${b#*=}
		export VIRTUAL_ENV=/opt/torch/.venv
		"$runstat" -n "$runs" -w 2 -l "r$r $lab probe--json" -- "$bin" probe --json | tee -a "$out/lines.json"
		"$runstat" -n "$runs" -w 2 -l "r$r $lab probe--json--gpus-only" -- "$bin" probe --json --gpus-only | tee -a "$out/lines.json"
		"$runstat" -n "$runs" -w 2 -l "r$r $lab probe--json--no-fatbin" -- "$bin" probe --json --no-fatbin | tee -a "$out/lines.json"
		"$runstat" -n "$runs" -w 2 -l "r$r $lab probe" -- "$bin" probe | tee -a "$out/lines.json"
		"$runstat" -n "$runs" -w 2 -l "r$r $lab doctor" -- "$bin" doctor | tee -a "$out/lines.json"
		"$runstat" -n "$runs" -w 2 -l "r$r $lab fatbin" -- "$bin" debug fatbin --elf "$lt" | tee -a "$out/lines.json"
	done
done
python3 - "$out/lines.json" <<'PY'
import json, statistics, sys, collections
med = collections.defaultdict(list)
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    _, build, cmd = d["label"].split(" ", 2)
    med[(build, cmd)].append(d["median_s"] * 1000)
builds = sorted({b for b, _ in med if b != "nvml-floor"}, key=lambda b: list(dict.fromkeys(k[0] for k in med)).index(b))
floor = statistics.median(med[("nvml-floor", "floor")])
print("\n| command | " + " | ".join(builds) + " |")
print("|---|" + "---|" * len(builds))
for cmd in ("probe--json", "probe--json--gpus-only", "probe--json--no-fatbin", "probe", "doctor", "fatbin"):
    print("| %s | " % cmd + " | ".join("%.1f" % statistics.median(med[(b, cmd)]) for b in builds) + " |")
print("| NVML floor | %.1f |" % floor)
for b in builds:
    print("%s: probe --json / floor = %.2f" % (b, statistics.median(med[(b, "probe--json")]) / floor))
PY
