"""gpuenv debug wheel-install: wheels into trees, stages and venvs
(lib/install/wheel.c, lib/formats/zip.c).

  - hostile wheels (tests/fixtures/hostile.py): each refused with a message
    naming the wheel and the entry, and nothing written anywhere in the
    sandbox around the tree folder (its whole listing compared);
  - a fixture package staged and moved into a venv imports, its console
    script and its '#!python' script run, a second venv reuses the tree
    (same inodes), an edit through a hardlink is found as damage, and pip
    uninstalls what gpuenv installed;
  - pip's edge-case wheels (../shared/testdata/pip-wheels): each installs
    as pip 23.2.1 installs it (the same files, contents and modes, the same
    RECORD paths) or is refused for the reason docs/install.md ("Wheels")
    gives.  The pip side needs pyenv's pip 23.2.1; without it only gpuenv's
    side runs."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", ".")
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import hostile  # noqa: E402
import mkwheel  # noqa: E402

PIP_PY = "/root/.pyenv/versions/3.11.7/bin/python"
HAVE_PIP = os.path.exists(PIP_PY)
PY = PIP_PY if HAVE_PIP else sys.executable
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def gpuenv(*args, timeout=300):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def listing(root):
    """Every path under root with its kind and size: what 'nothing written'
    is checked against."""
    out = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            out.append((os.path.relpath(p, root), st.st_mode, 0 if os.path.isdir(p) else st.st_size))
    return sorted(out)


def venv(path):
    subprocess.run([PY, "-m", "venv", "--without-pip", path], check=True, timeout=120)
    return path


def venv_files(path, base):
    """{relative path: (mode, sha256)} of what is in the venv and not in base."""
    out = {}
    for d, _, files in os.walk(path):
        for n in files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, path)
            if rel in base:
                continue
            st = os.lstat(p)
            with open(p, "rb") as f:
                data = f.read()
            out[rel] = (st.st_mode & 0o111 != 0, data)
    return out


def site(path):
    lib = os.path.join(path, "lib")
    return os.path.join(lib, os.listdir(lib)[0], "site-packages")


def record_paths(path):
    s = site(path)
    rows = []
    for d in os.listdir(s):
        if d.endswith(".dist-info"):
            with open(os.path.join(s, d, "RECORD"), newline="", encoding="utf-8") as f:
                import csv
                rows += [r[0] for r in csv.reader(f)]
    return s, rows


# ---- hostile wheels ---------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    sandbox = os.path.join(tmp, "sandbox")
    os.makedirs(sandbox)
    for kind, (_, entry) in hostile.KINDS.items():
        box = os.path.join(sandbox, kind)
        whl = hostile.build(kind, sandbox)
        before = listing(sandbox)
        tree = os.path.join(box, "tree")
        args = ["debug", "wheel-install", "--tree", tree, "--stage", os.path.join(box, "stage")]
        if kind == "sha256":
            args += ["--sha256", "0" * 64]
        r = gpuenv(*args, whl)
        check(r.returncode == 1, "%s: exit %d (%s)" % (kind, r.returncode, r.stderr.strip()))
        check(whl in r.stderr, "%s: the message names the wheel: %s" % (kind, r.stderr.strip()))
        if entry:
            check(entry in r.stderr, "%s: the message names %s: %s" % (kind, entry, r.stderr.strip()))
        check(listing(sandbox) == before, "%s: something was written: %s" % (
            kind, sorted(set(listing(sandbox)) ^ set(before))))
        check(not os.path.exists("/tmp/gpuenv-hostile-evil.py"), "%s: the absolute path was written" % kind)
    # the bombs are refused while being read, not after the disk filled:
    # nothing at all was written, which the listing check covered

    # a zip64 wheel with data descriptors (an unseekable writer) is fine
    import io
    import zipfile

    class Unseekable(io.RawIOBase):
        def __init__(self):
            self.b = bytearray()

        def writable(self):
            return True

        def write(self, x):
            self.b += x
            return len(x)
    files = hostile.base_files()
    rec = "".join("%s,%s,%d\n" % (n, hostile.record_hash(d), len(d)) for n, d in files) + hostile.INFO + "/RECORD,,\n"
    files.append((hostile.INFO + "/RECORD", rec.encode()))
    w = Unseekable()
    with zipfile.ZipFile(w, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            with z.open(zipfile.ZipInfo(n, hostile.ZIP_TIME), "w", force_zip64=n.endswith(".py")) as f:
                f.write(d)
    z64 = os.path.join(tmp, "z64", "hostile-1.0-py3-none-any.whl")
    os.makedirs(os.path.dirname(z64))
    with open(z64, "wb") as f:
        f.write(bytes(w.b))
    r = gpuenv("debug", "wheel-install", "--tree", os.path.join(tmp, "z64", "t"), "--json", z64)
    check(r.returncode == 0 and json.loads(r.stdout)["files"] == 4, "zip64 + descriptors: %s" % r.stderr)

# ---- a fixture package into a venv ------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    d = mkwheel.make_wheel(os.path.join(tmp, "w"), "Demo.Pkg", "1.0",
                           entry_points={"console_scripts": {"demo": "demo_pkg.cli:main"},
                                         "gui_scripts": {"demo-gui": "demo_pkg.cli:main"}},
                           files={"demo_pkg/cli.py": "import sys\ndef main():\n    print('demo ran', sys.argv[1:])\n    return 3\n",
                                  "demo_pkg-1.0.data/scripts/tool": "#!python\nimport demo_pkg\nprint('tool', demo_pkg.__version__)\n",
                                  "demo_pkg-1.0.data/data/share/demo/readme.txt": "data\n"})
    tree = os.path.join(tmp, "tree")
    v1 = venv(os.path.join(tmp, "v1"))
    base = set(venv_files(v1, set()))
    r = gpuenv("debug", "wheel-install", "--prefix", v1, "--tree", tree, "--requested", "--json", d.path)
    if check(r.returncode == 0, "fixture install: %s" % r.stderr):
        j = json.loads(r.stdout)
        check(j["name"] == "Demo.Pkg" and not j["tree_reused"], "fixture json %r" % j)
        py = os.path.join(v1, "bin", "python")
        r = subprocess.run([py, "-c", "import demo_pkg, demo_pkg.cli; print(demo_pkg.__version__)"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and r.stdout.strip() == "1.0", "import: %s %s" % (r.stdout, r.stderr))
        r = subprocess.run([os.path.join(v1, "bin", "demo"), "a", "b"], capture_output=True, text=True, timeout=60)
        check(r.returncode == 3 and "demo ran ['a', 'b']" in r.stdout, "console script: %d %s %s" % (
            r.returncode, r.stdout, r.stderr))
        # mkwheel writes every entry 0644: the script stays so, as with pip
        r = subprocess.run([py, os.path.join(v1, "bin", "tool")], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and r.stdout.strip() == "tool 1.0", "#!python script: %s %s" % (r.stdout, r.stderr))
        with open(os.path.join(v1, "bin", "tool"), encoding="utf-8") as f:
            check(f.readline() == "#!%s/bin/python\n" % v1, "the #!python line was rewritten")
        check(os.path.exists(os.path.join(v1, "share", "demo", "readme.txt")), "data file in the prefix")
        # a second venv from the same tree: reused, hardlinked
        v2 = venv(os.path.join(tmp, "v2"))
        r = gpuenv("debug", "wheel-install", "--prefix", v2, "--tree", tree, "--json", d.path)
        check(r.returncode == 0 and json.loads(r.stdout)["tree_reused"], "tree reuse: %s" % r.stderr)
        a = os.stat(os.path.join(tree, "demo_pkg", "cli.py"))
        b = os.stat(os.path.join(site(v2), "demo_pkg", "cli.py"))
        check(a.st_ino == b.st_ino, "the venv's file is the tree's (hardlink)")
        # pip uninstalls what gpuenv installed
        if HAVE_PIP:
            r = subprocess.run([PIP_PY, "-m", "pip", "--python", py, "uninstall", "-y", "demo.pkg"],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "pip uninstall: %s" % r.stderr)
            left = sorted(set(venv_files(v1, set())) - base)
            check(left == [], "pip uninstall left %r" % left)
            r = subprocess.run([PIP_PY, "-m", "pip", "--python", os.path.join(v2, "bin", "python"), "check"],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "pip check: %s %s" % (r.stdout, r.stderr))
        # an edit through a hardlink damages the tree: found, not installed
        with open(os.path.join(site(v2), "demo_pkg", "cli.py"), "a", encoding="utf-8") as f:
            f.write("# edited\n")
        r = gpuenv("debug", "wheel-install", "--prefix", venv(os.path.join(tmp, "v3")), "--tree", tree, d.path)
        check(r.returncode == 1 and "damaged" in r.stderr and "demo_pkg/cli.py" in r.stderr,
              "damaged tree: %d %s" % (r.returncode, r.stderr))
        # the expected hash: right (any case) passes
        r = gpuenv("debug", "wheel-install", "--tree", os.path.join(tmp, "t2"), "--sha256",
                   d.sha256.upper(), d.path)
        check(r.returncode == 0, "--sha256 upper case: %s" % r.stderr)

# ---- pip's edge-case wheels -------------------------------------------------
# name -> None (installs as pip does), ("refused", why gpuenv says, why pip
# says or None when pip installs it), or ("tags", ...) for wheels pip refuses
# on this platform only (tags are sync's and the lock's to check)
PIPW = os.path.realpath(os.path.join(SHARED, "testdata", "pip-wheels"))
REFUSED = {
    "brokenwheel-1.0-py2.py3-none-any.whl": ("does not name the wheel's project", "does not start with"),
    "corruptwheel-1.0-py2.py3-none-any.whl": ("not a readable wheel", "is invalid"),
    "invalid.whl": ("invalid wheel file name", "not a valid wheel filename"),
    "priority-1.0-py2.py3-none-any.whl": ("an empty file", "is invalid"),
    "invalid_version-2010i-py3-none-any.whl": ("not a PEP 440 version", None),
    "license.dist-0.1-py2.py3-none-any.whl": ("but RECORD (line 2) says 271", None),
    "license.dist-0.2-py2.py3-none-any.whl": ("but RECORD (line 2) says 271", None),
    "simplewheel-2.0-1-py2.py3-none-any.whl": ("not listed in the wheel's RECORD", None),
}
TAGS = {"simple.dist-0.1-py1-none-invalid.whl", "simplewheel-2.0-py3-fakeabi-fakeplat.whl"}

if not os.path.isdir(PIPW):
    print("no %s: the pip edge cases are left out" % PIPW)
else:
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(PIPW)):
            if not name.endswith(".whl"):
                continue
            whl = os.path.join(PIPW, name)
            g = venv(os.path.join(tmp, "g-" + name))
            base = set(venv_files(g, set()))
            sha = hashlib.sha256(open(whl, "rb").read()).hexdigest()
            du = json.dumps({"archive_info": {"hash": "sha256=" + sha, "hashes": {"sha256": sha}},
                             "url": "file://" + whl}, sort_keys=True)
            r = gpuenv("debug", "wheel-install", "--prefix", g, "--requested", "--compile",
                       "--installer", "pip", "--direct-url", du, whl)
            pip = None
            if HAVE_PIP:
                p = venv(os.path.join(tmp, "p-" + name))
                pip = subprocess.run([PIP_PY, "-m", "pip", "--python", os.path.join(p, "bin", "python"), "install",
                                      "--no-deps", "--no-index", "--disable-pip-version-check", whl],
                                     capture_output=True, text=True, timeout=300)
            if name in REFUSED:
                ours, theirs = REFUSED[name]
                check(r.returncode == 1 and ours in r.stderr and name in r.stderr,
                      "%s: refused with %r: %d %s" % (name, ours, r.returncode, r.stderr.strip()))
                check(venv_files(g, base) == {}, "%s: refused but wrote into the venv" % name)
                if pip is not None:
                    if theirs:
                        check(pip.returncode != 0 and theirs in pip.stderr,
                              "%s: pip refuses with %r: %s" % (name, theirs, pip.stderr[-300:]))
                    else:
                        check(pip.returncode == 0, "%s: pip installs it (docs/install.md says): %s" % (
                            name, pip.stderr[-300:]))
                continue
            if not check(r.returncode == 0, "%s: %s" % (name, r.stderr.strip())):
                continue
            if name in TAGS:
                if pip is not None:
                    check(pip.returncode != 0 and "not a supported wheel on this platform" in pip.stderr,
                          "%s: pip refuses its tags: %s" % (name, pip.stderr[-300:]))
                continue
            if pip is None:
                continue
            if not check(pip.returncode == 0, "%s: pip: %s" % (name, pip.stderr[-300:])):
                continue
            ours = venv_files(g, base)
            theirs = venv_files(p, base)
            check(sorted(ours) == sorted(theirs), "%s: files differ: only gpuenv %r, only pip %r" % (
                name, sorted(set(ours) - set(theirs))[:5], sorted(set(theirs) - set(ours))[:5]))
            for rel in sorted(set(ours) & set(theirs)):
                if rel.endswith(".pyc") or rel.endswith("/RECORD"):
                    continue
                a = ours[rel][1].replace(g.encode(), b"VENV")
                b = theirs[rel][1].replace(p.encode(), b"VENV")
                check(a == b, "%s: %s differs" % (name, rel))
                check(ours[rel][0] == theirs[rel][0], "%s: %s: the executable bit differs" % (name, rel))
            gs, grows = record_paths(g)
            ps, prows = record_paths(p)
            # pip keeps RECORD rows for files it did not install (a
            # setuptools wrapper it replaced by its launcher, a file the
            # wheel's RECORD lists but lacks); gpuenv lists what it installs
            prows = [x for x in prows if os.path.exists(os.path.normpath(os.path.join(ps, x)))]
            check(sorted(grows) == sorted(prows), "%s: RECORD paths differ: only gpuenv %r, only pip %r" % (
                name, sorted(set(grows) - set(prows))[:5], sorted(set(prows) - set(grows))[:5]))
            shutil.rmtree(p)
            shutil.rmtree(g)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("wheel-install: ok")
