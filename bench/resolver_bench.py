#!/usr/bin/env python3
"""Time `gpuenv debug resolve` on generated conflict-heavy graphs with two
binaries side by side (bench/resolver.sh builds them).

    bench/resolver_bench.py BASE_BIN NEW_BIN OUTDIR TIMEOUT [RUNS]

One markdown row per graph and binary: conflicts, the median user CPU
time of RUNS runs (default 3; /usr/bin/time's %U, steadier than the wall
time on a shared machine), that time per conflict, the explanation's bytes
and the largest peak RSS of the runs, or "> TIMEOUT s" when a run went
past TIMEOUT.
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resolver_gen  # noqa: E402

GRAPHS = [("PHP(8,7)", lambda: resolver_gen.php(8, 7)),
          ("PHP(9,8)", lambda: resolver_gen.php(9, 8)),
          ("PHP(10,9)", lambda: resolver_gen.php(10, 9)),
          ("PHP(11,10)", lambda: resolver_gen.php(11, 10)),
          ("PHP(12,11)", lambda: resolver_gen.php(12, 11)),
          ("PHP(13,12)", lambda: resolver_gen.php(13, 12)),
          ("random 100x20 seed 1, 3 deps", lambda: resolver_gen.rand(100, 20, 1, 3)),
          ("random 150x20 seed 2, 3 deps", lambda: resolver_gen.rand(150, 20, 2, 3)),
          ("random 120x20 seed 5, 4 deps", lambda: resolver_gen.rand(120, 20, 5, 4)),
          # the issue's own case (issue 22 item 17): 25 packages of 13 versions
          ("PHP(25,13)", lambda: resolver_gen.php(25, 13))]


def one(binary, path, timeout, runs):
    # /usr/bin/time: this run's own user time and peak RSS (the children's
    # maxrss of this process is the largest of all runs so far)
    stat_file = path + ".time"
    cpu, rss = [], 0
    for _ in range(runs):
        try:
            p = subprocess.run(["/usr/bin/time", "-f", "%U %M", "-o", stat_file, binary, "debug",
                                "resolve", path, "--json"], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return "> %d s | - | - | - | -" % timeout
        with open(stat_file) as f:
            u, m = f.read().split()[-2:]
        cpu.append(float(u))
        rss = max(rss, int(m))
    try:
        j = json.loads(p.stdout)
    except ValueError:
        err = (p.stderr.strip().splitlines() or ["?"])[-1]
        return "exit %d | - | - | - | %s" % (p.returncode, err[:40])
    t = statistics.median(cpu)
    expl = len((j.get("explanation") or "").encode())
    return "%d | %.2f s | %.3f ms | %d | %d MB" % (
        j["conflicts"], t, 1e3 * t / max(j["conflicts"], 1), expl, rss // 1024)


def main(argv):
    if len(argv) not in (5, 6):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    base, new, out, timeout = argv[1], argv[2], argv[3], int(argv[4])
    runs = int(argv[5]) if len(argv) == 6 else 3
    os.makedirs(out, exist_ok=True)
    print("| graph | before: conflicts | CPU | per conflict | explanation bytes | peak RSS "
          "| after: conflicts | CPU | per conflict | explanation bytes | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, gen in GRAPHS:
        path = os.path.join(out, name.replace(" ", "_").replace(",", "-") + ".toml")
        with open(path, "w") as f:
            f.write(gen())
        print("| %s | %s | %s |" % (name, one(base, path, timeout, runs),
                                    one(new, path, timeout, runs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
