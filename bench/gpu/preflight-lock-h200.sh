#!/bin/sh
# gpuenv preflight --lock on the GPU machine, live (issue 11 item 4), and
# labels --project after fit's declared-driver fix (issue 12): locks written
# here by hand (PEP 751, as another tool would write them), judged on the
# probed H200 and against what torch itself reports there.  Run through the
# device tool with the release binary carried: GPUENV=..., output into $OUT.
set -u
G=${GPUENV:-build/gpuenv}
O=${OUT:-/tmp/preflight-lock-h200}
V=${TORCH_VENV:-/opt/torch/.venv}
mkdir -p "$O"
T=$(mktemp -d)
H=0000000000000000000000000000000000000000000000000000000000000000
pkg() { # name version wheel [extra line]
	printf '[[packages]]\nname = "%s"\nversion = "%s"\n%s\nwheels = [{ name = "%s", url = "https://files.example/%s", hashes = { sha256 = "%s" } }]\n\n' \
		"$1" "$2" "${4:-}" "$3" "$3" "$H"
}
head_() { printf 'lock-version = "1.0"\ncreated-by = "uv"\nrequires-python = ">=3.10"\n\n'; }
"$V/bin/python" -c 'import torch,sys; print(torch.__version__, torch.version.cuda, torch.cuda.get_arch_list(), torch.cuda.get_device_capability(), sys.version.split()[0])' >"$O/torch.txt" 2>&1
TV=$("$V/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null)
PY=$("$V/bin/python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])' 2>/dev/null)
{ head_; pkg torch "$TV" "torch-$TV-$PY-$PY-manylinux_2_28_x86_64.whl" 'index = "https://download.pytorch.org/whl/cu130"'; } >"$T/own.toml"
{ head_; pkg torch "2.6.0+cu124" "torch-2.6.0+cu124-$PY-$PY-linux_x86_64.whl" 'index = "https://download.pytorch.org/whl/cu124"'; } >"$T/cu124.toml"
{ head_; pkg torch "1.13.1+cu116" "torch-1.13.1+cu116-cp310-cp310-linux_x86_64.whl" 'index = "https://download.pytorch.org/whl/cu116"'; } >"$T/cu116.toml"
{ head_; pkg nvidia-cudnn-cu13 9.19.0.56 nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl; } >"$T/cu13wheels.toml"
{ head_; pkg numpy 2.3.5 "numpy-2.3.5-$PY-$PY-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl"; } >"$T/aarch64.toml"
export VIRTUAL_ENV="$V" PATH="$V/bin:$PATH"
for l in own cu124 cu116 cu13wheels aarch64; do
	/usr/bin/time -f "%e s" "$G" --json preflight --lock "$T/$l.toml" >"$O/preflight-$l.json" 2>"$O/preflight-$l.err"
	echo "exit $?" >>"$O/preflight-$l.err"
	"$G" preflight --lock "$T/$l.toml" >"$O/preflight-$l.txt" 2>&1
done
P=$(mktemp -d)
printf '[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.10"\ndependencies = []\n\n[tool.gpuenv.targets.h200]\ngpu = "H200"\ndriver = "580.159.04"\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n\n[tool.gpuenv.targets.h200old]\ngpu = "H200"\ndriver = "575.51.03"\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n\n[tool.gpuenv.targets.t4]\ngpu = "T4"\ndriver = "525.85.12"\npython = "3.10"\nplatform = "manylinux_2_28_x86_64"\n' >"$P/pyproject.toml"
"$G" labels --project "$P" >"$O/labels-project.txt" 2>"$O/labels-project.err"
echo "exit $?" >>"$O/labels-project.err"
rm -rf "$T" "$P"
for f in "$O"/*.txt "$O"/*.err; do echo "== $(basename "$f")"; cat "$f"; done >"$O/summary"
tar -C "$O" -czf "$O/all.tar.gz" --exclude all.tar.gz --exclude summary .
find "$O" -mindepth 1 ! -name summary ! -name all.tar.gz -delete
grep -A40 '== labels-project' "$O/summary"
