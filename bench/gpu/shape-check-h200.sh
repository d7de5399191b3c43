#!/bin/sh
# After the library-shape move (issue 20): the typed probe on the real H200.
# probe --json must decode and re-encode to the same bytes (the round trip
# the unit test holds on snapshots), doctor must find no new problem, and
# labels / preflight --lock must answer as before.  Run from the repository
# root with the release build in build/; results into $OUT.
set -u
G=${GPUENV:-build/gpuenv}
O=${OUT:-/tmp/shape-check-h200}; mkdir -p "$O"
ldd "$G" | grep "not found" >"$O/ldd-missing.txt"
"$G" probe --json >"$O/probe.json" 2>"$O/probe.err"; echo "probe exit $?" >>"$O/probe.err"
# the snapshot judged as a snapshot and live: the same verdicts
"$G" doctor --json >"$O/doctor-live.json" 2>"$O/doctor-live.err"; echo "doctor exit $?" >>"$O/doctor-live.err"
"$G" doctor --json --facts "$O/probe.json" >"$O/doctor-facts.json" 2>"$O/doctor-facts.err"; echo "doctor --facts exit $?" >>"$O/doctor-facts.err"
"$G" doctor >"$O/doctor.txt" 2>&1; echo "doctor text exit $?" >>"$O/doctor.txt"
"$G" labels >"$O/labels.txt" 2>&1; echo "labels exit $?" >>"$O/labels.txt"
# timings: probe and doctor, 20 runs each
for v in "probe --json" "doctor"; do
	i=0; : >"$O/times-$(echo $v | tr ' -' '__').txt"
	while [ $i -lt 20 ]; do
		s=$(date +%s%N); $G $v >/dev/null 2>&1; e=$(date +%s%N)
		echo $(( (e - s) / 1000 )) >>"$O/times-$(echo $v | tr ' -' '__').txt"; i=$((i + 1))
	done
done
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv >"$O/nvidia-smi.csv" 2>&1
