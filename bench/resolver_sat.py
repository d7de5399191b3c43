#!/usr/bin/env python3
"""The resolver against CDCL SAT solvers on the same pigeonhole problems.

    bench/resolver_sat.py GPUENV_BIN [MAX_PIGEONS [TIMEOUT_S]]

PHP(P,H) as bench/resolver_gen.py writes it for `gpuenv debug resolve`
(P packages of H versions, version h of one requiring every other package
!= h) and as the same constraints in DIMACS CNF for the solvers
(resolver_gen.php_cnf).  The peers: MiniSat 2.2
(`minisat`) and CaDiCaL (`cadical`), Debian's packages, with their default
settings; a solver not installed is skipped.  For each P from 8 to
MAX_PIGEONS (default 11), H = P - 1: conflicts, user CPU time (/usr/bin/time
%U, one run each: the searches are deterministic), CPU time per conflict
and peak RSS, one Markdown row per (graph, tool).  A run past TIMEOUT_S
(default 200) is reported as such.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resolver_gen  # noqa: E402


def timed(cmd, timeout, tf):
    try:
        r = subprocess.run(["/usr/bin/time", "-f", "%U %M", "-o", tf] + cmd, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, None, None
    u, m = open(tf).read().split()[-2:]
    return r.returncode, r.stdout + r.stderr, float(u), int(m) // 1024


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    gpuenv = argv[1]
    top = int(argv[2]) if len(argv) > 2 else 11
    timeout = float(argv[3]) if len(argv) > 3 else 200
    tmp = tempfile.mkdtemp(prefix="resolver-sat-")
    tf = os.path.join(tmp, "time")
    print("| graph | tool | result | conflicts | CPU | per conflict | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    try:
        for p in range(8, top + 1):
            h = p - 1
            g = "PHP(%d,%d)" % (p, h)
            toml = os.path.join(tmp, "php.toml")
            open(toml, "w").write(resolver_gen.php(p, h))
            dim = os.path.join(tmp, "php.cnf")
            open(dim, "w").write(resolver_gen.php_cnf(p, h))
            rows = []
            rc, out, u, m = timed([gpuenv, "debug", "resolve", toml, "--json"], timeout, tf)
            if rc is None:
                rows.append(("gpuenv", "> %g s" % timeout, None, None, None))
            else:
                c = json.loads(out[:out.rindex("}") + 1]).get("conflicts")
                rows.append(("gpuenv", "exit %d (no solution)" % rc if rc == 1 else "exit %d" % rc, c, u, m))
            for tool, pat in (("minisat", r"conflicts\s*:\s*(\d+)"), ("cadical", r"^c conflicts:\s*(\d+)")):
                exe = shutil.which(tool)
                if not exe:
                    continue
                rc, out, u, m = timed([exe, dim], timeout, tf)
                if rc is None:
                    rows.append((tool, "> %g s" % timeout, None, None, None))
                    continue
                mm = re.search(pat, out, re.M)
                rows.append((tool, "UNSAT" if "UNSATISFIABLE" in out else "exit %d" % rc,
                             int(mm.group(1)) if mm else None, u, m))
            for tool, res, c, u, m in rows:
                print("| %s | %s | %s | %s | %s | %s | %s |" % (
                    g, tool, res, "{:,}".format(c) if c is not None else "-",
                    "%.2f s" % u if u is not None else "-",
                    "%.1f us" % (u / c * 1e6) if c and u is not None else "-",
                    "%d MB" % m if m is not None else "-"), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv)
