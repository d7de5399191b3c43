#!/usr/bin/env python3
"""Time `gpuenv debug resolve` on generated conflict-heavy graphs with two
binaries side by side (bench/resolver.sh builds them).

    bench/resolver_bench.py BASE_BIN NEW_BIN OUTDIR TIMEOUT

One markdown row per graph: wall seconds, conflicts, the time per conflict,
explanation bytes and the run's peak RSS for each binary, or "> TIMEOUT s"
when it ran past TIMEOUT.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resolver_gen  # noqa: E402

GRAPHS = [("PHP(8,7)", lambda: resolver_gen.php(8, 7)),
          ("PHP(9,8)", lambda: resolver_gen.php(9, 8)),
          ("PHP(10,9)", lambda: resolver_gen.php(10, 9)),
          ("PHP(11,10)", lambda: resolver_gen.php(11, 10)),
          ("PHP(12,11)", lambda: resolver_gen.php(12, 11)),
          ("random 100x20 seed 1, 3 deps", lambda: resolver_gen.rand(100, 20, 1, 3)),
          ("random 150x20 seed 2, 3 deps", lambda: resolver_gen.rand(150, 20, 2, 3)),
          ("random 120x20 seed 5, 4 deps", lambda: resolver_gen.rand(120, 20, 5, 4))]


def one(binary, path, timeout):
    # /usr/bin/time -f %M: this run's own peak RSS (the children's maxrss
    # of this process is the largest of all runs so far)
    rss_file = path + ".rss"
    t0 = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, binary, "debug",
                            "resolve", path, "--json"], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "> %d s | - | - | - | -" % timeout
    took = time.monotonic() - t0
    with open(rss_file) as f:
        rss_kb = int(f.read().split()[-1])
    try:
        j = json.loads(p.stdout)
    except ValueError:
        err = (p.stderr.strip().splitlines() or ["?"])[-1]
        return "%.2f s, exit %d | - | - | - | %s" % (took, p.returncode, err[:40])
    expl = len((j.get("explanation") or "").encode())
    return "%.2f s, exit %d | %d | %.3f ms | %d | %d MB" % (
        took, p.returncode, j["conflicts"], 1e3 * took / max(j["conflicts"], 1), expl,
        rss_kb // 1024)


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    base, new, out, timeout = argv[1], argv[2], argv[3], int(argv[4])
    os.makedirs(out, exist_ok=True)
    print("| graph | before: time | conflicts | per conflict | explanation bytes | peak RSS "
          "| after: time | conflicts | per conflict | explanation bytes | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, gen in GRAPHS:
        path = os.path.join(out, name.replace(" ", "_").replace(",", "-") + ".toml")
        with open(path, "w") as f:
            f.write(gen())
        print("| %s | %s | %s |" % (name, one(base, path, timeout), one(new, path, timeout)),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
