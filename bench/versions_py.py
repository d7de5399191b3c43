"""The Python side of bench/versions.sh, with Debian's python3-packaging.

  versions_py.py sort < VERSIONS            sorted(lines, key=Version), printed
  versions_py.py filter SPEC < VERSIONS     SpecifierSet(SPEC).filter(lines), printed
  add --time N to time the operation N times in this process instead and
  print the seconds of each run as JSON, {"wall": [...], "cpu": [...]}
  (the lines are read once, before).
"""
import json
import sys
import time

from packaging.specifiers import SpecifierSet
from packaging.version import Version


def main():
    args = sys.argv[1:]
    repeat = 0
    if "--time" in args:
        k = args.index("--time")
        repeat = int(args[k + 1])
        del args[k:k + 2]
    lines = sys.stdin.read().splitlines()
    if args[0] == "sort":
        def op():
            return sorted(lines, key=Version)
    else:
        spec = args[1]

        def op():
            return list(SpecifierSet(spec).filter(lines))
    if repeat:
        wall, cpu = [], []
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            op()
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(json.dumps({"wall": wall, "cpu": cpu}))
        return
    out = op()
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))


main()
