"""gpuenv kb: torch, driver, gpu, image and sources, in text and JSON; every
answer cites its rows; exit statuses; --kb-dir."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["GPUENV_BIN"]
failures = []


def run(*args, stdin=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, input=stdin, timeout=60)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def js(*args):
    r = run("--json", *args)
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        return r.returncode, {"_raw": r.stdout, "_err": r.stderr}


def sourced(row):
    return isinstance(row, dict) and row.get("source") and row.get("file", "").endswith(".toml") \
        and row.get("line", 0) > 0


# --- torch: the example ----------------------------------------------
rc, d = js("kb", "torch", "--gpu", "RTX 5090", "--driver", "535.104.05")
check(rc == 1, "RTX 5090 + 535: exit 1 (no build runs)")
check(d.get("runs") == [] and len(d.get("builds", [])) >= 30, "no build runs, all listed")
for b in d.get("builds", []):
    check(b["verdict"] == "no", "%s %s: no" % (b["torch"], b["tag"]))
    nos = [x for x in b["reasons"] if x["verdict"] == "no"]
    check(nos and all(sourced(x["source"]) for x in b["reasons"]),
          "%s %s: a sourced reason for the no" % (b["torch"], b["tag"]))
    check(sourced(b["source"]), "%s %s: the build row is cited" % (b["torch"], b["tag"]))
check(d.get("gpu", {}).get("compute_capability") == "12.0" and d["gpu"]["architecture"] == "Blackwell",
      "GPU resolved")
check(d.get("driver", {}).get("max_cuda") == "12.2" and d["driver"]["minor_compat"]["cuda_major"] == 12,
      "driver summary")
b = [x for x in d.get("builds", []) if x["torch"] == "2.5" and x["tag"] == "cu124"]
check(b and any("carries sm_50..sm_90 and no PTX" in x["text"] for x in b[0]["reasons"]), "2.5 cu124 reason")

r = run("kb", "torch", "--gpu", "RTX 5090", "--driver", "535.104.05")
check(r.returncode == 1 and "no torch build in the knowledge base runs there" in r.stdout
      and "predates sm_120" in r.stdout and "\nsources:\n  [1] " in r.stdout, "text answer with sources")

rc, d = js("kb", "torch", "--gpu", "RTX 5090", "--driver", "570.133.07")
check(rc == 0 and "2.10 cu128" in d.get("runs", []) and "2.11 cu130" not in d.get("runs", []),
      "RTX 5090 + 570: cu128 builds run, cu130 does not: %s" % d.get("runs"))
rc, d = js("kb", "torch", "--gpu", "H200", "--driver", "580.159.04", "--version", "2.11")
check(rc == 0 and d.get("runs") == ["2.11 cu130"] or "2.11 cu130" in d.get("runs", []),
      "H200 machine runs 2.11 cu130: %s" % d.get("runs"))
check(all(b["torch"] == "2.11" for b in d.get("builds", [])), "--version filters")
rc, d = js("kb", "torch", "--version", "2.5.1+cu124")
check(rc == 0 and [(b["torch"], b["tag"]) for b in d.get("builds", [])] == [("2.5", "cu124")]
      and d["builds"][0]["arch_list"]["sm"][0] == "sm_50", "--version with a local tag")
r = run("kb", "torch")
check(r.returncode == 0 and "torch 2.11" in r.stdout and "code: sm_75..sm_120" in r.stdout, "plain list")
r = run("kb", "torch", "--version", "1.13")
check(r.returncode == 1, "unknown torch version -> 1")
r = run("kb", "torch", "--gpu", "Voodoo 5")
check(r.returncode == 1 and "Voodoo 5" in r.stderr, "unknown GPU -> 1 with the name")
r = run("kb", "torch", "--driver", "new")
check(r.returncode == 2, "bad driver -> 2")
r = run("kb", "torch", "--gpu", "RTX PRO 6000")
check(r.returncode == 1 and "be more specific" in r.stderr, "ambiguous GPU")
# the build gpuenv would install: the one pick doctor and diagnose make
rc, d = js("kb", "torch", "--gpu", "RTX 5090", "--driver", "570.133.07")
check(rc == 0 and (d.get("pick") or {}).get("tag") == "cu128", "pick for RTX 5090 + 570: %s" % d.get("pick"))
rc, d = js("kb", "torch", "--gpu", "RTX 5090", "--driver", "535.104.05")
check(rc == 1 and (d.get("pick") or {}).get("tag") == "cu128" and d["pick"]["driver_upgrade"] == "570.26",
      "nothing runs on 535: the pick after a driver upgrade: %s" % d.get("pick"))

# --- driver -------------------------------------------------------------------------
rc, d = js("kb", "driver", "--cuda", "12.8")
check(rc == 0 and d.get("min_driver") == "570.26" and sourced(d.get("source")), "12.8 -> 570.26: %s" % d)
check([x["driver_linux"] for x in d.get("releases", [])] == ["570.26", "570.124.06"], "12.8 releases")
check(d.get("minor_compat", {}).get("driver_min") == "525", "12.x minor compat from 525")
r = run("kb", "driver", "--cuda", "12.8")
check("CUDA 12.8 needs driver >= 570.26 on Linux" in r.stdout and "[1] cuda.toml:" in r.stdout, "text")
rc, d = js("kb", "driver", "535.104.05")
check(rc == 0 and d.get("max_cuda") == "12.2" and d["minor_compat"]["cuda_major"] == 12
      and d["branch"]["branch"] == "R535", "535.104.05: %s" % d)
r = run("kb", "driver", "535.104.05")
check("runs CUDA <= 12.2" in r.stdout and "every CUDA 12.x through minor-version compatibility" in r.stdout,
      "535 text: %r" % r.stdout)
r = run("kb", "driver", "--cuda", "12.7")
check(r.returncode == 1 and "12.7" in r.stderr and "hint:" in r.stderr, "unknown CUDA -> 1 with hint")
r = run("kb", "driver")
check(r.returncode == 2, "driver without a question -> 2")
# usage errors are 2 everywhere: --cuda abc as DRIVER abc (was 1)
r = run("kb", "driver", "--cuda", "abc")
check(r.returncode == 2 and "not a CUDA version" in r.stderr and "usage:" in r.stderr,
      "--cuda abc -> 2: %r" % r.stderr)
r = run("kb", "driver", "--cuda", "12")
check(r.returncode == 2 and "12.0" in r.stderr, "--cuda 12 -> 2, with a hint: %r" % r.stderr)
r = run("kb", "driver", "--cuda", "12.4.1")
check(r.returncode == 0 and "CUDA 12.4 needs driver" in r.stdout, "--cuda 12.4.1 is 12.4")
r = run("kb", "driver", "--cuda", "12.8", "535")
check(r.returncode == 2, "two questions -> 2")
r = run("kb", "driver", "300.1")
check(r.returncode == 1, "a driver older than every toolkit -> 1")

# --- gpu -----------------------------------------------------------------------------
for q, name, cc in [("RTX 5090", "GeForce RTX 5090", "12.0"), ("H100", "NVIDIA H100", "9.0"),
                    ("a100", "NVIDIA A100", "8.0"), ("NVIDIA H200", "NVIDIA H200", "9.0"),
                    ("0x2335", "NVIDIA H200", "9.0"), ("Tesla T4", "NVIDIA T4", "7.5")]:
    rc, d = js("kb", "gpu", q)
    g = d.get("gpus", [{}])[0]
    check(rc == 0 and g.get("name") == name and g.get("compute_capability") == cc and sourced(g.get("source")),
          "kb gpu %s -> %s %s: %s" % (q, name, cc, d))
rc, d = js("kb", "gpu", "RTX 5090")
g = d.get("gpus", [{}])[0]
check(g.get("first_cuda") == "12.8" and g.get("first_cuda_driver") == "570.26", "first CUDA for sm_120")
check(any(b["torch"] == "2.7" and b["tag"] == "cu128" for b in g.get("torch_builds", [])), "2.7 cu128 listed")
check(any(p["device_id"] == "0x2b85" for p in g.get("pci", [])), "PCI id listed")
rc, d = js("kb", "gpu", "0x2335")
check(d["gpus"][0]["matched_pci"]["device_id"] == "0x2335", "matched PCI row reported")
# an ambiguous name: the candidates are listed, and the answer is the one
# `kb torch --gpu` gives (issue 7: kb gpu answered with one GPU where kb
# torch reported the ambiguity)
rc, d = js("kb", "gpu", "RTX PRO 6000")
check(rc == 1 and d.get("ambiguous") is True and len(d.get("gpus", [])) == 3
      and d["gpus"][0]["match"] == "partial", "partial: all listed, ambiguous, exit 1: %s" % rc)
for q in ["A", "RTX PRO 6000", "0x25b6"]:
    g, t = run("kb", "gpu", q), run("kb", "torch", "--gpu", q)
    err = [l for l in g.stderr.splitlines() if l.startswith(("gpuenv:", "hint:"))]
    check(g.returncode == 1 and t.returncode == 1 and "matches" in g.stderr and err
          and err == [l for l in t.stderr.splitlines() if l.startswith(("gpuenv:", "hint:"))],
          "kb gpu %r and kb torch --gpu %r report the same ambiguity: %r / %r" % (q, q, g.stderr, t.stderr))
rc, d = js("kb", "gpu", "H100")
check(rc == 0 and d.get("ambiguous") is False, "one GPU: not ambiguous")
r = run("kb", "gpu", "H1000")
check(r.returncode == 1 and "did you mean 'NVIDIA H100'" in r.stderr, "suggestion: %r" % r.stderr)
r = run("kb", "gpu")
check(r.returncode == 2, "gpu without a name -> 2")

# --- image ---------------------------------------------------------------------------------
rc, d = js("kb", "image", "nvcr.io/nvidia/pytorch:24.05-py3")
im = d.get("images", [{}])[0]
check(rc == 0 and im.get("cuda") == "12.4" and im.get("cudnn") == "9.1.0.70" and im.get("min_driver") == "550.54.14"
      and sourced(im.get("source")), "pytorch:24.05-py3: %s" % d)
rc, d = js("kb", "image", "pytorch:25.01-py3", "--driver", "535.104.05")
check(rc == 0 and d["images"][0]["runs"] == "minor-version-compat", "25.01 on 535: minor compat")
rc, d = js("kb", "image", "nvcr.io/nvidia/pytorch:25.12-py3", "--driver", "535.104.05")
check(rc == 1 and d["images"][0]["runs"] == "no", "25.12 (CUDA 13.1) on 535: no")
r = run("kb", "image", "nvcr.io/nvidia/pytorch:24.05-py3")
# torch is the container's full build string: NVIDIA's tables give 2.4.0a0+07cecf4168
# for 24.05 (data/kb/ngc.toml; the row had the truncated 2.4.0a0)
check("CUDA 12.4.1, torch 2.4.0a0+07cecf4168, cuDNN 9.1.0.70" in r.stdout and "sources:" in r.stdout, "image text")
rc, d = js("kb", "image", "nvcr.io/nvidia/tritonserver")
check(rc == 0 and len(d.get("images", [])) >= 10, "all tags of an image")
r = run("kb", "image", "docker.io/library/ubuntu:24.04")
check(r.returncode == 1, "unknown image -> 1")
# tritonserver 24.10: its release notes (data/kb/ngc.toml) require R560, or
# R470/R525/R535/R545 on data-center GPUs; R550 is not among them, so
# minor-version compatibility does not make driver 550.54.15 run it (was
# "minor-version-compat", while preflight said no-go)
T = "nvcr.io/nvidia/tritonserver:24.10-py3"
rc, d = js("kb", "image", T, "--driver", "550.54.15")
im = d.get("images", [{}])[0]
check(rc == 1 and im.get("runs") == "no" and im.get("decided_by") == "release-notes",
      "24.10 on 550.54.15: no, by the release notes: %s" % im)
r = run("kb", "image", T, "--driver", "550.54.15")
check(r.returncode == 1 and "require R560 or later" in r.stdout, "24.10 on 550 text: %r" % r.stdout)
rc, d = js("kb", "image", T, "--driver", "535.104.05")
im = d.get("images", [{}])[0]
check(rc == 0 and im.get("runs") == "forward-compat" and im.get("forward_compat_driver") == "535.86"
      and im.get("datacenter_only") is True, "24.10 on 535: forward compat, data-center only: %s" % im)
rc, d = js("kb", "image", T, "--driver", "535.104.05", "--gpu", "H100")
check(rc == 0 and d["images"][0]["runs"] == "forward-compat" and d["images"][0]["datacenter_only"] is False,
      "24.10 on 535 + H100: forward compat")
rc, d = js("kb", "image", T, "--driver", "535.104.05", "--gpu", "RTX 4090")
check(rc == 1 and d["images"][0]["runs"] == "no", "24.10 on 535 + RTX 4090: no (forward compat is data-center only)")
rc, d = js("kb", "image", T, "--driver", "560.35.03")
check(rc == 0 and d["images"][0]["runs"] == "yes", "24.10 on 560: yes")
rc, d = js("kb", "image", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "--driver", "550.54.15")
check(rc == 0 and d["images"][0]["runs"] == "yes" and d["images"][0]["cuda"] == "12.4",
      "nvidia/cuda tags as preflight reads them: %s" % d)

# --- image rows carry the notes' forward-compatibility drivers and GPU floor -------------------
# tritonserver 24.10 release notes, "Driver Requirements" (docs/kb.md quotes them)
rc, d = js("kb", "image", "nvcr.io/nvidia/tritonserver:24.10-py3")
img = (d.get("images") or [{}])[0]
check(rc == 0 and img.get("datacenter_drivers") == ["470.57", "525.85", "535.86", "545.23"]
      and img.get("driver_min_branch") == "R560" and img.get("cc_min"), "24.10 driver rule in JSON: %s" % img)

r = run("kb", "image", "nvcr.io/nvidia/tritonserver:24.10-trtllm-python-py3")
check(r.returncode == 0 and "Triton 2.51.0" in r.stdout and "TensorRT-LLM 0.14.0" in r.stdout,
      "kb image text names the server and TensorRT-LLM: %s" % r.stdout[:300])

# a CUDA the KB knows only as a release ([[toolkit_known]], 13.4): the minor-version rule decides
for drv, want in (("580.65.06", "minor-version-compat"), ("575.57.08", "no")):
    rc, d = js("kb", "image", "nvcr.io/nvidia/tritonserver:26.08-py3", "--driver", drv)
    img = (d.get("images") or [{}])[0]
    check(img.get("cuda") == "13.4" and img.get("runs") == want, "26.08 (CUDA 13.4) on %s: %s" % (drv, img.get("runs")))

# --- sources ---------------------------------------------------------------------------------
rc, d = js("kb", "sources")
names = [f["name"] for f in d.get("files", [])]
check(rc == 0 and names == ["cuda.toml", "gpus.toml", "torch.toml", "libraries.toml", "wheels.toml",
                            "ngc.toml", "diagnose.toml", "images.toml", "about.toml", "tensorrt.toml"],
      "sources files: %s" % names)
check(all(f["origin"] == "embedded" and f["rows"] > 0 for f in d.get("files", [])), "embedded, rows > 0")
check(d.get("rows") == sum(f["rows"] for f in d.get("files", [])), "total rows")
check(d["files"][0]["tables"]["toolkit"]["rows"] >= 50, "table counts")
r = run("kb", "sources")
check(r.returncode == 0 and "every one with a source" in r.stdout, "sources text")

# --- --kb-dir -----------------------------------------------------------------------------------
with tempfile.TemporaryDirectory() as dirname:
    with open(os.path.join(dirname, "cuda.toml"), "w") as f:
        f.write('[[toolkit]]\ncuda = "12.8"\nupdate = 0\nlabel = "CUDA 12.8 GA"\n'
                'driver_linux = "999.1"\nsource = "a test"\n')
    rc, d = js("kb", "driver", "--cuda", "12.8", "--kb-dir", dirname)
    check(rc == 0 and d.get("min_driver") == "999.1", "--kb-dir replaces cuda.toml: %s" % d)
    rc, d = js("kb", "sources", "--kb-dir", dirname)
    check(d["files"][0]["origin"].endswith("cuda.toml") and d["files"][1]["origin"] == "embedded",
          "origins: %s" % [f["origin"] for f in d.get("files", [])])
    with open(os.path.join(dirname, "gpus.toml"), "w") as f:
        f.write('[[gpu]]\nname = "X"\ncc = "9.0"\nsegment = "datacenter"\n')
    r = run("kb", "sources", "--kb-dir", dirname)
    # a knowledge base that cannot be read: 4 (docs/exit-codes.md; was 1)
    check(r.returncode == 4 and "gpus.toml:1:" in r.stderr and "[[gpu]] row without a source" in r.stderr,
          "row without a source is an error with its place: %r" % r.stderr)
r = run("kb", "sources", "--kb-dir", "/nonexistent")
check(r.returncode == 4 and "/nonexistent" in r.stderr, "missing --kb-dir -> 4")

# --- usage ----------------------------------------------------------------------------------------
r = run("kb")
check(r.returncode == 2, "kb alone -> 2")
r = run("kb", "torhc")
check(r.returncode == 2 and "did you mean 'torch'" in r.stderr, "subcommand suggestion")
r = run("kb", "--help")
check(r.returncode == 0 and "sources" in r.stdout, "kb --help")
for s in ["torch", "driver", "gpu", "image", "sources"]:
    r = run("kb", s, "--help")
    check(r.returncode == 0 and r.stdout.startswith("usage: gpuenv kb " + s) and "--kb-dir" in r.stdout,
          "kb %s --help" % s)
r = run("kb", "torch", "--gpuu", "x")
check(r.returncode == 2 and "did you mean '--gpu'" in r.stderr, "option suggestion")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
