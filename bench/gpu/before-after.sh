#!/bin/bash
# On the GPU machine: two builds of gpuenv timed side by side, interleaved
# (A B A B ...), so a change can be shown to be no slower on real hardware.
#   bench/gpu/before-after.sh BEFORE AFTER RUNSTAT [ROUNDS] [RUNS]
# Each round runs runstat RUNS times per command and build; prints one JSON
# line per (round, build, command).  The medians of the rounds are the figure.
set -u
before=$1 after=$2 runstat=$3 rounds=${4:-5} runs=${5:-11}
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for r in $(seq 1 "$rounds"); do
	for b in before after; do
		bin=$before
		[ "$b" = after ] && bin=$after
		"$runstat" -n "$runs" -w 1 -l "r$r $b probe" -- "$bin" probe
		"$runstat" -n "$runs" -w 1 -l "r$r $b probe --json" -- "$bin" probe --json
		"$runstat" -n "$runs" -w 1 -l "r$r $b doctor" -- "$bin" doctor
	done
done
