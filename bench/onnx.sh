#!/bin/sh
# gpuenv trt inspect on a 1 GB model (issue 24: "a 1 GB synthetic model
# inspected in under 50 ms"; docs/benchmarks.md).  The model is a sparse
# file (tests/cli/onnx_models.py write_sparse_model: a 1 GiB raw_data
# initializer written as a hole), beside a 1 KB model and the torch exports
# of ../shared/testdata/onnx.  Two measures: the reader alone in one process
# (bench/onnx_inspect.c, the median of 200 calls: map, walk, unmap), and the
# whole `gpuenv trt inspect --json` process (runstat, median of 50 runs).
#   sh bench/onnx.sh
set -eu
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build gpuenv runstat libgpuenv.a >/dev/null
mkdir -p bench/out
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude bench/onnx_inspect.c \
	build/libgpuenv.a $(pkg-config --libs jansson libcrypto libcurl zlib) -ldl -lpthread -o bench/out/onnx_inspect
python3 -c 'import sys; sys.path.insert(0, "tests/cli"); import onnx_models as om
om.write_sparse_model("bench/out/big.onnx", 1 << 30)
om.write_sparse_model("bench/out/small.onnx", 1024)'
echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg); big.onnx: $(stat -c %s bench/out/big.onnx) bytes, $(du -k bench/out/big.onnx | cut -f1) KiB on disk"
M="bench/out/big.onnx bench/out/small.onnx ../shared/testdata/onnx/encoder_dynseq_dynamo.onnx"
bench/out/onnx_inspect 200 $M
for m in $M; do
	build/runstat -n 50 -w 3 -l "gpuenv trt inspect --json $(basename "$m")" -- build/gpuenv trt inspect --json "$m"
done
