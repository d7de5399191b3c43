#!/bin/sh
# gpuenv lock on the H200 with no targets declared: the probe is the target
set -u
C=$(cd "$(dirname "$0")" && pwd)
cd "$C" && tar -xzf ti.tar.gz -C /tmp
G=$C/gpuenv
export VIRTUAL_ENV=/opt/torch/.venv PATH=/opt/torch/.venv/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/nvidia-smi.txt 2>&1
/opt/torch/.venv/bin/python -c "import torch,platform; print(torch.__version__, torch.version.cuda, platform.libc_ver())" > $OUT/torch.txt 2>&1
$G probe --json > $OUT/probe.json 2> $OUT/probe.err; echo "probe rc=$?" >> $OUT/rc.txt
for i in 1 2 3; do
  /usr/bin/time -f "%e" -a -o $OUT/lock-times.txt $G lock --project proj --index-url file:///tmp/ti/pypi/simple/ --torch-index file:///tmp/ti/whl --cache-dir /tmp/gc > $OUT/lock.txt 2>&1; echo "lock rc=$?" >> $OUT/rc.txt
done
$G lock --project proj --index-url file:///tmp/ti/pypi/simple/ --torch-index file:///tmp/ti/whl --cache-dir /tmp/gc --json > $OUT/lock.json 2>&1
cp proj/pylock.toml $OUT/pylock.toml
$G lock --project proj --check > $OUT/check.txt 2>&1; echo "check rc=$?" >> $OUT/rc.txt
$G tree --project proj > $OUT/tree.txt 2>&1
D=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
$G kb torch --gpu H200 --driver "$D" > $OUT/kb-torch.txt 2>&1
