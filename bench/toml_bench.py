#!/usr/bin/python3
"""Time TOML parsing: gpuenv vs Python's tomllib on one file, in one run.

usage: toml_bench.py GPUENV_BIN FILE.toml RUNS [PREFAULT_BIN]

Each round runs, one after the other so that both see the same machine load:
  gpuenv   `debug toml-decode --check --time FILE`: a fresh process that reads
           the file and parses it; --time reports the wall and CPU time around
           the parse (gpuenv_toml_parse_borrowed: UTF-8 check and the whole
           document; not the file read, not the final free)
  tomllib  `python3 -c ...`: a fresh interpreter that reads the file, then
           times tomllib.loads(data.decode()) with perf_counter/process_time
           (interpreter start, import and file read excluded)
and the wall time of both whole processes is taken from outside.  Then, in one
process each, RUNS parses back to back ("warm": gpuenv `--repeat`, a loop in
Python).  Info rows: the library's copying entry point (`--copy`),
`toml-decode` writing all the tagged JSON, and (PREFAULT_BIN, built from
toml_prefault.c) the CPU time of the parser alone when the memory it fills is
already faulted in.  Medians over RUNS; MB = 10^6 bytes.
Before timing, both parsers' results are compared (names, versions, wheel
sizes and hashes of every package).
"""
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import tomllib

PY_ONE = """
import sys, time, tomllib
data = open(sys.argv[1], 'rb').read()
t0 = time.perf_counter(); c0 = time.process_time()
tomllib.loads(data.decode('utf-8'))
t1 = time.perf_counter(); c1 = time.process_time()
print(t1 - t0, c1 - c0)
"""

PY_WARM = """
import sys, time, tomllib
data = open(sys.argv[1], 'rb').read()
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    tomllib.loads(data.decode('utf-8'))
    print(time.perf_counter() - t0)
"""

TIME_RE = re.compile(r"in ([0-9.]+) ms .*cpu ([0-9.]+) ms")


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.perf_counter() - t0, p.stdout, p.stderr


def gpuenv_times(err):
    return [(float(w) / 1e3, float(c) / 1e3) for w, c in TIME_RE.findall(err)]


def summary_gpuenv(bin_, path):
    out = subprocess.run([bin_, "debug", "toml-decode", path], check=True,
                         capture_output=True).stdout
    doc = json.loads(out)
    return [(p["name"]["value"], p["version"]["value"],
             [(w["size"]["value"], w["hashes"]["sha256"]["value"]) for w in p["wheels"]])
            for p in doc["packages"]]


def summary_tomllib(path):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    return [(p["name"], p["version"], [(str(w["size"]), w["hashes"]["sha256"]) for w in p["wheels"]])
            for p in doc["packages"]]


def main():
    bin_, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    prefault = sys.argv[4] if len(sys.argv) > 4 else None
    size = os.path.getsize(path)
    mb = size / 1e6
    a, b = summary_gpuenv(bin_, path), summary_tomllib(path)
    if a != b:
        print("gpuenv and tomllib disagree on the document", file=sys.stderr)
        return 1

    g_wall, g_cpu, g_proc, p_wall, p_cpu, p_proc, g_copy, g_json = ([] for _ in range(8))
    for _ in range(runs):
        w, _, err = timed([bin_, "debug", "toml-decode", "--check", "--time", path])
        (pw, pc), = gpuenv_times(err)
        g_proc.append(w), g_wall.append(pw), g_cpu.append(pc)
        w, out, _ = timed([sys.executable, "-c", PY_ONE, path])
        pw, pc = map(float, out.split())
        p_proc.append(w), p_wall.append(pw), p_cpu.append(pc)
        _, _, err = timed([bin_, "debug", "toml-decode", "--check", "--time", "--copy", path])
        g_copy.append(gpuenv_times(err)[0][0])
        g_json.append(timed([bin_, "debug", "toml-decode", path])[0])
    _, _, err = timed([bin_, "debug", "toml-decode", "--check", "--time", "--repeat", str(runs), path])
    g_warm = [w for w, _ in gpuenv_times(err)]
    _, out, _ = timed([sys.executable, "-c", PY_WARM, path, str(runs)])
    p_warm = [float(x) for x in out.split()]
    g_pre = []
    if prefault:
        _, out, _ = timed([prefault, path, str(runs)])
        g_pre = [float(x) / 1e3 for x in out.split()]

    med = statistics.median

    def row(name, g, p):
        gm, pm = med(g), med(p)
        return (f"| {name} | {gm * 1e3:.1f} ms ({mb / gm:.0f} MB/s) | "
                f"{pm * 1e3:.1f} ms ({mb / pm:.1f} MB/s) | {pm / gm:.1f}x |")

    print(f"file: {path}, {size} bytes, {len(a)} [[packages]]; {runs} rounds, medians")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; Python {platform.python_version()}")
    print()
    print("| measure | gpuenv | Python tomllib | tomllib / gpuenv |")
    print("|---|---|---|---|")
    print(row("parse, fresh process, wall", g_wall, p_wall))
    print(row("parse, fresh process, CPU (user+sys)", g_cpu, p_cpu))
    print(row(f"parse, warm ({runs} back to back in one process), wall", g_warm, p_warm))
    print(row("whole process (start, read, parse, exit), wall", g_proc, p_proc))
    print(f"| (info) gpuenv_toml_parse, copying the input, wall | {med(g_copy) * 1e3:.1f} ms | | |")
    print(f"| (info) whole process, toml-decode writing tagged JSON, wall | {med(g_json) * 1e3:.1f} ms | | |")
    if g_pre:
        print(f"| (info) parser alone, memory pre-faulted, CPU | {med(g_pre) * 1e3:.1f} ms "
              f"({mb / med(g_pre):.0f} MB/s) | | |")
    print()
    print("all runs (ms):")
    for name, xs in (("gpuenv parse wall", g_wall), ("gpuenv parse cpu", g_cpu),
                     ("tomllib parse wall", p_wall), ("tomllib parse cpu", p_cpu),
                     ("gpuenv warm", g_warm), ("tomllib warm", p_warm),
                     ("gpuenv process", g_proc), ("tomllib process", p_proc),
                     ("gpuenv --copy parse", g_copy), ("gpuenv process + JSON", g_json),
                     ("gpuenv pre-faulted cpu", g_pre)):
        print(f"  {name}: " + " ".join(f"{x * 1e3:.1f}" for x in xs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
