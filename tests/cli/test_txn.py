"""gpuenv debug txn: a venv's distributions changed as one transaction.

Installs, removals through RECORD, an upgrade, namespace folders shared by
several distributions, a file another distribution owns; an injected error
rolled back; a crash before EVERY operation of a commit (and at the named
points) recovered to exactly the old or the new set; 100 kill -9 at random
instants of a slowed-down commit, same check; a full disk (a small tmpfs,
when this machine lets the test mount one) failing the staging, the
journal or an operation in the middle of the commit: a clean error and the
old set; two transactions on one venv serialize (--wait) or the second is
refused naming the first's pid."""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPUENV_BIN"]
XY = "3.12"
SITE = "lib/python%s/site-packages" % XY
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def txn(venv, *args, env=None, **kw):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("GPUENV_TEST_TXN"):
            del e[k]
    e.update(env or {})
    return subprocess.run([BIN, "debug", "txn", "--prefix", venv, "--python-xy", XY, *args],
                          capture_output=True, text=True, env=e, timeout=120, **kw)


def recover(venv, env=None):
    r = subprocess.run([BIN, "debug", "txn", "--prefix", venv, "--recover", "--json"],
                       capture_output=True, text=True, timeout=120, env=env)
    check(r.returncode == 0, "recover: exit %d %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout)["recovery"] if r.returncode == 0 else {}


def make_venv(path):
    os.makedirs(os.path.join(path, SITE))
    os.makedirs(os.path.join(path, "bin"))
    return path


UP = {"purelib": "", "platlib": "", "scripts": "../../../bin/", "data": "../../../",
      "headers": "../../../include/site/python%s/" % XY}


def make_stage(root, name, ver, files):
    """A stage folder as gpuenv_wheel_stage leaves one: KEY/PATH files and
    NAME-VER.dist-info (METADATA, RECORD with paths relative to the site)."""
    stage = os.path.join(root, "%s-%s" % (name, ver))
    di = "%s-%s.dist-info" % (name.replace("-", "_"), ver)
    rows = []
    for rel, content in files.items():
        key, path = rel.split("/", 1)
        full = os.path.join(stage, key, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content)
        if key == "scripts":
            os.chmod(full, 0o755)
        rows.append(UP[key] + path + ",,")
    os.makedirs(os.path.join(stage, "purelib", di))
    with open(os.path.join(stage, "purelib", di, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver))
    rows += [di + "/METADATA,,", di + "/RECORD,,"]
    with open(os.path.join(stage, "purelib", di, "RECORD"), "w") as f:
        f.write("\n".join(rows) + "\n")
    return stage


def snapshot(venv):
    """Every file (with content and exec bit) and folder but .gpuenv."""
    out = {}
    for d, subdirs, files in os.walk(venv):
        rel = os.path.relpath(d, venv)
        if rel == ".":
            subdirs[:] = [s for s in subdirs if s != ".gpuenv"]
        else:
            out[rel + "/"] = "dir"
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, venv)] = (fh.read(), os.stat(p).st_mode & 0o111)
    return out


def txn_clean(venv):
    t = os.path.join(venv, ".gpuenv", "txn")
    return not any(os.path.exists(os.path.join(t, x)) for x in ("journal", "stage", "trash"))


FOO1 = {"purelib/foo/__init__.py": "v1", "purelib/foo/core.py": "core1",
        "purelib/foo/sub/x.py": "x1", "scripts/foo": "#!/bin/sh\necho 1\n"}
FOO2 = {"purelib/foo/__init__.py": "v2", "purelib/foo/new.py": "new2",
        "scripts/foo": "#!/bin/sh\necho 2\n", "headers/foo.h": "int foo;"}
CUBLAS = {"platlib/nvidia/__init__.py": "", "platlib/nvidia/cublas/lib/libcublas.so": "cublas"}
CUDNN = {"platlib/nvidia/__init__.py": "", "platlib/nvidia/cudnn/lib/libcudnn.so": "cudnn"}
BAR = {"purelib/foo/new.py": "bar's", "data/share/bar/bar.txt": "bar"}

work = tempfile.mkdtemp(prefix="gpuenv-test-txn-")
try:
    stages = os.path.join(work, "stages")
    S = {
        "foo1": make_stage(stages, "foo", "1.0", FOO1),
        "foo2": make_stage(stages, "foo", "2.0", FOO2),
        "cublas": make_stage(stages, "nvidia-cublas-cu12", "12.0", CUBLAS),
        "cudnn": make_stage(stages, "nvidia-cudnn-cu12", "9.0", CUDNN),
        "bar": make_stage(stages, "bar", "1.0", BAR),
    }

    # ---- install, remove, upgrade, merge, replace ---------------------------
    v = make_venv(os.path.join(work, "basic"))
    empty = snapshot(v)
    r = txn(v, "--install", S["foo1"], "--json")
    check(r.returncode == 0, "install foo: exit %d %s" % (r.returncode, r.stderr))
    c = json.loads(r.stdout)["commit"] if r.returncode == 0 else {}
    check(c.get("renames") == 3, "install foo: foo/, the dist-info, bin/foo: %r" % c)
    s = snapshot(v)
    check(s.get(SITE + "/foo/sub/x.py") == (b"x1", 0), "foo/sub/x.py installed")
    check(s.get("bin/foo", (0, 0))[1] == 0o111, "bin/foo keeps its exec bit")
    check(txn_clean(v), "nothing left in .gpuenv/txn after a commit")
    check(os.path.exists(S["foo1"]), "the stage given is copied, not taken")

    # a no-op: no journal written (the folder is not even touched)
    jdir = os.path.join(v, ".gpuenv", "txn")
    before = os.stat(jdir).st_mtime_ns
    r = txn(v)
    check(r.returncode == 0 and "nothing to do" in r.stdout, "no-op: %s %s" % (r.stdout, r.stderr))
    check(os.stat(jdir).st_mtime_ns == before, "a no-op writes nothing in .gpuenv/txn")

    # upgrade in one transaction, with a byte-compiled file beside
    os.makedirs(os.path.join(v, SITE, "foo", "__pycache__"))
    with open(os.path.join(v, SITE, "foo", "__pycache__", "core.cpython-312.pyc"), "w") as f:
        f.write("pyc")
    r = txn(v, "--remove", "foo", "--install", S["foo2"], "--json")
    check(r.returncode == 0, "upgrade: exit %d %s" % (r.returncode, r.stderr))
    s = snapshot(v)
    check(s.get(SITE + "/foo/__init__.py") == (b"v2", 0), "upgrade: new foo")
    check(not any("core" in k or "foo/sub" in k or "foo-1.0" in k for k in s), "upgrade: old files gone")
    check(s.get("include/site/python3.12/foo.h") == (b"int foo;", 0), "headers: made, moved in")
    check(s.get("bin/foo", (b"",))[0] == b"#!/bin/sh\necho 2\n", "upgrade: new script")

    # namespace folder shared by two, in one transaction; then one removed
    r = txn(v, "--install", S["cublas"], "--install", S["cudnn"])
    check(r.returncode == 0, "nvidia pair: exit %d %s" % (r.returncode, r.stderr))
    s = snapshot(v)
    check(s.get(SITE + "/nvidia/cublas/lib/libcublas.so") == (b"cublas", 0) and
          s.get(SITE + "/nvidia/cudnn/lib/libcudnn.so") == (b"cudnn", 0), "nvidia/ merged")
    r = txn(v, "--remove", "nvidia-cublas-cu12", "--json")
    check(r.returncode == 0, "remove cublas: exit %d %s" % (r.returncode, r.stderr))
    s = snapshot(v)
    check(not any("cublas" in k for k in s), "cublas gone")
    check(SITE + "/nvidia/cudnn/lib/libcudnn.so" in s, "cudnn kept in nvidia/")

    # a file another distribution owns is replaced
    r = txn(v, "--install", S["bar"])
    check(r.returncode == 0, "bar: exit %d %s" % (r.returncode, r.stderr))
    check(snapshot(v).get(SITE + "/foo/new.py") == (b"bar's", 0), "bar replaced foo/new.py")

    # everything out again: the venv as it began
    r = txn(v, "--remove", "bar", "--remove", "foo", "--remove", "nvidia-cudnn-cu12")
    check(r.returncode == 0, "remove all: exit %d %s" % (r.returncode, r.stderr))
    s = snapshot(v)
    # the scheme's headers folder the upgrade made stays (as pip leaves it)
    made = {"include/": "dir", "include/site/": "dir", "include/site/python3.12/": "dir"}
    check(s == dict(empty, **made), "remove all: back to the empty venv, left: %r" %
          sorted(set(s) - set(empty) - set(made)))

    # refusals: not installed, a RECORD leaving the venv
    r = txn(v, "--remove", "nope")
    check(r.returncode == 4 and "nope is not installed" in r.stderr, "unknown name: %s" % r.stderr)
    txn(v, "--install", S["foo1"])
    rec = os.path.join(v, SITE, "foo-1.0.dist-info", "RECORD")
    with open(rec, "a") as f:
        f.write("../../../../../etc/passwd,,\n")
    before = snapshot(v)
    r = txn(v, "--remove", "foo")
    check(r.returncode == 4 and "outside the venv" in r.stderr and "RECORD:" in r.stderr,
          "hostile RECORD: %s" % r.stderr)
    check(snapshot(v) == before and txn_clean(v), "hostile RECORD: nothing changed")

    # a torch-sized package goes with a few renames: every folder it owns
    # completely (byte-compiled files included) moves whole
    big = make_stage(stages, "big", "1.0", {"platlib/big/m%d/s%d/f%d.py" % (d // 20, d, f): "x"
                                            for d in range(100) for f in range(30)})
    r = txn(v, "--install", big, "--move")
    check(r.returncode == 0, "big: exit %d %s" % (r.returncode, r.stderr))
    for d in range(0, 100, 7):
        pc = os.path.join(v, SITE, "big", "m%d" % (d // 20), "s%d" % d, "__pycache__")
        os.makedirs(pc)
        for f in range(3):
            open(os.path.join(pc, "f%d.cpython-312.pyc" % f), "w").close()
            open(os.path.join(pc, "f%d.cpython-311.opt-2.pyc" % f), "w").close()
    r = txn(v, "--remove", "big", "--json")
    c = json.loads(r.stdout)["commit"] if r.returncode == 0 else {}
    check(c.get("renames") == 2 and c.get("removed_files") == 3000 + 2 + 15 * 6,
          "big: 3000 files and their .pyc in 2 renames: %r %s" % (c, r.stderr))
    check(not os.path.exists(os.path.join(v, SITE, "big")), "big: gone")

    # ---- the crash matrix -----------------------------------------------------
    def old_venv(path):
        make_venv(path)
        for st in ("foo1", "cublas"):
            r = txn(path, "--install", S[st])
            assert r.returncode == 0, r.stderr
        return path

    NEW = ["--remove", "foo", "--remove", "nvidia-cublas-cu12", "--install", S["foo2"],
           "--install", S["cudnn"], "--install", S["bar"]]
    template = old_venv(os.path.join(work, "template"))
    old = snapshot(template)
    ref = os.path.join(work, "ref")
    shutil.copytree(template, ref, symlinks=True)
    r = txn(ref, *NEW, "--json")
    check(r.returncode == 0, "reference commit: %s" % r.stderr)
    nops = json.loads(r.stdout)["commit"]["ops"]
    new = snapshot(ref)
    check(old != new and nops >= 8, "the reference changes the venv (%d ops)" % nops)

    def trial(name, env, expect_rc=137):
        venv = os.path.join(work, name)
        shutil.copytree(template, venv, symlinks=True)
        r = txn(venv, *NEW, env=env)
        check(r.returncode == expect_rc, "%s: exit %d, wanted %d: %s" %
              (name, r.returncode, expect_rc, r.stderr))
        rep = recover(venv)
        s = snapshot(venv)
        check(s == old or s == new, "%s: after recovery the venv is neither the old set nor "
              "the new one: %r" % (name, sorted(set(s) ^ set(new))))
        check(txn_clean(venv), "%s: the transaction area is empty after recovery" % name)
        shutil.rmtree(venv)
        return s == new, rep

    # every N from 0 to the number of ops: committed, so rolled forward
    for n in range(nops + 1):
        was_new, rep = trial("crash-%d" % n, {"GPUENV_TEST_TXN_CRASH_AT": str(n)})
        check(was_new and rep.get("recovered") and rep.get("rolled_forward"),
              "crash before op %d: rolled forward to the new set (%r)" % (n, rep))
    was_new, rep = trial("crash-half", {"GPUENV_TEST_TXN_CRASH_AT": "journal-half"})
    check(not was_new and rep.get("recovered") and not rep.get("rolled_forward"),
          "a torn journal: rolled back to the old set (%r)" % rep)
    for point in ("after-journal", "before-cleanup"):
        was_new, rep = trial("crash-" + point, {"GPUENV_TEST_TXN_CRASH_AT": point})
        check(was_new, "crash at %s: the new set" % point)
    # a damaged journal: an error that says what to do, the venv untouched
    venv = os.path.join(work, "damaged")
    shutil.copytree(template, venv, symlinks=True)
    r = txn(venv, *NEW, env={"GPUENV_TEST_TXN_CRASH_AT": str(nops // 2)})
    jp = os.path.join(venv, ".gpuenv", "txn", "journal")
    with open(jp) as f:
        text = f.read()
    with open(jp, "w") as f:
        f.write(text.replace("trash/0", "trash/9", 1))
    before = snapshot(venv)
    r = subprocess.run([BIN, "debug", "txn", "--prefix", venv, "--recover"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 4 and "damaged transaction journal" in r.stderr and
          "does not match" in r.stderr and "recreate the venv" in r.stderr,
          "damaged journal: %s" % r.stderr)
    check(snapshot(venv) == before and os.path.exists(jp), "damaged journal: nothing touched")
    r = txn(venv, "--remove", "foo")
    check(r.returncode == 4 and "damaged transaction journal" in r.stderr,
          "a transaction on a venv with a damaged journal is refused: %s" % r.stderr)
    shutil.rmtree(venv)

    # an error in the middle of the commit: rolled back in the process
    for n in (0, nops // 2, nops - 1):
        was_new, rep = trial("fail-%d" % n, {"GPUENV_TEST_TXN_FAIL_AT": str(n)}, expect_rc=4)
        check(not was_new and not rep.get("recovered"), "fail at op %d: old set, nothing pending" % n)

    # 100 kill -9 at random instants of a commit slowed to 3 ms per operation
    # (the kill also lands before the lock or after the cleanup, where the
    # old or the new set is the answer too)
    t0 = time.monotonic()
    probe = os.path.join(work, "probe")
    shutil.copytree(template, probe, symlinks=True)
    txn(probe, *NEW, env={"GPUENV_TEST_TXN_STEP_US": "3000"})
    span = time.monotonic() - t0
    shutil.rmtree(probe)
    rng = random.Random(9)
    landed = {"old": 0, "new": 0, "mid": 0, "recovery killed": 0}
    # at least 100 trials, and on until 10 of them landed inside a commit: on
    # a loaded machine (a parallel test run) one process start can outlast
    # the measured span, and fewer kills land mid-commit; the trials go on
    # (up to 400) rather than the check failing for the machine's load
    for i in range(400):
        if i >= 100 and landed["mid"] >= 10:
            break
        venv = os.path.join(work, "kill-%d" % i)
        shutil.copytree(template, venv, symlinks=True)
        e = dict(os.environ, GPUENV_TEST_TXN_STEP_US="3000")
        p = subprocess.Popen([BIN, "debug", "txn", "--prefix", venv, "--python-xy", XY, *NEW],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e)
        time.sleep(rng.uniform(0, span * 1.1))
        p.send_signal(signal.SIGKILL)
        p.wait()
        if os.path.exists(os.path.join(venv, ".gpuenv", "txn", "journal")):
            landed["mid"] += 1
            if i % 2:
                # the recovery killed too, somewhere in its roll forward
                p = subprocess.Popen([BIN, "debug", "txn", "--prefix", venv, "--recover"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e)
                time.sleep(rng.uniform(0, span * 0.5))
                p.send_signal(signal.SIGKILL)
                p.wait()
                landed["recovery killed"] += 1
        recover(venv)
        s = snapshot(venv)
        if not check(s == old or s == new, "kill %d: neither old nor new: %r" %
                     (i, sorted(set(s) ^ set(new)))):
            break
        landed["new" if s == new else "old"] += 1
        check(txn_clean(venv), "kill %d: the transaction area is empty" % i)
        shutil.rmtree(venv)
    print("kill -9 trials: %(old)d old, %(new)d new, %(mid)d inside a commit, "
          "%(recovery killed)d recoveries killed too" % landed)
    check(landed["mid"] >= 10, "too few kills landed inside a commit (%r)" % landed)

    # ---- two transactions on one venv ---------------------------------------
    v2 = os.path.join(work, "locked")
    shutil.copytree(template, v2, symlinks=True)
    e = dict(os.environ, GPUENV_TEST_TXN_STEP_US="150000")
    first = subprocess.Popen([BIN, "debug", "txn", "--prefix", v2, "--python-xy", XY, *NEW],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    journal = os.path.join(v2, ".gpuenv", "txn", "journal")
    deadline = time.monotonic() + 30
    while not os.path.exists(journal) and time.monotonic() < deadline:
        time.sleep(0.01)
    r = txn(v2, "--remove", "foo")
    check(r.returncode == 4 and "another gpuenv is changing" in r.stderr and
          "(pid %d)" % first.pid in r.stderr, "second without --wait: %s" % r.stderr)
    second = txn(v2, "--install", S["foo1"], "--wait", "--json")
    first_out, first_err = first.communicate(timeout=60)
    check(first.returncode == 0, "first: %s" % first_err)
    # the second waited, then found foo 2.0 there and installed over it
    check(second.returncode == 0, "second with --wait: %s" % second.stderr)
    s = snapshot(v2)
    check(s.get(SITE + "/foo/core.py") == (b"core1", 0) and
          SITE + "/nvidia/cudnn/lib/libcudnn.so" in s, "both transactions applied, one after the other")

    # ---- real wheels, staged by the wheel part, pip as the judge -------------
    sys.path.insert(0, os.path.join(os.environ.get("GPUENV_SRC", "."), "tests", "fixtures"))
    import mkwheel

    def find_pip():
        for py in (sys.executable, shutil.which("python3")):
            if not py:
                continue
            r = subprocess.run([py, "-m", "pip", "--version"], capture_output=True, text=True)
            if r.returncode == 0:
                major, minor = r.stdout.split()[1].split(".")[:2]
                if (int(major), int(minor)) >= (22, 3):  # pip --python
                    return py
        return None

    has_stage = subprocess.run([BIN, "debug", "wheel-install", "--help"],
                               capture_output=True).returncode == 0
    pip_py = find_pip()
    if not has_stage or not pip_py:
        print("SKIP real wheels: %s" % ("no debug wheel-install in this build" if not has_stage
                                        else "no pip >= 22.3 (pip --python) on this machine"))
    else:
        rv = os.path.join(work, "realvenv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", rv], check=True)
        rxy = "%d.%d" % sys.version_info[:2]
        wheels = {}
        for ver in ("1.0", "2.0"):
            main_py = "def main():\n    print('e2e %s')\n" % ver
            d = mkwheel.make_wheel(os.path.join(work, "wheels"), "e2e-pkg", ver,
                                   entry_points={"console_scripts": {"e2e-run": "e2e_pkg.cli:main"}},
                                   files={"e2e_pkg/cli.py": main_py, "e2e_ns/part%s.py" % ver[0]: "x = 1\n"})
            st = os.path.join(work, "realstage-" + ver)
            r = subprocess.run([BIN, "debug", "wheel-install", "--stage", st, "--python-xy", rxy,
                                "--python", os.path.join(rv, "bin", "python"), d.path],
                               capture_output=True, text=True)
            check(r.returncode == 0, "wheel-install --stage %s: %s" % (ver, r.stderr))
            wheels[ver] = st

        def rtxn(*args, env=None):
            return subprocess.run([BIN, "debug", "txn", "--prefix", rv, "--python-xy", rxy, *args],
                                  capture_output=True, text=True, env=dict(os.environ, **(env or {})))

        def pip(*args):
            return subprocess.run([pip_py, "-m", "pip", "--python", os.path.join(rv, "bin", "python"),
                                   "--disable-pip-version-check", *args],
                                  capture_output=True, text=True, timeout=120)

        def runs(ver):
            r = subprocess.run([os.path.join(rv, "bin", "e2e-run")], capture_output=True, text=True)
            return r.returncode == 0 and r.stdout.strip() == "e2e " + ver

        pristine = snapshot(rv)
        r = rtxn("--install", wheels["1.0"])
        check(r.returncode == 0, "real 1.0: %s" % r.stderr)
        check(runs("1.0"), "real 1.0: the entry point runs")
        r = pip("list", "--format", "json")
        check(r.returncode == 0 and {"name": "e2e-pkg", "version": "1.0"} in json.loads(r.stdout or "[]"),
              "pip list sees e2e-pkg 1.0: %s %s" % (r.stdout, r.stderr))
        # the upgrade, killed halfway, recovered: 2.0, pip agrees
        r = rtxn("--remove", "e2e-pkg", "--install", wheels["2.0"],
                 env={"GPUENV_TEST_TXN_CRASH_AT": "2"})
        check(r.returncode == 137, "real upgrade crashed: %d %s" % (r.returncode, r.stderr))
        recover(rv)
        check(runs("2.0"), "real upgrade recovered: 2.0 runs")
        r = pip("check")
        check(r.returncode == 0, "pip check after the recovered upgrade: %s %s" % (r.stdout, r.stderr))
        site = os.path.join(rv, "lib", "python" + rxy, "site-packages")
        check(not os.path.exists(os.path.join(site, "e2e_ns", "part1.py")) and
              os.path.exists(os.path.join(site, "e2e_ns", "part2.py")), "the old version's file went")
        # pip uninstalls what the transaction installed: the venv as it was
        r = pip("uninstall", "-y", "e2e-pkg")
        check(r.returncode == 0, "pip uninstall: %s %s" % (r.stdout, r.stderr))
        s = snapshot(rv)
        check(s == pristine, "after pip uninstall, left: %r" % sorted(set(s) ^ set(pristine)))

    # ---- a full disk ----------------------------------------------------------
    mnt = os.path.join(work, "tmpfs")
    os.makedirs(mnt)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=400", "tmpfs", mnt],
                             capture_output=True, text=True).returncode == 0
    if not mounted:
        print("SKIP full disk: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)")
    else:
        try:
            def fresh():
                for x in os.listdir(mnt):
                    p = os.path.join(mnt, x)
                    shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
                return old_venv(os.path.join(mnt, "venv"))

            # the staging fails: a stage folder larger than the disk
            venv = fresh()
            big = make_stage(os.path.join(work, "bigstage"), "big", "1.0",
                             {"purelib/big/blob.bin": "x" * (2 << 20)})
            r = txn(venv, "--install", big)
            check(r.returncode == 4 and "No space left" in r.stderr, "staging on a full disk: %s"
                  % r.stderr)
            check(snapshot(venv) == old and txn_clean(venv), "staging failed: the old set, no leftovers")

            # the journal cannot be written: the stages already on the disk
            # (moved in), the data blocks filled
            venv = fresh()
            local = os.path.join(mnt, "stages")
            for st in ("foo2", "cudnn", "bar"):
                shutil.copytree(S[st], os.path.join(local, os.path.basename(S[st])))
            new_local = [a if not a.startswith(stages) else os.path.join(local, os.path.basename(a))
                         for a in NEW]
            filler = os.path.join(mnt, "filler")
            try:
                with open(filler, "wb") as f:
                    while True:
                        f.write(b"\0" * 4096)
                        f.flush()
            except OSError:
                pass
            r = txn(venv, *new_local, "--move")
            check(r.returncode == 4 and "No space left" in r.stderr and "journal" in r.stderr,
                  "journal on a full disk: %s" % r.stderr)
            check(snapshot(venv) == old and txn_clean(venv), "journal failed: the old set")

            # an operation in the middle of the commit fails (no inode left
            # for a folder the commit makes): rolled back
            mid = 0
            for free in range(0, 8):
                venv = fresh()
                local = os.path.join(mnt, "stages")
                for st in ("foo2", "cudnn", "bar"):
                    shutil.copytree(S[st], os.path.join(local, os.path.basename(S[st])))
                fill = os.path.join(mnt, "inodes")
                os.makedirs(fill)
                k = 0
                try:
                    while True:
                        open(os.path.join(fill, str(k)), "w").close()
                        k += 1
                except OSError:
                    pass
                # staging makes .gpuenv/txn/stage; the commit the trash, the
                # journal and include/site/python3.12 (3 folders)
                for j in range(min(free, k)):
                    os.unlink(os.path.join(fill, str(k - 1 - j)))
                r = txn(venv, *new_local, "--move")
                s = snapshot(venv)
                if r.returncode == 0:
                    check(s == new, "free %d: committed: the new set" % free)
                else:
                    check(r.returncode == 4 and "No space left" in r.stderr,
                          "free %d: %s" % (free, r.stderr))
                    check(s == old, "free %d: failed: the old set" % free)
                    mid += "committing operation" in r.stderr
                check(txn_clean(venv), "free %d: no leftovers" % free)
            check(mid >= 1, "no inode count made an operation of the commit fail")
        finally:
            subprocess.run(["umount", mnt])
finally:
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
