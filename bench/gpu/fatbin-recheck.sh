#!/bin/bash
# On the GPU machine: gpuenv's fatbin listings against cuobjdump's listings
# saved from the same machine (docs/hardware/h200-2026-11-29/
# cuobjdump-listings.tar.gz, made by bench/gpu/collect.sh), without running
# cuobjdump again: a quick re-check after a change to the fatbin reader.
#   bench/gpu/fatbin-recheck.sh GPUENV [DIR]
# DIR (default docs/hardware/h200-2026-11-29) holds cuobjdump-listings.tar.gz
# and cuda-candidates.sha256, the files cuobjdump was run on and their hashes.
# A file still there with the same hash must list exactly what cuobjdump
# listed (nothing, where its listing was empty).  Exit 1 on any difference.
set -u
gpuenv=$1
dir=${2:-docs/hardware/h200-2026-11-29}
d=$(mktemp -d)
tar xzf "$dir/cuobjdump-listings.tar.gz" -C "$d"
same=0 diff=0 empty=0 extra=0 files=0 changed=0
while read -r sum f; do
	if [ "$(sha256sum "$f" 2>/dev/null | cut -d' ' -f1)" != "$sum" ]; then
		changed=$((changed + 1))
		continue
	fi
	files=$((files + 1))
	n=$(echo "$f" | tr / _)
	for k in elf ptx; do
		want="$d/cuobjdump/$n.list-$k"
		got=$("$gpuenv" debug fatbin --$k "$f" 2>/dev/null)
		if [ -f "$want" ]; then
			if [ "$got" = "$(cat "$want")" ]; then
				same=$((same + 1))
			else
				diff=$((diff + 1))
				echo "DIFFERENT $k $f"
			fi
		elif [ -n "$got" ]; then
			extra=$((extra + 1))
			echo "UNEXPECTED $k $f (no saved listing, gpuenv lists code)"
		else
			empty=$((empty + 1))
		fi
	done
done < "$dir/cuda-candidates.sha256"
rm -rf "$d"
echo "files: $files (gone or changed since: $changed); listings identical: $same; different: $diff; listed where cuobjdump listed nothing: $extra; both empty: $empty"
[ "$diff" -eq 0 ] && [ "$extra" -eq 0 ]
