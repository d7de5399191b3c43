#!/bin/bash
# On the GPU machine: gpuenv's fatbin listing vs cuobjdump itself, for every
# CUDA-bearing library of the torch environment (torch, torchvision,
# torchaudio, cupy, jax's plugins, the nvidia-* wheels) and the toolkit.
#   bench/gpu/fatbin-compare.sh GPUENV [OUTDIR]
# Prints one line per file: same / DIFFERENT / both-empty, and a total.
set -u
gpuenv=$1 out=${2:-/tmp/fatbin-compare}
mkdir -p "$out"
py=$(command -v python3)
site=$($py -c 'import site; print(site.getsitepackages()[0])')
find "$site" /usr/local/cuda/lib64/ -name '*.so*' -type f 2>/dev/null |
	grep -E 'torch|cupy|jax|nvidia|/cuda' | sort > "$out/files.txt"
same=0 diff=0 empty=0
while read -r f; do
	n=$(echo "$f" | tr / _)
	for k in elf ptx; do
		cuobjdump --list-$k "$f" > "$out/$n.cuobjdump.$k" 2>/dev/null
		"$gpuenv" debug fatbin --$k "$f" > "$out/$n.gpuenv.$k" 2>"$out/$n.gpuenv.$k.err"
		if [ ! -s "$out/$n.cuobjdump.$k" ] && [ ! -s "$out/$n.gpuenv.$k" ]; then
			empty=$((empty + 1))
		elif cmp -s "$out/$n.cuobjdump.$k" "$out/$n.gpuenv.$k"; then
			same=$((same + 1))
			echo "same $k $(wc -l < "$out/$n.gpuenv.$k") $f"
		else
			diff=$((diff + 1))
			echo "DIFFERENT $k $f"
			diff "$out/$n.cuobjdump.$k" "$out/$n.gpuenv.$k" | head -5
		fi
	done
done < "$out/files.txt"
echo "files: $(wc -l < "$out/files.txt"); listings identical: $same; different: $diff; no CUDA code (both empty): $empty"
