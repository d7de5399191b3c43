#!/bin/sh
# gpuenv lock vs pip install --dry-run --report (pip 23.2.1) and poetry lock
# (Debian's), the peers on the same 127.0.0.1 index built from
# ../shared/corpus (local-env and h200-env top-level sets), cold and warm
# cache, medians over N runs and ratios; docs/benchmarks.md, "lock".
#   sh bench/lock.sh [-n N] [--gpuenv BIN] [--sets local-env,h200-env] [--tools gpuenv,pip,poetry] [--keep DIR]
# Build first: meson setup build --buildtype=release && ninja -C build
set -eu
cd "$(dirname "$0")/.."
exec python3 bench/lock_bench.py "$@"
