"""Item 6: a lock's environments and a package's requires-python were
ignored by sync (a lock for riscv64, or requires-python = ">=3.99",
installed with exit 0 while preflight --lock said no-go).  PEP 751 requires
an error: sync refuses before anything is installed, naming the lock and,
for a package, its line."""
import os


def run(h):
    proj = h.project("p06")
    r = h.lock(proj)
    h.check(r.returncode == 0, "item 6: lock: %s" % r.stderr)
    path = os.path.join(proj, "pylock.cpu.toml")
    with open(path) as f:
        good = f.read()
    start = good.index("environments = [")
    end = good.index("]\n", start) + 2
    cases = [
        ("environments", good[:start] + 'environments = ["platform_machine == \'riscv64\'"]\n' + good[end:],
         "the lock covers the environments \"platform_machine == 'riscv64'\"; the venv"),
        ("requires-python", good.replace('name = "beta"\nversion = "1.0"\n',
                                         'name = "beta"\nversion = "1.0"\nrequires-python = ">=3.99"\n'),
         "beta 1.0 requires Python >=3.99; the venv"),
        ("lock requires-python", good.replace('created-by = "gpuenv"\n',
                                              'created-by = "gpuenv"\nrequires-python = ">=3.99"\n'),
         "the lock requires Python >=3.99"),
    ]
    for what, text, want in cases:
        with open(path, "w") as f:
            f.write(text)
        venv = os.path.join(h.TMP, "v06-" + what.replace(" ", "-"))
        r = h.sync(proj, venv, "--locked")
        h.check(r.returncode == 4 and want in r.stderr and "hint:" in r.stderr,
                "item 6: %s refused: %d %s" % (what, r.returncode, r.stderr))
        if what == "requires-python":
            line = text[:text.index('requires-python = ">=3.99"')].count("\n") - 2
            h.check("pylock.cpu.toml:%d:" % line in r.stderr, "item 6: the package's line %d: %s" % (line, r.stderr))
        h.check(not os.path.isdir(os.path.join(venv, "lib")) or
                not any(n.endswith(".dist-info") for _, _, fs in os.walk(venv) for n in fs + _),
                "item 6: %s: nothing installed" % what)
        if what != "lock requires-python":  # preflight judges the node's Python, not a venv's
            r = h.gpuenv("preflight", "--lock", path)
            h.check(r.returncode != 0, "item 6: %s: preflight --lock agrees (no-go): %d" % (what, r.returncode))
