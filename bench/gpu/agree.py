"""Agreement check on a GPU machine: every field nvidia-smi -q -x and torch
report must equal what `gpuenv probe --json` reports.

    python3 bench/gpu/agree.py GPUENV_BINARY [--facts FILE] [--out FILE.md]

Prints a Markdown table (field, nvidia-smi/torch, gpuenv, verdict) and exits 1
on any disagreement.  Run where torch is importable (the GPU machine's python3).
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def main():
    gpuenv = sys.argv[1]
    out_md = None
    if "--out" in sys.argv:
        out_md = sys.argv[sys.argv.index("--out") + 1]
    r = sh(gpuenv, "probe", "--json", "--python", sys.executable)
    if r.returncode not in (0,):
        print("gpuenv probe failed:", r.returncode, r.stderr[-2000:])
    facts = json.loads(r.stdout)
    rows = []

    def cmp(field, theirs, ours, how="equal"):
        ok = theirs == ours if how == "equal" else how(theirs, ours)
        rows.append((field, theirs, ours, "ok" if ok else "DIFFERS"))

    # --- nvidia-smi ---
    x = ET.fromstring(sh("nvidia-smi", "-q", "-x").stdout)
    drv = facts.get("driver", {})
    cmp("driver version", x.findtext("driver_version"), drv.get("version"))
    cmp("CUDA version (driver)", x.findtext("cuda_version"), drv.get("cuda_version"))
    smi_gpus = x.findall("gpu")
    gpus = facts.get("gpus", [])
    cmp("GPU count", len(smi_gpus), len(gpus))
    for i, g in enumerate(smi_gpus):
        ours = gpus[i] if i < len(gpus) else {}
        p = "gpu%d " % i
        cmp(p + "name", g.findtext("product_name"), ours.get("name"))
        cmp(p + "UUID", g.findtext("uuid"), ours.get("uuid"))
        cmp(p + "PCI bus id", g.findtext("pci/pci_bus_id"), ours.get("pci_bus_id"))
        cmp(p + "PCI device id", "0x" + g.findtext("pci/pci_device_id"),
            (ours.get("pci_device_id") or "").upper().replace("0X", "0x"))
        tot = g.findtext("fb_memory_usage/total")  # "143771 MiB"
        mib = int(tot.split()[0])
        cmp(p + "memory total (MiB)", mib, (ours.get("memory_total") or 0) // (1 << 20))
        mig = (g.findtext("mig_mode/current_mig") or "N/A").lower()
        cmp(p + "MIG mode", mig, (ours.get("mig") or {}).get("current"),
            lambda a, b: (a in ("disabled", "n/a") and b in ("disabled", "unsupported", None)) or a == b)

    # --- torch ---
    code = r"""
import json, torch
d = {"version": torch.__version__, "cuda": torch.version.cuda,
     "cudnn": torch.backends.cudnn.version(), "nccl": ".".join(map(str, torch.cuda.nccl.version())),
     "arch_list": torch.cuda.get_arch_list(), "devices": []}
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    d["devices"].append({"name": p.name, "cc": "%d.%d" % (p.major, p.minor),
                         "total_memory": p.total_memory, "uuid": str(p.uuid)})
maps = open("/proc/self/maps").read()
d["maps"] = sorted({l.split()[-1] for l in maps.splitlines() if l.split()[-1].startswith("/")
                    and ("cudnn" in l or "nccl" in l)})
print(json.dumps(d))
"""
    t = json.loads(sh(sys.executable, "-c", code).stdout)
    for i, dev in enumerate(t["devices"]):
        ours = gpus[i] if i < len(gpus) else {}
        cmp("gpu%d compute capability (torch)" % i, dev["cc"], ours.get("compute_capability"))
        cmp("gpu%d UUID (torch)" % i, "GPU-" + dev["uuid"], ours.get("uuid"))
    torch_fw = None
    for env in facts.get("environments", []):
        for fw in env.get("frameworks", []):
            if fw.get("dist") == "torch":
                torch_fw = fw
    cmp("torch version", t["version"], (torch_fw or {}).get("version"))
    cmp("torch CUDA", t["cuda"], (torch_fw or {}).get("cuda"))
    # which cuDNN / NCCL the process really maps vs the loader emulation
    loads = {}
    for b in (torch_fw or {}).get("binaries", []):
        for obj in ((b.get("loads") or {}).get("objects") or []):
            for need in obj.get("needs", []):
                loads.setdefault(need.get("name"), need.get("path"))
    mapped_cudnn = [m for m in t["maps"] if re.search(r"/libcudnn\.so", m)]
    mapped_nccl = [m for m in t["maps"] if re.search(r"/libnccl\.so", m)]
    ours_cudnn = [v for k, v in loads.items() if k and k.startswith("libcudnn.so")]
    ours_nccl = [v for k, v in loads.items() if k and k.startswith("libnccl.so")]
    cmp("cuDNN file torch loads", [os.path.realpath(m) for m in mapped_cudnn],
        [os.path.realpath(v) for v in ours_cudnn if v])
    cmp("NCCL file torch loads", [os.path.realpath(m) for m in mapped_nccl],
        [os.path.realpath(v) for v in ours_nccl if v])
    libs = facts.get("libraries", [])

    def version_of(path):
        rp = os.path.realpath(path) if path else None
        for lib in libs:
            paths = [lib.get("path")] + (lib.get("aliases") or [])
            if any(p and os.path.realpath(p) == rp for p in paths):
                return (lib.get("version") or {}).get("version")
        return None
    cv = t["cudnn"]
    torch_cudnn = "%d.%d.%d" % (cv // 10000, cv // 100 % 100, cv % 100) if cv >= 90000 else str(cv)
    cmp("cuDNN version torch uses", torch_cudnn,
        version_of(ours_cudnn[0]) if ours_cudnn else None,
        lambda a, b: b is not None and (b == a or b.startswith(a + ".")))
    cmp("NCCL version torch uses", t["nccl"], version_of(ours_nccl[0]) if ours_nccl else None,
        lambda a, b: b is not None and (b == a or b.startswith(a + ".")))
    cubins = set()
    for b in (torch_fw or {}).get("binaries", []):
        if b.get("path", "").endswith("libtorch_cuda.so"):
            cubins = set((b.get("cuda_code") or {}).get("cubins", []))
    cmp("torch arch list within libtorch_cuda.so cubins", sorted(t["arch_list"]), sorted(cubins),
        lambda a, b: set(a) <= set(b))
    # the same binary's cubin archs, exactly as cuobjdump lists them
    lt = [b.get("path") for b in (torch_fw or {}).get("binaries", []) if b.get("path", "").endswith("libtorch_cuda.so")]
    if lt:
        out = sh("cuobjdump", "--list-elf", lt[0]).stdout
        cuob = sorted({l.rsplit(".", 2)[-2] for l in out.splitlines() if l.endswith(".cubin")})
        # cuobjdump names sm_100f as sm_100: compare with the family suffix dropped
        ours = sorted({c[:-1] if c.endswith("f") else c for c in cubins})
        cmp("libtorch_cuda.so cubin archs vs cuobjdump --list-elf", cuob, ours)

    lines = ["| field | nvidia-smi / torch | gpuenv probe | verdict |", "|---|---|---|---|"]
    for f, a, b, v in rows:
        lines.append("| %s | %s | %s | %s |" % (f, a, b, v))
    text = "\n".join(lines)
    print(text)
    if out_md:
        with open(out_md, "w") as fh:
            fh.write(text + "\n")
    sys.exit(0 if all(v == "ok" for *_, v in rows) else 1)


if __name__ == "__main__":
    main()
