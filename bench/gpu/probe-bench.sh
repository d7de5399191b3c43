#!/bin/bash
# On the GPU machine: gpuenv probe vs nvidia-smi -q -x vs torch's collect_env,
# and gpuenv's fatbin listing of libtorch_cuda.so vs cuobjdump, in one run.
#   bench/gpu/probe-bench.sh GPUENV RUNSTAT NVML_FLOOR [RUNS]
# Prints one JSON line per measurement (median wall time, peak RSS).
set -u
gpuenv=$1 runstat=$2 floor=$3 runs=${4:-11}
py=$(command -v python3)
site=$($py -c 'import site; print(site.getsitepackages()[0])')
lt="$site/torch/lib/libtorch_cuda.so"
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
"$runstat" -n "$runs" -l nvml-floor -- "$floor"
"$runstat" -n "$runs" -l "gpuenv probe" -- "$gpuenv" probe
"$runstat" -n "$runs" -l "gpuenv probe --json" -- "$gpuenv" probe --json
"$runstat" -n "$runs" -l "nvidia-smi -q -x" -- nvidia-smi -q -x
"$runstat" -n "$runs" -l "gpuenv doctor" -- "$gpuenv" doctor
"$runstat" -n 3 -w 1 -l "collect_env" -- "$py" -m torch.utils.collect_env
"$runstat" -n "$runs" -l "gpuenv debug fatbin --elf libtorch_cuda.so" -- "$gpuenv" debug fatbin --elf "$lt"
"$runstat" -n 3 -w 1 -l "cuobjdump --list-elf libtorch_cuda.so" -- cuobjdump --list-elf "$lt"
