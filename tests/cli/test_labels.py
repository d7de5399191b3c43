"""gpuenv labels (issue 12, items 1 and 2; docs/labels.md).

- The H200 snapshots (tests/fixtures/doctor/h200-*-2026-11-29) get exactly the
  labels GPU Feature Discovery's documentation gives for that GPU, field by
  field (GFD's README, "Generated Labels", with the values nvidia-smi gave on
  that machine: docs/hardware-results.md), and no other nvidia.com/ label.
- A node without a GPU (a probe of an empty --root) and one whose driver is
  not loaded get the labels that say so, exit 0.
- Odd product names (parentheses, 80 characters, non-ASCII, escaped bytes,
  dashes at the ends) are escaped as GFD sanitises them, or left out with a
  warning; every value that comes out is a valid Kubernetes label value.
- --format nfd parses under node-feature-discovery's documented grammar (a
  checker written here from NFD's customization guide, "Local feature
  source"), expires when --expiry says, is written atomically.
- --selector YAML for every target of the satellite example parses as
  Kubernetes objects (/usr/bin/python3's kubernetes models, V1PodSpec), uses
  only valid operators, and selects the H200 node exactly when the target
  runs there; its driver terms are checked against driver versions around
  the floor.
- target.<NAME> labels of the H200 against the satellite example: h200
  true, t4 / a100 / jetson false (with and without locks).
- The prefix: --prefix, [tool.gpuenv] label-prefix, NFD's denied namespaces;
  usage errors 2, unreadable inputs 4.
"""
import copy
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml
from kubernetes.client import ApiClient

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("GPUENV_SHARED", os.path.join(SRC, "..", "shared"))
FIX = os.path.join(SRC, "tests", "fixtures", "doctor")
H200 = [os.path.join(FIX, n, "facts.json") for n in ("h200-2026-11-29", "h200-probe-2026-11-29")]
SATELLITE = os.path.join(SHARED, "examples", "satellite-classifier")

failures = []
TMP = tempfile.mkdtemp(prefix="gpuenv-labels-test-")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=None, cwd=TMP):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=300, input=stdin, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def labels(*args, **kw):
    rc, out, err = run("labels", *args, **kw)
    d = {}
    for line in out.splitlines():
        k, _, v = line.partition("=")
        d[k] = v
    return rc, d, err


# ---- Kubernetes' syntax (apimachinery validation: IsQualifiedName, IsValidLabelValue) ----
NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def key_ok(k):
    prefix, _, name = k.rpartition("/")
    if "/" in prefix:
        return False
    if prefix and (len(prefix) > 253 or not DNS.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(NAME.match(name))


def value_ok(v):
    return v == "" or (len(v) <= 63 and bool(NAME.match(v)))


# ---- 1. the H200 against GFD's documentation, field by field ----
# GFD README "Generated Labels" (NVIDIA/k8s-device-plugin docs/gpu-feature-discovery):
# name -> how GFD forms it, and the H200's fact (docs/hardware-results.md, 2026-11-29)
GFD_H200 = {
    # driver version "X.Y.Z" split at its dots (nvidia-smi: 580.159.04); the
    # revision as written ("02" in GFD's example, "04" here)
    "nvidia.com/cuda.driver.major": "580",
    "nvidia.com/cuda.driver.minor": "159",
    "nvidia.com/cuda.driver.rev": "04",
    "nvidia.com/cuda.driver-version.major": "580",
    "nvidia.com/cuda.driver-version.minor": "159",
    "nvidia.com/cuda.driver-version.revision": "04",
    "nvidia.com/cuda.driver-version.full": "580.159.04",
    # the CUDA version the driver supports (nvidia-smi: CUDA 13.0)
    "nvidia.com/cuda.runtime.major": "13",
    "nvidia.com/cuda.runtime.minor": "0",
    "nvidia.com/cuda.runtime-version.major": "13",
    "nvidia.com/cuda.runtime-version.minor": "0",
    "nvidia.com/cuda.runtime-version.full": "13.0",
    # compute capability 9.0; family of 9.x: hopper
    "nvidia.com/gpu.compute.major": "9",
    "nvidia.com/gpu.compute.minor": "0",
    "nvidia.com/gpu.family": "hopper",
    "nvidia.com/gpu.count": "1",
    # memory in MiB: nvidia-smi 143771 MiB
    "nvidia.com/gpu.memory": "143771",
    # the model with spaces as dashes ("Tesla-T4" for "Tesla T4")
    "nvidia.com/gpu.product": "NVIDIA-H200",
    # no machine type file read (a snapshot): GFD's "unknown"
    "nvidia.com/gpu.machine": "unknown",
    # MIG mode is reported (disabled), so the GPU is MIG-capable
    "nvidia.com/mig.capable": "true",
    # PCI class 0x030200, a 3D controller: compute
    "nvidia.com/gpu.mode": "compute",
}
for facts in H200:
    rc, got, err = labels("--facts", facts)
    check(rc == 0, "H200 %s: exit %d %s" % (facts, rc, err))
    for k, v in GFD_H200.items():
        check(got.get(k) == v, "H200 %s: %s = %r, GFD gives %r" % (os.path.basename(os.path.dirname(facts)),
                                                                   k, got.get(k), v))
    extra = sorted(k for k in got if k.startswith("nvidia.com/") and k not in GFD_H200)
    check(not extra, "H200: nvidia.com labels GFD's documentation does not give for it: %r" % extra)
    # gpuenv's own, from the same facts
    own = {"gpuenv.io/present": "true", "gpuenv.io/driver.state": "ok", "gpuenv.io/gpu.sm": "sm_90",
           "gpuenv.io/cuda.toolkit": "13.0", "gpuenv.io/cudnn": "9.19.0.56", "gpuenv.io/nccl": "2.28.9"}
    for k, v in own.items():
        check(got.get(k) == v, "H200: %s = %r, want %r" % (k, got.get(k), v))
    check(not any(k.startswith("gpuenv.io/target.") for k in got), "no project, no target labels: %r" % got)
    check(all(key_ok(k) and value_ok(v) for k, v in got.items()), "H200 labels valid: %r" % got)
    check(list(got) == sorted(got), "sorted by key")
    rc2, again, _ = labels("--facts", facts)
    check(again == got, "deterministic")

# text and JSON agree
rc, txt, _ = labels("--facts", H200[1])
rc, out, err = run("labels", "--facts", H200[1], "--format", "json")
j = json.loads(out)
check(rc == 0 and j["labels"] == txt and j["prefix"] == "gpuenv.io", "--format json = text: %r" % j.get("labels"))
rc, out2, _ = run("--json", "labels", "--facts", H200[1])
check(out2 == out, "--json = --format json")

# --no-gfd: gpuenv's own only (a node where GFD itself runs)
rc, own_only, err = labels("--facts", H200[1], "--no-gfd")
check(rc == 0 and own_only == {k: v for k, v in txt.items() if not k.startswith("nvidia.com/")},
      "--no-gfd: the gpuenv.io labels alone: %r" % own_only)
# GFD's machine type file, sanitised as GFD does; unreadable: "unknown" and a warning
mt = os.path.join(TMP, "product_name")
open(mt, "w").write("PowerEdge R750xa (Dell)\n")
rc, got, err = labels("--facts", H200[1], "--machine-type-file", mt)
check(got.get("nvidia.com/gpu.machine") == "PowerEdge-R750xa-Dell", "machine type file: %r" % got.get("nvidia.com/gpu.machine"))
rc, got, err = labels("--facts", H200[1], "--machine-type-file", os.path.join(TMP, "nope"))
check(rc == 0 and got.get("nvidia.com/gpu.machine") == "unknown" and "machine-type-file" in err,
      "missing machine type file: unknown, a warning: %r %s" % (got.get("nvidia.com/gpu.machine"), err))

# ---- 2. no GPU, no driver ----
empty = os.path.join(TMP, "empty-root")
os.makedirs(empty)
p = subprocess.run([BIN, "probe", "--json", "--gpus-only", "--root", empty], capture_output=True, text=True)
nogpu = json.loads(p.stdout)
check(nogpu["driver"]["state"] == "no-hardware", "empty root probes as no-hardware: %r" % nogpu["driver"]["state"])
rc, got, err = labels("--facts", "-", stdin=p.stdout)
check(rc == 0, "no GPU: exit 0 (%d %s)" % (rc, err))
check(got.get("nvidia.com/gpu.count") == "0" and got.get("gpuenv.io/present") == "false" and
      got.get("gpuenv.io/driver.state") == "no-hardware", "no GPU: labels say so: %r" % got)
check(not any(k.startswith("nvidia.com/gpu.product") or k.startswith("nvidia.com/cuda.") for k in got),
      "no GPU: no product or driver labels: %r" % got)

rc, got, err = labels("--facts", os.path.join(FIX, "driver-not-loaded", "facts.json"))
check(rc == 0, "driver not loaded: exit 0 (%d %s)" % (rc, err))
check(got.get("nvidia.com/gpu.count") == "0" and got.get("gpuenv.io/present") == "false" and
      got.get("gpuenv.io/driver.state") == "not-loaded", "driver not loaded: labels say so: %r" % got)
check("nvidia.com/cuda.driver-version.full" not in got, "driver not loaded: no driver version label")

# the live machine (this test host may have no GPU): never an error
rc, got, err = labels(cwd=empty)
check(rc == 0 and "nvidia.com/gpu.count" in got and "gpuenv.io/present" in got, "live probe: %d %r %s" % (rc, got, err))

# a Jetson (no NVML): GFD's Tegra path, the GPU CUDA enumerates, the driver "unknown.unknown.unknown"
p = subprocess.run([BIN, "probe", "--json", "--gpus-only", "--root", os.path.join(SRC, "tests", "fixtures", "hw",
                    "jetson-orin")], capture_output=True, text=True)
rc, got, err = labels("--facts", "-", stdin=p.stdout)
jet = json.loads(p.stdout)
want = {"nvidia.com/gpu.product": "Orin", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.compute.major": "8",
        "nvidia.com/gpu.compute.minor": "7", "nvidia.com/gpu.family": "ampere",
        "nvidia.com/gpu.memory": str(jet["gpus"][0]["memory_total"] // 2**20), "nvidia.com/mig.capable": "false",
        "nvidia.com/gpu.mode": "unknown", "nvidia.com/cuda.driver-version.full": "unknown.unknown.unknown",
        "nvidia.com/cuda.driver.major": "unknown", "gpuenv.io/present": "true", "gpuenv.io/gpu.sm": "sm_87"}
check(rc == 0 and all(got.get(k) == v for k, v in want.items()),
      "Jetson: %r" % {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v})

# ---- 3. escaping odd product names ----
base = json.load(open(H200[1]))


def gfd_sanitise(s):
    # GFD internal/lm/resource.go sanitise: drop [^A-Za-z0-9-_. ], words joined by '-'
    s = re.sub(r"[^A-Za-z0-9\-_. ]", "", s)
    return "-".join(w for w in s.split(" ") if w)


names = [
    ("NVIDIA H200 (SXM 141GB)", "NVIDIA-H200-SXM-141GB"),
    ("NVIDIA  Tésla   V100\u2003PCIe", "NVIDIA-Tsla-V100PCIe"),
    ("NVIDIA \\xffA100\\x00 80GB", "NVIDIA-A100-80GB"),   # facts-escaped bytes (docs/probe-schema.md)
    (" -NVIDIA X_Y.Z- ", "NVIDIA-X_Y.Z"),                 # ends trimmed (GFD would give an invalid value)
    ("x" * 80, None),                                     # too long even escaped: left out
    ("(((", ""),                                          # nothing left: empty, as GFD gives it
]
for name, want in names:
    f = copy.deepcopy(base)
    f["gpus"][0]["name"] = name
    path = os.path.join(TMP, "odd.json")
    json.dump(f, open(path, "w"))
    rc, got, err = labels("--facts", path)
    check(rc == 0, "odd name %r: exit %d" % (name, rc))
    check(got.get("nvidia.com/gpu.product") == want, "odd name %r: product %r, want %r" %
          (name, got.get("nvidia.com/gpu.product"), want))
    raw = name.encode().decode("unicode_escape") if "\\x" in name else name
    g = gfd_sanitise(raw).strip("-_.")
    if want is not None:
        check(g == want, "GFD's rule gives %r for %r (test table)" % (g, name))
    else:
        check("gpu.product" in err and "left out" in err, "odd name %r: a warning: %s" % (name, err))
    check(all(value_ok(v) for v in got.values()), "odd name %r: every value valid: %r" % (name, got))
    check(got.get("nvidia.com/gpu.count") == "1", "odd name %r: the other labels stay" % name)

# a library version that is not a label value is escaped, with a warning
f = copy.deepcopy(base)
for lib in f["libraries"]:
    if lib["family"] == "nccl":
        lib["version"]["version"] = "2.28.9+cuda13.0 (custom)"
path = os.path.join(TMP, "oddlib.json")
json.dump(f, open(path, "w"))
rc, got, err = labels("--facts", path)
check(got.get("gpuenv.io/nccl") == "2.28.9cuda13.0-custom" and "escaped" in err,
      "odd library version escaped: %r %s" % (got.get("gpuenv.io/nccl"), err))

# ---- 4. MIG strategies ----
mig = json.load(open(os.path.join(FIX, "mig-partial", "facts.json")))
rc, got, err = labels("--facts", os.path.join(FIX, "mig-partial", "facts.json"))
check("nvidia.com/mig.strategy" not in got and got.get("nvidia.com/gpu.count") == "2",
      "MIG, strategy none (GFD's default): no MIG labels: %r" % got)
rc, got, err = labels("--facts", os.path.join(FIX, "mig-partial", "facts.json"), "--mig-strategy", "single")
check(got.get("nvidia.com/mig.strategy") == "single" and
      got.get("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-80GB-MIG-INVALID" and got.get("nvidia.com/gpu.count") == "0",
      "single, a MIG GPU without devices and a full GPU: GFD's invalid labels: %r" % got)
# two MIG GPUs with 1g.10gb devices, and 3g.40gb on one
m2 = copy.deepcopy(mig)
for g in m2["gpus"]:
    g["mig"] = {"current": "enabled", "pending": "enabled", "instances": [
        {"index": k, "uuid": "MIG-%d-%d" % (g["index"], k), "name": "NVIDIA A100-SXM4-80GB MIG 1g.10gb",
         "visible": True, "cuda_index": k} for k in range(3)]}
path = os.path.join(TMP, "mig2.json")
json.dump(m2, open(path, "w"))
rc, got, err = labels("--facts", path, "--mig-strategy", "single")
check(got.get("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb" and got.get("nvidia.com/gpu.count") == "6"
      and "nvidia.com/gpu.memory" not in got and "attributes" in err,
      "single, one profile: MIG product and count, memory left out: %r %s" % (got, err))
m2["gpus"][1]["mig"]["instances"][0]["name"] = "NVIDIA A100-SXM4-80GB MIG 3g.40gb"
json.dump(m2, open(path, "w"))
rc, got, err = labels("--facts", path, "--mig-strategy", "mixed")
check(got.get("nvidia.com/mig-1g.10gb.count") == "5" and got.get("nvidia.com/mig-3g.40gb.count") == "1" and
      got.get("nvidia.com/mig-3g.40gb.product") == "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb" and
      got.get("nvidia.com/mig.strategy") == "mixed" and got.get("nvidia.com/gpu.count") == "2",
      "mixed: per-profile labels: %r" % got)
rc, got, err = labels("--facts", path, "--mig-strategy", "single")
check(got.get("nvidia.com/gpu.product", "").endswith("-MIG-INVALID"), "single with two profiles: invalid")

# ---- 5. the NFD feature file, by NFD's documented grammar ----
RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def nfd_parse(text, now):
    """NFD customization guide, "Local feature source" / "Input format": lines
    "<key>[=<value>]" (value "true" when absent), '#' comments, the directives
    "# +expiry-time=<RFC3339>", "# +no-label", "# +no-feature"; a label namespace
    is required; files over 64 kB are ignored; features past their expiry-time are
    dropped.  Returns the labels, or raises ValueError."""
    if len(text.encode()) > 65536:
        raise ValueError("over NFD's 64 kB limit")
    out, expiry, skip_label = {}, now, False
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("# +"):
                key, eq, val = line[3:].partition("=")
                if key == "expiry-time":
                    m = RFC3339.match(val.strip())
                    if not eq or not m:
                        raise ValueError("bad expiry-time %r" % line)
                    expiry = datetime.datetime.fromisoformat(val.strip().replace("Z", "+00:00")).timestamp()
                elif key in ("no-label", "no-feature"):
                    skip_label = key == "no-label"
                else:
                    raise ValueError("unknown directive %r" % line)
            continue
        if expiry < now:
            continue
        key, eq, val = line.partition("=")
        if not eq:
            val = "true"
        if "/" not in key:
            raise ValueError("no label namespace: %r" % line)
        ns = key.split("/", 1)[0]
        if (ns == "kubernetes.io" or ns.endswith(".kubernetes.io")) and not (
                ns in ("feature.node.kubernetes.io", "profile.node.kubernetes.io") or
                ns.endswith(".feature.node.kubernetes.io") or ns.endswith(".profile.node.kubernetes.io")):
            raise ValueError("denied namespace %r" % ns)
        if not key_ok(key) or not value_ok(val):
            raise ValueError("not a valid label: %r" % line)
        if not skip_label:
            out[key] = val
        skip_label = False
    return out


# the checker can fail
for bad in ["foo=bar\n", "vendor.io/x=a b\n", "# +expiry-time=tomorrow\nvendor.io/x=1\n", "kubernetes.io/x=1\n",
            "vendor.io/" + "x" * 64 + "=1\n", "# +bogus\n"]:
    try:
        nfd_parse(bad, time.time())
        check(False, "the NFD checker refuses %r" % bad)
    except ValueError:
        pass
check(nfd_parse("# +expiry-time=2012-07-28T11:22:33Z\nvendor.io/a=1\n# +expiry-time=2080-07-28T11:22:33Z\n"
                "vendor.io/b\n", time.time()) == {"vendor.io/b": "true"}, "the NFD checker: expiry as documented")

fd = os.path.join(TMP, "features.d")
os.makedirs(fd)
feat = os.path.join(fd, "gpuenv")
t0 = time.time()
rc, out, err = run("labels", "--facts", H200[1], "--format", "nfd", "-o", feat)
check(rc == 0 and out == "" and os.listdir(fd) == ["gpuenv"], "nfd -o: exit %d, dir %r %s" % (rc, os.listdir(fd), err))
text = open(feat).read()
m = re.search(r"^# \+expiry-time=(\S+)$", text, re.M)
check(m is not None, "nfd: an expiry-time directive: %s" % text[:300])
if m:
    exp = datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp()
    check(t0 + 3600 - 5 <= exp <= time.time() + 3600 + 5, "nfd: default expiry one hour ahead: %s" % m.group(1))
try:
    got = nfd_parse(text, time.time())
    check(got == txt, "nfd labels = text labels: %r" % set(got.items()).symmetric_difference(txt.items()))
except ValueError as e:
    check(False, "nfd file parses under NFD's grammar: %s" % e)
check(oct(os.stat(feat).st_mode & 0o777) == "0o644", "nfd file mode 0644")
rc, out, err = run("labels", "--facts", H200[1], "--format", "nfd", "--expiry", "2026-12-01T20:00:00+01:00")
check("# +expiry-time=2026-12-01T19:00:00Z\n" in out, "--expiry RFC 3339 time, written in UTC: %s" % out[:200])
check(nfd_parse(out, datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.timezone.utc).timestamp()) == {},
      "past its expiry-time NFD drops every label")
rc, out, err = run("labels", "--facts", H200[1], "--format", "nfd", "--expiry", "never")
check(rc == 0 and "expiry-time" not in out, "--expiry never: no directive")
rc, out, err = run("labels", "--facts", H200[1], "--format", "nfd", "--expiry", "90m")
m = re.search(r"^# \+expiry-time=(\S+)$", out, re.M)
check(m and abs(datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp() - time.time() - 5400) < 10,
      "--expiry 90m")
for e, ok in (("2024-02-29T00:00:00Z", True), ("2023-02-29T00:00:00Z", False), ("2026-12-01T24:00:00Z", False),
              ("2026-12-01T20:00:00.123456789-05:30", True), ("2026-12-01 20:00:00Z", False), ("0", True),
              ("3d", True), ("1w", False), ("-1h", False), ("99999999999d", False)):
    rc, out, err = run("labels", "--facts", H200[1], "--format", "nfd", "--expiry", e)
    check((rc == 0) == ok and (ok or "hint:" in err), "--expiry %s: exit %d %s" % (e, rc, err))
# nothing written on failure
rc, out, err = run("labels", "--facts", H200[1], "--format", "nfd", "-o", os.path.join(TMP, "nope", "gpuenv"))
check(rc == 4 and not os.path.exists(os.path.join(TMP, "nope")), "-o into a missing folder: exit 4: %d %s" % (rc, err))
before = open(feat).read()
rc, out, err = run("labels", "--facts", os.path.join(TMP, "missing.json"), "--format", "nfd", "-o", feat)
check(rc == 4 and open(feat).read() == before and os.listdir(fd) == ["gpuenv"],
      "unreadable facts: exit 4, the old file kept: %d %s" % (rc, err))

# ---- 6. target labels, the satellite example ----
rc, got, err = labels("--facts", H200[1], "--project", SATELLITE)
want = {"gpuenv.io/target.h200": "true", "gpuenv.io/target.t4": "false", "gpuenv.io/target.a100": "false",
        "gpuenv.io/target.jetson": "false"}
check(rc == 0 and {k: v for k, v in got.items() if ".io/target." in k} == want,
      "H200 against the satellite example: %r %s" % (got, err))
# without a lock the declared driver decides: the H200's 580.159.04 is the target's
check("target h200" not in err, "h200 without a lock: true, without a warning: %s" % err)
# with locks (the CUDA of the locked torch build decides)
proj = os.path.join(TMP, "satellite")
os.makedirs(proj)
shutil.copy(os.path.join(SATELLITE, "pyproject.toml"), proj)
LOCK = 'lock-version = "1.0"\ncreated-by = "gpuenv"\npackages = []\n\n[tool.gpuenv]\ntarget = "%s"\nbackend = "%s"\n'
for name, backend in (("h200", "cu130"), ("t4", "cu118"), ("a100", "cu118")):
    open(os.path.join(proj, "pylock.%s.toml" % name), "w").write(LOCK % (name, backend))
rc, got, err = labels("--facts", H200[1], cwd=proj)   # the project of the current folder
check(rc == 0 and {k: v for k, v in got.items() if ".io/target." in k} == want and "target h200" not in err,
      "with locks: %r %s" % (got, err))
# a cu130 build on a 570 driver (CUDA 12.8): no
old = copy.deepcopy(base)
old["driver"]["version"] = "570.133.20"
old["driver"]["cuda_version"] = "12.8"
old["driver"]["cuda_version_int"] = 12080
old["driver"]["libcuda"].update(cuda_version="12.8", cuda_version_int=12080)  # no cuda-compat libcuda
path = os.path.join(TMP, "h200-570.json")
json.dump(old, open(path, "w"))
rc, got, err = labels("--facts", path, cwd=proj)
check(got.get("gpuenv.io/target.h200") == "false", "a cu130 lock on driver 570: false: %r" % got)

# ---- 7. the selector ----
OPS = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}


def matches(sel, node):
    """Kubernetes' node selection: nodeSelector entries all equal; the
    required nodeSelectorTerms ORed, each one's expressions ANDed."""
    for k, v in (sel.get("nodeSelector") or {}).items():
        if node.get(k) != v:
            return False
    terms = (((sel.get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    if not terms:
        return True

    def one(e):
        have = node.get(e["key"])
        op, vals = e["operator"], e.get("values") or []
        if op == "In":
            return have in vals
        if op == "NotIn":
            return have not in vals
        if op == "Exists":
            return have is not None
        if op == "DoesNotExist":
            return have is None
        try:
            return (int(have) > int(vals[0])) if op == "Gt" else (int(have) < int(vals[0]))
        except (TypeError, ValueError):
            return False
    return any(all(one(e) for e in t["matchExpressions"]) for t in terms)


class Resp:
    def __init__(self, obj):
        self.data = json.dumps(obj)


def as_podspec(sel):
    spec = {"containers": [{"name": "app", "image": "example.com/app:1"}]}
    spec.update(sel)
    return ApiClient().deserialize(Resp(spec), "V1PodSpec")


rc, node_h200, _ = labels("--facts", H200[1], cwd=proj)
node_h200["kubernetes.io/arch"] = "amd64"  # the kubelet's own label
for project, locked in ((SATELLITE, False), (proj, True)):
    for target in ("a100", "t4", "jetson", "h200"):
        rc, out, err = run("labels", "--selector", "--target", target, "--project", project)
        check(rc == 0, "selector %s: exit %d %s" % (target, rc, err))
        try:
            sel = yaml.safe_load(out)
        except yaml.YAMLError as e:
            check(False, "selector %s: YAML: %s" % (target, e))
            continue
        check(set(sel) <= {"nodeSelector", "affinity"} and "nodeSelector" in sel, "selector %s: keys %r" % (target, sel))
        spec = as_podspec(sel)
        check(spec.node_selector == sel["nodeSelector"] and
              spec.node_selector.get("gpuenv.io/target." + target) == "true",
              "selector %s: V1PodSpec.node_selector %r" % (target, spec.node_selector))
        check(all(key_ok(k) and value_ok(v) and isinstance(v, str) for k, v in spec.node_selector.items()),
              "selector %s: valid nodeSelector" % target)
        if spec.affinity:
            req = spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
            check(req.node_selector_terms, "selector %s: terms" % target)
            for term in req.node_selector_terms:
                for e in term.match_expressions:
                    check(e.operator in OPS and key_ok(e.key), "selector %s: operator %r key %r" % (target, e.operator, e.key))
                    if e.operator in ("Gt", "Lt"):
                        check(len(e.values) == 1 and re.match(r"^-?\d+$", e.values[0]),
                              "selector %s: %s takes one integer: %r" % (target, e.operator, e.values))
        check(matches(sel, node_h200) == (target == "h200"),
              "selector %s (locked %s) on the H200 node: %s" % (target, locked, matches(sel, node_h200)))
        rc, js, _ = run("--json", "labels", "--selector", "--target", target, "--project", project)
        check(json.loads(js) == sel, "selector %s: --json = YAML" % target)

# the driver terms against versions around the floor
rc, out, err = run("labels", "--selector", "--target", "a100", "--project", SATELLITE)
sel = yaml.safe_load(out)
check("535.104.05" in out, "a100 without a lock: the declared driver is the floor: %s" % out[:300])
node = dict(node_h200, **{"gpuenv.io/target.a100": "true", "nvidia.com/gpu.compute.major": "8",
                          "nvidia.com/gpu.compute.minor": "0"})


def drivers(what, sel, cases):
    for drv, ok in cases:
        a, b, c = drv.split(".")
        n = dict(node, **{"nvidia.com/cuda.driver-version.major": a, "nvidia.com/cuda.driver-version.minor": b,
                          "nvidia.com/cuda.driver-version.revision": c})
        check(matches(sel, n) == ok, "%s, driver %s: %s, want %s" % (what, drv, matches(sel, n), ok))


drivers("a100 selector", sel, (("535.104.05", True), ("535.104.4", False), ("535.104.06", True),
                               ("535.161.08", True), ("535.54.03", False), ("536.0.0", True),
                               ("534.999.99", False), ("580.159.04", True), ("470.256.02", False)))
# locked cu118: the KB's minor-version floor for CUDA 11 (450.80.02)
rc, out, err = run("labels", "--selector", "--target", "a100", "--project", proj)
drivers("a100 locked cu118", yaml.safe_load(out), (("450.80.02", True), ("450.80.01", False),
                                                   ("450.51.06", False), ("470.57.02", True)))
# jetson: CUDA 12.6 declared, the runtime-version labels
rc, out, err = run("labels", "--selector", "--target", "jetson", "--project", SATELLITE)
sel = yaml.safe_load(out)
n = {"gpuenv.io/target.jetson": "true", "kubernetes.io/arch": "arm64", "nvidia.com/gpu.compute.major": "8",
     "nvidia.com/gpu.compute.minor": "7"}
for cuda, ok in (("12.6", True), ("12.5", False), ("12.10", True), ("13.0", True), ("11.8", False)):
    a, b = cuda.split(".")
    m2 = dict(n, **{"nvidia.com/cuda.runtime-version.major": a, "nvidia.com/cuda.runtime-version.minor": b})
    check(matches(sel, m2) == ok, "jetson selector, CUDA %s: %s, want %s" % (cuda, matches(sel, m2), ok))
rc, out, err = run("labels", "--selector", "--target", "h100", "--project", SATELLITE)
check(rc == 2 and "did you mean" in err, "an unknown target: usage error with a suggestion: %d %s" % (rc, err))
sel_o = os.path.join(TMP, "sel.yaml")
rc, out, err = run("labels", "--selector", "--target", "t4", "--project", proj, "-o", sel_o)
check(rc == 0 and out == "" and yaml.safe_load(open(sel_o))["nodeSelector"]["gpuenv.io/target.t4"] == "true",
      "--selector -o FILE")

# ---- 8. the prefix ----
rc, got, err = labels("--facts", H200[1], "--prefix", "fleet.example.com", "--project", SATELLITE)
check(got.get("fleet.example.com/target.h200") == "true" and got.get("fleet.example.com/present") == "true" and
      not any(k.startswith("gpuenv.io/") for k in got), "--prefix: %r" % got)
pp = os.path.join(TMP, "prefixed")
os.makedirs(pp)
open(os.path.join(pp, "pyproject.toml"), "w").write(
    open(os.path.join(SATELLITE, "pyproject.toml")).read().replace(
        "[tool.gpuenv.targets.a100]", '[tool.gpuenv]\nlabel-prefix = "gpu.acme.io"\n\n[tool.gpuenv.targets.a100]'))
rc, got, err = labels("--facts", H200[1], "--project", pp)
check(rc == 0 and got.get("gpu.acme.io/target.h200") == "true", "[tool.gpuenv] label-prefix: %r %s" % (got, err))
rc, out, err = run("labels", "--selector", "--target", "h200", "--project", pp)
check(rc == 0 and "gpu.acme.io/target.h200" in out, "the selector uses label-prefix too")
rc, got, err = labels("--facts", H200[1], "--project", pp, "--prefix", "feature.node.kubernetes.io")
check(rc == 0 and "feature.node.kubernetes.io/target.h200" in got, "--prefix wins; NFD's own namespace allowed")
for bad in ("kubernetes.io", "node.kubernetes.io", "Upper.Example.com", "k8s.io", "nvidia.com", "-x.io", "a..b",
            "x" * 254):
    rc, out, err = run("labels", "--facts", H200[1], "--prefix", bad)
    check(rc == 2 and out == "" and "hint:" in err, "--prefix %s: usage error: %d %s" % (bad[:20], rc, err))
text = open(os.path.join(pp, "pyproject.toml")).read()
open(os.path.join(pp, "pyproject.toml"), "w").write(text.replace("gpu.acme.io", "team.kubernetes.io"))
rc, out, err = run("labels", "--facts", H200[1], "--project", pp)
check(rc == 4 and "label-prefix" in err and "pyproject.toml" in err, "a denied label-prefix: exit 4: %d %s" % (rc, err))

# ---- 9. usage and input errors ----
for args in (["--format", "yaml"], ["--target", "h200"], ["--selector"], ["--mig-strategy", "auto"],
             ["--expiry", "soon", "--format", "nfd"], ["--expiry", "1h"], ["--json", "--format", "text"],
             ["--selector", "--target", "h200", "--format", "nfd"], ["extra"], ["--no-gfd", "--mig-strategy", "single"]):
    a = list(args)
    if a[0] == "--json":
        rc, out, err = run("--json", "labels", *a[1:], "--facts", H200[1])
    else:
        rc, out, err = run("labels", *a, "--facts", H200[1], "--project", SATELLITE)
    check(rc == 2, "usage %r: exit %d %s" % (args, rc, err))
rc, out, err = run("labels", "--facts", os.path.join(TMP, "missing.json"))
check(rc == 4 and "missing.json" in err, "missing facts: exit 4: %s" % err)
rc, out, err = run("labels", "--facts", H200[1], "--project", os.path.join(TMP, "no-project"))
check(rc == 4 and "no-project" in err, "missing project: exit 4: %s" % err)
rc, out, err = run("labels", "--selector", "--target", "x", cwd=empty)
check(rc == 4 and "pyproject.toml" in err, "--selector without a project: exit 4: %s" % err)
rc, out, err = run("labels", "--help")
check(rc == 0 and "--selector" in out and "--format" in out, "labels --help")

shutil.rmtree(TMP, ignore_errors=True)
print("ok" if not failures else "%d failures" % len(failures))
sys.exit(1 if failures else 0)
