#!/usr/bin/env python3
"""Conflict-heavy resolver graphs as packse-format scenarios, for
`gpuenv debug resolve FILE` (bench/resolver.sh, tests/cli/test_resolve.py).

    bench/resolver_gen.py php PIGEONS HOLES            > php.toml
    bench/resolver_gen.py php-cnf PIGEONS HOLES        > php.cnf
    bench/resolver_gen.py random PKGS VERSIONS SEED [DEPS]  > rnd.toml

php: the pigeonhole principle.  PIGEONS packages p01.. with HOLES versions
each (1.0 .. HOLES.0, the hole); version h of p_i requires p_j != h for
every other pigeon j, and the project requires every pigeon.  With more
pigeons than holes there is no solution, and a resolver that learns
clauses (PubGrub, CDCL) needs exponentially many conflicts to show it, so
the graph measures what each conflict costs.

php-cnf: the same constraints in DIMACS CNF, for SAT solvers
(bench/resolver_sat.py): variable x(i,h) "package i takes version h"; a
package takes at least one version and at most one (a package has one
version), and no two packages take one version.

random: PKGS packages with VERSIONS versions each; every version requires
DEPS (default 3) other packages, with random `>=lo,<hi` ranges drawn so
that neighbouring versions disagree (the adversarial graph of
tests/unit/test_resolve.c, written out).  The project requires the first
eight packages.  Deterministic in SEED.
"""
import random
import sys


def php(pigeons, holes):
    w = 2 if pigeons < 100 else 3
    names = [f"p{i:0{w}d}" for i in range(1, pigeons + 1)]
    out = [f'name = "php-{pigeons}-{holes}"',
           f'description = "pigeonhole: {pigeons} pigeons, {holes} holes"', "",
           "[root]", "requires = [" + ", ".join(f'"{n}"' for n in names) + "]", "",
           "[expected]", f"satisfiable = {'true' if pigeons <= holes else 'false'}", ""]
    for i, n in enumerate(names):
        for h in range(1, holes + 1):
            reqs = [f'"{m}!={h}.0"' for j, m in enumerate(names) if j != i]
            out.append(f'[packages.{n}.versions."{h}.0"]')
            out.append("requires = [" + ", ".join(reqs) + "]")
    return "\n".join(out) + "\n"


def php_cnf(pigeons, holes):
    v = lambda i, h: i * holes + h + 1  # noqa: E731
    cl = []
    for i in range(pigeons):
        cl.append([v(i, h) for h in range(holes)])
        cl += [[-v(i, a), -v(i, b)] for a in range(holes) for b in range(a + 1, holes)]
    for h in range(holes):
        cl += [[-v(i, h), -v(j, h)] for i in range(pigeons) for j in range(i + 1, pigeons)]
    return "p cnf %d %d\n" % (pigeons * holes, len(cl)) + "".join(" ".join(map(str, c)) + " 0\n" for c in cl)


def rand(pkgs, versions, seed, deps):
    rng = random.Random(seed)
    names = [f"r{i:04d}" for i in range(pkgs)]
    out = [f'name = "random-{pkgs}-{versions}-{seed}"',
           f'description = "random ranges: {pkgs} packages x {versions} versions, '
           f'{deps} dependencies each, seed {seed}"', "",
           "[root]", "requires = [" + ", ".join(f'"{n}"' for n in names[:8]) + "]", ""]
    for i, n in enumerate(names):
        for v in range(1, versions + 1):
            reqs = []
            for t in rng.sample([j for j in range(pkgs) if j != i], min(deps, pkgs - 1)):
                lo = rng.randint(1, versions)
                hi = rng.randint(lo, versions) + 1
                reqs.append(f'"{names[t]}>={lo}.0,<{hi}.0"')
            out.append(f'[packages.{n}.versions."{v}.0"]')
            out.append("requires = [" + ", ".join(reqs) + "]")
    return "\n".join(out) + "\n"


def main(argv):
    try:
        if argv[1:2] == ["php"] and len(argv) == 4:
            sys.stdout.write(php(int(argv[2]), int(argv[3])))
            return 0
        if argv[1:2] == ["php-cnf"] and len(argv) == 4:
            sys.stdout.write(php_cnf(int(argv[2]), int(argv[3])))
            return 0
        if argv[1:2] == ["random"] and len(argv) in (5, 6):
            deps = int(argv[5]) if len(argv) == 6 else 3
            sys.stdout.write(rand(int(argv[2]), int(argv[3]), int(argv[4]), deps))
            return 0
    except ValueError:
        pass
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
