#!/usr/bin/env python3
"""gpuenv lock against pip and Poetry on one 127.0.0.1 index (bench/lock.sh runs this).

For each corpus set (../shared/corpus/local-env, h200-env): a PEP 503 index
built with ../shared/tools/mkindex.py (real METADATA, stub payloads) is
served over HTTP/1.1 on 127.0.0.1 (a threaded server sending PyPI's
Cache-Control: max-age=600), the top-level set comes
from ../shared/tools/toplevel.py, and each tool resolves it N times cold
(a fresh cache folder) and N times warm (the cache of a first run kept):

  gpuenv   gpuenv lock --project P --index-url URL --cache-dir C
           (P/pyproject.toml: [project] dependencies = the set; one target,
           gpu = "none" for local-env (Python 3.11 on this machine's manylinux
           platform, as pip without --platform), for h200-env the H200 of
           the satellite example (driver 580.159.04, Python 3.12,
           manylinux_2_39_x86_64: the corpus machine's Ubuntu 24.04) with torch-backend = "cu130" and
           --torch-index URL/whl, whose cu130/ is the same index)
  pip      pip install --dry-run --report - --ignore-installed --index-url URL
           -r toplevel.txt --cache-dir C (pip 23.2.1 of /root/.pyenv/versions/3.11.7;
           h200-env: --python-version 3.12 --only-binary=:all: --target T
           (pip 23.2.1 requires it with these) and one --platform for each
           tag a manylinux_2_39 x86_64 machine runs, since pip takes a given
           --platform literally)
  poetry   poetry lock on an equivalent [tool.poetry] pyproject (every name "*",
           the index as the default source), POETRY_CACHE_DIR=C (Debian's
           python3-poetry; its environment on the pyenv Python of the set's
           version, made once before the timed runs)

Prints the packages each tool's answer holds, medians (min-max) per tool
and state, and the ratios pip/gpuenv and poetry/gpuenv.  A tool that is missing or fails is reported, not timed.
"""
import argparse
import functools
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
PIP_PY = "/root/.pyenv/versions/3.11.7/bin/python"

def this_platform():
    """This machine's manylinux tag: pip without --platform resolves for it."""
    import platform
    lib, ver = platform.libc_ver()
    major, minor = (ver.split(".") + ["0"])[:2] if lib == "glibc" else ("2", "28")
    return "manylinux_%s_%s_%s" % (major, minor, platform.machine())


def pip_platforms(glibc_minor, arch="x86_64"):
    """--platform options for pip 23.2.1 that stand for one manylinux_2_N
    platform: pip takes a given --platform literally (no older manylinux
    tags), so every tag such a machine runs is listed, as a target's
    platform means for gpuenv."""
    tags = ["manylinux_2_%d_%s" % (m, arch) for m in range(glibc_minor, 4, -1)]
    tags += ["manylinux2014_" + arch, "manylinux2010_" + arch, "manylinux1_" + arch, "linux_" + arch]
    return [x for t in tags for x in ("--platform", t)]


H200_GLIBC = 39  # the corpus machine's Ubuntu 24.04 (its wheels need at least 2.31)

SETS = {
    # pip resolves local-env for this machine (CPython 3.11, glibc 2.36 on
    # Debian 12): the target says the same
    "local-env": {"python": "3.11", "pip_args": [],
                  "target": 'gpu = "none"\npython = "3.11"\nplatform = "%s"\n' % this_platform(),
                  "tool": ""},
    "h200-env": {"python": "3.12",
                 # --ignore-requires-python: pip 23.2.1 checks a wheel's
                 # Requires-Python against its own 3.11 even with
                 # --python-version 3.12 ("flax requires a different
                 # Python"); the index has one version per project, so the
                 # check decides no choice
                 "pip_args": ["--python-version", "3.12", "--only-binary=:all:",
                              "--ignore-requires-python"] + pip_platforms(H200_GLIBC),
                 "target": 'gpu = "H200"\ndriver = "580.159.04"\npython = "3.12"\n'
                           'platform = "manylinux_2_%d_x86_64"\n' % H200_GLIBC,
                 "tool": '[tool.gpuenv]\ntorch-backend = "cu130"\n\n'},
}


class Quiet(http.server.SimpleHTTPRequestHandler):
    """Files of the index folder over HTTP/1.1 keep-alive, with the
    Cache-Control PyPI sends (max-age=600) and Last-Modified (conditional
    requests answered 304), so warm runs of every tool can reuse their
    cache as they would against PyPI."""
    protocol_version = "HTTP/1.1"
    # the handler writes headers and body in separate sends: with Nagle on,
    # a keep-alive client (pip) waits out the delayed ACK, 40 ms a request
    disable_nagle_algorithm = True

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600, public")
        super().end_headers()

    def log_message(self, *a):
        pass


class Server(http.server.ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a client that opens 16
    # connections at once (gpuenv does) loses SYNs and waits a second for
    # each retransmit, a cost no real index imposes
    request_queue_size = 128


def serve(directory):
    httpd = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=directory))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, "http://127.0.0.1:%d" % httpd.server_address[1]


def timed(cmd, cwd=None, env=None, check_out=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("exit %d: %s" % (p.returncode, (p.stderr or p.stdout).strip()[-600:]))
    if check_out:
        check_out(p.stdout, cwd)
    return dt


COUNTS = {}  # (set, tool) -> packages in the last answer


def count_pip(key):
    def check(out, _cwd):
        n = len(json.loads(out)["install"])
        if n == 0:
            raise RuntimeError("pip resolved nothing")
        COUNTS[key] = n
    return check


def count_lock(key, path, header):
    def check(_out, _cwd):
        with open(path, encoding="utf-8") as f:
            COUNTS[key] = sum(1 for line in f if line.strip() == header)
    return check


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=5, help="runs per tool and state (default 5)")
    ap.add_argument("--gpuenv", default=os.path.join(SRC, "build", "gpuenv"))
    ap.add_argument("--shared", default=os.path.join(SRC, "..", "shared"))
    ap.add_argument("--sets", default="local-env,h200-env")
    ap.add_argument("--tools", default="gpuenv,pip,poetry")
    ap.add_argument("--keep", help="keep the work folder here")
    a = ap.parse_args()
    tools = a.tools.split(",")
    work = a.keep or tempfile.mkdtemp(prefix="gpuenv-bench-lock-")
    os.makedirs(work, exist_ok=True)
    results = {}
    notes = []
    print("bench/lock: %d runs per tool and state, work folder %s, %s UTC, load average %.1f" % (
        a.n, work, time.strftime("%Y-%m-%d %H:%M", time.gmtime()), os.getloadavg()[0]), flush=True)
    for name in a.sets.split(","):
        cfg = SETS[name]
        corpus = os.path.join(a.shared, "corpus", name)
        idx = os.path.join(work, name + "-index")
        if not os.path.isdir(os.path.join(idx, "simple")):
            subprocess.run([sys.executable, os.path.join(a.shared, "tools", "mkindex.py"), corpus, idx],
                           check=True, stdout=subprocess.DEVNULL)
        # the torch index layout over the same pages: <url>/whl/cu130/ = <url>/simple/
        os.makedirs(os.path.join(idx, "whl"), exist_ok=True)
        for link, target in (("cu130", "../simple"), ("files", "../files")):
            p = os.path.join(idx, "whl", link)
            if not os.path.lexists(p):
                os.symlink(target, p)
        top = subprocess.run([sys.executable, os.path.join(a.shared, "tools", "toplevel.py"), corpus],
                             check=True, capture_output=True, text=True).stdout.split()
        httpd, url = serve(idx)
        simple = url + "/simple/"
        proj = os.path.join(work, name + "-gpuenv")
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "pyproject.toml"), "w") as f:
            f.write('[project]\nname = "bench-%s"\nversion = "0"\nrequires-python = ">=%s"\n'
                    'dependencies = [%s]\n\n%s[tool.gpuenv.targets.bench]\n%s' % (
                        name, cfg["python"], ", ".join(json.dumps(t) for t in top), cfg["tool"], cfg["target"]))
        with open(os.path.join(work, name + "-toplevel.txt"), "w") as f:
            f.write("\n".join(top) + "\n")
        pproj = os.path.join(work, name + "-poetry")
        os.makedirs(pproj, exist_ok=True)
        with open(os.path.join(pproj, "pyproject.toml"), "w") as f:
            f.write('[tool.poetry]\nname = "bench-%s"\nversion = "0"\ndescription = ""\nauthors = []\n\n'
                    '[tool.poetry.dependencies]\npython = "~%s"\n%s\n\n'
                    '[[tool.poetry.source]]\nname = "bench"\nurl = "%s"\ndefault = true\n\n'
                    '[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n' % (
                        name, cfg["python"], "\n".join('%s = "*"' % json.dumps(t) for t in top), simple))

        def gpuenv_cmd(cache):
            c = [a.gpuenv, "lock", "--project", proj, "--index-url", simple, "--cache-dir", cache]
            if cfg["tool"]:
                c += ["--torch-index", url + "/whl"]
            return c

        def pip_cmd(cache):
            c = [PIP_PY, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-",
                 "--ignore-installed", "--disable-pip-version-check", "--index-url", simple,
                 "-r", os.path.join(work, name + "-toplevel.txt"), "--cache-dir", cache] + cfg["pip_args"]
            if cfg["pip_args"]:
                c += ["--target", os.path.join(work, name + "-pip-target")]
            return c

        poetry_env = dict(os.environ, POETRY_VIRTUALENVS_PATH=os.path.join(work, "poetry-venvs"), HOME=work)
        if "poetry" in tools and shutil.which("poetry"):
            # Poetry locks with an interpreter the project's python accepts:
            # the pyenv one of that version, set once, untimed
            py = "/root/.pyenv/versions/%s" % next(
                (v for v in sorted(os.listdir("/root/.pyenv/versions")) if v.startswith(cfg["python"] + ".")),
                "") if os.path.isdir("/root/.pyenv/versions") else ""
            # (offline, virtualenv cannot seed pip into the new environment
            # and `env use` fails once; the environment is made, and a
            # second `env use` selects it)
            for _ in range(2):
                if py and os.path.exists(py + "/bin/python") and subprocess.run(
                        ["poetry", "env", "use", py + "/bin/python"], cwd=pproj, env=poetry_env,
                        capture_output=True, timeout=600).returncode == 0:
                    break

        runners = {
            "gpuenv": (lambda cache: timed(gpuenv_cmd(cache), env=dict(os.environ, HOME=work),
                                           check_out=count_lock((name, "gpuenv"),
                                                                os.path.join(proj, "pylock.bench.toml"),
                                                                "[[packages]]")),
                       os.path.exists(a.gpuenv) and b"usage: gpuenv lock" in subprocess.run(
                           [a.gpuenv, "lock", "--help"], capture_output=True).stdout,
                       "gpuenv lock not built (%s)" % a.gpuenv),
            "pip": (lambda cache: timed(pip_cmd(cache), env=dict(os.environ, PIP_CONFIG_FILE=os.devnull),
                                        check_out=count_pip((name, "pip"))),
                    os.path.exists(PIP_PY), "pip 23.2.1 not found at " + PIP_PY),
            "poetry": (lambda cache: timed(["poetry", "lock"], cwd=pproj,
                                           env=dict(poetry_env, POETRY_CACHE_DIR=cache),
                                           check_out=count_lock((name, "poetry"),
                                                                os.path.join(pproj, "poetry.lock"),
                                                                "[[package]]")),
                       shutil.which("poetry") is not None, "poetry not installed (apt-get install python3-poetry)"),
        }
        for tool in tools:
            run, ok, why = runners[tool]
            if not ok:
                notes.append("%s %s: %s" % (name, tool, why))
                continue
            try:
                cold = []
                for i in range(a.n):
                    cache = os.path.join(work, "cache-%s-%s-cold-%d" % (name, tool, i))
                    shutil.rmtree(cache, ignore_errors=True)
                    for lk in (os.path.join(proj, "pylock.bench.toml"), os.path.join(pproj, "poetry.lock")):
                        if os.path.exists(lk):
                            os.remove(lk)
                    cold.append(run(cache))
                    shutil.rmtree(cache, ignore_errors=True)
                cache = os.path.join(work, "cache-%s-%s-warm" % (name, tool))
                shutil.rmtree(cache, ignore_errors=True)
                run(cache)  # fills the cache
                warm = []
                for i in range(a.n):
                    for lk in (os.path.join(proj, "pylock.bench.toml"), os.path.join(pproj, "poetry.lock")):
                        if os.path.exists(lk):
                            os.remove(lk)
                    warm.append(run(cache))
                results[(name, tool)] = (cold, warm)
                print("  %-9s %-7s cold %.2f s  warm %.2f s" % (name, tool, statistics.median(cold),
                                                                 statistics.median(warm)), flush=True)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                notes.append("%s %s: failed: %s" % (name, tool, e))
        httpd.shutdown()
    print()
    print("| set | tool | packages | cold median s (min-max) | warm median s (min-max) | cold ratio | warm ratio |")
    print("|---|---|---|---|---|---|---|")
    for (name, tool), (cold, warm) in results.items():
        base = results.get((name, "gpuenv"))
        rc = rw = ""
        if base and tool != "gpuenv":
            rc = "%.1fx" % (statistics.median(cold) / statistics.median(base[0]))
            rw = "%.1fx" % (statistics.median(warm) / statistics.median(base[1]))
        print("| %s | %s | %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %s | %s |" % (
            name, tool, COUNTS.get((name, tool), "?"), statistics.median(cold), min(cold), max(cold),
            statistics.median(warm), min(warm), max(warm), rc, rw))
    return finish(notes, work, a.keep)


def finish(notes, work, keep):
    """The notes, the load at the end, the work folder removed unless kept."""
    for n in notes:
        print("note:", n)
    print("load average at the end: %.1f" % os.getloadavg()[0])
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
