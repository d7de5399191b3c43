"""tests/fixtures/torch_index.py builds the index the knowledge base
describes: every [[variant]] row of data/kb/torch.toml is a +<tag> torch build
on ROOT/whl/<tag>/ with its torchvision and torchaudio, cpu everywhere, no
+cpu build on a CUDA index, the KB's [[pin]] rows as the builds'
Requires-Dist; and a real client (pip 23.2.1, when present) resolves torch
and torchvision of one build from it."""
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

SRC = os.environ.get("GPUENV_SRC", ".")
sys.path.insert(0, os.path.join(SRC, "tests", "fixtures"))
import torch_index  # noqa: E402

PIP = "/root/.pyenv/versions/3.11.7/bin/python"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def files_of(root, backend, project):
    with open(os.path.join(root, "whl", backend, project, "index.html"), encoding="utf-8") as f:
        return re.findall(r">([^<]+\.whl)<", f.read())


with open(os.path.join(SRC, "data", "kb", "torch.toml"), "rb") as f:
    kb = tomllib.load(f)

with tempfile.TemporaryDirectory() as tmp:
    root = os.path.join(tmp, "idx")
    urls = torch_index.build(root)
    rels = {s: (v, pys) for s, v, pys, *_ in torch_index.releases(torch_index.load_kb(os.path.join(SRC, "data", "kb")))}
    # every KB variant, every Python of its series
    n = 0
    for var in kb["variant"]:
        s, tag = var["torch"], var["tag"]
        if tag not in torch_index.BACKENDS:
            continue
        version, pys = rels[s]
        torch = files_of(root, tag, "torch")
        vision = files_of(root, tag, "torchvision")
        for py in pys:
            c = "cp3" + py.split(".")[1]
            want = "torch-%s+%s-%s-%s-manylinux_2_28_x86_64.whl" % (version, tag, c, c)
            check(want in torch, "%s on whl/%s" % (want, tag))
            tv = "torchvision-0.%d.%s+%s-%s-%s-manylinux_2_28_x86_64.whl" % (
                int(s.split(".")[1]) + 15, version.split(".")[2], tag, c, c)
            check(tv in vision, "%s on whl/%s" % (tv, tag))
            n += 1
    check(n > 100, "variants x Pythons checked: %d" % n)
    for b in torch_index.BACKENDS:
        for name in ("torch", "torchvision", "torchaudio"):
            locals_ = {re.match(r"[^-]+-[^+]+\+([a-z0-9]+)-", f).group(1) for f in files_of(root, b, name)}
            check(locals_ == {b}, "whl/%s/%s holds only +%s builds: %r" % (b, name, b, locals_))
    # the KB's pins are the builds' requirements
    md_path = os.path.join(root, "whl", "cu126", "torch-2.7.1+cu126-cp312-cp312-manylinux_2_28_x86_64.whl.metadata")
    with open(md_path, encoding="utf-8") as f:
        md = f.read()
    pins = [p for p in kb["pin"] if p["torch"] == "2.7.1" and p["tag"] == "cu126"]
    check(len(pins) > 10, "the KB pins 2.7.1+cu126")
    for p in pins:
        check("Requires-Dist: %s%s; %s\n" % (p["package"], p["spec"], p["marker"]) in md,
              "2.7.1+cu126 requires %s%s" % (p["package"], p["spec"]))
    with open(os.path.join(root, "whl", "cu121", "torch-2.4.0+cu121-cp312-cp312-manylinux_2_28_x86_64.whl.metadata"),
              encoding="utf-8") as f:
        check("nvidia" not in f.read(), "a build the KB has no pins for requires no nvidia-* package")
    check(os.path.exists(os.path.join(root, "pypi", "simple", "nvidia-cudnn-cu11", "index.html")), "PyPI side")

    def pip(*args, index):
        rep = os.path.join(tmp, "r.json")
        r = subprocess.run([PIP, "-m", "pip", "install", "--dry-run", "--quiet", "--report", rep,
                            "--ignore-installed", "--only-binary", ":all:", "--target", os.path.join(tmp, "t"),
                            "--python-version", "3.12" if "py310" not in args else "3.10",
                            "--platform", "manylinux_2_28_x86_64",
                            "--index-url", urls["pypi"], "--extra-index-url", index,
                            *[a for a in args if a != "py310"]],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, PIP_CONFIG_FILE=os.devnull))
        if r.returncode:
            return None, r.stderr[-600:]
        with open(rep, encoding="utf-8") as f:
            return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.load(f)["install"]}, ""

    if os.path.exists(PIP):
        got, err = pip("torch==2.10.0+cu128", "torchvision", index=urls["torch-index"] + "/cu128/")
        check(got is not None, "pip on cu128: " + err)
        if got:
            check(got["torchvision"] == "0.25.0+cu128", "torchvision of torch's build: %r" % got.get("torchvision"))
            for p in kb["pin"]:
                if p["torch"] == "2.10.0" and p["tag"] == "cu128":
                    check(p["package"] in got, "pip installs the pinned %s" % p["package"])
        # the satellite example's pytorch source (cu118): torch ^2.1, torchvision ^0.16
        got, err = pip("torch>=2.1.0,<3", "torchvision>=0.16.0,<0.17.0", "py310",
                       index=urls["torch-index"] + "/cu118/")
        check(got is not None and got["torch"] == "2.1.0+cu118" and got["torchvision"] == "0.16.0+cu118",
              "cu118 for the satellite example: %r %s" % (got, err))
    else:
        print("pip 23.2.1 not found at %s: the pip cross-check is left out" % PIP)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("torch_index: ok")
