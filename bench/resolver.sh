#!/bin/sh
# Resolver on adversarial graphs (bench/resolver_gen.py: pigeonhole and
# random conflict-heavy graphs, packse format): `gpuenv debug resolve` of the
# baseline (main at d0b4ece3, release build) and of this tree (release
# build), side by side.  Figures: docs/benchmarks.md.
#   sh bench/resolver.sh [TIMEOUT_S]      (from the repository root)
set -eu
cd "$(dirname "$0")/.."
TIMEOUT=${1:-300}
BASE=${RESOLVER_BASE:-d0b4ece3}
mkdir -p bench/out
if [ ! -x bench/out/base-src/build/gpuenv ]; then
	rm -rf bench/out/base-src && mkdir -p bench/out/base-src
	git archive "$BASE" | tar -x -C bench/out/base-src
	(cd bench/out/base-src && meson setup build --buildtype=release >/dev/null && ninja -C build gpuenv >/dev/null)
fi
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build gpuenv >/dev/null
echo "before: $BASE, after: $(git rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 bench/resolver_bench.py bench/out/base-src/build/gpuenv build/gpuenv bench/out/resolver "$TIMEOUT"
