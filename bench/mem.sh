#!/bin/sh
# Peak RSS of gpuenv lock (at several corpus sizes: bytes per package), sync
# and probe on ../shared/corpus/h200-env, and of one 38 MiB index page (PEP 691 JSON and PEP 503 HTML);
# docs/benchmarks.md, "Memory".
#   sh bench/mem.sh [-n N] [--gpuenv BIN] [--sizes 25,50,100,195] [--python PY] [--skip PARTS] [--keep DIR]
# Build first: meson setup build --buildtype=release && ninja -C build
set -eu
cd "$(dirname "$0")/.."
exec python3 bench/mem_bench.py "$@"
