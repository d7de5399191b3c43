#!/usr/bin/env python3
"""Two gpuenv binaries side by side (bench/shape.sh runs this): probe, doctor,
lock and sync on the ../shared/corpus/local-env index (mkindex.py --payload,
file://, as bench/install.sh builds it), one CPU target of this machine's
Python; runs interleaved (base, new, base, new, ...) so that both see the
same machine load; medians (min-max) in milliseconds and the ratio new/base.

  probe        gpuenv probe --json
  doctor       gpuenv doctor
  lock warm    gpuenv lock (the HTTP cache and the lock there: "unchanged")
  sync warm    gpuenv sync --locked into a fresh venv (the wheel cache warm)
  sync no-op   gpuenv sync --locked into a venv that already matches
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))


def this_platform():
    import platform
    lib, ver = platform.libc_ver()
    a, b = (ver.split(".") + ["0"])[:2] if lib == "glibc" else ("2", "28")
    return "manylinux_%s_%s_%s" % (a, b, platform.machine())


def timed(cmd, before=None):
    if before:
        before()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 1):  # doctor exits 1 on a machine with findings
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-500:]))
    return dt * 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=7)
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--base-name", default="base")
    ap.add_argument("--new-name", default="new")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    work = a.work
    idx = os.path.join(work, "index")
    corpus = os.path.join(SHARED, "corpus", "local-env")
    if not os.path.isdir(os.path.join(idx, "simple")):
        subprocess.run([sys.executable, os.path.join(SHARED, "tools", "mkindex.py"), corpus, idx, "--payload"],
                       check=True, capture_output=True)
    top = subprocess.run([sys.executable, os.path.join(SHARED, "tools", "toplevel.py"), corpus], check=True,
                         capture_output=True, text=True).stdout.split()
    py = os.path.realpath(sys.executable)
    pyxy = "%d.%d" % sys.version_info[:2]
    url = "file://%s/simple/" % idx
    bins = {"base": os.path.abspath(a.base), "new": os.path.abspath(a.new)}
    cmds = {}
    for k, b in bins.items():
        proj = os.path.join(work, "project-" + k)
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "pyproject.toml"), "w") as f:
            f.write('[project]\nname = "bench-shape"\nversion = "0"\ndependencies = [%s]\n\n'
                    '[tool.gpuenv.targets.local]\ngpu = "none"\npython = "%s"\nplatform = "%s"\n'
                    % (", ".join('"%s"' % t for t in top), pyxy, this_platform()))
        cache = os.path.join(work, "cache-" + k)
        common = ["--project", proj, "--index-url", url, "--cache-dir", cache]
        # warm the caches and the lock, and make the no-op venv
        subprocess.run([b, "lock", *common], check=True, capture_output=True)
        noop = os.path.join(work, "venv-noop-" + k)
        subprocess.run([b, "sync", *common, "--locked", "--venv", noop, "--python", py], check=True,
                       capture_output=True)
        fresh = os.path.join(work, "venv-fresh-" + k)
        cmds[k] = {
            "probe": ([b, "probe", "--json"], None),
            "doctor": ([b, "doctor"], None),
            "lock warm": ([b, "lock", *common], None),
            "sync warm": ([b, "sync", *common, "--locked", "--venv", fresh, "--python", py],
                          lambda v=fresh: shutil.rmtree(v, ignore_errors=True)),
            "sync no-op": ([b, "sync", *common, "--locked", "--venv", noop, "--python", py], None),
        }
    times = {k: {w: [] for w in cmds[k]} for k in cmds}
    for w in cmds["base"]:
        for _ in range(a.n):
            for k in ("base", "new"):
                cmd, before = cmds[k][w]
                times[k][w].append(timed(cmd, before))
    print("%d top-level requirements (../shared/corpus/local-env), medians of %d runs, ms (min-max)" % (len(top), a.n))
    print("| | %s (baseline) | %s (this tree) | this / baseline |" % (a.base_name, a.new_name))
    print("|---|---|---|---|")
    for w in cmds["base"]:
        mb, mn = statistics.median(times["base"][w]), statistics.median(times["new"][w])
        print("| %s | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.2f |" % (
            w, mb, min(times["base"][w]), max(times["base"][w]), mn, min(times["new"][w]), max(times["new"][w]),
            mn / mb if mb else 0))


if __name__ == "__main__":
    main()
