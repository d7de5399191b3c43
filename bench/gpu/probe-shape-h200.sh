#!/bin/bash
# On the H200 machine: issue 20 item 2 (the probe fills the typed facts; no
# JSON round trip inside doctor) timed against the baseline, as
# bench/probe-shape.sh does on a machine without a GPU.
#
#   bench/gpu/probe-shape-h200.sh BASE_GPUENV THIS_GPUENV [RUNS] [ROUNDS]
#
# BASE_GPUENV: a release build of d0b4ece3; THIS_GPUENV: a release build of
# this branch (both `meson setup B --buildtype=release && ninja -C B gpuenv`).
# First checks that both print the same facts document (taken_at and
# probe_ms aside) with and without --deep, and the same doctor verdicts;
# then times, interleaved per round (A B A B ...), with bench/runstat.c:
# probe --json, probe --json --deep, probe (text), doctor, and doctor
# --facts of this machine's snapshot.  Prints one JSON line per (round,
# build, command), then a Markdown table of the medians over the rounds.
set -u
cd "$(dirname "$0")/../.."
A=$1 B=$2 RUNS=${3:-30} ROUNDS=${4:-3}
OUT=${OUT:-/tmp/probe-shape-h200}
mkdir -p "$OUT"
cc -O2 -o "$OUT/runstat" bench/runstat.c || exit 1
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

same() { # label, command args...
	local label=$1
	shift
	"$A" "$@" | sed '/"taken_at"\|"probe_ms"/d' >"$OUT/A.json"
	"$B" "$@" | sed '/"taken_at"\|"probe_ms"/d' >"$OUT/B.json"
	if cmp -s "$OUT/A.json" "$OUT/B.json"; then
		echo "# same output ($label): yes"
	else
		echo "# same output ($label): NO"
		diff "$OUT/A.json" "$OUT/B.json" | head -20
	fi
}
same "probe --json" probe --json
same "probe --json --deep" probe --json --deep
same "probe --json --all-binaries" probe --json --all-binaries
same "doctor --json" doctor --json
"$B" probe --json >"$OUT/h200.json"

for r in $(seq 1 "$ROUNDS"); do
	for who in A B; do
		bin=${!who}
		"$OUT/runstat" -n "$RUNS" -w 2 -l "r$r $who probe --json" -- "$bin" probe --json
		"$OUT/runstat" -n "$RUNS" -w 2 -l "r$r $who probe --json --deep" -- "$bin" probe --json --deep
		"$OUT/runstat" -n "$RUNS" -w 2 -l "r$r $who probe" -- "$bin" probe
		"$OUT/runstat" -n "$RUNS" -w 2 -l "r$r $who doctor" -- "$bin" doctor
		"$OUT/runstat" -n "$RUNS" -w 2 -l "r$r $who doctor --facts" -- "$bin" doctor --facts "$OUT/h200.json"
	done
done | tee "$OUT/runs.txt"
python3 - "$OUT/runs.txt" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        j = json.loads(line)
        r, who, cmd = j["label"].split(" ", 2)
        rows.setdefault(cmd, {}).setdefault(who, []).append(j["median_s"] * 1e3)
print("\n| command (H200) | d0b4ece3 (ms) | this tree (ms) | change |")
print("|---|---|---|---|")
for cmd, v in rows.items():
    a, b = statistics.median(v["A"]), statistics.median(v["B"])
    print("| `gpuenv %s` | %.2f | %.2f | %+.0f%% |" % (cmd, a, b, (b - a) / a * 100))
EOF
