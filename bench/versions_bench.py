"""Timing harness of bench/versions.sh: gpuenv's debug verbs against
Python's packaging on the same input, median of RUNS runs each.

Whole-process times are wall-clock (and CPU, user+sys, which a busy machine
disturbs less) for: gpuenv, and python3 doing the same job from start to end
(interpreter start, imports, read, work, write).  In-process times are the
Python operation alone, timed inside one interpreter.  Outputs are compared:
gpuenv must print exactly what packaging returns.

usage: versions_bench.py GPUENV VERSIONS RUNS SPEC...
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("BENCH_PYTHON", "/usr/bin/python3")


def run_whole(cmd, path, runs):
    """Median wall and CPU seconds of cmd with stdin from path; its output."""
    walls, cpus, out = [], [], None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(path, "rb") as f:
            t = time.perf_counter()
            r = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if r.returncode not in (0, 1):
            sys.exit("%s failed (%d): %s" % (cmd, r.returncode, r.stderr.decode()[:500]))
        out = r.stdout
    return statistics.median(walls), statistics.median(cpus), out


def run_inproc(args, path, runs):
    with open(path, "rb") as f:
        r = subprocess.run([PY, os.path.join(HERE, "versions_py.py"), *args, "--time", str(runs)],
                           stdin=f, stdout=subprocess.PIPE, check=True)
    t = json.loads(r.stdout)
    return statistics.median(t["wall"]), statistics.median(t["cpu"])


def ms(x):
    return "%.1f" % (x * 1000)


def main():
    gpuenv, path, runs, specs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    with open(path) as f:
        n = sum(1 for _ in f)
    jobs = [("sort", [gpuenv, "debug", "version-sort"], ["sort"])]
    for s in specs:
        jobs.append(("filter '%s'" % s, [gpuenv, "debug", "specifier", s], ["filter", s]))
    print("%d versions, median of %d runs; times in ms (wall clock / CPU user+sys)" % (n, runs))
    print()
    print("| job | gpuenv process | python in-process | python process | same output |")
    print("|---|---:|---:|---:|:---:|")
    rows, bad = [], 0
    for name, gcmd, pyargs in jobs:
        gw, gc, gout = run_whole(gcmd, path, runs)
        pw, pc, pout = run_whole([PY, os.path.join(HERE, "versions_py.py"), *pyargs], path, runs)
        iw, ic = run_inproc(pyargs, path, runs)
        same = gout == pout
        bad += not same
        rows.append((name, gw, gc, iw, ic, pw, pc))
        print("| %s | %s / %s | %s / %s | %s / %s | %s |" % (
            name, ms(gw), ms(gc), ms(iw), ms(ic), ms(pw), ms(pc),
            "yes" if same else "NO (%d vs %d lines)" % (gout.count(b"\n"), pout.count(b"\n"))))
        sys.stdout.flush()
    print()
    print("Ratios (how many times faster gpuenv's whole process is):")
    print()
    print("| job | vs python in-process, wall | CPU | vs python process, wall | CPU |")
    print("|---|---:|---:|---:|---:|")
    for name, gw, gc, iw, ic, pw, pc in rows:
        print("| %s | %.1fx | %.1fx | %.1fx | %.1fx |" % (name, iw / gw, ic / gc, pw / gw, pc / gc))
    sys.exit(1 if bad else 0)


main()
