"""gpuenv probe against this machine (no GPU in CI) and against fake machine
trees with the fake NVML (tests/fixtures/hw, tests/fixtures/fake_nvml.c)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ["GPUENV_SRC"]
FAKE = os.environ.get("GPUENV_FAKE_NVML")
failures = []


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("CUDA_VISIBLE_DEVICES", None)
    if env:
        e.update(env)
    return subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=120)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def facts(*args, env=None):
    r = run("probe", "--json", *args, env=env)
    check(r.returncode == 0, "probe %s exits 0: %s" % (args, r.stderr[-500:]))
    try:
        return json.loads(r.stdout)
    except ValueError:
        check(False, "probe %s prints JSON" % (args,))
        return {}


# the documented schema: every top-level key the probe writes is in the doc
doc = open(os.path.join(SRC, "docs", "probe-schema.md")).read()
f = facts()
check(f.get("schema") == "gpuenv.facts/1", "schema tag")
for key in f:
    check('"%s"' % key in doc, "top-level key %r documented in docs/probe-schema.md" % key)
for gpu_key in ("driver", "gpus", "cuda_visible_devices", "pci", "host", "warnings"):
    check(gpu_key in f, "key %s present" % gpu_key)

# this machine (CI): no GPU and no driver, said plainly
if not os.path.exists("/proc/driver/nvidia/version"):
    check(f["driver"]["state"] in ("no-hardware", "not-loaded"), "no-driver state: %s" % f["driver"]["state"])
    check(f["driver"]["version"] is None, "no driver version invented")
    check(f["gpus"] == [], "no GPUs invented")
    r = run("probe")
    check(r.returncode == 0 and "driver" in r.stdout, "human view")
    # the toolkit's stub libcuda is never mistaken for a driver
    stub = "/usr/local/cuda/lib64/stubs/libcuda.so"
    if os.path.exists(stub):
        s = facts("--cuda-lib", stub)
        check(s["driver"]["libcuda"]["state"] == "stub", "stub libcuda -> state stub: %s" % s["driver"]["libcuda"])
        check(s["driver"]["state"] != "ok" and s["driver"]["version"] is None, "stub is not a driver")

# a fake H200 machine: sysfs/procfs tree copied from the real one + fake NVML
h200 = os.path.join(SRC, "tests", "fixtures", "hw", "h200")
if FAKE:
    f = facts("--root", h200, "--nvml-lib", FAKE, "--cuda-lib", "/nonexistent/libcuda.so.1",
              env={"FAKE_NVML_SCENARIO": "h200"})
    d = f["driver"]
    check(d["state"] == "ok", "fake h200: state ok (%s)" % d["state"])
    check(d["version"] == "580.159.04", "fake h200: driver version %s" % d["version"])
    check(d["cuda_version"] == "13.0", "fake h200: CUDA 13.0")
    check(len(f["gpus"]) == 1, "fake h200: one GPU")
    if f["gpus"]:
        g = f["gpus"][0]
        check(g["name"] == "NVIDIA H200", "name")
        check(g["compute_capability"] == "9.0" and g["sm"] == "sm_90", "cc")
        check(g["architecture"] == "Hopper", "arch")
        check(g["pci_bus_id"] == "00000000:00:06.0", "bus id %s" % g["pci_bus_id"])
        check(g["pci_device_id"] == "0x233510DE", "pci device id %s" % g["pci_device_id"])
        check(g["visible"] and g["cuda_index"] == 0, "visible")
    # CUDA_VISIBLE_DEVICES hiding every GPU is shown
    f = facts("--root", h200, "--nvml-lib", FAKE, env={"FAKE_NVML_SCENARIO": "h200", "CUDA_VISIBLE_DEVICES": ""})
    check(f["cuda_visible_devices"]["set"] and f["cuda_visible_devices"]["devices"] == [],
          "CUDA_VISIBLE_DEVICES='' hides all")
    r = run("probe", "--root", h200, "--nvml-lib", FAKE, env={"FAKE_NVML_SCENARIO": "h200", "CUDA_VISIBLE_DEVICES": ""})
    check("hidden from CUDA" in r.stdout, "human view says hidden")
    for scen in ("many", "mig", "nvlink", "lost", "noperm"):
        f = facts("--root", h200, "--nvml-lib", FAKE, env={"FAKE_NVML_SCENARIO": scen})
        check(f.get("driver", {}).get("state") in ("ok", "nvml-error"), "scenario %s runs" % scen)
        r = run("probe", "--root", h200, "--nvml-lib", FAKE, env={"FAKE_NVML_SCENARIO": scen})
        check(r.returncode == 0 and "GPUs" in r.stdout, "scenario %s human view" % scen)
    f = facts("--root", h200, "--nvml-lib", FAKE, env={"FAKE_NVML_SCENARIO": "mig"})
    check(any(g["mig"]["current"] == "enabled" and g["mig"]["instances"] for g in f["gpus"]), "MIG instances listed")
    f = facts("--root", h200, "--nvml-lib", FAKE, env={"FAKE_NVML_SCENARIO": "nvlink"})
    check(any(any(l["active"] and l["peer_pci_bus_id"] for l in g["nvlink"]) for g in f["gpus"]), "NVLink peers listed")
    f = facts("--root", h200, "--nvml-lib", FAKE, env={"FAKE_NVML_SCENARIO": "lost"})
    check(any(g["warnings"] for g in f["gpus"]) or f["warnings"], "a lost GPU gives a warning")

# GPU present, driver not loaded: the h200 tree without the driver files
jet = os.path.join(SRC, "tests", "fixtures", "hw", "jetson-orin")
f = facts("--root", jet, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--cuda-lib", "/nonexistent/libcuda.so.1")
check(f.get("jetson") and f["jetson"].get("soc") == "tegra234", "jetson soc: %s" % f.get("jetson"))

# a fake torch environment: real METADATA from the corpus, torch/version.py,
# and a real CUDA library standing in for libtorch_cuda.so
import shutil, tempfile
SHARED = os.environ["GPUENV_SHARED"]
curand = "/usr/local/cuda/lib64/libcurand.so.10"
with tempfile.TemporaryDirectory() as tmp:
    site = os.path.join(tmp, "lib", "python3.12", "site-packages")
    os.makedirs(os.path.join(site, "torch", "lib"))
    shutil.copytree(os.path.join(SHARED, "corpus", "h200-env", "torch-2.11.0.dist-info"),
                    os.path.join(site, "torch-2.11.0.dist-info"))
    with open(os.path.join(site, "torch", "version.py"), "w") as fh:
        fh.write("__version__ = '2.11.0+cu130'\ncuda = '13.0'\n")
    with open(os.path.join(tmp, "pyvenv.cfg"), "w") as fh:
        fh.write("home = /usr/bin\nversion = 3.12.3\n")
    have_cuda_lib = os.path.exists(curand)
    if have_cuda_lib:
        shutil.copy(curand, os.path.join(site, "torch", "lib", "libtorch_cuda.so"))
    f = facts("--env", tmp)
    envs = f.get("environments", [])
    check(len(envs) == 1 and envs[0]["prefix"] == tmp, "--env names the environment")
    fws = envs[0]["frameworks"] if envs else []
    torch = [x for x in fws if x["dist"] == "torch"]
    check(torch and torch[0]["version"] == "2.11.0+cu130" and torch[0]["cuda"] == "13.0",
          "torch version and CUDA from version.py: %s" % torch)
    if have_cuda_lib and torch:
        bins = torch[0]["binaries"]
        check(bins and "sm_90" in bins[0]["cuda_code"]["cubins"] and
              bins[0]["cuda_code"]["ptx"] == ["compute_121"], "cubins/PTX of the framework binary: %s" % bins)
    r = run("probe", "--env", tmp)
    check("torch 2.11.0+cu130, CUDA 13.0" in r.stdout, "human view lists torch")
    # a corrupt binary is a warning in the facts, never a crash
    if have_cuda_lib:
        with open(os.path.join(site, "torch", "lib", "libtorch_cuda.so"), "r+b") as fh:
            fh.truncate(5000)
        f = facts("--env", tmp)
        b = f["environments"][0]["frameworks"][0]["binaries"]
        check(b and b[0]["cuda_code"]["error"], "truncated binary -> error recorded: %s" % b)

# --all-binaries: the text view shows each library copy's CUDA code, as the
# JSON holds it (it showed none)
f = facts("--all-binaries")
coded = [l for l in f.get("libraries", []) if (l.get("cuda_code") or {}).get("summary")]
if coded:
    r = run("probe", "--all-binaries")
    for l in coded[:20]:
        want = "%s [%s]\n            CUDA code: %s\n" % (l["path"], ", ".join(l["where"]),
                                                        l["cuda_code"]["error"] or l["cuda_code"]["summary"])
        check(want in r.stdout, "--all-binaries text view shows the CUDA code of %s" % l["path"])
else:
    print("no CUDA library with a fatbin on this machine: --all-binaries text view not checked")

# --profile (docs/profile.md): where the probe's time went, as a trace whose
# spans say which thread did what, and the same document on stdout as without
PT = tempfile.mkdtemp(prefix="gpuenv-probe-profile-")


def trace_spans(path):
    doc = json.load(open(path))
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return [(e["args"]["phase"], names.get(e["tid"]), e["ts"], e["dur"]) for e in doc["traceEvents"]
            if e.get("ph") == "X"], doc


def same_doc(a, b):
    a, b = dict(a), dict(b)
    for d in (a, b):
        d.pop("taken_at", None)
        d.pop("probe_ms", None)
    return a == b


if FAKE:
    env = {"FAKE_NVML_SCENARIO": "h200"}
    base = ("--root", h200, "--nvml-lib", FAKE, "--cuda-lib", "/nonexistent/libcuda.so.1")
    plain = facts(*base, env=env)
    tr = os.path.join(PT, "fake.json")
    prof = facts(*base, "--profile", tr, env=env)
    check(same_doc(plain, prof), "probe --json --profile prints the same document as without")
    spans, doc = trace_spans(tr) if os.path.exists(tr) else ([], {})
    got = {(ph, th) for ph, th, _, _ in spans}
    for want in (("host", "main"), ("toolkits", "main"), ("environments", "main"), ("libraries", "main"),
                 ("ld.so.cache", "main"), ("write", "main"), ("gpus-wait", "main"), ("sysfs", "gpus"),
                 ("nvml", "gpus"), ("nvml-wait", "gpus"), ("nvml-shutdown", "gpus"), ("cuda-driver", "gpus"),
                 ("nvml-init", "nvml start")):
        check(want in got, "probe --profile: a %s span on the %s thread (%s)" % (want + (sorted(got),)))
    check(doc.get("otherData", {}).get("command") == "gpuenv probe", "the trace names gpuenv probe")
    # the order the threads guarantee (not how they overlap: that is the
    # scheduler's): the NVML start ends before the backend asks NVML, the
    # GPU thread's work ends before the main thread's wait for it does
    st = {(ph, th): (ts, ts + dur) for ph, th, ts, dur in spans}
    a, b = st.get(("nvml-init", "nvml start")), st.get(("nvml", "gpus"))
    c, w = st.get(("cuda-driver", "gpus")), st.get(("gpus-wait", "main"))
    check(a and b and a[1] <= b[0], "the NVML start ends before the NVML backend begins: %s" % st)
    check(c and w and c[1] <= w[1], "the main thread's wait outlasts the GPU thread's work: %s" % st)
    r = run("probe", *base, "--profile", os.path.join(PT, "text.json"), env=env)
    check(r.returncode == 0 and "NVIDIA H200" in r.stdout and os.path.exists(os.path.join(PT, "text.json")),
          "text probe --profile: the view and the trace")
    r = run("profile", os.path.join(PT, "text.json"))
    check(r.returncode == 0 and "nvml-init" in r.stdout, "gpuenv profile reads the probe's trace: %s" % r.stdout)
# this machine: the GPU thread's backends answer quickly with no driver; the trace is still whole
tr = os.path.join(PT, "live.json")
r = run("probe", "--json", "--profile", tr)
check(r.returncode == 0 and os.path.exists(tr) and {"sysfs", "nvml", "environments"} <= {s[0] for s in trace_spans(tr)[0]},
      "live probe --json --profile: rc %d, %s" % (r.returncode, r.stderr[-300:]))
r = run("probe", "--profile", os.path.join(PT, "no", "such", "dir", "t.json"))
check(r.returncode == 4 and "t.json" in r.stderr, "an unwritable --profile: exit 4 naming it: %d %s" % (r.returncode, r.stderr))
r = run("probe", "--profile")
check(r.returncode == 2, "--profile without a file: usage error")

r = run("probe", "--bogus")
check(r.returncode == 2, "unknown option -> 2")
r = run("probe", "--python", "/x", "--env", "/y")
check(r.returncode == 2, "--python with --env -> 2")

shutil.rmtree(PT, ignore_errors=True)
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
