"""Memory running out anywhere in export, lock, sync, tree, doctor, preflight
and labels (issues 20 and 22 item 12): each verb is
run with every allocation of its context failing from the Nth on
(GPUENV_TEST_ALLOC_FAIL=N, cli/alloc_inject.c, the sanitizer build), for a
spread of N from 1 to the number of allocations a whole run makes.  Each run
must either succeed with the complete output (the same as a run without
failures) or exit 4 saying "out of memory", with no file written (export:
no -o file, no requirements beside the Dockerfile; lock: no pylock; sync: no
package installed, a venv left as it was) and no crash (a sanitizer report
or a signal fails the run).

The verbs run on a fixture index (tests/fixtures/mkwheel.py, file://) and a
project with one CPU target, so no network and no GPU is involved."""
import glob
import os
import platform
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-alloc-sweep-")
PY = os.path.realpath(sys.executable)
PYXY = "%d.%d" % sys.version_info[:2]
# values of N per verb; GPUENV_SWEEP_POINTS=all tries every N (minutes)
POINTS = os.environ.get("GPUENV_SWEEP_POINTS", "14")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, fail_at=None, count_file=None, cwd=None):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    e.pop("GPUENV_TEST_ALLOC_FAIL", None)
    e["ASAN_OPTIONS"] = "detect_leaks=0:" + e.get("ASAN_OPTIONS", "")
    if fail_at is not None:
        e["GPUENV_TEST_ALLOC_FAIL"] = str(fail_at)
    if count_file:
        e["GPUENV_TEST_ALLOC_COUNT"] = count_file
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=300)
    return p.returncode, p.stdout, p.stderr


lib, ver = platform.libc_ver()
a, b = (ver.split(".") + ["0"])[:2] if lib == "glibc" else ("2", "17")
PLATFORM = "manylinux_%s_%s_%s" % (a, b, platform.machine())

INDEX = os.path.join(TMP, "index")
mkwheel.build_index(INDEX, [
    {"name": "alpha", "version": "1.0", "requires": ["beta>=1.0"], "sdist": False},
    {"name": "beta", "version": "1.0", "sdist": False},
    {"name": "beta", "version": "2.0", "sdist": False, "files": {"beta/data.txt": "beta\n" * 20}},
])
SIMPLE = "file://" + os.path.join(INDEX, "simple") + "/"
CACHE = os.path.join(TMP, "cache")
BASE = os.path.join(TMP, "base")
os.makedirs(BASE)
with open(os.path.join(BASE, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "sweep"\nversion = "0.1"\ndependencies = ["alpha"]\n\n'
            '[tool.gpuenv.targets.cpu]\ngpu = "none"\npython = "%s"\nplatform = "%s"\n' % (PYXY, PLATFORM))
LOCK_ARGS = ["--index-url", SIMPLE, "--cache-dir", CACHE]


def fresh(name, with_lock):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(BASE, d)
    if with_lock:
        shutil.copy(GOOD_LOCK, d)
    return d


def files(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "**"), recursive=True))


def spread(total):
    """1..5, then about POINTS values spread geometrically up to total."""
    if POINTS == "all":
        return list(range(1, total + 1))
    ns = set(range(1, min(total, 5) + 1))
    k, x = max(int(POINTS) - len(ns), 1), 5.0
    step = (total / 5.0) ** (1.0 / k) if total > 5 else 1
    for _ in range(k):
        x *= step
        ns.add(min(total, int(x)))
    return sorted(ns)


# the baseline: a lock made without failures
LOCKED = os.path.join(TMP, "locked")
shutil.copytree(BASE, LOCKED)
rc, out, err = run(["lock", "--project", LOCKED, *LOCK_ARGS])
GOOD_LOCK = os.path.join(LOCKED, "pylock.cpu.toml")
check(rc == 0 and os.path.exists(GOOD_LOCK), "baseline lock: %d %s" % (rc, err))


ONLY = sys.argv[1:]


def sweep(name, args_of, with_lock, after):
    """Only the sweeps named on the command line, when some are.
    Run args_of(dir) once to count its allocations and get the good
    output, then with failures from N on; after(dir, rc, out, err) checks what
    a run left behind."""
    if ONLY and name not in ONLY:
        return
    d = fresh(name + "-count", with_lock)
    cnt = os.path.join(TMP, name + ".count")
    rc0, out0, err0 = run(args_of(d), count_file=cnt)
    check(rc0 == 0, "%s without failures: %d %s" % (name, rc0, err0))
    total = int(open(cnt).read()) if os.path.exists(cnt) else 0
    check(total > 10, "%s: %d allocations counted" % (name, total))
    before = None
    for n in spread(total):
        d = fresh(name, with_lock)
        before = files(d)
        rc, out, err = run(args_of(d), fail_at=n)
        what = "%s, allocations failing from %d of %d" % (name, n, total)
        if rc < 0 or "Sanitizer" in err or "runtime error" in err:
            check(False, "%s: crashed (%d): %s" % (what, rc, err[-600:]))
            continue
        if rc == 0:
            check(after(d, before, True, out, out0), "%s: succeeded, but not completely: %s" % (what, out[-300:]))
            continue
        check(rc == 4 and "out of memory" in err, "%s: exit %d without 'out of memory': %s" % (what, rc, err[-400:]))
        # issue 22 item 12: a failure never reads "success", and the message
        # says what was being done ("out of memory" alone says nothing)
        check("success" not in err, "%s: a failure printed 'success': %s" % (what, err[-400:]))
        check(not any(line.rstrip().endswith(": out of memory") and line.count(":") <= 1
                      for line in err.splitlines()),
              "%s: 'out of memory' without what was being done: %s" % (what, err[-400:]))
        check(after(d, before, False, out, out0), "%s: failed, and left files behind: %s" % (what, files(d)))


def same_files(d, before, ok, out, out0):
    return ok or files(d) == before


# export: requirements to a file, and a Dockerfile with its requirements
def export_reqs(d):
    return ["export", "--project", d, "-o", os.path.join(d, "requirements.txt")]


def export_reqs_after(d, before, ok, out, out0):
    if not ok:
        return files(d) == before
    want = open(GOOD_LOCK).read().count("[[packages]]")
    text = open(os.path.join(d, "requirements.txt")).read()
    return text.count("--hash=sha256:") >= want and text.count("==") == want


sweep("export-requirements", export_reqs, True, export_reqs_after)


def export_docker(d):
    return ["export", "--project", d, "--format", "dockerfile", "--base", "registry.example/python-base:1",
            "--trust-base", "-o", os.path.join(d, "Dockerfile.cpu")]


def export_docker_after(d, before, ok, out, out0):
    if not ok:
        return files(d) == before
    df = open(os.path.join(d, "Dockerfile.cpu")).read()
    return df.rstrip().endswith("USER 10001:10001") and "FROM " in df and \
        os.path.exists(os.path.join(d, "requirements.cpu.txt"))


sweep("export-dockerfile", export_docker, True, export_docker_after)


# the Dockerfile on standard output: the whole text or nothing
def export_docker_stdout(d):
    return ["export", "--project", d, "--format", "dockerfile", "--base", "registry.example/python-base:1",
            "--trust-base"]


sweep("export-dockerfile-stdout", export_docker_stdout, True,
      lambda d, before, ok, out, out0: out == out0 if ok else out == "")


# lock: the pylock written whole, or not at all
def lock_after(d, before, ok, out, out0):
    p = os.path.join(d, "pylock.cpu.toml")
    if not ok:
        return not os.path.exists(p)
    return open(p).read() == open(GOOD_LOCK).read()


sweep("lock", lambda d: ["lock", "--project", d, *LOCK_ARGS], False, lock_after)


# sync: the venv holds the lock, or nothing of it
def sync_args(d):
    return ["sync", "--project", d, "--venv", os.path.join(d, "venv"), "--python", PY, "--locked", *LOCK_ARGS]


def sync_after(d, before, ok, out, out0):
    dists = glob.glob(os.path.join(d, "venv", "lib", "python*", "site-packages", "*.dist-info"))
    names = sorted(os.path.basename(x).split("-")[0].lower() for x in dists)
    if ok:
        return names == ["alpha", "beta"] and "installed 2 packages" in out
    # one transaction: nothing of the lock, or (a failure after the commit
    # point, in the transaction's clean-up) all of it; never a mix
    return names in ([], ["alpha", "beta"])


sweep("sync", sync_args, True, sync_after)

# issue 22 item 12: the verbs that read a lock or a machine's facts; their
# output is on standard output: the whole text or nothing
FACTS = os.path.join(SRC, "tests", "fixtures", "doctor", "h200-2026-11-29", "facts.json")


def whole_or_nothing(d, before, ok, out, out0):
    return out == out0 if ok else out == "" and files(d) == before


sweep("tree", lambda d: ["tree", "--project", d], True, whole_or_nothing)
sweep("doctor", lambda d: ["doctor", "--facts", FACTS], False, whole_or_nothing)
sweep("preflight-lock", lambda d: ["preflight", "--lock", os.path.join(d, "pylock.cpu.toml"), "--facts", FACTS],
      True, whole_or_nothing)
sweep("preflight-cuda", lambda d: ["preflight", "--cuda", "12.4", "--facts", FACTS], False, whole_or_nothing)
sweep("labels", lambda d: ["labels", "--facts", FACTS, "--project", d, "-o", os.path.join(d, "labels.txt")],
      True, lambda d, before, ok, out, out0: os.path.exists(os.path.join(d, "labels.txt")) if ok
      else files(d) == before)

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
