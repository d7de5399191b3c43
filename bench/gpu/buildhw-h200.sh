#!/bin/sh
# The target's hardware in a real CUDA extension build on the GPU machine
# (issue 13 item 2; docs/hardware-results.md, "build hardware on the H200"):
# gpuenv sync of a project whose lock holds the machine's own torch stack
# (bench/gpu/repack_env.py: /opt/torch/.venv back into wheels, the machine
# reaches no index) and an sdist, cuext, built with torch's own
# cpp_extension (CUDAExtension, BuildExtension) against the synced venv
# ([tool.gpuenv] build-against-env); the target is this machine (probed).
# Then the extension's kernel runs on the GPU, and cuobjdump lists the
# machine code it carries (TORCH_CUDA_ARCH_LIST).  Run through the device
# tool with the release binary and its non-glibc libraries carried in
# .carry/buildhw (started by this image's own ld.so, so the builds do not
# inherit the carried libraries).
# usage: sh bench/gpu/buildhw-h200.sh   (OUT: the output folder)
set -u
R=$(pwd)
G="/lib64/ld-linux-x86-64.so.2 --library-path $R/.carry/buildhw/lib $R/.carry/buildhw/gpuenv"
O=${OUT:-/tmp/buildhw-h200}; mkdir -p "$O"
W=/tmp/gpuenv-buildhw; rm -rf "$W"; mkdir -p "$W/links"
VPY=/opt/torch/.venv/bin/python
SITE=$($VPY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
BASEPY=$($VPY -c 'import sys; print(sys._base_executable)')
{
  date -u +%FT%TZ; nproc; grep MemAvailable /proc/meminfo; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  ls -la /usr/local/ | grep -i cuda; command -v nvcc; nvcc --version | tail -2; gcc --version | head -1
  $VPY -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
  s=$(date +%s); python3 bench/gpu/repack_env.py "$SITE" "$W/index" > "$W/repack.txt" 2>&1; echo "repack $(( $(date +%s) - s )) s, exit $?"
} > "$O/machine.txt" 2>&1
# the sdist: a CUDA kernel built by torch's cpp_extension, its setup.py
# reporting the environment it was built with
$VPY - "$W/links" <<'EOPY'
import sys
sys.path.insert(0, "tests/fixtures")
import mkwheel
setup = r'''
import json, os, shutil
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME
rep = {k: os.environ.get(k) for k in ("CUDA_HOME", "CUDA_PATH", "TORCH_CUDA_ARCH_LIST", "NVCC_THREADS", "MAX_JOBS")}
rep["PATH"] = os.environ.get("PATH", "").split(":")[:3]
rep["torch's CUDA_HOME"] = CUDA_HOME
rep["nvcc on PATH"] = shutil.which("nvcc")
json.dump(rep, open(os.path.join(os.environ["GPUENV_TEST_OUT"], "build-env.json"), "w"), indent=1)
setup(name="cuext", version="1.0", packages=["cuext"],
      ext_modules=[CUDAExtension("cuext._C", ["csrc/add.cpp", "csrc/add_kernel.cu"])],
      cmdclass={"build_ext": BuildExtension})
'''
cpp = r'''#include <torch/extension.h>
torch::Tensor add_one_cuda(torch::Tensor x);
torch::Tensor add_one(torch::Tensor x) { TORCH_CHECK(x.is_cuda() && x.is_contiguous()); return add_one_cuda(x); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add_one", &add_one); }
'''
cu = r'''#include <torch/extension.h>
__global__ void add_one_k(const float *x, float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
torch::Tensor add_one_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x); int n = (int)x.numel();
  add_one_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
'''
mkwheel.make_sdist(sys.argv[1], "cuext", "1.0", files={"pyproject.toml": "", "setup.py": setup,
    "csrc/add.cpp": cpp, "csrc/add_kernel.cu": cu, "cuext/__init__.py": "from ._C import add_one\n"})
EOPY
P="$W/project"; mkdir -p "$P"
cat > "$P/pyproject.toml" <<'EOT'
[project]
name = "buildhw-h200"
version = "0.1"
dependencies = ["torch", "setuptools", "wheel", "ninja", "cuext"]

[tool.gpuenv]
build-against-env = ["cuext"]
EOT
cp "$P/pyproject.toml" "$O/"
IDX="--index-url file://$W/index/simple/ --torch-index file://$W/index/whl --find-links $W/links"
s=$(date +%s)
GPUENV_TEST_OUT="$O" $G sync --project "$P" --venv "$W/venv" --python "$BASEPY" $IDX --cache-dir "$W/cache" --json \
  > "$W/sync.json" 2> "$O/sync.err"
echo "sync exit $?, $(( $(date +%s) - s )) s" >> "$O/sync.err"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"builds": d.get("builds"), "phases": d.get("phases"), "counts": d.get("counts")}, indent=1))' "$W/sync.json" > "$O/sync-builds.json" 2>&1
cp "$W"/cache/build-logs/cuext-*.log "$O/cuext-build.log" 2>/dev/null
$G run --project "$P" --venv "$W/venv" --locked --cache-dir "$W/cache" -- python -c '
import torch, cuext, cuext._C as c
x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
y = cuext.add_one(x); torch.cuda.synchronize()
print("add_one on", torch.cuda.get_device_name(0), "ok" if torch.equal(y, x + 1) else "WRONG", c.__file__)
' > "$O/run.txt" 2>&1
echo "run exit $?" >> "$O/run.txt"
SO=$(find "$W/venv" -name "_C*.so" -path "*cuext*" | head -1)
cuobjdump --list-elf "$SO" >> "$O/run.txt" 2>&1; cuobjdump --list-ptx "$SO" >> "$O/run.txt" 2>&1
sed -i "s|$W|W|g" "$O"/*.txt "$O"/*.err "$O"/*.json 2>/dev/null
cat "$O/machine.txt" "$O/sync.err" "$O/run.txt"
