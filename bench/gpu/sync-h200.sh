#!/bin/sh
# gpuenv sync on a real GPU machine, through the device tool: the installed
# torch stack of /opt/torch/.venv repacked into wheels and a file:// index
# (bench/gpu/repack_env.py: the machine reaches no index), a project with
# CPU, T4, A100 and H200 targets; then:
#   - sync --target auto --dry-run: which target this machine is, and why;
#   - sync cold (an empty cache), no-op re-sync, warm (cache kept, new venv),
#     against pip install --no-deps of the same wheels into a fresh venv;
#   - the floor for the same wheels: read them from a cold page cache and unpack them
#     with every core (issue 26 item 2), so the cold sync's ratio to the
#     machine's limit is measured in the same run as its ratio to pip;
#   - gpuenv run -- python: torch from the synced venv runs a CUDA matmul;
#   - pip check, doctor --env on the synced venv.
# usage: sh bench/gpu/sync-h200.sh GPUENV_BIN OUT_DIR
set -u
BIN=$(readlink -f "$1"); OUT=$2; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
W=/tmp/gpuenv-sync-h200; mkdir -p "$W"; (cd "$W" && rm -rf project venv cache lock-cache pipvenv pipcache)   # the index is kept: a rerun skips the repack
VPY=${VPY:-/opt/torch/.venv/bin/python}   # (VPY, DRIVER, DEPS: for a dry run elsewhere)
SITE=$($VPY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
BASEPY=$($VPY -c 'import sys; print(sys._base_executable)')
PYXY=$($VPY -c 'import sys; print("%d.%d" % sys.version_info[:2])')
{
  echo "date: $(date -u +%FT%TZ)"; uname -a; nproc; df -T /tmp | tail -1
  echo "python: $BASEPY ($PYXY), site $SITE"
  "$BIN" --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} > "$OUT/machine.txt" 2>&1
DRIVER=${DRIVER:-$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)}
GLIBC=$(ldd --version | head -1 | sed 's/.* //')
PLAT="manylinux_$(echo "$GLIBC" | tr . _)_$(uname -m)"
t0=$(date +%s%N)
[ -d "$W/index/simple" ] || python3 "$HERE/repack_env.py" "$SITE" "$W/index" > "$OUT/repack.txt" 2>&1
echo "repack: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/machine.txt"
du -sh "$W/index/files" >> "$OUT/machine.txt"
P="$W/project"; mkdir -p "$P"
[ -n "${DEPS:-}" ] || DEPS='"torch"'
cat > "$P/pyproject.toml" <<EOT
[project]
name = "h200-sync"
version = "0.1"
dependencies = [$DEPS]

[tool.gpuenv]
torch-backend = "auto"

[tool.gpuenv.targets.cpu]
gpu = "none"
python = "$PYXY"
platform = "$PLAT"

[tool.gpuenv.targets.t4]
gpu = "T4"
driver = "535.104.05"
python = "$PYXY"
platform = "$PLAT"

[tool.gpuenv.targets.a100]
gpu = "A100"
driver = "570.86.10"
python = "$PYXY"
platform = "$PLAT"

[tool.gpuenv.targets.h200]
gpu = "H200"
driver = "$DRIVER"
python = "$PYXY"
platform = "$PLAT"
EOT
cp "$P/pyproject.toml" "$OUT/"
IDX="--index-url file://$W/index/simple/ --torch-index file://$W/index/whl"
V="$W/venv"; C="$W/cache"
"$BIN" lock --project "$P" --target h200 $IDX --cache-dir "$W/lock-cache" > "$OUT/lock.txt" 2>&1
echo "lock exit $?" >> "$OUT/lock.txt"
cp "$P"/pylock.*.toml "$OUT/" 2>/dev/null
"$BIN" sync --project "$P" --venv "$V" --python "$BASEPY" --dry-run $IDX --cache-dir "$C" > "$OUT/auto-dry-run.txt" 2>&1
echo "exit $?" >> "$OUT/auto-dry-run.txt"
tm() { s=$(date +%s%N); "$@"; rc=$?; e=$(date +%s%N); echo "$(( (e - s) / 1000000 )) ms (exit $rc): $*" | sed "s|$W|W|g"; }
{
  rm -rf "$C" "$V"; sync
  tm "$BIN" sync --project "$P" --venv "$V" --python "$BASEPY" --locked --cache-dir "$C"
  for i in 1 2 3 4 5; do tm "$BIN" sync --project "$P" --venv "$V" --locked --cache-dir "$C"; done
  for i in 1 2 3; do rm -rf "$V"; sync; tm "$BIN" sync --project "$P" --venv "$V" --python "$BASEPY" --locked --cache-dir "$C"; done
  # pip, the same wheels, nothing to resolve
  python3 - "$P/pylock.h200.toml" > "$W/pins.txt" <<'EOPY'
import sys, tomllib
print("".join("%s==%s\n" % (p["name"], p["version"]) for p in tomllib.load(open(sys.argv[1], "rb"))["packages"]))
EOPY
  for i in 1 2; do
    rm -rf "$W/pipvenv"; "$BASEPY" -m venv --without-pip "$W/pipvenv"; sync
    tm $VPY -m pip --python "$W/pipvenv/bin/python" --disable-pip-version-check install --no-deps --no-index \
      --find-links "$W/index/files" --no-compile --cache-dir "$W/pipcache" -r "$W/pins.txt" -q
  done
  # the machine's floor for the same wheels (issue 26 item 2): the wheels the
  # lock installs read from a cold page cache with every core, then unpacked
  # with every core (one Python zipfile process per wheel, as many at once as
  # there are CPUs) and written to disk (sync), into a scratch folder
  python3 - "$P/pylock.h200.toml" > "$W/wheels.txt" <<'EOPY'
import sys, tomllib, urllib.parse
for p in tomllib.load(open(sys.argv[1], "rb"))["packages"]:
    for w in p.get("wheels", [])[:1]:
        print(urllib.parse.unquote(urllib.parse.urlparse(w["url"]).path))
EOPY
  echo "floor: $(wc -l < "$W/wheels.txt") wheels, $(xargs -a "$W/wheels.txt" du -cb | tail -1 | cut -f1) bytes, $(nproc) CPUs"
  for i in 1 2; do
    sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "(page cache not dropped: not root)"
    tm sh -c "xargs -a '$W/wheels.txt' -P $(nproc) -n 1 cat > /dev/null"
    rm -rf "$W/floor"; mkdir -p "$W/floor"; sync
    tm sh -c "xargs -a '$W/wheels.txt' -P $(nproc) -I{} python3 -c 'import os, sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(os.path.join(sys.argv[2], os.path.basename(sys.argv[1])))' {} '$W/floor' && sync"
  done
  rm -rf "$W/floor"
  # where a cold sync's time goes (issue 26 item 1): one more cold run with
  # --profile, summed by gpuenv profile (not one of the timed runs above)
  rm -rf "$C" "$V"; sync
  tm "$BIN" sync --project "$P" --venv "$V" --python "$BASEPY" --locked --cache-dir "$C" --profile "$OUT/cold-profile.json"
  "$BIN" profile "$OUT/cold-profile.json" --top 12 > "$OUT/cold-profile.txt" 2>&1
} > "$OUT/timings.txt" 2>&1
"$BIN" run --project "$P" --venv "$V" --locked --cache-dir "$C" -- python -c '
import torch, sys
print(sys.prefix, torch.__version__, torch.__file__)
print("cuda", torch.cuda.is_available(), torch.version.cuda, torch.cuda.get_device_name(0))
x = torch.randn(4096, 4096, device="cuda"); y = x @ x; torch.cuda.synchronize()
print("matmul ok", float(y.float().abs().mean()))' > "$OUT/run.txt" 2>&1
echo "exit $?" >> "$OUT/run.txt"
$VPY -m pip --python "$V/bin/python" --disable-pip-version-check check > "$OUT/pip-check.txt" 2>&1; echo "exit $?" >> "$OUT/pip-check.txt"
$VPY -m pip --python "$V/bin/python" --disable-pip-version-check list > "$OUT/pip-list.txt" 2>&1
"$BIN" doctor --env "$V" > "$OUT/doctor-env.txt" 2>&1; echo "exit $?" >> "$OUT/doctor-env.txt"
"$BIN" sync --project "$P" --venv "$V" --locked --cache-dir "$C" --json > "$OUT/noop.json" 2>&1
"$BIN" cache size --cache-dir "$C" > "$OUT/cache-size.txt" 2>&1
find "$V" -type f | wc -l > "$OUT/venv-files.txt"; find "$V" -type d | wc -l >> "$OUT/venv-files.txt"; du -sh "$V" >> "$OUT/venv-files.txt"
sed -i "s|$W|W|g" "$OUT"/*.txt 2>/dev/null
cat "$OUT"/machine.txt "$OUT"/auto-dry-run.txt "$OUT"/timings.txt "$OUT"/cold-profile.txt "$OUT"/run.txt "$OUT"/pip-check.txt "$OUT"/doctor-env.txt
