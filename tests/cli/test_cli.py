"""CLI conventions every verb shares: help, version, unknown verbs and
options (one line, a suggestion, exit 2), colour rules."""
import os
import subprocess
import sys

BIN = os.environ["GPUENV_BIN"]
failures = []


def run(*args, env=None, stdin=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=e,
                          input=stdin, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


r = run("--help")
check(r.returncode == 0 and "usage: gpuenv" in r.stdout and "debug" in r.stdout, "--help")
r = run("--version")
check(r.returncode == 0 and r.stdout.startswith("gpuenv "), "--version")
r = run()
check(r.returncode == 2 and "usage" in r.stderr, "no verb -> 2")
r = run("debg")
check(r.returncode == 2 and "did you mean 'debug'" in r.stderr and r.stderr.count("\n") == 1,
      "unknown verb -> one line, suggestion, exit 2: %r" % r.stderr)
r = run("--jsn", "debug")
check(r.returncode == 2 and "did you mean '--json'" in r.stderr, "unknown global option")
r = run("debug", "--help")
check(r.returncode == 0 and "toml-decode" in r.stdout, "debug --help")
r = run("debug", "toml-decod")
check(r.returncode == 2 and "did you mean 'toml-decode'" in r.stderr, "debug subcommand suggestion")
subs = ["fatbin", "gpus", "libs", "pyenv", "ldd", "toml-decode", "toml-encode", "version-sort", "specifier", "marker", "requirement",
        "wheel-name", "metadata", "sha256"]
for s in subs:
    r = run("debug", s, "--help")
    check(r.returncode == 0 and r.stdout.startswith("usage: gpuenv debug " + s),
          "debug %s --help: %r" % (s, r.stdout[:80]))
r = run("debug", "sha256", "--hepl", "x")
check(r.returncode == 2 and "did you mean '--help'" in r.stderr and r.stderr.count("\n") == 1,
      "unknown verb option -> one line with suggestion: %r" % r.stderr)
r = run("--color=sometimes", "debug")
check(r.returncode == 2, "--color value checked")
r = run("--color=always", "debg", env={"NO_COLOR": "1"})
check("\033[" not in r.stderr, "NO_COLOR wins over --color=always")
r = run("--color=always", "debg", env={"NO_COLOR": ""})
check("\033[" in r.stderr, "--color=always colours")
r = run("debg")
check("\033[" not in r.stderr, "no colour when not a terminal")
r = run("debug", "sha256", "/nonexistent/file")
check(r.returncode == 1 and "/nonexistent/file" in r.stderr, "missing file -> 1 with path")
# writing to a full device must not pass as success
if os.path.exists("/dev/full"):
    with open("/dev/full", "w") as full:
        p = subprocess.run([BIN, "--help"], stdout=full, stderr=subprocess.PIPE)
    check(p.returncode != 0, "--help > /dev/full fails")
    with open("/dev/full", "w") as full:
        p = subprocess.run([BIN, "debug", "sha256", BIN], stdout=full, stderr=subprocess.PIPE)
    check(p.returncode != 0, "verb output > /dev/full fails")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
