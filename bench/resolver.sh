#!/bin/sh
# Resolver on adversarial graphs (bench/resolver_gen.py: pigeonhole and
# random conflict-heavy graphs, packse format): `gpuenv debug resolve` of the
# baseline (main at 8b93d01a, or RESOLVER_BASE; release build) and of this
# tree (release build), side by side: conflicts, median user CPU time of
# RUNS runs (default 3), per conflict, peak RSS.  Figures: docs/benchmarks.md.
#   [RESOLVER_BASE=COMMIT] sh bench/resolver.sh [TIMEOUT_S [RUNS]]
#   (from the repository root)
set -eu
cd "$(dirname "$0")/.."
TIMEOUT=${1:-300}
BASE=${RESOLVER_BASE:-8b93d01a}
mkdir -p bench/out
SRC=bench/out/base-$BASE # one per baseline, kept between runs
if [ ! -x "$SRC/build/gpuenv" ]; then
	rm -rf "$SRC" && mkdir -p "$SRC"
	git archive "$BASE" | tar -x -C "$SRC"
	(cd "$SRC" && meson setup build --buildtype=release >/dev/null && ninja -C build gpuenv >/dev/null)
fi
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build gpuenv >/dev/null
echo "before: $BASE, after: $(git rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 bench/resolver_bench.py "$SRC/build/gpuenv" build/gpuenv bench/out/resolver "$TIMEOUT" "${2:-3}"
