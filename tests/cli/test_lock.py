"""gpuenv lock and gpuenv tree on the PyTorch-shaped fixture index
(tests/fixtures/torch_index.py), over file:// and over HTTP from
tests/fixtures/index_server.py on 127.0.0.1:

  - the satellite example (../shared/examples) as it is: a100 and t4 get
    their groups' pins from the project's cu118 source, jetson its JetPack
    index; h200 (Python 3.12) has no solution, because torchvision ^0.16
    has no cp312 wheel, and the explanation says so;
  - an `auto` project: an RTX 5090, a T4 on an R560 driver, an H200 and a
    CPU target each get the build the KB picks (`gpuenv kb torch` agrees),
    torchvision always of torch's build, no GPU target a +cpu build;
  - a Kepler target with today's torch fails with the hardware reason and
    leaves the previous lock as it was;
  - byte-identical re-locks, --check (fresh / stale / missing), --json,
    tree, a warm HTTP lock that only revalidates, --offline, a failing
    server, bad manifests and options."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import urllib.request

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import index_server  # noqa: E402
import torch_index  # noqa: E402

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-lock-test-")
CACHE = os.path.join(TMP, "cache")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=300)
    return p.returncode, p.stdout, p.stderr


def lock_toml(project, target):
    with open(os.path.join(project, "pylock.%s.toml" % target), "rb") as f:
        return tomllib.load(f)


def pkgs(lk):
    return {p["name"]: p for p in lk["packages"]}


ROOT = os.path.join(TMP, "index")
URLS = torch_index.build(ROOT)
PYPI, TORCH, JETPACK = URLS["pypi"], URLS["torch-index"], URLS["jetpack"]


def lock_args(project, torch=TORCH, pypi=PYPI, jetpack=JETPACK, extra=()):
    a = ["lock", "--project", project, "--index-url", pypi, "--torch-index", torch, "--cache-dir", CACHE]
    with open(os.path.join(project, "pyproject.toml")) as f:
        text = f.read()
    if 'name = "pytorch"' in text:
        a += ["--source-url", "pytorch=%s/cu118/" % torch]
    if 'name = "nvidia-jetpack"' in text:
        a += ["--source-url", "nvidia-jetpack=" + jetpack]
    return a + list(extra)


# ---- the satellite example, as it is -------------------------------------------

SAT = os.path.join(TMP, "satellite")
os.makedirs(SAT)
shutil.copy(os.path.join(SHARED, "examples", "satellite-classifier", "pyproject.toml"), SAT)
rc, out, err = run(*lock_args(SAT))
check(rc == 1, "satellite: exit 1 (h200 has no solution), got %d: %s%s" % (rc, out, err))
for t in ("a100", "t4", "jetson"):
    check(os.path.exists(os.path.join(SAT, "pylock.%s.toml" % t)), "satellite: pylock.%s.toml written" % t)
check(not os.path.exists(os.path.join(SAT, "pylock.h200.toml")), "satellite: no pylock.h200.toml")
check(re.search(r"h200: no solution", out) and "torchvision" in out and "cp312" in out,
      "satellite: h200's explanation names torchvision and cp312: %s" % out)
if os.path.exists(os.path.join(SAT, "pylock.a100.toml")):
    a100, t4 = pkgs(lock_toml(SAT, "a100")), pkgs(lock_toml(SAT, "t4"))
    check(a100["torch"]["version"].endswith("+cu118") and a100["torch"]["version"].startswith("2.1."),
          "a100: torch ^2.1 from the cu118 source: %s" % a100["torch"]["version"])
    check(t4["torch"]["version"].endswith("+cu118"), "t4: torch from the cu118 source")
    check(a100["nvidia-cudnn-cu11"]["version"] == "8.9.2.26" and a100["tensorrt"]["version"] == "8.6.1.6",
          "a100: its group's cudnn and tensorrt pins")
    check(t4["nvidia-cudnn-cu11"]["version"] == "8.7.0.84" and t4["tensorrt"]["version"] == "8.5.3.1",
          "t4: its group's cudnn and tensorrt pins (the A100 group's never meet them)")
    check("/cu118/" in a100["torch"]["index"] and "/cu118/" in a100["torchvision"]["index"],
          "a100: torch and torchvision from the project's pytorch source")
    check(a100["torchvision"]["version"].split("+")[1:] == a100["torch"]["version"].split("+")[1:],
          "a100: torchvision of torch's build")
    for name in ("pytest", "black"):
        check(name not in a100, "a100: the dev group is not a100's (%s)" % name)
    lk = lock_toml(SAT, "t4")
    g = lk["tool"]["gpuenv"]
    check(lk["lock-version"] == "1.0" and lk["created-by"] == "gpuenv", "t4: PEP 751 header")
    check(g["target"] == "t4" and g["driver"] == "525.85.12" and g["backend"] == "cu118"
          and g["compute-capability"] == "7.5", "t4: the target's facts and build in [tool.gpuenv]: %s" % g)
    check("525.85.12" in g.get("backend-reason", ""), "t4: the build's reason cites the driver")
    tw = t4["torch"]
    check(tw["wheels"][0]["hashes"]["sha256"] and tw["wheels"][0]["size"] > 0, "t4: torch's wheel hash and size")
    check("reason" in tw.get("tool", {}).get("gpuenv", {}), "t4: torch's [packages.tool.gpuenv] reason")
    for p in lk["packages"]:
        for w in p.get("wheels", []):
            check("cp310" in w["name"] or "py3" in w["name"] or "none-any" in w["name"],
                  "t4: %s is a Python 3.10 wheel" % w["name"])
if os.path.exists(os.path.join(SAT, "pylock.jetson.toml")):
    j = pkgs(lock_toml(SAT, "jetson"))
    check("jetson" in j["torch"]["index"] and "aarch64" in j["torch"]["wheels"][0]["name"],
          "jetson: torch from the JetPack source, an aarch64 wheel")
    check(all("x86_64" not in w["name"] for p in j.values() for w in p.get("wheels", [])),
          "jetson: no x86_64 wheel")

# --dump: the failing h200 resolution as a scenario that replays with no index
DUMP = os.path.join(TMP, "dump")
os.makedirs(DUMP)
rc, out, err = run(*lock_args(SAT, extra=["--target", "h200", "--dump", DUMP]))
sc = os.path.join(DUMP, "scenario.h200.toml")
check(rc == 1 and os.path.exists(sc), "--dump writes the failing target's scenario: %d %s%s" % (rc, out, err))
if os.path.exists(sc):
    rc2, out2, err2 = run("debug", "resolve", sc)
    check(rc2 == 1 and "torchvision <0.17.0,>=0.16.0" in out2 + err2,
          "the dumped scenario replays the same failure: %d %s%s" % (rc2, out2, err2))

# the same inputs: byte-identical, reported unchanged
before = {t: open(os.path.join(SAT, "pylock.%s.toml" % t), "rb").read() for t in ("a100", "t4")}
rc, out, err = run(*lock_args(SAT, extra=["--target", "a100", "--target", "t4"]))
check(rc == 0 and out.count("(unchanged)") == 2, "satellite re-lock: unchanged: %s%s" % (out, err))
check(all(open(os.path.join(SAT, "pylock.%s.toml" % t), "rb").read() == b for t, b in before.items()),
      "satellite re-lock: byte-identical")

# --check: fresh, missing, then stale after a manifest change
rc, out, err = run("lock", "--project", SAT, "--check", "--target", "a100", "--target", "t4")
check(rc == 0 and out.count("fresh") == 2, "--check fresh: %d %s%s" % (rc, out, err))
rc, out, err = run("lock", "--project", SAT, "--check", "--json")
st = {x["target"]: x["status"] for x in json.loads(out)} if out.startswith("[") else {}
check(rc == 1 and st.get("h200") == "missing" and st.get("t4") == "fresh", "--check --json: %s" % out)
with open(os.path.join(SAT, "pyproject.toml"), "a") as f:
    f.write("\n# a comment changes nothing\n")
rc, out, _ = run("lock", "--project", SAT, "--check", "--target", "t4")
check(rc == 0, "--check: a comment leaves the lock fresh: %s" % out)
text = open(os.path.join(SAT, "pyproject.toml")).read()
with open(os.path.join(SAT, "pyproject.toml"), "w") as f:  # another target's driver
    f.write(text.replace('driver = "535.104.05"', 'driver = "550.54.15"'))
rc, out, _ = run("lock", "--project", SAT, "--check", "--target", "a100", "--target", "t4")
check(rc == 1 and re.search(r"^a100: .* stale", out, re.M) and re.search(r"^t4: .* fresh", out, re.M),
      "--check: editing a100's target makes a100 stale, leaves t4 fresh: %s" % out)
with open(os.path.join(SAT, "pyproject.toml"), "w") as f:
    f.write(text.replace('pillow = ">=9.0"', 'pillow = ">=10.0"'))
rc, out, _ = run("lock", "--project", SAT, "--check", "--target", "t4")
check(rc == 1 and "stale" in out, "--check: a changed constraint makes the lock stale: %s" % out)
check(open(os.path.join(SAT, "pylock.t4.toml"), "rb").read() == before["t4"], "--check writes nothing")

# tree
rc, out, err = run("tree", "--project", SAT, "--target", "t4")
check(rc == 0 and "pylock.t4.toml (target t4" in out and re.search(r"^torch 2\.1\.\d\+cu118$", out, re.M)
      and "├── " in out, "tree: %s%s" % (out, err))
rc, out, _ = run("tree", "--project", SAT, "--target", "t5")
check(rc == 2 and "did you mean 't4'" in _, "tree: unknown target suggests t4: %s" % _)

# ---- an auto project: the hardware picks the build ---------------------------------

AUTO = os.path.join(TMP, "auto")
os.makedirs(AUTO)
TARGETS = {
    "rtx5090": ('gpu = "RTX 5090"\ndriver = "575.57.08"', "GeForce RTX 5090", "575.57.08"),
    "t4": ('gpu = "T4"\ndriver = "560.35.03"', "T4", "560.35.03"),
    "h200": ('gpu = "H200"\ndriver = "580.159.04"', "H200", "580.159.04"),
    "cpu": ('gpu = "none"', None, None),
}
with open(os.path.join(AUTO, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "auto-demo"\nversion = "1.0"\nrequires-python = ">=3.10"\n'
            'dependencies = ["torch>=2.6", "torchvision", "numpy"]\n\n[tool.gpuenv]\ntorch-backend = "auto"\n')
    for name, (body, _, _) in TARGETS.items():
        f.write('\n[tool.gpuenv.targets.%s]\n%s\npython = "3.12"\nplatform = "manylinux_2_28_x86_64"\n'
                % (name, body))


proc, port = index_server.start(ROOT, "--max-age", "0")
try:
    base = "http://127.0.0.1:%d" % port
    HTTP = dict(torch=base + "/whl", pypi=base + "/pypi/simple/")
    rc, out, err = run(*lock_args(AUTO, **HTTP))
    check(rc == 0, "auto: every target locks over HTTP: %d %s%s" % (rc, out, err))
    for name, (_, gpu, driver) in TARGETS.items():
        p = os.path.join(AUTO, "pylock.%s.toml" % name)
        if not os.path.exists(p):
            check(False, "auto: pylock.%s.toml" % name)
            continue
        lk = lock_toml(AUTO, name)
        k = pkgs(lk)
        tv, tvv = k["torch"]["version"], k["torchvision"]["version"]
        local = tv.split("+")[1] if "+" in tv else ""
        check(tvv.endswith("+" + local), "auto %s: torchvision %s of torch %s's build" % (name, tvv, tv))
        check(lk["tool"]["gpuenv"].get("backend") == local, "auto %s: [tool.gpuenv] backend %s" % (name, local))
        if gpu is None:
            check(local == "cpu", "auto cpu: a +cpu build (%s)" % tv)
            continue
        check(local != "cpu" and local.startswith("cu"), "auto %s: a GPU target never gets a CPU build (%s)"
              % (name, tv))
        # lock and `kb torch` agree: the build kb torch would install
        m = re.search(r"would install torch (\S+) (cu\d+)", run("kb", "torch", "--gpu", gpu, "--driver", driver)[1])
        check(m and m.group(2) == local and tv.startswith(m.group(1) + "."),
              "auto %s: lock's torch %s is kb torch's pick %s" % (name, tv, m and m.groups()))
    # the right builds for the hardware
    want = {"rtx5090": "cu128", "t4": "cu126", "h200": "cu130"}
    for name, b in want.items():
        if os.path.exists(os.path.join(AUTO, "pylock.%s.toml" % name)):
            v = pkgs(lock_toml(AUTO, name))["torch"]["version"]
            check(v.endswith("+" + b), "auto %s: torch %s is a %s build" % (name, v, b))

    # warm: nothing changed, only revalidations (max-age 0), no wheel or metadata refetched
    urllib.request.urlopen(base + "/_reset").read()
    rc, out, err = run(*lock_args(AUTO, **HTTP))
    log = json.loads(urllib.request.urlopen(base + "/_stats").read())["log"]
    check(rc == 0 and out.count("(unchanged)") == 4, "auto warm: unchanged: %s%s" % (out, err))
    check(all(e["conditional"] for e in log) and not any(e["path"].endswith((".metadata", ".whl")) for e in log),
          "auto warm: only conditional page requests: %s" % [e for e in log if not e["conditional"]][:5])
    # offline: the cache alone
    rc, out, err = run(*lock_args(AUTO, **HTTP, extra=["--offline"]))
    check(rc == 0 and out.count("(unchanged)") == 4, "auto --offline from the cache: %s%s" % (out, err))
    # --json
    rc, out, err = run(*lock_args(AUTO, **HTTP, extra=["--json", "--target", "t4"]))
    j = json.loads(out) if out.startswith("[") else []
    check(rc == 0 and j and j[0]["target"] == "t4" and j[0]["backend"] == "cu126" and "torch" in j[0]["packages"],
          "--json: %s" % out[:300])

    # a failing server: an error naming the URL, exit 4, the lock untouched
    faults = os.path.join(TMP, "faults.json")
    with open(faults, "w") as f:
        json.dump({"/pypi/simple/numpy/": {"status": [500] * 50}}, f)
    proc2, port2 = index_server.start(ROOT, "--max-age", "0", "--faults", faults)
    try:
        b2 = "http://127.0.0.1:%d" % port2
        t4_before = open(os.path.join(AUTO, "pylock.t4.toml"), "rb").read()
        rc, out, err = run(*lock_args(AUTO, torch=b2 + "/whl", pypi=b2 + "/pypi/simple/",
                                      extra=["--target", "t4", "--retries", "2",
                                             "--cache-dir", os.path.join(TMP, "cache2")]))
        check(rc == 4 and "/pypi/simple/numpy/" in err and "500" in err,
              "a 500 from the index: exit 4 naming the URL: %d %s%s" % (rc, out, err))
        check(open(os.path.join(AUTO, "pylock.t4.toml"), "rb").read() == t4_before,
              "a failed lock leaves the previous lock untouched")
    finally:
        proc2.terminate()
        proc2.wait()
finally:
    proc.terminate()
    proc.wait()

# ---- a GPU target pinned to the CPU index: an error, never a CPU build ---------

PIN = os.path.join(TMP, "pinned-cpu")
os.makedirs(PIN)
with open(os.path.join(PIN, "pyproject.toml"), "w") as f:
    f.write('[tool.poetry]\nname = "p"\nversion = "0"\n[tool.poetry.dependencies]\npython = "^3.10"\n'
            'torch = { version = ">=2.6", source = "cpuonly" }\n'
            '[[tool.poetry.source]]\nname = "cpuonly"\nurl = "https://download.pytorch.org/whl/cpu"\n'
            'priority = "explicit"\n'
            '[tool.gpuenv.targets.h200]\ngpu = "H200"\ndriver = "580.159.04"\npython = "3.12"\n'
            'platform = "manylinux_2_28_x86_64"\n')
rc, out, err = run(*lock_args(PIN, extra=["--source-url", "cpuonly=%s/cpu/" % TORCH]))
check(rc != 0 and not os.path.exists(os.path.join(PIN, "pylock.h200.toml")),
      "a GPU target pinned to the CPU index is refused: %d %s%s" % (rc, out, err))
check("cpu" in (out + err).lower() and "h200" in (out + err), "... and the message says why: %s%s" % (out, err))

# ---- Kepler with today's torch: no solution, the hardware named, the old lock kept --------

KEP = os.path.join(TMP, "kepler")
os.makedirs(KEP)
with open(os.path.join(KEP, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "k"\nversion = "0"\ndependencies = ["torch>=2.8", "numpy"]\n'
            '[tool.gpuenv.targets.k80]\ngpu = "Tesla K80"\ndriver = "470.82.01"\npython = "3.10"\n'
            'platform = "manylinux_2_28_x86_64"\n')
with open(os.path.join(KEP, "pylock.k80.toml"), "w") as f:
    f.write("# the previous lock\n")
rc, out, err = run(*lock_args(KEP))
check(rc == 1 and "no solution" in out and "sm_37" in out and "Kepler" in out,
      "kepler: no solution naming sm_37 / Kepler: %d %s%s" % (rc, out, err))
check(open(os.path.join(KEP, "pylock.k80.toml")).read() == "# the previous lock\n",
      "kepler: the previous lock untouched")

# ---- no targets declared: one pylock.toml for the machine (a probe snapshot here) -------

NT = os.path.join(TMP, "no-targets")
os.makedirs(NT)
with open(os.path.join(NT, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "n"\nversion = "0"\ndependencies = ["torch", "torchvision", "numpy"]\n')
snap = json.load(open(os.path.join(SRC, "docs", "hardware", "h200-2026-11-29", "probe.json")))
snap["host"].update(libc="glibc", libc_version="2.39")  # the H200 machine's Ubuntu 24.04
facts = os.path.join(TMP, "h200-facts.json")
with open(facts, "w") as f:
    json.dump(snap, f)
rc, out, err = run(*lock_args(NT, extra=["--facts", facts]))
check(rc == 0 and os.path.exists(os.path.join(NT, "pylock.toml")), "no targets: pylock.toml for the snapshot's "
      "machine: %d %s%s" % (rc, out, err))
if os.path.exists(os.path.join(NT, "pylock.toml")):
    with open(os.path.join(NT, "pylock.toml"), "rb") as f:
        lk = tomllib.load(f)
    g, k = lk["tool"]["gpuenv"], pkgs(lk)
    check(g["origin"] == "snapshot" and g["platform"] == "manylinux_2_39_x86_64" and g["python"].startswith("3.12"),
          "no targets: the probed target's facts: %s" % g)
    check(k["torch"]["version"].endswith("+cu130") and "cp312" in k["torch"]["wheels"][0]["name"],
          "no targets: the H200 (driver 580) gets a cu130 build for its Python 3.12: %s" % k["torch"]["version"])
    rc, out, _ = run("lock", "--project", NT, "--check", "--facts", facts)
    check(rc == 0 and "fresh" in out, "no targets: --check fresh on the same machine: %s" % out)
    snap["driver"]["version"] = "575.57.08"
    with open(facts, "w") as f:
        json.dump(snap, f)
    rc, out, _ = run("lock", "--project", NT, "--check", "--facts", facts)
    check(rc == 1 and "stale" in out, "no targets: another driver makes the lock stale: %s" % out)
rc, out, _ = run("probe", "--json")
host = json.loads(out).get("host", {}) if rc in (0, 1) and out.startswith("{") else {}
check(host.get("libc") == "glibc" and re.match(r"^2\.\d+$", host.get("libc_version", "")),
      "probe --json: host.libc and libc_version on this glibc machine: %s" % host)

# ---- CUDA-suffixed packages follow the driver rule too ------------------------------

CS = os.path.join(TMP, "cuda-suffixed")
os.makedirs(CS)
with open(os.path.join(CS, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "c"\nversion = "0"\ndependencies = ["nvidia-cudnn-cu12", "numpy"]\n'
            '[tool.gpuenv.targets.old]\ngpu = "T4"\ndriver = "470.82.01"\npython = "3.12"\n'
            'platform = "manylinux_2_28_x86_64"\n'
            '[tool.gpuenv.targets.h200]\ngpu = "H200"\ndriver = "580.159.04"\npython = "3.12"\n'
            'platform = "manylinux_2_28_x86_64"\n')
rc, out, err = run(*lock_args(CS))
check(rc == 1 and os.path.exists(os.path.join(CS, "pylock.h200.toml"))
      and not os.path.exists(os.path.join(CS, "pylock.old.toml")),
      "nvidia-cudnn-cu12: locked for the H200, refused on a CUDA 11 driver: %d %s%s" % (rc, out, err))
check("built for CUDA 12" in out and "470.82.01" in out, "... and the explanation says why: %s" % out)

# ---- bad input -----------------------------------------------------------------------

BAD = os.path.join(TMP, "bad")
os.makedirs(BAD)
with open(os.path.join(BAD, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "b"\ndependencies = ["numpy"\n')
rc, out, err = run("lock", "--project", BAD, "--index-url", PYPI)
check(rc == 4 and re.search(r"pyproject\.toml:\d+:\d+:", err), "not TOML: exit 4 with file:line:col: %s" % err)
rc, out, err = run(*lock_args(SAT, extra=["--source-url", "pytorc=http://x/"]))
check(rc == 2 and "did you mean 'pytorch'" in err, "--source-url unknown name: usage, suggestion: %s" % err)
rc, out, err = run(*lock_args(SAT, extra=["--target", "t5"]))
check(rc == 2 and "did you mean 't4'" in err, "--target unknown: usage, suggestion: %s" % err)
rc, out, err = run("lock", "--project", os.path.join(TMP, "nowhere"))
check(rc == 4 and "nowhere" in err, "no project: exit 4 naming it: %s" % err)
rc, out, _ = run("lock", "--help")
check(rc == 0 and "--check" in out and "--offline" in out, "lock --help")
rc, out, _ = run("tree", "--help")
check(rc == 0 and "--target" in out, "tree --help")

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
