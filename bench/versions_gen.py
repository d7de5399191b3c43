"""Write N realistic PEP 440 versions, one a line, deterministically.

The mix follows what a resolver meets on PyPI and on the PyTorch/NVIDIA
indexes: mostly X.Y.Z releases, a share of pre-releases (with the spellings
PEP 440 normalizes: alpha, beta, c, preview, '-rc1', upper case), post and
dev releases, epochs, date versions, GPU local labels (+cu118, +cu121,
+cpu, +rocm5.6) and some exact duplicates.  Standard library only.

usage: versions_gen.py N > versions.txt
"""
import random
import sys


def version(rng):
    r = rng.random()
    if r < 0.05:  # calendar versions
        rel = "%d.%d.%d" % (rng.randint(2015, 2025), rng.randint(1, 12), rng.randint(0, 31))
    elif r < 0.15:
        rel = "%d.%d" % (rng.randint(0, 30), rng.randint(0, 40))
    elif r < 0.20:
        rel = "%d.%d.%d.%d" % tuple(rng.randint(0, 20) for _ in range(4))
    else:
        rel = "%d.%d.%d" % (rng.randint(0, 12), rng.randint(0, 40), rng.randint(0, 25))
    s = rel
    if rng.random() < 0.02:
        s = "%d!%s" % (rng.randint(1, 3), s)
    if rng.random() < 0.02:
        s = "v" + s
    p = rng.random()
    if p < 0.15:
        s += rng.choice(["a", "b", "rc", "rc", "alpha", "beta", "c", "preview", "-rc", ".RC"])
        s += str(rng.randint(0, 5))
    if rng.random() < 0.06:
        s += rng.choice([".post%d", ".post%d", "-%d", ".r%d"]) % rng.randint(0, 4)
    if rng.random() < 0.08:
        s += rng.choice([".dev%d" % rng.randint(0, 9), ".dev%d" % rng.randint(20200101, 20251231)])
    if rng.random() < 0.25:
        s += "+" + rng.choice(["cu118", "cu121", "cu124", "cu126", "cpu", "rocm5.6", "rocm6.1",
                               "cu118.torch2.1", "ubuntu-1"])
    return s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rng = random.Random(440)
    out = []
    for _ in range(n):
        if out and rng.random() < 0.05:
            out.append(rng.choice(out))  # duplicates
        else:
            out.append(version(rng))
    sys.stdout.write("\n".join(out) + "\n")


main()
