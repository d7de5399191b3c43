#!/usr/bin/env python3
"""gpuenv sync against pip install on one set of real-sized wheels (bench/install.sh runs this).

The wheels: ../shared/tools/mkindex.py --payload over ../shared/corpus/local-env
(real METADATA, every file RECORD lists at its real size: about 208 MB in 28.5k
files once installed).  The project: [project] dependencies = the top-level set
(../shared/tools/toplevel.py), one target (no GPU, Python 3.11, this machine's
manylinux platform), locked once by gpuenv (not timed) against the folder as a
file:// index.  Both tools install exactly the lock's 92 packages, with the
interpreter of pip 23.2.1 (/root/.pyenv/versions/3.11.7):

  gpuenv cold   gpuenv sync --locked into a venv that does not exist yet (gpuenv
                makes it: its time is included) with an empty --cache-dir
  gpuenv warm   the same with the cache of a previous run kept (wheels and their
                unpacked trees: files are hardlinked into the venv)
  gpuenv no-op  gpuenv sync --locked again on the synced venv
  pip           pip install --no-deps --no-index --find-links FILES --no-compile
                -r the lock's pins (pip's best case: nothing to resolve), into a
                fresh `python -m venv --without-pip` venv made before the clock
                starts, with an empty --cache-dir (pip caches nothing it
                installs from local files, so warm is the same)

Prints medians (min-max) per case and the ratios pip / gpuenv.

Elsewhere (the GPU machine has Python 3.12 only): --python and --pip-python
name the interpreters, --retag builds the index from a copy of the corpus
whose WHEEL files say py3-none-any (12 of the 94 are cp311 builds), and
--index DIR uses an index built before (carried there).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
SHARED = os.path.join(SRC, "..", "shared")
PIP_PY = "/root/.pyenv/versions/3.11.7/bin/python"


def this_platform():
    import platform
    lib, ver = platform.libc_ver()
    major, minor = (ver.split(".") + ["0"])[:2] if lib == "glibc" else ("2", "28")
    return "manylinux_%s_%s_%s" % (major, minor, platform.machine())


def timed(cmd, env=None):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return dt, p.stdout


def fmt(xs):
    return "%.3f s (%.3f-%.3f)" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--gpuenv", default=os.path.join(SRC, "build", "gpuenv"))
    ap.add_argument("--keep", help="work folder to keep (default: a temporary one)")
    ap.add_argument("--python", default=PIP_PY, help="the venvs' interpreter (default: pip 23.2.1's)")
    ap.add_argument("--pip-python", help="the interpreter that runs pip (default: --python)")
    ap.add_argument("--retag", action="store_true", help="wheels tagged py3-none-any (another Python than 3.11)")
    ap.add_argument("--index", help="an index built before (OUT_DIR of mkindex.py --payload)")
    a = ap.parse_args()
    pip_py = a.pip_python or a.python
    pyxy = subprocess.run([a.python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], check=True,
                          capture_output=True, text=True).stdout.strip()
    work = a.keep or tempfile.mkdtemp(prefix="gpuenv-bench-install-")
    os.makedirs(work, exist_ok=True)
    corpus = os.path.join(SHARED, "corpus", "local-env")
    idx = a.index or os.path.join(work, "index")
    if a.retag and not a.index:
        src, corpus = corpus, os.path.join(work, "corpus-retagged")
        if not os.path.isdir(corpus):
            shutil.copytree(src, corpus)
            for d in os.listdir(corpus):
                w = os.path.join(corpus, d, "WHEEL")
                if os.path.exists(w):
                    lines = [l for l in open(w) if not l.startswith("Tag:")] + ["Tag: py3-none-any\n"]
                    open(w, "w").write("".join(lines))
    if not os.path.isdir(os.path.join(idx, "simple")):
        subprocess.run([sys.executable, os.path.join(SHARED, "tools", "mkindex.py"), corpus, idx, "--payload"],
                       check=True, capture_output=True)
    toplevel = os.path.join(idx, "toplevel.txt")
    if not os.path.exists(toplevel):
        with open(toplevel, "w") as f:
            f.write(subprocess.run([sys.executable, os.path.join(SHARED, "tools", "toplevel.py"), corpus], check=True,
                                   capture_output=True, text=True).stdout)
    top = open(toplevel).read().split()
    proj = os.path.join(work, "project")
    os.makedirs(proj, exist_ok=True)
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "bench-install"\nversion = "0"\ndependencies = [%s]\n\n'
                '[tool.gpuenv.targets.local]\ngpu = "none"\npython = "%s"\nplatform = "%s"\n'
                % (", ".join('"%s"' % t for t in top), pyxy, this_platform()))
    url = "file://%s/simple/" % idx
    timed([a.gpuenv, "lock", "--project", proj, "--index-url", url, "--cache-dir", os.path.join(work, "lock-cache")])
    with open(os.path.join(proj, "pylock.local.toml"), "rb") as f:
        pkgs = tomllib.load(f)["packages"]
    pins = os.path.join(work, "pins.txt")
    with open(pins, "w") as f:
        f.write("".join("%s==%s\n" % (p["name"], p["version"]) for p in pkgs))
    print("set: %d packages locked from %s" % (len(pkgs), idx))

    res = {k: [] for k in ("gpuenv cold", "gpuenv warm", "gpuenv no-op", "pip")}
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    # Every run in folders of its own, and nothing deleted until the end: on
    # an ext4 volume without a journal (this VM's) the kernel skips the
    # inodes freed in the last minute or so when it allocates new ones
    # (ext4's recently_deleted()), so creating files right after removing
    # tens of thousands costs 3-8x the kernel time -- the removal's cost, not
    # the tool's (docs/benchmarks.md, "Install").  Leftovers of an earlier
    # invocation are moved aside (a rename frees no inode) and removed last.
    runs = os.path.join(work, "runs")
    if os.path.isdir(runs):
        os.rename(runs, os.path.join(work, "old-runs-%d" % os.getpid()))
    os.makedirs(runs)

    def sync_cmd(venv, gcache):
        return [a.gpuenv, "sync", "--project", proj, "--venv", venv, "--python", a.python, "--locked",
                "--cache-dir", gcache]

    for i in range(a.n):
        d = os.path.join(runs, str(i))
        gcache = os.path.join(d, "gpuenv-cache")
        # cold: no cache, no venv
        subprocess.run(["sync"])
        dt, out = timed(sync_cmd(os.path.join(d, "venv-cold"), gcache), env)
        res["gpuenv cold"].append(dt)
        if i == 0:
            print("gpuenv:", out.strip())
        # no-op
        dt, _ = timed(sync_cmd(os.path.join(d, "venv-cold"), gcache), env)
        res["gpuenv no-op"].append(dt)
        # warm: the cache kept, a fresh venv
        subprocess.run(["sync"])
        dt, _ = timed(sync_cmd(os.path.join(d, "venv-warm"), gcache), env)
        res["gpuenv warm"].append(dt)
        # pip
        venv = os.path.join(d, "venv-pip")
        subprocess.run([a.python, "-m", "venv", "--without-pip", venv], check=True)
        subprocess.run(["sync"])
        dt, _ = timed([pip_py, "-m", "pip", "--python", os.path.join(venv, "bin", "python"),
                       "--disable-pip-version-check", "install", "--no-deps", "--no-index", "--find-links",
                       os.path.join(idx, "files"), "--no-compile", "--cache-dir", os.path.join(d, "pip-cache"),
                       "-r", pins], env)
        res["pip"].append(dt)
        print("run %d: %s" % (i + 1, ", ".join("%s %.3f" % (k, v[-1]) for k, v in res.items())), flush=True)
    for e in os.listdir(work):
        if e == "runs" or e.startswith("old-runs-"):
            shutil.rmtree(os.path.join(work, e), ignore_errors=True)
    print()
    for k, v in res.items():
        print("%-13s %s" % (k, fmt(v)))
    p = statistics.median(res["pip"])
    print("ratio pip / gpuenv cold: %.1fx, warm: %.1fx" % (p / statistics.median(res["gpuenv cold"]),
                                                          p / statistics.median(res["gpuenv warm"])))
    print("no-op re-sync: %.1f ms" % (1000 * statistics.median(res["gpuenv no-op"])))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
