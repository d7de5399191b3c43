"""gpuenv debug requirement / debug marker: JSON output, exit statuses,
positioned errors with a caret, --env files."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
failures = []


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def requirement(text):
    r = run("debug", "requirement", text)
    if r.returncode != 0:
        check(False, "requirement %r: exit %d %s" % (text, r.returncode, r.stderr))
        return {}
    return json.loads(r.stdout)


j = requirement('torch[cuda,Extra, cuda] >= 2.1 , <3 ; python_version>="3.9" and extra=="Foo_Bar"')
check(j == {"name": "torch", "extras": ["Extra", "cuda"], "specifier": "<3,>=2.1", "url": None,
            "marker": 'python_version >= "3.9" and extra == "foo-bar"'}, "requirement fields: %r" % j)
j = requirement("pip @ https://example.com/pip-1.3.1.zip#sha1=da92 ; os_name == 'nt'")
check(j.get("url") == "https://example.com/pip-1.3.1.zip#sha1=da92" and j.get("specifier") == ""
      and j.get("marker") == 'os_name == "nt"', "requirement url: %r" % j)
j = requirement("name")
check(j == {"name": "name", "extras": [], "specifier": "", "url": None, "marker": None},
      "bare name: %r" % j)

r = run("debug", "requirement", "name @ https://example.com/; extra == 'x'")
lines = r.stderr.splitlines()
check(r.returncode == 1 and r.stdout == "" and len(lines) == 3
      and lines[0].startswith("gpuenv: <arg>:1:30: Expected semicolon")
      and lines[1] == "    name @ https://example.com/; extra == 'x'"
      and lines[2] == "    " + " " * 29 + "^", "invalid requirement: %r" % r.stderr)
r = run("debug", "requirement", "name[a b]")
check(r.returncode == 1 and "<arg>:1:8: Expected comma between extra names" in r.stderr,
      "extras error: %r" % r.stderr)
r = run("debug", "requirement")
check(r.returncode == 2 and "usage" in r.stderr, "requirement without REQ -> 2")
r = run("debug", "requirement", "a", "b")
check(r.returncode == 2, "two REQs -> 2")

# markers: true -> 0, false -> 1, errors -> 1 with a message
r = run("debug", "marker", 'os_name == "posix" and python_version >= "3.9"')
check(r.returncode == 0 and r.stdout == "true\n", "default env true: %r" % (r.stdout,))
r = run("debug", "marker", 'sys_platform == "win32"')
check(r.returncode == 1 and r.stdout == "false\n" and r.stderr == "", "false -> 1")
r = run("--json", "debug", "marker", "extra == 'X_Y'")
check(r.returncode == 1 and json.loads(r.stdout) == {"marker": 'extra == "x-y"', "result": False},
      "--json: %r" % r.stdout)
r = run("debug", "marker", "os_name ~= 'posix'")
check(r.returncode == 1 and r.stdout == "" and "<arg>:1:1: undefined comparison" in r.stderr,
      "undefined comparison: %r" % r.stderr)
r = run("debug", "marker", "python_version >= '3' and")
check(r.returncode == 1 and "<arg>:1:26: Expected a marker variable or quoted string" in r.stderr,
      "marker syntax error: %r" % r.stderr)

with tempfile.TemporaryDirectory() as d:
    def env_file(obj):
        p = os.path.join(d, "env.json")
        with open(p, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return p

    p = env_file({"python_version": "3.8", "sys_platform": "win32", "extras": ["Cu_Da"],
                  "dependency_groups": [], "extra": None})
    r = run("debug", "marker", "python_version < '3.9' and sys_platform == 'win32' and "
            "'cu.da' in extras and 'x' not in dependency_groups and extra == ''", "--env", p)
    check(r.returncode == 0 and r.stdout == "true\n", "--env: %r %r" % (r.stdout, r.stderr))
    r = run("debug", "marker", "'cuda' in extras")
    check(r.returncode == 1 and "'extras' is not set" in r.stderr, "extras unset: %r" % r.stderr)
    p = env_file({"python_verison": "3.8"})
    r = run("debug", "marker", "os_name == 'posix'", "--env", p)
    check(r.returncode == 1 and "did you mean 'python_version'" in r.stderr,
          "unknown variable: %r" % r.stderr)
    p = env_file({"extras": "cuda"})
    r = run("debug", "marker", "os_name == 'posix'", "--env", p)
    check(r.returncode == 1 and "'extras' must be an array of strings" in r.stderr,
          "extras type: %r" % r.stderr)
    p = env_file("[1, 2]")
    r = run("debug", "marker", "os_name == 'posix'", "--env", p)
    check(r.returncode == 1 and "must be a JSON object" in r.stderr, "env not an object")
    p = env_file("{")
    r = run("debug", "marker", "os_name == 'posix'", "--env", p)
    check(r.returncode == 1 and r.stderr.count("\n") == 1, "env bad JSON: %r" % r.stderr)
    r = run("debug", "marker", "os_name == 'posix'", "--env", os.path.join(d, "missing.json"))
    check(r.returncode == 1, "env missing file")

r = run("debug", "marker")
check(r.returncode == 2 and "usage" in r.stderr, "marker without MARKER -> 2")
r = run("debug", "marker", "os_name == 'x'", "--evn", "x")
check(r.returncode == 2 and "did you mean '--env'" in r.stderr, "option suggestion: %r" % r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
