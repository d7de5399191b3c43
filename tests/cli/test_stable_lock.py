"""Stable locks and gpuenv outdated (docs/lock.md "Stable locks", "Outdated"),
on fixture indexes (file://, built by tests/fixtures/mkwheel.py and
torch_index.py), for a plain target and a GPU target:

  - lock with alpha 1.0; alpha 1.1 is published; a dependency is added; the
    re-lock keeps alpha 1.0 and prints `+ newdep 1.0`; a re-lock of the same
    inputs leaves the lock byte for byte; --upgrade-package alpha moves it
    (`~ alpha 1.0 -> 1.1`) and what it needs along with it; --upgrade moves
    all; --upgrade-package NAME==VERSION goes to that version; a removed
    dependency prints `- delta`; a changed range takes the newest that fits;
    --json carries the same changes;
  - a T4 target: torch kept at the locked release when a newer one is
    published, moved by --upgrade-package torch, and chosen afresh (the
    build too) when the target's driver changes, which the output says;
  - gpuenv outdated: locked / allowed / latest per package, exit 1 while a
    package can move within the constraints, 0 after --upgrade, torch's
    knowledge-base verdict on the target, --json;
  - bad --upgrade-package values and --check with --upgrade: usage errors."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import mkwheel  # noqa: E402
import torch_index  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-stable-lock-")
CACHE = os.path.join(TMP, "cache")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


INDEX = os.path.join(TMP, "pypi")
INDEX_URL = "file://" + INDEX + "/simple/"


def publish(specs):
    """The index at INDEX holds exactly specs from now on (same URL)."""
    shutil.rmtree(INDEX, ignore_errors=True)
    mkwheel.build_index(INDEX, [dict(name=n, version=v, requires=r, sdist=False) for n, v, r in specs])


def versions(project, target):
    with open(os.path.join(project, "pylock.%s.toml" % target), "rb") as f:
        return {p["name"]: p["version"] for p in tomllib.load(f)["packages"]}


def write_project(d, deps, target_body):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "stable"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
                "dependencies = [%s]\n\n[tool.gpuenv.targets.%s]\n%s"
                % (", ".join('"%s"' % d for d in deps), target_body[0], target_body[1]))


PLAIN = ("plain", 'gpu = "none"\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n')
BASE = [("alpha", "1.0", []), ("beta", "1.0", ["gamma"]), ("gamma", "1.0", []), ("delta", "1.0", []),
        ("newdep", "1.0", [])]


def lock(project, *extra, torch=None):
    a = ["lock", "--project", project, "--index-url", INDEX_URL, "--cache-dir", CACHE]
    if torch:
        a += ["--torch-index", torch]
    return run(*a, *extra)


def outdated(project, *extra, torch=None):
    a = ["outdated", "--project", project, "--index-url", INDEX_URL, "--cache-dir", CACHE]
    if torch:
        a += ["--torch-index", torch]
    return run(*a, *extra)


# ---- a plain target --------------------------------------------------------------

P = os.path.join(TMP, "plain")
publish(BASE)
write_project(P, ["alpha", "beta", "delta"], PLAIN)
rc, out, err = lock(P)
check(rc == 0 and versions(P, "plain") == {"alpha": "1.0", "beta": "1.0", "gamma": "1.0", "delta": "1.0"},
      "plain: first lock: %d %s%s" % (rc, out, err))
check(not re.search(r"^  [~+-] ", out, re.M), "plain: a first lock lists no changes: %s" % out)

# alpha 1.1, beta 1.1 and gamma 2.0 are published; newdep is added
publish(BASE + [("alpha", "1.1", []), ("beta", "1.1", ["gamma"]), ("gamma", "2.0", [])])
rc, out, err = outdated(P)
check(rc == 1 and re.search(r"^  alpha +1\.0 +1\.1 +1\.1$", out, re.M)
      and re.search(r"^  gamma +1\.0 +2\.0 +2\.0$", out, re.M) and "3 of 4 packages" in out,
      "outdated: alpha, beta, gamma can move (exit 1): %d %s%s" % (rc, out, err))
rc, out, err = outdated(P, "--json")
o = json.loads(out) if rc in (0, 1) and out.strip() else []
rows = {p["name"]: p for p in o[0]["packages"]} if o else {}
check(rc == 1 and rows.get("alpha", {}).get("allowed") == "1.1" and rows["alpha"]["latest"] == "1.1"
      and rows["alpha"]["outdated"] and rows["delta"]["outdated"] is False and o[0]["outdated"] == 3,
      "outdated --json: every package, alpha outdated, delta not: %d %s%s" % (rc, out, err))
with open(os.path.join(P, "pylock.plain.toml"), "rb") as f:
    before = f.read()
rc, out, err = lock(P)
with open(os.path.join(P, "pylock.plain.toml"), "rb") as f:
    check(rc == 0 and "(unchanged)" in out and f.read() == before,
          "plain: a re-lock of the same inputs keeps every version, the file byte for byte: %s%s" % (out, err))

write_project(P, ["alpha", "beta", "delta", "newdep"], PLAIN)
rc, out, err = lock(P)
v = versions(P, "plain")
check(rc == 0 and v == {"alpha": "1.0", "beta": "1.0", "gamma": "1.0", "delta": "1.0", "newdep": "1.0"},
      "plain: a dependency added keeps alpha 1.0 and the rest: %s %s%s" % (v, out, err))
check(re.search(r"^  \+ newdep 1\.0$", out, re.M) and not re.search(r"^  ~ ", out, re.M),
      "plain: the re-lock prints + newdep and nothing else moved: %s" % out)

rc, out, err = lock(P, "--upgrade-package", "Alpha")
v = versions(P, "plain")
check(rc == 0 and v["alpha"] == "1.1" and v["beta"] == "1.0" and v["gamma"] == "1.0",
      "plain: --upgrade-package alpha moves alpha alone: %s %s%s" % (v, out, err))
check(re.search(r"^  ~ alpha 1\.0 -> 1\.1$", out, re.M) and len(re.findall(r"^  [~+-] ", out, re.M)) == 1,
      "plain: ... and prints ~ alpha 1.0 -> 1.1: %s" % out)

# what an upgrade drags along: alpha 1.2 needs gamma >= 2 (locked at 1.0)
publish(BASE + [("alpha", "1.1", []), ("beta", "1.1", ["gamma"]), ("gamma", "2.0", []),
                ("alpha", "1.2", ["gamma>=2"])])
rc, out, err = lock(P, "--upgrade-package", "alpha", "--json")
o = json.loads(out) if rc == 0 else [{}]
ch = {c["name"]: c for c in o[0].get("changes", [])}
v = versions(P, "plain")
check(rc == 0 and v["alpha"] == "1.2" and v["gamma"] == "2.0" and v["beta"] == "1.0",
      "plain: --upgrade-package alpha drags gamma along, beta stays: %s %s%s" % (v, out, err))
check(ch.get("alpha") == {"name": "alpha", "change": "~", "from": "1.1", "to": "1.2"}
      and ch.get("gamma", {}).get("to") == "2.0" and "beta" not in ch,
      "plain: --json's changes: %s" % o)

rc, out, err = lock(P, "--upgrade-package", "alpha==1.0")
check(rc == 0 and versions(P, "plain")["alpha"] == "1.0" and re.search(r"^  ~ alpha 1\.2 -> 1\.0$", out, re.M),
      "plain: --upgrade-package alpha==1.0 goes to that version: %s%s" % (out, err))

rc, out, err = lock(P, "--upgrade")
v = versions(P, "plain")
check(rc == 0 and v == {"alpha": "1.2", "beta": "1.1", "gamma": "2.0", "delta": "1.0", "newdep": "1.0"},
      "plain: --upgrade moves all: %s %s%s" % (v, out, err))
check(re.search(r"^  ~ alpha 1\.0 -> 1\.2$", out, re.M) and re.search(r"^  ~ beta 1\.0 -> 1\.1$", out, re.M),
      "plain: --upgrade prints each move: %s" % out)
rc, out, err = outdated(P)
check(rc == 0 and "0 of 5 packages" in out, "outdated after --upgrade: exit 0: %d %s%s" % (rc, out, err))

# a removed dependency, and a range that no longer allows the locked version
write_project(P, ["alpha<1.2", "beta", "newdep"], PLAIN)
rc, out, err = lock(P)
v = versions(P, "plain")
check(rc == 0 and "delta" not in v and v["alpha"] == "1.1" and v["beta"] == "1.1",
      "plain: delta removed, alpha<1.2 takes the newest that fits: %s %s%s" % (v, out, err))
check(re.search(r"^  - delta 1\.0$", out, re.M) and re.search(r"^  ~ alpha 1\.2 -> 1\.1$", out, re.M),
      "plain: prints - delta and ~ alpha 1.2 -> 1.1: %s" % out)
# newer than the constraints allow is not outdated for the exit status
rc, out, err = outdated(P)
check(rc == 0 and re.search(r"^  alpha +1\.1 +1\.1 +1\.2$", out, re.M),
      "outdated: alpha 1.2 exists, the constraints stop at 1.1: exit 0: %d %s%s" % (rc, out, err))

# usage errors
for bad in (["--upgrade-package", "not a name"], ["--upgrade-package", "alpha==x.y!"],
            ["--check", "--upgrade"]):
    rc, out, err = lock(P, *bad)
    check(rc == 2 and "usage" in err.lower() + out.lower() or rc == 2,
          "lock %s: usage error (2): %d %s" % (" ".join(bad), rc, err))
rc, out, err = run("outdated", "--project", os.path.join(TMP, "nolock-none"))
check(rc == 4, "outdated without a project: exit 4: %d %s" % (rc, err))
NL = os.path.join(TMP, "nolock")
write_project(NL, ["alpha"], PLAIN)
rc, out, err = outdated(NL)
check(rc == 1 and "missing" in out, "outdated without a lock: exit 1, says missing: %d %s%s" % (rc, out, err))

# ---- a GPU target: torch kept, upgraded, chosen afresh when the driver changes ------

T1 = torch_index.build(os.path.join(TMP, "torch1"), series=["2.4"])["torch-index"]
T2 = torch_index.build(os.path.join(TMP, "torch2"), series=["2.4", "2.5", "2.7"])
PYPI2 = T2["pypi"]
T2 = T2["torch-index"]
G = os.path.join(TMP, "gpu")
T4 = ("t4", 'gpu = "T4"\ndriver = "535.104.05"\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n')
T4NEW = ("t4", 'gpu = "T4"\ndriver = "560.35.03"\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n')
# the torch index's PyPI-like half has torch's dependencies; alpha comes from there too
INDEX_URL = PYPI2
write_project(G, ["torch", "filelock"], T4)
rc, out, err = lock(G, torch=T1)
v = versions(G, "t4") if rc == 0 else {}
t0 = v.get("torch", "")
check(rc == 0 and t0.startswith("2.4.") and t0.endswith("+cu121"),
      "t4: first lock, torch 2.4 cu121 (the only series on the index): %d %s %s%s" % (rc, t0, out, err))
# torch 2.5 and 2.6 published (another index root), a dependency added
write_project(G, ["torch", "filelock", "numpy"], T4)
rc, out, err = lock(G, torch=T2)
v = versions(G, "t4") if rc == 0 else {}
check(rc == 0 and v.get("torch") == t0 and "numpy" in v,
      "t4: torch kept at %s, numpy added: %d %s %s%s" % (t0, rc, v.get("torch"), out, err))
check(re.search(r"^  \+ numpy ", out, re.M) and not re.search(r"^  ~ torch ", out, re.M),
      "t4: prints + numpy, torch unmoved: %s" % out)
rc, out, err = outdated(G, torch=T2)
check(rc == 1 and re.search(r"^  torch +%s +2\.5\.\d+\+cu121 +2\.5\.\d+\+cu121$" % re.escape(t0), out, re.M)
      and re.search(r"on t4 \(the knowledge base\): 2\.5\.\d+\+cu121 runs", out),
      "t4 outdated: torch can move to 2.5 cu121, which the KB says runs: %d %s%s" % (rc, out, err))
rc, out, err = lock(G, "--upgrade-package", "torch", torch=T2)
v = versions(G, "t4") if rc == 0 else {}
check(rc == 0 and v.get("torch", "").startswith("2.5.") and v["torch"].endswith("+cu121")
      and re.search(r"^  ~ torch %s -> 2\.5\.\d+\+cu121$" % re.escape(t0), out, re.M),
      "t4: --upgrade-package torch moves it within cu121: %d %s %s%s" % (rc, v.get("torch"), out, err))
# the driver changes: the KB's choice is made again, and said.  What it
# chooses is what a first lock of the new target takes from the same indexes
# (the build the KB confirms among those offered: issue 21's rule)
G2 = os.path.join(TMP, "gpu-fresh")
write_project(G2, ["torch", "filelock", "numpy"], T4NEW)
rc, out, err = lock(G2, torch=T2)
fresh = versions(G2, "t4").get("torch", "") if rc == 0 else ""
ftag = fresh.partition("+")[2]
check(rc == 0 and ftag.startswith("cu") and ftag != "cu121",
      "t4 on driver 560, first lock: a CUDA build other than cu121: %d %s %s%s" % (rc, fresh, out, err))
write_project(G, ["torch", "filelock", "numpy"], T4NEW)
rc, out, err = lock(G, torch=T2)
v = versions(G, "t4") if rc == 0 else {}
check(rc == 0 and v.get("torch") == fresh,
      "t4 on driver 560: torch of the build the KB picks now (%s): %d %s %s%s" % (fresh, rc, v.get("torch"), out, err))
check("driver 535.104.05 -> 560.35.03" in out and ("cu121 -> " + ftag) in out,
      "t4: the output says the target changed and the build moved: %s" % out)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
shutil.rmtree(TMP, ignore_errors=True)
print("ok")
