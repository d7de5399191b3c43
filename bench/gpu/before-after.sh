#!/bin/bash
# On the GPU machine: builds of gpuenv timed side by side, interleaved
# (A B C A B C ...), so a change can be shown to be no slower on real
# hardware.
#   bench/gpu/before-after.sh RUNSTAT ROUNDS RUNS LABEL=GPUENV [LABEL=GPUENV ...]
# Each round runs runstat RUNS times per command and build; prints one JSON
# line per (round, build, command).  The medians of the rounds are the figure.
set -u
runstat=$1 rounds=$2 runs=$3
shift 3
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for r in $(seq 1 "$rounds"); do
	for spec in "$@"; do
		b=${spec%%=*} bin=${spec#*=}
		"$runstat" -n "$runs" -w 1 -l "r$r $b probe" -- "$bin" probe
		"$runstat" -n "$runs" -w 1 -l "r$r $b probe --json" -- "$bin" probe --json
		"$runstat" -n "$runs" -w 1 -l "r$r $b doctor" -- "$bin" doctor
		"$runstat" -n "$runs" -w 1 -l "r$r $b doctor --facts" -- "$bin" doctor --facts .carry/h200.json
	done
done
