"""gpuenv drift: an expected manifest against the doctor fixtures' nodes.

Each expected field changed in turn is reported with its expected and actual
values and exit 1; everything holding exits 0; PEP 440 ranges over driver
versions compare numerically (580.159.04 > 580.95.05); a probe snapshot works
as the expect file; something expected and absent is drift with actual
"none"; malformed or unreadable expect files exit 4 naming FILE:LINE:COL and
nothing is written to -o; the Prometheus output passes `promtool check
metrics` (skipped only where promtool is not installed)."""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(SRC, "tests", "fixtures", "doctor")
TMP = tempfile.mkdtemp(prefix="gpuenv-drift-")
PROMTOOL = shutil.which("promtool") or ("/usr/bin/promtool" if os.path.exists("/usr/bin/promtool") else None)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, timeout=120)


def write(name, text):
    p = os.path.join(TMP, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def fixture(name):
    return os.path.join(FIX, name, "facts.json")


def facts_variant(name, base, edit):
    with open(fixture(base)) as f:
        d = json.load(f)
    edit(d)
    return write(name + ".json", json.dumps(d))


def drift_json(expect, facts, *extra):
    r = run("--json", "drift", "--expect", expect, "--facts", facts, *extra)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, None


def checks_of(doc):
    return {c["check"]: c for c in doc["checks"]} if doc else {}


H200 = fixture("h200-2026-11-29")
HEALTHY = fixture("healthy")          # H100 80GB HBM3, driver 570.133.20, CUDA 12.8
NO_CUDNN = fixture("cpu-torch-gpu-host")
NO_DRIVER = fixture("driver-not-loaded")
for p in (H200, HEALTHY, NO_CUDNN, NO_DRIVER):
    check(os.path.exists(p), "fixture %s" % p)

# the H200 node as docs/hardware-results.md has it, plus a TensorRT copy
# (no fixture has one): a library record as the probe writes it
def add_tensorrt(d):
    lib = copy.deepcopy(d["libraries"][0])
    lib.update(family="nvinfer", path="/usr/lib/x86_64-linux-gnu/libnvinfer.so.10.3.0",
               name="libnvinfer.so.10.3.0", soname="libnvinfer.so.10", dist=None, site=None,
               where=["ldcache"], version={"version": "10.3.0", "source": "file-name",
                                           "from": "/usr/lib/x86_64-linux-gnu/libnvinfer.so.10.3.0"})
    d["libraries"].append(lib)


H200_TRT = facts_variant("h200-trt", "h200-2026-11-29", add_tensorrt)
ACTUAL = {"driver": "580.159.04", "cuda": "13.0", "gpu": "NVIDIA H200", "gpu_count": "1",
          "cudnn": "9.19.0.56", "nccl": "2.28.9", "tensorrt": "10.3.0"}

HOLD = {"driver": '">=575,<590"', "cuda": '"13.0"', "gpu": '"H200"', "gpu_count": "1",
        "cudnn": '">=9.10,<10"', "nccl": '"2.28.9"', "tensorrt": '"~=10.3"'}


def toml(fields):
    return "".join("%s = %s\n" % kv for kv in fields.items())


# ---- all hold: exit 0, every check listed with expected and actual --------
ALL = write("all.toml", "# the fleet's H200 line\n" + toml(HOLD))
r, doc = drift_json(ALL, H200_TRT)
check(r.returncode == 0 and doc and doc["status"] == "ok", "all hold: exit %d %r" % (r.returncode, r.stderr))
cs = checks_of(doc)
check(list(cs) == list(HOLD), "checks in order: %r" % list(cs))
for k, c in cs.items():
    check(c["holds"] and c["actual"] == ACTUAL[k] and c["expected"] == HOLD[k].strip('"'),
          "all hold: %s %r" % (k, c))
check(doc and doc["node"] == ACTUAL, "node values: %r" % (doc and doc["node"]))
r = run("drift", "--expect", ALL, "--facts", H200_TRT)
check(r.returncode == 0 and "all 7 checks hold" in r.stdout and "DRIFT" not in r.stdout,
      "text, all hold: %r" % r.stdout)

# ---- each field changed in turn: exit 1, that check alone, both values -----
CHANGED = {"driver": '"570.133.20"', "cuda": '"12.8"', "gpu": '"H100"', "gpu_count": "8",
           "cudnn": '"9.5.1.17"', "nccl": '">=2.29"', "tensorrt": '"none"'}
for key, value in CHANGED.items():
    fields = dict(HOLD)
    fields[key] = value
    p = write("changed-%s.toml" % key, toml(fields))
    r, doc = drift_json(p, H200_TRT)
    cs = checks_of(doc)
    check(r.returncode == 1 and doc and doc["status"] == "drift", "%s changed: exit %d" % (key, r.returncode))
    check([k for k, c in cs.items() if not c["holds"]] == [key], "%s changed: failing %r" % (key, cs))
    c = cs.get(key, {})
    check(c.get("expected") == value.strip('"') and c.get("actual") == ACTUAL[key] and c.get("why"),
          "%s changed: expected/actual %r" % (key, c))
    t = run("drift", "--expect", p, "--facts", H200_TRT)
    line = [ln for ln in t.stdout.splitlines() if ln.split()[1:2] == [key]]
    check(t.returncode == 1 and "drift in 1 of 7 checks" in t.stdout and line and
          line[0].split()[0] == "DRIFT" and "expected %s, actual %s" % (value.strip('"'), ACTUAL[key]) in line[0],
          "%s changed, text: %r" % (key, t.stdout))
    m = run("drift", "--expect", p, "--facts", H200_TRT, "--format", "prometheus")
    check(m.returncode == 1 and ('gpuenv_drift{check="%s",expected="%s",actual="%s"} 1'
                                 % (key, value.strip('"').replace('"', '\\"'), ACTUAL[key])) in m.stdout,
          "%s changed, metrics: %r" % (key, m.stdout))
    check(len(re.findall(r"^gpuenv_drift\{.*\} 0$", m.stdout, re.M)) == 6, "%s changed: six hold" % key)

# the other way round: the H200 line's manifest on an H100 node
r, doc = drift_json(ALL, HEALTHY)
failed = sorted(k for k, c in checks_of(doc).items() if not c["holds"])
check(r.returncode == 1 and failed == ["cuda", "cudnn", "driver", "gpu", "nccl", "tensorrt"],
      "H200 manifest on the H100 node: %r" % failed)
gpu = checks_of(doc).get("gpu", {})
check(gpu.get("actual") == "NVIDIA H100 80GB HBM3" and "GPU 0 is NVIDIA H100 80GB HBM3" in (gpu.get("why") or ""),
      "gpu why: %r" % gpu)

# ---- expected but absent: actual "none" ---------------------------------
r, doc = drift_json(write("cudnn.toml", 'cudnn = ">=9"\n'), NO_CUDNN)
c = checks_of(doc).get("cudnn", {})
check(r.returncode == 1 and c.get("actual") == "none" and not c.get("holds"), "no cuDNN: %r" % c)
r, doc = drift_json(write("drv.toml", 'driver = ">=535"\ngpu = "H100"\ngpu_count = ">=1"\n'), NO_DRIVER)
cs = checks_of(doc)
check(r.returncode == 1 and all(cs[k]["actual"] == v and not cs[k]["holds"] for k, v in
                               (("driver", "none"), ("gpu", "none"), ("gpu_count", "0"))),
      "no driver: %r" % cs)
r, doc = drift_json(write("none.toml", 'cudnn = "none"\ntensorrt = "none"\n'), NO_CUDNN)
check(r.returncode == 0, "none expected and none there: exit %d" % r.returncode)

# ---- ranges: driver versions compare as numbers ---------------------------
def driver_node(version):
    def edit(d):
        d["driver"]["version"] = version
        d["driver"]["kernel_module"] = version
    return facts_variant("driver-" + version, "h200-2026-11-29", edit)


RANGES = [  # (node driver, expected, holds)
    ("580.159.04", ">575,<590", True),
    ("580.159.04", ">580.95.05", True),      # 159 > 95 (as text "159" < "95")
    ("580.159.04", "<580.95.05", False),
    ("580.95.05", "580.95.05", True),
    ("580.95.05", "==580.95.5", True),       # PEP 440: 05 is 5
    ("580.95.05", "<580.95.4", False),       # 5 > 4 (as text "05" < "4")
    ("580.95.05", ">=580.95.10", False),
    ("580.95.05", "==580.*", True),
    ("580.95.05", "!=580.*", False),
    ("580.95.05", "~=580.95", True),
    ("575.64.03", ">=575,<590", True),
    ("590.44.01", ">=575,<590", False),
    ("570.133.20", ">=575,<590", False),
    ("535.104.05", "~=535.104", True),
    ("535.104.05", "==535", False),           # an exact 535 is 535.0.0
]
nodes = {}
for drv, spec, holds in RANGES:
    if drv not in nodes:
        nodes[drv] = driver_node(drv)
    p = write("range.toml", 'driver = "%s"\n' % spec)
    r, doc = drift_json(p, nodes[drv])
    c = checks_of(doc).get("driver", {})
    check(r.returncode == (0 if holds else 1) and c.get("holds") is holds and c.get("actual") == drv,
          "driver %s against %s: exit %d %r" % (drv, spec, r.returncode, c))
r, doc = drift_json(write("cuda-range.toml", 'cuda = ">=12.8,<13.1"\ncudnn = ">=9.10,<10"\n'), HEALTHY)
cs = checks_of(doc)
check(r.returncode == 1 and cs["cuda"]["holds"] and not cs["cudnn"]["holds"], "cuda/cudnn ranges: %r" % cs)

# ---- gpu names: through the knowledge base, or exactly --------------------
GPUS = [  # (node, expected, holds)
    (HEALTHY, "H100", True),                          # the KB's H100 (SXM, PCIe, NVL)
    (HEALTHY, "NVIDIA H100 80GB HBM3", True),
    (HEALTHY, "nvidia h100", True),
    (HEALTHY, "==NVIDIA H100 80GB HBM3", True),       # byte for byte
    (HEALTHY, "==H100", False),
    (HEALTHY, "H200", False),
    (HEALTHY, "Tesla T4", False),
    (HEALTHY, "Frobnicator 9000", False),             # unknown to the KB: exact
    (H200, "NVIDIA H200", True),
    (fixture("driver470-cu121"), "A100", True),
    (fixture("kb-arch-fallback"), "RTX 5090", True),
]
for node, name, holds in GPUS:
    r, doc = drift_json(write("gpu.toml", 'gpu = "%s"\n' % name), node)
    c = checks_of(doc).get("gpu", {})
    check(r.returncode == (0 if holds else 1) and c.get("holds") is holds,
          "gpu %r on %s: exit %d %r" % (name, node, r.returncode, c))
# two GPUs of one kind: each must match; a count of them
r, doc = drift_json(write("two.toml", 'gpu = "H100"\ngpu_count = 2\n'), fixture("mig-partial"))
cs = checks_of(doc)
check(r.returncode == 1 and cs["gpu_count"]["holds"] and not cs["gpu"]["holds"], "A100 x2 as H100: %r" % cs)

# ---- a probe snapshot as the expect file ---------------------------------
r, doc = drift_json(H200, H200)
check(r.returncode == 0 and doc and doc["from"] == "snapshot" and len(doc["checks"]) == 7,
      "snapshot against itself: exit %d %r" % (r.returncode, r.stderr))
r, doc = drift_json(H200, fixture("h200-probe-2026-11-29"))
check(r.returncode == 0, "the H200 snapshot against its probe twin: exit %d %r" % (r.returncode, doc))
r, doc = drift_json(H200, HEALTHY)
failed = sorted(k for k, c in checks_of(doc).items() if not c["holds"])
check(r.returncode == 1 and failed == ["cuda", "cudnn", "driver", "gpu", "nccl"], "snapshot drift: %r" % failed)
c = checks_of(doc).get("driver", {})
check(c.get("expected") == "580.159.04" and c.get("actual") == "570.133.20", "snapshot driver: %r" % c)
r, doc = drift_json(H200, H200_TRT)
c = checks_of(doc).get("tensorrt", {})
check(r.returncode == 1 and c.get("expected") == "none" and c.get("actual") == "10.3.0",
      "a TensorRT the snapshot did not have: %r" % c)
r, doc = drift_json(NO_DRIVER, H200)
c = checks_of(doc).get("driver", {})
check(r.returncode == 1 and c.get("expected") == "none" and c.get("actual") == "580.159.04",
      "driver gained since the snapshot: %r" % c)
# leading white space before the JSON still reads as a snapshot
with open(H200) as f:
    spaced = write("spaced.json", "\n  " + f.read())
check(run("drift", "--expect", spaced, "--facts", H200).returncode == 0, "snapshot after white space")
# from standard input
with open(ALL) as f:
    r = run("drift", "--expect", "-", "--facts", H200_TRT, stdin=f.read())
check(r.returncode == 0 and "<stdin>" in r.stdout, "expect from stdin: %d %r" % (r.returncode, r.stdout))

# ---- malformed and unreadable expect files: exit 4, FILE:LINE:COL --------
BAD = [  # (name, text, what stderr says)
    ("syntax.toml", 'driver = ">=575\n', r"syntax\.toml:1:\d+: "),
    ("unknown.toml", 'driver = ">=575"\ndrvier = "580"\n', r"unknown\.toml:2:1: unknown key 'drvier'.*\n.*did you mean 'driver'"),
    ("unknown2.toml", 'colour = "blue"\n', r"unknown2\.toml:1:1: unknown key 'colour'.*\n.*driver, cuda, gpu"),
    ("float.toml", "cuda = 12.8\n", r"float\.toml:1:8: 'cuda' must be a string, not float"),
    ("spec.toml", 'gpu_count = 1\ndriver = ">=abc"\n', r"spec\.toml:2:10: 'driver': not a PEP 440 specifier set"),
    ("version.toml", 'cudnn = "9.x"\n', r"version\.toml:1:9: 'cudnn': not a PEP 440 version"),
    ("count.toml", "gpu_count = -1\n", r"count\.toml:1:13: 'gpu_count': -1 is not a GPU count"),
    ("table.toml", "[driver]\nmin = 1\n", r"table\.toml:1:\d+: 'driver' must be a string, not table"),
    ("empty-value.toml", 'nccl = "  "\n', r"empty-value\.toml:1:8: 'nccl' is empty"),
    ("nothing.toml", "# nothing\n", r"nothing\.toml: the expect file names no check"),
    ("dup.toml", 'driver = "1"\ndriver = "2"\n', r"dup\.toml:2:\d+: "),
    ("trunc.json", '{"schema": "gpuenv.facts/1", "gpus": [', r"trunc\.json:1:\d+: "),
    ("notfacts.json", '{"hello": 1}\n', r"notfacts\.json"),
]
OUT = os.path.join(TMP, "out.prom")
for name, text, want in BAD:
    p = write(name, text)
    with open(OUT, "w") as f:
        f.write("old\n")
    for fmt in ("text", "prometheus"):
        r = run("drift", "--expect", p, "--facts", H200, "--format", fmt, "-o", OUT)
        check(r.returncode == 4 and re.search(want, r.stderr), "%s (%s): exit %d %r" % (name, fmt, r.returncode, r.stderr))
    with open(OUT) as f:
        check(f.read() == "old\n", "%s: -o untouched" % name)
missing = os.path.join(TMP, "no-such.toml")
r = run("drift", "--expect", missing, "--facts", H200, "-o", os.path.join(TMP, "never.prom"))
check(r.returncode == 4 and "no-such.toml" in r.stderr and not os.path.exists(os.path.join(TMP, "never.prom")),
      "unreadable expect: %d %r" % (r.returncode, r.stderr))
r = run("drift", "--expect", TMP, "--facts", H200)
check(r.returncode == 4 and TMP in r.stderr, "a folder as expect: %d %r" % (r.returncode, r.stderr))
r = run("drift", "--expect", ALL, "--facts", missing, "-o", os.path.join(TMP, "never.prom"))
check(r.returncode == 4 and not os.path.exists(os.path.join(TMP, "never.prom")), "unreadable facts: %d" % r.returncode)
check(not [f for f in os.listdir(TMP) if ".tmp." in f], "no temporary files left: %r" % os.listdir(TMP))

# ---- usage errors: exit 2, nothing written --------------------------------
for args in (["drift"], ["drift", "--expect", ALL, "--format", "yaml"],
             ["--json", "drift", "--expect", ALL, "--format", "prometheus"],
             ["drift", "--expect", ALL, "extra"], ["drift", "--expect", "-", "--facts", "-"]):
    r = run(*args, "-o", os.path.join(TMP, "never.prom"))
    check(r.returncode == 2 and "usage" in r.stderr + r.stdout, "%s: exit %d" % (args, r.returncode))
check(not os.path.exists(os.path.join(TMP, "never.prom")), "usage errors wrote nothing")

# ---- -o: written atomically on ok and on drift ----------------------------
r = run("drift", "--expect", write("drift.toml", 'driver = "<575"\n'), "--facts", H200,
        "--format", "prometheus", "-o", OUT)
with open(OUT) as f:
    prom = f.read()
check(r.returncode == 1 and r.stdout == "" and
      'gpuenv_drift{check="driver",expected="<575",actual="580.159.04"} 1\n' in prom,
      "-o on drift: %d %r" % (r.returncode, prom))
r = run("--json", "drift", "--expect", ALL, "--facts", H200_TRT, "-o", os.path.join(TMP, "out.json"))
with open(os.path.join(TMP, "out.json")) as f:
    check(r.returncode == 0 and json.load(f)["status"] == "ok", "--json -o")

# ---- the metrics: families, escaping, promtool -----------------------------
def metrics(expect, facts):
    r = run("drift", "--expect", expect, "--facts", facts, "--format", "prometheus")
    return r.returncode, r.stdout


def odd_gpu(d):
    d["gpus"][0]["name"] = 'Odd "GPU" \\ 5000'


ODD = facts_variant("odd", "h200-2026-11-29", odd_gpu)
ODD_EXPECT = write("odd.toml", 'gpu = "==Line\\nbreak \\"q\\" back\\\\slash"\ndriver = "580.159.04"\n')
samples = [metrics(ALL, H200_TRT), metrics(H200, HEALTHY), metrics(ODD_EXPECT, ODD),
           metrics(write("one.toml", 'nccl = "none"\n'), NO_DRIVER)]
for st, text in samples:
    check(text.endswith("\n") and text.count("# TYPE gpuenv_info gauge") == 1 and
          text.count("# HELP gpuenv_drift ") == 1 and "gpuenv_probe_duration_seconds " in text,
          "families: %r" % text)
    for fam in ("gpuenv_info", "gpuenv_drift", "gpuenv_probe_duration_seconds"):
        check(text.index("# HELP %s " % fam) < text.index("# TYPE %s " % fam) < text.index("\n%s" % fam),
              "%s: HELP, TYPE, then samples" % fam)
st, text = samples[2]
check('gpu="Odd \\"GPU\\" \\\\ 5000"' in text, "gpu name escaped in gpuenv_info: %r" % text)
check('expected="==Line\\nbreak \\"q\\" back\\\\slash",actual="Odd \\"GPU\\" \\\\ 5000"} 1' in text,
      "expected/actual escaped: %r" % text)
st, text = samples[3]
check('gpuenv_info{driver="none",cuda="none",gpu="none",cudnn="9.5.1.17",nccl="2.26.2",tensorrt="none"} 1' in text,
      "no driver: %r" % text)
if PROMTOOL:
    for i, (st, text) in enumerate(samples):
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "promtool check metrics, sample %d: %r %r" % (i, p.stdout, p.stderr))
    # and promtool can fail: a duplicate HELP line is refused
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=samples[0][1] + samples[0][1],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode != 0, "promtool refuses a broken exposition")
else:
    print("SKIP: promtool is not installed (Debian's prometheus package)")

# ---- this node, probed: the probe's own duration ---------------------------
r = run("drift", "--expect", write("any.toml", 'gpu_count = ">=0"\n'), "--format", "prometheus")
m = re.search(r"^gpuenv_probe_duration_seconds (\S+)$", r.stdout, re.M)
check(r.returncode == 0 and m and 0 < float(m.group(1)) < 60, "live probe: %d %r %r" % (r.returncode, r.stdout, r.stderr))

# ---- a full disk: the output was not written -------------------------------
if os.path.exists("/dev/full"):
    with open("/dev/full", "w") as full:
        p = subprocess.run([BIN, "drift", "--expect", ALL, "--facts", H200], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    check(p.returncode == 4, "> /dev/full: exit %d" % p.returncode)

shutil.rmtree(TMP, ignore_errors=True)
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
