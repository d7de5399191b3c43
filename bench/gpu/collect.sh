#!/bin/bash
# Ground truth from a GPU machine, for docs/hardware-results.md and test fixtures:
# what nvidia-smi, torch, cuobjdump, ldconfig and the kernel say.  Writes one
# tarball to $OUT (or ./gpu-facts when OUT is unset).
set -u
out=${OUT:-./gpu-facts}
d=$(mktemp -d)
py=$(command -v python3)
{
	date -u
	uname -a
	nvidia-smi --version
	cat /proc/driver/nvidia/version
	cat /sys/module/nvidia/version
	echo "python3: $py"; $py --version
} > "$d/system.txt" 2>&1
nvidia-smi -q -x > "$d/nvidia-smi-q.xml" 2>&1
nvidia-smi -q > "$d/nvidia-smi-q.txt" 2>&1
nvidia-smi topo -m > "$d/nvidia-smi-topo.txt" 2>&1
ldconfig -p > "$d/ldconfig-p.txt" 2>&1
cp /etc/ld.so.cache "$d/ld.so.cache" 2>/dev/null
for f in /sys/bus/pci/devices/*; do
	[ "$(cat $f/vendor 2>/dev/null)" = 0x10de ] || continue
	echo "$f vendor=$(cat $f/vendor) device=$(cat $f/device) class=$(cat $f/class) driver=$(readlink $f/driver)"
done > "$d/sysfs-pci.txt" 2>&1
ls -la /proc/driver/nvidia/gpus/ > "$d/proc-gpus.txt" 2>&1
cat /proc/driver/nvidia/gpus/*/information >> "$d/proc-gpus.txt" 2>&1
env | grep -E '^(CUDA|LD_|NVIDIA|PATH|VIRTUAL_ENV)' > "$d/env.txt"
$py - > "$d/torch.txt" 2>&1 <<'PY'
import torch, json, os, sys
info = {
    "torch": torch.__version__, "cuda": torch.version.cuda, "file": torch.__file__,
    "cudnn": torch.backends.cudnn.version(), "nccl": torch.cuda.nccl.version(),
    "arch_list": torch.cuda.get_arch_list(), "device_count": torch.cuda.device_count(),
    "sys_path": sys.path, "prefix": sys.prefix,
}
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    info["dev%d" % i] = {"name": p.name, "cc": [p.major, p.minor], "total_memory": p.total_memory,
                         "uuid": str(getattr(p, "uuid", "")), "pci_bus_id": getattr(p, "pci_bus_id", None),
                         "pci_device_id": getattr(p, "pci_device_id", None)}
print(json.dumps(info, indent=1))
# which cudnn/nccl does the process really map?
with open("/proc/self/maps") as m:
    libs = sorted({l.split()[-1] for l in m if ".so" in l and ("cudnn" in l or "nccl" in l or "cublas" in l or "cudart" in l)})
print("\n".join(libs))
PY
( time $py -m torch.utils.collect_env ) > "$d/collect_env.txt" 2>&1
site=$($py -c 'import site; print(site.getsitepackages()[0])')
echo "$site" > "$d/site.txt"
ls "$site" > "$d/site-ls.txt"
cat "$site/torch/version.py" > "$d/torch-version.py" 2>&1
find "$site" /usr/local/cuda*/ /usr/lib/x86_64-linux-gnu /usr/local/nvidia -name '*.so*' 2>/dev/null \
	| grep -E 'cud|nccl|nvinfer|nvrtc|nvJit|cublas|torch|jax|cupy|triton|nvidia|xla' > "$d/libs.txt"
ls -la /usr/local/ > "$d/usr-local.txt" 2>&1
cat /usr/local/cuda/version.json > "$d/cuda-version.json" 2>&1
# cuobjdump listings of every library that carries CUDA code
mkdir -p "$d/cuobjdump"
grep -E '\.so' "$d/libs.txt" | while read -r f; do
	[ -f "$f" ] && [ ! -L "$f" ] && echo "$f"
done | sort -u > "$d/cuda-candidates.txt"
xargs -a "$d/cuda-candidates.txt" -P 12 -I{} sh -c \
	'n=$(echo "{}" | sed "s|/|_|g"); cuobjdump --list-elf "{}" > "'$d'/cuobjdump/$n.list-elf" 2>/dev/null; cuobjdump --list-ptx "{}" > "'$d'/cuobjdump/$n.list-ptx" 2>/dev/null; sha256sum "{}"' > "$d/cuda-candidates.sha256"
find "$d/cuobjdump" -size 0 -delete
mkdir -p "$out"
tar -C "$d" -czf "$out/gpu-facts.tar.gz" .
ls -la "$out"
