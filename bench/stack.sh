#!/bin/sh
# Stack probe speed: toolkits + ld.so.cache + library copies + Python
# environments + loader emulation of every framework binary, as run by
# `gpuenv debug libs` and `gpuenv debug pyenv` (release build); and the loader
# emulation of one binary (`gpuenv debug ldd`) against glibc's `ldd`.
#
#   sh bench/stack.sh [--runs N] [--env DIR] [--ldd FILE]
#
# --env DIR   a Python environment to probe besides the active one (default:
#             a synthetic full torch environment built by bench/mkenv_stack.py
#             from $GPUENV_SHARED/corpus/h200-env under bench/out/)
# --ldd FILE  a binary for the ldd comparison (default: the active Python's
#             torch/lib/libtorch_cuda.so when there is one)
# Each command runs once to warm the page cache, then N times (default 21);
# the script prints median / min / max wall milliseconds as a Markdown table.
# GPUENV=/path/to/gpuenv skips the build.
set -eu
cd "$(dirname "$0")/.."

RUNS=21
ENVDIR=""
LDDFILE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) RUNS=$2; shift 2 ;;
	--env) ENVDIR=$2; shift 2 ;;
	--ldd) LDDFILE=$2; shift 2 ;;
	-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "stack.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "${GPUENV:-}" ]; then
	[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
	ninja -C build >/dev/null
	GPUENV=$PWD/build/gpuenv
fi
if ! "$GPUENV" debug pyenv --help >/dev/null 2>&1; then
	echo "stack.sh: this gpuenv has no 'debug pyenv' verb yet (cli/debug/debug.c rows): skipped" >&2
	exit 0
fi
if [ -z "$ENVDIR" ]; then
	GPUENV_SHARED=${GPUENV_SHARED:-$PWD/../shared} /usr/bin/python3 bench/mkenv_stack.py bench/out/stack-env >/dev/null
	ENVDIR=$PWD/bench/out/stack-env/venv
fi
if [ -z "$LDDFILE" ]; then
	T=$(python3 -c "import importlib.util as u, os; s = u.find_spec('torch'); print(os.path.dirname(s.origin) if s else '')" 2>/dev/null || true)
	[ -n "$T" ] && [ -f "$T/lib/libtorch_cuda.so" ] && LDDFILE=$T/lib/libtorch_cuda.so
fi

# median, min, max of RUNS wall times in ms
t() {
	"$@" >/dev/null 2>&1 || true
	i=0
	while [ $i -lt "$RUNS" ]; do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s%N)
		echo $(((e - s) / 1000))
		i=$((i + 1))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f | %.1f | %.1f", a[int((NR + 1) / 2)] / 1000, a[1] / 1000, a[NR] / 1000 }'
}

echo "| command | median ms | min | max |"
echo "|---|---|---|---|"
echo "| gpuenv --version (process start) | $(t "$GPUENV" --version) |"
echo "| gpuenv debug libs | $(t "$GPUENV" debug libs) |"
echo "| gpuenv debug pyenv | $(t "$GPUENV" debug pyenv) |"
echo "| gpuenv debug pyenv --json | $(t "$GPUENV" debug pyenv --json) |"
echo "| gpuenv debug pyenv --env ENV | $(t "$GPUENV" debug pyenv --env "$ENVDIR") |"
echo "| gpuenv debug pyenv --env ENV --json | $(t "$GPUENV" debug pyenv --env "$ENVDIR" --json) |"
if [ -n "$LDDFILE" ]; then
	echo "| gpuenv debug ldd $(basename "$LDDFILE") | $(t "$GPUENV" debug ldd "$LDDFILE") |"
	echo "| ldd $(basename "$LDDFILE") | $(t ldd "$LDDFILE") |"
fi
echo
echo "ENV = $ENVDIR; $RUNS runs each after one warm-up; $(date -u +%Y-%m-%d), $(nproc) cores"
