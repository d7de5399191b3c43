#!/bin/sh
# gpuenv add against poetry add (Debian's python3-poetry): one package into
# the local-env corpus project, served offline on 127.0.0.1 as bench/lock.sh
# does, warm caches, both lock-only (add --no-sync / add --lock), medians
# over N runs and the ratio; docs/benchmarks.md, "add".
#   sh bench/add.sh [-n N] [--gpuenv BIN] [--add PKG] [--tools gpuenv,poetry] [--keep DIR]
# Build first: meson setup build --buildtype=release && ninja -C build
set -eu
cd "$(dirname "$0")/.."
exec python3 bench/add_bench.py "$@"
