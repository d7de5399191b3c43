#!/bin/sh
# gpuenv drift on the H200 (issue 12): live probe, snapshots, metrics, non-root
cd "$(dirname "$0")"
export LD_LIBRARY_PATH="$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
B=./gpuenv
echo "== ls /dev/nvidia* /proc/driver/nvidia"; ls -la /dev/nvidia* /proc/driver/nvidia 2>&1 | head -20
$B probe --json > "$OUT/probe.json"; echo "probe rc=$?"
echo "== drift text"; $B drift --expect expect.toml; echo "rc=$?"
$B --json drift --expect expect.toml > "$OUT/drift.json"; echo "json rc=$?"
$B drift --expect expect.toml --format prometheus -o "$OUT/gpuenv.prom"; echo "prom rc=$?"
echo "== drifting expect"; $B drift --expect drift.toml --format prometheus -o "$OUT/drifting.prom"; echo "rc=$?"
$B drift --expect drift.toml; echo "rc=$?"
echo "== this probe's snapshot as expect"; $B drift --expect "$OUT/probe.json"; echo "rc=$?"
echo "== 2026-11-29 snapshot as expect"; $B drift --expect ../../docs/hardware/h200-2026-11-29/probe.json; echo "rc=$?"
echo "== timing (20 runs, prometheus -o)"
s=$(date +%s%N); for i in $(seq 20); do $B drift --expect expect.toml --format prometheus -o /tmp/x.prom; done; e=$(date +%s%N)
echo "mean ms: $(( (e - s) / 20000000 ))"
echo "== as uid 65532 (the DaemonSet's user)"
mkdir -p /tmp/d && cp -r . /tmp/d/ && chmod -R a+rX /tmp/d && mkdir -p /tmp/d/out && chown 65532:65532 /tmp/d/out
if command -v setpriv >/dev/null; then
  (cd /tmp/d && setpriv --reuid 65532 --regid 65532 --clear-groups env LD_LIBRARY_PATH="/tmp/d/lib:/usr/local/nvidia/lib64:/usr/local/nvidia/lib" ./gpuenv drift --expect expect.toml --format prometheus -o /tmp/d/out/gpuenv.prom; echo "nonroot rc=$?")
  cp /tmp/d/out/gpuenv.prom "$OUT/nonroot.prom" 2>/dev/null
else echo "no setpriv"; fi
