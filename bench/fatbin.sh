#!/bin/sh
# Fatbin listing speed: `gpuenv debug fatbin --elf FILE` (release build), and
# `cuobjdump --list-elf FILE` on the same files with --compare-cuobjdump.
#
#   sh bench/fatbin.sh [--compare-cuobjdump] [--runs N] [FILE...]
#
# Default files: the two largest CUDA libraries of this machine
# (libcublasLt.so.13, libcudnn_engines_precompiled.so.9).  Each command runs
# once to warm the page cache (not counted), then N times (default 7, at
# least 5); the script prints the median, min and max wall time and the
# median peak RSS (/usr/bin/time -v) as a Markdown table, and with
# --compare-cuobjdump the ratio of the medians and whether both listed the
# same lines.
#
# On the GPU machine:
#   sh bench/fatbin.sh --compare-cuobjdump /path/to/torch/lib/libtorch_cuda.so
# GPUENV=/path/to/gpuenv skips the build and times that binary; RUNS=N
# is the same as --runs N.
set -eu
cd "$(dirname "$0")/.."

RUNS=${RUNS:-7}
COMPARE=0
while [ $# -gt 0 ]; do
	case "$1" in
	--compare-cuobjdump) COMPARE=1; shift ;;
	--runs) RUNS=$2; shift 2 ;;
	--runs=*) RUNS=${1#--runs=}; shift ;;
	-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) echo "fatbin.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ "$RUNS" -ge 5 ] 2>/dev/null || { echo "fatbin.sh: --runs must be >= 5" >&2; exit 2; }
if [ $# -eq 0 ]; then
	set -- /usr/local/cuda/lib64/libcublasLt.so.13 \
		/usr/local/cuda/lib64/libcudnn_engines_precompiled.so.9
fi
for f in "$@"; do
	[ -r "$f" ] || { echo "fatbin.sh: cannot read $f" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "fatbin.sh: needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }

# GPUENV=/path/to/gpuenv uses that binary; otherwise the release build
if [ -z "${GPUENV:-}" ]; then
	if [ ! -f build/build.ninja ]; then
		meson setup build --buildtype=release >/dev/null
	fi
	ninja -C build gpuenv >/dev/null
	GPUENV=./build/gpuenv
fi

CUOBJDUMP=""
if [ "$COMPARE" -eq 1 ]; then
	CUOBJDUMP=$(command -v cuobjdump || true)
	[ -n "$CUOBJDUMP" ] || echo "fatbin.sh: cuobjdump is not on PATH: timing gpuenv only" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# median of the numbers on stdin (one a line)
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure NAME CMD...: runs CMD once (warm-up; its stdout kept in
# $tmp/NAME.out), then RUNS timed runs and RUNS runs under /usr/bin/time -v;
# sets MED_MS MIN_MS MAX_MS RSS_MB.  Wall time from hyperfine when it is
# installed (no shell, microsecond clock), else from date +%s%N around each
# run (which adds the cost of starting /usr/bin/time, about a millisecond).
measure() {
	name=$1
	shift
	"$@" >"$tmp/$name.out" 2>/dev/null || true
	: >"$tmp/$name.ms"
	: >"$tmp/$name.kb"
	if [ -n "$HYPERFINE" ]; then
		cmd=""
		for a in "$@"; do cmd="$cmd '$a'"; done
		"$HYPERFINE" -N -i --style none --runs "$RUNS" --export-json "$tmp/$name.json" \
			"$cmd" >/dev/null 2>&1
		python3 -c 'import json, sys
for t in json.load(open(sys.argv[1]))["results"][0]["times"]:
    print("%.3f" % (t * 1000))' "$tmp/$name.json" >"$tmp/$name.ms"
	fi
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		t0=$(date +%s%N)
		/usr/bin/time -v -o "$tmp/$name.time" "$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		[ -n "$HYPERFINE" ] ||
			awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f\n", ns / 1e6 }' >>"$tmp/$name.ms"
		awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' \
			"$tmp/$name.time" >>"$tmp/$name.kb"
		i=$((i + 1))
	done
	MED_MS=$(median <"$tmp/$name.ms")
	MIN_MS=$(sort -n "$tmp/$name.ms" | head -n 1)
	MAX_MS=$(sort -n "$tmp/$name.ms" | tail -n 1)
	RSS_MB=$(median <"$tmp/$name.kb" | awk '{ printf "%.1f", $1 / 1024 }')
}

HYPERFINE=$(command -v hyperfine || true)
[ -n "$HYPERFINE" ] && ! command -v python3 >/dev/null && HYPERFINE=""
echo "fatbin listing, $RUNS runs each after one warm-up (page cache warm), $(date -u +%Y-%m-%d)"
echo "wall time: ${HYPERFINE:+hyperfine -N}${HYPERFINE:-date +%s%N around /usr/bin/time}; peak RSS: /usr/bin/time -v"
echo "host: $(uname -m), $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo
echo "| file | size MB | entries | tool | median ms | min ms | max ms | peak RSS MB | ratio | same lines |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for f in "$@"; do
	base=$(basename "$f")
	size=$(stat -c %s "$f" | awk '{ printf "%.0f", $1 / 1048576 }')
	measure gpuenv "$GPUENV" debug fatbin --elf "$f"
	g_med=$MED_MS
	entries=$(wc -l <"$tmp/gpuenv.out" | tr -d ' ')
	row_g="| $base | $size | $entries | gpuenv | $MED_MS | $MIN_MS | $MAX_MS | $RSS_MB |"
	if [ -n "$CUOBJDUMP" ]; then
		measure cuobjdump "$CUOBJDUMP" --list-elf "$f"
		ratio=$(awk -v c="$MED_MS" -v g="$g_med" 'BEGIN { if (g > 0) printf "%.0fx", c / g; else print "-" }')
		if cmp -s "$tmp/gpuenv.out" "$tmp/cuobjdump.out"; then same=yes; else same=NO; fi
		echo "$row_g $ratio faster | $same |"
		echo "| $base | $size | $(wc -l <"$tmp/cuobjdump.out" | tr -d ' ') | cuobjdump | $MED_MS | $MIN_MS | $MAX_MS | $RSS_MB | | |"
	else
		echo "$row_g | |"
	fi
done
