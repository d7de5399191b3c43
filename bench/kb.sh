#!/bin/sh
# `gpuenv kb` before and after: two gpuenv binaries (release builds) side by
# side on the same questions, rounds interleaved (old, new, old, new, ...),
# median / min / max wall milliseconds and the ratio new/old;
# docs/benchmarks.md, "kb".
#   sh bench/kb.sh OLD_GPUENV NEW_GPUENV [ROUNDS]
# e.g. the baseline of issue 20 item 3 against this tree:
#   git archive d0b4ece3 | tar -x -C /tmp/base && (cd /tmp/base &&
#     meson setup build --buildtype=release && ninja -C build gpuenv)
#   meson setup build --buildtype=release && ninja -C build gpuenv
#   sh bench/kb.sh /tmp/base/build/gpuenv build/gpuenv 31
set -eu
cd "$(dirname "$0")/.."
exec python3 bench/kb_bench.py "$@"
