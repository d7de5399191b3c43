#!/usr/bin/env python3
"""gpuenv add against poetry add, one package into the local-env corpus project (bench/add.sh runs this).

The corpus index of ../shared/corpus/local-env is built and served on
127.0.0.1 as bench/lock_bench.py does (mkindex.py: real METADATA, stub
payloads; PyPI's Cache-Control).  Both projects hold the set's top-level
packages but one (ADD, default trio) and are locked once, untimed, which
also warms each tool's cache; then, N times, the manifest and the lock are
put back as they were and the one package is added, timed:

  gpuenv   gpuenv add ADD --no-sync --project P --index-url URL --cache-dir C
           (one target, gpu = "none", Python 3.11 on this machine's manylinux
           platform, as bench/lock_bench.py's local-env; pyproject.toml edited,
           every target re-locked; no sync)
  poetry   poetry add ADD --lock, POETRY_CACHE_DIR=C (Debian's python3-poetry,
           the index as the project's default source; its environment on the
           pyenv Python 3.11, made once before the timed runs; pyproject.toml
           edited, poetry.lock re-locked; no install)

Neither installs: what is timed is the edit and the re-lock with a warm
cache.  Prints the packages each lock holds, the medians (min-max) and the
ratio poetry/gpuenv.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lock_bench  # noqa: E402  (the server, the timer, the local-env target)

SRC = os.path.dirname(HERE)


def lock_packages(path, header):
    with open(path, encoding="utf-8") as f:
        return sum(1 for line in f if line.strip() == header)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=5, help="timed runs per tool (default 5)")
    ap.add_argument("--gpuenv", default=os.path.join(SRC, "build", "gpuenv"))
    ap.add_argument("--shared", default=os.path.join(SRC, "..", "shared"))
    ap.add_argument("--add", default="trio", help="the top-level package added (default trio)")
    ap.add_argument("--tools", default="gpuenv,poetry")
    ap.add_argument("--keep", help="keep the work folder here")
    a = ap.parse_args()
    name, cfg = "local-env", lock_bench.SETS["local-env"]
    work = a.keep or tempfile.mkdtemp(prefix="gpuenv-bench-add-")
    os.makedirs(work, exist_ok=True)
    print("bench/add: %d runs per tool, work folder %s, %s UTC, load average %.1f" % (
        a.n, work, time.strftime("%Y-%m-%d %H:%M", time.gmtime()), os.getloadavg()[0]), flush=True)
    corpus = os.path.join(a.shared, "corpus", name)
    idx = os.path.join(work, "index")
    if not os.path.isdir(os.path.join(idx, "simple")):
        subprocess.run([sys.executable, os.path.join(a.shared, "tools", "mkindex.py"), corpus, idx],
                       check=True, stdout=subprocess.DEVNULL)
    top = subprocess.run([sys.executable, os.path.join(a.shared, "tools", "toplevel.py"), corpus],
                         check=True, capture_output=True, text=True).stdout.split()
    if a.add not in top:
        print("--add %s is not one of the set's top-level packages: %s" % (a.add, " ".join(top)))
        return 2
    rest = [t for t in top if t != a.add]
    httpd, url = lock_bench.serve(idx)
    simple = url + "/simple/"
    results, counts, notes = {}, {}, []

    # gpuenv: [project] dependencies, one target
    proj = os.path.join(work, "gpuenv")
    os.makedirs(proj, exist_ok=True)
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "bench-add"\nversion = "0"\nrequires-python = ">=%s"\n'
                'dependencies = [\n%s]\n\n[tool.gpuenv.targets.bench]\n%s' % (
                    cfg["python"], "".join('    "%s",\n' % t for t in rest), cfg["target"]))
    gcache = os.path.join(work, "cache-gpuenv")
    genv = dict(os.environ, HOME=work)
    glock = os.path.join(proj, "pylock.bench.toml")

    # poetry: [tool.poetry] dependencies, the index as the default source
    pproj = os.path.join(work, "poetry")
    os.makedirs(pproj, exist_ok=True)
    with open(os.path.join(pproj, "pyproject.toml"), "w") as f:
        f.write('[tool.poetry]\nname = "bench-add"\nversion = "0"\ndescription = ""\nauthors = []\n\n'
                '[tool.poetry.dependencies]\npython = "~%s"\n%s\n\n'
                '[[tool.poetry.source]]\nname = "bench"\nurl = "%s"\ndefault = true\n\n'
                '[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' % (
                    cfg["python"], "\n".join('%s = "*"' % t for t in rest), simple))
    pcache = os.path.join(work, "cache-poetry")
    penv = dict(os.environ, POETRY_VIRTUALENVS_PATH=os.path.join(work, "poetry-venvs"), HOME=work,
                POETRY_CACHE_DIR=pcache)
    plock = os.path.join(pproj, "poetry.lock")

    tools = {
        "gpuenv": (proj, glock, "[[packages]]",
                   [a.gpuenv, "lock", "--project", proj, "--index-url", simple, "--cache-dir", gcache],
                   [a.gpuenv, "add", a.add, "--no-sync", "--project", proj, "--index-url", simple,
                    "--cache-dir", gcache], genv,
                   os.path.exists(a.gpuenv), "gpuenv not built (%s)" % a.gpuenv),
        "poetry": (pproj, plock, "[[package]]", ["poetry", "lock"], ["poetry", "add", a.add, "--lock"], penv,
                   shutil.which("poetry") is not None, "poetry not installed (apt-get install python3-poetry)"),
    }
    if "poetry" in a.tools.split(",") and shutil.which("poetry"):
        py = "/root/.pyenv/versions/%s/bin/python" % next(
            (v for v in sorted(os.listdir("/root/.pyenv/versions")) if v.startswith(cfg["python"] + ".")),
            "") if os.path.isdir("/root/.pyenv/versions") else ""
        for _ in range(2):  # offline, the first `env use` fails once (bench/lock_bench.py)
            if py and os.path.exists(py) and subprocess.run(["poetry", "env", "use", py], cwd=pproj, env=penv,
                                                            capture_output=True, timeout=600).returncode == 0:
                break
    for tool in a.tools.split(","):
        d, lockf, header, lock_cmd, add_cmd, env, ok, why = tools[tool]
        if not ok:
            notes.append("%s: %s" % (tool, why))
            continue
        try:
            lock_bench.timed(lock_cmd, cwd=d, env=env)  # the project's lock; the cache warmed
            before = {p: open(os.path.join(d, p), "rb").read() for p in ("pyproject.toml", os.path.basename(lockf))}
            n0 = lock_packages(lockf, header)
            runs = []
            for _ in range(a.n):
                for p, data in before.items():
                    with open(os.path.join(d, p), "wb") as f:
                        f.write(data)
                runs.append(lock_bench.timed(add_cmd, cwd=d, env=env))
                with open(os.path.join(d, "pyproject.toml")) as f:
                    if a.add not in f.read():
                        raise RuntimeError("%s add did not write %s into pyproject.toml" % (tool, a.add))
            counts[tool] = (n0, lock_packages(lockf, header))
            results[tool] = runs
            print("  %-7s add %s: median %.2f s (%d -> %d packages locked)" % (
                tool, a.add, statistics.median(runs), n0, counts[tool][1]), flush=True)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            notes.append("%s: failed: %s" % (tool, e))
    httpd.shutdown()
    print()
    print("| tool | command | packages locked before -> after | median s (min-max) | ratio |")
    print("|---|---|---|---|---|")
    base = results.get("gpuenv")
    for tool, runs in results.items():
        ratio = "%.1fx" % (statistics.median(runs) / statistics.median(base)) if base and tool != "gpuenv" else ""
        cmd = "gpuenv add %s --no-sync" % a.add if tool == "gpuenv" else "poetry add %s --lock" % a.add
        print("| %s | `%s` | %d -> %d | %.2f (%.2f-%.2f) | %s |" % (
            tool, cmd, counts[tool][0], counts[tool][1], statistics.median(runs), min(runs), max(runs), ratio))
    return lock_bench.finish(notes, work, a.keep)


if __name__ == "__main__":
    sys.exit(main())
