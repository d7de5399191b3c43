"""gpuenv preflight --lock: a PEP 751 lock judged on a node (the doctor
fixtures' facts, some changed here on the fly): locks made by `gpuenv lock`
against the fixture torch index (tests/fixtures/torch_index.py, as
test_lock.py makes them) and hand-written ones in the shape other tools write.
Go on the node the lock is for; no-go naming torch on a driver too old, the
GPU a build has no code for, a wheel for another machine or a newer glibc,
another Python, a CUDA 13 wheel on a CUDA 12 driver; the lock's target
against the node; --json in --image's shape; malformed locks exit 4 with
FILE:LINE:COL."""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ.get("GPUENV_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import torch_index  # noqa: E402

FIX = os.path.join(SRC, "tests", "fixtures", "doctor")
TMP = tempfile.mkdtemp(prefix="gpuenv-pf-lock-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=None):
    e = dict(os.environ)
    e.pop("VIRTUAL_ENV", None)
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, env=e, timeout=300)


def facts(name):
    with open(os.path.join(FIX, name, "facts.json")) as f:
        return json.load(f)


def preflight(lock, f, *extra):
    """preflight --lock LOCK --json on facts f (a dict): (exit, JSON or None, process)."""
    r = run("preflight", "--lock", lock, "--facts", "-", "--json", *extra, stdin=json.dumps(f))
    try:
        return r.returncode, json.loads(r.stdout), r
    except ValueError:
        return r.returncode, None, r


def verdicts(out, vid=None, severity=None):
    return [v for v in (out or {}).get("verdicts", [])
            if (vid is None or v["id"] == vid) and (severity is None or v["severity"] == severity)]


def case(name, lock, f, status, want=(), absent=()):
    rc, out, r = preflight(lock, f)
    check(rc == status, "%s: exit %d, expected %d (%s)" % (name, rc, status, r.stderr[:300]))
    if out is None:
        check(False, "%s: no JSON (%s)" % (name, r.stderr[:300]))
        return None
    check(out["go"] == (status == 0), "%s: go=%r" % (name, out["go"]))
    got = sorted({(v["id"], v["severity"]) for v in out["verdicts"]})
    for w in want:
        check(w in got, "%s: %s not among %s" % (name, w, got))
    for a in absent:
        check(not any(g[0] == a for g in got), "%s: %s should not be said: %s" % (name, a, got))
    for v in out["verdicts"]:
        if v["severity"] == "error":
            check(bool(v["fix"]), "%s: error %s without a fix" % (name, v["id"]))
    return out


# ---- locks made by gpuenv lock ----------------------------------------------------------

URLS = torch_index.build(os.path.join(TMP, "index"), series=["2.7"])
PROJ = os.path.join(TMP, "proj")
os.makedirs(PROJ)
with open(os.path.join(PROJ, "pyproject.toml"), "w") as f:
    f.write('[project]\nname = "pf"\nversion = "1.0"\nrequires-python = ">=3.10"\n'
            'dependencies = ["torch>=2.6", "numpy"]\n\n[tool.gpuenv]\ntorch-backend = "auto"\n')
    for name, body in [("h100", 'gpu = "H100"\ndriver = "570.133.20"\ntorch-backend = "cu128"'),
                       ("t4", 'gpu = "T4"\ndriver = "560.35.03"'),
                       ("armcpu", 'gpu = "none"\nplatform = "manylinux_2_28_aarch64"'),
                       ("cpu", 'gpu = "none"')]:
        if "platform" not in body:
            body += '\nplatform = "manylinux_2_28_x86_64"'
        f.write('\n[tool.gpuenv.targets.%s]\n%s\npython = "3.12"\n' % (name, body))
r = run("lock", "--project", PROJ, "--index-url", URLS["pypi"], "--torch-index", URLS["torch-index"],
        "--cache-dir", os.path.join(TMP, "cache"))
check(r.returncode == 0, "gpuenv lock: %d %s%s" % (r.returncode, r.stdout, r.stderr))
L = {t: os.path.join(PROJ, "pylock.%s.toml" % t) for t in ("h100", "t4", "armcpu", "cpu")}

healthy = facts("healthy")  # an H100, driver 570.133.20 (CUDA 12.8), x86_64, Python 3.12.3
out = case("h100 lock on its node", L["h100"], healthy, 0,
           [("driver-ok", "info"), ("arch-ok", "info"), ("python-ok", "info"), ("platform-ok", "info"),
            ("target-ok", "info")])
check(out and out["request"] == L["h100"] + " (target h100)" and out["cuda"] == "12.8",
      "request and cuda: %r" % ((out and (out["request"], out["cuda"])),))
check(out and out.get("lock", {}).get("target") == "h100" and out["lock"]["torch"].endswith("+cu128")
      and out["lock"]["path"] == L["h100"] and out["lock"]["created_by"] == "gpuenv",
      "the lock in JSON: %r" % (out or {}).get("lock"))

# torch's CUDA on a driver too old: torch named, the driver to install, or lock again
out = case("h100 lock on driver 470", L["h100"], facts("driver470-cu121"), 1,
           [("driver-too-old", "error"), ("target-other", "warning")])
e = verdicts(out, "driver-too-old")
check(e and "torch 2.7" in e[0]["message"] and "+cu128" in e[0]["message"], "driver-too-old names torch: %s" % e)
check(e and "upgrade the driver to >= 570.26" in e[0]["fix"] and "lock again" in e[0]["fix"],
      "driver-too-old fix: the driver, or lock again: %s" % (e and e[0]["fix"]))
check(any(L["h100"] + ": packages[torch]" in ev["fact"] and ev["source"] == "lock"
          for v in e for ev in v["evidence"]), "the lock's torch in the evidence")
t = verdicts(out, "target-other")
check(t and "target h100" in t[0]["message"] and "A100" in t[0]["message"], "target-other: %s" % t)
# t4's cu126 build pulls in nvidia-*-cu12 wheels (the KB's [[pin]] rows): CUDA 12 wheels, named
out = case("t4 lock on driver 470", L["t4"], facts("driver470-cu121"), 1, [("driver-too-old", "error")])
e = verdicts(out, "driver-too-old")
named = " ".join(v["message"] + " ".join(ev["fact"] for ev in v["evidence"]) for v in e)
check("torch 2.7.1+cu126" in named and "nvidia-cudnn-cu12" in named and "nvidia-cublas-cu12" in named,
      "torch and the CUDA 12 wheels are named: %s" % [v["message"] for v in e])

# the GPU the build has no code for (CUDA 12.8 builds dropped Pascal)
pascal = copy.deepcopy(healthy)
pascal["gpus"][0].update(name="Tesla P100-PCIE-16GB", compute_capability="6.0", sm="sm_60", architecture="Pascal")
out = case("h100 lock on a P100", L["h100"], pascal, 1, [("no-kernel-image", "error")])
e = verdicts(out, "no-kernel-image")
check(e and "torch 2.7" in e[0]["message"] and "sm_60" in e[0]["message"], "no-kernel-image: %s" % e)
check(e and 'gpu = "Tesla P100-PCIE-16GB"' in e[0]["fix"] and "gpuenv lock --target" in e[0]["fix"],
      "no-kernel-image fix: lock again for the GPU: %s" % (e and e[0]["fix"]))

# another GPU, a build that runs on this one: a warning, a go (the KB has no arch list for 2.7 cu126)
case("t4 lock on an H100", L["t4"], healthy, 0, [("target-other", "warning"), ("arch-unknown", "warning")])

# platform: an aarch64 lock on x86_64, an x86_64 lock on aarch64, glibc too old
out = case("aarch64 lock on x86_64", L["armcpu"], healthy, 1, [("wheel-platform", "error")])
e = {v["target"].split()[0]: v for v in verdicts(out, "wheel-platform")}
check("numpy" in e and "aarch64" in e["numpy"]["message"] and "this node is x86_64" in e["numpy"]["message"],
      "numpy's aarch64 wheel named: %s" % e.get("numpy"))
check("numpy" in e and 'platform = "manylinux_2_28_x86_64"' in e["numpy"]["fix"], "fix: the node's platform")
check("filelock" not in e, "pure wheels install anywhere: %s" % sorted(e))
arm = copy.deepcopy(healthy)
arm["host"]["machine"] = "aarch64"
out = case("x86_64 lock on aarch64", L["h100"], arm, 1, [("wheel-platform", "error")])
e = {v["target"].split()[0]: v for v in verdicts(out, "wheel-platform")}
check("torch" in e and "x86_64" in e["torch"]["message"] and "aarch64" in e["torch"]["message"],
      "torch's x86_64 wheel on aarch64: %s" % e.get("torch"))
old_glibc = copy.deepcopy(healthy)
old_glibc["host"].update(libc="glibc", libc_version="2.17")
out = case("manylinux_2_28 on glibc 2.17", L["h100"], old_glibc, 1, [("wheel-platform", "error")],
           absent=["libc-unknown"])
e = {v["target"].split()[0]: v for v in verdicts(out, "wheel-platform")}
check("torch" in e and "glibc 2.28" in e["torch"]["message"] and "2.17" in e["torch"]["message"],
      "glibc named: %s" % e.get("torch"))
new_glibc = copy.deepcopy(healthy)
new_glibc["host"].update(libc="glibc", libc_version="2.35")
case("manylinux_2_28 on glibc 2.35", L["h100"], new_glibc, 0, [("platform-ok", "info")], absent=["libc-unknown"])
case("no libc in the facts", L["h100"], healthy, 0, [("libc-unknown", "warning")])

# Python: the lock's 3.12 against a node whose environment runs 3.10
py310 = copy.deepcopy(healthy)
py310["environments"][0]["python"]["version"] = "3.10.12"
py310["environments"][0]["python_xy"] = "3.10"
out = case("3.12 lock on Python 3.10", L["h100"], py310, 0, [("python-mismatch", "warning")])
e = verdicts(out, "python-mismatch")
check(e and "3.12" in e[0]["message"] and "3.10.12" in e[0]["message"] and 'python = "3.10"' in e[0]["fix"],
      "python-mismatch: %s" % e)
check(not verdicts(out, "wheel-platform"), "one Python mismatch is said once, not per cp312 wheel")

# a CPU build on a GPU node: a warning; on a machine without GPU: nothing to say
out = case("cpu lock on an H100", L["cpu"], healthy, 0, [("cpu-build", "warning")])
check(verdicts(out, "cpu-build")[0]["fix"].startswith("lock again for this node"), "cpu-build fix")
nogpu = copy.deepcopy(healthy)
nogpu.update(gpus=[], pci=[])
nogpu["driver"].update(state="no-hardware", version=None, cuda_version=None, cuda_version_int=None)
case("cpu lock without GPU", L["cpu"], nogpu, 0, [("cpu-build", "info")], absent=["no-gpu"])
case("h100 lock without GPU", L["h100"], nogpu, 1, [("no-gpu", "error")])

# every doctor fixture: judged (go or no-go), never an error
seen = set()
for d in sorted(os.listdir(FIX)):
    if os.path.exists(os.path.join(FIX, d, "facts.json")):
        rc, out, r = preflight(L["h100"], facts(d))
        check(rc in (0, 1) and out is not None, "%s: judged (%d %s)" % (d, rc, r.stderr[:200]))
        seen.add(rc)
check(seen == {0, 1}, "go and no-go among the fixtures: %s" % seen)

# ---- other tools' locks (hand-written PEP 751) -----------------------------------------

H = "0" * 64


def write(name, text):
    p = os.path.join(TMP, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def pkg(name, version, wheel, extra=""):
    return ('[[packages]]\nname = "%s"\nversion = "%s"\n%s'
            'wheels = [{ name = "%s", url = "https://files.example/%s", hashes = { sha256 = "%s" } }]\n\n'
            % (name, version, extra, wheel, wheel, H))


CU13 = write("pylock.cu13.toml", 'lock-version = "1.0"\ncreated-by = "uv"\nrequires-python = ">=3.12"\n\n' +
             pkg("nvidia-cudnn-cu13", "9.19.0.56", "nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl") +
             pkg("nvidia-cuda-runtime-cu13", "13.0.96", "nvidia_cuda_runtime_cu13-13.0.96-py3-none-manylinux_2_27_x86_64.whl") +
             pkg("numpy", "2.3.5", "numpy-2.3.5-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"))
case("CUDA 13 wheels on the H200", CU13, facts("h200-2026-11-29"), 0, [("driver-ok", "info"), ("platform-ok", "info")],
     absent=["target-ok", "target-other"])
out = case("CUDA 13 wheels on driver 535", CU13, facts("driver-too-old-cu130"), 1, [("driver-too-old", "error")])
e = verdicts(out, "driver-too-old")
check(len(e) == 1 and "nvidia-cuda-runtime-cu13 13.0.96" in e[0]["message"] and "CUDA 13.0" in e[0]["message"],
      "the CUDA 13 wheel named (its name's -cu13, no KB row): %s" % [v["message"] for v in e])
check(e and any("packages[nvidia-cudnn-cu13]" in ev["fact"] and "also needs it" in ev["value"]
                for ev in e[0]["evidence"]), "the other CUDA 13 wheel shares the verdict: %s" % (e and e[0]["evidence"]))
CUDNN13 = write("pylock.cudnn13.toml", 'lock-version = "1.0"\ncreated-by = "uv"\n\n' +
                pkg("nvidia-cudnn-cu13", "9.19.0.56", "nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl"))
out = case("cuDNN for CUDA 13 on driver 535", CUDNN13, facts("driver-too-old-cu130"), 1, [("driver-too-old", "error")])
e = verdicts(out, "driver-too-old")
check(e and any(ev["fact"] == "kb:wheels.toml package nvidia-cudnn-cu13" and ev["kb_source"] for ev in e[0]["evidence"])
      and "upgrade the driver to >= 580" in e[0]["fix"], "the KB row cited, the driver to install: %s" % e)

# DALI (issue 25): its package name fixes the CUDA build (KB wheels.toml rows from DALI's support matrix)
DALI = write("pylock.dali.toml", 'lock-version = "1.0"\ncreated-by = "uv"\n\n' +
             pkg("nvidia-dali-cuda120", "1.53.0", "nvidia_dali_cuda120-1.53.0-py3-none-manylinux2014_x86_64.whl"))
out = case("DALI for CUDA 12 on driver 470", DALI, facts("driver470-cu121"), 1, [("driver-too-old", "error")])
e = verdicts(out, "driver-too-old")
check(e and "nvidia-dali-cuda120 1.53.0" in e[0]["message"] and "CUDA 12.0" in e[0]["message"] and
      any(ev["fact"] == "kb:wheels.toml package nvidia-dali-cuda120" for ev in e[0]["evidence"]) and
      ">= 525" in e[0]["fix"], "DALI judged by its KB row, the driver to install named: %s" % e)
case("DALI for CUDA 12 on the H200 (driver 580)", DALI, facts("h200-2026-11-29"), 0, [("driver-ok", "info")])
DALI13 = write("pylock.dali13.toml", 'lock-version = "1.0"\ncreated-by = "uv"\n\n' +
               pkg("nvidia-dali-cuda130", "1.53.0", "nvidia_dali_cuda130-1.53.0-py3-none-manylinux2014_x86_64.whl"))
case("DALI for CUDA 13 on driver 535", DALI13, facts("driver-too-old-cu130"), 1, [("driver-too-old", "error")])
case("DALI for CUDA 13 on the H200", DALI13, facts("h200-2026-11-29"), 0, [("driver-ok", "info")])

TORCH_ONLY = write("pylock.torch.toml", 'lock-version = "1.0"\ncreated-by = "pdm"\n\n' +
                   pkg("torch", "2.6.0+cu124", "torch-2.6.0+cu124-cp312-cp312-linux_x86_64.whl",
                       'index = "https://download.pytorch.org/whl/cu124"\n'))
out = case("torch 2.6 cu124 on an RTX 5090", TORCH_ONLY, facts("sm120-torch-cu124"), 1, [("no-kernel-image", "error")])
check(out and out["lock"]["created_by"] == "pdm" and out["lock"].get("target") is None, "another tool's lock: %s"
      % (out or {}).get("lock"))

PYREQ = write("pylock.py.toml", 'lock-version = "1.0"\ncreated-by = "uv"\nrequires-python = ">=3.13"\n\n' +
              pkg("tomli", "2.0.1", "tomli-2.0.1-py3-none-any.whl", 'requires-python = ">=3.13"\n'))
case("requires-python >=3.13 on 3.12", PYREQ, healthy, 0, [("python-mismatch", "warning")])
PKGREQ = write("pylock.pkgreq.toml", 'lock-version = "1.0"\ncreated-by = "uv"\n\n' +
               pkg("tomli", "2.0.1", "tomli-2.0.1-py3-none-any.whl", 'requires-python = ">=3.13"\n'))
out = case("a package's requires-python", PKGREQ, healthy, 1, [("requires-python", "error")])
check(verdicts(out, "requires-python") and verdicts(out, "requires-python")[0]["target"] == "tomli 2.0.1",
      "the package named")
MARK = write("pylock.mark.toml", 'lock-version = "1.0"\ncreated-by = "uv"\n\n' +
             pkg("numpy", "2.3.5", "numpy-2.3.5-cp312-cp312-manylinux_2_28_aarch64.whl",
                 'marker = "platform_machine == \'aarch64\'"\n') +
             pkg("tomli", "2.0.1", "tomli-2.0.1-py3-none-any.whl"))
case("a package whose marker does not hold here is not judged", MARK, healthy, 0, [("platform-ok", "info")],
     absent=["wheel-platform"])
ENVS = write("pylock.envs.toml", 'lock-version = "1.0"\ncreated-by = "uv"\n'
             'environments = ["sys_platform == \'darwin\'"]\n\n' + pkg("tomli", "2.0.1", "tomli-2.0.1-py3-none-any.whl"))
case("environments that exclude this node", ENVS, healthy, 1, [("lock-environments", "error")])

# torch from PyPI, a plain version (uv, pdm): the release's PyPI build, as --torch 2.7.1 reads it
PYPI_TORCH = write("pylock.pypi.toml", 'lock-version = "1.0"\ncreated-by = "uv"\n\n' +
                   pkg("torch", "2.7.1", "torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl"))
out = case("PyPI torch 2.7.1 on driver 470", PYPI_TORCH, facts("driver470-cu121"), 1, [("driver-too-old", "error")])
check(out and "+cu126" in verdicts(out, "driver-too-old")[0]["message"], "PyPI's 2.7.1 is the cu126 build: %s"
      % [v["message"] for v in verdicts(out)])

# one answer per question: a lock holding only torch X is judged as --torch X on every node
# (the lock's own verdicts aside: Python, tags, the C library, the build's fix words)
LOCK_ONLY = {"python-ok", "python-mismatch", "python-unknown", "platform-ok", "libc-unknown", "cpu-build"}
NODES = {}  # one fixture per distinct node (the driver, its libcuda, the GPUs CUDA sees): the rest differ in software
for d in sorted(os.listdir(FIX)):
    if os.path.exists(os.path.join(FIX, d, "facts.json")):
        f = facts(d)
        key = json.dumps([f.get("driver"), f.get("gpus"), f.get("cuda_visible_devices")], sort_keys=True)
        NODES.setdefault(key, (d, f))
check(len(NODES) >= 10, "distinct nodes among the fixtures: %d" % len(NODES))
for build in ["2.7.0+cu128", "2.6.0+cu124", "2.11.0+cu130", "2.3.1+cu121", "2.7.1+cu126", "2.7.1+cpu"]:
    p = write("pylock.only-%s.toml" % build, 'lock-version = "1.0"\ncreated-by = "uv"\n\n' +
              pkg("torch", build, "torch-%s-py3-none-any.whl" % build))
    for d, f in NODES.values():
        ra, a, _ = preflight(p, f)
        rb = run("preflight", "--torch", build, "--facts", "-", "--json", stdin=json.dumps(f))
        b = json.loads(rb.stdout) if rb.returncode in (0, 1) else None
        if a is None or b is None:
            check(False, "%s on %s: judged both ways (%d, %d)" % (build, d, ra, rb.returncode))
            continue
        va = sorted((v["id"], v["severity"], v["message"]) for v in a["verdicts"] if v["id"] not in LOCK_ONLY)
        vb = sorted((v["id"], v["severity"], v["message"]) for v in b["verdicts"] if v["id"] not in LOCK_ONLY)
        check(ra == rb.returncode and a["go"] == b["go"] and a["cuda"] == b["cuda"] and va == vb,
              "%s on %s: --lock %d %s / --torch %d %s" % (build, d, ra, va, rb.returncode, vb))

# ---- --json: --image's shape, plus "lock" ------------------------------------------------

rc1, a, _ = preflight(L["h100"], healthy)
r2 = run("preflight", "--image", "nvcr.io/nvidia/pytorch:25.01-py3", "--facts", "-", "--json", stdin=json.dumps(healthy))
b = json.loads(r2.stdout) if r2.returncode in (0, 1) else None
check(a and b and set(a) - {"lock"} == set(b) and "lock" in a, "top-level keys: %s / %s" % (a and sorted(a), b and sorted(b)))
check(a and b and {tuple(sorted(v)) for v in a["verdicts"]} == {tuple(sorted(v)) for v in b["verdicts"]},
      "verdict objects have the same keys")
check(a and b and {tuple(sorted(e)) for v in a["verdicts"] for e in v["evidence"]} <=
      {tuple(sorted(e)) for v in b["verdicts"] for e in v["evidence"]}, "evidence objects have the same keys")

# human output
r = run("preflight", "--lock", L["h100"], "--facts", os.path.join(FIX, "driver470-cu121", "facts.json"))
first = r.stdout.split("\n")[:2]
check(r.returncode == 1 and first[0].startswith(L["h100"] + ": ") and "locked for target h100" in first[0] and
      "torch 2.7" in first[0] and first[1] == "no-go: this node cannot run %s (target h100)" % L["h100"] and
      "driver-too-old" in r.stdout and "fix:" in r.stdout, "human no-go: %r" % r.stdout[:400])

# ---- malformed and missing locks: exit 4, FILE:LINE:COL, no verdict ----------------------

for name, text, words in [
        ("syntax", 'lock-version = "1.0"\ncreated-by = "x"\n[[packages]\n', ":3:"),
        ("nohash", 'lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "a"\nversion = "1"\n'
                   'wheels = [{ name = "a-1-py3-none-any.whl", url = "https://x/a-1-py3-none-any.whl" }]\n', ":"),
        ("major", 'lock-version = "2.0"\ncreated-by = "x"\n', "lock-version"),
        ("badname", 'lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "-a"\nversion = "1"\n', ":")]:
    p = write("pylock.%s.toml" % name, text)
    r = run("preflight", "--lock", p, "--facts", os.path.join(FIX, "healthy", "facts.json"))
    check(r.returncode == 4 and (p + ":") in r.stderr and words in r.stderr and r.stdout == "",
          "malformed %s: %d %r" % (name, r.returncode, r.stderr))
    r = run("preflight", "--lock", p, "--facts", os.path.join(FIX, "healthy", "facts.json"), "--json")
    check(r.returncode == 4 and r.stdout == "", "malformed %s --json: nothing on stdout" % name)
r = run("preflight", "--lock", os.path.join(TMP, "missing.toml"), "--facts", os.path.join(FIX, "healthy", "facts.json"))
check(r.returncode == 4 and "missing.toml" in r.stderr, "a missing lock: %d %s" % (r.returncode, r.stderr))
r = run("preflight", "--lock", L["h100"], "--torch", "2.7.0")
check(r.returncode == 2, "--lock with --torch: usage error")

if not failures:
    shutil.rmtree(TMP, ignore_errors=True)
print("ok" if not failures else "%d failures" % len(failures))
sys.exit(1 if failures else 0)
