"""gpuenv export: a target's lock as requirements (with hashes) and constraints,
checked by pip itself against a fixture index (tests/fixtures/mkwheel.py):
`pip install --require-hashes -r` of the export into a fresh venv gives exactly
the lock (`pip list`), a tampered hash makes pip refuse, `pip install -c` of the
constraints pins the lock's versions; errors: no lock, a malformed lock, a bad
format, a directory entry with hashes; nothing written on failure."""
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402
from piptool import find_pip  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-export-test-")
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


PIP = find_pip()


def pip(venv, *args):
    p = subprocess.run([PIP, "-m", "pip", "--python", os.path.join(venv, "bin", "python"),
                        "--disable-pip-version-check", "--no-cache-dir", *args],
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


lib, ver = platform.libc_ver()
a, b = (ver.split(".") + ["0"])[:2] if lib == "glibc" else ("2", "17")
PLATFORM = "manylinux_%s_%s_%s" % (a, b, platform.machine())

INDEX = os.path.join(TMP, "index")
mkwheel.build_index(INDEX, [
    {"name": "alpha", "version": "1.0", "requires": ["beta>=1.0", "gamma ; python_version < '3.0'"]},
    {"name": "beta", "version": "1.0"},
    {"name": "beta", "version": "2.0"},
    {"name": "gamma", "version": "1.0"},
    {"name": "Delta_Pkg", "version": "0.5", "sdist": False},
])
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"
PROJ = os.path.join(TMP, "proj")
os.makedirs(PROJ)
with open(os.path.join(PROJ, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "proj"\nversion = "0.1"\ndependencies = ["alpha", "delta-pkg"]\n\n'
            '[tool.gpuenv.targets.cpu]\ngpu = "none"\npython = "%s"\nplatform = "%s"\n' % (PYXY, PLATFORM))

rc, out, err = run("lock", "--project", PROJ, "--index-url", SIMPLE, "--cache-dir", os.path.join(TMP, "c"))
check(rc == 0, "lock: %d %s" % (rc, err))
LOCK = os.path.join(PROJ, "pylock.cpu.toml")
with open(LOCK, "rb") as f:
    locked = tomllib.load(f)
want = {p["name"]: p["version"] for p in locked["packages"]}
check(want == {"alpha": "1.0", "beta": "2.0", "delta-pkg": "0.5"}, "the lock: %s" % want)

# --- requirements ----------------------------------------------------------------
REQ = os.path.join(TMP, "requirements.txt")
rc, out, err = run("export", "--project", PROJ, "--format", "requirements", "-o", REQ)
check(rc == 0 and os.path.exists(REQ), "export requirements: %d %s" % (rc, err))
text = open(REQ).read() if os.path.exists(REQ) else ""
check(("--index-url " + SIMPLE) in text, "the index line: %s" % text[:300])
nhash = sum(len(p.get("wheels", [])) + (1 if "sdist" in p else 0) for p in locked["packages"])
check(text.count("--hash=sha256:") == nhash, "a hash for every file: %d of %d" % (text.count("--hash=sha256:"), nhash))
for p in locked["packages"]:
    check(("%s==%s" % (p["name"], p["version"])) in text, "pin of %s" % p["name"])
rc2, out2, _ = run("export", "--project", PROJ)
check(rc2 == 0 and out2 == text, "stdout and -o give the same bytes; requirements is the default")
rc2, out2, _ = run("export", "--lock", LOCK)
check(rc2 == 0 and out2.split("\n", 1)[1] == text.split("\n", 1)[1], "--lock FILE: the same export")

if PIP:
    venv = os.path.join(TMP, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    rc, o = pip(venv, "install", "--require-hashes", "--no-deps", "-r", REQ)
    check(rc == 0, "pip install --require-hashes -r: %s" % o[-800:])
    rc, o = pip(venv, "list", "--format", "json")
    got = {mkwheel.normalize(x["name"]): x["version"] for x in json.loads(o)} if rc == 0 else {}
    got.pop("pip", None)
    got.pop("setuptools", None)
    check(got == want, "pip list equals the lock: %s" % got)
    rc, o = pip(venv, "check")
    check(rc == 0, "pip check: %s" % o)
    # without --no-deps too: pip's own resolution over the export agrees
    venv2 = os.path.join(TMP, "venv2")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv2], check=True)
    rc, o = pip(venv2, "install", "--require-hashes", "-r", REQ)
    check(rc == 0, "pip install --require-hashes -r (with dependencies): %s" % o[-800:])
    # a tampered hash: pip refuses
    bad = os.path.join(TMP, "tampered.txt")
    i = text.index("--hash=sha256:") + len("--hash=sha256:")
    flip = "0" if text[i] != "0" else "1"
    with open(bad, "w") as f:
        f.write(text[:i] + flip + text[i + 1:])
    venv3 = os.path.join(TMP, "venv3")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv3], check=True)
    rc, o = pip(venv3, "install", "--require-hashes", "--no-deps", "-r", bad)
    check(rc != 0 and "DO NOT MATCH THE HASHES" in o, "pip refuses a tampered hash: %s" % o[-500:])
    # constraints: pins without hashes, for -c
    CONS = os.path.join(TMP, "constraints.txt")
    rc, out, err = run("export", "--project", PROJ, "--format", "constraints", "-o", CONS)
    ctext = open(CONS).read() if rc == 0 else ""
    check(rc == 0 and "--hash" not in ctext and "beta==2.0" in ctext and "--index-url" not in ctext,
          "constraints: %s" % ctext)
    venv4 = os.path.join(TMP, "venv4")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv4], check=True)
    rc, o = pip(venv4, "install", "--index-url", SIMPLE, "-c", CONS, "alpha")
    rc2, o2 = pip(venv4, "list", "--format", "json")
    got = {mkwheel.normalize(x["name"]): x["version"] for x in json.loads(o2)} if rc2 == 0 else {}
    check(rc == 0 and got.get("beta") == "2.0" and got.get("alpha") == "1.0",
          "pip -c pins the lock's versions: %s %s" % (got, o[-300:]))
else:
    print("note: no pip >= 22.3 here: the pip checks are skipped (install python3-pip)")

# --- errors: nothing written -------------------------------------------------------
NOPE = os.path.join(TMP, "nope.txt")
rc, out, err = run("export", "--project", PROJ, "--format", "wheelhouse", "-o", NOPE)
check(rc == 2 and "requirements, constraints, dockerfile and compose" in err and not os.path.exists(NOPE), "bad format: %s" % err)
empty = os.path.join(TMP, "empty")
shutil.copytree(PROJ, empty)
os.unlink(os.path.join(empty, "pylock.cpu.toml"))
rc, out, err = run("export", "--project", empty, "-o", NOPE)
check(rc == 4 and "gpuenv lock --target cpu" in err and not os.path.exists(NOPE), "no lock: %s" % err)
broken = os.path.join(TMP, "broken.toml")
with open(broken, "w") as f:
    f.write(open(LOCK).read().replace('lock-version = "1.0"', 'lock-version = 1.0'))
rc, out, err = run("export", "--lock", broken, "-o", NOPE)
check(rc == 4 and "broken.toml:" in err and not os.path.exists(NOPE), "a malformed lock: %s" % err)
withdir = os.path.join(TMP, "withdir.toml")
with open(withdir, "w") as f:
    f.write(open(LOCK).read() + '\n[[packages]]\nname = "local-thing"\ndirectory = { path = "./local" }\n')
rc, out, err = run("export", "--lock", withdir, "-o", NOPE)
check(rc == 4 and "local-thing" in err and "--no-hashes" in err and not os.path.exists(NOPE),
      "a directory entry with hashes: %s" % err)
rc, out, err = run("export", "--lock", withdir, "--no-hashes")
check(rc == 0 and "./local" in out and "--hash" not in out, "--no-hashes writes the directory: %s" % out[-200:])
rc, out, err = run("export", "--lock", LOCK, "--target", "cpu")
check(rc == 2, "--lock with --target: usage error")
rc, out, err = run("export", "--help")
check(rc == 0 and "--format" in out, "export --help")

shutil.rmtree(TMP, ignore_errors=True)
print("ok" if not failures else "%d failures" % len(failures))
sys.exit(1 if failures else 0)
