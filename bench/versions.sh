#!/bin/sh
# PEP 440 benchmark: sort 100,000 versions and filter them through specifier
# sets, gpuenv (release build) against Python's packaging (Debian's
# python3-packaging, /usr/bin/python3).  Results: bench/RESULTS-versions.md.
#   sh bench/versions.sh [RUNS]        (from the repository root; RUNS >= 5)
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-7}
N=100000

[ -f build-rel/build.ninja ] || meson setup build-rel --buildtype=release >/dev/null
ninja -C build-rel gpuenv >/dev/null
mkdir -p bench/out
/usr/bin/python3 bench/versions_gen.py "$N" > bench/out/versions.txt
/usr/bin/python3 -c 'import packaging; print("packaging", packaging.__version__)'
echo "gpuenv $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 bench/versions_bench.py build-rel/gpuenv bench/out/versions.txt "$RUNS" \
	'>=1.0,<2.0' '~=2.1' '==2.*' '!=1.5.*,>=1.0' '>=2.0rc1,<3'
