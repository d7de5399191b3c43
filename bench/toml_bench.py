#!/usr/bin/python3
"""Time TOML parsing: gpuenv vs Python's tomllib, on one file, in one run.

usage: toml_bench.py GPUENV_BIN FILE.toml RUNS

Rows (each the median of RUNS runs):
  in-process  gpuenv: `debug toml-decode --check --time`, the time around
              gpuenv_toml_parse (copy of the input, UTF-8 check, parse into the
              document; not the file read, not the final free)
              tomllib: tomllib.loads(data.decode()) timed inside Python
              (bytes already in memory; interpreter start and import excluded)
  process     wall time of the whole command: `gpuenv debug toml-decode --check
              FILE` vs `python3 -c "import tomllib; tomllib.load(open(FILE, 'rb'))"`
  (info)      `gpuenv debug toml-decode FILE > /dev/null`: parse plus the
              tagged JSON of every value (jansson), whole process
Before timing, both parsers' results are compared (package names, versions,
wheel sizes and hashes) so that the two really read the same document.
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


def wall(cmd, stdout=subprocess.DEVNULL):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=stdout)
    return time.perf_counter() - t0


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
    size = os.path.getsize(path)
    mb = size / 1e6
    a, b = summary_gpuenv(bin_, path), summary_tomllib(path)
    if a != b:
        print("gpuenv and tomllib disagree on the document", file=sys.stderr)
        return 1
    with open(path, "rb") as f:
        data = f.read()

    # in process
    g_in = []
    for _ in range(runs):
        err = subprocess.run([bin_, "debug", "toml-decode", "--check", "--time", path],
                             check=True, capture_output=True, text=True).stderr
        g_in.append(float(re.search(r"in ([0-9.]+) ms", err).group(1)) / 1e3)
    p_in = []
    for _ in range(runs):
        t0 = time.perf_counter()
        tomllib.loads(data.decode("utf-8"))
        p_in.append(time.perf_counter() - t0)

    # whole process, interleaved so that both see the same machine load
    g_proc, p_proc, g_json = [], [], []
    for _ in range(runs):
        g_proc.append(wall([bin_, "debug", "toml-decode", "--check", path]))
        p_proc.append(wall([sys.executable, "-c",
                            f"import tomllib; tomllib.load(open({path!r}, 'rb'))"]))
        g_json.append(wall([bin_, "debug", "toml-decode", path]))

    def row(name, g, p):
        gm, pm = statistics.median(g), statistics.median(p)
        return (f"| {name} | {gm * 1e3:.1f} ms ({mb / gm:.0f} MB/s) | "
                f"{pm * 1e3:.1f} ms ({mb / pm:.1f} MB/s) | {pm / gm:.1f}x |")

    print(f"file: {path}, {size} bytes, {len(a)} [[packages]]; {runs} runs each, medians")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; Python {platform.python_version()}")
    print()
    print("| measure | gpuenv | Python tomllib | tomllib / gpuenv |")
    print("|---|---|---|---|")
    print(row("parse, in process", g_in, p_in))
    print(row("whole process (parse only)", g_proc, p_proc))
    gj = statistics.median(g_json)
    print(f"| whole process, gpuenv parse + tagged JSON out (info) | {gj * 1e3:.1f} ms | | |")
    print()
    print("all runs (ms):")
    for name, xs in (("gpuenv in-process", g_in), ("tomllib in-process", p_in),
                     ("gpuenv process", g_proc), ("tomllib process", p_proc),
                     ("gpuenv process + JSON", g_json)):
        print(f"  {name}: " + " ".join(f"{x * 1e3:.1f}" for x in xs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
