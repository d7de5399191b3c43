#!/bin/sh
# Issue 20 item 2 (one typed path for the machine): `gpuenv probe --json` and
# `gpuenv doctor` of the baseline and of this tree, side by side, both
# release builds, timed the same way (bench/runstat.c, interleaved rounds).
#
#   sh bench/probe-shape.sh [--base REV] [--runs N] [--rounds R] [--work DIR]
#
# --base REV   the baseline commit (default d0b4ece3, the tree before the change)
# --runs N     runs per command and round (default 30); --rounds R (default 3)
# --work DIR   where the baseline worktree and both builds go
#              (default /tmp/gpuenv-probe-shape; reused by later runs)
# Commands: probe --json and doctor of this machine; probe --json of the
# H200 test tree (tests/fixtures/hw/h200) with the fake NVML
# (tests/fixtures/fake_nvml.c, scenario h200) and doctor --facts of that
# snapshot.  Before timing, the script checks that both builds print the
# same facts document (taken_at and probe_ms aside) for both machines, and
# the same doctor verdicts.  Prints one line per (round, build, command)
# and a Markdown table of the medians over the rounds.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
BASE=d0b4ece3 RUNS=30 ROUNDS=3 W=/tmp/gpuenv-probe-shape
while [ $# -gt 0 ]; do
	case "$1" in
	--base) BASE=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--work) W=$2; shift 2 ;;
	-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "probe-shape.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
mkdir -p "$W"
[ -d "$W/base" ] || git worktree add --detach "$W/base" "$BASE" >/dev/null
[ -f "$W/base-build/build.ninja" ] || meson setup "$W/base-build" "$W/base" --buildtype=release >/dev/null
[ -f "$W/this-build/build.ninja" ] || meson setup "$W/this-build" "$ROOT" --buildtype=release >/dev/null
ninja -C "$W/base-build" gpuenv >/dev/null
ninja -C "$W/this-build" gpuenv >/dev/null
cc -O2 -o "$W/runstat" bench/runstat.c
cc -O2 -shared -fPIC -Wno-missing-prototypes -o "$W/libfake-nvml.so" tests/fixtures/fake_nvml.c
A=$W/base-build/gpuenv B=$W/this-build/gpuenv
H200=$ROOT/tests/fixtures/hw/h200
export FAKE_NVML_SCENARIO=h200

# the same document from both builds (taken_at and probe_ms differ by run)
strip() { python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("taken_at"); d.pop("probe_ms"); print(json.dumps(d))'; }
for who in A B; do
	eval bin=\$$who
	"$bin" probe --json | strip >"$W/$who.here.json"
	"$bin" probe --json --root "$H200" --nvml-lib "$W/libfake-nvml.so" >"$W/$who.fake.raw.json"
	strip <"$W/$who.fake.raw.json" >"$W/$who.fake.json"
	"$bin" doctor --json >"$W/$who.doctor.json" || true
	"$bin" doctor --json --facts "$W/$who.fake.raw.json" >"$W/$who.doctor-fake.json" || true
done
for x in here fake doctor doctor-fake; do
	if cmp -s "$W/A.$x.json" "$W/B.$x.json"; then
		echo "# same output ($x): yes"
	else
		echo "# same output ($x): NO (diff $W/A.$x.json $W/B.$x.json)"
	fi
done
cp "$W/B.fake.raw.json" "$W/fake.json"

echo "# $(date -u) $(uname -m) $(nproc) CPUs; base $BASE vs $(git rev-parse --short HEAD)$(git diff --quiet || echo +changes)"
for r in $(seq 1 "$ROUNDS"); do
	for who in A B; do
		eval bin=\$$who
		"$W/runstat" -n "$RUNS" -w 2 -l "r$r $who probe --json" -- "$bin" probe --json
		"$W/runstat" -n "$RUNS" -w 2 -l "r$r $who probe --json (fake NVML)" -- "$bin" probe --json \
			--root "$H200" --nvml-lib "$W/libfake-nvml.so"
		"$W/runstat" -n "$RUNS" -w 2 -l "r$r $who doctor" -- "$bin" doctor
		"$W/runstat" -n "$RUNS" -w 2 -l "r$r $who doctor --facts (fake NVML)" -- "$bin" doctor \
			--facts "$W/fake.json"
	done
done | tee "$W/runs.txt"
python3 - "$W/runs.txt" "$BASE" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    j = json.loads(line)
    r, who, cmd = j["label"].split(" ", 2)
    rows.setdefault(cmd, {}).setdefault(who, []).append(j["median_s"] * 1e3)
print("\n| command | %s (ms) | this tree (ms) | change |" % sys.argv[2])
print("|---|---|---|---|")
for cmd, v in rows.items():
    a, b = statistics.median(v["A"]), statistics.median(v["B"])
    print("| `gpuenv %s` | %.2f | %.2f | %+.0f%% |" % (cmd, a, b, (b - a) / a * 100))
EOF
