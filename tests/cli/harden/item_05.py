"""Item 5: a lock naming one package twice without markers (a bad merge)
was accepted, and sync installed both versions into one tree.  PEP 751
requires an error: every reader (sync, export, preflight, debug pylock)
raises it at the second entry's line; entries whose markers both hold for
the venv are refused by sync's plan."""
import os
import re


def run(h):
    proj = h.project("p05")
    r = h.lock(proj)
    h.check(r.returncode == 0, "item 5: lock: %s" % r.stderr)
    path = os.path.join(proj, "pylock.cpu.toml")
    with open(path) as f:
        good = f.read()
    beta = good[good.index('[[packages]]\nname = "beta"'):good.index("[tool.gpuenv]")]
    line = good[:good.index("[tool.gpuenv]")].count("\n") + 1
    with open(path, "w") as f:
        f.write(good.replace("[tool.gpuenv]", beta.replace('version = "1.0"', 'version = "0.9"', 1) +
                             "[tool.gpuenv]"))
    want = re.compile(r"pylock\.cpu\.toml:%d:\d+: packages\[\d\]: 'beta' is locked twice without a marker" % line)
    venv = os.path.join(h.TMP, "v05")
    for what, r in (("debug pylock", h.gpuenv("debug", "pylock", path)),
                    ("sync --locked", h.sync(proj, venv, "--locked")),
                    ("export", h.gpuenv("export", "--lock", path)),
                    ("preflight --lock", h.gpuenv("preflight", "--lock", path))):
        h.check(r.returncode != 0 and want.search(r.stderr) and "hint:" in r.stderr,
                "item 5: %s refuses the unmarked duplicate at its line: %d %s" % (what, r.returncode, r.stderr))
    h.check(not os.path.exists(venv) or not os.listdir(os.path.join(venv, "lib")),
            "item 5: nothing installed")

    # markers that tell them apart are fine to read; two that both hold
    # here are refused by the sync's plan, at the second's line
    with open(path, "w") as f:
        f.write(good.replace("[tool.gpuenv]", beta.replace(
            'version = "1.0"\n', 'version = "0.9"\nmarker = "sys_platform == \'linux\'"\n', 1) +
            "[tool.gpuenv]").replace('name = "beta"\nversion = "1.0"\n',
                                     'name = "beta"\nversion = "1.0"\nmarker = "python_version >= \'3\'"\n', 1))
    r = h.gpuenv("debug", "pylock", path)
    h.check(r.returncode == 0, "item 5: entries with markers read: %s" % r.stderr)
    r = h.sync(proj, venv, "--locked")
    h.check(r.returncode == 4 and "beta: two entries of the lock apply to this venv" in r.stderr and
            "PEP 751 allows one" in r.stderr, "item 5: overlapping markers refused: %d %s" % (r.returncode, r.stderr))
