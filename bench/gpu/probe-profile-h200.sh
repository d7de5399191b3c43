#!/bin/bash
# On the H200 machine, issue 26 item 3: where `gpuenv probe --json` spends
# its time, thread by thread (probe --profile, docs/profile.md), beside the
# NVML floor (bench/gpu/nvml_floor.c) and the whole process's wall time
# (bench/runstat.c).
#
#   bench/gpu/probe-profile-h200.sh GPUENV RUNSTAT NVML_FLOOR RUNS
#
# Runs probe --json --profile RUNS times (after 3 unrecorded runs) and
# prints, per span (phase, thread), the median start and end in ms from the
# recorder's start, then the median of the traces' ends and the process
# times from runstat for the same command with and without --profile.
set -u
bin=$1 runstat=$2 floor=$3 runs=$4
out=${OUT:-/tmp/probe-profile}
mkdir -p "$out/traces"
export VIRTUAL_ENV=${VIRTUAL_ENV:-/opt/torch/.venv}
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for i in 1 2 3; do "$bin" probe --json > /dev/null; done
for i in $(seq 1 "$runs"); do
	"$bin" probe --json --profile "$out/traces/$i.json" > /dev/null || exit 1
done
"$runstat" -n "$runs" -w 2 -l "nvml-floor" -- "$floor"
"$runstat" -n "$runs" -w 2 -l "probe--json" -- "$bin" probe --json
"$runstat" -n "$runs" -w 2 -l "probe--json--profile" -- "$bin" probe --json --profile "$out/p.json"
"$runstat" -n "$runs" -w 2 -l "version" -- "$bin" --version
python3 - "$out/traces" <<'PY'
import collections, glob, json, os, statistics, sys
spans = collections.defaultdict(list)
ends = []
for p in glob.glob(os.path.join(sys.argv[1], "*.json")):
    d = json.load(open(p))
    names = {e["tid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("ph") == "M" and e.get("name") == "thread_name"}
    xs = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    seen = collections.Counter()
    for e in xs:
        k = (e["args"]["phase"], names.get(e["tid"], "?"))
        seen[k] += 1
        spans[k + (seen[k],)].append((e["ts"] / 1000, (e["ts"] + e["dur"]) / 1000))
    ends.append(max(e["ts"] + e["dur"] for e in xs) / 1000)
print("| span (thread) | start ms | end ms | length ms |")
print("|---|---|---|---|")
for k, v in sorted(spans.items(), key=lambda kv: statistics.median(s for s, _ in kv[1])):
    s = statistics.median(a for a, _ in v); e = statistics.median(b for _, b in v)
    print("| %s (%s)%s | %.2f | %.2f | %.2f |" % (k[0], k[1], "" if k[2] == 1 else " #%d" % k[2], s, e,
          statistics.median(b - a for a, b in v)))
print("traces: %d, the last span's end: median %.2f ms (%.2f-%.2f)" % (len(ends), statistics.median(ends), min(ends), max(ends)))
PY
