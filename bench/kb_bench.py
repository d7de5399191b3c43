#!/usr/bin/env python3
"""Two gpuenv binaries on the same `gpuenv kb` questions (bench/kb.sh runs this).

Each question runs once per binary to warm the page cache, then ROUNDS times
per binary, the binaries alternating, so a load change on the machine falls
on both.  Medians of the CPU time (user + system of the process: a busy
machine inflates wall time far more) and of the wall time.  The answers of the two must be identical (stdout and exit status):
a faster answer that differs is no answer.  The installed-bundle folder is an
empty temporary one, so both read the built-in knowledge base.

  kb load      kb sources: all nine files loaded into rows, the counts printed
  kb torch     the survey of every torch build on an RTX 5090 with driver
               570.124.06, and the pick (JSON)
  kb torch H100 535    the same on an H100 with an R535 driver (text)
  kb image     an NGC image on an H100 with driver 535.104.05
  kb image hub a Docker Hub tag read by its grammar, on the same host
  gpuenv_kb_load in-process: bench/kb_load.c linked with the libgpuenv.a beside
               each binary (when there is one)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

QUESTIONS = [
    ("kb load (kb sources)", ["kb", "sources"]),
    ("kb torch --gpu 'RTX 5090' --driver 570.124.06 --json",
     ["kb", "torch", "--gpu", "RTX 5090", "--driver", "570.124.06", "--json"]),
    ("kb torch --gpu H100 --driver 535.104.05", ["kb", "torch", "--gpu", "H100", "--driver", "535.104.05"]),
    ("kb image nvcr.io/nvidia/pytorch:24.05-py3 (H100, 535)",
     ["kb", "image", "nvcr.io/nvidia/pytorch:24.05-py3", "--gpu", "H100", "--driver", "535.104.05"]),
    ("kb image nvidia/cuda:12.4.1-runtime-ubuntu22.04 (H100, 535)",
     ["kb", "image", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "--gpu", "H100", "--driver", "535.104.05"]),
]


def run(binary, args, env):
    """(CPU ms, wall ms, exit status, stdout) of one run: the CPU time (user +
    system, from wait4) is what a loaded machine disturbs least."""
    t = time.perf_counter()
    p = subprocess.Popen([binary] + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = (time.perf_counter() - t) * 1e3
    return (ru.ru_utime + ru.ru_stime) * 1e3, wall, p.returncode, out


def load_harness(binary, out):
    """bench/kb_load.c built against the libgpuenv.a beside binary (its tree's
    include/ above the build folder); None when there is none."""
    build = os.path.dirname(os.path.abspath(binary))
    lib, inc = os.path.join(build, "libgpuenv.a"), os.path.join(build, "..", "include")
    if not os.path.exists(lib):
        return None
    libs = subprocess.run(["pkg-config", "--libs", "jansson", "libcrypto", "libcurl", "zlib"],
                          stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["cc", "-O2", "-std=c11", "-D_GNU_SOURCE", "-I", inc, os.path.join(here, "kb_load.c"),
                    lib] + libs + ["-ldl", "-lpthread", "-lm", "-o", out], check=True)
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        print("usage: kb_bench.py OLD_GPUENV NEW_GPUENV [ROUNDS]", file=sys.stderr)
        return 2
    old, new = argv[0], argv[1]
    rounds = int(argv[2]) if len(argv) > 2 else 21
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, GPUENV_DATA_DIR=data, NO_COLOR="1")
        print("load average: %.2f %.2f %.2f" % os.getloadavg())
        print("| question | CPU before (ms) | CPU after (ms) | after/before | wall before / after (ms) |")
        print("|---|---|---|---|---|")
        bad = 0
        for what, args in QUESTIONS:
            ro, rn = run(old, args, env), run(new, args, env)
            if ro[2:] != rn[2:]:
                print("| %s | answers differ (exit %d / %d) | | | |" % (what, ro[2], rn[2]))
                bad += 1
                continue
            to, tn, wo, wn = [], [], [], []
            for _ in range(rounds):
                r = run(old, args, env)
                to.append(r[0])
                wo.append(r[1])
                r = run(new, args, env)
                tn.append(r[0])
                wn.append(r[1])
            mo, mn = statistics.median(to), statistics.median(tn)
            print("| %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.3f | %.1f / %.1f |" % (
                what, mo, min(to), max(to), mn, min(tn), max(tn), mn / mo,
                statistics.median(wo), statistics.median(wn)))
        ho, hn = load_harness(old, os.path.join(data, "old")), load_harness(new, os.path.join(data, "new"))
        if ho and hn:
            # gpuenv_kb_load in one process (bench/kb_load.c): 101 loads a run
            lo, ln = [], []
            for _ in range(max(3, rounds // 4)):
                for h, acc in ((ho, lo), (hn, ln)):
                    med = subprocess.run([h, "101"], env=env, stdout=subprocess.PIPE, text=True,
                                         check=True).stdout.split()
                    acc.append(float(med[0]) / 1e3)
            mo, mn = statistics.median(lo), statistics.median(ln)
            print("| gpuenv_kb_load in-process (CPU, median of %d runs of 101) | %.3f (%.3f-%.3f) | "
                  "%.3f (%.3f-%.3f) | %.3f | |" % (len(lo), mo, min(lo), max(lo), mn, min(ln), max(ln), mn / mo))
        print("load average: %.2f %.2f %.2f; %d rounds" % (os.getloadavg() + (rounds,)))
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
