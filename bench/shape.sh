#!/bin/sh
# Issue 20's "the move costs nothing": probe, doctor, lock and sync timed with
# the baseline (d0b4ece3, before lock/sync/export became library calls) and
# this tree, both release builds, side by side in one run (runs interleaved,
# medians of N); docs/benchmarks.md, "Shape (issue 20)".
#   sh bench/shape.sh [-n N] [--base COMMIT] [--keep DIR]
# It builds the baseline from `git archive COMMIT` in a temporary folder and
# this tree in build/ (meson release builds), then runs bench/shape_bench.py.
set -eu
cd "$(dirname "$0")/.."
BASE=d0b4ece3
N=7
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
	-n) N=$2; shift 2 ;;
	--base) BASE=$2; shift 2 ;;
	--keep) KEEP=$2; shift 2 ;;
	*) echo "usage: sh bench/shape.sh [-n N] [--base COMMIT] [--keep DIR]" >&2; exit 2 ;;
	esac
done
WORK=${KEEP:-$(mktemp -d /tmp/gpuenv-bench-shape-XXXXXX)}
mkdir -p "$WORK"
if [ ! -x "$WORK/base/build/gpuenv" ]; then
	rm -rf "$WORK/base" && mkdir -p "$WORK/base"
	git archive "$BASE" | tar -x -C "$WORK/base"
	(cd "$WORK/base" && meson setup build --buildtype=release -Dtests=false -Dshared_dir="$(cd .. && pwd)/shared" >/dev/null \
		&& ninja -C build gpuenv >/dev/null)
fi
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build gpuenv >/dev/null
exec python3 bench/shape_bench.py -n "$N" --base "$WORK/base/build/gpuenv" --new build/gpuenv --work "$WORK" \
	--base-name "$BASE" --new-name "$(git rev-parse --short HEAD)"
