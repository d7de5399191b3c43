"""Item 1: a wheel's console script or .data/scripts file named python
(python3, activate, ...) or a .data/data/pyvenv.cfg replaced the venv's own
files; removing the package deleted bin/python.  Now the transaction refuses
the wheel naming the file, nothing changed, and a RECORD that names the
venv's files (another installer let a wheel replace them) removes the
package and keeps them."""
import os


def snapshot(root):
    out = {}
    for d, dirs, files in os.walk(root):
        if ".gpuenv" in dirs:
            dirs.remove(".gpuenv")
        for n in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = "-> " + os.readlink(p)
            else:
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def run(h):
    # through sync: a console script named python, a .data/scripts/python3,
    # a .data/data/pyvenv.cfg
    idx = h.index([
        {"name": "alpha", "version": "1.0", "sdist": False},
        {"name": "evilcs", "version": "1.0", "sdist": False,
         "entry_points": {"console_scripts": {"python": "evilcs:main"}}},
        {"name": "evilds", "version": "1.0", "sdist": False,
         "files": {"evilds-1.0.data/scripts/python3": b"#!/bin/sh\necho evil\n"}},
        {"name": "evilcfg", "version": "1.0", "sdist": False,
         "files": {"evilcfg-1.0.data/data/pyvenv.cfg": b"home = /nowhere\n"}},
    ], name="index01")
    venv = os.path.join(h.TMP, "v01")
    good = h.project("p01-good", ["alpha"])
    r = h.sync(good, venv, idx=idx)
    h.check(r.returncode == 0, "item 1: a first sync: %s" % r.stderr)
    before = snapshot(venv)
    for pkg, where in (("evilcs", "bin/python"), ("evilds", "bin/python3"), ("evilcfg", "pyvenv.cfg")):
        proj = h.project("p01-" + pkg, ["alpha", pkg])
        r = h.sync(proj, venv, idx=idx)
        h.check(r.returncode == 4 and "%s: its file" % pkg in r.stderr and
                "would replace the venv's own %s/%s: refused" % (venv, where) in r.stderr,
                "item 1: %s refused naming %s: %d %s" % (pkg, where, r.returncode, r.stderr))
        h.check(snapshot(venv) == before, "item 1: %s: the venv changed" % pkg)
    py = h.subprocess.run([os.path.join(venv, "bin", "python3"), "-c", "print(6 * 7)"],
                          capture_output=True, text=True, timeout=60)
    h.check(py.stdout.strip() == "42", "item 1: bin/python3 still runs: %r %r" % (py.stdout, py.stderr))

    # a RECORD naming bin/python and pyvenv.cfg: removing the package keeps them
    site = os.path.join(venv, "lib", "python" + h.PYXY, "site-packages")
    rec = os.path.join(site, "alpha-1.0.dist-info", "RECORD")
    with open(rec, "a") as f:
        f.write("../../../bin/python,,\n../../../pyvenv.cfg,,\n")
    r = h.sync(h.project("p01-none", []), venv, idx=idx)
    h.check(r.returncode == 0 and "bin/python is the venv's own file: kept" in r.stderr,
            "item 1: alpha removed, its RECORD naming bin/python: %d %s" % (r.returncode, r.stderr))
    h.check(os.path.lexists(os.path.join(venv, "bin", "python")) and
            os.path.exists(os.path.join(venv, "pyvenv.cfg")) and
            not os.path.exists(os.path.join(site, "alpha")), "item 1: the venv's own files kept, alpha gone")
