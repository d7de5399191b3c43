#!/bin/sh
# gpuenv labels on the GPU machine, against what nvidia-smi says there
# (docs/hardware-results.md, "gpuenv labels on the H200").  Run through the
# device tool with the release binary carried: GPUENV=build/gpuenv, output
# into $OUT.
set -u
G=${GPUENV:-build/gpuenv}
O=${OUT:-/tmp/labels-h200}
mkdir -p "$O"
ldd "$G" | grep "not found" >"$O/ldd-missing.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,mig.mode.current,pci.device_id \
	--format=csv >"$O/nvidia-smi.csv" 2>&1
nvidia-smi | head -4 >"$O/nvidia-smi-head.txt" 2>&1
cat /sys/class/dmi/id/product_name >"$O/dmi-product-name.txt" 2>&1
# the live probe, as the DaemonSet runs it
/usr/bin/time -f "%e s %M KiB" "$G" labels >"$O/labels.txt" 2>"$O/labels.err"
echo "labels exit $?" >>"$O/labels.err"
"$G" labels --format nfd -o "$O/features.d-gpuenv" 2>>"$O/labels.err"
echo "labels nfd exit $?" >>"$O/labels.err"
"$G" probe --json >"$O/probe.json" 2>"$O/probe.err"
# a project with the satellite example's h200 and t4 targets
P=$(mktemp -d)
cat >"$P/pyproject.toml" <<'EOF'
[project]
name = "labels-h200"
version = "0"
requires-python = ">=3.10"
dependencies = []

[tool.gpuenv.targets.h200]
gpu = "H200"
driver = "580.159.04"
python = "3.12"
platform = "manylinux_2_28_x86_64"

[tool.gpuenv.targets.t4]
gpu = "T4"
driver = "525.85.12"
python = "3.10"
platform = "manylinux_2_28_x86_64"
EOF
"$G" labels --project "$P" >"$O/labels-project.txt" 2>"$O/labels-project.err"
echo "exit $?" >>"$O/labels-project.err"
"$G" labels --selector --target h200 --project "$P" >"$O/selector-h200.yaml" 2>&1
rm -rf "$P"
for f in "$O"/*; do echo "== $f"; head -c 3000 "$f"; echo; done | grep -v '^$' | head -150
