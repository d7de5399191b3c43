#!/bin/sh
# TOML parse throughput: gpuenv vs Python's tomllib on a generated,
# pylock.toml-like file of several megabytes (results: bench/RESULTS-toml.md).
#   sh bench/toml.sh            (TOML_BENCH_MB=8 TOML_BENCH_RUNS=7 by default)
set -eu
cd "$(dirname "$0")/.."
MB=${TOML_BENCH_MB:-8}
RUNS=${TOML_BENCH_RUNS:-7}
# an optimised build, not the sanitizer one
[ -f build-rel/build.ninja ] || meson setup build-rel --buildtype=release >/dev/null
ninja -C build-rel gpuenv libgpuenv.a >/dev/null
mkdir -p bench/out
# the parser alone, into pre-faulted memory (see toml_prefault.c)
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude bench/toml_prefault.c \
	build-rel/libgpuenv.a $(pkg-config --libs jansson libcrypto) -ldl -o bench/out/toml_prefault
python3 bench/toml_gen.py "$MB" "bench/out/lock-$MB.toml"
python3 bench/toml_bench.py build-rel/gpuenv "bench/out/lock-$MB.toml" "$RUNS" bench/out/toml_prefault
