"""Issue 22's reproductions: the defects an adversarial run found, each kept
fixed by one module tests/cli/harden/item_NN.py (the issue's item number),
run here in turn against the built binary.

A module defines run(h); h is the harness below: the binary, a scratch
folder, check(), gpuenv(), a small fixture index (tests/fixtures/mkwheel.py)
and projects over it.  Each module is quick (a few seconds): CI runs them all.
"""
import glob
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import traceback

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SRC, "tests", "fixtures")
sys.path.insert(0, FIXTURES)
import mkwheel  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpuenv-harden-")
CACHE = os.path.join(TMP, "cache")
PY = os.path.realpath(sys.executable)
PYXY = "%d.%d" % sys.version_info[:2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def gpuenv(*args, env=None, timeout=120, cwd=None):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    e.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=timeout, cwd=cwd)


def this_platform():
    lib, ver = platform.libc_ver()
    a, b = (ver.split(".") + ["0"])[:2] if lib == "glibc" else ("2", "17")
    return "manylinux_%s_%s_%s" % (a, b, platform.machine())


PLATFORM = this_platform()
_index = {}


def index(specs=None, name="index"):
    """A file:// index of specs (default: alpha 1.0 needing beta, beta 1.0),
    built once per name; its simple/ URL."""
    if name not in _index:
        root = os.path.join(TMP, name)
        mkwheel.build_index(root, specs or [
            {"name": "alpha", "version": "1.0", "requires": ["beta>=1.0"], "sdist": False},
            {"name": "beta", "version": "1.0", "sdist": False},
        ])
        _index[name] = "file://" + os.path.join(root, "simple") + "/"
    return _index[name]


def project(name, deps=("alpha",), target=None, text=None):
    """A project folder with one target "cpu" (python: this interpreter's
    X.Y, platform: this machine's); text: the whole pyproject.toml instead."""
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    if text is None:
        kv = {"gpu": "none", "python": PYXY, "platform": PLATFORM}
        kv.update(target or {})
        text = '[project]\nname = "%s"\nversion = "0.1"\ndependencies = [%s]\n\n[tool.gpuenv.targets.cpu]\n' % (
            name, ", ".join('"%s"' % x for x in deps))
        text += "".join('%s = "%s"\n' % item for item in kv.items())
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write(text)
    return d


def lock(proj, *extra, idx=None):
    return gpuenv("lock", "--project", proj, "--index-url", idx or index(), "--cache-dir", CACHE, *extra)


def sync(proj, venv, *extra, idx=None, env=None):
    return gpuenv("sync", "--project", proj, "--venv", venv, "--python", PY, "--index-url", idx or index(),
                  "--cache-dir", CACHE, *extra, env=env)


def main():
    only = sys.argv[1:]
    mods = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "harden", "item_*.py")))
    try:
        for path in mods:
            name = os.path.splitext(os.path.basename(path))[0]
            if only and name not in only:
                continue
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            before = len(failures)
            try:
                spec.loader.exec_module(mod)
                mod.run(sys.modules[__name__])
            except Exception:
                traceback.print_exc()
                failures.append("%s: raised" % name)
            print("%s: %s" % (name, "ok" if len(failures) == before else "FAILED"))
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.modules.setdefault("test_harden", sys.modules[__name__])
    sys.exit(main())
