#!/bin/sh
# gpuenv sync vs pip 23.2.1 install: the 92 packages of ../shared/corpus/local-env
# with every file at its real size (../shared/tools/mkindex.py --payload), cold
# and warm cache, a fresh venv and a no-op re-sync; medians over N runs and
# ratios; docs/benchmarks.md, "Install".
#   sh bench/install.sh [-n N] [--gpuenv BIN] [--keep DIR]
# Build first: meson setup build --buildtype=release && ninja -C build
set -eu
cd "$(dirname "$0")/.."
exec python3 bench/install_bench.py "$@"
