"""CLI tests for `gpuenv debug gpus`: this machine, the toolkit's stub
libcuda, and fake trees with the fake NVML (tests/fixtures/fake_nvml.c)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
SRC = os.environ["GPUENV_SRC"]
FAKE = os.environ["GPUENV_FAKE_NVML"]
STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"
H200 = os.path.join(SRC, "tests", "fixtures", "hw", "h200")
ORIN = os.path.join(SRC, "tests", "fixtures", "hw", "jetson-orin")

failures = []


def run(args, env=None):
    e = dict(os.environ)
    e.pop("CUDA_VISIBLE_DEVICES", None)
    e.pop("CUDA_DEVICE_ORDER", None)
    e.update(env or {})
    return subprocess.run([BIN, "debug", "gpus"] + args, capture_output=True, text=True, env=e)


def check(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def js(args, env=None):
    p = run(["--json"] + args, env)
    check(" ".join(args), p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout) if p.returncode == 0 else {}


p = run(["--help"])
if p.returncode == 2 and "unknown subcommand" in p.stderr:
    # the `gpus` row of cli/debug/debug.c lands with the integration of this branch
    print("gpuenv debug gpus is not in the debug table yet")
    sys.exit(77)
check("--help", p.returncode == 0 and "--deep" in p.stdout, p.stdout + p.stderr)

# this machine
d = js([])
if not os.path.exists("/proc/driver/nvidia/version"):
    check("no driver: state", d["driver"]["state"] in ("no-hardware", "not-loaded"), d["driver"]["state"])
    check("no driver: loaded", d["driver"]["loaded"] is False)
    check("no driver: version", d["driver"]["version"] is None)
    check("no driver: libcuda", d["driver"]["libcuda"]["state"] != "driver",
          d["driver"]["libcuda"]["state"])
    p = run([])
    check("no driver: text", "no NVIDIA driver" in p.stdout or "not loaded" in p.stdout, p.stdout)
if os.path.exists(STUB):
    d = js(["--libcuda", STUB])
    check("stub: state", d["driver"]["libcuda"]["state"] == "stub", d["driver"]["libcuda"])
    check("stub: error", d["driver"]["libcuda"]["error"] == "CUDA_ERROR_STUB_LIBRARY")
    check("stub: warning", any(w["id"] == "libcuda-stub" for w in d["warnings"]), d["warnings"])
    if not os.path.exists("/proc/driver/nvidia/version"):
        check("stub: never a driver", d["driver"]["state"] != "ok" and not d["driver"]["loaded"], d["driver"]["state"])
    p = run(["--libcuda", STUB])
    check("stub: text", "toolkit stub, not a driver" in p.stdout, p.stdout)

# the real H200 tree with the fake NVML
fake = ["--nvml", FAKE, "--libcuda", FAKE]
d = js(["--root", H200] + fake, {"FAKE_NVML_SCENARIO": "h200"})
check("h200: state", d["driver"]["state"] == "ok", d["driver"].get("state"))
g = d["gpus"][0]
check("h200: gpu", (g["name"], g["compute_capability"], g["sm"], g["architecture"]) ==
      ("NVIDIA H200", "9.0", "sm_90", "Hopper"), g)
check("h200: pci", (g["pci_bus_id"], g["pci_device_id"], g["device_id"]) ==
      ("00000000:00:06.0", "0x233510DE", "0x2335"), g)
check("h200: driver", (d["driver"]["version"], d["driver"]["cuda_version"], d["driver"]["flavor"]) ==
      ("580.159.04", "13.0", "open"), d["driver"])
check("h200: mig", g["mig"] == {"current": "disabled", "pending": "disabled", "instances": []}, g["mig"])
check("h200: visible", d["cuda_visible_devices"]["visible"] == [0], d["cuda_visible_devices"])
check("h200: pci list", [x["bus_id"] for x in d["pci"]] == ["0000:00:06.0"], d["pci"])
p = run(["--root", H200] + fake, {"FAKE_NVML_SCENARIO": "h200"})
check("h200: text", "GPU 0: NVIDIA H200" in p.stdout and "[cuda:0]" in p.stdout, p.stdout)

# no NVML on the same tree: procfs facts, libcuda devices after cuInit
d = js(["--root", H200, "--nvml", "/nonexistent/libnvidia-ml.so.1", "--libcuda", FAKE])
check("no nvml: state", d["driver"]["state"] == "nvml-unavailable", d["driver"].get("state"))
check("no nvml: libcuda init", d["driver"]["libcuda"]["initialized"] is True, d["driver"]["libcuda"])
check("no nvml: cc", d["gpus"][0]["sources"].get("compute_capability") == "libcuda", d["gpus"][0])

# an empty tree: no sysfs or procfs facts, only the fake NVML's (a missing
# --root is an error since issue 7, below)
EMPTY = tempfile.mkdtemp(prefix="gpuenv-cli-hw-empty-")

# MIG and CUDA_VISIBLE_DEVICES
d = js(["--root", EMPTY] + fake,
       {"FAKE_NVML_SCENARIO": "mig", "CUDA_VISIBLE_DEVICES": "MIG-aaaaaaaa-1111-0000-0000-000000000002,1"})
v = d["cuda_visible_devices"]
check("mig: visible", v["set"] and [x["mig"] for x in v["devices"]] ==
      ["MIG-aaaaaaaa-1111-0000-0000-000000000002", None] and v["visible"] == [1], v)
check("mig: instances", len(d["gpus"][0]["mig"]["instances"]) == 3, d["gpus"][0]["mig"])

# an invalid entry ends the list
d = js(["--root", EMPTY] + fake,
       {"FAKE_NVML_SCENARIO": "many", "CUDA_VISIBLE_DEVICES": "0,2,-1,1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
v = d["cuda_visible_devices"]
check("cvd: list", v["visible"] == [0, 2] and v["invalid"] == "-1", v)
check("cvd: warning", any(w["id"] == "cvd-invalid" for w in d["warnings"]), d["warnings"])

# per-device errors are warnings, the other GPUs are still there
d = js(["--root", EMPTY] + fake, {"FAKE_NVML_SCENARIO": "lost"})
check("lost: gpus", len(d["gpus"]) == 3, d["gpus"])
lost = [w for w in d["warnings"] if w["id"] == "nvml-gpu-lost"]
check("lost: warnings", [w["gpu"] for w in lost] == [1, 2] and all(w["hint"] for w in lost), lost)
check("lost: per gpu", len(d["gpus"][1]["warnings"]) == 1, d["gpus"][1])

# NVLink peers
d = js(["--root", EMPTY] + fake, {"FAKE_NVML_SCENARIO": "nvlink"})
links = d["gpus"][0]["nvlink"]
check("nvlink: links", len(links) == 18 and links[0]["peer_gpu"] == 1 and links[0]["peer_type"] == "gpu", links[:2])
check("nvlink: switch", d["gpus"][2]["nvlink"][0]["peer_type"] == "switch", d["gpus"][2]["nvlink"][0])

# a machine with more PCI functions than the old silent 4,096-entry scan cap:
# every entry is looked at, and past GPUENV_HW_MAX_PCI NVIDIA functions a
# warning says the rest are left out (issue 7)
BIG = tempfile.mkdtemp(prefix="gpuenv-cli-hw-pci-")
devs = os.path.join(BIG, "sys", "bus", "pci", "devices")
os.makedirs(devs)
for name, vendor, cls in (("other", "0x8086", "0x060000"), ("nv", "0x10de", "0x068000")):
    d = os.path.join(BIG, "sys", "devices", name)
    os.makedirs(d)
    for k, v in (("vendor", vendor), ("class", cls), ("device", "0x22a3")):
        with open(os.path.join(d, k), "w") as f:
            f.write(v + "\n")
for i in range(20000 + 300):
    dom, rest = 1 + i // 65536, i % 65536
    bus_id = "%04x:%02x:%02x.%x" % (dom, rest // 256, (rest % 256) // 8, rest % 8)
    os.symlink("../../../devices/" + ("nv" if i % 67 == 0 and i // 67 < 300 else "other"),
               os.path.join(devs, bus_id))
nnv = sum(1 for i in range(20300) if i % 67 == 0 and i // 67 < 300)
d = js(["--root", BIG] + fake, {"FAKE_NVML_SCENARIO": "h200"})
check("pci: no scan cap", len(d.get("pci", [])) == 256, f"{len(d.get('pci', []))} of {nnv} NVIDIA functions")
check("pci: cap warned once", [w["id"] for w in d.get("warnings", [])].count("too-many-pci") == 1,
      [w["id"] for w in d.get("warnings", [])])
shutil.rmtree(BIG)

# a Jetson Orin tree (no NVML there)
d = js(["--root", ORIN])
check("orin: state", d["driver"]["state"] == "ok", d["driver"].get("state"))
check("orin: jetson", d["jetson"] == {"model": "NVIDIA Jetson AGX Orin Developer Kit", "soc": "tegra234",
                                      "l4t": "36.4.3", "nvgpu": True}, d["jetson"])
check("orin: gpu", (d["gpus"][0]["name"], d["gpus"][0]["compute_capability"], d["gpus"][0]["integrated"]) ==
      ("Orin", "8.7", True), d["gpus"][0])

# usage
p = run(["--deeep"])
check("usage: suggestion", p.returncode == 2 and "--deep" in p.stderr, p.stderr)
p = run(["extra"])
check("usage: argument", p.returncode == 2, p.stderr)
p = run(["--root"])
check("usage: missing value", p.returncode == 2, p.stderr)
# a missing --root is an error naming it, not the report of an empty machine
p = run(["--root", "/nonexistent-gpuenv-root"] + fake, {"FAKE_NVML_SCENARIO": "h200"})
check("missing root", p.returncode == 1 and "/nonexistent-gpuenv-root" in p.stderr and "no such folder" in p.stderr,
      f"{p.returncode}: {p.stderr}")
os.rmdir(EMPTY)

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
