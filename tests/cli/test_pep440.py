"""gpuenv debug version-sort and debug specifier: output, order, stability,
invalid input, exit statuses, JSON."""
import json
import os
import subprocess
import sys

BIN = os.environ["GPUENV_BIN"]
failures = []


def run(*args, stdin=None):
    return subprocess.run([BIN, "debug", *args], capture_output=True, input=stdin,
                          timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def lines(b):
    return b.decode("utf-8").splitlines()


# ---- version-sort --------------------------------------------------------
inp = "2.0\n1.0.0\n1.0a1\n  1.0\n1!0.1\n2.1.0+cu118\n2.1.0\n2.1.0+cpu\n1.0.dev0\n1.0.post1\n1.0\n"
r = run("version-sort", stdin=inp.encode())
check(r.returncode == 0 and r.stderr == b"", "version-sort ok: %r" % r.stderr)
# equal versions (1.0.0, '  1.0', 1.0) keep input order; text printed as read
check(lines(r.stdout) == ["1.0.dev0", "1.0a1", "1.0.0", "  1.0", "1.0", "1.0.post1", "2.0",
                          "2.1.0", "2.1.0+cpu", "2.1.0+cu118", "1!0.1"],
      "version-sort order: %r" % lines(r.stdout))

r = run("version-sort", stdin=b"1.0\nfrench toast\n0.9\n\n1.0+\n")
check(r.returncode == 1, "invalid lines -> exit 1")
check(lines(r.stdout) == ["0.9", "1.0"], "valid lines still printed: %r" % r.stdout)
err = lines(r.stderr)
check(err == ["<stdin>:2: invalid version 'french toast'", "<stdin>:4: invalid version ''",
              "<stdin>:5: invalid version '1.0+'"], "invalid lines reported: %r" % err)

r = run("version-sort", stdin=b"")
check(r.returncode == 0 and r.stdout == b"", "empty input")
r = run("version-sort", stdin=b"1.0\r\n0.1\r\n")
check(r.returncode == 0 and r.stdout == b"0.1\r\n1.0\r\n", "CRLF kept: %r" % r.stdout)
r = run("version-sort", stdin=b"2.0\n1.0\nbad\x01\n")
check(r.returncode == 1 and b"'bad\\x01'" in r.stderr, "control bytes escaped: %r" % r.stderr)
r = run("version-sort", "--json", stdin=b"2.0\nx\n1.0\n")
try:
    j = json.loads(r.stdout)
    check(r.returncode == 1 and j == {"versions": ["1.0", "2.0"],
                                      "invalid": [{"line": 2, "text": "x"}]}, "json: %r" % j)
except ValueError:
    check(False, "version-sort --json is JSON: %r" % r.stdout)
r = run("version-sort", "extra")
check(r.returncode == 2, "version-sort takes no arguments")
r = run("version-sort", "--help")
check(r.returncode == 0 and b"as it was read" in r.stdout, "help says lines are printed as read")

# a larger shuffled list comes back in the same order as a sorted one
many = ["%d.%d.%d%s" % (a, b, c, s) for a in range(3) for b in range(4) for c in range(3)
        for s in ("", "rc1", ".post1", ".dev2", "+cu118")]
r1 = run("version-sort", stdin="\n".join(many).encode())
r2 = run("version-sort", stdin="\n".join(reversed(many)).encode())
check(r1.returncode == 0 and sorted(lines(r1.stdout)) == sorted(many), "nothing lost")
check(lines(r1.stdout)[:5] == ["0.0.0.dev2", "0.0.0rc1", "0.0.0", "0.0.0+cu118", "0.0.0.post1"],
      "suffix order: %r" % lines(r1.stdout)[:5])
check(lines(r1.stdout) == lines(r2.stdout), "order independent of input order")

# ---- specifier -----------------------------------------------------------
r = run("specifier", ">=1.0,<2.0", "0.9", "1.0", "1.5a1", "1.9.post1", "2.0")
check(r.returncode == 0 and lines(r.stdout) == ["1.0", "1.9.post1"], "specifier args: %r" % r.stdout)
r = run("specifier", "--prereleases", ">=1.0,<2.0", "1.0", "1.5a1")
check(lines(r.stdout) == ["1.0", "1.5a1"], "--prereleases")
r = run("specifier", ">=1.0,<2.0", "1.5a1", "2.0")
check(r.returncode == 0 and lines(r.stdout) == ["1.5a1"], "only pre-releases match: kept")
r = run("specifier", "--no-prereleases", ">=1.0,<2.0", "1.5a1", "2.0")
check(r.returncode == 1 and r.stdout == b"", "--no-prereleases, nothing left -> exit 1")
r = run("specifier", "==2.1.*", stdin=b"2.1.0+cu118\n2.2.0\n2.1.3\n")
check(lines(r.stdout) == ["2.1.0+cu118", "2.1.3"], "specifier stdin: %r" % r.stdout)
r = run("specifier", "~=2.1", "-", stdin=b"2.0\n2.1\n2.9.1\n3.0\n")
check(lines(r.stdout) == ["2.1", "2.9.1"], "specifier '-': %r" % r.stdout)
r = run("specifier", "!=1.0", "foo", "2.0")
check(r.returncode == 0 and lines(r.stdout) == ["2.0"] and b"invalid version 'foo'" in r.stderr,
      "invalid candidate warned about: %r" % r.stderr)
r = run("specifier", "===foo", "FOO", "bar")
check(lines(r.stdout) == ["FOO"], "=== matches text")
r = run("specifier", "=>2.0", "2.0")
check(r.returncode == 1 and b"invalid specifier '=>2.0'" in r.stderr and b"column 1" in r.stderr,
      "bad spec: %r" % r.stderr)
r = run("specifier", ">=1.0, <2+cu118", "1.0")
check(r.returncode == 1 and b"column 9" in r.stderr and b"local version" in r.stderr,
      "bad clause column: %r" % r.stderr)
r = run("specifier")
check(r.returncode == 2, "no SPEC -> usage error")
r = run("specifier", "--json", "<3, >=2.0", "2.5", "3.0")
try:
    j = json.loads(r.stdout)
    check(j == {"specifier": "<3,>=2.0", "matches": ["2.5"]}, "specifier json: %r" % j)
except ValueError:
    check(False, "specifier --json is JSON: %r" % r.stdout)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all pep440 CLI checks passed")
