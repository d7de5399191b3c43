"""gpuenv sync and gpuenv run against fixture indexes (file:// and HTTP from
tests/fixtures/index_server.py), with wheels made by tests/fixtures/mkwheel.py:

  - pip agrees: after a sync `pip check` is clean, `pip list` equals the
    lock, the fixture packages import, console scripts run, pip uninstalls
    what gpuenv installed;
  - plans: a fresh venv, a no-op re-sync, an upgrade / install / removal
    between two projects' locks into one venv, --dry-run, --json, --locked
    (a stale lock refuses), a lock made first when missing;
  - targets: auto picks the declared target this machine is (a CPU target
    on a machine without GPU; the H200 of a probe snapshot with --facts),
    or explains why none fits; a named target of other hardware syncs with
    a note (a build host);
  - run: the venv first on PATH, VIRTUAL_ENV set, the command's exit status;
  - crash safety: 100 kill -9 at random points of syncs between two locks:
    after the next gpuenv run on the venv it holds exactly one of the two
    sets, every file as its RECORD says, and `pip check` is clean after the
    next sync;
  - a full disk (a small tmpfs holding the venv): a clean error, the old
    environment intact;
  - doctor --env on the synced venv finds no error.
"""
import base64
import glob
import hashlib
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402
import mkwheel  # noqa: E402
from piptool import find_pip  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-sync-test-")
CACHE = os.path.join(TMP, "cache")
PY = os.path.realpath(sys.executable)
PYXY = "%d.%d" % sys.version_info[:2]


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None, timeout=300):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    e.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


PIP = find_pip()
if not PIP:
    print("note: no pip >= 22.3 here: the pip checks are skipped (install python3-pip)")


def pip(venv, *args):
    p = subprocess.run([PIP, "-m", "pip", "--python", os.path.join(venv, "bin", "python"),
                        "--disable-pip-version-check", *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def this_platform():
    lib, ver = platform.libc_ver()
    a, b = (ver.split(".") + ["0"])[:2] if lib == "glibc" else ("2", "17")
    return "manylinux_%s_%s_%s" % (a, b, platform.machine())


PLATFORM = this_platform()

# ---- the fixture index ------------------------------------------------------

CLI = 'import sys\n\ndef main():\n    print("%s-cli", %r)\n    return 0\n'
INDEX = os.path.join(TMP, "index")
SPECS = [
    {"name": "alpha", "version": "1.0", "requires": ["beta>=1.0"], "sdist": False,
     "entry_points": {"console_scripts": {"alpha-cli": "alpha.cli:main"}},
     "files": {"alpha/cli.py": CLI % ("alpha", "1.0")}},
    {"name": "alpha", "version": "2.0", "requires": ["beta>=2.0", "gamma"], "sdist": False,
     "entry_points": {"console_scripts": {"alpha-cli": "alpha.cli:main"}},
     "files": {"alpha/cli.py": CLI % ("alpha", "2.0"), "alpha/extra.py": "X = 2\n"}},
    {"name": "beta", "version": "1.0", "sdist": False},
    {"name": "beta", "version": "2.0", "sdist": False, "files": {"beta/data.txt": "beta data\n" * 50}},
    {"name": "gamma", "version": "1.0", "sdist": False},
    {"name": "Delta_Pkg", "version": "0.5", "sdist": False},
]
mkwheel.build_index(INDEX, SPECS)
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"


def project(name, deps, targets=None):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    if targets is None:
        targets = {"cpu": {"gpu": "none"}}
    text = '[project]\nname = "%s"\nversion = "0.1"\ndependencies = [%s]\n' % (
        name, ", ".join('"%s"' % x for x in deps))
    for t, kv in targets.items():
        text += "\n[tool.gpuenv.targets.%s]\n" % t
        kv = dict(kv)
        kv.setdefault("python", PYXY)
        kv.setdefault("platform", PLATFORM)
        text += "".join('%s = "%s"\n' % item for item in kv.items())
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write(text)
    return d


def sync(proj, venv, *extra, env=None, index=SIMPLE):
    return run("sync", "--project", proj, "--venv", venv, "--python", PY, "--index-url", index,
               "--cache-dir", CACHE, *extra, env=env)


def installed(venv):
    """{normalised name: version} of the venv's dist-info folders."""
    out = {}
    for d in glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "*.dist-info")):
        n, v = os.path.basename(d)[:-len(".dist-info")].rsplit("-", 1)
        out[mkwheel.normalize(n)] = v
    return out


def record_ok(venv):
    """Every file each RECORD lists is there with its hash: no half package."""
    bad = []
    for site in glob.glob(os.path.join(venv, "lib", "python*", "site-packages")):
        for rec in glob.glob(os.path.join(site, "*.dist-info", "RECORD")):
            for line in open(rec, encoding="utf-8"):
                parts = line.rstrip("\n").rsplit(",", 2)
                if len(parts) != 3 or not parts[1]:
                    continue
                p = os.path.normpath(os.path.join(site, parts[0]))
                try:
                    data = open(p, "rb").read()
                except OSError:
                    bad.append(p)
                    continue
                algo, _, h = parts[1].partition("=")
                got = base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()
                if got != h:
                    bad.append(p)
    return bad


def lock_set(proj, target="cpu"):
    import tomllib
    with open(os.path.join(proj, "pylock.%s.toml" % target), "rb") as f:
        return {p["name"]: p["version"] for p in tomllib.load(f)["packages"]}


def pip_list(venv):
    rc, out = pip(venv, "list", "--format", "json")
    return {mkwheel.normalize(x["name"]): x["version"] for x in json.loads(out)} if rc == 0 else None


A = project("proj-a", ["alpha==1.0", "delta-pkg"])
B = project("proj-b", ["alpha==2.0"])
VENV = os.path.join(TMP, "venv")

# ---- a first sync: locks first, makes the venv, installs -------------------

rc, out, err = sync(A, VENV)
check(rc == 0, "first sync: exit %d\n%s%s" % (rc, out, err))
check("locking target cpu first" in err, "first sync says it locks first: " + err)
check("created " in err, "first sync says it made the venv: " + err)
check(os.path.exists(os.path.join(A, "pylock.cpu.toml")), "the lock was written")
SET_A = lock_set(A)
check(SET_A == {"alpha": "1.0", "beta": "2.0", "delta-pkg": "0.5"}, "lock A: %r" % SET_A)
check(installed(VENV) == SET_A, "venv = lock A: %r" % installed(VENV))
check(out.startswith("installed 3 packages in "), "summary line: " + out)
check(record_ok(VENV) == [], "RECORD matches the files")
p = subprocess.run([os.path.join(VENV, "bin", "python"), "-c", "import alpha, beta, delta_pkg; print(alpha.__version__)"],
                   capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.strip() == "1.0", "imports work: %s%s" % (p.stdout, p.stderr))
p = subprocess.run([os.path.join(VENV, "bin", "alpha-cli")], capture_output=True, text=True)
check(p.returncode == 0 and "alpha-cli 1.0" in p.stdout, "the console script runs: %s%s" % (p.stdout, p.stderr))
with open(os.path.join(VENV, "bin", "alpha-cli")) as f:
    check(f.readline().strip() == "#!" + os.path.join(VENV, "bin", "python"), "the script's shebang is the venv's python")
if PIP:
    rc, out = pip(VENV, "check")
    check(rc == 0, "pip check after the sync: " + out)
    check(pip_list(VENV) == SET_A, "pip list equals the lock: %r" % pip_list(VENV))
    for d in glob.glob(os.path.join(VENV, "lib", "python*", "site-packages", "*.dist-info")):
        with open(os.path.join(d, "INSTALLER")) as f:
            check(f.read().strip() == "gpuenv", "INSTALLER says gpuenv")
        # REQUESTED for direct dependencies only
        want = mkwheel.normalize(os.path.basename(d)[:-len(".dist-info")].rsplit("-", 1)[0]) in ("alpha", "delta-pkg")
        check(os.path.exists(os.path.join(d, "REQUESTED")) == want, "REQUESTED in %s: %s" % (d, want))
        check(not os.path.exists(os.path.join(d, "direct_url.json")), "no direct_url.json for an index install")

# ---- a no-op re-sync ----------------------------------------------------------

t0 = time.monotonic()
rc, out, err = sync(A, VENV, "--locked")
dt = time.monotonic() - t0
check(rc == 0 and "3 packages already match pylock.cpu.toml" in out, "no-op sync: %d %s%s" % (rc, out, err))
print("no-op sync (debug/ASan build, process included): %.3f s" % dt)

# ---- dry run and JSON ---------------------------------------------------------

rc, out, err = sync(B, VENV, "--dry-run")
check(rc == 0, "dry run: %d %s" % (rc, err))
check("  ~ alpha 1.0 -> 2.0" in out and "  + gamma 1.0" in out and "  - delta-pkg 0.5" in out,
      "dry-run plan: " + out)
check(installed(VENV) == SET_A, "a dry run changes nothing")
rc, out, err = sync(B, VENV, "--dry-run", "--json")
plan = json.loads(out)["plan"] if rc == 0 else []
check({(a["name"], a["action"]) for a in plan} == {("alpha", "upgrade"), ("beta", "keep"), ("gamma", "install"),
                                                  ("delta-pkg", "remove")}, "JSON plan: %r" % plan)

# ---- A -> B: upgrade, install, remove, keep ---------------------------------

rc, out, err = sync(B, VENV)
SET_B = lock_set(B)
check(rc == 0 and installed(VENV) == SET_B, "sync B: %d %r %s" % (rc, installed(VENV), err))
check("installed 2 packages (1 upgraded), removed 1 in" in out, "B summary: " + out)
check(record_ok(VENV) == [], "RECORD matches after the upgrade")
check(not glob.glob(os.path.join(VENV, "lib", "python*", "site-packages", "delta_pkg")), "delta-pkg's files are gone")
p = subprocess.run([os.path.join(VENV, "bin", "alpha-cli")], capture_output=True, text=True)
check("alpha-cli 2.0" in p.stdout, "the upgraded script runs: " + p.stdout + p.stderr)
if PIP:
    rc, out = pip(VENV, "check")
    check(rc == 0, "pip check after B: " + out)
    check(pip_list(VENV) == SET_B, "pip list equals lock B")
    rc, out = pip(VENV, "uninstall", "-y", "gamma")
    check(rc == 0 and "gamma" not in installed(VENV), "pip uninstalls what gpuenv installed: " + out)
    check(not glob.glob(os.path.join(VENV, "lib", "python*", "site-packages", "gamma")), "pip removed gamma's files")
    rc, out, err = sync(B, VENV)
    check(rc == 0 and installed(VENV) == SET_B, "sync puts gamma back")

# ---- --reinstall --compile: byte-code listed in RECORD, removed with the package ----

rc, out, err = sync(B, VENV, "--reinstall", "--compile")
check(rc == 0 and "installed 3 packages (3 upgraded)" in out, "--reinstall --compile: %d %s%s" % (rc, out, err))
pyc = glob.glob(os.path.join(VENV, "lib", "python*", "site-packages", "alpha", "__pycache__", "*.pyc"))
check(len(pyc) >= 2, "--compile wrote alpha's .pyc files: %r" % pyc)
rec = open(glob.glob(os.path.join(VENV, "lib", "python*", "site-packages", "alpha-2.0.dist-info", "RECORD"))[0]).read()
check(all(("alpha/__pycache__/" + os.path.basename(p) + ",,") in rec for p in pyc), "RECORD lists the .pyc files")
rc, out, err = sync(A, VENV)
check(rc == 0 and not glob.glob(os.path.join(VENV, "lib", "python*", "site-packages", "alpha", "__pycache__", "extra*")),
      "a downgrade removes the .pyc of files that went: %s" % err)
rc, out, err = sync(B, VENV)
check(rc == 0 and installed(VENV) == SET_B, "back to B")

# ---- --locked refuses a stale or missing lock --------------------------------

C = project("proj-c", ["beta==1.0"])
rc, out, err = sync(C, os.path.join(TMP, "venv-c"), "--locked")
check(rc == 1 and "missing" in err and "gpuenv lock --target cpu" in err, "--locked, no lock: %d %s" % (rc, err))
rc, out, err = sync(C, os.path.join(TMP, "venv-c"))
check(rc == 0 and installed(os.path.join(TMP, "venv-c")) == {"beta": "1.0"}, "C synced: %s" % err)
with open(os.path.join(C, "pyproject.toml"), "a") as f:
    f.write("# a comment changes nothing\n")
rc, out, err = sync(C, os.path.join(TMP, "venv-c"), "--locked")
check(rc == 0, "a comment keeps the lock fresh: " + err)
text = open(os.path.join(C, "pyproject.toml")).read().replace('"beta==1.0"', '"beta==2.0"')
open(os.path.join(C, "pyproject.toml"), "w").write(text)
rc, out, err = sync(C, os.path.join(TMP, "venv-c"), "--locked")
check(rc == 1 and "stale" in err, "--locked, stale lock: %d %s" % (rc, err))
check(installed(os.path.join(TMP, "venv-c")) == {"beta": "1.0"}, "a refused sync changes nothing")

# ---- targets: auto, and a named one of other hardware ------------------------

H200_FACTS = os.path.join(TMP, "h200.json")
snap = json.load(open(os.path.join(SRC, "docs", "hardware", "h200-2026-11-29", "probe.json")))
snap["host"].update(libc="glibc", libc_version="2.39", machine=platform.machine())
with open(H200_FACTS, "w") as f:
    json.dump(snap, f)
T2 = project("proj-targets", ["beta"], {"cpu": {"gpu": "none"},
                                       "h200": {"gpu": "H200", "driver": "580.159.04"}})
rc, out, err = sync(T2, os.path.join(TMP, "venv-t2"), "--dry-run")
check(rc == 0 and "target cpu" in out, "auto on a machine without GPU picks cpu: %d %s%s" % (rc, out, err))
check("would create " in out and not os.path.exists(os.path.join(TMP, "venv-t2")), "a dry run makes no venv: " + out)
rc, out, err = sync(T2, os.path.join(TMP, "venv-t2"), "--dry-run", "--facts", H200_FACTS)
check(rc == 0 and "target h200" in out, "auto on an H200 snapshot picks h200: %d %s%s" % (rc, out, err))
T3 = project("proj-t3", ["beta"], {"a100": {"gpu": "A100", "driver": "535.104.05"}})
rc, out, err = sync(T3, os.path.join(TMP, "venv-t3"), "--dry-run", "--facts", H200_FACTS)
check(rc == 1 and "no target of" in err and "a100:" in err and "sm 8.0" in err,
      "auto with no fitting target explains: %d %s" % (rc, err))
rc, out, err = sync(T3, os.path.join(TMP, "venv-t3"), "--target", "a100", "--facts", H200_FACTS)
check(rc == 0 and "not target a100's hardware" in err and "build host" in err,
      "a named foreign target syncs with a note: %d %s" % (rc, err))
rc, out, err = sync(T3, os.path.join(TMP, "venv-t3"), "--target", "a10")
check(rc == 2 and "a100" in err, "an unknown target gets a suggestion: %d %s" % (rc, err))

# ---- run ----------------------------------------------------------------------

rc, out, err = run("run", "--project", B, "--venv", VENV, "--python", PY, "--index-url", SIMPLE, "--cache-dir", CACHE,
                   "--", "python", "-c", "import os, sys; print(sys.prefix); print(os.environ['VIRTUAL_ENV'])")
check(rc == 0 and out.split() == [VENV, VENV], "run: python is the venv's: %d %r %s" % (rc, out, err))
check(err == "", "run says nothing when the venv already matched: %r" % err)
rc, out, err = run("run", "--project", B, "--venv", VENV, "--cache-dir", CACHE, "--", "sh", "-c", "exit 7")
check(rc == 7, "run gives the command's exit status: %d" % rc)
rc, out, err = run("run", "--project", B, "--venv", VENV, "--cache-dir", CACHE, "--", "alpha-cli")
check(rc == 0 and "alpha-cli 2.0" in out, "run finds the venv's scripts: %s" % err)
rc, out, err = run("run", "--project", B, "--venv", VENV, "--cache-dir", CACHE, "--", "no-such-command-xyz")
check(rc == 127, "run of a missing command: %d" % rc)
rc, out, err = run("run", "--project", B, "--venv", VENV)
check(rc == 2, "run without a command is a usage error")

# ---- over HTTP (downloads through the index client) -------------------------

srv, port = index_server.start(INDEX)
try:
    HP = project("proj-http", ["alpha==2.0"])
    HV = os.path.join(TMP, "venv-http")
    rc, out, err = run("sync", "--project", HP, "--venv", HV, "--python", PY, "--index-url", "http://127.0.0.1:%d/simple/" % port,
                       "--cache-dir", os.path.join(TMP, "cache-http"))
    check(rc == 0 and installed(HV) == SET_B, "sync over HTTP: %d %s" % (rc, err))
    check(lock_set(HP) == SET_B and "http://127.0.0.1:" in open(os.path.join(HP, "pylock.cpu.toml")).read(),
          "the HTTP lock names the server's URLs")
    if PIP:
        rc, out = pip(HV, "check")
        check(rc == 0, "pip check after the HTTP sync: " + out)
finally:
    srv.terminate()
    srv.wait()

# ---- doctor --env on the synced venv -----------------------------------------

rc, out, err = run("doctor", "--env", VENV, "--json")
if rc in (0, 1, 3):
    d = json.loads(out)
    check(not d.get("errors"), "doctor --env finds no error after a sync: %r" % d.get("errors"))

# ---- crash safety: kill -9 at random points ---------------------------------

CV = os.path.join(TMP, "venv-crash")
rc, out, err = sync(A, CV)
check(rc == 0, "crash venv: first sync")
t0 = time.monotonic()
sync(B, CV, "--locked", env={"GPUENV_TEST_TXN_STEP_US": "3000"})
slow = time.monotonic() - t0
sync(A, CV, "--locked")
rng = random.Random(9)
mixed = 0
outcomes = {"A": 0, "B": 0}
for trial in range(100):
    proj = B if trial % 2 == 0 else A
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    e["GPUENV_TEST_TXN_STEP_US"] = "3000"
    p = subprocess.Popen([BIN, "sync", "--project", proj, "--venv", CV, "--python", PY, "--index-url", SIMPLE,
                          "--cache-dir", CACHE, "--locked"], env=e, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0, slow * 1.1))
    p.send_signal(signal.SIGKILL)
    p.wait()
    # the next gpuenv run on the venv completes or rolls back what was left
    rc, out, err = sync(proj, CV, "--locked", "--dry-run")
    have = installed(CV)
    state = "A" if have == SET_A else "B" if have == SET_B else None
    bad = record_ok(CV)
    if state is None or bad:
        mixed += 1
        print("trial %d: mixed: %r %r %s" % (trial, have, bad[:3], err))
    else:
        outcomes[state] += 1
check(mixed == 0, "kill -9 trials: %d of 100 left a mix" % mixed)
print("kill -9 trials: %r (each then recovered by the next run)" % outcomes)
rc, out, err = sync(B, CV, "--locked")
check(rc == 0 and installed(CV) == SET_B, "a sync after the trials")
if PIP:
    rc, out = pip(CV, "check")
    check(rc == 0, "pip check after the trials: " + out)

# ---- a full disk ----------------------------------------------------------------

FULL = os.path.join(TMP, "tmpfs")
os.makedirs(FULL)
mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", FULL], capture_output=True).returncode == 0
if not mounted:
    print("note: cannot mount a tmpfs here (not root): the full-disk case is skipped")
else:
    try:
        BIGIDX = os.path.join(TMP, "index-big")
        mkwheel.build_index(BIGIDX, [{"name": "big", "version": "1.0", "sdist": False,
                                      "files": {"big/blob.bin": os.urandom(6 << 20)}},
                                     {"name": "beta", "version": "1.0", "sdist": False}])
        FV = os.path.join(FULL, "venv")
        small = project("proj-small", ["beta"])
        rc, out, err = sync(small, FV, index="file://%s/simple/" % BIGIDX)
        check(rc == 0 and installed(FV) == {"beta": "1.0"}, "tmpfs venv synced: %d %s" % (rc, err))
        before = subprocess.run(["find", FV, "-type", "f"], capture_output=True, text=True).stdout
        big = project("proj-big", ["beta", "big"])
        rc, out, err = sync(big, FV, index="file://%s/simple/" % BIGIDX)
        check(rc == 4 and ("No space left" in err or "no space" in err.lower()), "full disk: %d %s" % (rc, err))
        check(installed(FV) == {"beta": "1.0"}, "full disk: the old set stays: %r" % installed(FV))
        after = subprocess.run(["find", FV, "-type", "f"], capture_output=True, text=True).stdout
        check(sorted(x for x in before.split() if "/.gpuenv/" not in x) == sorted(x for x in after.split() if "/.gpuenv/" not in x),
              "full disk: no file of the failed sync is left in the venv")
        check(record_ok(FV) == [], "full disk: RECORD still matches")
    finally:
        subprocess.run(["umount", FULL])

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
