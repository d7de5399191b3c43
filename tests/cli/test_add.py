"""gpuenv init, add, remove and source (docs/workflow.md) against fixture
indexes (tests/fixtures/mkwheel.py, torch_index.py; file:// URLs):

  - PEP 621: add into a commented multi-line array (the rest byte for byte),
    the lock updated and the venv synced; remove gives the original file
    back and the package leaves lock and venv; --no-sync locks only,
    --no-lock only edits; a failed lock (no solution) puts the file back;
  - PEP 735: a one-line group keeps its style, a new group is a new table,
    add-then-remove byte-identical;
  - Poetry: the satellite example's t4 group gets pytest@^7.4 (locked for t4),
    removed byte-identical; pillow@^10 --source pytorch replaces the main
    dependency in place as an inline table; sources added and removed;
  - init in an empty folder (no target), and from an H200 probe snapshot (a
    [tool.gpuenv.targets.h200] table), each followed by add, lock and sync;
    init over an existing pyproject.toml refuses;
  - bad input: an invalid requirement, an unknown group or source, a
    read-only pyproject.toml, one that does not parse (file:line:col):
    nothing written.
"""
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402
import torch_index  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-add-test-")
CACHE = os.path.join(TMP, "cache")
PYXY = "%d.%d" % sys.version_info[:2]


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=300)
    return p.returncode, p.stdout, p.stderr


def read(p):
    with open(p, "rb") as f:
        return f.read()


def write(p, data):
    with open(p, "wb") as f:
        f.write(data)


def locked(project, name="pylock.toml"):
    with open(os.path.join(project, name), "rb") as f:
        return {p["name"]: p["version"] for p in tomllib.load(f)["packages"]}


def installed(venv):
    import glob
    return {os.path.basename(d).split("-")[0].lower().replace("_", "-")
            for d in glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "*.dist-info"))}


INDEX = os.path.join(TMP, "index")
mkwheel.build_index(INDEX, [
    {"name": "alpha", "version": "1.0", "requires": ["beta>=1.0"], "sdist": False},
    {"name": "beta", "version": "1.0", "sdist": False},
    {"name": "gamma", "version": "1.0", "sdist": False},
    {"name": "Delta_Pkg", "version": "0.5", "sdist": False},
])
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"
IDX = ["--index-url", SIMPLE, "--cache-dir", CACHE]

# ---- PEP 621 ----------------------------------------------------------------

P1 = os.path.join(TMP, "pep621")
os.makedirs(P1)
ORIG = (b'# a project\n[project]\nname = "p1"\nversion = "0.1"\n'
        b'dependencies = [\n    # the base\n    "alpha>=1.0",  # alpha first\n]\n\n'
        b'[tool.other]\nkeep = "this"   # spacing kept\n')
write(os.path.join(P1, "pyproject.toml"), ORIG)
rc, out, err = run("add", "gamma", "--project", P1, *IDX)
check(rc == 0, "pep621 add: exit 0, got %d: %s%s" % (rc, out, err))
text = read(os.path.join(P1, "pyproject.toml"))
check(text == ORIG.replace(b'  # alpha first\n', b'  # alpha first\n    "gamma>=1.0",\n'),
      "pep621 add: one line added with the locked version's bound (as uv), the rest byte for byte: %r" % text)
check("gamma" in locked(P1), "pep621 add: gamma locked")
rc, out, err = run("lock", "--check", "--project", P1)
check(rc == 0, "pep621 add: the lock is fresh for the file with the bound: %d %s%s" % (rc, out, err))
venv = os.path.join(P1, ".venv")
check({"alpha", "beta", "gamma"} <= installed(venv), "pep621 add: synced: %r" % installed(venv))
rc, out, err = run("remove", "GAMMA", "--project", P1, *IDX)
check(rc == 0, "pep621 remove: exit 0, got %d: %s%s" % (rc, out, err))
check(read(os.path.join(P1, "pyproject.toml")) == ORIG, "pep621 add then remove: byte-identical")
check("gamma" not in locked(P1), "pep621 remove: gamma out of the lock")
check("gamma" not in installed(venv), "pep621 remove: gamma out of the venv")
# --json: what was edited, the locks' changes, the sync (docs/workflow.md, "--json")
rc, out, err = run("add", "gamma", "--project", P1, "--json", *IDX)
try:
    j = json.loads(out)
except ValueError:
    j = {}
check(rc == 0 and j.get("verb") == "add" and j.get("file") == os.path.join(P1, "pyproject.toml")
      and j.get("dialect") == "pep621", "add --json: one object, the file and dialect: %d %s%s" % (rc, out, err))
check(j.get("edits") == [{"requirement": "gamma", "change": "+", "written": "project.dependencies: gamma"}],
      "add --json: the edit: %r" % j.get("edits"))
check(j.get("bounds") == [{"name": "gamma", "version": "1.0", "written": "project.dependencies: gamma>=1.0"}],
      "add --json: the locked version's bound: %r" % j.get("bounds"))
lk = (j.get("locks") or [{}])[0]
check(len(j.get("locks") or []) == 1 and lk.get("target") == "auto" and lk.get("packages", {}).get("gamma") == "1.0"
      and {"name": "gamma", "change": "+", "from": None, "to": "1.0"} in lk.get("changes", []),
      "add --json: the target's lock with gamma as a + change: %r" % j.get("locks"))
check(j.get("locked") is True and j.get("restored") is False and j.get("synced") is True
      and "gamma" in [a["name"] for a in (j.get("sync") or {}).get("plan", []) if a.get("action") == "install"],
      "add --json: locked and synced, the sync's plan installs gamma: %r" % {k: j.get(k) for k in ("locked", "restored", "synced")})
rc, out, err = run("remove", "gamma", "--project", P1, "--no-sync", "--json", *IDX)
try:
    j = json.loads(out)
except ValueError:
    j = {}
lk = (j.get("locks") or [{}])[0]
check(rc == 0 and j.get("verb") == "remove" and j.get("edits") == [{"requirement": "gamma", "change": "-",
      "from": "project.dependencies"}] and {"name": "gamma", "change": "-", "from": "1.0", "to": None}
      in lk.get("changes", []) and j.get("synced") is False and j.get("bounds") == [],
      "remove --json: the edit, gamma's - change, no sync: %d %s%s" % (rc, out, err))
check(read(os.path.join(P1, "pyproject.toml")) == ORIG, "add --json then remove --json: byte-identical")
rc, out, err = run("add", "alpha>=9", "--project", P1, "--json", *IDX)
try:
    j = json.loads(out)
except ValueError:
    j = {}
check(rc == 1 and j.get("restored") is True and j.get("locked") is False and j.get("synced") is False
      and read(os.path.join(P1, "pyproject.toml")) == ORIG,
      "add --json with no solution: restored, exit 1: %d %s%s" % (rc, out, err))
# --no-sync: locked, not installed
rc, out, err = run("add", "delta-pkg>=0.5", "--no-sync", "--project", P1, *IDX)
check(rc == 0 and "delta-pkg" in locked(P1) and "delta-pkg" not in installed(venv),
      "pep621 add --no-sync: locked, not synced: %d %s%s" % (rc, out, err))
rc, out, err = run("remove", "delta_pkg", "--no-sync", "--project", P1, *IDX)
check(rc == 0 and read(os.path.join(P1, "pyproject.toml")) == ORIG, "pep621 remove --no-sync: byte-identical")
# --no-lock: only the file
lock_before = read(os.path.join(P1, "pylock.toml"))
rc, out, err = run("add", "gamma", "--no-lock", "--project", P1)
check(rc == 0 and b'"gamma"' in read(os.path.join(P1, "pyproject.toml")) and
      read(os.path.join(P1, "pylock.toml")) == lock_before, "pep621 add --no-lock: file only")
rc, out, err = run("remove", "gamma", "--no-lock", "--project", P1)
check(rc == 0 and read(os.path.join(P1, "pyproject.toml")) == ORIG, "pep621 remove --no-lock: byte-identical")
# a lock with no solution puts the file back
rc, out, err = run("add", "alpha>=9", "--project", P1, *IDX)
check(rc == 1, "pep621 add alpha>=9: exit 1 (no solution), got %d: %s%s" % (rc, out, err))
check(read(os.path.join(P1, "pyproject.toml")) == ORIG, "pep621 failed lock: the file as it was")
check(read(os.path.join(P1, "pylock.toml")) == lock_before, "pep621 failed lock: the lock as it was")
check("left as it was" in err, "pep621 failed lock: said: %s" % err)
# an existing dependency is updated where it is
rc, out, err = run("add", "alpha>=1.0,<2", "--no-lock", "--project", P1)
check(rc == 0 and read(os.path.join(P1, "pyproject.toml")) == ORIG.replace(b'"alpha>=1.0"', b'"alpha>=1.0,<2"'),
      "pep621 add of a present name: replaced in place")
write(os.path.join(P1, "pyproject.toml"), ORIG)

# ---- bad input: nothing written --------------------------------------------

rc, out, err = run("add", "alpha>>1", "--no-lock", "--project", P1)
check(rc == 2 and "alpha>>1" in err and read(os.path.join(P1, "pyproject.toml")) == ORIG,
      "invalid requirement: exit 2, named, nothing written: %d %s" % (rc, err))
rc, out, err = run("remove", "gamma", "--group", "nope", "--no-lock", "--project", P1)
check(rc == 2 and "nope" in err, "remove --group unknown: exit 2: %d %s" % (rc, err))
rc, out, err = run("remove", "zeta", "--no-lock", "--project", P1)
check(rc == 2 and "zeta" in err, "remove of a name not there: exit 2: %d %s" % (rc, err))
rc, out, err = run("add", "gamma", "--source", "pytorch", "--no-lock", "--project", P1)
check(rc == 2 and "--source" in err and read(os.path.join(P1, "pyproject.toml")) == ORIG,
      "pep621 --source: exit 2: %d %s" % (rc, err))
os.chmod(os.path.join(P1, "pyproject.toml"), 0o444)
rc, out, err = run("add", "gamma", "--no-lock", "--project", P1)
check(rc == 4 and os.path.join(P1, "pyproject.toml") in err, "read-only: exit 4 with the path: %d %s" % (rc, err))
check(read(os.path.join(P1, "pyproject.toml")) == ORIG, "read-only: unchanged")
os.chmod(os.path.join(P1, "pyproject.toml"), 0o644)
BAD = b'[project]\nname = "x"\ndependencies = [\n  "alpha",\n  = 1\n'
write(os.path.join(P1, "pyproject.toml"), BAD)
rc, out, err = run("add", "gamma", "--no-lock", "--project", P1)
check(rc == 4 and (os.path.join(P1, "pyproject.toml") + ":5:") in err,
      "malformed: exit 4 with file:line:col: %d %s" % (rc, err))
check(read(os.path.join(P1, "pyproject.toml")) == BAD, "malformed: nothing written")
write(os.path.join(P1, "pyproject.toml"), ORIG)

# ---- PEP 735 ----------------------------------------------------------------

P2 = os.path.join(TMP, "pep735")
os.makedirs(P2)
ORIG2 = (b'[project]\nname = "p2"\nversion = "0.1"\ndependencies = ["alpha"]\n\n'
         b'[dependency-groups]\ndev = ["beta"]  # dev tools\n')
write(os.path.join(P2, "pyproject.toml"), ORIG2)
rc, out, err = run("add", "gamma", "--group", "dev", "--no-lock", "--project", P2)
check(rc == 0 and read(os.path.join(P2, "pyproject.toml")) == ORIG2.replace(b'["beta"]', b'["beta", "gamma"]'),
      "pep735 add: one-line style kept: %r" % read(os.path.join(P2, "pyproject.toml")))
rc, out, err = run("remove", "gamma", "--group", "dev", "--no-lock", "--project", P2)
check(rc == 0 and read(os.path.join(P2, "pyproject.toml")) == ORIG2, "pep735 remove: byte-identical")
rc, out, err = run("add", "gamma", "--group", "test", "--no-lock", "--project", P2)
check(rc == 0 and read(os.path.join(P2, "pyproject.toml")) == ORIG2 + b'test = ["gamma"]\n',
      "pep735 add to a new group: %r" % read(os.path.join(P2, "pyproject.toml")))
rc, out, err = run("remove", "gamma", "--group", "test", "--no-lock", "--project", P2)
check(rc == 0 and read(os.path.join(P2, "pyproject.toml")) == ORIG2, "pep735 emptied group removed: byte-identical")
# no [dependency-groups] yet: the table is made, and goes again
P3 = os.path.join(TMP, "pep735b")
os.makedirs(P3)
ORIG3 = b'[project]\nname = "p3"\nversion = "0.1"\ndependencies = ["alpha"]\n'
write(os.path.join(P3, "pyproject.toml"), ORIG3)
rc, out, err = run("add", "gamma", "--group", "dev", "--no-lock", "--project", P3)
check(rc == 0 and read(os.path.join(P3, "pyproject.toml")) == ORIG3 + b'\n[dependency-groups]\ndev = ["gamma"]\n',
      "pep735 new table: %r" % read(os.path.join(P3, "pyproject.toml")))
rc, out, err = run("remove", "gamma", "--group", "dev", "--no-lock", "--project", P3)
check(rc == 0 and read(os.path.join(P3, "pyproject.toml")) == ORIG3, "pep735 new table removed: byte-identical")

# ---- a uv project: its own index table, sources by index -----------------------
# (issue 23: add and remove in a uv project's dialect, PEP 621 plus [tool.uv];
# the lock asks the project's [[tool.uv.index]], not --index-url)

P4 = os.path.join(TMP, "uvproj")
os.makedirs(P4)
ORIG4 = (b'[project]\nname = "p4"\nversion = "0.1"\nrequires-python = ">=3.9"\n'
         b'dependencies = [\n    "alpha",\n]\n\n'
         b'[[tool.uv.index]]\nname = "local"\nurl = "' + SIMPLE.encode() + b'"\ndefault = true\n\n'
         b'[tool.uv.sources]\nalpha = { index = "local" }  # pinned to the local index\n')
write(os.path.join(P4, "pyproject.toml"), ORIG4)
rc, out, err = run("add", "gamma", "--project", P4, "--cache-dir", CACHE)
check(rc == 0, "uv add: exit 0, got %d: %s%s" % (rc, out, err))
check(read(os.path.join(P4, "pyproject.toml")) == ORIG4.replace(b'    "alpha",\n', b'    "alpha",\n    "gamma>=1.0",\n'),
      "uv add: one line added to [project].dependencies, [tool.uv] untouched: %r"
      % read(os.path.join(P4, "pyproject.toml")))
check("gamma" in locked(P4) and "alpha" in locked(P4), "uv add: locked from the uv index")
check({"alpha", "beta", "gamma"} <= installed(os.path.join(P4, ".venv")), "uv add: synced")
rc, out, err = run("remove", "gamma", "--project", P4, "--cache-dir", CACHE)
check(rc == 0 and read(os.path.join(P4, "pyproject.toml")) == ORIG4,
      "uv add then remove: byte-identical: %d %s%s" % (rc, out, err))
check("gamma" not in locked(P4), "uv remove: gamma out of the lock")

# ---- Poetry: a plain name gets the locked version's caret ------------------

P5 = os.path.join(TMP, "poetryproj")
os.makedirs(P5)
ORIG5 = (b'[tool.poetry]\nname = "p5"\nversion = "0.1.0"\ndescription = ""\nauthors = []\n\n'
         b'[tool.poetry.dependencies]\npython = "^3.9"\nalpha = "^1.0"  # kept\n')
write(os.path.join(P5, "pyproject.toml"), ORIG5)
rc, out, err = run("add", "delta_pkg", "--no-sync", "--project", P5, *IDX)
check(rc == 0 and read(os.path.join(P5, "pyproject.toml")) == ORIG5 + b'delta_pkg = "^0.5"\n',
      "poetry add of a plain name: the caret of the locked version, as Poetry writes it: %d %s%s %r"
      % (rc, out, err, read(os.path.join(P5, "pyproject.toml"))))
check(locked(P5).get("delta-pkg") == "0.5", "poetry add: delta-pkg 0.5 locked")
rc, out, err = run("lock", "--check", "--project", P5)
check(rc == 0, "poetry add: the lock is fresh for the file with the bound: %d %s%s" % (rc, out, err))
rc, out, err = run("remove", "delta-pkg", "--no-sync", "--project", P5, *IDX)
check(rc == 0 and read(os.path.join(P5, "pyproject.toml")) == ORIG5, "poetry add then remove: byte-identical")
# a lock that fails: the file and the lock as they were
lock5 = read(os.path.join(P5, "pylock.toml"))
rc, out, err = run("add", "gamma", "alpha@^9", "--no-sync", "--project", P5, *IDX)
check(rc == 1 and read(os.path.join(P5, "pyproject.toml")) == ORIG5 and read(os.path.join(P5, "pylock.toml")) == lock5,
      "poetry failed add: file and lock as they were: %d %s" % (rc, err))

# ---- Poetry: the satellite example ----------------------------------------

URLS = torch_index.build(os.path.join(TMP, "torch"))
SAT = os.path.join(TMP, "satellite")
os.makedirs(SAT)
shutil.copyfile(os.path.join(SHARED, "examples", "satellite-classifier", "pyproject.toml"), os.path.join(SAT, "pyproject.toml"))
SATP = os.path.join(SAT, "pyproject.toml")
SORIG = read(SATP)
SLOCK = ["--index-url", URLS["pypi"], "--torch-index", URLS["torch-index"], "--cache-dir", CACHE,
         "--source-url", "pytorch=%s/cu118/" % URLS["torch-index"], "--source-url", "nvidia-jetpack=" + URLS["jetpack"]]
rc, out, err = run("add", "pytest@^7.4", "--group", "t4", "--target", "t4", "--no-sync", "--project", SAT, *SLOCK)
check(rc == 0, "satellite add: exit 0, got %d: %s%s" % (rc, out, err))
check(read(SATP) == SORIG.replace(b'tensorrt = "8.5.3.1"\n', b'tensorrt = "8.5.3.1"\npytest = "^7.4"\n'),
      "satellite add: one line in the t4 group, the rest byte for byte")
t4 = locked(SAT, "pylock.t4.toml") if os.path.exists(os.path.join(SAT, "pylock.t4.toml")) else {}
check(t4.get("pytest", "").startswith("7."), "satellite add: pytest 7 in pylock.t4.toml: %r" % t4.get("pytest"))
rc, out, err = run("remove", "pytest", "--group", "t4", "--target", "t4", "--no-sync", "--project", SAT, *SLOCK)
check(rc == 0 and read(SATP) == SORIG, "satellite remove: byte-identical (%d %s)" % (rc, err))
check("pytest" not in locked(SAT, "pylock.t4.toml"), "satellite remove: pytest out of pylock.t4.toml")
rc, out, err = run("add", "pillow@^10", "--source", "pytorch", "--no-lock", "--project", SAT)
check(rc == 0 and read(SATP) == SORIG.replace(b'pillow = ">=9.0"', b'pillow = { version = "^10", source = "pytorch" }'),
      "satellite pillow@^10 --source: an inline table in place: %s" % err)
write(SATP, SORIG)
rc, out, err = run("add", "onnx", "--source", "nope", "--no-lock", "--project", SAT)
check(rc == 2 and "pytorch, nvidia, nvidia-jetpack" in err and read(SATP) == SORIG,
      "unknown source: exit 2 with the declared ones: %d %s" % (rc, err))
rc, out, err = run("add", "onnx@^^1", "--no-lock", "--project", SAT)
check(rc == 2 and read(SATP) == SORIG, "bad Poetry constraint: exit 2: %d %s" % (rc, err))
rc, out, err = run("add", "onnx", "--group", "t4", "--no-lock", "--project", SAT)
check(rc == 0 and b'tensorrt = "8.5.3.1"\nonnx = "*"\n' in read(SATP), "satellite plain name: \"*\"")
write(SATP, SORIG)
rc, out, err = run("source", "add", "ngc2", "https://ngc.example/simple", "--priority", "explicit", "--project", SAT)
check(rc == 0 and read(SATP) == SORIG.replace(
    b'url = "https://pypi.jetson-ai-lab.io/jp6/cu126"\npriority = "explicit"\n',
    b'url = "https://pypi.jetson-ai-lab.io/jp6/cu126"\npriority = "explicit"\n\n[[tool.poetry.source]]\n'
    b'name = "ngc2"\nurl = "https://ngc.example/simple"\npriority = "explicit"\n'),
    "source add: after the last source: %d %s" % (rc, err))
rc, out, err = run("source", "remove", "ngc2", "--project", SAT)
check(rc == 0 and read(SATP) == SORIG, "source remove: byte-identical")
rc, out, err = run("source", "remove", "pytorch", "--project", SAT)
check(rc == 2 and read(SATP) == SORIG, "source remove of a used source: exit 2: %s" % err)
rc, out, err = run("source", "add", "x", "https://x", "--priority", "primry", "--project", SAT)
check(rc == 2 and "primary" in err, "source --priority typo: exit 2 with a suggestion: %s" % err)

# ---- init -------------------------------------------------------------------

I1 = os.path.join(TMP, "new1")
rc, out, err = run("init", I1, "--target", "none", "--python", PYXY)
check(rc == 0, "init: exit 0: %d %s%s" % (rc, out, err))
m = tomllib.loads(read(os.path.join(I1, "pyproject.toml")).decode())
check(m["project"]["name"] == "new1" and m["project"]["requires-python"] == ">=" + PYXY and "tool" not in m,
      "init: [project] with requires-python, no target: %r" % m)
check(read(os.path.join(I1, ".gitignore")) == b".venv/\n", "init: .gitignore with .venv/")
I3 = os.path.join(TMP, "new3")
rc, out, err = run("init", I3, "--target", "cpu", "--python", PYXY, "--poetry", "--json")
try:
    j = json.loads(out)
except ValueError:
    j = {}
check(rc == 0 and j.get("verb") == "init" and j.get("file") == os.path.join(I3, "pyproject.toml")
      and j.get("dialect") == "poetry" and j.get("python") == PYXY
      and (j.get("target") or {}).get("name") == "cpu" and j.get("gitignore") == {"file": os.path.join(I3, ".gitignore"),
      "created": True} and os.path.exists(os.path.join(I3, "pyproject.toml")),
      "init --json: file, dialect, python, target, .gitignore: %d %s%s" % (rc, out, err))
rc, out, err = run("add", "alpha", "--project", I1, *IDX)
check(rc == 0 and "alpha" in locked(I1) and "alpha" in installed(os.path.join(I1, ".venv")),
      "init then add: locked and synced: %d %s%s" % (rc, out, err))
before = read(os.path.join(I1, "pyproject.toml"))
rc, out, err = run("init", I1)
check(rc == 4 and "exists" in err and read(os.path.join(I1, "pyproject.toml")) == before,
      "init over a project: exit 4, nothing written: %d %s" % (rc, err))

H200 = os.path.join(TMP, "h200.json")
snap = json.load(open(os.path.join(SRC, "docs", "hardware", "h200-2026-11-29", "probe.json")))
snap["host"].update(libc="glibc", libc_version="2.39", machine=platform.machine())
with open(H200, "w") as f:
    json.dump(snap, f)
I2 = os.path.join(TMP, "new2")
rc, out, err = run("init", I2, "--facts", H200, "--python", PYXY, "--poetry")
check(rc == 0 and "target h200" in out, "init --facts h200: exit 0, target h200: %d %s%s" % (rc, out, err))
m = tomllib.loads(read(os.path.join(I2, "pyproject.toml")).decode())
tg = m.get("tool", {}).get("gpuenv", {}).get("targets", {}).get("h200", {})
check(m["tool"]["poetry"]["dependencies"] == {"python": "^" + PYXY}, "init --poetry: [tool.poetry.dependencies]")
check(tg.get("gpu") == "NVIDIA H200" and tg.get("driver") and tg.get("python") == PYXY and
      tg.get("platform", "").startswith("manylinux_2_39"), "init --facts h200: the target: %r" % tg)
rc, out, err = run("add", "alpha@^1", "--project", I2, "--facts", H200, *IDX)
check(rc == 0 and b'alpha = "^1"' in read(os.path.join(I2, "pyproject.toml")),
      "h200 project add: exit 0: %d %s%s" % (rc, out, err))
check(os.path.exists(os.path.join(I2, "pylock.h200.toml")) and "alpha" in locked(I2, "pylock.h200.toml"),
      "h200 project add: pylock.h200.toml has alpha")
check("alpha" in installed(os.path.join(I2, ".venv")), "h200 project add: synced (target auto from the snapshot)")

rc, out, _ = run("add", "--help")
check(rc == 0 and out.startswith("usage: gpuenv add"), "add --help")

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
