"""gpuenv venv and gpuenv debug pythons against a real interpreter (the one
running this test): the venv works as `python3 -m venv --without-pip`'s
does (sys.prefix, sys.base_prefix, site-packages, the pyvenv.cfg keys and
the layout), its activate scripts work (bash; zsh, fish, csh when
installed), pip sees an empty environment, a second run is a no-op, a venv
of another Python is refused, --clear, a half-made venv is completed, and it
takes a few milliseconds."""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPUENV_BIN"]
PY = sys.executable
failures = []


def run(*args, env=None, cwd=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def cfg(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, sep, v = line.partition("=")
            if sep:
                out[k.strip()] = v.strip()
    return out


def layout(root):
    """{relative path: 'd' | 'f' | 'l -> target'} (Activate.ps1 and venv's
    include/pythonX.Y aside: gpuenv writes neither)"""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if rel == "bin/Activate.ps1" or rel.startswith("include/python"):
                continue
            out[rel] = "l -> " + os.readlink(p) if os.path.islink(p) else "d" if os.path.isdir(p) else "f"
    return out


tmp = tempfile.mkdtemp(prefix="gpuenv-venv-")
try:
    venv = os.path.join(tmp, "v")
    r = run("--json", "venv", venv, "--python", PY)
    check(r.returncode == 0, "venv: exit %d: %s" % (r.returncode, r.stderr))
    j = json.loads(r.stdout) if r.returncode == 0 else {}
    check(j.get("action") == "created" and j.get("venv") == venv, "venv --json: %r" % j)
    vpy = os.path.join(venv, "bin", "python")

    # the interpreter sees a venv: prefix, base prefix, site-packages
    base = subprocess.run([PY, "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                          text=True).stdout.strip()
    r = subprocess.run([vpy, "-c", "import sys, site; print(sys.prefix); print(sys.base_prefix); "
                        "print(sys.path); print(site.getsitepackages())"], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 4, "venv python runs: %r %r" % (r.stdout, r.stderr))
    if len(lines) == 4:
        check(lines[0] == venv, "sys.prefix %r, want %r" % (lines[0], venv))
        check(lines[1] == base, "sys.base_prefix %r, want %r" % (lines[1], base))
        xy = "%d.%d" % sys.version_info[:2]
        site = os.path.join(venv, "lib", "python" + xy, "site-packages")
        check(site in eval(lines[2]), "site-packages on sys.path: %s" % lines[2])
        check(j.get("site_packages") == site, "site_packages in --json: %r" % j.get("site_packages"))

    # the install scheme is the venv's own (sysconfig), headers where pip puts them
    r = subprocess.run([vpy, "-c", "import json, sys, sysconfig; p = sysconfig.get_paths(); "
                        "print(json.dumps({k: p[k] for k in ('purelib', 'platlib', 'scripts', 'data')}))"],
                       capture_output=True, text=True)
    want = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr}
    want["headers"] = os.path.join(venv, "include", "site", "python%d.%d" % sys.version_info[:2])
    want["python"] = vpy
    check(j.get("scheme") == want, "scheme %r, the venv's %r" % (j.get("scheme"), want))

    # what python3 -m venv --without-pip writes for the same interpreter
    ref = os.path.join(tmp, "ref")
    subprocess.run([PY, "-m", "venv", "--without-pip", ref], check=True)
    mine, theirs = cfg(os.path.join(venv, "pyvenv.cfg")), cfg(os.path.join(ref, "pyvenv.cfg"))
    check(sorted(mine) == sorted(theirs), "pyvenv.cfg keys %r, venv's %r" % (sorted(mine), sorted(theirs)))
    for k in ("home", "include-system-site-packages", "version", "executable"):
        # home: venv's is the folder of the path it was run as; gpuenv's that of the binary
        a, b = mine.get(k), theirs.get(k)
        if k == "home":
            a, b = os.path.realpath(a or ""), os.path.realpath(b or "")
        check(a == b, "pyvenv.cfg %s = %r, venv's %r" % (k, mine.get(k), theirs.get(k)))
    lm, lt = layout(venv), layout(ref)
    check(sorted(lm) == sorted(lt), "layout: only gpuenv %r, only venv %r" %
          (sorted(set(lm) - set(lt)), sorted(set(lt) - set(lm))))
    for rel in ("lib64", "bin/python3", "lib/python%d.%d/site-packages" % sys.version_info[:2]):
        check(lm.get(rel, "")[:1] == lt.get(rel, "")[:1], "%s: %r, venv's %r" % (rel, lm.get(rel), lt.get(rel)))
    real = os.path.realpath(vpy)
    check(real == os.path.realpath(os.path.join(ref, "bin", "python")), "bin/python -> %s" % real)

    # activate: bash (zsh, fish and csh when installed)
    env = {"PATH": "/usr/bin:/bin", "PYTHONHOME": "/nonexistent/home", "HOME": tmp}
    show = ('echo "$VIRTUAL_ENV"; command -v python; echo "$PS1"; python -c "import sys; print(sys.prefix)"; '
            'deactivate; echo "$PATH"; echo "${VIRTUAL_ENV-unset}"; echo "$PS1"; echo "${PYTHONHOME-unset}"; '
            'type deactivate >/dev/null 2>&1 && echo still || echo gone')
    want = [venv, vpy, "(v) $ ", venv, "/usr/bin:/bin", "unset", "$ ", "/nonexistent/home", "gone"]
    for sh in ("bash", "zsh"):
        exe = shutil.which(sh)
        if not exe:
            print("skip: %s is not installed" % sh)
            continue
        # a shell that is not interactive drops an inherited PS1: set it there
        p = subprocess.run([exe, "-c", "PS1='$ '; . '%s/bin/activate'; %s" % (venv, show)], capture_output=True, text=True,
                           env=env)
        check(p.stdout.splitlines() == want, "%s activate: %r %r" % (sh, p.stdout, p.stderr))
    fish = shutil.which("fish")
    if fish:
        p = subprocess.run([fish, "--no-config", "-c",
                            "source '%s/bin/activate.fish'; echo $VIRTUAL_ENV; command -v python; deactivate; "
                            "echo $PATH; set -q VIRTUAL_ENV; and echo set; or echo unset" % venv],
                           capture_output=True, text=True, env=env)
        check(p.stdout.splitlines() == [venv, vpy, "/usr/bin /bin", "unset"], "fish activate: %r %r" %
              (p.stdout, p.stderr))
    else:
        print("skip: fish is not installed")
    csh = shutil.which("tcsh") or shutil.which("csh")
    if csh:
        # a script, not -c: csh expands aliases when it reads a line, so
        # `deactivate` on the line that sources the script is not yet one
        script = os.path.join(tmp, "t.csh")
        with open(script, "w") as f:
            f.write("set prompt='$ '\nsource '%s/bin/activate.csh'\necho $VIRTUAL_ENV\nwhich python\n"
                    "echo \"$prompt\"\ndeactivate\necho $PATH\necho \"$prompt\"\n"
                    "if ($?VIRTUAL_ENV) echo set\nalias deactivate\necho end\n" % venv)
        p = subprocess.run([csh, "-f", script], capture_output=True, text=True, env=env)
        check(p.stdout.splitlines() == [venv, vpy, "(v) $ ", "/usr/bin:/bin", "$ ", "end"],
              "csh activate: %r %r" % (p.stdout, p.stderr))
    else:
        print("skip: csh/tcsh is not installed")

    # pip sees an empty environment
    pip = None
    for cand in (PY, shutil.which("python3")):
        if not cand:
            continue
        v = subprocess.run([cand, "-m", "pip", "--version"], capture_output=True, text=True)
        m = re.match(r"pip (\d+)\.(\d+)", v.stdout)
        if v.returncode == 0 and m and (int(m.group(1)), int(m.group(2))) >= (22, 3):
            pip = cand
            break
    if pip:
        p = subprocess.run([pip, "-m", "pip", "--python", vpy, "list", "--format=json"], capture_output=True,
                           text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                                           "PIP_NO_INDEX": "1"})
        check(p.returncode == 0 and json.loads(p.stdout or "null") == [], "pip list: %r %r" % (p.stdout, p.stderr))
    else:
        print("skip: no pip >= 22.3 (pip --python) for", PY)

    # again: a no-op
    before = {n: os.lstat(os.path.join(venv, n)) for n in ("pyvenv.cfg", "bin/activate", "bin/python")}
    r = run("venv", venv, "--python", PY)
    check(r.returncode == 0 and r.stdout.startswith("kept "), "again: %r %r" % (r.stdout, r.stderr))
    after = {n: os.lstat(os.path.join(venv, n)) for n in before}
    check(all((before[n].st_ino, before[n].st_mtime_ns) == (after[n].st_ino, after[n].st_mtime_ns) for n in before),
          "again: files rewritten")

    # a venv of another X.Y: refused; --clear makes it again.  The other
    # Python is a fake whose version its name says (it is never started).
    fake = os.path.join(tmp, "fake", "bin", "python3.99")
    os.makedirs(os.path.dirname(fake))
    with open(fake, "w") as f:
        f.write("#!/bin/sh\nexit 1\n")
    os.chmod(fake, 0o755)
    open(os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages", "mine.py"), "w").close()
    r = run("venv", venv, "--python", fake)
    check(r.returncode == 1 and "a venv of Python %d.%d" % sys.version_info[:2] in r.stderr
          and "--clear" in r.stderr, "another X.Y: exit %d %r" % (r.returncode, r.stderr))
    check(os.path.exists(os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages",
                                      "mine.py")), "another X.Y: the venv was touched")
    r = run("--json", "venv", venv, "--python", fake, "--clear")
    check(r.returncode == 0 and json.loads(r.stdout)["action"] == "cleared", "--clear: %r %r" % (r.stdout, r.stderr))
    check(cfg(os.path.join(venv, "pyvenv.cfg")).get("version") == "3.99" and
          not os.path.exists(os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2])),
          "--clear: %r" % os.listdir(os.path.join(venv, "lib")))
    r = run("venv", venv, "--python", PY, "--clear")
    check(r.returncode == 0 and r.stdout.startswith("cleared "), "--clear back: %r %r" % (r.stdout, r.stderr))

    # half made (killed before pyvenv.cfg): completed by the next run
    os.unlink(os.path.join(venv, "pyvenv.cfg"))
    os.unlink(os.path.join(venv, "bin", "python3"))
    os.unlink(os.path.join(venv, "bin", "activate"))
    open(os.path.join(venv, ".gpuenv-venv-partial"), "w").close()
    r = run("venv", venv, "--python", PY)
    check(r.returncode == 0 and r.stdout.startswith("completed "), "half made: %r %r" % (r.stdout, r.stderr))
    check(os.path.exists(os.path.join(venv, "bin", "activate")) and
          os.readlink(os.path.join(venv, "bin", "python3")) == "python" and
          not os.path.exists(os.path.join(venv, ".gpuenv-venv-partial")), "half made: not completed")
    p = subprocess.run([os.path.join(venv, "bin", "python3"), "-c", "import sys; print(sys.prefix)"],
                       capture_output=True, text=True)
    check(p.stdout.strip() == venv, "half made: python3 %r" % p.stdout)

    # a folder that is not a venv
    other = os.path.join(tmp, "project")
    os.makedirs(other)
    open(os.path.join(other, "setup.py"), "w").close()
    r = run("venv", other, "--python", PY)
    check(r.returncode == 1 and "not a venv" in r.stderr and "setup.py" in r.stderr,
          "not a venv: exit %d %r" % (r.returncode, r.stderr))
    check(os.listdir(other) == ["setup.py"], "not a venv: touched")

    # the default folder, usage and not-found exits
    r = run("venv", "--python", PY, cwd=tmp)
    check(r.returncode == 0 and os.path.exists(os.path.join(tmp, ".venv", "pyvenv.cfg")),
          "default .venv: %r" % r.stderr)
    r = run("venv", "a", "b")
    check(r.returncode == 2 and "unexpected argument 'b'" in r.stderr, "two folders: %r" % r.stderr)
    r = run("venv", os.path.join(tmp, "x"), "--python", "2.1")
    check(r.returncode == 1 and "no Python interpreter 2.1; found: " in r.stderr and "pyenv install 2.1" in r.stderr,
          "--python 2.1: exit %d %r" % (r.returncode, r.stderr))
    r = run("venv", os.path.join(tmp, "x"), "--python", "snake")
    check(r.returncode == 2, "--python snake: exit %d %r" % (r.returncode, r.stderr))
    r = run("venv", os.path.join(tmp, "x"), "--python", os.path.join(tmp, "nope"))
    check(r.returncode == 4 and "no such Python interpreter" in r.stderr, "missing --python: %r" % r.stderr)

    # debug pythons lists the interpreter running this test
    r = run("debug", "pythons", "--json")
    check(r.returncode == 0, "debug pythons: %r" % r.stderr)
    if r.returncode == 0:
        d = json.loads(r.stdout)
        reals = [p["real"] for p in d["pythons"]]
        if os.path.dirname(PY) in os.environ.get("PATH", "").split(":") or PY.startswith("/usr/bin/"):
            check(os.path.realpath(PY) in reals, "debug pythons: %s not in %r" % (PY, reals))
        check(sum(p["picked"] for p in d["pythons"]) == 1, "debug pythons: one picked")
        check(all(p["version_source"] for p in d["pythons"]), "debug pythons: sources")
    r = run("debug", "pythons", "--fits", ">=99")
    check(r.returncode == 1 and "no Python interpreter fits >=99" in r.stderr, "debug pythons --fits: %r" % r.stderr)

    # a few milliseconds (median of fresh venvs; the figure in docs/install.md
    # is the release build's, this may be a sanitizer build)
    times = []
    for i in range(15):
        t = time.perf_counter()
        r = run("venv", os.path.join(tmp, "t%d" % i), "--python", PY)
        times.append((time.perf_counter() - t) * 1000)
        check(r.returncode == 0, "timed venv %d: %r" % (i, r.stderr))
    med = statistics.median(times)
    print("gpuenv venv: median %.1f ms over %d fresh venvs (%s)" % (med, len(times), BIN))
    check(med < 500, "gpuenv venv took %.1f ms (median)" % med)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
