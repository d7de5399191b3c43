"""gpuenv debug resolve: text and JSON output, exit statuses, positioned
errors for a malformed scenario, byte-identical output on every run."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", ".")
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
FIX = os.path.join(SRC, "tests", "fixtures", "resolve")
failures = []


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# text output: name==version lines sorted by name, exit 0
r = run("debug", "resolve", os.path.join(FIX, "extras-chain.toml"))
check(r.returncode == 0 and r.stdout == "a==2.0\nb==1.5\nc==3.0\nd==1.0\n",
      "extras-chain text: %d %r %r" % (r.returncode, r.stdout, r.stderr))

# JSON: versions, extras, counters
r = run("debug", "resolve", "--json", os.path.join(FIX, "extras-chain.toml"))
j = json.loads(r.stdout)
check(j["satisfiable"] and j["packages"] == {"a": "2.0", "b": "1.5", "c": "3.0", "d": "1.0"},
      "extras-chain json packages: %r" % j)
check(j["extras"] == {"a": ["all", "docs", "gpu"], "b": ["cuda"], "c": ["nope"]},
      "extras-chain json extras: %r" % j.get("extras"))
check(j["python"] == "3.12" and j["platform"] == "manylinux_2_28_x86_64",
      "default target: %r %r" % (j.get("python"), j.get("platform")))
check(j["explanation"] is None and j["decisions"] >= 5, "counters: %r" % j)

# no solution: exit 1, the explanation on stdout
r = run("debug", "resolve", os.path.join(FIX, "conflict-branching.toml"))
with open(os.path.join(FIX, "conflict-branching.explanation"), encoding="utf-8") as f:
    want = f.read()
check(r.returncode == 1 and r.stdout == "no solution for conflict-branching:\n" + want,
      "unsatisfiable text: %d %r" % (r.returncode, r.stdout))

# usage and input errors
r = run("debug", "resolve")
check(r.returncode == 2 and "no SCENARIO.toml given" in r.stderr, "no file: %d %r" % (r.returncode, r.stderr))
r = run("debug", "resolve", "/nonexistent/s.toml")
check(r.returncode == 1 and "/nonexistent/s.toml" in r.stderr, "missing file: %d %r" % (r.returncode, r.stderr))
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.toml")
    with open(bad, "w") as f:
        f.write('[root]\nrequires = ["a"]\n[packages.a.versions."1.0"]\nrequires = ["b ~= "]\n')
    r = run("debug", "resolve", bad)
    check(r.returncode == 1 and bad + ":4:13: requires: 'b ~= '" in r.stderr,
          "malformed requirement: %d %r" % (r.returncode, r.stderr))
    with open(bad, "w") as f:
        f.write('[packages.a.versions."1.0"]\nyanked = "yes"\n')
    r = run("debug", "resolve", bad)
    check(r.returncode == 1 and bad + ":2:10: 'yanked' must be a boolean, not string" in r.stderr,
          "wrong type: %d %r" % (r.returncode, r.stderr))

# --dump: the inputs as a scenario that resolves the same way
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "dump.toml")
    for name in ("conflict-golden", "extras-chain", "deep-backtracking"):
        a = run("debug", "resolve", "--json", "--dump", out, os.path.join(FIX, name + ".toml"))
        b = run("debug", "resolve", "--json", out)
        ja, jb = json.loads(a.stdout), json.loads(b.stdout)
        check(a.returncode == b.returncode and ja["packages"] == jb["packages"]
              and ja["satisfiable"] == jb["satisfiable"], "dump of %s resolves differently" % name)
        if not ja["satisfiable"]:
            strip = lambda e: [l for l in e.splitlines() if not l.startswith("note:")]
            check(strip(ja["explanation"]) == strip(jb["explanation"]),
                  "dump of %s explains differently" % name)

# adversarial graphs (bench/resolver_gen.py): the pigeonhole principle with
# 8 pigeons and 7 holes has no solution and takes hundreds of conflicts; it
# ends in bounded time with exit 1 and an explanation a person can read
# (its last steps, the rest counted), never "out of memory" nor exit 4
sys.path.insert(0, os.path.join(SRC, "bench"))
import resolver_gen  # noqa: E402
with tempfile.TemporaryDirectory() as d:
    php = os.path.join(d, "php.toml")
    with open(php, "w") as f:
        f.write(resolver_gen.php(8, 7))
    t0 = time.monotonic()
    r = run("debug", "resolve", php)
    took = time.monotonic() - t0
    lines = r.stdout.splitlines()
    check(r.returncode == 1 and lines[0] == "no solution for php-8-7:",
          "php(8,7): exit 1, no solution: %d %r %r" % (r.returncode, r.stdout[:200], r.stderr))
    check(took < 30, "php(8,7) in bounded time: %.1f s" % took)
    check(len(lines) <= 60 and len(r.stdout) <= 16384,
          "php(8,7): a bounded explanation: %d lines, %d bytes" % (len(lines), len(r.stdout)))
    check(lines[-1].startswith("(") and "steps of the derivation" in lines[-1]
          and "not shown" in lines[-1] and "[" in r.stdout,
          "php(8,7): what was left out is counted: %r" % lines[-1:])
    check(lines[-2].startswith("    So, because the project depends on"),
          "php(8,7): the explanation ends at the failure: %r" % lines[-2:])
    j = json.loads(run("debug", "resolve", "--json", php).stdout)
    check(not j["satisfiable"] and j["conflicts"] >= 100, "php(8,7) counters: %r" % j.get("conflicts"))
    # the propagation's work (docs/resolver.md): every look at a watch
    # list counted, the entries found, those passed on their blocker
    check(j.get("watch_looks", 0) >= j["conflicts"] and j.get("watch_found", 0) > j.get("watch_passed", -1) > 0,
          "php(8,7): watch counters: %r" % {k: j.get(k) for k in ("watch_looks", "watch_found", "watch_passed")})
    # four holes for four pigeons: a solution, each pigeon in its own hole
    with open(php, "w") as f:
        f.write(resolver_gen.php(4, 4))
    j = json.loads(run("debug", "resolve", "--json", php).stdout)
    check(j["satisfiable"] and sorted(j["packages"].values()) == ["1.0", "2.0", "3.0", "4.0"],
          "php(4,4) solved: %r" % j.get("packages"))
    # random ranges past 2,000 conflicts: the learned incompatibilities'
    # database is reduced (docs/resolver.md "Learned incompatibilities"),
    # those of high LBD dropped from the watch lists, and the answer, its
    # bounded explanation and the counters stay the same run to run
    rnd = os.path.join(d, "rnd.toml")
    with open(rnd, "w") as f:
        f.write(resolver_gen.rand(150, 20, 2, 3))
    a = run("debug", "resolve", "--json", rnd)
    j = json.loads(a.stdout)
    check(a.returncode == 1 and not j["satisfiable"] and j["conflicts"] > 2000,
          "random 150x20 seed 2: no solution past 2,000 conflicts: %d %r" % (a.returncode, j.get("conflicts")))
    check(j["reductions"] >= 1 and 0 < j["learned_dropped"] < j["learned"] <= j["conflicts"],
          "random 150x20: the learned database reduced: %r" %
          {k: j.get(k) for k in ("learned", "learned_dropped", "reductions")})
    expl = j["explanation"].splitlines()
    check(len(expl) <= 60 and expl[-2].startswith("    So, because the project depends on")
          and "steps of the derivation" in expl[-1],
          "random 150x20: a bounded explanation ending at the failure: %r" % expl[-2:])
    check(run("debug", "resolve", "--json", rnd).stdout == a.stdout,
          "random 150x20: the same bytes run to run")
    # the adversarial run's own graph (issue 22 item 17): 25 packages of 13
    # versions ran 53-267 s and then reported "out of memory resolving",
    # exit 4 (2.1 GB, d0b4ece3); now 45,058 conflicts, exit 1, a few KB
    with open(php, "w") as f:
        f.write(resolver_gen.php(25, 13))
    t0 = time.monotonic()
    r = run("debug", "resolve", "--json", php, timeout=600)
    took = time.monotonic() - t0
    j = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    expl = (j.get("explanation") or "").splitlines()
    check(r.returncode == 1 and j.get("satisfiable") is False and "out of memory" not in r.stderr,
          "php(25,13): no solution, exit 1: %d %r" % (r.returncode, r.stderr[-300:]))
    check(len(expl) <= 60 and len(j.get("explanation") or "") <= 16384 and expl
          and "steps of the derivation" in expl[-1] and "not shown" in expl[-1],
          "php(25,13): a bounded explanation, what was left out counted: %d lines %r" % (len(expl), expl[-1:]))
    print("php(25,13): %d conflicts, exit %d, %.1f s" % (j.get("conflicts", -1), r.returncode, took))

# determinism: the same input twice gives the same bytes, text and JSON
files = sorted(glob.glob(os.path.join(FIX, "*.toml")))
files += sorted(glob.glob(os.path.join(SHARED, "testdata", "packse", "scenarios", "*", "*.toml")))[:40]
for path in files:
    for fmt in ([], ["--json"]):
        a = run("debug", "resolve", *fmt, path)
        b = run("debug", "resolve", *fmt, path)
        check(a.returncode == b.returncode and a.stdout == b.stdout,
              "not deterministic: %s %s" % (path, fmt))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
